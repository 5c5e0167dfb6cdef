/*
 * t-fastpath.c - the training hot-path fast paths against their _refs:
 * Relu, ReluGrad, BiasAdd (fixed-block vectorized loops, split over
 * threads when large), Sum over leading axes (bias gradients), Cast
 * of bool and uint8 to float32 (through the Cast kernel in an exec),
 * MaxPool (vectorized max) and MaxPoolGrad (SSE2 argmax), the
 * small-GEMM MatMul kernel, the executor's views (Reshape/Identity
 * sharing their input's bytes) and its TFK_PROFILE report.
 *
 * Bounds: everything but MatMul is exact (bit for bit, NaN, -0,
 * infinities, subnormals and ties included, odd lengths so the vector
 * blocks and the scalar tails both run). MatMul: the fast kernel and
 * the _ref are both float sums of k products in order (one with FMA),
 * each within k * u * sum_l |a_il b_lj| of the exact value (u = 2^-24,
 * Higham's gamma_k), so they may differ by 2 k u sum|a||b|; the test
 * checks that bound, and that 1, 2 and 3 threads give the same bytes.
 */
#include "kernels/cpu.h"
#include "graph/exec.h"
#include "graph/graph.h"
#include "tap.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t rs = 88172645463325252ull;

static uint32_t urand(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)(rs >> 11);
}

/* values in [-2, 2), with specials sprinkled in when `specials` */
static float frand(int specials)
{
	static const float sp[] = { NAN, -0.0f, 0.0f, INFINITY, -INFINITY,
				    1e-40f, -1e-40f, 1.0f, -1.0f };

	if (specials && urand() % 7 == 0)
		return sp[urand() % (sizeof(sp) / sizeof(sp[0]))];
	return (float)(urand() % 4096) / 1024.0f - 2.0f;
}

static void fill(struct tfk_tensor *t, int specials)
{
	int64_t i;

	for (i = 0; i < tfk_tensor_numel(t); i++)
		((float *)t->data)[i] = frand(specials);
}

static void relu_paths(void)
{
	static const int64_t ns[] = { 0, 1, 15, 16, 17, 33, 1000, 4099 };
	struct tfk_err err = { 0, "" };
	int i, bad = 0, bad_g = 0, bad_ip = 0;

	for (i = 0; i < (int)(sizeof(ns) / sizeof(ns[0])); i++) {
		struct tfk_tensor x, dy, o1, o2;
		int64_t s[1] = { ns[i] };

		tfk_tensor_init(&x, TFK_DT_FLOAT, 1, s, NULL);
		tfk_tensor_init(&dy, TFK_DT_FLOAT, 1, s, NULL);
		tfk_tensor_init(&o1, TFK_DT_FLOAT, 1, s, NULL);
		tfk_tensor_init(&o2, TFK_DT_FLOAT, 1, s, NULL);
		fill(&x, 1);
		fill(&dy, 1);
		bad += !!tfk_cpu_unary_ref(TFK_UN_RELU, &x, &o1, &err);
		bad += !!tfk_cpu_unary(TFK_UN_RELU, &x, &o2, &err);
		bad += !!memcmp(o1.data, o2.data, o1.nbytes);
		memcpy(o2.data, x.data, x.nbytes);
		tfk_cpu_unary(TFK_UN_RELU, &o2, &o2, &err);
		bad_ip += !!memcmp(o1.data, o2.data, o1.nbytes);
		bad_g += !!tfk_cpu_relu_grad_ref(&dy, &x, &o1, &err);
		bad_g += !!tfk_cpu_relu_grad(&dy, &x, &o2, &err);
		bad_g += !!memcmp(o1.data, o2.data, o1.nbytes);
		tfk_tensor_release(&x);
		tfk_tensor_release(&dy);
		tfk_tensor_release(&o1);
		tfk_tensor_release(&o2);
	}
	is_int(bad, 0, "fast Relu == _ref bit for bit (NaN kept, -0 -> +0, "
	       "lengths 0..4099)");
	is_int(bad_ip, 0, "fast Relu in place likewise");
	is_int(bad_g, 0, "fast ReluGrad == _ref bit for bit");
}

/* Sum over the leading axes (a bias gradient) == float sums in row
 * order, the order of the generic loop it replaces; K1 x R x K2 too. */
static void sum_paths(void)
{
	static const int64_t sh[][4] = { { 4, 6, 5, 32 }, { 2, 3, 7, 17 },
					 { 1, 9, 1, 48 }, { 3, 5, 2, 130 } };
	static const unsigned masks[] = { 7, 6 };
	struct tfk_err err = { 0, "" };
	int i, m, bad = 0;

	for (i = 0; i < 4; i++)
		for (m = 0; m < 2; m++) {
			int64_t os[4], n, c, j, outer;
			struct tfk_tensor x, o;
			float *want;

			memcpy(os, sh[i], sizeof(os));
			os[1] = os[2] = 1;
			if (masks[m] & 1)
				os[0] = 1;
			tfk_tensor_init(&x, TFK_DT_FLOAT, 4, sh[i], NULL);
			tfk_tensor_init(&o, TFK_DT_FLOAT, 4, os, NULL);
			fill(&x, 1);
			c = sh[i][3];
			outer = masks[m] & 1 ? 1 : sh[i][0];
			n = tfk_tensor_numel(&x) / c / outer;
			want = calloc(outer * c, sizeof(float));
			for (j = 0; j < outer * n; j++) {
				int64_t k, base = (j / n) * c;

				for (k = 0; k < c; k++)
					want[base + k] +=
						((float *)x.data)[j * c + k];
			}
			bad += !!tfk_cpu_reduce(TFK_RED_SUM, &x, masks[m], &o,
						&err);
			for (j = 0; j < outer * c; j++) {
				float g = ((float *)o.data)[j];

				/* a NaN's payload depends on which
				 * operand the compiler put first */
				bad += isnan(g) ? !isnan(want[j]) :
					memcmp(&g, &want[j], 4) != 0;
			}
			free(want);
			tfk_tensor_release(&x);
			tfk_tensor_release(&o);
		}
	is_int(bad, 0, "Sum over leading axes == float sums in row order, "
	       "bit for bit but NaN payloads (inf, -0; 17..130 columns)");
}

static void bias_paths(void)
{
	static const int64_t cs[] = { 1, 10, 16, 17, 32, 48, 130 };
	struct tfk_err err = { 0, "" };
	int i, bad = 0;

	for (i = 0; i < (int)(sizeof(cs) / sizeof(cs[0])); i++) {
		int64_t s[3] = { 3, 13, cs[i] }, sb[1] = { cs[i] };
		struct tfk_tensor x, b, o1, o2;

		tfk_tensor_init(&x, TFK_DT_FLOAT, 3, s, NULL);
		tfk_tensor_init(&b, TFK_DT_FLOAT, 1, sb, NULL);
		tfk_tensor_init(&o1, TFK_DT_FLOAT, 3, s, NULL);
		tfk_tensor_init(&o2, TFK_DT_FLOAT, 3, s, NULL);
		fill(&x, 1);
		fill(&b, 1);
		bad += !!tfk_cpu_bias_add_ref(&x, &b, &o1, &err);
		bad += !!tfk_cpu_bias_add(&x, &b, &o2, &err);
		bad += !!memcmp(o1.data, o2.data, o1.nbytes);
		tfk_tensor_release(&x);
		tfk_tensor_release(&b);
		tfk_tensor_release(&o1);
		tfk_tensor_release(&o2);
	}
	is_int(bad, 0, "fast BiasAdd == _ref bit for bit (channels 1..130)");
}

/* Cast(x: src) -> float32 through an exec, against tfk_cpu_cast_ref. */
static void cast_path(enum tfk_dtype src, const char *what)
{
	struct tfk_err err = { 0, "" };
	struct tfk_graph *g = NULL;
	struct tfk_exec *x = NULL;
	struct tfk_port p, c;
	struct tfk_attr at[1] = { TFK_A_TYPE("DstT", TFK_DT_FLOAT) };
	struct tfk_tensor in, want;
	const struct tfk_tensor *got = NULL;
	const char *feeds[] = { "x" }, *fetches[] = { "c" };
	int64_t any[1] = { -1 }, s[1] = { 1037 }, i;
	int rc;

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", src, 1, any, &p, &err);
	tfk_graph_add_node(g, "Cast", "c", &p, 1, at, 1, &c, &err);
	rc = tfk_exec_new(&x, g, feeds, 1, fetches, 1, NULL, &err);
	tfk_tensor_init(&in, src, 1, s, NULL);
	tfk_tensor_init(&want, TFK_DT_FLOAT, 1, s, NULL);
	for (i = 0; i < s[0]; i++)	/* bool bytes other than 0/1 too */
		((uint8_t *)in.data)[i] = (uint8_t)(i % 5 == 0 ? urand() :
						    i % 2);
	tfk_cpu_cast_ref(&in, &want, &err);
	if (!rc)
		rc = tfk_exec_run(x, &in, 0, &got, &err);
	if (rc)
		tap_diag("%s", err.msg);
	ok(!rc && got && got->dtype == TFK_DT_FLOAT &&
	   !memcmp(got->data, want.data, want.nbytes),
	   "Cast %s -> float32 == _ref bit for bit", what);
	tfk_exec_free(x);
	tfk_graph_free(g);
	tfk_tensor_release(&in);
	tfk_tensor_release(&want);
}

static void pool_grad_paths(void)
{
	static const struct {
		int64_t n, h, w, c, k, s;
		const char *pad;
	} cf[] = {
		{ 2, 24, 24, 32, 2, 2, "VALID" },
		{ 2, 7, 9, 33, 2, 2, "SAME" },
		{ 1, 8, 8, 4, 3, 1, "SAME" },
		{ 3, 5, 6, 5, 3, 2, "VALID" },
		{ 2, 6, 6, 3, 2, 1, "VALID" },
		{ 1, 4, 4, 1, 2, 2, "SAME" },
		{ 1, 9, 7, 36, 3, 3, "SAME" },
	};
	struct tfk_err err = { 0, "" };
	int i, t, bad = 0;

	for (i = 0; i < (int)(sizeof(cf) / sizeof(cf[0])); i++)
		for (t = 1; t <= 2; t++) {
			int64_t in[4] = { cf[i].n, cf[i].h, cf[i].w, cf[i].c };
			int64_t k[4] = { 1, cf[i].k, cf[i].k, 1 };
			int64_t s[4] = { 1, cf[i].s, cf[i].s, 1 }, ys[4], j;
			struct tfk_pool2d p;
			struct tfk_tensor x, dy, d1, d2, y1, y2;

			bad += !!tfk_pool2d_geom(&p, in, k, s, cf[i].pad,
						 &err);
			ys[0] = p.n, ys[1] = p.oh, ys[2] = p.ow, ys[3] = p.c;
			tfk_tensor_init(&x, TFK_DT_FLOAT, 4, in, NULL);
			tfk_tensor_init(&d1, TFK_DT_FLOAT, 4, in, NULL);
			tfk_tensor_init(&d2, TFK_DT_FLOAT, 4, in, NULL);
			tfk_tensor_init(&dy, TFK_DT_FLOAT, 4, ys, NULL);
			tfk_tensor_init(&y1, TFK_DT_FLOAT, 4, ys, NULL);
			tfk_tensor_init(&y2, TFK_DT_FLOAT, 4, ys, NULL);
			/* few distinct values: many ties */
			for (j = 0; j < tfk_tensor_numel(&x); j++)
				((float *)x.data)[j] = urand() % 50 == 0 ?
					frand(1) : (float)(urand() % 4);
			fill(&dy, 1);
			bad += !!tfk_cpu_max_pool_ref(&p, &x, &y1, &err);
			bad += !!tfk_cpu_max_pool(&p, &x, &y2, t, &err);
			bad += !!memcmp(y1.data, y2.data, y1.nbytes);
			bad += !!tfk_cpu_max_pool_grad_ref(&p, &x, &dy, &d1,
							   &err);
			bad += !!tfk_cpu_max_pool_grad(&p, &x, &dy, &d2, t,
						       &err);
			bad += !!memcmp(d1.data, d2.data, d1.nbytes);
			tfk_tensor_release(&x);
			tfk_tensor_release(&dy);
			tfk_tensor_release(&d1);
			tfk_tensor_release(&d2);
			tfk_tensor_release(&y1);
			tfk_tensor_release(&y2);
		}
	is_int(bad, 0, "fast MaxPool and MaxPoolGrad == _ref bit for bit "
	       "(ties, NaN, -0; channels 1..36; 1 and 2 threads)");
}

static void gemm_paths(void)
{
	static const struct {
		int ta, tb;
		int64_t m, n, k;
	} cf[] = {
		{ 0, 0, 32, 128, 784 },	/* MLP forward */
		{ 1, 0, 784, 128, 32 },	/* its kernel gradient */
		{ 0, 0, 33, 80, 17 },	/* row and vector tails */
		{ 1, 0, 7, 16, 3 },
		{ 0, 0, 2, 48, 1 },
		{ 0, 0, 5, 10, 9 },	/* n % 16: OpenBLAS */
		{ 0, 1, 6, 32, 9 },	/* transposed B: OpenBLAS */
		{ 1, 1, 9, 64, 40 },
		{ 0, 0, 1, 64, 20 },	/* one row: sgemv */
	};
	int i, bad_bound = 0, bad_threads = 0;
	double worst = 0;

	for (i = 0; i < (int)(sizeof(cf) / sizeof(cf[0])); i++) {
		int64_t m = cf[i].m, n = cf[i].n, k = cf[i].k, r, j, l;
		float *a = malloc(m * k * sizeof(float));
		float *b = malloc(k * n * sizeof(float));
		float *c0 = malloc(m * n * sizeof(float));
		float *c1 = malloc(m * n * sizeof(float));
		float *c2 = malloc(m * n * sizeof(float));
		float *c3 = malloc(m * n * sizeof(float));

		for (j = 0; j < m * k; j++)
			a[j] = frand(0);
		for (j = 0; j < k * n; j++)
			b[j] = frand(0);
		tfk_cpu_sgemm_ref(cf[i].ta, cf[i].tb, m, n, k, a, b, c0);
		tfk_cpu_sgemm(cf[i].ta, cf[i].tb, m, n, k, a, b, c1);
		tfk_cpu_sgemm_mt(cf[i].ta, cf[i].tb, m, n, k, a, b, c2, 2);
		tfk_cpu_sgemm_mt(cf[i].ta, cf[i].tb, m, n, k, a, b, c3, 3);
		bad_threads += !!memcmp(c1, c2, m * n * sizeof(float)) +
			!!memcmp(c1, c3, m * n * sizeof(float));
		for (r = 0; r < m; r++)
			for (j = 0; j < n; j++) {
				double s = 0, d, e;

				for (l = 0; l < k; l++)
					s += fabs((double)(cf[i].ta ?
						a[l * m + r] : a[r * k + l]) *
						(cf[i].tb ? b[j * k + l] :
						 b[l * n + j]));
				d = fabs((double)c1[r * n + j] - c0[r * n + j]);
				e = 2.0 * k * ldexp(1, -24) * s;
				bad_bound += d > e;
				if (s > 0 && d / s > worst)
					worst = d / s;
			}
		free(a);
		free(b);
		free(c0);
		free(c1);
		free(c2);
		free(c3);
	}
	is_int(bad_bound, 0, "sgemm vs _ref within 2 k 2^-24 sum|a||b| "
	       "(worst %.2g of sum|a||b|)", worst);
	is_int(bad_threads, 0, "sgemm with 1, 2 and 3 threads: same bytes");
}

/* Relu, ReluGrad and BiasAdd large enough to be split over threads, run
 * by an exec with 1, 2 and 3 threads, against the _refs. */
static void split_paths(void)
{
	struct tfk_err err = { 0, "" };
	struct tfk_graph *g = NULL;
	struct tfk_port x, dy, b, in2[2];
	int64_t s[2] = { 300, 257 }, sb[1] = { 257 };
	const char *feeds[] = { "x", "dy", "b" };
	const char *fetches[] = { "relu", "grad", "bias" };
	struct tfk_tensor fv[3], want[3];
	int t, i, bad = 0;

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 2, s, &x, &err);
	tfk_graph_placeholder(g, "dy", TFK_DT_FLOAT, 2, s, &dy, &err);
	tfk_graph_placeholder(g, "b", TFK_DT_FLOAT, 1, sb, &b, &err);
	tfk_graph_add_node(g, "Relu", "relu", &x, 1, NULL, 0, NULL, &err);
	in2[0] = dy, in2[1] = x;
	tfk_graph_add_node(g, "ReluGrad", "grad", in2, 2, NULL, 0, NULL,
			   &err);
	in2[0] = x, in2[1] = b;
	tfk_graph_add_node(g, "BiasAdd", "bias", in2, 2, NULL, 0, NULL,
			   &err);
	tfk_tensor_init(&fv[0], TFK_DT_FLOAT, 2, s, NULL);
	tfk_tensor_init(&fv[1], TFK_DT_FLOAT, 2, s, NULL);
	tfk_tensor_init(&fv[2], TFK_DT_FLOAT, 1, sb, NULL);
	for (i = 0; i < 3; i++)
		fill(&fv[i], 1);
	tfk_tensor_init(&want[0], TFK_DT_FLOAT, 2, s, NULL);
	tfk_tensor_init(&want[1], TFK_DT_FLOAT, 2, s, NULL);
	tfk_tensor_init(&want[2], TFK_DT_FLOAT, 2, s, NULL);
	tfk_cpu_unary_ref(TFK_UN_RELU, &fv[0], &want[0], &err);
	tfk_cpu_relu_grad_ref(&fv[1], &fv[0], &want[1], &err);
	tfk_cpu_bias_add_ref(&fv[0], &fv[2], &want[2], &err);
	for (t = 1; t <= 3; t++) {
		struct tfk_exec_opts o = { NULL, 0, t };
		struct tfk_exec *xe = NULL;
		const struct tfk_tensor *got[3] = { NULL, NULL, NULL };
		int rc = tfk_exec_new(&xe, g, feeds, 3, fetches, 3, &o, &err);

		if (!rc)
			rc = tfk_exec_run(xe, fv, 0, got, &err);
		if (rc)
			tap_diag("%s", err.msg);
		for (i = 0; i < 3; i++)
			bad += rc || memcmp(got[i]->data, want[i].data,
					    want[i].nbytes);
		tfk_exec_free(xe);
	}
	is_int(bad, 0, "Relu, ReluGrad, BiasAdd of 77,100 floats on 1, 2 "
	       "and 3 threads == _refs bit for bit");
	for (i = 0; i < 3; i++) {
		tfk_tensor_release(&fv[i]);
		tfk_tensor_release(&want[i]);
	}
	tfk_graph_free(g);
}

static struct tfk_port node1(struct tfk_graph *g, const char *op,
			     const char *name, struct tfk_port a,
			     struct tfk_port b, int n_in)
{
	struct tfk_port in[2] = { a, b }, out = { -1, 0 };
	struct tfk_err err = { 0, "" };

	if (tfk_graph_add_node(g, op, name, in, n_in, NULL, 0, &out, &err))
		tap_diag("%s: %s", name, err.msg);
	return out;
}

/*
 * Views: Reshape/Identity outputs share their input's bytes. The root's
 * lifetime must reach the view's last reader: in
 *   a = Relu(x); v = Reshape(a); w = Identity(v); b = Neg(x);
 *   c = AddV2(w, b)
 * b would take a's bytes (a's last direct reader is v) and c would be
 * b + b. A fetched view of an arena buffer is fine; a fetched view of a
 * feed is a copy (the fetch must not point into the caller's feed).
 */
static void view_paths(void)
{
	struct tfk_err err = { 0, "" };
	struct tfk_graph *g = NULL;
	struct tfk_exec *xe = NULL;
	struct tfk_exec_stats st;
	struct tfk_port x, a, v, w, b, c, fx, r, none = { -1, 0 }, shp, shp2;
	int64_t s[2] = { 64, 16 };
	int32_t flat[1] = { 1024 }, back[2] = { 64, 16 };
	const char *feeds[] = { "x" };
	const char *f1[] = { "c", "w" }, *f2[] = { "fx", "r" };
	const struct tfk_tensor *got[2] = { NULL, NULL };
	struct tfk_tensor in;
	int i, bad = 0, rc;

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 2, s, &x, &err);
	tfk_graph_const_i32v(g, "flat", flat, 1, &shp, &err);
	tfk_graph_const_i32v(g, "back", back, 2, &shp2, &err);
	a = node1(g, "Relu", "a", x, none, 1);
	v = node1(g, "Reshape", "v", a, shp, 2);
	w = node1(g, "Identity", "w", v, none, 1);
	b = node1(g, "Neg", "b", x, none, 1);
	b = node1(g, "Reshape", "bf", b, shp, 2);
	c = node1(g, "AddV2", "c", w, b, 2);
	fx = node1(g, "Reshape", "fx", x, shp, 2);	/* fetched: copy */
	r = node1(g, "Reshape", "xr", x, shp, 2);	/* view of the feed */
	r = node1(g, "Relu", "r", r, none, 1);
	(void)c, (void)fx, (void)r;
	tfk_tensor_init(&in, TFK_DT_FLOAT, 2, s, NULL);
	fill(&in, 0);
	rc = tfk_exec_new(&xe, g, feeds, 1, f1, 2, NULL, &err);
	if (!rc)
		rc = tfk_exec_run(xe, &in, 0, got, &err);
	ok(!rc, "views: run (%s)", err.msg);
	for (i = 0; !rc && i < 1024; i++) {
		float xv = ((float *)in.data)[i];
		float av = xv > 0 ? xv : 0;

		bad += ((float *)got[0]->data)[i] != av + -xv ||
			((float *)got[1]->data)[i] != av;
	}
	is_int(bad, 0, "a viewed buffer lives to its views' last reader "
	       "(c = relu(x) - x, fetched w = relu(x))");
	tfk_exec_stats(xe, &st);
	is_int(st.sum_bytes, 3 * 1024 * 4, "views take no buffer: a, b "
	       "(Neg) and c only");
	tfk_exec_free(xe);
	xe = NULL;
	bad = 0;
	rc = tfk_exec_new(&xe, g, feeds, 1, f2, 2, NULL, &err);
	if (!rc)
		rc = tfk_exec_run(xe, &in, 0, got, &err);
	ok(!rc, "views of a feed: run (%s)", err.msg);
	for (i = 0; !rc && i < 1024; i++) {
		float xv = ((float *)in.data)[i];

		bad += ((float *)got[0]->data)[i] != xv ||
			((float *)got[1]->data)[i] != (xv > 0 ? xv : 0);
	}
	is_int(bad, 0, "values through views of the feed");
	ok(!rc && got[0]->data != in.data, "a fetched Reshape of a feed is "
	   "a copy, not the caller's bytes");
	tfk_exec_stats(xe, &st);
	is_int(st.sum_bytes, 2 * 1024 * 4, "the fetched copy and r; xr is "
	       "a view of the feed");
	tfk_exec_free(xe);
	tfk_tensor_release(&in);
	tfk_graph_free(g);
}

/* TFK_PROFILE=1: the exec reports per-node times on stderr at free. */
static void profile_report(void)
{
	struct tfk_err err = { 0, "" };
	struct tfk_graph *g = NULL;
	struct tfk_exec *x = NULL;
	struct tfk_port p, r;
	struct tfk_tensor in;
	const struct tfk_tensor *got;
	const char *feeds[] = { "x" }, *fetches[] = { "r" };
	const char *path = tap_tmp("profile.txt");
	int64_t s[1] = { 64 };
	char *txt;
	size_t len;
	int fd, saved;

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 1, s, &p, &err);
	tfk_graph_add_node(g, "Relu", "r", &p, 1, NULL, 0, &r, &err);
	tfk_tensor_init(&in, TFK_DT_FLOAT, 1, s, NULL);
	fill(&in, 0);
	setenv("TFK_PROFILE", "1", 1);
	tfk_exec_new(&x, g, feeds, 1, fetches, 1, NULL, &err);
	unsetenv("TFK_PROFILE");
	tfk_exec_run(x, &in, 0, &got, &err);
	tfk_exec_run(x, &in, 1, &got, &err);
	fflush(stderr);
	saved = dup(2);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 2);
	close(fd);
	tfk_exec_free(x);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	txt = tap_read_file(path, &len);
	ok(txt && !strncmp(txt, "tfk profile: 2 nodes, 2 runs, ", 30),
	   "TFK_PROFILE: header with nodes and runs");
	ok(txt && strstr(txt, "%  Relu") && strstr(txt, " r [64]\n"),
	   "TFK_PROFILE: a line per node with op, name and shape");
	free(txt);
	tfk_graph_free(g);
	tfk_tensor_release(&in);
}

int main(void)
{
	relu_paths();
	bias_paths();
	sum_paths();
	cast_path(TFK_DT_BOOL, "bool");
	cast_path(TFK_DT_UINT8, "uint8");
	pool_grad_paths();
	gemm_paths();
	split_paths();
	view_paths();
	profile_report();
	return tap_done();
}
