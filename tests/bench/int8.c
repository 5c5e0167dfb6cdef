/*
 * int8.c - bench driver: int8 CONV_2D vs our float Conv2D, images/s.
 *
 *   int8 [-t THREADS] [-s SECONDS] [-i ISA] N H W C KH KW O [SAME|VALID]
 *
 * The same layer both ways: tfk_int8_conv2d (per-channel int8 weights,
 * packed once by tfk_int8_pack_conv, as an interpreter holds them;
 * requantization included) and tfk_cpu_conv2d on float32, each for
 * about SECONDS (default 2) on a batch of N images, alternating
 * quarters so that a disturbance on the shared machine hits both.
 * Prints one line: "int8_ips float_ips int8_isa float_isa";
 * bench-int8.sh turns it into the JSON report.
 */
#include "conv-args.h"
#include "kernels/int8.h"

static uint32_t seed = 12345;

static uint32_t rnd(void)
{
	seed = seed * 1103515245u + 12345u;
	return seed >> 8;
}

int main(int argc, char **argv)
{
	struct conv_args c = { .threads = 2, .secs = 2 };
	int rc, half;
	double t, ti = 0, tf = 0;
	long ni = 0, nf = 0;
	struct tfk_conv2d g;
	struct tfk_tensor x, f, y;
	struct tfk_conv_ws w1 = { 0 }, w2 = { 0 };
	struct tfk_err err = { 0, "" };
	struct tfk_int8_rq rq;
	struct tfk_int8_packed p;
	int64_t n, j;
	int8_t *x8, *f8, *y8;
	int32_t *bias;
	float in_s = 0.02f, out_s = 0.05f, *w_s;
	int32_t in_z = -3, out_z = 5;

	if ((rc = conv_args_parse(&c, &g, argc, argv, "int8", tfk_int8_isa)))
		return rc;
	if (tfk_tensor_init(&x, TFK_DT_FLOAT, 4, c.in, &err) ||
	    tfk_tensor_init(&f, TFK_DT_FLOAT, 4, c.fs, &err) ||
	    tfk_tensor_init(&y, TFK_DT_FLOAT, 4, c.ys, &err)) {
		fprintf(stderr, "int8: %s\n", err.msg);
		return 1;
	}
	n = tfk_tensor_numel(&x);
	x8 = malloc((size_t)n);
	for (j = 0; j < n; j++) {
		x8[j] = (int8_t)(rnd() & 0xff);
		((float *)x.data)[j] = (x8[j] - in_z) * in_s;
	}
	/* OHWI int8 filter and the float HWIO one with the same values */
	n = g.o * g.kh * g.kw * g.c;
	f8 = malloc((size_t)n);
	w_s = malloc(sizeof(float) * (size_t)g.o);
	bias = malloc(sizeof(int32_t) * (size_t)g.o);
	for (j = 0; j < g.o; j++) {
		w_s[j] = 0.01f + 0.0001f * (float)j;
		bias[j] = (int32_t)(rnd() % 2001) - 1000;
	}
	for (j = 0; j < n; j++) {
		int64_t o = j / (g.kh * g.kw * g.c), r = j % (g.kh * g.kw * g.c);

		f8[j] = (int8_t)((int)(rnd() % 255) - 127);
		((float *)f.data)[r * g.o + o] = f8[j] * w_s[o];
	}
	y8 = malloc((size_t)tfk_tensor_numel(&y));
	{
		struct tfk_int8_qp qi = { &in_s, &in_z, 1 };
		struct tfk_int8_qp qw = { w_s, NULL, g.o };
		struct tfk_int8_qp qo = { &out_s, &out_z, 1 };

		if (tfk_int8_rq_init(&rq, g.o, &qi, &qw, &qo, 1, &err) ||
		    tfk_int8_pack_conv(&p, g.o, g.kh, g.kw, g.c, f8, &err)) {
			fprintf(stderr, "int8: %s\n", err.msg);
			return 1;
		}
	}
	/* warm up both, then alternate halves of the time */
	tfk_int8_conv2d(&g, &rq, x8, &p, bias, y8, c.threads, &w1, &err);
	tfk_cpu_conv2d(&g, &x, &f, &y, c.threads, &w2, &err);
	for (half = 0; half < 4; half++) {
		t = now();
		do {
			if (tfk_int8_conv2d(&g, &rq, x8, &p, bias, y8,
					    c.threads,
					    &w1, &err))
				break;
			ni++;
		} while (now() - t < c.secs / 4);
		ti += now() - t;
		t = now();
		do {
			if (tfk_cpu_conv2d(&g, &x, &f, &y, c.threads, &w2,
					   &err))
				break;
			nf++;
		} while (now() - t < c.secs / 4);
		tf += now() - t;
	}
	if (err.code) {
		fprintf(stderr, "int8: %s\n", err.msg);
		return 1;
	}
	printf("%.1f %.1f %s %s\n", ni * g.n / ti, nf * g.n / tf,
	       tfk_int8_isa(NULL), tfk_cpu_conv_isa(NULL));
	tfk_int8_rq_release(&rq);
	tfk_int8_packed_release(&p);
	tfk_conv_ws_release(&w1);
	tfk_conv_ws_release(&w2);
	tfk_tensor_release(&x);
	tfk_tensor_release(&f);
	tfk_tensor_release(&y);
	free(x8);
	free(f8);
	free(y8);
	free(w_s);
	free(bias);
	return 0;
}
