/*
 * bench.c - `tfk-lite bench`: how fast a .tflite model loads and
 * runs in-process, the loop an app on a device pays per inference.
 * It reads like `tfk-model bench` (cmd/model/bench.c): the same
 * options where they mean the same, the same text lines and JSON keys.
 *
 * Load is timed in two parts: parse (the file read and verified whole:
 * tfk_servable_open) and plan (the runner made and one first run: for a
 * float model the subgraph built as a tfk_graph for the fed shapes, an
 * executor planned; for an int8 one lib/model/tflint8.c's interpreter,
 * whose first run also packs the weights).
 * load_ms is their sum. TFLite's own split is the same: FlatBuffer
 * verification, then AllocateTensors (Prepare), then Invoke.
 *
 * Inputs are made once, before the clock, and fed to every run: by
 * default random values from a seeded splitmix64 (floats uniform in
 * [0, 1), integers 0 or 1, as tfk-model bench), --zeros for zeros; in
 * the input tensor's shape with dimension 0 set to --batch when the
 * shape_signature says -1 there or, without a shape_signature, the
 * shape says 1 (TFLite's ResizeInputTensor on the batch); other -1
 * dimensions take the shape's value, which a .tflite always has. An
 * INT8 input (an int8 model with int8 I/O) gets int8 values directly;
 * a float input of an int8 model is quantized by its QUANTIZE op as
 * part of each run, as in an app.
 *
 * Each run is timed alone (clock_gettime around it); min, median, p90,
 * p99 (nearest rank) and mean in microseconds, over at most 2^20 kept
 * runs spread evenly over the loop: model/servable.h's tfk_runner_bench,
 * as `tfk-model bench`. Throughput: runs and examples
 * per second of the timed loop's wall time. --warmup runs come first
 * and are not counted.
 *
 * --threads: the float kernels' threads (the executor's), or the int8
 * FC/CONV_2D kernels'. OpenBLAS stays on one thread as in `run`.
 */
#include "sub.h"

#include "../bench-loop.h"

#include "format/tflite.h"
#include "kernels/cpu.h"
#include "model/given.h"
#include "model/servable.h"
#include "util/alloc.h"
#include "util/cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *signature_key;
static int zeros;

static const struct tfk_opt bench_opts[] = {
	TFK_OPT_STR(0, "signature", &signature_key, "KEY", "the signature "
		    "to run (default: the model's only signature)"),
	TFK_OPT_LONG('b', "batch", &batch, "N", "examples per run: "
		     "replaces an input's first dimension of -1 (or 1)"),
	BENCH_LOOP_OPTS,
	TFK_OPT_FLAG(0, "zeros", &zeros, "feed zeros instead of random "
		     "values"),
	TFK_OPT_FLAG(0, "json", &json, "print one JSON object"),
	TFK_OPT_END
};

static const struct tfk_cmd bench_cmd = {
	"tfk-lite",
	"bench [--signature KEY] [--batch N] [--iterations N | --seconds S] "
	"[--warmup N] [--threads N] [--seed N] [--zeros] [--json] "
	"MODEL.tflite",
	"time loading a .tflite model and running it in a loop",
	"tfk-lite bench model.tflite --batch 1 --seconds 2 --json",
};

struct result {
	double parse_ms, plan_ms;
	struct tfk_bench_result b;
	double examples_per_s;
	int64_t examples;	/* per run */
};

/* One input of the subgraph: its name for the report and its value. */
struct input {
	const char *key;
	struct tfk_tensor value;
};

/*
 * The value of input t (a signature input over tensor t->tensor of s):
 * shape with the batch (see the top comment), random or zero values of
 * the tensor's type (INT8 of an int8 model: given to tflint8.c as int32
 * quantized values; UINT8 of a uint8 model as uint8 ones).
 */
static int make_input(const struct tfk_tfl_subgraph *s,
		      const struct tfk_sv_tensor *t, struct input *in,
		      int is_int8, uint64_t *rng, struct tfk_err *err)
{
	const struct tfk_tfl_tensor *x = &s->tensors[t->tensor];
	enum tfk_dtype dt = tfk_tfl_dtype(x->type);
	int64_t shape[TFK_MAX_RANK];
	int d, rc;

	in->key = t->key;
	if (is_int8 && x->type == TFK_TFL_INT8)
		dt = TFK_DT_INT32;
	if (dt != TFK_DT_FLOAT && dt != TFK_DT_INT32 && dt != TFK_DT_INT64 &&
	    dt != TFK_DT_BOOL && !(is_int8 && dt == TFK_DT_UINT8))
		return tfk_errf(err, TFK_EINVAL, "input '%s' is %s: bench "
				"makes float32, int32, int64, bool and "
				"(quantized models) int8 and uint8 inputs",
				in->key,
				tfk_tfl_type_name(x->type));
	for (d = 0; d < x->rank; d++)
		shape[d] = x->shape[d];
	if (x->rank && (x->has_shape_signature ? x->shape_signature[0] < 0 :
			x->shape[0] == 1))
		shape[0] = batch;
	if ((rc = tfk_tensor_init(&in->value, dt, x->rank, shape, err)))
		return rc;
	return zeros ? 0 : tfk_given_random(&in->value, rng, err);
}

static int report_json(const char *path, const char *sig, int is_int8,
		       const struct result *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "model", json_string(path));
	json_object_set_new(o, "signature", sig ? json_string(sig) :
			    json_null());
	json_object_set_new(o, "kind", json_string(is_int8 ? "int8" :
						   "float"));
	json_object_set_new(o, "batch", json_integer(r->examples));
	bench_json_loop(o, &r->b, r->parse_ms + r->plan_ms);
	json_object_set_new(o, "parse_ms", json_real(r->parse_ms));
	json_object_set_new(o, "plan_ms", json_real(r->plan_ms));
	bench_json_latency(o, &r->b);
	json_object_set_new(o, "inferences_per_s",
			    json_real(r->b.runs_per_s));
	json_object_set_new(o, "examples_per_s",
			    json_real(r->examples_per_s));
	return bench_json_print(o);
}

static void report_text(const char *path, const char *sig, int sg,
			int is_int8, const struct result *r,
			const struct input *ins, int n_in)
{
	char s[128];
	int j;

	printf("model: %s (%s%s, subgraph %d, %s)\n", path,
	       sig ? "signature " : "no signature", sig ? sig : "", sg,
	       is_int8 ? "int8" : "float");
	for (j = 0; j < n_in; j++)
		printf("input %s: %s %s, %s\n", ins[j].key,
		       tfk_dtype_name(ins[j].value.dtype == TFK_DT_INT32 &&
				      is_int8 ? TFK_DT_INT8 :
				      ins[j].value.dtype),
		       tfk_shape_str(ins[j].value.rank, ins[j].value.shape, s,
				     sizeof(s)), zeros ? "zeros" : "random");
	printf("load: %.3f ms (parse + verify %.3f, plan + first run %.3f)\n",
	       r->parse_ms + r->plan_ms, r->parse_ms, r->plan_ms);
	bench_text_loop(&r->b, r->examples);
	printf("throughput: %.1f inferences/s, %.1f examples/s\n",
	       r->b.runs_per_s, r->examples_per_s);
}

/* The signature to run; exits 2 when the model has several and none
 * was chosen. NULL with err set for an unknown --signature. */
static const struct tfk_sv_signature *pick_signature(
	const struct tfk_servable *sv, const char *path, struct tfk_err *err)
{
	const struct tfk_tflite *m = tfk_servable_tflite(sv);
	char list[512];
	size_t kk = 0;
	int i;

	list[0] = 0;
	for (i = 0; i < m->n_signatures && kk < sizeof(list); i++)
		kk += (size_t)snprintf(list + kk, sizeof(list) - kk, "%s'%s'",
				       i ? ", " : "", m->signatures[i].key);
	if (signature_key) {
		for (i = 0; i < m->n_signatures; i++)
			if (!strcmp(m->signatures[i].key, signature_key))
				return tfk_servable_signature(sv, i);
		tfk_errf(err, TFK_EINVAL, "%s: no signature '%s' (signatures: "
			 "%s)", path, signature_key, m->n_signatures ? list :
			 "none");
		return NULL;
	}
	if (m->n_signatures > 1)
		tfk_cli_usage_error("%s has %d signatures (%s): choose one "
				    "with --signature", path, m->n_signatures,
				    list);
	return tfk_servable_signature(sv, 0);
}

static int lite_bench_main(int argc, char **argv)
{
	struct tfk_servable_opts so = { NULL, TFK_SERVABLE_TFLITE };
	struct tfk_runner_opts ro = { 0 };
	struct tfk_bench_opts bo;
	struct tfk_servable *sv = NULL;
	const struct tfk_sv_signature *sig;
	const struct tfk_tfl_subgraph *s;
	struct tfk_runner *R = NULL;
	struct input *ins = NULL;
	struct tfk_tensor *vals = NULL;
	const char **keys = NULL;
	const char *path, *sig_name;
	double t0;
	struct result r;
	struct tfk_err err;
	uint64_t rng;
	int rc = 0, n, i, j, sg, is_int8, n_in = 0;

	tfk_err_clear(&err);
	memset(&r, 0, sizeof(r));
	n = tfk_cli_parse(argc, argv, &bench_cmd, bench_opts);
	if (n != 1)
		tfk_cli_usage_error(n ? "one model at a time" :
				    "bench needs a MODEL.tflite");
	bench_check(&bo);
	if (zeros && seed)
		tfk_cli_usage_error("--seed is for random inputs, not "
				    "--zeros");
	rng = (uint64_t)seed;
	ro.threads = (int)threads;
	ro.seed = (uint64_t)seed;
	if (prof_open(&err))
		return tfk_cli_fail(&err);

	t0 = tfk_sv_now();
	if (tfk_servable_open(&sv, argv[0], &so, &err)) {
		prof_abandon();
		return tfk_cli_fail(&err);
	}
	lite_load_warnings(tfk_servable_path(sv), tfk_servable_tflite(sv));
	r.parse_ms = (tfk_sv_now() - t0) * 1e3;
	path = tfk_servable_path(sv);
	if (!(sig = pick_signature(sv, path, &err))) {
		rc = tfk_cli_fail(&err);
		goto out;
	}
	sig_name = tfk_servable_tflite(sv)->n_signatures ? sig->key : NULL;
	sg = tfk_servable_subgraph(sv, sig);
	s = &tfk_servable_tflite(sv)->subgraphs[sg];
	is_int8 = tfk_servable_is_int8(sv, sig);
	n_in = s->n_inputs;
	ins = tfk_calloc((size_t)n_in + 1, sizeof(*ins));
	vals = tfk_calloc((size_t)n_in + 1, sizeof(*vals));
	keys = tfk_calloc((size_t)n_in + 1, sizeof(*keys));
	if (!ins || !vals || !keys) {
		tfk_errf(&err, TFK_ENOMEM, "out of memory");
		rc = tfk_cli_fail(&err);
		goto out;
	}
	/* inputs in subgraph order, named by their signature keys */
	for (j = 0; j < n_in; j++) {
		const struct tfk_sv_tensor *t = NULL;

		for (i = 0; i < sig->n_inputs; i++)
			if (sig->inputs[i].tensor == s->inputs[j])
				t = &sig->inputs[i];
		if (!t) {
			tfk_errf(&err, TFK_EINVAL, "%s: input tensor %d has no "
				 "signature key", path, s->inputs[j]);
			rc = tfk_cli_fail(&err);
			goto out;
		}
		if (make_input(s, t, &ins[j], is_int8, &rng, &err)) {
			tfk_err_prefix(&err, "%s", path);
			rc = tfk_cli_fail(&err);
			goto out;
		}
		keys[j] = t->key;
		vals[j] = ins[j].value;
	}
	/* the examples of a run: the first input's first dimension */
	r.examples = n_in && vals[0].rank > 0 ? vals[0].shape[0] : 1;

	t0 = tfk_sv_now();
	if (tfk_runner_new(&R, sv, sig, keys, n_in, &ro, &err)) {
		rc = tfk_cli_fail(&err);
		goto out;
	}
	if (tfk_runner_run(R, vals, NULL, &err)) {
		tfk_err_prefix(&err, "%s", path);
		rc = tfk_cli_fail(&err);
		goto out;
	}
	r.plan_ms = (tfk_sv_now() - t0) * 1e3;
	if (tfk_runner_bench(R, vals, &bo, &r.b, &err)) {
		tfk_err_prefix(&err, "%s", path);
		rc = tfk_cli_fail(&err);
		goto out;
	}
	r.examples_per_s = r.b.runs_per_s * r.examples;
	if (prof_close(json, &err)) {
		rc = tfk_cli_fail(&err);
		goto out;
	}
	if (json)
		rc = report_json(path, sig_name, is_int8, &r);
	else
		report_text(path, sig_name, sg, is_int8, &r, ins, n_in);
out:
	if (fflush(stdout) && !rc) {
		tfk_cli_warn("stdout: write error");
		rc = 1;
	}
	if (rc)
		prof_abandon();
	tfk_runner_free(R);
	for (j = 0; ins && j < n_in; j++)
		tfk_tensor_release(&ins[j].value);
	tfk_free(ins);
	tfk_free(vals);
	tfk_free(keys);
	tfk_servable_close(sv);
	return rc;
}

const struct tfk_subcmd lite_bench_sub = {
	"bench", "time loading a .tflite model and running it in a "
	"loop", lite_bench_main
};
