/*
 * buf.c - growable byte buffer (see buf.h).
 *
 * Doubling growth; a sticky oom flag keeps the many small appends of an
 * encoder free of error plumbing. Float formatting tries %.6g/%.7g.../%.9g
 * and keeps the first that round-trips, so JSON stays short and exact.
 */
#include "util/buf.h"
#include "util/alloc.h"
#include "util/err.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tfk_buf_init(struct tfk_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void tfk_buf_release(struct tfk_buf *b)
{
	if (!b)
		return;
	tfk_free(b->data);
	tfk_buf_init(b);
}

void tfk_buf_reset(struct tfk_buf *b)
{
	b->len = 0;
	b->oom = 0;
}

int tfk_buf_reserve(struct tfk_buf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->oom)
		return TFK_ENOMEM;
	if (n <= b->cap - b->len)
		return 0;
	if (n > SIZE_MAX / 2 - b->len) {
		b->oom = 1;
		return TFK_ENOMEM;
	}
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < n)
		cap *= 2;
	p = tfk_realloc(b->data, cap);
	if (!p) {
		b->oom = 1;
		return TFK_ENOMEM;
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

void tfk_buf_add(struct tfk_buf *b, const void *p, size_t n)
{
	if (n == 0 || tfk_buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

void tfk_buf_addc(struct tfk_buf *b, int c)
{
	if (tfk_buf_reserve(b, 1))
		return;
	b->data[b->len++] = (uint8_t)c;
}

void tfk_buf_adds(struct tfk_buf *b, const char *s)
{
	tfk_buf_add(b, s, strlen(s));
}

void tfk_buf_addf(struct tfk_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (tfk_buf_reserve(b, 64))
		return;
	va_start(ap, fmt);
	n = vsnprintf((char *)b->data + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		if (tfk_buf_reserve(b, (size_t)n + 1))
			return;
		va_start(ap, fmt);
		vsnprintf((char *)b->data + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

void tfk_buf_add_varint(struct tfk_buf *b, uint64_t v)
{
	if (tfk_buf_reserve(b, 10))
		return;
	while (v >= 0x80) {
		b->data[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->data[b->len++] = (uint8_t)v;
}

void tfk_buf_add_json_str(struct tfk_buf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, run = 0;

	tfk_buf_addc(b, '"');
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		char u[6];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		tfk_buf_add(b, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"':  esc = "\\\""; break;
		case '\\': esc = "\\\\"; break;
		case '\n': esc = "\\n"; break;
		case '\r': esc = "\\r"; break;
		case '\t': esc = "\\t"; break;
		case '\b': esc = "\\b"; break;
		case '\f': esc = "\\f"; break;
		}
		if (esc) {
			tfk_buf_adds(b, esc);
		} else {
			memcpy(u, "\\u00", 4);
			u[4] = hex[c >> 4];
			u[5] = hex[c & 15];
			tfk_buf_add(b, u, 6);
		}
	}
	tfk_buf_add(b, s + run, n - run);
	tfk_buf_addc(b, '"');
}

static int add_nonfinite(struct tfk_buf *b, double v)
{
	if (isnan(v))
		tfk_buf_adds(b, "NaN");
	else if (isinf(v))
		tfk_buf_adds(b, v > 0 ? "Infinity" : "-Infinity");
	else
		return 0;
	return 1;
}

void tfk_buf_add_float(struct tfk_buf *b, float v)
{
	char s[32];
	int prec;

	if (add_nonfinite(b, v))
		return;
	/* Six digits are enough to find the shortest form of a normal
	 * float; a subnormal's gap is wide, so it can be much shorter. */
	for (prec = fabsf(v) < FLT_MIN ? 1 : 6; prec < 9; prec++) {
		snprintf(s, sizeof(s), "%.*g", prec, (double)v);
		if (strtof(s, NULL) == v)
			break;
	}
	if (prec == 9)
		snprintf(s, sizeof(s), "%.9g", (double)v);
	tfk_buf_adds(b, s);
}

void tfk_buf_add_double(struct tfk_buf *b, double v)
{
	char s[40];
	int prec;

	if (add_nonfinite(b, v))
		return;
	for (prec = 15; prec < 17; prec++) {
		snprintf(s, sizeof(s), "%.*g", prec, v);
		if (strtod(s, NULL) == v)
			break;
	}
	if (prec == 17)
		snprintf(s, sizeof(s), "%.17g", v);
	tfk_buf_adds(b, s);
}

void tfk_buf_add_base64(struct tfk_buf *b, const uint8_t *p, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i;
	uint8_t *o;

	if (tfk_buf_reserve(b, (n + 2) / 3 * 4))
		return;
	o = b->data + b->len;
	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		*o++ = tab[v >> 18];
		*o++ = tab[(v >> 12) & 63];
		*o++ = tab[(v >> 6) & 63];
		*o++ = tab[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		*o++ = tab[v >> 18];
		*o++ = tab[(v >> 12) & 63];
		*o++ = i + 1 < n ? tab[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	b->len = (size_t)(o - b->data);
}

size_t tfk_utf8_prefix(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint8_t c = p[i];
		uint32_t cp;
		int k;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			k = 1;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			k = 2;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			k = 3;
			cp = c & 0x07;
		} else {
			return i;
		}
		if (n - i <= (size_t)k)
			return i;
		for (int j = 1; j <= k; j++) {
			if ((p[i + j] & 0xc0) != 0x80)
				return i;
			cp = cp << 6 | (p[i + j] & 0x3f);
		}
		if ((k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) ||
		    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		i += (size_t)k + 1;
	}
	return n;
}

int tfk_utf8_valid(const uint8_t *p, size_t n)
{
	return tfk_utf8_prefix(p, n) == n;
}
