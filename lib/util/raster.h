/*
 * raster.h - a small RGB canvas: filled rectangles, lines, text in a
 * built-in 5x7 bitmap font, pasted images, and PNG output through
 * libpng. What tfk-plot draws its charts and image grids on.
 *
 * Coordinates are pixels, (0, 0) the top left corner, x to the right,
 * y down; everything drawn is clipped to the canvas. Colours are
 * 0xRRGGBB. Pixels are 3 bytes (R, G, B) per pixel, rows top to bottom.
 */
#ifndef TFK_RASTER_H
#define TFK_RASTER_H

#include "util/buf.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/* The font's glyph cell and advance at scale 1. */
#define TFK_FONT_W 5
#define TFK_FONT_H 7
#define TFK_FONT_ADVANCE 6

struct tfk_raster {
	int w, h;
	uint8_t *px;	/* w * h * 3 bytes */
};

/* A w x h canvas filled with bg. 0, TFK_EINVAL (a size outside
 * 1..16384), TFK_ENOMEM. */
int tfk_raster_init(struct tfk_raster *r, int w, int h, uint32_t bg,
		    struct tfk_err *err);
void tfk_raster_release(struct tfk_raster *r);

/* Mix rgb into pixel (x, y) with weight alpha (0..255; 255 paints). */
void tfk_raster_blend(struct tfk_raster *r, int x, int y, uint32_t rgb,
		      int alpha);
/* Fill the pixels x0 <= x < x1, y0 <= y < y1. */
void tfk_raster_rect(struct tfk_raster *r, int x0, int y0, int x1, int y1,
		     uint32_t rgb);
/* A line width pixels wide from (x0, y0) to (x1, y1), alpha as above. */
void tfk_raster_line(struct tfk_raster *r, double x0, double y0, double x1,
		     double y1, uint32_t rgb, int width, int alpha);

/*
 * Text s (ASCII; other bytes draw as '?') with its top left corner at
 * (x, y), each font pixel a scale x scale square; up: drawn rotated a
 * quarter turn counter-clockwise, reading bottom to top, (x, y) then
 * its bottom left corner. Returns the text's length in pixels along
 * its direction, as tfk_raster_text_width.
 */
int tfk_raster_text(struct tfk_raster *r, int x, int y, const char *s,
		    uint32_t rgb, int scale, int up);
int tfk_raster_text_width(const char *s, int scale);

/* Paste a w x h image of 1 (gray) or 3 (RGB) channels at (x, y), each
 * pixel a scale x scale square. */
void tfk_raster_paste(struct tfk_raster *r, int x, int y, const uint8_t *src,
		      int w, int h, int channels, int scale);

/* Append r as an 8-bit RGB PNG to out. 0, TFK_ENOMEM ("png encoder:
 * ..."). */
int tfk_raster_png(const struct tfk_raster *r, struct tfk_buf *out,
		   struct tfk_err *err);

#endif
