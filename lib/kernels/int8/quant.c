/*
 * quant.c - TFLite's fixed-point requantization arithmetic.
 *
 * QuantizeMultiplier is quantization_util.cc's (frexp, round half away
 * from zero, the 2^31 carry, flush below 2^-31); SRDHM and
 * RoundingDivideByPOT are gemmlowp's fixedpoint.h scalar versions;
 * MultiplyByQuantizedMultiplier is common.h's double-rounding form (the
 * one TFLite builds by default). The single-rounding variant
 * (TFLITE_SINGLE_ROUNDING) differs in the last bit for some inputs and
 * is not what TFLite's Python wheels or TFLite Micro run by default, so
 * it is not offered.
 */
#include "kernels/int8.h"

#include "util/alloc.h"

#include <math.h>
#include <string.h>

int tfk_int8_quantize_multiplier(double m, int32_t *qm, int *shift,
				 struct tfk_err *err)
{
	double q;
	int64_t q_fixed;
	int e = 0;

	*qm = 0;
	*shift = 0;
	if (!isfinite(m))
		return tfk_errf(err, TFK_EINVAL, "multiplier %g", m);
	if (m == 0)
		return 0;
	q = frexp(m, &e);
	q_fixed = (int64_t)round(q * (double)(1LL << 31));
	if (q_fixed == (1LL << 31) || q_fixed == -(1LL << 31)) {
		q_fixed /= 2;
		e++;
	}
	if (e < -31) {
		e = 0;
		q_fixed = 0;
	}
	*qm = (int32_t)q_fixed;
	*shift = e;
	return 0;
}

int32_t tfk_int8_srdhm(int32_t a, int32_t b)
{
	int64_t ab = (int64_t)a * b;
	int32_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));

	if (a == b && a == INT32_MIN)
		return INT32_MAX;
	return (int32_t)((ab + nudge) / (1LL << 31));
}

int32_t tfk_int8_rdbpot(int32_t x, int exponent)
{
	int32_t mask = (int32_t)((1LL << exponent) - 1);
	int32_t rem = x & mask;
	int32_t thr = (mask >> 1) + (x < 0 ? 1 : 0);

	return (x >> exponent) + (rem > thr ? 1 : 0);
}

int32_t tfk_int8_mbqm(int32_t x, int32_t qm, int shift)
{
	int ls = shift > 0 ? shift : 0;
	int rs = shift > 0 ? 0 : -shift;

	/* TFLite's x * (1 << ls) in int32: wraps here, as the SIMD does */
	uint32_t xs = ls > 31 ? 0 : (uint32_t)x << ls;

	return tfk_int8_rdbpot(tfk_int8_srdhm((int32_t)xs, qm), rs);
}

static int32_t sat_round(float v)
{
	float r = roundf(v);

	if (r >= 1073741824.0f)
		return 1073741824;
	if (r <= -1073741824.0f)
		return -1073741824;
	return (int32_t)r;
}

int tfk_int8_act_range(int act, float scale, int32_t zp, int32_t qmin,
		       int32_t qmax, int32_t *lo, int32_t *hi,
		       struct tfk_err *err)
{
	/* q(f) = zp + (int)round(f / scale), computed in float as TFLite
	 * (saturated where TFLite's cast would be undefined) */
#define Q(f) (zp + sat_round((f) / scale))
	*lo = qmin;
	*hi = qmax;
	switch (act) {
	case TFK_INT8_ACT_NONE:
		return 0;
	case TFK_INT8_ACT_RELU:
		*lo = Q(0.0f) > qmin ? Q(0.0f) : qmin;
		return 0;
	case TFK_INT8_ACT_RELU6:
		*lo = Q(0.0f) > qmin ? Q(0.0f) : qmin;
		*hi = Q(6.0f) < qmax ? Q(6.0f) : qmax;
		return 0;
	case TFK_INT8_ACT_RELU_N1_TO_1:
		*lo = Q(-1.0f) > qmin ? Q(-1.0f) : qmin;
		*hi = Q(1.0f) < qmax ? Q(1.0f) : qmax;
		return 0;
	}
#undef Q
	return tfk_errf(err, TFK_EINVAL, "fused activation %d is not "
			"supported", act);
}

/* A usable scale: finite, > 0, and small enough that the clamps'
 * round(6 / scale) stays an int. */
static int bad_scale(float s)
{
	return !(s > 0) || !isfinite(s) || s < 1e-30f;
}

static int check_qp(const struct tfk_int8_qp *q, const char *what,
		    int32_t zmin, int32_t zmax, struct tfk_err *err)
{
	int64_t i;

	if (!q || !q->scale || q->n < 1)
		return tfk_errf(err, TFK_EINVAL, "%s: no quantization "
				"parameters", what);
	for (i = 0; i < q->n; i++) {
		if (bad_scale(q->scale[i]))
			return tfk_errf(err, TFK_EINVAL, "%s: scale[%lld] = "
					"%g is not a positive finite number",
					what, (long long)i,
					(double)q->scale[i]);
		if (q->zp && (q->zp[i] < zmin || q->zp[i] > zmax))
			return tfk_errf(err, TFK_EINVAL, "%s: zero_point[%lld]"
					" = %d is outside [%d, %d]", what,
					(long long)i, (int)q->zp[i],
					(int)zmin, (int)zmax);
	}
	return 0;
}

void tfk_int8_rq_release(struct tfk_int8_rq *rq)
{
	if (!rq)
		return;
	tfk_free(rq->mult);
	tfk_free(rq->shift);
	rq->mult = NULL;
	rq->shift = NULL;
	rq->n = 0;
}

int tfk_int8_rq_init(struct tfk_int8_rq *rq, int64_t channels,
		     const struct tfk_int8_qp *in, const struct tfk_int8_qp *w,
		     const struct tfk_int8_qp *out, int act,
		     struct tfk_err *err)
{
	int64_t i;
	int rc;

	memset(rq, 0, sizeof(*rq));
	if ((rc = check_qp(in, "input", -128, 127, err)) ||
	    (rc = check_qp(w, "filter", -128, 127, err)) ||
	    (rc = check_qp(out, "output", -128, 127, err)))
		return rc;
	if (in->n != 1 || out->n != 1)
		return tfk_errf(err, TFK_EINVAL, "%s: %lld scales, want one "
				"per tensor", in->n != 1 ? "input" : "output",
				(long long)(in->n != 1 ? in->n : out->n));
	if (channels < 1)
		return tfk_errf(err, TFK_EINVAL, "%lld output channels",
				(long long)channels);
	if (w->n != 1 && w->n != channels)
		return tfk_errf(err, TFK_EINVAL, "filter: %lld scales for "
				"%lld output channels", (long long)w->n,
				(long long)channels);
	if (w->n > 1 && w->zp)
		for (i = 0; i < w->n; i++)
			if (w->zp[i])
				return tfk_errf(err, TFK_EINVAL, "filter: "
						"zero_point[%lld] = %d, per-"
						"channel filters must be "
						"symmetric", (long long)i,
						(int)w->zp[i]);
	rq->mult = tfk_malloc((size_t)channels * sizeof(*rq->mult));
	rq->shift = tfk_malloc((size_t)channels * sizeof(*rq->shift));
	if (!rq->mult || !rq->shift) {
		tfk_int8_rq_release(rq);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	rq->n = channels;
	rq->in_offset = in->zp ? -in->zp[0] : 0;
	rq->w_offset = w->zp ? -w->zp[0] : 0;
	rq->out_offset = out->zp ? out->zp[0] : 0;
	for (i = 0; i < channels; i++) {
		double ws = (double)w->scale[w->n > 1 ? i : 0];
		double m = (double)in->scale[0] * ws / (double)out->scale[0];
		int sh;

		rc = tfk_int8_quantize_multiplier(m, &rq->mult[i], &sh, err);
		if (rc) {
			tfk_int8_rq_release(rq);
			return rc;
		}
		rq->shift[i] = sh;
	}
	rc = tfk_int8_act_range(act, out->scale[0], rq->out_offset, -128, 127,
				&rq->act_min, &rq->act_max, err);
	if (rc)
		tfk_int8_rq_release(rq);
	return rc;
}

void tfk_int8_requant_ref(const struct tfk_int8_rq *rq, const int32_t *acc,
			  int64_t n, int8_t *y)
{
	int64_t i;

	for (i = 0; i < n; i++) {
		int64_t ch = i % rq->n;
		int32_t v = tfk_int8_mbqm(acc[i], rq->mult[ch],
					  rq->shift[ch]) + rq->out_offset;

		v = v < rq->act_min ? rq->act_min : v;
		v = v > rq->act_max ? rq->act_max : v;
		y[i] = (int8_t)v;
	}
}
