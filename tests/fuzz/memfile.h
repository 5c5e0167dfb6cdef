/*
 * memfile.h - the one in-memory file a fuzz target reads by path: a
 * memfd reached through /proc/self/fd, so a reader that wants a regular
 * file (size known, lengths checked against it) gets one and nothing is
 * written to disk. Shared by fuzz-record, fuzz-record-stream and
 * fuzz-snapshot; header-only (statics): each target includes it once,
 * after defining MEMFILE_NAME, the memfd's name (its own, so
 * /proc/PID/fd tells the targets apart).
 */
#ifndef TFK_FUZZ_MEMFILE_H
#define TFK_FUZZ_MEMFILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MEMFILE_NAME
#error "define MEMFILE_NAME before including memfile.h"
#endif

static int mfd = -1;
static char mpath[64];	/* "/proc/self/fd/N", once put_file has run */

/* Make the file hold exactly p[0..n); aborts when the memfd fails. */
static void put_file(const uint8_t *p, size_t n)
{
	if (mfd < 0) {
		mfd = memfd_create(MEMFILE_NAME, 0);
		if (mfd < 0)
			abort();
		snprintf(mpath, sizeof(mpath), "/proc/self/fd/%d", mfd);
	}
	if (ftruncate(mfd, 0) || (n && pwrite(mfd, p, n, 0) != (ssize_t)n))
		abort();
}

#endif
