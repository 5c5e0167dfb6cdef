/*
 * conv.c - bench driver: Conv2D forward + both gradients per second.
 *
 *   conv [-t THREADS] [-s SECONDS] [-i ISA] N H W C KH KW O [SAME|VALID]
 *
 * Runs tfk_cpu_conv2d, tfk_cpu_conv2d_bp_input and
 * tfk_cpu_conv2d_bp_filter (stride 1) on random float32 data, as one
 * training step's conv work, for about SECONDS (default 3), and prints
 * one line: "steps/s fwd_ms bpi_ms bpf_ms isa". bench-conv.sh runs it
 * next to PyTorch.
 */
#include "kernels/cpu.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fill(struct tfk_tensor *t, unsigned seed)
{
	float *p = t->data;
	int64_t i, n = tfk_tensor_numel(t);

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
	}
}

int main(int argc, char **argv)
{
	int threads = 2, i = 1, k;
	double secs = 3, t0, t1, tf = 0, ti = 0, tw = 0;
	const char *isa = NULL;
	struct tfk_conv2d_attrs a = { { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 0 },
				      TFK_CONV_SAME };
	struct tfk_conv2d g;
	struct tfk_tensor x, f, y, dx, df;
	struct tfk_conv_ws w1 = { 0 }, w2 = { 0 }, w3 = { 0 };
	struct tfk_err err = { 0, "" };
	int64_t in[4], fs[4], ys[4];
	long steps = 0;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-t"))
			threads = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-s"))
			secs = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "-i"))
			isa = argv[i + 1];
	}
	if (argc - i < 7) {
		fprintf(stderr, "usage: conv [-t THREADS] [-s SECONDS] "
			"[-i ISA] N H W C KH KW O [SAME|VALID]\n");
		return 2;
	}
	for (k = 0; k < 4; k++)
		in[k] = atoll(argv[i + k]);
	fs[0] = atoll(argv[i + 4]);
	fs[1] = atoll(argv[i + 5]);
	fs[2] = in[3];
	fs[3] = atoll(argv[i + 6]);
	if (argc - i > 7 && !strcmp(argv[i + 7], "VALID"))
		a.padding = TFK_CONV_VALID;
	if (isa && !tfk_cpu_conv_isa(isa)) {
		fprintf(stderr, "conv: isa %s not available\n", isa);
		return 1;
	}
	if (tfk_conv2d_geom(&g, in, fs, 0, &a, &err)) {
		fprintf(stderr, "conv: %s\n", err.msg);
		return 1;
	}
	ys[0] = g.n, ys[1] = g.oh, ys[2] = g.ow, ys[3] = g.o;
	if (tfk_tensor_init(&x, TFK_DT_FLOAT, 4, in, &err) ||
	    tfk_tensor_init(&f, TFK_DT_FLOAT, 4, fs, &err) ||
	    tfk_tensor_init(&y, TFK_DT_FLOAT, 4, ys, &err) ||
	    tfk_tensor_init(&dx, TFK_DT_FLOAT, 4, in, &err) ||
	    tfk_tensor_init(&df, TFK_DT_FLOAT, 4, fs, &err)) {
		fprintf(stderr, "conv: %s\n", err.msg);
		return 1;
	}
	fill(&x, 1);
	fill(&f, 2);
	t0 = now();
	do {
		t1 = now();
		if (tfk_cpu_conv2d(&g, &x, &f, &y, threads, &w1, &err))
			break;
		tf += now() - t1;
		t1 = now();
		/* y serves as out_backprop: same shape */
		if (tfk_cpu_conv2d_bp_input(&g, &f, &y, &dx, threads, &w2,
					    &err))
			break;
		ti += now() - t1;
		t1 = now();
		if (tfk_cpu_conv2d_bp_filter(&g, &x, &y, &df, threads, &w3,
					     &err))
			break;
		tw += now() - t1;
		steps++;
	} while (now() - t0 < secs);
	if (err.code) {
		fprintf(stderr, "conv: %s\n", err.msg);
		return 1;
	}
	printf("%.2f %.3f %.3f %.3f %s\n", steps / (now() - t0),
	       tf / steps * 1e3, ti / steps * 1e3, tw / steps * 1e3,
	       tfk_cpu_conv_isa(NULL));
	tfk_conv_ws_release(&w1);
	tfk_conv_ws_release(&w2);
	tfk_conv_ws_release(&w3);
	tfk_tensor_release(&x);
	tfk_tensor_release(&f);
	tfk_tensor_release(&y);
	tfk_tensor_release(&dx);
	tfk_tensor_release(&df);
	return 0;
}
