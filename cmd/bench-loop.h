/*
 * bench-loop.h - what `tfk-model bench` and `tfk-lite bench` share: the
 * loop's options and their checks, and the report's loop lines. A
 * header of statics, included by cmd/model/bench.c and cmd/lite/bench.c
 * alone (each tool one binary); the loop itself is model/servable.h's
 * tfk_runner_bench. --profile/--trace (profile-opts.h) record the first
 * PROFILE_RUNS timed runs as steps.
 */
#ifndef TFK_CMD_BENCH_LOOP_H
#define TFK_CMD_BENCH_LOOP_H

#include "profile-opts.h"

#include "kernels/cpu.h"
#include "model/servable.h"
#include "util/cli.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long batch = 1, iterations, warmup = 20, threads = 1, seed;
static double seconds;		/* 0: not given, 1 s */
static int json;

/* --seconds S: a number in (0, 3600]. */
static int parse_seconds(const char *arg, void *value)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || *end || !(v > 0 && v <= 3600))
		return -1;
	*(double *)value = v;
	return 0;
}

/* The loop's entries of an option table (--batch and --json apart). */
#define BENCH_LOOP_OPTS \
	TFK_OPT_LONG('n', "iterations", &iterations, "N", "timed runs " \
		     "(0: as many as --seconds allows)"), \
	TFK_OPT_CALL('s', "seconds", &seconds, "S", "time the loop for " \
		     "about S seconds (default 1; 0 < S <= 3600)", \
		     parse_seconds), \
	TFK_OPT_LONG(0, "warmup", &warmup, "N", "untimed runs first"), \
	TFK_OPT_LONG('j', "threads", &threads, "N", "kernel threads " \
		     "(0: all CPUs)"), \
	TFK_OPT_LONG(0, "seed", &seed, "N", "seed of the random inputs"), \
	PROFILE_OPTS

#define PROFILE_RUNS 10		/* timed runs a profile records */

/* Usage errors for the loop's options; fills in the defaults (threads
 * 0: all CPUs) and *bo. OpenBLAS stays on one thread: --threads is our
 * kernels'. */
static void bench_check(struct tfk_bench_opts *bo)
{
	if (iterations && seconds)
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
	if (!seconds)
		seconds = 1;
	tfk_cpu_blas_threads(1);
	bo->warmup = warmup;
	bo->iterations = iterations;
	bo->seconds = seconds;
	bo->profile_runs = prof_wanted() ? PROFILE_RUNS : 0;
}

/* The loop's JSON keys: runs and latencies. */
static void bench_json_loop(json_t *o, const struct tfk_bench_result *b,
			    double load_ms)
{
	json_object_set_new(o, "threads", json_integer(threads));
	json_object_set_new(o, "warmup", json_integer(warmup));
	json_object_set_new(o, "iterations", json_integer(b->runs));
	json_object_set_new(o, "load_ms", json_real(load_ms));
}

static void bench_json_latency(json_t *o, const struct tfk_bench_result *b)
{
	json_object_set_new(o, "min_us", json_real(b->lat.min));
	json_object_set_new(o, "median_us", json_real(b->lat.median));
	json_object_set_new(o, "p90_us", json_real(b->lat.p90));
	json_object_set_new(o, "p99_us", json_real(b->lat.p99));
	json_object_set_new(o, "mean_us", json_real(b->lat.mean));
}

/* Print o as one line; 1 when out of memory. */
static int bench_json_print(json_t *o)
{
	char *text = json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT |
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

/* The text report's "runs:" and "latency (us):" lines. */
static void bench_text_loop(const struct tfk_bench_result *b,
			    int64_t examples)
{
	printf("runs: %ld timed after %ld warm-up, %lld example%s per run, "
	       "%ld thread%s\n", b->runs, warmup, (long long)examples,
	       examples == 1 ? "" : "s", threads, threads == 1 ? "" : "s");
	printf("latency (us): min %.2f  median %.2f  p90 %.2f  p99 %.2f  "
	       "mean %.2f\n", b->lat.min, b->lat.median, b->lat.p90,
	       b->lat.p99, b->lat.mean);
}

#endif
