/*
 * reduce.c - reductions: Sum, Mean, Max, Min, Prod (axes given as an
 * input, keep_dims attr) and ArgMax/ArgMin, with their gradients.
 *
 * The _ref walks every input element, computing the output offset by
 * div/mod per dim, accumulating in double (int64 for integers): slow
 * and plainly right. The fast path first drops dims of size 1 and
 * merges neighbouring dims that are both reduced or both kept, which
 * turns every reduction that training graphs make into one of three
 * loops over contiguous memory: [R] (all), [K, R] (rows: the last
 * axes), [R, K] or [K1, R, K2] (columns: batch or spatial axes, the
 * inner loop over K2 vectorizes). Other patterns (reduced axes
 * interleaved with kept ones) use the _ref. It accumulates in the
 * element type, as TF (Eigen) does, so float sums differ from the _ref
 * by rounding (bound in t-reduce).
 *
 * Gradients follow TF's math_grad.py: Sum and Mean bring dy back to
 * the keep_dims layout (a Reshape to a Const shape, or ExpandDims per
 * reduced axis when more than one dim is unknown) and broadcast it over
 * x with AddV2(ZerosLike(x), .): the add keeps x's build-time shape,
 * where BroadcastTo(., Shape(x)) would know none of its dims until run
 * time. Mean divides by the reduced count, a Const when the reduced
 * dims are known, else Size(x) / Size(y) at run time. Max/Min give dy
 * to every element equal to the extreme, divided by the number of them
 * (TF's _MinOrMaxGrad). Prod has no gradient.
 */
#include "kernels/cpu.h"
#include "graph/graph.h"
#include "kernels/cpu/grad-impl.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define FLOATS (TFK_DT_BIT(TFK_DT_FLOAT) | TFK_DT_BIT(TFK_DT_DOUBLE))
#define NUMBERS (FLOATS | TFK_DT_BIT(TFK_DT_INT32) | TFK_DT_BIT(TFK_DT_INT64))
#define INDEX (TFK_DT_BIT(TFK_DT_INT32) | TFK_DT_BIT(TFK_DT_INT64))

#define NANMAX(x, y) ((x) != (x) ? (x) : (y) != (y) ? (y) : (x) > (y) ? (x) : (y))
#define NANMIN(x, y) ((x) != (x) ? (x) : (y) != (y) ? (y) : (x) < (y) ? (x) : (y))

static int check_reduce(const struct tfk_tensor *x, unsigned mask,
			const struct tfk_tensor *out, struct tfk_err *err)
{
	int d;

	if (out->rank != x->rank || out->dtype != x->dtype ||
	    !(TFK_DT_BIT(x->dtype) & NUMBERS))
		return tfk_errf(err, TFK_EINVAL, "reduce: %s input, %s output",
				tfk_dtype_name(x->dtype),
				tfk_dtype_name(out->dtype));
	for (d = 0; d < x->rank; d++) {
		int64_t want = (mask >> d) & 1 ? 1 : x->shape[d];

		if (out->shape[d] != want)
			return tfk_errf(err, TFK_EINVAL, "reduce: output dim "
					"%d is %lld, want %lld", d,
					(long long)out->shape[d],
					(long long)want);
	}
	return 0;
}

static double ident_f(enum tfk_redop op)
{
	switch (op) {
	case TFK_RED_MAX: return -INFINITY;
	case TFK_RED_MIN: return INFINITY;
	case TFK_RED_PROD: return 1;
	default: return 0;
	}
}

static int64_t ident_i(enum tfk_redop op, enum tfk_dtype t)
{
	switch (op) {
	case TFK_RED_MAX: return t == TFK_DT_INT32 ? INT32_MIN : INT64_MIN;
	case TFK_RED_MIN: return t == TFK_DT_INT32 ? INT32_MAX : INT64_MAX;
	case TFK_RED_PROD: return 1;
	default: return 0;
	}
}

static double step_f(enum tfk_redop op, double a, double v)
{
	switch (op) {
	case TFK_RED_MAX: return NANMAX(a, v);
	case TFK_RED_MIN: return NANMIN(a, v);
	case TFK_RED_PROD: return a * v;
	default: return a + v;
	}
}

/* integers wrap, as TF's (two's complement, done unsigned) */
static int64_t step_i(enum tfk_redop op, int64_t a, int64_t v)
{
	switch (op) {
	case TFK_RED_MAX: return a > v ? a : v;
	case TFK_RED_MIN: return a < v ? a : v;
	case TFK_RED_PROD: return (int64_t)((uint64_t)a * (uint64_t)v);
	default: return (int64_t)((uint64_t)a + (uint64_t)v);
	}
}

int tfk_cpu_reduce_ref(enum tfk_redop op, const struct tfk_tensor *x,
		       unsigned mask, struct tfk_tensor *out,
		       struct tfk_err *err)
{
	int64_t so[TFK_MAX_RANK], s = 1, i, n, m;
	int d, fl = x->dtype == TFK_DT_FLOAT || x->dtype == TFK_DT_DOUBLE;
	int rc = check_reduce(x, mask, out, err);
	double *acc_f;
	int64_t *acc_i;
	struct tfk_tensor acc;

	if (rc)
		return rc;
	for (d = x->rank - 1; d >= 0; d--) {
		so[d] = (mask >> d) & 1 ? 0 : s;
		s *= out->shape[d];
	}
	m = tfk_tensor_numel(out);
	/* accumulators: double or int64 per output element */
	rc = tfk_tensor_init(&acc, fl ? TFK_DT_DOUBLE : TFK_DT_INT64, 1, &m,
			     err);
	if (rc)
		return rc;
	acc_f = acc.data;
	acc_i = acc.data;
	for (i = 0; i < m; i++) {
		if (fl)
			acc_f[i] = ident_f(op);
		else
			acc_i[i] = ident_i(op, x->dtype);
	}
	n = tfk_tensor_numel(x);
	for (i = 0; i < n; i++) {
		int64_t rem = i, o = 0;

		for (d = x->rank - 1; d >= 0; d--) {
			o += (rem % x->shape[d]) * so[d];
			rem /= x->shape[d];
		}
		switch (x->dtype) {
		case TFK_DT_FLOAT:
			acc_f[o] = step_f(op, acc_f[o],
					  ((const float *)x->data)[i]);
			break;
		case TFK_DT_DOUBLE:
			acc_f[o] = step_f(op, acc_f[o],
					  ((const double *)x->data)[i]);
			break;
		case TFK_DT_INT32:
			acc_i[o] = step_i(op, acc_i[o],
					  ((const int32_t *)x->data)[i]);
			break;
		default:
			acc_i[o] = step_i(op, acc_i[o],
					  ((const int64_t *)x->data)[i]);
			break;
		}
	}
	for (i = 0; i < m; i++) {
		int64_t k = m ? n / m : 0;

		switch (x->dtype) {
		case TFK_DT_FLOAT:
			((float *)out->data)[i] = (float)(op == TFK_RED_MEAN ?
				acc_f[i] / (double)k : acc_f[i]);
			break;
		case TFK_DT_DOUBLE:
			((double *)out->data)[i] = op == TFK_RED_MEAN ?
				acc_f[i] / (double)k : acc_f[i];
			break;
		case TFK_DT_INT32:
			((int32_t *)out->data)[i] = (int32_t)(
				op == TFK_RED_MEAN ? (k ? (int32_t)acc_i[i] /
						      k : 0) : acc_i[i]);
			break;
		default:
			((int64_t *)out->data)[i] = op == TFK_RED_MEAN ?
				(k ? acc_i[i] / k : 0) : acc_i[i];
			break;
		}
	}
	tfk_tensor_release(&acc);
	return 0;
}

/* Fast ------------------------------------------------------------------ */

/* x's dims without 1s, neighbours of one kind merged: n dims of sizes
 * sz[] and kinds red[] (1 reduced). */
static int collapse(const struct tfk_tensor *x, unsigned mask, int64_t *sz,
		    int *red)
{
	int d, n = 0;

	for (d = 0; d < x->rank; d++) {
		int r = (mask >> d) & 1;

		if (x->shape[d] == 1)
			continue;
		if (n && red[n - 1] == r) {
			sz[n - 1] *= x->shape[d];
		} else {
			sz[n] = x->shape[d];
			red[n++] = r;
		}
	}
	return n;
}

#define RED_LOOPS(T, IDENT, STEP, FINISH) do {				\
	const T *px = x->data;						\
	T *po = out->data;						\
	int64_t i, j, k, o2;						\
	if (pattern == 0) {		/* [K, R]: rows */		\
		for (i = 0; i < outer; i++) {				\
			T a = IDENT;					\
			for (j = 0; j < r; j++) {			\
				T v = px[i * r + j];			\
				a = STEP;				\
			}						\
			po[i] = a;					\
		}							\
	} else {			/* [K1, R, K2]: columns */	\
		for (i = 0; i < outer; i++) {				\
			T *o = po + i * inner;				\
			for (k = 0; k < inner; k++)			\
				o[k] = IDENT;				\
			for (j = 0; j < r; j++) {			\
				const T *row = px + (i * r + j) * inner; \
				for (o2 = 0; o2 < inner; o2++) {	\
					T a = o[o2], v = row[o2];	\
					o[o2] = STEP;			\
				}					\
			}						\
		}							\
	}								\
	for (i = 0; i < outer * inner; i++) {				\
		T a = po[i];						\
		po[i] = FINISH;						\
	}								\
} while (0)

#define RED_OPS(T, LO, HI, MEAN) do {					\
	switch (op) {							\
	case TFK_RED_SUM: RED_LOOPS(T, 0, a + v, a); break;		\
	case TFK_RED_MEAN: RED_LOOPS(T, 0, a + v, MEAN); break;		\
	case TFK_RED_MAX: RED_LOOPS(T, LO, NANMAX(a, v), a); break;	\
	case TFK_RED_MIN: RED_LOOPS(T, HI, NANMIN(a, v), a); break;	\
	case TFK_RED_PROD: RED_LOOPS(T, 1, a * v, a); break;		\
	}								\
} while (0)

/*
 * float32 Sum over the leading axis of [R, K] (a bias gradient: [N, H,
 * W, C] to [C]): the same additions in the same order as RED_LOOPS'
 * column case, in fixed blocks of columns with restrict so -O2's cheap
 * vectorizer takes them (the generic loop is scalar: it may alias).
 */
static __attribute__((noinline)) void
sum_cols_f32(const float *restrict x, float *restrict o, int64_t r,
	     int64_t k)
{
	int64_t j, c, l;

	memset(o, 0, k * sizeof(*o));
	for (j = 0; j < r; j++, x += k) {
		for (c = 0; c + 16 <= k; c += 16)
			for (l = 0; l < 16; l++)
				o[c + l] += x[c + l];
		for (; c < k; c++)
			o[c] += x[c];
	}
}

int tfk_cpu_reduce(enum tfk_redop op, const struct tfk_tensor *x,
		   unsigned mask, struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t sz[TFK_MAX_RANK], outer = 1, r = 1, inner = 1;
	int red[TFK_MAX_RANK], n, pattern, rc;

	rc = check_reduce(x, mask, out, err);
	if (rc)
		return rc;
	if (!tfk_tensor_numel(x) ||
	    (x->dtype != TFK_DT_FLOAT && x->dtype != TFK_DT_DOUBLE))
		return tfk_cpu_reduce_ref(op, x, mask, out, err);
	n = collapse(x, mask, sz, red);
	if (n == 0 || (n == 1 && !red[0])) {	/* nothing reduced */
		memcpy(out->data, x->data, x->nbytes);
		return 0;
	}
	if (n == 1) {				/* [R] */
		pattern = 0, r = sz[0];
	} else if (n == 2 && !red[0]) {		/* [K, R] */
		pattern = 0, outer = sz[0], r = sz[1];
	} else if (n == 2) {			/* [R, K] */
		pattern = 1, r = sz[0], inner = sz[1];
	} else if (n == 3 && !red[0]) {		/* [K1, R, K2] */
		pattern = 1, outer = sz[0], r = sz[1], inner = sz[2];
	} else {
		return tfk_cpu_reduce_ref(op, x, mask, out, err);
	}
	if (x->dtype == TFK_DT_FLOAT && op == TFK_RED_SUM && pattern == 1 &&
	    inner >= 16 && x->data != out->data) {
		int64_t i;

		for (i = 0; i < outer; i++)
			sum_cols_f32((const float *)x->data + i * r * inner,
				     (float *)out->data + i * inner, r, inner);
	} else if (x->dtype == TFK_DT_FLOAT) {
		float rn = (float)r;

		RED_OPS(float, -INFINITY, INFINITY, a / rn);
	} else {
		double rn = (double)r;

		RED_OPS(double, -INFINITY, INFINITY, a / rn);
	}
	return 0;
}

int tfk_cpu_argmax_ref(const struct tfk_tensor *x, int axis, int min,
		       struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t outer = 1, n, inner = 1, i, j, k;
	int d;

	if (axis < 0 || axis >= x->rank || !(TFK_DT_BIT(x->dtype) & NUMBERS) ||
	    !(TFK_DT_BIT(out->dtype) & INDEX) || out->rank != x->rank - 1)
		return tfk_errf(err, TFK_EINVAL, "argmax: bad operands");
	for (d = 0; d < axis; d++)
		outer *= x->shape[d];
	n = x->shape[axis];
	for (d = axis + 1; d < x->rank; d++)
		inner *= x->shape[d];
	for (i = 0; i < outer; i++)
		for (k = 0; k < inner; k++) {
			int64_t best = 0;

			for (j = 1; j < n; j++) {
				int64_t a = (i * n + best) * inner + k;
				int64_t b = (i * n + j) * inner + k;
				int better;

				switch (x->dtype) {
				case TFK_DT_FLOAT: {
					float va = ((const float *)x->data)[a];
					float vb = ((const float *)x->data)[b];
					better = min ? vb < va : vb > va;
					break;
				}
				case TFK_DT_DOUBLE: {
					double va = ((const double *)x->data)[a];
					double vb = ((const double *)x->data)[b];
					better = min ? vb < va : vb > va;
					break;
				}
				case TFK_DT_INT32: {
					int32_t va = ((const int32_t *)x->data)[a];
					int32_t vb = ((const int32_t *)x->data)[b];
					better = min ? vb < va : vb > va;
					break;
				}
				default: {
					int64_t va = ((const int64_t *)x->data)[a];
					int64_t vb = ((const int64_t *)x->data)[b];
					better = min ? vb < va : vb > va;
					break;
				}
				}
				if (better)
					best = j;
			}
			if (out->dtype == TFK_DT_INT32)
				((int32_t *)out->data)[i * inner + k] =
					(int32_t)best;
			else
				((int64_t *)out->data)[i * inner + k] = best;
		}
	return 0;
}

/* Shape inference ------------------------------------------------------- */

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

/* Reduction axes as a bit mask over rank r (negative axes count from
 * the end, as TF; repeats allowed). */
static int axes_mask(const struct tfk_tensor *axes, int r, unsigned *mask,
		     struct tfk_err *err)
{
	int64_t v[TFK_MAX_RANK * 2];
	int n, i;

	*mask = 0;
	if (ints_of(axes, v, TFK_MAX_RANK * 2, &n))
		return tfk_errf(err, TFK_EINVAL, "input 1: axes must be a "
				"scalar or vector of at most %d",
				TFK_MAX_RANK * 2);
	for (i = 0; i < n; i++) {
		int64_t a = v[i] < 0 ? v[i] + r : v[i];

		if (a < 0 || a >= r)
			return tfk_errf(err, TFK_EINVAL, "input 1: axis %lld "
					"out of range for rank %d",
					(long long)v[i], r);
		*mask |= 1u << a;
	}
	return 0;
}

static int infer_reduce(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *x = &ic->in[0], *ax = &ic->in[1];
	int keep = tfk_node_attr_b(ic->node, "keep_dims", 0), i, r = 0, rc;
	unsigned mask;

	if (ax->rank > 1)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: axes of rank "
				"%d, need a scalar or vector", ax->rank);
	if (x->rank < 0) {
		ic->out[0].rank = -1;
		return 0;
	}
	if (!ic->in_value[1]) {
		/* axes known at run time only: TF's partial shape */
		int64_t n = ax->rank == 0 ? 1 : ax->rank == 1 ?
			ax->shape[0] : -1;

		ic->out[0].rank = keep ? x->rank : n >= 0 && n <= x->rank ?
			x->rank - (int)n : -1;
		for (i = 0; i < ic->out[0].rank; i++)
			ic->out[0].shape[i] = -1;
		return 0;
	}
	rc = axes_mask(ic->in_value[1], x->rank, &mask, ic->err);
	if (rc)
		return rc;
	for (i = 0; i < x->rank; i++) {
		if (!((mask >> i) & 1))
			ic->out[0].shape[r++] = x->shape[i];
		else if (keep)
			ic->out[0].shape[r++] = 1;
	}
	ic->out[0].rank = r;
	return 0;
}

static int infer_argmax(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *x = &ic->in[0];
	int64_t v[1];
	int i, r = 0, n;

	if (ic->in[1].rank > 0 && !(ic->in[1].rank == 1 &&
				    ic->in[1].shape[0] == 1))
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: dimension "
				"must be a scalar");
	if (x->rank == 0)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: a scalar has "
				"no axis");
	if (x->rank < 0) {
		ic->out[0].rank = -1;
		return 0;
	}
	ic->out[0].rank = x->rank - 1;
	if (!ic->in_value[1]) {
		for (i = 0; i < x->rank - 1; i++)
			ic->out[0].shape[i] = -1;
		return 0;
	}
	if (ints_of(ic->in_value[1], v, 1, &n) || n != 1)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: dimension "
				"must be one integer");
	if (v[0] < 0)
		v[0] += x->rank;
	if (v[0] < 0 || v[0] >= x->rank)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: dimension out "
				"of range for rank %d", x->rank);
	for (i = 0; i < x->rank; i++)
		if (i != v[0])
			ic->out[0].shape[r++] = x->shape[i];
	return 0;
}

/* Kernels ---------------------------------------------------------------- */

static int k_reduce(struct tfk_kernel_ctx *kc, enum tfk_redop op)
{
	const struct tfk_tensor *x = kc->in[0];
	struct tfk_tensor view = *kc->out[0];
	unsigned mask;
	int i, rc;

	rc = axes_mask(kc->in[1], x->rank, &mask, kc->err);
	if (rc)
		return rc;
	view.rank = x->rank;
	for (i = 0; i < x->rank; i++)
		view.shape[i] = (mask >> i) & 1 ? 1 : x->shape[i];
	return tfk_cpu_reduce(op, x, mask, &view, kc->err);
}

static int k_sum(struct tfk_kernel_ctx *kc)
{
	return k_reduce(kc, TFK_RED_SUM);
}

static int k_mean(struct tfk_kernel_ctx *kc)
{
	return k_reduce(kc, TFK_RED_MEAN);
}

static int k_max(struct tfk_kernel_ctx *kc)
{
	return k_reduce(kc, TFK_RED_MAX);
}

static int k_min(struct tfk_kernel_ctx *kc)
{
	return k_reduce(kc, TFK_RED_MIN);
}

static int k_prod(struct tfk_kernel_ctx *kc)
{
	return k_reduce(kc, TFK_RED_PROD);
}

static int k_argmax(struct tfk_kernel_ctx *kc)
{
	int64_t v[1];
	int n;

	if (ints_of(kc->in[1], v, 1, &n) || n != 1)
		return tfk_errf(kc->err, TFK_EINVAL, "dimension must be one "
				"integer");
	if (v[0] < 0)
		v[0] += kc->in[0]->rank;
	return tfk_cpu_argmax_ref(kc->in[0], (int)v[0],
				  !strcmp(kc->node->op->name, "ArgMin"),
				  kc->out[0], kc->err);
}

/* Gradients -------------------------------------------------------------- */

/* The reduction mask of node's Const axes over x's rank. */
static int grad_mask(struct tfk_grad_ctx *gc, unsigned *mask)
{
	const struct tfk_tdesc *tx = tfk_graph_desc(gc->g,
						    gc->node->inputs[0]);
	const struct tfk_tensor *axes = tfk_graph_const_value(
		gc->g, gc->node->inputs[1]);

	if (!axes || tx->rank < 0)
		return tfk_errf(gc->err, TFK_EINVAL, "node %s: gradient needs "
				"Const axes and a known rank", gc->node->name);
	return axes_mask(axes, tx->rank, mask, gc->err);
}

/* dy in keep_dims layout: as is, a Reshape to a Const shape (at most
 * one unknown kept dim), or one ExpandDims per reduced axis. */
static int keep_layout(struct tfk_grad_ctx *gc, unsigned mask,
		       struct tfk_port dy, struct tfk_port *out)
{
	const struct tfk_tdesc *tx = tfk_graph_desc(gc->g,
						    gc->node->inputs[0]);
	struct tfk_port s, a;
	int32_t shape[TFK_MAX_RANK];
	int i, rc, unk = 0;

	if (tfk_node_attr_b(gc->node, "keep_dims", 0)) {
		*out = dy;
		return 0;
	}
	for (i = 0; i < tx->rank; i++) {
		shape[i] = (mask >> i) & 1 ? 1 : (int32_t)tx->shape[i];
		unk += shape[i] < 0;
	}
	if (unk <= 1) {
		rc = gb_ints(gc, shape, tx->rank, &s);
		return rc ? rc : gb_2(gc, "Reshape", dy, s, out);
	}
	for (i = 0; i < tx->rank; i++) {
		int32_t ax = i;

		if (!((mask >> i) & 1))
			continue;
		rc = gb_ints(gc, &ax, 1, &a);
		if (!rc)
			rc = gb_2(gc, "ExpandDims", dy, a, &dy);
		if (rc)
			return rc;
	}
	*out = dy;
	return 0;
}

/* kept broadcast over x's shape */
static int spread(struct tfk_grad_ctx *gc, struct tfk_port kept,
		  struct tfk_port *out)
{
	struct tfk_port z;
	int rc = gb_1(gc, "ZerosLike", gc->node->inputs[0], &z);

	return rc ? rc : gb_2(gc, "AddV2", z, kept, out);
}

static int grad_sum(struct tfk_grad_ctx *gc)
{
	struct tfk_port kept;
	unsigned mask;
	int rc = grad_mask(gc, &mask);

	if (!rc)
		rc = keep_layout(gc, mask, gc->dy[0], &kept);
	return rc ? rc : spread(gc, kept, &gc->dx[0]);
}

/* The number of elements each output of the reduction summed, as a
 * scalar of dtype t. */
static int reduced_count(struct tfk_grad_ctx *gc, unsigned mask,
			 enum tfk_dtype t, struct tfk_port *out)
{
	const struct tfk_tdesc *tx = tfk_graph_desc(gc->g,
						    gc->node->inputs[0]);
	struct tfk_port a, b;
	struct tfk_attr to = TFK_A_TYPE("DstT", t);
	double n = 1;
	int i, rc;

	for (i = 0; i < tx->rank; i++)
		if ((mask >> i) & 1) {
			if (tx->shape[i] < 0)
				break;
			n *= (double)tx->shape[i];
		}
	if (i == tx->rank)
		return gb_scalar(gc, t, n, out);
	rc = gb_1(gc, "Size", gc->node->inputs[0], &a);
	if (!rc)
		rc = gb_add(gc, "Cast", &a, 1, &to, 1, &a);
	if (!rc)
		rc = gb_1(gc, "Size", (struct tfk_port){ gc->node_id, 0 }, &b);
	if (!rc)
		rc = gb_add(gc, "Cast", &b, 1, &to, 1, &b);
	return rc ? rc : gb_2(gc, "RealDiv", a, b, out);
}

static int grad_mean(struct tfk_grad_ctx *gc)
{
	enum tfk_dtype t = gc->node->outputs[0].dtype;
	struct tfk_port kept, cnt;
	unsigned mask;
	int rc;

	if (t != TFK_DT_FLOAT && t != TFK_DT_DOUBLE)
		return 0;
	rc = grad_mask(gc, &mask);
	if (!rc)
		rc = reduced_count(gc, mask, t, &cnt);
	if (!rc)
		rc = gb_2(gc, "RealDiv", gc->dy[0], cnt, &kept);
	if (!rc)
		rc = keep_layout(gc, mask, kept, &kept);
	return rc ? rc : spread(gc, kept, &gc->dx[0]);
}

/* TF's _MinOrMaxGrad: indicators = (x == y), dx = indicators / (their
 * count per output) * dy. */
static int grad_maxmin(struct tfk_grad_ctx *gc)
{
	enum tfk_dtype t = gc->node->outputs[0].dtype;
	struct tfk_attr to = TFK_A_TYPE("DstT", t);
	struct tfk_attr keep = TFK_A_BOOL("keep_dims", 1);
	struct tfk_port y, dy, ind, in[2], cnt;
	unsigned mask;
	int rc;

	if (t != TFK_DT_FLOAT && t != TFK_DT_DOUBLE)
		return 0;
	rc = grad_mask(gc, &mask);
	if (!rc)
		rc = keep_layout(gc, mask, (struct tfk_port){ gc->node_id, 0 },
				 &y);
	if (!rc)
		rc = keep_layout(gc, mask, gc->dy[0], &dy);
	if (!rc)
		rc = gb_2(gc, "Equal", y, gc->node->inputs[0], &ind);
	if (!rc)
		rc = gb_add(gc, "Cast", &ind, 1, &to, 1, &ind);
	in[0] = ind, in[1] = gc->node->inputs[1];
	if (!rc)
		rc = gb_add(gc, "Sum", in, 2, &keep, 1, &cnt);
	if (!rc)
		rc = gb_2(gc, "RealDiv", ind, cnt, &ind);
	return rc ? rc : gb_2(gc, "Mul", ind, dy, &gc->dx[0]);
}

/* Tables ----------------------------------------------------------------- */

#define REDUCE(nm, allowed, g) {					\
	.name = nm,							\
	.inputs = { { "input", .type_attr = "T" },			\
		    { "reduction_indices", .type_attr = "Tidx" } },	\
	.outputs = { { "output", .type_attr = "T" } },			\
	.attrs = {							\
		{ "keep_dims", TFK_ATTR_BOOL, 1, { .b = 0 } },		\
		{ "T", TFK_ATTR_TYPE, 0, { 0 }, (allowed) },		\
		{ "Tidx", TFK_ATTR_TYPE, 1, { .type = TFK_DT_INT32 }, INDEX }, \
	},								\
	.infer = infer_reduce,						\
	.grad = g,							\
}
#define ARGMAX(nm) {							\
	.name = nm,							\
	.inputs = { { "input", .type_attr = "T" },			\
		    { "dimension", .type_attr = "Tidx" } },		\
	.outputs = { { "output", .type_attr = "output_type" } },	\
	.attrs = {							\
		{ "T", TFK_ATTR_TYPE, 0, { 0 }, NUMBERS },		\
		{ "Tidx", TFK_ATTR_TYPE, 1, { .type = TFK_DT_INT32 }, INDEX }, \
		{ "output_type", TFK_ATTR_TYPE, 1,			\
		  { .type = TFK_DT_INT64 }, INDEX },			\
	},								\
	.infer = infer_argmax,						\
}

const struct tfk_op_def tfk_ops_reduce[] = {
	REDUCE("Sum", NUMBERS, grad_sum),
	REDUCE("Mean", NUMBERS, grad_mean),
	REDUCE("Max", NUMBERS, grad_maxmin),
	REDUCE("Min", NUMBERS, grad_maxmin),
	REDUCE("Prod", NUMBERS, NULL),
	ARGMAX("ArgMax"),
	ARGMAX("ArgMin"),
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_reduce[] = {
	{ "Sum", "cpu", NULL, k_sum, NULL },
	{ "Mean", "cpu", NULL, k_mean, NULL },
	{ "Max", "cpu", NULL, k_max, NULL },
	{ "Min", "cpu", NULL, k_min, NULL },
	{ "Prod", "cpu", NULL, k_prod, NULL },
	{ "ArgMax", "cpu", NULL, k_argmax, NULL },
	{ "ArgMin", "cpu", NULL, k_argmax, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
