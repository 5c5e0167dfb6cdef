/*
 * t-bf16conv.c - Conv2D and its backprops with bfloat16 products
 * (kernels/cpu/bf16conv.c).
 *
 * - A case worked by hand where the pair order shows: products (1,
 *   2^-24, -1, 2^-24) of channels 1, 0, 3, 2 (VDPBF16PS's order) sum to
 *   0 in float32, where channel order gives 2^-24 and the exact sum is
 *   2^-23; and an input rounded to bfloat16 (1 + 2^-8 -> 1).
 * - Every fast kernel (AVX512-BF16 where the CPU has it, and the scalar
 *   fallback that TFK_BF16_SCALAR=1 forces) against the _ref, bit for
 *   bit, on 19 shapes: the book CNN's two layers (1 and 32 input
 *   channels), 1 input channel per group with odd and even filter
 *   widths and one wider than a tile (the forward pairs taps there, the
 *   filter gradient tiles them), odd channel counts, odd output widths (a pixel pair's
 *   zero partner in the filter gradient), strides 2 and 3, dilations,
 *   SAME/VALID/EXPLICIT, groups (odd channels per group too), fewer
 *   output rows than the gradient's 8 blocks; on 1, 2, 3 and 4 threads
 *   (the same bytes). Bound: none — the same exact products summed in
 *   the same order with one rounding per addition. The values are
 *   +-[2^-8, 2) or 0 so that nothing is subnormal (where the
 *   instructions flush and the _ref does not).
 * - The _ref against the float64 loops of conv.c (tfk_cpu_conv2d*_ref
 *   on double tensors), per element: |bf16 - exact| <= (2^-7 + 2^-16 +
 *   K 2^-24) * sum |x f| over the element's K products (two operands
 *   rounded to 8 significant bits, 2^-8 relative each, then K float32
 *   roundings), the sum of |x f| computed by the same double loops on
 *   |x| and |f|; and the bf16 results must differ from float32's (the
 *   rounding is there).
 * - A depthwise geometry is refused with TFK_EINVAL.
 */
#include "kernels/cpu.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs = 0x2545f4914f6cdd1dull;

static uint32_t urand(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)(rs >> 11);
}

/* 0 one time in 16, else +-[2^-8, 2) with full float32 mantissas */
static float frand(void)
{
	uint32_t u = urand();
	float f;

	if ((u & 15) == 0)
		return 0;
	f = ldexpf(1.0f + (float)(urand() & 0x7fffff) / 8388608.0f,
		   -(int)((u >> 4) % 9));
	return (u & 0x100000) ? -f : f;
}

static void mk(struct tfk_tensor *t, enum tfk_dtype dt, const int64_t *s)
{
	struct tfk_err err = { 0, "" };

	if (tfk_tensor_init(t, dt, 4, s, &err))
		tap_diag("tensor: %s", err.msg);
}

static void fill(struct tfk_tensor *t)
{
	int64_t i, n = tfk_tensor_numel(t);

	for (i = 0; i < n; i++)
		((float *)t->data)[i] = frand();
}

/* float -> double copy, |.| when ab */
static void widen(const struct tfk_tensor *t, struct tfk_tensor *d, int ab)
{
	int64_t i, n = tfk_tensor_numel(t);

	mk(d, TFK_DT_DOUBLE, t->shape);
	for (i = 0; i < n; i++) {
		double v = ((const float *)t->data)[i];

		((double *)d->data)[i] = ab ? fabs(v) : v;
	}
}

struct cc {
	int64_t n, h, w, c, kh, kw, kc, o;
	int64_t sh, sw, dh, dw;
	int pad;
	int64_t pt, pb, pl, pr;
};

static const struct cc cases[] = {
	/* n  h   w   c  kh kw kc  o  sh sw dh dw pad */
	{ 3, 28, 28, 1, 5, 5, 1, 32, 1, 1, 1, 1, TFK_CONV_VALID, 0, 0, 0, 0 },
	{ 2, 24, 24, 32, 5, 5, 32, 32, 1, 1, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0 },
	{ 3, 7, 9, 5, 3, 3, 5, 4, 1, 1, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0 },
	{ 1, 8, 8, 3, 5, 5, 3, 32, 1, 1, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0 },
	{ 3, 9, 10, 6, 3, 3, 6, 7, 2, 2, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0 },
	{ 3, 11, 7, 4, 3, 2, 4, 5, 1, 2, 2, 1, TFK_CONV_VALID, 0, 0, 0, 0 },
	{ 2, 6, 7, 3, 2, 3, 3, 20, 2, 1, 1, 1, TFK_CONV_EXPLICIT, 1, 2, 0, 3 },
	{ 2, 6, 6, 8, 3, 3, 4, 6, 1, 1, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0 },
	{ 2, 6, 7, 9, 3, 3, 3, 6, 1, 1, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0 },
	{ 2, 5, 5, 33, 1, 1, 33, 35, 1, 1, 1, 1, TFK_CONV_VALID, 0, 0, 0, 0 },
	{ 2, 12, 13, 16, 4, 4, 16, 40, 3, 3, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0 },
	{ 2, 9, 9, 12, 3, 3, 4, 18, 2, 2, 2, 2, TFK_CONV_SAME, 0, 0, 0, 0 },
	{ 1, 5, 4, 2, 3, 3, 2, 3, 3, 3, 1, 1, TFK_CONV_VALID, 0, 0, 0, 0 },
	{ 1, 3, 11, 7, 3, 3, 7, 13, 1, 1, 1, 2, TFK_CONV_SAME, 0, 0, 0, 0 },
	{ 2, 10, 10, 17, 3, 3, 17, 48, 1, 2, 1, 1, TFK_CONV_VALID, 0, 0, 0, 0 },
	{ 1, 6, 6, 2, 3, 3, 1, 4, 1, 1, 3, 3, TFK_CONV_EXPLICIT, 2, 2, 3, 1 },
	{ 2, 9, 8, 1, 3, 3, 1, 5, 2, 1, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0 },
	{ 1, 7, 9, 1, 2, 4, 1, 17, 1, 1, 1, 2, TFK_CONV_VALID, 0, 0, 0, 0 },
	{ 2, 4, 20, 1, 1, 13, 1, 3, 1, 1, 1, 1, TFK_CONV_VALID, 0, 0, 0, 0 },
};

#define N_CASES ((int)(sizeof(cases) / sizeof(cases[0])))

static int geom(const struct cc *k, struct tfk_conv2d *g)
{
	struct tfk_err err = { 0, "" };
	struct tfk_conv2d_attrs a;
	int64_t in[4] = { k->n, k->h, k->w, k->c };
	int64_t f[4] = { k->kh, k->kw, k->kc, k->o };
	int rc;

	memset(&a, 0, sizeof(a));
	a.strides[0] = a.strides[3] = a.dilations[0] = a.dilations[3] = 1;
	a.strides[1] = k->sh, a.strides[2] = k->sw;
	a.dilations[1] = k->dh, a.dilations[2] = k->dw;
	a.padding = k->pad;
	a.pads[2] = k->pt, a.pads[3] = k->pb;
	a.pads[4] = k->pl, a.pads[5] = k->pr;
	if ((rc = tfk_conv2d_geom(g, in, f, 0, &a, &err)))
		tap_diag("geometry: %s", err.msg);
	return rc;
}

typedef int (*ref_fn)(const struct tfk_conv2d *, const struct tfk_tensor *,
		      const struct tfk_tensor *, struct tfk_tensor *,
		      struct tfk_err *);
typedef int (*fast_fn)(const struct tfk_conv2d *, const struct tfk_tensor *,
		       const struct tfk_tensor *, struct tfk_tensor *, int,
		       struct tfk_conv_ws *, struct tfk_err *);

struct op {
	const char *what;
	ref_fn ref, ref64;	/* bf16 _ref; conv.c's (float64) _ref */
	fast_fn fast, f32;	/* bf16 fast; conv.c's float32 */
	int out;		/* output shape: 0 input, 1 filter, 2 y */
	int a, b;		/* operands: 0 x, 1 f, 2 dy */
};

static const struct op ops[] = {
	{ "forward", tfk_cpu_conv2d_bf16_ref, tfk_cpu_conv2d_ref,
	  tfk_cpu_conv2d_bf16, tfk_cpu_conv2d, 2, 0, 1 },
	{ "input grad", tfk_cpu_conv2d_bp_input_bf16_ref,
	  tfk_cpu_conv2d_bp_input_ref, tfk_cpu_conv2d_bp_input_bf16,
	  tfk_cpu_conv2d_bp_input, 0, 1, 2 },
	{ "filter grad", tfk_cpu_conv2d_bp_filter_bf16_ref,
	  tfk_cpu_conv2d_bp_filter_ref, tfk_cpu_conv2d_bp_filter_bf16,
	  tfk_cpu_conv2d_bp_filter, 1, 0, 2 },
};

struct data {
	struct tfk_conv2d g;
	int64_t shp[3][4];	/* x, f, y */
	struct tfk_tensor t[3];	/* x, f, dy */
	struct tfk_tensor r[3];	/* each op's _ref */
};

static int data_init(struct data *d, const struct cc *k)
{
	int i;

	if (geom(k, &d->g))
		return -1;
	d->shp[0][0] = k->n, d->shp[0][1] = k->h, d->shp[0][2] = k->w;
	d->shp[0][3] = k->c;
	d->shp[1][0] = k->kh, d->shp[1][1] = k->kw, d->shp[1][2] = k->kc;
	d->shp[1][3] = k->o;
	d->shp[2][0] = d->g.n, d->shp[2][1] = d->g.oh, d->shp[2][2] = d->g.ow;
	d->shp[2][3] = d->g.o;
	for (i = 0; i < 3; i++) {
		mk(&d->t[i], TFK_DT_FLOAT, d->shp[i]);
		fill(&d->t[i]);
	}
	for (i = 0; i < 3; i++) {
		struct tfk_err err = { 0, "" };
		const struct op *op = &ops[i];

		mk(&d->r[i], TFK_DT_FLOAT, d->shp[op->out]);
		if (op->ref(&d->g, &d->t[op->a], &d->t[op->b], &d->r[i], &err))
			tap_diag("%s _ref: %s", op->what, err.msg);
	}
	return 0;
}

static void data_release(struct data *d)
{
	int i;

	for (i = 0; i < 3; i++) {
		tfk_tensor_release(&d->t[i]);
		tfk_tensor_release(&d->r[i]);
	}
}

static void hand_case(void)
{
	static const struct cc k = { 1, 1, 1, 4, 1, 1, 4, 1, 1, 1, 1, 1,
				     TFK_CONV_VALID, 0, 0, 0, 0 };
	struct tfk_conv2d g;
	struct tfk_tensor x, f, y;
	struct tfk_conv_ws ws = { 0 };
	struct tfk_err err = { 0, "" };
	int64_t sx[4] = { 1, 1, 1, 4 }, sf[4] = { 1, 1, 4, 1 };
	int64_t sy[4] = { 1, 1, 1, 1 };
	float xv[4] = { 0x1p-12f, 1, -1, 0x1p-12f };
	float fv[4] = { 0x1p-12f, 1, 1, 0x1p-12f };
	float *yv;

	geom(&k, &g);
	mk(&x, TFK_DT_FLOAT, sx);
	mk(&f, TFK_DT_FLOAT, sf);
	mk(&y, TFK_DT_FLOAT, sy);
	memcpy(x.data, xv, sizeof(xv));
	memcpy(f.data, fv, sizeof(fv));
	yv = y.data;
	*yv = -1;
	tfk_cpu_conv2d_bf16_ref(&g, &x, &f, &y, &err);
	ok(*yv == 0, "_ref by hand: 1 + 2^-24 + 2^-24 - 1 in pair order is "
	   "0 (%g)", *yv);
	*yv = -1;
	is_int(tfk_cpu_conv2d_bf16(&g, &x, &f, &y, 1, &ws, &err), 0,
	       "fast: 0");
	ok(*yv == 0, "fast by hand: 0 (%g)", *yv);
	tfk_cpu_conv2d(&g, &x, &f, &y, 1, &ws, &err);
	ok(*yv != 0, "float32 in channel order: not 0 (%g)", *yv);
	((float *)x.data)[0] = 1.00390625f;	/* 1 + 2^-8: rounds to 1 */
	((float *)f.data)[0] = 1;
	((float *)x.data)[2] = 0;
	tfk_cpu_conv2d_bf16_ref(&g, &x, &f, &y, &err);
	ok(*yv == 2.0f, "_ref: 1 + 2^-8 is "
	   "rounded to bfloat16 (%.9g)", *yv);
	tfk_conv_ws_release(&ws);
	tfk_tensor_release(&x);
	tfk_tensor_release(&f);
	tfk_tensor_release(&y);
}

/* Fast kernel vs _ref, bit for bit, on 1-4 threads. */
static void against_ref(const char *what)
{
	int ci, i, th, bad[3] = { 0, 0, 0 }, bad_thr[3] = { 0, 0, 0 };

	for (ci = 0; ci < N_CASES; ci++) {
		struct data d;

		if (data_init(&d, &cases[ci])) {
			bad[0]++;
			continue;
		}
		for (i = 0; i < 3; i++) {
			const struct op *op = &ops[i];
			struct tfk_tensor a1, an;
			struct tfk_conv_ws ws = { 0 };
			struct tfk_err err = { 0, "" };

			mk(&a1, TFK_DT_FLOAT, d.shp[op->out]);
			mk(&an, TFK_DT_FLOAT, d.shp[op->out]);
			memset(a1.data, 0xff, a1.nbytes);
			if (op->fast(&d.g, &d.t[op->a], &d.t[op->b], &a1, 1,
				     &ws, &err) ||
			    memcmp(a1.data, d.r[i].data, a1.nbytes)) {
				int64_t j, n = tfk_tensor_numel(&a1);

				bad[i]++;
				for (j = 0; j < n; j++)
					if (memcmp((float *)a1.data + j,
						   (float *)d.r[i].data + j, 4))
						break;
				tap_diag("%s case %d %s: [%lld] %.9g vs _ref "
					 "%.9g %s", what, ci, op->what,
					 (long long)j, j < n ?
					 ((float *)a1.data)[j] : 0, j < n ?
					 ((float *)d.r[i].data)[j] : 0, err.msg);
			}
			for (th = 2; th <= 4; th++) {
				memset(an.data, 0xff, an.nbytes);
				op->fast(&d.g, &d.t[op->a], &d.t[op->b], &an,
					 th, &ws, &err);
				bad_thr[i] += !!memcmp(a1.data, an.data,
						       an.nbytes);
			}
			tfk_conv_ws_release(&ws);
			tfk_tensor_release(&a1);
			tfk_tensor_release(&an);
		}
		data_release(&d);
	}
	for (i = 0; i < 3; i++) {
		is_int(bad[i], 0, "%s %s vs _ref: bit-identical on %d shapes",
		       what, ops[i].what, N_CASES);
		is_int(bad_thr[i], 0, "%s %s on 1, 2, 3, 4 threads: same "
		       "bytes", what, ops[i].what);
	}
}

/* The _ref against float64, element by element within bf16's bound. */
static void ref_vs_exact(void)
{
	int ci, i, bad[3] = { 0, 0, 0 }, same[3] = { 0, 0, 0 };
	double worst[3] = { 0, 0, 0 };

	for (ci = 0; ci < N_CASES; ci++) {
		struct data d;
		int64_t kk[3];

		if (data_init(&d, &cases[ci])) {
			bad[0]++;
			continue;
		}
		/* products per output element */
		kk[0] = d.g.kh * d.g.kw * d.g.kc;
		kk[1] = d.g.kh * d.g.kw * (d.g.o / d.g.groups);
		kk[2] = d.g.n * d.g.oh * d.g.ow + 8;
		for (i = 0; i < 3; i++) {
			const struct op *op = &ops[i];
			struct tfk_tensor a64, b64, aa, ba, e, m, f32;
			struct tfk_conv_ws ws = { 0 };
			struct tfk_err err = { 0, "" };
			double u = ldexp(1, -7) + ldexp(1, -16) +
				(double)kk[i] * ldexp(1, -24);
			int64_t j, n;

			widen(&d.t[op->a], &a64, 0);
			widen(&d.t[op->b], &b64, 0);
			widen(&d.t[op->a], &aa, 1);
			widen(&d.t[op->b], &ba, 1);
			mk(&e, TFK_DT_DOUBLE, d.shp[op->out]);
			mk(&m, TFK_DT_DOUBLE, d.shp[op->out]);
			mk(&f32, TFK_DT_FLOAT, d.shp[op->out]);
			op->ref64(&d.g, &a64, &b64, &e, &err);
			op->ref64(&d.g, &aa, &ba, &m, &err);
			op->f32(&d.g, &d.t[op->a], &d.t[op->b], &f32, 1, &ws,
				&err);
			n = tfk_tensor_numel(&e);
			for (j = 0; j < n; j++) {
				double got = ((float *)d.r[i].data)[j];
				double want = ((double *)e.data)[j];
				double lim = u * ((double *)m.data)[j];

				if (fabs(got - want) > lim)
					bad[i]++;
				if (lim > 0 && fabs(got - want) / lim >
				    worst[i])
					worst[i] = fabs(got - want) / lim;
			}
			same[i] += !memcmp(f32.data, d.r[i].data, f32.nbytes);
			tfk_conv_ws_release(&ws);
			tfk_tensor_release(&a64);
			tfk_tensor_release(&b64);
			tfk_tensor_release(&aa);
			tfk_tensor_release(&ba);
			tfk_tensor_release(&e);
			tfk_tensor_release(&m);
			tfk_tensor_release(&f32);
		}
		data_release(&d);
	}
	for (i = 0; i < 3; i++) {
		is_int(bad[i], 0, "%s _ref vs float64: every element within "
		       "(2^-7 + 2^-16 + K 2^-24) sum|x f| (worst %.3f of it)",
		       ops[i].what, worst[i]);
		is_int(same[i], 0, "%s _ref differs from float32 on every "
		       "shape", ops[i].what);
	}
}

static void refused(void)
{
	static const struct cc k = { 1, 4, 4, 2, 3, 3, 2, 2, 1, 1, 1, 1,
				     TFK_CONV_SAME, 0, 0, 0, 0 };
	struct tfk_conv2d g;
	struct tfk_tensor x, f, y;
	struct tfk_conv_ws ws = { 0 };
	struct tfk_err err = { 0, "" };
	int64_t sx[4] = { 1, 4, 4, 2 }, sf[4] = { 3, 3, 2, 2 };

	geom(&k, &g);
	g.depthwise = 1;
	mk(&x, TFK_DT_FLOAT, sx);
	mk(&f, TFK_DT_FLOAT, sf);
	mk(&y, TFK_DT_FLOAT, sx);
	is_int(tfk_cpu_conv2d_bf16(&g, &x, &f, &y, 1, &ws, &err), TFK_EINVAL,
	       "depthwise: TFK_EINVAL");
	is_str(err.msg, "bfloat16 products: float32 Conv2D only",
	       "the message says why");
	tfk_conv_ws_release(&ws);
	tfk_tensor_release(&x);
	tfk_tensor_release(&f);
	tfk_tensor_release(&y);
}

int main(void)
{
	hand_case();
	if (tfk_cpu_have_avx512bf16())
		against_ref("AVX512-BF16");
	else
		tap_diag("no avx512_bf16 on this CPU: the fast kernels are "
			 "not tested here");
	setenv("TFK_BF16_SCALAR", "1", 1);
	ok(!tfk_cpu_have_avx512bf16(), "TFK_BF16_SCALAR=1 selects the "
	   "fallback");
	hand_case();
	against_ref("scalar fallback");
	ref_vs_exact();
	refused();
	return tap_done();
}
