/*
 * t-layers.c - every Keras layer of nn/layers.c against PyTorch: the
 * layer is built by tfk_keras_build (a Functional model around it), its
 * weights and inputs set to the same values on both sides, and compared:
 * the inference branch's output, the training branch's output, and the
 * gradients of sum(y_train * r) (r random) with respect to every float
 * input and every weight (tests/py/torch_layers.py computes them with
 * torch autograd in float64 from the same float32 values; Keras
 * semantics written out there: TF's asymmetric SAME padding, AvgPool
 * averaging over valid pixels, FusedBatchNormV3's Bessel-corrected batch
 * variance for the moving-variance update).
 *
 * Error measure: max |ours - torch| / max |torch| over a tensor. Bounds:
 * forward 2e-6 (float32 rounding of sums of at most ~100 products),
 * gradients 1e-5. Max observed errors are printed as diagnostics; at the
 * time of writing: forward <= 4e-7, gradients <= 1e-6 over all cases.
 *
 * Dropout and SpatialDropout are random in the training branch, so they
 * are checked by their definition instead: kept elements are x / (1 -
 * rate) exactly, dropped ones 0, the kept fraction within 5 sigma of 1 -
 * rate, spatial masks constant over the spatial axes, the gradient the
 * same mask times r, and the inference branch the identity.
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

#define MAXF 24

struct lcase {
	const char *cls;
	const char *cfg;	/* the layer's config, JSON */
	int n_in;
	int rank;		/* input rank with the batch */
	int64_t shape[6];	/* concrete input shape */
	const char *dtype;	/* input dtype: "float32" (NULL) or "int32" */
	int int_max;		/* int inputs in [0, int_max) */
};

/* What a case left for the comparison. */
struct lrun {
	int ok;			/* built and run */
	char dir[256];
	int n_fetch;
	char fetch[MAXF][64];	/* result file names ("y_infer.bin") */
};

static json_t *input_layer(const char *name, const struct lcase *lc)
{
	json_t *shape = json_array();
	int i;

	json_array_append_new(shape, json_null());
	for (i = 1; i < lc->rank; i++)
		json_array_append_new(shape, json_integer(lc->shape[i]));
	return json_pack("{s:s, s:s, s:{s:o, s:s, s:b, s:s}, s:[]}",
			 "class_name", "InputLayer", "name", name, "config",
			 "batch_input_shape", shape, "dtype",
			 lc->dtype ? lc->dtype : "float32", "sparse", 0,
			 "name", name, "inbound_nodes");
}

/* Functional model: inputs in0..in<n-1> -> layer "L" -> output. */
static json_t *wrap(const struct lcase *lc)
{
	json_t *layers = json_array(), *ins = json_array(), *node = json_array();
	json_t *cfg = json_loads(lc->cfg, 0, NULL), *m;
	int i;

	if (!cfg)
		return NULL;
	json_object_set_new(cfg, "name", json_string("L"));
	for (i = 0; i < lc->n_in; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "in%d", i);
		json_array_append_new(layers, input_layer(nm, lc));
		json_array_append_new(ins, json_pack("[s, i, i]", nm, 0, 0));
		json_array_append_new(node, json_pack("[s, i, i, {}]", nm, 0,
						      0));
	}
	json_array_append_new(layers, json_pack("{s:s, s:s, s:o, s:[o]}",
						"class_name", lc->cls, "name",
						"L", "config", cfg,
						"inbound_nodes", node));
	m = json_pack("{s:s, s:{s:s, s:o, s:o, s:[[s, i, i]]}}", "class_name",
		      "Functional", "config", "name", "m", "layers", layers,
		      "input_layers", ins, "output_layers", "L", 0, 0);
	return m;
}

/* Build, run ours, write meta.json + arrays for the oracle. */
static void prepare(const struct lcase *lc, struct lrun *lr, int idx)
{
	struct tfk_err err = { 0, "" };
	struct tfk_model *m = NULL;
	json_t *mj = wrap(lc), *meta, *jins, *jws;
	struct tfk_tensor feeds[4], r;
	struct tfk_port xs[12], dxs[12], rp;
	const char *feed_names[4] = { "in0", "in1", "in2", "r" };
	const char *fetch[MAXF];
	const struct tfk_tensor *out[MAXF];
	struct tfk_exec *ex = NULL;
	const struct tfk_tdesc *yd;
	int64_t rs[TFK_MAX_RANK];
	int i, k, n_x = 0, nf = 0, float_in = !lc->dtype;
	enum tfk_dtype dt = float_in ? TFK_DT_FLOAT : TFK_DT_INT32;
	char *s;

	snprintf(lr->dir, sizeof(lr->dir), "%s/case%02d", tap_tmpdir(), idx);
	mkdir(lr->dir, 0755);
	if (tfk_keras_build(mj, "t: model", 7, &m, &err)) {
		tap_diag("%s: build: %s", lc->cls, err.msg);
		json_decref(mj);
		return;
	}
	/* weights: deterministic values; BN variances positive */
	for (k = 0; k < m->n_vars; k++) {
		const char *nm;
		struct tfk_tensor *t = tfk_graph_var_at(m->g, m->vars[k].var,
							 &nm);
		int64_t j;

		for (j = 0; j < tfk_tensor_numel(t); j++) {
			double v = tap_val(100 + k, j) * 0.5;

			if (strstr(nm, "moving_variance"))
				v = 0.5 + fabs(v);
			((float *)t->data)[j] = (float)v;
		}
		tfk_graph_find(m->g, nm, &xs[n_x], &err);
		n_x++;
	}
	for (i = 0; i < lc->n_in; i++) {
		int64_t j;

		tfk_tensor_init(&feeds[i], dt, lc->rank, lc->shape, &err);
		for (j = 0; j < tfk_tensor_numel(&feeds[i]); j++) {
			if (float_in)
				((float *)feeds[i].data)[j] =
					(float)tap_val(10 + i, j);
			else
				((int32_t *)feeds[i].data)[j] = (int32_t)
					((tap_val(10 + i, j) + 1) / 2 * lc->int_max);
		}
	}
	yd = tfk_graph_desc(m->g, m->outputs[0].train);
	tfk_graph_placeholder(m->g, "r", TFK_DT_FLOAT, yd->rank, yd->shape,
			      &rp, &err);
	/* xs: weights, then float inputs */
	if (float_in)
		for (i = 0; i < lc->n_in; i++) {
			char nm[16];

			snprintf(nm, sizeof(nm), "in%d", i);
			tfk_graph_find(m->g, nm, &xs[n_x++], &err);
		}
	if (tfk_graph_gradients(m->g, &m->outputs[0].train, &rp, 1, xs, n_x,
				dxs, &err)) {
		tap_diag("%s: gradients: %s", lc->cls, err.msg);
		goto out;
	}
	fetch[nf] = port_name(m->g, m->outputs[0].infer);
	snprintf(lr->fetch[nf++], 64, "y_infer.bin");
	fetch[nf] = port_name(m->g, m->outputs[0].train);
	snprintf(lr->fetch[nf++], 64, "y_train.bin");
	for (k = 0; k < n_x; k++) {
		if (dxs[k].node < 0)
			continue;
		fetch[nf] = port_name(m->g, dxs[k]);
		if (k < m->n_vars)
			snprintf(lr->fetch[nf++], 64, "dw%d.bin", k);
		else
			snprintf(lr->fetch[nf++], 64, "dx%d.bin",
				 k - m->n_vars);
	}
	for (k = 0; k < m->n_updates; k++) {
		fetch[nf] = port_name(m->g, m->updates[k].value);
		snprintf(lr->fetch[nf++], 64, "upd%d.bin", k);
	}
	feed_names[lc->n_in] = "r";
	if (tfk_exec_new(&ex, m->g, feed_names, lc->n_in + 1, fetch, nf, NULL,
			 &err)) {
		tap_diag("%s: exec: %s", lc->cls, err.msg);
		goto out;
	}
	/* r has the training output's shape: run once to learn it */
	{
		struct tfk_exec *e1;
		const char *f1[1] = { fetch[1] };
		const struct tfk_tensor *o1;

		if (tfk_exec_new(&e1, m->g, feed_names, lc->n_in, f1, 1, NULL,
				 &err) ||
		    tfk_exec_run(e1, feeds, 0, &o1, &err)) {
			tap_diag("%s: run: %s", lc->cls, err.msg);
			tfk_exec_free(e1);
			goto out;
		}
		memcpy(rs, o1->shape, sizeof(rs));
		tfk_tensor_init(&r, TFK_DT_FLOAT, o1->rank, rs, &err);
		tfk_exec_free(e1);
	}
	for (k = 0; k < tfk_tensor_numel(&r); k++)
		((float *)r.data)[k] = (float)tap_val(99, k);
	feeds[lc->n_in] = r;
	if (tfk_exec_run(ex, feeds, 0, out, &err)) {
		tap_diag("%s: run: %s", lc->cls, err.msg);
		tfk_tensor_release(&r);
		goto out;
	}
	lr->n_fetch = nf;
	for (k = 0; k < nf; k++) {
		char nm[80];

		snprintf(nm, sizeof(nm), "ours_%s", lr->fetch[k]);
		write_bin(lr->dir, nm, out[k]->data, out[k]->nbytes);
	}
	write_bin(lr->dir, "r.bin", r.data, r.nbytes);
	/* the oracle's inputs */
	jins = json_array();
	for (i = 0; i < lc->n_in; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "x%d.bin", i);
		write_bin(lr->dir, nm, feeds[i].data, feeds[i].nbytes);
		json_array_append_new(jins, json_pack("{s:s, s:o, s:s}", "file",
						      nm, "shape",
						      shape_json(lc->rank,
								 lc->shape),
						      "dtype", lc->dtype ?
						      lc->dtype : "float32"));
	}
	jws = json_array();
	for (k = 0; k < m->n_vars; k++) {
		struct tfk_tensor *t = tfk_graph_var_at(m->g, m->vars[k].var,
							 NULL);
		char nm[16];

		snprintf(nm, sizeof(nm), "w%d.bin", k);
		write_bin(lr->dir, nm, t->data, t->nbytes);
		json_array_append_new(jws, json_pack("{s:s, s:o, s:s}", "file",
						     nm, "shape",
						     shape_json(t->rank,
								t->shape),
						     "dtype", "float32"));
	}
	meta = json_pack("{s:s, s:s, s:O, s:o, s:o}", "kind", "layer", "class",
			 lc->cls, "config", json_object_get(json_array_get(
				json_object_get(json_object_get(mj, "config"),
						"layers"), lc->n_in), "config"),
			 "inputs", jins, "weights", jws);
	s = json_dumps(meta, 0);
	write_bin(lr->dir, "meta.json", s, strlen(s));
	free(s);
	json_decref(meta);
	tfk_tensor_release(&r);
	lr->ok = 1;
out:
	for (i = 0; i < lc->n_in; i++)
		tfk_tensor_release(&feeds[i]);
	tfk_exec_free(ex);
	tfk_model_free(m);
	json_decref(mj);
}

static double worst_f, worst_g;

static void compare(const struct lcase *lc, struct lrun *lr)
{
	int k;

	for (k = 0; k < lr->n_fetch; k++) {
		size_t n1, n2;
		double e = oracle_err(lr->dir, lr->fetch[k], &n1, &n2);
		int fwd = !strncmp(lr->fetch[k], "y_", 2) ||
			!strncmp(lr->fetch[k], "upd", 3);

		if (e < 0) {
			ok(0, "%s %s: torch result (%zu vs %zu values)",
			   lc->cls, lr->fetch[k], n1, n2);
			continue;
		}
		if (fwd && e > worst_f)
			worst_f = e;
		if (!fwd && e > worst_g)
			worst_g = e;
		ok(e <= (fwd ? 2e-6 : 1e-5), "%s %s %s == torch (err %.2g)",
		   lc->cls, lc->cfg, lr->fetch[k], e);
	}
}

#define F2(b, a) 2, { b, a }, NULL, 0
#define F3(b, a, c) 3, { b, a, c }, NULL, 0
#define F4(b, a, c, d) 4, { b, a, c, d }, NULL, 0

static struct lcase cases[] = {
	{ "Dense", "{\"units\": 3, \"activation\": \"relu\"}", 1, F2(4, 5) },
	{ "Dense", "{\"units\": 4, \"activation\": \"tanh\"}", 1,
	  F3(3, 2, 5) },
	{ "Dense", "{\"units\": 2, \"activation\": \"sigmoid\", "
	  "\"use_bias\": false}", 1, F2(4, 3) },
	{ "Activation", "{\"activation\": \"relu6\"}", 1, F2(3, 8) },
	{ "Activation", "{\"activation\": \"elu\"}", 1, F2(3, 8) },
	{ "Activation", "{\"activation\": \"selu\"}", 1, F2(3, 8) },
	{ "Activation", "{\"activation\": \"softplus\"}", 1, F2(3, 8) },
	{ "Activation", "{\"activation\": \"softsign\"}", 1, F2(3, 8) },
	{ "Activation", "{\"activation\": \"swish\"}", 1, F2(3, 8) },
	{ "Activation", "{\"activation\": \"gelu\"}", 1, F2(3, 8) },
	{ "Activation", "{\"activation\": \"leaky_relu\"}", 1, F2(3, 8) },
	{ "Activation", "{\"activation\": \"exponential\"}", 1, F2(3, 8) },
	{ "Activation", "{\"activation\": \"softmax\"}", 1, F3(2, 3, 5) },
	{ "Activation", "{\"activation\": \"sigmoid\"}", 1, F2(3, 8) },
	{ "Activation", "{\"activation\": \"tanh\"}", 1, F2(3, 8) },
	{ "ReLU", "{\"max_value\": 6.0}", 1, F2(3, 8) },
	{ "LeakyReLU", "{\"alpha\": 0.1}", 1, F2(3, 8) },
	{ "Softmax", "{\"axis\": -1}", 1, F2(3, 6) },
	{ "ELU", "{\"alpha\": 1.0}", 1, F2(3, 8) },
	{ "Conv2D", "{\"filters\": 4, \"kernel_size\": [3, 3], "
	  "\"activation\": \"relu\"}", 1, F4(2, 7, 7, 3) },
	{ "Conv2D", "{\"filters\": 3, \"kernel_size\": [3, 2], "
	  "\"strides\": [2, 2], \"padding\": \"same\"}", 1, F4(2, 7, 8, 3) },
	{ "Conv2D", "{\"filters\": 2, \"kernel_size\": 3, "
	  "\"dilation_rate\": 2, \"padding\": \"same\"}", 1, F4(1, 8, 8, 2) },
	{ "Conv2D", "{\"filters\": 6, \"kernel_size\": 3, \"groups\": 2}", 1,
	  F4(2, 5, 5, 4) },
	{ "Conv1D", "{\"filters\": 3, \"kernel_size\": 3}", 1, F3(2, 9, 4) },
	{ "Conv1D", "{\"filters\": 3, \"kernel_size\": 4, \"strides\": 2, "
	  "\"padding\": \"same\"}", 1, F3(2, 9, 4) },
	{ "Conv1D", "{\"filters\": 2, \"kernel_size\": 3, "
	  "\"dilation_rate\": 2, \"padding\": \"causal\"}", 1, F3(2, 9, 3) },
	{ "DepthwiseConv2D", "{\"kernel_size\": 3, \"depth_multiplier\": 2, "
	  "\"padding\": \"same\"}", 1, F4(2, 6, 5, 3) },
	{ "MaxPooling2D", "{\"pool_size\": [2, 2]}", 1, F4(2, 6, 6, 3) },
	{ "MaxPooling2D", "{\"pool_size\": [3, 3], \"strides\": [2, 2], "
	  "\"padding\": \"same\"}", 1, F4(2, 7, 6, 2) },
	{ "AveragePooling2D", "{\"pool_size\": [3, 3], \"strides\": [2, 2], "
	  "\"padding\": \"same\"}", 1, F4(2, 7, 6, 2) },
	{ "AveragePooling2D", "{\"pool_size\": 2}", 1, F4(2, 6, 6, 3) },
	{ "MaxPooling1D", "{\"pool_size\": 2}", 1, F3(2, 8, 3) },
	{ "AveragePooling1D", "{\"pool_size\": 3, \"strides\": 2, "
	  "\"padding\": \"same\"}", 1, F3(2, 8, 3) },
	{ "GlobalAveragePooling2D", "{}", 1, F4(2, 4, 5, 3) },
	{ "GlobalMaxPooling2D", "{\"keepdims\": true}", 1, F4(2, 4, 5, 3) },
	{ "GlobalAveragePooling1D", "{}", 1, F3(2, 6, 3) },
	{ "GlobalMaxPooling1D", "{}", 1, F3(2, 6, 3) },
	{ "BatchNormalization", "{\"momentum\": 0.9, \"epsilon\": 0.001}", 1,
	  F4(4, 3, 3, 5) },
	{ "BatchNormalization", "{\"axis\": [1]}", 1, F2(8, 6) },
	{ "BatchNormalization", "{\"center\": false, \"axis\": -1}", 1,
	  F3(4, 5, 3) },
	{ "LayerNormalization", "{\"axis\": [2], \"epsilon\": 0.001}", 1,
	  F3(3, 4, 6) },
	{ "Flatten", "{}", 1, F4(2, 3, 4, 2) },
	{ "Reshape", "{\"target_shape\": [4, -1]}", 1, F3(2, 6, 2) },
	{ "ZeroPadding2D", "{\"padding\": [[1, 2], [0, 1]]}", 1,
	  F4(2, 3, 3, 2) },
	{ "Rescaling", "{\"scale\": 0.5, \"offset\": -1.0}", 1, F3(2, 3, 4) },
	{ "Add", "{}", 2, F3(2, 3, 4) },
	{ "Subtract", "{}", 2, F3(2, 3, 4) },
	{ "Multiply", "{}", 3, F2(3, 4) },
	{ "Average", "{}", 2, F2(3, 4) },
	{ "Maximum", "{}", 2, F2(3, 4) },
	{ "Minimum", "{}", 2, F2(3, 4) },
	{ "Concatenate", "{\"axis\": -1}", 2, F3(2, 3, 4) },
	{ "Concatenate", "{\"axis\": 1}", 3, F3(2, 3, 4) },
	{ "Embedding", "{\"input_dim\": 10, \"output_dim\": 4}", 1, 2, { 3, 5 },
	  "int32", 10 },
};

static struct lrun runs[sizeof(cases) / sizeof(cases[0])];

/* Dropout ----------------------------------------------------------------- */

static void dropout(const char *cls, int spatial)
{
	char js[1024];
	struct tfk_err err = { 0, "" };
	struct tfk_model *m;
	json_t *mj;
	struct tfk_tensor x, r;
	int64_t s[4] = { 8, 10, 10, 16 }, i, n, kept = 0, bad = 0, gbad = 0;
	struct tfk_port rp, in, dx;
	const char *feeds[2] = { "x", "r" }, *fetch[4];
	const struct tfk_tensor *out[4];
	struct tfk_exec *ex;
	const float scale = 1 / (1 - 0.3f);
	double sd, p;

	snprintf(js, sizeof(js), "{\"class_name\": \"Sequential\", \"config\":"
		 " {\"name\": \"s\", \"layers\": [{\"class_name\": "
		 "\"InputLayer\", \"config\": {\"name\": \"x\", "
		 "\"batch_input_shape\": [null, 10, 10, 16]}}, {\"class_name\":"
		 " \"%s\", \"config\": {\"name\": \"drop\", \"rate\": 0.3, "
		 "\"seed\": null, \"noise_shape\": null}}]}}", cls);
	mj = json_loads(js, 0, NULL);
	ok(!tfk_keras_build(mj, "t", 1, &m, &err), "%s builds: %s", cls,
	   err.msg);
	json_decref(mj);
	if (!m)
		return;
	tfk_graph_placeholder(m->g, "r", TFK_DT_FLOAT, 4, (int64_t[]){ -1, 10,
			      10, 16 }, &rp, &err);
	tfk_graph_find(m->g, "x", &in, &err);
	ok(!tfk_graph_gradients(m->g, &m->outputs[0].train, &rp, 1, &in, 1,
				&dx, &err), "%s gradient: %s", cls, err.msg);
	fetch[0] = port_name(m->g, m->outputs[0].train);
	fetch[1] = port_name(m->g, m->outputs[0].infer);
	fetch[2] = port_name(m->g, dx);
	ok(!tfk_exec_new(&ex, m->g, feeds, 2, fetch, 3, NULL, &err),
	   "%s exec: %s", cls, err.msg);
	tfk_tensor_init(&x, TFK_DT_FLOAT, 4, s, &err);
	tfk_tensor_init(&r, TFK_DT_FLOAT, 4, s, &err);
	n = tfk_tensor_numel(&x);
	for (i = 0; i < n; i++) {
		((float *)x.data)[i] = (float)tap_val(1, i) + 2;	/* nonzero */
		((float *)r.data)[i] = (float)tap_val(2, i);
	}
	{
		struct tfk_tensor f[2] = { x, r };

		ok(ex && !tfk_exec_run(ex, f, 3, out, &err), "%s runs: %s",
		   cls, err.msg);
	}
	if (!ex) {
		tfk_model_free(m);
		return;
	}
	for (i = 0; i < n; i++) {
		float y = ((const float *)out[0]->data)[i];
		float xv = ((float *)x.data)[i], g;

		g = ((const float *)out[2]->data)[i];
		if (y != 0) {
			kept++;
			bad += y != xv * scale;
			gbad += g != ((float *)r.data)[i] * scale;
		} else {
			gbad += g != 0;
		}
		if (spatial) {
			/* same decision at every (h, w) of (b, c) */
			int64_t c = i % 16, b = i / 1600;
			float y0 = ((const float *)out[0]->data)[b * 1600 + c];

			bad += (y0 != 0) != (y != 0);
		}
	}
	is_int(bad, 0, "%s: kept = x / (1 - rate) exactly%s", cls,
	       spatial ? ", masks constant over h, w" : "");
	is_int(gbad, 0, "%s: gradient = r * mask / (1 - rate)", cls);
	/* binomial: n draws (spatial: 8 * 16 decisions) */
	{
		double draws = spatial ? 128 : (double)n;
		double kept_d = spatial ? kept / 100.0 : (double)kept;

		p = kept_d / draws;
		sd = sqrt(0.7 * 0.3 / draws);
		ok(fabs(p - 0.7) <= 5 * sd, "%s: kept fraction %.4f ~ 0.7 "
		   "(5 sigma %.4f)", cls, p, 5 * sd);
	}
	is_mem(out[1]->data, out[1]->nbytes, x.data, x.nbytes,
	       "%s: inference branch is the identity", cls);
	tfk_tensor_release(&x);
	tfk_tensor_release(&r);
	tfk_exec_free(ex);
	tfk_model_free(m);
}

int main(void)
{
	size_t n = sizeof(cases) / sizeof(cases[0]), i;
	const char *dirs[sizeof(cases) / sizeof(cases[0])];

	for (i = 0; i < n; i++) {
		prepare(&cases[i], &runs[i], (int)i);
		ok(runs[i].ok, "%s %s: built and ran", cases[i].cls,
		   cases[i].cfg);
	}
	for (i = 0; i < n; i++)
		dirs[i] = runs[i].ok ? runs[i].dir : NULL;
	ok(run_oracle("tests/py/torch_layers.py", dirs, n) == 0,
	   "torch oracle ran");
	for (i = 0; i < n; i++)
		if (runs[i].ok)
			compare(&cases[i], &runs[i]);
	tap_diag("max error: forward %.2g, gradients %.2g", worst_f, worst_g);
	dropout("Dropout", 0);
	dropout("SpatialDropout2D", 1);
	return tap_done();
}
