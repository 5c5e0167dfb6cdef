/*
 * elementwise.c - elementwise ops with numpy broadcasting, activations,
 * Cast, BiasAdd, Softmax, and the data movement (Identity, Reshape) and
 * reduction (Sum, ZerosLike) the gradients of broadcasting ops need.
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
 * Gradients of broadcasting ops reduce dy back to the input's shape with
 * Sum: leading axes the input lacks (keep_dims false), then axes where
 * the input has 1 (keep_dims true) - TF's BroadcastGradientArgs done at
 * build time, as the shapes are static but for the batch dimension.
 */
#include "kernels/cpu.h"
#include "graph/graph.h"
#include "util/alloc.h"

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
	if (!(TFK_DT_BIT(a->dtype) & (op == TFK_BIN_DIV ? FLOATS : NUMBERS)))
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
	case TFK_BIN_DIV: break;
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
	}								\
} while (0)

#define ROW_OPS_I(T, U) do {						\
	switch (op) {							\
	case TFK_BIN_ADD: ROW(T, (T)((U)x + (U)y)); break;		\
	case TFK_BIN_SUB: ROW(T, (T)((U)x - (U)y)); break;		\
	case TFK_BIN_MUL: ROW(T, (T)((U)x * (U)y)); break;		\
	case TFK_BIN_MAX: ROW(T, x > y ? x : y); break;			\
	case TFK_BIN_MIN: ROW(T, x < y ? x : y); break;			\
	case TFK_BIN_DIV: break;					\
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

/* float32 in float arithmetic (the _ref goes through double) */
static void unary_f32(enum tfk_unop op, int64_t n, const float *x, float *o)
{
	int64_t i;

	switch (op) {
	case TFK_UN_RELU:
		for (i = 0; i < n; i++)
			o[i] = x[i] > 0 ? x[i] : x[i] != x[i] ? x[i] : 0;
		break;
	case TFK_UN_SIGMOID:
		for (i = 0; i < n; i++)
			o[i] = 1 / (1 + expf(-x[i]));
		break;
	case TFK_UN_TANH:
		for (i = 0; i < n; i++)
			o[i] = tanhf(x[i]);
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
	char b1[128], b2[128];
	int i;

	if (ic->in[0].rank >= 0 && ic->in[1].rank >= 0) {
		int bad = ic->in[0].rank != ic->in[1].rank;

		for (i = 0; !bad && i < ic->in[0].rank; i++)
			bad = ic->in[0].shape[i] >= 0 &&
				ic->in[1].shape[i] >= 0 &&
				ic->in[0].shape[i] != ic->in[1].shape[i];
		if (bad)
			return tfk_errf(ic->err, TFK_EINVAL, "input 1: shape "
					"%s, input 0 is %s",
					tfk_shape_str(ic->in[1].rank,
						      ic->in[1].shape, b1,
						      sizeof(b1)),
					tfk_shape_str(ic->in[0].rank,
						      ic->in[0].shape, b2,
						      sizeof(b2)));
	}
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

/* Reduction axes of a Sum node as a bit mask over rank r. */
static int sum_mask(const struct tfk_tensor *axes, int r, unsigned *mask,
		    struct tfk_err *err)
{
	int64_t v[TFK_MAX_RANK * 2];
	int n, i;

	*mask = 0;
	if (const_ints(axes, v, TFK_MAX_RANK * 2, &n))
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

static int infer_sum(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *x = &ic->in[0];
	int keep = tfk_node_attr_b(ic->node, "keep_dims", 0), i, r = 0, rc;
	unsigned mask;

	if (!ic->in_value[1])
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: reduction "
				"axes must be a Const");
	if (x->rank < 0)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: rank unknown");
	rc = sum_mask(ic->in_value[1], x->rank, &mask, ic->err);
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

/* Kernels ---------------------------------------------------------------- */

static enum tfk_binop binop_of(const struct tfk_node *n)
{
	const char *s = n->op->name;

	return !strcmp(s, "AddV2") ? TFK_BIN_ADD :
		!strcmp(s, "Sub") ? TFK_BIN_SUB :
		!strcmp(s, "Mul") ? TFK_BIN_MUL :
		!strcmp(s, "RealDiv") ? TFK_BIN_DIV :
		!strcmp(s, "Maximum") ? TFK_BIN_MAX : TFK_BIN_MIN;
}

static int k_binary(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_binary(binop_of(kc->node), kc->in[0], kc->in[1],
			      kc->out[0], kc->err);
}

static int k_unary(struct tfk_kernel_ctx *kc)
{
	const char *s = kc->node->op->name;
	enum tfk_unop op = !strcmp(s, "Relu") ? TFK_UN_RELU :
		!strcmp(s, "Sigmoid") ? TFK_UN_SIGMOID : TFK_UN_TANH;

	return tfk_cpu_unary(op, kc->in[0], kc->out[0], kc->err);
}

static int k_relu_grad(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_relu_grad_ref(kc->in[0], kc->in[1], kc->out[0],
				     kc->err);
}

static int k_cast(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_cast_ref(kc->in[0], kc->out[0], kc->err);
}

static int s_cast(const struct tfk_node *n)
{
	return (TFK_DT_BIT(tfk_node_attr_type(n, "SrcT", 0)) & CASTABLE) &&
		(TFK_DT_BIT(tfk_node_attr_type(n, "DstT", 0)) & CASTABLE);
}

static int k_bias_add(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_bias_add_ref(kc->in[0], kc->in[1], kc->out[0], kc->err);
}

static int k_softmax(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_softmax_ref(kc->in[0], kc->out[0], kc->err);
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

static int k_sum(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0];
	struct tfk_tensor view = *kc->out[0];
	unsigned mask;
	int i, rc;

	rc = sum_mask(kc->in[1], x->rank, &mask, kc->err);
	if (rc)
		return rc;
	view.rank = x->rank;
	for (i = 0; i < x->rank; i++)
		view.shape[i] = (mask >> i) & 1 ? 1 : x->shape[i];
	return tfk_cpu_sum_ref(x, mask, &view, kc->err);
}

/* Gradients -------------------------------------------------------------- */

/* dy reduced to the shape of port x (see the top comment). */
static int reduce_like(struct tfk_grad_ctx *gc, struct tfk_port dy,
		       struct tfk_port x, struct tfk_port *out)
{
	const struct tfk_tdesc *tx = tfk_graph_desc(gc->g, x);
	const struct tfk_tdesc *ty = tfk_graph_desc(gc->g, dy);
	int32_t axes[TFK_MAX_RANK];
	struct tfk_port in[2];
	struct tfk_attr keep = TFK_A_BOOL("keep_dims", 0);
	int lead, n = 0, i, rc;

	if (tx->rank < 0 || ty->rank < 0)
		return tfk_errf(gc->err, TFK_EINVAL, "node %s: gradient needs "
				"known ranks", gc->node->name);
	if (tfk_shape_equal(tx->rank, tx->shape, ty->rank, ty->shape)) {
		*out = dy;
		return 0;
	}
	lead = ty->rank - tx->rank;
	in[0] = dy;
	if (lead > 0) {
		for (i = 0; i < lead; i++)
			axes[i] = i;
		rc = tfk_graph_const_i32v(gc->g, gc->prefix, axes, lead,
					  &in[1], gc->err);
		if (!rc)
			rc = tfk_graph_add_node(gc->g, "Sum", gc->prefix, in, 2,
						&keep, 1, &in[0], gc->err);
		if (rc)
			return rc;
	}
	for (i = 0; i < tx->rank; i++)
		if (tx->shape[i] == 1 && ty->shape[lead + i] != 1)
			axes[n++] = i;
	if (n) {
		keep.v.b = 1;
		rc = tfk_graph_const_i32v(gc->g, gc->prefix, axes, n, &in[1],
					  gc->err);
		if (!rc)
			rc = tfk_graph_add_node(gc->g, "Sum", gc->prefix, in, 2,
						&keep, 1, &in[0], gc->err);
		if (rc)
			return rc;
	}
	*out = in[0];
	return 0;
}

static int grad_add(struct tfk_grad_ctx *gc)
{
	int rc = reduce_like(gc, gc->dy[0], gc->node->inputs[0], &gc->dx[0]);

	return rc ? rc : reduce_like(gc, gc->dy[0], gc->node->inputs[1],
				     &gc->dx[1]);
}

static int grad_mul(struct tfk_grad_ctx *gc)
{
	struct tfk_port in[2], p;
	int rc;

	if (!(TFK_DT_BIT(gc->node->outputs[0].dtype) & FLOATS))
		return 0;
	in[0] = gc->dy[0];
	in[1] = gc->node->inputs[1];
	rc = tfk_graph_add_node(gc->g, "Mul", gc->prefix, in, 2, NULL, 0, &p,
				gc->err);
	if (!rc)
		rc = reduce_like(gc, p, gc->node->inputs[0], &gc->dx[0]);
	if (rc)
		return rc;
	in[0] = gc->node->inputs[0];
	in[1] = gc->dy[0];
	rc = tfk_graph_add_node(gc->g, "Mul", gc->prefix, in, 2, NULL, 0, &p,
				gc->err);
	return rc ? rc : reduce_like(gc, p, gc->node->inputs[1], &gc->dx[1]);
}

/* TF's _ReluGrad: ReluGrad(dy, relu output); output > 0 iff input > 0. */
static int grad_relu(struct tfk_grad_ctx *gc)
{
	struct tfk_port in[2] = { gc->dy[0], { gc->node_id, 0 } };

	return tfk_graph_add_node(gc->g, "ReluGrad", gc->prefix, in, 2, NULL,
				  0, &gc->dx[0], gc->err);
}

/* BiasAdd: dx = dy, dbias = dy summed over all but the last axis (TF
 * adds a BiasAddGrad node; Sum is the same arithmetic). */
static int grad_bias_add(struct tfk_grad_ctx *gc)
{
	gc->dx[0] = gc->dy[0];
	return reduce_like(gc, gc->dy[0], gc->node->inputs[1], &gc->dx[1]);
}

/* Sum: dy (reshaped to keep_dims layout) broadcast back over x's shape
 * by adding it to ZerosLike(x) - TF reshapes and Tiles; the broadcast
 * add is the same values without a shape input known only at run time. */
static int grad_sum(struct tfk_grad_ctx *gc)
{
	struct tfk_port x = gc->node->inputs[0], in[2], kept = gc->dy[0];
	const struct tfk_tdesc *tx = tfk_graph_desc(gc->g, x);
	const struct tfk_tensor *axes = tfk_graph_const_value(
		gc->g, gc->node->inputs[1]);
	int32_t shape[TFK_MAX_RANK];
	unsigned mask;
	int i, rc, unk = 0;

	if (!axes || tx->rank < 0)
		return tfk_errf(gc->err, TFK_EINVAL, "node %s: gradient needs "
				"Const axes and a known rank", gc->node->name);
	rc = sum_mask(axes, tx->rank, &mask, gc->err);
	if (rc)
		return rc;
	if (!tfk_node_attr_b(gc->node, "keep_dims", 0)) {
		for (i = 0; i < tx->rank; i++) {
			shape[i] = (mask >> i) & 1 ? 1 : (int32_t)tx->shape[i];
			unk += shape[i] < 0;
		}
		if (unk > 1)
			return tfk_errf(gc->err, TFK_EINVAL, "node %s: "
					"gradient needs at most one unknown "
					"dim", gc->node->name);
		rc = tfk_graph_const_i32v(gc->g, gc->prefix, shape, tx->rank,
					  &in[1], gc->err);
		in[0] = gc->dy[0];
		if (!rc)
			rc = tfk_graph_add_node(gc->g, "Reshape", gc->prefix,
						in, 2, NULL, 0, &kept, gc->err);
		if (rc)
			return rc;
	}
	rc = tfk_graph_add_node(gc->g, "ZerosLike", gc->prefix, &x, 1, NULL,
				0, &in[0], gc->err);
	in[1] = kept;
	return rc ? rc : tfk_graph_add_node(gc->g, "AddV2", gc->prefix, in, 2,
					    NULL, 0, &gc->dx[0], gc->err);
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
#define UNARY(nm, g) {							\
	.name = nm,							\
	.inputs = { { "x", .type_attr = "T" } },			\
	.outputs = { { "y", .type_attr = "T" } },			\
	.attrs = { T_ATTR(FLOATS) },					\
	.grad = g,							\
}

const struct tfk_op_def tfk_ops_elementwise[] = {
	BINARY("AddV2", NUMBERS, grad_add),
	BINARY("Sub", NUMBERS, NULL),
	BINARY("Mul", NUMBERS, grad_mul),
	BINARY("RealDiv", FLOATS, NULL),
	BINARY("Maximum", NUMBERS, NULL),
	BINARY("Minimum", NUMBERS, NULL),
	UNARY("Relu", grad_relu),
	UNARY("Sigmoid", NULL),
	UNARY("Tanh", NULL),
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
	},
	{
		.name = "Sum",
		.inputs = { { "input", .type_attr = "T" },
			    { "reduction_indices", .type_attr = "Tidx" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = {
			{ "keep_dims", TFK_ATTR_BOOL, 1, { .b = 0 } },
			T_ATTR(NUMBERS),
			{ "Tidx", TFK_ATTR_TYPE, 1,
			  { .type = TFK_DT_INT32 }, INDEX },
		},
		.infer = infer_sum,
		.grad = grad_sum,
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
	{ "AddV2", "cpu", NULL, k_binary, NULL },
	{ "Sub", "cpu", NULL, k_binary, NULL },
	{ "Mul", "cpu", NULL, k_binary, NULL },
	{ "RealDiv", "cpu", NULL, k_binary, NULL },
	{ "Maximum", "cpu", NULL, k_binary, NULL },
	{ "Minimum", "cpu", NULL, k_binary, NULL },
	{ "Relu", "cpu", NULL, k_unary, NULL },
	{ "Sigmoid", "cpu", NULL, k_unary, NULL },
	{ "Tanh", "cpu", NULL, k_unary, NULL },
	{ "ReluGrad", "cpu", NULL, k_relu_grad, NULL },
	{ "Identity", "cpu", NULL, k_copy, NULL },
	{ "Cast", "cpu", s_cast, k_cast, NULL },
	{ "BiasAdd", "cpu", NULL, k_bias_add, NULL },
	{ "Softmax", "cpu", NULL, k_softmax, NULL },
	{ "Reshape", "cpu", NULL, k_copy, NULL },
	{ "Sum", "cpu", NULL, k_sum, NULL },
	{ "ZerosLike", "cpu", NULL, k_zeros, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
