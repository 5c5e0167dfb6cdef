/*
 * crc32c.h - CRC-32C (Castagnoli), as TFRecord framing uses it.
 *
 * Polynomial 0x1EDC6F41 (reflected 0x82F63B78), initial value and final
 * xor 0xFFFFFFFF; check value crc32c("123456789") = 0xE3069283 and the
 * RFC 3720 B.4 vectors. TFRecord stores a "masked" CRC:
 *   masked = ((crc >> 15) | (crc << 17)) + 0xa282ead8
 *
 * tfk_crc32c picks at first use carry-less multiplication folding
 * (AVX-512 VPCLMULQDQ) for inputs of 256 bytes and more when the CPU has
 * it, the SSE4.2 instruction (three streams interleaved to hide its
 * latency) for the rest, else a portable slicing-by-8 table.
 * tfk_crc32c_ref is the bitwise specification.
 */
#ifndef TFK_CRC32C_H
#define TFK_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC of p[0..n) continued from crc (0 for a fresh CRC). Thread-safe. */
uint32_t tfk_crc32c_extend(uint32_t crc, const void *p, size_t n);

static inline uint32_t tfk_crc32c(const void *p, size_t n)
{
	return tfk_crc32c_extend(0, p, n);
}

static inline uint32_t tfk_crc32c_mask(uint32_t crc)
{
	return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

static inline uint32_t tfk_crc32c_unmask(uint32_t m)
{
	uint32_t r = m - 0xa282ead8u;

	return (r >> 17) | (r << 15);
}

/* The implementations, exposed for tests and benchmarks. _hw returns the
 * _sw result on a CPU without SSE4.2; _clmul (AVX-512 VPCLMULQDQ folding
 * from 256 bytes on, the crc32 instruction below) returns _hw's on a CPU
 * without those. */
uint32_t tfk_crc32c_ref(uint32_t crc, const void *p, size_t n);
uint32_t tfk_crc32c_sw(uint32_t crc, const void *p, size_t n);
uint32_t tfk_crc32c_hw(uint32_t crc, const void *p, size_t n);
uint32_t tfk_crc32c_clmul(uint32_t crc, const void *p, size_t n);
/* "avx512-vpclmulqdq", "sse4.2" or "slicing-by-8": what
 * tfk_crc32c_extend uses here. */
const char *tfk_crc32c_impl(void);

#endif
