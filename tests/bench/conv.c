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
#include "conv-args.h"

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
	struct conv_args c = { .threads = 2, .secs = 3 };
	int rc;
	double t0, t1, tf = 0, ti = 0, tw = 0;
	struct tfk_conv2d g;
	struct tfk_tensor x, f, y, dx, df;
	struct tfk_conv_ws w1 = { 0 }, w2 = { 0 }, w3 = { 0 };
	struct tfk_err err = { 0, "" };
	long steps = 0;

	if ((rc = conv_args_parse(&c, &g, argc, argv, "conv",
				  tfk_cpu_conv_isa)))
		return rc;
	if (tfk_tensor_init(&x, TFK_DT_FLOAT, 4, c.in, &err) ||
	    tfk_tensor_init(&f, TFK_DT_FLOAT, 4, c.fs, &err) ||
	    tfk_tensor_init(&y, TFK_DT_FLOAT, 4, c.ys, &err) ||
	    tfk_tensor_init(&dx, TFK_DT_FLOAT, 4, c.in, &err) ||
	    tfk_tensor_init(&df, TFK_DT_FLOAT, 4, c.fs, &err)) {
		fprintf(stderr, "conv: %s\n", err.msg);
		return 1;
	}
	fill(&x, 1);
	fill(&f, 2);
	t0 = now();
	do {
		t1 = now();
		if (tfk_cpu_conv2d(&g, &x, &f, &y, c.threads, &w1, &err))
			break;
		tf += now() - t1;
		t1 = now();
		/* y serves as out_backprop: same shape */
		if (tfk_cpu_conv2d_bp_input(&g, &f, &y, &dx, c.threads, &w2,
					    &err))
			break;
		ti += now() - t1;
		t1 = now();
		if (tfk_cpu_conv2d_bp_filter(&g, &x, &y, &df, c.threads, &w3,
					     &err))
			break;
		tw += now() - t1;
		steps++;
	} while (now() - t0 < c.secs);
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
