/*
 * t-reduce.c - reductions (Sum, Mean, Max, Min, Prod, ArgMax, ArgMin):
 * the fast path against the _ref on every axis subset of 4-D shapes,
 * both against numpy (float64 oracle, values written by numpy's own
 * reductions), hand cases (NaN, empty, integers), shape inference with
 * unknown axes and dims, and gradients by finite differences.
 *
 * Bounds: fast vs _ref: Max/Min exact; Sum/Mean in float accumulate
 * in float where the _ref uses double: |fast - ref| <= 1e-6 * sum|x|,
 * Prod relative 1e-5 (measured max 8.4e-7, Prod of 120 values). numpy
 * vs ours on the same float32-representable inputs: |d| / max(|numpy|,
 * 1) <= 2e-6 in float32, 1e-12 in float64 (gradcheck.h; each line
 * prints its max), ArgMax/ArgMin exact. Gradients: |analytic -
 * numeric| / (1 + |numeric|) <= 1e-6 (measured max printed by each
 * line, ~1e-10).
 */
#include "kernels/cpu.h"
#include "graph/exec.h"
#include "tap.h"
#include "gradcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fill_rand(struct tfk_tensor *t)
{
	int64_t i, n = tfk_tensor_numel(t);

	for (i = 0; i < n; i++) {
		double v = gc_urand() * 8 - 4;

		if (t->dtype == TFK_DT_FLOAT)
			((float *)t->data)[i] = (float)v;
		else if (t->dtype == TFK_DT_DOUBLE)
			((double *)t->data)[i] = v;
		else if (t->dtype == TFK_DT_INT32)
			((int32_t *)t->data)[i] = (int32_t)(v * 1000);
		else
			((int64_t *)t->data)[i] = (int64_t)(v * 1e6);
	}
}

static double getv(const struct tfk_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case TFK_DT_FLOAT: return ((const float *)t->data)[i];
	case TFK_DT_DOUBLE: return ((const double *)t->data)[i];
	case TFK_DT_INT32: return ((const int32_t *)t->data)[i];
	default: return (double)((const int64_t *)t->data)[i];
	}
}

/* values near 1, so that products of 100 stay in range */
static void prod_range(struct tfk_tensor *x)
{
	int64_t j, n = tfk_tensor_numel(x);

	for (j = 0; j < n; j++) {
		if (x->dtype == TFK_DT_FLOAT)
			((float *)x->data)[j] = 1 + ((float *)x->data)[j] / 40;
		else
			((double *)x->data)[j] = 1 +
				((double *)x->data)[j] / 40;
	}
}

/* every mask over [3, 1, 4, 5] and [2, 3, 4, 5], every op and dtype */
static void fast_vs_ref(void)
{
	static const int64_t shapes[][4] = { { 3, 1, 4, 5 }, { 2, 3, 4, 5 },
					     { 7, 2, 1, 33 } };
	static const enum tfk_dtype dts[] = { TFK_DT_FLOAT, TFK_DT_DOUBLE,
					      TFK_DT_INT32, TFK_DT_INT64 };
	struct tfk_err err = { 0, "" };
	double worst = 0;
	int bad = 0, cnt = 0;
	size_t s, d;
	unsigned mask;
	int op, i;

	for (s = 0; s < 3; s++)
		for (d = 0; d < 4; d++)
			for (mask = 0; mask < 16; mask++)
				for (op = TFK_RED_SUM; op <= TFK_RED_PROD; op++) {
					struct tfk_tensor x, o1, o2;
					int64_t os[4], j, n;
					double sabs = 0;

					for (i = 0; i < 4; i++)
						os[i] = (mask >> i) & 1 ? 1 :
							shapes[s][i];
					tfk_tensor_init(&x, dts[d], 4, shapes[s],
							NULL);
					fill_rand(&x);
					if (op == TFK_RED_PROD && d < 2)
						prod_range(&x);
					tfk_tensor_init(&o1, dts[d], 4, os, NULL);
					tfk_tensor_init(&o2, dts[d], 4, os, NULL);
					if (tfk_cpu_reduce_ref(op, &x, mask, &o1,
							       &err) ||
					    tfk_cpu_reduce(op, &x, mask, &o2,
							   &err)) {
						bad++;
						tap_diag("%s", err.msg);
					}
					n = tfk_tensor_numel(&x);
					for (j = 0; j < n; j++)
						sabs += fabs(getv(&x, j));
					n = tfk_tensor_numel(&o1);
					for (j = 0; j < n; j++) {
						double e = fabs(getv(&o1, j) -
								getv(&o2, j));

						if (op == TFK_RED_PROD)
							e /= fabs(getv(&o1, j)) + 1e-30;
						else
							e /= sabs;
						if (e > worst)
							worst = e;
						if (op >= TFK_RED_MAX &&
						    op != TFK_RED_PROD)
							e = e ? 1 : 0;
						if (e > (op == TFK_RED_PROD ? 1e-5 : 1e-6) ||
						    (d >= 2 && e)) {
							if (bad++ < 5)
								tap_diag("shape %zu dt %d mask %u op %d: %g vs %g", s, (int)dts[d], mask, op, getv(&o1, j), getv(&o2, j));
						}
					}
					cnt++;
					tfk_tensor_release(&x);
					tfk_tensor_release(&o1);
					tfk_tensor_release(&o2);
				}
	is_int(bad, 0, "fast reduce == _ref in %d cases (max rel %.2g)", cnt,
	       worst);
}

static void grad_reduce(const char *op, int keep, int n_axes,
			int32_t a0, int32_t a1)
{
	struct gc_input in[1] = { { 4, { -1, 3, -1, 4 }, { 2, 3, 2, 4 },
				    0, 0, 0 } };
	struct gc_op o = { .op = op, .n_x = 1, .n_consts = 1,
			   .const_len = { n_axes }, .consts = { { a0, a1 } },
			   .n_attrs = 1,
			   .attrs = { TFK_A_BOOL("keep_dims", keep) } };
	char name[96];

	snprintf(name, sizeof(name), "%s axes (%d%s%d) keep_dims %d", op, a0,
		 n_axes > 1 ? ", " : "", n_axes > 1 ? a1 : 0, keep);
	gradcheck(name, in, 1, gc_build_op, &o);
}

static void gradients(void)
{
	static const char *const ops[] = { "Sum", "Mean", "Max", "Min" };
	int i, keep;

	for (i = 0; i < 4; i++)
		for (keep = 0; keep < 2; keep++) {
			grad_reduce(ops[i], keep, 1, 0, 0);	/* batch */
			grad_reduce(ops[i], keep, 1, -1, 0);	/* last */
			grad_reduce(ops[i], keep, 2, 1, 2);	/* spatial */
			grad_reduce(ops[i], keep, 2, 0, 2);	/* unknowns */
		}
	{
		/* mean of a [?] vector: the loss form, count at run time */
		struct gc_input in[1] = { { 1, { -1 }, { 7 }, 0, 0, 0 } };
		struct gc_op o = { .op = "Mean", .n_x = 1, .n_consts = 1,
				   .const_len = { 1 }, .consts = { { 0 } } };

		gradcheck("Mean of [?] over axis 0", in, 1, gc_build_op, &o);
	}
}

#define NP_RED(nm, ex, n, a0, a1, keep) { .name = nm "_" #a0 #a1 #keep, \
	.op = nm, .expr = ex, .rx = 3, .sx = { 3, 4, 5 }, .ry = -1, \
	.n_consts = 1, .clen = n, .c = { a0, a1 }, .n_attrs = 1, \
	.attrs = { TFK_A_BOOL("keep_dims", keep) }, .lo = -2, .hi = 2 }

static const struct np_case np_cases[] = {
	NP_RED("Sum", "X.sum((0,))", 1, 0, 0, 0),
	NP_RED("Sum", "X.sum((1, 2), keepdims=True)", 2, 1, 2, 1),
	NP_RED("Mean", "X.mean((0,))", 1, 0, 0, 0),
	NP_RED("Mean", "X.mean((2,), keepdims=True)", 1, -1, 0, 1),
	NP_RED("Mean", "X.mean((0, 2))", 2, 0, 2, 0),
	NP_RED("Max", "X.max((1,))", 1, 1, 0, 0),
	NP_RED("Max", "X.max((0, 1), keepdims=True)", 2, 0, 1, 1),
	NP_RED("Min", "X.min((2,))", 1, 2, 0, 0),
	NP_RED("Min", "X.min((0, 2))", 2, 0, -1, 0),
	NP_RED("Prod", "X.prod((1,))", 1, 1, 0, 0),
	{ .name = "Sum_all_scalar_axis", .op = "Sum", .expr = "X.sum(1)",
	  .rx = 3, .sx = { 3, 4, 5 }, .ry = -1, .n_consts = 1, .clen = 0,
	  .c = { 1 }, .lo = -2, .hi = 2 },
	{ .name = "ArgMax_1", .op = "ArgMax", .expr = "X.argmax(1)",
	  .rx = 3, .sx = { 3, 4, 5 }, .ry = -1, .n_consts = 1, .clen = 0,
	  .c = { 1 }, .lo = -2, .hi = 2 },
	{ .name = "ArgMax_last_i32", .op = "ArgMax", .expr = "X.argmax(2)",
	  .rx = 3, .sx = { 3, 4, 5 }, .ry = -1, .n_consts = 1, .clen = 0,
	  .c = { -1 }, .n_attrs = 1,
	  .attrs = { TFK_A_TYPE("output_type", TFK_DT_INT32) }, .lo = -2,
	  .hi = 2 },
	{ .name = "ArgMin_0", .op = "ArgMin", .expr = "X.argmin(0)",
	  .rx = 3, .sx = { 3, 4, 5 }, .ry = -1, .n_consts = 1, .clen = 0,
	  .c = { 0 }, .lo = -2, .hi = 2 },
};

static void hand_cases(void)
{
	struct tfk_err err = { 0, "" };
	int64_t s4[1] = { 4 }, s1[1] = { 1 }, s0[1] = { 0 };
	float x[4] = { 1, NAN, 3, 3 }, o;
	int32_t ix[4] = { 7, -9, 5, 5 }, io;
	struct tfk_tensor tx, to, tix, tio;

	tfk_tensor_init_view(&tx, TFK_DT_FLOAT, 1, s4, x, 16,
			     TFK_OWN_BORROWED, NULL);
	tfk_tensor_init_view(&to, TFK_DT_FLOAT, 1, s1, &o, 4,
			     TFK_OWN_BORROWED, NULL);
	tfk_cpu_reduce(TFK_RED_MAX, &tx, 1, &to, &err);
	ok(isnan(o), "Max propagates NaN (fast)");
	tfk_cpu_reduce_ref(TFK_RED_MIN, &tx, 1, &to, &err);
	ok(isnan(o), "Min propagates NaN (_ref)");
	tfk_tensor_init_view(&tix, TFK_DT_INT32, 1, s4, ix, 16,
			     TFK_OWN_BORROWED, NULL);
	tfk_tensor_init_view(&tio, TFK_DT_INT32, 1, s1, &io, 4,
			     TFK_OWN_BORROWED, NULL);
	tfk_cpu_reduce(TFK_RED_MEAN, &tix, 1, &tio, &err);
	is_int(io, 2, "int32 Mean truncates (8 / 4 = 2)");
	tfk_cpu_reduce(TFK_RED_MIN, &tix, 1, &tio, &err);
	is_int(io, -9, "int32 Min");
	{
		int64_t am;
		struct tfk_tensor ta;

		tfk_tensor_init_view(&ta, TFK_DT_INT64, 0, NULL, &am, 8,
				     TFK_OWN_BORROWED, NULL);
		tfk_cpu_argmax_ref(&tix, 0, 0, &ta, &err);
		is_int(am, 0, "ArgMax of int32 [7, -9, 5, 5] is 0");
		x[1] = 0;
		tfk_cpu_argmax_ref(&tx, 0, 0, &ta, &err);
		is_int(am, 2, "ArgMax ties go to the first (2 of [1,0,3,3])");
	}
	/* empty: Sum 0, Max -inf, Mean NaN */
	tfk_tensor_init_view(&tx, TFK_DT_FLOAT, 1, s0, x, 0,
			     TFK_OWN_BORROWED, NULL);
	tfk_cpu_reduce(TFK_RED_SUM, &tx, 1, &to, &err);
	ok(o == 0, "Sum of nothing is 0");
	tfk_cpu_reduce(TFK_RED_MAX, &tx, 1, &to, &err);
	ok(isinf(o) && o < 0, "Max of nothing is -inf");
	tfk_cpu_reduce(TFK_RED_MEAN, &tx, 1, &to, &err);
	ok(isnan(o), "Mean of nothing is NaN");
}

static void graph_cases(void)
{
	struct tfk_graph *g;
	struct tfk_err err = { 0, "" };
	int64_t xs[3] = { -1, 3, 4 };
	int32_t ax[2] = { 1, 5 };
	struct tfk_port x, in[2], y, s;
	const struct tfk_tdesc *d;

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 3, xs, &x, &err);
	in[0] = x;
	tfk_graph_const_i32v(g, NULL, ax, 2, &in[1], &err);
	is_int(tfk_graph_add_node(g, "Mean", "m", in, 2, NULL, 0, &y, &err),
	       TFK_EINVAL, "axis 5 of rank 3 refused");
	is_str(err.msg, "node m: input 1: axis 5 out of range for rank 3",
	       "message");
	/* axes known only at run time: rank from their length */
	tfk_graph_add_node(g, "Shape", NULL, &x, 1, NULL, 0, &s, &err);
	in[1] = s;
	ok(!tfk_graph_add_node(g, "Max", "mx", in, 2, NULL, 0, &y, &err),
	   "axes from a node builds: %s", err.msg);
	d = tfk_graph_desc(g, y);
	ok(d->rank == 0, "3 axes of rank 3: a scalar");
	tfk_graph_free(g);
}

int main(void)
{
	fast_vs_ref();
	gradients();
	np_check(np_cases, (int)(sizeof(np_cases) / sizeof(np_cases[0])));
	hand_cases();
	graph_cases();
	return tap_done();
}
