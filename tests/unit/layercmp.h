/*
 * layercmp.h - what t-layers and t-recurrent share around their oracles
 * (tests/py/torch_layers.py, tests/py/torch_rnn.py): port names, the
 * files a case leaves for the oracle in its directory, the oracle's run
 * over those directories, and the error measure of a result against the
 * oracle's.
 *
 * Header-only (static functions): each test program includes it once.
 */
#ifndef TFK_TESTS_LAYERCMP_H
#define TFK_TESTS_LAYERCMP_H

#include "graph/graph.h"
#include "tap.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "node:index" of p (one of 8 rotating static buffers). */
static char *port_name(const struct tfk_graph *g, struct tfk_port p)
{
	static char buf[8][160];
	static int k;

	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s:%d",
		 tfk_graph_node(g, p.node)->name, p.index);
	return buf[k];
}

/* DIR/NAME := the n bytes at p. */
static void write_bin(const char *dir, const char *name, const void *p,
		      size_t n)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	tap_write_file(path, p, n);
}

static json_t *shape_json(int rank, const int64_t *s)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < rank; i++)
		json_array_append_new(a, json_integer(s[i]));
	return a;
}

/*
 * max |ours - ref| / max |ref| (the denominator at least 1e-6) of
 * DIR/ours_NAME (our float32 values) against DIR/NAME (the oracle's
 * float64 ones). -1 when either file is missing or their value counts
 * (*n_ours, *n_ref) differ.
 */
static double oracle_err(const char *dir, const char *name, size_t *n_ours,
			 size_t *n_ref)
{
	char p1[400], p2[400];
	size_t n1 = 0, n2 = 0, j;
	float *a;
	double *b, num = 0, den = 0, e = -1;

	snprintf(p1, sizeof(p1), "%s/ours_%s", dir, name);
	snprintf(p2, sizeof(p2), "%s/%s", dir, name);
	a = tap_read_file(p1, &n1);
	b = tap_read_file(p2, &n2);
	*n_ours = n1 / 4;
	*n_ref = n2 / 8;
	if (a && b && n1 / 4 == n2 / 8) {
		for (j = 0; j < n2 / 8; j++) {
			if (fabs(a[j] - b[j]) > num)
				num = fabs(a[j] - b[j]);
			if (fabs(b[j]) > den)
				den = fabs(b[j]);
		}
		e = num / (den > 1e-6 ? den : 1e-6);
	}
	free(a);
	free(b);
	return e;
}

/*
 * Run the oracle (script: a source-tree path, "tests/py/torch_rnn.py")
 * under tap_python() over the case directories dirs[0..n), leaving out
 * the NULL ones (cases that did not run). Returns system()'s status.
 */
static int run_oracle(const char *script, const char *const *dirs,
		      size_t n)
{
	const char *src = tap_source(script);
	size_t i, len = strlen(tap_python()) + strlen(src) + 8;
	char *cmd, *p;
	int st;

	for (i = 0; i < n; i++)
		if (dirs[i])
			len += strlen(dirs[i]) + 3;
	cmd = malloc(len);
	if (!cmd)
		return -1;
	p = cmd + sprintf(cmd, "'%s' '%s'", tap_python(), src);
	for (i = 0; i < n; i++)
		if (dirs[i])
			p += sprintf(p, " '%s'", dirs[i]);
	st = system(cmd);
	free(cmd);
	return st;
}

#endif
