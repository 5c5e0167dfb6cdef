/*
 * fuzz-restjson.c - TF Serving's REST request decoder (model/restjson.h)
 * on arbitrary bytes, against signatures of every dtype it decodes.
 *
 * Beyond "no crash, no leak, no undefined behaviour": a refused request
 * is TFK_EINVAL with a message; an accepted one decodes to tensors of
 * the signature's dtypes with as many elements as their shapes say, and
 * for a one-input signature its columnar response ({"outputs": V}) read
 * back as {"inputs": V} decodes to the same tensor, bit for bit: the
 * encoder writes what the decoder reads (floats round-trip, non-UTF-8
 * strings go as base64).
 * The same bytes as a Classify/Regress body: refused with a message, or
 * each example serialized as a tf.Example that tfk_example_parse takes.
 */
#include "example/example.h"
#include "model/restjson.h"

#include <stdlib.h>
#include <string.h>

#define T(k, dt) { k, k ":0", dt, -1, { 0 }, -1, -1 }

static const struct tfk_sv_tensor multi[] = {
	T("a", TFK_DT_FLOAT), T("b", TFK_DT_INT8), T("s", TFK_DT_STRING),
	T("z", TFK_DT_BOOL),
};
static const struct tfk_sv_tensor singles[] = {
	T("f", TFK_DT_FLOAT), T("d", TFK_DT_DOUBLE), T("i", TFK_DT_INT32),
	T("u", TFK_DT_UINT8), T("l", TFK_DT_INT64), T("s", TFK_DT_STRING),
	T("q", TFK_DT_BOOL), T("h", TFK_DT_INT16),
};

static void round_trip(const struct tfk_sv_signature *sig,
		       const struct tfk_tensor *t)
{
	const char *key = sig->inputs[0].key;
	const struct tfk_tensor *p = t;
	struct tfk_rj_request rq;
	struct tfk_tensor back;
	struct tfk_buf b;
	struct tfk_err err;

	tfk_buf_init(&b);
	if (tfk_rj_encode(&b, TFK_RJ_COLUMNAR, 1, &key, &p, &err)) {
		tfk_buf_release(&b);
		if (err.code != TFK_ENOMEM)
			abort();
		return;
	}
	/* {"outputs":V} -> {"inputs":V} (same length: 7 letters, 6 + pad) */
	memcpy(b.data, "{\"inputs\" ", 10);
	if (tfk_rj_parse(&rq, (const char *)b.data, b.len, &err) ||
	    tfk_rj_inputs(&rq, sig, &back, &err))
		abort();
	if (!tfk_tensor_equal(t, &back))
		abort();
	tfk_tensor_release(&back);
	tfk_rj_release(&rq);
	tfk_buf_release(&b);
}

/* A Classify/Regress body: refused with a message, or every example a
 * tf.Example that decodes. */
static void examples(const uint8_t *data, size_t size)
{
	struct tfk_rj_examples rq;
	struct tfk_example ex;
	struct tfk_err err;
	int64_t i;

	if (tfk_rj_parse_examples(&rq, (const char *)data, size, &err)) {
		if ((err.code != TFK_EINVAL && err.code != TFK_ENOMEM) ||
		    !err.msg[0])
			abort();
		tfk_rj_examples_release(&rq);
		return;
	}
	if (rq.examples.dtype != TFK_DT_STRING || rq.examples.rank != 1 ||
	    rq.examples.shape[0] < 1)
		abort();
	tfk_example_init(&ex);
	for (i = 0; i < rq.examples.shape[0]; i++) {
		struct tfk_str s = tfk_tensor_str(&rq.examples, i);

		if (tfk_example_parse(&ex, (const uint8_t *)s.ptr, s.len,
				      &err))
			abort();
	}
	tfk_example_release(&ex);
	tfk_rj_examples_release(&rq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tfk_rj_request rq;
	struct tfk_tensor in[4];
	struct tfk_err err;
	int k, i;

	examples(data, size);
	if (tfk_rj_parse(&rq, (const char *)data, size, &err)) {
		if (err.code != TFK_EINVAL || !err.msg[0])
			abort();
		tfk_rj_release(&rq);
		return 0;
	}
	for (k = -1; k < (int)(sizeof(singles) / sizeof(singles[0])); k++) {
		struct tfk_sv_signature sig = { "s", "m", 1, 0, NULL, NULL };

		if (k < 0) {
			sig.n_inputs = 4;
			sig.inputs = multi;
		} else {
			sig.inputs = &singles[k];
		}
		if (tfk_rj_inputs(&rq, &sig, in, &err)) {
			if ((err.code != TFK_EINVAL && err.code != TFK_ENOMEM)
			    || !err.msg[0])
				abort();
			continue;
		}
		for (i = 0; i < sig.n_inputs; i++)
			if (in[i].dtype != sig.inputs[i].dtype)
				abort();
		if (k >= 0 && rq.format == TFK_RJ_COLUMNAR)
			round_trip(&sig, &in[0]);
		for (i = 0; i < sig.n_inputs; i++)
			tfk_tensor_release(&in[i]);
	}
	tfk_rj_release(&rq);
	return 0;
}
