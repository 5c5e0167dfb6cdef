/*
 * fuzz-textvec.c - TextVectorization, the lookups and their vocabulary
 * file parser, Hashing and Discretization on arbitrary bytes.
 *
 * Input: byte 0 picks the options (standardize, split, n-grams, output
 * mode, max_tokens, tie rule); the rest is cut at "\x00\x01" into a
 * vocabulary text and documents. Each run adapts a TextVectorization on
 * the documents and applies it to them, loads the vocabulary text into a
 * string and an integer lookup and looks every token up, hashes every
 * document, and adapts a Discretization on the bytes read as floats.
 * Beyond "no crash, no leak, no undefined behaviour": every index lies
 * in [0, vocabulary size) (or is the mask's drop), dense rows are finite
 * and non-negative, standardized text is never longer than its input,
 * whitespace-split tokens hold no ASCII whitespace, a saved vocabulary
 * loads back to the same one, and buckets lie in [0, boundaries].
 *
 * FUZZ-SEEDS: tests/fuzz/seeds/fuzz-textvec/*
 */
#include "prep/discretize.h"
#include "prep/fprint.h"
#include "prep/lookup.h"
#include "prep/textvec.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DOCS 64

static void check(int cond)
{
	if (!cond)
		abort();
}

static void lookups(const char *v, size_t vn, const char **doc,
		    const size_t *dl, size_t nd)
{
	struct tfk_lookup_opts o;
	struct tfk_lookup l, l2;
	struct tfk_err err;
	struct tfk_buf b;
	size_t i;

	tfk_lookup_opts_string(&o);
	o.num_oov = 1 + (long)(vn % 3);
	o.has_mask = vn & 1;
	o.mask = "";
	if (tfk_lookup_init(&l, &o, &err))
		abort();
	if (tfk_lookup_parse_vocab(&l, v, vn, "v", NULL, 0, &err) == 0) {
		for (i = 0; i < nd; i++) {
			int64_t x = tfk_lookup_index(&l, doc[i], dl[i], &err);

			check(x >= 0 && x < tfk_lookup_size(&l));
		}
		/* Saved text loads back to the same vocabulary. */
		tfk_buf_init(&b);
		if (tfk_lookup_vocab_text(&l, &b, &err) == 0 &&
		    tfk_lookup_init(&l2, &o, &err) == 0) {
			if (tfk_lookup_parse_vocab(&l2, (const char *)b.data, b.len,
						   "v2", NULL, 0, &err) == 0)
				check(tfk_lookup_size(&l2) <= tfk_lookup_size(&l));
			tfk_lookup_release(&l2);
		}
		tfk_buf_release(&b);
	}
	tfk_lookup_release(&l);

	tfk_lookup_opts_int(&o);
	o.num_oov = (long)(vn % 4);
	o.oov_farmhash = vn & 4;
	if (tfk_lookup_init(&l, &o, &err))
		abort();
	if (tfk_lookup_parse_vocab(&l, v, vn, "v", NULL, 0, &err) == 0) {
		for (i = 0; i < nd; i++) {
			int64_t x = tfk_lookup_index_int(&l, (int64_t)dl[i] - 3,
							 &err);

			check(x == TFK_EINVAL || (x >= 0 &&
						  x < tfk_lookup_size(&l)));
			(void)tfk_lookup_invert_int(&l, (int64_t)dl[i] - 3);
		}
	}
	tfk_lookup_release(&l);
}

static void textvec(uint8_t sel, const char **doc, const size_t *dl,
		    size_t nd)
{
	static const int modes[] = { TFK_LOOKUP_INT, TFK_LOOKUP_MULTI_HOT,
				     TFK_LOOKUP_COUNT, TFK_LOOKUP_TF_IDF };
	struct tfk_textvec_opts o;
	struct tfk_textvec tv;
	struct tfk_vcount *c;
	struct tfk_err err;
	size_t i, k, n;
	char *tmp;

	tfk_textvec_opts_default(&o);
	o.standardize = sel & 3;
	o.split = (sel >> 2) & 1;
	if (o.split)
		tfk_textvec_opts_ngrams_upto(&o, (sel >> 3) & 3);
	o.mode = modes[(sel >> 5) & 3];
	o.max_tokens = (sel & 0x80) ? 5 : 0;
	o.tie = sel & 1;
	if (o.mode == TFK_LOOKUP_INT && (sel & 2))
		o.output_sequence_length = 4;
	if (tfk_textvec_init(&tv, &o, &err))
		abort();
	if (tfk_vcount_new(&c, &err))
		abort();
	for (i = 0; i < nd; i++) {
		long t;

		tmp = malloc(dl[i] + 1);
		check(tfk_textvec_standardize(o.standardize, doc[i], dl[i], tmp) <=
		      dl[i]);
		free(tmp);
		t = tfk_textvec_tokens(&tv, doc[i], dl[i], &err);
		check(t >= 0);
		for (k = 0; o.split && !o.n_ngrams && k < (size_t)t; k++) {
			const char *s = tfk_textvec_token(&tv, k, &n);

			check(n > 0);
			while (n--)
				check(!strchr(" \t\n\v\f\r", s[n]) || !s[n]);
		}
		check(tfk_textvec_adapt(&tv, c, doc[i], dl[i], &err) == 0);
	}
	if (tfk_textvec_adapt_finish(&tv, c, &err) == 0) {
		long depth = tfk_textvec_depth(&tv);
		float *row = malloc((size_t)depth * sizeof(*row));

		for (i = 0; i < nd; i++) {
			if (o.mode == TFK_LOOKUP_INT) {
				const int64_t *out;

				check(tfk_textvec_int(&tv, doc[i], dl[i], &out, &n,
						      &err) == 0);
				for (k = 0; k < n; k++)
					check(out[k] >= 0 &&
					      out[k] < tfk_lookup_size(&tv.lk));
			} else {
				check(tfk_textvec_dense(&tv, doc[i], dl[i], row,
							&err) == 0);
				for (k = 0; k < (size_t)depth; k++)
					check(isfinite(row[k]) && row[k] >= 0);
			}
		}
		free(row);
	}
	tfk_vcount_free(c);
	tfk_textvec_release(&tv);
}

static void hashing_discretize(const uint8_t *p, size_t n, const char **doc,
			       const size_t *dl, size_t nd)
{
	struct tfk_hashing h = { 7, 1, 0, "", 0, 0, 0, { 1, 2 } };
	struct tfk_discretize d;
	struct tfk_err err;
	float f[256];
	size_t i, m = 0;

	for (i = 0; i < nd; i++) {
		int64_t b = tfk_hashing_str(&h, doc[i], dl[i]);

		check(b >= 0 && b < 7);
		check(tfk_fprint64(doc[i], dl[i]) == tfk_fprint64(doc[i], dl[i]));
		h.salted = !h.salted;
	}
	for (i = 0; i + 4 <= n && m < 256; i += 4) {
		memcpy(&f[m], p + i, 4);
		if (isfinite(f[m]) && fabsf(f[m]) < 1e30f)
			m++;
	}
	if (tfk_discretize_init_adapt(&d, 1 + (long)(n % 9), 0.05, &err))
		abort();
	for (i = 0; i < m; i += 37)
		check(tfk_discretize_update(&d, f + i, m - i < 37 ? m - i : 37,
					    &err) == 0);
	check(tfk_discretize_finish(&d, &err) == 0);
	for (i = 0; i < m; i++) {
		int64_t b = tfk_discretize_bucket(&d, f[i]);

		check(b >= 0 && (size_t)b <= d.n_bounds);
	}
	tfk_discretize_release(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *doc[MAX_DOCS], *s, *end, *v;
	size_t dl[MAX_DOCS], nd = 0, vn;

	if (size < 1)
		return 0;
	s = (const char *)data + 1;
	end = (const char *)data + size;
	/* Vocabulary text up to the first "\0\1", then documents. */
	v = s;
	while (s + 1 < end && !(s[0] == 0 && s[1] == 1))
		s++;
	vn = (size_t)((s + 1 < end ? s : end) - v);
	s = s + 1 < end ? s + 2 : end;
	while (s <= end && nd < MAX_DOCS) {
		const char *q = s;

		while (q + 1 < end && !(q[0] == 0 && q[1] == 1))
			q++;
		if (q + 1 >= end)
			q = end;
		doc[nd] = s;
		dl[nd++] = (size_t)(q - s);
		if (q == end)
			break;
		s = q + 2;
	}
	lookups(v, vn, doc, dl, nd);
	textvec(data[0], doc, dl, nd);
	hashing_discretize(data, size, doc, dl, nd);
	return 0;
}
