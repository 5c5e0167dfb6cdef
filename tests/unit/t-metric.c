/*
 * t-metric.c - Keras metrics.
 *
 * Oracle: tests/py/metric_ref.py, numpy implementations of Keras'
 * formulas written from their definitions (accuracy resolution by
 * shapes, argmax first-index ties, binary_accuracy's mean over the last
 * axis, weighted means, precision/recall with top_k and class_id, AUC
 * with Keras' 200 float32 thresholds compared directly, not bucketed,
 * and its ROC/PR interpolation, minoring, majoring sums). 24 cases, each
 * over 3 random batches (sizes 7, 16, 5), with and without per-example
 * weights; checked after all batches and again after reset and one
 * batch. Measured max relative error 1.2e-7 (float32 state; bound
 * asserted 1e-5 relative + 1e-6 absolute). Plus history names, errors
 * with JSON paths, label and shape checks, failed allocations.
 */
#include "nn/metric.h"

#include "util/alloc.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static double unif(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static struct tfk_metric *mk(const char *js, const char *loss, int64_t last,
			     struct tfk_err *err)
{
	json_error_t je;
	json_t *v = json_loads(js, JSON_DECODE_ANY, &je);
	struct tfk_metric *m = NULL;

	if (!v) {
		snprintf(err->msg, sizeof(err->msg), "bad json: %s", je.text);
		return NULL;
	}
	tfk_metric_new(v, "spec.json: compile.metrics[0]", loss, last, &m,
		       err);
	json_decref(v);
	return m;
}

/* Label kinds of a case. */
enum lab { L_SPARSE64, L_SPARSE32_COL, L_ONEHOT, L_BIN, L_REAL };
/* Prediction kinds. */
enum pred { P_UNIF, P_TIES, P_LOGITS, P_EDGES };

struct mcase {
	const char *cfg, *loss;
	enum lab lab;
	enum pred pred;
	int rank;		/* of y_pred: 2, or 3 ([b, 2, C]) */
	int c;			/* last dimension */
	int weighted;
	const char *name;	/* expected history key */
};

static const struct mcase cases[] = {
	{ "\"accuracy\"", "sparse_categorical_crossentropy", L_SPARSE64,
	  P_UNIF, 2, 10, 0, "accuracy" },
	{ "\"acc\"", NULL, L_SPARSE32_COL, P_UNIF, 2, 5, 1, "acc" },
	{ "\"accuracy\"", "categorical_crossentropy", L_ONEHOT, P_TIES, 2, 4,
	  0, "accuracy" },
	{ "\"accuracy\"", "binary_crossentropy", L_BIN, P_UNIF, 2, 1, 1,
	  "accuracy" },
	{ "\"accuracy\"", "binary_crossentropy", L_BIN, P_UNIF, 2, 3, 0,
	  "accuracy" },
	{ "\"sparse_categorical_accuracy\"", NULL, L_SPARSE64, P_TIES, 2, 6,
	  1, "sparse_categorical_accuracy" },
	{ "\"categorical_accuracy\"", NULL, L_ONEHOT, P_TIES, 3, 4, 1,
	  "categorical_accuracy" },
	{ "\"binary_accuracy\"", NULL, L_BIN, P_UNIF, 2, 3, 1,
	  "binary_accuracy" },
	{ "{\"class_name\": \"BinaryAccuracy\", \"config\": {\"threshold\": "
	  "0.7, \"name\": \"ba7\", \"dtype\": \"float32\"}}", NULL, L_BIN,
	  P_UNIF, 2, 1, 0, "ba7" },
	{ "\"mae\"", "mse", L_REAL, P_UNIF, 3, 3, 1, "mae" },
	{ "\"mean_squared_error\"", "mse", L_REAL, P_UNIF, 2, 2, 0,
	  "mean_squared_error" },
	{ "{\"class_name\": \"MeanSquaredError\", \"config\": {}}", "mse",
	  L_REAL, P_UNIF, 2, 4, 1, "mean_squared_error" },
	{ "\"precision\"", NULL, L_BIN, P_UNIF, 2, 1, 0, "precision" },
	{ "\"Recall\"", NULL, L_BIN, P_UNIF, 2, 1, 1, "recall" },
	{ "{\"class_name\": \"Precision\", \"config\": {\"top_k\": 2}}", NULL,
	  L_BIN, P_UNIF, 2, 5, 0, "precision" },
	{ "{\"class_name\": \"Recall\", \"config\": {\"class_id\": 2, "
	  "\"thresholds\": [0.3]}}", NULL, L_BIN, P_UNIF, 2, 4, 1, "recall" },
	{ "{\"class_name\": \"Precision\", \"config\": {\"thresholds\": 0.3, "
	  "\"top_k\": 1, \"class_id\": 1}}", NULL, L_BIN, P_UNIF, 2, 3, 0,
	  "precision" },
	{ "\"auc\"", NULL, L_BIN, P_EDGES, 2, 1, 0, "auc" },
	{ "\"AUC\"", NULL, L_BIN, P_UNIF, 2, 3, 1, "auc" },
	{ "{\"class_name\": \"AUC\", \"config\": {\"curve\": \"PR\"}}", NULL,
	  L_BIN, P_UNIF, 2, 1, 0, "auc" },
	{ "{\"class_name\": \"AUC\", \"config\": {\"curve\": \"ROC\", "
	  "\"summation_method\": \"minoring\", \"num_thresholds\": 50}}",
	  NULL, L_BIN, P_EDGES, 2, 1, 1, "auc" },
	{ "{\"class_name\": \"AUC\", \"config\": {\"curve\": \"PR\", "
	  "\"summation_method\": \"majoring\", \"name\": \"pr\"}}", NULL,
	  L_BIN, P_UNIF, 2, 2, 0, "pr" },
	{ "{\"module\": \"keras.metrics\", \"class_name\": \"AUC\", "
	  "\"config\": {\"name\": \"auc_logits\", \"dtype\": \"float32\", "
	  "\"num_thresholds\": 200, \"curve\": \"ROC\", \"summation_method\": "
	  "\"interpolation\", \"thresholds\": null, \"multi_label\": false, "
	  "\"num_labels\": null, \"label_weights\": null, \"from_logits\": "
	  "true}, \"registered_name\": null}", NULL, L_BIN, P_LOGITS, 2, 1, 1,
	  "auc_logits" },
	{ "{\"class_name\": \"AUC\", \"config\": {\"curve\": \"PR\", "
	  "\"num_thresholds\": 13}}", NULL, L_BIN, P_EDGES, 2, 1, 1, "auc" },
};
#define NC ((int)(sizeof(cases) / sizeof(cases[0])))
#define NB 3

static const int bsz[NB] = { 7, 16, 5 };

struct batch {
	struct tfk_tensor yt, yp;
	float w[16];
};

static void make_batch(const struct mcase *k, int b, struct batch *bt,
		       struct tfk_err *err)
{
	int64_t sp[3], st[3];
	int rp = k->rank, rt, mid = rp == 3 ? 2 : 1;
	int64_t rows = (int64_t)b * mid, i, j;
	enum tfk_dtype dt = TFK_DT_FLOAT;

	sp[0] = b;
	if (rp == 3)
		sp[1] = 2;
	sp[rp - 1] = k->c;
	memcpy(st, sp, sizeof(st));
	rt = rp;
	if (k->lab == L_SPARSE64) {
		rt = rp - 1;
		dt = TFK_DT_INT64;
	} else if (k->lab == L_SPARSE32_COL) {
		st[rp - 1] = 1;
		dt = TFK_DT_INT32;
	} else if (k->c == 1 && k->lab == L_BIN && (b % 2)) {
		rt = rp - 1;	/* y_true [b] against y_pred [b, 1] */
	}
	tfk_tensor_init(&bt->yp, TFK_DT_FLOAT, rp, sp, err);
	tfk_tensor_init(&bt->yt, dt, rt, st, err);
	for (i = 0; i < rows; i++) {
		float *p = (float *)bt->yp.data + i * k->c;
		int lab = (int)(unif() * k->c);

		for (j = 0; j < k->c; j++) {
			double u = unif();

			switch (k->pred) {
			case P_UNIF: p[j] = (float)u; break;
			case P_TIES: p[j] = (float)(floor(u * 3) / 4); break;
			case P_LOGITS: p[j] = (float)(u * 8 - 4); break;
			case P_EDGES: {
				static const float e[] = {
					0.0f, 1.0f, 0.5f, 0.25f, 1e-8f,
					0.99999994f
				};

				p[j] = (i % 3) ? (float)u : e[(i / 3) % 6];
				break;
			}
			}
		}
		switch (k->lab) {
		case L_SPARSE64:
			((int64_t *)bt->yt.data)[i] = lab;
			break;
		case L_SPARSE32_COL:
			((int32_t *)bt->yt.data)[i] = lab;
			break;
		case L_ONEHOT:
			((float *)bt->yt.data)[i * k->c + lab] = 1.0f;
			break;
		case L_BIN:
			for (j = 0; j < k->c; j++)
				((float *)bt->yt.data)[i * k->c + j] =
					unif() < 0.4 ? 1.0f : 0.0f;
			break;
		case L_REAL:
			for (j = 0; j < k->c; j++)
				((float *)bt->yt.data)[i * k->c + j] =
					(float)(unif() * 2 - 0.5);
			break;
		}
	}
	for (i = 0; i < b; i++)
		bt->w[i] = (float)(unif() * 2);
}

static void shape_csv(const struct tfk_tensor *t, char *out, size_t n)
{
	size_t off = 0;
	int i;

	out[0] = 0;
	for (i = 0; i < t->rank; i++)
		off += snprintf(out + off, n - off, "%s%lld", i ? "," : "",
				(long long)t->shape[i]);
}

static void vs_numpy(void)
{
	static struct batch bt[NC][NB];
	static char man[1 << 16];
	struct tfk_err err = { 0, "" };
	size_t off = 0, n;
	char cmd[4096], *out, *p;
	int c, b, bad_all = 0, bad_one = 0, bad_name = 0, ran = 0;
	double worst = 0;

	for (c = 0; c < NC; c++) {
		off += snprintf(man + off, sizeof(man) - off, "CASE %d %s\n", c,
				cases[c].cfg);
		for (b = 0; b < NB; b++) {
			struct batch *x = &bt[c][b];
			char yt[64], yp[64], wf[64], s1[64], s2[64];
			const char *dt;

			make_batch(&cases[c], bsz[b], x, &err);
			dt = x->yt.dtype == TFK_DT_INT64 ? "i64" :
				x->yt.dtype == TFK_DT_INT32 ? "i32" : "f32";
			snprintf(yt, sizeof(yt), "m%d_%d_t.bin", c, b);
			snprintf(yp, sizeof(yp), "m%d_%d_p.bin", c, b);
			snprintf(wf, sizeof(wf), "m%d_%d_w.bin", c, b);
			tap_write_file(tap_tmp(yt), x->yt.data, x->yt.nbytes);
			tap_write_file(tap_tmp(yp), x->yp.data, x->yp.nbytes);
			tap_write_file(tap_tmp(wf), x->w, bsz[b] * 4);
			shape_csv(&x->yt, s1, sizeof(s1));
			shape_csv(&x->yp, s2, sizeof(s2));
			off += snprintf(man + off, sizeof(man) - off,
					"BATCH %d %s %s %s ", c, tap_tmp(yt),
					dt, s1);
			off += snprintf(man + off, sizeof(man) - off,
					"%s %s %s\n", tap_tmp(yp), s2,
					cases[c].weighted ? tap_tmp(wf) : "-");
		}
	}
	tap_write_file(tap_tmp("mmanifest.txt"), man, off);
	snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s' > '%s'", tap_python(),
		 tap_source("tests/py/metric_ref.py"), tap_tmp("mmanifest.txt"),
		 tap_tmp("mout.txt"));
	ok(system(cmd) == 0, "numpy oracle ran %d cases", NC);
	out = tap_read_file(tap_tmp("mout.txt"), &n);
	p = out;
	for (c = 0; c < NC && p; c++) {
		const struct mcase *k = &cases[c];
		struct tfk_metric *m;
		long id = strtol(p, &p, 10);
		double want_all = strtod(p, &p), want_one = strtod(p, &p);
		double got;
		int rc = 0;

		m = mk(k->cfg, k->loss, k->c, &err);
		if (!m || id != c) {
			ok(0, "case %d: %s", c, err.msg);
			continue;
		}
		if (strcmp(tfk_metric_name(m), k->name)) {
			bad_name++;
			tap_diag("case %d name %s want %s", c,
				 tfk_metric_name(m), k->name);
		}
		for (b = 0; b < NB && !rc; b++)
			rc = tfk_metric_update(m, &bt[c][b].yt, &bt[c][b].yp,
					       k->weighted ? bt[c][b].w : NULL,
					       &err);
		if (rc) {
			ok(0, "case %d update: %s", c, err.msg);
			tfk_metric_free(m);
			continue;
		}
		ran++;
		got = tfk_metric_result(m);
		if (!(fabs(got - want_all) <= 1e-5 * fabs(want_all) + 1e-6)) {
			bad_all++;
			tap_diag("case %d (%s): %.9g want %.9g", c, k->cfg, got,
				 want_all);
		}
		if (want_all && fabs(got - want_all) / fabs(want_all) > worst)
			worst = fabs(got - want_all) / fabs(want_all);
		tfk_metric_reset(m);
		ok_at(tfk_metric_result(m) == 0, __FILE__, __LINE__,
		      "case %d: 0 after reset", c);
		tfk_metric_update(m, &bt[c][0].yt, &bt[c][0].yp,
				  k->weighted ? bt[c][0].w : NULL, &err);
		got = tfk_metric_result(m);
		if (!(fabs(got - want_one) <= 1e-5 * fabs(want_one) + 1e-6)) {
			bad_one++;
			tap_diag("case %d after reset: %.9g want %.9g", c, got,
				 want_one);
		}
		tfk_metric_free(m);
	}
	free(out);
	is_int(ran, NC, "all cases ran");
	is_int(bad_all, 0, "results over 3 batches == numpy (worst rel %.2g)",
	       worst);
	is_int(bad_one, 0, "results after reset + 1 batch == numpy");
	is_int(bad_name, 0, "history names as Keras");
	tap_diag("max rel err %.3g", worst);
	for (c = 0; c < NC; c++)
		for (b = 0; b < NB; b++) {
			tfk_tensor_release(&bt[c][b].yt);
			tfk_tensor_release(&bt[c][b].yp);
		}
}

/* Hand-checked values: Keras docstring examples. */
static void examples(void)
{
	struct tfk_err err = { 0, "" };
	struct tfk_metric *m;
	struct tfk_tensor yt, yp;
	int64_t s2[2] = { 2, 3 }, s1 = 2, s4[2] = { 4, 1 }, s41 = 4;
	float w[2] = { 0.7f, 0.3f };

	/* SparseCategoricalAccuracy docstring: [[2], [1]] vs
	 * [[0.1, 0.6, 0.3], [0.05, 0.95, 0]] -> 0.5; weights [0.7, 0.3]
	 * -> 0.3 */
	tfk_tensor_init(&yt, TFK_DT_INT64, 1, &s1, &err);
	tfk_tensor_init(&yp, TFK_DT_FLOAT, 2, s2, &err);
	((int64_t *)yt.data)[0] = 2;
	((int64_t *)yt.data)[1] = 1;
	memcpy(yp.data, (float[6]){ 0.1f, 0.6f, 0.3f, 0.05f, 0.95f, 0 }, 24);
	m = mk("\"sparse_categorical_accuracy\"", NULL, 3, &err);
	tfk_metric_update(m, &yt, &yp, NULL, &err);
	ok(fabs(tfk_metric_result(m) - 0.5) < 1e-7, "docstring: 0.5");
	tfk_metric_reset(m);
	tfk_metric_update(m, &yt, &yp, w, &err);
	ok(fabs(tfk_metric_result(m) - 0.3) < 1e-7, "docstring weighted: 0.3");
	((int64_t *)yt.data)[0] = 3;
	is_int(tfk_metric_update(m, &yt, &yp, NULL, &err), TFK_EINVAL,
	       "a class id outside [0, 3)");
	is_str(err.msg, "metric sparse_categorical_accuracy: label 3 of row "
	       "0 outside [0, 3)", "message");
	((int64_t *)yt.data)[0] = -1;
	is_int(tfk_metric_update(m, &yt, &yp, NULL, &err), TFK_EINVAL,
	       "a negative class id");
	tfk_metric_free(m);
	tfk_tensor_release(&yt);

	/* AUC docstring: [0, 0, 1, 1] vs [0, 0.5, 0.3, 0.9], 3 thresholds
	 * -> 0.75 */
	tfk_tensor_init(&yt, TFK_DT_FLOAT, 2, s4, &err);
	tfk_tensor_release(&yp);
	tfk_tensor_init(&yp, TFK_DT_FLOAT, 1, &s41, &err);
	memcpy(yt.data, (float[4]){ 0, 0, 1, 1 }, 16);
	memcpy(yp.data, (float[4]){ 0, 0.5f, 0.3f, 0.9f }, 16);
	m = mk("{\"class_name\": \"AUC\", \"config\": {\"num_thresholds\": "
	       "3}}", NULL, 1, &err);
	ok(!tfk_metric_update(m, &yt, &yp, NULL, &err), "y_true [4, 1] with "
	   "y_pred [4]: %s", err.msg);
	ok(fabs(tfk_metric_result(m) - 0.75) < 1e-7, "AUC docstring: 0.75 "
	   "(%.9g)", tfk_metric_result(m));
	tfk_metric_free(m);
	/* Precision docstring: [0, 1, 1, 1] vs [1, 0, 1, 1] -> 2/3 */
	memcpy(yt.data, (float[4]){ 0, 1, 1, 1 }, 16);
	memcpy(yp.data, (float[4]){ 1, 0, 1, 1 }, 16);
	m = mk("\"precision\"", NULL, 1, &err);
	tfk_metric_update(m, &yt, &yp, NULL, &err);
	ok(fabs(tfk_metric_result(m) - 2.0 / 3) < 1e-7, "precision 2/3");
	tfk_metric_free(m);
	m = mk("\"recall\"", NULL, 1, &err);
	tfk_metric_update(m, &yt, &yp, NULL, &err);
	ok(fabs(tfk_metric_result(m) - 2.0 / 3) < 1e-7, "recall 2/3");
	tfk_metric_free(m);
	m = mk("\"mae\"", NULL, 1, &err);
	ok(tfk_metric_result(m) == 0, "no update: 0 (div_no_nan)");
	tfk_metric_free(m);
	tfk_tensor_release(&yt);
	tfk_tensor_release(&yp);
}

static void errors(void)
{
	static const struct {
		const char *js, *msg;
	} bad[] = {
		{ "\"f1\"", "spec.json: compile.metrics[0]: unknown metric "
		  "\"f1\" (expected accuracy, sparse_categorical_accuracy, "
		  "categorical_accuracy, binary_accuracy, precision, recall, "
		  "auc, mae or mse)" },
		{ "{\"class_name\": \"F1Score\"}", "spec.json: compile."
		  "metrics[0].class_name: unknown metric class \"F1Score\"" },
		{ "7", "spec.json: compile.metrics[0]: expected a metric name or "
		  "{\"class_name\", \"config\"}" },
		{ "{\"class_name\": \"AUC\", \"config\": {\"multi_label\": "
		  "true}}", "spec.json: compile.metrics[0].config.multi_label: "
		  "only false is supported" },
		{ "{\"class_name\": \"AUC\", \"config\": {\"curve\": \"XY\"}}",
		  "spec.json: compile.metrics[0].config.curve: expected "
		  "\"ROC\" or \"PR\"" },
		{ "{\"class_name\": \"AUC\", \"config\": {\"num_thresholds\": "
		  "1}}", "spec.json: compile.metrics[0].config.num_thresholds: "
		  "expected an integer >= 2 or null" },
		{ "{\"class_name\": \"AUC\", \"config\": {\"thresholds\": "
		  "[0.5]}}", "spec.json: compile.metrics[0].config.thresholds: "
		  "only null is supported" },
		{ "{\"class_name\": \"Precision\", \"config\": {\"thresholds\": "
		  "[0.2, 0.5]}}", "spec.json: compile.metrics[0].config."
		  "thresholds: expected one number in [0, 1] (several "
		  "thresholds are not supported)" },
		{ "{\"class_name\": \"Recall\", \"config\": {\"top_k\": 0}}",
		  "spec.json: compile.metrics[0].config.top_k: expected an "
		  "integer >= 1 or null" },
		{ "{\"class_name\": \"BinaryAccuracy\", \"config\": "
		  "{\"thresholds\": 0.5}}", "spec.json: compile.metrics[0]."
		  "config.thresholds: unknown BinaryAccuracy key" },
		{ "{\"class_name\": \"MeanSquaredError\", \"config\": "
		  "{\"dtype\": \"float64\"}}", "spec.json: compile.metrics[0]."
		  "config.dtype: only float32 is supported" },
		{ "{\"class_name\": \"AUC\", \"cfg\": {}}", "spec.json: "
		  "compile.metrics[0].cfg: unknown object key" },
	};
	struct tfk_err err = { 0, "" };
	struct tfk_metric *m;
	struct tfk_tensor yt, yp, yi;
	int64_t s2[2] = { 2, 3 }, s3[2] = { 3, 3 }, s1 = 2;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		m = mk(bad[i].js, NULL, 3, &err);
		ok(m == NULL && err.code == TFK_EINVAL, "refused %s",
		   bad[i].js);
		is_str(err.msg, bad[i].msg, "message %zu", i);
		tfk_metric_free(m);
	}
	tfk_tensor_init(&yt, TFK_DT_FLOAT, 2, s3, &err);
	tfk_tensor_init(&yp, TFK_DT_FLOAT, 2, s2, &err);
	tfk_tensor_init(&yi, TFK_DT_INT32, 1, &s1, &err);
	m = mk("\"categorical_accuracy\"", NULL, 3, &err);
	is_int(tfk_metric_update(m, &yt, &yp, NULL, &err), TFK_EINVAL,
	       "batch sizes differ");
	is_str(err.msg, "metric categorical_accuracy: y_true [3, 3] does not "
	       "fit y_pred [2, 3] (batch sizes differ)", "message");
	is_int(tfk_metric_update(m, &yi, &yp, NULL, &err), TFK_EINVAL,
	       "sparse labels for a categorical metric");
	is_int(tfk_metric_update(m, &yp, &yi, NULL, &err), TFK_EINVAL,
	       "int32 predictions");
	tfk_metric_free(m);
	m = mk("{\"class_name\": \"Recall\", \"config\": {\"class_id\": 3}}",
	       NULL, 3, &err);
	is_int(tfk_metric_update(m, &yp, &yp, NULL, &err), TFK_EINVAL,
	       "class_id beyond the classes");
	is_str(err.msg, "metric recall: class_id 3 outside the 3 classes of "
	       "y_pred", "message");
	tfk_metric_free(m);

	/* failed allocations */
	{
		int nomem = 0, done = 0;
		long k;

		for (k = 0; k < 30 && !done; k++) {
			int rc;

			tfk_alloc_fail_after(k);
			m = mk("{\"class_name\": \"Precision\", \"config\": "
			       "{\"top_k\": 2, \"name\": \"p\"}}", NULL, 3,
			       &err);
			rc = m ? tfk_metric_update(m, &yp, &yp, NULL, &err) :
				err.code;
			tfk_alloc_fail_after(-1);
			if (rc == TFK_ENOMEM)
				nomem++;
			else if (!rc)
				done = 1;
			tfk_metric_free(m);
		}
		for (k = 0; k < 30; k++) {
			tfk_alloc_fail_after(k);
			m = mk("\"auc\"", NULL, 1, &err);
			tfk_alloc_fail_after(-1);
			if (m) {
				tfk_metric_free(m);
				break;
			}
			nomem += err.code == TFK_ENOMEM;
		}
		ok(done && nomem >= 5, "%d allocation failures gave ENOMEM, "
		   "then success", nomem);
	}
	tfk_tensor_release(&yt);
	tfk_tensor_release(&yp);
	tfk_tensor_release(&yi);
}

int main(void)
{
	vs_numpy();
	examples();
	errors();
	return tap_done();
}
