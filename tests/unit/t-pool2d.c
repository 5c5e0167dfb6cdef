/*
 * t-pool2d.c - MaxPool, AvgPool, MaxPoolGrad, AvgPoolGrad (NHWC):
 * TensorFlow's SAME/VALID geometry by hand, hand values (SAME's
 * in-bounds average, MaxPoolGrad's first-maximum routing on ties),
 * fast paths against the _refs (1 and 3 threads), forward and backward
 * against PyTorch (tests/py/torch_pool.py, float64 on our float32
 * inputs, TF's asymmetric SAME padding built explicitly: -inf for max,
 * in-bounds counts for avg), gradients by finite differences through
 * the graph with an unknown batch, shape inference and error cases.
 *
 * Bounds: max pool fast == _ref == torch exactly (a max is a copy of
 * an input; the gradient a sum of at most kh*kw float32 values of dy,
 * so |ours - torch| <= 1e-6 * max|dy|); avg pool forward/backward
 * relative to max|value|: <= 1e-6 vs the _ref and vs torch. Measured:
 * max pool vs torch 2.3e-7 (the float32 sums of dy), avg pool vs torch
 * 1.2e-7, fast avg vs _ref 1.9e-7; finite differences <= 7e-9
 * (bound 1e-6, gradcheck.h).
 */
#include "kernels/cpu.h"
#include "graph/exec.h"
#include "tap.h"
#include "gradcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void frand(float *p, int64_t n)
{
	int64_t i;

	for (i = 0; i < n; i++)
		p[i] = (float)(gc_urand() * 4 - 2);
}

static void geometry(void)
{
	struct tfk_pool2d p;
	struct tfk_err err = { 0, "" };
	int64_t in[4] = { 2, 7, 6, 3 }, k[4] = { 1, 3, 2, 1 };
	int64_t s[4] = { 1, 2, 2, 1 }, k0[4] = { 1, 0, 2, 1 };
	int64_t kb[4] = { 2, 2, 2, 1 };

	ok(!tfk_pool2d_geom(&p, in, k, s, "SAME", &err), "SAME geometry");
	/* oh = ceil(7/2) = 4: pad_total = 3*2+3-7 = 2 -> top 1;
	 * ow = 3: pad_total = 2*2+2-6 = 0 */
	ok(p.oh == 4 && p.ow == 3 && p.pad_t == 1 && p.pad_l == 0,
	   "SAME 7x6, k 3x2, s 2: out 4x3, pad top 1 left 0 (got %lldx%lld "
	   "pads %lld %lld)", (long long)p.oh, (long long)p.ow,
	   (long long)p.pad_t, (long long)p.pad_l);
	ok(!tfk_pool2d_geom(&p, in, k, s, "VALID", &err) && p.oh == 3 &&
	   p.ow == 3 && p.pad_t == 0, "VALID 7x6, k 3x2, s 2: out 3x3");
	{
		int64_t i2[4] = { 1, 4, 4, 1 }, k2[4] = { 1, 2, 2, 1 };
		int64_t s1[4] = { 1, 1, 1, 1 };

		/* SAME with an even window: pad_total 1, all of it after */
		ok(!tfk_pool2d_geom(&p, i2, k2, s1, "SAME", &err) &&
		   p.oh == 4 && p.pad_t == 0 && p.pad_l == 0,
		   "SAME k 2 s 1: the one padded row is at the bottom");
	}
	is_int(tfk_pool2d_geom(&p, in, k0, s, "SAME", &err), TFK_EINVAL,
	       "ksize 0 refused");
	is_str(err.msg, "ksize and strides must be >= 1 (ksize [1, 0, 2, 1], "
	       "strides [1, 2, 2, 1])", "message");
	is_int(tfk_pool2d_geom(&p, in, kb, s, "SAME", &err), TFK_EINVAL,
	       "pooling over the batch refused");
	is_int(tfk_pool2d_geom(&p, in, k, s, "EXPLICIT", &err), TFK_EINVAL,
	       "EXPLICIT padding refused");
	is_str(err.msg, "padding EXPLICIT not supported (SAME or VALID)",
	       "message");
	{
		int64_t big[4] = { 1, 9, 2, 1 };

		is_int(tfk_pool2d_geom(&p, in, big, s, "VALID", &err),
		       TFK_EINVAL, "VALID window larger than the input");
		is_str(err.msg, "window 9x2 larger than the 7x6 input with "
		       "VALID padding", "message");
	}
}

static void tensor4(struct tfk_tensor *t, enum tfk_dtype dt, int64_t n,
		    int64_t h, int64_t w, int64_t c)
{
	int64_t s[4] = { n, h, w, c };

	tfk_tensor_init(t, dt, 4, s, NULL);
}

static void hand_values(void)
{
	struct tfk_pool2d p;
	struct tfk_err err = { 0, "" };
	struct tfk_tensor x, y, dy, dx;
	int64_t in[4] = { 1, 3, 3, 1 }, k[4] = { 1, 2, 2, 1 };
	int64_t s[4] = { 1, 2, 2, 1 };
	/* 1 2 3 / 4 5 6 / 7 8 9, SAME k2 s2: out 2x2, pad bottom/right */
	float xv[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	float avg[4] = { 3, 4.5f, 7.5f, 9 }, mx[4] = { 5, 6, 8, 9 };
	float tie[9] = { 2, 2, 1, 2, 2, 1, 0, 0, 0 };
	float g[4] = { 1, 10, 100, 1000 };
	float want_tie[9] = { 1, 0, 10, 0, 0, 0, 100, 0, 1000 };
	float want_avg_grad[9] = { 0.25f, 0.25f, 5, 0.25f, 0.25f, 5, 50,
				   50, 1000 };

	tfk_pool2d_geom(&p, in, k, s, "SAME", &err);
	tensor4(&x, TFK_DT_FLOAT, 1, 3, 3, 1);
	tensor4(&y, TFK_DT_FLOAT, 1, 2, 2, 1);
	tensor4(&dy, TFK_DT_FLOAT, 1, 2, 2, 1);
	tensor4(&dx, TFK_DT_FLOAT, 1, 3, 3, 1);
	memcpy(x.data, xv, sizeof(xv));
	tfk_cpu_avg_pool_ref(&p, &x, &y, &err);
	is_mem(y.data, 16, avg, 16, "SAME AvgPool divides by the in-bounds "
	       "count (3, 4.5, 7.5, 9)");
	tfk_cpu_avg_pool(&p, &x, &y, 2, &err);
	is_mem(y.data, 16, avg, 16, "fast AvgPool likewise");
	tfk_cpu_max_pool_ref(&p, &x, &y, &err);
	is_mem(y.data, 16, mx, 16, "SAME MaxPool ignores padding");
	memcpy(x.data, tie, sizeof(tie));
	memcpy(dy.data, g, sizeof(g));
	tfk_cpu_max_pool_grad_ref(&p, &x, &dy, &dx, &err);
	is_mem(dx.data, 36, want_tie, 36, "MaxPoolGrad routes ties to the "
	       "first maximum in window order");
	memset(dx.data, 0x7f, dx.nbytes);
	tfk_cpu_max_pool_grad(&p, &x, &dy, &dx, 2, &err);
	is_mem(dx.data, 36, want_tie, 36, "fast MaxPoolGrad likewise");
	tfk_cpu_avg_pool_grad_ref(&p, &dy, &dx, &err);
	is_mem(dx.data, 36, want_avg_grad, 36, "AvgPoolGrad spreads over "
	       "in-bounds elements");
	memset(dx.data, 0x7f, dx.nbytes);
	tfk_cpu_avg_pool_grad(&p, &dy, &dx, 2, &err);
	is_mem(dx.data, 36, want_avg_grad, 36, "fast AvgPoolGrad likewise");
	tfk_tensor_release(&x);
	tfk_tensor_release(&y);
	tfk_tensor_release(&dy);
	tfk_tensor_release(&dx);
}

struct cfg {
	int64_t n, h, w, c, kh, kw, sh, sw;
	const char *pad;
};

static const struct cfg cfgs[] = {
	{ 2, 24, 24, 32, 2, 2, 2, 2, "VALID" },	/* the book's CNN */
	{ 3, 7, 9, 5, 3, 3, 2, 2, "SAME" },	/* asymmetric pads */
	{ 2, 8, 8, 3, 3, 3, 1, 1, "SAME" },	/* overlapping windows */
	{ 1, 5, 6, 70, 2, 3, 1, 2, "VALID" },	/* channel blocks > 64 */
	{ 2, 6, 5, 4, 4, 2, 3, 1, "SAME" },
	{ 1, 1, 1, 3, 1, 1, 1, 1, "VALID" },
};
#define N_CFG (int)(sizeof(cfgs) / sizeof(cfgs[0]))

static double max_abs(const float *p, int64_t n)
{
	double m = 0;
	int64_t i;

	for (i = 0; i < n; i++)
		if (fabs(p[i]) > m)
			m = fabs(p[i]);
	return m;
}

static void fast_vs_ref(void)
{
	struct tfk_err err = { 0, "" };
	double worst_avg = 0;
	int i, t, bad = 0, bad_max = 0;

	for (i = 0; i < N_CFG; i++)
		for (t = 1; t <= 3; t += 2) {
			const struct cfg *c = &cfgs[i];
			int64_t in[4] = { c->n, c->h, c->w, c->c };
			int64_t k[4] = { 1, c->kh, c->kw, 1 };
			int64_t s[4] = { 1, c->sh, c->sw, 1 };
			struct tfk_pool2d p;
			struct tfk_tensor x, y1, y2, dy, d1, d2;
			int64_t j, ny, nx;
			double m;

			tfk_pool2d_geom(&p, in, k, s, c->pad, &err);
			tensor4(&x, TFK_DT_FLOAT, p.n, p.h, p.w, p.c);
			tensor4(&d1, TFK_DT_FLOAT, p.n, p.h, p.w, p.c);
			tensor4(&d2, TFK_DT_FLOAT, p.n, p.h, p.w, p.c);
			tensor4(&y1, TFK_DT_FLOAT, p.n, p.oh, p.ow, p.c);
			tensor4(&y2, TFK_DT_FLOAT, p.n, p.oh, p.ow, p.c);
			tensor4(&dy, TFK_DT_FLOAT, p.n, p.oh, p.ow, p.c);
			nx = tfk_tensor_numel(&x);
			ny = tfk_tensor_numel(&y1);
			frand(x.data, nx);
			frand(dy.data, ny);
			bad += !!tfk_cpu_max_pool_ref(&p, &x, &y1, &err);
			bad += !!tfk_cpu_max_pool(&p, &x, &y2, t, &err);
			bad_max += !!memcmp(y1.data, y2.data, y1.nbytes);
			tfk_cpu_max_pool_grad_ref(&p, &x, &dy, &d1, &err);
			tfk_cpu_max_pool_grad(&p, &x, &dy, &d2, t, &err);
			bad_max += !!memcmp(d1.data, d2.data, d1.nbytes);
			tfk_cpu_avg_pool_ref(&p, &x, &y1, &err);
			tfk_cpu_avg_pool(&p, &x, &y2, t, &err);
			m = max_abs(y1.data, ny);
			for (j = 0; j < ny; j++) {
				double e = fabs(((float *)y1.data)[j] -
						((float *)y2.data)[j]) / m;

				worst_avg = e > worst_avg ? e : worst_avg;
			}
			tfk_cpu_avg_pool_grad_ref(&p, &dy, &d1, &err);
			tfk_cpu_avg_pool_grad(&p, &dy, &d2, t, &err);
			m = max_abs(d1.data, nx);
			for (j = 0; j < nx; j++) {
				double e = fabs(((float *)d1.data)[j] -
						((float *)d2.data)[j]) / m;

				worst_avg = e > worst_avg ? e : worst_avg;
			}
			tfk_tensor_release(&x);
			tfk_tensor_release(&y1);
			tfk_tensor_release(&y2);
			tfk_tensor_release(&dy);
			tfk_tensor_release(&d1);
			tfk_tensor_release(&d2);
		}
	is_int(bad, 0, "pool kernels accept every geometry");
	is_int(bad_max, 0, "fast MaxPool and MaxPoolGrad == _ref bit for bit "
	       "(1 and 3 threads)");
	ok(worst_avg <= 1e-6, "fast AvgPool and AvgPoolGrad vs _ref: max rel "
	   "%.2g <= 1e-6", worst_avg);
}

/* against torch ----------------------------------------------------------- */

static void vs_torch(void)
{
	const char *dir = tap_tmpdir();
	char path[512], cmd[1024], *man = NULL;
	size_t mlen = 0;
	struct tfk_err err = { 0, "" };
	double worst[2] = { 0, 0 };
	int i, kind, bad = 0, rc;

	for (i = 0; i < N_CFG; i++)
		for (kind = 0; kind < 2; kind++) {
			const struct cfg *c = &cfgs[i];
			char line[256];
			int64_t nx = c->n * c->h * c->w * c->c, in[4] = {
				c->n, c->h, c->w, c->c };
			int64_t k[4] = { 1, c->kh, c->kw, 1 };
			int64_t s[4] = { 1, c->sh, c->sw, 1 };
			struct tfk_pool2d p;
			float *x, *g;

			tfk_pool2d_geom(&p, in, k, s, c->pad, &err);
			x = malloc(nx * 4);
			g = malloc(p.n * p.oh * p.ow * p.c * 4 + 4);
			frand(x, nx);
			frand(g, p.n * p.oh * p.ow * p.c);
			snprintf(path, sizeof(path), "%s/c%d%d.x", dir, i, kind);
			tap_write_file(path, x, nx * 4);
			snprintf(path, sizeof(path), "%s/c%d%d.g", dir, i, kind);
			tap_write_file(path, g, p.n * p.oh * p.ow * p.c * 4);
			free(x);
			free(g);
			snprintf(line, sizeof(line), "c%d%d %s %lld %lld %lld "
				 "%lld %lld %lld %lld %lld %s\n", i, kind,
				 kind ? "avg" : "max", (long long)c->n,
				 (long long)c->h, (long long)c->w,
				 (long long)c->c, (long long)c->kh,
				 (long long)c->kw, (long long)c->sh,
				 (long long)c->sw, c->pad);
			man = realloc(man, mlen + strlen(line) + 1);
			memcpy(man + mlen, line, strlen(line) + 1);
			mlen += strlen(line);
		}
	snprintf(path, sizeof(path), "%s/manifest", dir);
	tap_write_file(path, man, mlen);
	free(man);
	snprintf(cmd, sizeof(cmd), "%s %s %s",
		 getenv("PYTHON") && *getenv("PYTHON") ? getenv("PYTHON") :
		 "/usr/bin/python3", tap_source("tests/py/torch_pool.py"), dir);
	rc = system(cmd);
	if (!ok(rc == 0, "torch oracle ran (%d cases)", N_CFG * 2))
		return;
	for (i = 0; i < N_CFG; i++)
		for (kind = 0; kind < 2; kind++) {
			const struct cfg *c = &cfgs[i];
			int64_t in[4] = { c->n, c->h, c->w, c->c };
			int64_t k[4] = { 1, c->kh, c->kw, 1 };
			int64_t s[4] = { 1, c->sh, c->sw, 1 };
			struct tfk_pool2d p;
			struct tfk_tensor x, y, dy, dx;
			double *ty, *tdx, m;
			size_t n1, n2, n3, n4;
			void *xb, *gb;
			int64_t j, ny, nx;

			tfk_pool2d_geom(&p, in, k, s, c->pad, &err);
			tensor4(&x, TFK_DT_FLOAT, p.n, p.h, p.w, p.c);
			tensor4(&dx, TFK_DT_FLOAT, p.n, p.h, p.w, p.c);
			tensor4(&y, TFK_DT_FLOAT, p.n, p.oh, p.ow, p.c);
			tensor4(&dy, TFK_DT_FLOAT, p.n, p.oh, p.ow, p.c);
			nx = tfk_tensor_numel(&x);
			ny = tfk_tensor_numel(&y);
			snprintf(path, sizeof(path), "%s/c%d%d.x", dir, i, kind);
			xb = tap_read_file(path, &n1);
			snprintf(path, sizeof(path), "%s/c%d%d.g", dir, i, kind);
			gb = tap_read_file(path, &n2);
			snprintf(path, sizeof(path), "%s/c%d%d.y", dir, i, kind);
			ty = tap_read_file(path, &n3);
			snprintf(path, sizeof(path), "%s/c%d%d.dx", dir, i,
				 kind);
			tdx = tap_read_file(path, &n4);
			if (!xb || !gb || !ty || !tdx ||
			    n3 != (size_t)ny * 8 || n4 != (size_t)nx * 8) {
				bad++;
				goto next;
			}
			memcpy(x.data, xb, x.nbytes);
			memcpy(dy.data, gb, dy.nbytes);
			if (kind == 0) {
				tfk_cpu_max_pool(&p, &x, &y, 2, &err);
				tfk_cpu_max_pool_grad(&p, &x, &dy, &dx, 2,
						      &err);
			} else {
				tfk_cpu_avg_pool(&p, &x, &y, 2, &err);
				tfk_cpu_avg_pool_grad(&p, &dy, &dx, 2, &err);
			}
			m = max_abs(y.data, ny);
			for (j = 0; j < ny; j++) {
				double e = fabs(((float *)y.data)[j] - ty[j]) /
					m;

				if (e > worst[kind])
					worst[kind] = e;
			}
			m = max_abs(dy.data, ny);
			for (j = 0; j < nx; j++) {
				double e = fabs(((float *)dx.data)[j] -
						tdx[j]) / m;

				if (e > worst[kind])
					worst[kind] = e;
			}
next:
			free(xb);
			free(gb);
			free(ty);
			free(tdx);
			tfk_tensor_release(&x);
			tfk_tensor_release(&y);
			tfk_tensor_release(&dy);
			tfk_tensor_release(&dx);
		}
	is_int(bad, 0, "torch outputs read");
	ok(worst[0] <= 1e-6, "MaxPool/MaxPoolGrad vs torch: max rel %.2g",
	   worst[0]);
	ok(worst[1] <= 1e-6, "AvgPool/AvgPoolGrad vs torch: max rel %.2g",
	   worst[1]);
}

/* graph: inference, errors, gradients ---------------------------------- */

static void graph_ops(void)
{
	struct tfk_graph *g;
	struct tfk_err err = { 0, "" };
	int64_t xs[4] = { -1, 28, 28, 32 }, x3[3] = { 28, 28, 32 };
	int64_t k[4] = { 1, 2, 2, 1 }, kbad[3] = { 1, 2, 2 };
	struct tfk_attr a[4] = {
		{ "ksize", { .kind = TFK_ATTR_LIST_INT, .list = { 4, k } } },
		{ "strides", { .kind = TFK_ATTR_LIST_INT, .list = { 4, k } } },
		TFK_A_STR("padding", "VALID"),
		TFK_A_STR("data_format", "NHWC"),
	};
	struct tfk_port x, y, r;
	const struct tfk_tdesc *d;

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 4, xs, &x, &err);
	ok(!tfk_graph_add_node(g, "MaxPool", "mp", &x, 1, a, 3, &y, &err),
	   "MaxPool builds: %s", err.msg);
	d = tfk_graph_desc(g, y);
	ok(d->rank == 4 && d->shape[0] == -1 && d->shape[1] == 14 &&
	   d->shape[2] == 14 && d->shape[3] == 32, "[?, 28, 28, 32] -> "
	   "[?, 14, 14, 32]");
	a[3].v.s.p = "NCHW";
	is_int(tfk_graph_add_node(g, "AvgPool", "ap", &x, 1, a, 4, &y, &err),
	       TFK_EINVAL, "NCHW refused");
	is_str(err.msg, "node ap: data_format NCHW not supported (only NHWC)",
	       "message");
	a[0].v.list.i = kbad;
	a[0].v.list.n = 3;
	is_int(tfk_graph_add_node(g, "MaxPool", "mp3", &x, 1, a, 3, &y, &err),
	       TFK_EINVAL, "ksize of 3 values refused");
	is_str(err.msg, "node mp3: ksize: need 4 values, got 3", "message");
	a[0].v.list.i = k;
	a[0].v.list.n = 4;
	tfk_graph_placeholder(g, "x3", TFK_DT_FLOAT, 3, x3, &r, &err);
	is_int(tfk_graph_add_node(g, "MaxPool", "r3", &r, 1, a, 3, &y, &err),
	       TFK_EINVAL, "rank 3 input refused");
	is_str(err.msg, "node r3: input 0: rank 3, pooling needs 4 (NHWC)",
	       "message");
	tfk_graph_free(g);
}

static void gradients(void)
{
	int i, kind;

	for (i = 1; i < 5; i++)
		for (kind = 0; kind < 2; kind++) {
			const struct cfg *c = &cfgs[i];
			int64_t kk[4] = { 1, c->kh, c->kw, 1 };
			int64_t ss[4] = { 1, c->sh, c->sw, 1 };
			struct gc_op o = { .op = kind ? "AvgPool" : "MaxPool",
					   .n_x = 1, .n_attrs = 3 };
			struct gc_input in[1] = { { 4, { -1, c->h, c->w,
							 c->c },
						    { 2, c->h, c->w, c->c },
						    0, 0, 0 } };
			char name[96];

			o.attrs[0] = (struct tfk_attr){ "ksize",
				{ .kind = TFK_ATTR_LIST_INT,
				  .list = { 4, kk } } };
			o.attrs[1] = (struct tfk_attr){ "strides",
				{ .kind = TFK_ATTR_LIST_INT,
				  .list = { 4, ss } } };
			o.attrs[2] = TFK_A_STR("padding", c->pad);
			snprintf(name, sizeof(name), "%s %lldx%lld s %lld %s",
				 o.op, (long long)c->kh, (long long)c->kw,
				 (long long)c->sh, c->pad);
			gradcheck(name, in, 1, gc_build_op, &o);
		}
}

int main(void)
{
	geometry();
	hand_values();
	fast_vs_ref();
	vs_torch();
	graph_ops();
	gradients();
	return tap_done();
}
