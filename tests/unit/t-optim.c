/*
 * t-optim.c - Keras optimizers and learning-rate schedules.
 *
 * Oracles (tests/py/optim_ref.py, run through $PYTHON):
 *  - numpy re-implementations of the TF 2.11+ Keras formulas in float32
 *    (keras/optimizers/ sgd, adam, adamw, rmsprop, adagrad, the base class' clipping and weight decay,
 *    schedules/learning_rate_schedule.py): every optimizer and option
 *    over 5 steps on 4 random variables (sizes chosen to exercise the
 *    8-wide loops and their tails), variables AND slots compared;
 *    measured max relative error 0 (same float32 operations in the same
 *    order give the same bits; bound asserted: 1e-5 relative plus 1e-7
 *    absolute);
 *  - torch.optim where the update rules coincide (SGD momentum and
 *    nesterov, Adam, AdamW, amsgrad, RMSprop plain/centered/momentum,
 *    Adagrad; epsilon 0 because torch adds it outside the square root):
 *    measured max relative error 4.2e-6 (bound 1e-4 relative plus 1e-6
 *    absolute: torch folds the bias corrections and the learning rate
 *    into the momentum differently);
 *  - the schedules' values at chosen steps vs the numpy formulas
 *    (relative 1e-6), and an SGD run whose rate follows a schedule.
 * And: the vectorized loops equal the _ref loops bit for bit, threads do
 * not change a bit, no allocation after the first step, slot names and
 * counts, Keras defaults in get_config form, every config error with
 * its JSON path, failed allocations.
 */
#include "nn/optim.h"

#include "util/alloc.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NV 4
#define STEPS 5

static const int64_t sizes[NV] = { 35, 13, 24, 67 };

static uint64_t rng = 88172645463325252ull;

static double unif(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static float gauss(void)
{
	double u = unif() + 1e-12, v = unif();

	return (float)(sqrt(-2 * log(u)) * cos(2 * M_PI * v));
}

static struct tfk_optim *mk(const char *js, struct tfk_err *err)
{
	json_error_t je;
	json_t *v = json_loads(js, JSON_DECODE_ANY, &je);
	struct tfk_optim *o = NULL;

	if (!v) {
		snprintf(err->msg, sizeof(err->msg), "bad test json: %s",
			 je.text);
		return NULL;
	}
	tfk_optim_new(v, "spec.json: compile.optimizer", &o, err);
	json_decref(v);
	return o;
}

struct tcase {
	const char *cfg;
	int torch;
};

static const struct tcase cases[] = {
	{ "\"sgd\"", 1 },
	{ "{\"class_name\": \"SGD\", \"config\": {\"learning_rate\": 0.1, "
	  "\"momentum\": 0.9}}", 1 },
	{ "{\"class_name\": \"SGD\", \"config\": {\"learning_rate\": 0.05, "
	  "\"momentum\": 0.8, \"nesterov\": true}}", 1 },
	{ "{\"class_name\": \"Adam\", \"config\": {\"learning_rate\": 0.01}}", 0 },
	{ "{\"class_name\": \"Adam\", \"config\": {\"learning_rate\": 0.01, "
	  "\"epsilon\": 0}}", 1 },
	{ "{\"class_name\": \"Adam\", \"config\": {\"learning_rate\": 0.02, "
	  "\"beta_1\": 0.5, \"beta_2\": 0.9, \"epsilon\": 0, "
	  "\"amsgrad\": true}}", 1 },
	{ "{\"class_name\": \"AdamW\", \"config\": {\"learning_rate\": 0.01, "
	  "\"weight_decay\": 0.1, \"epsilon\": 0}}", 1 },
	{ "\"adamw\"", 0 },
	{ "{\"class_name\": \"RMSprop\", \"config\": {\"learning_rate\": 0.01, "
	  "\"epsilon\": 0}}", 1 },
	{ "{\"class_name\": \"RMSprop\", \"config\": {\"learning_rate\": 0.01, "
	  "\"momentum\": 0.5, \"centered\": true, \"epsilon\": 0}}", 1 },
	{ "{\"class_name\": \"RMSprop\", \"config\": {\"learning_rate\": 0.01, "
	  "\"centered\": true}}", 0 },
	{ "{\"class_name\": \"RMSprop\", \"config\": {\"learning_rate\": 0.01, "
	  "\"rho\": 0.8, \"momentum\": 0.3, \"epsilon\": 0}}", 1 },
	{ "{\"class_name\": \"Adagrad\", \"config\": {\"learning_rate\": 0.1, "
	  "\"epsilon\": 0}}", 1 },
	{ "\"adagrad\"", 0 },
	{ "{\"class_name\": \"Adam\", \"config\": {\"learning_rate\": 0.01, "
	  "\"weight_decay\": 0.05, \"clipnorm\": 1.5}}", 0 },
	{ "{\"class_name\": \"SGD\", \"config\": {\"learning_rate\": 0.1, "
	  "\"global_clipnorm\": 2.0}}", 0 },
	{ "{\"class_name\": \"RMSprop\", \"config\": {\"clipvalue\": 0.5}}", 0 },
	{ "{\"class_name\": \"SGD\", \"config\": {\"learning_rate\": "
	  "{\"class_name\": \"ExponentialDecay\", \"config\": "
	  "{\"initial_learning_rate\": 0.1, \"decay_steps\": 2, "
	  "\"decay_rate\": 0.5, \"staircase\": true}}, \"momentum\": 0.5}}", 0 },
	{ "{\"module\": \"keras.optimizers\", \"class_name\": \"Adam\", "
	  "\"config\": {\"name\": \"adam\", \"learning_rate\": {\"module\": "
	  "\"keras.optimizers.schedules\", \"class_name\": \"CosineDecay\", "
	  "\"config\": {\"initial_learning_rate\": 0.01, \"decay_steps\": 4, "
	  "\"alpha\": 0.1, \"name\": \"CosineDecay\", \"warmup_target\": "
	  "null, \"warmup_steps\": 0}, \"registered_name\": null}, "
	  "\"weight_decay\": null, \"clipnorm\": null, \"global_clipnorm\": "
	  "null, \"clipvalue\": null, \"use_ema\": false, \"ema_momentum\": "
	  "0.99, \"ema_overwrite_frequency\": null, \"loss_scale_factor\": "
	  "null, \"gradient_accumulation_steps\": null, \"beta_1\": 0.9, "
	  "\"beta_2\": 0.999, \"epsilon\": 1e-07, \"amsgrad\": false}, "
	  "\"registered_name\": null}", 0 },
};
#define NC ((int)(sizeof(cases) / sizeof(cases[0])))

static float init_v[NC][NV][67], grads_v[NC][STEPS][NV][67];

static void make_data(void)
{
	int c, s, i;
	int64_t j;

	for (c = 0; c < NC; c++)
		for (i = 0; i < NV; i++) {
			for (j = 0; j < sizes[i]; j++)
				init_v[c][i][j] = gauss();
			for (s = 0; s < STEPS; s++)
				for (j = 0; j < sizes[i]; j++)
					grads_v[c][s][i][j] = gauss() *
						(float)(0.3 + s * 0.2);
		}
}

/* Run case c for STEPS steps; vars out in w[NV][67]. ref: _ref loops. */
static int run_case(int c, int ref, int threads, float w[NV][67],
		    struct tfk_optim **keep, struct tfk_err *err)
{
	struct tfk_tensor vt[NV], gt[NV];
	struct tfk_tensor *vp[NV];
	const struct tfk_tensor *gp[NV];
	struct tfk_optim *o = mk(cases[c].cfg, err);
	int i, s, rc = 0;

	if (!o)
		return -1;
	tfk_optim_set_ref(o, ref);
	tfk_optim_set_threads(o, threads);
	memcpy(w, init_v[c], sizeof(float) * NV * 67);
	for (i = 0; i < NV; i++) {
		tfk_tensor_init_view(&vt[i], TFK_DT_FLOAT, 1, &sizes[i], w[i],
				     sizes[i] * 4, TFK_OWN_BORROWED, err);
		vp[i] = &vt[i];
		gp[i] = &gt[i];
	}
	for (s = 0; s < STEPS && !rc; s++) {
		for (i = 0; i < NV; i++)
			tfk_tensor_init_view(&gt[i], TFK_DT_FLOAT, 1,
					     &sizes[i], grads_v[c][s][i],
					     sizes[i] * 4, TFK_OWN_BORROWED,
					     err);
		rc = tfk_optim_apply(o, NV, vp, gp, err);
	}
	if (keep)
		*keep = o;
	else
		tfk_optim_free(o);
	return rc;
}

static double rel_err(const float *a, const float *b, int64_t n, double rtol,
		      double atol, int *bad)
{
	double worst = 0;
	int64_t j;

	for (j = 0; j < n; j++) {
		double d = fabs((double)a[j] - b[j]);
		double r = d / (fabs(b[j]) + 1e-30);

		if (!(d <= rtol * fabs(b[j]) + atol))
			(*bad)++;
		if (fabs(b[j]) > 1e-3 && r > worst)
			worst = r;
	}
	return worst;
}

static float *read_f32(const char *name, int64_t n)
{
	size_t got;
	float *p = tap_read_file(tap_tmp(name), &got);

	if (p && got != (size_t)n * 4) {
		free(p);
		return NULL;
	}
	return p;
}

static void vs_oracles(void)
{
	static float w[NV][67], wr[NV][67];
	char name[256], man[8192 * 4];
	size_t off = 0;
	struct tfk_err err = { 0, "" };
	double worst_np = 0, worst_th = 0;
	int c, i, s, k, bad_np = 0, bad_th = 0, bad_bits = 0, bad_slots = 0;
	int ran = 0, n_torch = 0;

	for (c = 0; c < NC; c++) {
		for (i = 0; i < NV; i++) {
			snprintf(name, sizeof(name), "c%d_v%d.f32", c, i);
			tap_write_file(tap_tmp(name), init_v[c][i],
				       sizes[i] * 4);
			for (s = 0; s < STEPS; s++) {
				snprintf(name, sizeof(name), "c%d_g%d_%d.f32",
					 c, s, i);
				tap_write_file(tap_tmp(name),
					       grads_v[c][s][i],
					       sizes[i] * 4);
			}
		}
		off += snprintf(man + off, sizeof(man) - off,
				"CASE %d %d %d %d %d %d %d %d %s\n", c, STEPS,
				NV, (int)sizes[0], (int)sizes[1],
				(int)sizes[2], (int)sizes[3], cases[c].torch,
				cases[c].cfg);
	}
	tap_write_file(tap_tmp("manifest.txt"), man, off);
	snprintf(man, sizeof(man), "'%s' '%s' run '%s' '%s'", tap_python(),
		 tap_source("tests/py/optim_ref.py"), tap_tmp("manifest.txt"),
		 tap_tmpdir());
	ok(system(man) == 0, "numpy/torch oracle ran %d cases", NC);

	for (c = 0; c < NC; c++) {
		struct tfk_optim *o = NULL;
		int rc = run_case(c, 0, 1, w, &o, &err);

		if (rc) {
			ok(0, "case %d runs: %s", c, err.msg);
			tfk_optim_free(o);
			continue;
		}
		ran++;
		run_case(c, 1, 1, wr, NULL, &err);
		if (memcmp(w, wr, sizeof(w)))
			bad_bits++;
		for (i = 0; i < NV; i++) {
			float *np, *th;
			double e;

			snprintf(name, sizeof(name), "c%d_np%d.f32", c, i);
			np = read_f32(name, sizes[i]);
			if (!np) {
				bad_np++;
				continue;
			}
			e = rel_err(w[i], np, sizes[i], 1e-5, 1e-7, &bad_np);
			if (e > worst_np)
				worst_np = e;
			free(np);
			for (k = 0; k < tfk_optim_n_slots(o); k++) {
				int var;
				const char *sn;
				struct tfk_tensor *t = tfk_optim_slot(o, k,
								      &var,
								      &sn);
				int kk = k % (tfk_optim_n_slots(o) / NV);

				if (var != i)
					continue;
				snprintf(name, sizeof(name),
					 "c%d_np%d_s%d.f32", c, i, kk);
				np = read_f32(name, sizes[i]);
				if (!np) {
					bad_slots++;
					continue;
				}
				rel_err(t->data, np, sizes[i], 1e-5, 1e-7,
					&bad_slots);
				free(np);
			}
			if (!cases[c].torch)
				continue;
			snprintf(name, sizeof(name), "c%d_th%d.f32", c, i);
			th = read_f32(name, sizes[i]);
			if (!th) {
				bad_th++;
				continue;
			}
			e = rel_err(w[i], th, sizes[i], 1e-4, 1e-6, &bad_th);
			if (e > worst_th)
				worst_th = e;
			free(th);
		}
		n_torch += cases[c].torch;
		tfk_optim_free(o);
	}
	is_int(ran, NC, "all %d cases ran", NC);
	ok(bad_np == 0, "variables == numpy Keras formulas (rel 1e-5): %d "
	   "off, worst rel %.2g", bad_np, worst_np);
	ok(bad_slots == 0, "slots == numpy Keras slots: %d off", bad_slots);
	ok(bad_th == 0, "%d cases == torch.optim (rel 1e-4): %d off, worst "
	   "rel %.2g", n_torch, bad_th, worst_th);
	is_int(bad_bits, 0, "AVX loops == _ref loops bit for bit");
	tap_diag("max rel err: numpy %.3g, torch %.3g", worst_np, worst_th);
}

static void schedules(void)
{
	static const char *const sch[] = {
		"{\"class_name\": \"ExponentialDecay\", \"config\": "
		"{\"initial_learning_rate\": 0.1, \"decay_steps\": 100, "
		"\"decay_rate\": 0.96}}",
		"{\"class_name\": \"ExponentialDecay\", \"config\": "
		"{\"initial_learning_rate\": 0.1, \"decay_steps\": 100, "
		"\"decay_rate\": 0.5, \"staircase\": true, \"name\": null}}",
		"{\"class_name\": \"PiecewiseConstantDecay\", \"config\": "
		"{\"boundaries\": [100, 250.7, 1000], \"values\": [1.0, 0.5, "
		"0.1, 0.01]}}",
		"{\"class_name\": \"CosineDecay\", \"config\": "
		"{\"initial_learning_rate\": 0.2, \"decay_steps\": 1000}}",
		"{\"class_name\": \"CosineDecay\", \"config\": "
		"{\"initial_learning_rate\": 0.2, \"decay_steps\": 1000, "
		"\"alpha\": 0.25}}",
		"{\"class_name\": \"CosineDecay\", \"config\": "
		"{\"initial_learning_rate\": 0.0, \"decay_steps\": 1000, "
		"\"alpha\": 0.1, \"warmup_target\": 0.5, \"warmup_steps\": 100}}",
	};
	static const int64_t steps[] = {
		0, 1, 5, 99, 100, 101, 199, 200, 250, 251, 500, 999, 1000,
		1001, 1099, 1100, 5000
	};
	const int ns = (int)(sizeof(steps) / sizeof(steps[0]));
	const int nq = (int)(sizeof(sch) / sizeof(sch[0]));
	char cmd[8192], *out, *p;
	size_t off, n;
	int q, i;

	off = snprintf(cmd, sizeof(cmd), "'%s' '%s' lr ", tap_python(),
		       tap_source("tests/py/optim_ref.py"));
	for (i = 0; i < ns; i++)
		off += snprintf(cmd + off, sizeof(cmd) - off, "%s%lld",
				i ? "," : "", (long long)steps[i]);
	for (q = 0; q < nq; q++)
		off += snprintf(cmd + off, sizeof(cmd) - off, " '%s'", sch[q]);
	snprintf(cmd + off, sizeof(cmd) - off, " > '%s'", tap_tmp("lr.txt"));
	ok(system(cmd) == 0, "schedule oracle ran");
	out = tap_read_file(tap_tmp("lr.txt"), &n);
	p = out;
	for (q = 0; q < nq; q++) {
		char js[1024];
		struct tfk_err err = { 0, "" };
		struct tfk_optim *o;
		int bad = 0;

		snprintf(js, sizeof(js), "{\"class_name\": \"SGD\", \"config\": "
			 "{\"learning_rate\": %s}}", sch[q]);
		o = mk(js, &err);
		ok(o != NULL, "schedule %d parses: %s", q, err.msg);
		for (i = 0; i < ns && p; i++) {
			double want = strtod(p, &p), got;

			if (!o)
				continue;
			tfk_optim_set_iterations(o, steps[i]);
			got = tfk_optim_lr(o);
			if (!(fabs(got - want) <= 1e-6 * fabs(want) + 1e-12)) {
				bad++;
				tap_diag("schedule %d step %lld: %.9g want "
					 "%.9g", q, (long long)steps[i], got,
					 want);
			}
		}
		is_int(bad, 0, "schedule %d == numpy formula at %d steps", q,
		       ns);
		tfk_optim_free(o);
	}
	free(out);
}

static void defaults_and_config(void)
{
	struct tfk_err err = { 0, "" };
	struct tfk_optim *o = mk("\"adam\"", &err);
	json_t *c;
	char *s;

	ok(o && !strcmp(tfk_optim_name(o), "Adam"), "\"adam\" is Adam");
	ok(o && fabs(tfk_optim_lr(o) - 0.001) < 1e-15, "lr 0.001");
	c = o ? tfk_optim_config(o) : NULL;
	s = c ? json_dumps(c, JSON_COMPACT) : NULL;
	is_str(s, "{\"name\":\"Adam\",\"weight_decay\":null,\"clipnorm\":null,"
	       "\"global_clipnorm\":null,\"clipvalue\":null,\"use_ema\":false,"
	       "\"ema_momentum\":0.98999999999999999,"
	       "\"ema_overwrite_frequency\":null,\"jit_compile\":false,"
	       "\"is_legacy_optimizer\":false,\"learning_rate\":0.001,"
	       "\"beta_1\":0.90000000000000002,\"beta_2\":0.999,"
	       "\"epsilon\":9.9999999999999995e-8,\"amsgrad\":false}",
	       "get_config form with Keras defaults");
	free(s);
	json_decref(c);
	tfk_optim_free(o);

	o = mk("\"SGD\"", &err);
	ok(o && fabs(tfk_optim_lr(o) - 0.01) < 1e-15 &&
	   !strcmp(tfk_optim_name(o), "SGD"), "SGD default lr 0.01");
	tfk_optim_free(o);
	o = mk("\"AdamW\"", &err);
	c = o ? tfk_optim_config(o) : NULL;
	ok(c && json_real_value(json_object_get(c, "weight_decay")) == 0.004,
	   "AdamW weight_decay 0.004");
	json_decref(c);
	tfk_optim_free(o);
	o = mk("\"rmsprop\"", &err);
	c = o ? tfk_optim_config(o) : NULL;
	ok(c && json_real_value(json_object_get(c, "rho")) == 0.9 &&
	   json_real_value(json_object_get(c, "epsilon")) == 1e-7 &&
	   json_real_value(json_object_get(c, "momentum")) == 0,
	   "RMSprop rho 0.9, epsilon 1e-7, momentum 0");
	json_decref(c);
	tfk_optim_free(o);
	o = mk("\"Adagrad\"", &err);
	c = o ? tfk_optim_config(o) : NULL;
	ok(c && json_real_value(json_object_get(c,
						"initial_accumulator_value"))
	   == 0.1, "Adagrad initial_accumulator_value 0.1");
	json_decref(c);
	tfk_optim_free(o);

	o = mk(cases[17].cfg, &err);
	c = o ? tfk_optim_config(o) : NULL;
	s = c ? json_dumps(json_object_get(c, "learning_rate"),
			   JSON_COMPACT) : NULL;
	is_str(s, "{\"class_name\":\"ExponentialDecay\",\"config\":"
	       "{\"initial_learning_rate\":0.10000000000000001,"
	       "\"decay_steps\":2.0,\"decay_rate\":0.5,\"staircase\":true,"
	       "\"name\":null}}", "schedule serialized in the config");
	free(s);
	json_decref(c);
	/* set_lr overrides a schedule */
	if (o) {
		tfk_optim_set_iterations(o, 4);
		ok(fabs(tfk_optim_lr(o) - 0.025) < 1e-12, "staircase at 4: "
		   "0.1 * 0.5^2");
		tfk_optim_set_lr(o, 0.003);
		ok(tfk_optim_lr(o) == 0.003, "set_lr overrides");
		is_int(tfk_optim_iterations(o), 4, "iterations kept");
	}
	tfk_optim_free(o);
}

static void errors(void)
{
	static const struct {
		const char *js, *msg;
	} bad[] = {
		{ "\"adamx\"", "spec.json: compile.optimizer: unknown optimizer "
		  "\"adamx\" (expected SGD, Adam, AdamW, RMSprop or Adagrad)" },
		{ "{\"class_name\": \"Nadam\"}", "spec.json: compile.optimizer"
		  ".class_name: unknown optimizer \"Nadam\" (expected SGD, "
		  "Adam, AdamW, RMSprop or Adagrad)" },
		{ "3", "spec.json: compile.optimizer: expected an optimizer "
		  "name or {\"class_name\", \"config\"}" },
		{ "{\"class_name\": \"Adam\", \"config\": {\"beta_1\": 1.5}}",
		  "spec.json: compile.optimizer.config.beta_1: expected a "
		  "number in [0, 1)" },
		{ "{\"class_name\": \"Adam\", \"config\": {\"beta_2\": \"x\"}}",
		  "spec.json: compile.optimizer.config.beta_2: expected a "
		  "number in [0, 1)" },
		{ "{\"class_name\": \"Adam\", \"config\": {\"momentum\": 0.9}}",
		  "spec.json: compile.optimizer.config.momentum: unknown Adam "
		  "key" },
		{ "{\"class_name\": \"SGD\", \"config\": {\"decay\": 0.1}}",
		  "spec.json: compile.optimizer.config.decay: unknown SGD "
		  "key" },
		{ "{\"class_name\": \"SGD\", \"config\": {\"momentum\": 1.1}}",
		  "spec.json: compile.optimizer.config.momentum: expected a "
		  "number in [0, 1]" },
		{ "{\"class_name\": \"SGD\", \"config\": {\"learning_rate\": "
		  "-1}}", "spec.json: compile.optimizer.config.learning_rate: "
		  "expected a number >= 0" },
		{ "{\"class_name\": \"SGD\", \"config\": {\"learning_rate\": "
		  "\"fast\"}}", "spec.json: compile.optimizer.config."
		  "learning_rate: expected a number >= 0" },
		{ "{\"class_name\": \"Adam\", \"config\": {\"use_ema\": true}}",
		  "spec.json: compile.optimizer.config.use_ema: true is not "
		  "supported" },
		{ "{\"class_name\": \"Adam\", \"config\": "
		  "{\"is_legacy_optimizer\": true}}", "spec.json: "
		  "compile.optimizer.config.is_legacy_optimizer: legacy "
		  "(pre-2.11) Keras optimizers are not supported" },
		{ "{\"class_name\": \"Adam\", \"config\": {\"clipnorm\": 1, "
		  "\"clipvalue\": 1}}", "spec.json: compile.optimizer.config: "
		  "only one of clipnorm, clipvalue and global_clipnorm can be "
		  "set" },
		{ "{\"class_name\": \"AdamW\", \"config\": {\"weight_decay\": "
		  "null}}", "spec.json: compile.optimizer.config.weight_decay: "
		  "AdamW needs a number" },
		{ "{\"class_name\": \"RMSprop\", \"config\": {\"centered\": 1}}",
		  "spec.json: compile.optimizer.config.centered: expected true "
		  "or false" },
		{ "{\"class_name\": \"Adam\", \"config\": {}, \"foo\": 1}",
		  "spec.json: compile.optimizer.foo: unknown object key" },
		{ "{\"class_name\": \"Adam\", \"config\": {\"loss_scale_factor\":"
		  " 128}}", "spec.json: compile.optimizer.config."
		  "loss_scale_factor: only null is supported" },
		{ "{\"class_name\": \"SGD\", \"config\": {\"learning_rate\": "
		  "{\"class_name\": \"PolynomialDecay\", \"config\": {}}}}",
		  "spec.json: compile.optimizer.config.learning_rate.class_name"
		  ": unknown learning rate schedule \"PolynomialDecay\" "
		  "(expected ExponentialDecay, PiecewiseConstantDecay or "
		  "CosineDecay)" },
		{ "{\"class_name\": \"SGD\", \"config\": {\"learning_rate\": "
		  "{\"class_name\": \"ExponentialDecay\", \"config\": "
		  "{\"initial_learning_rate\": 0.1, \"decay_steps\": 10}}}}",
		  "spec.json: compile.optimizer.config.learning_rate.config."
		  "decay_rate: missing" },
		{ "{\"class_name\": \"SGD\", \"config\": {\"learning_rate\": "
		  "{\"class_name\": \"ExponentialDecay\", \"config\": "
		  "{\"initial_learning_rate\": 0.1, \"decay_steps\": 0, "
		  "\"decay_rate\": 0.5}}}}", "spec.json: compile.optimizer."
		  "config.learning_rate.config.decay_steps: expected a number "
		  "> 0" },
		{ "{\"class_name\": \"SGD\", \"config\": {\"learning_rate\": "
		  "{\"class_name\": \"PiecewiseConstantDecay\", \"config\": "
		  "{\"boundaries\": [10, 20], \"values\": [1, 2]}}}}",
		  "spec.json: compile.optimizer.config.learning_rate.config."
		  "values: expected an array of 3 numbers (one more than "
		  "boundaries)" },
		{ "{\"class_name\": \"SGD\", \"config\": {\"learning_rate\": "
		  "{\"class_name\": \"PiecewiseConstantDecay\", \"config\": "
		  "{\"boundaries\": [20, 10], \"values\": [1, 2, 3]}}}}",
		  "spec.json: compile.optimizer.config.learning_rate.config."
		  "boundaries[1]: boundaries must be strictly increasing" },
		{ "{\"class_name\": \"SGD\", \"config\": {\"learning_rate\": "
		  "{\"class_name\": \"CosineDecay\", \"config\": "
		  "{\"initial_learning_rate\": 0.1, \"decay_steps\": 10, "
		  "\"t_mul\": 2}}}}", "spec.json: compile.optimizer.config."
		  "learning_rate.config.t_mul: unknown CosineDecay key" },
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tfk_err err = { 0, "" };
		struct tfk_optim *o = mk(bad[i].js, &err);

		ok(o == NULL && err.code == TFK_EINVAL, "refused: %s",
		   bad[i].js);
		is_str(err.msg, bad[i].msg, "message %zu", i);
		tfk_optim_free(o);
	}
}

static void slots_and_state(void)
{
	struct tfk_err err = { 0, "" };
	struct tfk_optim *o;
	struct tfk_tensor a, b, ga, g3;
	struct tfk_tensor *vp[2] = { &a, &b };
	const struct tfk_tensor *gp[2] = { &ga, &ga };
	int64_t s2[2] = { 2, 3 }, s3 = 3;
	const char *nm;
	int var, k;

	tfk_tensor_init(&a, TFK_DT_FLOAT, 2, s2, &err);
	tfk_tensor_init(&b, TFK_DT_FLOAT, 2, s2, &err);
	tfk_tensor_init(&ga, TFK_DT_FLOAT, 2, s2, &err);
	tfk_tensor_init(&g3, TFK_DT_FLOAT, 1, &s3, &err);
	((float *)ga.data)[0] = 1;

	o = mk("{\"class_name\": \"RMSprop\", \"config\": {\"momentum\": 0.5,"
	       " \"centered\": true}}", &err);
	is_int(tfk_optim_n_slots(o), 0, "no slots before the first step");
	ok(!tfk_optim_init_slots(o, 2, vp, &err), "init_slots");
	is_int(tfk_optim_n_slots(o), 6, "RMSprop centered+momentum: 3 per var");
	{
		const char *want[6] = { "velocity", "momentum",
					"average_gradient", "velocity",
					"momentum", "average_gradient" };
		int good = 1;

		for (k = 0; k < 6; k++) {
			struct tfk_tensor *t = tfk_optim_slot(o, k, &var, &nm);

			good &= t && var == k / 3 && !strcmp(nm, want[k]) &&
				t->rank == 2 && t->shape[1] == 3;
		}
		ok(good, "slot names, owners and shapes as Keras");
	}
	ok(tfk_optim_slot(o, 6, &var, &nm) == NULL, "slot out of range");
	ok(!tfk_optim_apply(o, 2, vp, gp, &err), "apply after init_slots");
	is_int(tfk_optim_iterations(o), 1, "iterations 1");
	{
		const struct tfk_tensor *g2[2] = { &ga, &g3 };

		is_int(tfk_optim_apply(o, 2, vp, g2, &err), TFK_EINVAL,
		       "gradient of another shape");
		is_str(err.msg, "optimizer: gradient 1 is float32 [3], "
		       "variable float32 [2, 3]", "message");
	}
	is_int(tfk_optim_apply(o, 1, vp, gp, &err), TFK_EINVAL,
	       "a different variable count");
	{
		struct tfk_tensor *v2[2] = { &a, &g3 };
		const struct tfk_tensor *g2[2] = { &ga, &g3 };

		is_int(tfk_optim_apply(o, 2, v2, g2, &err), TFK_EINVAL,
		       "a variable that changed shape");
		is_str(err.msg, "optimizer: variable 1 is [3], was [2, 3]",
		       "message");
	}
	is_int(tfk_optim_iterations(o), 1, "failed steps do not count");
	tfk_optim_free(o);

	o = mk("\"adagrad\"", &err);
	tfk_optim_init_slots(o, 2, vp, &err);
	tfk_optim_slot(o, 1, &var, &nm);
	ok(tfk_optim_n_slots(o) == 2 && var == 1 &&
	   !strcmp(nm, "accumulator") &&
	   ((float *)tfk_optim_slot(o, 1, NULL, NULL)->data)[5] == 0.1f,
	   "Adagrad accumulators start at 0.1");
	tfk_optim_free(o);
	o = mk("\"sgd\"", &err);
	ok(!tfk_optim_apply(o, 2, vp, gp, &err) && tfk_optim_n_slots(o) == 0,
	   "plain SGD has no slots");
	tfk_optim_free(o);
	o = mk("{\"class_name\": \"Adam\", \"config\": {\"amsgrad\": true}}",
	       &err);
	tfk_optim_init_slots(o, 2, vp, &err);
	tfk_optim_slot(o, 2, &var, &nm);
	ok(tfk_optim_n_slots(o) == 6 && !strcmp(nm, "vhat"),
	   "Adam amsgrad: m, v, vhat");
	tfk_optim_free(o);

	/* no allocation after the first step (clipping scratch included) */
	o = mk("{\"class_name\": \"Adam\", \"config\": {\"clipnorm\": 1}}",
	       &err);
	ok(!tfk_optim_apply(o, 2, vp, gp, &err), "first step");
	tfk_alloc_fail_after(0);
	ok(!tfk_optim_apply(o, 2, vp, gp, &err) &&
	   !tfk_optim_apply(o, 2, vp, gp, &err),
	   "later steps succeed with every allocation failing");
	tfk_alloc_fail_after(-1);
	tfk_optim_free(o);

	/* failed allocations while parsing and building */
	{
		int nomem = 0, done = 0;
		long n;

		for (n = 0; n < 40 && !done; n++) {
			int rc;

			tfk_alloc_fail_after(n);
			o = mk("{\"class_name\": \"SGD\", \"config\": {\"name\":"
			       " \"x\", \"momentum\": 0.5, \"clipvalue\": 1, "
			       "\"learning_rate\": {\"class_name\": "
			       "\"PiecewiseConstantDecay\", \"config\": "
			       "{\"boundaries\": [1], \"values\": [1, 2], "
			       "\"name\": \"p\"}}}}", &err);
			rc = o ? tfk_optim_apply(o, 2, vp, gp, &err) :
				err.code;
			tfk_alloc_fail_after(-1);
			if (rc == TFK_ENOMEM)
				nomem++;
			else if (!rc)
				done = 1;
			tfk_optim_free(o);
		}
		ok(done && nomem >= 5, "%d allocation failures: ENOMEM, then "
		   "success", nomem);
	}
	tfk_tensor_release(&a);
	tfk_tensor_release(&b);
	tfk_tensor_release(&ga);
	tfk_tensor_release(&g3);
}

/* A big variable split across 2 threads: identical bits. */
static void threads(void)
{
	enum { N = 300001 };
	struct tfk_err err = { 0, "" };
	struct tfk_tensor v1, v2, g;
	struct tfk_tensor *p1 = &v1, *p2 = &v2;
	const struct tfk_tensor *gp = &g;
	struct tfk_optim *a = mk("\"adam\"", &err), *b = mk("\"adam\"", &err);
	int64_t n = N, i;
	int s, same;

	tfk_tensor_init(&v1, TFK_DT_FLOAT, 1, &n, &err);
	tfk_tensor_init(&v2, TFK_DT_FLOAT, 1, &n, &err);
	tfk_tensor_init(&g, TFK_DT_FLOAT, 1, &n, &err);
	for (i = 0; i < N; i++)
		((float *)v1.data)[i] = ((float *)v2.data)[i] = gauss();
	tfk_optim_set_threads(b, 2);
	for (s = 0; s < 3; s++) {
		for (i = 0; i < N; i++)
			((float *)g.data)[i] = gauss();
		tfk_optim_apply(a, 1, &p1, &gp, &err);
		tfk_optim_apply(b, 1, &p2, &gp, &err);
	}
	same = !memcmp(v1.data, v2.data, v1.nbytes);
	ok(same, "2 threads == 1 thread, bit for bit (%d elements)", N);
	tfk_optim_free(a);
	tfk_optim_free(b);
	tfk_tensor_release(&v1);
	tfk_tensor_release(&v2);
	tfk_tensor_release(&g);
}

int main(void)
{
	make_data();
	vs_oracles();
	schedules();
	defaults_and_config();
	errors();
	slots_and_state();
	threads();
	return tap_done();
}
