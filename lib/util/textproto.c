/*
 * textproto.c - protocol buffers' text format into a tree (textproto.h).
 *
 * A recursive-descent reader over a one-token lexer; the recursion is
 * bounded by TFK_TP_MAX_DEPTH, so hostile nesting ends in a message, not
 * in a stack overflow. Every node is allocated from the heap through
 * util/alloc, so the allocation-failure tests reach each path.
 */
#include "util/textproto.h"

#include "util/alloc.h"
#include "util/buf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum tok {
	T_END, T_IDENT, T_NUMBER, T_STRING, T_PUNCT
};

struct lex {
	const char *s, *file;
	size_t n, i;
	int line, col;
	/* the current token */
	enum tok t;
	size_t start, len;		/* its text */
	int tline, tcol;
	char punct;
	struct tfk_err *err;
};

static int is_ident0(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_ident(char c)
{
	return is_ident0(c) || is_digit(c);
}

static void advance(struct lex *x)
{
	if (x->s[x->i] == '\n') {
		x->line++;
		x->col = 1;
	} else {
		x->col++;
	}
	x->i++;
}

static int lex_err(struct lex *x, int code, const char *what)
{
	return tfk_errf(x->err, code, "%s:%d:%d: %s", x->file, x->tline,
			x->tcol, what);
}

/* A printable form of the current token, for messages. */
static void tok_text(const struct lex *x, char *out, size_t cap)
{
	if (x->t == T_END)
		snprintf(out, cap, "the end of the file");
	else if (x->len > 24)
		snprintf(out, cap, "'%.24s...'", x->s + x->start);
	else
		snprintf(out, cap, "'%.*s'", (int)x->len, x->s + x->start);
}

/* Read the next token into x; 0 or an error. */
static int next(struct lex *x)
{
	for (;;) {
		while (x->i < x->n && (x->s[x->i] == ' ' ||
				       x->s[x->i] == '\t' ||
				       x->s[x->i] == '\n' ||
				       x->s[x->i] == '\r' ||
				       x->s[x->i] == '\f' ||
				       x->s[x->i] == '\v'))
			advance(x);
		if (x->i < x->n && x->s[x->i] == '#') {
			while (x->i < x->n && x->s[x->i] != '\n')
				advance(x);
			continue;
		}
		break;
	}
	x->start = x->i;
	x->tline = x->line;
	x->tcol = x->col;
	if (x->i >= x->n) {
		x->t = T_END;
		x->len = 0;
		return 0;
	}
	if (is_ident0(x->s[x->i])) {
		while (x->i < x->n && is_ident(x->s[x->i]))
			advance(x);
		x->t = T_IDENT;
	} else if (is_digit(x->s[x->i]) || x->s[x->i] == '-' ||
		   x->s[x->i] == '.') {
		advance(x);
		while (x->i < x->n && (is_ident(x->s[x->i]) ||
				       x->s[x->i] == '.' ||
				       ((x->s[x->i] == '-' ||
					 x->s[x->i] == '+') &&
					(x->s[x->i - 1] == 'e' ||
					 x->s[x->i - 1] == 'E'))))
			advance(x);
		x->t = T_NUMBER;
	} else if (x->s[x->i] == '"' || x->s[x->i] == '\'') {
		char q = x->s[x->i];

		advance(x);
		while (x->i < x->n && x->s[x->i] != q) {
			if (x->s[x->i] == '\n')
				return lex_err(x, TFK_ECORRUPT,
					       "a string runs past the end "
					       "of its line");
			if (x->s[x->i] == '\\' && x->i + 1 < x->n)
				advance(x);
			advance(x);
		}
		if (x->i >= x->n)
			return lex_err(x, TFK_ETRUNC, "a string is not "
				       "closed before the end of the file");
		advance(x);
		x->t = T_STRING;
	} else {
		x->punct = x->s[x->i];
		advance(x);
		x->t = T_PUNCT;
	}
	x->len = x->i - x->start;
	return 0;
}

static int is_punct(const struct lex *x, char c)
{
	return x->t == T_PUNCT && x->punct == c;
}

static int hexval(char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Append the decoded body of the string token to *out (a heap buffer of
 * *len bytes, NUL-terminated).
 */
static int add_string(struct lex *x, char **out, size_t *len)
{
	const char *p = x->s + x->start + 1, *end = x->s + x->start +
		x->len - 1;
	char *b = tfk_realloc(*out, *len + x->len + 1);
	size_t k = *len;

	if (!b)
		return tfk_errf(x->err, TFK_ENOMEM, "%s: out of memory",
				x->file);
	*out = b;
	while (p < end) {
		char c = *p++;
		int v, d;

		if (c != '\\') {
			b[k++] = c;
			continue;
		}
		c = *p++;	/* the lexer saw a character after '\' */
		switch (c) {
		case 'n': b[k++] = '\n'; break;
		case 't': b[k++] = '\t'; break;
		case 'r': b[k++] = '\r'; break;
		case 'a': b[k++] = '\a'; break;
		case 'b': b[k++] = '\b'; break;
		case 'f': b[k++] = '\f'; break;
		case 'v': b[k++] = '\v'; break;
		case '\\': case '\'': case '"': case '?': b[k++] = c; break;
		case 'x': case 'X':
			if (p >= end || hexval(*p) < 0)
				return lex_err(x, TFK_ECORRUPT, "'\\x' with "
					       "no hex digit after it");
			v = hexval(*p++);
			if (p < end && hexval(*p) >= 0)
				v = v * 16 + hexval(*p++);
			b[k++] = (char)v;
			break;
		default:
			if (c < '0' || c > '7')
				return lex_err(x, TFK_ECORRUPT, "unknown "
					       "escape in a string");
			v = c - '0';
			for (d = 0; d < 2 && p < end && *p >= '0' && *p <= '7';
			     d++)
				v = v * 8 + (*p++ - '0');
			if (v > 255)
				return lex_err(x, TFK_ECORRUPT, "an octal "
					       "escape above \\377");
			b[k++] = (char)v;
		}
	}
	b[k] = 0;
	*len = k;
	return 0;
}

static void node_free(struct tfk_tp_node *f)
{
	int i;

	for (i = 0; i < f->n_kids; i++)
		node_free(&f->kids[i]);
	tfk_free(f->kids);
	tfk_free(f->name);
	tfk_free(f->value);
	memset(f, 0, sizeof(*f));
}

void tfk_tp_free(struct tfk_tp_node *root)
{
	if (root)
		node_free(root);
}

/* A new kid of m named by the token [start, len) at line:col. */
static struct tfk_tp_node *add_kid(struct lex *x, struct tfk_tp_node *m,
				   const char *name, int line, int col)
{
	struct tfk_tp_node *k = tfk_realloc(m->kids, (size_t)(m->n_kids + 1) *
					    sizeof(*k));

	if (!k) {
		tfk_errf(x->err, TFK_ENOMEM, "%s: out of memory", x->file);
		return NULL;
	}
	m->kids = k;
	k = &m->kids[m->n_kids];
	memset(k, 0, sizeof(*k));
	if (!(k->name = tfk_strdup(name))) {
		tfk_errf(x->err, TFK_ENOMEM, "%s: out of memory", x->file);
		return NULL;
	}
	m->n_kids++;
	k->line = line;
	k->col = col;
	return k;
}

static int parse_fields(struct lex *x, struct tfk_tp_node *m, char close,
			int depth);

/* A message body after its opening '{' or '<' (the current token). */
static int parse_msg(struct lex *x, struct tfk_tp_node *k, int depth)
{
	char close = x->punct == '<' ? '>' : '}';

	if (depth >= TFK_TP_MAX_DEPTH)
		return lex_err(x, TFK_ECORRUPT, "messages nested more than "
			       "64 deep");
	k->is_msg = 1;
	if (next(x))
		return x->err->code;
	return parse_fields(x, k, close, depth + 1);
}

/* A scalar value (the current token) into k; leaves the next token. */
static int parse_scalar(struct lex *x, struct tfk_tp_node *k)
{
	char what[64];

	if (x->t == T_STRING) {
		k->is_string = 1;
		while (x->t == T_STRING) {
			if (add_string(x, &k->value, &k->value_len))
				return x->err->code;
			if (next(x))
				return x->err->code;
		}
		return 0;
	}
	if (x->t != T_IDENT && x->t != T_NUMBER) {
		tok_text(x, what, sizeof(what));
		return tfk_errf(x->err, x->t == T_END ? TFK_ETRUNC :
				TFK_ECORRUPT, "%s:%d:%d: expected a value for "
				"'%s', found %s", x->file, x->tline, x->tcol,
				k->name, what);
	}
	if (!(k->value = tfk_malloc(x->len + 1)))
		return tfk_errf(x->err, TFK_ENOMEM, "%s: out of memory",
				x->file);
	memcpy(k->value, x->s + x->start, x->len);
	k->value[x->len] = 0;
	k->value_len = x->len;
	return next(x);
}

/* `name: [v, v, ...]` after the '[' (the current token). */
static int parse_list(struct lex *x, struct tfk_tp_node *m, const char *name,
		      int line, int col, int depth)
{
	char what[64];

	if (next(x))
		return x->err->code;
	if (is_punct(x, ']'))
		return next(x);
	for (;;) {
		struct tfk_tp_node *k = add_kid(x, m, name, line, col);

		if (!k)
			return x->err->code;
		if (is_punct(x, '{') || is_punct(x, '<')) {
			if (parse_msg(x, k, depth))
				return x->err->code;
		} else if (parse_scalar(x, k)) {
			return x->err->code;
		}
		if (is_punct(x, ']'))
			return next(x);
		if (!is_punct(x, ',')) {
			tok_text(x, what, sizeof(what));
			return tfk_errf(x->err, x->t == T_END ? TFK_ETRUNC :
					TFK_ECORRUPT, "%s:%d:%d: expected ',' "
					"or ']' in the list of '%s', found %s",
					x->file, x->tline, x->tcol, name,
					what);
		}
		if (next(x))
			return x->err->code;
	}
}

static int parse_fields(struct lex *x, struct tfk_tp_node *m, char close,
			int depth)
{
	char what[64], name[128];

	for (;;) {
		int line = x->tline, col = x->tcol, colon = 0;
		struct tfk_tp_node *k;

		if (x->t == T_END) {
			if (!close)
				return 0;
			return lex_err(x, TFK_ETRUNC, "the file ends inside "
				       "a message (a '}' is missing)");
		}
		if (close && is_punct(x, close))
			return next(x);
		if (is_punct(x, '['))
			return lex_err(x, TFK_EINVAL, "extension and Any "
				       "fields ('[...]') are not read");
		if (x->t != T_IDENT) {
			tok_text(x, what, sizeof(what));
			return tfk_errf(x->err, TFK_ECORRUPT, "%s:%d:%d: "
					"expected a field name, found %s",
					x->file, x->tline, x->tcol, what);
		}
		if (x->len >= sizeof(name))
			return lex_err(x, TFK_ECORRUPT, "a field name longer "
				       "than 127 characters");
		memcpy(name, x->s + x->start, x->len);
		name[x->len] = 0;
		if (next(x))
			return x->err->code;
		if (is_punct(x, ':')) {
			colon = 1;
			if (next(x))
				return x->err->code;
		}
		if (colon && is_punct(x, '[')) {
			if (parse_list(x, m, name, line, col, depth))
				return x->err->code;
		} else {
			if (!(k = add_kid(x, m, name, line, col)))
				return x->err->code;
			if (is_punct(x, '{') || is_punct(x, '<')) {
				if (parse_msg(x, k, depth))
					return x->err->code;
			} else if (!colon) {
				tok_text(x, what, sizeof(what));
				return tfk_errf(x->err, x->t == T_END ?
						TFK_ETRUNC : TFK_ECORRUPT,
						"%s:%d:%d: expected ':' or '{' "
						"after '%s', found %s",
						x->file, x->tline, x->tcol,
						name, what);
			} else if (parse_scalar(x, k)) {
				return x->err->code;
			}
		}
		if (is_punct(x, ',') || is_punct(x, ';'))
			if (next(x))
				return x->err->code;
	}
}

int tfk_tp_parse(const char *text, size_t n, const char *file,
		 struct tfk_tp_node *root, struct tfk_err *err)
{
	struct tfk_err local;
	struct lex x = { 0 };
	int rc;

	memset(root, 0, sizeof(*root));
	x.s = text;
	x.n = n;
	x.file = file;
	x.line = x.col = 1;
	x.err = err ? err : &local;
	root->is_msg = 1;
	root->line = root->col = 1;
	if (!(root->name = tfk_strdup("")))
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", file);
	rc = next(&x);
	if (!rc)
		rc = parse_fields(&x, root, 0, 0);
	if (rc)
		tfk_tp_free(root);
	return rc;
}

int tfk_tp_parse_file(const char *path, struct tfk_tp_node *root,
		      struct tfk_err *err)
{
	FILE *f = fopen(path, "rb");
	char *text;
	size_t n;
	int rc;

	memset(root, 0, sizeof(*root));
	if (!f)
		return tfk_errf(err, TFK_EIO, "%s: cannot open: %s", path,
				strerror(errno));
	if (!(text = tfk_malloc(TFK_TP_MAX_FILE_BYTES + 1))) {
		fclose(f);
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", path);
	}
	n = fread(text, 1, TFK_TP_MAX_FILE_BYTES + 1, f);
	if (ferror(f))
		rc = tfk_errf(err, TFK_EIO, "%s: cannot read: %s", path,
			      strerror(errno));
	else if (n > TFK_TP_MAX_FILE_BYTES)
		rc = tfk_errf(err, TFK_EINVAL, "%s: larger than %u bytes: "
			      "not a text-format config", path,
			      TFK_TP_MAX_FILE_BYTES);
	else
		rc = tfk_tp_parse(text, n, path, root, err);
	fclose(f);
	tfk_free(text);
	return rc;
}

/* Typed reads -------------------------------------------------------------- */

static int field_err(const struct tfk_tp_node *f, const char *file,
		     const char *what, struct tfk_err *err)
{
	return tfk_errf(err, TFK_EINVAL, "%s:%d:%d: field '%s': %s", file,
			f->line, f->col, f->name, what);
}

int tfk_tp_msg(const struct tfk_tp_node *f, const char *file,
	       struct tfk_err *err)
{
	return f->is_msg ? 0 : field_err(f, file, "expected a message "
					 "{ ... }", err);
}

int tfk_tp_string(const struct tfk_tp_node *f, const char *file,
		  const char **s, struct tfk_err *err)
{
	if (f->is_msg || !f->is_string)
		return field_err(f, file, "expected a quoted string", err);
	if (memchr(f->value, 0, f->value_len))
		return field_err(f, file, "the string holds a NUL byte", err);
	/* proto3 string fields are UTF-8; protobuf refuses other bytes */
	if (tfk_utf8_prefix((const uint8_t *)f->value, f->value_len) !=
	    f->value_len)
		return field_err(f, file, "the string is not valid UTF-8",
				 err);
	*s = f->value;
	return 0;
}

int tfk_tp_int(const struct tfk_tp_node *f, const char *file, int64_t lo,
	       int64_t hi, int64_t *v, struct tfk_err *err)
{
	char what[96], *end;
	long long x;

	if (f->is_msg || f->is_string || !f->value_len ||
	    !(is_digit(f->value[0]) || f->value[0] == '-'))
		return field_err(f, file, "expected an integer", err);
	errno = 0;
	x = strtoll(f->value, &end, 0);
	if (*end || errno || end == f->value)
		return field_err(f, file, "expected an integer", err);
	if (x < lo || x > hi) {
		snprintf(what, sizeof(what), "%lld is outside %" PRId64
			 "..%" PRId64, x, lo, hi);
		return field_err(f, file, what, err);
	}
	*v = (int64_t)x;
	return 0;
}

int tfk_tp_bool(const struct tfk_tp_node *f, const char *file, int *v,
		struct tfk_err *err)
{
	static const char *const yes[] = { "true", "True", "t", "1" },
		*const no[] = { "false", "False", "f", "0" };
	size_t i;

	if (!f->is_msg && !f->is_string)
		for (i = 0; i < 4; i++) {
			if (!strcmp(f->value, yes[i])) {
				*v = 1;
				return 0;
			}
			if (!strcmp(f->value, no[i])) {
				*v = 0;
				return 0;
			}
		}
	return field_err(f, file, "expected true or false", err);
}

int tfk_tp_unknown(const struct tfk_tp_node *f, const char *file,
		   const char *where, const char *known, struct tfk_err *err)
{
	return tfk_errf(err, TFK_EINVAL, "%s:%d:%d: unknown field '%s' in "
			"%s (known: %s)", file, f->line, f->col, f->name,
			where, known);
}
