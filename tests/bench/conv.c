/*
 * conv.c - bench driver: Conv2D forward + both gradients per second.
 *
 *   conv [-t THREADS] [-s SECONDS] [-i ISA] [-p float32|bf16]
 *        N H W C KH KW O [SAME|VALID]
 *
 * Runs tfk_cpu_conv2d, tfk_cpu_conv2d_bp_input and
 * tfk_cpu_conv2d_bp_filter (stride 1) on random float32 data, as one
 * training step's conv work, for about SECONDS (default 3), and prints
 * one line: "steps/s fwd_ms bpi_ms bpf_ms isa". bench-conv.sh runs it
 * next to PyTorch. -p bf16 times the mixed_bfloat16 kernels instead
 * (tfk_cpu_conv2d_bf16 and its backprops; isa then reads
 * "avx512bf16", or "bf16-scalar" for the fallback that
 * TFK_BF16_SCALAR=1 forces; -i does not apply to them).
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
	int bf = 0;
	int (*fwd)(const struct tfk_conv2d *, const struct tfk_tensor *,
		   const struct tfk_tensor *, struct tfk_tensor *, int,
		   struct tfk_conv_ws *, struct tfk_err *) = tfk_cpu_conv2d;
	int (*bpi)(const struct tfk_conv2d *, const struct tfk_tensor *,
		   const struct tfk_tensor *, struct tfk_tensor *, int,
		   struct tfk_conv_ws *, struct tfk_err *) =
		tfk_cpu_conv2d_bp_input;
	int (*bpf)(const struct tfk_conv2d *, const struct tfk_tensor *,
		   const struct tfk_tensor *, struct tfk_tensor *, int,
		   struct tfk_conv_ws *, struct tfk_err *) =
		tfk_cpu_conv2d_bp_filter;

	if ((rc = conv_args_parse(&c, &g, argc, argv, "conv",
				  tfk_cpu_conv_isa)))
		return rc;
	if (c.prec && strcmp(c.prec, "float32")) {
		if (strcmp(c.prec, "bf16")) {
			fprintf(stderr, "conv: -p %s: expected float32 or "
				"bf16\n", c.prec);
			return 2;
		}
		bf = 1;
		fwd = tfk_cpu_conv2d_bf16;
		bpi = tfk_cpu_conv2d_bp_input_bf16;
		bpf = tfk_cpu_conv2d_bp_filter_bf16;
	}
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
		if (fwd(&g, &x, &f, &y, c.threads, &w1, &err))
			break;
		tf += now() - t1;
		t1 = now();
		/* y serves as out_backprop: same shape */
		if (bpi(&g, &f, &y, &dx, c.threads, &w2,
					    &err))
			break;
		ti += now() - t1;
		t1 = now();
		if (bpf(&g, &x, &y, &df, c.threads, &w3,
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
	       !bf ? tfk_cpu_conv_isa(NULL) : tfk_cpu_have_avx512bf16() ?
	       "avx512bf16" : "bf16-scalar");
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
