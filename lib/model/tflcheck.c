/*
 * tflcheck.c - what a run of a .tflite subgraph may touch, checked in
 * one place for both runners (the float graph of tflgraph.c and the
 * int8 interpreter of tflint8.c; see lite.h).
 *
 * The loader (format/tflite.c) verifies the file: every index in range,
 * and a non-empty buffer holding exactly the bytes its tensor's type
 * and shape need. That is not enough for a run: the loader cannot size
 * a buffer whose type has no element size (STRING, INT4) or that is
 * sparse, a run reads tensors with the shapes a feed gives them, and a
 * feed is written somewhere. So a runner asks here, before any kernel:
 *  - tfk_tflite_check_inputs: no subgraph input has constant data. In
 *    TFLite such a tensor is kTfLiteMmapRo, read-only bytes of the
 *    model, and ResizeInputTensor refuses it ("Attempting to resize a
 *    fixed-size tensor"); feeding it in place would write over the
 *    model, so it is refused whatever the feed.
 *  - tfk_tflite_const_extent: the bytes a kernel reads from a constant
 *    (its elements times its element size, at least one byte each, as
 *    an int8 kernel reads any tensor) lie inside its buffer.
 * Rejected: feeding such an input into a buffer of its own (it would
 * run models TFLite cannot), and checking in each kernel (the class of
 * bug is the kernel that forgot).
 */
#include "model/lite.h"

#include <inttypes.h>

int tfk_tflite_check_inputs(const struct tfk_tflite *m, int sg,
			    struct tfk_err *err)
{
	const struct tfk_tfl_subgraph *s = &m->subgraphs[sg];
	int k;

	for (k = 0; k < s->n_inputs; k++) {
		const struct tfk_tfl_tensor *x = &s->tensors[s->inputs[k]];
		uint64_t have = m->n_buffers ? m->buffers[x->buffer].size : 0;

		if (have)
			return tfk_errf(err, TFK_EINVAL, "input %d: tensor %d "
					"'%s' has constant data (buffer %u, "
					"%" PRIu64 " bytes): an input cannot "
					"be fed", k,
					s->inputs[k], x->name, x->buffer,
					have);
	}
	return 0;
}

int tfk_tflite_const_extent(const struct tfk_tflite *m, int sg, int t,
			    struct tfk_err *err)
{
	const struct tfk_tfl_tensor *x = &m->subgraphs[sg].tensors[t];
	uint64_t have = m->n_buffers ? m->buffers[x->buffer].size : 0;
	size_t es = tfk_tfl_type_size(x->type);
	int64_t n;
	char sh[64];

	if (!es)
		es = 1;
	if (tfk_shape_numel(x->rank, x->shape, es, &n, err))
		return tfk_err_prefix(err, "tensor %d '%s'", t, x->name);
	tfk_shape_str(x->rank, x->shape, sh, sizeof(sh));
	if ((uint64_t)n * es > have)
		return tfk_errf(err, TFK_EINVAL, "tensor %d '%s': %s %s "
				"needs %" PRId64 " bytes, but its buffer %u "
				"holds %" PRIu64, t, x->name,
				tfk_tfl_type_name(x->type), sh,
				n * (int64_t)es, x->buffer, have);
	return 0;
}
