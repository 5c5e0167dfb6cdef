/*
 * index.h - record index files (FILE.idx) for random access to TFRecords.
 *
 * Byte layout: text, one line per record, in file order, the format
 * NVIDIA DALI's tfrecord2idx writes:
 *
 *   OFFSET SP LENGTH LF
 *
 * OFFSET is the decimal byte offset of the record's header in the file,
 * LENGTH the decimal size of the whole framed record (12-byte header,
 * payload, 4-byte data crc), so LENGTH >= 16. A valid index covers a
 * whole uncompressed file: the first record is at 0, each record starts
 * where the previous one ended, and the last one ends at the file size.
 * An empty file has an empty index. Compressed files have no index:
 * their offsets could not be seeked to.
 *
 * The index is "fresh" for a data file when its mtime is not older than
 * the data file's and its last record ends exactly at the data file's
 * size; a stale index is never used.
 */
#ifndef TFK_INDEX_H
#define TFK_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "io/record.h"
#include "util/err.h"

struct tfk_index {
	/* n + 1 offsets: record i is bytes [off[i], off[i + 1]) of the
	 * file; off[n] is the end of the last record (0 when n == 0). */
	uint64_t *off;
	size_t n;
	size_t cap;
};

void tfk_index_init(struct tfk_index *ix);
void tfk_index_release(struct tfk_index *ix);

/* Append a record of len framed bytes at the current end. Errors:
 * TFK_ENOMEM. */
int tfk_index_add(struct tfk_index *ix, uint64_t len, struct tfk_err *err);

/*
 * Read every remaining record of r (which must be at its start) and
 * append one entry per record. Errors: TFK_EINVAL when r's input is
 * compressed (offsets would be meaningless), else those of
 * tfk_rec_next (the first bad record stops the scan).
 */
int tfk_index_scan(struct tfk_index *ix, struct tfk_rec_reader *r,
		   struct tfk_err *err);

/*
 * Parse index text p[0..n) into ix (which is reset first). name is used
 * in messages: "NAME: line L: what". Every line is checked: two decimal
 * numbers without sign or leading blanks, one space, a newline; the
 * first offset is 0, every record is contiguous with the previous one,
 * LENGTH >= 16, no overflow. Errors: TFK_ECORRUPT, TFK_ETRUNC (last
 * line without its newline), TFK_ENOMEM.
 */
int tfk_index_parse(struct tfk_index *ix, const char *p, size_t n,
		    const char *name, struct tfk_err *err);

/* Read and parse the index file path. Errors: TFK_ENOTFOUND when it does
 * not exist, TFK_EIO, and those of tfk_index_parse. */
int tfk_index_read(struct tfk_index *ix, const char *path,
		   struct tfk_err *err);

/* Write ix to path atomically (see out.h): nothing appears under path
 * unless the whole index was written. Errors: TFK_EIO, TFK_ENOMEM. */
int tfk_index_write(const struct tfk_index *ix, const char *path,
		    struct tfk_err *err);

/*
 * 1 if ix, read from idx_path, is fresh for data_path (see above); 0 if
 * stale, with err saying why ("DATA.idx: stale: ..."); negative
 * (TFK_EIO) when either file cannot be stat'ed.
 */
int tfk_index_fresh(const struct tfk_index *ix, const char *data_path,
		    const char *idx_path, struct tfk_err *err);

/*
 * Load DATA_PATH.idx when it exists and is fresh. Returns 1 with ix
 * filled; 0 when there is no index or it is stale (err says which, ix
 * is empty); negative when the index exists but is corrupt or cannot
 * be read.
 */
int tfk_index_load(struct tfk_index *ix, const char *data_path,
		   struct tfk_err *err);

/* "PATH.idx" in a new string (tfk_free it), or NULL when out of memory. */
char *tfk_index_path(const char *data_path);

/*
 * Records [a, b) clamped to the index, as a Python slice is: b is cut
 * to n and a to b. Sets *off to the byte offset of the first record
 * of the range and returns the number of records in it.
 */
uint64_t tfk_index_range(const struct tfk_index *ix, uint64_t a, uint64_t b,
			 uint64_t *off);

#endif
