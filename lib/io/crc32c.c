/*
 * crc32c.c - CRC-32C three ways (see crc32c.h).
 *
 * The hardware path runs three independent crc32q streams over adjacent
 * blocks (the instruction has a latency of 3 cycles and a throughput of
 * 1 per cycle), then merges them. Merging uses linearity of the CRC
 * register: processing B after state r equals shift(r, |B|) ^ crc0(B),
 * where shift multiplies by x^(8|B|) modulo the polynomial. Each shift
 * is four byte-indexed tables (4 KiB per block size) built once with
 * polynomial multiplication: the bit-serial multiply alone took longer
 * than the crc of a 768-byte short block (8 GB/s against 22 GB/s on
 * 3 KB records in cache).
 */
#include "io/crc32c.h"

#include <pthread.h>
#include <string.h>

#define POLY 0x82f63b78u

uint32_t tfk_crc32c_ref(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;

	crc = ~crc;
	while (n--) {
		crc ^= *b++;
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ POLY : crc >> 1;
	}
	return ~crc;
}

/* Slicing-by-8 ------------------------------------------------------- */

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^
				      table[0][table[t - 1][i] & 0xff];
}

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;	/* little-endian host assumed: x86-64, aarch64 */
}

uint32_t tfk_crc32c_sw(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;

	pthread_once(&table_once, table_init);
	crc = ~crc;
	while (n && ((uintptr_t)b & 7)) {
		crc = (crc >> 8) ^ table[0][(crc ^ *b++) & 0xff];
		n--;
	}
	while (n >= 8) {
		uint64_t v = load64(b) ^ crc;

		crc = table[7][v & 0xff] ^ table[6][(v >> 8) & 0xff] ^
		      table[5][(v >> 16) & 0xff] ^ table[4][(v >> 24) & 0xff] ^
		      table[3][(v >> 32) & 0xff] ^ table[2][(v >> 40) & 0xff] ^
		      table[1][(v >> 48) & 0xff] ^ table[0][v >> 56];
		b += 8;
		n -= 8;
	}
	while (n--)
		crc = (crc >> 8) ^ table[0][(crc ^ *b++) & 0xff];
	return ~crc;
}

/* SSE4.2 -------------------------------------------------------------- */

#if defined(__x86_64__)
#include <nmmintrin.h>

/* a*b modulo the polynomial, bit-reflected (x^0 is the top bit). */
static uint32_t multmodp(uint32_t a, uint32_t b)
{
	uint32_t m = 1u << 31, prod = 0;

	for (;;) {
		if (a & m) {
			prod ^= b;
			if ((a & (m - 1)) == 0)
				break;
		}
		m >>= 1;
		b = b & 1 ? (b >> 1) ^ POLY : b >> 1;
	}
	return prod;
}

/* x^(8n) modulo the polynomial. */
static uint32_t xpow8n(size_t n)
{
	uint32_t p = 1u << 31, sq = 1u << 30;	/* x^0; x^1 */

	n *= 8;
	while (n) {
		if (n & 1)
			p = multmodp(sq, p);
		sq = multmodp(sq, sq);
		n >>= 1;
	}
	return p;
}

#define LONG_BLK 8192
#define SHORT_BLK 256
#define TINY_BLK 64	/* 1 KiB records otherwise run mostly single-stream */
/*
 * Multiplying by a fixed x^(8*BLK) is linear in the other operand, so
 * it is the xor of four byte-table lookups.
 */
static uint32_t shift_long[4][256], shift_short[4][256], shift_tiny[4][256];
static pthread_once_t hw_once = PTHREAD_ONCE_INIT;
static int have_sse42;

static void shift_init(uint32_t t[4][256], size_t blk)
{
	uint32_t c = xpow8n(blk);

	for (int k = 0; k < 4; k++)
		for (uint32_t v = 0; v < 256; v++)
			t[k][v] = multmodp(c, v << (8 * k));
}

static inline uint32_t shift_by(const uint32_t t[4][256], uint32_t x)
{
	return t[0][x & 0xff] ^ t[1][(x >> 8) & 0xff] ^
	       t[2][(x >> 16) & 0xff] ^ t[3][x >> 24];
}

static void hw_init(void)
{
	__builtin_cpu_init();
	have_sse42 = __builtin_cpu_supports("sse4.2");
	shift_init(shift_long, LONG_BLK);
	shift_init(shift_short, SHORT_BLK);
	shift_init(shift_tiny, TINY_BLK);
}

__attribute__((target("sse4.2")))
static uint32_t crc3(uint32_t crc, const uint8_t **pp, size_t *np, size_t blk,
		     const uint32_t shift[4][256])
{
	const uint8_t *b = *pp;
	size_t n = *np;

	while (n >= 3 * blk) {
		uint64_t c0 = crc, c1 = 0, c2 = 0;
		const uint8_t *end = b + blk;

		do {
			c0 = _mm_crc32_u64(c0, load64(b));
			c1 = _mm_crc32_u64(c1, load64(b + blk));
			c2 = _mm_crc32_u64(c2, load64(b + 2 * blk));
			b += 8;
		} while (b < end);
		crc = shift_by(shift, (uint32_t)c0) ^ (uint32_t)c1;
		crc = shift_by(shift, crc) ^ (uint32_t)c2;
		b += 2 * blk;
		n -= 3 * blk;
	}
	*pp = b;
	*np = n;
	return crc;
}

__attribute__((target("sse4.2")))
static uint32_t hw_body(uint32_t crc, const uint8_t *b, size_t n)
{
	uint64_t c;

	/* short inputs (TFRecord headers, scalar events) need neither the
	 * alignment, byte by byte, nor the three streams */
	if (n >= 3 * TINY_BLK) {
		while ((uintptr_t)b & 7) {
			crc = _mm_crc32_u8(crc, *b++);
			n--;
		}
		crc = crc3(crc, &b, &n, LONG_BLK, shift_long);
		crc = crc3(crc, &b, &n, SHORT_BLK, shift_short);
		crc = crc3(crc, &b, &n, TINY_BLK, shift_tiny);
	}
	c = crc;
	while (n >= 8) {
		c = _mm_crc32_u64(c, load64(b));
		b += 8;
		n -= 8;
	}
	crc = (uint32_t)c;
	if (n & 4) {
		uint32_t w;

		memcpy(&w, b, 4);
		crc = _mm_crc32_u32(crc, w);
		b += 4;
	}
	if (n & 2) {
		uint16_t h;

		memcpy(&h, b, 2);
		crc = _mm_crc32_u16(crc, h);
		b += 2;
	}
	if (n & 1)
		crc = _mm_crc32_u8(crc, *b);
	return crc;
}

uint32_t tfk_crc32c_hw(uint32_t crc, const void *p, size_t n)
{
	pthread_once(&hw_once, hw_init);
	if (!have_sse42)
		return tfk_crc32c_sw(crc, p, n);
	return ~hw_body(~crc, p, n);
}

/* -1 until the first call has run hw_init, then have_sse42: a TFRecord
 * reader asks twice a record, for a few dozen bytes each time on event
 * files, so the choice is one load, not two pthread_once calls. */
static int hw_known = -1;

static int use_hw(void)
{
	int hw = __atomic_load_n(&hw_known, __ATOMIC_ACQUIRE);

	if (hw < 0) {
		pthread_once(&hw_once, hw_init);
		hw = have_sse42;
		__atomic_store_n(&hw_known, hw, __ATOMIC_RELEASE);
	}
	return hw;
}

uint32_t tfk_crc32c_extend(uint32_t crc, const void *p, size_t n)
{
	return use_hw() ? ~hw_body(~crc, p, n) : tfk_crc32c_sw(crc, p, n);
}
#else
uint32_t tfk_crc32c_hw(uint32_t crc, const void *p, size_t n)
{
	return tfk_crc32c_sw(crc, p, n);
}

static int use_hw(void)
{
	return 0;
}

uint32_t tfk_crc32c_extend(uint32_t crc, const void *p, size_t n)
{
	return tfk_crc32c_sw(crc, p, n);
}
#endif

const char *tfk_crc32c_impl(void)
{
	return use_hw() ? "sse4.2" : "slicing-by-8";
}
