/*
 * chart.c - the line chart of tfk-plot curves and histogram, and what
 * every subcommand shares: ticks, the PNG and text outputs.
 *
 * A panel is a title line, a plot area framed in light gray with grid
 * lines at the ticks, tick labels left and below, the axis labels, and
 * the legend under the x label (outside the plot area, so it never
 * hides a curve). Ranges are the data's, the y range padded by 5%, as
 * TensorBoard's charts fit their data. Series draw in order, each in
 * its own colour at full strength, so a test can find a curve by its
 * colour; a smoothed series draws its raw values first, faint.
 */
#include "sub.h"

#include "io/out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const uint32_t plot_colors[PLOT_N_COLORS] = {
	0xff7043, 0x0077bb, 0x009988, 0xee3377, 0x33bbee, 0xcc3311,
	0x7e57c2,
};
const char plot_marks[PLOT_N_COLORS] = { '*', '+', 'o', 'x', '#', '@', '%' };

#define INK 0x222222u
#define TICK_INK 0x555555u
#define FRAME 0xbbbbbbu
#define GRID 0xebebebu

int plot_ticks(double lo, double hi, int want, double *t, double *step)
{
	double span = hi - lo, raw, mag, f, v;
	int n = 0;

	if (!(span > 0) || !isfinite(span)) {
		t[0] = lo;
		*step = 1;
		return 1;
	}
	raw = span / (want > 1 ? want : 1);
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	*step = (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
	for (v = ceil(lo / *step - 1e-9) * *step; v <= hi + *step * 1e-9 &&
	     n < 16; v += *step)
		t[n++] = fabs(v) < *step * 1e-9 ? 0 : v;
	return n;
}

void plot_tick_label(char *s, size_t n, double v, double step)
{
	int digits = (int)ceil(-log10(step) - 1e-9);

	if (fabs(v) >= 1e5 || (v != 0 && fabs(v) < 1e-4))
		snprintf(s, n, "%.3g", v);
	else
		snprintf(s, n, "%.*f", digits > 0 ? digits : 0, v);
}

struct range {
	double xlo, xhi, ylo, yhi;
};

static void fit(const struct plot_chart *c, struct range *g)
{
	size_t i, j;

	g->xlo = g->ylo = INFINITY;
	g->xhi = g->yhi = -INFINITY;
	for (i = 0; i < c->n; i++)
		for (j = 0; j < c->s[i].n; j++) {
			double x = c->s[i].x[j], y = c->s[i].y[j];
			double r = c->s[i].raw ? c->s[i].raw[j] : y;

			if (isfinite(x)) {
				g->xlo = fmin(g->xlo, x);
				g->xhi = fmax(g->xhi, x);
			}
			if (isfinite(y)) {
				g->ylo = fmin(g->ylo, fmin(y, isfinite(r) ? r
							   : y));
				g->yhi = fmax(g->yhi, fmax(y, isfinite(r) ? r
							   : y));
			}
		}
	if (!(g->xlo <= g->xhi))
		g->xlo = 0, g->xhi = 1;
	if (!(g->ylo <= g->yhi))
		g->ylo = 0, g->yhi = 1;
	if (g->xhi == g->xlo)
		g->xlo -= 0.5, g->xhi += 0.5;
	if (g->yhi == g->ylo) {
		double d = g->ylo ? fabs(g->ylo) * 0.1 : 1;

		g->ylo -= d;
		g->yhi += d;
	} else {
		double d = (g->yhi - g->ylo) * 0.05;

		g->ylo -= d;
		g->yhi += d;
	}
}

/* Legend rows for a panel w wide; entries flow left to right. */
static int legend_rows(const struct plot_chart *c, int w)
{
	int x = 0, rows = c->n ? 1 : 0;
	size_t i;

	for (i = 0; i < c->n; i++) {
		int ew = 18 + tfk_raster_text_width(c->s[i].label, 1) + 14;

		if (!*c->s[i].label)
			continue;
		if (x && x + ew > w - 16) {
			rows++;
			x = 0;
		}
		x += ew;
	}
	return rows;
}

void plot_chart_draw(struct tfk_raster *r, int x0, int y0, int w, int h,
		     const struct plot_chart *c)
{
	struct range g;
	double xt[16], yt[16], xs, ys;
	char lab[64];
	int nx, ny, i, lw = 0, L, T = 24, B, px0, px1, py0, py1, lx, ly;
	size_t si, j;

	fit(c, &g);
	ny = plot_ticks(g.ylo, g.yhi, h / 70 + 2, yt, &ys);
	nx = plot_ticks(g.xlo, g.xhi, w / 110 + 2, xt, &xs);
	if (c->x_steps && xs < 1)
		nx = plot_ticks(g.xlo, g.xhi, (int)(g.xhi - g.xlo), xt, &xs);
	for (i = 0; i < ny; i++) {
		int tw;

		plot_tick_label(lab, sizeof(lab), yt[i], ys);
		tw = tfk_raster_text_width(lab, 1);
		lw = tw > lw ? tw : lw;
	}
	L = lw + 24;
	B = 40 + 12 * legend_rows(c, w);
	px0 = x0 + L;
	px1 = x0 + w - 14;
	py0 = y0 + T;
	py1 = y0 + h - B;
	if (px1 - px0 < 20 || py1 - py0 < 20)
		return;
	if (c->title)
		tfk_raster_text(r, px0, y0 + 8, c->title, INK, 1, 0);
#define X(v) (px0 + ((v) - g.xlo) / (g.xhi - g.xlo) * (px1 - px0 - 1))
#define Y(v) (py1 - 1 - ((v) - g.ylo) / (g.yhi - g.ylo) * (py1 - py0 - 1))
	for (i = 0; i < ny; i++) {
		int y = (int)lround(Y(yt[i]));

		tfk_raster_rect(r, px0, y, px1, y + 1, GRID);
		plot_tick_label(lab, sizeof(lab), yt[i], ys);
		tfk_raster_text(r, px0 - 6 - tfk_raster_text_width(lab, 1),
				y - 3, lab, TICK_INK, 1, 0);
	}
	for (i = 0; i < nx; i++) {
		int x = (int)lround(X(xt[i]));

		tfk_raster_rect(r, x, py0, x + 1, py1, GRID);
		plot_tick_label(lab, sizeof(lab), xt[i], xs);
		tfk_raster_text(r, x - tfk_raster_text_width(lab, 1) / 2,
				py1 + 6, lab, TICK_INK, 1, 0);
	}
	tfk_raster_rect(r, px0 - 1, py0 - 1, px1 + 1, py0, FRAME);
	tfk_raster_rect(r, px0 - 1, py1, px1 + 1, py1 + 1, FRAME);
	tfk_raster_rect(r, px0 - 1, py0, px0, py1, FRAME);
	tfk_raster_rect(r, px1, py0, px1 + 1, py1, FRAME);
	if (c->xlabel)
		tfk_raster_text(r, (px0 + px1 -
				    tfk_raster_text_width(c->xlabel, 1)) / 2,
				py1 + 20, c->xlabel, INK, 1, 0);
	if (c->ylabel)
		tfk_raster_text(r, x0 + 4, (py0 + py1 +
				tfk_raster_text_width(c->ylabel, 1)) / 2,
				c->ylabel, INK, 1, 1);
	for (si = 0; si < c->n; si++) {
		const struct plot_series *s = &c->s[si];
		int pass;

		for (pass = s->raw ? 0 : 1; pass < 2; pass++) {
			const double *yv = pass ? s->y : s->raw;

			for (j = 0; j < s->n; j++) {
				double ax = X(s->x[j]), ay = Y(yv[j]);

				if (!isfinite(yv[j]))
					continue;
				if (s->n == 1)
					tfk_raster_rect(r, (int)ax - 2,
							(int)ay - 2,
							(int)ax + 3,
							(int)ay + 3, s->color);
				if (j + 1 < s->n && isfinite(yv[j + 1]))
					tfk_raster_line(r, ax, ay,
							X(s->x[j + 1]),
							Y(yv[j + 1]),
							s->color, pass ? 2 : 1,
							pass ? 255 : 70);
			}
		}
	}
	lx = px0;
	ly = py1 + 34;
	for (si = 0; si < c->n; si++) {
		int ew = 18 + tfk_raster_text_width(c->s[si].label, 1) + 14;

		if (!*c->s[si].label)
			continue;
		if (lx > px0 && lx + ew > x0 + w - 16) {
			lx = px0;
			ly += 12;
		}
		tfk_raster_rect(r, lx, ly + 2, lx + 12, ly + 5, c->s[si].color);
		tfk_raster_text(r, lx + 18, ly, c->s[si].label, INK, 1, 0);
		lx += ew;
	}
#undef X
#undef Y
}

void plot_chart_ascii(struct tfk_buf *out, const struct plot_chart *c,
		      int cols, int rows)
{
	struct range g;
	char grid[64][201], lab[64];
	double yt[16], ys;
	int i, k, row;
	size_t si, j;

	if (rows > 64)
		rows = 64;
	if (cols > 200)
		cols = 200;
	fit(c, &g);
	for (i = 0; i < rows; i++) {
		memset(grid[i], ' ', (size_t)cols);
		grid[i][cols] = 0;
	}
#define ROW(v) ((int)lround((g.yhi - (v)) / (g.yhi - g.ylo) * (rows - 1)))
	for (si = 0; si < c->n; si++) {
		const struct plot_series *s = &c->s[si];

		for (k = 0; k < cols; k++) {
			double x = g.xlo + (g.xhi - g.xlo) * k / (cols - 1);
			double y = NAN;

			for (j = 0; j + 1 < s->n; j++)
				if (s->x[j] <= x && x <= s->x[j + 1]) {
					double t = s->x[j + 1] > s->x[j] ?
						(x - s->x[j]) /
						(s->x[j + 1] - s->x[j]) : 0;

					y = s->y[j] + t *
						(s->y[j + 1] - s->y[j]);
					break;
				}
			if (s->n == 1 && k == (int)lround((s->x[0] - g.xlo) /
						(g.xhi - g.xlo) * (cols - 1)))
				y = s->y[0];
			if (!isfinite(y))
				continue;
			row = ROW(y);
			if (row >= 0 && row < rows)
				grid[row][k] = s->mark;
		}
	}
	if (c->title)
		tfk_buf_addf(out, "%s\n", c->title);
	k = plot_ticks(g.ylo, g.yhi, rows / 4, yt, &ys);
	for (i = 0; i < rows; i++) {
		const char *l = "";
		int t;

		for (t = 0; t < k; t++)
			if (ROW(yt[t]) == i) {
				plot_tick_label(lab, sizeof(lab), yt[t], ys);
				l = lab;
			}
		tfk_buf_addf(out, "%10s |%s\n", l, grid[i]);
	}
#undef ROW
	tfk_buf_addf(out, "%10s +", "");
	for (i = 0; i < cols; i++)
		tfk_buf_addc(out, '-');
	tfk_buf_addc(out, '\n');
	snprintf(lab, sizeof(lab), "%.6g", g.xlo);
	tfk_buf_addf(out, "%10s  %-*s%.6g\n", "", cols - 8 > 0 ? cols - 8 : 1,
		     lab, g.xhi);
	if (c->xlabel)
		tfk_buf_addf(out, "%10s  %*s\n", "", (cols + (int)strlen(
				c->xlabel)) / 2, c->xlabel);
	for (si = 0; si < c->n; si++)
		if (*c->s[si].label)
			tfk_buf_addf(out, "%10s  %c %s\n", "", c->s[si].mark,
				     c->s[si].label);
}

int plot_write_png(const struct tfk_raster *r, const char *path)
{
	struct tfk_buf b;
	struct tfk_err err;
	int rc;

	if (!strcmp(path, "-") && isatty(1)) {
		tfk_cli_warn("<stdout>: a terminal; write the PNG with -o FILE "
			     "or draw with --ascii");
		return 1;
	}
	tfk_buf_init(&b);
	rc = tfk_raster_png(r, &b, &err);
	if (!rc)
		rc = plot_write_text(&b, path);
	else
		rc = tfk_cli_fail(&err);
	tfk_buf_release(&b);
	return rc;
}

int plot_write_text(const struct tfk_buf *b, const char *path)
{
	struct tfk_out *o;
	struct tfk_err err;

	if (!tfk_buf_ok(b)) {
		tfk_cli_warn("out of memory");
		return 1;
	}
	if (tfk_out_open(&o, path, TFK_COMP_NONE, &err))
		return tfk_cli_fail(&err);
	if (tfk_out_write(o, b->data, b->len, &err)) {
		tfk_out_discard(o);
		return tfk_cli_fail(&err);
	}
	if (tfk_out_close(o, &err))
		return tfk_cli_fail(&err);
	return 0;
}

int plot_parse_size(const char *s, int *w, int *h)
{
	char *end;
	long a, b;

	a = strtol(s, &end, 10);
	if (*end != 'x')
		return -1;
	b = strtol(end + 1, &end, 10);
	if (*end || a < 16 || b < 16 || a > 16384 || b > 16384)
		return -1;
	*w = (int)a;
	*h = (int)b;
	return 0;
}
