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
 * into packed bf16 pairs, A as [m][k/2] pairs (one 32-bit broadcast per
 * row and pair), B as [k/2][n16][2] (one zmm holds the pairs of 16
 * columns), and a 4 x 64 tile of C is 16 zmm accumulators fed by
 * _mm512_dpbf16_ps. Packing reads A and B in whichever orientation the
 * caller has, so the transposed forms cost nothing extra. VDPBF16PS
 * treats denormal inputs and results as zero (DAZ/FTZ), the _ref does
 * not: the two agree bit for bit while no bf16 input and no partial sum
 * is below FLT_MIN (the unit test draws its values so).
 *
 * Without avx512_bf16 the same packed operands are summed by a scalar
 * loop in the same order (the float fallback: bit-identical to the
 * _ref). AMX (TMUL) is not used: this machine has none to measure on.
 * Rows of C are split over threads by tfk_parallel_for, each element's
 * sum in the same order on any thread, so results do not depend on the
 * thread count. TFK_BF16_SCALAR=1 forces the fallback (for tests and
 * comparisons).
 *
 * Rejected: rounding with VCVTNE2PS2BF16 while packing (it flushes
 * denormal inputs, unlike TensorFlow's cast; packing is O(mk + kn)
 * against the O(mnk) products, so the scalar rounding costs ~2%).
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
#define BF_PACK __attribute__((target("avx512f")))

/* tfk_bf16_round on 16 lanes, the bf16 in each lane's top half: the same
 * integer steps, so the same bits */
static inline __attribute__((always_inline)) BF_PACK
__m512i rne16(__m512i u)
{
	__mmask16 nan = _mm512_cmpgt_epu32_mask(
		_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
		_mm512_set1_epi32(0x7f800000));
	__m512i r = _mm512_add_epi32(u, _mm512_add_epi32(
		_mm512_set1_epi32(0x7fff), _mm512_and_si512(
			_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1))));

	return _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(u,
					_mm512_set1_epi32(0x400000)));
}

static BF_PACK void pack_rows_v(const float *r0, const float *r1,
				int64_t len, uint32_t *out)
{
	const __m512i top = _mm512_set1_epi32((int)0xffff0000u);
	int64_t j;

	for (j = 0; j + 16 <= len; j += 16) {
		__m512i lo = _mm512_srli_epi32(rne16(_mm512_loadu_si512(
						r0 + j)), 16);
		__m512i hi = r1 ? _mm512_and_si512(rne16(_mm512_loadu_si512(
						r1 + j)), top) :
			_mm512_setzero_si512();

		_mm512_storeu_si512(out + j, _mm512_or_si512(lo, hi));
	}
	pack_rows_c(r0, r1, len, out, j);
}

static BF_PACK void pack_run_v(const float *x, int64_t k, uint32_t *out)
{
	/* even lanes: bf16 to the bottom; odd: kept on top; then each
	 * qword's two halves ORed into its low dword and narrowed */
	const __m512i top = _mm512_set1_epi32((int)0xffff0000u);
	int64_t p;

	for (p = 0; 2 * p + 16 <= k; p += 8) {
		__m512i t = rne16(_mm512_loadu_si512(x + 2 * p));
		__m512i e = _mm512_mask_blend_epi32(0xaaaa,
			_mm512_srli_epi32(t, 16), _mm512_and_si512(t, top));

		_mm256_storeu_si256((__m256i *)(out + p), _mm512_cvtepi64_epi32(
			_mm512_or_si512(e, _mm512_srli_epi64(e, 32))));
	}
	pack_run_c(x, k, out, p);
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

/*
 * The pairs of an operand's k axis into dst[p * ld + j] (j < len, the
 * columns from len to ld zeroed): across = 1 when x is [k][len] (a pair
 * is two rows side by side), 0 when x is [len][k] (a pair is within a
 * row: packed into tmp[ceil(k / 2)], then written with stride ld).
 */
static void pack_op(int across, int64_t len, int64_t k, const float *x,
		    uint32_t *dst, int64_t ld, uint32_t *tmp, int vec)
{
	int64_t kp = (k + 1) / 2, p, j;

	if (across) {
		for (p = 0; p < kp; p++)
			pack_rows(x + 2 * p * len, 2 * p + 1 < k ?
				  x + (2 * p + 1) * len : NULL, len,
				  dst + p * ld, vec);
	} else {
		for (j = 0; j < len; j++) {
			pack_run(x + j * k, k, tmp, vec);
			for (p = 0; p < kp; p++)
				dst[p * ld + j] = tmp[p];
		}
	}
	if (ld > len)
		for (p = 0; p < kp; p++)
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

static BF_TARGET void bf_rows(void *ctx, int64_t tb0, int64_t te,
			      int worker)
{
	const struct bf_job *jb = ctx;
	int64_t t, j;

	for (t = tb0; t < te; t++) {
		int64_t i = t * BF_MR;
		int mr = jb->m - i < BF_MR ? (int)(jb->m - i) : BF_MR;

		for (j = 0; j < jb->n; j += 16 * BF_NV) {
			int nv = (int)((jb->np - j) / 16);

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
	(void)worker;
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
	tmp = tfk_malloc((size_t)kp * 4);
	if (!pa || !pb || !tmp) {
		tfk_free(pa);
		tfk_free(pb);
		tfk_free(tmp);
		return TFK_ENOMEM;
	}
	vec = tfk_cpu_have_avx512bf16();
	pack_op(ta, m, k, a, pa, m, tmp, vec);
	pack_op(!tb, n, k, b, pb, np, tmp, vec);
	jb = (struct bf_job){ m, n, kp, np, pa, pb, c };
	/* below ~1 M multiply-adds a second thread costs more to wake
	 * than it saves (as matmul.c) */
	if (m * n * k < ((int64_t)1 << 20))
		threads = 1;
#ifdef BF_X86
	if (tfk_cpu_have_avx512bf16())
		tfk_parallel_for(threads, (m + BF_MR - 1) / BF_MR, bf_rows,
				 &jb);
	else
#endif
		tfk_parallel_for(threads, m, bf_rows_scalar, &jb);
	tfk_free(pa);
	tfk_free(pb);
	tfk_free(tmp);
	return 0;
}
