/*
 * tfhash.c - TensorFlow's string hashing ops, as a Keras Hashing layer
 * exports them (keras hashing.py _hash_values_to_bins): AsString for
 * integer inputs, then StringToHashBucketFast (no salt) or
 * StringToHashBucketStrong (salt as key), so a SavedModel of ours with
 * a Hashing layer runs again here and in TensorFlow alike.
 *
 *   StringToHashBucketFast(input string) -> int64:
 *       Fingerprint64(s) % num_buckets          (string_to_hash_bucket_op.h)
 *   StringToHashBucketStrong(input string) -> int64:
 *       SipHash-2-4(key[0], key[1], s) % num_buckets
 *   AsString(input int32/int64) -> string: the decimal text ("%lld"),
 *       with the default attrs only (precision -1, scientific and
 *       shortest false, width -1, fill ""); a node with other attrs has
 *       no kernel here (supports() says so; the importer names it).
 * The hashes are prep/fprint.h, the ones tfk-map's Hashing op uses, so
 * the exported ops give that op's bins.
 *
 * FloorMod(x, y) on int32/int64, y a scalar or of x's shape: the OOV
 * buckets of an IntegerLookup with several OOV indices (Keras:
 * tf.math.floormod(inputs, num_oov_indices)); the result has y's sign,
 * as Python's %. y = 0 is an error (TF: "Integer division by zero").
 */
#include "kernels/cpu.h"
#include "prep/fprint.h"
#include "graph/graph.h"
#include "graph/op.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int k_bucket(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0];
	int64_t *y = kc->out[0]->data, n = tfk_tensor_numel(x), i;
	int64_t nb = tfk_node_attr_i(kc->node, "num_buckets", 0);
	int strong = !strcmp(kc->node->op->name, "StringToHashBucketStrong");
	const struct tfk_attr_value *key = tfk_node_attr(kc->node, "key");

	if (nb < 1)
		return tfk_errf(kc->err, TFK_EINVAL, "num_buckets must be >= 1,"
				" got %" PRId64, nb);
	if (strong && (!key || key->kind != TFK_ATTR_LIST_INT ||
		       key->list.n != 2))
		return tfk_errf(kc->err, TFK_EINVAL, "key: expected 2 "
				"integers");
	for (i = 0; i < n; i++) {
		struct tfk_str s = tfk_tensor_str(x, i);
		const char *p = s.ptr ? s.ptr : "";
		uint64_t h = strong ? tfk_siphash24((uint64_t)key->list.i[0],
						    (uint64_t)key->list.i[1],
						    p, s.len)
				    : tfk_fprint64(p, s.len);

		y[i] = (int64_t)(h % (uint64_t)nb);
	}
	return 0;
}

static int as_string_supports(const struct tfk_node *n)
{
	const struct tfk_attr_value *f = tfk_node_attr(n, "fill");

	return tfk_node_attr_i(n, "precision", -1) == -1 &&
	       !tfk_node_attr_b(n, "scientific", 0) &&
	       !tfk_node_attr_b(n, "shortest", 0) &&
	       tfk_node_attr_i(n, "width", -1) == -1 &&
	       (!f || f->s.len == 0);
}

static int k_as_string(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0];
	int64_t n = tfk_tensor_numel(x), i;
	char b[24];
	int rc = 0;

	for (i = 0; i < n && !rc; i++) {
		int64_t v = x->dtype == TFK_DT_INT32 ?
			((const int32_t *)x->data)[i] :
			((const int64_t *)x->data)[i];
		int len = snprintf(b, sizeof(b), "%" PRId64, v);

		rc = tfk_tensor_set_str(kc->out[0], i, b, (size_t)len,
					kc->err);
	}
	return rc;
}

static int64_t int_at(const struct tfk_tensor *t, int64_t i)
{
	return t->dtype == TFK_DT_INT32 ? ((const int32_t *)t->data)[i] :
		((const int64_t *)t->data)[i];
}

static int k_floormod(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0], *y = kc->in[1];
	int64_t n = tfk_tensor_numel(x), ny = tfk_tensor_numel(y), i;

	if (ny != 1 && ny != n)
		return tfk_errf(kc->err, TFK_EINVAL, "y: a scalar or x's "
				"shape is supported, got %lld values for %lld",
				(long long)ny, (long long)n);
	for (i = 0; i < n; i++) {
		int64_t a = int_at(x, i), m = int_at(y, ny == 1 ? 0 : i), r;

		if (m == 0)
			return tfk_errf(kc->err, TFK_EINVAL, "integer "
					"division by zero");
		r = m == -1 ? 0 : a % m;	/* INT64_MIN % -1 traps */
		if (r != 0 && ((r < 0) != (m < 0)))
			r += m;
		if (x->dtype == TFK_DT_INT32)
			((int32_t *)kc->out[0]->data)[i] = (int32_t)r;
		else
			((int64_t *)kc->out[0]->data)[i] = r;
	}
	return 0;
}

const struct tfk_op_def tfk_ops_tfhash[] = {
	{
		.name = "FloorMod",
		.inputs = { { "x", .type_attr = "T" },
			    { "y", .type_attr = "T" } },
		.outputs = { { "z", .type_attr = "T" } },
		.attrs = { { "T", TFK_ATTR_TYPE, 0, { 0 },
			     TFK_DT_BIT(TFK_DT_INT32) |
			     TFK_DT_BIT(TFK_DT_INT64) } },
	},
	{
		.name = "StringToHashBucketFast",
		.inputs = { { "input", TFK_DT_STRING } },
		.outputs = { { "output", TFK_DT_INT64 } },
		.attrs = { { "num_buckets", TFK_ATTR_INT, 0, { 0 } } },
	},
	{
		.name = "StringToHashBucketStrong",
		.inputs = { { "input", TFK_DT_STRING } },
		.outputs = { { "output", TFK_DT_INT64 } },
		.attrs = { { "num_buckets", TFK_ATTR_INT, 0, { 0 } },
			   { "key", TFK_ATTR_LIST_INT, 0, { 0 } } },
	},
	{
		.name = "AsString",
		.inputs = { { "input", .type_attr = "T" } },
		.outputs = { { "output", TFK_DT_STRING } },
		.attrs = {
			{ "T", TFK_ATTR_TYPE, 0, { 0 },
			  TFK_DT_BIT(TFK_DT_INT32) | TFK_DT_BIT(TFK_DT_INT64) },
			{ "precision", TFK_ATTR_INT, 1, { .i = -1 } },
			{ "scientific", TFK_ATTR_BOOL, 1, { .b = 0 } },
			{ "shortest", TFK_ATTR_BOOL, 1, { .b = 0 } },
			{ "width", TFK_ATTR_INT, 1, { .i = -1 } },
			{ "fill", TFK_ATTR_STRING, 1, { .s = { "", 0 } } },
		},
	},
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_tfhash[] = {
	{ "StringToHashBucketFast", "cpu", NULL, k_bucket, NULL },
	{ "StringToHashBucketStrong", "cpu", NULL, k_bucket, NULL },
	{ "AsString", "cpu", as_string_supports, k_as_string, NULL },
	{ "FloorMod", "cpu", NULL, k_floormod, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
