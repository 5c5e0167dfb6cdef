/*
 * reduce.c - int8 MEAN (GlobalAveragePooling2D, tf.reduce_mean).
 *
 * TFLite's reduce.cc picks one of two integer formulas, and so does
 * this file (tfk_int8_mean_init decides as EvalQuantizedMean does):
 *
 *   "hw": keep_dims, rank 4, the axes exactly {1, 2} (H and W): the
 *     reference_integer_ops::Mean loop (integer_ops/mean.h):
 *     acc = sum (x - in_zp) in int32, acc = mbqm(acc,
 *     QuantizeMultiplier(in_scale / out_scale)), then divided by the
 *     count rounding half away from zero with C's truncating division,
 *     + out_zp, clamped to int8.
 *   "general": any other axes, keep_dims or not:
 *     reference_ops::QuantizedMeanOrSum (reduce.h): the 1/count folded
 *     into the multiplier (s = min(floor(log2 count), 32, 31 + shift);
 *     mult' = (mult << s) / count in int64; shift' = shift - s), then
 *     y = clamp(mbqm(sum x - in_zp * count, mult', shift') + out_zp).
 *
 * Both are integer-only and agree with the real mean to within one
 * quantum; they can differ from each other by one at ties, which is why
 * both are kept rather than one formula for every case. The sum is
 * taken in int64 and narrowed to int32 as TFLite's int32 sum would wrap
 * (only past 2^23 reduced elements, which no real model has).
 * Rejected: TFLite 2.x's older float path of QuantizedMeanOrSum (float
 * mean * scale, roundf): newer TFLite replaced it with the integer one.
 */
#include "kernels/int8.h"

#include <math.h>
#include <string.h>

int tfk_int8_mean_init(struct tfk_int8_mean *m, const struct tfk_int8_qp *in,
		       const struct tfk_int8_qp *out, int rank,
		       const int64_t *shape, const int32_t *axes, int n_axes,
		       int keep_dims, struct tfk_err *err)
{
	int k, j, shift;
	int32_t mult;
	int64_t count = 1;

	memset(m, 0, sizeof(*m));
	if (rank < 0 || rank > TFK_MAX_RANK)
		return tfk_errf(err, TFK_EINVAL, "mean: rank %d", rank);
	if (in->n != 1 || out->n != 1)
		return tfk_errf(err, TFK_EINVAL, "mean: per-channel "
				"quantization is not supported");
	if (!(in->scale[0] > 0) || !(out->scale[0] > 0) ||
	    !isfinite(in->scale[0]) || !isfinite(out->scale[0]))
		return tfk_errf(err, TFK_EINVAL, "mean: scale must be finite "
				"and > 0");
	m->in_zp = in->zp ? in->zp[0] : 0;
	m->out_zp = out->zp ? out->zp[0] : 0;
	if (m->in_zp < -128 || m->in_zp > 127 || m->out_zp < -128 ||
	    m->out_zp > 127)
		return tfk_errf(err, TFK_EINVAL, "mean: zero point outside "
				"int8");
	m->rank = rank;
	for (k = 0; k < rank; k++) {
		if (shape[k] < 0)
			return tfk_errf(err, TFK_EINVAL, "mean: negative "
					"dimension");
		m->shape[k] = shape[k];
		m->reduce[k] = 0;
	}
	for (j = 0; j < n_axes; j++) {	/* ResolveAxis: negatives, dups */
		int a = axes[j] < 0 ? axes[j] + rank : axes[j];

		if (a < 0 || a >= rank)
			return tfk_errf(err, TFK_EINVAL, "mean: axis %d out of "
					"range for rank %d", (int)axes[j], rank);
		m->reduce[a] = 1;
	}
	for (k = 0; k < rank; k++)
		if (m->reduce[k]) {
			if (shape[k] && count > INT32_MAX / shape[k])
				return tfk_errf(err, TFK_EINVAL, "mean: too "
						"many elements to reduce");
			count *= shape[k];
		}
	m->count = count;
	m->hw = keep_dims && rank == 4 && n_axes == 2 && m->reduce[1] &&
		m->reduce[2] && !m->reduce[0] && !m->reduce[3];
	if (tfk_int8_quantize_multiplier((double)in->scale[0] /
					 (double)out->scale[0], &mult, &shift,
					 err))
		return TFK_EINVAL;
	if (!m->hw && count > 0) {	/* QuantizedMeanOrSum's folding */
		int s = 63;

		while (s > 0 && !((uint64_t)count >> s))
			s--;	/* 63 - CountLeadingZeros(count) */
		if (s > 32)
			s = 32;
		if (s > 31 + shift)
			s = 31 + shift;
		if (s < 0)
			s = 0;
		mult = (int32_t)(((int64_t)mult * ((int64_t)1 << s)) / count);
		shift -= s;
	}
	m->mult = mult;
	m->shift = shift;
	return 0;
}

int tfk_int8_mean_u8(struct tfk_int8_mean *m, float in_scale, int32_t in_zp,
		     float out_scale, int32_t out_zp, struct tfk_err *err)
{
	float temp;
	int shift;

	if (!m->hw)
		return 0;
	/* reference_ops::Mean (uint8): the zero point's share in float,
	 * the 1/count in the multiplier */
	temp = (float)in_zp * in_scale / out_scale;
	temp = temp > 0 ? temp + 0.5f : temp - 0.5f;
	m->u8_bias = out_zp - (int32_t)temp;
	if (tfk_int8_quantize_multiplier((double)(in_scale /
						  ((float)m->count *
						   out_scale)), &m->mult,
					 &shift, err))
		return TFK_EINVAL;
	m->shift = shift;
	m->u8 = 1;
	return 0;
}

int64_t tfk_int8_mean_outputs(const struct tfk_int8_mean *m)
{
	int64_t n = 1;
	int k;

	for (k = 0; k < m->rank; k++)
		if (!m->reduce[k])
			n *= m->shape[k];
	return n;
}

void tfk_int8_mean_ref(const struct tfk_int8_mean *m, const int8_t *x,
		       int8_t *y)
{
	int64_t stride[TFK_MAX_RANK], n_out = tfk_int8_mean_outputs(m), o, r;
	int kept[TFK_MAX_RANK], red[TFK_MAX_RANK], nk = 0, nr = 0, k;

	for (k = m->rank - 1, r = 1; k >= 0; k--) {
		stride[k] = r;
		r *= m->shape[k];
	}
	for (k = 0; k < m->rank; k++) {
		if (m->reduce[k])
			red[nr++] = k;
		else
			kept[nk++] = k;
	}
	for (o = 0; o < n_out; o++) {
		int64_t base = 0, rem = o, sum = 0;
		int32_t acc;

		for (k = nk - 1; k >= 0; k--) {	/* o's coordinates */
			base += rem % m->shape[kept[k]] * stride[kept[k]];
			rem /= m->shape[kept[k]];
		}
		for (r = 0; r < m->count; r++) {	/* the reduced ones */
			int64_t off = base, q = r;

			for (k = nr - 1; k >= 0; k--) {
				off += q % m->shape[red[k]] * stride[red[k]];
				q /= m->shape[red[k]];
			}
			sum += x[off];
		}
		if (m->u8) {	/* the uint8 values: x + 128 */
			acc = (int32_t)(sum + (int64_t)128 * m->count);
			acc = tfk_int8_mbqm(acc, m->mult, m->shift) +
				m->u8_bias;
			acc = acc < 0 ? 0 : acc > 255 ? 255 : acc;
			y[o] = (int8_t)(acc - 128);
			continue;
		}
		if (m->hw) {
			int32_t c = (int32_t)m->count;

			acc = (int32_t)(sum - (int64_t)m->in_zp * m->count);
			acc = tfk_int8_mbqm(acc, m->mult, m->shift);
			if (c)
				acc = acc > 0 ? (acc + c / 2) / c :
					(acc - c / 2) / c;
		} else {
			acc = (int32_t)(sum - (int64_t)m->in_zp * m->count);
			acc = m->count ? tfk_int8_mbqm(acc, m->mult, m->shift) :
				0;
		}
		acc += m->out_zp;
		y[o] = (int8_t)(acc < -128 ? -128 : acc > 127 ? 127 : acc);
	}
}
