/*
 * lookup.h - Keras' categorical preprocessing layers as plain kernels:
 * StringLookup / IntegerLookup (the IndexLookup machinery), the token
 * counter their adapt() fills, CategoryEncoding and Hashing.
 *
 * Index layout (keras/src/layers/preprocessing/index_lookup.py), for a
 * lookup with mask token M, num_oov_indices K and learned tokens t0..:
 *
 *   output_mode "int" with a mask:   0 = M, 1..K = OOV, K+1.. = t0, t1, ..
 *   otherwise:                       0..K-1 = OOV,      K..   = t0, t1, ..
 *
 * so oov_start = (mask && int mode), token_start = oov_start + K. An OOV
 * input goes to oov_start when K = 1, to oov_start + hash % K when K > 1
 * (strings: tfk_fprint64; integers: floor-mod, or Fingerprint64 of the
 * decimal text with oov_farmhash), and is an error when K = 0. In the
 * non-int modes the mask token is dropped (it counts nowhere).
 *
 * Adapted vocabulary (finalize_state): every token counted, the mask and
 * OOV tokens removed, sorted by count, high to low, ties by the token
 * bytes, high to low (Keras: np.lexsort((tokens, counts))[::-1]; its
 * docstring: "ties broken by sort order of the tokens (high to low)"),
 * then cut to max_tokens - token_start. TFK_VOCAB_TIE_FIRST breaks ties
 * by first occurrence instead (Keras 2.3's Counter.most_common order),
 * for callers that want that. tf_idf weights are
 * log(1 + num_documents / (1 + document_count)) per learned token, the
 * special slots in front get their mean.
 *
 * Integer vocabularies (IntegerLookup) store int64 keys; their text form
 * (vocabulary files, tfk_lookup_token_text) is decimal.
 */
#ifndef TFK_LOOKUP_H
#define TFK_LOOKUP_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

/* Keras output_mode. */
enum tfk_lookup_mode {
	TFK_LOOKUP_INT = 0,
	TFK_LOOKUP_ONE_HOT,
	TFK_LOOKUP_MULTI_HOT,
	TFK_LOOKUP_COUNT,
	TFK_LOOKUP_TF_IDF
};

/* "int", "one_hot", "multi_hot" (alias "binary"), "count", "tf_idf"
 * (alias "tf-idf") -> mode; -1 when unknown. */
int tfk_lookup_mode_parse(const char *s);
const char *tfk_lookup_mode_name(int mode);

/* An index that counts nowhere: the mask token in a non-int mode. */
#define TFK_LOOKUP_DROP (-2)

/* Token counter (adapt) ------------------------------------------------- */

/*
 * Counts tokens over any number of documents in one hash table: memory is
 * the distinct tokens, not the input. Each token also gets the number of
 * documents it appears in (for tf_idf) and the order it was first seen.
 */
struct tfk_vcount;

int tfk_vcount_new(struct tfk_vcount **c, struct tfk_err *err);
void tfk_vcount_free(struct tfk_vcount *c);
/* Count one occurrence of p[0..n) in the current document. */
int tfk_vcount_add(struct tfk_vcount *c, const void *p, size_t n,
		   struct tfk_err *err);
/* Count one occurrence of an integer token. */
int tfk_vcount_add_int(struct tfk_vcount *c, int64_t v, struct tfk_err *err);
/* End the current document (documents = calls to this). */
void tfk_vcount_end_doc(struct tfk_vcount *c);
size_t tfk_vcount_size(const struct tfk_vcount *c);
int64_t tfk_vcount_docs(const struct tfk_vcount *c);
/* Count and document count of p[0..n); 0 when never seen. */
int64_t tfk_vcount_get(const struct tfk_vcount *c, const void *p, size_t n,
		       int64_t *docs);

enum { TFK_VOCAB_TIE_KERAS = 0, TFK_VOCAB_TIE_FIRST = 1 };

/* Lookup (StringLookup, IntegerLookup) ---------------------------------- */

struct tfk_lookup_opts {
	int mode;		/* enum tfk_lookup_mode */
	int is_int;		/* IntegerLookup: int64 keys */
	long max_tokens;	/* 0: unlimited; else > 1, counts specials */
	long num_oov;		/* num_oov_indices, >= 0 (Keras default 1) */
	int has_mask;		/* mask_token set */
	const char *mask;	/* string mask (is_int: unused) */
	size_t mask_len;
	int64_t mask_int;	/* IntegerLookup mask value */
	const char *oov;	/* oov_token (StringLookup "[UNK]") */
	size_t oov_len;
	int64_t oov_int;	/* IntegerLookup oov_token (-1) */
	int invert;		/* index -> token (int mode only) */
	int pad_to_max_tokens;	/* dense modes: depth = max_tokens */
	int oov_farmhash;	/* IntegerLookup oov_method "farmhash" */
	int tie;		/* TFK_VOCAB_TIE_* for adapt */
};

/* StringLookup's defaults: int mode, 1 OOV index, mask none, "[UNK]". */
void tfk_lookup_opts_string(struct tfk_lookup_opts *o);
/* IntegerLookup's defaults: int mode, 1 OOV index, mask none, oov -1. */
void tfk_lookup_opts_int(struct tfk_lookup_opts *o);

struct tfk_lookup {
	struct tfk_lookup_opts o;	/* mask/oov bytes are copied */
	struct tfk_vcount *vocab;	/* learned tokens, in index order */
	float *idf;			/* tf_idf: depth weights */
	long oov_start, token_start;
	int ready;			/* a vocabulary is set */
	int fixed;			/* ... by set_vocab: no adapt */
	char *mask_copy, *oov_copy;
};

/* Check o (Keras' constructor rules: max_tokens > 1, num_oov >= 0,
 * invert only in int mode, pad_to_max_tokens needs max_tokens) and make
 * an empty lookup. Errors: TFK_EINVAL, TFK_ENOMEM. */
int tfk_lookup_init(struct tfk_lookup *l, const struct tfk_lookup_opts *o,
		    struct tfk_err *err);
void tfk_lookup_release(struct tfk_lookup *l);

/*
 * set_vocabulary: tokens[i] (len[i] bytes; is_int: ignored, vals[i] used)
 * for i < n. When the list starts with exactly the special tokens
 * (mask if oov_start, then num_oov copies of the OOV token) they are
 * skipped. idf (n_idf weights, tf_idf mode only, required there) are the
 * weights of the whole list; without the special prefix the front slots
 * get their mean. Errors (TFK_EINVAL): empty list, repeated token (named),
 * mask token or (invert) OOV token inside, size over max_tokens, idf
 * missing or of the wrong length.
 */
int tfk_lookup_set_vocab(struct tfk_lookup *l, const char *const *tokens,
			 const size_t *len, const int64_t *vals, size_t n,
			 const float *idf, size_t n_idf, struct tfk_err *err);
/* set_vocabulary from text, one token per line ('\n'; a '\r' before it
 * is dropped; trailing empty lines dropped, as Keras' load_assets).
 * is_int: each line a decimal int64. name is for error messages
 * ("vocab.txt:3: ..."). tf_idf takes idf like set_vocab. */
int tfk_lookup_parse_vocab(struct tfk_lookup *l, const char *text,
			   size_t n, const char *name, const float *idf,
			   size_t n_idf, struct tfk_err *err);
/* The same from a file. */
int tfk_lookup_load_vocab(struct tfk_lookup *l, const char *path,
			  const float *idf, size_t n_idf, struct tfk_err *err);
/* get_vocabulary(include_special_tokens=True) joined by '\n' with no
 * final newline (Keras' save_assets), appended to b. */
int tfk_lookup_vocab_text(const struct tfk_lookup *l, struct tfk_buf *b,
			  struct tfk_err *err);
/* The same written to path (complete or not at all). */
int tfk_lookup_save_vocab(const struct tfk_lookup *l, const char *path,
			  struct tfk_err *err);

/* adapt: the vocabulary (and idf weights in tf_idf mode) from counts.
 * Replaces any earlier vocabulary. TFK_EINVAL when a set (non-adapted)
 * vocabulary exists, as Keras. */
int tfk_lookup_adapt(struct tfk_lookup *l, const struct tfk_vcount *c,
		     struct tfk_err *err);

/* vocabulary_size(): special slots + learned tokens. */
long tfk_lookup_size(const struct tfk_lookup *l);
/* Output width of the dense modes: max_tokens with pad_to_max_tokens,
 * else tfk_lookup_size. */
long tfk_lookup_depth(const struct tfk_lookup *l);
/* Entry i of get_vocabulary(): *n bytes (the mask, the OOV token or a
 * learned token). NULL when i is out of range or the keys are integers
 * (use tfk_lookup_token_int). Valid until the vocabulary changes. */
const char *tfk_lookup_token(const struct tfk_lookup *l, long i, size_t *n);
int64_t tfk_lookup_token_int(const struct tfk_lookup *l, long i);
/* Weight of slot i (tf_idf), 0 past the vocabulary. */
float tfk_lookup_idf(const struct tfk_lookup *l, long i);

/*
 * Index of a string / integer token: an index, TFK_LOOKUP_DROP for the
 * mask in a non-int mode, or TFK_EINVAL (num_oov = 0 and the token is not
 * in the vocabulary; err names it). TFK_EINVAL also when no vocabulary is
 * set or the key kind does not match is_int.
 */
int64_t tfk_lookup_index(const struct tfk_lookup *l, const void *p,
			 size_t n, struct tfk_err *err);
int64_t tfk_lookup_index_int(const struct tfk_lookup *l, int64_t v,
			     struct tfk_err *err);

/*
 * invert: the token of index i (the mask for 0 when there is one, the
 * OOV token for any index without a learned token). *n gets the length;
 * for is_int use tfk_lookup_invert_int.
 */
const char *tfk_lookup_invert(const struct tfk_lookup *l, int64_t i,
			      size_t *n);
int64_t tfk_lookup_invert_int(const struct tfk_lookup *l, int64_t i);

/*
 * The dense modes for one sample of n indices (from tfk_lookup_index,
 * DROP allowed): one_hot writes n rows of depth floats, multi_hot,
 * count and tf_idf one row of depth floats (tf_idf = count * idf).
 * out is overwritten. TFK_EINVAL in int mode or for an index outside
 * [0, depth).
 */
int tfk_lookup_encode(const struct tfk_lookup *l, const int64_t *idx,
		      size_t n, float *out, struct tfk_err *err);

/* CategoryEncoding ------------------------------------------------------ */

/*
 * keras.layers.CategoryEncoding(num_tokens, output_mode) on one sample of
 * n integer values: one_hot (n rows of num_tokens), multi_hot or count
 * (one row; count_weights, when not NULL, adds weights[i] instead of 1).
 * Every value must lie in [0, num_tokens): else TFK_EINVAL naming the
 * value and its position.
 */
int tfk_catenc(long num_tokens, int mode, const int64_t *v, size_t n,
	       const float *count_weights, float *out, struct tfk_err *err);

/* Hashing --------------------------------------------------------------- */

struct tfk_hashing {
	long num_bins;		/* > 0 */
	int has_mask;		/* mask_value set: bin 0 is the mask's */
	int mask_is_int;
	const char *mask;	/* string mask_value */
	size_t mask_len;
	int64_t mask_int;
	int salted;		/* SipHash-2-4 with salt[0], salt[1] */
	uint64_t salt[2];	/* Keras: salt=s is [s, s] */
};

/* keras.layers.Hashing bin of a string: to_hash_bucket_fast (FarmHash
 * Fingerprint64) or, salted, to_hash_bucket_strong (SipHash), modulo
 * num_bins, or num_bins - 1 shifted up by one with a mask (the mask
 * itself is 0). */
int64_t tfk_hashing_str(const struct tfk_hashing *h, const void *p,
			size_t n);
/* An integer input is hashed as its decimal text (tf.as_string). */
int64_t tfk_hashing_int(const struct tfk_hashing *h, int64_t v);
/* A float input is compared to an integer mask, then truncated to int64
 * as tf.cast; TFK_EINVAL (negative) for NaN or out of int64 range. */
int64_t tfk_hashing_float(const struct tfk_hashing *h, double v);

/*
 * The table of a StringLookup or IntegerLookup graph node, built from
 * its attrs (vocabulary, output_mode, mask and OOV tokens, idf_weights):
 * the node's kernel and the SavedModel writer build it alike. 0, or an
 * error with l released.
 */
struct tfk_node;
int tfk_lookup_from_node(const struct tfk_node *n, struct tfk_lookup *l,
			 struct tfk_err *err);

#endif
