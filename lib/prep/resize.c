/*
 * resize.c - tf.image.resize for one HWC image, uint8 or float32 in and
 * out, bit-for-bit TensorFlow's float32 arithmetic where we can.
 *
 * Every method is written as TensorFlow's CPU kernel computes it, in the
 * same float32 operations and the same order, because the point is that
 * a record converted here holds what Keras' own pipeline would produce:
 *
 *   bilinear   resize_bilinear_op.cc: per axis lower/upper/lerp from
 *              (i + 0.5) * scale - 0.5; top = tl + (tr - tl) * xl, bottom
 *              likewise, out = top + (bottom - top) * yl.
 *   nearest    resize_nearest_neighbor_op.cc with HalfPixelScalerForNN:
 *              floor((i + 0.5) * scale), clamped.
 *   bicubic    resize_bicubic_op.cc: Keys a = -0.5 coefficients from the
 *              1024-entry table (index lrintf(delta * 1024)), taps outside
 *              the image get weight 0 and the rest are renormalised;
 *              columns interpolated vertically first, then horizontally.
 *   area       resize_area_op.cc: exact pixel footprints, scale 1/(sy*sx).
 *   antialias  scale_and_translate_op.cc (what resize_images_v2 calls for
 *              antialias=True): triangle / Keys kernels widened by the
 *              downscale factor, rows gathered first, then columns.
 *
 * Speed comes from structure, not from changing the arithmetic: all
 * per-axis indices and weights are computed once per call, and every
 * method runs one output row at a time over precomputed tables. Bilinear
 * is separable in TF's own formula (the horizontal lerps of a source row
 * are shared by every output row that uses it), so the fast path keeps
 * the two horizontally-resampled rows it needs and reuses them: the
 * result is bit-identical to tfk_resize_bilinear_ref, the literal port of
 * TF's loop, and the test checks exactly that. A fixed-point path was
 * rejected: it would be faster still but no longer equal TF's floats.
 *
 * uint8 output rounds halves away from zero after clamping to [0, 255].
 */
#include "prep/resize.h"
#include "util/alloc.h"

#include <float.h>
#include <math.h>
#include <string.h>

enum { T_U8, T_F32 };

#define MAX_SIDE (1 << 28)

int tfk_resize_method_parse(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "bilinear"))
		return TFK_RESIZE_BILINEAR;
	if (!strcmp(s, "nearest"))
		return TFK_RESIZE_NEAREST;
	if (!strcmp(s, "bicubic"))
		return TFK_RESIZE_BICUBIC;
	if (!strcmp(s, "area"))
		return TFK_RESIZE_AREA;
	return -1;
}

const char *tfk_resize_method_name(int method)
{
	switch (method) {
	case TFK_RESIZE_BILINEAR: return "bilinear";
	case TFK_RESIZE_NEAREST: return "nearest";
	case TFK_RESIZE_BICUBIC: return "bicubic";
	case TFK_RESIZE_AREA: return "area";
	default: return "unknown";
	}
}

void tfk_resize_crop_aspect(int h, int w, int out_h, int out_w,
			    struct tfk_crop *box)
{
	/* Keras: int32(float32(w * th) / tw), min with the side, max 1. */
	int ch = (int)((float)((long long)w * out_h) / (float)out_w);
	int cw = (int)((float)((long long)h * out_w) / (float)out_h);

	if (ch > h)
		ch = h;
	if (ch < 1)
		ch = 1;
	if (cw > w)
		cw = w;
	if (cw < 1)
		cw = 1;
	box->h = ch;
	box->w = cw;
	box->y = (int)((float)(h - ch) / 2.0f);
	box->x = (int)((float)(w - cw) / 2.0f);
}

int tfk_resize_pad_aspect(int h, int w, int out_h, int out_w,
			  struct tfk_crop *box)
{
	/* image_ops_impl.py _resize_image_with_pad_common, in float32 */
	float fh = (float)h, fw = (float)w;
	float fth = (float)out_h, ftw = (float)out_w;
	float rw = fw / ftw, rh = fh / fth;
	float ratio = rw > rh ? rw : rh;
	float hf = fh / ratio, wf = fw / ratio;
	float ph = floorf((fth - hf) / 2.0f), pw = floorf((ftw - wf) / 2.0f);

	box->h = (int)floorf(hf);
	box->w = (int)floorf(wf);
	box->y = ph > 0.0f ? (int)ph : 0;
	box->x = pw > 0.0f ? (int)pw : 0;
	if (box->h < 1 || box->w < 1 || box->y + box->h > out_h ||
	    box->x + box->w > out_w)
		return -1;
	return 0;
}

static inline uint8_t to_u8(float v)
{
	int i;

	if (!(v > 0.0f))
		return 0;	/* also NaN */
	if (v >= 255.0f)
		return 255;
	/* v - i is exact; (int)(v + 0.5f) is not just below 0.5 */
	i = (int)v;
	return (uint8_t)(i + (v - (float)i >= 0.5f));
}

/* Write n floats as the output type. */
static void emit(void *dst, int ot, size_t off, const float *v, size_t n)
{
	size_t i;

	if (ot == T_F32) {
		memcpy((float *)dst + off, v, n * sizeof(float));
		return;
	}
	for (i = 0; i < n; i++)
		((uint8_t *)dst)[off + i] = to_u8(v[i]);
}

static inline float at(const void *src, int it, size_t i)
{
	return it == T_U8 ? (float)((const uint8_t *)src)[i]
			  : ((const float *)src)[i];
}

static float scale_of(int in, int out)
{
	return (float)in / (float)out;	/* TF's CalculateResizeScale */
}

/* Bilinear ------------------------------------------------------------ */

struct lin {
	size_t lo, hi;		/* element offsets (x axis: times c) */
	float t;
};

static void lin_axis(int in, int out, size_t mul, struct lin *ax)
{
	float scale = scale_of(in, out);
	int i;

	for (i = 0; i < out; i++) {
		float v = ((float)i + 0.5f) * scale - 0.5f;
		float f = floorf(v);
		long lo = (long)f, hi = (long)ceilf(v);

		if (lo < 0)
			lo = 0;
		if (hi > in - 1)
			hi = in - 1;
		ax[i].lo = (size_t)lo * mul;
		ax[i].hi = (size_t)hi * mul;
		ax[i].t = v - f;
	}
}

void tfk_resize_bilinear_ref(const float *src, int sh, int sw, int c,
			     float *dst, int dh, int dw)
{
	float hs = scale_of(sh, dh), ws = scale_of(sw, dw);
	int y, x, k;

	for (y = 0; y < dh; y++) {
		float iy = ((float)y + 0.5f) * hs - 0.5f;
		float fy = floorf(iy), yl = iy - fy;
		long y0 = (long)fy < 0 ? 0 : (long)fy;
		long y1 = (long)ceilf(iy) > sh - 1 ? sh - 1 : (long)ceilf(iy);

		for (x = 0; x < dw; x++) {
			float ix = ((float)x + 0.5f) * ws - 0.5f;
			float fx = floorf(ix), xl = ix - fx;
			long x0 = (long)fx < 0 ? 0 : (long)fx;
			long x1 = (long)ceilf(ix) > sw - 1 ? sw - 1
							   : (long)ceilf(ix);

			for (k = 0; k < c; k++) {
				float tl = src[(y0 * sw + x0) * c + k];
				float tr = src[(y0 * sw + x1) * c + k];
				float bl = src[(y1 * sw + x0) * c + k];
				float br = src[(y1 * sw + x1) * c + k];
				float top = tl + (tr - tl) * xl;
				float bot = bl + (br - bl) * xl;

				dst[((size_t)y * dw + x) * c + k] =
					top + (bot - top) * yl;
			}
		}
	}
}

/* Horizontal lerps of one source row, per input type. */
static void hlin_u8(const uint8_t *row, int c, const struct lin *ax, int dw,
		    float *out)
{
	int x, k;

	if (c == 3) {
		for (x = 0; x < dw; x++, out += 3) {
			const uint8_t *a = row + ax[x].lo, *b = row + ax[x].hi;
			float t = ax[x].t;
			float a0 = a[0], a1 = a[1], a2 = a[2];

			out[0] = a0 + ((float)b[0] - a0) * t;
			out[1] = a1 + ((float)b[1] - a1) * t;
			out[2] = a2 + ((float)b[2] - a2) * t;
		}
		return;
	}
	for (x = 0; x < dw; x++, out += c) {
		const uint8_t *a = row + ax[x].lo, *b = row + ax[x].hi;

		for (k = 0; k < c; k++) {
			float l = a[k];

			out[k] = l + ((float)b[k] - l) * ax[x].t;
		}
	}
}

static void hlin_f32(const float *row, int c, const struct lin *ax, int dw,
		     float *out)
{
	int x, k;

	for (x = 0; x < dw; x++, out += c) {
		const float *a = row + ax[x].lo, *b = row + ax[x].hi;

		for (k = 0; k < c; k++)
			out[k] = a[k] + (b[k] - a[k]) * ax[x].t;
	}
}

struct job {
	const void *src;
	int it, sh, sw, c;
	size_t ss;		/* source row stride, elements */
	void *dst;
	int ot, dh, dw;
	size_t ds;		/* destination row stride, elements */
};

static void hlin(const struct job *j, int y, const struct lin *ax,
		 float *out)
{
	if (j->it == T_U8)
		hlin_u8((const uint8_t *)j->src + (size_t)y * j->ss, j->c, ax,
			j->dw, out);
	else
		hlin_f32((const float *)j->src + (size_t)y * j->ss, j->c, ax,
			 j->dw, out);
}

static int bilinear(const struct job *j, float *mem)
{
	size_t rw = (size_t)j->dw * j->c;
	struct lin *xa = (struct lin *)mem;
	struct lin *ya = xa + j->dw;
	float *buf[2], *orow;
	long have[2] = { -1, -1 };
	int y;
	size_t i;

	buf[0] = (float *)(ya + j->dh);
	buf[1] = buf[0] + rw;
	orow = buf[1] + rw;
	lin_axis(j->sw, j->dw, (size_t)j->c, xa);
	lin_axis(j->sh, j->dh, 1, ya);
	for (y = 0; y < j->dh; y++) {
		long lo = (long)ya[y].lo, hi = (long)ya[y].hi;
		int s0, s1;
		const float *top, *bot;
		float t = ya[y].t;

		/* keep a cached row the other half of this pair needs */
		if (have[0] == lo)
			s0 = 0;
		else if (have[1] == lo)
			s0 = 1;
		else
			s0 = have[0] == hi;
		if (have[s0] != lo) {
			hlin(j, (int)lo, xa, buf[s0]);
			have[s0] = lo;
		}
		s1 = s0;
		if (hi != lo) {
			s1 = 1 - s0;
			if (have[s1] != hi) {
				hlin(j, (int)hi, xa, buf[s1]);
				have[s1] = hi;
			}
		}
		top = buf[s0];
		bot = buf[s1];
		for (i = 0; i < rw; i++)
			orow[i] = top[i] + (bot[i] - top[i]) * t;
		emit(j->dst, j->ot, (size_t)y * j->ds, orow, rw);
	}
	return 0;
}

/* Nearest ------------------------------------------------------------- */

static long nn_index(int i, float scale, int in)
{
	long v = (long)floorf(((float)i + 0.5f) * scale);

	if (v > in - 1)
		v = in - 1;
	return v < 0 ? 0 : v;
}

static int nearest(const struct job *j, float *mem)
{
	size_t rw = (size_t)j->dw * j->c;
	float ws = scale_of(j->sw, j->dw), hs = scale_of(j->sh, j->dh);
	float *orow = mem;
	int y, x, k;

	for (y = 0; y < j->dh; y++) {
		size_t row = (size_t)nn_index(y, hs, j->sh) * j->ss;

		for (x = 0; x < j->dw; x++) {
			size_t s = row + (size_t)nn_index(x, ws, j->sw) * j->c;

			if (j->it == T_U8 && j->ot == T_U8)
				memcpy((uint8_t *)j->dst + (size_t)y * j->ds +
				       (size_t)x * j->c,
				       (const uint8_t *)j->src + s,
				       (size_t)j->c);
			else
				for (k = 0; k < j->c; k++)
					orow[(size_t)x * j->c + k] =
						at(j->src, j->it, s + k);
		}
		if (!(j->it == T_U8 && j->ot == T_U8))
			emit(j->dst, j->ot, (size_t)y * j->ds, orow, rw);
	}
	return 0;
}

/* Bicubic ------------------------------------------------------------- */

struct cub {
	long idx[4];
	float w[4];
};

/* Entry i of TF's coefficient table (built in double, stored float). */
static float keys_coef(int i, int second)
{
	const double a = -0.5;
	float x = (float)(i * 1.0 / 1024);

	if (!second)
		return (float)(((a + 2) * x - (a + 3)) * x * x + 1);
	x += 1.0f;
	return (float)(((a * x - 5 * a) * x + 8 * a) * x - 4 * a);
}

static void cub_axis(int in, int out, struct cub *ax)
{
	float scale = scale_of(in, out);
	int i, k;

	for (i = 0; i < out; i++) {
		float f = ((float)i + 0.5f) * scale - 0.5f;
		long loc = (long)floorf(f);
		float delta = f - (float)loc;
		long off = lrintf(delta * 1024);
		float w[4], sum;

		w[0] = keys_coef((int)off, 1);
		w[1] = keys_coef((int)off, 0);
		w[2] = keys_coef((int)(1024 - off), 0);
		w[3] = keys_coef((int)(1024 - off), 1);
		for (k = 0; k < 4; k++) {
			long want = loc - 1 + k;
			long b = want < 0 ? 0 : want > in - 1 ? in - 1 : want;

			ax[i].idx[k] = b;
			ax[i].w[k] = b == want ? w[k] : 0.0f;
		}
		sum = ax[i].w[0] + ax[i].w[1] + ax[i].w[2] + ax[i].w[3];
		if (fabsf(sum) >= 1000.0f * FLT_MIN) {
			float inv = 1.0f / sum;

			for (k = 0; k < 4; k++)
				ax[i].w[k] *= inv;
		}
	}
}

/* TF's Interpolate1D down a column: rows r[], element offset o. */
static float cub_y(const struct job *j, const size_t r[4], size_t o,
		   const float w[4])
{
	const void *s = j->src;

	return at(s, j->it, r[0] + o) * w[0] + at(s, j->it, r[1] + o) * w[1] +
	       at(s, j->it, r[2] + o) * w[2] + at(s, j->it, r[3] + o) * w[3];
}

static int bicubic(const struct job *j, float *mem)
{
	size_t rw = (size_t)j->dw * j->c;
	struct cub *xa = (struct cub *)mem, *ya = xa + j->dw;
	float *col = (float *)(ya + j->dh);
	float *orow = col + (size_t)j->sw * j->c;
	unsigned char *need = (unsigned char *)(orow + rw);
	int y, x, k, t;
	long xi;

	cub_axis(j->sw, j->dw, xa);
	cub_axis(j->sh, j->dh, ya);
	memset(need, 0, (size_t)j->sw);
	for (x = 0; x < j->dw; x++)
		for (t = 0; t < 4; t++)
			need[xa[x].idx[t]] = 1;
	for (y = 0; y < j->dh; y++) {
		const struct cub *cy = &ya[y];
		size_t r[4];

		for (t = 0; t < 4; t++)
			r[t] = (size_t)cy->idx[t] * j->ss;
		/* TF's ComputeYInterpolation for every column used. */
		for (xi = 0; xi < j->sw; xi++) {
			size_t o = (size_t)xi * j->c;

			if (!need[xi])
				continue;
			for (k = 0; k < j->c; k++)
				col[o + k] = cub_y(j, r, o + k, cy->w);
		}
		for (x = 0; x < j->dw; x++) {
			const struct cub *cx = &xa[x];

			for (k = 0; k < j->c; k++)
				orow[(size_t)x * j->c + k] =
					col[cx->idx[0] * j->c + k] * cx->w[0] +
					col[cx->idx[1] * j->c + k] * cx->w[1] +
					col[cx->idx[2] * j->c + k] * cx->w[2] +
					col[cx->idx[3] * j->c + k] * cx->w[3];
		}
		emit(j->dst, j->ot, (size_t)y * j->ds, orow, rw);
	}
	return 0;
}

/* Area ---------------------------------------------------------------- */

struct area {
	long start, end;
	float start_scale, end_scale;
};

static float area_part(long v, float in0, float in1, float scale)
{
	/* TF's start_scale / end_minus_one_scale expression (double 1.0). */
	return (float)(v < in0 ? (v + 1 > in1 ? scale : v + 1 - in0)
			       : (v + 1 > in1 ? in1 - v : 1.0));
}

static long bound(long v, int n)
{
	return v < 0 ? 0 : v > n - 1 ? n - 1 : v;
}

/* TF's ComputePatchSum along one source row: r is the element offset of
 * the row plus the channel, a the footprint of one output column. */
static float area_span(const struct job *j, size_t r, const struct area *a)
{
	size_t c = (size_t)j->c;
	float s = at(j->src, j->it, r + (size_t)bound(a->start, j->sw) * c) *
		  a->start_scale;
	long x;

	if (a->start + 1 == a->end)
		return s;
	for (x = a->start + 1; x < a->end - 1; x++)
		s += at(j->src, j->it, r + (size_t)bound(x, j->sw) * c);
	return s + at(j->src, j->it, r + (size_t)bound(a->end - 1, j->sw) * c)
		   * a->end_scale;
}

static int area(const struct job *j, float *mem)
{
	size_t rw = (size_t)j->dw * j->c;
	float ws = scale_of(j->sw, j->dw), hs = scale_of(j->sh, j->dh);
	float scale = (float)(1.0 / (hs * ws));
	struct area *xa = (struct area *)mem;
	float *orow = (float *)(xa + j->dw);
	int y, x, k;
	long i;

	for (x = 0; x < j->dw; x++) {
		float in0 = (float)x * ws, in1 = (float)(x + 1) * ws;
		long v = (long)floorf(in0);

		xa[x].start = v;
		xa[x].start_scale = area_part(v, in0, in1, ws);
		xa[x].end = (long)ceilf(in1);
		xa[x].end_scale = area_part(xa[x].end - 1, in0, in1, ws);
	}
	for (y = 0; y < j->dh; y++) {
		float in0 = (float)y * hs, in1 = (float)(y + 1) * hs;
		long y0 = (long)floorf(in0), y1 = (long)ceilf(in1);

		for (x = 0; x < j->dw; x++)
			for (k = 0; k < j->c; k++) {
				float sum = 0;

				for (i = y0; i < y1; i++)
					sum += area_span(j, (size_t)bound(i,
						j->sh) * j->ss + k, &xa[x]) *
					       area_part(i, in0, in1, hs);
				orow[(size_t)x * j->c + k] = sum * scale;
			}
		emit(j->dst, j->ot, (size_t)y * j->ds, orow, rw);
	}
	return 0;
}

/* Antialias (ScaleAndTranslate) --------------------------------------- */

static float triangle(float x)
{
	x = fabsf(x);
	return x < 1.0f ? 1.0f - x : 0.0f;
}

static float keys(float x)
{
	x = fabsf(x);
	if (x >= 2.0f)
		return 0.0f;
	if (x >= 1.0f)
		return ((-0.5f * x + 2.5f) * x - 4.0f) * x + 2.0f;
	return ((1.5f * x - 2.5f) * x) * x + 1.0f;
}

/* TF's ComputeSpansCore, translate 0. Weights: span floats per output. */
static int spans(int in, int out, int cubic, int *start, float *w)
{
	float (*kern)(float) = cubic ? keys : triangle;
	float radius = cubic ? 2.0f : 1.0f;
	float scale = (float)out / (float)in;
	float inv = (float)(1.0 / scale);
	float ks = inv > 1.0f ? inv : 1.0f, oks = 1.0f / ks;
	int span = 2 * (int)ceilf(radius * ks) + 1, x;

	if (span > in)
		span = in;
	memset(w, 0, sizeof(*w) * (size_t)span * out);
	for (x = 0; x < out; x++) {
		float sf = ((float)x + 0.5f) * inv;
		long s0 = (long)ceilf(sf - radius * ks - 0.5f);
		long s1 = (long)floorf(sf + radius * ks - 0.5f);
		float total = 0.0f, *wx = w + (size_t)x * span;
		long s;

		start[x] = 0;
		if (sf < 0 || sf > (float)in)
			continue;
		s0 = bound(s0, in);
		s1 = bound(s1, in) + 1;
		if (s1 - s0 > span)	/* cannot happen (TF: an error) */
			s1 = s0 + span;
		for (s = s0; s < s1; s++) {
			float kw = kern(((float)s + 0.5f - sf) * oks);

			wx[s - s0] = kw;
			total += kw;
		}
		if (fabsf(total) >= 1000.0f * FLT_MIN) {
			float it = 1.0f / total;

			for (s = s0; s < s1; s++)
				wx[s - s0] *= it;
		}
		start[x] = (int)s0;
	}
	return span;
}

static int span_size(int in, int out, int cubic)
{
	float inv = (float)(1.0 / ((float)out / (float)in));
	float ks = inv > 1.0f ? inv : 1.0f;
	int span = 2 * (int)ceilf((cubic ? 2.0f : 1.0f) * ks) + 1;

	return span > in ? in : span;
}

static int antialias(const struct job *j, float *mem, int cubic)
{
	size_t rw = (size_t)j->dw * j->c, iw = (size_t)j->sw * j->c;
	int xspan = span_size(j->sw, j->dw, cubic);
	int yspan = span_size(j->sh, j->dh, cubic);
	int *xs = (int *)mem, *ys = xs + j->dw;
	float *xw = (float *)(ys + j->dh);
	float *yw = xw + (size_t)xspan * j->dw;
	float *mid = yw + (size_t)yspan * j->dh;
	float *orow = mid + iw;
	int y, x, k, t;
	size_t i;

	spans(j->sw, j->dw, cubic, xs, xw);
	spans(j->sh, j->dh, cubic, ys, yw);
	for (y = 0; y < j->dh; y++) {
		int n = (ys[y] + yspan < j->sh ? ys[y] + yspan : j->sh) - ys[y];

		/* GatherRows: mid = sum of weighted source rows. */
		memset(mid, 0, iw * sizeof(float));
		for (t = 0; t < n; t++) {
			float wt = yw[(size_t)y * yspan + t];
			size_t r = (size_t)(ys[y] + t) * j->ss;

			if (j->it == T_U8) {
				const uint8_t *s = (const uint8_t *)j->src + r;

				for (i = 0; i < iw; i++)
					mid[i] += wt * (float)s[i];
			} else {
				const float *s = (const float *)j->src + r;

				for (i = 0; i < iw; i++)
					mid[i] += wt * s[i];
			}
		}
		/* GatherColumns. */
		for (x = 0; x < j->dw; x++) {
			int m = (xs[x] + xspan < j->sw ? xs[x] + xspan
							 : j->sw) - xs[x];
			const float *in = mid + (size_t)xs[x] * j->c;
			float *o = orow + (size_t)x * j->c;

			for (k = 0; k < j->c; k++)
				o[k] = 0.0f;
			for (t = 0; t < m; t++, in += j->c) {
				float wt = xw[(size_t)x * xspan + t];

				for (k = 0; k < j->c; k++)
					o[k] += wt * in[k];
			}
		}
		emit(j->dst, j->ot, (size_t)y * j->ds, orow, rw);
	}
	return 0;
}

/* ---------------------------------------------------------------------- */

static int run(const void *src, int it, int sh, int sw, size_t ss, int c,
	       void *dst, int ot, int dh, int dw, size_t ds, int method,
	       int aa, struct tfk_err *err)
{
	struct job j = { src, it, sh, sw, c, ss ? ss : (size_t)sw * c,
			 dst, ot, dh, dw, ds ? ds : (size_t)dw * c };
	size_t rw, iw, bytes;
	float *mem;
	int rc;

	if (sh < 1 || sw < 1 || dh < 1 || dw < 1 || c < 1 ||
	    sh > MAX_SIDE || sw > MAX_SIDE || dh > MAX_SIDE ||
	    dw > MAX_SIDE || c > 4096)
		return tfk_errf(err, TFK_EINVAL, "resize: bad size %dx%dx%d ->"
				" %dx%d", sh, sw, c, dh, dw);
	if (j.ss < (size_t)sw * c)
		return tfk_errf(err, TFK_EINVAL, "resize: row stride %zu is"
				" less than a row (%zu)", j.ss,
				(size_t)sw * c);
	if (j.ds < (size_t)dw * c)
		return tfk_errf(err, TFK_EINVAL, "resize: output row stride"
				" %zu is less than a row (%zu)", j.ds,
				(size_t)dw * c);
	rw = (size_t)dw * c;
	iw = (size_t)sw * c;
	switch (method) {
	case TFK_RESIZE_BILINEAR:
		if (aa)
			goto aa;
		bytes = sizeof(struct lin) * ((size_t)dw + dh) +
			3 * rw * sizeof(float);
		break;
	case TFK_RESIZE_NEAREST:
		bytes = rw * sizeof(float);
		break;
	case TFK_RESIZE_BICUBIC:
		if (aa)
			goto aa;
		bytes = sizeof(struct cub) * ((size_t)dw + dh) +
			(iw + rw) * sizeof(float) + (size_t)sw;
		break;
	case TFK_RESIZE_AREA:
		bytes = sizeof(struct area) * (size_t)dw + rw * sizeof(float);
		break;
	default:
		return tfk_errf(err, TFK_EINVAL, "resize: unknown method %d",
				method);
	}
	mem = tfk_malloc(bytes);
	if (!mem)
		return tfk_errf(err, TFK_ENOMEM, "resize: out of memory");
	switch (method) {
	case TFK_RESIZE_BILINEAR: rc = bilinear(&j, mem); break;
	case TFK_RESIZE_NEAREST: rc = nearest(&j, mem); break;
	case TFK_RESIZE_BICUBIC: rc = bicubic(&j, mem); break;
	default: rc = area(&j, mem); break;
	}
	tfk_free(mem);
	return rc;
aa:
	{
		int cubic = method == TFK_RESIZE_BICUBIC;

		bytes = sizeof(int) * ((size_t)dw + dh) + sizeof(float) *
			((size_t)span_size(sw, dw, cubic) * dw +
			 (size_t)span_size(sh, dh, cubic) * dh + iw + rw);
		mem = tfk_malloc(bytes);
		if (!mem)
			return tfk_errf(err, TFK_ENOMEM, "resize: out of"
					" memory");
		rc = antialias(&j, mem, cubic);
		tfk_free(mem);
		return rc;
	}
}

int tfk_resize_u8(const uint8_t *src, int sh, int sw, size_t sstride, int c,
		  uint8_t *dst, int dh, int dw, int method, int antialias,
		  struct tfk_err *err)
{
	return run(src, T_U8, sh, sw, sstride, c, dst, T_U8, dh, dw, 0,
		   method, antialias, err);
}

int tfk_resize_f32(const float *src, int sh, int sw, size_t sstride, int c,
		   float *dst, int dh, int dw, int method, int antialias,
		   struct tfk_err *err)
{
	return run(src, T_F32, sh, sw, sstride, c, dst, T_F32, dh, dw, 0,
		   method, antialias, err);
}

int tfk_resize_u8_f32(const uint8_t *src, int sh, int sw, size_t sstride,
		      int c, float *dst, int dh, int dw, int method,
		      int antialias, struct tfk_err *err)
{
	return run(src, T_U8, sh, sw, sstride, c, dst, T_F32, dh, dw, 0,
		   method, antialias, err);
}

int tfk_resize_u8_to(const uint8_t *src, int sh, int sw, size_t sstride,
		     int c, uint8_t *dst, int dh, int dw, size_t dstride,
		     int method, int antialias, struct tfk_err *err)
{
	return run(src, T_U8, sh, sw, sstride, c, dst, T_U8, dh, dw, dstride,
		   method, antialias, err);
}
