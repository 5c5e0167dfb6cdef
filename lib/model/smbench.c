/*
 * smbench.c - `tfk-model bench`: how fast a SavedModel signature loads
 * and runs in-process, the loop a server pays per request.
 *
 * Load is timed in three parts, each from the end of the last: parse
 * (saved_model.pb read and indexed), import (the signature pruned to a
 * graph, variables read from the bundle), plan (executor made, shapes
 * inferred, memory planned and one first run). load_ms is their sum,
 * what a process pays from open() to its first answer.
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
 * Each run is timed alone (clock_gettime around tfk_exec_run); the
 * report gives min, median, p90, p99 (nearest rank) and mean in
 * microseconds (util/latency.h: min and mean over every run; the
 * percentiles over at most 2^20 runs spread evenly over the loop, so a
 * long --seconds on a tiny model cannot exhaust memory), and throughput
 * = examples per run * runs / wall time of the timed loop. --warmup runs come first and are not counted.
 * Rejected: timing batches of runs and dividing (model-run.c's way):
 * it hides the tail that p99 shows, and the clock's cost (~20 ns) is
 * small beside even the smallest model's run.
 *
 * OpenBLAS is kept on one thread as in `run`: --threads sets our
 * kernels' threads only.
 */
#include "format/savedmodel.h"

#include "graph/exec.h"
#include "io/npy.h"
#include "io/record.h"
#include "kernels/cpu.h"
#include "model/import.h"
#include "model/mains.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cli.h"
#include "util/latency.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *dir;
static const char *tag_set = "serve";
static const char *signature_def = "serving_default";
static const char *records_arg, *exprs_arg;
static long batch = 1, iterations, warmup = 20, threads = 1;
static long seed;
static double seconds = 1;
static int json, seconds_given;

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
	TFK_OPT_STR(0, "dir", &dir, "DIR", "the SavedModel directory"),
	TFK_OPT_STR(0, "tag_set", &tag_set, "TAGS", "the MetaGraphDef's "
		    "tags, comma-separated"),
	TFK_OPT_STR(0, "signature_def", &signature_def, "KEY",
		    "the signature to run"),
	TFK_OPT_LONG('b', "batch", &batch, "N", "examples per run: the "
		     "size of random inputs' unknown first dimension"),
	TFK_OPT_LONG('n', "iterations", &iterations, "N", "timed runs "
		     "(0: as many as --seconds allows)"),
	TFK_OPT_CALL('s', "seconds", &seconds, "S", "time the loop for "
		     "about S seconds (default 1; 0 < S <= 3600)",
		     parse_seconds),
	TFK_OPT_LONG(0, "warmup", &warmup, "N", "untimed runs first"),
	TFK_OPT_LONG('j', "threads", &threads, "N", "kernel threads "
		     "(0: all CPUs)"),
	TFK_OPT_LONG(0, "seed", &seed, "N", "seed of the random inputs"),
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

/* Fill a numeric tensor with random values (see the top comment). */
static int fill_random(struct tfk_tensor *t, uint64_t *s,
		       struct tfk_err *err)
{
	int64_t n = tfk_tensor_numel(t), i;

	for (i = 0; i < n; i++) {
		uint64_t r = splitmix64(s);
		double u = (double)(r >> 11) * (1.0 / 9007199254740992.0);

		switch (t->dtype) {
		case TFK_DT_FLOAT: ((float *)t->data)[i] = (float)u; break;
		case TFK_DT_DOUBLE: ((double *)t->data)[i] = u; break;
		case TFK_DT_INT32: ((int32_t *)t->data)[i] = r & 1; break;
		case TFK_DT_INT64: ((int64_t *)t->data)[i] = r & 1; break;
		case TFK_DT_INT16: ((int16_t *)t->data)[i] = r & 1; break;
		case TFK_DT_INT8: ((int8_t *)t->data)[i] = r & 1; break;
		case TFK_DT_UINT8:
		case TFK_DT_BOOL: ((uint8_t *)t->data)[i] = r & 1; break;
		default:
			return tfk_errf(err, TFK_EINVAL, "cannot make random "
					"%s values", tfk_dtype_name(t->dtype));
		}
	}
	return 0;
}

/* Every record of path as a 1-D string tensor *t. */
static int read_records(const char *path, struct tfk_tensor *t,
			struct tfk_err *err)
{
	struct tfk_rec_reader *r = NULL;
	struct tfk_buf data;
	struct tfk_rec rec;
	size_t *lens = NULL, nrec = 0, cap = 0, off = 0, i;
	int64_t n;
	int rc;

	memset(t, 0, sizeof(*t));
	tfk_buf_init(&data);
	rc = tfk_rec_open(&r, path, TFK_COMP_AUTO, 0, err);
	while (!rc) {
		int got = tfk_rec_next(r, &rec, err);

		if (got <= 0) {
			rc = got;
			break;
		}
		if (nrec == cap) {
			size_t nc = cap ? cap * 2 : 64;
			size_t *nl = tfk_realloc(lens, nc * sizeof(*nl));

			if (!nl) {
				rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
				break;
			}
			lens = nl;
			cap = nc;
		}
		lens[nrec++] = rec.len;
		tfk_buf_add(&data, rec.data, rec.len);
	}
	tfk_rec_close(r);
	if (!rc && !tfk_buf_ok(&data))
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (!rc && !nrec)
		rc = tfk_errf(err, TFK_EINVAL, "%s: no records", path);
	n = (int64_t)nrec;
	if (!rc)
		rc = tfk_tensor_init(t, TFK_DT_STRING, 1, &n, err);
	for (i = 0; !rc && i < nrec; i++) {
		rc = tfk_tensor_set_str(t, (int64_t)i, data.data + off,
					lens[i], err);
		off += lens[i];
	}
	tfk_buf_release(&data);
	tfk_free(lens);
	if (rc)
		tfk_tensor_release(t);
	return rc;
}

/* A literal's float64/int64/bool array converted to dtype want, as
 * feeding numpy converts (ints to floats; floats never to ints). */
static int lit_convert(struct tfk_tensor *t, enum tfk_dtype want,
		       const char *key, struct tfk_err *err)
{
	struct tfk_tensor o;
	int64_t n = tfk_tensor_numel(t), i;
	int from_f = t->dtype == TFK_DT_DOUBLE, to_f = want == TFK_DT_FLOAT ||
		want == TFK_DT_DOUBLE;
	int rc;

	if (t->dtype == want)
		return 0;
	if (t->dtype == TFK_DT_STRING || t->dtype == TFK_DT_BOOL ||
	    want == TFK_DT_BOOL || (from_f && !to_f) ||
	    tfk_dtype_size(want) == 0 || want == TFK_DT_STRING ||
	    want == TFK_DT_HALF)
		return tfk_errf(err, TFK_EINVAL, "input '%s': expected %s, "
				"got %s values", key, tfk_dtype_name(want),
				tfk_dtype_name(t->dtype));
	rc = tfk_tensor_init(&o, want, t->rank, t->shape, err);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		double d = from_f ? ((double *)t->data)[i] :
			(double)((int64_t *)t->data)[i];
		int64_t v = from_f ? 0 : ((int64_t *)t->data)[i];

		switch (want) {
		case TFK_DT_FLOAT: ((float *)o.data)[i] = (float)d; break;
		case TFK_DT_DOUBLE: ((double *)o.data)[i] = d; break;
		case TFK_DT_INT32: ((int32_t *)o.data)[i] = (int32_t)v; break;
		case TFK_DT_INT16: ((int16_t *)o.data)[i] = (int16_t)v; break;
		case TFK_DT_INT8: ((int8_t *)o.data)[i] = (int8_t)v; break;
		case TFK_DT_UINT8: ((uint8_t *)o.data)[i] = (uint8_t)v; break;
		default: ((int64_t *)o.data)[i] = v; break;
		}
	}
	tfk_tensor_release(t);
	*t = o;
	return 0;
}

/* Given inputs by key (from --input_records / --input_exprs). */
struct given {
	char *key;		/* NULL: --input_records FILE without key */
	struct tfk_tensor t;
	int is_records;
};

struct givens {
	struct given *v;
	int n;
};

static void givens_release(struct givens *g)
{
	int i;

	for (i = 0; i < g->n; i++) {
		tfk_free(g->v[i].key);
		tfk_tensor_release(&g->v[i].t);
	}
	tfk_free(g->v);
	g->v = NULL;
	g->n = 0;
}

/* Parse "K=V;K2=V2" (';' outside quotes/brackets; key optional for
 * records) into g. */
static int parse_items(const char *spec, int records, struct givens *g,
		       struct tfk_err *err)
{
	const char *p = spec;
	const char *opt = records ? "--input_records" : "--input_exprs";

	while (*p) {
		const char *q = p, *eq = NULL;
		int depth = 0, rc;
		char quote = 0, *val;
		struct given *nv, *it;

		for (; *q; q++) {
			if (quote) {
				if (*q == '\\' && q[1])
					q++;
				else if (*q == quote)
					quote = 0;
				continue;
			}
			if (*q == '\'' || *q == '"')
				quote = *q;
			else if (*q == '[' || *q == '(' || *q == '{')
				depth++;
			else if (*q == ']' || *q == ')' || *q == '}')
				depth--;
			else if (*q == '=' && !eq && !depth)
				eq = q;
			else if (*q == ';' && !depth)
				break;
		}
		if (q == p) {
			p = *q ? q + 1 : q;
			continue;
		}
		if (!eq && !records)
			return tfk_errf(err, TFK_EINVAL, "%s: '%.*s' is not "
					"KEY=VALUE", opt, (int)(q - p), p);
		nv = tfk_realloc(g->v, (g->n + 1) * sizeof(*nv));
		if (!nv)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		g->v = nv;
		it = &g->v[g->n];
		memset(it, 0, sizeof(*it));
		it->is_records = records;
		if (eq) {
			it->key = tfk_malloc((size_t)(eq - p) + 1);
			if (!it->key)
				return tfk_errf(err, TFK_ENOMEM,
						"out of memory");
			memcpy(it->key, p, (size_t)(eq - p));
			it->key[eq - p] = 0;
		}
		g->n++;
		val = tfk_malloc((size_t)(q - (eq ? eq + 1 : p)) + 1);
		if (!val)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		memcpy(val, eq ? eq + 1 : p, (size_t)(q - (eq ? eq + 1 : p)));
		val[q - (eq ? eq + 1 : p)] = 0;
		if (records) {
			rc = read_records(val, &it->t, err);
		} else {
			struct tfk_lit lit;

			rc = tfk_lit_parse(val, &lit, err);
			if (!rc) {
				rc = tfk_lit_to_tensor(&lit, &it->t, err);
				tfk_lit_release(&lit);
			}
		}
		tfk_free(val);
		if (rc)
			return tfk_err_prefix(err, "%s%s%s", opt,
					      it->key ? ": " : "",
					      it->key ? it->key : "");
		p = *q ? q + 1 : q;
	}
	return 0;
}

struct result {
	double parse_ms, import_ms, plan_ms;
	long runs;
	struct tfk_latency_stats lat;
	double wall, examples_per_s;
	int64_t examples;	/* per run */
};

static int report_json(const struct result *r)
{
	json_t *o = json_object();
	char *text;

	json_object_set_new(o, "dir", json_string(dir));
	json_object_set_new(o, "tag_set", json_string(tag_set));
	json_object_set_new(o, "signature_def", json_string(signature_def));
	json_object_set_new(o, "batch", json_integer(r->examples));
	json_object_set_new(o, "threads", json_integer(threads));
	json_object_set_new(o, "warmup", json_integer(warmup));
	json_object_set_new(o, "iterations", json_integer(r->runs));
	json_object_set_new(o, "load_ms", json_real(r->parse_ms +
						    r->import_ms +
						    r->plan_ms));
	json_object_set_new(o, "parse_ms", json_real(r->parse_ms));
	json_object_set_new(o, "import_ms", json_real(r->import_ms));
	json_object_set_new(o, "plan_ms", json_real(r->plan_ms));
	json_object_set_new(o, "min_us", json_real(r->lat.min));
	json_object_set_new(o, "median_us", json_real(r->lat.median));
	json_object_set_new(o, "p90_us", json_real(r->lat.p90));
	json_object_set_new(o, "p99_us", json_real(r->lat.p99));
	json_object_set_new(o, "mean_us", json_real(r->lat.mean));
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

static void report_text(const struct result *r,
			const struct tfk_import *imp,
			const struct tfk_tensor *vals, const int *given)
{
	char s[128];
	int j;

	printf("model: %s (tag-set %s, signature %s)\n", dir, tag_set,
	       signature_def);
	for (j = 0; j < imp->n_feeds; j++)
		printf("input %s: %s %s, %s\n", imp->feeds[j].key,
		       tfk_dtype_name(vals[j].dtype),
		       tfk_shape_str(vals[j].rank, vals[j].shape, s,
				     sizeof(s)),
		       given[j] ? "given" : "random");
	printf("load: %.3f ms (parse %.3f, import + variables %.3f, "
	       "plan + first run %.3f)\n",
	       r->parse_ms + r->import_ms + r->plan_ms, r->parse_ms,
	       r->import_ms, r->plan_ms);
	printf("runs: %ld timed after %ld warm-up, %lld example%s per run, "
	       "%ld thread%s\n", r->runs, warmup, (long long)r->examples,
	       r->examples == 1 ? "" : "s", threads, threads == 1 ? "" : "s");
	printf("latency (us): min %.2f  median %.2f  p90 %.2f  p99 %.2f  "
	       "mean %.2f\n", r->lat.min, r->lat.median, r->lat.p90,
	       r->lat.p99, r->lat.mean);
	printf("throughput: %.1f examples/s\n", r->examples_per_s);
}

/* Make the value of feed fd: a given one (moved out of g) or random. */
static int make_input(const struct tfk_import_feed *fd, struct givens *g,
		      int n_strings, struct tfk_tensor *t, int *given,
		      uint64_t *rng, struct tfk_err *err)
{
	int64_t shape[TFK_MAX_RANK];
	char a[128], b[128];
	int i, d, ok;

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
	if (*given) {
		if ((fd->dtype == TFK_DT_STRING) != (t->dtype == TFK_DT_STRING))
			return tfk_errf(err, TFK_EINVAL, "input '%s': expected "
					"%s, got %s values", fd->key,
					tfk_dtype_name(fd->dtype),
					tfk_dtype_name(t->dtype));
		if (fd->dtype != TFK_DT_STRING &&
		    lit_convert(t, fd->dtype, fd->key, err))
			return TFK_EINVAL;
		ok = fd->rank < 0 || fd->rank == t->rank;
		for (d = 0; ok && fd->rank >= 0 && d < t->rank; d++)
			ok = fd->shape[d] < 0 || fd->shape[d] == t->shape[d];
		if (!ok)
			return tfk_errf(err, TFK_EINVAL, "input '%s': expected "
					"%s %s, got shape %s", fd->key,
					tfk_dtype_name(fd->dtype),
					tfk_shape_str(fd->rank, fd->shape, a,
						      sizeof(a)),
					tfk_shape_str(t->rank, t->shape, b,
						      sizeof(b)));
		return 0;
	}
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
	return fill_random(t, rng, err);
}

static int fail(struct tfk_err *err)
{
	return tfk_cli_fail(err);
}

int tfk_model_bench_main(int argc, char **argv)
{
	struct tfk_savedmodel *sm = NULL;
	const struct tfk_meta_graph *mg;
	const struct tfk_signature *sig;
	struct tfk_import *imp = NULL;
	struct tfk_exec *x = NULL;
	struct tfk_exec_opts eo = { NULL, 0, 1 };
	struct givens g = { NULL, 0 };
	const char **names = NULL, **fetch_names = NULL;
	const struct tfk_tensor **fetched = NULL;
	struct tfk_tensor *vals = NULL;
	int *given = NULL;
	struct tfk_latency lat = { 0 };
	double t0, t1, t2, t3;
	long k;
	struct result r;
	struct tfk_err err;
	uint64_t rng;
	int rc = 0, n, i, j, n_strings = 0;

	tfk_err_clear(&err);
	memset(&r, 0, sizeof(r));
	n = tfk_cli_parse(argc, argv, &bench_cmd, bench_opts);
	if (n > 0)
		tfk_cli_usage_error("unexpected argument '%s'", argv[0]);
	if (!dir)
		tfk_cli_usage_error("bench needs --dir DIR");
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
	if (!threads) {
		threads = sysconf(_SC_NPROCESSORS_ONLN);
		if (threads < 1)
			threads = 1;
	}
	tfk_cpu_blas_threads(1);
	eo.threads = (int)threads;
	eo.seed = (uint64_t)seed;
	rng = (uint64_t)seed;

	/* inputs from files and literals are read before the clock runs */
	if ((records_arg && parse_items(records_arg, 1, &g, &err)) ||
	    (exprs_arg && parse_items(exprs_arg, 0, &g, &err))) {
		rc = fail(&err);
		goto out;
	}

	t0 = now();
	if (tfk_savedmodel_open(&sm, dir, &err)) {
		rc = fail(&err);
		goto out;
	}
	k = tfk_savedmodel_find_tags(sm, tag_set, &err);
	if (k < 0) {
		tfk_err_prefix(&err, "%s", dir);
		rc = fail(&err);
		goto out;
	}
	mg = &sm->meta_graphs[k];
	sig = tfk_savedmodel_signature(mg, signature_def, &err);
	if (!sig) {
		tfk_err_prefix(&err, "%s: tag-set %s", dir, tag_set);
		rc = fail(&err);
		goto out;
	}
	t1 = now();
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
	if (tfk_import_signature(&imp, mg, sig, sm->variables_prefix,
				 &err)) {
		tfk_err_prefix(&err, "%s: signature %s", dir, sig->key);
		rc = fail(&err);
		goto out;
	}
	t2 = now();
	names = tfk_calloc(imp->n_feeds + 1, sizeof(*names));
	vals = tfk_calloc(imp->n_feeds + 1, sizeof(*vals));
	given = tfk_calloc(imp->n_feeds + 1, sizeof(*given));
	fetch_names = tfk_calloc(imp->n_fetches + 1, sizeof(*fetch_names));
	fetched = tfk_calloc(imp->n_fetches + 1, sizeof(*fetched));
	if (!names || !vals || !given || !fetch_names || !fetched) {
		tfk_errf(&err, TFK_ENOMEM, "out of memory");
		rc = fail(&err);
		goto out;
	}
	for (j = 0; j < imp->n_feeds; j++) {
		names[j] = imp->feeds[j].node;
		if (make_input(&imp->feeds[j], &g, n_strings, &vals[j],
			       &given[j], &rng, &err)) {
			rc = fail(&err);
			goto out;
		}
	}
	/* the examples of a run: the first input's first dimension */
	r.examples = imp->n_feeds && vals[0].rank > 0 ? vals[0].shape[0] : 1;
	for (j = 0; j < imp->n_fetches; j++)
		fetch_names[j] = imp->fetches[j].key;
	/* making the inputs is not part of loading */
	t3 = now();
	if (tfk_exec_new(&x, imp->g, names, imp->n_feeds, fetch_names,
			 imp->n_fetches, &eo, &err) ||
	    tfk_exec_run(x, vals, 0, fetched, &err)) {
		tfk_err_prefix(&err, "%s: signature %s", dir, sig->key);
		rc = fail(&err);
		goto out;
	}
	r.parse_ms = (t1 - t0) * 1e3;
	r.import_ms = (t2 - t1) * 1e3;
	r.plan_ms = (now() - t3) * 1e3;

	for (k = 0; k < warmup; k++)
		if (tfk_exec_run(x, vals, 0, fetched, &err)) {
			rc = fail(&err);
			goto out;
		}
	if (tfk_latency_init(&lat, iterations)) {
		tfk_errf(&err, TFK_ENOMEM, "out of memory");
		rc = fail(&err);
		goto out;
	}
	t0 = now();
	for (k = 0; iterations > 0 ? k < iterations :
	     k == 0 || now() - t0 < seconds; k++) {
		t1 = now();
		if (tfk_exec_run(x, vals, 0, fetched, &err)) {
			rc = fail(&err);
			goto out;
		}
		tfk_latency_add(&lat, (now() - t1) * 1e6);
	}
	r.wall = now() - t0;
	r.runs = k;
	tfk_latency_stats(&lat, &r.lat);
	r.examples_per_s = r.wall > 0 ? r.examples * r.runs / r.wall : 0;
	if (json)
		rc = report_json(&r);
	else
		report_text(&r, imp, vals, given);
out:
	if (fflush(stdout) && !rc) {
		tfk_cli_warn("stdout: write error");
		rc = 1;
	}
	for (j = 0; vals && imp && j < imp->n_feeds; j++)
		tfk_tensor_release(&vals[j]);
	tfk_exec_free(x);
	tfk_import_free(imp);
	tfk_free(names);
	tfk_free(vals);
	tfk_free(given);
	tfk_free(fetch_names);
	tfk_free(fetched);
	tfk_latency_release(&lat);
	givens_release(&g);
	tfk_savedmodel_close(sm);
	return rc;
}
