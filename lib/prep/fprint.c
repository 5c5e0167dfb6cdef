/*
 * fprint.c - FarmHash Fingerprint64 and SipHash-2-4.
 *
 * Fingerprint64 follows the published farmhash reference (farmhashna:
 * Hash64 with its HashLen0to16 / 17to32 / 33to64 short-input paths and
 * the 64-byte block loop); the constants k0..k2 are farmhash's. Words
 * are read little-endian byte by byte, as farmhash's Fetch64 on a
 * little-endian machine, so the value is the same on every host. The
 * tests check it against TensorFlow's frozen values and libfarmhash.
 *
 * SipHash-2-4 is the reference algorithm (2 compression rounds per
 * 8-byte word, 4 finalization rounds, length in the top byte of the
 * last word).
 */
#include "prep/fprint.h"

static const uint64_t k0 = 0xc3a5c85c97cb3127ULL;
static const uint64_t k1 = 0xb492b66fbe98f273ULL;
static const uint64_t k2 = 0x9ae16a3b2f90404fULL;

static uint64_t ld64(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
	       (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 |
	       (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[7] << 56;
}

static uint32_t ld32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t rot(uint64_t v, int s)
{
	return s == 0 ? v : (v >> s) | (v << (64 - s));
}

static uint64_t shift_mix(uint64_t v)
{
	return v ^ (v >> 47);
}

static uint64_t hash16(uint64_t u, uint64_t v, uint64_t mul)
{
	uint64_t a = (u ^ v) * mul, b;

	a ^= a >> 47;
	b = (v ^ a) * mul;
	b ^= b >> 47;
	return b * mul;
}

static uint64_t len0to16(const uint8_t *s, size_t len)
{
	if (len >= 8) {
		uint64_t mul = k2 + len * 2;
		uint64_t a = ld64(s) + k2;
		uint64_t b = ld64(s + len - 8);
		uint64_t c = rot(b, 37) * mul + a;
		uint64_t d = (rot(a, 25) + b) * mul;

		return hash16(c, d, mul);
	}
	if (len >= 4) {
		uint64_t mul = k2 + len * 2;
		uint64_t a = ld32(s);

		return hash16(len + (a << 3), ld32(s + len - 4), mul);
	}
	if (len > 0) {
		uint32_t y = (uint32_t)s[0] + ((uint32_t)s[len >> 1] << 8);
		uint32_t z = (uint32_t)len + ((uint32_t)s[len - 1] << 2);

		return shift_mix(y * k2 ^ z * k0) * k2;
	}
	return k2;
}

static uint64_t len17to32(const uint8_t *s, size_t len)
{
	uint64_t mul = k2 + len * 2;
	uint64_t a = ld64(s) * k1;
	uint64_t b = ld64(s + 8);
	uint64_t c = ld64(s + len - 8) * mul;
	uint64_t d = ld64(s + len - 16) * k2;

	return hash16(rot(a + b, 43) + rot(c, 30) + d,
		      a + rot(b + k2, 18) + c, mul);
}

static uint64_t len33to64(const uint8_t *s, size_t len)
{
	uint64_t mul = k2 + len * 2;
	uint64_t a = ld64(s) * k2;
	uint64_t b = ld64(s + 8);
	uint64_t c = ld64(s + len - 8) * mul;
	uint64_t d = ld64(s + len - 16) * k2;
	uint64_t y = rot(a + b, 43) + rot(c, 30) + d;
	uint64_t z = hash16(y, a + rot(b + k2, 18) + c, mul);
	uint64_t e = ld64(s + 16) * mul;
	uint64_t f = ld64(s + 24);
	uint64_t g = (y + ld64(s + len - 32)) * mul;
	uint64_t h = (z + ld64(s + len - 24)) * mul;

	return hash16(rot(e + f, 43) + rot(g, 30) + h,
		      e + rot(f + a, 18) + g, mul);
}

/* farmhash's WeakHashLen32WithSeeds over the 32 bytes at s. */
static void weak32(const uint8_t *s, uint64_t a, uint64_t b, uint64_t out[2])
{
	uint64_t w = ld64(s), x = ld64(s + 8), y = ld64(s + 16);
	uint64_t z = ld64(s + 24), c;

	a += w;
	b = rot(b + a + z, 21);
	c = a;
	a += x;
	a += y;
	b += rot(a, 44);
	out[0] = a + z;
	out[1] = b + c;
}

uint64_t tfk_fprint64(const void *p, size_t len)
{
	const uint8_t *s = p, *end, *last64;
	const uint64_t seed = 81;
	uint64_t x, y, z, v[2] = { 0, 0 }, w[2] = { 0, 0 }, mul, t;

	if (len <= 16)
		return len0to16(s, len);
	if (len <= 32)
		return len17to32(s, len);
	if (len <= 64)
		return len33to64(s, len);

	x = seed;
	y = seed * k1 + 113;
	z = shift_mix(y * k2 + 113) * k2;
	x = x * k2 + ld64(s);
	end = s + ((len - 1) / 64) * 64;
	last64 = end + ((len - 1) & 63) - 63;
	do {
		x = rot(x + y + v[0] + ld64(s + 8), 37) * k1;
		y = rot(y + v[1] + ld64(s + 48), 42) * k1;
		x ^= w[1];
		y += v[0] + ld64(s + 40);
		z = rot(z + w[0], 33) * k1;
		weak32(s, v[1] * k1, x + w[0], v);
		weak32(s + 32, z + w[1], y + ld64(s + 16), w);
		t = z;
		z = x;
		x = t;
		s += 64;
	} while (s != end);
	mul = k1 + ((z & 0xff) << 1);
	s = last64;
	w[0] += (len - 1) & 63;
	v[0] += w[0];
	w[0] += v[0];
	x = rot(x + y + v[0] + ld64(s + 8), 37) * mul;
	y = rot(y + v[1] + ld64(s + 48), 42) * mul;
	x ^= w[1] * 9;
	y += v[0] * 9 + ld64(s + 40);
	z = rot(z + w[0], 33) * mul;
	weak32(s, v[1] * mul, x + w[0], v);
	weak32(s + 32, z + w[1], y + ld64(s + 16), w);
	t = z;
	z = x;
	x = t;
	return hash16(hash16(v[0], w[0], mul) + shift_mix(y) * k0 + z,
		      hash16(v[1], w[1], mul) + x, mul);
}

#define SIPROUND(v0, v1, v2, v3) do { \
	v0 += v1; v1 = rot(v1, 51); v1 ^= v0; v0 = rot(v0, 32); \
	v2 += v3; v3 = rot(v3, 48); v3 ^= v2; \
	v0 += v3; v3 = rot(v3, 43); v3 ^= v0; \
	v2 += v1; v1 = rot(v1, 47); v1 ^= v2; v2 = rot(v2, 32); \
} while (0)

/* rot() rotates right; SipHash's rotl(x, b) is rot(x, 64 - b). */
uint64_t tfk_siphash24(uint64_t key0, uint64_t key1, const void *p, size_t n)
{
	const uint8_t *s = p;
	uint64_t v0 = key0 ^ 0x736f6d6570736575ULL;
	uint64_t v1 = key1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = key0 ^ 0x6c7967656e657261ULL;
	uint64_t v3 = key1 ^ 0x7465646279746573ULL;
	uint64_t m, b = (uint64_t)n << 56;
	size_t i, full = n & ~(size_t)7;

	for (i = 0; i < full; i += 8) {
		m = ld64(s + i);
		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	for (i = 0; i < (n & 7); i++)
		b |= (uint64_t)s[full + i] << (8 * i);
	v3 ^= b;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}
