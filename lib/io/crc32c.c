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
 *
 * Where the CPU has AVX-512 with VPCLMULQDQ, inputs of 256 bytes and
 * more are folded instead: four 64-byte accumulators, each moved on by
 * a multiply with x^2048 modulo P per 256-byte stride, no dependency
 * between them, one 16-byte remainder finished by the crc32 instruction.
 * That runs at several times the crc32 streams' 8 bytes a cycle, which
 * the streams cannot pass: tfk-count spent a third of its time in crc3.
 * The constants are computed at start from the polynomial (no tables to
 * trust), and the path is compiled with target attributes so that the
 * build runs on any x86-64.
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

/* x^m modulo the polynomial, m in bits. */
static uint32_t xpow(uint64_t m)
{
	uint32_t p = 1u << 31, sq = 1u << 30;	/* x^0; x^1 */

	while (m) {
		if (m & 1)
			p = multmodp(sq, p);
		sq = multmodp(sq, sq);
		m >>= 1;
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
	uint32_t c = xpow(8 * (uint64_t)blk);

	for (int k = 0; k < 4; k++)
		for (uint32_t v = 0; v < 256; v++)
			t[k][v] = multmodp(c, v << (8 * k));
}

static inline uint32_t shift_by(const uint32_t t[4][256], uint32_t x)
{
	return t[0][x & 0xff] ^ t[1][(x >> 8) & 0xff] ^
	       t[2][(x >> 16) & 0xff] ^ t[3][x >> 24];
}

/*
 * Folding constants for the carry-less path. A 128-bit lane loaded from
 * 16 bytes holds a polynomial with bit j the coefficient of x^(127-j);
 * its low 64-bit half L is the high-degree part (L*x^64 + H). Moving the
 * lane d bits on multiplies it by x^d, and the reflected clmul of two
 * 64-bit halves returns x times their product, so the lane folds as
 * clmul(L, x^(d+63) mod P) ^ clmul(H, x^(d-1) mod P). A constant of
 * degree < 32 in a 64-bit half sits in bits 32..63 (x^0 at bit 63).
 */
struct fold_k {
	uint64_t lo, hi;
};

static struct fold_k fold_2048, fold_1536, fold_1024, fold_512;
static struct fold_k fold_lanes[4];

static struct fold_k fold_init(unsigned d)
{
	struct fold_k k;

	k.lo = (uint64_t)xpow(d + 63) << 32;
	k.hi = (uint64_t)xpow(d - 1) << 32;
	return k;
}

static int have_clmul;

static void hw_init(void)
{
	__builtin_cpu_init();
	have_sse42 = __builtin_cpu_supports("sse4.2");
	have_clmul = have_sse42 && __builtin_cpu_supports("avx512f") &&
		     __builtin_cpu_supports("avx512vl") &&
		     __builtin_cpu_supports("avx512bw") &&
		     __builtin_cpu_supports("avx512vbmi") &&
		     __builtin_cpu_supports("vpclmulqdq");
	shift_init(shift_long, LONG_BLK);
	shift_init(shift_short, SHORT_BLK);
	shift_init(shift_tiny, TINY_BLK);
	fold_2048 = fold_init(2048);
	fold_1536 = fold_init(1536);
	fold_1024 = fold_init(1024);
	fold_512 = fold_init(512);
	/* the four lanes of one 64-byte register onto the last one */
	fold_lanes[0] = fold_init(384);
	fold_lanes[1] = fold_init(256);
	fold_lanes[2] = fold_init(128);
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

/* AVX-512 VPCLMULQDQ ---------------------------------------------------- */

#include <immintrin.h>

#define CLMUL_MIN 256	/* below it the crc32 streams win (t-crc32c bench) */

#define CLMUL_TARGET \
	__attribute__((target("sse4.2,pclmul,avx512f,avx512vl,avx512bw,avx512vbmi,vpclmulqdq")))

CLMUL_TARGET
static inline __m512i fold512(__m512i x, __m512i k, __m512i y)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
					 _mm512_clmulepi64_epi128(x, k, 0x11),
					 y, 0x96);
}

CLMUL_TARGET
static inline __m512i bcast(const struct fold_k *k)
{
	return _mm512_broadcast_i32x4(_mm_set_epi64x((long long)k->hi,
						     (long long)k->lo));
}

/*
 * Four 64-byte accumulators over 256-byte strides, the incoming crc
 * xored into the first four bytes (linearity again), then folded onto
 * one 16-byte lane; the crc32 instruction over that lane's 16 bytes is
 * the lane times x^32 modulo P, the crc of everything so far. n >= 256.
 */
CLMUL_TARGET
static uint32_t clmul_body(uint32_t crc, const uint8_t *b, size_t n)
{
	__m512i x0, x1, x2, x3, k;
	__m128i r;
	uint64_t c;

	x0 = _mm512_xor_si512(_mm512_loadu_si512(b),
			      _mm512_castsi128_si512(_mm_cvtsi32_si128((int)crc)));
	x1 = _mm512_loadu_si512(b + 64);
	x2 = _mm512_loadu_si512(b + 128);
	x3 = _mm512_loadu_si512(b + 192);
	b += 256;
	n -= 256;
	k = bcast(&fold_2048);
	while (n >= 256) {
		x0 = fold512(x0, k, _mm512_loadu_si512(b));
		x1 = fold512(x1, k, _mm512_loadu_si512(b + 64));
		x2 = fold512(x2, k, _mm512_loadu_si512(b + 128));
		x3 = fold512(x3, k, _mm512_loadu_si512(b + 192));
		b += 256;
		n -= 256;
	}
	/* side by side, not a chain: a 1 KiB record has only four strides */
	k = bcast(&fold_512);
	x3 = _mm512_ternarylogic_epi64(fold512(x0, bcast(&fold_1536), x3),
				       fold512(x1, bcast(&fold_1024),
					       _mm512_clmulepi64_epi128(x2, k, 0x00)),
				       _mm512_clmulepi64_epi128(x2, k, 0x11), 0x96);
	while (n >= 64) {
		x3 = fold512(x3, k, _mm512_loadu_si512(b));
		b += 64;
		n -= 64;
	}
	/*
	 * The last n < 64 bytes T, without a branch per length (random
	 * record lengths mispredicted every tail loop): X*x^(8n) + T is
	 * X's first n bytes one block earlier (P, folded by 512 bits) plus
	 * X's other 64 - n bytes followed by T (Q). Q's tail comes from
	 * the buffer's last 64 bytes, which the 256 bytes at least before
	 * make safe to load. vpermb only reads an index's low 6 bits.
	 */
	{
		__m512i idx = _mm512_add_epi8(
			_mm512_set_epi8(63, 62, 61, 60, 59, 58, 57, 56, 55, 54,
					53, 52, 51, 50, 49, 48, 47, 46, 45, 44,
					43, 42, 41, 40, 39, 38, 37, 36, 35, 34,
					33, 32, 31, 30, 29, 28, 27, 26, 25, 24,
					23, 22, 21, 20, 19, 18, 17, 16, 15, 14,
					13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2,
					1, 0),
			_mm512_set1_epi8((char)n));
		__mmask64 keep = ~0ull >> n;
		__m512i last = _mm512_loadu_si512(b + n - 64);
		__m512i q = _mm512_mask_permutexvar_epi8(last, keep, idx, x3);
		__m512i pp = _mm512_maskz_permutexvar_epi8(~keep, idx, x3);

		x3 = fold512(pp, k, q);
	}
	/* lanes 0..2 moved on by 384, 256, 128 bits; lane 3's constant is
	 * zero, so its product drops out and it is xored in as it is */
	k = _mm512_loadu_si512(fold_lanes);
	x0 = _mm512_xor_si512(_mm512_clmulepi64_epi128(x3, k, 0x00),
			      _mm512_clmulepi64_epi128(x3, k, 0x11));
	r = _mm_ternarylogic_epi64(_mm512_extracti32x4_epi32(x0, 0),
				   _mm512_extracti32x4_epi32(x0, 1),
				   _mm512_extracti32x4_epi32(x0, 2), 0x96);
	r = _mm_ternarylogic_epi64(r, _mm512_extracti32x4_epi32(x0, 3),
				   _mm512_extracti32x4_epi32(x3, 3), 0x96);
	c = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(r));
	c = _mm_crc32_u64(c, (uint64_t)_mm_extract_epi64(r, 1));
	return (uint32_t)c;
}

uint32_t tfk_crc32c_clmul(uint32_t crc, const void *p, size_t n)
{
	pthread_once(&hw_once, hw_init);
	if (!have_clmul)
		return tfk_crc32c_hw(crc, p, n);
	if (n < CLMUL_MIN)
		return ~hw_body(~crc, p, n);
	return ~clmul_body(~crc, p, n);
}

/* -1 until the first call has run hw_init, then 0 (slicing-by-8), 1
 * (sse4.2) or 2 (and avx512 vpclmulqdq): a TFRecord reader asks twice a
 * record, for a few dozen bytes each time on event files, so the choice
 * is one load, not two pthread_once calls. */
static int hw_known = -1;

static int use_hw(void)
{
	int hw = __atomic_load_n(&hw_known, __ATOMIC_ACQUIRE);

	if (hw < 0) {
		pthread_once(&hw_once, hw_init);
		hw = have_clmul ? 2 : have_sse42;
		__atomic_store_n(&hw_known, hw, __ATOMIC_RELEASE);
	}
	return hw;
}

uint32_t tfk_crc32c_extend(uint32_t crc, const void *p, size_t n)
{
	int hw = use_hw();

	if (hw == 2 && n >= CLMUL_MIN)
		return ~clmul_body(~crc, p, n);
	return hw ? ~hw_body(~crc, p, n) : tfk_crc32c_sw(crc, p, n);
}
#else
uint32_t tfk_crc32c_hw(uint32_t crc, const void *p, size_t n)
{
	return tfk_crc32c_sw(crc, p, n);
}

uint32_t tfk_crc32c_clmul(uint32_t crc, const void *p, size_t n)
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
	static const char *const name[] = {
		"slicing-by-8", "sse4.2", "avx512-vpclmulqdq"
	};

	return name[use_hw()];
}
