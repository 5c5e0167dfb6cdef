/*
 * t-shapeops.c - shape functions and data movement ops: Shape, Size,
 * Rank, ExpandDims, Squeeze (values, shape inference with unknown dims
 * and data-less planning, errors); Transpose, ConcatV2, Pack, Tile,
 * Pad, Slice, StridedSlice (begin/end/ellipsis/new-axis/shrink masks,
 * negative strides, clamping), BroadcastTo against numpy
 * (tests/py/np_ref.py, the expression being the op's Python-slicing or
 * numpy meaning); Fill and error cases by hand; gradients of all of
 * them, Unpack, SplitV (as ConcatV2's) and BroadcastGradientArgs
 * (inside AddV2's) by finite differences with an unknown batch dim.
 *
 * Data movement is exact: outputs compared bit for bit with numpy's.
 * Finite differences: <= 1e-6 (gradcheck.h).
 */
#include "kernels/cpu.h"
#include "graph/exec.h"
#include "tap.h"
#include "gradcheck.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *shape_of(struct tfk_graph *g, struct tfk_port p)
{
	static char buf[128];
	const struct tfk_tdesc *d = tfk_graph_desc(g, p);

	return tfk_shape_str(d->rank, d->shape, buf, sizeof(buf));
}

/* Shape/Size/Rank run while planning; Reshape(x, Shape(y)) plans with
 * an unknown batch */
static void shape_fns(void)
{
	struct tfk_graph *g;
	struct tfk_err err = { 0, "" };
	int64_t xs[3] = { -1, 3, 4 }, run[3] = { 5, 3, 4 };
	struct tfk_port x, s, sz, rk, in[2], y;
	struct tfk_attr i64 = TFK_A_TYPE("out_type", TFK_DT_INT64);
	struct tfk_tensor xv;
	const struct tfk_tensor *out[4];
	const char *feeds[] = { "x" };
	const char *fetch[] = { "s", "sz", "rk", "y" };
	struct tfk_exec *ex;
	int32_t flat[2] = { -1, 12 };

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 3, xs, &x, &err);
	ok(!tfk_graph_add_node(g, "Shape", "s", &x, 1, &i64, 1, &s, &err),
	   "Shape out_type int64: %s", err.msg);
	is_str(shape_of(g, s), "[3]", "Shape of a rank-3 input is [3]");
	is_int(tfk_graph_desc(g, s)->dtype, TFK_DT_INT64, "int64");
	tfk_graph_add_node(g, "Size", "sz", &x, 1, NULL, 0, &sz, &err);
	is_str(shape_of(g, sz), "[]", "Size is a scalar");
	tfk_graph_add_node(g, "Rank", "rk", &x, 1, NULL, 0, &rk, &err);
	/* y = Reshape(Reshape(x, [-1, 12]), Shape(x)) */
	tfk_graph_const_i32v(g, NULL, flat, 2, &in[1], &err);
	in[0] = x;
	tfk_graph_add_node(g, "Reshape", NULL, in, 2, NULL, 0, &in[0], &err);
	in[1] = s;
	ok(!tfk_graph_add_node(g, "Reshape", "y", in, 2, NULL, 0, &y, &err),
	   "Reshape to Shape(x) builds: %s", err.msg);
	is_str(shape_of(g, y), "[?, ?, ?]", "rank known, dims at run time");
	ok(!tfk_exec_new(&ex, g, feeds, 1, fetch, 4, NULL, &err), "exec: %s",
	   err.msg);
	tfk_tensor_init(&xv, TFK_DT_FLOAT, 3, run, NULL);
	((float *)xv.data)[59] = 7;
	ok(!tfk_exec_run(ex, &xv, 0, out, &err), "run: %s", err.msg);
	ok(((int64_t *)out[0]->data)[0] == 5 &&
	   ((int64_t *)out[0]->data)[1] == 3 &&
	   ((int64_t *)out[0]->data)[2] == 4, "Shape value [5, 3, 4]");
	is_int(((int32_t *)out[1]->data)[0], 60, "Size value 60");
	is_int(((int32_t *)out[2]->data)[0], 3, "Rank value 3");
	ok(out[3]->rank == 3 && out[3]->shape[0] == 5 &&
	   ((float *)out[3]->data)[59] == 7, "Reshape to Shape(x) at run "
	   "time: [5, 3, 4]");
	tfk_tensor_release(&xv);
	tfk_exec_free(ex);
	tfk_graph_free(g);
}

static void expand_squeeze(void)
{
	struct tfk_graph *g;
	struct tfk_err err = { 0, "" };
	int64_t xs[3] = { -1, 1, 4 };
	struct tfk_port x, in[2], y;
	int32_t d;
	int64_t sq[1] = { 1 }, bad[1] = { 2 };
	struct tfk_attr a = { "squeeze_dims", { .kind = TFK_ATTR_LIST_INT,
						.list = { 1, sq } } };

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 3, xs, &x, &err);
	in[0] = x;
	d = -1;
	tfk_graph_const_i32v(g, NULL, &d, 1, &in[1], &err);
	tfk_graph_add_node(g, "ExpandDims", NULL, in, 2, NULL, 0, &y, &err);
	is_str(shape_of(g, y), "[?, 1, 4, 1]", "ExpandDims -1 appends");
	d = 0;
	tfk_graph_const_i32v(g, NULL, &d, 1, &in[1], &err);
	tfk_graph_add_node(g, "ExpandDims", NULL, in, 2, NULL, 0, &y, &err);
	is_str(shape_of(g, y), "[1, ?, 1, 4]", "ExpandDims 0 prepends");
	d = 5;
	tfk_graph_const_i32v(g, NULL, &d, 1, &in[1], &err);
	is_int(tfk_graph_add_node(g, "ExpandDims", "e5", in, 2, NULL, 0, &y,
				  &err), TFK_EINVAL, "ExpandDims 5 of rank 3");
	is_str(err.msg, "node e5: input 1: dim 5 out of range [-4, 3]",
	       "message");
	ok(!tfk_graph_add_node(g, "Squeeze", NULL, &x, 1, &a, 1, &y, &err),
	   "Squeeze [1]: %s", err.msg);
	is_str(shape_of(g, y), "[?, 4]", "Squeeze dims [1]");
	a.v.list.i = bad;
	is_int(tfk_graph_add_node(g, "Squeeze", "sq", &x, 1, &a, 1, &y, &err),
	       TFK_EINVAL, "Squeeze of a dim of 4");
	is_str(err.msg, "node sq: squeeze_dims: dim 2 has size 4, not 1",
	       "message");
	is_int(tfk_graph_add_node(g, "Squeeze", "sq", &x, 1, NULL, 0, &y,
				  &err), TFK_EINVAL,
	       "Squeeze all with an unknown dim");
	tfk_graph_free(g);
}

static void gradients(void)
{
	{
		struct gc_op o = { .op = "ExpandDims", .n_x = 1,
				   .n_consts = 1, .const_len = { 1 },
				   .consts = { { 1 } } };
		struct gc_input in[1] = { { 2, { -1, 4 }, { 3, 4 }, 0, 0, 0 } };

		gradcheck("ExpandDims", in, 1, gc_build_op, &o);
	}
	{
		static const int64_t sq[1] = { 1 };
		struct gc_op o = { .op = "Squeeze", .n_x = 1, .n_attrs = 1,
				   .attrs = { { "squeeze_dims",
						{ .kind = TFK_ATTR_LIST_INT,
						  .list = { 1, sq } } } } };
		struct gc_input in[1] = { { 3, { -1, 1, -1 }, { 3, 1, 2 }, 0, 0,
					    0 } };

		gradcheck("Squeeze (two unknown dims: Shape(x))", in, 1,
			  gc_build_op, &o);
	}
}

/* Data movement vs numpy ---------------------------------------------------- */

struct mv_case {
	const char *name, *op, *expr;
	int twice;			/* x given twice (ConcatV2, Pack) */
	int n_consts;
	int clen[3];
	int32_t c[3][8];
	int mat;			/* const 0 is a [len / 2, 2] matrix */
	int n_attrs;
	struct tfk_attr attrs[4];
};

static const struct mv_case mv_cases[] = {
	{ .name = "transpose", .op = "Transpose",
	  .expr = "np.transpose(X, (2, 0, 1))",
	  .n_consts = 1, .clen = { 3 }, .c = { { 2, 0, 1 } } },
	{ .name = "transpose_last2", .op = "Transpose",
	  .expr = "np.transpose(X, (0, 2, 1))",
	  .n_consts = 1, .clen = { 3 }, .c = { { 0, 2, 1 } } },
	{ .name = "concat1", .op = "ConcatV2",
	  .expr = "np.concatenate([X, X], 1)", .twice = 1,
	  .n_consts = 1, .clen = { 0 }, .c = { { 1 } } },
	{ .name = "concat_neg", .op = "ConcatV2",
	  .expr = "np.concatenate([X, X], 2)", .twice = 1,
	  .n_consts = 1, .clen = { 0 }, .c = { { -1 } } },
	{ .name = "pack1", .op = "Pack", .expr = "np.stack([X, X], 1)",
	  .twice = 1, .n_attrs = 1, .attrs = { TFK_A_INT("axis", 1) } },
	{ .name = "pack_last", .op = "Pack", .expr = "np.stack([X, X], 3)",
	  .twice = 1, .n_attrs = 1, .attrs = { TFK_A_INT("axis", -1) } },
	{ .name = "tile", .op = "Tile", .expr = "np.tile(X, (2, 1, 3))",
	  .n_consts = 1, .clen = { 3 }, .c = { { 2, 1, 3 } } },
	{ .name = "pad", .op = "Pad",
	  .expr = "np.pad(X, ((1, 0), (0, 2), (1, 1)))",
	  .n_consts = 1, .clen = { 6 }, .c = { { 1, 0, 0, 2, 1, 1 } },
	  .mat = 1 },
	{ .name = "slice", .op = "Slice", .expr = "X[0:2, 1:3, 1:3]",
	  .n_consts = 2, .clen = { 3, 3 }, .c = { { 0, 1, 1 }, { -1, 2, 2 } } },
	{ .name = "ss_basic", .op = "StridedSlice", .expr = "X[:, 1:3, ::-1]",
	  .n_consts = 3, .clen = { 3, 3, 3 },
	  .c = { { 0, 1, 0 }, { 0, 3, 0 }, { 1, 1, -1 } }, .n_attrs = 2,
	  .attrs = { TFK_A_INT("begin_mask", 5), TFK_A_INT("end_mask", 5) } },
	{ .name = "ss_shrink_ellipsis", .op = "StridedSlice",
	  .expr = "X[1, ..., ::2]", .n_consts = 3, .clen = { 3, 3, 3 },
	  .c = { { 1, 0, 0 }, { 2, 0, 0 }, { 1, 1, 2 } }, .n_attrs = 3,
	  .attrs = { TFK_A_INT("shrink_axis_mask", 1),
		     TFK_A_INT("ellipsis_mask", 2),
		     TFK_A_INT("end_mask", 4) } },
	{ .name = "ss_newaxis", .op = "StridedSlice",
	  .expr = "X[np.newaxis, :, -1]", .n_consts = 3, .clen = { 3, 3, 3 },
	  .c = { { 0, 0, -1 }, { 0, 0, 0 }, { 1, 1, 1 } }, .n_attrs = 4,
	  .attrs = { TFK_A_INT("new_axis_mask", 1),
		     TFK_A_INT("begin_mask", 2), TFK_A_INT("end_mask", 2),
		     TFK_A_INT("shrink_axis_mask", 4) } },
	{ .name = "ss_negstep", .op = "StridedSlice",
	  .expr = "X[::-2, 0:-1, -3:]", .n_consts = 3, .clen = { 3, 3, 3 },
	  .c = { { 0, 0, -3 }, { 0, -1, 0 }, { -2, 1, 1 } }, .n_attrs = 2,
	  .attrs = { TFK_A_INT("begin_mask", 1), TFK_A_INT("end_mask", 5) } },
	{ .name = "ss_clamp", .op = "StridedSlice",
	  .expr = "X[-100:100, 5:1:-1, 2:3]", .n_consts = 3,
	  .clen = { 3, 3, 3 },
	  .c = { { -100, 5, 2 }, { 100, 1, 3 }, { 1, -1, 1 } } },
	{ .name = "broadcast_to", .op = "BroadcastTo",
	  .expr = "np.broadcast_to(X, (5, 2, 3, 4))",
	  .n_consts = 1, .clen = { 4 }, .c = { { 5, 2, 3, 4 } } },
};
#define N_MV (int)(sizeof(mv_cases) / sizeof(mv_cases[0]))

static int mv_build(struct tfk_graph *g, const struct mv_case *c,
		    struct tfk_port x, struct tfk_port *y, struct tfk_err *err)
{
	struct tfk_port in[6];
	int k = 0, i;

	in[k++] = x;
	if (c->twice)
		in[k++] = x;
	for (i = 0; i < c->n_consts; i++) {
		if (c->mat && i == 0) {
			struct tfk_tensor t;
			int64_t s[2] = { c->clen[0] / 2, 2 };

			tfk_tensor_init_view(&t, TFK_DT_INT32, 2, s,
					     (void *)c->c[0], c->clen[0] * 4,
					     TFK_OWN_BORROWED, NULL);
			if (tfk_graph_const(g, NULL, &t, &in[k++], err))
				return -1;
		} else if (c->clen[i] == 0) {
			struct tfk_tensor t;

			tfk_tensor_init_view(&t, TFK_DT_INT32, 0, NULL,
					     (void *)c->c[i], 4,
					     TFK_OWN_BORROWED, NULL);
			if (tfk_graph_const(g, NULL, &t, &in[k++], err))
				return -1;
		} else if (tfk_graph_const_i32v(g, NULL, c->c[i], c->clen[i],
						&in[k++], err)) {
			return -1;
		}
	}
	return tfk_graph_add_node(g, c->op, "y", in, k, c->attrs, c->n_attrs,
				  y, err);
}

static void vs_numpy(void)
{
	const char *dir = tap_tmpdir();
	char path[512], cmd[1024], man[8192];
	int64_t xs[3] = { 2, 3, 4 };
	size_t mlen = 0;
	double xv[24];
	int i, rc, bad = 0;

	for (i = 0; i < 24; i++)
		xv[i] = gc_urand() * 10 - 5;
	for (i = 0; i < N_MV; i++) {
		snprintf(path, sizeof(path), "%s/%s.x", dir, mv_cases[i].name);
		tap_write_file(path, xv, sizeof(xv));
		mlen += snprintf(man + mlen, sizeof(man) - mlen, "%s 2x3x4 "
				 "%s\n", mv_cases[i].name, mv_cases[i].expr);
	}
	snprintf(path, sizeof(path), "%s/manifest", dir);
	tap_write_file(path, man, mlen);
	snprintf(cmd, sizeof(cmd), "%s %s %s",
		 getenv("PYTHON") && *getenv("PYTHON") ? getenv("PYTHON") :
		 "/usr/bin/python3", tap_source("tests/py/np_ref.py"),
		 dir);
	rc = system(cmd);
	if (!ok(rc == 0, "numpy oracle ran (%d cases)", N_MV))
		return;
	for (i = 0; i < N_MV; i++) {
		const struct mv_case *c = &mv_cases[i];
		struct tfk_graph *g;
		struct tfk_err err = { 0, "" };
		struct tfk_port x, y;
		struct tfk_tensor xt;
		const struct tfk_tensor *out[1];
		const char *fetch[1] = { "y" };
		struct tfk_exec *ex = NULL;
		void *want;
		size_t n;

		tfk_graph_new(&g, &err);
		tfk_tensor_init_view(&xt, TFK_DT_DOUBLE, 3, xs, xv, sizeof(xv),
				     TFK_OWN_BORROWED, NULL);
		tfk_graph_const(g, "x", &xt, &x, &err);
		snprintf(path, sizeof(path), "%s/%s.want", dir, c->name);
		want = tap_read_file(path, &n);
		if (mv_build(g, c, x, &y, &err) ||
		    tfk_exec_new(&ex, g, NULL, 0, fetch, 1, NULL, &err) ||
		    tfk_exec_run(ex, NULL, 0, out, &err)) {
			ok(0, "%s: %s", c->name, err.msg);
			bad++;
		} else {
			is_mem(out[0]->data, out[0]->nbytes, want, want ? n : 0,
			       "%s == numpy %s", c->name, c->expr);
		}
		free(want);
		tfk_exec_free(ex);
		tfk_graph_free(g);
	}
	(void)bad;
}

static void fill_and_errors(void)
{
	struct tfk_graph *g;
	struct tfk_err err = { 0, "" };
	struct tfk_port d, v, y, x, in[4];
	struct tfk_tensor t;
	const struct tfk_tensor *out[1];
	const char *fetch[1] = { "y" };
	struct tfk_exec *ex;
	int32_t dims[2] = { 2, 3 }, bad[3] = { 0, 0, 2 };
	int64_t xs[3] = { -1, 3, 4 };
	float seven = 7;

	tfk_graph_new(&g, &err);
	tfk_graph_const_i32v(g, NULL, dims, 2, &d, &err);
	tfk_tensor_init_view(&t, TFK_DT_FLOAT, 0, NULL, &seven, 4,
			     TFK_OWN_BORROWED, NULL);
	tfk_graph_const(g, NULL, &t, &v, &err);
	in[0] = d, in[1] = v;
	ok(!tfk_graph_add_node(g, "Fill", "y", in, 2, NULL, 0, &y, &err) &&
	   !tfk_exec_new(&ex, g, NULL, 0, fetch, 1, NULL, &err) &&
	   !tfk_exec_run(ex, NULL, 0, out, &err) && out[0]->rank == 2 &&
	   out[0]->shape[1] == 3 && ((float *)out[0]->data)[5] == 7,
	   "Fill [2, 3] with 7: %s", err.msg);
	tfk_exec_free(ex);
	tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 3, xs, &x, &err);
	in[0] = x;
	tfk_graph_const_i32v(g, NULL, bad, 3, &in[1], &err);
	is_int(tfk_graph_add_node(g, "Transpose", "t", in, 2, NULL, 0, &y,
				  &err), TFK_EINVAL, "Transpose perm with a "
	       "repeat refused");
	is_str(err.msg, "node t: input 1: perm is not a permutation of 0..2",
	       "message");
	tfk_graph_const_i32v(g, NULL, dims, 2, &in[1], &err);
	is_int(tfk_graph_add_node(g, "Tile", "t2", in, 2, NULL, 0, &y, &err),
	       TFK_EINVAL, "Tile multiples of the wrong length refused");
	is_str(err.msg, "node t2: input 1: multiples of 2, input has rank 3",
	       "message");
	{
		int32_t b[3] = { 0, 0, 0 }, e[3] = { 0, 0, 0 };
		int32_t s[3] = { 1, 0, 1 };

		tfk_graph_const_i32v(g, NULL, b, 3, &in[1], &err);
		tfk_graph_const_i32v(g, NULL, e, 3, &in[2], &err);
		tfk_graph_const_i32v(g, NULL, s, 3, &in[3], &err);
		is_int(tfk_graph_add_node(g, "StridedSlice", "ss", in, 4, NULL,
					  0, &y, &err), TFK_EINVAL,
		       "StridedSlice stride 0 refused");
		is_str(err.msg, "node ss: strides[1] is 0", "message");
	}
	{
		/* x[:, 0] of [?, 3, 4]: shrink with an unknown batch */
		int32_t b[2] = { 0, 0 }, e[2] = { 0, 1 }, s[2] = { 1, 1 };
		struct tfk_attr a[2] = { TFK_A_INT("begin_mask", 1),
					 TFK_A_INT("shrink_axis_mask", 2) };
		const struct tfk_tdesc *dd;

		tfk_graph_const_i32v(g, NULL, b, 2, &in[1], &err);
		tfk_graph_const_i32v(g, NULL, e, 2, &in[2], &err);
		tfk_graph_const_i32v(g, NULL, s, 2, &in[3], &err);
		ok(!tfk_graph_add_node(g, "StridedSlice", "s2", in, 4, a, 2,
				       &y, &err), "x[:, 0]: %s", err.msg);
		dd = tfk_graph_desc(g, y);
		ok(dd->rank == 2 && dd->shape[0] == -1 && dd->shape[1] == 4,
		   "x[:, 0] of [?, 3, 4] is [?, 4]");
	}
	tfk_graph_free(g);
}

/* gradients of the data movement ops */
static int build_fill(struct tfk_graph *g, const struct tfk_port *x,
		      struct tfk_port *y, struct tfk_err *err, void *ctx)
{
	int32_t dims[2] = { 2, 3 };
	struct tfk_port in[2];

	in[1] = x[0];
	return tfk_graph_const_i32v(g, NULL, dims, 2, &in[0], err) ||
		tfk_graph_add_node(g, "Fill", NULL, in, 2, NULL, 0, y, err);
}

static int build_mv(struct tfk_graph *g, const struct tfk_port *x,
		    struct tfk_port *y, struct tfk_err *err, void *ctx)
{
	return mv_build(g, ctx, x[0], y, err);
}

static int build_concat0(struct tfk_graph *g, const struct tfk_port *x,
			 struct tfk_port *y, struct tfk_err *err, void *ctx)
{
	struct tfk_port in[4] = { x[0], x[1], x[2] };
	struct tfk_tensor t;
	int32_t zero = 0;

	tfk_tensor_init_view(&t, TFK_DT_INT32, 0, NULL, &zero, 4,
			     TFK_OWN_BORROWED, NULL);
	return tfk_graph_const(g, NULL, &t, &in[3], err) ||
		tfk_graph_add_node(g, "ConcatV2", NULL, in, 4, NULL, 0, y,
				   err);
}

static void move_gradients(void)
{
	int i;

	for (i = 0; i < N_MV; i++) {
		struct gc_input in[1] = { { 3, { -1, 3, 4 }, { 2, 3, 4 }, 0, 0,
					    0 } };

		if (!strcmp(mv_cases[i].op, "Slice"))
			in[0].build[0] = 2;	/* its gradient needs dims */

		gradcheck(mv_cases[i].name, in, 1, build_mv,
			  (void *)&mv_cases[i]);
	}
	{
		struct gc_input in[1] = { { 0, { 0 }, { 0 }, 0, 0, 0 } };

		gradcheck("Fill (value)", in, 1, build_fill, NULL);
	}
	{
		struct gc_op o = { .op = "Unpack", .n_x = 1, .n_attrs = 2,
				   .attrs = { TFK_A_INT("num", 3),
					      TFK_A_INT("axis", 1) },
				   .out_index = 1 };
		struct gc_input in[1] = { { 3, { -1, 3, 4 }, { 2, 3, 4 }, 0, 0,
					    0 } };

		gradcheck("Unpack (output 1; others get zeros)", in, 1,
			  gc_build_op, &o);
	}
	{
		struct gc_input in[3] = {
			{ 2, { -1, 3 }, { 2, 3 }, 0, 0, 0 },
			{ 2, { 4, 3 }, { 4, 3 }, 0, 0, 0 },
			{ 2, { 2, 3 }, { 2, 3 }, 0, 0, 0 },
		};

		gradcheck("ConcatV2 along an unknown batch (one -1 size)",
			  in, 3, build_concat0, NULL);
	}
}

int main(void)
{
	shape_fns();
	expand_squeeze();
	gradients();
	vs_numpy();
	fill_and_errors();
	move_gradients();
	return tap_done();
}
