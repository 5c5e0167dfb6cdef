/*
 * optim.c - Keras optimizers (TF 2.11+ keras/optimizers, one file per class) and the
 * learning-rate schedules they take.
 *
 * One step, as Keras' apply_gradients: clip the gradients (clipnorm per
 * variable, global_clipnorm over all, or clipvalue), apply weight decay
 * (w -= w * weight_decay * lr, before the update, for every optimizer
 * that has a weight_decay: AdamW's default 0.004, None elsewhere), then
 * each variable's update_step, then iterations += 1. The learning rate
 * of the step is the schedule at `iterations` (0 for the first step).
 *
 * Each update is one fused loop over the variable (slots read and
 * written once), in float32 with Keras' order of operations:
 *   SGD      m = -g*lr + m*momentum; w += m   (nesterov: w += -g*lr + m*momentum)
 *   Adam     m += (g - m)(1 - b1); v += (g² - v)(1 - b2); [v̂ = max(v̂, v)]
 *            w -= m*alpha / (sqrt(v) + eps), alpha = lr sqrt(1 - b2^t) / (1 - b1^t)
 *   RMSprop  vel = rho vel + (1 - rho) g²; [ag = rho ag + (1 - rho) g;
 *            den = vel - ag² + eps] else den = vel + eps;
 *            inc = lr g rsqrt(den); [mom = momentum mom + inc; w -= mom] else w -= inc
 *   Adagrad  acc += g²; w -= lr g / sqrt(acc + eps)   (acc starts at 0.1)
 * The per-step scalars (alpha, 1 - b1, ...) are computed in double and
 * rounded once. Each loop has a plain C _ref version (the
 * specification) and an AVX version doing the same operations in the
 * same order without FMA, so the two agree bit for bit (t-optim checks
 * it); the AVX one is chosen at run time when the CPU has AVX. Large
 * variables are split across threads with tfk_parallel_for; the loops
 * are elementwise, so the split never changes a result.
 *
 * Rejected: evaluating the update as graph ops (several passes over
 * every slot per step and executor overhead where one loop does);
 * Keras' legacy (pre-2.11) optimizers, whose Adam places epsilon
 * differently ("epsilon hat") and which take `decay`: refused.
 *
 * Slots are made on the first apply (or init_slots) and never
 * reallocated; the clip scratch likewise, so a step allocates nothing.
 */
#include "nn/optim.h"

#include "nn/json-impl.h"
#include "util/alloc.h"
#include "util/pool.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_AVX_PATH 1
#endif

enum okind { O_SGD, O_ADAM, O_ADAMW, O_RMSPROP, O_ADAGRAD };
enum skind { S_CONST, S_EXP, S_PIECE, S_COS };

static const char *const class_names[] = {
	"SGD", "Adam", "AdamW", "RMSprop", "Adagrad"
};
static const char *const sched_names[] = {
	NULL, "ExponentialDecay", "PiecewiseConstantDecay", "CosineDecay"
};

struct sched {
	enum skind kind;
	double init, decay_steps, decay_rate, alpha;
	double warmup_target, warmup_steps;
	int staircase, has_warmup_target;
	int n_b;
	double *b, *vals;
	char *name;
};

/* Per-step scalars handed to the loops. */
struct coef {
	float lr, wd, mom, b1c, b2c, alpha, eps, rho, rhoc;
	int has_wd, nesterov, amsgrad, centered, has_mom;
};

struct tfk_optim {
	enum okind kind;
	char *name;
	double lr;		/* constant learning rate (S_CONST) */
	struct sched sch;
	int lr_set;		/* set_lr override in force */
	double lr_override;
	double beta_1, beta_2, epsilon, momentum, rho, init_acc;
	int nesterov, amsgrad, centered;
	int has_wd;
	double weight_decay;
	double clipnorm, clipvalue, global_clipnorm;	/* 0: off */
	double ema_momentum;
	int has_ema_freq;
	double ema_freq;
	int64_t iterations;
	int threads, use_ref;

	/* built on first apply / init_slots */
	int built, n_vars, n_kinds;
	const char *slot_names[3];
	struct tfk_tensor *slots;	/* n_vars * n_kinds, var-major */
	struct tfk_tdesc *shapes;	/* n_vars */
	float *scratch;			/* clipped gradient, largest var */
	double *sumsq;			/* n_vars, for clipping */
};

/* JSON helpers ---------------------------------------------------------- */

static int range_err(const char *path, const char *key, double lo, int lo_in,
		     double hi, int hi_in, int nullable, struct tfk_err *err)
{
	char r[96];

	if (isinf(hi))
		snprintf(r, sizeof(r), "a number %s %g", lo_in ? ">=" : ">",
			 lo);
	else
		snprintf(r, sizeof(r), "a number in %c%g, %g%c",
			 lo_in ? '[' : '(', lo, hi, hi_in ? ']' : ')');
	return tfk_errf(err, TFK_EINVAL, "%s.%s: expected %s%s", path, key, r,
			nullable ? " or null" : "");
}

/*
 * cfg.key as a number in the range into *out (left alone when absent).
 * nullable: null is accepted and sets *is_null (else an error).
 */
static int num_key(const json_t *cfg, const char *key, const char *path,
		   double lo, int lo_in, double hi, int hi_in, int nullable,
		   double *out, int *is_null, struct tfk_err *err)
{
	const json_t *v = json_object_get(cfg, key);
	double x;

	if (!v)
		return 0;
	if (json_is_null(v) && nullable) {
		if (is_null)
			*is_null = 1;
		return 0;
	}
	if (json_is_number(v)) {
		x = json_number_value(v);
		if (isfinite(x) && (lo_in ? x >= lo : x > lo) &&
		    (hi_in ? x <= hi : x < hi)) {
			*out = x;
			if (is_null)
				*is_null = 0;
			return 0;
		}
	}
	return range_err(path, key, lo, lo_in, hi, hi_in, nullable, err);
}

static int bool_key(const json_t *cfg, const char *key, const char *path,
		    int *out, struct tfk_err *err)
{
	const json_t *v = json_object_get(cfg, key);

	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return tfk_errf(err, TFK_EINVAL, "%s.%s: expected true or "
				"false", path, key);
	*out = json_is_true(v);
	return 0;
}

/* The keys Adam and RMSprop share the shape of, checked in this order:
 * two decay rates k1, k2 in [0, 1) (beta_1 and beta_2; rho and
 * momentum), epsilon >= 0 and a flag (amsgrad; centered). */
static int decay_keys(const json_t *cfg, const char *path, const char *k1,
		      double *x1, const char *k2, double *x2, double *eps,
		      const char *flag, int *f, struct tfk_err *err)
{
	int rc = num_key(cfg, k1, path, 0, 1, 1, 0, 0, x1, NULL, err);

	if (!rc)
		rc = num_key(cfg, k2, path, 0, 1, 1, 0, 0, x2, NULL, err);
	if (!rc)
		rc = num_key(cfg, "epsilon", path, 0, 1, INFINITY, 0, 0, eps,
			     NULL, err);
	if (!rc)
		rc = bool_key(cfg, flag, path, f, err);
	return rc;
}

/* cfg.key as a string or null into a fresh copy (*out NULL for null). */
static int name_key(const json_t *cfg, const char *key, const char *path,
		    char **out, struct tfk_err *err)
{
	const json_t *v = json_object_get(cfg, key);

	if (!v)
		return 0;
	if (json_is_null(v)) {
		tfk_free(*out);
		*out = NULL;
		return 0;
	}
	if (!json_is_string(v))
		return tfk_errf(err, TFK_EINVAL, "%s.%s: expected a string",
				path, key);
	tfk_free(*out);
	if (!(*out = tfk_strdup(json_string_value(v))))
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", path);
	return 0;
}

/*
 * {"class_name": C, "config": {...}} with Keras 3's "module" and
 * "registered_name" accepted and ignored. *cls and *cfg borrowed.
 */
static int class_object(const json_t *v, const char *path, const char **cls,
			const json_t **cfg, struct tfk_err *err)
{
	static const char *const keys[] = {
		"class_name", "config", "module", "registered_name", NULL
	};
	const json_t *c;
	int rc = kjson_known_keys(v, keys, path, "object", err);

	if (rc)
		return rc;
	c = json_object_get(v, "class_name");
	if (!json_is_string(c))
		return tfk_errf(err, TFK_EINVAL, "%s.class_name: expected a "
				"string", path);
	*cls = json_string_value(c);
	c = json_object_get(v, "config");
	if (c && !json_is_object(c) && !json_is_null(c))
		return tfk_errf(err, TFK_EINVAL, "%s.config: expected an "
				"object", path);
	*cfg = c && json_is_object(c) ? c : NULL;
	return 0;
}

/* Schedules ------------------------------------------------------------- */

static int sched_parse(const json_t *v, const char *path, struct sched *s,
		       struct tfk_err *err)
{
	static const char *const exp_keys[] = {
		"initial_learning_rate", "decay_steps", "decay_rate",
		"staircase", "name", NULL
	};
	static const char *const pw_keys[] = {
		"boundaries", "values", "name", NULL
	};
	static const char *const cos_keys[] = {
		"initial_learning_rate", "decay_steps", "alpha", "name",
		"warmup_target", "warmup_steps", NULL
	};
	const char *cls;
	const json_t *cfg;
	char cp[512];
	int rc, i, isnull = 1;

	if ((rc = class_object(v, path, &cls, &cfg, err)))
		return rc;
	snprintf(cp, sizeof(cp), "%.480s.config", path);
	for (i = 1; i < 4; i++)
		if (!strcmp(cls, sched_names[i]))
			break;
	if (i == 4)
		return tfk_errf(err, TFK_EINVAL, "%s.class_name: unknown "
				"learning rate schedule \"%s\" (expected "
				"ExponentialDecay, PiecewiseConstantDecay or "
				"CosineDecay)", path, cls);
	s->kind = (enum skind)i;
	if (!cfg)
		return tfk_errf(err, TFK_EINVAL, "%s.config: missing (%s needs "
				"its arguments)", path, cls);
	if (s->kind == S_EXP || s->kind == S_COS) {
		static const char *const req[] = {
			"initial_learning_rate", "decay_steps", "decay_rate"
		};
		int nreq = s->kind == S_EXP ? 3 : 2;

		rc = kjson_known_keys(cfg, s->kind == S_EXP ? exp_keys :
				      cos_keys, cp, cls, err);
		for (i = 0; !rc && i < nreq; i++)
			if (!json_object_get(cfg, req[i]))
				rc = tfk_errf(err, TFK_EINVAL, "%s.%s: missing",
					      cp, req[i]);
		if (!rc)
			rc = num_key(cfg, "initial_learning_rate", cp, 0, 1,
				     INFINITY, 0, 0, &s->init, NULL, err);
		if (!rc)
			rc = num_key(cfg, "decay_steps", cp, 0, 0, INFINITY, 0,
				     0, &s->decay_steps, NULL, err);
	} else {
		rc = kjson_known_keys(cfg, pw_keys, cp, cls, err);
	}
	if (rc)
		return rc;
	if (s->kind == S_EXP) {
		rc = num_key(cfg, "decay_rate", cp, 0, 1, INFINITY, 0, 0,
			     &s->decay_rate, NULL, err);
		if (!rc)
			rc = bool_key(cfg, "staircase", cp, &s->staircase, err);
	} else if (s->kind == S_COS) {
		s->alpha = 0;
		rc = num_key(cfg, "alpha", cp, 0, 1, 1, 1, 0, &s->alpha, NULL,
			     err);
		if (!rc)
			rc = num_key(cfg, "warmup_target", cp, 0, 1, INFINITY,
				     0, 1, &s->warmup_target, &isnull, err);
		s->has_warmup_target = !isnull;
		s->warmup_steps = 0;
		if (!rc)
			rc = num_key(cfg, "warmup_steps", cp, 0, 1, INFINITY,
				     0, 0, &s->warmup_steps, NULL, err);
	} else {
		const json_t *b = json_object_get(cfg, "boundaries");
		const json_t *vs = json_object_get(cfg, "values");
		size_t k;

		if (!json_is_array(b) || json_array_size(b) < 1)
			return tfk_errf(err, TFK_EINVAL, "%s.boundaries: "
					"expected a non-empty array of "
					"numbers", cp);
		s->n_b = (int)json_array_size(b);
		if (!json_is_array(vs) ||
		    json_array_size(vs) != (size_t)s->n_b + 1)
			return tfk_errf(err, TFK_EINVAL, "%s.values: expected "
					"an array of %d numbers (one more "
					"than boundaries)", cp, s->n_b + 1);
		s->b = tfk_calloc((size_t)s->n_b, sizeof(double));
		s->vals = tfk_calloc((size_t)s->n_b + 1, sizeof(double));
		if (!s->b || !s->vals)
			return tfk_errf(err, TFK_ENOMEM, "%s: out of memory",
					path);
		for (k = 0; k <= (size_t)s->n_b; k++) {
			const json_t *x = json_array_get(vs, k);

			if (!json_is_number(x) ||
			    !isfinite(json_number_value(x)) ||
			    json_number_value(x) < 0)
				return tfk_errf(err, TFK_EINVAL, "%s.values[%zu]"
						": expected a number >= 0", cp,
						k);
			s->vals[k] = json_number_value(x);
			if (k == (size_t)s->n_b)
				break;
			x = json_array_get(b, k);
			if (!json_is_number(x) ||
			    !isfinite(json_number_value(x)))
				return tfk_errf(err, TFK_EINVAL, "%s.boundaries"
						"[%zu]: expected a number", cp,
						k);
			s->b[k] = json_number_value(x);
			if (k && !(s->b[k] > s->b[k - 1]))
				return tfk_errf(err, TFK_EINVAL, "%s.boundaries"
						"[%zu]: boundaries must be "
						"strictly increasing", cp, k);
		}
	}
	if (!rc)
		rc = name_key(cfg, "name", cp, &s->name, err);
	return rc;
}

static double sched_at(const struct sched *s, int64_t step)
{
	double x = (double)step, p, d;
	int i;

	switch (s->kind) {
	case S_EXP:
		p = x / s->decay_steps;
		if (s->staircase)
			p = floor(p);
		return s->init * pow(s->decay_rate, p);
	case S_PIECE:
		/* boundaries are cast to the step's integer type (tf.cast
		 * truncates); values[i] for b[i-1] < step <= b[i] */
		for (i = 0; i < s->n_b; i++)
			if (step <= (int64_t)s->b[i])
				return s->vals[i];
		return s->vals[s->n_b];
	case S_COS: {
		double from = s->init;

		if (s->has_warmup_target) {
			x = fmin(x, s->decay_steps + s->warmup_steps);
			if (x < s->warmup_steps)
				return (s->warmup_target - s->init) *
				       (x / s->warmup_steps) + s->init;
			x -= s->warmup_steps;
			from = s->warmup_target;
		} else {
			x = fmin(x, s->decay_steps);
		}
		d = 0.5 * (1.0 + cos(M_PI * (x / s->decay_steps)));
		return from * ((1 - s->alpha) * d + s->alpha);
	}
	default:
		return 0;
	}
}

static json_t *sched_config(const struct sched *s)
{
	json_t *cfg, *b, *v;
	int i;

	switch (s->kind) {
	case S_EXP:
		cfg = json_pack("{s:f, s:f, s:f, s:b}", "initial_learning_rate",
				s->init, "decay_steps", s->decay_steps,
				"decay_rate", s->decay_rate, "staircase",
				s->staircase);
		break;
	case S_PIECE:
		b = json_array();
		v = json_array();
		for (i = 0; b && v && i <= s->n_b; i++) {
			if (i < s->n_b)
				json_array_append_new(b, json_real(s->b[i]));
			json_array_append_new(v, json_real(s->vals[i]));
		}
		cfg = json_pack("{s:o, s:o}", "boundaries", b, "values", v);
		break;
	default:
		cfg = json_pack("{s:f, s:f, s:f}", "initial_learning_rate",
				s->init, "decay_steps", s->decay_steps,
				"alpha", s->alpha);
		if (cfg) {
			json_object_set_new(cfg, "warmup_target",
					    s->has_warmup_target ?
					    json_real(s->warmup_target) :
					    json_null());
			json_object_set_new(cfg, "warmup_steps",
					    json_real(s->warmup_steps));
		}
		break;
	}
	if (cfg)
		json_object_set_new(cfg, "name", s->name ?
				    json_string(s->name) : json_null());
	return json_pack("{s:s, s:o}", "class_name", sched_names[s->kind],
			 "config", cfg);
}

/* Parsing the optimizer ------------------------------------------------- */

static int parse_config(struct tfk_optim *o, const json_t *cfg,
			const char *cp, struct tfk_err *err)
{
	static const char *const common[] = {
		"name", "learning_rate", "weight_decay", "clipnorm",
		"clipvalue", "global_clipnorm", "use_ema", "ema_momentum",
		"ema_overwrite_frequency", "jit_compile",
		"is_legacy_optimizer", "loss_scale_factor",
		"gradient_accumulation_steps",
		/* per class, checked below */
		"momentum", "nesterov", "beta_1", "beta_2", "epsilon",
		"amsgrad", "rho", "centered", "initial_accumulator_value",
		NULL
	};
	static const char *const own[][5] = {
		[O_SGD] = { "momentum", "nesterov" },
		[O_ADAM] = { "beta_1", "beta_2", "epsilon", "amsgrad" },
		[O_ADAMW] = { "beta_1", "beta_2", "epsilon", "amsgrad" },
		[O_RMSPROP] = { "rho", "momentum", "epsilon", "centered" },
		[O_ADAGRAD] = { "initial_accumulator_value", "epsilon" },
	};
	const char *k;
	json_t *v;
	int rc, i, j, isnull, ema = 0, legacy = 0, jit = 0, n_clip = 0;

	if ((rc = kjson_known_keys(cfg, common, cp, class_names[o->kind],
				   err)))
		return rc;
	json_object_foreach((json_t *)cfg, k, v) {
		for (i = 13; common[i]; i++)
			if (!strcmp(k, common[i]))
				break;
		if (!common[i])
			continue;
		for (j = 0; j < 5 && own[o->kind][j]; j++)
			if (!strcmp(k, own[o->kind][j]))
				break;
		if (j == 5 || !own[o->kind][j])
			return tfk_errf(err, TFK_EINVAL, "%s.%s: unknown %s "
					"key", cp, k, class_names[o->kind]);
	}
	v = json_object_get(cfg, "learning_rate");
	if (v && json_is_object(v)) {
		char sp[512];

		snprintf(sp, sizeof(sp), "%.480s.learning_rate", cp);
		if ((rc = sched_parse(v, sp, &o->sch, err)))
			return rc;
	} else if ((rc = num_key(cfg, "learning_rate", cp, 0, 1, INFINITY, 0,
				 0, &o->lr, NULL, err))) {
		return rc;
	}
	isnull = !o->has_wd;
	rc = num_key(cfg, "weight_decay", cp, 0, 1, INFINITY, 0, 1,
		     &o->weight_decay, &isnull, err);
	if (rc)
		return rc;
	o->has_wd = !isnull;
	if (o->kind == O_ADAMW && !o->has_wd)
		return tfk_errf(err, TFK_EINVAL, "%s.weight_decay: AdamW "
				"needs a number", cp);
	{
		static const char *const ck[3] = {
			"clipnorm", "clipvalue", "global_clipnorm"
		};
		double *dst[3] = {
			&o->clipnorm, &o->clipvalue, &o->global_clipnorm
		};

		for (i = 0; i < 3; i++) {
			isnull = 1;
			rc = num_key(cfg, ck[i], cp, 0, 1, INFINITY, 0, 1,
				     dst[i], &isnull, err);
			if (rc)
				return rc;
			if (isnull)
				*dst[i] = 0;
			n_clip += *dst[i] > 0;
		}
		if (n_clip > 1)
			return tfk_errf(err, TFK_EINVAL, "%s: only one of "
					"clipnorm, clipvalue and "
					"global_clipnorm can be set", cp);
	}
	if ((rc = bool_key(cfg, "use_ema", cp, &ema, err)))
		return rc;
	if (ema)
		return tfk_errf(err, TFK_EINVAL, "%s.use_ema: true is not "
				"supported", cp);
	if ((rc = num_key(cfg, "ema_momentum", cp, 0, 1, 1, 1, 0,
			  &o->ema_momentum, NULL, err)))
		return rc;
	isnull = 1;
	if ((rc = num_key(cfg, "ema_overwrite_frequency", cp, 0, 1, INFINITY,
			  0, 1, &o->ema_freq, &isnull, err)))
		return rc;
	o->has_ema_freq = !isnull;
	if ((rc = bool_key(cfg, "jit_compile", cp, &jit, err)) ||
	    (rc = bool_key(cfg, "is_legacy_optimizer", cp, &legacy, err)))
		return rc;
	if (legacy)
		return tfk_errf(err, TFK_EINVAL, "%s.is_legacy_optimizer: "
				"legacy (pre-2.11) Keras optimizers are not "
				"supported", cp);
	for (i = 0; i < 2; i++) {
		static const char *const nk[2] = {
			"loss_scale_factor", "gradient_accumulation_steps"
		};

		v = json_object_get(cfg, nk[i]);
		if (v && !json_is_null(v))
			return tfk_errf(err, TFK_EINVAL, "%s.%s: only null is "
					"supported", cp, nk[i]);
	}
	if ((rc = name_key(cfg, "name", cp, &o->name, err)))
		return rc;
	switch (o->kind) {
	case O_SGD:
		rc = num_key(cfg, "momentum", cp, 0, 1, 1, 1, 0, &o->momentum,
			     NULL, err);
		if (!rc)
			rc = bool_key(cfg, "nesterov", cp, &o->nesterov, err);
		break;
	case O_ADAM:
	case O_ADAMW:
		rc = decay_keys(cfg, cp, "beta_1", &o->beta_1, "beta_2",
				&o->beta_2, &o->epsilon, "amsgrad",
				&o->amsgrad, err);
		break;
	case O_RMSPROP:
		rc = decay_keys(cfg, cp, "rho", &o->rho, "momentum",
				&o->momentum, &o->epsilon, "centered",
				&o->centered, err);
		break;
	case O_ADAGRAD:
		rc = num_key(cfg, "initial_accumulator_value", cp, 0, 1,
			     INFINITY, 0, 0, &o->init_acc, NULL, err);
		if (!rc)
			rc = num_key(cfg, "epsilon", cp, 0, 1, INFINITY, 0, 0,
				     &o->epsilon, NULL, err);
		break;
	}
	return rc;
}

/* Keras' constructor defaults. */
static void defaults(struct tfk_optim *o, enum okind kind)
{
	o->kind = kind;
	o->lr = kind == O_SGD ? 0.01 : 0.001;
	o->beta_1 = 0.9;
	o->beta_2 = 0.999;
	o->epsilon = 1e-7;
	o->rho = 0.9;
	o->init_acc = 0.1;
	o->ema_momentum = 0.99;
	o->has_wd = kind == O_ADAMW;
	o->weight_decay = kind == O_ADAMW ? 0.004 : 0;
	o->threads = 1;
}

int tfk_optim_new(const json_t *v, const char *path, struct tfk_optim **out,
		  struct tfk_err *err)
{
	static const char *const lower[] = {
		"sgd", "adam", "adamw", "rmsprop", "adagrad"
	};
	struct tfk_optim *o;
	const char *cls = NULL;
	const json_t *cfg = NULL;
	char cp[512];
	int i, rc = 0;

	*out = NULL;
	if (json_is_string(v)) {
		cls = json_string_value(v);
	} else if (json_is_object(v)) {
		if ((rc = class_object(v, path, &cls, &cfg, err)))
			return rc;
	} else {
		return tfk_errf(err, TFK_EINVAL, "%s: expected an optimizer "
				"name or {\"class_name\", \"config\"}", path);
	}
	for (i = 0; i < 5; i++)
		if (!strcasecmp(cls, lower[i]))
			break;
	if (i == 5)
		return tfk_errf(err, TFK_EINVAL, "%s%s: unknown optimizer "
				"\"%s\" (expected SGD, Adam, AdamW, RMSprop or "
				"Adagrad)", path, cfg || json_is_object(v) ?
				".class_name" : "", cls);
	o = tfk_calloc(1, sizeof(*o));
	if (!o)
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", path);
	defaults(o, (enum okind)i);
	snprintf(cp, sizeof(cp), "%.480s.config", path);
	if (cfg)
		rc = parse_config(o, cfg, cp, err);
	if (rc) {
		tfk_optim_free(o);
		return rc;
	}
	*out = o;
	return 0;
}

static void free_slots(struct tfk_optim *o)
{
	int i;

	if (o->slots)
		for (i = 0; i < o->n_vars * o->n_kinds; i++)
			tfk_tensor_release(&o->slots[i]);
	tfk_free(o->slots);
	tfk_free(o->shapes);
	tfk_free(o->scratch);
	tfk_free(o->sumsq);
	o->slots = NULL;
	o->shapes = NULL;
	o->scratch = NULL;
	o->sumsq = NULL;
	o->built = 0;
}

void tfk_optim_free(struct tfk_optim *o)
{
	if (!o)
		return;
	free_slots(o);
	tfk_free(o->sch.b);
	tfk_free(o->sch.vals);
	tfk_free(o->sch.name);
	tfk_free(o->name);
	tfk_free(o);
}

const char *tfk_optim_name(const struct tfk_optim *o)
{
	return class_names[o->kind];
}

json_t *tfk_optim_config(const struct tfk_optim *o)
{
	json_t *c = json_object(), *lr;

	if (!c)
		return NULL;
	json_object_set_new(c, "name", json_string(o->name ? o->name :
						    class_names[o->kind]));
	json_object_set_new(c, "weight_decay", o->has_wd ?
			    json_real(o->weight_decay) : json_null());
	json_object_set_new(c, "clipnorm", o->clipnorm > 0 ?
			    json_real(o->clipnorm) : json_null());
	json_object_set_new(c, "global_clipnorm", o->global_clipnorm > 0 ?
			    json_real(o->global_clipnorm) : json_null());
	json_object_set_new(c, "clipvalue", o->clipvalue > 0 ?
			    json_real(o->clipvalue) : json_null());
	json_object_set_new(c, "use_ema", json_false());
	json_object_set_new(c, "ema_momentum", json_real(o->ema_momentum));
	json_object_set_new(c, "ema_overwrite_frequency", o->has_ema_freq ?
			    json_integer((json_int_t)o->ema_freq) :
			    json_null());
	json_object_set_new(c, "jit_compile", json_false());
	json_object_set_new(c, "is_legacy_optimizer", json_false());
	if (o->lr_set || o->sch.kind == S_CONST)
		lr = json_real(o->lr_set ? o->lr_override : o->lr);
	else
		lr = sched_config(&o->sch);
	json_object_set_new(c, "learning_rate", lr);
	switch (o->kind) {
	case O_SGD:
		json_object_set_new(c, "momentum", json_real(o->momentum));
		json_object_set_new(c, "nesterov", json_boolean(o->nesterov));
		break;
	case O_ADAM:
	case O_ADAMW:
		json_object_set_new(c, "beta_1", json_real(o->beta_1));
		json_object_set_new(c, "beta_2", json_real(o->beta_2));
		json_object_set_new(c, "epsilon", json_real(o->epsilon));
		json_object_set_new(c, "amsgrad", json_boolean(o->amsgrad));
		break;
	case O_RMSPROP:
		json_object_set_new(c, "rho", json_real(o->rho));
		json_object_set_new(c, "momentum", json_real(o->momentum));
		json_object_set_new(c, "epsilon", json_real(o->epsilon));
		json_object_set_new(c, "centered", json_boolean(o->centered));
		break;
	case O_ADAGRAD:
		json_object_set_new(c, "initial_accumulator_value",
				    json_real(o->init_acc));
		json_object_set_new(c, "epsilon", json_real(o->epsilon));
		break;
	}
	return c;
}

double tfk_optim_lr(const struct tfk_optim *o)
{
	if (o->lr_set)
		return o->lr_override;
	if (o->sch.kind != S_CONST)
		return sched_at(&o->sch, o->iterations);
	return o->lr;
}

void tfk_optim_set_lr(struct tfk_optim *o, double lr)
{
	o->lr_set = 1;
	o->lr_override = lr;
}

int64_t tfk_optim_iterations(const struct tfk_optim *o)
{
	return o->iterations;
}

void tfk_optim_set_iterations(struct tfk_optim *o, int64_t it)
{
	o->iterations = it;
}

void tfk_optim_set_threads(struct tfk_optim *o, int threads)
{
	o->threads = threads < 1 ? 1 : threads;
}

void tfk_optim_set_ref(struct tfk_optim *o, int on)
{
	o->use_ref = on;
}

/* Slots ----------------------------------------------------------------- */

static void slot_kinds(struct tfk_optim *o)
{
	int n = 0;

	switch (o->kind) {
	case O_SGD:
		if (o->momentum > 0)
			o->slot_names[n++] = "m";
		break;
	case O_ADAM:
	case O_ADAMW:
		o->slot_names[n++] = "m";
		o->slot_names[n++] = "v";
		if (o->amsgrad)
			o->slot_names[n++] = "vhat";
		break;
	case O_RMSPROP:
		o->slot_names[n++] = "velocity";
		if (o->momentum > 0)
			o->slot_names[n++] = "momentum";
		if (o->centered)
			o->slot_names[n++] = "average_gradient";
		break;
	case O_ADAGRAD:
		o->slot_names[n++] = "accumulator";
		break;
	}
	o->n_kinds = n;
}

/* The variables must be float32 and (once built) the same shapes. */
static int check_vars(struct tfk_optim *o, int n,
		      struct tfk_tensor *const *vars, struct tfk_err *err)
{
	int i;

	if (n < 0 || (o->built && n != o->n_vars))
		return tfk_errf(err, TFK_EINVAL, "optimizer: %d variables, "
				"built for %d", n, o->n_vars);
	for (i = 0; i < n; i++) {
		if (vars[i]->dtype != TFK_DT_FLOAT)
			return tfk_errf(err, TFK_EINVAL, "optimizer: variable "
					"%d is %s, not float32", i,
					tfk_dtype_name(vars[i]->dtype));
		if (o->built && !tfk_shape_equal(vars[i]->rank,
						 vars[i]->shape,
						 o->shapes[i].rank,
						 o->shapes[i].shape)) {
			char a[64], b[64];

			return tfk_errf(err, TFK_EINVAL, "optimizer: variable "
					"%d is %s, was %s", i,
					tfk_shape_str(vars[i]->rank,
						      vars[i]->shape, a,
						      sizeof(a)),
					tfk_shape_str(o->shapes[i].rank,
						      o->shapes[i].shape, b,
						      sizeof(b)));
		}
	}
	return 0;
}

static int build(struct tfk_optim *o, int n, struct tfk_tensor *const *vars,
		 struct tfk_err *err)
{
	int i, k, rc;
	int64_t most = 0;

	if ((rc = check_vars(o, n, vars, err)))
		return rc;
	slot_kinds(o);
	o->n_vars = n;
	o->shapes = tfk_calloc((size_t)n + 1, sizeof(*o->shapes));
	o->slots = tfk_calloc((size_t)n * o->n_kinds + 1, sizeof(*o->slots));
	o->sumsq = tfk_calloc((size_t)n + 1, sizeof(double));
	if (!o->shapes || !o->slots || !o->sumsq)
		goto nomem;
	for (i = 0; i < n; i++) {
		tfk_tensor_desc(vars[i], &o->shapes[i]);
		if (tfk_tensor_numel(vars[i]) > most)
			most = tfk_tensor_numel(vars[i]);
		for (k = 0; k < o->n_kinds; k++) {
			struct tfk_tensor *s = &o->slots[i * o->n_kinds + k];

			rc = tfk_tensor_init(s, TFK_DT_FLOAT, vars[i]->rank,
					     vars[i]->shape, err);
			if (rc) {
				free_slots(o);
				return rc;
			}
			if (o->kind == O_ADAGRAD) {
				float *p = s->data, a = (float)o->init_acc;
				int64_t j, m = tfk_tensor_numel(s);

				for (j = 0; j < m; j++)
					p[j] = a;
			}
		}
	}
	if (o->clipnorm > 0 || o->clipvalue > 0 || o->global_clipnorm > 0) {
		o->scratch = tfk_malloc((size_t)(most ? most : 1) *
					sizeof(float));
		if (!o->scratch)
			goto nomem;
	}
	o->built = 1;
	return 0;
nomem:
	free_slots(o);
	return tfk_errf(err, TFK_ENOMEM, "optimizer: out of memory for slots");
}

int tfk_optim_init_slots(struct tfk_optim *o, int n,
			 struct tfk_tensor *const *vars, struct tfk_err *err)
{
	if (o->built)
		return check_vars(o, n, vars, err);
	return build(o, n, vars, err);
}

int tfk_optim_n_slots(const struct tfk_optim *o)
{
	return o->built ? o->n_vars * o->n_kinds : 0;
}

struct tfk_tensor *tfk_optim_slot(struct tfk_optim *o, int k, int *var,
				  const char **name)
{
	if (!o->built || k < 0 || k >= o->n_vars * o->n_kinds)
		return NULL;
	if (var)
		*var = k / o->n_kinds;
	if (name)
		*name = o->slot_names[k % o->n_kinds];
	return &o->slots[k];
}

/* The update loops ------------------------------------------------------ */

/* w -= w * wd * lr, Keras' _apply_weight_decay, fused into each loop */
#define DECAY(c, w) ((c)->has_wd ? (w) - (w) * (c)->wd * (c)->lr : (w))

static void sgd_ref(const struct coef *c, float *w, const float *g,
		    float *m, float *u1, float *u2, int64_t n)
{
	int64_t i;

	for (i = 0; i < n; i++) {
		float wi = DECAY(c, w[i]), step = -g[i] * c->lr;

		if (!c->has_mom) {
			w[i] = wi + step;
			continue;
		}
		m[i] = step + m[i] * c->mom;
		w[i] = c->nesterov ? wi + (step + m[i] * c->mom) : wi + m[i];
	}
}

static void adam_ref(const struct coef *c, float *w, const float *g,
		     float *m, float *v, float *vh, int64_t n)
{
	int64_t i;

	for (i = 0; i < n; i++) {
		float wi = DECAY(c, w[i]), gi = g[i], vv;

		m[i] = m[i] + (gi - m[i]) * c->b1c;
		v[i] = v[i] + (gi * gi - v[i]) * c->b2c;
		vv = v[i];
		if (c->amsgrad) {
			vh[i] = vh[i] > vv ? vh[i] : vv;
			vv = vh[i];
		}
		w[i] = wi - (m[i] * c->alpha) / (sqrtf(vv) + c->eps);
	}
}

static void rmsprop_ref(const struct coef *c, float *w, const float *g,
			float *vel, float *mo, float *ag, int64_t n)
{
	int64_t i;

	for (i = 0; i < n; i++) {
		float wi = DECAY(c, w[i]), gi = g[i], den, inc;

		vel[i] = c->rho * vel[i] + c->rhoc * (gi * gi);
		if (c->centered) {
			ag[i] = c->rho * ag[i] + c->rhoc * gi;
			den = vel[i] - ag[i] * ag[i] + c->eps;
		} else {
			den = vel[i] + c->eps;
		}
		inc = c->lr * gi * (1.0f / sqrtf(den));
		if (c->has_mom) {
			mo[i] = c->mom * mo[i] + inc;
			w[i] = wi - mo[i];
		} else {
			w[i] = wi - inc;
		}
	}
}

static void adagrad_ref(const struct coef *c, float *w, const float *g,
			float *acc, float *u1, float *u2, int64_t n)
{
	int64_t i;

	for (i = 0; i < n; i++) {
		float wi = DECAY(c, w[i]), gi = g[i];

		acc[i] = acc[i] + gi * gi;
		w[i] = wi - (c->lr * gi) / sqrtf(acc[i] + c->eps);
	}
}

typedef void (*update_fn)(const struct coef *c, float *w, const float *g,
			  float *s0, float *s1, float *s2, int64_t n);

#ifdef HAVE_AVX_PATH
/*
 * The same loops 8 floats at a time. target("avx") without "fma": GCC
 * may not contract a*b+c, so every rounding is the _ref one; the tail
 * runs the _ref loop on the last n % 8 elements.
 */
#define AVX __attribute__((target("avx")))
#define B(x) _mm256_set1_ps(x)

AVX static inline __m256 decay8(const struct coef *c, __m256 w)
{
	if (!c->has_wd)
		return w;
	return _mm256_sub_ps(w, _mm256_mul_ps(_mm256_mul_ps(w, B(c->wd)),
					      B(c->lr)));
}

AVX static void sgd_avx(const struct coef *c, float *w, const float *g,
			float *m, float *u1, float *u2, int64_t n)
{
	int64_t i, n8 = n & ~(int64_t)7;
	__m256 lr = B(c->lr), mom = B(c->mom), neg = B(-0.0f);

	for (i = 0; i < n8; i += 8) {
		__m256 wi = decay8(c, _mm256_loadu_ps(w + i));
		__m256 step = _mm256_mul_ps(_mm256_xor_ps(_mm256_loadu_ps(g + i),
							  neg), lr);

		if (!c->has_mom) {
			_mm256_storeu_ps(w + i, _mm256_add_ps(wi, step));
			continue;
		}
		__m256 mi = _mm256_add_ps(step, _mm256_mul_ps(
						  _mm256_loadu_ps(m + i), mom));

		_mm256_storeu_ps(m + i, mi);
		if (c->nesterov)
			wi = _mm256_add_ps(wi, _mm256_add_ps(
						   step, _mm256_mul_ps(mi, mom)));
		else
			wi = _mm256_add_ps(wi, mi);
		_mm256_storeu_ps(w + i, wi);
	}
	sgd_ref(c, w + i, g + i, m ? m + i : NULL, NULL, NULL, n - i);
}

AVX static void adam_avx(const struct coef *c, float *w, const float *g,
			 float *m, float *v, float *vh, int64_t n)
{
	int64_t i, n8 = n & ~(int64_t)7;
	__m256 b1c = B(c->b1c), b2c = B(c->b2c), al = B(c->alpha);
	__m256 eps = B(c->eps);

	for (i = 0; i < n8; i += 8) {
		__m256 wi = decay8(c, _mm256_loadu_ps(w + i));
		__m256 gi = _mm256_loadu_ps(g + i);
		__m256 mi = _mm256_loadu_ps(m + i), vi = _mm256_loadu_ps(v + i);

		mi = _mm256_add_ps(mi, _mm256_mul_ps(_mm256_sub_ps(gi, mi),
						     b1c));
		vi = _mm256_add_ps(vi, _mm256_mul_ps(
					   _mm256_sub_ps(_mm256_mul_ps(gi, gi),
							 vi), b2c));
		_mm256_storeu_ps(m + i, mi);
		_mm256_storeu_ps(v + i, vi);
		if (c->amsgrad) {
			vi = _mm256_max_ps(_mm256_loadu_ps(vh + i), vi);
			_mm256_storeu_ps(vh + i, vi);
		}
		wi = _mm256_sub_ps(wi, _mm256_div_ps(
					   _mm256_mul_ps(mi, al),
					   _mm256_add_ps(_mm256_sqrt_ps(vi),
							 eps)));
		_mm256_storeu_ps(w + i, wi);
	}
	adam_ref(c, w + i, g + i, m + i, v + i, vh ? vh + i : NULL, n - i);
}

AVX static void rmsprop_avx(const struct coef *c, float *w, const float *g,
			    float *vel, float *mo, float *ag, int64_t n)
{
	int64_t i, n8 = n & ~(int64_t)7;
	__m256 rho = B(c->rho), rhoc = B(c->rhoc), eps = B(c->eps);
	__m256 lr = B(c->lr), mom = B(c->mom), one = B(1.0f);

	for (i = 0; i < n8; i += 8) {
		__m256 wi = decay8(c, _mm256_loadu_ps(w + i));
		__m256 gi = _mm256_loadu_ps(g + i), den, inc;
		__m256 ve = _mm256_add_ps(_mm256_mul_ps(rho,
							_mm256_loadu_ps(vel + i)),
					  _mm256_mul_ps(rhoc,
							_mm256_mul_ps(gi, gi)));

		_mm256_storeu_ps(vel + i, ve);
		if (c->centered) {
			__m256 a = _mm256_add_ps(
				_mm256_mul_ps(rho, _mm256_loadu_ps(ag + i)),
				_mm256_mul_ps(rhoc, gi));

			_mm256_storeu_ps(ag + i, a);
			den = _mm256_add_ps(_mm256_sub_ps(ve,
							  _mm256_mul_ps(a, a)),
					    eps);
		} else {
			den = _mm256_add_ps(ve, eps);
		}
		inc = _mm256_mul_ps(_mm256_mul_ps(lr, gi),
				    _mm256_div_ps(one, _mm256_sqrt_ps(den)));
		if (c->has_mom) {
			__m256 mi = _mm256_add_ps(_mm256_mul_ps(
							  mom, _mm256_loadu_ps(mo + i)), inc);

			_mm256_storeu_ps(mo + i, mi);
			wi = _mm256_sub_ps(wi, mi);
		} else {
			wi = _mm256_sub_ps(wi, inc);
		}
		_mm256_storeu_ps(w + i, wi);
	}
	rmsprop_ref(c, w + i, g + i, vel + i, mo ? mo + i : NULL,
		    ag ? ag + i : NULL, n - i);
}

AVX static void adagrad_avx(const struct coef *c, float *w, const float *g,
			    float *acc, float *u1, float *u2, int64_t n)
{
	int64_t i, n8 = n & ~(int64_t)7;
	__m256 lr = B(c->lr), eps = B(c->eps);

	for (i = 0; i < n8; i += 8) {
		__m256 wi = decay8(c, _mm256_loadu_ps(w + i));
		__m256 gi = _mm256_loadu_ps(g + i);
		__m256 a = _mm256_add_ps(_mm256_loadu_ps(acc + i),
					 _mm256_mul_ps(gi, gi));

		_mm256_storeu_ps(acc + i, a);
		wi = _mm256_sub_ps(wi, _mm256_div_ps(
					   _mm256_mul_ps(lr, gi),
					   _mm256_sqrt_ps(_mm256_add_ps(a, eps))));
		_mm256_storeu_ps(w + i, wi);
	}
	adagrad_ref(c, w + i, g + i, acc + i, NULL, NULL, n - i);
}
#undef B
#endif

static const update_fn ref_fns[] = {
	[O_SGD] = sgd_ref, [O_ADAM] = adam_ref, [O_ADAMW] = adam_ref,
	[O_RMSPROP] = rmsprop_ref, [O_ADAGRAD] = adagrad_ref
};

static update_fn fast_fn(enum okind k)
{
#ifdef HAVE_AVX_PATH
	static const update_fn avx[] = {
		[O_SGD] = sgd_avx, [O_ADAM] = adam_avx, [O_ADAMW] = adam_avx,
		[O_RMSPROP] = rmsprop_avx, [O_ADAGRAD] = adagrad_avx
	};

	if (__builtin_cpu_supports("avx"))
		return avx[k];
#endif
	return ref_fns[k];
}

/* Applying -------------------------------------------------------------- */

struct job {
	update_fn fn;
	const struct coef *c;
	float *w, *s[3];
	const float *g;
};

static void run_chunk(void *ctx, int64_t b, int64_t e, int worker)
{
	const struct job *j = ctx;

	j->fn(j->c, j->w + b, j->g + b, j->s[0] ? j->s[0] + b : NULL,
	      j->s[1] ? j->s[1] + b : NULL, j->s[2] ? j->s[2] + b : NULL,
	      e - b);
}

static double sumsq(const float *g, int64_t n)
{
	double s = 0;
	int64_t i;

	for (i = 0; i < n; i++)
		s += (double)g[i] * g[i];
	return s;
}

/* Fill c with this step's scalars. */
static void step_coef(const struct tfk_optim *o, struct coef *c)
{
	double lr = tfk_optim_lr(o), t = (double)(o->iterations + 1);

	memset(c, 0, sizeof(*c));
	c->lr = (float)lr;
	c->has_wd = o->has_wd;
	c->wd = (float)o->weight_decay;
	c->eps = (float)o->epsilon;
	switch (o->kind) {
	case O_SGD:
		c->has_mom = o->momentum > 0;
		c->mom = (float)o->momentum;
		c->nesterov = o->nesterov;
		break;
	case O_ADAM:
	case O_ADAMW:
		c->b1c = (float)(1.0 - o->beta_1);
		c->b2c = (float)(1.0 - o->beta_2);
		c->alpha = (float)((double)c->lr * sqrt(1.0 - pow(o->beta_2, t))
				   / (1.0 - pow(o->beta_1, t)));
		c->amsgrad = o->amsgrad;
		break;
	case O_RMSPROP:
		c->rho = (float)o->rho;
		c->rhoc = (float)(1.0 - o->rho);
		c->has_mom = o->momentum > 0;
		c->mom = (float)o->momentum;
		c->centered = o->centered;
		break;
	case O_ADAGRAD:
		break;
	}
}

int tfk_optim_apply(struct tfk_optim *o, int n, struct tfk_tensor *const *vars,
		    const struct tfk_tensor *const *grads, struct tfk_err *err)
{
	update_fn fn;
	struct coef c;
	double gscale = 1;
	int i, k, rc;

	if (!o->built)
		rc = build(o, n, vars, err);
	else
		rc = check_vars(o, n, vars, err);
	if (rc)
		return rc;
	for (i = 0; i < n; i++)
		if (grads[i]->dtype != TFK_DT_FLOAT ||
		    !tfk_shape_equal(grads[i]->rank, grads[i]->shape,
				     vars[i]->rank, vars[i]->shape)) {
			char a[64], b[64];

			return tfk_errf(err, TFK_EINVAL, "optimizer: gradient "
					"%d is %s %s, variable float32 %s", i,
					tfk_dtype_name(grads[i]->dtype),
					tfk_shape_str(grads[i]->rank,
						      grads[i]->shape, a,
						      sizeof(a)),
					tfk_shape_str(vars[i]->rank,
						      vars[i]->shape, b,
						      sizeof(b)));
		}
	step_coef(o, &c);
	fn = o->use_ref ? ref_fns[o->kind] : fast_fn(o->kind);
	if (o->clipnorm > 0 || o->global_clipnorm > 0) {
		double tot = 0;

		for (i = 0; i < n; i++) {
			o->sumsq[i] = sumsq(grads[i]->data,
					    tfk_tensor_numel(grads[i]));
			tot += o->sumsq[i];
		}
		if (o->global_clipnorm > 0) {
			/* tf.clip_by_global_norm: g * clip * min(1/norm,
			 * 1/clip); NaN everywhere when the norm is not
			 * finite */
			float gn = (float)sqrt(tot), cl = (float)o->global_clipnorm;

			gscale = (double)(cl * fminf(1.0f / gn, 1.0f / cl));
			if (!isfinite(gn))
				gscale = NAN;
		}
	}
	for (i = 0; i < n; i++) {
		int64_t m = tfk_tensor_numel(vars[i]), j;
		const float *g = grads[i]->data;
		struct job jb;

		if (o->scratch) {
			float *s = o->scratch;

			if (o->clipnorm > 0) {
				/* tf.clip_by_norm: g * clip / max(norm, clip) */
				float cl = (float)o->clipnorm;
				float nrm = o->sumsq[i] > 0 ?
					(float)sqrt(o->sumsq[i]) : 0.0f;
				float den = fmaxf(nrm, cl);

				for (j = 0; j < m; j++)
					s[j] = (g[j] * cl) / den;
			} else if (o->global_clipnorm > 0) {
				float sc = (float)gscale;

				for (j = 0; j < m; j++)
					s[j] = g[j] * sc;
			} else {
				float cl = (float)o->clipvalue;

				for (j = 0; j < m; j++) {
					float x = g[j] > -cl ? g[j] : -cl;

					s[j] = x < cl ? x : cl;
					if (g[j] != g[j])
						s[j] = g[j];
				}
			}
			g = s;
		}
		jb.fn = fn;
		jb.c = &c;
		jb.w = vars[i]->data;
		jb.g = g;
		for (k = 0; k < 3; k++)
			jb.s[k] = k < o->n_kinds ?
				o->slots[i * o->n_kinds + k].data : NULL;
		if (o->kind == O_RMSPROP && o->n_kinds < 3) {
			/* velocity, then momentum and average_gradient in
			 * their loop positions whichever exist */
			float *mo = NULL, *ag = NULL;

			if (c.has_mom)
				mo = o->slots[i * o->n_kinds + 1].data;
			if (c.centered)
				ag = o->slots[i * o->n_kinds +
					      (c.has_mom ? 2 : 1)].data;
			jb.s[1] = mo;
			jb.s[2] = ag;
		}
		/* a hand-out costs microseconds and the loop is memory
		 * bound: split only when every thread gets >= 64k floats
		 * (the MLP kernel, 100k, stays on one thread) */
		if (o->threads > 1 && m / o->threads >= 65536) {
			tfk_parallel_for(o->threads, m, run_chunk, &jb);
		} else {
			run_chunk(&jb, 0, m, 0);
		}
	}
	o->iterations++;
	return 0;
}
