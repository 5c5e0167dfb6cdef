/*
 * err.h - located error status shared by every library call.
 *
 * Library functions return 0 (or a non-negative count) on success and a
 * negative TFK_E* code on failure, after filling a struct tfk_err with a
 * message that says where, then what, then detail:
 *   "a.tfrecord: record 12 at byte 988160: data crc mismatch"
 * The library never prints, exits or aborts; commands decide what to do.
 * Codes are stable: never renumber them.
 */
#ifndef TFK_ERR_H
#define TFK_ERR_H

#include <stddef.h>

enum {
	TFK_OK = 0,
	TFK_EIO = -1,		/* read/write/open failure (errno detail) */
	TFK_ECORRUPT = -2,	/* bad bytes: crc, framing, protobuf, format */
	TFK_ENOMEM = -3,	/* allocation failed */
	TFK_EINVAL = -4,	/* bad argument or unsupported value */
	TFK_ETRUNC = -5,	/* input ended inside a structure */
	TFK_ENOTFOUND = -6	/* named thing does not exist */
};

#define TFK_ERR_MSG_MAX 512

struct tfk_err {
	int code;
	char msg[TFK_ERR_MSG_MAX];
};

/*
 * Fill err (may be NULL) with code and a printf-formatted message.
 * Returns code, so callers can write `return tfk_errf(err, ...)`.
 */
int tfk_errf(struct tfk_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Prepend "prefix: " to err's message (e.g. a file name added by a caller
 * that knows it). Returns err->code. err may be NULL.
 */
int tfk_err_prefix(struct tfk_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Reset err to TFK_OK with an empty message. err may be NULL. */
void tfk_err_clear(struct tfk_err *err);

/* A short fixed name for a code ("corrupt data", "i/o error", ...). */
const char *tfk_err_name(int code);

#endif
