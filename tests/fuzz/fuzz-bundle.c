/*
 * fuzz-bundle.c - the tensor bundle reader on arbitrary index bytes.
 *
 * FUZZ-SEEDS: fixtures/savedmodel/half_plus_two_cpu_tf1/00000123/variables/variables.index
 * FUZZ-SEEDS: fixtures/savedmodel/half_plus_two_tf2_cpu/00000123/variables/variables.index
 * FUZZ-SEEDS: fixtures/savedmodel/rust_regression_tf1/variables/variables.index
 *
 * Each input is tried twice as PREFIX.index in a private directory under
 * /tmp: as it is, and "repaired" - the CRC of every block the footer
 * and the index block point at recomputed - because a mutation almost
 * always breaks a block CRC, and without the repair the fuzzer would
 * never get past read_block into the block, entry and protobuf parsers.
 * The data file PREFIX.data-00000-of-00001 holds the input's own bytes
 * (so entries point at something). Every listed tensor is described and
 * read; invariants: a failed open's message names the index or a data
 * file, and a read that succeeds gives a tensor of the described dtype
 * and shape.
 */
#include "io/crc32c.h"
#include "format/bundle.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char prefix[64], ipath[96], dpath[96];

static void setup(void)
{
	char dir[] = "/tmp/fuzz-bundle-XXXXXX";

	if (prefix[0])
		return;
	if (!mkdtemp(dir))
		abort();
	snprintf(prefix, sizeof(prefix), "%s/b", dir);
	snprintf(ipath, sizeof(ipath), "%s.index", prefix);
	snprintf(dpath, sizeof(dpath), "%s.data-00000-of-00001", prefix);
}

static void put(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f))
		abort();
}

static int varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	int i;

	for (i = 0; i < 10 && p < end; i++) {
		r |= (uint64_t)(*p & 0x7f) << (7 * i);
		if (!(*p++ & 0x80)) {
			*v = r;
			*pp = p;
			return 1;
		}
	}
	return 0;
}

/* Recompute the trailer CRC of the block at (off, size); 1 if in range. */
static int fix_block(uint8_t *f, size_t n, uint64_t off, uint64_t size)
{
	uint32_t c;

	if (off > n || size > n - off || 5 > n - off - size)
		return 0;
	c = tfk_crc32c_mask(tfk_crc32c(f + off, (size_t)size + 1));
	memcpy(f + off + size + 1, &c, 4);	/* little-endian host */
	return 1;
}

/* Repair the blocks of a table: footer -> metaindex, index -> data. */
static void repair(uint8_t *f, size_t n)
{
	const uint8_t *p, *end, *blk;
	uint64_t mo, ms, io, is;
	uint32_t nr;

	if (n < 48)
		return;
	p = f + n - 48;
	end = f + n - 8;
	if (!varint(&p, end, &mo) || !varint(&p, end, &ms) ||
	    !varint(&p, end, &io) || !varint(&p, end, &is))
		return;
	fix_block(f, n, mo, ms);
	if (!fix_block(f, n, io, is) || f[io + is] != 0 || is < 4)
		return;
	/* walk the (raw) index block leniently for data block handles */
	blk = f + io;
	memcpy(&nr, blk + is - 4, 4);
	if (nr > (is - 4) / 4)
		return;
	p = blk;
	end = blk + is - 4 - 4 * nr;
	while (p < end) {
		uint64_t sh, ns, vl, bo, bs;
		const uint8_t *v;

		if (!varint(&p, end, &sh) || !varint(&p, end, &ns) ||
		    !varint(&p, end, &vl) || ns > (uint64_t)(end - p) ||
		    vl > (uint64_t)(end - p) - ns)
			return;
		v = p + ns;
		p = v + vl;
		if (varint(&v, p, &bo) && varint(&v, p, &bs) &&
		    !(bo == io && bs == is))
			fix_block(f, n, bo, bs);
	}
	/* a data block handle may overlap the index block: fix it last */
	fix_block(f, n, io, is);
}

static void run(const uint8_t *p, size_t n)
{
	struct tfk_bundle *b;
	struct tfk_err err;
	int i, rc;

	put(ipath, p, n);
	put(dpath, p, n);
	rc = tfk_bundle_open(&b, prefix, &err);
	if (rc) {
		if (!strstr(err.msg, prefix))
			abort();	/* every open error names a file */
		return;
	}
	for (i = 0; i < tfk_bundle_n(b); i++) {
		const char *k = tfk_bundle_key(b, i);
		struct tfk_tdesc d;
		struct tfk_tensor t;

		if (tfk_bundle_desc(b, i, &d))
			continue;
		if (tfk_bundle_read(b, k, &t, &err))
			continue;
		if (t.dtype != d.dtype || t.rank != d.rank ||
		    memcmp(t.shape, d.shape, sizeof(t.shape[0]) * (size_t)d.rank))
			abort();
		tfk_tensor_release(&t);
	}
	tfk_bundle_close(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	setup();
	run(data, size);
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	repair(copy, size);
	if (size && memcmp(copy, data, size))
		run(copy, size);
	free(copy);
	return 0;
}
