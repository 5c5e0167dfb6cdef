/*
 * nn.c - neural-network ops: the activations Keras layers use beyond
 * Relu/Sigmoid/Tanh (Relu6, Elu, Selu, LeakyRelu, Softplus, Erf for
 * gelu) with TF's <Op>Grad ops, LogSoftmax, the fused softmax
 * cross-entropies, FusedBatchNormV3 and its grad, StopGradient and
 * PreventGradient.
 *
 * Op defs are TensorFlow's (nn_ops.cc, math_ops.cc, array_ops.cc):
 * names, input order, attr names and defaults, and each gradient is the
 * graph TF's nn_grad.py / math_grad.py builds, with TF's own ops: the
 * Grad ops take the forward *output* where TF passes op.outputs[0]
 * (Relu6, Elu, Selu) and the *input* where TF passes op.inputs[0]
 * (LeakyRelu, Softplus). Two documented widenings: T also allows double
 * where TF stops at float (so gradients can be checked by finite
 * differences in double), and FusedBatchNormGradV3's scale is typed U
 * (TF fixes it to float, which U always is in a TF graph);
 * FusedBatchNormV3 accepts any rank 2..5 channels-last input, where TF
 * takes 4-D NHWC only: a graph meant for TF should reshape to
 * [b, 1, 1, c], as Keras does not use the fused op on 2-D inputs.
 *
 * Kernels: each _ref computes in double through get/put helpers and is
 * the specification; the fast paths are float loops with the op chosen
 * outside the loop (the compiler vectorizes the branch-free ones) and
 * fall back to the _ref for double. The cross-entropies run every step:
 * their fast path is one loop per row over the logits (max, exp into
 * the backprop row with the running sum, then one scaling pass), with
 * no division per element. Batch norm reduces per channel over the
 * rows of a channels-last tensor (the inner loop runs over channels, so
 * it vectorizes); partial sums are per row chunk in double, chunks
 * split by tfk_parallel_for and combined in chunk order, so the result
 * does not depend on scheduling. One-pass sum/sum-of-squares was
 * rejected: it loses the variance when |mean| >> std even in double
 * accumulators of float data; the second pass reads the tensor again
 * from cache for the sizes training uses.
 */
#include "kernels/cpu.h"
#include "graph/graph.h"
#include "kernels/cpu/infer-impl.h"
#include "util/alloc.h"
#include "util/pool.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define FLOATS (TFK_DT_BIT(TFK_DT_FLOAT) | TFK_DT_BIT(TFK_DT_DOUBLE))
#define INDEX (TFK_DT_BIT(TFK_DT_INT32) | TFK_DT_BIT(TFK_DT_INT64))

/* SELU's constants (Klambauer et al. 2017; TF's selu_op_functor). */
#define SELU_SCALE 1.0507009873554804934193349852946
#define SELU_ALPHA 1.6732632423543772848170429916717

static double getd(const void *p, enum tfk_dtype t, int64_t i)
{
	return t == TFK_DT_FLOAT ? ((const float *)p)[i] :
		((const double *)p)[i];
}

static void putd(void *p, enum tfk_dtype t, int64_t i, double v)
{
	if (t == TFK_DT_FLOAT)
		((float *)p)[i] = (float)v;
	else
		((double *)p)[i] = v;
}

static int64_t label_at(const struct tfk_tensor *t, int64_t i)
{
	return t->dtype == TFK_DT_INT32 ? ((const int32_t *)t->data)[i] :
		((const int64_t *)t->data)[i];
}

static int is_float(enum tfk_dtype t)
{
	return t == TFK_DT_FLOAT || t == TFK_DT_DOUBLE;
}

static int same_shape(const struct tfk_tensor *a, const struct tfk_tensor *b)
{
	return tfk_shape_equal(a->rank, a->shape, b->rank, b->shape);
}

static int check_same(const struct tfk_tensor *x, const struct tfk_tensor *y,
		      const char *what, struct tfk_err *err)
{
	char b1[128], b2[128];

	if (!is_float(x->dtype) || x->dtype != y->dtype)
		return tfk_errf(err, TFK_EINVAL, "%s: dtypes %s and %s (need "
				"equal float32 or float64)", what,
				tfk_dtype_name(x->dtype),
				tfk_dtype_name(y->dtype));
	if (!same_shape(x, y))
		return tfk_errf(err, TFK_EINVAL, "%s: shapes %s and %s differ",
				what, tfk_shape_str(x->rank, x->shape, b1,
						    sizeof(b1)),
				tfk_shape_str(y->rank, y->shape, b2,
					      sizeof(b2)));
	return 0;
}

/* Activations ------------------------------------------------------------ */

/* TF's softplus thresholds (softplus_op.h): log(eps) + 2 of the type;
 * beyond them softplus(x) is x, or exp(x), to within eps. */
static double softplus_d(double x, double thr)
{
	if (x > -thr)
		return x;
	if (x < thr)
		return exp(x);
	return log1p(exp(x));
}

static double act_d(enum tfk_act op, double alpha, double x, double thr)
{
	switch (op) {
	case TFK_ACT_RELU6: return x < 0 ? 0 : x > 6 ? 6 : x;
	case TFK_ACT_ELU: return x < 0 ? expm1(x) : x;
	case TFK_ACT_SELU:
		return x < 0 ? SELU_SCALE * SELU_ALPHA * expm1(x) :
			SELU_SCALE * x;
	case TFK_ACT_LEAKY_RELU: return x > 0 ? x : x * alpha;
	case TFK_ACT_SOFTPLUS: return softplus_d(x, thr);
	case TFK_ACT_ERF: return erf(x);
	}
	return 0;
}

static double sp_threshold(enum tfk_dtype t)
{
	/* log(FLT_EPSILON) + 2, log(DBL_EPSILON) + 2 */
	return t == TFK_DT_FLOAT ? log(1.1920928955078125e-07) + 2 :
		log(2.220446049250313e-16) + 2;
}

int tfk_cpu_act_ref(enum tfk_act op, float alpha, const struct tfk_tensor *x,
		    struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t i, n = tfk_tensor_numel(x);
	double thr = sp_threshold(x->dtype);
	int rc = check_same(x, out, "activation", err);

	if (rc)
		return rc;
	for (i = 0; i < n; i++)
		putd(out->data, out->dtype, i,
		     act_d(op, alpha, getd(x->data, x->dtype, i), thr));
	return 0;
}

int tfk_cpu_act(enum tfk_act op, float alpha, const struct tfk_tensor *x,
		struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t i, n = tfk_tensor_numel(x);
	const float *p = x->data;
	float *o = out->data;
	int rc = check_same(x, out, "activation", err);

	if (rc)
		return rc;
	if (x->dtype != TFK_DT_FLOAT)
		return tfk_cpu_act_ref(op, alpha, x, out, err);
	switch (op) {
	case TFK_ACT_RELU6:
		for (i = 0; i < n; i++)
			o[i] = p[i] < 0 ? 0 : p[i] > 6 ? 6 : p[i];
		break;
	case TFK_ACT_ELU:
		for (i = 0; i < n; i++)
			o[i] = p[i] < 0 ? expm1f(p[i]) : p[i];
		break;
	case TFK_ACT_SELU:
		for (i = 0; i < n; i++)
			o[i] = p[i] < 0 ? (float)(SELU_SCALE * SELU_ALPHA) *
				expm1f(p[i]) : (float)SELU_SCALE * p[i];
		break;
	case TFK_ACT_LEAKY_RELU:
		for (i = 0; i < n; i++)
			o[i] = p[i] > 0 ? p[i] : p[i] * alpha;
		break;
	case TFK_ACT_SOFTPLUS: {
		const float thr = (float)sp_threshold(TFK_DT_FLOAT);

		for (i = 0; i < n; i++)
			o[i] = p[i] > -thr ? p[i] : p[i] < thr ? expf(p[i]) :
				log1pf(expf(p[i]));
		break;
	}
	case TFK_ACT_ERF:
		for (i = 0; i < n; i++)
			o[i] = erff(p[i]);
		break;
	}
	return 0;
}

/* TF's <Op>Grad functors (relu_op_functor.h, softplus_op.h). */
static double act_grad_d(enum tfk_act op, double alpha, double g, double v)
{
	switch (op) {
	case TFK_ACT_RELU6: return v > 0 && v < 6 ? g : 0;
	case TFK_ACT_ELU: return v < 0 ? g * (v + 1) : g;
	case TFK_ACT_SELU:
		return v < 0 ? g * (v + SELU_SCALE * SELU_ALPHA) :
			g * SELU_SCALE;
	case TFK_ACT_LEAKY_RELU: return v > 0 ? g : g * alpha;
	case TFK_ACT_SOFTPLUS: return g / (1 + exp(-v));
	case TFK_ACT_ERF: break;
	}
	return 0;
}

int tfk_cpu_act_grad_ref(enum tfk_act op, float alpha,
			 const struct tfk_tensor *dy,
			 const struct tfk_tensor *v, struct tfk_tensor *out,
			 struct tfk_err *err)
{
	int64_t i, n = tfk_tensor_numel(dy);
	int rc = check_same(dy, v, "activation grad", err);

	if (!rc)
		rc = check_same(dy, out, "activation grad", err);
	if (rc)
		return rc;
	if (op == TFK_ACT_ERF)
		return tfk_errf(err, TFK_EINVAL, "Erf has no grad op (its "
				"gradient is built from Exp and Square)");
	for (i = 0; i < n; i++)
		putd(out->data, out->dtype, i,
		     act_grad_d(op, alpha, getd(dy->data, dy->dtype, i),
				getd(v->data, v->dtype, i)));
	return 0;
}

int tfk_cpu_act_grad(enum tfk_act op, float alpha,
		     const struct tfk_tensor *dy, const struct tfk_tensor *v,
		     struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t i, n = tfk_tensor_numel(dy);
	const float *g = dy->data, *p = v->data;
	float *o = out->data;
	int rc = check_same(dy, v, "activation grad", err);

	if (!rc)
		rc = check_same(dy, out, "activation grad", err);
	if (rc)
		return rc;
	if (dy->dtype != TFK_DT_FLOAT || op == TFK_ACT_ERF)
		return tfk_cpu_act_grad_ref(op, alpha, dy, v, out, err);
	switch (op) {
	case TFK_ACT_RELU6:
		for (i = 0; i < n; i++)
			o[i] = p[i] > 0 && p[i] < 6 ? g[i] : 0;
		break;
	case TFK_ACT_ELU:
		for (i = 0; i < n; i++)
			o[i] = p[i] < 0 ? g[i] * (p[i] + 1) : g[i];
		break;
	case TFK_ACT_SELU:
		for (i = 0; i < n; i++)
			o[i] = p[i] < 0 ? g[i] * (p[i] + (float)(SELU_SCALE *
							       SELU_ALPHA)) :
				g[i] * (float)SELU_SCALE;
		break;
	case TFK_ACT_LEAKY_RELU:
		for (i = 0; i < n; i++)
			o[i] = p[i] > 0 ? g[i] : g[i] * alpha;
		break;
	case TFK_ACT_SOFTPLUS:
		for (i = 0; i < n; i++)
			o[i] = g[i] / (1 + expf(-p[i]));
		break;
	case TFK_ACT_ERF:
		break;
	}
	return 0;
}

/* LogSoftmax ------------------------------------------------------------- */

int tfk_cpu_log_softmax_ref(const struct tfk_tensor *x,
			    struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t r, j, c, rows;
	int rc = check_same(x, out, "log softmax", err);

	if (rc)
		return rc;
	if (x->rank < 1)
		return tfk_errf(err, TFK_EINVAL, "log softmax of a scalar");
	c = x->shape[x->rank - 1];
	if (!c)
		return 0;
	rows = tfk_tensor_numel(x) / c;
	for (r = 0; r < rows; r++) {
		double m = -INFINITY, s = 0;

		for (j = 0; j < c; j++)
			m = fmax(m, getd(x->data, x->dtype, r * c + j));
		for (j = 0; j < c; j++)
			s += exp(getd(x->data, x->dtype, r * c + j) - m);
		for (j = 0; j < c; j++)
			putd(out->data, out->dtype, r * c + j,
			     getd(x->data, x->dtype, r * c + j) - m - log(s));
	}
	return 0;
}

int tfk_cpu_log_softmax(const struct tfk_tensor *x, struct tfk_tensor *out,
			struct tfk_err *err)
{
	int64_t r, j, c, rows;
	int rc = check_same(x, out, "log softmax", err);

	if (rc)
		return rc;
	if (x->dtype != TFK_DT_FLOAT || x->rank < 1)
		return tfk_cpu_log_softmax_ref(x, out, err);
	c = x->shape[x->rank - 1];
	if (!c)
		return 0;
	rows = tfk_tensor_numel(x) / c;
	for (r = 0; r < rows; r++) {
		const float *p = (const float *)x->data + r * c;
		float *o = (float *)out->data + r * c;
		float m = p[0], s = 0, l;

		for (j = 1; j < c; j++)
			m = p[j] > m ? p[j] : m;
		for (j = 0; j < c; j++)
			s += expf(p[j] - m);
		l = m + logf(s);
		for (j = 0; j < c; j++)
			o[j] = p[j] - l;
	}
	return 0;
}

/* Cross-entropies -------------------------------------------------------- */

static int check_xent(const struct tfk_tensor *f, const struct tfk_tensor *loss,
		      const struct tfk_tensor *bp, struct tfk_err *err)
{
	int rc;

	if (f->rank != 2)
		return tfk_errf(err, TFK_EINVAL, "features must be 2-D [batch, "
				"classes], got rank %d", f->rank);
	rc = check_same(f, bp, "backprop", err);
	if (rc)
		return rc;
	if (loss->dtype != f->dtype || loss->rank != 1 ||
	    loss->shape[0] != f->shape[0])
		return tfk_errf(err, TFK_EINVAL, "loss must be %s [%lld]",
				tfk_dtype_name(f->dtype),
				(long long)f->shape[0]);
	return 0;
}

int tfk_cpu_xent_ref(const struct tfk_tensor *features,
		     const struct tfk_tensor *labels, struct tfk_tensor *loss,
		     struct tfk_tensor *backprop, struct tfk_err *err)
{
	enum tfk_dtype t = features->dtype;
	int64_t r, j, b, c;
	int rc = check_xent(features, loss, backprop, err);

	if (!rc)
		rc = check_same(features, labels, "labels", err);
	if (rc)
		return rc;
	b = features->shape[0];
	c = features->shape[1];
	for (r = 0; r < b; r++) {
		double m = -INFINITY, s = 0, l = 0;

		for (j = 0; j < c; j++)
			m = fmax(m, getd(features->data, t, r * c + j));
		for (j = 0; j < c; j++)
			s += exp(getd(features->data, t, r * c + j) - m);
		for (j = 0; j < c; j++) {
			double x = getd(features->data, t, r * c + j) - m;
			double y = getd(labels->data, t, r * c + j);

			l += y * (log(s) - x);
			putd(backprop->data, t, r * c + j, exp(x) / s - y);
		}
		putd(loss->data, t, r, l);
	}
	return 0;
}

int tfk_cpu_xent(const struct tfk_tensor *features,
		 const struct tfk_tensor *labels, struct tfk_tensor *loss,
		 struct tfk_tensor *backprop, struct tfk_err *err)
{
	int64_t r, j, b, c;
	int rc = check_xent(features, loss, backprop, err);

	if (!rc)
		rc = check_same(features, labels, "labels", err);
	if (rc)
		return rc;
	if (features->dtype != TFK_DT_FLOAT)
		return tfk_cpu_xent_ref(features, labels, loss, backprop, err);
	b = features->shape[0];
	c = features->shape[1];
	if (!c) {	/* a sum over no classes: 0, not 0 * log(0) */
		memset(loss->data, 0, loss->nbytes);
		return 0;
	}
	for (r = 0; r < b; r++) {
		const float *x = (const float *)features->data + r * c;
		const float *y = (const float *)labels->data + r * c;
		float *o = (float *)backprop->data + r * c;
		float m = -INFINITY, s = 0, ls, inv, sy = 0, syx = 0;

		for (j = 0; j < c; j++)
			m = x[j] > m ? x[j] : m;
		for (j = 0; j < c; j++) {
			o[j] = expf(x[j] - m);
			s += o[j];
			sy += y[j];
			syx += y[j] * (x[j] - m);
		}
		ls = logf(s);
		inv = 1 / s;
		for (j = 0; j < c; j++)
			o[j] = o[j] * inv - y[j];
		((float *)loss->data)[r] = sy * ls - syx;
	}
	return 0;
}

static int check_sparse(const struct tfk_tensor *f,
			const struct tfk_tensor *labels,
			struct tfk_tensor *loss, struct tfk_tensor *bp,
			struct tfk_err *err)
{
	int64_t r, c;
	int rc = check_xent(f, loss, bp, err);

	if (rc)
		return rc;
	if ((labels->dtype != TFK_DT_INT32 && labels->dtype != TFK_DT_INT64) ||
	    labels->rank != 1 || labels->shape[0] != f->shape[0])
		return tfk_errf(err, TFK_EINVAL, "labels must be int32 or "
				"int64 [%lld]", (long long)f->shape[0]);
	c = f->shape[1];
	for (r = 0; r < f->shape[0]; r++) {
		int64_t l = label_at(labels, r);

		if (l < 0 || l >= c)
			return tfk_errf(err, TFK_EINVAL, "row %lld: received "
					"a label value of %lld which is "
					"outside the valid range of [0, %lld)",
					(long long)r, (long long)l,
					(long long)c);
	}
	return 0;
}

int tfk_cpu_sparse_xent_ref(const struct tfk_tensor *features,
			    const struct tfk_tensor *labels,
			    struct tfk_tensor *loss,
			    struct tfk_tensor *backprop, struct tfk_err *err)
{
	enum tfk_dtype t = features->dtype;
	int64_t r, j, b, c;
	int rc = check_sparse(features, labels, loss, backprop, err);

	if (rc)
		return rc;
	b = features->shape[0];
	c = features->shape[1];
	for (r = 0; r < b; r++) {
		int64_t l = label_at(labels, r);
		double m = -INFINITY, s = 0;

		for (j = 0; j < c; j++)
			m = fmax(m, getd(features->data, t, r * c + j));
		for (j = 0; j < c; j++)
			s += exp(getd(features->data, t, r * c + j) - m);
		for (j = 0; j < c; j++)
			putd(backprop->data, t, r * c + j,
			     exp(getd(features->data, t, r * c + j) - m) / s -
			     (j == l));
		putd(loss->data, t, r, log(s) -
		     (getd(features->data, t, r * c + l) - m));
	}
	return 0;
}

int tfk_cpu_sparse_xent(const struct tfk_tensor *features,
			const struct tfk_tensor *labels,
			struct tfk_tensor *loss, struct tfk_tensor *backprop,
			struct tfk_err *err)
{
	int64_t r, j, b, c;
	int rc = check_sparse(features, labels, loss, backprop, err);

	if (rc)
		return rc;
	if (features->dtype != TFK_DT_FLOAT)
		return tfk_cpu_sparse_xent_ref(features, labels, loss,
					       backprop, err);
	b = features->shape[0];
	c = features->shape[1];
	for (r = 0; r < b; r++) {
		const float *x = (const float *)features->data + r * c;
		float *o = (float *)backprop->data + r * c;
		int64_t l = label_at(labels, r);
		float m = -INFINITY, s = 0, inv;

		for (j = 0; j < c; j++)
			m = x[j] > m ? x[j] : m;
		for (j = 0; j < c; j++) {
			o[j] = expf(x[j] - m);
			s += o[j];
		}
		inv = 1 / s;
		for (j = 0; j < c; j++)
			o[j] *= inv;
		o[l] -= 1;
		((float *)loss->data)[r] = logf(s) - (x[l] - m);
	}
	return 0;
}

/* Batch norm ------------------------------------------------------------- */

static int check_bn(const struct tfk_tensor *x, int n_vec,
		    const struct tfk_tensor *const *vec, int64_t *rows,
		    int64_t *ch, struct tfk_err *err)
{
	int i;

	if (!is_float(x->dtype))
		return tfk_errf(err, TFK_EINVAL, "batch norm of %s",
				tfk_dtype_name(x->dtype));
	if (x->rank < 2 || x->rank > 5)
		return tfk_errf(err, TFK_EINVAL, "batch norm input of rank "
				"%d (need 2 to 5, channels last)", x->rank);
	*ch = x->shape[x->rank - 1];
	*rows = *ch ? tfk_tensor_numel(x) / *ch : 0;
	for (i = 0; i < n_vec; i++)
		if (vec[i] && (vec[i]->dtype != x->dtype ||
			       vec[i]->rank != 1 || vec[i]->shape[0] != *ch))
			return tfk_errf(err, TFK_EINVAL, "batch norm operand "
					"%d must be %s [%lld]", i,
					tfk_dtype_name(x->dtype),
					(long long)*ch);
	return 0;
}

/* The forward pass's operands, as check_bn; mean and var only where they
 * are read (inference, or a running average with a factor other than 1). */
static int check_bn_fwd(const struct tfk_bn *p, const struct tfk_tensor *x,
			const struct tfk_tensor *scale,
			const struct tfk_tensor *offset,
			const struct tfk_tensor *mean,
			const struct tfk_tensor *var,
			const struct tfk_tensor *y,
			const struct tfk_tensor *batch_mean,
			const struct tfk_tensor *batch_var,
			const struct tfk_tensor *rs1,
			const struct tfk_tensor *rs2, int64_t *rows,
			int64_t *ch, struct tfk_err *err)
{
	int need_stats = !p->is_training || p->avg_factor != 1;
	const struct tfk_tensor *vec[8] = {
		scale, offset, need_stats ? mean : NULL,
		need_stats ? var : NULL, batch_mean, batch_var, rs1, rs2
	};
	int rc = check_bn(x, 8, vec, rows, ch, err);

	if (!rc)
		rc = check_same(x, y, "batch norm output", err);
	return rc;
}

/* The gradient's operands, as check_bn. */
static int check_bn_grad(const struct tfk_tensor *dy,
			 const struct tfk_tensor *x,
			 const struct tfk_tensor *scale,
			 const struct tfk_tensor *rs1,
			 const struct tfk_tensor *rs2,
			 const struct tfk_tensor *dx,
			 const struct tfk_tensor *dscale,
			 const struct tfk_tensor *doffset, int64_t *rows,
			 int64_t *ch, struct tfk_err *err)
{
	const struct tfk_tensor *vec[5] = { scale, rs1, rs2, dscale, doffset };
	int rc = check_bn(x, 5, vec, rows, ch, err);

	if (!rc)
		rc = check_same(x, dy, "y_backprop", err);
	if (!rc)
		rc = check_same(x, dx, "x_backprop", err);
	return rc;
}

/* TF's rest_size_adjust: n / (n - 1), 1 for n <= 1. */
static double bessel(int64_t n)
{
	return n > 1 ? (double)n / (double)(n - 1) : 1;
}

int tfk_cpu_batch_norm_ref(const struct tfk_bn *p, const struct tfk_tensor *x,
			   const struct tfk_tensor *scale,
			   const struct tfk_tensor *offset,
			   const struct tfk_tensor *mean,
			   const struct tfk_tensor *var, struct tfk_tensor *y,
			   struct tfk_tensor *batch_mean,
			   struct tfk_tensor *batch_var,
			   struct tfk_tensor *rs1, struct tfk_tensor *rs2,
			   struct tfk_err *err)
{
	enum tfk_dtype t = x->dtype;
	int64_t rows, ch, r, c;
	int rc;

	rc = check_bn_fwd(p, x, scale, offset, mean, var, y, batch_mean,
			  batch_var, rs1, rs2, &rows, &ch, err);
	if (rc)
		return rc;
	for (c = 0; c < ch; c++) {
		double m = 0, v = 0, inv, bm, bv;

		if (p->is_training) {
			for (r = 0; r < rows; r++)
				m += getd(x->data, t, r * ch + c);
			m /= rows;
			for (r = 0; r < rows; r++) {
				double d = getd(x->data, t, r * ch + c) - m;

				v += d * d;
			}
			v /= rows;
			bm = m;
			bv = v * bessel(rows);
			if (p->avg_factor != 1) {
				double f = p->avg_factor;

				bm = (1 - f) * getd(mean->data, t, c) + f * bm;
				bv = (1 - f) * getd(var->data, t, c) + f * bv;
			}
			if (!rows)
				m = v = bm = bv = NAN;
		} else {
			m = bm = getd(mean->data, t, c);
			v = bv = getd(var->data, t, c);
		}
		inv = 1 / sqrt(v + p->epsilon);
		for (r = 0; r < rows; r++)
			putd(y->data, t, r * ch + c,
			     (getd(x->data, t, r * ch + c) - m) * inv *
			     getd(scale->data, t, c) +
			     getd(offset->data, t, c));
		putd(batch_mean->data, t, c, bm);
		putd(batch_var->data, t, c, bv);
		putd(rs1->data, t, c, m);
		putd(rs2->data, t, c, v);
	}
	return 0;
}

size_t tfk_cpu_batch_norm_work(int64_t channels, int threads)
{
	if (threads < 1)
		threads = 1;
	if (threads > 64)
		threads = 64;
	/* m, v, a, b; partials [chunk][2 * ch]; 4 float vectors */
	return (size_t)channels * (2 * (size_t)threads + 6);
}

/*
 * One parallel pass over row chunks of a float [rows, ch] tensor. The
 * per-channel terms are float vectors (mf mean, af/bf affine or grad
 * coefficients, cf mean of dy); sums run in float over blocks of BN_BLK
 * rows (error ~BN_BLK eps) and are added into double per block, so a
 * long reduction keeps double accuracy while the inner loops stay 4
 * floats wide (GCC vector extensions: SSE on any x86-64, NEON on arm64;
 * -O2 does not vectorize loops of unknown length on its own).
 */
struct bn_job {
	int pass;
	int64_t ch;
	const float *x, *dy;
	float *y;
	const float *mf, *af, *bf, *cf;
	double *part;			/* [chunk][2 * ch] partial sums */
};

#define BN_BLK 32
#define BN_TILE 64

typedef float v4f __attribute__((vector_size(16)));

static inline v4f ld4(const float *p)
{
	v4f v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void st4(float *p, v4f v)
{
	memcpy(p, &v, sizeof(v));
}

/* Sums of pass 0 (x), 1 ((x - m)^2) or 3 (dy, dy * (x - m)) over rows
 * [lo, hi) into s (and s2). */
static void bn_sums(const struct bn_job *j, int64_t lo, int64_t hi,
		    double *restrict s, double *restrict s2)
{
	const int64_t ch = j->ch;
	const float *restrict x = j->x, *restrict dy = j->dy;
	const float *restrict mf = j->mf;
	v4f a[BN_TILE / 4], b[BN_TILE / 4];
	int64_t c0, r0, r, c, n, n4;

	for (c = 0; c < ch; c++)
		s[c] = s2[c] = 0;
	for (c0 = 0; c0 < ch; c0 += BN_TILE) {
		n = ch - c0 < BN_TILE ? ch - c0 : BN_TILE;
		n4 = n / 4;
		for (r0 = lo; r0 < hi; r0 += BN_BLK) {
			int64_t r1 = r0 + BN_BLK < hi ? r0 + BN_BLK : hi;
			float ta[4] = { 0 }, tb[4] = { 0 };

			memset(a, 0, sizeof(a));
			memset(b, 0, sizeof(b));
			for (r = r0; r < r1; r++) {
				const float *p = x + r * ch + c0;
				const float *g = dy ? dy + r * ch + c0 : NULL;
				const float *m = mf + c0;

				switch (j->pass) {
				case 0:
					for (c = 0; c < n4; c++)
						a[c] += ld4(p + 4 * c);
					break;
				case 1:
					for (c = 0; c < n4; c++) {
						v4f d = ld4(p + 4 * c) -
							ld4(m + 4 * c);

						a[c] += d * d;
					}
					break;
				default:
					for (c = 0; c < n4; c++) {
						v4f q = ld4(g + 4 * c);

						a[c] += q;
						b[c] += q * (ld4(p + 4 * c) -
							     ld4(m + 4 * c));
					}
					break;
				}
				for (c = 4 * n4; c < n; c++) {
					float d = p[c] - m[c];

					if (j->pass == 0) {
						ta[c - 4 * n4] += p[c];
					} else if (j->pass == 1) {
						ta[c - 4 * n4] += d * d;
					} else {
						ta[c - 4 * n4] += g[c];
						tb[c - 4 * n4] += g[c] * d;
					}
				}
			}
			for (c = 0; c < 4 * n4; c++) {
				s[c0 + c] += a[c / 4][c % 4];
				s2[c0 + c] += b[c / 4][c % 4];
			}
			for (c = 4 * n4; c < n; c++) {
				s[c0 + c] += ta[c - 4 * n4];
				s2[c0 + c] += tb[c - 4 * n4];
			}
		}
	}
}

static void bn_chunk(void *ctx, int64_t lo, int64_t hi, int k)
{
	struct bn_job *j = ctx;
	const int64_t ch = j->ch, n4 = ch / 4;
	double *s = j->part + (size_t)k * 2 * ch;
	const float *restrict mf = j->mf, *restrict af = j->af;
	const float *restrict bf = j->bf, *restrict cf = j->cf;
	int64_t r, c;

	if (j->pass != 2 && j->pass != 4) {
		bn_sums(j, lo, hi, s, s + ch);
		return;
	}
	for (r = lo; r < hi; r++) {
		const float *p = j->x + r * ch;
		const float *g = j->dy ? j->dy + r * ch : NULL;
		float *o = j->y + r * ch;

		if (j->pass == 2) {	/* y = (x - mean) a + offset */
			for (c = 0; c < n4; c++)
				st4(o + 4 * c, (ld4(p + 4 * c) - ld4(mf + 4 * c)) *
				    ld4(af + 4 * c) + ld4(bf + 4 * c));
			for (c = 4 * n4; c < ch; c++)
				o[c] = (p[c] - mf[c]) * af[c] + bf[c];
		} else {	/* dx = a (dy - mdy) - (x - mean) b */
			for (c = 0; c < n4; c++)
				st4(o + 4 * c, ld4(af + 4 * c) *
				    (ld4(g + 4 * c) - ld4(cf + 4 * c)) -
				    (ld4(p + 4 * c) - ld4(mf + 4 * c)) *
				    ld4(bf + 4 * c));
			for (c = 4 * n4; c < ch; c++)
				o[c] = af[c] * (g[c] - cf[c]) -
					(p[c] - mf[c]) * bf[c];
		}
	}
}

/* Sum the chunks' partial sums (in chunk order) into out[0..ch) and,
 * when two, out2. */
static void bn_combine(const struct bn_job *j, int64_t rows, int threads,
		       double *out, double *out2)
{
	int64_t c;
	int k, n = (int)(rows < threads ? rows : threads);

	if (n > 64)
		n = 64;
	for (c = 0; c < j->ch; c++) {
		out[c] = 0;
		if (out2)
			out2[c] = 0;
	}
	for (k = 0; k < n; k++) {
		const double *s = j->part + (size_t)k * 2 * j->ch;

		for (c = 0; c < j->ch; c++) {
			out[c] += s[c];
			if (out2)
				out2[c] += s[j->ch + c];
		}
	}
}

static int bn_threads(int threads, int64_t rows, int64_t ch)
{
	/* below ~32K elements a fork-join costs more than it saves */
	if (threads < 1 || rows * ch < 32768)
		return 1;
	return threads > 64 ? 64 : threads;
}

int tfk_cpu_batch_norm(const struct tfk_bn *p, const struct tfk_tensor *x,
		       const struct tfk_tensor *scale,
		       const struct tfk_tensor *offset,
		       const struct tfk_tensor *mean,
		       const struct tfk_tensor *var, struct tfk_tensor *y,
		       struct tfk_tensor *batch_mean,
		       struct tfk_tensor *batch_var, struct tfk_tensor *rs1,
		       struct tfk_tensor *rs2, int threads, double *work,
		       struct tfk_err *err)
{
	int64_t rows, ch, c;
	double *own = NULL, *m, *v, *a, *b;
	float *mf, *af, *bf;
	struct bn_job j;
	int rc;

	rc = check_bn_fwd(p, x, scale, offset, mean, var, y, batch_mean,
			  batch_var, rs1, rs2, &rows, &ch, err);
	if (rc)
		return rc;
	if (x->dtype != TFK_DT_FLOAT || !rows)
		return tfk_cpu_batch_norm_ref(p, x, scale, offset, mean, var,
					      y, batch_mean, batch_var, rs1,
					      rs2, err);
	threads = bn_threads(threads, rows, ch);
	if (!work) {
		own = tfk_malloc(tfk_cpu_batch_norm_work(ch, threads) *
				 sizeof(double));
		if (!own)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		work = own;
	}
	m = work, v = m + ch, a = v + ch, b = a + ch;
	memset(&j, 0, sizeof(j));
	j.ch = ch;
	j.x = x->data;
	j.y = y->data;
	j.part = b + ch;
	mf = (float *)(j.part + 2 * (size_t)threads * ch);
	af = mf + ch, bf = af + ch;
	j.mf = mf, j.af = af, j.bf = bf;
	if (p->is_training) {
		j.pass = 0;
		tfk_parallel_for(threads, rows, bn_chunk, &j);
		bn_combine(&j, rows, threads, m, NULL);
		for (c = 0; c < ch; c++) {
			m[c] /= rows;
			mf[c] = (float)m[c];
		}
		j.pass = 1;
		tfk_parallel_for(threads, rows, bn_chunk, &j);
		bn_combine(&j, rows, threads, v, NULL);
		for (c = 0; c < ch; c++)
			v[c] /= rows;
	} else {
		for (c = 0; c < ch; c++) {
			m[c] = ((const float *)mean->data)[c];
			v[c] = ((const float *)var->data)[c];
		}
	}
	for (c = 0; c < ch; c++) {
		double inv = 1 / sqrt(v[c] + p->epsilon);
		double bm = m[c], bv = v[c];

		a[c] = inv * ((const float *)scale->data)[c];
		if (p->is_training) {
			bv *= bessel(rows);
			if (p->avg_factor != 1) {
				double f = p->avg_factor;

				bm = (1 - f) * ((const float *)mean->data)[c] +
					f * bm;
				bv = (1 - f) * ((const float *)var->data)[c] +
					f * bv;
			}
		}
		((float *)batch_mean->data)[c] = (float)bm;
		((float *)batch_var->data)[c] = (float)bv;
		((float *)rs1->data)[c] = (float)m[c];
		((float *)rs2->data)[c] = (float)v[c];
		af[c] = (float)a[c];
		bf[c] = ((const float *)offset->data)[c];
		mf[c] = (float)m[c];
	}
	j.pass = 2;
	tfk_parallel_for(threads, rows, bn_chunk, &j);
	tfk_free(own);
	return 0;
}

int tfk_cpu_batch_norm_grad_ref(const struct tfk_bn *p,
				const struct tfk_tensor *dy,
				const struct tfk_tensor *x,
				const struct tfk_tensor *scale,
				const struct tfk_tensor *rs1,
				const struct tfk_tensor *rs2,
				struct tfk_tensor *dx,
				struct tfk_tensor *dscale,
				struct tfk_tensor *doffset,
				struct tfk_err *err)
{
	enum tfk_dtype t = x->dtype;
	int64_t rows, ch, r, c;
	int rc = check_bn_grad(dy, x, scale, rs1, rs2, dx, dscale, doffset,
			       &rows, &ch, err);

	if (rc)
		return rc;
	for (c = 0; c < ch; c++) {
		double m = getd(rs1->data, t, c);
		double inv = 1 / sqrt(getd(rs2->data, t, c) + p->epsilon);
		double sc = getd(scale->data, t, c), sg = 0, sgx = 0;

		for (r = 0; r < rows; r++) {
			double g = getd(dy->data, t, r * ch + c);

			sg += g;
			sgx += g * (getd(x->data, t, r * ch + c) - m) * inv;
		}
		for (r = 0; r < rows; r++) {
			double g = getd(dy->data, t, r * ch + c);
			double xh = (getd(x->data, t, r * ch + c) - m) * inv;

			putd(dx->data, t, r * ch + c, p->is_training ?
			     sc * inv * (g - sg / rows - xh * sgx / rows) :
			     g * sc * inv);
		}
		putd(dscale->data, t, c, sgx);
		putd(doffset->data, t, c, sg);
	}
	return 0;
}

int tfk_cpu_batch_norm_grad(const struct tfk_bn *p,
			    const struct tfk_tensor *dy,
			    const struct tfk_tensor *x,
			    const struct tfk_tensor *scale,
			    const struct tfk_tensor *rs1,
			    const struct tfk_tensor *rs2,
			    struct tfk_tensor *dx, struct tfk_tensor *dscale,
			    struct tfk_tensor *doffset, int threads,
			    double *work, struct tfk_err *err)
{
	int64_t rows, ch, c;
	double *own = NULL, *m, *inv, *a, *b, *sg, *sgx;
	float *mf, *af, *bf, *cf;
	struct bn_job j;
	int rc = check_bn_grad(dy, x, scale, rs1, rs2, dx, dscale, doffset,
			       &rows, &ch, err);

	if (rc)
		return rc;
	if (x->dtype != TFK_DT_FLOAT || !rows)
		return tfk_cpu_batch_norm_grad_ref(p, dy, x, scale, rs1, rs2,
						   dx, dscale, doffset, err);
	threads = bn_threads(threads, rows, ch);
	if (!work) {
		own = tfk_malloc(tfk_cpu_batch_norm_work(ch, threads) *
				 sizeof(double));
		if (!own)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		work = own;
	}
	/* layout: m, inv(=mean dy in pass 4), a, b, then partials; the sums
	 * land in a and b before they are turned into coefficients */
	m = work, inv = m + ch, a = inv + ch, b = a + ch;
	sg = a, sgx = b;
	memset(&j, 0, sizeof(j));
	j.ch = ch;
	j.x = x->data;
	j.dy = dy->data;
	j.y = dx->data;
	j.part = b + ch;
	mf = (float *)(j.part + 2 * (size_t)threads * ch);
	af = mf + ch, bf = af + ch, cf = bf + ch;
	j.mf = mf, j.af = af, j.bf = bf, j.cf = cf;
	for (c = 0; c < ch; c++) {
		m[c] = ((const float *)rs1->data)[c];
		mf[c] = (float)m[c];
	}
	j.pass = 3;
	tfk_parallel_for(threads, rows, bn_chunk, &j);
	bn_combine(&j, rows, threads, sg, sgx);
	for (c = 0; c < ch; c++) {
		double iv = 1 / sqrt(((const float *)rs2->data)[c] +
				     p->epsilon);
		double sc = ((const float *)scale->data)[c];
		double s1 = sg[c], s2 = sgx[c] * iv;	/* sum dy * xhat */

		((float *)dscale->data)[c] = (float)s2;
		((float *)doffset->data)[c] = (float)s1;
		/* dx = sc iv (dy - s1/n - xhat s2/n)
		 *    = a (dy - s1/n) - (x - m) * (sc iv^2 s2 / n) */
		a[c] = sc * iv;
		if (p->is_training) {
			inv[c] = s1 / rows;
			b[c] = sc * iv * iv * s2 / rows;
		} else {
			inv[c] = 0;
			b[c] = 0;
		}
		af[c] = (float)a[c];
		bf[c] = (float)b[c];
		cf[c] = (float)inv[c];
	}
	j.pass = 4;
	tfk_parallel_for(threads, rows, bn_chunk, &j);
	tfk_free(own);
	return 0;
}

/* Shape inference -------------------------------------------------------- */

static int infer_grad2(struct tfk_infer_ctx *ic)
{
	int i, rc = infer_agree2(ic);

	if (rc)
		return rc;
	ic->out[0].rank = ic->in[0].rank;
	memcpy(ic->out[0].shape, ic->in[0].shape, sizeof(ic->in[0].shape));
	for (i = 0; i < ic->out[0].rank; i++)
		if (ic->out[0].shape[i] < 0)
			ic->out[0].shape[i] = ic->in[1].shape[i];
	return 0;
}

static int infer_log_softmax(struct tfk_infer_ctx *ic)
{
	if (ic->in[0].rank == 0)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: log softmax of "
				"a scalar (need rank >= 1)");
	ic->out[0] = ic->in[0];
	return 0;
}

/* Merge two dims that must agree: -1 takes the other. */
static int merge_dim(int64_t a, int64_t b, int64_t *out)
{
	if (a >= 0 && b >= 0 && a != b)
		return -1;
	*out = a >= 0 ? a : b;
	return 0;
}

static int infer_xent(struct tfk_infer_ctx *ic)
{
	int sparse = ic->in[1].dtype == TFK_DT_INT32 ||
		ic->in[1].dtype == TFK_DT_INT64;
	const struct tfk_tdesc *f = &ic->in[0], *l = &ic->in[1];
	int64_t b = -1, c = -1;
	char s1[128], s2[128];

	if (f->rank >= 0 && f->rank != 2)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: features must "
				"be 2-D [batch, classes], got %s",
				tfk_shape_str(f->rank, f->shape, s1,
					      sizeof(s1)));
	if (f->rank == 2)
		b = f->shape[0], c = f->shape[1];
	if (l->rank >= 0 && l->rank != (sparse ? 1 : 2))
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: labels must be "
				"%s, got %s", sparse ? "1-D [batch]" :
				"2-D [batch, classes]",
				tfk_shape_str(l->rank, l->shape, s1,
					      sizeof(s1)));
	if (l->rank >= 1 && (merge_dim(b, l->shape[0], &b) ||
			     (!sparse && merge_dim(c, l->shape[1], &c))))
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: labels %s do "
				"not match features %s",
				tfk_shape_str(l->rank, l->shape, s1,
					      sizeof(s1)),
				tfk_shape_str(f->rank, f->shape, s2,
					      sizeof(s2)));
	ic->out[0].rank = 1;
	ic->out[0].shape[0] = b;
	ic->out[1].rank = 2;
	ic->out[1].shape[0] = b;
	ic->out[1].shape[1] = c;
	return 0;
}

static int vec_desc(struct tfk_tdesc *d, int64_t c)
{
	d->rank = 1;
	d->shape[0] = c;
	return 0;
}

/* Check input k is [c] (or, when empty_ok, [0]); -1 dims pass. */
static int check_vec(struct tfk_infer_ctx *ic, int k, int64_t *c,
		     int empty_ok)
{
	const struct tfk_tdesc *d = &ic->in[k];
	char s[128];

	if (d->rank < 0)
		return 0;
	if (d->rank != 1)
		return tfk_errf(ic->err, TFK_EINVAL, "input %d: must be 1-D "
				"[channels], got %s", k,
				tfk_shape_str(d->rank, d->shape, s, sizeof(s)));
	if (empty_ok && d->shape[0] == 0)
		return 0;
	if (merge_dim(*c, d->shape[0], c))
		return tfk_errf(ic->err, TFK_EINVAL, "input %d: %lld values "
				"for %lld channels", k, (long long)d->shape[0],
				(long long)*c);
	return 0;
}

static int check_format(const struct tfk_node *n, struct tfk_err *err)
{
	const struct tfk_attr_value *f = tfk_node_attr(n, "data_format");

	if (f && strcmp(f->s.p, "NHWC") && strcmp(f->s.p, "NDHWC"))
		return tfk_errf(err, TFK_EINVAL, "data_format %s not "
				"supported (only channels last: NHWC, NDHWC)",
				f->s.p);
	return 0;
}

/* data_format, and x = input xi (rank 2 to 5, channels last): *c is its
 * channel count (-1 while unknown). */
static int bn_x(struct tfk_infer_ctx *ic, int xi, int64_t *c)
{
	const struct tfk_tdesc *x = &ic->in[xi];
	int rc = check_format(ic->node, ic->err);
	char s[128];

	if (rc)
		return rc;
	if (x->rank >= 0 && (x->rank < 2 || x->rank > 5))
		return tfk_errf(ic->err, TFK_EINVAL, "input %d: x must have "
				"rank 2 to 5 (channels last), got %s", xi,
				tfk_shape_str(x->rank, x->shape, s, sizeof(s)));
	*c = x->rank > 0 ? x->shape[x->rank - 1] : -1;
	return 0;
}

static int infer_bn(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *x = &ic->in[0];
	int train = tfk_node_attr_b(ic->node, "is_training", 1);
	float f = tfk_node_attr_f(ic->node, "exponential_avg_factor", 1);
	int64_t c;
	int k, rc = bn_x(ic, 0, &c);

	for (k = 1; k < 5 && !rc; k++)
		rc = check_vec(ic, k, &c, k >= 3 && train && f == 1);
	if (rc)
		return rc;
	ic->out[0].rank = x->rank;
	memcpy(ic->out[0].shape, x->shape, sizeof(x->shape));
	if (x->rank > 0)
		ic->out[0].shape[x->rank - 1] = c;
	for (k = 1; k < 5; k++)
		vec_desc(&ic->out[k], c);
	ic->out[5].rank = 0;
	return 0;
}

static int infer_bn_grad(struct tfk_infer_ctx *ic)
{
	int64_t c;
	int k, rc = bn_x(ic, 1, &c);

	for (k = 2; k < 5 && !rc; k++)
		rc = check_vec(ic, k, &c, 0);
	if (rc)
		return rc;
	rc = infer_grad2(ic);	/* x_backprop: y_backprop and x agree */
	if (rc)
		return rc;
	vec_desc(&ic->out[1], c);
	vec_desc(&ic->out[2], c);
	vec_desc(&ic->out[3], 0);
	vec_desc(&ic->out[4], 0);
	return 0;
}

/* Kernels ---------------------------------------------------------------- */

static enum tfk_act act_of(const char *s)
{
	return !strncmp(s, "Relu6", 5) ? TFK_ACT_RELU6 :
		!strncmp(s, "Elu", 3) ? TFK_ACT_ELU :
		!strncmp(s, "Selu", 4) ? TFK_ACT_SELU :
		!strncmp(s, "LeakyRelu", 9) ? TFK_ACT_LEAKY_RELU :
		!strncmp(s, "Softplus", 8) ? TFK_ACT_SOFTPLUS : TFK_ACT_ERF;
}

static int k_act(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_act(act_of(kc->node->op->name),
			   tfk_node_attr_f(kc->node, "alpha", 0.2f), kc->in[0],
			   kc->out[0], kc->err);
}

static int k_act_grad(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_act_grad(act_of(kc->node->op->name),
				tfk_node_attr_f(kc->node, "alpha", 0.2f),
				kc->in[0], kc->in[1], kc->out[0], kc->err);
}

static int k_log_softmax(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_log_softmax(kc->in[0], kc->out[0], kc->err);
}

static int k_xent(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_xent(kc->in[0], kc->in[1], kc->out[0], kc->out[1],
			    kc->err);
}

static int k_sparse_xent(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_sparse_xent(kc->in[0], kc->in[1], kc->out[0],
				   kc->out[1], kc->err);
}

/* The kernel's scratch, kept in its state slot across runs. */
struct bn_state {
	size_t n;
	double w[];
};

static double *bn_work(struct tfk_kernel_ctx *kc, int64_t ch)
{
	struct bn_state *s = *kc->state;
	size_t n = tfk_cpu_batch_norm_work(ch, kc->threads);

	if (s && s->n >= n)
		return s->w;
	tfk_free(s);
	*kc->state = s = tfk_malloc(sizeof(*s) + n * sizeof(double));
	if (!s)
		return NULL;
	s->n = n;
	return s->w;
}

static void bn_params(const struct tfk_node *n, struct tfk_bn *p)
{
	p->epsilon = tfk_node_attr_f(n, "epsilon", 1e-4f);
	p->avg_factor = tfk_node_attr_f(n, "exponential_avg_factor", 1);
	p->is_training = tfk_node_attr_b(n, "is_training", 1);
}

static int k_bn(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0];
	int64_t ch = x->rank > 0 ? x->shape[x->rank - 1] : 0;
	double *w = bn_work(kc, ch);
	struct tfk_bn p;

	if (!w)
		return tfk_errf(kc->err, TFK_ENOMEM, "out of memory");
	bn_params(kc->node, &p);
	if (tfk_tensor_numel(kc->out[5]))
		memset(kc->out[5]->data, 0, kc->out[5]->nbytes);
	return tfk_cpu_batch_norm(&p, x, kc->in[1], kc->in[2], kc->in[3],
				  kc->in[4], kc->out[0], kc->out[1],
				  kc->out[2], kc->out[3], kc->out[4],
				  kc->threads, w, kc->err);
}

static int k_bn_grad(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[1];
	int64_t ch = x->rank > 0 ? x->shape[x->rank - 1] : 0;
	double *w = bn_work(kc, ch);
	struct tfk_bn p;

	if (!w)
		return tfk_errf(kc->err, TFK_ENOMEM, "out of memory");
	bn_params(kc->node, &p);
	return tfk_cpu_batch_norm_grad(&p, kc->in[0], x, kc->in[2], kc->in[3],
				       kc->in[4], kc->out[0], kc->out[1],
				       kc->out[2], kc->threads, w, kc->err);
}

static void bn_free(void *state)
{
	tfk_free(state);
}

static int k_copy(struct tfk_kernel_ctx *kc)
{
	if (kc->in[0]->nbytes != kc->out[0]->nbytes)
		return tfk_errf(kc->err, TFK_EINVAL, "copy of %zu bytes into "
				"%zu", kc->in[0]->nbytes, kc->out[0]->nbytes);
	if (kc->out[0]->nbytes)
		memcpy(kc->out[0]->data, kc->in[0]->data, kc->out[0]->nbytes);
	return 0;
}

/* Gradients -------------------------------------------------------------- */

static int add(struct tfk_grad_ctx *gc, const char *op, struct tfk_port a,
	       struct tfk_port b, int n_in, const struct tfk_attr *at,
	       int n_at, struct tfk_port *out)
{
	struct tfk_port in[2] = { a, b };

	return tfk_graph_add_node(gc->g, op, gc->prefix, in, n_in, at, n_at,
				  out, gc->err);
}

/* TF's _Relu6Grad/_EluGrad/_SeluGrad pass the forward output ... */
static int grad_act_out(struct tfk_grad_ctx *gc)
{
	char op[32];
	struct tfk_port y = { gc->node_id, 0 };

	snprintf(op, sizeof(op), "%sGrad", gc->node->op->name);
	return add(gc, op, gc->dy[0], y, 2, NULL, 0, &gc->dx[0]);
}

/* ... _LeakyReluGrad and _SoftplusGrad the forward input. */
static int grad_act_in(struct tfk_grad_ctx *gc)
{
	char op[32];
	struct tfk_attr a = TFK_A_FLOAT("alpha",
					tfk_node_attr_f(gc->node, "alpha",
							0.2f));

	snprintf(op, sizeof(op), "%sGrad", gc->node->op->name);
	return add(gc, op, gc->dy[0], gc->node->inputs[0], 2, &a,
		   !strcmp(gc->node->op->name, "LeakyRelu"), &gc->dx[0]);
}

/* A scalar Const of the dtype of port p. */
static int const_like(struct tfk_grad_ctx *gc, struct tfk_port p, double v,
		      struct tfk_port *out)
{
	enum tfk_dtype t = tfk_graph_desc(gc->g, p)->dtype;
	struct tfk_tensor c;
	float f = (float)v;
	int rc;

	tfk_tensor_init_view(&c, t, 0, NULL, t == TFK_DT_FLOAT ?
			     (void *)&f : (void *)&v, tfk_dtype_size(t),
			     TFK_OWN_BORROWED, NULL);
	rc = tfk_graph_const(gc->g, gc->prefix, &c, out, gc->err);
	return rc;
}

/* TF's _ErfGrad: grad * 2/sqrt(pi) * exp(-square(x)). */
static int grad_erf(struct tfk_grad_ctx *gc)
{
	struct tfk_port x = gc->node->inputs[0], k, p, none = { -1, 0 };
	int rc = const_like(gc, x, 1.1283791670955126, &k); /* 2/sqrt(pi) */

	if (!rc)
		rc = add(gc, "Mul", gc->dy[0], k, 2, NULL, 0, &k);
	if (!rc)
		rc = add(gc, "Square", x, none, 1, NULL, 0, &p);
	if (!rc)
		rc = add(gc, "Neg", p, none, 1, NULL, 0, &p);
	if (!rc)
		rc = add(gc, "Exp", p, none, 1, NULL, 0, &p);
	return rc ? rc : add(gc, "Mul", k, p, 2, NULL, 0, &gc->dx[0]);
}

/* TF's _LogSoftmaxGrad: grad - sum(grad, -1, keepdims) * exp(y). */
static int grad_log_softmax(struct tfk_grad_ctx *gc)
{
	struct tfk_port y = { gc->node_id, 0 }, ax, s, e, none = { -1, 0 };
	struct tfk_attr keep = TFK_A_BOOL("keep_dims", 1);
	int32_t last = -1;
	int rc = tfk_graph_const_i32v(gc->g, gc->prefix, &last, 1, &ax,
				      gc->err);

	if (!rc)
		rc = add(gc, "Sum", gc->dy[0], ax, 2, &keep, 1, &s);
	if (!rc)
		rc = add(gc, "Exp", y, none, 1, NULL, 0, &e);
	if (!rc)
		rc = add(gc, "Mul", s, e, 2, NULL, 0, &s);
	return rc ? rc : add(gc, "Sub", gc->dy[0], s, 2, NULL, 0, &gc->dx[0]);
}

/* TF's _BroadcastMul(vec, mat): vec[:, None] * mat (ExpandDims there;
 * Reshape to [-1, 1] here: the same values, and Reshape is core). */
static int bcast_mul(struct tfk_grad_ctx *gc, struct tfk_port vec,
		     struct tfk_port mat, struct tfk_port *out)
{
	static const int32_t col[2] = { -1, 1 };
	struct tfk_port s;
	int rc = tfk_graph_const_i32v(gc->g, gc->prefix, col, 2, &s, gc->err);

	if (!rc)
		rc = add(gc, "Reshape", vec, s, 2, NULL, 0, &vec);
	return rc ? rc : add(gc, "Mul", vec, mat, 2, NULL, 0, out);
}

/*
 * TF's _SoftmaxCrossEntropyWithLogitsGrad and the sparse one: dx =
 * dloss[:, None] * backprop; the dense op's labels get dloss[:, None] *
 * -log_softmax(logits); the sparse op's labels none. A gradient
 * reaching the backprop output (second order) is refused.
 */
static int grad_xent(struct tfk_grad_ctx *gc)
{
	int sparse = gc->node->n_inputs == 2 &&
		!strncmp(gc->node->op->name, "Sparse", 6);
	struct tfk_port bp = { gc->node_id, 1 }, ls, k, none = { -1, 0 };
	int rc;

	if (gc->dy[1].node >= 0)
		return tfk_errf(gc->err, TFK_EINVAL, "node %s: gradient "
				"through output 1 (backprop) is not "
				"supported", gc->node->name);
	if (gc->dy[0].node < 0)
		return 0;
	rc = bcast_mul(gc, gc->dy[0], bp, &gc->dx[0]);
	if (rc || sparse)
		return rc;
	rc = add(gc, "LogSoftmax", gc->node->inputs[0], none, 1, NULL, 0,
		 &ls);
	if (!rc)
		rc = const_like(gc, ls, -1, &k);
	if (!rc)
		rc = add(gc, "Mul", ls, k, 2, NULL, 0, &ls);
	return rc ? rc : bcast_mul(gc, gc->dy[0], ls, &gc->dx[1]);
}

/* TF's _BaseFusedBatchNormGrad (version 2, V3): training uses the saved
 * batch statistics (reserve spaces), inference the population ones
 * (inputs 3, 4). Gradients reaching batch_mean/batch_variance are
 * dropped, as TF's are. */
static int grad_bn(struct tfk_grad_ctx *gc)
{
	const struct tfk_node *n = gc->node;
	int train = tfk_node_attr_b(n, "is_training", 1);
	const struct tfk_attr_value *fmt = tfk_node_attr(n, "data_format");
	struct tfk_attr at[3] = {
		TFK_A_FLOAT("epsilon", tfk_node_attr_f(n, "epsilon", 1e-4f)),
		TFK_A_BOOL("is_training", train),
		{ "data_format", *fmt },
	};
	struct tfk_port in[6], out;
	int rc;

	if (gc->dy[0].node < 0)
		return 0;
	in[0] = gc->dy[0];
	in[1] = n->inputs[0];
	in[2] = n->inputs[1];
	if (train) {
		in[3] = (struct tfk_port){ gc->node_id, 3 };
		in[4] = (struct tfk_port){ gc->node_id, 4 };
	} else {
		in[3] = n->inputs[3];
		in[4] = n->inputs[4];
	}
	in[5] = (struct tfk_port){ gc->node_id, 5 };
	rc = tfk_graph_add_node(gc->g, "FusedBatchNormGradV3", gc->prefix, in,
				6, at, 3, &out, gc->err);
	if (rc)
		return rc;
	gc->dx[0] = out;
	gc->dx[1] = (struct tfk_port){ out.node, 1 };
	gc->dx[2] = (struct tfk_port){ out.node, 2 };
	return 0;
}

/* StopGradient: no gradient flows (TF's NotDifferentiable). */
static int grad_none(struct tfk_grad_ctx *gc)
{
	return 0;
}

/* PreventGradient: an error, with TF's wording. */
static int grad_prevent(struct tfk_grad_ctx *gc)
{
	const struct tfk_attr_value *m = tfk_node_attr(gc->node, "message");

	return tfk_errf(gc->err, TFK_EINVAL, "node %s: gradient explicitly "
			"disabled. Reason: %s", gc->node->name,
			m && m->s.p ? m->s.p : "");
}

/* Tables ----------------------------------------------------------------- */

#define T_ATTR(allowed) { "T", TFK_ATTR_TYPE, 0, { 0 }, (allowed) }
#define ACT(nm, g) {							\
	.name = nm,							\
	.inputs = { { "features", .type_attr = "T" } },			\
	.outputs = { { "activations", .type_attr = "T" } },		\
	.attrs = { T_ATTR(FLOATS) },					\
	.grad = g,							\
}
#define ACT_GRAD(nm, second) {						\
	.name = nm,							\
	.inputs = { { "gradients", .type_attr = "T" },			\
		    { second, .type_attr = "T" } },			\
	.outputs = { { "backprops", .type_attr = "T" } },		\
	.attrs = { T_ATTR(FLOATS) },					\
	.infer = infer_grad2,						\
}
#define ALPHA { "alpha", TFK_ATTR_FLOAT, 1, { .f = 0.2f } }
#define T_FLOAT_DEF { "T", TFK_ATTR_TYPE, 1, { .type = TFK_DT_FLOAT }, FLOATS }
#define BN_ATTRS_HEAD							\
	T_ATTR(FLOATS),							\
	{ "U", TFK_ATTR_TYPE, 0, { 0 }, FLOATS },			\
	{ "epsilon", TFK_ATTR_FLOAT, 1, { .f = 1e-4f } }
#define BN_FORMAT { "data_format", TFK_ATTR_STRING, 1, { .s = { "NHWC", 4 } } }
#define BN_TRAIN { "is_training", TFK_ATTR_BOOL, 1, { .b = 1 } }

const struct tfk_op_def tfk_ops_nn[] = {
	ACT("Relu6", grad_act_out),
	ACT_GRAD("Relu6Grad", "features"),
	ACT("Elu", grad_act_out),
	ACT_GRAD("EluGrad", "outputs"),
	ACT("Selu", grad_act_out),
	ACT_GRAD("SeluGrad", "outputs"),
	ACT("Softplus", grad_act_in),
	ACT_GRAD("SoftplusGrad", "features"),
	{
		.name = "LeakyRelu",
		.inputs = { { "features", .type_attr = "T" } },
		.outputs = { { "activations", .type_attr = "T" } },
		.attrs = { ALPHA, T_FLOAT_DEF },
		.grad = grad_act_in,
	},
	{
		.name = "LeakyReluGrad",
		.inputs = { { "gradients", .type_attr = "T" },
			    { "features", .type_attr = "T" } },
		.outputs = { { "backprops", .type_attr = "T" } },
		.attrs = { ALPHA, T_FLOAT_DEF },
		.infer = infer_grad2,
	},
	{
		.name = "Erf",
		.inputs = { { "x", .type_attr = "T" } },
		.outputs = { { "y", .type_attr = "T" } },
		.attrs = { T_ATTR(FLOATS) },
		.grad = grad_erf,
	},
	{
		.name = "LogSoftmax",
		.inputs = { { "logits", .type_attr = "T" } },
		.outputs = { { "logsoftmax", .type_attr = "T" } },
		.attrs = { T_ATTR(FLOATS) },
		.infer = infer_log_softmax,
		.grad = grad_log_softmax,
	},
	{
		.name = "SoftmaxCrossEntropyWithLogits",
		.inputs = { { "features", .type_attr = "T" },
			    { "labels", .type_attr = "T" } },
		.outputs = { { "loss", .type_attr = "T" },
			     { "backprop", .type_attr = "T" } },
		.attrs = { T_ATTR(FLOATS) },
		.infer = infer_xent,
		.grad = grad_xent,
	},
	{
		.name = "SparseSoftmaxCrossEntropyWithLogits",
		.inputs = { { "features", .type_attr = "T" },
			    { "labels", .type_attr = "Tlabels" } },
		.outputs = { { "loss", .type_attr = "T" },
			     { "backprop", .type_attr = "T" } },
		.attrs = {
			T_ATTR(FLOATS),
			{ "Tlabels", TFK_ATTR_TYPE, 1,
			  { .type = TFK_DT_INT64 }, INDEX },
		},
		.infer = infer_xent,
		.grad = grad_xent,
	},
	{
		.name = "FusedBatchNormV3",
		.inputs = { { "x", .type_attr = "T" },
			    { "scale", .type_attr = "U" },
			    { "offset", .type_attr = "U" },
			    { "mean", .type_attr = "U" },
			    { "variance", .type_attr = "U" } },
		.outputs = { { "y", .type_attr = "T" },
			     { "batch_mean", .type_attr = "U" },
			     { "batch_variance", .type_attr = "U" },
			     { "reserve_space_1", .type_attr = "U" },
			     { "reserve_space_2", .type_attr = "U" },
			     { "reserve_space_3", .type_attr = "U" } },
		.attrs = {
			BN_ATTRS_HEAD,
			{ "exponential_avg_factor", TFK_ATTR_FLOAT, 1,
			  { .f = 1.0f } },
			BN_FORMAT,
			BN_TRAIN,
		},
		.infer = infer_bn,
		.grad = grad_bn,
	},
	{
		.name = "FusedBatchNormGradV3",
		.inputs = { { "y_backprop", .type_attr = "T" },
			    { "x", .type_attr = "T" },
			    { "scale", .type_attr = "U" },
			    { "reserve_space_1", .type_attr = "U" },
			    { "reserve_space_2", .type_attr = "U" },
			    { "reserve_space_3", .type_attr = "U" } },
		.outputs = { { "x_backprop", .type_attr = "T" },
			     { "scale_backprop", .type_attr = "U" },
			     { "offset_backprop", .type_attr = "U" },
			     { "reserve_space_4", .type_attr = "U" },
			     { "reserve_space_5", .type_attr = "U" } },
		.attrs = { BN_ATTRS_HEAD, BN_FORMAT, BN_TRAIN },
		.infer = infer_bn_grad,
	},
	{
		.name = "StopGradient",
		.inputs = { { "input", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { T_ATTR(0) },
		.grad = grad_none,
	},
	{
		.name = "PreventGradient",
		.inputs = { { "input", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = {
			T_ATTR(0),
			{ "message", TFK_ATTR_STRING, 1, { .s = { "", 0 } } },
		},
		.grad = grad_prevent,
	},
	{ .name = NULL }
};

/* T and U must agree: the kernels compute in one precision. */
static int s_bn(const struct tfk_node *n)
{
	return tfk_node_attr_type(n, "T", 0) == tfk_node_attr_type(n, "U", 0);
}

const struct tfk_kernel tfk_kernels_cpu_nn[] = {
	{ "Relu6", "cpu", NULL, k_act, NULL },
	{ "Relu6Grad", "cpu", NULL, k_act_grad, NULL },
	{ "Elu", "cpu", NULL, k_act, NULL },
	{ "EluGrad", "cpu", NULL, k_act_grad, NULL },
	{ "Selu", "cpu", NULL, k_act, NULL },
	{ "SeluGrad", "cpu", NULL, k_act_grad, NULL },
	{ "Softplus", "cpu", NULL, k_act, NULL },
	{ "SoftplusGrad", "cpu", NULL, k_act_grad, NULL },
	{ "LeakyRelu", "cpu", NULL, k_act, NULL },
	{ "LeakyReluGrad", "cpu", NULL, k_act_grad, NULL },
	{ "Erf", "cpu", NULL, k_act, NULL },
	{ "LogSoftmax", "cpu", NULL, k_log_softmax, NULL },
	{ "SoftmaxCrossEntropyWithLogits", "cpu", NULL, k_xent, NULL },
	{ "SparseSoftmaxCrossEntropyWithLogits", "cpu", NULL, k_sparse_xent,
	  NULL },
	{ "FusedBatchNormV3", "cpu", s_bn, k_bn, bn_free },
	{ "FusedBatchNormGradV3", "cpu", s_bn, k_bn_grad, bn_free },
	{ "StopGradient", "cpu", NULL, k_copy, NULL },
	{ "PreventGradient", "cpu", NULL, k_copy, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
