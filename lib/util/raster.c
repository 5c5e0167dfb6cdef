/*
 * raster.c - the RGB canvas of raster.h and its PNG encoder.
 *
 * Plain loops, no anti-aliasing beyond an alpha per call: charts of a
 * few thousand points need no more, and a pixel a test probes is then
 * exactly the colour asked for. A line is stamped as width x width
 * squares every half pixel along it (simpler than Bresenham with
 * thickness, and the same on screen). PNG goes through libpng (already
 * a dependency for decoding) at zlib's default level; an external
 * plotting library (cairo, gnuplot, plplot) was rejected: a large
 * dependency for axes, lines and a 5x7 font.
 */
#include "util/raster.h"

#include "util/alloc.h"

#include <math.h>
#include <png.h>
#include <stdio.h>
#include <string.h>

int tfk_raster_init(struct tfk_raster *r, int w, int h, uint32_t bg,
		    struct tfk_err *err)
{
	size_t i, n;

	r->w = r->h = 0;
	r->px = NULL;
	if (w < 1 || h < 1 || w > 16384 || h > 16384)
		return tfk_errf(err, TFK_EINVAL, "image size %dx%d: outside "
				"1..16384", w, h);
	n = (size_t)w * (size_t)h;
	if (!(r->px = tfk_malloc(n * 3)))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	r->w = w;
	r->h = h;
	for (i = 0; i < n; i++) {
		r->px[3 * i] = (uint8_t)(bg >> 16);
		r->px[3 * i + 1] = (uint8_t)(bg >> 8);
		r->px[3 * i + 2] = (uint8_t)bg;
	}
	return 0;
}

void tfk_raster_release(struct tfk_raster *r)
{
	tfk_free(r->px);
	r->px = NULL;
	r->w = r->h = 0;
}

void tfk_raster_blend(struct tfk_raster *r, int x, int y, uint32_t rgb,
		      int alpha)
{
	uint8_t *p;
	int c, v;

	if (x < 0 || y < 0 || x >= r->w || y >= r->h || alpha <= 0)
		return;
	if (alpha > 255)
		alpha = 255;
	p = r->px + 3 * ((size_t)y * (size_t)r->w + (size_t)x);
	for (c = 0; c < 3; c++) {
		v = (int)(rgb >> (16 - 8 * c)) & 255;
		p[c] = (uint8_t)((v * alpha + p[c] * (255 - alpha) + 127) /
				 255);
	}
}

void tfk_raster_rect(struct tfk_raster *r, int x0, int y0, int x1, int y1,
		     uint32_t rgb)
{
	int x, y;

	if (x0 < 0)
		x0 = 0;
	if (y0 < 0)
		y0 = 0;
	if (x1 > r->w)
		x1 = r->w;
	if (y1 > r->h)
		y1 = r->h;
	for (y = y0; y < y1; y++)
		for (x = x0; x < x1; x++)
			tfk_raster_blend(r, x, y, rgb, 255);
}

void tfk_raster_line(struct tfk_raster *r, double x0, double y0, double x1,
		     double y1, uint32_t rgb, int width, int alpha)
{
	double len = hypot(x1 - x0, y1 - y0);
	int steps, i, dx, dy, lo = -(width - 1) / 2;
	int lastx = INT32_MIN, lasty = INT32_MIN;

	if (!isfinite(len) || len > 1e6)
		return;
	steps = (int)(len * 2) + 1;
	for (i = 0; i <= steps; i++) {
		double t = (double)i / steps;
		int x = (int)floor(x0 + (x1 - x0) * t + 0.5);
		int y = (int)floor(y0 + (y1 - y0) * t + 0.5);

		if (x == lastx && y == lasty)
			continue;	/* alpha must not pile up */
		lastx = x;
		lasty = y;
		for (dy = 0; dy < width; dy++)
			for (dx = 0; dx < width; dx++)
				tfk_raster_blend(r, x + lo + dx, y + lo + dy,
						 rgb, alpha);
	}
}

void tfk_raster_paste(struct tfk_raster *r, int x, int y, const uint8_t *src,
		      int w, int h, int channels, int scale)
{
	int i, j, a, b;

	for (i = 0; i < h; i++)
		for (j = 0; j < w; j++) {
			const uint8_t *s = src + ((size_t)i * (size_t)w +
						  (size_t)j) * (size_t)channels;
			uint32_t rgb = channels == 1 ?
				(uint32_t)s[0] * 0x010101u :
				(uint32_t)s[0] << 16 | (uint32_t)s[1] << 8 |
				s[2];

			for (a = 0; a < scale; a++)
				for (b = 0; b < scale; b++)
					tfk_raster_blend(r, x + j * scale + b,
							 y + i * scale + a,
							 rgb, 255);
		}
}

struct pngw {
	struct tfk_buf *out;
	char msg[200];
};

static void png_put(png_structp png, png_bytep p, png_size_t n)
{
	struct pngw *w = png_get_io_ptr(png);

	tfk_buf_add(w->out, p, n);
}

static void png_nop(png_structp png)
{
	(void)png;
}

static void png_fail(png_structp png, png_const_charp msg)
{
	struct pngw *w = png_get_error_ptr(png);

	snprintf(w->msg, sizeof(w->msg), "%s", msg);
	png_longjmp(png, 1);
}

static void png_warn(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

int tfk_raster_png(const struct tfk_raster *r, struct tfk_buf *out,
		   struct tfk_err *err)
{
	struct pngw w = { out, "" };
	png_structp png;
	png_infop info = NULL;
	int y;

	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &w, png_fail,
				      png_warn);
	if (!png || !(info = png_create_info_struct(png))) {
		png_destroy_write_struct(&png, NULL);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		return tfk_errf(err, TFK_ENOMEM, "png encoder: %s", w.msg);
	}
	png_set_write_fn(png, &w, png_put, png_nop);
	png_set_IHDR(png, info, (png_uint_32)r->w, (png_uint_32)r->h, 8,
		     PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
		     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, info);
	for (y = 0; y < r->h; y++)
		png_write_row(png, (png_const_bytep)(r->px + (size_t)y *
						     (size_t)r->w * 3));
	png_write_end(png, info);
	png_destroy_write_struct(&png, &info);
	if (!tfk_buf_ok(out))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	return 0;
}
