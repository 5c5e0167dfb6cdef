/*
 * t-graph.c - the op registry and the graph builder: registry sanity,
 * building an MLP with inferred shapes (unknown batch), defaults and
 * type attrs taken from inputs, every validation error with the node
 * and input named (and the graph unchanged after it), naming and name
 * lookup, variables, named outputs, gradient graph structure, failed
 * allocations at every point of a build.
 */
#include "graph/graph.h"
#include "graph/op.h"
#include "util/alloc.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

static const char *shape_of(struct tfk_graph *g, struct tfk_port p)
{
	static char buf[4][64];
	static int k;
	const struct tfk_tdesc *d = tfk_graph_desc(g, p);

	k = (k + 1) % 4;
	return tfk_shape_str(d->rank, d->shape, buf[k], sizeof(buf[k]));
}

static void registry(void)
{
	int i, j, n = tfk_op_count(), bad = 0, nok = 0;
	static const char *const want[] = {
		"Placeholder", "Const", "VariableV2", "Identity", "AddV2",
		"Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Relu",
		"Sigmoid", "Tanh", "Cast", "MatMul", "BiasAdd", "Reshape",
		"Softmax", "ReluGrad", "Sum"
	};

	ok(n >= 20, "%d ops registered", n);
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			if (!strcmp(tfk_op_at(i)->name, tfk_op_at(j)->name))
				bad++;
	is_int(bad, 0, "op names unique");
	for (i = 0; i < (int)(sizeof(want) / sizeof(want[0])); i++)
		if (tfk_op_find(want[i]))
			nok++;
		else
			tap_diag("missing op %s", want[i]);
	is_int(nok, sizeof(want) / sizeof(want[0]), "all required ops there");
	ok(tfk_op_find("Foo") == NULL, "unknown op not found");
	ok(tfk_op_at(n) == NULL && tfk_op_at(-1) == NULL, "op_at bounds");
	is_int(tfk_op_n_inputs(tfk_op_find("MatMul")), 2, "MatMul 2 inputs");
	is_int(tfk_op_n_attrs(tfk_op_find("MatMul")), 3, "MatMul 3 attrs");
	ok(tfk_op_attr_def(tfk_op_find("MatMul"), "transpose_b") != NULL,
	   "transpose_b (TF's name)");
	ok(tfk_op_find("VariableV2")->flags & TFK_OP_STATEFUL,
	   "VariableV2 is stateful");
	is_str(tfk_attr_kind_name(TFK_ATTR_LIST_INT), "list(int)", "kind name");
	ok(tfk_rng_u64(1, 2) == tfk_rng_u64(1, 2) &&
	   tfk_rng_u64(1, 2) != tfk_rng_u64(1, 3) &&
	   tfk_rng_u64(1, 2) != tfk_rng_u64(2, 2), "rng is a function of "
	   "(key, counter)");
}

/* x[?, 4] -> dense/MatMul (w[4, 3]) -> dense/BiasAdd -> Relu -> out */
static struct tfk_graph *mlp(struct tfk_port *ports)
{
	struct tfk_graph *g;
	struct tfk_tensor w, b;
	struct tfk_err err = { 0, "" };
	int64_t xs[2] = { -1, 4 }, ws[2] = { 4, 3 }, bs[1] = { 3 };
	struct tfk_port in[2];

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 2, xs, &ports[0], &err);
	tfk_tensor_init(&w, TFK_DT_FLOAT, 2, ws, &err);
	tfk_tensor_init(&b, TFK_DT_FLOAT, 1, bs, &err);
	tfk_graph_variable(g, "dense/kernel", &w, &ports[1], &err);
	tfk_graph_variable(g, "dense/bias", &b, &ports[2], &err);
	in[0] = ports[0];
	in[1] = ports[1];
	tfk_graph_add_node(g, "MatMul", "dense/MatMul", in, 2, NULL, 0,
			   &ports[3], &err);
	in[0] = ports[3];
	in[1] = ports[2];
	tfk_graph_add_node(g, "BiasAdd", "dense/BiasAdd", in, 2, NULL, 0,
			   &ports[4], &err);
	tfk_graph_add_node(g, "Relu", "dense/Relu", &ports[4], 1, NULL, 0,
			   &ports[5], &err);
	return g;
}

static void build(void)
{
	struct tfk_port p[6], q;
	struct tfk_graph *g = mlp(p);
	const struct tfk_node *n;
	struct tfk_err err = { 0, "" };

	is_int(tfk_graph_n_nodes(g), 6, "6 nodes");
	is_str(shape_of(g, p[3]), "[?, 3]", "MatMul output [?, 3]");
	is_str(shape_of(g, p[5]), "[?, 3]", "Relu output [?, 3]");
	n = tfk_graph_node(g, p[3].node);
	is_str(n->name, "dense/MatMul", "node name");
	is_int(tfk_node_attr_type(n, "T", 0), TFK_DT_FLOAT,
	       "T taken from input 0");
	ok(tfk_node_attr(n, "transpose_a") &&
	   tfk_node_attr_b(n, "transpose_a", 7) == 0, "transpose_a default "
	   "false filled in");
	is_int(n->n_attrs, 3, "all schema attrs present");
	is_str(tfk_attr_kind_name(tfk_node_attr(n, "T")->kind), "type",
	       "T is a type attr");
	ok(tfk_graph_node(g, 6) == NULL && tfk_graph_node(g, -1) == NULL,
	   "node bounds");
	n = tfk_graph_node(g, p[4].node);
	is_str(tfk_node_attr(n, "data_format")->s.p, "NHWC",
	       "BiasAdd data_format default NHWC");
	is_int(tfk_graph_node(g, p[1].node)->variable, 0,
	       "kernel is variable 0");
	ok(tfk_graph_var(g, "dense/bias") != NULL &&
	   tfk_graph_var(g, "dense/bias")->shape[0] == 3, "variable by name");
	ok(tfk_graph_var(g, "nope") == NULL, "unknown variable");
	is_int(tfk_graph_n_variables(g), 2, "2 variables");

	ok(!tfk_graph_set_output(g, "logits", p[5], &err), "named output");
	is_int(tfk_graph_set_output(g, "logits", p[4], &err), TFK_EINVAL,
	       "output name reused");
	ok(!tfk_graph_find(g, "logits", &q, &err) && q.node == p[5].node,
	   "find named output");
	ok(!tfk_graph_find(g, "dense/BiasAdd", &q, &err) &&
	   q.node == p[4].node && q.index == 0, "find node");
	ok(!tfk_graph_find(g, "dense/BiasAdd:0", &q, &err) &&
	   q.node == p[4].node, "find NODE:0");
	is_int(tfk_graph_find(g, "dense/BiasAdd:1", &q, &err), TFK_ENOTFOUND,
	   "no output 1");
	is_int(tfk_graph_find(g, "nope", &q, &err), TFK_ENOTFOUND, "unknown");
	is_str(err.msg, "no node or output named 'nope'", "message");
	{
		const char *nm;

		q = tfk_graph_output_at(g, 0, &nm);
		ok(q.node == p[5].node && !strcmp(nm, "logits"), "output_at");
	}

	/* automatic names */
	{
		struct tfk_port in[2] = { p[5], p[5] };

		tfk_graph_add_node(g, "AddV2", NULL, in, 2, NULL, 0, &q, &err);
		is_str(tfk_graph_node(g, q.node)->name, "AddV2", "auto name");
		tfk_graph_add_node(g, "AddV2", NULL, in, 2, NULL, 0, &q, &err);
		is_str(tfk_graph_node(g, q.node)->name, "AddV2_1",
		       "auto name made unique");
		tfk_graph_add_node(g, "AddV2", "scope/", in, 2, NULL, 0, &q,
				   &err);
		is_str(tfk_graph_node(g, q.node)->name, "scope/AddV2",
		       "scoped name");
	}
	tfk_graph_free(g);
}

/* Expect add to fail with code and message, leaving the graph as it was. */
static void fails(struct tfk_graph *g, const char *op, const char *name,
		  const struct tfk_port *in, int n_in,
		  const struct tfk_attr *attrs, int n_attrs, int code,
		  const char *msg)
{
	struct tfk_err err = { 0, "" };
	int before = tfk_graph_n_nodes(g);
	struct tfk_port q = { 99, 99 };
	int rc = tfk_graph_add_node(g, op, name, in, n_in, attrs, n_attrs, &q,
				    &err);

	is_int(rc, code, "%s: fails with %d", msg, code);
	is_str(err.msg, msg, "message");
	ok(tfk_graph_n_nodes(g) == before, "graph unchanged");
}

static void errors(void)
{
	struct tfk_port p[6], in[2], i64, cst, cst2;
	struct tfk_graph *g = mlp(p);
	struct tfk_tensor t;
	struct tfk_err err = { 0, "" };
	int64_t s2[2] = { 5, 2 }, one = 1;
	int32_t sh[2] = { 5, -1 }, ax[1] = { 2 };
	struct tfk_attr a[2];

	tfk_graph_placeholder(g, "ids", TFK_DT_INT64, 2, s2, &i64, &err);
	in[0] = p[0];
	in[1] = i64;
	fails(g, "MatMul", "dense/MatMul2", in, 2, NULL, 0, TFK_EINVAL,
	      "node dense/MatMul2: input 1: expected float32, got int64");
	in[0] = i64;
	in[1] = i64;
	fails(g, "MatMul", "mm", in, 2, NULL, 0, TFK_EINVAL,
	      "node mm: attr T: int64 not allowed (float32, float64)");
	in[0] = p[1];
	in[1] = p[1];
	fails(g, "MatMul", "mm", in, 2, NULL, 0, TFK_EINVAL,
	      "node mm: input 1: inner dimensions differ: 3 (input 0) vs 4");
	in[0] = p[0];
	in[1] = p[0];
	a[0] = TFK_A_BOOL("transpose_b", 1);
	ok(!tfk_graph_add_node(g, "MatMul", "xxT", in, 2, a, 1, &cst, &err),
	   "x x^T with transpose_b: %s", err.msg);
	is_str(shape_of(g, cst), "[?, ?]", "[?, ?]");
	fails(g, "Foo", "f", in, 2, NULL, 0, TFK_ENOTFOUND,
	      "node f: unknown op 'Foo'");
	fails(g, "Relu", "dense/Relu", in, 1, NULL, 0, TFK_EINVAL,
	      "node dense/Relu: name already used");
	fails(g, "Relu", "r", in, 2, NULL, 0, TFK_EINVAL,
	      "node r: op Relu takes 1 inputs, got 2");
	a[0] = TFK_A_BOOL("transpose_c", 1);
	fails(g, "MatMul", "mm", in, 2, a, 1, TFK_EINVAL,
	      "node mm: unknown attr 'transpose_c' for op MatMul");
	a[0] = TFK_A_INT("transpose_a", 1);
	fails(g, "MatMul", "mm", in, 2, a, 1, TFK_EINVAL,
	      "node mm: attr transpose_a: expected bool, got int");
	a[0] = TFK_A_BOOL("transpose_a", 1);
	a[1] = TFK_A_BOOL("transpose_a", 0);
	fails(g, "MatMul", "mm", in, 2, a, 2, TFK_EINVAL,
	      "node mm: attr 'transpose_a' given twice");
	in[1].index = 3;
	fails(g, "Relu", "r", in + 1, 1, NULL, 0, TFK_EINVAL,
	      "node r: input 0: no output 3 of node 0");
	in[1].index = 0;
	fails(g, "Cast", "c", in, 1, NULL, 0, TFK_EINVAL,
	      "node c: missing attr DstT (type)");
	a[0] = TFK_A_TYPE("DstT", TFK_DT_STRING);
	fails(g, "Cast", "c", in, 1, a, 1, TFK_EINVAL,
	      "node c: attr DstT: string not allowed (float32, float64, "
	      "int32, uint8, int16, int8, int64, bool)");
	a[0] = TFK_A_TYPE("DstT", TFK_DT_UINT8);
	ok(!tfk_graph_add_node(g, "Cast", "c", in, 1, a, 1, &cst, &err),
	   "Cast to uint8");
	is_int(tfk_graph_desc(g, cst)->dtype, TFK_DT_UINT8, "Cast dtype");
	is_str(shape_of(g, cst), "[?, 4]", "Cast keeps the shape");

	/* broadcasting */
	in[0] = p[3];		/* [?, 3] */
	in[1] = i64;
	tfk_tensor_init(&t, TFK_DT_FLOAT, 2, s2, &err);
	tfk_graph_const(g, "c52", &t, &cst, &err);
	tfk_tensor_release(&t);
	in[1] = cst;		/* [5, 2] */
	fails(g, "AddV2", "add", in, 2, NULL, 0, TFK_EINVAL,
	      "node add: inputs 0 and 1: shapes [?, 3] and [5, 2] do not "
	      "broadcast (dim 1: 3 vs 2)");
	tfk_tensor_init(&t, TFK_DT_FLOAT, 1, &one, &err);
	tfk_graph_const(g, "c1", &t, &cst2, &err);
	tfk_tensor_release(&t);
	in[1] = cst2;
	ok(!tfk_graph_add_node(g, "Mul", "mul", in, 2, NULL, 0, &cst2, &err),
	   "[?, 3] * [1]");
	is_str(shape_of(g, cst2), "[?, 3]", "broadcast shape");

	/* BiasAdd, Reshape, Sum, Softmax */
	in[0] = p[3];
	in[1] = p[1];
	fails(g, "BiasAdd", "ba", in, 2, NULL, 0, TFK_EINVAL,
	      "node ba: input 1: bias shape [4, 3], need rank 1");
	a[0] = TFK_A_STR("data_format", "NCHW");
	in[1] = p[2];
	fails(g, "BiasAdd", "ba", in, 2, a, 1, TFK_EINVAL,
	      "node ba: data_format NCHW not supported (only NHWC)");
	in[0] = p[0];
	fails(g, "BiasAdd", "ba", in, 2, NULL, 0, TFK_EINVAL,
	      "node ba: input 1: bias of 3, input has 4 channels");
	tfk_graph_const_i32v(g, "shape", sh, 2, &in[1], &err);
	in[0] = p[1];		/* [4, 3] */
	fails(g, "Reshape", "rs", in, 2, NULL, 0, TFK_EINVAL,
	      "node rs: cannot reshape [4, 3] into [5, ?]");
	sh[0] = 2;
	tfk_graph_const_i32v(g, "shape2", sh, 2, &in[1], &err);
	ok(!tfk_graph_add_node(g, "Reshape", "rs", in, 2, NULL, 0, &cst,
			       &err), "reshape [4, 3] to [2, -1]");
	is_str(shape_of(g, cst), "[2, 6]", "-1 computed");
	in[0] = p[0];		/* [?, 4] */
	ok(!tfk_graph_add_node(g, "Reshape", "rs2", in, 2, NULL, 0, &cst,
			       &err), "reshape [?, 4] to [2, -1]");
	is_str(shape_of(g, cst), "[2, ?]", "unknown until run time");
	tfk_graph_const_i32v(g, "axes", ax, 1, &in[1], &err);
	fails(g, "Sum", "sum", in, 2, NULL, 0, TFK_EINVAL,
	      "node sum: input 1: axis 2 out of range for rank 2");
	ax[0] = -1;
	tfk_graph_const_i32v(g, "axes2", ax, 1, &in[1], &err);
	ok(!tfk_graph_add_node(g, "Sum", "sum", in, 2, NULL, 0, &cst, &err),
	   "sum over axis -1");
	is_str(shape_of(g, cst), "[?]", "sum shape");
	a[0] = TFK_A_BOOL("keep_dims", 1);
	ok(!tfk_graph_add_node(g, "Sum", "sumk", in, 2, a, 1, &cst, &err),
	   "sum keep_dims");
	is_str(shape_of(g, cst), "[?, 1]", "keep_dims shape");
	in[1] = p[0];
	fails(g, "Sum", "sum3", in, 2, NULL, 0, TFK_EINVAL,
	      "node sum3: attr Tidx: float32 not allowed (int32, int64)");
	tfk_tensor_init(&t, TFK_DT_FLOAT, 0, NULL, &err);
	tfk_graph_const(g, "scalar", &t, &cst, &err);
	tfk_tensor_release(&t);
	fails(g, "Softmax", "sm", &cst, 1, NULL, 0, TFK_EINVAL,
	      "node sm: input 0: softmax of a scalar (need rank >= 1)");

	/* variables */
	tfk_tensor_init(&t, TFK_DT_FLOAT, 1, &one, &err);
	is_int(tfk_graph_variable(g, "dense/bias", &t, NULL, &err),
	       TFK_EINVAL, "variable name reused");
	is_str(err.msg, "variable 'dense/bias': name already used", "message");
	ok(t.data == NULL, "init consumed on failure too");
	tfk_graph_free(g);
}

static void gradients(void)
{
	struct tfk_port p[6], in[2], seed, dx[3], sm, y;
	struct tfk_graph *g = mlp(p);
	struct tfk_err err = { 0, "" };
	int64_t s3[1] = { 3 };
	struct tfk_tensor t;
	int n0;

	/* y = Relu(x W + b) * c, c a [3] Const: broadcast in Mul */
	tfk_tensor_init(&t, TFK_DT_FLOAT, 1, s3, &err);
	tfk_graph_const(g, "c", &t, &in[1], &err);
	tfk_tensor_release(&t);
	in[0] = p[5];
	tfk_graph_add_node(g, "Mul", "y", in, 2, NULL, 0, &y, &err);
	tfk_graph_placeholder(g, "dy", TFK_DT_FLOAT, 2,
			      tfk_graph_desc(g, y)->shape, &seed, &err);
	n0 = tfk_graph_n_nodes(g);
	{
		struct tfk_port xs[3] = { p[0], p[1], p[2] };

		ok(!tfk_graph_gradients(g, &y, &seed, 1, xs, 3, dx, &err),
		   "gradients of the MLP: %s", err.msg);
	}
	ok(tfk_graph_n_nodes(g) > n0, "backward nodes added (%d)",
	   tfk_graph_n_nodes(g) - n0);
	is_str(shape_of(g, dx[0]), "[?, 4]", "dx shape");
	is_str(shape_of(g, dx[1]), "[4, 3]", "dW shape");
	is_str(shape_of(g, dx[2]), "[3]", "db shape (Sum over batch)");
	ok(!strncmp(tfk_graph_node(g, dx[1].node)->name,
		    "gradients/dense/MatMul_grad/", 28), "dW named %s",
	   tfk_graph_node(g, dx[1].node)->name);
	is_str(tfk_graph_node(g, dx[2].node)->op->name, "Sum",
	       "db is dy summed over the batch");

	/* Floor has no gradient (as TF's): a located error */
	tfk_graph_add_node(g, "Floor", "sm", &y, 1, NULL, 0, &sm, &err);
	is_int(tfk_graph_gradients(g, &sm, &seed, 1, p, 1, dx, &err),
	       TFK_EINVAL, "no gradient through Floor");
	is_str(err.msg, "node sm: op Floor has no gradient", "message");
	/* an x that does not reach y */
	in[0] = p[3];
	tfk_graph_add_node(g, "Identity", "unused_in", p, 1, NULL, 0, &in[1],
			   &err);
	ok(!tfk_graph_gradients(g, &y, &seed, 1, &in[1], 1, dx, &err) &&
	   dx[0].node == -1, "x not on a path: no gradient");
	tfk_graph_free(g);
}

static char last_msg[TFK_ERR_MSG_MAX];

/* Build the MLP and its gradients with the k-th allocation failing. */
static int build_all(void)
{
	struct tfk_graph *g;
	struct tfk_tensor w;
	struct tfk_err err = { 0, "" };
	int64_t xs[2] = { -1, 4 }, ws[2] = { 4, 3 }, ys[2] = { -1, 3 };
	struct tfk_port x, v, m, r, dy, dx[2], xv[2];
	int rc;

	rc = tfk_graph_new(&g, &err);
	if (rc)
		return rc;
	rc = tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 2, xs, &x, &err);
	if (!rc)
		rc = tfk_tensor_init(&w, TFK_DT_FLOAT, 2, ws, &err);
	if (!rc)
		rc = tfk_graph_variable(g, "w", &w, &v, &err);
	if (!rc) {
		struct tfk_port in[2] = { x, v };
		struct tfk_attr a = TFK_A_BOOL("transpose_a", 0);

		rc = tfk_graph_add_node(g, "MatMul", "mm", in, 2, &a, 1, &m,
					&err);
	}
	if (!rc)
		rc = tfk_graph_add_node(g, "Relu", NULL, &m, 1, NULL, 0, &r,
					&err);
	if (!rc)
		rc = tfk_graph_placeholder(g, "dy", TFK_DT_FLOAT, 2, ys, &dy,
					   &err);
	if (!rc) {
		xv[0] = x;
		xv[1] = v;
		rc = tfk_graph_gradients(g, &r, &dy, 1, xv, 2, dx, &err);
	}
	if (!rc && tfk_graph_n_nodes(g) < 8)
		rc = -100;
	if (rc)
		memcpy(last_msg, err.msg, sizeof(last_msg));
	tfk_graph_free(g);
	return rc;
}

static void alloc_failures(void)
{
	long k;
	int rc = -1, bad = 0;

	for (k = 0; k < 500; k++) {
		tfk_alloc_fail_after(k);
		rc = build_all();
		tfk_alloc_fail_after(-1);
		if (!rc)
			break;
		if (rc != TFK_ENOMEM && bad++ < 3)
			tap_diag("failure %ld: rc %d %s", k, rc, last_msg);
	}
	ok(rc == 0 && k > 20, "graph build + gradients succeeds after %ld "
	   "failing points", k);
	is_int(bad, 0, "every failure is TFK_ENOMEM (no leaks: ASan)");
}

int main(void)
{
	registry();
	build();
	errors();
	gradients();
	alloc_failures();
	return tap_done();
}
