/*
 * t-import.c - SavedModel signatures as graphs: the TensorFlow-written
 * fixtures (README values: a = 0.5, b = 2, c = 3; y = a x + b), what
 * pruning keeps and drops, inlined function names, every way a
 * variable's checkpoint key is found (restore path, object graph, own
 * name, by breaking the earlier ones in memory), refusals, failed
 * allocations.
 */
#include "model/import.h"
#include "graph/exec.h"
#include "util/alloc.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TF1 "savedmodel/half_plus_two_cpu_tf1/00000123"
#define TF2 "savedmodel/half_plus_two_tf2_cpu/00000123"

static struct tfk_savedmodel *load(const char *rel)
{
	struct tfk_savedmodel *sm = NULL;
	struct tfk_err err;

	if (tfk_savedmodel_open(&sm, tap_fixture(rel), &err))
		tap_diag("%s: %s", rel, err.msg);
	return sm;
}

static const struct tfk_signature *sig_of(struct tfk_savedmodel *sm,
					  const char *key)
{
	struct tfk_err err;

	return tfk_savedmodel_signature(&sm->meta_graphs[0], key, &err);
}

/*
 * The fixture rel loaded and its serving_default imported into *imp, as
 * two TAP checks (the import's named by label): the SavedModel, or NULL
 * (nothing left open) when either fails.
 */
static struct tfk_savedmodel *load_default(const char *rel,
					   const char *label,
					   struct tfk_import **imp)
{
	struct tfk_savedmodel *sm = load(rel);
	struct tfk_err err;
	int rc;

	if (!sm) {
		ok(0, "load %s", rel);
		return NULL;
	}
	rc = tfk_import_signature(imp, &sm->meta_graphs[0],
				  sig_of(sm, "serving_default"),
				  sm->variables_prefix, &err);
	ok(!rc, "%s serving_default imports (%s)", label, rc ? err.msg : "");
	if (rc) {
		tfk_savedmodel_close(sm);
		return NULL;
	}
	return sm;
}

/* Run imp on a float feed x[n] and return output 0's values in y. */
static int run1(struct tfk_import *imp, const float *x, int64_t n, int rank,
		float *y)
{
	const char *feed = imp->feeds[0].node, *fetch = imp->fetches[0].key;
	const struct tfk_tensor *out;
	struct tfk_tensor in;
	struct tfk_exec *e;
	struct tfk_err err;
	int64_t shape[2] = { n, 1 };
	int rc;

	rc = tfk_tensor_init_view(&in, TFK_DT_FLOAT, rank, shape, (void *)x,
				  n * sizeof(float), TFK_OWN_BORROWED, &err);
	if (!rc)
		rc = tfk_exec_new(&e, imp->g, &feed, 1, &fetch, 1, NULL, &err);
	if (!rc) {
		rc = tfk_exec_run(e, &in, 0, &out, &err);
		if (!rc)
			memcpy(y, out->data, n * sizeof(float));
		tfk_exec_free(e);
	}
	if (rc)
		tap_diag("run: %s", err.msg);
	return rc;
}

static void tf1(void)
{
	struct tfk_savedmodel *sm;
	struct tfk_import *imp;
	struct tfk_err err;
	struct tfk_port p;
	float x[2] = { 2, 4 }, y[2] = { 0, 0 };
	int rc;

	sm = load_default(TF1, "tf1", &imp);
	if (!sm)
		return;
	is_int(imp->n_feeds, 1, "one feed");
	is_str(imp->feeds[0].node, "x", "the fed Identity x:0 became "
	       "Placeholder x");
	ok(imp->feeds[0].dtype == TFK_DT_FLOAT && imp->feeds[0].rank == 2 &&
	   imp->feeds[0].shape[0] == -1 && imp->feeds[0].shape[1] == 1,
	   "feed float32 [-1, 1] from the TensorInfo");
	is_int(imp->n_variables, 2, "only a and b are read (pruned)");
	ok(tfk_graph_var(imp->g, "a") && *(float *)tfk_graph_var(imp->g,
							     "a")->data == 0.5f,
	   "a = 0.5 from the Snappy-compressed bundle");
	ok(tfk_graph_var(imp->g, "b") && *(float *)tfk_graph_var(imp->g,
							     "b")->data == 2.0f,
	   "b = 2");
	ok(tfk_graph_find(imp->g, "tf_example", &p, &err) &&
	   tfk_graph_find(imp->g, "save/RestoreV2", &p, &err) &&
	   tfk_graph_find(imp->g, "c", &p, &err),
	   "ParseExample input, saver and c are pruned away");
	ok(!run1(imp, x, 2, 2, y) && y[0] == 3.0f && y[1] == 4.0f,
	   "y = 0.5 x + 2: [[3], [4]]");
	tfk_import_free(imp);

	rc = tfk_import_signature(&imp, &sm->meta_graphs[0],
				  sig_of(sm, "regress_x_to_y"),
				  sm->variables_prefix, &err);
	ok(!rc && tfk_graph_find(imp->g, "ParseExample/ParseExample/dense_0",
				 &p, &err) == 0,
	   "ParseExample lowered to _ParseExampleDense per dense key");
	ok(!rc && tfk_graph_node(imp->g, p.node) &&
	   !strcmp(tfk_graph_node(imp->g, p.node)->op->name,
		   "_ParseExampleDense"), "op _ParseExampleDense");
	tfk_import_free(imp);

	/* break the restore path: keys then come from the node names */
	{
		const Tensorflow__GraphDef *gd = sm->meta_graphs[0].graph_def;
		size_t i;

		for (i = 0; i < gd->n_node; i++)
			if (!strcmp(gd->node[i]->op, "RestoreV2"))
				strcpy(gd->node[i]->op, "RestoreXX");
	}
	rc = tfk_import_signature(&imp, &sm->meta_graphs[0],
				  sig_of(sm, "regress_x2_to_y3"),
				  sm->variables_prefix, &err);
	ok(!rc && imp->n_variables == 2 &&
	   *(float *)tfk_graph_var(imp->g, "c2")->data == 3.0f,
	   "without a restore path, variables are found by name");
	tfk_import_free(imp);

	rc = tfk_import_signature(&imp, &sm->meta_graphs[0],
				  sig_of(sm, "serving_default"),
				  "/nonexistent/variables", &err);
	is_int(rc, TFK_EIO, "missing bundle");
	ok(imp == NULL && strstr(err.msg, "variable 'a'") &&
	   strstr(err.msg, "/nonexistent/variables.index"), "%s", err.msg);
	{
		const Tensorflow__GraphDef *gd = sm->meta_graphs[0].graph_def;
		size_t i;

		for (i = 0; i < gd->n_node; i++)
			if (!strcmp(gd->node[i]->name, "Mul"))
				strcpy(gd->node[i]->op, "Mux");
	}
	rc = tfk_import_signature(&imp, &sm->meta_graphs[0],
				  sig_of(sm, "serving_default"),
				  sm->variables_prefix, &err);
	is_int(rc, TFK_EINVAL, "unsupported op");
	ok(strstr(err.msg, "node Mul: op Mux is not supported") != NULL, "%s",
	   err.msg);
	tfk_savedmodel_close(sm);
}

static void tf2(void)
{
	struct tfk_savedmodel *sm;
	struct tfk_import *imp;
	struct tfk_err err;
	struct tfk_port p;
	float x[1] = { 2 }, y[1] = { 0 };
	int rc;

	sm = load_default(TF2, "tf2", &imp);
	if (!sm)
		return;
	is_str(imp->feeds[0].node, "serving_default_x", "PlaceholderWithDefault "
	       "fed");
	is_int(imp->n_variables, 2, "a and b");
	ok(!tfk_graph_find(imp->g, "StatefulPartitionedCall_5/"
			   "StatefulPartitionedCall/Mul", &p, &err),
	   "two levels of calls inlined under the caller's name");
	ok(!run1(imp, x, 1, 1, y) && y[0] == 3.0f, "x = 2 -> 3");
	tfk_import_free(imp);

	/* x not fed: its PlaceholderWithDefault gives [0.0], so y = b */
	rc = tfk_import_signature_fed(&imp, &sm->meta_graphs[0],
				      sig_of(sm, "serving_default"), NULL, 0,
				      sm->variables_prefix, &err);
	ok(!rc && imp->feeds[0].node == NULL, "unfed input: no feed node");
	if (!rc) {
		const char *fetch = "y";
		const struct tfk_tensor *out;
		struct tfk_exec *e;

		ok(!tfk_exec_new(&e, imp->g, NULL, 0, &fetch, 1, NULL, &err) &&
		   !tfk_exec_run(e, NULL, 0, &out, &err) &&
		   out->shape[0] == 1 && *(float *)out->data == 2.0f,
		   "the default [0.0] gives y = [2.0] (%s)", err.msg);
		tfk_exec_free(e);
	}
	tfk_import_free(imp);

	/* a function that calls itself: refused, not a stack overflow */
	{
		const Tensorflow__GraphDef *gd = sm->meta_graphs[0].graph_def;
		Tensorflow__FunctionDef *w = NULL;
		size_t i, j;
		char *saved = NULL;
		Tensorflow__AttrValue *fa = NULL;

		for (i = 0; i < gd->library->n_function; i++)
			if (!strcmp(gd->library->function[i]->signature->name,
				    "__inference_signature_wrapper_predict_245"))
				w = gd->library->function[i];
		for (i = 0; w && i < w->n_node_def; i++)
			for (j = 0; j < w->node_def[i]->n_attr; j++)
				if (!strcmp(w->node_def[i]->attr[j]->key, "f"))
					fa = w->node_def[i]->attr[j]->value;
		ok(fa != NULL, "the wrapper's call");
		if (fa) {
			saved = fa->func->name;
			fa->func->name = w->signature->name;
			rc = tfk_import_signature(&imp, &sm->meta_graphs[0],
						  sig_of(sm, "serving_default"),
						  sm->variables_prefix, &err);
			ok(rc == TFK_EINVAL && strstr(err.msg, "function "
				"__inference_signature_wrapper_predict_245: "
				"calls nested deeper than 64 (recursion?)"),
			   "self-calling function: %.200s", err.msg);
			fa->func->name = saved;
		}
	}

	/* without the restore function: the object graph maps a -> key */
	{
		const Tensorflow__GraphDef *gd = sm->meta_graphs[0].graph_def;
		size_t i;

		for (i = 0; i < gd->library->n_function; i++)
			if (strstr(gd->library->function[i]->signature->name,
				   "traced_restore"))
				gd->library->function[i]->signature->name[0] =
					'X';
	}
	rc = tfk_import_signature(&imp, &sm->meta_graphs[0],
				  sig_of(sm, "regress_x2_to_y3"),
				  sm->variables_prefix, &err);
	ok(!rc && imp->n_variables == 2 &&
	   *(float *)tfk_graph_var(imp->g, "c")->data == 3.0f &&
	   *(float *)tfk_graph_var(imp->g, "a")->data == 0.5f,
	   "keys through _CHECKPOINTABLE_OBJECT_GRAPH (%s)",
	   rc ? err.msg : "ok");
	if (!rc)
		ok(!run1(imp, x, 1, 1, y) && y[0] == 4.0f, "x2 = 2 -> 4");
	tfk_import_free(imp);
	tfk_savedmodel_close(sm);
}

static void supported(void)
{
	ok(tfk_import_op_supported("MatMul"), "MatMul runs");
	ok(tfk_import_op_supported("ParseExampleV2"), "ParseExampleV2 lowered");
	ok(tfk_import_op_supported("StatefulPartitionedCall"), "calls inlined");
	ok(tfk_import_op_supported("Add"), "Add (tfcompat)");
	ok(!tfk_import_op_supported("SaveV2"), "SaveV2 does not");
	ok(!tfk_import_op_supported("_ParseExampleDense"), "internal ops are "
	   "not for GraphDefs");
}

static void alloc_failures(void)
{
	struct tfk_savedmodel *sm = load(TF2);
	struct tfk_import *imp;
	struct tfk_err err;
	long k;
	int rc, bad = 0, done = 0;

	if (!sm) {
		ok(0, "load");
		return;
	}
	for (k = 0; k < 2000 && !done; k += 3) {
		tfk_alloc_fail_after(k);
		rc = tfk_import_signature(&imp, &sm->meta_graphs[0],
					  sig_of(sm, "regress_x_to_y"),
					  sm->variables_prefix, &err);
		tfk_alloc_fail_after(-1);
		if (rc && rc != TFK_ENOMEM)
			bad++, tap_diag("%ld: %s", k, err.msg);
		if (!rc)
			done = 1;
		tfk_import_free(imp);
	}
	ok(done, "the import succeeds once allocations do");
	is_int(bad, 0, "failed allocations: TFK_ENOMEM only");
	tfk_savedmodel_close(sm);
}

/*
 * Hostile edits of the TF2 fixture in memory: each function input
 * "node:arg:idx" in turn gets a negative, huge or malformed index
 * (every one the signature reaches must be refused by name, none may
 * crash), and TFK_MAX_IMPORT_NODES bounds the inlining.
 */
static void hostile(void)
{
	static const char *const bad[] = { "-100000000", "1000001",
					   "99999999999999999999", "1x", "" };
	struct tfk_savedmodel *sm = load(TF2);
	const Tensorflow__GraphDef *gd;
	struct tfk_import *imp;
	struct tfk_err err;
	size_t f, i, j, b;
	int refused = 0, other = 0, rc;
	char want[512];

	if (!sm) {
		ok(0, "load " TF2);
		return;
	}
	gd = sm->meta_graphs[0].graph_def;
	for (f = 0; gd->library && f < gd->library->n_function; f++) {
		Tensorflow__FunctionDef *fn = gd->library->function[f];

		for (i = 0; i < fn->n_node_def; i++)
			for (j = 0; j < fn->node_def[i]->n_input; j++) {
				char *in = fn->node_def[i]->input[j], *c;
				char buf[256];

				c = strchr(in, ':');
				c = c ? strchr(c + 1, ':') : NULL;
				if (!c || strlen(in) > 200)
					continue;
				for (b = 0; b < sizeof(bad) / sizeof(bad[0]);
				     b++) {
					snprintf(buf, sizeof(buf), "%.*s:%s",
						 (int)(c - in), in, bad[b]);
					fn->node_def[i]->input[j] = buf;
					rc = tfk_import_signature(&imp,
						&sm->meta_graphs[0],
						sig_of(sm, "serving_default"),
						sm->variables_prefix, &err);
					fn->node_def[i]->input[j] = in;
					tfk_import_free(imp);
					if (!rc)
						continue;
					snprintf(want, sizeof(want), "function "
						 "%s: input '%s': output index "
						 "not in 0..1000000",
						 fn->signature->name, buf);
					if (strstr(err.msg, want))
						refused++;
					else
						other++, tap_diag("%s", err.msg);
				}
			}
	}
	ok(refused >= 5 && !other, "bad indices in reached functions are "
	   "refused by name (%d refused, %d other errors)", refused, other);

	setenv("TFK_MAX_IMPORT_NODES", "1", 1);
	rc = tfk_import_signature(&imp, &sm->meta_graphs[0],
				  sig_of(sm, "serving_default"),
				  sm->variables_prefix, &err);
	ok(rc == TFK_EINVAL && imp == NULL && strstr(err.msg, ": inlining "
	   "function ") && strstr(err.msg, " would pass 1 inlined nodes "
	   "(TFK_MAX_IMPORT_NODES; calls that fan out?)"),
	   "TFK_MAX_IMPORT_NODES=1: %s", err.msg);
	setenv("TFK_MAX_IMPORT_NODES", "1k", 1);
	rc = tfk_import_signature(&imp, &sm->meta_graphs[0],
				  sig_of(sm, "serving_default"),
				  sm->variables_prefix, &err);
	is_int(rc, 0, "TFK_MAX_IMPORT_NODES=1k: the fixture fits");
	tfk_import_free(imp);
	unsetenv("TFK_MAX_IMPORT_NODES");
	tfk_savedmodel_close(sm);
}

int main(void)
{
	tf1();
	tf2();
	supported();
	alloc_failures();
	hostile();
	return tap_done();
}
