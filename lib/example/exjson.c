/*
 * exjson.c - tf.Example <-> tfkit's JSON line form (see exjson.h).
 *
 * Writing appends straight into a tfk_buf: no JSON library, integers
 * formatted by hand, floats by our own shortest-digits generator in the
 * range data lives in (printf-and-strtof search, tfk_buf_add_float,
 * costs ~0.7 us a float: a 784-float record would print at 2k/s), the
 * same spelling as tfk_buf_add_float and %g.
 *
 * Reading has two front ends over one back end. The text reader is a
 * small recursive-descent parser of the only shape a line may have
 * (object of name -> null, value or list of values), because jansson
 * refuses NaN/Infinity, which Python's json writes and so do we; it
 * also keeps each number's spelling, which tells an integer from a float
 * and lets the decimal text round once to a float (no double rounding
 * through a double): Clinger's exact fast path where it applies, strtof
 * where it does not (strtof alone was half the time of a line). The
 * json_t reader walks what jansson built. Both collect one feature's
 * values into reusable arrays, then one function settles the kind (the
 * values, corrected by the schema lookup) and hands the values to the
 * Example builder. Rejected: pre-processing NaN into something jansson
 * accepts (no spelling is free: any string or number may be a value).
 */
#include "example/exjson.h"
#include "example/schema.h"
#include "util/alloc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Writing -------------------------------------------------------------- */

static void add_i64(struct tfk_buf *out, int64_t v)
{
	char s[24], *e = s + sizeof(s), *p = e;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	tfk_buf_add(out, p, (size_t)(e - p));
}

/*
 * Shortest digits of a positive finite float, by Steele and White's
 * free-format algorithm (the "Dragon4" family): v and the half-gaps to
 * its neighbours as exact ratios r/s, mp/s, mm/s, scaled by 10^k so
 * that the upper end of the rounding interval lies under 1, then one
 * digit per step until the rest falls inside the interval; the last
 * digit is rounded to the nearer candidate. Boundaries count when the
 * mantissa is even (readers round half to even). Exact while every
 * number stays under 2^60 (so that times 10 fits 64 bits), which holds
 * for 1e-10 <= v < 1.8e16, the values data holds; the rest goes to
 * tfk_buf_add_float (printf and strtof until one round-trips), which
 * is ten times slower. Returns the digit count (digits as values 0-9
 * in dig[0..n)) with v = 0.DIGITS * 10^*k10, or 0 when out of range.
 */
static int shortest_digits(float v, uint8_t dig[12], int *k10)
{
	static const uint64_t pow10[] = {
		1, 10, 100, 1000, 10000, 100000, 1000000, 10000000,
		100000000, 1000000000, 10000000000, 100000000000,
		1000000000000, 10000000000000, 100000000000000,
		1000000000000000, 10000000000000000, 100000000000000000
	};
	const uint64_t lim = (uint64_t)1 << 60;
	uint32_t bits, fr, be;
	uint64_t m, r, s, mp, mm;
	int e2, k, n = 0, even, lg;

	memcpy(&bits, &v, 4);
	fr = bits & 0x7fffff;
	be = bits >> 23 & 0xff;
	m = be ? fr | 0x800000 : fr;
	e2 = be ? (int)be - 150 : -149;
	even = !(m & 1);
	if (e2 > 30 || e2 < -58)
		return 0;
	if (e2 >= 0) {
		r = m << (e2 + 1);
		s = 2;
		mp = mm = (uint64_t)1 << e2;
	} else {
		r = m << 1;
		s = (uint64_t)1 << (1 - e2);
		mp = mm = 1;
	}
	if (fr == 0 && be > 1) {	/* a power of two: the gap below is half */
		r <<= 1;
		s <<= 1;
		mp <<= 1;
	}
	/* k: 10^(k-1) <= v; at most one short of the true exponent */
	for (lg = 0; (m >> lg) > 1; lg++)
		;
	k = (int)floor((double)(lg + e2) * 0.30102999566398120) + 1;
	if (k >= 0) {
		if (k > 17 || s > lim / pow10[k])
			return 0;
		s *= pow10[k];
	} else {
		if (-k > 17 || r > lim / pow10[-k])
			return 0;
		r *= pow10[-k];
		mp *= pow10[-k];
		mm *= pow10[-k];
	}
	if (even ? r + mp >= s : r + mp > s) {	/* the high end reaches 1 */
		if (s > lim / 10)
			return 0;
		s *= 10;
		k++;
	}
	for (;;) {
		uint64_t d;
		int low, high;

		r *= 10;
		mp *= 10;
		mm *= 10;
		d = r / s;
		r %= s;
		low = even ? r <= mm : r < mm;
		high = even ? r + mp >= s : r + mp > s;
		if (low || high || n == 11) {
			if (high && (!low || 2 * r > s ||
				     (2 * r == s && (d & 1))))
				d++;
			dig[n++] = (uint8_t)d;
			break;
		}
		dig[n++] = (uint8_t)d;
	}
	/* a last digit rounded up to 10 carries */
	while (n > 1 && dig[n - 1] == 10) {
		n--;
		dig[n - 1]++;
	}
	if (dig[0] == 10) {
		dig[0] = 1;
		k++;
	}
	while (n > 1 && dig[n - 1] == 0)
		n--;
	*k10 = k;
	return n;
}

/* As %g with the precision max(6, digits) would print them. */
static size_t format_digits(char *o, const uint8_t *dig, int n, int k)
{
	char *start = o;
	int x = k - 1, p = n > 6 ? n : 6, i;

	if (x < -4 || x >= p) {
		*o++ = (char)('0' + dig[0]);
		if (n > 1) {
			*o++ = '.';
			for (i = 1; i < n; i++)
				*o++ = (char)('0' + dig[i]);
		}
		*o++ = 'e';
		*o++ = x < 0 ? '-' : '+';
		if (x < 0)
			x = -x;
		if (x >= 100)
			*o++ = (char)('0' + x / 100);
		*o++ = (char)('0' + x / 10 % 10);
		*o++ = (char)('0' + x % 10);
	} else if (x >= 0) {
		for (i = 0; i <= x; i++)
			*o++ = (char)('0' + (i < n ? dig[i] : 0));
		if (n > x + 1) {
			*o++ = '.';
			for (i = x + 1; i < n; i++)
				*o++ = (char)('0' + dig[i]);
		}
	} else {
		*o++ = '0';
		*o++ = '.';
		for (i = 0; i < -x - 1; i++)
			*o++ = '0';
		for (i = 0; i < n; i++)
			*o++ = (char)('0' + dig[i]);
	}
	return (size_t)(o - start);
}

void tfk_exjson_add_float(struct tfk_buf *out, float v)
{
	size_t start = out->len, i;
	uint8_t dig[12];
	char s[40], *o = s;
	int n, k;

	if (v != 0 && isfinite(v) && (n = shortest_digits(fabsf(v), dig, &k))) {
		if (v < 0)
			*o++ = '-';
		o += format_digits(o, dig, n, k);
		if (!memchr(s, '.', (size_t)(o - s)) &&
		    !memchr(s, 'e', (size_t)(o - s))) {
			*o++ = '.';
			*o++ = '0';
		}
		tfk_buf_add(out, s, (size_t)(o - s));
		return;
	}
	tfk_buf_add_float(out, v);
	if (out->oom)
		return;
	for (i = start; i < out->len; i++) {
		uint8_t c = out->data[i];

		if (c == '.' || c == 'e' || c == 'N' || c == 'I')
			return;
	}
	tfk_buf_add(out, ".0", 2);
}

static float float_le(const uint8_t *p)
{
	uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	float v;

	memcpy(&v, &u, 4);
	return v;
}

/* Values copied out in chunks, so lists of any length need no heap. */
#define CHUNK 256

void tfk_exjson_add_values(struct tfk_buf *out, const struct tfk_feat *f)
{
	size_t i, it = 0, len;
	const uint8_t *p;

	/* [] alone would lose the kind: say it */
	if (f->n == 0 && f->kind >= TFK_FEAT_BYTES &&
	    f->kind <= TFK_FEAT_INT64) {
		tfk_buf_add(out, "{\"", 2);
		tfk_buf_adds(out, tfk_feat_kind_name(f->kind));
		tfk_buf_add(out, "\":[]}", 5);
		return;
	}
	switch (f->kind) {
	case TFK_FEAT_INT64: {
		int64_t tmp[CHUNK], *v = tmp;

		if (f->n > CHUNK) {
			v = tfk_malloc(f->n * sizeof(*v));
			if (!v) {
				out->oom = 1;
				return;
			}
		}
		tfk_feat_int64s(f, v, f->n);
		tfk_buf_addc(out, '[');
		for (i = 0; i < f->n; i++) {
			if (i)
				tfk_buf_addc(out, ',');
			add_i64(out, v[i]);
		}
		tfk_buf_addc(out, ']');
		if (v != tmp)
			tfk_free(v);
		return;
	}
	case TFK_FEAT_FLOAT: {
		float tmp[CHUNK], *v = tmp;

		tfk_buf_addc(out, '[');
		if (f->packed) {
			for (i = 0; i < f->n; i++) {
				if (i)
					tfk_buf_addc(out, ',');
				tfk_exjson_add_float(out,
						     float_le(f->packed + 4 * i));
			}
			tfk_buf_addc(out, ']');
			return;
		}
		if (f->n > CHUNK) {
			v = tfk_malloc(f->n * sizeof(*v));
			if (!v) {
				out->oom = 1;
				return;
			}
		}
		tfk_feat_floats(f, v, f->n);
		for (i = 0; i < f->n; i++) {
			if (i)
				tfk_buf_addc(out, ',');
			tfk_exjson_add_float(out, v[i]);
		}
		tfk_buf_addc(out, ']');
		if (v != tmp)
			tfk_free(v);
		return;
	}
	case TFK_FEAT_BYTES:
		tfk_buf_addc(out, '[');
		for (i = 0; tfk_feat_bytes_next(f, &it, &p, &len); i++) {
			if (i)
				tfk_buf_addc(out, ',');
			if (tfk_utf8_valid(p, len)) {
				tfk_buf_add_json_str(out, (const char *)p, len);
			} else {
				tfk_buf_add(out, "{\"b64\":\"", 8);
				tfk_buf_add_base64(out, p, len);
				tfk_buf_add(out, "\"}", 2);
			}
		}
		tfk_buf_addc(out, ']');
		return;
	}
	tfk_buf_add(out, "null", 4);
}

int tfk_exjson_add_key(struct tfk_buf *out, const char *name, size_t len,
		       const char *what, size_t i, struct tfk_err *err)
{
	if (!tfk_utf8_valid((const uint8_t *)name, len))
		return tfk_errf(err, TFK_ECORRUPT, "%s %zu: name is not valid "
				"utf-8", what, i);
	if (i)
		tfk_buf_addc(out, ',');
	tfk_buf_add_json_str(out, name, len);
	tfk_buf_addc(out, ':');
	return 0;
}

int tfk_exjson_write(const struct tfk_example *ex, struct tfk_buf *out,
		     struct tfk_err *err)
{
	size_t i;

	tfk_buf_addc(out, '{');
	for (i = 0; i < ex->n_feat; i++) {
		const struct tfk_feat *f = &ex->feat[i];
		int rc = tfk_exjson_add_key(out, f->name, f->name_len,
					    "feature", i, err);

		if (rc)
			return rc;
		tfk_exjson_add_values(out, f);
	}
	tfk_buf_addc(out, '}');
	if (!tfk_buf_ok(out))
		return tfk_errf(err, TFK_ENOMEM, "out of memory writing json");
	return 0;
}

/* Reading: the shared back end ---------------------------------------- */

enum { J_INT, J_BIGINT, J_FLOAT, J_STR, J_B64 };

/* One value of the feature being read. Strings live in r->text. */
struct jval {
	int type;
	int64_t i;		/* J_INT */
	float f;		/* every number, as a float */
	size_t off, len;	/* J_STR, J_B64: bytes in r->text */
};

void tfk_exjson_reader_init(struct tfk_exjson_reader *r,
			    tfk_exjson_kind_fn kind, void *ctx)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->kind_ctx = ctx;
}

void tfk_exjson_reader_release(struct tfk_exjson_reader *r)
{
	if (!r)
		return;
	tfk_buf_release(&r->text);
	tfk_buf_release(&r->vals);
	tfk_buf_release(&r->arr);
	tfk_buf_release(&r->seen);
}

int tfk_exjson_schema_kind(void *schema, const char *name)
{
	const struct tfk_schema_feat *f = tfk_schema_find(schema, name);

	if (!f || f->mixed || f->kind < TFK_FEAT_BYTES ||
	    f->kind > TFK_FEAT_INT64)
		return TFK_FEAT_NONE;
	return f->kind;
}

static int oom(struct tfk_err *err)
{
	return tfk_errf(err, TFK_ENOMEM, "out of memory reading json");
}

static struct jval *val_add(struct tfk_exjson_reader *r)
{
	struct jval *v;

	if (tfk_buf_reserve(&r->vals, sizeof(*v)))
		return NULL;
	v = (struct jval *)(r->vals.data + r->vals.len);
	r->vals.len += sizeof(*v);
	memset(v, 0, sizeof(*v));
	return v;
}

static const char *name_at(const struct tfk_exjson_reader *r, size_t off)
{
	return (const char *)r->text.data + off;
}

/*
 * Add the feature named at text offset name_off with the values
 * collected in r->vals (none: the value was null) to b.
 */
static int emit(struct tfk_exjson_reader *r, size_t name_off, int none,
		int typed, struct tfk_example_builder *b, struct tfk_err *err)
{
	const struct jval *v = (const struct jval *)r->vals.data;
	size_t n = r->vals.len / sizeof(*v), i, nstr = 0, nfloat = 0;
	const char *name = name_at(r, name_off);
	int hint = r->kind ? r->kind(r->kind_ctx, name) : TFK_FEAT_NONE;
	const char *says = typed ? "the line says" : "the schema says";
	int kind;

	if (hint < TFK_FEAT_BYTES || hint > TFK_FEAT_INT64)
		hint = TFK_FEAT_NONE;
	if (typed) {
		if (hint && hint != typed)
			return tfk_errf(err, TFK_EINVAL, "feature \"%s\": "
					"{\"%s\": [...]}, but the schema says "
					"%s", name, tfk_feat_kind_name(typed),
					tfk_feat_kind_name(hint));
		hint = typed;
	}
	if (none) {
		tfk_exb_add_none(b, name);
		return 0;
	}
	for (i = 0; i < n; i++) {
		nstr += v[i].type == J_STR || v[i].type == J_B64;
		nfloat += v[i].type == J_FLOAT;
	}
	if (n == 0 && !hint)
		return tfk_errf(err, TFK_EINVAL, "feature \"%s\": empty list "
				"has no kind; write {\"int64\":[]}, "
				"{\"float\":[]} or {\"bytes\":[]}, or give "
				"--schema", name);
	if (nstr && nstr < n)
		return tfk_errf(err, TFK_EINVAL, "feature \"%s\": mixes "
				"strings and numbers", name);
	if (nstr)
		kind = TFK_FEAT_BYTES;
	else if (hint)
		kind = hint;
	else
		kind = nfloat ? TFK_FEAT_FLOAT : TFK_FEAT_INT64;
	if (n && hint && kind != hint)
		return tfk_errf(err, TFK_EINVAL, "feature \"%s\": strings, but "
				"%s %s", name, says, tfk_feat_kind_name(hint));
	if (n && hint == TFK_FEAT_BYTES && !nstr)
		return tfk_errf(err, TFK_EINVAL, "feature \"%s\": numbers, but "
				"%s bytes", name, says);
	r->arr.len = 0;
	if (kind == TFK_FEAT_BYTES) {
		const uint8_t **pv;
		size_t *lv;

		if (tfk_buf_reserve(&r->arr, (n + 1) * (sizeof(*pv) +
							sizeof(*lv))))
			return oom(err);
		pv = (const uint8_t **)r->arr.data;
		lv = (size_t *)(pv + n + 1);
		for (i = 0; i < n; i++) {
			pv[i] = r->text.data + v[i].off;
			lv[i] = v[i].len;
		}
		tfk_exb_add_bytes(b, name, pv, lv, n);
	} else if (kind == TFK_FEAT_INT64) {
		int64_t *iv;

		for (i = 0; i < n; i++) {
			if (v[i].type == J_FLOAT)
				return tfk_errf(err, TFK_EINVAL, "feature "
						"\"%s\": value %zu is not an "
						"integer, but %s int64", name,
						i, says);
			if (v[i].type == J_BIGINT)
				return tfk_errf(err, TFK_EINVAL, "feature "
						"\"%s\": value %zu is out of "
						"the int64 range", name, i);
		}
		if (tfk_buf_reserve(&r->arr, (n + 1) * sizeof(*iv)))
			return oom(err);
		iv = (int64_t *)r->arr.data;
		for (i = 0; i < n; i++)
			iv[i] = v[i].i;
		tfk_exb_add_int64s(b, name, iv, n);
	} else {
		float *fv;

		if (tfk_buf_reserve(&r->arr, (n + 1) * sizeof(*fv)))
			return oom(err);
		fv = (float *)r->arr.data;
		for (i = 0; i < n; i++)
			fv[i] = v[i].f;
		tfk_exb_add_floats(b, name, fv, n);
	}
	return 0;
}

/* Decode standard base64 (padding required) in place: p[0..len) in,
 * the bytes out at p; returns their count or -1. */
static long b64_decode(uint8_t *p, size_t len)
{
	static int8_t tab[256];
	static int ready;
	size_t i, o = 0, pad = 0;
	uint32_t acc = 0;

	if (!ready) {
		const char *a = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				"abcdefghijklmnopqrstuvwxyz0123456789+/";

		memset(tab, -1, sizeof(tab));
		for (i = 0; a[i]; i++)
			tab[(uint8_t)a[i]] = (int8_t)i;
		ready = 1;
	}
	if (len % 4)
		return -1;
	if (len && p[len - 1] == '=')
		pad = len >= 2 && p[len - 2] == '=' ? 2 : 1;
	for (i = 0; i < len - pad; i++) {
		int8_t d = tab[p[i]];

		if (d < 0)
			return -1;
		acc = acc << 6 | (uint32_t)d;
		if (i % 4 == 3) {
			p[o++] = (uint8_t)(acc >> 16);
			p[o++] = (uint8_t)(acc >> 8);
			p[o++] = (uint8_t)acc;
		}
	}
	if (pad == 1) {		/* 3 chars: 18 bits, 2 bytes */
		p[o++] = (uint8_t)(acc >> 10);
		p[o++] = (uint8_t)(acc >> 2);
	} else if (pad == 2) {	/* 2 chars: 12 bits, 1 byte */
		p[o++] = (uint8_t)(acc >> 4);
	}
	return (long)o;
}

/* Reading: text -------------------------------------------------------- */

struct rd {
	struct tfk_exjson_reader *r;
	const char *p, *end;
	struct tfk_err *err;
	size_t name_off;	/* feature being read; SIZE_MAX: none yet */
};

static int syntax(struct rd *c, const char *what)
{
	return tfk_errf(c->err, TFK_EINVAL, "byte %zu: %s",
			(size_t)(c->p - c->r->base), what);
}

static int feat_err(struct rd *c, const char *what)
{
	return tfk_errf(c->err, TFK_EINVAL, "feature \"%s\": %s",
			name_at(c->r, c->name_off), what);
}

static void skip_ws(struct rd *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' ||
				 *c->p == '\n' || *c->p == '\r'))
		c->p++;
}

static int word(struct rd *c, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(c->end - c->p) >= n && memcmp(c->p, w, n) == 0) {
		c->p += n;
		return 1;
	}
	return 0;
}

static int hex4(const char *p, uint32_t *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 4; i++) {
		char h = p[i];

		*v <<= 4;
		if (h >= '0' && h <= '9')
			*v |= (uint32_t)(h - '0');
		else if (h >= 'a' && h <= 'f')
			*v |= (uint32_t)(h - 'a' + 10);
		else if (h >= 'A' && h <= 'F')
			*v |= (uint32_t)(h - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

static void add_utf8(struct tfk_buf *t, uint32_t cp)
{
	uint8_t u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (uint8_t)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (uint8_t)(0xc0 | cp >> 6);
		u[1] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (uint8_t)(0xe0 | cp >> 12);
		u[1] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		u[0] = (uint8_t)(0xf0 | cp >> 18);
		u[1] = (uint8_t)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (uint8_t)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (uint8_t)(0x80 | (cp & 0x3f));
		n = 4;
	}
	tfk_buf_add(t, u, n);
}

/* A JSON string at c->p ('"'), unescaped and appended to r->text;
 * *off and *len get where. */
static int parse_string(struct rd *c, size_t *off, size_t *len)
{
	struct tfk_buf *t = &c->r->text;
	const char *run;

	*off = t->len;
	c->p++;
	for (;;) {
		run = c->p;
		while (c->p < c->end && *c->p != '"' && *c->p != '\\' &&
		       (uint8_t)*c->p >= 0x20)
			c->p++;
		if (!tfk_utf8_valid((const uint8_t *)run, (size_t)(c->p - run))) {
			c->p = run;
			return syntax(c, "string is not valid utf-8");
		}
		tfk_buf_add(t, run, (size_t)(c->p - run));
		if (c->p == c->end)
			return syntax(c, "unterminated string");
		if (*c->p == '"') {
			c->p++;
			break;
		}
		if (*c->p != '\\')
			return syntax(c, "control character in string");
		if (c->end - c->p < 2)
			return syntax(c, "unterminated string");
		switch (c->p[1]) {
		case '"':  tfk_buf_addc(t, '"'); break;
		case '\\': tfk_buf_addc(t, '\\'); break;
		case '/':  tfk_buf_addc(t, '/'); break;
		case 'b':  tfk_buf_addc(t, '\b'); break;
		case 'f':  tfk_buf_addc(t, '\f'); break;
		case 'n':  tfk_buf_addc(t, '\n'); break;
		case 'r':  tfk_buf_addc(t, '\r'); break;
		case 't':  tfk_buf_addc(t, '\t'); break;
		case 'u': {
			uint32_t cp, lo;

			if (c->end - c->p < 6 || hex4(c->p + 2, &cp))
				return syntax(c, "bad \\u escape");
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return syntax(c, "lone low surrogate in \\u escape");
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (c->end - c->p < 12 || c->p[6] != '\\' ||
				    c->p[7] != 'u' || hex4(c->p + 8, &lo) ||
				    lo < 0xdc00 || lo > 0xdfff)
					return syntax(c, "lone high surrogate "
						      "in \\u escape");
				cp = 0x10000 + ((cp - 0xd800) << 10) +
				     (lo - 0xdc00);
				c->p += 6;
			}
			add_utf8(t, cp);
			c->p += 4;
			break;
		}
		default:
			return syntax(c, "bad escape in string");
		}
		c->p += 2;
	}
	*len = t->len - *off;
	if (!tfk_buf_ok(t))
		return oom(c->err);
	return 0;
}

/*
 * The float nearest to mant * 10^e10 without strtof when that is exact
 * and cheap (Clinger's fast path): mant and 10^|e10| are exact doubles,
 * so one multiply or divide rounds once to the nearest double; rounding
 * that double to float is then right unless it landed exactly on a
 * midpoint between two floats (the decimal might lie on either side),
 * which is left to strtof. Returns 0 and sets *f, or -1.
 */
static int fast_float(uint64_t mant, int e10, int neg, float *f)
{
	static const double p10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
	};
	uint64_t bits;
	double d;

	if (mant > (uint64_t)1 << 53 || e10 < -22 || e10 > 22)
		return -1;
	d = (double)mant;
	d = e10 < 0 ? d / p10[-e10] : d * p10[e10];
	/* only normal floats: a double's low 29 bits then are what float
	 * rounding drops, and 1 << 28 there is a midpoint */
	if (d != 0 && (d < 0x1p-126 || d >= 0x1p127))
		return -1;
	memcpy(&bits, &d, 8);
	if ((bits & 0x1fffffff) == 0x10000000)
		return -1;
	*f = neg ? -(float)d : (float)d;
	return 0;
}

/* A JSON number at c->p, kept as its integer value when it is spelled
 * as one, and as the float its text rounds to (once). */
static int parse_number(struct rd *c, struct jval *v)
{
	const char *s = c->p, *q = s;
	uint64_t mant = 0;
	int is_int = 1, neg = 0, digits = 0, frac = 0, e10 = 0, big = 0;

	if (q < c->end && *q == '-') {
		neg = 1;
		q++;
	}
	if (q < c->end && *q == '0') {
		q++;
	} else if (q < c->end && *q >= '1' && *q <= '9') {
		for (; q < c->end && *q >= '0' && *q <= '9'; q++) {
			if (digits < 19)
				mant = mant * 10 + (uint64_t)(*q - '0');
			else
				big = 1;
			digits++;
		}
	} else {
		return syntax(c, "bad number");
	}
	if (q < c->end && *q == '.') {
		is_int = 0;
		q++;
		if (q == c->end || *q < '0' || *q > '9') {
			c->p = q;
			return syntax(c, "bad number: digits must follow '.'");
		}
		for (; q < c->end && *q >= '0' && *q <= '9'; q++) {
			if (digits == 0 && *q == '0') {	/* leading zeros */
				frac++;
				continue;
			}
			if (digits < 19) {
				mant = mant * 10 + (uint64_t)(*q - '0');
				frac++;
			} else {
				big = 1;
			}
			digits++;
		}
	}
	if (q < c->end && (*q == 'e' || *q == 'E')) {
		int eneg = 0;

		is_int = 0;
		q++;
		if (q < c->end && (*q == '+' || *q == '-'))
			eneg = *q++ == '-';
		if (q == c->end || *q < '0' || *q > '9') {
			c->p = q;
			return syntax(c, "bad number: digits must follow the "
				      "exponent");
		}
		for (; q < c->end && *q >= '0' && *q <= '9'; q++)
			if (e10 < 10000)
				e10 = e10 * 10 + (*q - '0');
		if (eneg)
			e10 = -e10;
	}
	v->type = J_FLOAT;
	if (is_int) {
		/* digits beyond 19, or a 19-digit value past the range */
		int over = big || mant > (uint64_t)INT64_MAX + (uint64_t)neg;

		v->type = over ? J_BIGINT : J_INT;
		v->i = neg ? (int64_t)(0 - mant) : (int64_t)mant;
	}
	if (big || fast_float(mant, e10 - frac, neg, &v->f)) {
		char tmp[64], *num = tmp, *heap = NULL;
		size_t n = (size_t)(q - s);

		if (n >= sizeof(tmp)) {
			num = heap = tfk_malloc(n + 1);
			if (!heap)
				return oom(c->err);
		}
		memcpy(num, s, n);
		num[n] = '\0';
		v->f = strtof(num, NULL);
		tfk_free(heap);
	}
	c->p = q;
	return 0;
}

/* One value inside a feature: number, string, {"b64": ...}, NaN,
 * Infinity, -Infinity. */
static int parse_scalar(struct rd *c)
{
	struct tfk_exjson_reader *r = c->r;
	struct jval *v;
	size_t off, len;
	int rc;

	if (c->p == c->end)
		return syntax(c, "expected a value");
	if (!(v = val_add(r)))
		return oom(c->err);
	switch (*c->p) {
	case '"':
		v->type = J_STR;
		return parse_string(c, &v->off, &v->len);
	case '{': {
		size_t mark = r->text.len;
		long n;

		c->p++;
		skip_ws(c);
		if (c->p == c->end || *c->p != '"')
			return feat_err(c, "expected {\"b64\": \"...\"}");
		if ((rc = parse_string(c, &off, &len)))
			return rc;
		if (len != 3 || memcmp(r->text.data + off, "b64", 3))
			return feat_err(c, "expected {\"b64\": \"...\"}");
		r->text.len = mark;
		skip_ws(c);
		if (c->p == c->end || *c->p != ':')
			return syntax(c, "expected ':'");
		c->p++;
		skip_ws(c);
		if (c->p == c->end || *c->p != '"')
			return feat_err(c, "b64 value must be a string");
		if ((rc = parse_string(c, &off, &len)))
			return rc;
		n = b64_decode(r->text.data + off, len);
		if (n < 0)
			return feat_err(c, "invalid base64");
		r->text.len = off + (size_t)n;
		v->type = J_B64;
		v->off = off;
		v->len = (size_t)n;
		skip_ws(c);
		if (c->p == c->end || *c->p != '}')
			return feat_err(c, "expected {\"b64\": \"...\"}");
		c->p++;
		return 0;
	}
	case 'N':
		if (!word(c, "NaN"))
			break;
		v->type = J_FLOAT;
		v->f = NAN;
		return 0;
	case 'I':
		if (!word(c, "Infinity"))
			break;
		v->type = J_FLOAT;
		v->f = INFINITY;
		return 0;
	case '-':
		if (word(c, "-Infinity")) {
			v->type = J_FLOAT;
			v->f = -INFINITY;
			return 0;
		}
		return parse_number(c, v);
	case 't':
	case 'f':
		if (word(c, "true") || word(c, "false"))
			return feat_err(c, "true/false is not a value (bytes, "
					"float or int64)");
		break;
	case 'n':
		if (word(c, "null"))
			return feat_err(c, "null inside a list");
		break;
	case '[':
		return feat_err(c, "nested list (SequenceExample lists are "
				"not an Example)");
	default:
		if (*c->p >= '0' && *c->p <= '9')
			return parse_number(c, v);
	}
	return syntax(c, "expected a value");
}

/* A list at c->p ('['): its values appended to r->vals. */
static int parse_list(struct rd *c)
{
	c->p++;
	skip_ws(c);
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		return 0;
	}
	for (;;) {
		int rc;

		skip_ws(c);
		if ((rc = parse_scalar(c)))
			return rc;
		skip_ws(c);
		if (c->p < c->end && *c->p == ',') {
			c->p++;
			continue;
		}
		if (c->p < c->end && *c->p == ']') {
			c->p++;
			return 0;
		}
		return syntax(c, "expected ',' or ']' in a list");
	}
}

/* The kind a name in a typed list ({"float": [...]}) says, else NONE. */
static int kind_word(const char *s, size_t len)
{
	int k;

	for (k = TFK_FEAT_BYTES; k <= TFK_FEAT_INT64; k++)
		if (strlen(tfk_feat_kind_name(k)) == len &&
		    memcmp(tfk_feat_kind_name(k), s, len) == 0)
			return k;
	return TFK_FEAT_NONE;
}

/*
 * A value that starts with '{' at c->p: a typed list {"KIND": [...]}
 * (*typed gets the kind, the values go to r->vals) or else one
 * {"b64": ...} value.
 */
static int parse_object_value(struct rd *c, int *typed)
{
	const char *start = c->p;
	size_t mark = c->r->text.len, off, len;
	int rc, k;

	c->p++;
	skip_ws(c);
	if (c->p < c->end && *c->p == '"') {
		if ((rc = parse_string(c, &off, &len)))
			return rc;
		k = kind_word((const char *)c->r->text.data + off, len);
		c->r->text.len = mark;
		if (k) {
			skip_ws(c);
			if (c->p == c->end || *c->p != ':')
				return syntax(c, "expected ':'");
			c->p++;
			skip_ws(c);
			if (c->p == c->end || *c->p != '[')
				return feat_err(c, "expected a list after "
						"{\"bytes\"/\"float\"/"
						"\"int64\":");
			if ((rc = parse_list(c)))
				return rc;
			skip_ws(c);
			if (c->p == c->end || *c->p != '}')
				return feat_err(c, "expected '}' after a typed "
						"list");
			c->p++;
			*typed = k;
			return 0;
		}
	}
	c->p = start;
	return parse_scalar(c);
}

/* Is the name at text offset off (len bytes) already in this line? */
static int seen_before(struct tfk_exjson_reader *r, size_t off, size_t len)
{
	const size_t *s = (const size_t *)r->seen.data;
	size_t i, n = r->seen.len / (2 * sizeof(*s));
	const uint8_t *name = r->text.data + off;

	for (i = 0; i < n; i++)
		if (s[2 * i + 1] == len &&
		    memcmp(r->text.data + s[2 * i], name, len) == 0)
			return 1;
	tfk_buf_add(&r->seen, (size_t[]){ off, len }, 2 * sizeof(*s));
	return 0;
}

int tfk_exjson_read_line(struct tfk_exjson_reader *r, const char *line,
			 size_t len, struct tfk_example_builder *b,
			 struct tfk_err *err)
{
	struct rd c = { r, line, line + len, err, SIZE_MAX };
	int rc;

	r->base = line;
	r->end = line + len;
	tfk_buf_reset(&r->text);
	tfk_buf_reset(&r->seen);
	skip_ws(&c);
	if (c.p == c.end || *c.p != '{')
		return syntax(&c, "expected a JSON object");
	c.p++;
	skip_ws(&c);
	if (c.p < c.end && *c.p == '}') {
		c.p++;
	} else {
		for (;;) {
			size_t off, nlen;
			int none = 0, typed = TFK_FEAT_NONE;

			skip_ws(&c);
			if (c.p == c.end || *c.p != '"')
				return syntax(&c, "expected a feature name");
			if ((rc = parse_string(&c, &off, &nlen)))
				return rc;
			tfk_buf_addc(&r->text, '\0');
			if (!tfk_buf_ok(&r->text))
				return oom(err);
			c.name_off = off;
			if (memchr(r->text.data + off, '\0', nlen))
				return feat_err(&c, "name holds a NUL character");
			if (seen_before(r, off, nlen))
				return feat_err(&c, "given twice");
			if (!tfk_buf_ok(&r->seen))
				return oom(err);
			skip_ws(&c);
			if (c.p == c.end || *c.p != ':')
				return syntax(&c, "expected ':' after a feature "
					      "name");
			c.p++;
			skip_ws(&c);
			r->vals.len = 0;
			if (c.p < c.end && *c.p == '[') {
				if ((rc = parse_list(&c)))
					return rc;
			} else if (c.p < c.end && *c.p == '{') {
				if ((rc = parse_object_value(&c, &typed)))
					return rc;
			} else if (word(&c, "null")) {
				none = 1;
			} else if ((rc = parse_scalar(&c))) {
				return rc;
			}
			if ((rc = emit(r, off, none, typed, b, err)))
				return rc;
			skip_ws(&c);
			if (c.p < c.end && *c.p == ',') {
				c.p++;
				continue;
			}
			if (c.p < c.end && *c.p == '}') {
				c.p++;
				break;
			}
			return syntax(&c, "expected ',' or '}' after a feature");
		}
	}
	skip_ws(&c);
	if (c.p != c.end)
		return syntax(&c, "trailing characters after the object");
	if (!tfk_buf_ok(&b->feats))
		return oom(err);
	return 0;
}

/* Reading: jansson ------------------------------------------------------ */

static int json_value(struct tfk_exjson_reader *r, const char *name,
		      const json_t *j, struct tfk_err *err)
{
	struct jval *v;
	size_t voff;

	if (!(v = val_add(r)))
		return oom(err);
	voff = r->vals.len - sizeof(*v);
	switch (json_typeof(j)) {
	case JSON_INTEGER:
		v->type = J_INT;
		v->i = (int64_t)json_integer_value(j);
		v->f = (float)json_integer_value(j);
		return 0;
	case JSON_REAL:
		v->type = J_FLOAT;
		v->f = (float)json_real_value(j);
		return 0;
	case JSON_STRING:
		v->type = J_STR;
		v->off = r->text.len;
		v->len = json_string_length(j);
		tfk_buf_add(&r->text, json_string_value(j), v->len);
		return tfk_buf_ok(&r->text) ? 0 : oom(err);
	case JSON_OBJECT: {
		const json_t *s = json_object_get(j, "b64");
		size_t off = r->text.len, len;
		long n;

		if (json_object_size(j) != 1 || !json_is_string(s))
			return tfk_errf(err, TFK_EINVAL, "feature \"%s\": "
					"expected {\"b64\": \"...\"}", name);
		len = json_string_length(s);
		tfk_buf_add(&r->text, json_string_value(s), len);
		if (!tfk_buf_ok(&r->text))
			return oom(err);
		n = b64_decode(r->text.data + off, len);
		if (n < 0)
			return tfk_errf(err, TFK_EINVAL, "feature \"%s\": "
					"invalid base64", name);
		r->text.len = off + (size_t)n;
		v = (struct jval *)(r->vals.data + voff);
		v->type = J_B64;
		v->off = off;
		v->len = (size_t)n;
		return 0;
	}
	case JSON_ARRAY:
		return tfk_errf(err, TFK_EINVAL, "feature \"%s\": nested list "
				"(SequenceExample lists are not an Example)",
				name);
	case JSON_NULL:
		return tfk_errf(err, TFK_EINVAL, "feature \"%s\": null inside "
				"a list", name);
	default:
		return tfk_errf(err, TFK_EINVAL, "feature \"%s\": true/false "
				"is not a value (bytes, float or int64)", name);
	}
}

int tfk_exjson_read_json(struct tfk_exjson_reader *r, const json_t *obj,
			 struct tfk_example_builder *b, struct tfk_err *err)
{
	const char *key;
	json_t *val;
	const json_t *list;
	int rc, typed;

	if (!json_is_object(obj))
		return tfk_errf(err, TFK_EINVAL, "expected a JSON object");
	tfk_buf_reset(&r->text);
	json_object_foreach((json_t *)obj, key, val) {
		size_t klen = strlen(key), off = r->text.len, i;

		tfk_buf_add(&r->text, key, klen + 1);
		if (!tfk_buf_ok(&r->text))
			return oom(err);
		r->vals.len = 0;
		typed = TFK_FEAT_NONE;
		list = val;
		if (json_is_object(val) && json_object_size(val) == 1 &&
		    !json_object_get(val, "b64")) {
			const char *k = json_object_iter_key(
				json_object_iter((json_t *)val));

			typed = kind_word(k, strlen(k));
			if (typed && !json_is_array(json_object_get(val, k)))
				return tfk_errf(err, TFK_EINVAL, "feature "
						"\"%s\": expected a list after "
						"{\"bytes\"/\"float\"/"
						"\"int64\":", key);
			if (typed)
				list = json_object_get(val, k);
		}
		if (json_is_array(list)) {
			for (i = 0; i < json_array_size(list); i++)
				if ((rc = json_value(r, key,
						     json_array_get(list, i),
						     err)))
					return rc;
		} else if (!json_is_null(val) &&
			   (rc = json_value(r, key, val, err))) {
			return rc;
		}
		if ((rc = emit(r, off, json_is_null(val), typed, b, err)))
			return rc;
	}
	if (!tfk_buf_ok(&b->feats))
		return oom(err);
	return 0;
}
