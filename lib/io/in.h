/*
 * in.h - a byte source: a file, a pipe or stdin, maybe compressed.
 *
 * The reader hands out windows into its own buffer, so record parsing
 * is zero-copy: tfk_in_fill() makes at least n bytes visible at the
 * current position unless input ends first, tfk_in_consume() moves past
 * them. A window stays valid until the next fill or close.
 *
 * Input is read in 1 MiB chunks (files and pipes alike: see in.c for
 * why regular files are not mapped). The buffer grows only as far
 * as data actually arrives, so a corrupt length field asking for
 * terabytes allocates no more than the input holds.
 *
 * Compression: TFK_COMP_AUTO detects GZIP (1f 8b) and ZLIB (RFC 1950
 * header) streams, but only when the first bytes are not already a valid
 * TFRecord header; multi-member gzip files are read to the end.
 */
#ifndef TFK_IN_H
#define TFK_IN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

enum tfk_comp {
	TFK_COMP_AUTO = -1,
	TFK_COMP_NONE = 0,
	TFK_COMP_GZIP = 1,
	TFK_COMP_ZLIB = 2
};

/* Parse "none"/""/"gzip"/"zlib"/"auto" (TensorFlow's compression_type
 * spellings, any case). Returns the enum or -2 when unknown. */
int tfk_comp_parse(const char *s);
const char *tfk_comp_name(int comp);

struct tfk_in;

/*
 * Open path ("-" or NULL: stdin) for reading. comp is a tfk_comp;
 * AUTO detects. For an AUTO stream, sniff is called with the first bytes
 * (up to 12) and returns 1 when they look like plain data, so the caller
 * decides what "plain" means; NULL treats only gzip/zlib magic as
 * compressed. Errors: TFK_EIO (cannot open, is a directory), TFK_ENOMEM.
 */
int tfk_in_open(struct tfk_in **in, const char *path, int comp,
		int (*sniff)(const uint8_t *p, size_t n),
		struct tfk_err *err);
void tfk_in_close(struct tfk_in *in);

/*
 * Make at least n bytes visible at the current position; *p points at
 * them. Returns the number visible (>= n, or fewer only at end of input;
 * 0 at end), or a negative TFK_E* code (read error, corrupt compressed
 * data) with err filled, naming the file. A corrupt or truncated
 * compressed stream is reported once; later calls return 0 (end).
 */
ssize_t tfk_in_fill(struct tfk_in *in, size_t n, const uint8_t **p,
		    struct tfk_err *err);
/* Advance past n bytes (n <= what the last fill made visible). */
void tfk_in_consume(struct tfk_in *in, size_t n);
/* Move to byte off of a regular uncompressed file. Errors: TFK_EINVAL
 * for pipes and compressed input or off past the end; TFK_EIO. */
int tfk_in_seek(struct tfk_in *in, uint64_t off, struct tfk_err *err);
/* Offset of the current position in the (uncompressed) stream. */
uint64_t tfk_in_offset(const struct tfk_in *in);
/* Size of the underlying file when it is a regular uncompressed file,
 * else UINT64_MAX (unknown). */
uint64_t tfk_in_size(const struct tfk_in *in);
/* The path as given ("-" shown as "<stdin>"), for messages. */
const char *tfk_in_path(const struct tfk_in *in);
/*
 * Read a large (8 MiB and more) regular uncompressed file ahead on a
 * thread of its own, from the first fill on: the next chunk's read(2)
 * copy runs while the caller works on this one. Output is unchanged;
 * a fill of more than 256 KiB at once, a seek, or any failure to start
 * falls back to plain reads. Call before the first fill.
 */
void tfk_in_set_readahead(struct tfk_in *in, int on);
/* The compression detected or requested. */
int tfk_in_comp(const struct tfk_in *in);

#endif
