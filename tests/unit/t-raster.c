/*
 * t-raster.c - the RGB canvas, its 5x7 font and its PNG output.
 *
 * Pixels are checked one by one where the drawing puts them (and not
 * around them); the PNG is decoded by libpng's simplified reading API
 * and must give back the canvas byte for byte; the glyphs are checked
 * against their rows as drawn on paper ('I': .###. then ..#..).
 * Failed allocations: every one is TFK_ENOMEM.
 */
#include "util/raster.h"
#include "util/alloc.h"
#include "tap.h"
#include "allocfail.h"

#include <png.h>
#include <stdlib.h>
#include <string.h>

static uint32_t at(const struct tfk_raster *r, int x, int y)
{
	const uint8_t *p = r->px + 3 * ((size_t)y * (size_t)r->w + (size_t)x);

	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

/* Pixels of colour c inside the canvas. */
static int count(const struct tfk_raster *r, uint32_t c)
{
	int x, y, n = 0;

	for (y = 0; y < r->h; y++)
		for (x = 0; x < r->w; x++)
			n += at(r, x, y) == c;
	return n;
}

static void shapes(void)
{
	struct tfk_raster r;
	struct tfk_err err;

	is_int(tfk_raster_init(&r, 0, 5, 0, &err), TFK_EINVAL,
	       "a 0x5 canvas is refused");
	is_int(tfk_raster_init(&r, 20000, 5, 0, &err), TFK_EINVAL,
	       "a 20000-wide one too");
	ok(strstr(err.msg, "20000x5") != NULL, "the message names the size: %s",
	   err.msg);
	is_int(tfk_raster_init(&r, 16, 10, 0xffffff, &err), 0, "16x10 white");
	is_int(count(&r, 0xffffff), 160, "every pixel is the background");
	tfk_raster_rect(&r, -5, -5, 3, 2, 0x102030);
	is_int(count(&r, 0x102030), 6, "a rectangle clipped at the corner: "
	       "3 x 2 pixels");
	ok(at(&r, 2, 1) == 0x102030 && at(&r, 3, 1) == 0xffffff &&
	   at(&r, 2, 2) == 0xffffff, "... its edge is exclusive");
	tfk_raster_rect(&r, 0, 0, 16, 10, 0xffffff);
	tfk_raster_line(&r, 2, 5, 12, 5, 0xff0000, 1, 255);
	is_int(count(&r, 0xff0000), 11, "a line from x 2 to 12: 11 pixels");
	ok(at(&r, 2, 5) == 0xff0000 && at(&r, 12, 5) == 0xff0000 &&
	   at(&r, 1, 5) == 0xffffff && at(&r, 13, 5) == 0xffffff,
	   "... both ends included, nothing beyond");
	tfk_raster_line(&r, 0, 0, 15, 9, 0x00ff00, 3, 255);
	ok(at(&r, 0, 0) == 0x00ff00 && at(&r, 15, 9) == 0x00ff00 &&
	   at(&r, 15, 0) != 0x00ff00, "a 3-wide diagonal corner to corner");
	tfk_raster_blend(&r, 15, 0, 0x000000, 128);
	is_int(at(&r, 15, 0), 0x7f7f7f, "alpha 128 of black on white: 127");
	tfk_raster_blend(&r, -1, 0, 0, 255);
	tfk_raster_blend(&r, 16, 10, 0, 255);
	ok(1, "blending outside the canvas is ignored");
	tfk_raster_release(&r);
	tfk_raster_release(&r);
	ok(r.px == NULL, "release twice is fine");
}

static void font(void)
{
	struct tfk_raster r;
	struct tfk_err err;
	int x, y, bits = 0;

	is_int(tfk_raster_text_width("ab", 1), 11, "two glyphs: 5 + 1 + 5");
	is_int(tfk_raster_text_width("ab", 2), 22, "... at scale 2: 22");
	is_int(tfk_raster_text_width("", 1), 0, "no text: 0");
	tfk_raster_init(&r, 12, 12, 0xffffff, &err);
	is_int(tfk_raster_text(&r, 0, 0, "I", 0, 1, 0), 5, "'I' is 5 wide");
	for (x = 0; x < 5; x++)
		bits = bits << 1 | (at(&r, x, 0) == 0);
	is_int(bits, 0x0E, "'I' row 0: .###.");
	for (bits = 0, x = 0; x < 5; x++)
		bits = bits << 1 | (at(&r, x, 1) == 0);
	is_int(bits, 0x04, "'I' row 1: ..#..");
	is_int(count(&r, 0), 3 + 5 * 1 + 3, "'I' has 11 pixels");
	tfk_raster_rect(&r, 0, 0, 12, 12, 0xffffff);
	tfk_raster_text(&r, 0, 11, "I", 0, 1, 1);
	for (bits = 0, y = 11; y > 6; y--)
		bits = bits << 1 | (at(&r, 0, y) == 0);
	is_int(bits, 0x0E, "rotated: row 0 runs up the left column");
	tfk_raster_rect(&r, 0, 0, 12, 12, 0xffffff);
	tfk_raster_text(&r, 0, 0, "\x80", 0, 1, 0);
	tfk_raster_text(&r, 6, 0, "?", 0xff, 1, 0);
	for (y = 0, bits = 1; y < 7; y++)
		for (x = 0; x < 5; x++)
			bits &= (at(&r, x, y) == 0) ==
				(at(&r, 6 + x, y) == 0xff);
	ok(bits, "a byte outside ASCII draws as '?'");
	tfk_raster_release(&r);
}

static void paste_png(void)
{
	static const uint8_t g[4] = { 0, 64, 128, 255 };
	struct tfk_raster r;
	struct tfk_err err;
	struct tfk_buf b;
	png_image im;
	uint8_t *px;

	tfk_raster_init(&r, 7, 5, 0x336699, &err);
	tfk_raster_paste(&r, 1, 1, g, 2, 2, 1, 2);
	ok(at(&r, 1, 1) == 0 && at(&r, 2, 2) == 0 && at(&r, 3, 1) ==
	   0x404040 && at(&r, 4, 4) == 0xffffff && at(&r, 1, 3) == 0x808080 &&
	   at(&r, 5, 1) == 0x336699, "a 2x2 gray image pasted at scale 2");
	tfk_buf_init(&b);
	is_int(tfk_raster_png(&r, &b, &err), 0, "PNG encoded");
	memset(&im, 0, sizeof(im));
	im.version = PNG_IMAGE_VERSION;
	ok(png_image_begin_read_from_memory(&im, b.data, b.len),
	   "libpng reads it back");
	is_int(im.width * 100 + im.height, 705, "7 x 5");
	im.format = PNG_FORMAT_RGB;
	px = malloc(PNG_IMAGE_SIZE(im));
	ok(px && png_image_finish_read(&im, NULL, px, 0, NULL),
	   "... and decodes it");
	is_mem(px, px ? PNG_IMAGE_SIZE(im) : 0, r.px, 7 * 5 * 3,
	       "the pixels come back byte for byte");
	free(px);
	tfk_buf_release(&b);
	tfk_raster_release(&r);
}

static int init_call(void *ctx)
{
	struct tfk_err err;

	return tfk_raster_init(ctx, 64, 64, 0, &err);
}

static void undo(void *ctx)
{
	tfk_raster_release(ctx);
}

int main(void)
{
	struct tfk_raster r;
	long tried = 0;
	int swept;

	shapes();
	font();
	paste_png();
	swept = alloc_sweep(8, init_call, undo, &r, &tried);
	ok(swept, "failed allocations in init are TFK_ENOMEM (%ld tried)",
	   tried);
	tfk_raster_release(&r);
	return tap_done();
}
