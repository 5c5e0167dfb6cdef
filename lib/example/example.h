/*
 * example.h - tf.Example: zero-copy decoding and encoding.
 *
 * Wire layout (protobuf; field numbers from TensorFlow's example.proto
 * and feature.proto, our copies in formats/):
 *
 *   Example          { Features features = 1; }
 *   Features         { map<string, Feature> feature = 1; }
 *                      map entry: { string key = 1; Feature value = 2; }
 *   Feature          { oneof kind { BytesList bytes_list = 1;
 *                                   FloatList float_list = 2;
 *                                   Int64List int64_list = 3; } }
 *   BytesList        { repeated bytes value = 1; }
 *   FloatList        { repeated float value = 1 [packed]; }
 *   Int64List        { repeated int64 value = 1 [packed]; }
 *   SequenceExample  { Features context = 1; FeatureLists feature_lists = 2; }
 *   FeatureLists     { map<string, FeatureList> feature_list = 1; }
 *   FeatureList      { repeated Feature feature = 1; }
 *
 * Wire types: a length-delimited field is tag (field<<3|2), varint
 * length, bytes; packed floats are one length-delimited run of 4-byte
 * little-endian values; packed int64s one run of varints (two's
 * complement, 10 bytes for negatives); unpacked values use tags
 * (1<<3|5) for a float and (1<<3|0) for an int64.
 *
 * The decoder records, for each feature, where its name and its value
 * list lie inside the caller's buffer: no copies and no allocation per
 * record once the feature array has grown to the widest record. Values
 * are read through tfk_feat_* accessors that accept both packed and
 * unpacked encodings (protobuf parsers must accept both). A Feature with
 * no kind set is legal and decodes as TFK_FEAT_NONE with no values.
 * Protobuf rules honoured: unknown fields are skipped, a repeated map
 * key keeps the last value, a repeated oneof keeps the last member, and
 * an embedded message given twice is merged (Features, lists).
 */
#ifndef TFK_EXAMPLE_H
#define TFK_EXAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

enum tfk_feat_kind {
	TFK_FEAT_NONE = 0,	/* Feature with no kind set */
	TFK_FEAT_BYTES = 1,
	TFK_FEAT_FLOAT = 2,
	TFK_FEAT_INT64 = 3
};

/* "bytes", "float", "int64", "none". */
const char *tfk_feat_kind_name(int kind);

/* One decoded feature; pointers borrow the record buffer. */
struct tfk_feat {
	const char *name;	/* not NUL-terminated */
	size_t name_len;
	int kind;		/* enum tfk_feat_kind */
	size_t n;		/* number of values */
	/* The Feature message body: accessors walk it, so lists split over
	 * several fields (merged messages) and unpacked encodings work. */
	const uint8_t *body;
	size_t body_len;
	/* Fast path: when the floats sit in one packed run, the n
	 * little-endian floats themselves; else NULL. */
	const uint8_t *packed;
};

struct tfk_example {
	struct tfk_feat *feat;	/* in wire order (map order as written) */
	size_t n_feat;
	size_t cap;
};

void tfk_example_init(struct tfk_example *ex);
void tfk_example_release(struct tfk_example *ex);

/*
 * Decode a serialized Example. On success ex->feat[0..n_feat) describe
 * the features, borrowing buf until it is freed or changed. Errors:
 * TFK_ECORRUPT with "byte OFF: what" (the offset inside buf; callers
 * prefix file and record), TFK_ENOMEM.
 */
int tfk_example_parse(struct tfk_example *ex, const uint8_t *buf,
		      size_t len, struct tfk_err *err);

/* The feature called name, or NULL. Linear scan: examples are small. */
const struct tfk_feat *tfk_example_find(const struct tfk_example *ex,
					const char *name);

/*
 * Value accessors. Each copies up to max values into out and returns
 * the number of values the feature holds (which may exceed max), or
 * TFK_EINVAL when the feature has another kind.
 */
long tfk_feat_floats(const struct tfk_feat *f, float *out, size_t max);
long tfk_feat_int64s(const struct tfk_feat *f, int64_t *out, size_t max);

/* Iterate over a BytesList: set *it = 0 first; each call returns 1 with
 * the next value (borrowed), 0 after the last. */
int tfk_feat_bytes_next(const struct tfk_feat *f, size_t *it,
			const uint8_t **p, size_t *len);

/* Encoding ------------------------------------------------------------ */

/*
 * An Example builder. Features are written in the order added; a name
 * added twice is written twice (readers keep the last, as protobuf maps
 * do), so callers add each name once. Floats and int64s are written
 * packed, as TensorFlow writes them.
 */
struct tfk_example_builder {
	struct tfk_buf out;	/* the serialized Example after _finish */
	struct tfk_buf feats;	/* Features body under construction */
	struct tfk_buf tmp;
};

void tfk_exb_init(struct tfk_example_builder *b);
void tfk_exb_release(struct tfk_example_builder *b);
/* Start a new Example (keeps memory). */
void tfk_exb_reset(struct tfk_example_builder *b);
void tfk_exb_add_bytes(struct tfk_example_builder *b, const char *name,
		       const uint8_t *const *vals, const size_t *lens, size_t n);
/* Single bytes value (the common image/text case). */
void tfk_exb_add_bytes1(struct tfk_example_builder *b, const char *name,
			const void *val, size_t len);
void tfk_exb_add_floats(struct tfk_example_builder *b, const char *name,
			const float *vals, size_t n);
void tfk_exb_add_int64s(struct tfk_example_builder *b, const char *name,
			const int64_t *vals, size_t n);
/* A Feature with no kind set. */
void tfk_exb_add_none(struct tfk_example_builder *b, const char *name);
/* Copy a decoded feature unchanged (tfk-zip, tfk-map pass-through). */
void tfk_exb_add_feat(struct tfk_example_builder *b, const struct tfk_feat *f);
/*
 * Finish: *p/*len get the serialized Example (valid until the next
 * reset). Returns 0 or TFK_ENOMEM if any add ran out of memory.
 */
int tfk_exb_finish(struct tfk_example_builder *b, const uint8_t **p,
		   size_t *len, struct tfk_err *err);

#endif
