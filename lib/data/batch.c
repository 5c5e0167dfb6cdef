/*
 * batch.c - merge N tf.Examples into one batched Example and split it
 * back (layout in batch.h and tfk-records(5)).
 *
 * Approach: both directions write protobuf bytes themselves into one
 * reused buffer instead of going through tfk_example_builder, because a
 * batched feature is assembled from N rows' value runs and the builder
 * takes a whole value array at once: it would need a gathered copy of
 * every feature first. Packed floats and TensorFlow's one-run Int64List
 * are copied as bytes (varints are self-delimiting, so runs concatenate);
 * any other encoding is decoded and re-encoded packed. Sizes are known
 * before the bytes are written, so each varint length is written once,
 * in place, and the Example header goes into a gap left at the front.
 *
 * Rejected: a layout with one Feature per row (a map per row) — it would
 * not give consumers the [N, L] tensors tf.data's batch gives; and side
 * files describing the layout — a batched record must stand alone on a
 * pipe.
 */
#include "data/batch.h"

#include "util/alloc.h"
#include "util/buf.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Room for the Example header: one tag byte and a 10-byte varint. */
#define GAP 11
#define LEN_SUFFIX_LEN (sizeof(TFK_BATCH_LENGTHS) - 1)

const char *tfk_batch_layout_name(int layout)
{
	switch (layout) {
	case TFK_BATCH_FIXED: return "fixed";
	case TFK_BATCH_RAGGED: return "ragged";
	case TFK_BATCH_PADDED: return "padded";
	}
	return "?";
}

/* Wire helpers ------------------------------------------------------- */

static int get_v(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	int s;

	for (s = 0; s < 70 && p < end; s += 7) {
		r |= (uint64_t)(*p & 0x7f) << s;
		if (*p++ < 0x80) {
			*v = r;
			*pp = p;
			return 0;
		}
	}
	return -1;
}

static void put_le32(uint8_t *o, float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	o[0] = (uint8_t)u;
	o[1] = (uint8_t)(u >> 8);
	o[2] = (uint8_t)(u >> 16);
	o[3] = (uint8_t)(u >> 24);
}

/*
 * Append one Features map entry named name+suffix whose Feature has
 * kind (0: none) and a list body of P bytes (0 for kind none). Returns
 * where the list body goes, or NULL out of memory (b->oom set).
 */
static uint8_t *entry(struct tfk_buf *b, const char *name, size_t nlen,
		      const char *suffix, size_t slen, int kind, size_t P)
{
	size_t klen = nlen + slen;
	size_t fb = kind ? 1 + tfk_varint_size(P) + P : 0;
	size_t el = 1 + tfk_varint_size(klen) + klen + 1 + tfk_varint_size(fb) + fb;
	uint8_t *o;

	if (tfk_buf_reserve(b, 1 + tfk_varint_size(el) + el))
		return NULL;
	o = b->data + b->len;
	*o++ = 1 << 3 | 2;			/* Features.feature */
	o = tfk_varint_put(o, el);
	*o++ = 1 << 3 | 2;			/* key */
	o = tfk_varint_put(o, klen);
	if (nlen)
		memcpy(o, name, nlen);
	o += nlen;
	if (slen)
		memcpy(o, suffix, slen);
	o += slen;
	*o++ = 2 << 3 | 2;			/* value */
	o = tfk_varint_put(o, fb);
	if (kind) {
		*o++ = (uint8_t)(kind << 3 | 2);
		o = tfk_varint_put(o, P);
	}
	b->len = (size_t)(o - b->data) + P;
	return o;
}

static void begin(struct tfk_buf *b)
{
	tfk_buf_reset(b);
	if (!tfk_buf_reserve(b, GAP))
		b->len = GAP;
}

static int finish(struct tfk_buf *b, const uint8_t **p, size_t *len,
		  struct tfk_err *err)
{
	size_t body, h;
	uint8_t *o;

	if (!tfk_buf_ok(b) || b->len < GAP)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	body = b->len - GAP;
	h = 1 + tfk_varint_size(body);
	o = b->data + GAP - h;
	*p = o;
	*o++ = 1 << 3 | 2;			/* Example.features */
	tfk_varint_put(o, body);
	*len = h + body;
	return 0;
}

static int is_reserved(const char *name, size_t len)
{
	return (len == sizeof(TFK_BATCH_ROWS) - 1 &&
		!memcmp(name, TFK_BATCH_ROWS, len)) ||
	       (len == sizeof(TFK_BATCH_ORDER) - 1 &&
		!memcmp(name, TFK_BATCH_ORDER, len)) ||
	       (len >= LEN_SUFFIX_LEN &&
		!memcmp(name + len - LEN_SUFFIX_LEN, TFK_BATCH_LENGTHS,
			LEN_SUFFIX_LEN));
}

/* Building ------------------------------------------------------------ */

void tfk_batcher_init(struct tfk_batcher *b)
{
	memset(b, 0, sizeof(*b));
	tfk_buf_init(&b->out);
	tfk_buf_init(&b->tmp);
	tfk_buf_init(&b->dec);
}

void tfk_batcher_release(struct tfk_batcher *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->n_pad; i++) {
		tfk_free(b->pad[i].name);
		tfk_free(b->pad[i].value);
	}
	tfk_free(b->pad);
	for (i = 0; i < b->n_ragged; i++)
		tfk_free(b->ragged[i]);
	tfk_free(b->ragged);
	tfk_buf_release(&b->out);
	tfk_buf_release(&b->tmp);
	tfk_buf_release(&b->dec);
	tfk_free(b->rowf);
	tfk_free(b->lens);
	tfk_free(b->rp);
	tfk_free(b->rn);
	tfk_free(b->toff);
	tfk_free(b->order);
	memset(b, 0, sizeof(*b));
}

static const struct tfk_batch_pad *find_pad(const struct tfk_batcher *b,
					    const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < b->n_pad; i++)
		if (strlen(b->pad[i].name) == len &&
		    !memcmp(b->pad[i].name, name, len))
			return &b->pad[i];
	return NULL;
}

static int find_ragged(const struct tfk_batcher *b, const char *name,
		       size_t len)
{
	size_t i;

	for (i = 0; i < b->n_ragged; i++)
		if (strlen(b->ragged[i]) == len &&
		    !memcmp(b->ragged[i], name, len))
			return 1;
	return 0;
}

static int check_setting(const struct tfk_batcher *b, const char *name,
			 struct tfk_err *err)
{
	size_t len = strlen(name);

	if (is_reserved(name, len))
		return tfk_errf(err, TFK_EINVAL, "feature \"%s\": reserved "
				"name", name);
	if (find_pad(b, name, len) || find_ragged(b, name, len))
		return tfk_errf(err, TFK_EINVAL, "feature \"%s\": given "
				"twice", name);
	return 0;
}

int tfk_batcher_pad(struct tfk_batcher *b, const char *name,
		    const char *value, struct tfk_err *err)
{
	struct tfk_batch_pad *np;
	int rc = check_setting(b, name, err);

	if (rc)
		return rc;
	np = tfk_realloc(b->pad, (b->n_pad + 1) * sizeof(*np));
	if (!np)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	b->pad = np;
	np[b->n_pad].name = tfk_strdup(name);
	np[b->n_pad].value = tfk_strdup(value);
	if (!np[b->n_pad].name || !np[b->n_pad].value) {
		tfk_free(np[b->n_pad].name);
		tfk_free(np[b->n_pad].value);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	b->n_pad++;
	return 0;
}

void tfk_batcher_pad_to(struct tfk_batcher *b, size_t len)
{
	b->pad_to = len;
}

int tfk_batcher_ragged(struct tfk_batcher *b, const char *name,
		       struct tfk_err *err)
{
	char **nr;
	int rc = check_setting(b, name, err);

	if (rc)
		return rc;
	nr = tfk_realloc(b->ragged, (b->n_ragged + 1) * sizeof(*nr));
	if (!nr)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	b->ragged = nr;
	nr[b->n_ragged] = tfk_strdup(name);
	if (!nr[b->n_ragged])
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	b->n_ragged++;
	return 0;
}

static int grow_rows(struct tfk_batcher *b, size_t n, struct tfk_err *err)
{
	void *p;

	if (n <= b->cap)
		return 0;
#define GROW(f) do { \
		p = tfk_realloc(b->f, n * sizeof(*b->f)); \
		if (!p) \
			return tfk_errf(err, TFK_ENOMEM, "out of memory"); \
		b->f = p; \
	} while (0)
	GROW(rowf);
	GROW(lens);
	GROW(rp);
	GROW(rn);
	GROW(toff);
#undef GROW
	b->cap = n;
	return 0;
}

/* tfk_example_findn, but not on an Example without features: there
 * feat may be NULL, and findn's pointer arithmetic on it is undefined. */
static const struct tfk_feat *find(const struct tfk_example *ex,
				   const char *name, size_t len)
{
	return ex->n_feat ? tfk_example_findn(ex, name, len) : NULL;
}

static const struct tfk_feat *lookup(const struct tfk_example *ex, size_t i,
				     const struct tfk_feat *f0)
{
	if (i < ex->n_feat) {
		const struct tfk_feat *f = &ex->feat[i];

		if (f->name_len == f0->name_len &&
		    (!f0->name_len || !memcmp(f->name, f0->name, f0->name_len)))
			return f;
	}
	return find(ex, f0->name, f0->name_len);
}

/* TensorFlow's layout of an Int64List: one list, one packed run. */
static int int64_run(const struct tfk_feat *f, const uint8_t **run,
		     size_t *n)
{
	const uint8_t *p = f->body, *end = p + f->body_len;
	uint64_t l1, l2;

	if (f->body_len < 2 || *p++ != (TFK_FEAT_INT64 << 3 | 2) ||
	    get_v(&p, end, &l1) || l1 != (uint64_t)(end - p))
		return 0;
	if (l1 == 0) {
		*run = p;
		*n = 0;
		return 1;
	}
	if (*p++ != (1 << 3 | 2) || get_v(&p, end, &l2) ||
	    l2 != (uint64_t)(end - p))
		return 0;
	*run = p;
	*n = (size_t)l2;
	return 1;
}

/*
 * For a float or int64 feature: rp[r], rn[r] = the row's values as
 * packed bytes (4-byte floats or varints), copied through tmp when the
 * row was not encoded that way already.
 */
static int gather_runs(struct tfk_batcher *b, size_t n, int kind,
		       struct tfk_err *err)
{
	size_t r, k, m;

	tfk_buf_reset(&b->tmp);
	for (r = 0; r < n; r++) {
		const struct tfk_feat *f = b->rowf[r];

		b->toff[r] = SIZE_MAX;
		m = b->lens[r];
		if (!m || (kind == TFK_FEAT_FLOAT && f->packed)) {
			b->rp[r] = f->packed;
			b->rn[r] = 4 * m;
			if (!m)
				b->rn[r] = 0;
			continue;
		}
		if (kind == TFK_FEAT_INT64 && int64_run(f, &b->rp[r],
							&b->rn[r]))
			continue;
		tfk_buf_reset(&b->dec);
		if (tfk_buf_reserve(&b->dec, 8 * m + 8))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		b->toff[r] = b->tmp.len;
		if (kind == TFK_FEAT_FLOAT) {
			float *v = (float *)b->dec.data;

			tfk_feat_floats(f, v, m);
			if (tfk_buf_reserve(&b->tmp, 4 * m))
				return tfk_errf(err, TFK_ENOMEM,
						"out of memory");
			for (k = 0; k < m; k++)
				put_le32(b->tmp.data + b->tmp.len + 4 * k,
					 v[k]);
			b->tmp.len += 4 * m;
		} else {
			int64_t *v = (int64_t *)b->dec.data;

			tfk_feat_int64s(f, v, m);
			if (tfk_buf_reserve(&b->tmp, 10 * m))
				return tfk_errf(err, TFK_ENOMEM,
						"out of memory");
			for (k = 0; k < m; k++)
				b->tmp.len = (size_t)(tfk_varint_put(b->tmp.data +
						b->tmp.len, (uint64_t)v[k]) -
						b->tmp.data);
		}
		b->rn[r] = b->tmp.len - b->toff[r];
	}
	for (r = 0; r < n; r++)
		if (b->toff[r] != SIZE_MAX)
			b->rp[r] = b->tmp.data + b->toff[r];
	return 0;
}

union padv {
	float f;
	int64_t i;
};

static int parse_pad(const struct tfk_batch_pad *pd, int kind,
		     union padv *v, struct tfk_err *err)
{
	char *end;

	errno = 0;
	if (kind == TFK_FEAT_INT64) {
		long long x = strtoll(pd->value, &end, 0);

		if (!*pd->value || *end || errno)
			return tfk_errf(err, TFK_EINVAL, "feature \"%s\": pad "
					"value \"%s\" is not an int64",
					pd->name, pd->value);
		v->i = x;
	} else if (kind == TFK_FEAT_FLOAT) {
		float x = strtof(pd->value, &end);

		if (!*pd->value || *end)
			return tfk_errf(err, TFK_EINVAL, "feature \"%s\": pad "
					"value \"%s\" is not a float",
					pd->name, pd->value);
		v->f = x;
	}
	return 0;
}

/* Write the batched feature for rows' values (lens, rowf, rp/rn). */
static int write_values(struct tfk_batcher *b, const struct tfk_feat *f0,
			size_t n, int layout, size_t L,
			const struct tfk_batch_pad *pd, const union padv *pv)
{
	size_t r, k, V = 0, S = 0, P, padn = 0, pl = 0, pv_size = 0;
	int kind = f0->kind;
	uint8_t pbuf[10];
	const uint8_t *p;
	size_t it, len;
	uint8_t *o;

	for (r = 0; r < n; r++) {
		V += b->lens[r];
		if (layout == TFK_BATCH_PADDED)
			padn += L - b->lens[r];
	}
	V += padn;
	if (kind == TFK_FEAT_FLOAT) {
		put_le32(pbuf, pd ? pv->f : 0);
		pv_size = 4;
		S = 4 * V;
	} else if (kind == TFK_FEAT_INT64) {
		pv_size = (size_t)(tfk_varint_put(pbuf, (uint64_t)(pd ? pv->i : 0)) -
				   pbuf);
		for (r = 0; r < n; r++)
			S += b->rn[r];
		S += padn * pv_size;
	} else if (kind == TFK_FEAT_BYTES) {
		if (pd) {
			pl = strlen(pd->value);
			S = padn * (1 + tfk_varint_size(pl) + pl);
		}
		for (r = 0; r < n; r++) {
			it = 0;
			while (tfk_feat_bytes_next(b->rowf[r], &it, &p, &len))
				S += 1 + tfk_varint_size(len) + len;
		}
	}
	if (kind == TFK_FEAT_BYTES)
		P = S;
	else if (kind == TFK_FEAT_NONE)
		P = 0;
	else
		P = V ? 1 + tfk_varint_size(S) + S : 0;
	o = entry(&b->out, f0->name, f0->name_len, NULL, 0, kind, P);
	if (!o || !P)
		return 0;
	if (kind != TFK_FEAT_BYTES) {
		*o++ = 1 << 3 | 2;
		o = tfk_varint_put(o, S);
	}
	for (r = 0; r < n; r++) {
		if (kind == TFK_FEAT_BYTES) {
			it = 0;
			while (tfk_feat_bytes_next(b->rowf[r], &it, &p, &len)) {
				*o++ = 1 << 3 | 2;
				o = tfk_varint_put(o, len);
				if (len)
					memcpy(o, p, len);
				o += len;
			}
		} else if (b->rn[r]) {
			memcpy(o, b->rp[r], b->rn[r]);
			o += b->rn[r];
		}
		if (layout != TFK_BATCH_PADDED)
			continue;
		for (k = b->lens[r]; k < L; k++) {
			if (kind == TFK_FEAT_BYTES) {
				*o++ = 1 << 3 | 2;
				o = tfk_varint_put(o, pl);
				if (pl)
					memcpy(o, pd->value, pl);
				o += pl;
			} else {
				memcpy(o, pbuf, pv_size);
				o += pv_size;
			}
		}
	}
	return 0;
}

static void write_lengths(struct tfk_batcher *b, const struct tfk_feat *f0,
			  size_t n)
{
	size_t r, S = 0;
	uint8_t *o;

	for (r = 0; r < n; r++)
		S += tfk_varint_size(b->lens[r]);
	o = entry(&b->out, f0->name, f0->name_len, TFK_BATCH_LENGTHS,
		  LEN_SUFFIX_LEN, TFK_FEAT_INT64, 1 + tfk_varint_size(S) + S);
	if (!o)
		return;
	*o++ = 1 << 3 | 2;
	o = tfk_varint_put(o, S);
	for (r = 0; r < n; r++)
		o = tfk_varint_put(o, b->lens[r]);
}

static void write_order(struct tfk_batcher *b, size_t n)
{
	size_t k, S = 0;
	uint8_t *o;

	for (k = 0; k < n; k++)
		S += tfk_varint_size((uint64_t)b->order[k]);
	o = entry(&b->out, TFK_BATCH_ORDER, sizeof(TFK_BATCH_ORDER) - 1,
		  NULL, 0, TFK_FEAT_INT64, 1 + tfk_varint_size(S) + S);
	if (!o)
		return;
	*o++ = 1 << 3 | 2;
	o = tfk_varint_put(o, S);
	for (k = 0; k < n; k++)
		o = tfk_varint_put(o, (uint64_t)b->order[k]);
}

#define FEAT_FMT "feature \"%.*s\""
#define FEAT_ARG(f) (int)(f)->name_len, (f)->name

int tfk_batch_build(struct tfk_batcher *b, const struct tfk_example *rows,
		    size_t n, const uint8_t **p, size_t *len, size_t *bad_row,
		    struct tfk_err *err)
{
	const struct tfk_example *ex0 = &rows[0];
	size_t i, r, F;
	uint8_t *o;
	int rc, reorder = 0;

	*bad_row = 0;
	if (n == 0)
		return tfk_errf(err, TFK_EINVAL, "empty batch");
	if ((rc = grow_rows(b, n, err)))
		return rc;
	for (i = 0; i < ex0->n_feat; i++)
		if (is_reserved(ex0->feat[i].name, ex0->feat[i].name_len))
			return tfk_errf(err, TFK_EINVAL, FEAT_FMT ": reserved "
					"name in a batched record (unbatch "
					"first?)", FEAT_ARG(&ex0->feat[i]));
	begin(&b->out);
	o = entry(&b->out, TFK_BATCH_ROWS, sizeof(TFK_BATCH_ROWS) - 1, NULL,
		  0, TFK_FEAT_INT64, 2 + tfk_varint_size((uint64_t)n));
	if (o) {		/* Int64List { value: [n] } */
		*o++ = 1 << 3 | 2;
		*o++ = (uint8_t)tfk_varint_size((uint64_t)n);
		tfk_varint_put(o, (uint64_t)n);
	}
	F = ex0->n_feat;
	if (F && n > SIZE_MAX / sizeof(int64_t) / F)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (n * F > b->order_cap) {
		int64_t *no = tfk_realloc(b->order, n * F * sizeof(*no));

		if (!no)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		b->order = no;
		b->order_cap = n * F;
	}
	for (i = 0; i < F; i++) {
		const struct tfk_feat *f0 = &ex0->feat[i];
		const struct tfk_batch_pad *pd = NULL;
		size_t maxlen = 0, L = 0;
		int equal = 1, layout;
		union padv pv = { 0 };

		for (r = 0; r < n; r++) {
			const struct tfk_feat *f = r ? lookup(&rows[r], i, f0)
						     : f0;

			if (!f) {
				*bad_row = r;
				return tfk_errf(err, TFK_EINVAL, FEAT_FMT
						": missing (the batch's first "
						"record has it)", FEAT_ARG(f0));
			}
			if (f->kind != f0->kind) {
				*bad_row = r;
				return tfk_errf(err, TFK_EINVAL, FEAT_FMT
						": kind %s, the batch's first "
						"record has %s", FEAT_ARG(f0),
						tfk_feat_kind_name(f->kind),
						tfk_feat_kind_name(f0->kind));
			}
			b->rowf[r] = f;
			b->lens[r] = f->n;
			/* row r's position (f - feat) holds feature i; a row
			 * with more features fails below, so it stays < F */
			if ((size_t)(f - rows[r].feat) != i)
				reorder = 1;
			if ((size_t)(f - rows[r].feat) < F)
				b->order[r * F + (size_t)(f - rows[r].feat)] =
					(int64_t)i;
			if (f->n != f0->n)
				equal = 0;
			if (f->n > maxlen)
				maxlen = f->n;
		}
		if (f0->kind != TFK_FEAT_NONE)
			pd = find_pad(b, f0->name, f0->name_len);
		if (pd) {
			layout = TFK_BATCH_PADDED;
			L = b->pad_to ? b->pad_to : maxlen;
			for (r = 0; r < n; r++)
				if (b->lens[r] > L) {
					*bad_row = r;
					return tfk_errf(err, TFK_EINVAL, FEAT_FMT
							": %zu values, more "
							"than the pad length "
							"%zu", FEAT_ARG(f0),
							b->lens[r], L);
				}
			if ((rc = parse_pad(pd, f0->kind, &pv, err)))
				return rc;
		} else if (!equal ||
			   (f0->kind != TFK_FEAT_NONE &&
			    find_ragged(b, f0->name, f0->name_len))) {
			layout = TFK_BATCH_RAGGED;
		} else {
			layout = TFK_BATCH_FIXED;
		}
		if ((f0->kind == TFK_FEAT_FLOAT || f0->kind == TFK_FEAT_INT64) &&
		    (rc = gather_runs(b, n, f0->kind, err)))
			return rc;
		write_values(b, f0, n, layout, L, pd, &pv);
		if (layout != TFK_BATCH_FIXED)
			write_lengths(b, f0, n);
	}
	for (r = 1; r < n; r++) {
		if (rows[r].n_feat == ex0->n_feat)
			continue;
		for (i = 0; i < rows[r].n_feat; i++) {
			const struct tfk_feat *f = &rows[r].feat[i];

			if (!find(ex0, f->name, f->name_len)) {
				*bad_row = r;
				return tfk_errf(err, TFK_EINVAL, FEAT_FMT
						": not in the batch's first "
						"record", FEAT_ARG(f));
			}
		}
	}
	if (reorder)
		write_order(b, n * F);
	return finish(&b->out, p, len, err);
}

/* Reading ------------------------------------------------------------- */

void tfk_batch_init(struct tfk_batch *bt)
{
	memset(bt, 0, sizeof(*bt));
	tfk_example_init(&bt->ex);
	tfk_buf_init(&bt->names);
	tfk_buf_init(&bt->row);
}

void tfk_batch_release(struct tfk_batch *bt)
{
	if (!bt)
		return;
	tfk_example_release(&bt->ex);
	tfk_buf_release(&bt->names);
	tfk_buf_release(&bt->row);
	tfk_free(bt->feat);
	tfk_free(bt->i64);
	tfk_free(bt->f32);
	tfk_free(bt->bv);
	memset(bt, 0, sizeof(*bt));
}

static int grow_to(void **p, size_t *cap, size_t want, size_t size,
		   struct tfk_err *err)
{
	void *np;

	if (want <= *cap)
		return 0;
	if (want > SIZE_MAX / size)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	np = tfk_realloc(*p, want * size);
	if (!np)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	*p = np;
	*cap = want;
	return 0;
}

/* The NAME/row_lengths feature of data feature f, or NULL. */
static const struct tfk_feat *lengths_of(struct tfk_batch *bt,
					 const struct tfk_feat *f)
{
	tfk_buf_reset(&bt->names);
	tfk_buf_add(&bt->names, f->name, f->name_len);
	tfk_buf_add(&bt->names, TFK_BATCH_LENGTHS, LEN_SUFFIX_LEN);
	if (!tfk_buf_ok(&bt->names))
		return NULL;
	return find(&bt->ex, (const char *)bt->names.data, bt->names.len);
}

int tfk_batch_parse(struct tfk_batch *bt, const uint8_t *rec, size_t len,
		    struct tfk_err *err)
{
	const struct tfk_feat *fb, *fo;
	size_t i, N, n_data = 0, n_i64 = 0, n_f32 = 0, n_bv = 0;
	size_t u_i64 = 0, u_f32 = 0, u_bv = 0;
	int64_t rows;
	int rc;

	bt->n_rows = 0;
	bt->n_feat = 0;
	bt->order = NULL;
	if ((rc = tfk_example_parse(&bt->ex, rec, len, err)))
		return rc;
	fb = find(&bt->ex, TFK_BATCH_ROWS, sizeof(TFK_BATCH_ROWS) - 1);
	if (!fb)
		return tfk_errf(err, TFK_ECORRUPT, "not a batched record: no "
				"%s feature", TFK_BATCH_ROWS);
	if (fb->kind != TFK_FEAT_INT64 || fb->n != 1)
		return tfk_errf(err, TFK_ECORRUPT, "not a batched record: %s "
				"is %s[%zu], not int64[1]", TFK_BATCH_ROWS,
				tfk_feat_kind_name(fb->kind), fb->n);
	tfk_feat_int64s(fb, &rows, 1);
	if (rows < 1 || rows > INT32_MAX)
		return tfk_errf(err, TFK_ECORRUPT, "not a batched record: %s "
				"is %" PRId64 " rows", TFK_BATCH_ROWS, rows);
	N = (size_t)rows;

	/* Pass 1: check the row lengths features, size the tables. */
	fo = find(&bt->ex, TFK_BATCH_ORDER, sizeof(TFK_BATCH_ORDER) - 1);
	for (i = 0; i < bt->ex.n_feat; i++) {
		const struct tfk_feat *f = &bt->ex.feat[i], *d;

		if (f == fb || f == fo)
			continue;
		if (is_reserved(f->name, f->name_len)) {
			d = find(&bt->ex, f->name,
				 f->name_len - LEN_SUFFIX_LEN);
			if (!d || d == fb || is_reserved(d->name, d->name_len))
				return tfk_errf(err, TFK_ECORRUPT, FEAT_FMT
						": row lengths of no feature",
						FEAT_ARG(f));
			if (f->kind != TFK_FEAT_INT64 || f->n != N)
				return tfk_errf(err, TFK_ECORRUPT, FEAT_FMT
						": %s[%zu], want int64[%zu] "
						"(one per row)", FEAT_ARG(f),
						tfk_feat_kind_name(f->kind),
						f->n, N);
			n_i64 += 2 * N + 1;	/* lengths and starts */
			continue;
		}
		n_data++;
		if (f->kind == TFK_FEAT_INT64)
			n_i64 += f->n;
		else if (f->kind == TFK_FEAT_FLOAT && !f->packed)
			n_f32 += f->n;
		else if (f->kind == TFK_FEAT_BYTES)
			n_bv += f->n;
	}
	if (fo) {
		if (fo->kind != TFK_FEAT_INT64 || fo->n != N * n_data)
			return tfk_errf(err, TFK_ECORRUPT, "feature \"%s\": "
					"%s[%zu], want int64[%zu] (rows times "
					"features)", TFK_BATCH_ORDER,
					tfk_feat_kind_name(fo->kind), fo->n,
					N * n_data);
		n_i64 += fo->n + n_data;	/* and a scratch row */
	}
	if ((rc = grow_to((void **)&bt->feat, &bt->cap, n_data,
			  sizeof(*bt->feat), err)) ||
	    (rc = grow_to((void **)&bt->i64, &bt->i64_cap, n_i64,
			  sizeof(*bt->i64), err)) ||
	    (rc = grow_to((void **)&bt->f32, &bt->f32_cap, n_f32,
			  sizeof(*bt->f32), err)) ||
	    (rc = grow_to((void **)&bt->bv, &bt->bv_cap, n_bv,
			  sizeof(*bt->bv), err)))
		return rc;

	/* Pass 2: describe each data feature. */
	for (i = 0; i < bt->ex.n_feat; i++) {
		const struct tfk_feat *f = &bt->ex.feat[i], *lf;
		struct tfk_batch_feat *bf;
		size_t r, n = f->n;

		if (is_reserved(f->name, f->name_len))
			continue;
		bf = &bt->feat[bt->n_feat];
		memset(bf, 0, sizeof(*bf));
		bf->name = f->name;
		bf->name_len = f->name_len;
		bf->kind = f->kind;
		bf->n_values = n;
		bf->values = f;
		lf = lengths_of(bt, f);
		if (!tfk_buf_ok(&bt->names))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		if (!lf) {
			if (n % N)
				return tfk_errf(err, TFK_ECORRUPT, FEAT_FMT
						": %zu values do not split "
						"into %zu rows", FEAT_ARG(f),
						n, N);
			bf->layout = TFK_BATCH_FIXED;
			bf->row_len = n / N;
		} else {
			int64_t *rl = bt->i64 + u_i64, *st = rl + N;
			uint64_t sum = 0, max = 0;

			tfk_feat_int64s(lf, rl, N);
			u_i64 += 2 * N + 1;
			for (r = 0; r < N; r++) {
				if (rl[r] < 0 || (uint64_t)rl[r] > n)
					return tfk_errf(err, TFK_ECORRUPT,
							FEAT_FMT ": row %zu "
							"has length %" PRId64
							" of %zu values",
							FEAT_ARG(f), r, rl[r],
							n);
				st[r] = (int64_t)sum;
				sum += (uint64_t)rl[r];
				if ((uint64_t)rl[r] > max)
					max = (uint64_t)rl[r];
			}
			st[N] = (int64_t)sum;
			bf->row_lengths = rl;
			bf->row_start = st;
			if (sum == n) {
				bf->layout = TFK_BATCH_RAGGED;
			} else if (n % N == 0 && max <= n / N) {
				bf->layout = TFK_BATCH_PADDED;
				bf->row_len = n / N;
			} else {
				return tfk_errf(err, TFK_ECORRUPT, FEAT_FMT
						": %zu values are neither the "
						"sum of the row lengths (%"
						PRIu64 ") nor %zu rows padded "
						"to the longest", FEAT_ARG(f),
						n, sum, N);
			}
		}
		/* (no pointer arithmetic on tables that may be NULL) */
		if (!n) {
			bf->f32 = NULL;
		} else if (f->kind == TFK_FEAT_INT64) {
			bf->i64 = bt->i64 + u_i64;
			tfk_feat_int64s(f, bt->i64 + u_i64, n);
			u_i64 += n;
		} else if (f->kind == TFK_FEAT_FLOAT && f->packed) {
			bf->f32 = f->packed;
		} else if (f->kind == TFK_FEAT_FLOAT) {
			float *v = bt->f32 + u_f32;

			tfk_feat_floats(f, v, n);
			for (r = 0; r < n; r++)
				put_le32((uint8_t *)&v[r], v[r]);
			bf->f32 = (const uint8_t *)v;
			u_f32 += n;
		} else if (f->kind == TFK_FEAT_BYTES) {
			size_t it = 0, k = 0;

			bf->bv = u_bv;
			while (k < n && tfk_feat_bytes_next(f, &it,
					&bt->bv[u_bv + k].p,
					&bt->bv[u_bv + k].len))
				k++;
			u_bv += n;
		}
		bt->n_feat++;
	}
	bt->order = NULL;
	if (fo && n_data) {
		int64_t *ord = bt->i64 + u_i64, *seen = ord + fo->n;
		size_t r, k, F = n_data;

		tfk_feat_int64s(fo, ord, fo->n);
		for (k = 0; k < F; k++)
			seen[k] = -1;
		for (r = 0; r < N; r++)
			for (k = 0; k < F; k++) {
				int64_t v = ord[r * F + k];

				if (v < 0 || (uint64_t)v >= F ||
				    seen[v] == (int64_t)r)
					return tfk_errf(err, TFK_ECORRUPT,
							"feature \"%s\": row "
							"%zu is not an order "
							"of %zu features",
							TFK_BATCH_ORDER, r, F);
				seen[v] = (int64_t)r;
			}
		bt->order = ord;
	}
	bt->n_rows = N;
	return 0;
}

int tfk_batch_row(struct tfk_batch *bt, size_t i, const uint8_t **p,
		  size_t *len, struct tfk_err *err)
{
	size_t k, j;

	if (i >= bt->n_rows)
		return tfk_errf(err, TFK_EINVAL, "row %zu of a batch of %zu",
				i, bt->n_rows);
	begin(&bt->row);
	for (k = 0; k < bt->n_feat; k++) {
		const struct tfk_batch_feat *bf = &bt->feat[bt->order ?
			(size_t)bt->order[i * bt->n_feat + k] : k];
		size_t start, cnt, S = 0, P;
		uint8_t *o;

		if (bf->layout == TFK_BATCH_FIXED) {
			start = i * bf->row_len;
			cnt = bf->row_len;
		} else {
			start = bf->layout == TFK_BATCH_PADDED ?
				i * bf->row_len : (size_t)bf->row_start[i];
			cnt = (size_t)bf->row_lengths[i];
		}
		switch (bf->kind) {
		case TFK_FEAT_FLOAT:
			S = 4 * cnt;
			break;
		case TFK_FEAT_INT64:
			for (j = 0; j < cnt; j++)
				S += tfk_varint_size((uint64_t)bf->i64[start + j]);
			break;
		case TFK_FEAT_BYTES:
			for (j = 0; j < cnt; j++)
				S += 1 + tfk_varint_size(bt->bv[bf->bv + start + j].len) +
				     bt->bv[bf->bv + start + j].len;
			break;
		}
		if (bf->kind == TFK_FEAT_BYTES)
			P = S;
		else if (bf->kind == TFK_FEAT_NONE)
			P = 0;
		else
			P = cnt ? 1 + tfk_varint_size(S) + S : 0;
		o = entry(&bt->row, bf->name, bf->name_len, NULL, 0, bf->kind,
			  P);
		if (!o || !P)
			continue;
		if (bf->kind != TFK_FEAT_BYTES) {
			*o++ = 1 << 3 | 2;
			o = tfk_varint_put(o, S);
		}
		if (bf->kind == TFK_FEAT_FLOAT) {
			memcpy(o, bf->f32 + 4 * start, 4 * cnt);	/* cnt > 0 */
		} else if (bf->kind == TFK_FEAT_INT64) {
			for (j = 0; j < cnt; j++)
				o = tfk_varint_put(o, (uint64_t)bf->i64[start + j]);
		} else {
			for (j = 0; j < cnt; j++) {
				const struct tfk_batch_bytes *v =
					&bt->bv[bf->bv + start + j];

				*o++ = 1 << 3 | 2;
				o = tfk_varint_put(o, v->len);
				if (v->len)
					memcpy(o, v->p, v->len);
				o += v->len;
			}
		}
	}
	return finish(&bt->row, p, len, err);
}
