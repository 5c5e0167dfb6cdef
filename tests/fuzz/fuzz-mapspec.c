/*
 * fuzz-mapspec.c - the tfk-map spec parser (lib/nn/preprocess.h) on
 * arbitrary bytes, and the graph it builds.
 *
 * Beyond "no crash, no leak, no undefined behaviour": a refused spec has
 * a message that names the spec file; an accepted one builds a graph for
 * each feature as float32 and as uint8 (either succeeds or fails with a
 * named message), and dumping it gives text that parses again to a spec
 * with the same number of features.
 *
 * FUZZ-SEEDS: tests/fuzz/seeds/fuzz-mapspec/*
 */
#include "graph/graph.h"
#include "nn/preprocess.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void build(const struct tfk_prep *p, enum tfk_dtype dt)
{
	enum tfk_dtype dts[64];
	struct tfk_graph *g;
	struct tfk_err err;
	int i, n = tfk_prep_n_inputs(p);

	if (n > 64)
		return;
	for (i = 0; i < n; i++)
		dts[i] = dt;
	if (tfk_graph_new(&g, &err))
		return;
	if (tfk_prep_build(p, g, dts, &err) && !strstr(err.msg, "s.json"))
		abort();
	tfk_graph_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tfk_prep *p, *q;
	struct tfk_err err;
	char *s;

	if (tfk_prep_parse(&p, "s.json", (const char *)data, size, &err)) {
		if (!strstr(err.msg, "s.json") && err.code != TFK_ENOMEM)
			abort();
		return 0;
	}
	build(p, TFK_DT_FLOAT);
	build(p, TFK_DT_UINT8);
	s = tfk_prep_dump(p);
	if (s) {
		if (tfk_prep_parse(&q, "s.json", s, strlen(s), &err))
			abort();
		if (tfk_prep_n_inputs(q) != tfk_prep_n_inputs(p))
			abort();
		tfk_prep_free(q);
		free(s);
	}
	tfk_prep_free(p);
	return 0;
}
