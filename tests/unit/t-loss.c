/*
 * t-loss.c - tfk_loss_parse (names, objects, defaults, errors with JSON
 * paths), tfk_loss_parse_outputs (compile.loss and loss_weights of a
 * model with outputs "a" and "b", Keras 3's forms and refusals) and
 * tfk_loss_build against PyTorch: for each loss, a model
 * x -> Activation(act) is built, the loss of its output added with
 * tfk_loss_build, and the loss value and d loss / d x compared with
 * tests/py/torch_layers.py, which writes Keras' formulas in torch
 * (sigmoid/softmax crossentropies on the logits when the output ends in
 * that activation, Keras' eps-clipped forms otherwise, label smoothing,
 * per-example weights, SUM_OVER_BATCH_SIZE).
 *
 * Error measure: |ours - torch| / max(|torch|) per tensor. Bounds: loss
 * 2e-6, gradient 1e-5 (float32 vs float64). Max observed at the time of
 * writing: loss <= 2e-7, gradient <= 3e-7.
 */
#include "nn/model.h"
#include "graph/exec.h"
#include "graph/graph.h"
#include "tap.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { L_DENSE, L_ONEHOT, L_SPARSE, L_SPARSE2, L_BINARY };

struct lcase {
	const char *loss;	/* compile.loss JSON */
	const char *act;
	int labels;		/* L_* */
	int prob;		/* inputs in (0, 1) (probabilities) */
	int weighted;
	int k;			/* classes / output width */
};

static const struct lcase cases[] = {
	{ "\"mse\"", "linear", L_DENSE, 0, 0, 3 },
	{ "\"mean_absolute_error\"", "linear", L_DENSE, 0, 1, 3 },
	{ "{\"class_name\": \"Huber\", \"config\": {\"delta\": 0.5, "
	  "\"reduction\": \"auto\", \"name\": \"huber_loss\"}}", "linear",
	  L_DENSE, 0, 0, 4 },
	{ "{\"class_name\": \"BinaryCrossentropy\", \"config\": "
	  "{\"from_logits\": true}}", "linear", L_BINARY, 0, 0, 1 },
	{ "\"binary_crossentropy\"", "sigmoid", L_BINARY, 0, 1, 2 },
	{ "\"binary_crossentropy\"", "linear", L_BINARY, 1, 0, 2 },
	{ "{\"class_name\": \"BinaryCrossentropy\", \"config\": "
	  "{\"label_smoothing\": 0.2}}", "sigmoid", L_BINARY, 0, 0, 1 },
	{ "{\"class_name\": \"CategoricalCrossentropy\", \"config\": "
	  "{\"from_logits\": true, \"label_smoothing\": 0.1}}", "linear",
	  L_ONEHOT, 0, 0, 5 },
	{ "\"categorical_crossentropy\"", "softmax", L_ONEHOT, 0, 1, 5 },
	{ "\"categorical_crossentropy\"", "linear", L_ONEHOT, 1, 0, 5 },
	{ "{\"class_name\": \"SparseCategoricalCrossentropy\", \"config\": "
	  "{\"from_logits\": true, \"ignore_class\": null}}", "linear",
	  L_SPARSE, 0, 1, 6 },
	{ "\"sparse_categorical_crossentropy\"", "softmax", L_SPARSE2, 0, 0,
	  6 },
	{ "\"sparse_categorical_crossentropy\"", "linear", L_SPARSE, 1, 0,
	  6 },
};

#define N_CASES (int)(sizeof(cases) / sizeof(cases[0]))
#define B 7

static char dirs[N_CASES][256];
static float ours[N_CASES][2][B * 6 + 1];	/* [infer loss, train loss] */
static float ourg[N_CASES][B * 6];
static int done[N_CASES];

static void wfile(const char *dir, const char *name, const void *p, size_t n)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	tap_write_file(path, p, n);
}

static void run_case(int ci)
{
	const struct lcase *lc = &cases[ci];
	struct tfk_err err = { 0, "" };
	struct tfk_loss_spec ls;
	struct tfk_model *m = NULL;
	char text[1024], *s;
	json_t *mj, *lj, *meta;
	struct tfk_port y, w = { -1, 0 }, loss[2], x, one, dx;
	int64_t xs[2] = { B, lc->k }, ys[2] = { B, lc->k }, ws[1] = { B };
	int64_t yshape[2] = { -1, lc->k };
	struct tfk_tensor feeds[3];
	const char *fnames[3] = { "x", "y", "w" }, *fetch[3];
	const struct tfk_tensor *out[3];
	struct tfk_exec *ex = NULL;
	char fbuf[3][160];
	enum tfk_dtype ydt = TFK_DT_FLOAT;
	int yrank = 2, i, j, nf;

	snprintf(dirs[ci], sizeof(dirs[ci]), "%s/loss%02d", tap_tmpdir(), ci);
	mkdir(dirs[ci], 0755);
	snprintf(text, sizeof(text), "{\"class_name\": \"Sequential\", "
		 "\"config\": {\"name\": \"s\", \"layers\": [{\"class_name\": "
		 "\"InputLayer\", \"config\": {\"name\": \"x\", "
		 "\"batch_input_shape\": [null, %d]}}, {\"class_name\": "
		 "\"Activation\", \"config\": {\"name\": \"a\", \"activation\":"
		 " \"%s\"}}]}}", lc->k, lc->act);
	mj = json_loads(text, 0, NULL);
	lj = json_loads(lc->loss, JSON_DECODE_ANY, NULL);
	if (tfk_keras_build(mj, "t", 1, &m, &err) ||
	    tfk_loss_parse(lj, "compile.loss", &ls, &err)) {
		tap_diag("case %d: %s", ci, err.msg);
		goto out;
	}
	if (lc->labels == L_SPARSE) {
		ydt = TFK_DT_INT64;
		yrank = 1;
		ys[1] = 1;
	} else if (lc->labels == L_SPARSE2) {
		ydt = TFK_DT_INT32;
		ys[1] = yshape[1] = 1;
	}
	tfk_graph_placeholder(m->g, "y", ydt, yrank, yshape, &y, &err);
	if (lc->weighted)
		tfk_graph_placeholder(m->g, "w", TFK_DT_FLOAT, 1, yshape, &w,
				      &err);
	for (i = 0; i < 2; i++)
		if (tfk_loss_build(m, 0, &ls, i, y, w, &loss[i], &err)) {
			tap_diag("case %d: loss: %s", ci, err.msg);
			goto out;
		}
	tfk_graph_find(m->g, "x", &x, &err);
	tfk_graph_const_f32(m->g, "seed", 1, &one, &err);
	if (tfk_graph_gradients(m->g, &loss[1], &one, 1, &x, 1, &dx, &err)) {
		tap_diag("case %d: gradients: %s", ci, err.msg);
		goto out;
	}
	nf = 0;
	for (i = 0; i < 2; i++) {
		snprintf(fbuf[nf], sizeof(fbuf[nf]), "%s:%d", tfk_graph_node(
			m->g, loss[i].node)->name, loss[i].index);
		fetch[nf] = fbuf[nf];
		nf++;
	}
	snprintf(fbuf[nf], sizeof(fbuf[nf]), "%s:%d",
		 tfk_graph_node(m->g, dx.node)->name, dx.index);
	fetch[nf] = fbuf[nf];
	nf++;
	if (tfk_exec_new(&ex, m->g, fnames, lc->weighted ? 3 : 2, fetch, nf,
			 NULL, &err)) {
		tap_diag("case %d: exec: %s", ci, err.msg);
		goto out;
	}
	tfk_tensor_init(&feeds[0], TFK_DT_FLOAT, 2, xs, &err);
	tfk_tensor_init(&feeds[1], ydt, yrank, ys, &err);
	tfk_tensor_init(&feeds[2], TFK_DT_FLOAT, 1, ws, &err);
	for (i = 0; i < B * lc->k; i++) {
		double v = tap_val(ci, i) * 3;

		((float *)feeds[0].data)[i] = (float)(lc->prob ?
			(tap_val(ci, i) + 1.02) / 2.05 : v);
	}
	for (i = 0; i < B; i++) {
		int cls = (int)((tap_val(50 + ci, i) + 1) / 2 * lc->k) % lc->k;

		((float *)feeds[2].data)[i] = (float)(0.5 + (tap_val(60, i) + 1));
		for (j = 0; j < lc->k; j++) {
			float *yf = feeds[1].data;

			if (lc->labels == L_DENSE)
				yf[i * lc->k + j] = (float)tap_val(70 + ci,
							       i * lc->k + j);
			else if (lc->labels == L_BINARY)
				yf[i * lc->k + j] = tap_val(70 + ci, i * lc->k + j)
					> 0 ? 1.0f : 0.0f;
			else if (lc->labels == L_ONEHOT)
				yf[i * lc->k + j] = j == cls ? 1.0f : 0.0f;
		}
		if (lc->labels == L_SPARSE)
			((int64_t *)feeds[1].data)[i] = cls;
		if (lc->labels == L_SPARSE2)
			((int32_t *)feeds[1].data)[i] = cls;
	}
	if (tfk_exec_run(ex, feeds, 0, out, &err)) {
		tap_diag("case %d: run: %s", ci, err.msg);
	} else {
		ours[ci][0][0] = *(const float *)out[0]->data;
		ours[ci][1][0] = *(const float *)out[1]->data;
		memcpy(ourg[ci], out[2]->data, out[2]->nbytes);
		done[ci] = 1;
	}
	wfile(dirs[ci], "x.bin", feeds[0].data, feeds[0].nbytes);
	wfile(dirs[ci], "y.bin", feeds[1].data, feeds[1].nbytes);
	wfile(dirs[ci], "w.bin", feeds[2].data, feeds[2].nbytes);
	meta = json_pack("{s:s, s:s, s:{s:s, s:b, s:f, s:f}, s:[{s:s, s:[i, "
			 "i], s:s}], s:{s:s, s:[i, i], s:s}}", "kind", "loss",
			 "act", lc->act, "loss", "name", ls.name,
			 "from_logits", ls.from_logits, "label_smoothing",
			 (double)ls.label_smoothing, "delta",
			 (double)ls.delta, "inputs", "file", "x.bin",
			 "shape", B, lc->k, "dtype", "float32", "labels",
			 "file", "y.bin", "shape", (int)ys[0],
			 yrank == 2 ? (int)ys[1] : 1, "dtype",
			 ydt == TFK_DT_FLOAT ? "float32" : ydt ==
			 TFK_DT_INT64 ? "int64" : "int32");
	if (lc->weighted)
		json_object_set_new(meta, "weight", json_pack("{s:s, s:[i], "
				    "s:s}", "file", "w.bin", "shape", B,
				    "dtype", "float32"));
	s = json_dumps(meta, 0);
	wfile(dirs[ci], "meta.json", s, strlen(s));
	free(s);
	json_decref(meta);
	for (i = 0; i < 3; i++)
		tfk_tensor_release(&feeds[i]);
out:
	tfk_exec_free(ex);
	tfk_model_free(m);
	json_decref(mj);
	json_decref(lj);
}

static void oracle(void)
{
	char *cmd = malloc(8192), *p;
	double wl = 0, wg = 0;
	int i;

	p = cmd + sprintf(cmd, "'%s' '%s'", tap_python(),
			  tap_source("tests/py/torch_layers.py"));
	for (i = 0; i < N_CASES; i++)
		if (done[i])
			p += sprintf(p, " '%s'", dirs[i]);
	ok(system(cmd) == 0, "torch oracle ran");
	free(cmd);
	for (i = 0; i < N_CASES; i++) {
		char path[400];
		double *l, *g, num = 0, den = 0, e;
		size_t n, j;

		if (!done[i])
			continue;
		snprintf(path, sizeof(path), "%s/loss.bin", dirs[i]);
		l = tap_read_file(path, &n);
		snprintf(path, sizeof(path), "%s/dx0.bin", dirs[i]);
		g = tap_read_file(path, &n);
		if (!l || !g || n != (size_t)B * cases[i].k * 8) {
			ok(0, "case %d: torch results", i);
			free(l);
			free(g);
			continue;
		}
		e = fabs(ours[i][1][0] - l[0]) / fabs(l[0]);
		wl = fmax(wl, e);
		ok(e <= 2e-6, "%s (%s): loss %.7g == torch %.7g (err %.2g)",
		   cases[i].loss, cases[i].act, ours[i][1][0], l[0], e);
		ok(ours[i][0][0] == ours[i][1][0], "inference branch loss == "
		   "training branch loss");
		for (j = 0; j < n / 8; j++) {
			num = fmax(num, fabs(ourg[i][j] - g[j]));
			den = fmax(den, fabs(g[j]));
		}
		e = num / den;
		wg = fmax(wg, e);
		ok(e <= 1e-5, "%s (%s): d loss / d x == torch (err %.2g)",
		   cases[i].loss, cases[i].act, e);
		free(l);
		free(g);
	}
	tap_diag("max error: loss %.2g, gradient %.2g", wl, wg);
}

static void parse(void)
{
	static const struct {
		const char *json, *name;
		int logits;
		float ls, delta;
	} good[] = {
		{ "\"mse\"", "mean_squared_error", 0, 0, 1 },
		{ "\"MAE\"", "mean_absolute_error", 0, 0, 1 },
		{ "\"huber_loss\"", "huber", 0, 0, 1 },
		{ "{\"class_name\": \"Huber\", \"config\": {\"delta\": 2.5}}",
		  "huber", 0, 0, 2.5f },
		{ "{\"class_name\": \"SparseCategoricalCrossentropy\", "
		  "\"config\": {\"from_logits\": true, \"reduction\": "
		  "\"sum_over_batch_size\", \"name\": \"x\"}, \"module\": "
		  "\"keras.losses\", \"registered_name\": null}",
		  "sparse_categorical_crossentropy", 1, 0, 1 },
		{ "{\"class_name\": \"CategoricalCrossentropy\", \"config\": "
		  "{\"label_smoothing\": 0.1, \"axis\": -1}}",
		  "categorical_crossentropy", 0, 0.1f, 1 },
	};
	static const struct {
		const char *json, *msg;
	} bad[] = {
		{ "\"hinge\"", "spec.json: compile.loss: unknown loss 'hinge'" },
		{ "{\"class_name\": \"Huber\", \"config\": {\"delta\": -1}}",
		  "spec.json: compile.loss.config.delta: expected a number in "
		  "[1e-30, 1e+30]" },
		{ "{\"class_name\": \"BinaryCrossentropy\", \"config\": "
		  "{\"from_logits\": 1}}", "spec.json: compile.loss.config."
		  "from_logits: expected true or false" },
		{ "{\"class_name\": \"MeanSquaredError\", \"config\": "
		  "{\"from_logits\": true}}", "spec.json: compile.loss.config."
		  "from_logits: unknown key" },
		{ "{\"class_name\": \"SparseCategoricalCrossentropy\", "
		  "\"config\": {\"label_smoothing\": 0.1}}", "spec.json: "
		  "compile.loss.config.label_smoothing: unknown key" },
		{ "{\"class_name\": \"BinaryCrossentropy\", \"config\": "
		  "{\"reduction\": \"sum\"}}", "spec.json: compile.loss.config."
		  "reduction: only \"sum_over_batch_size\" (or \"auto\") is "
		  "supported" },
		{ "{\"class_name\": \"BinaryCrossentropy\", \"confg\": {}}",
		  "spec.json: compile.loss.confg: unknown key" },
		{ "3", "spec.json: compile.loss: expected a loss name or "
		  "{\"class_name\": ..., \"config\": {...}}" },
	};
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct tfk_err err = { 0, "" };
		struct tfk_loss_spec ls;
		json_t *j = json_loads(good[i].json, JSON_DECODE_ANY, NULL);

		ok(!tfk_loss_parse(j, "spec.json: compile.loss", &ls, &err),
		   "parse %s: %s", good[i].json, err.msg);
		ok(!strcmp(ls.name, good[i].name) &&
		   ls.from_logits == good[i].logits &&
		   ls.label_smoothing == good[i].ls &&
		   ls.delta == good[i].delta, "%s -> %s", good[i].json,
		   ls.name);
		json_decref(j);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tfk_err err = { 0, "" };
		struct tfk_loss_spec ls;
		json_t *j = json_loads(bad[i].json, JSON_DECODE_ANY, NULL);

		is_int(tfk_loss_parse(j, "spec.json: compile.loss", &ls, &err),
		       TFK_EINVAL, "%s refused", bad[i].json);
		is_str(err.msg, bad[i].msg, "message");
		json_decref(j);
	}
}

/* compile.loss / loss_weights for a model with outputs a and b. */
static void parse_outputs(void)
{
	static const struct {
		const char *loss, *weights;
		const char *name_a, *name_b;
		float wa, wb;
	} good[] = {
		{ "\"mse\"", NULL, "mean_squared_error", "mean_squared_error",
		  1, 1 },
		{ "{\"class_name\": \"MeanAbsoluteError\"}", "null",
		  "mean_absolute_error", "mean_absolute_error", 1, 1 },
		{ "{\"b\": \"mse\", \"a\": \"sparse_categorical_crossentropy\"}",
		  "{\"b\": 0.2, \"a\": 1.0}", "sparse_categorical_crossentropy",
		  "mean_squared_error", 1, 0.2f },
		{ "[\"mae\", {\"class_name\": \"Huber\"}]", "[2, 0.5]",
		  "mean_absolute_error", "huber", 2, 0.5f },
	};
	static const struct {
		const char *loss, *weights, *msg;
	} bad[] = {
		{ "{\"a\": \"mse\"}", NULL, "spec.json: compile.loss: expected "
		  "keys a, b (the outputs), 'b' is missing" },
		{ "{\"a\": \"mse\", \"b\": \"mse\", \"c\": \"mse\"}", NULL,
		  "spec.json: compile.loss: expected keys a, b (the outputs), "
		  "got 'c'" },
		{ "[\"mse\"]", NULL, "spec.json: compile.loss: 1 losses, the "
		  "model has 2 outputs" },
		{ "[\"mse\", null]", NULL, "spec.json: compile.loss[1]: an "
		  "output without a loss is not supported" },
		{ "{\"a\": \"mse\", \"b\": \"msq\"}", NULL,
		  "spec.json: compile.loss.b: unknown loss 'msq'" },
		{ "\"mse\"", "0.5", "spec.json: compile.loss_weights: expected "
		  "a list of 2 numbers or an object keyed by output name" },
		{ "\"mse\"", "[1]", "spec.json: compile.loss_weights: 1 "
		  "weights, the model has 2 outputs" },
		{ "\"mse\"", "{\"a\": 1}", "spec.json: compile.loss_weights: "
		  "expected keys a, b (the outputs), 'b' is missing" },
		{ "\"mse\"", "{\"a\": 1, \"b\": true}", "spec.json: "
		  "compile.loss_weights.b: expected a finite number" },
	};
	struct tfk_model_output outs[2];
	struct tfk_model m;
	size_t i;

	memset(&m, 0, sizeof(m));
	memset(outs, 0, sizeof(outs));
	outs[0].name = "a";
	outs[1].name = "b";
	m.n_outputs = 2;
	m.outputs = outs;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct tfk_err err = { 0, "" };
		struct tfk_loss_spec ls[2];
		float w[2];
		json_t *l = json_loads(good[i].loss, JSON_DECODE_ANY, NULL);
		json_t *wj = good[i].weights ? json_loads(good[i].weights,
							  JSON_DECODE_ANY,
							  NULL) : NULL;

		ok(!tfk_loss_parse_outputs(l, "spec.json: compile.loss", wj,
					   "spec.json: compile.loss_weights",
					   &m, ls, w, &err),
		   "outputs: %s, %s: %s", good[i].loss,
		   good[i].weights ? good[i].weights : "-", err.msg);
		ok(!strcmp(ls[0].name, good[i].name_a) &&
		   !strcmp(ls[1].name, good[i].name_b) && w[0] == good[i].wa &&
		   w[1] == good[i].wb, "... a %s x %g, b %s x %g", ls[0].name,
		   w[0], ls[1].name, w[1]);
		json_decref(l);
		json_decref(wj);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tfk_err err = { 0, "" };
		struct tfk_loss_spec ls[2];
		float w[2];
		json_t *l = json_loads(bad[i].loss, JSON_DECODE_ANY, NULL);
		json_t *wj = bad[i].weights ? json_loads(bad[i].weights,
							 JSON_DECODE_ANY,
							 NULL) : NULL;

		is_int(tfk_loss_parse_outputs(l, "spec.json: compile.loss", wj,
					      "spec.json: compile.loss_weights",
					      &m, ls, w, &err), TFK_EINVAL,
		       "outputs: %s, %s refused", bad[i].loss,
		       bad[i].weights ? bad[i].weights : "-");
		is_str(err.msg, bad[i].msg, "message");
		json_decref(l);
		json_decref(wj);
	}
	/* one output: a number is its weight */
	{
		struct tfk_err err = { 0, "" };
		struct tfk_loss_spec ls[1];
		float w[1];
		json_t *l = json_string("mse"), *wj = json_real(0.25);

		m.n_outputs = 1;
		ok(!tfk_loss_parse_outputs(l, "spec.json: compile.loss", wj,
					   "spec.json: compile.loss_weights",
					   &m, ls, w, &err) && w[0] == 0.25f,
		   "one output: loss_weights 0.25");
		json_decref(l);
		json_decref(wj);
	}
}

int main(void)
{
	int i;

	parse();
	parse_outputs();
	for (i = 0; i < N_CASES; i++) {
		run_case(i);
		ok(done[i], "case %d (%s, %s) built and ran", i, cases[i].loss,
		   cases[i].act);
	}
	oracle();
	return tap_done();
}
