/*
 * allocfail.h - the failed-allocation sweep the unit tests run over a
 * library call: the k-th allocation fails (tfk_alloc_fail_after(k)),
 * k = 0, 1, ..., until the call succeeds; every failure must be
 * TFK_ENOMEM. Header-only (a static function): each test program
 * includes it once.
 */
#ifndef TFK_TESTS_ALLOCFAIL_H
#define TFK_TESTS_ALLOCFAIL_H

#include "util/alloc.h"
#include "util/err.h"

/*
 * Calls call(ctx) with allocation k failing, k = 0 .. max - 1, and after
 * each call undo(ctx) when undo is not NULL, until a call returns 0.
 * Returns 1 when one did and every call before it returned TFK_ENOMEM,
 * else 0; *tried gets the last k (max when no call succeeded).
 */
static int alloc_sweep(long max, int (*call)(void *ctx),
		       void (*undo)(void *ctx), void *ctx, long *tried)
{
	long k;
	int rc = -1, clean = 1;

	for (k = 0; k < max; k++) {
		tfk_alloc_fail_after(k);
		rc = call(ctx);
		tfk_alloc_fail_after(-1);
		if (undo)
			undo(ctx);
		if (rc == 0)
			break;
		if (rc != TFK_ENOMEM)
			clean = 0;
	}
	*tried = k;
	return clean && rc == 0;
}

#endif
