/*
 * tfk-plot curves: the scalar curves of TensorBoard log directories,
 * one panel per tag, one line per run, as TensorBoard's scalars
 * dashboard draws them.
 *
 * Runs are named as tfk-events names them (the directory of an event
 * file relative to its logdir), so tfk-train's logdir gives the runs
 * "train" and "validation" and each of its epoch_* tags one panel with
 * both curves; with several LOGDIRs (a --set sweep) each run is
 * prefixed by its logdir, and files in a logdir itself are the run
 * named by the logdir. A run keeps its colour in every panel.
 * Points are sorted by step (a restarted job's steps merge in place).
 * --smoothing W is TensorBoard's slider: the debiased exponential
 * moving average s_k = (W s_{k-1} + (1 - W) y_k) / (1 - W^k) of the
 * finite values, none for a constant series, the raw curve kept faint
 * behind the smoothed one. The default is 0 (TensorBoard's is 0.6):
 * tfk-train logs one point per epoch, too few to smooth.
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
static double smoothing;
static const char *out_path = "-", *size_arg;
static int ascii;

static const struct tfk_opt opts[] = {
	TFK_OPT_LIST(0, "tag", &tags, "PATTERN",
		     "only tags matching PATTERN (a shell glob; repeatable)"),
	TFK_OPT_LIST(0, "run", &runs, "PATTERN",
		     "only runs matching PATTERN (a shell glob; repeatable)"),
	TFK_OPT_DOUBLE(0, "smoothing", &smoothing, "W",
		       "TensorBoard's smoothing, 0 (none) to below 1"),
	TFK_OPT_STR('o', "output", &out_path, "FILE",
		    "write the PNG (or text) to FILE (default: stdout)"),
	TFK_OPT_STR(0, "size", &size_arg, "WxH",
		    "one panel's size (default 640x400; --ascii: "
		    "characters, 72x20)"),
	TFK_OPT_FLAG(0, "ascii", &ascii, "draw as text for a terminal"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-plot curves",
	"[options] LOGDIR|FILE...",
	"draw the scalar curves of TensorBoard logs, a panel per tag",
	"tfk-plot curves logs -o curves.png; tfk-plot curves --ascii --tag "
	"epoch_loss logs",
};

struct curve {
	char *run, *tag;
	size_t n, cap;
	double *x, *y, *raw;
	int color;
};

static struct curve *cv;
static size_t n_cv;
static char **run_names;
static size_t n_runs;

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

static int add_point(const char *run, const char *tag, double x, double y)
{
	struct curve *c = NULL;
	size_t i;

	for (i = 0; i < n_cv; i++)
		if (!strcmp(cv[i].tag, tag) && !strcmp(cv[i].run, run))
			c = &cv[i];
	if (!c) {
		struct curve *nc = realloc(cv, (n_cv + 1) * sizeof(*nc));

		if (!nc)
			return -1;
		cv = nc;
		c = &cv[n_cv++];
		memset(c, 0, sizeof(*c));
		c->run = strdup(run);
		c->tag = strdup(tag);
		if (!c->run || !c->tag)
			return -1;
	}
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		double *nx = realloc(c->x, cap * sizeof(double));

		if (!nx)
			return -1;
		c->x = nx;
		if (!(nx = realloc(c->y, cap * sizeof(double))))
			return -1;
		c->y = nx;
		c->cap = cap;
	}
	c->x[c->n] = x;
	c->y[c->n++] = y;
	return 0;
}

/* Read one event file as run; 1 after a reported error. */
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
		for (i = 0; i < e.n_value; i++) {
			const struct tfk_ev_value *v = &e.value[i];

			if (v->kind != TFK_EVK_SCALAR ||
			    !match_any(&tags, v->tag))
				continue;
			if (add_point(run, v->tag, (double)e.step, v->value)) {
				tfk_cli_warn("out of memory");
				tfk_evr_close(r);
				return 1;
			}
		}
	}
	tfk_evr_close(r);
	return bad;
}

/* A LOGDIR or FILE argument; prefix names its runs when several are
 * given. */
static int read_arg(const char *arg, int prefix)
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
		return read_events(arg, arg);
	if (tfk_ev_files_find(arg, &f, &n, &err))
		return tfk_cli_fail(&err);
	if (!n) {
		tfk_cli_warn("%s: no event files", arg);
		rc = 1;
	}
	for (i = 0; i < n; i++) {
		char name[4096];

		if (!prefix && strcmp(f[i].run, "."))
			snprintf(name, sizeof(name), "%s", f[i].run);
		else if (!strcmp(f[i].run, "."))
			snprintf(name, sizeof(name), "%s", arg);
		else
			snprintf(name, sizeof(name), "%s/%s", arg, f[i].run);
		rc |= read_events(name, f[i].path);
	}
	tfk_ev_files_free(f, n);
	return rc;
}

static int cmp_point(const void *a, const void *b)
{
	const double *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[2] < y[2] ? -1 : 1;
}

/* Sort c by step (stable: by read order within a step) and smooth. */
static int finish(struct curve *c)
{
	double *t = malloc(c->n * 3 * sizeof(double)), last = 0;
	size_t i, k = 0;
	int constant = 1;

	c->raw = malloc((c->n ? c->n : 1) * sizeof(double));
	if (!t || !c->raw) {
		free(t);
		return -1;
	}
	for (i = 0; i < c->n; i++) {
		t[3 * i] = c->x[i];
		t[3 * i + 1] = c->y[i];
		t[3 * i + 2] = (double)i;
	}
	qsort(t, c->n, 3 * sizeof(double), cmp_point);
	for (i = 0; i < c->n; i++) {
		c->x[i] = t[3 * i];
		c->raw[i] = c->y[i] = t[3 * i + 1];
		if (c->y[i] != c->y[0])
			constant = 0;
	}
	free(t);
	if (!(smoothing > 0) || constant)
		return 0;
	for (i = 0; i < c->n; i++) {
		if (!isfinite(c->raw[i]))
			continue;
		last = last * smoothing + (1 - smoothing) * c->raw[i];
		k++;
		c->y[i] = last / (1 - pow(smoothing, (double)k));
	}
	return 0;
}

static int cmp_curve(const void *a, const void *b)
{
	const struct curve *x = a, *y = b;
	int c = strcmp(x->tag, y->tag);

	return c ? c : strcmp(x->run, y->run);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Each run's colour: its rank among the run names. */
static int colour_runs(void)
{
	size_t i, k = 0;

	if (!(run_names = malloc((n_cv + 1) * sizeof(*run_names))))
		return -1;
	for (i = 0; i < n_cv; i++)
		run_names[i] = cv[i].run;
	qsort(run_names, n_cv, sizeof(*run_names), cmp_str);
	for (i = 0; i < n_cv; i++)
		if (!k || strcmp(run_names[k - 1], run_names[i]))
			run_names[k++] = run_names[i];
	n_runs = k;
	for (i = 0; i < n_cv; i++) {
		char **p = bsearch(&cv[i].run, run_names, n_runs,
				   sizeof(*run_names), cmp_str);

		cv[i].color = (int)(p - run_names);
	}
	return 0;
}

static const char *xlabel_of(const char *tag)
{
	return !strncmp(tag, "epoch_", 6) ? "epoch" : "step";
}

static int draw(void)
{
	struct plot_series *s = calloc(n_cv + 1, sizeof(*s));
	struct plot_chart ch;
	struct tfk_raster r;
	struct tfk_err err;
	struct tfk_buf b;
	size_t i, j, n_panels = 0, p;
	int w = ascii ? 72 : 640, h = ascii ? 20 : 400, cols, rows, rc;

	if (!s) {
		tfk_cli_warn("out of memory");
		return 1;
	}
	if (size_arg && plot_parse_size(size_arg, &w, &h) && !(ascii &&
	    sscanf(size_arg, "%dx%d", &w, &h) == 2 && w >= 8 && h >= 4))
		tfk_cli_usage_error("--size %s: want WxH, each 16..16384",
				    size_arg);
	for (i = 0; i < n_cv; i++) {
		s[i].label = cv[i].run;
		s[i].n = cv[i].n;
		s[i].x = cv[i].x;
		s[i].y = cv[i].y;
		s[i].raw = smoothing > 0 ? cv[i].raw : NULL;
		s[i].color = plot_colors[cv[i].color % PLOT_N_COLORS];
		s[i].mark = plot_marks[cv[i].color % PLOT_N_COLORS];
		if (!i || strcmp(cv[i].tag, cv[i - 1].tag))
			n_panels++;
	}
	cols = n_panels > 1 ? 2 : 1;
	rows = (int)((n_panels + (size_t)cols - 1) / (size_t)cols);
	tfk_buf_init(&b);
	if (!ascii && (rc = tfk_raster_init(&r, w * cols, h * rows, 0xffffff,
					    &err))) {
		free(s);
		return tfk_cli_fail(&err);
	}
	for (i = 0, p = 0; i < n_cv; i = j, p++) {
		for (j = i; j < n_cv && !strcmp(cv[j].tag, cv[i].tag); j++)
			;
		ch.title = cv[i].tag;
		ch.xlabel = xlabel_of(cv[i].tag);
		ch.ylabel = NULL;
		ch.x_steps = 1;
		ch.n = j - i;
		ch.s = s + i;
		if (ascii) {
			if (p)
				tfk_buf_addc(&b, '\n');
			plot_chart_ascii(&b, &ch, w, h);
		} else {
			plot_chart_draw(&r, (int)(p % (size_t)cols) * w,
					(int)(p / (size_t)cols) * h, w, h, &ch);
		}
	}
	if (ascii) {
		rc = plot_write_text(&b, out_path);
	} else {
		rc = plot_write_png(&r, out_path);
		tfk_raster_release(&r);
	}
	tfk_buf_release(&b);
	free(s);
	return rc;
}

static int curves_main(int argc, char **argv)
{
	int i, rc = 0;
	size_t k;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (!argc)
		tfk_cli_usage_error("a LOGDIR or event FILE is needed");
	if (!(smoothing >= 0 && smoothing < 1))
		tfk_cli_usage_error("--smoothing %g: want 0 to below 1",
				    smoothing);
	for (i = 0; i < argc; i++)
		rc |= read_arg(argv[i], argc > 1);
	if (!n_cv) {
		tfk_cli_warn("no scalars%s to draw", tags.n ? " of the tags "
			     "asked for" : "");
		return 1;
	}
	for (k = 0; k < n_cv; k++)
		if (finish(&cv[k])) {
			tfk_cli_warn("out of memory");
			return 1;
		}
	qsort(cv, n_cv, sizeof(*cv), cmp_curve);
	if (colour_runs()) {
		tfk_cli_warn("out of memory");
		return 1;
	}
	rc |= draw();
	for (k = 0; k < n_cv; k++) {
		free(cv[k].run);
		free(cv[k].tag);
		free(cv[k].x);
		free(cv[k].y);
		free(cv[k].raw);
	}
	free(cv);
	free(run_names);
	return rc;
}

const struct tfk_subcmd plot_curves_sub = {
	"curves", "scalar curves of TensorBoard logs, a panel per tag",
	curves_main
};
