/*
 * sub.h - tfk-plot's subcommands, one file each under cmd/plot/, and
 * the chart drawing they share (chart.c): line charts with axes,
 * ticks, labels and a legend, drawn on a tfk_raster or as text for a
 * terminal, and the picture's atomic output.
 */
#ifndef TFK_CMD_PLOT_SUB_H
#define TFK_CMD_PLOT_SUB_H

#include "util/cli.h"
#include "util/raster.h"

#include <stddef.h>

extern const struct tfk_subcmd plot_curves_sub;		/* curves.c */
extern const struct tfk_subcmd plot_images_sub;		/* images.c */
extern const struct tfk_subcmd plot_confusion_sub;	/* confusion.c */
extern const struct tfk_subcmd plot_histogram_sub;	/* histogram.c */

/* The colours of series, in order (TensorBoard's run palette). */
#define PLOT_N_COLORS 7
extern const uint32_t plot_colors[PLOT_N_COLORS];
/* The characters of series in --ascii charts, in the same order. */
extern const char plot_marks[PLOT_N_COLORS];

struct plot_series {
	const char *label;	/* "": left out of the legend */
	size_t n;
	const double *x, *y;	/* n points, x increasing */
	const double *raw;	/* NULL, or the unsmoothed y, drawn faint */
	uint32_t color;
	char mark;		/* --ascii */
};

struct plot_chart {
	const char *title, *xlabel, *ylabel;
	int x_steps;		/* x holds steps: ticks at whole numbers */
	size_t n;
	const struct plot_series *s;
};

/* Draw c into the w x h panel of r at (x0, y0). */
void plot_chart_draw(struct tfk_raster *r, int x0, int y0, int w, int h,
		     const struct plot_chart *c);
/* c as text, cols x rows characters of plot area plus axes and a
 * legend, appended to out. */
void plot_chart_ascii(struct tfk_buf *out, const struct plot_chart *c,
		      int cols, int rows);

/* Nice tick positions (1, 2 or 5 times a power of ten) covering lo..hi,
 * about want of them; returns how many were stored in t (at most 16)
 * and their spacing in *step. */
int plot_ticks(double lo, double hi, int want, double *t, double *step);
/* A tick label: %g with as many digits as the spacing needs. */
void plot_tick_label(char *s, size_t n, double v, double step);

/* Write r as PNG to path ("-": stdout, refused when it is a terminal)
 * through lib/io/out (atomic). 0, or 1 after reporting the error. */
int plot_write_png(const struct tfk_raster *r, const char *path);
/* Write text to path ("-": stdout) atomically. 0 or 1 (reported). */
int plot_write_text(const struct tfk_buf *b, const char *path);

/* "WxH" into *w, *h (each 16..16384); -1 if malformed. */
int plot_parse_size(const char *s, int *w, int *h);

#endif
