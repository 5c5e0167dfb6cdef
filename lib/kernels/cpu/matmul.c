/*
 * matmul.c - MatMul: op def, shape inference, gradient, CPU kernel.
 *
 * The fast path is OpenBLAS (cblas_sgemm/dgemm, row-major, transposes
 * passed through), which beats any loop we would write by 10-50x on
 * the shapes training uses; the _ref triple loop is its specification.
 * OpenBLAS picks its own thread count (OPENBLAS_NUM_THREADS); the
 * executor's threads setting is not forwarded yet.
 */
#include "kernels/cpu.h"
#include "graph/graph.h"

#include <cblas.h>
#include <string.h>

#define AT(p, ld, i, j) ((p)[(i) * (ld) + (j)])

void tfk_cpu_sgemm_ref(int ta, int tb, int64_t m, int64_t n, int64_t k,
		       const float *a, const float *b, float *c)
{
	int64_t i, j, l;

	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			float s = 0;

			for (l = 0; l < k; l++)
				s += (ta ? AT(a, m, l, i) : AT(a, k, i, l)) *
					(tb ? AT(b, k, j, l) : AT(b, n, l, j));
			AT(c, n, i, j) = s;
		}
}

void tfk_cpu_dgemm_ref(int ta, int tb, int64_t m, int64_t n, int64_t k,
		       const double *a, const double *b, double *c)
{
	int64_t i, j, l;

	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			double s = 0;

			for (l = 0; l < k; l++)
				s += (ta ? AT(a, m, l, i) : AT(a, k, i, l)) *
					(tb ? AT(b, k, j, l) : AT(b, n, l, j));
			AT(c, n, i, j) = s;
		}
}

void tfk_cpu_sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k,
		   const float *a, const float *b, float *c)
{
	if (!m || !n)
		return;
	if (!k) {
		memset(c, 0, m * n * sizeof(*c));
		return;
	}
	if (m == 1) {
		/* one row (batch-1 inference): sgemm would copy all of B
		 * into its packed layout on every call, which costs more
		 * than the product; a (1 x k) is the same bytes with ta */
		if (tb)
			cblas_sgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)k,
				    1.0f, b, (int)k, a, 1, 0.0f, c, 1);
		else
			cblas_sgemv(CblasRowMajor, CblasTrans, (int)k, (int)n,
				    1.0f, b, (int)n, a, 1, 0.0f, c, 1);
		return;
	}
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
		    tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k,
		    1.0f, a, ta ? (int)m : (int)k, b, tb ? (int)k : (int)n,
		    0.0f, c, (int)n);
}

void tfk_cpu_dgemm(int ta, int tb, int64_t m, int64_t n, int64_t k,
		   const double *a, const double *b, double *c)
{
	if (!m || !n)
		return;
	if (!k) {
		memset(c, 0, m * n * sizeof(*c));
		return;
	}
	cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
		    tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k,
		    1.0, a, ta ? (int)m : (int)k, b, tb ? (int)k : (int)n,
		    0.0, c, (int)n);
}

static int infer_matmul(struct tfk_infer_ctx *ic)
{
	int ta = tfk_node_attr_b(ic->node, "transpose_a", 0);
	int tb = tfk_node_attr_b(ic->node, "transpose_b", 0);
	const struct tfk_tdesc *a = &ic->in[0], *b = &ic->in[1];
	int64_t ka, kb;
	int i;

	for (i = 0; i < 2; i++)
		if (ic->in[i].rank >= 0 && ic->in[i].rank != 2)
			return tfk_errf(ic->err, TFK_EINVAL, "input %d: rank "
					"%d, MatMul needs 2", i,
					ic->in[i].rank);
	ic->out[0].rank = 2;
	ic->out[0].shape[0] = a->rank < 0 ? -1 : a->shape[ta ? 1 : 0];
	ic->out[0].shape[1] = b->rank < 0 ? -1 : b->shape[tb ? 0 : 1];
	ka = a->rank < 0 ? -1 : a->shape[ta ? 0 : 1];
	kb = b->rank < 0 ? -1 : b->shape[tb ? 1 : 0];
	/* INT_MAX: cblas takes int dimensions */
	for (i = 0; i < 2; i++)
		if (ic->in[i].rank == 2 && (ic->in[i].shape[0] > INT32_MAX ||
					    ic->in[i].shape[1] > INT32_MAX))
			return tfk_errf(ic->err, TFK_EINVAL, "input %d: "
					"dimension above 2^31 - 1", i);
	if (ka >= 0 && kb >= 0 && ka != kb)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: inner "
				"dimensions differ: %lld (input 0) vs %lld",
				(long long)ka, (long long)kb);
	return 0;
}

static int k_matmul(struct tfk_kernel_ctx *kc)
{
	int ta = tfk_node_attr_b(kc->node, "transpose_a", 0);
	int tb = tfk_node_attr_b(kc->node, "transpose_b", 0);
	const struct tfk_tensor *a = kc->in[0], *b = kc->in[1];
	struct tfk_tensor *c = kc->out[0];
	int64_t m = c->shape[0], n = c->shape[1];
	int64_t k = a->shape[ta ? 0 : 1];

	if (b->shape[tb ? 1 : 0] != k || a->shape[ta ? 1 : 0] != m ||
	    b->shape[tb ? 0 : 1] != n)
		return tfk_errf(kc->err, TFK_EINVAL, "inner dimensions "
				"differ: %lld vs %lld", (long long)k,
				(long long)b->shape[tb ? 1 : 0]);
	if (c->dtype == TFK_DT_FLOAT)
		tfk_cpu_sgemm(ta, tb, m, n, k, a->data, b->data, c->data);
	else
		tfk_cpu_dgemm(ta, tb, m, n, k, a->data, b->data, c->data);
	return 0;
}

/* TF's _MatMulGrad (tensorflow/python/ops/math_grad.py). */
static int grad_matmul(struct tfk_grad_ctx *gc)
{
	int ta = tfk_node_attr_b(gc->node, "transpose_a", 0);
	int tb = tfk_node_attr_b(gc->node, "transpose_b", 0);
	struct tfk_port a = gc->node->inputs[0], b = gc->node->inputs[1];
	struct tfk_port dy = gc->dy[0], in[2];
	struct tfk_attr at[2] = { TFK_A_BOOL("transpose_a", 0),
				  TFK_A_BOOL("transpose_b", 0) };
	int rc;

	/* dA */
	if (!ta) {
		in[0] = dy, in[1] = b;
		at[0].v.b = 0, at[1].v.b = !tb;
	} else {
		in[0] = b, in[1] = dy;
		at[0].v.b = tb, at[1].v.b = 1;
	}
	rc = tfk_graph_add_node(gc->g, "MatMul", gc->prefix, in, 2, at, 2,
				&gc->dx[0], gc->err);
	if (rc)
		return rc;
	/* dB */
	if (!tb) {
		in[0] = a, in[1] = dy;
		at[0].v.b = !ta, at[1].v.b = 0;
	} else {
		in[0] = dy, in[1] = a;
		at[0].v.b = 1, at[1].v.b = ta;
	}
	return tfk_graph_add_node(gc->g, "MatMul", gc->prefix, in, 2, at, 2,
				  &gc->dx[1], gc->err);
}

const struct tfk_op_def tfk_ops_matmul[] = {
	{
		.name = "MatMul",
		.inputs = { { "a", .type_attr = "T" },
			    { "b", .type_attr = "T" } },
		.outputs = { { "product", .type_attr = "T" } },
		.attrs = {
			{ "transpose_a", TFK_ATTR_BOOL, 1, { .b = 0 } },
			{ "transpose_b", TFK_ATTR_BOOL, 1, { .b = 0 } },
			{ "T", TFK_ATTR_TYPE, 0, { 0 },
			  TFK_DT_BIT(TFK_DT_FLOAT) | TFK_DT_BIT(TFK_DT_DOUBLE) },
		},
		.infer = infer_matmul,
		.grad = grad_matmul,
	},
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_matmul[] = {
	{ "MatMul", "cpu", NULL, k_matmul, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
