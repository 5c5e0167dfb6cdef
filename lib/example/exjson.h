/*
 * exjson.h - tf.Example as one JSON object per line: the form that
 * `tfk-cat --json` prints and `tfk-json` reads back.
 *
 *   {"label":[3],"x":[0.5,1.0],"text":["hi"],"img":[{"b64":"iVBO..."}],"unset":null}
 *
 * Writing (compact, features in wire order):
 *   - a feature name -> the list of its values; a Feature with no kind
 *     (TFK_FEAT_NONE) -> null;
 *   - int64 values as JSON integers;
 *   - float values with the shortest digits that read back to the same
 *     float, and always a '.' or an exponent ("1.0", never "1"), so a
 *     reader can tell floats from int64s; NaN, Infinity and -Infinity as
 *     bare words, as Python's json module writes them;
 *   - bytes values as JSON strings when they are valid UTF-8, else as
 *     {"b64": "<standard base64 with padding>"};
 *   - an empty list as a typed list, {"int64":[]}, {"float":[]} or
 *     {"bytes":[]}: "[]" alone would lose the kind, and the line must
 *     read back to the same record without a schema.
 * A feature name that is not valid UTF-8 cannot be written (JSON keys
 * are text): that is an error, as protobuf itself refuses such names.
 *
 * Reading accepts what writing produces, and:
 *   - a bare value as a one-value list ({"label": 3});
 *   - integral numbers in a float list ([1, 2.5] is two floats);
 *   - {"b64": ...} and strings mixed in one bytes list;
 *   - a typed list, {"KIND": [values]} (KIND bytes, float or int64),
 *     for any list: the kind it names is the feature's kind, and
 *     values that cannot have it are errors ("..., but the line says
 *     int64"); a schema that disagrees is an error too.
 * The kind of a feature comes from its values: strings or {"b64"} ->
 * bytes; any float token (with '.', exponent, NaN, Infinity) -> float;
 * integers only -> int64; null -> a Feature with no kind. A kind
 * lookup (the schema: name -> kind) overrides the guess where JSON is
 * ambiguous: a plain empty list (an error without it or a typed list),
 * integers in a float feature; values that cannot have the schema's
 * kind are errors. Errors name the feature (`feature "x": empty list
 * has no kind; write {"int64":[]}, ...`) or give the byte offset in the line of a syntax error
 * (`byte 17: expected ':' after a feature name`); callers prefix file
 * and line. A name given twice in one line is an error.
 *
 * NaN/Infinity: jansson refuses them, so the text reader is our own
 * (strict RFC 8259 JSON plus the three words); the json_t reader gets
 * what jansson parsed and never sees them.
 */
#ifndef TFK_EXJSON_H
#define TFK_EXJSON_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "example/example.h"
#include "util/buf.h"
#include "util/err.h"

/* Writing -------------------------------------------------------------- */

/*
 * Append ex as one compact JSON object (no newline) to out. Returns 0,
 * TFK_ENOMEM (out ran out of memory), or TFK_ECORRUPT for a feature
 * name that is not valid UTF-8 ("feature 2: name is not valid utf-8");
 * on error out may hold a partial object.
 */
int tfk_exjson_write(const struct tfk_example *ex, struct tfk_buf *out,
		     struct tfk_err *err);

/*
 * Append the name of member i of an object: ',' unless i is 0, name[0..
 * len) as a JSON string, ':'. Returns 0, or TFK_ECORRUPT "WHAT I: name is
 * not valid utf-8" (nothing appended) when the name is not UTF-8 (what:
 * "feature", "feature list").
 */
int tfk_exjson_add_key(struct tfk_buf *out, const char *name, size_t len,
		       const char *what, size_t i, struct tfk_err *err);

/* Append one feature's values: "[...]", or "null" for kind NONE. */
void tfk_exjson_add_values(struct tfk_buf *out, const struct tfk_feat *f);

/* Append one float as described above ("1.0", "0.1", "1e-45", "NaN"). */
void tfk_exjson_add_float(struct tfk_buf *out, float v);

/* Reading -------------------------------------------------------------- */

/*
 * The kind a schema gives the feature called name (NUL-terminated):
 * TFK_FEAT_BYTES/FLOAT/INT64, or TFK_FEAT_NONE when it does not know.
 */
typedef int (*tfk_exjson_kind_fn)(void *ctx, const char *name);

/* A kind lookup over a struct tfk_schema (example/schema.h) as ctx:
 * the feature's kind when the schema holds one. */
int tfk_exjson_schema_kind(void *schema, const char *name);

/* Reusable state of a reader: buffers that grow to the widest line
 * and are kept, so reading allocates nothing per line after a while. */
struct tfk_exjson_reader {
	tfk_exjson_kind_fn kind;	/* may be NULL */
	void *kind_ctx;
	/* private */
	struct tfk_buf text;	/* unescaped names and string values */
	struct tfk_buf vals;	/* the current feature's values */
	struct tfk_buf arr;	/* typed arrays handed to the builder */
	struct tfk_buf seen;	/* names of this line: offsets into text */
	const char *base;	/* line being read, for offsets */
	const char *end;
};

/* kind/ctx: optional lookup (NULL: guess every kind from the values). */
void tfk_exjson_reader_init(struct tfk_exjson_reader *r,
			    tfk_exjson_kind_fn kind, void *ctx);
void tfk_exjson_reader_release(struct tfk_exjson_reader *r);

/*
 * Parse one line (len bytes; leading and trailing white space, a final
 * newline included, are allowed) holding one JSON object, and add its
 * features to b in the order written (the caller resets b before and
 * calls tfk_exb_finish after). Errors: TFK_EINVAL with the messages
 * described above, TFK_ENOMEM. After an error b holds part of the
 * line's features: reset it.
 */
int tfk_exjson_read_line(struct tfk_exjson_reader *r, const char *line,
			 size_t len, struct tfk_example_builder *b,
			 struct tfk_err *err);

/*
 * The same for an object jansson parsed (strings may hold NULs when it
 * was loaded with JSON_ALLOW_NUL). Errors as above; a value that is not
 * an object is "expected a JSON object".
 */
int tfk_exjson_read_json(struct tfk_exjson_reader *r, const json_t *obj,
			 struct tfk_example_builder *b, struct tfk_err *err);

#endif
