/*
 * schema.h - what a set of Example records holds: inferred, written as
 * JSON, read back.
 *
 * The schema document is what `tfk-inspect --json` prints and what the
 * converters write next to their shards as PREFIX.schema.json, so later
 * tools (tfk-json --schema, tfk-train) need no flags to know the data:
 *
 *   {
 *     "format": "tfkit-schema", "version": 1,
 *     "records": 60000,
 *     "features": {
 *       "image": {"kind": "bytes", "count": 60000,
 *                 "length": {"min": 1, "max": 1, "mean": 1.0},
 *                 "size": {"min": 784, "max": 784, "mean": 784.0},
 *                 "content": "binary",
 *                 "shape": [28, 28, 1], "dtype": "uint8", "encoding": "raw"},
 *       "label": {"kind": "int64", "count": 60000,
 *                 "length": {"min": 1, "max": 1, "mean": 1.0},
 *                 "range": {"min": 0, "max": 9},
 *                 "shape": [], "label_names": ["T-shirt/top", ...],
 *                 "samples": [9, 0, 0]}
 *     }
 *   }
 *
 * Top-level keys: "format" (always "tfkit-schema") and "version" (1) are
 * required; "records" is the number of records looked at; an Example
 * schema has "features", a SequenceExample schema has "context" and
 * "feature_lists" instead (each an object of features as above).
 *
 * Feature keys, all optional except "kind":
 *   "kind"        "bytes", "float", "int64"; "none" when every record
 *                 held an empty Feature (no kind set); "mixed" when
 *                 records disagree (no TF parser can read such a feature)
 *   "count"       records that have the feature (<= "records")
 *   "length"      {min, max, mean} number of values per record (feature
 *                 lists: per step)
 *   "steps"       feature lists only: {min, max, mean} Features per list
 *   "size"        bytes only: {min, max, mean} byte length of one value
 *   "range"       float/int64: {min, max} over the finite values
 *   "nonfinite"   float: how many values were NaN or +-inf (not in range)
 *   "content"     bytes: "jpeg" (FF D8 FF), "png" (89 50 4E 47 0D 0A 1A
 *                 0A), "gif" (GIF87a/GIF89a), "bmp" ("BM"), "text" (valid
 *                 UTF-8), else "binary"; values that disagree make the
 *                 feature "binary", the most general
 *   "shape"       the shape of one record's value when fixed ([] = scalar;
 *                 -1 for an unknown dimension). Inferred from data alone
 *                 it is [n] when every record holds n values (TF's
 *                 FixedLenFeature([n])); converters set richer shapes.
 *   "dtype"       of decoded bytes: "uint8", "int8", "uint16", "int16",
 *                 "int32", "int64", "float16", "float32", "float64",
 *                 "bool", "string"
 *   "encoding"    of bytes: "raw", "jpeg", "png", "gif", "bmp", "utf-8"
 *   "label_names" class names, index = label value
 *   "samples"     up to 3 values, the first value of the first records
 *                 (feature lists: of the first steps):
 *                 numbers (non-finite floats as the strings "NaN",
 *                 "Infinity", "-Infinity"), text shortened to 40
 *                 characters, or {"b64": ...} of at most 30 bytes
 * Unknown keys, wrong types and out-of-range values are errors on read
 * (a typo is not silent), named by their JSON path.
 */
#ifndef TFK_SCHEMA_H
#define TFK_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "example/example.h"
#include "util/buf.h"
#include "util/err.h"

#define TFK_SCHEMA_MAX_RANK 8
#define TFK_SCHEMA_SAMPLES 3

/* Bytes features that hold more than one value per record get the text
 * of a sample shortened to this many characters, binary to B64 bytes. */
#define TFK_SCHEMA_SAMPLE_CHARS 40
#define TFK_SCHEMA_SAMPLE_B64 30

struct tfk_schema_feat {
	char *name;			/* NUL-terminated copy */
	size_t name_len;		/* names may hold NUL bytes */
	int kind;			/* enum tfk_feat_kind; NONE until seen */
	int mixed;			/* kind changed between records */
	uint64_t count;			/* records with this feature */
	uint64_t len_min, len_max;	/* values per record (list: per step) */
	double len_sum;
	uint64_t n_len;			/* lengths observed (list: steps) */
	uint64_t size_min, size_max;	/* bytes per value (bytes kind) */
	double size_sum;
	uint64_t n_values;		/* all values seen (for size mean) */
	int has_range;
	double vmin, vmax;		/* numeric range, finite values */
	int64_t imin, imax;		/* exact range of int64 values */
	uint64_t n_nonfinite;		/* NaN and inf floats */
	char content[8];		/* "" until known */
	int rank;			/* -1: no shape set explicitly */
	int64_t shape[TFK_SCHEMA_MAX_RANK];
	char dtype[16];			/* "" when not set */
	char encoding[16];		/* "" when not set */
	char **label_names;		/* owned strings */
	size_t n_label_names;
	/* samples, already rendered as JSON values */
	char *samples[TFK_SCHEMA_SAMPLES];
	size_t n_samples;
	/* feature lists only: Features per list */
	uint64_t steps_min, steps_max;
	double steps_sum;
};

struct tfk_schema {
	uint64_t records;
	int sequence;			/* SequenceExample: context + lists */
	struct tfk_schema_feat *feat;	/* features (sequence: context), in
					 * first-seen order */
	size_t n_feat, cap;
	struct tfk_schema_feat *lists;	/* feature lists, first-seen order */
	size_t n_lists, cap_lists;
	/* private: scratch space for values and a lookup hint */
	void *scratch;
	size_t scratch_cap;
	size_t hint;
};

void tfk_schema_init(struct tfk_schema *s);
void tfk_schema_release(struct tfk_schema *s);

/* Add one decoded record's statistics (records += 1). Errors:
 * TFK_ENOMEM, TFK_ECORRUPT when a value list does not decode. */
int tfk_schema_observe(struct tfk_schema *s, const struct tfk_example *ex,
		       struct tfk_err *err);

/*
 * The pieces of tfk_schema_observe, for SequenceExamples: per record,
 * tfk_schema_observe_feat for each context feature (into s->feat) and
 * tfk_schema_observe_list for each feature list (n_steps Features, into
 * s->lists), then s->records++ by the caller. Both count one record for
 * the feature. name is name_len bytes (not NUL-terminated).
 */
int tfk_schema_observe_feat(struct tfk_schema *s, const struct tfk_feat *f,
			    struct tfk_err *err);
int tfk_schema_observe_list(struct tfk_schema *s, const char *name,
			    size_t name_len, const struct tfk_feat *steps,
			    size_t n_steps, struct tfk_err *err);

/* The feature called name, created (kind NONE, rank -1) when absent;
 * NULL only when out of memory. */
struct tfk_schema_feat *tfk_schema_feature(struct tfk_schema *s,
					   const char *name);
/* The feature called name, or NULL. */
const struct tfk_schema_feat *tfk_schema_find(const struct tfk_schema *s,
					      const char *name);
/* The feature list called name, or NULL. */
const struct tfk_schema_feat *tfk_schema_find_list(const struct tfk_schema *s,
						   const char *name);
/* Merge b's statistics into a (sharded runs, -j workers): counts add,
 * ranges widen, samples fill up to 3, disagreeing kinds become mixed and
 * disagreeing content "binary". Errors: TFK_ENOMEM, TFK_EINVAL when one
 * is a SequenceExample schema and the other not. */
int tfk_schema_merge(struct tfk_schema *a, const struct tfk_schema *b,
		     struct tfk_err *err);
/* Set a feature's label names (copied). Returns 0 or TFK_ENOMEM. */
int tfk_schema_set_labels(struct tfk_schema_feat *f, const char *const *names,
			  size_t n);
/* Set a feature's shape explicitly (rank <= TFK_SCHEMA_MAX_RANK). */
void tfk_schema_set_shape(struct tfk_schema_feat *f, int rank,
			  const int64_t *shape);

/*
 * The shape of f as rendered: the explicit one, else [n] when every
 * record seen held n values (and the kind is known and not mixed).
 * Fills shape[0..rank) and returns rank, or -1 when not fixed.
 */
int tfk_schema_feat_shape(const struct tfk_schema_feat *f, int64_t *shape);
/* "bytes", "float", "int64", "none", or "mixed". */
const char *tfk_schema_kind_name(const struct tfk_schema_feat *f);

/* Render as the JSON document above (pretty, 2-space indent, newline).
 * Returns 0 or TFK_ENOMEM. */
int tfk_schema_to_json(const struct tfk_schema *s, struct tfk_buf *out);
/* Write to path ("-": stdout) atomically. */
int tfk_schema_write(const struct tfk_schema *s, const char *path,
		     struct tfk_err *err);
/*
 * Read a document. s is initialized by the call (pass a released or
 * never-initialized struct); on failure it is left empty, to be
 * released. Errors name path and the JSON path of the problem:
 *   "x.schema.json: features.image.kind: expected bytes, float, int64,
 *    none or mixed"
 * TFK_EIO (cannot read), TFK_ECORRUPT (not JSON, or not a valid
 * document), TFK_ENOMEM.
 */
int tfk_schema_read(struct tfk_schema *s, const char *path,
		    struct tfk_err *err);
/* The same from memory: text[0..len) is the document, name is used in
 * messages. */
int tfk_schema_parse(struct tfk_schema *s, const char *name,
		     const char *text, size_t len, struct tfk_err *err);

#endif
