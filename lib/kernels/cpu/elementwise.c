/*
 * elementwise.c - elementwise ops with numpy broadcasting (arithmetic,
 * Pow, SquaredDifference, comparisons, LogicalAnd, SelectV2), unary
 * math and activations and TF's XGrad ops for them (SigmoidGrad,
 * TanhGrad, SqrtGrad, RsqrtGrad, ReluGrad), Cast, BiasAdd, Softmax,
 * Identity, Reshape and ZerosLike, with gradients as TF's math_grad.py.
 *
 * Broadcasting: the _ref computes every output index's coordinates and
 * each operand's offset from them (div/mod per dim per element: slow
 * and obviously right). The fast path walks the output row by row: the
 * last dimension is an inner loop whose operand strides are 0 or 1, so
 * same-shape, scalar and bias-like (row vector) operands each get a
 * loop the compiler vectorizes, with the op chosen outside the loop
 * (a switch per element costs more than the arithmetic). Dimensions are
 * not collapsed: the outer loop runs once per row, cheap next to a row.
 *
 * Integer Add/Sub/Mul wrap (two's complement) as TensorFlow's do; the
 * arithmetic is done in unsigned types because signed overflow is
 * undefined in C.
 *
 * The float fast paths of the new binary ops (Pow, SquaredDifference,
 * the XGrads) compute in double and round once, as the _ref does, so
 * fast == _ref bit for bit for every binary op; comparisons and
 * SelectV2 have fast loops for same-shape and scalar operands only.
 *
 * Gradients of broadcasting ops reduce dy back to the input's shape with
 * Sum: leading axes the input lacks (keep_dims false), then axes where
 * the input has 1 (keep_dims true) - TF's BroadcastGradientArgs done at
 * build time, as the shapes are static but for the batch dimension; when
 * a build-time shape leaves it open, the run-time form (see
 * reduce_like).
 */
#include "kernels/cpu.h"
#include "graph/graph.h"
#include "util/alloc.h"
#include "kernels/cpu/grad-impl.h"
#include "kernels/cpu/infer-impl.h"
#include "util/pool.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define FLOATS (TFK_DT_BIT(TFK_DT_FLOAT) | TFK_DT_BIT(TFK_DT_DOUBLE))
#define NUMBERS (FLOATS | TFK_DT_BIT(TFK_DT_INT32) | TFK_DT_BIT(TFK_DT_INT64))
#define CASTABLE (NUMBERS | TFK_DT_BIT(TFK_DT_INT16) | \
		  TFK_DT_BIT(TFK_DT_INT8) | TFK_DT_BIT(TFK_DT_UINT8) | \
		  TFK_DT_BIT(TFK_DT_BOOL))
#define INDEX (TFK_DT_BIT(TFK_DT_INT32) | TFK_DT_BIT(TFK_DT_INT64))

/* Shapes ---------------------------------------------------------------- */

int tfk_shape_broadcast(int ra, const int64_t *a, int rb, const int64_t *b,
			int *rout, int64_t *out, struct tfk_err *err)
{
	int r = ra > rb ? ra : rb, i;
	char b1[128], b2[128];

	if (ra < 0 || rb < 0) {
		*rout = -1;
		return 0;
	}
	for (i = 0; i < r; i++) {
		int64_t x = i < r - ra ? 1 : a[i - (r - ra)];
		int64_t y = i < r - rb ? 1 : b[i - (r - rb)];

		if (x == y)
			out[i] = x;
		else if (x == 1)
			out[i] = y;
		else if (y == 1)
			out[i] = x;
		else if (x < 0)
			out[i] = y;
		else if (y < 0)
			out[i] = x;
		else
			return tfk_errf(err, TFK_EINVAL, "shapes %s and %s do "
					"not broadcast (dim %d: %lld vs %lld)",
					tfk_shape_str(ra, a, b1, sizeof(b1)),
					tfk_shape_str(rb, b, b2, sizeof(b2)), i,
					(long long)x, (long long)y);
	}
	*rout = r;
	return 0;
}

/* Operand strides (in elements) aligned to out's rank: 0 where the
 * operand is broadcast. */
static void bstrides(const struct tfk_tensor *t, int r, int64_t *st)
{
	int64_t s = 1;
	int i, k;

	for (i = r - 1; i >= 0; i--) {
		k = i - (r - t->rank);
		if (k < 0 || t->shape[k] == 1) {
			st[i] = 0;
		} else {
			st[i] = s;
		}
		if (k >= 0)
			s *= t->shape[k];
	}
}

static int check_binary(enum tfk_binop op, const struct tfk_tensor *a,
			const struct tfk_tensor *b,
			const struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t shape[TFK_MAX_RANK];
	char b1[128], b2[128];
	int r, rc;

	if (a->dtype != b->dtype || a->dtype != out->dtype)
		return tfk_errf(err, TFK_EINVAL, "dtypes %s, %s -> %s differ",
				tfk_dtype_name(a->dtype),
				tfk_dtype_name(b->dtype),
				tfk_dtype_name(out->dtype));
	if (!(TFK_DT_BIT(a->dtype) & (op == TFK_BIN_DIV || op >= TFK_BIN_POW ?
				      FLOATS : NUMBERS)))
		return tfk_errf(err, TFK_EINVAL, "binary op on %s",
				tfk_dtype_name(a->dtype));
	rc = tfk_shape_broadcast(a->rank, a->shape, b->rank, b->shape, &r,
				 shape, err);
	if (rc)
		return rc;
	if (!tfk_shape_equal(r, shape, out->rank, out->shape))
		return tfk_errf(err, TFK_EINVAL, "output shape %s, want %s",
				tfk_shape_str(out->rank, out->shape, b1,
					      sizeof(b1)),
				tfk_shape_str(r, shape, b2, sizeof(b2)));
	return 0;
}

/* Binary _ref ----------------------------------------------------------- */

#define NANMAX(x, y) ((x) != (x) ? (x) : (y) != (y) ? (y) : (x) > (y) ? (x) : (y))
#define NANMIN(x, y) ((x) != (x) ? (x) : (y) != (y) ? (y) : (x) < (y) ? (x) : (y))

static double bin_f(enum tfk_binop op, double x, double y)
{
	switch (op) {
	case TFK_BIN_ADD: return x + y;
	case TFK_BIN_SUB: return x - y;
	case TFK_BIN_MUL: return x * y;
	case TFK_BIN_DIV: return x / y;
	case TFK_BIN_MAX: return NANMAX(x, y);
	case TFK_BIN_MIN: return NANMIN(x, y);
	case TFK_BIN_POW: return pow(x, y);
	case TFK_BIN_SQDIFF: return (x - y) * (x - y);
	case TFK_BIN_SIGMOID_GRAD: return y * x * (1 - x);
	case TFK_BIN_TANH_GRAD: return y * (1 - x * x);
	case TFK_BIN_SQRT_GRAD: return y * 0.5 / x;
	case TFK_BIN_RSQRT_GRAD: return y * -0.5 * x * x * x;
	}
	return 0;
}

static uint64_t bin_i(enum tfk_binop op, int64_t x, int64_t y)
{
	switch (op) {
	case TFK_BIN_ADD: return (uint64_t)x + (uint64_t)y;
	case TFK_BIN_SUB: return (uint64_t)x - (uint64_t)y;
	case TFK_BIN_MUL: return (uint64_t)x * (uint64_t)y;
	case TFK_BIN_MAX: return (uint64_t)(x > y ? x : y);
	case TFK_BIN_MIN: return (uint64_t)(x < y ? x : y);
	default: break;
	}
	return 0;
}

int tfk_cpu_binary_ref(enum tfk_binop op, const struct tfk_tensor *a,
		       const struct tfk_tensor *b, struct tfk_tensor *out,
		       struct tfk_err *err)
{
	int64_t sa[TFK_MAX_RANK], sb[TFK_MAX_RANK], i, n;
	int r = out->rank, d, rc;

	rc = check_binary(op, a, b, out, err);
	if (rc)
		return rc;
	bstrides(a, r, sa);
	bstrides(b, r, sb);
	n = tfk_tensor_numel(out);
	for (i = 0; i < n; i++) {
		int64_t rem = i, oa = 0, ob = 0;

		for (d = r - 1; d >= 0; d--) {
			int64_t c = rem % out->shape[d];

			rem /= out->shape[d];
			oa += c * sa[d];
			ob += c * sb[d];
		}
		switch (out->dtype) {
		case TFK_DT_FLOAT:
			((float *)out->data)[i] = (float)bin_f(op,
				((const float *)a->data)[oa],
				((const float *)b->data)[ob]);
			break;
		case TFK_DT_DOUBLE:
			((double *)out->data)[i] = bin_f(op,
				((const double *)a->data)[oa],
				((const double *)b->data)[ob]);
			break;
		case TFK_DT_INT32:
			((int32_t *)out->data)[i] = (int32_t)(uint32_t)bin_i(op,
				((const int32_t *)a->data)[oa],
				((const int32_t *)b->data)[ob]);
			break;
		default:
			((int64_t *)out->data)[i] = (int64_t)bin_i(op,
				((const int64_t *)a->data)[oa],
				((const int64_t *)b->data)[ob]);
			break;
		}
	}
	return 0;
}

/* Binary fast ----------------------------------------------------------- */

/* One row: o[j] = EXPR(x = a[j * sa], y = b[j * sb]) for sa, sb in {0, 1},
 * each stride pattern its own loop so each vectorizes. */
#define ROW(T, EXPR) do {						\
	const T *pa = va, *pb = vb;					\
	T *po = vo;							\
	int64_t j;							\
	if (sa && sb)							\
		for (j = 0; j < n; j++) {				\
			T x = pa[j], y = pb[j];				\
			po[j] = (EXPR);					\
		}							\
	else if (sa)							\
		for (j = 0; j < n; j++) {				\
			T x = pa[j], y = pb[0];				\
			po[j] = (EXPR);					\
		}							\
	else if (sb)							\
		for (j = 0; j < n; j++) {				\
			T x = pa[0], y = pb[j];				\
			po[j] = (EXPR);					\
		}							\
	else								\
		for (j = 0; j < n; j++) {				\
			T x = pa[0], y = pb[0];				\
			po[j] = (EXPR);					\
		}							\
} while (0)

#define ROW_OPS_F(T) do {						\
	switch (op) {							\
	case TFK_BIN_ADD: ROW(T, x + y); break;				\
	case TFK_BIN_SUB: ROW(T, x - y); break;				\
	case TFK_BIN_MUL: ROW(T, x * y); break;				\
	case TFK_BIN_DIV: ROW(T, x / y); break;				\
	case TFK_BIN_MAX: ROW(T, NANMAX(x, y)); break;			\
	case TFK_BIN_MIN: ROW(T, NANMIN(x, y)); break;			\
	case TFK_BIN_POW: ROW(T, (T)pow(x, y)); break;			\
	case TFK_BIN_SQDIFF: ROW(T, (T)(((double)x - y) * ((double)x - y))); \
		break;							\
	case TFK_BIN_SIGMOID_GRAD: ROW(T, (T)((double)y * x * (1 - (double)x))); \
		break;							\
	case TFK_BIN_TANH_GRAD: ROW(T, (T)((double)y * (1 - (double)x * x))); \
		break;							\
	case TFK_BIN_SQRT_GRAD: ROW(T, (T)((double)y * 0.5 / x)); break; \
	case TFK_BIN_RSQRT_GRAD: ROW(T, (T)((double)y * -0.5 * x * x * x)); \
		break;							\
	}								\
} while (0)

#define ROW_OPS_I(T, U) do {						\
	switch (op) {							\
	case TFK_BIN_ADD: ROW(T, (T)((U)x + (U)y)); break;		\
	case TFK_BIN_SUB: ROW(T, (T)((U)x - (U)y)); break;		\
	case TFK_BIN_MUL: ROW(T, (T)((U)x * (U)y)); break;		\
	case TFK_BIN_MAX: ROW(T, x > y ? x : y); break;			\
	case TFK_BIN_MIN: ROW(T, x < y ? x : y); break;			\
	default: break;							\
	}								\
} while (0)

static void bin_row(enum tfk_binop op, enum tfk_dtype t, int64_t n,
		    const void *va, int sa, const void *vb, int sb, void *vo)
{
	switch (t) {
	case TFK_DT_FLOAT: ROW_OPS_F(float); break;
	case TFK_DT_DOUBLE: ROW_OPS_F(double); break;
	case TFK_DT_INT32: ROW_OPS_I(int32_t, uint32_t); break;
	default: ROW_OPS_I(int64_t, uint64_t); break;
	}
}

int tfk_cpu_binary(enum tfk_binop op, const struct tfk_tensor *a,
		   const struct tfk_tensor *b, struct tfk_tensor *out,
		   struct tfk_err *err)
{
	int64_t sa[TFK_MAX_RANK], sb[TFK_MAX_RANK], idx[TFK_MAX_RANK] = { 0 };
	int64_t rows, row, oa = 0, ob = 0, inner;
	size_t es = tfk_dtype_size(out->dtype);
	const char *pa = a->data, *pb = b->data;
	char *po = out->data;
	int r = out->rank, d, rc;

	rc = check_binary(op, a, b, out, err);
	if (rc)
		return rc;
	if (!tfk_tensor_numel(out))
		return 0;
	if (tfk_shape_equal(a->rank, a->shape, b->rank, b->shape) ||
	    tfk_tensor_numel(a) == 1 || tfk_tensor_numel(b) == 1) {
		bin_row(op, out->dtype, tfk_tensor_numel(out), pa,
			tfk_tensor_numel(a) != 1, pb, tfk_tensor_numel(b) != 1,
			po);
		return 0;
	}
	bstrides(a, r, sa);
	bstrides(b, r, sb);
	inner = out->shape[r - 1];
	rows = tfk_tensor_numel(out) / inner;
	for (row = 0; row < rows; row++) {
		bin_row(op, out->dtype, inner, pa + oa * es, sa[r - 1] != 0,
			pb + ob * es, sb[r - 1] != 0, po + row * inner * es);
		/* odometer over the outer dims */
		for (d = r - 2; d >= 0; d--) {
			idx[d]++;
			oa += sa[d];
			ob += sb[d];
			if (idx[d] < out->shape[d])
				break;
			oa -= sa[d] * idx[d];
			ob -= sb[d] * idx[d];
			idx[d] = 0;
		}
	}
	return 0;
}

/* Unary ----------------------------------------------------------------- */

static int check_unary(const struct tfk_tensor *x, const struct tfk_tensor *o,
		       struct tfk_err *err)
{
	if (!(TFK_DT_BIT(x->dtype) & FLOATS) || x->dtype != o->dtype ||
	    !tfk_shape_equal(x->rank, x->shape, o->rank, o->shape))
		return tfk_errf(err, TFK_EINVAL, "unary op: %s input, %s "
				"output", tfk_dtype_name(x->dtype),
				tfk_dtype_name(o->dtype));
	return 0;
}

static double un_f(enum tfk_unop op, double x)
{
	switch (op) {
	case TFK_UN_RELU: return x > 0 ? x : x != x ? x : 0;
	case TFK_UN_SIGMOID: return 1 / (1 + exp(-x));
	case TFK_UN_TANH: return tanh(x);
	case TFK_UN_NEG: return -x;
	case TFK_UN_ABS: return fabs(x);
	case TFK_UN_SQUARE: return x * x;
	case TFK_UN_SQRT: return sqrt(x);
	case TFK_UN_RSQRT: return 1 / sqrt(x);
	case TFK_UN_EXP: return exp(x);
	case TFK_UN_LOG: return log(x);
	case TFK_UN_LOG1P: return log1p(x);
	case TFK_UN_SIGN: return x > 0 ? 1 : x < 0 ? -1 : x;
	case TFK_UN_FLOOR: return floor(x);
	}
	return 0;
}

int tfk_cpu_unary_ref(enum tfk_unop op, const struct tfk_tensor *x,
		      struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t i, n = tfk_tensor_numel(x);
	int rc = check_unary(x, out, err);

	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		if (x->dtype == TFK_DT_FLOAT)
			((float *)out->data)[i] = (float)un_f(op,
				((const float *)x->data)[i]);
		else
			((double *)out->data)[i] = un_f(op,
				((const double *)x->data)[i]);
	}
	return 0;
}

/*
 * Relu and ReluGrad are a third of a small CNN's step when written as a
 * branch per element (random signs: half the branches mispredict). In
 * blocks of a fixed length with restrict (as feed.c's u8_mul) -O2's
 * cheap vectorizer turns the select into compare-and-mask, 10x faster;
 * NaN passes through (v != v) as in the _ref.
 */
#define EW_BLK 16

static __attribute__((noinline)) void
relu_f32(int64_t n, const float *restrict x, float *restrict o)
{
	int64_t i, k;

	for (i = 0; i + EW_BLK <= n; i += EW_BLK)
		for (k = 0; k < EW_BLK; k++) {
			float v = x[i + k];

			o[i + k] = v > 0 || v != v ? v : 0;
		}
	for (; i < n; i++)
		o[i] = x[i] > 0 || x[i] != x[i] ? x[i] : 0;
}

static __attribute__((noinline)) void
relu_grad_f32(int64_t n, const float *restrict g, const float *restrict f,
	      float *restrict o)
{
	int64_t i, k;

	/* both loads unconditional: a load under the condition is not
	 * if-converted */
	for (i = 0; i + EW_BLK <= n; i += EW_BLK)
		for (k = 0; k < EW_BLK; k++) {
			float gv = g[i + k], fv = f[i + k];

			o[i + k] = fv > 0 ? gv : 0;
		}
	for (; i < n; i++)
		o[i] = f[i] > 0 ? g[i] : 0;
}

/* float32 in float arithmetic (the _ref goes through double) */
static void unary_f32(enum tfk_unop op, int64_t n, const float *x, float *o)
{
	int64_t i;

	switch (op) {
	case TFK_UN_RELU:
		if (x == o) {	/* in place: restrict does not hold */
			for (i = 0; i < n; i++)
				o[i] = x[i] > 0 || x[i] != x[i] ? x[i] : 0;
			break;
		}
		relu_f32(n, x, o);
		break;
	case TFK_UN_SIGMOID:
		for (i = 0; i < n; i++)
			o[i] = 1 / (1 + expf(-x[i]));
		break;
	case TFK_UN_TANH:
		for (i = 0; i < n; i++)
			o[i] = tanhf(x[i]);
		break;
	case TFK_UN_NEG:
		for (i = 0; i < n; i++)
			o[i] = -x[i];
		break;
	case TFK_UN_ABS:
		for (i = 0; i < n; i++)
			o[i] = fabsf(x[i]);
		break;
	case TFK_UN_SQUARE:
		for (i = 0; i < n; i++)
			o[i] = x[i] * x[i];
		break;
	case TFK_UN_SQRT:
		for (i = 0; i < n; i++)
			o[i] = sqrtf(x[i]);
		break;
	case TFK_UN_RSQRT:
		for (i = 0; i < n; i++)
			o[i] = 1 / sqrtf(x[i]);
		break;
	case TFK_UN_EXP:
		for (i = 0; i < n; i++)
			o[i] = expf(x[i]);
		break;
	case TFK_UN_LOG:
		for (i = 0; i < n; i++)
			o[i] = logf(x[i]);
		break;
	case TFK_UN_LOG1P:
		for (i = 0; i < n; i++)
			o[i] = log1pf(x[i]);
		break;
	case TFK_UN_SIGN:
		for (i = 0; i < n; i++)
			o[i] = x[i] > 0 ? 1 : x[i] < 0 ? -1 : x[i];
		break;
	case TFK_UN_FLOOR:
		for (i = 0; i < n; i++)
			o[i] = floorf(x[i]);
		break;
	}
}

int tfk_cpu_unary(enum tfk_unop op, const struct tfk_tensor *x,
		  struct tfk_tensor *out, struct tfk_err *err)
{
	int rc = check_unary(x, out, err);

	if (rc)
		return rc;
	if (x->dtype == TFK_DT_FLOAT) {
		unary_f32(op, tfk_tensor_numel(x), x->data, out->data);
		return 0;
	}
	return tfk_cpu_unary_ref(op, x, out, err);
}

int tfk_cpu_relu_grad_ref(const struct tfk_tensor *dy,
			  const struct tfk_tensor *x, struct tfk_tensor *out,
			  struct tfk_err *err)
{
	int64_t i, n = tfk_tensor_numel(x);
	int rc = check_unary(x, out, err);

	if (!rc)
		rc = check_unary(dy, out, err);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		if (x->dtype == TFK_DT_FLOAT)
			((float *)out->data)[i] =
				((const float *)x->data)[i] > 0 ?
				((const float *)dy->data)[i] : 0;
		else
			((double *)out->data)[i] =
				((const double *)x->data)[i] > 0 ?
				((const double *)dy->data)[i] : 0;
	}
	return 0;
}

/* Cast ------------------------------------------------------------------ */

static int is_float(enum tfk_dtype t)
{
	return t == TFK_DT_FLOAT || t == TFK_DT_DOUBLE;
}

static double get_f(const void *p, enum tfk_dtype t, int64_t i)
{
	return t == TFK_DT_FLOAT ? ((const float *)p)[i] :
		((const double *)p)[i];
}

static int64_t get_i(const void *p, enum tfk_dtype t, int64_t i)
{
	switch (t) {
	case TFK_DT_INT32: return ((const int32_t *)p)[i];
	case TFK_DT_INT64: return ((const int64_t *)p)[i];
	case TFK_DT_INT16: return ((const int16_t *)p)[i];
	case TFK_DT_INT8: return ((const int8_t *)p)[i];
	case TFK_DT_UINT8: return ((const uint8_t *)p)[i];
	default: return ((const uint8_t *)p)[i] != 0;	/* BOOL */
	}
}

/* Range of an integer dtype, for saturation. */
static void int_range(enum tfk_dtype t, double *lo, double *hi)
{
	switch (t) {
	case TFK_DT_INT32: *lo = INT32_MIN; *hi = INT32_MAX; break;
	case TFK_DT_INT16: *lo = INT16_MIN; *hi = INT16_MAX; break;
	case TFK_DT_INT8: *lo = INT8_MIN; *hi = INT8_MAX; break;
	case TFK_DT_UINT8: *lo = 0; *hi = UINT8_MAX; break;
	default: *lo = -9223372036854775808.0; *hi = 9223372036854775807.0;
	}
}

static void put_i(void *p, enum tfk_dtype t, int64_t i, int64_t v)
{
	switch (t) {
	case TFK_DT_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
	case TFK_DT_INT64: ((int64_t *)p)[i] = v; break;
	case TFK_DT_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
	case TFK_DT_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
	case TFK_DT_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	default: ((uint8_t *)p)[i] = v != 0; break;
	}
}

int tfk_cpu_cast_ref(const struct tfk_tensor *x, struct tfk_tensor *out,
		     struct tfk_err *err)
{
	enum tfk_dtype s = x->dtype, d = out->dtype;
	int64_t i, n = tfk_tensor_numel(x);

	if (!(TFK_DT_BIT(s) & CASTABLE) || !(TFK_DT_BIT(d) & CASTABLE) ||
	    !tfk_shape_equal(x->rank, x->shape, out->rank, out->shape))
		return tfk_errf(err, TFK_EINVAL, "cannot cast %s to %s",
				tfk_dtype_name(s), tfk_dtype_name(d));
	for (i = 0; i < n; i++) {
		if (is_float(d)) {
			double v = is_float(s) ? get_f(x->data, s, i) :
				(double)get_i(x->data, s, i);

			if (d == TFK_DT_FLOAT)
				((float *)out->data)[i] = (float)v;
			else
				((double *)out->data)[i] = v;
		} else if (d == TFK_DT_BOOL) {
			((uint8_t *)out->data)[i] = is_float(s) ?
				get_f(x->data, s, i) != 0 :
				get_i(x->data, s, i) != 0;
		} else if (is_float(s)) {
			double v = trunc(get_f(x->data, s, i)), lo, hi;

			int_range(d, &lo, &hi);
			if (v != v)
				v = 0;
			/* hi of int64 rounds up to 2^63: compare >= */
			if (v >= hi)
				put_i(out->data, d, i, d == TFK_DT_INT64 ?
				      INT64_MAX : (int64_t)hi);
			else if (v <= lo)
				put_i(out->data, d, i, (int64_t)lo);
			else
				put_i(out->data, d, i, (int64_t)v);
		} else {
			/* integer to integer wraps, as C++ static_cast */
			put_i(out->data, d, i, get_i(x->data, s, i));
		}
	}
	return 0;
}

/* Comparisons and SelectV2 ---------------------------------------------- */

/* x OP y: one body for cmp_d (floating types, compared as double) and
 * cmp_i (integer types as int64_t, exact beyond 2^53). */
#define CMP_FN(name, T)							\
	static int name(enum tfk_cmpop op, T x, T y)			\
	{								\
		switch (op) {						\
		case TFK_CMP_GREATER: return x > y;			\
		case TFK_CMP_GREATER_EQUAL: return x >= y;		\
		case TFK_CMP_LESS: return x < y;			\
		case TFK_CMP_LESS_EQUAL: return x <= y;			\
		case TFK_CMP_EQUAL: return x == y;			\
		case TFK_CMP_NOT_EQUAL: return x != y;			\
		case TFK_CMP_AND: return x && y;			\
		}							\
		return 0;						\
	}
CMP_FN(cmp_d, double)
CMP_FN(cmp_i, int64_t)
#undef CMP_FN

static int check_compare(enum tfk_cmpop op, const struct tfk_tensor *a,
			 const struct tfk_tensor *b,
			 const struct tfk_tensor *out, struct tfk_err *err)
{
	/* (Not)Equal also on strings, as TF (masks of lookups, Hashing) */
	uint64_t ok = op == TFK_CMP_AND ? TFK_DT_BIT(TFK_DT_BOOL) :
		op >= TFK_CMP_EQUAL ? NUMBERS | TFK_DT_BIT(TFK_DT_BOOL) |
		TFK_DT_BIT(TFK_DT_STRING) : NUMBERS;
	int64_t shape[TFK_MAX_RANK];
	int r, rc;

	if (a->dtype != b->dtype || !(TFK_DT_BIT(a->dtype) & ok) ||
	    out->dtype != TFK_DT_BOOL)
		return tfk_errf(err, TFK_EINVAL, "comparison of %s and %s "
				"into %s", tfk_dtype_name(a->dtype),
				tfk_dtype_name(b->dtype),
				tfk_dtype_name(out->dtype));
	rc = tfk_shape_broadcast(a->rank, a->shape, b->rank, b->shape, &r,
				 shape, err);
	if (rc)
		return rc;
	if (!tfk_shape_equal(r, shape, out->rank, out->shape))
		return tfk_errf(err, TFK_EINVAL, "comparison: output shape "
				"is not the broadcast shape");
	return 0;
}

/* Offset of output element i in an operand with broadcast strides st. */
static int64_t boff(const struct tfk_tensor *out, const int64_t *st,
		    int64_t i)
{
	int64_t o = 0;
	int d;

	for (d = out->rank - 1; d >= 0; d--) {
		o += (i % out->shape[d]) * st[d];
		i /= out->shape[d];
	}
	return o;
}

int tfk_cpu_compare_ref(enum tfk_cmpop op, const struct tfk_tensor *a,
			const struct tfk_tensor *b, struct tfk_tensor *out,
			struct tfk_err *err)
{
	int64_t sa[TFK_MAX_RANK], sb[TFK_MAX_RANK], i, n;
	uint8_t *o = out->data;
	int rc = check_compare(op, a, b, out, err);

	if (rc)
		return rc;
	bstrides(a, out->rank, sa);
	bstrides(b, out->rank, sb);
	n = tfk_tensor_numel(out);
	for (i = 0; i < n; i++) {
		int64_t ia = boff(out, sa, i), ib = boff(out, sb, i);

		if (a->dtype == TFK_DT_STRING) {
			struct tfk_str x = tfk_tensor_str(a, ia);
			struct tfk_str y = tfk_tensor_str(b, ib);
			int eq = x.len == y.len &&
				 (!x.len || !memcmp(x.ptr, y.ptr, x.len));

			o[i] = (uint8_t)(op == TFK_CMP_EQUAL ? eq : !eq);
		} else if (is_float(a->dtype))
			o[i] = (uint8_t)cmp_d(op, get_f(a->data, a->dtype, ia),
					      get_f(b->data, b->dtype, ib));
		else
			o[i] = (uint8_t)cmp_i(op, get_i(a->data, a->dtype, ia),
					      get_i(b->data, b->dtype, ib));
	}
	return 0;
}

#define CMP_LOOP(T, EXPR) do {						\
	const T *pa = a->data, *pb = b->data;				\
	int64_t j;							\
	for (j = 0; j < n; j++) {					\
		T x = pa[j * ia], y = pb[j * ib];			\
		o[j] = (uint8_t)(EXPR);					\
	}								\
} while (0)

#define CMP_OPS(T) do {							\
	switch (op) {							\
	case TFK_CMP_GREATER: CMP_LOOP(T, x > y); break;		\
	case TFK_CMP_GREATER_EQUAL: CMP_LOOP(T, x >= y); break;		\
	case TFK_CMP_LESS: CMP_LOOP(T, x < y); break;			\
	case TFK_CMP_LESS_EQUAL: CMP_LOOP(T, x <= y); break;		\
	case TFK_CMP_EQUAL: CMP_LOOP(T, x == y); break;			\
	case TFK_CMP_NOT_EQUAL: CMP_LOOP(T, x != y); break;		\
	case TFK_CMP_AND: CMP_LOOP(T, x && y); break;			\
	}								\
} while (0)

/* Fast path: same shapes or a scalar operand (the forms gradients and
 * metrics use); other broadcasts go to the _ref. */
int tfk_cpu_compare(enum tfk_cmpop op, const struct tfk_tensor *a,
		    const struct tfk_tensor *b, struct tfk_tensor *out,
		    struct tfk_err *err)
{
	int64_t n = tfk_tensor_numel(out), ia, ib;
	uint8_t *o = out->data;
	int rc = check_compare(op, a, b, out, err);

	if (rc)
		return rc;
	ia = tfk_tensor_numel(a) != 1;
	ib = tfk_tensor_numel(b) != 1;
	if ((ia && tfk_tensor_numel(a) != n) ||
	    (ib && tfk_tensor_numel(b) != n) || a->dtype == TFK_DT_STRING)
		return tfk_cpu_compare_ref(op, a, b, out, err);
	switch (a->dtype) {
	case TFK_DT_FLOAT: CMP_OPS(float); break;
	case TFK_DT_DOUBLE: CMP_OPS(double); break;
	case TFK_DT_INT32: CMP_OPS(int32_t); break;
	case TFK_DT_INT64: CMP_OPS(int64_t); break;
	default: CMP_OPS(uint8_t); break;
	}
	return 0;
}

static int check_select(const struct tfk_tensor *c, const struct tfk_tensor *t,
			const struct tfk_tensor *e,
			const struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t s1[TFK_MAX_RANK], s2[TFK_MAX_RANK];
	int r1, r2, rc;

	if (c->dtype != TFK_DT_BOOL || t->dtype != e->dtype ||
	    t->dtype != out->dtype || !tfk_dtype_size(t->dtype) ||
	    t->dtype == TFK_DT_STRING)
		return tfk_errf(err, TFK_EINVAL, "select: condition %s, "
				"values %s and %s", tfk_dtype_name(c->dtype),
				tfk_dtype_name(t->dtype),
				tfk_dtype_name(e->dtype));
	rc = tfk_shape_broadcast(t->rank, t->shape, e->rank, e->shape, &r1,
				 s1, err);
	if (!rc)
		rc = tfk_shape_broadcast(c->rank, c->shape, r1, s1, &r2, s2,
					 err);
	if (rc)
		return rc;
	if (!tfk_shape_equal(r2, s2, out->rank, out->shape))
		return tfk_errf(err, TFK_EINVAL, "select: output shape is "
				"not the broadcast shape");
	return 0;
}

int tfk_cpu_select_ref(const struct tfk_tensor *cond,
		       const struct tfk_tensor *t, const struct tfk_tensor *e,
		       struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t sc[TFK_MAX_RANK], st[TFK_MAX_RANK], se[TFK_MAX_RANK], i, n;
	size_t es = tfk_dtype_size(out->dtype);
	const uint8_t *c = cond->data;
	int rc = check_select(cond, t, e, out, err);

	if (rc)
		return rc;
	bstrides(cond, out->rank, sc);
	bstrides(t, out->rank, st);
	bstrides(e, out->rank, se);
	n = tfk_tensor_numel(out);
	for (i = 0; i < n; i++) {
		const char *src = c[boff(out, sc, i)] ?
			(const char *)t->data + boff(out, st, i) * es :
			(const char *)e->data + boff(out, se, i) * es;

		memcpy((char *)out->data + i * es, src, es);
	}
	return 0;
}

#define SEL_LOOP(T) do {						\
	const T *pt = t->data, *pe = e->data;				\
	T *po = out->data;						\
	int64_t j;							\
	for (j = 0; j < n; j++)						\
		po[j] = c[j * ic] ? pt[j * it] : pe[j * ie];		\
} while (0)

/* Fast path: each operand the output's size or a single element. */
int tfk_cpu_select(const struct tfk_tensor *cond, const struct tfk_tensor *t,
		   const struct tfk_tensor *e, struct tfk_tensor *out,
		   struct tfk_err *err)
{
	int64_t n = tfk_tensor_numel(out), ic, it, ie;
	const uint8_t *c = cond->data;
	int rc = check_select(cond, t, e, out, err);

	if (rc)
		return rc;
	ic = tfk_tensor_numel(cond) != 1;
	it = tfk_tensor_numel(t) != 1;
	ie = tfk_tensor_numel(e) != 1;
	if ((ic && tfk_tensor_numel(cond) != n) ||
	    (it && tfk_tensor_numel(t) != n) ||
	    (ie && tfk_tensor_numel(e) != n))
		return tfk_cpu_select_ref(cond, t, e, out, err);
	switch (tfk_dtype_size(out->dtype)) {
	case 1: SEL_LOOP(uint8_t); break;
	case 2: SEL_LOOP(uint16_t); break;
	case 4: SEL_LOOP(uint32_t); break;
	case 8: SEL_LOOP(uint64_t); break;
	default: return tfk_cpu_select_ref(cond, t, e, out, err);
	}
	return 0;
}

/* BiasAdd, Softmax, Sum ------------------------------------------------- */

int tfk_cpu_bias_add_ref(const struct tfk_tensor *x,
			 const struct tfk_tensor *bias,
			 struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t i, n = tfk_tensor_numel(x), c;

	if (x->rank < 1 || bias->rank != 1 ||
	    bias->shape[0] != x->shape[x->rank - 1] ||
	    !(TFK_DT_BIT(x->dtype) & FLOATS) || bias->dtype != x->dtype)
		return tfk_errf(err, TFK_EINVAL, "bias_add: bad operands");
	c = bias->shape[0];
	for (i = 0; i < n; i++) {
		if (x->dtype == TFK_DT_FLOAT)
			((float *)out->data)[i] = ((const float *)x->data)[i] +
				((const float *)bias->data)[i % c];
		else
			((double *)out->data)[i] =
				((const double *)x->data)[i] +
				((const double *)bias->data)[i % c];
	}
	return 0;
}

int tfk_cpu_softmax_ref(const struct tfk_tensor *x, struct tfk_tensor *out,
			struct tfk_err *err)
{
	int64_t r, j, c, rows;
	int rc = check_unary(x, out, err);

	if (rc)
		return rc;
	if (x->rank < 1)
		return tfk_errf(err, TFK_EINVAL, "softmax of a scalar");
	c = x->shape[x->rank - 1];
	if (!c)
		return 0;
	rows = tfk_tensor_numel(x) / c;
	for (r = 0; r < rows; r++) {
		double m = -INFINITY, s = 0;

		for (j = 0; j < c; j++)
			m = fmax(m, get_f(x->data, x->dtype, r * c + j));
		for (j = 0; j < c; j++)
			s += exp(get_f(x->data, x->dtype, r * c + j) - m);
		for (j = 0; j < c; j++) {
			double v = exp(get_f(x->data, x->dtype, r * c + j) - m)
				/ s;

			if (x->dtype == TFK_DT_FLOAT)
				((float *)out->data)[r * c + j] = (float)v;
			else
				((double *)out->data)[r * c + j] = v;
		}
	}
	return 0;
}

int tfk_cpu_sum_ref(const struct tfk_tensor *x, unsigned mask,
		    struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t so[TFK_MAX_RANK], s = 1, i, n = tfk_tensor_numel(x);
	int d;

	if (out->rank != x->rank || out->dtype != x->dtype ||
	    !(TFK_DT_BIT(x->dtype) & NUMBERS))
		return tfk_errf(err, TFK_EINVAL, "sum: bad operands");
	for (d = x->rank - 1; d >= 0; d--) {
		int64_t want = (mask >> d) & 1 ? 1 : x->shape[d];

		if (out->shape[d] != want)
			return tfk_errf(err, TFK_EINVAL, "sum: output dim %d "
					"is %lld, want %lld", d,
					(long long)out->shape[d],
					(long long)want);
		so[d] = (mask >> d) & 1 ? 0 : s;
		s *= out->shape[d];
	}
	if (out->nbytes)
		memset(out->data, 0, out->nbytes);
	for (i = 0; i < n; i++) {
		int64_t rem = i, o = 0;

		for (d = x->rank - 1; d >= 0; d--) {
			o += (rem % x->shape[d]) * so[d];
			rem /= x->shape[d];
		}
		switch (x->dtype) {
		case TFK_DT_FLOAT:
			((float *)out->data)[o] += ((const float *)x->data)[i];
			break;
		case TFK_DT_DOUBLE:
			((double *)out->data)[o] +=
				((const double *)x->data)[i];
			break;
		case TFK_DT_INT32:
			((int32_t *)out->data)[o] = (int32_t)(
				(uint32_t)((int32_t *)out->data)[o] +
				(uint32_t)((const int32_t *)x->data)[i]);
			break;
		default:
			((int64_t *)out->data)[o] = (int64_t)(
				(uint64_t)((int64_t *)out->data)[o] +
				(uint64_t)((const int64_t *)x->data)[i]);
			break;
		}
	}
	return 0;
}

/* Fast ReluGrad, BiasAdd, Softmax (float32; others go to the _ref) ------- */

int tfk_cpu_relu_grad(const struct tfk_tensor *dy, const struct tfk_tensor *x,
		      struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t i, n = tfk_tensor_numel(x);
	const float *g = dy->data, *f = x->data;
	float *o = out->data;
	int rc = check_unary(x, out, err);

	if (!rc)
		rc = check_unary(dy, out, err);
	if (rc || x->dtype != TFK_DT_FLOAT)
		return rc ? rc : tfk_cpu_relu_grad_ref(dy, x, out, err);
	if (o == g || o == f) {	/* in place: restrict does not hold */
		for (i = 0; i < n; i++)
			o[i] = f[i] > 0 ? g[i] : 0;
		return 0;
	}
	relu_grad_f32(n, g, f, o);
	return 0;
}

static __attribute__((noinline)) void
bias_add_f32(int64_t rows, int64_t c, const float *restrict x,
	     const float *restrict b, float *restrict o)
{
	int64_t r, j, k;

	for (r = 0; r < rows; r++, x += c, o += c) {
		for (j = 0; j + EW_BLK <= c; j += EW_BLK)
			for (k = 0; k < EW_BLK; k++)
				o[j + k] = x[j + k] + b[j + k];
		for (; j < c; j++)
			o[j] = x[j] + b[j];
	}
}

int tfk_cpu_bias_add(const struct tfk_tensor *x, const struct tfk_tensor *bias,
		     struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t r, j, c, rows;

	if (x->dtype != TFK_DT_FLOAT || x->rank < 1 || bias->rank != 1 ||
	    bias->dtype != x->dtype || bias->shape[0] != x->shape[x->rank - 1])
		return tfk_cpu_bias_add_ref(x, bias, out, err);
	c = bias->shape[0];
	rows = c ? tfk_tensor_numel(x) / c : 0;
	if (x->data != out->data) {
		bias_add_f32(rows, c, x->data, bias->data, out->data);
		return 0;
	}
	for (r = 0; r < rows; r++) {
		const float *xr = (const float *)x->data + r * c;
		const float *b = bias->data;
		float *o = (float *)out->data + r * c;

		for (j = 0; j < c; j++)
			o[j] = xr[j] + b[j];
	}
	return 0;
}

/* per row in float: max, exp(x - max) into out, sum, scale by 1 / sum */
int tfk_cpu_softmax(const struct tfk_tensor *x, struct tfk_tensor *out,
		    struct tfk_err *err)
{
	int64_t r, j, c, rows;
	int rc = check_unary(x, out, err);

	if (rc || x->dtype != TFK_DT_FLOAT || x->rank < 1)
		return rc ? rc : tfk_cpu_softmax_ref(x, out, err);
	c = x->shape[x->rank - 1];
	rows = c ? tfk_tensor_numel(x) / c : 0;
	for (r = 0; r < rows; r++) {
		const float *xr = (const float *)x->data + r * c;
		float *o = (float *)out->data + r * c, m = xr[0], s = 0, inv;

		for (j = 1; j < c; j++)
			m = xr[j] > m ? xr[j] : m;
		for (j = 0; j < c; j++) {
			o[j] = expf(xr[j] - m);
			s += o[j];
		}
		inv = 1 / s;
		for (j = 0; j < c; j++)
			o[j] *= inv;
	}
	return 0;
}

/* Shape inference -------------------------------------------------------- */

static int infer_binary(struct tfk_infer_ctx *ic)
{
	int rc = tfk_shape_broadcast(ic->in[0].rank, ic->in[0].shape,
				     ic->in[1].rank, ic->in[1].shape,
				     &ic->out[0].rank, ic->out[0].shape,
				     ic->err);

	return rc ? tfk_err_prefix(ic->err, "inputs 0 and 1") : 0;
}

static int infer_bias_add(struct tfk_infer_ctx *ic)
{
	const struct tfk_attr_value *f = tfk_node_attr(ic->node, "data_format");
	const struct tfk_tdesc *x = &ic->in[0], *b = &ic->in[1];
	char s[128];

	if (f && strcmp(f->s.p, "NHWC"))
		return tfk_errf(ic->err, TFK_EINVAL, "data_format %s not "
				"supported (only NHWC)", f->s.p);
	if (x->rank >= 0 && x->rank < 1)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: rank 0, "
				"need at least 1");
	if (b->rank >= 0 && b->rank != 1)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: bias shape %s, "
				"need rank 1", tfk_shape_str(b->rank, b->shape,
							     s, sizeof(s)));
	if (x->rank > 0 && b->rank == 1 && x->shape[x->rank - 1] >= 0 &&
	    b->shape[0] >= 0 && x->shape[x->rank - 1] != b->shape[0])
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: bias of %lld, "
				"input has %lld channels",
				(long long)b->shape[0],
				(long long)x->shape[x->rank - 1]);
	ic->out[0].rank = x->rank;
	memcpy(ic->out[0].shape, x->shape, sizeof(x->shape));
	return 0;
}

static int infer_same2(struct tfk_infer_ctx *ic)
{
	int rc = infer_agree2(ic);

	if (rc)
		return rc;
	ic->out[0].rank = ic->in[1].rank;
	memcpy(ic->out[0].shape, ic->in[1].shape, sizeof(ic->in[1].shape));
	return 0;
}

static int infer_softmax(struct tfk_infer_ctx *ic)
{
	if (ic->in[0].rank == 0)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: softmax of a "
				"scalar (need rank >= 1)");
	ic->out[0].rank = ic->in[0].rank;
	memcpy(ic->out[0].shape, ic->in[0].shape, sizeof(ic->in[0].shape));
	return 0;
}

/* Integer vector value of a Const input (int32 or int64) into v. */
static int const_ints(const struct tfk_tensor *t, int64_t *v, int max,
		      int *n)
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

static int infer_reshape(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *x = &ic->in[0];
	int64_t s[TFK_MAX_RANK], known = 1, n = 1;
	int r, i, unk = -1, x_known = x->rank >= 0;
	char b1[128], b2[128];

	if (!ic->in_value[1]) {
		if (ic->in[1].rank != 1 || ic->in[1].shape[0] < 0 ||
		    ic->in[1].shape[0] > TFK_MAX_RANK)
			return tfk_errf(ic->err, TFK_EINVAL, "input 1: shape "
					"must be a Const or a vector of known "
					"length <= %d", TFK_MAX_RANK);
		ic->out[0].rank = (int)ic->in[1].shape[0];
		for (i = 0; i < ic->out[0].rank; i++)
			ic->out[0].shape[i] = -1;
		return 0;
	}
	if (const_ints(ic->in_value[1], s, TFK_MAX_RANK, &r))
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: shape must be "
				"a vector of at most %d dims", TFK_MAX_RANK);
	for (i = 0; i < x->rank && x_known; i++) {
		if (x->shape[i] < 0)
			x_known = 0;
		else
			n *= x->shape[i];
	}
	for (i = 0; i < r; i++) {
		if (s[i] == -1 && unk < 0) {
			unk = i;
			continue;
		}
		if (s[i] < 0)
			return tfk_errf(ic->err, TFK_EINVAL, "input 1: shape "
					"%s: bad dim %d",
					tfk_shape_str(r, s, b1, sizeof(b1)), i);
		if (s[i] && known > INT64_MAX / s[i])
			return tfk_errf(ic->err, TFK_EINVAL, "input 1: shape "
					"overflows");
		known *= s[i];
	}
	if (x_known) {
		if (unk >= 0 && known && n % known == 0)
			s[unk] = n / known;
		else if (unk >= 0 || known != n)
			return tfk_errf(ic->err, TFK_EINVAL, "cannot reshape "
					"%s into %s",
					tfk_shape_str(x->rank, x->shape, b1,
						      sizeof(b1)),
					tfk_shape_str(r, s, b2, sizeof(b2)));
	}
	ic->out[0].rank = r;
	memcpy(ic->out[0].shape, s, r * sizeof(s[0]));
	return 0;
}

/* SelectV2: the three shapes broadcast together. */
static int infer_select(struct tfk_infer_ctx *ic)
{
	int64_t s[TFK_MAX_RANK];
	int r, rc;

	rc = tfk_shape_broadcast(ic->in[1].rank, ic->in[1].shape,
				 ic->in[2].rank, ic->in[2].shape, &r, s,
				 ic->err);
	if (!rc && r >= 0)
		rc = tfk_shape_broadcast(ic->in[0].rank, ic->in[0].shape, r,
					 s, &ic->out[0].rank,
					 ic->out[0].shape, ic->err);
	else if (!rc)
		ic->out[0].rank = -1;
	return rc ? tfk_err_prefix(ic->err, "inputs 0, 1 and 2") : 0;
}

/* Kernels ---------------------------------------------------------------- */

#define K_BINARY(fn, OP)						\
static int fn(struct tfk_kernel_ctx *kc)				\
{									\
	return tfk_cpu_binary(OP, kc->in[0], kc->in[1], kc->out[0],	\
			      kc->err);					\
}
K_BINARY(k_add, TFK_BIN_ADD)
K_BINARY(k_sub, TFK_BIN_SUB)
K_BINARY(k_mul, TFK_BIN_MUL)
K_BINARY(k_div, TFK_BIN_DIV)
K_BINARY(k_max, TFK_BIN_MAX)
K_BINARY(k_min, TFK_BIN_MIN)
K_BINARY(k_pow, TFK_BIN_POW)
K_BINARY(k_sqdiff, TFK_BIN_SQDIFF)
K_BINARY(k_sigmoid_grad, TFK_BIN_SIGMOID_GRAD)
K_BINARY(k_tanh_grad, TFK_BIN_TANH_GRAD)
K_BINARY(k_sqrt_grad, TFK_BIN_SQRT_GRAD)
K_BINARY(k_rsqrt_grad, TFK_BIN_RSQRT_GRAD)

#define K_UNARY(fn, OP)							\
static int fn(struct tfk_kernel_ctx *kc)				\
{									\
	return tfk_cpu_unary(OP, kc->in[0], kc->out[0], kc->err);	\
}
K_UNARY(k_sigmoid, TFK_UN_SIGMOID)
K_UNARY(k_tanh, TFK_UN_TANH)
K_UNARY(k_neg, TFK_UN_NEG)
K_UNARY(k_abs, TFK_UN_ABS)
K_UNARY(k_square, TFK_UN_SQUARE)
K_UNARY(k_sqrt, TFK_UN_SQRT)
K_UNARY(k_rsqrt, TFK_UN_RSQRT)
K_UNARY(k_exp, TFK_UN_EXP)
K_UNARY(k_log, TFK_UN_LOG)
K_UNARY(k_log1p, TFK_UN_LOG1P)
K_UNARY(k_sign, TFK_UN_SIGN)
K_UNARY(k_floor, TFK_UN_FLOOR)

#define K_COMPARE(fn, OP)						\
static int fn(struct tfk_kernel_ctx *kc)				\
{									\
	return tfk_cpu_compare(OP, kc->in[0], kc->in[1], kc->out[0],	\
			       kc->err);				\
}
K_COMPARE(k_greater, TFK_CMP_GREATER)
K_COMPARE(k_greater_equal, TFK_CMP_GREATER_EQUAL)
K_COMPARE(k_less, TFK_CMP_LESS)
K_COMPARE(k_less_equal, TFK_CMP_LESS_EQUAL)
K_COMPARE(k_equal, TFK_CMP_EQUAL)
K_COMPARE(k_not_equal, TFK_CMP_NOT_EQUAL)
K_COMPARE(k_logical_and, TFK_CMP_AND)

static int k_select(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_select(kc->in[0], kc->in[1], kc->in[2], kc->out[0],
			      kc->err);
}

/*
 * Large float32 Relu, ReluGrad and BiasAdd are split over kc->threads
 * (a CNN's are 1/6 of its step, and would be 1/4 once the convolutions
 * run on two threads). Elementwise, so every split gives the same
 * bytes; below EW_PAR elements waking a worker costs more than the
 * loop.
 */
#define EW_PAR 65536
#define EW_PART 4096		/* elements per unit of the split */

enum { EW_RELU, EW_RELU_GRAD, EW_BIAS };

struct ew_job {
	int what;
	int64_t n, c;		/* elements (rows for EW_BIAS), columns */
	const float *x, *y;
	float *o;
};

static void ew_part(void *ctx, int64_t b, int64_t e, int k)
{
	const struct ew_job *j = ctx;
	int64_t lo = b * EW_PART, hi = e * EW_PART < j->n ? e * EW_PART : j->n;

	switch (j->what) {
	case EW_RELU:
		relu_f32(hi - lo, j->x + lo, j->o + lo);
		break;
	case EW_RELU_GRAD:
		relu_grad_f32(hi - lo, j->x + lo, j->y + lo, j->o + lo);
		break;
	default:
		bias_add_f32(e - b, j->c, j->x + b * j->c, j->y,
			     j->o + b * j->c);
		break;
	}
	(void)k;
}

/* 1 if the split ran; 0: not float32 contiguous same-shape operands, or
 * too small, or one thread (the caller's plain path then runs). */
static int ew_split(struct tfk_kernel_ctx *kc, int what)
{
	const struct tfk_tensor *a = kc->in[0], *b = kc->n_in > 1 ?
		kc->in[1] : NULL;
	struct tfk_tensor *o = kc->out[0];
	struct ew_job j = { what, tfk_tensor_numel(o), 0, a->data,
			    b ? b->data : NULL, o->data };

	if (kc->threads < 2 || j.n < EW_PAR || o->dtype != TFK_DT_FLOAT ||
	    a->dtype != TFK_DT_FLOAT ||
	    !tfk_shape_equal(a->rank, a->shape, o->rank, o->shape) ||
	    (const void *)a->data == o->data)
		return 0;
	if (what == EW_RELU_GRAD &&
	    (b->dtype != TFK_DT_FLOAT || b->data == o->data ||
	     !tfk_shape_equal(b->rank, b->shape, o->rank, o->shape)))
		return 0;
	if (what == EW_BIAS) {
		if (b->dtype != TFK_DT_FLOAT || b->rank != 1 || o->rank < 1 ||
		    b->shape[0] != o->shape[o->rank - 1] || !b->shape[0])
			return 0;
		j.c = b->shape[0];
		j.n /= j.c;	/* rows */
		tfk_parallel_for(kc->threads, j.n, ew_part, &j);
		return 1;
	}
	tfk_parallel_for(kc->threads, (j.n + EW_PART - 1) / EW_PART,
			 ew_part, &j);
	return 1;
}

static int k_relu(struct tfk_kernel_ctx *kc)
{
	if (ew_split(kc, EW_RELU))
		return 0;
	return tfk_cpu_unary(TFK_UN_RELU, kc->in[0], kc->out[0], kc->err);
}

static int k_relu_grad(struct tfk_kernel_ctx *kc)
{
	if (ew_split(kc, EW_RELU_GRAD))
		return 0;
	return tfk_cpu_relu_grad(kc->in[0], kc->in[1], kc->out[0], kc->err);
}

/* bool and uint8 to float32 (dropout's mask, image bytes): vectorized
 * in fixed blocks; the same values as the _ref's double round trip. */
static __attribute__((noinline)) void
u8_to_f32(int64_t n, int is_bool, const uint8_t *restrict x,
	  float *restrict o)
{
	int64_t i, k;

	if (is_bool) {
		for (i = 0; i + EW_BLK <= n; i += EW_BLK)
			for (k = 0; k < EW_BLK; k++)
				o[i + k] = x[i + k] != 0 ? 1.0f : 0.0f;
		for (; i < n; i++)
			o[i] = x[i] != 0 ? 1.0f : 0.0f;
		return;
	}
	for (i = 0; i + EW_BLK <= n; i += EW_BLK)
		for (k = 0; k < EW_BLK; k++)
			o[i + k] = (float)x[i + k];
	for (; i < n; i++)
		o[i] = (float)x[i];
}

static int k_cast(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0];
	struct tfk_tensor *o = kc->out[0];

	if ((x->dtype == TFK_DT_BOOL || x->dtype == TFK_DT_UINT8) &&
	    o->dtype == TFK_DT_FLOAT &&
	    tfk_shape_equal(x->rank, x->shape, o->rank, o->shape) &&
	    (const void *)x->data != o->data) {
		u8_to_f32(tfk_tensor_numel(x), x->dtype == TFK_DT_BOOL,
			  x->data, o->data);
		return 0;
	}
	return tfk_cpu_cast_ref(x, o, kc->err);
}

static int s_cast(const struct tfk_node *n)
{
	return (TFK_DT_BIT(tfk_node_attr_type(n, "SrcT", 0)) & CASTABLE) &&
		(TFK_DT_BIT(tfk_node_attr_type(n, "DstT", 0)) & CASTABLE);
}

static int k_bias_add(struct tfk_kernel_ctx *kc)
{
	if (ew_split(kc, EW_BIAS))
		return 0;
	return tfk_cpu_bias_add(kc->in[0], kc->in[1], kc->out[0], kc->err);
}

static int k_softmax(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_softmax(kc->in[0], kc->out[0], kc->err);
}

/* Identity and Reshape: a copy (strings: the {ptr, len} pairs, pointing
 * at the producer's bytes, which live until the producer's next run). */
static int k_copy(struct tfk_kernel_ctx *kc)
{
	if (kc->in[0]->nbytes != kc->out[0]->nbytes)
		return tfk_errf(kc->err, TFK_EINVAL, "copy of %zu bytes into "
				"%zu", kc->in[0]->nbytes, kc->out[0]->nbytes);
	if (kc->out[0]->nbytes)
		memcpy(kc->out[0]->data, kc->in[0]->data, kc->out[0]->nbytes);
	return 0;
}

static int k_zeros(struct tfk_kernel_ctx *kc)
{
	if (kc->out[0]->nbytes)
		memset(kc->out[0]->data, 0, kc->out[0]->nbytes);
	return 0;
}

/* Gradients -------------------------------------------------------------- */

/*
 * dy reduced to the shape of port x (see the top comment). Static when
 * the build-time shapes decide it: a dim of x that is 1 where dy's is
 * not is summed (keep_dims), dims dy has in front are summed away, and
 * two unknown dims are taken to be the same (the batch dimension). When
 * x has an unknown dim where dy's is known and > 1 (x may or may not be
 * broadcast there), or a rank is unknown, it is TF's run-time form:
 * Reshape(Sum(dy, BroadcastGradientArgs(Shape(x), Shape(dy))[0]),
 * Shape(x)), whose values the executor folds while planning.
 */
static int reduce_like(struct tfk_grad_ctx *gc, struct tfk_port dy,
		       struct tfk_port x, struct tfk_port *out)
{
	const struct tfk_tdesc *tx = tfk_graph_desc(gc->g, x);
	const struct tfk_tdesc *ty = tfk_graph_desc(gc->g, dy);
	int32_t axes[TFK_MAX_RANK];
	struct tfk_port in[2], sx, sy;
	struct tfk_attr keep = TFK_A_BOOL("keep_dims", 0);
	int lead, n = 0, i, rc, dynamic = 0;

	if (tx->rank >= 0 && ty->rank >= 0 &&
	    tfk_shape_equal(tx->rank, tx->shape, ty->rank, ty->shape)) {
		*out = dy;
		return 0;
	}
	lead = ty->rank - tx->rank;
	dynamic = tx->rank < 0 || ty->rank < 0 || lead < 0;
	for (i = 0; !dynamic && i < tx->rank; i++)
		dynamic = tx->shape[i] < 0 && ty->shape[lead + i] > 1;
	if (dynamic) {
		rc = gb_1(gc, "Shape", x, &sx);
		if (!rc)
			rc = gb_1(gc, "Shape", dy, &sy);
		if (!rc)
			rc = gb_2(gc, "BroadcastGradientArgs", sx, sy, &in[1]);
		in[0] = dy;
		if (!rc)
			rc = gb_add(gc, "Sum", in, 2, &keep, 1, &in[0]);
		return rc ? rc : gb_2(gc, "Reshape", in[0], sx, out);
	}
	in[0] = dy;
	if (lead > 0) {
		for (i = 0; i < lead; i++)
			axes[i] = i;
		rc = gb_ints(gc, axes, lead, &in[1]);
		if (!rc)
			rc = gb_add(gc, "Sum", in, 2, &keep, 1, &in[0]);
		if (rc)
			return rc;
	}
	for (i = 0; i < tx->rank; i++)
		if (tx->shape[i] == 1 && ty->shape[lead + i] != 1)
			axes[n++] = i;
	if (n) {
		keep.v.b = 1;
		rc = gb_ints(gc, axes, n, &in[1]);
		if (!rc)
			rc = gb_add(gc, "Sum", in, 2, &keep, 1, &in[0]);
		if (rc)
			return rc;
	}
	*out = in[0];
	return 0;
}

/* Both inputs' gradients from one full-shape gradient each. */
static int reduce_both(struct tfk_grad_ctx *gc, struct tfk_port d0,
		       struct tfk_port d1)
{
	int rc = reduce_like(gc, d0, gc->node->inputs[0], &gc->dx[0]);

	return rc ? rc : reduce_like(gc, d1, gc->node->inputs[1], &gc->dx[1]);
}

static int is_float_port(struct tfk_grad_ctx *gc, struct tfk_port p)
{
	return is_float(tfk_graph_desc(gc->g, p)->dtype);
}

static int grad_add(struct tfk_grad_ctx *gc)
{
	return reduce_both(gc, gc->dy[0], gc->dy[0]);
}

/* TF's _SubGrad: dy, -dy. */
static int grad_sub(struct tfk_grad_ctx *gc)
{
	struct tfk_port neg;
	int rc;

	if (!is_float_port(gc, gc->dy[0]))
		return 0;
	rc = gb_1(gc, "Neg", gc->dy[0], &neg);
	return rc ? rc : reduce_both(gc, gc->dy[0], neg);
}

static int grad_mul(struct tfk_grad_ctx *gc)
{
	struct tfk_port a, b;
	int rc;

	if (!is_float_port(gc, gc->dy[0]))
		return 0;
	rc = gb_2(gc, "Mul", gc->dy[0], gc->node->inputs[1], &a);
	if (!rc)
		rc = gb_2(gc, "Mul", gc->node->inputs[0], gc->dy[0], &b);
	return rc ? rc : reduce_both(gc, a, b);
}

/* TF's _RealDivGrad: dy / y and dy * ((-x / y) / y). */
static int grad_div(struct tfk_grad_ctx *gc)
{
	struct tfk_port x = gc->node->inputs[0], y = gc->node->inputs[1];
	struct tfk_port a, b;
	int rc;

	rc = gb_2(gc, "RealDiv", gc->dy[0], y, &a);
	if (!rc)
		rc = gb_1(gc, "Neg", x, &b);
	if (!rc)
		rc = gb_2(gc, "RealDiv", b, y, &b);
	if (!rc)
		rc = gb_2(gc, "RealDiv", b, y, &b);
	if (!rc)
		rc = gb_2(gc, "Mul", gc->dy[0], b, &b);
	return rc ? rc : reduce_both(gc, a, b);
}

/* TF's _MaximumGrad/_MinimumGrad: dy goes to x where x >= y (x <= y),
 * else to y (ties go to x). */
static int grad_maxmin(struct tfk_grad_ctx *gc)
{
	const char *cmp = !strcmp(gc->node->op->name, "Maximum") ?
		"GreaterEqual" : "LessEqual";
	struct tfk_port mask, zero, in[3], a, b;
	int rc;

	if (!is_float_port(gc, gc->dy[0]))
		return 0;
	rc = gb_2(gc, cmp, gc->node->inputs[0], gc->node->inputs[1], &mask);
	if (!rc)
		rc = gb_scalar(gc, gc->node->outputs[0].dtype, 0, &zero);
	in[0] = mask, in[1] = gc->dy[0], in[2] = zero;
	if (!rc)
		rc = gb_add(gc, "SelectV2", in, 3, NULL, 0, &a);
	in[1] = zero, in[2] = gc->dy[0];
	if (!rc)
		rc = gb_add(gc, "SelectV2", in, 3, NULL, 0, &b);
	return rc ? rc : reduce_both(gc, a, b);
}

/* TF's _PowGrad: dy * y * x^(y - 1), and dy * z * log(x) where x > 0,
 * else 0 (z = x^y). */
static int grad_pow(struct tfk_grad_ctx *gc)
{
	struct tfk_port x = gc->node->inputs[0], y = gc->node->inputs[1];
	struct tfk_port z = { gc->node_id, 0 }, one, zero, mask, a, b, in[3];
	enum tfk_dtype t = gc->node->outputs[0].dtype;
	int rc;

	rc = gb_scalar(gc, t, 1, &one);
	if (!rc)
		rc = gb_scalar(gc, t, 0, &zero);
	if (!rc)
		rc = gb_2(gc, "Sub", y, one, &a);
	if (!rc)
		rc = gb_2(gc, "Pow", x, a, &a);
	if (!rc)
		rc = gb_2(gc, "Mul", y, a, &a);
	if (!rc)
		rc = gb_2(gc, "Mul", gc->dy[0], a, &a);
	if (!rc)
		rc = gb_2(gc, "Greater", x, zero, &mask);
	in[0] = mask, in[1] = x, in[2] = one;
	if (!rc)
		rc = gb_add(gc, "SelectV2", in, 3, NULL, 0, &b);
	if (!rc)
		rc = gb_1(gc, "Log", b, &b);
	in[1] = b, in[2] = zero;
	if (!rc)
		rc = gb_add(gc, "SelectV2", in, 3, NULL, 0, &b);
	if (!rc)
		rc = gb_2(gc, "Mul", z, b, &b);
	if (!rc)
		rc = gb_2(gc, "Mul", gc->dy[0], b, &b);
	return rc ? rc : reduce_both(gc, a, b);
}

/* TF's _SquaredDifferenceGrad: 2 (x - y) dy, and its negation. */
static int grad_sqdiff(struct tfk_grad_ctx *gc)
{
	struct tfk_port two, a, b;
	int rc;

	rc = gb_scalar(gc, gc->node->outputs[0].dtype, 2, &two);
	if (!rc)
		rc = gb_2(gc, "Sub", gc->node->inputs[0], gc->node->inputs[1],
			  &a);
	if (!rc)
		rc = gb_2(gc, "Mul", a, gc->dy[0], &a);
	if (!rc)
		rc = gb_2(gc, "Mul", two, a, &a);
	if (!rc)
		rc = gb_1(gc, "Neg", a, &b);
	return rc ? rc : reduce_both(gc, a, b);
}

/* TF's _SelectGradV2: dy where cond, else 0 (to t); the rest to e. */
static int grad_select(struct tfk_grad_ctx *gc)
{
	struct tfk_port zero, in[3], a, b;
	int rc;

	rc = gb_scalar(gc, gc->node->outputs[0].dtype, 0, &zero);
	in[0] = gc->node->inputs[0], in[1] = gc->dy[0], in[2] = zero;
	if (!rc)
		rc = gb_add(gc, "SelectV2", in, 3, NULL, 0, &a);
	in[1] = zero, in[2] = gc->dy[0];
	if (!rc)
		rc = gb_add(gc, "SelectV2", in, 3, NULL, 0, &b);
	if (!rc)
		rc = reduce_like(gc, a, gc->node->inputs[1], &gc->dx[1]);
	return rc ? rc : reduce_like(gc, b, gc->node->inputs[2], &gc->dx[2]);
}

/* TF's _ReluGrad: ReluGrad(dy, relu output); output > 0 iff input > 0. */
static int grad_relu(struct tfk_grad_ctx *gc)
{
	return gb_2(gc, "ReluGrad", gc->dy[0], (struct tfk_port){
		gc->node_id, 0 }, &gc->dx[0]);
}

/* Sigmoid, Tanh, Sqrt, Rsqrt: TF's XGrad(y, dy) ops on the output. */
static int grad_by_output(struct tfk_grad_ctx *gc)
{
	const char *s = gc->node->op->name;
	const char *op = !strcmp(s, "Sigmoid") ? "SigmoidGrad" :
		!strcmp(s, "Tanh") ? "TanhGrad" :
		!strcmp(s, "Sqrt") ? "SqrtGrad" : "RsqrtGrad";

	return gb_2(gc, op, (struct tfk_port){ gc->node_id, 0 }, gc->dy[0],
		    &gc->dx[0]);
}

static int grad_neg(struct tfk_grad_ctx *gc)
{
	return gb_1(gc, "Neg", gc->dy[0], &gc->dx[0]);
}

/* d x^2 = dy * 2x (TF: dy * (2 * x)) */
static int grad_square(struct tfk_grad_ctx *gc)
{
	struct tfk_port two, a;
	int rc = gb_scalar(gc, gc->node->outputs[0].dtype, 2, &two);

	if (!rc)
		rc = gb_2(gc, "Mul", two, gc->node->inputs[0], &a);
	return rc ? rc : gb_2(gc, "Mul", gc->dy[0], a, &gc->dx[0]);
}

/* d exp(x) = dy * y */
static int grad_exp(struct tfk_grad_ctx *gc)
{
	return gb_2(gc, "Mul", gc->dy[0], (struct tfk_port){ gc->node_id, 0 },
		    &gc->dx[0]);
}

/* d log(x) = dy / x (TF multiplies by Reciprocal(x); one division is
 * the same value, rounded once) */
static int grad_log(struct tfk_grad_ctx *gc)
{
	return gb_2(gc, "RealDiv", gc->dy[0], gc->node->inputs[0], &gc->dx[0]);
}

/* d log1p(x) = dy / (1 + x) */
static int grad_log1p(struct tfk_grad_ctx *gc)
{
	struct tfk_port one, a;
	int rc = gb_scalar(gc, gc->node->outputs[0].dtype, 1, &one);

	if (!rc)
		rc = gb_2(gc, "AddV2", one, gc->node->inputs[0], &a);
	return rc ? rc : gb_2(gc, "RealDiv", gc->dy[0], a, &gc->dx[0]);
}

/* d |x| = dy * sign(x) */
static int grad_abs(struct tfk_grad_ctx *gc)
{
	struct tfk_port s;
	int rc = gb_1(gc, "Sign", gc->node->inputs[0], &s);

	return rc ? rc : gb_2(gc, "Mul", gc->dy[0], s, &gc->dx[0]);
}

/* Sign: zero gradient (TF's _SignGrad) */
static int grad_sign(struct tfk_grad_ctx *gc)
{
	return gb_1(gc, "ZerosLike", gc->node->inputs[0], &gc->dx[0]);
}

/* TF's _SoftmaxGrad: (dy - sum(dy * y, -1, keepdims)) * y */
static int grad_softmax(struct tfk_grad_ctx *gc)
{
	struct tfk_port y = { gc->node_id, 0 }, in[2], a;
	struct tfk_attr keep = TFK_A_BOOL("keep_dims", 1);
	int32_t last = -1;
	int rc;

	rc = gb_2(gc, "Mul", gc->dy[0], y, &in[0]);
	if (!rc)
		rc = gb_ints(gc, &last, 1, &in[1]);
	if (!rc)
		rc = gb_add(gc, "Sum", in, 2, &keep, 1, &a);
	if (!rc)
		rc = gb_2(gc, "Sub", gc->dy[0], a, &a);
	return rc ? rc : gb_2(gc, "Mul", a, y, &gc->dx[0]);
}

/* TF's _CastGrad: cast dy back, between float types only. */
static int grad_cast(struct tfk_grad_ctx *gc)
{
	enum tfk_dtype s = tfk_node_attr_type(gc->node, "SrcT", 0);
	enum tfk_dtype d = tfk_node_attr_type(gc->node, "DstT", 0);
	struct tfk_attr at = TFK_A_TYPE("DstT", s);

	if (!is_float(s) || !is_float(d))
		return 0;
	return gb_add(gc, "Cast", &gc->dy[0], 1, &at, 1, &gc->dx[0]);
}

/* Reshape: dy reshaped to x's shape (a Const when x has at most one
 * unknown dim, else Shape(x)). */
static int grad_reshape(struct tfk_grad_ctx *gc)
{
	struct tfk_port s;
	int rc = gb_shape(gc, gc->node->inputs[0], &s);

	return rc ? rc : gb_2(gc, "Reshape", gc->dy[0], s, &gc->dx[0]);
}

/* BiasAdd: dx = dy, dbias = dy summed over all but the last axis (TF
 * adds a BiasAddGrad node; Sum is the same arithmetic). */
static int grad_bias_add(struct tfk_grad_ctx *gc)
{
	gc->dx[0] = gc->dy[0];
	return reduce_like(gc, gc->dy[0], gc->node->inputs[1], &gc->dx[1]);
}

static int grad_identity(struct tfk_grad_ctx *gc)
{
	gc->dx[0] = gc->dy[0];
	return 0;
}

/* Tables ----------------------------------------------------------------- */

#define T_ATTR(allowed) { "T", TFK_ATTR_TYPE, 0, { 0 }, (allowed) }
#define BINARY(nm, allowed, g) {					\
	.name = nm,							\
	.inputs = { { "x", .type_attr = "T" }, { "y", .type_attr = "T" } }, \
	.outputs = { { "z", .type_attr = "T" } },			\
	.attrs = { T_ATTR(allowed) },					\
	.infer = infer_binary,						\
	.grad = g,							\
}
#define COMPARE(nm, allowed) {						\
	.name = nm,							\
	.inputs = { { "x", .type_attr = "T" }, { "y", .type_attr = "T" } }, \
	.outputs = { { "z", TFK_DT_BOOL } },				\
	.attrs = { T_ATTR(allowed) },					\
	.infer = infer_binary,						\
}
#define EQUALITY(nm) {							\
	.name = nm,							\
	.inputs = { { "x", .type_attr = "T" }, { "y", .type_attr = "T" } }, \
	.outputs = { { "z", TFK_DT_BOOL } },				\
	.attrs = { T_ATTR(NUMBERS | TFK_DT_BIT(TFK_DT_BOOL) |		\
			  TFK_DT_BIT(TFK_DT_STRING)),			\
		   { "incompatible_shape_error", TFK_ATTR_BOOL, 1,	\
		     { .b = 1 } } },					\
	.infer = infer_binary,						\
}
#define UNARY(nm, g) {							\
	.name = nm,							\
	.inputs = { { "x", .type_attr = "T" } },			\
	.outputs = { { "y", .type_attr = "T" } },			\
	.attrs = { T_ATTR(FLOATS) },					\
	.grad = g,							\
}
/* TF's XGrad(y, dy) ops: inputs "y" and "dy", output "z" */
#define OUT_GRAD(nm) {							\
	.name = nm,							\
	.inputs = { { "y", .type_attr = "T" }, { "dy", .type_attr = "T" } }, \
	.outputs = { { "z", .type_attr = "T" } },			\
	.attrs = { T_ATTR(FLOATS) },					\
	.infer = infer_same2,						\
}

const struct tfk_op_def tfk_ops_elementwise[] = {
	BINARY("AddV2", NUMBERS, grad_add),
	BINARY("Sub", NUMBERS, grad_sub),
	BINARY("Mul", NUMBERS, grad_mul),
	BINARY("RealDiv", FLOATS, grad_div),
	BINARY("Maximum", NUMBERS, grad_maxmin),
	BINARY("Minimum", NUMBERS, grad_maxmin),
	BINARY("Pow", FLOATS, grad_pow),
	BINARY("SquaredDifference", FLOATS, grad_sqdiff),
	UNARY("Relu", grad_relu),
	UNARY("Sigmoid", grad_by_output),
	UNARY("Tanh", grad_by_output),
	UNARY("Neg", grad_neg),
	UNARY("Abs", grad_abs),
	UNARY("Square", grad_square),
	UNARY("Sqrt", grad_by_output),
	UNARY("Rsqrt", grad_by_output),
	UNARY("Exp", grad_exp),
	UNARY("Log", grad_log),
	UNARY("Log1p", grad_log1p),
	UNARY("Sign", grad_sign),
	UNARY("Floor", NULL),
	OUT_GRAD("SigmoidGrad"),
	OUT_GRAD("TanhGrad"),
	OUT_GRAD("SqrtGrad"),
	OUT_GRAD("RsqrtGrad"),
	COMPARE("Greater", NUMBERS),
	COMPARE("GreaterEqual", NUMBERS),
	COMPARE("Less", NUMBERS),
	COMPARE("LessEqual", NUMBERS),
	EQUALITY("Equal"),
	EQUALITY("NotEqual"),
	{
		.name = "LogicalAnd",
		.inputs = { { "x", TFK_DT_BOOL }, { "y", TFK_DT_BOOL } },
		.outputs = { { "z", TFK_DT_BOOL } },
		.infer = infer_binary,
	},
	{
		.name = "SelectV2",
		.inputs = { { "condition", TFK_DT_BOOL },
			    { "t", .type_attr = "T" },
			    { "e", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { T_ATTR(NUMBERS | TFK_DT_BIT(TFK_DT_BOOL) |
				  TFK_DT_BIT(TFK_DT_INT8) |
				  TFK_DT_BIT(TFK_DT_UINT8) |
				  TFK_DT_BIT(TFK_DT_INT16)) },
		.infer = infer_select,
		.grad = grad_select,
	},
	{
		.name = "ReluGrad",
		.inputs = { { "gradients", .type_attr = "T" },
			    { "features", .type_attr = "T" } },
		.outputs = { { "backprops", .type_attr = "T" } },
		.attrs = { T_ATTR(FLOATS) },
		.infer = infer_same2,
	},
	{
		.name = "Identity",
		.inputs = { { "input", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { T_ATTR(0) },
		.grad = grad_identity,
	},
	{
		.name = "Cast",
		.inputs = { { "x", .type_attr = "SrcT" } },
		.outputs = { { "y", .type_attr = "DstT" } },
		.attrs = {
			{ "SrcT", TFK_ATTR_TYPE, 0, { 0 }, CASTABLE },
			{ "DstT", TFK_ATTR_TYPE, 0, { 0 }, CASTABLE },
			{ "Truncate", TFK_ATTR_BOOL, 1, { .b = 0 } },
		},
		.grad = grad_cast,
	},
	{
		.name = "BiasAdd",
		.inputs = { { "value", .type_attr = "T" },
			    { "bias", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = {
			T_ATTR(FLOATS),
			{ "data_format", TFK_ATTR_STRING, 1,
			  { .s = { "NHWC", 4 } } },
		},
		.infer = infer_bias_add,
		.grad = grad_bias_add,
	},
	{
		.name = "Softmax",
		.inputs = { { "logits", .type_attr = "T" } },
		.outputs = { { "softmax", .type_attr = "T" } },
		.attrs = { T_ATTR(FLOATS) },
		.infer = infer_softmax,
		.grad = grad_softmax,
	},
	{
		.name = "Reshape",
		.inputs = { { "tensor", .type_attr = "T" },
			    { "shape", .type_attr = "Tshape" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = {
			T_ATTR(0),
			{ "Tshape", TFK_ATTR_TYPE, 1,
			  { .type = TFK_DT_INT32 }, INDEX },
		},
		.infer = infer_reshape,
		.grad = grad_reshape,
	},
	{
		.name = "ZerosLike",
		.inputs = { { "x", .type_attr = "T" } },
		.outputs = { { "y", .type_attr = "T" } },
		.attrs = { T_ATTR(NUMBERS | TFK_DT_BIT(TFK_DT_BOOL) |
				  TFK_DT_BIT(TFK_DT_INT8) |
				  TFK_DT_BIT(TFK_DT_UINT8) |
				  TFK_DT_BIT(TFK_DT_INT16)) },
	},
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_elementwise[] = {
	{ "AddV2", "cpu", NULL, k_add, NULL },
	{ "Sub", "cpu", NULL, k_sub, NULL },
	{ "Mul", "cpu", NULL, k_mul, NULL },
	{ "RealDiv", "cpu", NULL, k_div, NULL },
	{ "Maximum", "cpu", NULL, k_max, NULL },
	{ "Minimum", "cpu", NULL, k_min, NULL },
	{ "Pow", "cpu", NULL, k_pow, NULL },
	{ "SquaredDifference", "cpu", NULL, k_sqdiff, NULL },
	{ "Relu", "cpu", NULL, k_relu, NULL },
	{ "Sigmoid", "cpu", NULL, k_sigmoid, NULL },
	{ "Tanh", "cpu", NULL, k_tanh, NULL },
	{ "Neg", "cpu", NULL, k_neg, NULL },
	{ "Abs", "cpu", NULL, k_abs, NULL },
	{ "Square", "cpu", NULL, k_square, NULL },
	{ "Sqrt", "cpu", NULL, k_sqrt, NULL },
	{ "Rsqrt", "cpu", NULL, k_rsqrt, NULL },
	{ "Exp", "cpu", NULL, k_exp, NULL },
	{ "Log", "cpu", NULL, k_log, NULL },
	{ "Log1p", "cpu", NULL, k_log1p, NULL },
	{ "Sign", "cpu", NULL, k_sign, NULL },
	{ "Floor", "cpu", NULL, k_floor, NULL },
	{ "SigmoidGrad", "cpu", NULL, k_sigmoid_grad, NULL },
	{ "TanhGrad", "cpu", NULL, k_tanh_grad, NULL },
	{ "SqrtGrad", "cpu", NULL, k_sqrt_grad, NULL },
	{ "RsqrtGrad", "cpu", NULL, k_rsqrt_grad, NULL },
	{ "Greater", "cpu", NULL, k_greater, NULL },
	{ "GreaterEqual", "cpu", NULL, k_greater_equal, NULL },
	{ "Less", "cpu", NULL, k_less, NULL },
	{ "LessEqual", "cpu", NULL, k_less_equal, NULL },
	{ "Equal", "cpu", NULL, k_equal, NULL },
	{ "NotEqual", "cpu", NULL, k_not_equal, NULL },
	{ "LogicalAnd", "cpu", NULL, k_logical_and, NULL },
	{ "SelectV2", "cpu", NULL, k_select, NULL },
	{ "ReluGrad", "cpu", NULL, k_relu_grad, NULL },
	{ "Identity", "cpu", NULL, k_copy, NULL },
	{ "Cast", "cpu", s_cast, k_cast, NULL },
	{ "BiasAdd", "cpu", NULL, k_bias_add, NULL },
	{ "Softmax", "cpu", NULL, k_softmax, NULL },
	{ "Reshape", "cpu", NULL, k_copy, NULL },
	{ "ZerosLike", "cpu", NULL, k_zeros, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
