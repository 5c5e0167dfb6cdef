/*
 * layers.c - Keras layers as TensorFlow ops: each class parses its
 * get_config() keys, makes its weights on the first call (when the input
 * shape is known) and adds its ops to one branch per call.
 *
 * The expansions are the ones tf.keras itself traces (so a SavedModel
 * of ours reads like one of Keras'): Dense = MatMul + BiasAdd (+ a
 * Reshape pair for rank > 2, as tensordot), Conv1D = ExpandDims +
 * Conv2D + Squeeze (tf.nn.conv1d), pooling 1D through a 2D pool on an
 * expanded axis, Dropout = x * 1/(1-rate) * Cast(RandomUniform(shape) >=
 * rate) (tf.nn.dropout), BatchNormalization = FusedBatchNormV3
 * (rank 2 and 3 reshaped to NHWC: the statistics are over the same
 * elements), LayerNormalization = the moments composite of
 * tf.nn.batch_normalization.
 *
 * Rejected: one fused op per layer (a "Dense" op). TF has none; the
 * serializers would need to expand it again, and gradients of the
 * primitive ops already exist.
 */
#include "nn/keras-impl.h"
#include "nn/preprocess.h"
#include "graph/graph.h"
#include "util/alloc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Graph helpers ---------------------------------------------------------- */

int kop(struct kctx *c, const char *op, const struct tfk_port *in, int n,
	const struct tfk_attr *a, int na, struct tfk_port *out)
{
	return tfk_graph_add_node(c->g, op, c->scope, in, n, a, na, out,
				  c->err);
}

int kop1(struct kctx *c, const char *op, struct tfk_port x,
	 struct tfk_port *out)
{
	return kop(c, op, &x, 1, NULL, 0, out);
}

int kop2(struct kctx *c, const char *op, struct tfk_port x,
	 struct tfk_port y, struct tfk_port *out)
{
	struct tfk_port in[2] = { x, y };

	return kop(c, op, in, 2, NULL, 0, out);
}

int kconst_f(struct kctx *c, float v, struct tfk_port *out)
{
	return tfk_graph_const_f32(c->g, c->scope, v, out, c->err);
}

int kconst_iv(struct kctx *c, const int32_t *v, int n, struct tfk_port *out)
{
	return tfk_graph_const_i32v(c->g, c->scope, v, n, out, c->err);
}

const struct tfk_tdesc *kdesc(struct kctx *c, struct tfk_port p)
{
	return tfk_graph_desc(c->g, p);
}

static struct tfk_attr a_ints(const char *name, const int64_t *v, int n)
{
	struct tfk_attr a;

	memset(&a, 0, sizeof(a));
	a.name = name;
	a.v.kind = TFK_ATTR_LIST_INT;
	a.v.list.n = n;
	a.v.list.i = v;
	return a;
}

/* x * scalar constant */
static int kmul_f(struct kctx *c, struct tfk_port x, float v,
		  struct tfk_port *out)
{
	struct tfk_port k;
	int rc = kconst_f(c, v, &k);

	return rc ? rc : kop2(c, "Mul", x, k, out);
}

static int kreshape(struct kctx *c, struct tfk_port x, const int64_t *dims,
		    int n, struct tfk_port *out)
{
	int32_t v[TFK_MAX_RANK];
	struct tfk_port s;
	int i, rc;

	for (i = 0; i < n; i++)
		v[i] = (int32_t)dims[i];
	rc = kconst_iv(c, v, n, &s);
	return rc ? rc : kop2(c, "Reshape", x, s, out);
}

/* Mean/Max over axes (keep_dims kd). */
static int kreduce(struct kctx *c, const char *op, struct tfk_port x,
		   const int32_t *axes, int n, int kd, struct tfk_port *out)
{
	struct tfk_attr a = TFK_A_BOOL("keep_dims", kd);
	struct tfk_port in[2] = { x };
	int rc = kconst_iv(c, axes, n, &in[1]);

	return rc ? rc : kop(c, op, in, 2, &a, 1, out);
}

/* int32 scalar Const (an axis) */
static int kconst_si(struct kctx *c, int32_t v, struct tfk_port *out)
{
	struct tfk_tensor t;
	int rc = tfk_tensor_init_view(&t, TFK_DT_INT32, 0, NULL, &v,
				      sizeof(v), TFK_OWN_BORROWED, c->err);

	return rc ? rc : tfk_graph_const(c->g, c->scope, &t, out, c->err);
}

static int kexpand(struct kctx *c, struct tfk_port x, int32_t axis,
		   struct tfk_port *out)
{
	struct tfk_port in[2] = { x };
	int rc = kconst_si(c, axis, &in[1]);

	return rc ? rc : kop(c, "ExpandDims", in, 2, NULL, 0, out);
}

static int ksqueeze(struct kctx *c, struct tfk_port x, int64_t axis,
		    struct tfk_port *out)
{
	struct tfk_attr a = a_ints("squeeze_dims", &axis, 1);

	return kop(c, "Squeeze", &x, 1, &a, 1, out);
}

int kcfg_bad(struct kctx *c, const struct klayer *l, const char *key,
	     const char *what)
{
	if (!key)
		return tfk_errf(c->err, TFK_EINVAL, "%s: %s", l->path, what);
	return tfk_errf(c->err, TFK_EINVAL, "%s.config.%s: %s", l->path, key,
			what);
}

/* Config readers ----------------------------------------------------------- */

static const json_t *cget(const struct klayer *l, const char *key)
{
	const json_t *v = json_object_get(l->cfg, key);

	return v && !json_is_null(v) ? v : NULL;
}

static int c_long(struct kctx *c, struct klayer *l, const char *key,
		  long def, long lo, long hi, long *v)
{
	const json_t *j = cget(l, key);
	char what[96];

	if (!j) {
		if (def < lo) {
			snprintf(what, sizeof(what), "expected an integer in "
				 "%ld..%ld", lo, hi);
			return kcfg_bad(c, l, key, what);
		}
		*v = def;
		return 0;
	}
	if (!json_is_integer(j) || json_integer_value(j) < lo ||
	    json_integer_value(j) > hi) {
		snprintf(what, sizeof(what), "expected an integer in %ld..%ld",
			 lo, hi);
		return kcfg_bad(c, l, key, what);
	}
	*v = (long)json_integer_value(j);
	return 0;
}

static int c_num(struct kctx *c, struct klayer *l, const char *key,
		 double def, double *v)
{
	const json_t *j = cget(l, key);

	if (!j) {
		*v = def;
		return 0;
	}
	if (!json_is_number(j) || !isfinite(json_number_value(j)))
		return kcfg_bad(c, l, key, "expected a number");
	*v = json_number_value(j);
	return 0;
}

static int c_bool(struct kctx *c, struct klayer *l, const char *key,
		  int def, int *v)
{
	const json_t *j = cget(l, key);

	if (!j) {
		*v = def;
		return 0;
	}
	if (!json_is_boolean(j))
		return kcfg_bad(c, l, key, "expected true or false");
	*v = json_is_true(j);
	return 0;
}

/* A key that must be false (or absent/null): a feature not supported. */
static int c_false(struct kctx *c, struct klayer *l, const char *key)
{
	int b, rc = c_bool(c, l, key, 0, &b);

	return rc ? rc : b ? kcfg_bad(c, l, key, "true is not supported") : 0;
}

/* An int or a list of n ints, each in 1..65536. */
static int c_tuple(struct kctx *c, struct klayer *l, const char *key, int n,
		   int64_t def, int64_t *v)
{
	const json_t *j = cget(l, key);
	char what[64];
	int i;

	snprintf(what, sizeof(what), "expected an integer or a list of %d "
		 "integers in 1..65536", n);
	if (!j) {
		if (def < 1)
			return kcfg_bad(c, l, key, what);
		for (i = 0; i < n; i++)
			v[i] = def;
		return 0;
	}
	if (json_is_integer(j)) {
		for (i = 0; i < n; i++)
			v[i] = json_integer_value(j);
	} else if (json_is_array(j) && json_array_size(j) == (size_t)n) {
		for (i = 0; i < n; i++) {
			const json_t *e = json_array_get(j, i);

			if (!json_is_integer(e))
				return kcfg_bad(c, l, key, what);
			v[i] = json_integer_value(e);
		}
	} else {
		return kcfg_bad(c, l, key, what);
	}
	for (i = 0; i < n; i++)
		if (v[i] < 1 || v[i] > 65536)
			return kcfg_bad(c, l, key, what);
	return 0;
}

static int c_padding(struct kctx *c, struct klayer *l, int causal_ok)
{
	const json_t *j = cget(l, "padding");
	const char *s = json_is_string(j) ? json_string_value(j) : "";

	l->same = l->causal = 0;
	if (!j || !strcmp(s, "valid"))
		return 0;
	if (!strcmp(s, "same")) {
		l->same = 1;
		return 0;
	}
	if (causal_ok && !strcmp(s, "causal")) {
		l->causal = 1;
		return 0;
	}
	return kcfg_bad(c, l, "padding", causal_ok ? "expected \"valid\", "
			"\"same\" or \"causal\"" : "expected \"valid\" or "
			"\"same\"");
}

static int c_format(struct kctx *c, struct klayer *l)
{
	const json_t *j = cget(l, "data_format");

	if (!j || (json_is_string(j) &&
		   !strcmp(json_string_value(j), "channels_last")))
		return 0;
	return kcfg_bad(c, l, "data_format", "only \"channels_last\" is "
			"supported");
}

/* Keras' axis written as -1, [-1], r - 1 or [r - 1]: the last axis of a
 * rank r input. Checked when r is known (apply); here only the form. */
static int c_last_axis(struct kctx *c, struct klayer *l, const char *key)
{
	const json_t *j = cget(l, key);

	if (j && json_is_array(j) && json_array_size(j) == 1)
		j = json_array_get(j, 0);
	l->axis = -1;
	if (!j)
		return 0;
	if (!json_is_integer(j) || json_integer_value(j) < -1 ||
	    json_integer_value(j) > TFK_MAX_RANK)
		return kcfg_bad(c, l, key, "only the last axis is supported");
	l->axis = (int)json_integer_value(j);
	return 0;
}

static int check_last_axis(struct kctx *c, struct klayer *l, int rank,
			   const char *key)
{
	if (l->axis == -1 || l->axis == rank - 1)
		return 0;
	return kcfg_bad(c, l, key, "only the last axis is supported");
}

static int c_act(struct kctx *c, struct klayer *l, const char *key)
{
	const json_t *j = cget(l, key);
	char what[96];

	l->act = KA_LINEAR;
	l->alpha = 0.2f;
	if (!j)
		return 0;
	if (json_is_string(j) &&
	    !tfk_keras_act_parse(json_string_value(j), &l->act))
		return 0;
	snprintf(what, sizeof(what), "unknown activation '%s'",
		 json_is_string(j) ? json_string_value(j) : "?");
	return kcfg_bad(c, l, key, json_is_string(j) ? what :
			"expected an activation name");
}

/* Activations ---------------------------------------------------------------- */

static const struct {
	const char *name;
	int a;
} acts[] = {
	{ "linear", KA_LINEAR }, { "relu", KA_RELU }, { "relu6", KA_RELU6 },
	{ "sigmoid", KA_SIGMOID }, { "tanh", KA_TANH },
	{ "softmax", KA_SOFTMAX }, { "elu", KA_ELU }, { "selu", KA_SELU },
	{ "softplus", KA_SOFTPLUS }, { "softsign", KA_SOFTSIGN },
	{ "swish", KA_SWISH }, { "silu", KA_SWISH }, { "gelu", KA_GELU },
	{ "leaky_relu", KA_LEAKY }, { "exponential", KA_EXP },
};

int tfk_keras_act_parse(const char *s, int *a)
{
	size_t i;

	for (i = 0; i < sizeof(acts) / sizeof(acts[0]); i++)
		if (!strcmp(s, acts[i].name)) {
			*a = acts[i].a;
			return 0;
		}
	return -1;
}

int tfk_keras_act_apply(struct kctx *c, int a, float alpha,
			struct tfk_port x, struct kout *out)
{
	static const char *const single[] = {
		[KA_RELU] = "Relu", [KA_RELU6] = "Relu6",
		[KA_SIGMOID] = "Sigmoid", [KA_TANH] = "Tanh",
		[KA_SOFTMAX] = "Softmax", [KA_ELU] = "Elu", [KA_SELU] = "Selu",
		[KA_SOFTPLUS] = "Softplus", [KA_EXP] = "Exp",
	};
	struct tfk_port t, one;
	int rc;

	out->act = NULL;
	out->logits.node = -1;
	out->logits.index = 0;
	switch (a) {
	case KA_LINEAR:
		out->p = x;
		return 0;
	case KA_LEAKY: {
		struct tfk_attr at = TFK_A_FLOAT("alpha", alpha);

		return kop(c, "LeakyRelu", &x, 1, &at, 1, &out->p);
	}
	case KA_SWISH:
		/* x * sigmoid(x), keras.activations.swish */
		return (rc = kop1(c, "Sigmoid", x, &t)) ? rc :
			kop2(c, "Mul", x, t, &out->p);
	case KA_SOFTSIGN:
		/* x / (1 + |x|) */
		if ((rc = kop1(c, "Abs", x, &t)) ||
		    (rc = kconst_f(c, 1, &one)) ||
		    (rc = kop2(c, "AddV2", t, one, &t)))
			return rc;
		return kop2(c, "RealDiv", x, t, &out->p);
	case KA_GELU:
		/* 0.5 x (1 + erf(x / sqrt(2))) */
		if ((rc = kmul_f(c, x, (float)M_SQRT1_2, &t)) ||
		    (rc = kop1(c, "Erf", t, &t)) ||
		    (rc = kconst_f(c, 1, &one)) ||
		    (rc = kop2(c, "AddV2", t, one, &t)) ||
		    (rc = kop2(c, "Mul", x, t, &t)))
			return rc;
		return kmul_f(c, t, 0.5f, &out->p);
	}
	rc = kop1(c, single[a], x, &out->p);
	if (!rc && (a == KA_SOFTMAX || a == KA_SIGMOID)) {
		out->act = a == KA_SOFTMAX ? "softmax" : "sigmoid";
		out->logits = x;
	}
	return rc;
}

/* Layer classes ------------------------------------------------------------- */

static void pass(struct kout *o, struct tfk_port p)
{
	o->p = p;
	o->act = NULL;
	o->logits.node = -1;
	o->logits.index = 0;
}

static int in_rank(struct kctx *c, struct klayer *l, struct tfk_port x,
		   int lo, int hi)
{
	const struct tfk_tdesc *d = kdesc(c, x);
	char what[96];

	if (d->rank >= lo && d->rank <= hi)
		return d->rank;
	if (lo == hi)
		snprintf(what, sizeof(what), "expected an input of rank %d "
			 "(with the batch), got %d", lo, d->rank);
	else
		snprintf(what, sizeof(what), "expected an input of rank "
			 "%d..%d (with the batch), got %d", lo, hi, d->rank);
	return kcfg_bad(c, l, NULL, what);
}

/* InputLayer: parsed here, placed by model.c. */
static int shape_list(struct kctx *c, struct klayer *l, const char *key,
		      const json_t *j, int batch)
{
	size_t i, n;

	if (json_is_object(j) && json_is_array(json_object_get(j, "items")))
		j = json_object_get(j, "items");	/* TensorShape form */
	n = json_is_array(j) ? json_array_size(j) : 0;
	if (!json_is_array(j) || n < (size_t)batch ||
	    n - batch + 1 > TFK_MAX_RANK)
		return kcfg_bad(c, l, key, "expected a list of dimensions "
				"(integers or null)");
	l->rank = (int)(n - batch + 1);
	l->shape[0] = -1;
	for (i = batch; i < n; i++) {
		const json_t *e = json_array_get(j, i);

		if (json_is_null(e)) {
			l->shape[i - batch + 1] = -1;
		} else if (json_is_integer(e) && json_integer_value(e) >= 1 &&
			   json_integer_value(e) <= (1 << 24)) {
			l->shape[i - batch + 1] = json_integer_value(e);
		} else {
			return kcfg_bad(c, l, key, "expected a list of "
					"dimensions (integers or null)");
		}
	}
	return 0;
}

static int parse_input(struct kctx *c, struct klayer *l)
{
	const json_t *j = cget(l, "batch_input_shape"), *d;
	const char *key = "batch_input_shape";
	int rc;

	if (!j) {
		j = cget(l, "batch_shape");
		key = "batch_shape";
	}
	if (!j)
		return kcfg_bad(c, l, NULL, "InputLayer needs "
				"batch_input_shape (or batch_shape)");
	if ((rc = shape_list(c, l, key, j, 1)) ||
	    (rc = c_false(c, l, "sparse")) || (rc = c_false(c, l, "ragged")) ||
	    (rc = c_false(c, l, "optional")))	/* Keras 3.15 writes it */
		return rc;
	l->dtype = TFK_DT_FLOAT;
	d = cget(l, "dtype");
	/* Keras 3 writes a DTypePolicy object */
	if (json_is_object(d) && json_is_object(json_object_get(d, "config")))
		d = json_object_get(json_object_get(d, "config"), "name");
	if (d && (!json_is_string(d) ||
		  tfk_dtype_parse(json_string_value(d), &l->dtype) ||
		  !(l->dtype == TFK_DT_FLOAT || l->dtype == TFK_DT_UINT8 ||
		    l->dtype == TFK_DT_INT32 || l->dtype == TFK_DT_INT64 ||
		    l->dtype == TFK_DT_STRING)))
		return kcfg_bad(c, l, "dtype", "expected float32, uint8, "
				"int32, int64 or string");
	return 0;
}

/* Dense */
static int parse_dense(struct kctx *c, struct klayer *l)
{
	int rc;

	if ((rc = c_long(c, l, "units", 0, 1, 1 << 24, &l->units)) ||
	    (rc = c_act(c, l, "activation")) ||
	    (rc = c_bool(c, l, "use_bias", 1, &l->use_bias)) ||
	    (rc = tfk_keras_init_parse(c, l, "kernel_initializer",
				       "glorot_uniform", &l->init[0])) ||
	    (rc = tfk_keras_init_parse(c, l, "bias_initializer", "zeros",
				       &l->init[1])) ||
	    (rc = tfk_keras_reg_parse(c, l, "kernel_regularizer",
				      &l->reg[0])) ||
	    (rc = tfk_keras_reg_parse(c, l, "bias_regularizer", &l->reg[1])))
		return rc;
	return 0;
}

static int build_dense(struct kctx *c, struct klayer *l,
		       const struct tfk_tdesc *in, int n_in)
{
	int64_t s[2] = { in->rank >= 1 ? in->shape[in->rank - 1] : -1,
			 l->units };
	int rc;

	if (in->rank < 2)
		return kcfg_bad(c, l, NULL, "Dense needs an input of rank >= 2"
				" (with the batch)");
	rc = tfk_keras_var(c, l, 0, "kernel", 2, s, &l->init[0], &l->reg[0],
			   1);
	if (!rc && l->use_bias)
		rc = tfk_keras_var(c, l, 1, "bias", 1, &s[1], &l->init[1],
				   &l->reg[1], 1);
	return rc;
}

static int apply_dense(struct kctx *c, struct klayer *l,
		       const struct tfk_port *in, int n_in, struct kout *out)
{
	const struct tfk_tdesc *d = kdesc(c, in[0]);
	int64_t dims[TFK_MAX_RANK], flat[2];
	struct tfk_port x = in[0];
	int r = d->rank, i, rc;

	if (r > 2) {
		/* tensordot: [-1, in] @ kernel, back to [..., units] */
		for (i = 1; i < r; i++)
			if (d->shape[i] < 0)
				return kcfg_bad(c, l, NULL, "Dense on rank > 2 "
						"needs known inner dims");
		flat[0] = -1;
		flat[1] = d->shape[r - 1];
		dims[0] = -1;
		for (i = 1; i < r - 1; i++)
			dims[i] = d->shape[i];
		dims[r - 1] = l->units;
		if ((rc = kreshape(c, x, flat, 2, &x)))
			return rc;
	}
	if ((rc = kop2(c, "MatMul", x, l->w[0], &x)) ||
	    (l->bf16 && (rc = tfk_graph_node_flag(c->g, x.node,
						  TFK_NODE_BF16))))
		return rc;
	if (r > 2 && (rc = kreshape(c, x, dims, r, &x)))
		return rc;
	if (l->use_bias && (rc = kop2(c, "BiasAdd", x, l->w[1], &x)))
		return rc;
	return tfk_keras_act_apply(c, l->act, l->alpha, x, out);
}

/* Activation, ReLU, LeakyReLU, Softmax, ELU */
static int parse_activation(struct kctx *c, struct klayer *l)
{
	l->axis = -1;
	if (!cget(l, "activation"))
		return kcfg_bad(c, l, "activation", "expected an activation "
				"name");
	return c_act(c, l, "activation");
}

static int parse_relu(struct kctx *c, struct klayer *l)
{
	double ns, th;
	int rc;

	if ((rc = c_num(c, l, "max_value", -1, &l->max_value)) ||
	    (rc = c_num(c, l, "negative_slope", 0, &ns)) ||
	    (rc = c_num(c, l, "threshold", 0, &th)))
		return rc;
	if (th != 0)
		return kcfg_bad(c, l, "threshold", "only 0 is supported");
	if (l->max_value == -1 && ns == 0) {
		l->act = KA_RELU;
	} else if (l->max_value == 6 && ns == 0) {
		l->act = KA_RELU6;
	} else if (l->max_value == -1 && ns > 0 && ns < 1) {
		l->act = KA_LEAKY;
		l->alpha = (float)ns;
	} else {
		return kcfg_bad(c, l, "max_value", "supported: ReLU, ReLU with "
				"max_value 6, or a negative_slope in (0, 1) "
				"without max_value");
	}
	return 0;
}

static int parse_leaky(struct kctx *c, struct klayer *l)
{
	double a;
	int rc;

	/* Keras 2 "alpha", Keras 3 "negative_slope"; both default 0.3 */
	if ((rc = c_num(c, l, "alpha", 0.3, &a)) ||
	    (cget(l, "negative_slope") &&
	     (rc = c_num(c, l, "negative_slope", 0.3, &a))))
		return rc;
	l->act = KA_LEAKY;
	l->alpha = (float)a;
	return 0;
}

static int parse_softmax(struct kctx *c, struct klayer *l)
{
	l->act = KA_SOFTMAX;
	return c_last_axis(c, l, "axis");
}

static int parse_elu(struct kctx *c, struct klayer *l)
{
	double a;
	int rc = c_num(c, l, "alpha", 1, &a);

	if (rc)
		return rc;
	if (a != 1)
		return kcfg_bad(c, l, "alpha", "only 1.0 is supported");
	l->act = KA_ELU;
	return 0;
}

static int apply_act(struct kctx *c, struct klayer *l,
		     const struct tfk_port *in, int n_in, struct kout *out)
{
	int rc;

	if (l->act == KA_SOFTMAX &&
	    (rc = check_last_axis(c, l, kdesc(c, in[0])->rank, "axis")))
		return rc;
	return tfk_keras_act_apply(c, l->act, l->alpha, in[0], out);
}

/* Flatten, Reshape */
static int parse_flatten(struct kctx *c, struct klayer *l)
{
	return c_format(c, l);
}

static int apply_flatten(struct kctx *c, struct klayer *l,
			 const struct tfk_port *in, int n_in, struct kout *out)
{
	const struct tfk_tdesc *d = kdesc(c, in[0]);
	int64_t s[2] = { -1, 1 };
	int i;

	if (d->rank < 1)
		return kcfg_bad(c, l, NULL, "Flatten needs an input with a "
				"batch dimension");
	for (i = 1; i < d->rank; i++) {
		if (d->shape[i] < 0)
			return kcfg_bad(c, l, NULL, "Flatten needs known "
					"dims after the batch");
		s[1] *= d->shape[i];
	}
	pass(out, in[0]);
	return kreshape(c, in[0], s, 2, &out->p);
}

static int parse_reshape(struct kctx *c, struct klayer *l)
{
	const json_t *j = cget(l, "target_shape");
	size_t i, n = json_is_array(j) ? json_array_size(j) : 0;
	int unk = 0;

	if (!json_is_array(j) || n + 1 > TFK_MAX_RANK)
		return kcfg_bad(c, l, "target_shape", "expected a list of "
				"dimensions");
	for (i = 0; i < n; i++) {
		const json_t *e = json_array_get(j, i);

		if (!json_is_integer(e) || json_integer_value(e) < -1 ||
		    json_integer_value(e) == 0 ||
		    json_integer_value(e) > (1 << 24) ||
		    (json_integer_value(e) == -1 && unk++))
			return kcfg_bad(c, l, "target_shape", "expected "
					"positive integers and at most one "
					"-1");
		l->target[i] = json_integer_value(e);
	}
	l->target_rank = (int)n;
	return 0;
}

static int apply_reshape(struct kctx *c, struct klayer *l,
			 const struct tfk_port *in, int n_in, struct kout *out)
{
	const struct tfk_tdesc *d = kdesc(c, in[0]);
	int64_t s[TFK_MAX_RANK], have = 1, want = 1;
	int i, unk = -1;

	for (i = 1; i < d->rank; i++) {
		if (d->shape[i] < 0)
			return kcfg_bad(c, l, NULL, "Reshape needs known dims "
					"after the batch");
		have *= d->shape[i];
	}
	s[0] = -1;
	for (i = 0; i < l->target_rank; i++) {
		s[i + 1] = l->target[i];
		if (l->target[i] == -1)
			unk = i + 1;
		else
			want *= l->target[i];
	}
	if (unk > 0 && have % want == 0)
		s[unk] = have / want;
	else if (unk > 0 || have != want)
		return kcfg_bad(c, l, "target_shape", "does not have the "
				"input's size");
	pass(out, in[0]);
	return kreshape(c, in[0], s, l->target_rank + 1, &out->p);
}

/* Dropout, SpatialDropout1D/2D */
static int parse_dropout(struct kctx *c, struct klayer *l)
{
	int rc = c_num(c, l, "rate", -1, &l->rate);

	if (rc)
		return rc;
	if (!(l->rate >= 0 && l->rate < 1))
		return kcfg_bad(c, l, "rate", "expected a number in [0, 1)");
	if (cget(l, "noise_shape"))
		return kcfg_bad(c, l, "noise_shape", "only null is supported");
	if (cget(l, "seed") && !json_is_integer(cget(l, "seed")))
		return kcfg_bad(c, l, "seed", "expected an integer or null");
	return c_format(c, l);
}

static int apply_dropout(struct kctx *c, struct klayer *l,
			 const struct tfk_port *in, int n_in, struct kout *out)
{
	const struct tfk_tdesc *d = kdesc(c, in[0]);
	int spatial = strncmp(l->k->cls, "SpatialDropout", 14) == 0;
	struct tfk_attr at[2] = { TFK_A_TYPE("dtype", TFK_DT_FLOAT) };
	struct tfk_port x, shape, u, r, keep;
	int rc;

	pass(out, in[0]);
	if (!c->train || l->rate == 0)
		return 0;
	if (d->dtype != TFK_DT_FLOAT)
		return kcfg_bad(c, l, NULL, "Dropout needs a float32 input");
	if ((rc = kop1(c, "Shape", in[0], &shape)))
		return rc;
	if (spatial) {
		/* noise shape [batch, 1, (1,) channels]: Shape(x)[0:1]
		 * concatenated with the constant tail */
		int want = strstr(l->k->cls, "1D") ? 3 : 4;
		int32_t tail[3] = { 1, 1, (int32_t)d->shape[d->rank - 1] };
		int32_t v0 = 0, v1 = 1;
		struct tfk_port sl[4], ci[3];
		struct tfk_attr na = TFK_A_INT("N", 2);

		if (d->rank != want || d->shape[d->rank - 1] < 0)
			return kcfg_bad(c, l, NULL, want == 3 ? "expected an "
					"input [batch, steps, channels]" :
					"expected an input [batch, h, w, "
					"channels]");
		sl[0] = shape;
		if ((rc = kconst_iv(c, &v0, 1, &sl[1])) ||
		    (rc = kconst_iv(c, &v1, 1, &sl[2])) ||
		    (rc = kconst_iv(c, &v1, 1, &sl[3])) ||
		    (rc = kop(c, "StridedSlice", sl, 4, NULL, 0, &ci[0])) ||
		    (rc = kconst_iv(c, tail + (4 - want), want - 1,
				    &ci[1])) ||
		    (rc = kconst_si(c, 0, &ci[2])) ||
		    (rc = kop(c, "ConcatV2", ci, 3, &na, 1, &shape)))
			return rc;
	}
	if ((rc = kop(c, "RandomUniform", &shape, 1, at, 1, &u)) ||
	    (rc = kconst_f(c, (float)l->rate, &r)) ||
	    (rc = kop2(c, "GreaterEqual", u, r, &keep)))
		return rc;
	at[0] = TFK_A_TYPE("DstT", TFK_DT_FLOAT);
	if ((rc = kop(c, "Cast", &keep, 1, at, 1, &keep)) ||
	    (rc = kmul_f(c, in[0], (float)(1 / (1 - l->rate)), &x)))
		return rc;
	return kop2(c, "Mul", x, keep, &out->p);
}

/* Conv1D, Conv2D, DepthwiseConv2D */
static int parse_conv(struct kctx *c, struct klayer *l)
{
	int dw = !strcmp(l->k->cls, "DepthwiseConv2D");
	int n = strstr(l->k->cls, "1D") ? 1 : 2, rc;

	if ((!dw && (rc = c_long(c, l, "filters", 0, 1, 1 << 20,
				 &l->filters))) ||
	    (dw && (rc = c_long(c, l, "depth_multiplier", 1, 1, 1 << 12,
				&l->mult))) ||
	    (rc = c_tuple(c, l, "kernel_size", n, 0, l->ks)) ||
	    (rc = c_tuple(c, l, "strides", n, 1, l->st)) ||
	    (rc = c_tuple(c, l, "dilation_rate", n, 1, l->dil)) ||
	    (rc = c_long(c, l, "groups", 1, 1, 1 << 20, &l->groups)) ||
	    (rc = c_padding(c, l, n == 1)) || (rc = c_format(c, l)) ||
	    (rc = c_act(c, l, "activation")) ||
	    (rc = c_bool(c, l, "use_bias", 1, &l->use_bias)) ||
	    (rc = tfk_keras_init_parse(c, l, dw ? "depthwise_initializer" :
				       "kernel_initializer", "glorot_uniform",
				       &l->init[0])) ||
	    (rc = tfk_keras_init_parse(c, l, "bias_initializer", "zeros",
				       &l->init[1])) ||
	    (rc = tfk_keras_reg_parse(c, l, dw ? "depthwise_regularizer" :
				      "kernel_regularizer", &l->reg[0])) ||
	    (rc = tfk_keras_reg_parse(c, l, "bias_regularizer", &l->reg[1])))
		return rc;
	if (n == 1) {
		l->ks[1] = l->ks[0];
		l->st[1] = l->st[0];
		l->dil[1] = l->dil[0];
	}
	if ((l->st[0] > 1 || l->st[1] > 1) && (l->dil[0] > 1 || l->dil[1] > 1))
		return kcfg_bad(c, l, "strides", "strides > 1 with "
				"dilation_rate > 1 is not supported (as Keras)");
	if (dw && l->groups != 1)
		return kcfg_bad(c, l, "groups", "only 1 is supported");
	if (!dw && l->filters % l->groups)
		return kcfg_bad(c, l, "groups", "must divide filters");
	return 0;
}

static int build_conv(struct kctx *c, struct klayer *l,
		      const struct tfk_tdesc *in, int n_in)
{
	int dw = !strcmp(l->k->cls, "DepthwiseConv2D");
	int one = strstr(l->k->cls, "1D") != NULL, rc;
	int64_t cin = in->rank >= 1 ? in->shape[in->rank - 1] : -1, s[4];
	int64_t nb;

	if (in->rank != (one ? 3 : 4))
		return kcfg_bad(c, l, NULL, one ? "expected an input [batch, "
				"steps, channels]" : "expected an input [batch,"
				" h, w, channels]");
	if (cin < 1 || cin % l->groups)
		return kcfg_bad(c, l, "groups", "must divide the input "
				"channels");
	if (one) {
		s[0] = l->ks[0];
		s[1] = cin / l->groups;
		s[2] = l->filters;
		nb = l->filters;
	} else {
		s[0] = l->ks[0];
		s[1] = l->ks[1];
		s[2] = dw ? cin : cin / l->groups;
		s[3] = dw ? l->mult : l->filters;
		nb = dw ? cin * l->mult : l->filters;
	}
	rc = tfk_keras_var(c, l, 0, dw ? "depthwise_kernel" : "kernel",
			   one ? 3 : 4, s, &l->init[0], &l->reg[0], 1);
	if (!rc && l->use_bias)
		rc = tfk_keras_var(c, l, 1, "bias", 1, &nb, &l->init[1],
				   &l->reg[1], 1);
	return rc;
}

static int apply_conv(struct kctx *c, struct klayer *l,
		      const struct tfk_port *in, int n_in, struct kout *out)
{
	int dw = !strcmp(l->k->cls, "DepthwiseConv2D");
	int one = strstr(l->k->cls, "1D") != NULL, rc, na = 0;
	int64_t st[4] = { 1, l->st[0], l->st[1], 1 };
	int64_t dl[4] = { 1, l->dil[0], l->dil[1], 1 };
	struct tfk_port x = in[0], k = l->w[0], io[2];
	struct tfk_attr at[3];

	if (one) {
		/* tf.nn.conv1d: [b, w, c] -> [b, 1, w, c], kernel
		 * [1, kw, cin, f]; strides and dilations on axis 2 */
		st[1] = dl[1] = 1;
		if (l->causal) {
			/* left padding of dilation * (kernel - 1) */
			int32_t pad[6] = { 0, 0, (int32_t)(l->dil[0] *
				(l->ks[0] - 1)), 0, 0, 0 };
			int64_t ps[2] = { 3, 2 };
			struct tfk_tensor t;

			rc = tfk_tensor_init_view(&t, TFK_DT_INT32, 2, ps, pad,
						  sizeof(pad),
						  TFK_OWN_BORROWED, c->err);
			if (!rc)
				rc = tfk_graph_const(c->g, c->scope, &t,
						     &io[1], c->err);
			io[0] = x;
			if (rc || (rc = kop(c, "Pad", io, 2, NULL, 0, &x)))
				return rc;
		}
		if ((rc = kexpand(c, x, 1, &x)) || (rc = kexpand(c, k, 0, &k)))
			return rc;
	}
	at[na++] = a_ints("strides", st, 4);
	at[na++] = TFK_A_STR("padding", l->same ? "SAME" : "VALID");
	at[na++] = a_ints("dilations", dl, 4);
	io[0] = x;
	io[1] = k;
	/* mixed_bfloat16: Conv2D's products in bfloat16 (bf16conv.c);
	 * DepthwiseConv2D has no bf16 kernel and stays float32 */
	if ((rc = kop(c, dw ? "DepthwiseConv2dNative" : "Conv2D", io, 2, at,
		      na, &x)) ||
	    (!dw && l->bf16 && (rc = tfk_graph_node_flag(c->g, x.node,
							 TFK_NODE_BF16))))
		return rc;
	if (one && (rc = ksqueeze(c, x, 1, &x)))
		return rc;
	if (l->use_bias && (rc = kop2(c, "BiasAdd", x, l->w[1], &x)))
		return rc;
	return tfk_keras_act_apply(c, l->act, l->alpha, x, out);
}

/* MaxPooling1D/2D, AveragePooling1D/2D */
static int parse_pool(struct kctx *c, struct klayer *l)
{
	int n = strstr(l->k->cls, "1D") ? 1 : 2, rc;

	if ((rc = c_tuple(c, l, "pool_size", n, 2, l->ks)))
		return rc;
	if ((rc = c_tuple(c, l, "strides", n, l->ks[0], l->st)) ||
	    (rc = c_padding(c, l, 0)) || (rc = c_format(c, l)))
		return rc;
	if (n == 2 && !cget(l, "strides"))
		l->st[1] = l->ks[1];
	return 0;
}

static int apply_pool(struct kctx *c, struct klayer *l,
		      const struct tfk_port *in, int n_in, struct kout *out)
{
	int one = strstr(l->k->cls, "1D") != NULL, rc;
	int64_t ks[4] = { 1, l->ks[0], l->ks[1], 1 };
	int64_t st[4] = { 1, l->st[0], l->st[1], 1 };
	struct tfk_attr at[3];
	struct tfk_port x = in[0];

	if ((rc = in_rank(c, l, x, one ? 3 : 4, one ? 3 : 4)) < 0)
		return rc;
	if (one) {
		/* Keras' Pooling1D: [b, w, c] -> [b, w, 1, c] */
		ks[2] = st[2] = 1;
		if ((rc = kexpand(c, x, 2, &x)))
			return rc;
	}
	at[0] = a_ints("ksize", ks, 4);
	at[1] = a_ints("strides", st, 4);
	at[2] = TFK_A_STR("padding", l->same ? "SAME" : "VALID");
	if ((rc = kop(c, strstr(l->k->cls, "Max") ? "MaxPool" : "AvgPool", &x,
		      1, at, 3, &x)))
		return rc;
	pass(out, x);
	return one ? ksqueeze(c, x, 2, &out->p) : 0;
}

/* GlobalAveragePooling1D/2D, GlobalMaxPooling1D/2D */
static int parse_gpool(struct kctx *c, struct klayer *l)
{
	int rc = c_format(c, l);

	return rc ? rc : c_bool(c, l, "keepdims", 0, &l->keepdims);
}

static int apply_gpool(struct kctx *c, struct klayer *l,
		       const struct tfk_port *in, int n_in, struct kout *out)
{
	int one = strstr(l->k->cls, "1D") != NULL, rc;
	int32_t axes[2] = { 1, 2 };

	if ((rc = in_rank(c, l, in[0], one ? 3 : 4, one ? 3 : 4)) < 0)
		return rc;
	pass(out, in[0]);
	return kreduce(c, strstr(l->k->cls, "Max") ? "Max" : "Mean", in[0],
		       axes, one ? 1 : 2, l->keepdims, &out->p);
}

/* BatchNormalization */
static int parse_bn(struct kctx *c, struct klayer *l)
{
	int rc;

	if ((rc = c_last_axis(c, l, "axis")) ||
	    (rc = c_num(c, l, "momentum", 0.99, &l->momentum)) ||
	    (rc = c_num(c, l, "epsilon", 1e-3, &l->eps)) ||
	    (rc = c_bool(c, l, "center", 1, &l->center)) ||
	    (rc = c_bool(c, l, "scale", 1, &l->scale)) ||
	    (rc = tfk_keras_init_parse(c, l, "gamma_initializer", "ones",
				       &l->init[0])) ||
	    (rc = tfk_keras_init_parse(c, l, "beta_initializer", "zeros",
				       &l->init[1])) ||
	    (rc = tfk_keras_init_parse(c, l, "moving_mean_initializer",
				       "zeros", &l->init[2])) ||
	    (rc = tfk_keras_init_parse(c, l, "moving_variance_initializer",
				       "ones", &l->init[3])) ||
	    (rc = tfk_keras_reg_parse(c, l, "gamma_regularizer", &l->reg[0]))
	    || (rc = tfk_keras_reg_parse(c, l, "beta_regularizer",
					 &l->reg[1])) ||
	    (rc = c_false(c, l, "renorm")) ||
	    (rc = c_false(c, l, "synchronized")))
		return rc;
	if (!(l->momentum >= 0 && l->momentum <= 1))
		return kcfg_bad(c, l, "momentum", "expected a number in "
				"[0, 1]");
	if (!(l->eps > 0))
		return kcfg_bad(c, l, "epsilon", "expected a number > 0");
	if (cget(l, "virtual_batch_size"))
		return kcfg_bad(c, l, "virtual_batch_size", "only null is "
				"supported");
	if (cget(l, "adjustment"))
		return kcfg_bad(c, l, "adjustment", "only null is supported");
	if (cget(l, "fused") && !json_is_boolean(cget(l, "fused")))
		return kcfg_bad(c, l, "fused", "expected true, false or null");
	return 0;
}

static int build_norm(struct kctx *c, struct klayer *l,
		      const struct tfk_tdesc *in, int n_in)
{
	int64_t ch = in->rank >= 1 ? in->shape[in->rank - 1] : -1;
	int bn = !strcmp(l->k->cls, "BatchNormalization"), rc;

	if (in->rank < 2 || (bn && in->rank > 4))
		return kcfg_bad(c, l, NULL, bn ? "expected an input of rank "
				"2..4 (with the batch)" : "expected an input "
				"of rank >= 2 (with the batch)");
	if ((rc = check_last_axis(c, l, in->rank, "axis")))
		return rc;
	if ((l->scale && (rc = tfk_keras_var(c, l, 0, "gamma", 1, &ch,
					     &l->init[0], &l->reg[0], 1))) ||
	    (l->center && (rc = tfk_keras_var(c, l, 1, "beta", 1, &ch,
					      &l->init[1], &l->reg[1], 1))))
		return rc;
	if (!bn)
		return 0;
	if ((rc = tfk_keras_var(c, l, 2, "moving_mean", 1, &ch, &l->init[2],
				NULL, 0)) ||
	    (rc = tfk_keras_var(c, l, 3, "moving_variance", 1, &ch,
				&l->init[3], NULL, 0)))
		return rc;
	return 0;
}

/* Const [ch] of v (a missing gamma/beta). */
static int kconst_vec(struct kctx *c, int64_t ch, float v,
		      struct tfk_port *out)
{
	struct tfk_tensor t;
	int64_t i;
	int rc = tfk_tensor_init(&t, TFK_DT_FLOAT, 1, &ch, c->err);

	for (i = 0; !rc && i < ch; i++)
		((float *)t.data)[i] = v;
	if (!rc)
		rc = tfk_graph_const(c->g, c->scope, &t, out, c->err);
	tfk_tensor_release(&t);
	return rc;
}

static int apply_bn(struct kctx *c, struct klayer *l,
		    const struct tfk_port *in, int n_in, struct kout *out)
{
	const struct tfk_tdesc *d = kdesc(c, in[0]);
	int64_t ch = d->shape[d->rank - 1], s4[4], back[TFK_MAX_RANK];
	struct tfk_attr at[3];
	struct tfk_port io[5], y;
	int r = d->rank, i, rc;

	io[0] = in[0];
	if (r != 4) {
		s4[0] = -1;
		s4[1] = 1;
		s4[2] = r == 3 ? d->shape[1] : 1;
		s4[3] = ch;
		back[0] = -1;
		for (i = 1; i < r; i++)
			back[i] = d->shape[i];
		if (r == 3 && s4[2] < 0)
			return kcfg_bad(c, l, NULL, "needs known steps");
		if ((rc = kreshape(c, in[0], s4, 4, &io[0])))
			return rc;
	}
	if (l->scale)
		io[1] = l->w[0];
	else if ((rc = kconst_vec(c, ch, 1, &io[1])))
		return rc;
	if (l->center)
		io[2] = l->w[1];
	else if ((rc = kconst_vec(c, ch, 0, &io[2])))
		return rc;
	io[3] = l->w[2];
	io[4] = l->w[3];
	at[0] = TFK_A_FLOAT("epsilon", (float)l->eps);
	at[1] = TFK_A_BOOL("is_training", c->train);
	at[2] = TFK_A_STR("data_format", "NHWC");
	if ((rc = kop(c, "FusedBatchNormV3", io, 5, at, 3, &y)))
		return rc;
	if (c->train) {
		struct tfk_model_update *u;
		struct tfk_model *m = c->m;
		struct tfk_port bvar = { y.node, 2 }, mean;
		static const int32_t ax[3] = { 0, 1, 2 };
		int k;

		/* FusedBatchNormV3 gives the batch's unbiased variance, which
		 * tf_keras averages in; Keras 3 averages in the biased one
		 * (ops.moments), so its layers get that */
		if (l->keras3 &&
		    ((rc = kreduce(c, "Mean", io[0], ax, 3, 1, &mean)) ||
		     (rc = kop2(c, "SquaredDifference", io[0], mean, &bvar)) ||
		     (rc = kreduce(c, "Mean", bvar, ax, 3, 0, &bvar))))
			return rc;

		u = tfk_realloc(m->updates, (size_t)(m->n_updates + 2) *
			    sizeof(*u));
		if (!u)
			return tfk_errf(c->err, TFK_ENOMEM, "out of memory");
		m->updates = u;
		for (k = 0; k < 2; k++) {
			u = &m->updates[m->n_updates++];
			u->var = tfk_graph_node(c->g, l->w[2 + k].node)->variable;
			u->value.node = y.node;
			u->value.index = 1 + k;
			if (k == 1)
				u->value = bvar;
			u->momentum = (float)l->momentum;
		}
	}
	pass(out, y);
	return r == 4 ? 0 : kreshape(c, y, back, r, &out->p);
}

/* LayerNormalization */
static int parse_ln(struct kctx *c, struct klayer *l)
{
	int rc;

	if ((rc = c_last_axis(c, l, "axis")) ||
	    (rc = c_num(c, l, "epsilon", 1e-3, &l->eps)) ||
	    (rc = c_bool(c, l, "center", 1, &l->center)) ||
	    (rc = c_bool(c, l, "scale", 1, &l->scale)) ||
	    (rc = tfk_keras_init_parse(c, l, "gamma_initializer", "ones",
				       &l->init[0])) ||
	    (rc = tfk_keras_init_parse(c, l, "beta_initializer", "zeros",
				       &l->init[1])) ||
	    (rc = tfk_keras_reg_parse(c, l, "gamma_regularizer", &l->reg[0]))
	    || (rc = tfk_keras_reg_parse(c, l, "beta_regularizer",
					 &l->reg[1])) ||
	    (rc = c_false(c, l, "rms_scaling")))
		return rc;
	if (!(l->eps > 0))
		return kcfg_bad(c, l, "epsilon", "expected a number > 0");
	return 0;
}

static int apply_ln(struct kctx *c, struct klayer *l,
		    const struct tfk_port *in, int n_in, struct kout *out)
{
	int32_t ax = -1;
	struct tfk_port mean, var, e, x;
	int rc;

	/* (x - mean) * rsqrt(var + eps) * gamma + beta, var biased */
	if ((rc = kreduce(c, "Mean", in[0], &ax, 1, 1, &mean)) ||
	    (rc = kop2(c, "SquaredDifference", in[0], mean, &var)) ||
	    (rc = kreduce(c, "Mean", var, &ax, 1, 1, &var)) ||
	    (rc = kconst_f(c, (float)l->eps, &e)) ||
	    (rc = kop2(c, "AddV2", var, e, &var)) ||
	    (rc = kop1(c, "Rsqrt", var, &var)) ||
	    (rc = kop2(c, "Sub", in[0], mean, &x)) ||
	    (rc = kop2(c, "Mul", x, var, &x)))
		return rc;
	if (l->scale && (rc = kop2(c, "Mul", x, l->w[0], &x)))
		return rc;
	if (l->center && (rc = kop2(c, "AddV2", x, l->w[1], &x)))
		return rc;
	pass(out, x);
	return 0;
}

/* Embedding */
static int parse_embedding(struct kctx *c, struct klayer *l)
{
	int rc;

	if ((rc = c_long(c, l, "input_dim", 0, 1, 1 << 26, &l->in_dim)) ||
	    (rc = c_long(c, l, "output_dim", 0, 1, 1 << 20, &l->out_dim)) ||
	    (rc = tfk_keras_init_parse(c, l, "embeddings_initializer",
				       "random_uniform", &l->init[0])) ||
	    (rc = tfk_keras_reg_parse(c, l, "embeddings_regularizer",
				      &l->reg[0])) ||
	    (rc = c_false(c, l, "mask_zero")) || (rc = c_false(c, l, "sparse")))
		return rc;
	if (cget(l, "input_length") && !json_is_integer(cget(l,
							     "input_length")))
		return kcfg_bad(c, l, "input_length", "expected an integer "
				"or null");
	return 0;
}

static int build_embedding(struct kctx *c, struct klayer *l,
			   const struct tfk_tdesc *in, int n_in)
{
	int64_t s[2] = { l->in_dim, l->out_dim };

	return tfk_keras_var(c, l, 0, "embeddings", 2, s, &l->init[0],
			     &l->reg[0], 1);
}

static int apply_embedding(struct kctx *c, struct klayer *l,
			   const struct tfk_port *in, int n_in,
			   struct kout *out)
{
	const struct tfk_tdesc *d = kdesc(c, in[0]);
	struct tfk_attr at = TFK_A_TYPE("DstT", TFK_DT_INT32);
	struct tfk_port io[3] = { l->w[0], in[0] };
	int rc;

	if (d->dtype != TFK_DT_INT32 && d->dtype != TFK_DT_INT64 &&
	    (rc = kop(c, "Cast", &in[0], 1, &at, 1, &io[1])))
		return rc;
	rc = kconst_si(c, 0, &io[2]);
	pass(out, io[0]);
	return rc ? rc : kop(c, "GatherV2", io, 3, NULL, 0, &out->p);
}

/* Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate */
static int parse_merge(struct kctx *c, struct klayer *l)
{
	if (!strcmp(l->k->cls, "Concatenate")) {
		const json_t *j = cget(l, "axis");

		l->axis = -1;
		if (j && (!json_is_integer(j) || json_integer_value(j) == 0 ||
			  json_integer_value(j) < -TFK_MAX_RANK ||
			  json_integer_value(j) >= TFK_MAX_RANK))
			return kcfg_bad(c, l, "axis", "expected a non-batch "
					"axis");
		if (j)
			l->axis = (int)json_integer_value(j);
	}
	return 0;
}

static int apply_merge(struct kctx *c, struct klayer *l,
		       const struct tfk_port *in, int n_in, struct kout *out)
{
	const char *cls = l->k->cls, *op;
	struct tfk_port x = in[0];
	int i, rc;

	if (n_in < 2 || (!strcmp(cls, "Subtract") && n_in != 2))
		return kcfg_bad(c, l, NULL, !strcmp(cls, "Subtract") ?
				"Subtract takes exactly 2 inputs" :
				"a merge layer takes at least 2 inputs");
	pass(out, x);
	if (!strcmp(cls, "Concatenate")) {
		struct tfk_port io[KMAX_IN + 1];
		struct tfk_attr at = TFK_A_INT("N", n_in);

		memcpy(io, in, (size_t)n_in * sizeof(*in));
		rc = kconst_si(c, l->axis, &io[n_in]);
		return rc ? rc : kop(c, "ConcatV2", io, n_in + 1, &at, 1,
				     &out->p);
	}
	op = !strcmp(cls, "Subtract") ? "Sub" : !strcmp(cls, "Multiply") ?
		"Mul" : !strcmp(cls, "Maximum") ? "Maximum" :
		!strcmp(cls, "Minimum") ? "Minimum" : "AddV2";
	for (i = 1; i < n_in; i++)
		if ((rc = kop2(c, op, x, in[i], &x)))
			return rc;
	if (!strcmp(cls, "Average") &&
	    (rc = kmul_f(c, x, 1.0f / (float)n_in, &x)))
		return rc;
	out->p = x;
	return 0;
}

/* ZeroPadding2D */
static int parse_zpad(struct kctx *c, struct klayer *l)
{
	const json_t *j = cget(l, "padding");
	int64_t v[4] = { 1, 1, 1, 1 };
	size_t i;

	if (j && json_is_integer(j)) {
		v[0] = v[1] = v[2] = v[3] = json_integer_value(j);
	} else if (j && json_is_array(j) && json_array_size(j) == 2) {
		for (i = 0; i < 2; i++) {
			const json_t *e = json_array_get(j, i);

			if (json_is_integer(e)) {
				v[2 * i] = v[2 * i + 1] = json_integer_value(e);
			} else if (json_is_array(e) && json_array_size(e) == 2
				   && json_is_integer(json_array_get(e, 0)) &&
				   json_is_integer(json_array_get(e, 1))) {
				v[2 * i] = json_integer_value(
					json_array_get(e, 0));
				v[2 * i + 1] = json_integer_value(
					json_array_get(e, 1));
			} else {
				v[0] = -1;
			}
		}
	} else if (j) {
		v[0] = -1;
	}
	for (i = 0; i < 4; i++)
		if (v[i] < 0 || v[i] > 65536)
			return kcfg_bad(c, l, "padding", "expected an integer, "
					"2 integers or 2 pairs of integers >= "
					"0");
	memcpy(l->target, v, sizeof(v));
	return c_format(c, l);
}

static int apply_zpad(struct kctx *c, struct klayer *l,
		      const struct tfk_port *in, int n_in, struct kout *out)
{
	int32_t p[8] = { 0, 0, (int32_t)l->target[0], (int32_t)l->target[1],
			 (int32_t)l->target[2], (int32_t)l->target[3], 0, 0 };
	int64_t ps[2] = { 4, 2 };
	struct tfk_port io[2] = { in[0] };
	struct tfk_tensor t;
	int rc;

	if ((rc = in_rank(c, l, in[0], 4, 4)) < 0)
		return rc;
	rc = tfk_tensor_init_view(&t, TFK_DT_INT32, 2, ps, p, sizeof(p),
				  TFK_OWN_BORROWED, c->err);
	if (!rc)
		rc = tfk_graph_const(c->g, c->scope, &t, &io[1], c->err);
	pass(out, in[0]);
	return rc ? rc : kop(c, "Pad", io, 2, NULL, 0, &out->p);
}

/* Rescaling, Normalization: the preprocessing layers' own builder */
static int apply_prep(struct kctx *c, struct klayer *l,
		      const struct tfk_port *in, int n_in, struct kout *out)
{
	pass(out, in[0]);
	return tfk_prep_layer_add(c->g, l->obj, l->path, &out->p, c->err);
}

static int parse_none(struct kctx *c, struct klayer *l)
{
	return 0;
}

#define CONV_KEYS " kernel_size strides padding data_format dilation_rate " \
	"groups activation use_bias bias_initializer bias_regularizer "
#define POOL_KEYS " pool_size strides padding data_format "
#define RNN_KEYS " units activation use_bias kernel_initializer " \
	"recurrent_initializer bias_initializer kernel_regularizer " \
	"recurrent_regularizer bias_regularizer dropout recurrent_dropout " \
	"return_sequences return_state go_backwards stateful unroll " \
	"time_major zero_output_for_mask seed "
#define AUG_KEYS " data_format seed "
#define WARP_KEYS "fill_mode interpolation fill_value "

static const struct klayer_class classes[] = {
	{ "InputLayer", " batch_input_shape batch_shape sparse ragged "
	  "optional ",
	  parse_input, NULL, NULL, KL_INPUT },
	{ "Dense", " units activation use_bias kernel_initializer "
	  "bias_initializer kernel_regularizer bias_regularizer ",
	  parse_dense, build_dense, apply_dense, 0 },
	{ "Activation", " activation ", parse_activation, NULL, apply_act, 0 },
	{ "ReLU", " max_value negative_slope threshold ", parse_relu, NULL,
	  apply_act, 0 },
	{ "LeakyReLU", " alpha negative_slope ", parse_leaky, NULL, apply_act,
	  0 },
	{ "Softmax", " axis ", parse_softmax, NULL, apply_act, 0 },
	{ "ELU", " alpha ", parse_elu, NULL, apply_act, 0 },
	{ "Flatten", " data_format ", parse_flatten, NULL, apply_flatten, 0 },
	{ "Reshape", " target_shape ", parse_reshape, NULL, apply_reshape, 0 },
	{ "Dropout", " rate noise_shape seed ", parse_dropout, NULL,
	  apply_dropout, 0 },
	{ "SpatialDropout1D", " rate noise_shape seed ", parse_dropout, NULL,
	  apply_dropout, 0 },
	{ "SpatialDropout2D", " rate noise_shape seed data_format ",
	  parse_dropout, NULL, apply_dropout, 0 },
	{ "Conv1D", CONV_KEYS "filters kernel_initializer kernel_regularizer ",
	  parse_conv, build_conv, apply_conv, 0 },
	{ "Conv2D", CONV_KEYS "filters kernel_initializer kernel_regularizer ",
	  parse_conv, build_conv, apply_conv, 0 },
	{ "DepthwiseConv2D", CONV_KEYS "depth_multiplier depthwise_initializer"
	  " depthwise_regularizer ", parse_conv, build_conv, apply_conv, 0 },
	{ "MaxPooling1D", POOL_KEYS, parse_pool, NULL, apply_pool, 0 },
	{ "MaxPooling2D", POOL_KEYS, parse_pool, NULL, apply_pool, 0 },
	{ "AveragePooling1D", POOL_KEYS, parse_pool, NULL, apply_pool, 0 },
	{ "AveragePooling2D", POOL_KEYS, parse_pool, NULL, apply_pool, 0 },
	{ "GlobalAveragePooling1D", " data_format keepdims ", parse_gpool,
	  NULL, apply_gpool, 0 },
	{ "GlobalAveragePooling2D", " data_format keepdims ", parse_gpool,
	  NULL, apply_gpool, 0 },
	{ "GlobalMaxPooling1D", " data_format keepdims ", parse_gpool, NULL,
	  apply_gpool, 0 },
	{ "GlobalMaxPooling2D", " data_format keepdims ", parse_gpool, NULL,
	  apply_gpool, 0 },
	{ "BatchNormalization", " axis momentum epsilon center scale "
	  "beta_initializer gamma_initializer moving_mean_initializer "
	  "moving_variance_initializer beta_regularizer gamma_regularizer "
	  "renorm renorm_clipping renorm_momentum fused virtual_batch_size "
	  "adjustment synchronized ", parse_bn, build_norm, apply_bn, 0 },
	{ "LayerNormalization", " axis epsilon center scale beta_initializer "
	  "gamma_initializer beta_regularizer gamma_regularizer rms_scaling ",
	  parse_ln, build_norm, apply_ln, 0 },
	{ "Embedding", " input_dim output_dim embeddings_initializer "
	  "embeddings_regularizer mask_zero input_length sparse ",
	  parse_embedding, build_embedding, apply_embedding, 0 },
	{ "Add", " ", parse_merge, NULL, apply_merge, KL_MERGE },
	{ "Subtract", " ", parse_merge, NULL, apply_merge, KL_MERGE },
	{ "Multiply", " ", parse_merge, NULL, apply_merge, KL_MERGE },
	{ "Average", " ", parse_merge, NULL, apply_merge, KL_MERGE },
	{ "Maximum", " ", parse_merge, NULL, apply_merge, KL_MERGE },
	{ "Minimum", " ", parse_merge, NULL, apply_merge, KL_MERGE },
	{ "Concatenate", " axis ", parse_merge, NULL, apply_merge, KL_MERGE },
	{ "ZeroPadding2D", " padding data_format ", parse_zpad, NULL,
	  apply_zpad, 0 },
	/* recurrent.c */
	{ "LSTM", RNN_KEYS "recurrent_activation unit_forget_bias "
	  "implementation use_cudnn ", tfk_keras_rnn_parse,
	  tfk_keras_rnn_build, tfk_keras_rnn_apply, 0 },
	{ "GRU", RNN_KEYS "recurrent_activation reset_after implementation "
	  "use_cudnn ", tfk_keras_rnn_parse, tfk_keras_rnn_build,
	  tfk_keras_rnn_apply, 0 },
	{ "SimpleRNN", RNN_KEYS, tfk_keras_rnn_parse, tfk_keras_rnn_build,
	  tfk_keras_rnn_apply, 0 },
	/* their keys are checked by preprocess.c */
	{ "Rescaling", NULL, parse_none, NULL, apply_prep, KL_SHARED },
	{ "Normalization", NULL, parse_none, NULL, apply_prep, KL_SHARED },
	/* auglayers.c */
	{ "RandomFlip", AUG_KEYS "mode ", tfk_keras_aug_parse, NULL,
	  tfk_keras_aug_apply, 0 },
	{ "RandomRotation", AUG_KEYS WARP_KEYS "factor ", tfk_keras_aug_parse,
	  NULL, tfk_keras_aug_apply, 0 },
	{ "RandomZoom", AUG_KEYS WARP_KEYS "height_factor width_factor ",
	  tfk_keras_aug_parse, NULL, tfk_keras_aug_apply, 0 },
	{ "RandomTranslation", AUG_KEYS WARP_KEYS "height_factor "
	  "width_factor ", tfk_keras_aug_parse, NULL, tfk_keras_aug_apply, 0 },
	{ "RandomContrast", AUG_KEYS "factor value_range ",
	  tfk_keras_aug_parse, NULL, tfk_keras_aug_apply, 0 },
	{ "RandomBrightness", AUG_KEYS "factor value_range ",
	  tfk_keras_aug_parse, NULL, tfk_keras_aug_apply, 0 },
	{ "RandomCrop", AUG_KEYS "height width ", tfk_keras_aug_parse, NULL,
	  tfk_keras_aug_apply, 0 },
	{ "Resizing", AUG_KEYS "height width interpolation "
	  "crop_to_aspect_ratio pad_to_aspect_ratio fill_mode fill_value "
	  "antialias ", tfk_keras_aug_parse, NULL, tfk_keras_aug_apply, 0 },
	{ "CenterCrop", AUG_KEYS "height width ", tfk_keras_aug_parse, NULL,
	  tfk_keras_aug_apply, 0 },
	/* preplayers.c (keys checked by preprocess.c) */
	{ "StringLookup", NULL, parse_none, NULL, tfk_keras_prep_apply,
	  KL_SHARED },
	{ "IntegerLookup", NULL, parse_none, NULL, tfk_keras_prep_apply,
	  KL_SHARED },
	{ "TextVectorization", NULL, parse_none, NULL, tfk_keras_prep_apply,
	  KL_SHARED },
	{ "Hashing", NULL, parse_none, NULL, tfk_keras_prep_apply,
	  KL_SHARED },
	{ "Discretization", NULL, parse_none, NULL, tfk_keras_prep_apply,
	  KL_SHARED },
	{ "CategoryEncoding", NULL, parse_none, NULL, tfk_keras_prep_apply,
	  KL_SHARED },
};

const struct klayer_class *tfk_keras_class(const char *cls)
{
	size_t i;

	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (!strcmp(classes[i].cls, cls))
			return &classes[i];
	return NULL;
}

/* Keys every layer may carry that change nothing here. */
static const char *const common_keys = " name trainable dtype "
	"batch_input_shape batch_shape input_shape batch_size autocast ";

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

int tfk_keras_policy(const char *name)
{
	if (!strcmp(name, "mixed_bfloat16"))
		return 1;
	return !strcmp(name, "float32") ? 0 : -1;
}

/*
 * The layer's dtype policy into l->bf16: Keras 3's DTypePolicy object
 * (config.name), tf_keras' Policy object or a plain string. A layer is
 * mixed_bfloat16 when its own policy says so or model.dtype_policy
 * does (Keras writes "float32" on every layer of a float32 model, so
 * that word is "the default", not an opt-out). Plain dtypes (int64 on
 * a lookup layer, float32) mean what they meant before; a "mixed_"
 * policy other than mixed_bfloat16 (mixed_float16) is refused rather
 * than trained in float32 unasked.
 */
static int layer_policy(struct kctx *c, struct klayer *l)
{
	const json_t *d = json_object_get(l->cfg, "dtype");
	const char *nm;

	l->bf16 = c->bf16;
	if (json_is_object(d))
		d = json_object_get(json_object_get(d, "config"), "name");
	if (!json_is_string(d))
		return 0;
	nm = json_string_value(d);
	if (tfk_keras_policy(nm) == 1)
		l->bf16 = 1;
	else if (!strncmp(nm, "mixed_", 6))
		return tfk_errf(c->err, TFK_EINVAL, "%s.config.dtype: unknown "
				"dtype policy '%s' (expected float32 or "
				"mixed_bfloat16)", l->path, nm);
	return 0;
}

int tfk_keras_parse_layer(struct kctx *c, struct klayer *l)
{
	const char *key;
	json_t *v;
	int rc;

	if (l->k->keys) {
		json_object_foreach((json_t *)l->cfg, key, v) {
			if (kword_in(common_keys, key) ||
			    kword_in(l->k->keys, key))
				continue;
			/* constraints and activity regularizers: null only */
			if (ends_with(key, "_constraint") ||
			    !strcmp(key, "activity_regularizer") ||
			    !strcmp(key, "lora_rank") ||
			    !strcmp(key, "quantization_config")) {
				if (json_is_null(v))
					continue;
				return kcfg_bad(c, l, key, "only null is "
						"supported");
			}
			return kcfg_bad(c, l, key, "unknown config key");
		}
	}
	/* Keras 3 writes its dtype policy as an object of class
	 * DTypePolicy (tf_keras a string, or a Policy object) */
	v = json_object_get(json_object_get(l->cfg, "dtype"), "class_name");
	l->keras3 = json_is_string(v) && strstr(json_string_value(v),
						"DTypePolicy");
	if ((rc = layer_policy(c, l)))
		return rc;
	v = json_object_get(l->cfg, "trainable");
	if (v && !json_is_boolean(v))
		return kcfg_bad(c, l, "trainable", "expected true or false");
	l->trainable = !json_is_false(v);
	rc = l->k->parse(c, l);
	return rc;
}
