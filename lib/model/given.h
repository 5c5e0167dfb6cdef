/*
 * given.h - a signature's inputs as saved_model_cli's options spell
 * them, turned into tensors by key: what `tfk-model run`/`bench` and
 * `tfk-lite run`/`bench` take.
 *
 * An option's value is "KEY=VALUE;KEY2=VALUE2" (';' outside quotes and
 * brackets separates items; tfk_given_split). By kind, VALUE is:
 *   TFK_GIVEN_NPY       FILE.npy, or FILE.npz[NAME] (NAME may be left
 *                       out for an npz with one array) -- io/npy.h
 *   TFK_GIVEN_EXPR      a Python literal (numbers, strings, nested lists
 *                       and tuples, True/False; nothing is evaluated)
 *   TFK_GIVEN_EXAMPLES  [{"feature": [values], ...}, ...]: serialized
 *                       tf.Examples (float, int or bytes lists by the
 *                       type of each list's first value)
 *   TFK_GIVEN_RECORDS   every record of a TFRecord file as a 1-D string
 *                       tensor; the key may be left out (key NULL: the
 *                       caller picks the signature's one string input)
 * A later item for the same key replaces the earlier one and says so in
 * `replaced` (the caller warns), as saved_model_cli does.
 */
#ifndef TFK_GIVEN_H
#define TFK_GIVEN_H

#include "graph/tensor.h"
#include "util/err.h"

#include <stddef.h>

enum tfk_given_kind {
	TFK_GIVEN_NPY, TFK_GIVEN_EXPR, TFK_GIVEN_EXAMPLES, TFK_GIVEN_RECORDS
};

struct tfk_given {
	char *key;		/* NULL: a records FILE without key */
	char *value;		/* the item's text after '=' */
	struct tfk_tensor t;
	const char *from;	/* the option: "--inputs" */
	const char *replaced;	/* the option of a value it replaced, or
				 * NULL */
};

struct tfk_givens {
	struct tfk_given *v;
	int n, cap;
};

/*
 * Split spec into items and call fn(key, klen, value, vlen, ctx, err)
 * for each (key NULL when the item has no '=' and key_optional is set;
 * without key_optional such an item is TFK_EINVAL "OPT: 'x' is not
 * KEY=VALUE"). Stops at fn's first error.
 */
int tfk_given_split(const char *spec, const char *opt, int key_optional,
		    int (*fn)(const char *k, size_t kl, const char *v,
			      size_t vl, void *ctx, struct tfk_err *err),
		    void *ctx, struct tfk_err *err);

/*
 * Read every item of spec (given as option opt, "--inputs") as kind
 * into g. Errors: the file's or literal's, prefixed "OPT: KEY" for
 * literals and examples, "OPT" for records; TFK_ENOMEM.
 */
int tfk_givens_add(struct tfk_givens *g, enum tfk_given_kind kind,
		   const char *spec, const char *opt, struct tfk_err *err);

/* The given value for key, or NULL. */
struct tfk_given *tfk_givens_find(struct tfk_givens *g, const char *key);

void tfk_givens_release(struct tfk_givens *g);

/* Every record of the TFRecord file path (any compression) as a 1-D
 * string tensor *t (zero rows for an empty file). The reader's errors;
 * *t is empty on failure. */
int tfk_given_records(const char *path, struct tfk_tensor *t,
		      struct tfk_err *err);

/* Fill numeric t with seeded random values (splitmix64 from *state:
 * floats uniform in [0, 1), integers and bools 0 or 1), what the bench
 * subcommands feed by default. TFK_EINVAL "cannot make random string
 * values" for other dtypes. */
int tfk_given_random(struct tfk_tensor *t, uint64_t *state,
		     struct tfk_err *err);

#endif
