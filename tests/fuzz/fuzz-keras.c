/*
 * fuzz-keras.c - the Keras model front end (lib/nn/model.h) on arbitrary
 * bytes: jansson parses them, tfk_keras_build builds whatever parses.
 *
 * Beyond "no crash, no leak, no undefined behaviour": a refused model
 * has a message that starts with the path given (the JSON path of the
 * fault follows it); an accepted one has one model variable per graph
 * variable and valid ports for each input and output in both branches.
 * Documents with a number above 64 are skipped: a Dense of 10^9 units
 * only tests the allocator, and the builder caps weights at 2^28 values.
 *
 * FUZZ-SEEDS: tests/fuzz/seeds/fuzz-keras/*
 */
#include "graph/graph.h"
#include "nn/model.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int small(const json_t *j, int depth)
{
	const char *k;
	json_t *v;
	size_t i;

	if (depth > 64)
		return 0;
	if (json_is_integer(j))
		return json_integer_value(j) <= 64;
	if (json_is_real(j))
		return json_real_value(j) <= 64;
	if (json_is_array(j)) {
		for (i = 0; i < json_array_size(j); i++)
			if (!small(json_array_get(j, i), depth + 1))
				return 0;
	} else if (json_is_object(j)) {
		json_object_foreach((json_t *)j, k, v)
			if (!small(v, depth + 1))
				return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tfk_model *m;
	struct tfk_err err;
	json_t *j;
	int i;

	j = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (!j)
		return 0;
	if (!small(j, 0)) {
		json_decref(j);
		return 0;
	}
	if (tfk_keras_build(j, "f.json: model", 1, &m, &err)) {
		if (m || (strncmp(err.msg, "f.json: model", 13) &&
			  err.code != TFK_ENOMEM))
			abort();
		json_decref(j);
		return 0;
	}
	if (m->n_vars != tfk_graph_n_variables(m->g))
		abort();
	for (i = 0; i < m->n_outputs; i++)
		if (!tfk_graph_node(m->g, m->outputs[i].train.node) ||
		    !tfk_graph_node(m->g, m->outputs[i].infer.node))
			abort();
	for (i = 0; i < m->n_inputs; i++)
		if (!tfk_graph_var(m->g, m->inputs[i].name) &&
		    tfk_graph_find(m->g, m->inputs[i].name,
				   &(struct tfk_port){ 0, 0 }, &err))
			abort();
	tfk_model_free(m);
	json_decref(j);
	return 0;
}
