/*
 * tfcompat.c - ops that TensorFlow graphs (SavedModels) use and the
 * training engine did not need: Add (TF1's name for AddV2 on numbers),
 * AddN, Select (TF1's: a condition of the same shape, a vector along
 * dim 0, or a scalar), BatchMatMulV2 (broadcast batch dims, adj_x/adj_y;
 * OpenBLAS per matrix), Range, PlaceholderWithDefault, NoOp, and
 * _ParseExampleDense, the one-feature form the graph importer
 * (model/import.c) lowers ParseExample and ParseExampleV2 to. Forward
 * only: these run imported inference graphs, nothing trains through
 * them.
 *
 * Why a lowering for ParseExample and not the op itself: its outputs are
 * a list of per-feature dtypes (attr Tdense, list(type)), which the op
 * registry cannot express (an arg repeats one dtype, op.h), and its
 * dense keys are Const inputs that only make sense at import time. So
 * the importer makes one _ParseExampleDense node per dense key, with
 * the key, dtype and shape as attrs; the leading underscore marks it as
 * internal, as TF's own (_Arg, _FusedMatMul). Sparse and ragged
 * features are refused by the importer.
 *
 * _ParseExampleDense follows TF's ParseExample for dense features:
 * serialized is a vector [B] (or a scalar: output without the batch
 * dim); each Example's feature must hold exactly numel(dense_shape)
 * values of the dtype's kind (float_list for float32, int64_list for
 * int64, bytes_list for string); a missing feature takes the default
 * (input 1) when it has numel(dense_shape) elements and is an error
 * when the default is empty (TF's "required" features). String
 * outputs point into the serialized input's bytes (no copies): the
 * executor keeps feeds alive for the run.
 *
 * _AssignVariable is what the importer lowers TF's variable writes to
 * (Assign, AssignAdd, AssignSub on a VariableV2 ref; AssignVariableOp,
 * AssignAddVariableOp, AssignSubVariableOp on a resource): input 0 is
 * the port of a VariableV2 node, whose tensor the executor hands over
 * as the graph's own storage (exec.h), and the kernel writes it in
 * place (attr mode: 0 set, 1 add, 2 subtract) and copies the new value
 * to its output, which is what TF1's ref output reads. It is stateful:
 * never folded, and the importer makes it a target of the run.
 */
#include "kernels/cpu.h"
#include "example/example.h"
#include "graph/graph.h"
#include "graph/op.h"
#include "util/alloc.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define NUMBERS (TFK_DT_BIT(TFK_DT_FLOAT) | TFK_DT_BIT(TFK_DT_DOUBLE) | \
		 TFK_DT_BIT(TFK_DT_INT32) | TFK_DT_BIT(TFK_DT_INT64))

/* Add ---------------------------------------------------------------- */

static int infer_add(struct tfk_infer_ctx *ic)
{
	int rc = tfk_shape_broadcast(ic->in[0].rank, ic->in[0].shape,
				     ic->in[1].rank, ic->in[1].shape,
				     &ic->out[0].rank, ic->out[0].shape,
				     ic->err);

	return rc ? tfk_err_prefix(ic->err, "inputs 0 and 1") : 0;
}

static int k_add(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_binary(TFK_BIN_ADD, kc->in[0], kc->in[1], kc->out[0],
			      kc->err);
}

/* PlaceholderWithDefault ------------------------------------------------ */

/* The output has the input's shape; the shape attr may be less exact
 * (TF checks compatibility, so do we). */
static int infer_pwd(struct tfk_infer_ctx *ic)
{
	const struct tfk_attr_value *s = tfk_node_attr(ic->node, "shape");
	const struct tfk_tdesc *x = &ic->in[0];
	char a[96], b[96];
	int i;

	ic->out[0] = *x;
	ic->out[0].dtype = x->dtype;
	if (!s || s->shape.rank < 0 || x->rank < 0)
		return 0;
	if (s->shape.rank != x->rank)
		goto bad;
	for (i = 0; i < x->rank; i++)
		if (s->shape.dims[i] >= 0 && x->shape[i] >= 0 &&
		    s->shape.dims[i] != x->shape[i])
			goto bad;
	return 0;
bad:
	return tfk_errf(ic->err, TFK_EINVAL, "input 0: shape %s does not fit "
			"attr shape %s", tfk_shape_str(x->rank, x->shape, a,
						       sizeof(a)),
			tfk_shape_str(s->shape.rank, s->shape.dims, b,
				      sizeof(b)));
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

static int k_noop(struct tfk_kernel_ctx *kc)
{
	(void)kc;
	return 0;
}

/* _AssignVariable ------------------------------------------------------ */

static int infer_assign(struct tfk_infer_ctx *ic)
{
	int64_t a = 1, b = 1;

	/* unknown dims (-1) while building: checked at run time */
	if (!tfk_shape_numel(ic->in[0].rank, ic->in[0].shape, 0, &a, NULL) &&
	    !tfk_shape_numel(ic->in[1].rank, ic->in[1].shape, 0, &b, NULL) &&
	    a != b && b != 1)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: %" PRId64
				" values for a variable of %" PRId64, b, a);
	ic->out[0].rank = ic->in[0].rank;
	memcpy(ic->out[0].shape, ic->in[0].shape, sizeof(ic->out[0].shape));
	return 0;
}

#define ASSIGN_LOOP(T) do { \
		T *d = (T *)v->data; \
		const T *x = (const T *)y->data; \
		for (i = 0; i < n; i++) { \
			T e = x[ny == 1 ? 0 : i]; \
			d[i] = mode == 0 ? e : mode == 1 ? d[i] + e : d[i] - e; \
		} \
	} while (0)

static int k_assign(struct tfk_kernel_ctx *kc)
{
	/* the variable's own storage (exec.h: a VariableV2 output is the
	 * graph's tensor), written in place */
	struct tfk_tensor *v = (struct tfk_tensor *)kc->in[0];
	const struct tfk_tensor *y = kc->in[1];
	int64_t mode = tfk_node_attr_i(kc->node, "mode", 0);
	size_t es = tfk_dtype_size(v->dtype), n, ny, i;

	if (!es || v->nbytes % es || y->nbytes % es)
		return tfk_errf(kc->err, TFK_EINVAL, "variable of %s",
				tfk_dtype_name(v->dtype));
	n = v->nbytes / es;
	ny = y->nbytes / es;
	if (ny != n && ny != 1)
		return tfk_errf(kc->err, TFK_EINVAL, "%zu values for a "
				"variable of %zu", ny, n);
	switch (v->dtype) {
	case TFK_DT_FLOAT:
		ASSIGN_LOOP(float);
		break;
	case TFK_DT_DOUBLE:
		ASSIGN_LOOP(double);
		break;
	case TFK_DT_INT32:
		ASSIGN_LOOP(int32_t);
		break;
	case TFK_DT_INT64:
		ASSIGN_LOOP(int64_t);
		break;
	default:
		return tfk_errf(kc->err, TFK_EINVAL, "variable of %s",
				tfk_dtype_name(v->dtype));
	}
	if (kc->out[0]->nbytes == v->nbytes && v->nbytes)
		memcpy(kc->out[0]->data, v->data, v->nbytes);
	return 0;
}

/* _ParseExampleDense ---------------------------------------------------- */

static int infer_parse_dense(struct tfk_infer_ctx *ic)
{
	const struct tfk_attr_value *s = tfk_node_attr(ic->node,
						       "dense_shape");
	const struct tfk_tdesc *x = &ic->in[0];
	int r = s ? s->shape.rank : -1, i;

	if (r < 0)
		return tfk_errf(ic->err, TFK_EINVAL, "attr dense_shape: "
				"unknown rank");
	for (i = 0; i < r; i++)
		if (s->shape.dims[i] < 0)
			return tfk_errf(ic->err, TFK_EINVAL, "attr "
					"dense_shape: unknown dim %d (only "
					"fixed-size dense features)", i);
	if (x->rank > 1)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: serialized "
				"must be a scalar or a vector, got rank %d",
				x->rank);
	if (x->rank < 0) {
		ic->out[0].rank = -1;	/* known when fed */
		return 0;
	}
	if (r + x->rank > TFK_MAX_RANK)
		return tfk_errf(ic->err, TFK_EINVAL, "attr dense_shape: "
				"rank %d too large", r);
	ic->out[0].rank = x->rank + r;
	if (x->rank)
		ic->out[0].shape[0] = x->shape[0];
	memcpy(ic->out[0].shape + x->rank, s->shape.dims,
	       r * sizeof(int64_t));
	return 0;
}

struct parse_state {
	struct tfk_example ex;
};

static void parse_state_free(void *p)
{
	struct parse_state *st = p;

	if (!st)
		return;
	tfk_example_release(&st->ex);
	tfk_free(st);
}

static int want_kind(enum tfk_dtype t)
{
	return t == TFK_DT_FLOAT ? TFK_FEAT_FLOAT :
		t == TFK_DT_INT64 ? TFK_FEAT_INT64 : TFK_FEAT_BYTES;
}

/* Copy one Example's feature f (n values wanted) into out at element
 * off. 0 or TFK_EINVAL with a message about record b. */
static int copy_feat(const struct tfk_feat *f, struct tfk_tensor *out,
		     int64_t off, int64_t n, int64_t b, const char *key,
		     struct tfk_err *err)
{
	long got;

	if (f->kind != want_kind(out->dtype))
		return tfk_errf(err, TFK_EINVAL, "serialized[%" PRId64 "]: "
				"feature '%s': expected %s values, got %s",
				b, key, tfk_feat_kind_name(
					want_kind(out->dtype)),
				tfk_feat_kind_name(f->kind));
	if ((int64_t)f->n != n)
		return tfk_errf(err, TFK_EINVAL, "serialized[%" PRId64 "]: "
				"feature '%s': expected %" PRId64 " values, "
				"got %zu", b, key, n, f->n);
	if (out->dtype == TFK_DT_FLOAT) {
		got = tfk_feat_floats(f, (float *)out->data + off, n);
	} else if (out->dtype == TFK_DT_INT64) {
		got = tfk_feat_int64s(f, (int64_t *)out->data + off, n);
	} else {
		struct tfk_str *s = (struct tfk_str *)out->data + off;
		const uint8_t *p;
		size_t it = 0, len;
		int64_t i;

		for (i = 0; i < n; i++) {
			if (tfk_feat_bytes_next(f, &it, &p, &len) <= 0)
				break;
			s[i].ptr = (const char *)p;
			s[i].len = len;
		}
		got = (long)i;
	}
	if (got != n)
		return tfk_errf(err, TFK_EINVAL, "serialized[%" PRId64 "]: "
				"feature '%s': unreadable values", b, key);
	return 0;
}

static int k_parse_dense(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *ser = kc->in[0], *def = kc->in[1];
	struct tfk_tensor *out = kc->out[0];
	const struct tfk_attr_value *ka = tfk_node_attr(kc->node, "key");
	const char *key = ka ? ka->s.p : "";
	struct parse_state *st = *kc->state;
	int64_t nb = ser->rank ? ser->shape[0] : 1, per, b;
	size_t esz = tfk_dtype_size(out->dtype);
	int rc;

	per = nb ? tfk_tensor_numel(out) / nb : 0;
	if (tfk_tensor_numel(def) != 0 && tfk_tensor_numel(def) != per)
		return tfk_errf(kc->err, TFK_EINVAL, "input 1: default of "
				"feature '%s' has %" PRId64 " values, the "
				"feature %" PRId64, key,
				tfk_tensor_numel(def), per);
	if (!st) {
		st = tfk_calloc(1, sizeof(*st));
		if (!st)
			return tfk_errf(kc->err, TFK_ENOMEM, "out of memory");
		tfk_example_init(&st->ex);
		*kc->state = st;
	}
	for (b = 0; b < nb; b++) {
		struct tfk_str s = tfk_tensor_str(ser, b);
		const struct tfk_feat *f;

		/* an empty string is an empty Example (ptr may be NULL) */
		rc = tfk_example_parse(&st->ex, (const uint8_t *)(s.ptr ?
						s.ptr : ""), s.len, kc->err);
		if (rc)
			return tfk_err_prefix(kc->err, "serialized[%" PRId64
					      "]: not a tf.Example", b);
		f = tfk_example_findn(&st->ex, key, strlen(key));
		if (f && f->kind == TFK_FEAT_NONE && f->n == 0)
			f = NULL;
		if (f) {
			rc = copy_feat(f, out, b * per, per, b, key, kc->err);
			if (rc)
				return rc;
			continue;
		}
		if (tfk_tensor_numel(def) == 0)
			return tfk_errf(kc->err, TFK_EINVAL, "serialized[%"
					PRId64 "]: feature '%s' (%s) is "
					"required but could not be found", b,
					key, tfk_dtype_name(out->dtype));
		memcpy((char *)out->data + b * per * esz, def->data,
		       per * esz);
	}
	return 0;
}

/* AddN ------------------------------------------------------------------- */

static int infer_addn(struct tfk_infer_ctx *ic)
{
	char a[96], b[96];
	int i, d;

	ic->out[0].rank = ic->in[0].rank;
	memcpy(ic->out[0].shape, ic->in[0].shape, sizeof(ic->in[0].shape));
	for (i = 1; i < ic->n_in; i++) {
		const struct tfk_tdesc *x = &ic->in[i];

		if (x->rank < 0 || ic->out[0].rank < 0)
			continue;
		if (x->rank != ic->out[0].rank)
			goto bad;
		for (d = 0; d < x->rank; d++) {
			if (x->shape[d] >= 0 && ic->out[0].shape[d] >= 0 &&
			    x->shape[d] != ic->out[0].shape[d])
				goto bad;
			if (ic->out[0].shape[d] < 0)
				ic->out[0].shape[d] = x->shape[d];
		}
		continue;
bad:
		return tfk_errf(ic->err, TFK_EINVAL, "input %d: shape %s, "
				"input 0 has %s (AddN does not broadcast)", i,
				tfk_shape_str(x->rank, x->shape, a, sizeof(a)),
				tfk_shape_str(ic->in[0].rank, ic->in[0].shape,
					      b, sizeof(b)));
	}
	return 0;
}

static int k_addn(struct tfk_kernel_ctx *kc)
{
	struct tfk_tensor *o = kc->out[0];
	int64_t n = tfk_tensor_numel(o), j;
	int i;

	for (i = 0; i < kc->n_in; i++)
		if (tfk_tensor_numel(kc->in[i]) != n)
			return tfk_errf(kc->err, TFK_EINVAL, "input %d: %lld "
					"elements, the output %lld", i,
					(long long)tfk_tensor_numel(kc->in[i]),
					(long long)n);
#define SUMN(type)							\
	for (j = 0; j < n; j++) {					\
		type s = ((const type *)kc->in[0]->data)[j];		\
		for (i = 1; i < kc->n_in; i++)				\
			s += ((const type *)kc->in[i]->data)[j];	\
		((type *)o->data)[j] = s;				\
	}
	switch (o->dtype) {
	case TFK_DT_FLOAT: SUMN(float); break;
	case TFK_DT_DOUBLE: SUMN(double); break;
	case TFK_DT_INT32: SUMN(int32_t); break;
	case TFK_DT_INT64: SUMN(int64_t); break;
	default:
		return tfk_errf(kc->err, TFK_EINVAL, "dtype %s",
				tfk_dtype_name(o->dtype));
	}
#undef SUMN
	return 0;
}

/* Select (TF1): cond of t's shape, a vector along t's first dim, or a
 * scalar; no other broadcasting (that is SelectV2). */
static int infer_select(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *c = &ic->in[0], *t = &ic->in[1],
		*e = &ic->in[2];
	char a[96], b[96];
	int d, ok = 1;

	if (t->rank >= 0 && e->rank >= 0) {
		ok = t->rank == e->rank;
		for (d = 0; ok && d < t->rank; d++)
			ok = t->shape[d] < 0 || e->shape[d] < 0 ||
				t->shape[d] == e->shape[d];
		if (!ok)
			return tfk_errf(ic->err, TFK_EINVAL, "inputs 1 and 2: "
					"shapes %s and %s differ",
					tfk_shape_str(t->rank, t->shape, a,
						      sizeof(a)),
					tfk_shape_str(e->rank, e->shape, b,
						      sizeof(b)));
	}
	if (c->rank > 0 && t->rank >= 0 && c->rank != t->rank &&
	    !(c->rank == 1 && t->rank >= 1))
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: condition %s "
				"must be a scalar, a vector along the first "
				"dim, or of shape %s", tfk_shape_str(c->rank,
					c->shape, a, sizeof(a)),
				tfk_shape_str(t->rank, t->shape, b,
					      sizeof(b)));
	ic->out[0] = *t;
	ic->out[0].dtype = t->dtype;
	return 0;
}

static int k_select(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *c = kc->in[0], *t = kc->in[1], *e = kc->in[2];
	const uint8_t *cv = c->data;
	int64_t n = tfk_tensor_numel(t), nc = tfk_tensor_numel(c), per, i;
	size_t es = tfk_dtype_size(t->dtype);
	char a[96], b[96];

	if (tfk_tensor_numel(e) != n || (nc != n && nc != 1 &&
					  !(c->rank == 1 && t->rank >= 1 &&
					    nc == t->shape[0])))
		return tfk_errf(kc->err, TFK_EINVAL, "condition %s does not "
				"fit %s", tfk_shape_str(c->rank, c->shape, a,
							sizeof(a)),
				tfk_shape_str(t->rank, t->shape, b,
					      sizeof(b)));
	per = nc == n ? 1 : nc == 1 ? n : (nc ? n / nc : 0);
	for (i = 0; i < n; i++) {
		int64_t k = nc == n ? i : nc == 1 ? 0 : i / per;

		memcpy((char *)kc->out[0]->data + i * es,
		       (const char *)(cv[k] ? t->data : e->data) + i * es, es);
	}
	return 0;
}

/* BatchMatMulV2 -------------------------------------------------------- */

static int infer_bmm(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *x = &ic->in[0], *y = &ic->in[1];
	int ax = (int)tfk_node_attr_b(ic->node, "adj_x", 0);
	int ay = (int)tfk_node_attr_b(ic->node, "adj_y", 0);
	int64_t m, k1, k2, n;
	int r, rc;

	if (x->rank < 0 || y->rank < 0) {
		ic->out[0].rank = -1;
		return 0;
	}
	if (x->rank < 2 || y->rank < 2)
		return tfk_errf(ic->err, TFK_EINVAL, "inputs must have rank "
				">= 2, got %d and %d", x->rank, y->rank);
	m = x->shape[x->rank - 2 + ax];
	k1 = x->shape[x->rank - 1 - ax];
	k2 = y->shape[y->rank - 2 + ay];
	n = y->shape[y->rank - 1 - ay];
	if (k1 >= 0 && k2 >= 0 && k1 != k2)
		return tfk_errf(ic->err, TFK_EINVAL, "inner dims %lld and %lld "
				"differ", (long long)k1, (long long)k2);
	rc = tfk_shape_broadcast(x->rank - 2, x->shape, y->rank - 2, y->shape,
				 &r, ic->out[0].shape, ic->err);
	if (rc)
		return tfk_err_prefix(ic->err, "batch dims");
	if (r + 2 > TFK_MAX_RANK)
		return tfk_errf(ic->err, TFK_EINVAL, "rank too large");
	ic->out[0].rank = r + 2;
	ic->out[0].shape[r] = m;
	ic->out[0].shape[r + 1] = n;
	return 0;
}

/* Offset (in matrices) of batch index b of out in operand a of rank ra
 * (batch dims ra - 2, right-aligned, size-1 dims broadcast). */
static int64_t bmm_off(const struct tfk_tensor *a, const struct tfk_tensor *o,
		       int64_t b)
{
	int ro = o->rank - 2, ra = a->rank - 2, d;
	int64_t off = 0, st = 1;

	for (d = ro - 1; d >= 0; d--) {
		int64_t c = b % o->shape[d], da;

		b /= o->shape[d];
		if (d - (ro - ra) < 0)
			continue;
		da = a->shape[d - (ro - ra)];
		off += (da == 1 ? 0 : c) * st;
		st *= da;
	}
	return off;
}

static int k_bmm(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0], *y = kc->in[1];
	struct tfk_tensor *o = kc->out[0];
	int ax = tfk_node_attr_b(kc->node, "adj_x", 0);
	int ay = tfk_node_attr_b(kc->node, "adj_y", 0);
	int64_t m = o->shape[o->rank - 2], n = o->shape[o->rank - 1];
	int64_t k = x->shape[x->rank - 1 - ax], nb = 1, b;
	int d;

	for (d = 0; d < o->rank - 2; d++)
		nb *= o->shape[d];
	for (b = 0; b < nb; b++) {
		int64_t xo = bmm_off(x, o, b) * m * k;
		int64_t yo = bmm_off(y, o, b) * k * n;

		if (o->dtype == TFK_DT_FLOAT)
			tfk_cpu_sgemm(ax, ay, m, n, k,
				      (const float *)x->data + xo,
				      (const float *)y->data + yo,
				      (float *)o->data + b * m * n);
		else
			tfk_cpu_dgemm(ax, ay, m, n, k,
				      (const double *)x->data + xo,
				      (const double *)y->data + yo,
				      (double *)o->data + b * m * n);
	}
	return 0;
}

/* Range ------------------------------------------------------------------ */

static double scalar_d(const struct tfk_tensor *t)
{
	switch (t->dtype) {
	case TFK_DT_FLOAT: return *(const float *)t->data;
	case TFK_DT_DOUBLE: return *(const double *)t->data;
	case TFK_DT_INT32: return *(const int32_t *)t->data;
	default: return (double)*(const int64_t *)t->data;
	}
}

/* Element count of range(start, limit, delta), as TF's RangeOp. */
static int range_count(double s, double l, double d, int integral,
		       int64_t *n, struct tfk_err *err)
{
	double c;

	if (d == 0)
		return tfk_errf(err, TFK_EINVAL, "delta must not be 0");
	if ((d > 0 && s > l) || (d < 0 && s < l))
		return tfk_errf(err, TFK_EINVAL, "start %g and limit %g are "
				"not in the direction of delta %g", s, l, d);
	c = integral ? floor((fabs(l - s) + fabs(d) - 1) / fabs(d)) :
		ceil(fabs((l - s) / d));
	if (!(c < 1e15))
		return tfk_errf(err, TFK_EINVAL, "range too long");
	*n = (int64_t)c;
	return 0;
}

static int infer_range(struct tfk_infer_ctx *ic)
{
	int i;

	ic->out[0].rank = 1;
	ic->out[0].shape[0] = -1;
	for (i = 0; i < 3; i++)
		if (ic->in[i].rank > 0)
			return tfk_errf(ic->err, TFK_EINVAL, "input %d: must "
					"be a scalar", i);
	for (i = 0; i < 3; i++)
		if (!ic->in_value[i])
			return 0;
	return range_count(scalar_d(ic->in_value[0]),
			   scalar_d(ic->in_value[1]),
			   scalar_d(ic->in_value[2]),
			   ic->out[0].dtype == TFK_DT_INT32 ||
			   ic->out[0].dtype == TFK_DT_INT64,
			   &ic->out[0].shape[0], ic->err);
}

static int k_range(struct tfk_kernel_ctx *kc)
{
	struct tfk_tensor *o = kc->out[0];
	double s = scalar_d(kc->in[0]), d = scalar_d(kc->in[2]);
	int64_t i, n = tfk_tensor_numel(o);

	for (i = 0; i < n; i++)
		switch (o->dtype) {
		case TFK_DT_FLOAT:
			((float *)o->data)[i] = (float)(s + i * d);
			break;
		case TFK_DT_DOUBLE:
			((double *)o->data)[i] = s + i * d;
			break;
		case TFK_DT_INT32:
			((int32_t *)o->data)[i] = (int32_t)(*(const int32_t *)
				kc->in[0]->data + i * *(const int32_t *)
				kc->in[2]->data);
			break;
		default:
			((int64_t *)o->data)[i] = *(const int64_t *)
				kc->in[0]->data + i * *(const int64_t *)
				kc->in[2]->data;
		}
	return 0;
}

/* Tables ----------------------------------------------------------------- */

const struct tfk_op_def tfk_ops_tfcompat[] = {
	{
		.name = "Add",
		.inputs = { { "x", .type_attr = "T" },
			    { "y", .type_attr = "T" } },
		.outputs = { { "z", .type_attr = "T" } },
		.attrs = { { "T", TFK_ATTR_TYPE, 0, { 0 }, NUMBERS } },
		.infer = infer_add,
	},
	{
		.name = "PlaceholderWithDefault",
		.inputs = { { "input", .type_attr = "dtype" } },
		.outputs = { { "output", .type_attr = "dtype" } },
		.attrs = {
			{ "dtype", TFK_ATTR_TYPE },
			{ "shape", TFK_ATTR_SHAPE, 1,
			  { .shape = { .rank = -1 } } },
		},
		.infer = infer_pwd,
	},
	{
		.name = "NoOp",
		.flags = TFK_OP_STATEFUL,
	},
	{
		.name = "_AssignVariable",
		.inputs = { { "ref", .type_attr = "T" },
			    { "value", .type_attr = "T" } },
		.outputs = { { "output_ref", .type_attr = "T" } },
		.attrs = { { "T", TFK_ATTR_TYPE, 0, { 0 },
			     TFK_DT_BIT(TFK_DT_FLOAT) |
			     TFK_DT_BIT(TFK_DT_DOUBLE) |
			     TFK_DT_BIT(TFK_DT_INT32) |
			     TFK_DT_BIT(TFK_DT_INT64) },
			   { "mode", TFK_ATTR_INT, 1, { .i = 0 } } },
		.flags = TFK_OP_STATEFUL,
		.infer = infer_assign,
	},
	{
		.name = "_ParseExampleDense",
		.inputs = { { "serialized", TFK_DT_STRING },
			    { "default_value", .type_attr = "Tdense" } },
		.outputs = { { "dense_values", .type_attr = "Tdense" } },
		.attrs = {
			{ "key", TFK_ATTR_STRING },
			{ "Tdense", TFK_ATTR_TYPE, 0, { 0 },
			  TFK_DT_BIT(TFK_DT_FLOAT) |
			  TFK_DT_BIT(TFK_DT_INT64) |
			  TFK_DT_BIT(TFK_DT_STRING) },
			{ "dense_shape", TFK_ATTR_SHAPE },
		},
		.infer = infer_parse_dense,
	},
	{
		.name = "AddN",
		.inputs = { { "inputs", .type_attr = "T",
			      .number_attr = "N" } },
		.outputs = { { "sum", .type_attr = "T" } },
		.attrs = { { "N", TFK_ATTR_INT },
			   { "T", TFK_ATTR_TYPE, 0, { 0 }, NUMBERS } },
		.infer = infer_addn,
	},
	{
		.name = "Select",
		.inputs = { { "condition", TFK_DT_BOOL },
			    { "t", .type_attr = "T" },
			    { "e", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { { "T", TFK_ATTR_TYPE, 0, { 0 },
			     NUMBERS | TFK_DT_BIT(TFK_DT_BOOL) |
			     TFK_DT_BIT(TFK_DT_STRING) } },
		.infer = infer_select,
	},
	{
		.name = "BatchMatMulV2",
		.inputs = { { "x", .type_attr = "T" },
			    { "y", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { { "T", TFK_ATTR_TYPE, 0, { 0 },
			     TFK_DT_BIT(TFK_DT_FLOAT) |
			     TFK_DT_BIT(TFK_DT_DOUBLE) },
			   { "adj_x", TFK_ATTR_BOOL, 1, { .b = 0 } },
			   { "adj_y", TFK_ATTR_BOOL, 1, { .b = 0 } } },
		.infer = infer_bmm,
	},
	{
		.name = "Range",
		.inputs = { { "start", .type_attr = "Tidx" },
			    { "limit", .type_attr = "Tidx" },
			    { "delta", .type_attr = "Tidx" } },
		.outputs = { { "output", .type_attr = "Tidx" } },
		.attrs = { { "Tidx", TFK_ATTR_TYPE, 1,
			     { .type = TFK_DT_INT32 }, NUMBERS } },
		.infer = infer_range,
	},
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_tfcompat[] = {
	{ "Add", "cpu", NULL, k_add, NULL },
	{ "PlaceholderWithDefault", "cpu", NULL, k_copy, NULL },
	{ "NoOp", "cpu", NULL, k_noop, NULL },
	{ "_AssignVariable", "cpu", NULL, k_assign, NULL },
	{ "_ParseExampleDense", "cpu", NULL, k_parse_dense,
	  parse_state_free },
	{ "AddN", "cpu", NULL, k_addn, NULL },
	{ "Select", "cpu", NULL, k_select, NULL },
	{ "BatchMatMulV2", "cpu", NULL, k_bmm, NULL },
	{ "Range", "cpu", NULL, k_range, NULL },
	{ .op = NULL }
};
