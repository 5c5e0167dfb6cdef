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
 * Protobuf rules honoured:
 *   - unknown fields of wire types 0, 1, 2 and 5 are skipped anywhere;
 *     groups (wire types 3 and 4) are refused;
 *   - a repeated map key keeps the last value, in the place of the first;
 *   - Features given twice merge their maps;
 *   - a map entry without a key has the empty name, without a value the
 *     kind NONE;
 *   - a oneof given twice keeps the last member; the same member given
 *     twice merges (the lists concatenate); a map entry's value given
 *     twice merges the same way;
 *   - a repeated scalar may arrive in any mix of packed runs and single
 *     values.
 * Stricter than protobuf: a known field with the wrong wire type is
 * corrupt (protobuf would keep it as an unknown field); no writer makes
 * one, so it is damage, and saying so beats silently dropping values.
 * Also unlike protobuf, names are not checked for UTF-8: they are bytes
 * here (exjson.h refuses to write one that is not text).
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

/* "bytes", "float", "int64", "none" ("?" for anything else). */
const char *tfk_feat_kind_name(int kind);

/* One decoded feature; pointers borrow the record buffer. */
struct tfk_feat {
	const char *name;	/* not NUL-terminated */
	size_t name_len;
	int kind;		/* enum tfk_feat_kind */
	size_t n;		/* number of values */
	/* A Feature message body holding exactly this feature's values:
	 * the fields of the kind that counts, from the first one after the
	 * last field of another kind (unknown fields may be interleaved).
	 * Accessors walk it, so lists split over several fields and
	 * unpacked encodings work. It is also a valid serialized Feature
	 * (tfk_exb_add_feat copies it). Empty for kind NONE. */
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
	/* private: name index for wide records, merge scratch */
	uint32_t *ht;		/* feat indexes, UINT32_MAX for empty */
	size_t ht_size;		/* slots allocated */
	size_t ht_mask;		/* slots in use - 1; 0: no index now */
	struct tfk_buf scratch;
	const uint8_t *base;	/* the message being decoded */
	size_t total;
};

void tfk_example_init(struct tfk_example *ex);
void tfk_example_release(struct tfk_example *ex);

/*
 * Decode a serialized Example. On success ex->feat[0..n_feat) describe
 * the features, borrowing buf until it is freed or changed (and until
 * the next parse into ex: merged values may live in ex). Errors:
 * TFK_ECORRUPT with "byte OFF: what" (the offset inside buf; callers
 * prefix file and record), or, for a payload that tfk_payload_guess
 * recognises, what it is instead ("byte 0: a tensorflow.Event
 * (TensorBoard event file, file_version \"brain.Event:2\"), not a
 * tf.Example"; "byte 3: ... (the payload is text, not a tf.Example)"), so that
 * no one is left decoding "wire type 1, want 2"; TFK_ENOMEM; after an
 * error ex holds no
 * features. The checks are complete: after success every accessor
 * below reads valid data.
 */
int tfk_example_parse(struct tfk_example *ex, const uint8_t *buf,
		      size_t len, struct tfk_err *err);

/*
 * What a payload is, judged from its top-level protobuf fields, for
 * messages about records that are not what a tool expects:
 *   TFK_PAYLOAD_EVENT    a tensorflow.Event (TensorBoard event files:
 *                        wall_time, field 1, a double, comes first, and
 *                        only Event's fields follow; formats/event.proto)
 *   TFK_PAYLOAD_SEQEX    a tf.SequenceExample with feature lists (fields
 *                        1 and 2 only, both messages, field 2 present)
 *   TFK_PAYLOAD_TEXT     valid UTF-8 with no control characters but tab,
 *                        CR and LF (a line of text)
 *   TFK_PAYLOAD_OTHER    none of these (an Example, or unknown bytes)
 * When version is not NULL and the payload is an Event that holds
 * file_version (the first record of an event file, "brain.Event:2"),
 * *version and *version_len get it (borrowed from p), else NULL and 0.
 */
enum {
	TFK_PAYLOAD_OTHER = 0,
	TFK_PAYLOAD_EVENT,
	TFK_PAYLOAD_SEQEX,
	TFK_PAYLOAD_TEXT
};
int tfk_payload_guess(const uint8_t *p, size_t len, const char **version,
		      size_t *version_len);

/* The feature called name (len bytes, may hold NULs), or NULL. A hash
 * lookup for wide records, a short scan otherwise. */
const struct tfk_feat *tfk_example_findn(const struct tfk_example *ex,
					 const char *name, size_t len);

/* The same for a NUL-terminated name (inline: a constant name's length
 * is folded at compile time). */
static inline const struct tfk_feat *
tfk_example_find(const struct tfk_example *ex, const char *name)
{
	return tfk_example_findn(ex, name, __builtin_strlen(name));
}

/*
 * Value accessors. Each copies up to max values into out (out may be
 * NULL when max is 0) and returns the number of values the feature
 * holds (which may exceed max), or TFK_EINVAL when the feature has
 * another kind.
 */
long tfk_feat_floats(const struct tfk_feat *f, float *out, size_t max);
long tfk_feat_int64s(const struct tfk_feat *f, int64_t *out, size_t max);

/* Iterate over a BytesList: set *it = 0 first; each call returns 1 with
 * the next value (borrowed, like the feature), 0 after the last. A
 * feature of another kind has no values (returns 0 at once). */
int tfk_feat_bytes_next(const struct tfk_feat *f, size_t *it,
			const uint8_t **p, size_t *len);

/* Decoding helpers shared with seqex.c ------------------------------ */

/*
 * Decode one Feature message body [p, p+len) into f (name left as is).
 * base is the start of the whole message, for error offsets. Errors:
 * TFK_ECORRUPT "byte OFF: what".
 */
int tfk_feat_parse(struct tfk_feat *f, const uint8_t *p, size_t len,
		   const uint8_t *base, struct tfk_err *err);

/*
 * For SequenceExample context, which is a Features message:
 * tfk_example_begin empties ex for a new message buf[0..len), then
 * tfk_example_parse_features decodes a Features body [p, p+len) inside
 * it, adding to (and replacing by name in) what ex already holds.
 * Errors as tfk_example_parse (which is begin + features fields).
 */
void tfk_example_begin(struct tfk_example *ex, const uint8_t *buf,
		       size_t len);
int tfk_example_parse_features(struct tfk_example *ex, const uint8_t *p,
			       size_t len, struct tfk_err *err);

/* Encoding ------------------------------------------------------------ */

/*
 * An Example builder. Features are written in the order added; a name
 * added twice is written twice (readers keep the last, as protobuf maps
 * do), so callers add each name once. Floats and int64s are written
 * packed, as TensorFlow writes them; an empty list is written as an
 * empty list message (kind set, no values), as TensorFlow does.
 */
struct tfk_example_builder {
	/* private: Features body, after a gap where _finish puts the
	 * Example header so that the result needs no copy */
	struct tfk_buf feats;
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
/* Copy a decoded feature unchanged (tfk-zip, tfk-map pass-through);
 * its name is f's name. */
void tfk_exb_add_feat(struct tfk_example_builder *b, const struct tfk_feat *f);
/* The same under another name (name_len bytes). */
void tfk_exb_add_feat_as(struct tfk_example_builder *b, const char *name,
			 size_t name_len, const struct tfk_feat *f);
/*
 * Finish: *p and *len get the serialized Example (valid until the next
 * reset or add). Returns 0 or TFK_ENOMEM if any add ran out of memory.
 * An Example with no features is "0a 00" (empty Features set). The
 * builder's buffer has TFK_EXB_ROOM_BEFORE bytes before *p and
 * TFK_EXB_ROOM_AFTER after *p + *len that the caller may write until
 * the next reset or add: room to frame the record in place (a TFRecord
 * header is 12 bytes, its footer 4).
 */
#define TFK_EXB_ROOM_BEFORE 12
#define TFK_EXB_ROOM_AFTER 4
int tfk_exb_finish(struct tfk_example_builder *b, const uint8_t **p,
		   size_t *len, struct tfk_err *err);

#endif
