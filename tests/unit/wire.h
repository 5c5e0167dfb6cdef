/*
 * wire.h - protobuf wire bytes from pieces, for the unit tests that feed
 * hand-made messages to our decoders (t-example, t-seqex). Written from
 * the protobuf encoding rules, not from our encoder, so the tests do not
 * check our code with itself.
 *
 *   L(1, C(L(1, S("name")), L(2, feature)))   a map entry
 *
 * Blobs live in one static arena per test program, never freed: a test
 * that exhausts it exits 99.
 */
#ifndef TFK_TEST_WIRE_H
#define TFK_TEST_WIRE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct blob {
	uint8_t *p;
	size_t n;
};

static uint8_t wire_arena[1 << 20];
static size_t wire_arena_used;

static inline struct blob blob_new(size_t n)
{
	struct blob b = { wire_arena + wire_arena_used, n };

	wire_arena_used += n;
	if (wire_arena_used > sizeof(wire_arena)) {
		fprintf(stderr, "test arena exhausted\n");
		exit(99);
	}
	return b;
}

/* Hex digits, spaces ignored. */
static inline struct blob H(const char *hex)
{
	struct blob b = blob_new(strlen(hex) / 2);
	size_t n = 0;
	unsigned v;

	for (; *hex; hex++) {
		if (*hex == ' ')
			continue;
		sscanf(hex, "%2x", &v);
		b.p[n++] = (uint8_t)v;
		hex++;
	}
	b.n = n;
	return b;
}

/* The bytes of s, without its NUL. */
static inline struct blob S(const char *s)
{
	struct blob b = blob_new(strlen(s));

	memcpy(b.p, s, b.n);
	return b;
}

/* A varint. */
static inline struct blob V(uint64_t v)
{
	struct blob b = blob_new(10);
	size_t n = 0;

	while (v >= 0x80) {
		b.p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b.p[n++] = (uint8_t)v;
	b.n = n;
	return b;
}

static inline struct blob cat(size_t k, const struct blob *parts)
{
	struct blob out;
	size_t i, n = 0;

	for (i = 0; i < k; i++)
		n += parts[i].n;
	out = blob_new(n);
	n = 0;
	for (i = 0; i < k; i++) {
		if (parts[i].n)
			memcpy(out.p + n, parts[i].p, parts[i].n);
		n += parts[i].n;
	}
	return out;
}

/* Concatenate blobs: C(a, b, ...). */
#define C(...) cat(sizeof((struct blob[]){ __VA_ARGS__ }) / \
		   sizeof(struct blob), (struct blob[]){ __VA_ARGS__ })

/* A tag: field number and wire type. */
static inline struct blob T(unsigned num, unsigned wt)
{
	return V((uint64_t)num << 3 | wt);
}

/* A length-delimited field. */
static inline struct blob L(unsigned num, struct blob b)
{
	return C(T(num, 2), V(b.n), b);
}

#endif
