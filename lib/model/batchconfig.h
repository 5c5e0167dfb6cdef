/*
 * batchconfig.h - TF Serving's --batching_parameters_file: a text-format
 * BatchingParameters (tensorflow_serving/servables/tensorflow/
 * session_bundle_config.proto), its wrapped integers written
 * `max_batch_size { value: 32 }`.
 *
 * Fields taken: max_batch_size, batch_timeout_micros,
 * max_enqueued_batches, num_batch_threads (each { value: N }),
 * allowed_batch_sizes (repeated, increasing, the last equal to
 * max_batch_size, as TF Serving requires), pad_variable_length_inputs
 * (false only) and thread_pool_name (read, unused: one pool per model
 * signature). Anything else is refused with its place.
 */
#ifndef TFK_BATCHCONFIG_H
#define TFK_BATCHCONFIG_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

#define TFK_MAX_ALLOWED_BATCH_SIZES 64

struct tfk_batch_config {
	int64_t max_batch_size;		/* default 32 */
	int64_t batch_timeout_micros;	/* default 1000 */
	int64_t max_enqueued_batches;	/* default 100 */
	int64_t num_batch_threads;	/* default 0: one per CPU */
	int64_t allowed[TFK_MAX_ALLOWED_BATCH_SIZES];
	int n_allowed;			/* 0: any size */
};

/* The defaults above into *c. */
void tfk_batch_config_defaults(struct tfk_batch_config *c);
int tfk_batch_config_parse(const char *text, size_t n, const char *file,
			   struct tfk_batch_config *c, struct tfk_err *err);
/* Read and parse a file (TFK_EIO when it cannot be read). */
int tfk_batch_config_load(const char *path, struct tfk_batch_config *c,
			  struct tfk_err *err);

#endif
