/*
 * lookup.c - IndexLookup (StringLookup/IntegerLookup), the adapt
 * counter, CategoryEncoding and Hashing.
 *
 * One structure serves as both the adapt counter and the vocabulary: an
 * open-addressing hash table (linear probing, FarmHash Fingerprint64 as
 * the hash, power-of-two slots kept under 3/4 full) over entries kept in
 * insertion order, whose bytes live in one growing buffer. As a counter
 * an entry carries its count, its document count and the last document
 * it was seen in (so a document frequency costs one compare per token,
 * not a per-document set); as a vocabulary the entry number is the token
 * index minus token_start. Integer keys are stored as their 8 bytes,
 * little-endian, so both lookups share the code.
 *
 * Rejected: a sorted array with binary search (adapt inserts in random
 * order over millions of tokens) and one malloc per token (the counter
 * must stream over large corpora with little overhead).
 */
#include "prep/lookup.h"
#include "prep/fprint.h"
#include "graph/graph.h"
#include "io/out.h"
#include "util/alloc.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ent {
	uint64_t h;
	size_t off, len;
	int64_t count, docs, last_doc;
};

struct tfk_vcount {
	struct ent *e;
	size_t n, cap;
	uint32_t *slot;		/* entry + 1; 0 = empty */
	size_t nslot;
	struct tfk_buf bytes;
	int64_t doc;		/* documents ended so far */
};

static const char *mode_names[] = {
	"int", "one_hot", "multi_hot", "count", "tf_idf"
};

int tfk_lookup_mode_parse(const char *s)
{
	int i;

	if (!strcmp(s, "binary"))
		return TFK_LOOKUP_MULTI_HOT;
	if (!strcmp(s, "tf-idf"))
		return TFK_LOOKUP_TF_IDF;
	for (i = 0; i < 5; i++)
		if (!strcmp(s, mode_names[i]))
			return i;
	return -1;
}

const char *tfk_lookup_mode_name(int mode)
{
	return mode >= 0 && mode < 5 ? mode_names[mode] : "?";
}

/* The counter / table ---------------------------------------------------- */

int tfk_vcount_new(struct tfk_vcount **c, struct tfk_err *err)
{
	*c = tfk_calloc(1, sizeof(**c));
	if (!*c)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	tfk_buf_init(&(*c)->bytes);
	return 0;
}

void tfk_vcount_free(struct tfk_vcount *c)
{
	if (!c)
		return;
	tfk_free(c->e);
	tfk_free(c->slot);
	tfk_buf_release(&c->bytes);
	tfk_free(c);
}

static const uint8_t *ent_bytes(const struct tfk_vcount *c, size_t i)
{
	/* An all-empty-token table has no bytes (and NULL + 0 is UB). */
	return c->bytes.data ? c->bytes.data + c->e[i].off
			     : (const uint8_t *)"";
}

/* Entry of p[0..n) with hash h, or -1. */
static long find(const struct tfk_vcount *c, uint64_t h, const void *p,
		 size_t n)
{
	size_t m, i;

	if (!c->nslot)
		return -1;
	m = c->nslot - 1;
	for (i = h & m; c->slot[i]; i = (i + 1) & m) {
		const struct ent *e = &c->e[c->slot[i] - 1];

		if (e->h == h && e->len == n &&
		    (n == 0 || !memcmp(c->bytes.data + e->off, p, n)))
			return (long)(c->slot[i] - 1);
	}
	return -1;
}

static int grow_slots(struct tfk_vcount *c, struct tfk_err *err)
{
	size_t ns = c->nslot ? c->nslot * 2 : 64, i, j;
	uint32_t *s;

	if (ns > ((size_t)1 << 31))
		return tfk_errf(err, TFK_ENOMEM, "vocabulary too large");
	s = tfk_calloc(ns, sizeof(*s));
	if (!s)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (i = 0; i < c->n; i++) {
		for (j = c->e[i].h & (ns - 1); s[j]; j = (j + 1) & (ns - 1))
			;
		s[j] = (uint32_t)(i + 1);
	}
	tfk_free(c->slot);
	c->slot = s;
	c->nslot = ns;
	return 0;
}

/* Insert p[0..n) (known absent, hash h); returns its entry or < 0. */
static long insert(struct tfk_vcount *c, uint64_t h, const void *p, size_t n,
		   struct tfk_err *err)
{
	size_t j;
	struct ent *e;

	if ((c->n + 1) * 4 > c->nslot * 3 && grow_slots(c, err))
		return TFK_ENOMEM;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct ent *ne = tfk_realloc(c->e, cap * sizeof(*ne));

		if (!ne)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		c->e = ne;
		c->cap = cap;
	}
	e = &c->e[c->n];
	e->h = h;
	e->off = c->bytes.len;
	e->len = n;
	e->count = e->docs = 0;
	e->last_doc = -1;
	tfk_buf_add(&c->bytes, p, n);
	if (!tfk_buf_ok(&c->bytes))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (j = h & (c->nslot - 1); c->slot[j]; j = (j + 1) & (c->nslot - 1))
		;
	c->slot[j] = (uint32_t)(c->n + 1);
	return (long)c->n++;
}

int tfk_vcount_add(struct tfk_vcount *c, const void *p, size_t n,
		   struct tfk_err *err)
{
	uint64_t h = tfk_fprint64(p, n);
	long i = find(c, h, p, n);
	struct ent *e;

	if (i < 0 && (i = insert(c, h, p, n, err)) < 0)
		return (int)i;
	e = &c->e[i];
	e->count++;
	if (e->last_doc != c->doc) {
		e->last_doc = c->doc;
		e->docs++;
	}
	return 0;
}

static void put64(uint8_t b[8], int64_t v)
{
	uint64_t u = (uint64_t)v;
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(u >> (8 * i));
}

static int64_t get64(const uint8_t *b)
{
	uint64_t u = 0;
	int i;

	for (i = 0; i < 8; i++)
		u |= (uint64_t)b[i] << (8 * i);
	return (int64_t)u;
}

int tfk_vcount_add_int(struct tfk_vcount *c, int64_t v, struct tfk_err *err)
{
	uint8_t b[8];

	put64(b, v);
	return tfk_vcount_add(c, b, 8, err);
}

void tfk_vcount_end_doc(struct tfk_vcount *c)
{
	c->doc++;
}

size_t tfk_vcount_size(const struct tfk_vcount *c)
{
	return c->n;
}

int64_t tfk_vcount_docs(const struct tfk_vcount *c)
{
	return c->doc;
}

int64_t tfk_vcount_get(const struct tfk_vcount *c, const void *p, size_t n,
		       int64_t *docs)
{
	long i = find(c, tfk_fprint64(p, n), p, n);

	if (docs)
		*docs = i < 0 ? 0 : c->e[i].docs;
	return i < 0 ? 0 : c->e[i].count;
}

/* Lookup ----------------------------------------------------------------- */

void tfk_lookup_opts_string(struct tfk_lookup_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = TFK_LOOKUP_INT;
	o->num_oov = 1;
	o->oov = "[UNK]";
	o->oov_len = 5;
}

void tfk_lookup_opts_int(struct tfk_lookup_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = TFK_LOOKUP_INT;
	o->is_int = 1;
	o->num_oov = 1;
	o->oov_int = -1;
}

static char *memdup0(const char *p, size_t n)
{
	char *s = tfk_malloc(n + 1);

	if (s) {
		if (n)
			memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

int tfk_lookup_init(struct tfk_lookup *l, const struct tfk_lookup_opts *o,
		    struct tfk_err *err)
{
	memset(l, 0, sizeof(*l));
	if (o->mode < TFK_LOOKUP_INT || o->mode > TFK_LOOKUP_TF_IDF)
		return tfk_errf(err, TFK_EINVAL, "output_mode: unknown mode %d",
				o->mode);
	if (o->max_tokens < 0 || o->max_tokens == 1)
		return tfk_errf(err, TFK_EINVAL, "max_tokens: must be greater "
				"than 1, got %ld", o->max_tokens);
	if (o->num_oov < 0)
		return tfk_errf(err, TFK_EINVAL, "num_oov_indices: must be >= 0, "
				"got %ld", o->num_oov);
	if (o->invert && o->mode != TFK_LOOKUP_INT)
		return tfk_errf(err, TFK_EINVAL, "invert: output_mode must be "
				"int, got %s", tfk_lookup_mode_name(o->mode));
	if (o->pad_to_max_tokens && !o->max_tokens)
		return tfk_errf(err, TFK_EINVAL, "pad_to_max_tokens: needs "
				"max_tokens");
	l->o = *o;
	if (!o->is_int) {
		if (!o->oov)
			return tfk_errf(err, TFK_EINVAL, "oov_token: missing");
		l->oov_copy = memdup0(o->oov, o->oov_len);
		l->mask_copy = o->has_mask ? memdup0(o->mask ? o->mask : "",
						     o->mask_len) : NULL;
		if (!l->oov_copy || (o->has_mask && !l->mask_copy)) {
			tfk_lookup_release(l);
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		}
		l->o.oov = l->oov_copy;
		l->o.mask = l->mask_copy;
	}
	l->oov_start = o->has_mask && o->mode == TFK_LOOKUP_INT;
	l->token_start = l->oov_start + o->num_oov;
	return 0;
}

void tfk_lookup_release(struct tfk_lookup *l)
{
	if (!l)
		return;
	tfk_vcount_free(l->vocab);
	tfk_free(l->idf);
	tfk_free(l->mask_copy);
	tfk_free(l->oov_copy);
	memset(l, 0, sizeof(*l));
}

long tfk_lookup_size(const struct tfk_lookup *l)
{
	return l->token_start + (l->vocab ? (long)l->vocab->n : 0);
}

long tfk_lookup_depth(const struct tfk_lookup *l)
{
	return l->o.pad_to_max_tokens ? l->o.max_tokens : tfk_lookup_size(l);
}

/* The key bytes of a special token (mask or OOV). */
static const void *special_key(const struct tfk_lookup *l, int mask,
			       uint8_t b[8], size_t *n)
{
	if (l->o.is_int) {
		put64(b, mask ? l->o.mask_int : l->o.oov_int);
		*n = 8;
		return b;
	}
	*n = mask ? l->o.mask_len : l->o.oov_len;
	return mask ? l->o.mask : l->o.oov;
}

static int key_is(const struct tfk_lookup *l, int mask, const void *p,
		  size_t n)
{
	uint8_t b[8];
	size_t kn;
	const void *k;

	if (mask && !l->o.has_mask)
		return 0;
	k = special_key(l, mask, b, &kn);
	return kn == n && (n == 0 || !memcmp(k, p, n));
}

/* Describe key p[0..n) for a message: quoted text or the integer. */
static const char *key_text(const struct tfk_lookup *l, const void *p,
			    size_t n, char *buf, size_t cap)
{
	size_t i, o = 0;
	const uint8_t *s = p;

	if (l->o.is_int) {
		snprintf(buf, cap, "%" PRId64, get64(p));
		return buf;
	}
	buf[o++] = '"';
	for (i = 0; i < n && o + 6 < cap; i++) {
		if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\')
			buf[o++] = (char)s[i];
		else
			o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", s[i]);
	}
	if (i < n && o + 4 < cap) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o++] = '"';
	buf[o] = 0;
	return buf;
}

/* Install table t (consumed) and idf weights of its learned tokens
 * (n_idf == t->n, may be NULL) or of the whole list (front given). */
static int install(struct tfk_lookup *l, struct tfk_vcount *t,
		   const float *idf, int idf_has_front, struct tfk_err *err)
{
	long depth, i, n = (long)t->n, front = l->token_start;
	float *w = NULL;

	tfk_vcount_free(l->vocab);
	tfk_free(l->idf);
	l->vocab = t;
	l->idf = NULL;
	l->ready = 1;
	if (l->o.mode != TFK_LOOKUP_TF_IDF)
		return 0;
	depth = tfk_lookup_depth(l);
	w = tfk_calloc((size_t)(depth > front + n ? depth : front + n),
		       sizeof(*w));
	if (!w)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (idf_has_front) {
		for (i = 0; i < front + n; i++)
			w[i] = idf[i];
	} else {
		double sum = 0;

		for (i = 0; i < n; i++)
			sum += idf[i];
		for (i = 0; i < front; i++)
			w[i] = n ? (float)(sum / (double)n) : 0.0f;
		for (i = 0; i < n; i++)
			w[front + i] = idf[i];
	}
	l->idf = w;
	return 0;
}

int tfk_lookup_set_vocab(struct tfk_lookup *l, const char *const *tokens,
			 const size_t *len, const int64_t *vals, size_t n,
			 const float *idf, size_t n_idf, struct tfk_err *err)
{
	struct tfk_vcount *t = NULL;
	size_t i, skip = 0;
	int found = 1, rc;
	char kb[96];

	if (n == 0)
		return tfk_errf(err, TFK_EINVAL, "vocabulary: empty");
	if (l->o.mode == TFK_LOOKUP_TF_IDF && !idf)
		return tfk_errf(err, TFK_EINVAL, "idf_weights: required in "
				"tf_idf mode");
	if (l->o.mode != TFK_LOOKUP_TF_IDF && idf)
		return tfk_errf(err, TFK_EINVAL, "idf_weights: only for "
				"tf_idf mode");
	if (idf && n_idf != n)
		return tfk_errf(err, TFK_EINVAL, "idf_weights: %zu weights for "
				"a vocabulary of %zu", n_idf, n);
	/* The special prefix: mask (if oov_start), then num_oov OOV tokens. */
	if (n < (size_t)l->token_start)
		found = 0;
	for (i = 0; found && i < (size_t)l->token_start; i++) {
		uint8_t b[8];

		if (l->o.is_int)
			put64(b, vals[i]);
		if (!key_is(l, (long)i < l->oov_start,
			    l->o.is_int ? (const void *)b : tokens[i],
			    l->o.is_int ? 8 : len[i]))
			found = 0;
	}
	if (found)
		skip = (size_t)l->token_start;
	if (l->o.max_tokens && l->token_start + (long)(n - skip) >
	    l->o.max_tokens)
		return tfk_errf(err, TFK_EINVAL, "vocabulary: %ld entries, "
				"more than max_tokens %ld",
				l->token_start + (long)(n - skip),
				l->o.max_tokens);
	if ((rc = tfk_vcount_new(&t, err)))
		return rc;
	for (i = skip; i < n; i++) {
		uint8_t b[8];
		const void *p = tokens ? (const void *)tokens[i] : NULL;
		size_t kn = tokens ? len[i] : 0;
		uint64_t h;

		if (l->o.is_int) {
			put64(b, vals[i]);
			p = b;
			kn = 8;
		}
		if (key_is(l, 1, p, kn)) {
			rc = tfk_errf(err, TFK_EINVAL, "vocabulary[%zu]: the mask "
				      "token %s may only come first", i,
				      key_text(l, p, kn, kb, sizeof(kb)));
			goto fail;
		}
		if (l->o.invert && key_is(l, 0, p, kn)) {
			rc = tfk_errf(err, TFK_EINVAL, "vocabulary[%zu]: the OOV "
				      "token %s may only come after the mask",
				      i, key_text(l, p, kn, kb, sizeof(kb)));
			goto fail;
		}
		h = tfk_fprint64(p, kn);
		if (find(t, h, p, kn) >= 0) {
			rc = tfk_errf(err, TFK_EINVAL, "vocabulary[%zu]: repeated "
				      "token %s", i,
				      key_text(l, p, kn, kb, sizeof(kb)));
			goto fail;
		}
		if ((rc = (int)insert(t, h, p, kn, err)) < 0)
			goto fail;
	}
	rc = install(l, t, idf, found, err);
	l->fixed = 1;
	return rc;
fail:
	tfk_vcount_free(t);
	return rc;
}

static int parse_i64(const char *s, size_t n, int64_t *v)
{
	char buf[32], *end;
	long long x;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	errno = 0;
	x = strtoll(buf, &end, 10);
	if (errno || *end || end == buf || buf[0] == ' ' || buf[0] == '\t' ||
	    buf[0] == '+')
		return -1;
	*v = x;
	return 0;
}

int tfk_lookup_parse_vocab(struct tfk_lookup *l, const char *text,
			   size_t n, const char *name, const float *idf,
			   size_t n_idf, struct tfk_err *err)
{
	size_t nl = 0, i, start, k;
	const char **tok = NULL;
	size_t *len = NULL;
	int64_t *vals = NULL;
	int rc;

	for (i = 0; i < n; i++)
		nl += text[i] == '\n';
	tok = tfk_calloc(nl + 1, sizeof(*tok));
	len = tfk_calloc(nl + 1, sizeof(*len));
	vals = tfk_calloc(nl + 1, sizeof(*vals));
	if (!tok || !len || !vals) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto out;
	}
	for (k = 0, start = 0, i = 0; i <= n; i++) {
		if (i < n && text[i] != '\n')
			continue;
		tok[k] = text + start;
		len[k] = i - start;
		if (len[k] && tok[k][len[k] - 1] == '\r')
			len[k]--;
		k++;
		start = i + 1;
	}
	while (k && len[k - 1] == 0)
		k--;
	if (l->o.is_int) {
		for (i = 0; i < k; i++)
			if (parse_i64(tok[i], len[i], &vals[i])) {
				rc = tfk_errf(err, TFK_EINVAL, "%s:%zu: not an "
					      "int64: \"%.*s\"", name, i + 1,
					      len[i] > 40 ? 40 : (int)len[i],
					      tok[i]);
				goto out;
			}
	}
	rc = tfk_lookup_set_vocab(l, tok, len, vals, k, idf, n_idf, err);
	if (rc)
		tfk_err_prefix(err, "%s", name);
out:
	tfk_free(tok);
	tfk_free(len);
	tfk_free(vals);
	return rc;
}

int tfk_lookup_load_vocab(struct tfk_lookup *l, const char *path,
			  const float *idf, size_t n_idf, struct tfk_err *err)
{
	FILE *f = fopen(path, "rb");
	struct tfk_buf b;
	char chunk[65536];
	size_t got;
	int rc;

	if (!f)
		return tfk_errf(err, TFK_EIO, "%s: %s", path, strerror(errno));
	tfk_buf_init(&b);
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		tfk_buf_add(&b, chunk, got);
	if (ferror(f)) {
		rc = tfk_errf(err, TFK_EIO, "%s: read error", path);
	} else if (!tfk_buf_ok(&b)) {
		rc = tfk_errf(err, TFK_ENOMEM, "%s: out of memory", path);
	} else {
		rc = tfk_lookup_parse_vocab(l, (const char *)b.data, b.len,
					    path, idf, n_idf, err);
	}
	fclose(f);
	tfk_buf_release(&b);
	return rc;
}

const char *tfk_lookup_token(const struct tfk_lookup *l, long i, size_t *n)
{
	if (l->o.is_int || i < 0 || i >= tfk_lookup_size(l))
		return NULL;
	if (i < l->oov_start) {
		*n = l->o.mask_len;
		return l->o.mask;
	}
	if (i < l->token_start) {
		*n = l->o.oov_len;
		return l->o.oov;
	}
	*n = l->vocab->e[i - l->token_start].len;
	return (const char *)ent_bytes(l->vocab, (size_t)(i - l->token_start));
}

int64_t tfk_lookup_token_int(const struct tfk_lookup *l, long i)
{
	if (i < l->oov_start)
		return l->o.mask_int;
	if (i < l->token_start || i >= tfk_lookup_size(l))
		return l->o.oov_int;
	return get64(ent_bytes(l->vocab, (size_t)(i - l->token_start)));
}

float tfk_lookup_idf(const struct tfk_lookup *l, long i)
{
	long depth = tfk_lookup_depth(l);

	return l->idf && i >= 0 && i < depth ? l->idf[i] : 0.0f;
}

int tfk_lookup_vocab_text(const struct tfk_lookup *l, struct tfk_buf *b,
			  struct tfk_err *err)
{
	long i, n = tfk_lookup_size(l);
	size_t len;

	for (i = 0; i < n; i++) {
		if (i)
			tfk_buf_addc(b, '\n');
		if (l->o.is_int) {
			tfk_buf_addf(b, "%" PRId64, tfk_lookup_token_int(l, i));
		} else {
			const char *t = tfk_lookup_token(l, i, &len);

			tfk_buf_add(b, t, len);
		}
	}
	return tfk_buf_ok(b) ? 0 : tfk_errf(err, TFK_ENOMEM, "out of memory");
}

int tfk_lookup_save_vocab(const struct tfk_lookup *l, const char *path,
			  struct tfk_err *err)
{
	struct tfk_buf b;
	struct tfk_out *out;
	int rc;

	tfk_buf_init(&b);
	rc = tfk_lookup_vocab_text(l, &b, err);
	if (!rc)
		rc = tfk_out_open(&out, path, TFK_COMP_NONE, err);
	if (!rc) {
		rc = tfk_out_write(out, b.data, b.len, err);
		if (rc)
			tfk_out_discard(out);
		else
			rc = tfk_out_close(out, err);
	}
	tfk_buf_release(&b);
	return rc;
}

/* Adapt ------------------------------------------------------------------ */

struct sort_ctx {
	const struct tfk_vcount *c;
	int is_int, tie;
};

static int cmp_ent(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *x = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct ent *p = &x->c->e[i], *q = &x->c->e[j];
	size_t m;
	int r;

	if (p->count != q->count)
		return p->count > q->count ? -1 : 1;
	if (x->tie == TFK_VOCAB_TIE_FIRST)
		return i < j ? -1 : i > j;
	if (x->is_int) {
		int64_t u = get64(ent_bytes(x->c, i)), v = get64(ent_bytes(x->c, j));

		return u > v ? -1 : u < v;
	}
	m = p->len < q->len ? p->len : q->len;
	r = m ? memcmp(ent_bytes(x->c, i), ent_bytes(x->c, j), m) : 0;
	if (r)
		return r > 0 ? -1 : 1;
	return p->len > q->len ? -1 : p->len < q->len;
}

int tfk_lookup_adapt(struct tfk_lookup *l, const struct tfk_vcount *c,
		     struct tfk_err *err)
{
	struct sort_ctx ctx = { c, l->o.is_int, l->o.tie };
	struct tfk_vcount *t = NULL;
	size_t *ord = NULL, n = 0, i, keep;
	float *idf = NULL;
	int rc;

	if (l->fixed)
		return tfk_errf(err, TFK_EINVAL, "adapt: the vocabulary was "
				"set, not learned; cannot adapt");
	if (c->n == 0 && l->o.mode == TFK_LOOKUP_TF_IDF)
		return tfk_errf(err, TFK_EINVAL, "adapt: no tokens to weigh "
				"for tf_idf");
	ord = tfk_malloc((c->n ? c->n : 1) * sizeof(*ord));
	if (!ord)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (i = 0; i < c->n; i++) {
		const uint8_t *p = ent_bytes(c, i);

		/* Keras removes the mask and OOV tokens from the counts. */
		if (key_is(l, 1, p, c->e[i].len) ||
		    key_is(l, 0, p, c->e[i].len))
			continue;
		ord[n++] = i;
	}
	if (n)
		qsort_r(ord, n, sizeof(*ord), cmp_ent, &ctx);
	keep = n;
	if (l->o.max_tokens && (long)keep > l->o.max_tokens - l->token_start)
		keep = (size_t)(l->o.max_tokens > l->token_start ?
				l->o.max_tokens - l->token_start : 0);
	if ((rc = tfk_vcount_new(&t, err)))
		goto out;
	if (l->o.mode == TFK_LOOKUP_TF_IDF) {
		idf = tfk_malloc((keep ? keep : 1) * sizeof(*idf));
		if (!idf) {
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
			goto out;
		}
	}
	for (i = 0; i < keep; i++) {
		const struct ent *e = &c->e[ord[i]];

		if ((rc = (int)insert(t, e->h, ent_bytes(c, ord[i]), e->len,
				      err)) < 0)
			goto out;
		if (idf)
			/* TF: log(1 + num_documents / (1 + df)) in float64,
			 * cast to float32. */
			idf[i] = (float)log(1.0 + (double)c->doc /
					    (1.0 + (double)e->docs));
	}
	rc = install(l, t, idf, 0, err);
	t = NULL;
out:
	tfk_vcount_free(t);
	tfk_free(ord);
	tfk_free(idf);
	return rc < 0 ? rc : 0;
}

/* Lookups ---------------------------------------------------------------- */

static int64_t oov_index(const struct tfk_lookup *l, const void *p, size_t n,
			 struct tfk_err *err)
{
	char kb[96];
	uint64_t h;

	if (l->o.num_oov == 0)
		return tfk_errf(err, TFK_EINVAL, "%s is not in the vocabulary "
				"and num_oov_indices is 0",
				key_text(l, p, n, kb, sizeof(kb)));
	if (l->o.num_oov == 1)
		return l->oov_start;
	if (l->o.is_int) {
		int64_t v = get64(p), m = l->o.num_oov, r;

		if (!l->o.oov_farmhash) {
			r = v % m;	/* floor-mod, as tf.math.floormod */
			if (r < 0)
				r += m;
			return l->oov_start + r;
		}
		n = (size_t)snprintf(kb, sizeof(kb), "%" PRId64, v);
		h = tfk_fprint64(kb, n);
	} else {
		h = tfk_fprint64(p, n);
	}
	return l->oov_start + (int64_t)(h % (uint64_t)l->o.num_oov);
}

static int64_t index_key(const struct tfk_lookup *l, const void *p, size_t n,
			 struct tfk_err *err)
{
	long i;

	if (!l->ready)
		return tfk_errf(err, TFK_EINVAL, "lookup: no vocabulary (set "
				"one or adapt first)");
	if (key_is(l, 1, p, n))
		return l->o.mode == TFK_LOOKUP_INT ? 0 : TFK_LOOKUP_DROP;
	i = find(l->vocab, tfk_fprint64(p, n), p, n);
	if (i >= 0)
		return l->token_start + i;
	return oov_index(l, p, n, err);
}

int64_t tfk_lookup_index(const struct tfk_lookup *l, const void *p,
			 size_t n, struct tfk_err *err)
{
	if (l->o.is_int)
		return tfk_errf(err, TFK_EINVAL, "lookup: integer vocabulary "
				"given a string");
	return index_key(l, p, n, err);
}

int64_t tfk_lookup_index_int(const struct tfk_lookup *l, int64_t v,
			     struct tfk_err *err)
{
	uint8_t b[8];

	if (!l->o.is_int)
		return tfk_errf(err, TFK_EINVAL, "lookup: string vocabulary "
				"given an integer");
	put64(b, v);
	return index_key(l, b, 8, err);
}

const char *tfk_lookup_invert(const struct tfk_lookup *l, int64_t i,
			      size_t *n)
{
	if (l->o.has_mask && i == 0) {
		*n = l->o.mask_len;
		return l->o.mask;
	}
	if (i < l->token_start || i >= tfk_lookup_size(l)) {
		*n = l->o.oov_len;
		return l->o.oov;
	}
	return tfk_lookup_token(l, (long)i, n);
}

int64_t tfk_lookup_invert_int(const struct tfk_lookup *l, int64_t i)
{
	if (l->o.has_mask && i == 0)
		return l->o.mask_int;
	if (i < l->token_start || i >= tfk_lookup_size(l))
		return l->o.oov_int;
	return tfk_lookup_token_int(l, (long)i);
}

static int encode(long depth, int mode, const int64_t *idx, size_t n,
		  const float *w, const float *idf, float *out,
		  struct tfk_err *err)
{
	size_t i, rows = mode == TFK_LOOKUP_ONE_HOT ? n : 1;

	if (depth < 1)
		return tfk_errf(err, TFK_EINVAL, "encode: depth %ld", depth);
	memset(out, 0, rows * (size_t)depth * sizeof(*out));
	for (i = 0; i < n; i++) {
		int64_t k = idx[i];

		if (k == TFK_LOOKUP_DROP)
			continue;
		if (k < 0 || k >= depth)
			return tfk_errf(err, TFK_EINVAL, "value %" PRId64 " at "
					"position %zu is outside [0, %ld)", k, i,
					depth);
		switch (mode) {
		case TFK_LOOKUP_ONE_HOT:
			out[i * (size_t)depth + (size_t)k] = 1.0f;
			break;
		case TFK_LOOKUP_MULTI_HOT:
			out[k] = 1.0f;
			break;
		default:
			out[k] += w ? w[i] : 1.0f;
			break;
		}
	}
	if (idf)
		for (i = 0; i < (size_t)depth; i++)
			out[i] *= idf[i];
	return 0;
}

int tfk_lookup_encode(const struct tfk_lookup *l, const int64_t *idx,
		      size_t n, float *out, struct tfk_err *err)
{
	if (l->o.mode == TFK_LOOKUP_INT)
		return tfk_errf(err, TFK_EINVAL, "encode: output_mode is int");
	if (!l->ready)
		return tfk_errf(err, TFK_EINVAL, "lookup: no vocabulary (set "
				"one or adapt first)");
	return encode(tfk_lookup_depth(l), l->o.mode, idx, n, NULL,
		      l->o.mode == TFK_LOOKUP_TF_IDF ? l->idf : NULL, out, err);
}

int tfk_catenc(long num_tokens, int mode, const int64_t *v, size_t n,
	       const float *count_weights, float *out, struct tfk_err *err)
{
	size_t i;

	if (num_tokens < 1)
		return tfk_errf(err, TFK_EINVAL, "num_tokens: must be >= 1, "
				"got %ld", num_tokens);
	if (mode != TFK_LOOKUP_ONE_HOT && mode != TFK_LOOKUP_MULTI_HOT &&
	    mode != TFK_LOOKUP_COUNT)
		return tfk_errf(err, TFK_EINVAL, "output_mode: %s is not "
				"one_hot, multi_hot or count",
				tfk_lookup_mode_name(mode));
	if (count_weights && mode != TFK_LOOKUP_COUNT)
		return tfk_errf(err, TFK_EINVAL, "count_weights: only in count "
				"mode");
	for (i = 0; i < n; i++)
		if (v[i] < 0 || v[i] >= num_tokens)
			return tfk_errf(err, TFK_EINVAL, "value %" PRId64 " at "
					"position %zu is outside [0, %ld)",
					v[i], i, num_tokens);
	return encode(num_tokens, mode, v, n, count_weights, NULL, out, err);
}

/* Hashing ---------------------------------------------------------------- */

static int64_t bin_of(const struct tfk_hashing *h, const void *p, size_t n)
{
	uint64_t bins = (uint64_t)h->num_bins, v;
	int shift = 0;

	if (h->has_mask && bins > 1) {
		bins--;
		shift = 1;
	}
	v = h->salted ? tfk_siphash24(h->salt[0], h->salt[1], p, n)
		      : tfk_fprint64(p, n);
	return (int64_t)(v % bins) + shift;
}

int64_t tfk_hashing_str(const struct tfk_hashing *h, const void *p,
			size_t n)
{
	if (h->num_bins < 1)
		return TFK_EINVAL;
	if (h->has_mask && h->num_bins > 1 && !h->mask_is_int &&
	    h->mask_len == n && (n == 0 || !memcmp(h->mask, p, n)))
		return 0;
	return bin_of(h, p, n);
}

int64_t tfk_hashing_int(const struct tfk_hashing *h, int64_t v)
{
	char b[24];
	int n;

	if (h->num_bins < 1)
		return TFK_EINVAL;
	if (h->has_mask && h->num_bins > 1 && h->mask_is_int &&
	    h->mask_int == v)
		return 0;
	n = snprintf(b, sizeof(b), "%" PRId64, v);
	return bin_of(h, b, (size_t)n);
}

int64_t tfk_hashing_float(const struct tfk_hashing *h, double v)
{
	if (h->num_bins < 1 || isnan(v) || v >= 9223372036854775808.0 ||
	    v < -9223372036854775808.0)
		return TFK_EINVAL;
	if (h->has_mask && h->num_bins > 1 && h->mask_is_int &&
	    (double)h->mask_int == v)
		return 0;
	return tfk_hashing_int(h, (int64_t)v);
}

/* Tables from graph nodes ------------------------------------------------ */

static const char *attr_s(const struct tfk_node *n, const char *name)
{
	const struct tfk_attr_value *v = tfk_node_attr(n, name);

	return v && v->kind == TFK_ATTR_STRING ? v->s.p : "";
}

/* tf_idf weights of a node (attr idf_weights; none: NULL, 0). */
static const float *idf_attr(const struct tfk_node *nd, size_t *n)
{
	const struct tfk_attr_value *v = tfk_node_attr(nd, "idf_weights");

	*n = v && v->list.n > 0 ? (size_t)v->list.n : 0;
	return *n ? v->list.f : NULL;
}

int tfk_lookup_from_node(const struct tfk_node *nd, struct tfk_lookup *l,
			 struct tfk_err *err)
{
	const struct tfk_attr_value *va = tfk_node_attr(nd, "vocabulary");
	const struct tfk_tensor *voc = va ? va->tensor : NULL;
	int is_int = !strcmp(nd->op->name, "IntegerLookup"), rc;
	struct tfk_lookup_opts o;
	const char **tok = NULL;
	size_t *len = NULL, n_idf;
	const float *idf;
	int64_t i, n;

	if (!voc || voc->rank != 1)
		return tfk_errf(err, TFK_EINVAL, "vocabulary: expected a "
				"vector");
	if (is_int)
		tfk_lookup_opts_int(&o);
	else
		tfk_lookup_opts_string(&o);
	o.mode = tfk_lookup_mode_parse(attr_s(nd, "output_mode"));
	o.max_tokens = (long)tfk_node_attr_i(nd, "max_tokens", 0);
	o.pad_to_max_tokens = tfk_node_attr_b(nd, "pad_to_max_tokens", 0);
	o.num_oov = (long)tfk_node_attr_i(nd, "num_oov_indices", 1);
	o.has_mask = tfk_node_attr_b(nd, "has_mask", 0);
	o.mask = attr_s(nd, "mask_token");
	o.mask_len = strlen(o.mask);
	o.mask_int = strtoll(o.mask, NULL, 10);
	o.oov = attr_s(nd, "oov_token");
	o.oov_len = strlen(o.oov);
	o.oov_int = strtoll(o.oov, NULL, 10);
	if ((rc = tfk_lookup_init(l, &o, err)))
		return rc;
	n = voc->shape[0];
	if (!is_int) {
		tok = tfk_malloc((size_t)(n ? n : 1) * sizeof(*tok));
		len = tfk_malloc((size_t)(n ? n : 1) * sizeof(*len));
		if (!tok || !len) {
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
			goto out;
		}
		for (i = 0; i < n; i++) {
			struct tfk_str s = tfk_tensor_str(voc, i);

			tok[i] = s.ptr ? s.ptr : "";
			len[i] = s.len;
		}
	}
	idf = idf_attr(nd, &n_idf);
	rc = tfk_lookup_set_vocab(l, tok, len, is_int ? voc->data : NULL,
				  (size_t)n, idf, n_idf, err);
out:
	tfk_free(tok);
	tfk_free(len);
	if (rc)
		tfk_lookup_release(l);
	return rc;
}
