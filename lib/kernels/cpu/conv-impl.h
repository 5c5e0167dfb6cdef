/*
 * conv-impl.h - the register-tiled inner loops of conv.c, compiled once
 * per instruction set (private to conv.c, which includes it once per
 * variant).
 *
 * Before including, conv.c defines: CI_NAME(x) (x with the variant's
 * suffix), CI_ATTR (a function attribute, e.g. a target(...)), the
 * vector type CI_V of CI_W floats, CI_ZERO(), CI_SET1(x), CI_LOAD(p),
 * CI_STORE(p, v) (unaligned), CI_FMA(a, b, acc) = acc + a * b, and the
 * tile limits CI_R (rows) and CI_NV (vectors per row), chosen so that
 * CI_R * CI_NV accumulators plus CI_NV + 1 operands fit the register
 * file, and IF_R6/IF_R8/IF_R12 and IF_NV2..IF_NV4 (x where the variant
 * has that many rows / vectors, else nothing; IF_R2..IF_R4 stay defined
 * for every variant). The header undefines these at its end. struct ftile
 * and struct wtile are conv.c's.
 *
 * Each tile function switches once on (r, nv) to a body inlined with
 * them constant, so the accumulators live in registers and the loops
 * over them unroll; the switch is the whole dispatch cost.
 */

/* Forward tile: r output pixels x nv * CI_W output channels. */
static inline __attribute__((always_inline)) CI_ATTR void
CI_NAME(fwd_body)(const struct ftile *t, const int r, const int nv)
{
	CI_V acc[CI_R][CI_NV];
	float tmp[CI_NV * CI_W];
	int64_t ky, kx, c;
	int i, j;

#pragma GCC unroll 16
	for (i = 0; i < r; i++)
#pragma GCC unroll 4
		for (j = 0; j < nv; j++)
			acc[i][j] = CI_ZERO();
	for (ky = 0; ky < t->kh; ky++)
		for (kx = 0; kx < t->kw; kx++) {
			const float *a = t->a + ky * t->a_ky + kx * t->a_kx;
			const float *b = t->b + (ky * t->kw + kx) * t->kc *
				t->ldb;

			for (c = 0; c < t->kc; c++, b += t->ldb) {
				CI_V bv[CI_NV];

#pragma GCC unroll 4
				for (j = 0; j < nv; j++)
					bv[j] = CI_LOAD(b + j * CI_W);
#pragma GCC unroll 16
				for (i = 0; i < r; i++) {
					CI_V av = CI_SET1(a[i * t->a_px + c]);

#pragma GCC unroll 4
					for (j = 0; j < nv; j++)
						acc[i][j] = CI_FMA(av, bv[j],
								   acc[i][j]);
				}
			}
		}
	for (i = 0; i < r; i++) {
		float *y = t->y + i * t->y_px;

		if (t->ncols == nv * CI_W) {
#pragma GCC unroll 4
			for (j = 0; j < nv; j++)
				CI_STORE(y + j * CI_W, acc[i][j]);
		} else {
			for (j = 0; j < nv; j++)
				CI_STORE(tmp + j * CI_W, acc[i][j]);
			for (j = 0; j < t->ncols; j++)
				y[j] = tmp[j];
		}
	}
}

/* Filter-gradient tile: r input channels x nv * CI_W output channels,
 * summed over the pixels of t->n_rows output rows into t->dw. */
static inline __attribute__((always_inline)) CI_ATTR void
CI_NAME(wgt_body)(const struct wtile *t, const int r, const int nv)
{
	CI_V acc[CI_R][CI_NV];
	int64_t q, p;
	int i, j;

#pragma GCC unroll 16
	for (i = 0; i < r; i++)
#pragma GCC unroll 4
		for (j = 0; j < nv; j++)
			acc[i][j] = CI_LOAD(t->dw + i * t->ldw + j * CI_W);
	for (q = 0; q < t->n_rows; q++) {
		const float *a = t->arow[q] + t->a_off;
		const float *d = t->drow[q] + t->d_off;

		for (p = 0; p < t->ow; p++, a += t->a_px, d += t->d_px) {
			CI_V bv[CI_NV];

#pragma GCC unroll 4
			for (j = 0; j < nv; j++)
				bv[j] = CI_LOAD(d + j * CI_W);
#pragma GCC unroll 16
			for (i = 0; i < r; i++) {
				CI_V av = CI_SET1(a[i]);

#pragma GCC unroll 4
				for (j = 0; j < nv; j++)
					acc[i][j] = CI_FMA(av, bv[j],
							   acc[i][j]);
			}
		}
	}
#pragma GCC unroll 16
	for (i = 0; i < r; i++)
#pragma GCC unroll 4
		for (j = 0; j < nv; j++)
			CI_STORE(t->dw + i * t->ldw + j * CI_W, acc[i][j]);
}

#define CI_CASE(body, R, NV) case (R) * 8 + (NV): body(t, R, NV); break;
#define CI_CASES_NV(body, R) \
	CI_CASE(body, R, 1) \
	IF_NV2(CI_CASE(body, R, 2)) \
	IF_NV3(CI_CASE(body, R, 3)) \
	IF_NV4(CI_CASE(body, R, 4))

/* Every (r, nv) case up to (CI_R, CI_NV), as IF_R* and IF_NV* allow. */
#define CI_CASES(body) \
	CI_CASES_NV(body, 1) \
	IF_R2(CI_CASES_NV(body, 2)) \
	IF_R3(CI_CASES_NV(body, 3)) \
	IF_R4(CI_CASES_NV(body, 4)) \
	IF_R6(CI_CASES_NV(body, 5)) \
	IF_R6(CI_CASES_NV(body, 6)) \
	IF_R8(CI_CASES_NV(body, 7)) \
	IF_R8(CI_CASES_NV(body, 8)) \
	IF_R12(CI_CASES_NV(body, 9)) \
	IF_R12(CI_CASES_NV(body, 10)) \
	IF_R12(CI_CASES_NV(body, 11)) \
	IF_R12(CI_CASES_NV(body, 12))

static CI_ATTR void CI_NAME(fwd_tile)(const struct ftile *t, int r, int nv)
{
	switch (r * 8 + nv) {
	CI_CASES(CI_NAME(fwd_body))
	default: break;
	}
}

static CI_ATTR void CI_NAME(wgt_tile)(const struct wtile *t, int r, int nv)
{
	switch (r * 8 + nv) {
	CI_CASES(CI_NAME(wgt_body))
	default: break;
	}
}

/* The variant's parameters end here, so conv.c defines the next one. */
#undef CI_CASE
#undef CI_CASES_NV
#undef CI_CASES
#undef CI_NAME
#undef CI_ATTR
#undef CI_V
#undef CI_W
#undef CI_ZERO
#undef CI_SET1
#undef CI_LOAD
#undef CI_STORE
#undef CI_FMA
#undef CI_R
#undef CI_NV
#undef IF_R6
#undef IF_R8
#undef IF_R12
#undef IF_NV2
#undef IF_NV3
#undef IF_NV4
