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
 * tfk_pb_next checks every bound and reports errors as "byte OFF: what",
 * OFF counted from base. tfk_pb_skim is the same walk without messages,
 * for accessors that walk bytes a successful parse already checked.
 */
#ifndef TFK_EXAMPLE_WIRE_IMPL_H
#define TFK_EXAMPLE_WIRE_IMPL_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* Largest message accepted: protobuf's own limit (INT_MAX bytes). */
#define TFK_PB_MAX 0x7fffffffu

enum { TFK_PB_VARINT = 0, TFK_PB_I64 = 1, TFK_PB_LEN = 2, TFK_PB_I32 = 5 };

struct tfk_pbf {
	uint32_t num;
	int wt;
	const uint8_t *tag;	/* where the field starts */
	const uint8_t *p;	/* the payload (type 2), the value bytes */
	const uint8_t *end;	/* end of the field */
	uint64_t v;		/* type 0: the value */
};

/*
 * Varint at *pp, ending before end. Returns 0 and advances *pp, or -1
 * when truncated, -2 when longer than 10 bytes. Bits past the 64th are
 * dropped, as protobuf does.
 */
static inline int tfk_pb_varint(const uint8_t **pp, const uint8_t *end,
				uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	int s;

	if (p < end && *p < 0x80) {
		*v = *p;
		*pp = p + 1;
		return 0;
	}
	for (s = 0; s < 70; s += 7) {
		uint8_t c;

		if (p >= end)
			return -1;
		c = *p++;
		r |= (uint64_t)(c & 0x7f) << s;
		if (c < 0x80) {
			*v = r;
			*pp = p;
			return 0;
		}
	}
	return -2;
}

static inline int tfk_pb_varint_err(int rc, const uint8_t *at,
				    const uint8_t *base, struct tfk_err *err)
{
	return tfk_errf(err, TFK_ECORRUPT, "byte %zu: %s", (size_t)(at - base),
			rc == -1 ? "truncated varint" :
			"varint longer than 10 bytes");
}

/* Read the field at *pp (< end) into f and advance past it. Returns 0
 * or TFK_ECORRUPT. */
static inline int tfk_pb_next(const uint8_t **pp, const uint8_t *end,
			      struct tfk_pbf *f, const uint8_t *base,
			      struct tfk_err *err)
{
	const uint8_t *p = *pp;
	uint64_t tag, n;
	int rc;

	f->tag = p;
	if (p[0] < 0x80) {	/* one-byte tag; callers ensure p < end */
		tag = p[0];
		p++;
	} else if ((rc = tfk_pb_varint(&p, end, &tag))) {
		return tfk_pb_varint_err(rc, f->tag, base, err);
	}
	f->num = (uint32_t)(tag >> 3);
	f->wt = (int)(tag & 7);
	if (tag >> 3 == 0 || tag >> 3 > 0x1fffffff)
		return tfk_errf(err, TFK_ECORRUPT, "byte %zu: invalid field "
				"number %" PRIu64, (size_t)(f->tag - base),
				tag >> 3);
	f->p = p;
	switch (f->wt) {
	case TFK_PB_VARINT:
		if ((rc = tfk_pb_varint(&p, end, &f->v)))
			return tfk_pb_varint_err(rc, f->p, base, err);
		break;
	case TFK_PB_I64:
		if ((size_t)(end - p) < 8)
			return tfk_errf(err, TFK_ECORRUPT, "byte %zu: fixed64 "
					"field %u past end of message",
					(size_t)(f->tag - base), f->num);
		p += 8;
		break;
	case TFK_PB_LEN:
		if ((rc = tfk_pb_varint(&p, end, &n)))
			return tfk_pb_varint_err(rc, f->p, base, err);
		if (n > (uint64_t)(end - p))
			return tfk_errf(err, TFK_ECORRUPT, "byte %zu: field %u: "
					"length %" PRIu64 " past end of "
					"message (%zu bytes left)",
					(size_t)(f->tag - base), f->num, n,
					(size_t)(end - p));
		f->p = p;
		p += n;
		break;
	case TFK_PB_I32:
		if ((size_t)(end - p) < 4)
			return tfk_errf(err, TFK_ECORRUPT, "byte %zu: fixed32 "
					"field %u past end of message",
					(size_t)(f->tag - base), f->num);
		p += 4;
		break;
	case 3:
	case 4:
		return tfk_errf(err, TFK_ECORRUPT, "byte %zu: field %u: groups "
				"(wire type %d) are not supported",
				(size_t)(f->tag - base), f->num, f->wt);
	default:
		return tfk_errf(err, TFK_ECORRUPT, "byte %zu: field %u: invalid "
				"wire type %d", (size_t)(f->tag - base), f->num,
				f->wt);
	}
	f->end = p;
	*pp = p;
	return 0;
}

/* Wrong wire type for a known field. */
static inline int tfk_pb_wt_err(const struct tfk_pbf *f, const char *what,
				const char *want, const uint8_t *base,
				struct tfk_err *err)
{
	return tfk_errf(err, TFK_ECORRUPT, "byte %zu: %s (field %u) has wire "
			"type %d, want %s", (size_t)(f->tag - base), what,
			f->num, f->wt, want);
}

/* tfk_pb_next without messages: 0, or -1 at a malformed field. */
static inline int tfk_pb_skim(const uint8_t **pp, const uint8_t *end,
			      struct tfk_pbf *f)
{
	return tfk_pb_next(pp, end, f, *pp, NULL) ? -1 : 0;
}

#endif
