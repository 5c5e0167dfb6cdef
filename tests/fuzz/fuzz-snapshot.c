/*
 * fuzz-snapshot.c - the two parsers of lib/io/snapshot on arbitrary
 * bytes: the framing follower that checks a command's output while it
 * streams into a snapshot, and the meta.json reader.
 *
 * FUZZ-SEEDS: fixtures/tfrecord/rust_raw_record/expected.tfrecord
 * FUZZ-SEEDS: fixtures/tfrecord/tfx_mnist/mnist.tfrecord
 *
 * Oracles for the follower:
 *  1. the input fed in pieces (sizes drawn from the input itself) gives
 *     exactly what it gives fed in one piece: records, verdict, message;
 *  2. its verdict agrees with the TFRecord reader's (CRCs verified) on
 *     the same bytes as a file: as many good records before the first
 *     error, complete exactly when the reader reaches a clean end, and
 *     the same kind of error (corrupt or truncated).
 * The file is a memfd opened through /proc/self/fd (nothing on disk).
 */
#include "io/record.h"
#include "io/snapshot.h"
#include "util/alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MEMFILE_NAME "fuzz-snapshot"
#include "memfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tfk_snap_frame a, b;
	struct tfk_err ea, eb, er;
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	uint64_t good = 0, bytes, records;
	int64_t created;
	char *cmd;
	size_t i, k;
	int ra, rb, rr;

	tfk_snap_frame_init(&a);
	ra = tfk_snap_frame_feed(&a, data, size, &ea);
	if (!ra)
		ra = tfk_snap_frame_end(&a, &ea);
	tfk_snap_frame_init(&b);
	rb = 0;
	for (i = 0; i < size && !rb; i += k) {
		k = (size_t)data[i % size] % 29 + 1;
		if (k > size - i)
			k = size - i;
		rb = tfk_snap_frame_feed(&b, data + i, k, &eb);
	}
	if (!rb)
		rb = tfk_snap_frame_end(&b, &eb);
	if (ra != rb || a.records != b.records ||
	    (ra && strcmp(ea.msg, eb.msg)))
		abort();	/* pieces changed the verdict */

	put_file(data, size);
	if (tfk_rec_open(&r, mpath, TFK_COMP_NONE, 0, &er))
		abort();
	while ((rr = tfk_rec_next(r, &rec, &er)) == 1)
		good++;
	tfk_rec_close(r);
	if (rr == TFK_ENOMEM || rr == TFK_EIO)
		return 0;
	if (good != a.records || (rr == 0) != (ra == 0) ||
	    (rr && rr != ra))
		abort();	/* follower and reader disagree */

	if (tfk_snap_meta_parse("fuzz", data, size, &bytes, &records,
				&created, &cmd, &er) == 0)
		tfk_free(cmd);
	return 0;
}
