/*
 * batchconfig.c - TF Serving's batching parameters file (batchconfig.h),
 * a walk over the text-format tree of util/textproto.h.
 */
#include "model/batchconfig.h"

#include "util/textproto.h"

#include <inttypes.h>
#include <string.h>

void tfk_batch_config_defaults(struct tfk_batch_config *c)
{
	memset(c, 0, sizeof(*c));
	c->max_batch_size = 32;
	c->batch_timeout_micros = 1000;
	c->max_enqueued_batches = 100;
}

/* `name { value: N }`: N in [lo, hi]. */
static int wrapped(const struct tfk_tp_node *f, const char *file, int64_t lo,
		   int64_t hi, int64_t *v, struct tfk_err *err)
{
	int i, got = 0;

	if (tfk_tp_msg(f, file, err))
		return err->code;
	for (i = 0; i < f->n_kids; i++) {
		if (strcmp(f->kids[i].name, "value"))
			return tfk_tp_unknown(&f->kids[i], file, f->name,
					      "value", err);
		if (tfk_tp_int(&f->kids[i], file, lo, hi, v, err))
			return err->code;
		got = 1;
	}
	if (!got)
		*v = 0;	/* the wrapper's default */
	return 0;
}

static int walk(const struct tfk_tp_node *root, const char *file,
		struct tfk_batch_config *c, struct tfk_err *err)
{
	const struct tfk_tp_node *last = NULL;
	int i, b, rc = 0;
	int64_t v;

	for (i = 0; i < root->n_kids && !rc; i++) {
		const struct tfk_tp_node *k = &root->kids[i];

		if (!strcmp(k->name, "max_batch_size")) {
			rc = wrapped(k, file, 1, 1 << 20, &c->max_batch_size,
				     err);
		} else if (!strcmp(k->name, "batch_timeout_micros")) {
			rc = wrapped(k, file, 0, 60000000,
				     &c->batch_timeout_micros, err);
		} else if (!strcmp(k->name, "max_enqueued_batches")) {
			rc = wrapped(k, file, 1, 1 << 20,
				     &c->max_enqueued_batches, err);
		} else if (!strcmp(k->name, "num_batch_threads")) {
			rc = wrapped(k, file, 0, 1024, &c->num_batch_threads,
				     err);
		} else if (!strcmp(k->name, "allowed_batch_sizes")) {
			if (c->n_allowed == TFK_MAX_ALLOWED_BATCH_SIZES)
				return tfk_errf(err, TFK_EINVAL, "%s:%d:%d: "
						"more than %d allowed_batch_"
						"sizes", file, k->line, k->col,
						TFK_MAX_ALLOWED_BATCH_SIZES);
			rc = tfk_tp_int(k, file, 1, 1 << 20, &v, err);
			if (!rc && c->n_allowed &&
			    v <= c->allowed[c->n_allowed - 1])
				rc = tfk_errf(err, TFK_EINVAL, "%s:%d:%d: "
					      "allowed_batch_sizes must "
					      "increase", file, k->line,
					      k->col);
			if (!rc)
				c->allowed[c->n_allowed++] = v;
			last = k;
		} else if (!strcmp(k->name, "pad_variable_length_inputs")) {
			rc = tfk_tp_bool(k, file, &b, err);
			if (!rc && b)
				rc = tfk_errf(err, TFK_EINVAL, "%s:%d:%d: "
					      "pad_variable_length_inputs: "
					      "requests are batched only when "
					      "their shapes agree; give false",
					      file, k->line, k->col);
		} else if (!strcmp(k->name, "thread_pool_name")) {
			rc = tfk_tp_msg(k, file, err);
		} else {
			rc = tfk_tp_unknown(k, file, "BatchingParameters",
					    "max_batch_size, "
					    "batch_timeout_micros, "
					    "max_enqueued_batches, "
					    "num_batch_threads, "
					    "allowed_batch_sizes, "
					    "pad_variable_length_inputs, "
					    "thread_pool_name", err);
		}
	}
	if (!rc && c->max_batch_size < 1)
		rc = tfk_errf(err, TFK_EINVAL, "%s: max_batch_size must be "
			      "at least 1", file);
	if (!rc && c->max_enqueued_batches < 1)
		rc = tfk_errf(err, TFK_EINVAL, "%s: max_enqueued_batches must "
			      "be at least 1", file);
	if (!rc && last && c->allowed[c->n_allowed - 1] != c->max_batch_size)
		rc = tfk_errf(err, TFK_EINVAL, "%s:%d:%d: the last of "
			      "allowed_batch_sizes (%" PRId64 ") must equal "
			      "max_batch_size (%" PRId64 ")", file,
			      last->line, last->col,
			      c->allowed[c->n_allowed - 1], c->max_batch_size);
	return rc;
}

static int from_tree(struct tfk_tp_node *root, const char *file,
		     struct tfk_batch_config *c, struct tfk_err *err)
{
	int rc = walk(root, file, c, err);

	tfk_tp_free(root);
	if (rc)
		tfk_batch_config_defaults(c);
	return rc;
}

int tfk_batch_config_parse(const char *text, size_t n, const char *file,
			   struct tfk_batch_config *c, struct tfk_err *err)
{
	struct tfk_tp_node root;

	tfk_batch_config_defaults(c);
	if (tfk_tp_parse(text, n, file, &root, err))
		return err->code;
	return from_tree(&root, file, c, err);
}

int tfk_batch_config_load(const char *path, struct tfk_batch_config *c,
			  struct tfk_err *err)
{
	struct tfk_tp_node root;

	tfk_batch_config_defaults(c);
	if (tfk_tp_parse_file(path, &root, err))
		return err->code;
	return from_tree(&root, path, c, err);
}
