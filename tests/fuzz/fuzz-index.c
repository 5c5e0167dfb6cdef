/*
 * fuzz-index.c - the record index parser (FILE.idx, DALI's text
 * format) on arbitrary bytes, with its contract as invariants.
 *
 * tfk_index_parse reads text written by anyone (DALI's tfrecord2idx, a
 * hand edit, a half-written file); tfk-cat --records and tfk-count
 * trust what it accepts to seek and to count. So on success: off[0] is
 * 0, every record is at least 16 bytes and starts where the previous
 * one ended (no wrap), and n lines were given; on failure the code is
 * TFK_ECORRUPT or TFK_ETRUNC with a message naming the file. Then
 * tfk_index_range is asked for slices built from the input's first
 * bytes: the range stays inside the index, as a Python slice would.
 * Writing the index back is not fuzzed (it would touch the disk).
 */
#include "io/index.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tfk_index ix;
	struct tfk_err err;
	size_t i, lines = 0;
	int rc;

	tfk_index_init(&ix);
	tfk_err_clear(&err);
	rc = tfk_index_parse(&ix, (const char *)data, size, "f.idx", &err);
	if (rc < 0) {
		if (rc != TFK_ECORRUPT && rc != TFK_ETRUNC && rc != TFK_ENOMEM)
			abort();
		if (strncmp(err.msg, "f.idx: ", 7))
			abort();
		tfk_index_release(&ix);
		return 0;
	}
	for (i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (ix.n != lines)
		abort();
	if (ix.n && ix.off[0] != 0)
		abort();
	for (i = 0; i < ix.n; i++)
		if (ix.off[i + 1] < ix.off[i] || ix.off[i + 1] - ix.off[i] < 16)
			abort();
	/* Slices from the first bytes: [a, b) clamped to [0, n]. */
	for (i = 0; i + 2 <= size && i < 16; i += 2) {
		uint64_t a = data[i], b = data[i + 1], off, k;

		if (data[i] & 0x80)
			a = UINT64_MAX - (data[i] & 0x7f);
		k = tfk_index_range(&ix, a, b, &off);
		if (k > ix.n)
			abort();
		if (k && (off != ix.off[a] || a + k > ix.n))
			abort();
		if (ix.n == 0 && (k || off))
			abort();
		if (ix.n && off > ix.off[ix.n])
			abort();
	}
	tfk_index_release(&ix);
	return 0;
}
