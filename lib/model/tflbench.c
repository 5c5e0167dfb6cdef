/*
 * tflbench.c - `tfk-lite bench`: how fast a .tflite model loads and
 * runs in-process, the loop an app on a device pays per inference.
 * It reads like `tfk-model bench` (lib/model/smbench.c): the same
 * options where they mean the same, the same text lines and JSON keys.
 *
 * Load is timed in two parts: parse (the file read and verified whole,
 * tfk_tflite_load_file) and plan (the interpreter prepared and one
 * first run: for a float model the subgraph built as a tfk_graph for
 * the fed shapes, an executor planned; for an int8 one lib/model/
 * tflint8.c's interpreter, whose first run also packs the weights).
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
 * runs spread evenly over the loop (smbench.c's scheme, repeated here
 * rather than shared: a dozen lines). Throughput: runs and examples
 * per second of the timed loop's wall time. --warmup runs come first
 * and are not counted.
 *
 * --threads: the float kernels' threads (the executor's), or the int8
 * FC/CONV_2D kernels'. OpenBLAS stays on one thread as in `run`.
 */
#include "model/lite.h"

#include "graph/exec.h"
#include "graph/graph.h"
#include "kernels/cpu.h"
#include "model/mains.h"
#include "util/alloc.h"
#include "util/cli.h"
#include "util/latency.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *signature_key;
static long batch = 1, iterations, warmup = 20, threads = 1, seed;
static double seconds = 1;
static int json, zeros, seconds_given;

/* --seconds S: a number in (0, 3600], remembered as given so that
 * --iterations with it is a usage error. */
static int parse_seconds(const char *arg, void *value)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || !(v > 0 && v <= 3600))
		return -1;
	*(double *)value = v;
	seconds_given = 1;
	return 0;
}

static const struct tfk_opt bench_opts[] = {
	TFK_OPT_STR(0, "signature", &signature_key, "KEY", "the signature "
		    "to run (default: the model's only signature)"),
	TFK_OPT_LONG('b', "batch", &batch, "N", "examples per run: "
		     "replaces an input's first dimension of -1 (or 1)"),
	TFK_OPT_LONG('n', "iterations", &iterations, "N", "timed runs "
		     "(0: as many as --seconds allows)"),
	TFK_OPT_CALL('s', "seconds", &seconds, "S", "time the loop for "
		     "about S seconds (default 1; 0 < S <= 3600)",
		     parse_seconds),
	TFK_OPT_LONG(0, "warmup", &warmup, "N", "untimed runs first"),
	TFK_OPT_LONG('j', "threads", &threads, "N", "kernel threads "
		     "(0: all CPUs)"),
	TFK_OPT_LONG(0, "seed", &seed, "N", "seed of the random inputs"),
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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);	/* Vigna's constants */

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct result {
	double parse_ms, plan_ms;
	long runs;
	struct tfk_latency_stats lat;
	double wall;
	double runs_per_s, examples_per_s;
	int64_t examples;	/* per run */
};

/* One input of the subgraph: its name for the report and its value. */
struct input {
	const char *key;
	int tensor;
	struct tfk_tensor value;
};

/* The model's interpreter, float or int8. */
struct runner {
	int is_int8;
	struct tfk_graph *g;
	struct tfk_exec *x;
	struct tfk_tfl_int8 *q;
	struct tfk_tensor *feeds;	/* borrowed values, subgraph order */
	int n_feeds;
	const struct tfk_tensor **got;
};

static int run_once(struct runner *r, struct tfk_err *err)
{
	if (r->is_int8)
		return tfk_tflite_int8_run(r->q, r->feeds, 0, NULL, NULL, err);
	return tfk_exec_run(r->x, r->feeds, 0, r->got, err);
}

/* The interpreter for subgraph sg, fetching the n_out tensors out[]. */
static int prepare(struct runner *r, const struct tfk_tflite *m, int sg,
		   const int *out, int n_out, struct tfk_err *err)
{
	const struct tfk_tfl_subgraph *s = &m->subgraphs[sg];
	struct tfk_exec_opts eo = { NULL, 0, 1 };
	struct tfk_tdesc *desc = NULL;
	const char **fn = NULL, **on = NULL;
	char (*names)[16] = NULL;
	int k, rc;

	if (r->is_int8) {
		if ((rc = tfk_tflite_int8_new(&r->q, m, sg, err)))
			return rc;
		tfk_tflite_int8_threads(r->q, (int)threads);
		return run_once(r, err);
	}
	desc = tfk_calloc((size_t)s->n_inputs + 1, sizeof(*desc));
	fn = tfk_calloc((size_t)s->n_inputs + 1, sizeof(*fn));
	on = tfk_calloc((size_t)n_out + 1, sizeof(*on));
	names = tfk_calloc((size_t)(s->n_inputs + n_out) + 1, sizeof(*names));
	r->got = tfk_calloc((size_t)n_out + 1, sizeof(*r->got));
	if (!desc || !fn || !on || !names || !r->got) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto out;
	}
	for (k = 0; k < s->n_inputs; k++) {
		tfk_tensor_desc(&r->feeds[k], &desc[k]);
		snprintf(names[k], sizeof(names[k]), "t%d", s->inputs[k]);
		fn[k] = names[k];
	}
	for (k = 0; k < n_out; k++) {
		snprintf(names[s->n_inputs + k], sizeof(names[0]), "t%d",
			 out[k]);
		on[k] = names[s->n_inputs + k];
	}
	eo.threads = (int)threads;
	eo.seed = (uint64_t)seed;
	if (!(rc = tfk_tflite_graph(m, sg, desc, &r->g, err)) &&
	    !(rc = tfk_exec_new(&r->x, r->g, fn, s->n_inputs, on, n_out,
				&eo, err)))
		rc = run_once(r, err);
out:
	tfk_free(desc);
	tfk_free(fn);
	tfk_free(on);
	tfk_free(names);
	return rc;
}

static void runner_release(struct runner *r)
{
	tfk_exec_free(r->x);
	tfk_graph_free(r->g);
	tfk_tflite_int8_free(r->q);
	tfk_free(r->got);
}

/*
 * The value of input in (tensor t of s): shape with the batch (see the
 * top comment), random or zero values of the tensor's type (INT8 of an
 * int8 model: given to tflint8.c as int32 quantized values).
 */
static int make_input(const struct tfk_tfl_subgraph *s, struct input *in,
		      int is_int8, uint64_t *rng, struct tfk_err *err)
{
	const struct tfk_tfl_tensor *x = &s->tensors[in->tensor];
	enum tfk_dtype dt = tfk_tfl_dtype(x->type);
	int64_t shape[TFK_MAX_RANK], n, i;
	int d, rc;

	if (is_int8 && x->type == TFK_TFL_INT8)
		dt = TFK_DT_INT32;
	if (dt != TFK_DT_FLOAT && dt != TFK_DT_INT32 && dt != TFK_DT_INT64 &&
	    dt != TFK_DT_BOOL)
		return tfk_errf(err, TFK_EINVAL, "input '%s' is %s: bench "
				"makes float32, int32, int64, bool and (int8 "
				"models) int8 inputs", in->key,
				tfk_tfl_type_name(x->type));
	for (d = 0; d < x->rank; d++)
		shape[d] = x->shape[d];
	if (x->rank && (x->has_shape_signature ? x->shape_signature[0] < 0 :
			x->shape[0] == 1))
		shape[0] = batch;
	if ((rc = tfk_tensor_init(&in->value, dt, x->rank, shape, err)))
		return rc;
	n = tfk_tensor_numel(&in->value);
	for (i = 0; i < n && !zeros; i++) {
		uint64_t v = splitmix64(rng);
		double u = (double)(v >> 11) * (1.0 / 9007199254740992.0);

		switch (dt) {
		case TFK_DT_FLOAT: ((float *)in->value.data)[i] = (float)u;
			break;
		case TFK_DT_INT32: ((int32_t *)in->value.data)[i] = v & 1;
			break;
		case TFK_DT_INT64: ((int64_t *)in->value.data)[i] = v & 1;
			break;
		default: ((uint8_t *)in->value.data)[i] = v & 1; break;
		}
	}
	return 0;
}

static int report_json(const char *path, const char *sig, int is_int8,
		       const struct result *r)
{
	json_t *o = json_object();
	char *text;

	json_object_set_new(o, "model", json_string(path));
	json_object_set_new(o, "signature", sig ? json_string(sig) :
			    json_null());
	json_object_set_new(o, "kind", json_string(is_int8 ? "int8" :
						   "float"));
	json_object_set_new(o, "batch", json_integer(r->examples));
	json_object_set_new(o, "threads", json_integer(threads));
	json_object_set_new(o, "warmup", json_integer(warmup));
	json_object_set_new(o, "iterations", json_integer(r->runs));
	json_object_set_new(o, "load_ms", json_real(r->parse_ms +
						    r->plan_ms));
	json_object_set_new(o, "parse_ms", json_real(r->parse_ms));
	json_object_set_new(o, "plan_ms", json_real(r->plan_ms));
	json_object_set_new(o, "min_us", json_real(r->lat.min));
	json_object_set_new(o, "median_us", json_real(r->lat.median));
	json_object_set_new(o, "p90_us", json_real(r->lat.p90));
	json_object_set_new(o, "p99_us", json_real(r->lat.p99));
	json_object_set_new(o, "mean_us", json_real(r->lat.mean));
	json_object_set_new(o, "inferences_per_s",
			    json_real(r->runs_per_s));
	json_object_set_new(o, "examples_per_s",
			    json_real(r->examples_per_s));
	text = json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT |
			  JSON_REAL_PRECISION(6));
	json_decref(o);
	if (!text) {
		tfk_cli_warn("out of memory");
		return 1;
	}
	printf("%s\n", text);
	free(text);
	return 0;
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
	printf("runs: %ld timed after %ld warm-up, %lld example%s per run, "
	       "%ld thread%s\n", r->runs, warmup, (long long)r->examples,
	       r->examples == 1 ? "" : "s", threads, threads == 1 ? "" : "s");
	printf("latency (us): min %.2f  median %.2f  p90 %.2f  p99 %.2f  "
	       "mean %.2f\n", r->lat.min, r->lat.median, r->lat.p90,
	       r->lat.p99, r->lat.mean);
	printf("throughput: %.1f inferences/s, %.1f examples/s\n",
	       r->runs_per_s, r->examples_per_s);
}

/* The signature to run (NULL: the subgraph 0 without one); exits 2
 * when the model has several and none was chosen. */
static const struct tfk_tfl_signature *pick_signature(
	const struct tfk_tflite *m, const char *path, struct tfk_err *err)
{
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
				return &m->signatures[i];
		tfk_errf(err, TFK_EINVAL, "%s: no signature '%s' (signatures: "
			 "%s)", path, signature_key, m->n_signatures ? list :
			 "none");
		return NULL;
	}
	if (m->n_signatures > 1)
		tfk_cli_usage_error("%s has %d signatures (%s): choose one "
				    "with --signature", path, m->n_signatures,
				    list);
	return m->n_signatures ? &m->signatures[0] : NULL;
}

int tfk_lite_bench_main(int argc, char **argv)
{
	struct tfk_tflite m;
	const struct tfk_tfl_signature *sig;
	const struct tfk_tfl_subgraph *s;
	struct runner run;
	struct input *ins = NULL;
	int *out = NULL;
	struct tfk_latency lat = { 0 };
	double t0, t1;
	long k;
	const char *path;
	struct result r;
	struct tfk_err err;
	uint64_t rng;
	int rc = 0, n, i, j, sg = 0, n_out, loaded = 0;

	tfk_err_clear(&err);
	memset(&r, 0, sizeof(r));
	memset(&run, 0, sizeof(run));
	n = tfk_cli_parse(argc, argv, &bench_cmd, bench_opts);
	if (n != 1)
		tfk_cli_usage_error(n ? "one model at a time" :
				    "bench needs a MODEL.tflite");
	if (iterations && seconds_given)
		tfk_cli_usage_error("give --iterations or --seconds, not both");
	if (iterations < 0 || iterations > 100000000)
		tfk_cli_usage_error("--iterations: expected 0 to 100000000");
	if (batch < 1 || batch > 1000000)
		tfk_cli_usage_error("--batch: expected 1 to 1000000");
	if (warmup < 0 || warmup > 100000000)
		tfk_cli_usage_error("--warmup: expected 0 to 100000000");
	if (threads < 0 || threads > 1024)
		tfk_cli_usage_error("--threads: expected 0 to 1024");
	if (zeros && seed)
		tfk_cli_usage_error("--seed is for random inputs, not "
				    "--zeros");
	if (!threads) {
		threads = sysconf(_SC_NPROCESSORS_ONLN);
		if (threads < 1)
			threads = 1;
	}
	tfk_cpu_blas_threads(1);
	rng = (uint64_t)seed;
	path = strcmp(argv[0], "-") ? argv[0] : "<stdin>";

	t0 = now();
	if (tfk_tflite_load_file(&m, argv[0], &err))
		return tfk_cli_fail(&err);
	loaded = 1;
	r.parse_ms = (now() - t0) * 1e3;
	if (!(sig = pick_signature(&m, path, &err))) {
		if (signature_key) {
			rc = tfk_cli_fail(&err);
			goto out;
		}
	}
	sg = sig ? (int)sig->subgraph_index : 0;
	if (!m.n_subgraphs) {
		tfk_errf(&err, TFK_EINVAL, "%s: no subgraphs", path);
		rc = tfk_cli_fail(&err);
		goto out;
	}
	s = &m.subgraphs[sg];
	run.is_int8 = tfk_tflite_is_int8(&m, sg);
	n_out = sig ? sig->n_outputs : s->n_outputs;
	ins = tfk_calloc((size_t)s->n_inputs + 1, sizeof(*ins));
	out = tfk_calloc((size_t)n_out + 1, sizeof(*out));
	run.feeds = tfk_calloc((size_t)s->n_inputs + 1, sizeof(*run.feeds));
	if (!ins || !out || !run.feeds) {
		tfk_errf(&err, TFK_ENOMEM, "out of memory");
		rc = tfk_cli_fail(&err);
		goto out;
	}
	for (j = 0; j < n_out; j++)
		out[j] = sig ? (int)sig->outputs[j].tensor_index :
			s->outputs[j];
	/* inputs in subgraph order, named by their signature keys */
	for (j = 0; j < s->n_inputs; j++) {
		ins[j].tensor = s->inputs[j];
		ins[j].key = s->tensors[s->inputs[j]].name;
		for (i = 0; sig && i < sig->n_inputs; i++)
			if ((int)sig->inputs[i].tensor_index == s->inputs[j])
				ins[j].key = sig->inputs[i].name;
		if (make_input(s, &ins[j], run.is_int8, &rng, &err)) {
			tfk_err_prefix(&err, "%s", path);
			rc = tfk_cli_fail(&err);
			goto out;
		}
		run.feeds[j] = ins[j].value;
		run.feeds[j].owner = TFK_OWN_BORROWED;
	}
	run.n_feeds = s->n_inputs;
	/* the examples of a run: the first input's first dimension */
	r.examples = s->n_inputs && ins[0].value.rank > 0 ?
		ins[0].value.shape[0] : 1;

	t0 = now();
	if (prepare(&run, &m, sg, out, n_out, &err)) {
		tfk_err_prefix(&err, "%s", path);
		rc = tfk_cli_fail(&err);
		goto out;
	}
	r.plan_ms = (now() - t0) * 1e3;
	for (k = 0; k < warmup; k++)
		if (run_once(&run, &err)) {
			tfk_err_prefix(&err, "%s", path);
			rc = tfk_cli_fail(&err);
			goto out;
		}
	if (tfk_latency_init(&lat, iterations)) {
		tfk_errf(&err, TFK_ENOMEM, "out of memory");
		rc = tfk_cli_fail(&err);
		goto out;
	}
	t0 = now();
	for (k = 0; iterations > 0 ? k < iterations :
	     k == 0 || now() - t0 < seconds; k++) {
		t1 = now();
		if (run_once(&run, &err)) {
			tfk_err_prefix(&err, "%s", path);
			rc = tfk_cli_fail(&err);
			goto out;
		}
		tfk_latency_add(&lat, (now() - t1) * 1e6);
	}
	r.wall = now() - t0;
	r.runs = k;
	tfk_latency_stats(&lat, &r.lat);
	r.runs_per_s = r.wall > 0 ? r.runs / r.wall : 0;
	r.examples_per_s = r.runs_per_s * r.examples;
	if (json)
		rc = report_json(path, sig ? sig->key : NULL, run.is_int8, &r);
	else
		report_text(path, sig ? sig->key : NULL, sg, run.is_int8, &r,
			    ins, s->n_inputs);
out:
	if (fflush(stdout) && !rc) {
		tfk_cli_warn("stdout: write error");
		rc = 1;
	}
	runner_release(&run);
	for (j = 0; ins && loaded && j < m.subgraphs[sg].n_inputs; j++)
		tfk_tensor_release(&ins[j].value);
	tfk_free(ins);
	tfk_free(out);
	tfk_free(run.feeds);
	tfk_latency_release(&lat);
	if (loaded)
		tfk_tflite_release(&m);
	return rc;
}
