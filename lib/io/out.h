/*
 * out.h - an output file that appears only when complete.
 *
 * tfk_out_open writes to a temporary "DIR/.NAME.tmp-XXXXXX" next to the
 * final path; tfk_out_close flushes, fsyncs and renames it into place.
 * tfk_out_discard (or an error, or a SIGINT/SIGTERM/SIGHUP in a tool that
 * used tfk_cli_parse) removes the temporary, so a failed or killed run
 * never leaves a half file under the final name. "-" means stdout, which
 * is written through (nothing to rename), and so is an existing target
 * that is not a regular file (/dev/null, a fifo); a directory is
 * TFK_EIO "PATH: is a directory". A symlink to a file is followed: the
 * file it names is replaced, the link stays. A replaced file keeps its
 * permission bits (and owner and group where permitted); a new one
 * gets 0666 & ~umask, as open(2) would give it.
 *
 * Output may be GZIP- or ZLIB-compressed (TensorFlow's TFRecord
 * compression_type), level 6 as zlib's default.
 */
#ifndef TFK_OUT_H
#define TFK_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "io/in.h"	/* enum tfk_comp */
#include "util/err.h"

struct tfk_out;

/* Open path ("-" or NULL: stdout) with comp (NONE/GZIP/ZLIB). Errors:
 * TFK_EIO (directory missing or unwritable), TFK_ENOMEM. */
int tfk_out_open(struct tfk_out **out, const char *path, int comp,
		 struct tfk_err *err);
/* Append n bytes. Errors: TFK_EIO (disk full, EPIPE...). */
int tfk_out_write(struct tfk_out *out, const void *p, size_t n,
		  struct tfk_err *err);
/* Push buffered bytes to the file (stdout: to the pipe), so a reader
 * downstream sees complete records without waiting for more. */
int tfk_out_flush(struct tfk_out *out, struct tfk_err *err);
/* Finish: flush, fsync, rename into place, free. On failure the
 * temporary is removed. out may be NULL (returns 0). */
int tfk_out_close(struct tfk_out *out, struct tfk_err *err);
/*
 * Two-step close, for a set of files that must appear together (the
 * shards of lib/data/shardw): tfk_out_finish completes the temporary
 * (flush, fsync, close) but keeps it under its temporary name, still
 * removed by a kill; then tfk_out_commit renames it to path (NULL: the
 * path given to tfk_out_open) and frees out, or tfk_out_discard removes
 * it. On stdout, finish ends the compressed stream and commit only
 * frees. On failure finish keeps out for tfk_out_discard; commit removes
 * the temporary and frees out.
 */
int tfk_out_finish(struct tfk_out *out, struct tfk_err *err);
int tfk_out_commit(struct tfk_out *out, const char *path, struct tfk_err *err);
/* Abandon: remove the temporary (stdout: just stop), free. NULL ok. */
void tfk_out_discard(struct tfk_out *out);
/* Bytes handed to tfk_out_write so far (before compression). */
uint64_t tfk_out_bytes(const struct tfk_out *out);
/* Bytes written to the file so far (after compression). */
uint64_t tfk_out_file_bytes(const struct tfk_out *out);
/* The final path, "<stdout>" for "-". */
const char *tfk_out_path(const struct tfk_out *out);

/* mkdir -p: create dir and its missing parents. 0, TFK_EIO ("P: cannot
 * create: strerror" naming the part that failed, "DIR: not a
 * directory"), TFK_ENOMEM. */
int tfk_mkdirs(const char *dir, struct tfk_err *err);

#endif
