/*
 * textvec.c - TextVectorization: standardize, split, n-grams, lookup.
 *
 * One string at a time, into buffers the object reuses, so a stream of
 * records costs no allocation per record once the buffers have grown.
 * Standardization is a byte loop over a 256-entry class table (ASCII
 * case and punctuation cannot appear inside UTF-8 multi-byte sequences,
 * so no decoding is needed); tokens are (offset, length) pairs into the
 * standardized text, n-grams are appended to the same buffer.
 * Rejected: a regex engine for the punctuation class (TensorFlow uses
 * RE2, but the class is fixed and byte-level removal is exact).
 */
#include "prep/textvec.h"
#include "util/alloc.h"

#include <string.h>

/* Keras' class '[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'. */
static const char punct[] = "!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~'";

static int is_punct(unsigned char c)
{
	return c && strchr(punct, c) != NULL;
}

/* TensorFlow's str_util whitespace: isspace in the C locale. */
static int is_ws(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

int tfk_textvec_std_parse(const char *s)
{
	if (!s)
		return TFK_STD_NONE;
	if (!strcmp(s, "lower_and_strip_punctuation"))
		return TFK_STD_LOWER_AND_STRIP_PUNCTUATION;
	if (!strcmp(s, "lower"))
		return TFK_STD_LOWER;
	if (!strcmp(s, "strip_punctuation"))
		return TFK_STD_STRIP_PUNCTUATION;
	return -1;
}

int tfk_textvec_split_parse(const char *s)
{
	if (!s)
		return TFK_SPLIT_NONE;
	if (!strcmp(s, "whitespace"))
		return TFK_SPLIT_WHITESPACE;
	return -1;
}

void tfk_textvec_opts_default(struct tfk_textvec_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->standardize = TFK_STD_LOWER_AND_STRIP_PUNCTUATION;
	o->split = TFK_SPLIT_WHITESPACE;
	o->mode = TFK_LOOKUP_INT;
	o->output_sequence_length = -1;
}

void tfk_textvec_opts_ngrams_upto(struct tfk_textvec_opts *o, int n)
{
	int i;

	o->n_ngrams = n < TFK_TEXTVEC_MAX_NGRAMS ? n : TFK_TEXTVEC_MAX_NGRAMS;
	for (i = 0; i < o->n_ngrams; i++)
		o->ngrams[i] = i + 1;
}

int tfk_textvec_init(struct tfk_textvec *tv, const struct tfk_textvec_opts *o,
		     struct tfk_err *err)
{
	struct tfk_lookup_opts lo;
	int i;

	memset(tv, 0, sizeof(*tv));
	if (o->standardize < TFK_STD_NONE ||
	    o->standardize > TFK_STD_STRIP_PUNCTUATION)
		return tfk_errf(err, TFK_EINVAL, "standardize: unknown value %d",
				o->standardize);
	if (o->split != TFK_SPLIT_NONE && o->split != TFK_SPLIT_WHITESPACE)
		return tfk_errf(err, TFK_EINVAL, "split: unknown value %d",
				o->split);
	if (o->mode == TFK_LOOKUP_ONE_HOT || o->mode < TFK_LOOKUP_INT ||
	    o->mode > TFK_LOOKUP_TF_IDF)
		return tfk_errf(err, TFK_EINVAL, "output_mode: %s is not int, "
				"multi_hot, count or tf_idf",
				tfk_lookup_mode_name(o->mode));
	if (o->output_sequence_length >= 0 && o->mode != TFK_LOOKUP_INT)
		return tfk_errf(err, TFK_EINVAL, "output_sequence_length: only "
				"in int mode");
	if (o->n_ngrams < 0 || o->n_ngrams > TFK_TEXTVEC_MAX_NGRAMS)
		return tfk_errf(err, TFK_EINVAL, "ngrams: %d widths", o->n_ngrams);
	for (i = 0; i < o->n_ngrams; i++)
		if (o->ngrams[i] < 1)
			return tfk_errf(err, TFK_EINVAL, "ngrams[%d]: width %d, "
					"must be >= 1", i, o->ngrams[i]);
	if (o->n_ngrams && o->split == TFK_SPLIT_NONE)
		return tfk_errf(err, TFK_EINVAL, "ngrams: need a split");
	tv->o = *o;
	tfk_lookup_opts_string(&lo);
	lo.mode = o->mode;
	lo.max_tokens = o->max_tokens;
	lo.has_mask = 1;
	lo.mask = "";
	lo.mask_len = 0;
	lo.pad_to_max_tokens = o->pad_to_max_tokens;
	lo.tie = o->tie;
	tfk_buf_init(&tv->text);
	return tfk_lookup_init(&tv->lk, &lo, err);
}

void tfk_textvec_release(struct tfk_textvec *tv)
{
	if (!tv)
		return;
	tfk_lookup_release(&tv->lk);
	tfk_buf_release(&tv->text);
	tfk_free(tv->off);
	tfk_free(tv->len);
	tfk_free(tv->idx);
	memset(tv, 0, sizeof(*tv));
}

size_t tfk_textvec_standardize(int standardize, const char *s, size_t n,
			       char *out)
{
	int lower = standardize == TFK_STD_LOWER ||
		    standardize == TFK_STD_LOWER_AND_STRIP_PUNCTUATION;
	int strip = standardize == TFK_STD_STRIP_PUNCTUATION ||
		    standardize == TFK_STD_LOWER_AND_STRIP_PUNCTUATION;
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (strip && is_punct(c))
			continue;
		if (lower && c >= 'A' && c <= 'Z')
			c = (unsigned char)(c + ('a' - 'A'));
		out[o++] = (char)c;
	}
	return o;
}

static int push_tok(struct tfk_textvec *tv, size_t off, size_t len,
		    struct tfk_err *err)
{
	if (tv->n_tok == tv->cap_tok) {
		size_t cap = tv->cap_tok ? tv->cap_tok * 2 : 64;
		size_t *o = tfk_realloc(tv->off, cap * sizeof(*o));

		if (!o)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		tv->off = o;
		o = tfk_realloc(tv->len, cap * sizeof(*o));
		if (!o)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		tv->len = o;
		tv->cap_tok = cap;
	}
	tv->off[tv->n_tok] = off;
	tv->len[tv->n_tok] = len;
	tv->n_tok++;
	return 0;
}

long tfk_textvec_tokens(struct tfk_textvec *tv, const char *s, size_t n,
			struct tfk_err *err)
{
	size_t i, m, words;
	int g, rc;

	tv->n_tok = 0;
	tfk_buf_reset(&tv->text);
	if (tfk_buf_reserve(&tv->text, n ? n : 1))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	m = tfk_textvec_standardize(tv->o.standardize, s, n,
				    (char *)tv->text.data);
	tv->text.len = m;
	if (tv->o.split == TFK_SPLIT_NONE)
		return push_tok(tv, 0, m, err) ? TFK_ENOMEM : 1;
	for (i = 0; i < m;) {
		size_t start;

		while (i < m && is_ws(tv->text.data[i]))
			i++;
		if (i == m)
			break;
		start = i;
		while (i < m && !is_ws(tv->text.data[i]))
			i++;
		if ((rc = push_tok(tv, start, i - start, err)))
			return rc;
	}
	if (!tv->o.n_ngrams)
		return (long)tv->n_tok;
	/* n-grams: appended after the words, then moved to the front. */
	words = tv->n_tok;
	for (g = 0; g < tv->o.n_ngrams; g++) {
		size_t w = (size_t)tv->o.ngrams[g], j, k;

		for (j = 0; j + w <= words; j++) {
			size_t start = tv->text.len, need = w - 1;
			uint8_t *d;

			for (k = 0; k < w; k++)
				need += tv->len[j + k];
			/* Reserve first: the words are in this buffer. */
			if (tfk_buf_reserve(&tv->text, need))
				return tfk_errf(err, TFK_ENOMEM, "out of memory");
			d = tv->text.data + start;
			for (k = 0; k < w; k++) {
				if (k)
					*d++ = ' ';
				memcpy(d, tv->text.data + tv->off[j + k],
				       tv->len[j + k]);
				d += tv->len[j + k];
			}
			tv->text.len += need;
			if ((rc = push_tok(tv, start, tv->text.len - start, err)))
				return rc;
		}
	}
	if (tv->n_tok > words) {
		memmove(tv->off, tv->off + words, (tv->n_tok - words) *
			sizeof(*tv->off));
		memmove(tv->len, tv->len + words, (tv->n_tok - words) *
			sizeof(*tv->len));
	}
	tv->n_tok -= words;
	return (long)tv->n_tok;
}

const char *tfk_textvec_token(const struct tfk_textvec *tv, size_t i,
			      size_t *n)
{
	if (i >= tv->n_tok)
		return NULL;
	*n = tv->len[i];
	return (const char *)tv->text.data + tv->off[i];
}

int tfk_textvec_adapt(struct tfk_textvec *tv, struct tfk_vcount *c,
		      const char *s, size_t n, struct tfk_err *err)
{
	long k = tfk_textvec_tokens(tv, s, n, err), i;
	int rc;

	if (k < 0)
		return (int)k;
	for (i = 0; i < k; i++)
		if ((rc = tfk_vcount_add(c, tv->text.data + tv->off[i],
					 tv->len[i], err)))
			return rc;
	tfk_vcount_end_doc(c);
	return 0;
}

int tfk_textvec_adapt_finish(struct tfk_textvec *tv,
			     const struct tfk_vcount *c, struct tfk_err *err)
{
	return tfk_lookup_adapt(&tv->lk, c, err);
}

static int lookup_all(struct tfk_textvec *tv, const char *s, size_t n,
		      size_t min_cap, struct tfk_err *err)
{
	long k = tfk_textvec_tokens(tv, s, n, err), i;
	size_t need = (size_t)k > min_cap ? (size_t)k : min_cap;

	if (k < 0)
		return (int)k;
	if (need > tv->cap_idx || !tv->idx) {
		int64_t *p = tfk_realloc(tv->idx, (need ? need : 1) *
					 sizeof(*p));

		if (!p)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		tv->idx = p;
		tv->cap_idx = need ? need : 1;
	}
	for (i = 0; i < k; i++) {
		int64_t x = tfk_lookup_index(&tv->lk, tv->text.data + tv->off[i],
					     tv->len[i], err);

		if (x < 0 && x != TFK_LOOKUP_DROP)
			return (int)x;
		tv->idx[i] = x;
	}
	return 0;
}

int tfk_textvec_int(struct tfk_textvec *tv, const char *s, size_t n,
		    const int64_t **out, size_t *n_out, struct tfk_err *err)
{
	long L = tv->o.output_sequence_length;
	size_t i;
	int rc;

	if (tv->o.mode != TFK_LOOKUP_INT)
		return tfk_errf(err, TFK_EINVAL, "output_mode is %s, not int",
				tfk_lookup_mode_name(tv->o.mode));
	if ((rc = lookup_all(tv, s, n, L > 0 ? (size_t)L : 0, err)))
		return rc;
	*n_out = tv->n_tok;
	if (L >= 0) {
		for (i = tv->n_tok; i < (size_t)L; i++)
			tv->idx[i] = 0;
		*n_out = (size_t)L;
	}
	*out = tv->idx;
	return 0;
}

int tfk_textvec_dense(struct tfk_textvec *tv, const char *s, size_t n,
		      float *out, struct tfk_err *err)
{
	int rc;

	if (tv->o.mode == TFK_LOOKUP_INT)
		return tfk_errf(err, TFK_EINVAL, "output_mode is int, not dense");
	if ((rc = lookup_all(tv, s, n, 0, err)))
		return rc;
	return tfk_lookup_encode(&tv->lk, tv->idx, tv->n_tok, out, err);
}

long tfk_textvec_depth(const struct tfk_textvec *tv)
{
	return tfk_lookup_depth(&tv->lk);
}
