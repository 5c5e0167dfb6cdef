/*
 * t-int8.c - the int8 kernels (lib/kernels/int8.h) against TFLite's
 * arithmetic.
 *
 * 1. Known values: QuantizeMultiplier, SRDHM, RoundingDivideByPOT and
 *    the activation clamps on hand-checked inputs (gemmlowp's ties: up
 *    in SRDHM, away from zero in RDBPOT; the 2^31 carry, the flush
 *    below 2^-31).
 * 2. Every _ref (and the activation tables) on random inputs with
 *    random scales and zero points, bit-exact against
 *    tests/py/int8_ref.py (an independent numpy model of TFLite's
 *    reference integer kernels): the cases are written to a temporary
 *    directory, the oracle runs once over all of them.
 * 3. Meaning: int8 CONV_2D/DEPTHWISE within one quantum of the float
 *    conv of the dequantized values; TensorFlow's hello_world_int8
 *    .tflite run through our FC gives sin(x) within 0.05; the fixture
 *    add_quantized's x + x + x.
 * 4. The fast FC and CONV_2D on every instruction set this CPU has
 *    ("c", "avx2", "avx512vnni"), bit-exact against the _refs, with odd
 *    sizes, tails, threads, extreme zero points and a K large enough
 *    for the int32 accumulator to wrap.
 * 5. Bad parameters: zero, negative, NaN scales, zero points outside the
 *    type, scale counts that do not fit, asymmetric per-channel filters,
 *    unsupported fused activations, shapes that do not broadcast, and
 *    failed allocations.
 */
#include "kernels/int8.h"
#include "format/tflite.h"
#include "util/alloc.h"

#include "tap.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static int ri(int lo, int hi)	/* [lo, hi] */
{
	return lo + (int)(rnd() % (uint32_t)(hi - lo + 1));
}

static double ru(double lo, double hi)
{
	return lo + (hi - lo) * (rnd() / 4294967296.0);
}

static float rscale(void)
{
	return (float)(exp2(ru(-10, -2)) * ru(1, 2));
}

static void fill8(int8_t *p, int64_t n)
{
	int64_t i;

	for (i = 0; i < n; i++)
		p[i] = (int8_t)ri(-128, 127);
}

/* Oracle cases ----------------------------------------------------------- */

#define MAX_CASES 64
static struct ocase {
	char base[512];
	char label[96];
	void *want;		/* our output */
	size_t n;
} cases[MAX_CASES];
static int n_cases;
static char odir[400];

static FILE *case_open(const char *op, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static FILE *case_open(const char *op, const char *fmt, ...)
{
	struct ocase *c = &cases[n_cases];
	char path[600];
	va_list ap;
	FILE *fp;

	va_start(ap, fmt);
	vsnprintf(c->label, sizeof(c->label), fmt, ap);
	va_end(ap);
	snprintf(c->base, sizeof(c->base), "%s/c%02d", odir, n_cases);
	snprintf(path, sizeof(path), "%.500s.txt", c->base);
	fp = fopen(path, "w");
	if (fp)
		fprintf(fp, "op %s\n", op);
	return fp;
}

static void case_bin(const char *ext, const void *p, size_t n)
{
	char path[600];

	snprintf(path, sizeof(path), "%.500s.%.20s", cases[n_cases].base, ext);
	tap_write_file(path, p, n);
}

/* Takes ownership of want (malloc'd). */
static void case_close(FILE *fp, void *want, size_t n)
{
	if (fp)
		fclose(fp);
	cases[n_cases].want = want;
	cases[n_cases].n = n;
	n_cases++;
}

struct qset {
	float in_s, out_s, w_s[64];
	int32_t in_z, out_z, w_z;
	int nw, act;
};

static void rand_q(struct qset *q, int channels, int per_channel, int k)
{
	int i;
	double avg = 0;

	q->in_s = rscale();
	q->in_z = ri(-128, 127);
	q->nw = per_channel ? channels : 1;
	for (i = 0; i < q->nw; i++) {
		q->w_s[i] = (float)(ru(0.002, 0.02));
		avg += q->w_s[i];
	}
	avg /= q->nw;
	q->w_z = 0;
	q->out_s = (float)(q->in_s * avg * sqrt((double)k) * 60 *
			   ru(0.3, 2));
	q->out_z = ri(-100, 100);
	q->act = (int[]){ 0, 1, 3, 2 }[ri(0, 3)];
}

static int make_rq(struct tfk_int8_rq *rq, const struct qset *q, int64_t ch)
{
	struct tfk_int8_qp in = { &q->in_s, &q->in_z, 1 };
	struct tfk_int8_qp w = { q->w_s, q->nw > 1 ? NULL : &q->w_z, q->nw };
	struct tfk_int8_qp out = { &q->out_s, &q->out_z, 1 };
	struct tfk_err err = { 0, "" };
	int rc = tfk_int8_rq_init(rq, ch, &in, &w, &out, q->act, &err);

	if (rc)
		tap_diag("rq_init: %s", err.msg);
	return rc;
}

static void q_lines(FILE *fp, const struct qset *q)
{
	int i;

	fprintf(fp, "in_scale %.9g\nin_zp %d\nout_scale %.9g\nout_zp %d\n"
		"w_zp %d\nact %d\nw_scales", (double)q->in_s, (int)q->in_z,
		(double)q->out_s, (int)q->out_z, (int)q->w_z, q->act);
	for (i = 0; i < q->nw; i++)
		fprintf(fp, " %.9g", (double)q->w_s[i]);
	fprintf(fp, "\n");
}

static void fc_case(int batch, int in, int out, int per_channel, int bias,
		    int w_zp)
{
	struct qset q;
	struct tfk_int8_rq rq;
	int8_t *x = malloc((size_t)batch * in), *w = malloc((size_t)out * in);
	int8_t *y = malloc((size_t)batch * out);
	int32_t *b = malloc((size_t)out * 4);
	FILE *fp;
	int i;

	rand_q(&q, out, per_channel, in);
	q.w_z = per_channel ? 0 : w_zp;
	fill8(x, (int64_t)batch * in);
	fill8(w, (int64_t)out * in);
	for (i = 0; i < out; i++)
		b[i] = ri(-20000, 20000);
	make_rq(&rq, &q, out);
	tfk_int8_fc_ref(&rq, batch, in, out, x, w, bias ? b : NULL, y);
	tfk_int8_rq_release(&rq);
	fp = case_open("fc", "FULLY_CONNECTED [%d, %d] -> %d%s%s act %d",
		       batch, in, out, per_channel ? " per-channel" : "",
		       bias ? " bias" : "", q.act);
	if (fp) {
		fprintf(fp, "dims %d %d %d\nbias %d\n", batch, in, out, bias);
		q_lines(fp, &q);
	}
	case_bin("x", x, (size_t)batch * in);
	case_bin("w", w, (size_t)out * in);
	case_bin("b", b, (size_t)out * 4);
	case_close(fp, y, (size_t)batch * out);
	free(x);
	free(w);
	free(b);
}

static int conv_geom(struct tfk_conv2d *g, int n, int h, int w, int c,
		     int kh, int kw, int kc, int o, int s, int d, int same,
		     int depthwise)
{
	struct tfk_conv2d_attrs a = { { 1, s, s, 1 }, { 1, d, d, 1 }, { 0 },
				      same ? TFK_CONV_SAME : TFK_CONV_VALID };
	int64_t in[4] = { n, h, w, c }, f[4];
	struct tfk_err err = { 0, "" };

	if (depthwise) {
		f[0] = kh, f[1] = kw, f[2] = c, f[3] = kc;
	} else {
		f[0] = kh, f[1] = kw, f[2] = kc, f[3] = o;
	}
	if (tfk_conv2d_geom(g, in, f, depthwise, &a, &err)) {
		tap_diag("geom: %s", err.msg);
		return -1;
	}
	return 0;
}

/* depthwise: kc is the multiplier */
static void conv_case(int n, int h, int w, int c, int kh, int kw, int kc,
		      int o, int s, int d, int same, int depthwise,
		      int per_channel)
{
	struct tfk_conv2d g;
	struct qset q;
	struct tfk_int8_rq rq;
	int64_t nx, nf, ny;
	int8_t *x, *f, *y;
	int32_t *b;
	FILE *fp;
	int i;

	if (conv_geom(&g, n, h, w, c, kh, kw, kc, o, s, d, same, depthwise))
		return;
	nx = g.n * g.h * g.w * g.c;
	nf = depthwise ? kh * kw * g.o : g.o * kh * kw * kc;
	ny = g.n * g.oh * g.ow * g.o;
	x = malloc((size_t)nx);
	f = malloc((size_t)nf);
	y = malloc((size_t)ny);
	b = malloc((size_t)g.o * 4);
	rand_q(&q, (int)g.o, per_channel, depthwise ? kh * kw : kh * kw * kc);
	fill8(x, nx);
	fill8(f, nf);
	for (i = 0; i < g.o; i++)
		b[i] = ri(-5000, 5000);
	make_rq(&rq, &q, g.o);
	if (depthwise)
		tfk_int8_dwconv2d_ref(&g, &rq, x, f, b, y);
	else
		tfk_int8_conv2d_ref(&g, &rq, x, f, b, y);
	tfk_int8_rq_release(&rq);
	fp = case_open(depthwise ? "dwconv" : "conv", "%s %dx%dx%dx%d k%dx%d "
		       "%s%d s%d d%d %s%s act %d",
		       depthwise ? "DEPTHWISE_CONV_2D" : "CONV_2D", n, h, w, c,
		       kh, kw, depthwise ? "mult " : "-> ",
		       depthwise ? kc : o, s, d, same ? "SAME" : "VALID",
		       per_channel ? " per-channel" : "", q.act);
	if (fp) {
		fprintf(fp, "input %d %d %d %d\nfilter %d %d %d %d\n"
			"strides %d %d\ndilations %d %d\npadding %s\n"
			"bias 1\n", n, h, w, c, kh, kw, kc, (int)g.o, s, s,
			d, d, same ? "SAME" : "VALID");
		q_lines(fp, &q);
	}
	case_bin("x", x, (size_t)nx);
	case_bin("w", f, (size_t)nf);
	case_bin("b", b, (size_t)g.o * 4);
	case_close(fp, y, (size_t)ny);
	free(x);
	free(f);
	free(b);
}

static void pool_case(int avg, int n, int h, int w, int c, int k, int s,
		      int same, int act)
{
	struct tfk_pool2d p;
	int64_t in[4] = { n, h, w, c }, ks[4] = { 1, k, k, 1 };
	int64_t st[4] = { 1, s, s, 1 };
	struct tfk_err err = { 0, "" };
	float scale = rscale();
	int32_t zp = ri(-128, 127), lo, hi;
	int8_t *x, *y;
	FILE *fp;

	if (tfk_pool2d_geom(&p, in, ks, st, same ? "SAME" : "VALID", &err) ||
	    tfk_int8_act_range(act, scale, zp, -128, 127, &lo, &hi, &err)) {
		tap_diag("pool: %s", err.msg);
		return;
	}
	x = malloc((size_t)(n * h * w * c));
	y = malloc((size_t)(p.n * p.oh * p.ow * p.c));
	fill8(x, n * h * w * c);
	if (avg)
		tfk_int8_avg_pool_ref(&p, lo, hi, x, y);
	else
		tfk_int8_max_pool_ref(&p, lo, hi, x, y);
	fp = case_open(avg ? "avgpool" : "maxpool", "%s %dx%dx%dx%d k%d s%d "
		       "%s act %d", avg ? "AVERAGE_POOL_2D" : "MAX_POOL_2D",
		       n, h, w, c, k, s, same ? "SAME" : "VALID", act);
	if (fp)
		fprintf(fp, "input %d %d %d %d\nksize %d %d\nstrides %d %d\n"
			"padding %s\nact %d\nscale %.9g\nzp %d\n", n, h, w, c,
			k, k, s, s, same ? "SAME" : "VALID", act,
			(double)scale, (int)zp);
	case_bin("x", x, (size_t)(n * h * w * c));
	case_close(fp, y, (size_t)(p.n * p.oh * p.ow * p.c));
	free(x);
}

static int64_t numel(int r, const int64_t *s)
{
	int64_t n = 1;

	while (r-- > 0)
		n *= s[r];
	return n;
}

static void bin_case(enum tfk_int8_binop op, int r1, const int64_t *s1,
		     int r2, const int64_t *s2, int act, int u8)
{
	static const char *const names[] = { "add", "sub", "mul" };
	struct tfk_int8_bin b;
	struct tfk_err err = { 0, "" };
	float sc[3] = { rscale(), rscale(), 0 };
	int32_t zp[3] = { ri(-128, 127), ri(-128, 127), ri(-128, 127) };
	enum tfk_dtype dt = u8 ? TFK_DT_UINT8 : TFK_DT_INT8;
	struct tfk_int8_qp q1 = { &sc[0], &zp[0], 1 }, q2 = { &sc[1], &zp[1],
							       1 };
	struct tfk_int8_qp qo = { &sc[2], &zp[2], 1 };
	int64_t so[8], n1 = numel(r1, s1), n2 = numel(r2, s2), ny;
	int8_t *x1, *x2, *y;
	int ro, k;
	FILE *fp;

	if (u8) {		/* the same offsets, in uint8's range */
		zp[0] += 128;
		zp[1] += 128;
		zp[2] += 128;
	}
	sc[2] = op == TFK_INT8_MUL ? (float)(sc[0] * sc[1] * ru(20, 200)) :
		(float)((sc[0] > sc[1] ? sc[0] : sc[1]) * ru(0.5, 3));
	if (tfk_shape_broadcast(r1, s1, r2, s2, &ro, so, &err) ||
	    tfk_int8_bin_init(&b, op, dt, &q1, &q2, &qo, act, &err)) {
		tap_diag("bin: %s", err.msg);
		return;
	}
	ny = numel(ro, so);
	x1 = malloc((size_t)n1);
	x2 = malloc((size_t)n2);
	y = malloc((size_t)ny);
	fill8(x1, n1);
	fill8(x2, n2);
	if (tfk_int8_bin_ref(&b, r1, s1, x1, r2, s2, x2, y, &err))
		tap_diag("bin_ref: %s", err.msg);
	fp = case_open("bin", "%s%s rank %d x rank %d act %d", names[op],
		       u8 ? " uint8" : "", r1, r2, act);
	if (fp) {
		fprintf(fp, "kind %s\nuint8 %d\nshape1", names[op], u8);
		for (k = 0; k < r1; k++)
			fprintf(fp, " %lld", (long long)s1[k]);
		fprintf(fp, "\nshape2");
		for (k = 0; k < r2; k++)
			fprintf(fp, " %lld", (long long)s2[k]);
		fprintf(fp, "\nscale1 %.9g\nscale2 %.9g\nout_scale %.9g\n"
			"zp1 %d\nzp2 %d\nout_zp %d\nact %d\n", (double)sc[0],
			(double)sc[1], (double)sc[2], (int)zp[0], (int)zp[1],
			(int)zp[2], act);
	}
	case_bin("x", x1, (size_t)n1);
	case_bin("x2", x2, (size_t)n2);
	case_close(fp, y, (size_t)ny);
	free(x1);
	free(x2);
}

static void softmax_case(int rows, int depth, float beta, int u8,
			 float out_scale, int32_t out_zp)
{
	struct tfk_int8_softmax s;
	struct tfk_err err = { 0, "" };
	float in_scale = (float)ru(0.005, 0.06);
	struct tfk_int8_qp in = { &in_scale, NULL, 1 };
	struct tfk_int8_qp out = { &out_scale, &out_zp, 1 };
	uint8_t *x = malloc((size_t)(rows * depth));
	uint8_t *y = malloc((size_t)(rows * depth));
	FILE *fp;
	int i;

	for (i = 0; i < rows * depth; i++)
		x[i] = (uint8_t)rnd();
	/* one row of equal values, one with a single outlier */
	memset(x, 7, (size_t)depth);
	if (rows > 1) {
		memset(x + depth, 0x80, (size_t)depth);
		x[depth + 1] = 0x7f;
	}
	if (tfk_int8_softmax_init(&s, beta, &in, &out, u8, &err))
		tap_diag("softmax: %s", err.msg);
	tfk_int8_softmax_ref(&s, rows, depth, x, y);
	fp = case_open("softmax", "SOFTMAX %s [%d, %d] beta %g",
		       u8 ? "uint8" : "int8", rows, depth, (double)beta);
	if (fp)
		fprintf(fp, "dims %d %d\nuint8 %d\nbeta %.9g\nin_scale %.9g\n"
			"out_scale %.9g\nout_zp %d\n", rows, depth, u8,
			(double)beta, (double)in_scale, (double)out_scale,
			(int)out_zp);
	case_bin("x", x, (size_t)(rows * depth));
	case_close(fp, y, (size_t)(rows * depth));
	free(x);
}

static void lut_case(enum tfk_int8_unop op)
{
	static const char *const kinds[] = { "relu", "relu1", "relu6",
					     "logistic", "tanh" };
	float si = (float)ru(0.01, 0.08), so;
	int32_t zi = ri(-60, 60), zo;
	struct tfk_int8_qp qi = { &si, &zi, 1 }, qo = { &so, &zo, 1 };
	struct tfk_int8_lut a;
	struct tfk_err err = { 0, "" };
	int8_t x[256], *y = malloc(256);
	FILE *fp;
	int i;

	/* TFLite's outputs for LOGISTIC and TANH; RELUs rescale */
	so = op == TFK_INT8_LOGISTIC ? 1.0f / 256 : op == TFK_INT8_TANH ?
	     1.0f / 128 : (float)(si * ru(0.5, 2));
	zo = op == TFK_INT8_LOGISTIC ? -128 : op == TFK_INT8_TANH ? 0 :
	     ri(-128, 20);
	for (i = 0; i < 256; i++)
		x[i] = (int8_t)(i - 128);
	if (tfk_int8_lut_init(&a, op, &qi, &qo, &err))
		tap_diag("lut: %s", err.msg);
	tfk_int8_lut_ref(&a, 256, x, y);
	fp = case_open("lut", "%s int8 (all 256 inputs)", kinds[op]);
	if (fp)
		fprintf(fp, "kind %s\nin_scale %.9g\nin_zp %d\nout_scale %.9g\n"
			"out_zp %d\n", kinds[op], (double)si, (int)zi,
			(double)so, (int)zo);
	case_bin("x", x, 256);
	case_close(fp, y, 256);
}

static void quantize_cases(void)
{
	enum { N = 500 };
	float x[N], scale = (float)ru(0.01, 0.1);
	int32_t zp = ri(-20, 20), zpu = ri(100, 150);
	struct tfk_int8_qp q = { &scale, &zp, 1 }, qu = { &scale, &zpu, 1 };
	struct tfk_err err = { 0, "" };
	int8_t *y = malloc(N);
	uint8_t *yu = malloc(N);
	FILE *fp;
	int i;

	for (i = 0; i < N; i++)
		x[i] = (float)ru(-8, 8);
	/* exact ties, the ends, non-finite */
	x[0] = scale * 2.5f;
	x[1] = -scale * 2.5f;
	x[2] = INFINITY;
	x[3] = -INFINITY;
	x[4] = NAN;
	x[5] = 1e30f;
	x[6] = -1e30f;
	x[7] = 0;
	x[8] = -0.0f;
	x[9] = scale * 0.5f;
	tfk_int8_quantize_ref(&q, TFK_DT_INT8, N, x, y, &err);
	tfk_int8_quantize_ref(&qu, TFK_DT_UINT8, N, x, yu, &err);
	fp = case_open("quantize", "QUANTIZE float -> int8");
	if (fp)
		fprintf(fp, "dims %d\nscale %.9g\nzp %d\nuint8 0\n", N,
			(double)scale, (int)zp);
	case_bin("x", x, sizeof(x));
	case_close(fp, y, N);
	fp = case_open("quantize", "QUANTIZE float -> uint8");
	if (fp)
		fprintf(fp, "dims %d\nscale %.9g\nzp %d\nuint8 1\n", N,
			(double)scale, (int)zpu);
	case_bin("x", x, sizeof(x));
	case_close(fp, yu, N);
}

static void dequantize_case(int per_channel, int u8)
{
	int64_t shape[3] = { 4, 5, 6 };
	float sc[5];
	int32_t zp[5];
	struct tfk_int8_qp q = { sc, zp, per_channel ? 5 : 1 };
	struct tfk_err err = { 0, "" };
	uint8_t x[120];
	float *y = malloc(sizeof(float) * 120);
	FILE *fp;
	int i;

	for (i = 0; i < 5; i++) {
		sc[i] = rscale();
		zp[i] = u8 ? ri(0, 255) : ri(-128, 127);
	}
	for (i = 0; i < 120; i++)
		x[i] = (uint8_t)rnd();
	if (tfk_int8_dequantize_ref(&q, u8 ? TFK_DT_UINT8 : TFK_DT_INT8, 3,
				    shape, 1, x, y, &err))
		tap_diag("dequantize: %s", err.msg);
	fp = case_open("dequantize", "DEQUANTIZE %s%s", u8 ? "uint8" : "int8",
		       per_channel ? " per-channel (axis 1)" : "");
	if (fp) {
		fprintf(fp, "shape 4 5 6\naxis 1\nuint8 %d\nscales", u8);
		for (i = 0; i < q.n; i++)
			fprintf(fp, " %.9g", (double)sc[i]);
		fprintf(fp, "\nzps");
		for (i = 0; i < q.n; i++)
			fprintf(fp, " %d", (int)zp[i]);
		fprintf(fp, "\n");
	}
	case_bin("x", x, sizeof(x));
	case_close(fp, y, sizeof(float) * 120);
}

static void requantize_case(int iu8, int ou8)
{
	enum { N = 256 };
	float si = rscale(), so = rscale();
	int32_t zi = iu8 ? ri(0, 255) : ri(-128, 127);
	int32_t zo = ou8 ? ri(0, 255) : ri(-128, 127);
	struct tfk_int8_qp qi = { &si, &zi, 1 }, qo = { &so, &zo, 1 };
	struct tfk_err err = { 0, "" };
	uint8_t x[N], *y = malloc(N);
	FILE *fp;
	int i;

	for (i = 0; i < N; i++)
		x[i] = (uint8_t)i;
	if (tfk_int8_requantize_ref(&qi, iu8 ? TFK_DT_UINT8 : TFK_DT_INT8,
				    &qo, ou8 ? TFK_DT_UINT8 : TFK_DT_INT8, N,
				    x, y, &err))
		tap_diag("requantize: %s", err.msg);
	fp = case_open("requantize", "QUANTIZE %s -> %s",
		       iu8 ? "uint8" : "int8", ou8 ? "uint8" : "int8");
	if (fp)
		fprintf(fp, "dims %d\nin_uint8 %d\nout_uint8 %d\n"
			"in_scale %.9g\nout_scale %.9g\nin_zp %d\n"
			"out_zp %d\n", N, iu8, ou8, (double)si, (double)so,
			(int)zi, (int)zo);
	case_bin("x", x, N);
	case_close(fp, y, N);
}

static void arith_cases(void)
{
	enum { N = 3000 };
	int32_t *t = malloc(sizeof(int32_t) * 3 * N), *y = malloc(4 * N);
	double m[N];
	int32_t *qm = malloc(sizeof(int32_t) * 2 * N);
	struct tfk_err err = { 0, "" };
	FILE *fp;
	int i, sh;

	for (i = 0; i < N; i++) {
		int32_t x = (int32_t)(rnd() << (rnd() % 2 ? 0 : ri(0, 16)));
		int32_t mm;

		if (i % 3 == 0)
			x >>= ri(0, 31);
		if (i < 8)
			x = (int32_t[]){ INT32_MIN, INT32_MAX, 0, -1, 1,
					 -2, 3, INT32_MIN + 1 }[i];
		tfk_int8_quantize_multiplier(exp2(ru(-40, 10)), &mm, &sh,
					     &err);
		if (i % 7 == 0)
			mm = -mm;
		if (i == 9)
			mm = INT32_MIN, x = INT32_MIN, sh = 0;
		t[3 * i] = x;
		t[3 * i + 1] = mm;
		t[3 * i + 2] = sh > 20 ? 20 : sh;
		y[i] = tfk_int8_mbqm(x, mm, t[3 * i + 2]);
	}
	fp = case_open("mbqm", "MultiplyByQuantizedMultiplier, %d triples",
		       N);
	case_bin("x", t, sizeof(int32_t) * 3 * N);
	case_close(fp, y, 4 * N);
	for (i = 0; i < N; i++) {
		m[i] = exp2(ru(-40, 40)) * ru(0.5, 1);
		if (i % 5 == 0)	/* values a rounding step from 2^k */
			m[i] = ldexp(1.0 - ldexp(1.0, -ri(30, 34)), ri(-10, 10));
		if (i < 4)
			m[i] = (double[]){ 0.0, 1.0, 0.5, ldexp(1, -32) }[i];
		tfk_int8_quantize_multiplier(m[i], &qm[2 * i], &sh, &err);
		qm[2 * i + 1] = sh;
	}
	fp = case_open("qmult", "QuantizeMultiplier, %d values", N);
	case_bin("x", m, sizeof(m));
	case_close(fp, qm, sizeof(int32_t) * 2 * N);
	free(t);
}

static void run_oracle(void)
{
	const char *py = getenv("PYTHON") ? getenv("PYTHON") :
		"/usr/bin/python3";
	char cmd[1200];
	int i, rc;

	snprintf(cmd, sizeof(cmd), "%s %s %s", py,
		 tap_source("tests/py/int8_ref.py"), odir);
	rc = system(cmd);
	is_int(rc, 0, "int8_ref.py ran over %d cases", n_cases);
	for (i = 0; i < n_cases; i++) {
		char path[600];
		size_t n = 0;
		void *got;

		snprintf(path, sizeof(path), "%.500s.out", cases[i].base);
		got = tap_read_file(path, &n);
		if (!got || n != cases[i].n || memcmp(got, cases[i].want, n)) {
			size_t k, bad = 0, first = 0;

			for (k = 0; got && k < n && k < cases[i].n; k++)
				if (((uint8_t *)got)[k] !=
				    ((uint8_t *)cases[i].want)[k] && !bad++)
					first = k;
			tap_diag("%s: %zu bytes vs %zu, %zu differ (first at "
				 "%zu)", cases[i].label, n, cases[i].n, bad,
				 first);
		}
		{
			/* outputs that are all one clamp would prove little */
			int seen[256] = { 0 }, distinct = 0;
			size_t k;

			for (k = 0; k < cases[i].n; k++)
				distinct += !seen[((uint8_t *)cases[i].want)[k]]++;
			is_mem(cases[i].want, cases[i].n, got, got ? n : 0,
			       "%s: bit-exact with the numpy model (%d "
			       "distinct bytes)", cases[i].label, distinct);
		}
		free(got);
		free(cases[i].want);
	}
}

static void oracle_cases(void)
{
	static const int64_t a4[4] = { 2, 3, 4, 5 }, c1[1] = { 5 };
	static const int64_t b4[4] = { 2, 1, 4, 1 }, r3[3] = { 3, 1, 5 };
	static const int64_t e0[1] = { 1 }, v6[6] = { 2, 1, 3, 1, 2, 2 };
	static const int64_t w6[6] = { 1, 2, 1, 2, 1, 2 };

	snprintf(odir, sizeof(odir), "%s", tap_tmp("oracle"));
	{
		char cmd[500];

		snprintf(cmd, sizeof(cmd), "mkdir -p %s", odir);
		if (system(cmd))
			tap_diag("mkdir failed");
	}
	fc_case(3, 17, 5, 0, 1, 0);
	fc_case(4, 64, 10, 1, 1, 0);
	fc_case(1, 100, 33, 1, 0, 0);
	fc_case(2, 9, 7, 0, 1, 3);	/* asymmetric per-tensor filter */
	conv_case(2, 7, 6, 3, 3, 3, 3, 5, 1, 1, 1, 0, 1);
	conv_case(1, 9, 8, 4, 3, 2, 4, 6, 2, 1, 1, 0, 0);
	conv_case(1, 8, 9, 2, 3, 3, 2, 4, 1, 2, 0, 0, 1);
	conv_case(1, 6, 6, 4, 2, 2, 2, 6, 1, 1, 1, 0, 1);	/* groups 2 */
	conv_case(1, 11, 10, 3, 5, 5, 3, 8, 2, 1, 1, 0, 1);
	conv_case(2, 5, 5, 8, 1, 1, 8, 3, 1, 1, 0, 0, 0);
	conv_case(1, 7, 7, 3, 3, 3, 1, 0, 1, 1, 1, 1, 1);	/* dw */
	conv_case(2, 8, 6, 4, 3, 3, 2, 0, 2, 1, 1, 1, 1);
	conv_case(1, 9, 9, 2, 3, 3, 3, 0, 1, 2, 0, 1, 0);
	pool_case(0, 2, 7, 6, 3, 2, 2, 1, 0);
	pool_case(0, 1, 9, 9, 4, 3, 2, 0, 3);
	pool_case(1, 2, 7, 6, 3, 3, 2, 1, 0);
	pool_case(1, 1, 8, 8, 5, 2, 2, 0, 1);
	pool_case(1, 1, 5, 7, 2, 5, 1, 1, 0);
	bin_case(TFK_INT8_ADD, 4, a4, 4, a4, 0, 0);
	bin_case(TFK_INT8_ADD, 4, a4, 1, c1, 1, 0);
	bin_case(TFK_INT8_SUB, 4, a4, 4, b4, 0, 0);
	bin_case(TFK_INT8_SUB, 3, r3, 1, e0, 3, 0);
	bin_case(TFK_INT8_MUL, 4, a4, 4, b4, 0, 0);
	bin_case(TFK_INT8_MUL, 6, v6, 6, w6, 1, 0);
	bin_case(TFK_INT8_ADD, 4, a4, 4, b4, 0, 1);
	bin_case(TFK_INT8_MUL, 4, a4, 1, c1, 3, 1);
	softmax_case(5, 10, 1.0f, 0, 1.0f / 256, -128);
	softmax_case(4, 37, 0.5f, 0, 1.0f / 256, -128);
	softmax_case(3, 16, 1.0f, 1, 1.0f / 256, 0);
	softmax_case(3, 9, 2.0f, 0, 0.01f, -20);
	quantize_cases();
	lut_case(TFK_INT8_RELU);
	lut_case(TFK_INT8_RELU_N1_TO_1);
	lut_case(TFK_INT8_RELU6);
	lut_case(TFK_INT8_LOGISTIC);
	lut_case(TFK_INT8_TANH);
	dequantize_case(0, 0);
	dequantize_case(1, 0);
	dequantize_case(1, 1);
	requantize_case(0, 0);
	requantize_case(0, 1);
	requantize_case(1, 0);
	arith_cases();
	run_oracle();
}

/* Known values ----------------------------------------------------------- */

/* QUANTIZE rounds as roundf (half away from zero): every quarter in
 * [-200, 200], the floats either side of each half, and random values */
static void quantize_rounding(void)
{
	enum { N = 1601 + 2 * 401 + 2000 };
	static float x[N];
	static int8_t y[N];
	float one = 1;
	int32_t zp = 0;
	struct tfk_int8_qp q = { &one, &zp, 1 };
	struct tfk_err err = { 0, "" };
	int i, n = 0, bad = 0;

	for (i = -800; i <= 800; i++)
		x[n++] = (float)i / 4;
	for (i = -200; i <= 200; i++) {
		x[n++] = nextafterf((float)i + 0.5f, INFINITY);
		x[n++] = nextafterf((float)i + 0.5f, -INFINITY);
	}
	while (n < N)
		x[n++] = (float)ru(-300, 300);
	if (tfk_int8_quantize_ref(&q, TFK_DT_INT8, N, x, y, &err))
		bad = N;
	for (i = 0; i < N && !bad; i++) {
		float r = roundf(x[i]);
		int v = r > 127 ? 127 : r < -128 ? -128 : (int)r;

		bad += y[i] != v;
	}
	ok(!bad, "QUANTIZE rounds as roundf, half away from zero (%d values: "
	   "quarters, the floats beside each half, random; %d differ)", N,
	   bad);
}

static void known_values(void)
{
	struct tfk_err err = { 0, "" };
	int32_t qm, lo, hi;
	int sh;

	tfk_int8_quantize_multiplier(0.5, &qm, &sh, &err);
	ok(qm == 1 << 30 && sh == 0, "QuantizeMultiplier(0.5) = 2^30, 0");
	tfk_int8_quantize_multiplier(1.0, &qm, &sh, &err);
	ok(qm == 1 << 30 && sh == 1, "QuantizeMultiplier(1) = 2^30, 1");
	tfk_int8_quantize_multiplier(0.75, &qm, &sh, &err);
	ok(qm == 1610612736 && sh == 0, "QuantizeMultiplier(0.75)");
	/* 1 - 2^-33 rounds to 2^31: carried into the exponent */
	tfk_int8_quantize_multiplier(1.0 - ldexp(1, -33), &qm, &sh, &err);
	ok(qm == 1 << 30 && sh == 1, "QuantizeMultiplier(1 - 2^-33) carries "
	   "to 2^30, 1 (got %d, %d)", (int)qm, sh);
	tfk_int8_quantize_multiplier(ldexp(1, -33), &qm, &sh, &err);
	ok(qm == 0 && sh == 0, "QuantizeMultiplier(2^-33) flushes to 0");
	tfk_int8_quantize_multiplier(0, &qm, &sh, &err);
	ok(qm == 0 && sh == 0, "QuantizeMultiplier(0) = 0, 0");
	is_int(tfk_int8_quantize_multiplier(NAN, &qm, &sh, &err), TFK_EINVAL,
	       "QuantizeMultiplier(NaN) refused");
	is_str(err.msg, "multiplier nan", "... saying so");
	is_int(tfk_int8_srdhm(INT32_MIN, INT32_MIN), INT32_MAX,
	       "SRDHM(min, min) saturates");
	is_int(tfk_int8_srdhm(1 << 30, 1 << 30), 1 << 29,
	       "SRDHM(2^30, 2^30) = 2^29");
	is_int(tfk_int8_srdhm(3, 1 << 30), 2, "SRDHM(3, 2^30): 1.5 -> 2");
	/* gemmlowp's nudge makes negative ties go up, not away from 0 */
	is_int(tfk_int8_srdhm(-3, 1 << 30), -1, "SRDHM(-3, 2^30): -1.5 -> -1");
	is_int(tfk_int8_srdhm(-1, 1 << 30), 0, "SRDHM(-1, 2^30): -0.5 -> 0");
	is_int(tfk_int8_srdhm(-5, 1 << 30), -2, "SRDHM(-5, 2^30): -2.5 -> -2");
	is_int(tfk_int8_rdbpot(5, 1), 3, "RDBPOT(5, 1): 2.5 -> 3");
	is_int(tfk_int8_rdbpot(-5, 1), -3, "RDBPOT(-5, 1): -2.5 -> -3");
	is_int(tfk_int8_rdbpot(-6, 2), -2, "RDBPOT(-6, 2): -1.5 -> -2");
	is_int(tfk_int8_rdbpot(-5, 2), -1, "RDBPOT(-5, 2): -1.25 -> -1");
	is_int(tfk_int8_rdbpot(7, 0), 7, "RDBPOT(x, 0) = x");
	is_int(tfk_int8_mbqm(100, 1 << 30, 1), 100, "MBQM by 1.0 is exact");
	is_int(tfk_int8_mbqm(1000, 1610612736, -3), 94,
	       "MBQM(1000, 0.75 * 2^-3) = 93.75 -> 94");
	/* scale 0.1, zp -5: relu6 clamp [-5, 55] */
	tfk_int8_act_range(TFK_INT8_ACT_RELU6, 0.1f, -5, -128, 127, &lo, &hi,
			   &err);
	ok(lo == -5 && hi == 55, "RELU6 range at scale 0.1 zp -5 is [-5, 55] "
	   "(got [%d, %d])", (int)lo, (int)hi);
	tfk_int8_act_range(TFK_INT8_ACT_RELU, 0.01f, 100, -128, 127, &lo, &hi,
			   &err);
	ok(lo == 100 && hi == 127, "RELU range [zp, 127]");
	tfk_int8_act_range(TFK_INT8_ACT_RELU6, 0.01f, -128, -128, 127, &lo,
			   &hi, &err);
	ok(lo == -128 && hi == 127, "RELU6 whose 6 is out of range: [-128, "
	   "127]");
	is_int(tfk_int8_act_range(4, 0.1f, 0, -128, 127, &lo, &hi, &err),
	       TFK_EINVAL, "fused TANH refused");
	is_str(err.msg, "fused activation 4 is not supported", "... named");
}

/* A small hand-checked case: FC 1x2 -> 1, avg pool rounding, softmax. */
static void hand_cases(void)
{
	float s1 = 0.5f, sw = 0.25f, so = 0.5f;
	int32_t z1 = 1, zo = -1;
	struct tfk_int8_qp in = { &s1, &z1, 1 }, w = { &sw, NULL, 1 };
	struct tfk_int8_qp out = { &so, &zo, 1 };
	struct tfk_int8_rq rq;
	struct tfk_err err = { 0, "" };
	int8_t x[2] = { 5, -3 }, f[2] = { 4, 8 }, y;
	int32_t b = 10;
	struct tfk_pool2d p;
	int64_t shp[4] = { 1, 1, 4, 1 }, ks[4] = { 1, 1, 4, 1 };
	int64_t st[4] = { 1, 1, 1, 1 };
	int8_t px[4] = { -1, -2, 0, 0 }, py = 0;

	/* acc = 4 * (5 - 1) + 8 * (-3 - 1) + 10 = -6; m = 0.25:
	 * -1.5 -> -2, + zp -1 = -3 */
	tfk_int8_rq_init(&rq, 1, &in, &w, &out, 0, &err);
	is_int(rq.mult[0], 1 << 30, "FC multiplier 0.5 * 0.25 / 0.5");
	is_int(rq.shift[0], -1, "... shift -1");
	tfk_int8_fc_ref(&rq, 1, 2, 1, x, f, &b, &y);
	is_int(y, -3, "FC by hand: -6 * 0.25 = -1.5 rounds to -2, zp -1");
	tfk_int8_rq_release(&rq);
	/* (-3 - 2) / 4 = -1.25 truncates to -1 */
	tfk_pool2d_geom(&p, shp, ks, st, "VALID", &err);
	tfk_int8_avg_pool_ref(&p, -128, 127, px, &py);
	is_int(py, -1, "avg pool of -1 -2 0 0: (-3 - 2) / 4 = -1");
	px[0] = -2;
	tfk_int8_avg_pool_ref(&p, -128, 127, px, &py);
	is_int(py, -1, "avg pool of -2 -2 0 0: (-4 - 2) / 4 = -1 (-1.0 "
	       "exactly: C truncation)");
	px[0] = 3, px[1] = 3, px[2] = 0, px[3] = 0;
	tfk_int8_avg_pool_ref(&p, -128, 127, px, &py);
	is_int(py, 2, "avg pool of 3 3 0 0: (6 + 2) / 4 = 2 (1.5 rounds up)");
	/* uint8 127 127 128 128 held moved: -1 -1 0 0; the uint8 sum 510
	 * rounds (510 + 2) / 4 = 128, held 0, where the int8 rounding of
	 * the moved sum -2 gives (-2 - 2) / 4 = -1 (127) */
	px[0] = -1, px[1] = -1, px[2] = 0, px[3] = 0;
	tfk_int8_avg_pool_u8_ref(&p, -128, 127, px, &py);
	is_int(py, 0, "uint8 avg pool of 127 127 128 128: 510 / 4 = 127.5 "
	       "rounds up to 128 (held 0)");
	tfk_int8_avg_pool_ref(&p, -128, 127, px, &py);
	is_int(py, -1, "... the int8 rounding of the moved values is "
	       "away from zero (-1)");
	px[0] = -128, px[1] = -128, px[2] = -128, px[3] = -127;
	tfk_int8_avg_pool_u8_ref(&p, -128, 127, px, &py);
	is_int(py, -128, "uint8 avg pool of 0 0 0 1: (1 + 2) / 4 = 0 "
	       "(held -128)");
	tfk_int8_avg_pool_u8_ref(&p, -100, 127, px, &py);
	is_int(py, -100, "... clamped to the moved activation minimum");
	{
		/* uint8 1, 2, 255 (held -127, -126, 127) from scale 0.25,
		 * zp 128 into 0.5, 128: round(v * 0.5 - 64) + 128 */
		int8_t rx[3] = { -127, -126, 127 }, ry[3];

		tfk_int8_rescale_u8_ref(0.25f, 128, 0.5f, 128, 3, rx, ry);
		is_int(ry[0] + 128, 64, "concat rescale: -63.5 rounds away "
		       "to -64, + 128");
		is_int(ry[1] + 128, 65, "... -63 + 128");
		is_int(ry[2] + 128, 192, "... 63.5 rounds to 64, + 128");
	}
}

/* Float semantics ------------------------------------------------------- */

/*
 * The int8 conv means the float conv of the dequantized values: with
 * r = the float (double) conv of (x - zp) * in_s and w * w_s[ch], plus
 * bias * in_s * w_s[ch], the output must be within one quantum of
 * clamp(zp_out + r / out_s). Checked against tfk_cpu_conv2d_ref, whose
 * TF layouts (HWIO, [kh, kw, c, mult]) are built here from TFLite's:
 * a wrong filter layout, padding side or channel order would be far
 * off, which the bit-exact numpy model (sharing those readings) could
 * not show.
 */
static double float_conv(int depthwise)
{
	struct tfk_conv2d g;
	struct qset q;
	struct tfk_int8_rq rq;
	struct tfk_err err = { 0, "" };
	struct tfk_tensor xf, ff, yf;
	int64_t fs[4], ys[4], in[4], i, k, worst = 0;
	int kh = 3, kw = 3, c = 4, o = depthwise ? 8 : 6;
	int8_t *x, *f, *y;
	int32_t *b;

	if (conv_geom(&g, 2, 7, 6, c, kh, kw, depthwise ? 2 : c, o, 2, 1, 1,
		      depthwise))
		return 1e9;
	in[0] = g.n, in[1] = g.h, in[2] = g.w, in[3] = g.c;
	fs[0] = kh, fs[1] = kw;
	fs[2] = depthwise ? c : c, fs[3] = depthwise ? 2 : o;
	ys[0] = g.n, ys[1] = g.oh, ys[2] = g.ow, ys[3] = g.o;
	tfk_tensor_init(&xf, TFK_DT_DOUBLE, 4, in, &err);
	tfk_tensor_init(&ff, TFK_DT_DOUBLE, 4, fs, &err);
	tfk_tensor_init(&yf, TFK_DT_DOUBLE, 4, ys, &err);
	x = malloc((size_t)tfk_tensor_numel(&xf));
	f = malloc((size_t)tfk_tensor_numel(&ff));
	y = malloc((size_t)tfk_tensor_numel(&yf));
	b = malloc(sizeof(int32_t) * (size_t)g.o);
	rand_q(&q, (int)g.o, 1, kh * kw * c);
	q.act = 0;
	fill8(x, tfk_tensor_numel(&xf));
	fill8(f, tfk_tensor_numel(&ff));
	for (i = 0; i < g.o; i++)
		b[i] = ri(-3000, 3000);
	for (i = 0; i < tfk_tensor_numel(&xf); i++)
		((double *)xf.data)[i] = (x[i] - q.in_z) * (double)q.in_s;
	/* TFLite OHWI [o][ky][kx][c] -> TF HWIO [ky][kx][c][o]; the
	 * depthwise layouts are the same bytes */
	for (i = 0; i < tfk_tensor_numel(&ff); i++) {
		int64_t oc = depthwise ? i % g.o : i / (kh * kw * c);
		int64_t at = depthwise ? i : (i % (kh * kw * c)) * o + oc;

		((double *)ff.data)[at] = f[i] * (double)q.w_s[oc];
	}
	make_rq(&rq, &q, g.o);
	if (depthwise)
		tfk_int8_dwconv2d_ref(&g, &rq, x, f, b, y);
	else
		tfk_int8_conv2d_ref(&g, &rq, x, f, b, y);
	tfk_int8_rq_release(&rq);
	tfk_cpu_conv2d_ref(&g, &xf, &ff, &yf, &err);
	for (k = 0; k < tfk_tensor_numel(&yf); k++) {
		int64_t oc = k % g.o;
		double r = ((double *)yf.data)[k] +
			   b[oc] * (double)q.in_s * q.w_s[oc];
		double want = q.out_z + r / q.out_s;
		int64_t d;

		want = want < -128 ? -128 : want > 127 ? 127 : want;
		d = llabs((long long)llround(want) - y[k]);
		worst = d > worst ? d : worst;
	}
	tfk_tensor_release(&xf);
	tfk_tensor_release(&ff);
	tfk_tensor_release(&yf);
	free(x);
	free(f);
	free(y);
	free(b);
	return (double)worst;
}

static void float_semantics(void)
{
	double e = float_conv(0);

	ok(e <= 1, "CONV_2D (stride 2, SAME, per-channel) is the float conv "
	   "of the dequantized values within one quantum (worst %g)", e);
	e = float_conv(1);
	ok(e <= 1, "DEPTHWISE_CONV_2D (mult 2) likewise (worst %g)", e);
}

/* lite_testdata/add_quantized{,_int8}.bin compute x + x + x with every
 * tensor at scale 1/255 (0.003922), zero point 0: {1, 3} -> {3, 9}. */
static void fixture_add(void)
{
	float s = 1.0f / 255;
	int32_t z = 0;
	struct tfk_int8_qp q = { &s, &z, 1 };
	struct tfk_int8_bin b;
	struct tfk_err err = { 0, "" };
	int64_t shp[1] = { 2 };
	uint8_t u[2] = { 1, 3 }, u2[2], u3[2];
	int8_t i[2] = { 1, 3 }, i2[2], i3[2];

	tfk_int8_bin_init(&b, TFK_INT8_ADD, TFK_DT_UINT8, &q, &q, &q, 0, &err);
	tfk_int8_bin_ref(&b, 1, shp, u, 1, shp, u, u2, &err);
	tfk_int8_bin_ref(&b, 1, shp, u2, 1, shp, u, u3, &err);
	ok(u3[0] == 3 && u3[1] == 9, "uint8 ADD, ADD at 1/255: {1, 3} -> {3, "
	   "9} (got {%d, %d})", u3[0], u3[1]);
	tfk_int8_bin_init(&b, TFK_INT8_ADD, TFK_DT_INT8, &q, &q, &q, 0, &err);
	tfk_int8_bin_ref(&b, 1, shp, i, 1, shp, i, i2, &err);
	tfk_int8_bin_ref(&b, 1, shp, i2, 1, shp, i, i3, &err);
	ok(i3[0] == 3 && i3[1] == 9, "int8 ADD, ADD at 1/255: {1, 3} -> {3, "
	   "9} (got {%d, %d})", i3[0], i3[1]);
}

/*
 * TensorFlow's own int8 model: tflite/hello_world/hello_world_int8.tflite
 * is three int8 FULLY_CONNECTEDs (RELU, RELU, none) approximating
 * sin(x). Its weights, biases and quantization run through our FC
 * (_ref and fast) must give sin(x) within 0.05 for the README's inputs
 * -96, -63, -34, 0 (x = 0.77, 1.57, 2.3, 3.14): the TFLite semantics of
 * real TF-made parameters, not ours. The file is read with
 * lib/format/tflite.h.
 */
static int hw_fc(const struct tfk_tflite *m, const struct tfk_tfl_op *op,
		 const int8_t *x, int8_t *y, int fast)
{
	const struct tfk_tfl_subgraph *sg = &m->subgraphs[0];
	const struct tfk_tfl_tensor *ti = &sg->tensors[op->inputs[0]];
	const struct tfk_tfl_tensor *tw = &sg->tensors[op->inputs[1]];
	const struct tfk_tfl_tensor *to = &sg->tensors[op->outputs[0]];
	const int32_t *bias = NULL;
	struct tfk_err err = { 0, "" };
	int32_t zi = (int32_t)ti->quant.zero_point[0];
	int32_t zo = (int32_t)to->quant.zero_point[0], zw = 0;
	struct tfk_int8_qp qi = { ti->quant.scale, &zi, 1 };
	struct tfk_int8_qp qw = { tw->quant.scale, &zw, tw->quant.n_scale };
	struct tfk_int8_qp qo = { to->quant.scale, &zo, 1 };
	struct tfk_int8_rq rq;
	struct tfk_int8_packed p;
	struct tfk_conv_ws ws = { 0 };
	char val[64];
	const char *name;
	int i, kind, act = -1, rc;

	for (i = 0; tfk_tflite_option(op, i, &name, val, sizeof(val), &kind,
				      &err) == 1; i++)
		if (!strcmp(name, "fused_activation_function"))
			act = !strcmp(val, "RELU") ? TFK_INT8_ACT_RELU :
			      !strcmp(val, "NONE") ? TFK_INT8_ACT_NONE : 99;
	if (op->n_inputs > 2 && op->inputs[2] >= 0)
		bias = (const int32_t *)(const void *)
		       m->buffers[sg->tensors[op->inputs[2]].buffer].data;
	qw.zp = tw->quant.n_scale > 1 ? NULL : &zw;
	rc = tfk_int8_rq_init(&rq, tw->shape[0], &qi, &qw, &qo, act, &err);
	if (rc) {
		tap_diag("hello_world: %s", err.msg);
		return rc;
	}
	if (fast) {
		rc = tfk_int8_pack(&p, tw->shape[0], tw->shape[1],
				   (const int8_t *)m->buffers[tw->buffer].data,
				   &err);
		if (!rc)
			rc = tfk_int8_fc(&rq, &p, 1, x, bias, y, 1, &ws, &err);
		tfk_int8_packed_release(&p);
		tfk_conv_ws_release(&ws);
	} else {
		tfk_int8_fc_ref(&rq, 1, tw->shape[1], tw->shape[0], x,
				(const int8_t *)m->buffers[tw->buffer].data,
				bias, y);
	}
	tfk_int8_rq_release(&rq);
	return rc;
}

static void hello_world(void)
{
	static const int8_t in[4] = { -96, -63, -34, 0 };
	struct tfk_tflite m;
	struct tfk_err err = { 0, "" };
	const struct tfk_tfl_subgraph *sg;
	double worst[2] = { 0, 0 };
	int fast, i, k, n_fc = 0, bad = 0;

	if (tfk_tflite_load_file(&m, tap_fixture("tflite/hello_world/"
						 "hello_world_int8.tflite"),
				 &err)) {
		ok(0, "hello_world_int8.tflite: %s", err.msg);
		return;
	}
	sg = &m.subgraphs[0];
	for (k = 0; k < sg->n_ops; k++)
		n_fc += m.opcodes[sg->ops[k].opcode_index].builtin_code ==
			TFK_TFL_FULLY_CONNECTED;
	is_int(n_fc, 3, "hello_world_int8: three FULLY_CONNECTED ops");
	for (fast = 0; fast < 2 && n_fc == 3 && sg->n_ops == 3; fast++)
		for (i = 0; i < 4; i++) {
			int8_t a[64], b[64];
			const struct tfk_tfl_tensor *to;
			double x, y;

			a[0] = in[i];
			for (k = 0; k < 3; k++) {
				bad += hw_fc(&m, &sg->ops[k], a, b, fast) != 0;
				memcpy(a, b, sizeof(a));
			}
			to = &sg->tensors[sg->outputs[0]];
			x = (in[i] + 128) * 0.024480115622282028;
			y = (a[0] - to->quant.zero_point[0]) *
			    (double)to->quant.scale[0];
			if (fabs(y - sin(x)) > worst[fast])
				worst[fast] = fabs(y - sin(x));
		}
	ok(!bad && worst[0] <= 0.05, "hello_world_int8 through tfk_int8_fc_ref:"
	   " sin(x) within 0.05 at x = 0.77, 1.57, 2.3, 3.14 (worst %.4f)",
	   worst[0]);
	ok(!bad && worst[1] <= 0.05, "... and through the fast FC (worst "
	   "%.4f)", worst[1]);
	tfk_tflite_release(&m);
}

/* Fast paths against the _refs ------------------------------------------- */

static int fast_fc(const char *isa, int batch, int in, int out, int pc,
		   int threads, int zp_in)
{
	struct qset q;
	struct tfk_int8_rq rq;
	struct tfk_int8_packed p;
	struct tfk_conv_ws ws = { 0 };
	struct tfk_err err = { 0, "" };
	int8_t *x = malloc((size_t)batch * in), *w = malloc((size_t)out * in);
	int8_t *y1 = malloc((size_t)batch * out), *y2 = malloc((size_t)batch *
							     out);
	int32_t *b = malloc((size_t)out * 4);
	int i, same = 0;

	rand_q(&q, out < 64 ? out : 64, pc && out <= 64, in);
	if (zp_in != 999)
		q.in_z = zp_in;
	fill8(x, (int64_t)batch * in);
	fill8(w, (int64_t)out * in);
	for (i = 0; i < out; i++)
		b[i] = (int32_t)rnd();	/* any int32: wraps alike */
	if (!make_rq(&rq, &q, out) && !tfk_int8_pack(&p, out, in, w, &err)) {
		tfk_int8_fc_ref(&rq, batch, in, out, x, w, b, y1);
		memset(y2, 0x55, (size_t)batch * out);
		if (tfk_int8_fc(&rq, &p, batch, x, b, y2, threads, &ws, &err))
			tap_diag("fc: %s", err.msg);
		same = !memcmp(y1, y2, (size_t)batch * out);
		tfk_int8_packed_release(&p);
		tfk_int8_rq_release(&rq);
	}
	if (!same)
		tap_diag("%s fc [%d, %d] -> %d differs", isa, batch, in, out);
	tfk_conv_ws_release(&ws);
	free(x);
	free(w);
	free(y1);
	free(y2);
	free(b);
	return same;
}

static int fast_conv(const char *isa, int n, int h, int w, int c, int kh,
		     int kw, int o, int s, int d, int same, int threads)
{
	struct tfk_conv2d g;
	struct qset q;
	struct tfk_int8_rq rq;
	struct tfk_int8_packed p;
	struct tfk_conv_ws ws = { 0 };
	struct tfk_err err = { 0, "" };
	int64_t nx, nf, ny;
	int8_t *x, *f, *y1, *y2;
	int32_t *b;
	int i, eq = 0;

	if (conv_geom(&g, n, h, w, c, kh, kw, c, o, s, d, same, 0))
		return 0;
	nx = g.n * g.h * g.w * g.c;
	nf = g.o * kh * kw * c;
	ny = g.n * g.oh * g.ow * g.o;
	x = malloc((size_t)nx);
	f = malloc((size_t)nf);
	y1 = malloc((size_t)ny + 1);
	y2 = malloc((size_t)ny + 1);
	b = malloc((size_t)o * 4);
	rand_q(&q, o, o <= 64, kh * kw * c);
	fill8(x, nx);
	fill8(f, nf);
	for (i = 0; i < o; i++)
		b[i] = ri(-30000, 30000);
	if (!make_rq(&rq, &q, o)) {
		int how;

		tfk_int8_conv2d_ref(&g, &rq, x, f, b, y1);
		eq = 1;
		/* packed flat, per tap with channels padded to 4, and (width
		 * dilation 1) per filter row padded to 4 */
		for (how = 0; how < 3; how++) {
			if (how == 2 && d != 1)
				continue;
			if (how == 2 ? tfk_int8_pack_conv_rows(&p, o, kh, kw, c, f,
							       &err) :
			    how ? tfk_int8_pack_conv(&p, o, kh, kw, c, f, &err) :
			    tfk_int8_pack(&p, o, kh * kw * c, f, &err)) {
				eq = 0;
				continue;
			}
			memset(y2, 0x55, (size_t)ny);
			if (tfk_int8_conv2d(&g, &rq, x, &p, b, y2, threads,
					    &ws, &err))
				tap_diag("conv: %s", err.msg);
			eq &= !memcmp(y1, y2, (size_t)ny);
			tfk_int8_packed_release(&p);
		}
		tfk_int8_rq_release(&rq);
	}
	if (!eq)
		tap_diag("%s conv %dx%dx%dx%d k%dx%d -> %d differs", isa, n, h,
			 w, c, kh, kw, o);
	tfk_conv_ws_release(&ws);
	free(x);
	free(f);
	free(y1);
	free(y2);
	free(b);
	return eq;
}

/* A dilation reaching far past the input would make the fast conv's
 * padded copy gigabytes of padding (fuzz-tflint8: 29 GB for a 3x3
 * filter): tfk_int8_conv2d_fast sends such a geometry to the _ref. */
static void fast_conv_reach(void)
{
	struct tfk_conv2d g;
	struct tfk_int8_rq rq;
	struct tfk_int8_packed p;
	struct tfk_conv_ws ws = { 0 };
	struct tfk_err err = { 0, "" };
	int8_t x[200], y[200];

	memset(&rq, 0, sizeof(rq));
	memset(&p, 0, sizeof(p));
	memset(x, 0, sizeof(x));
	if (conv_geom(&g, 1, 5, 5, 8, 3, 3, 8, 8, 1, 2, 1, 0))
		return;
	ok(tfk_int8_conv2d_fast(&g, &rq), "dilation 2 on 5x5: fast");
	rq.w_offset = 3;
	ok(!tfk_int8_conv2d_fast(&g, &rq), "filter zero point -3: not fast");
	rq.w_offset = 0;
	if (conv_geom(&g, 1, 5, 5, 8, 3, 3, 8, 8, 1, 1000, 1, 0))
		return;
	ok(tfk_int8_conv2d_fast(&g, &rq), "dilation 1000 on 5x5: fast (a "
	   "32 MB copy)");
	if (conv_geom(&g, 1, 5, 5, 8, 3, 3, 8, 8, 1, 100000, 1, 0))
		return;
	ok(!tfk_int8_conv2d_fast(&g, &rq), "dilation 100000: not fast (320 "
	   "GB)");
	is_int(tfk_int8_conv2d(&g, &rq, x, &p, NULL, y, 1, &ws, &err),
	       TFK_EINVAL, "tfk_int8_conv2d refuses it");
	is_str(err.msg, "fast int8 conv: groups 1 (depthwise 0), filter zero "
	       "point 0 or dilations (100000, 100000) not supported", "saying so");
	tfk_conv_ws_release(&ws);
}

/* The fast pools against their _refs: every window shape, padding,
 * stride, clamp and channel count (across the 256-channel rows). */
static void fast_pools(void)
{
	static const int shapes[][6] = {	/* h w c k s same */
		{ 1, 1, 1, 1, 1, 0 }, { 24, 24, 32, 2, 2, 0 },
		{ 7, 5, 3, 3, 2, 1 }, { 9, 9, 17, 3, 1, 1 },
		{ 5, 8, 300, 2, 3, 1 }, { 6, 6, 513, 4, 2, 0 },
		{ 11, 3, 64, 3, 3, 1 }, { 4, 4, 8, 4, 1, 1 },
	};
	int i, kind, bad = 0, n_cases = 0;

	for (i = 0; i < (int)(sizeof(shapes) / sizeof(shapes[0])); i++)
		for (kind = 0; kind < 3; kind++) {
			const int *sh = shapes[i];
			int64_t in[4] = { 2, sh[0], sh[1], sh[2] };
			int64_t ks[4] = { 1, sh[3], sh[3], 1 };
			int64_t st[4] = { 1, sh[4], sh[4], 1 };
			struct tfk_err err = { 0, "" };
			struct tfk_pool2d p;
			int32_t lo = kind == 1 ? -128 : ri(-128, 0);
			int32_t hi = kind == 1 ? 127 : ri(1, 127);
			int64_t nx = 2 * sh[0] * sh[1] * sh[2], ny;
			int8_t *x, *y0, *y1;

			if (tfk_pool2d_geom(&p, in, ks, st, sh[5] ? "SAME" :
					    "VALID", &err)) {
				tap_diag("pool: %s", err.msg);
				bad++;
				continue;
			}
			ny = p.n * p.oh * p.ow * p.c;
			x = malloc((size_t)nx);
			y0 = malloc((size_t)ny);
			y1 = malloc((size_t)ny);
			fill8(x, nx);
			if (kind == 0) {
				tfk_int8_max_pool_ref(&p, lo, hi, x, y0);
				tfk_int8_max_pool(&p, lo, hi, x, y1, 1 + i % 3);
			} else if (kind == 1) {
				tfk_int8_avg_pool_ref(&p, lo, hi, x, y0);
				tfk_int8_avg_pool(&p, lo, hi, x, y1, 1 + i % 3);
			} else {
				tfk_int8_avg_pool_u8_ref(&p, lo, hi, x, y0);
				tfk_int8_avg_pool_u8(&p, lo, hi, x, y1, 1 + i % 3);
			}
			bad += memcmp(y0, y1, (size_t)ny) != 0;
			n_cases++;
			free(x);
			free(y0);
			free(y1);
		}
	ok(!bad && n_cases == 24, "fast MAX_POOL_2D, AVERAGE_POOL_2D and its "
	   "uint8 form: bit-exact with the _refs (%d cases: SAME/VALID, "
	   "strides 1-3, windows 1-4, 1 to 513 channels, clamps, 1-3 threads)",
	   n_cases);
}

static void fast_paths(void)
{
	static const char *const isas[] = { "c", "avx2", "avx512vnni" };
	const char *best = tfk_int8_isa(NULL);
	int i;

	tap_diag("int8 isa: %s", best);
	for (i = 0; i < 3; i++) {
		int good = 1;

		if (!tfk_int8_isa(isas[i])) {
			tap_diag("isa %s: not on this CPU", isas[i]);
			continue;
		}
		good &= fast_fc(isas[i], 1, 1, 1, 0, 1, 999);
		good &= fast_fc(isas[i], 9, 17, 5, 1, 1, 999);
		good &= fast_fc(isas[i], 33, 64, 48, 1, 3, -128);
		good &= fast_fc(isas[i], 8, 784, 10, 1, 2, 127);
		good &= fast_fc(isas[i], 17, 130, 100, 0, 2, 0);
		good &= fast_conv(isas[i], 2, 9, 7, 3, 3, 3, 5, 1, 1, 1, 1);
		good &= fast_conv(isas[i], 1, 12, 11, 8, 5, 5, 32, 1, 1, 1, 2);
		good &= fast_conv(isas[i], 3, 10, 10, 4, 3, 2, 17, 2, 1, 0, 3);
		good &= fast_conv(isas[i], 1, 11, 9, 5, 3, 3, 40, 1, 2, 1, 1);
		good &= fast_conv(isas[i], 2, 6, 6, 16, 1, 1, 16, 1, 1, 0, 2);
		good &= fast_conv(isas[i], 1, 10, 9, 8, 3, 3, 20, 1, 2, 1, 2);
		good &= fast_conv(isas[i], 2, 7, 7, 12, 2, 3, 33, 3, 1, 1, 1);
		good &= fast_conv(isas[i], 1, 5, 5, 8, 3, 3, 16, 1, 1, 1, 1);
		good &= fast_conv(isas[i], 2, 12, 12, 1, 5, 5, 32, 1, 1, 0, 2);
		ok(good, "fast FC and CONV_2D on %s: bit-exact with the _ref "
		   "(14 shapes, each packed flat, per tap padded and (width "
		   "dilation 1) per filter row padded: tails "
		   "of rows, k and channels, c 1, strides, dilation, rows "
		   "in place or copied, SAME/VALID, per-channel, threads "
		   "1-3, zp -128 and 127)", isas[i]);
		/* 70000 * 255 * 128 > 2^31: the accumulator wraps */
		ok(fast_fc(isas[i], 2, 70000, 3, 0, 2, -128), "fast FC on %s "
		   "wraps its int32 sums as the _ref does (K = 70000)",
		   isas[i]);
	}
	tfk_int8_isa(best);
	is_str(tfk_int8_isa(NULL), best, "isa restored to %s", best);
	ok(tfk_int8_isa("sse9") == NULL, "unknown isa refused");
}

/* Bad parameters --------------------------------------------------------- */

static void bad_params(void)
{
	struct tfk_err err = { 0, "" };
	struct tfk_int8_rq rq;
	struct tfk_int8_bin b;
	struct tfk_int8_softmax s;
	struct tfk_int8_packed p;
	float one = 1, zero = 0, neg = -0.5f, nan = NAN, sc2[2] = { 1, 1 };
	float tiny = 1e-9f;
	int32_t z0 = 0, z200 = 200, z2[2] = { 0, 3 };
	struct tfk_int8_qp q1 = { &one, &z0, 1 }, qz = { &zero, NULL, 1 };
	struct tfk_int8_qp qn = { &neg, NULL, 1 }, qnan = { &nan, NULL, 1 };
	struct tfk_int8_qp q200 = { &one, &z200, 1 }, qc2 = { sc2, NULL, 2 };
	struct tfk_int8_qp qa2 = { sc2, z2, 2 }, qt = { &tiny, NULL, 1 };
	int64_t s1[2] = { 2, 3 }, s2[2] = { 2, 4 }, shp[2] = { 3, 4 };
	int8_t x[12] = { 0 }, y[12];
	float fy[12];
	int8_t w[4] = { 1, 2, 3, 4 };

	is_int(tfk_int8_rq_init(&rq, 4, &qz, &q1, &q1, 0, &err), TFK_EINVAL,
	       "zero input scale refused");
	is_str(err.msg, "input: scale[0] = 0 is not a positive finite number",
	       "... named");
	is_int(tfk_int8_rq_init(&rq, 4, &q1, &qn, &q1, 0, &err), TFK_EINVAL,
	       "negative filter scale refused");
	is_int(tfk_int8_rq_init(&rq, 4, &q1, &q1, &qnan, 0, &err), TFK_EINVAL,
	       "NaN output scale refused");
	is_int(tfk_int8_rq_init(&rq, 4, &q200, &q1, &q1, 0, &err), TFK_EINVAL,
	       "zero point 200 refused for int8");
	is_str(err.msg, "input: zero_point[0] = 200 is outside [-128, 127]",
	       "... named");
	is_int(tfk_int8_rq_init(&rq, 4, &q1, &qc2, &q1, 0, &err), TFK_EINVAL,
	       "2 filter scales for 4 channels refused");
	is_str(err.msg, "filter: 2 scales for 4 output channels", "... named");
	is_int(tfk_int8_rq_init(&rq, 2, &q1, &qa2, &q1, 0, &err), TFK_EINVAL,
	       "per-channel filter with a zero point refused");
	is_int(tfk_int8_rq_init(&rq, 2, &q1, &q1, &q1, 5, &err), TFK_EINVAL,
	       "fused SIGN_BIT refused");
	ok(rq.mult == NULL, "... nothing left allocated");
	tfk_alloc_fail_after(0);
	is_int(tfk_int8_rq_init(&rq, 2, &q1, &q1, &q1, 0, &err), TFK_ENOMEM,
	       "rq_init: failed allocation reported");
	tfk_alloc_fail_after(-1);
	tfk_alloc_fail_after(1);
	is_int(tfk_int8_pack(&p, 2, 2, w, &err), TFK_ENOMEM,
	       "pack: failed allocation reported");
	tfk_alloc_fail_after(-1);
	is_int(tfk_int8_pack(&p, 0, 2, w, &err), TFK_EINVAL,
	       "pack: no rows refused");
	is_int(tfk_int8_bin_init(&b, TFK_INT8_ADD, TFK_DT_INT8, &q1, &q1, &qt, 0,
				 &err),
	       TFK_EINVAL, "ADD with an output scale below 2^-20 of the "
	       "inputs' refused (TFLite's Prepare check)");
	is_int(tfk_int8_bin_init(&b, TFK_INT8_MUL, TFK_DT_INT8, &q1, &qz, &q1, 0,
				 &err),
	       TFK_EINVAL, "MUL with a zero scale refused");
	tfk_int8_bin_init(&b, TFK_INT8_ADD, TFK_DT_INT8, &q1, &q1, &q1, 0, &err);
	is_int(tfk_int8_bin_ref(&b, 2, s1, x, 2, s2, x, y, &err), TFK_EINVAL,
	       "ADD of [2, 3] and [2, 4] refused");
	{
		struct tfk_int8_lut l;

		is_int(tfk_int8_lut_init(&l, TFK_INT8_TANH, &qn, &q1, &err),
		       TFK_EINVAL, "TANH with a negative input scale refused");
		is_int(tfk_int8_lut_init(&l, TFK_INT8_RELU, &q1, &q200, &err),
		       TFK_EINVAL, "RELU to zero point 200 refused");
	}
	is_int(tfk_int8_softmax_init(&s, 1, &qz, &q1, 0, &err), TFK_EINVAL,
	       "softmax with a zero input scale refused");
	is_int(tfk_int8_softmax_init(&s, 1, &q1, &q200, 0, &err), TFK_EINVAL,
	       "softmax int8 output zero point 200 refused");
	is_int(tfk_int8_quantize_ref(&qn, TFK_DT_INT8, 1, fy, x, &err),
	       TFK_EINVAL, "QUANTIZE with a negative scale refused");
	is_int(tfk_int8_quantize_ref(&q1, TFK_DT_INT16, 1, fy, x, &err),
	       TFK_EINVAL, "QUANTIZE to int16 refused (not supported)");
	is_int(tfk_int8_dequantize_ref(&qc2, TFK_DT_INT8, 2, shp, 0, x, fy,
				       &err), TFK_EINVAL,
	       "DEQUANTIZE with 2 scales along a dim of 3 refused");
	is_int(tfk_int8_requantize_ref(&q1, TFK_DT_INT8, &q200, TFK_DT_INT8, 1,
				       x, y, &err), TFK_EINVAL,
	       "REQUANTIZE to zero point 200 in int8 refused");
	{
		struct tfk_int8_rq r2;
		struct tfk_int8_packed pk;
		struct tfk_conv_ws ws = { 0 };
		int32_t zw = 2;
		struct tfk_int8_qp qw = { &one, &zw, 1 };

		tfk_int8_rq_init(&r2, 2, &q1, &qw, &q1, 0, &err);
		tfk_int8_pack(&pk, 2, 2, w, &err);
		is_int(tfk_int8_fc(&r2, &pk, 1, x, NULL, y, 1, &ws, &err),
		       TFK_EINVAL, "fast FC with a filter zero point refused "
		       "(the _ref takes it)");
		tfk_int8_packed_release(&pk);
		tfk_int8_rq_release(&r2);
		tfk_conv_ws_release(&ws);
	}
}

int main(void)
{
	known_values();
	quantize_rounding();
	hand_cases();
	fixture_add();
	hello_world();
	oracle_cases();
	float_semantics();
	fast_paths();
	fast_pools();
	fast_conv_reach();
	bad_params();
	return tap_done();
}
