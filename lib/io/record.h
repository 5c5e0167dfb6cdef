/*
 * record.h - TFRecord files: reading and writing, bit-exact with TF.
 *
 * Byte layout of one record (all integers little-endian):
 *
 *   offset  size  field
 *   0       8     length             u64, payload bytes
 *   8       4     length crc         masked crc32c of bytes 0..7
 *   12      len   data               the payload (usually a tf.Example)
 *   12+len  4     data crc           masked crc32c of the payload
 *
 * masked(c) = ((c >> 15) | (c << 17)) + 0xa282ead8 (see crc32c.h).
 * A file is records back to back with nothing between; GZIP or ZLIB
 * files compress that whole byte stream (TF's compression_type).
 *
 * Readers verify both CRCs unless told not to and return zero-copy
 * payload pointers. Errors name the file, the record index and the byte
 * offset of the record's header in the uncompressed stream:
 *   "a.tfrecord: record 1204 at byte 988160: data crc mismatch"
 */
#ifndef TFK_RECORD_H
#define TFK_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "io/in.h"
#include "io/out.h"
#include "util/err.h"

#define TFK_REC_HEADER 12
#define TFK_REC_FOOTER 4
#define TFK_REC_OVERHEAD 16

/* One record as returned by tfk_rec_next. */
struct tfk_rec {
	const uint8_t *data;	/* payload; valid until the next call */
	size_t len;
	uint64_t index;		/* 0-based record number in this file */
	uint64_t off;		/* byte offset of its header */
};

enum {
	TFK_REC_NOVERIFY = 1,	/* skip both CRC checks (trusted input) */
	TFK_REC_READAHEAD = 2	/* tfk_in_set_readahead: for one sequential
				 * pass over a large file */
};

struct tfk_rec_reader;

/* Default payload budget of a reader: far above the records TF
 * pipelines carry (KiB to a few MiB each), far below memory, and what
 * a GZIP file of 256 KiB can claim by inflating ~1000:1. */
#define TFK_REC_MAX_BYTES_DEFAULT (256ull << 20)

/*
 * Open a TFRecord file ("-": stdin). comp: TFK_COMP_AUTO detects GZIP and
 * ZLIB. flags: TFK_REC_*. The payload budget starts as
 * TFK_MAX_RECORD_BYTES (util/limit.h) or TFK_REC_MAX_BYTES_DEFAULT.
 * Errors as tfk_in_open, and TFK_EINVAL for a malformed
 * TFK_MAX_RECORD_BYTES.
 */
int tfk_rec_open(struct tfk_rec_reader **r, const char *path, int comp,
		 int flags, struct tfk_err *err);
/* Refuse records longer than max payload bytes from now on (a tool's
 * --max-record-bytes; UINT64_MAX: only memory limits them). */
void tfk_rec_set_max_bytes(struct tfk_rec_reader *r, uint64_t max);
void tfk_rec_close(struct tfk_rec_reader *r);

/*
 * Read the next record. Returns 1 with *rec filled, 0 at a clean end of
 * file, or a negative code:
 *   TFK_ECORRUPT  length crc or data crc mismatch, length too large for
 *                 the rest of a regular file
 *   TFK_ETRUNC    the file ends inside a record
 *   TFK_EINVAL    a length over the reader's budget, checked before
 *                 the record is read ("a.tfrecord.gz: record 0 at byte
 *                 0: length 8589934592 is more than the limit of
 *                 268435456 bytes (TFK_MAX_RECORD_BYTES)"); the reader
 *                 is then at its end (later calls return 0)
 *   TFK_EIO, TFK_ENOMEM
 * After a data crc mismatch the reader has moved past the bad record and
 * the next call continues. After a bad header, call tfk_rec_resync to
 * look for the next plausible record; after a truncation the next call
 * returns 0.
 */
int tfk_rec_next(struct tfk_rec_reader *r, struct tfk_rec *rec,
		 struct tfk_err *err);

/*
 * After a header error: scan forward byte by byte for the next offset
 * that holds a header with a matching length crc. Returns 1 when found
 * (the next tfk_rec_next reads it), 0 at end of input, or an error.
 * The bytes skipped are added to tfk_rec_skipped_bytes.
 */
int tfk_rec_resync(struct tfk_rec_reader *r, struct tfk_err *err);
uint64_t tfk_rec_skipped_bytes(const struct tfk_rec_reader *r);

/* Current offset (the next header) in the uncompressed stream. */
uint64_t tfk_rec_offset(const struct tfk_rec_reader *r);
/* Index the next record will get. */
uint64_t tfk_rec_count(const struct tfk_rec_reader *r);
const char *tfk_rec_path(const struct tfk_rec_reader *r);
/* The underlying input, e.g. for tfk_in_comp or tfk_in_size. */
struct tfk_in *tfk_rec_input(struct tfk_rec_reader *r);

/* 1 if p[0..n) (n >= 12) starts with a record header whose length crc
 * matches: how TFK_COMP_AUTO tells plain records from compressed ones. */
int tfk_rec_sniff(const uint8_t *p, size_t n);

/*
 * Skip to an absolute byte offset of a regular uncompressed file (as
 * read from an index), so the next record read starts there. The
 * record index restarts at first_index. Errors: TFK_EINVAL when the
 * input cannot seek (pipe, compressed) or off is past the end.
 */
int tfk_rec_seek(struct tfk_rec_reader *r, uint64_t off, uint64_t first_index,
		 struct tfk_err *err);

/* Writing ------------------------------------------------------------ */

struct tfk_rec_writer;

/* Create path ("-": stdout) atomically (see out.h), comp NONE/GZIP/ZLIB. */
int tfk_recw_open(struct tfk_rec_writer **w, const char *path, int comp,
		  struct tfk_err *err);
/* Frame and append one record. */
int tfk_recw_write(struct tfk_rec_writer *w, const void *data, size_t len,
		   struct tfk_err *err);
/* Append an already framed record (from tfk_rec_frame) unchanged. */
int tfk_recw_write_framed(struct tfk_rec_writer *w, const void *p, size_t n,
			  struct tfk_err *err);
/* Push buffered records downstream (pipes: a consumer sees them now). */
int tfk_recw_flush(struct tfk_rec_writer *w, struct tfk_err *err);
/* Finish and rename into place; frees w. NULL ok. */
int tfk_recw_close(struct tfk_rec_writer *w, struct tfk_err *err);
/* Abandon: remove the temporary; frees w. NULL ok. */
void tfk_recw_discard(struct tfk_rec_writer *w);
/* Records written so far. */
uint64_t tfk_recw_count(const struct tfk_rec_writer *w);
/* Framed bytes written so far (before compression). */
uint64_t tfk_recw_bytes(const struct tfk_rec_writer *w);
/* Bytes written to the file (after compression). */
uint64_t tfk_recw_file_bytes(const struct tfk_rec_writer *w);

/* Fill hdr[12] and ftr[4] for a payload of len bytes. */
void tfk_rec_frame(uint8_t hdr[TFK_REC_HEADER], uint8_t ftr[TFK_REC_FOOTER],
		   const void *data, size_t len);

#endif
