/*
 * bundle.h - TensorFlow's tensor bundle (the checkpoint format of
 * tf.train.Checkpoint and SavedModel variables/).
 *
 * PREFIX.index is a LevelDB-format table (sorted keys, prefix-
 * compressed with restart points, blocks with a 5-byte trailer: type
 * 0 raw / 1 Snappy, masked CRC32C; footer with metaindex and index
 * block handles and magic 0xdb4775248b80fb57). Key "" holds a
 * BundleHeaderProto (num_shards, endianness, version), every other key
 * a BundleEntryProto (dtype, shape, shard_id, offset, size, crc32c
 * masked of the tensor bytes). PREFIX.data-00000-of-00001 holds the
 * tensors' bytes back to back (strings: TF's varint-length layout).
 *
 * The writer makes one shard, uncompressed blocks, keys sorted, both
 * files under temporary names renamed when complete (data first, index
 * last, so an index never points at a missing data file). The reader
 * accepts raw and Snappy blocks and verifies every CRC it reads.
 */
#ifndef TFK_BUNDLE_H
#define TFK_BUNDLE_H

#include "graph/tensor.h"
#include "util/err.h"

#include <stddef.h>

/* Write n tensors (keys unique, any order) as PREFIX.index and
 * PREFIX.data-00000-of-00001. 0, TFK_EINVAL (duplicate key,
 * unsupported dtype), TFK_EIO ("PREFIX.index: ..."), TFK_ENOMEM. */
int tfk_bundle_write(const char *prefix, int n, const char *const *keys,
		     const struct tfk_tensor *const *tensors,
		     struct tfk_err *err);

struct tfk_bundle;

/* Open PREFIX.index and check its structure (footer, block CRCs, the
 * header entry). Errors name the file and what is wrong: "PREFIX.index:
 * block at 1234: crc mismatch". The data files the entries name are
 * opened too and every entry's byte range checked against its file's
 * size, so a missing or short data file fails here (TFK_EIO /
 * TFK_ECORRUPT naming it). Entries this library cannot hold (a dtype
 * outside enum tfk_dtype, rank over TFK_MAX_RANK, a partitioned
 * variable's slices) are listed; desc and read refuse them. A
 * big-endian bundle is refused (TFK_EINVAL). */
int tfk_bundle_open(struct tfk_bundle **b, const char *prefix,
		    struct tfk_err *err);
void tfk_bundle_close(struct tfk_bundle *b);

/* Entries in key order (the "" header entry is not listed). */
int tfk_bundle_n(const struct tfk_bundle *b);
const char *tfk_bundle_key(const struct tfk_bundle *b, int i);
/* dtype and shape of entry i without reading its bytes: 0, or
 * TFK_EINVAL for an entry this library cannot hold. */
int tfk_bundle_desc(const struct tfk_bundle *b, int i, struct tfk_tdesc *d);

/* Read entry `key` into *t (allocated to its dtype and shape), CRC
 * checked. TFK_ENOTFOUND ("PREFIX.index: no tensor 'x'"), TFK_EIO
 * (short data file, CRC mismatch), TFK_ENOMEM. */
int tfk_bundle_read(struct tfk_bundle *b, const char *key,
		    struct tfk_tensor *t, struct tfk_err *err);

#endif
