/*
 * grpc.c - tfk-serve's gRPC front end on gRPC's C core API: TF
 * Serving's PredictionService (Predict, Classify, Regress,
 * MultiInference, GetModelMetadata) and ModelService (GetModelStatus,
 * HandleReloadConfigRequest), with the messages
 * of formats/serving_apis.proto, so that the tensorflow-serving-api
 * client (PredictionServiceStub, ModelServiceStub) works unchanged.
 *
 * Threads: --rest_api_num_threads workers, each with its own completion queue
 * on which it keeps one call requested per method. A worker that gets a
 * call answers it on the spot (decode, run, encode), starts the batch
 * that sends the answer and the status, and requests the next call of
 * that method; when the batch completes the call is released. A worker
 * keeps its own runner per version and signature (serve.h: the slots
 * after the REST threads'), so a request takes no lock but the one on
 * the version's reference count.
 *
 * Connections come through cmd/serve/accept.c (a connection limit, one
 * per client address, a deadline for HTTP/2's preface), then are
 * gRPC's; an idle one closes after grpc.max_connection_idle_ms (5
 * minutes unless --grpc_channel_arguments says otherwise).
 *
 * Any other method (a typo, a newer API) is answered UNIMPLEMENTED by
 * a generic call slot per worker, as gRPC servers answer a method they
 * lack.
 *
 * Errors are gRPC statuses with TF Serving's codes and our messages:
 * INVALID_ARGUMENT for bad requests, NOT_FOUND for an unknown model or
 * version, RESOURCE_EXHAUSTED when memory runs out, UNAVAILABLE while
 * stopping, INTERNAL otherwise.
 */
#include "format/tensorproto.h"
#include "formats/serving_apis.pb-c.h"
#include "model/modelconfig.h"
#include "model/restjson.h"
#include "model/servable.h"
#include "serve.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cli.h"

#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_posix.h>
#include <grpc/grpc_security.h>
#include <grpc/support/log.h>
#include <grpc/support/time.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum method {
	M_PREDICT, M_CLASSIFY, M_REGRESS, M_MULTI, M_METADATA, M_STATUS,
	M_RELOAD,
	M_OTHER,	/* any other method: UNIMPLEMENTED */
	N_METHODS
};

static const struct {
	const char *path, *api;
} methods[N_METHODS] = {
	{ "/tensorflow.serving.PredictionService/Predict", "Predict" },
	{ "/tensorflow.serving.PredictionService/Classify", "Classify" },
	{ "/tensorflow.serving.PredictionService/Regress", "Regress" },
	{ "/tensorflow.serving.PredictionService/MultiInference",
	  "MultiInference" },
	{ "/tensorflow.serving.PredictionService/GetModelMetadata",
	  "GetModelMetadata" },
	{ "/tensorflow.serving.ModelService/GetModelStatus",
	  "GetModelStatus" },
	{ "/tensorflow.serving.ModelService/HandleReloadConfigRequest",
	  "HandleReloadConfigRequest" },
	{ NULL, NULL },
};

struct worker;

/* One call slot: a requested call of one method, then its answer. */
struct call {
	struct worker *w;
	enum method m;
	int sending;
	grpc_call *call;
	gpr_timespec deadline;
	grpc_metadata_array md;
	grpc_call_details other;	/* M_OTHER: which method */
	grpc_byte_buffer *payload, *reply;
	grpc_slice details;
	int cancelled;
};

struct worker {
	struct sv_grpc *g;
	int tid;
	grpc_completion_queue *cq;
	pthread_t th;
	struct call calls[N_METHODS];
};

struct sv_grpc {
	struct sv_server *s;
	struct sv_grpc_opts o;
	grpc_server *srv;
	grpc_server_credentials *cred;
	struct sv_acceptor *door;
	grpc_completion_queue *shutdown_cq;
	void *reg[N_METHODS];
	struct worker *w;
	int n_workers;
	atomic_int stopping;
};

/* What one handler answers: a status, its message, the reply bytes. */
struct answer {
	grpc_status_code code;
	char msg[TFK_ERR_MSG_MAX + 128];
	struct tfk_buf out;
	const char *model;		/* for the metrics; NULL: none */
};

static grpc_status_code fail(struct answer *a, grpc_status_code code,
			     const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static grpc_status_code fail(struct answer *a, grpc_status_code code,
			     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->msg, sizeof(a->msg), fmt, ap);
	va_end(ap);
	return a->code = code;
}

static grpc_status_code fail_err(struct answer *a, const struct tfk_err *e)
{
	grpc_status_code c = e->code == SV_EFULL ? GRPC_STATUS_UNAVAILABLE :
		e->code == TFK_ENOMEM ?
		GRPC_STATUS_RESOURCE_EXHAUSTED : e->code == TFK_EINVAL ||
		e->code == TFK_ENOTFOUND ? GRPC_STATUS_INVALID_ARGUMENT :
		GRPC_STATUS_INTERNAL;

	return fail(a, c, "%s", e->msg);
}

/* Pack message into a->out; OK, or RESOURCE_EXHAUSTED. */
static grpc_status_code pack(struct answer *a, const ProtobufCMessage *msg)
{
	size_t n = protobuf_c_message_get_packed_size(msg);

	if (tfk_buf_reserve(&a->out, n))
		return fail(a, GRPC_STATUS_RESOURCE_EXHAUSTED,
			    "out of memory for a %zu-byte answer", n);
	a->out.len = protobuf_c_message_pack(msg, a->out.data);
	return a->code = GRPC_STATUS_OK;
}

/* Heap blocks of one answer's messages, freed together. */
struct arena {
	void **p;
	int n, cap;
	int failed;
};

static void *az(struct arena *ar, size_t n)
{
	void *p;

	if (ar->n == ar->cap) {
		int nc = ar->cap ? ar->cap * 2 : 32;
		void **g = tfk_realloc(ar->p, (size_t)nc * sizeof(*g));

		if (!g) {
			ar->failed = 1;
			return NULL;
		}
		ar->p = g;
		ar->cap = nc;
	}
	if (!(p = tfk_calloc(1, n ? n : 1))) {
		ar->failed = 1;
		return NULL;
	}
	return ar->p[ar->n++] = p;
}

static void arena_free(struct arena *ar)
{
	int i;

	for (i = 0; i < ar->n; i++)
		tfk_free(ar->p[i]);
	tfk_free(ar->p);
}

/* Models ----------------------------------------------------------------- */

/* The model and version a ModelSpec names (*v with a reference). */
static grpc_status_code resolve(struct sv_grpc *g,
				const Tensorflow__Serving__ModelSpec *ms,
				struct answer *a, struct sv_model **mp,
				struct sv_version **vp)
{
	struct sv_model *m;
	int64_t num = -1;

	if (vp)
		*vp = NULL;
	if (!ms || !ms->name || !*ms->name)
		return fail(a, GRPC_STATUS_INVALID_ARGUMENT, "Missing "
			    "ModelSpec: give model_spec.name");
	if (!(m = sv_find(g->s, ms->name, strlen(ms->name))))
		return fail(a, GRPC_STATUS_NOT_FOUND, "Servable not found "
			    "for request: Latest(%s)", ms->name);
	a->model = m->name;
	if (ms->version_choice_case ==
	    TENSORFLOW__SERVING__MODEL_SPEC__VERSION_CHOICE_VERSION &&
	    ms->version)
		num = ms->version->value;
	if (ms->version_choice_case ==
	    TENSORFLOW__SERVING__MODEL_SPEC__VERSION_CHOICE_VERSION_LABEL &&
	    sv_label(m, ms->version_label, strlen(ms->version_label), &num))
		return fail(a, GRPC_STATUS_INVALID_ARGUMENT, "Unrecognized "
			    "servable version label: %s", ms->version_label);
	*mp = m;
	if (!vp)
		return GRPC_STATUS_OK;
	if (!(*vp = sv_acquire(m, num))) {
		if (num >= 0)
			return fail(a, GRPC_STATUS_NOT_FOUND, "Servable not "
				    "found for request: Specific(%s, %" PRId64
				    ")", m->name, num);
		return fail(a, GRPC_STATUS_NOT_FOUND, "Servable not found for "
			    "request: Latest(%s)", m->name);
	}
	return GRPC_STATUS_OK;
}

/* The model_spec of an answer: name, version, signature. */
static Tensorflow__Serving__ModelSpec *spec_out(struct arena *ar,
						const struct sv_version *v,
						const char *sig)
{
	Tensorflow__Serving__ModelSpec *ms = az(ar, sizeof(*ms));
	Google__Protobuf__Int64Value *ver = az(ar, sizeof(*ver));

	if (!ms || !ver)
		return NULL;
	tensorflow__serving__model_spec__init(ms);
	google__protobuf__int64_value__init(ver);
	ms->name = (char *)v->model;
	ver->value = v->num;
	ms->version_choice_case =
		TENSORFLOW__SERVING__MODEL_SPEC__VERSION_CHOICE_VERSION;
	ms->version = ver;
	if (sig)
		ms->signature_name = (char *)sig;
	return ms;
}

static const struct tfk_sv_signature *signature(struct answer *a,
						const struct sv_version *v,
						const char *name)
{
	struct tfk_err e;
	const struct tfk_sv_signature *sig =
		tfk_servable_find(v->s, name && *name ? name : NULL, &e);

	if (!sig)
		fail(a, GRPC_STATUS_INVALID_ARGUMENT, "%s", e.msg);
	return sig;
}

/* Run r on in[], outputs into out[] (borrowed from r): 0 or failed. */
static int run(struct sv_grpc *g, struct answer *a, enum method m,
	       struct sv_version *v, const struct tfk_sv_signature *sig,
	       struct tfk_runner *r, struct tfk_tensor *in,
	       const struct tfk_tensor **out, struct sv_outputs *own)
{
	struct tfk_err e;
	double t0 = tfk_sv_now();

	if (sv_run(v, sig, r, in, out, own, &e)) {
		fail_err(a, &e);
		return -1;
	}
	sv_metrics_runtime(g->o.metrics, a->model, methods[m].api,
			   (tfk_sv_now() - t0) * 1e6);
	return 0;
}

/* Predict ---------------------------------------------------------------- */

static grpc_status_code predict(struct worker *w, const uint8_t *p, size_t n,
				struct answer *a)
{
	struct sv_grpc *g = w->g;
	Tensorflow__Serving__PredictRequest *rq;
	Tensorflow__Serving__PredictResponse rs =
		TENSORFLOW__SERVING__PREDICT_RESPONSE__INIT;
	const struct tfk_sv_signature *sig;
	struct sv_model *m;
	struct sv_version *v = NULL;
	struct tfk_runner *r = NULL;
	struct tfk_tensor *in = NULL;
	const struct tfk_tensor **out = NULL;
	struct tfk_tensor_proto *tp = NULL;
	struct arena ar = { 0 };
	struct sv_outputs own_out = { NULL, 0 };
	struct tfk_err e;
	int i, j, k, own = 0, n_out = 0, n_in = 0;

	if (!(rq = tensorflow__serving__predict_request__unpack(NULL, n, p)))
		return fail(a, GRPC_STATUS_INVALID_ARGUMENT, "the request "
			    "is not a PredictRequest (protobuf)");
	if (resolve(g, rq->model_spec, a, &m, &v))
		goto done;
	if (!(sig = signature(a, v, rq->model_spec->signature_name)))
		goto done;
	for (i = 0; i < (int)rq->n_inputs; i++) {
		for (j = 0; j < sig->n_inputs; j++)
			if (!strcmp(sig->inputs[j].key, rq->inputs[i]->key))
				break;
		if (j == sig->n_inputs) {
			fail(a, GRPC_STATUS_INVALID_ARGUMENT, "signature %s "
			     "has no input '%s'", sig->key,
			     rq->inputs[i]->key);
			goto done;
		}
		for (k = 0; k < i; k++)
			if (!strcmp(rq->inputs[k]->key, rq->inputs[i]->key)) {
				fail(a, GRPC_STATUS_INVALID_ARGUMENT, "input "
				     "'%s' given twice", rq->inputs[i]->key);
				goto done;
			}
	}
	if (!(r = sv_runner(v, sig, w->tid, &own, &e))) {
		fail_err(a, &e);
		goto done;
	}
	n_in = tfk_runner_n_inputs(r);
	in = tfk_calloc((size_t)n_in + 1, sizeof(*in));
	if (!in) {
		fail(a, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
		goto done;
	}
	for (j = 0; j < n_in; j++) {
		const struct tfk_sv_tensor *want = tfk_runner_input(r, j);
		const Tensorflow__TensorProto *t = NULL;

		for (i = 0; i < (int)rq->n_inputs; i++)
			if (!strcmp(rq->inputs[i]->key, want->key))
				t = rq->inputs[i]->value;
		if (!t) {
			fail(a, GRPC_STATUS_INVALID_ARGUMENT, "signature %s: "
			     "input '%s' is missing", sig->key, want->key);
			goto done;
		}
		if (tfk_tensor_from_proto(t, &in[j], &e)) {
			fail(a, GRPC_STATUS_INVALID_ARGUMENT, "input '%s': %s",
			     want->key, e.msg);
			goto done;
		}
		/* TF Serving feeds a tensor of the input's own dtype only */
		if (in[j].dtype != want->dtype) {
			fail(a, GRPC_STATUS_INVALID_ARGUMENT, "input '%s': "
			     "expects %s, got a TensorProto of %s", want->key,
			     tfk_dtype_name(want->dtype),
			     tfk_dtype_name(in[j].dtype));
			goto done;
		}
	}
	n_out = tfk_runner_n_outputs(r);
	out = tfk_calloc((size_t)n_out + 1, sizeof(*out));
	tp = tfk_calloc((size_t)n_out + 1, sizeof(*tp));
	rs.outputs = az(&ar, (size_t)(n_out + 1) * sizeof(*rs.outputs));
	if (!out || !tp || !rs.outputs) {
		fail(a, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
		goto done;
	}
	for (i = 0; i < (int)rq->n_output_filter; i++) {
		for (j = 0; j < n_out; j++)
			if (!strcmp(tfk_runner_output(r, j)->key,
				    rq->output_filter[i]))
				break;
		if (j == n_out) {
			fail(a, GRPC_STATUS_INVALID_ARGUMENT, "output tensor "
			     "alias not found in signature: %s",
			     rq->output_filter[i]);
			goto done;
		}
	}
	if (run(g, a, M_PREDICT, v, sig, r, in, out, &own_out))
		goto done;
	for (j = 0; j < n_out; j++) {
		const char *key = tfk_runner_output(r, j)->key;
		Tensorflow__Serving__PredictResponse__OutputsEntry *oe;
		int keep = !rq->n_output_filter;

		for (i = 0; i < (int)rq->n_output_filter; i++)
			keep |= !strcmp(rq->output_filter[i], key);
		if (!keep)
			continue;
		if (tfk_tensor_proto_view(&tp[j], out[j], &e)) {
			fail_err(a, &e);
			goto done;
		}
		if (!(oe = az(&ar, sizeof(*oe))))
			break;
		tensorflow__serving__predict_response__outputs_entry__init(oe);
		oe->key = (char *)key;
		oe->value = &tp[j].tp;
		rs.outputs[rs.n_outputs++] = oe;
	}
	rs.model_spec = spec_out(&ar, v, sig->key);
	if (ar.failed)
		fail(a, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
	else
		pack(a, &rs.base);
done:
	for (j = 0; tp && j < n_out; j++)
		tfk_tensor_proto_release(&tp[j]);
	sv_outputs_release(&own_out);
	tfk_free(tp);
	for (j = 0; in && j < n_in; j++)
		tfk_tensor_release(&in[j]);
	tfk_free(in);
	tfk_free(out);
	if (own)
		tfk_runner_free(r);
	arena_free(&ar);
	sv_release(v);
	tensorflow__serving__predict_request__free_unpacked(rq, NULL);
	return a->code;
}

/* Classify and Regress ---------------------------------------------------- */

/*
 * The request's examples as a [N] string tensor of serialized
 * tf.Examples; with a context, each is the context's bytes then the
 * example's, which protobuf reads as the two merged (the example's
 * features winning), as TF Serving builds them.
 */
static int examples_tensor(const Tensorflow__Serving__Input *in,
			   struct tfk_tensor *t, struct answer *a)
{
	Tensorflow__Example **ex = NULL, *ctx = NULL;
	size_t n = 0, nc = 0, i, k;
	int64_t dim;
	struct tfk_err e;
	uint8_t *buf;

	if (in && in->kind_case ==
	    TENSORFLOW__SERVING__INPUT__KIND_EXAMPLE_LIST && in->example_list) {
		ex = in->example_list->examples;
		n = in->example_list->n_examples;
	} else if (in && in->kind_case ==
		   TENSORFLOW__SERVING__INPUT__KIND_EXAMPLE_LIST_WITH_CONTEXT &&
		   in->example_list_with_context) {
		ex = in->example_list_with_context->examples;
		n = in->example_list_with_context->n_examples;
		ctx = in->example_list_with_context->context;
	}
	if (!n)
		return fail(a, GRPC_STATUS_INVALID_ARGUMENT, "Input is empty: "
			    "give input.example_list (or "
			    "example_list_with_context) with examples"), -1;
	dim = (int64_t)n;
	if (tfk_tensor_init(t, TFK_DT_STRING, 1, &dim, &e))
		return fail_err(a, &e), -1;
	if (ctx)
		nc = tensorflow__example__get_packed_size(ctx);
	for (i = 0; i < n; i++) {
		k = tensorflow__example__get_packed_size(ex[i]);
		if (!(buf = tfk_malloc(nc + k + 1)))
			return fail(a, GRPC_STATUS_RESOURCE_EXHAUSTED,
				    "out of memory"), -1;
		if (ctx)
			tensorflow__example__pack(ctx, buf);
		tensorflow__example__pack(ex[i], buf + nc);
		if (tfk_tensor_set_str(t, (int64_t)i, buf, nc + k, &e)) {
			tfk_free(buf);
			return fail_err(a, &e), -1;
		}
		tfk_free(buf);
	}
	return 0;
}

/* Result of a Classify (classes c, scores s) or Regress (values c). */
static int result_msg(struct arena *ar, enum method m,
		      const struct tfk_tensor *c, const struct tfk_tensor *s,
		      int64_t n_ex, ProtobufCMessage **out)
{
	int64_t i, k, n_cls;

	if (m == M_REGRESS) {
		Tensorflow__Serving__RegressionResult *rr = az(ar, sizeof(*rr));

		if (!rr)
			return -1;
		tensorflow__serving__regression_result__init(rr);
		if (!(rr->regressions = az(ar, (size_t)n_ex *
					   sizeof(*rr->regressions))))
			return -1;
		for (i = 0; i < n_ex; i++) {
			Tensorflow__Serving__Regression *r = az(ar, sizeof(*r));

			if (!r)
				return -1;
			tensorflow__serving__regression__init(r);
			r->value = (float)tfk_tensor_get_f64(c, i);
			rr->regressions[rr->n_regressions++] = r;
		}
		*out = &rr->base;
		return 0;
	}
	{
		Tensorflow__Serving__ClassificationResult *cr =
			az(ar, sizeof(*cr));

		n_cls = (c ? c : s)->shape[1];
		if (!cr)
			return -1;
		tensorflow__serving__classification_result__init(cr);
		if (!(cr->classifications = az(ar, (size_t)n_ex *
					       sizeof(*cr->classifications))))
			return -1;
		for (i = 0; i < n_ex; i++) {
			Tensorflow__Serving__Classifications *cl =
				az(ar, sizeof(*cl));

			if (!cl)
				return -1;
			tensorflow__serving__classifications__init(cl);
			if (!(cl->classes = az(ar, (size_t)n_cls *
					       sizeof(*cl->classes))))
				return -1;
			for (k = 0; k < n_cls; k++) {
				Tensorflow__Serving__Class *x =
					az(ar, sizeof(*x));
				char *label;

				if (!x)
					return -1;
				tensorflow__serving__class__init(x);
				if (c) {
					struct tfk_str t = tfk_tensor_str(c,
						i * n_cls + k);

					label = az(ar, t.len + 1);
					if (label)
						memcpy(label, t.ptr, t.len);
				} else {
					label = az(ar, 24);
					if (label)
						snprintf(label, 24, "%" PRId64,
							 k);
				}
				if (!label)
					return -1;
				x->label = label;
				x->score = s ? (float)tfk_tensor_get_f64(s,
					i * n_cls + k) : 0.0f;
				cl->classes[cl->n_classes++] = x;
			}
			cr->classifications[cr->n_classifications++] = cl;
		}
		*out = &cr->base;
	}
	return 0;
}

/*
 * Run signature sig of v (checked for method m: Classify or Regress) on
 * the examples of input: the result message, in ar, into *res.
 */
static grpc_status_code infer(struct worker *w, enum method m,
			      struct sv_version *v,
			      const struct tfk_sv_signature *sig,
			      const Tensorflow__Serving__Input *input,
			      struct arena *ar, ProtobufCMessage **res,
			      struct answer *a)
{
	const struct tfk_tensor **out = NULL, *x, *y;
	const char **keys = NULL;
	struct tfk_tensor ex = { 0 };
	struct tfk_sv_tensor want;
	struct tfk_runner *r = NULL;
	struct sv_outputs own_out = { NULL, 0 };
	struct tfk_err e;
	int i, own = 0, n_out;

	a->code = GRPC_STATUS_OK;
	if (examples_tensor(input, &ex, a))
		goto done;
	sv_metrics_examples(w->g->o.metrics, a->model,
			    (int)tfk_tensor_numel(&ex));
	if (!(r = sv_runner(v, sig, w->tid, &own, &e))) {
		fail_err(a, &e);
		goto done;
	}
	want = *tfk_runner_input(r, 0);
	want.rank = -1;
	if (tfk_sv_convert(&ex, &want, &e)) {
		fail_err(a, &e);
		goto done;
	}
	n_out = tfk_runner_n_outputs(r);
	out = tfk_calloc((size_t)n_out + 1, sizeof(*out));
	keys = tfk_calloc((size_t)n_out + 1, sizeof(*keys));
	if (!out || !keys) {
		fail(a, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
		goto done;
	}
	if (run(w->g, a, m, v, sig, r, &ex, out, &own_out))
		goto done;
	for (i = 0; i < n_out; i++)
		keys[i] = tfk_runner_output(r, i)->key;
	if (tfk_rj_result_outputs(m == M_CLASSIFY ? TFK_RJ_CLASSIFY :
				  TFK_RJ_REGRESS, n_out, keys, out,
				  ex.shape[0], &x, &y, &e)) {
		fail_err(a, &e);
		goto done;
	}
	if (result_msg(ar, m, x, y, ex.shape[0], res))
		fail(a, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
done:
	sv_outputs_release(&own_out);
	tfk_tensor_release(&ex);
	tfk_free(out);
	tfk_free(keys);
	if (own)
		tfk_runner_free(r);
	return a->code;
}

static grpc_status_code classify_regress(struct worker *w, enum method m,
					 const uint8_t *p, size_t n,
					 struct answer *a)
{
	Tensorflow__Serving__ClassificationRequest *cq = NULL;
	Tensorflow__Serving__RegressionRequest *rq = NULL;
	Tensorflow__Serving__ClassificationResponse cs =
		TENSORFLOW__SERVING__CLASSIFICATION_RESPONSE__INIT;
	Tensorflow__Serving__RegressionResponse rs =
		TENSORFLOW__SERVING__REGRESSION_RESPONSE__INIT;
	const Tensorflow__Serving__ModelSpec *ms;
	const struct tfk_sv_signature *sig;
	struct sv_model *mo;
	struct sv_version *v = NULL;
	struct arena ar = { 0 };
	ProtobufCMessage *res;
	struct tfk_err e;

	if (m == M_CLASSIFY)
		cq = tensorflow__serving__classification_request__unpack(
			NULL, n, p);
	else
		rq = tensorflow__serving__regression_request__unpack(NULL, n,
								     p);
	if (!cq && !rq)
		return fail(a, GRPC_STATUS_INVALID_ARGUMENT, "the request is "
			    "not a %sRequest (protobuf)", m == M_CLASSIFY ?
			    "Classification" : "Regression");
	ms = cq ? cq->model_spec : rq->model_spec;
	if (resolve(w->g, ms, a, &mo, &v))
		goto done;
	if (!(sig = signature(a, v, ms->signature_name)))
		goto done;
	if (tfk_rj_check_signature(sig, m == M_CLASSIFY ? TFK_RJ_CLASSIFY :
				   TFK_RJ_REGRESS, &e)) {
		fail_err(a, &e);
		goto done;
	}
	if (infer(w, m, v, sig, cq ? cq->input : rq->input, &ar, &res, a))
		goto done;
	if (m == M_CLASSIFY) {
		cs.result = (Tensorflow__Serving__ClassificationResult *)res;
		cs.model_spec = spec_out(&ar, v, sig->key);
	} else {
		rs.result = (Tensorflow__Serving__RegressionResult *)res;
		rs.model_spec = spec_out(&ar, v, sig->key);
	}
	if (ar.failed)
		fail(a, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
	else
		pack(a, m == M_CLASSIFY ? &cs.base : &rs.base);
done:
	arena_free(&ar);
	sv_release(v);
	if (cq)
		tensorflow__serving__classification_request__free_unpacked(
			cq, NULL);
	if (rq)
		tensorflow__serving__regression_request__free_unpacked(rq,
								       NULL);
	return a->code;
}

/*
 * MultiInference, as TF Serving's TensorFlowMultiInferenceRunner: every
 * task names the same model (the first task's version choice picks
 * the version), each a different signature, with method_name
 * tensorflow/serving/classify or .../regress, all signatures reading
 * the same input tensor; each task then runs Classify's or Regress's
 * path on the request's one Input, and the results come in task order.
 * A request that breaks a rule gets TF Serving's message before
 * anything runs.
 */
#define IR_CLASSIFICATION \
	TENSORFLOW__SERVING__INFERENCE_RESULT__RESULT_CLASSIFICATION_RESULT
#define IR_REGRESSION \
	TENSORFLOW__SERVING__INFERENCE_RESULT__RESULT_REGRESSION_RESULT

static grpc_status_code multi_inference(struct worker *w, const uint8_t *p,
					size_t n, struct answer *a)
{
	static const char classify[] = "tensorflow/serving/classify",
		regress[] = "tensorflow/serving/regress";
	Tensorflow__Serving__MultiInferenceRequest *rq;
	Tensorflow__Serving__MultiInferenceResponse rs =
		TENSORFLOW__SERVING__MULTI_INFERENCE_RESPONSE__INIT;
	const struct tfk_sv_signature **sigs = NULL;
	enum method *ms = NULL;
	struct sv_model *mo;
	struct sv_version *v = NULL;
	struct arena ar = { 0 };
	struct tfk_err e;
	size_t i, k;

	rq = tensorflow__serving__multi_inference_request__unpack(NULL, n, p);
	if (!rq)
		return fail(a, GRPC_STATUS_INVALID_ARGUMENT, "the request is "
			    "not a MultiInferenceRequest (protobuf)");
	if (!rq->n_tasks) {
		fail(a, GRPC_STATUS_INVALID_ARGUMENT, "Expected at least one "
		     "task");
		goto done;
	}
	for (i = 0; i < rq->n_tasks; i++) {
		const Tensorflow__Serving__ModelSpec *s =
			rq->tasks[i]->model_spec;

		if (!s || !s->name || !*s->name) {
			fail(a, GRPC_STATUS_INVALID_ARGUMENT, "Found ModelSpec "
			     "with an empty model name.");
			goto done;
		}
		if (strcmp(s->name, rq->tasks[0]->model_spec->name)) {
			fail(a, GRPC_STATUS_INVALID_ARGUMENT, "All ModelSpecs in "
			     "a MultiInferenceRequest must access the same "
			     "model name.");
			goto done;
		}
	}
	if (resolve(w->g, rq->tasks[0]->model_spec, a, &mo, &v))
		goto done;
	sigs = tfk_calloc(rq->n_tasks, sizeof(*sigs));
	ms = tfk_calloc(rq->n_tasks, sizeof(*ms));
	rs.results = az(&ar, rq->n_tasks * sizeof(*rs.results));
	if (!sigs || !ms || !rs.results) {
		fail(a, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
		goto done;
	}
	for (i = 0; i < rq->n_tasks; i++) {
		const char *name = rq->tasks[i]->model_spec->signature_name,
			*method = rq->tasks[i]->method_name;

		if (!(sigs[i] = tfk_servable_find(v->s, name && *name ? name :
						  NULL, &e))) {
			fail(a, GRPC_STATUS_INVALID_ARGUMENT, "Requested "
			     "signature not found in model graph: %s",
			     name && *name ? name : "serving_default");
			goto done;
		}
		for (k = 0; k < i; k++)
			if (sigs[k] == sigs[i]) {
				fail(a, GRPC_STATUS_INVALID_ARGUMENT, "Duplicate "
				     "evaluation of signature: %s",
				     sigs[i]->key);
				goto done;
			}
		if (!strcmp(method, classify)) {
			ms[i] = M_CLASSIFY;
		} else if (!strcmp(method, regress)) {
			ms[i] = M_REGRESS;
		} else {
			fail(a, GRPC_STATUS_UNIMPLEMENTED, "Unsupported "
			     "signature method_name: %s", method);
			goto done;
		}
		if (tfk_rj_check_signature(sigs[i], ms[i] == M_CLASSIFY ?
					   TFK_RJ_CLASSIFY : TFK_RJ_REGRESS,
					   &e)) {
			fail_err(a, &e);
			goto done;
		}
		if (sigs[i]->n_inputs < 1 || strcmp(sigs[i]->inputs[0].name,
						    sigs[0]->inputs[0].name)) {
			fail(a, GRPC_STATUS_INVALID_ARGUMENT, "Input tensor "
			     "must be the same for all Signatures.");
			goto done;
		}
	}
	for (i = 0; i < rq->n_tasks; i++) {
		Tensorflow__Serving__InferenceResult *ir = az(&ar, sizeof(*ir));
		ProtobufCMessage *res;

		if (!ir) {
			fail(a, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
			goto done;
		}
		if (infer(w, ms[i], v, sigs[i], rq->input, &ar, &res, a))
			goto done;
		tensorflow__serving__inference_result__init(ir);
		ir->model_spec = spec_out(&ar, v, sigs[i]->key);
		if (ms[i] == M_CLASSIFY) {
			ir->result_case = IR_CLASSIFICATION;
			ir->classification_result =
				(Tensorflow__Serving__ClassificationResult *)res;
		} else {
			ir->result_case = IR_REGRESSION;
			ir->regression_result =
				(Tensorflow__Serving__RegressionResult *)res;
		}
		rs.results[rs.n_results++] = ir;
	}
	if (ar.failed)
		fail(a, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
	else
		pack(a, &rs.base);
done:
	tfk_free(sigs);
	tfk_free(ms);
	arena_free(&ar);
	sv_release(v);
	tensorflow__serving__multi_inference_request__free_unpacked(rq, NULL);
	return a->code;
}

/* GetModelMetadata and GetModelStatus ------------------------------------- */

static Tensorflow__TensorInfo *tensor_info(struct arena *ar,
					   const struct tfk_sv_tensor *t)
{
	Tensorflow__TensorInfo *ti = az(ar, sizeof(*ti));
	Tensorflow__TensorShapeProto *sh = az(ar, sizeof(*sh));
	int k;

	if (!ti || !sh)
		return NULL;
	tensorflow__tensor_info__init(ti);
	tensorflow__tensor_shape_proto__init(sh);
	ti->encoding_case = TENSORFLOW__TENSOR_INFO__ENCODING_NAME;
	ti->name = (char *)t->name;
	ti->dtype = (Tensorflow__DataType)t->dtype;
	ti->tensor_shape = sh;
	if (t->rank < 0) {
		sh->unknown_rank = 1;
		return ti;
	}
	if (!(sh->dim = az(ar, (size_t)(t->rank + 1) * sizeof(*sh->dim))))
		return NULL;
	for (k = 0; k < t->rank; k++) {
		Tensorflow__TensorShapeProto__Dim *d = az(ar, sizeof(*d));

		if (!d)
			return NULL;
		tensorflow__tensor_shape_proto__dim__init(d);
		d->size = t->shape[k];
		sh->dim[sh->n_dim++] = d;
	}
	return ti;
}

static Tensorflow__SignatureDef *signature_def(struct arena *ar,
					       const struct tfk_sv_signature *s)
{
	Tensorflow__SignatureDef *sd = az(ar, sizeof(*sd));
	int k;

	if (!sd)
		return NULL;
	tensorflow__signature_def__init(sd);
	sd->method_name = (char *)s->method_name;
	sd->inputs = az(ar, (size_t)(s->n_inputs + 1) * sizeof(*sd->inputs));
	sd->outputs = az(ar, (size_t)(s->n_outputs + 1) *
			 sizeof(*sd->outputs));
	if (!sd->inputs || !sd->outputs)
		return NULL;
	for (k = 0; k < s->n_inputs; k++) {
		Tensorflow__SignatureDef__InputsEntry *e = az(ar, sizeof(*e));

		if (!e)
			return NULL;
		tensorflow__signature_def__inputs_entry__init(e);
		e->value = tensor_info(ar, &s->inputs[k]);
		e->key = (char *)s->inputs[k].key;
		sd->inputs[sd->n_inputs++] = e;
	}
	for (k = 0; k < s->n_outputs; k++) {
		Tensorflow__SignatureDef__OutputsEntry *e = az(ar, sizeof(*e));

		if (!e)
			return NULL;
		tensorflow__signature_def__outputs_entry__init(e);
		e->key = (char *)s->outputs[k].key;
		e->value = tensor_info(ar, &s->outputs[k]);
		sd->outputs[sd->n_outputs++] = e;
	}
	return ar->failed ? NULL : sd;
}

static grpc_status_code metadata(struct worker *w, const uint8_t *p, size_t n,
				 struct answer *a)
{
	Tensorflow__Serving__GetModelMetadataRequest *rq;
	Tensorflow__Serving__GetModelMetadataResponse rs =
		TENSORFLOW__SERVING__GET_MODEL_METADATA_RESPONSE__INIT;
	Tensorflow__Serving__GetModelMetadataResponse__MetadataEntry me =
		TENSORFLOW__SERVING__GET_MODEL_METADATA_RESPONSE__METADATA_ENTRY__INIT;
	Tensorflow__Serving__GetModelMetadataResponse__MetadataEntry *mep = &me;
	Tensorflow__Serving__SignatureDefMap map =
		TENSORFLOW__SERVING__SIGNATURE_DEF_MAP__INIT;
	Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
	struct sv_model *m;
	struct sv_version *v = NULL;
	struct arena ar = { 0 };
	int i, k;

	rq = tensorflow__serving__get_model_metadata_request__unpack(NULL, n,
								     p);
	if (!rq)
		return fail(a, GRPC_STATUS_INVALID_ARGUMENT, "the request is "
			    "not a GetModelMetadataRequest (protobuf)");
	if (resolve(w->g, rq->model_spec, a, &m, &v))
		goto done;
	if (!rq->n_metadata_field) {
		fail(a, GRPC_STATUS_INVALID_ARGUMENT, "GetModelMetadata "
		     "requires at least one metadata_field");
		goto done;
	}
	for (i = 0; i < (int)rq->n_metadata_field; i++)
		if (strcmp(rq->metadata_field[i], "signature_def")) {
			fail(a, GRPC_STATUS_INVALID_ARGUMENT, "Metadata field "
			     "%s is not supported", rq->metadata_field[i]);
			goto done;
		}
	k = tfk_servable_n_signatures(v->s);
	map.signature_def = az(&ar, (size_t)(k + 1) *
			       sizeof(*map.signature_def));
	for (i = 0; map.signature_def && i < k; i++) {
		const struct tfk_sv_signature *s =
			tfk_servable_signature(v->s, i);
		Tensorflow__Serving__SignatureDefMap__SignatureDefEntry *e =
			az(&ar, sizeof(*e));

		if (!e)
			break;
		tensorflow__serving__signature_def_map__signature_def_entry__init(e);
		e->key = (char *)s->key;
		if (!(e->value = signature_def(&ar, s)))
			break;
		map.signature_def[map.n_signature_def++] = e;
	}
	if (ar.failed || !(any.value.data = az(&ar,
			tensorflow__serving__signature_def_map__get_packed_size(
				&map)))) {
		fail(a, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
		goto done;
	}
	any.value.len = tensorflow__serving__signature_def_map__pack(
		&map, any.value.data);
	any.type_url = "type.googleapis.com/tensorflow.serving.SignatureDefMap";
	me.key = "signature_def";
	me.value = &any;
	rs.n_metadata = 1;
	rs.metadata = &mep;
	rs.model_spec = spec_out(&ar, v, NULL);
	if (ar.failed)
		fail(a, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
	else
		pack(a, &rs.base);
done:
	arena_free(&ar);
	sv_release(v);
	tensorflow__serving__get_model_metadata_request__free_unpacked(rq,
								       NULL);
	return a->code;
}

static grpc_status_code status(struct worker *w, const uint8_t *p, size_t n,
			       struct answer *a)
{
	Tensorflow__Serving__GetModelStatusRequest *rq;
	Tensorflow__Serving__GetModelStatusResponse rs =
		TENSORFLOW__SERVING__GET_MODEL_STATUS_RESPONSE__INIT;
	struct sv_status *st = NULL;
	struct sv_model *m;
	struct arena ar = { 0 };
	int64_t num = -1;
	int i, k = 0;

	rq = tensorflow__serving__get_model_status_request__unpack(NULL, n, p);
	if (!rq)
		return fail(a, GRPC_STATUS_INVALID_ARGUMENT, "the request is "
			    "not a GetModelStatusRequest (protobuf)");
	if (resolve(w->g, rq->model_spec, a, &m, NULL))
		goto done;
	if (rq->model_spec->version_choice_case ==
	    TENSORFLOW__SERVING__MODEL_SPEC__VERSION_CHOICE_VERSION &&
	    rq->model_spec->version)
		num = rq->model_spec->version->value;
	else if (rq->model_spec->version_choice_case ==
		 TENSORFLOW__SERVING__MODEL_SPEC__VERSION_CHOICE_VERSION_LABEL)
		sv_label(m, rq->model_spec->version_label,
			 strlen(rq->model_spec->version_label), &num);
	if ((k = sv_status_list(m, num, &st)) < 0) {
		fail(a, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
		goto done;
	}
	if (!k) {
		if (num >= 0)
			fail(a, GRPC_STATUS_NOT_FOUND, "Could not find version "
			     "%" PRId64 " of model %s", num, m->name);
		else
			fail(a, GRPC_STATUS_NOT_FOUND, "Could not find any "
			     "versions of model %s", m->name);
		goto done;
	}
	rs.model_version_status = az(&ar, (size_t)k *
				     sizeof(*rs.model_version_status));
	for (i = 0; rs.model_version_status && i < k; i++) {
		Tensorflow__Serving__ModelVersionStatus *vs =
			az(&ar, sizeof(*vs));
		Tensorflow__Serving__StatusProto *sp = az(&ar, sizeof(*sp));

		if (!vs || !sp)
			break;
		tensorflow__serving__model_version_status__init(vs);
		tensorflow__serving__status_proto__init(sp);
		vs->version = st[i].version;
		vs->state = st[i].available ?
		    TENSORFLOW__SERVING__MODEL_VERSION_STATUS__STATE__AVAILABLE :
		    TENSORFLOW__SERVING__MODEL_VERSION_STATUS__STATE__END;
		sp->error_code = st[i].code;
		sp->error_message = st[i].msg ? st[i].msg : "";
		vs->status = sp;
		rs.model_version_status[rs.n_model_version_status++] = vs;
	}
	if (ar.failed)
		fail(a, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
	else
		pack(a, &rs.base);
done:
	sv_status_free(st, k);
	arena_free(&ar);
	tensorflow__serving__get_model_status_request__free_unpacked(rq,
								     NULL);
	return a->code;
}

/*
 * HandleReloadConfigRequest: the config in the request replaces the one
 * served, as a SIGHUP with a changed config file does (models added,
 * changed, dropped), and the answer comes once the new config's
 * versions are loaded (or have failed: their status says so), as in TF
 * Serving. A config that is refused changes nothing.
 */
static grpc_status_code reload(struct worker *w, const uint8_t *p, size_t n,
			       struct answer *a)
{
	Tensorflow__Serving__ReloadConfigRequest *rq;
	Tensorflow__Serving__ReloadConfigResponse rs =
		TENSORFLOW__SERVING__RELOAD_CONFIG_RESPONSE__INIT;
	Tensorflow__Serving__StatusProto st =
		TENSORFLOW__SERVING__STATUS_PROTO__INIT;
	struct tfk_server_config c;
	struct tfk_err e;
	int rc;

	rq = tensorflow__serving__reload_config_request__unpack(NULL, n, p);
	if (!rq)
		return fail(a, GRPC_STATUS_INVALID_ARGUMENT, "the request is "
			    "not a ReloadConfigRequest (protobuf)");
	rc = tfk_server_config_from_proto(rq->config, &c, &e);
	tensorflow__serving__reload_config_request__free_unpacked(rq, NULL);
	if (rc)
		return fail(a, GRPC_STATUS_INVALID_ARGUMENT, "%s", e.msg);
	pthread_mutex_lock(&w->g->s->config_lock);
	rc = sv_configure(w->g->s, &c, &e);
	if (!rc)
		sv_poll(w->g->s, 0);
	pthread_mutex_unlock(&w->g->s->config_lock);
	tfk_server_config_free(&c);
	if (rc)
		return fail_err(a, &e);
	tfk_cli_warn("gRPC HandleReloadConfigRequest: config reloaded");
	rs.status = &st;
	return pack(a, &rs.base);
}

/* Calls ------------------------------------------------------------------ */

static void request(struct call *c)
{
	grpc_call_error e;

	grpc_metadata_array_init(&c->md);
	c->sending = 0;
	c->payload = NULL;
	if (c->m == M_OTHER) {
		grpc_call_details_init(&c->other);
		e = grpc_server_request_call(c->w->g->srv, &c->call, &c->other,
					     &c->md, c->w->cq, c->w->cq, c);
	} else {
		e = grpc_server_request_registered_call(
			c->w->g->srv, c->w->g->reg[c->m], &c->call,
			&c->deadline, &c->md, &c->payload, c->w->cq,
			c->w->cq, c);
	}
	if (e != GRPC_CALL_OK)
		tfk_cli_warn("gRPC: cannot wait for %s calls",
			     methods[c->m].api ? methods[c->m].api : "other");
}

static void answer_call(struct call *c)
{
	struct sv_grpc *g = c->w->g;
	struct answer a;
	grpc_byte_buffer_reader rd;
	grpc_slice in = grpc_empty_slice();
	grpc_op ops[4];
	double t0 = tfk_sv_now();
	int n_ops = 0;

	memset(&a, 0, sizeof(a));
	tfk_buf_init(&a.out);
	a.code = GRPC_STATUS_OK;
	if (c->m == M_OTHER) {
		int n = (int)GRPC_SLICE_LENGTH(c->other.method);
		const char *p =
			(const char *)GRPC_SLICE_START_PTR(c->other.method);

		/* refused by name: tfk-serve does not offer it */
		fail(&a, GRPC_STATUS_UNIMPLEMENTED, "Method not found: %.*s "
		     "(tfk-serve serves Predict, Classify, Regress, "
		     "MultiInference, GetModelMetadata, GetModelStatus and "
		     "HandleReloadConfigRequest)", n, p);
	} else if (atomic_load(&g->stopping)) {
		fail(&a, GRPC_STATUS_UNAVAILABLE, "the server is stopping");
	} else if (!c->payload || !grpc_byte_buffer_reader_init(&rd,
								 c->payload)) {
		fail(&a, GRPC_STATUS_INVALID_ARGUMENT, "no request message");
	} else {
		const uint8_t *p;
		size_t n;

		in = grpc_byte_buffer_reader_readall(&rd);
		grpc_byte_buffer_reader_destroy(&rd);
		p = GRPC_SLICE_START_PTR(in);
		n = GRPC_SLICE_LENGTH(in);
		switch (c->m) {
		case M_PREDICT: predict(c->w, p, n, &a); break;
		case M_CLASSIFY: case M_REGRESS:
			classify_regress(c->w, c->m, p, n, &a);
			break;
		case M_MULTI: multi_inference(c->w, p, n, &a); break;
		case M_METADATA: metadata(c->w, p, n, &a); break;
		case M_RELOAD: reload(c->w, p, n, &a); break;
		default: status(c->w, p, n, &a); break;
		}
	}
	grpc_slice_unref(in);
	if (a.model)
		sv_metrics_request(g->o.metrics, a.model, methods[c->m].api,
				   a.code == GRPC_STATUS_OK ? 200 :
				   a.code == GRPC_STATUS_NOT_FOUND ? 404 :
				   a.code == GRPC_STATUS_INVALID_ARGUMENT ?
				   400 : a.code == GRPC_STATUS_UNAVAILABLE ?
				   503 : 500, (tfk_sv_now() - t0) * 1e6);
	memset(ops, 0, sizeof(ops));
	ops[n_ops++].op = GRPC_OP_SEND_INITIAL_METADATA;
	if (a.code == GRPC_STATUS_OK) {
		grpc_slice s = grpc_slice_from_copied_buffer(
			(const char *)a.out.data, a.out.len);

		c->reply = grpc_raw_byte_buffer_create(&s, 1);
		grpc_slice_unref(s);
		ops[n_ops].op = GRPC_OP_SEND_MESSAGE;
		ops[n_ops++].data.send_message.send_message = c->reply;
	}
	c->details = grpc_slice_from_copied_string(a.code == GRPC_STATUS_OK ?
						   "" : a.msg);
	ops[n_ops].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
	ops[n_ops].data.send_status_from_server.status = a.code;
	ops[n_ops++].data.send_status_from_server.status_details =
		&c->details;
	ops[n_ops].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
	ops[n_ops++].data.recv_close_on_server.cancelled = &c->cancelled;
	tfk_buf_release(&a.out);
	c->sending = 1;
	if (grpc_call_start_batch(c->call, ops, (size_t)n_ops, c, NULL) !=
	    GRPC_CALL_OK)
		tfk_cli_warn("gRPC: cannot answer a %s call",
			     methods[c->m].api ? methods[c->m].api : "other");
}

/* The call's answer went out (or failed): release it. */
static void finish(struct call *c)
{
	if (c->reply)
		grpc_byte_buffer_destroy(c->reply);
	if (c->payload)
		grpc_byte_buffer_destroy(c->payload);
	grpc_slice_unref(c->details);
	grpc_metadata_array_destroy(&c->md);
	if (c->m == M_OTHER)
		grpc_call_details_destroy(&c->other);
	grpc_call_unref(c->call);
	c->reply = c->payload = NULL;
	c->call = NULL;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	int m;

	for (m = 0; m < N_METHODS; m++)
		request(&w->calls[m]);
	for (;;) {
		grpc_event ev = grpc_completion_queue_next(w->cq,
			gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
		struct call *c = ev.tag;

		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			break;
		if (ev.type != GRPC_OP_COMPLETE || !c)
			continue;
		if (c->sending) {
			finish(c);
			if (!atomic_load(&w->g->stopping))
				request(c);
		} else if (ev.success) {
			answer_call(c);
		} else {	/* the server shuts down: no more calls */
			grpc_metadata_array_destroy(&c->md);
			if (c->m == M_OTHER)
				grpc_call_details_destroy(&c->other);
		}
	}
	return NULL;
}

/* Start and stop ---------------------------------------------------------- */

static void grpc_log_quiet(gpr_log_func_args *args)
{
	if (args->severity == GPR_LOG_SEVERITY_ERROR)
		tfk_cli_warn("gRPC: %s", args->message);
}

/* A connection the door let in: gRPC's from now on. */
static void hand(void *arg, int fd)
{
	struct sv_grpc *g = arg;

	grpc_server_add_channel_from_fd(g->srv, fd, g->cred);
}

/*
 * The server's channel arguments: the message size limit, an idle
 * connection closed after 5 minutes (grpc.max_connection_idle_ms), then
 * --grpc_channel_arguments "k=v,k=v" (an integer value as an integer,
 * else a string, as TF Serving reads them), which override those. Into
 * a[0..max), strings in buf; how many.
 */
static int channel_args(const struct sv_grpc_opts *o, grpc_arg *a, int max,
			char *buf)
{
	char *p, *save = NULL, *kv;
	int n = 0, i;

	a[n].type = GRPC_ARG_INTEGER;
	a[n].key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
	a[n++].value.integer = o->max_body > INT_MAX ? INT_MAX :
		(int)o->max_body;
	a[n].type = GRPC_ARG_INTEGER;
	a[n].key = GRPC_ARG_MAX_CONNECTION_IDLE_MS;
	a[n++].value.integer = 300000;
	if (!buf)
		return n;
	for (p = buf; (kv = strtok_r(p, ",", &save)); p = NULL) {
		char *v = strchr(kv, '='), *end;
		long x;

		if (!v)
			continue;	/* checked by cmd/serve.c */
		*v++ = 0;
		for (i = 0; i < n && strcmp(a[i].key, kv); i++)
			;
		if (i == max)
			break;
		if (i == n)
			n++;
		a[i].key = kv;
		errno = 0;
		x = strtol(v, &end, 10);
		if (*v && !*end && !errno && x >= INT_MIN && x <= INT_MAX) {
			a[i].type = GRPC_ARG_INTEGER;
			a[i].value.integer = (int)x;
		} else {
			a[i].type = GRPC_ARG_STRING;
			a[i].value.string = v;
		}
	}
	return n;
}

struct sv_grpc *sv_grpc_start(struct sv_server *s,
			      const struct sv_grpc_opts *o, long *port)
{
	struct sv_grpc *g = tfk_calloc(1, sizeof(*g));
	struct sv_accept_opts ao;
	grpc_arg arg[64];
	grpc_channel_args args;
	char *buf = NULL;
	int i, m;

	if (!g || (o->channel_args && !(buf = tfk_strdup(o->channel_args)))) {
		tfk_cli_warn("out of memory");
		tfk_free(g);
		return NULL;
	}
	g->s = s;
	g->o = *o;
	gpr_set_log_function(grpc_log_quiet);
	grpc_init();
	args.num_args = (size_t)channel_args(o, arg, 64, buf);
	args.args = arg;
	g->srv = grpc_server_create(&args, NULL);
	tfk_free(buf);
	g->cred = grpc_insecure_server_credentials_create();
	g->shutdown_cq = grpc_completion_queue_create_for_next(NULL);
	grpc_server_register_completion_queue(g->srv, g->shutdown_cq, NULL);
	for (m = 0; m < M_OTHER; m++)
		g->reg[m] = grpc_server_register_method(
			g->srv, methods[m].path, NULL,
			GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER, 0);
	g->n_workers = o->threads;
	g->w = tfk_calloc((size_t)g->n_workers, sizeof(*g->w));
	if (!g->w) {
		tfk_cli_warn("out of memory");
		goto fail;
	}
	for (i = 0; i < g->n_workers; i++) {
		g->w[i].g = g;
		g->w[i].tid = o->first_tid + i;
		g->w[i].cq = grpc_completion_queue_create_for_next(NULL);
		grpc_server_register_completion_queue(g->srv, g->w[i].cq,
						      NULL);
		for (m = 0; m < N_METHODS; m++) {
			g->w[i].calls[m].w = &g->w[i];
			g->w[i].calls[m].m = (enum method)m;
		}
	}
	grpc_server_start(g->srv);
	for (i = 0; i < g->n_workers; i++)
		pthread_create(&g->w[i].th, NULL, work, &g->w[i]);
	ao.host = o->host;
	ao.port = o->port;
	ao.max_conns = o->max_conns;
	ao.max_per_ip = o->max_per_ip;
	ao.preface_ms = o->header_ms;
	if (!(g->door = sv_acceptor_start(&ao, hand, g, port))) {
		tfk_cli_warn("gRPC port %ld: cannot listen there: %s",
			     o->port, strerror(errno));
		sv_grpc_stop(g, 0);
		return NULL;
	}
	return g;
fail:
	for (i = 0; g->w && i < g->n_workers; i++)
		grpc_completion_queue_destroy(g->w[i].cq);
	grpc_server_destroy(g->srv);
	grpc_server_credentials_release(g->cred);
	grpc_completion_queue_destroy(g->shutdown_cq);
	grpc_shutdown();
	tfk_free(g->w);
	tfk_free(g);
	return NULL;
}

void sv_grpc_stop(struct sv_grpc *g, long wait_ms)
{
	grpc_event ev;
	int i;

	if (g->door)
		sv_acceptor_stop(g->door);
	atomic_store(&g->stopping, 1);
	grpc_server_shutdown_and_notify(g->srv, g->shutdown_cq, g);
	ev = grpc_completion_queue_next(g->shutdown_cq,
		gpr_time_add(gpr_now(GPR_CLOCK_REALTIME),
			     gpr_time_from_millis(wait_ms, GPR_TIMESPAN)),
		NULL);
	if (ev.type == GRPC_QUEUE_TIMEOUT) {
		grpc_server_cancel_all_calls(g->srv);
		grpc_completion_queue_next(g->shutdown_cq,
					   gpr_inf_future(GPR_CLOCK_REALTIME),
					   NULL);
	}
	for (i = 0; i < g->n_workers; i++)
		grpc_completion_queue_shutdown(g->w[i].cq);
	for (i = 0; i < g->n_workers; i++) {
		pthread_join(g->w[i].th, NULL);
		grpc_completion_queue_destroy(g->w[i].cq);
	}
	grpc_server_destroy(g->srv);
	grpc_completion_queue_shutdown(g->shutdown_cq);
	while (grpc_completion_queue_next(g->shutdown_cq,
					  gpr_inf_future(GPR_CLOCK_REALTIME),
					  NULL).type != GRPC_QUEUE_SHUTDOWN)
		;
	grpc_completion_queue_destroy(g->shutdown_cq);
	grpc_server_credentials_release(g->cred);
	grpc_shutdown();
	tfk_free(g->w);
	tfk_free(g);
}
