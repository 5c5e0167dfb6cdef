/*
 * t-bf16gemm.c - bfloat16 products (kernels/cpu/bf16gemm.c): the
 * float32 -> bfloat16 rounding on its edge cases (ties to even both
 * ways, NaN, infinities, overflow to infinity, -0, subnormals), the
 * _ref on a case worked by hand (rounding visible in the result), and
 * tfk_cpu_sbgemm_mt against the _ref.
 *
 * Bound: none — the fast kernel (VDPBF16PS) and the scalar fallback
 * sum the same exact products in the same order with one float32
 * rounding per addition, so both must equal the _ref bit for bit. The
 * values are drawn so that no input and no partial sum is subnormal
 * (magnitudes 2^-8 .. 2, or 0), where VCVTNE2PS2BF16 and VDPBF16PS
 * would flush to zero and the _ref would not. Every transpose combination, odd k, n not a
 * multiple of 16 and m not a multiple of 4 run; 1, 2 and 3 threads give
 * the same bytes.
 */
#include "kernels/cpu.h"
#include "tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rs = 0x9e3779b97f4a7c15ull;

static uint32_t urand(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)(rs >> 11);
}

/* 0 one time in 16, else +-[2^-8, 2) with full float32 mantissas */
static float frand(void)
{
	uint32_t u = urand();
	float f;

	if ((u & 15) == 0)
		return 0;
	f = ldexpf(1.0f + (float)(urand() & 0x7fffff) / 8388608.0f,
		   -(int)((u >> 4) % 9) + 0);
	return (u & 0x100000) ? -f : f;
}

static uint16_t rnd_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return tfk_bf16_round(f);
}

static void rounding(void)
{
	is_int(rnd_bits(0x3f800000), 0x3f80, "1.0 exact");
	is_int(rnd_bits(0x3f808000), 0x3f80, "tie, even below: down");
	is_int(rnd_bits(0x3f818000), 0x3f82, "tie, odd below: up to even");
	is_int(rnd_bits(0x3f808001), 0x3f81, "above the tie: up");
	is_int(rnd_bits(0x3f807fff), 0x3f80, "below the tie: down");
	is_int(rnd_bits(0xbf818000), 0xbf82, "negative tie: to even");
	is_int(rnd_bits(0x80000000), 0x8000, "-0 kept");
	is_int(rnd_bits(0x7f800000), 0x7f80, "+inf kept");
	is_int(rnd_bits(0xff800000), 0xff80, "-inf kept");
	is_int(rnd_bits(0x7f7fffff), 0x7f80, "FLT_MAX rounds to +inf");
	is_int(rnd_bits(0x7f800001), 0x7fc0, "signalling NaN: quiet NaN");
	is_int(rnd_bits(0xffc00001), 0xffc0, "negative NaN: stays NaN");
	is_int(rnd_bits(0x00018000), 0x0002, "subnormal tie: to even");
	is_int(rnd_bits(0x00008000), 0x0000, "subnormal tie: to zero");
	ok(tfk_bf16_float(0x3f81) == 1.0078125f, "widening is exact");
}

static void hand_case(void)
{
	/* A = [1 + 2^-8, 3], B = [1, 2^-9]^T: in float32 the product is
	 * 1.00390625 + 0.005859375; in bfloat16 1 + 2^-8 rounds to 1
	 * (tie, even) and the odd element's product goes in first: 1.0
	 * + 0.005859375 = 1.005859375 */
	float a[2] = { 1.00390625f, 3.0f }, b[2] = { 1.0f, 0.001953125f };
	float c = -1, f;

	tfk_cpu_sbgemm_ref(0, 0, 1, 1, 2, a, b, &c);
	ok(c == 1.005859375f, "_ref: 1x2 by hand (%.9g)", c);
	c = -1;
	is_int(tfk_cpu_sbgemm_mt(0, 0, 1, 1, 2, a, b, &c, 1), 0, "mt: 0");
	ok(c == 1.005859375f, "mt: 1x2 by hand (%.9g)", c);
	tfk_cpu_sgemm_ref(0, 0, 1, 1, 2, a, b, &f);
	ok(f != c, "float32's product differs (%.9g)", f);
}

static const struct {
	int ta, tb;
	int64_t m, n, k;
} cf[] = {
	{ 0, 0, 32, 128, 784 },	/* the MLP's forward */
	{ 1, 0, 784, 128, 32 },	/* its kernel gradient x^T dy */
	{ 0, 1, 32, 784, 128 },	/* its input gradient dy W^T */
	{ 0, 0, 7, 33, 5 },
	{ 1, 1, 5, 17, 9 },
	{ 0, 0, 1, 10, 1 },
	{ 0, 0, 3, 70, 131 },
	{ 1, 0, 9, 1, 3 },
};

static void against_ref(const char *what)
{
	int i, bad = 0, bad_thr = 0;

	for (i = 0; i < (int)(sizeof(cf) / sizeof(cf[0])); i++) {
		int64_t m = cf[i].m, n = cf[i].n, k = cf[i].k, j;
		size_t cb = (size_t)(m * n) * sizeof(float);
		float *a = malloc((size_t)(m * k) * sizeof(float));
		float *b = malloc((size_t)(k * n) * sizeof(float));
		float *c0 = malloc(cb), *c1 = malloc(cb), *c2 = malloc(cb);
		float *c3 = malloc(cb);

		for (j = 0; j < m * k; j++)
			a[j] = frand();
		for (j = 0; j < k * n; j++)
			b[j] = frand();
		tfk_cpu_sbgemm_ref(cf[i].ta, cf[i].tb, m, n, k, a, b, c0);
		memset(c1, 0xff, cb);
		tfk_cpu_sbgemm_mt(cf[i].ta, cf[i].tb, m, n, k, a, b, c1, 1);
		tfk_cpu_sbgemm_mt(cf[i].ta, cf[i].tb, m, n, k, a, b, c2, 2);
		tfk_cpu_sbgemm_mt(cf[i].ta, cf[i].tb, m, n, k, a, b, c3, 3);
		if (memcmp(c0, c1, cb)) {
			bad++;
			for (j = 0; j < m * n; j++)
				if (memcmp(&c0[j], &c1[j], 4)) {
					tap_diag("case %d: C[%lld] %.9g vs "
						 "_ref %.9g", i, (long long)j,
						 c1[j], c0[j]);
					break;
				}
		}
		bad_thr += !!memcmp(c1, c2, cb) + !!memcmp(c1, c3, cb);
		free(a);
		free(b);
		free(c0);
		free(c1);
		free(c2);
		free(c3);
	}
	is_int(bad, 0, "%s vs _ref: bit-identical on %d shapes", what,
	       (int)(sizeof(cf) / sizeof(cf[0])));
	is_int(bad_thr, 0, "%s with 1, 2 and 3 threads: same bytes", what);
}

int main(void)
{
	rounding();
	hand_case();
	if (tfk_cpu_have_avx512bf16())
		against_ref("AVX512-BF16 kernel");
	else
		tap_diag("no avx512_bf16 on this CPU: the fast kernel is "
			 "not tested here");
	setenv("TFK_BF16_SCALAR", "1", 1);
	ok(!tfk_cpu_have_avx512bf16(), "TFK_BF16_SCALAR=1 selects the "
	   "fallback");
	against_ref("scalar fallback");
	return tap_done();
}
