/*
 * fmtg.h - printf's %.<P>g and %lld without printf.
 *
 * For tools that print millions of numbers (tfk-events prints every
 * scalar of an event file as %.9g and %.17g): the same bytes glibc's
 * printf writes, about ten times sooner. Exact, not approximate: the
 * digits come from integer arithmetic on the double's binary value
 * (128-bit products and shifts), rounded half to even on the exact
 * remainder as glibc does; what that arithmetic cannot hold (a double
 * below about 1e-6 at P 17, a float below about 1e-23 at P 9, values
 * past 2^127, NaN and infinities) is handed to snprintf itself.
 */
#ifndef TFK_FMTG_H
#define TFK_FMTG_H

#include <stddef.h>
#include <stdint.h>

/* Room that tfk_fmt_g and tfk_fmt_i64 need, with the '\0' (they may
 * write all of it). */
#define TFK_FMT_MAX 40

/*
 * Write v as snprintf(out, TFK_FMT_MAX, "%.*g", prec, v) does, prec 1
 * to 17 (others are passed to snprintf); returns the length, without
 * the '\0' that follows. Bytes after the '\0' may be written too.
 */
size_t tfk_fmt_g(char *out, double v, int prec);

/* Write v in decimal ("%" PRId64); returns the length. */
size_t tfk_fmt_i64(char *out, int64_t v);

#endif
