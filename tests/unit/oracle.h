/*
 * oracle.h - the python oracle tests/py/tfexample.py (python3-protobuf
 * decoding and encoding tf.Example), for the unit tests that check our
 * Example code against it (t-example, t-exjson, t-seqex).
 *
 * oracle_find() looks for the script from this program's path upwards
 * (build/tests/t-example, build/san/tests/t-example) and keeps its path
 * in oracle[]; oracle_run() runs it under $PYTHON (default
 * /usr/bin/python3, as tap_python) and reads its stdout whole;
 * oracle_check() makes one run a TAP check.
 */
#ifndef TFK_TEST_ORACLE_H
#define TFK_TEST_ORACLE_H

#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char oracle[4096];

/* The script's path (in oracle[]), or NULL where it is not found. */
static inline const char *oracle_find(void)
{
	char exe[2048], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	while ((slash = strrchr(exe, '/'))) {
		*slash = '\0';
		snprintf(oracle, sizeof(oracle), "%s/tests/py/tfexample.py", exe);
		if (access(oracle, R_OK) == 0)
			return oracle;
	}
	return NULL;
}

/* Run the oracle with args (shell words); its stdout into *text (malloc'd,
 * NUL-terminated; *len its length where len is not NULL). Returns the
 * pclose status (-1: could not run; *text then untouched). */
static inline int oracle_run(const char *args, char **text, size_t *len)
{
	char cmd[8192];
	size_t cap = 1 << 16, n = 0;
	FILE *f;
	int c;

	snprintf(cmd, sizeof(cmd), "'%s' '%s' %s", tap_python(), oracle, args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	*text = malloc(cap);
	while ((c = getc(f)) != EOF) {
		if (n + 1 >= cap)
			*text = realloc(*text, cap *= 2);
		(*text)[n++] = (char)c;
	}
	(*text)[n] = '\0';
	if (len)
		*len = n;
	return pclose(f);
}

/* Run the oracle with args as one TAP check named what: ok when it exits
 * 0; else a diagnostic with up to 300 bytes of its output from its first
 * "bad" on (all of it when none). Returns oracle_run's status. */
static inline int oracle_check(const char *args, const char *what)
{
	char *text = NULL, *bad;
	int st = oracle_run(args, &text, NULL);

	ok(st == 0, "%s", what);
	if (st && text) {
		bad = strstr(text, "bad");
		tap_diag("%.300s", bad ? bad : text);
	}
	free(text);
	return st;
}

#endif
