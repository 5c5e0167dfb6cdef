/*
 * tfk-csv: convert CSV files to sharded TFRecord files of tf.Example,
 * one feature per column, plus a PREFIX.schema.json sidecar.
 *
 * It does what tf.data.experimental.make_csv_dataset does at training
 * time, once, ahead of time: column types are inferred from the data
 * (int64, then float, then bytes, as make_csv_dataset infers), missing
 * values take the column default (by default the type's zero, as
 * make_csv_dataset's inferred defaults), and the label column becomes a
 * feature of its own. Differences: types are inferred from a prefix of
 * the first file (--infer-rows, TF reads 100 rows) or from everything
 * (--two-pass), and a later value that contradicts the type is an error
 * that names file:line:column instead of a failed training step; a
 * stray quote inside an unquoted field is data (TF refuses it).
 *
 * Flow: the first input file gives the header and the rows to infer
 * from; then every input file of this --shard task is tokenized in
 * batches and encoded on -j threads. Tokenizing is sequential (a batch
 * takes a turn, in item order, on whichever thread claims it) and
 * encoding runs in parallel; the pool delivers batches in order, so the
 * records and the schema are the same for every -j. Inference always
 * reads the first file of the whole list, not of this task's share, so
 * every task of a job array picks the same types.
 */
#include "data/csv.h"
#include "data/shardw.h"
#include "example/schema.h"
#include "util/alloc.h"
#include "util/cli.h"
#include "util/pool.h"
#include "util/progress.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BATCH_ROWS 2048
#define BATCH_BYTES (4u << 20)
#define WARN_LIMIT 5

static struct tfk_conv conv = TFK_CONV_DEFAULTS;
static const char *delim_arg = ",";
static int no_header, two_pass, skip_bad;
static struct tfk_strlist column_names, select_columns, column_types,
			  defaults_arg, na_values;
static const char *label, *label_name = "label", *missing_arg = "fill";
static long infer_rows = 1000;

static const struct tfk_opt opts[] = {
	TFK_CONV_OPTS(conv),
	TFK_OPT_STR('d', "delimiter", &delim_arg, "C",
		    "field delimiter: one character, or 'tab'"),
	TFK_OPT_FLAG(0, "no-header", &no_header,
		     "the first row is data (names: --column-names, else c0, c1, ...)"),
	TFK_OPT_LIST(0, "column-names", &column_names, "A,B,...",
		     "column names, replacing the header row"),
	TFK_OPT_LIST(0, "select-columns", &select_columns, "A,B,...",
		     "convert only these columns"),
	TFK_OPT_STR(0, "label", &label, "COLUMN",
		    "the label column, written as feature --label-name"),
	TFK_OPT_STR(0, "label-name", &label_name, "NAME",
		    "feature name of the label column"),
	TFK_OPT_LIST(0, "column-types", &column_types, "A=TYPE,...",
		     "force column types: int64, float or bytes"),
	TFK_OPT_LIST(0, "defaults", &defaults_arg, "A=VALUE,...",
		     "value of a missing field of column A"),
	TFK_OPT_LIST(0, "na-values", &na_values, "S,...",
		     "strings read as missing, besides the empty field"),
	TFK_OPT_STR(0, "missing", &missing_arg, "MODE",
		    "missing value without default: fill (the type's zero), empty (empty list) or error"),
	TFK_OPT_LONG(0, "infer-rows", &infer_rows, "N",
		     "rows of the first file read to infer column types"),
	TFK_OPT_FLAG(0, "two-pass", &two_pass,
		     "infer types from every row (reads the files twice)"),
	TFK_OPT_FLAG(0, "skip-bad-rows", &skip_bad,
		     "skip and count bad rows instead of failing"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-csv", "[options] [FILE.csv[.gz]...]",
	"Convert CSV files to TFRecord files of tf.Example, one feature per column.",
	"tfk-csv --label species -o data/penguins penguins.csv"
};

struct job {
	char **files;		/* every input file, for inference */
	size_t n_files;
	char **mine;		/* this task's share */
	size_t n_mine;
	int delim;
	struct tfk_csv_table t;
	char **header;		/* the first file's header (for later files) */
	size_t n_header;
	/* the feeder: tokenizing, one item at a time in item order */
	pthread_mutex_t mu;
	pthread_cond_t turn_cv;
	size_t turn;
	size_t next_file;
	struct tfk_csv_reader *r;
	const char *r_path;
	struct tfk_csv_batch *pre;	/* rows already read from r */
	int failed;
	uint64_t bytes_done;	/* input of closed files */
	struct tfk_csv_batch *batches;
	size_t n_batches;
	/* the deliverer (calling thread) */
	struct tfk_shardw *w;
	struct tfk_schema schema;
	uint64_t skipped, warned;
	struct tfk_progress prog;
	int prog_bytes;		/* progress counts KiB of input, else records */
	struct tfk_err err;
};

struct slot {
	struct tfk_csv_batch *b;
	const char *path;
	int rc;
	int end;
	uint64_t offset;	/* input bytes consumed after this batch */
	struct tfk_err err;
};

/* Options -------------------------------------------------------------- */

static int parse_delim(const char *s)
{
	if (!strcmp(s, "tab") || !strcmp(s, "\\t") || !strcmp(s, "\t"))
		return '\t';
	if (strlen(s) != 1 || *s == '"' || *s == '\n' || *s == '\r')
		tfk_cli_usage_error("--delimiter: expected one character (not a "
				    "quote) or 'tab', not '%s'", s);
	return (unsigned char)*s;
}

static int parse_missing(const char *s)
{
	if (!strcmp(s, "fill"))
		return TFK_CSV_FILL;
	if (!strcmp(s, "empty"))
		return TFK_CSV_EMPTY;
	if (!strcmp(s, "error"))
		return TFK_CSV_ERROR;
	tfk_cli_usage_error("--missing: expected fill, empty or error, not '%s'",
			    s);
}

static int parse_kind(const char *s)
{
	if (!strcmp(s, "int64") || !strcmp(s, "int"))
		return TFK_FEAT_INT64;
	if (!strcmp(s, "float") || !strcmp(s, "float32"))
		return TFK_FEAT_FLOAT;
	if (!strcmp(s, "bytes") || !strcmp(s, "string") || !strcmp(s, "str"))
		return TFK_FEAT_BYTES;
	return -1;
}

/* Call fn for each comma-separated item of every occurrence of l. */
static void each_item(const struct tfk_strlist *l, const char *opt,
		      void (*fn)(struct job *, const char *, const char *),
		      struct job *j)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		char *s = strdup(l->v[i]), *save = NULL, *it;

		if (!s)
			tfk_cli_usage_error("out of memory");
		for (it = strtok_r(s, ",", &save); it;
		     it = strtok_r(NULL, ",", &save))
			fn(j, opt, it);
		free(s);
	}
}

/* Columns, for a message: "a, b, c" (shortened). */
static const char *column_list(const struct tfk_csv_table *t)
{
	static char s[256];
	size_t i, k = 0;

	s[0] = '\0';
	for (i = 0; i < t->n_col && k + 8 < sizeof(s); i++)
		k += (size_t)snprintf(s + k, sizeof(s) - k, "%s%s",
				      i ? ", " : "", t->col[i].name);
	if (k >= sizeof(s) - 8)
		strcpy(s + sizeof(s) - 8, ", ...");
	return s;
}

static void config_fail(struct job *j, const char *opt, struct tfk_err *e)
{
	if (e->code == TFK_ENOTFOUND)
		tfk_cli_usage_error("%s: %s in %s (columns: %s)", opt, e->msg,
				    j->files[0], column_list(&j->t));
	tfk_cli_usage_error("%s: %s", opt, e->msg);
}

static void do_select(struct job *j, const char *opt, const char *name)
{
	struct tfk_err e;

	if (tfk_csv_table_select(&j->t, name, &e))
		config_fail(j, opt, &e);
}

static void do_type(struct job *j, const char *opt, const char *item)
{
	char *eq = strrchr(item, '=');
	struct tfk_err e;
	char name[1024];
	int kind;

	if (!eq || eq == item || (size_t)(eq - item) >= sizeof(name))
		tfk_cli_usage_error("%s: expected NAME=TYPE, not '%s'", opt, item);
	kind = parse_kind(eq + 1);
	if (kind < 0)
		tfk_cli_usage_error("%s: type of '%.*s' must be int64, float or "
				    "bytes, not '%s'", opt, (int)(eq - item),
				    item, eq + 1);
	memcpy(name, item, (size_t)(eq - item));
	name[eq - item] = '\0';
	if (tfk_csv_table_set_kind(&j->t, name, kind, &e))
		config_fail(j, opt, &e);
}

static void do_default(struct job *j, const char *opt, const char *item)
{
	const char *eq = strchr(item, '=');
	struct tfk_err e;
	char name[1024];

	if (!eq || eq == item || (size_t)(eq - item) >= sizeof(name))
		tfk_cli_usage_error("%s: expected NAME=VALUE, not '%s'", opt, item);
	memcpy(name, item, (size_t)(eq - item));
	name[eq - item] = '\0';
	if (tfk_csv_table_set_default(&j->t, name, eq + 1, &e))
		config_fail(j, opt, &e);
}

static void do_na(struct job *j, const char *opt, const char *item)
{
	struct tfk_err e;

	if (tfk_csv_table_add_na(&j->t, item, &e))
		config_fail(j, opt, &e);
}

static void do_name(struct job *j, const char *opt, const char *item)
{
	struct tfk_err e;

	if (tfk_csv_table_add_column(&j->t, item, strlen(item), &e))
		config_fail(j, opt, &e);
}

/* Inputs --------------------------------------------------------------- */

/*
 * Open path and read its header row. The first file (first = 1) sets
 * the column names unless --column-names did; later files must have the
 * same header. With --no-header nothing is read here.
 */
static int open_input(struct job *j, const char *path, int first,
		      struct tfk_csv_reader **rp, struct tfk_err *err)
{
	struct tfk_csv_batch h;
	size_t i;
	long n;
	int rc;

	rc = tfk_csv_open(rp, path, j->delim, err);
	if (rc || no_header)
		return rc;
	tfk_csv_batch_init(&h);
	n = tfk_csv_read(*rp, &h, 1, SIZE_MAX, err);
	rc = n < 0 ? (int)n : 0;
	if (n == 0)
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: empty file: no header row "
			      "(use --no-header for files without one)",
			      tfk_csv_path(*rp));
	if (!rc && first) {
		j->n_header = h.row[0].n_cells;
		j->header = tfk_calloc(j->n_header ? j->n_header : 1,
				       sizeof(char *));
		if (!j->header)
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		for (i = 0; !rc && i < j->n_header; i++) {
			size_t len;
			const char *s = tfk_csv_field(&h, 0, i, &len);

			j->header[i] = tfk_malloc(len + 1);
			if (!j->header[i]) {
				rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
				break;
			}
			memcpy(j->header[i], s, len);
			j->header[i][len] = '\0';
			if (!column_names.n)
				rc = tfk_csv_table_add_column(&j->t, s, len, err);
		}
		if (!rc && column_names.n && j->n_header != j->t.n_col)
			rc = tfk_errf(err, TFK_ECORRUPT, "%s:1: the header has %zu "
				      "columns, --column-names gives %zu",
				      tfk_csv_path(*rp), j->n_header, j->t.n_col);
	} else if (!rc) {
		const struct tfk_csv_row *row = &h.row[0];

		if (row->n_cells != j->n_header)
			rc = tfk_errf(err, TFK_ECORRUPT, "%s:%" PRIu64 ": the header "
				      "has %" PRIu32 " columns, %s has %zu",
				      tfk_csv_path(*rp), row->line, row->n_cells,
				      j->files[0], j->n_header);
		for (i = 0; !rc && i < j->n_header; i++) {
			size_t len;
			const char *s = tfk_csv_field(&h, 0, i, &len);

			if (strlen(j->header[i]) != len ||
			    memcmp(j->header[i], s, len))
				rc = tfk_errf(err, TFK_ECORRUPT, "%s:%" PRIu64 ": "
					      "column %zu is '%.*s', in %s it is "
					      "'%s'", tfk_csv_path(*rp), row->line,
					      i + 1, (int)(len < 60 ? len : 60), s,
					      j->files[0], j->header[i]);
		}
	}
	tfk_csv_batch_release(&h);
	if (rc) {
		tfk_csv_close(*rp);
		*rp = NULL;
	}
	return rc;
}

/* Fix the table; its errors are about the first file's columns. */
static int resolve(struct job *j, struct tfk_err *err)
{
	int rc = tfk_csv_table_resolve(&j->t, err);

	if (rc)
		tfk_err_prefix(err, "%s", j->files[0]);
	return rc;
}

/* Set up the table from the first file: names, options, inferred
 * types. May leave j->r open with j->pre holding its first rows. */
static int setup(struct job *j, struct tfk_err *err)
{
	struct tfk_csv_reader *r = NULL;
	struct tfk_csv_batch *pre;
	size_t want, f, i;
	long n;
	int rc;

	each_item(&column_names, "--column-names", do_name, j);
	rc = open_input(j, j->files[0], 1, &r, err);
	if (rc)
		return rc;
	pre = tfk_calloc(1, sizeof(*pre));
	if (!pre) {
		tfk_csv_close(r);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	tfk_csv_batch_init(pre);
	j->pre = pre;
	want = (size_t)infer_rows;
	if (no_header && !column_names.n && want == 0)
		want = 1;	/* to count the columns */
	if (two_pass && want < BATCH_ROWS)
		want = BATCH_ROWS;
	n = tfk_csv_read(r, pre, want, SIZE_MAX, err);
	if (n < 0) {
		tfk_csv_close(r);
		return (int)n;
	}
	if (no_header && !column_names.n) {
		char name[32];

		if (n == 0) {
			rc = tfk_errf(err, TFK_ECORRUPT, "%s: empty file: cannot "
				      "count columns (give --column-names)",
				      tfk_csv_path(r));
			tfk_csv_close(r);
			return rc;
		}
		for (i = 0; i < pre->row[0].n_cells; i++) {
			snprintf(name, sizeof(name), "c%zu", i);
			if ((rc = tfk_csv_table_add_column(&j->t, name,
							   strlen(name), err))) {
				tfk_csv_close(r);
				return rc;
			}
		}
	}
	if (no_header)
		j->n_header = j->t.n_col;
	each_item(&select_columns, "--select-columns", do_select, j);
	if (label) {
		struct tfk_err e;

		if (tfk_csv_table_set_label(&j->t, label, label_name, &e))
			config_fail(j, "--label", &e);
	}
	each_item(&column_types, "--column-types", do_type, j);
	each_item(&defaults_arg, "--defaults", do_default, j);
	each_item(&na_values, "--na-values", do_na, j);
	j->t.missing = parse_missing(missing_arg);

	if (!two_pass) {
		if (infer_rows > 0)
			tfk_csv_table_observe(&j->t, pre);
		if (j->n_mine && j->mine[0] == j->files[0]) {
			j->r = r;	/* go on from here */
			j->r_path = j->files[0];
			j->next_file = 1;
		} else {
			tfk_csv_close(r);
			tfk_csv_batch_reset(pre);
		}
		return resolve(j, err);
	}

	/* --two-pass: every row of every file, then start again */
	for (f = 0;;) {
		tfk_csv_table_observe(&j->t, pre);
		tfk_csv_batch_reset(pre);
		n = tfk_csv_read(r, pre, BATCH_ROWS, BATCH_BYTES, err);
		if (n < 0) {
			tfk_csv_close(r);
			return (int)n;
		}
		if (n > 0)
			continue;
		tfk_csv_close(r);
		r = NULL;
		if (++f == j->n_files)
			break;
		if ((rc = open_input(j, j->files[f], 0, &r, err)))
			return rc;
	}
	tfk_csv_batch_reset(pre);
	return resolve(j, err);
}

/* The hint for a value that contradicts an inferred type: the type
 * that would hold it, or, for text, that it may be a missing marker. */
static void add_hint(struct job *j, struct tfk_csv_batch *b,
		     struct tfk_err *err)
{
	const struct tfk_csv_col *c;
	size_t len = strlen(err->msg), n;
	const char *v;

	if (b->bad != TFK_CSV_BAD_VALUE || b->bad_col >= j->t.n_col)
		return;
	c = &j->t.col[b->bad_col];
	if (c->forced)
		return;
	v = tfk_csv_field(b, b->bad_row, b->bad_col, &n);
	if (tfk_csv_classify(v, n) == TFK_FEAT_FLOAT)
		snprintf(err->msg + len, sizeof(err->msg) - len,
			 " (type inferred from the first %ld rows of %s; use "
			 "--two-pass or --column-types '%.60s=float')",
			 infer_rows, j->files[0], c->name);
	else
		snprintf(err->msg + len, sizeof(err->msg) - len,
			 " (type inferred from the first %ld rows of %s; use "
			 "--two-pass or --column-types '%.60s=bytes', or "
			 "--na-values for a missing-value marker)",
			 infer_rows, j->files[0], c->name);
}

/* Conversion ----------------------------------------------------------- */

/* Tokenize the next batch into s->b (j->mu held, our turn). */
static void feed(struct job *j, struct slot *s)
{
	for (;;) {
		long n;

		if (!j->r) {
			if (j->next_file == j->n_mine) {
				s->end = 1;
				return;
			}
			j->r_path = j->mine[j->next_file++];
			s->rc = open_input(j, j->r_path, 0, &j->r, &s->err);
			if (s->rc)
				break;
		}
		if (j->pre && j->pre->n_row) {
			struct tfk_csv_batch tmp = *s->b;

			*s->b = *j->pre;
			*j->pre = tmp;
			s->path = j->r_path;
			break;
		}
		n = tfk_csv_read(j->r, s->b, BATCH_ROWS, BATCH_BYTES, &s->err);
		if (n < 0) {
			s->rc = (int)n;
			break;
		}
		if (n > 0) {
			s->path = j->r_path;
			break;
		}
		j->bytes_done += tfk_csv_offset(j->r);
		tfk_csv_close(j->r);
		j->r = NULL;
	}
	s->offset = j->bytes_done + (j->r ? tfk_csv_offset(j->r) : 0);
	if (s->rc)
		j->failed = 1;
}

static void work(void *ctx, size_t i, void *slot)
{
	struct job *j = ctx;
	struct slot *s = slot;

	s->b = &j->batches[i % j->n_batches];
	pthread_mutex_lock(&j->mu);
	while (j->turn != i)
		pthread_cond_wait(&j->turn_cv, &j->mu);
	tfk_csv_batch_reset(s->b);
	if (j->failed)
		s->end = 1;
	else
		feed(j, s);
	j->turn++;
	pthread_cond_broadcast(&j->turn_cv);
	pthread_mutex_unlock(&j->mu);
	if (!s->rc && !s->end && s->b->n_row)
		s->rc = tfk_csv_encode(&j->t, s->b, s->path, skip_bad, &s->err);
}

static int deliver(void *ctx, size_t i, void *slot)
{
	struct job *j = ctx;
	struct slot *s = slot;
	struct tfk_csv_batch *b = s->b;
	size_t r;
	int rc;

	if (s->rc) {
		add_hint(j, b, &s->err);
		j->err = s->err;
		return 1;
	}
	if (s->end)
		return 2;
	for (r = 0; r < b->n_row; r++) {
		if (!b->rec_len[r])
			continue;
		rc = tfk_shardw_write(j->w, b->out.data + b->rec_off[r],
				      b->rec_len[r], &j->err);
		if (rc)
			return 1;
	}
	if (b->n_row && tfk_schema_merge(&j->schema, &b->stats, &j->err))
		return 1;
	for (r = 0; r < b->n_warn && j->warned < WARN_LIMIT; r++, j->warned++)
		if (!conv.quiet)
			tfk_cli_warn("%s (row skipped)", b->warn[r]);
	j->skipped += b->n_skipped;
	tfk_progress_update(&j->prog, j->prog_bytes ? (s->offset + 1023) >> 10 :
			    tfk_shardw_records(j->w));
	return 0;
}

static void progress_start(struct job *j)
{
	uint64_t total = 0;
	size_t i;

	j->prog_bytes = 1;
	for (i = 0; i < j->n_mine; i++) {
		struct stat st;
		size_t len = strlen(j->mine[i]);

		if (!strcmp(j->mine[i], "-") || stat(j->mine[i], &st) ||
		    !S_ISREG(st.st_mode) ||
		    (len > 3 && !strcmp(j->mine[i] + len - 3, ".gz")))
			j->prog_bytes = 0;
		else
			total += (uint64_t)st.st_size;
	}
	tfk_progress_init(&j->prog, tfk_progress_wanted(conv.progress, conv.quiet),
			  j->prog_bytes ? "KiB" : "records",
			  j->prog_bytes ? (total + 1023) >> 10 : 0);
}

/* mkdir -p of the directories in prefix ("out/train/data": out/train),
 * so -o names a place that need not exist yet. */
static int make_parents(const char *prefix, struct tfk_err *err)
{
	char *d = tfk_strdup(prefix), *s;
	int rc = 0;

	if (!d)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (s = strchr(d + 1, '/'); s && !rc; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(d, 0777) && errno != EEXIST)
			rc = tfk_errf(err, TFK_EIO, "%s: cannot create directory: %s",
				      d, strerror(errno));
		*s = '/';
	}
	tfk_free(d);
	return rc;
}

static int convert(struct job *j, const struct tfk_shardw_opts *so)
{
	int threads = (int)conv.jobs, rc;
	uint64_t recs, bytes;
	char *schema_path;
	long shards;
	size_t i;

	j->n_batches = 2 * (size_t)threads;
	j->batches = tfk_calloc(j->n_batches, sizeof(*j->batches));
	if (!j->batches)
		return tfk_errf(&j->err, TFK_ENOMEM, "out of memory");
	for (i = 0; i < j->n_batches; i++)
		tfk_csv_batch_init(&j->batches[i]);
	if (so->prefix && (rc = make_parents(so->prefix, &j->err)))
		return rc;
	if ((rc = tfk_shardw_open(&j->w, so, &j->err)))
		return rc;
	progress_start(j);
	rc = tfk_pool_run(SIZE_MAX, threads, j->n_batches, sizeof(struct slot),
			  work, deliver, NULL, j);
	tfk_progress_release(&j->prog);
	if (rc != 2) {
		if (rc == TFK_ENOMEM)
			tfk_errf(&j->err, TFK_ENOMEM, "out of memory");
		tfk_shardw_discard(j->w);
		j->w = NULL;
		return TFK_ECORRUPT;
	}
	tfk_csv_table_schema(&j->t, &j->schema);
	schema_path = tfk_conv_schema_path(&conv);
	if (conv.out && strcmp(conv.out, "-") && !schema_path) {
		tfk_shardw_discard(j->w);
		j->w = NULL;
		return tfk_errf(&j->err, TFK_ENOMEM, "out of memory");
	}
	recs = tfk_shardw_records(j->w);
	bytes = tfk_shardw_bytes(j->w);
	shards = tfk_shardw_shards(j->w);
	rc = tfk_shardw_close(j->w, &j->err);
	j->w = NULL;
	if (!rc && schema_path)
		rc = tfk_schema_write(&j->schema, schema_path, &j->err);
	tfk_free(schema_path);
	if (!rc && !conv.quiet)
		tfk_cli_warn("%" PRIu64 " records, %" PRIu64 " bad rows skipped, "
			     "%" PRIu64 " bytes, %s%ld shard%s", recs, j->skipped,
			     bytes, so->prefix ? "" : "stdout, ", shards,
			     shards == 1 ? "" : "s");
	return rc;
}

int main(int argc, char **argv)
{
	static char *stdin_only[] = { "-" };
	struct tfk_shardw_opts so;
	struct job j;
	long shard_i, shard_n;
	size_t i;
	int rc;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	tfk_conv_check(&conv, &so, &shard_i, &shard_n);
	memset(&j, 0, sizeof(j));
	j.delim = parse_delim(delim_arg);
	parse_missing(missing_arg);
	if (infer_rows < 0)
		tfk_cli_usage_error("--infer-rows: expected a count >= 0, not %ld",
				    infer_rows);
	j.files = argc ? argv : stdin_only;
	j.n_files = argc ? (size_t)argc : 1;
	for (i = 0; i < j.n_files; i++)
		if (two_pass && !strcmp(j.files[i], "-"))
			tfk_cli_usage_error("--two-pass reads its input twice: "
					    "give files, not stdin");
	j.mine = tfk_calloc(j.n_files, sizeof(char *));
	if (!j.mine)
		return tfk_cli_fail(&j.err);
	for (i = (size_t)shard_i; i < j.n_files; i += (size_t)shard_n)
		j.mine[j.n_mine++] = j.files[i];
	pthread_mutex_init(&j.mu, NULL);
	pthread_cond_init(&j.turn_cv, NULL);
	tfk_csv_table_init(&j.t);
	tfk_schema_init(&j.schema);

	rc = setup(&j, &j.err);
	if (!rc)
		rc = convert(&j, &so);
	if (rc)
		tfk_cli_fail(&j.err);

	tfk_csv_close(j.r);
	if (j.pre) {
		tfk_csv_batch_release(j.pre);
		tfk_free(j.pre);
	}
	for (i = 0; i < j.n_batches; i++)
		tfk_csv_batch_release(&j.batches[i]);
	tfk_free(j.batches);
	for (i = 0; i < j.n_header; i++)
		tfk_free(j.header ? j.header[i] : NULL);
	tfk_free(j.header);
	tfk_free(j.mine);
	tfk_schema_release(&j.schema);
	tfk_csv_table_release(&j.t);
	pthread_cond_destroy(&j.turn_cv);
	pthread_mutex_destroy(&j.mu);
	free(column_names.v);
	free(select_columns.v);
	free(column_types.v);
	free(defaults_arg.v);
	free(na_values.v);
	return rc ? 1 : 0;
}
