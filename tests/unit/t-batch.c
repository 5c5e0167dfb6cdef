/*
 * t-batch.c - batched records: exact bytes of a small batch written by
 * hand from example.proto's field numbers, the description of fixed,
 * ragged and padded features, rows in any order, unpacked inputs
 * re-encoded packed, _batch/order, the errors of both directions with
 * the row at fault, and failed allocations at every step. Expected
 * bytes were checked with tests/py/tfexample.py (ld, varint).
 */
#include "data/batch.h"
#include "example/example.h"
#include "util/alloc.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *unhex(const char *hex, size_t *n)
{
	static uint8_t out[4][1024];
	static int k;
	size_t m = 0;
	unsigned v;

	k = (k + 1) % 4;
	for (; *hex; hex++) {
		if (*hex == ' ')
			continue;
		sscanf(hex, "%2x", &v);
		out[k][m++] = (uint8_t)v;
		hex++;
	}
	*n = m;
	return out[k];
}

/* Decode rows[i] from builder output kept in bufs[i]. */
struct rows {
	struct tfk_example ex[8];
	uint8_t *bytes[8];
	size_t n;
};

static void rows_init(struct rows *r)
{
	size_t i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < 8; i++)
		tfk_example_init(&r->ex[i]);
}

static void rows_release(struct rows *r)
{
	size_t i;

	for (i = 0; i < 8; i++) {
		tfk_example_release(&r->ex[i]);
		free(r->bytes[i]);
	}
}

static void rows_add(struct rows *r, const uint8_t *p, size_t len)
{
	struct tfk_err err;

	r->bytes[r->n] = malloc(len + 1);
	memcpy(r->bytes[r->n], p, len);
	if (tfk_example_parse(&r->ex[r->n], r->bytes[r->n], len, &err))
		tap_diag("row %zu: %s", r->n, err.msg);
	r->n++;
}

static void rows_add_b(struct rows *r, struct tfk_example_builder *b)
{
	const uint8_t *p;
	size_t len;
	struct tfk_err err;

	tfk_exb_finish(b, &p, &len, &err);
	rows_add(r, p, len);
	tfk_exb_reset(b);
}

static void exact_bytes(void)
{
	struct tfk_example_builder b;
	struct tfk_batcher bt;
	struct rows r;
	struct tfk_err err;
	const uint8_t *p;
	size_t len, bad, wn;
	int64_t v1 = 1, v2 = 2;
	const uint8_t *want;

	tfk_exb_init(&b);
	rows_init(&r);
	tfk_batcher_init(&bt);
	tfk_exb_add_int64s(&b, "a", &v1, 1);
	rows_add_b(&r, &b);
	tfk_exb_add_int64s(&b, "a", &v2, 1);
	rows_add_b(&r, &b);
	is_int(tfk_batch_build(&bt, r.ex, 2, &p, &len, &bad, &err), 0,
	       "two rows of a: int64[1]");
	/* Example { features { feature { key: "_batch" value { int64_list
	 * { value: 2 } } } feature { key: "a" value { int64_list { value:
	 * [1, 2] } } } } }, packed, by hand */
	want = unhex("0a 1e"
		     " 0a 0f 0a 06 5f 62 61 74 63 68 12 05 1a 03 0a 01 02"
		     " 0a 0b 0a 01 61 12 06 1a 04 0a 02 01 02", &wn);
	is_mem(p, len, want, wn, "batched bytes exactly");

	/* A ragged float row and bytes with padding */
	tfk_batcher_release(&bt);
	tfk_batcher_init(&bt);
	is_int(tfk_batcher_pad(&bt, "s", "Z", &err), 0, "pad s=Z");
	rows_release(&r);
	rows_init(&r);
	{
		float f1[2] = { 1.0f, 2.0f }, f2[1] = { 3.0f };

		tfk_exb_add_floats(&b, "f", f1, 2);
		tfk_exb_add_bytes1(&b, "s", "x", 1);
		rows_add_b(&r, &b);
		tfk_exb_add_floats(&b, "f", f2, 1);
		tfk_exb_add_bytes(&b, "s", NULL, NULL, 0);
		rows_add_b(&r, &b);
	}
	is_int(tfk_batch_build(&bt, r.ex, 2, &p, &len, &bad, &err), 0,
	       "ragged floats, padded bytes");
	{
		static const char *hexes =
			"0a 69"
			" 0a 0f 0a 06 5f 62 61 74 63 68 12 05 1a 03 0a 01 02"
			" 0a 15 0a 01 66 12 10 12 0e 0a 0c"
			" 00 00 80 3f 00 00 00 40 00 00 40 40"
			/* f/row_lengths: int64 [2, 1] */
			" 0a 17 0a 0d 66 2f 72 6f 77 5f 6c 65 6e 67 74 68 73"
			" 12 06 1a 04 0a 02 02 01"
			/* s: bytes ["x", "Z"] */
			" 0a 0d 0a 01 73 12 08 0a 06 0a 01 78 0a 01 5a"
			/* s/row_lengths: int64 [1, 0] */
			" 0a 17 0a 0d 73 2f 72 6f 77 5f 6c 65 6e 67 74 68 73"
			" 12 06 1a 04 0a 02 01 00";

		want = unhex(hexes, &wn);
		is_mem(p, len, want, wn, "ragged and padded bytes exactly");
	}
	tfk_batcher_release(&bt);
	rows_release(&r);
	tfk_exb_release(&b);
}

static void describe(void)
{
	struct tfk_example_builder b;
	struct tfk_batcher bt;
	struct tfk_batch d;
	struct rows r;
	struct tfk_err err;
	const uint8_t *p, *q;
	uint8_t *copy;
	size_t len, qlen, bad, i;
	int64_t ids[3] = { 10, 20, 30 }, tok[6] = { -1, 5, 6, 7, 8, 9 };
	size_t ntok[3] = { 1, 0, 3 };
	float emb[6] = { 0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f };
	size_t rowlen[3];

	tfk_exb_init(&b);
	rows_init(&r);
	tfk_batcher_init(&bt);
	tfk_batch_init(&d);
	for (i = 0; i < 3; i++) {
		size_t off = i == 0 ? 0 : 1;

		tfk_exb_add_int64s(&b, "id", &ids[i], 1);
		tfk_exb_add_int64s(&b, "tok", tok + off, ntok[i]);
		tfk_exb_add_floats(&b, "emb", emb + 2 * i, 2);
		tfk_exb_add_none(&b, "nk");
		tfk_exb_add_int64s(&b, "pad", tok, i + 1);
		rows_add_b(&r, &b);
	}
	is_int(tfk_batcher_pad(&bt, "pad", "-9", &err), 0, "pad pad=-9");
	tfk_batcher_pad_to(&bt, 4);
	is_int(tfk_batch_build(&bt, r.ex, 3, &p, &len, &bad, &err), 0,
	       "three rows");
	copy = malloc(len);
	memcpy(copy, p, len);
	is_int(tfk_batch_parse(&d, copy, len, &err), 0, "parsed back");
	is_int(d.n_rows, 3, "3 rows");
	is_int(d.n_feat, 5, "5 data features");
	is_mem(d.feat[0].name, d.feat[0].name_len, "id", 2, "first: id");
	is_int(d.feat[0].layout, TFK_BATCH_FIXED, "id fixed");
	is_int(d.feat[0].row_len, 1, "id: 1 per row");
	ok(d.feat[0].row_lengths == NULL, "id: no row lengths");
	is_mem(d.feat[1].name, d.feat[1].name_len, "tok", 3, "then tok");
	is_int(d.feat[1].layout, TFK_BATCH_RAGGED, "tok ragged");
	is_int(d.feat[1].n_values, 4, "tok: 4 values");
	ok(d.feat[1].row_lengths && d.feat[1].row_lengths[0] == 1 &&
	   d.feat[1].row_lengths[1] == 0 && d.feat[1].row_lengths[2] == 3,
	   "tok: row lengths 1 0 3");
	is_int(d.feat[2].layout, TFK_BATCH_FIXED, "emb fixed");
	is_int(d.feat[2].row_len, 2, "emb: 2 per row");
	is_int(d.feat[2].kind, TFK_FEAT_FLOAT, "emb float");
	is_int(d.feat[3].kind, TFK_FEAT_NONE, "nk: no kind");
	is_int(d.feat[3].n_values, 0, "nk: no values");
	is_int(d.feat[4].layout, TFK_BATCH_PADDED, "pad padded");
	is_int(d.feat[4].row_len, 4, "pad: to 4");
	is_int(d.feat[4].n_values, 12, "pad: 12 slots");
	{
		int64_t v[12];
		static const int64_t want[12] = { -1, -9, -9, -9, -1, 5, -9,
						  -9, -1, 5, 6, -9 };

		is_int(tfk_feat_int64s(d.feat[4].values, v, 12), 12,
		       "pad values");
		is_mem(v, sizeof(v), want, sizeof(want), "pad: -9 fills");
	}
	is_str(tfk_batch_layout_name(d.feat[4].layout), "padded", "name");

	/* Rows back in any order equal the input rows */
	{
		struct tfk_example_builder c;

		tfk_exb_init(&c);
		for (i = 0; i < 3; i++) {
			tfk_exb_reset(&c);
			tfk_exb_add_int64s(&c, "id", &ids[i], 1);
			tfk_exb_add_int64s(&c, "tok",
					   tok + (i == 0 ? 0 : 1), ntok[i]);
			tfk_exb_add_floats(&c, "emb", emb + 2 * i, 2);
			tfk_exb_add_none(&c, "nk");
			tfk_exb_add_int64s(&c, "pad", tok, i + 1);
			tfk_exb_finish(&c, &q, &rowlen[i], &err);
		}
		tfk_exb_release(&c);
	}
	{
		static const size_t order[3] = { 2, 0, 1 };
		size_t k;

		for (k = 0; k < 3; k++) {
			i = order[k];
			is_int(tfk_batch_row(&d, i, &q, &qlen, &err), 0,
			       "row %zu", i);
			is_mem(q, qlen, r.bytes[i], rowlen[i],
			       "row %zu byte for byte", i);
		}
	}
	is_int(tfk_batch_row(&d, 3, &q, &qlen, &err), TFK_EINVAL,
	       "row 3 of 3: EINVAL");
	free(copy);
	tfk_batch_release(&d);
	tfk_batcher_release(&bt);
	rows_release(&r);
	tfk_exb_release(&b);
}

static void unpacked_and_order(void)
{
	struct tfk_batcher bt;
	struct tfk_batch d;
	struct rows r;
	struct tfk_err err;
	const uint8_t *p, *q;
	uint8_t *copy;
	size_t len, qlen, bad, n;
	int64_t v[4];
	float f[2];
	uint8_t *u;

	rows_init(&r);
	tfk_batcher_init(&bt);
	tfk_batch_init(&d);
	/* row 0: a = int64 unpacked [3, 4] (08 03 08 04), b = float
	 * unpacked [1.0] (0d 0000803f) */
	u = unhex("0a 1b 0a 0b 0a 01 61 12 06 1a 04 08 03 08 04"
		  " 0a 0c 0a 01 62 12 07 12 05 0d 00 00 80 3f", &n);
	rows_add(&r, u, n);
	/* row 1: b first, then a, packed */
	u = unhex("0a 1c 0a 0d 0a 01 62 12 08 12 06 0a 04 00 00 00 40"
		  " 0a 0b 0a 01 61 12 06 1a 04 0a 02 05 06", &n);
	rows_add(&r, u, n);
	is_int(tfk_batch_build(&bt, r.ex, 2, &p, &len, &bad, &err), 0,
	       "unpacked row, reordered row");
	copy = malloc(len);
	memcpy(copy, p, len);
	is_int(tfk_batch_parse(&d, copy, len, &err), 0, "parsed");
	is_int(tfk_feat_int64s(d.feat[0].values, v, 4), 4, "a: 4 values");
	ok(v[0] == 3 && v[1] == 4 && v[2] == 5 && v[3] == 6, "a: 3 4 5 6");
	is_int(tfk_feat_floats(d.feat[1].values, f, 2), 2, "b: 2 values");
	ok(f[0] == 1.0f && f[1] == 2.0f, "b: 1 2");
	ok(d.feat[1].values->packed != NULL, "b: written packed");
	ok(d.order != NULL, "_batch/order present");
	is_int(tfk_batch_row(&d, 1, &q, &qlen, &err), 0, "row 1");
	is_mem(q, qlen, r.bytes[1], n, "row 1 (b before a) byte for byte");
	is_int(tfk_batch_row(&d, 0, &q, &qlen, &err), 0, "row 0");
	u = unhex("0a 1c 0a 0b 0a 01 61 12 06 1a 04 0a 02 03 04"
		  " 0a 0d 0a 01 62 12 08 12 06 0a 04 00 00 80 3f", &n);
	is_mem(q, qlen, u, n, "row 0 comes back packed");
	free(copy);
	tfk_batch_release(&d);
	tfk_batcher_release(&bt);
	rows_release(&r);
}

static void errors(void)
{
	struct tfk_example_builder b;
	struct tfk_batcher bt;
	struct rows r;
	struct tfk_example two[2];
	struct tfk_err err;
	const uint8_t *p;
	size_t len, bad;
	int64_t one = 1;
	float x = 1;

	tfk_exb_init(&b);
	rows_init(&r);
	tfk_batcher_init(&bt);
	tfk_exb_add_int64s(&b, "a", &one, 1);
	rows_add_b(&r, &b);
	tfk_exb_add_int64s(&b, "a", &one, 1);
	rows_add_b(&r, &b);
	tfk_exb_add_floats(&b, "a", &x, 1);
	rows_add_b(&r, &b);
	tfk_exb_add_int64s(&b, "a", &one, 1);
	tfk_exb_add_int64s(&b, "z", &one, 1);
	rows_add_b(&r, &b);
	rows_add_b(&r, &b);			/* no features */
	tfk_exb_add_int64s(&b, "_batch", &one, 1);
	rows_add_b(&r, &b);

	is_int(tfk_batch_build(&bt, r.ex, 0, &p, &len, &bad, &err),
	       TFK_EINVAL, "no rows");
	is_int(tfk_batch_build(&bt, r.ex, 3, &p, &len, &bad, &err),
	       TFK_EINVAL, "kind disagreement");
	is_int(bad, 2, "  at row 2");
	is_str(err.msg, "feature \"a\": kind float, the batch's first record "
	       "has int64", "  message");
	is_int(tfk_batch_build(&bt, r.ex + 3, 2, &p, &len, &bad, &err),
	       TFK_EINVAL, "missing feature");
	is_int(bad, 1, "  at row 1");
	is_str(err.msg, "feature \"a\": missing (the batch's first record "
	       "has it)", "  message");
	two[0] = r.ex[0];	/* shallow copies, read only */
	two[1] = r.ex[3];
	is_int(tfk_batch_build(&bt, two, 2, &p, &len, &bad, &err),
	       TFK_EINVAL, "extra feature");
	is_int(bad, 1, "  at row 1");
	is_str(err.msg, "feature \"z\": not in the batch's first record",
	       "  message");
	is_int(tfk_batch_build(&bt, r.ex + 5, 1, &p, &len, &bad, &err),
	       TFK_EINVAL, "reserved _batch");
	is_int(tfk_batch_build(&bt, r.ex + 4, 1, &p, &len, &bad, &err), 0,
	       "a row without features");
	is_mem(p, len, "\x0a\x11\x0a\x0f\x0a\x06_batch\x12\x05\x1a\x03\x0a"
	       "\x01\x01", 19, "  is _batch alone");
	is_int(tfk_batcher_ragged(&bt, "x/row_lengths", &err), TFK_EINVAL,
	       "--ragged of a reserved name");
	is_int(tfk_batcher_pad(&bt, "_batch/order", "1", &err), TFK_EINVAL,
	       "--pad of a reserved name");
	is_int(tfk_batcher_pad(&bt, "a", "q", &err), 0, "pad a=q");
	is_int(tfk_batcher_ragged(&bt, "a", &err), TFK_EINVAL, "a twice");
	is_int(tfk_batch_build(&bt, r.ex, 2, &p, &len, &bad, &err),
	       TFK_EINVAL, "pad q for int64");
	is_str(err.msg, "feature \"a\": pad value \"q\" is not an int64",
	       "  message");
	tfk_batcher_release(&bt);
	rows_release(&r);
	tfk_exb_release(&b);
}

static void parse_errors(void)
{
	struct tfk_batch d;
	struct tfk_err err;
	const uint8_t *u;
	size_t n;

	tfk_batch_init(&d);
	u = unhex("0a 05 0a 03 0a 01", &n);
	ok(tfk_batch_parse(&d, u, n, &err) == TFK_ECORRUPT &&
	   !strncmp(err.msg, "byte ", 5), "truncated Example: %s", err.msg);
	u = unhex("0a 00", &n);
	is_int(tfk_batch_parse(&d, u, n, &err), TFK_ECORRUPT, "no _batch");
	is_str(err.msg, "not a batched record: no _batch feature", "  msg");
	is_int(d.n_rows, 0, "  no rows after an error");
	/* _batch [3], a int64 [1, 2] */
	u = unhex("0a 1e 0a 0f 0a 06 5f 62 61 74 63 68 12 05 1a 03 0a 01 03"
		  " 0a 0b 0a 01 61 12 06 1a 04 0a 02 01 02", &n);
	is_int(tfk_batch_parse(&d, u, n, &err), TFK_ECORRUPT, "2 into 3");
	is_str(err.msg, "feature \"a\": 2 values do not split into 3 rows",
	       "  msg");
	/* _batch [-1] as a 10-byte varint */
	u = unhex("0a 18 0a 16 0a 06 5f 62 61 74 63 68 12 0c 1a 0a 0a 08"
		  " ff ff ff ff ff ff ff ff", &n);
	ok(tfk_batch_parse(&d, u, n, &err) == TFK_ECORRUPT, "bad varint: %s",
	   err.msg);
	tfk_batch_release(&d);
}

static void alloc_failures(void)
{
	struct tfk_example_builder b;
	struct tfk_batcher bt;
	struct tfk_batch d;
	struct rows r;
	struct tfk_err err;
	const uint8_t *p, *q;
	uint8_t *copy = NULL;
	size_t len, qlen, bad, i;
	int64_t t[3] = { 1, 2, 3 };
	long k;
	int rc = 0, nomem = 1, pnomem = 1;

	tfk_exb_init(&b);
	rows_init(&r);
	for (i = 0; i < 3; i++) {
		tfk_exb_add_int64s(&b, "t", t, i + 1);
		tfk_exb_add_bytes1(&b, "s", "abc", i);
		rows_add_b(&r, &b);
	}
	for (k = 0; k < 40; k++) {
		tfk_batcher_init(&bt);
		tfk_alloc_fail_after(k);
		rc = tfk_batcher_pad(&bt, "s", "", &err);
		if (!rc)
			rc = tfk_batch_build(&bt, r.ex, 3, &p, &len, &bad,
					     &err);
		tfk_alloc_fail_after(-1);
		if (rc && rc != TFK_ENOMEM)
			nomem = 0;
		if (!rc) {
			free(copy);
			copy = malloc(len);
			memcpy(copy, p, len);
		}
		tfk_batcher_release(&bt);
		if (!rc)
			break;
	}
	ok(nomem && !rc, "build: each failed allocation is ENOMEM (%ld)", k);
	for (k = 0; copy && k < 40; k++) {
		tfk_batch_init(&d);
		tfk_alloc_fail_after(k);
		rc = tfk_batch_parse(&d, copy, len, &err);
		for (i = 0; !rc && i < 3; i++)
			rc = tfk_batch_row(&d, i, &q, &qlen, &err);
		tfk_alloc_fail_after(-1);
		if (rc && rc != TFK_ENOMEM)
			pnomem = 0;
		tfk_batch_release(&d);
		if (!rc)
			break;
	}
	ok(pnomem && !rc, "parse and rows: each failure is ENOMEM (%ld)", k);
	free(copy);
	rows_release(&r);
	tfk_exb_release(&b);
}

int main(void)
{
	exact_bytes();
	describe();
	unpacked_and_order();
	errors();
	parse_errors();
	alloc_failures();
	return tap_done();
}
