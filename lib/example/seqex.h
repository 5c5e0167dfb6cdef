/*
 * seqex.h - tf.SequenceExample: zero-copy decoding, for inspection and
 * JSON.
 *
 * Wire layout (field numbers from TensorFlow's example.proto and
 * feature.proto; our copies in formats/):
 *
 *   SequenceExample { Features context = 1; FeatureLists feature_lists = 2; }
 *   FeatureLists    { map<string, FeatureList> feature_list = 1; }
 *                     map entry: { string key = 1; FeatureList value = 2; }
 *   FeatureList     { repeated Feature feature = 1; }
 *
 * The context is decoded as an Example's Features (example.h, same
 * rules); each step of a feature list is one Feature, decoded into a
 * struct tfk_feat (empty name) that the tfk_feat_* accessors read.
 * Protobuf rules, as for Examples: unknown fields skipped, groups
 * refused, context or feature_lists given twice merge, a repeated list
 * name keeps the last list (in the place of the first), a list's value
 * given twice concatenates the steps, a missing key is the empty name.
 *
 * JSON form (what `tfk-cat --json` prints for a SequenceExample):
 *   {"context":{"id":["a"]},"feature_lists":{"tokens":[[1,2],[3]],"w":[[0.5],null]}}
 * context as exjson.h writes an Example; each list as an array of
 * steps, each step its value list (null for a Feature with no kind).
 */
#ifndef TFK_SEQEX_H
#define TFK_SEQEX_H

#include <stddef.h>
#include <stdint.h>

#include "example/example.h"
#include "util/buf.h"
#include "util/err.h"

/* One feature list: steps[first .. first + n) of its SequenceExample. */
struct tfk_seqlist {
	const char *name;	/* not NUL-terminated; borrows the buffer */
	size_t name_len;
	size_t first;
	size_t n;
};

struct tfk_seqex {
	struct tfk_example context;
	struct tfk_seqlist *lists;	/* in wire order */
	size_t n_lists, lists_cap;
	struct tfk_feat *steps;		/* every list's steps */
	size_t n_steps, steps_cap;
	/* private: list name index for records with many lists */
	uint32_t *ht;
	size_t ht_size, ht_mask;
};

void tfk_seqex_init(struct tfk_seqex *s);
void tfk_seqex_release(struct tfk_seqex *s);

/*
 * Decode a serialized SequenceExample; pointers borrow buf as for
 * tfk_example_parse. Errors: TFK_ECORRUPT "byte OFF: what", TFK_ENOMEM;
 * after an error s holds nothing.
 */
int tfk_seqex_parse(struct tfk_seqex *s, const uint8_t *buf, size_t len,
		    struct tfk_err *err);

/* The feature list called name, or NULL. */
const struct tfk_seqlist *tfk_seqex_find(const struct tfk_seqex *s,
					 const char *name);

/* Step i of list l (i < l->n). */
static inline const struct tfk_feat *
tfk_seqex_step(const struct tfk_seqex *s, const struct tfk_seqlist *l,
	       size_t i)
{
	return &s->steps[l->first + i];
}

/*
 * Append s as the JSON object above (compact, no newline). Errors:
 * TFK_ECORRUPT for a name that is not valid UTF-8, TFK_ENOMEM.
 */
int tfk_seqex_write_json(const struct tfk_seqex *s, struct tfk_buf *out,
			 struct tfk_err *err);

#endif
