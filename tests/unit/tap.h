/*
 * tap.h - minimal TAP producer for the C unit tests (run under prove).
 *
 *   int main(void) { ok(1 + 1 == 2, "adds"); is_int(f(), 3, "f"); return tap_done(); }
 */
#ifndef TFK_TAP_H
#define TFK_TAP_H

#include <stddef.h>
#include <stdint.h>

int ok_at(int cond, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int is_int_at(long long got, long long want, const char *file, int line,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int is_str_at(const char *got, const char *want, const char *file, int line,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int is_mem_at(const void *got, size_t ngot, const void *want, size_t nwant,
	      const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
/* Print the plan ("1..N") and return the exit status: 0 if all passed. */
int tap_done(void);
/* "# msg" diagnostic line. */
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Fixture directory ($TFK_FIXTURES or ../shared/fixtures) + rel. One of
 * eight rotating static buffers: valid for the next seven calls. */
const char *tap_fixture(const char *rel);
/* A fresh temporary directory for this test (removed by the OS/tmp
 * cleaner; tests delete what they make when they can). */
const char *tap_tmpdir(void);
/* Remove tap_tmpdir() and all it holds (rm -rf); a diagnostic when
 * that fails. */
void tap_rm_tmpdir(void);
/* tap_tmpdir() + "/" + name, in rotating buffers as tap_fixture. */
char *tap_tmp(const char *name);
/* The whole file at path, malloc'd with a '\0' after the last byte (so
 * text reads as a string); *n gets the length. NULL when it cannot be
 * opened or memory runs out. */
void *tap_read_file(const char *path, size_t *n);
/* Write p[0..n) to path (created or truncated). 0, or -1 on failure. */
int tap_write_file(const char *path, const void *p, size_t n);
/* A file of the source tree ("tests/py/images.py"): rel itself when it
 * is readable from the current directory (make runs tests from the
 * root), else rel under the first of the test binary's parent
 * directories that has it; rel when none has. In rotating buffers. */
const char *tap_source(const char *rel);
/* The Python with the oracle packages: $PYTHON, else /usr/bin/python3. */
const char *tap_python(void);
/* Deterministic test value in [-1, 1) for (seed, i), on any thread. */
double tap_val(int seed, int64_t i);

#define ok(c, ...) ok_at(!!(c), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(g, w, ...) is_int_at((long long)(g), (long long)(w), \
				    __FILE__, __LINE__, __VA_ARGS__)
#define is_str(g, w, ...) is_str_at(g, w, __FILE__, __LINE__, __VA_ARGS__)
#define is_mem(g, ng, w, nw, ...) is_mem_at(g, ng, w, nw, __FILE__, __LINE__, \
					    __VA_ARGS__)

#endif
