/*
 * fuzz-idx.c - the IDX reader on arbitrary bytes, plain and gzipped.
 *
 * FUZZ-SEEDS: tests/fuzz/seeds/fuzz-idx/*
 *
 * Each input is read twice: as a plain file (mapped, size-checked at
 * open) and gzip-compressed here with zlib (streamed, checked as it
 * goes). Beyond "no crash, no leak":
 *  - tfk_idx_parse_header on the input agrees with what open reports;
 *  - both reads end with the same status: a truncated file is TFK_ETRUNC
 *    and a padded one TFK_ECORRUPT whichever way it is read;
 *  - a successful read returns exactly dims[0] items whose bytes are the
 *    input's bytes after the header.
 * Files are memfds (/proc/self/fd/N): nothing is written to disk.
 */
#include "data/idx.h"
#include "util/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

static int fds[2] = { -1, -1 };
static char paths[2][64];
static uint8_t *zbuf;
static size_t zcap;

static void put(int k, const uint8_t *p, size_t n)
{
	if (fds[k] < 0) {
		fds[k] = memfd_create("fuzz-idx", 0);
		if (fds[k] < 0)
			abort();
		snprintf(paths[k], sizeof(paths[k]), "/proc/self/fd/%d", fds[k]);
	}
	if (ftruncate(fds[k], 0) || (n && pwrite(fds[k], p, n, 0) != (ssize_t)n))
		abort();
}

/* One deflate stream for the whole run (reset per input): a fresh one
 * per input would cost more page faults than the reader under test. */
static z_stream z;
static int z_live;

static size_t gzip_of(const uint8_t *p, size_t n)
{
	size_t bound;

	if (!z_live) {
		if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8,
				 Z_DEFAULT_STRATEGY) != Z_OK)
			abort();
		z_live = 1;
	} else if (deflateReset(&z) != Z_OK) {
		abort();
	}
	bound = deflateBound(&z, (uLong)n) + 64;
	if (bound > zcap) {
		free(zbuf);
		zbuf = malloc(bound);
		if (!zbuf)
			abort();
		zcap = bound;
	}
	z.next_in = (Bytef *)p;
	z.avail_in = (uInt)n;
	z.next_out = zbuf;
	z.avail_out = (uInt)bound;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	return bound - z.avail_out;
}

/* Read path to the end in batches of max; returns 0 or the error.
 * check: data starts with IDX's two zero bytes, so no gzip/zlib magic
 * is sniffed in it and the plain read sees data itself. */
static int read_all(const char *path, size_t max, const uint8_t *data,
		    size_t size, int check)
{
	struct tfk_idx_header h;
	struct tfk_idx *x;
	struct tfk_err err;
	const uint8_t *p;
	uint64_t n = 0;
	long k;
	int rc = tfk_idx_open(&x, path, &err);

	if (rc) {
		if (!err.msg[0])
			abort();	/* every error carries a message */
		return rc;
	}
	if (!check) {
		while (tfk_idx_read(x, max, &p, &err) > 0)
			;
		tfk_idx_close(x);
		return 0;
	}
	if (tfk_idx_parse_header(&h, data, size, "fuzz", &err))
		abort();	/* open accepted a header parse refuses */
	if (memcmp(&h, tfk_idx_hdr(x), sizeof(h)))
		abort();
	while ((k = tfk_idx_read(x, max, &p, &err)) > 0) {
		const uint8_t *want = data + h.header_len + n * h.item_size;

		if ((uint64_t)k > max || n + (uint64_t)k > h.n_items ||
		    h.header_len + (n + (uint64_t)k) * h.item_size > size ||
		    memcmp(p, want, (size_t)k * (size_t)h.item_size))
			abort();
		n += (uint64_t)k;
		if (tfk_idx_pos(x) != n)
			abort();
	}
	tfk_idx_close(x);
	if (k == 0 && (n != h.n_items || h.header_len + h.data_len != size))
		abort();	/* clean end must mean exactly the data */
	return (int)k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t max = size ? 1 + data[size - 1] % 5 : 1, zn;
	int check = size >= 2 && !data[0] && !data[1];
	int a, b;

	put(0, data, size);
	a = read_all(paths[0], max, data, size, check);
	zn = gzip_of(data, size);
	put(1, zbuf, zn);
	b = read_all(paths[1], max, data, size, check);
	if (check && a != b)
		abort();	/* plain and gzip disagree */
	return 0;
}
