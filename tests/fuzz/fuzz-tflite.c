/*
 * fuzz-tflite.c - the .tflite loader (FlatBuffer verifier + TFLite
 * model rules) on arbitrary bytes.
 *
 * FUZZ-SEEDS: fixtures/tflite/hello_world/*.tflite
 * FUZZ-SEEDS: fixtures/tflite/lite_testdata/*.bin
 * FUZZ-SEEDS: fixtures/tflite/serving_half_plus_two/model.tflite
 * (and tests/fuzz/seeds/fuzz-tflite/: the op models of
 * `tests/py/tflite_fb.py ops DIR`, so the graph builder's CONV_2D,
 * DEPTHWISE, pool, FC, RESHAPE, CONCATENATION, MEAN, PAD and float16
 * paths are reached, and strings.tflite, `tflite_fb.py strings`'s
 * str-good: a STRING constant's buffer, count, offsets and bytes, the
 * loader checks, gathered from)
 *
 * The input is copied to an exact-size allocation (so ASan sees any
 * read past it) and loaded. A failed load must have a message; a loaded
 * model is then used the way `tfk-lite show` uses it, with no checks of
 * its own: every index dereferenced (opcodes, tensors of operators and
 * subgraphs, buffers, signature tensors, metadata buffers), every option
 * field decoded (none may fail: load checked them), sizes and the
 * min_runtime_version string computed; then every subgraph is built
 * as a graph for `run` (tfk_tflite_graph: a refusal must have a
 * message). Mutations rarely survive the
 * identifier check, so each input is also tried with bytes 4..7 set to
 * "TFL3".
 */
#include "graph/graph.h"
#include "model/lite.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static volatile uint64_t sink;

static void use(const struct tfk_tflite *m)
{
	struct tfk_tflite_sizes sz;
	struct tfk_err err;
	char rt[32], val[256];
	const char *nm;
	int i, j, k, kind, rc;

	tfk_tflite_sizes(m, &sz);
	if (sz.buffers + sz.metadata + sz.structure != sz.total)
		abort();
	if (!tfk_tflite_min_runtime(m, rt, sizeof(rt)))
		sink += strlen(rt);
	for (i = 0; i < m->n_subgraphs; i++) {
		const struct tfk_tfl_subgraph *s = &m->subgraphs[i];

		for (j = 0; j < s->n_inputs; j++)
			sink += s->tensors[s->inputs[j]].type;
		for (j = 0; j < s->n_outputs; j++)
			sink += s->tensors[s->outputs[j]].type;
		for (j = 0; j < s->n_tensors; j++) {
			const struct tfk_tfl_tensor *x = &s->tensors[j];
			const struct tfk_tfl_buffer *b =
				m->n_buffers ? &m->buffers[x->buffer] : NULL;

			sink += strlen(x->name);
			if (b && b->size)
				sink += b->data[b->size - 1];
			for (k = 0; k < x->quant.n_scale; k++)
				if (!(x->quant.scale[k] > 0))
					abort();
		}
		for (j = 0; j < s->n_ops; j++) {
			const struct tfk_tfl_op *o = &s->ops[j];

			sink += m->opcodes[o->opcode_index].builtin_code;
			for (k = 0; k < o->n_inputs; k++)
				if (o->inputs[k] >= 0)
					sink += s->tensors[o->inputs[k]].rank;
			for (k = 0; k < o->n_outputs; k++)
				sink += s->tensors[o->outputs[k]].rank;
			for (k = 0; (rc = tfk_tflite_option(o, k, &nm, val,
					sizeof(val), &kind, &err)) == 1; k++)
				sink += strlen(val);
			if (rc < 0)
				abort();	/* load must have caught it */
		}
	}
	for (i = 0; i < m->n_signatures; i++) {
		const struct tfk_tfl_signature *g = &m->signatures[i];
		const struct tfk_tfl_subgraph *s =
			&m->subgraphs[g->subgraph_index];

		for (j = 0; j < g->n_inputs; j++)
			sink += s->tensors[g->inputs[j].tensor_index].rank +
				strlen(g->inputs[j].name);
		for (j = 0; j < g->n_outputs; j++)
			sink += s->tensors[g->outputs[j].tensor_index].rank;
	}
	for (i = 0; i < m->n_metadata; i++)
		sink += m->buffers[m->metadata[i].buffer].size +
			strlen(m->metadata[i].name);
}

static void run(const uint8_t *p, size_t n)
{
	struct tfk_tflite m;
	struct tfk_err err;

	err.msg[0] = 0;
	if (tfk_tflite_load(&m, p, n, &err)) {
		if (!err.msg[0])
			abort();
		return;
	}
	use(&m);
	{
		int i;

		for (i = 0; i < m.n_subgraphs && i < 4; i++) {
			struct tfk_graph *g;

			err.msg[0] = 0;
			if (tfk_tflite_graph(&m, i, NULL, &g, &err)) {
				if (!err.msg[0])
					abort();
			} else {
				tfk_graph_free(g);
			}
		}
	}
	tfk_tflite_release(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *c = malloc(size ? size : 1);

	if (!c)
		return 0;
	memcpy(c, data, size);
	run(c, size);
	if (size >= 8 && memcmp(c + 4, "TFL3", 4)) {
		memcpy(c + 4, "TFL3", 4);
		run(c, size);
	}
	free(c);
	return 0;
}
