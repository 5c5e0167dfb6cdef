/*
 * fc.c - int8 FULLY_CONNECTED, and the GEMM core of the fast FC and
 * CONV_2D.
 *
 * The _ref is reference_integer_ops::FullyConnected(PerChannel): an
 * int32 dot product of (w + w_offset) and (x + in_offset), plus bias,
 * requantized per output channel.
 *
 * The fast path: int8 x int8 has no single x86 instruction, so x is fed
 * as x + 128 (an unsigned byte: x ^ 0x80) and the surplus 128 *
 * rowsum(w) is taken off through the bias, together with in_offset *
 * rowsum(w) (sum w (x + off) = sum w (x + 128) + (off - 128) sum w).
 * AVX-512 VNNI's vpdpbusd multiplies u8 by s8 and adds four products
 * into an int32 lane without saturation, so the result is exact. AVX2's
 * vpmaddubsw was rejected: it saturates its pairwise int16 sums (255 *
 * 127 * 2 > 32767), which TFLite's arithmetic does not; the AVX2 path
 * widens to int16 and uses vpmaddwd (exact) instead. int32 sums wrap
 * in both, as the _ref's (computed in int64, then truncated) do, so the
 * paths agree bit for bit whatever the sizes. Rows are made per tile of
 * 12 into a per-thread scratch that stays in L1 (or, for CONV_2D on
 * VNNI, read in place from segments of a padded input); the VNNI tile
 * is 12 rows x 32 channels, 24 accumulators, with a 4-row twin for the
 * last rows (an FC at batch 1 computes 4 rows, not 12); requantization
 * is vectorized on AVX-512.
 */
#include "kernels/int8.h"
#include "kernels/int8/gemm-impl.h"

#include "util/alloc.h"
#include "util/pool.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define I8_X86 1
#include <immintrin.h>
#endif

void tfk_int8_fc_ref(const struct tfk_int8_rq *rq, int64_t batch,
		     int64_t in, int64_t out, const int8_t *x,
		     const int8_t *w, const int32_t *bias, int8_t *y)
{
	int64_t b, o, k;

	for (b = 0; b < batch; b++)
		for (o = 0; o < out; o++) {
			int64_t acc = 0;
			int32_t v;

			for (k = 0; k < in; k++)
				acc += (int64_t)(w[o * in + k] + rq->w_offset) *
				       (x[b * in + k] + rq->in_offset);
			if (bias)
				acc += bias[o];
			/* TFLite's int32 accumulator, wrapping */
			v = (int32_t)(uint32_t)acc;
			v = tfk_int8_mbqm(v, rq->mult[o % rq->n],
					  rq->shift[o % rq->n]) +
			    rq->out_offset;
			v = v < rq->act_min ? rq->act_min : v;
			v = v > rq->act_max ? rq->act_max : v;
			y[b * out + o] = (int8_t)v;
		}
}

void tfk_int8_packed_release(struct tfk_int8_packed *p)
{
	if (!p)
		return;
	tfk_free(p->w4);
	tfk_free(p->w2);
	tfk_free(p->wsum);
	memset(p, 0, sizeof(*p));
}

int tfk_int8_pack(struct tfk_int8_packed *p, int64_t n, int64_t k,
		  const int8_t *w, struct tfk_err *err)
{
	int64_t j, i;

	memset(p, 0, sizeof(*p));
	if (n < 1 || k < 1 || n > (1LL << 30) || k > (1LL << 30))
		return tfk_errf(err, TFK_EINVAL, "weights [%lld, %lld]: "
				"sizes out of range", (long long)n,
				(long long)k);
	p->n = n;
	p->k = k;
	p->kp = (k + 3) / 4 * 4;
	p->np = (n + 15) / 16 * 16;
	p->w4 = tfk_calloc((size_t)(p->kp * p->np), 1);
	p->w2 = tfk_calloc((size_t)(p->kp * p->np), sizeof(int16_t));
	p->wsum = tfk_calloc((size_t)p->np, sizeof(int32_t));
	if (!p->w4 || !p->w2 || !p->wsum) {
		tfk_int8_packed_release(p);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	for (j = 0; j < n; j++) {
		uint32_t s = 0;

		for (i = 0; i < k; i++) {
			int8_t v = w[j * k + i];

			p->w4[((i / 4) * p->np + j) * 4 + i % 4] = v;
			p->w2[((i / 2) * p->np + j) * 2 + i % 2] = v;
			s += (uint32_t)(int32_t)v;
		}
		p->wsum[j] = (int32_t)s;
	}
	return 0;
}

int tfk_int8_pack_conv(struct tfk_int8_packed *p, int64_t o, int64_t kh,
		       int64_t kw, int64_t kc, const int8_t *f,
		       struct tfk_err *err)
{
	int64_t c4 = (kc + 3) / 4 * 4, taps = kh * kw, j, t;
	int8_t *w;
	int rc;

	memset(p, 0, sizeof(*p));
	if (o < 1 || kh < 1 || kw < 1 || kc < 1 || taps > (1 << 20) ||
	    kc > (1 << 20))
		return tfk_errf(err, TFK_EINVAL, "filter [%lld, %lld, %lld, "
				"%lld]: sizes out of range", (long long)o,
				(long long)kh, (long long)kw, (long long)kc);
	if (c4 == kc) {
		rc = tfk_int8_pack(p, o, taps * kc, f, err);
		p->tap_c = kc;
		return rc;
	}
	w = tfk_calloc((size_t)(o * taps * c4), 1);
	if (!w)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (j = 0; j < o; j++)
		for (t = 0; t < taps; t++)
			memcpy(w + (j * taps + t) * c4, f + (j * taps + t) * kc,
			       (size_t)kc);
	rc = tfk_int8_pack(p, o, taps * c4, w, err);
	tfk_free(w);
	p->tap_c = c4;
	return rc;
}

int tfk_int8_pack_conv_rows(struct tfk_int8_packed *p, int64_t o,
			    int64_t kh, int64_t kw, int64_t kc,
			    const int8_t *f, struct tfk_err *err)
{
	int64_t run = kw * kc, sp = (run + 3) / 4 * 4, j, ky;
	int8_t *w;
	int rc;

	memset(p, 0, sizeof(*p));
	if (o < 1 || kh < 1 || kw < 1 || kc < 1 || kh > (1 << 20) ||
	    run > (1 << 20))
		return tfk_errf(err, TFK_EINVAL, "filter [%lld, %lld, %lld, "
				"%lld]: sizes out of range", (long long)o,
				(long long)kh, (long long)kw, (long long)kc);
	w = tfk_calloc((size_t)(o * kh * sp), 1);
	if (!w)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (j = 0; j < o; j++)
		for (ky = 0; ky < kh; ky++)
			memcpy(w + (j * kh + ky) * sp, f + (j * kh + ky) * run,
			       (size_t)run);
	rc = tfk_int8_pack(p, o, kh * sp, w, err);
	tfk_free(w);
	p->tap_c = kc;
	p->row_k = sp;
	return rc;
}

/* The GEMM core ---------------------------------------------------------- */

/* What a tile needs beyond the gemm: per-channel arrays padded to np. */
struct gctx {
	const struct tfk_i8_gemm *g;
	int32_t *bias2, *mult, *lsh, *rsh;
	uint8_t *scratch;	/* per worker: TILE * kp */
};

static void store_row_c(const struct gctx *c, const int32_t *acc, int64_t r,
			int64_t j0, int64_t cols)
{
	const struct tfk_int8_rq *rq = c->g->rq;
	int64_t j, n = c->g->p->n;

	for (j = 0; j < cols && j0 + j < n; j++) {
		int64_t ch = j0 + j;
		int32_t v = tfk_int8_mbqm(acc[j], rq->mult[ch % rq->n],
					  rq->shift[ch % rq->n]) +
			    rq->out_offset;

		v = v < rq->act_min ? rq->act_min : v;
		v = v > rq->act_max ? rq->act_max : v;
		c->g->y[r * n + ch] = (int8_t)v;
	}
}

static void tile_c(const struct gctx *c, const uint8_t *a, int64_t m0)
{
	const struct tfk_int8_packed *p = c->g->p;
	int64_t kp = p->kp, np = p->np, j0, kq;
	int i, j, t;

	for (j0 = 0; j0 < np; j0 += 16) {
		uint32_t acc[TFK_I8_TILE][16];

		for (i = 0; i < TFK_I8_TILE; i++)
			for (j = 0; j < 16; j++)
				acc[i][j] = (uint32_t)c->bias2[j0 + j];
		for (kq = 0; kq < kp / 4; kq++) {
			const int8_t *wp = p->w4 + (kq * np + j0) * 4;

			for (i = 0; i < TFK_I8_TILE; i++) {
				const uint8_t *ap = a + i * kp + kq * 4;

				for (j = 0; j < 16; j++)
					for (t = 0; t < 4; t++)
						acc[i][j] += (uint32_t)(ap[t] *
							wp[j * 4 + t]);
			}
		}
		for (i = 0; i < TFK_I8_TILE && m0 + i < c->g->m; i++)
			store_row_c(c, (const int32_t *)acc[i], m0 + i, j0,
				    16);
	}
}

#ifdef I8_X86
#define AVX2_ATTR __attribute__((target("avx2")))
#define VNNI_ATTR __attribute__((target("avx512f,avx512bw,avx512vl," \
					   "avx512vnni")))

/* 4 rows x 16 columns of int16 pairs by vpmaddwd. */
AVX2_ATTR static void quad_avx2(const struct gctx *c, const uint8_t *a,
				int64_t j0, __m256i acc[4][2])
{
	const struct tfk_int8_packed *p = c->g->p;
	int64_t kp = p->kp, np = p->np, kk;
	int i;

	for (i = 0; i < 4; i++) {
		acc[i][0] = _mm256_loadu_si256((const void *)(c->bias2 + j0));
		acc[i][1] = _mm256_loadu_si256((const void *)(c->bias2 + j0 +
							      8));
	}
	for (kk = 0; kk < kp / 2; kk++) {
		const int16_t *wp = p->w2 + (kk * np + j0) * 2;
		__m256i w0 = _mm256_loadu_si256((const void *)wp);
		__m256i w1 = _mm256_loadu_si256((const void *)(wp + 16));

#pragma GCC unroll 4
		for (i = 0; i < 4; i++) {
			const uint8_t *ap = a + i * kp + kk * 2;
			__m256i b = _mm256_set1_epi32((int)(ap[0] |
							    (ap[1] << 16)));

			acc[i][0] = _mm256_add_epi32(acc[i][0],
						     _mm256_madd_epi16(b, w0));
			acc[i][1] = _mm256_add_epi32(acc[i][1],
						     _mm256_madd_epi16(b, w1));
		}
	}
}

AVX2_ATTR static void tile_avx2(const struct gctx *c, const uint8_t *a,
				int64_t m0)
{
	int64_t np = c->g->p->np, kp = c->g->p->kp, j0;
	int h, i;

	for (j0 = 0; j0 < np; j0 += 16)
		for (h = 0; h < TFK_I8_TILE; h += 4) {
			__m256i acc[4][2];
			int32_t out[16];

			quad_avx2(c, a + h * kp, j0, acc);
			for (i = 0; i < 4 && m0 + h + i < c->g->m; i++) {
				_mm256_storeu_si256((void *)out, acc[i][0]);
				_mm256_storeu_si256((void *)(out + 8),
						    acc[i][1]);
				store_row_c(c, out, m0 + h + i, j0, 16);
			}
		}
}

/* MultiplyByQuantizedMultiplier on 16 lanes, bit-exact with the scalar
 * one for multipliers other than INT32_MIN (QuantizeMultiplier never
 * makes it). SRDHM: (a * b + 2^30) >> 31 equals gemmlowp's nudge and
 * truncating division for either sign; the high halves come from the
 * 64-bit products, whose bits 31..62 are the result. */
VNNI_ATTR static inline __m512i rq16(__m512i x, const struct gctx *c,
				     int64_t j, __m512i off, __m512i lo,
				     __m512i hi)
{
	const __m512i one = _mm512_set1_epi32(1);
	const __m512i nudge = _mm512_set1_epi64(1LL << 30);
	__m512i m = _mm512_loadu_si512(c->mult + j);
	__m512i ls = _mm512_loadu_si512(c->lsh + j);
	__m512i rs = _mm512_loadu_si512(c->rsh + j);
	__m512i pe, po, h, mask, rem, thr, r;
	__mmask16 gt;

	x = _mm512_sllv_epi32(x, ls);
	pe = _mm512_add_epi64(_mm512_mul_epi32(x, m), nudge);
	po = _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(x, 32),
					       _mm512_srli_epi64(m, 32)),
			      nudge);
	pe = _mm512_srli_epi64(pe, 31);
	po = _mm512_slli_epi64(_mm512_srli_epi64(po, 31), 32);
	h = _mm512_mask_blend_epi32(0xAAAA, pe, po);
	mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, rs), one);
	rem = _mm512_and_si512(h, mask);
	thr = _mm512_sub_epi32(_mm512_srai_epi32(mask, 1),
			       _mm512_srai_epi32(h, 31));
	r = _mm512_srav_epi32(h, rs);
	gt = _mm512_cmpgt_epi32_mask(rem, thr);
	r = _mm512_mask_add_epi32(r, gt, r, one);
	r = _mm512_add_epi32(r, off);
	r = _mm512_max_epi32(r, lo);
	return _mm512_min_epi32(r, hi);
}

VNNI_ATTR static inline void store16(const struct gctx *c, __m512i acc,
				     int64_t r, int64_t j)
{
	const struct tfk_int8_rq *rq = c->g->rq;
	int64_t n = c->g->p->n, left = n - j;
	__mmask16 mk = left >= 16 ? 0xffff : (__mmask16)((1u << left) - 1);
	__m512i v = rq16(acc, c, j, _mm512_set1_epi32(rq->out_offset),
			 _mm512_set1_epi32(rq->act_min),
			 _mm512_set1_epi32(rq->act_max));

	_mm_mask_storeu_epi8(c->g->y + r * n + j, mk, _mm512_cvtepi32_epi8(v));
}

/* 12 rows x 32 columns: 24 accumulators, 2 weight vectors, one
 * broadcast of 4 input bytes per row and quad of k. Named registers,
 * not an array: GCC shuffled and spilled an acc[8][2] array. */
#define BC(i) _mm512_set1_epi32(ld4(a + 0x##i * kp + kq * 4))
#define DP2(i) do { __m512i b_ = BC(i); \
	c##i##0 = _mm512_dpbusd_epi32(c##i##0, b_, w0); \
	c##i##1 = _mm512_dpbusd_epi32(c##i##1, b_, w1); } while (0)
#define DP1(i) (c##i##0 = _mm512_dpbusd_epi32(c##i##0, BC(i), w0))
#define ST2(i) do { if (m0 + 0x##i < c->g->m) { \
	store16(c, c##i##0, m0 + 0x##i, j0); \
	if (j0 + 16 < p->n) store16(c, c##i##1, m0 + 0x##i, j0 + 16); } \
	} while (0)
#define ST1(i) do { if (m0 + 0x##i < c->g->m) \
	store16(c, c##i##0, m0 + 0x##i, j0); } while (0)

static inline int32_t ld4(const uint8_t *p)
{
	int32_t q;

	memcpy(&q, p, 4);
	return q;
}

/* Row i's k-th quad is at rp[i] + segment * segstride + offset: rows
 * copied into scratch (one segment) or read in place (CONV_2D without
 * im2col: kh segments). */
#undef BC
#define BC(i) _mm512_set1_epi32(ld4(rp[0x##i] + off))
struct segs {
	int64_t n, len, stride;
};

VNNI_ATTR static void tile_vnni(const struct gctx *c,
				const uint8_t *const *rp, int64_t m0,
				const struct segs *sg)
{
	const struct tfk_int8_packed *p = c->g->p;
	int64_t np = p->np, j0, s, off, end;

	for (j0 = 0; j0 + 32 <= np; j0 += 32) {
		__m512i b0 = _mm512_loadu_si512(c->bias2 + j0);
		__m512i b1 = _mm512_loadu_si512(c->bias2 + j0 + 16);
		__m512i c00 = b0, c01 = b1, c10 = b0, c11 = b1;
		__m512i c20 = b0, c21 = b1, c30 = b0, c31 = b1;
		__m512i c40 = b0, c41 = b1, c50 = b0, c51 = b1;
		__m512i c60 = b0, c61 = b1, c70 = b0, c71 = b1;
		__m512i c80 = b0, c81 = b1, c90 = b0, c91 = b1;
		__m512i cA0 = b0, cA1 = b1, cB0 = b0, cB1 = b1;
		const int8_t *wp = p->w4 + j0 * 4;

		for (s = 0; s < sg->n; s++)
			for (off = s * sg->stride, end = off + sg->len;
			     off < end; off += 4, wp += np * 4) {
				__m512i w0 = _mm512_loadu_si512(wp);
				__m512i w1 = _mm512_loadu_si512(wp + 64);

				DP2(0); DP2(1); DP2(2); DP2(3);
				DP2(4); DP2(5); DP2(6); DP2(7);
				DP2(8); DP2(9); DP2(A); DP2(B);
			}
		ST2(0); ST2(1); ST2(2); ST2(3);
		ST2(4); ST2(5); ST2(6); ST2(7);
		ST2(8); ST2(9); ST2(A); ST2(B);
	}
	if (j0 < np) {
		__m512i b0 = _mm512_loadu_si512(c->bias2 + j0);
		__m512i c00 = b0, c10 = b0, c20 = b0, c30 = b0;
		__m512i c40 = b0, c50 = b0, c60 = b0, c70 = b0;
		__m512i c80 = b0, c90 = b0, cA0 = b0, cB0 = b0;
		const int8_t *wp = p->w4 + j0 * 4;

		for (s = 0; s < sg->n; s++)
			for (off = s * sg->stride, end = off + sg->len;
			     off < end; off += 4, wp += np * 4) {
				__m512i w0 = _mm512_loadu_si512(wp);

				DP1(0); DP1(1); DP1(2); DP1(3);
				DP1(4); DP1(5); DP1(6); DP1(7);
				DP1(8); DP1(9); DP1(A); DP1(B);
			}
		ST1(0); ST1(1); ST1(2); ST1(3);
		ST1(4); ST1(5); ST1(6); ST1(7);
		ST1(8); ST1(9); ST1(A); ST1(B);
	}
}

/* 4 rows: a batch's last few rows (FC at batch 1) without computing 12. */
VNNI_ATTR static void tile_vnni4(const struct gctx *c,
				 const uint8_t *const *rp, int64_t m0,
				 const struct segs *sg)
{
	const struct tfk_int8_packed *p = c->g->p;
	int64_t np = p->np, j0, s, off, end;

	for (j0 = 0; j0 + 32 <= np; j0 += 32) {
		__m512i b0 = _mm512_loadu_si512(c->bias2 + j0);
		__m512i b1 = _mm512_loadu_si512(c->bias2 + j0 + 16);
		__m512i c00 = b0, c01 = b1, c10 = b0, c11 = b1;
		__m512i c20 = b0, c21 = b1, c30 = b0, c31 = b1;
		const int8_t *wp = p->w4 + j0 * 4;

		for (s = 0; s < sg->n; s++)
			for (off = s * sg->stride, end = off + sg->len;
			     off < end; off += 4, wp += np * 4) {
				__m512i w0 = _mm512_loadu_si512(wp);
				__m512i w1 = _mm512_loadu_si512(wp + 64);

				DP2(0); DP2(1); DP2(2); DP2(3);
			}
		ST2(0); ST2(1); ST2(2); ST2(3);
	}
	if (j0 < np) {
		__m512i b0 = _mm512_loadu_si512(c->bias2 + j0);
		__m512i c00 = b0, c10 = b0, c20 = b0, c30 = b0;
		const int8_t *wp = p->w4 + j0 * 4;

		for (s = 0; s < sg->n; s++)
			for (off = s * sg->stride, end = off + sg->len;
			     off < end; off += 4, wp += np * 4) {
				__m512i w0 = _mm512_loadu_si512(wp);

				DP1(0); DP1(1); DP1(2); DP1(3);
			}
		ST1(0); ST1(1); ST1(2); ST1(3);
	}
}
#undef BC
#undef DP2
#undef DP1
#undef ST2
#undef ST1
#endif

struct i8_isa {
	const char *name;
	/* rows copied into a (TILE rows of kp bytes) */
	void (*tile)(const struct gctx *c, const uint8_t *a, int64_t m0);
	/* or rows by pointer, in segments: all TILE rows, or 4 */
	void (*ptr)(const struct gctx *c, const uint8_t *const *rp,
		    int64_t m0, const struct segs *sg);
	void (*ptr4)(const struct gctx *c, const uint8_t *const *rp,
		     int64_t m0, const struct segs *sg);
};

static const struct i8_isa isas[] = {
	{ "c", tile_c, NULL, NULL },
#ifdef I8_X86
	{ "avx2", tile_avx2, NULL, NULL },
	{ "avx512vnni", NULL, tile_vnni, tile_vnni4 },
#endif
};

#define N_ISAS ((int)(sizeof(isas) / sizeof(isas[0])))

static int isa_ok(int i)
{
#ifdef I8_X86
	if (!strcmp(isas[i].name, "avx2"))
		return __builtin_cpu_supports("avx2");
	if (!strcmp(isas[i].name, "avx512vnni"))
		return __builtin_cpu_supports("avx512f") &&
			__builtin_cpu_supports("avx512bw") &&
			__builtin_cpu_supports("avx512vl") &&
			__builtin_cpu_supports("avx512vnni");
#endif
	return 1;
}

static const struct i8_isa *isa_cur;
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;

static void isa_pick(void)
{
	int i;

#ifdef I8_X86
	__builtin_cpu_init();
#endif
	for (i = N_ISAS - 1; i > 0 && !isa_ok(i); i--)
		;
	isa_cur = &isas[i];
}

const char *tfk_int8_isa(const char *want)
{
	int i;

	pthread_once(&isa_once, isa_pick);
	if (!want)
		return isa_cur->name;
	for (i = 0; i < N_ISAS; i++)
		if (!strcmp(isas[i].name, want) && isa_ok(i)) {
			isa_cur = &isas[i];
			return isa_cur->name;
		}
	return NULL;
}

struct run {
	struct gctx c;
	const struct i8_isa *isa;
};

static void run_chunk(void *ctx, int64_t begin, int64_t end, int worker)
{
	const struct run *r = ctx;
	const struct tfk_i8_gemm *g = r->c.g;
	const struct i8_isa *isa = r->isa;
	int64_t kp = g->p->kp, t, s;
	uint8_t *a = r->c.scratch + (size_t)worker * TFK_I8_TILE * kp;
	const uint8_t *rp[TFK_I8_TILE];
	struct segs sg = { g->nseg, g->seglen, g->segstride };
	int i;

	for (t = begin; t < end; t++) {
		int64_t m0 = t * TFK_I8_TILE, left = g->m - m0;

		if (g->rowptr) {
			/* rows past m read row m0 again; never stored */
			if (g->rowptrs) {
				int k = left < TFK_I8_TILE ? (int)left :
					TFK_I8_TILE;

				g->rowptrs(g->ctx, m0, k, rp);
				for (i = k; i < TFK_I8_TILE; i++)
					rp[i] = rp[0];
			} else {
				for (i = 0; i < TFK_I8_TILE; i++)
					rp[i] = g->rowptr(g->ctx, i < left ?
							  m0 + i : m0);
			}
			if (isa->ptr) {
				(left <= 4 ? isa->ptr4 : isa->ptr)(&r->c, rp,
								  m0, &sg);
				continue;
			}
			for (i = 0; i < TFK_I8_TILE; i++)
				for (s = 0; s < g->nseg; s++)
					memcpy(a + i * kp + s * g->seglen,
					       rp[i] + s * g->segstride,
					       (size_t)g->seglen);
		} else {
			for (i = 0; i < TFK_I8_TILE; i++)
				if (i < left)
					g->row(g->ctx, m0 + i, a + i * kp);
				else
					memset(a + i * kp, 0, (size_t)kp);
		}
		if (isa->ptr) {
			struct segs one = { 1, kp, 0 };

			for (i = 0; i < TFK_I8_TILE; i++)
				rp[i] = a + i * kp;
			(left <= 4 ? isa->ptr4 : isa->ptr)(&r->c, rp, m0,
							   &one);
		} else {
			isa->tile(&r->c, a, m0);
		}
	}
}

int tfk_i8_gemm_run(const struct tfk_i8_gemm *g, int threads,
		    struct tfk_conv_ws *ws, struct tfk_err *err)
{
	const struct tfk_int8_packed *p = g->p;
	const struct tfk_int8_rq *rq = g->rq;
	int64_t tiles = (g->m + TFK_I8_TILE - 1) / TFK_I8_TILE, j;
	int64_t workers;
	size_t arrays, need;
	struct run r;

	if (rq->w_offset)
		return tfk_errf(err, TFK_EINVAL, "filter zero point %d: the "
				"fast int8 kernels take symmetric filters",
				(int)-rq->w_offset);
	if (rq->n != 1 && rq->n != p->n)
		return tfk_errf(err, TFK_EINVAL, "%lld multipliers for %lld "
				"channels", (long long)rq->n,
				(long long)p->n);
	if (g->rowptr && (g->seglen % 4 || g->nseg * g->seglen != p->kp))
		return tfk_errf(err, TFK_EINVAL, "int8 gemm: %lld segments of "
				"%lld bytes for k %lld", (long long)g->nseg,
				(long long)g->seglen, (long long)p->kp);
	if (g->m <= 0)
		return 0;
	if (threads < 1)
		threads = 1;
	workers = threads < tiles ? threads : tiles;
	if (workers > 64)
		workers = 64;
	arrays = (size_t)p->np * 4 * sizeof(int32_t);
	need = arrays + (size_t)workers * TFK_I8_TILE * (size_t)p->kp + 64 +
	       g->pre_bytes;
	if (ws->cap < need) {
		void *q = tfk_realloc(ws->p, need);

		if (!q)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		ws->p = q;
		ws->cap = need;
	}
	memset(&r, 0, sizeof(r));
	r.c.g = g;
	r.c.bias2 = ws->p;
	r.c.mult = r.c.bias2 + p->np;
	r.c.lsh = r.c.mult + p->np;
	r.c.rsh = r.c.lsh + p->np;
	r.c.scratch = (uint8_t *)(r.c.rsh + p->np);
	for (j = 0; j < p->np; j++) {
		int64_t ch = j < p->n ? j : 0;
		int32_t sh = rq->shift[ch % rq->n];
		uint32_t b = g->bias && j < p->n ? (uint32_t)g->bias[j] : 0;

		b += (uint32_t)(rq->in_offset - 128) * (uint32_t)p->wsum[j];
		r.c.bias2[j] = (int32_t)b;
		r.c.mult[j] = rq->mult[ch % rq->n];
		/* sllv/srav by > 31 give 0 / the sign, as the scalar */
		r.c.lsh[j] = sh > 0 ? sh : 0;
		r.c.rsh[j] = sh > 0 ? 0 : -sh;
	}
	if (g->prep)
		g->prep((void *)g->ctx, r.c.scratch + (size_t)workers *
			TFK_I8_TILE * (size_t)p->kp);
	r.isa = (tfk_int8_isa(NULL), isa_cur);
	tfk_parallel_for((int)workers, tiles, run_chunk, &r);
	return 0;
}

/* The fast FC ------------------------------------------------------------ */

struct fc_rows {
	const int8_t *x;
	int64_t k, kp;
};

static void fc_row(const void *ctx, int64_t r, uint8_t *dst)
{
	const struct fc_rows *f = ctx;
	const int8_t *x = f->x + r * f->k;
	int64_t i;

	for (i = 0; i < f->k; i++)
		dst[i] = (uint8_t)x[i] ^ 0x80;
	for (; i < f->kp; i++)
		dst[i] = 0;
}

int tfk_int8_fc(const struct tfk_int8_rq *rq, const struct tfk_int8_packed *p,
		int64_t batch, const int8_t *x, const int32_t *bias, int8_t *y,
		int threads, struct tfk_conv_ws *ws, struct tfk_err *err)
{
	struct fc_rows f = { x, p->k, p->kp };
	struct tfk_i8_gemm g;

	memset(&g, 0, sizeof(g));
	g.rq = rq;
	g.p = p;
	g.m = batch;
	g.row = fc_row;
	g.ctx = &f;
	g.bias = bias;
	g.y = y;

	return tfk_i8_gemm_run(&g, threads, ws, err);
}
