/*
 * buf.h - growable byte buffer.
 *
 * Used to build records, JSON lines and encoded protobufs without
 * per-item allocation: reset and reuse one buffer per stream. Appends
 * that fail to grow the buffer set a sticky error flag instead of
 * returning a status at every call; check tfk_buf_ok() once at the end.
 */
#ifndef TFK_BUF_H
#define TFK_BUF_H

#include <stddef.h>
#include <stdint.h>

struct tfk_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	int oom;		/* an append failed: contents are incomplete */
};

void tfk_buf_init(struct tfk_buf *b);
void tfk_buf_release(struct tfk_buf *b);
/* Forget the contents, keep the memory; clears the error flag. */
void tfk_buf_reset(struct tfk_buf *b);
/* Make room for n more bytes; returns 0 or TFK_ENOMEM (and sets oom). */
int tfk_buf_reserve(struct tfk_buf *b, size_t n);
/* 1 unless an append ran out of memory since the last reset. */
static inline int tfk_buf_ok(const struct tfk_buf *b) { return !b->oom; }

void tfk_buf_add(struct tfk_buf *b, const void *p, size_t n);
void tfk_buf_addc(struct tfk_buf *b, int c);
void tfk_buf_adds(struct tfk_buf *b, const char *s);
void tfk_buf_addf(struct tfk_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Protobuf base-128 varint. */
void tfk_buf_add_varint(struct tfk_buf *b, uint64_t v);
/* Bytes v takes as a varint: 1 to 10. */
static inline size_t tfk_varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Write v as a varint at o, which has room for tfk_varint_size(v)
 * bytes; returns the byte after it. */
static inline uint8_t *tfk_varint_put(uint8_t *o, uint64_t v)
{
	while (v >= 0x80) {
		*o++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	return o;
}
/* s (n bytes) as a JSON string literal with quotes; bytes must be UTF-8. */
void tfk_buf_add_json_str(struct tfk_buf *b, const char *s, size_t n);
/* Shortest decimal that reads back to the same float / double ("NaN",
 * "Infinity", "-Infinity" for non-finite values, as Python's json). */
void tfk_buf_add_float(struct tfk_buf *b, float v);
void tfk_buf_add_double(struct tfk_buf *b, double v);
/* Standard base64 with padding. */
void tfk_buf_add_base64(struct tfk_buf *b, const uint8_t *p, size_t n);

/* 1 if p[0..n) is valid UTF-8 (no overlongs, no surrogates, at most
 * U+10FFFF). */
int tfk_utf8_valid(const uint8_t *p, size_t n);
/* Length of the longest valid UTF-8 prefix: the offset of the first
 * byte that breaks it, or n when all of p[0..n) is valid. */
size_t tfk_utf8_prefix(const uint8_t *p, size_t n);

#endif
