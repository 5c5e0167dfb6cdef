/*
 * tfk-inspect: what TFRecord files of tf.Example (or SequenceExample)
 * records hold: per feature its kind, how many records have it, list
 * lengths, value ranges, byte sizes, content type and a few samples.
 *
 * TensorFlow spreads this over several tools: TFDV's statistics
 * generation (an Apache Beam pipeline) and schema inference, or a loop
 * over tf.data with tf.train.Example.FromString. Here it is one pass of
 * the record reader and the zero-copy decoder, with running statistics
 * (lib/example/schema.c), so it costs little more than reading the
 * bytes. --json prints the schema document that the converters write
 * next to their shards and that tfk-json --schema and tfk-train read;
 * unlike TFDV's schema it says nothing about value domains beyond the
 * ranges seen.
 *
 * Any unreadable record stops the run (exit 1, nothing printed): a
 * table over part of the data would look complete and be wrong.
 *
 * A TensorBoard event file (TFRecords too, of tensorflow.Event, its
 * first record the file_version event) is described instead of refused:
 * its events and its tags by kind, read by lib/format/events, with a
 * pointer to tfk-events for the values. With --json, whose schema
 * document cannot describe one, it is an error that says what it is.
 */
#include "example/example.h"
#include "example/schema.h"
#include "example/seqex.h"
#include "format/events.h"
#include "io/record.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int json, sequence;
static long max_records;

static const struct tfk_opt opts[] = {
	TFK_OPT_FLAG(0, "json", &json,
		     "print the schema document (tfk-json --schema reads it)"),
	TFK_OPT_LONG('n', "records", &max_records, "N",
		     "look at the first N records only (0: all)"),
	TFK_OPT_FLAG(0, "sequence", &sequence,
		     "records are SequenceExamples (context and feature lists)"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-inspect",
	"[options] [FILE...]",
	"show the features of tf.Example records: kinds, counts, lengths, "
	"ranges, content, samples",
	"tfk-inspect train-*.tfrecord; tfk-inspect --json data.tfrecord > "
	"data.schema.json",
};

struct state {
	struct tfk_schema schema;
	struct tfk_example ex;
	struct tfk_seqex sx;
	uint64_t seen;
	long files, event_files;
};

/* Describe the event file path on stdout. 0, or 1 after an error. */
static int describe_events(const char *path)
{
	struct tfk_evr *r;
	struct tfk_ev_event e;
	struct tfk_err err;
	char **tags = NULL, *version = NULL;
	int *kinds = NULL, rc, k, bad = 0;
	size_t n_tags = 0, i, j, per[TFK_EVK_N] = { 0 };
	uint64_t n_ev = 0;

	if (tfk_evr_open(&r, path, &err))
		return tfk_cli_fail(&err);
	while ((rc = tfk_evr_next(r, &e, &err)) != 0) {
		if (rc < 0) {
			bad = tfk_cli_fail(&err);
			if (rc != TFK_ECORRUPT)
				break;
			continue;
		}
		n_ev++;
		if (e.file_version && !version)
			version = strdup(e.file_version);
		for (i = 0; i < e.n_value; i++) {
			for (j = 0; j < n_tags; j++)
				if (kinds[j] == e.value[i].kind &&
				    !strcmp(tags[j], e.value[i].tag))
					break;
			if (j < n_tags)
				continue;
			char **nt = realloc(tags, (n_tags + 1) * sizeof(*nt));
			int *nk = nt ? realloc(kinds, (n_tags + 1) *
					       sizeof(*nk)) : NULL;

			if (nt)
				tags = nt;
			if (nk)
				kinds = nk;
			if (!nt || !nk || !(tags[n_tags] =
					    strdup(e.value[i].tag))) {
				tfk_cli_warn("out of memory");
				bad = 1;
				goto out;
			}
			kinds[n_tags++] = e.value[i].kind;
			per[e.value[i].kind]++;
		}
	}
	printf("%s: TensorBoard event file (file_version \"%s\"): %" PRIu64
	       " events, %zu tags", path, version ? version : "", n_ev, n_tags);
	for (k = 0, j = 0; k < TFK_EVK_N; k++)
		if (per[k])
			printf("%s%zu %s", j++ ? ", " : " (", per[k],
			       tfk_evk_name(k));
	printf("%s\n  tags:", j ? ")" : "");
	for (i = 0; i < n_tags && i < 10; i++)
		printf(" %s", tags[i]);
	printf("%s\n  read them with: tfk-events --list %s\n",
	       n_tags > 10 ? " ..." : "", path);
out:
	for (i = 0; i < n_tags; i++)
		free(tags[i]);
	free(tags);
	free(kinds);
	free(version);
	tfk_evr_close(r);
	return bad;
}

/* 1 when --records is reached. */
static int enough(const struct state *st)
{
	return max_records > 0 && st->seen >= (uint64_t)max_records;
}

static int observe_seqex(struct state *st, const struct tfk_rec *rec,
			 struct tfk_err *err)
{
	size_t i;
	int rc;

	rc = tfk_seqex_parse(&st->sx, rec->data, rec->len, err);
	if (rc == TFK_ECORRUPT)
		tfk_err_prefix(err, "not a SequenceExample");
	if (rc)
		return rc;
	st->schema.sequence = 1;
	for (i = 0; i < st->sx.context.n_feat; i++)
		if ((rc = tfk_schema_observe_feat(&st->schema,
						  &st->sx.context.feat[i], err)))
			return rc;
	for (i = 0; i < st->sx.n_lists; i++) {
		const struct tfk_seqlist *l = &st->sx.lists[i];

		if ((rc = tfk_schema_observe_list(&st->schema, l->name,
						  l->name_len,
						  l->n ? tfk_seqex_step(&st->sx,
									l, 0) :
						  NULL, l->n, err)))
			return rc;
	}
	st->schema.records++;
	return 0;
}

static int inspect_file(struct state *st, const char *path)
{
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	struct tfk_err err;
	int rc;

	if ((rc = tfk_rec_open(&r, path, TFK_COMP_AUTO, 0, &err)))
		return tfk_cli_fail(&err);
	st->files++;
	while (!enough(st) && (rc = tfk_rec_next(r, &rec, &err)) == 1) {
		if (rec.index == 0 && !sequence && tfk_payload_guess(rec.data,
		    rec.len, NULL, NULL) == TFK_PAYLOAD_EVENT) {
			if (json || !strcmp(path, "-")) {
				rc = tfk_errf(&err, TFK_ECORRUPT, "%s: a "
					      "TensorBoard event file, not "
					      "tf.Example records; tfk-events "
					      "--list reads it%s", path, json ?
					      " (--json describes Examples)" :
					      "");
				tfk_rec_close(r);
				return tfk_cli_fail(&err);
			}
			tfk_rec_close(r);
			st->event_files++;
			return describe_events(path);
		}
		if (sequence) {
			rc = observe_seqex(st, &rec, &err);
		} else {
			rc = tfk_example_parse(&st->ex, rec.data, rec.len,
					       &err);
			if (rc == TFK_ECORRUPT)
				tfk_err_prefix(&err, "not an Example");
			if (!rc)
				rc = tfk_schema_observe(&st->schema, &st->ex,
							&err);
		}
		if (rc) {
			tfk_err_prefix(&err, "%s: record %" PRIu64 " at byte %"
				       PRIu64, tfk_rec_path(r), rec.index,
				       rec.off);
			break;
		}
		st->seen++;
	}
	tfk_rec_close(r);
	return rc < 0 ? tfk_cli_fail(&err) : 0;
}

/* The human table ----------------------------------------------------- */

#define NCOL 9

struct table {
	char **cell;		/* rows * NCOL */
	size_t rows, cap;
};

static void add_row(struct table *t, const char *const *v)
{
	size_t i;

	if (t->rows == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->cell = realloc(t->cell, t->cap * NCOL * sizeof(char *));
		if (!t->cell) {
			tfk_cli_warn("out of memory");
			exit(1);
		}
	}
	for (i = 0; i < NCOL; i++) {
		t->cell[t->rows * NCOL + i] = strdup(v[i] ? v[i] : "");
		if (!t->cell[t->rows * NCOL + i]) {
			tfk_cli_warn("out of memory");
			exit(1);
		}
	}
	t->rows++;
}

/* Display width of UTF-8 text: one column per character. */
static size_t width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* Row 0 is the header; a column no data row uses is left out. */
static void print_table(struct table *t)
{
	size_t w[NCOL] = { 0 }, r, c, last;
	int used[NCOL] = { 0 };

	for (r = 0; r < t->rows; r++) {
		for (c = 0; c < NCOL; c++) {
			const char *s = t->cell[r * NCOL + c];

			if (width(s) > w[c])
				w[c] = width(s);
			if (r && s[0])
				used[c] = 1;
		}
	}
	for (r = 0; r < t->rows; r++) {
		for (last = NCOL; last > 0 && (!used[last - 1] ||
					       !t->cell[r * NCOL + last - 1][0]);
		     last--)
			;
		for (c = 0; c < last; c++) {
			const char *s = t->cell[r * NCOL + c];

			if (!used[c])
				continue;
			fputs(s, stdout);
			if (c + 1 < last)
				printf("%*s", (int)(w[c] - width(s) + 2), "");
		}
		putchar('\n');
	}
	for (r = 0; r < t->rows * NCOL; r++)
		free(t->cell[r]);
	free(t->cell);
}

/* "n" when min == max, else "min/mean/max". */
static void fmt_stats(char *s, size_t n, uint64_t min, uint64_t max,
		      double mean)
{
	if (min == max)
		snprintf(s, n, "%" PRIu64, min);
	else
		snprintf(s, n, "%" PRIu64 "/%.4g/%" PRIu64, min, mean, max);
}

/* Feature names may hold anything: show bytes outside printable ASCII
 * and UTF-8 as \xNN so the table stays one line per feature. */
static void fmt_name(struct tfk_buf *b, const struct tfk_schema_feat *f)
{
	size_t i;
	int utf8 = tfk_utf8_valid((const uint8_t *)f->name, f->name_len);

	for (i = 0; i < f->name_len; i++) {
		unsigned char ch = (unsigned char)f->name[i];

		if (ch < 0x20 || ch == 0x7f || (ch >= 0x80 && !utf8) ||
		    ch == '\\')
			tfk_buf_addf(b, "\\x%02x", ch);
		else
			tfk_buf_addc(b, ch);
	}
	tfk_buf_addc(b, '\0');
}

static void feat_row(struct table *t, const struct tfk_schema_feat *f,
		     uint64_t records, int list)
{
	char present[64], steps[64] = "", length[64] = "", values[128] = "",
	     size[64] = "";
	struct tfk_buf name, samples;
	const char *v[NCOL];
	size_t i;

	tfk_buf_init(&name);
	tfk_buf_init(&samples);
	fmt_name(&name, f);
	snprintf(present, sizeof(present), "%" PRIu64 " (%.4g%%)", f->count,
		 records ? 100.0 * (double)f->count / (double)records : 0.0);
	if (list && f->count && f->steps_min <= f->steps_max)
		fmt_stats(steps, sizeof(steps), f->steps_min, f->steps_max,
			  f->steps_sum / (double)f->count);
	if (f->n_len)
		fmt_stats(length, sizeof(length), f->len_min, f->len_max,
			  f->len_sum / (double)f->n_len);
	if (f->has_range && f->kind == TFK_FEAT_INT64 && !f->mixed)
		snprintf(values, sizeof(values), "%" PRId64 " .. %" PRId64,
			 f->imin, f->imax);
	else if (f->has_range)
		snprintf(values, sizeof(values), "%.6g .. %.6g", f->vmin,
			 f->vmax);
	if (f->n_nonfinite) {
		size_t k = strlen(values);

		snprintf(values + k, sizeof(values) - k, "%s%" PRIu64
			 " nan/inf", k ? ", " : "", f->n_nonfinite);
	}
	if (f->kind == TFK_FEAT_BYTES && !f->mixed && f->n_values)
		fmt_stats(size, sizeof(size), f->size_min, f->size_max,
			  f->size_sum / (double)f->n_values);
	for (i = 0; i < f->n_samples; i++) {
		if (i)
			tfk_buf_adds(&samples, ", ");
		tfk_buf_adds(&samples, f->samples[i]);
	}
	tfk_buf_addc(&samples, '\0');
	if (!tfk_buf_ok(&name) || !tfk_buf_ok(&samples)) {
		tfk_cli_warn("out of memory");
		exit(1);
	}
	v[0] = (const char *)name.data;
	v[1] = tfk_schema_kind_name(f);
	v[2] = present;
	v[3] = steps;
	v[4] = length;
	v[5] = values;
	v[6] = size;
	v[7] = f->content;
	v[8] = (const char *)samples.data;
	add_row(t, v);
	tfk_buf_release(&name);
	tfk_buf_release(&samples);
}

static void print_section(const char *title,
			  const struct tfk_schema_feat *feat, size_t n,
			  uint64_t records, int list)
{
	static const char *const head[NCOL] = { "feature", "kind", "present",
		"steps", "length", "values", "bytes", "content", "samples" };
	static const char *const head_list[NCOL] = { "feature list", "kind",
		"present", "steps", "length/step", "values", "bytes",
		"content", "samples" };
	struct table t = { NULL, 0, 0 };
	size_t i;

	if (title)
		printf("\n%s:\n", title);
	if (!n) {
		printf("(no features)\n");
		return;
	}
	add_row(&t, list ? head_list : head);
	for (i = 0; i < n; i++)
		feat_row(&t, &feat[i], records, list);
	print_table(&t);
}

static void print_human(const struct state *st)
{
	const struct tfk_schema *s = &st->schema;

	printf("%" PRIu64 " record%s in %ld file%s", s->records,
	       s->records == 1 ? "" : "s", st->files,
	       st->files == 1 ? "" : "s");
	if (s->sequence) {
		printf(", %zu context feature%s, %zu feature list%s\n",
		       s->n_feat, s->n_feat == 1 ? "" : "s", s->n_lists,
		       s->n_lists == 1 ? "" : "s");
		print_section("context", s->feat, s->n_feat, s->records, 0);
		print_section("feature lists", s->lists, s->n_lists,
			      s->records, 1);
		return;
	}
	printf(", %zu feature%s\n", s->n_feat, s->n_feat == 1 ? "" : "s");
	if (s->n_feat)
		print_section(NULL, s->feat, s->n_feat, s->records, 0);
}

int main(int argc, char **argv)
{
	struct state st;
	int i, rc = 0;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (max_records < 0)
		tfk_cli_usage_error("--records must be 0 (all) or more");
	memset(&st, 0, sizeof(st));
	tfk_schema_init(&st.schema);
	st.schema.sequence = sequence;
	tfk_example_init(&st.ex);
	tfk_seqex_init(&st.sx);
	if (argc == 0)
		rc = inspect_file(&st, "-");
	for (i = 0; i < argc && !rc && !enough(&st); i++)
		rc = inspect_file(&st, argv[i]);
	if (!rc) {
		if (json) {
			struct tfk_buf b;

			tfk_buf_init(&b);
			if (tfk_schema_to_json(&st.schema, &b)) {
				tfk_cli_warn("out of memory");
				rc = 1;
			} else {
				fwrite(b.data, 1, b.len, stdout);
			}
			tfk_buf_release(&b);
		} else if (st.seen || !st.event_files) {
			print_human(&st);
		}
		if (fflush(stdout)) {
			tfk_cli_warn("<stdout>: write error");
			rc = 1;
		}
	}
	tfk_seqex_release(&st.sx);
	tfk_example_release(&st.ex);
	tfk_schema_release(&st.schema);
	return rc;
}
