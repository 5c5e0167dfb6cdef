/*
 * t-conv.c - Conv2D, DepthwiseConv2dNative and their backprop ops.
 *
 * - Geometry against TensorFlow's rules (SAME's extra padding row at the
 *   bottom, VALID sizes, EXPLICIT) and attr/shape errors with messages.
 * - The fast float32 kernels (every instruction set the CPU has: plain
 *   C, AVX2, AVX-512) against the _ref loops on odd shapes, strides,
 *   dilations, SAME/VALID/EXPLICIT, groups, batch 1 and 3, threads 1
 *   and 3 (bitwise equal to each other: results do not depend on the
 *   thread count). Bound: |fast - ref| <= 1e-5 * max|ref|; measured
 *   worst 1.5e-6 of max|ref| (printed as a diagnostic).
 * - Forward and both gradients against PyTorch (tests/py/torch_conv.py:
 *   torch.nn.functional.conv2d in float64 with TF's padding applied by
 *   F.pad, NHWC <-> NCHW permutes) for Conv2D (SAME asymmetric, strided,
 *   dilated, EXPLICIT, grouped) and depthwise: max relative error
 *   (|ours - torch| / max|torch|) below 1e-5 for every op and case;
 *   measured 8.2e-7 for Conv2D and its two backprops, 0 for the three
 *   depthwise ops (their float kernels sum in double, as torch's
 *   float64 run, so both round to the same floats).
 * - Gradients of all six ops (first order for Conv2D and depthwise;
 *   the backprop ops' own gradients too) by central finite differences
 *   in float64 through tfk_graph_gradients + tfk_exec: |analytic -
 *   numeric| <= 1e-6 * (1 + |numeric|), h 1e-6.
 * - A training-style graph with an unknown batch (the gradient builds
 *   its input_sizes with Shape).
 */
#include "graph/exec.h"
#include "graph/graph.h"
#include "kernels/cpu.h"
#include "gradcheck.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ull;

static double urand(void)	/* xorshift64 (Marsaglia 2003), [-1, 1) */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (rng >> 11) * (2.0 / 9007199254740992.0) - 1;
}

static void fill(struct tfk_tensor *t)
{
	int64_t i, n = tfk_tensor_numel(t);

	for (i = 0; i < n; i++) {
		if (t->dtype == TFK_DT_FLOAT)
			((float *)t->data)[i] = (float)urand();
		else
			((double *)t->data)[i] = urand();
	}
}

static void mk(struct tfk_tensor *t, enum tfk_dtype dt, int64_t a, int64_t b,
	       int64_t c, int64_t d)
{
	int64_t s[4] = { a, b, c, d };
	struct tfk_err err = { 0, "" };

	if (tfk_tensor_init(t, dt, 4, s, &err))
		tap_diag("tensor: %s", err.msg);
}

/* Geometry --------------------------------------------------------------- */

struct cc {
	int64_t n, h, w, c, kh, kw, kc, o;	/* kc: filter in channels */
	int64_t sh, sw, dh, dw;
	int pad;
	int64_t pt, pb, pl, pr;			/* EXPLICIT */
	int depthwise;
};

static int geom(const struct cc *k, struct tfk_conv2d *g,
		struct tfk_err *err)
{
	struct tfk_conv2d_attrs a;
	int64_t in[4] = { k->n, k->h, k->w, k->c };
	int64_t f[4] = { k->kh, k->kw, k->kc, k->o };

	memset(&a, 0, sizeof(a));
	a.strides[0] = a.strides[3] = a.dilations[0] = a.dilations[3] = 1;
	a.strides[1] = k->sh, a.strides[2] = k->sw;
	a.dilations[1] = k->dh, a.dilations[2] = k->dw;
	a.padding = k->pad;
	a.pads[2] = k->pt, a.pads[3] = k->pb;
	a.pads[4] = k->pl, a.pads[5] = k->pr;
	return tfk_conv2d_geom(g, in, f, k->depthwise, &a, err);
}

static void geometry(void)
{
	struct tfk_err err = { 0, "" };
	struct tfk_conv2d g;
	struct cc k = { 1, 24, 24, 32, 5, 5, 32, 32, 1, 1, 1, 1,
			TFK_CONV_SAME, 0, 0, 0, 0, 0 };

	ok(!geom(&k, &g, &err) && g.oh == 24 && g.ow == 24 && g.pt == 2 &&
	   g.pb == 2 && g.groups == 1, "SAME 24, 5x5, stride 1: 24, pad 2+2");
	k.h = 6, k.w = 5, k.kh = k.kw = 3, k.sh = k.sw = 2;
	ok(!geom(&k, &g, &err) && g.oh == 3 && g.pt == 0 && g.pb == 1 &&
	   g.ow == 3 && g.pl == 1 && g.pr == 1,
	   "SAME 6 and 5, 3x3, stride 2: 3x3, extra row at the bottom");
	k.pad = TFK_CONV_VALID, k.h = 11, k.sh = 3, k.dh = 2;
	ok(!geom(&k, &g, &err) && g.oh == 3 && g.pt == 0 && g.pb == 0,
	   "VALID 11, 3 taps dilated 2, stride 3: (11 - 5 + 3) / 3 = 3");
	k.pad = TFK_CONV_EXPLICIT, k.h = 4, k.sh = 1, k.dh = 1, k.pt = 2,
	k.pb = 1;
	ok(!geom(&k, &g, &err) && g.oh == 5 && g.pt == 2 && g.pb == 1,
	   "EXPLICIT 4 + 2 + 1, 3 taps: 5");
	k.pad = TFK_CONV_VALID, k.h = 3, k.kh = 5;
	is_int(geom(&k, &g, &err), TFK_EINVAL, "VALID input smaller than the "
	       "filter");
	is_str(err.msg, "input 0: height 3 is smaller than the filter's "
	       "effective height 5 (3 with padding)", "message");
	k.h = 8, k.c = 8, k.kc = 4, k.o = 6;
	ok(!geom(&k, &g, &err) && g.groups == 2, "8 channels, filter in 4: "
	   "2 groups");
	k.kc = 3;
	is_int(geom(&k, &g, &err), TFK_EINVAL, "filter in channels 3 vs 8");
	is_str(err.msg, "input 1: filter in channels 3 do not divide the "
	       "input's 8", "message");
	k.kc = 4, k.o = 5;
	is_int(geom(&k, &g, &err), TFK_EINVAL, "2 groups, 5 filters");
	is_str(err.msg, "input 1: 2 groups do not divide the 5 filters",
	       "message");
	k.n = -1, k.h = -1, k.o = 6;
	ok(!geom(&k, &g, &err) && g.n == -1 && g.oh == -1 && g.ow == 2,
	   "unknown batch and height stay unknown");
}

/* Fast vs _ref ------------------------------------------------------------ */

static const struct cc cases[] = {
	/* n  h   w   c  kh kw kc  o  sh sw dh dw pad */
	{ 3, 7, 9, 5, 3, 3, 5, 4, 1, 1, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0, 0 },
	{ 1, 8, 8, 3, 5, 5, 3, 32, 1, 1, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0, 0 },
	{ 3, 9, 10, 6, 3, 3, 6, 7, 2, 2, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0, 0 },
	{ 3, 11, 7, 4, 3, 2, 4, 5, 1, 2, 2, 1, TFK_CONV_VALID, 0, 0, 0, 0, 0 },
	{ 2, 6, 7, 3, 2, 3, 3, 20, 2, 1, 1, 1, TFK_CONV_EXPLICIT, 1, 2, 0, 3, 0 },
	{ 2, 6, 6, 8, 3, 3, 4, 6, 1, 1, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0, 0 },
	{ 2, 5, 5, 33, 1, 1, 33, 35, 1, 1, 1, 1, TFK_CONV_VALID, 0, 0, 0, 0, 0 },
	{ 2, 12, 13, 16, 4, 4, 16, 40, 3, 3, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0, 0 },
	{ 3, 28, 28, 1, 5, 5, 1, 32, 1, 1, 1, 1, TFK_CONV_VALID, 0, 0, 0, 0, 0 },
	{ 3, 24, 24, 32, 5, 5, 32, 32, 1, 1, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0, 0 },
	{ 2, 9, 9, 12, 3, 3, 4, 18, 2, 2, 2, 2, TFK_CONV_SAME, 0, 0, 0, 0, 0 },
	{ 1, 5, 4, 2, 3, 3, 2, 3, 3, 3, 1, 1, TFK_CONV_VALID, 0, 0, 0, 0, 0 },
};

#define N_CASES ((int)(sizeof(cases) / sizeof(cases[0])))

static double rel_err(const struct tfk_tensor *a, const struct tfk_tensor *b)
{
	int64_t i, n = tfk_tensor_numel(a);
	double m = 0, e = 0;

	for (i = 0; i < n; i++) {
		double x = ((const float *)a->data)[i];
		double y = ((const float *)b->data)[i];

		if (fabs(y) > m)
			m = fabs(y);
		if (fabs(x - y) > e)
			e = fabs(x - y);
	}
	return e / (m > 0 ? m : 1);
}

static int within(const struct tfk_tensor *a, const struct tfk_tensor *b,
		  double tol, double *worst)
{
	double e = rel_err(a, b);

	if (e > *worst)
		*worst = e;
	return e <= tol;
}

/* Conv2D and its two gradients: what the fast path is tested against. */
struct conv_op {
	const char *what;
	int (*ref)(const struct tfk_conv2d *g, const struct tfk_tensor *a,
		   const struct tfk_tensor *b, struct tfk_tensor *out,
		   struct tfk_err *err);
	int (*fast)(const struct tfk_conv2d *g, const struct tfk_tensor *a,
		    const struct tfk_tensor *b, struct tfk_tensor *out,
		    int threads, struct tfk_conv_ws *ws, struct tfk_err *err);
};

static const struct conv_op conv_fwd = {
	"forward", tfk_cpu_conv2d_ref, tfk_cpu_conv2d
}, conv_bp_input = {
	"input grad", tfk_cpu_conv2d_bp_input_ref, tfk_cpu_conv2d_bp_input
}, conv_bp_filter = {
	"filter grad", tfk_cpu_conv2d_bp_filter_ref, tfk_cpu_conv2d_bp_filter
};

/*
 * op on (a, b) into [d0, d1, d2, d3]: 1 (and a diagnostic naming isa and
 * case ci) when the fast path with one thread fails or is not within
 * 1e-5 of _ref; *bad_t counts one more when one and three threads do not
 * give bitwise equal results.
 */
static int vs_ref(const struct conv_op *op, const struct tfk_conv2d *g,
		  const struct tfk_tensor *a, const struct tfk_tensor *b,
		  int64_t d0, int64_t d1, int64_t d2, int64_t d3,
		  const char *isa, int ci, struct tfk_conv_ws *ws,
		  double *worst, int *bad_t)
{
	struct tfk_err err = { 0, "" };
	struct tfk_tensor r, a1, a3;
	int rc, bad = 0;

	mk(&r, TFK_DT_FLOAT, d0, d1, d2, d3);
	mk(&a1, TFK_DT_FLOAT, d0, d1, d2, d3);
	mk(&a3, TFK_DT_FLOAT, d0, d1, d2, d3);
	op->ref(g, a, b, &r, &err);
	rc = op->fast(g, a, b, &a1, 1, ws, &err);
	rc |= op->fast(g, a, b, &a3, 3, ws, &err);
	if (rc || !within(&a1, &r, 1e-5, worst)) {
		tap_diag("%s case %d %s: err %g", isa, ci, op->what,
			 rel_err(&a1, &r));
		bad = 1;
	}
	*bad_t += !tfk_tensor_equal(&a1, &a3);
	tfk_tensor_release(&r);
	tfk_tensor_release(&a1);
	tfk_tensor_release(&a3);
	return bad;
}

static void fast_vs_ref(void)
{
	static const char *const isas[] = { "c", "avx2", "avx512" };
	const char *best = tfk_cpu_conv_isa(NULL);
	double worst = 0;
	int ci, ii, bad_f = 0, bad_i = 0, bad_w = 0, bad_t = 0, runs = 0;

	for (ii = 0; ii < 3; ii++) {
		if (!tfk_cpu_conv_isa(isas[ii])) {
			tap_diag("isa %s: not on this CPU", isas[ii]);
			continue;
		}
		for (ci = 0; ci < N_CASES; ci++) {
			const struct cc *k = &cases[ci];
			struct tfk_err err = { 0, "" };
			struct tfk_conv2d g;
			struct tfk_tensor x, f, dy;
			struct tfk_conv_ws ws = { 0 };

			if (geom(k, &g, &err)) {
				tap_diag("case %d: %s", ci, err.msg);
				bad_f++;
				continue;
			}
			mk(&x, TFK_DT_FLOAT, g.n, g.h, g.w, g.c);
			mk(&f, TFK_DT_FLOAT, g.kh, g.kw, g.kc, g.o);
			mk(&dy, TFK_DT_FLOAT, g.n, g.oh, g.ow, g.o);
			fill(&x);
			fill(&f);
			fill(&dy);
			runs++;

			bad_f += vs_ref(&conv_fwd, &g, &x, &f, g.n, g.oh, g.ow,
					g.o, isas[ii], ci, &ws, &worst, &bad_t);
			bad_i += vs_ref(&conv_bp_input, &g, &f, &dy, g.n, g.h,
					g.w, g.c, isas[ii], ci, &ws, &worst,
					&bad_t);
			bad_w += vs_ref(&conv_bp_filter, &g, &x, &dy, g.kh,
					g.kw, g.kc, g.o, isas[ii], ci, &ws,
					&worst, &bad_t);
			tfk_conv_ws_release(&ws);
			tfk_tensor_release(&x);
			tfk_tensor_release(&f);
			tfk_tensor_release(&dy);
		}
	}
	tfk_cpu_conv_isa(best);
	ok(runs >= N_CASES, "fast kernels ran %d case x isa runs", runs);
	is_int(bad_f, 0, "Conv2D fast == _ref (strides, dilations, "
	       "SAME/VALID/EXPLICIT, groups, odd sizes)");
	is_int(bad_i, 0, "Conv2DBackpropInput fast == _ref");
	is_int(bad_w, 0, "Conv2DBackpropFilter fast == _ref");
	is_int(bad_t, 0, "threads 1 and 3 give bitwise equal results");
	tap_diag("fast vs _ref: max |err| / max|ref| %.3g", worst);
}

/* PyTorch ----------------------------------------------------------------- */

static const struct cc tcases[] = {
	{ 3, 9, 10, 6, 3, 3, 6, 7, 2, 2, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0, 0 },
	{ 2, 11, 7, 4, 3, 2, 4, 5, 1, 2, 2, 1, TFK_CONV_VALID, 0, 0, 0, 0, 0 },
	{ 2, 6, 7, 3, 2, 3, 3, 20, 2, 1, 1, 1, TFK_CONV_EXPLICIT, 1, 2, 0, 3, 0 },
	{ 2, 6, 6, 8, 3, 3, 4, 6, 1, 1, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0, 0 },
	{ 1, 12, 12, 32, 5, 5, 32, 32, 1, 1, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0, 0 },
	{ 2, 7, 8, 3, 3, 3, 3, 2, 2, 2, 1, 1, TFK_CONV_SAME, 0, 0, 0, 0, 1 },
	{ 2, 9, 9, 4, 3, 3, 4, 1, 1, 1, 2, 2, TFK_CONV_VALID, 0, 0, 0, 0, 1 },
};

#define N_TCASES ((int)(sizeof(tcases) / sizeof(tcases[0])))

static int save(const char *dir, const char *name,
		const struct tfk_tensor *t)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return tap_write_file(path, t->data, t->nbytes);
}

/* Compare t with the oracle's file: relative error, or -1 when the
 * file is missing or has the wrong size. */
static double cmp_file(const char *dir, const char *name,
		       const struct tfk_tensor *t)
{
	char path[512];
	struct tfk_tensor o = *t;
	size_t n;
	void *p;
	double e;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	p = tap_read_file(path, &n);
	if (!p || n != t->nbytes) {
		free(p);
		return -1;
	}
	o.data = p;
	e = rel_err(t, &o);
	free(p);
	return e;
}

static void vs_torch(void)
{
	const char *py = getenv("PYTHON") ? getenv("PYTHON") :
		"/usr/bin/python3";
	char cmd[8192], dirs[N_TCASES][256];
	struct tfk_tensor x[N_TCASES], f[N_TCASES], dy[N_TCASES];
	struct tfk_conv2d g[N_TCASES];
	double worst_c = 0, worst_d = 0;
	int i, rc, bad = 0;
	size_t at;

	at = (size_t)snprintf(cmd, sizeof(cmd), "%s %s", py,
			      tap_source("tests/py/torch_conv.py"));
	for (i = 0; i < N_TCASES; i++) {
		const struct cc *k = &tcases[i];
		struct tfk_err err = { 0, "" };
		char meta[256], name[32];

		geom(k, &g[i], &err);
		snprintf(name, sizeof(name), "torch%d", i);
		snprintf(dirs[i], sizeof(dirs[i]), "%s", tap_tmp(name));
		snprintf(meta, sizeof(meta), "mkdir -p %s", dirs[i]);
		if (system(meta))
			bad++;
		mk(&x[i], TFK_DT_FLOAT, g[i].n, g[i].h, g[i].w, g[i].c);
		if (k->depthwise)
			mk(&f[i], TFK_DT_FLOAT, g[i].kh, g[i].kw, g[i].c,
			   g[i].mult);
		else
			mk(&f[i], TFK_DT_FLOAT, g[i].kh, g[i].kw, g[i].kc,
			   g[i].o);
		mk(&dy[i], TFK_DT_FLOAT, g[i].n, g[i].oh, g[i].ow, g[i].o);
		fill(&x[i]);
		fill(&f[i]);
		fill(&dy[i]);
		snprintf(meta, sizeof(meta), "%lld %lld %lld %lld %lld %lld "
			 "%lld %lld %lld %lld %lld %lld %lld %lld %lld %lld "
			 "%d %lld\n", (long long)g[i].n, (long long)g[i].h,
			 (long long)g[i].w, (long long)g[i].c,
			 (long long)g[i].kh, (long long)g[i].kw,
			 (long long)g[i].o, (long long)g[i].sh,
			 (long long)g[i].sw, (long long)g[i].dh,
			 (long long)g[i].dw, (long long)g[i].pt,
			 (long long)g[i].pb, (long long)g[i].pl,
			 (long long)g[i].pr, (long long)g[i].groups,
			 g[i].depthwise, (long long)g[i].mult);
		{
			char path[512];

			snprintf(path, sizeof(path), "%s/meta.txt", dirs[i]);
			bad += tap_write_file(path, meta, strlen(meta)) != 0;
		}
		bad += save(dirs[i], "x.f32", &x[i]) != 0;
		bad += save(dirs[i], "f.f32", &f[i]) != 0;
		bad += save(dirs[i], "dy.f32", &dy[i]) != 0;
		at += (size_t)snprintf(cmd + at, sizeof(cmd) - at, " %s",
				       dirs[i]);
	}
	rc = system(cmd);
	is_int(rc, 0, "torch_conv.py ran on %d cases", N_TCASES);
	for (i = 0; i < N_TCASES; i++) {
		struct tfk_err err = { 0, "" };
		struct tfk_tensor y, dx, df;
		struct tfk_conv_ws ws = { 0 };
		double e[3];
		int j;

		mk(&y, TFK_DT_FLOAT, g[i].n, g[i].oh, g[i].ow, g[i].o);
		mk(&dx, TFK_DT_FLOAT, g[i].n, g[i].h, g[i].w, g[i].c);
		df = f[i];
		tfk_tensor_init(&df, TFK_DT_FLOAT, 4, f[i].shape, &err);
		tfk_cpu_conv2d(&g[i], &x[i], &f[i], &y, 2, &ws, &err);
		tfk_cpu_conv2d_bp_input(&g[i], &f[i], &dy[i], &dx, 2, &ws,
					&err);
		tfk_cpu_conv2d_bp_filter(&g[i], &x[i], &dy[i], &df, 2, &ws,
					 &err);
		e[0] = cmp_file(dirs[i], "y.f32", &y);
		e[1] = cmp_file(dirs[i], "dx.f32", &dx);
		e[2] = cmp_file(dirs[i], "df.f32", &df);
		for (j = 0; j < 3; j++) {
			double *w = g[i].depthwise ? &worst_d : &worst_c;

			if (e[j] < 0 || e[j] > 1e-5) {
				tap_diag("torch case %d output %d: err %g", i,
					 j, e[j]);
				bad++;
			}
			if (e[j] > *w)
				*w = e[j];
		}
		tfk_conv_ws_release(&ws);
		tfk_tensor_release(&y);
		tfk_tensor_release(&dx);
		tfk_tensor_release(&df);
		tfk_tensor_release(&x[i]);
		tfk_tensor_release(&f[i]);
		tfk_tensor_release(&dy[i]);
	}
	is_int(bad, 0, "forward, input and filter gradients == PyTorch "
	       "(Conv2D: SAME asymmetric, strided, dilated, EXPLICIT, grouped; "
	       "depthwise)");
	tap_diag("vs torch: Conv2D family max rel err %.3g, depthwise %.3g",
		 worst_c, worst_d);
}

/* Graphs: finite differences, errors, unknown batch ------------------------ */

static struct tfk_port var(struct tfk_graph *g, const char *name,
			   enum tfk_dtype dt, const int64_t *s)
{
	struct tfk_tensor t;
	struct tfk_port p = { -1, 0 };
	struct tfk_err err = { 0, "" };

	tfk_tensor_init(&t, dt, 4, s, &err);
	fill(&t);
	if (tfk_graph_variable(g, name, &t, &p, &err))
		tap_diag("variable %s: %s", name, err.msg);
	return p;
}

static struct tfk_port sizes(struct tfk_graph *g, const int64_t *s)
{
	int32_t v[4] = { (int32_t)s[0], (int32_t)s[1], (int32_t)s[2],
			 (int32_t)s[3] };
	struct tfk_port p = { -1, 0 };
	struct tfk_err err = { 0, "" };

	tfk_graph_const_i32v(g, NULL, v, 4, &p, &err);
	return p;
}

/* attrs: strides, padding, dilations, explicit_paddings [, format] */
struct cattr {
	int64_t strides[4], dil[4], ex[8];
	const char *padding, *format;
	int n_ex;
};

static int conv_node(struct tfk_graph *g, const char *op, const char *name,
		     const struct tfk_port *in, int n_in,
		     const struct cattr *a, struct tfk_port *out,
		     struct tfk_err *err)
{
	struct tfk_attr at[5];
	int n = 0;

	at[n].name = "strides";
	at[n].v.kind = TFK_ATTR_LIST_INT;
	at[n].v.list.n = 4;
	at[n++].v.list.i = a->strides;
	at[n].name = "dilations";
	at[n].v.kind = TFK_ATTR_LIST_INT;
	at[n].v.list.n = 4;
	at[n++].v.list.i = a->dil;
	at[n].name = "explicit_paddings";
	at[n].v.kind = TFK_ATTR_LIST_INT;
	at[n].v.list.n = a->n_ex;
	at[n++].v.list.i = a->ex;
	at[n++] = TFK_A_STR("padding", a->padding);
	if (a->format)
		at[n++] = TFK_A_STR("data_format", a->format);
	return tfk_graph_add_node(g, op, name, in, n_in, at, n, out, err);
}

/*
 * loss = Sum(op(a, b, c) * R) over all axes, double: the analytic
 * gradients for the two float inputs (variables) against central
 * differences. kind 0: op(x, f) forward; 1: BackpropInput(sizes, f,
 * dy); 2: BackpropFilter(x, sizes, dy).
 */
static int fd_case(const char *op, int kind, const int64_t *xs,
		   const int64_t *fs, const int64_t *ys, const struct cattr *a,
		   double *worst)
{
	struct tfk_graph *g;
	struct tfk_err err = { 0, "" };
	struct tfk_port in[3], v[2], y, r, loss, seed, d[2], axes;
	struct tfk_tensor t;
	int32_t ax[4] = { 0, 1, 2, 3 };
	double one = 1, *gr[2];
	const char *fetch[3] = { "loss", "d0", "d1" };
	const struct tfk_tensor *out[3];
	const struct tfk_tdesc *yd;
	struct tfk_exec *ex;
	int bad = 0, i;

	tfk_graph_new(&g, &err);
	if (kind == 0) {
		in[0] = v[0] = var(g, "a", TFK_DT_DOUBLE, xs);
		in[1] = v[1] = var(g, "b", TFK_DT_DOUBLE, fs);
	} else if (kind == 1) {
		in[0] = sizes(g, xs);
		in[1] = v[0] = var(g, "a", TFK_DT_DOUBLE, fs);
		in[2] = v[1] = var(g, "b", TFK_DT_DOUBLE, ys);
	} else {
		in[0] = v[0] = var(g, "a", TFK_DT_DOUBLE, xs);
		in[1] = sizes(g, fs);
		in[2] = v[1] = var(g, "b", TFK_DT_DOUBLE, ys);
	}
	if (conv_node(g, op, "z", in, kind ? 3 : 2, a, &y, &err)) {
		tap_diag("%s: %s", op, err.msg);
		tfk_graph_free(g);
		return 1;
	}
	yd = tfk_graph_desc(g, y);
	tfk_tensor_init(&t, TFK_DT_DOUBLE, 4, yd->shape, &err);
	fill(&t);
	tfk_graph_const(g, "R", &t, &r, &err);
	tfk_tensor_release(&t);
	in[0] = y, in[1] = r;
	tfk_graph_add_node(g, "Mul", NULL, in, 2, NULL, 0, &y, &err);
	tfk_graph_const_i32v(g, "axes", ax, 4, &axes, &err);
	in[0] = y, in[1] = axes;
	tfk_graph_add_node(g, "Sum", "loss", in, 2, NULL, 0, &loss, &err);
	tfk_tensor_init_view(&t, TFK_DT_DOUBLE, 0, NULL, &one, 8,
			     TFK_OWN_BORROWED, &err);
	tfk_graph_const(g, "seed", &t, &seed, &err);
	if (tfk_graph_gradients(g, &loss, &seed, 1, v, 2, d, &err) ||
	    tfk_graph_set_output(g, "d0", d[0], &err) ||
	    tfk_graph_set_output(g, "d1", d[1], &err) ||
	    tfk_exec_new(&ex, g, NULL, 0, fetch, 3, NULL, &err) ||
	    tfk_exec_run(ex, NULL, 0, out, &err)) {
		tap_diag("%s gradients: %s", op, err.msg);
		tfk_graph_free(g);
		return 1;
	}
	for (i = 0; i < 2; i++) {
		gr[i] = malloc(out[i + 1]->nbytes);
		memcpy(gr[i], out[i + 1]->data, out[i + 1]->nbytes);
	}
	for (i = 0; i < 2; i++) {
		struct tfk_tensor *vt = tfk_graph_var(g, i ? "b" : "a");

		bad += gc_check_fd(ex, NULL, vt->data, gr[i],
				   tfk_tensor_numel(vt), worst);
		free(gr[i]);
	}
	tfk_exec_free(ex);
	tfk_graph_free(g);
	return bad;
}

static void finite_differences(void)
{
	struct cattr same = { { 1, 2, 1, 1 }, { 1, 1, 2, 1 }, { 0 }, "SAME",
			      NULL, 0 };
	struct cattr expl = { { 1, 1, 2, 1 }, { 1, 1, 1, 1 },
			      { 0, 0, 1, 0, 2, 1, 0, 0 }, "EXPLICIT", NULL, 8 };
	/* x [2,5,6,3], f [3,2,3,4] (strides 2,1, dilations 1,2): y
	 * [2,3,6,4] */
	int64_t xs[4] = { 2, 5, 6, 3 }, fs[4] = { 3, 2, 3, 4 };
	int64_t ys[4] = { 2, 3, 6, 4 };
	/* grouped: x [1,4,4,4], f [2,2,2,4] EXPLICIT: y [1,4,3,4]
	 * (4 + 1 + 0 - 2 + 1 = 4 rows, (4 + 2 + 1 - 2 + 2) / 2 = 3 cols) */
	int64_t gx[4] = { 1, 4, 4, 4 }, gf[4] = { 2, 2, 2, 4 };
	int64_t gy[4] = { 1, 4, 3, 4 };
	/* depthwise: x [2,5,6,3], f [3,2,3,2]: y [2,3,6,6] */
	int64_t dfs[4] = { 3, 2, 3, 2 }, dys[4] = { 2, 3, 6, 6 };
	double worst = 0;

	is_int(fd_case("Conv2D", 0, xs, fs, ys, &same, &worst), 0,
	       "Conv2D gradients (input, filter) == finite differences");
	is_int(fd_case("Conv2DBackpropInput", 1, xs, fs, ys, &same, &worst),
	       0, "Conv2DBackpropInput gradients (filter, out_backprop)");
	is_int(fd_case("Conv2DBackpropFilter", 2, xs, fs, ys, &same, &worst),
	       0, "Conv2DBackpropFilter gradients (input, out_backprop)");
	is_int(fd_case("Conv2D", 0, gx, gf, gy, &expl, &worst), 0,
	       "grouped EXPLICIT Conv2D gradients");
	is_int(fd_case("DepthwiseConv2dNative", 0, xs, dfs, dys, &same,
		       &worst), 0, "DepthwiseConv2dNative gradients");
	is_int(fd_case("DepthwiseConv2dNativeBackpropInput", 1, xs, dfs, dys,
		       &same, &worst), 0,
	       "DepthwiseConv2dNativeBackpropInput gradients");
	is_int(fd_case("DepthwiseConv2dNativeBackpropFilter", 2, xs, dfs, dys,
		       &same, &worst), 0,
	       "DepthwiseConv2dNativeBackpropFilter gradients");
	tap_diag("finite differences: max |analytic - numeric| / (1 + "
		 "|numeric|) %.3g", worst);
}

static void errors(void)
{
	struct tfk_graph *g;
	struct tfk_err err = { 0, "" };
	struct tfk_port in[3], out;
	int64_t xs[4] = { 2, 6, 6, 5 }, fs[4] = { 3, 3, 5, 4 };
	int64_t f3[4] = { 3, 3, 3, 4 }, dys[4] = { 2, 5, 5, 4 };
	int64_t x3[3] = { 6, 6, 5 };
	struct cattr a = { { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 0 }, "SAME",
			   NULL, 0 };
	int n;

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 4, xs, &in[0], &err);
	in[1] = var(g, "f", TFK_DT_FLOAT, fs);
	n = tfk_graph_n_nodes(g);

	a.format = "NCHW";
	is_int(conv_node(g, "Conv2D", "c", in, 2, &a, &out, &err),
	       TFK_EINVAL, "data_format NCHW refused");
	is_str(err.msg, "node c: attr data_format: 'NCHW' is not supported, "
	       "only NHWC", "message");
	a.format = NULL;
	a.strides[0] = 2;
	is_int(conv_node(g, "Conv2D", "c", in, 2, &a, &out, &err),
	       TFK_EINVAL, "batch stride refused");
	is_str(err.msg, "node c: attr strides: strides in the batch and depth "
	       "dimensions must be 1", "message");
	a.strides[0] = 1, a.strides[2] = 0;
	is_int(conv_node(g, "Conv2D", "c", in, 2, &a, &out, &err),
	       TFK_EINVAL, "stride 0 refused");
	is_str(err.msg, "node c: attr strides: values must be positive",
	       "message");
	a.strides[2] = 1;
	a.padding = "FULL";
	is_int(conv_node(g, "Conv2D", "c", in, 2, &a, &out, &err),
	       TFK_EINVAL, "padding FULL refused");
	is_str(err.msg, "node c: attr padding: expected SAME, VALID or "
	       "EXPLICIT, got 'FULL'", "message");
	a.padding = "EXPLICIT";
	a.n_ex = 4;
	is_int(conv_node(g, "Conv2D", "c", in, 2, &a, &out, &err),
	       TFK_EINVAL, "EXPLICIT with 4 paddings refused");
	is_str(err.msg, "node c: attr explicit_paddings: expected 8 values "
	       "with padding EXPLICIT, got 4", "message");
	a.padding = "SAME";
	is_int(conv_node(g, "Conv2D", "c", in, 2, &a, &out, &err),
	       TFK_EINVAL, "explicit_paddings with SAME refused");
	is_str(err.msg, "node c: attr explicit_paddings: must be empty unless "
	       "padding is EXPLICIT", "message");
	a.n_ex = 0;
	in[1] = var(g, "f3", TFK_DT_FLOAT, f3);
	is_int(conv_node(g, "Conv2D", "c", in, 2, &a, &out, &err),
	       TFK_EINVAL, "channel mismatch refused");
	is_str(err.msg, "node c: input 1: filter in channels 3 do not divide "
	       "the input's 5", "message");
	is_int(conv_node(g, "DepthwiseConv2dNative", "d", in, 2, &a, &out,
			 &err), TFK_EINVAL, "depthwise channel mismatch");
	is_str(err.msg, "node d: input 1: filter in channels 3, input has 5",
	       "message");
	in[0] = sizes(g, xs);
	in[1] = var(g, "f5", TFK_DT_FLOAT, fs);
	tfk_graph_placeholder(g, "dy", TFK_DT_FLOAT, 4, dys, &in[2], &err);
	n = tfk_graph_n_nodes(g);
	is_int(conv_node(g, "Conv2DBackpropInput", "b", in, 3, &a, &out,
			 &err), TFK_EINVAL, "out_backprop of the wrong size");
	is_str(err.msg, "node b: input 2: out_backprop [2, 5, 5, 4] does not "
	       "match the convolution's output [2, 6, 6, 4]", "message");
	tfk_graph_placeholder(g, "x3", TFK_DT_FLOAT, 3, x3, &in[0], &err);
	n = tfk_graph_n_nodes(g);
	is_int(conv_node(g, "Conv2D", "c", in, 2, &a, &out, &err),
	       TFK_EINVAL, "rank 3 input refused");
	is_str(err.msg, "node c: input 0: rank 3, expected 4", "message");
	is_int(tfk_graph_n_nodes(g), n, "failed adds leave the graph as it "
	       "was");
	tfk_graph_free(g);
}

/* Training-style: x fed with an unknown batch; loss = Sum(y * y). */
static void unknown_batch(void)
{
	struct tfk_graph *g;
	struct tfk_err err = { 0, "" };
	int64_t xs[4] = { -1, 6, 7, 3 }, fs[4] = { 3, 3, 3, 5 };
	int64_t x2[4] = { 2, 6, 7, 3 };
	struct cattr a = { { 1, 2, 2, 1 }, { 1, 1, 1, 1 }, { 0 }, "SAME",
			   NULL, 0 };
	struct tfk_port x, f, y, in[2], axes, loss, one, d[2];
	int32_t ax[4] = { 0, 1, 2, 3 };
	const char *feeds[] = { "x" };
	const char *fetch[4] = { "z", "dx", "df", "loss" };
	const struct tfk_tensor *out[4];
	struct tfk_tensor xv, dy, rx, rf;
	struct tfk_conv2d cg;
	struct tfk_exec *ex = NULL;
	int64_t i;
	int rc;

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 4, xs, &x, &err);
	f = var(g, "f", TFK_DT_FLOAT, fs);
	in[0] = x, in[1] = f;
	conv_node(g, "Conv2D", "z", in, 2, &a, &y, &err);
	ok(tfk_graph_desc(g, y)->shape[0] == -1 &&
	   tfk_graph_desc(g, y)->shape[1] == 3 &&
	   tfk_graph_desc(g, y)->shape[2] == 4, "Conv2D of [?, 6, 7, 3] "
	   "stride 2 SAME: [?, 3, 4, 5]");
	in[0] = y, in[1] = y;
	tfk_graph_add_node(g, "Mul", NULL, in, 2, NULL, 0, &y, &err);
	tfk_graph_const_i32v(g, "axes", ax, 4, &axes, &err);
	in[0] = y, in[1] = axes;
	tfk_graph_add_node(g, "Sum", "loss", in, 2, NULL, 0, &loss, &err);
	tfk_graph_const_f32(g, "one", 1, &one, &err);
	in[0] = x, in[1] = f;
	rc = tfk_graph_gradients(g, &loss, &one, 1, in, 2, d, &err);
	ok(!rc, "gradients with an unknown batch: %s", err.msg);
	if (rc) {
		tfk_graph_free(g);
		return;
	}
	tfk_graph_set_output(g, "dx", d[0], &err);
	tfk_graph_set_output(g, "df", d[1], &err);
	tfk_tensor_init(&xv, TFK_DT_FLOAT, 4, x2, &err);
	fill(&xv);
	rc = tfk_exec_new(&ex, g, feeds, 1, fetch, 4, NULL, &err) ||
		tfk_exec_run(ex, &xv, 0, out, &err);
	ok(!rc, "exec with batch 2: %s", err.msg);
	if (!rc) {
		/* d loss / d z = 2 z: the _ref kernels give the answer */
		geom(&(struct cc){ 2, 6, 7, 3, 3, 3, 3, 5, 2, 2, 1, 1,
				   TFK_CONV_SAME, 0, 0, 0, 0, 0 }, &cg, &err);
		tfk_tensor_init(&dy, TFK_DT_FLOAT, 4, out[0]->shape, &err);
		for (i = 0; i < tfk_tensor_numel(&dy); i++)
			((float *)dy.data)[i] = 2 *
				((const float *)out[0]->data)[i];
		tfk_tensor_init(&rx, TFK_DT_FLOAT, 4, x2, &err);
		tfk_tensor_init(&rf, TFK_DT_FLOAT, 4, fs, &err);
		tfk_cpu_conv2d_bp_input_ref(&cg, tfk_graph_var(g, "f"), &dy,
					    &rx, &err);
		tfk_cpu_conv2d_bp_filter_ref(&cg, &xv, &dy, &rf, &err);
		ok(out[1]->rank == 4 && out[1]->shape[0] == 2 &&
		   rel_err(out[1], &rx) < 1e-5, "dx [2, 6, 7, 3] == _ref");
		ok(rel_err(out[2], &rf) < 1e-5, "df == _ref");
		tfk_tensor_release(&dy);
		tfk_tensor_release(&rx);
		tfk_tensor_release(&rf);
	}
	tfk_tensor_release(&xv);
	tfk_exec_free(ex);
	tfk_graph_free(g);
}

int main(void)
{
	geometry();
	fast_vs_ref();
	vs_torch();
	finite_differences();
	errors();
	unknown_batch();
	return tap_done();
}
