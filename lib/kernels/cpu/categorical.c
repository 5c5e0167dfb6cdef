/*
 * categorical.c - the categorical ops of the Keras preprocessing layers:
 * Bucketize (TF's op, Discretization's core), Hashing, CategoryEncoding,
 * StringLookup and IntegerLookup (ops named after the Keras layers: in
 * Keras they are Python over several TF ops and a hash table resource).
 *
 * The arithmetic is lib/prep/lookup.h and discretize.h. A lookup op
 * carries its vocabulary as a tensor attr (DT_STRING or DT_INT64), so a
 * graph is self-contained and a SavedModel writer can export it; each
 * executor builds its hash table from it on the first run and keeps it
 * in the node's state slot (one per executor, so threads share nothing).
 *
 * Shapes: a record's values are a scalar or a vector [n]. Hashing,
 * Bucketize and int-mode lookups keep the shape; one_hot gives
 * [n, depth] ([depth] for a scalar), multi_hot, count and tf_idf one
 * row [depth], as Keras on one sample. tf_idf multiplies the counts by
 * the float list attr idf_weights (one per vocabulary entry, or per
 * learned token with the special slots getting their mean, as Keras'
 * set_vocabulary).
 */
#include "kernels/cpu.h"
#include "prep/discretize.h"
#include "prep/lookup.h"
#include "prep/textvec.h"
#include "graph/graph.h"
#include "util/alloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INTS (TFK_DT_BIT(TFK_DT_INT32) | TFK_DT_BIT(TFK_DT_INT64))

static const char *attr_s(const struct tfk_node *n, const char *name)
{
	const struct tfk_attr_value *v = tfk_node_attr(n, name);

	return v && v->kind == TFK_ATTR_STRING ? v->s.p : "";
}

static int64_t in_int(const struct tfk_tensor *t, int64_t i)
{
	return t->dtype == TFK_DT_INT32 ? ((const int32_t *)t->data)[i] :
		((const int64_t *)t->data)[i];
}

/* Inference ---------------------------------------------------------- */

static int infer_dense(struct tfk_infer_ctx *ic, int64_t depth)
{
	const char *mode = attr_s(ic->node, "output_mode");

	if (ic->in[0].rank > 1)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: expected a "
				"scalar or a vector of values, got rank %d",
				ic->in[0].rank);
	if (!strcmp(mode, "int")) {
		ic->out[0].rank = ic->in[0].rank;
		memcpy(ic->out[0].shape, ic->in[0].shape,
		       sizeof(ic->out[0].shape));
		return 0;
	}
	if (!strcmp(mode, "one_hot") && ic->in[0].rank != 0) {
		ic->out[0].rank = 2;
		ic->out[0].shape[0] = ic->in[0].rank < 0 ? -1 :
			ic->in[0].shape[0];
		ic->out[0].shape[1] = depth;
		return 0;
	}
	if (strcmp(mode, "one_hot") && strcmp(mode, "multi_hot") &&
	    strcmp(mode, "count") && strcmp(mode, "tf_idf"))
		return tfk_errf(ic->err, TFK_EINVAL, "output_mode '%s': "
				"expected int, one_hot, multi_hot, count or "
				"tf_idf", mode);
	ic->out[0].rank = 1;
	ic->out[0].shape[0] = depth;
	return 0;
}

static int infer_catenc(struct tfk_infer_ctx *ic)
{
	int64_t n = tfk_node_attr_i(ic->node, "num_tokens", 0);

	if (n < 1 || n > 1 << 24)
		return tfk_errf(ic->err, TFK_EINVAL, "num_tokens must be in "
				"1..16777216");
	if (!strcmp(attr_s(ic->node, "output_mode"), "tf_idf"))
		return tfk_errf(ic->err, TFK_EINVAL, "output_mode 'tf_idf': "
				"expected one_hot, multi_hot or count");
	if (!strcmp(attr_s(ic->node, "output_mode"), "int"))
		return tfk_errf(ic->err, TFK_EINVAL, "output_mode 'int': "
				"expected one_hot, multi_hot or count");
	return infer_dense(ic, n);
}

static int infer_lookup(struct tfk_infer_ctx *ic)
{
	int64_t d = tfk_node_attr_i(ic->node, "depth", 0);
	enum tfk_dtype want = strcmp(attr_s(ic->node, "output_mode"), "int") ?
		TFK_DT_FLOAT : TFK_DT_INT64;

	if (ic->out[0].dtype != want)
		return tfk_errf(ic->err, TFK_EINVAL, "out_type %s does not fit"
				" output_mode %s",
				tfk_dtype_name(ic->out[0].dtype),
				attr_s(ic->node, "output_mode"));
	if (d < 1 || d > 1 << 24)
		return tfk_errf(ic->err, TFK_EINVAL, "depth must be in "
				"1..16777216");
	return infer_dense(ic, d);
}

/* Kernels -------------------------------------------------------------- */

static int k_bucketize(struct tfk_kernel_ctx *kc)
{
	const struct tfk_attr_value *b = tfk_node_attr(kc->node, "boundaries");
	const struct tfk_tensor *x = kc->in[0];
	int32_t *y = kc->out[0]->data;
	int64_t i, n = tfk_tensor_numel(x);
	struct tfk_discretize d;
	int rc;

	rc = tfk_discretize_init(&d, b->list.f, (size_t)b->list.n, kc->err);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		double v;

		switch (x->dtype) {
		case TFK_DT_FLOAT: v = ((const float *)x->data)[i]; break;
		case TFK_DT_DOUBLE: v = ((const double *)x->data)[i]; break;
		default: v = (double)in_int(x, i); break;
		}
		y[i] = (int32_t)tfk_discretize_bucket(&d, v);
	}
	tfk_discretize_release(&d);
	return 0;
}

static int k_hashing(struct tfk_kernel_ctx *kc)
{
	const struct tfk_node *nd = kc->node;
	const struct tfk_tensor *x = kc->in[0];
	int64_t *y = kc->out[0]->data, i, n = tfk_tensor_numel(x);
	struct tfk_hashing h;
	const char *mask = attr_s(nd, "mask_value");

	memset(&h, 0, sizeof(h));
	h.num_bins = (long)tfk_node_attr_i(nd, "num_bins", 1);
	h.has_mask = tfk_node_attr_b(nd, "has_mask", 0);
	h.mask = mask;
	h.mask_len = strlen(mask);
	h.mask_is_int = x->dtype != TFK_DT_STRING;
	h.mask_int = strtoll(mask, NULL, 10);
	h.salted = tfk_node_attr_b(nd, "salted", 0);
	h.salt[0] = (uint64_t)tfk_node_attr_i(nd, "salt0", 0);
	h.salt[1] = (uint64_t)tfk_node_attr_i(nd, "salt1", 0);
	if (h.num_bins < 1)
		return tfk_errf(kc->err, TFK_EINVAL, "num_bins must be >= 1");
	for (i = 0; i < n; i++) {
		if (x->dtype == TFK_DT_STRING) {
			struct tfk_str s = tfk_tensor_str(x, i);

			y[i] = tfk_hashing_str(&h, s.ptr, s.len);
		} else {
			y[i] = tfk_hashing_int(&h, in_int(x, i));
		}
	}
	return 0;
}

static int k_catenc(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0];
	int64_t n = tfk_tensor_numel(x), i, *v;
	int mode = tfk_lookup_mode_parse(attr_s(kc->node, "output_mode"));
	int rc;

	v = tfk_malloc((size_t)(n ? n : 1) * sizeof(*v));
	if (!v)
		return tfk_errf(kc->err, TFK_ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		v[i] = in_int(x, i);
	rc = tfk_catenc((long)tfk_node_attr_i(kc->node, "num_tokens", 1), mode,
			v, (size_t)n, NULL, kc->out[0]->data, kc->err);
	tfk_free(v);
	return rc;
}

/* tf_idf weights of a node (attr idf_weights; none: NULL, 0). */
static const float *idf_attr(const struct tfk_node *nd, size_t *n)
{
	const struct tfk_attr_value *v = tfk_node_attr(nd, "idf_weights");

	*n = v && v->list.n > 0 ? (size_t)v->list.n : 0;
	return *n ? v->list.f : NULL;
}

/* The lookup of a node, built from its attrs on the first run. */
static int lookup_state(struct tfk_kernel_ctx *kc, struct tfk_lookup **out)
{
	struct tfk_lookup *l;
	int rc;

	if (*kc->state) {
		*out = *kc->state;
		return 0;
	}
	l = tfk_calloc(1, sizeof(*l));
	if (!l)
		return tfk_errf(kc->err, TFK_ENOMEM, "out of memory");
	rc = tfk_lookup_from_node(kc->node, l, kc->err);
	if (rc) {
		tfk_free(l);
		return rc;
	}
	*kc->state = l;
	*out = l;
	return 0;
}

static void free_lookup(void *state)
{
	tfk_lookup_release(state);
	tfk_free(state);
}

static int k_lookup(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0];
	struct tfk_lookup *l = NULL;
	int64_t n = tfk_tensor_numel(x), i, *idx;
	int rc = lookup_state(kc, &l);

	if (rc)
		return rc;
	idx = kc->out[0]->dtype == TFK_DT_INT64 ? kc->out[0]->data :
		tfk_malloc((size_t)(n ? n : 1) * sizeof(*idx));
	if (!idx)
		return tfk_errf(kc->err, TFK_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		if (x->dtype == TFK_DT_STRING) {
			struct tfk_str s = tfk_tensor_str(x, i);

			idx[i] = tfk_lookup_index(l, s.ptr, s.len, kc->err);
		} else {
			idx[i] = tfk_lookup_index_int(l, in_int(x, i),
						      kc->err);
		}
		if (idx[i] < 0 && idx[i] != TFK_LOOKUP_DROP) {
			rc = (int)idx[i];
			break;
		}
	}
	if (!rc && kc->out[0]->dtype == TFK_DT_INT64) {
		for (i = 0; i < n; i++)	/* a dropped mask reads as 0 */
			if (idx[i] == TFK_LOOKUP_DROP)
				idx[i] = 0;
	} else if (!rc) {
		rc = tfk_lookup_encode(l, idx, (size_t)n, kc->out[0]->data,
				       kc->err);
	}
	if (kc->out[0]->dtype != TFK_DT_INT64)
		tfk_free(idx);
	return rc;
}

/* TextVectorization: one string per record (a scalar or a vector of
 * one); int mode with output_sequence_length L gives [L], the dense
 * modes [depth]. Options as tfk_textvec_opts, from the attrs. */
static int infer_textvec(struct tfk_infer_ctx *ic)
{
	const char *mode = attr_s(ic->node, "output_mode");
	int64_t d = tfk_node_attr_i(ic->node, "depth", 0);
	int64_t len = tfk_node_attr_i(ic->node, "output_sequence_length", -1);

	if (ic->in[0].rank > 1 || (ic->in[0].rank == 1 &&
				   ic->in[0].shape[0] > 1))
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: expected one "
				"string");
	ic->out[0].rank = 1;
	if (!strcmp(mode, "int")) {
		if (len < 1)
			return tfk_errf(ic->err, TFK_EINVAL, "int mode needs "
					"output_sequence_length");
		ic->out[0].shape[0] = len;
		if (ic->out[0].dtype != TFK_DT_INT64)
			return tfk_errf(ic->err, TFK_EINVAL, "out_type must "
					"be int64 in int mode");
		return 0;
	}
	if (ic->out[0].dtype != TFK_DT_FLOAT || d < 1)
		return tfk_errf(ic->err, TFK_EINVAL, "dense modes need "
				"out_type float32 and depth >= 1");
	ic->out[0].shape[0] = d;
	return 0;
}

static int textvec_state(struct tfk_kernel_ctx *kc, struct tfk_textvec **out)
{
	const struct tfk_node *nd = kc->node;
	const struct tfk_tensor *voc = tfk_node_attr(nd, "vocabulary")->tensor;
	const struct tfk_attr_value *ng = tfk_node_attr(nd, "ngrams");
	struct tfk_textvec_opts o;
	struct tfk_textvec *tv;
	const char **tok;
	size_t *len;
	int64_t i, n = voc->shape[0];
	int rc;

	if (*kc->state) {
		*out = *kc->state;
		return 0;
	}
	tfk_textvec_opts_default(&o);
	o.standardize = tfk_textvec_std_parse(attr_s(nd, "standardize"));
	o.split = tfk_textvec_split_parse(attr_s(nd, "split"));
	if (!*attr_s(nd, "standardize"))
		o.standardize = TFK_STD_NONE;
	if (!*attr_s(nd, "split"))
		o.split = TFK_SPLIT_NONE;
	o.n_ngrams = ng->list.n > TFK_TEXTVEC_MAX_NGRAMS ?
		TFK_TEXTVEC_MAX_NGRAMS : ng->list.n;
	for (i = 0; i < o.n_ngrams; i++)
		o.ngrams[i] = (int)ng->list.i[i];
	o.mode = tfk_lookup_mode_parse(attr_s(nd, "output_mode"));
	o.max_tokens = (long)tfk_node_attr_i(nd, "max_tokens", 0);
	o.pad_to_max_tokens = tfk_node_attr_b(nd, "pad_to_max_tokens", 0);
	o.output_sequence_length = (long)tfk_node_attr_i(nd,
		"output_sequence_length", -1);
	tv = tfk_calloc(1, sizeof(*tv));
	tok = tfk_malloc((size_t)(n ? n : 1) * sizeof(*tok));
	len = tfk_malloc((size_t)(n ? n : 1) * sizeof(*len));
	if (!tv || !tok || !len) {
		tfk_free(tv);
		tfk_free(tok);
		tfk_free(len);
		return tfk_errf(kc->err, TFK_ENOMEM, "out of memory");
	}
	rc = tfk_textvec_init(tv, &o, kc->err);
	if (rc) {
		tfk_free(tv);
		tv = NULL;
	} else {
		for (i = 0; i < n; i++) {
			struct tfk_str st = tfk_tensor_str(voc, i);

			tok[i] = st.ptr ? st.ptr : "";
			len[i] = st.len;
		}
		size_t n_idf;
		const float *idf = idf_attr(nd, &n_idf);

		rc = tfk_lookup_set_vocab(&tv->lk, tok, len, NULL, (size_t)n,
					  idf, n_idf, kc->err);
	}
	tfk_free(tok);
	tfk_free(len);
	if (rc) {
		if (tv) {
			tfk_textvec_release(tv);
			tfk_free(tv);
		}
		return rc;
	}
	*kc->state = tv;
	*out = tv;
	return 0;
}

static void free_textvec(void *state)
{
	tfk_textvec_release(state);
	tfk_free(state);
}

static int k_textvec(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0];
	struct tfk_tensor *y = kc->out[0];
	struct tfk_textvec *tv = NULL;
	struct tfk_str s = { "", 0 };
	const int64_t *idx;
	size_t n;
	int rc = textvec_state(kc, &tv);

	if (rc)
		return rc;
	if (tfk_tensor_numel(x) == 1)
		s = tfk_tensor_str(x, 0);
	if (y->dtype == TFK_DT_FLOAT) {
		if (tfk_textvec_depth(tv) != y->shape[0])
			return tfk_errf(kc->err, TFK_EINVAL, "depth %ld, output "
					"%lld", tfk_textvec_depth(tv),
					(long long)y->shape[0]);
		return tfk_textvec_dense(tv, s.ptr ? s.ptr : "", s.len,
					 y->data, kc->err);
	}
	rc = tfk_textvec_int(tv, s.ptr ? s.ptr : "", s.len, &idx, &n, kc->err);
	if (rc)
		return rc;
	if ((int64_t)n != y->shape[0])
		return tfk_errf(kc->err, TFK_EINVAL, "%zu indices for an output"
				" of %lld", n, (long long)y->shape[0]);
	memcpy(y->data, idx, n * sizeof(*idx));
	return 0;
}

/* Tables ------------------------------------------------------------------ */

#define A_S(nm, d) { nm, TFK_ATTR_STRING, 1, { .s = { d, sizeof(d) - 1 } } }
#define A_I(nm, d) { nm, TFK_ATTR_INT, 1, { .i = (d) } }
#define A_B(nm, d) { nm, TFK_ATTR_BOOL, 1, { .b = (d) } }

#define LOOKUP(nm, allowed) {						\
	.name = nm,							\
	.inputs = { { "input", .type_attr = "T" } },			\
	.outputs = { { "output", .type_attr = "out_type" } },		\
	.attrs = {							\
		{ "T", TFK_ATTR_TYPE, 0, { 0 }, (allowed) },		\
		{ "out_type", TFK_ATTR_TYPE, 0, { 0 },			\
		  TFK_DT_BIT(TFK_DT_INT64) | TFK_DT_BIT(TFK_DT_FLOAT) },	\
		{ "vocabulary", TFK_ATTR_TENSOR, 0, { 0 } },		\
		A_I("num_oov_indices", 1), A_B("has_mask", 0),		\
		A_S("mask_token", ""), A_S("oov_token", "[UNK]"),	\
		A_S("output_mode", "int"), A_I("max_tokens", 0),	\
		A_B("pad_to_max_tokens", 0),				\
		{ "depth", TFK_ATTR_INT, 0, { 0 } },			\
		{ "idf_weights", TFK_ATTR_LIST_FLOAT, 1, { 0 } },	\
	},								\
	.flags = TFK_OP_STATEFUL,					\
	.infer = infer_lookup,						\
}

const struct tfk_op_def tfk_ops_categorical[] = {
	{
		.name = "Bucketize",
		.inputs = { { "input", .type_attr = "T" } },
		.outputs = { { "output", TFK_DT_INT32 } },
		.attrs = {
			{ "T", TFK_ATTR_TYPE, 0, { 0 }, INTS |
			  TFK_DT_BIT(TFK_DT_FLOAT) |
			  TFK_DT_BIT(TFK_DT_DOUBLE) },
			{ "boundaries", TFK_ATTR_LIST_FLOAT, 0, { 0 } },
		},
	},
	{
		.name = "Hashing",
		.inputs = { { "input", .type_attr = "T" } },
		.outputs = { { "output", TFK_DT_INT64 } },
		.attrs = {
			{ "T", TFK_ATTR_TYPE, 0, { 0 }, INTS |
			  TFK_DT_BIT(TFK_DT_STRING) },
			{ "num_bins", TFK_ATTR_INT, 0, { 0 } },
			A_B("has_mask", 0), A_S("mask_value", ""),
			A_B("salted", 0), A_I("salt0", 0), A_I("salt1", 0),
		},
	},
	{
		.name = "CategoryEncoding",
		.inputs = { { "input", .type_attr = "T" } },
		.outputs = { { "output", TFK_DT_FLOAT } },
		.attrs = {
			{ "T", TFK_ATTR_TYPE, 0, { 0 }, INTS },
			{ "num_tokens", TFK_ATTR_INT, 0, { 0 } },
			A_S("output_mode", "multi_hot"),
		},
		.infer = infer_catenc,
	},
	LOOKUP("StringLookup", TFK_DT_BIT(TFK_DT_STRING)),
	LOOKUP("IntegerLookup", INTS),
	{
		.name = "TextVectorization",
		.inputs = { { "input", TFK_DT_STRING } },
		.outputs = { { "output", .type_attr = "out_type" } },
		.attrs = {
			{ "out_type", TFK_ATTR_TYPE, 0, { 0 },
			  TFK_DT_BIT(TFK_DT_INT64) | TFK_DT_BIT(TFK_DT_FLOAT) },
			{ "vocabulary", TFK_ATTR_TENSOR, 0, { 0 } },
			A_S("standardize", "lower_and_strip_punctuation"),
			A_S("split", "whitespace"),
			{ "ngrams", TFK_ATTR_LIST_INT, 1, { 0 } },
			A_S("output_mode", "int"), A_I("max_tokens", 0),
			A_I("output_sequence_length", -1), A_I("depth", 1),
			A_B("pad_to_max_tokens", 0),
			{ "idf_weights", TFK_ATTR_LIST_FLOAT, 1, { 0 } },
		},
		.flags = TFK_OP_STATEFUL,
		.infer = infer_textvec,
	},
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_categorical[] = {
	{ "Bucketize", "cpu", NULL, k_bucketize, NULL },
	{ "Hashing", "cpu", NULL, k_hashing, NULL },
	{ "CategoryEncoding", "cpu", NULL, k_catenc, NULL },
	{ "StringLookup", "cpu", NULL, k_lookup, free_lookup },
	{ "IntegerLookup", "cpu", NULL, k_lookup, free_lookup },
	{ "TextVectorization", "cpu", NULL, k_textvec, free_textvec },
	{ NULL, NULL, NULL, NULL, NULL }
};
