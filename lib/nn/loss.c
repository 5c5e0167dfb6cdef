/*
 * loss.c - Keras losses as ops (see model.h): tfk_loss_parse reads a
 * compile.loss value, tfk_loss_build adds the loss of one output.
 *
 * Formulas are Keras 2's (keras/losses.py, keras/backend.py):
 *   mean_squared_error   mean(square(y_pred - y_true), axis=-1)
 *   mean_absolute_error  mean(abs(y_pred - y_true), axis=-1)
 *   huber                mean(0.5 q^2 + delta (|e| - q)), q = min(|e|,
 *                        delta) (= Keras' where() form)
 *   binary_crossentropy  logits x: max(x, 0) - x z + log1p(exp(-|x|))
 *                        (tf.nn.sigmoid_cross_entropy_with_logits);
 *                        probabilities: p clipped to [eps, 1 - eps],
 *                        -(z log(p + eps) + (1 - z) log(1 - p + eps))
 *   categorical_crossentropy  logits: SoftmaxCrossEntropyWithLogits;
 *                        probabilities: p / sum(p), clipped,
 *                        -sum(y log p)
 *   sparse_categorical_crossentropy  SparseSoftmaxCrossEntropyWithLogits
 *                        on the logits, or on log(clip(p)) (softmax of
 *                        log p is p normalized: Keras' own trick)
 * with eps = 1e-7 and label smoothing y (1 - ls) + ls / K (binary: K =
 * 2). An output ending in Softmax/Sigmoid takes the logits path, as
 * Keras does. The reduction is SUM_OVER_BATCH_SIZE: the per-example
 * loss (its non-batch axes averaged) times the weight, averaged over
 * the batch.
 */
#include "nn/keras-impl.h"
#include "graph/graph.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct {
	const char *alias, *name;
} names[] = {
	{ "mse", "mean_squared_error" },
	{ "MSE", "mean_squared_error" },
	{ "mean_squared_error", "mean_squared_error" },
	{ "MeanSquaredError", "mean_squared_error" },
	{ "mae", "mean_absolute_error" },
	{ "MAE", "mean_absolute_error" },
	{ "mean_absolute_error", "mean_absolute_error" },
	{ "MeanAbsoluteError", "mean_absolute_error" },
	{ "huber", "huber" },
	{ "huber_loss", "huber" },
	{ "Huber", "huber" },
	{ "binary_crossentropy", "binary_crossentropy" },
	{ "BinaryCrossentropy", "binary_crossentropy" },
	{ "categorical_crossentropy", "categorical_crossentropy" },
	{ "CategoricalCrossentropy", "categorical_crossentropy" },
	{ "sparse_categorical_crossentropy",
	  "sparse_categorical_crossentropy" },
	{ "SparseCategoricalCrossentropy", "sparse_categorical_crossentropy" },
};

static const char *canonical(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].alias))
			return names[i].name;
	return NULL;
}

static int cfg_num(const json_t *cfg, const char *key, const char *path,
		   double lo, double hi, float *v, struct tfk_err *err)
{
	const json_t *j = json_object_get(cfg, key);

	if (!j || json_is_null(j))
		return 0;
	if (!json_is_number(j) || !(json_number_value(j) >= lo) ||
	    !(json_number_value(j) <= hi))
		return tfk_errf(err, TFK_EINVAL, "%s.config.%s: expected a "
				"number in [%g, %g]", path, key, lo, hi);
	*v = (float)json_number_value(j);
	return 0;
}

int tfk_loss_parse(const json_t *v, const char *path,
		   struct tfk_loss_spec *ls, struct tfk_err *err)
{
	const json_t *cfg, *j;
	const char *name, *key;
	int rc, ce;

	memset(ls, 0, sizeof(*ls));
	ls->delta = 1;
	if (json_is_string(v)) {
		name = canonical(json_string_value(v));
		if (!name)
			return tfk_errf(err, TFK_EINVAL, "%s: unknown loss "
					"'%s'", path, json_string_value(v));
		snprintf(ls->name, sizeof(ls->name), "%s", name);
		return 0;
	}
	if (!json_is_object(v))
		return tfk_errf(err, TFK_EINVAL, "%s: expected a loss name or "
				"{\"class_name\": ..., \"config\": {...}}",
				path);
	json_object_foreach((json_t *)v, key, j)
		if (strcmp(key, "class_name") && strcmp(key, "config") &&
		    strcmp(key, "module") && strcmp(key, "registered_name"))
			return tfk_errf(err, TFK_EINVAL, "%s.%s: unknown key",
					path, key);
	j = json_object_get(v, "class_name");
	if (!json_is_string(j))
		return tfk_errf(err, TFK_EINVAL, "%s.class_name: expected a "
				"string", path);
	name = canonical(json_string_value(j));
	if (!name)
		return tfk_errf(err, TFK_EINVAL, "%s.class_name: unknown loss "
				"'%s'", path, json_string_value(j));
	snprintf(ls->name, sizeof(ls->name), "%s", name);
	cfg = json_object_get(v, "config");
	if (!cfg || json_is_null(cfg))
		return 0;
	if (!json_is_object(cfg))
		return tfk_errf(err, TFK_EINVAL, "%s.config: expected an "
				"object", path);
	ce = strstr(name, "crossentropy") != NULL;
	json_object_foreach((json_t *)cfg, key, j) {
		if (!strcmp(key, "name") || !strcmp(key, "dtype"))
			continue;
		if (!strcmp(key, "reduction")) {
			const char *s = json_is_string(j) ?
				json_string_value(j) : "";

			if (json_is_null(j) || !strcmp(s, "auto") ||
			    !strcmp(s, "sum_over_batch_size"))
				continue;
			return tfk_errf(err, TFK_EINVAL, "%s.config.reduction:"
					" only \"sum_over_batch_size\" (or "
					"\"auto\") is supported", path);
		}
		if (ce && !strcmp(key, "from_logits")) {
			if (!json_is_boolean(j))
				return tfk_errf(err, TFK_EINVAL, "%s.config."
						"from_logits: expected true or"
						" false", path);
			ls->from_logits = json_is_true(j);
			continue;
		}
		if (ce && !strcmp(key, "axis")) {
			if (!json_is_integer(j) || json_integer_value(j) != -1)
				return tfk_errf(err, TFK_EINVAL, "%s.config."
						"axis: only -1 is supported",
						path);
			continue;
		}
		if (!strcmp(name, "sparse_categorical_crossentropy") &&
		    !strcmp(key, "ignore_class")) {
			if (!json_is_null(j))
				return tfk_errf(err, TFK_EINVAL, "%s.config."
						"ignore_class: only null is "
						"supported", path);
			continue;
		}
		if (ce && strcmp(name, "sparse_categorical_crossentropy") &&
		    !strcmp(key, "label_smoothing")) {
			if ((rc = cfg_num(cfg, key, path, 0, 1,
					  &ls->label_smoothing, err)))
				return rc;
			continue;
		}
		if (!strcmp(name, "huber") && !strcmp(key, "delta")) {
			if ((rc = cfg_num(cfg, key, path, 1e-30, 1e30,
					  &ls->delta, err)))
				return rc;
			continue;
		}
		return tfk_errf(err, TFK_EINVAL, "%s.config.%s: unknown key",
				path, key);
	}
	return 0;
}

/* "a, b": the output names, for messages. */
static void out_names(const struct tfk_model *m, char *buf, size_t n)
{
	size_t at = 0;

	buf[0] = 0;
	for (int i = 0; i < m->n_outputs && at < n; i++)
		at += (size_t)snprintf(buf + at, n - at, "%s%s", i ? ", " : "",
				       m->outputs[i].name);
}

/* The output named key, or -1. */
static int out_index(const struct tfk_model *m, const char *key)
{
	for (int i = 0; i < m->n_outputs; i++)
		if (!strcmp(m->outputs[i].name, key))
			return i;
	return -1;
}

/* Every output's key is in obj, and no other (Keras 3: "Expected keys
 * [...] in loss dict"). */
static int check_out_keys(const json_t *obj, const char *path,
			  const struct tfk_model *m, struct tfk_err *err)
{
	char names[300];
	const char *key;
	json_t *v;
	int i;

	out_names(m, names, sizeof(names));
	json_object_foreach((json_t *)obj, key, v)
		if (out_index(m, key) < 0)
			return tfk_errf(err, TFK_EINVAL, "%s: expected keys %s "
					"(the outputs), got '%s'", path, names,
					key);
	for (i = 0; i < m->n_outputs; i++)
		if (!json_object_get(obj, m->outputs[i].name))
			return tfk_errf(err, TFK_EINVAL, "%s: expected keys %s "
					"(the outputs), '%s' is missing", path,
					names, m->outputs[i].name);
	return 0;
}

int tfk_loss_parse_outputs(const json_t *loss, const char *path,
			   const json_t *loss_weights, const char *wpath,
			   const struct tfk_model *m,
			   struct tfk_loss_spec *ls, float *w,
			   struct tfk_err *err)
{
	int n = m->n_outputs, i, rc;
	char p[600];

	if (json_is_array(loss) ||
	    (json_is_object(loss) && !json_object_get(loss, "class_name"))) {
		if (json_is_array(loss) && json_array_size(loss) != (size_t)n)
			return tfk_errf(err, TFK_EINVAL, "%s: %zu losses, the "
					"model has %d output%s", path,
					json_array_size(loss), n,
					n == 1 ? "" : "s");
		if (json_is_object(loss) &&
		    (rc = check_out_keys(loss, path, m, err)))
			return rc;
		for (i = 0; i < n; i++) {
			const json_t *v;

			if (json_is_array(loss)) {
				v = json_array_get(loss, (size_t)i);
				snprintf(p, sizeof(p), "%s[%d]", path, i);
			} else {
				v = json_object_get(loss, m->outputs[i].name);
				snprintf(p, sizeof(p), "%s.%s", path,
					 m->outputs[i].name);
			}
			if (json_is_null(v))
				return tfk_errf(err, TFK_EINVAL, "%s: an output "
						"without a loss is not "
						"supported", p);
			if ((rc = tfk_loss_parse(v, p, &ls[i], err)))
				return rc;
		}
	} else {
		if ((rc = tfk_loss_parse(loss, path, &ls[0], err)))
			return rc;
		for (i = 1; i < n; i++)
			ls[i] = ls[0];
	}
	for (i = 0; i < n; i++)
		w[i] = 1;
	if (!loss_weights || json_is_null(loss_weights))
		return 0;
	if (json_is_number(loss_weights) && n == 1) {
		w[0] = (float)json_number_value(loss_weights);
		if (!isfinite(json_number_value(loss_weights)))
			return tfk_errf(err, TFK_EINVAL, "%s: expected a "
					"finite number", wpath);
		return 0;
	}
	if (json_is_array(loss_weights)) {
		if (json_array_size(loss_weights) != (size_t)n)
			return tfk_errf(err, TFK_EINVAL, "%s: %zu weights, the "
					"model has %d output%s", wpath,
					json_array_size(loss_weights), n,
					n == 1 ? "" : "s");
	} else if (json_is_object(loss_weights)) {
		if ((rc = check_out_keys(loss_weights, wpath, m, err)))
			return rc;
	} else {
		return tfk_errf(err, TFK_EINVAL, "%s: expected a list of %d "
				"numbers or an object keyed by output name",
				wpath, n);
	}
	for (i = 0; i < n; i++) {
		const json_t *v;

		if (json_is_array(loss_weights)) {
			v = json_array_get(loss_weights, (size_t)i);
			snprintf(p, sizeof(p), "%s[%d]", wpath, i);
		} else {
			v = json_object_get(loss_weights, m->outputs[i].name);
			snprintf(p, sizeof(p), "%s.%s", wpath,
				 m->outputs[i].name);
		}
		if (!json_is_number(v) || !isfinite(json_number_value(v)))
			return tfk_errf(err, TFK_EINVAL, "%s: expected a "
					"finite number", p);
		w[i] = (float)json_number_value(v);
	}
	return 0;
}

/* Building ------------------------------------------------------------------ */

static int kmulc(struct kctx *c, struct tfk_port x, float v,
		 struct tfk_port *out)
{
	struct tfk_port k;
	int rc = kconst_f(c, v, &k);

	return rc ? rc : kop2(c, "Mul", x, k, out);
}

static int kaddc(struct kctx *c, struct tfk_port x, float v,
		 struct tfk_port *out)
{
	struct tfk_port k;
	int rc = kconst_f(c, v, &k);

	return rc ? rc : kop2(c, "AddV2", x, k, out);
}

static int kreduce_last(struct kctx *c, const char *op, struct tfk_port x,
			int keep, struct tfk_port *out)
{
	struct tfk_attr a = TFK_A_BOOL("keep_dims", keep);
	int32_t ax = -1;
	struct tfk_port in[2] = { x };
	int rc = kconst_iv(c, &ax, 1, &in[1]);

	return rc ? rc : kop(c, op, in, 2, &a, 1, out);
}

/* clip to [eps, 1 - eps] */
static int kclip(struct kctx *c, struct tfk_port p, struct tfk_port *out)
{
	struct tfk_port lo, hi;
	int rc;

	if ((rc = kconst_f(c, KERAS_EPS, &lo)) ||
	    (rc = kconst_f(c, 1 - KERAS_EPS, &hi)) ||
	    (rc = kop2(c, "Maximum", p, lo, out)))
		return rc;
	return kop2(c, "Minimum", *out, hi, out);
}

/* y (1 - ls) + ls / k */
static int ksmooth(struct kctx *c, struct tfk_port y, float ls, float k,
		   struct tfk_port *out)
{
	int rc;

	*out = y;
	if (ls == 0)
		return 0;
	rc = kmulc(c, y, 1 - ls, out);
	return rc ? rc : kaddc(c, *out, ls / k, out);
}

/* y_true as float32 of y_pred's rank (Keras casts and expands). */
static int dense_labels(struct kctx *c, struct tfk_port p, struct tfk_port y,
			struct tfk_port *out)
{
	const struct tfk_tdesc *dp = kdesc(c, p), *dy = kdesc(c, y);
	struct tfk_attr a = TFK_A_TYPE("DstT", TFK_DT_FLOAT);
	struct tfk_port in[2];
	int32_t ax = -1;
	int rc;

	*out = y;
	if (dy->dtype != TFK_DT_FLOAT &&
	    (rc = kop(c, "Cast", out, 1, &a, 1, out)))
		return rc;
	if (dy->rank == dp->rank - 1 && dp->shape[dp->rank - 1] == 1) {
		struct tfk_tensor t;

		/* ExpandDims's dim is a scalar */
		in[0] = *out;
		rc = tfk_tensor_init_view(&t, TFK_DT_INT32, 0, NULL, &ax,
					  sizeof(ax), TFK_OWN_BORROWED, c->err);
		if (!rc)
			rc = tfk_graph_const(c->g, c->scope, &t, &in[1],
					     c->err);
		if (rc || (rc = kop(c, "ExpandDims", in, 2, NULL, 0, out)))
			return rc;
	} else if (dy->rank != dp->rank) {
		char b1[96], b2[96];

		return tfk_errf(c->err, TFK_EINVAL, "labels %s do not match "
				"the output %s",
				tfk_shape_str(dy->rank, dy->shape, b1,
					      sizeof(b1)),
				tfk_shape_str(dp->rank, dp->shape, b2,
					      sizeof(b2)));
	}
	return 0;
}

static int per_example(struct kctx *c, const struct tfk_model_output *o,
		       const struct tfk_loss_spec *ls, int train,
		       struct tfk_port y, struct tfk_port *out)
{
	struct tfk_port p = train ? o->train : o->infer, t, u, x;
	struct tfk_port logits = train ? o->train_logits : o->infer_logits;
	const char *nm = ls->name;
	const struct tfk_tdesc *dp = kdesc(c, p);
	int rc;

	if (dp->dtype != TFK_DT_FLOAT || dp->rank < 1)
		return tfk_errf(c->err, TFK_EINVAL, "output %s: expected "
				"float32 with a batch dimension", o->name);
	if (!strcmp(nm, "sparse_categorical_crossentropy")) {
		const struct tfk_tdesc *dy = kdesc(c, y);
		struct tfk_attr a = TFK_A_TYPE("DstT", TFK_DT_INT64);
		int64_t flat = -1;

		if (dp->rank != 2)
			return tfk_errf(c->err, TFK_EINVAL, "output %s: sparse "
					"crossentropy needs an output [batch, "
					"classes]", o->name);
		if (dy->rank == 2 && dy->shape[1] == 1) {
			int32_t f = (int32_t)flat;

			if ((rc = kconst_iv(c, &f, 1, &t)) ||
			    (rc = kop2(c, "Reshape", y, t, &y)))
				return rc;
		} else if (dy->rank != 1) {
			return tfk_errf(c->err, TFK_EINVAL, "labels: expected "
					"class ids [batch] or [batch, 1]");
		}
		if (dy->dtype != TFK_DT_INT32 && dy->dtype != TFK_DT_INT64 &&
		    (rc = kop(c, "Cast", &y, 1, &a, 1, &y)))
			return rc;
		if (ls->from_logits) {
			x = p;
		} else if (o->act && !strcmp(o->act, "softmax")) {
			x = logits;
		} else {
			if ((rc = kclip(c, p, &x)) ||
			    (rc = kop1(c, "Log", x, &x)))
				return rc;
		}
		return kop2(c, "SparseSoftmaxCrossEntropyWithLogits", x, y,
			    out);
	}
	if ((rc = dense_labels(c, p, y, &y)))
		return rc;
	if (!strcmp(nm, "mean_squared_error")) {
		if ((rc = kop2(c, "SquaredDifference", p, y, &t)))
			return rc;
		return kreduce_last(c, "Mean", t, 0, out);
	}
	if (!strcmp(nm, "mean_absolute_error")) {
		if ((rc = kop2(c, "Sub", p, y, &t)) ||
		    (rc = kop1(c, "Abs", t, &t)))
			return rc;
		return kreduce_last(c, "Mean", t, 0, out);
	}
	if (!strcmp(nm, "huber")) {
		struct tfk_port a, q, d;

		if ((rc = kop2(c, "Sub", p, y, &t)) ||
		    (rc = kop1(c, "Abs", t, &a)) ||
		    (rc = kconst_f(c, ls->delta, &d)) ||
		    (rc = kop2(c, "Minimum", a, d, &q)) ||
		    (rc = kop2(c, "Sub", a, q, &u)) ||
		    (rc = kmulc(c, u, ls->delta, &u)) ||
		    (rc = kop2(c, "Mul", q, q, &t)) ||
		    (rc = kmulc(c, t, 0.5f, &t)) ||
		    (rc = kop2(c, "AddV2", t, u, &t)))
			return rc;
		return kreduce_last(c, "Mean", t, 0, out);
	}
	if (!strcmp(nm, "binary_crossentropy")) {
		if ((rc = ksmooth(c, y, ls->label_smoothing, 2, &y)))
			return rc;
		if (ls->from_logits || (o->act && !strcmp(o->act, "sigmoid"))) {
			x = ls->from_logits ? p : logits;
			/* max(x, 0) - x z + log1p(exp(-|x|)) */
			if ((rc = kop1(c, "Relu", x, &t)) ||
			    (rc = kop2(c, "Mul", x, y, &u)) ||
			    (rc = kop2(c, "Sub", t, u, &t)) ||
			    (rc = kop1(c, "Abs", x, &u)) ||
			    (rc = kop1(c, "Neg", u, &u)) ||
			    (rc = kop1(c, "Exp", u, &u)) ||
			    (rc = kop1(c, "Log1p", u, &u)) ||
			    (rc = kop2(c, "AddV2", t, u, &t)))
				return rc;
		} else {
			struct tfk_port one, l1, l0;

			/* -(z log(p + eps) + (1 - z) log(1 - p + eps)) */
			if ((rc = kclip(c, p, &x)) ||
			    (rc = kaddc(c, x, KERAS_EPS, &t)) ||
			    (rc = kop1(c, "Log", t, &t)) ||
			    (rc = kop2(c, "Mul", y, t, &l1)) ||
			    (rc = kconst_f(c, 1 + KERAS_EPS, &one)) ||
			    (rc = kop2(c, "Sub", one, x, &t)) ||
			    (rc = kop1(c, "Log", t, &t)) ||
			    (rc = kconst_f(c, 1, &one)) ||
			    (rc = kop2(c, "Sub", one, y, &u)) ||
			    (rc = kop2(c, "Mul", u, t, &l0)) ||
			    (rc = kop2(c, "AddV2", l1, l0, &t)) ||
			    (rc = kop1(c, "Neg", t, &t)))
				return rc;
		}
		return kreduce_last(c, "Mean", t, 0, out);
	}
	/* categorical_crossentropy */
	if (dp->rank != 2 || dp->shape[1] < 1)
		return tfk_errf(c->err, TFK_EINVAL, "output %s: categorical "
				"crossentropy needs an output [batch, classes]",
				o->name);
	if ((rc = ksmooth(c, y, ls->label_smoothing, (float)dp->shape[1],
			  &y)))
		return rc;
	if (ls->from_logits || (o->act && !strcmp(o->act, "softmax"))) {
		struct tfk_port in[2] = { ls->from_logits ? p : logits, y };

		return kop(c, "SoftmaxCrossEntropyWithLogits", in, 2, NULL, 0,
			   out);
	}
	if ((rc = kreduce_last(c, "Sum", p, 1, &t)) ||
	    (rc = kop2(c, "RealDiv", p, t, &t)) ||
	    (rc = kclip(c, t, &t)) || (rc = kop1(c, "Log", t, &t)) ||
	    (rc = kop2(c, "Mul", y, t, &t)) ||
	    (rc = kreduce_last(c, "Sum", t, 0, &t)))
		return rc;
	return kop1(c, "Neg", t, out);
}

int tfk_loss_build(struct tfk_model *m, int output,
		   const struct tfk_loss_spec *ls, int train,
		   struct tfk_port y_true, struct tfk_port weight,
		   struct tfk_port *loss, struct tfk_err *err)
{
	struct kctx c;
	struct tfk_port l;
	const struct tfk_tdesc *d;
	int32_t axes[TFK_MAX_RANK];
	int i, rc;

	if (output < 0 || output >= m->n_outputs)
		return tfk_errf(err, TFK_EINVAL, "loss: no output %d", output);
	memset(&c, 0, sizeof(c));
	c.m = m;
	c.g = m->g;
	c.err = err;
	c.train = train;
	/* one output: "loss/"; several: "loss/<output>/" each */
	if (m->n_outputs > 1)
		snprintf(c.scope, sizeof(c.scope), "%sloss/%.100s/",
			 train ? "train/" : "", m->outputs[output].name);
	else
		snprintf(c.scope, sizeof(c.scope), "%sloss/",
			 train ? "train/" : "");
	rc = per_example(&c, &m->outputs[output], ls, train, y_true, &l);
	if (rc)
		goto fail;
	/* average the non-batch axes, weight, average over the batch */
	d = kdesc(&c, l);
	if (d->rank < 1) {
		rc = tfk_errf(err, TFK_EINVAL, "per-example loss without a "
			      "batch dimension");
		goto fail;
	}
	if (d->rank > 1) {
		struct tfk_attr a = TFK_A_BOOL("keep_dims", 0);
		struct tfk_port in[2] = { l };

		for (i = 1; i < d->rank; i++)
			axes[i - 1] = i;
		if ((rc = kconst_iv(&c, axes, d->rank - 1, &in[1])) ||
		    (rc = kop(&c, "Mean", in, 2, &a, 1, &l)))
			goto fail;
	}
	if (weight.node >= 0 && (rc = kop2(&c, "Mul", l, weight, &l)))
		goto fail;
	{
		struct tfk_attr a = TFK_A_BOOL("keep_dims", 0);
		struct tfk_port in[2] = { l };

		axes[0] = 0;
		if ((rc = kconst_iv(&c, axes, 1, &in[1])) ||
		    (rc = kop(&c, "Mean", in, 2, &a, 1, loss)))
			goto fail;
	}
	return 0;
fail:
	return rc == TFK_ENOMEM ? rc : tfk_err_prefix(err, "loss %s",
						      ls->name);
}
