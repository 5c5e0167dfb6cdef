/*
 * fprint.h - the string hashes TensorFlow's hashing ops use.
 *
 *   tfk_fprint64     FarmHash Fingerprint64 (farmhash.h: util::Fingerprint64
 *                    = farmhashna::Hash64), TensorFlow's Fingerprint64 and
 *                    so tf.strings.to_hash_bucket_fast: bucket =
 *                    Fingerprint64(s) % num_buckets. Keras' Hashing layer
 *                    (no salt) and StringLookup's OOV buckets use it.
 *   tfk_siphash24    SipHash-2-4 (Aumasson, Bernstein, "SipHash: a fast
 *                    short-input PRF", 2012) with the key as two 64-bit
 *                    words k0, k1 (the key bytes read little-endian), as
 *                    highwayhash::SipHash under
 *                    tf.strings.to_hash_bucket_strong(key=[k0, k1]), which
 *                    Keras' Hashing layer uses when given a salt.
 *
 * Both are defined on bytes, independent of the host's endianness.
 */
#ifndef TFK_FPRINT_H
#define TFK_FPRINT_H

#include <stddef.h>
#include <stdint.h>

/* Fingerprint64 of p[0..n). Stable forever: TensorFlow freezes it. */
uint64_t tfk_fprint64(const void *p, size_t n);

/* SipHash-2-4 of p[0..n) under the 128-bit key (k0, k1). */
uint64_t tfk_siphash24(uint64_t k0, uint64_t k1, const void *p, size_t n);

#endif
