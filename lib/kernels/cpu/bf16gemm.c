/*
 * bf16gemm.c - float32 GEMM with bfloat16 products (Keras' mixed_bfloat16).
 *
 * C = op(A) op(B) where every element of A and B is first rounded to
 * bfloat16 (round to nearest, ties to even, NaN kept quiet: TensorFlow's
 * Cast float32 -> bfloat16, tensorflow/core/lib/bfloat16 / Eigen's
 * float_to_bfloat16_rtne) and the products are summed in float32. The
 * sum's order is that of AVX512-BF16's VDPBF16PS (Intel SDM, "VDPBF16PS"):
 * k is taken in pairs (2p, 2p+1), and for each pair the odd element's
 * product is added first, then the even one's, each addition rounded
 * to float32 (a product of two bfloat16 is exact in float32, so each
 * step is one rounding, like an FMA). An odd k gets a zero partner.
 * tfk_cpu_sbgemm_ref is that, in plain C; it is the specification.
 *
 * Fast path (x86-64 with avx512_bf16): both operands are rounded once
 * per call into packed bf16 pairs, A as [k/2][m] (one 32-bit broadcast
 * per row and pair), B as [k/2][n16] (one zmm holds the pairs of 16
 * columns), by VCVTNE2PS2BF16 (32 floats an instruction); a 4 x 64
 * tile of C is 16 zmm accumulators fed by _mm512_dpbf16_ps. Packing
 * reads A and B in whichever orientation the caller has. Threads take
 * blocks of 64 columns, each packing its own columns of B before its
 * products (one fork-join per call); with fewer blocks than threads,
 * B is packed first and row tiles are split. VCVTNE2PS2BF16 and
 * VDPBF16PS treat subnormal inputs (and VDPBF16PS its results) as zero,
 * the _ref does not: the two agree bit for bit while no float input,
 * bf16 operand or partial sum is below FLT_MIN (the unit test draws its
 * values so; training's values are far from it).
 *
 * Without avx512_bf16 the operands are rounded by tfk_bf16_round and
 * summed by a scalar loop in the same order (the float fallback:
 * bit-identical to the _ref). AMX (TMUL) is not used: this machine has
 * none to measure on. Each element's sum is in the same order on any
 * thread, so results do not depend on the thread count.
 * TFK_BF16_SCALAR=1 forces the fallback (for tests and comparisons).
 * The packing steps are also bf16conv.c's (tfk_bf16_pack_pairs,
 * tfk_bf16_pack_run), which runs Conv2D and its backprops under the
 * same policy in the same pair order: Keras' mixed_bfloat16 covers
 * Dense's MatMul here and Conv2D/Conv1D there.
 *
 * Measured (one thread, [32,784] x [784,128], the MLP's forward): the
 * products alone are 2x float32's AVX-512 kernel, but packing B every
 * call costs about as much again, so the call is ~1.1x; x^T dy
 * ([784,32] x [32,128]) 1.4x. Rejected: AVX-512 integer rounding for
 * the packing (bit-exact with the _ref on subnormals too, but 8
 * instructions per 16 floats made packing as long as the products);
 * caching packed weights across calls (a variable has no version to
 * tell when the optimizer changed it).
 */
#include "kernels/cpu.h"
#include "util/alloc.h"
#include "util/pool.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define BF_X86 1
#include <immintrin.h>
#endif

#define BF_MR 4			/* rows of a tile */
#define BF_NV 4			/* 16-column vectors of a tile */

uint16_t tfk_bf16_round(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);	/* quiet NaN */
	u += 0x7fffu + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

float tfk_bf16_float(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static float rb(float f)
{
	return tfk_bf16_float(tfk_bf16_round(f));
}

#define AT(p, ld, i, j) ((p)[(i) * (ld) + (j)])

void tfk_cpu_sbgemm_ref(int ta, int tb, int64_t m, int64_t n, int64_t k,
			const float *a, const float *b, float *c)
{
	int64_t i, j, l;

	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			float s = 0;

			for (l = 0; l < k; l += 2) {
				if (l + 1 < k)
					s += rb(ta ? AT(a, m, l + 1, i) :
						AT(a, k, i, l + 1)) *
						rb(tb ? AT(b, k, j, l + 1) :
						   AT(b, n, l + 1, j));
				s += rb(ta ? AT(a, m, l, i) : AT(a, k, i, l)) *
					rb(tb ? AT(b, k, j, l) : AT(b, n, l, j));
			}
			AT(c, n, i, j) = s;
		}
}

/* Packed operands ----------------------------------------------------- */

struct bf_job {
	int64_t m, n, kp, np;	/* kp = ceil(k / 2), np = n rounded to 16 */
	const uint32_t *pa;	/* [kp][m]: (even | odd << 16) */
	const uint32_t *pb;	/* [kp][np] */
	float *c;
};

/* out[j] = the pair (r0[j], r1[j]) (r1 NULL: 0 as the odd one), j < len:
 * two rows of the k axis side by side. */
static void pack_rows_c(const float *r0, const float *r1, int64_t len,
			uint32_t *out, int64_t j)
{
	for (; j < len; j++)
		out[j] = tfk_bf16_round(r0[j]) |
			(r1 ? (uint32_t)tfk_bf16_round(r1[j]) << 16 : 0);
}

/* out[p] = the pair (x[2p], x[2p+1]) (x[k] as 0), p < ceil(k / 2): a
 * run of the k axis. */
static void pack_run_c(const float *x, int64_t k, uint32_t *out, int64_t p)
{
	for (; 2 * p < k; p++)
		out[p] = tfk_bf16_round(x[2 * p]) |
			(2 * p + 1 < k ?
			 (uint32_t)tfk_bf16_round(x[2 * p + 1]) << 16 : 0);
}

#ifdef BF_X86
#define BF_PACK __attribute__((target("avx512f,avx512bw,avx512bf16")))

/* VCVTNE2PS2BF16 rounds as tfk_bf16_round (nearest even, quiet NaN)
 * except that it reads and writes subnormals as zero, as VDPBF16PS
 * reads them anyway (so only an input just below FLT_MIN, which RNE
 * rounds up to FLT_MIN, can make the two paths differ). 32 floats in
 * per instruction; the packing was as long as the products with the
 * 8-instruction integer rounding. */
static BF_PACK void pack_rows_v(const float *r0, const float *r1,
				int64_t len, uint32_t *out)
{
	/* [r0 0..15, r1 0..15] as 16-bit lanes -> pairs (r0[j], r1[j]) */
	const __m512i ix = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12,
		27, 11, 26, 10, 25, 9, 24, 8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3,
		18, 2, 17, 1, 16, 0);
	int64_t j;

	for (j = 0; j + 16 <= len; j += 16) {
		__m512 hi = r1 ? _mm512_loadu_ps(r1 + j) : _mm512_setzero_ps();
		__m512i v = (__m512i)_mm512_cvtne2ps_pbh(hi,
						_mm512_loadu_ps(r0 + j));

		_mm512_storeu_si512(out + j, _mm512_permutexvar_epi16(ix, v));
	}
	if (j < len) {
		/* the tail by masks (a 10-column kernel is all tail):
		 * masked-off lanes are neither read nor written */
		__mmask16 m = (__mmask16)((1u << (len - j)) - 1);
		__m512 hi = r1 ? _mm512_maskz_loadu_ps(m, r1 + j) :
			_mm512_setzero_ps();
		__m512i v = (__m512i)_mm512_cvtne2ps_pbh(hi,
					_mm512_maskz_loadu_ps(m, r0 + j));

		_mm512_mask_storeu_epi32(out + j, m,
					 _mm512_permutexvar_epi16(ix, v));
	}
}

static BF_PACK void pack_run_v(const float *x, int64_t k, uint32_t *out)
{
	int64_t p;

	/* bf16 lanes in x's order are already the pairs */
	for (p = 0; 2 * p + 32 <= k; p += 16)
		_mm512_storeu_si512(out + p, (__m512i)_mm512_cvtne2ps_pbh(
			_mm512_loadu_ps(x + 2 * p + 16),
			_mm512_loadu_ps(x + 2 * p)));
	if (2 * p < k) {
		/* the tail by masks, zeros past x[k - 1]: an odd k's
		 * last pair gets its zero partner */
		int64_t r = k - 2 * p;
		__mmask16 lo = (__mmask16)(r >= 16 ? 0xffff : (1u << r) - 1);
		__mmask16 hi = (__mmask16)(r > 16 ? (1u << (r - 16)) - 1 : 0);
		__mmask16 st = (__mmask16)((1u << ((r + 1) / 2)) - 1);

		_mm512_mask_storeu_epi32(out + p, st,
			(__m512i)_mm512_cvtne2ps_pbh(
				_mm512_maskz_loadu_ps(hi, x + 2 * p + 16),
				_mm512_maskz_loadu_ps(lo, x + 2 * p)));
	}
}
#endif

static void pack_rows(const float *r0, const float *r1, int64_t len,
		      uint32_t *out, int vec)
{
#ifdef BF_X86
	if (vec) {
		pack_rows_v(r0, r1, len, out);
		return;
	}
#endif
	(void)vec;
	pack_rows_c(r0, r1, len, out, 0);
}

static void pack_run(const float *x, int64_t k, uint32_t *out, int vec)
{
#ifdef BF_X86
	if (vec) {
		pack_run_v(x, k, out);
		return;
	}
#endif
	(void)vec;
	pack_run_c(x, k, out, 0);
}

void tfk_bf16_pack_pairs(const float *r0, const float *r1, int64_t len,
			 uint32_t *out, int vec)
{
	pack_rows(r0, r1, len, out, vec);
}

void tfk_bf16_pack_run(const float *x, int64_t k, uint32_t *out, int vec)
{
	pack_run(x, k, out, vec);
}

/*
 * The pairs of an operand's k axis into dst[p * ld + j] (j < len, the
 * columns from len to ld zeroed): across = 1 when x is [k][len] (a pair
 * is two rows side by side), 0 when x is [len][k] (a pair is within a
 * row: packed into the chunk's tmp[ceil(k / 2)], then written with
 * stride ld). Split over threads by pairs (across) or rows: for the
 * MLP's [784, 128] kernel the packing is as long as the products.
 */
struct pack_job {
	int across, vec;
	int64_t len, k, kp, ld;
	const float *x;
	uint32_t *dst, *tmp;	/* tmp: kp per chunk */
};

static void pack_chunk(void *ctx, int64_t b, int64_t e, int chunk)
{
	const struct pack_job *pj = ctx;
	int64_t len = pj->len, k = pj->k, kp = pj->kp, ld = pj->ld, p, j;
	uint32_t *tmp = pj->tmp + chunk * kp;

	if (pj->across) {
		for (p = b; p < e; p++) {
			pack_rows(pj->x + 2 * p * len, 2 * p + 1 < k ?
				  pj->x + (2 * p + 1) * len : NULL, len,
				  pj->dst + p * ld, pj->vec);
			if (ld > len)
				memset(pj->dst + p * ld + len, 0,
				       (size_t)(ld - len) * sizeof(uint32_t));
		}
		return;
	}
	for (j = b; j < e; j++) {
		pack_run(pj->x + j * k, k, tmp, pj->vec);
		for (p = 0; p < kp; p++)
			pj->dst[p * ld + j] = tmp[p];
	}
}

/* Columns [j0, j1) of pack_op's dst (j1 <= ld), by one thread. */
static void pack_cols(const struct pack_job *pj, int64_t j0, int64_t j1,
		      uint32_t *tmp)
{
	int64_t len = pj->len, k = pj->k, kp = pj->kp, ld = pj->ld, p, j;
	int64_t je = j1 < len ? j1 : len;

	for (p = 0; pj->across && p < kp && je > j0; p++)
		pack_rows(pj->x + 2 * p * len + j0, 2 * p + 1 < k ?
			  pj->x + (2 * p + 1) * len + j0 : NULL, je - j0,
			  pj->dst + p * ld + j0, pj->vec);
	for (j = j0; !pj->across && j < je; j++) {
		pack_run(pj->x + j * k, k, tmp, pj->vec);
		for (p = 0; p < kp; p++)
			pj->dst[p * ld + j] = tmp[p];
	}
	if (j1 > len)
		for (p = 0; p < kp; p++)
			memset(pj->dst + p * ld + (j0 > len ? j0 : len), 0,
			       (size_t)(j1 - (j0 > len ? j0 : len)) *
			       sizeof(uint32_t));
}

static void pack_op(int across, int64_t len, int64_t k, const float *x,
		    uint32_t *dst, int64_t ld, uint32_t *tmp, int vec,
		    int threads)
{
	struct pack_job pj = { across, vec, len, k, (k + 1) / 2, ld, x, dst,
			       tmp };
	int64_t p;

	tfk_parallel_for(threads, across ? pj.kp : len, pack_chunk, &pj);
	if (!across && ld > len)
		for (p = 0; p < pj.kp; p++)
			memset(dst + p * ld + len, 0,
			       (size_t)(ld - len) * sizeof(*dst));
}

/* The fallback: the _ref's order over the packed pairs. */
static void bf_rows_scalar(void *ctx, int64_t rb0, int64_t re, int worker)
{
	const struct bf_job *jb = ctx;
	int64_t i, j, p;

	for (i = rb0; i < re; i++)
		for (j = 0; j < jb->n; j++) {
			float s = 0;

			for (p = 0; p < jb->kp; p++) {
				uint32_t x = jb->pa[p * jb->m + i];
				uint32_t y = jb->pb[p * jb->np + j];

				s += tfk_bf16_float(x >> 16) *
					tfk_bf16_float(y >> 16);
				s += tfk_bf16_float(x & 0xffff) *
					tfk_bf16_float(y & 0xffff);
			}
			jb->c[i * jb->n + j] = s;
		}
	(void)worker;
}

#ifdef BF_X86
#define BF_TARGET __attribute__((target("avx512f,avx512bf16")))

/* C[i..i+mr, j..j+16 nv]: mr and nv constants once inlined. */
static inline __attribute__((always_inline)) BF_TARGET
void bf_tile(const struct bf_job *jb, int64_t i, int64_t j, int mr, int nv)
{
	__m512 acc[BF_MR][BF_NV];
	__m512bh bv[BF_NV];
	int64_t p, kp = jb->kp, np = jb->np;
	const uint32_t *pa = jb->pa + i, *pb = jb->pb + j;
	int r, v;

#pragma GCC unroll 4
	for (r = 0; r < mr; r++)
#pragma GCC unroll 4
		for (v = 0; v < nv; v++)
			acc[r][v] = _mm512_setzero_ps();
	for (p = 0; p < kp; p++) {
#pragma GCC unroll 4
		for (v = 0; v < nv; v++)
			bv[v] = (__m512bh)_mm512_loadu_si512(pb + p * np +
							     16 * v);
#pragma GCC unroll 4
		for (r = 0; r < mr; r++) {
			__m512bh av = (__m512bh)_mm512_set1_epi32(
				(int)pa[p * jb->m + r]);
#pragma GCC unroll 4
			for (v = 0; v < nv; v++)
				acc[r][v] = _mm512_dpbf16_ps(acc[r][v], av,
							     bv[v]);
		}
	}
#pragma GCC unroll 4
	for (r = 0; r < mr; r++)
#pragma GCC unroll 4
		for (v = 0; v < nv; v++) {
			int64_t col = j + 16 * v;
			float *out = jb->c + (i + r) * jb->n + col;

			if (col + 16 <= jb->n)
				_mm512_storeu_ps(out, acc[r][v]);
			else
				_mm512_mask_storeu_ps(out, (__mmask16)
					((1u << (jb->n - col)) - 1),
					acc[r][v]);
		}
}

/* Row tiles [t0, t1) of C over the columns [j0, j1) (j0 a multiple of
 * 64, j1 of 16 or np). */
static BF_TARGET void bf_block(const struct bf_job *jb, int64_t t0,
			       int64_t t1, int64_t j0, int64_t j1)
{
	int64_t t, j;

	for (t = t0; t < t1; t++) {
		int64_t i = t * BF_MR;
		int mr = jb->m - i < BF_MR ? (int)(jb->m - i) : BF_MR;

		for (j = j0; j < j1 && j < jb->n; j += 16 * BF_NV) {
			int nv = (int)((j1 - j) / 16);

			if (nv > BF_NV)
				nv = BF_NV;
			/* constant mr, nv per call: registers */
#define BF_NVS(MR) \
			switch (nv) { \
			case 1: bf_tile(jb, i, j, MR, 1); break; \
			case 2: bf_tile(jb, i, j, MR, 2); break; \
			case 3: bf_tile(jb, i, j, MR, 3); break; \
			default: bf_tile(jb, i, j, MR, 4); break; \
			}
			switch (mr) {
			case 1: BF_NVS(1) break;
			case 2: BF_NVS(2) break;
			case 3: BF_NVS(3) break;
			default: BF_NVS(4) break;
			}
#undef BF_NVS
		}
	}
}

static BF_TARGET void bf_rows(void *ctx, int64_t tb0, int64_t te,
			      int worker)
{
	const struct bf_job *jb = ctx;

	bf_block(jb, tb0, te, 0, jb->np);
	(void)worker;
}

/* Blocks of 64 columns: each chunk packs its columns of B, then
 * computes them for every row (one fork-join per call, not two). */
struct bf_cjob {
	const struct bf_job *jb;
	const struct pack_job *pj;
};

static BF_TARGET void bf_cols(void *ctx, int64_t cb, int64_t ce,
			      int worker)
{
	const struct bf_cjob *cj = ctx;
	const struct bf_job *jb = cj->jb;
	int64_t b, j0, j1;

	for (b = cb; b < ce; b++) {
		j0 = b * 16 * BF_NV;
		j1 = j0 + 16 * BF_NV < jb->np ? j0 + 16 * BF_NV : jb->np;
		pack_cols(cj->pj, j0, j1, cj->pj->tmp + worker * cj->pj->kp);
		bf_block(jb, 0, (jb->m + BF_MR - 1) / BF_MR, j0, j1);
	}
}
#endif

/* TFK_BF16_SCALAR is read on each call (a getenv per GEMM is nothing
 * beside it) so that one test process can run both paths. */
int tfk_cpu_have_avx512bf16(void)
{
	static int have = -1;

	if (have < 0) {
#ifdef BF_X86
		__builtin_cpu_init();
		have = __builtin_cpu_supports("avx512f") &&
			__builtin_cpu_supports("avx512bf16");
#else
		have = 0;
#endif
	}
	return have && !getenv("TFK_BF16_SCALAR");
}

int tfk_cpu_sbgemm_mt(int ta, int tb, int64_t m, int64_t n, int64_t k,
		      const float *a, const float *b, float *c, int threads)
{
	struct bf_job jb;
	uint32_t *pa, *pb, *tmp;
	int64_t kp = (k + 1) / 2, np = (n + 15) / 16 * 16;
	int vec;

	if (!m || !n)
		return 0;
	if (!k) {
		memset(c, 0, (size_t)(m * n) * sizeof(*c));
		return 0;
	}
	pa = tfk_malloc((size_t)(m * kp) * 4);
	pb = tfk_malloc((size_t)(kp * np) * 4);
	/* as matmul.c: below ~1 M multiply-adds a second thread costs
	 * more to wake than it saves; tfk_parallel_for makes at most 64
	 * chunks, each packing rows through its own tmp */
	if (m * n * k < ((int64_t)1 << 20))
		threads = 1;
	if (threads > 64)
		threads = 64;
	if (threads < 1)
		threads = 1;
	tmp = tfk_malloc((size_t)(kp * threads) * 4);
	if (!pa || !pb || !tmp) {
		tfk_free(pa);
		tfk_free(pb);
		tfk_free(tmp);
		return TFK_ENOMEM;
	}
	vec = tfk_cpu_have_avx512bf16();
	/* A is the small side in training's products (a batch of rows,
	 * or x^T with 32 pairs): packed on this thread */
	pack_op(ta, m, k, a, pa, m, tmp, vec,
		m * k < ((int64_t)1 << 16) ? 1 : threads);
	jb = (struct bf_job){ m, n, kp, np, pa, pb, c };
#ifdef BF_X86
	if (vec && np / (16 * BF_NV) >= threads) {
		struct pack_job pj = { !tb, vec, n, k, kp, np, b, pb, tmp };
		struct bf_cjob cj = { &jb, &pj };

		tfk_parallel_for(threads, (np + 16 * BF_NV - 1) /
				 (16 * BF_NV), bf_cols, &cj);
		goto out;
	}
#endif
	pack_op(!tb, n, k, b, pb, np, tmp, vec, threads);
#ifdef BF_X86
	if (vec)
		tfk_parallel_for(threads, (m + BF_MR - 1) / BF_MR, bf_rows,
				 &jb);
	else
#endif
		tfk_parallel_for(threads, m, bf_rows_scalar, &jb);
#ifdef BF_X86
out:
#endif
	tfk_free(pa);
	tfk_free(pb);
	tfk_free(tmp);
	return 0;
}
