/*
 * tfcompat.c - ops that TensorFlow graphs (SavedModels) use and the
 * training engine did not need: Add (TF1's name for AddV2 on numbers),
 * PlaceholderWithDefault, NoOp, and _ParseExampleDense, the one-feature
 * form the graph importer (model/import.c) lowers ParseExample and
 * ParseExampleV2 to.
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
 */
#include "kernels/cpu.h"
#include "example/example.h"
#include "graph/graph.h"
#include "graph/op.h"
#include "util/alloc.h"

#include <inttypes.h>
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

		rc = tfk_example_parse(&st->ex, (const uint8_t *)s.ptr, s.len,
				       kc->err);
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
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_tfcompat[] = {
	{ "Add", "cpu", NULL, k_add, NULL },
	{ "PlaceholderWithDefault", "cpu", NULL, k_copy, NULL },
	{ "NoOp", "cpu", NULL, k_noop, NULL },
	{ "_ParseExampleDense", "cpu", NULL, k_parse_dense,
	  parse_state_free },
	{ .op = NULL }
};
