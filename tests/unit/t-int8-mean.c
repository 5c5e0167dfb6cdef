/*
 * t-int8-mean.c - the int8 MEAN kernel (lib/kernels/int8/reduce.c).
 *
 * Known values worked out by hand from TFLite's two formulas (the
 * arithmetic is in the comments), including a tie where they differ
 * by one (reference_integer_ops::Mean rounds -86.5 away from zero,
 * QuantizedMeanOrSum's SaturatingRoundingDoublingHighMul rounds it
 * up); then random shapes, axes and parameters against the real-valued
 * mean computed here in double (|y - q(mean)| <= 1 quantum); then the
 * refusals. Arm NN's CpuRef runs converted int8 MEAN models in
 * tests/cmd/t1820-lite-convert.sh.
 */
#include "kernels/int8.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static struct tfk_int8_qp qp(const float *s, const int32_t *z)
{
	struct tfk_int8_qp q = { s, z, 1 };

	return q;
}

static void known_values(void)
{
	static const float si = 0.5f, so = 0.25f;
	static const int32_t zi = -1, zo = 3;
	struct tfk_int8_qp in = qp(&si, &zi), out = qp(&so, &zo);
	struct tfk_int8_mean m;
	struct tfk_err err;
	int64_t shape[4] = { 1, 2, 2, 1 };
	int32_t hw[2] = { 1, 2 }, hw_neg[2] = { -3, 2 };
	int8_t a[4] = { 10, 20, 30, 41 }, b[4] = { -100, -50, -20, -7 }, y;

	/* sum (x - zp) = 105; QuantizeMultiplier(2) = 2^30, shift 2:
	 * mbqm = 210; (210 + 2) / 4 = 53; + 3 */
	ok(!tfk_int8_mean_init(&m, &in, &out, 4, shape, hw, 2, 1, &err),
	   "hw init");
	is_int(m.hw, 1, "keep_dims, rank 4, axes {1, 2}: the hw formula");
	is_int(m.count, 4, "count");
	is_int(m.mult, 1 << 30, "multiplier of 2.0");
	is_int(m.shift, 2, "shift of 2.0");
	tfk_int8_mean_ref(&m, a, &y);
	is_int(y, 56, "hw: 52.5 + 3 -> 56");
	/* -173: mbqm = -346; (-346 - 2) / 4 = -87; + 3 */
	tfk_int8_mean_ref(&m, b, &y);
	is_int(y, -84, "hw: -86.5 rounds away from zero, + 3 -> -84");

	/* keep_dims false: folded multiplier (2^30 << 2) / 4 = 2^30,
	 * shift 2 - 2 = 0; srdhm(105, 2^30) = 53 (52.5 up) */
	ok(!tfk_int8_mean_init(&m, &in, &out, 4, shape, hw, 2, 0, &err),
	   "general init");
	is_int(m.hw, 0, "keep_dims false: QuantizedMeanOrSum");
	is_int(m.mult, 1 << 30, "folded multiplier");
	is_int(m.shift, 0, "folded shift");
	tfk_int8_mean_ref(&m, a, &y);
	is_int(y, 56, "general: 52.5 -> 53, + 3");
	/* srdhm(-173, 2^30) = trunc((-173 * 2^30 + 1 - 2^30) / 2^31) = -86 */
	tfk_int8_mean_ref(&m, b, &y);
	is_int(y, -83, "general: -86.5 rounds up, + 3 -> -83");

	/* negative and repeated axes resolve to {1, 2} (n_axes 2 keeps the
	 * hw form only when they are two distinct axes: here -3 = 1) */
	ok(!tfk_int8_mean_init(&m, &in, &out, 4, shape, hw_neg, 2, 1, &err) &&
	   m.hw && m.count == 4, "axes -3, 2 are H, W");

	/* a [2, 3] tensor over axis 1: rows (1 2 3) and (-4 5 120), same
	 * scale in and out (multiplier 2^30 shift 1), zp 0:
	 * count 3: s = 1, mult' = 2^31 / 3 = 715827882, shift' = 0;
	 * row 0: srdhm(6, 715827882) = 2 (1.9999999972 rounds to 2);
	 * row 1: sum 121 -> 40.333 -> 40 */
	{
		static const float s1 = 0.1f;
		static const int32_t z0 = 0;
		struct tfk_int8_qp q1 = qp(&s1, &z0);
		int64_t sh2[2] = { 2, 3 };
		int32_t ax1 = 1;
		int8_t x2[6] = { 1, 2, 3, -4, 5, 120 }, y2[2];

		ok(!tfk_int8_mean_init(&m, &q1, &q1, 2, sh2, &ax1, 1, 0, &err),
		   "rank 2 init");
		is_int(m.mult, 715827882, "mult' = (2^30 << 1) / 3");
		is_int(m.shift, 0, "shift' = 1 - 1");
		is_int(tfk_int8_mean_outputs(&m), 2, "two outputs");
		tfk_int8_mean_ref(&m, x2, y2);
		is_int(y2[0], 2, "mean(1, 2, 3) = 2");
		is_int(y2[1], 40, "mean(-4, 5, 120) = 40.33 -> 40");
	}
}

static uint64_t rs = 88172645463325252ull;

static int rnd(int n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (int)(rs % (uint64_t)n);
}

/* Random cases: y within one quantum of q(real mean). */
static void random_cases(void)
{
	int c, bad = 0, hw_cases = 0, cases = 0;

	for (c = 0; c < 300; c++) {
		int rank = 1 + rnd(4), k, n_axes = 1 + rnd(rank), keep;
		int64_t shape[4], n = 1, i, o, n_out;
		int32_t axes[4];
		float si = 0.001f + rnd(1000) * 0.0005f;
		float so = 0.001f + rnd(1000) * 0.0005f;
		int32_t zi = rnd(256) - 128, zo = rnd(256) - 128;
		struct tfk_int8_qp in = qp(&si, &zi), out = qp(&so, &zo);
		struct tfk_int8_mean m;
		struct tfk_err err;
		int8_t *x, *y;
		double *sum;

		keep = rnd(2);
		if (c % 3 == 0) {	/* GlobalAveragePooling2D's shape */
			rank = 4;
			n_axes = 2;
			axes[0] = 1;
			axes[1] = 2;
			keep = c % 2;
		} else {
			for (k = 0; k < n_axes; k++)
				axes[k] = rnd(rank) - (rnd(2) ? rank : 0);
		}
		for (k = 0; k < rank; k++) {
			shape[k] = 1 + rnd(6);
			n *= shape[k];
		}
		if (tfk_int8_mean_init(&m, &in, &out, rank, shape, axes,
				       n_axes, keep, &err)) {
			bad++;
			continue;
		}
		hw_cases += m.hw;
		cases++;
		n_out = tfk_int8_mean_outputs(&m);
		x = malloc((size_t)n);
		y = malloc((size_t)n_out);
		sum = calloc((size_t)n_out, sizeof(*sum));
		for (i = 0; i < n; i++)
			x[i] = (int8_t)(rnd(256) - 128);
		for (i = 0; i < n; i++) {	/* i's output index */
			int64_t rem = i, oi = 0, mul = 1;

			for (k = rank - 1; k >= 0; k--) {
				int64_t coord = rem % shape[k];

				rem /= shape[k];
				if (!m.reduce[k]) {
					oi += coord * mul;
					mul *= shape[k];
				}
			}
			sum[oi] += si * ((double)x[i] - zi);
		}
		tfk_int8_mean_ref(&m, x, y);
		for (o = 0; o < n_out; o++) {
			double q = sum[o] / (double)m.count / so + zo;

			q = q < -128 ? -128 : q > 127 ? 127 : q;
			if (fabs(y[o] - q) > 1.0 + 1e-9) {
				if (bad++ < 3)
					tap_diag("case %d: y %d, real %.4f", c,
						 y[o], q);
			}
		}
		free(x);
		free(y);
		free(sum);
	}
	is_int(bad, 0, "300 random means within one quantum of the real "
	       "mean");
	ok(hw_cases > 30 && cases - hw_cases > 100, "both formulas covered "
	   "(%d hw of %d)", hw_cases, cases);
}

static void refusals(void)
{
	static const float s = 0.5f, zero = 0, scales[2] = { 1, 1 };
	static const int32_t z = 0, zbig = 200, zs[2] = { 0, 0 };
	struct tfk_int8_qp in = qp(&s, &z), bad_s = qp(&zero, &z);
	struct tfk_int8_qp bad_z = qp(&s, &zbig), pc = { scales, zs, 2 };
	struct tfk_int8_mean m;
	struct tfk_err err;
	int64_t shape[2] = { 2, 3 }, huge[2] = { 65536, 65536 };
	int32_t ax = 2, ax2[2] = { 0, 1 };

	is_int(tfk_int8_mean_init(&m, &in, &in, 2, shape, &ax, 1, 0, &err),
	       TFK_EINVAL, "axis 2 of rank 2 refused");
	ok(strstr(err.msg, "axis 2 out of range for rank 2") != NULL,
	   "message: %s", err.msg);
	is_int(tfk_int8_mean_init(&m, &bad_s, &in, 2, shape, ax2, 1, 0, &err),
	       TFK_EINVAL, "scale 0 refused");
	is_int(tfk_int8_mean_init(&m, &in, &bad_z, 2, shape, ax2, 1, 0, &err),
	       TFK_EINVAL, "zero point 200 refused");
	is_int(tfk_int8_mean_init(&m, &pc, &in, 2, shape, ax2, 1, 0, &err),
	       TFK_EINVAL, "per-channel refused");
	is_int(tfk_int8_mean_init(&m, &in, &in, 2, huge, ax2, 2, 0, &err),
	       TFK_EINVAL, "2^32 reduced elements refused");
}

int main(void)
{
	known_values();
	random_cases();
	refusals();
	return tap_done();
}
