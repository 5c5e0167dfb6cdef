/*
 * tflookup.c - _TableFind, what the SavedModel importer (model/
 * import.c) lowers TensorFlow's static hash tables to: HashTableV2
 * filled by InitializeTableFromTextFileV2 (or InitializeTableV2) in the
 * init op, read by LookupTableFindV2 (keys, default_value).
 *
 * TF runs the init op once after loading and keeps the table as a
 * session resource; nothing writes it afterwards. So the importer runs
 * the initializer itself, at import time (reading the vocabulary file
 * from DIR/assets/ as the loader feeds the asset path), and hands the
 * table's contents to one node as two tensor attrs: keys (DT_STRING or
 * DT_INT64 [n]) and values (DT_INT64 [n]). The kernel builds a hash
 * index over them on its first run and keeps it in the node's state
 * slot (one per executor, as the tfk-map lookup ops do).
 *
 * _TableFind(keys [any shape], default_value [] scalar) -> values, the
 * shape of keys: values[i] = the table's value of keys[i], or
 * default_value when the key is not in it, as TF's HashTable::Find. A
 * key twice in the table is an error, as TF's HashTable insert.
 *
 * _SplitLookupPad(input [b] strings, default_value []) -> int64 [b,
 * length]: TextVectorization's int output after standardizing, what the
 * importer lowers StringSplitV2 (whitespace) -> LookupTableFindV2 on
 * the split values -> RaggedTensorToTensor(shape [-1, length]) to: each
 * string split at runs of ASCII whitespace (tfk_textvec_tokens), each of
 * the first `length` tokens looked up (default_value when absent), the
 * rest of the row `pad`. One node, because the split's outputs have a
 * size only the data knows, and the executor plans memory from shapes.
 *
 * Rejected: a resource-typed table threaded through the executor (no
 * resource dtype in tfk_tensor, and a graph-local init order the
 * executor would have to learn for one op family).
 */
#include "kernels/cpu.h"
#include "prep/fprint.h"
#include "prep/textvec.h"
#include "graph/graph.h"
#include "graph/op.h"
#include "util/alloc.h"

#include <string.h>

struct table {
	uint32_t *slot;		/* entry + 1; 0 = empty */
	size_t mask;
	const struct tfk_tensor *keys;	/* the node's attrs (borrowed) */
	const int64_t *vals;
};

static uint64_t key_hash(const struct tfk_tensor *t, int64_t i)
{
	if (t->dtype == TFK_DT_STRING) {
		struct tfk_str s = tfk_tensor_str(t, i);

		return tfk_fprint64(s.ptr ? s.ptr : "", s.len);
	}
	return tfk_fprint64(&((const int64_t *)t->data)[i], 8);
}

static int key_eq(const struct tfk_tensor *a, int64_t i,
		  const struct tfk_tensor *b, int64_t j)
{
	if (a->dtype == TFK_DT_STRING) {
		struct tfk_str x = tfk_tensor_str(a, i);
		struct tfk_str y = tfk_tensor_str(b, j);

		return x.len == y.len && (!x.len || !memcmp(x.ptr, y.ptr,
							      x.len));
	}
	return ((const int64_t *)a->data)[i] == ((const int64_t *)b->data)[j];
}

static void free_table(void *p)
{
	struct table *t = p;

	if (t)
		tfk_free(t->slot);
	tfk_free(t);
}

/* The hash index over node n's keys/values attrs (keys of dtype kt). */
static int build_table(const struct tfk_node *node, enum tfk_dtype kt,
		       struct table **out, struct tfk_err *err)
{
	const struct tfk_attr_value *k = tfk_node_attr(node, "keys");
	const struct tfk_attr_value *v = tfk_node_attr(node, "values");
	struct table *t;
	int64_t n, i;
	size_t cap = 16, h;

	if (!k || !v || k->kind != TFK_ATTR_TENSOR ||
	    v->kind != TFK_ATTR_TENSOR || k->tensor->rank != 1 ||
	    v->tensor->rank != 1 || v->tensor->dtype != TFK_DT_INT64 ||
	    k->tensor->shape[0] != v->tensor->shape[0] ||
	    k->tensor->dtype != kt)
		return tfk_errf(err, TFK_EINVAL, "keys and values: "
				"expected two vectors of one length (values "
				"int64, keys of the input's dtype)");
	n = k->tensor->shape[0];
	if (n > (int64_t)UINT32_MAX / 4)
		return tfk_errf(err, TFK_EINVAL, "table of %lld entries "
				"is too large", (long long)n);
	while (cap < (size_t)n * 2 + 2)
		cap *= 2;
	t = tfk_calloc(1, sizeof(*t));
	if (t)
		t->slot = tfk_calloc(cap, sizeof(*t->slot));
	if (!t || !t->slot) {
		free_table(t);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	t->mask = cap - 1;
	t->keys = k->tensor;
	t->vals = v->tensor->data;
	for (i = 0; i < n; i++) {
		for (h = key_hash(t->keys, i) & t->mask; t->slot[h];
		     h = (h + 1) & t->mask)
			if (key_eq(t->keys, t->slot[h] - 1, t->keys, i))
				break;
		if (t->slot[h]) {	/* TF: "HashTable has different value
					 * for same key" */
			free_table(t);
			return tfk_errf(err, TFK_EINVAL, "entry %lld of "
					"the table (line %lld of its file) "
					"repeats an earlier key", (long long)i,
					(long long)i + 1);
		}
		t->slot[h] = (uint32_t)(i + 1);
	}
	*out = t;
	return 0;
}

static int table_state(struct tfk_kernel_ctx *kc, struct table **out)
{
	int rc;

	if (*kc->state) {
		*out = *kc->state;
		return 0;
	}
	rc = build_table(kc->node, kc->in[0]->dtype, out, kc->err);
	if (!rc)
		*kc->state = *out;
	return rc;
}

/* The value of string key p[0..n), or dv. */
static int64_t find_str(const struct table *t, const char *p, size_t n,
			int64_t dv)
{
	size_t h;

	for (h = tfk_fprint64(n ? p : "", n) & t->mask; t->slot[h];
	     h = (h + 1) & t->mask) {
		struct tfk_str s = tfk_tensor_str(t->keys, t->slot[h] - 1);

		if (s.len == n && (!n || !memcmp(s.ptr, p, n)))
			return t->vals[t->slot[h] - 1];
	}
	return dv;
}

static int k_table_find(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0], *d = kc->in[1];
	int64_t *y = kc->out[0]->data, n = tfk_tensor_numel(x), i, dv;
	struct table *t = NULL;
	size_t h;
	int rc;

	if (tfk_tensor_numel(d) != 1)
		return tfk_errf(kc->err, TFK_EINVAL, "default_value: expected "
				"a scalar, got %lld values",
				(long long)tfk_tensor_numel(d));
	if ((rc = table_state(kc, &t)))
		return rc;
	dv = ((const int64_t *)d->data)[0];
	for (i = 0; i < n; i++) {
		y[i] = dv;
		for (h = key_hash(x, i) & t->mask; t->slot[h];
		     h = (h + 1) & t->mask)
			if (key_eq(t->keys, t->slot[h] - 1, x, i)) {
				y[i] = t->vals[t->slot[h] - 1];
				break;
			}
	}
	return 0;
}

/* _SplitLookupPad ------------------------------------------------------- */

struct splitpad {
	struct table *t;
	struct tfk_textvec tv;	/* the whitespace tokenizer only */
};

static void free_splitpad(void *p)
{
	struct splitpad *sp = p;

	if (!sp)
		return;
	free_table(sp->t);
	tfk_textvec_release(&sp->tv);
	tfk_free(sp);
}

static int infer_splitpad(struct tfk_infer_ctx *ic)
{
	int64_t len = tfk_node_attr_i(ic->node, "length", -1);

	if (ic->in[0].rank != 1)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: expected a "
				"vector of strings, got rank %d",
				ic->in[0].rank);
	if (len < 0)
		return tfk_errf(ic->err, TFK_EINVAL, "length must be >= 0");
	ic->out[0].rank = 2;
	ic->out[0].shape[0] = ic->in[0].shape[0];
	ic->out[0].shape[1] = len;
	return 0;
}

static int k_splitpad(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0], *d = kc->in[1];
	int64_t len = tfk_node_attr_i(kc->node, "length", 0);
	int64_t pad = tfk_node_attr_i(kc->node, "pad", 0);
	int64_t *y = kc->out[0]->data, n = tfk_tensor_numel(x), i, j, dv;
	struct splitpad *sp = *kc->state;
	int rc;

	if (tfk_tensor_numel(d) != 1)
		return tfk_errf(kc->err, TFK_EINVAL, "default_value: expected "
				"a scalar");
	if (!sp) {
		struct tfk_textvec_opts o;

		sp = tfk_calloc(1, sizeof(*sp));
		if (!sp)
			return tfk_errf(kc->err, TFK_ENOMEM, "out of memory");
		tfk_textvec_opts_default(&o);
		o.standardize = TFK_STD_NONE;
		rc = tfk_textvec_init(&sp->tv, &o, kc->err);
		if (rc) {
			tfk_free(sp);
			return rc;
		}
		rc = build_table(kc->node, TFK_DT_STRING, &sp->t, kc->err);
		if (rc) {
			free_splitpad(sp);
			return rc;
		}
		*kc->state = sp;
	}
	dv = ((const int64_t *)d->data)[0];
	for (i = 0; i < n; i++) {
		struct tfk_str s = tfk_tensor_str(x, i);
		long nt = tfk_textvec_tokens(&sp->tv, s.ptr ? s.ptr : "",
					     s.len, kc->err);

		if (nt < 0)
			return (int)nt;
		for (j = 0; j < len; j++) {
			size_t tl;
			const char *tp;

			if (j >= nt) {
				y[i * len + j] = pad;
				continue;
			}
			tp = tfk_textvec_token(&sp->tv, (size_t)j, &tl);
			y[i * len + j] = find_str(sp->t, tp, tl, dv);
		}
	}
	return 0;
}

const struct tfk_op_def tfk_ops_tflookup[] = {
	{
		.name = "_TableFind",
		.inputs = { { "keys", .type_attr = "Tin" },
			    { "default_value", .type_attr = "Tout" } },
		.outputs = { { "values", .type_attr = "Tout" } },
		.attrs = {
			{ "Tin", TFK_ATTR_TYPE, 0, { 0 },
			  TFK_DT_BIT(TFK_DT_STRING) |
			  TFK_DT_BIT(TFK_DT_INT64) },
			{ "Tout", TFK_ATTR_TYPE, 0, { 0 },
			  TFK_DT_BIT(TFK_DT_INT64) },
			{ "keys", TFK_ATTR_TENSOR, 0, { 0 } },
			{ "values", TFK_ATTR_TENSOR, 0, { 0 } },
		},
		.flags = TFK_OP_STATEFUL,
	},
	{
		.name = "_SplitLookupPad",
		.inputs = { { "input", TFK_DT_STRING },
			    { "default_value", TFK_DT_INT64 } },
		.outputs = { { "output", TFK_DT_INT64 } },
		.attrs = {
			{ "keys", TFK_ATTR_TENSOR, 0, { 0 } },
			{ "values", TFK_ATTR_TENSOR, 0, { 0 } },
			{ "length", TFK_ATTR_INT, 0, { 0 } },
			{ "pad", TFK_ATTR_INT, 1, { .i = 0 } },
		},
		.flags = TFK_OP_STATEFUL,
		.infer = infer_splitpad,
	},
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_tflookup[] = {
	{ "_TableFind", "cpu", NULL, k_table_find, free_table },
	{ "_SplitLookupPad", "cpu", NULL, k_splitpad, free_splitpad },
	{ NULL, NULL, NULL, NULL, NULL }
};
