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
 * The fast versions (tfk_int8_max_pool, _avg_pool, _avg_pool_u8) give
 * the same bytes: each output pixel's in-bounds window is found once,
 * then its taps are taken channel-contiguously into a row of
 * per-channel accumulators (16 channels a max instruction on x86-64's
 * SSE2), in the _ref's tap order. Max is
 * exact in any order; the averages sum in int32 like the _ref, so the
 * sums and their rounding are the same. The _ref walked every tap with
 * four bounds checks and one channel at a time: 42% of the int8 CNN's
 * time at batch 32, against the convolutions' 45%.
 *
 * uint8 (the legacy models; values held as int8 v - 128, as
 * model/tflint8.c holds them): reference_ops::AveragePool on uint8
 * rounds (sum + count / 2) / count on the uint8 sum, which is never
 * negative, so a window whose moved sum is negative rounds its halves
 * up there, not away from zero: the u8 variant adds the 128 back to
 * each tap before it rounds. Max is the same either way.
 */
#include "kernels/int8.h"
#include "util/pool.h"

#include <string.h>

#if defined(__x86_64__) && defined(__SSE2__)
#include <emmintrin.h>
#endif

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

/* Channels per accumulator row: the fast loops' stack buffers. */
#define POOL_CH 256

/* A window's in-bounds rows [*a, *b) of an axis of n, from start s. */
static void span(int64_t s, int64_t k, int64_t n, int64_t *a, int64_t *b)
{
	*a = s < 0 ? 0 : s;
	*b = s + k > n ? n : s + k;
	if (*b < *a)
		*b = *a;
}

/* m[i] = max(m[i], in[i]); on x86-64 16 at a time with SSE2 (always
 * there), whose byte max is unsigned: x ^ 0x80 orders int8 as uint8. */
static inline void max_into8(int8_t *restrict m,
			     const int8_t *restrict in, int64_t n)
{
	int64_t i = 0;
#if defined(__x86_64__) && defined(__SSE2__)
	const __m128i flip = _mm_set1_epi8((char)0x80);

	for (; i + 16 <= n; i += 16) {
		__m128i a = _mm_xor_si128(_mm_loadu_si128((const void *)(m + i)),
					  flip);
		__m128i v = _mm_xor_si128(_mm_loadu_si128((const void *)(in + i)),
					  flip);

		_mm_storeu_si128((void *)(m + i),
				 _mm_xor_si128(_mm_max_epu8(a, v), flip));
	}
#endif
	for (; i < n; i++)
		m[i] = in[i] > m[i] ? in[i] : m[i];
}

/* m[i] clamped to [lo, hi], as max_into8 does it */
static void clamp8(int8_t *m, int64_t n, int8_t lo, int8_t hi)
{
	int64_t i = 0;
#if defined(__x86_64__) && defined(__SSE2__)
	const __m128i flip = _mm_set1_epi8((char)0x80);
	const __m128i l = _mm_set1_epi8((char)(lo ^ 0x80));
	const __m128i u = _mm_set1_epi8((char)(hi ^ 0x80));

	for (; i + 16 <= n; i += 16) {
		__m128i a = _mm_xor_si128(_mm_loadu_si128((const void *)(m + i)),
					  flip);

		a = _mm_min_epu8(_mm_max_epu8(a, l), u);
		_mm_storeu_si128((void *)(m + i), _mm_xor_si128(a, flip));
	}
#endif
	for (; i < n; i++)
		m[i] = m[i] < lo ? lo : m[i] > hi ? hi : m[i];
}

static void max_fast(const struct tfk_pool2d *p, int32_t act_min,
		     int32_t act_max, const int8_t *x, int8_t *y,
		     int64_t r0, int64_t r1)
{
	int8_t lo = (int8_t)clamp(act_min, -128, 127);
	int8_t hi = (int8_t)clamp(act_max, -128, 127);
	const int64_t c = p->c, h = p->h, w = p->w;
	int64_t row, b, oy, ox, iy, ix, ya, yb, xa, xb;

	for (row = r0; row < r1; row++) {
		b = row / p->oh;
		oy = row % p->oh;
		span(oy * p->sh - p->pad_t, p->kh, h, &ya, &yb);
		for (ox = 0; ox < p->ow; ox++) {
			int8_t *out = y + ((b * p->oh + oy) * p->ow +
					   ox) * c;

			span(ox * p->sw - p->pad_l, p->kw, w, &xa, &xb);
			/* the first tap copied, the others maxed in */
			if (ya < yb && xa < xb)
				memcpy(out, x + ((b * h + ya) * w + xa) * c,
				       (size_t)c);
			else
				memset(out, -128, (size_t)c);
			for (iy = ya; iy < yb; iy++)
				for (ix = iy == ya ? xa + 1 : xa; ix < xb; ix++)
					max_into8(out, x + ((b * h + iy) *
							    w + ix) * c, c);
			if (lo > -128 || hi < 127)
				clamp8(out, c, lo, hi);
		}
	}
}

/* a[i] += in[i] + off */
static void add_into32(int32_t *restrict a, const int8_t *restrict in,
		       int64_t n, int32_t off)
{
	int64_t i;

	for (i = 0; i < n; i++)
		a[i] += in[i] + off;
}

/* off: 0 int8, 128 moved uint8 (pool()'s avg 1 and 2) */
static void avg_fast(const struct tfk_pool2d *p, int32_t act_min,
		     int32_t act_max, const int8_t *x, int8_t *y,
		     int32_t off, int64_t r0, int64_t r1)
{
	int32_t acc[POOL_CH];
	const int64_t c = p->c, h = p->h, w = p->w;
	int64_t row, b, oy, ox, c0, ch, iy, ix, ya, yb, xa, xb;

	for (row = r0; row < r1; row++) {
		b = row / p->oh;
		oy = row % p->oh;
		span(oy * p->sh - p->pad_t, p->kh, h, &ya, &yb);
		for (ox = 0; ox < p->ow; ox++) {
			int8_t *out = y + ((b * p->oh + oy) * p->ow +
					   ox) * c;
			int32_t cnt;

			span(ox * p->sw - p->pad_l, p->kw, w, &xa, &xb);
			cnt = (int32_t)((yb - ya) * (xb - xa));
			for (c0 = 0; c0 < c; c0 += POOL_CH) {
				int64_t nc = c - c0 < POOL_CH ? c - c0 :
					POOL_CH;

				memset(acc, 0, (size_t)nc * sizeof(*acc));
				for (iy = ya; iy < yb; iy++)
					for (ix = xa; ix < xb; ix++)
						add_into32(acc, x + ((b * h + iy) *
								     w + ix) * c + c0,
							   nc, off);
				for (ch = 0; ch < nc; ch++) {
					int32_t v = acc[ch];

					if (cnt)
						v = (v > 0 ? (v + cnt / 2) / cnt :
						     (v - cnt / 2) / cnt) - off;
					out[c0 + ch] = (int8_t)clamp(v, act_min,
								     act_max);
				}
			}
		}
	}
}

struct pool_job {
	const struct tfk_pool2d *p;
	int32_t lo, hi;
	const int8_t *x;
	int8_t *y;
	int kind;		/* 0 max, 1 average, 2 average of moved uint8 */
};

static void pool_rows(void *ctx, int64_t r0, int64_t r1, int k)
{
	const struct pool_job *j = ctx;

	(void)k;
	if (j->kind)
		avg_fast(j->p, j->lo, j->hi, j->x, j->y, j->kind == 2 ? 128 : 0,
			 r0, r1);
	else
		max_fast(j->p, j->lo, j->hi, j->x, j->y, r0, r1);
}

static void pool_par(const struct tfk_pool2d *p, int32_t act_min,
		     int32_t act_max, const int8_t *x, int8_t *y, int kind,
		     int threads)
{
	struct pool_job j = { p, act_min, act_max, x, y, kind };

	tfk_parallel_for(threads, p->n * p->oh, pool_rows, &j);
}

void tfk_int8_max_pool(const struct tfk_pool2d *p, int32_t act_min,
		       int32_t act_max, const int8_t *x, int8_t *y,
		       int threads)
{
	pool_par(p, act_min, act_max, x, y, 0, threads);
}

void tfk_int8_avg_pool(const struct tfk_pool2d *p, int32_t act_min,
		       int32_t act_max, const int8_t *x, int8_t *y,
		       int threads)
{
	pool_par(p, act_min, act_max, x, y, 1, threads);
}

void tfk_int8_avg_pool_u8(const struct tfk_pool2d *p, int32_t act_min,
			  int32_t act_max, const int8_t *x, int8_t *y,
			  int threads)
{
	pool_par(p, act_min, act_max, x, y, 2, threads);
}
