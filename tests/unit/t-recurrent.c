/*
 * t-recurrent.c - Keras LSTM, GRU and SimpleRNN (nn/recurrent.c).
 *
 * Numerics: each case builds the layer in a Functional model with
 * tfk_keras_build, sets its weights and input to deterministic values,
 * runs the inference and training branches and the gradients of
 * sum(y_train * r) (r random) with respect to the input and every
 * weight, and tests/py/torch_rnn.py recomputes them independently:
 * torch.nn.LSTM/GRU/RNN (autograd, float64) where torch has the
 * configuration (Keras weights converted: transposes, GRU gate order
 * z, r, h -> r, z, n), else a numpy float64 implementation of Keras'
 * cell formulas with central finite-difference gradients (GRU
 * reset_after=False, non-default activations). Cases cover
 * return_sequences on and off, go_backwards, no bias, a single step and
 * 70 steps (the chunked Unpack/Pack path past 64).
 *
 * Error measure: max |ours - ref| / max |ref| over a tensor. Bounds:
 * forward 2e-6, gradients 1e-5 (float32 through up to 70 steps; the
 * finite differences are accurate to ~1e-9). Max observed errors are
 * printed as diagnostics.
 *
 * Also: weight names and shapes as Keras names them, the initializers
 * (unit_forget_bias, orthogonal recurrent kernels, glorot kernels),
 * Embedding -> LSTM in a Sequential model, and the refusals with
 * their JSON paths.
 */
#include "nn/model.h"
#include "graph/exec.h"
#include "graph/graph.h"
#include "layercmp.h"
#include "tap.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAXF 8

struct rcase {
	const char *cls;
	const char *cfg;	/* the layer's config, JSON */
	int64_t shape[3];	/* input [batch, T, features] */
};

struct rrun {
	int ok;
	char dir[256];
	int n_fetch;
	char fetch[MAXF][64];
	int n_extra;		/* zero gradients written without a fetch */
	char extra[MAXF][64];
};

/* Functional model: InputLayer "in0" [null, T, F] -> layer "L". */
static json_t *wrap(const char *cls, const char *cfgs, int64_t t, int64_t f)
{
	json_t *cfg = json_loads(cfgs, 0, NULL), *layers;
	/* t < 0: an unknown number of steps (null) */
	json_t *shape = json_pack("[n, o, I]", t < 0 ? json_null() :
				  json_integer(t), (json_int_t)f);

	if (!cfg)
		return NULL;
	json_object_set_new(cfg, "name", json_string("L"));
	layers = json_pack("[{s:s, s:s, s:{s:o, s:s}, s:[]}, "
			   "{s:s, s:s, s:o, s:[[[s, i, i, {}]]]}]",
			   "class_name", "InputLayer", "name", "in0", "config",
			   "batch_input_shape", shape,
			   "name", "in0", "inbound_nodes",
			   "class_name", cls, "name", "L", "config", cfg,
			   "inbound_nodes", "in0", 0, 0);
	return json_pack("{s:s, s:{s:s, s:o, s:[[s, i, i]], s:[[s, i, i]]}}",
			 "class_name", "Functional", "config", "name", "m",
			 "layers", layers, "input_layers", "in0", 0, 0,
			 "output_layers", "L", 0, 0);
}

/* Run one concrete feed through fetch[0..nf) of m; NULL on failure. */
static struct tfk_exec *run(struct tfk_model *m, const char **feeds, int n,
			    const char **fetch, int nf,
			    const struct tfk_tensor *in,
			    const struct tfk_tensor **out, struct tfk_err *err)
{
	struct tfk_exec *ex = NULL;

	if (tfk_exec_new(&ex, m->g, feeds, n, fetch, nf, NULL, err) ||
	    tfk_exec_run(ex, in, 0, out, err)) {
		tfk_exec_free(ex);
		return NULL;
	}
	return ex;
}

/* Build, run ours, write meta.json + arrays for the oracle. */
static void prepare(const struct rcase *rc, struct rrun *rr, int idx)
{
	struct tfk_err err = { 0, "" };
	struct tfk_model *m = NULL;
	json_t *mj = wrap(rc->cls, rc->cfg, rc->shape[1], rc->shape[2]);
	json_t *meta, *jws, *m_json = NULL;
	struct tfk_tensor feeds[2], r;
	struct tfk_port xs[4], dxs[4], rp;
	const char *feed_names[2] = { "in0", "r" }, *fetch[MAXF];
	const struct tfk_tensor *out[MAXF];
	struct tfk_exec *ex = NULL;
	const struct tfk_tdesc *yd;
	int k, n_x = 0, nf = 0;
	int64_t j;
	char *s;

	memset(feeds, 0, sizeof(feeds));
	memset(&r, 0, sizeof(r));
	snprintf(rr->dir, sizeof(rr->dir), "%s/case%02d", tap_tmpdir(), idx);
	mkdir(rr->dir, 0755);
	if (!mj || tfk_keras_build(mj, "t: model", 7, &m, &err)) {
		tap_diag("%s: build: %s", rc->cls, err.msg);
		json_decref(mj);
		return;
	}
	for (k = 0; k < m->n_vars; k++) {
		const char *nm;
		struct tfk_tensor *t = tfk_graph_var_at(m->g, m->vars[k].var,
							 &nm);

		for (j = 0; j < tfk_tensor_numel(t); j++)
			((float *)t->data)[j] = (float)(tap_val(100 + k, j) * 0.6);
		tfk_graph_find(m->g, nm, &xs[n_x++], &err);
	}
	tfk_tensor_init(&feeds[0], TFK_DT_FLOAT, 3, rc->shape, &err);
	for (j = 0; j < tfk_tensor_numel(&feeds[0]); j++)
		((float *)feeds[0].data)[j] = (float)tap_val(10, j);
	yd = tfk_graph_desc(m->g, m->outputs[0].train);
	tfk_graph_placeholder(m->g, "r", TFK_DT_FLOAT, yd->rank, yd->shape,
			      &rp, &err);
	tfk_graph_find(m->g, "in0", &xs[n_x++], &err);
	if (tfk_graph_gradients(m->g, &m->outputs[0].train, &rp, 1, xs, n_x,
				dxs, &err)) {
		tap_diag("%s: gradients: %s", rc->cls, err.msg);
		goto out;
	}
	fetch[nf] = port_name(m->g, m->outputs[0].infer);
	snprintf(rr->fetch[nf++], 64, "y_infer.bin");
	fetch[nf] = port_name(m->g, m->outputs[0].train);
	snprintf(rr->fetch[nf++], 64, "y_train.bin");
	for (k = 0; k < n_x; k++) {
		if (dxs[k].node < 0) {
			/* no path to the output (the recurrent kernel of
			 * one step): a zero gradient */
			struct tfk_tensor *t = tfk_graph_var_at(
				m->g, m->vars[k].var, NULL);
			char nm[32];
			void *z = calloc(1, t->nbytes);

			snprintf(nm, sizeof(nm), "ours_dw%d.bin", k);
			write_bin(rr->dir, nm, z, t->nbytes);
			free(z);
			snprintf(rr->extra[rr->n_extra++], 64, "dw%d.bin", k);
			continue;
		}
		fetch[nf] = port_name(m->g, dxs[k]);
		if (k < m->n_vars)
			snprintf(rr->fetch[nf++], 64, "dw%d.bin", k);
		else
			snprintf(rr->fetch[nf++], 64, "dx0.bin");
	}
	/* dropout: the training branch's mask, for the oracle */
	{
		char mn[64];
		struct tfk_port mp;

		if (!tfk_graph_find(m->g, "train/L/dropout_mask", &mp, NULL)) {
			fetch[nf] = port_name(m->g, mp);
			snprintf(mn, sizeof(mn), "mask.bin");
			snprintf(rr->fetch[nf++], 64, "%s", mn);
		}
	}
	/* r has the output's shape: run once to learn it */
	ex = run(m, feed_names, 1, &fetch[1], 1, feeds, out, &err);
	if (!ex) {
		tap_diag("%s: run: %s", rc->cls, err.msg);
		goto out;
	}
	tfk_tensor_init(&r, TFK_DT_FLOAT, out[0]->rank, out[0]->shape, &err);
	tfk_exec_free(ex);
	for (j = 0; j < tfk_tensor_numel(&r); j++)
		((float *)r.data)[j] = (float)tap_val(99, j);
	feeds[1] = r;
	ex = run(m, feed_names, 2, fetch, nf, feeds, out, &err);
	if (!ex) {
		tap_diag("%s: run: %s", rc->cls, err.msg);
		goto out;
	}
	rr->n_fetch = nf;
	if (!strcmp(rr->fetch[nf - 1], "mask.bin")) {
		/* the mask is an input of the oracle, not a result */
		const struct tfk_tensor *mt = out[nf - 1];
		const float *mv = mt->data;
		float keep = 0;
		int64_t n0 = 0, n1 = 0, bad = 0;

		sscanf(strstr(rc->cfg, "\"dropout\": ") + 11, "%f", &keep);
		keep = 1 / (1 - keep);
		for (j = 0; j < tfk_tensor_numel(mt); j++) {
			n0 += mv[j] == 0;
			n1 += mv[j] == keep;
			bad += mv[j] != 0 && mv[j] != keep;
		}
		ok(!bad && n0 && n1 && mt->rank == 3 &&
		   mt->shape[0] == rc->shape[0] && mt->shape[1] == 1 &&
		   mt->shape[2] == rc->shape[2], "%s %s: mask [batch, 1, "
		   "features] of 0 (%lld) and 1 / (1 - rate) (%lld)",
		   rc->cls, rc->cfg, (long long)n0, (long long)n1);
		write_bin(rr->dir, "mask.bin", mv, mt->nbytes);
		m_json = json_pack("{s:s, s:o}", "file", "mask.bin", "shape",
				   shape_json(mt->rank, mt->shape));
		rr->n_fetch = --nf;
	}
	for (k = 0; k < rr->n_extra; k++)
		snprintf(rr->fetch[rr->n_fetch++], 64, "%s", rr->extra[k]);
	for (k = 0; k < nf; k++) {
		char nm[80];

		snprintf(nm, sizeof(nm), "ours_%s", rr->fetch[k]);
		write_bin(rr->dir, nm, out[k]->data, out[k]->nbytes);
	}
	tfk_exec_free(ex);
	write_bin(rr->dir, "r.bin", r.data, r.nbytes);
	write_bin(rr->dir, "x0.bin", feeds[0].data, feeds[0].nbytes);
	jws = json_array();
	for (k = 0; k < m->n_vars; k++) {
		struct tfk_tensor *t = tfk_graph_var_at(m->g, m->vars[k].var,
							 NULL);
		char nm[16];

		snprintf(nm, sizeof(nm), "w%d.bin", k);
		write_bin(rr->dir, nm, t->data, t->nbytes);
		json_array_append_new(jws, json_pack("{s:s, s:o}", "file", nm,
						     "shape", shape_json(
							     t->rank,
							     t->shape)));
	}
	meta = json_pack("{s:s, s:o, s:[{s:s, s:o}], s:o}", "class", rc->cls,
			 "config", json_loads(rc->cfg, 0, NULL), "inputs",
			 "file", "x0.bin", "shape", shape_json(3, rc->shape),
			 "weights", jws);
	if (m_json)
		json_object_set_new(meta, "mask", m_json);
	s = json_dumps(meta, 0);
	write_bin(rr->dir, "meta.json", s, strlen(s));
	free(s);
	json_decref(meta);
	rr->ok = 1;
out:
	tfk_tensor_release(&feeds[0]);
	tfk_tensor_release(&r);
	tfk_model_free(m);
	json_decref(mj);
}

static double worst_f, worst_g;

static void compare(const struct rcase *rc, struct rrun *rr)
{
	char p[400], *how;
	size_t n;
	int k;

	snprintf(p, sizeof(p), "%s/oracle.txt", rr->dir);
	how = tap_read_file(p, &n);
	for (k = 0; k < rr->n_fetch; k++) {
		size_t n1, n2;
		double e = oracle_err(rr->dir, rr->fetch[k], &n1, &n2);
		int fwd = !strncmp(rr->fetch[k], "y_", 2);

		if (e < 0) {
			ok(0, "%s %s %s: reference result (%zu vs %zu values)",
			   rc->cls, rc->cfg, rr->fetch[k], n1, n2);
			continue;
		}
		if (fwd && e > worst_f)
			worst_f = e;
		if (!fwd && e > worst_g)
			worst_g = e;
		ok(e <= (fwd ? 2e-6 : 1e-5), "%s %s T=%lld %s == %s (err %.2g)",
		   rc->cls, rc->cfg, (long long)rc->shape[1], rr->fetch[k],
		   how ? how : "?", e);
	}
	free(how);
}

static const struct rcase cases[] = {
	{ "LSTM", "{\"units\": 4}", { 2, 5, 3 } },
	{ "LSTM", "{\"units\": 3, \"return_sequences\": true}", { 2, 6, 4 } },
	{ "LSTM", "{\"units\": 4, \"go_backwards\": true, "
	  "\"return_sequences\": true}", { 3, 5, 2 } },
	{ "LSTM", "{\"units\": 3, \"use_bias\": false, \"go_backwards\": "
	  "true}", { 2, 4, 3 } },
	{ "LSTM", "{\"units\": 2}", { 2, 1, 3 } },
	{ "LSTM", "{\"units\": 2, \"return_sequences\": true}", { 2, 70, 2 } },
	{ "LSTM", "{\"units\": 3, \"activation\": \"relu\", "
	  "\"return_sequences\": true}", { 2, 4, 3 } },
	{ "GRU", "{\"units\": 4}", { 2, 5, 3 } },
	{ "GRU", "{\"units\": 3, \"return_sequences\": true, "
	  "\"go_backwards\": true}", { 2, 6, 4 } },
	{ "GRU", "{\"units\": 3, \"use_bias\": false}", { 2, 5, 3 } },
	{ "GRU", "{\"units\": 2, \"return_sequences\": true}", { 1, 70, 2 } },
	{ "GRU", "{\"units\": 4, \"reset_after\": false}", { 2, 5, 3 } },
	{ "GRU", "{\"units\": 3, \"reset_after\": false, \"return_sequences\":"
	  " true, \"go_backwards\": true}", { 2, 4, 2 } },
	{ "GRU", "{\"units\": 3, \"reset_after\": false, \"use_bias\": false}",
	  { 2, 4, 3 } },
	{ "LSTM", "{\"units\": 3, \"dropout\": 0.5, \"return_sequences\": "
	  "true}", { 4, 5, 16 } },
	{ "GRU", "{\"units\": 3, \"dropout\": 0.3, \"reset_after\": false}",
	  { 4, 4, 16 } },
	{ "SimpleRNN", "{\"units\": 4}", { 2, 5, 3 } },
	{ "SimpleRNN", "{\"units\": 3, \"activation\": \"relu\", "
	  "\"return_sequences\": true, \"go_backwards\": true}", { 2, 5, 3 } },
	{ "SimpleRNN", "{\"units\": 3, \"activation\": \"sigmoid\", "
	  "\"use_bias\": false}", { 2, 4, 2 } },
};

#define N_CASES (sizeof(cases) / sizeof(cases[0]))

/* Weights and initializers ------------------------------------------------ */

static struct tfk_model *build_one(const char *cls, const char *cfg,
				   int64_t t, int64_t f, struct tfk_err *err)
{
	json_t *mj = wrap(cls, cfg, t, f);
	struct tfk_model *m = NULL;

	if (mj)
		tfk_keras_build(mj, "spec.json: model", 3, &m, err);
	json_decref(mj);
	return m;
}

static void weights(void)
{
	static const struct {
		const char *cls, *cfg, *names;
	} w[] = {
		{ "LSTM", "{\"units\": 5}", "L/lstm_cell/kernel [3, 20] "
		  "L/lstm_cell/recurrent_kernel [5, 20] "
		  "L/lstm_cell/bias [20] " },
		{ "GRU", "{\"units\": 5}", "L/gru_cell/kernel [3, 15] "
		  "L/gru_cell/recurrent_kernel [5, 15] "
		  "L/gru_cell/bias [2, 15] " },
		{ "GRU", "{\"units\": 5, \"reset_after\": false}",
		  "L/gru_cell/kernel [3, 15] "
		  "L/gru_cell/recurrent_kernel [5, 15] "
		  "L/gru_cell/bias [15] " },
		{ "SimpleRNN", "{\"units\": 5, \"use_bias\": false}",
		  "L/simple_rnn_cell/kernel [3, 5] "
		  "L/simple_rnn_cell/recurrent_kernel [5, 5] " },
	};
	struct tfk_err err = { 0, "" };
	size_t i;

	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		struct tfk_model *m = build_one(w[i].cls, w[i].cfg, 4, 3, &err);
		char got[400] = "", sh[64];
		int k;

		for (k = 0; m && k < m->n_vars; k++) {
			const char *nm;
			struct tfk_tensor *t = tfk_graph_var_at(
				m->g, m->vars[k].var, &nm);

			tfk_shape_str(t->rank, t->shape, sh, sizeof(sh));
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
				 "%s %s ", nm, sh);
		}
		is_str(got, w[i].names, "%s %s: weights named as Keras",
		       w[i].cls, w[i].cfg);
		tfk_model_free(m);
	}
}

static void initializers(void)
{
	struct tfk_err err = { 0, "" };
	struct tfk_model *m = build_one("LSTM", "{\"units\": 6}", 4, 3, &err);
	struct tfk_tensor *k, *rk, *b;
	const float *p;
	double worst = 0, lim = sqrt(6.0 / (3 + 24)), mx = 0;
	int i, j, l, bad = 0;

	ok(m != NULL, "LSTM builds: %s", err.msg);
	if (!m)
		return;
	k = tfk_graph_var(m->g, "L/lstm_cell/kernel");
	rk = tfk_graph_var(m->g, "L/lstm_cell/recurrent_kernel");
	b = tfk_graph_var(m->g, "L/lstm_cell/bias");
	p = b->data;
	for (i = 0; i < 24; i++)
		bad += p[i] != (i >= 6 && i < 12 ? 1.0f : 0.0f);
	is_int(bad, 0, "unit_forget_bias: bias is 0 except the forget "
	       "gate's 1");
	/* orthogonal [6, 24]: the rows are orthonormal */
	p = rk->data;
	for (i = 0; i < 6; i++)
		for (j = 0; j < 6; j++) {
			double d = 0;

			for (l = 0; l < 24; l++)
				d += (double)p[i * 24 + l] * p[j * 24 + l];
			d -= i == j;
			if (fabs(d) > worst)
				worst = fabs(d);
		}
	ok(worst < 1e-5, "recurrent_kernel is orthogonal: R R^T = I (err "
	   "%.2g)", worst);
	p = k->data;
	for (i = 0; i < 72; i++)
		if (fabs(p[i]) > mx)
			mx = fabs(p[i]);
	ok(mx <= lim && mx > lim * 0.8, "kernel glorot_uniform: max |w| %.3f "
	   "within the limit %.3f", mx, lim);
	tfk_model_free(m);
	m = build_one("LSTM", "{\"units\": 2, \"unit_forget_bias\": false, "
		      "\"bias_initializer\": \"ones\"}", 4, 3, &err);
	ok(m != NULL, "LSTM unit_forget_bias false builds: %s", err.msg);
	if (m) {
		p = tfk_graph_var(m->g, "L/lstm_cell/bias")->data;
		for (bad = 0, i = 0; i < 8; i++)
			bad += p[i] != 1.0f;
		is_int(bad, 0, "unit_forget_bias false: bias_initializer "
		       "everywhere");
		tfk_model_free(m);
	}
}

/* Embedding -> LSTM -> Dense, Sequential: shapes and a run. */
static void text_model(void)
{
	const char *js = "{\"class_name\": \"Sequential\", \"config\": "
		"{\"name\": \"s\", \"layers\": [{\"class_name\": "
		"\"InputLayer\", \"config\": {\"name\": \"tokens\", "
		"\"batch_input_shape\": [null, 7], \"dtype\": \"int32\"}}, "
		"{\"class_name\": \"Embedding\", \"config\": {\"name\": "
		"\"emb\", \"input_dim\": 20, \"output_dim\": 4, "
		"\"input_length\": 7}}, "
		"{\"class_name\": \"LSTM\", \"config\": {\"name\": \"lstm\", "
		"\"units\": 5, \"activation\": \"tanh\", "
		"\"recurrent_activation\": \"sigmoid\", \"use_bias\": true, "
		"\"kernel_initializer\": {\"class_name\": \"GlorotUniform\", "
		"\"config\": {\"seed\": null}}, \"recurrent_initializer\": "
		"{\"class_name\": \"Orthogonal\", \"config\": {\"gain\": 1.0, "
		"\"seed\": null}}, \"bias_initializer\": {\"class_name\": "
		"\"Zeros\", \"config\": {}}, \"unit_forget_bias\": true, "
		"\"kernel_regularizer\": null, \"recurrent_regularizer\": null,"
		" \"bias_regularizer\": null, \"activity_regularizer\": null, "
		"\"kernel_constraint\": null, \"recurrent_constraint\": null, "
		"\"bias_constraint\": null, \"dropout\": 0.0, "
		"\"recurrent_dropout\": 0.0, \"implementation\": 2, "
		"\"return_sequences\": false, \"return_state\": false, "
		"\"go_backwards\": false, \"stateful\": false, \"unroll\": "
		"false, \"time_major\": false, \"trainable\": true, \"dtype\": "
		"\"float32\"}}, {\"class_name\": \"Dense\", \"config\": "
		"{\"name\": \"out\", \"units\": 3, \"activation\": "
		"\"softmax\"}}]}}";
	json_t *mj = json_loads(js, 0, NULL);
	struct tfk_err err = { 0, "" };
	struct tfk_model *m = NULL;
	const struct tfk_tensor *out[1];
	struct tfk_tensor x;
	struct tfk_exec *ex;
	const char *feed = "tokens", *fetch;
	int64_t s[2] = { 2, 7 }, i;
	double sum = 0;

	ok(!tfk_keras_build(mj, "spec.json: model", 1, &m, &err),
	   "Embedding -> LSTM -> Dense (a full tf.keras 2 LSTM config) "
	   "builds: %s", err.msg);
	json_decref(mj);
	if (!m)
		return;
	fetch = port_name(m->g, m->outputs[0].infer);
	tfk_tensor_init(&x, TFK_DT_INT32, 2, s, &err);
	for (i = 0; i < 14; i++)
		((int32_t *)x.data)[i] = (int32_t)(i * 3 % 20);
	ex = run(m, &feed, 1, &fetch, 1, &x, out, &err);
	ok(ex && out[0]->rank == 2 && out[0]->shape[0] == 2 &&
	   out[0]->shape[1] == 3, "runs: output [2, 3] %s", err.msg);
	for (i = 0; ex && i < 3; i++)
		sum += ((const float *)out[0]->data)[i];
	ok(ex && fabs(sum - 1) < 1e-6, "softmax row sums to 1 (%.7f)", sum);
	tfk_exec_free(ex);
	tfk_tensor_release(&x);
	tfk_model_free(m);
}

/* A GRU config as Keras 3 writes it (model.to_json()). */
static void keras3(void)
{
	const char *cfg = "{\"trainable\": true, \"dtype\": {\"module\": "
		"\"keras\", \"class_name\": \"DTypePolicy\", \"config\": "
		"{\"name\": \"float32\"}, \"registered_name\": null}, "
		"\"return_sequences\": false, \"return_state\": false, "
		"\"go_backwards\": false, \"stateful\": false, \"unroll\": "
		"false, \"zero_output_for_mask\": false, \"units\": 4, "
		"\"activation\": \"tanh\", \"recurrent_activation\": "
		"\"sigmoid\", \"use_bias\": true, \"kernel_initializer\": "
		"{\"module\": \"keras.initializers\", \"class_name\": "
		"\"GlorotUniform\", \"config\": {\"seed\": null}, "
		"\"registered_name\": null}, \"recurrent_initializer\": "
		"{\"module\": \"keras.initializers\", \"class_name\": "
		"\"Orthogonal\", \"config\": {\"seed\": null, \"gain\": 1.0}, "
		"\"registered_name\": null}, \"bias_initializer\": "
		"{\"module\": \"keras.initializers\", \"class_name\": "
		"\"Zeros\", "
		"\"config\": {}, \"registered_name\": null}, "
		"\"kernel_regularizer\": null, \"recurrent_regularizer\": "
		"null, \"bias_regularizer\": null, \"activity_regularizer\": "
		"null, \"kernel_constraint\": null, \"recurrent_constraint\": "
		"null, \"bias_constraint\": null, \"dropout\": 0.0, "
		"\"recurrent_dropout\": 0.0, \"reset_after\": true, "
		"\"seed\": null, \"use_cudnn\": \"auto\"}";
	struct tfk_err err = { 0, "" };
	struct tfk_model *m = build_one("GRU", cfg, 6, 3, &err);

	ok(m != NULL, "a Keras 3 GRU config builds: %s", err.msg);
	ok(m && tfk_graph_var(m->g, "L/gru_cell/bias") &&
	   tfk_graph_var(m->g, "L/gru_cell/bias")->rank == 2,
	   "  reset_after: bias [2, 12]");
	tfk_model_free(m);
}

/* Refusals --------------------------------------------------------------- */

static void errors(void)
{
	static const struct {
		const char *cls, *cfg;
		int64_t t;
		const char *msg;
	} e[] = {
		{ "LSTM", "{\"units\": 4}", -1, "spec.json: model.config."
		  "layers[1]: LSTM needs a known number of timesteps and "
		  "features, the input is [?, ?, 3] (give the InputLayer a "
		  "fixed length)" },
		{ "GRU", "{\"units\": 4, \"stateful\": true}", 5, "spec.json: "
		  "model.config.layers[1].config.stateful: true is not "
		  "supported" },
		{ "LSTM", "{\"units\": 4, \"return_state\": true}", 5,
		  "spec.json: model.config.layers[1].config.return_state: true "
		  "is not supported (a layer here has one output)" },
		{ "LSTM", "{\"units\": 4, \"recurrent_dropout\": 0.2}", 5,
		  "spec.json: model.config.layers[1].config.recurrent_dropout: "
		  "only 0 is supported (recurrent dropout is not implemented)" },
		{ "LSTM", "{\"units\": 4, \"dropout\": 0.2, "
		  "\"implementation\": 1}", 5, "spec.json: model.config."
		  "layers[1].config.implementation: dropout with implementation "
		  "1 (a mask per gate) is not supported; use 2" },
		{ "GRU", "{\"units\": 4, \"recurrent_dropout\": 1.5}", 5,
		  "spec.json: model.config.layers[1].config.recurrent_dropout: "
		  "expected a number in [0, 1)" },
		{ "SimpleRNN", "{\"units\": 4, \"time_major\": true}", 5,
		  "spec.json: model.config.layers[1].config.time_major: true "
		  "is not supported (inputs are [batch, timesteps, "
		  "features])" },
		{ "LSTM", "{\"units\": 0}", 5, "spec.json: model.config."
		  "layers[1].config.units: expected an integer in 1..65536" },
		{ "LSTM", "{}", 5, "spec.json: model.config.layers[1].config."
		  "units: expected an integer in 1..65536" },
		{ "LSTM", "{\"units\": 4, \"recurrent_activation\": "
		  "\"hard_sigmoid\"}", 5, "spec.json: model.config.layers[1]."
		  "config.recurrent_activation: unknown activation "
		  "'hard_sigmoid'" },
		{ "GRU", "{\"units\": 4, \"reset_after\": 1}", 5, "spec.json: "
		  "model.config.layers[1].config.reset_after: expected true or "
		  "false" },
		{ "GRU", "{\"units\": 4, \"unit_forget_bias\": true}", 5,
		  "spec.json: model.config.layers[1].config.unit_forget_bias: "
		  "unknown config key" },
		{ "SimpleRNN", "{\"units\": 4, \"recurrent_activation\": "
		  "\"sigmoid\"}", 5, "spec.json: model.config.layers[1].config."
		  "recurrent_activation: unknown config key" },
		{ "GRU", "{\"units\": 4, \"use_cudnn\": \"yes\"}", 5,
		  "spec.json: model.config.layers[1].config.use_cudnn: "
		  "expected \"auto\", true or false" },
		{ "LSTM", "{\"units\": 4, \"cell\": {}}", 5, "spec.json: model."
		  "config.layers[1].config.cell: unknown config key" },
		{ "LSTM", "{\"units\": 4, \"kernel_constraint\": \"max_norm\"}",
		  5, "spec.json: model.config.layers[1].config."
		  "kernel_constraint: only null is supported" },
		{ "LSTM", "{\"units\": 4}", 5000, "spec.json: model.config."
		  "layers[1]: 5000 timesteps: at most 4032 are supported (the "
		  "layer is unrolled)" },
	};
	struct tfk_err err;
	size_t i;

	for (i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
		struct tfk_model *m;

		memset(&err, 0, sizeof(err));
		m = build_one(e[i].cls, e[i].cfg, e[i].t, 3, &err);
		ok(!m, "%s %s refused", e[i].cls, e[i].cfg);
		is_str(err.msg, e[i].msg, "  its message");
		tfk_model_free(m);
	}
	/* rank 2 input: a Dense-like [batch, F] */
	{
		const char *js = "{\"class_name\": \"Sequential\", \"config\": "
			"{\"name\": \"s\", \"layers\": [{\"class_name\": "
			"\"LSTM\", \"config\": {\"name\": \"lstm\", \"units\": "
			"2, \"batch_input_shape\": [null, 8]}}]}}";
		json_t *mj = json_loads(js, 0, NULL);
		struct tfk_model *m = NULL;

		memset(&err, 0, sizeof(err));
		ok(tfk_keras_build(mj, "spec.json: model", 1, &m, &err) ==
		   TFK_EINVAL, "LSTM on a rank 2 input refused");
		is_str(err.msg, "spec.json: model.config.layers[0]: expected "
		       "an input of rank 3 [batch, timesteps, features], got "
		       "rank 2", "  its message");
		json_decref(mj);
		tfk_model_free(m);
	}
}

int main(void)
{
	static struct rrun runs[N_CASES];
	const char *dirs[N_CASES];
	size_t i;

	for (i = 0; i < N_CASES; i++) {
		prepare(&cases[i], &runs[i], (int)i);
		ok(runs[i].ok, "%s %s T=%lld: built and ran", cases[i].cls,
		   cases[i].cfg, (long long)cases[i].shape[1]);
	}
	for (i = 0; i < N_CASES; i++)
		dirs[i] = runs[i].ok ? runs[i].dir : NULL;
	ok(run_oracle("tests/py/torch_rnn.py", dirs, N_CASES) == 0,
	   "reference (torch_rnn.py) ran");
	for (i = 0; i < N_CASES; i++)
		if (runs[i].ok)
			compare(&cases[i], &runs[i]);
	tap_diag("max error: forward %.2g, gradients %.2g", worst_f, worst_g);
	weights();
	initializers();
	text_model();
	keras3();
	errors();
	return tap_done();
}
