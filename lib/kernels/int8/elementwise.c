/*
 * elementwise.c - int8 ADD, SUB, MUL with TFLite's rescaling.
 *
 * ADD brings both inputs to a common scale 2 * max(s1, s2) with 20
 * bits of headroom (x << 20, times m1 or m2 < 1), adds, and rescales to
 * the output (add.cc Prepare, reference_integer_ops::Add). SUB is ADD
 * with input 2's multiplier negated, which is how sub.cc runs int8
 * (the rounding of a negated multiplier is not the negated rounding, so
 * it is not "ADD of -x2"). MUL multiplies the offset inputs and
 * rescales once by s1 * s2 / so, computed in float as mul.cc does
 * before it widens to double. Broadcasting follows numpy (TFLite's
 * BroadcastAdd4DSlow / BroadcastMul6DSlow visit the same pairs).
 */
#include "kernels/int8.h"

#include <string.h>

int tfk_int8_bin_init(struct tfk_int8_bin *b, enum tfk_int8_binop op,
		      enum tfk_dtype dt, const struct tfk_int8_qp *in1,
		      const struct tfk_int8_qp *in2,
		      const struct tfk_int8_qp *out, int act,
		      struct tfk_err *err)
{
	const struct tfk_int8_qp *q[3] = { in1, in2, out };
	static const char *const what[3] = { "input 0", "input 1", "output" };
	float s1, s2, so;
	int32_t qmin = dt == TFK_DT_UINT8 ? 0 : -128, qmax = qmin + 255;
	int i, rc;

	memset(b, 0, sizeof(*b));
	b->op = op;
	b->is_uint8 = dt == TFK_DT_UINT8;
	if (dt != TFK_DT_INT8 && dt != TFK_DT_UINT8)
		return tfk_errf(err, TFK_EINVAL, "dtype %d, want int8 or uint8",
				(int)dt);
	for (i = 0; i < 3; i++) {
		if (!q[i] || !q[i]->scale || q[i]->n != 1)
			return tfk_errf(err, TFK_EINVAL, "%s: want one scale "
					"per tensor", what[i]);
		if (!(q[i]->scale[0] > 0) || !(q[i]->scale[0] < 1e30f) ||
		    q[i]->scale[0] < 1e-30f)
			return tfk_errf(err, TFK_EINVAL, "%s: scale %g is not "
					"a positive finite number", what[i],
					(double)q[i]->scale[0]);
		if (q[i]->zp && (q[i]->zp[0] < qmin || q[i]->zp[0] > qmax))
			return tfk_errf(err, TFK_EINVAL, "%s: zero_point %d "
					"is outside [%d, %d]", what[i],
					(int)q[i]->zp[0], (int)qmin,
					(int)qmax);
	}
	s1 = in1->scale[0];
	s2 = in2->scale[0];
	so = out->scale[0];
	b->in1_offset = in1->zp ? -in1->zp[0] : 0;
	b->in2_offset = in2->zp ? -in2->zp[0] : 0;
	b->out_offset = out->zp ? out->zp[0] : 0;
	rc = tfk_int8_act_range(act, so, b->out_offset, qmin, qmax,
				&b->act_min, &b->act_max, err);
	if (rc)
		return rc;
	if (op == TFK_INT8_MUL) {
		/* float, as mul.cc: input1 scale * input2 scale / output */
		float m = s1 * s2 / so;

		return tfk_int8_quantize_multiplier((double)m, &b->out_mult,
						    &b->out_shift, err);
	} else {
		double twice = 2 * (double)(s1 > s2 ? s1 : s2);
		double mo = twice / ((double)(1 << 20) * (double)so);

		b->left_shift = 20;
		if (!(mo < 1))
			return tfk_errf(err, TFK_EINVAL, "output: scale %g is "
					"too small for the inputs' %g and %g "
					"(TFLite needs 2 * max / scale < 2^20)",
					(double)so, (double)s1, (double)s2);
		if ((rc = tfk_int8_quantize_multiplier((double)s1 / twice,
						       &b->in1_mult,
						       &b->in1_shift, err)) ||
		    (rc = tfk_int8_quantize_multiplier((double)s2 / twice,
						       &b->in2_mult,
						       &b->in2_shift, err)) ||
		    (rc = tfk_int8_quantize_multiplier(mo, &b->out_mult,
						       &b->out_shift, err)))
			return rc;
		if (op == TFK_INT8_SUB)
			b->in2_mult = -b->in2_mult;
	}
	return 0;
}

static int32_t one(const struct tfk_int8_bin *b, int32_t x1, int32_t x2)
{
	int32_t v1 = b->in1_offset + x1, v2 = b->in2_offset + x2, r;

	if (b->op == TFK_INT8_MUL) {
		r = b->out_offset + tfk_int8_mbqm(v1 * v2, b->out_mult,
						  b->out_shift);
	} else {
		int32_t a1 = tfk_int8_mbqm(v1 * (1 << b->left_shift),
					   b->in1_mult, b->in1_shift);
		int32_t a2 = tfk_int8_mbqm(v2 * (1 << b->left_shift),
					   b->in2_mult, b->in2_shift);

		r = tfk_int8_mbqm(a1 + a2, b->out_mult, b->out_shift) +
		    b->out_offset;
	}
	r = r < b->act_min ? b->act_min : r;
	r = r > b->act_max ? b->act_max : r;
	return r;
}

int tfk_int8_bin_ref(const struct tfk_int8_bin *b, int r1, const int64_t *s1,
		     const void *x1, int r2, const int64_t *s2,
		     const void *x2, void *y, struct tfk_err *err)
{
	const int8_t *a1 = x1, *a2 = x2;
	const uint8_t *u1 = x1, *u2 = x2;
	int64_t out[8], st1[8], st2[8], idx[8], total = 1, i, o1, o2;
	int64_t d1[8], d2[8];
	int r, k, rc;

	if (r1 > 8 || r2 > 8 || r1 < 0 || r2 < 0)
		return tfk_errf(err, TFK_EINVAL, "rank %d: at most 8",
				r1 > r2 ? r1 : r2);
	rc = tfk_shape_broadcast(r1, s1, r2, s2, &r, out, err);
	if (rc)
		return rc;
	/* align both to rank r; stride 0 along broadcast dims */
	for (k = 0; k < r; k++) {
		d1[k] = k < r - r1 ? 1 : s1[k - (r - r1)];
		d2[k] = k < r - r2 ? 1 : s2[k - (r - r2)];
		if (out[k] < 0)
			return tfk_errf(err, TFK_EINVAL, "unknown dimension");
		total *= out[k];
	}
	for (k = r - 1, o1 = 1, o2 = 1; k >= 0; k--) {
		st1[k] = d1[k] == 1 ? 0 : o1;
		st2[k] = d2[k] == 1 ? 0 : o2;
		o1 *= d1[k];
		o2 *= d2[k];
		idx[k] = 0;
	}
	for (i = 0, o1 = 0, o2 = 0; i < total; i++) {
		if (b->is_uint8)
			((uint8_t *)y)[i] = (uint8_t)one(b, u1[o1], u2[o2]);
		else
			((int8_t *)y)[i] = (int8_t)one(b, a1[o1], a2[o2]);
		for (k = r - 1; k >= 0; k--) {
			o1 += st1[k];
			o2 += st2[k];
			if (++idx[k] < out[k])
				break;
			o1 -= st1[k] * out[k];
			o2 -= st2[k] * out[k];
			idx[k] = 0;
		}
	}
	return 0;
}
