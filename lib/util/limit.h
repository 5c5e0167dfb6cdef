/*
 * limit.h - work and memory budgets for untrusted input.
 *
 * A file may describe far more than it holds: a shape of 2^40
 * elements, a gzip stream that inflates a thousandfold, a function
 * that calls the next one twice, twenty times over. Each reader checks
 * such a claim against a budget before it allocates or works, and a
 * budget comes from the environment (TFK_MAX_*, bytes or a count, with
 * the K/M/G/T suffixes of the tools' size options) or else a default.
 * A caller with its own setting (a tool's --max-record-bytes) passes
 * it instead. The budgets in use:
 *
 *   TFK_MAX_TENSOR_BYTES   one tensor's data           (graph/tensor.h)
 *   TFK_MAX_RECORD_BYTES   one TFRecord's payload      (io/record.h)
 *   TFK_MAX_IMPORT_NODES   nodes one SavedModel import
 *                          resolves, inlined copies too (model/import.h)
 */
#ifndef TFK_LIMIT_H
#define TFK_LIMIT_H

#include "util/err.h"

#include <stdint.h>

/*
 * Parse a size: decimal digits, optionally followed by K, M, G or T
 * (powers of 1024; "Ki"/"KiB"/"KB" spellings too). 0 and *out, or -1
 * (sign, blank, junk, overflow: *out unchanged).
 */
int tfk_size_parse(const char *s, uint64_t *out);

/*
 * The budget named by environment variable env: its value when set and
 * not empty, else def. 0 and *out, or TFK_EINVAL "TFK_MAX_X: 'abc' is
 * not a size" (a typo must not silently mean the default).
 */
int tfk_limit_get(const char *env, uint64_t def, uint64_t *out,
		  struct tfk_err *err);

#endif
