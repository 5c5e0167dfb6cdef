/*
 * augment.c - Keras' image augmentation layers as plain kernels.
 *
 * The geometric layers share one kernel, TF's ImageProjectiveTransformV3.
 * tfk_aug_transform_ref copies TF's generator line by line (float32, the
 * same casts to int64, the same clamp), so it can be read side by side
 * with image_ops.h. tfk_aug_transform is the one that runs: for affine
 * matrices it forms each coordinate with the same float operations as
 * the reference but hoists the row products, skips the division by the
 * projection (exactly 1 for affine maps), skips the fill-mode mapping
 * for points whose four bilinear neighbours are inside the image (the
 * mapping is the identity there in every mode) and computes the weights
 * once per pixel for all channels, reading uint8 directly. Its results
 * are bit-identical to the reference, so the test can demand equality.
 * Rejected: fixed-point weights (faster, but they would change values by
 * up to a grey level and make uint8 results differ from Keras' float
 * ones), and per-pixel incremental coordinates (x += a0 accumulates
 * rounding the reference does not have).
 *
 * The other layers are simple loops; their only subtlety is Keras' own
 * arithmetic (float32 order, smart_resize boxes), noted at each.
 */
#include "prep/augment.h"
#include "prep/resize.h"
#include "util/alloc.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Philox-4x32-10 ---------------------------------------------------------- */

/* Salmon et al. (SC'11), table 2 and section 5: the multipliers and the
 * Weyl key increments (golden ratio, sqrt(3) - 1) of Random123. */
#define PHILOX_M0 0xD2511F53u
#define PHILOX_M1 0xCD9E8D57u
#define PHILOX_W0 0x9E3779B9u
#define PHILOX_W1 0xBB67AE85u

void tfk_aug_philox(const uint32_t ctr[4], const uint32_t key[2],
		    uint32_t out[4])
{
	uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
	uint32_t k0 = key[0], k1 = key[1];
	int r;

	for (r = 0; r < 10; r++) {
		uint64_t p0 = (uint64_t)PHILOX_M0 * c0;
		uint64_t p1 = (uint64_t)PHILOX_M1 * c2;
		uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
		uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;

		c1 = (uint32_t)p1;
		c3 = (uint32_t)p0;
		c0 = n0;
		c2 = n2;
		k0 += PHILOX_W0;
		k1 += PHILOX_W1;
	}
	out[0] = c0;
	out[1] = c1;
	out[2] = c2;
	out[3] = c3;
}

void tfk_aug_rng_init(struct tfk_aug_rng *rng, uint64_t seed,
		      uint64_t record, uint32_t layer)
{
	rng->key[0] = (uint32_t)seed;
	rng->key[1] = (uint32_t)(seed >> 32);
	rng->ctr[0] = 0;
	rng->ctr[1] = layer;
	rng->ctr[2] = (uint32_t)record;
	rng->ctr[3] = (uint32_t)(record >> 32);
	rng->n_used = 4;
}

uint32_t tfk_aug_rng_u32(struct tfk_aug_rng *rng)
{
	if (rng->n_used == 4) {
		tfk_aug_philox(rng->ctr, rng->key, rng->buf);
		rng->ctr[0]++;
		rng->n_used = 0;
	}
	return rng->buf[rng->n_used++];
}

float tfk_aug_rng_uniform(struct tfk_aug_rng *rng, float lo, float hi)
{
	/* TF's Uint32ToFloat (random_distributions.h): exponent of 1.0,
	 * 23 random mantissa bits, minus one. */
	uint32_t bits = 0x3f800000u | (tfk_aug_rng_u32(rng) & 0x7fffffu);
	float r;

	memcpy(&r, &bits, sizeof(r));
	r -= 1.0f;
	return r * (hi - lo) + lo;
}

/* Names ------------------------------------------------------------------- */

static const char *const interp_names[] = { "nearest", "bilinear" };
static const char *const fill_names[] = { "reflect", "wrap", "constant",
					  "nearest" };

static int find_name(const char *s, const char *const *names, int n)
{
	int i;

	for (i = 0; s && i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

int tfk_aug_interp_parse(const char *s)
{
	return find_name(s, interp_names, 2);
}

int tfk_aug_fill_parse(const char *s)
{
	return find_name(s, fill_names, 4);
}

const char *tfk_aug_interp_name(int interp)
{
	return interp >= 0 && interp < 2 ? interp_names[interp] : "?";
}

const char *tfk_aug_fill_name(int fill)
{
	return fill >= 0 && fill < 4 ? fill_names[fill] : "?";
}

int tfk_aug_flip_parse(const char *s)
{
	static const char *const names[] = { "horizontal", "vertical",
					     "horizontal_and_vertical" };

	int i = find_name(s, names, 3);

	return i < 0 ? -1 : i + 1;
}

/* Checks and element access ---------------------------------------------- */

static int check_image(const struct tfk_aug_image *im, const char *what,
		       struct tfk_err *err)
{
	if (!im || !im->data)
		return tfk_errf(err, TFK_EINVAL, "%s image: no data", what);
	if (im->dtype != TFK_AUG_U8 && im->dtype != TFK_AUG_F32)
		return tfk_errf(err, TFK_EINVAL,
				"%s image: dtype %d is not uint8 or float32",
				what, im->dtype);
	if (im->h < 1 || im->w < 1 || im->c < 1)
		return tfk_errf(err, TFK_EINVAL,
				"%s image: shape [%d, %d, %d] is not positive",
				what, im->h, im->w, im->c);
	/* Every index below is a size_t; keep h * w * c * 4 in range. */
	if ((size_t)im->h * (size_t)im->w > SIZE_MAX / 4 / (size_t)im->c)
		return tfk_errf(err, TFK_EINVAL,
				"%s image: shape [%d, %d, %d] is too large",
				what, im->h, im->w, im->c);
	return 0;
}

static int check_pair(const struct tfk_aug_image *src,
		      const struct tfk_aug_image *dst, int same_size,
		      struct tfk_err *err)
{
	int rc;

	if ((rc = check_image(src, "source", err)) ||
	    (rc = check_image(dst, "destination", err)))
		return rc;
	if (dst->c != src->c)
		return tfk_errf(err, TFK_EINVAL,
				"destination has %d channels, source %d",
				dst->c, src->c);
	if (same_size && (dst->h != src->h || dst->w != src->w))
		return tfk_errf(err, TFK_EINVAL,
				"destination is %dx%d, source %dx%d",
				dst->h, dst->w, src->h, src->w);
	return 0;
}

/* For the functions that do not honour a source's rescale. */
static int check_plain(const struct tfk_aug_image *src, struct tfk_err *err)
{
	if (src && src->rescale)
		return tfk_errf(err, TFK_EINVAL, "source image: only flips "
				"and transforms take a rescaled source");
	return 0;
}

/* Element i of a source image as float32, rescaled as it asks. */
static inline float rescaled(const struct tfk_aug_image *im, float v)
{
	if (im->rescale == TFK_AUG_RESCALE_NONE)
		return v;
	v = v * im->scale;
	return im->rescale == TFK_AUG_RESCALE_OFFSET ? v + im->offset : v;
}

static inline float load(const struct tfk_aug_image *im, size_t i)
{
	return rescaled(im, im->dtype == TFK_AUG_U8 ?
			(float)((const uint8_t *)im->data)[i] :
			((const float *)im->data)[i]);
}

/* Round half away from zero, clamp to [0, 255] (resize.h's rule); NaN
 * becomes 0. Not (int)(v + 0.5f): that sum can round up (v = 0.5 - 2^-25
 * gives 1); v - r is exact. */
static inline uint8_t to_u8(float v)
{
	uint8_t r;

	if (!(v > 0.0f))
		return 0;
	if (v >= 255.0f)
		return 255;
	r = (uint8_t)v;
	return (uint8_t)(r + (v - r >= 0.5f));
}

/* to_u8 over a row, branch-free so the compiler can vectorise it. */
static void row_to_u8(uint8_t *out, const float *in, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++) {
		float v = in[k] > 0.0f ? in[k] : 0.0f;	/* NaN -> 0 */
		int r;

		v = v < 255.0f ? v : 255.0f;
		r = (int)v;
		out[k] = (uint8_t)(r + (v - (float)r >= 0.5f));
	}
}

static inline void store(struct tfk_aug_image *im, size_t i, float v)
{
	if (im->dtype == TFK_AUG_U8)
		((uint8_t *)im->data)[i] = to_u8(v);
	else
		((float *)im->data)[i] = v;
}

#ifdef __SSE2__
/* Four uint8 as four floats (exact). */
static inline __m128 load4_u8(const uint8_t *p)
{
	uint32_t v;
	__m128i x;

	memcpy(&v, p, 4);
	x = _mm_cvtsi32_si128((int)v);
	x = _mm_unpacklo_epi8(x, _mm_setzero_si128());
	x = _mm_unpacklo_epi16(x, _mm_setzero_si128());
	return _mm_cvtepi32_ps(x);
}

/* rescaled() on four lanes. */
static inline __m128 rescaled4(const struct tfk_aug_image *rs, __m128 v)
{
	if (rs->rescale == TFK_AUG_RESCALE_NONE)
		return v;
	v = _mm_mul_ps(v, _mm_set1_ps(rs->scale));
	return rs->rescale == TFK_AUG_RESCALE_OFFSET ?
		_mm_add_ps(v, _mm_set1_ps(rs->offset)) : v;
}
#endif

/* rescaled() over n floats in place: a second pass over a row still
 * in cache, rather than a branch per element. */
static void rescale_run(float *o, size_t n, const struct tfk_aug_image *rs)
{
	size_t k = 0;

	if (rs->rescale == TFK_AUG_RESCALE_NONE)
		return;
#ifdef __SSE2__
	for (; k + 4 <= n; k += 4)
		_mm_storeu_ps(o + k, rescaled4(rs, _mm_loadu_ps(o + k)));
#endif
	for (; k < n; k++)
		o[k] = rescaled(rs, o[k]);
}

/* n elements from src[si..] to dst[di..], converting as needed. */
static void copy_run(struct tfk_aug_image *dst, size_t di,
		     const struct tfk_aug_image *src, size_t si, size_t n)
{
	size_t k;

	if (dst->dtype == src->dtype && !src->rescale) {
		size_t es = src->dtype == TFK_AUG_U8 ? 1 : 4;

		memcpy((char *)dst->data + di * es,
		       (const char *)src->data + si * es, n * es);
		return;
	}
	if (dst->dtype == TFK_AUG_F32) {
		float *o = (float *)dst->data + di;
		const uint8_t *p = (const uint8_t *)src->data + si;

		k = 0;
		if (src->dtype == TFK_AUG_U8) {
#ifdef __SSE2__
			for (; k + 4 <= n; k += 4)
				_mm_storeu_ps(o + k, rescaled4(src,
						load4_u8(p + k)));
#endif
			for (; k < n; k++)
				o[k] = rescaled(src, (float)p[k]);
		} else {
			memcpy(o, (const float *)src->data + si,
			       n * sizeof(float));
			rescale_run(o, n, src);
		}
		return;
	}
	for (k = 0; k < n; k++)
		store(dst, di + k, load(src, si + k));
}

static int copy_image(const struct tfk_aug_image *src,
		      struct tfk_aug_image *dst, struct tfk_err *err)
{
	int rc = check_pair(src, dst, 1, err);

	if (rc)
		return rc;
	copy_run(dst, 0, src, 0, (size_t)src->h * src->w * src->c);
	return 0;
}

/* The projective transform ------------------------------------------------ */

/*
 * TF's MapCoordinate for one axis, written with TF's types so the same
 * conversions happen (int64 products, float compares). Returns NaN where
 * TF's behaviour is undefined (NaN in, int64 overflow), which every
 * caller turns into fill_value.
 */
static float map_coord(float in, int64_t len, int fill)
{
	float c = in;

	if (isnan(c))
		return NAN;
	switch (fill) {
	case TFK_AUG_REFLECT:
		if ((c < 0 || c > len - 1) && !(fabsf(c) < 1e18f))
			return NAN;
		if (c < 0) {
			if (len <= 1) {
				c = 0;
			} else {
				const int64_t sz2 = 2 * len;

				if (c < sz2)
					c = sz2 * (int64_t)(-c / sz2) + c;
				c = (c < -len) ? c + sz2 : -c - 1;
			}
		} else if (c > len - 1) {
			if (len <= 1) {
				c = 0;
			} else {
				const int64_t sz2 = 2 * len;

				c -= sz2 * (int64_t)(c / sz2);
				if (c >= len)
					c = sz2 - c - 1;
			}
		}
		break;
	case TFK_AUG_WRAP:
		if ((c < 0 || c > len - 1) && !(fabsf(c) < 1e18f))
			return NAN;
		if (c < 0) {
			if (len <= 1) {
				c = 0;
			} else {
				const int64_t sz = len - 1;

				c += len * ((int64_t)(-c / sz) + 1);
			}
		} else if (c > len - 1) {
			if (len <= 1) {
				c = 0;
			} else {
				const int64_t sz = len - 1;

				c -= len * (int64_t)(c / sz);
			}
		}
		break;
	case TFK_AUG_CONSTANT:
		return c;
	default:	/* TFK_AUG_EDGE */
		break;
	}
	/* Eigen's scalar_clamp_op: min(max(c, 0), len - 1). */
	if (c < 0.0f)
		c = 0.0f;
	if ((float)(len - 1) < c)
		c = (float)(len - 1);
	return c;
}

/* std::round of a point already known to be in [0, 2^62): halves away
 * from zero, without the libm call (v - r is exact). */
static inline int64_t round_nonneg(float v)
{
	int64_t r = (int64_t)v;

	return r + (v - (float)r >= 0.5f);
}

/* One output pixel of TF's generator, all channels: the shared slow path
 * (edges, projective maps) of the reference and the fast kernel. Past
 * the range check the point is in [0, len - 1], so floor is the int64
 * conversion and std::round is round_nonneg, both exact. */
#define DEFINE_PIXEL(NAME, T)						\
static void NAME(const T *src, const struct tfk_aug_image *rs,		\
		 int64_t h, int64_t w, int c, float ix, float iy,	\
		 const struct tfk_aug_warp *wp, float *out)		\
{									\
	const float fv = wp->fill_value;				\
	float x = map_coord(ix, w, wp->fill);				\
	float y = map_coord(iy, h, wp->fill);				\
	int ch;								\
									\
	if (isnan(x) || isnan(y) || x < 0 || x > w - 1 || y < 0 ||	\
	    y > h - 1) {						\
		for (ch = 0; ch < c; ch++)				\
			out[ch] = fv;					\
		return;							\
	}								\
	if (wp->interp == TFK_AUG_NEAREST) {				\
		int64_t yi = round_nonneg(y), xi = round_nonneg(x);	\
		int in = yi >= 0 && yi < h && xi >= 0 && xi < w;	\
									\
		for (ch = 0; ch < c; ch++)				\
			out[ch] = in ? rescaled(rs,			\
				(float)src[(yi * w + xi) * c + ch]) : fv; \
		return;							\
	}								\
	{								\
		const float yf = (float)(int64_t)y;			\
		const float xf = (float)(int64_t)x;			\
		const float yc = yf + 1, xc = xf + 1;			\
		const int64_t y0 = (int64_t)yf, x0 = (int64_t)xf;	\
		const int64_t y1 = (int64_t)yc, x1 = (int64_t)xc;	\
		const int iy0 = y0 >= 0 && y0 < h, iy1 = y1 >= 0 && y1 < h; \
		const int ix0 = x0 >= 0 && x0 < w, ix1 = x1 >= 0 && x1 < w; \
									\
		for (ch = 0; ch < c; ch++) {				\
			float p00 = iy0 && ix0 ? rescaled(rs,		\
				(float)src[(y0 * w + x0) * c + ch]) : fv; \
			float p01 = iy0 && ix1 ? rescaled(rs,		\
				(float)src[(y0 * w + x1) * c + ch]) : fv; \
			float p10 = iy1 && ix0 ? rescaled(rs,		\
				(float)src[(y1 * w + x0) * c + ch]) : fv; \
			float p11 = iy1 && ix1 ? rescaled(rs,		\
				(float)src[(y1 * w + x1) * c + ch]) : fv; \
			float vf = (xc - x) * p00 + (x - xf) * p01;	\
			float vc = (xc - x) * p10 + (x - xf) * p11;	\
									\
			out[ch] = (yc - y) * vf + (y - yf) * vc;	\
		}							\
	}								\
}

DEFINE_PIXEL(pixel_f32, float)
DEFINE_PIXEL(pixel_u8, uint8_t)

void tfk_aug_transform_ref(const float *src, int h, int w, int c,
			   float *dst, int oh, int ow, const float t[8],
			   const struct tfk_aug_warp *wp)
{
	const struct tfk_aug_image plain = { 0 };
	int64_t oy, ox;
	int ch;

	for (oy = 0; oy < oh; oy++)
		for (ox = 0; ox < ow; ox++) {
			float *out = dst + (oy * ow + ox) * c;
			float k = t[6] * ox + t[7] * oy + 1.f;
			float ix, iy;

			if (k == 0) {
				for (ch = 0; ch < c; ch++)
					out[ch] = wp->fill_value;
				continue;
			}
			ix = (t[0] * ox + t[1] * oy + t[2]) / k;
			iy = (t[3] * ox + t[4] * oy + t[5]) / k;
			pixel_f32(src, &plain, h, w, c, ix, iy, wp, out);
		}
}

#define BILERP(T, CH)							\
	do {								\
		int ch_;						\
		for (ch_ = 0; ch_ < (CH); ch_++) {			\
			float vf = wx0 * rescaled(rs, (float)p0[ch_]) +	\
				   wx1 * rescaled(rs, (float)p0[(CH) + ch_]); \
			float vc = wx0 * rescaled(rs, (float)p1[ch_]) +	\
				   wx1 * rescaled(rs, (float)p1[(CH) + ch_]); \
			out[ch_] = wy0 * vf + wy1 * vc;			\
		}							\
	} while (0)

#ifdef __SSE2__
/* Four floats. */
static inline __m128 load4_f32(const float *p)
{
	return _mm_loadu_ps(p);
}

/* The channels of one interior bilinear pixel in the lanes of a vector;
 * all four lanes stored when full, else three. */
#define DEFINE_VEC(NAME, T, LOAD4)					\
static inline void NAME(const T *p0, const T *p1, int c,		\
			const struct tfk_aug_image *rs, float wx0,	\
			float wx1, float wy0, float wy1, float *out,	\
			int full)					\
{									\
	__m128 a0 = _mm_set1_ps(wx0), a1 = _mm_set1_ps(wx1);		\
	__m128 vf = _mm_add_ps(_mm_mul_ps(a0, rescaled4(rs, LOAD4(p0))), \
			       _mm_mul_ps(a1, rescaled4(rs, LOAD4(p0 + c)))); \
	__m128 vc = _mm_add_ps(_mm_mul_ps(a0, rescaled4(rs, LOAD4(p1))), \
			       _mm_mul_ps(a1, rescaled4(rs, LOAD4(p1 + c)))); \
	__m128 o = _mm_add_ps(_mm_mul_ps(_mm_set1_ps(wy0), vf),		\
			      _mm_mul_ps(_mm_set1_ps(wy1), vc));	\
									\
	if (full) {							\
		_mm_storeu_ps(out, o);					\
	} else {							\
		float tmp[4];						\
									\
		_mm_storeu_ps(tmp, o);					\
		memcpy(out, tmp, 3 * sizeof(float));			\
	}								\
}
DEFINE_VEC(vec_u8, uint8_t, load4_u8)
DEFINE_VEC(vec_f32, float, load4_f32)
#define HAVE_VEC 1
#else
#define HAVE_VEC 0
#define vec_u8(p0, p1, c, rs, wx0, wx1, wy0, wy1, out, full) ((void)0)
#define vec_f32(p0, p1, c, rs, wx0, wx1, wy0, wy1, out, full) ((void)0)
#endif

/*
 * One output row of an affine map. ix, iy are formed exactly as the
 * reference forms them: (a0 * x + a1 * y) + a2, with a1 * y hoisted.
 * Interior bilinear points (0 <= ix < w - 1, 0 <= iy < h - 1, which also
 * rejects NaN) need no mapping and no bounds checks; there floor() is
 * the int conversion because the point is not negative. Points outside
 * are mapped by the fill mode first and, when they land inside, take
 * the interior path too (the reference interpolates the mapped point
 * the same way); the rest, and nearest interpolation, go through PIXEL.
 * With SSE2 the three or four channels of an interior pixel are the
 * lanes of one vector (VEC). The lanes compute each channel's float
 * expression exactly as the scalar code does (IEEE single operations,
 * same order), so results do not change. With three channels the
 * fourth lane reads the next pixel's first value (skipped where that
 * would pass the end of the image) and its result is stored only where
 * the next pixel overwrites it. Otherwise the channel loop is
 * instantiated for c = 1, 3 and 4 so the compiler can unroll it.
 */
#define DEFINE_ROW(NAME, T, PIXEL, VEC)					\
static void NAME(const T *src, const struct tfk_aug_image *rs, int h,	\
		 int w, int c, float *out, int ow, int64_t oy,		\
		 const float t[8], const struct tfk_aug_warp *wp)	\
{									\
	const float ry0 = t[1] * oy, ry1 = t[4] * oy;			\
	const float xmax = (float)(w - 1), ymax = (float)(h - 1);	\
	const size_t stride = (size_t)w * c;				\
	const int bilinear = wp->interp == TFK_AUG_BILINEAR;		\
	const int remap = bilinear && wp->fill != TFK_AUG_CONSTANT;	\
	const T *last4 = src + (size_t)h * stride - 4;			\
	const int vec = HAVE_VEC && (c == 3 || c == 4);			\
	int ox;								\
									\
	for (ox = 0; ox < ow; ox++, out += c) {				\
		const float fx = (float)ox;				\
		const float ix0 = t[0] * fx + ry0 + t[2];		\
		const float iy0 = t[3] * fx + ry1 + t[5];		\
		float ix = ix0, iy = iy0;				\
		int xi, yi;						\
		float xf, yf, wx0, wx1, wy0, wy1;			\
		const T *p0, *p1;					\
									\
		if (!(bilinear && ix >= 0 && ix < xmax && iy >= 0 &&	\
		      iy < ymax)) {					\
			if (remap) {					\
				ix = map_coord(ix0, w, wp->fill);	\
				iy = map_coord(iy0, h, wp->fill);	\
			}						\
			if (!(remap && ix >= 0 && ix < xmax && iy >= 0 && \
			      iy < ymax)) {				\
				PIXEL(src, rs, h, w, c, ix0, iy0, wp, out); \
				continue;				\
			}						\
		}							\
		xi = (int)ix;						\
		yi = (int)iy;						\
		xf = (float)xi;						\
		yf = (float)yi;						\
		wx0 = (xf + 1) - ix;					\
		wx1 = ix - xf;						\
		wy0 = (yf + 1) - iy;					\
		wy1 = iy - yf;						\
		p0 = src + (size_t)yi * stride + (size_t)xi * c;	\
		p1 = p0 + stride;					\
		if (vec && p1 + c <= last4) {				\
			VEC(p0, p1, c, rs, wx0, wx1, wy0, wy1, out,	\
			    c == 4 || ox + 1 < ow);			\
			continue;					\
		}							\
		if (c == 3)						\
			BILERP(T, 3);					\
		else if (c == 1)					\
			BILERP(T, 1);					\
		else if (c == 4)					\
			BILERP(T, 4);					\
		else							\
			BILERP(T, c);					\
	}								\
}

DEFINE_ROW(row_u8, uint8_t, pixel_u8, vec_u8)
DEFINE_ROW(row_f32, float, pixel_f32, vec_f32)

static void row_projective(const struct tfk_aug_image *src, float *out,
			   int ow, int64_t oy, const float t[8],
			   const struct tfk_aug_warp *wp)
{
	const int h = src->h, w = src->w, c = src->c;
	int64_t ox;
	int ch;

	for (ox = 0; ox < ow; ox++, out += c) {
		float k = t[6] * ox + t[7] * oy + 1.f;
		float ix, iy;

		if (k == 0) {
			for (ch = 0; ch < c; ch++)
				out[ch] = wp->fill_value;
			continue;
		}
		ix = (t[0] * ox + t[1] * oy + t[2]) / k;
		iy = (t[3] * ox + t[4] * oy + t[5]) / k;
		if (src->dtype == TFK_AUG_U8)
			pixel_u8(src->data, src, h, w, c, ix, iy, wp, out);
		else
			pixel_f32(src->data, src, h, w, c, ix, iy, wp, out);
	}
}

static int check_warp(const struct tfk_aug_warp *wp, struct tfk_err *err)
{
	if (!wp)
		return tfk_errf(err, TFK_EINVAL, "no interpolation options");
	if (wp->interp != TFK_AUG_NEAREST && wp->interp != TFK_AUG_BILINEAR)
		return tfk_errf(err, TFK_EINVAL, "unknown interpolation %d",
				wp->interp);
	if (wp->fill < TFK_AUG_REFLECT || wp->fill > TFK_AUG_EDGE)
		return tfk_errf(err, TFK_EINVAL, "unknown fill mode %d",
				wp->fill);
	return 0;
}

int tfk_aug_transform(const struct tfk_aug_image *src,
		      struct tfk_aug_image *dst, const float t[8],
		      const struct tfk_aug_warp *wp, struct tfk_err *err)
{
	const int ow = dst ? dst->w : 0, c = src ? src->c : 0;
	const int affine = t && t[6] == 0 && t[7] == 0;
	float *row = NULL;
	int64_t oy;
	int rc;

	if ((rc = check_pair(src, dst, 0, err)) || (rc = check_warp(wp, err)))
		return rc;
	if (!t)
		return tfk_errf(err, TFK_EINVAL, "no transform");
	if (dst->dtype == TFK_AUG_U8) {
		row = tfk_malloc((size_t)ow * c * sizeof(float));
		if (!row)
			return tfk_errf(err, TFK_ENOMEM,
					"out of memory for a %d-pixel row", ow);
	}
	for (oy = 0; oy < dst->h; oy++) {
		size_t base = (size_t)oy * ow * c;
		float *out = row ? row : (float *)dst->data + base;

		if (!affine)
			row_projective(src, out, ow, oy, t, wp);
		else if (src->dtype == TFK_AUG_U8)
			row_u8(src->data, src, src->h, src->w, c, out, ow, oy,
			       t, wp);
		else
			row_f32(src->data, src, src->h, src->w, c, out, ow,
				oy, t, wp);
		if (row)
			row_to_u8((uint8_t *)dst->data + base, row,
				  (size_t)ow * c);
	}
	tfk_free(row);
	return 0;
}

void tfk_aug_rotation_matrix(int h, int w, double angle, float t[8])
{
	/* RandomRotation._compute_affine_matrix with center 0.5, 0.5,
	 * scale 1, no shear or translation: cx = 0.5 * (w - 1). */
	const double cx = 0.5 * (w - 1), cy = 0.5 * (h - 1);
	const double co = cos(angle), si = sin(angle);

	t[0] = (float)co;
	t[1] = (float)-si;
	t[2] = (float)(cx - cx * co + cy * si);
	t[3] = (float)si;
	t[4] = (float)co;
	t[5] = (float)(cy - cx * si - cy * co);
	t[6] = 0;
	t[7] = 0;
}

void tfk_aug_zoom_matrix(int h, int w, double zx, double zy, float t[8])
{
	t[0] = (float)zx;
	t[1] = 0;
	t[2] = (float)((w - 1.0) / 2.0 * (1.0 - zx));
	t[3] = 0;
	t[4] = (float)zy;
	t[5] = (float)((h - 1.0) / 2.0 * (1.0 - zy));
	t[6] = 0;
	t[7] = 0;
}

void tfk_aug_translation_matrix(double dx, double dy, float t[8])
{
	t[0] = 1;
	t[1] = 0;
	t[2] = (float)-dx;
	t[3] = 0;
	t[4] = 1;
	t[5] = (float)-dy;
	t[6] = 0;
	t[7] = 0;
}

/* Layers ------------------------------------------------------------------ */

int tfk_aug_rescale(const struct tfk_aug_image *src,
		    struct tfk_aug_image *dst, const float *scale,
		    const float *offset, int n_param, struct tfk_err *err)
{
	size_t i, n;
	int rc = check_pair(src, dst, 1, err), c;

	if (!rc)
		rc = check_plain(src, err);
	if (rc)
		return rc;
	c = src->c;
	if (!scale || !offset || (n_param != 1 && n_param != c))
		return tfk_errf(err, TFK_EINVAL,
				"rescaling: %d scale/offset values for %d "
				"channels (want 1 or %d)", n_param, c, c);
	n = (size_t)src->h * src->w;
	for (i = 0; i < n; i++) {
		int ch;

		for (ch = 0; ch < c; ch++) {
			int p = n_param == 1 ? 0 : ch;
			size_t k = i * c + ch;

			store(dst, k, load(src, k) * scale[p] + offset[p]);
		}
	}
	return 0;
}

/* Crop the window at (y, x) of dst's size out of src. */
static void crop_window(const struct tfk_aug_image *src,
			struct tfk_aug_image *dst, int y, int x)
{
	const size_t c = (size_t)src->c;
	int r;

	for (r = 0; r < dst->h; r++)
		copy_run(dst, (size_t)r * dst->w * c, src,
			 ((size_t)(y + r) * src->w + x) * c, (size_t)dst->w * c);
}

/* Keras' smart_resize: the aspect window, then bilinear tf.image.resize. */
static int smart_resize(const struct tfk_aug_image *src,
			struct tfk_aug_image *dst, struct tfk_err *err)
{
	const int c = src->c;
	const size_t stride = (size_t)src->w * c;
	struct tfk_crop box;
	float *tmp;
	size_t k, n;
	int rc;

	tfk_resize_crop_aspect(src->h, src->w, dst->h, dst->w, &box);
	k = ((size_t)box.y * src->w + box.x) * c;
	if (src->dtype == TFK_AUG_U8 && dst->dtype == TFK_AUG_U8)
		return tfk_resize_u8((const uint8_t *)src->data + k, box.h,
				     box.w, stride, c, dst->data, dst->h,
				     dst->w, TFK_RESIZE_BILINEAR, 0, err);
	if (src->dtype == TFK_AUG_U8)
		return tfk_resize_u8_f32((const uint8_t *)src->data + k, box.h,
					 box.w, stride, c, dst->data, dst->h,
					 dst->w, TFK_RESIZE_BILINEAR, 0, err);
	if (dst->dtype == TFK_AUG_F32)
		return tfk_resize_f32((const float *)src->data + k, box.h,
				      box.w, stride, c, dst->data, dst->h,
				      dst->w, TFK_RESIZE_BILINEAR, 0, err);
	n = (size_t)dst->h * dst->w * c;
	tmp = tfk_malloc(n * sizeof(float));
	if (!tmp)
		return tfk_errf(err, TFK_ENOMEM, "out of memory for a %dx%d "
				"resize", dst->h, dst->w);
	rc = tfk_resize_f32((const float *)src->data + k, box.h, box.w,
			    stride, c, tmp, dst->h, dst->w,
			    TFK_RESIZE_BILINEAR, 0, err);
	for (k = 0; !rc && k < n; k++)
		((uint8_t *)dst->data)[k] = to_u8(tmp[k]);
	tfk_free(tmp);
	return rc;
}

int tfk_aug_center_crop(const struct tfk_aug_image *src,
			struct tfk_aug_image *dst, struct tfk_err *err)
{
	int rc = check_pair(src, dst, 0, err);

	if (!rc)
		rc = check_plain(src, err);
	if (rc)
		return rc;
	if (src->h >= dst->h && src->w >= dst->w) {
		/* int(h_diff / 2) of a non-negative difference */
		crop_window(src, dst, (src->h - dst->h) / 2,
			    (src->w - dst->w) / 2);
		return 0;
	}
	return smart_resize(src, dst, err);
}

int tfk_aug_random_crop(const struct tfk_aug_image *src,
			struct tfk_aug_image *dst, int training,
			struct tfk_aug_rng *rng, struct tfk_err *err)
{
	int rc = check_pair(src, dst, 0, err);

	if (!rc)
		rc = check_plain(src, err);
	if (rc)
		return rc;
	if (training && src->h > dst->h && src->w > dst->w) {
		const int ny = src->h - dst->h + 1, nx = src->w - dst->w + 1;
		int y, x;

		if (!rng)
			return tfk_errf(err, TFK_EINVAL, "random crop: no "
					"generator");
		/* Keras: cast(uniform((), 0, maxval=float(n)), int32); the
		 * float product can round up to n itself. */
		y = (int)tfk_aug_rng_uniform(rng, 0.0f, (float)ny);
		x = (int)tfk_aug_rng_uniform(rng, 0.0f, (float)nx);
		crop_window(src, dst, y < ny ? y : ny - 1, x < nx ? x : nx - 1);
		return 0;
	}
	return smart_resize(src, dst, err);
}

/* One row, mirrored, into a float32 row: c values per pixel, rescaled
 * as rs asks. */
#define DEFINE_MIRROR(NAME, T)						\
static void NAME(float *o, const T *s, const struct tfk_aug_image *rs,	\
		 int w, size_t c)					\
{									\
	size_t x, ch;							\
									\
	for (x = 0; x < (size_t)w; x++) {				\
		const T *p = s + ((size_t)w - 1 - x) * c;		\
									\
		for (ch = 0; ch < c; ch++)				\
			o[x * c + ch] = (float)p[ch];			\
	}								\
	rescale_run(o, (size_t)w * c, rs);				\
}
DEFINE_MIRROR(mirror_u8, uint8_t)
DEFINE_MIRROR(mirror_f32, float)

int tfk_aug_flip(const struct tfk_aug_image *src, struct tfk_aug_image *dst,
		 int mode, struct tfk_err *err)
{
	const int h = src ? src->h : 0, w = src ? src->w : 0;
	const size_t c = src ? (size_t)src->c : 0, row = (size_t)w * c;
	int rc = check_pair(src, dst, 1, err), y, x;
	size_t ch;

	if (rc)
		return rc;
	if (mode < 0 || mode > TFK_AUG_FLIP_HV)
		return tfk_errf(err, TFK_EINVAL, "unknown flip mode %d", mode);
	for (y = 0; y < h; y++) {
		int sy = mode & TFK_AUG_FLIP_V ? h - 1 - y : y;
		size_t di = (size_t)y * row, si = (size_t)sy * row;

		if (!(mode & TFK_AUG_FLIP_H))
			copy_run(dst, di, src, si, row);
		else if (dst->dtype == TFK_AUG_F32 && src->dtype == TFK_AUG_U8)
			mirror_u8((float *)dst->data + di,
				  (const uint8_t *)src->data + si, src, w, c);
		else if (dst->dtype == TFK_AUG_F32)
			mirror_f32((float *)dst->data + di,
				   (const float *)src->data + si, src, w, c);
		else
			for (x = 0; x < w; x++)
				for (ch = 0; ch < c; ch++)
					store(dst, di + (size_t)x * c + ch,
					      load(src, si + (size_t)(w - 1 -
							x) * c + ch));
	}
	return 0;
}

int tfk_aug_random_flip(const struct tfk_aug_image *src,
			struct tfk_aug_image *dst, int mode, int training,
			struct tfk_aug_rng *rng, int *flipped,
			struct tfk_err *err)
{
	int flip = 0;

	if (flipped)
		*flipped = 0;
	if (mode < TFK_AUG_FLIP_H || mode > TFK_AUG_FLIP_HV)
		return tfk_errf(err, TFK_EINVAL, "unknown flip mode %d", mode);
	if (training) {
		if (!rng)
			return tfk_errf(err, TFK_EINVAL, "random flip: no "
					"generator");
		/* less_equal(uniform(), 0.5) */
		flip = tfk_aug_rng_uniform(rng, 0.0f, 1.0f) <= 0.5f;
	}
	if (flipped)
		*flipped = flip;
	return tfk_aug_flip(src, dst, flip ? mode : 0, err);
}

int tfk_aug_contrast(const struct tfk_aug_image *src,
		     struct tfk_aug_image *dst, float factor, float lo,
		     float hi, struct tfk_err *err)
{
	float mean[64], *m = mean;
	size_t i, n;
	int rc = check_pair(src, dst, 1, err), c, ch;

	if (!rc)
		rc = check_plain(src, err);
	if (rc)
		return rc;
	if (!(lo <= hi))
		return tfk_errf(err, TFK_EINVAL, "contrast: value range "
				"[%g, %g] is empty", lo, hi);
	c = src->c;
	if (c > 64 && !(m = tfk_malloc((size_t)c * sizeof(float))))
		return tfk_errf(err, TFK_ENOMEM, "out of memory for %d "
				"channel means", c);
	n = (size_t)src->h * src->w;
	for (ch = 0; ch < c; ch++) {
		double s = 0;

		for (i = 0; i < n; i++)
			s += load(src, i * c + ch);
		m[ch] = (float)(s / (double)n);
	}
	for (i = 0; i < n; i++)
		for (ch = 0; ch < c; ch++) {
			size_t k = i * c + ch;
			float v = (load(src, k) - m[ch]) * factor + m[ch];

			/* numpy.clip: max(min(v, hi), lo) */
			v = v > hi ? hi : v;
			v = v < lo ? lo : v;
			store(dst, k, v);
		}
	if (m != mean)
		tfk_free(m);
	return 0;
}

int tfk_aug_random_contrast(const struct tfk_aug_image *src,
			    struct tfk_aug_image *dst, float lower,
			    float upper, float lo, float hi, int training,
			    struct tfk_aug_rng *rng, struct tfk_err *err)
{
	if (!training)
		return copy_image(src, dst, err);
	if (!rng)
		return tfk_errf(err, TFK_EINVAL, "random contrast: no "
				"generator");
	return tfk_aug_contrast(src, dst,
				tfk_aug_rng_uniform(rng, 1.0f - lower,
						    1.0f + upper), lo, hi, err);
}

int tfk_aug_random_rotation(const struct tfk_aug_image *src,
			    struct tfk_aug_image *dst, float lower,
			    float upper, const struct tfk_aug_warp *wp,
			    int training, struct tfk_aug_rng *rng,
			    struct tfk_err *err)
{
	float t[8], deg;
	int rc;

	if (!training)
		return copy_image(src, dst, err);
	if ((rc = check_pair(src, dst, 1, err)))
		return rc;
	if (!rng)
		return tfk_errf(err, TFK_EINVAL, "random rotation: no "
				"generator");
	deg = tfk_aug_rng_uniform(rng, lower * 360.0f, upper * 360.0f);
	tfk_aug_rotation_matrix(src->h, src->w, deg * (M_PI / 180.0), t);
	return tfk_aug_transform(src, dst, t, wp, err);
}

int tfk_aug_random_translation(const struct tfk_aug_image *src,
			       struct tfk_aug_image *dst, float h_lower,
			       float h_upper, float w_lower, float w_upper,
			       const struct tfk_aug_warp *wp, int training,
			       struct tfk_aug_rng *rng, struct tfk_err *err)
{
	float t[8], dy, dx;
	int rc;

	if (!training)
		return copy_image(src, dst, err);
	if ((rc = check_pair(src, dst, 1, err)))
		return rc;
	if (!rng)
		return tfk_errf(err, TFK_EINVAL, "random translation: no "
				"generator");
	dy = tfk_aug_rng_uniform(rng, h_lower, h_upper) * (float)src->h;
	dx = tfk_aug_rng_uniform(rng, w_lower, w_upper) * (float)src->w;
	tfk_aug_translation_matrix(dx, dy, t);
	return tfk_aug_transform(src, dst, t, wp, err);
}

int tfk_aug_random_zoom(const struct tfk_aug_image *src,
			struct tfk_aug_image *dst, float h_lower,
			float h_upper, int has_width, float w_lower,
			float w_upper, const struct tfk_aug_warp *wp,
			int training, struct tfk_aug_rng *rng,
			struct tfk_err *err)
{
	float t[8], zy, zx;
	int rc;

	if (!training)
		return copy_image(src, dst, err);
	if ((rc = check_pair(src, dst, 1, err)))
		return rc;
	if (!rng)
		return tfk_errf(err, TFK_EINVAL, "random zoom: no generator");
	zy = tfk_aug_rng_uniform(rng, 1.0f + h_lower, 1.0f + h_upper);
	zx = has_width ? tfk_aug_rng_uniform(rng, 1.0f + w_lower,
					     1.0f + w_upper) : zy;
	tfk_aug_zoom_matrix(src->h, src->w, zx, zy, t);
	return tfk_aug_transform(src, dst, t, wp, err);
}
