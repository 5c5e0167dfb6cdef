/*
 * fuzz-tflint8.c - the int8 interpreter of `tfk-lite run`
 * (lib/model/tflint8.c) on arbitrary .tflite bytes.
 *
 * FUZZ-SEEDS: fixtures/tflite/hello_world/hello_world_int8.tflite
 * FUZZ-SEEDS: fixtures/tflite/lite_testdata/add_quantized_int8.bin
 * FUZZ-SEEDS: fixtures/tflite/lite_testdata/add_quantized.bin
 * (and tests/fuzz/seeds/fuzz-tflint8/ when it exists: int8 files of
 * `tfk-lite convert --quantize int8`, and tf1-uint8.tflite, a uint8
 * model of TF's TF1 converter, as tests/tf/t-tflite-u8.py makes it)
 *
 * A model that loads and that tfk_tflite_is_int8 calls int8 is run on
 * subgraph 0 with float zeros of its inputs' shapes (at most 64 Ki
 * elements each, batch as the file says), at most MAX_WORK operations:
 * the interpreter trusts only what the loader verified, so whatever the
 * operators' shapes, types, options and quantization say it must refuse
 * with a message or run within its buffers. A model that runs is run
 * again through the same prepared interpreter, whose second run reuses
 * the buffers and packed weights of the first: same output bytes.
 * Bytes 4..7 are forced to "TFL3" as fuzz-tflite does.
 */
#include "model/lite.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The most operations a run may do (tfk_tflite_int8_max_work): a
 * valid model may ask for any amount of work, and a few bytes of shape
 * make it minutes; refused ones are refusals like any other. */
#define MAX_WORK ((int64_t)1 << 22)

/* Runs the prepared interpreter twice (tfk-lite bench's loop): the
 * second run reuses the first one's buffers and packed weights and must
 * give the same bytes. */
static void run_twice(const struct tfk_tflite *m, struct tfk_tensor *feeds,
		      int n_out, const int *outi)
{
	struct tfk_tfl_int8 *q;
	struct tfk_tensor outs[8], again[8];
	struct tfk_err err;
	int k;

	if (tfk_tflite_int8_new(&q, m, 0, &err)) {
		if (!err.msg[0])
			abort();
		return;
	}
	tfk_tflite_int8_max_work(q, MAX_WORK);
	if (tfk_tflite_int8_run(q, feeds, n_out, outi, outs, &err)) {
		if (!err.msg[0])
			abort();
		tfk_tflite_int8_free(q);
		return;
	}
	if (tfk_tflite_int8_run(q, feeds, n_out, outi, again, &err))
		abort();	/* the same run succeeded once */
	for (k = 0; k < n_out; k++) {
		if (outs[k].nbytes != again[k].nbytes ||
		    memcmp(outs[k].data, again[k].data, outs[k].nbytes))
			abort();
		tfk_tensor_release(&outs[k]);
		tfk_tensor_release(&again[k]);
	}
	tfk_tflite_int8_free(q);
}

static void run(const uint8_t *p, size_t n)
{
	struct tfk_tflite m;
	struct tfk_err err;
	struct tfk_tensor feeds[8];
	int outi[8], k, n_in = 0, rc = 0;
	const struct tfk_tfl_subgraph *s;

	if (tfk_tflite_load(&m, p, n, &err))
		return;
	if (!m.n_subgraphs || !tfk_tflite_is_int8(&m, 0))
		goto out;
	s = &m.subgraphs[0];
	if (s->n_inputs > 8 || s->n_outputs > 8)
		goto out;
	for (k = 0; k < s->n_inputs; k++) {
		const struct tfk_tfl_tensor *x = &s->tensors[s->inputs[k]];
		int64_t c;

		if (tfk_shape_numel(x->rank, x->shape, 4, &c, &err) ||
		    c > 65536 ||
		    tfk_tensor_init(&feeds[k], TFK_DT_FLOAT, x->rank,
				    x->shape, &err)) {
			rc = 1;
			break;
		}
		n_in++;
	}
	if (!rc) {
		for (k = 0; k < s->n_outputs; k++)
			outi[k] = s->outputs[k];
		run_twice(&m, feeds, s->n_outputs, outi);
	}
	for (k = 0; k < n_in; k++)
		tfk_tensor_release(&feeds[k]);
out:
	tfk_tflite_release(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *p = malloc(size ? size : 1);

	if (!p)
		return 0;
	memcpy(p, data, size);
	run(p, size);
	if (size >= 8) {
		memcpy(p + 4, "TFL3", 4);
		run(p, size);
	}
	free(p);
	return 0;
}
