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
	TFK_BIN_MIN,		/* Minimum: likewise */
	/* float and double only: */
	TFK_BIN_POW,		/* Pow */
	TFK_BIN_SQDIFF,		/* SquaredDifference: (x - y)^2 */
	TFK_BIN_SIGMOID_GRAD,	/* SigmoidGrad(y, dy): dy * y * (1 - y) */
	TFK_BIN_TANH_GRAD,	/* TanhGrad(y, dy): dy * (1 - y^2) */
	TFK_BIN_SQRT_GRAD,	/* SqrtGrad(y, dy): dy * 0.5 / y */
	TFK_BIN_RSQRT_GRAD	/* RsqrtGrad(y, dy): dy * -0.5 * y^3 */
};

enum tfk_unop {
	TFK_UN_RELU,		/* max(x, 0); NaN stays NaN */
	TFK_UN_SIGMOID,		/* 1 / (1 + exp(-x)) */
	TFK_UN_TANH,
	TFK_UN_NEG,		/* Neg */
	TFK_UN_ABS,		/* Abs */
	TFK_UN_SQUARE,		/* Square */
	TFK_UN_SQRT,		/* Sqrt */
	TFK_UN_RSQRT,		/* Rsqrt: 1 / sqrt(x) */
	TFK_UN_EXP,		/* Exp */
	TFK_UN_LOG,		/* Log */
	TFK_UN_LOG1P,		/* Log1p: log(1 + x) */
	TFK_UN_SIGN,		/* Sign: -1, 0, 1; NaN stays NaN */
	TFK_UN_FLOOR		/* Floor */
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
 * tfk_cpu_sgemm/dgemm call OpenBLAS's sgemm/dgemm, except small
 * float32 shapes with B not transposed, which take an AVX-512 kernel
 * where the CPU has one (see matmul.c). tfk_cpu_sgemm_mt is
 * tfk_cpu_sgemm splitting that kernel's rows over up to `threads`
 * threads; its result does not depend on `threads`.
 */
void tfk_cpu_sgemm_ref(int ta, int tb, int64_t m, int64_t n, int64_t k,
		       const float *a, const float *b, float *c);
void tfk_cpu_sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k,
		   const float *a, const float *b, float *c);
void tfk_cpu_sgemm_mt(int ta, int tb, int64_t m, int64_t n, int64_t k,
		      const float *a, const float *b, float *c, int threads);
void tfk_cpu_dgemm_ref(int ta, int tb, int64_t m, int64_t n, int64_t k,
		       const double *a, const double *b, double *c);
void tfk_cpu_dgemm(int ta, int tb, int64_t m, int64_t n, int64_t k,
		   const double *a, const double *b, double *c);

/* bfloat16 products (bf16gemm.c) ------------------------------------------ */

/*
 * float32 <-> bfloat16: round to nearest, ties to even, NaN stays a
 * quiet NaN (TensorFlow's Cast); widening is exact.
 */
uint16_t tfk_bf16_round(float f);
float tfk_bf16_float(uint16_t h);

/*
 * C[m x n] = op(A) op(B) as tfk_cpu_sgemm, but every element of A and
 * B rounded to bfloat16 first and the exact products summed in float32
 * in VDPBF16PS's order: over pairs p of k, C += a[2p+1] b[2p+1], then
 * C += a[2p] b[2p] (each addition rounded; an odd k's last element has
 * a zero partner). The _ref is that loop; tfk_cpu_sbgemm_mt uses
 * AVX512-BF16 where the CPU has it (same result while no value is
 * subnormal: its rounding and dot products flush them) and a scalar
 * loop in the same order otherwise (bit-identical to the _ref), split
 * over up to `threads` threads (the result does not depend on it). Returns 0, or
 * TFK_ENOMEM when its packed copies cannot be allocated (C untouched).
 * tfk_cpu_have_avx512bf16: 1 when the fast path runs (CPU support and
 * TFK_BF16_SCALAR unset).
 */
void tfk_cpu_sbgemm_ref(int ta, int tb, int64_t m, int64_t n, int64_t k,
			const float *a, const float *b, float *c);
int tfk_cpu_sbgemm_mt(int ta, int tb, int64_t m, int64_t n, int64_t k,
		      const float *a, const float *b, float *c, int threads);
int tfk_cpu_have_avx512bf16(void);

/*
 * The packing steps of the bf16 kernels (bf16gemm.c, bf16conv.c):
 * tfk_bf16_pack_pairs: out[j] = bf16(r0[j]) | bf16(r1[j]) << 16 for j <
 * len (r1 NULL: 0 as the high half), two rows side by side;
 * tfk_bf16_pack_run: out[p] = bf16(x[2p]) | bf16(x[2p+1]) << 16 for p <
 * ceil(k / 2) (x[k] read as 0), a run paired with itself. vec 1 (only
 * where tfk_cpu_have_avx512bf16 says so) converts by VCVTNE2PS2BF16,
 * which reads and writes subnormals as zero; vec 0 by tfk_bf16_round.
 */
void tfk_bf16_pack_pairs(const float *r0, const float *r1, int64_t len,
			 uint32_t *out, int vec);
void tfk_bf16_pack_run(const float *x, int64_t k, uint32_t *out, int vec);

/*
 * TFLite's hybrid (dynamic-range) FULLY_CONNECTED, the op
 * TFLiteHybridMatMul: y[m x n] = x[m x k] w^T for int8 weights w[n x k]
 * and float x, as fully_connected.cc's EvalHybrid computes it. Each row
 * of x is quantized to int8 on its own: symmetric (asym 0: s = max|x| /
 * 127, q = round(x / s) by roundf, in [-127, 127]) or, asym 1,
 * asymmetric (tensor_utils::AsymmetricQuantizeFloats: the range
 * [min(0, min x), max(0, max x)] in double over [-128, 127], the zero
 * point z from whichever end errs less, rounded, and q = round(z + x *
 * (1 / s)) in float). An all-zero row is q = 0, s = 1. Then y = float(
 * sum w q - z * sum w) * (s * scale[j]), scale per output (n_scale = n)
 * or one (n_scale = 1); sums in int64, as TFLite's int32 where that
 * does not overflow. No bias or activation (graph nodes of their own).
 * q: k bytes of scratch (a row's quantized values).
 */
void tfk_cpu_hybrid_matmul_ref(int64_t m, int64_t n, int64_t k,
			       const float *x, const int8_t *w,
			       const float *scale, int64_t n_scale, int asym,
			       int8_t *q, float *y);

/*
 * OpenBLAS (blas.c), opened with dlopen on the first product that needs
 * it, so that tools which never make one do not pay its load time and
 * its spinning threads. tfk_cpu_blas_threads sets its thread count for
 * large products (applied at load if not loaded yet; <= 0: OpenBLAS's
 * default). tfk_cpu_blas_name loads it and says which library it is,
 * NULL if none could be opened. tfk_blas_* are the row-major products
 * with alpha 1 and beta 0 (split 0: on one thread); -1 when there is
 * no library, and the caller computes it another way.
 */
void tfk_cpu_blas_threads(int n);
const char *tfk_cpu_blas_name(void);
int tfk_blas_sgemm(int ta, int tb, int m, int n, int k, const float *a,
		   int lda, const float *b, int ldb, float *c, int ldc,
		   int split);
int tfk_blas_sgemv(int trans, int rows, int cols, const float *a, int lda,
		   const float *x, float *y);
int tfk_blas_dgemm(int ta, int tb, int m, int n, int k, const double *a,
		   int lda, const double *b, int ldb, double *c, int ldc);

/* Pooling, reductions, shape ops, comparisons (engineer POOL) ---------- */

/*
 * Comparisons of numbers (FLOAT, DOUBLE, INT32, INT64; EQUAL, NOT_EQUAL
 * also BOOL) and LogicalAnd of BOOLs, with numpy broadcasting, into a
 * BOOL out (one byte, 0 or 1). NaN compares unequal to everything (IEEE).
 */
enum tfk_cmpop {
	TFK_CMP_GREATER,	/* Greater */
	TFK_CMP_GREATER_EQUAL,	/* GreaterEqual */
	TFK_CMP_LESS,		/* Less */
	TFK_CMP_LESS_EQUAL,	/* LessEqual */
	TFK_CMP_EQUAL,		/* Equal */
	TFK_CMP_NOT_EQUAL,	/* NotEqual */
	TFK_CMP_AND		/* LogicalAnd (BOOL only) */
};
/* Fast float32 twins of ReluGrad, BiasAdd and Softmax (elementwise.c);
 * Softmax computes in float (exp(x - max) / sum), the _ref in double. */
int tfk_cpu_relu_grad(const struct tfk_tensor *dy, const struct tfk_tensor *x,
		      struct tfk_tensor *out, struct tfk_err *err);
int tfk_cpu_bias_add(const struct tfk_tensor *x, const struct tfk_tensor *bias,
		     struct tfk_tensor *out, struct tfk_err *err);
int tfk_cpu_softmax(const struct tfk_tensor *x, struct tfk_tensor *out,
		    struct tfk_err *err);

int tfk_cpu_compare_ref(enum tfk_cmpop op, const struct tfk_tensor *a,
			const struct tfk_tensor *b, struct tfk_tensor *out,
			struct tfk_err *err);
int tfk_cpu_compare(enum tfk_cmpop op, const struct tfk_tensor *a,
		    const struct tfk_tensor *b, struct tfk_tensor *out,
		    struct tfk_err *err);

/* SelectV2: out = cond ? t : e, the three broadcast together (cond
 * BOOL; t, e, out of one dtype, any fixed-size dtype). */
int tfk_cpu_select_ref(const struct tfk_tensor *cond,
		       const struct tfk_tensor *t, const struct tfk_tensor *e,
		       struct tfk_tensor *out, struct tfk_err *err);
int tfk_cpu_select(const struct tfk_tensor *cond, const struct tfk_tensor *t,
		   const struct tfk_tensor *e, struct tfk_tensor *out,
		   struct tfk_err *err);

/*
 * Reductions (reduce.c) over the axes with mask bit set (bit i = axis
 * i); out has x's rank with those dims 1 (keep_dims layout; the same
 * bytes serve keep_dims false). FLOAT, DOUBLE, INT32, INT64 (MEAN of
 * integers truncates, as TF). An empty reduction gives the identity
 * (0, 1, -inf/lowest for MAX, +inf/highest for MIN; MEAN of nothing is
 * NaN for floats). MAX/MIN propagate NaN.
 */
enum tfk_redop {
	TFK_RED_SUM,
	TFK_RED_MEAN,
	TFK_RED_MAX,
	TFK_RED_MIN,
	TFK_RED_PROD
};
int tfk_cpu_reduce_ref(enum tfk_redop op, const struct tfk_tensor *x,
		       unsigned mask, struct tfk_tensor *out,
		       struct tfk_err *err);
int tfk_cpu_reduce(enum tfk_redop op, const struct tfk_tensor *x,
		   unsigned mask, struct tfk_tensor *out, struct tfk_err *err);
/* ArgMax/ArgMin along axis (first index of the extreme, as TF); out is
 * INT32 or INT64 with x's shape minus that axis. min 0: ArgMax. */
int tfk_cpu_argmax_ref(const struct tfk_tensor *x, int axis, int min,
		       struct tfk_tensor *out, struct tfk_err *err);

/*
 * 2-D pooling, NHWC (pool.c). The geometry is TensorFlow's: VALID
 * gives oh = (h - kh) / sh + 1; SAME gives oh = ceil(h / sh) with
 * pad_total = max((oh - 1) * sh + kh - h, 0) and pad_top =
 * pad_total / 2 (the extra row, if any, at the bottom); likewise for
 * width. Padded positions never win a max and are not counted by the
 * average (AvgPool divides by the in-bounds count of each window).
 */
struct tfk_pool2d {
	int64_t n, h, w, c;	/* input */
	int64_t kh, kw, sh, sw;	/* window and strides */
	int64_t oh, ow;		/* output */
	int64_t pad_t, pad_l;	/* rows/cols before the input */
};
/* Fill p from the input shape, ksize/strides (4 values, NHWC order,
 * batch and channel entries 1) and padding ("SAME", "VALID").
 * 0 or TFK_EINVAL ("ksize [1, 0, 2, 1]: ...", "input 0: rank 3"). */
int tfk_pool2d_geom(struct tfk_pool2d *p, const int64_t *in_shape,
		    const int64_t *ksize, const int64_t *strides,
		    const char *padding, struct tfk_err *err);
/* x [n,h,w,c] -> y [n,oh,ow,c]; FLOAT or DOUBLE (_ref), FLOAT fast,
 * other dtypes falling back to the _ref. threads <= 1: inline. */
int tfk_cpu_max_pool_ref(const struct tfk_pool2d *p,
			 const struct tfk_tensor *x, struct tfk_tensor *y,
			 struct tfk_err *err);
int tfk_cpu_max_pool(const struct tfk_pool2d *p, const struct tfk_tensor *x,
		     struct tfk_tensor *y, int threads, struct tfk_err *err);
/* MaxPoolGrad: dx (x's shape) = dy routed to the first maximum of each
 * window in row-major window order (as TF's CPU kernel), summed where
 * windows overlap. */
int tfk_cpu_max_pool_grad_ref(const struct tfk_pool2d *p,
			      const struct tfk_tensor *x,
			      const struct tfk_tensor *dy,
			      struct tfk_tensor *dx, struct tfk_err *err);
int tfk_cpu_max_pool_grad(const struct tfk_pool2d *p,
			  const struct tfk_tensor *x,
			  const struct tfk_tensor *dy, struct tfk_tensor *dx,
			  int threads, struct tfk_err *err);
int tfk_cpu_avg_pool_ref(const struct tfk_pool2d *p,
			 const struct tfk_tensor *x, struct tfk_tensor *y,
			 struct tfk_err *err);
int tfk_cpu_avg_pool(const struct tfk_pool2d *p, const struct tfk_tensor *x,
		     struct tfk_tensor *y, int threads, struct tfk_err *err);
/* AvgPoolGrad: each dy spread evenly over its window's in-bounds
 * elements. */
int tfk_cpu_avg_pool_grad_ref(const struct tfk_pool2d *p,
			      const struct tfk_tensor *dy,
			      struct tfk_tensor *dx, struct tfk_err *err);
int tfk_cpu_avg_pool_grad(const struct tfk_pool2d *p,
			  const struct tfk_tensor *dy, struct tfk_tensor *dx,
			  int threads, struct tfk_err *err);

/*
 * Data movement (shape.c); any fixed-size dtype (not STRING).
 * Transpose: out.shape[i] = x.shape[perm[i]].
 * StridedSlice in canonical form: out[i...] = x[begin + i * strides]
 * per dim (out's shape gives the counts; strides may be negative).
 * Pad: out[...] = x[... - pads[2d]] inside, value outside (pads holds
 * rank (before, after) pairs).
 * Tile: out[i...] = x[i % x.shape ...].
 * ConcatV2: the n inputs along axis.
 * BroadcastTo: x broadcast (numpy rules) to out's shape.
 */
int tfk_cpu_transpose_ref(const struct tfk_tensor *x, const int *perm,
			  struct tfk_tensor *out, struct tfk_err *err);
int tfk_cpu_transpose(const struct tfk_tensor *x, const int *perm,
		      struct tfk_tensor *out, struct tfk_err *err);
int tfk_cpu_strided_slice_ref(const struct tfk_tensor *x,
			      const int64_t *begin, const int64_t *strides,
			      struct tfk_tensor *out, struct tfk_err *err);
int tfk_cpu_pad_ref(const struct tfk_tensor *x, const int64_t *pads,
		    double value, struct tfk_tensor *out,
		    struct tfk_err *err);
int tfk_cpu_tile_ref(const struct tfk_tensor *x, struct tfk_tensor *out,
		     struct tfk_err *err);
int tfk_cpu_concat_ref(const struct tfk_tensor *const *xs, int n, int axis,
		       struct tfk_tensor *out, struct tfk_err *err);
int tfk_cpu_broadcast_to_ref(const struct tfk_tensor *x,
			     struct tfk_tensor *out, struct tfk_err *err);

/* NN ops (nn.c) -------------------------------------------------------- */

enum tfk_act {
	TFK_ACT_RELU6,		/* min(max(x, 0), 6) */
	TFK_ACT_ELU,		/* x < 0 ? exp(x) - 1 : x */
	TFK_ACT_SELU,		/* scale * (x < 0 ? alpha (exp(x) - 1) : x) */
	TFK_ACT_LEAKY_RELU,	/* x > 0 ? x : alpha * x */
	TFK_ACT_SOFTPLUS,	/* log(1 + exp(x)), TF's cut-offs at
				 * log(eps) + 2 */
	TFK_ACT_ERF
};

/* out = f(x), FLOAT or DOUBLE, same shape; alpha is LeakyRelu's. */
int tfk_cpu_act_ref(enum tfk_act op, float alpha, const struct tfk_tensor *x,
		    struct tfk_tensor *out, struct tfk_err *err);
int tfk_cpu_act(enum tfk_act op, float alpha, const struct tfk_tensor *x,
		struct tfk_tensor *out, struct tfk_err *err);
/*
 * TF's <Op>Grad: out = backprops from gradients dy and v, where v is
 * the forward output for Relu6, Elu, Selu (as TF's gradients pass it)
 * and the features for LeakyRelu, Softplus. Erf: TFK_EINVAL (no grad
 * op; its gradient is built from Exp, Square, Neg, Mul).
 */
int tfk_cpu_act_grad_ref(enum tfk_act op, float alpha,
			 const struct tfk_tensor *dy,
			 const struct tfk_tensor *v, struct tfk_tensor *out,
			 struct tfk_err *err);
int tfk_cpu_act_grad(enum tfk_act op, float alpha,
		     const struct tfk_tensor *dy, const struct tfk_tensor *v,
		     struct tfk_tensor *out, struct tfk_err *err);

/* LogSoftmax along the last axis: x - max - log(sum(exp(x - max))). */
int tfk_cpu_log_softmax_ref(const struct tfk_tensor *x,
			    struct tfk_tensor *out, struct tfk_err *err);
int tfk_cpu_log_softmax(const struct tfk_tensor *x, struct tfk_tensor *out,
			struct tfk_err *err);

/*
 * SoftmaxCrossEntropyWithLogits: features and labels [b, c] -> loss[b]
 * = sum_j labels * (logsumexp - features), backprop [b, c] = softmax -
 * labels. The sparse form takes int32/int64 labels [b] in [0, c) (else
 * TFK_EINVAL "row R: received a label value of L which is outside the
 * valid range of [0, C)"), backprop = softmax - onehot.
 */
int tfk_cpu_xent_ref(const struct tfk_tensor *features,
		     const struct tfk_tensor *labels, struct tfk_tensor *loss,
		     struct tfk_tensor *backprop, struct tfk_err *err);
int tfk_cpu_xent(const struct tfk_tensor *features,
		 const struct tfk_tensor *labels, struct tfk_tensor *loss,
		 struct tfk_tensor *backprop, struct tfk_err *err);
int tfk_cpu_sparse_xent_ref(const struct tfk_tensor *features,
			    const struct tfk_tensor *labels,
			    struct tfk_tensor *loss,
			    struct tfk_tensor *backprop, struct tfk_err *err);
int tfk_cpu_sparse_xent(const struct tfk_tensor *features,
			const struct tfk_tensor *labels,
			struct tfk_tensor *loss, struct tfk_tensor *backprop,
			struct tfk_err *err);

/* FusedBatchNormV3's attrs. */
struct tfk_bn {
	float epsilon;
	float avg_factor;	/* exponential_avg_factor */
	int is_training;
};

/*
 * FusedBatchNormV3 on a channels-last x (rank 2..5, c = last dim),
 * scale/offset/mean/var [c], all of x's dtype (FLOAT or DOUBLE).
 * Training: y normalizes with the batch mean and the biased batch
 * variance; batch_mean = mean, batch_var = the unbiased (n / (n - 1))
 * variance, each blended as (1 - f) * input + f * batch when avg_factor
 * f != 1 (mean/var are then read, else they may be NULL or empty);
 * rs1/rs2 = batch mean and biased variance (what the grad needs).
 * Inference: y with mean/var; batch_mean/var and rs1/rs2 copy them.
 * The fast form threads over row chunks (threads <= 0: 1) and uses
 * work[tfk_cpu_batch_norm_work(c, threads)] doubles (NULL: allocates).
 */
int tfk_cpu_batch_norm_ref(const struct tfk_bn *p, const struct tfk_tensor *x,
			   const struct tfk_tensor *scale,
			   const struct tfk_tensor *offset,
			   const struct tfk_tensor *mean,
			   const struct tfk_tensor *var, struct tfk_tensor *y,
			   struct tfk_tensor *batch_mean,
			   struct tfk_tensor *batch_var,
			   struct tfk_tensor *rs1, struct tfk_tensor *rs2,
			   struct tfk_err *err);
int tfk_cpu_batch_norm(const struct tfk_bn *p, const struct tfk_tensor *x,
		       const struct tfk_tensor *scale,
		       const struct tfk_tensor *offset,
		       const struct tfk_tensor *mean,
		       const struct tfk_tensor *var, struct tfk_tensor *y,
		       struct tfk_tensor *batch_mean,
		       struct tfk_tensor *batch_var, struct tfk_tensor *rs1,
		       struct tfk_tensor *rs2, int threads, double *work,
		       struct tfk_err *err);
size_t tfk_cpu_batch_norm_work(int64_t channels, int threads);
/*
 * FusedBatchNormGradV3: rs1/rs2 are the mean and variance the forward
 * normalized with (batch stats in training, population in inference).
 * dscale = sum(dy * xhat), doffset = sum(dy); training dx = scale *
 * rsqrt(var + eps) * (dy - mean(dy) - xhat * mean(dy * xhat)),
 * inference dx = dy * scale * rsqrt(var + eps).
 */
int tfk_cpu_batch_norm_grad_ref(const struct tfk_bn *p,
				const struct tfk_tensor *dy,
				const struct tfk_tensor *x,
				const struct tfk_tensor *scale,
				const struct tfk_tensor *rs1,
				const struct tfk_tensor *rs2,
				struct tfk_tensor *dx,
				struct tfk_tensor *dscale,
				struct tfk_tensor *doffset,
				struct tfk_err *err);
int tfk_cpu_batch_norm_grad(const struct tfk_bn *p,
			    const struct tfk_tensor *dy,
			    const struct tfk_tensor *x,
			    const struct tfk_tensor *scale,
			    const struct tfk_tensor *rs1,
			    const struct tfk_tensor *rs2,
			    struct tfk_tensor *dx, struct tfk_tensor *dscale,
			    struct tfk_tensor *doffset, int threads,
			    double *work, struct tfk_err *err);

/* Random (random.c): element i from tfk_rng_u64(key, i) (normal: pair
 * i / 2 from counters 2 (i / 2) and 2 (i / 2) + 1, Box-Muller), so the
 * values depend on key and index only, never on threads. */
/* Uniform [0, 1): float (u >> 40) * 2^-24, double (u >> 11) * 2^-53. */
int tfk_cpu_random_uniform_ref(uint64_t key, struct tfk_tensor *out,
			       struct tfk_err *err);
int tfk_cpu_random_uniform(uint64_t key, struct tfk_tensor *out, int threads,
			   struct tfk_err *err);
int tfk_cpu_random_normal_ref(uint64_t key, struct tfk_tensor *out,
			      struct tfk_err *err);
int tfk_cpu_random_normal(uint64_t key, struct tfk_tensor *out, int threads,
			  struct tfk_err *err);

/* Gather (gather.c) */
/*
 * GatherV2 (batch_dims 0): out = params[:axis] x indices x
 * params[axis+1:], any fixed-size dtype or STRING (pairs copied).
 * Index outside [0, params.shape[axis]): TFK_EINVAL "indices[2,1] = 12
 * is not in [0, 10)".
 */
int tfk_cpu_gather_ref(const struct tfk_tensor *params,
		       const struct tfk_tensor *indices, int axis,
		       struct tfk_tensor *out, struct tfk_err *err);
int tfk_cpu_gather(const struct tfk_tensor *params,
		   const struct tfk_tensor *indices, int axis,
		   struct tfk_tensor *out, struct tfk_err *err);
/*
 * UnsortedSegmentSum: out [num_segments, data.shape[ids.rank:]...] =
 * sums of data's slices by segment id; negative ids are dropped (as
 * TF); an id >= num_segments is TFK_EINVAL "segment_ids[3] = 7 is out
 * of range [0, 5)". FLOAT, DOUBLE, INT32, INT64.
 */
int tfk_cpu_segment_sum_ref(const struct tfk_tensor *data,
			    const struct tfk_tensor *ids,
			    struct tfk_tensor *out, struct tfk_err *err);
int tfk_cpu_segment_sum(const struct tfk_tensor *data,
			const struct tfk_tensor *ids, struct tfk_tensor *out,
			struct tfk_err *err);

/* Convolution (conv.c, engineer CONV) --------------------------------- */

enum { TFK_CONV_VALID, TFK_CONV_SAME, TFK_CONV_EXPLICIT };

/* The attrs of a Conv2D-family node, checked: strides and dilations in
 * NHWC order (batch and depth entries 1), padding TFK_CONV_*, pads the 8
 * explicit_paddings (before/after per NHWC dim; 0 unless EXPLICIT). */
struct tfk_conv2d_attrs {
	int64_t strides[4], dilations[4], pads[8];
	int padding;
};

/*
 * Geometry of a 2-D convolution, NHWC, TensorFlow's rules: effective
 * filter size ek = (k - 1) * d + 1; VALID: o = (i - ek + s) / s; SAME:
 * o = ceil(i / s), pad_total = max((o - 1) * s + ek - i, 0), pad before
 * = pad_total / 2 (the extra one after); EXPLICIT: o = (i + before +
 * after - ek + s) / s. Output pixel (oy, ox), tap (ky, kx) reads input
 * (oy * sh - pt + ky * dh, ox * sw - pl + kx * dw), zero outside.
 * Conv2D: filter [kh, kw, kc, o], groups = c / kc, output channel j
 * reads input channels [j / (o / groups) * kc, + kc). Depthwise: filter
 * [kh, kw, c, mult], o = c * mult, output channel j reads input channel
 * j / mult (kc 1, groups c).
 */
struct tfk_conv2d {
	int64_t n, h, w, c;	/* input */
	int64_t kh, kw, kc, o;	/* filter and output channels */
	int64_t groups, mult;
	int depthwise;
	int64_t sh, sw, dh, dw;	/* strides, dilations */
	int64_t oh, ow;		/* output */
	int64_t pt, pb, pl, pr;	/* padding: top, bottom, left, right */
};

/*
 * Fill g from the input shape [n, h, w, c], the filter shape and the
 * attrs. Unknown dims (-1, while a graph is built) give -1 for what
 * depends on them. 0 or TFK_EINVAL ("input 1: filter in channels 3 do
 * not divide the input's 8", "input 0: height 3 is smaller than the
 * filter's effective height 5 (3 with padding)").
 */
int tfk_conv2d_geom(struct tfk_conv2d *g, const int64_t *in,
		    const int64_t *filter, int depthwise,
		    const struct tfk_conv2d_attrs *a, struct tfk_err *err);

/* Scratch the fast kernels keep between calls (grows, never shrinks):
 * zero-initialize, release with tfk_conv_ws_release. */
struct tfk_conv_ws {
	void *p;
	size_t cap;
};
void tfk_conv_ws_release(struct tfk_conv_ws *ws);

/*
 * y [n, oh, ow, o] = conv(x [n, h, w, c], f); FLOAT or DOUBLE (the _ref
 * accumulates in double). The fast versions take FLOAT Conv2D (others go
 * to the _ref), split rows over `threads` (results do not depend on it)
 * and may fail only with TFK_ENOMEM growing ws.
 */
int tfk_cpu_conv2d_ref(const struct tfk_conv2d *g, const struct tfk_tensor *x,
		       const struct tfk_tensor *f, struct tfk_tensor *y,
		       struct tfk_err *err);
int tfk_cpu_conv2d(const struct tfk_conv2d *g, const struct tfk_tensor *x,
		   const struct tfk_tensor *f, struct tfk_tensor *y,
		   int threads, struct tfk_conv_ws *ws, struct tfk_err *err);
/* dx [n, h, w, c] = d(sum(y * dy)) / dx (Conv2DBackpropInput). */
int tfk_cpu_conv2d_bp_input_ref(const struct tfk_conv2d *g,
				const struct tfk_tensor *f,
				const struct tfk_tensor *dy,
				struct tfk_tensor *dx, struct tfk_err *err);
int tfk_cpu_conv2d_bp_input(const struct tfk_conv2d *g,
			    const struct tfk_tensor *f,
			    const struct tfk_tensor *dy, struct tfk_tensor *dx,
			    int threads, struct tfk_conv_ws *ws,
			    struct tfk_err *err);
/* df (f's shape) = d(sum(y * dy)) / df (Conv2DBackpropFilter). */
int tfk_cpu_conv2d_bp_filter_ref(const struct tfk_conv2d *g,
				 const struct tfk_tensor *x,
				 const struct tfk_tensor *dy,
				 struct tfk_tensor *df, struct tfk_err *err);
int tfk_cpu_conv2d_bp_filter(const struct tfk_conv2d *g,
			     const struct tfk_tensor *x,
			     const struct tfk_tensor *dy,
			     struct tfk_tensor *df, int threads,
			     struct tfk_conv_ws *ws, struct tfk_err *err);
/*
 * The instruction set of the fast conv loops: want NULL returns the
 * current one ("c", "avx2", "avx512"; the best the CPU has, by
 * default); a name selects it when the CPU has it (returns it) or
 * changes nothing (returns NULL). For tests and benchmarks; not
 * thread-safe against running kernels.
 */
const char *tfk_cpu_conv_isa(const char *want);

/*
 * Carve n regions of sizes[i] bytes, each 64-byte aligned, out of ws
 * into ptr[i], growing ws when it is too small (the contents do not
 * survive a growth). 0 or TFK_ENOMEM (err names the size).
 */
int tfk_conv_ws_carve(struct tfk_conv_ws *ws, void **ptr,
		      const size_t *sizes, int n, struct tfk_err *err);

/*
 * Conv2D and its two backprops with bfloat16 products (bf16conv.c;
 * Keras' mixed_bfloat16, a node flagged TFK_NODE_BF16): float32 in and
 * out, every input and filter element rounded to bfloat16
 * (tfk_bf16_round) and the exact products summed in float32 in
 * VDPBF16PS's pair order, one chain per output starting at +0:
 *  - forward, y[n, oy, ox, o]: taps (ky, kx) in order; per tap the
 *    group's kc input channels in pairs (2q, 2q+1), the odd one's
 *    product added first, then the even one's; an odd kc's last
 *    channel alone (a zero partner). With kc 1 the pairs are taps
 *    instead: per filter row ky, taps (2q, 2q+1) (odd first; an odd
 *    kw's last alone). Taps in the padding read 0.
 *  - backprop input, dx[n, iy, ix, c]: the same over the out_backprop
 *    spread by the strides, taps (ky, kx) from (kh - 1, kw - 1) down to
 *    (0, 0), the group's og output channels in pairs; where a tap
 *    lands between or beyond output pixels it reads 0.
 *  - backprop filter, df[ky, kx, c, o]: the n * oh output rows cut
 *    into B = min(n * oh, 8) blocks, block b = rows [rows b / B,
 *    rows (b + 1) / B); each block a chain over its rows in order, a
 *    row's pixels in pairs (2q, 2q+1) (odd first; an odd ow's last
 *    alone); then df = ((s_0 + s_1) + s_2) + ... in float32.
 * The _ref functions are those loops, the specification; the others
 * run AVX512-BF16 where tfk_cpu_have_avx512bf16 says so and a scalar
 * loop in the same order otherwise, bit-identical to the _ref while
 * inputs are finite and no input, bf16 operand or partial sum is
 * subnormal (the instructions flush those; the _ref does not). Rows
 * split over `threads`; results do not depend on it. FLOAT Conv2D
 * only (not depthwise): else TFK_EINVAL; TFK_ENOMEM growing ws.
 */
int tfk_cpu_conv2d_bf16_ref(const struct tfk_conv2d *g,
			    const struct tfk_tensor *x,
			    const struct tfk_tensor *f, struct tfk_tensor *y,
			    struct tfk_err *err);
int tfk_cpu_conv2d_bf16(const struct tfk_conv2d *g, const struct tfk_tensor *x,
			const struct tfk_tensor *f, struct tfk_tensor *y,
			int threads, struct tfk_conv_ws *ws,
			struct tfk_err *err);
int tfk_cpu_conv2d_bp_input_bf16_ref(const struct tfk_conv2d *g,
				     const struct tfk_tensor *f,
				     const struct tfk_tensor *dy,
				     struct tfk_tensor *dx,
				     struct tfk_err *err);
int tfk_cpu_conv2d_bp_input_bf16(const struct tfk_conv2d *g,
				 const struct tfk_tensor *f,
				 const struct tfk_tensor *dy,
				 struct tfk_tensor *dx, int threads,
				 struct tfk_conv_ws *ws, struct tfk_err *err);
int tfk_cpu_conv2d_bp_filter_bf16_ref(const struct tfk_conv2d *g,
				      const struct tfk_tensor *x,
				      const struct tfk_tensor *dy,
				      struct tfk_tensor *df,
				      struct tfk_err *err);
int tfk_cpu_conv2d_bp_filter_bf16(const struct tfk_conv2d *g,
				  const struct tfk_tensor *x,
				  const struct tfk_tensor *dy,
				  struct tfk_tensor *df, int threads,
				  struct tfk_conv_ws *ws, struct tfk_err *err);

#endif
