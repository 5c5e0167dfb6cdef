/*
 * npy.c - .npy/.npz files, numpy's str() and Python literals (npy.h).
 *
 * The .npy header is a Python dict literal, so one small literal
 * parser serves both the header and `tfk-model run --input_exprs`
 * (saved_model_cli evaluates its argument with Python's eval; here
 * only literals exist, nothing is ever evaluated). .npz members are
 * read with libarchive, which already does zip for tfk-images.
 *
 * Float printing follows numpy's arrayprint (FloatingFormat, maxprec,
 * precision 8): each value's shortest round-trip digits (Dragon4
 * "unique"; here: the fewest %.*e digits that strtof/strtod give back
 * exactly, which is the same string because the correctly rounded
 * p-digit decimal lies in the round-trip interval whenever any p-digit
 * decimal does), cut at 8 fractional digits; scientific when the
 * largest magnitude is >= 1e8, the smallest < 1e-4, or their ratio >
 * 1e3; then padded to common widths and wrapped at 75 columns as
 * _formatArray does.
 */
#include "io/npy.h"

#include "io/out.h"
#include "util/alloc.h"
#include "util/limit.h"

#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIT_MAX_DEPTH 32
#define NPY_MAX_HEADER (1u << 20)
#define NPY_ALIGN 64		/* numpy/lib/format.py ARRAY_ALIGN */

/* Python literals ----------------------------------------------------- */

struct lp {
	const char *s, *p;
	struct tfk_err *err;
};

static int lp_fail(struct lp *l, const char *what)
{
	return tfk_errf(l->err, TFK_EINVAL, "column %d: %s",
			(int)(l->p - l->s) + 1, what);
}

static void lp_ws(struct lp *l)
{
	while (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' ||
	       *l->p == '\r')
		l->p++;
}

void tfk_lit_release(struct tfk_lit *v)
{
	int i;

	if (!v)
		return;
	for (i = 0; i < v->n; i++) {
		tfk_lit_release(&v->items[i]);
		if (v->keys)
			tfk_free(v->keys[i]);
	}
	tfk_free(v->items);
	tfk_free(v->keys);
	tfk_free(v->s);
	memset(v, 0, sizeof(*v));
}

static int lp_value(struct lp *l, struct tfk_lit *v, int depth);

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10)
		: -1;
}

static int lp_string(struct lp *l, struct tfk_lit *v)
{
	char q = *l->p++;
	const char *start = l->p;
	size_t cap = 16, n = 0;
	char *b = tfk_malloc(cap);

	if (!b)
		return tfk_errf(l->err, TFK_ENOMEM, "out of memory");
	for (;;) {
		int c = (unsigned char)*l->p;

		if (!c || c == '\n') {
			tfk_free(b);
			l->p = start - 1;
			return lp_fail(l, "unterminated string");
		}
		l->p++;
		if (c == q)
			break;
		if (c == '\\') {
			int e = (unsigned char)*l->p++;

			switch (e) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case '0': c = 0; break;
			case '\\': case '\'': case '"': c = e; break;
			case 'x':
				if (hexval(l->p[0]) < 0 || hexval(l->p[1]) < 0) {
					tfk_free(b);
					return lp_fail(l, "bad \\x escape");
				}
				c = hexval(l->p[0]) * 16 + hexval(l->p[1]);
				l->p += 2;
				break;
			default:
				tfk_free(b);
				l->p--;
				return lp_fail(l, "unsupported escape");
			}
		}
		if (n + 2 > cap) {
			char *nb = tfk_realloc(b, cap * 2);

			if (!nb) {
				tfk_free(b);
				return tfk_errf(l->err, TFK_ENOMEM,
						"out of memory");
			}
			b = nb;
			cap *= 2;
		}
		b[n++] = (char)c;
	}
	b[n] = 0;
	v->kind = TFK_LIT_STR;
	v->s = b;
	v->len = n;
	return 0;
}

static int lp_number(struct lp *l, struct tfk_lit *v)
{
	const char *q = l->p;
	int is_float = 0;
	char buf[128], *end;
	size_t n;

	if (*q == '-' || *q == '+')
		q++;
	if (!isdigit((unsigned char)*q) && !(*q == '.' &&
					     isdigit((unsigned char)q[1])))
		return lp_fail(l, "expected a value");
	while (isdigit((unsigned char)*q) || *q == '.' || *q == 'e' ||
	       *q == 'E' || *q == '_' ||
	       ((*q == '-' || *q == '+') && (q[-1] == 'e' || q[-1] == 'E'))) {
		if (*q == '.' || *q == 'e' || *q == 'E')
			is_float = 1;
		q++;
	}
	n = (size_t)(q - l->p);
	if (n >= sizeof(buf))
		return lp_fail(l, "number too long");
	memcpy(buf, l->p, n);
	buf[n] = 0;
	if (strchr(buf, '_'))
		return lp_fail(l, "digit separators not supported");
	errno = 0;
	if (is_float) {
		v->kind = TFK_LIT_FLOAT;
		v->f = strtod(buf, &end);
	} else {
		v->kind = TFK_LIT_INT;
		v->i = strtoll(buf, &end, 10);
		if (errno == ERANGE)
			return lp_fail(l, "integer out of int64 range");
		if (n > 1 && (buf[0] == '0' || ((buf[0] == '-' ||
						   buf[0] == '+') &&
						  buf[1] == '0' && n > 2)))
			if (v->i != 0)
				return lp_fail(l, "leading zeros in an "
					       "integer");
	}
	if (*end)
		return lp_fail(l, "malformed number");
	l->p = q;
	return 0;
}

/* [ ... ] or ( ... ): items into v; close is ']' or ')'. */
static int lp_seq(struct lp *l, struct tfk_lit *v, char close, int dict,
		  int depth)
{
	int cap = 0;

	v->kind = dict ? TFK_LIT_DICT : TFK_LIT_LIST;
	l->p++;
	for (;;) {
		struct tfk_lit item, key;
		int rc;

		lp_ws(l);
		if (*l->p == close) {
			l->p++;
			return 0;
		}
		memset(&item, 0, sizeof(item));
		memset(&key, 0, sizeof(key));
		if (dict) {
			if (*l->p != '\'' && *l->p != '"')
				return lp_fail(l, "expected a string key");
			rc = lp_string(l, &key);
			if (rc)
				return rc;
			lp_ws(l);
			if (*l->p != ':') {
				tfk_lit_release(&key);
				return lp_fail(l, "expected ':'");
			}
			l->p++;
		}
		rc = lp_value(l, &item, depth + 1);
		if (rc) {
			tfk_lit_release(&item);
			tfk_lit_release(&key);
			return rc;
		}
		if (v->n == cap) {
			int nc = cap ? cap * 2 : 4;
			struct tfk_lit *ni = tfk_realloc(v->items,
							 nc * sizeof(*ni));
			char **nk = NULL;

			if (ni)
				v->items = ni;
			if (ni && dict) {
				nk = tfk_realloc(v->keys, nc * sizeof(*nk));
				if (nk)
					v->keys = nk;
			}
			if (!ni || (dict && !nk)) {
				tfk_lit_release(&item);
				tfk_lit_release(&key);
				return tfk_errf(l->err, TFK_ENOMEM,
						"out of memory");
			}
			cap = nc;
		}
		v->items[v->n] = item;
		if (dict) {
			v->keys[v->n] = key.s;
			key.s = NULL;
		}
		v->n++;
		lp_ws(l);
		if (*l->p == ',') {
			l->p++;
			continue;
		}
		if (*l->p == close) {
			l->p++;
			return 0;
		}
		return lp_fail(l, close == ']' ? "expected ',' or ']'" :
			       close == ')' ? "expected ',' or ')'" :
			       "expected ',' or '}'");
	}
}

static int lp_value(struct lp *l, struct tfk_lit *v, int depth)
{
	memset(v, 0, sizeof(*v));
	if (depth > LIT_MAX_DEPTH)
		return lp_fail(l, "nested too deeply");
	lp_ws(l);
	switch (*l->p) {
	case '[':
		return lp_seq(l, v, ']', 0, depth);
	case '(':
		return lp_seq(l, v, ')', 0, depth);
	case '{':
		return lp_seq(l, v, '}', 1, depth);
	case '\'':
	case '"':
		return lp_string(l, v);
	case 'b':
		if (l->p[1] == '\'' || l->p[1] == '"') {
			l->p++;
			return lp_string(l, v);
		}
		break;
	case 'T':
		if (!strncmp(l->p, "True", 4) && !isalnum((unsigned char)
							  l->p[4])) {
			l->p += 4;
			v->kind = TFK_LIT_BOOL;
			v->i = 1;
			return 0;
		}
		break;
	case 'F':
		if (!strncmp(l->p, "False", 5) && !isalnum((unsigned char)
							   l->p[5])) {
			l->p += 5;
			v->kind = TFK_LIT_BOOL;
			return 0;
		}
		break;
	default:
		break;
	}
	if (isalpha((unsigned char)*l->p) || *l->p == '_')
		return lp_fail(l, "names and calls are not literals (only "
			       "numbers, strings, True/False, lists, tuples "
			       "and dicts)");
	return lp_number(l, v);
}

int tfk_lit_parse(const char *s, struct tfk_lit *v, struct tfk_err *err)
{
	struct lp l = { s, s, err };
	int rc = lp_value(&l, v, 0);

	if (!rc) {
		lp_ws(&l);
		if (*l.p)
			rc = lp_fail(&l, "unexpected text after the value");
	}
	if (rc)
		tfk_lit_release(v);
	return rc;
}

/* Literal -> tensor ----------------------------------------------------- */

struct shape_scan {
	int rank;
	int64_t shape[TFK_MAX_RANK];
	int has_float, has_int, has_bool, has_str;
};

static int scan_lit(const struct tfk_lit *v, int d, struct shape_scan *sc,
		    struct tfk_err *err)
{
	int i, rc;

	if (v->kind == TFK_LIT_DICT)
		return tfk_errf(err, TFK_EINVAL, "a dict is not an array "
				"element");
	if (v->kind != TFK_LIT_LIST) {
		if (sc->rank < 0)
			sc->rank = d;
		else if (sc->rank != d)
			return tfk_errf(err, TFK_EINVAL, "ragged nested lists "
					"(a value at depth %d, another at "
					"%d)", d, sc->rank);
		sc->has_float |= v->kind == TFK_LIT_FLOAT;
		sc->has_int |= v->kind == TFK_LIT_INT;
		sc->has_bool |= v->kind == TFK_LIT_BOOL;
		sc->has_str |= v->kind == TFK_LIT_STR;
		return 0;
	}
	if (d >= TFK_MAX_RANK)
		return tfk_errf(err, TFK_EINVAL, "more than %d nested lists",
				TFK_MAX_RANK);
	if (sc->shape[d] < 0)
		sc->shape[d] = v->n;
	else if (sc->shape[d] != v->n)
		return tfk_errf(err, TFK_EINVAL, "ragged nested lists (dim "
				"%d: %" PRId64 " vs %d)", d, sc->shape[d],
				v->n);
	if (v->n == 0) {
		if (sc->rank < 0)
			sc->rank = d + 1;
		else if (sc->rank != d + 1)
			return tfk_errf(err, TFK_EINVAL, "ragged nested "
					"lists");
	}
	for (i = 0; i < v->n; i++) {
		rc = scan_lit(&v->items[i], d + 1, sc, err);
		if (rc)
			return rc;
	}
	return 0;
}

static int fill_lit(const struct tfk_lit *v, struct tfk_tensor *t,
		    int64_t *k, struct tfk_err *err)
{
	int i, rc;

	if (v->kind == TFK_LIT_LIST) {
		for (i = 0; i < v->n; i++) {
			rc = fill_lit(&v->items[i], t, k, err);
			if (rc)
				return rc;
		}
		return 0;
	}
	switch (t->dtype) {
	case TFK_DT_DOUBLE:
		((double *)t->data)[*k] = v->kind == TFK_LIT_FLOAT ? v->f :
			(double)v->i;
		break;
	case TFK_DT_INT64:
		((int64_t *)t->data)[*k] = v->i;
		break;
	case TFK_DT_BOOL:
		((uint8_t *)t->data)[*k] = (uint8_t)v->i;
		break;
	default:
		rc = tfk_tensor_set_str(t, *k, v->s, v->len, err);
		if (rc)
			return rc;
	}
	(*k)++;
	return 0;
}

int tfk_lit_to_tensor(const struct tfk_lit *v, struct tfk_tensor *t,
		      struct tfk_err *err)
{
	struct shape_scan sc;
	enum tfk_dtype dt;
	int64_t k = 0;
	int i, rc;

	memset(t, 0, sizeof(*t));
	memset(&sc, 0, sizeof(sc));
	sc.rank = -1;
	for (i = 0; i < TFK_MAX_RANK; i++)
		sc.shape[i] = -1;
	rc = scan_lit(v, 0, &sc, err);
	if (rc)
		return rc;
	if (sc.has_str && (sc.has_float || sc.has_int || sc.has_bool))
		return tfk_errf(err, TFK_EINVAL, "mixed strings and numbers");
	if (sc.has_bool && (sc.has_float || sc.has_int))
		return tfk_errf(err, TFK_EINVAL, "mixed booleans and "
				"numbers");
	dt = sc.has_str ? TFK_DT_STRING : sc.has_float ? TFK_DT_DOUBLE :
		sc.has_bool ? TFK_DT_BOOL : sc.has_int ? TFK_DT_INT64 :
		TFK_DT_DOUBLE;	/* [] is float64 in numpy */
	for (i = 0; i < sc.rank; i++)
		if (sc.shape[i] < 0)
			sc.shape[i] = 0;
	rc = tfk_tensor_init(t, dt, sc.rank, sc.shape, err);
	if (!rc)
		rc = fill_lit(v, t, &k, err);
	if (rc)
		tfk_tensor_release(t);
	return rc;
}

/* .npy decoding ---------------------------------------------------------- */

struct descr {
	enum tfk_dtype dtype;
	int swap;		/* big-endian data */
	int kind;		/* 'f' 'i' 'u' 'b' 'S' 'U' */
	size_t itemsize;
};

static int parse_descr(const char *d, struct descr *o, struct tfk_err *err)
{
	char order = d[0], kind;
	long size;
	char *end;

	memset(o, 0, sizeof(*o));
	if (order != '<' && order != '>' && order != '|' && order != '=')
		goto bad;
	kind = d[1];
	if (kind == 'O')
		return tfk_errf(err, TFK_EINVAL, "descr '%s' not supported "
				"(object arrays are pickles)", d);
	size = strtol(d + 2, &end, 10);
	if (*end || size < 0 || size > (1 << 20) || !d[2])
		goto bad;
	o->kind = kind;
	o->itemsize = (size_t)size;
	o->swap = order == '>';
	switch (kind) {
	case 'f':
		o->dtype = size == 2 ? TFK_DT_HALF : size == 4 ? TFK_DT_FLOAT
			: size == 8 ? TFK_DT_DOUBLE : TFK_DT_INVALID;
		break;
	case 'i':
		o->dtype = size == 1 ? TFK_DT_INT8 : size == 2 ? TFK_DT_INT16
			: size == 4 ? TFK_DT_INT32 : size == 8 ? TFK_DT_INT64 :
			TFK_DT_INVALID;
		break;
	case 'u':
		o->dtype = size == 1 ? TFK_DT_UINT8 : TFK_DT_INVALID;
		break;
	case 'b':
		o->dtype = size == 1 ? TFK_DT_BOOL : TFK_DT_INVALID;
		break;
	case 'S':
	case 'U':
		/* an item of 0 bytes: the data-size check passes for any
		 * count, while each element costs a tfk_str (numpy refuses
		 * to read such a file too: "itemsize cannot be zero") */
		if (!size)
			return tfk_errf(err, TFK_EINVAL, "descr '%s': item "
					"size 0 not supported", d);
		o->dtype = TFK_DT_STRING;
		if (kind == 'U')
			o->itemsize *= 4;
		break;
	default:
		o->dtype = TFK_DT_INVALID;
	}
	if (o->dtype == TFK_DT_INVALID)
		return tfk_errf(err, TFK_EINVAL, "descr '%s' not supported%s",
				d, kind == 'O' ? " (object arrays are "
				"pickles)" : "");
	return 0;
bad:
	return tfk_errf(err, TFK_ECORRUPT, "bad descr '%s'", d);
}

/* UCS-4 little/big endian code points -> UTF-8 into b. */
static int ucs4_to_utf8(const uint8_t *p, size_t n, int swap, char *b,
			size_t *len)
{
	size_t i, o = 0;

	for (i = 0; i + 4 <= n; i += 4) {
		uint32_t c = swap ? ((uint32_t)p[i] << 24 |
				     (uint32_t)p[i + 1] << 16 |
				     (uint32_t)p[i + 2] << 8 | p[i + 3]) :
			((uint32_t)p[i + 3] << 24 | (uint32_t)p[i + 2] << 16 |
			 (uint32_t)p[i + 1] << 8 | p[i]);

		if (c > 0x10ffff)
			return -1;
		if (c < 0x80) {
			b[o++] = (char)c;
		} else if (c < 0x800) {
			b[o++] = (char)(0xc0 | c >> 6);
			b[o++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			b[o++] = (char)(0xe0 | c >> 12);
			b[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
			b[o++] = (char)(0x80 | (c & 0x3f));
		} else {
			b[o++] = (char)(0xf0 | c >> 18);
			b[o++] = (char)(0x80 | ((c >> 12) & 0x3f));
			b[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
			b[o++] = (char)(0x80 | (c & 0x3f));
		}
	}
	while (o && !b[o - 1])
		o--;
	*len = o;
	return 0;
}

int tfk_npy_decode(const void *data, size_t n, struct tfk_tensor *t,
		   struct tfk_err *err)
{
	const uint8_t *p = data;
	size_t hlen, off, need, i, j;
	struct tfk_lit hd;
	struct descr ds;
	const struct tfk_lit *dv = NULL, *fo = NULL, *sh = NULL;
	int64_t shape[TFK_MAX_RANK], numel;
	int rank, k, rc;
	char *hs;

	memset(t, 0, sizeof(*t));
	if (n < 10 || memcmp(p, "\x93NUMPY", 6))
		return tfk_errf(err, TFK_ECORRUPT, "byte 0: not a .npy file "
				"(no \\x93NUMPY magic)");
	if (p[6] == 1) {
		hlen = p[8] | (size_t)p[9] << 8;
		off = 10;
	} else if (p[6] == 2 || p[6] == 3) {
		if (n < 12)
			return tfk_errf(err, TFK_ECORRUPT, "byte %zu: "
					"truncated header", n);
		hlen = p[8] | (size_t)p[9] << 8 | (size_t)p[10] << 16 |
			(size_t)p[11] << 24;
		off = 12;
	} else {
		return tfk_errf(err, TFK_ECORRUPT, "byte 6: format version "
				"%d.%d not supported", p[6], p[7]);
	}
	if (hlen > NPY_MAX_HEADER || hlen > n - off)
		return tfk_errf(err, TFK_ECORRUPT, "byte %zu: header of %zu "
				"bytes, file has %zu", off, hlen, n - off);
	hs = tfk_malloc(hlen + 1);
	if (!hs)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	memcpy(hs, p + off, hlen);
	hs[hlen] = 0;
	if (strlen(hs) != hlen) {
		tfk_free(hs);
		return tfk_errf(err, TFK_ECORRUPT, "byte %zu: NUL in the "
				"header", off);
	}
	rc = tfk_lit_parse(hs, &hd, err);
	tfk_free(hs);
	if (rc == TFK_ENOMEM)
		return rc;
	if (rc) {
		tfk_err_prefix(err, "byte %zu: header", off);
		if (err)
			err->code = TFK_ECORRUPT;
		return TFK_ECORRUPT;
	}
	if (hd.kind != TFK_LIT_DICT) {
		tfk_lit_release(&hd);
		return tfk_errf(err, TFK_ECORRUPT, "byte %zu: header is not "
				"a dict", off);
	}
	for (k = 0; k < hd.n; k++) {
		if (!strcmp(hd.keys[k], "descr"))
			dv = &hd.items[k];
		else if (!strcmp(hd.keys[k], "fortran_order"))
			fo = &hd.items[k];
		else if (!strcmp(hd.keys[k], "shape"))
			sh = &hd.items[k];
	}
	rc = 0;
	if (!dv || dv->kind != TFK_LIT_STR || !fo || fo->kind !=
	    TFK_LIT_BOOL || !sh || sh->kind != TFK_LIT_LIST)
		rc = tfk_errf(err, TFK_ECORRUPT, "byte %zu: header needs "
			      "'descr' (a string), 'fortran_order' (a bool) "
			      "and 'shape' (a tuple)", off);
	else if (sh->n > TFK_MAX_RANK)
		rc = tfk_errf(err, TFK_EINVAL, "rank %d is more than %d",
			      sh->n, TFK_MAX_RANK);
	if (!rc) {
		rank = sh->n;
		for (k = 0; k < rank && !rc; k++) {
			if (sh->items[k].kind != TFK_LIT_INT ||
			    sh->items[k].i < 0)
				rc = tfk_errf(err, TFK_ECORRUPT, "byte %zu: "
					      "shape[%d] is not a size", off,
					      k);
			shape[k] = sh->items[k].i;
		}
	}
	if (!rc)
		rc = parse_descr(dv->s, &ds, err);
	if (rc) {
		tfk_lit_release(&hd);
		return rc;
	}
	off += hlen;
	rc = tfk_shape_numel(rank, shape, ds.itemsize, &numel, err);
	if (!rc && (size_t)numel * ds.itemsize > n - off) {
		char b[128];

		rc = tfk_errf(err, TFK_ECORRUPT, "byte %zu: %zu bytes of "
			      "data, shape %s needs %zu", off, n - off,
			      tfk_shape_str(rank, shape, b, sizeof(b)),
			      (size_t)numel * ds.itemsize);
	}
	if (!rc)
		rc = tfk_tensor_init(t, ds.dtype, rank, shape, err);
	if (rc) {
		tfk_lit_release(&hd);
		return rc;
	}
	need = (size_t)numel * ds.itemsize;
	if (ds.dtype == TFK_DT_STRING) {
		char *b = tfk_malloc(ds.itemsize + 1);

		for (i = 0; b && i < (size_t)numel && !rc; i++) {
			const uint8_t *q = p + off + i * ds.itemsize;
			size_t len = ds.itemsize;

			if (ds.kind == 'U') {
				if (ucs4_to_utf8(q, ds.itemsize, ds.swap, b,
						 &len))
					rc = tfk_errf(err, TFK_ECORRUPT,
						      "byte %zu: bad code "
						      "point", off + i *
						      ds.itemsize);
			} else {
				while (len && !q[len - 1])
					len--;
				memcpy(b, q, len);
			}
			if (!rc)
				rc = tfk_tensor_set_str(t, (int64_t)i, b, len,
							err);
		}
		if (!b)
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		tfk_free(b);
	} else if (fo->i && rank > 1) {
		/* Fortran order: element at C index c lies at the offset of
		 * its coordinates with the first dim fastest */
		size_t es = ds.itemsize;
		int64_t c, co[TFK_MAX_RANK];

		for (c = 0; c < numel; c++) {
			int64_t r = c, fo_off = 0, st = 1;

			for (k = rank - 1; k >= 0; k--) {
				co[k] = r % shape[k];
				r /= shape[k];
			}
			for (k = 0; k < rank; k++) {
				fo_off += co[k] * st;
				st *= shape[k];
			}
			memcpy((char *)t->data + c * es, p + off + fo_off * es,
			       es);
		}
	} else if (need) {
		memcpy(t->data, p + off, need);
	}
	if (!rc && ds.swap && ds.dtype != TFK_DT_STRING && ds.itemsize > 1) {
		uint8_t *d = t->data;

		for (i = 0; i < (size_t)numel; i++)
			for (j = 0; j < ds.itemsize / 2; j++) {
				uint8_t x = d[i * ds.itemsize + j];

				d[i * ds.itemsize + j] =
					d[i * ds.itemsize + ds.itemsize - 1 -
					  j];
				d[i * ds.itemsize + ds.itemsize - 1 - j] = x;
			}
	}
	if (!rc && ds.dtype == TFK_DT_BOOL) {
		uint8_t *d = t->data;

		for (i = 0; i < (size_t)numel; i++)
			d[i] = d[i] != 0;
	}
	tfk_lit_release(&hd);
	if (rc)
		tfk_tensor_release(t);
	return rc;
}

/* Reading files ---------------------------------------------------------- */

static int slurp(const char *path, struct tfk_buf *b, struct tfk_err *err)
{
	FILE *f = fopen(path, "rb");
	char tmp[65536];
	size_t n;

	if (!f)
		return tfk_errf(err, TFK_EIO, "%s", strerror(errno));
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0)
		tfk_buf_add(b, tmp, n);
	if (ferror(f)) {
		fclose(f);
		return tfk_errf(err, TFK_EIO, "%s", strerror(errno));
	}
	fclose(f);
	return tfk_buf_ok(b) ? 0 : tfk_errf(err, TFK_ENOMEM, "out of memory");
}

static int read_npz(const struct tfk_buf *zip, const char *key,
		    struct tfk_tensor *t, struct tfk_err *err)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	struct tfk_buf names, data;
	int n_members = 0, rc = TFK_ENOTFOUND, r;
	uint64_t max;

	tfk_buf_init(&names);
	tfk_buf_init(&data);
	/* a deflated member inflates ~1000:1: no more .npy bytes than the
	 * largest tensor (graph/tensor.h) and its header can take */
	rc = tfk_limit_get("TFK_MAX_TENSOR_BYTES",
			   TFK_TENSOR_MAX_BYTES_DEFAULT, &max, err);
	if (rc) {
		archive_read_free(a);
		return rc;
	}
	rc = TFK_ENOTFOUND;
	max = max > UINT64_MAX - NPY_MAX_HEADER - 16 ? UINT64_MAX :
		max + NPY_MAX_HEADER + 16;
	if (!a)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	archive_read_support_format_zip(a);
	if (archive_read_open_memory(a, zip->data, zip->len) != ARCHIVE_OK) {
		rc = tfk_errf(err, TFK_ECORRUPT, "not a zip archive: %s",
			      archive_error_string(a));
		goto out;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *nm = archive_entry_pathname(e);
		size_t len = nm ? strlen(nm) : 0;
		char buf[65536];
		la_ssize_t got;

		if (!nm || len < 4 || strcmp(nm + len - 4, ".npy"))
			continue;
		n_members++;
		tfk_buf_addf(&names, "%s%.*s", names.len ? ", " : "",
			     (int)(len - 4), nm);
		if (key ? (strlen(key) != len - 4 ||
			   strncmp(nm, key, len - 4)) : n_members > 1)
			continue;
		tfk_buf_reset(&data);
		while ((got = archive_read_data(a, buf, sizeof(buf))) > 0) {
			if ((uint64_t)got > max - data.len) {
				rc = tfk_errf(err, TFK_EINVAL, "member %s: more "
					      "than %" PRIu64 " bytes (the limit "
					      "of TFK_MAX_TENSOR_BYTES and a "
					      "header)", nm, max);
				goto out;
			}
			tfk_buf_add(&data, buf, (size_t)got);
		}
		if (got < 0) {
			rc = tfk_errf(err, TFK_ECORRUPT, "member %s: %s", nm,
				      archive_error_string(a));
			goto out;
		}
		if (!tfk_buf_ok(&data)) {
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
			goto out;
		}
		tfk_tensor_release(t);
		rc = tfk_npy_decode(data.data, data.len, t, err);
		if (rc) {
			tfk_err_prefix(err, "member %s", nm);
			goto out;
		}
	}
	if (r != ARCHIVE_EOF) {
		tfk_tensor_release(t);
		rc = tfk_errf(err, TFK_ECORRUPT, "%s",
			      archive_error_string(a));
		goto out;
	}
	tfk_buf_addc(&names, 0);
	if (!key && n_members != 1) {
		tfk_tensor_release(t);
		rc = tfk_errf(err, TFK_EINVAL, "%d arrays (%s): name one as "
			      "FILE[NAME]", n_members,
			      names.data ? (char *)names.data : "");
	} else if (rc == TFK_ENOTFOUND) {
		rc = tfk_errf(err, TFK_ENOTFOUND, "no array '%s' (arrays: %s)",
			      key ? key : "", names.len > 1 ?
			      (char *)names.data : "none");
	}
out:
	archive_read_free(a);
	tfk_buf_release(&names);
	tfk_buf_release(&data);
	return rc;
}

int tfk_npy_read(const char *path, const char *key, struct tfk_tensor *t,
		 struct tfk_err *err)
{
	struct tfk_buf b;
	int rc;

	memset(t, 0, sizeof(*t));
	tfk_buf_init(&b);
	rc = slurp(path, &b, err);
	if (!rc && b.len >= 4 && !memcmp(b.data, "PK\x03\x04", 4))
		rc = read_npz(&b, key, t, err);
	else if (!rc)
		rc = tfk_npy_decode(b.data, b.len, t, err);
	tfk_buf_release(&b);
	return rc ? tfk_err_prefix(err, "%s", path) : 0;
}

/* .npy encoding ---------------------------------------------------------- */

static const char *descr_of(enum tfk_dtype t)
{
	switch (t) {
	case TFK_DT_FLOAT: return "<f4";
	case TFK_DT_DOUBLE: return "<f8";
	case TFK_DT_HALF: return "<f2";
	case TFK_DT_INT8: return "|i1";
	case TFK_DT_INT16: return "<i2";
	case TFK_DT_INT32: return "<i4";
	case TFK_DT_INT64: return "<i8";
	case TFK_DT_UINT8: return "|u1";
	case TFK_DT_BOOL: return "|b1";
	default: return NULL;
	}
}

int tfk_npy_encode(const struct tfk_tensor *t, struct tfk_buf *out,
		   struct tfk_err *err)
{
	struct tfk_buf h;
	const char *d = descr_of(t->dtype);
	size_t smax = 1, hl, pad, i;
	int64_t n = tfk_tensor_numel(t);
	int k;
	char sd[32];

	if (t->dtype == TFK_DT_STRING) {
		for (i = 0; i < (size_t)n; i++)
			if (tfk_tensor_str(t, i).len > smax)
				smax = tfk_tensor_str(t, i).len;
		snprintf(sd, sizeof(sd), "|S%zu", smax);
		d = sd;
	}
	if (!d)
		return tfk_errf(err, TFK_EINVAL, "cannot write %s as .npy",
				tfk_dtype_name(t->dtype));
	tfk_buf_init(&h);
	tfk_buf_addf(&h, "{'descr': '%s', 'fortran_order': False, "
		     "'shape': (", d);
	for (k = 0; k < t->rank; k++)
		tfk_buf_addf(&h, "%s%" PRId64, k ? ", " : "", t->shape[k]);
	tfk_buf_adds(&h, t->rank == 1 ? ",), }" : "), }");
	/* as numpy's _wrap_header: pad so 10 + len + 1 is a multiple of
	 * 64 (a full 64 when already aligned) */
	hl = h.len + 1;
	pad = NPY_ALIGN - ((10 + hl) % NPY_ALIGN);
	for (i = 0; i < pad; i++)
		tfk_buf_addc(&h, ' ');
	tfk_buf_addc(&h, '\n');
	if (h.len > 65535) {
		tfk_buf_release(&h);
		return tfk_errf(err, TFK_EINVAL, "header too long");
	}
	tfk_buf_add(out, "\x93NUMPY\x01\x00", 8);
	tfk_buf_addc(out, (int)(h.len & 0xff));
	tfk_buf_addc(out, (int)(h.len >> 8));
	tfk_buf_add(out, h.data, h.len);
	tfk_buf_release(&h);
	if (t->dtype == TFK_DT_STRING) {
		for (i = 0; i < (size_t)n; i++) {
			struct tfk_str s = tfk_tensor_str(t, i);

			if (s.len)
				tfk_buf_add(out, s.ptr, s.len);
			for (; s.len < smax; s.len++)
				tfk_buf_addc(out, 0);
		}
	} else if (t->nbytes) {
		tfk_buf_add(out, t->data, t->nbytes);
	}
	return tfk_buf_ok(out) ? 0 : tfk_errf(err, TFK_ENOMEM,
					      "out of memory");
}

int tfk_npy_write(const char *path, const struct tfk_tensor *t,
		  struct tfk_err *err)
{
	struct tfk_buf b;
	struct tfk_out *o;
	int rc;

	tfk_buf_init(&b);
	rc = tfk_npy_encode(t, &b, err);
	if (!rc)
		rc = tfk_out_open(&o, path, TFK_COMP_NONE, err);
	if (!rc) {
		rc = tfk_out_write(o, b.data, b.len, err);
		if (rc)
			tfk_out_discard(o);
		else
			rc = tfk_out_close(o, err);
	}
	tfk_buf_release(&b);
	return rc;
}

/* numpy str() -------------------------------------------------------- */

static uint16_t float_to_half_rt(float f)
{
	/* round-to-nearest-even float -> half, for round-trip checks */
	uint32_t x;
	uint16_t s;
	int e;
	float a;

	memcpy(&x, &f, 4);
	s = (uint16_t)((x >> 16) & 0x8000);
	a = fabsf(f);
	if (isnan(f))
		return s | 0x7e00;
	if (a >= 65520.0f)
		return s | 0x7c00;
	if (a < ldexpf(1, -14)) {
		float q = nearbyintf(a * ldexpf(1, 24));

		return s | (uint16_t)q;
	}
	e = ilogbf(a);
	{
		float m = nearbyintf(ldexpf(a, 10 - e));	/* 1024..2048 */

		if (m >= 2048) {
			m /= 2;
			e++;
		}
		if (e > 15)
			return s | 0x7c00;
		return s | (uint16_t)((e + 15) << 10 | ((int)m - 1024));
	}
}

/* Element i as double, and its "width" for the round-trip test. */
enum ftype { F16, F32, F64 };

static double elem_f(const struct tfk_tensor *t, int64_t i, enum ftype *ft)
{
	switch (t->dtype) {
	case TFK_DT_FLOAT:
		*ft = F32;
		return ((const float *)t->data)[i];
	case TFK_DT_HALF:
		*ft = F16;
		return tfk_half_to_float(((const uint16_t *)t->data)[i]);
	default:
		*ft = F64;
		return ((const double *)t->data)[i];
	}
}

static int round_trips(const char *s, double x, enum ftype ft)
{
	if (ft == F32)
		return strtof(s, NULL) == (float)x;
	if (ft == F16)
		return tfk_half_to_float(float_to_half_rt(strtof(s, NULL))) ==
			(float)x;
	return strtod(s, NULL) == x;
}

/* Shortest digits of |x| (x finite, != 0): digits into d (no dot),
 * decimal exponent of the first digit into *e. */
static void shortest(double x, enum ftype ft, char *d, int *e)
{
	char buf[64];
	int p;

	for (p = 1; p <= 17; p++) {
		snprintf(buf, sizeof(buf), "%.*e", p - 1, x);
		if (round_trips(buf, x, ft))
			break;
	}
	{
		char *q = buf, *o = d;

		if (*q == '-')
			q++;
		while (*q && *q != 'e') {
			if (*q != '.')
				*o++ = *q;
			q++;
		}
		*o = 0;
		*e = atoi(q + 1);
	}
	/* drop trailing zeros ("%.0e" of 100 is "1e+02" already) */
	p = (int)strlen(d);
	while (p > 1 && d[p - 1] == '0')
		d[--p] = 0;
}

/* Positional: int part and fraction (unique digits, at most prec
 * fractional digits, trailing zeros trimmed). */
static void fmt_pos(double x, enum ftype ft, int prec, char *ip, char *fp)
{
	char d[40], buf[400];
	int e, nd, k;
	char *dot;

	if (x == 0) {
		strcpy(ip, signbit(x) ? "-0" : "0");
		fp[0] = 0;
		return;
	}
	shortest(fabs(x), ft, d, &e);
	nd = (int)strlen(d);
	if (nd - 1 - e > prec) {
		/* more fractional digits than prec: round the exact value */
		snprintf(buf, sizeof(buf), "%.*f", prec, x);
	} else {
		char *o = buf;

		if (x < 0)
			*o++ = '-';
		if (e < 0) {
			*o++ = '0';
			*o++ = '.';
			for (k = 0; k < -e - 1; k++)
				*o++ = '0';
			memcpy(o, d, nd);
			o += nd;
		} else {
			for (k = 0; k <= e; k++)
				*o++ = k < nd ? d[k] : '0';
			*o++ = '.';
			for (k = e + 1; k < nd; k++)
				*o++ = d[k];
		}
		*o = 0;
	}
	dot = strchr(buf, '.');
	if (!dot) {
		strcpy(ip, buf);
		fp[0] = 0;
		return;
	}
	*dot = 0;
	strcpy(ip, buf);
	strcpy(fp, dot + 1);
	k = (int)strlen(fp);
	while (k > 0 && fp[k - 1] == '0')
		fp[--k] = 0;
}

/* Scientific: mantissa int digit (with sign), fraction digits (unique,
 * at most prec), exponent. */
static void fmt_sci(double x, enum ftype ft, int prec, char *ip, char *fp,
		    int *ex)
{
	char d[40], buf[64];
	int e, nd, k;

	if (x == 0) {
		strcpy(ip, signbit(x) ? "-0" : "0");
		fp[0] = 0;
		*ex = 0;
		return;
	}
	shortest(fabs(x), ft, d, &e);
	nd = (int)strlen(d);
	if (nd - 1 > prec) {
		snprintf(buf, sizeof(buf), "%.*e", prec, fabs(x));
		nd = 0;
		for (k = 0; buf[k] && buf[k] != 'e'; k++)
			if (buf[k] != '.')
				d[nd++] = buf[k];
		d[nd] = 0;
		e = atoi(strchr(buf, 'e') + 1);
		while (nd > 1 && d[nd - 1] == '0')
			d[--nd] = 0;
	}
	snprintf(ip, 8, "%s%c", x < 0 ? "-" : "", d[0]);
	strcpy(fp, d + 1);
	*ex = e;
}

struct ffmt {
	int exp_mode;
	int pad_left, pad_right;	/* positional */
	int precision;			/* sci: fraction digits */
	int exp_size;			/* sci: exponent digits */
};

static int is_finite_elem(double v)
{
	return isfinite(v);
}

/* The indexes shown: all, or the edge items when summarizing. */
struct view {
	const struct tfk_tensor *t;
	int summary;
};

static int shown(const struct view *vw, int64_t flat)
{
	int64_t r = flat;
	int k;

	if (!vw->summary)
		return 1;
	for (k = vw->t->rank - 1; k >= 0; k--) {
		int64_t c = r % vw->t->shape[k], n = vw->t->shape[k];

		r /= n;
		if (n > 6 && c >= 3 && c < n - 3)
			return 0;
	}
	return 1;
}

static void float_fill(const struct view *vw, struct ffmt *f)
{
	const struct tfk_tensor *t = vw->t;
	int64_t n = tfk_tensor_numel(t), i;
	double mx = 0, mn = INFINITY;
	int any = 0, finite = 0, neginf = 0, nonfinite = 0;
	char ip[400], fp[400];
	enum ftype ft;
	int ex;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < n; i++) {
		double v;

		if (!shown(vw, i))
			continue;
		v = elem_f(t, i, &ft);
		if (!is_finite_elem(v)) {
			nonfinite = 1;
			neginf |= isinf(v) && v < 0;
			continue;
		}
		finite = 1;
		if (v != 0) {
			any = 1;
			mx = fmax(mx, fabs(v));
			mn = fmin(mn, fabs(v));
		}
	}
	if (any && (mx >= 1e8 || mn < 1e-4 || mx / mn > 1e3))
		f->exp_mode = 1;
	if (!finite) {
		f->pad_left = f->pad_right = 0;
	} else if (f->exp_mode) {
		int maxp = 0, maxi = 0, maxe = 0;

		for (i = 0; i < n; i++) {
			double v;
			char eb[16];

			if (!shown(vw, i))
				continue;
			v = elem_f(t, i, &ft);
			if (!is_finite_elem(v))
				continue;
			fmt_sci(v, ft, 8, ip, fp, &ex);
			if ((int)strlen(fp) > maxp)
				maxp = (int)strlen(fp);
			if ((int)strlen(ip) > maxi)
				maxi = (int)strlen(ip);
			snprintf(eb, sizeof(eb), "%d", abs(ex));
			if ((int)strlen(eb) > maxe)
				maxe = (int)strlen(eb);
		}
		f->exp_size = maxe < 2 ? 2 : maxe;
		f->precision = maxp;
		f->pad_left = maxi;
		f->pad_right = f->exp_size + 2 + f->precision;
	} else {
		for (i = 0; i < n; i++) {
			double v;

			if (!shown(vw, i))
				continue;
			v = elem_f(t, i, &ft);
			if (!is_finite_elem(v))
				continue;
			fmt_pos(v, ft, 8, ip, fp);
			if ((int)strlen(ip) > f->pad_left)
				f->pad_left = (int)strlen(ip);
			if ((int)strlen(fp) > f->pad_right)
				f->pad_right = (int)strlen(fp);
		}
	}
	if (nonfinite) {
		int off = f->pad_right + 1;

		if (3 - off > f->pad_left)
			f->pad_left = 3 - off;
		if (3 + neginf - off > f->pad_left)
			f->pad_left = 3 + neginf - off;
	}
}

static void float_elem(const struct ffmt *f, double v, enum ftype ft,
		       struct tfk_buf *o)
{
	char ip[400], fp[400];
	int k, ex;

	if (!isfinite(v)) {
		const char *s = isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
		int w = f->pad_left + f->pad_right + 1 - (int)strlen(s);

		for (k = 0; k < w; k++)
			tfk_buf_addc(o, ' ');
		tfk_buf_adds(o, s);
		return;
	}
	if (f->exp_mode) {
		fmt_sci(v, ft, 8, ip, fp, &ex);
		if ((int)strlen(fp) < f->precision) {
			/* numpy's min_digits: more digits of the exact
			 * value, not zeros (2.1f is 2.0999999e+00) */
			char b[64], *e;

			snprintf(b, sizeof(b), "%.*e", f->precision, v);
			e = strchr(b, 'e');
			*e = 0;
			ex = atoi(e + 1);
			*strchr(b, '.') = 0;
			strcpy(ip, b);
			strcpy(fp, b + strlen(b) + 1);
		}
		for (k = (int)strlen(ip); k < f->pad_left; k++)
			tfk_buf_addc(o, ' ');
		tfk_buf_adds(o, ip);
		tfk_buf_addc(o, '.');
		tfk_buf_adds(o, fp);
		for (k = (int)strlen(fp); k < f->precision; k++)
			tfk_buf_addc(o, '0');
		tfk_buf_addf(o, "e%c%0*d", ex < 0 ? '-' : '+', f->exp_size,
			     abs(ex));
		return;
	}
	fmt_pos(v, ft, 8, ip, fp);
	for (k = (int)strlen(ip); k < f->pad_left; k++)
		tfk_buf_addc(o, ' ');
	tfk_buf_adds(o, ip);
	tfk_buf_addc(o, '.');
	tfk_buf_adds(o, fp);
	for (k = (int)strlen(fp); k < f->pad_right; k++)
		tfk_buf_addc(o, ' ');
}

static int64_t elem_i(const struct tfk_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case TFK_DT_INT8: return ((const int8_t *)t->data)[i];
	case TFK_DT_UINT8: return ((const uint8_t *)t->data)[i];
	case TFK_DT_INT16: return ((const int16_t *)t->data)[i];
	case TFK_DT_INT32: return ((const int32_t *)t->data)[i];
	default: return ((const int64_t *)t->data)[i];
	}
}

/* Python's repr of bytes. */
static void bytes_repr(const char *p, size_t n, struct tfk_buf *o)
{
	int q = memchr(p, '\'', n) && !memchr(p, '"', n) ? '"' : '\'';
	size_t i;

	tfk_buf_addc(o, 'b');
	tfk_buf_addc(o, q);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '\\' || c == q)
			tfk_buf_addf(o, "\\%c", c);
		else if (c == '\n')
			tfk_buf_adds(o, "\\n");
		else if (c == '\r')
			tfk_buf_adds(o, "\\r");
		else if (c == '\t')
			tfk_buf_adds(o, "\\t");
		else if (c < 0x20 || c >= 0x7f)
			tfk_buf_addf(o, "\\x%02x", c);
		else
			tfk_buf_addc(o, c);
	}
	tfk_buf_addc(o, q);
}

struct pctx {
	const struct tfk_tensor *t;
	struct ffmt ff;
	int iw;			/* integer width */
	int summary;
	struct tfk_buf word;
};

static void elem_word(struct pctx *c, int64_t i)
{
	const struct tfk_tensor *t = c->t;
	enum ftype ft;
	double v;

	tfk_buf_reset(&c->word);
	switch (t->dtype) {
	case TFK_DT_FLOAT:
	case TFK_DT_DOUBLE:
	case TFK_DT_HALF:
		v = elem_f(t, i, &ft);
		float_elem(&c->ff, v, ft, &c->word);
		break;
	case TFK_DT_BOOL:
		tfk_buf_adds(&c->word, ((const uint8_t *)t->data)[i] ?
			     " True" : "False");
		break;
	case TFK_DT_STRING: {
		struct tfk_str s = tfk_tensor_str(t, i);

		bytes_repr(s.ptr ? s.ptr : "", s.len, &c->word);
		break;
	}
	default:
		tfk_buf_addf(&c->word, "%*" PRId64, c->iw, elem_i(t, i));
	}
}

/* _extendLine: add word to line, wrapping at width. */
static void extend_line(struct tfk_buf *s, struct tfk_buf *line,
			const char *word, size_t wl, int width,
			const char *hang)
{
	size_t hl = strlen(hang);

	if ((int)(line->len + wl) > width && line->len > hl) {
		size_t n = line->len;

		while (n && line->data[n - 1] == ' ')
			n--;
		tfk_buf_add(s, line->data, n);
		tfk_buf_addc(s, '\n');
		tfk_buf_reset(line);
		tfk_buf_adds(line, hang);
	}
	tfk_buf_add(line, word, wl);
}

/* _formatArray's recurser over axis d starting at flat offset base. */
static void recurse(struct pctx *c, int d, int64_t base, const char *hang,
		    int width, struct tfk_buf *out)
{
	const struct tfk_tensor *t = c->t;
	int64_t n = t->shape[d], stride = 1, i;
	int left = t->rank - d, k, summ = c->summary && n > 6;
	char *next = tfk_malloc(strlen(hang) + 2);
	struct tfk_buf s, line;

	if (!next)
		return;
	sprintf(next, "%s ", hang);
	for (k = d + 1; k < t->rank; k++)
		stride *= t->shape[k];
	tfk_buf_init(&s);
	tfk_buf_init(&line);
	if (left == 1) {
		int ew = width - 1;	/* max(len(sep.rstrip()), len(']')) */

		tfk_buf_adds(&line, hang);
		for (i = 0; i < n; i++) {
			if (summ && i == 3) {
				extend_line(&s, &line, "...", 3, ew, hang);
				tfk_buf_addc(&line, ' ');
				i = n - 3;
			}
			elem_word(c, base + i);
			extend_line(&s, &line, (const char *)c->word.data,
				    c->word.len, ew, hang);
			if (i != n - 1)
				tfk_buf_addc(&line, ' ');
		}
		tfk_buf_add(&s, line.data, line.len);
	} else {
		for (i = 0; i < n; i++) {
			struct tfk_buf nested;

			if (summ && i == 3) {
				tfk_buf_adds(&s, hang);
				tfk_buf_adds(&s, "...");
				for (k = 0; k < left - 1; k++)
					tfk_buf_addc(&s, '\n');
				i = n - 3;
			}
			tfk_buf_init(&nested);
			recurse(c, d + 1, base + i * stride, next, width - 1,
				&nested);
			tfk_buf_adds(&s, hang);
			tfk_buf_add(&s, nested.data, nested.len);
			tfk_buf_release(&nested);
			if (i != n - 1)
				for (k = 0; k < left - 1; k++)
					tfk_buf_addc(&s, '\n');
		}
	}
	tfk_buf_addc(out, '[');
	if (s.len >= strlen(hang))
		tfk_buf_add(out, s.data + strlen(hang), s.len - strlen(hang));
	tfk_buf_addc(out, ']');
	tfk_buf_release(&s);
	tfk_buf_release(&line);
	tfk_free(next);
}

/* numpy scalar str: repr-style shortest digits. */
static void scalar_str(const struct tfk_tensor *t, struct tfk_buf *o)
{
	enum ftype ft;
	double v, a;
	char d[40];
	int e, nd, k;

	switch (t->dtype) {
	case TFK_DT_FLOAT:
	case TFK_DT_DOUBLE:
	case TFK_DT_HALF:
		v = elem_f(t, 0, &ft);
		if (isnan(v)) {
			tfk_buf_adds(o, "nan");
			return;
		}
		if (isinf(v)) {
			tfk_buf_adds(o, v < 0 ? "-inf" : "inf");
			return;
		}
		if (v == 0) {
			tfk_buf_adds(o, signbit(v) ? "-0.0" : "0.0");
			return;
		}
		a = fabs(v);
		shortest(a, ft, d, &e);
		nd = (int)strlen(d);
		if (v < 0)
			tfk_buf_addc(o, '-');
		if (a >= 1e16 || a < 1e-4) {
			tfk_buf_addc(o, d[0]);
			if (nd > 1) {
				tfk_buf_addc(o, '.');
				tfk_buf_adds(o, d + 1);
			}
			tfk_buf_addf(o, "e%c%02d", e < 0 ? '-' : '+', abs(e));
			return;
		}
		if (e < 0) {
			tfk_buf_adds(o, "0.");
			for (k = 0; k < -e - 1; k++)
				tfk_buf_addc(o, '0');
			tfk_buf_adds(o, d);
			return;
		}
		for (k = 0; k <= e; k++)
			tfk_buf_addc(o, k < nd ? d[k] : '0');
		tfk_buf_addc(o, '.');
		if (nd > e + 1)
			tfk_buf_adds(o, d + e + 1);
		else
			tfk_buf_addc(o, '0');
		return;
	case TFK_DT_BOOL:
		tfk_buf_adds(o, ((const uint8_t *)t->data)[0] ? "True" :
			     "False");
		return;
	case TFK_DT_STRING: {
		struct tfk_str s = tfk_tensor_str(t, 0);

		bytes_repr(s.ptr ? s.ptr : "", s.len, o);
		return;
	}
	default:
		tfk_buf_addf(o, "%" PRId64, elem_i(t, 0));
	}
}

int tfk_npy_str(const struct tfk_tensor *t, struct tfk_buf *out,
		struct tfk_err *err)
{
	struct pctx c;
	struct view vw;
	int64_t n = tfk_tensor_numel(t), i;

	if (t->rank == 0) {
		scalar_str(t, out);
		goto done;
	}
	if (n == 0) {
		/* array2string: any empty array is "[]" */
		tfk_buf_adds(out, "[]");
		goto done;
	}
	memset(&c, 0, sizeof(c));
	c.t = t;
	c.summary = n > 1000;
	vw.t = t;
	vw.summary = c.summary;
	tfk_buf_init(&c.word);
	if (t->dtype == TFK_DT_FLOAT || t->dtype == TFK_DT_DOUBLE ||
	    t->dtype == TFK_DT_HALF) {
		float_fill(&vw, &c.ff);
	} else if (t->dtype != TFK_DT_BOOL && t->dtype != TFK_DT_STRING) {
		char b[32];

		for (i = 0; i < n; i++)
			if (shown(&vw, i)) {
				int w = snprintf(b, sizeof(b), "%" PRId64,
						 elem_i(t, i));

				if (w > c.iw)
					c.iw = w;
			}
	}
	recurse(&c, 0, 0, " ", 75, out);
	tfk_buf_release(&c.word);
done:
	return tfk_buf_ok(out) ? 0 : tfk_errf(err, TFK_ENOMEM,
					      "out of memory");
}
