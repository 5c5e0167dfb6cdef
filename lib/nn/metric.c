/*
 * metric.c - Keras metrics (keras/metrics, keras/utils/metrics_utils.py
 * of TF 2.11+), accumulated over batches in float32 state as Keras does.
 *
 * Mean metrics (the accuracies, mae, mse) reduce each example's last axis
 * to one value as the Keras function does (binary_accuracy and mae/mse
 * average over it; the categorical accuracies compare argmaxes, the first
 * index among equal maxima as tf.argmax), then keep total += sum(value *
 * weight) and count += sum(weight), result total / count (0 when count
 * is 0: div_no_nan). A batch is summed in double and added to the
 * float32 state once, as Keras adds one reduce_sum per batch.
 *
 * Precision and recall keep true/false positives and false negatives at
 * one threshold (0.5, or -1e10 when top_k is set: Keras' NEG_INF), after
 * Keras' top-k filter (values outside each row's k largest become -1e10,
 * ties going to the lower index as tf.math.top_k) and class_id slice.
 *
 * AUC uses Keras' thresholds, [0 - 1e-7, 1/(T-1), ..., (T-2)/(T-1),
 * 1 + 1e-7], and its bucketing path for evenly spaced thresholds
 * (_update_confusion_matrix_variables_optimized): a prediction, clipped
 * to [0, 1], counts for every threshold below bucket
 * max(ceil(p (T-1)) - 1, 0), computed in float32; the result is the
 * ROC or PR curve summed by interpolation (PR: Davis & Goadrich's
 * interpolate_pr_auc), minoring or majoring, as AUC.result().
 *
 * "accuracy"/"acc" is resolved as Keras' compile_utils does, from the
 * shapes: binary_accuracy when y_pred's last dimension is 1, else
 * sparse_categorical_accuracy when y_true has a lower rank (or a last
 * dimension 1), else categorical_accuracy. The output's last dimension
 * and a sparse/categorical crossentropy loss settle it at creation;
 * otherwise the first update does.
 */
#include "nn/metric.h"

#include "nn/json-impl.h"
#include "util/alloc.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NEG_INF (-1e10f)	/* metrics_utils.NEG_INF */
#define KERAS_EPSILON 1e-7	/* backend.epsilon() */

enum mkind {
	M_ACC_AUTO, M_SPARSE_CAT, M_CAT, M_BINARY, M_PRECISION, M_RECALL,
	M_AUC, M_MAE, M_MSE
};

enum curve { C_ROC, C_PR };
enum summ { S_INTERP, S_MINOR, S_MAJOR };

struct tfk_metric {
	enum mkind kind;
	char *name;
	double threshold;
	int top_k;		/* 0: none */
	int class_id;		/* -1: none */
	/* mean state */
	float total, count;
	/* precision / recall */
	float tp1, fp1, fn1;
	/* AUC */
	int nt;
	enum curve curve;
	enum summ summ;
	int from_logits;
	float *tp, *fp, *tn, *fn;
	double *btp, *bfp;	/* per-batch bucket sums, nt each */
	float *row;		/* top-k scratch */
	int64_t row_cap;
};

/* Classes: CamelCase class name, Keras' default name, kind. */
static const struct {
	const char *cls, *dflt;
	enum mkind kind;
} classes[] = {
	{ "SparseCategoricalAccuracy", "sparse_categorical_accuracy",
	  M_SPARSE_CAT },
	{ "CategoricalAccuracy", "categorical_accuracy", M_CAT },
	{ "BinaryAccuracy", "binary_accuracy", M_BINARY },
	{ "Precision", "precision", M_PRECISION },
	{ "Recall", "recall", M_RECALL },
	{ "AUC", "auc", M_AUC },
	{ "MeanAbsoluteError", "mean_absolute_error", M_MAE },
	{ "MeanSquaredError", "mean_squared_error", M_MSE },
};
#define N_CLASSES ((int)(sizeof(classes) / sizeof(classes[0])))

/* Function names (history key = the name given). */
static const struct {
	const char *name;
	enum mkind kind;
} functions[] = {
	{ "accuracy", M_ACC_AUTO }, { "acc", M_ACC_AUTO },
	{ "sparse_categorical_accuracy", M_SPARSE_CAT },
	{ "categorical_accuracy", M_CAT },
	{ "binary_accuracy", M_BINARY },
	{ "mae", M_MAE }, { "mean_absolute_error", M_MAE },
	{ "mse", M_MSE }, { "mean_squared_error", M_MSE },
};
#define N_FUNCTIONS ((int)(sizeof(functions) / sizeof(functions[0])))

/* Keras 3 also takes the class names in snake case ("precision",
 * "auc"); those give the class with its default name. */

static int set_name(struct tfk_metric *m, const char *s, const char *path,
		    struct tfk_err *err)
{
	tfk_free(m->name);
	if (!(m->name = tfk_strdup(s)))
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", path);
	return 0;
}

/* cfg.key: null (stays *out) or an integer >= lo. */
static int int_key(const json_t *cfg, const char *key, const char *path,
		   long lo, long *out, struct tfk_err *err)
{
	const json_t *v = json_object_get(cfg, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < lo ||
	    json_integer_value(v) > 1000000000)
		return tfk_errf(err, TFK_EINVAL, "%s.%s: expected an integer "
				">= %ld or null", path, key, lo);
	*out = (long)json_integer_value(v);
	return 0;
}

static int parse_config(struct tfk_metric *m, const char *cls,
			const json_t *cfg, const char *cp,
			struct tfk_err *err)
{
	static const char *const k_mean[] = { "name", "dtype", NULL };
	static const char *const k_bin[] = {
		"name", "dtype", "threshold", NULL
	};
	static const char *const k_pr[] = {
		"name", "dtype", "thresholds", "top_k", "class_id", NULL
	};
	static const char *const k_auc[] = {
		"name", "dtype", "num_thresholds", "curve",
		"summation_method", "thresholds", "multi_label", "num_labels",
		"label_weights", "from_logits", NULL
	};
	const char *const *keys = k_mean;
	const json_t *v;
	long l;
	int rc;

	if (m->kind == M_BINARY)
		keys = k_bin;
	else if (m->kind == M_PRECISION || m->kind == M_RECALL)
		keys = k_pr;
	else if (m->kind == M_AUC)
		keys = k_auc;
	if ((rc = kjson_known_keys(cfg, keys, cp, cls, err)))
		return rc;
	v = json_object_get(cfg, "name");
	if (v && !json_is_null(v)) {
		if (!json_is_string(v))
			return tfk_errf(err, TFK_EINVAL, "%s.name: expected a "
					"string", cp);
		if ((rc = set_name(m, json_string_value(v), cp, err)))
			return rc;
	}
	v = json_object_get(cfg, "dtype");
	if (v && !json_is_null(v) && !(json_is_string(v) &&
				       !strcmp(json_string_value(v),
					       "float32")))
		return tfk_errf(err, TFK_EINVAL, "%s.dtype: only float32 is "
				"supported", cp);
	if (m->kind == M_BINARY) {
		v = json_object_get(cfg, "threshold");
		if (v && !(json_is_number(v) &&
			   isfinite(json_number_value(v))))
			return tfk_errf(err, TFK_EINVAL, "%s.threshold: "
					"expected a number", cp);
		if (v)
			m->threshold = json_number_value(v);
	}
	if (m->kind == M_PRECISION || m->kind == M_RECALL) {
		l = 0;
		if ((rc = int_key(cfg, "top_k", cp, 1, &l, err)))
			return rc;
		m->top_k = (int)l;
		l = -1;
		if ((rc = int_key(cfg, "class_id", cp, 0, &l, err)))
			return rc;
		m->class_id = (int)l;
		m->threshold = m->top_k ? NEG_INF : 0.5;
		v = json_object_get(cfg, "thresholds");
		if (v && json_is_array(v) && json_array_size(v) == 1)
			v = json_array_get(v, 0);
		if (v && !json_is_null(v)) {
			double t = json_is_number(v) ? json_number_value(v) :
				-1;

			if (!(t >= 0 && t <= 1))
				return tfk_errf(err, TFK_EINVAL, "%s.thresholds:"
						" expected one number in [0, 1]"
						" (several thresholds are not "
						"supported)", cp);
			m->threshold = t;
		}
	}
	if (m->kind == M_AUC) {
		l = 200;
		if ((rc = int_key(cfg, "num_thresholds", cp, 2, &l, err)))
			return rc;
		if (l > 1000000)
			return tfk_errf(err, TFK_EINVAL, "%s.num_thresholds: at "
					"most 1000000", cp);
		m->nt = (int)l;
		v = json_object_get(cfg, "curve");
		if (v) {
			const char *s = json_is_string(v) ?
				json_string_value(v) : "";

			if (!strcasecmp(s, "ROC"))
				m->curve = C_ROC;
			else if (!strcasecmp(s, "PR"))
				m->curve = C_PR;
			else
				return tfk_errf(err, TFK_EINVAL, "%s.curve: "
						"expected \"ROC\" or \"PR\"",
						cp);
		}
		v = json_object_get(cfg, "summation_method");
		if (v) {
			const char *s = json_is_string(v) ?
				json_string_value(v) : "";

			if (!strcasecmp(s, "interpolation"))
				m->summ = S_INTERP;
			else if (!strcasecmp(s, "minoring"))
				m->summ = S_MINOR;
			else if (!strcasecmp(s, "majoring"))
				m->summ = S_MAJOR;
			else
				return tfk_errf(err, TFK_EINVAL, "%s."
						"summation_method: expected "
						"\"interpolation\", "
						"\"minoring\" or \"majoring\"",
						cp);
		}
		{
			static const char *const nulls[] = {
				"thresholds", "num_labels", "label_weights"
			};
			int i;

			for (i = 0; i < 3; i++) {
				v = json_object_get(cfg, nulls[i]);
				if (v && !json_is_null(v))
					return tfk_errf(err, TFK_EINVAL,
							"%s.%s: only null is "
							"supported", cp,
							nulls[i]);
			}
		}
		v = json_object_get(cfg, "multi_label");
		if (v && !json_is_false(v))
			return tfk_errf(err, TFK_EINVAL, "%s.multi_label: only "
					"false is supported", cp);
		v = json_object_get(cfg, "from_logits");
		if (v && !json_is_boolean(v))
			return tfk_errf(err, TFK_EINVAL, "%s.from_logits: "
					"expected true or false", cp);
		m->from_logits = v && json_is_true(v);
	}
	return 0;
}

static int alloc_auc(struct tfk_metric *m, const char *path,
		     struct tfk_err *err)
{
	size_t n = (size_t)m->nt;

	m->tp = tfk_calloc(n, sizeof(float));
	m->fp = tfk_calloc(n, sizeof(float));
	m->tn = tfk_calloc(n, sizeof(float));
	m->fn = tfk_calloc(n, sizeof(float));
	m->btp = tfk_calloc(n, sizeof(double));
	m->bfp = tfk_calloc(n, sizeof(double));
	if (!m->tp || !m->fp || !m->tn || !m->fn || !m->btp || !m->bfp)
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", path);
	return 0;
}

static void snake(const char *s, char *out, size_t n)
{
	size_t k = 0;

	for (; *s && k + 2 < n; s++) {
		if (isupper((unsigned char)*s) && k &&
		    !isupper((unsigned char)s[-1]))
			out[k++] = '_';
		out[k++] = (char)tolower((unsigned char)*s);
	}
	out[k] = 0;
}

int tfk_metric_new(const json_t *v, const char *path, const char *loss,
		   int64_t out_last, struct tfk_metric **out,
		   struct tfk_err *err)
{
	struct tfk_metric *m;
	const char *given = NULL, *cls = NULL;
	const json_t *cfg = NULL;
	int i, rc = 0, kind = -1, ci = -1;

	*out = NULL;
	if (json_is_string(v)) {
		char sn[64];

		given = json_string_value(v);
		for (i = 0; i < N_FUNCTIONS && kind < 0; i++)
			if (!strcmp(given, functions[i].name))
				kind = functions[i].kind;
		snake(given, sn, sizeof(sn));
		for (i = 0; i < N_CLASSES && kind < 0; i++)
			if (!strcmp(given, classes[i].cls) ||
			    !strcmp(sn, classes[i].dflt) ||
			    (classes[i].kind == M_AUC &&
			     !strcasecmp(given, "auc"))) {
				kind = classes[i].kind;
				ci = i;
			}
		if (kind < 0)
			return tfk_errf(err, TFK_EINVAL, "%s: unknown metric "
					"\"%s\" (expected accuracy, "
					"sparse_categorical_accuracy, "
					"categorical_accuracy, "
					"binary_accuracy, precision, recall, "
					"auc, mae or mse)", path, given);
	} else if (json_is_object(v)) {
		static const char *const keys[] = {
			"class_name", "config", "module", "registered_name",
			NULL
		};
		const json_t *c;

		if ((rc = kjson_known_keys(v, keys, path, "object", err)))
			return rc;
		c = json_object_get(v, "class_name");
		if (!json_is_string(c))
			return tfk_errf(err, TFK_EINVAL, "%s.class_name: "
					"expected a string", path);
		cls = json_string_value(c);
		for (i = 0; i < N_CLASSES; i++)
			if (!strcmp(cls, classes[i].cls))
				break;
		if (i == N_CLASSES)
			return tfk_errf(err, TFK_EINVAL, "%s.class_name: "
					"unknown metric class \"%s\"", path,
					cls);
		kind = classes[i].kind;
		ci = i;
		cfg = json_object_get(v, "config");
		if (cfg && !json_is_object(cfg) && !json_is_null(cfg))
			return tfk_errf(err, TFK_EINVAL, "%s.config: expected "
					"an object", path);
		if (cfg && !json_is_object(cfg))
			cfg = NULL;
	} else {
		return tfk_errf(err, TFK_EINVAL, "%s: expected a metric name "
				"or {\"class_name\", \"config\"}", path);
	}
	m = tfk_calloc(1, sizeof(*m));
	if (!m)
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", path);
	m->kind = (enum mkind)kind;
	m->threshold = 0.5;
	m->class_id = -1;
	m->nt = 200;
	/* a function name is its own history key; a class gets its
	 * default name unless the config names it */
	rc = set_name(m, ci >= 0 ? classes[ci].dflt : given, path, err);
	if (!rc && cfg) {
		char cp[512];

		snprintf(cp, sizeof(cp), "%.480s.config", path);
		rc = parse_config(m, cls, cfg, cp, err);
	}
	if (!rc && m->kind == M_AUC)
		rc = alloc_auc(m, path, err);
	if (rc) {
		tfk_metric_free(m);
		return rc;
	}
	if (m->kind == M_ACC_AUTO) {
		/* what the shapes will say, when already known */
		if (out_last == 1)
			m->kind = M_BINARY;
		else if (loss && !strcmp(loss,
					 "sparse_categorical_crossentropy"))
			m->kind = M_SPARSE_CAT;
		else if (loss && !strcmp(loss, "categorical_crossentropy"))
			m->kind = M_CAT;
	}
	*out = m;
	return 0;
}

void tfk_metric_free(struct tfk_metric *m)
{
	if (!m)
		return;
	tfk_free(m->name);
	tfk_free(m->tp);
	tfk_free(m->fp);
	tfk_free(m->tn);
	tfk_free(m->fn);
	tfk_free(m->btp);
	tfk_free(m->bfp);
	tfk_free(m->row);
	tfk_free(m);
}

const char *tfk_metric_name(const struct tfk_metric *m)
{
	return m->name;
}

void tfk_metric_reset(struct tfk_metric *m)
{
	m->total = m->count = 0;
	m->tp1 = m->fp1 = m->fn1 = 0;
	if (m->tp) {
		size_t n = (size_t)m->nt * sizeof(float);

		memset(m->tp, 0, n);
		memset(m->fp, 0, n);
		memset(m->tn, 0, n);
		memset(m->fn, 0, n);
	}
}

/* Keras' metric variables are all sums (aggregation SUM across
 * replicas): total, count, the confusion counts, AUC's four arrays. */
size_t tfk_metric_state_len(const struct tfk_metric *m)
{
	return 5 + (m->tp ? 4 * (size_t)m->nt : 0);
}

void tfk_metric_state(const struct tfk_metric *m, double *s)
{
	const float *a[4] = { m->tp, m->fp, m->tn, m->fn };

	s[0] = m->total, s[1] = m->count;
	s[2] = m->tp1, s[3] = m->fp1, s[4] = m->fn1;
	for (int k = 0; m->tp && k < 4; k++)
		for (int i = 0; i < m->nt; i++)
			s[5 + k * m->nt + i] = a[k][i];
}

void tfk_metric_set_state(struct tfk_metric *m, const double *s)
{
	float *a[4] = { m->tp, m->fp, m->tn, m->fn };

	m->total = (float)s[0], m->count = (float)s[1];
	m->tp1 = (float)s[2], m->fp1 = (float)s[3], m->fn1 = (float)s[4];
	for (int k = 0; m->tp && k < 4; k++)
		for (int i = 0; i < m->nt; i++)
			a[k][i] = (float)s[5 + k * m->nt + i];
}

/* Updating -------------------------------------------------------------- */

/* Element i of a numeric tensor as a double. */
static double num_at(const struct tfk_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case TFK_DT_FLOAT: return ((const float *)t->data)[i];
	case TFK_DT_DOUBLE: return ((const double *)t->data)[i];
	case TFK_DT_INT32: return ((const int32_t *)t->data)[i];
	case TFK_DT_INT64: return (double)((const int64_t *)t->data)[i];
	case TFK_DT_UINT8: return ((const uint8_t *)t->data)[i];
	case TFK_DT_INT8: return ((const int8_t *)t->data)[i];
	case TFK_DT_INT16: return ((const int16_t *)t->data)[i];
	case TFK_DT_BOOL: return ((const uint8_t *)t->data)[i] != 0;
	default: return NAN;
	}
}

static int64_t argmax_row(const float *p, int64_t c)
{
	int64_t k, best = 0;

	for (k = 1; k < c; k++)
		if (p[k] > p[best])
			best = k;
	return best;
}

static int64_t argmax_num(const struct tfk_tensor *t, int64_t off, int64_t c)
{
	int64_t k, best = 0;
	double bv = num_at(t, off);

	for (k = 1; k < c; k++) {
		double x = num_at(t, off + k);

		if (x > bv) {
			bv = x;
			best = k;
		}
	}
	return best;
}

static int shape_err(const struct tfk_metric *m, const struct tfk_tensor *yt,
		     const struct tfk_tensor *yp, const char *why,
		     struct tfk_err *err)
{
	char a[80], b[80];

	return tfk_errf(err, TFK_EINVAL, "metric %s: y_true %s does not fit "
			"y_pred %s%s", m->name,
			tfk_shape_str(yt->rank, yt->shape, a, sizeof(a)),
			tfk_shape_str(yp->rank, yp->shape, b, sizeof(b)), why);
}

/* y_true has y_pred's elements (same shape, or y_pred [b, ..., 1] and
 * y_true without the 1, or the reverse: Keras squeezes or expands). */
static int same_elems(const struct tfk_tensor *yt,
		      const struct tfk_tensor *yp)
{
	const struct tfk_tensor *a = yt, *b = yp;
	int i;

	if (tfk_shape_equal(yt->rank, yt->shape, yp->rank, yp->shape))
		return 1;
	if (a->rank > b->rank) {
		a = yp;
		b = yt;
	}
	if (b->rank != a->rank + 1 || b->shape[b->rank - 1] != 1)
		return 0;
	for (i = 0; i < a->rank; i++)
		if (a->shape[i] != b->shape[i])
			return 0;
	return 1;
}

/* Add one batch's weighted sum and weight total to the mean state. */
static void mean_add(struct tfk_metric *m, double sum, double cnt)
{
	m->total += (float)sum;
	m->count += (float)cnt;
}

static int update_mean(struct tfk_metric *m, const struct tfk_tensor *yt,
		       const struct tfk_tensor *yp, const float *w, int64_t b,
		       struct tfk_err *err)
{
	const float *p = yp->data;
	int64_t n = tfk_tensor_numel(yp), c, rows, per_ex, r, k;
	double sum = 0, cnt = 0;

	c = yp->rank >= 2 ? yp->shape[yp->rank - 1] : 1;
	rows = c ? n / c : 0;
	per_ex = b ? rows / b : 0;
	if (m->kind == M_SPARSE_CAT) {
		/* y_true: y_pred's shape without the last dim, or with 1 */
		int ok = yt->rank == yp->rank - 1 ||
			(yt->rank == yp->rank && yt->shape[yt->rank - 1] == 1);
		int i;

		for (i = 0; ok && i < yp->rank - 1; i++)
			ok = yt->shape[i] == yp->shape[i];
		if (!ok || tfk_tensor_numel(yt) != rows)
			return shape_err(m, yt, yp, " (sparse labels: one "
					 "class id per row)", err);
	} else if (!same_elems(yt, yp)) {
		return shape_err(m, yt, yp, "", err);
	}
	for (r = 0; r < rows; r++) {
		const float *pr = p + r * c;
		double v = 0, wt = w ? w[r / per_ex] : 1.0;

		switch (m->kind) {
		case M_SPARSE_CAT: {
			double lab = num_at(yt, r);

			if (!(lab >= 0 && lab < (double)c) ||
			    lab != floor(lab))
				return tfk_errf(err, TFK_EINVAL, "metric %s: "
						"label %g of row %lld outside "
						"[0, %lld)", m->name, lab,
						(long long)r, (long long)c);
			v = (int64_t)lab == argmax_row(pr, c);
			break;
		}
		case M_CAT:
			v = argmax_num(yt, r * c, c) == argmax_row(pr, c);
			break;
		case M_BINARY: {
			float th = (float)m->threshold;
			int hit = 0;

			for (k = 0; k < c; k++) {
				float pb = pr[k] > th ? 1.0f : 0.0f;

				hit += num_at(yt, r * c + k) == pb;
			}
			v = (double)(float)((float)hit / (float)c);
			break;
		}
		default: {	/* MAE, MSE */
			double s = 0;

			for (k = 0; k < c; k++) {
				float d = pr[k] - (float)num_at(yt, r * c + k);

				s += m->kind == M_MAE ? fabsf(d) : d * d;
			}
			v = (float)(s / (double)c);
			break;
		}
		}
		sum += v * wt;
		cnt += wt;
	}
	mean_add(m, sum, cnt);
	return 0;
}

/* Keras' _filter_top_k on one row, into out. */
static void top_k_row(const float *x, int64_t c, int k, float *out)
{
	int64_t i, j;

	for (i = 0; i < c; i++)
		out[i] = NEG_INF;
	if (k > c)
		k = (int)c;
	for (j = 0; j < k; j++) {
		int64_t best = -1;

		for (i = 0; i < c; i++)
			if (out[i] == NEG_INF && x[i] != NEG_INF &&
			    (best < 0 || x[i] > x[best]))
				best = i;
		if (best < 0)	/* rest already NEG_INF */
			break;
		out[best] = x[best];
	}
}

static int update_pr(struct tfk_metric *m, const struct tfk_tensor *yt,
		     const struct tfk_tensor *yp, const float *w, int64_t b,
		     struct tfk_err *err)
{
	const float *p = yp->data;
	int64_t n = tfk_tensor_numel(yp), c, rows, per_ex, r, k;
	double tp = 0, fp = 0, fn = 0;
	float th = (float)m->threshold;

	if (!same_elems(yt, yp))
		return shape_err(m, yt, yp, "", err);
	c = yp->rank >= 2 ? yp->shape[yp->rank - 1] : 1;
	rows = c ? n / c : 0;
	per_ex = b ? rows / b : 0;
	if (m->class_id >= 0 && m->class_id >= c)
		return tfk_errf(err, TFK_EINVAL, "metric %s: class_id %d "
				"outside the %lld classes of y_pred", m->name,
				m->class_id, (long long)c);
	if (m->top_k && m->row_cap < c) {
		float *nr = tfk_realloc(m->row, (size_t)c * sizeof(float));

		if (!nr)
			return tfk_errf(err, TFK_ENOMEM, "metric %s: out of "
					"memory", m->name);
		m->row = nr;
		m->row_cap = c;
	}
	for (r = 0; r < rows; r++) {
		const float *pr = p + r * c;
		double wt = w ? w[r / per_ex] : 1.0;
		int64_t k0 = 0, k1 = c;

		if (m->top_k) {
			top_k_row(pr, c, m->top_k, m->row);
			pr = m->row;
		}
		if (m->class_id >= 0) {
			k0 = m->class_id;
			k1 = k0 + 1;
		}
		for (k = k0; k < k1; k++) {
			int lab = num_at(yt, r * c + k) != 0;
			int pos = pr[k] > th;

			if (lab && pos)
				tp += wt;
			else if (!lab && pos)
				fp += wt;
			else if (lab)
				fn += wt;
		}
	}
	m->tp1 += (float)tp;
	m->fp1 += (float)fp;
	m->fn1 += (float)fn;
	return 0;
}

static int update_auc(struct tfk_metric *m, const struct tfk_tensor *yt,
		      const struct tfk_tensor *yp, const float *w, int64_t b,
		      struct tfk_err *err)
{
	const float *p = yp->data;
	int64_t n = tfk_tensor_numel(yp), per_ex, i;
	int nt = m->nt, k;
	double tot_t = 0, tot_f = 0, ct = 0, cf = 0;
	float tm1 = (float)(nt - 1);

	if (!same_elems(yt, yp))
		return shape_err(m, yt, yp, "", err);
	per_ex = b ? n / b : 0;
	memset(m->btp, 0, (size_t)nt * sizeof(double));
	memset(m->bfp, 0, (size_t)nt * sizeof(double));
	for (i = 0; i < n; i++) {
		float x = p[i], bf;
		double wt = w ? w[i / per_ex] : 1.0;
		int lab = num_at(yt, i) != 0;
		int bi;

		if (m->from_logits)
			x = 1.0f / (1.0f + expf(-x));
		x = x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x;
		if (x != x)	/* NaN: tf.clip_by_value keeps it; ceil too;
				 * the int cast is undefined: count it low */
			x = 0.0f;
		bf = ceilf(x * tm1) - 1.0f;
		bi = bf < 0 ? 0 : (int)bf;
		if (lab) {
			m->btp[bi] += wt;
			tot_t += wt;
		} else {
			m->bfp[bi] += wt;
			tot_f += wt;
		}
	}
	for (k = nt - 1; k >= 0; k--) {
		ct += m->btp[k];
		cf += m->bfp[k];
		m->tp[k] += (float)ct;
		m->fp[k] += (float)cf;
		m->tn[k] += (float)(tot_f - cf);
		m->fn[k] += (float)(tot_t - ct);
	}
	return 0;
}

int tfk_metric_update(struct tfk_metric *m, const struct tfk_tensor *y_true,
		      const struct tfk_tensor *y_pred, const float *w,
		      struct tfk_err *err)
{
	int64_t b;

	if (y_pred->dtype != TFK_DT_FLOAT || y_pred->rank < 1)
		return tfk_errf(err, TFK_EINVAL, "metric %s: y_pred must be "
				"float32 of rank >= 1, not %s rank %d", m->name,
				tfk_dtype_name(y_pred->dtype), y_pred->rank);
	if (y_true->dtype == TFK_DT_STRING || y_true->dtype == TFK_DT_HALF ||
	    !tfk_dtype_size(y_true->dtype))
		return tfk_errf(err, TFK_EINVAL, "metric %s: y_true of dtype "
				"%s is not supported", m->name,
				tfk_dtype_name(y_true->dtype));
	b = y_pred->shape[0];
	if (y_true->rank < 1 || y_true->shape[0] != b)
		return shape_err(m, y_true, y_pred, " (batch sizes differ)",
				 err);
	if (b == 0)
		return 0;
	if (m->kind == M_ACC_AUTO) {
		int64_t pl = y_pred->rank >= 2 ?
			y_pred->shape[y_pred->rank - 1] : 1;
		int64_t tl = y_true->shape[y_true->rank - 1];

		if (pl == 1)
			m->kind = M_BINARY;
		else if (y_true->rank < y_pred->rank ||
			 (tl == 1 && pl > 1))
			m->kind = M_SPARSE_CAT;
		else
			m->kind = M_CAT;
	}
	switch (m->kind) {
	case M_PRECISION:
	case M_RECALL:
		return update_pr(m, y_true, y_pred, w, b, err);
	case M_AUC:
		return update_auc(m, y_true, y_pred, w, b, err);
	default:
		return update_mean(m, y_true, y_pred, w, b, err);
	}
}

/* Results --------------------------------------------------------------- */

static double div_no_nan(double a, double b)
{
	return b == 0 ? 0 : a / b;
}

/* AUC.interpolate_pr_auc (Davis & Goadrich 2006). */
static double pr_auc_interp(const struct tfk_metric *m)
{
	double s = 0;
	int i;

	for (i = 0; i + 1 < m->nt; i++) {
		double dtp = (double)m->tp[i] - m->tp[i + 1];
		double p0 = (double)m->tp[i] + m->fp[i];
		double p1 = (double)m->tp[i + 1] + m->fp[i + 1];
		double dp = p0 - p1;
		double slope = div_no_nan(dtp, fmax(dp, 0));
		double icpt = m->tp[i + 1] - slope * p1;
		double ratio = p0 > 0 && p1 > 0 ? div_no_nan(p0, fmax(p1, 0)) :
			1.0;

		s += div_no_nan(slope * (dtp + icpt * log(ratio)),
				fmax((double)m->tp[i + 1] + m->fn[i + 1], 0));
	}
	return s;
}

static double auc_result(const struct tfk_metric *m)
{
	double s = 0;
	int i;

	if (m->curve == C_PR && m->summ == S_INTERP)
		return pr_auc_interp(m);
	for (i = 0; i + 1 < m->nt; i++) {
		double x0, x1, y0, y1, h;
		double r0 = div_no_nan(m->tp[i], (double)m->tp[i] + m->fn[i]);
		double r1 = div_no_nan(m->tp[i + 1],
				       (double)m->tp[i + 1] + m->fn[i + 1]);

		if (m->curve == C_ROC) {
			x0 = div_no_nan(m->fp[i], (double)m->fp[i] + m->tn[i]);
			x1 = div_no_nan(m->fp[i + 1],
					(double)m->fp[i + 1] + m->tn[i + 1]);
			y0 = r0;
			y1 = r1;
		} else {
			x0 = r0;
			x1 = r1;
			y0 = div_no_nan(m->tp[i], (double)m->tp[i] + m->fp[i]);
			y1 = div_no_nan(m->tp[i + 1],
					(double)m->tp[i + 1] + m->fp[i + 1]);
		}
		if (m->summ == S_INTERP)
			h = (y0 + y1) / 2.0;
		else if (m->summ == S_MINOR)
			h = fmin(y0, y1);
		else
			h = fmax(y0, y1);
		s += (x0 - x1) * h;
	}
	return s;
}

double tfk_metric_result(const struct tfk_metric *m)
{
	switch (m->kind) {
	case M_PRECISION:
		return (float)div_no_nan(m->tp1, (double)m->tp1 + m->fp1);
	case M_RECALL:
		return (float)div_no_nan(m->tp1, (double)m->tp1 + m->fn1);
	case M_AUC:
		return (float)auc_result(m);
	default:
		return (float)div_no_nan(m->total, m->count);
	}
}
