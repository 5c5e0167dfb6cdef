/*
 * t-shapeops.c - shape functions and data movement ops: Shape, Size,
 * Rank, BroadcastGradientArgs, ExpandDims, Squeeze (values, shape
 * inference with unknown dims and data-less planning, errors) and
 * their gradients by finite differences.
 *
 * Data movement is exact: outputs compared bit for bit with numpy's
 * (values written by numpy from the same inputs) or hand values.
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

int main(void)
{
	shape_fns();
	expand_squeeze();
	gradients();
	return tap_done();
}
