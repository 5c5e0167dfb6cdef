/*
 * fuzz-savedmodel.c - the SavedModel loader (lib/model/savedmodel) on
 * arbitrary saved_model.pb bytes.
 *
 * FUZZ-SEEDS: fixtures/savedmodel/half_plus_two_cpu_tf1/00000123/saved_model.pb
 * FUZZ-SEEDS: fixtures/savedmodel/half_plus_two_tf2_cpu/00000123/saved_model.pb
 * FUZZ-SEEDS: fixtures/savedmodel/matrix_half_plus_two/1/saved_model.pb
 * FUZZ-SEEDS: fixtures/savedmodel/rust_regression_tf1/saved_model.pb
 *
 * plus tests/fuzz/seeds/fuzz-savedmodel/ (the synthetic model of
 * tests/py/savedmodel_show.py synth: two meta graphs, absent and
 * unknown-rank shapes, a _REF dtype, functions reached by call and by
 * name). Nothing touches the disk (tfk_savedmodel_parse, no directory).
 *
 * Invariants when a load succeeds: signatures and their inputs and
 * outputs are strictly sorted by key (so unique) and each is found by
 * tfk_savedmodel_signature; ranks are >= 0 and dims exist for them;
 * a meta graph's own tags, joined by ',', find a meta graph with the
 * same tag set; the op list is strictly sorted. When it fails: the
 * message starts with the name given and the code is TFK_ECORRUPT (or
 * TFK_ENOMEM).
 */
#include "format/savedmodel.h"
#include "util/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int same_set(const struct tfk_meta_graph *a,
		    const struct tfk_meta_graph *b)
{
	int i, j, found;

	for (i = 0; i < a->n_tags; i++) {
		for (j = 0, found = 0; j < b->n_tags && !found; j++)
			found = !strcmp(a->tags[i], b->tags[j]);
		if (!found)
			return 0;
	}
	for (i = 0; i < b->n_tags; i++) {
		for (j = 0, found = 0; j < a->n_tags && !found; j++)
			found = !strcmp(b->tags[i], a->tags[j]);
		if (!found)
			return 0;
	}
	return 1;
}

static void check_infos(const struct tfk_tensor_info *ti, int n)
{
	int i, j;

	for (i = 0; i < n; i++) {
		if (i && strcmp(ti[i - 1].key, ti[i].key) >= 0)
			abort();
		if (ti[i].rank < 0 || (ti[i].rank && !ti[i].dims) || !ti[i].name)
			abort();
		for (j = 0; j < ti[i].rank; j++)
			(void)ti[i].dims[j];
	}
}

static void check_tags(const struct tfk_savedmodel *sm, int k)
{
	const struct tfk_meta_graph *mg = &sm->meta_graphs[k];
	struct tfk_err err;
	size_t len = 1;
	char *s;
	int i, r;

	for (i = 0; i < mg->n_tags; i++) {
		if (!mg->tags[i][0] || strchr(mg->tags[i], ','))
			return;
		len += strlen(mg->tags[i]) + 1;
	}
	s = malloc(len);
	if (!s)
		abort();
	s[0] = '\0';
	for (i = 0; i < mg->n_tags; i++) {
		if (i)
			strcat(s, ",");
		strcat(s, mg->tags[i]);
	}
	r = tfk_savedmodel_find_tags(sm, s, &err);
	if (r < 0 || r > k || !same_set(mg, &sm->meta_graphs[r]))
		abort();
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tfk_savedmodel *sm;
	struct tfk_err err;
	int i, j, n, rc;

	rc = tfk_savedmodel_parse(&sm, data, size, "fuzz.pb", NULL, &err);
	if (rc) {
		if (sm || (rc != TFK_ECORRUPT && rc != TFK_ENOMEM) ||
		    strncmp(err.msg, "fuzz.pb", 7))
			abort();
		return 0;
	}
	for (i = 0; i < sm->n_meta_graphs; i++) {
		const struct tfk_meta_graph *mg = &sm->meta_graphs[i];
		const char **ops;

		for (j = 0; j < mg->n_signatures; j++) {
			const struct tfk_signature *s = &mg->signatures[j];

			if (j && strcmp(mg->signatures[j - 1].key, s->key) >= 0)
				abort();
			if (tfk_savedmodel_signature(mg, s->key, &err) != s)
				abort();
			check_infos(s->inputs, s->n_inputs);
			check_infos(s->outputs, s->n_outputs);
		}
		check_tags(sm, i);
		n = tfk_savedmodel_ops(mg, &ops, &err);
		if (n < 0)
			abort();
		for (j = 1; j < n; j++)
			if (strcmp(ops[j - 1], ops[j]) >= 0)
				abort();
		tfk_free(ops);
	}
	tfk_savedmodel_close(sm);
	return 0;
}
