/*
 * fuzz-grpcmsg.c - TF Serving's gRPC request messages as tfk-serve
 * decodes them (formats/serving_apis.proto through protobuf-c, tensors
 * through format/tensorproto.h), on arbitrary bytes.
 *
 * The first byte picks the message (Predict, Classification,
 * Regression, GetModelMetadata, GetModelStatus, ReloadConfig,
 * MultiInference request);
 * the rest is its wire form. A ReloadConfigRequest's config becomes a
 * server config (model/modelconfig.h) holding its invariants, or a
 * refusal with a message. A PredictRequest's input tensors each become a tensor
 * or a located refusal (TFK_EINVAL, or the size limit); an accepted one
 * written back by tfk_tensor_proto_view and read again is the same
 * tensor, bit for bit. Examples of a Classify/Regress input are packed
 * as tfk-serve packs them (context bytes, then the example's) and must
 * parse back as a tf.Example with the parser the models' ParseExample
 * uses whenever the two parts parse alone (protobuf merges them;
 * protobuf-c 1.4's unpacker refuses some such merges of a oneof, ours
 * must not). A part our parser refuses (a key that is not UTF-8, which
 * protobuf-c lets through) is the model's refusal, with a message.
 */
#include "example/example.h"
#include "format/tensorproto.h"
#include "formats/serving_apis.pb-c.h"
#include "model/modelconfig.h"

#include <stdlib.h>
#include <string.h>

static void round_trip(const struct tfk_tensor *t)
{
	struct tfk_tensor_proto p;
	struct tfk_tensor back;
	struct tfk_err err;
	uint8_t *buf;
	size_t n;
	Tensorflow__TensorProto *tp;
	int64_t i;

	if (tfk_tensor_proto_view(&p, t, &err))
		return;
	n = tensorflow__tensor_proto__get_packed_size(&p.tp);
	if (!(buf = malloc(n + 1)))
		abort();
	tensorflow__tensor_proto__pack(&p.tp, buf);
	tfk_tensor_proto_release(&p);
	if (!(tp = tensorflow__tensor_proto__unpack(NULL, n, buf)))
		abort();
	if (tfk_tensor_from_proto(tp, &back, &err))
		abort();
	if (back.dtype != t->dtype || back.rank != t->rank ||
	    memcmp(back.shape, t->shape, (size_t)t->rank * sizeof(*t->shape)))
		abort();
	if (t->dtype == TFK_DT_STRING) {
		for (i = 0; i < tfk_tensor_numel(t); i++) {
			struct tfk_str a = tfk_tensor_str(t, i),
				b = tfk_tensor_str(&back, i);

			if (a.len != b.len || (a.len && memcmp(a.ptr, b.ptr,
							      a.len)))
				abort();
		}
	} else if (back.nbytes != t->nbytes ||
		   (t->nbytes && memcmp(back.data, t->data, t->nbytes))) {
		abort();
	}
	tfk_tensor_release(&back);
	tensorflow__tensor_proto__free_unpacked(tp, NULL);
	free(buf);
}

static void predict(const uint8_t *p, size_t n)
{
	Tensorflow__Serving__PredictRequest *rq =
		tensorflow__serving__predict_request__unpack(NULL, n, p);
	struct tfk_tensor t;
	struct tfk_err err;
	size_t i;

	if (!rq)
		return;
	for (i = 0; i < rq->n_inputs; i++) {
		if (!rq->inputs[i]->value)
			continue;
		if (tfk_tensor_from_proto(rq->inputs[i]->value, &t, &err)) {
			if (!err.msg[0])
				abort();
			continue;
		}
		round_trip(&t);
		tfk_tensor_release(&t);
	}
	tensorflow__serving__predict_request__free_unpacked(rq, NULL);
}

static void examples(const Tensorflow__Serving__Input *in)
{
	Tensorflow__Example **ex = NULL, *ctx = NULL;
	struct tfk_example parsed;
	struct tfk_err err;
	size_t n = 0, i, nc = 0, k;
	uint8_t *buf;

	if (!in)
		return;
	if (in->kind_case == TENSORFLOW__SERVING__INPUT__KIND_EXAMPLE_LIST &&
	    in->example_list) {
		ex = in->example_list->examples;
		n = in->example_list->n_examples;
	} else if (in->kind_case ==
		   TENSORFLOW__SERVING__INPUT__KIND_EXAMPLE_LIST_WITH_CONTEXT &&
		   in->example_list_with_context) {
		ex = in->example_list_with_context->examples;
		n = in->example_list_with_context->n_examples;
		ctx = in->example_list_with_context->context;
	}
	if (ctx)
		nc = tensorflow__example__get_packed_size(ctx);
	tfk_example_init(&parsed);
	for (i = 0; i < n && i < 64; i++) {
		k = tensorflow__example__get_packed_size(ex[i]);
		if (!(buf = malloc(nc + k + 1)))
			abort();
		if (ctx)
			tensorflow__example__pack(ctx, buf);
		tensorflow__example__pack(ex[i], buf + nc);
		/* the server's ParseExample reads it with our parser: when
		 * both parts parse alone, their concatenation must too */
		if (tfk_example_parse(&parsed, buf + nc, k, &err) == 0 &&
		    (!nc || tfk_example_parse(&parsed, buf, nc, &err) == 0) &&
		    tfk_example_parse(&parsed, buf, nc + k, &err))
			abort();
		free(buf);
	}
	tfk_example_release(&parsed);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data + 1;
	size_t n = size ? size - 1 : 0;

	if (!size)
		return 0;
	switch (data[0] % 7) {
	case 0:
		predict(p, n);
		break;
	case 1: {
		Tensorflow__Serving__ClassificationRequest *rq =
			tensorflow__serving__classification_request__unpack(
				NULL, n, p);

		if (rq) {
			examples(rq->input);
			tensorflow__serving__classification_request__free_unpacked(
				rq, NULL);
		}
		break;
	}
	case 2: {
		Tensorflow__Serving__RegressionRequest *rq =
			tensorflow__serving__regression_request__unpack(NULL, n,
									 p);

		if (rq) {
			examples(rq->input);
			tensorflow__serving__regression_request__free_unpacked(
				rq, NULL);
		}
		break;
	}
	case 3: {
		Tensorflow__Serving__GetModelMetadataRequest *rq =
			tensorflow__serving__get_model_metadata_request__unpack(
				NULL, n, p);

		if (rq)
			tensorflow__serving__get_model_metadata_request__free_unpacked(
				rq, NULL);
		break;
	}
	case 5: {
		Tensorflow__Serving__ReloadConfigRequest *rq =
			tensorflow__serving__reload_config_request__unpack(
				NULL, n, p);
		struct tfk_server_config c;
		struct tfk_err err;
		int i;

		if (!rq)
			break;
		if (tfk_server_config_from_proto(rq->config, &c, &err) == 0) {
			for (i = 0; i < c.n_models; i++)
				if (!*c.models[i].name ||
				    !*c.models[i].base_path ||
				    strchr(c.models[i].name, '/') ||
				    c.models[i].num_versions < 1)
					abort();
			tfk_server_config_free(&c);
		} else if (!err.msg[0] || c.models) {
			abort();
		}
		tensorflow__serving__reload_config_request__free_unpacked(rq,
									  NULL);
		break;
	}
	case 6: {
		Tensorflow__Serving__MultiInferenceRequest *rq =
			tensorflow__serving__multi_inference_request__unpack(
				NULL, n, p);
		size_t i;

		if (!rq)
			break;
		for (i = 0; i < rq->n_tasks; i++) {
			const Tensorflow__Serving__ModelSpec *ms =
				rq->tasks[i]->model_spec;

			if (!rq->tasks[i]->method_name ||
			    (ms && (!ms->name || !ms->signature_name)))
				abort();
			if (ms && ms->version_choice_case ==
			    TENSORFLOW__SERVING__MODEL_SPEC__VERSION_CHOICE_VERSION_LABEL &&
			    !ms->version_label)
				abort();
		}
		examples(rq->input);
		tensorflow__serving__multi_inference_request__free_unpacked(rq,
									    NULL);
		break;
	}
	default: {
		Tensorflow__Serving__GetModelStatusRequest *rq =
			tensorflow__serving__get_model_status_request__unpack(
				NULL, n, p);

		if (rq)
			tensorflow__serving__get_model_status_request__free_unpacked(
				rq, NULL);
	}
	}
	return 0;
}
