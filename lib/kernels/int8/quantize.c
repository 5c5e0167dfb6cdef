/*
 * quantize.c - QUANTIZE (float -> int8/uint8, and 8-bit -> 8-bit
 * requantization) and DEQUANTIZE.
 *
 * reference_ops::AffineQuantize rounds x / scale in float (half away
 * from zero) and adds the zero point; its cast to int32 is undefined
 * for NaN and beyond the int32 range, where this saturates (so +-inf go
 * to the type's ends) and maps NaN to the zero point (the real 0).
 * Requantize is one MultiplyByQuantizedMultiplier by in_scale /
 * out_scale (quantize.cc); TFLite's int8 <-> uint8 shortcut (xor 0x80
 * when only the zero point moves by 128) gives the same bytes, so it
 * needs no case of its own.
 */
#include "kernels/int8.h"

#include <math.h>

/* roundf (half away from zero) without the library call, inlined: for
 * |v| < 2^23 truncation and the fraction v - t are exact; larger
 * magnitudes, infinities and NaN are already whole (or NaN) and come
 * back as they are. The same value as roundf but for the sign of a
 * zero, which the conversion to an integer drops. */
static inline float round_away(float v)
{
	float t;

	if (!(fabsf(v) < 8388608.0f))
		return v;
	t = (float)(int32_t)v;
	if (fabsf(v - t) >= 0.5f)
		t += v < 0 ? -1.0f : 1.0f;
	return t;
}

static int range(enum tfk_dtype dt, int32_t *lo, int32_t *hi)
{
	if (dt == TFK_DT_INT8) {
		*lo = -128;
		*hi = 127;
		return 0;
	}
	if (dt == TFK_DT_UINT8) {
		*lo = 0;
		*hi = 255;
		return 0;
	}
	return -1;
}

static int check(const struct tfk_int8_qp *q, int64_t i, int32_t lo,
		 int32_t hi, const char *what, struct tfk_err *err)
{
	float s = q->scale[i];

	if (!(s > 0) || !isfinite(s))
		return tfk_errf(err, TFK_EINVAL, "%s: scale[%lld] = %g is not "
				"a positive finite number", what, (long long)i,
				(double)s);
	if (q->zp && (q->zp[i] < lo || q->zp[i] > hi))
		return tfk_errf(err, TFK_EINVAL, "%s: zero_point[%lld] = %d "
				"is outside [%d, %d]", what, (long long)i,
				(int)q->zp[i], (int)lo, (int)hi);
	return 0;
}

int tfk_int8_quantize_ref(const struct tfk_int8_qp *q, enum tfk_dtype dt,
			  int64_t n, const float *x, void *y,
			  struct tfk_err *err)
{
	int32_t lo, hi, zp;
	float scale;
	int64_t i;
	int rc;

	if (range(dt, &lo, &hi))
		return tfk_errf(err, TFK_EINVAL, "quantize: output dtype %d, "
				"want int8 or uint8", (int)dt);
	if (!q || !q->scale || q->n != 1)
		return tfk_errf(err, TFK_EINVAL, "quantize: want one scale");
	if ((rc = check(q, 0, lo, hi, "quantize", err)))
		return rc;
	scale = q->scale[0];
	zp = q->zp ? q->zp[0] : 0;
	for (i = 0; i < n; i++) {
		float r = round_away(x[i] / scale);
		int32_t v;

		if (isnan(r))
			v = zp;
		else if (r >= 65536.0f)
			v = hi;
		else if (r <= -65536.0f)
			v = lo;
		else
			v = (int32_t)r + zp;
		v = v < lo ? lo : v > hi ? hi : v;
		if (dt == TFK_DT_INT8)
			((int8_t *)y)[i] = (int8_t)v;
		else
			((uint8_t *)y)[i] = (uint8_t)v;
	}
	return 0;
}

int tfk_int8_dequantize_ref(const struct tfk_int8_qp *q, enum tfk_dtype dt,
			    int rank, const int64_t *shape, int axis,
			    const void *x, float *y, struct tfk_err *err)
{
	int64_t n = 1, inner = 1, i, ch, k;
	int32_t lo = INT32_MIN, hi = INT32_MAX;
	int rc;

	if (dt != TFK_DT_INT32 && range(dt, &lo, &hi))
		return tfk_errf(err, TFK_EINVAL, "dequantize: input dtype %d, "
				"want int8, uint8 or int32", (int)dt);
	if (!q || !q->scale || q->n < 1)
		return tfk_errf(err, TFK_EINVAL, "dequantize: no scales");
	for (k = 0; k < rank; k++) {
		if (shape[k] < 0)
			return tfk_errf(err, TFK_EINVAL, "dequantize: unknown "
					"dimension");
		n *= shape[k];
	}
	if (q->n > 1) {
		if (axis < 0 || axis >= rank || shape[axis] != q->n)
			return tfk_errf(err, TFK_EINVAL, "dequantize: %lld "
					"scales along axis %d of a rank-%d "
					"tensor", (long long)q->n, axis, rank);
		for (k = axis + 1; k < rank; k++)
			inner *= shape[k];
	}
	for (i = 0; i < q->n; i++)
		if ((rc = check(q, i, lo, hi, "dequantize", err)))
			return rc;
	for (i = 0; i < n; i++) {
		int32_t v;

		ch = q->n > 1 ? i / inner % q->n : 0;
		v = dt == TFK_DT_INT8 ? ((const int8_t *)x)[i] :
		    dt == TFK_DT_UINT8 ? ((const uint8_t *)x)[i] :
		    ((const int32_t *)x)[i];
		/* (double)scale * (q - zp), rounded once to float */
		y[i] = (float)((double)q->scale[ch] *
			       ((double)v - (q->zp ? q->zp[ch] : 0)));
	}
	return 0;
}

int tfk_int8_requantize_ref(const struct tfk_int8_qp *in, enum tfk_dtype in_dt,
			    const struct tfk_int8_qp *out,
			    enum tfk_dtype out_dt, int64_t n, const void *x,
			    void *y, struct tfk_err *err)
{
	int32_t ilo, ihi, olo, ohi, izp, ozp, mult;
	int shift, rc;
	int64_t i;

	if (range(in_dt, &ilo, &ihi) || range(out_dt, &olo, &ohi))
		return tfk_errf(err, TFK_EINVAL, "requantize: dtypes %d -> %d,"
				" want int8 or uint8", (int)in_dt,
				(int)out_dt);
	if (!in || !in->scale || in->n != 1 || !out || !out->scale ||
	    out->n != 1)
		return tfk_errf(err, TFK_EINVAL, "requantize: want one scale "
				"per tensor");
	if ((rc = check(in, 0, ilo, ihi, "requantize input", err)) ||
	    (rc = check(out, 0, olo, ohi, "requantize output", err)))
		return rc;
	izp = in->zp ? in->zp[0] : 0;
	ozp = out->zp ? out->zp[0] : 0;
	rc = tfk_int8_quantize_multiplier((double)in->scale[0] /
					  (double)out->scale[0], &mult, &shift,
					  err);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		int32_t v = in_dt == TFK_DT_INT8 ? ((const int8_t *)x)[i] :
			    ((const uint8_t *)x)[i];

		v = tfk_int8_mbqm(v - izp, mult, shift) + ozp;
		v = v < olo ? olo : v > ohi ? ohi : v;
		if (out_dt == TFK_DT_INT8)
			((int8_t *)y)[i] = (int8_t)v;
		else
			((uint8_t *)y)[i] = (uint8_t)v;
	}
	return 0;
}

void tfk_int8_rescale_u8_ref(float in_scale, int32_t in_zp, float out_scale,
			     int32_t out_zp, int64_t n, const int8_t *x,
			     int8_t *y)
{
	/* ConcatenationWithScaling: in float, as TFLite computes it */
	float inv = 1.f / out_scale;
	float scale = in_scale * inv;
	float bias = (float)-in_zp * scale;
	int64_t i;

	for (i = 0; i < n; i++) {
		float f = roundf((float)((uint8_t)x[i] ^ 0x80) * scale + bias);
		int32_t v;

		/* saturate before the conversion (a tiny output scale) */
		if (!(f <= 1024.0f))
			f = 1024.0f;
		else if (f < -1024.0f)
			f = -1024.0f;
		v = (int32_t)f + out_zp;
		v = v < 0 ? 0 : v > 255 ? 255 : v;
		y[i] = (int8_t)(v - 128);
	}
}
