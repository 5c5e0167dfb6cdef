/*
 * tfk-events: print the scalars of TensorBoard event files, or list
 * their runs and tags.
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
 * (TF1 simple_value, float tensors), %.17g for doubles. A corrupt
 * record is reported (file, record, byte) and skipped, the rest of the
 * file is still read, and the exit status is 1 at the end.
 */
#include "format/events.h"
#include "util/buf.h"
#include "util/cli.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct tfk_strlist tags, runs;
static int csv, json, list, follow;
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
	TFK_OPT_FLAG(0, "follow", &follow,
		     "keep reading a growing event file until interrupted"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-events",
	"[options] [LOGDIR|FILE...]",
	"print the scalars of TensorBoard event files, or list their tags",
	"tfk-events --tag epoch_loss --csv logs; tfk-events --list logs",
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
	if (as_json && v != v)
		tfk_buf_adds(b, "\"NaN\"");
	else if (as_json && (v > 1.7976931348623157e308 ||
			     v < -1.7976931348623157e308))
		tfk_buf_adds(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
	else
		tfk_buf_addf(b, f32 ? "%.9g" : "%.17g", v);
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

static int print_scalar(const char *run, const struct tfk_ev_event *e,
			const struct tfk_ev_value *v)
{
	struct tfk_buf b;
	int rc = 0;

	tfk_buf_init(&b);
	if (json) {
		tfk_buf_adds(&b, "{\"run\":");
		tfk_buf_add_json_str(&b, run, strlen(run));
		tfk_buf_adds(&b, ",\"tag\":");
		tfk_buf_add_json_str(&b, v->tag, strlen(v->tag));
		tfk_buf_addf(&b, ",\"step\":%" PRId64 ",\"wall_time\":",
			     e->step);
		put_num(&b, e->wall_time, 0, 1);
		tfk_buf_adds(&b, ",\"value\":");
		put_num(&b, v->value, v->f32, 1);
		tfk_buf_adds(&b, "}\n");
	} else if (csv) {
		if (!header_done)
			tfk_buf_adds(&b, "run,tag,step,wall_time,value\n");
		put_csv_str(&b, run);
		tfk_buf_addc(&b, ',');
		put_csv_str(&b, v->tag);
		tfk_buf_addf(&b, ",%" PRId64 ",", e->step);
		put_num(&b, e->wall_time, 0, 0);
		tfk_buf_addc(&b, ',');
		put_num(&b, v->value, v->f32, 0);
		tfk_buf_addc(&b, '\n');
	} else {
		if (!header_done)
			tfk_buf_adds(&b, "run\ttag\tstep\twall_time\tvalue\n");
		tfk_buf_addf(&b, "%s\t%s\t%" PRId64 "\t%.17g\t", run, v->tag,
			     e->step, e->wall_time);
		put_num(&b, v->value, v->f32, 0);
		tfk_buf_addc(&b, '\n');
	}
	header_done = 1;
	if (!tfk_buf_ok(&b) || fwrite(b.data, 1, b.len, stdout) != b.len)
		rc = -1;
	tfk_buf_release(&b);
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

		if (!match_any(&tags, v->tag))
			continue;
		if (list) {
			if (note(run, v->tag, v->kind, e->step))
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
	return rc;
}
