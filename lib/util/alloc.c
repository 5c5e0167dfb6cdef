/*
 * alloc.c - allocation hook (see alloc.h).
 *
 * A countdown rather than a probability so failure tests are exact and
 * repeatable: loop n = 0, 1, 2, ... until the call under test succeeds.
 */
#include "util/alloc.h"

#include <stdlib.h>
#include <string.h>

static long fail_after = -1;

static int should_fail(void)
{
	if (fail_after < 0)
		return 0;
	if (fail_after == 0)
		return 1;
	fail_after--;
	return 0;
}

void tfk_alloc_fail_after(long n)
{
	fail_after = n;
}

void *tfk_malloc(size_t n)
{
	return should_fail() ? NULL : malloc(n ? n : 1);
}

void *tfk_calloc(size_t n, size_t size)
{
	return should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

void *tfk_realloc(void *p, size_t n)
{
	return should_fail() ? NULL : realloc(p, n ? n : 1);
}

void tfk_free(void *p)
{
	free(p);
}

char *tfk_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = tfk_malloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}
