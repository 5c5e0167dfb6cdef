/*
 * t-tfcompat.c - the TensorFlow-compatibility ops (kernels/cpu/
 * tfcompat.c) run through the graph and executor. Expected values are
 * numpy's (np.matmul, np.where, np.arange, computed with numpy 1.24 and
 * written here); the serialized Examples were made by python3-protobuf
 * through tests/py/tfexample.py (make_example(...).SerializeToString()).
 */
#include "graph/exec.h"
#include "graph/graph.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

/* {"i": [3, -4], "s": [b"ab", b""], "f": [0.5]} */
static const char ex0[] = "\x0a\x34\x0a\x0d\x0a\x01\x66\x12\x08\x12\x06\x0a"
	"\x04\x00\x00\x00\x3f\x0a\x14\x0a\x01\x69\x12\x0f\x1a\x0d\x0a\x0b\x03"
	"\xfc\xff\xff\xff\xff\xff\xff\xff\xff\x01\x0a\x0d\x0a\x01\x73\x12\x08"
	"\x0a\x06\x0a\x02\x61\x62\x0a\x00";
/* {"f": [1.5]} */
static const char ex1[] = "\x0a\x0f\x0a\x0d\x0a\x01\x66\x12\x08\x12\x06\x0a"
	"\x04\x00\x00\xc0\x3f";
/* {"i": [7]} */
static const char ex2[] = "\x0a\x0c\x0a\x0a\x0a\x01\x69\x12\x05\x1a\x03\x0a"
	"\x01\x07";

static struct tfk_err err;

/* Run g for fetch with feeds; *out borrowed until tfk_exec_free(*x). */
static int run(struct tfk_graph *g, const char **feeds,
	       const struct tfk_tensor *vals, int nf, const char *fetch,
	       struct tfk_exec **x, const struct tfk_tensor **out)
{
	int rc = tfk_exec_new(x, g, feeds, nf, &fetch, 1, NULL, &err);

	if (!rc)
		rc = tfk_exec_run(*x, vals, 0, out, &err);
	return rc;
}

static int fconst(struct tfk_graph *g, const char *name, int rank,
		  const int64_t *shape, const float *v, struct tfk_port *p)
{
	struct tfk_tensor t;
	int rc = tfk_tensor_init(&t, TFK_DT_FLOAT, rank, shape, &err);

	if (!rc) {
		memcpy(t.data, v, t.nbytes);
		rc = tfk_graph_const(g, name, &t, p, &err);
	}
	tfk_tensor_release(&t);
	return rc;
}

static void parse_dense(void)
{
	struct tfk_graph *g;
	struct tfk_exec *x = NULL;
	const struct tfk_tensor *out;
	struct tfk_tensor ser, def;
	struct tfk_port in[2], p, pd;
	struct tfk_attr at[3];
	const char *feed = "ser";
	int64_t n3 = 3, two = 2;
	int rc;

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "ser", TFK_DT_STRING, 1, (int64_t[]){ -1 },
			      &in[0], &err);
	tfk_tensor_init(&def, TFK_DT_INT64, 1, &two, &err);
	((int64_t *)def.data)[0] = -1;
	((int64_t *)def.data)[1] = -2;
	tfk_graph_const(g, "def_i", &def, &pd, &err);
	tfk_tensor_release(&def);
	in[1] = pd;
	at[0] = TFK_A_STR("key", "i");
	at[1] = TFK_A_TYPE("Tdense", TFK_DT_INT64);
	memset(&at[2], 0, sizeof(at[2]));
	at[2].name = "dense_shape";
	at[2].v.kind = TFK_ATTR_SHAPE;
	at[2].v.shape.rank = 1;
	at[2].v.shape.dims[0] = 2;
	rc = tfk_graph_add_node(g, "_ParseExampleDense", "pi", in, 2, at, 3,
				&p, &err);
	ok(!rc, "int64 [2] feature node (%s)", err.msg);
	ok(tfk_graph_desc(g, p)->rank == 2 && tfk_graph_desc(g, p)->shape[0] ==
	   -1 && tfk_graph_desc(g, p)->shape[1] == 2, "shape [?, 2]");
	tfk_tensor_init(&ser, TFK_DT_STRING, 1, &n3, &err);
	tfk_tensor_set_str(&ser, 0, ex0, sizeof(ex0) - 1, &err);
	tfk_tensor_set_str(&ser, 1, ex1, sizeof(ex1) - 1, &err);
	tfk_tensor_set_str(&ser, 2, ex2, sizeof(ex2) - 1, &err);
	rc = run(g, &feed, &ser, 1, "pi", &x, &out);
	is_int(rc, TFK_EINVAL, "Example 2 has one value for a [2] feature");
	ok(strstr(err.msg, "serialized[2]: feature 'i': expected 2 values, "
		  "got 1") != NULL, "%s", err.msg);
	tfk_exec_free(x);
	ser.shape[0] = 2;	/* the first two */
	rc = run(g, &feed, &ser, 1, "pi", &x, &out);
	ok(!rc && out->shape[0] == 2 && ((int64_t *)out->data)[0] == 3 &&
	   ((int64_t *)out->data)[1] == -4 && ((int64_t *)out->data)[2] == -1
	   && ((int64_t *)out->data)[3] == -2,
	   "values, then the default for the Example without 'i'");
	tfk_exec_free(x);

	/* strings, required (empty default), pointing into the input */
	tfk_tensor_init(&def, TFK_DT_STRING, 1, (int64_t[]){ 0 }, &err);
	tfk_graph_const(g, "def_s", &def, &in[1], &err);
	tfk_tensor_release(&def);
	at[0] = TFK_A_STR("key", "s");
	at[1] = TFK_A_TYPE("Tdense", TFK_DT_STRING);
	rc = tfk_graph_add_node(g, "_ParseExampleDense", "ps", in, 2, at, 3,
				&p, &err);
	ser.shape[0] = 1;
	rc = rc ? rc : run(g, &feed, &ser, 1, "ps", &x, &out);
	ok(!rc && tfk_tensor_str(out, 0).len == 2 &&
	   !memcmp(tfk_tensor_str(out, 0).ptr, "ab", 2) &&
	   tfk_tensor_str(out, 1).len == 0, "bytes feature [b'ab', b'']");
	tfk_exec_free(x);
	ser.shape[0] = 2;
	rc = run(g, &feed, &ser, 1, "ps", &x, &out);
	ok(rc && strstr(err.msg, "serialized[1]: feature 's' (string) is "
			"required but could not be found"), "%s", err.msg);
	tfk_exec_free(x);

	/* a float [1] feature read as int64: wrong kind */
	at[0] = TFK_A_STR("key", "f");
	at[1] = TFK_A_TYPE("Tdense", TFK_DT_INT64);
	at[2].v.shape.dims[0] = 1;
	in[1] = pd;
	rc = tfk_graph_add_node(g, "_ParseExampleDense", "pf", in, 2, at, 3,
				&p, &err);
	rc = rc ? rc : run(g, &feed, &ser, 1, "pf", &x, &out);
	ok(rc && strstr(err.msg, "input 1: default of feature 'f' has 2 "
			"values, the feature 1"), "a default of the wrong size: "
	   "%s", err.msg);
	tfk_exec_free(x);
	tfk_tensor_init(&def, TFK_DT_INT64, 1, (int64_t[]){ 1 }, &err);
	tfk_graph_const(g, "def_1", &def, &in[1], &err);
	tfk_tensor_release(&def);
	rc = tfk_graph_add_node(g, "_ParseExampleDense", "pf1", in, 2, at, 3,
				&p, &err);
	rc = rc ? rc : run(g, &feed, &ser, 1, "pf1", &x, &out);
	ok(rc && strstr(err.msg, "serialized[0]: feature 'f': expected int64 "
			"values, got float"), "a float feature read as int64: "
	   "%s", err.msg);
	tfk_exec_free(x);
	tfk_tensor_release(&ser);

	/* garbage bytes */
	tfk_tensor_init(&ser, TFK_DT_STRING, 1, &two, &err);
	tfk_tensor_set_str(&ser, 0, ex1, sizeof(ex1) - 1, &err);
	tfk_tensor_set_str(&ser, 1, "\x0a\x7f", 2, &err);
	rc = run(g, &feed, &ser, 1, "pi", &x, &out);
	ok(rc && strstr(err.msg, "serialized[1]: not a tf.Example"), "%s",
	   err.msg);
	tfk_exec_free(x);
	tfk_tensor_release(&ser);
	tfk_graph_free(g);
}

static void ops(void)
{
	static const float xv[12] = { -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6 };
	static const float yv[6] = { 0, .5, 1, 1.5, 2, 2.5 };
	static const float want_bmm[8] = { -10, -16, -1, -2.5, 8, 11, 17,
					   24.5 };
	static const double want_adj[16] = { -50, -32, -14, 4, -77, -50, -23,
					     4, 76, 148, 220, 292, 85, 166,
					     247, 328 };
	struct tfk_graph *g;
	struct tfk_exec *x = NULL;
	const struct tfk_tensor *out;
	struct tfk_port a, b, c, p, in[3];
	struct tfk_tensor t;
	int rc, i, good;

	tfk_graph_new(&g, &err);
	fconst(g, "x", 4, (int64_t[]){ 2, 1, 2, 3 }, xv, &a);
	fconst(g, "y", 2, (int64_t[]){ 3, 2 }, yv, &b);
	in[0] = a;
	in[1] = b;
	rc = tfk_graph_add_node(g, "BatchMatMulV2", "bmm", in, 2, NULL, 0, &p,
				&err);
	ok(!rc && tfk_graph_desc(g, p)->rank == 4 &&
	   tfk_graph_desc(g, p)->shape[3] == 2, "BatchMatMulV2 [2,1,2,3] x "
	   "[3,2] -> [2,1,2,2]");
	rc = rc ? rc : run(g, NULL, NULL, 0, "bmm", &x, &out);
	ok(!rc && !memcmp(out->data, want_bmm, sizeof(want_bmm)),
	   "values = np.matmul");
	tfk_exec_free(x);

	tfk_tensor_init(&t, TFK_DT_DOUBLE, 3, (int64_t[]){ 2, 3, 2 }, &err);
	for (i = 0; i < 12; i++)
		((double *)t.data)[i] = i;
	tfk_graph_const(g, "x2", &t, &in[0], &err);
	tfk_tensor_release(&t);
	tfk_tensor_init(&t, TFK_DT_DOUBLE, 3, (int64_t[]){ 2, 4, 3 }, &err);
	for (i = 0; i < 24; i++)
		((double *)t.data)[i] = i - 10;
	tfk_graph_const(g, "y2", &t, &in[1], &err);
	tfk_tensor_release(&t);
	{
		struct tfk_attr at[2] = { TFK_A_BOOL("adj_x", 1),
					  TFK_A_BOOL("adj_y", 1) };

		rc = tfk_graph_add_node(g, "BatchMatMulV2", "bmm2", in, 2, at,
					2, &p, &err);
	}
	rc = rc ? rc : run(g, NULL, NULL, 0, "bmm2", &x, &out);
	ok(!rc && out->shape[1] == 2 && out->shape[2] == 4 &&
	   !memcmp(out->data, want_adj, sizeof(want_adj)),
	   "adj_x, adj_y, float64 = np.matmul of the transposes");
	tfk_exec_free(x);
	in[0] = a;
	in[1] = a;
	rc = tfk_graph_add_node(g, "BatchMatMulV2", "bad", in, 2, NULL, 0, &p,
				&err);
	ok(rc && strstr(err.msg, "inner dims 3 and 2 differ"), "%s", err.msg);

	/* AddN and Select */
	in[0] = b;
	in[1] = b;
	in[2] = b;
	rc = tfk_graph_add_node(g, "AddN", "addn", in, 3, NULL, 0, &p, &err);
	rc = rc ? rc : run(g, NULL, NULL, 0, "addn", &x, &out);
	good = !rc;
	for (i = 0; good && i < 6; i++)
		good = ((float *)out->data)[i] == 3 * yv[i];
	ok(good, "AddN of three");
	tfk_exec_free(x);
	tfk_tensor_init(&t, TFK_DT_BOOL, 1, (int64_t[]){ 2 }, &err);
	((uint8_t *)t.data)[0] = 1;
	tfk_graph_const(g, "cond", &t, &c, &err);
	tfk_tensor_release(&t);
	fconst(g, "t", 2, (int64_t[]){ 2, 2 }, (float[]){ 1, 2, 3, 4 }, &in[1]);
	fconst(g, "e", 2, (int64_t[]){ 2, 2 }, (float[]){ -1, -2, -3, -4 },
	       &in[2]);
	in[0] = c;
	rc = tfk_graph_add_node(g, "Select", "sel", in, 3, NULL, 0, &p, &err);
	rc = rc ? rc : run(g, NULL, NULL, 0, "sel", &x, &out);
	ok(!rc && !memcmp(out->data, (float[]){ 1, 2, -3, -4 }, 16),
	   "Select by rows = np.where(c[:, None], t, e)");
	tfk_exec_free(x);

	/* Range */
	{
		struct tfk_port r[3];
		int32_t v[3] = { 1, 10, 3 };

		for (i = 0; i < 3; i++) {
			char nm[8];

			snprintf(nm, sizeof(nm), "r%d", i);
			tfk_tensor_init(&t, TFK_DT_INT32, 0, NULL, &err);
			*(int32_t *)t.data = v[i];
			tfk_graph_const(g, nm, &t, &r[i], &err);
			tfk_tensor_release(&t);
		}
		rc = tfk_graph_add_node(g, "Range", "range", r, 3, NULL, 0, &p,
					&err);
		rc = rc ? rc : run(g, NULL, NULL, 0, "range", &x, &out);
		ok(!rc && out->shape[0] == 3 &&
		   !memcmp(out->data, (int32_t[]){ 1, 4, 7 }, 12),
		   "Range(1, 10, 3) = np.arange");
		tfk_exec_free(x);
	}
	tfk_graph_free(g);
}

int main(void)
{
	parse_dense();
	ops();
	return tap_done();
}
