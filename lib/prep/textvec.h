/*
 * textvec.h - keras.layers.TextVectorization as a plain kernel:
 * standardize, split, n-grams, then a StringLookup (lib/prep/lookup.h)
 * with mask token "" and OOV token "[UNK]", so in int mode index 0 is
 * padding and 1 is [UNK]; in the dense modes the vocabulary starts with
 * [UNK] at 0.
 *
 * Each step is TensorFlow's, as Keras calls it
 * (keras/src/layers/preprocessing/text_vectorization.py, _preprocess):
 *   lower              tf.strings.lower(x) with its default encoding "",
 *                      which is ASCII: only A-Z change. Non-ASCII letters
 *                      ("É") are kept as they are, as in Keras.
 *   strip_punctuation  tf.strings.regex_replace(x,
 *                      '[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']', ""):
 *                      the class is exactly the 32 ASCII punctuation
 *                      bytes (",-\." is the range , - .), which never
 *                      occur inside a UTF-8 multi-byte sequence, so they
 *                      are removed byte by byte. Unicode punctuation
 *                      ("¿", "—") stays.
 *   split whitespace   tf.strings.split(x): runs of the ASCII whitespace
 *                      bytes (space \t \n \v \f \r) separate tokens, none
 *                      empty (str_util's isspace).
 *   ngrams             tf.strings.ngrams(tokens, widths, separator=" "):
 *                      for each width in the order given, every run of
 *                      that many consecutive tokens joined by one space;
 *                      a sample shorter than a width gives none of it.
 * split "character" (tf.strings.unicode_split) is absent: it is
 * refused.
 */
#ifndef TFK_TEXTVEC_H
#define TFK_TEXTVEC_H

#include <stddef.h>
#include <stdint.h>

#include "prep/lookup.h"
#include "util/buf.h"
#include "util/err.h"

enum tfk_textvec_std {
	TFK_STD_NONE = 0,
	TFK_STD_LOWER_AND_STRIP_PUNCTUATION,
	TFK_STD_LOWER,
	TFK_STD_STRIP_PUNCTUATION
};

enum tfk_textvec_split {
	TFK_SPLIT_NONE = 0,
	TFK_SPLIT_WHITESPACE
};

/* Keras' names ("lower_and_strip_punctuation", ..., "whitespace"); NULL
 * means None. -1 when unknown (split "character" included). */
int tfk_textvec_std_parse(const char *s);
int tfk_textvec_split_parse(const char *s);

#define TFK_TEXTVEC_MAX_NGRAMS 16

/* Keras' DEFAULT_STRIP_REGEX (text_vectorization.py), the bytes of the
 * Python raw string r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']': the
 * StaticRegexReplace pattern of a strip_punctuation export. */
#define TFK_KERAS_STRIP_REGEX \
	"[!\"#$%&()\\*\\+,-\\./:;<=>?@\\[\\\\\\]^_`{|}~\\']"

struct tfk_textvec_opts {
	int standardize;	/* enum tfk_textvec_std */
	int split;		/* enum tfk_textvec_split */
	int ngrams[TFK_TEXTVEC_MAX_NGRAMS];	/* widths, each >= 1 */
	int n_ngrams;		/* 0: no n-grams (Keras ngrams=None) */
	int mode;		/* int, multi_hot, count, tf_idf */
	long max_tokens;	/* 0: unlimited */
	long output_sequence_length;	/* int mode; -1: None (ragged) */
	int pad_to_max_tokens;
	int tie;		/* TFK_VOCAB_TIE_* for adapt */
};

/* Keras' defaults: lower_and_strip_punctuation, whitespace, no n-grams,
 * int, no max_tokens, no output_sequence_length. */
void tfk_textvec_opts_default(struct tfk_textvec_opts *o);
/* Keras' ngrams=N: widths 1..N. */
void tfk_textvec_opts_ngrams_upto(struct tfk_textvec_opts *o, int n);

struct tfk_textvec {
	struct tfk_textvec_opts o;
	struct tfk_lookup lk;	/* the StringLookup: set or save its
				 * vocabulary with the tfk_lookup_* calls */
	struct tfk_buf text;	/* standardized text, then n-grams */
	size_t *off, *len;	/* tokens of the last call */
	size_t n_tok, cap_tok;
	int64_t *idx;
	size_t cap_idx;
};

/* Check o as Keras' constructor does (output_sequence_length only in int
 * mode, widths >= 1, n-grams need a split, mode not one_hot) and build
 * the lookup. Errors: TFK_EINVAL, TFK_ENOMEM. */
int tfk_textvec_init(struct tfk_textvec *tv, const struct tfk_textvec_opts *o,
		     struct tfk_err *err);
void tfk_textvec_release(struct tfk_textvec *tv);

/* standardize s[0..n) into out (room for n bytes); returns the length.
 * Pure: no state, no allocation. */
size_t tfk_textvec_standardize(int standardize, const char *s, size_t n,
			       char *out);

/* Standardize, split and make the n-grams of one string; returns the
 * number of tokens (>= 0) or a negative TFK_E*. */
long tfk_textvec_tokens(struct tfk_textvec *tv, const char *s, size_t n,
			struct tfk_err *err);
/* Token i of the last tfk_textvec_tokens; valid until the next call. */
const char *tfk_textvec_token(const struct tfk_textvec *tv, size_t i,
			      size_t *n);

/* adapt: count the tokens of one document (one string) into c. */
int tfk_textvec_adapt(struct tfk_textvec *tv, struct tfk_vcount *c,
		      const char *s, size_t n, struct tfk_err *err);
/* adapt: the vocabulary from c (tfk_lookup_adapt). */
int tfk_textvec_adapt_finish(struct tfk_textvec *tv,
			     const struct tfk_vcount *c, struct tfk_err *err);

/*
 * int mode: the indices of one string in *out (*n_out of them: the token
 * count, or output_sequence_length, truncated or padded with 0). Valid
 * until the next call.
 */
int tfk_textvec_int(struct tfk_textvec *tv, const char *s, size_t n,
		    const int64_t **out, size_t *n_out, struct tfk_err *err);
/* The dense modes: tfk_textvec_depth(tv) floats for one string. */
int tfk_textvec_dense(struct tfk_textvec *tv, const char *s, size_t n,
		      float *out, struct tfk_err *err);
long tfk_textvec_depth(const struct tfk_textvec *tv);

#endif
