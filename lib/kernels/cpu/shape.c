/*
 * shape.c - shape functions (Shape, Size, Rank, BroadcastGradientArgs)
 * and the ops that only move data: ExpandDims, Squeeze, ConcatV2,
 * SplitV, Pack, Unpack, Transpose, Fill, BroadcastTo, Tile, Pad, PadV2,
 * Slice, StridedSlice (all five masks) and StridedSliceGrad.
 *
 * Shape, Size and Rank are TFK_OP_SHAPE_FN: their kernels read the
 * input's rank and shape, never its data, so the executor runs them
 * while planning and their values reach the inference of the ops that
 * take a shape as an input (Reshape(dy, Shape(x)) in gradients).
 * BroadcastGradientArgs is TF's op for the gradient of a broadcasting
 * op whose shapes are only known at run time: its outputs are small
 * integer vectors of deterministic values, which the executor folds too.
 *
 * Data movement is one primitive: a strided view copy (out[i...] =
 * x[off + sum i_d * s_d], the last dim by memcpy when contiguous), which
 * is Transpose, Slice, StridedSlice and BroadcastTo with different
 * offsets and strides; ConcatV2/Pack and SplitV/Unpack are block copies
 * per outer index. These are memory-bound and off the training hot
 * path, so the _refs are the kernels, except a tiled 2-D transpose of
 * the last two dims. ExpandDims and Squeeze copy the bytes (the
 * executor gives every output its own buffer).
 *
 * Gradients are TF's (array_grad.py); where TF builds shapes at run
 * time they use Consts when the build-time shapes allow (ConcatV2's
 * split sizes, Tile's reshape, Pad's slice size) and refuse, naming the
 * node, when they do not; Slice's needs known dims.
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

/* Data movement: the _refs ------------------------------------------------- */

static int movable(const struct tfk_tensor *t)
{
	return tfk_dtype_size(t->dtype) && t->dtype != TFK_DT_STRING;
}

/* Row-major element strides of a shape. */
static void strides_of(int rank, const int64_t *shape, int64_t *st)
{
	int64_t s = 1;
	int d;

	for (d = rank - 1; d >= 0; d--) {
		st[d] = s;
		s *= shape[d];
	}
}

/*
 * out[i...] = x[off + sum_d i_d * xs[d]] for every index of out (a
 * strided view of x: transposes, slices, broadcasts). An odometer over
 * the outer dims, the last dim copied by memcpy when contiguous.
 */
static void view_copy(const struct tfk_tensor *x, int64_t off,
		      const int64_t *xs, struct tfk_tensor *out)
{
	size_t es = tfk_dtype_size(x->dtype);
	int64_t idx[TFK_MAX_RANK] = { 0 }, n = tfk_tensor_numel(out);
	int64_t inner, rows, row, j, o = off;
	int r = out->rank, d;
	const char *src = x->data;
	char *dst = out->data;

	if (!n)
		return;
	if (r == 0) {
		memcpy(dst, src + off * es, es);
		return;
	}
	inner = out->shape[r - 1];
	rows = n / inner;
	for (row = 0; row < rows; row++) {
		if (xs[r - 1] == 1) {
			memcpy(dst, src + o * es, inner * es);
		} else {
			for (j = 0; j < inner; j++)
				memcpy(dst + j * es, src + (o + j * xs[r - 1]) *
				       es, es);
		}
		dst += inner * es;
		for (d = r - 2; d >= 0; d--) {
			idx[d]++;
			o += xs[d];
			if (idx[d] < out->shape[d])
				break;
			o -= xs[d] * idx[d];
			idx[d] = 0;
		}
	}
}

int tfk_cpu_transpose_ref(const struct tfk_tensor *x, const int *perm,
			  struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t xs[TFK_MAX_RANK], vs[TFK_MAX_RANK];
	int d;

	if (!movable(x) || x->dtype != out->dtype || x->rank != out->rank)
		return tfk_errf(err, TFK_EINVAL, "transpose: bad operands");
	strides_of(x->rank, x->shape, xs);
	for (d = 0; d < x->rank; d++) {
		if (perm[d] < 0 || perm[d] >= x->rank ||
		    out->shape[d] != x->shape[perm[d]])
			return tfk_errf(err, TFK_EINVAL, "transpose: output "
					"shape does not match perm");
		vs[d] = xs[perm[d]];
	}
	view_copy(x, 0, vs, out);
	return 0;
}

/* 2-D tiles for the inner transpose of the last two dims (the form
 * attention and NCHW/NHWC swaps take); everything else the view copy */
int tfk_cpu_transpose(const struct tfk_tensor *x, const int *perm,
		      struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t rows, cols, b, nb = 1, i, j, i0, j0;
	int r = x->rank, d;

	for (d = 0; d < r - 2; d++)
		if (perm[d] != d)
			break;
	if (r < 2 || d < r - 2 || perm[r - 2] != r - 1 ||
	    perm[r - 1] != r - 2 || x->dtype != TFK_DT_FLOAT ||
	    out->dtype != TFK_DT_FLOAT)
		return tfk_cpu_transpose_ref(x, perm, out, err);
	for (d = 0; d < r; d++)
		if (out->shape[d] != x->shape[perm[d]])
			return tfk_errf(err, TFK_EINVAL, "transpose: output "
					"shape does not match perm");
	rows = x->shape[r - 2];
	cols = x->shape[r - 1];
	for (d = 0; d < r - 2; d++)
		nb *= x->shape[d];
	for (b = 0; b < nb; b++) {
		const float *s = (const float *)x->data + b * rows * cols;
		float *o = (float *)out->data + b * rows * cols;

		for (i0 = 0; i0 < rows; i0 += 32)
			for (j0 = 0; j0 < cols; j0 += 32)
				for (i = i0; i < rows && i < i0 + 32; i++)
					for (j = j0; j < cols && j < j0 + 32;
					     j++)
						o[j * rows + i] =
							s[i * cols + j];
	}
	return 0;
}

int tfk_cpu_strided_slice_ref(const struct tfk_tensor *x,
			      const int64_t *begin, const int64_t *strides,
			      struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t xs[TFK_MAX_RANK], vs[TFK_MAX_RANK], off = 0;
	int d;

	if (!movable(x) || x->dtype != out->dtype || x->rank != out->rank)
		return tfk_errf(err, TFK_EINVAL, "strided slice: bad "
				"operands");
	strides_of(x->rank, x->shape, xs);
	for (d = 0; d < x->rank; d++) {
		int64_t last = begin[d] + (out->shape[d] - 1) * strides[d];

		if (out->shape[d] && (begin[d] < 0 || begin[d] >= x->shape[d] ||
				      last < 0 || last >= x->shape[d]))
			return tfk_errf(err, TFK_EINVAL, "strided slice: dim "
					"%d out of range", d);
		off += begin[d] * xs[d];
		vs[d] = strides[d] * xs[d];
	}
	view_copy(x, off, vs, out);
	return 0;
}

int tfk_cpu_broadcast_to_ref(const struct tfk_tensor *x,
			     struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t xs[TFK_MAX_RANK], vs[TFK_MAX_RANK];
	int d, lead = out->rank - x->rank;

	if (!movable(x) || x->dtype != out->dtype || lead < 0)
		return tfk_errf(err, TFK_EINVAL, "broadcast_to: bad operands");
	strides_of(x->rank, x->shape, xs);
	for (d = 0; d < out->rank; d++) {
		int k = d - lead;

		if (k < 0 || x->shape[k] == 1) {
			vs[d] = 0;
		} else if (x->shape[k] == out->shape[d]) {
			vs[d] = xs[k];
		} else {
			return tfk_errf(err, TFK_EINVAL, "broadcast_to: dim "
					"%d of %lld cannot become %lld", k,
					(long long)x->shape[k],
					(long long)out->shape[d]);
		}
	}
	view_copy(x, 0, vs, out);
	return 0;
}

int tfk_cpu_tile_ref(const struct tfk_tensor *x, struct tfk_tensor *out,
		     struct tfk_err *err)
{
	size_t es = tfk_dtype_size(x->dtype);
	int64_t xs[TFK_MAX_RANK], i, n = tfk_tensor_numel(out);
	int d;

	if (!movable(x) || x->dtype != out->dtype || x->rank != out->rank)
		return tfk_errf(err, TFK_EINVAL, "tile: bad operands");
	for (d = 0; d < x->rank; d++)
		if ((x->shape[d] == 0 && out->shape[d]) ||
		    (x->shape[d] && out->shape[d] % x->shape[d]))
			return tfk_errf(err, TFK_EINVAL, "tile: dim %d of "
					"%lld is not a multiple of %lld", d,
					(long long)out->shape[d],
					(long long)x->shape[d]);
	strides_of(x->rank, x->shape, xs);
	for (i = 0; i < n; i++) {
		int64_t rem = i, o = 0;

		for (d = x->rank - 1; d >= 0; d--) {
			o += (rem % out->shape[d]) % x->shape[d] * xs[d];
			rem /= out->shape[d];
		}
		memcpy((char *)out->data + i * es, (const char *)x->data +
		       o * es, es);
	}
	return 0;
}

int tfk_cpu_pad_ref(const struct tfk_tensor *x, const int64_t *pads,
		    double value, struct tfk_tensor *out,
		    struct tfk_err *err)
{
	size_t es = tfk_dtype_size(x->dtype);
	int64_t os[TFK_MAX_RANK], i, n, off = 0;
	int d;

	if (!(TFK_DT_BIT(x->dtype) & (TFK_DT_BIT(TFK_DT_FLOAT) |
				      TFK_DT_BIT(TFK_DT_DOUBLE) |
				      TFK_DT_BIT(TFK_DT_INT32) |
				      TFK_DT_BIT(TFK_DT_INT64))) ||
	    x->dtype != out->dtype || x->rank != out->rank)
		return tfk_errf(err, TFK_EINVAL, "pad: bad operands");
	for (d = 0; d < x->rank; d++)
		if (pads[2 * d] < 0 || pads[2 * d + 1] < 0 ||
		    out->shape[d] != x->shape[d] + pads[2 * d] +
		    pads[2 * d + 1])
			return tfk_errf(err, TFK_EINVAL, "pad: dim %d: bad "
					"paddings", d);
	n = tfk_tensor_numel(out);
	for (i = 0; i < n; i++)
		switch (out->dtype) {
		case TFK_DT_FLOAT: ((float *)out->data)[i] = (float)value;
			break;
		case TFK_DT_DOUBLE: ((double *)out->data)[i] = value; break;
		case TFK_DT_INT32: ((int32_t *)out->data)[i] = (int32_t)value;
			break;
		default: ((int64_t *)out->data)[i] = (int64_t)value; break;
		}
	/* x copied into the interior: a strided view of out, written */
	strides_of(out->rank, out->shape, os);
	for (d = 0; d < x->rank; d++)
		off += pads[2 * d] * os[d];
	n = tfk_tensor_numel(x);
	for (i = 0; i < n; i++) {
		int64_t rem = i, o = off;

		for (d = x->rank - 1; d >= 0; d--) {
			o += (rem % x->shape[d]) * os[d];
			rem /= x->shape[d];
		}
		memcpy((char *)out->data + o * es, (const char *)x->data +
		       i * es, es);
	}
	return 0;
}

int tfk_cpu_concat_ref(const struct tfk_tensor *const *xs, int n, int axis,
		       struct tfk_tensor *out, struct tfk_err *err)
{
	size_t es = tfk_dtype_size(out->dtype);
	int64_t outer = 1, total = 0, o, at = 0;
	int i, d;

	if (!movable(out) || axis < 0 || axis >= out->rank)
		return tfk_errf(err, TFK_EINVAL, "concat: bad operands");
	for (d = 0; d < axis; d++)
		outer *= out->shape[d];
	for (i = 0; i < n; i++) {
		if (xs[i]->dtype != out->dtype || xs[i]->rank != out->rank)
			return tfk_errf(err, TFK_EINVAL, "concat: input %d "
					"differs in dtype or rank", i);
		for (d = 0; d < out->rank; d++)
			if (d != axis && xs[i]->shape[d] != out->shape[d])
				return tfk_errf(err, TFK_EINVAL, "concat: "
						"input %d: dim %d differs", i,
						d);
		total += xs[i]->shape[axis];
	}
	if (total != out->shape[axis])
		return tfk_errf(err, TFK_EINVAL, "concat: sizes along axis "
				"add up to %lld, output has %lld",
				(long long)total,
				(long long)out->shape[axis]);
	if (!outer)
		return 0;
	for (i = 0; i < n; i++) {
		int64_t chunk = tfk_tensor_numel(xs[i]) / outer;
		int64_t ochunk = tfk_tensor_numel(out) / outer;

		for (o = 0; o < outer; o++)
			memcpy((char *)out->data + (o * ochunk + at) * es,
			       (const char *)xs[i]->data + o * chunk * es,
			       chunk * es);
		at += chunk;
	}
	return 0;
}

/* Split of x along axis into outs (the inverse of concat). */
static int split_ref(const struct tfk_tensor *x, int axis,
		     struct tfk_tensor *const *outs, int n,
		     struct tfk_err *err)
{
	size_t es = tfk_dtype_size(x->dtype);
	int64_t outer = 1, o, at = 0, total = 0;
	int i, d;

	for (d = 0; d < axis; d++)
		outer *= x->shape[d];
	for (i = 0; i < n; i++)
		total += outs[i]->shape[axis];
	if (total != x->shape[axis])
		return tfk_errf(err, TFK_EINVAL, "split: sizes add up to "
				"%lld, dim is %lld", (long long)total,
				(long long)x->shape[axis]);
	if (!outer)
		return 0;
	for (i = 0; i < n; i++) {
		int64_t chunk = tfk_tensor_numel(outs[i]) / outer;
		int64_t xchunk = tfk_tensor_numel(x) / outer;

		for (o = 0; o < outer; o++)
			memcpy((char *)outs[i]->data + o * chunk * es,
			       (const char *)x->data + (o * xchunk + at) * es,
			       chunk * es);
		at += chunk;
	}
	return 0;
}

/* dst[off + sum_d i_d * xs[d]] = src[i...] (the inverse of view_copy) */
static void view_scatter(const struct tfk_tensor *src, int64_t off,
			 const int64_t *xs, struct tfk_tensor *dst)
{
	size_t es = tfk_dtype_size(src->dtype);
	int64_t i, n = tfk_tensor_numel(src);
	int d;

	for (i = 0; i < n; i++) {
		int64_t rem = i, o = off;

		for (d = src->rank - 1; d >= 0; d--) {
			o += (rem % src->shape[d]) * xs[d];
			rem /= src->shape[d];
		}
		memcpy((char *)dst->data + o * es, (const char *)src->data +
		       i * es, es);
	}
}

/* Shape-valued input k as integers: its value, or NULL with rank from
 * the input's length (-1 when even that is unknown). */
static const struct tfk_tensor *value_or_len(struct tfk_infer_ctx *ic, int k,
					     int *len)
{
	const struct tfk_tdesc *d = &ic->in[k];

	*len = d->rank == 1 ? (int)d->shape[0] : d->rank == 0 ? 1 : -1;
	return ic->in_value[k];
}

static void all_unknown(struct tfk_tdesc *o, int rank)
{
	int i;

	o->rank = rank;
	for (i = 0; i < rank && i < TFK_MAX_RANK; i++)
		o->shape[i] = -1;
}

/* Axis value v for rank r (negative from the end) or an error. */
static int norm_axis(int64_t v, int r, int64_t *a, struct tfk_err *err,
		     const char *what)
{
	*a = v < 0 ? v + r : v;
	if (*a < 0 || *a >= r)
		return tfk_errf(err, TFK_EINVAL, "%s %lld out of range for "
				"rank %d", what, (long long)v, r);
	return 0;
}

/* ConcatV2, Pack, Unpack, SplitV -------------------------------------------- */

static int infer_concat(struct tfk_infer_ctx *ic)
{
	int n = ic->n_in - 1, i, d, r = -1, len;
	const struct tfk_tensor *av = value_or_len(ic, n, &len);
	int64_t v[1], a;
	char b1[128], b2[128];

	for (i = 0; i < n; i++)
		if (ic->in[i].rank >= 0)
			r = ic->in[i].rank;
	if (len != 1 && len != -1)
		return tfk_errf(ic->err, TFK_EINVAL, "input %d: axis must be "
				"a scalar", n);
	if (r < 0 || !av) {
		all_unknown(&ic->out[0], r);
		return 0;
	}
	if (r == 0)
		return tfk_errf(ic->err, TFK_EINVAL, "cannot concatenate "
				"scalars");
	if (ints_of(av, v, 1, &len) || len != 1 ||
	    norm_axis(v[0], r, &a, ic->err, "axis"))
		return tfk_err_prefix(ic->err, "input %d", n);
	ic->out[0].rank = r;
	for (d = 0; d < r; d++)
		ic->out[0].shape[d] = d == a ? 0 : -1;
	for (i = 0; i < n; i++) {
		const struct tfk_tdesc *x = &ic->in[i];

		if (x->rank < 0) {
			ic->out[0].shape[a] = -1;
			continue;
		}
		if (x->rank != r)
			return tfk_errf(ic->err, TFK_EINVAL, "input %d: rank "
					"%d, input 0 has %d", i, x->rank, r);
		for (d = 0; d < r; d++) {
			int64_t *o = &ic->out[0].shape[d];

			if (d == a) {
				*o = *o < 0 || x->shape[d] < 0 ? -1 :
					*o + x->shape[d];
			} else if (*o < 0) {
				*o = x->shape[d];
			} else if (x->shape[d] >= 0 && x->shape[d] != *o) {
				return tfk_errf(ic->err, TFK_EINVAL, "input "
						"%d: shape %s does not match "
						"%s outside axis %lld", i,
						tfk_shape_str(x->rank,
							      x->shape, b1,
							      sizeof(b1)),
						tfk_shape_str(r, ic->out[0].shape,
							      b2, sizeof(b2)),
						(long long)a);
			}
		}
	}
	return 0;
}

static int k_concat(struct tfk_kernel_ctx *kc)
{
	int n = kc->n_in - 1;
	int64_t v[1], a;
	int len;

	if (ints_of(kc->in[n], v, 1, &len) || len != 1 ||
	    norm_axis(v[0], kc->out[0]->rank, &a, kc->err, "axis"))
		return tfk_errf(kc->err, TFK_EINVAL, "bad axis");
	return tfk_cpu_concat_ref(kc->in, n, (int)a, kc->out[0], kc->err);
}

/* TF's _ConcatGradHelper as one SplitV: sizes along the axis from the
 * inputs' build-time shapes (at most one unknown, given as -1) */
static int grad_concat(struct tfk_grad_ctx *gc)
{
	int n = gc->node->n_inputs - 1, i, unk = 0, rc;
	const struct tfk_tensor *av = tfk_graph_const_value(
		gc->g, gc->node->inputs[n]);
	int64_t v[1], a;
	int32_t sizes[64], ax;
	struct tfk_port in[3], out;
	struct tfk_attr at = TFK_A_INT("num_split", n);
	int len, r = gc->node->outputs[0].rank;

	if (!av || r < 0 || n > 64 || ints_of(av, v, 1, &len) ||
	    norm_axis(v[0], r, &a, gc->err, "axis"))
		return tfk_errf(gc->err, TFK_EINVAL, "node %s: gradient needs "
				"a Const axis and known ranks",
				gc->node->name);
	for (i = 0; i < n; i++) {
		const struct tfk_tdesc *x = tfk_graph_desc(gc->g,
							   gc->node->inputs[i]);

		sizes[i] = x->shape[a] < 0 ? -1 : (int32_t)x->shape[a];
		unk += sizes[i] < 0;
	}
	if (unk > 1)
		return tfk_errf(gc->err, TFK_EINVAL, "node %s: gradient needs "
				"the sizes along the axis (%d unknown)",
				gc->node->name, unk);
	ax = (int32_t)a;
	in[0] = gc->dy[0];
	rc = gb_ints(gc, sizes, n, &in[1]);
	if (rc)
		return rc;
	{
		/* split_dim is a scalar */
		struct tfk_tensor t;

		tfk_tensor_init_view(&t, TFK_DT_INT32, 0, NULL, &ax, 4,
				     TFK_OWN_BORROWED, NULL);
		rc = tfk_graph_const(gc->g, gc->prefix, &t, &in[2], gc->err);
	}
	if (!rc)
		rc = gb_add(gc, "SplitV", in, 3, &at, 1, &out);
	for (i = 0; !rc && i < n; i++)
		gc->dx[i] = (struct tfk_port){ out.node, i };
	return rc;
}

static int infer_splitv(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *x = &ic->in[0];
	int n = ic->n_out, i, d, len, unk = -1;
	int64_t sizes[64], v[1], a, sum = 0;

	for (i = 0; i < n; i++)
		all_unknown(&ic->out[i], x->rank);
	if (x->rank < 0 || !ic->in_value[2])
		return 0;
	if (x->rank == 0)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: a scalar cannot "
				"be split");
	if (ints_of(ic->in_value[2], v, 1, &len) || len != 1 ||
	    norm_axis(v[0], x->rank, &a, ic->err, "split_dim"))
		return tfk_err_prefix(ic->err, "input 2");
	for (i = 0; i < n; i++)
		for (d = 0; d < x->rank; d++)
			ic->out[i].shape[d] = d == a ? -1 : x->shape[d];
	if (!ic->in_value[1])
		return 0;
	if (n > 64 || ints_of(ic->in_value[1], sizes, 64, &len) || len != n)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: size_splits "
				"must have num_split (%d) values", n);
	for (i = 0; i < n; i++) {
		if (sizes[i] == -1 && unk < 0) {
			unk = i;
			continue;
		}
		if (sizes[i] < 0)
			return tfk_errf(ic->err, TFK_EINVAL, "input 1: bad "
					"size %lld", (long long)sizes[i]);
		sum += sizes[i];
	}
	if (unk >= 0 && x->shape[a] >= 0) {
		if (sum > x->shape[a])
			return tfk_errf(ic->err, TFK_EINVAL, "input 1: sizes "
					"exceed dim %lld", (long long)a);
		sizes[unk] = x->shape[a] - sum;
	} else if (unk < 0 && x->shape[a] >= 0 && sum != x->shape[a]) {
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: sizes add up "
				"to %lld, dim %lld is %lld", (long long)sum,
				(long long)a, (long long)x->shape[a]);
	}
	for (i = 0; i < n; i++)
		ic->out[i].shape[a] = sizes[i];
	return 0;
}

static int k_splitv(struct tfk_kernel_ctx *kc)
{
	int64_t v[1], a;
	int len;

	if (ints_of(kc->in[2], v, 1, &len) || len != 1 ||
	    norm_axis(v[0], kc->in[0]->rank, &a, kc->err, "split_dim"))
		return tfk_errf(kc->err, TFK_EINVAL, "bad split_dim");
	return split_ref(kc->in[0], (int)a, kc->out, kc->n_out, kc->err);
}

/* Gradients of outputs that got none are zeros of their shape. */
static int dys_or_zeros(struct tfk_grad_ctx *gc, int n, struct tfk_port *in)
{
	int i, rc = 0;

	for (i = 0; !rc && i < n; i++) {
		in[i] = gc->dy[i];
		if (in[i].node < 0)
			rc = gb_1(gc, "ZerosLike", (struct tfk_port){
				gc->node_id, i }, &in[i]);
	}
	return rc;
}

/* SplitV: ConcatV2 of the output gradients along split_dim */
static int grad_splitv(struct tfk_grad_ctx *gc)
{
	struct tfk_port in[65];
	int n = gc->node->n_outputs, rc;

	if (n > 64)
		return tfk_errf(gc->err, TFK_EINVAL, "too many outputs");
	rc = dys_or_zeros(gc, n, in);
	in[n] = gc->node->inputs[2];
	return rc ? rc : gb_add(gc, "ConcatV2", in, n + 1, NULL, 0,
				&gc->dx[0]);
}

static int infer_pack(struct tfk_infer_ctx *ic)
{
	int64_t axis = tfk_node_attr_i(ic->node, "axis", 0), a;
	int n = ic->n_in, i, d, r = -1;

	for (i = 0; i < n; i++)
		if (ic->in[i].rank >= 0)
			r = ic->in[i].rank;
	if (r < 0) {
		ic->out[0].rank = -1;
		return 0;
	}
	if (r + 1 > TFK_MAX_RANK ||
	    norm_axis(axis, r + 1, &a, ic->err, "axis"))
		return tfk_errf(ic->err, TFK_EINVAL, "axis %lld out of range "
				"for rank %d", (long long)axis, r + 1);
	all_unknown(&ic->out[0], r + 1);
	ic->out[0].shape[a] = n;
	for (i = 0; i < n; i++) {
		const struct tfk_tdesc *x = &ic->in[i];

		if (x->rank < 0)
			continue;
		if (x->rank != r)
			return tfk_errf(ic->err, TFK_EINVAL, "input %d: rank "
					"%d, others have %d", i, x->rank, r);
		for (d = 0; d < r; d++) {
			int64_t *o = &ic->out[0].shape[d < a ? d : d + 1];

			if (*o < 0)
				*o = x->shape[d];
			else if (x->shape[d] >= 0 && x->shape[d] != *o)
				return tfk_errf(ic->err, TFK_EINVAL, "input "
						"%d: dim %d is %lld, others "
						"%lld", i, d,
						(long long)x->shape[d],
						(long long)*o);
		}
	}
	return 0;
}

/* Pack: concat of the inputs each seen as having a 1 at axis */
static int k_pack(struct tfk_kernel_ctx *kc)
{
	struct tfk_tensor v[64];
	const struct tfk_tensor *p[64];
	int64_t a = tfk_node_attr_i(kc->node, "axis", 0);
	int i, d;

	if (kc->n_in > 64)
		return tfk_errf(kc->err, TFK_EINVAL, "more than 64 inputs");
	if (a < 0)
		a += kc->out[0]->rank;
	for (i = 0; i < kc->n_in; i++) {
		v[i] = *kc->in[i];
		v[i].rank = kc->out[0]->rank;
		for (d = 0; d < v[i].rank; d++)
			v[i].shape[d] = d < a ? kc->in[i]->shape[d] : d == a ?
				1 : kc->in[i]->shape[d - 1];
		p[i] = &v[i];
	}
	return tfk_cpu_concat_ref(p, kc->n_in, (int)a, kc->out[0], kc->err);
}

static int infer_unpack(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *x = &ic->in[0];
	int64_t axis = tfk_node_attr_i(ic->node, "axis", 0), a;
	int i, d;

	if (x->rank < 0) {
		for (i = 0; i < ic->n_out; i++)
			ic->out[i].rank = -1;
		return 0;
	}
	if (x->rank == 0 || norm_axis(axis, x->rank, &a, ic->err, "axis"))
		return tfk_errf(ic->err, TFK_EINVAL, "axis %lld out of range "
				"for rank %d", (long long)axis, x->rank);
	if (x->shape[a] >= 0 && x->shape[a] != ic->n_out)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: dim %lld is "
				"%lld, num is %d", (long long)a,
				(long long)x->shape[a], ic->n_out);
	for (i = 0; i < ic->n_out; i++) {
		ic->out[i].rank = x->rank - 1;
		for (d = 0; d < x->rank - 1; d++)
			ic->out[i].shape[d] = x->shape[d < a ? d : d + 1];
	}
	return 0;
}

static int k_unpack(struct tfk_kernel_ctx *kc)
{
	struct tfk_tensor v[64];
	struct tfk_tensor *p[64];
	int64_t a = tfk_node_attr_i(kc->node, "axis", 0);
	int i, d;

	if (kc->n_out > 64)
		return tfk_errf(kc->err, TFK_EINVAL, "more than 64 outputs");
	if (a < 0)
		a += kc->in[0]->rank;
	for (i = 0; i < kc->n_out; i++) {
		v[i] = *kc->out[i];
		v[i].rank = kc->in[0]->rank;
		for (d = 0; d < v[i].rank; d++)
			v[i].shape[d] = d == a ? 1 : kc->in[0]->shape[d];
		p[i] = &v[i];
	}
	return split_ref(kc->in[0], (int)a, p, kc->n_out, kc->err);
}

/* TF's _PackGrad: Unpack(dy) */
static int grad_pack(struct tfk_grad_ctx *gc)
{
	struct tfk_attr at[2] = {
		TFK_A_INT("num", gc->node->n_inputs),
		TFK_A_INT("axis", tfk_node_attr_i(gc->node, "axis", 0)),
	};
	struct tfk_port out;
	int i, rc = gb_add(gc, "Unpack", &gc->dy[0], 1, at, 2, &out);

	for (i = 0; !rc && i < gc->node->n_inputs; i++)
		gc->dx[i] = (struct tfk_port){ out.node, i };
	return rc;
}

/* TF's _UnpackGrad: Pack(dys) */
static int grad_unpack(struct tfk_grad_ctx *gc)
{
	struct tfk_attr at = TFK_A_INT("axis",
				       tfk_node_attr_i(gc->node, "axis", 0));
	struct tfk_port in[64];
	int n = gc->node->n_outputs, rc;

	if (n > 64)
		return tfk_errf(gc->err, TFK_EINVAL, "too many outputs");
	rc = dys_or_zeros(gc, n, in);
	return rc ? rc : gb_add(gc, "Pack", in, n, &at, 1, &gc->dx[0]);
}

/* Transpose ---------------------------------------------------------------- */

static int perm_of(const struct tfk_tensor *t, int r, int *perm,
		   struct tfk_err *err)
{
	int64_t v[TFK_MAX_RANK];
	unsigned seen = 0;
	int n, i;

	if (ints_of(t, v, TFK_MAX_RANK, &n) || n != r)
		return tfk_errf(err, TFK_EINVAL, "input 1: perm must have %d "
				"values", r);
	for (i = 0; i < r; i++) {
		if (v[i] < 0 || v[i] >= r || ((seen >> v[i]) & 1))
			return tfk_errf(err, TFK_EINVAL, "input 1: perm is not "
					"a permutation of 0..%d", r - 1);
		seen |= 1u << v[i];
		perm[i] = (int)v[i];
	}
	return 0;
}

static int infer_transpose(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *x = &ic->in[0];
	int perm[TFK_MAX_RANK], i, len, rc;
	const struct tfk_tensor *pv = value_or_len(ic, 1, &len);

	if (x->rank >= 0 && len >= 0 && len != x->rank)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: perm of %d, "
				"input has rank %d", len, x->rank);
	if (x->rank < 0 || !pv) {
		all_unknown(&ic->out[0], x->rank >= 0 ? x->rank : len);
		return 0;
	}
	rc = perm_of(pv, x->rank, perm, ic->err);
	if (rc)
		return rc;
	ic->out[0].rank = x->rank;
	for (i = 0; i < x->rank; i++)
		ic->out[0].shape[i] = x->shape[perm[i]];
	return 0;
}

static int k_transpose(struct tfk_kernel_ctx *kc)
{
	int perm[TFK_MAX_RANK];
	int rc = perm_of(kc->in[1], kc->in[0]->rank, perm, kc->err);

	return rc ? rc : tfk_cpu_transpose(kc->in[0], perm, kc->out[0],
					   kc->err);
}

/* TF's _TransposeGrad: Transpose(dy, invert_permutation(perm)) */
static int grad_transpose(struct tfk_grad_ctx *gc)
{
	const struct tfk_tensor *pv = tfk_graph_const_value(
		gc->g, gc->node->inputs[1]);
	int r = gc->node->outputs[0].rank, perm[TFK_MAX_RANK], i, rc;
	int32_t inv[TFK_MAX_RANK];
	struct tfk_port p;

	if (!pv || r < 0 || perm_of(pv, r, perm, gc->err))
		return tfk_errf(gc->err, TFK_EINVAL, "node %s: gradient needs "
				"a Const perm", gc->node->name);
	for (i = 0; i < r; i++)
		inv[perm[i]] = i;
	rc = gb_ints(gc, inv, r, &p);
	return rc ? rc : gb_2(gc, "Transpose", gc->dy[0], p, &gc->dx[0]);
}

/* Fill, BroadcastTo -------------------------------------------------------- */

/* A shape from input k: exact with its value, else rank from its length
 * and dims -1. */
static int shape_input(struct tfk_infer_ctx *ic, int k, struct tfk_tdesc *o)
{
	int64_t v[TFK_MAX_RANK];
	int len, i;
	const struct tfk_tensor *sv = value_or_len(ic, k, &len);

	if (ic->in[k].rank > 1)
		return tfk_errf(ic->err, TFK_EINVAL, "input %d: a shape must "
				"be a vector", k);
	if (len > TFK_MAX_RANK)
		return tfk_errf(ic->err, TFK_EINVAL, "input %d: rank %d, the "
				"most is %d", k, len, TFK_MAX_RANK);
	if (!sv) {
		all_unknown(o, len);
		return 0;
	}
	if (ints_of(sv, v, TFK_MAX_RANK, &len))
		return tfk_errf(ic->err, TFK_EINVAL, "input %d: a shape of at "
				"most %d dims", k, TFK_MAX_RANK);
	for (i = 0; i < len; i++)
		if (v[i] < 0)
			return tfk_errf(ic->err, TFK_EINVAL, "input %d: "
					"negative dim %lld", k,
					(long long)v[i]);
	o->rank = len;
	memcpy(o->shape, v, len * sizeof(v[0]));
	return 0;
}

static int infer_fill(struct tfk_infer_ctx *ic)
{
	if (ic->in[1].rank > 0)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: value must be "
				"a scalar");
	return shape_input(ic, 0, &ic->out[0]);
}

static int k_fill(struct tfk_kernel_ctx *kc)
{
	size_t es = tfk_dtype_size(kc->out[0]->dtype);
	int64_t i, n = tfk_tensor_numel(kc->out[0]);

	for (i = 0; i < n; i++)
		memcpy((char *)kc->out[0]->data + i * es, kc->in[1]->data, es);
	return 0;
}

/* TF's _FillGrad: the value gets the sum of dy */
static int grad_fill(struct tfk_grad_ctx *gc)
{
	const struct tfk_tdesc *d = tfk_graph_desc(gc->g, gc->dy[0]);
	int32_t axes[TFK_MAX_RANK];
	struct tfk_port in[2] = { gc->dy[0] };
	int i, rc;

	if (d->rank < 0)
		return tfk_errf(gc->err, TFK_EINVAL, "node %s: gradient needs "
				"a known rank", gc->node->name);
	for (i = 0; i < d->rank; i++)
		axes[i] = i;
	rc = gb_ints(gc, axes, d->rank, &in[1]);
	return rc ? rc : gb_add(gc, "Sum", in, 2, NULL, 0, &gc->dx[1]);
}

static int infer_broadcast_to(struct tfk_infer_ctx *ic)
{
	int64_t s[TFK_MAX_RANK];
	int r, rc = shape_input(ic, 1, &ic->out[0]);

	if (rc || ic->out[0].rank < 0 || ic->in[0].rank < 0)
		return rc;
	if (ic->in[0].rank > ic->out[0].rank)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: rank %d above "
				"the target's %d", ic->in[0].rank,
				ic->out[0].rank);
	rc = tfk_shape_broadcast(ic->in[0].rank, ic->in[0].shape,
				 ic->out[0].rank, ic->out[0].shape, &r, s,
				 ic->err);
	if (rc)
		return tfk_err_prefix(ic->err, "input 0");
	if (ic->in_value[1] && !tfk_shape_equal(r, s, ic->out[0].rank,
						ic->out[0].shape))
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: cannot "
				"broadcast to the target shape");
	if (!ic->in_value[1])
		memcpy(ic->out[0].shape, s, r * sizeof(s[0]));
	return 0;
}

static int k_broadcast_to(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_broadcast_to_ref(kc->in[0], kc->out[0], kc->err);
}

/* Sum of dy over the broadcast axes (BroadcastGradientArgs of x's shape
 * and the target), reshaped to x's shape */
static int grad_broadcast_to(struct tfk_grad_ctx *gc)
{
	enum tfk_dtype t = tfk_graph_desc(gc->g, gc->node->inputs[1])->dtype;
	struct tfk_attr ot = TFK_A_TYPE("out_type", t);
	struct tfk_attr keep = TFK_A_BOOL("keep_dims", 0);
	struct tfk_port sx, in[2];
	int rc = gb_add(gc, "Shape", &gc->node->inputs[0], 1, &ot, 1, &sx);

	if (!rc)
		rc = gb_2(gc, "BroadcastGradientArgs", sx,
			  gc->node->inputs[1], &in[1]);
	in[0] = gc->dy[0];
	if (!rc)
		rc = gb_add(gc, "Sum", in, 2, &keep, 1, &in[0]);
	return rc ? rc : gb_2(gc, "Reshape", in[0], sx, &gc->dx[0]);
}

/* Tile --------------------------------------------------------------------- */

static int infer_tile(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *x = &ic->in[0];
	int64_t m[TFK_MAX_RANK];
	int len, i;
	const struct tfk_tensor *mv = value_or_len(ic, 1, &len);

	if (x->rank >= 0 && len >= 0 && len != x->rank)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: multiples of "
				"%d, input has rank %d", len, x->rank);
	if (x->rank < 0 || !mv) {
		all_unknown(&ic->out[0], x->rank >= 0 ? x->rank : len);
		return 0;
	}
	if (ints_of(mv, m, TFK_MAX_RANK, &len) || len != x->rank)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: bad multiples");
	ic->out[0].rank = x->rank;
	for (i = 0; i < x->rank; i++) {
		if (m[i] < 0)
			return tfk_errf(ic->err, TFK_EINVAL, "input 1: "
					"negative multiple %lld",
					(long long)m[i]);
		ic->out[0].shape[i] = x->shape[i] < 0 ? -1 :
			x->shape[i] * m[i];
	}
	return 0;
}

static int k_tile(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_tile_ref(kc->in[0], kc->out[0], kc->err);
}

/* TF's _TileGrad: dy reshaped to [m0, x0, m1, x1, ...] and summed over
 * the multiples' axes; needs Const multiples, rank <= 4 and at most one
 * unknown dim of x */
static int grad_tile(struct tfk_grad_ctx *gc)
{
	const struct tfk_tensor *mv = tfk_graph_const_value(
		gc->g, gc->node->inputs[1]);
	const struct tfk_tdesc *x = tfk_graph_desc(gc->g,
						   gc->node->inputs[0]);
	int64_t m[TFK_MAX_RANK];
	int32_t s[TFK_MAX_RANK], axes[TFK_MAX_RANK];
	struct tfk_port in[2];
	int len, i, unk = 0, rc;

	if (!mv || x->rank < 0 || 2 * x->rank > TFK_MAX_RANK ||
	    ints_of(mv, m, TFK_MAX_RANK, &len) || len != x->rank)
		return tfk_errf(gc->err, TFK_EINVAL, "node %s: gradient needs "
				"Const multiples and rank <= %d",
				gc->node->name, TFK_MAX_RANK / 2);
	for (i = 0; i < x->rank; i++) {
		s[2 * i] = (int32_t)m[i];
		s[2 * i + 1] = x->shape[i] < 0 ? -1 : (int32_t)x->shape[i];
		unk += x->shape[i] < 0;
		axes[i] = 2 * i;
	}
	if (unk > 1)
		return tfk_errf(gc->err, TFK_EINVAL, "node %s: gradient needs "
				"at most one unknown dim", gc->node->name);
	rc = gb_ints(gc, s, 2 * x->rank, &in[1]);
	in[0] = gc->dy[0];
	if (!rc)
		rc = gb_add(gc, "Reshape", in, 2, NULL, 0, &in[0]);
	if (!rc)
		rc = gb_ints(gc, axes, x->rank, &in[1]);
	return rc ? rc : gb_add(gc, "Sum", in, 2, NULL, 0, &gc->dx[0]);
}

/* Pad, PadV2 --------------------------------------------------------------- */

static int pads_of(const struct tfk_tensor *t, int r, int64_t *p,
		   struct tfk_err *err)
{
	int64_t i;

	if (t->rank != 2 || t->shape[0] != r || t->shape[1] != 2)
		return tfk_errf(err, TFK_EINVAL, "input 1: paddings must be "
				"[%d, 2]", r);
	for (i = 0; i < 2 * r; i++) {
		p[i] = t->dtype == TFK_DT_INT32 ? ((const int32_t *)t->data)[i]
			: ((const int64_t *)t->data)[i];
		if (p[i] < 0)
			return tfk_errf(err, TFK_EINVAL, "input 1: negative "
					"padding %lld", (long long)p[i]);
	}
	return 0;
}

static int infer_pad(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *x = &ic->in[0];
	int64_t p[2 * TFK_MAX_RANK];
	int i, rc;

	if (ic->n_in == 3 && ic->in[2].rank > 0)
		return tfk_errf(ic->err, TFK_EINVAL, "input 2: "
				"constant_values must be a scalar");
	if (x->rank < 0 || !ic->in_value[1]) {
		all_unknown(&ic->out[0], x->rank);
		return 0;
	}
	rc = pads_of(ic->in_value[1], x->rank, p, ic->err);
	if (rc)
		return rc;
	ic->out[0].rank = x->rank;
	for (i = 0; i < x->rank; i++)
		ic->out[0].shape[i] = x->shape[i] < 0 ? -1 :
			x->shape[i] + p[2 * i] + p[2 * i + 1];
	return 0;
}

static int k_pad(struct tfk_kernel_ctx *kc)
{
	int64_t p[2 * TFK_MAX_RANK];
	double v = 0;
	int rc = pads_of(kc->in[1], kc->in[0]->rank, p, kc->err);

	if (rc)
		return rc;
	if (kc->n_in == 3)
		switch (kc->in[2]->dtype) {
		case TFK_DT_FLOAT: v = *(const float *)kc->in[2]->data; break;
		case TFK_DT_DOUBLE: v = *(const double *)kc->in[2]->data;
			break;
		case TFK_DT_INT32: v = *(const int32_t *)kc->in[2]->data;
			break;
		default: v = (double)*(const int64_t *)kc->in[2]->data; break;
		}
	return tfk_cpu_pad_ref(kc->in[0], p, v, kc->out[0], kc->err);
}

/* TF's _PadGrad: Slice(dy, paddings[:, 0], Shape(x)) (a Const size
 * when every dim is known or, where not, nothing is padded after it, so
 * -1 "to the end" is exact) */
static int grad_pad(struct tfk_grad_ctx *gc)
{
	const struct tfk_tensor *pv = tfk_graph_const_value(
		gc->g, gc->node->inputs[1]);
	const struct tfk_tdesc *x = tfk_graph_desc(gc->g,
						   gc->node->inputs[0]);
	int64_t p[2 * TFK_MAX_RANK];
	int32_t b[TFK_MAX_RANK], s[TFK_MAX_RANK];
	struct tfk_port in[3];
	int i, rc, dyn = 0;

	if (!pv || x->rank < 0 || pads_of(pv, x->rank, p, gc->err))
		return tfk_errf(gc->err, TFK_EINVAL, "node %s: gradient needs "
				"Const paddings and a known rank",
				gc->node->name);
	for (i = 0; i < x->rank; i++) {
		b[i] = (int32_t)p[2 * i];
		s[i] = x->shape[i] < 0 ? -1 : (int32_t)x->shape[i];
		dyn |= x->shape[i] < 0 && p[2 * i + 1];
	}
	in[0] = gc->dy[0];
	rc = gb_ints(gc, b, x->rank, &in[1]);
	if (!rc)
		rc = dyn ? gb_1(gc, "Shape", gc->node->inputs[0], &in[2]) :
			gb_ints(gc, s, x->rank, &in[2]);
	return rc ? rc : gb_add(gc, "Slice", in, 3, NULL, 0, &gc->dx[0]);
}

/* Slice -------------------------------------------------------------------- */

/* begin and size values of a Slice on shape x into b, c (counts). */
static int slice_canon(const int64_t *x, int r, const struct tfk_tensor *bt,
		       const struct tfk_tensor *st, int64_t *b, int64_t *c,
		       struct tfk_err *err)
{
	int64_t sz[TFK_MAX_RANK];
	int nb, ns, i;

	if (ints_of(bt, b, TFK_MAX_RANK, &nb) || nb != r ||
	    ints_of(st, sz, TFK_MAX_RANK, &ns) || ns != r)
		return tfk_errf(err, TFK_EINVAL, "begin and size must have "
				"%d values", r);
	for (i = 0; i < r; i++) {
		if (x[i] < 0) {
			c[i] = sz[i] == -1 ? -1 : sz[i];
			continue;
		}
		c[i] = sz[i] == -1 ? x[i] - b[i] : sz[i];
		if (b[i] < 0 || c[i] < 0 || b[i] + c[i] > x[i])
			return tfk_errf(err, TFK_EINVAL, "dim %d: begin %lld "
					"size %lld outside %lld", i,
					(long long)b[i], (long long)sz[i],
					(long long)x[i]);
	}
	return 0;
}

static int infer_slice(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *x = &ic->in[0];
	int64_t b[TFK_MAX_RANK];
	int rc;

	if (x->rank < 0 || !ic->in_value[1] || !ic->in_value[2]) {
		int len;

		value_or_len(ic, 2, &len);
		all_unknown(&ic->out[0], x->rank >= 0 ? x->rank : len);
		return 0;
	}
	rc = slice_canon(x->shape, x->rank, ic->in_value[1], ic->in_value[2],
			 b, ic->out[0].shape, ic->err);
	ic->out[0].rank = x->rank;
	return rc;
}

static int k_slice(struct tfk_kernel_ctx *kc)
{
	int64_t b[TFK_MAX_RANK], c[TFK_MAX_RANK], s[TFK_MAX_RANK];
	int rc, i;

	rc = slice_canon(kc->in[0]->shape, kc->in[0]->rank, kc->in[1],
			 kc->in[2], b, c, kc->err);
	for (i = 0; i < kc->in[0]->rank; i++)
		s[i] = 1;
	return rc ? rc : tfk_cpu_strided_slice_ref(kc->in[0], b, s,
						   kc->out[0], kc->err);
}

/* TF's _SliceGrad: Pad(dy, [begin, dim - begin - size]); here for Const
 * begin/size and known dims */
static int grad_slice(struct tfk_grad_ctx *gc)
{
	const struct tfk_tdesc *x = tfk_graph_desc(gc->g,
						   gc->node->inputs[0]);
	const struct tfk_tensor *bv = tfk_graph_const_value(
		gc->g, gc->node->inputs[1]);
	const struct tfk_tensor *sv = tfk_graph_const_value(
		gc->g, gc->node->inputs[2]);
	int64_t b[TFK_MAX_RANK], c[TFK_MAX_RANK];
	int32_t p[2 * TFK_MAX_RANK];
	struct tfk_tensor t;
	struct tfk_port in[2];
	int64_t ps[2];
	int i, known = x->rank >= 0;

	for (i = 0; known && i < x->rank; i++)
		known = x->shape[i] >= 0;
	if (!known || !bv || !sv || slice_canon(x->shape, x->rank, bv, sv,
						b, c, gc->err))
		return tfk_errf(gc->err, TFK_EINVAL, "node %s: gradient needs "
				"Const begin and size and known dims",
				gc->node->name);
	for (i = 0; i < x->rank; i++) {
		p[2 * i] = (int32_t)b[i];
		p[2 * i + 1] = (int32_t)(x->shape[i] - b[i] - c[i]);
	}
	ps[0] = x->rank;
	ps[1] = 2;
	tfk_tensor_init_view(&t, TFK_DT_INT32, 2, ps, p, 8 * x->rank,
			     TFK_OWN_BORROWED, NULL);
	in[0] = gc->dy[0];
	i = tfk_graph_const(gc->g, gc->prefix, &t, &in[1], gc->err);
	return i ? i : gb_add(gc, "Pad", in, 2, NULL, 0, &gc->dx[0]);
}

/* StridedSlice, StridedSliceGrad --------------------------------------------- */

/* A strided slice resolved against an input shape (TF's
 * ValidateStridedSliceOp): per input dim the first index, step and
 * count (-1 unknown while building), and the final shape (new axes
 * inserted, shrunk dims removed). */
struct sslice {
	int r;
	int64_t begin[TFK_MAX_RANK], stride[TFK_MAX_RANK],
		count[TFK_MAX_RANK];
	int fr;
	int64_t final[TFK_MAX_RANK];
};

static int ss_canon(const struct tfk_node *nd, const int64_t *x, int xr,
		    const int64_t *bv, const int64_t *ev, const int64_t *sv,
		    int n, struct sslice *o, struct tfk_err *err)
{
	int64_t bm = tfk_node_attr_i(nd, "begin_mask", 0);
	int64_t em = tfk_node_attr_i(nd, "end_mask", 0);
	int64_t elm = tfk_node_attr_i(nd, "ellipsis_mask", 0);
	int64_t nm = tfk_node_attr_i(nd, "new_axis_mask", 0);
	int64_t sm = tfk_node_attr_i(nd, "shrink_axis_mask", 0);
	int i, k = 0, consumed = 0, seen_ellipsis = 0, m;

	for (i = 0; i < n; i++)
		if (!((elm >> i) & 1) && !((nm >> i) & 1))
			consumed++;
	if (elm & (elm - 1))
		return tfk_errf(err, TFK_EINVAL, "more than one ellipsis");
	if (consumed > xr)
		return tfk_errf(err, TFK_EINVAL, "slice of %d dims on a "
				"rank-%d input", consumed, xr);
	o->r = xr;
	o->fr = 0;
	for (i = 0; i <= n; i++) {
		int ell = i < n ? (elm >> i) & 1 : !seen_ellipsis;
		int64_t d, s, b, e, lo, hi;

		if (ell) {
			/* an ellipsis (or the implicit one at the end)
			 * covers the dims no spec names */
			int cover = xr - consumed;

			if (i == n)
				cover = xr - k;
			seen_ellipsis = 1;
			for (m = 0; m < cover; m++, k++) {
				o->begin[k] = 0;
				o->stride[k] = 1;
				o->count[k] = x[k];
				if (o->fr >= TFK_MAX_RANK)
					return tfk_errf(err, TFK_EINVAL,
							"result rank above %d",
							TFK_MAX_RANK);
				o->final[o->fr++] = x[k];
			}
			continue;
		}
		if (i == n)
			break;
		if ((nm >> i) & 1) {
			if (o->fr >= TFK_MAX_RANK)
				return tfk_errf(err, TFK_EINVAL, "result rank "
						"above %d", TFK_MAX_RANK);
			o->final[o->fr++] = 1;
			continue;
		}
		d = x[k];
		s = sv[i];
		if (!s)
			return tfk_errf(err, TFK_EINVAL, "strides[%d] is 0", i);
		if ((sm >> i) & 1) {
			b = bv[i] < 0 && d >= 0 ? bv[i] + d : bv[i];
			if (d >= 0 && (b < 0 || b >= d))
				return tfk_errf(err, TFK_EINVAL, "index %lld "
						"out of range for dim %d of "
						"%lld", (long long)bv[i], k,
						(long long)d);
			o->begin[k] = b;
			o->stride[k] = 1;
			o->count[k++] = 1;
			continue;
		}
		if (d < 0) {
			o->begin[k] = o->stride[k] = 0;
			o->count[k++] = -1;
			o->final[o->fr++] = -1;
			continue;
		}
		lo = s > 0 ? 0 : -1;
		hi = s > 0 ? d : d - 1;
		b = (bm >> i) & 1 ? (s > 0 ? lo : hi) :
			bv[i] < 0 ? bv[i] + d : bv[i];
		e = (em >> i) & 1 ? (s > 0 ? hi : lo) :
			ev[i] < 0 ? ev[i] + d : ev[i];
		b = b < lo ? lo : b > hi ? hi : b;
		e = e < lo ? lo : e > hi ? hi : e;
		o->begin[k] = b;
		o->stride[k] = s;
		o->count[k] = s > 0 ? (e > b ? (e - b + s - 1) / s : 0) :
			(b > e ? (b - e - s - 1) / -s : 0);
		o->final[o->fr++] = o->count[k];
		k++;
	}
	return 0;
}

/* The begin/end/strides values of node inputs 1..3 (from vals). */
static int ss_values(const struct tfk_tensor *const *vals, int64_t *b,
		     int64_t *e, int64_t *s, int *n, struct tfk_err *err)
{
	int nb, ne, ns;

	if (ints_of(vals[0], b, TFK_MAX_RANK, &nb) ||
	    ints_of(vals[1], e, TFK_MAX_RANK, &ne) ||
	    ints_of(vals[2], s, TFK_MAX_RANK, &ns) || nb != ne || nb != ns)
		return tfk_errf(err, TFK_EINVAL, "begin, end and strides must "
				"be vectors of one length <= %d",
				TFK_MAX_RANK);
	*n = nb;
	return 0;
}

static int infer_strided_slice(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *x = &ic->in[0];
	int64_t b[TFK_MAX_RANK], e[TFK_MAX_RANK], s[TFK_MAX_RANK];
	struct sslice ss;
	int n, rc;

	if (x->rank < 0 || !ic->in_value[1] || !ic->in_value[2] ||
	    !ic->in_value[3]) {
		ic->out[0].rank = -1;
		return 0;
	}
	rc = ss_values(ic->in_value + 1, b, e, s, &n, ic->err);
	if (!rc)
		rc = ss_canon(ic->node, x->shape, x->rank, b, e, s, n, &ss,
			      ic->err);
	if (rc)
		return rc;
	ic->out[0].rank = ss.fr;
	memcpy(ic->out[0].shape, ss.final, ss.fr * sizeof(ss.final[0]));
	return 0;
}

static int k_strided_slice(struct tfk_kernel_ctx *kc)
{
	int64_t b[TFK_MAX_RANK], e[TFK_MAX_RANK], s[TFK_MAX_RANK];
	struct tfk_tensor view;
	struct sslice ss;
	int n, rc;

	rc = ss_values(kc->in + 1, b, e, s, &n, kc->err);
	if (!rc)
		rc = ss_canon(kc->node, kc->in[0]->shape, kc->in[0]->rank, b,
			      e, s, n, &ss, kc->err);
	if (rc)
		return rc;
	view = *kc->out[0];
	view.rank = ss.r;
	memcpy(view.shape, ss.count, ss.r * sizeof(ss.count[0]));
	return tfk_cpu_strided_slice_ref(kc->in[0], ss.begin, ss.stride, &view,
					 kc->err);
}

static int infer_strided_slice_grad(struct tfk_infer_ctx *ic)
{
	return shape_input(ic, 0, &ic->out[0]);
}

/* dx: zeros of `shape`, dy written at the slice's positions */
static int k_strided_slice_grad(struct tfk_kernel_ctx *kc)
{
	int64_t b[TFK_MAX_RANK], e[TFK_MAX_RANK], s[TFK_MAX_RANK];
	int64_t xs[TFK_MAX_RANK], vs[TFK_MAX_RANK], off = 0;
	struct tfk_tensor *dx = kc->out[0], view;
	struct sslice ss;
	int n, rc, d;

	rc = ss_values(kc->in + 1, b, e, s, &n, kc->err);
	if (!rc)
		rc = ss_canon(kc->node, dx->shape, dx->rank, b, e, s, n, &ss,
			      kc->err);
	if (rc)
		return rc;
	view = *kc->in[4];
	view.rank = ss.r;
	memcpy(view.shape, ss.count, ss.r * sizeof(ss.count[0]));
	if (tfk_tensor_numel(&view) != tfk_tensor_numel(kc->in[4]))
		return tfk_errf(kc->err, TFK_EINVAL, "dy does not match the "
				"slice");
	memset(dx->data, 0, dx->nbytes);
	strides_of(dx->rank, dx->shape, xs);
	for (d = 0; d < dx->rank; d++) {
		off += ss.begin[d] * xs[d];
		vs[d] = ss.stride[d] * xs[d];
	}
	view_scatter(&view, off, vs, dx);
	return 0;
}

/* TF's _StridedSliceGrad */
static int grad_strided_slice(struct tfk_grad_ctx *gc)
{
	const struct tfk_tdesc *x = tfk_graph_desc(gc->g,
						   gc->node->inputs[0]);
	enum tfk_dtype it = tfk_graph_desc(gc->g, gc->node->inputs[1])->dtype;
	struct tfk_attr at[7];
	struct tfk_port in[5];
	static const char *const masks[5] = { "begin_mask", "end_mask",
		"ellipsis_mask", "new_axis_mask", "shrink_axis_mask" };
	int32_t s[TFK_MAX_RANK];
	int i, rc, known = x->rank >= 0 && it == TFK_DT_INT32;

	for (i = 0; known && i < x->rank; i++) {
		known = x->shape[i] >= 0 && x->shape[i] <= INT32_MAX;
		s[i] = (int32_t)x->shape[i];
	}
	if (known) {
		rc = gb_ints(gc, s, x->rank, &in[0]);
	} else {
		struct tfk_attr ot = TFK_A_TYPE("out_type", it);

		rc = gb_add(gc, "Shape", &gc->node->inputs[0], 1, &ot, 1,
			    &in[0]);
	}
	if (rc)
		return rc;
	for (i = 0; i < 3; i++)
		in[1 + i] = gc->node->inputs[1 + i];
	in[4] = gc->dy[0];
	for (i = 0; i < 5; i++)
		at[i] = TFK_A_INT(masks[i], tfk_node_attr_i(gc->node, masks[i],
							    0));
	return gb_add(gc, "StridedSliceGrad", in, 5, at, 5, &gc->dx[0]);
}

/* Tables ------------------------------------------------------------------- */

#define T_ANY { "T", TFK_ATTR_TYPE }
#define IDX_ATTR(nm) { nm, TFK_ATTR_TYPE, 1, { .type = TFK_DT_INT32 }, INDEX }
#define SS_MASKS							\
	{ "begin_mask", TFK_ATTR_INT, 1, { .i = 0 } },			\
	{ "end_mask", TFK_ATTR_INT, 1, { .i = 0 } },			\
	{ "ellipsis_mask", TFK_ATTR_INT, 1, { .i = 0 } },		\
	{ "new_axis_mask", TFK_ATTR_INT, 1, { .i = 0 } },		\
	{ "shrink_axis_mask", TFK_ATTR_INT, 1, { .i = 0 } }

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
	{
		.name = "ConcatV2",
		.inputs = { { "values", .type_attr = "T", .number_attr = "N" },
			    { "axis", .type_attr = "Tidx" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { { "N", TFK_ATTR_INT }, T_ANY, IDX_ATTR("Tidx") },
		.infer = infer_concat,
		.grad = grad_concat,
	},
	{
		.name = "SplitV",
		.inputs = { { "value", .type_attr = "T" },
			    { "size_splits", .type_attr = "Tlen" },
			    { "split_dim", TFK_DT_INT32 } },
		.outputs = { { "output", .type_attr = "T",
			       .number_attr = "num_split" } },
		.attrs = { { "num_split", TFK_ATTR_INT }, T_ANY,
			   { "Tlen", TFK_ATTR_TYPE, 1,
			     { .type = TFK_DT_INT64 }, INDEX } },
		.infer = infer_splitv,
		.grad = grad_splitv,
	},
	{
		.name = "Pack",
		.inputs = { { "values", .type_attr = "T", .number_attr = "N" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { { "N", TFK_ATTR_INT }, T_ANY,
			   { "axis", TFK_ATTR_INT, 1, { .i = 0 } } },
		.infer = infer_pack,
		.grad = grad_pack,
	},
	{
		.name = "Unpack",
		.inputs = { { "value", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T",
			       .number_attr = "num" } },
		.attrs = { { "num", TFK_ATTR_INT }, T_ANY,
			   { "axis", TFK_ATTR_INT, 1, { .i = 0 } } },
		.infer = infer_unpack,
		.grad = grad_unpack,
	},
	{
		.name = "Transpose",
		.inputs = { { "x", .type_attr = "T" },
			    { "perm", .type_attr = "Tperm" } },
		.outputs = { { "y", .type_attr = "T" } },
		.attrs = { T_ANY, IDX_ATTR("Tperm") },
		.infer = infer_transpose,
		.grad = grad_transpose,
	},
	{
		.name = "Fill",
		.inputs = { { "dims", .type_attr = "index_type" },
			    { "value", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { T_ANY, IDX_ATTR("index_type") },
		.infer = infer_fill,
		.grad = grad_fill,
	},
	{
		.name = "BroadcastTo",
		.inputs = { { "input", .type_attr = "T" },
			    { "shape", .type_attr = "Tidx" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { T_ANY, IDX_ATTR("Tidx") },
		.infer = infer_broadcast_to,
		.grad = grad_broadcast_to,
	},
	{
		.name = "Tile",
		.inputs = { { "input", .type_attr = "T" },
			    { "multiples", .type_attr = "Tmultiples" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { T_ANY, IDX_ATTR("Tmultiples") },
		.infer = infer_tile,
		.grad = grad_tile,
	},
	{
		.name = "Pad",
		.inputs = { { "input", .type_attr = "T" },
			    { "paddings", .type_attr = "Tpaddings" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { T_ANY, IDX_ATTR("Tpaddings") },
		.infer = infer_pad,
		.grad = grad_pad,
	},
	{
		.name = "PadV2",
		.inputs = { { "input", .type_attr = "T" },
			    { "paddings", .type_attr = "Tpaddings" },
			    { "constant_values", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { T_ANY, IDX_ATTR("Tpaddings") },
		.infer = infer_pad,
		.grad = grad_pad,
	},
	{
		.name = "Slice",
		.inputs = { { "input", .type_attr = "T" },
			    { "begin", .type_attr = "Index" },
			    { "size", .type_attr = "Index" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { T_ANY, { "Index", TFK_ATTR_TYPE, 0, { 0 }, INDEX } },
		.infer = infer_slice,
		.grad = grad_slice,
	},
	{
		.name = "StridedSlice",
		.inputs = { { "input", .type_attr = "T" },
			    { "begin", .type_attr = "Index" },
			    { "end", .type_attr = "Index" },
			    { "strides", .type_attr = "Index" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { T_ANY, { "Index", TFK_ATTR_TYPE, 0, { 0 }, INDEX },
			   SS_MASKS },
		.infer = infer_strided_slice,
		.grad = grad_strided_slice,
	},
	{
		.name = "StridedSliceGrad",
		.inputs = { { "shape", .type_attr = "Index" },
			    { "begin", .type_attr = "Index" },
			    { "end", .type_attr = "Index" },
			    { "strides", .type_attr = "Index" },
			    { "dy", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { T_ANY, { "Index", TFK_ATTR_TYPE, 0, { 0 }, INDEX },
			   SS_MASKS },
		.infer = infer_strided_slice_grad,
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
	{ "ConcatV2", "cpu", NULL, k_concat, NULL },
	{ "SplitV", "cpu", NULL, k_splitv, NULL },
	{ "Pack", "cpu", NULL, k_pack, NULL },
	{ "Unpack", "cpu", NULL, k_unpack, NULL },
	{ "Transpose", "cpu", NULL, k_transpose, NULL },
	{ "Fill", "cpu", NULL, k_fill, NULL },
	{ "BroadcastTo", "cpu", NULL, k_broadcast_to, NULL },
	{ "Tile", "cpu", NULL, k_tile, NULL },
	{ "Pad", "cpu", NULL, k_pad, NULL },
	{ "PadV2", "cpu", NULL, k_pad, NULL },
	{ "Slice", "cpu", NULL, k_slice, NULL },
	{ "StridedSlice", "cpu", NULL, k_strided_slice, NULL },
	{ "StridedSliceGrad", "cpu", NULL, k_strided_slice_grad, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
