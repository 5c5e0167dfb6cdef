/*
 * pool.c - int8 MAX_POOL_2D and AVERAGE_POOL_2D.
 *
 * reference_integer_ops::MaxPool / AveragePool: each window covers only
 * its in-bounds taps (padding never wins a max and is not counted by
 * the average); the average rounds half away from zero with C's
 * truncating division, (acc +- count / 2) / count, then both clamp to
 * the fused activation's range. Input and output share quantization
 * (TFLite requires it), so no requantization happens. A window without
 * in-bounds taps, which TFLite's geometry never makes, gives the clamp
 * of -128 (max) or 0 (average) rather than TFLite's error.
 *
 * uint8 (the legacy models; values held as int8 v - 128, as
 * model/tflint8.c holds them): reference_ops::AveragePool on uint8
 * rounds (sum + count / 2) / count on the uint8 sum, which is never
 * negative, so a window whose moved sum is negative rounds its halves
 * up there, not away from zero: the u8 variant adds the 128 back to
 * each tap before it rounds. Max is the same either way.
 */
#include "kernels/int8.h"

static int32_t clamp(int32_t v, int32_t lo, int32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* avg: 0 max, 1 average of int8, 2 average of moved uint8 */
static void pool(const struct tfk_pool2d *p, int32_t act_min,
		 int32_t act_max, const int8_t *x, int8_t *y, int avg)
{
	int32_t off = avg == 2 ? 128 : 0;

	int64_t b, oy, ox, ch, ky, kx;

	for (b = 0; b < p->n; b++)
		for (oy = 0; oy < p->oh; oy++)
			for (ox = 0; ox < p->ow; ox++)
				for (ch = 0; ch < p->c; ch++) {
					int64_t y0 = oy * p->sh - p->pad_t;
					int64_t x0 = ox * p->sw - p->pad_l;
					int32_t acc = avg ? 0 : -128, cnt = 0;

					for (ky = 0; ky < p->kh; ky++)
						for (kx = 0; kx < p->kw; kx++) {
							int64_t iy = y0 + ky;
							int64_t ix = x0 + kx;
							int32_t v;

							if (iy < 0 || iy >= p->h ||
							    ix < 0 || ix >= p->w)
								continue;
							v = x[((b * p->h + iy) *
							       p->w + ix) * p->c +
							      ch];
							if (avg)
								acc += v + off;
							else if (v > acc)
								acc = v;
							cnt++;
						}
					if (avg && cnt)
						acc = (acc > 0 ?
						       (acc + cnt / 2) / cnt :
						       (acc - cnt / 2) / cnt) -
						      off;
					y[((b * p->oh + oy) * p->ow + ox) * p->c +
					  ch] = (int8_t)clamp(acc, act_min,
							      act_max);
				}
}

void tfk_int8_max_pool_ref(const struct tfk_pool2d *p, int32_t act_min,
			   int32_t act_max, const int8_t *x, int8_t *y)
{
	pool(p, act_min, act_max, x, y, 0);
}

void tfk_int8_avg_pool_ref(const struct tfk_pool2d *p, int32_t act_min,
			   int32_t act_max, const int8_t *x, int8_t *y)
{
	pool(p, act_min, act_max, x, y, 1);
}

void tfk_int8_avg_pool_u8_ref(const struct tfk_pool2d *p, int32_t act_min,
			      int32_t act_max, const int8_t *x, int8_t *y)
{
	pool(p, act_min, act_max, x, y, 2);
}
