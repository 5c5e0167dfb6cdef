/*
 * wire-impl.h - protobuf wire reading shared by example.c and seqex.c
 * (private to lib/example).
 *
 * A field is a varint tag (number << 3 | wire type) and then: a varint
 * (type 0), 8 bytes (type 1), a varint length and that many bytes
 * (type 2) or 4 bytes (type 5). Types 3 and 4 start and end groups,
 * which proto3 messages never contain; 6 and 7 are invalid. Field
 * numbers run from 1 to 2^29 - 1.
 *
 * tfk_pb_next is the hot path of every decoder: always inlined, the
 * one-byte tags and short lengths of real records first, every bound
 * checked; a failure returns a code and leaves its details in the field
 * so that tfk_pb_fail (cold, out of line) can write "byte OFF: what",
 * OFF counted from the start of the whole message.
 */
#ifndef TFK_EXAMPLE_WIRE_IMPL_H
#define TFK_EXAMPLE_WIRE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* Largest message accepted: protobuf's own limit (INT_MAX bytes). */
#define TFK_PB_MAX 0x7fffffffu

#define TFK_PB_INLINE static inline __attribute__((always_inline))
#define TFK_PB_LIKELY(x) __builtin_expect(!!(x), 1)

enum { TFK_PB_VARINT = 0, TFK_PB_I64 = 1, TFK_PB_LEN = 2, TFK_PB_I32 = 5 };

/* Failures of tfk_pb_next (positive, so tests read as booleans). */
enum {
	TFK_PB_E_TRUNC = 1,	/* varint at f->p ends with the message */
	TFK_PB_E_LONG,		/* varint at f->p is longer than 10 bytes */
	TFK_PB_E_NUM,		/* field number 0 or > 2^29-1 (f->v: number) */
	TFK_PB_E_PAST,		/* length f->v runs past end (f->p: payload) */
	TFK_PB_E_FIXED,		/* fixed32/64 value cut off */
	TFK_PB_E_GROUP,		/* wire type 3 or 4 */
	TFK_PB_E_WT		/* wire type 6 or 7 */
};

struct tfk_pbf {
	uint32_t num;
	int wt;
	const uint8_t *tag;	/* where the field starts */
	const uint8_t *p;	/* the payload (type 2), the value bytes */
	const uint8_t *end;	/* end of the field */
	uint64_t v;		/* type 0: the value; type 2: the length */
};

/* Varint slow path: returns 0, TFK_PB_E_TRUNC or TFK_PB_E_LONG. Bits
 * past the 64th are dropped, as protobuf does. */
static inline int tfk_pb_varint_slow(const uint8_t **pp, const uint8_t *end,
				     uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	int s;

	for (s = 0; s < 70; s += 7) {
		uint8_t c;

		if (p >= end)
			return TFK_PB_E_TRUNC;
		c = *p++;
		r |= (uint64_t)(c & 0x7f) << s;
		if (c < 0x80) {
			*v = r;
			*pp = p;
			return 0;
		}
	}
	return TFK_PB_E_LONG;
}

/* Varint at *pp (before end): 0 and *pp advanced, or a TFK_PB_E_*. */
TFK_PB_INLINE int tfk_pb_varint(const uint8_t **pp, const uint8_t *end,
				uint64_t *v)
{
	const uint8_t *p = *pp;

	if (TFK_PB_LIKELY(end - p >= 2)) {
		if (p[0] < 0x80) {
			*v = p[0];
			*pp = p + 1;
			return 0;
		}
		if (p[1] < 0x80) {
			*v = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
			*pp = p + 2;
			return 0;
		}
	}
	return tfk_pb_varint_slow(pp, end, v);
}

/* Read the field at *pp (< end) into f and advance past it. Returns 0
 * or a TFK_PB_E_* code (see tfk_pb_fail). */
TFK_PB_INLINE int tfk_pb_next(const uint8_t **pp, const uint8_t *end,
			      struct tfk_pbf *f)
{
	const uint8_t *p = *pp;
	uint64_t tag;
	int rc;

	f->tag = p;
	if (TFK_PB_LIKELY(p[0] < 0x80)) {	/* callers ensure p < end */
		tag = p[0];
		p++;
	} else if ((rc = tfk_pb_varint(&p, end, &tag))) {
		f->p = f->tag;
		return rc;
	}
	f->num = (uint32_t)(tag >> 3);
	f->wt = (int)(tag & 7);
	f->p = p;
	if (TFK_PB_LIKELY(f->wt == TFK_PB_LEN)) {
		if ((rc = tfk_pb_varint(&p, end, &f->v)))
			return rc;
		f->p = p;
		if (f->v > (uint64_t)(end - p))
			return TFK_PB_E_PAST;
		p += f->v;
	} else if (f->wt == TFK_PB_VARINT) {
		if ((rc = tfk_pb_varint(&p, end, &f->v)))
			return rc;
	} else if (f->wt == TFK_PB_I32 || f->wt == TFK_PB_I64) {
		size_t w = f->wt == TFK_PB_I32 ? 4 : 8;

		if ((size_t)(end - p) < w)
			return TFK_PB_E_FIXED;
		p += w;
		f->v = 0;
	} else {
		return f->wt == 3 || f->wt == 4 ? TFK_PB_E_GROUP : TFK_PB_E_WT;
	}
	if (!TFK_PB_LIKELY((tag >> 3) - 1 < 0x1fffffffu)) {
		f->v = tag >> 3;
		return TFK_PB_E_NUM;
	}
	f->end = p;
	*pp = p;
	return 0;
}

/*
 * The message for a failure rc of tfk_pb_next on field f (or of
 * tfk_pb_varint at f->p); base is the start of the whole message.
 * Returns TFK_ECORRUPT.
 */
int tfk_pb_fail(const struct tfk_pbf *f, int rc, const uint8_t *end,
		const uint8_t *base, struct tfk_err *err)
	__attribute__((cold, noinline));

/* Read the next field into f, or return the located TFK_ECORRUPT from
 * the enclosing decoder, whose base and err are in scope. */
#define TFK_PB_NEXT(pp, end, f)						\
	do {								\
		int rc_ = tfk_pb_next(pp, end, f);			\
		if (rc_)						\
			return tfk_pb_fail(f, rc_, end, base, err);	\
	} while (0)

/* Wrong wire type for a known field: "byte OFF: what (field N) has wire
 * type W, want WANT". Returns TFK_ECORRUPT. */
int tfk_pb_wt_err(const struct tfk_pbf *f, const char *what,
		  const char *want, const uint8_t *base, struct tfk_err *err)
	__attribute__((cold, noinline));

#endif
