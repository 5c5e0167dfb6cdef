/*
 * t-model.c - tfk_keras_build: the MLP spec (examples/
 * mlp.spec.json) as Keras to_json writes it, forward pass against the
 * formula computed here in double (relative 1e-5); a Functional model
 * with two inputs, a shared layer (one set of variables, two calls) and a
 * residual Add, in Keras 2 and Keras 3 inbound_nodes forms (identical
 * outputs, equal to the formula); Keras-default initializer statistics
 * (glorot_uniform bounds and variance, he_normal truncation and
 * variance with a conv kernel's fans, Embedding's uniform(-0.05, 0.05),
 * Orthogonal's W^T W = I) and seed determinism; regularization loss
 * values; BatchNormalization's moving-statistic updates; Rescaling of
 * uint8 inputs; error messages with JSON paths; failed allocations.
 */
#include "nn/model.h"
#include "graph/exec.h"
#include "graph/graph.h"
#include "util/alloc.h"
#include "tap.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *load_json(const char *rel, const char *key)
{
	json_error_t je;
	json_t *j = json_load_file(tap_source(rel), 0, &je), *m;

	if (!j) {
		tap_diag("%s: %s", rel, je.text);
		return NULL;
	}
	if (!key)
		return j;
	m = json_incref(json_object_get(j, key));
	json_decref(j);
	return m;
}

static struct tfk_model *build_text(const char *text, uint64_t seed,
				    struct tfk_err *err)
{
	json_t *j = json_loads(text, 0, NULL);
	struct tfk_model *m = NULL;

	if (!j) {
		tap_diag("bad test JSON: %s", text);
		return NULL;
	}
	tfk_keras_build(j, "t.json: model", seed, &m, err);
	json_decref(j);
	return m;
}

static const char *pname(const struct tfk_graph *g, struct tfk_port p)
{
	static char buf[4][160];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s:%d",
		 tfk_graph_node(g, p.node)->name, p.index);
	return buf[k];
}

static float *var_data(struct tfk_model *m, const char *name)
{
	struct tfk_tensor *t = tfk_graph_var(m->g, name);

	return t ? t->data : NULL;
}

/* The MLP ------------------------------------------------------------------ */

static void mlp(void)
{
	struct tfk_err err = { 0, "" };
	json_t *j = load_json("examples/mlp.spec.json", "model");
	struct tfk_model *m = NULL;
	struct tfk_tensor x;
	struct tfk_port p;
	const struct tfk_tensor *out[2];
	struct tfk_exec *ex;
	const char *feeds[1] = { "input_1" }, *fetch[2];
	int64_t xs[3] = { 3, 28, 28 };
	const struct tfk_tdesc *d;
	float *w1, *b1, *w2, *b2;
	double worst = 0;
	int b, i, k, names = 1;
	static const char *const vn[4] = { "dense/kernel", "dense/bias",
					   "dense_1/kernel", "dense_1/bias" };

	ok(j && !tfk_keras_build(j, "mlp.spec.json: model", 42, &m, &err),
	   "MLP spec builds: %s", err.msg);
	json_decref(j);
	if (!m)
		return;
	is_str(m->name, "mlp", "model name");
	is_int(m->n_inputs, 1, "one input");
	is_str(m->inputs[0].name, "input_1", "input named after InputLayer");
	ok(m->inputs[0].dtype == TFK_DT_FLOAT && m->inputs[0].rank == 3 &&
	   m->inputs[0].shape[0] == -1 && m->inputs[0].shape[1] == 28 &&
	   m->inputs[0].shape[2] == 28, "input float32 [-1, 28, 28]");
	is_int(m->n_outputs, 1, "one output");
	is_str(m->outputs[0].name, "dense_1", "output named after its layer");
	is_str(m->outputs[0].act, "softmax", "output act softmax");
	ok(m->outputs[0].train_logits.node >= 0 &&
	   !strcmp(tfk_graph_node(m->g, m->outputs[0].train_logits.node)->
		   name, "train/dense_1/BiasAdd"), "training logits port");
	ok(!strcmp(tfk_graph_node(m->g, m->outputs[0].infer.node)->name,
		   "dense_1/Softmax"), "inference output dense_1/Softmax");
	is_int(m->n_vars, 4, "4 variables");
	for (k = 0; k < 4 && k < m->n_vars; k++) {
		const char *nm;

		tfk_graph_var_at(m->g, m->vars[k].var, &nm);
		names &= !strcmp(nm, vn[k]) && m->vars[k].trainable &&
			m->vars[k].l1 == 0 && m->vars[k].l2 == 0;
	}
	ok(names, "variables named as Keras, in order, trainable, no "
	   "regularizer");
	is_int(m->reg_loss.node, -1, "no regularization loss");
	is_int(m->n_updates, 0, "no updates");
	ok(!tfk_graph_find(m->g, "dense_1", &p, &err) &&
	   p.node == m->outputs[0].infer.node, "graph output 'dense_1'");
	ok(!tfk_graph_find(m->g, "dense/MatMul", &p, &err) &&
	   !tfk_graph_find(m->g, "train/dense/MatMul", &p, &err),
	   "node names <layer>/<Op> and train/<layer>/<Op>");
	d = tfk_graph_desc(m->g, m->outputs[0].train);
	ok(d->rank == 2 && d->shape[0] == -1 && d->shape[1] == 10,
	   "output [-1, 10]");

	/* forward vs the formula in double */
	tfk_tensor_init(&x, TFK_DT_FLOAT, 3, xs, &err);
	for (i = 0; i < 3 * 784; i++)
		((float *)x.data)[i] = (float)((tap_val(5, i) + 1) / 2);
	fetch[0] = pname(m->g, m->outputs[0].infer);
	fetch[1] = pname(m->g, m->outputs[0].train);
	ok(!tfk_exec_new(&ex, m->g, feeds, 1, fetch, 2, NULL, &err) &&
	   !tfk_exec_run(ex, &x, 0, out, &err), "runs: %s", err.msg);
	w1 = var_data(m, "dense/kernel");
	b1 = var_data(m, "dense/bias");
	w2 = var_data(m, "dense_1/kernel");
	b2 = var_data(m, "dense_1/bias");
	for (b = 0; b < 3; b++) {
		double h[128], z[10], mx = -1e300, s = 0;

		for (k = 0; k < 128; k++) {
			h[k] = b1[k];
			for (i = 0; i < 784; i++)
				h[k] += (double)((float *)x.data)[b * 784 + i] *
					w1[i * 128 + k];
			h[k] = h[k] > 0 ? h[k] : 0;
		}
		for (k = 0; k < 10; k++) {
			z[k] = b2[k];
			for (i = 0; i < 128; i++)
				z[k] += h[i] * w2[i * 10 + k];
			mx = z[k] > mx ? z[k] : mx;
		}
		for (k = 0; k < 10; k++)
			s += exp(z[k] - mx);
		for (k = 0; k < 10; k++) {
			double want = exp(z[k] - mx) / s;
			double e = fabs(((const float *)out[0]->data)[b * 10 + k]
					- want) / want;

			worst = e > worst ? e : worst;
		}
	}
	ok(worst <= 1e-5, "inference == formula (max rel err %.2g)", worst);
	is_mem(out[1]->data, out[1]->nbytes, out[0]->data, out[0]->nbytes,
	       "training branch == inference branch (no Dropout)");
	tfk_exec_free(ex);
	tfk_tensor_release(&x);
	tfk_model_free(m);
}

/* Functional: shared layer, residual, Keras 2 and 3 --------------------------- */

static void functional(void)
{
	static const char *const files[2] = {
		"examples/models/shared_residual.json",
		"examples/models/shared_residual_keras3.json" };
	float res[2][12], head[2][3];
	int f;

	for (f = 0; f < 2; f++) {
		struct tfk_err err = { 0, "" };
		json_t *j = load_json(files[f], NULL);
		struct tfk_model *m = NULL;
		struct tfk_tensor in[2];
		int64_t s[2] = { 3, 4 };
		const char *feeds[2] = { "in_a", "in_b" }, *fetch[2];
		const struct tfk_tensor *out[2];
		struct tfk_exec *ex;
		float *w, *bias, *hw, *hb;
		double worst = 0;
		int i, k, b;

		ok(j && !tfk_keras_build(j, files[f], 3, &m, &err),
		   "%s builds: %s", files[f], err.msg);
		json_decref(j);
		if (!m)
			return;
		ok(m->n_inputs == 2 && !strcmp(m->inputs[0].name, "in_a") &&
		   !strcmp(m->inputs[1].name, "in_b"), "inputs in_a, in_b");
		ok(m->n_outputs == 2 && !strcmp(m->outputs[0].name,
						"residual") &&
		   !strcmp(m->outputs[1].name, "head"), "outputs residual, "
		   "head");
		is_str(m->outputs[1].act, "sigmoid", "head act sigmoid");
		ok(m->outputs[0].act == NULL, "residual has no activation");
		is_int(m->n_vars, 4, "shared layer has one set of variables "
		       "(4 in all)");
		ok(tfk_graph_var(m->g, "shared/kernel") &&
		   !tfk_graph_var(m->g, "shared_1/kernel"), "shared/kernel");
		for (i = 0; i < 2; i++) {
			tfk_tensor_init(&in[i], TFK_DT_FLOAT, 2, s, &err);
			for (k = 0; k < 12; k++)
				((float *)in[i].data)[k] =
					(float)tap_val(20 + i, k);
		}
		/* nonzero bias so that both calls' bias shows */
		bias = var_data(m, "shared/bias");
		for (k = 0; k < 4; k++)
			bias[k] = 0.1f * (float)(k + 1);
		fetch[0] = pname(m->g, m->outputs[0].infer);
		fetch[1] = pname(m->g, m->outputs[1].train);
		ok(!tfk_exec_new(&ex, m->g, feeds, 2, fetch, 2, NULL, &err) &&
		   !tfk_exec_run(ex, in, 0, out, &err), "runs: %s", err.msg);
		if (out[0])
			memcpy(res[f], out[0]->data, sizeof(res[f]));
		if (out[1])
			memcpy(head[f], out[1]->data, sizeof(head[f]));
		w = var_data(m, "shared/kernel");
		hw = var_data(m, "head/kernel");
		hb = var_data(m, "head/bias");
		for (b = 0; b < 3; b++) {
			double r[4], z = hb[0];

			for (k = 0; k < 4; k++) {
				double sa = bias[k], sb = bias[k];

				for (i = 0; i < 4; i++) {
					sa += ((float *)in[0].data)[b * 4 + i] *
						(double)w[i * 4 + k];
					sb += ((float *)in[1].data)[b * 4 + i] *
						(double)w[i * 4 + k];
				}
				r[k] = sa + sb + ((float *)in[0].data)[b * 4 +
								      k];
				worst = fmax(worst, fabs(r[k] -
					res[f][b * 4 + k]));
				z += r[k] * hw[k];
			}
			worst = fmax(worst, fabs(1 / (1 + exp(-z)) -
						 head[f][b]));
		}
		ok(worst <= 1e-5, "residual = shared(a) + shared(b) + a, "
		   "head = sigmoid(.) (max err %.2g)", worst);
		for (i = 0; i < 2; i++)
			tfk_tensor_release(&in[i]);
		tfk_exec_free(ex);
		tfk_model_free(m);
	}
	is_mem(res[0], sizeof(res[0]), res[1], sizeof(res[1]),
	       "Keras 2 and Keras 3 forms: same residual output");
	is_mem(head[0], sizeof(head[0]), head[1], sizeof(head[1]),
	       "... and same head output");
}

/* Initializers -------------------------------------------------------------- */

static void stats(const float *p, int64_t n, double *mean, double *var,
		  double *amax)
{
	double s = 0, s2 = 0;
	int64_t i;

	*amax = 0;
	for (i = 0; i < n; i++) {
		s += p[i];
		s2 += (double)p[i] * p[i];
		*amax = fmax(*amax, fabs(p[i]));
	}
	*mean = s / n;
	*var = s2 / n - *mean * *mean;
}

static void initializers(void)
{
	struct tfk_err err = { 0, "" };
	struct tfk_model *m, *m2, *m3;
	double mean, var, amax, lim, sd;
	const char *text =
		"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\","
		" \"layers\": [{\"class_name\": \"InputLayer\", \"config\": "
		"{\"name\": \"x\", \"batch_input_shape\": [null, 784]}}, "
		"{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\", "
		"\"units\": 128}}]}}";
	const char *conv =
		"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\","
		" \"layers\": [{\"class_name\": \"Conv2D\", \"config\": "
		"{\"name\": \"c\", \"batch_input_shape\": [null, 8, 8, 16], "
		"\"filters\": 32, \"kernel_size\": [3, 3], "
		"\"kernel_initializer\": {\"class_name\": \"HeNormal\", "
		"\"config\": {\"seed\": null}}}}, {\"class_name\": \"Flatten\", "
		"\"config\": {\"name\": \"f\"}}, {\"class_name\": \"Embedding\","
		" \"config\": {\"name\": \"e\", \"input_dim\": 100, "
		"\"output_dim\": 64}}, {\"class_name\": \"Dense\", \"config\": "
		"{\"name\": \"o\", \"units\": 4, \"kernel_initializer\": "
		"\"orthogonal\", \"bias_initializer\": {\"class_name\": "
		"\"Constant\", \"config\": {\"value\": 0.5}}}}]}}";
	float *k;
	int64_t n = 784 * 128;
	int i, j, bad;

	m = build_text(text, 1, &err);
	m2 = build_text(text, 1, &err);
	m3 = build_text(text, 2, &err);
	ok(m && m2 && m3, "dense models build: %s", err.msg);
	if (!m || !m2 || !m3)
		goto out;
	k = var_data(m, "d/kernel");
	stats(k, n, &mean, &var, &amax);
	lim = sqrt(6.0 / (784 + 128));
	ok(amax <= lim, "glorot_uniform: all |w| <= sqrt(6 / (fan_in + "
	   "fan_out)) = %.5f (max %.5f)", lim, amax);
	ok(amax > 0.99 * lim, "... and the range is used (max %.5f)", amax);
	ok(fabs(var / (lim * lim / 3) - 1) < 0.02, "glorot_uniform variance "
	   "%.3g ~ limit^2 / 3 = %.3g (2%%)", var, lim * lim / 3);
	ok(fabs(mean) < 4 * sqrt(lim * lim / 3 / n), "mean %.2g ~ 0", mean);
	is_mem(k, n * 4, var_data(m2, "d/kernel"), n * 4,
	       "same seed: same weights");
	ok(memcmp(k, var_data(m3, "d/kernel"), n * 4),
	   "another seed: other weights");
	stats(var_data(m, "d/bias"), 128, &mean, &var, &amax);
	ok(amax == 0, "bias zeros");
	tfk_model_free(m);
	tfk_model_free(m2);
	tfk_model_free(m3);

	m = build_text(conv, 1, &err);
	ok(m != NULL, "conv/embedding model builds: %s", err.msg);
	if (!m)
		return;
	/* he_normal: fans of [3, 3, 16, 32]: fan_in 3 * 3 * 16 */
	n = 3 * 3 * 16 * 32;
	stats(var_data(m, "c/kernel"), n, &mean, &var, &amax);
	sd = sqrt(2.0 / 144);
	ok(amax <= 2 * sd / .87962566103423978, "he_normal truncated at 2 "
	   "stddev (max %.4f)", amax);
	ok(fabs(var / (sd * sd) - 1) < 0.06, "he_normal variance %.4g ~ 2 / "
	   "fan_in = %.4g (6%%, n = %lld)", var, sd * sd, (long long)n);
	stats(var_data(m, "e/embeddings"), 6400, &mean, &var, &amax);
	ok(amax <= 0.05 && amax > 0.049, "Embedding: uniform(-0.05, 0.05) "
	   "(max %.4f)", amax);
	k = var_data(m, "o/kernel");
	bad = 0;
	for (i = 0; i < 4; i++)
		for (j = 0; j < 4; j++) {
			double s = 0;
			int r;

			for (r = 0; r < 64; r++)
				s += (double)k[r * 4 + i] * k[r * 4 + j];
			bad += fabs(s - (i == j)) > 1e-5;
		}
	is_int(bad, 0, "Orthogonal [64, 4]: W^T W = I");
	stats(var_data(m, "o/bias"), 4, &mean, &var, &amax);
	ok(mean == 0.5f && var < 1e-12, "Constant 0.5");
	tfk_model_free(m);
out:
	return;
}

/* Regularizers, BatchNormalization updates, Rescaling ---------------------- */

static void regularizers(void)
{
	struct tfk_err err = { 0, "" };
	struct tfk_model *m = build_text(
		"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\","
		" \"layers\": [{\"class_name\": \"InputLayer\", \"config\": "
		"{\"name\": \"x\", \"batch_input_shape\": [null, 5]}}, "
		"{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\", "
		"\"units\": 3, \"kernel_regularizer\": {\"class_name\": "
		"\"L1L2\", \"config\": {\"l1\": 0.01, \"l2\": 0.02}}, "
		"\"bias_regularizer\": \"l2\"}}, {\"class_name\": "
		"\"BatchNormalization\", \"config\": {\"name\": \"bn\", "
		"\"momentum\": 0.9, \"gamma_regularizer\": {\"class_name\": "
		"\"L1\", \"config\": {\"l1\": 0.5}}}}]}}", 4, &err);
	const char *fetch[1];
	const struct tfk_tensor *out;
	struct tfk_exec *ex;
	double want = 0;
	float *w, *b, *g;
	int i;

	ok(m != NULL, "regularized model builds: %s", err.msg);
	if (!m)
		return;
	ok(m->vars[0].l1 == 0.01f && m->vars[0].l2 == 0.02f &&
	   m->vars[1].l1 == 0 && m->vars[1].l2 == 0.01f &&
	   m->vars[2].l1 == 0.5f, "factors on the variables");
	ok(m->n_vars == 6 && !m->vars[4].trainable && !m->vars[5].trainable &&
	   m->vars[2].trainable, "BN moving stats not trainable");
	ok(m->n_updates == 2 && m->updates[0].momentum == 0.9f &&
	   m->updates[0].var == m->vars[4].var &&
	   m->updates[1].var == m->vars[5].var &&
	   m->updates[0].value.index == 1 && m->updates[1].value.index == 2,
	   "two updates: moving_mean <- batch mean, moving_variance <- "
	   "batch variance, momentum 0.9");
	ok(m->n_updates == 2 && !strcmp(tfk_graph_node(m->g,
		m->updates[0].value.node)->op->name, "FusedBatchNormV3") &&
	   tfk_node_attr_b(tfk_graph_node(m->g, m->updates[0].value.node),
			   "is_training", 0), "updates from the training "
	   "FusedBatchNormV3");
	w = var_data(m, "d/kernel");
	b = var_data(m, "d/bias");
	g = var_data(m, "bn/gamma");
	for (i = 0; i < 3; i++) {
		b[i] = 0.25f * (float)(i + 1);
		g[i] = -0.5f * (float)(i + 1);
		want += 0.01 * b[i] * b[i] + 0.5 * fabs(g[i]);
	}
	for (i = 0; i < 15; i++)
		want += 0.01 * fabs(w[i]) + 0.02 * w[i] * w[i];
	ok(m->reg_loss.node >= 0, "reg_loss port");
	fetch[0] = pname(m->g, m->reg_loss);
	ok(!tfk_exec_new(&ex, m->g, NULL, 0, fetch, 1, NULL, &err) &&
	   !tfk_exec_run(ex, NULL, 0, &out, &err), "reg_loss runs: %s",
	   err.msg);
	ok(ex && out->rank == 0 && fabs(*(float *)out->data - want) <=
	   1e-6 * want, "reg_loss %.7g == sum l1|w| + l2 w^2 = %.7g",
	   ex ? *(float *)out->data : 0, want);
	tfk_exec_free(ex);
	tfk_model_free(m);
}

static void rescaling(void)
{
	struct tfk_err err = { 0, "" };
	struct tfk_model *m = build_text(
		"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\","
		" \"layers\": [{\"class_name\": \"InputLayer\", \"config\": "
		"{\"name\": \"px\", \"batch_input_shape\": [null, 2, 2], "
		"\"dtype\": \"uint8\"}}, {\"class_name\": \"Rescaling\", "
		"\"config\": {\"name\": \"r\", \"scale\": 0.00392156862745098,"
		" \"offset\": 0.0}}, {\"class_name\": \"Flatten\", \"config\": "
		"{\"name\": \"f\"}}]}}", 4, &err);
	const char *feeds[1] = { "px" }, *fetch[2];
	const struct tfk_tensor *out[2];
	struct tfk_tensor x;
	struct tfk_exec *ex;
	int64_t s[3] = { 1, 2, 2 };
	uint8_t px[4] = { 0, 1, 128, 255 };
	int i, good = 1;

	ok(m != NULL, "uint8 input + Rescaling builds: %s", err.msg);
	if (!m)
		return;
	ok(m->inputs[0].dtype == TFK_DT_UINT8, "input uint8");
	tfk_tensor_init_view(&x, TFK_DT_UINT8, 3, s, px, 4, TFK_OWN_BORROWED,
			     &err);
	fetch[0] = pname(m->g, m->outputs[0].infer);
	fetch[1] = pname(m->g, m->outputs[0].train);
	ok(!tfk_exec_new(&ex, m->g, feeds, 1, fetch, 2, NULL, &err) &&
	   !tfk_exec_run(ex, &x, 0, out, &err), "runs: %s", err.msg);
	for (i = 0; ex && i < 4; i++)
		good &= ((const float *)out[0]->data)[i] ==
			(float)px[i] * 0.00392156862745098f &&
			((const float *)out[1]->data)[i] ==
			((const float *)out[0]->data)[i];
	ok(good, "float32(px) * (1/255) in both branches");
	tfk_exec_free(ex);
	tfk_model_free(m);
}

/* Errors -------------------------------------------------------------------- */

#define SEQ(layers) "{\"class_name\": \"Sequential\", \"config\": {\"name\": " \
	"\"s\", \"layers\": [{\"class_name\": \"InputLayer\", \"config\": " \
	"{\"name\": \"x\", \"batch_input_shape\": [null, 4]}}, " layers "]}}"

static void errors(void)
{
	static const struct {
		const char *json, *msg;
	} cases[] = {
		{ SEQ("{\"class_name\": \"Conv3D\", \"config\": {\"name\": "
		      "\"c\"}}"),
		  "t.json: model.config.layers[1].class_name: unknown layer "
		  "'Conv3D'" },
		{ SEQ("{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\","
		      " \"unitz\": 3}}"),
		  "t.json: model.config.layers[1].config.unitz: unknown config "
		  "key" },
		{ SEQ("{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\","
		      " \"units\": -2}}"),
		  "t.json: model.config.layers[1].config.units: expected an "
		  "integer in 1..16777216" },
		{ SEQ("{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\","
		      " \"units\": 2, \"activation\": \"swoosh\"}}"),
		  "t.json: model.config.layers[1].config.activation: unknown "
		  "activation 'swoosh'" },
		{ SEQ("{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\","
		      " \"units\": 2, \"kernel_constraint\": {\"class_name\": "
		      "\"MaxNorm\"}}}"),
		  "t.json: model.config.layers[1].config.kernel_constraint: "
		  "only null is supported" },
		{ SEQ("{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\","
		      " \"units\": 2, \"kernel_initializer\": \"glorot\"}}"),
		  "t.json: model.config.layers[1].config.kernel_initializer: "
		  "unknown initializer 'glorot'" },
		{ SEQ("{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\","
		      " \"units\": 2, \"kernel_initializer\": {\"class_name\": "
		      "\"RandomNormal\", \"config\": {\"stdev\": 1}}}}"),
		  "t.json: model.config.layers[1].config.kernel_initializer."
		  "config.stdev: unknown key" },
		{ SEQ("{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\","
		      " \"units\": 2, \"kernel_regularizer\": {\"class_name\": "
		      "\"L2\", \"config\": {\"l2\": -1}}}}"),
		  "t.json: model.config.layers[1].config.kernel_regularizer."
		  "config.l2: expected a number >= 0" },
		{ SEQ("{\"class_name\": \"Dropout\", \"config\": {\"name\": "
		      "\"d\", \"rate\": 1.5}}"),
		  "t.json: model.config.layers[1].config.rate: expected a "
		  "number in [0, 1)" },
		{ SEQ("{\"class_name\": \"Conv2D\", \"config\": {\"name\": \"c\","
		      " \"filters\": 2, \"kernel_size\": [3, 3]}}"),
		  "t.json: model.config.layers[1]: expected an input [batch, h,"
		  " w, channels]" },
		{ SEQ("{\"class_name\": \"Conv2D\", \"config\": {\"name\": \"c\","
		      " \"filters\": 2, \"kernel_size\": [3], "
		      "\"data_format\": \"channels_first\"}}"),
		  "t.json: model.config.layers[1].config.kernel_size: expected "
		  "an integer or a list of 2 integers in 1..65536" },
		{ SEQ("{\"class_name\": \"Dense\", \"config\": {\"name\": \"x\","
		      " \"units\": 2}}"),
		  "t.json: model.config.layers[1].config.name: 'x' is also the "
		  "name of layers[0]" },
		{ SEQ("{\"class_name\": \"Dense\"}"),
		  "t.json: model.config.layers[1].config: expected an object" },
		{ "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\","
		  " \"layers\": [{\"class_name\": \"Dense\", \"config\": "
		  "{\"name\": \"d\", \"units\": 2}}]}}",
		  "t.json: model.config.layers[0].config: the first layer needs "
		  "batch_input_shape (or an InputLayer first)" },
		{ "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\","
		  " \"layerz\": []}}",
		  "t.json: model.config.layerz: unknown key" },
		{ "{\"class_name\": \"Graph\", \"config\": {}}",
		  "t.json: model.class_name: unknown model class 'Graph' "
		  "(expected Sequential or Functional)" },
		{ "{\"class_name\": \"Functional\", \"config\": {\"name\": \"f\","
		  " \"layers\": [{\"class_name\": \"InputLayer\", \"name\": "
		  "\"i\", \"config\": {\"name\": \"i\", \"batch_input_shape\": "
		  "[null, 3]}, \"inbound_nodes\": []}, {\"class_name\": "
		  "\"Dense\", \"name\": \"d\", \"config\": {\"name\": \"d\", "
		  "\"units\": 1}, \"inbound_nodes\": [[[\"nope\", 0, 0, {}]]]}],"
		  " \"input_layers\": [[\"i\", 0, 0]], \"output_layers\": "
		  "[[\"d\", 0, 0]]}}",
		  "t.json: model.config.layers[1].inbound_nodes[0]: unknown "
		  "layer 'nope'" },
		{ "{\"class_name\": \"Functional\", \"config\": {\"name\": \"f\","
		  " \"layers\": [{\"class_name\": \"InputLayer\", \"name\": "
		  "\"i\", \"config\": {\"name\": \"i\", \"batch_input_shape\": "
		  "[null, 3]}, \"inbound_nodes\": []}, {\"class_name\": "
		  "\"Dense\", \"name\": \"d\", \"config\": {\"name\": \"d\", "
		  "\"units\": 1}, \"inbound_nodes\": [[[\"d\", 0, 0, {}]]]}],"
		  " \"input_layers\": [[\"i\", 0, 0]], \"output_layers\": "
		  "[[\"d\", 0, 0]]}}",
		  "t.json: model.config.layers[1].inbound_nodes[0]: its inputs "
		  "are never computed (a node index past a layer's calls, or a "
		  "cycle)" },
		{ "{\"class_name\": \"Functional\", \"config\": {\"name\": \"f\","
		  " \"layers\": [{\"class_name\": \"InputLayer\", \"name\": "
		  "\"i\", \"config\": {\"name\": \"i\", \"batch_input_shape\": "
		  "[null, 3]}, \"inbound_nodes\": []}, {\"class_name\": "
		  "\"Add\", \"name\": \"a\", \"config\": {\"name\": \"a\"}, "
		  "\"inbound_nodes\": [[[\"i\", 0, 0, {}]]]}],"
		  " \"input_layers\": [[\"i\", 0, 0]], \"output_layers\": "
		  "[[\"a\", 0, 0]]}}",
		  "t.json: model.config.layers[1]: a merge layer takes at least "
		  "2 inputs" },
		{ "{\"class_name\": \"Functional\", \"config\": {\"name\": \"f\","
		  " \"layers\": [{\"class_name\": \"InputLayer\", \"name\": "
		  "\"i\", \"config\": {\"name\": \"i\", \"batch_input_shape\": "
		  "[null, 3]}, \"inbound_nodes\": []}, {\"class_name\": "
		  "\"InputLayer\", \"name\": \"j\", \"config\": {\"name\": \"j\","
		  " \"batch_input_shape\": [null, 4]}, \"inbound_nodes\": []}, "
		  "{\"class_name\": \"Add\", \"name\": \"a\", \"config\": "
		  "{\"name\": \"a\"}, \"inbound_nodes\": [[[\"i\", 0, 0, {}], "
		  "[\"j\", 0, 0, {}]]]}], \"input_layers\": [[\"i\", 0, 0], "
		  "[\"j\", 0, 0]], \"output_layers\": [[\"a\", 0, 0]]}}",
		  "t.json: model.config.layers[2]: node a/AddV2: inputs 0 and 1: "
		  "shapes [?, 3] "
		  "and [?, 4] do not broadcast (dim 1: 3 vs 4)" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tfk_err err = { 0, "" };
		struct tfk_model *m = build_text(cases[i].json, 1, &err);

		ok(m == NULL && err.code == TFK_EINVAL, "error case %zu fails",
		   i);
		is_str(err.msg, cases[i].msg, "message %zu", i);
		tfk_model_free(m);
	}
}

/* Failed allocations: each returns ENOMEM and leaks nothing (ASan). */
static void alloc_failures(void)
{
	json_t *j = load_json("examples/models/shared_residual.json", NULL);
	struct tfk_err err = { 0, "" };
	struct tfk_model *m = NULL;
	long k;
	int bad = 0, n = 0;

	for (k = 0; k < 100000; k++) {
		int rc;

		tfk_alloc_fail_after(k);
		rc = tfk_keras_build(j, "t", 1, &m, &err);
		tfk_alloc_fail_after(-1);
		if (!rc)
			break;
		n++;
		bad += rc != TFK_ENOMEM || m != NULL;
	}
	ok(m != NULL, "builds once allocations succeed (after %d failures)",
	   n);
	is_int(bad, 0, "every failed allocation gives ENOMEM and no model");
	tfk_model_free(m);
	json_decref(j);
}

int main(void)
{
	mlp();
	functional();
	initializers();
	regularizers();
	rescaling();
	errors();
	alloc_failures();
	return tap_done();
}
