/*
 * bf16conv-impl.h - the register-tiled inner loops of bf16conv.c,
 * compiled once per variant (private to bf16conv.c, which includes it
 * once for plain C and once for AVX512-BF16), as conv-impl.h is for
 * conv.c's float32 loops.
 *
 * Before including, bf16conv.c defines: BI_NAME(x) (x with the
 * variant's suffix), BI_ATTR (a function attribute), the accumulator
 * type BI_V of BI_W floats, the operand type BI_P of BI_W bf16 pairs,
 * BI_ZERO(), BI_LOADF(p) / BI_STOREF(p, v) (floats), BI_LOADP(p) (BI_W
 * pairs from uint32_t *p), BI_SET1P(u) (one pair in every lane),
 * BI_DP(acc, a, b) (acc + a.odd * b.odd, then + a.even * b.even, each
 * addition rounded: VDPBF16PS), the tile limits BI_R x BI_NV and the
 * IF_R6/IF_R8/IF_R12 and IF_NV2..IF_NV4 switches as conv-impl.h's
 * (IF_R2..IF_R4 stay defined). The header undefines them at its end.
 * struct bftile and struct bwtile are bf16conv.c's.
 *
 * The loops are conv-impl.h's with a pair of the reduction axis per
 * step instead of one element: per step, each accumulator lane takes
 * the two products of its pair in VDPBF16PS's order, so one chain per
 * output runs in the _ref's order in both variants.
 */

/* Forward tile: r output pixels x nv * BI_W output channels. */
static inline __attribute__((always_inline)) BI_ATTR void
BI_NAME(bfwd_body)(const struct bftile *t, const int r, const int nv)
{
	BI_V acc[BI_R][BI_NV];
	float tmp[BI_NV * BI_W];
	int64_t ky, kx, q;
	int i, j;

#pragma GCC unroll 16
	for (i = 0; i < r; i++)
#pragma GCC unroll 4
		for (j = 0; j < nv; j++)
			acc[i][j] = BI_ZERO();
	for (ky = 0; ky < t->kh; ky++)
		for (kx = 0; kx < t->kw; kx++) {
			const uint32_t *a = t->a + ky * t->a_ky + kx * t->a_kx;
			const uint32_t *b = t->b + (ky * t->kw + kx) * t->kp *
				t->ldb;

			for (q = 0; q < t->kp; q++, b += t->ldb) {
				BI_P bv[BI_NV];

#pragma GCC unroll 4
				for (j = 0; j < nv; j++)
					bv[j] = BI_LOADP(b + j * BI_W);
#pragma GCC unroll 16
				for (i = 0; i < r; i++) {
					BI_P av = BI_SET1P(a[i * t->a_px + q]);

#pragma GCC unroll 4
					for (j = 0; j < nv; j++)
						acc[i][j] = BI_DP(acc[i][j], av,
								  bv[j]);
				}
			}
		}
	for (i = 0; i < r; i++) {
		float *y = t->y + i * t->y_px;

		if (t->ncols == nv * BI_W) {
#pragma GCC unroll 4
			for (j = 0; j < nv; j++)
				BI_STOREF(y + j * BI_W, acc[i][j]);
		} else {
			for (j = 0; j < nv; j++)
				BI_STOREF(tmp + j * BI_W, acc[i][j]);
			for (j = 0; j < t->ncols; j++)
				y[j] = tmp[j];
		}
	}
}

/* Filter-gradient tile: r input channels (or, with one channel, r
 * taps of a filter row: t->a_r apart) x nv * BI_W output channels,
 * summed over the pixel pairs of t->n_rows output rows into t->dw. */
static inline __attribute__((always_inline)) BI_ATTR void
BI_NAME(bwgt_body)(const struct bwtile *t, const int r, const int nv,
		   const int64_t ar)
{
	BI_V acc[BI_R][BI_NV];
	int64_t q, p;
	int i, j;

#pragma GCC unroll 16
	for (i = 0; i < r; i++)
#pragma GCC unroll 4
		for (j = 0; j < nv; j++)
			acc[i][j] = BI_LOADF(t->dw + i * t->ldw + j * BI_W);
	for (q = 0; q < t->n_rows; q++) {
		const uint32_t *a = t->arow[q] + t->a_off;
		const uint32_t *d = t->drow[q] + t->d_off;

		for (p = 0; p < t->np; p++, a += t->a_pp, d += t->d_pp) {
			BI_P bv[BI_NV];

#pragma GCC unroll 4
			for (j = 0; j < nv; j++)
				bv[j] = BI_LOADP(d + j * BI_W);
#pragma GCC unroll 16
			for (i = 0; i < r; i++) {
				BI_P av = BI_SET1P(a[i * ar]);

#pragma GCC unroll 4
				for (j = 0; j < nv; j++)
					acc[i][j] = BI_DP(acc[i][j], av, bv[j]);
			}
		}
	}
#pragma GCC unroll 16
	for (i = 0; i < r; i++)
#pragma GCC unroll 4
		for (j = 0; j < nv; j++)
			BI_STOREF(t->dw + i * t->ldw + j * BI_W, acc[i][j]);
}

/* The filter gradient's two strides between tile rows: channels (1,
 * a constant: immediate offsets) and taps (t->a_r). */
static inline __attribute__((always_inline)) BI_ATTR void
BI_NAME(bwgt_body_c)(const struct bwtile *t, const int r, const int nv)
{
	BI_NAME(bwgt_body)(t, r, nv, 1);
}

static inline __attribute__((always_inline)) BI_ATTR void
BI_NAME(bwgt_body_t)(const struct bwtile *t, const int r, const int nv)
{
	BI_NAME(bwgt_body)(t, r, nv, t->a_r);
}

#define BI_CASE(body, R, NV) case (R) * 8 + (NV): body(t, R, NV); break;
#define BI_CASES_NV(body, R) \
	BI_CASE(body, R, 1) \
	IF_NV2(BI_CASE(body, R, 2)) \
	IF_NV3(BI_CASE(body, R, 3)) \
	IF_NV4(BI_CASE(body, R, 4))

#define BI_CASES(body) \
	BI_CASES_NV(body, 1) \
	IF_R2(BI_CASES_NV(body, 2)) \
	IF_R3(BI_CASES_NV(body, 3)) \
	IF_R4(BI_CASES_NV(body, 4)) \
	IF_R6(BI_CASES_NV(body, 5)) \
	IF_R6(BI_CASES_NV(body, 6)) \
	IF_R8(BI_CASES_NV(body, 7)) \
	IF_R8(BI_CASES_NV(body, 8)) \
	IF_R12(BI_CASES_NV(body, 9)) \
	IF_R12(BI_CASES_NV(body, 10)) \
	IF_R12(BI_CASES_NV(body, 11)) \
	IF_R12(BI_CASES_NV(body, 12))

static BI_ATTR void BI_NAME(bfwd_tile)(const struct bftile *t, int r, int nv)
{
	switch (r * 8 + nv) {
	BI_CASES(BI_NAME(bfwd_body))
	default: break;
	}
}

static BI_ATTR void BI_NAME(bwgt_tile)(const struct bwtile *t, int r, int nv)
{
	if (t->a_r == 1)
		switch (r * 8 + nv) {
		BI_CASES(BI_NAME(bwgt_body_c))
		default: break;
		}
	else
		switch (r * 8 + nv) {
		BI_CASES(BI_NAME(bwgt_body_t))
		default: break;
		}
}

#undef BI_CASE
#undef BI_CASES_NV
#undef BI_CASES
#undef BI_NAME
#undef BI_ATTR
#undef BI_V
#undef BI_P
#undef BI_W
#undef BI_ZERO
#undef BI_LOADF
#undef BI_STOREF
#undef BI_LOADP
#undef BI_SET1P
#undef BI_DP
#undef BI_R
#undef BI_NV
#undef IF_R6
#undef IF_R8
#undef IF_R12
#undef IF_NV2
#undef IF_NV3
#undef IF_NV4
