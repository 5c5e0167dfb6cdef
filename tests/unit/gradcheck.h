/*
 * gradcheck.h - finite-difference gradient checks through the graph
 * (tfk_graph_gradients + tfk_exec), shared by t-kernels, t-reduce,
 * t-shapeops and t-pool2d (and gc_check_fd by t-conv and t-exec). Header-only (static functions): each test
 * program includes it once.
 *
 * A case gives float64 inputs (a build-time shape, where -1 makes the
 * dim unknown while building as a batch dim is, and the run shape) and
 * a builder making y from the input placeholders. The check feeds
 * random inputs, makes loss = Sum(y * r) with a random r of y's run
 * shape (so every output element has its own weight), asks
 * tfk_graph_gradients for d loss / d x_k and compares each element with
 * the central difference (loss(x + h) - loss(x - h)) / 2h, h = 1e-6:
 * |analytic - numeric| / (1 + |numeric|) <= 1e-6 (the truncation error
 * is O(h^2 * f''') and the rounding error O(eps / h) ~ 1e-10).
 */
#ifndef TFK_TESTS_GRADCHECK_H
#define TFK_TESTS_GRADCHECK_H

#include "graph/exec.h"
#include "graph/graph.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GC_MAX_IN 4
#define GC_MAX_FETCH 8	/* what gc_loss's exec may fetch: the loss first */

struct gc_input {
	int rank;
	int64_t build[TFK_MAX_RANK];	/* -1: unknown while building */
	int64_t run[TFK_MAX_RANK];
	double lo, hi;			/* value range (0, 0: [-2, 2]) */
	int no_grad;			/* not differentiated */
};

typedef int (*gc_build_fn)(struct tfk_graph *g, const struct tfk_port *x,
			   struct tfk_port *y, struct tfk_err *err,
			   void *ctx);

static uint64_t gc_rng = 0x9e3779b97f4a7c15ull;

static double gc_urand(void)	/* xorshift64 (Marsaglia 2003) */
{
	gc_rng ^= gc_rng << 13;
	gc_rng ^= gc_rng >> 7;
	gc_rng ^= gc_rng << 17;
	return (gc_rng >> 11) * (1.0 / 9007199254740992.0);
}

static double gc_loss(struct tfk_exec *ex, const struct tfk_tensor *feeds)
{
	const struct tfk_tensor *out[GC_MAX_FETCH];
	struct tfk_err err = { 0, "" };

	if (tfk_exec_run(ex, feeds, 0, out, &err)) {
		tap_diag("run: %s", err.msg);
		return NAN;
	}
	return *(const double *)out[0]->data;
}

/*
 * The same comparison over a caller's own graph: ex fetches the float64
 * scalar loss first (at most GC_MAX_FETCH outputs) and is run with
 * feeds; p[0..n) is a feed's or a variable's data that the run reads,
 * g the analytic gradient of the loss there. Raises *worst to the worst
 * relative error seen; returns the number of elements over 1e-6.
 */
__attribute__((unused))
static int gc_check_fd(struct tfk_exec *ex, const struct tfk_tensor *feeds,
		       double *p, const double *g, int64_t n, double *worst)
{
	const double h = 1e-6;
	int64_t i;
	int bad = 0;

	for (i = 0; i < n; i++) {
		double keep = p[i], up, down, num, e;

		p[i] = keep + h;
		up = gc_loss(ex, feeds);
		p[i] = keep - h;
		down = gc_loss(ex, feeds);
		p[i] = keep;
		num = (up - down) / (2 * h);
		e = fabs(g[i] - num) / (1 + fabs(num));
		if (e > *worst)
			*worst = e;
		if (!(e <= 1e-6))
			bad++;
	}
	return bad;
}

/*
 * Check the gradients of the graph build() makes w.r.t. each input.
 * Prints one TAP line named name; returns the worst relative error
 * (or 1 on failure to build or run).
 */
__attribute__((unused))
static double gradcheck(const char *name, const struct gc_input *in, int n_in,
			gc_build_fn build, void *ctx)
{
	struct tfk_graph *g = NULL;
	struct tfk_err err = { 0, "" };
	struct tfk_port x[GC_MAX_IN], y, r, loss, seed, dx[GC_MAX_IN], p;
	struct tfk_tensor feeds[GC_MAX_IN + 1], t;
	const struct tfk_tensor *out[GC_MAX_IN + 1];
	const char *fnames[GC_MAX_IN + 1], *fetch[GC_MAX_IN + 1];
	char nm[GC_MAX_IN + 1][16], yname[256];
	struct tfk_exec *ex = NULL;
	double worst = 0, one = 1, *ana[GC_MAX_IN] = { 0 };
	int32_t axes[TFK_MAX_RANK];
	int i, k, bad = 0, nx = 0, ok_ = 0;
	int64_t j, n;

	memset(feeds, 0, sizeof(feeds));
	tfk_graph_new(&g, &err);
	for (k = 0; k < n_in; k++) {
		snprintf(nm[k], sizeof(nm[k]), "x%d", k);
		fnames[k] = nm[k];
		if (tfk_graph_placeholder(g, nm[k], TFK_DT_DOUBLE, in[k].rank,
					  in[k].build, &x[k], &err))
			goto fail;
		tfk_tensor_init(&feeds[k], TFK_DT_DOUBLE, in[k].rank,
				in[k].run, NULL);
		n = tfk_tensor_numel(&feeds[k]);
		for (j = 0; j < n; j++) {
			double lo = in[k].lo, hi = in[k].hi;

			if (lo == 0 && hi == 0)
				lo = -2, hi = 2;
			((double *)feeds[k].data)[j] = lo + (hi - lo) *
				gc_urand();
		}
	}
	if (build(g, x, &y, &err, ctx))
		goto fail;
	/* y's run shape, from one run */
	fetch[0] = tfk_graph_node(g, y.node)->name;
	snprintf(yname, sizeof(yname), "%s:%d", fetch[0], y.index);
	fetch[0] = yname;
	if (tfk_exec_new(&ex, g, fnames, n_in, fetch, 1, NULL, &err) ||
	    tfk_exec_run(ex, feeds, 0, out, &err))
		goto fail;
	tfk_tensor_init(&feeds[n_in], TFK_DT_DOUBLE, out[0]->rank,
			out[0]->shape, NULL);
	tfk_exec_free(ex);
	ex = NULL;
	n = tfk_tensor_numel(&feeds[n_in]);
	for (j = 0; j < n; j++)
		((double *)feeds[n_in].data)[j] = gc_urand() * 2 - 1;
	{
		int64_t rs[TFK_MAX_RANK];

		for (i = 0; i < feeds[n_in].rank; i++)
			rs[i] = -1;
		if (tfk_graph_placeholder(g, "r", TFK_DT_DOUBLE,
					  feeds[n_in].rank, rs, &r, &err))
			goto fail;
	}
	fnames[n_in] = "r";
	{
		struct tfk_port in2[2] = { y, r };

		if (tfk_graph_add_node(g, "Mul", NULL, in2, 2, NULL, 0, &p,
				       &err))
			goto fail;
		for (i = 0; i < feeds[n_in].rank; i++)
			axes[i] = i;
		in2[0] = p;
		if (tfk_graph_const_i32v(g, NULL, axes, feeds[n_in].rank,
					 &in2[1], &err) ||
		    tfk_graph_add_node(g, "Sum", "loss", in2, 2, NULL, 0,
				       &loss, &err))
			goto fail;
	}
	tfk_tensor_init_view(&t, TFK_DT_DOUBLE, 0, NULL, &one, 8,
			     TFK_OWN_BORROWED, NULL);
	if (tfk_graph_const(g, "seed", &t, &seed, &err) ||
	    tfk_graph_gradients(g, &loss, &seed, 1, x, n_in, dx, &err))
		goto fail;
	fetch[0] = "loss";
	for (k = 0; k < n_in; k++) {
		if (in[k].no_grad)
			continue;
		if (dx[k].node < 0) {
			snprintf(err.msg, sizeof(err.msg), "no gradient for "
				 "x%d", k);
			goto fail;
		}
		snprintf(nm[k], sizeof(nm[k]), "d%d", k);
		if (tfk_graph_set_output(g, nm[k], dx[k], &err))
			goto fail;
		fetch[++nx] = nm[k];
	}
	for (k = 0; k < n_in; k++) {
		snprintf(nm[k], sizeof(nm[k]), "x%d", k);
		fnames[k] = nm[k];
	}
	/* fetch names point into nm: rebuild them after the renaming */
	for (k = 0, i = 1; k < n_in; k++)
		if (!in[k].no_grad)
			fetch[i++] = k == 0 ? "d0" : k == 1 ? "d1" :
				k == 2 ? "d2" : "d3";
	if (tfk_exec_new(&ex, g, fnames, n_in + 1, fetch, nx + 1, NULL, &err)
	    || tfk_exec_run(ex, feeds, 0, out, &err))
		goto fail;
	for (k = 0, i = 1; k < n_in; k++) {
		if (in[k].no_grad)
			continue;
		if (!tfk_shape_equal(out[i]->rank, out[i]->shape,
				     feeds[k].rank, feeds[k].shape)) {
			snprintf(err.msg, sizeof(err.msg), "d x%d has the "
				 "wrong shape", k);
			goto fail;
		}
		ana[k] = malloc(out[i]->nbytes + 8);
		memcpy(ana[k], out[i]->data, out[i]->nbytes);
		i++;
	}
	for (k = 0; k < n_in; k++) {
		double *pv = feeds[k].data;

		if (in[k].no_grad)
			continue;
		n = tfk_tensor_numel(&feeds[k]);
		for (j = 0; j < n; j++) {
			const double h = 1e-6;
			double keep = pv[j], up, down, num, e;

			pv[j] = keep + h;
			up = gc_loss(ex, feeds);
			pv[j] = keep - h;
			down = gc_loss(ex, feeds);
			pv[j] = keep;
			num = (up - down) / (2 * h);
			e = fabs(ana[k][j] - num) / (1 + fabs(num));
			if (!(e <= worst))
				worst = e;
			if (!(e <= 1e-6) && bad++ < 3)
				tap_diag("%s: d x%d[%lld]: analytic %.9g, "
					 "numeric %.9g", name, k,
					 (long long)j, ana[k][j], num);
		}
	}
	ok_ = 1;
fail:
	if (!ok_) {
		tap_diag("%s: %s", name, err.msg);
		bad++;
		worst = 1;
	}
	ok(!bad, "%s: gradient == finite differences (max rel err %.2g)",
	   name, worst);
	for (k = 0; k < n_in; k++)
		free(ana[k]);
	for (k = 0; k <= n_in; k++)
		tfk_tensor_release(&feeds[k]);
	tfk_exec_free(ex);
	tfk_graph_free(g);
	return worst;
}

/* Builders for the common forms: one op over the inputs, with attrs and
 * trailing Const int32 vector inputs. */
struct gc_op {
	const char *op;
	int n_attrs;
	struct tfk_attr attrs[4];
	int n_consts;			/* int32 vectors after the inputs */
	int const_len[3];
	int32_t consts[3][8];
	int n_x;			/* inputs taken from x */
	int out_index;
};

__attribute__((unused))
static int gc_build_op(struct tfk_graph *g, const struct tfk_port *x,
		       struct tfk_port *y, struct tfk_err *err, void *ctx)
{
	const struct gc_op *o = ctx;
	struct tfk_port in[GC_MAX_IN + 3];
	int k, n = o->n_x;

	for (k = 0; k < n; k++)
		in[k] = x[k];
	for (k = 0; k < o->n_consts; k++)
		if (tfk_graph_const_i32v(g, NULL, o->consts[k],
					 o->const_len[k], &in[n + k], err))
			return -1;
	if (tfk_graph_add_node(g, o->op, NULL, in, n + o->n_consts, o->attrs,
			       o->n_attrs, y, err))
		return -1;
	y->index = o->out_index;
	return 0;
}

/*
 * numpy oracle for single ops (tests/py/np_ref.py): each case builds
 * op(x [, y] [, int32 Const]) on Const inputs of random values in
 * [lo, hi), runs it in float32 and in float64, and compares with numpy's
 * float64 result of expr: |ours - numpy| / max(|numpy|, 1) <= 2e-6 in
 * float32 (one rounding of inputs and of the result, plus libm's ulp),
 * 1e-12 in float64. Bool and integer outputs must be equal. One TAP
 * line per case with the worst error of the two dtypes.
 */
struct np_case {
	const char *name, *op, *expr;
	int rx;
	int64_t sx[4];
	int ry;				/* -1: no y */
	int64_t sy[4];
	int n_consts;			/* 0 or 1: an int32 vector/scalar */
	int clen;			/* 0: scalar */
	int32_t c[8];
	int n_attrs;
	struct tfk_attr attrs[2];
	double lo, hi;
	int out_index;
};

static void gc_shape_str(int r, const int64_t *s, char *buf, size_t n)
{
	size_t o = 0;
	int i;

	if (!r) {
		snprintf(buf, n, "-");
		return;
	}
	for (i = 0; i < r; i++)
		o += snprintf(buf + o, n - o, "%s%lld", i ? "x" : "",
			      (long long)s[i]);
}

static double gc_get(const struct tfk_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case TFK_DT_FLOAT: return ((const float *)t->data)[i];
	case TFK_DT_DOUBLE: return ((const double *)t->data)[i];
	case TFK_DT_INT32: return ((const int32_t *)t->data)[i];
	case TFK_DT_INT64: return (double)((const int64_t *)t->data)[i];
	default: return ((const uint8_t *)t->data)[i];
	}
}

static double *gc_values(int r, const int64_t *s, double lo, double hi,
			 int64_t *n)
{
	double *v;
	int64_t i;

	*n = 1;
	for (i = 0; i < r; i++)
		*n *= s[i];
	v = malloc(*n * sizeof(double) + 8);
	for (i = 0; i < *n; i++)	/* float32-representable values */
		v[i] = (float)(lo + (hi - lo) * gc_urand());
	return v;
}

static struct tfk_port gc_const_of(struct tfk_graph *g, enum tfk_dtype dt,
				   int r, const int64_t *s, const double *v,
				   int64_t n)
{
	struct tfk_tensor t;
	struct tfk_port p = { -1, 0 };
	int64_t i;

	tfk_tensor_init(&t, dt, r, s, NULL);
	for (i = 0; i < n; i++) {
		if (dt == TFK_DT_FLOAT)
			((float *)t.data)[i] = (float)v[i];
		else
			((double *)t.data)[i] = v[i];
	}
	tfk_graph_const(g, NULL, &t, &p, NULL);
	tfk_tensor_release(&t);
	return p;
}

__attribute__((unused))
static void np_check(const struct np_case *cs, int n_cases)
{
	const char *dir = tap_tmpdir();
	char path[512], cmd[1024], sx[64], sy[64], *man = NULL;
	size_t mlen = 0;
	double **xv = calloc(n_cases, sizeof(*xv));
	double **yv = calloc(n_cases, sizeof(*yv));
	int64_t *nx = calloc(n_cases, sizeof(*nx));
	int64_t *ny = calloc(n_cases, sizeof(*ny));
	int i, d, rc;

	for (i = 0; i < n_cases; i++) {
		const struct np_case *c = &cs[i];
		char line[512];
		int len;

		xv[i] = gc_values(c->rx, c->sx, c->lo, c->hi, &nx[i]);
		snprintf(path, sizeof(path), "%s/%s.x", dir, c->name);
		tap_write_file(path, xv[i], nx[i] * 8);
		gc_shape_str(c->rx, c->sx, sx, sizeof(sx));
		sy[0] = 0;
		if (c->ry >= 0) {
			yv[i] = gc_values(c->ry, c->sy, c->lo, c->hi, &ny[i]);
			snprintf(path, sizeof(path), "%s/%s.y", dir, c->name);
			tap_write_file(path, yv[i], ny[i] * 8);
			sy[0] = ',';
			gc_shape_str(c->ry, c->sy, sy + 1, sizeof(sy) - 1);
		}
		len = snprintf(line, sizeof(line), "%s %s%s %s\n", c->name, sx,
			       sy, c->expr);
		man = realloc(man, mlen + len + 1);
		memcpy(man + mlen, line, len + 1);
		mlen += len;
	}
	snprintf(path, sizeof(path), "%s/manifest", dir);
	tap_write_file(path, man, mlen);
	free(man);
	snprintf(cmd, sizeof(cmd), "%s %s %s",
		 getenv("PYTHON") && *getenv("PYTHON") ? getenv("PYTHON") :
		 "/usr/bin/python3", tap_source("tests/py/np_ref.py"), dir);
	rc = system(cmd);
	ok(rc == 0, "numpy oracle ran (%d cases)", n_cases);
	for (i = 0; rc == 0 && i < n_cases; i++) {
		const struct np_case *c = &cs[i];
		double worst = 0, *want;
		size_t nw;
		int bad = 0;

		snprintf(path, sizeof(path), "%s/%s.want", dir, c->name);
		want = tap_read_file(path, &nw);
		for (d = 0; d < 2; d++) {
			enum tfk_dtype dt = d ? TFK_DT_DOUBLE : TFK_DT_FLOAT;
			struct tfk_graph *g;
			struct tfk_err err = { 0, "" };
			struct tfk_port in[3], y;
			const struct tfk_tensor *out[1];
			const char *fetch[1] = { "y" };
			struct tfk_exec *ex = NULL;
			char yn[32];
			int k = 0;
			int64_t j;

			tfk_graph_new(&g, &err);
			in[k++] = gc_const_of(g, dt, c->rx, c->sx, xv[i],
					      nx[i]);
			if (c->ry >= 0)
				in[k++] = gc_const_of(g, dt, c->ry, c->sy,
						      yv[i], ny[i]);
			if (c->n_consts) {
				struct tfk_tensor t;
				int64_t cl = c->clen;

				tfk_tensor_init_view(&t, TFK_DT_INT32,
						     c->clen ? 1 : 0, &cl,
						     (void *)c->c, (c->clen ?
						     c->clen : 1) * 4,
						     TFK_OWN_BORROWED, NULL);
				tfk_graph_const(g, NULL, &t, &in[k++], &err);
			}
			snprintf(yn, sizeof(yn), "y:%d", c->out_index);
			fetch[0] = yn;
			if (tfk_graph_add_node(g, c->op, "y", in, k, c->attrs,
					       c->n_attrs, &y, &err) ||
			    tfk_exec_new(&ex, g, NULL, 0, fetch, 1, NULL,
					 &err) ||
			    tfk_exec_run(ex, NULL, 0, out, &err)) {
				tap_diag("%s: %s", c->name, err.msg);
				bad++;
			} else if (!want || (size_t)tfk_tensor_numel(out[0]) *
				   8 != nw) {
				tap_diag("%s: %lld values, numpy %zu",
					 c->name,
					 (long long)tfk_tensor_numel(out[0]),
					 nw / 8);
				bad++;
			} else {
				int exact = out[0]->dtype != TFK_DT_FLOAT &&
					out[0]->dtype != TFK_DT_DOUBLE;
				double tol = d ? 1e-12 : 2e-6;

				for (j = 0; j < tfk_tensor_numel(out[0]); j++) {
					double a = gc_get(out[0], j), b = want[j];
					double e = a == b || (a != a && b != b) ?
						0 : fabs(a - b) /
						(fabs(b) > 1 ? fabs(b) : 1);

					if (!(e <= worst))
						worst = e;
					if (!(e <= (exact ? 0 : tol)) &&
					    bad++ < 2)
						tap_diag("%s %s [%lld]: %.9g, "
							 "numpy %.9g", c->name,
							 d ? "float64" :
							 "float32",
							 (long long)j, a, b);
				}
			}
			tfk_exec_free(ex);
			tfk_graph_free(g);
		}
		ok(!bad, "%s == numpy %s (max err %.2g)", c->name, c->expr,
		   worst);
		free(want);
	}
	for (i = 0; i < n_cases; i++) {
		free(xv[i]);
		free(yv[i]);
	}
	free(xv);
	free(yv);
	free(nx);
	free(ny);
}

#endif
