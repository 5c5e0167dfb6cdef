/*
 * t-train: the training step, callbacks and checkpoints below the tool.
 *
 *  - tfk_py_repr against Python's repr() (values printed by CPython 3);
 *  - callbacks driven with made-up logs, each sequence derived by hand
 *    from tf.keras 2.11's callbacks.py (EarlyStopping's wait/baseline/
 *    restore, ReduceLROnPlateau's min_lr), their state surviving a
 *    round trip, and every config error's message;
 *  - checkpoints: write + restore into a fresh graph (weights and
 *    optimizer slots bit for bit), a mismatching or missing tensor
 *    leaving the graph untouched, the pointer file in its forms,
 *    failed allocations;
 *  - the trainer on a tiny softmax model: same-shaped batches plan
 *    once, the epoch loss is the batch-size-weighted mean, a NaN loss
 *    fails or is skipped with the weights unchanged, evaluation does
 *    not train.
 * The numerics of a step are checked against PyTorch in
 * tests/cmd/t1600-train.sh (tests/py/torch_train_check.py).
 */
#include "nn/callback.h"
#include "nn/ckpt.h"
#include "nn/train.h"
#include "util/alloc.h"

#include "tap.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct tfk_err err;

static void test_repr(void)
{
	static const struct { double v; const char *py; } c[] = {
		{ 0.5, "0.5" }, { 1e-05, "1e-05" }, { 0.0001, "0.0001" },
		{ 1e16, "1e+16" }, { 1234.5, "1234.5" },
		{ 0.1 + 0.2, "0.30000000000000004" },
		{ (double)0.001f, "0.0010000000474974513" },
		{ 100.0, "100.0" }, { -2.5e-7, "-2.5e-07" },
		{ 123456789012345678.0, "1.2345678901234568e+17" },
		{ 1.0, "1.0" }, { 3e-320, "3e-320" }, { 0.0, "0.0" },
		{ NAN, "nan" }, { -INFINITY, "-inf" },
	};
	char b[40];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		is_str(tfk_py_repr(c[i].v, b), c[i].py, "repr %s", c[i].py);
}

static void test_logs(void)
{
	struct tfk_logs l;
	double v;
	char k[16];

	tfk_logs_clear(&l);
	tfk_logs_set(&l, "loss", 1);
	tfk_logs_set(&l, "acc", 2);
	tfk_logs_set(&l, "loss", 3);
	ok(l.n == 2 && tfk_logs_get(&l, "loss", &v) && v == 3,
	   "logs: a key set twice keeps its place and the last value");
	ok(!tfk_logs_get(&l, "val_loss", &v), "logs: absent key");
	for (int i = 0; i < 100; i++) {
		snprintf(k, sizeof(k), "k%d", i);
		tfk_logs_set(&l, k, i);
	}
	is_int(l.n, TFK_LOGS_MAX, "logs: capped at TFK_LOGS_MAX");
}

/* Callbacks -------------------------------------------------------------- */

struct env {
	struct tfk_graph *g;
	struct tfk_optim *o;
	struct tfk_cb_env e;
	char notes[1024];
};

static void note(void *ctx, const char *m)
{
	struct env *x = ctx;

	strncat(x->notes, m, sizeof(x->notes) - strlen(x->notes) - 2);
	strcat(x->notes, "|");
}

static void env_init(struct env *x, const char *opt)
{
	struct tfk_tensor t;
	json_t *j = json_loads(opt, JSON_DECODE_ANY, NULL);

	memset(x, 0, sizeof(*x));
	tfk_graph_new(&x->g, &err);
	tfk_tensor_init(&t, TFK_DT_FLOAT, 1, (int64_t[]){ 3 }, &err);
	tfk_graph_variable(x->g, "w", &t, NULL, &err);
	tfk_optim_new(j, "spec.json: compile.optimizer", &x->o, &err);
	json_decref(j);
	x->e.g = x->g;
	x->e.opt = x->o;
	x->e.note = note;
	x->e.ctx = x;
}

static void env_release(struct env *x)
{
	tfk_optim_free(x->o);
	tfk_graph_free(x->g);
}

static struct tfk_callbacks *cbs_new(const char *text)
{
	json_t *j = json_loads(text, 0, NULL);
	struct tfk_callbacks *c = NULL;
	int rc = tfk_callbacks_new(j, "spec.json: fit.callbacks", &c, &err);

	json_decref(j);
	if (rc)
		tap_diag("callbacks: %s", err.msg);
	return c;
}

static const char *const keys[] = { "loss", "val_loss", "accuracy" };

/* Run epochs with val_loss = v[e]; the epoch at which stop was set, or
 * -1. */
static int drive(struct tfk_callbacks *c, struct env *x, const double *v,
		 int n)
{
	struct tfk_logs l;

	for (int e = 0; e < n; e++) {
		tfk_logs_clear(&l);
		tfk_logs_set(&l, "loss", 1);
		tfk_logs_set(&l, "val_loss", v[e]);
		if (tfk_callbacks_epoch_end(c, &x->e, e, &l, &err))
			return -2;
		if (x->e.stop)
			return e;
	}
	return -1;
}

static void test_early_stopping(void)
{
	static const double seq[] = { 1.0, 0.9, 0.95, 0.97, 0.96, 0.5 };
	static const double base[] = { 0.9, 0.8, 0.7, 0.6 };
	static const double flat[] = { 0.9, 0.95, 0.8 };
	struct tfk_callbacks *c;
	struct env x;
	float *w;

	env_init(&x, "\"sgd\"");
	c = cbs_new("[{\"class_name\": \"EarlyStopping\", \"config\": "
		    "{\"patience\": 2}}]");
	ok(c && !tfk_callbacks_train_begin(c, &x.e, keys, 3, &err),
	   "EarlyStopping: begins");
	is_int(drive(c, &x, seq, 6), 3, "patience 2: two epochs without "
	       "improvement after 0.9 stop at epoch 3");
	tfk_callbacks_free(c);

	/* Improvements that miss the baseline keep wait and return early
	 * (Keras 2.11): never stops. */
	memset(&x.e.stop, 0, sizeof(x.e.stop));
	c = cbs_new("[{\"class_name\": \"EarlyStopping\", \"config\": "
		    "{\"patience\": 1, \"baseline\": 0.5}}]");
	tfk_callbacks_train_begin(c, &x.e, keys, 3, &err);
	is_int(drive(c, &x, base, 4), -1, "baseline: improving runs go on "
	       "though the baseline is never reached");
	tfk_callbacks_free(c);
	c = cbs_new("[{\"class_name\": \"EarlyStopping\", \"config\": "
		    "{\"patience\": 1, \"baseline\": 0.5}}]");
	tfk_callbacks_train_begin(c, &x.e, keys, 3, &err);
	is_int(drive(c, &x, flat, 3), 1, "baseline: the first flat epoch "
	       "stops (wait counted from epoch 0)");
	tfk_callbacks_free(c);

	/* restore_best_weights: w holds epoch e's marker e + 1. */
	x.e.stop = 0;
	c = cbs_new("[{\"class_name\": \"EarlyStopping\", \"config\": "
		    "{\"restore_best_weights\": true, \"verbose\": 1}}]");
	tfk_callbacks_train_begin(c, &x.e, keys, 3, &err);
	w = tfk_graph_var(x.g, "w")->data;
	{
		static const double v[] = { 0.8, 0.7, 0.9 };
		struct tfk_logs l;
		int e;

		for (e = 0; e < 3 && !x.e.stop; e++) {
			w[0] = w[1] = w[2] = (float)(e + 1);
			tfk_logs_clear(&l);
			tfk_logs_set(&l, "val_loss", v[e]);
			tfk_callbacks_epoch_end(c, &x.e, e, &l, &err);
		}
		ok(x.e.stop && e == 3 && w[0] == 2 && w[2] == 2,
		   "restore_best_weights: stopping at epoch 3 restores "
		   "epoch 2's weights");
	}
	tfk_callbacks_train_end(c, &x.e, &err);
	is_str(x.notes, "Restoring model weights from the end of the best "
	       "epoch: 2.|Epoch 3: early stopping|", "verbose messages as "
	       "Keras prints them");
	tfk_callbacks_free(c);
	env_release(&x);
}

static void test_plateau_and_state(void)
{
	static const double flat[] = { 1, 1, 1, 1 };
	struct tfk_callbacks *c, *d;
	struct env x;
	json_t *st;
	struct tfk_logs l;
	double lr;

	env_init(&x, "{\"class_name\": \"SGD\", \"config\": "
		 "{\"learning_rate\": 0.01}}");
	c = cbs_new("[{\"class_name\": \"ReduceLROnPlateau\", \"config\": "
		    "{\"patience\": 0, \"min_lr\": 0.005}}]");
	tfk_callbacks_train_begin(c, &x.e, keys, 3, &err);
	drive(c, &x, flat, 4);
	is_int((long long)llround(tfk_optim_lr(x.o) * 1e6), 5000,
	       "ReduceLROnPlateau: 0.01 * 0.1 is raised to min_lr 0.005 "
	       "and stays");
	ok(x.e.lr_set && x.e.lr == (double)0.005f, "the override is "
	   "reported to the loop (as float32)");
	tfk_callbacks_free(c);

	/* EarlyStopping state through a checkpoint: after two flat
	 * epochs of patience 3, a restored copy stops after one more. */
	x.e.stop = 0;
	c = cbs_new("[{\"class_name\": \"EarlyStopping\", \"config\": "
		    "{\"patience\": 3, \"monitor\": \"loss\"}}, "
		    "{\"class_name\": \"CSVLogger\", \"config\": "
		    "{\"filename\": \"/dev/null\"}}]");
	tfk_callbacks_train_begin(c, &x.e, keys, 3, &err);
	for (int e = 0; e < 3; e++) {
		tfk_logs_clear(&l);
		tfk_logs_set(&l, "loss", 1);
		tfk_callbacks_epoch_end(c, &x.e, e, &l, &err);
	}
	st = tfk_callbacks_state(c);
	d = cbs_new("[{\"class_name\": \"EarlyStopping\", \"config\": "
		    "{\"patience\": 3, \"monitor\": \"loss\"}}, "
		    "{\"class_name\": \"CSVLogger\", \"config\": "
		    "{\"filename\": \"/dev/null\"}}]");
	ok(!tfk_callbacks_restore(d, st, &err), "state: restores");
	tfk_callbacks_train_begin(d, &x.e, keys, 3, &err);
	tfk_logs_clear(&l);
	tfk_logs_set(&l, "loss", 1);
	tfk_callbacks_epoch_end(d, &x.e, 3, &l, &err);
	ok(x.e.stop, "state: wait carried over, the 3rd flat epoch stops");
	tfk_callbacks_free(d);
	d = cbs_new("[{\"class_name\": \"CSVLogger\", \"config\": "
		    "{\"filename\": \"/dev/null\"}}]");
	ok(tfk_callbacks_restore(d, st, &err) == TFK_EINVAL &&
	   strstr(err.msg, "differ from the checkpoint's"),
	   "state: a different callback list is refused");
	tfk_callbacks_free(d);
	json_decref(st);
	tfk_callbacks_free(c);

	/* The scheduler: boundaries are first epochs of the next value. */
	c = cbs_new("[{\"class_name\": \"LearningRateScheduler\", \"config\":"
		    " {\"boundaries\": [2, 4], \"values\": [1, 0.5, 0.25]}}]");
	for (int e = 0; e < 6; e++) {
		tfk_callbacks_epoch_begin(c, &x.e, e, &err);
		lr = tfk_optim_lr(x.o);
		if (lr != (e < 2 ? 1 : e < 4 ? 0.5 : 0.25))
			break;
		if (e == 5)
			ok(1, "LearningRateScheduler: 1, 1, 0.5, 0.5, 0.25, "
			   "0.25");
	}
	tfk_callbacks_free(c);
	env_release(&x);
}

static void test_callback_errors(void)
{
	static const struct { const char *json, *msg; } c[] = {
		{ "{}", "spec.json: fit.callbacks: expected a list of "
		  "callbacks" },
		{ "[3]", "spec.json: fit.callbacks[0]: expected "
		  "{\"class_name\": ..., \"config\": ...}" },
		{ "[{\"class_name\": \"Foo\"}]", "spec.json: fit.callbacks[0]."
		  "class_name: unknown callback 'Foo'" },
		{ "[{\"class_name\": \"CSVLogger\", \"cfg\": {}}]",
		  "spec.json: fit.callbacks[0].cfg: unknown key" },
		{ "[{\"class_name\": \"CSVLogger\"}]", "spec.json: "
		  "fit.callbacks[0].config.filename: required" },
		{ "[{\"class_name\": \"ModelCheckpoint\", \"config\": "
		  "{\"filepath\": \"x\", \"save_freq\": 100}}]",
		  "spec.json: fit.callbacks[0].config.save_freq: only "
		  "\"epoch\" is supported" },
		{ "[{\"class_name\": \"EarlyStopping\", \"config\": "
		  "{\"mode\": \"up\"}}]", "spec.json: fit.callbacks[0].config."
		  "mode: expected \"auto\", \"min\" or \"max\"" },
		{ "[{\"class_name\": \"LearningRateScheduler\", \"config\": "
		  "{\"boundaries\": [3, 2], \"values\": [1, 2, 3]}}]",
		  "spec.json: fit.callbacks[0].config.boundaries: expected a "
		  "list of increasing epochs > 0" },
		{ "[{\"class_name\": \"TensorBoard\", \"config\": "
		  "{\"update_freq\": 0}}]", "spec.json: fit.callbacks[0]."
		  "config.update_freq: expected \"epoch\", \"batch\" or a "
		  "positive integer" },
		{ "[{\"class_name\": \"CSVLogger\", \"config\": "
		  "{\"filename\": \"a\", \"separator\": \";;\"}}]",
		  "spec.json: fit.callbacks[0].config.separator: expected one "
		  "character" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		json_t *j = json_loads(c[i].json, 0, NULL);
		struct tfk_callbacks *cb = NULL;
		int rc = tfk_callbacks_new(j, "spec.json: fit.callbacks", &cb,
					   &err);

		ok(rc == TFK_EINVAL && !cb, "callback error %zu refused", i);
		is_str(err.msg, c[i].msg, "... message %zu", i);
		json_decref(j);
	}
}

/* Checkpoints --------------------------------------------------------------- */

/* Graph with variables a [2, 3] and b [3] set from k, an SGD momentum
 * optimizer applied once (slots "m") when o is not NULL. */
static struct tfk_graph *ckpt_graph(float k, int b_len, struct tfk_optim **o)
{
	struct tfk_graph *g;
	struct tfk_tensor t, gr[2], *v[2];
	const struct tfk_tensor *gp[2];
	json_t *j;

	tfk_graph_new(&g, &err);
	tfk_tensor_init(&t, TFK_DT_FLOAT, 2, (int64_t[]){ 2, 3 }, &err);
	for (int i = 0; i < 6; i++)
		((float *)t.data)[i] = k + (float)i;
	tfk_graph_variable(g, "dense/kernel", &t, NULL, &err);
	tfk_tensor_init(&t, TFK_DT_FLOAT, 1, (int64_t[]){ b_len }, &err);
	for (int i = 0; i < b_len; i++)
		((float *)t.data)[i] = -k - (float)i;
	tfk_graph_variable(g, "dense/bias", &t, NULL, &err);
	if (!o)
		return g;
	j = json_loads("{\"class_name\": \"SGD\", \"config\": {\"momentum\":"
		       " 0.9}}", 0, NULL);
	tfk_optim_new(j, "o", o, &err);
	json_decref(j);
	for (int i = 0; i < 2; i++) {
		v[i] = tfk_graph_var_at(g, i, NULL);
		tfk_tensor_init(&gr[i], TFK_DT_FLOAT, v[i]->rank, v[i]->shape,
				&err);
		for (int e = 0; e < tfk_tensor_numel(v[i]); e++)
			((float *)gr[i].data)[e] = 0.5f * (float)(e + 1) * k;
		gp[i] = &gr[i];
	}
	tfk_optim_apply(*o, 2, v, gp, &err);
	tfk_tensor_release(&gr[0]);
	tfk_tensor_release(&gr[1]);
	return g;
}

static int same_vars(struct tfk_graph *a, struct tfk_graph *b)
{
	for (int i = 0; i < tfk_graph_n_variables(a); i++)
		if (!tfk_tensor_equal(tfk_graph_var_at(a, i, NULL),
				      tfk_graph_var_at(b, i, NULL)))
			return 0;
	return 1;
}

static void test_ckpt(void)
{
	static const int ov[] = { 0, 1 };
	struct tfk_optim *o1 = NULL, *o2 = NULL;
	struct tfk_graph *g1 = ckpt_graph(1, 3, &o1), *g2, *g3;
	char *pre = tap_tmp("ckpt-1"), dir[512], buf[600];
	json_t *st = json_pack("{s:i, s:s}", "epoch", 1, "x", "y"), *back;
	int rc, n;
	long fails;

	ok(!tfk_ckpt_write(pre, g1, o1, ov, st, &err), "ckpt: writes");
	ok(!tfk_ckpt_read_state(pre, &back, &err) && json_equal(st, back),
	   "ckpt: the state reads back");
	json_decref(back);
	g2 = ckpt_graph(7, 3, NULL);
	{
		json_t *j = json_loads("{\"class_name\": \"SGD\", \"config\": "
				       "{\"momentum\": 0.9}}", 0, NULL);
		tfk_optim_new(j, "o", &o2, &err);
		json_decref(j);
	}
	ok(!tfk_ckpt_restore(pre, g2, o2, 2, ov, &err), "ckpt: restores");
	ok(same_vars(g1, g2), "ckpt: variables bit for bit");
	n = tfk_optim_n_slots(o2);
	{
		int same = n == tfk_optim_n_slots(o1) && n == 2;

		for (int k = 0; same && k < n; k++) {
			int v1, v2;
			const char *s1, *s2;

			same = tfk_tensor_equal(tfk_optim_slot(o1, k, &v1, &s1),
						tfk_optim_slot(o2, k, &v2, &s2))
				&& v1 == v2 && !strcmp(s1, s2);
		}
		ok(same, "ckpt: optimizer slots bit for bit");
	}

	/* A bias of 4 elements: refused, nothing written. */
	g3 = ckpt_graph(9, 4, NULL);
	{
		struct tfk_graph *g4 = ckpt_graph(9, 4, NULL);

		rc = tfk_ckpt_restore(pre, g3, NULL, 0, NULL, &err);
		ok(rc == TFK_EINVAL && same_vars(g3, g4),
		   "ckpt: a shape mismatch changes nothing");
		snprintf(buf, sizeof(buf), "%s.index: dense/bias: float32 [3] "
			 "in the checkpoint, the model has float32 [4]", pre);
		is_str(err.msg, buf, "... and says which tensor");
		tfk_graph_free(g4);
	}
	{
		struct tfk_tensor t;

		tfk_tensor_init(&t, TFK_DT_FLOAT, 0, NULL, &err);
		tfk_graph_variable(g2, "extra", &t, NULL, &err);
		rc = tfk_ckpt_restore(pre, g2, NULL, 0, NULL, &err);
		snprintf(buf, sizeof(buf), "%s.index: no tensor 'extra'", pre);
		ok(rc == TFK_ENOTFOUND, "ckpt: a variable missing from the "
		   "checkpoint");
		is_str(err.msg, buf, "... names it");
	}

	/* --init-from's halves: exactly the variables, or only the slots. */
	{
		char *pv = tap_tmp("vars-only");
		struct tfk_graph *g5 = ckpt_graph(5, 3, NULL);
		struct tfk_graph *g6 = ckpt_graph(5, 3, NULL);
		struct tfk_optim *o3 = NULL;
		json_t *j;

		rc = tfk_ckpt_restore_vars(pre, g5, &err);
		snprintf(buf, sizeof(buf), "%s.index: variable 'optimizer/"
			 "dense/bias/m' is not in the model", pre);
		ok(rc == TFK_EINVAL && same_vars(g5, g6), "restore_vars: a "
		   "key beyond the variables is refused, nothing changed");
		is_str(err.msg, buf, "... and named");
		ok(!tfk_ckpt_write(pv, g1, NULL, NULL, st, &err) &&
		   !tfk_ckpt_restore_vars(pv, g5, &err) && same_vars(g1, g5),
		   "restore_vars: the variables bit for bit");
		rc = tfk_ckpt_restore_vars(pv, g2, &err);
		snprintf(buf, sizeof(buf), "%s.index: the model's variable "
			 "'extra' is missing", pv);
		ok(rc == TFK_ENOTFOUND, "restore_vars: a variable missing");
		is_str(err.msg, buf, "... named");
		j = json_loads("{\"class_name\": \"SGD\", \"config\": "
			       "{\"momentum\": 0.9}}", 0, NULL);
		tfk_optim_new(j, "o", &o3, &err);
		json_decref(j);
		ok(!tfk_ckpt_restore_slots(pre, g6, o3, 2, ov, &err) &&
		   tfk_optim_n_slots(o3) == 2 &&
		   tfk_tensor_equal(tfk_optim_slot(o1, 1, NULL, NULL),
				    tfk_optim_slot(o3, 1, NULL, NULL)),
		   "restore_slots: the slots bit for bit");
		{
			struct tfk_graph *g7 = ckpt_graph(5, 3, NULL);

			ok(same_vars(g6, g7), "restore_slots: the variables "
			   "untouched");
			tfk_graph_free(g7);
		}
		tfk_ckpt_remove(pv);
		tfk_optim_free(o3);
		tfk_graph_free(g5);
		tfk_graph_free(g6);
	}

	/* The pointer file. */
	snprintf(dir, sizeof(dir), "%s", tap_tmpdir());
	rc = tfk_ckpt_latest(dir, buf, sizeof(buf), &err);
	ok(rc == TFK_ENOTFOUND && strstr(err.msg, ": no checkpoint"),
	   "pointer: none yet");
	{
		const char *all[] = { "ckpt-1", "ckpt-2" };
		char *p, want[600];
		size_t len;

		ok(!tfk_ckpt_set_latest(dir, "ckpt-2", all, 2, &err),
		   "pointer: written");
		p = tap_read_file(tap_tmp("checkpoint"), &len);
		is_str(p, "model_checkpoint_path: \"ckpt-2\"\n"
		       "all_model_checkpoint_paths: \"ckpt-1\"\n"
		       "all_model_checkpoint_paths: \"ckpt-2\"\n",
		       "pointer: TF's text form");
		free(p);
		snprintf(want, sizeof(want), "%s/ckpt-2", dir);
		ok(!tfk_ckpt_latest(dir, buf, sizeof(buf), &err), "pointer: "
		   "reads");
		is_str(buf, want, "pointer: relative to the directory");
		tap_write_file(tap_tmp("checkpoint"), "x: 1\n"
			       "model_checkpoint_path: \"/abs/ckpt-9\"\n", 41);
		ok(!tfk_ckpt_latest(dir, buf, sizeof(buf), &err) &&
		   !strcmp(buf, "/abs/ckpt-9"), "pointer: an absolute path "
		   "as is, other lines skipped");
		tap_write_file(tap_tmp("checkpoint"),
			       "model_checkpoint_path: ckpt-9\n", 30);
		ok(tfk_ckpt_latest(dir, buf, sizeof(buf), &err) ==
		   TFK_ECORRUPT && strstr(err.msg, "malformed"),
		   "pointer: unquoted is corrupt");
		tfk_ckpt_set_latest(dir, "ckpt-2", all, 2, &err);
		ok(tfk_ckpt_latest(dir, buf, 4, &err) == TFK_EINVAL,
		   "pointer: a short buffer");
	}

	/* Failed allocations: an error, never a crash or a leak. */
	for (fails = 0; fails < 400; fails++) {
		tfk_alloc_fail_after(fails);
		rc = tfk_ckpt_write(pre, g1, o1, ov, st, &err);
		tfk_alloc_fail_after(-1);
		if (!rc)
			break;
	}
	ok(fails < 400, "ckpt write: every failed allocation reported "
	   "(%ld tried)", fails);
	for (fails = 0; fails < 400; fails++) {
		tfk_alloc_fail_after(fails);
		rc = tfk_ckpt_restore(pre, g1, o1, 2, ov, &err);
		tfk_alloc_fail_after(-1);
		if (!rc)
			break;
	}
	ok(fails < 400, "ckpt restore: every failed allocation reported "
	   "(%ld tried)", fails);
	tfk_ckpt_remove(pre);
	snprintf(buf, sizeof(buf), "%s.index", pre);
	ok(access(buf, F_OK) && errno == ENOENT, "ckpt: removed");
	json_decref(st);
	tfk_optim_free(o1);
	tfk_optim_free(o2);
	tfk_graph_free(g1);
	tfk_graph_free(g2);
	tfk_graph_free(g3);
}

/* The trainer --------------------------------------------------------------- */

static const char model_json[] =
	"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"m\", "
	"\"layers\": [{\"class_name\": \"InputLayer\", \"config\": "
	"{\"batch_input_shape\": [null, 4], \"name\": \"x\"}}, "
	"{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\", "
	"\"units\": 3, \"activation\": \"softmax\"}}]}}";

struct batch {
	struct tfk_feed_batch b;
	struct tfk_tensor in;
	float x[64];
	int64_t y[16];
};

static void batch_make(struct batch *bt, int n, float nan_at)
{
	memset(bt, 0, sizeof(*bt));
	for (int i = 0; i < n * 4; i++)
		bt->x[i] = (float)((i * 37) % 11) / 11.0f - 0.5f;
	if (nan_at >= 0)
		bt->x[(int)nan_at] = NAN;
	for (int i = 0; i < n; i++)
		bt->y[i] = i % 3;
	tfk_tensor_init_view(&bt->in, TFK_DT_FLOAT, 2, (int64_t[]){ n, 4 },
			     bt->x, (size_t)n * 16, TFK_OWN_BORROWED, &err);
	tfk_tensor_init_view(&bt->b.label, TFK_DT_INT64, 1,
			     (int64_t[]){ n }, bt->y, (size_t)n * 8,
			     TFK_OWN_BORROWED, &err);
	bt->b.n = (size_t)n;
	bt->b.n_inputs = 1;
	bt->b.inputs = &bt->in;
}

static void test_trainer(void)
{
	struct tfk_model *m = NULL;
	struct tfk_optim *o = NULL;
	struct tfk_trainer *tr = NULL;
	struct tfk_loss_spec ls;
	struct tfk_train_opts to = { .seed = 7, .threads = 1 };
	struct tfk_exec_stats es;
	struct batch b8, b4, bn;
	json_t *mj = json_loads(model_json, 0, NULL);
	json_t *lj = json_string("sparse_categorical_crossentropy");
	json_t *oj = json_string("sgd");
	json_t *mt = json_loads("[\"accuracy\"]", 0, NULL);
	unsigned char before[64];
	struct tfk_tensor *k;
	double l1, l2;
	int rc;

	rc = tfk_keras_build(mj, "model", 1, &m, &err);
	if (!rc)
		rc = tfk_loss_parse(lj, "compile.loss", &ls, &err);
	if (!rc)
		rc = tfk_optim_new(oj, "compile.optimizer", &o, &err);
	if (!rc)
		rc = tfk_trainer_new(&tr, m, &ls, NULL, mt, "compile.metrics",
				     o, &to, &err);
	ok(!rc, "trainer: made (%s)", rc ? err.msg : "");
	if (rc)
		goto out;
	batch_make(&b8, 8, -1);
	batch_make(&b4, 4, -1);
	is_str(tfk_trainer_metric_name(tr, 0), "accuracy", "metric name");
	for (int s = 0; s < 3; s++)
		rc |= tfk_trainer_step(tr, &b8.b, (uint64_t)s, &err);
	tfk_trainer_exec_stats(tr, 1, &es);
	ok(!rc && es.n_plans == 1, "3 steps of 8: one plan (%d)",
	   es.n_plans);
	is_int(tfk_optim_iterations(o), 3, "3 optimizer iterations");
	tfk_trainer_reset(tr);
	tfk_trainer_step(tr, &b8.b, 3, &err);
	l1 = tfk_trainer_last_loss(tr);
	tfk_trainer_step(tr, &b4.b, 4, &err);
	l2 = tfk_trainer_last_loss(tr);
	tfk_trainer_exec_stats(tr, 1, &es);
	ok(es.n_plans == 2, "a batch of 4 plans once more");
	ok(fabs(tfk_trainer_loss(tr) - (8 * l1 + 4 * l2) / 12) < 1e-12,
	   "epoch loss: the mean weighted by batch size, as Keras' tracker");
	ok(tfk_trainer_metric(tr, 0) >= 0 && tfk_trainer_metric(tr, 0) <= 1,
	   "accuracy in [0, 1]");

	k = tfk_graph_var(m->g, "d/kernel");
	memcpy(before, k->data, k->nbytes);
	batch_make(&bn, 8, 5);
	tfk_trainer_reset(tr);
	rc = tfk_trainer_step(tr, &bn.b, 5, &err);
	ok(rc == TFK_EINVAL, "NaN input: the step fails");
	is_str(err.msg, "loss is nan", "... saying so");
	ok(!memcmp(before, k->data, k->nbytes) &&
	   tfk_optim_iterations(o) == 5, "... weights and iterations "
	   "untouched");
	/* One trainer per model (it adds its placeholders to the graph):
	 * a fresh model with the same weights. */
	tfk_trainer_free(tr);
	tr = NULL;
	tfk_model_free(m);
	m = NULL;
	to.nan_skip = 1;
	rc = tfk_keras_build(mj, "model", 1, &m, &err);
	k = rc ? NULL : tfk_graph_var(m->g, "d/kernel");
	if (!rc) {
		memcpy(k->data, before, k->nbytes);
		rc = tfk_trainer_new(&tr, m, &ls, NULL, mt, "compile.metrics",
				     o, &to, &err);
	}
	ok(!rc, "a trainer with nan_skip (%s)", rc ? err.msg : "");
	if (rc)
		goto out;
	rc = tfk_trainer_step(tr, &bn.b, 5, &err);
	ok(rc == 1 && !memcmp(before, k->data, k->nbytes) &&
	   isnan(tfk_trainer_loss(tr)), "nan_skip: 1, no update, nothing "
	   "accumulated");
	rc = tfk_trainer_eval(tr, &b8.b, &err);
	ok(!rc && !memcmp(before, k->data, k->nbytes) &&
	   isfinite(tfk_trainer_loss(tr)), "eval: a loss, no training");
out:
	tfk_trainer_free(tr);
	tfk_optim_free(o);
	tfk_model_free(m);
	json_decref(mj);
	json_decref(lj);
	json_decref(oj);
	json_decref(mt);
}

int main(void)
{
	test_repr();
	test_logs();
	test_early_stopping();
	test_plateau_and_state();
	test_callback_errors();
	test_ckpt();
	test_trainer();
	return tap_done();
}
