/*
 * initializer.c - Keras weight initializers and regularizers, and the
 * variables they make (see keras-impl.h).
 *
 * Values come from the counter-based generator of op.h keyed by (build
 * seed, variable name, the initializer's own seed): the same seed gives
 * the same weights, and adding a layer does not change the weights of
 * the others. TensorFlow's own random streams are not reproduced (they
 * depend on its op seeds and Philox layout); what is Keras' is the
 * distributions: VarianceScaling with Keras' _compute_fans (a conv
 * kernel's receptive field size times its channels), the truncated
 * normal cut at two standard deviations with the stddev divided by
 * .87962566103423978 (the stddev of a unit normal truncated to [-2, 2],
 * keras/initializers/initializers.py), RandomUniform(-0.05, 0.05),
 * RandomNormal/TruncatedNormal(0, 0.05) defaults.
 *
 * Regularizers are kept as factors on the model's variables; model.c
 * adds the terms (l1 * sum|w| + l2 * sum w^2, as keras.regularizers).
 */
#include "nn/keras-impl.h"
#include "graph/graph.h"
#include "util/alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Random values ---------------------------------------------------------- */

struct krng {
	uint64_t key, ctr;
};

static double u01(struct krng *r)
{
	return (double)(tfk_rng_u64(r->key, r->ctr++) >> 11) *
		(1.0 / 9007199254740992.0);
}

/* Box-Muller on (0, 1) uniforms. */
static double normal(struct krng *r)
{
	double u1 = ((double)(tfk_rng_u64(r->key, r->ctr++) >> 11) + 0.5) *
		(1.0 / 9007199254740992.0);
	double u2 = u01(r);

	return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

static double trunc_normal(struct krng *r)
{
	double v;

	do
		v = normal(r);
	while (v < -2 || v > 2);
	return v;
}

/* Keras' _compute_fans. */
static void fans(const struct tfk_tensor *t, double *fin, double *fout)
{
	double rf = 1;
	int i;

	if (t->rank < 1) {
		*fin = *fout = 1;
		return;
	}
	if (t->rank == 1) {
		*fin = *fout = (double)t->shape[0];
		return;
	}
	for (i = 0; i < t->rank - 2; i++)
		rf *= (double)t->shape[i];
	*fin = (double)t->shape[t->rank - 2] * rf;
	*fout = (double)t->shape[t->rank - 1] * rf;
}

/* Orthogonal: QR of a normal matrix by modified Gram-Schmidt (columns
 * of the taller orientation), times gain; the sign fix of Keras (q *
 * sign(diag(r))) is what Gram-Schmidt gives by construction. */
static int orthogonal(struct krng *r, double gain, float *out, int64_t rows,
		      int64_t cols, struct tfk_err *err)
{
	int64_t m = rows > cols ? rows : cols, n = rows > cols ? cols : rows;
	int64_t i, j, k;
	double *a = tfk_malloc((size_t)(m * n) * sizeof(double));

	if (!a)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (i = 0; i < m * n; i++)
		a[i] = normal(r);
	/* a is m x n column-major: column j at a + j * m */
	for (j = 0; j < n; j++) {
		double *q = a + j * m, nrm = 0;

		for (k = 0; k < j; k++) {
			const double *p = a + k * m;
			double d = 0;

			for (i = 0; i < m; i++)
				d += p[i] * q[i];
			for (i = 0; i < m; i++)
				q[i] -= d * p[i];
		}
		for (i = 0; i < m; i++)
			nrm += q[i] * q[i];
		nrm = sqrt(nrm);
		for (i = 0; i < m; i++)
			q[i] = nrm > 0 ? q[i] / nrm : 0;
	}
	for (i = 0; i < rows; i++)
		for (j = 0; j < cols; j++)
			out[i * cols + j] = (float)(gain * (rows >= cols ?
				a[j * m + i] : a[i * m + j]));
	tfk_free(a);
	return 0;
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

int tfk_keras_init_fill(const struct kinit *ki, uint64_t seed,
			const char *name, struct tfk_tensor *t,
			struct tfk_err *err)
{
	struct krng r;
	int64_t i, n = tfk_tensor_numel(t);
	float *p = t->data;
	double fin, fout, fan, sd;

	r.key = tfk_rng_u64(seed ^ name_hash(name),
			    ki->has_seed ? (uint64_t)ki->seed : 0);
	r.ctr = 0;
	switch (ki->kind) {
	case KI_ZEROS:
	case KI_ONES:
	case KI_CONST:
		for (i = 0; i < n; i++)
			p[i] = ki->kind == KI_ZEROS ? 0 : ki->kind == KI_ONES ?
				1 : (float)ki->a;
		return 0;
	case KI_RUNIFORM:
		for (i = 0; i < n; i++)
			p[i] = (float)(ki->a + (ki->b - ki->a) * u01(&r));
		return 0;
	case KI_RNORMAL:
		for (i = 0; i < n; i++)
			p[i] = (float)(ki->a + ki->b * normal(&r));
		return 0;
	case KI_TNORMAL:
		for (i = 0; i < n; i++)
			p[i] = (float)(ki->a + ki->b * trunc_normal(&r));
		return 0;
	case KI_ORTHO:
		if (t->rank < 2)
			return tfk_errf(err, TFK_EINVAL, "Orthogonal needs a "
					"weight of rank >= 2");
		return orthogonal(&r, ki->a, p, n / t->shape[t->rank - 1],
				  t->shape[t->rank - 1], err);
	}
	fans(t, &fin, &fout);
	fan = ki->mode == KI_FAN_IN ? fin : ki->mode == KI_FAN_OUT ? fout :
		(fin + fout) / 2;
	if (fan < 1)
		fan = 1;
	switch (ki->dist) {
	case KI_D_UNIFORM:
		sd = sqrt(3 * ki->a / fan);
		for (i = 0; i < n; i++)
			p[i] = (float)(sd * (2 * u01(&r) - 1));
		break;
	case KI_D_NORMAL:
		sd = sqrt(ki->a / fan);
		for (i = 0; i < n; i++)
			p[i] = (float)(sd * normal(&r));
		break;
	default:
		sd = sqrt(ki->a / fan) / .87962566103423978;
		for (i = 0; i < n; i++)
			p[i] = (float)(sd * trunc_normal(&r));
		break;
	}
	return 0;
}

/* Parsing ---------------------------------------------------------------- */

static const struct {
	const char *name, *cls;
	int kind, mode, dist;
	double scale;
	const char *keys;
} inits[] = {
	{ "zeros", "Zeros", KI_ZEROS, 0, 0, 0, " " },
	{ "ones", "Ones", KI_ONES, 0, 0, 0, " " },
	{ "constant", "Constant", KI_CONST, 0, 0, 0, " value " },
	{ "random_uniform", "RandomUniform", KI_RUNIFORM, 0, 0, 0,
	  " minval maxval seed " },
	{ "random_normal", "RandomNormal", KI_RNORMAL, 0, 0, 0,
	  " mean stddev seed " },
	{ "truncated_normal", "TruncatedNormal", KI_TNORMAL, 0, 0, 0,
	  " mean stddev seed " },
	{ "glorot_uniform", "GlorotUniform", KI_VSCALE, KI_FAN_AVG,
	  KI_D_UNIFORM, 1, " seed " },
	{ "glorot_normal", "GlorotNormal", KI_VSCALE, KI_FAN_AVG, KI_D_TRUNC,
	  1, " seed " },
	{ "he_normal", "HeNormal", KI_VSCALE, KI_FAN_IN, KI_D_TRUNC, 2,
	  " seed " },
	{ "he_uniform", "HeUniform", KI_VSCALE, KI_FAN_IN, KI_D_UNIFORM, 2,
	  " seed " },
	{ "lecun_normal", "LecunNormal", KI_VSCALE, KI_FAN_IN, KI_D_TRUNC, 1,
	  " seed " },
	{ "lecun_uniform", "LecunUniform", KI_VSCALE, KI_FAN_IN,
	  KI_D_UNIFORM, 1, " seed " },
	{ "variance_scaling", "VarianceScaling", KI_VSCALE, KI_FAN_IN,
	  KI_D_TRUNC, 1, " scale mode distribution seed " },
	{ "orthogonal", "Orthogonal", KI_ORTHO, 0, 0, 1, " gain seed " },
};

static int has_key(const char *list, const char *key)
{
	size_t n = strlen(key);
	const char *p = list;

	if (!n)
		return 0;
	while ((p = strstr(p, key))) {
		if (p > list && p[-1] == ' ' && p[n] == ' ')
			return 1;
		p += n;
	}
	return 0;
}

static int wrapper_keys(struct kctx *c, const struct klayer *l,
			const char *key, const json_t *v)
{
	const char *k;
	json_t *x;

	json_object_foreach((json_t *)v, k, x) {
		if (!strcmp(k, "class_name") || !strcmp(k, "config") ||
		    !strcmp(k, "module") || !strcmp(k, "registered_name") ||
		    !strcmp(k, "shared_object_id"))
			continue;
		return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s.%s: unknown "
				"key", l->path, key, k);
	}
	return 0;
}

static int init_num(struct kctx *c, const struct klayer *l, const char *key,
		    const json_t *cfg, const char *k, double def, double *v)
{
	const json_t *x = json_object_get(cfg, k);

	*v = def;
	if (!x || json_is_null(x))
		return 0;
	if (!json_is_number(x) || !isfinite(json_number_value(x)))
		return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s.config.%s: "
				"expected a number", l->path, key, k);
	*v = json_number_value(x);
	return 0;
}

int tfk_keras_init_parse(struct kctx *c, const struct klayer *l,
			 const char *key, const char *def, struct kinit *ki)
{
	const json_t *v = json_object_get(l->cfg, key), *cfg = NULL, *x;
	const char *name, *k;
	size_t i, w = sizeof(inits) / sizeof(inits[0]);
	int rc;

	memset(ki, 0, sizeof(*ki));
	if (!v || json_is_null(v)) {
		name = def;
	} else if (json_is_string(v)) {
		name = json_string_value(v);
	} else if (json_is_object(v)) {
		if ((rc = wrapper_keys(c, l, key, v)))
			return rc;
		x = json_object_get(v, "class_name");
		if (!json_is_string(x))
			return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s."
					"class_name: expected a string",
					l->path, key);
		name = json_string_value(x);
		cfg = json_object_get(v, "config");
		if (cfg && !json_is_object(cfg) && !json_is_null(cfg))
			return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s."
					"config: expected an object", l->path,
					key);
	} else {
		return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s: expected an "
				"initializer name or object", l->path, key);
	}
	for (i = 0; i < w; i++)
		if (!strcmp(name, inits[i].name) || !strcmp(name, inits[i].cls))
			break;
	if (i == w)
		return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s: unknown "
				"initializer '%s'", l->path, key, name);
	ki->kind = inits[i].kind;
	ki->mode = inits[i].mode;
	ki->dist = inits[i].dist;
	ki->a = inits[i].scale;
	if (ki->kind == KI_RUNIFORM) {
		ki->a = -0.05;
		ki->b = 0.05;
	} else if (ki->kind == KI_RNORMAL || ki->kind == KI_TNORMAL) {
		ki->a = 0;
		ki->b = 0.05;
	}
	if (!cfg || json_is_null(cfg))
		return 0;
	json_object_foreach((json_t *)cfg, k, x) {
		/* Keras 3.12+: the fan axes of VarianceScaling kinds; null
		 * is the default computation, the only one here */
		if (ki->kind == KI_VSCALE && (!strcmp(k, "input_axes") ||
					      !strcmp(k, "output_axes"))) {
			if (json_is_null(x))
				continue;
			return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s."
					"config.%s: only null is supported",
					l->path, key, k);
		}
		if (!has_key(inits[i].keys, k))
			return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s."
					"config.%s: unknown key", l->path, key,
					k);
	}
	x = json_object_get(cfg, "seed");
	if (x && !json_is_null(x)) {
		if (!json_is_integer(x))
			return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s."
					"config.seed: expected an integer or "
					"null", l->path, key);
		ki->has_seed = 1;
		ki->seed = json_integer_value(x);
	}
	switch (ki->kind) {
	case KI_CONST:
		return init_num(c, l, key, cfg, "value", 0, &ki->a);
	case KI_RUNIFORM:
		if ((rc = init_num(c, l, key, cfg, "minval", -0.05, &ki->a)) ||
		    (rc = init_num(c, l, key, cfg, "maxval", 0.05, &ki->b)))
			return rc;
		if (!(ki->b >= ki->a))
			return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s."
					"config.maxval: below minval", l->path,
					key);
		return 0;
	case KI_RNORMAL:
	case KI_TNORMAL:
		if ((rc = init_num(c, l, key, cfg, "mean", 0, &ki->a)) ||
		    (rc = init_num(c, l, key, cfg, "stddev", 0.05, &ki->b)))
			return rc;
		if (!(ki->b >= 0))
			return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s."
					"config.stddev: expected a number >= "
					"0", l->path, key);
		return 0;
	case KI_ORTHO:
		return init_num(c, l, key, cfg, "gain", 1, &ki->a);
	case KI_VSCALE:
		if (!has_key(inits[i].keys, "scale"))
			return 0;
		if ((rc = init_num(c, l, key, cfg, "scale", 1, &ki->a)))
			return rc;
		if (!(ki->a > 0))
			return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s."
					"config.scale: expected a number > 0",
					l->path, key);
		x = json_object_get(cfg, "mode");
		if (x && !json_is_null(x)) {
			const char *s = json_is_string(x) ?
				json_string_value(x) : "";

			ki->mode = !strcmp(s, "fan_in") ? KI_FAN_IN :
				!strcmp(s, "fan_out") ? KI_FAN_OUT :
				!strcmp(s, "fan_avg") ? KI_FAN_AVG : -1;
			if (ki->mode < 0)
				return tfk_errf(c->err, TFK_EINVAL, "%s.config."
						"%s.config.mode: expected "
						"fan_in, fan_out or fan_avg",
						l->path, key);
		}
		x = json_object_get(cfg, "distribution");
		if (x && !json_is_null(x)) {
			const char *s = json_is_string(x) ?
				json_string_value(x) : "";

			/* "normal" is Keras 2's old name of the
			 * truncated one */
			ki->dist = !strcmp(s, "truncated_normal") ||
				!strcmp(s, "normal") ? KI_D_TRUNC :
				!strcmp(s, "untruncated_normal") ?
				KI_D_NORMAL : !strcmp(s, "uniform") ?
				KI_D_UNIFORM : -1;
			if (ki->dist < 0)
				return tfk_errf(c->err, TFK_EINVAL, "%s.config."
						"%s.config.distribution: "
						"expected truncated_normal, "
						"untruncated_normal or uniform",
						l->path, key);
		}
		return 0;
	}
	return 0;
}

static int reg_num(struct kctx *c, const struct klayer *l, const char *key,
		   const json_t *cfg, const char *k, float *v)
{
	const json_t *x = json_object_get(cfg, k);

	if (!x || json_is_null(x))
		return 0;
	if (!json_is_number(x) || !(json_number_value(x) >= 0) ||
	    !isfinite(json_number_value(x)))
		return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s.config.%s: "
				"expected a number >= 0", l->path, key, k);
	*v = (float)json_number_value(x);
	return 0;
}

int tfk_keras_reg_parse(struct kctx *c, const struct klayer *l,
			const char *key, struct kreg *r)
{
	const json_t *v = json_object_get(l->cfg, key), *cfg, *x;
	const char *name, *k;
	int rc;

	r->l1 = r->l2 = 0;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		name = json_string_value(v);
		/* keras.regularizers.get: string names at 0.01 */
		if (!strcmp(name, "l1") || !strcmp(name, "L1"))
			r->l1 = 0.01f;
		else if (!strcmp(name, "l2") || !strcmp(name, "L2"))
			r->l2 = 0.01f;
		else if (!strcmp(name, "l1_l2") || !strcmp(name, "L1L2"))
			r->l1 = r->l2 = 0.01f;
		else
			return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s: "
					"unknown regularizer '%s'", l->path,
					key, name);
		return 0;
	}
	if (!json_is_object(v))
		return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s: expected a "
				"regularizer name or object", l->path, key);
	if ((rc = wrapper_keys(c, l, key, v)))
		return rc;
	x = json_object_get(v, "class_name");
	if (!json_is_string(x))
		return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s.class_name: "
				"expected a string", l->path, key);
	name = json_string_value(x);
	cfg = json_object_get(v, "config");
	if (cfg && !json_is_object(cfg))
		return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s.config: "
				"expected an object", l->path, key);
	if (strcmp(name, "L1") && strcmp(name, "L2") && strcmp(name, "L1L2")
	    && strcmp(name, "l1_l2"))
		return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s: unknown "
				"regularizer '%s'", l->path, key, name);
	json_object_foreach((json_t *)cfg, k, x)
		if ((strcmp(k, "l1") || !strcmp(name, "L2")) &&
		    (strcmp(k, "l2") || !strcmp(name, "L1")))
			return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s."
					"config.%s: unknown key", l->path, key,
					k);
	/* L1(l1=0.01), L2(l2=0.01), L1L2(l1=0.0, l2=0.0) */
	if (!strcmp(name, "L1"))
		r->l1 = 0.01f;
	else if (!strcmp(name, "L2"))
		r->l2 = 0.01f;
	if ((rc = reg_num(c, l, key, cfg, "l1", &r->l1)) ||
	    (rc = reg_num(c, l, key, cfg, "l2", &r->l2)))
		return rc;
	return 0;
}

/* Variables -------------------------------------------------------------- */

int tfk_keras_var(struct kctx *c, struct klayer *l, int slot,
		  const char *wname, int rank, const int64_t *shape,
		  const struct kinit *ki, const struct kreg *reg,
		  int trainable)
{
	struct tfk_model *m = c->m;
	struct tfk_model_var *mv;
	struct tfk_tensor t;
	char name[256];
	int64_t n;
	int rc, i;

	for (i = 0; i < rank; i++)
		if (shape[i] < 0)
			return tfk_errf(c->err, TFK_EINVAL, "%s: weight %s needs "
					"a known input shape", l->path, wname);
	/* 2^28 float32 values (1 GiB) per weight is far beyond any model
	 * this trains on a CPU; more is a typo */
	if (tfk_shape_numel(rank, shape, 4, &n, c->err) || n > (1 << 28))
		return tfk_errf(c->err, TFK_EINVAL, "%s: weight %s is too "
				"large", l->path, wname);
	snprintf(name, sizeof(name), "%s/%s", l->name, wname);
	mv = tfk_realloc(m->vars, (size_t)(m->n_vars + 1) * sizeof(*mv));
	if (!mv)
		return tfk_errf(c->err, TFK_ENOMEM, "out of memory");
	m->vars = mv;
	rc = tfk_tensor_init(&t, TFK_DT_FLOAT, rank, shape, c->err);
	if (!rc)
		rc = tfk_keras_init_fill(ki, c->seed, name, &t, c->err);
	if (!rc)
		rc = tfk_graph_variable(c->g, name, &t, &l->w[slot], c->err);
	tfk_tensor_release(&t);
	if (rc)
		return rc == TFK_ENOMEM ? rc : tfk_err_prefix(c->err, "%s",
							      l->path);
	mv = &m->vars[m->n_vars++];
	mv->var = tfk_graph_n_variables(c->g) - 1;
	mv->trainable = trainable && l->trainable;
	mv->l1 = reg ? reg->l1 : 0;
	mv->l2 = reg ? reg->l2 : 0;
	return 0;
}
