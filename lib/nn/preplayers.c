/*
 * preplayers.c - Keras' categorical preprocessing layers inside a model
 * (StringLookup, IntegerLookup, Hashing, Discretization,
 * CategoryEncoding), so a trained model takes raw strings and ids and
 * its SavedModel accepts them as they come.
 *
 * The layers are tfk-map's (nn/preprocess.c parses and checks the
 * config and adds the op: a lookup carries its vocabulary as a tensor
 * attr); this file adapts them to batched model tensors. Those ops work
 * on one record's values (a scalar or a vector); in a model the batch
 * is one more dimension, so an element-wise layer (lookups and Hashing
 * in output_mode int, Discretization int) flattens its input to [-1],
 * runs the op and reshapes back to Shape(input): Keras' layers are
 * element-wise in int mode too. The dense modes (one_hot, multi_hot,
 * count) and CategoryEncoding are that int output encoded per row by
 * DenseBincount (kernels/cpu/bincount.c), as Keras'
 * encode_categorical_inputs traces them (so the export is TF's op as
 * it is); tf_idf, and a lookup's mask token in a dense mode (Keras
 * drops the mask slot there), are refused by name.
 *
 * "vocabulary" may be a file path, as Keras allows (one token per line,
 * IntegerLookup: decimal integers): it is read at build time into the
 * list the lookup op holds, so the model does not depend on the file
 * afterwards (the SavedModel writer puts the vocabulary in assets/).
 *
 * TextVectorization stays refused inside a model: its string ops
 * (StringLower, StaticRegexReplace, StringSplitV2, ragged padding) have
 * no export yet; tfk-map applies it before training.
 *
 * Rejected: own copies of the lookup ops for models (two definitions
 * of Keras' index layout to keep equal) and a [batch]-aware rewrite of
 * the tfk-map kernels (shared with tfk-map; the reshape pair costs two
 * views).
 */
#include "nn/keras-impl.h"
#include "nn/preprocess.h"
#include "graph/graph.h"
#include "util/alloc.h"
#include "util/buf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The vocabulary file at path as a JSON list (strings, or integers when
 * ints), one entry per line; a '\r' before '\n' and trailing empty
 * lines are dropped, as tfk_lookup_parse_vocab and Keras read them. */
static int vocab_file(struct kctx *c, struct klayer *l, const char *path,
		      int ints, json_t **out)
{
	FILE *f = fopen(path, "rb");
	struct tfk_buf b;
	char tmp[65536], what[400];
	size_t n, s, e, line = 0;
	json_t *a;
	int rc = 0;

	*out = NULL;
	if (!f) {
		snprintf(what, sizeof(what), "cannot read vocabulary file "
			 "%.300s: %s", path, strerror(errno));
		return kcfg_bad(c, l, "vocabulary", what);
	}
	tfk_buf_init(&b);
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		tfk_buf_add(&b, tmp, n);
	fclose(f);
	a = json_array();
	if (!tfk_buf_ok(&b) || !a) {
		tfk_buf_release(&b);
		json_decref(a);
		return tfk_errf(c->err, TFK_ENOMEM, "out of memory");
	}
	n = b.len;
	while (n > 0 && (b.data[n - 1] == '\n' || b.data[n - 1] == '\r'))
		n--;
	for (s = 0; s < n && !rc; s = e + 1) {
		const char *p = (const char *)b.data + s;
		size_t len;

		for (e = s; e < n && b.data[e] != '\n'; e++)
			;
		len = e - s;
		if (len && p[len - 1] == '\r')
			len--;
		line++;
		if (ints) {
			char num[32], *end;
			long long v;

			errno = 0;
			snprintf(num, sizeof(num), "%.*s", (int)(len < 31 ?
				 len : 31), p);
			v = strtoll(num, &end, 10);
			if (!len || len > 30 || *end || errno) {
				snprintf(what, sizeof(what), "%.300s:%zu: "
					 "expected an integer", path, line);
				rc = kcfg_bad(c, l, "vocabulary", what);
				break;
			}
			rc = json_array_append_new(a, json_integer(v));
		} else {
			rc = json_array_append_new(a, json_stringn(p, len));
		}
		if (rc)
			rc = tfk_errf(c->err, TFK_ENOMEM, "out of memory (or "
				      "%s:%zu is not UTF-8)", path, line);
	}
	tfk_buf_release(&b);
	if (rc) {
		json_decref(a);
		return rc;
	}
	*out = a;
	return 0;
}

/* A scalar or [0] constant of dtype for DenseBincount's size/weights. */
static int kconst_t(struct kctx *c, enum tfk_dtype dt, int rank, int64_t v,
		    struct tfk_port *out)
{
	struct tfk_tensor t;
	int64_t zero = 0;
	int rc = tfk_tensor_init(&t, dt, rank, &zero, c->err);

	if (rc)
		return rc;
	if (rank == 0 && dt == TFK_DT_INT32)
		*(int32_t *)t.data = (int32_t)v;
	else if (rank == 0)
		*(int64_t *)t.data = v;
	rc = tfk_graph_const(c->g, c->scope, &t, out, c->err);
	tfk_tensor_release(&t);
	return rc;
}

/* one_hot / multi_hot / count of integer ids x as Keras'
 * encode_categorical_inputs: one_hot adds a last dimension unless it is
 * 1 already; then DenseBincount over the last axis of [batch, n]. */
static int encode(struct kctx *c, struct klayer *l, const char *mode,
		  int64_t depth, struct tfk_port *x)
{
	const struct tfk_tdesc *d = kdesc(c, *x);
	struct tfk_port in[3];
	struct tfk_attr a[2] = { TFK_A_TYPE("T", TFK_DT_FLOAT),
				 TFK_A_BOOL("binary_output",
					    strcmp(mode, "count") != 0) };
	int32_t minus1 = -1;
	int rc;

	if (d->dtype != TFK_DT_INT64 && d->dtype != TFK_DT_INT32)
		return kcfg_bad(c, l, NULL, "expected integer ids to encode");
	if (!strcmp(mode, "one_hot") && (d->rank < 1 ||
					 d->shape[d->rank - 1] != 1)) {
		struct tfk_port ax;

		if ((rc = kconst_iv(c, &minus1, 1, &ax)) ||
		    (rc = kop2(c, "ExpandDims", *x, ax, x)))
			return rc;
		d = kdesc(c, *x);
	}
	if (d->rank != 2) {
		char what[160];

		snprintf(what, sizeof(what), "output_mode %s inside a model "
			 "takes [batch, n] ids (Keras encodes a rank-1 input "
			 "as one sample), got rank %d", mode, d->rank);
		return kcfg_bad(c, l, "output_mode", what);
	}
	in[0] = *x;
	if ((rc = kconst_t(c, d->dtype, 0, depth, &in[1])) ||
	    (rc = kconst_t(c, TFK_DT_FLOAT, 1, 0, &in[2])))
		return rc;
	return kop(c, "DenseBincount", in, 3, a, 2, x);
}

int tfk_keras_prep_apply(struct kctx *c, struct klayer *l,
			 const struct tfk_port *in, int n_in,
			 struct kout *out)
{
	const char *cls = l->k->cls, *mode = NULL;
	const json_t *voc = json_object_get(l->cfg, "vocabulary");
	const json_t *jm = json_object_get(l->cfg, "output_mode");
	const struct tfk_tdesc *d = kdesc(c, in[0]);
	json_t *obj = (json_t *)l->obj, *copy = NULL, *list = NULL;
	struct tfk_port x = in[0], shape;
	int32_t minus1 = -1;
	int rc, flat = d->rank != 1, dense, catenc;
	int lookup = !strcmp(cls, "StringLookup") ||
		     !strcmp(cls, "IntegerLookup");
	int64_t depth = 0;

	(void)n_in;
	out->act = NULL;
	out->logits.node = -1;
	out->logits.index = 0;
	if (!strcmp(cls, "TextVectorization"))
		return kcfg_bad(c, l, NULL, "TextVectorization inside a model "
				"cannot be exported yet; apply it with tfk-map "
				"before training");
	catenc = !strcmp(cls, "CategoryEncoding");
	if (jm && !json_is_null(jm)) {
		if (!json_is_string(jm))
			return kcfg_bad(c, l, "output_mode", "expected a "
					"string");
		mode = json_string_value(jm);
	}
	if (!mode)
		mode = catenc ? "multi_hot" : "int";
	if (!strcmp(mode, "binary"))
		mode = "multi_hot";
	dense = strcmp(mode, "int") != 0;
	if (dense && strcmp(mode, "one_hot") && strcmp(mode, "multi_hot") &&
	    strcmp(mode, "count")) {
		char what[200];

		snprintf(what, sizeof(what), "output_mode %s of %s inside a "
			 "model is not supported yet (int, one_hot, "
			 "multi_hot, count); encode with tfk-map before "
			 "training", mode, cls);
		return kcfg_bad(c, l, "output_mode", what);
	}
	if (dense && lookup) {
		const json_t *mt = json_object_get(l->cfg, "mask_token");

		if (mt && !json_is_null(mt))
			return kcfg_bad(c, l, "mask_token", "a mask token with "
					"a dense output_mode inside a model is "
					"not supported yet");
	}
	if (catenc) {
		const json_t *nt = json_object_get(l->cfg, "num_tokens"), *v;
		const char *key;

		json_object_foreach((json_t *)l->cfg, key, v) {
			if (!strcmp(key, "sparse") && json_is_true(v))
				return kcfg_bad(c, l, key, "only false is "
						"supported");
			if (strcmp(key, "name") && strcmp(key, "trainable") &&
			    strcmp(key, "dtype") && strcmp(key, "num_tokens") &&
			    strcmp(key, "output_mode") && strcmp(key, "sparse"))
				return kcfg_bad(c, l, key, "unknown config "
						"key");
		}

		if (!json_is_integer(nt) || json_integer_value(nt) < 1 ||
		    json_integer_value(nt) > (1 << 24))
			return kcfg_bad(c, l, "num_tokens", "expected an "
					"integer in 1..16777216");
		rc = encode(c, l, mode, json_integer_value(nt), &x);
		out->p = x;
		return rc;
	}
	if (json_is_string(voc) && (rc = vocab_file(c, l,
			json_string_value(voc), !strcmp(cls, "IntegerLookup"),
			&list)))
		return rc;
	if (list || dense) {
		json_t *cc;

		copy = json_deep_copy(obj);
		cc = json_object_get(copy, "config");
		if (!copy || (list && json_object_set_new(cc, "vocabulary",
							  list)) ||
		    (dense && json_object_set_new(cc, "output_mode",
						  json_string("int")))) {
			if (!copy)
				json_decref(list);
			json_decref(copy);
			return tfk_errf(c->err, TFK_ENOMEM, "out of memory");
		}
		obj = copy;
	}
	if (flat) {
		struct tfk_port sh;
		int32_t dims[TFK_MAX_RANK];
		int k, unknown = 0;

		/* back to a static shape when only the batch is unknown
		 * (layers after it need known dims), else Shape(x) */
		for (k = 0; k < d->rank; k++) {
			dims[k] = (int32_t)d->shape[k];
			unknown += d->shape[k] < 0;
			if (d->shape[k] < 0)
				dims[k] = -1;
		}
		rc = kconst_iv(c, &minus1, 1, &sh);
		if (!rc)
			rc = d->rank >= 0 && unknown <= 1 ?
			     kconst_iv(c, dims, d->rank, &shape) :
			     kop1(c, "Shape", x, &shape);
		if (!rc)
			rc = kop2(c, "Reshape", x, sh, &x);
		if (rc)
			goto out;
	}
	rc = tfk_prep_layer_add(c->g, obj, l->path, &x, c->err);
	if (!rc && dense) {
		/* the depth Keras encodes into */
		const json_t *cfg = json_object_get(obj, "config");

		if (lookup)
			depth = tfk_node_attr_i(tfk_graph_node(c->g, x.node),
						"depth", 0);
		else if (!strcmp(cls, "Hashing"))
			depth = json_integer_value(json_object_get(cfg,
							"num_bins"));
		else
			depth = (int64_t)json_array_size(json_object_get(cfg,
						"bin_boundaries")) + 1;
	}
	if (!rc && flat)
		rc = kop2(c, "Reshape", x, shape, &x);
	if (!rc && dense)
		rc = encode(c, l, mode, depth, &x);
	out->p = x;
out:
	json_decref(copy);
	return rc;
}
