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
 * count, tf_idf) encode per row, which the per-record ops do not do
 * on a batch; they are refused here, by name, until they are.
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

static int flat_ok(const char *mode)
{
	return !mode || !strcmp(mode, "int");
}

int tfk_keras_prep_apply(struct kctx *c, struct klayer *l,
			 const struct tfk_port *in, int n_in,
			 struct kout *out)
{
	const char *cls = l->k->cls;
	const json_t *voc = json_object_get(l->cfg, "vocabulary");
	const json_t *mode = json_object_get(l->cfg, "output_mode");
	const struct tfk_tdesc *d = kdesc(c, in[0]);
	json_t *obj = (json_t *)l->obj, *copy = NULL, *list;
	struct tfk_port x = in[0], shape;
	int32_t minus1 = -1;
	int rc, flat = d->rank != 1;

	(void)n_in;
	out->act = NULL;
	out->logits.node = -1;
	out->logits.index = 0;
	if (!strcmp(cls, "TextVectorization"))
		return kcfg_bad(c, l, NULL, "TextVectorization inside a model "
				"cannot be exported yet; apply it with tfk-map "
				"before training");
	if (!strcmp(cls, "CategoryEncoding") ? 1 :
	    !flat_ok(json_is_string(mode) ? json_string_value(mode) : NULL)) {
		char what[200];

		snprintf(what, sizeof(what), "output_mode %s of %s inside a "
			 "model is not supported yet (only int); encode with "
			 "tfk-map before training", json_is_string(mode) ?
			 json_string_value(mode) : "multi_hot", cls);
		return kcfg_bad(c, l, "output_mode", what);
	}
	if (json_is_string(voc)) {
		rc = vocab_file(c, l, json_string_value(voc),
				!strcmp(cls, "IntegerLookup"), &list);
		if (rc)
			return rc;
		copy = json_deep_copy(obj);
		if (!copy || json_object_set_new(json_object_get(copy,
						 "config"), "vocabulary",
						 list)) {
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
	if (!rc && flat)
		rc = kop2(c, "Reshape", x, shape, &x);
	out->p = x;
out:
	json_decref(copy);
	return rc;
}
