/*
 * jdoc.c - JSON text into a tree in one arena (see jdoc.h).
 *
 * Recursive descent. A container's children are parsed onto one
 * scratch stack shared by every level and copied into the arena, in a
 * block of their own, when the container closes, so items are
 * contiguous (tfk_jd items[i] is O(1)) without knowing counts ahead.
 */
#include "util/jdoc.h"

#include "util/alloc.h"
#include "util/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct block {
	struct block *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

struct parser {
	const char *s;
	size_t n, at;
	unsigned flags;
	struct block *blocks;
	size_t grow;		/* the next block's least size */
	struct tfk_jd *stack;
	size_t top, cap;
	struct tfk_err *err;
};

static int fail(struct parser *p, const char *what)
{
	return tfk_errf(p->err, TFK_EINVAL, "JSON parse error at offset %zu: "
			"%s", p->at, what);
}

static int oom(struct parser *p)
{
	return tfk_errf(p->err, TFK_ENOMEM, "out of memory");
}

static void *arena(struct parser *p, size_t n)
{
	struct block *b = p->blocks;

	n = (n + 15) & ~(size_t)15;
	if (!b || b->size - b->used < n) {
		size_t size = n > p->grow ? n : p->grow;

		b = tfk_malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->next = p->blocks;
		b->size = size;
		b->used = 0;
		p->blocks = b;
		p->grow = size * 2;
	}
	b->used += n;
	return b->data + b->used - n;
}

static int grow(struct parser *p)
{
	size_t nc = p->cap ? p->cap * 2 : 256;
	struct tfk_jd *g = tfk_realloc(p->stack, nc * sizeof(*g));

	if (!g)
		return oom(p);
	p->stack = g;
	p->cap = nc;
	return 0;
}

static int push(struct parser *p, const struct tfk_jd *v)
{
	int rc;

	if (p->top == p->cap && (rc = grow(p)))
		return rc;
	p->stack[p->top++] = *v;
	return 0;
}

/* Move the stack's entries from base up into the arena as v's items. */
static int close_items(struct parser *p, size_t base, struct tfk_jd *v,
		       size_t per)
{
	static const struct tfk_jd none;	/* what empty ones point at */
	size_t k = p->top - base;
	struct tfk_jd *items;

	if (k / per > UINT32_MAX)
		return fail(p, "too many items");
	v->n = (uint32_t)(k / per);
	v->u.items = &none;
	if (k) {
		items = arena(p, k * sizeof(*items));
		if (!items)
			return oom(p);
		memcpy(items, p->stack + base, k * sizeof(*items));
		v->u.items = items;
	}
	p->top = base;
	return 0;
}

static void skip_ws(struct parser *p)
{
	while (p->at < p->n) {
		char c = p->s[p->at];

		if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
			return;
		p->at++;
	}
}

static int word(struct parser *p, const char *w)
{
	size_t k = strlen(w);

	if (p->n - p->at < k || memcmp(p->s + p->at, w, k))
		return 0;
	p->at += k;
	return 1;
}

static int hex4(const char *s, unsigned *u)
{
	int i;

	*u = 0;
	for (i = 0; i < 4; i++) {
		char c = s[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -1;
		*u = *u << 4 | d;
	}
	return 0;
}

static size_t put_utf8(char *o, unsigned u)
{
	if (u < 0x80) {
		o[0] = (char)u;
		return 1;
	}
	if (u < 0x800) {
		o[0] = (char)(0xC0 | u >> 6);
		o[1] = (char)(0x80 | (u & 0x3F));
		return 2;
	}
	if (u < 0x10000) {
		o[0] = (char)(0xE0 | u >> 12);
		o[1] = (char)(0x80 | (u >> 6 & 0x3F));
		o[2] = (char)(0x80 | (u & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | u >> 18);
	o[1] = (char)(0x80 | (u >> 12 & 0x3F));
	o[2] = (char)(0x80 | (u >> 6 & 0x3F));
	o[3] = (char)(0x80 | (u & 0x3F));
	return 4;
}

/* One \ escape at p->at (the backslash) into o; its length out. */
static int escape(struct parser *p, char *o, size_t *len)
{
	const char *s = p->s + p->at;
	size_t left = p->n - p->at;
	unsigned u, lo;

	if (left < 2)
		return fail(p, "premature end of input in a string");
	switch (s[1]) {
	case '"': case '\\': case '/':
		*o = s[1];
		break;
	case 'b': *o = '\b'; break;
	case 'f': *o = '\f'; break;
	case 'n': *o = '\n'; break;
	case 'r': *o = '\r'; break;
	case 't': *o = '\t'; break;
	case 'u':
		if (left < 6 || hex4(s + 2, &u))
			return fail(p, "invalid \\u escape");
		if (u >= 0xDC00 && u <= 0xDFFF)
			return fail(p, "invalid Unicode: a lone low surrogate");
		if (u >= 0xD800 && u <= 0xDBFF) {
			if (left < 12 || s[6] != '\\' || s[7] != 'u' ||
			    hex4(s + 8, &lo) || lo < 0xDC00 || lo > 0xDFFF)
				return fail(p, "invalid Unicode: a high "
					    "surrogate without its low one");
			u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
			p->at += 12;
		} else {
			p->at += 6;
		}
		*len = put_utf8(o, u);
		return 0;
	default:
		return fail(p, "invalid escape");
	}
	p->at += 2;
	*len = 1;
	return 0;
}

/* The string whose quote is at p->at. */
static int string(struct parser *p, struct tfk_jd *v)
{
	size_t start = ++p->at, end = start, o = 0;
	int escapes = 0;
	char *d;

	while (end < p->n && p->s[end] != '"') {
		unsigned char c = (unsigned char)p->s[end];

		if (c < 0x20) {
			p->at = end;
			return fail(p, "control character in a string");
		}
		if (c == '\\') {
			escapes = 1;
			end++;
		}
		end++;
	}
	if (end >= p->n) {
		p->at = p->n;
		return fail(p, "premature end of input in a string");
	}
	if (!(d = arena(p, end - start + 1)))
		return oom(p);
	if (!escapes) {
		memcpy(d, p->s + start, end - start);
		o = end - start;
	} else {
		while (p->at < end) {
			size_t run = p->at, len = 0;

			while (run < end && p->s[run] != '\\')
				run++;
			memcpy(d + o, p->s + p->at, run - p->at);
			o += run - p->at;
			p->at = run;
			if (run == end)
				break;
			int rc = escape(p, d + o, &len);

			if (rc)
				return rc;
			o += len;
		}
	}
	d[o] = 0;
	if (!tfk_utf8_valid((const uint8_t *)p->s + start, end - start)) {
		p->at = start;
		return fail(p, "invalid UTF-8 in a string");
	}
	if (o > UINT32_MAX)
		return fail(p, "string too long");
	p->at = end + 1;
	v->type = TFK_JD_STRING;
	v->n = (uint32_t)o;
	v->u.s = d;
	return 0;
}

/* 10^0 .. 10^22: exact doubles. */
static const double pow10s[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int number(struct parser *p, struct tfk_jd *v)
{
	const char *s = p->s;
	size_t start = p->at, i = p->at, n = p->n;
	uint64_t m = 0;
	int neg = 0, digits = 0, real = 0, exp10 = 0;

	if (i < n && s[i] == '-') {
		neg = 1;
		i++;
	}
	if (i >= n || !is_digit(s[i])) {
		p->at = i;
		return fail(p, "invalid number");
	}
	if (s[i] == '0') {
		i++;
		if (i < n && is_digit(s[i])) {
			p->at = i;
			return fail(p, "invalid number: a leading zero");
		}
	} else {
		for (; i < n && is_digit(s[i]); i++) {
			if (digits < 19)
				m = m * 10 + (uint64_t)(s[i] - '0');
			else
				exp10++;
			digits += m != 0;
		}
	}
	if (i < n && s[i] == '.') {
		real = 1;
		if (++i >= n || !is_digit(s[i])) {
			p->at = i;
			return fail(p, "invalid number: no digit after '.'");
		}
		for (; i < n && is_digit(s[i]); i++)
			if (digits < 19) {
				m = m * 10 + (uint64_t)(s[i] - '0');
				exp10--;
				digits += m != 0;
			}
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		int e = 0, eneg = 0;

		real = 1;
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			eneg = s[i++] == '-';
		if (i >= n || !is_digit(s[i])) {
			p->at = i;
			return fail(p, "invalid number: no digit in the "
				    "exponent");
		}
		for (; i < n && is_digit(s[i]); i++)
			if (e < 100000)
				e = e * 10 + (s[i] - '0');
		exp10 += eneg ? -e : e;
	}
	p->at = i;
	if (!real) {
		if (digits > 19 || m > (uint64_t)INT64_MAX + (uint64_t)neg)
			return fail(p, "too big integer");
		v->type = TFK_JD_INT;
		v->u.i = neg ? (int64_t)(0 - m) : (int64_t)m;
		return 0;
	}
	v->type = TFK_JD_REAL;
	if (digits <= 19 && m <= (1ULL << 53) && exp10 >= -22 &&
	    exp10 <= 22) {
		/* Clinger: both operands exact, so one rounding */
		double d = (double)m;

		d = exp10 < 0 ? d / pow10s[-exp10] : d * pow10s[exp10];
		v->u.d = neg ? -d : d;
		return 0;
	}
	{
		size_t k = i - start;
		char buf[128], *t = k < sizeof(buf) ? buf : tfk_malloc(k + 1);
		double d;

		if (!t)
			return oom(p);
		memcpy(t, s + start, k);
		t[k] = 0;
		errno = 0;
		d = strtod(t, NULL);
		if (t != buf)
			tfk_free(t);
		if (errno == ERANGE && (d > 1 || d < -1)) {
			p->at = start;
			return fail(p, "real number overflow");
		}
		v->u.d = d;
	}
	return 0;
}

static int value(struct parser *p, struct tfk_jd *v, int depth);

static int array(struct parser *p, struct tfk_jd *v, int depth)
{
	size_t base = p->top;
	struct tfk_jd x;
	int rc;

	p->at++;
	v->type = TFK_JD_ARRAY;
	skip_ws(p);
	if (p->at < p->n && p->s[p->at] == ']') {
		p->at++;
		return close_items(p, base, v, 1);
	}
	for (;;) {
		char c;

		skip_ws(p);
		c = p->at < p->n ? p->s[p->at] : 0;

		/* lists of numbers are what request bodies are made of */
		if (is_digit(c) || (c == '-' && p->at + 1 < p->n &&
				    is_digit(p->s[p->at + 1]))) {
			/* straight into its slot: a copy through x made each
			 * number wait for the last one's store */
			struct tfk_jd *slot;

			if (p->top == p->cap && (rc = grow(p)))
				return rc;
			slot = &p->stack[p->top];
			slot->bare = 0;
			slot->n = 0;
			if ((rc = number(p, slot)))
				return rc;
			p->top++;
		} else if ((rc = value(p, &x, depth)) || (rc = push(p, &x))) {
			return rc;
		}
		skip_ws(p);
		if (p->at < p->n && p->s[p->at] == ',') {
			p->at++;
			continue;
		}
		if (p->at < p->n && p->s[p->at] == ']') {
			p->at++;
			return close_items(p, base, v, 1);
		}
		return fail(p, p->at < p->n ? "expected ',' or ']'" :
			    "premature end of input in a list");
	}
}

static int object(struct parser *p, struct tfk_jd *v, int depth)
{
	size_t base = p->top;
	struct tfk_jd x;
	int rc;

	p->at++;
	v->type = TFK_JD_OBJECT;
	skip_ws(p);
	if (p->at < p->n && p->s[p->at] == '}') {
		p->at++;
		return close_items(p, base, v, 2);
	}
	for (;;) {
		skip_ws(p);
		if (p->at >= p->n || p->s[p->at] != '"')
			return fail(p, p->at < p->n ? "expected a string key" :
				    "premature end of input in an object");
		if ((rc = string(p, &x)) || (rc = push(p, &x)))
			return rc;
		skip_ws(p);
		if (p->at >= p->n || p->s[p->at] != ':')
			return fail(p, "expected ':'");
		p->at++;
		if ((rc = value(p, &x, depth)) || (rc = push(p, &x)))
			return rc;
		skip_ws(p);
		if (p->at < p->n && p->s[p->at] == ',') {
			p->at++;
			continue;
		}
		if (p->at < p->n && p->s[p->at] == '}') {
			p->at++;
			return close_items(p, base, v, 2);
		}
		return fail(p, p->at < p->n ? "expected ',' or '}'" :
			    "premature end of input in an object");
	}
}

static int nonfinite(struct parser *p, struct tfk_jd *v)
{
	static const struct { const char *w; double d; } t[] = {
		{ "NaN", __builtin_nan("") },
		{ "Infinity", __builtin_inf() },
		{ "-Infinity", -__builtin_inf() }
	};
	size_t k;

	if (p->flags & TFK_JD_NONFINITE)
		for (k = 0; k < 3; k++)
			if (word(p, t[k].w)) {
				v->type = TFK_JD_REAL;
				v->bare = 1;
				v->u.d = t[k].d;
				return 1;
			}
	return 0;
}

static int value(struct parser *p, struct tfk_jd *v, int depth)
{
	memset(v, 0, sizeof(*v));
	skip_ws(p);
	if (p->at >= p->n)
		return fail(p, "premature end of input");
	if (depth >= TFK_JD_MAX_DEPTH)
		return fail(p, "nested too deeply");
	switch (p->s[p->at]) {
	case '{':
		return object(p, v, depth + 1);
	case '[':
		return array(p, v, depth + 1);
	case '"':
		return string(p, v);
	case 't':
		v->type = TFK_JD_TRUE;
		return word(p, "true") ? 0 : fail(p, "invalid token");
	case 'f':
		v->type = TFK_JD_FALSE;
		return word(p, "false") ? 0 : fail(p, "invalid token");
	case 'n':
		v->type = TFK_JD_NULL;
		return word(p, "null") ? 0 : fail(p, "invalid token");
	case 'N': case 'I': case '-':
		if (nonfinite(p, v))
			return 0;
		if (p->s[p->at] != '-')
			return fail(p, "invalid token");
		/* fall through */
	default:
		if (p->s[p->at] == '-' || is_digit(p->s[p->at]))
			return number(p, v);
		return fail(p, "invalid token");
	}
}

static void free_blocks(struct block *b)
{
	while (b) {
		struct block *next = b->next;

		tfk_free(b);
		b = next;
	}
}

int tfk_jd_parse(struct tfk_jd_doc *doc, const char *text, size_t n,
		 unsigned flags, struct tfk_err *err)
{
	struct parser p = { text, n, 0, flags, NULL, 4096, NULL, 0, 0, err };
	int rc;

	memset(doc, 0, sizeof(*doc));
	/* about one 16-byte node per 4 bytes of a number list's text */
	if (n / 4 * sizeof(struct tfk_jd) > p.grow)
		p.grow = n / 4 * sizeof(struct tfk_jd);
	rc = value(&p, &doc->root, 0);
	if (!rc) {
		skip_ws(&p);
		if (p.at < p.n)
			rc = fail(&p, "end of input expected");
	}
	tfk_free(p.stack);
	doc->blocks = p.blocks;
	if (rc)
		memset(&doc->root, 0, sizeof(doc->root));
	return rc;
}

void tfk_jd_free(struct tfk_jd_doc *doc)
{
	if (!doc)
		return;
	free_blocks(doc->blocks);
	memset(doc, 0, sizeof(*doc));
}

const struct tfk_jd *tfk_jd_get(const struct tfk_jd *v, const char *key)
{
	uint32_t k;

	if (!v || v->type != TFK_JD_OBJECT)
		return NULL;
	for (k = v->n; k-- > 0;)
		if (!strcmp(v->u.items[2 * k].u.s, key))
			return &v->u.items[2 * k + 1];
	return NULL;
}
