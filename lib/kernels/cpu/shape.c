/*
 * shape.c - shape functions (Shape, Size, Rank, BroadcastGradientArgs)
 * and the ops that only move data: ExpandDims, Squeeze.
 *
 * Shape, Size and Rank are TFK_OP_SHAPE_FN: their kernels read the
 * input's rank and shape, never its data, so the executor runs them
 * while planning and their values reach the inference of the ops that
 * take a shape as an input (Reshape(dy, Shape(x)) in gradients).
 * BroadcastGradientArgs is TF's op for the gradient of a broadcasting
 * op whose shapes are only known at run time: its outputs are small
 * integer vectors of deterministic values, which the executor folds too.
 *
 * ExpandDims and Squeeze change the shape only: their kernels copy the
 * bytes (the executor gives every output its own buffer).
 */
#include "kernels/cpu.h"
#include "graph/graph.h"
#include "kernels/cpu/grad-impl.h"

#include <string.h>

#define INDEX (TFK_DT_BIT(TFK_DT_INT32) | TFK_DT_BIT(TFK_DT_INT64))

/* Integer scalar or vector value (int32 or int64) into v[0..*n). */
static int ints_of(const struct tfk_tensor *t, int64_t *v, int max, int *n)
{
	int64_t i, cnt = tfk_tensor_numel(t);

	if (t->rank > 1 || cnt > max)
		return -1;
	for (i = 0; i < cnt; i++)
		v[i] = t->dtype == TFK_DT_INT32 ? ((const int32_t *)t->data)[i]
			: ((const int64_t *)t->data)[i];
	*n = (int)cnt;
	return 0;
}

static void put_int(struct tfk_tensor *t, int64_t i, int64_t v)
{
	if (t->dtype == TFK_DT_INT32)
		((int32_t *)t->data)[i] = (int32_t)v;
	else
		((int64_t *)t->data)[i] = v;
}

static int copy_bytes(struct tfk_kernel_ctx *kc)
{
	if (kc->in[0]->nbytes != kc->out[0]->nbytes)
		return tfk_errf(kc->err, TFK_EINVAL, "copy of %zu bytes into "
				"%zu", kc->in[0]->nbytes, kc->out[0]->nbytes);
	if (kc->out[0]->nbytes)
		memcpy(kc->out[0]->data, kc->in[0]->data, kc->out[0]->nbytes);
	return 0;
}

/* Shape, Size, Rank -------------------------------------------------------- */

static int infer_shape(struct tfk_infer_ctx *ic)
{
	ic->out[0].rank = 1;
	ic->out[0].shape[0] = ic->in[0].rank;	/* -1 when unknown */
	return 0;
}

static int infer_scalar(struct tfk_infer_ctx *ic)
{
	ic->out[0].rank = 0;
	return 0;
}

static int k_shape(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0];
	int i;

	for (i = 0; i < x->rank; i++) {
		if (kc->out[0]->dtype == TFK_DT_INT32 &&
		    x->shape[i] > INT32_MAX)
			return tfk_errf(kc->err, TFK_EINVAL, "dim %d (%lld) "
					"does not fit out_type int32", i,
					(long long)x->shape[i]);
		put_int(kc->out[0], i, x->shape[i]);
	}
	return 0;
}

static int k_size(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0];
	int64_t n = 1;
	int i;

	for (i = 0; i < x->rank; i++)
		n *= x->shape[i];
	if (kc->out[0]->dtype == TFK_DT_INT32 && n > INT32_MAX)
		return tfk_errf(kc->err, TFK_EINVAL, "size %lld does not fit "
				"out_type int32", (long long)n);
	put_int(kc->out[0], 0, n);
	return 0;
}

static int k_rank(struct tfk_kernel_ctx *kc)
{
	((int32_t *)kc->out[0]->data)[0] = kc->in[0]->rank;
	return 0;
}

/* BroadcastGradientArgs ---------------------------------------------------- */

/*
 * r0, r1: the axes of the broadcast shape of s0 and s1 along which the
 * gradient must be summed to get back s0's and s1's (TF's
 * BCast::GradReduce: the leading axes an operand lacks and the axes
 * where it has 1 and the other does not; when both have 1 neither
 * reduces).
 */
static int bga(const int64_t *a, int na, const int64_t *b, int nb,
	       int64_t *r0, int *n0, int64_t *r1, int *n1,
	       struct tfk_err *err)
{
	int n = na > nb ? na : nb, i;

	*n0 = *n1 = 0;
	for (i = 0; i < n; i++) {
		int64_t x = i < n - na ? 1 : a[i - (n - na)];
		int64_t y = i < n - nb ? 1 : b[i - (n - nb)];

		if (x == y && x == 1)
			continue;
		if (x != y && x != 1 && y != 1)
			return tfk_errf(err, TFK_EINVAL, "incompatible shapes "
					"(dim %d: %lld vs %lld)", i,
					(long long)x, (long long)y);
		if (x == 1)
			r0[(*n0)++] = i;
		if (y == 1)
			r1[(*n1)++] = i;
	}
	return 0;
}

static int infer_bga(struct tfk_infer_ctx *ic)
{
	int64_t a[TFK_MAX_RANK], b[TFK_MAX_RANK], r0[TFK_MAX_RANK],
		r1[TFK_MAX_RANK];
	int na, nb, n0, n1, i, rc;

	for (i = 0; i < 2; i++)
		if (ic->in[i].rank >= 0 && ic->in[i].rank != 1)
			return tfk_errf(ic->err, TFK_EINVAL, "input %d: a "
					"shape vector needs rank 1", i);
	ic->out[0].rank = ic->out[1].rank = 1;
	ic->out[0].shape[0] = ic->out[1].shape[0] = -1;
	if (!ic->in_value[0] || !ic->in_value[1])
		return 0;
	if (ints_of(ic->in_value[0], a, TFK_MAX_RANK, &na) ||
	    ints_of(ic->in_value[1], b, TFK_MAX_RANK, &nb))
		return tfk_errf(ic->err, TFK_EINVAL, "shapes of more than %d "
				"dims", TFK_MAX_RANK);
	rc = bga(a, na, b, nb, r0, &n0, r1, &n1, ic->err);
	if (rc)
		return rc;
	ic->out[0].shape[0] = n0;
	ic->out[1].shape[0] = n1;
	return 0;
}

static int k_bga(struct tfk_kernel_ctx *kc)
{
	int64_t a[TFK_MAX_RANK], b[TFK_MAX_RANK], r0[TFK_MAX_RANK],
		r1[TFK_MAX_RANK];
	int na, nb, n0, n1, i, rc;

	if (ints_of(kc->in[0], a, TFK_MAX_RANK, &na) ||
	    ints_of(kc->in[1], b, TFK_MAX_RANK, &nb))
		return tfk_errf(kc->err, TFK_EINVAL, "shapes of more than %d "
				"dims", TFK_MAX_RANK);
	rc = bga(a, na, b, nb, r0, &n0, r1, &n1, kc->err);
	if (rc)
		return rc;
	if (kc->out[0]->shape[0] != n0 || kc->out[1]->shape[0] != n1)
		return tfk_errf(kc->err, TFK_EINVAL, "output sizes differ "
				"from the planned ones");
	for (i = 0; i < n0; i++)
		put_int(kc->out[0], i, r0[i]);
	for (i = 0; i < n1; i++)
		put_int(kc->out[1], i, r1[i]);
	return 0;
}

/* ExpandDims, Squeeze ------------------------------------------------------ */

static int infer_expand_dims(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *x = &ic->in[0];
	int64_t v[1];
	int n, i;

	if (ic->in[1].rank > 1 || (ic->in[1].rank == 1 &&
				   ic->in[1].shape[0] > 1))
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: dim must be "
				"a scalar");
	if (x->rank < 0) {
		ic->out[0].rank = -1;
		return 0;
	}
	if (x->rank >= TFK_MAX_RANK)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: rank %d, "
				"the most is %d", x->rank, TFK_MAX_RANK);
	ic->out[0].rank = x->rank + 1;
	if (!ic->in_value[1]) {
		for (i = 0; i <= x->rank; i++)
			ic->out[0].shape[i] = -1;
		return 0;
	}
	if (ints_of(ic->in_value[1], v, 1, &n) || n != 1)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: dim must be "
				"one integer");
	/* TF: dim in [-rank - 1, rank], negative counts from the end */
	if (v[0] < -x->rank - 1 || v[0] > x->rank)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: dim %lld out "
				"of range [%d, %d]", (long long)v[0],
				-x->rank - 1, x->rank);
	if (v[0] < 0)
		v[0] += x->rank + 1;
	for (i = 0; i <= x->rank; i++)
		ic->out[0].shape[i] = i < v[0] ? x->shape[i] : i == v[0] ? 1 :
			x->shape[i - 1];
	return 0;
}

static int infer_squeeze(struct tfk_infer_ctx *ic)
{
	const struct tfk_attr_value *a = tfk_node_attr(ic->node,
						       "squeeze_dims");
	const struct tfk_tdesc *x = &ic->in[0];
	unsigned mask = 0;
	int i, r = 0;

	if (x->rank < 0) {
		ic->out[0].rank = -1;
		return 0;
	}
	for (i = 0; a && i < a->list.n; i++) {
		int64_t d = a->list.i[i];

		if (d < -x->rank || d >= x->rank)
			return tfk_errf(ic->err, TFK_EINVAL, "squeeze_dims: "
					"%lld out of range for rank %d",
					(long long)d, x->rank);
		if (d < 0)
			d += x->rank;
		if (x->shape[d] > 1 || x->shape[d] == 0)
			return tfk_errf(ic->err, TFK_EINVAL, "squeeze_dims: "
					"dim %lld has size %lld, not 1",
					(long long)d, (long long)x->shape[d]);
		mask |= 1u << d;
	}
	for (i = 0; i < x->rank; i++) {
		if (mask ? (mask >> i) & 1 : x->shape[i] == 1)
			continue;
		if (!mask && x->shape[i] < 0)
			return tfk_errf(ic->err, TFK_EINVAL, "input 0: dim %d "
					"unknown: give squeeze_dims", i);
		ic->out[0].shape[r++] = x->shape[i];
	}
	ic->out[0].rank = r;
	return 0;
}

/* ExpandDims, Squeeze: dy reshaped to x's shape (TF's _ReshapeToInput) */
static int grad_reshape_to_input(struct tfk_grad_ctx *gc)
{
	struct tfk_port s;
	int rc = gb_shape(gc, gc->node->inputs[0], &s);

	return rc ? rc : gb_2(gc, "Reshape", gc->dy[0], s, &gc->dx[0]);
}

/* Tables ------------------------------------------------------------------- */

const struct tfk_op_def tfk_ops_shape[] = {
	{
		.name = "Shape",
		.inputs = { { "input", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "out_type" } },
		.attrs = {
			{ "T", TFK_ATTR_TYPE },
			{ "out_type", TFK_ATTR_TYPE, 1,
			  { .type = TFK_DT_INT32 }, INDEX },
		},
		.flags = TFK_OP_SHAPE_FN,
		.infer = infer_shape,
	},
	{
		.name = "Size",
		.inputs = { { "input", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "out_type" } },
		.attrs = {
			{ "T", TFK_ATTR_TYPE },
			{ "out_type", TFK_ATTR_TYPE, 1,
			  { .type = TFK_DT_INT32 }, INDEX },
		},
		.flags = TFK_OP_SHAPE_FN,
		.infer = infer_scalar,
	},
	{
		.name = "Rank",
		.inputs = { { "input", .type_attr = "T" } },
		.outputs = { { "output", TFK_DT_INT32 } },
		.attrs = { { "T", TFK_ATTR_TYPE } },
		.flags = TFK_OP_SHAPE_FN,
		.infer = infer_scalar,
	},
	{
		.name = "BroadcastGradientArgs",
		.inputs = { { "s0", .type_attr = "T" },
			    { "s1", .type_attr = "T" } },
		.outputs = { { "r0", .type_attr = "T" },
			     { "r1", .type_attr = "T" } },
		.attrs = { { "T", TFK_ATTR_TYPE, 1, { .type = TFK_DT_INT32 },
			     INDEX } },
		.infer = infer_bga,
	},
	{
		.name = "ExpandDims",
		.inputs = { { "input", .type_attr = "T" },
			    { "dim", .type_attr = "Tdim" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = {
			{ "T", TFK_ATTR_TYPE },
			{ "Tdim", TFK_ATTR_TYPE, 1, { .type = TFK_DT_INT32 },
			  INDEX },
		},
		.infer = infer_expand_dims,
		.grad = grad_reshape_to_input,
	},
	{
		.name = "Squeeze",
		.inputs = { { "input", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = {
			{ "T", TFK_ATTR_TYPE },
			{ "squeeze_dims", TFK_ATTR_LIST_INT, 1, { 0 } },
		},
		.infer = infer_squeeze,
		.grad = grad_reshape_to_input,
	},
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_shape[] = {
	{ "Shape", "cpu", NULL, k_shape, NULL },
	{ "Size", "cpu", NULL, k_size, NULL },
	{ "Rank", "cpu", NULL, k_rank, NULL },
	{ "BroadcastGradientArgs", "cpu", NULL, k_bga, NULL },
	{ "ExpandDims", "cpu", NULL, copy_bytes, NULL },
	{ "Squeeze", "cpu", NULL, copy_bytes, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
