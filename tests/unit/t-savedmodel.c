/*
 * t-savedmodel.c - loading DIR/saved_model.pb (lib/model/savedmodel).
 *
 * Oracles: the TensorFlow-written SavedModels in $TFK_FIXTURES (tags,
 * signatures, tensor names, dtypes and shapes as the fixture README
 * gives them; node and function counts and op sets as
 * tests/py/savedmodel_show.py, an independent python3-protobuf decoder,
 * reads them), and tests/py/savedmodel_show.py's synthetic model (absent
 * shape, scalar, unknown rank, a _REF dtype, duplicate-free sorted keys,
 * functions reached by call and by name). Then the damage a reader must
 * refuse without crashing: every truncation of a real file, byte
 * flips, a length past the end, and failed allocations at every point
 * of a load (each must give TFK_ENOMEM and leak nothing: the sanitizer
 * build checks leaks).
 */
#include "format/savedmodel.h"
#include "util/alloc.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *TF1 = "savedmodel/half_plus_two_cpu_tf1/00000123";
static const char *TF2 = "savedmodel/half_plus_two_tf2_cpu/00000123";
static const char *MAT = "savedmodel/matrix_half_plus_two/1";
static const char *RUST = "savedmodel/rust_regression_tf1";

static void check_ti(const struct tfk_tensor_info *ti, const char *key,
		     const char *name, int dtype, int unknown_rank, int rank,
		     const int64_t *dims, const char *what)
{
	int i, same = 1;

	is_str(ti->key, key, "%s: key", what);
	is_str(ti->name, name, "%s: name", what);
	is_int(ti->dtype, dtype, "%s: dtype", what);
	is_int(ti->unknown_rank, unknown_rank, "%s: unknown_rank", what);
	is_int(ti->rank, rank, "%s: rank", what);
	for (i = 0; i < rank && i < ti->rank; i++)
		same &= ti->dims[i] == dims[i];
	ok(same, "%s: dims", what);
}

static void test_tf1(void)
{
	static const int64_t m1_1[] = { -1, 1 };
	static const char *const keys[] = { "classify_x_to_y",
		"regress_x2_to_y3", "regress_x_to_y", "regress_x_to_y2",
		"serving_default" };
	struct tfk_savedmodel *sm;
	struct tfk_err err;
	const struct tfk_meta_graph *mg;
	const struct tfk_signature *s;
	int i, rc = tfk_savedmodel_open(&sm, tap_fixture(TF1), &err);

	is_int(rc, 0, "tf1: opens (%s)", rc ? err.msg : "");
	if (rc)
		return;
	is_int(sm->schema_version, 1, "tf1: schema version 1");
	is_int(sm->n_meta_graphs, 1, "tf1: one MetaGraphDef");
	ok(sm->has_variables, "tf1: variables/variables.index found");
	ok(strstr(sm->variables_prefix, "00000123/variables/variables") &&
	   !strcmp(strstr(sm->variables_prefix, "00000123/"),
		   "00000123/variables/variables"),
	   "tf1: variables prefix %s", sm->variables_prefix);
	mg = &sm->meta_graphs[0];
	is_int(mg->n_tags, 1, "tf1: one tag");
	is_str(mg->tags[0], "serve", "tf1: tag serve");
	is_str(mg->tensorflow_version, "1.14.0", "tf1: written by TF 1.14");
	is_int(mg->graph_def->n_node, 74, "tf1: 74 nodes");
	ok(mg->saver_def && !strcmp(mg->saver_def->restore_op_name,
				    "save/restore_all"),
	   "tf1: SaverDef restore op save/restore_all");
	ok(!mg->object_graph, "tf1: no object graph");
	is_int(mg->n_signatures, 5, "tf1: 5 signatures");
	for (i = 0; i < 5 && i < mg->n_signatures; i++)
		is_str(mg->signatures[i].key, keys[i], "tf1: signature %d "
		       "sorted", i);
	s = tfk_savedmodel_signature(mg, "serving_default", &err);
	ok(s != NULL, "tf1: serving_default found");
	if (!s)
		goto out;
	is_str(s->method_name, "tensorflow/serving/predict", "tf1: predict");
	is_int(s->n_inputs, 1, "tf1: one input");
	is_int(s->n_outputs, 1, "tf1: one output");
	check_ti(&s->inputs[0], "x", "x:0", 1, 0, 2, m1_1, "tf1 x");
	check_ti(&s->outputs[0], "y", "y:0", 1, 0, 2, m1_1, "tf1 y");
	ok(s->inputs[0].has_shape, "tf1 x: shape present");
	s = tfk_savedmodel_signature(mg, "classify_x_to_y", &err);
	ok(s && s->n_inputs == 1 && s->n_outputs == 1, "tf1: classify");
	if (s) {
		check_ti(&s->inputs[0], "inputs", "tf_example:0", 7, 1, 0,
			 NULL, "tf1 classify input");
		is_str(s->outputs[0].key, "scores", "tf1 classify: scores");
		is_str(s->method_name, "tensorflow/serving/classify",
		       "tf1 classify: method");
	}
	s = tfk_savedmodel_signature(mg, "nope", &err);
	ok(!s, "tf1: unknown signature is NULL");
	is_int(err.code, TFK_ENOTFOUND, "tf1: ... TFK_ENOTFOUND");
	is_str(err.msg, "could not find signature \"nope\"; signatures are: "
	       "classify_x_to_y, regress_x2_to_y3, regress_x_to_y, "
	       "regress_x_to_y2, serving_default", "tf1: ... lists them");
out:
	tfk_savedmodel_close(sm);
}

static void test_tf2(void)
{
	static const int64_t d1[] = { 1 };
	struct tfk_savedmodel *sm;
	struct tfk_err err;
	const struct tfk_meta_graph *mg;
	const struct tfk_signature *s;
	const char **ops;
	int i, n, found = 0, rc = tfk_savedmodel_open(&sm, tap_fixture(TF2),
						      &err);

	is_int(rc, 0, "tf2: opens (%s)", rc ? err.msg : "");
	if (rc)
		return;
	mg = &sm->meta_graphs[0];
	is_str(mg->tensorflow_version, "2.14.0", "tf2: written by TF 2.14");
	is_int(mg->graph_def->n_node, 29, "tf2: 29 nodes");
	ok(mg->graph_def->library && mg->graph_def->library->n_function == 14,
	   "tf2: 14 library functions");
	ok(mg->object_graph && mg->object_graph->n_nodes > 0,
	   "tf2: object graph present");
	is_int(mg->n_signatures, 7, "tf2: 7 signatures (init op included)");
	is_str(mg->signatures[0].key, "__saved_model_init_op",
	       "tf2: __saved_model_init_op sorts first");
	s = tfk_savedmodel_signature(mg, "serving_default", &err);
	ok(s && s->n_inputs == 1, "tf2: serving_default");
	if (s)
		check_ti(&s->inputs[0], "x", "serving_default_x:0", 1, 0, 1,
			 d1, "tf2 x");
	n = tfk_savedmodel_ops(mg, &ops, &err);
	is_int(n, 23, "tf2: 23 op types through the function library");
	for (i = 0; i < n; i++)
		found += !strcmp(ops[i], "ReadVariableOp") ||
			 !strcmp(ops[i], "ParseExampleV2") ||
			 !strcmp(ops[i], "StatefulPartitionedCall");
	is_int(found, 3, "tf2: ReadVariableOp, ParseExampleV2 (in functions) "
	       "and StatefulPartitionedCall listed");
	for (i = 0; i < n; i++)
		if (!strncmp(ops[i], "__inference", 11))
			break;
	is_int(i, n, "tf2: function names are not ops");
	tfk_free(ops);
	tfk_savedmodel_close(sm);
}

static void test_mat_rust(void)
{
	static const char *const want[] = { "Add", "Const", "Mul", "NoOp",
		"Placeholder" };
	static const int64_t d3[] = { -1, 3, 3 };
	struct tfk_savedmodel *sm;
	struct tfk_err err;
	const char **ops;
	int i, n, rc = tfk_savedmodel_open(&sm, tap_fixture(MAT), &err);

	is_int(rc, 0, "matrix: opens (%s)", rc ? err.msg : "");
	if (!rc) {
		ok(!sm->has_variables, "matrix: no variables/");
		ok(!sm->meta_graphs[0].saver_def, "matrix: no SaverDef");
		check_ti(&sm->meta_graphs[0].signatures[0].inputs[0], "x",
			 "x:0", 1, 0, 3, d3, "matrix x");
		n = tfk_savedmodel_ops(&sm->meta_graphs[0], &ops, &err);
		is_int(n, 5, "matrix: 5 op types");
		for (i = 0; i < n && i < 5; i++)
			is_str(ops[i], want[i], "matrix: op %d", i);
		tfk_free(ops);
		tfk_savedmodel_close(sm);
	}

	rc = tfk_savedmodel_open(&sm, tap_fixture(RUST), &err);
	is_int(rc, 0, "rust: opens (%s)", rc ? err.msg : "");
	if (rc)
		return;
	is_int(sm->meta_graphs[0].n_tags, 2, "rust: two tags");
	is_str(sm->meta_graphs[0].tags[0], "train", "rust: file order train");
	is_str(sm->meta_graphs[0].tags[1], "serve", "rust: then serve");
	is_int(tfk_savedmodel_find_tags(sm, "serve,train", &err), 0,
	       "rust: serve,train matches {train, serve}");
	is_int(tfk_savedmodel_find_tags(sm, ",train,,serve,", &err), 0,
	       "rust: empty items ignored");
	is_int(tfk_savedmodel_find_tags(sm, "train,serve,train", &err), 0,
	       "rust: a repeated tag is the same set");
	is_int(tfk_savedmodel_find_tags(sm, "serve", &err), TFK_ENOTFOUND,
	       "rust: serve alone is another set");
	is_str(err.msg, "MetaGraphDef associated with tag-set serve could "
	       "not be found in the SavedModel; tag-sets are: 'train, serve'",
	       "rust: ... listing the tag-sets");
	is_int(tfk_savedmodel_find_tags(sm, "train,serve,gpu", &err),
	       TFK_ENOTFOUND, "rust: a superset does not match");
	is_int(sm->meta_graphs[0].signatures[0].n_inputs, 2,
	       "rust: regress takes x and y");
	ok(sm->meta_graphs[0].signatures[0].inputs[0].unknown_rank,
	   "rust: x of unknown rank");
	tfk_savedmodel_close(sm);
}

static void test_synth(void)
{
	static const int64_t z[] = { -1, 2, 3 };
	char cmd[4096];
	const char *d = tap_tmp("syn");
	struct tfk_savedmodel *sm;
	struct tfk_err err;
	const struct tfk_signature *s;
	const char **ops;
	int st, k, n;

	snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s' synth", tap_python(),
		 tap_source("tests/py/savedmodel_show.py"), d);
	st = system(cmd);
	ok(st == 0, "synthetic model written by python3-protobuf");
	if (st)
		return;
	if (tfk_savedmodel_open(&sm, d, &err)) {
		ok(0, "synthetic: opens (%s)", err.msg);
		return;
	}
	is_int(sm->n_meta_graphs, 3, "synthetic: 3 MetaGraphDefs");
	k = tfk_savedmodel_find_tags(sm, "gpu,serve", &err);
	is_int(k, 0, "synthetic: {serve, gpu} is the first");
	is_int(tfk_savedmodel_find_tags(sm, "serve", &err), 2,
	       "synthetic: {serve} the third");
	is_int(tfk_savedmodel_find_tags(sm, "it's", &err), 1,
	       "synthetic: a quote in a tag");
	s = tfk_savedmodel_signature(&sm->meta_graphs[0], "predict", &err);
	ok(s && s->n_inputs == 3 && s->n_outputs == 1, "synthetic: predict");
	if (s) {
		/* Sorted by bytes: "C" < "a" < "b". */
		check_ti(&s->inputs[0], "C", "c:0", 7, 1, 0, NULL, "C");
		check_ti(&s->inputs[1], "a", "a:0", 101, 0, 0, NULL, "a");
		ok(!s->inputs[1].has_shape, "a: no shape at all");
		check_ti(&s->inputs[2], "b", "b:0", 9, 0, 0, NULL, "b");
		ok(s->inputs[2].has_shape, "b: a scalar shape");
		check_ti(&s->outputs[0], "z", "mm:0", 19, 0, 3, z, "z");
	}
	s = tfk_savedmodel_signature(&sm->meta_graphs[0], "empty", &err);
	ok(s && !s->n_inputs && !s->n_outputs && !strcmp(s->method_name, ""),
	   "synthetic: an empty signature");
	n = tfk_savedmodel_ops(&sm->meta_graphs[0], &ops, &err);
	is_int(n, 8, "synthetic: 8 op types");
	if (n == 8) {
		is_str(ops[3], "Relu", "synthetic: Relu from fn_a (called)");
		is_str(ops[4], "Softmax", "synthetic: Softmax from fn_b "
		       "(named as an op)");
		is_str(ops[6], "Tanh", "synthetic: Tanh from fn_c (called "
		       "by fn_a)");
	}
	tfk_free(ops);
	n = tfk_savedmodel_ops(&sm->meta_graphs[1], &ops, &err);
	is_int(n, 0, "synthetic: a meta graph without a graph has no ops");
	tfk_free(ops);
	is_int(sm->meta_graphs[1].graph_def->n_node, 0,
	       "synthetic: ... and an empty graph_def, not NULL");
	tfk_savedmodel_close(sm);
}

static void test_names(void)
{
	is_str(tfk_savedmodel_dtype_name(1), "DT_FLOAT", "dtype 1");
	is_str(tfk_savedmodel_dtype_name(7), "DT_STRING", "dtype 7");
	is_str(tfk_savedmodel_dtype_name(101), "DT_FLOAT_REF", "dtype 101");
	is_str(tfk_savedmodel_dtype_name(0), "DT_INVALID", "dtype 0");
	ok(tfk_savedmodel_dtype_name(99) == NULL, "dtype 99: none");
	ok(tfk_savedmodel_dtype_name(-1) == NULL, "dtype -1: none");
}

static void test_errors(void)
{
	struct tfk_savedmodel *sm = (void *)1;
	struct tfk_err err;
	const char *f = tap_fixture(MAT);
	char path[4096];
	unsigned char *d, *m;
	size_t n, cut;
	int rc, bad = 0, fails = 0, crashes = 0, i, k;
	unsigned seed = 1;

	rc = tfk_savedmodel_open(&sm, tap_tmp("nothing-here"), &err);
	is_int(rc, TFK_ENOTFOUND, "missing dir: TFK_ENOTFOUND");
	ok(sm == NULL, "missing dir: *sm NULL");
	ok(strstr(err.msg, "nothing-here: no such directory") != NULL,
	   "missing dir: named (%s)", err.msg);
	rc = tfk_savedmodel_open(&sm, tap_tmpdir(), &err);
	is_int(rc, TFK_ENOTFOUND, "no saved_model.pb: TFK_ENOTFOUND");
	ok(strstr(err.msg, "SavedModel file does not exist at: ") != NULL,
	   "no saved_model.pb: TF's words (%s)", err.msg);

	snprintf(path, sizeof(path), "%s/saved_model.pb", f);
	d = tap_read_file(path, &n);
	ok(d && n == 856, "matrix saved_model.pb read (856 bytes)");
	if (!d)
		return;
	/* Every cut inside the MetaGraphDef (bytes 5..855) must fail;
	 * cuts at 0 and 2 are field boundaries: valid, fewer fields. */
	for (cut = 0; cut < n; cut++) {
		rc = tfk_savedmodel_parse(&sm, d, cut, "cut", NULL, &err);
		if (rc == 0) {
			if (cut >= 5)
				bad++;
			tfk_savedmodel_close(sm);
		} else if (rc != TFK_ECORRUPT || sm) {
			bad++;
		}
	}
	is_int(bad, 0, "every truncation inside the MetaGraphDef is "
	       "TFK_ECORRUPT, the two at field boundaries load");
	rc = tfk_savedmodel_parse(&sm, d, 2, "cut", NULL, &err);
	ok(rc == 0 && sm->n_meta_graphs == 0,
	   "cut after the schema version: a SavedModel with no graphs");
	if (!rc) {
		is_int(tfk_savedmodel_find_tags(sm, "serve", &err),
		       TFK_ENOTFOUND, "... where no tag-set is found");
		ok(strstr(err.msg, "tag-sets are: (none)") != NULL,
		   "... and says so (%s)", err.msg);
		tfk_savedmodel_close(sm);
	}
	rc = tfk_savedmodel_parse(&sm, d, 800, "m.pb", NULL, &err);
	is_str(err.msg, "m.pb: at byte 2: SavedModel.meta_graphs: length 851 "
	       "runs past the end (795 bytes left)",
	       "truncation message: file, byte, field, lengths");

	/* Byte flips: loads or refuses, never crashes (ASan watches). */
	m = malloc(n);
	for (i = 0; i < 3000 && m; i++) {
		int nflip = 1 + (int)(rand_r(&seed) % 4);

		memcpy(m, d, n);
		for (k = 0; k < nflip; k++)
			m[rand_r(&seed) % n] ^=
				(unsigned char)(1 + rand_r(&seed) % 255);
		rc = tfk_savedmodel_parse(&sm, m, n, "flip", NULL, &err);
		if (rc == 0) {
			const char **ops;
			int j;

			/* Walk everything a consumer would. */
			for (j = 0; j < sm->n_meta_graphs; j++) {
				int q = tfk_savedmodel_ops(&sm->meta_graphs[j],
							   &ops, &err);
				if (q >= 0)
					tfk_free(ops);
			}
			tfk_savedmodel_close(sm);
		} else {
			fails++;
			crashes += rc != TFK_ECORRUPT;
		}
	}
	ok(fails > 100, "flips: many refused (%d of 3000)", fails);
	is_int(crashes, 0, "flips: every refusal is TFK_ECORRUPT");
	free(m);

	/* Failed allocations at every point of a load of the small model,
	 * and at every 53rd point of the TF2 one (its function library
	 * makes some 6000: all of them would take seconds for little). */
	for (k = 0; k < 2; k++) {
		int step = k ? 53 : 1, pts = 0;

		snprintf(path, sizeof(path), "%s", tap_fixture(k ? TF2 : MAT));
		bad = 0;
		for (i = 0; i < 100000; i += step, pts++) {
			tfk_alloc_fail_after(i);
			rc = tfk_savedmodel_open(&sm, path, &err);
			tfk_alloc_fail_after(-1);
			if (rc == 0) {
				tfk_savedmodel_close(sm);
				break;
			}
			if (rc != TFK_ENOMEM || sm)
				bad++;
		}
		ok(pts > 10 && rc == 0, "%s: allocation failures at %d points, "
		   "then a load", k ? "tf2" : "matrix", pts);
		is_int(bad, 0, "%s: each failure TFK_ENOMEM, *sm NULL",
		       k ? "tf2" : "matrix");
	}
	free(d);
}

int main(void)
{
	test_tf1();
	test_tf2();
	test_mat_rust();
	test_synth();
	test_names();
	test_errors();
	return tap_done();
}
