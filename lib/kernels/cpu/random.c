/*
 * random.c - RandomUniform and RandomStandardNormal (TF's random_ops.cc
 * op defs: shape input int32/int64, attrs seed, seed2, dtype, T).
 *
 * Values are a pure function of the kernel's rng_key (the executor
 * derives it from the exec seed, the step and the node) and the element
 * index: element i of a uniform is tfk_rng_u64(key, i), so any split of
 * the index range over threads gives the same tensor, and a Dropout
 * mask is reproducible from (seed, step) alone, which --resume needs.
 * The seed/seed2 attrs are kept for GraphDef round trips but do not
 * change the stream: TF's op-level seeds exist to make graph-mode runs
 * repeatable, which the (seed, step, node) key already is. TF's Philox
 * stream was not reproduced: bit-equality with TF's random numbers is
 * not a goal, only their distribution.
 *
 * Normal: Box-Muller on the pair (2k, 2k + 1) of counters gives
 * elements 2k (cosine) and 2k + 1 (sine); u1 is taken in (0, 1] so
 * log(u1) is finite.
 */
#include "kernels/cpu.h"
#include "graph/graph.h"
#include "util/pool.h"

#include <math.h>
#include <string.h>

#define FLOATS (TFK_DT_BIT(TFK_DT_FLOAT) | TFK_DT_BIT(TFK_DT_DOUBLE))
#define INDEX (TFK_DT_BIT(TFK_DT_INT32) | TFK_DT_BIT(TFK_DT_INT64))
#define TWO_PI 6.283185307179586476925286766559

static int check_out(const struct tfk_tensor *out, struct tfk_err *err)
{
	if (out->dtype != TFK_DT_FLOAT && out->dtype != TFK_DT_DOUBLE)
		return tfk_errf(err, TFK_EINVAL, "random values of %s (need "
				"float32 or float64)",
				tfk_dtype_name(out->dtype));
	return 0;
}

static void uniform_range(uint64_t key, void *data, enum tfk_dtype t,
			  int64_t lo, int64_t hi)
{
	int64_t i;

	if (t == TFK_DT_FLOAT) {
		float *o = data;

		for (i = lo; i < hi; i++)
			o[i] = (float)(tfk_rng_u64(key, (uint64_t)i) >> 40) *
				0x1p-24f;
	} else {
		double *o = data;

		for (i = lo; i < hi; i++)
			o[i] = (double)(tfk_rng_u64(key, (uint64_t)i) >> 11) *
				0x1p-53;
	}
}

int tfk_cpu_random_uniform_ref(uint64_t key, struct tfk_tensor *out,
			       struct tfk_err *err)
{
	int64_t i, n = tfk_tensor_numel(out);
	int rc = check_out(out, err);

	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		uint64_t u = tfk_rng_u64(key, (uint64_t)i);

		if (out->dtype == TFK_DT_FLOAT)
			((float *)out->data)[i] = (float)(u >> 40) /
				16777216.0f;
		else
			((double *)out->data)[i] = (double)(u >> 11) /
				9007199254740992.0;
	}
	return 0;
}

/* Elements 2k and 2k + 1 (when < n) of the normal stream. */
static void normal_pair(uint64_t key, void *data, enum tfk_dtype t,
			int64_t k, int64_t n)
{
	double u1 = ((tfk_rng_u64(key, 2 * (uint64_t)k) >> 11) + 1) * 0x1p-53;
	double u2 = (tfk_rng_u64(key, 2 * (uint64_t)k + 1) >> 11) * 0x1p-53;
	double r = sqrt(-2 * log(u1)), z0 = r * cos(TWO_PI * u2);
	double z1 = r * sin(TWO_PI * u2);

	if (t == TFK_DT_FLOAT) {
		((float *)data)[2 * k] = (float)z0;
		if (2 * k + 1 < n)
			((float *)data)[2 * k + 1] = (float)z1;
	} else {
		((double *)data)[2 * k] = z0;
		if (2 * k + 1 < n)
			((double *)data)[2 * k + 1] = z1;
	}
}

int tfk_cpu_random_normal_ref(uint64_t key, struct tfk_tensor *out,
			      struct tfk_err *err)
{
	int64_t k, n = tfk_tensor_numel(out);
	int rc = check_out(out, err);

	if (rc)
		return rc;
	for (k = 0; 2 * k < n; k++)
		normal_pair(key, out->data, out->dtype, k, n);
	return 0;
}

struct job {
	uint64_t key;
	struct tfk_tensor *out;
	int64_t n;
};

static void uniform_chunk(void *ctx, int64_t lo, int64_t hi, int k)
{
	struct job *j = ctx;

	uniform_range(j->key, j->out->data, j->out->dtype, lo, hi);
}

static void normal_chunk(void *ctx, int64_t lo, int64_t hi, int k)
{
	struct job *j = ctx;
	int64_t p;

	for (p = lo; p < hi; p++)
		normal_pair(j->key, j->out->data, j->out->dtype, p, j->n);
}

/* Below this many elements one thread is faster than a fork-join. */
#define PAR_MIN 16384

int tfk_cpu_random_uniform(uint64_t key, struct tfk_tensor *out, int threads,
			   struct tfk_err *err)
{
	struct job j = { key, out, tfk_tensor_numel(out) };
	int rc = check_out(out, err);

	if (rc)
		return rc;
	tfk_parallel_for(j.n < PAR_MIN ? 1 : threads, j.n, uniform_chunk, &j);
	return 0;
}

int tfk_cpu_random_normal(uint64_t key, struct tfk_tensor *out, int threads,
			  struct tfk_err *err)
{
	struct job j = { key, out, tfk_tensor_numel(out) };
	int rc = check_out(out, err);

	if (rc)
		return rc;
	tfk_parallel_for(j.n < PAR_MIN ? 1 : threads, (j.n + 1) / 2,
			 normal_chunk, &j);
	return 0;
}

/* The output shape is the value of the shape input: exact when known
 * (a Const, or Shape(x) folded by the executor), else its length gives
 * the rank and the dims are unknown. */
static int infer_random(struct tfk_infer_ctx *ic)
{
	const struct tfk_tensor *v = ic->in_value[0];
	const struct tfk_tdesc *s = &ic->in[0];
	int64_t i, n;

	if (s->rank >= 0 && s->rank != 1)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: shape must be "
				"a vector, got rank %d", s->rank);
	if (!v) {
		if (s->rank != 1 || s->shape[0] < 0) {
			ic->out[0].rank = -1;
			return 0;
		}
		if (s->shape[0] > TFK_MAX_RANK)
			return tfk_errf(ic->err, TFK_EINVAL, "input 0: rank "
					"%lld above %d", (long long)s->shape[0],
					TFK_MAX_RANK);
		ic->out[0].rank = (int)s->shape[0];
		for (i = 0; i < ic->out[0].rank; i++)
			ic->out[0].shape[i] = -1;
		return 0;
	}
	n = tfk_tensor_numel(v);
	if (v->rank != 1 || n > TFK_MAX_RANK)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: shape must be "
				"a vector of at most %d dims", TFK_MAX_RANK);
	for (i = 0; i < n; i++) {
		int64_t d = v->dtype == TFK_DT_INT32 ?
			((const int32_t *)v->data)[i] :
			((const int64_t *)v->data)[i];

		if (d < 0)
			return tfk_errf(ic->err, TFK_EINVAL, "input 0: "
					"dimension %lld is %lld", (long long)i,
					(long long)d);
		ic->out[0].shape[i] = d;
	}
	ic->out[0].rank = (int)n;
	return tfk_shape_numel(ic->out[0].rank, ic->out[0].shape,
			       tfk_dtype_size(ic->out[0].dtype), &n, ic->err);
}

static int k_uniform(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_random_uniform(kc->rng_key, kc->out[0], kc->threads,
				      kc->err);
}

static int k_normal(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_random_normal(kc->rng_key, kc->out[0], kc->threads,
				     kc->err);
}

/* TF: ops.NotDifferentiable("RandomUniform"), likewise the normal. */
static int grad_none(struct tfk_grad_ctx *gc)
{
	return 0;
}

#define RANDOM_OP(nm) {							\
	.name = nm,							\
	.inputs = { { "shape", .type_attr = "T" } },			\
	.outputs = { { "output", .type_attr = "dtype" } },		\
	.attrs = {							\
		{ "seed", TFK_ATTR_INT, 1, { .i = 0 } },		\
		{ "seed2", TFK_ATTR_INT, 1, { .i = 0 } },		\
		{ "dtype", TFK_ATTR_TYPE, 0, { 0 }, FLOATS },		\
		{ "T", TFK_ATTR_TYPE, 0, { 0 }, INDEX },		\
	},								\
	.flags = TFK_OP_STATEFUL | TFK_OP_RANDOM,			\
	.infer = infer_random,						\
	.grad = grad_none,						\
}

const struct tfk_op_def tfk_ops_random[] = {
	RANDOM_OP("RandomUniform"),
	RANDOM_OP("RandomStandardNormal"),
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_random[] = {
	{ "RandomUniform", "cpu", NULL, k_uniform, NULL },
	{ "RandomStandardNormal", "cpu", NULL, k_normal, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
