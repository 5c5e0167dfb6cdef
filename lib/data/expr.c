/*
 * expr.c - parse a filter expression once, evaluate it per Example.
 *
 * A recursive-descent parser builds a tree in one node array (children
 * by index, so growing the array moves nothing that is pointed at);
 * evaluation walks it. A tree walk costs a few nanoseconds per node,
 * far below decoding the Example it runs on, so a bytecode compiler
 * would buy nothing measurable; it was left out for simplicity.
 *
 * Static types are checked while parsing (a bitmask: a feature value
 * may turn out a number or a string, known only per record), so most
 * mistakes are reported with a column before any data is read. Regexes
 * are compiled once, at parse time.
 *
 * Two limits keep hostile expressions from exhausting the stack: the
 * parser's recursion (parentheses, "not", unary minus) is capped at
 * MAX_NEST, and the tree's depth (which a long "a + a + ..." chain
 * grows without recursion) at MAX_DEPTH, which bounds the evaluator's
 * recursion.
 */
#include "data/expr.h"
#include "util/alloc.h"
#include "util/buf.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NEST 200
#define MAX_DEPTH 4000

/* Static types, as a mask: a feature reference is T_NUM | T_STR. */
enum { T_BOOL = 1, T_NUM = 2, T_STR = 4, T_ANY = T_NUM | T_STR };

enum op {
	N_INT, N_FLOAT, N_STR, N_BOOL, N_FEAT, N_INDEX, N_LEN, N_HAS,
	N_RANDOM, N_NEG, N_ADD, N_SUB, N_MUL, N_DIV, N_MOD, N_EQ, N_NE,
	N_LT, N_LE, N_GT, N_GE, N_MATCH, N_STARTS, N_AND, N_OR, N_NOT
};

struct node {
	uint8_t op;
	uint8_t type;		/* T_* mask */
	uint16_t depth;
	int32_t a, b;		/* children, -1 when none */
	size_t off;		/* where it starts in the source */
	union {
		int64_t i;
		double f;
		int b;
		struct { size_t off, len; } s;	/* in strs */
		uint64_t k;	/* random() call number, regex index */
	} v;
};

struct tfk_expr {
	struct node *n;
	size_t n_node, cap;
	int32_t root;
	struct tfk_buf strs;	/* string literals and feature names */
	regex_t *re;
	size_t n_re, cap_re;
	unsigned n_random;
	uint64_t seed;
	int64_t *i64;		/* eval scratch for f[i] */
	size_t i64_cap;
	float *f32;
	size_t f32_cap;
	struct tfk_buf re_tmp;	/* a NUL-terminated copy for regexec */
};

/* Parsing ---------------------------------------------------------------- */

enum tok {
	TK_END = 0, TK_INT = 256, TK_FLOAT, TK_STR, TK_IDENT, TK_EQ, TK_NE,
	TK_LT, TK_LE, TK_GT, TK_GE
};

struct parser {
	struct tfk_expr *e;
	const char *src;
	size_t pos;		/* next byte to scan */
	int tok;
	size_t tok_off, tok_len;
	uint64_t ival;		/* TK_INT magnitude (up to 2^63) */
	double fval;
	size_t soff, slen;	/* TK_STR: bytes in e->strs */
	int nest;
	int failed;
	struct tfk_err *err;
	size_t *err_off;
};

static int fail_at(struct parser *p, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(struct parser *p, size_t off, const char *fmt, ...)
{
	char what[256];
	size_t i, line = 1, col = 1;
	va_list ap;

	if (p->failed)
		return -1;
	p->failed = TFK_EINVAL;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	for (i = 0; i < off && p->src[i]; i++) {
		if (p->src[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	if (p->err_off)
		*p->err_off = off;
	tfk_errf(p->err, TFK_EINVAL, "expression:%zu:%zu: %s", line, col,
		 what);
	return -1;
}

static int fail_nomem(struct parser *p)
{
	if (!p->failed) {
		p->failed = TFK_ENOMEM;
		tfk_errf(p->err, TFK_ENOMEM, "out of memory");
	}
	return -1;
}

static int is_ident0(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int hexval(int c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void skip_space(struct parser *p)
{
	while (p->src[p->pos] == ' ' || p->src[p->pos] == '\t' ||
	       p->src[p->pos] == '\n' || p->src[p->pos] == '\r')
		p->pos++;
}

static int lex_string(struct parser *p)
{
	const char *s = p->src;
	size_t start = p->pos;

	p->pos++;
	p->soff = p->e->strs.len;
	for (;;) {
		int c = (unsigned char)s[p->pos];

		if (c == 0)
			return fail_at(p, start, "unterminated string");
		if (c == '"') {
			p->pos++;
			break;
		}
		if (c == '\\') {
			int h, l;

			switch (s[p->pos + 1]) {
			case '"': c = '"'; break;
			case '\\': c = '\\'; break;
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case '0': c = 0; break;
			case 'x':
				h = hexval((unsigned char)s[p->pos + 2]);
				l = h < 0 ? -1 : hexval((unsigned char)s[p->pos + 3]);
				if (l < 0)
					return fail_at(p, p->pos, "expected two "
						       "hex digits after \\x");
				c = h * 16 + l;
				p->pos += 2;
				break;
			default:
				return fail_at(p, p->pos, "unknown escape "
					       "'\\%c'", s[p->pos + 1] ?
					       s[p->pos + 1] : '0');
			}
			p->pos += 2;
		} else {
			p->pos++;
		}
		tfk_buf_addc(&p->e->strs, c);
	}
	p->slen = p->e->strs.len - p->soff;
	if (!tfk_buf_ok(&p->e->strs))
		return fail_nomem(p);
	p->tok = TK_STR;
	return 0;
}

static int lex_number(struct parser *p)
{
	const char *s = p->src;
	size_t i = p->pos, start = p->pos;
	int is_float = 0;
	char tmp[80];

	while (is_digit(s[i]))
		i++;
	if (s[i] == '.') {
		is_float = 1;
		i++;
		while (is_digit(s[i]))
			i++;
	}
	if (i == start + 1 && s[start] == '.')
		return fail_at(p, start, "bad number");
	if ((s[i] == 'e' || s[i] == 'E') &&
	    (is_digit(s[i + 1]) || ((s[i + 1] == '+' || s[i + 1] == '-') &&
				    is_digit(s[i + 2])))) {
		is_float = 1;
		i += 2;
		while (is_digit(s[i]))
			i++;
	}
	if (is_ident0((unsigned char)s[i]) || is_digit(s[i]) || s[i] == '.')
		return fail_at(p, start, "bad number");
	p->pos = i;
	if (is_float) {
		if (i - start >= sizeof(tmp))
			return fail_at(p, start, "number too long");
		memcpy(tmp, s + start, i - start);
		tmp[i - start] = 0;
		p->fval = strtod(tmp, NULL);
		p->tok = TK_FLOAT;
		return 0;
	}
	p->ival = 0;
	for (i = start; i < p->pos; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (p->ival > ((uint64_t)1 << 63) / 10 ||
		    p->ival * 10 + d > ((uint64_t)1 << 63))
			return fail_at(p, start, "integer out of range");
		p->ival = p->ival * 10 + d;
	}
	p->tok = TK_INT;
	return 0;
}

/* Scan the next token into p->tok. */
static int next(struct parser *p)
{
	const char *s = p->src;
	int c;

	if (p->failed)
		return -1;
	skip_space(p);
	p->tok_off = p->pos;
	c = (unsigned char)s[p->pos];
	if (c == 0) {
		p->tok = TK_END;
		p->tok_len = 0;
		return 0;
	}
	if (c == '"') {
		if (lex_string(p))
			return -1;
	} else if (is_digit(c) || (c == '.' && is_digit(s[p->pos + 1]))) {
		if (lex_number(p))
			return -1;
	} else if (is_ident0(c)) {
		while (is_ident0((unsigned char)s[p->pos]) ||
		       is_digit(s[p->pos]))
			p->pos++;
		p->tok = TK_IDENT;
	} else if (c == '=' || c == '!' || c == '<' || c == '>') {
		int eq = s[p->pos + 1] == '=';

		if (c == '=' && !eq)
			return fail_at(p, p->pos, "'=' is not an operator "
				       "(use '==')");
		if (c == '!' && !eq)
			return fail_at(p, p->pos, "'!' is not an operator "
				       "(use 'not')");
		p->tok = c == '=' ? TK_EQ : c == '!' ? TK_NE :
			 c == '<' ? (eq ? TK_LE : TK_LT) : (eq ? TK_GE : TK_GT);
		p->pos += 1 + eq;
	} else if (strchr("+-*/%()[],~", c)) {
		p->tok = c;
		p->pos++;
	} else if (c == '&' || c == '|') {
		return fail_at(p, p->pos, "'%c' is not an operator (use '%s')",
			       c, c == '&' ? "and" : "or");
	} else if (c > ' ' && c < 127) {
		return fail_at(p, p->pos, "unexpected '%c'", c);
	} else {
		return fail_at(p, p->pos, "unexpected byte 0x%02x", c);
	}
	p->tok_len = p->pos - p->tok_off;
	return 0;
}

static int tok_is(const struct parser *p, const char *word)
{
	size_t n = strlen(word);

	return p->tok == TK_IDENT && p->tok_len == n &&
	       !memcmp(p->src + p->tok_off, word, n);
}

/* The identifier just scanned is followed by '(' (a function call). */
static int ident_call(struct parser *p)
{
	size_t i = p->pos;

	while (p->src[i] == ' ' || p->src[i] == '\t' || p->src[i] == '\n' ||
	       p->src[i] == '\r')
		i++;
	return p->src[i] == '(';
}

static int32_t add_node(struct parser *p, int op, int type, size_t off,
			int32_t a, int32_t b)
{
	struct tfk_expr *e = p->e;
	struct node *n;
	unsigned depth = 1;

	if (p->failed)
		return -1;
	if (a >= 0 && e->n[a].depth + 1u > depth)
		depth = e->n[a].depth + 1u;
	if (b >= 0 && e->n[b].depth + 1u > depth)
		depth = e->n[b].depth + 1u;
	if (depth > MAX_DEPTH)
		return fail_at(p, off, "expression nested too deeply");
	if (e->n_node == e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 16;
		struct node *nn = tfk_realloc(e->n, cap * sizeof(*nn));

		if (!nn)
			return fail_nomem(p);
		e->n = nn;
		e->cap = cap;
	}
	n = &e->n[e->n_node];
	memset(n, 0, sizeof(*n));
	n->op = (uint8_t)op;
	n->type = (uint8_t)type;
	n->depth = (uint16_t)depth;
	n->off = off;
	n->a = a;
	n->b = b;
	return (int32_t)e->n_node++;
}

static const char *type_name(int t)
{
	return t == T_BOOL ? "a condition" : t == T_STR ? "a string" :
	       t == T_NUM ? "a number" : "a value";
}

static int32_t parse_cond(struct parser *p);
static int32_t parse_sum(struct parser *p);

static int expect(struct parser *p, int tok, const char *what)
{
	if (p->failed)
		return -1;
	if (p->tok != tok)
		return fail_at(p, p->tok_off, "expected %s", what);
	return next(p);
}

/* feat := IDENT | "feature" "(" STRING ")", with p->tok at its start. */
static int32_t parse_feat(struct parser *p)
{
	size_t off = p->tok_off;
	int32_t n;

	if (p->tok != TK_IDENT)
		return fail_at(p, p->tok_off, "expected a feature name");
	if (tok_is(p, "feature") && ident_call(p)) {
		if (next(p) || expect(p, '(', "'('"))
			return -1;
		if (p->tok != TK_STR)
			return fail_at(p, p->tok_off, "expected a string "
				       "(the feature name)");
		n = add_node(p, N_FEAT, T_ANY, off, -1, -1);
		if (n < 0)
			return -1;
		p->e->n[n].v.s.off = p->soff;
		p->e->n[n].v.s.len = p->slen;
		if (next(p) || expect(p, ')', "')'"))
			return -1;
		return n;
	}
	if (tok_is(p, "and") || tok_is(p, "or") || tok_is(p, "not") ||
	    tok_is(p, "true") || tok_is(p, "false"))
		return fail_at(p, p->tok_off, "'%.*s' is a keyword (a feature "
			       "of that name is feature(\"%.*s\"))",
			       (int)p->tok_len, p->src + p->tok_off,
			       (int)p->tok_len, p->src + p->tok_off);
	if ((tok_is(p, "len") || tok_is(p, "has") || tok_is(p, "random") ||
	     tok_is(p, "startswith")) && ident_call(p))
		return fail_at(p, p->tok_off, "expected a feature name");
	n = add_node(p, N_FEAT, T_ANY, off, -1, -1);
	if (n < 0)
		return -1;
	p->e->n[n].v.s.off = p->e->strs.len;
	p->e->n[n].v.s.len = p->tok_len;
	tfk_buf_add(&p->e->strs, p->src + p->tok_off, p->tok_len);
	if (!tfk_buf_ok(&p->e->strs))
		return fail_nomem(p);
	return next(p) ? -1 : n;
}

static int32_t need(struct parser *p, int32_t n, int mask, const char *what)
{
	if (n < 0)
		return -1;
	if (!(p->e->n[n].type & mask))
		return fail_at(p, p->e->n[n].off, "expected %s", what);
	return n;
}

static int32_t parse_call(struct parser *p)
{
	size_t off = p->tok_off;
	int32_t a, b, n;

	if (tok_is(p, "len") || tok_is(p, "has")) {
		int op = tok_is(p, "len") ? N_LEN : N_HAS;

		if (next(p) || expect(p, '(', "'('"))
			return -1;
		a = parse_feat(p);
		if (a < 0 || expect(p, ')', "')'"))
			return -1;
		return add_node(p, op, op == N_LEN ? T_NUM : T_BOOL, off, a,
				-1);
	}
	if (tok_is(p, "random")) {
		if (next(p) || expect(p, '(', "'('") ||
		    expect(p, ')', "')' (random takes no arguments)"))
			return -1;
		n = add_node(p, N_RANDOM, T_NUM, off, -1, -1);
		if (n >= 0)
			p->e->n[n].v.k = p->e->n_random++;
		return n;
	}
	if (tok_is(p, "startswith")) {
		if (next(p) || expect(p, '(', "'('"))
			return -1;
		a = need(p, parse_sum(p), T_STR, "a string");
		if (a < 0 || expect(p, ',', "','"))
			return -1;
		b = need(p, parse_sum(p), T_STR, "a string");
		if (b < 0 || expect(p, ')', "')'"))
			return -1;
		return add_node(p, N_STARTS, T_BOOL, off, a, b);
	}
	if (tok_is(p, "feature"))
		return parse_feat(p);
	return fail_at(p, off, "unknown function '%.*s'", (int)p->tok_len,
		       p->src + off);
}

static int32_t parse_primary(struct parser *p)
{
	size_t off = p->tok_off;
	int32_t n;

	switch (p->tok) {
	case TK_INT:
		if (p->ival > INT64_MAX)
			return fail_at(p, off, "integer out of range");
		n = add_node(p, N_INT, T_NUM, off, -1, -1);
		if (n >= 0)
			p->e->n[n].v.i = (int64_t)p->ival;
		return n < 0 || next(p) ? -1 : n;
	case TK_FLOAT:
		n = add_node(p, N_FLOAT, T_NUM, off, -1, -1);
		if (n >= 0)
			p->e->n[n].v.f = p->fval;
		return n < 0 || next(p) ? -1 : n;
	case TK_STR:
		n = add_node(p, N_STR, T_STR, off, -1, -1);
		if (n >= 0) {
			p->e->n[n].v.s.off = p->soff;
			p->e->n[n].v.s.len = p->slen;
		}
		return n < 0 || next(p) ? -1 : n;
	case '(':
		if (next(p))
			return -1;
		n = parse_cond(p);
		if (n < 0 || expect(p, ')', "')'"))
			return -1;
		return n;
	case TK_IDENT:
		if (tok_is(p, "true") || tok_is(p, "false")) {
			n = add_node(p, N_BOOL, T_BOOL, off, -1, -1);
			if (n >= 0)
				p->e->n[n].v.b = tok_is(p, "true");
			return n < 0 || next(p) ? -1 : n;
		}
		if (ident_call(p) && !tok_is(p, "and") && !tok_is(p, "or") &&
		    !tok_is(p, "not"))
			return parse_call(p);
		return parse_feat(p);
	case TK_END:
		return fail_at(p, off, "expected a value, got the end");
	default:
		return fail_at(p, off, "expected a value");
	}
}

static int32_t parse_postfix(struct parser *p)
{
	int32_t n = parse_primary(p), i;
	size_t off;

	if (n < 0 || p->tok != '[')
		return n;
	off = p->tok_off;
	if (p->e->n[n].op != N_FEAT)
		return fail_at(p, off, "only a feature can be indexed");
	if (next(p))
		return -1;
	i = need(p, parse_sum(p), T_NUM, "a number (the index)");
	if (i < 0 || expect(p, ']', "']'"))
		return -1;
	return add_node(p, N_INDEX, T_ANY, p->e->n[n].off, n, i);
}

static int32_t parse_unary(struct parser *p)
{
	size_t off = p->tok_off;
	int32_t n;

	if (p->tok != '-')
		return parse_postfix(p);
	if (++p->nest > MAX_NEST)
		return fail_at(p, off, "expression nested too deeply");
	if (next(p))
		return -1;
	if (p->tok == TK_INT) {
		/* A negative literal, so that INT64_MIN can be written. */
		n = add_node(p, N_INT, T_NUM, off, -1, -1);
		if (n >= 0)
			p->e->n[n].v.i = (int64_t)(0 - p->ival);
		p->nest--;
		return n < 0 || next(p) ? -1 : n;
	}
	n = need(p, parse_unary(p), T_NUM, "a number");
	p->nest--;
	return n < 0 ? -1 : add_node(p, N_NEG, T_NUM, off, n, -1);
}

static int32_t parse_prod(struct parser *p)
{
	int32_t a = parse_unary(p), b;

	while (a >= 0 && (p->tok == '*' || p->tok == '/' || p->tok == '%')) {
		int op = p->tok == '*' ? N_MUL : p->tok == '/' ? N_DIV : N_MOD;

		if (need(p, a, T_NUM, "a number") < 0 || next(p))
			return -1;
		b = need(p, parse_unary(p), T_NUM, "a number");
		if (b < 0)
			return -1;
		a = add_node(p, op, T_NUM, p->e->n[a].off, a, b);
	}
	return a;
}

static int32_t parse_sum(struct parser *p)
{
	int32_t a = parse_prod(p), b;

	while (a >= 0 && (p->tok == '+' || p->tok == '-')) {
		int op = p->tok == '+' ? N_ADD : N_SUB;

		if (need(p, a, T_NUM, "a number") < 0 || next(p))
			return -1;
		b = need(p, parse_prod(p), T_NUM, "a number");
		if (b < 0)
			return -1;
		a = add_node(p, op, T_NUM, p->e->n[a].off, a, b);
	}
	return a;
}

static int compile_regex(struct parser *p, size_t off)
{
	struct tfk_expr *e = p->e;
	char *pat;
	int rc;

	/* An empty pattern may sit in a still unallocated string table. */
	if (p->slen && memchr(e->strs.data + p->soff, 0, p->slen))
		return fail_at(p, off, "a regex cannot hold a NUL byte");
	if (e->n_re == e->cap_re) {
		size_t cap = e->cap_re ? e->cap_re * 2 : 4;
		regex_t *nr = tfk_realloc(e->re, cap * sizeof(*nr));

		if (!nr)
			return fail_nomem(p);
		e->re = nr;
		e->cap_re = cap;
	}
	pat = tfk_malloc(p->slen + 1);
	if (!pat)
		return fail_nomem(p);
	if (p->slen)
		memcpy(pat, e->strs.data + p->soff, p->slen);
	pat[p->slen] = 0;
	rc = regcomp(&e->re[e->n_re], pat, REG_EXTENDED | REG_NOSUB);
	tfk_free(pat);
	if (rc) {
		char msg[128];

		regerror(rc, &e->re[e->n_re], msg, sizeof(msg));
		regfree(&e->re[e->n_re]);
		return fail_at(p, off, "bad regex: %s", msg);
	}
	return (int)e->n_re++;
}

static int32_t parse_cmp(struct parser *p)
{
	int32_t a = parse_sum(p), b, n;
	size_t op_off = p->tok_off;
	int op, ta, tb;

	if (a < 0)
		return -1;
	if (p->tok == '~') {
		int re;

		if (need(p, a, T_STR, "a string (before '~')") < 0 || next(p))
			return -1;
		if (p->tok != TK_STR)
			return fail_at(p, p->tok_off, "expected a regex "
				       "string after '~'");
		re = compile_regex(p, p->tok_off);
		if (re < 0)
			return -1;
		n = add_node(p, N_MATCH, T_BOOL, p->e->n[a].off, a, -1);
		if (n < 0)
			return -1;
		p->e->n[n].v.k = (uint64_t)re;
		return next(p) ? -1 : n;
	}
	switch (p->tok) {
	case TK_EQ: op = N_EQ; break;
	case TK_NE: op = N_NE; break;
	case TK_LT: op = N_LT; break;
	case TK_LE: op = N_LE; break;
	case TK_GT: op = N_GT; break;
	case TK_GE: op = N_GE; break;
	default: return a;
	}
	if (next(p))
		return -1;
	b = parse_sum(p);
	if (b < 0)
		return -1;
	ta = p->e->n[a].type;
	tb = p->e->n[b].type;
	if (!(ta & tb))
		return fail_at(p, op_off, "cannot compare %s with %s",
			       type_name(ta), type_name(tb));
	if (ta == T_BOOL && op != N_EQ && op != N_NE)
		return fail_at(p, op_off, "conditions can only be compared "
			       "with == and !=");
	if (p->tok == TK_EQ || p->tok == TK_NE || p->tok == TK_LT ||
	    p->tok == TK_LE || p->tok == TK_GT || p->tok == TK_GE ||
	    p->tok == '~')
		return fail_at(p, p->tok_off, "comparisons do not chain (use "
			       "'and')");
	return add_node(p, op, T_BOOL, p->e->n[a].off, a, b);
}

static int32_t parse_not(struct parser *p)
{
	size_t off = p->tok_off;
	int32_t n;

	if (!tok_is(p, "not"))
		return parse_cmp(p);
	if (++p->nest > MAX_NEST)
		return fail_at(p, off, "expression nested too deeply");
	if (next(p))
		return -1;
	n = need(p, parse_not(p), T_BOOL, "a condition");
	p->nest--;
	return n < 0 ? -1 : add_node(p, N_NOT, T_BOOL, off, n, -1);
}

static int32_t parse_and(struct parser *p)
{
	int32_t a = parse_not(p), b;

	while (a >= 0 && tok_is(p, "and")) {
		if (need(p, a, T_BOOL, "a condition") < 0 || next(p))
			return -1;
		b = need(p, parse_not(p), T_BOOL, "a condition");
		if (b < 0)
			return -1;
		a = add_node(p, N_AND, T_BOOL, p->e->n[a].off, a, b);
	}
	return a;
}

static int32_t parse_cond(struct parser *p)
{
	int32_t a, b;

	if (++p->nest > MAX_NEST)
		return fail_at(p, p->tok_off, "expression nested too deeply");
	a = parse_and(p);
	while (a >= 0 && tok_is(p, "or")) {
		if (need(p, a, T_BOOL, "a condition") < 0 || next(p))
			return -1;
		b = need(p, parse_and(p), T_BOOL, "a condition");
		if (b < 0)
			return -1;
		a = add_node(p, N_OR, T_BOOL, p->e->n[a].off, a, b);
	}
	p->nest--;
	return a;
}

void tfk_expr_free(struct tfk_expr *e)
{
	size_t i;

	if (!e)
		return;
	for (i = 0; i < e->n_re; i++)
		regfree(&e->re[i]);
	tfk_free(e->re);
	tfk_free(e->n);
	tfk_buf_release(&e->strs);
	tfk_free(e->i64);
	tfk_free(e->f32);
	tfk_buf_release(&e->re_tmp);
	tfk_free(e);
}

int tfk_expr_parse(struct tfk_expr **out, const char *src, size_t *err_off,
		   struct tfk_err *err)
{
	struct parser p;
	struct tfk_expr *e;
	int32_t root;

	*out = NULL;
	e = tfk_calloc(1, sizeof(*e));
	if (!e)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	tfk_buf_init(&e->strs);
	tfk_buf_init(&e->re_tmp);
	memset(&p, 0, sizeof(p));
	p.e = e;
	p.src = src;
	p.err = err;
	p.err_off = err_off;
	root = next(&p) ? -1 : parse_cond(&p);
	if (root >= 0 && p.tok != TK_END)
		fail_at(&p, p.tok_off, "unexpected '%.*s'",
			(int)(p.tok_len > 40 ? 40 : p.tok_len),
			src + p.tok_off);
	if (root >= 0 && !p.failed && e->n[root].type != T_BOOL)
		fail_at(&p, e->n[root].off, "expected a condition (e.g. "
			"a comparison), got %s", type_name(e->n[root].type));
	/* Never NULL, so "" in an expression without other strings is
	 * data + 0 of a real buffer. */
	tfk_buf_addc(&e->strs, 0);
	if (!p.failed && !tfk_buf_ok(&e->strs))
		fail_nomem(&p);
	if (p.failed) {
		tfk_expr_free(e);
		return p.failed;
	}
	e->root = root;
	*out = e;
	return 0;
}

void tfk_expr_set_seed(struct tfk_expr *e, uint64_t seed)
{
	e->seed = seed;
}

unsigned tfk_expr_n_random(const struct tfk_expr *e)
{
	return e->n_random;
}

uint64_t tfk_expr_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

double tfk_expr_random(uint64_t seed, uint64_t pos, uint64_t k)
{
	uint64_t h = tfk_expr_mix64(seed ^ tfk_expr_mix64(pos ^
							  tfk_expr_mix64(k)));

	return (double)(h >> 11) * 0x1p-53;
}

/* Evaluation ------------------------------------------------------------- */

enum { V_NONE, V_INT, V_FLOAT, V_STR, V_BOOL };

struct val {
	int t;
	int32_t feat;		/* N_FEAT node it came from, or -1 */
	union {
		int64_t i;
		double f;
		int b;
		struct { const uint8_t *p; size_t n; } s;
	} u;
};

struct ectx {
	struct tfk_expr *e;
	const struct tfk_example *ex;
	uint64_t pos;
	struct tfk_err *err;
};

static const char *feat_name(const struct tfk_expr *e, int32_t n, int *len)
{
	size_t l = e->n[n].v.s.len;

	*len = (int)(l > 200 ? 200 : l);
	return (const char *)e->strs.data + e->n[n].v.s.off;
}

/* "feature "x" (bytes)", "a number", "a string", for messages. */
static void describe(const struct ectx *c, const struct val *v, char *out,
		     size_t size)
{
	int len;
	const char *name;

	if (v->feat < 0) {
		snprintf(out, size, "%s", v->t == V_STR ? "a string" :
			 v->t == V_BOOL ? "a condition" : "a number");
		return;
	}
	name = feat_name(c->e, v->feat, &len);
	snprintf(out, size, "feature \"%.*s\" (%s)", len, name,
		 v->t == V_STR ? "bytes" : v->t == V_INT ? "int64" : "float");
}

static int type_error(const struct ectx *c, const struct val *v,
		      const char *want)
{
	char what[300];

	describe(c, v, what, sizeof(what));
	return tfk_errf(c->err, TFK_EINVAL, "%s where %s is needed", what,
			want);
}

static const struct tfk_feat *lookup(const struct ectx *c, int32_t n)
{
	const struct node *nd = &c->e->n[n];

	return tfk_example_findn(c->ex, (const char *)c->e->strs.data +
				 nd->v.s.off, nd->v.s.len);
}

static int missing(const struct ectx *c, int32_t n)
{
	int len;
	const char *name = feat_name(c->e, n, &len);

	return tfk_errf(c->err, TFK_EINVAL, "feature \"%.*s\": not in the "
			"record (test it with has() first)", len, name);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Value idx of feature node n (idx < 0 counts from the end); scalar:
 * the one value, or no value unless there is exactly one. */
static int feat_value(const struct ectx *c, int32_t n, int64_t idx,
		      int scalar, struct val *v)
{
	struct tfk_expr *e = c->e;
	const struct tfk_feat *f = lookup(c, n);
	uint64_t i;

	v->t = V_NONE;
	v->feat = n;
	if (!f)
		return missing(c, n);
	if (scalar && f->n != 1)
		return 0;
	if (idx < 0)
		idx += (int64_t)f->n;
	if (idx < 0 || (uint64_t)idx >= f->n || f->kind == TFK_FEAT_NONE)
		return 0;
	i = (uint64_t)idx;
	if (f->kind == TFK_FEAT_INT64) {
		if (i + 1 > e->i64_cap) {
			int64_t *ni = tfk_realloc(e->i64, (i + 1) * 8);

			if (!ni)
				return tfk_errf(c->err, TFK_ENOMEM,
						"out of memory");
			e->i64 = ni;
			e->i64_cap = i + 1;
		}
		tfk_feat_int64s(f, e->i64, i + 1);
		v->t = V_INT;
		v->u.i = e->i64[i];
	} else if (f->kind == TFK_FEAT_FLOAT) {
		float x;

		if (f->packed) {
			uint32_t bits = le32(f->packed + 4 * i);

			memcpy(&x, &bits, 4);
		} else {
			if (i + 1 > e->f32_cap) {
				float *nf = tfk_realloc(e->f32, (i + 1) * 4);

				if (!nf)
					return tfk_errf(c->err, TFK_ENOMEM,
							"out of memory");
				e->f32 = nf;
				e->f32_cap = i + 1;
			}
			tfk_feat_floats(f, e->f32, i + 1);
			x = e->f32[i];
		}
		v->t = V_FLOAT;
		v->u.f = x;
	} else {
		size_t it = 0;
		const uint8_t *p = NULL;
		size_t len = 0;
		uint64_t k;

		for (k = 0; k <= i; k++)
			if (!tfk_feat_bytes_next(f, &it, &p, &len))
				return 0;
		v->t = V_STR;
		v->u.s.p = p;
		v->u.s.n = len;
	}
	return 0;
}

static int eval(const struct ectx *c, int32_t ni, struct val *v);

static int eval_bool(const struct ectx *c, int32_t ni, int *b)
{
	struct val v;
	int rc = eval(c, ni, &v);

	*b = v.u.b;
	return rc;
}

static double num(const struct val *v)
{
	return v->t == V_INT ? (double)v->u.i : v->u.f;
}

static int is_num(const struct val *v)
{
	return v->t == V_INT || v->t == V_FLOAT;
}

static int arith(const struct ectx *c, int op, struct val *a, struct val *b,
		 struct val *v)
{
	v->feat = -1;
	v->t = V_NONE;
	if (a->t == V_STR)
		return type_error(c, a, "a number");
	if (b->t == V_STR)
		return type_error(c, b, "a number");
	if (a->t == V_NONE || b->t == V_NONE)
		return 0;
	if (a->t == V_INT && b->t == V_INT && op != N_DIV) {
		uint64_t x = (uint64_t)a->u.i, y = (uint64_t)b->u.i;
		int64_t r;

		v->t = V_INT;
		switch (op) {
		case N_ADD: v->u.i = (int64_t)(x + y); break;
		case N_SUB: v->u.i = (int64_t)(x - y); break;
		case N_MUL: v->u.i = (int64_t)(x * y); break;
		default:
			if (b->u.i == 0) {
				v->t = V_NONE;
				break;
			}
			r = b->u.i == -1 ? 0 : a->u.i % b->u.i;
			if (r != 0 && ((r < 0) != (b->u.i < 0)))
				r += b->u.i;
			v->u.i = r;
		}
		return 0;
	}
	v->t = V_FLOAT;
	switch (op) {
	case N_ADD: v->u.f = num(a) + num(b); break;
	case N_SUB: v->u.f = num(a) - num(b); break;
	case N_MUL: v->u.f = num(a) * num(b); break;
	case N_DIV: v->u.f = num(a) / num(b); break;
	default: {
		double x = num(a), y = num(b), r;

		if (y == 0) {
			v->t = V_NONE;
			break;
		}
		r = fmod(x, y);
		if (r != 0 && ((r < 0) != (y < 0)))
			r += y;
		v->u.f = r;
	}
	}
	return 0;
}

static int compare(const struct ectx *c, int op, const struct val *a,
		   const struct val *b, int *out)
{
	int r;

	if (a->t == V_NONE || b->t == V_NONE) {
		*out = op == N_NE;
		return 0;
	}
	if (is_num(a) && is_num(b)) {
		if (a->t == V_INT && b->t == V_INT) {
			int64_t x = a->u.i, y = b->u.i;

			r = x < y ? -1 : x > y;
		} else {
			double x = num(a), y = num(b);

			if (x != x || y != y) {	/* NaN: unordered */
				*out = op == N_NE;
				return 0;
			}
			r = x < y ? -1 : x > y;
		}
	} else if (a->t == V_STR && b->t == V_STR) {
		size_t n = a->u.s.n < b->u.s.n ? a->u.s.n : b->u.s.n;

		r = n ? memcmp(a->u.s.p, b->u.s.p, n) : 0;
		if (!r)
			r = a->u.s.n < b->u.s.n ? -1 : a->u.s.n > b->u.s.n;
	} else if (a->t == V_BOOL && b->t == V_BOOL) {
		r = a->u.b != b->u.b;
	} else {
		char da[300], db[300];

		describe(c, a, da, sizeof(da));
		describe(c, b, db, sizeof(db));
		return tfk_errf(c->err, TFK_EINVAL, "cannot compare %s with "
				"%s", da, db);
	}
	switch (op) {
	case N_EQ: *out = r == 0; break;
	case N_NE: *out = r != 0; break;
	case N_LT: *out = r < 0; break;
	case N_LE: *out = r <= 0; break;
	case N_GT: *out = r > 0; break;
	default: *out = r >= 0; break;
	}
	return 0;
}

static int eval(const struct ectx *c, int32_t ni, struct val *v)
{
	const struct node *nd = &c->e->n[ni];
	struct val a, b;
	int rc, x;

	v->feat = -1;
	v->t = V_BOOL;
	v->u.b = 0;
	switch (nd->op) {
	case N_INT:
		v->t = V_INT;
		v->u.i = nd->v.i;
		return 0;
	case N_FLOAT:
		v->t = V_FLOAT;
		v->u.f = nd->v.f;
		return 0;
	case N_STR:
		v->t = V_STR;
		v->u.s.p = c->e->strs.data + nd->v.s.off;
		v->u.s.n = nd->v.s.len;
		return 0;
	case N_BOOL:
		v->u.b = nd->v.b;
		return 0;
	case N_FEAT:
		return feat_value(c, ni, 0, 1, v);
	case N_INDEX:
		if ((rc = eval(c, nd->b, &b)))
			return rc;
		if (b.t == V_STR)
			return type_error(c, &b, "a number (the index)");
		if (b.t == V_NONE) {
			if (!lookup(c, nd->a))
				return missing(c, nd->a);
			v->t = V_NONE;
			v->feat = nd->a;
			return 0;
		}
		if (b.t == V_FLOAT) {
			int len;
			const char *name = feat_name(c->e, nd->a, &len);

			if (!(b.u.f >= -9.2e18 && b.u.f <= 9.2e18) ||
			    b.u.f != (double)(int64_t)b.u.f)
				return tfk_errf(c->err, TFK_EINVAL, "feature "
						"\"%.*s\": index %g is not an "
						"integer", len, name, b.u.f);
			b.u.i = (int64_t)b.u.f;
		}
		return feat_value(c, nd->a, b.u.i, 0, v);
	case N_LEN: {
		const struct tfk_feat *f = lookup(c, nd->a);

		v->t = V_INT;
		v->u.i = f ? (int64_t)f->n : 0;
		return 0;
	}
	case N_HAS:
		v->u.b = lookup(c, nd->a) != NULL;
		return 0;
	case N_RANDOM:
		v->t = V_FLOAT;
		v->u.f = tfk_expr_random(c->e->seed, c->pos, nd->v.k);
		return 0;
	case N_NEG:
		if ((rc = eval(c, nd->a, &a)))
			return rc;
		if (a.t == V_STR)
			return type_error(c, &a, "a number");
		v->t = a.t;
		if (a.t == V_INT)
			v->u.i = (int64_t)(0 - (uint64_t)a.u.i);
		else if (a.t == V_FLOAT)
			v->u.f = -a.u.f;
		return 0;
	case N_ADD: case N_SUB: case N_MUL: case N_DIV: case N_MOD:
		if ((rc = eval(c, nd->a, &a)) || (rc = eval(c, nd->b, &b)))
			return rc;
		return arith(c, nd->op, &a, &b, v);
	case N_EQ: case N_NE: case N_LT: case N_LE: case N_GT: case N_GE:
		if ((rc = eval(c, nd->a, &a)) || (rc = eval(c, nd->b, &b)))
			return rc;
		return compare(c, nd->op, &a, &b, &v->u.b);
	case N_MATCH: {
		regmatch_t m;

		if ((rc = eval(c, nd->a, &a)))
			return rc;
		if (a.t == V_NONE)
			return 0;
		if (a.t != V_STR)
			return type_error(c, &a, "a string (for '~')");
		if (a.u.s.n > INT_MAX)
			return tfk_errf(c->err, TFK_EINVAL, "value of %zu "
					"bytes is too long for a regex",
					a.u.s.n);
		/* REG_STARTEND: the value may hold NULs; glibc matches
		 * exactly [rm_so, rm_eo). It is still copied with a NUL
		 * after it: the value is not terminated in the record, and
		 * sanitizers' regexec interceptors read up to a NUL. */
		tfk_buf_reset(&c->e->re_tmp);
		tfk_buf_add(&c->e->re_tmp, a.u.s.p, a.u.s.n);
		tfk_buf_addc(&c->e->re_tmp, 0);
		if (!tfk_buf_ok(&c->e->re_tmp))
			return tfk_errf(c->err, TFK_ENOMEM, "out of memory");
		m.rm_so = 0;
		m.rm_eo = (regoff_t)a.u.s.n;
		v->u.b = regexec(&c->e->re[nd->v.k],
				 (const char *)c->e->re_tmp.data, 1, &m,
				 REG_STARTEND) == 0;
		return 0;
	}
	case N_STARTS:
		if ((rc = eval(c, nd->a, &a)) || (rc = eval(c, nd->b, &b)))
			return rc;
		if (a.t == V_NONE || b.t == V_NONE)
			return 0;
		if (a.t != V_STR)
			return type_error(c, &a, "a string");
		if (b.t != V_STR)
			return type_error(c, &b, "a string");
		v->u.b = b.u.s.n <= a.u.s.n &&
			 (!b.u.s.n || !memcmp(a.u.s.p, b.u.s.p, b.u.s.n));
		return 0;
	case N_AND:
	case N_OR:
		if ((rc = eval_bool(c, nd->a, &x)))
			return rc;
		if (x == (nd->op == N_OR)) {
			v->u.b = x;
			return 0;
		}
		return eval_bool(c, nd->b, &v->u.b);
	case N_NOT:
		if ((rc = eval_bool(c, nd->a, &x)))
			return rc;
		v->u.b = !x;
		return 0;
	}
	return tfk_errf(c->err, TFK_EINVAL, "bad expression node");
}

int tfk_expr_eval(struct tfk_expr *e, const struct tfk_example *ex,
		  uint64_t pos, struct tfk_err *err)
{
	struct ectx c = { e, ex, pos, err };
	struct val v;
	int rc = eval(&c, e->root, &v);

	return rc < 0 ? rc : v.u.b != 0;
}
