/*
 * jdoc.h - JSON text read into a read-only tree in one arena, for the
 * hot request paths (TF Serving's REST bodies: thousands of numbers per
 * request). jansson, which the rest of lib/ uses, spends most of such a
 * request in a malloc per value and a locale-aware strtod per number;
 * this reader allocates a few blocks per document and converts the
 * common decimals ("0.1234", 17 significant digits or fewer, exponent
 * within 10^22) exactly by one IEEE division or product (Clinger's fast
 * path), strtod otherwise, so every double is the correctly rounded
 * one, as jansson's and rapidjson's are.
 *
 * Grammar: RFC 8259, strictly (no comments, no trailing commas, no
 * leading zeros, no bare control characters in strings, UTF-8 checked
 * at escapes only: \uXXXX pairs are joined, a lone surrogate is an
 * error), plus, with TFK_JD_NONFINITE, the bare tokens NaN, Infinity
 * and -Infinity as numbers (TF Serving's rapidjson takes them with
 * kParseNanAndInfFlag). Nesting deeper than TFK_JD_MAX_DEPTH is an
 * error rather than a deep recursion. A member key given twice keeps
 * its last value for tfk_jd_get (jansson's rule); iteration sees both.
 * An integer outside int64 is an error ("too big integer"), a decimal
 * outside double's range too ("real number overflow").
 */
#ifndef TFK_JDOC_H
#define TFK_JDOC_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

#define TFK_JD_MAX_DEPTH 512

enum tfk_jd_type {
	TFK_JD_NULL,
	TFK_JD_FALSE,
	TFK_JD_TRUE,
	TFK_JD_INT,	/* no fraction or exponent: .u.i */
	TFK_JD_REAL,	/* .u.d; .bare: the token was NaN/Infinity/-Infinity */
	TFK_JD_STRING,	/* .u.s, .n bytes, NUL-terminated (may hold NULs) */
	TFK_JD_ARRAY,	/* .u.items[0..n) */
	TFK_JD_OBJECT	/* .u.items[0..2n): key (a string), value, ... */
};

struct tfk_jd {
	uint8_t type;		/* enum tfk_jd_type */
	uint8_t bare;
	uint32_t n;
	union {
		int64_t i;
		double d;
		const char *s;
		const struct tfk_jd *items;
	} u;
};

/* Flags of tfk_jd_parse. */
#define TFK_JD_NONFINITE 1u

struct tfk_jd_doc {
	struct tfk_jd root;
	void *blocks;		/* the arena (private) */
};

/*
 * Parse text[0..n) (need not end in NUL) into *doc; pair with
 * tfk_jd_free, also after a failure. Errors: TFK_EINVAL "JSON parse
 * error at offset N: WHAT" (N counts bytes of text), TFK_ENOMEM.
 */
int tfk_jd_parse(struct tfk_jd_doc *doc, const char *text, size_t n,
		 unsigned flags, struct tfk_err *err);
void tfk_jd_free(struct tfk_jd_doc *doc);

/* The value of member key of object v (the last one of that name), or
 * NULL (also when v is not an object). */
const struct tfk_jd *tfk_jd_get(const struct tfk_jd *v, const char *key);

static inline int tfk_jd_is(const struct tfk_jd *v, enum tfk_jd_type t)
{
	return v && v->type == t;
}

/* Member k of object v: its key (NUL-terminated) and its value. */
static inline const char *tfk_jd_key(const struct tfk_jd *v, uint32_t k)
{
	return v->u.items[2 * k].u.s;
}

static inline const struct tfk_jd *tfk_jd_member(const struct tfk_jd *v,
						 uint32_t k)
{
	return &v->u.items[2 * k + 1];
}

#endif
