/*
 * int8.h - the int8 backend: TFLite's integer kernels as plain functions.
 *
 * The arithmetic is TensorFlow Lite's, bit for bit: int32 accumulation,
 * requantization by a Q0.31 multiplier and a power-of-two shift with
 * gemmlowp's two roundings (SaturatingRoundingDoublingHighMul, then
 * RoundingDivideByPOT; TFLite built without TFLITE_SINGLE_ROUNDING, its
 * default), multipliers made by QuantizeMultiplier from the tensors'
 * float scales exactly as the TFLite op's Prepare makes them. Each
 * family file (lib/kernels/int8/<family>.c) holds a _ref function, the
 * specification (TFLite's reference_integer_ops semantics); FC and
 * CONV_2D also have a fast path (AVX-512 VNNI or AVX2) that t-int8
 * checks bit-exact against the _ref. tests/py/int8_ref.py is the
 * independent numpy model both are checked against.
 *
 * Layouts are TFLite's: activations NHWC; a CONV_2D filter is OHWI
 * [o, kh, kw, kc]; a DEPTHWISE_CONV_2D filter is [1, kh, kw, c * mult]
 * (output channel j = input channel j / mult); a FULLY_CONNECTED
 * weight is [out, in]; biases are int32 [o]. Per-channel weights are
 * quantized along the output channel (TFLite's quantized_dimension 0
 * for CONV_2D and FULLY_CONNECTED, 3 for DEPTHWISE_CONV_2D).
 *
 * Functions take raw buffers that do not overlap (except where said)
 * and cannot fail once their params were made, unless they say so;
 * the _init functions check the quantization parameters (scales must
 * be finite and > 0, zero points inside the type) and return 0 or
 * TFK_EINVAL with a message naming what is wrong.
 */
#ifndef TFK_KERNELS_INT8_H
#define TFK_KERNELS_INT8_H

#include "kernels/cpu.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/* Fixed-point arithmetic (quant.c) -------------------------------------- */

/*
 * QuantizeMultiplier (quantization_util.cc): m = q * 2^shift with q in
 * [0.5, 1) (frexp), *qm = round(q * 2^31) (half away from zero; 2^31
 * becomes 2^30 with shift + 1); m == 0 and shift < -31 give qm 0,
 * shift 0. Negative m gives a negative qm. TFK_EINVAL for a non-finite
 * m ("multiplier nan").
 */
int tfk_int8_quantize_multiplier(double m, int32_t *qm, int *shift,
				 struct tfk_err *err);

/* gemmlowp's SaturatingRoundingDoublingHighMul: a * b / 2^31 rounded
 * to nearest, ties up (its nudge of 2^30, or 1 - 2^30 below 0, then a
 * truncating division: -1.5 gives -1), INT32_MAX for INT32_MIN^2. */
int32_t tfk_int8_srdhm(int32_t a, int32_t b);

/* gemmlowp's RoundingDivideByPOT: x / 2^exponent rounded to nearest,
 * ties away from zero; exponent in [0, 31]. */
int32_t tfk_int8_rdbpot(int32_t x, int exponent);

/*
 * MultiplyByQuantizedMultiplier (common.h, double rounding):
 * rdbpot(srdhm(x * 2^max(shift, 0), qm), max(-shift, 0)). The left
 * shift wraps modulo 2^32 where TFLite's would overflow.
 */
int32_t tfk_int8_mbqm(int32_t x, int32_t qm, int shift);

/* A fused activation, TFLite's ActivationFunctionType numbering. */
enum tfk_int8_act {
	TFK_INT8_ACT_NONE = 0,
	TFK_INT8_ACT_RELU = 1,
	TFK_INT8_ACT_RELU_N1_TO_1 = 2,
	TFK_INT8_ACT_RELU6 = 3
	/* TANH (4) and SIGN_BIT (5) cannot be fused into integer kernels */
};

/*
 * CalculateActivationRangeQuantized: the output clamp [*lo, *hi] in
 * the quantized domain of (scale, zp) for type range [qmin, qmax]: RELU
 * max(qmin, q(0)) .. qmax, RELU6 .. min(qmax, q(6)), RELU_N1_TO_1
 * q(-1) .. q(1), where q(f) = zp + round(f / scale) in float. Other
 * activations: TFK_EINVAL "fused activation 4 is not supported".
 */
int tfk_int8_act_range(int act, float scale, int32_t zp, int32_t qmin,
		       int32_t qmax, int32_t *lo, int32_t *hi,
		       struct tfk_err *err);

/* A tensor's quantization: per tensor (n 1) or per channel (n > 1). */
struct tfk_int8_qp {
	const float *scale;
	const int32_t *zp;	/* NULL: all 0 */
	int64_t n;
};

/*
 * Requantization of an int32 accumulator, per output channel: y =
 * clamp(mbqm(acc, mult[ch], shift[ch]) + out_offset, act_min,
 * act_max). The accumulator of a conv-like op is sum (w + w_offset) *
 * (x + in_offset) + bias (in_offset = -input zp, w_offset = -filter zp).
 */
struct tfk_int8_rq {
	int64_t n;		/* channels */
	int32_t *mult;		/* [n] */
	int32_t *shift;		/* [n] */
	int32_t in_offset, w_offset, out_offset;
	int32_t act_min, act_max;
};

/*
 * Params of CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED as TFLite's
 * Prepare makes them (PopulateConvolutionQuantizationParams):
 * mult[ch], shift[ch] = QuantizeMultiplier((double)in_scale *
 * (double)w_scale[ch] / (double)out_scale), one scale for all channels
 * when w has one; int8 input and output (zero points in [-128, 127]);
 * filter zero points must be 0 when per channel.
 * channels is the op's output channels; w.n must be 1 or channels.
 * Allocates mult/shift; release with tfk_int8_rq_release (NULL-safe).
 */
int tfk_int8_rq_init(struct tfk_int8_rq *rq, int64_t channels,
		     const struct tfk_int8_qp *in, const struct tfk_int8_qp *w,
		     const struct tfk_int8_qp *out, int act,
		     struct tfk_err *err);
void tfk_int8_rq_release(struct tfk_int8_rq *rq);

/* y[i] = requantized acc[i] for channel i % rq->n, i in [0, n). */
void tfk_int8_requant_ref(const struct tfk_int8_rq *rq, const int32_t *acc,
			  int64_t n, int8_t *y);

/* FULLY_CONNECTED (fc.c) ------------------------------------------------- */

/*
 * y [batch, out] = requant(sum_k (w[o, k] + w_offset) * (x[b, k] +
 * in_offset) + bias[o]); w [out, in], bias [out] or NULL; rq->n = out.
 * The reference_integer_ops::FullyConnected(PerChannel) loop.
 */
void tfk_int8_fc_ref(const struct tfk_int8_rq *rq, int64_t batch,
		     int64_t in, int64_t out, const int8_t *x,
		     const int8_t *w, const int32_t *bias, int8_t *y);

/*
 * Weights [n, k] (FC's [out, in], CONV_2D's OHWI as [o, kh * kw * kc])
 * repacked once for the fast kernels: k rounded up to 4, n to 16, in
 * the layouts the instruction sets read, with each row's sum (the +128
 * correction: the fast kernels feed x + 128 as unsigned bytes).
 */
struct tfk_int8_packed {
	int64_t n, k, kp, np;
	int64_t tap_c;		/* tfk_int8_pack_conv: channels per tap */
	int64_t row_k;		/* _pack_conv_rows: bytes per filter row */
	int8_t *w4;		/* [kp / 4][np][4]: vpdpbusd's layout */
	int16_t *w2;		/* [kp / 2][np][2]: vpmaddwd's layout */
	int32_t *wsum;		/* [np] */
};
int tfk_int8_pack(struct tfk_int8_packed *p, int64_t n, int64_t k,
		  const int8_t *w, struct tfk_err *err);
/* A CONV_2D filter OHWI [o, kh, kw, kc] packed for tfk_int8_conv2d,
 * each tap's channels padded with zero weights to a multiple of 4 so
 * that the VNNI kernel can read the input in place (a first layer's
 * c = 1 or 3 included). tfk_int8_pack of [o, kh * kw * kc] serves too. */
int tfk_int8_pack_conv(struct tfk_int8_packed *p, int64_t o, int64_t kh,
		       int64_t kw, int64_t kc, const int8_t *f,
		       struct tfk_err *err);
/* The same filter with each filter row's kw * kc bytes padded to a
 * multiple of 4 instead of each tap (c = 1, kw = 5: 8 bytes a row, not
 * 20): for width dilation 1, where a row's taps lie together in the
 * input, whose next bytes then meet the zero weights. */
int tfk_int8_pack_conv_rows(struct tfk_int8_packed *p, int64_t o,
			    int64_t kh, int64_t kw, int64_t kc,
			    const int8_t *f, struct tfk_err *err);
void tfk_int8_packed_release(struct tfk_int8_packed *p);

/*
 * The fast FC: same result as tfk_int8_fc_ref for the weights p was
 * packed from (w_offset must be 0: TFLite's int8 filters are
 * symmetric; else TFK_EINVAL). Rows split over threads (results do not
 * depend on it); ws as the float conv's (zero-initialize, release with
 * tfk_conv_ws_release). TFK_ENOMEM growing ws.
 */
int tfk_int8_fc(const struct tfk_int8_rq *rq, const struct tfk_int8_packed *p,
		int64_t batch, const int8_t *x, const int32_t *bias, int8_t *y,
		int threads, struct tfk_conv_ws *ws, struct tfk_err *err);

/*
 * The instruction set of the fast FC/CONV_2D: want NULL returns the
 * current one ("c", "avx2", "avx512vnni"; the best the CPU has, by
 * default); a name selects it when the CPU has it (returns it) or
 * changes nothing (returns NULL). For tests and benchmarks.
 */
const char *tfk_int8_isa(const char *want);

/* CONV_2D, DEPTHWISE_CONV_2D (conv.c) ------------------------------------ */

/*
 * g from tfk_conv2d_geom with TF's filter shape [kh, kw, kc, o] (for a
 * TFLite OHWI filter [o, kh, kw, kc]) or, depthwise, [kh, kw, c, mult]
 * (TFLite's [1, kh, kw, c * mult] is the same bytes). SAME/VALID,
 * strides and dilations are TFLite's rules, which are TF's.
 * reference_integer_ops::ConvPerChannel: padded taps are skipped (the
 * real value 0); groups = c / kc as TFLite's grouped conv.
 */
void tfk_int8_conv2d_ref(const struct tfk_conv2d *g,
			 const struct tfk_int8_rq *rq, const int8_t *x,
			 const int8_t *f, const int32_t *bias, int8_t *y);
/* The fast CONV_2D from f packed by tfk_int8_pack_conv (or as [o, kh *
 * kw * kc] by tfk_int8_pack): same result as the _ref, for a geometry
 * and filter that tfk_int8_conv2d_fast takes (else TFK_EINVAL: call the
 * _ref). Threads and ws as tfk_int8_fc; TFK_ENOMEM growing ws. */
/* 1 when tfk_int8_conv2d runs g: groups 1, w_offset 0, and dilations
 * that keep its zero-padded copy of the input within 4 times the area
 * of the input plus a window, or 64 MiB (a far-reaching dilation would
 * make it mostly padding, gigabytes for a small input, where the _ref
 * skips those taps). */
int tfk_int8_conv2d_fast(const struct tfk_conv2d *g,
			 const struct tfk_int8_rq *rq);
int tfk_int8_conv2d(const struct tfk_conv2d *g, const struct tfk_int8_rq *rq,
		    const int8_t *x, const struct tfk_int8_packed *p,
		    const int32_t *bias, int8_t *y, int threads,
		    struct tfk_conv_ws *ws, struct tfk_err *err);
/* reference_integer_ops::DepthwiseConvPerChannel. */
void tfk_int8_dwconv2d_ref(const struct tfk_conv2d *g,
			   const struct tfk_int8_rq *rq, const int8_t *x,
			   const int8_t *f, const int32_t *bias, int8_t *y);

/* Pooling (pool.c) ------------------------------------------------------- */

/*
 * p from tfk_pool2d_geom; input and output share scale and zero point
 * (TFLite requires it); [act_min, act_max] the fused activation's
 * clamp (tfk_int8_act_range) or the type range. MAX_POOL_2D: max of
 * the in-bounds taps. AVERAGE_POOL_2D: acc over the in-bounds taps, c
 * their count, (acc + c / 2) / c for acc > 0 else (acc - c / 2) / c
 * (C division), then the clamp.
 */
void tfk_int8_max_pool_ref(const struct tfk_pool2d *p, int32_t act_min,
			   int32_t act_max, const int8_t *x, int8_t *y);
void tfk_int8_avg_pool_ref(const struct tfk_pool2d *p, int32_t act_min,
			   int32_t act_max, const int8_t *x, int8_t *y);
/* AVERAGE_POOL_2D of uint8 values held as int8 (v - 128; act_min,
 * act_max likewise moved): reference_ops::AveragePool's uint8 rounding,
 * (sum + count / 2) / count of the uint8 values, moved back. */
void tfk_int8_avg_pool_u8_ref(const struct tfk_pool2d *p, int32_t act_min,
			      int32_t act_max, const int8_t *x, int8_t *y);
/* The same three, bit-identical to their _refs and faster (one bounds
 * computation per window, the channels vectorized, output rows split
 * over threads: the result does not depend on them). */
void tfk_int8_max_pool(const struct tfk_pool2d *p, int32_t act_min,
		       int32_t act_max, const int8_t *x, int8_t *y,
		       int threads);
void tfk_int8_avg_pool(const struct tfk_pool2d *p, int32_t act_min,
		       int32_t act_max, const int8_t *x, int8_t *y,
		       int threads);
void tfk_int8_avg_pool_u8(const struct tfk_pool2d *p, int32_t act_min,
			  int32_t act_max, const int8_t *x, int8_t *y,
			  int threads);

/* MEAN (reduce.c) -------------------------------------------------------- */

/*
 * MEAN of an int8 tensor over some axes, as TFLite's reduce.cc (see
 * reduce.c for both formulas): with keep_dims, rank 4 and the axes
 * exactly {1, 2}, reference_integer_ops::Mean (sum (x - in_zp), mbqm by
 * QuantizeMultiplier(in_scale / out_scale), divided by the count
 * rounding half away from zero, + out_zp); otherwise
 * QuantizedMeanOrSum (the 1/count folded into the multiplier). axes
 * may be negative or repeated (TFLite's ResolveAxis). Per-tensor
 * parameters only; TFK_EINVAL for an axis out of range, a bad scale or
 * zero point, or more than 2^31 reduced elements.
 */
struct tfk_int8_mean {
	int rank;
	int64_t shape[TFK_MAX_RANK];	/* the input's */
	uint8_t reduce[TFK_MAX_RANK];	/* 1: axis reduced */
	int64_t count;			/* elements per output */
	int hw;				/* reference_integer_ops::Mean */
	int32_t mult;
	int shift;
	int32_t in_zp, out_zp;
	int u8;			/* tfk_int8_mean_u8 */
	int32_t u8_bias;
};
int tfk_int8_mean_init(struct tfk_int8_mean *m, const struct tfk_int8_qp *in,
		       const struct tfk_int8_qp *out, int rank,
		       const int64_t *shape, const int32_t *axes, int n_axes,
		       int keep_dims, struct tfk_err *err);
/*
 * m (made by tfk_int8_mean_init from the moved parameters of uint8
 * values held as int8, v - 128) for TFLite's uint8 MEAN: in the "hw"
 * case its own formula, reference_ops::Mean for uint8 (acc = sum of
 * the uint8 values; y = clamp(mbqm(acc, QuantizeMultiplier(in_scale /
 * (count * out_scale))) + out_zp - (int)(in_zp * in_scale / out_scale
 * +- 0.5f), 0, 255), in_zp and out_zp the uint8 ones); otherwise
 * QuantizedMeanOrSum, which reads only v - zp, unchanged. 0 or
 * TFK_EINVAL.
 */
int tfk_int8_mean_u8(struct tfk_int8_mean *m, float in_scale, int32_t in_zp,
		     float out_scale, int32_t out_zp, struct tfk_err *err);
/* Output elements (the kept dimensions' product; the layout is the
 * same with or without keep_dims). */
int64_t tfk_int8_mean_outputs(const struct tfk_int8_mean *m);
/* y[tfk_int8_mean_outputs(m)] = the mean of x (m's input shape). */
void tfk_int8_mean_ref(const struct tfk_int8_mean *m, const int8_t *x,
		       int8_t *y);

/* ADD, SUB, MUL (elementwise.c) ------------------------------------------ */

/*
 * ADD and SUB as TFLite's int8 kernels (add.cc / sub.cc Prepare,
 * reference_integer_ops::Add): left_shift 20, twice = 2 * max(s1, s2),
 * m1 = s1 / twice, m2 = s2 / twice (negated for SUB), mo = twice /
 * (2^20 * so), each by QuantizeMultiplier (< 1); per element
 * v = mbqm((x1 - zp1) << 20, m1) + mbqm((x2 - zp2) << 20, m2), y =
 * clamp(mbqm(v, mo) + zpo). MUL (mul.cc): y = clamp(zpo + mbqm((x1 -
 * zp1) * (x2 - zp2), s1 * s2 / so)). Per-tensor params only. dt is
 * TFK_DT_INT8, or TFK_DT_UINT8 for the legacy uint8 models (same
 * arithmetic, zero points and clamps in [0, 255]).
 */
enum tfk_int8_binop { TFK_INT8_ADD, TFK_INT8_SUB, TFK_INT8_MUL };
struct tfk_int8_bin {
	enum tfk_int8_binop op;
	int is_uint8;
	int32_t in1_offset, in2_offset, out_offset;
	int32_t left_shift;
	int32_t in1_mult, in2_mult, out_mult;
	int in1_shift, in2_shift, out_shift;
	int32_t act_min, act_max;
};
int tfk_int8_bin_init(struct tfk_int8_bin *b, enum tfk_int8_binop op,
		      enum tfk_dtype dt, const struct tfk_int8_qp *in1,
		      const struct tfk_int8_qp *in2,
		      const struct tfk_int8_qp *out, int act,
		      struct tfk_err *err);
/*
 * y = x1 OP x2 (bytes of b's dtype) with numpy broadcasting of shapes
 * s1 (rank r1) and s2 (rank r2) into y's shape (tfk_shape_broadcast;
 * rank <= 8), as TFLite's BroadcastAdd/Mul. TFK_EINVAL when the shapes do not
 * broadcast.
 */
int tfk_int8_bin_ref(const struct tfk_int8_bin *b, int r1, const int64_t *s1,
		     const void *x1, int r2, const int64_t *s2,
		     const void *x2, void *y, struct tfk_err *err);

/* RELU, RELU6, RELU_N1_TO_1, LOGISTIC, TANH (activation.c) ------------- */

/*
 * The standalone int8 activations as TFLite runs them (activations.cc).
 * RELU / RELU_N1_TO_1 / RELU6 (ReluPrepare, QuantizedReluX): y = clamp(
 * out_zp + mbqm(x - in_zp, QuantizeMultiplier(in_scale / out_scale)),
 * lo, hi), lo = max(-128, out_zp + roundf(min / out_scale)), hi
 * likewise from max (127 for RELU's infinity). LOGISTIC and TANH
 * (EvalUsingLookupTable, LUTPopulate): a 256-entry table, entry v =
 * clamp((int)(roundf(f(in_scale * (v - in_zp)) * (1 / out_scale)) +
 * out_zp)) in float, f(v) = 1 / (1 + expf(-v)) or tanhf(v). TFLite wants
 * LOGISTIC's output at 1/256, -128 and TANH's at 1/128, 0; any is taken.
 */
enum tfk_int8_unop {
	TFK_INT8_RELU,
	TFK_INT8_RELU_N1_TO_1,
	TFK_INT8_RELU6,
	TFK_INT8_LOGISTIC,
	TFK_INT8_TANH
};
struct tfk_int8_lut {
	int8_t table[256];	/* indexed by the input byte */
};
int tfk_int8_lut_init(struct tfk_int8_lut *a, enum tfk_int8_unop op,
		      const struct tfk_int8_qp *in,
		      const struct tfk_int8_qp *out, struct tfk_err *err);
/* y[i] = table[(uint8_t)x[i]]; x and y may be the same buffer. */
void tfk_int8_lut_ref(const struct tfk_int8_lut *a, int64_t n,
		      const int8_t *x, int8_t *y);

/* SOFTMAX (softmax.c) ---------------------------------------------------- */

/*
 * TFLite's int8/uint8 SOFTMAX as its interpreter runs it on x86
 * (activations.cc SoftmaxPrepare: PopulateSoftmaxLookupTable;
 * optimized_ops::Softmax, which every kernel type of TFLite 2.x uses for
 * 8-bit input; arm64 clang builds use a uint16 table instead):
 * table[255 - v] = expf(-in_scale * beta * v) in float; per row, max m,
 * sum = float sum of table[255 - m + x] in order, inv = 1 / (sum *
 * out_scale), y = clamp(round(table[255 - m + x] * inv) + out_zp)
 * (uint8 output: (int)(p + 0.5f) + zp, as TFLite's x86 build). TFLite
 * insists on out_scale 1/256 and out_zp -128 (int8; 0 for uint8); this
 * takes any.
 */
struct tfk_int8_softmax {
	float table[256];
	float out_scale;
	int32_t out_zp;
	int is_uint8;		/* input and output uint8 */
};
int tfk_int8_softmax_init(struct tfk_int8_softmax *s, float beta,
			  const struct tfk_int8_qp *in,
			  const struct tfk_int8_qp *out, int is_uint8,
			  struct tfk_err *err);
/* rows x depth, along the last axis; x and y as int8 or uint8 bytes;
 * they may be the same buffer (each value is read before it is
 * written). */
void tfk_int8_softmax_ref(const struct tfk_int8_softmax *s, int64_t rows,
			  int64_t depth, const void *x, void *y);

/* QUANTIZE, DEQUANTIZE (quantize.c) -------------------------------------- */

/*
 * QUANTIZE float -> int8/uint8 (reference_ops::AffineQuantize): q =
 * clamp((int)round(x / scale) + zp) with x / scale in float (round:
 * half away from zero; beyond int32 and NaN: see quantize.c, TFLite's
 * cast is undefined there). Per tensor; dt TFK_DT_INT8 or UINT8.
 */
int tfk_int8_quantize_ref(const struct tfk_int8_qp *q, enum tfk_dtype dt,
			  int64_t n, const float *x, void *y,
			  struct tfk_err *err);
/*
 * DEQUANTIZE: y = (float)((double)scale * (q - zp)). Per channel along
 * axis `axis` of shape (rank, shape) when q->n > 1 (TFLite's
 * PerChannelDequantize), else per tensor. dt INT8, UINT8 or INT32.
 */
int tfk_int8_dequantize_ref(const struct tfk_int8_qp *q, enum tfk_dtype dt,
			    int rank, const int64_t *shape, int axis,
			    const void *x, float *y, struct tfk_err *err);
/*
 * QUANTIZE int8/uint8 -> int8/uint8 (reference_ops::Requantize):
 * y = clamp(mbqm(x - in_zp, QuantizeMultiplier(in_scale / out_scale))
 * + out_zp). x and y may be the same buffer.
 */
int tfk_int8_requantize_ref(const struct tfk_int8_qp *in, enum tfk_dtype in_dt,
			    const struct tfk_int8_qp *out,
			    enum tfk_dtype out_dt, int64_t n, const void *x,
			    void *y, struct tfk_err *err);

/*
 * CONCATENATION's rescaling of a uint8 input whose parameters differ
 * from its output's (reference_ops::ConcatenationWithScaling), on uint8
 * values held as int8 (v - 128) with the uint8 zero points: y =
 * clamp((int)round(v * s + b) + out_zp, 0, 255) in float, s = in_scale
 * * (1 / out_scale), b = -in_zp * s.
 */
void tfk_int8_rescale_u8_ref(float in_scale, int32_t in_zp, float out_scale,
			     int32_t out_zp, int64_t n, const int8_t *x,
			     int8_t *y);

#endif
