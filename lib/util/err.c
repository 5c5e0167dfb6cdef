/*
 * err.c - located error messages.
 *
 * Fixed-size message buffers: an error path must not itself need to
 * allocate (it may be reporting that allocation failed).
 */
#include "util/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tfk_errf(struct tfk_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

int tfk_err_prefix(struct tfk_err *err, const char *fmt, ...)
{
	char head[TFK_ERR_MSG_MAX], tmp[2 * TFK_ERR_MSG_MAX + 2];
	size_t n;
	va_list ap;

	if (!err)
		return TFK_EINVAL;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	snprintf(tmp, sizeof(tmp), "%s: %s", head, err->msg);
	n = strlen(tmp);
	if (n >= sizeof(err->msg))
		n = sizeof(err->msg) - 1;
	memcpy(err->msg, tmp, n);
	err->msg[n] = '\0';
	return err->code;
}

void tfk_err_clear(struct tfk_err *err)
{
	if (!err)
		return;
	err->code = TFK_OK;
	err->msg[0] = '\0';
}

const char *tfk_err_name(int code)
{
	switch (code) {
	case TFK_OK:		return "success";
	case TFK_EIO:		return "i/o error";
	case TFK_ECORRUPT:	return "corrupt data";
	case TFK_ENOMEM:	return "out of memory";
	case TFK_EINVAL:	return "invalid argument";
	case TFK_ETRUNC:	return "truncated input";
	case TFK_ENOTFOUND:	return "not found";
	}
	return "unknown error";
}
