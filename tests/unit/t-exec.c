/*
 * t-exec.c - the executor: a 2-layer MLP forward pass against numpy
 * ($PYTHON, an independent oracle), the memory plan (buffers reused:
 * peak bytes below the sum), identical repeated runs without
 * allocation, batch size changes, variables written between runs,
 * pruning, feed/fetch errors, gradients checked by central finite
 * differences, and failed allocations while planning.
 *
 * Tolerances: forward float32 vs numpy float64: relative 1e-5 (+1e-6
 * absolute). Gradients in float64 vs central differences with h 1e-6:
 * |analytic - numeric| <= 1e-6 * (1 + |numeric|) (the difference
 * quotient's error is O(h^2 f''') + O(eps/h), about 1e-9 here).
 */
#include "graph/exec.h"
#include "graph/graph.h"
#include "util/alloc.h"
#include "gradcheck.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fill_f32(struct tfk_tensor *t, int seed)
{
	int64_t i;

	for (i = 0; i < tfk_tensor_numel(t); i++)
		((float *)t->data)[i] = (float)tap_val(seed, (int)i);
}

static void fill_f64(struct tfk_tensor *t, int seed)
{
	int64_t i;

	for (i = 0; i < tfk_tensor_numel(t); i++)
		((double *)t->data)[i] = tap_val(seed, (int)i);
}

static struct tfk_port add(struct tfk_graph *g, const char *op,
			   const char *name, struct tfk_port a,
			   struct tfk_port b, int n_in,
			   const struct tfk_attr *attrs, int n_attrs)
{
	struct tfk_port in[2] = { a, b }, out = { -1, 0 };
	struct tfk_err err = { 0, "" };

	if (tfk_graph_add_node(g, op, name, in, n_in, attrs, n_attrs, &out,
			       &err))
		tap_diag("add %s: %s", name ? name : op, err.msg);
	return out;
}

static struct tfk_port var(struct tfk_graph *g, const char *name,
			   enum tfk_dtype dt, int rank, int64_t d0,
			   int64_t d1, int seed)
{
	int64_t s[2] = { d0, d1 };
	struct tfk_tensor t;
	struct tfk_port p = { -1, 0 };
	struct tfk_err err = { 0, "" };

	tfk_tensor_init(&t, dt, rank, s, &err);
	if (dt == TFK_DT_FLOAT)
		fill_f32(&t, seed);
	else
		fill_f64(&t, seed);
	if (tfk_graph_variable(g, name, &t, &p, &err))
		tap_diag("variable %s: %s", name, err.msg);
	return p;
}

/* x[?, 4] -> Dense(8, relu) -> Dense(3) -> Softmax */
static struct tfk_graph *mlp(void)
{
	struct tfk_graph *g;
	struct tfk_err err = { 0, "" };
	int64_t xs[2] = { -1, 4 };
	struct tfk_port x, h, none = { -1, 0 };

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 2, xs, &x, &err);
	h = add(g, "MatMul", "dense/MatMul", x,
		var(g, "dense/kernel", TFK_DT_FLOAT, 2, 4, 8, 1), 2, NULL, 0);
	h = add(g, "BiasAdd", "dense/BiasAdd", h,
		var(g, "dense/bias", TFK_DT_FLOAT, 1, 8, 0, 2), 2, NULL, 0);
	h = add(g, "Relu", "dense/Relu", h, none, 1, NULL, 0);
	h = add(g, "MatMul", "dense_1/MatMul", h,
		var(g, "dense_1/kernel", TFK_DT_FLOAT, 2, 8, 3, 3), 2, NULL,
		0);
	h = add(g, "BiasAdd", "dense_1/BiasAdd", h,
		var(g, "dense_1/bias", TFK_DT_FLOAT, 1, 3, 0, 4), 2, NULL, 0);
	h = add(g, "Softmax", "dense_1/Softmax", h, none, 1, NULL, 0);
	tfk_graph_set_output(g, "probs", h, &err);
	return g;
}

/* numpy computes the MLP from the same raw float32 bytes. */
static int numpy_mlp(struct tfk_graph *g, const struct tfk_tensor *x,
		     float *want, int batch)
{
	static const char *const names[] = { "dense/kernel", "dense/bias",
					     "dense_1/kernel",
					     "dense_1/bias" };
	char cmd[2048];
	size_t n;
	float *got;
	int i;

	tap_write_file(tap_tmp("x.bin"), x->data, x->nbytes);
	for (i = 0; i < 4; i++) {
		char nm[32];
		struct tfk_tensor *t = tfk_graph_var(g, names[i]);

		snprintf(nm, sizeof(nm), "v%d.bin", i);
		tap_write_file(tap_tmp(nm), t->data, t->nbytes);
	}
	snprintf(cmd, sizeof(cmd), "cd '%s' && '%s' -c '\n"
		 "import numpy as np\n"
		 "f = lambda n, *s: np.fromfile(n, dtype=np.float32)"
		 ".astype(np.float64).reshape(s)\n"
		 "x = f(\"x.bin\", %d, 4)\n"
		 "w1, b1 = f(\"v0.bin\", 4, 8), f(\"v1.bin\", 8)\n"
		 "w2, b2 = f(\"v2.bin\", 8, 3), f(\"v3.bin\", 3)\n"
		 "h = np.maximum(x @ w1 + b1, 0) @ w2 + b2\n"
		 "e = np.exp(h - h.max(axis=1, keepdims=True))\n"
		 "(e / e.sum(axis=1, keepdims=True)).astype(np.float32)"
		 ".tofile(\"want.bin\")\n'", tap_tmpdir(), tap_python(), batch);
	if (system(cmd))
		return -1;
	got = tap_read_file(tap_tmp("want.bin"), &n);
	if (!got || n != (size_t)batch * 3 * 4) {
		free(got);
		return -1;
	}
	memcpy(want, got, n);
	free(got);
	return 0;
}

static int close_to(const float *a, const float *b, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!(fabs(a[i] - b[i]) <= 1e-5 * fabs(b[i]) + 1e-6))
			return 0;
	return 1;
}

static void forward(void)
{
	struct tfk_graph *g = mlp();
	const char *feeds[] = { "x" }, *fetch[] = { "probs" };
	const struct tfk_tensor *out;
	struct tfk_exec_stats st;
	struct tfk_tensor x, x2;
	struct tfk_exec *ex;
	struct tfk_err err = { 0, "" };
	int64_t s5[2] = { 5, 4 }, s2[2] = { 2, 4 }, s9[2] = { 9, 4 };
	float want[27], first[15];
	float *kern;

	ok(!tfk_exec_new(&ex, g, feeds, 1, fetch, 1, NULL, &err),
	   "exec for probs: %s", err.msg);
	tfk_tensor_init(&x, TFK_DT_FLOAT, 2, s5, &err);
	fill_f32(&x, 10);
	ok(!tfk_exec_run(ex, &x, 0, &out, &err), "run batch 5: %s", err.msg);
	ok(out->rank == 2 && out->shape[0] == 5 && out->shape[1] == 3 &&
	   out->dtype == TFK_DT_FLOAT, "probs [5, 3] float32");
	ok(!numpy_mlp(g, &x, want, 5), "numpy oracle ran");
	ok(close_to(out->data, want, 15), "MLP forward == numpy (rel 1e-5)");
	memcpy(first, out->data, sizeof(first));
	tfk_exec_stats(ex, &st);
	is_int(st.n_plans, 1, "one plan");
	is_int(st.n_allocs, 1, "one arena allocation");
	is_int(st.n_nodes, 11, "11 nodes kept");
	ok(!tfk_exec_run(ex, &x, 1, &out, &err), "run again");
	is_mem(out->data, 60, first, 60, "identical result");
	tfk_exec_stats(ex, &st);
	ok(st.n_plans == 1 && st.n_allocs == 1, "no replan, no allocation");

	/* batch 2 (rows 0-1 of x), then 5 again, then 9 */
	tfk_tensor_init_view(&x2, TFK_DT_FLOAT, 2, s2, x.data, 32,
			     TFK_OWN_BORROWED, &err);
	ok(!tfk_exec_run(ex, &x2, 2, &out, &err), "run batch 2");
	ok(out->shape[0] == 2, "probs [2, 3]");
	is_mem(out->data, 24, first, 24, "rows equal batch 5's first rows");
	tfk_exec_stats(ex, &st);
	ok(st.n_plans == 2 && st.n_allocs == 1, "replanned, arena reused "
	   "(plans %d allocs %d)", st.n_plans, st.n_allocs);
	ok(!tfk_exec_run(ex, &x, 3, &out, &err), "batch 5 again");
	is_mem(out->data, 60, first, 60, "same result as the first run");
	tfk_exec_stats(ex, &st);
	ok(st.n_plans == 3 && st.n_allocs == 1, "replanned, no allocation");
	tfk_tensor_release(&x);
	tfk_tensor_init(&x, TFK_DT_FLOAT, 2, s9, &err);
	fill_f32(&x, 11);
	ok(!tfk_exec_run(ex, &x, 4, &out, &err), "batch 9");
	ok(!numpy_mlp(g, &x, want, 9) && close_to(out->data, want, 27),
	   "batch 9 == numpy");
	tfk_exec_stats(ex, &st);
	ok(st.n_allocs == 2 && st.capacity >= st.arena_bytes,
	   "arena grew once");

	/* an optimizer writes a variable in place between runs */
	kern = tfk_graph_var(g, "dense_1/bias")->data;
	kern[0] += 1;
	ok(!tfk_exec_run(ex, &x, 5, &out, &err), "run after a write");
	ok(!numpy_mlp(g, &x, want, 9) && close_to(out->data, want, 27),
	   "new bias seen (== numpy with the new bias)");

	/* feed errors */
	tfk_tensor_release(&x);
	s5[1] = 3;
	tfk_tensor_init(&x, TFK_DT_FLOAT, 2, s5, &err);
	is_int(tfk_exec_run(ex, &x, 6, &out, &err), TFK_EINVAL,
	       "feed [5, 3] for [?, 4]");
	is_str(err.msg, "feed 'x': expected float32 [?, 4], got float32 "
	       "[5, 3]", "message");
	tfk_tensor_release(&x);
	tfk_tensor_init(&x, TFK_DT_DOUBLE, 2, s2, &err);
	is_int(tfk_exec_run(ex, &x, 6, &out, &err), TFK_EINVAL,
	       "float64 feed refused");
	tfk_tensor_release(&x);
	tfk_exec_free(ex);
	tfk_graph_free(g);
}

static void plan_and_prune(void)
{
	struct tfk_graph *g;
	struct tfk_err err = { 0, "" };
	int64_t xs[2] = { 64, 256 };
	struct tfk_port x, h, none = { -1, 0 }, side;
	const char *feeds[] = { "x" }, *fetch[] = { "h9" }, *fetch2[] = { "h3" };
	const struct tfk_tensor *out;
	struct tfk_exec_stats st;
	struct tfk_tensor t;
	struct tfk_exec *ex;
	float want;
	int i;

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 2, xs, &x, &err);
	tfk_graph_placeholder(g, "unused", TFK_DT_FLOAT, 2, xs, &side, &err);
	h = x;
	for (i = 0; i < 10; i++) {
		char nm[8];

		snprintf(nm, sizeof(nm), "h%d", i);
		h = add(g, i % 2 ? "Relu" : "Tanh", nm, h, none, 1, NULL, 0);
	}
	add(g, "AddV2", "side", h, side, 2, NULL, 0);
	ok(!tfk_exec_new(&ex, g, feeds, 1, fetch, 1, NULL, &err),
	   "chain of 10, 'unused' not needed: %s", err.msg);
	tfk_tensor_init(&t, TFK_DT_FLOAT, 2, xs, &err);
	for (i = 0; i < 64 * 256; i++)
		((float *)t.data)[i] = 0.5f;
	ok(!tfk_exec_run(ex, &t, 0, &out, &err), "run");
	want = 0.5f;
	for (i = 0; i < 10; i++)
		want = i % 2 ? (want > 0 ? want : 0) : tanhf(want);
	ok(fabsf(((float *)out->data)[64 * 256 - 1] - want) < 1e-6f,
	   "value of tanh/relu chain");
	tfk_exec_stats(ex, &st);
	is_int(st.sum_bytes, 10 * 64 * 256 * 4, "10 buffers of 64 KiB");
	is_int(st.arena_bytes, 2 * 64 * 256 * 4, "peak: 2 buffers (reused)");
	ok(st.arena_bytes < st.sum_bytes, "peak %zu < sum %zu",
	   st.arena_bytes, st.sum_bytes);
	is_int(st.n_nodes, 11, "pruned to x and the chain");
	tfk_exec_free(ex);

	ok(!tfk_exec_new(&ex, g, feeds, 1, fetch2, 1, NULL, &err), "fetch h3");
	tfk_exec_stats(ex, &st);
	is_int(st.n_nodes, 5, "only x..h3 kept");
	tfk_exec_free(ex);

	fetch[0] = "side";
	is_int(tfk_exec_new(&ex, g, feeds, 1, fetch, 1, NULL, &err),
	       TFK_EINVAL, "needed placeholder not fed");
	is_str(err.msg, "placeholder 'unused' is needed by the fetches but "
	       "not fed", "message");
	ok(ex == NULL, "no exec");
	fetch[0] = "nope";
	is_int(tfk_exec_new(&ex, g, feeds, 1, fetch, 1, NULL, &err),
	       TFK_ENOTFOUND, "unknown fetch");
	is_str(err.msg, "fetch 'nope': no node or output named 'nope'",
	       "message");
	fetch[0] = "h9";
	feeds[0] = "h2";
	is_int(tfk_exec_new(&ex, g, feeds, 1, fetch, 1, NULL, &err),
	       TFK_EINVAL, "feeding a non-placeholder");
	is_str(err.msg, "feed 'h2': node h2 is not a Placeholder", "message");
	tfk_tensor_release(&t);
	tfk_graph_free(g);
}

/* Finite differences ------------------------------------------------ */

static double *copy_out(const struct tfk_tensor *t)
{
	double *p = malloc(t->nbytes);

	memcpy(p, t->data, t->nbytes);
	return p;
}

/*
 * loss = Sum(Mul(BiasAdd(MatMul(Relu(AddV2(MatMul(x, W1), b1)), W2^T),
 * b2) * c, r)) in float64: gradients for x (feed), W1, b1, W2, b2.
 */
static void gradients_mlp(void)
{
	struct tfk_graph *g;
	struct tfk_err err = { 0, "" };
	int64_t xs[2] = { 3, 4 }, cs[2] = { 1, 2 }, rs[2] = { 3, 2 };
	struct tfk_port x, w1, b1, w2, b2, h, c, r, loss, seed, dx[5];
	struct tfk_port none = { -1, 0 };
	struct tfk_attr tb = TFK_A_BOOL("transpose_b", 1);
	struct tfk_tensor t, xv;
	int32_t axes[2] = { 0, 1 };
	double one = 1, worst = 0;
	const char *feeds[] = { "x" };
	const char *fetch[6] = { "loss" };
	const struct tfk_tensor *out[6];
	struct tfk_exec *ex;
	double *gr[5];
	double *pv[5];
	int i, bad = 0;

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_DOUBLE, 2, xs, &x, &err);
	w1 = var(g, "w1", TFK_DT_DOUBLE, 2, 4, 5, 21);
	b1 = var(g, "b1", TFK_DT_DOUBLE, 1, 5, 0, 22);
	w2 = var(g, "w2", TFK_DT_DOUBLE, 2, 2, 5, 23);
	b2 = var(g, "b2", TFK_DT_DOUBLE, 1, 2, 0, 24);
	h = add(g, "MatMul", NULL, x, w1, 2, NULL, 0);
	h = add(g, "AddV2", NULL, h, b1, 2, NULL, 0);
	h = add(g, "Relu", NULL, h, none, 1, NULL, 0);
	h = add(g, "MatMul", NULL, h, w2, 2, &tb, 1);
	h = add(g, "BiasAdd", NULL, h, b2, 2, NULL, 0);
	tfk_tensor_init(&t, TFK_DT_DOUBLE, 2, cs, &err);
	fill_f64(&t, 25);
	tfk_graph_const(g, "c", &t, &c, &err);
	tfk_tensor_release(&t);
	h = add(g, "Mul", NULL, h, c, 2, NULL, 0);
	tfk_tensor_init(&t, TFK_DT_DOUBLE, 2, rs, &err);
	fill_f64(&t, 26);
	tfk_graph_const(g, "r", &t, &r, &err);
	tfk_tensor_release(&t);
	h = add(g, "Mul", NULL, h, r, 2, NULL, 0);
	tfk_graph_const_i32v(g, "axes", axes, 2, &r, &err);
	loss = add(g, "Sum", "loss", h, r, 2, NULL, 0);
	is_int(tfk_graph_desc(g, loss)->rank, 0, "loss is a scalar");
	tfk_tensor_init_view(&t, TFK_DT_DOUBLE, 0, NULL, &one, 8,
			     TFK_OWN_BORROWED, &err);
	tfk_graph_const(g, "seed", &t, &seed, &err);
	{
		struct tfk_port xs5[5] = { x, w1, b1, w2, b2 };

		ok(!tfk_graph_gradients(g, &loss, &seed, 1, xs5, 5, dx, &err),
		   "gradients: %s", err.msg);
	}
	for (i = 0; i < 5; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "d%d", i);
		tfk_graph_set_output(g, nm, dx[i], &err);
		fetch[i + 1] = i == 0 ? "d0" : i == 1 ? "d1" : i == 2 ? "d2" :
			i == 3 ? "d3" : "d4";
	}
	ok(!tfk_exec_new(&ex, g, feeds, 1, fetch, 6, NULL, &err),
	   "exec loss and 5 gradients: %s", err.msg);
	tfk_tensor_init(&xv, TFK_DT_DOUBLE, 2, xs, &err);
	fill_f64(&xv, 27);
	ok(!tfk_exec_run(ex, &xv, 0, out, &err), "run: %s", err.msg);
	for (i = 0; i < 5; i++)
		gr[i] = copy_out(out[i + 1]);
	ok(out[2]->shape[0] == 4 && out[2]->shape[1] == 5 &&
	   out[3]->rank == 1 && out[3]->shape[0] == 5, "gradient shapes");
	pv[0] = xv.data;
	pv[1] = tfk_graph_var(g, "w1")->data;
	pv[2] = tfk_graph_var(g, "b1")->data;
	pv[3] = tfk_graph_var(g, "w2")->data;
	pv[4] = tfk_graph_var(g, "b2")->data;
	{
		static const int64_t ns[5] = { 12, 20, 5, 10, 2 };
		static const char *const nm[5] = { "x", "W1", "b1", "W2",
						   "b2" };

		for (i = 0; i < 5; i++) {
			int b = gc_check_fd(ex, &xv, pv[i], gr[i], ns[i],
					    &worst);

			is_int(b, 0, "d loss / d %s == finite differences",
			       nm[i]);
			bad += b;
		}
	}
	tap_diag("max |analytic - numeric| / (1 + |numeric|): %.3g", worst);
	for (i = 0; i < 5; i++)
		free(gr[i]);
	tfk_tensor_release(&xv);
	tfk_exec_free(ex);
	tfk_graph_free(g);
}

/* loss = Sum(MatMul(A, B; ta, tb) * R): dA and dB for each transpose. */
static void gradients_matmul(void)
{
	int ta, tb, bad = 0;
	double worst = 0;

	for (ta = 0; ta < 2; ta++)
		for (tb = 0; tb < 2; tb++) {
			struct tfk_graph *g;
			struct tfk_err err = { 0, "" };
			struct tfk_attr at[2] = {
				TFK_A_BOOL("transpose_a", ta),
				TFK_A_BOOL("transpose_b", tb) };
			struct tfk_port a, b, m, rr, loss, seed, d[2];
			struct tfk_tensor t;
			int32_t axes[2] = { 0, 1 };
			int64_t rs[2] = { 3, 2 };
			double one = 1;
			const char *fetch[3] = { "loss", "dA", "dB" };
			const struct tfk_tensor *out[3];
			struct tfk_exec *ex;
					double *ga, *gb;

			/* op(A) is 3 x 4, op(B) is 4 x 2 */
			tfk_graph_new(&g, &err);
			a = ta ? var(g, "A", TFK_DT_DOUBLE, 2, 4, 3, 31) :
				var(g, "A", TFK_DT_DOUBLE, 2, 3, 4, 31);
			b = tb ? var(g, "B", TFK_DT_DOUBLE, 2, 2, 4, 32) :
				var(g, "B", TFK_DT_DOUBLE, 2, 4, 2, 32);
			m = add(g, "MatMul", NULL, a, b, 2, at, 2);
			tfk_tensor_init(&t, TFK_DT_DOUBLE, 2, rs, &err);
			fill_f64(&t, 33);
			tfk_graph_const(g, "R", &t, &rr, &err);
			tfk_tensor_release(&t);
			m = add(g, "Mul", NULL, m, rr, 2, NULL, 0);
			tfk_graph_const_i32v(g, "axes", axes, 2, &rr, &err);
			loss = add(g, "Sum", "loss", m, rr, 2, NULL, 0);
			tfk_tensor_init_view(&t, TFK_DT_DOUBLE, 0, NULL, &one,
					     8, TFK_OWN_BORROWED, &err);
			tfk_graph_const(g, "seed", &t, &seed, &err);
			{
				struct tfk_port xs[2] = { a, b };

				tfk_graph_gradients(g, &loss, &seed, 1, xs, 2,
						    d, &err);
			}
			tfk_graph_set_output(g, "dA", d[0], &err);
			tfk_graph_set_output(g, "dB", d[1], &err);
			if (tfk_exec_new(&ex, g, NULL, 0, fetch, 3, NULL,
					 &err) ||
			    tfk_exec_run(ex, NULL, 0, out, &err)) {
				tap_diag("ta %d tb %d: %s", ta, tb, err.msg);
				bad++;
				tfk_graph_free(g);
				continue;
			}
			ga = copy_out(out[1]);
			gb = copy_out(out[2]);
			bad += gc_check_fd(ex, NULL,
					   tfk_graph_var(g, "A")->data, ga, 12,
					   &worst);
			bad += gc_check_fd(ex, NULL,
					   tfk_graph_var(g, "B")->data, gb, 8,
					   &worst);
			free(ga);
			free(gb);
			tfk_exec_free(ex);
			tfk_graph_free(g);
		}
	is_int(bad, 0, "MatMul gradients, all 4 transpose combinations, == "
	       "finite differences (max err %.3g)", worst);
}

/* exec_new + two runs (second with another batch) with failures. */
static int exec_all(struct tfk_graph *g)
{
	const char *feeds[] = { "x" }, *fetch[] = { "probs" };
	const struct tfk_tensor *out;
	struct tfk_tensor x;
	struct tfk_exec *ex;
	struct tfk_err err = { 0, "" };
	int64_t s[2] = { 5, 4 };
	float buf[20] = { 0 };
	int rc;

	rc = tfk_exec_new(&ex, g, feeds, 1, fetch, 1, NULL, &err);
	if (rc)
		return rc;
	tfk_tensor_init_view(&x, TFK_DT_FLOAT, 2, s, buf, 80, TFK_OWN_BORROWED,
			     NULL);
	rc = tfk_exec_run(ex, &x, 0, &out, &err);
	if (!rc) {
		s[0] = 2;
		tfk_tensor_init_view(&x, TFK_DT_FLOAT, 2, s, buf, 32,
				     TFK_OWN_BORROWED, NULL);
		rc = tfk_exec_run(ex, &x, 1, &out, &err);
	}
	if (!rc && fabsf(((const float *)out->data)[0] +
			 ((const float *)out->data)[1] +
			 ((const float *)out->data)[2] - 1) > 1e-5f)
		rc = -100;
	tfk_exec_free(ex);
	return rc;
}

static void alloc_failures(void)
{
	struct tfk_graph *g = mlp();
	int rc = -1, bad = 0;
	long k;

	for (k = 0; k < 200; k++) {
		tfk_alloc_fail_after(k);
		rc = exec_all(g);
		tfk_alloc_fail_after(-1);
		if (!rc)
			break;
		if (rc != TFK_ENOMEM)
			bad++;
	}
	ok(!rc && k > 5, "exec new + runs succeed after %ld failing points",
	   k);
	is_int(bad, 0, "each failure is TFK_ENOMEM");
	tfk_graph_free(g);
}

/*
 * Shape-valued inputs folded while planning: Reshape(y, Shape(x)) where
 * the batch of x is unknown until the run. The plan must give the
 * reshape its run-time shape, for several batch sizes in turn.
 */
static void folded_shapes(void)
{
	struct tfk_graph *g;
	struct tfk_err err = { 0, "" };
	int64_t xs[2] = { -1, 6 }, ys[3] = { -1, 2, 3 };
	struct tfk_port x, y, shp, none = { -1, 0 }, r;
	const char *feeds[] = { "x", "y" }, *fetch[] = { "r" };
	const struct tfk_tensor *out;
	struct tfk_tensor in[2];
	struct tfk_exec *ex;
	int b, i, good;

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 2, xs, &x, &err);
	tfk_graph_placeholder(g, "y", TFK_DT_FLOAT, 3, ys, &y, &err);
	shp = add(g, "Shape", "shape", x, none, 1, NULL, 0);
	r = add(g, "Reshape", "r", y, shp, 2, NULL, 0);
	ok(r.node >= 0, "Reshape(y, Shape(x)) builds with an unknown batch");
	is_int(tfk_graph_desc(g, r)->rank, 2, "rank known while building");
	ok(!tfk_exec_new(&ex, g, feeds, 2, fetch, 1, NULL, &err), "exec: %s",
	   err.msg);
	for (b = 1; b <= 3; b += 2) {
		xs[0] = b;
		ys[0] = b;
		tfk_tensor_init(&in[0], TFK_DT_FLOAT, 2, xs, &err);
		tfk_tensor_init(&in[1], TFK_DT_FLOAT, 3, ys, &err);
		for (i = 0; i < b * 6; i++)
			((float *)in[1].data)[i] = (float)i;
		ok(!tfk_exec_run(ex, in, 0, &out, &err), "batch %d: %s", b,
		   err.msg);
		good = out->rank == 2 && out->shape[0] == b &&
		       out->shape[1] == 6;
		for (i = 0; good && i < b * 6; i++)
			good = ((float *)out->data)[i] == (float)i;
		ok(good, "batch %d: output [%d, 6] with y's values", b, b);
		tfk_tensor_release(&in[0]);
		tfk_tensor_release(&in[1]);
	}
	tfk_exec_free(ex);
	tfk_graph_free(g);
}

int main(void)
{
	forward();
	plan_and_prune();
	folded_shapes();
	gradients_mlp();
	gradients_matmul();
	alloc_failures();
	return tap_done();
}
