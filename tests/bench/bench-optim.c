/*
 * bench-optim.c - one optimizer step over the MLP variables
 * (Flatten -> Dense 128 -> Dense 10: kernels 784x128 and 128x10, biases
 * 128 and 10; 101,770 floats), the per-step cost tfk-train pays after
 * the backward pass.
 *
 *   bench-optim [--threads T] [--steps N] OPTIMIZER_JSON
 *
 * OPTIMIZER_JSON is a compile.optimizer value ("adam", {"class_name":
 * ...}). Gradients are fixed random values; the variables start random.
 * Prints the best of 5 passes of N steps (default 2000) as steps per
 * second on stdout.
 */
#include "nn/optim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const int64_t shapes[4][2] = {
		{ 784, 128 }, { 128, 0 }, { 128, 10 }, { 10, 0 }
	};
	struct tfk_tensor v[4], g[4];
	struct tfk_tensor *vp[4];
	const struct tfk_tensor *gp[4];
	struct tfk_optim *o;
	struct tfk_err err = { 0, "" };
	int threads = 1, steps = 2000, i, p, s;
	double best = 0;
	json_error_t je;
	json_t *js;
	unsigned seed = 1;

	for (i = 1; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "--threads"))
			threads = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--steps"))
			steps = atoi(argv[i + 1]);
	}
	if (i >= argc) {
		fprintf(stderr, "usage: bench-optim [--threads T] [--steps N] "
			"OPTIMIZER_JSON\n");
		return 2;
	}
	js = json_loads(argv[i], JSON_DECODE_ANY, &je);
	if (!js || tfk_optim_new(js, "optimizer", &o, &err)) {
		fprintf(stderr, "bench-optim: %s\n", js ? err.msg : je.text);
		return 2;
	}
	json_decref(js);
	tfk_optim_set_threads(o, threads);
	for (i = 0; i < 4; i++) {
		int rank = shapes[i][1] ? 2 : 1;
		int64_t n, j;

		tfk_tensor_init(&v[i], TFK_DT_FLOAT, rank, shapes[i], &err);
		tfk_tensor_init(&g[i], TFK_DT_FLOAT, rank, shapes[i], &err);
		n = tfk_tensor_numel(&v[i]);
		for (j = 0; j < n; j++) {
			seed = seed * 1103515245u + 12345u;
			((float *)v[i].data)[j] = (float)(seed >> 8) / 16777216.0f
				- 0.5f;
			((float *)g[i].data)[j] = (float)((seed >> 4) & 0xffff)
				/ 65536.0f - 0.5f;
		}
		vp[i] = &v[i];
		gp[i] = &g[i];
	}
	for (p = 0; p < 6; p++) {
		double t0 = now(), r;

		for (s = 0; s < steps; s++)
			if (tfk_optim_apply(o, 4, vp, gp, &err)) {
				fprintf(stderr, "bench-optim: %s\n", err.msg);
				return 1;
			}
		r = steps / (now() - t0);
		if (p && r > best)	/* pass 0 warms up */
			best = r;
	}
	printf("%.1f\n", best);
	tfk_optim_free(o);
	for (i = 0; i < 4; i++) {
		tfk_tensor_release(&v[i]);
		tfk_tensor_release(&g[i]);
	}
	return 0;
}
