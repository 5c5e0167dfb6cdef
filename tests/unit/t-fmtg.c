/*
 * t-fmtg.c - tfk_fmt_g and tfk_fmt_i64 against glibc's snprintf.
 *
 * The oracle is libc itself: every value is formatted both ways and the
 * bytes must agree. Values: every precision 1 to 17 on random bit
 * patterns (all exponents, subnormals included), random float32 values
 * at %.9g (tfk-events' float format) and doubles at %.17g, numbers
 * next to powers of ten and to the rounding boundaries between them
 * (9.9999999949..., 0.000099999..., 1e16 - 1), exact ties (2.5 at
 * %.1g, 0.125 at %.2g: half to even), integers, wall times of event
 * files with and without fractions, signed zeros, NaN and infinities.
 */
#include "util/fmtg.h"
#include "tap.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static uint64_t rng = 0x243f6a8885a308d3u;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1du;
}

static long n_bad;

/* 1 when v formats alike at prec; the first few differences shown. */
static int same(double v, int prec)
{
	char want[TFK_FMT_MAX], got[TFK_FMT_MAX];
	size_t n;

	snprintf(want, sizeof(want), "%.*g", prec, v);
	n = tfk_fmt_g(got, v, prec);
	if (n == strlen(want) && !strcmp(got, want))
		return 1;
	if (n_bad++ < 10)
		tap_diag("%.*g: %a at %d gives \"%s\" (%zu)", prec, v, v, prec,
			 got, n);
	return 0;
}

static double from_bits(uint64_t u)
{
	double v;

	memcpy(&v, &u, 8);
	return v;
}

static void random_bits(void)
{
	long i, bad = 0;
	int prec;

	n_bad = 0;
	for (i = 0; i < 100000; i++) {
		double v = from_bits(rnd());

		for (prec = 1; prec <= 17; prec++)
			bad += !same(v, prec);
	}
	is_int(bad, 0, "random doubles at every precision 1 to 17");
}

static void random_floats(void)
{
	long i, bad = 0;
	uint32_t u;
	float f;

	n_bad = 0;
	for (i = 0; i < 1000000; i++) {
		u = (uint32_t)rnd();
		memcpy(&f, &u, 4);
		bad += !same(f, 9);
		bad += !same(f, 17);
	}
	/* the metrics' range, densely: floats between 1e-8 and 1e8 */
	for (i = 0; i < 1000000; i++) {
		f = (float)(pow(10, (double)(rnd() % 16000000) / 1e6 - 8) *
			    (rnd() & 1 ? 1 : -1));
		bad += !same(f, 9);
	}
	/* every float in [1, 2) and [0.1, 0.2) at a stride */
	for (u = 0x3f800000u; u < 0x40000000u; u += 13) {
		memcpy(&f, &u, 4);
		bad += !same(f, 9);
	}
	for (f = 0.1f; f < 0.2f; f = nextafterf(f, 1)) {
		bad += !same(f, 9);
		f = nextafterf(nextafterf(f, 1), 1);
	}
	is_int(bad, 0, "random float32 values at %%.9g and %%.17g");
}

static void boundaries(void)
{
	long bad = 0;
	int e, prec, j;

	n_bad = 0;
	for (e = -330; e <= 310; e++) {
		double p = pow(10, e);
		double v = p;

		for (j = 0; j < 40; j++) {
			for (prec = 1; prec <= 17; prec++)
				bad += !same(v, prec) + !same(-v, prec);
			v = nextafter(v, 0);
		}
		v = p;
		for (j = 0; j < 40; j++) {
			for (prec = 1; prec <= 17; prec++)
				bad += !same(v, prec);
			v = nextafter(v, INFINITY);
		}
		/* where rounding carries into the next power */
		for (prec = 1; prec <= 17; prec++) {
			double r = p * (1 - 0.5 * pow(10, -prec));

			for (j = -3, v = r; j <= 3; j++)
				bad += !same(nextafter(v, j < 0 ? 0 : INFINITY),
					     prec);
			bad += !same(r, prec) + !same((float)r, prec);
		}
	}
	is_int(bad, 0, "values next to powers of ten and their carries");
}

static void specials(void)
{
	static const double v[] = {
		0.0, -0.0, 1, -1, 0.5, 2.5, 0.125, 0.375, 1.5, 1e16, 1e16 - 1,
		9007199254740993.0, 1e17, 1e21, 123456789, 1234567890,
		1700000000.0, 1700000123.25, 1.7e9 + 0.123456, 1712345678.9012,
		0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 0.0001, 0.00001, 0.000123456,
		DBL_MAX, DBL_MIN, DBL_TRUE_MIN, FLT_MAX, FLT_MIN, 4.9e-324,
		3.4028234663852886e38, 1e-7, 1e-23, 1e-24, 1e-30, 12345678901.5,
		99999999.5, 999999999.5, 9999999995.0, 0.99999999995,
	};
	long bad = 0;
	size_t i;
	int prec;
	char buf[TFK_FMT_MAX];

	n_bad = 0;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		for (prec = 1; prec <= 17; prec++)
			bad += !same(v[i], prec) + !same(-v[i], prec) +
			       !same((float)v[i], prec);
	bad += !same(NAN, 9) + !same(-NAN, 9) + !same(INFINITY, 17) +
	       !same(-INFINITY, 9);
	is_int(bad, 0, "zeros, ties, integers, wall times, extremes");
	tfk_fmt_g(buf, 2.5, 1);
	is_str(buf, "2", "2.5 at %%.1g rounds half to even");
	tfk_fmt_g(buf, 1700000000.5, 17);
	is_str(buf, "1700000000.5", "a wall time at %%.17g");
	tfk_fmt_g(buf, 0.1f, 9);
	is_str(buf, "0.100000001", "0.1f at %%.9g");
	tfk_fmt_g(buf, -0.0, 9);
	is_str(buf, "-0", "negative zero");
	tfk_fmt_g(buf, 1e-5, 9);
	is_str(buf, "1e-05", "1e-5 at %%.9g in e form");
}

static void ints(void)
{
	static const int64_t v[] = {
		0, 1, -1, 9, 10, 99, 100, 12345, -98765, INT32_MAX, INT32_MIN,
		999999999999999999, 1000000000000000000, INT64_MAX, INT64_MIN,
		INT64_MIN + 1,
	};
	char want[32], got[TFK_FMT_MAX];
	long bad = 0, i;
	size_t n;

	for (i = 0; i < (long)(sizeof(v) / sizeof(v[0])) + 200000; i++) {
		int64_t x = i < (long)(sizeof(v) / sizeof(v[0])) ? v[i]
			: (int64_t)(rnd() >> (rnd() % 64));

		if (i & 1 && i >= 16)
			x = -x;
		snprintf(want, sizeof(want), "%" PRId64, x);
		n = tfk_fmt_i64(got, x);
		bad += n != strlen(want) || strcmp(got, want);
	}
	is_int(bad, 0, "integers as %%" PRId64);
}

int main(void)
{
	specials();
	ints();
	boundaries();
	random_floats();
	random_bits();
	return tap_done();
}
