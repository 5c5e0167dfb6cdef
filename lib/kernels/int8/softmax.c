/*
 * softmax.c - int8/uint8 SOFTMAX as TensorFlow Lite's interpreter runs
 * it.
 *
 * Two integer softmaxes exist in TFLite: reference_ops::Softmax, the
 * gemmlowp fixed-point one (exp_on_negative_values, Newton-Raphson
 * reciprocal) that TFLite Micro keeps, and the lookup-table form of
 * optimized_ops::Softmax. TFLite 2.x's activations.cc sends 8-bit input
 * to the table form for every kernel type (SoftmaxPrepare fills the
 * table with PopulateSoftmaxLookupTable; SoftmaxQuantized calls
 * optimized_ops::Softmax), so that is the one matched here: what
 * tf.lite.Interpreter prints is what tfk-lite run prints. The table
 * holds expf of the scaled distance to the row's max in float; the sum
 * runs in float in index order (the order matters for the last bit).
 */
#include "kernels/int8.h"

#include <math.h>
#include <string.h>

int tfk_int8_softmax_init(struct tfk_int8_softmax *s, float beta,
			  const struct tfk_int8_qp *in,
			  const struct tfk_int8_qp *out, int is_uint8,
			  struct tfk_err *err)
{
	float scale;
	int32_t v, lo = is_uint8 ? 0 : -128, hi = is_uint8 ? 255 : 127;

	memset(s, 0, sizeof(*s));
	if (!in || !in->scale || in->n != 1 || !out || !out->scale ||
	    out->n != 1)
		return tfk_errf(err, TFK_EINVAL, "softmax: want one scale per "
				"tensor");
	if (!(in->scale[0] > 0) || !isfinite(in->scale[0]) ||
	    !(out->scale[0] > 0) || !isfinite(out->scale[0]))
		return tfk_errf(err, TFK_EINVAL, "softmax: scales %g, %g: not "
				"positive finite numbers",
				(double)in->scale[0], (double)out->scale[0]);
	if (!isfinite(beta))
		return tfk_errf(err, TFK_EINVAL, "softmax: beta %g", beta);
	if (out->zp && (out->zp[0] < lo || out->zp[0] > hi))
		return tfk_errf(err, TFK_EINVAL, "softmax: output zero_point "
				"%d is outside [%d, %d]", (int)out->zp[0],
				(int)lo, (int)hi);
	/* PopulateSoftmaxLookupTable: scale = -input_scale * beta */
	scale = -in->scale[0] * beta;
	for (v = 0; v <= 255; v++)
		s->table[255 - v] = expf(scale * (float)v);
	s->out_scale = out->scale[0];
	s->out_zp = out->zp ? out->zp[0] : 0;
	s->is_uint8 = is_uint8;
	return 0;
}

void tfk_int8_softmax_ref(const struct tfk_int8_softmax *s, int64_t rows,
			  int64_t depth, const void *x, void *y)
{
	const int8_t *xi = x;
	const uint8_t *xu = x;
	int8_t *yi = y;
	uint8_t *yu = y;
	int32_t lo = s->is_uint8 ? 0 : -128, hi = s->is_uint8 ? 255 : 127;
	int64_t i, j;

#define X(k) (s->is_uint8 ? (int32_t)xu[k] : (int32_t)xi[k])
	for (i = 0; i < rows; i++) {
		int64_t base = i * depth;
		int32_t mx = lo;
		const float *t;
		float sum = 0, inv;

		for (j = 0; j < depth; j++)
			mx = X(base + j) > mx ? X(base + j) : mx;
		/* &table[255 - max], indexed by the value itself */
		t = s->table + 255 - mx;
		for (j = 0; j < depth; j++)
			sum += t[X(base + j)];
		inv = 1.0f / (sum * s->out_scale);
		for (j = 0; j < depth; j++) {
			float p = t[X(base + j)] * inv;
			int32_t q;

			/* QuantizeSoftmaxOutput: round(); uint8 on x86:
			 * + 0.5f and truncation */
			p = s->is_uint8 ? p + 0.5f : roundf(p);
			/* a tiny output scale: saturate (NaN from 0 * inf
			 * too) before the conversion, which would overflow */
			if (!(p <= 1024.0f))
				p = 1024.0f;
			else if (p < -1024.0f)
				p = -1024.0f;
			q = (int32_t)p + s->out_zp;
			q = q < lo ? lo : q > hi ? hi : q;
			if (s->is_uint8)
				yu[base + j] = (uint8_t)q;
			else
				yi[base + j] = (int8_t)q;
		}
	}
#undef X
}
