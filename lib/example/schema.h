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
 * Keys, all optional except "kind": "count" records that have the
 * feature; "length" the number of values per record; "size" (bytes only)
 * the byte length of each value; "range" min/max over numeric values;
 * "content" for bytes: "jpeg", "png", "gif", "bmp", "text" (valid UTF-8),
 * "binary"; "samples" up to 3 values (bytes: text shortened to 40
 * characters, or {"b64": ...} of at most 30 bytes); "shape" the shape of
 * one record's value when fixed ([] = scalar; -1 for an unknown
 * dimension), "dtype" of decoded bytes ("uint8" for raw pixels),
 * "encoding" of bytes ("raw", "jpeg", "png", "utf-8"), "label_names" for
 * class labels. Unknown keys are errors on read (a typo is not silent).
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

struct tfk_schema_feat {
	char *name;
	int kind;			/* enum tfk_feat_kind; NONE until seen */
	uint64_t count;			/* records with this feature */
	uint64_t len_min, len_max;	/* values per record */
	double len_sum;
	uint64_t size_min, size_max;	/* bytes per value (bytes kind) */
	double size_sum;
	uint64_t n_values;		/* all values seen (for size mean) */
	int has_range;
	double vmin, vmax;		/* numeric range */
	char content[8];		/* "" until known */
	int rank;			/* -1: no shape known */
	int64_t shape[TFK_SCHEMA_MAX_RANK];
	char dtype[16];			/* "" when not set */
	char encoding[16];		/* "" when not set */
	char **label_names;		/* owned strings */
	size_t n_label_names;
	/* samples, already rendered as JSON values */
	char *samples[TFK_SCHEMA_SAMPLES];
	size_t n_samples;
	int mixed;			/* kind changed between records */
};

struct tfk_schema {
	uint64_t records;
	struct tfk_schema_feat *feat;	/* in first-seen order */
	size_t n_feat, cap;
};

void tfk_schema_init(struct tfk_schema *s);
void tfk_schema_release(struct tfk_schema *s);

/* Add one decoded record's statistics. Errors: TFK_ENOMEM. */
int tfk_schema_observe(struct tfk_schema *s, const struct tfk_example *ex,
		       struct tfk_err *err);
/* The feature called name, created (kind NONE, rank -1) when absent;
 * NULL only when out of memory. */
struct tfk_schema_feat *tfk_schema_feature(struct tfk_schema *s,
					   const char *name);
/* The feature called name, or NULL. */
const struct tfk_schema_feat *tfk_schema_find(const struct tfk_schema *s,
					      const char *name);
/* Merge b's statistics into a (sharded runs, -j workers). */
int tfk_schema_merge(struct tfk_schema *a, const struct tfk_schema *b,
		     struct tfk_err *err);
/* Set a feature's label names (copied). */
int tfk_schema_set_labels(struct tfk_schema_feat *f, const char *const *names,
			  size_t n);

/* Render as the JSON document above (pretty, 2-space indent, newline). */
int tfk_schema_to_json(const struct tfk_schema *s, struct tfk_buf *out);
/* Write to path atomically. */
int tfk_schema_write(const struct tfk_schema *s, const char *path,
		     struct tfk_err *err);
/* Read a document; errors name path and the JSON path of the problem
 * ("x.schema.json: features.image.kind: expected bytes, float or int64"). */
int tfk_schema_read(struct tfk_schema *s, const char *path,
		    struct tfk_err *err);

#endif
