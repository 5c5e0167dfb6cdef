/*
 * fmtg.c - %.<P>g and %lld by integer arithmetic (see fmtg.h).
 *
 * A finite double is m * 2^e2 with m an odd integer. With k its decimal
 * exponent, the P significant digits are T = floor(v * 10^q), q =
 * P - 1 - k, rounded by the rest v * 10^q - T: up when it is more than
 * one half, to even when it is exactly one half (glibc's printf in the
 * default rounding mode). An integer of at most P digits is printed as
 * it is. Otherwise each case of the signs of e2 and q is one
 * 128-bit multiply, shift or division with no rounding of its own:
 *
 *   e2 >= 0, q >= 0:  T = (m << e2) * 10^q, no rest
 *   e2 >= 0, q < 0:   (m << e2) divided by 10^-q
 *   e2 < 0,  q >= 0:  m * 10^q shifted right by -e2 (the usual case:
 *                     a float metric, a wall time with a fraction)
 *   e2 < 0,  q < 0:   m divided by 10^-q << -e2
 *
 * (the third in 64 bits when it fits, as for float32 metrics of 1e-4
 * to 1e9). k starts from floor(log2 v) * log10(2), which is k or
 * k - 1; for k - 1, T has one digit too many, which joins the rest.
 * Whatever would overflow 128 bits goes to snprintf, and so do NaN and
 * the infinities, so every output is glibc's own or equal to it
 * (t-fmtg compares millions of values, random bit patterns and the
 * boundaries between exponents). Digits are made 8 at a time and
 * moved in fixed-size copies (no memcpy call for a run-time length).
 */
#include "util/fmtg.h"

#include <stdio.h>
#include <string.h>

typedef unsigned __int128 u128;

static const uint64_t p10_64[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
	10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
	100000000000ull, 1000000000000ull, 10000000000000ull,
	100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull,
	10000000000000000000ull
};

static const char two_digits[] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"6869707172737475767778798081828384858687888990919293949596979899";

/* 10^q, q 0 to 38. */
static u128 p10(int q)
{
	return q < 20 ? p10_64[q] : (u128)p10_64[19] * p10_64[q - 19];
}

static int bits64(uint64_t x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

static int bits128(u128 x)
{
	uint64_t hi = (uint64_t)(x >> 64);

	return hi ? 128 - __builtin_clzll(hi) : bits64((uint64_t)x);
}

/* The rest r of a division by d: REST_ZERO, _LOW (below one half),
 * _HALF or _HIGH. */
enum { REST_ZERO, REST_LOW, REST_HALF, REST_HIGH };

static int rest_of(u128 r, u128 d)
{
	u128 other = d - r;

	if (!r)
		return REST_ZERO;
	return r < other ? REST_LOW : r == other ? REST_HALF : REST_HIGH;
}

/*
 * *t = floor(m * 2^e2 * 10^q) and *rest what is left (REST_*); -1
 * when that does not fit 128 bits.
 */
static int scaled(uint64_t m, int e2, int q, u128 *t, int *rest)
{
	u128 n, d;

	if (q > 38 || q < -38)
		return -1;
	if (e2 >= 0) {
		if (bits64(m) + e2 > 127)
			return -1;
		n = (u128)m << e2;
		if (q >= 0) {
			d = p10(q);
			if (bits128(n) + bits128(d) > 128)
				return -1;
			*t = n * d;
			*rest = REST_ZERO;
			return 0;
		}
		d = p10(-q);
		*t = n / d;
		*rest = rest_of(n % d, d);
		return 0;
	}
	if (e2 < -127)
		return -1;
	if (q >= 0 && e2 > -64 && q < 20 &&
	    bits64(m) + bits64(p10_64[q]) <= 64) {
		/* the same in 64 bits: float32 metrics of 1e-4 to 1e9 */
		uint64_t n64 = m * p10_64[q], half = 1ull << (-e2 - 1);
		uint64_t r = n64 & ((half << 1) - 1);

		*t = n64 >> -e2;
		*rest = !r ? REST_ZERO : r < half ? REST_LOW
			: r == half ? REST_HALF : REST_HIGH;
		return 0;
	}
	if (q >= 0) {
		d = p10(q);
		if (bits64(m) + bits128(d) > 128)
			return -1;
		n = (u128)m * d;
		*t = n >> -e2;
		*rest = rest_of(n & (((u128)1 << -e2) - 1), (u128)1 << -e2);
		return 0;
	}
	d = p10(-q);
	if (bits128(d) - e2 > 127)
		return -1;
	d <<= -e2;
	*t = m / d;
	*rest = rest_of(m % d, d);
	return 0;
}

static size_t fallback(char *out, double v, int prec)
{
	int n = snprintf(out, TFK_FMT_MAX, "%.*g", prec, v);

	if (n < 0) {
		*out = '\0';
		return 0;
	}
	return (size_t)n < TFK_FMT_MAX ? (size_t)n : TFK_FMT_MAX - 1;
}

/* The 8 decimal digits of x (below 10^8) at d: two short chains of
 * divisions rather than one long one. */
static inline __attribute__((always_inline)) void put8(char *d, uint32_t x)
{
	uint32_t hi = x / 10000, lo = x % 10000;

	memcpy(d, two_digits + 2 * (hi / 100), 2);
	memcpy(d + 2, two_digits + 2 * (hi % 100), 2);
	memcpy(d + 4, two_digits + 2 * (lo / 100), 2);
	memcpy(d + 6, two_digits + 2 * (lo % 100), 2);
}

/* The n decimal digits of t (which has n) at d, which has 8 bytes
 * of room before it: the first 8 or fewer digits are written as 8. */
static inline __attribute__((always_inline)) void put_digits(char *d,
							     uint64_t t,
							     int n)
{
	while (n > 8) {
		put8(d + n - 8, (uint32_t)(t % 100000000));
		t /= 100000000;
		n -= 8;
	}
	put8(d + n - 8, (uint32_t)t);
}

/* Decimal digits of t: 1 to 20. */
static int n_digits(uint64_t t)
{
	int n = (bits64(t) * 1233) >> 12;	/* log10(2) ~ 1233 / 4096 */

	return n + (n < 20 && t >= p10_64[n]) + !t;
}

size_t tfk_fmt_g(char *out, double v, int prec)
{
	uint64_t u, m, t64;
	u128 t = 0;
	int be, e2, k, lg2, q, rest = REST_ZERO, tries, nz, i, ax;
	char dbuf[8 + 48], *d = dbuf + 8, *o = out;

	memcpy(&u, &v, 8);
	be = (int)(u >> 52 & 0x7ff);
	m = u & ((1ull << 52) - 1);
	if (prec < 1 || prec > 17 || be == 0x7ff)
		return fallback(out, v, prec);
	if (u >> 63)
		*o++ = '-';
	if (!be && !m) {
		*o++ = '0';
		*o = '\0';
		return (size_t)(o - out);
	}
	if (be) {
		m |= 1ull << 52;
		e2 = be - 1075;
	} else {
		e2 = -1074;
	}
	i = __builtin_ctzll(m);
	m >>= i;
	e2 += i;
	if (e2 >= 0 && bits64(m) + e2 <= 63 && m << e2 < p10_64[prec]) {
		/* an integer of at most prec digits: itself */
		t64 = m << e2;
		i = n_digits(t64);
		put_digits(d, t64, i);
		memcpy(o, d, 20);	/* o has TFK_FMT_MAX - 1 bytes */
		o[i] = '\0';
		return (size_t)(o + i - out);
	}
	lg2 = bits64(m) - 1 + e2;
	/* floor(lg2 * log10(2)), 78913 / 2^18 just under log10(2): k or
	 * one less */
	k = lg2 >= 0 ? (lg2 * 78913) >> 18 : -((-lg2 * 78913 + 262143) >> 18);
	for (tries = 0;; tries++) {
		q = prec - 1 - k;
		if (tries > 3 || scaled(m, e2, q, &t, &rest))
			return fallback(out, v, prec);
		if (t >= p10(prec + 1)) {
			k++;
		} else if (t >= p10(prec)) {
			/* one digit too many: drop it into the rest */
			unsigned dig = (unsigned)((uint64_t)t % 10);

			t = (uint64_t)t / 10;
			rest = dig == 0 ? (rest ? REST_LOW : REST_ZERO)
				: dig < 5 ? REST_LOW
				: dig == 5 ? (rest ? REST_HIGH : REST_HALF)
				: REST_HIGH;
			k++;
			break;
		} else if (t < p10(prec - 1)) {
			k--;
		} else {
			break;
		}
	}
	t64 = (uint64_t)t;
	if (rest == REST_HIGH || (rest == REST_HALF && (t64 & 1)))
		t64++;
	if (t64 == p10_64[prec]) {
		t64 = p10_64[prec - 1];
		k++;
	}
	memset(d + 16, '0', 32);	/* what the fixed-size copies read */
	put_digits(d, t64, prec);
	for (nz = prec; nz > 1 && d[nz - 1] == '0'; nz--)
		;
	if (k < -4 || k >= prec) {
		*o++ = d[0];
		if (nz > 1) {
			*o++ = '.';
			memcpy(o, d + 1, 16);	/* nz - 1 of them count */
			o += nz - 1;
		}
		*o++ = 'e';
		*o++ = k < 0 ? '-' : '+';
		ax = k < 0 ? -k : k;
		if (ax >= 100) {
			*o++ = (char)('0' + ax / 100);
			ax %= 100;
		}
		memcpy(o, two_digits + 2 * ax, 2);
		o += 2;
	} else if (k >= 0) {
		memcpy(o, d, 17);	/* k + 1 of them count */
		o += k + 1;
		if (nz > k + 1) {
			*o++ = '.';
			memcpy(o, d + k + 1, 16);
			o += nz - k - 1;
		}
	} else {
		*o++ = '0';
		*o++ = '.';
		for (i = 0; i < -k - 1; i++)
			*o++ = '0';
		memcpy(o, d, 17);
		o += nz;
	}
	*o = '\0';
	return (size_t)(o - out);
}

size_t tfk_fmt_i64(char *out, int64_t v)
{
	uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	int n = n_digits(a);
	char dbuf[8 + 24], *d = dbuf + 8, *o = out;

	if (v < 0)
		*o++ = '-';
	put_digits(d, a, n);
	memcpy(o, d, 20);
	o[n] = '\0';
	return (size_t)(o - out) + (size_t)n;
}
