/*
 * fuzz-tflrun.c - `tfk-lite run` as a whole: a .tflite model and the
 * feeds it is run on, both from the input, through the float graph path
 * (lib/model/tflgraph.c and the executor) or the int8 interpreter
 * (lib/model/tflint8.c), whichever tfk_tflite_is_int8 picks.
 *
 * Seeds: tests/fuzz/seeds/fuzz-tflrun/, each a feed header before a
 * model: NAME.tflite with header 00 ff 00 00 (float32 zeros of the
 * file's shapes) and NAME-b2.tflite with 04 02 00 00 (batch 2, the
 * pattern), for the seeds of fuzz-tflite and fuzz-tflint8 (the float op
 * models, fuzz-tflint8's finds, t1810's hostile models) and the two
 * hello_world fixtures.
 *
 * Input: 4 header bytes, then the model bytes (copied to an exact-size
 * allocation, so ASan sees any read past them):
 *   byte 0  the feeds' dtype (bits 0-1: float32, float64, int32, int64)
 *           and values (bit 2: 0 zeros, 1 the pattern i % 7 - 3)
 *   byte 1  the batch: dimension 0 of every input of rank >= 1 (255:
 *           the file's)
 *   byte 2  which dimensions 1..7 of the inputs are replaced (bit k-1
 *           for dimension k)
 *   byte 3  what they are replaced by (0..16: byte 3 % 17)
 * so the fuzzer varies shapes, dtypes and batch as well as the model:
 * the runners trust only what the loader verified and must refuse with
 * a message, or run within their buffers. Feeds of over 64 Ki elements
 * are skipped (a caller's memory, not the runner's), and both runners
 * refuse a run over MAX_WORK operations (tfk_tflite_int8_max_work,
 * tfk_tflite_graph_limited), so valid but huge models are refusals,
 * not timeouts. The float path's feeds are converted to the inputs'
 * dtypes as `tfk-lite run` converts them; a dtype it would refuse is
 * skipped. Bytes 4..7 of the model are also tried as "TFL3", as in
 * fuzz-tflite.
 */
#include "graph/exec.h"
#include "graph/graph.h"
#include "model/lite.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* As fuzz-tflint8: a valid model may ask for any amount of work. */
#define MAX_WORK ((int64_t)1 << 22)
#define MAX_IO 8

static const enum tfk_dtype dtypes[4] = {
	TFK_DT_FLOAT, TFK_DT_DOUBLE, TFK_DT_INT32, TFK_DT_INT64
};

/* Feed k of dtype dt for input x, shaped by the header h; 0, or 1 to
 * skip the input. */
static int make_feed(struct tfk_tensor *f, const struct tfk_tfl_tensor *x,
		     enum tfk_dtype dt, const uint8_t *h)
{
	struct tfk_err err;
	int64_t shape[TFK_MAX_RANK], n, i;
	int k;

	for (k = 0; k < x->rank; k++) {
		shape[k] = x->shape[k];
		if (k == 0 && h[1] != 255)
			shape[k] = h[1];
		else if (k > 0 && (h[2] >> (k - 1) & 1))
			shape[k] = h[3] % 17;
	}
	if (tfk_shape_numel(x->rank, shape, 8, &n, &err) || n > 65536 ||
	    tfk_tensor_init(f, dt, x->rank, shape, &err))
		return 1;
	for (i = 0; h[0] & 4 && i < n; i++) {
		int v = (int)(i % 7) - 3;

		switch (dt) {
		case TFK_DT_FLOAT: ((float *)f->data)[i] = (float)v; break;
		case TFK_DT_DOUBLE: ((double *)f->data)[i] = v; break;
		case TFK_DT_INT32: ((int32_t *)f->data)[i] = v; break;
		default: ((int64_t *)f->data)[i] = v; break;
		}
	}
	return 0;
}

static void run_int8(const struct tfk_tflite *m, const struct tfk_tensor *feeds)
{
	const struct tfk_tfl_subgraph *s = &m->subgraphs[0];
	struct tfk_tfl_int8 *q;
	struct tfk_tensor outs[MAX_IO];
	struct tfk_err err;
	int k;

	if (tfk_tflite_int8_new(&q, m, 0, &err)) {
		if (!err.msg[0])
			abort();
		return;
	}
	tfk_tflite_int8_max_work(q, MAX_WORK);
	if (tfk_tflite_int8_run(q, feeds, s->n_outputs, s->outputs, outs,
				&err)) {
		if (!err.msg[0])
			abort();
	} else {
		for (k = 0; k < s->n_outputs; k++)
			tfk_tensor_release(&outs[k]);
	}
	tfk_tflite_int8_free(q);
}

static void run_float(const struct tfk_tflite *m, struct tfk_tensor *feeds)
{
	const struct tfk_tfl_subgraph *s = &m->subgraphs[0];
	struct tfk_tdesc desc[MAX_IO];
	char names[2 * MAX_IO][16];
	const char *fn[MAX_IO], *on[MAX_IO];
	const struct tfk_tensor *got[MAX_IO];
	struct tfk_graph *g = NULL;
	struct tfk_exec *x = NULL;
	struct tfk_err err;
	int k, rc;

	for (k = 0; k < s->n_inputs; k++) {
		tfk_tensor_desc(&feeds[k], &desc[k]);
		snprintf(names[k], sizeof(names[k]), "t%d", s->inputs[k]);
		fn[k] = names[k];
	}
	for (k = 0; k < s->n_outputs; k++) {
		snprintf(names[MAX_IO + k], sizeof(names[0]), "t%d",
			 s->outputs[k]);
		on[k] = names[MAX_IO + k];
	}
	rc = tfk_tflite_graph_limited(m, 0, desc, MAX_WORK, &g, &err) ||
		tfk_exec_new(&x, g, fn, s->n_inputs, on, s->n_outputs, NULL,
			     &err) ||
		tfk_exec_run(x, feeds, 0, got, &err);
	if (rc && !err.msg[0])
		abort();
	tfk_exec_free(x);
	tfk_graph_free(g);
}

static void run(const uint8_t *h, const uint8_t *p, size_t n)
{
	struct tfk_tflite m;
	struct tfk_err err;
	struct tfk_tensor feeds[MAX_IO];
	const struct tfk_tfl_subgraph *s;
	int k, n_in = 0, int8;

	if (tfk_tflite_load(&m, p, n, &err))
		return;
	s = &m.subgraphs[0];
	if (s->n_inputs > MAX_IO || s->n_outputs > MAX_IO)
		goto out;
	int8 = tfk_tflite_is_int8(&m, 0);
	for (k = 0; k < s->n_inputs; k++) {
		const struct tfk_tfl_tensor *x = &s->tensors[s->inputs[k]];
		enum tfk_dtype dt = dtypes[h[0] & 3];

		if (!int8) {
			/* what `tfk-lite run` converts a feed to */
			enum tfk_dtype want = tfk_tfl_dtype(x->type);

			if (want == TFK_DT_FLOAT ||
			    ((want == TFK_DT_INT32 || want == TFK_DT_INT64) &&
			     (dt == TFK_DT_INT32 || dt == TFK_DT_INT64)))
				dt = want;
		}
		if (make_feed(&feeds[k], x, dt, h))
			break;
		n_in++;
	}
	if (n_in == s->n_inputs) {
		if (int8)
			run_int8(&m, feeds);
		else
			run_float(&m, feeds);
	}
	for (k = 0; k < n_in; k++)
		tfk_tensor_release(&feeds[k]);
out:
	tfk_tflite_release(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *p;

	if (size < 4)
		return 0;
	p = malloc(size - 4 ? size - 4 : 1);
	if (!p)
		return 0;
	memcpy(p, data + 4, size - 4);
	run(data, p, size - 4);
	if (size - 4 >= 8) {
		memcpy(p + 4, "TFL3", 4);
		run(data, p, size - 4);
	}
	free(p);
	return 0;
}
