/*
 * snapshot.h - a store of command outputs keyed by a fingerprint, the
 * library half of tfk-snapshot (tf.data.experimental.snapshot as files).
 *
 * Store layout, all under one directory DIR:
 *
 *   DIR/<fp>.lock          flock(2) target: LOCK_SH while replaying,
 *                          LOCK_EX while writing or removing <fp>
 *   DIR/<fp>/data.tfrecord the bytes the command printed, unchanged
 *   DIR/<fp>/meta.json     written last, by atomic rename: its presence
 *                          is what makes <fp> complete
 *
 * <fp> is 64 lowercase hex digits, the SHA-256 (FIPS 180-2) of:
 *
 *   "tfk-snapshot 1\n" TFK_VERSION "\n"
 *   u64 argc, then each argv element as u64 length + bytes
 *   u64 number of inputs, then per input (sorted by path, no duplicates):
 *     u64 length + realpath bytes, u64 size, and either
 *     'S' + u64 mtime in ns (stat identity) or 'H' + 32-byte SHA-256 of
 *     the content (TFK_SNAP_HASH_INPUTS)
 *
 * (u64 little-endian). The inputs are every argv element, every
 * "--name=VALUE" value, and every word (and glob expansion of a word) of
 * an element holding blanks or shell punctuation, as a `sh -c` script
 * does, that names an existing regular file; plus the extra paths given
 * to tfk_snap_fingerprint, where a directory stands for every regular
 * file below it. Directories named on the command line are not walked.
 *
 * meta.json: one object with "fingerprint", "version", "command" (argv
 * array), "cwd", "created" (unix seconds), "seconds" (run time),
 * "records", "bytes" (of data.tfrecord), "hash_inputs" and "inputs"
 * (objects with "path", "size", "mtime_ns" or "sha256").
 *
 * The data is stored as printed, but its TFRecord framing (both crcs of
 * every record, and that it ends on a record boundary) is checked while
 * it streams through, so a truncated, corrupt or non-record stream is
 * never stored as complete.
 */
#ifndef TFK_SNAPSHOT_H
#define TFK_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

/* SHA-256 ----------------------------------------------------------- */

struct tfk_sha256 {
	uint32_t h[8];
	uint64_t n;		/* bytes hashed so far */
	uint8_t buf[64];
};

void tfk_sha256_init(struct tfk_sha256 *s);
void tfk_sha256_update(struct tfk_sha256 *s, const void *p, size_t n);
/* Write the 32-byte digest; s must be re-initialised before reuse. */
void tfk_sha256_final(struct tfk_sha256 *s, uint8_t out[32]);
/* Digest of p[0..n) in one call. */
void tfk_sha256(const void *p, size_t n, uint8_t out[32]);
/* 64 lowercase hex digits and a NUL. */
void tfk_sha256_hex(const uint8_t d[32], char hex[65]);
/* Digest of a file's content. Errors: TFK_EIO naming the path. */
int tfk_sha256_file(const char *path, uint8_t out[32], struct tfk_err *err);

/* Framing follower --------------------------------------------------- */

/* Follows TFRecord framing over a byte stream fed in arbitrary pieces. */
struct tfk_snap_frame {
	uint64_t off;		/* bytes fed so far */
	uint64_t records;	/* complete records so far */
	uint64_t rec_off;	/* offset of the record being read */
	uint64_t left;		/* payload bytes still to come */
	uint32_t crc;		/* of the payload so far */
	uint8_t hdr[12];
	size_t n_hdr;		/* header bytes held */
	uint8_t ftr[4];
	size_t n_ftr;		/* footer bytes held */
	int state;		/* 0 header, 1 payload, 2 footer */
	int bad;		/* sticky: framing broken */
	struct tfk_err err;	/* the sticky error */
};

void tfk_snap_frame_init(struct tfk_snap_frame *f);
/* Follow p[0..n). Returns 0, or TFK_ECORRUPT ("record N at byte OFF:
 * length crc mismatch", "... data crc mismatch") once the framing
 * breaks; later calls return the same error. */
int tfk_snap_frame_feed(struct tfk_snap_frame *f, const void *p, size_t n,
			struct tfk_err *err);
/* 0 when the stream so far ends on a record boundary, else TFK_ETRUNC
 * ("record N at byte OFF: stream ends inside the record") or the
 * sticky TFK_ECORRUPT. */
int tfk_snap_frame_end(const struct tfk_snap_frame *f, struct tfk_err *err);

/* Fingerprint -------------------------------------------------------- */

struct tfk_snap_input {
	char *path;		/* realpath */
	uint64_t size;
	int64_t mtime_ns;
	uint8_t sha256[32];	/* with TFK_SNAP_HASH_INPUTS */
};

struct tfk_snap_fp {
	char hex[65];
	int flags;
	struct tfk_snap_input *in;
	size_t n_in;
};

enum {
	TFK_SNAP_HASH_INPUTS = 1	/* inputs by content, not mtime */
};

/*
 * Fingerprint the command argv[0..argc) and its inputs (see the top of
 * this file); extra[0..n_extra) are more input paths (files or
 * directories, which are walked; a missing one is TFK_ENOTFOUND).
 * flags: TFK_SNAP_*. fp is filled (release it with tfk_snap_fp_release,
 * also after a failure). Errors: TFK_EIO (an input cannot be read for
 * its hash), TFK_ENOTFOUND, TFK_ENOMEM.
 */
int tfk_snap_fingerprint(struct tfk_snap_fp *fp, int argc,
			 char *const argv[], const char *const *extra,
			 size_t n_extra, int flags, struct tfk_err *err);
void tfk_snap_fp_release(struct tfk_snap_fp *fp);

/* Store -------------------------------------------------------------- */

/*
 * Lock DIR/<fp>.lock: shared (exclusive == 0) or exclusive; wait for it
 * or not. Returns 1 with *fd holding the lock (release with
 * tfk_snap_unlock), 0 when !wait and another process holds a
 * conflicting lock, or TFK_EIO. The lock file is re-checked after
 * locking, so one removed by a concurrent gc is never trusted.
 */
int tfk_snap_lock(const char *dir, const char *fp, int exclusive, int wait,
		  int *fd, struct tfk_err *err);
void tfk_snap_unlock(int fd);

/* 1 when DIR/<fp> is a complete snapshot, else 0. */
int tfk_snap_complete(const char *dir, const char *fp);

/*
 * Copy the complete snapshot DIR/<fp> to fd, after checking that the
 * data file has the size meta.json records; *records (may be NULL) gets
 * the record count. Call with a lock held. Errors: TFK_ENOTFOUND (not
 * complete), TFK_ECORRUPT (bad meta.json, size mismatch), TFK_EIO
 * (EPIPE included: errno is kept for the caller).
 */
int tfk_snap_replay(const char *dir, const char *fp, int fd,
		    uint64_t *records, struct tfk_err *err);

struct tfk_snap_writer;

/*
 * Start writing DIR/<fp> (call with the exclusive lock held): whatever
 * DIR/<fp> holds is removed first, the data goes to a temporary file
 * that a kill removes. Errors: TFK_EIO, TFK_ENOMEM.
 */
int tfk_snap_begin(struct tfk_snap_writer **w, const char *dir,
		   const struct tfk_snap_fp *fp, struct tfk_err *err);
/* Store n more bytes. Errors: TFK_ECORRUPT (framing, see
 * tfk_snap_frame_feed; nothing more can be stored), TFK_EIO. */
int tfk_snap_write(struct tfk_snap_writer *w, const void *p, size_t n,
		   struct tfk_err *err);
/*
 * Finish: check the stream ended on a record boundary, rename the data
 * into place, then write meta.json (argv: the command; seconds: its run
 * time) last. Frees w, also on failure, which removes DIR/<fp>.
 * Errors: TFK_ETRUNC, TFK_ECORRUPT, TFK_EIO, TFK_ENOMEM.
 */
int tfk_snap_commit(struct tfk_snap_writer *w, int argc, char *const argv[],
		    double seconds, struct tfk_err *err);
/* Abandon: remove DIR/<fp> and the temporary; frees w. NULL ok. */
void tfk_snap_abort(struct tfk_snap_writer *w);
/* Records and bytes stored so far. */
uint64_t tfk_snap_records(const struct tfk_snap_writer *w);
uint64_t tfk_snap_bytes(const struct tfk_snap_writer *w);

/* One snapshot (complete or not) found in a store. */
struct tfk_snap_entry {
	char fp[65];
	int has_dir;		/* 0: only DIR/<fp>.lock is left (a run that
				 * failed, or one starting now) */
	int complete;
	int locked;		/* someone holds its lock now */
	uint64_t bytes;		/* data stored (temporaries included) */
	uint64_t records;	/* from meta.json (complete only) */
	int64_t created;	/* unix seconds: meta.json, else dir mtime */
	int64_t mtime_ns;	/* of meta.json, else of the dir: the order */
	char *command;		/* argv joined by spaces; NULL if incomplete */
};

/*
 * List the snapshots of dir, newest first, and the lock files that have
 * no snapshot directory (has_dir == 0). *e is an array of *n
 * entries; free it with tfk_snap_list_free. A missing dir is an empty
 * list. A meta.json that does not parse makes its entry incomplete.
 * Errors: TFK_EIO, TFK_ENOMEM.
 */
int tfk_snap_list(const char *dir, struct tfk_snap_entry **e, size_t *n,
		  struct tfk_err *err);
void tfk_snap_list_free(struct tfk_snap_entry *e, size_t n);

/*
 * Remove DIR/<fp> and its lock file unless another process holds the
 * lock. Returns 1 removed, 0 skipped (locked), or TFK_EIO.
 */
int tfk_snap_remove(const char *dir, const char *fp, struct tfk_err *err);

/*
 * Parse meta.json text p[0..n): its "bytes" and "records" (both
 * required, non-negative integers), "created" and the "command" joined
 * by spaces (*command may be NULL: not wanted; else free with
 * tfk_free). Errors: TFK_ECORRUPT naming name, TFK_ENOMEM.
 */
int tfk_snap_meta_parse(const char *name, const void *p, size_t n,
			uint64_t *bytes, uint64_t *records, int64_t *created,
			char **command, struct tfk_err *err);

#endif
