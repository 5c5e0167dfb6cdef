/*
 * cpu.h - the CPU kernels as plain functions, and their _ref twins.
 *
 * Each family file (lib/kernels/cpu/<family>.c) holds, for its ops, the
 * op defs (schema, shape inference, gradient builder), the "cpu" kernels
 * that the registry (graph/op.h) runs, and the functions below. A _ref
 * function is plain, obvious C and is the specification; the function
 * without the suffix is the fast path the kernels use, tested against
 * the _ref in t-kernels (relative error bounds stated there). Where no
 * faster path exists yet the kernel calls the _ref itself.
 *
 * Tensors passed here are concrete and contiguous; out is preallocated
 * with the right dtype and shape (what the executor guarantees), and
 * never overlaps the inputs.
 */
#ifndef TFK_KERNELS_CPU_H
#define TFK_KERNELS_CPU_H

#include "graph/tensor.h"
#include "util/err.h"

#include <stdint.h>

/* Elementwise (elementwise.c) ----------------------------------------- */

enum tfk_binop {
	TFK_BIN_ADD,		/* AddV2 */
	TFK_BIN_SUB,		/* Sub */
	TFK_BIN_MUL,		/* Mul */
	TFK_BIN_DIV,		/* RealDiv (float, double only) */
	TFK_BIN_MAX,		/* Maximum: NaN if either is NaN, as TF */
	TFK_BIN_MIN		/* Minimum: likewise */
};

enum tfk_unop {
	TFK_UN_RELU,		/* max(x, 0); NaN stays NaN */
	TFK_UN_SIGMOID,		/* 1 / (1 + exp(-x)) */
	TFK_UN_TANH
};

/*
 * numpy broadcasting of shapes a and b into out (rank = max): dims are
 * aligned from the right; equal, or one of them 1, else an error
 * "shapes [2, 3] and [4] do not broadcast (dim 1: 3 vs 4)". Unknown
 * dims (-1): with 1 or -1 give -1, with n > 1 give n. 0 or TFK_EINVAL.
 */
int tfk_shape_broadcast(int ra, const int64_t *a, int rb, const int64_t *b,
			int *rout, int64_t *out, struct tfk_err *err);

/*
 * out = a OP b with broadcasting. dtypes: FLOAT, DOUBLE, and INT32,
 * INT64 for all ops but DIV (integer division by zero is not defined
 * here). a, b, out same dtype; out's shape the broadcast shape.
 * Returns 0 or TFK_EINVAL for an unsupported dtype/op or shapes.
 */
int tfk_cpu_binary_ref(enum tfk_binop op, const struct tfk_tensor *a,
		       const struct tfk_tensor *b, struct tfk_tensor *out,
		       struct tfk_err *err);
int tfk_cpu_binary(enum tfk_binop op, const struct tfk_tensor *a,
		   const struct tfk_tensor *b, struct tfk_tensor *out,
		   struct tfk_err *err);

/* out = f(x) elementwise; FLOAT or DOUBLE, same shape. */
int tfk_cpu_unary_ref(enum tfk_unop op, const struct tfk_tensor *x,
		      struct tfk_tensor *out, struct tfk_err *err);
int tfk_cpu_unary(enum tfk_unop op, const struct tfk_tensor *x,
		  struct tfk_tensor *out, struct tfk_err *err);

/* ReluGrad: out = features > 0 ? gradients : 0 (TF's definition). */
int tfk_cpu_relu_grad_ref(const struct tfk_tensor *dy,
			  const struct tfk_tensor *x, struct tfk_tensor *out,
			  struct tfk_err *err);

/*
 * Cast between FLOAT, DOUBLE, INT32, INT64, INT16, INT8, UINT8, BOOL
 * (same shape). Float to integer truncates toward zero (as TF) and,
 * where C leaves it undefined, saturates to the target range; NaN gives
 * 0. To BOOL: x != 0. Returns 0 or TFK_EINVAL for other dtypes.
 */
int tfk_cpu_cast_ref(const struct tfk_tensor *x, struct tfk_tensor *out,
		     struct tfk_err *err);

/* BiasAdd (NHWC): out[..., c] = x[..., c] + bias[c]; FLOAT, DOUBLE. */
int tfk_cpu_bias_add_ref(const struct tfk_tensor *x,
			 const struct tfk_tensor *bias,
			 struct tfk_tensor *out, struct tfk_err *err);

/* Softmax along the last axis, max-subtracted (FLOAT, DOUBLE). */
int tfk_cpu_softmax_ref(const struct tfk_tensor *x, struct tfk_tensor *out,
			struct tfk_err *err);

/*
 * Sum of x over the axes with mask bit set (bit i = axis i); out has
 * x's rank with those dims 1 (keep_dims layout; the same bytes serve
 * keep_dims false). FLOAT, DOUBLE, INT32, INT64.
 */
int tfk_cpu_sum_ref(const struct tfk_tensor *x, unsigned mask,
		    struct tfk_tensor *out, struct tfk_err *err);

/* MatMul (matmul.c) ---------------------------------------------------- */

/*
 * C[m x n] = op(A) op(B), row-major, op(X) = X or X^T: A is m x k (ta 0)
 * or k x m (ta 1), B is k x n (tb 0) or n x k (tb 1). C is overwritten.
 * The _ref is the triple loop (accumulating in the element type);
 * tfk_cpu_sgemm/dgemm call OpenBLAS cblas_sgemm/dgemm.
 */
void tfk_cpu_sgemm_ref(int ta, int tb, int64_t m, int64_t n, int64_t k,
		       const float *a, const float *b, float *c);
void tfk_cpu_sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k,
		   const float *a, const float *b, float *c);
void tfk_cpu_dgemm_ref(int ta, int tb, int64_t m, int64_t n, int64_t k,
		       const double *a, const double *b, double *c);
void tfk_cpu_dgemm(int ta, int tb, int64_t m, int64_t n, int64_t k,
		   const double *a, const double *b, double *c);

#endif
