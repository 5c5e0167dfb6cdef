/*
 * matmul.c - MatMul: op def, shape inference, gradient, CPU kernel.
 *
 * The general path is OpenBLAS (sgemm/dgemm through blas.c, which loads
 * it on first use; row-major, transposes passed through; one row through
 * sgemv); the _ref triple loop is the specification, and the fallback
 * where no BLAS library can be opened. OpenBLAS uses its own thread
 * count (the tools set it to --threads) for calls of 8 M multiply-adds
 * and more, one thread below (see MM_BLAS_MT).
 *
 * Small-GEMM fast path (float32, B not transposed, n <= 1024, B's k x 64
 * panel within L2 unless there are at most 4 rows; columns past the last
 * multiple of 16 by masked loads; B transposed only for up to 4 rows,
 * as dot products: TFLite's FULLY_CONNECTED at batch 1): the shapes of
 * a small MLP's step,
 * [32, 784] x [784, 128] forward and x^T dy = [784, 32] x [32, 128] for
 * the kernel's gradient. Debian's OpenBLAS runs its Haswell (AVX2)
 * kernels on this Zen 5 CPU and, at these sizes, spends a good part of
 * its time packing A and B; a register-tiled AVX-512 kernel that reads
 * A and B in place (4 rows x 64 columns of C in 16 zmm accumulators,
 * one broadcast of A per row and four loads of B per k) is 2x faster
 * on both (CPU time per call, one thread: 47 against 90-130 us forward,
 * 43 against 85-97 us for the gradient; 137-149 GFLOP/s). Each
 * element of C is one FMA chain over l = 0..k-1 in order, whichever
 * thread computes its tile, so results do not depend on the thread
 * count (row tiles are split over kc->threads with tfk_parallel_for).
 * Larger shapes, transposed B and CPUs without AVX-512 go to OpenBLAS,
 * whose cache blocking wins there. TFK_MATMUL_BLAS=1 turns the fast
 * path off (for comparisons). Rejected: an AVX2 twin (no such CPU here
 * to measure it on) and packing B (the panel already sits in L2).
 */
#include "kernels/cpu.h"
#include "graph/graph.h"
#include "util/alloc.h"
#include "util/pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define MM_X86 1
#include <immintrin.h>
#endif

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

/* Fast path ------------------------------------------------------------- */

/*
 * OpenBLAS splits a call over its threads above a small size, and its
 * threads then wait for the next call spinning on sched_yield: with a
 * CNN's dense layer ([32, 4608] x [4608, 10], 1.5 M multiply-adds, a
 * few microseconds) that spin was 13% of a -j 2 training run's CPU
 * time. Below MM_BLAS_MT multiply-adds a call runs on the calling
 * thread only (OpenBLAS's split is along rows and columns, each
 * element's sum the same on any thread, so results do not change).
 */
#define MM_BLAS_MT ((int64_t)1 << 23)


#define MM_MR 4			/* rows of a tile */
#define MM_NV 4			/* 16-float vectors of a tile */
#define MM_MAX_K 2048		/* k x 64 floats of B: 512 KiB, in L2 */
#define MM_MAX_N 1024

struct mm_job {
	int ta;
	int64_t m, n, k;
	const float *a, *b;
	float *c;
};

#ifdef MM_X86
/* C[i..i+mr, j..j+16 nv] (mr <= MM_MR rows, nv <= MM_NV vectors, both
 * constants once inlined, so acc and bv live in registers). */
static inline __attribute__((always_inline, target("avx512f")))
void mm_tile(const struct mm_job *jb, int64_t i, int64_t j, int mr, int nv)
{
	const int64_t m = jb->m, n = jb->n, k = jb->k;
	const float *a = jb->a, *b = jb->b + j;
	__m512 acc[MM_MR][MM_NV], bv[MM_NV];
	int64_t l;
	int r, v;

#pragma GCC unroll 4
	for (r = 0; r < mr; r++)
#pragma GCC unroll 4
		for (v = 0; v < nv; v++)
			acc[r][v] = _mm512_setzero_ps();
	for (l = 0; l < k; l++, b += n) {
#pragma GCC unroll 4
		for (v = 0; v < nv; v++)
			bv[v] = _mm512_loadu_ps(b + 16 * v);
#pragma GCC unroll 4
		for (r = 0; r < mr; r++) {
			__m512 av = _mm512_set1_ps(jb->ta ? a[l * m + i + r] :
						   a[(i + r) * k + l]);

#pragma GCC unroll 4
			for (v = 0; v < nv; v++)
				acc[r][v] = _mm512_fmadd_ps(av, bv[v],
							    acc[r][v]);
		}
	}
#pragma GCC unroll 4
	for (r = 0; r < mr; r++)
#pragma GCC unroll 4
		for (v = 0; v < nv; v++)
			_mm512_storeu_ps(jb->c + (i + r) * n + j + 16 * v,
					 acc[r][v]);
}

/* The last columns j..n-1 (fewer than 16) of rows i..i+mr: mm_tile's
 * loop with masked loads and stores, one FMA chain per element all the
 * same. */
static inline __attribute__((always_inline, target("avx512f")))
void mm_tile_tail(const struct mm_job *jb, int64_t i, int64_t j, int mr)
{
	const int64_t m = jb->m, n = jb->n, k = jb->k;
	const __mmask16 mask = (__mmask16)((1u << (n - j)) - 1);
	const float *a = jb->a, *b = jb->b + j;
	__m512 acc[MM_MR];
	int64_t l;
	int r;

#pragma GCC unroll 4
	for (r = 0; r < mr; r++)
		acc[r] = _mm512_setzero_ps();
	for (l = 0; l < k; l++, b += n) {
		__m512 bv = _mm512_maskz_loadu_ps(mask, b);

#pragma GCC unroll 4
		for (r = 0; r < mr; r++)
			acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(jb->ta ?
				a[l * m + i + r] : a[(i + r) * k + l]), bv,
				acc[r]);
	}
#pragma GCC unroll 4
	for (r = 0; r < mr; r++)
		_mm512_mask_storeu_ps(jb->c + (i + r) * n + j, mask, acc[r]);
}

#define MM_ROWS(nv) do {						\
	if (mr == MM_MR)						\
		mm_tile(jb, i, j, MM_MR, (nv));				\
	else if (mr == 3)						\
		mm_tile(jb, i, j, 3, (nv));				\
	else if (mr == 2)						\
		mm_tile(jb, i, j, 2, (nv));				\
	else								\
		mm_tile(jb, i, j, 1, (nv));				\
} while (0)

/* Row tiles [tb, te), all columns. */
static __attribute__((target("avx512f")))
void mm_rows(void *ctx, int64_t tb, int64_t te, int worker)
{
	const struct mm_job *jb = ctx;
	int64_t t, j;

	for (t = tb; t < te; t++) {
		int64_t i = t * MM_MR;
		int mr = jb->m - i < MM_MR ? (int)(jb->m - i) : MM_MR;

		for (j = 0; j + 16 * MM_NV <= jb->n; j += 16 * MM_NV)
			MM_ROWS(MM_NV);
		for (; j + 16 <= jb->n; j += 16)
			MM_ROWS(1);
		if (j < jb->n) {
			if (mr == MM_MR)
				mm_tile_tail(jb, i, j, MM_MR);
			else if (mr == 3)
				mm_tile_tail(jb, i, j, 3);
			else if (mr == 2)
				mm_tile_tail(jb, i, j, 2);
			else
				mm_tile_tail(jb, i, j, 1);
		}
	}
	(void)worker;
}

/* B transposed (n x k, TFLite's FULLY_CONNECTED weights) and at most
 * MM_MR rows of A not transposed: C[i][j] is the dot product of row i
 * of A and row j of B, 16 lanes along l (a masked last block) summed
 * at the end. The lanes are the same whatever the thread count. */
static __attribute__((target("avx512f")))
void mm_dots(void *ctx, int64_t jb0, int64_t je, int worker)
{
	const struct mm_job *jb = ctx;
	const int64_t m = jb->m, k = jb->k;
	int64_t i, j, l;

	for (j = jb0; j < je; j++)
		for (i = 0; i < m; i++) {
			const float *a = jb->a + i * k, *b = jb->b + j * k;
			__m512 acc = _mm512_setzero_ps();

			for (l = 0; l + 16 <= k; l += 16)
				acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + l),
						      _mm512_loadu_ps(b + l),
						      acc);
			if (l < k) {
				__mmask16 mk = (__mmask16)((1u << (k - l)) - 1);

				acc = _mm512_fmadd_ps(
					_mm512_maskz_loadu_ps(mk, a + l),
					_mm512_maskz_loadu_ps(mk, b + l), acc);
			}
			jb->c[i * jb->n + j] = _mm512_reduce_add_ps(acc);
		}
	(void)worker;
}

static int mm_have_avx512(void)
{
	static int have = -1;

	if (have < 0)
		have = __builtin_cpu_supports("avx512f") &&
			!getenv("TFK_MATMUL_BLAS");
	return have;
}
#endif

/* 1 if the fast path computed C = op(A) B, else 0 (OpenBLAS's turn). */
static int sgemm_fast(int ta, int tb, int64_t m, int64_t n, int64_t k,
		      const float *a, const float *b, float *c, int threads)
{
#ifdef MM_X86
	struct mm_job jb = { ta, m, n, k, a, b, c };

	if (tb && !ta && m <= MM_MR && mm_have_avx512()) {
		if (m * n * k < ((int64_t)1 << 20))
			threads = 1;
		tfk_parallel_for(threads, n, mm_dots, &jb);
		return 1;
	}
	/* k bounds B's panel for its reuse by row tiles; a single tile
	 * (batch-1 inference) reads B once whatever k */
	if (tb || n > MM_MAX_N || (k > MM_MAX_K && m > MM_MR) || !k ||
	    !mm_have_avx512())
		return 0;
	/* below ~1 M multiply-adds a second thread costs more to wake
	 * than it saves */
	if (m * n * k < ((int64_t)1 << 20))
		threads = 1;
	tfk_parallel_for(threads, (m + MM_MR - 1) / MM_MR, mm_rows, &jb);
	return 1;
#else
	(void)ta, (void)tb, (void)m, (void)n, (void)k, (void)a, (void)b;
	(void)c, (void)threads;
	return 0;
#endif
}

void tfk_cpu_sgemm(int ta, int tb, int64_t m, int64_t n, int64_t k,
		   const float *a, const float *b, float *c)
{
	tfk_cpu_sgemm_mt(ta, tb, m, n, k, a, b, c, 1);
}

void tfk_cpu_sgemm_mt(int ta, int tb, int64_t m, int64_t n, int64_t k,
		      const float *a, const float *b, float *c, int threads)
{
	if (!m || !n)
		return;
	if (!k) {
		memset(c, 0, m * n * sizeof(*c));
		return;
	}
	if (sgemm_fast(ta, tb, m, n, k, a, b, c, threads)) {
		return;
	} else if (m == 1) {
		/* one row (batch-1 inference): sgemm would copy all of B
		 * into its packed layout on every call, which costs more
		 * than the product; a (1 x k) is the same bytes with ta */
		if (!(tb ? tfk_blas_sgemv(0, (int)n, (int)k, b, (int)k, a, c) :
		      tfk_blas_sgemv(1, (int)k, (int)n, b, (int)n, a, c)))
			return;
	} else if (!tfk_blas_sgemm(ta, tb, (int)m, (int)n, (int)k, a,
				   ta ? (int)m : (int)k, b,
				   tb ? (int)k : (int)n, c, (int)n,
				   m * n * k >= MM_BLAS_MT)) {
		return;
	}
	tfk_cpu_sgemm_ref(ta, tb, m, n, k, a, b, c);	/* no BLAS library */
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
	if (tfk_blas_dgemm(ta, tb, (int)m, (int)n, (int)k, a,
			   ta ? (int)m : (int)k, b, tb ? (int)k : (int)n, c,
			   (int)n))
		tfk_cpu_dgemm_ref(ta, tb, m, n, k, a, b, c);
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
	if (c->dtype == TFK_DT_FLOAT &&
	    (kc->node->flags & TFK_NODE_BF16)) {
		if (tfk_cpu_sbgemm_mt(ta, tb, m, n, k, a->data, b->data,
				      c->data, kc->threads))
			return tfk_errf(kc->err, TFK_ENOMEM, "out of memory");
	} else if (c->dtype == TFK_DT_FLOAT)
		tfk_cpu_sgemm_mt(ta, tb, m, n, k, a->data, b->data, c->data,
				 kc->threads);
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
	/* a bf16 product's gradients are bf16 products too (as TF's
	 * MatMul on bfloat16 operands) */
	unsigned bf = gc->node->flags & TFK_NODE_BF16;
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
	tfk_graph_node_flag(gc->g, gc->dx[0].node, bf);
	/* dB */
	if (!tb) {
		in[0] = a, in[1] = dy;
		at[0].v.b = !ta, at[1].v.b = 0;
	} else {
		in[0] = dy, in[1] = a;
		at[0].v.b = 1, at[1].v.b = ta;
	}
	rc = tfk_graph_add_node(gc->g, "MatMul", gc->prefix, in, 2, at, 2,
				&gc->dx[1], gc->err);
	if (rc)
		return rc;
	return tfk_graph_node_flag(gc->g, gc->dx[1].node, bf);
}

/* TFLiteHybridMatMul ------------------------------------------------------ */

/* Row x[0..k) quantized to q (tfk_cpu_hybrid_matmul_ref): its scale
 * into *s, its zero point into *z. */
static void hybrid_quantize(const float *x, int64_t k, int asym, int8_t *q,
			    float *s, int32_t *z)
{
	float lo = 0, hi = 0, inv;
	int64_t i;

	for (i = 0; i < k; i++) {
		lo = x[i] < lo ? x[i] : lo;
		hi = x[i] > hi ? x[i] : hi;
	}
	*z = 0;
	*s = 1;
	if (!asym) {
		float range = -lo > hi ? -lo : hi;

		if (range == 0) {
			memset(q, 0, (size_t)k);
			return;
		}
		*s = range / 127;
		inv = 127 / range;
		for (i = 0; i < k; i++) {
			int32_t v = (int32_t)roundf(x[i] * inv);

			q[i] = (int8_t)(v < -127 ? -127 : v > 127 ? 127 : v);
		}
		return;
	}
	if (lo == hi) {
		memset(q, 0, (size_t)k);
		return;
	}
	{
		double rmin = lo, rmax = hi, sc = (rmax - rmin) / 255.0;
		double zmin = -128.0 - rmin / sc, zmax = 127.0 - rmax / sc;
		double zd = 128.0 + fabs(rmin / sc) < 127.0 + fabs(rmax / sc) ?
			zmin : zmax;

		*z = zd <= -128.0 ? -128 : zd >= 127.0 ? 127 :
			(int32_t)round(zd);
		*s = (float)sc;
	}
	inv = (float)(1.0 / *s);
	for (i = 0; i < k; i++) {
		int32_t v = (int32_t)roundf((float)*z + x[i] * inv);

		q[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
	}
}

void tfk_cpu_hybrid_matmul_ref(int64_t m, int64_t n, int64_t k,
			       const float *x, const int8_t *w,
			       const float *scale, int64_t n_scale, int asym,
			       int8_t *q, float *y)
{
	int64_t b, j, i;

	for (b = 0; b < m; b++) {
		float s;
		int32_t z;

		hybrid_quantize(x + b * k, k, asym, q, &s, &z);
		for (j = 0; j < n; j++) {
			const int8_t *wr = w + j * k;
			int64_t acc = 0, rs = 0;

			for (i = 0; i < k; i++) {
				acc += (int32_t)wr[i] * q[i];
				rs += wr[i];
			}
			acc -= rs * z;
			/* TFLite's int32 accumulator, wrapping */
			y[b * n + j] = (float)(int32_t)(uint32_t)acc *
				(s * scale[n_scale > 1 ? j : 0]);
		}
	}
}

static int infer_hybrid(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *a = &ic->in[0], *w = &ic->in[1];
	const struct tfk_tdesc *sc = &ic->in[2];

	if ((a->rank >= 0 && a->rank != 2) || w->rank != 2 || sc->rank != 1)
		return tfk_errf(ic->err, TFK_EINVAL, "x and w must be "
				"matrices, scale a vector");
	if (a->rank == 2 && a->shape[1] >= 0 && a->shape[1] != w->shape[1])
		return tfk_errf(ic->err, TFK_EINVAL, "inner dimensions "
				"differ: %lld (x) vs %lld (w)",
				(long long)a->shape[1], (long long)w->shape[1]);
	if (sc->shape[0] >= 0 && sc->shape[0] != 1 &&
	    sc->shape[0] != w->shape[0])
		return tfk_errf(ic->err, TFK_EINVAL, "%lld scales for %lld "
				"outputs", (long long)sc->shape[0],
				(long long)w->shape[0]);
	ic->out[0].rank = 2;
	ic->out[0].shape[0] = a->rank < 0 ? -1 : a->shape[0];
	ic->out[0].shape[1] = w->shape[0];
	return 0;
}

static int k_hybrid(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0], *w = kc->in[1];
	const struct tfk_tensor *sc = kc->in[2];
	int64_t m = x->shape[0], k = x->shape[1], n = w->shape[0];
	int8_t *q;

	if (w->shape[1] != k || kc->out[0]->shape[0] != m ||
	    kc->out[0]->shape[1] != n || (sc->shape[0] != 1 &&
					 sc->shape[0] != n) || !sc->shape[0])
		return tfk_errf(kc->err, TFK_EINVAL, "shapes do not match");
	if (!(q = tfk_malloc((size_t)k + 1)))
		return tfk_errf(kc->err, TFK_ENOMEM, "out of memory");
	tfk_cpu_hybrid_matmul_ref(m, n, k, x->data, w->data, sc->data,
				  sc->shape[0],
				  tfk_node_attr_b(kc->node, "asymmetric", 0),
				  q, kc->out[0]->data);
	tfk_free(q);
	return 0;
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
	{
		/* tfkit's own: TFLite's hybrid FULLY_CONNECTED (no TF op) */
		.name = "TFLiteHybridMatMul",
		.inputs = { { "x", TFK_DT_FLOAT },
			    { "w", TFK_DT_INT8 },
			    { "scale", TFK_DT_FLOAT } },
		.outputs = { { "y", TFK_DT_FLOAT } },
		.attrs = {
			{ "asymmetric", TFK_ATTR_BOOL, 1, { .b = 0 } },
		},
		.infer = infer_hybrid,
	},
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_matmul[] = {
	{ "MatMul", "cpu", NULL, k_matmul, NULL },
	{ "TFLiteHybridMatMul", "cpu", NULL, k_hybrid, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
