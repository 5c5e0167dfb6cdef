/*
 * fuzz-csv.c - the CSV tokenizer, number parsers and Example encoder on
 * arbitrary bytes.
 *
 * FUZZ-SEEDS: tests/fuzz/seeds/fuzz-csv/*
 *
 * Each input is tokenized with ',' (and again with ';' when it holds
 * one). Beyond "no crash, no leak":
 *  - reading through a 7-byte window step (every row crosses window
 *    ends) gives the same fields, positions and errors as one window;
 *  - writing the fields back as CSV, every field quoted, and reading
 *    that gives the same fields again;
 *  - every field that tfk_csv_parse_float accepts is the float strtof
 *    makes of it, bit for bit; tfk_csv_parse_int64 agrees with strtoll;
 *  - with the first row as header, rows encode (bad ones skipped) into
 *    Examples that tfk_example_parse reads back with one feature per
 *    selected column, of the column's kind, holding 0 or 1 values.
 */
#include "data/csv.h"
#include "example/example.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Everything a read produced, as one string to compare. */
static char *snapshot(const struct tfk_csv_batch *b, long rc,
		      const struct tfk_err *err, size_t *len)
{
	size_t r, f, n = 64;
	char *s, *q;

	for (r = 0; r < b->n_row; r++)
		for (f = 0; f < b->row[r].n_cells; f++)
			n += b->cell[b->row[r].cell + f].len + 64;
	n += rc < 0 ? strlen(err->msg) : 0;
	q = s = malloc(n);
	if (!s)
		abort();
	for (r = 0; r < b->n_row; r++) {
		const struct tfk_csv_row *row = &b->row[r];

		q += sprintf(q, "R%llu:%u,%u:", (unsigned long long)row->line,
			     row->end_col, row->end_dline);
		for (f = 0; f < row->n_cells; f++) {
			const struct tfk_csv_cell *c = &b->cell[row->cell + f];
			size_t l;
			const char *v = tfk_csv_field(b, r, f, &l);

			q += sprintf(q, "|%u.%u.%zu=", c->dline, c->col, l);
			memcpy(q, v, l);
			q += l;
		}
	}
	if (rc < 0)
		q += sprintf(q, "E%s", err->msg);
	*len = (size_t)(q - s);
	return s;
}

static long read_all(const uint8_t *p, size_t n, int delim, size_t step,
		     struct tfk_csv_batch *b, struct tfk_err *err)
{
	struct tfk_csv_reader *r;
	long got, rc = 0;

	if (tfk_csv_open_mem(&r, "f.csv", p, n, delim, err))
		abort();
	if (step)
		tfk_csv_set_step(r, step);
	while ((got = tfk_csv_read(r, b, 3, SIZE_MAX, err)) > 0)
		;
	if (got < 0)
		rc = got;
	tfk_csv_close(r);
	return rc;
}

/* The fields written back as CSV, every field quoted. */
static uint8_t *requote(const struct tfk_csv_batch *b, int delim, size_t *len)
{
	size_t r, f, i, n = 16;
	uint8_t *s, *q;

	for (r = 0; r < b->n_row; r++)
		for (f = 0; f < b->row[r].n_cells; f++)
			n += 2 * b->cell[b->row[r].cell + f].len + 4;
	q = s = malloc(n);
	if (!s)
		abort();
	for (r = 0; r < b->n_row; r++) {
		for (f = 0; f < b->row[r].n_cells; f++) {
			size_t l;
			const char *v = tfk_csv_field(b, r, f, &l);

			if (f)
				*q++ = (uint8_t)delim;
			*q++ = '"';
			for (i = 0; i < l; i++) {
				if (v[i] == '"')
					*q++ = '"';
				*q++ = (uint8_t)v[i];
			}
			*q++ = '"';
		}
		*q++ = '\r';
		*q++ = '\n';
	}
	*len = (size_t)(q - s);
	return s;
}

/* Fields only (positions differ after requoting). */
static int same_fields(const struct tfk_csv_batch *a,
		       const struct tfk_csv_batch *b)
{
	size_t r, f;

	if (a->n_row != b->n_row)
		return 0;
	for (r = 0; r < a->n_row; r++) {
		if (a->row[r].n_cells != b->row[r].n_cells)
			return 0;
		for (f = 0; f < a->row[r].n_cells; f++) {
			size_t la, lb;
			const char *va = tfk_csv_field(a, r, f, &la);
			const char *vb = tfk_csv_field(b, r, f, &lb);

			if (la != lb || memcmp(va, vb, la))
				return 0;
		}
	}
	return 1;
}

static void check_numbers(const char *v, size_t l)
{
	char s[128];
	float f;
	int64_t i;

	if (l >= sizeof(s) || memchr(v, '\0', l))
		return;
	memcpy(s, v, l);
	s[l] = '\0';
	if (!tfk_csv_parse_float(v, l, &f)) {
		float want = strtof(s, NULL);

		if (isnan(want) ? !isnan(f) : memcmp(&f, &want, sizeof(f)))
			abort();
	}
	if (!tfk_csv_parse_int64(v, l, &i)) {
		long long want;

		errno = 0;
		want = strtoll(s, NULL, 10);
		if (errno || want != i)
			abort();
	}
}

static void encode(struct tfk_csv_batch *b, int missing)
{
	struct tfk_csv_table t;
	struct tfk_csv_batch rows;
	struct tfk_example ex;
	struct tfk_err err;
	size_t f, r, k;

	if (b->n_row < 1)
		return;
	tfk_csv_table_init(&t);
	for (f = 0; f < b->row[0].n_cells; f++) {
		size_t l;
		const char *v = tfk_csv_field(b, 0, f, &l);

		if (tfk_csv_table_add_column(&t, v, l, &err))
			goto out;
	}
	t.missing = missing;
	tfk_csv_table_add_na(&t, "NA", &err);
	/* rows after the header, as a view into b */
	rows = *b;
	rows.row++;
	rows.n_row--;
	tfk_csv_table_observe(&t, &rows);
	if (tfk_csv_table_resolve(&t, &err))
		goto out;
	tfk_csv_batch_init(&rows);
	rows.text = b->text;
	rows.cell = b->cell;
	rows.row = b->row + 1;
	rows.n_row = b->n_row - 1;
	if (tfk_csv_encode(&t, &rows, "f.csv", 1, &err))
		abort();
	if (rows.n_written + rows.n_skipped != rows.n_row ||
	    rows.stats.records != rows.n_written)
		abort();
	tfk_example_init(&ex);
	for (r = 0; r < rows.n_row; r++) {
		if (!rows.rec_len[r])
			continue;
		if (tfk_example_parse(&ex, rows.out.data + rows.rec_off[r],
				      rows.rec_len[r], &err) ||
		    ex.n_feat != t.n_sel)
			abort();
		for (k = 0; k < t.n_sel; k++) {
			const struct tfk_csv_col *c = &t.col[t.sel[k]];

			if (ex.feat[k].kind != c->kind || ex.feat[k].n > 1 ||
			    ex.feat[k].name_len != strlen(c->feat) ||
			    memcmp(ex.feat[k].name, c->feat, ex.feat[k].name_len))
				abort();
		}
	}
	tfk_example_release(&ex);
	/* the batch's own arrays belong to b: release only what encode made */
	rows.text.data = NULL;
	rows.cell = NULL;
	rows.row = NULL;
	tfk_csv_batch_release(&rows);
out:
	tfk_csv_table_release(&t);
}

static void one(const uint8_t *data, size_t size, int delim)
{
	struct tfk_csv_batch a, b, c;
	struct tfk_err ea, eb, ec;
	long ra, rb, rc;
	char *sa, *sb;
	size_t la, lb, lq, r, f;
	uint8_t *q;

	tfk_csv_batch_init(&a);
	tfk_csv_batch_init(&b);
	tfk_csv_batch_init(&c);
	ra = read_all(data, size, delim, 0, &a, &ea);
	rb = read_all(data, size, delim, 7, &b, &eb);
	sa = snapshot(&a, ra, &ea, &la);
	sb = snapshot(&b, rb, &eb, &lb);
	if (ra != rb || la != lb || memcmp(sa, sb, la))
		abort();
	free(sa);
	free(sb);

	q = requote(&a, delim, &lq);
	rc = read_all(q, lq, delim, 0, &c, &ec);
	/* rows of one empty field come back as "" rows, not skipped */
	if (rc < 0 || !same_fields(&a, &c))
		abort();
	free(q);

	for (r = 0; r < a.n_row; r++)
		for (f = 0; f < a.row[r].n_cells; f++) {
			size_t l;
			const char *v = tfk_csv_field(&a, r, f, &l);

			check_numbers(v, l);
		}
	encode(&a, size ? data[0] % 3 : 0);
	tfk_csv_batch_release(&a);
	tfk_csv_batch_release(&b);
	tfk_csv_batch_release(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one(data, size, ',');
	if (memchr(data, ';', size))
		one(data, size, ';');
	return 0;
}
