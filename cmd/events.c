/*
 * tfk-events: print the scalars of TensorBoard event files, list their
 * runs and tags, summarise histograms, list image and text summaries,
 * or show hparams sessions as TensorBoard's HParams table does.
 *
 * TensorBoard reads a log directory as runs (each subdirectory holding
 * event files, named relative to the logdir) and shows charts; its
 * EventAccumulator is the Python way to get the numbers back out. This
 * tool is that accumulator as a filter: every scalar of the chosen runs
 * and tags, one line each, in the order of the files (by run, then by
 * name, i.e. time) and of the events in them. Unlike EventAccumulator
 * it keeps every value (no reservoir sampling) and does not drop
 * events after a restart's SessionLog.START.
 *
 * A FILE argument is one event file whose run is its directory ("-"
 * or none: standard input, run "."); a directory is walked for files
 * whose name contains "tfevents".
 * Values are printed so they read back exactly: %.9g for float32
 * (TF1 simple_value, float tensors), %.17g for doubles, spelled by
 * util/fmtg (printf's bytes without printf: a scalar line is built in
 * one buffer with no printf call, for files of millions of them). A corrupt
 * record is reported (file, record, byte) and skipped, the rest of the
 * file is still read, and the exit status is 1 at the end.
 *
 * --histograms prints per tag and step the count, min, max, mean and
 * the percentiles of TensorBoard's distributions dashboard (its
 * compress_histogram basis points; TF2 histogram tensors hold no sum,
 * so their mean is taken from bucket midpoints). --hparams prints one
 * row per session (a run holding a session_start_info summary): its
 * hparams, then as metrics the last value of every scalar tag in the
 * session's run and the runs below it, named GROUP/TAG with GROUP the
 * run below the session's (TensorBoard's derivation of metrics when no
 * experiment summary lists them), then the session's status.
 */
#include "format/events.h"
#include "util/buf.h"
#include "util/cli.h"
#include "util/fmtg.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct tfk_strlist tags, runs;
static int csv, json, list, follow, histos, images, texts, hparams;
static int64_t step_lo = INT64_MIN, step_hi = INT64_MAX;

static int parse_steps(const char *arg, void *value)
{
	const char *colon = strchr(arg, ':');
	char *end;

	(void)value;
	if (!colon)
		return -1;
	if (colon != arg) {
		errno = 0;
		step_lo = strtoll(arg, &end, 10);
		if (errno || end != colon)
			return -1;
	}
	if (colon[1]) {
		errno = 0;
		step_hi = strtoll(colon + 1, &end, 10);
		if (errno || *end)
			return -1;
	}
	return 0;
}

static const struct tfk_opt opts[] = {
	TFK_OPT_LIST(0, "tag", &tags, "PATTERN",
		     "only tags matching PATTERN (a shell glob; repeatable)"),
	TFK_OPT_LIST(0, "run", &runs, "PATTERN",
		     "only runs matching PATTERN (a shell glob; repeatable)"),
	TFK_OPT_CALL(0, "step", NULL, "A:B",
		     "only steps A to B, both included (either may be left "
		     "out)", parse_steps),
	TFK_OPT_FLAG(0, "csv", &csv, "print CSV with a header"),
	TFK_OPT_FLAG(0, "json", &json, "print one JSON object per line"),
	TFK_OPT_FLAG(0, "list", &list,
		     "list runs and tags with their kind and count instead"),
	TFK_OPT_FLAG(0, "histograms", &histos,
		     "summarise histograms: count, min, max, mean, "
		     "percentiles"),
	TFK_OPT_FLAG(0, "images", &images,
		     "list image summaries: size, format, bytes"),
	TFK_OPT_FLAG(0, "text", &texts, "print text summaries"),
	TFK_OPT_FLAG(0, "hparams", &hparams,
		     "show hparams sessions with their metrics, as "
		     "TensorBoard's HParams table"),
	TFK_OPT_FLAG(0, "follow", &follow,
		     "keep reading a growing event file until interrupted"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-events",
	"[options] [LOGDIR|FILE...]",
	"print the scalars of TensorBoard event files, list their tags, "
	"summarise histograms, images, text and hparams sessions",
	"tfk-events --tag epoch_loss --csv logs; tfk-events --list logs; "
	"tfk-events --hparams logs",
};

/* One (run, tag, kind) for --list. */
struct seen {
	char *run, *tag;
	int kind;
	uint64_t n;
	int64_t first, last;
};

static struct seen *seen;
static size_t n_seen, cap_seen;
static int header_done;
static volatile sig_atomic_t stop;

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

static int note(const char *run, const char *tag, int kind, int64_t step)
{
	size_t i;
	struct seen *s;

	for (i = 0; i < n_seen; i++)
		if (seen[i].kind == kind && !strcmp(seen[i].tag, tag) &&
		    !strcmp(seen[i].run, run))
			break;
	if (i == n_seen) {
		if (n_seen == cap_seen) {
			size_t cap = cap_seen ? 2 * cap_seen : 64;

			s = realloc(seen, cap * sizeof(*s));
			if (!s)
				return -1;
			seen = s;
			cap_seen = cap;
		}
		s = &seen[n_seen];
		s->run = strdup(run);
		s->tag = strdup(tag);
		if (!s->run || !s->tag) {
			free(s->run);
			free(s->tag);
			return -1;
		}
		s->kind = kind;
		s->n = 0;
		s->first = step;
		n_seen++;
	}
	s = &seen[i];
	s->n++;
	s->last = step;
	return 0;
}

static void put_num(struct tfk_buf *b, double v, int f32, int as_json)
{
	char s[TFK_FMT_MAX];

	if (as_json && v != v)
		tfk_buf_adds(b, "\"NaN\"");
	else if (as_json && (v > 1.7976931348623157e308 ||
			     v < -1.7976931348623157e308))
		tfk_buf_adds(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
	else
		tfk_buf_add(b, s, tfk_fmt_g(s, v, f32 ? 9 : 17));
}

static void put_csv_str(struct tfk_buf *b, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		tfk_buf_adds(b, s);
		return;
	}
	tfk_buf_addc(b, '"');
	for (; *s; s++) {
		if (*s == '"')
			tfk_buf_addc(b, '"');
		tfk_buf_addc(b, *s);
	}
	tfk_buf_addc(b, '"');
}

/*
 * Scalar lines collect in one buffer written with one fwrite per 64
 * KiB (per line when stdout is a terminal, as stdio would): a million
 * lines cost a million fwrite calls otherwise. out_flush hands it to
 * stdio before anything else writes to stdout or waits.
 */
static struct tfk_buf out;
static int out_tty = -1;

static int out_flush(void)
{
	int rc = 0;

	if (!tfk_buf_ok(&out) ||
	    (out.len && fwrite(out.data, 1, out.len, stdout) != out.len))
		rc = -1;
	tfk_buf_reset(&out);
	return rc;
}

/* A run's or tag's field as each format spells it, kept for the next
 * lines, which almost always have the same run and one of a few tags. */
struct field {
	char *src;		/* the string it was made from (owned) */
	size_t n;		/* its length */
	struct tfk_buf enc;
};

/* The run of the file being read: its field is made once per file. */
static const char *run_now;

#define N_TAG_FIELDS 256	/* i below is 8 bits */
static struct field run_field, tag_fields[N_TAG_FIELDS];

/* s[0..n) == t[0..n), inline for the short strings tags are. */
static int same_bytes(const char *s, const char *t, size_t n)
{
	uint64_t a, b, c, d;

	if (n < 8 || n > 16)
		return !memcmp(s, t, n);
	memcpy(&a, s, 8);
	memcpy(&b, t, 8);
	memcpy(&c, s + n - 8, 8);
	memcpy(&d, t + n - 8, 8);
	return a == b && c == d;
}

/* f's encoding of s (n bytes), made again when f holds another
 * string; NULL when out of memory. */
static const struct tfk_buf *field_of(struct field *f, const char *s,
				      size_t n)
{
	if (f->src && f->n == n && same_bytes(f->src, s, n))
		return &f->enc;
	free(f->src);
	tfk_buf_reset(&f->enc);
	if (json)
		tfk_buf_add_json_str(&f->enc, s, n);
	else if (csv)
		put_csv_str(&f->enc, s);
	else
		tfk_buf_add(&f->enc, s, n);
	f->n = n;
	tfk_buf_reserve(&f->enc, 32);	/* put_short reads 32 bytes */
	if (!(f->src = strdup(s)) || !tfk_buf_ok(&f->enc))
		return NULL;
	return &f->enc;
}


/* A tag's field: by a hash of its length and its last (up to) 8
 * bytes, where tags of one family ("train/metric_07") differ, in the
 * first of 4 slots from there that holds it, else in a free one, else
 * in place of the first. */
static const struct tfk_buf *tag_field_of(const char *s, size_t n)
{
	uint64_t tail = 0, h;
	size_t i, k;

	if (n >= 8)
		memcpy(&tail, s + n - 8, 8);
	else
		for (k = 0; k < n; k++)
			tail = tail << 8 | (unsigned char)s[k];
	h = (tail ^ n) * 0x9e3779b97f4a7c15u;
	i = (size_t)(h >> 56);		/* the bits every byte reaches */
	for (k = 0; k < 4; k++) {
		struct field *f = &tag_fields[(i + k) % N_TAG_FIELDS];

		if (f->src && f->n == n && same_bytes(f->src, s, n))
			return &f->enc;
		if (!f->src)
			return field_of(f, s, n);
	}
	return field_of(&tag_fields[i], s, n);
}

static void fields_release(void)
{
	size_t i;

	free(run_field.src);
	tfk_buf_release(&run_field.enc);
	for (i = 0; i < N_TAG_FIELDS; i++) {
		free(tag_fields[i].src);
		tfk_buf_release(&tag_fields[i].enc);
	}
}

static char *put_mem(char *o, const void *p, size_t n)
{
	memcpy(o, p, n);
	return o + n;
}

/* put_mem of p, which has 32 bytes readable, to o, which has room for
 * 32: one fixed-size copy when n is at most 32. */
static char *put_short(char *o, const void *p, size_t n)
{
	if (n <= 32)
		memcpy(o, p, 32);
	else
		memcpy(o, p, n);
	return o + n;
}

/* put_num at o, which has TFK_FMT_MAX bytes of room. */
static char *put_num_at(char *o, double v, int f32, int as_json)
{
	if (as_json && v != v)
		return put_mem(o, "\"NaN\"", 5);
	if (as_json && (v > 1.7976931348623157e308 ||
			v < -1.7976931348623157e308))
		return v > 0 ? put_mem(o, "\"Infinity\"", 10)
			: put_mem(o, "\"-Infinity\"", 11);
	return o + tfk_fmt_g(o, v, f32 ? 9 : 17);
}

/*
 * A line's step and wall_time are most often the previous line's (the
 * values of one event, the tags one step writes), so the last of each
 * is kept printed.
 */
static struct {
	int64_t step;
	uint64_t wall_bits;
	int json;		/* the wall_time's spelling for --json */
	size_t n_step, n_wall;	/* 0: none yet */
	char s_step[TFK_FMT_MAX], s_wall[TFK_FMT_MAX];
} last;

static char *put_step(char *o, int64_t step)
{
	if (!last.n_step || step != last.step) {
		last.step = step;
		last.n_step = tfk_fmt_i64(last.s_step, step);
	}
	return put_short(o, last.s_step, last.n_step);
}

static char *put_wall(char *o, double wall, int as_json)
{
	uint64_t bits;

	memcpy(&bits, &wall, 8);
	if (!last.n_wall || bits != last.wall_bits || as_json != last.json) {
		last.wall_bits = bits;
		last.json = as_json;
		last.n_wall = (size_t)(put_num_at(last.s_wall, wall, 0,
						  as_json) - last.s_wall);
	}
	return put_short(o, last.s_wall, last.n_wall);
}

#define SCALAR_HEAD "run\ttag\tstep\twall_time\tvalue\n"
#define SCALAR_CSV_HEAD "run,tag,step,wall_time,value\n"

/* One line written straight into the output buffer: room for it is
 * made once (the fields, three numbers, the JSON keys). */
static int print_scalar(const char *run, const struct tfk_ev_event *e,
			const struct tfk_ev_value *v)
{
	const struct tfk_buf *rf = run == run_now ? &run_field.enc
		: field_of(&run_field, run, strlen(run));
	const struct tfk_buf *tf = tag_field_of(v->tag, v->tag_len);
	char sep = csv ? ',' : '\t', *o;

	run_now = rf ? run : NULL;
	if (!rf || !tf || tfk_buf_reserve(&out, rf->len + tf->len +
					  3 * TFK_FMT_MAX + 64))
		return -1;
	o = (char *)out.data + out.len;
	if (json) {
		o = put_mem(o, "{\"run\":", 7);
		o = put_short(o, rf->data, rf->len);
		o = put_mem(o, ",\"tag\":", 7);
		o = put_short(o, tf->data, tf->len);
		o = put_mem(o, ",\"step\":", 8);
		o = put_step(o, e->step);
		o = put_mem(o, ",\"wall_time\":", 13);
		o = put_wall(o, e->wall_time, 1);
		o = put_mem(o, ",\"value\":", 9);
		o = put_num_at(o, v->value, v->f32, 1);
		o = put_mem(o, "}\n", 2);
	} else {
		if (!header_done)
			o = csv ? put_mem(o, SCALAR_CSV_HEAD,
					  sizeof(SCALAR_CSV_HEAD) - 1)
				: put_mem(o, SCALAR_HEAD,
					  sizeof(SCALAR_HEAD) - 1);
		o = put_short(o, rf->data, rf->len);
		*o++ = sep;
		o = put_short(o, tf->data, tf->len);
		*o++ = sep;
		o = put_step(o, e->step);
		*o++ = sep;
		o = put_wall(o, e->wall_time, 0);
		*o++ = sep;
		o = put_num_at(o, v->value, v->f32, 0);
		*o++ = '\n';
	}
	out.len = (size_t)(o - (char *)out.data);
	header_done = 1;
	if (out_tty < 0)
		out_tty = isatty(STDOUT_FILENO);
	if (out.len >= (64u << 10) || out_tty)
		return out_flush();
	return 0;
}

/* Table rows of the summary modes: TSV (tabs and newlines in strings
 * escaped as \t and \n), CSV, or one JSON object per row. */
static void row_str(struct tfk_buf *b, int first, const char *key,
		    const char *s, size_t n)
{
	size_t i;

	if (json) {
		tfk_buf_adds(b, first ? "{\"" : ",\"");
		tfk_buf_adds(b, key);
		tfk_buf_adds(b, "\":");
		tfk_buf_add_json_str(b, s, n);
		return;
	}
	if (!first)
		tfk_buf_addc(b, csv ? ',' : '\t');
	if (csv) {
		char *z = strndup(s, n);

		if (z)
			put_csv_str(b, z);
		free(z);
		return;
	}
	for (i = 0; i < n; i++) {
		if (s[i] == '\t')
			tfk_buf_adds(b, "\\t");
		else if (s[i] == '\n')
			tfk_buf_adds(b, "\\n");
		else if (s[i] == '\\')
			tfk_buf_adds(b, "\\\\");
		else
			tfk_buf_addc(b, s[i]);
	}
}

static void row_num(struct tfk_buf *b, int first, const char *key, double v,
		    int f32)
{
	if (json)
		tfk_buf_addf(b, "%s\"%s\":", first ? "{" : ",", key);
	else if (!first)
		tfk_buf_addc(b, csv ? ',' : '\t');
	put_num(b, v, f32, json);
}

static void row_int(struct tfk_buf *b, const char *key, int64_t v)
{
	if (json)
		tfk_buf_addf(b, ",\"%s\":%" PRId64, key, v);
	else
		tfk_buf_addf(b, "%c%" PRId64, csv ? ',' : '\t', v);
}

static void row_end(struct tfk_buf *b)
{
	tfk_buf_adds(b, json ? "}\n" : "\n");
}

/* The header of a table (not for JSON): names separated by spaces. */
static void header(struct tfk_buf *b, const char *names)
{
	const char *p;

	if (json || header_done)
		return;
	for (p = names; *p; p++)
		tfk_buf_addc(b, *p == ' ' ? (csv ? ',' : '\t') : *p);
	tfk_buf_addc(b, '\n');
}

static int flush_buf(struct tfk_buf *b)
{
	int rc = out_flush();

	header_done = 1;
	if (!tfk_buf_ok(b) || fwrite(b->data, 1, b->len, stdout) != b->len)
		rc = -1;
	tfk_buf_release(b);
	return rc;
}

/* TensorBoard's distributions: the normal distribution's -1.5..1.5
 * sigma points (compressor.py NORMAL_HISTOGRAM_BPS without 0 and
 * 10000, which are min and max). */
static const double pct[] = { 6.68, 15.87, 30.85, 50, 69.15, 84.13, 93.32 };

static int print_histo(const char *run, const struct tfk_ev_event *e,
		       const struct tfk_ev_value *v)
{
	const struct tfk_ev_histo *h = &v->histo;
	struct tfk_buf b;
	char key[16];
	size_t i;

	tfk_buf_init(&b);
	header(&b, "run tag step count min max mean p6.68 p15.87 p30.85 "
	       "p50 p69.15 p84.13 p93.32");
	row_str(&b, 1, "run", run, strlen(run));
	row_str(&b, 0, "tag", v->tag, strlen(v->tag));
	row_int(&b, "step", e->step);
	row_num(&b, 0, "count", h->num, 0);
	row_num(&b, 0, "min", h->min, 0);
	row_num(&b, 0, "max", h->max, 0);
	row_num(&b, 0, "mean", h->num > 0 ? h->sum / h->num : NAN, 0);
	for (i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
		snprintf(key, sizeof(key), "p%g", pct[i]);
		row_num(&b, 0, key, tfk_ev_histo_quantile(h, pct[i] / 100), 0);
	}
	row_end(&b);
	return flush_buf(&b);
}

static int print_image(const char *run, const struct tfk_ev_event *e,
		       const struct tfk_ev_value *v)
{
	const struct tfk_ev_image *im = &v->image;
	struct tfk_buf b;

	tfk_buf_init(&b);
	header(&b, "run tag step images width height format bytes");
	row_str(&b, 1, "run", run, strlen(run));
	row_str(&b, 0, "tag", v->tag, strlen(v->tag));
	row_int(&b, "step", e->step);
	row_int(&b, "images", (int64_t)im->n);
	row_int(&b, "width", im->width);
	row_int(&b, "height", im->height);
	row_str(&b, 0, "format", im->format, strlen(im->format));
	row_int(&b, "bytes", (int64_t)im->nbytes);
	row_end(&b);
	return flush_buf(&b);
}

static int print_text(const char *run, const struct tfk_ev_event *e,
		      const struct tfk_ev_value *v)
{
	struct tfk_buf b;

	tfk_buf_init(&b);
	header(&b, "run tag step text");
	row_str(&b, 1, "run", run, strlen(run));
	row_str(&b, 0, "tag", v->tag, strlen(v->tag));
	row_int(&b, "step", e->step);
	row_str(&b, 0, "text", v->text, v->text_len);
	row_end(&b);
	return flush_buf(&b);
}

/* --hparams: sessions and the last value of each (run, tag) scalar. */
struct session {
	char *run, *group;
	size_t n;
	struct tfk_hparam *hp;		/* owned names and strings */
	int status;
};

struct last {
	char *run, *tag;
	double value;
	int f32;
};

static struct session *sess;
static size_t n_sess;
static struct last *lasts;
static size_t n_last;

static int note_session(const char *run, const struct tfk_ev_hparams *h)
{
	struct session *s = NULL, *ns;
	size_t i;

	for (i = 0; i < n_sess; i++)
		if (!strcmp(sess[i].run, run))
			s = &sess[i];
	if (!s) {
		if (!(ns = realloc(sess, (n_sess + 1) * sizeof(*ns))))
			return -1;
		sess = ns;
		s = &sess[n_sess++];
		memset(s, 0, sizeof(*s));
		if (!(s->run = strdup(run)))
			return -1;
	}
	if (h->what == TFK_EVH_END) {
		s->status = h->status;
		return 0;
	}
	if (h->what != TFK_EVH_START)
		return 0;
	for (i = 0; i < s->n; i++) {
		free((char *)s->hp[i].name);
		free((char *)s->hp[i].str);
	}
	free(s->hp);
	free(s->group);
	s->n = 0;
	s->group = strdup(h->group);
	s->hp = calloc(h->n + 1, sizeof(*s->hp));
	if (!s->group || !s->hp)
		return -1;
	for (i = 0; i < h->n; i++) {
		s->hp[i].name = strdup(h->hp[i].name);
		s->hp[i].num = h->hp[i].num;
		s->hp[i].str = h->hp[i].str ? strdup(h->hp[i].str) : NULL;
		s->n++;
		if (!s->hp[i].name || (h->hp[i].str && !s->hp[i].str))
			return -1;
	}
	return 0;
}

static int note_last(const char *run, const struct tfk_ev_value *v)
{
	struct last *nl;
	size_t i;

	for (i = 0; i < n_last; i++)
		if (!strcmp(lasts[i].tag, v->tag) && !strcmp(lasts[i].run, run))
			break;
	if (i == n_last) {
		if (!(nl = realloc(lasts, (n_last + 1) * sizeof(*nl))))
			return -1;
		lasts = nl;
		lasts[i].run = strdup(run);
		lasts[i].tag = strdup(v->tag);
		n_last++;
		if (!lasts[i].run || !lasts[i].tag)
			return -1;
	}
	lasts[i].value = v->value;
	lasts[i].f32 = v->f32;
	return 0;
}

/* The metric group of run under session run sr ("" for the run
 * itself), or NULL when run is not in the session. */
static const char *group_of(const char *sr, const char *run)
{
	size_t n = strlen(sr);

	if (!strcmp(sr, run))
		return "";
	if (!strcmp(sr, "."))
		return run;
	if (!strncmp(run, sr, n) && run[n] == '/')
		return run + n + 1;
	return NULL;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The sorted distinct strings of v[0..n) (borrowed), in *out. */
static size_t distinct(char **v, size_t n)
{
	size_t i, k = 0;

	qsort(v, n, sizeof(*v), cmp_str);
	for (i = 0; i < n; i++)
		if (!k || strcmp(v[k - 1], v[i]))
			v[k++] = v[i];
	return k;
}

static char *metric_name(const char *group, const char *tag)
{
	size_t n = strlen(group) + strlen(tag) + 2;
	char *m = malloc(n);

	if (m)
		snprintf(m, n, "%s%s%s", group, *group ? "/" : "", tag);
	return m;
}

static int print_hparams(void)
{
	static const char *const status[] = {
		"unknown", "success", "failure", "running"
	};
	struct tfk_buf b;
	char **hn = NULL, **mn = NULL, **owned = NULL;
	size_t n_hn = 0, n_mn = 0, n_owned = 0, i, j, k;
	int rc = -1;

	for (i = 0; i < n_sess; i++)
		n_hn += sess[i].n;
	hn = calloc(n_hn + 1, sizeof(*hn));
	mn = calloc(n_sess * n_last + 1, sizeof(*mn));
	owned = calloc(n_sess * n_last + 1, sizeof(*owned));
	if (!hn || !mn || !owned)
		goto out;
	for (n_hn = 0, i = 0; i < n_sess; i++)
		for (j = 0; j < sess[i].n; j++)
			hn[n_hn++] = (char *)sess[i].hp[j].name;
	n_hn = distinct(hn, n_hn);
	for (i = 0; i < n_sess; i++)
		for (j = 0; j < n_last; j++) {
			const char *g = group_of(sess[i].run, lasts[j].run);

			if (!g)
				continue;
			if (!(owned[n_owned] = metric_name(g, lasts[j].tag)))
				goto out;
			mn[n_mn++] = owned[n_owned++];
		}
	n_mn = distinct(mn, n_mn);
	tfk_buf_init(&b);
	if (!json) {
		tfk_buf_adds(&b, "session");
		for (i = 0; i < n_hn; i++) {
			tfk_buf_addc(&b, csv ? ',' : '\t');
			csv ? put_csv_str(&b, hn[i]) : tfk_buf_adds(&b, hn[i]);
		}
		for (i = 0; i < n_mn; i++) {
			tfk_buf_addc(&b, csv ? ',' : '\t');
			csv ? put_csv_str(&b, mn[i]) : tfk_buf_adds(&b, mn[i]);
		}
		tfk_buf_adds(&b, csv ? ",status\n" : "\tstatus\n");
	}
	for (i = 0; i < n_sess; i++) {
		const struct session *s = &sess[i];
		const char *st = s->status >= 0 && s->status < 4 ?
			status[s->status] : "unknown";

		row_str(&b, 1, "session", s->run, strlen(s->run));
		if (json) {
			tfk_buf_adds(&b, ",\"group\":");
			tfk_buf_add_json_str(&b, s->group ? s->group : "",
					     s->group ? strlen(s->group) : 0);
			tfk_buf_adds(&b, ",\"hparams\":{");
		}
		for (j = 0; j < n_hn; j++) {
			const struct tfk_hparam *h = NULL;

			for (k = 0; k < s->n; k++)
				if (!strcmp(s->hp[k].name, hn[j]))
					h = &s->hp[k];
			if (json && !h)
				continue;
			if (json) {
				tfk_buf_adds(&b, b.data[b.len - 1] == '{' ?
					     "" : ",");
				tfk_buf_add_json_str(&b, hn[j], strlen(hn[j]));
				tfk_buf_addc(&b, ':');
				if (h->str)
					tfk_buf_add_json_str(&b, h->str,
							     strlen(h->str));
				else
					put_num(&b, h->num, 0, 1);
			} else if (!h) {
				tfk_buf_addc(&b, csv ? ',' : '\t');
			} else if (h->str) {
				row_str(&b, 0, "", h->str, strlen(h->str));
			} else {
				row_num(&b, 0, "", h->num, 0);
			}
		}
		if (json)
			tfk_buf_adds(&b, "},\"metrics\":{");
		for (j = 0; j < n_mn; j++) {
			const struct last *l = NULL;

			for (k = 0; k < n_last; k++) {
				const char *g = group_of(s->run, lasts[k].run);
				char *m = g ? metric_name(g, lasts[k].tag)
					: NULL;

				if (m && !strcmp(m, mn[j]))
					l = &lasts[k];
				free(m);
			}
			if (json && l) {
				tfk_buf_adds(&b, b.data[b.len - 1] == '{' ?
					     "" : ",");
				tfk_buf_add_json_str(&b, mn[j], strlen(mn[j]));
				tfk_buf_addc(&b, ':');
				put_num(&b, l->value, l->f32, 1);
			} else if (!json && l) {
				row_num(&b, 0, "", l->value, l->f32);
			} else if (!json) {
				tfk_buf_addc(&b, csv ? ',' : '\t');
			}
		}
		if (json)
			tfk_buf_addc(&b, '}');
		row_str(&b, 0, "status", st, strlen(st));
		row_end(&b);
	}
	rc = flush_buf(&b);
out:
	for (i = 0; i < n_owned; i++)
		free(owned[i]);
	free(owned);
	free(mn);
	free(hn);
	return rc;
}

/* Handle one event; -1 on out of memory or a failed write. */
static int show(const char *run, const struct tfk_ev_event *e)
{
	size_t i;

	if (e->step < step_lo || e->step > step_hi)
		return 0;
	for (i = 0; i < e->n_value; i++) {
		const struct tfk_ev_value *v = &e->value[i];

		if (hparams) {
			if (v->kind == TFK_EVK_HPARAMS &&
			    note_session(run, &v->hparams))
				return -1;
			if (v->kind == TFK_EVK_SCALAR &&
			    match_any(&tags, v->tag) && note_last(run, v))
				return -1;
			continue;
		}
		if (!match_any(&tags, v->tag))
			continue;
		if (list) {
			if (note(run, v->tag, v->kind, e->step))
				return -1;
		} else if (histos) {
			if (v->kind == TFK_EVK_HISTO && print_histo(run, e, v))
				return -1;
		} else if (images) {
			if (v->kind == TFK_EVK_IMAGE && print_image(run, e, v))
				return -1;
		} else if (texts) {
			if (v->kind == TFK_EVK_TEXT && print_text(run, e, v))
				return -1;
		} else if (v->kind == TFK_EVK_SCALAR &&
			   print_scalar(run, e, v)) {
			return -1;
		}
	}
	return 0;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * --follow at the end of the file: wait for it to grow (polling its
 * size each second, as tail -f does without inotify) and reopen past
 * the last whole record. 1: go on reading, 0: stop (signal, or the
 * file shrank: replaced or truncated under us).
 */
static int wait_growth(struct tfk_evr *r, const char *path)
{
	struct tfk_err err;
	struct stat st;

	if (out_flush())
		tfk_cli_warn("<stdout>: write failed");
	fflush(stdout);
	while (!stop) {
		sleep(1);
		if (stop)
			break;
		if (stat(path, &st)) {
			tfk_cli_warn("%s: %s", path, strerror(errno));
			return 0;
		}
		if ((uint64_t)st.st_size < tfk_evr_end(r)) {
			tfk_cli_warn("%s: file shrank to %lld bytes; stopping",
				     path, (long long)st.st_size);
			return 0;
		}
		if ((uint64_t)st.st_size == tfk_evr_end(r))
			continue;
		if (tfk_evr_reopen(r, &err)) {
			tfk_cli_fail(&err);
			return 0;
		}
		return 1;
	}
	return 0;
}

/* Read one file; 1 when something in it failed (reported). */
static int read_file(const char *run, const char *path)
{
	struct tfk_evr *r;
	struct tfk_ev_event e;
	struct tfk_err err;
	int rc, bad = 0;

	if (!match_any(&runs, run))
		return 0;
	run_now = NULL;
	if (tfk_evr_open(&r, path, &err))
		return tfk_cli_fail(&err);
	for (;;) {
		rc = tfk_evr_next(r, &e, &err);
		if (rc == 1) {
			if (show(run, &e)) {
				tfk_cli_warn("<stdout>: write failed");
				bad = 1;
				break;
			}
			continue;
		}
		if ((rc == 0 || rc == TFK_ETRUNC) && follow) {
			/* a tail being written is not an error yet */
			if (wait_growth(r, path))
				continue;
			break;
		}
		if (rc == 0)
			break;
		if (out_flush()) {	/* what came before the error first */
			tfk_cli_warn("<stdout>: write failed");
			bad = 1;
			break;
		}
		tfk_cli_fail(&err);
		bad = 1;
		if (rc != TFK_ECORRUPT)
			break;
	}
	tfk_evr_close(r);
	return bad;
}

static int read_dir(const char *dir)
{
	struct tfk_ev_file *f;
	struct tfk_err err;
	size_t n, i;
	int rc = 0;

	if (tfk_ev_files_find(dir, &f, &n, &err))
		return tfk_cli_fail(&err);
	if (!n)
		tfk_cli_warn("%s: no event files", dir);
	for (i = 0; i < n; i++)
		rc |= read_file(f[i].run, f[i].path);
	tfk_ev_files_free(f, n);
	return rc || !n;
}

/* A FILE's run: its directory as given ("." for a bare name). */
static int read_arg(const char *arg)
{
	struct stat st;
	const char *slash;
	char *run;
	int rc;

	if (!strcmp(arg, "-"))
		return read_file(".", "-");
	if (!stat(arg, &st) && S_ISDIR(st.st_mode))
		return read_dir(arg);
	slash = strrchr(arg, '/');
	run = slash ? strndup(arg, (size_t)(slash - arg)) : strdup(".");
	if (!run) {
		tfk_cli_warn("out of memory");
		return 1;
	}
	rc = read_file(*run ? run : "/", arg);
	free(run);
	return rc;
}

static int print_list(void)
{
	struct tfk_buf b;
	size_t i;
	int rc = 0;

	tfk_buf_init(&b);
	tfk_buf_adds(&b, csv ? "run,tag,kind,count,first_step,last_step\n"
		     : "run\ttag\tkind\tcount\tsteps\n");
	for (i = 0; i < n_seen; i++) {
		const struct seen *s = &seen[i];

		if (csv) {
			put_csv_str(&b, s->run);
			tfk_buf_addc(&b, ',');
			put_csv_str(&b, s->tag);
			tfk_buf_addf(&b, ",%s,%" PRIu64 ",%" PRId64 ",%" PRId64
				     "\n", tfk_evk_name(s->kind), s->n,
				     s->first, s->last);
		} else {
			tfk_buf_addf(&b, "%s\t%s\t%s\t%" PRIu64 "\t%" PRId64
				     ":%" PRId64 "\n", s->run, s->tag,
				     tfk_evk_name(s->kind), s->n, s->first,
				     s->last);
		}
	}
	if (!tfk_buf_ok(&b) || fwrite(b.data, 1, b.len, stdout) != b.len)
		rc = 1;
	tfk_buf_release(&b);
	return rc;
}

int main(int argc, char **argv)
{
	int i, rc = 0;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (csv && json)
		tfk_cli_usage_error("--csv and --json exclude each other");
	if (list && json)
		tfk_cli_usage_error("--list prints a table or --csv");
	if (list + histos + images + texts + hparams > 1)
		tfk_cli_usage_error("--list, --histograms, --images, --text "
				    "and --hparams exclude each other");
	if (step_lo > step_hi)
		tfk_cli_usage_error("--step %" PRId64 ":%" PRId64 ": an empty "
				    "range", step_lo, step_hi);
	if (follow) {
		struct sigaction sa;
		struct stat st;

		if (argc != 1 || stat(argv[0], &st) || !S_ISREG(st.st_mode))
			tfk_cli_usage_error("--follow reads one event file");
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	if (argc == 0)
		rc = read_file(".", "-");
	for (i = 0; i < argc; i++)
		rc |= read_arg(argv[i]);
	if (out_flush()) {
		tfk_cli_warn("<stdout>: write failed");
		rc = 1;
	}
	tfk_buf_release(&out);
	fields_release();
	if (hparams && print_hparams()) {
		tfk_cli_warn("<stdout>: write failed");
		rc = 1;
	}
	if (list && print_list()) {
		tfk_cli_warn("<stdout>: write failed");
		rc = 1;
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		tfk_cli_warn("<stdout>: write failed");
		rc = 1;
	}
	for (i = 0; (size_t)i < n_seen; i++) {
		free(seen[i].run);
		free(seen[i].tag);
	}
	free(seen);
	for (i = 0; (size_t)i < n_sess; i++) {
		for (size_t j = 0; j < sess[i].n; j++) {
			free((char *)sess[i].hp[j].name);
			free((char *)sess[i].hp[j].str);
		}
		free(sess[i].hp);
		free(sess[i].run);
		free(sess[i].group);
	}
	free(sess);
	for (i = 0; (size_t)i < n_last; i++) {
		free(lasts[i].run);
		free(lasts[i].tag);
	}
	free(lasts);
	return rc;
}
