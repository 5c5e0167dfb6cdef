/*
 * fuzz-batch.c - tfk-unbatch's reader (lib/data/batch) on arbitrary
 * bytes, and tfk-batch's writer on whatever decodes as an Example.
 *
 * Seeds: tests/fuzz/seeds/fuzz-batch/ (batched records from tfk-batch:
 * fixed, ragged, padded, with _batch/order, bytes, no-kind features).
 *
 * Each input is used two ways:
 *  1. as a batched record. When it parses, every row serializes and
 *     decodes as an Example with the batch's features; when there are
 *     few rows, those rows batched again and split again give the same
 *     rows byte for byte (batch is the inverse of unbatch on its image).
 *  2. as a plain Example. When it decodes and holds no reserved name,
 *     three copies of it batch (plain, and padding its first feature),
 *     the batch parses, and its three rows are identical and stable
 *     under another batch/unbatch round.
 * Nothing is written to disk.
 */
#include "data/batch.h"
#include "example/example.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 64

static struct tfk_batch bt, bt2;
static struct tfk_batcher bb, bpad;
static struct tfk_example rows[MAX_ROWS], ex, copies[3];
static struct tfk_buf keep, again, batch;
static size_t off[MAX_ROWS + 1];
static int ready;

static void setup(void)
{
	size_t i;

	tfk_batch_init(&bt);
	tfk_batch_init(&bt2);
	tfk_batcher_init(&bb);
	tfk_batcher_init(&bpad);
	for (i = 0; i < MAX_ROWS; i++)
		tfk_example_init(&rows[i]);
	tfk_example_init(&ex);
	tfk_buf_init(&keep);
	tfk_buf_init(&again);
	tfk_buf_init(&batch);
	ready = 1;
}

/* Rows of the batch in b, appended to out with off[] (n <= MAX_ROWS). */
static void rows_of(struct tfk_batch *b, size_t n, struct tfk_buf *out)
{
	struct tfk_err err;
	const uint8_t *p;
	size_t i, len;

	tfk_buf_reset(out);
	for (i = 0; i < n; i++) {
		if (tfk_batch_row(b, i, &p, &len, &err))
			abort();
		off[i] = out->len;
		tfk_buf_add(out, p, len);
	}
	off[n] = out->len;
	if (!tfk_buf_ok(out))
		abort();
}

/* Batch the n rows held in src (at off[]), split again into dst. */
static void round_trip(struct tfk_batcher *w, const struct tfk_buf *src,
		       size_t n, struct tfk_buf *dst)
{
	struct tfk_err err;
	const uint8_t *p;
	size_t i, len, bad;

	for (i = 0; i < n; i++)
		if (tfk_example_parse(&rows[i], src->data + off[i],
				      off[i + 1] - off[i], &err))
			abort();
	if (tfk_batch_build(w, rows, n, &p, &len, &bad, &err))
		abort();
	tfk_buf_reset(&batch);
	tfk_buf_add(&batch, p, len);
	if (!tfk_buf_ok(&batch) ||
	    tfk_batch_parse(&bt2, batch.data, batch.len, &err) ||
	    bt2.n_rows != n)
		abort();
	rows_of(&bt2, n, dst);
}

static void as_batch(const uint8_t *data, size_t size)
{
	struct tfk_err err;
	const uint8_t *p;
	size_t i, len;

	if (tfk_batch_parse(&bt, data, size, &err))
		return;
	/* A batch of 2^31 empty rows is legal; look at the first ones. */
	for (i = 0; i < bt.n_rows && i < 4 * MAX_ROWS; i++) {
		if (tfk_batch_row(&bt, i, &p, &len, &err))
			abort();
		if (tfk_example_parse(&ex, p, len, &err) ||
		    ex.n_feat != bt.n_feat)
			abort();
	}
	if (bt.n_rows > MAX_ROWS)
		return;
	rows_of(&bt, bt.n_rows, &keep);
	round_trip(&bb, &keep, bt.n_rows, &again);
	if (again.len != keep.len || memcmp(again.data, keep.data, keep.len))
		abort();
}

static void as_example(const uint8_t *data, size_t size)
{
	struct tfk_err err;
	struct tfk_batcher *w = &bb;
	const uint8_t *p;
	size_t i, len, bad, n;
	char name[64];

	if (tfk_example_parse(&ex, data, size, &err))
		return;
	for (i = 0; i < ex.n_feat; i++) {
		const char *s = ex.feat[i].name;
		size_t l = ex.feat[i].name_len;

		if ((l == 6 && !memcmp(s, "_batch", 6)) ||
		    (l == 12 && !memcmp(s, "_batch/order", 12)) ||
		    (l >= 12 && !memcmp(s + l - 12, "/row_lengths", 12)))
			return;
	}
	/* Pad the first feature when its name can be a C string. */
	if (ex.n_feat && ex.feat[0].name_len < sizeof(name) &&
	    !memchr(ex.feat[0].name, 0, ex.feat[0].name_len) &&
	    (size & 1)) {
		tfk_batcher_release(&bpad);
		tfk_batcher_init(&bpad);
		memcpy(name, ex.feat[0].name, ex.feat[0].name_len);
		name[ex.feat[0].name_len] = 0;
		if (tfk_batcher_pad(&bpad, name, "7", &err))
			abort();
		tfk_batcher_pad_to(&bpad, size & 2 ? 0 : ex.feat[0].n + 2);
		w = &bpad;
	}
	for (i = 0; i < 3; i++)
		copies[i] = ex;	/* shallow copies, read only */
	/* pad values "7" suit every kind and the pad length fits: no
	 * error is possible */
	if (tfk_batch_build(w, copies, 3, &p, &len, &bad, &err))
		abort();
	tfk_buf_reset(&batch);
	tfk_buf_add(&batch, p, len);
	if (!tfk_buf_ok(&batch) ||
	    tfk_batch_parse(&bt, batch.data, batch.len, &err) ||
	    bt.n_rows != 3 || bt.n_feat != ex.n_feat)
		abort();
	rows_of(&bt, 3, &keep);
	n = off[1];
	if (off[2] - off[1] != n || off[3] - off[2] != n ||
	    memcmp(keep.data, keep.data + n, n) ||
	    memcmp(keep.data, keep.data + 2 * n, n))
		abort();
	round_trip(&bb, &keep, 3, &again);
	if (again.len != keep.len || memcmp(again.data, keep.data, keep.len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready)
		setup();
	as_batch(data, size);
	as_example(data, size);
	return 0;
}
