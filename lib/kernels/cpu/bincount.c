/*
 * bincount.c - TensorFlow's DenseBincount, the op Keras' CategoryEncoding
 * (and the one_hot / multi_hot / count modes of the lookup, Hashing and
 * Discretization layers) traces to (keras utils.encode_categorical_inputs
 * -> tf.math.bincount(minlength = maxlength = depth, axis=-1)).
 *
 * DenseBincount(input [n] or [b, n] of Tidx, size [] Tidx, weights of T:
 * [0] for none, else input's shape) -> T [size] or [b, size]: out[v] (per
 * row) counts the values v of the row, or adds their weights, or is 1
 * when binary_output; values >= size are dropped and a negative one is an
 * error, as bincount_op.cc. Keras asserts the range before this op; that
 * assertion is not part of it.
 *
 * Forward only: nothing trains through a count of integers.
 */
#include "kernels/cpu.h"
#include "graph/graph.h"
#include "graph/op.h"

#include <inttypes.h>
#include <string.h>

#define IDX (TFK_DT_BIT(TFK_DT_INT32) | TFK_DT_BIT(TFK_DT_INT64))

static int64_t val_i(const struct tfk_tensor *t, int64_t i)
{
	return t->dtype == TFK_DT_INT32 ? ((const int32_t *)t->data)[i] :
		((const int64_t *)t->data)[i];
}

static int infer_bincount(struct tfk_infer_ctx *ic)
{
	const struct tfk_tensor *sz = ic->in_value[1];
	int64_t size = -1;

	if (ic->in[0].rank != 1 && ic->in[0].rank != 2)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: expected rank 1 "
				"or 2, got %d", ic->in[0].rank);
	if (ic->in[1].rank > 0)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: size must be a "
				"scalar");
	if (sz) {
		size = val_i(sz, 0);
		if (size < 0)
			return tfk_errf(ic->err, TFK_EINVAL, "input 1: size %"
					PRId64 " is negative", size);
	}
	ic->out[0].rank = ic->in[0].rank;
	if (ic->in[0].rank == 2)
		ic->out[0].shape[0] = ic->in[0].shape[0];
	ic->out[0].shape[ic->in[0].rank - 1] = size;
	return 0;
}

static int k_bincount(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0], *w = kc->in[2];
	struct tfk_tensor *y = kc->out[0];
	int64_t size = val_i(kc->in[1], 0), rows, n, r, j;
	int binary = tfk_node_attr_b(kc->node, "binary_output", 0);
	int has_w = tfk_tensor_numel(w) > 0;

	if (has_w && tfk_tensor_numel(w) != tfk_tensor_numel(x))
		return tfk_errf(kc->err, TFK_EINVAL, "weights: %lld values "
				"for %lld inputs",
				(long long)tfk_tensor_numel(w),
				(long long)tfk_tensor_numel(x));
	rows = x->rank == 2 ? x->shape[0] : 1;
	n = x->rank == 2 ? x->shape[1] : x->shape[0];
	memset(y->data, 0, y->nbytes);
	for (r = 0; r < rows; r++) {
		for (j = 0; j < n; j++) {
			int64_t v = val_i(x, r * n + j), o = r * size + v;
			double add = 1;

			if (v < 0)
				return tfk_errf(kc->err, TFK_EINVAL, "input "
						"values must be non-negative, "
						"got %" PRId64, v);
			if (v >= size)
				continue;
			if (has_w && !binary)
				add = w->dtype == TFK_DT_FLOAT ?
				      ((const float *)w->data)[r * n + j] :
				      w->dtype == TFK_DT_DOUBLE ?
				      ((const double *)w->data)[r * n + j] :
				      (double)val_i(w, r * n + j);
			switch (y->dtype) {
			case TFK_DT_FLOAT:
				((float *)y->data)[o] = binary ? 1 :
					((float *)y->data)[o] + (float)add;
				break;
			case TFK_DT_DOUBLE:
				((double *)y->data)[o] = binary ? 1 :
					((double *)y->data)[o] + add;
				break;
			case TFK_DT_INT32:
				((int32_t *)y->data)[o] = binary ? 1 :
					((int32_t *)y->data)[o] + (int32_t)add;
				break;
			default:
				((int64_t *)y->data)[o] = binary ? 1 :
					((int64_t *)y->data)[o] + (int64_t)add;
				break;
			}
		}
	}
	return 0;
}

const struct tfk_op_def tfk_ops_bincount[] = {
	{
		.name = "DenseBincount",
		.inputs = { { "input", .type_attr = "Tidx" },
			    { "size", .type_attr = "Tidx" },
			    { "weights", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = {
			{ "Tidx", TFK_ATTR_TYPE, 0, { 0 }, IDX },
			{ "T", TFK_ATTR_TYPE, 0, { 0 }, IDX |
			  TFK_DT_BIT(TFK_DT_FLOAT) |
			  TFK_DT_BIT(TFK_DT_DOUBLE) },
			{ "binary_output", TFK_ATTR_BOOL, 1, { .b = 0 } },
		},
		.infer = infer_bincount,
	},
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_bincount[] = {
	{ "DenseBincount", "cpu", NULL, k_bincount, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
