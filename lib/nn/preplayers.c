/*
 * preplayers.c - Keras' categorical preprocessing layers inside a model
 * (StringLookup, IntegerLookup, Hashing, Discretization,
 * CategoryEncoding, TextVectorization), so a trained model takes raw
 * strings and ids and its SavedModel accepts them as they come.
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
 * TextVectorization (whitespace split, int mode, output_sequence_length,
 * no ngrams) is StringLower / StaticRegexReplace and _SplitLookupPad
 * (see textvec() below); its other configurations are refused by key,
 * and tfk-map applies them before training.
 *
 * Rejected: own copies of the lookup ops for models (two definitions
 * of Keras' index layout to keep equal) and a [batch]-aware rewrite of
 * the tfk-map kernels (shared with tfk-map; the reshape pair costs two
 * views).
 */
#include "nn/keras-impl.h"
#include "nn/preprocess.h"
#include "prep/lookup.h"
#include "prep/textvec.h"
#include "graph/graph.h"
#include "util/alloc.h"
#include "util/buf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The vocabulary file at path as a JSON list (strings, or integers when
 * ints), one entry per line; a '\r' before '\n' and trailing empty
 * lines are dropped, as tfk_lookup_parse_vocab and Keras read them. */
static int vocab_file(struct kctx *c, struct klayer *l, const char *path,
		      int ints, json_t **out)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
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
	/* a regular file of at most 1 GiB: never a device read forever */
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) ||
	    st.st_size > ((off_t)1 << 30)) {
		fclose(f);
		snprintf(what, sizeof(what), "vocabulary file %.300s: not a "
			 "regular file of at most 1 GiB", path);
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

/*
 * TextVectorization (standardize any, split "whitespace", no ngrams,
 * output_mode int with output_sequence_length L) as TF ops a SavedModel
 * can hold: [batch, 1] -> [batch], StringLower, StaticRegexReplace
 * (Keras' punctuation class), then _SplitLookupPad (split, look up, pad
 * to L: kernels/cpu/tflookup.c), which the writer expands into
 * StringSplitV2 ... RaggedTensorToTensor. The config is checked (and
 * the vocabulary taken) by building tfk-map's TextVectorization op in a
 * scratch graph.
 */
static int textvec(struct kctx *c, struct klayer *l, json_t *obj,
		   struct tfk_port x, struct tfk_port *out)
{
	const json_t *cfg = json_object_get(obj, "config");
	const json_t *sp = json_object_get(cfg, "split");
	const json_t *ng = json_object_get(cfg, "ngrams");
	const json_t *om = json_object_get(cfg, "output_mode");
	const json_t *ol = json_object_get(cfg, "output_sequence_length");
	const struct tfk_tdesc *d = kdesc(c, x);
	const struct tfk_node *nd;
	const struct tfk_tensor *voc;
	struct tfk_graph *sg = NULL;
	struct tfk_lookup_opts o;
	struct tfk_lookup lk;
	struct tfk_tensor keys, vals;
	struct tfk_port p, dv;
	const char **tok = NULL;
	size_t *len = NULL;
	const char *std;
	char name[200];
	int64_t n, i, one = 1;
	int rc, lk_made = 0;

	if (sp && !json_is_null(sp) && !(json_is_string(sp) &&
	    !strcmp(json_string_value(sp), "whitespace")))
		return kcfg_bad(c, l, "split", "only \"whitespace\" inside a "
				"model (the SavedModel's StringSplitV2)");
	if (sp && json_is_null(sp))
		return kcfg_bad(c, l, "split", "only \"whitespace\" inside a "
				"model (the SavedModel's StringSplitV2)");
	if (ng && !json_is_null(ng))
		return kcfg_bad(c, l, "ngrams", "not supported inside a model "
				"yet; apply the layer with tfk-map");
	if (om && !json_is_null(om) && !(json_is_string(om) &&
	    !strcmp(json_string_value(om), "int")))
		return kcfg_bad(c, l, "output_mode", "only int inside a model "
				"yet; apply the layer with tfk-map");
	if (!json_is_integer(ol) || json_integer_value(ol) < 1 ||
	    json_integer_value(ol) > (1 << 20))
		return kcfg_bad(c, l, "output_sequence_length", "an integer in "
				"1..1048576 is needed inside a model");
	if (d->dtype != TFK_DT_STRING)
		return kcfg_bad(c, l, NULL, "TextVectorization takes strings");
	/* the config checked, and the vocabulary, by tfk-map's own op */
	rc = tfk_graph_new(&sg, c->err);
	if (!rc)
		rc = tfk_graph_placeholder(sg, "s", TFK_DT_STRING, 0, NULL, &p,
					   c->err);
	if (!rc)
		rc = tfk_prep_layer_add(sg, obj, l->path, &p, c->err);
	if (rc)
		goto out;
	nd = tfk_graph_node(sg, p.node);
	voc = tfk_node_attr(nd, "vocabulary")->tensor;
	std = tfk_node_attr(nd, "standardize")->s.p;
	/* its lookup: mask "" at 0, "[UNK]" at 1, the tokens after */
	tfk_lookup_opts_string(&o);
	o.has_mask = 1;
	o.mask = "";
	o.mask_len = 0;
	n = voc->shape[0];
	tok = tfk_calloc((size_t)n + 1, sizeof(*tok));
	len = tfk_calloc((size_t)n + 1, sizeof(*len));
	if (!tok || !len) {
		rc = tfk_errf(c->err, TFK_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		struct tfk_str s = tfk_tensor_str(voc, i);

		tok[i] = s.ptr ? s.ptr : "";
		len[i] = s.len;
	}
	if ((rc = tfk_lookup_init(&lk, &o, c->err)))
		goto out;
	lk_made = 1;
	if ((rc = tfk_lookup_set_vocab(&lk, tok, len, NULL, (size_t)n, NULL,
				       0, c->err)))
		goto out;
	n = tfk_lookup_size(&lk) - lk.token_start;
	if ((rc = tfk_tensor_init(&keys, TFK_DT_STRING, 1, &n, c->err)))
		goto out;
	if ((rc = tfk_tensor_init(&vals, TFK_DT_INT64, 1, &n, c->err))) {
		tfk_tensor_release(&keys);
		goto out;
	}
	for (i = 0; i < n && !rc; i++) {
		size_t tl;
		const char *tp = tfk_lookup_token(&lk, lk.token_start + i,
						  &tl);

		((int64_t *)vals.data)[i] = lk.token_start + i;
		rc = tfk_tensor_set_str(&keys, i, tp, tl, c->err);
	}
	/* [batch, 1] -> [batch], as Keras squeezes it */
	if (!rc && d->rank == 2 && d->shape[1] == 1) {
		int32_t m1 = -1;
		struct tfk_port sh;

		rc = kconst_iv(c, &m1, 1, &sh);
		if (!rc)
			rc = kop2(c, "Reshape", x, sh, &x);
	} else if (!rc && d->rank != 1) {
		rc = kcfg_bad(c, l, NULL, "TextVectorization inside a model "
			      "takes [batch] or [batch, 1] strings");
	}
	if (!rc && (!strcmp(std, "lower") ||
		    !strcmp(std, "lower_and_strip_punctuation")))
		rc = kop1(c, "StringLower", x, &x);
	if (!rc && (!strcmp(std, "strip_punctuation") ||
		    !strcmp(std, "lower_and_strip_punctuation"))) {
		struct tfk_attr a[3] = {
			TFK_A_STR("pattern", TFK_KERAS_STRIP_REGEX),
			TFK_A_STR("rewrite", ""),
			TFK_A_BOOL("replace_global", 1) };

		rc = kop(c, "StaticRegexReplace", &x, 1, a, 3, &x);
	}
	if (!rc) {
		struct tfk_tensor t;

		one = lk.oov_start;	/* the OOV index, TF's default */
		rc = tfk_tensor_init_view(&t, TFK_DT_INT64, 0, NULL, &one, 8,
					  TFK_OWN_BORROWED, c->err);
		if (!rc)
			rc = tfk_graph_const(c->g, c->scope, &t, &dv, c->err);
	}
	if (!rc) {
		struct tfk_port pin[2] = { x, dv };
		struct tfk_attr a[3] = {
			TFK_A_TENSOR("keys", &keys),
			TFK_A_TENSOR("values", &vals),
			TFK_A_INT("length", json_integer_value(ol)) };

		snprintf(name, sizeof(name), "%sTextVectorization", c->scope);
		rc = tfk_graph_add_node(c->g, "_SplitLookupPad", name, pin, 2,
					a, 3, out, c->err);
	}
	tfk_tensor_release(&keys);
	tfk_tensor_release(&vals);
out:
	if (lk_made)
		tfk_lookup_release(&lk);
	tfk_free(tok);
	tfk_free(len);
	tfk_graph_free(sg);
	return rc;
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
	if (!strcmp(cls, "TextVectorization"))
		dense = 0;	/* its checks are textvec()'s */
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
	if (!strcmp(cls, "TextVectorization")) {
		rc = textvec(c, l, obj, x, &out->p);
		goto out;
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
