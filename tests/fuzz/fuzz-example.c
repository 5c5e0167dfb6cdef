/*
 * fuzz-example.c - the tf.Example, SequenceExample and JSON-line readers
 * on arbitrary bytes.
 *
 * Seeds: tests/fuzz/seeds/fuzz-example/ (Examples with every quirk the
 * decoder handles, SequenceExamples, JSON lines), made by
 * tests/py/tfexample.py.
 *
 * Each input is used three ways:
 *  1. as a serialized Example. When it decodes: every accessor agrees
 *     with the decoder's count, find() finds each name; with an unknown
 *     field appended (so the general walker decodes it, not the
 *     straight-line pass) it decodes to the same description; the
 *     features copied through the
 *     builder decode to the same values; and, when the names are UTF-8
 *     without NULs, the JSON line of it reads back (with the original
 *     kinds as the schema) to the same values, NaN payloads aside.
 *  2. as a serialized SequenceExample: decoded, every step read, and
 *     written as JSON.
 *  3. as a JSON line: when it reads, the Example built decodes.
 * Nothing is written to disk.
 */
#include "example/example.h"
#include "example/exjson.h"
#include "example/seqex.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct tfk_example ex, ex2;
static struct tfk_example_builder b;
static struct tfk_exjson_reader rd;
static struct tfk_seqex sx;
static struct tfk_buf json;
static int ready;

static void setup(void)
{
	tfk_example_init(&ex);
	tfk_example_init(&ex2);
	tfk_exb_init(&b);
	tfk_exjson_reader_init(&rd, NULL, NULL);
	tfk_seqex_init(&sx);
	tfk_buf_init(&json);
	ready = 1;
}

/* Read every value of f; abort when an accessor disagrees with f->n. */
static void read_all(const struct tfk_feat *f)
{
	size_t it = 0, len, k = 0;
	const uint8_t *p;
	float fv[64];
	int64_t iv[64];

	switch (f->kind) {
	case TFK_FEAT_FLOAT: {
		float *all = malloc((f->n + 1) * sizeof(*all));

		if (tfk_feat_floats(f, all, f->n) != (long)f->n ||
		    tfk_feat_floats(f, fv, 64) != (long)f->n)
			abort();
		if (f->n && memcmp(all, fv, (f->n < 64 ? f->n : 64) * 4))
			abort();
		free(all);
		if (tfk_feat_int64s(f, iv, 64) != TFK_EINVAL)
			abort();
		break;
	}
	case TFK_FEAT_INT64: {
		int64_t *all = malloc((f->n + 1) * sizeof(*all));

		if (tfk_feat_int64s(f, all, f->n) != (long)f->n ||
		    tfk_feat_int64s(f, iv, 64) != (long)f->n)
			abort();
		if (f->n && memcmp(all, iv, (f->n < 64 ? f->n : 64) * 8))
			abort();
		free(all);
		break;
	}
	case TFK_FEAT_BYTES:
		while (tfk_feat_bytes_next(f, &it, &p, &len) == 1) {
			volatile uint8_t sink;

			if (len)
				sink = p[len - 1];
			(void)sink;
			k++;
		}
		if (k != f->n)
			abort();
		break;
	default:
		if (f->n || tfk_feat_bytes_next(f, &it, &p, &len))
			abort();
	}
}

/* Same values in a and b (feature order and names too); NaNs equal. */
static int same_values(const struct tfk_feat *a, const struct tfk_feat *c)
{
	size_t i, ia = 0, ic = 0, la, lc;
	const uint8_t *pa, *pc;
	int same = 1;

	if (a->kind != c->kind || a->n != c->n ||
	    a->name_len != c->name_len ||
	    (a->name_len && memcmp(a->name, c->name, a->name_len)))
		return 0;
	if (a->kind == TFK_FEAT_FLOAT) {
		float *x = malloc((a->n + 1) * 4), *y = malloc((a->n + 1) * 4);

		tfk_feat_floats(a, x, a->n);
		tfk_feat_floats(c, y, c->n);
		for (i = 0; i < a->n; i++)
			if (!(isnan(x[i]) && isnan(y[i])) &&
			    memcmp(&x[i], &y[i], 4))
				same = 0;
		free(x);
		free(y);
	} else if (a->kind == TFK_FEAT_INT64) {
		int64_t *x = malloc((a->n + 1) * 8), *y = malloc((a->n + 1) * 8);

		tfk_feat_int64s(a, x, a->n);
		tfk_feat_int64s(c, y, c->n);
		same = !a->n || !memcmp(x, y, a->n * 8);
		free(x);
		free(y);
	} else if (a->kind == TFK_FEAT_BYTES) {
		while (tfk_feat_bytes_next(a, &ia, &pa, &la) == 1) {
			if (tfk_feat_bytes_next(c, &ic, &pc, &lc) != 1 ||
			    la != lc || (la && memcmp(pa, pc, la)))
				return 0;
		}
	}
	return same;
}

static int same_example(const struct tfk_example *a,
			const struct tfk_example *c)
{
	size_t i;

	if (a->n_feat != c->n_feat)
		return 0;
	for (i = 0; i < a->n_feat; i++)
		if (!same_values(&a->feat[i], &c->feat[i]))
			return 0;
	return 1;
}

/*
 * The record with an unknown field appended decodes through the general
 * walker, never the straight-line pass: both must describe every
 * feature identically (same offsets, counts, kinds, packed runs).
 */
static void same_both_ways(const uint8_t *data, size_t size)
{
	static uint8_t *copy;
	static size_t cap;
	struct tfk_err err;
	size_t i;

	if (size + 2 > cap) {
		cap = size + 2;
		copy = realloc(copy, cap);
	}
	memcpy(copy, data, size);
	copy[size] = 5 << 3;	/* field 5, varint 0 */
	copy[size + 1] = 0;
	if (tfk_example_parse(&ex2, copy, size + 2, &err) ||
	    ex2.n_feat != ex.n_feat)
		abort();
	for (i = 0; i < ex.n_feat; i++) {
		const struct tfk_feat *a = &ex.feat[i], *c = &ex2.feat[i];

		/* merged values live in each example's scratch: skip */
		if (a->body_len && (a->body < data || a->body >= data + size))
			continue;
		if ((a->name_len && (const uint8_t *)a->name - data !=
				    (const uint8_t *)c->name - copy) ||
		    a->name_len != c->name_len || a->kind != c->kind ||
		    a->n != c->n || a->body_len != c->body_len ||
		    (a->body_len && a->body - data != c->body - copy) ||
		    !a->packed != !c->packed ||
		    (a->packed && a->packed - data != c->packed - copy))
			abort();
	}
}

/* The schema for the JSON round trip: the original kinds. */
static int orig_kind(void *ctx, const char *name)
{
	const struct tfk_feat *f = tfk_example_find(ctx, name);

	return f ? f->kind : TFK_FEAT_NONE;
}

static void as_example(const uint8_t *data, size_t size)
{
	struct tfk_err err;
	const uint8_t *p;
	size_t i, n;
	int names_ok = 1;

	if (tfk_example_parse(&ex, data, size, &err)) {
		if (ex.n_feat)
			abort();
		return;
	}
	same_both_ways(data, size);
	tfk_exb_reset(&b);
	for (i = 0; i < ex.n_feat; i++) {
		const struct tfk_feat *f = &ex.feat[i];

		read_all(f);
		if (tfk_example_findn(&ex, f->name, f->name_len) != f)
			abort();
		tfk_exb_add_feat(&b, f);
		names_ok &= tfk_utf8_valid((const uint8_t *)f->name,
					   f->name_len) &&
			    !memchr(f->name, 0, f->name_len);
	}
	/* copied through the builder: the same values */
	if (tfk_exb_finish(&b, &p, &n, &err) ||
	    tfk_example_parse(&ex2, p, n, &err) || !same_example(&ex, &ex2))
		abort();
	/* through JSON and back */
	tfk_buf_reset(&json);
	if (tfk_exjson_write(&ex, &json, &err)) {
		if (names_ok)
			abort();
		return;
	}
	if (!names_ok)
		return;
	rd.kind = orig_kind;
	rd.kind_ctx = &ex;
	tfk_exb_reset(&b);
	if (tfk_exjson_read_line(&rd, (const char *)json.data, json.len, &b,
				 &err) ||
	    tfk_exb_finish(&b, &p, &n, &err) ||
	    tfk_example_parse(&ex2, p, n, &err) || !same_example(&ex, &ex2))
		abort();
}

static void as_seqex(const uint8_t *data, size_t size)
{
	struct tfk_err err;
	size_t i, j;

	if (tfk_seqex_parse(&sx, data, size, &err))
		return;
	for (i = 0; i < sx.context.n_feat; i++)
		read_all(&sx.context.feat[i]);
	for (i = 0; i < sx.n_lists; i++) {
		const struct tfk_seqlist *l = &sx.lists[i];

		if (l->first + l->n > sx.n_steps)
			abort();
		for (j = 0; j < l->n; j++)
			read_all(tfk_seqex_step(&sx, l, j));
	}
	tfk_buf_reset(&json);
	tfk_seqex_write_json(&sx, &json, &err);
}

static void as_json(const uint8_t *data, size_t size)
{
	struct tfk_err err;
	const uint8_t *p;
	size_t n;

	rd.kind = NULL;
	tfk_exb_reset(&b);
	if (tfk_exjson_read_line(&rd, (const char *)data, size, &b, &err))
		return;
	if (tfk_exb_finish(&b, &p, &n, &err) ||
	    tfk_example_parse(&ex2, p, n, &err))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!ready)
		setup();
	as_example(data, size);
	as_seqex(data, size);
	as_json(data, size);
	return 0;
}
