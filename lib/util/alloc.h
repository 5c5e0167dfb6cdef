/*
 * alloc.h - the one allocation hook of libtfk.
 *
 * Every library allocation goes through tfk_malloc/tfk_realloc/tfk_calloc
 * so that tests can make the N-th allocation fail and check that each
 * failure path returns TFK_ENOMEM and leaks nothing.
 */
#ifndef TFK_ALLOC_H
#define TFK_ALLOC_H

#include <stddef.h>

void *tfk_malloc(size_t n);
void *tfk_calloc(size_t n, size_t size);
void *tfk_realloc(void *p, size_t n);
void tfk_free(void *p);
/* Copy of s (NUL-terminated), or NULL when out of memory. */
char *tfk_strdup(const char *s);

/*
 * Test hook: after n more successful allocations, every allocation fails
 * until tfk_alloc_fail_after(-1) turns failures off. Not thread-safe:
 * single-threaded tests only.
 */
void tfk_alloc_fail_after(long n);

#endif
