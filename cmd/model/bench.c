/*
 * bench.c - `tfk-model bench`: how fast a SavedModel signature loads
 * and runs in-process, the loop a server pays per request.
 *
 * Load is timed in three parts, each from the end of the last: parse
 * (saved_model.pb read and indexed: tfk_servable_open), import (the
 * runner made: the signature pruned to a graph, variables read from the
 * bundle, the executor's kernels chosen), plan (shapes inferred, memory
 * planned and one first run). load_ms is their sum, what a process pays
 * from open() to its first answer. The loop is model/servable.h's
 * tfk_runner_bench, which `tfk-lite bench` times with too.
 *
 * Inputs are made once and fed to every run (a server's request data
 * is in memory too): by default random values from a seeded
 * splitmix64 (floats uniform in [0, 1), integers 0 or 1, bools), in the
 * signature's dtype and shape, an unknown first dimension set to
 * --batch. Other unknown dims or an unknown rank cannot be guessed and
 * are refused, as are string inputs (serialized tf.Examples): those
 * come from --input_records (every record of a file, as `run` takes
 * it) or --input_exprs (Python literals, as `run`).
 *
 * Each run is timed alone (clock_gettime around tfk_runner_run); the
 * report gives min, median, p90, p99 (nearest rank) and mean in
 * microseconds (util/latency.h: min and mean over every run; the
 * percentiles over at most 2^20 runs spread evenly over the loop, so a
 * long --seconds on a tiny model cannot exhaust memory), and throughput
 * = examples per run * runs / wall time of the timed loop. --warmup
 * runs come first and are not counted.
 * Rejected: timing batches of runs and dividing (model-run.c's way):
 * it hides the tail that p99 shows, and the clock's cost (~20 ns) is
 * small beside even the smallest model's run.
 *
 * OpenBLAS is kept on one thread as in `run`: --threads sets our
 * kernels' threads only.
 */
#include "sub.h"

#include "../bench-loop.h"

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

static const char *dir;
static const char *tag_set = "serve";
static const char *signature_def = "serving_default";
static const char *records_arg, *exprs_arg;

static const struct tfk_opt bench_opts[] = {
	TFK_OPT_STR(0, "dir", &dir, "DIR", "the SavedModel directory"),
	TFK_OPT_STR(0, "tag_set", &tag_set, "TAGS", "the MetaGraphDef's "
		    "tags, comma-separated"),
	TFK_OPT_STR(0, "signature_def", &signature_def, "KEY",
		    "the signature to run"),
	TFK_OPT_LONG('b', "batch", &batch, "N", "examples per run: the "
		     "size of random inputs' unknown first dimension"),
	BENCH_LOOP_OPTS,
	TFK_OPT_STR(0, "input_records", &records_arg, "[K=]FILE",
		    "feed every record of a TFRecord file to a string "
		    "input"),
	TFK_OPT_STR(0, "input_exprs", &exprs_arg, "K=LITERAL",
		    "inputs as Python literals, e.g. 'x=[[1.0],[2.0]]'"),
	TFK_OPT_FLAG(0, "json", &json, "print one JSON object"),
	TFK_OPT_END
};

static const struct tfk_cmd bench_cmd = {
	"tfk-model",
	"bench --dir DIR [--tag_set TAGS] [--signature_def KEY] [--batch N] "
	"[--iterations N | --seconds S] [--warmup N] [--threads N] "
	"[--input_records [K=]FILE] [--input_exprs K=LITERAL] [--json]",
	"time loading a SavedModel and running a signature in a loop",
	"tfk-model bench --dir model --batch 1 --seconds 2 --json",
};

struct result {
	double parse_ms, import_ms, plan_ms;
	struct tfk_bench_result b;
	double examples_per_s;
	int64_t examples;	/* per run */
};

static int report_json(const struct result *r)
{
	json_t *o = json_object();

	json_object_set_new(o, "dir", json_string(dir));
	json_object_set_new(o, "tag_set", json_string(tag_set));
	json_object_set_new(o, "signature_def", json_string(signature_def));
	json_object_set_new(o, "batch", json_integer(r->examples));
	bench_json_loop(o, &r->b, r->parse_ms + r->import_ms + r->plan_ms);
	json_object_set_new(o, "parse_ms", json_real(r->parse_ms));
	json_object_set_new(o, "import_ms", json_real(r->import_ms));
	json_object_set_new(o, "plan_ms", json_real(r->plan_ms));
	bench_json_latency(o, &r->b);
	json_object_set_new(o, "examples_per_s",
			    json_real(r->examples_per_s));
	return bench_json_print(o);
}

static void report_text(const struct result *r, const struct tfk_runner *R,
			const struct tfk_tensor *vals, const int *given)
{
	char s[128];
	int j;

	printf("model: %s (tag-set %s, signature %s)\n", dir, tag_set,
	       signature_def);
	for (j = 0; j < tfk_runner_n_inputs(R); j++)
		printf("input %s: %s %s, %s\n", tfk_runner_input(R, j)->key,
		       tfk_dtype_name(vals[j].dtype),
		       tfk_shape_str(vals[j].rank, vals[j].shape, s,
				     sizeof(s)),
		       given[j] ? "given" : "random");
	printf("load: %.3f ms (parse %.3f, import + variables %.3f, "
	       "plan + first run %.3f)\n",
	       r->parse_ms + r->import_ms + r->plan_ms, r->parse_ms,
	       r->import_ms, r->plan_ms);
	bench_text_loop(&r->b, r->examples);
	printf("throughput: %.1f examples/s\n", r->examples_per_s);
}

/* Make the value of input fd: a given one (moved out of g) or random. */
static int make_input(const struct tfk_sv_tensor *fd, struct tfk_givens *g,
		      int n_strings, struct tfk_tensor *t, int *given,
		      uint64_t *rng, struct tfk_err *err)
{
	int64_t shape[TFK_MAX_RANK];
	char a[128];
	int i, d;

	*given = 0;
	for (i = 0; i < g->n; i++)
		if ((g->v[i].key && !strcmp(g->v[i].key, fd->key)) ||
		    (!g->v[i].key && fd->dtype == TFK_DT_STRING &&
		     n_strings == 1)) {
			*t = g->v[i].t;
			memset(&g->v[i].t, 0, sizeof(g->v[i].t));
			*given = 1;
			break;
		}
	if (*given)
		return tfk_sv_convert(t, fd, err);
	if (fd->dtype == TFK_DT_STRING)
		return tfk_errf(err, TFK_EINVAL, "input '%s' is a string "
				"tensor (serialized tf.Examples?): random "
				"values cannot stand for it; give "
				"--input_records FILE", fd->key);
	if (fd->rank < 0)
		return tfk_errf(err, TFK_EINVAL, "input '%s': unknown rank; "
				"give its value with --input_exprs", fd->key);
	for (d = 0; d < fd->rank; d++) {
		if (fd->shape[d] >= 0)
			shape[d] = fd->shape[d];
		else if (d == 0)
			shape[d] = batch;
		else
			return tfk_errf(err, TFK_EINVAL, "input '%s': shape %s "
					"has an unknown dimension %d; give its "
					"value with --input_exprs", fd->key,
					tfk_shape_str(fd->rank, fd->shape, a,
						      sizeof(a)), d);
	}
	if (tfk_tensor_init(t, fd->dtype, fd->rank, shape, err))
		return TFK_EINVAL;
	return tfk_given_random(t, rng, err);
}

static int fail(struct tfk_err *err)
{
	return tfk_cli_fail(err);
}

static int model_bench_main(int argc, char **argv)
{
	struct tfk_servable_opts so = { NULL };
	struct tfk_runner_opts ro = { 0 };
	struct tfk_bench_opts bo;
	struct tfk_servable *s = NULL;
	const struct tfk_sv_signature *sig;
	struct tfk_runner *R = NULL;
	struct tfk_givens g = { NULL, 0, 0 };
	struct tfk_tensor *vals = NULL;
	int *given = NULL;
	double t0, t1, t2, t3;
	struct result r;
	struct tfk_err err;
	uint64_t rng;
	int rc = 0, n, i, j, n_in = 0, n_strings = 0;

	tfk_err_clear(&err);
	memset(&r, 0, sizeof(r));
	n = tfk_cli_parse(argc, argv, &bench_cmd, bench_opts);
	if (n > 0)
		tfk_cli_usage_error("unexpected argument '%s'", argv[0]);
	if (!dir)
		tfk_cli_usage_error("bench needs --dir DIR");
	bench_check(&bo);
	if (prof_open(&err))
		return fail(&err);
	ro.threads = (int)threads;
	ro.seed = (uint64_t)seed;
	rng = (uint64_t)seed;
	so.tag_set = tag_set;
	so.kind = TFK_SERVABLE_SAVEDMODEL;

	/* inputs from files and literals are read before the clock runs */
	if ((records_arg && tfk_givens_add(&g, TFK_GIVEN_RECORDS, records_arg,
					   "--input_records", &err)) ||
	    (exprs_arg && tfk_givens_add(&g, TFK_GIVEN_EXPR, exprs_arg,
					 "--input_exprs", &err))) {
		rc = fail(&err);
		goto out;
	}
	for (i = 0; i < g.n; i++)
		if (g.v[i].t.dtype == TFK_DT_STRING && g.v[i].t.rank == 1 &&
		    !g.v[i].t.shape[0] && !strcmp(g.v[i].from,
						  "--input_records")) {
			tfk_errf(&err, TFK_EINVAL, "--input_records: %s: no "
				 "records", g.v[i].value);
			rc = fail(&err);
			goto out;
		}

	t0 = tfk_sv_now();
	if (tfk_servable_open(&s, dir, &so, &err)) {
		rc = fail(&err);
		goto out;
	}
	sig = tfk_servable_find(s, signature_def, &err);
	if (!sig) {
		tfk_err_prefix(&err, "%s: tag-set %s", dir, tag_set);
		rc = fail(&err);
		goto out;
	}
	t1 = tfk_sv_now();
	for (i = 0; i < g.n; i++) {
		if (!g.v[i].key)
			continue;
		for (j = 0; j < sig->n_inputs; j++)
			if (!strcmp(sig->inputs[j].key, g.v[i].key))
				break;
		if (j == sig->n_inputs) {
			tfk_errf(&err, TFK_EINVAL, "\"%s\" is not an input of "
				 "signature %s", g.v[i].key, sig->key);
			rc = fail(&err);
			goto out;
		}
	}
	for (j = 0; j < sig->n_inputs; j++)
		n_strings += sig->inputs[j].dtype == TFK_DT_STRING;
	for (i = 0; i < g.n; i++)
		if (!g.v[i].key && n_strings != 1) {
			tfk_errf(&err, TFK_EINVAL, "--input_records: give "
				 "KEY=FILE (the signature does not have "
				 "exactly one string input)");
			rc = fail(&err);
			goto out;
		}
	if (tfk_runner_new(&R, s, sig, NULL, -1, &ro, &err)) {
		rc = fail(&err);
		goto out;
	}
	t2 = tfk_sv_now();
	n_in = tfk_runner_n_inputs(R);
	vals = tfk_calloc((size_t)n_in + 1, sizeof(*vals));
	given = tfk_calloc((size_t)n_in + 1, sizeof(*given));
	if (!vals || !given) {
		tfk_errf(&err, TFK_ENOMEM, "out of memory");
		rc = fail(&err);
		goto out;
	}
	for (j = 0; j < n_in; j++)
		if (make_input(tfk_runner_input(R, j), &g, n_strings, &vals[j],
			       &given[j], &rng, &err)) {
			rc = fail(&err);
			goto out;
		}
	/* the examples of a run: the first input's first dimension */
	r.examples = n_in && vals[0].rank > 0 ? vals[0].shape[0] : 1;
	/* making the inputs is not part of loading */
	t3 = tfk_sv_now();
	if (tfk_runner_run(R, vals, NULL, &err)) {
		tfk_err_prefix(&err, "%s: signature %s", dir, sig->key);
		rc = fail(&err);
		goto out;
	}
	r.parse_ms = (t1 - t0) * 1e3;
	r.import_ms = (t2 - t1) * 1e3;
	r.plan_ms = (tfk_sv_now() - t3) * 1e3;
	if (tfk_runner_bench(R, vals, &bo, &r.b, &err)) {
		rc = fail(&err);
		goto out;
	}
	r.examples_per_s = r.b.runs_per_s * r.examples;
	if (prof_close(json, &err)) {
		rc = fail(&err);
		goto out;
	}
	if (json)
		rc = report_json(&r);
	else
		report_text(&r, R, vals, given);
out:
	if (fflush(stdout) && !rc) {
		tfk_cli_warn("stdout: write error");
		rc = 1;
	}
	if (rc)
		prof_abandon();
	for (j = 0; vals && j < n_in; j++)
		tfk_tensor_release(&vals[j]);
	tfk_free(vals);
	tfk_free(given);
	tfk_runner_free(R);
	tfk_servable_close(s);
	tfk_givens_release(&g);
	return rc;
}

const struct tfk_subcmd model_bench_sub = {
	"bench", "time loading a SavedModel and running a signature "
	"in a loop", model_bench_main
};
