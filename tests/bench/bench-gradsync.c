/*
 * bench-gradsync.c - tfk-train's fused gradient sum (nn/gradsync.h)
 * alone: K float32 tensors of MB MiB in all, fetched from an executor
 * (Identity of fed values, as the gradients come out of the backward
 * pass), copied into the fusion buffer, summed across the ranks in
 * buckets of BUCKET bytes, and made means.
 *
 *   mpirun -np N bench-gradsync [--mb MB] [--tensors K] [--iters I]
 *                               [--bucket BYTES]
 *
 * Rank 0 prints the best of 3 passes of I iterations (after one
 * warm-up) as the algorithm bandwidth, MB per second of the summed
 * bytes, on stdout: what tests/bench/mpi/allreduce.c prints for a bare
 * MPI_Allreduce of the same bytes. The time is that of the runs with
 * the sums less that of the same runs without them (a second executor
 * of the graph): what the sums add to a step, copying the gradients in
 * included, making them (the backward pass's work) not.
 */
#include "graph/exec.h"
#include "graph/graph.h"
#include "nn/gradsync.h"
#include "util/mpi.h"

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

static void die(const struct tfk_err *err)
{
	fprintf(stderr, "bench-gradsync: %s\n", err->msg);
	exit(1);
}

int main(int argc, char **argv)
{
	struct tfk_err err = { 0, "" };
	struct tfk_graph *g;
	struct tfk_exec *x, *x0;
	struct tfk_gradsync *gs;
	double mb = 64, best = 0;
	long bucket = 64L << 20;
	int k = 8, iters = 20, i, j, p;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--mb"))
			mb = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--tensors"))
			k = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--iters"))
			iters = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--bucket"))
			bucket = atol(argv[i + 1]);
	}
	if (k < 1 || iters < 1 || mb <= 0 || bucket < 4) {
		fprintf(stderr, "usage: bench-gradsync [--mb MB] [--tensors K] "
			"[--iters I] [--bucket BYTES]\n");
		return 2;
	}
	if (tfk_mpi_init(&err) || tfk_graph_new(&g, &err))
		die(&err);
	{
		int64_t per = (int64_t)(mb * (1 << 20) / 4 / k);
		char name[32];
		char **feeds = calloc((size_t)k + 1, sizeof(char *));
		char **fetch = calloc((size_t)k + 1, sizeof(char *));
		struct tfk_tensor *in = calloc((size_t)k + 1, sizeof(*in));
		const struct tfk_tensor **out = calloc((size_t)k + 1,
						       sizeof(*out));
		const struct tfk_tensor **like = calloc((size_t)k, sizeof(*like));
		int *which = calloc((size_t)k, sizeof(int));
		int64_t one = 1;

		for (j = 0; j <= k; j++) {
			struct tfk_port ph, id;
			int64_t n = j ? per : 1;

			snprintf(name, sizeof(name), "in%d", j);
			feeds[j] = strdup(name);
			if (tfk_graph_placeholder(g, name, TFK_DT_FLOAT, 1, &n,
						  &ph, &err))
				die(&err);
			snprintf(name, sizeof(name), "g%d", j);
			fetch[j] = strdup(name);
			if (tfk_graph_add_node(g, "Identity", name, &ph, 1, NULL,
					       0, &id, &err) ||
			    tfk_tensor_init(&in[j], TFK_DT_FLOAT, 1,
					    j ? &per : &one, &err))
				die(&err);
			for (int64_t e = 0; e < n; e++)
				((float *)in[j].data)[e] = 1.0f;
			if (j) {
				like[j - 1] = &in[j];
				which[j - 1] = j;
			}
		}
		if (tfk_exec_new(&x, g, (const char *const *)feeds, k + 1,
				 (const char *const *)fetch, k + 1, NULL, &err) ||
		    tfk_exec_new(&x0, g, (const char *const *)feeds, k + 1,
				 (const char *const *)fetch, k + 1, NULL, &err) ||
		    tfk_gradsync_new(&gs, x, k, which, like, 0, (size_t)bucket,
				     &err))
			die(&err);
		for (p = 0; p < 4; p++) {
			double t0 = now(), t1, w;
			int bad;

			for (i = 0; i < iters; i++) {
				tfk_gradsync_begin(gs, 1, tfk_mpi_size());
				if (tfk_exec_run(x, in, 0, out, &err) ||
				    tfk_gradsync_end(gs, &w, &bad, &err))
					die(&err);
			}
			t1 = now();
			for (i = 0; i < iters; i++)
				if (tfk_exec_run(x0, in, 0, out, &err))
					die(&err);
			t0 = (t1 - t0) - (now() - t1);
			if (p && t0 > 0 && (!best || t0 < best))
				best = t0;
		}
		if (!tfk_mpi_rank())
			printf("%.1f\n", (double)tfk_gradsync_bytes(gs) * iters /
			       best / 1e6);
	}
	tfk_mpi_finalize();
	return 0;
}
