/*
 * t-smwrite: the SavedModel writer (lib/model/smwrite.c).
 *
 * Oracles, none of them our writer's code:
 *  - tests/py/savedmodel_check.py decodes saved_model.pb with
 *    python3-protobuf classes built from TensorFlow's field numbers and
 *    checks every node against TensorFlow's op definitions written out
 *    there (attr names and kinds, required attrs, input counts and
 *    dtypes along every edge, the restore path); its report is compared
 *    here line by line with what TensorFlow would have for the model;
 *  - tests/py/bundle_check.py reads the variables bundle with its own
 *    LevelDB table codec and CRC-32C: each tensor's bytes must equal the
 *    model's weights;
 *  - savedmodel_check.py run interprets the exported GraphDef with
 *    PyTorch in float64 following TensorFlow's op semantics, reading the
 *    weights with bundle_check.py: the exported model run by our
 *    importer must agree within 1e-5 (relative to max(1, |y|));
 *  - the model loaded back through the SavedModel reader and importer
 *    (lib/model/savedmodel, import: written by other engineers from
 *    TensorFlow's loader semantics) must give the in-memory model's
 *    inference outputs bit for bit.
 */
#include "graph/exec.h"
#include "io/npy.h"
#include "model/import.h"
#include "model/smwrite.h"
#include "format/savedmodel.h"
#include "nn/model.h"
#include "util/alloc.h"
#include "tap.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static struct tfk_err err;

/* Run tests/py/SCRIPT ARGS; stdout into a malloc'd string (*out), exit
 * status returned (-1: could not run). */
static int oracle(const char *script, const char *args, char **out)
{
	char cmd[4096], rel[128];
	size_t n = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	FILE *f;
	int st;

	*out = NULL;
	if (!buf)
		return -1;
	snprintf(rel, sizeof(rel), "tests/py/%s", script);
	snprintf(cmd, sizeof(cmd), "'%s' '%s' %s", tap_python(), tap_source(rel),
		 args);
	f = popen(cmd, "r");
	if (!f) {
		free(buf);
		return -1;
	}
	for (;;) {
		size_t r;

		if (n + 1 == cap) {
			char *b = realloc(buf, cap * 2);

			if (!b)
				break;
			buf = b;
			cap *= 2;
		}
		r = fread(buf + n, 1, cap - 1 - n, f);
		if (!r)
			break;
		n += r;
	}
	buf[n] = '\0';
	st = pclose(f);
	*out = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static struct tfk_model *load_model(const char *rel, uint64_t seed)
{
	json_error_t je;
	json_t *j = json_load_file(tap_source(rel), 0, &je), *mo;
	struct tfk_model *m = NULL;

	if (!j) {
		tap_diag("%s: %s", rel, je.text);
		return NULL;
	}
	mo = json_object_get(j, "model");
	if (tfk_keras_build(mo ? mo : j, "model", seed, &m, &err))
		tap_diag("%s: %s", rel, err.msg);
	json_decref(j);
	return m;
}

/* Lines of text that start with prefix, joined (for focused compares). */
static char *lines_with(const char *text, const char *prefix)
{
	size_t n = strlen(text) + 1, k = 0, pl = strlen(prefix);
	char *o = malloc(n);
	const char *p = text;

	if (!o)
		return NULL;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p + 1) : strlen(p);

		if (!strncmp(p, prefix, pl)) {
			memcpy(o + k, p, len);
			k += len;
		}
		p += len;
	}
	o[k] = '\0';
	return o;
}

static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* Deterministic inputs: floats in [-1, 1), int32 token ids in [0, 10). */
static void fill(struct tfk_tensor *t, uint32_t seed)
{
	int64_t n = tfk_tensor_numel(t);

	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		if (t->dtype == TFK_DT_INT32)
			((int32_t *)t->data)[i] = (int32_t)((seed >> 8) % 10);
		else
			((float *)t->data)[i] = (float)(seed >> 8) /
				(float)(1u << 23) - 1.0f;
	}
}

/*
 * The exported model in dir run through the reader + importer equals m
 * run in memory, bit for bit, on a batch of 3.
 */
static void same_outputs(struct tfk_model *m, const char *dir,
			 const char *what)
{
	struct tfk_savedmodel *sm = NULL;
	const struct tfk_signature *sig;
	struct tfk_import *imp = NULL;
	struct tfk_exec *xa = NULL, *xb = NULL;
	struct tfk_tensor in[4];
	const char *feeds[4], *feeds_b[4], *fetch_a[4], *fetch_b[4];
	char names[4][300];
	const struct tfk_tensor *ya[4], *yb[4];
	int rc, ni = m->n_inputs, no = m->n_outputs, same = 1;

	memset(in, 0, sizeof(in));
	rc = tfk_savedmodel_open(&sm, dir, &err);
	ok(!rc, "%s: saved model opens%s%s", what, rc ? ": " : "",
	   rc ? err.msg : "");
	if (rc)
		return;
	sig = tfk_savedmodel_signature(&sm->meta_graphs[0], "serving_default",
				       &err);
	ok(sig != NULL, "%s: serving_default found", what);
	rc = sig ? tfk_import_signature(&imp, &sm->meta_graphs[0], sig,
					sm->variables_prefix, &err) : -1;
	ok(!rc, "%s: signature imports%s%s", what, rc ? ": " : "",
	   rc && sig ? err.msg : "");
	if (rc)
		goto out;
	is_int(imp->n_variables, m->n_vars, "%s: every variable restored "
	       "from the bundle", what);
	/* Feeds in the model's input order, matched to the signature's
	 * keys (= input names). */
	for (int i = 0; i < ni; i++) {
		const struct tfk_model_input *mi = &m->inputs[i];
		int64_t shape[TFK_MAX_RANK];

		memcpy(shape, mi->shape, sizeof(shape));
		shape[0] = 3;
		if (tfk_tensor_init(&in[i], mi->dtype, mi->rank, shape, &err))
			goto out;
		fill(&in[i], 7u + (uint32_t)i);
		feeds[i] = mi->name;
		feeds_b[i] = NULL;
		for (int k = 0; k < imp->n_feeds; k++)
			if (!strcmp(imp->feeds[k].key, mi->name))
				feeds_b[i] = imp->feeds[k].node;
		ok(feeds_b[i] != NULL, "%s: input %s is a signature input",
		   what, mi->name);
		if (!feeds_b[i])
			goto out;
	}
	for (int j = 0; j < no; j++) {
		struct tfk_port p = m->outputs[j].infer;
		const struct tfk_node *n = tfk_graph_node(m->g, p.node);

		snprintf(names[j], sizeof(names[j]), "%s:%d", n->name, p.index);
		fetch_a[j] = names[j];
		fetch_b[j] = m->outputs[j].name;
	}
	is_int(imp->n_fetches, no, "%s: one signature output per model "
	       "output", what);
	rc = tfk_exec_new(&xa, m->g, feeds, ni, fetch_a, no, NULL, &err);
	if (!rc)
		rc = tfk_exec_new(&xb, imp->g, feeds_b, ni, fetch_b, no, NULL,
				  &err);
	if (!rc)
		rc = tfk_exec_run(xa, in, 0, ya, &err);
	if (!rc)
		rc = tfk_exec_run(xb, in, 0, yb, &err);
	ok(!rc, "%s: both run%s%s", what, rc ? ": " : "", rc ? err.msg : "");
	for (int j = 0; !rc && j < no; j++)
		same &= ya[j]->nbytes == yb[j]->nbytes && ya[j]->nbytes &&
			!memcmp(ya[j]->data, yb[j]->data, ya[j]->nbytes) &&
			tfk_shape_equal(ya[j]->rank, ya[j]->shape,
					yb[j]->rank, yb[j]->shape);
	ok(!rc && same, "%s: exported model's outputs equal the in-memory "
	   "model's bit for bit", what);
out:
	for (int i = 0; i < ni; i++)
		tfk_tensor_release(&in[i]);
	tfk_exec_free(xa);
	tfk_exec_free(xb);
	tfk_import_free(imp);
	tfk_savedmodel_close(sm);
}

/* Each variable's bytes in the bundle (bundle_check.py's reading) equal
 * the graph's. */
static void bundle_bytes(struct tfk_model *m, const char *dir,
			 const char *what)
{
	char args[600], *out = NULL;
	int st, all = 1;

	snprintf(args, sizeof(args), "dump '%s/variables/variables'", dir);
	if (!m->n_vars) {
		snprintf(args, sizeof(args), "%s/variables", dir);
		ok(!exists(args), "%s: no variables/ for a model without "
		   "variables", what);
		return;
	}
	st = oracle("bundle_check.py", args, &out);
	is_int(st, 0, "%s: bundle_check.py reads the variables", what);
	for (int i = 0; out && !st && i < m->n_vars; i++) {
		const char *name;
		struct tfk_tensor *t = tfk_graph_var_at(m->g, m->vars[i].var,
							&name);
		size_t ln = 2 * strlen(name) + 2 * t->nbytes + 64;
		char *want = malloc(ln), *w = want;
		const char *line, *vals;

		for (const char *s = name; *s; s++)
			w += sprintf(w, "%02x", (unsigned char)*s);
		*w++ = ' ';
		*w = '\0';
		line = strstr(out, want);
		w = want;
		for (size_t b = 0; b < t->nbytes; b++)
			w += sprintf(w, "%02x", ((unsigned char *)t->data)[b]);
		vals = line ? strchr(line, '\n') : NULL;
		/* VALUES is the last field of the line */
		if (!line || !vals || (size_t)(vals - line) < strlen(want) ||
		    memcmp(vals - strlen(want), want, strlen(want)) ||
		    !strstr(line, "dtype=1 ") || !strstr(line, "crc=ok")) {
			all = 0;
			tap_diag("%s: variable %s differs in the bundle", what,
				 name);
		}
		free(want);
	}
	if (!m->n_vars)
		return;
	ok(all && !st, "%s: every variable's bytes in the bundle are the "
	   "model's weights (dtype float, crc ok)", what);
	free(out);
}

/*
 * PyTorch's reading of the exported graph (savedmodel_check.py run: its
 * own inputs, written as .npy) against our importer + executor.
 */
/* The exports to give to PyTorch, all in one run of the script at the
 * end (starting Python with torch takes seconds on a busy machine). */
static struct {
	char dir[1000];
	char what[40];
} torch_todo[8];
static int n_torch;

static void torch_later(const char *dir, const char *what)
{
	if (n_torch == 8)
		return;
	snprintf(torch_todo[n_torch].dir, sizeof(torch_todo[0].dir), "%s",
		 dir);
	snprintf(torch_todo[n_torch].what, sizeof(torch_todo[0].what), "%s",
		 what);
	n_torch++;
}

static void torch_compare(const char *dir, const char *what);

static void torch_all(void)
{
	char args[8 * 2100] = "run", *out = NULL;
	size_t k = 3;
	int st;

	for (int i = 0; i < n_torch; i++) {
		char od[4400];

		int n;

		if (snprintf(od, sizeof(od), "%s.torch", torch_todo[i].dir) >=
		    (int)sizeof(od))
			return;
		mkdir(od, 0777);
		n = snprintf(args + k, sizeof(args) - k, " '%s' '%s'",
			     torch_todo[i].dir, od);
		if (n < 0 || (size_t)n >= sizeof(args) - k)
			return;
		k += (size_t)n;
	}
	st = oracle("savedmodel_check.py", args, &out);
	is_int(st, 0, "PyTorch interprets the %d exported graphs", n_torch);
	free(out);
	for (int i = 0; !st && i < n_torch; i++)
		torch_compare(torch_todo[i].dir, torch_todo[i].what);
}

static void torch_compare(const char *dir, const char *what)
{
	char out_dir[4400], path[4500];
	struct tfk_savedmodel *sm = NULL;
	const struct tfk_signature *sig;
	struct tfk_import *imp = NULL;
	struct tfk_exec *x = NULL;
	struct tfk_tensor in[8], want;
	const char *feeds[8], *fetches[8];
	const struct tfk_tensor *got[8];
	int rc, nf = 0, no = 0, close = 1;
	double worst = 0;

	memset(in, 0, sizeof(in));
	memset(&want, 0, sizeof(want));
	if (snprintf(out_dir, sizeof(out_dir), "%s.torch", dir) >=
	    (int)sizeof(out_dir))
		return;
	rc = tfk_savedmodel_open(&sm, dir, &err);
	sig = rc ? NULL : tfk_savedmodel_signature(&sm->meta_graphs[0],
						   "serving_default", &err);
	rc = sig ? tfk_import_signature(&imp, &sm->meta_graphs[0], sig,
					sm->variables_prefix, &err) : -1;
	if (!rc && (imp->n_feeds > 8 || imp->n_fetches > 8))
		rc = -1;
	for (int i = 0; !rc && i < imp->n_feeds; i++) {
		snprintf(path, sizeof(path), "%s/in_%s.npy", out_dir,
			 imp->feeds[i].key);
		rc = tfk_npy_read(path, NULL, &in[i], &err);
		feeds[i] = imp->feeds[i].node;
		nf = i + 1;
	}
	if (!rc) {
		no = imp->n_fetches;
		for (int j = 0; j < no; j++)
			fetches[j] = imp->fetches[j].key;
		rc = tfk_exec_new(&x, imp->g, feeds, nf, fetches, no, NULL,
				  &err);
	}
	if (!rc)
		rc = tfk_exec_run(x, in, 0, got, &err);
	ok(!rc, "%s: our import runs PyTorch's inputs%s%s", what,
	   rc ? ": " : "", rc ? err.msg : "");
	for (int j = 0; !rc && j < no; j++) {
		int64_t n;

		snprintf(path, sizeof(path), "%s/out_%s.npy", out_dir,
			 imp->fetches[j].key);
		if (tfk_npy_read(path, NULL, &want, &err) ||
		    want.dtype != TFK_DT_DOUBLE || got[j]->dtype != TFK_DT_FLOAT ||
		    !tfk_shape_equal(want.rank, want.shape, got[j]->rank,
				     got[j]->shape)) {
			close = 0;
			tap_diag("%s: output %s: shape or dtype differs", what,
				 imp->fetches[j].key);
			tfk_tensor_release(&want);
			continue;
		}
		n = tfk_tensor_numel(&want);
		for (int64_t k = 0; k < n; k++) {
			double w = ((double *)want.data)[k];
			double g = ((float *)got[j]->data)[k];
			double e = (g > w ? g - w : w - g) /
				(w > 1 || w < -1 ? (w < 0 ? -w : w) : 1);

			if (!(e <= 1e-5))
				close = 0;
			if (e > worst)
				worst = e;
		}
		tfk_tensor_release(&want);
	}
	ok(!rc && close, "%s: outputs match PyTorch's within 1e-5 (worst "
	   "%.2g)", what, worst);
	for (int i = 0; i < nf; i++)
		tfk_tensor_release(&in[i]);
	tfk_exec_free(x);
	tfk_import_free(imp);
	tfk_savedmodel_close(sm);
}

static char *check(const char *dir, int *st)
{
	char args[600], *out = NULL;

	snprintf(args, sizeof(args), "check '%s'", dir);
	*st = oracle("savedmodel_check.py", args, &out);
	return out;
}

static void mlp(void)
{
	struct tfk_model *m = load_model("examples/mlp.spec.json", 3);
	const char *dir = tap_tmp("mlp");
	char path[600], *out, *sel;
	size_t n;
	void *spec;
	int st, rc;

	ok(m != NULL, "mlp builds");
	if (!m)
		return;
	rc = tfk_savedmodel_write(dir, m, "{\"spec\": 1}\n", &err);
	ok(!rc, "mlp: exported%s%s", rc ? ": " : "", rc ? err.msg : "");
	out = check(dir, &st);
	is_int(st, 0, "mlp: savedmodel_check.py accepts every node, "
	       "signature and the restore path");
	if (out) {
		sel = lines_with(out, "schema ");
		is_str(sel, "schema 1\n", "mlp: schema version 1");
		free(sel);
		sel = lines_with(out, "tags ");
		is_str(sel, "tags serve\n", "mlp: one meta graph, tagged serve");
		free(sel);
		sel = lines_with(out, "meta ");
		is_str(sel, "meta 2.14.0 unknown producer=1569 "
		       "min_consumer=12\n", "mlp: TF version strings and "
		       "GraphDef versions");
		free(sel);
		sel = lines_with(out, "saver ");
		is_str(sel, "saver saver_filename:0 save/Identity:0 "
		       "save/restore_all max_to_keep=5 sharded=1 version=2\n",
		       "mlp: SaverDef (V2, sharded)");
		free(sel);
		sel = lines_with(out, "var ");
		is_str(sel,
		       "var dense/kernel float [784,128] shared_name=dense/"
		       "kernel key=dense/kernel\n"
		       "var dense/bias float [128] shared_name=dense/bias "
		       "key=dense/bias\n"
		       "var dense_1/kernel float [128,10] shared_name=dense_1/"
		       "kernel key=dense_1/kernel\n"
		       "var dense_1/bias float [10] shared_name=dense_1/bias "
		       "key=dense_1/bias\n",
		       "mlp: VarHandleOps with dtype, shape, shared_name; "
		       "restored by their names");
		free(sel);
		sel = lines_with(out, "sig ");
		is_str(sel, "sig __saved_model_init_op -\n"
		       "sig serving_default tensorflow/serving/predict\n",
		       "mlp: signatures and method names");
		free(sel);
		sel = lines_with(out, "in ");
		is_str(sel, "in serving_default input_1 input_1:0 float "
		       "[-1,28,28]\n", "mlp: signature input (-1 batch)");
		free(sel);
		sel = lines_with(out, "out ");
		is_str(sel, "out __saved_model_init_op __saved_model_init_op "
		       "NoOp invalid ?\n"
		       "out serving_default dense_1 Identity:0 float [-1,10]\n",
		       "mlp: signature outputs; init op is a NoOp");
		free(sel);
		ok(strstr(out, "node dense/MatMul MatMul\n") &&
		   strstr(out, "node dense/BiasAdd BiasAdd\n") &&
		   strstr(out, "node dense/Relu Relu\n") &&
		   strstr(out, "node dense_1/Softmax Softmax\n") &&
		   strstr(out, "node flatten/Reshape Reshape\n") &&
		   strstr(out, "node dense/kernel/Read/ReadVariableOp "
			  "ReadVariableOp\n") &&
		   strstr(out, "node save/RestoreV2 RestoreV2\n") &&
		   strstr(out, "node save/SaveV2 SaveV2\n") &&
		   strstr(out, "node save/restore_all NoOp\n"),
		   "mlp: the inference ops and save/restore nodes under TF's "
		   "names");
		ok(!strstr(out, "train/") && !strstr(out, "Dropout"),
		   "mlp: no training-branch node exported");
	}
	free(out);
	snprintf(path, sizeof(path), "%s/assets.extra/tfkit_spec.json", dir);
	spec = tap_read_file(path, &n);
	is_str(spec, "{\"spec\": 1}\n", "mlp: assets.extra/tfkit_spec.json "
	       "holds the spec");
	free(spec);
	bundle_bytes(m, dir, "mlp");
	same_outputs(m, dir, "mlp");
	torch_later(dir, "mlp");

	/* Same model, same bytes. */
	{
		void *a = NULL, *b = NULL;
		size_t na = 0, nb = 0;

		snprintf(path, sizeof(path), "%s/saved_model.pb", dir);
		a = tap_read_file(path, &na);
		rc = tfk_savedmodel_pack(m, &b, &nb, &err);
		ok(!rc && a && na == nb && !memcmp(a, b, na),
		   "mlp: pack gives the bytes written, every time");
		free(a);
		tfk_free(b);
	}
	/* Export again over the existing directory, without a spec: the
	 * files are replaced, the spec file left as it was. */
	rc = tfk_savedmodel_write(dir, m, NULL, &err);
	ok(!rc && exists(path), "mlp: export over an existing export");
	tfk_model_free(m);
}

static void cnn(void)
{
	struct tfk_model *m = load_model("examples/cnn.spec.json", 5);
	const char *dir = tap_tmp("cnn/nested/dir");
	char *out, *sel;
	int st, rc;

	ok(m != NULL, "cnn builds");
	if (!m)
		return;
	rc = tfk_savedmodel_write(dir, m, NULL, &err);
	ok(!rc, "cnn: exported into a new nested directory%s%s",
	   rc ? ": " : "", rc ? err.msg : "");
	{
		char p[600];

		snprintf(p, sizeof(p), "%s/assets.extra", dir);
		ok(!exists(p), "cnn: no assets.extra without a spec");
	}
	out = check(dir, &st);
	is_int(st, 0, "cnn: savedmodel_check.py accepts it");
	if (out) {
		ok(strstr(out, "node conv2d/Conv2D Conv2D\n") &&
		   strstr(out, "node max_pooling2d/MaxPool MaxPool\n") &&
		   strstr(out, "node conv2d_1/Relu Relu\n"),
		   "cnn: Conv2D, MaxPool, Relu nodes");
		sel = lines_with(out, "in ");
		is_str(sel, "in serving_default input_1 input_1:0 float "
		       "[-1,28,28,1]\n", "cnn: signature input");
		free(sel);
		sel = lines_with(out, "var conv2d/kernel ");
		is_str(sel, "var conv2d/kernel float [5,5,1,32] shared_name="
		       "conv2d/kernel key=conv2d/kernel\n",
		       "cnn: conv kernel variable HWIO");
		free(sel);
	}
	free(out);
	bundle_bytes(m, dir, "cnn");
	same_outputs(m, dir, "cnn");
	torch_later(dir, "cnn");
	tfk_model_free(m);
}

/* A Functional model: two inputs, a shared layer, two outputs. */
static void functional(void)
{
	struct tfk_model *m = load_model("examples/models/shared_residual.json",
					 9);
	const char *dir = tap_tmp("func");
	char *out, *sel;
	int st, rc;

	ok(m != NULL, "functional builds");
	if (!m)
		return;
	rc = tfk_savedmodel_write(dir, m, NULL, &err);
	ok(!rc, "functional: exported%s%s", rc ? ": " : "", rc ? err.msg : "");
	out = check(dir, &st);
	is_int(st, 0, "functional: savedmodel_check.py accepts it");
	if (out) {
		sel = lines_with(out, "in serving_default");
		ok(sel && strstr(sel, "in serving_default in_a in_a:0 float") &&
		   strstr(sel, "in serving_default in_b in_b:0 float"),
		   "functional: both inputs in the signature");
		free(sel);
		sel = lines_with(out, "out serving_default");
		is_str(sel, "out serving_default head Identity_1:0 float "
		       "[-1,1]\nout serving_default residual Identity:0 "
		       "float [-1,4]\n", "functional: both outputs, keyed by "
		       "layer, in model order Identity, Identity_1");
		free(sel);
		ok(strstr(out, "node shared/MatMul_1 MatMul\n") != NULL,
		   "functional: the shared layer's second call");
	}
	free(out);
	same_outputs(m, dir, "functional");
	torch_later(dir, "functional");
	tfk_model_free(m);
}

/* Models covering every layer kind the Keras front end expands, so that
 * each op it emits passes the op-definition check and the round trip. */
static const char wide_json[] =
	"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"wide\", \"layers\": [\n"
	" {\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 12, 12, 3], \"dtype\": \"float32\", \"name\": \"image\"}},\n"
	" {\"class_name\": \"Rescaling\", \"config\": {\"name\": \"rescale\", \"scale\": 0.5, \"offset\": 0.25}},\n"
	" {\"class_name\": \"ZeroPadding2D\", \"config\": {\"name\": \"pad\", \"padding\": [1, 1]}},\n"
	" {\"class_name\": \"Conv2D\", \"config\": {\"name\": \"conv\", \"filters\": 4, \"kernel_size\": [3, 3], \"padding\": \"same\", \"activation\": \"tanh\"}},\n"
	" {\"class_name\": \"BatchNormalization\", \"config\": {\"name\": \"bn\"}},\n"
	" {\"class_name\": \"DepthwiseConv2D\", \"config\": {\"name\": \"dw\", \"kernel_size\": [3, 3], \"activation\": \"relu6\", \"padding\": \"valid\"}},\n"
	" {\"class_name\": \"AveragePooling2D\", \"config\": {\"name\": \"avg\", \"pool_size\": [2, 2]}},\n"
	" {\"class_name\": \"MaxPooling2D\", \"config\": {\"name\": \"maxp\", \"pool_size\": [2, 2], \"padding\": \"same\"}},\n"
	" {\"class_name\": \"SpatialDropout2D\", \"config\": {\"name\": \"sdrop\", \"rate\": 0.3}},\n"
	" {\"class_name\": \"GlobalAveragePooling2D\", \"config\": {\"name\": \"gap\"}},\n"
	" {\"class_name\": \"Dense\", \"config\": {\"name\": \"d1\", \"units\": 8, \"activation\": \"sigmoid\"}},\n"
	" {\"class_name\": \"LayerNormalization\", \"config\": {\"name\": \"ln\"}},\n"
	" {\"class_name\": \"LeakyReLU\", \"config\": {\"name\": \"leaky\", \"alpha\": 0.1}},\n"
	" {\"class_name\": \"ELU\", \"config\": {\"name\": \"elu\"}},\n"
	" {\"class_name\": \"Dropout\", \"config\": {\"name\": \"drop\", \"rate\": 0.5}},\n"
	" {\"class_name\": \"Dense\", \"config\": {\"name\": \"d2\", \"units\": 6, \"activation\": \"softplus\"}},\n"
	" {\"class_name\": \"Reshape\", \"config\": {\"name\": \"rs\", \"target_shape\": [2, 3]}},\n"
	" {\"class_name\": \"Softmax\", \"config\": {\"name\": \"sm\"}},\n"
	" {\"class_name\": \"Flatten\", \"config\": {\"name\": \"fl\"}},\n"
	" {\"class_name\": \"Dense\", \"config\": {\"name\": \"out\", \"units\": 3, \"activation\": \"selu\"}}\n"
	"]}}\n";

static const char merge_json[] =
	"{\"class_name\": \"Functional\", \"config\": {\"name\": \"merge\", \"layers\": [\n"
	" {\"class_name\": \"InputLayer\", \"name\": \"tokens\", \"inbound_nodes\": [], \"config\": {\"batch_input_shape\": [null, 5], \"dtype\": \"int32\", \"name\": \"tokens\"}},\n"
	" {\"class_name\": \"InputLayer\", \"name\": \"num\", \"inbound_nodes\": [], \"config\": {\"batch_input_shape\": [null, 3], \"dtype\": \"float32\", \"name\": \"num\"}},\n"
	" {\"class_name\": \"Embedding\", \"name\": \"emb\", \"inbound_nodes\": [[[\"tokens\", 0, 0, {}]]], \"config\": {\"name\": \"emb\", \"input_dim\": 10, \"output_dim\": 4}},\n"
	" {\"class_name\": \"Conv1D\", \"name\": \"c1\", \"inbound_nodes\": [[[\"emb\", 0, 0, {}]]], \"config\": {\"name\": \"c1\", \"filters\": 3, \"kernel_size\": [2], \"activation\": \"relu\"}},\n"
	" {\"class_name\": \"GlobalMaxPooling1D\", \"name\": \"gmp\", \"inbound_nodes\": [[[\"c1\", 0, 0, {}]]], \"config\": {\"name\": \"gmp\"}},\n"
	" {\"class_name\": \"Dense\", \"name\": \"a\", \"inbound_nodes\": [[[\"num\", 0, 0, {}]]], \"config\": {\"name\": \"a\", \"units\": 3}},\n"
	" {\"class_name\": \"Subtract\", \"name\": \"sub\", \"inbound_nodes\": [[[\"gmp\", 0, 0, {}], [\"a\", 0, 0, {}]]], \"config\": {\"name\": \"sub\"}},\n"
	" {\"class_name\": \"Multiply\", \"name\": \"mul\", \"inbound_nodes\": [[[\"gmp\", 0, 0, {}], [\"a\", 0, 0, {}]]], \"config\": {\"name\": \"mul\"}},\n"
	" {\"class_name\": \"Average\", \"name\": \"avg\", \"inbound_nodes\": [[[\"sub\", 0, 0, {}], [\"mul\", 0, 0, {}]]], \"config\": {\"name\": \"avg\"}},\n"
	" {\"class_name\": \"Maximum\", \"name\": \"mx\", \"inbound_nodes\": [[[\"sub\", 0, 0, {}], [\"avg\", 0, 0, {}]]], \"config\": {\"name\": \"mx\"}},\n"
	" {\"class_name\": \"Minimum\", \"name\": \"mn\", \"inbound_nodes\": [[[\"mul\", 0, 0, {}], [\"avg\", 0, 0, {}]]], \"config\": {\"name\": \"mn\"}},\n"
	" {\"class_name\": \"Concatenate\", \"name\": \"cat\", \"inbound_nodes\": [[[\"mx\", 0, 0, {}], [\"mn\", 0, 0, {}], [\"num\", 0, 0, {}]]], \"config\": {\"name\": \"cat\", \"axis\": -1}},\n"
	" {\"class_name\": \"Dense\", \"name\": \"head\", \"inbound_nodes\": [[[\"cat\", 0, 0, {}]]], \"config\": {\"name\": \"head\", \"units\": 2, \"activation\": \"softmax\"}}\n"
	"], \"input_layers\": [[\"tokens\", 0, 0], [\"num\", 0, 0]], \"output_layers\": [[\"head\", 0, 0], [\"mx\", 0, 0]]}}\n";

/* No variables at all: no saver, no variables/. */
static const char novar_json[] =
	"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"nv\", "
	"\"layers\": [{\"class_name\": \"InputLayer\", \"config\": "
	"{\"batch_input_shape\": [null, 2, 3], \"dtype\": \"float32\", "
	"\"name\": \"x\"}}, {\"class_name\": \"Flatten\", \"config\": "
	"{\"name\": \"flat\"}}, {\"class_name\": \"Softmax\", \"config\": "
	"{\"name\": \"prob\"}}]}}";

static void kinds(const char *json, const char *what, const char *ops)
{
	json_error_t je;
	json_t *j = json_loads(json, 0, &je);
	struct tfk_model *m = NULL;
	const char *dir = tap_tmp(what);
	char *out, want[200];
	int st, rc, all = 1;

	rc = j ? tfk_keras_build(j, "model", 11, &m, &err) : -1;
	json_decref(j);
	ok(!rc, "%s builds%s%s", what, rc ? ": " : "", rc && j ? err.msg : "");
	if (rc)
		return;
	rc = tfk_savedmodel_write(dir, m, NULL, &err);
	ok(!rc, "%s: exported%s%s", what, rc ? ": " : "", rc ? err.msg : "");
	out = check(dir, &st);
	is_int(st, 0, "%s: savedmodel_check.py accepts every node", what);
	/* ops: "NODE=OP NODE=OP ..." that must be in the graph */
	for (const char *p = ops; out && *p;) {
		size_t len = strcspn(p, " ");
		char *eq;

		snprintf(want, sizeof(want), "node %.*s\n", (int)len, p);
		eq = strchr(want, '=');
		if (eq)
			*eq = ' ';
		if (!strstr(out, want)) {
			all = 0;
			tap_diag("%s: no %s", what, want);
		}
		p += len;
		while (*p == ' ')
			p++;
	}
	ok(out && all, "%s: the expected TF ops under their names", what);
	if (!m->n_vars)
		ok(out && !strstr(out, "saver ") && !strstr(out, "save/"),
		   "%s: no SaverDef and no save/ nodes", what);
	free(out);
	bundle_bytes(m, dir, what);
	same_outputs(m, dir, what);
	torch_later(dir, what);
	tfk_model_free(m);
}

/* Refusals: nothing is written. */
static void errors(void)
{
	struct tfk_model *m = load_model("examples/cnn.spec.json", 1);
	struct tfk_port in, crop;
	const char *dir = tap_tmp("refused");
	struct tfk_attr at[2];
	struct tfk_port saved;
	char path[600];
	int rc;

	if (!m) {
		ok(0, "cnn builds");
		return;
	}
	/* An op of ours without a TF equivalent on the inference path. */
	rc = tfk_graph_find(m->g, "input_1", &in, &err);
	at[0] = TFK_A_INT("height", 20);
	at[1] = TFK_A_INT("width", 20);
	if (!rc)
		rc = tfk_graph_add_node(m->g, "CenterCrop", "crop/CenterCrop",
					&in, 1, at, 2, &crop, &err);
	ok(!rc, "a CenterCrop node added");
	saved = m->outputs[0].infer;
	m->outputs[0].infer = crop;
	rc = tfk_savedmodel_write(dir, m, "{}", &err);
	is_int(rc, TFK_EINVAL, "CenterCrop refused");
	is_str(err.msg, "node crop/CenterCrop: op CenterCrop has no "
	       "TensorFlow equivalent; cannot export it", "message names the "
	       "node and op");
	ok(!exists(dir), "nothing written for a refused model");
	m->outputs[0].infer = saved;

	/* A layer name TensorFlow would refuse as a node name. */
	{
		json_error_t je;
		json_t *j = json_loads("{\"class_name\": \"Sequential\", "
			"\"config\": {\"name\": \"n\", \"layers\": [{"
			"\"class_name\": \"InputLayer\", \"config\": {"
			"\"batch_input_shape\": [null, 3], \"name\": \"x\"}},"
			" {\"class_name\": \"Dense\", \"config\": {\"name\":"
			" \"my dense\", \"units\": 2}}]}}", 0, &je);
		struct tfk_model *bad = NULL;
		const char *bdir = tap_tmp("badname");

		rc = j ? tfk_keras_build(j, "model", 1, &bad, &err) : -1;
		json_decref(j);
		ok(!rc, "a model with a layer named 'my dense' builds");
		rc = rc ? rc : tfk_savedmodel_write(bdir, bad, NULL, &err);
		is_int(rc, TFK_EINVAL, "its export is refused");
		is_str(err.msg, "node name 'my dense/kernel' is not a valid "
		       "TensorFlow node name", "... naming the node");
		ok(!exists(bdir), "... and writes nothing");
		tfk_model_free(bad);
	}

	/* A directory that cannot be made. */
	snprintf(path, sizeof(path), "%s/file", tap_tmpdir());
	tap_write_file(path, "x", 1);
	snprintf(path, sizeof(path), "%s/file/sm", tap_tmpdir());
	rc = tfk_savedmodel_write(path, m, NULL, &err);
	is_int(rc, TFK_EIO, "a path under a regular file: TFK_EIO");
	ok(strstr(err.msg, "/file") != NULL, "... naming the path (%s)",
	   err.msg);

	/* Failed allocations: every one reported, nothing leaked (ASan). */
	{
		int fails = 0, passed = 0;

		for (long k = 0; k < 100000; k++) {
			void *p = NULL;
			size_t n = 0;

			tfk_alloc_fail_after(k);
			rc = tfk_savedmodel_pack(m, &p, &n, &err);
			tfk_alloc_fail_after(-1);
			if (!rc) {
				passed = 1;
				tfk_free(p);
				break;
			}
			if (rc != TFK_ENOMEM)
				fails++;
		}
		ok(passed && !fails, "every failed allocation is TFK_ENOMEM "
		   "until the pack succeeds");
	}
	tfk_model_free(m);
}

int main(void)
{
	mlp();
	cnn();
	functional();
	kinds(wide_json, "wide", "pad/Pad=Pad conv/Tanh=Tanh "
	      "bn/FusedBatchNormV3=FusedBatchNormV3 "
	      "dw/DepthwiseConv2dNative=DepthwiseConv2dNative dw/Relu6=Relu6 "
	      "avg/AvgPool=AvgPool maxp/MaxPool=MaxPool gap/Mean=Mean "
	      "d1/Sigmoid=Sigmoid ln/SquaredDifference=SquaredDifference "
	      "ln/Rsqrt=Rsqrt leaky/LeakyRelu=LeakyRelu elu/Elu=Elu "
	      "d2/Softplus=Softplus sm/Softmax=Softmax out/Selu=Selu "
	      "bn/moving_mean=VarHandleOp");
	kinds(merge_json, "merge", "emb/GatherV2=GatherV2 "
	      "c1/ExpandDims=ExpandDims c1/Squeeze=Squeeze c1/Conv2D=Conv2D "
	      "gmp/Max=Max sub/Sub=Sub mul/Mul=Mul avg/AddV2=AddV2 "
	      "mx/Maximum=Maximum mn/Minimum=Minimum cat/ConcatV2=ConcatV2 "
	      "head/Softmax=Softmax");
	kinds(novar_json, "novars", "flat/Reshape=Reshape prob/Softmax=Softmax");
	errors();
	torch_all();
	tap_rm_tmpdir();
	return tap_done();
}
