/*
 * tfk-plot histogram: a weight's histograms across epochs, from the
 * histogram summaries of TensorBoard logs (tfk-train --histograms,
 * tf.summary.histogram, TF1's HistogramProto), drawn as TensorBoard's
 * histograms dashboard does in its overlay mode: one curve per step,
 * light for the first step to dark for the last.
 *
 * Each histogram is re-binned into --bins equal bins over the range of
 * all its steps (TensorBoard re-bins to 30 the same way), a bucket's
 * count spread evenly over the part of the range it covers, its left
 * edge the previous bucket's limit (the first one's: the minimum). One
 * panel per (run, tag) that matches. --ascii prints a line per step,
 * each bin a character of a darkness ramp.
 */
#include "sub.h"

#include "format/events.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static struct tfk_strlist tags, runs;
static const char *out_path = "-", *size_arg;
static int ascii;
static long bins = 30;

static const struct tfk_opt opts[] = {
	TFK_OPT_LIST(0, "tag", &tags, "PATTERN",
		     "histogram tags matching PATTERN (a shell glob; "
		     "repeatable; default: all)"),
	TFK_OPT_LIST(0, "run", &runs, "PATTERN",
		     "only runs matching PATTERN (a shell glob; repeatable)"),
	TFK_OPT_LONG(0, "bins", &bins, "N", "bins of the re-binned "
		     "histograms (default 30)"),
	TFK_OPT_STR('o', "output", &out_path, "FILE",
		    "write the PNG (or text) to FILE (default: stdout)"),
	TFK_OPT_STR(0, "size", &size_arg, "WxH",
		    "one panel's size (default 640x400)"),
	TFK_OPT_FLAG(0, "ascii", &ascii, "draw as text for a terminal"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-plot histogram",
	"[options] LOGDIR|FILE...",
	"draw a weight's histograms across steps (TensorBoard's overlay "
	"mode)",
	"tfk-plot histogram --tag 'dense/kernel*' logs/train -o w.png",
};

struct step_h {
	long long step;
	double min, max;
	size_t n;
	double *limit, *count;
};

struct panel {
	char *run, *tag;
	struct step_h *h;
	size_t n;
};

static struct panel *pan;
static size_t n_pan;

static int match_any(const struct tfk_strlist *l, const char *s)
{
	size_t i;

	if (!l->n)
		return 1;
	for (i = 0; i < l->n; i++)
		if (!fnmatch(l->v[i], s, 0))
			return 1;
	return 0;
}

static int add(const char *run, const char *tag, long long step,
	       const struct tfk_ev_histo *h)
{
	struct panel *p = NULL;
	struct step_h *sh;
	size_t i;

	for (i = 0; i < n_pan; i++)
		if (!strcmp(pan[i].tag, tag) && !strcmp(pan[i].run, run))
			p = &pan[i];
	if (!p) {
		struct panel *np = realloc(pan, (n_pan + 1) * sizeof(*np));

		if (!np)
			return -1;
		pan = np;
		p = &pan[n_pan++];
		memset(p, 0, sizeof(*p));
		if (!(p->run = strdup(run)) || !(p->tag = strdup(tag)))
			return -1;
	}
	sh = realloc(p->h, (p->n + 1) * sizeof(*sh));
	if (!sh)
		return -1;
	p->h = sh;
	sh = &p->h[p->n++];
	sh->step = step;
	sh->min = h->min;
	sh->max = h->max;
	sh->n = h->n_bucket;
	sh->limit = malloc((h->n_bucket + 1) * sizeof(double));
	sh->count = malloc((h->n_bucket + 1) * sizeof(double));
	if (!sh->limit || !sh->count)
		return -1;
	if (h->n_bucket) {
		memcpy(sh->limit, h->limit, h->n_bucket * sizeof(double));
		memcpy(sh->count, h->count, h->n_bucket * sizeof(double));
	}
	return 0;
}

static int read_events(const char *run, const char *path)
{
	struct tfk_evr *r;
	struct tfk_ev_event e;
	struct tfk_err err;
	size_t i;
	int rc, bad = 0;

	if (!match_any(&runs, run))
		return 0;
	if (tfk_evr_open(&r, path, &err))
		return tfk_cli_fail(&err);
	while ((rc = tfk_evr_next(r, &e, &err)) != 0) {
		if (rc < 0) {
			tfk_cli_fail(&err);
			bad = 1;
			if (rc != TFK_ECORRUPT)
				break;
			continue;
		}
		for (i = 0; i < e.n_value; i++)
			if (e.value[i].kind == TFK_EVK_HISTO &&
			    match_any(&tags, e.value[i].tag) &&
			    add(run, e.value[i].tag, (long long)e.step,
				&e.value[i].histo)) {
				tfk_cli_warn("out of memory");
				tfk_evr_close(r);
				return 1;
			}
	}
	tfk_evr_close(r);
	return bad;
}

static int read_arg(const char *arg)
{
	struct tfk_ev_file *f;
	struct tfk_err err;
	struct stat st;
	size_t n, i;
	int rc = 0;

	if (stat(arg, &st)) {
		tfk_cli_warn("%s: %s", arg, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode))
		return read_events(".", arg);
	if (tfk_ev_files_find(arg, &f, &n, &err))
		return tfk_cli_fail(&err);
	if (!n) {
		tfk_cli_warn("%s: no event files", arg);
		rc = 1;
	}
	for (i = 0; i < n; i++)
		rc |= read_events(f[i].run, f[i].path);
	tfk_ev_files_free(f, n);
	return rc;
}

/* Spread sh's counts over nb bins of [lo, hi] into out. */
static void rebin(const struct step_h *sh, double lo, double hi, int nb,
		  double *out)
{
	double w = (hi - lo) / nb;
	size_t i;
	int k;

	for (k = 0; k < nb; k++)
		out[k] = 0;
	for (i = 0; i < sh->n; i++) {
		double a = i ? fmax(sh->limit[i - 1], sh->min) : sh->min;
		double b = fmin(sh->limit[i], sh->max);

		if (!(sh->count[i] > 0) || !isfinite(a) || !isfinite(b) ||
		    !isfinite(sh->count[i]) || b < lo || a > hi)
			continue;
		if (!(b > a)) {		/* a point mass */
			k = (int)((a - lo) / w);
			out[k < 0 ? 0 : k >= nb ? nb - 1 : k] += sh->count[i];
			continue;
		}
		for (k = 0; k < nb; k++) {
			double l = lo + w * k, r = l + w;
			double o = fmin(b, r) - fmax(a, l);

			if (o > 0)
				out[k] += sh->count[i] * o / (b - a);
		}
	}
}

/* The colour of step i of n: light to TensorBoard's dark orange. */
static uint32_t shade(size_t i, size_t n)
{
	static const int lo[3] = { 0xff, 0xcc, 0xbc }, hi[3] = { 0xbf, 0x36,
								 0x0c };
	double t = n > 1 ? (double)i / (double)(n - 1) : 1;
	uint32_t c = 0;
	int k;

	for (k = 0; k < 3; k++)
		c = c << 8 | (uint32_t)lround(lo[k] + (hi[k] - lo[k]) * t);
	return c;
}

static int cmp_step(const void *a, const void *b)
{
	const struct step_h *x = a, *y = b;

	return x->step < y->step ? -1 : x->step > y->step;
}

static int draw(void)
{
	static const char ramp[] = " .:-=+*#%@";
	struct tfk_raster r;
	struct tfk_err err;
	struct tfk_buf b;
	int w = 640, h = 400, cols = n_pan > 1 ? 2 : 1, rc = 0, k;
	int rows = (int)((n_pan + (size_t)cols - 1) / (size_t)cols);
	int nb = (int)bins;
	size_t p, i;

	if (size_arg && plot_parse_size(size_arg, &w, &h))
		tfk_cli_usage_error("--size %s: want WxH, each 16..16384",
				    size_arg);
	tfk_buf_init(&b);
	if (!ascii && tfk_raster_init(&r, w * cols, h * rows, 0xffffff, &err))
		return tfk_cli_fail(&err);
	for (p = 0; p < n_pan && !rc; p++) {
		struct panel *pn = &pan[p];
		double lo = INFINITY, hi = -INFINITY, top = 0;
		double *x = malloc((size_t)nb * sizeof(double));
		double *y = malloc((size_t)nb * pn->n * sizeof(double));
		struct plot_series *s = calloc(pn->n, sizeof(*s));
		char (*lab)[32] = calloc(pn->n, sizeof(*lab));
		char title[512];
		struct plot_chart ch;

		if (!x || !y || !s || !lab) {
			tfk_cli_warn("out of memory");
			rc = 1;
		}
		qsort(pn->h, pn->n, sizeof(*pn->h), cmp_step);
		for (i = 0; !rc && i < pn->n; i++) {
			if (!pn->h[i].n || !isfinite(pn->h[i].min) ||
			    !isfinite(pn->h[i].max))
				continue;
			lo = fmin(lo, pn->h[i].min);
			hi = fmax(hi, pn->h[i].max);
		}
		if (!(lo <= hi))
			lo = 0, hi = 1;
		if (hi == lo)
			lo -= 0.5, hi += 0.5;
		for (k = 0; !rc && k < nb; k++)
			x[k] = lo + (hi - lo) * (k + 0.5) / nb;
		for (i = 0; !rc && i < pn->n; i++) {
			rebin(&pn->h[i], lo, hi, nb, y + i * (size_t)nb);
			for (k = 0; k < nb; k++)
				top = fmax(top, y[i * (size_t)nb + (size_t)k]);
			if (!i || i + 1 == pn->n)
				snprintf(lab[i], sizeof(lab[i]), "step %lld",
					 pn->h[i].step);
			s[i].label = lab[i];
			s[i].n = (size_t)nb;
			s[i].x = x;
			s[i].y = y + i * (size_t)nb;
			s[i].color = shade(i, pn->n);
			s[i].mark = '*';
		}
		snprintf(title, sizeof(title), "%s%s%s", strcmp(pn->run, ".") ?
			 pn->run : "", strcmp(pn->run, ".") ? ": " : "",
			 pn->tag);
		ch.title = title;
		ch.xlabel = "value";
		ch.ylabel = "count";
		ch.x_steps = 0;
		ch.n = pn->n;
		ch.s = s;
		if (!rc && ascii) {
			char his[32];
			int pad;

			snprintf(his, sizeof(his), "%.6g", hi);
			pad = nb - (int)strlen(his);
			tfk_buf_addf(&b, "%s%s\n%14s%-*.6g%s\n", p ? "\n" : "",
				     title, "", pad > 1 ? pad : 1, lo, his);
			for (i = 0; i < pn->n; i++) {
				const double *yi = y + i * (size_t)nb;

				tfk_buf_addf(&b, "step %-7lld |",
					     pn->h[i].step);
				for (k = 0; k < nb; k++) {
					int d = top > 0 ? (int)ceil(yi[k] / top
								   * 9) : 0;

					d = d < 0 ? 0 : d > 9 ? 9 : d;
					tfk_buf_addc(&b, ramp[d]);
				}
				tfk_buf_adds(&b, "|\n");
			}
		} else if (!rc) {
			plot_chart_draw(&r, (int)(p % (size_t)cols) * w,
					(int)(p / (size_t)cols) * h, w, h, &ch);
		}
		free(x);
		free(y);
		free(s);
		free(lab);
	}
	if (!rc)
		rc = ascii ? plot_write_text(&b, out_path)
			: plot_write_png(&r, out_path);
	if (!ascii)
		tfk_raster_release(&r);
	tfk_buf_release(&b);
	return rc;
}

static int histogram_main(int argc, char **argv)
{
	int i, rc = 0;
	size_t p, k;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (!argc)
		tfk_cli_usage_error("a LOGDIR or event FILE is needed");
	if (bins < 2 || bins > 1000)
		tfk_cli_usage_error("--bins %ld: want 2..1000", bins);
	for (i = 0; i < argc; i++)
		rc |= read_arg(argv[i]);
	if (!n_pan) {
		tfk_cli_warn("no histograms%s to draw", tags.n ? " of the tags "
			     "asked for" : "");
		return 1;
	}
	rc |= draw();
	for (p = 0; p < n_pan; p++) {
		for (k = 0; k < pan[p].n; k++) {
			free(pan[p].h[k].limit);
			free(pan[p].h[k].count);
		}
		free(pan[p].h);
		free(pan[p].run);
		free(pan[p].tag);
	}
	free(pan);
	return rc;
}

const struct tfk_subcmd plot_histogram_sub = {
	"histogram", "a weight's histograms across steps", histogram_main
};
