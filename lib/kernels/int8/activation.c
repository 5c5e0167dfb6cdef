/*
 * activation.c - int8 RELU, RELU_N1_TO_1, RELU6, LOGISTIC, TANH.
 *
 * Every one of them maps each of the 256 input bytes to one output
 * byte, so each is a table made at init; the table is filled with
 * TFLite's own per-value arithmetic. The RELUs are a requantization
 * (ReluX: MultiplyByQuantizedMultiplier by in_scale / out_scale) and a
 * clamp; LOGISTIC and TANH are TFLite's LUTPopulate: dequantize in
 * float, the float function, round(v * (1 / out_scale)) + zp. TFLite's
 * kFixedPointOptimized int8 LOGISTIC/TANH (Logistic16bitPrecision) is
 * not the default kernel and is not matched.
 */
#include "kernels/int8.h"

#include <math.h>
#include <string.h>

static int bad(const struct tfk_int8_qp *q)
{
	return !q || !q->scale || q->n != 1 || !(q->scale[0] > 0) ||
	       !isfinite(q->scale[0]) || (q->zp && (q->zp[0] < -128 ||
						    q->zp[0] > 127));
}

int tfk_int8_lut_init(struct tfk_int8_lut *a, enum tfk_int8_unop op,
		      const struct tfk_int8_qp *in,
		      const struct tfk_int8_qp *out, struct tfk_err *err)
{
	float is, os;
	int32_t iz, oz, v;

	memset(a, 0, sizeof(*a));
	if (bad(in) || bad(out))
		return tfk_errf(err, TFK_EINVAL, "%s: want one positive finite "
				"scale and a zero point in [-128, 127]",
				bad(in) ? "input" : "output");
	is = in->scale[0];
	os = out->scale[0];
	iz = in->zp ? in->zp[0] : 0;
	oz = out->zp ? out->zp[0] : 0;
	if (op <= TFK_INT8_RELU6) {
		static const float lo_f[] = { 0, -1, 0 }, hi_f[] = { 0, 1, 6 };
		int32_t mult, lo, hi;
		int shift, rc;
		float r;

		rc = tfk_int8_quantize_multiplier((double)is / (double)os,
						  &mult, &shift, err);
		if (rc)
			return rc;
		/* roundf(min / scale) as QuantizedReluX; saturated */
		r = roundf(lo_f[op] / os);
		lo = r < -256 ? -128 : oz + (int32_t)r;
		lo = lo < -128 ? -128 : lo;
		hi = 127;
		if (op != TFK_INT8_RELU) {
			r = roundf(hi_f[op] / os);
			hi = r > 256 ? 127 : oz + (int32_t)r;
			hi = hi > 127 ? 127 : hi;
		}
		for (v = -128; v <= 127; v++) {
			int32_t y = oz + tfk_int8_mbqm(v - iz, mult, shift);

			y = y < lo ? lo : y > hi ? hi : y;
			a->table[(uint8_t)v] = (int8_t)y;
		}
		return 0;
	}
	if (op != TFK_INT8_LOGISTIC && op != TFK_INT8_TANH)
		return tfk_errf(err, TFK_EINVAL, "activation %d", (int)op);
	{
		const float inv = 1 / os;

		for (v = -128; v <= 127; v++) {
			float d = is * (float)(v - iz);
			float t = op == TFK_INT8_LOGISTIC ?
				  1.0f / (1.0f + expf(-d)) : tanhf(d);
			float r = roundf(t * inv) + (float)oz;
			int32_t q = r > 1e6f ? 127 : r < -1e6f ? -128 :
				    (int32_t)r;

			q = q < -128 ? -128 : q > 127 ? 127 : q;
			a->table[(uint8_t)v] = (int8_t)q;
		}
	}
	return 0;
}

void tfk_int8_lut_ref(const struct tfk_int8_lut *a, int64_t n,
		      const int8_t *x, int8_t *y)
{
	int64_t i;

	for (i = 0; i < n; i++)
		y[i] = a->table[(uint8_t)x[i]];
}
