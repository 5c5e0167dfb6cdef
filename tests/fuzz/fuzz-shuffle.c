/*
 * fuzz-shuffle.c - lib/data/shuffle on arbitrary record sizes and
 * settings: the arena compaction of the buffer shuffle and the spill,
 * merge and re-key paths of the full shuffle.
 *
 * FUZZ-SEEDS: fixtures/tfrecord/rust_raw_record/expected.tfrecord
 *
 * Shuffling parses no untrusted bytes; this target checks properties
 * instead, and aborts when one fails. The input's first byte is the
 * buffer size (1..64), the second the seed; the rest is cut into records
 * (a length byte, then up to 255 bytes). Then:
 *  1. the buffer shuffle emits every record exactly once (as a multiset
 *     of byte strings), never position j before input j - N + 1;
 *  2. the full shuffle in memory and with --memory 4096 (spilled, merged
 *     in passes, epoch 1 re-keyed from runs) emit the same bytes, and
 *     each epoch is a permutation of the input.
 * Runs are unlinked temporary files under /tmp; nothing stays.
 */
#include "data/shuffle.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct out {
	uint8_t *bytes;		/* (len byte, data) of each record emitted */
	size_t n, cap;
	size_t count;
};

static int put(void *ctx, const uint8_t *data, size_t len,
	       struct tfk_err *err)
{
	struct out *o = ctx;

	if (len > 255)
		abort();
	if (o->n + len + 1 > o->cap) {
		o->cap = 2 * (o->n + len + 1);
		o->bytes = realloc(o->bytes, o->cap);
		if (!o->bytes)
			abort();
	}
	o->bytes[o->n++] = (uint8_t)len;
	if (len)
		memcpy(o->bytes + o->n, data, len);
	o->n += len;
	o->count++;
	return 0;
}

struct rec {
	const uint8_t *p;
	size_t len;
};

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = n ? memcmp(x->p, y->p, n) : 0;

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* Split out[from..] into records; sorted when sort. */
static size_t split(const uint8_t *p, size_t n, struct rec *r, size_t max)
{
	size_t k = 0, off = 0;

	while (off < n && k < max) {
		size_t len = p[off++];

		if (len > n - off)
			abort();
		r[k].p = p + off;
		r[k].len = len;
		off += len;
		k++;
	}
	return k;
}

static void same_multiset(struct rec *a, struct rec *b, size_t n)
{
	size_t i;

	qsort(a, n, sizeof(*a), cmp_rec);
	qsort(b, n, sizeof(*b), cmp_rec);
	for (i = 0; i < n; i++)
		if (cmp_rec(&a[i], &b[i]))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec in[512], got[512], tmp[512];
	struct out o = { 0 }, mem = { 0 };
	struct tfk_shufbuf *sb;
	struct tfk_shufall *sa;
	struct tfk_err err;
	size_t n = 0, off = 2, i, e, bufn;
	uint64_t seed;

	if (size < 2)
		return 0;
	bufn = 1 + data[0] % 64;
	seed = data[1];
	while (off < size && n < 512) {
		size_t len = data[off++];

		if (len > size - off)
			len = size - off;
		in[n].p = data + off;
		in[n].len = len;
		off += len;
		n++;
	}

	/* 1. buffer shuffle */
	if (tfk_shufbuf_new(&sb, bufn, seed, 0, &err))
		abort();
	for (i = 0; i < n; i++)
		if (tfk_shufbuf_push(sb, in[i].p, in[i].len, put, &o, &err))
			abort();
	if (tfk_shufbuf_drain(sb, put, &o, &err) || o.count != n)
		abort();
	tfk_shufbuf_free(sb);
	split(o.bytes, o.n, got, 512);
	/* Position j holds a record equal to one of in[0 .. j+N-1]. */
	for (i = 0; i < n; i++) {
		size_t j, lim = i + bufn < n ? i + bufn : n, hit = 0;

		for (j = 0; j < lim && !hit; j++)
			hit = !cmp_rec(&got[i], &in[j]);
		if (!hit)
			abort();
	}
	memcpy(tmp, in, n * sizeof(*in));
	same_multiset(tmp, got, n);

	/* 2. full shuffle, in memory and spilled, two epochs each */
	for (i = 0; i < 2; i++) {
		struct out *dst = i ? &o : &mem;

		dst->n = dst->count = 0;
		if (tfk_shufall_new(&sa, seed, i ? 4096 : 1 << 20, "/tmp", &err))
			abort();
		for (e = 0; e < n; e++)
			if (tfk_shufall_add(sa, in[e].p, in[e].len, &err))
				abort();
		for (e = 0; e < 2; e++)
			if (tfk_shufall_emit(sa, e, put, dst, &err))
				abort();
		tfk_shufall_free(sa);
		if (dst->count != 2 * n)
			abort();
	}
	if (o.n != mem.n || (o.n && memcmp(o.bytes, mem.bytes, o.n)))
		abort();
	{
		struct rec both[1024];
		size_t k = split(mem.bytes, mem.n, both, 1024);

		if (k != 2 * n)
			abort();
		memcpy(tmp, in, n * sizeof(*in));
		same_multiset(tmp, both, n);
		memcpy(tmp, in, n * sizeof(*in));
		same_multiset(tmp, both + n, n);
	}
	free(o.bytes);
	free(mem.bytes);
	return 0;
}
