/* tap.c - see tap.h. */
#include "tap.h"
#include "graph/op.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int n_test, n_fail;

static void vreport(int pass, const char *file, int line, const char *fmt,
		    va_list ap)
{
	n_test++;
	if (!pass)
		n_fail++;
	printf("%s %d - ", pass ? "ok" : "not ok", n_test);
	vprintf(fmt, ap);
	printf("\n");
	if (!pass)
		printf("#   failed at %s:%d\n", file, line);
	fflush(stdout);
}

int ok_at(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(cond, file, line, fmt, ap);
	va_end(ap);
	return cond;
}

int is_int_at(long long got, long long want, const char *file, int line,
	      const char *fmt, ...)
{
	va_list ap;
	int pass = got == want;

	va_start(ap, fmt);
	vreport(pass, file, line, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#   got %lld, want %lld\n", got, want);
	return pass;
}

int is_str_at(const char *got, const char *want, const char *file, int line,
	      const char *fmt, ...)
{
	va_list ap;
	int pass = got && want ? !strcmp(got, want) : got == want;

	va_start(ap, fmt);
	vreport(pass, file, line, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#   got  '%s'\n#   want '%s'\n", got ? got : "(null)",
		       want ? want : "(null)");
	return pass;
}

int is_mem_at(const void *got, size_t ngot, const void *want, size_t nwant,
	      const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int pass = ngot == nwant && (ngot == 0 || !memcmp(got, want, ngot));

	va_start(ap, fmt);
	vreport(pass, file, line, fmt, ap);
	va_end(ap);
	if (!pass) {
		size_t i = 0;

		while (i < ngot && i < nwant &&
		       ((const unsigned char *)got)[i] == ((const unsigned char *)want)[i])
			i++;
		printf("#   got %zu bytes, want %zu; first difference at %zu\n",
		       ngot, nwant, i);
	}
	return pass;
}

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

int tap_done(void)
{
	printf("1..%d\n", n_test);
	return n_fail ? 1 : 0;
}

const char *tap_fixture(const char *rel)
{
	static char path[8][4096];
	static int k;
	const char *dir = getenv("TFK_FIXTURES");

	struct stat st;

	if (!dir)
		dir = "../shared/fixtures";
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		/* Without the fixtures every oracle test would fail at
		 * random places: stop the whole file with one clear line. */
		printf("Bail out! fixtures not found at %s (set TFK_FIXTURES)\n",
		       dir);
		exit(1);
	}
	k = (k + 1) % 8;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dir, rel);
	return path[k];
}

const char *tap_tmpdir(void)
{
	static char dir[] = "/tmp/tfk-test-XXXXXX";
	static int made;

	if (!made) {
		if (!mkdtemp(dir))
			return "/tmp";
		made = 1;
	}
	return dir;
}

void tap_rm_tmpdir(void)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tap_tmpdir());
	if (system(cmd))
		tap_diag("could not remove %s", tap_tmpdir());
}

char *tap_tmp(const char *name)
{
	static char path[8][4096];
	static int k;

	k = (k + 1) % 8;
	snprintf(path[k], sizeof(path[k]), "%s/%s", tap_tmpdir(), name);
	return path[k];
}

void *tap_read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, len = 0, k;
	char *p, *q;

	*n = 0;
	if (!f)
		return NULL;
	p = malloc(cap);
	while (p && (k = fread(p + len, 1, cap - len - 1, f)) > 0) {
		len += k;
		if (len + 1 == cap) {
			q = realloc(p, cap *= 2);
			if (!q)
				free(p);
			p = q;
		}
	}
	fclose(f);
	if (!p)
		return NULL;
	p[len] = '\0';
	*n = len;
	return p;
}

int tap_write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	int rc;

	if (!f)
		return -1;
	rc = fwrite(p, 1, n, f) == n ? 0 : -1;
	if (fclose(f))
		rc = -1;
	return rc;
}

const char *tap_source(const char *rel)
{
	static char path[8][4096];
	static int k;
	char exe[4096 - 256];
	ssize_t n;
	int up;

	if (access(rel, R_OK) == 0)
		return rel;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return rel;
	exe[n] = 0;
	k = (k + 1) % 8;
	for (up = 0; up < 5; up++) {
		char *s = strrchr(exe, '/');

		if (!s)
			break;
		*s = 0;
		snprintf(path[k], sizeof(path[k]), "%s/%s", exe, rel);
		if (access(path[k], R_OK) == 0)
			return path[k];
	}
	return rel;
}

const char *tap_python(void)
{
	const char *p = getenv("PYTHON");

	return p && *p ? p : "/usr/bin/python3";
}

double tap_val(int seed, int64_t i)
{
	uint64_t z = tfk_rng_u64((uint64_t)seed, (uint64_t)i);

	return (z >> 11) * (2.0 / 9007199254740992.0) - 1;
}
