/*
 * bundle.c - TensorFlow's tensor bundle: a LevelDB-format table
 * (PREFIX.index) of BundleEntryProto values keyed by tensor name, over
 * data files holding the tensors' bytes.
 *
 * Reader: the whole index file is read and every block decoded at open
 * (an index is small: ~60 bytes an entry), so open finds any corruption
 * of the table at once and a lookup is a binary search over an array.
 * The data files an entry names are opened then too, and every entry's
 * byte range is checked against its file's size, so a missing or short
 * data file fails at open, not at the hundredth tensor of a restore.
 * Tensor bytes are read with pread and CRC-checked on each read. A
 * LevelDB iterator over blocks read on demand was rejected: it only
 * pays off for indexes of millions of keys, which checkpoints are not.
 *
 * Writer: data bytes in key order (so the output does not depend on the
 * caller's order), then the table: data blocks of ~4 KiB (LevelDB's
 * default; TensorFlow's own writer uses 256 KiB, and any size reads
 * the same), restart interval 16, index keys shortened as LevelDB's
 * bytewise comparator does (FindShortestSeparator/FindShortSuccessor),
 * an empty metaindex block and the 48-byte footer. Blocks are stored
 * uncompressed, as TensorFlow's BundleWriter does.
 *
 * The format details follow TensorFlow's tensor_bundle.cc and
 * lib/io/{table,block,format}.cc (LevelDB's table format):
 *   block:   entries {varint32 shared, varint32 non_shared,
 *            varint32 value_len, key delta, value}, then restart
 *            offsets (fixed32 each) and their count (fixed32); on disk
 *            followed by a type byte (0 raw, 1 Snappy) and the masked
 *            CRC32C of block + type byte
 *   handle:  varint64 offset, varint64 size (without the trailer)
 *   footer:  metaindex handle, index handle, zero padding to 40 bytes,
 *            fixed64 magic 0xdb4775248b80fb57
 *   strings: varint64 length of every element, the masked CRC32C of
 *            those lengths taken as little-endian uint32 (uint64 for a
 *            length over 2^32-1), then the bytes; the entry's crc32c
 *            covers the lengths (as uint32/uint64), the 4 stored
 *            checksum bytes and the element bytes.
 */
#include "format/bundle.h"

#include "formats/tensor_bundle.pb-c.h"
#include "io/crc32c.h"
#include "io/out.h"
#include "util/alloc.h"
#include "util/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK_SIZE 4096
#define RESTART_INTERVAL 16
#define TRAILER_LEN 5		/* type byte + masked crc */
#define FOOTER_LEN 48		/* 2 handles padded to 40 + magic */
#define TABLE_MAGIC 0xdb4775248b80fb57ull
/* A Snappy block may claim any uncompressed length; refuse more than
 * this many times its compressed size plus a little (Snappy's best
 * ratio is ~21:1 for runs). */
#define SNAPPY_MAX_RATIO 64
/* TensorFlow's reader version (kTensorBundleVersion) and the version we
 * write: producer 1, min_consumer 0. */
#define BUNDLE_VERSION 1
/* Data files a header may declare; TF writes one per saving device. */
#define MAX_SHARDS 65536

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "bundle.c stores tensor bytes as in memory: little-endian");

/* Protobuf-c allocations through the library's hook. unpack returns
 * NULL both for bad bytes and for a failed allocation; allocator_data
 * points at a flag that tells the two apart. */
static void *pb_alloc(void *d, size_t n)
{
	void *p = tfk_malloc(n ? n : 1);

	if (!p)
		*(int *)d = 1;
	return p;
}

static void pb_free(void *d, void *p)
{
	(void)d;
	tfk_free(p);
}

static void put_fixed32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_fixed32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void buf_fixed32(struct tfk_buf *b, uint32_t v)
{
	uint8_t p[4];

	put_fixed32(p, v);
	tfk_buf_add(b, p, 4);
}

/* Varint of at most maxbytes bytes (5 for varint32, 10 for varint64);
 * 0 when it is cut off or too long. Advances *pp. */
static int get_varint(const uint8_t **pp, const uint8_t *end, int maxbytes,
		      uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;
	int i;

	for (i = 0; i < maxbytes && p < end; i++) {
		uint8_t c = *p++;

		r |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			if (maxbytes == 5 && r > UINT32_MAX)
				return 0;
			*v = r;
			*pp = p;
			return 1;
		}
	}
	return 0;
}

static char *data_name(const char *prefix, int shard, int n_shards)
{
	size_t n = strlen(prefix) + 32;
	char *s = tfk_malloc(n);

	if (s)
		snprintf(s, n, "%s.data-%05d-of-%05d", prefix, shard, n_shards);
	return s;
}

static char *index_name(const char *prefix)
{
	size_t n = strlen(prefix) + 7;
	char *s = tfk_malloc(n);

	if (s)
		snprintf(s, n, "%s.index", prefix);
	return s;
}

/* ------------------------------------------------------------------ */
/* Reader                                                              */

struct entry {
	char *key;		/* NUL-terminated; klen bytes (may hold NULs) */
	size_t klen;
	int dtype;		/* TF DataType number, maybe not ours */
	int rank;		/* -1: unknown rank or more than TFK_MAX_RANK */
	int64_t shape[TFK_MAX_RANK];
	int shard;
	uint64_t off, size;
	uint32_t crc;		/* masked, as stored */
	int sliced;		/* a partitioned variable's full entry */
};

struct shard {
	int fd;			/* -1 until an entry needs it */
	uint64_t size;
	char *path;
};

struct tfk_bundle {
	char *prefix;
	char *index_path;
	int n;			/* entries, header excluded */
	struct entry *e;
	int n_shards;
	struct shard *shards;
};

/* The table being decoded: the whole file, its path for messages, and
 * the entries found so far. */
struct table {
	const uint8_t *file;
	uint64_t size;
	const char *path;
	struct tfk_buf key;	/* the current key being rebuilt */
	struct tfk_buf last;	/* the previous key, for the order check */
	int have_last;
	/* callback state */
	struct tfk_bundle *b;
	int cap;
	int seen_header;
};

static int read_whole(const char *path, uint8_t **out, uint64_t *n,
		      struct tfk_err *err)
{
	struct stat st;
	uint8_t *p;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return tfk_errf(err, TFK_EIO, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int e = errno;

		close(fd);
		return tfk_errf(err, TFK_EIO, "%s: %s", path,
				S_ISDIR(st.st_mode) ? "is a directory" :
				!S_ISREG(st.st_mode) ? "not a regular file" :
				strerror(e));
	}
	if ((uint64_t)st.st_size > SIZE_MAX - 1) {
		close(fd);
		return tfk_errf(err, TFK_ENOMEM, "%s: too large", path);
	}
	p = tfk_malloc((size_t)st.st_size + 1);
	if (!p) {
		close(fd);
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", path);
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, p + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = errno;

			close(fd);
			tfk_free(p);
			return tfk_errf(err, TFK_EIO, "%s: %s", path,
					r ? strerror(e) : "file shrank while read");
		}
		got += (size_t)r;
	}
	close(fd);
	*out = p;
	*n = got;
	return 0;
}

/*
 * The contents of the block at handle (off, size): CRC checked,
 * decompressed when Snappy. *data points into the file (raw) or at
 * *owned (decompressed, caller frees).
 */
static int read_block(struct table *t, uint64_t off, uint64_t size,
		      const uint8_t **data, size_t *n, uint8_t **owned,
		      struct tfk_err *err)
{
	const uint8_t *p;
	uint32_t want, got;

	*owned = NULL;
	if (off > t->size || size > t->size - off ||
	    TRAILER_LEN > t->size - off - size)
		return tfk_errf(err, TFK_ECORRUPT, "%s: block at %" PRIu64
				" of %" PRIu64 " bytes runs past the end of"
				" the file (%" PRIu64 " bytes)", t->path, off,
				size, t->size);
	p = t->file + off;
	want = tfk_crc32c_unmask(get_fixed32(p + size + 1));
	got = tfk_crc32c(p, (size_t)size + 1);
	if (want != got)
		return tfk_errf(err, TFK_ECORRUPT, "%s: block at %" PRIu64
				": crc mismatch", t->path, off);
	if (p[size] == 0) {
		*data = p;
		*n = (size_t)size;
		return 0;
	}
	if (p[size] == 1) {
		size_t ulen;
		uint8_t *u;

		if (snappy_uncompressed_length((const char *)p, (size_t)size,
					       &ulen) != SNAPPY_OK ||
		    ulen / SNAPPY_MAX_RATIO > size + 64)
			return tfk_errf(err, TFK_ECORRUPT, "%s: block at %"
					PRIu64 ": bad snappy header", t->path,
					off);
		u = tfk_malloc(ulen ? ulen : 1);
		if (!u)
			return tfk_errf(err, TFK_ENOMEM, "%s: out of memory",
					t->path);
		if (snappy_uncompress((const char *)p, (size_t)size,
				      (char *)u, &ulen) != SNAPPY_OK) {
			tfk_free(u);
			return tfk_errf(err, TFK_ECORRUPT, "%s: block at %"
					PRIu64 ": bad snappy data", t->path,
					off);
		}
		*owned = u;
		*data = u;
		*n = ulen;
		return 0;
	}
	return tfk_errf(err, TFK_ECORRUPT, "%s: block at %" PRIu64
			": unknown compression type %d", t->path, off, p[size]);
}

typedef int (*entry_fn)(struct table *t, const uint8_t *key, size_t klen,
			const uint8_t *val, size_t vlen, struct tfk_err *err);

/* Call fn for every entry of a decoded block, rebuilding the
 * prefix-compressed keys. off is the block's file offset for messages. */
static int walk_block(struct table *t, uint64_t off, const uint8_t *data,
		      size_t n, entry_fn fn, struct tfk_err *err)
{
	const uint8_t *p = data, *end;
	uint32_t n_restarts;
	int rc;

	if (n < 4)
		return tfk_errf(err, TFK_ECORRUPT, "%s: block at %" PRIu64
				": %zu bytes, too short", t->path, off, n);
	n_restarts = get_fixed32(data + n - 4);
	if (n_restarts > (n - 4) / 4)
		return tfk_errf(err, TFK_ECORRUPT, "%s: block at %" PRIu64
				": %" PRIu32 " restart points do not fit",
				t->path, off, n_restarts);
	/* LevelDB reads a block without restart points as empty */
	end = n_restarts ? data + n - 4 - 4 * (size_t)n_restarts : data;
	tfk_buf_reset(&t->key);
	while (p < end) {
		uint64_t shared, non_shared, vlen;
		size_t at = (size_t)(p - data);

		if (!get_varint(&p, end, 5, &shared) ||
		    !get_varint(&p, end, 5, &non_shared) ||
		    !get_varint(&p, end, 5, &vlen))
			return tfk_errf(err, TFK_ECORRUPT, "%s: block at %"
					PRIu64 ": entry at %zu: bad lengths",
					t->path, off, at);
		if (shared > t->key.len || non_shared > (size_t)(end - p) ||
		    vlen > (size_t)(end - p) - non_shared)
			return tfk_errf(err, TFK_ECORRUPT, "%s: block at %"
					PRIu64 ": entry at %zu: lengths run"
					" past the block", t->path, off, at);
		t->key.len = (size_t)shared;
		tfk_buf_add(&t->key, p, (size_t)non_shared);
		if (!tfk_buf_ok(&t->key))
			return tfk_errf(err, TFK_ENOMEM, "%s: out of memory",
					t->path);
		p += non_shared;
		rc = fn(t, t->key.data, t->key.len, p, (size_t)vlen, err);
		if (rc)
			return rc;
		p += vlen;
	}
	return 0;
}

static int key_cmp(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
	size_t m = na < nb ? na : nb;
	int c = m ? memcmp(a, b, m) : 0;

	if (c)
		return c;
	return na < nb ? -1 : na > nb;
}

static int parse_header(struct table *t, const uint8_t *val, size_t vlen,
			struct tfk_err *err)
{
	Tensorflow__BundleHeaderProto *h;
	Tensorflow__VersionDef *v;
	size_t i;
	int rc = 0, oom = 0;
	ProtobufCAllocator pa = { pb_alloc, pb_free, &oom };

	h = tensorflow__bundle_header_proto__unpack(&pa, vlen, val);
	if (!h && oom)
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", t->path);
	if (!h)
		return tfk_errf(err, TFK_ECORRUPT, "%s: header entry: not a"
				" BundleHeaderProto", t->path);
	v = h->version;
	if (h->num_shards < 1 || h->num_shards > MAX_SHARDS)
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: header: %" PRId32
			      " data files", t->path, h->num_shards);
	else if (h->endianness != TENSORFLOW__BUNDLE_HEADER_PROTO__ENDIANNESS__LITTLE)
		rc = tfk_errf(err, TFK_EINVAL, "%s: header: big-endian bundle"
			      " (not supported)", t->path);
	else if (v && v->min_consumer > BUNDLE_VERSION)
		rc = tfk_errf(err, TFK_EINVAL, "%s: header: needs a reader of"
			      " version %" PRId32 " (this is %d)", t->path,
			      v->min_consumer, BUNDLE_VERSION);
	else if (v && v->producer < 0)
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: header: producer"
			      " version %" PRId32, t->path, v->producer);
	for (i = 0; !rc && v && i < v->n_bad_consumers; i++)
		if (v->bad_consumers[i] == BUNDLE_VERSION)
			rc = tfk_errf(err, TFK_EINVAL, "%s: header: reader"
				      " version %d is marked bad", t->path,
				      BUNDLE_VERSION);
	if (!rc)
		t->b->n_shards = h->num_shards;
	tensorflow__bundle_header_proto__free_unpacked(h, &pa);
	return rc;
}

/* Printable form of a key for messages: bytes outside 0x20..0x7e as
 * \xNN, cut at about 80 characters. */
static const char *key_show(const uint8_t *k, size_t n, char *buf,
			    size_t cap)
{
	size_t i, o = 0;

	for (i = 0; i < n && o + 8 < cap; i++) {
		if (k[i] >= 0x20 && k[i] < 0x7f && k[i] != '\\')
			buf[o++] = (char)k[i];
		else
			o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", k[i]);
	}
	if (i < n && o + 4 <= cap) {
		memcpy(buf + o, "...", 3);
		o += 3;
	}
	buf[o] = 0;
	return buf;
}

static int parse_entry(struct table *t, struct entry *e, const uint8_t *val,
		       size_t vlen, struct tfk_err *err)
{
	Tensorflow__BundleEntryProto *m;
	Tensorflow__TensorShapeProto *s;
	char kb[96];
	size_t i;
	int rc = 0, oom = 0;
	ProtobufCAllocator pa = { pb_alloc, pb_free, &oom };

	m = tensorflow__bundle_entry_proto__unpack(&pa, vlen, val);
	if (!m && oom)
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", t->path);
	if (!m)
		return tfk_errf(err, TFK_ECORRUPT, "%s: entry '%s': not a"
				" BundleEntryProto", t->path,
				key_show((const uint8_t *)e->key, e->klen, kb,
					 sizeof(kb)));
	s = m->shape;
	e->dtype = m->dtype;
	e->shard = m->shard_id;
	e->off = (uint64_t)m->offset;
	e->size = (uint64_t)m->size;
	e->crc = m->crc32c;
	e->sliced = m->n_slices > 0;
	e->rank = 0;
	if (s && (s->unknown_rank || s->n_dim > TFK_MAX_RANK))
		e->rank = -1;
	else if (s)
		e->rank = (int)s->n_dim;
	for (i = 0; s && e->rank > 0 && i < s->n_dim; i++) {
		if (s->dim[i]->size < 0)
			rc = tfk_errf(err, TFK_ECORRUPT, "%s: entry '%s':"
				      " dimension %zu is %" PRId64, t->path,
				      key_show((const uint8_t *)e->key,
					       e->klen, kb, sizeof(kb)),
				      i, s->dim[i]->size);
		e->shape[i] = s->dim[i]->size;
	}
	if (!rc && !e->sliced &&
	    (m->offset < 0 || m->size < 0 || m->shard_id < 0 ||
	     m->shard_id >= t->b->n_shards))
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: entry '%s': shard %"
			      PRId32 " offset %" PRId64 " size %" PRId64
			      " out of range", t->path,
			      key_show((const uint8_t *)e->key, e->klen, kb,
				       sizeof(kb)),
			      m->shard_id, m->offset, m->size);
	tensorflow__bundle_entry_proto__free_unpacked(m, &pa);
	return rc;
}

static int on_entry(struct table *t, const uint8_t *key, size_t klen,
		    const uint8_t *val, size_t vlen, struct tfk_err *err)
{
	struct tfk_bundle *b = t->b;
	struct entry *e;
	int rc;

	if (t->have_last &&
	    key_cmp(t->last.data, t->last.len, key, klen) >= 0)
		return tfk_errf(err, TFK_ECORRUPT, "%s: keys out of order",
				t->path);
	tfk_buf_reset(&t->last);
	tfk_buf_add(&t->last, key, klen);
	if (!tfk_buf_ok(&t->last))
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", t->path);
	t->have_last = 1;
	if (!t->seen_header) {
		if (klen != 0)
			return tfk_errf(err, TFK_ECORRUPT, "%s: no header"
					" entry (first key is not \"\")",
					t->path);
		t->seen_header = 1;
		return parse_header(t, val, vlen, err);
	}
	if (b->n == t->cap) {
		int cap = t->cap ? 2 * t->cap : 16;
		struct entry *ne;

		if (cap > INT_MAX / 2 || !(ne = tfk_realloc(b->e,
				(size_t)cap * sizeof(*ne))))
			return tfk_errf(err, TFK_ENOMEM, "%s: out of memory",
					t->path);
		b->e = ne;
		t->cap = cap;
	}
	e = &b->e[b->n];
	memset(e, 0, sizeof(*e));
	e->key = tfk_malloc(klen + 1);
	if (!e->key)
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", t->path);
	if (klen)
		memcpy(e->key, key, klen);
	e->key[klen] = 0;
	e->klen = klen;
	b->n++;
	rc = parse_entry(t, e, val, vlen, err);
	return rc;
}

static int on_index(struct table *t, const uint8_t *key, size_t klen,
		    const uint8_t *val, size_t vlen, struct tfk_err *err)
{
	const uint8_t *p = val, *end = val + vlen;
	uint64_t off, size;
	const uint8_t *data;
	uint8_t *owned;
	size_t n;
	int rc;
	struct tfk_buf save;

	(void)key;
	(void)klen;
	if (!get_varint(&p, end, 10, &off) || !get_varint(&p, end, 10, &size))
		return tfk_errf(err, TFK_ECORRUPT, "%s: index block: bad"
				" block handle", t->path);
	rc = read_block(t, off, size, &data, &n, &owned, err);
	if (rc)
		return rc;
	/* walk_block rebuilds keys in t->key, which the index walk is
	 * still using: give the data block a buffer of its own. */
	save = t->key;
	tfk_buf_init(&t->key);
	rc = walk_block(t, off, data, n, on_entry, err);
	tfk_buf_release(&t->key);
	t->key = save;
	tfk_free(owned);
	return rc;
}

static int open_shards(struct tfk_bundle *b, struct tfk_err *err)
{
	char kb[96];
	int i;

	b->shards = tfk_calloc((size_t)b->n_shards, sizeof(*b->shards));
	if (!b->shards)
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory",
				b->index_path);
	for (i = 0; i < b->n_shards; i++)
		b->shards[i].fd = -1;
	for (i = 0; i < b->n; i++) {
		struct entry *e = &b->e[i];
		struct shard *s;

		if (e->sliced)
			continue;
		s = &b->shards[e->shard];
		if (s->fd < 0) {
			struct stat st;

			s->path = data_name(b->prefix, e->shard, b->n_shards);
			if (!s->path)
				return tfk_errf(err, TFK_ENOMEM, "%s: out of"
						" memory", b->index_path);
			s->fd = open(s->path, O_RDONLY | O_CLOEXEC);
			if (s->fd < 0)
				return tfk_errf(err, TFK_EIO, "%s: %s",
						s->path, strerror(errno));
			if (fstat(s->fd, &st) < 0)
				return tfk_errf(err, TFK_EIO, "%s: %s",
						s->path, strerror(errno));
			if (!S_ISREG(st.st_mode))
				return tfk_errf(err, TFK_EIO, "%s: not a"
						" regular file", s->path);
			s->size = (uint64_t)st.st_size;
		}
		if (e->off > s->size || e->size > s->size - e->off)
			return tfk_errf(err, TFK_ECORRUPT, "%s: tensor '%s':"
					" bytes %" PRIu64 "..%" PRIu64
					" run past the end of %s (%" PRIu64
					" bytes)", b->index_path,
					key_show((const uint8_t *)e->key,
						 e->klen, kb, sizeof(kb)),
					e->off, e->off + e->size, s->path,
					s->size);
	}
	return 0;
}

int tfk_bundle_open(struct tfk_bundle **out, const char *prefix,
		    struct tfk_err *err)
{
	struct tfk_bundle *b;
	struct table t;
	uint8_t *file = NULL;
	uint64_t size = 0, mi_off, mi_size, ix_off, ix_size;
	const uint8_t *p, *fend, *data;
	uint8_t *owned;
	size_t n;
	int rc;

	*out = NULL;
	b = tfk_calloc(1, sizeof(*b));
	if (!b || !(b->prefix = tfk_strdup(prefix)) ||
	    !(b->index_path = index_name(prefix))) {
		tfk_bundle_close(b);
		return tfk_errf(err, TFK_ENOMEM, "%s.index: out of memory",
				prefix);
	}
	rc = read_whole(b->index_path, &file, &size, err);
	if (rc) {
		tfk_bundle_close(b);
		return rc;
	}
	memset(&t, 0, sizeof(t));
	t.file = file;
	t.size = size;
	t.path = b->index_path;
	t.b = b;
	tfk_buf_init(&t.key);
	tfk_buf_init(&t.last);
	if (size < FOOTER_LEN) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: %" PRIu64 " bytes, too"
			      " short for a table footer", t.path, size);
		goto out;
	}
	p = file + size - FOOTER_LEN;
	fend = file + size;
	if (((uint64_t)get_fixed32(fend - 4) << 32 | get_fixed32(fend - 8)) !=
	    TABLE_MAGIC) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: bad footer magic (not a"
			      " tensor bundle index)", t.path);
		goto out;
	}
	if (!get_varint(&p, fend - 8, 10, &mi_off) ||
	    !get_varint(&p, fend - 8, 10, &mi_size) ||
	    !get_varint(&p, fend - 8, 10, &ix_off) ||
	    !get_varint(&p, fend - 8, 10, &ix_size)) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: bad footer block"
			      " handles", t.path);
		goto out;
	}
	/* the metaindex (LevelDB's filter names) is not used, but its
	 * bytes are checked like every other block's */
	rc = read_block(&t, mi_off, mi_size, &data, &n, &owned, err);
	tfk_free(owned);
	if (rc)
		goto out;
	rc = read_block(&t, ix_off, ix_size, &data, &n, &owned, err);
	if (rc)
		goto out;
	rc = walk_block(&t, ix_off, data, n, on_index, err);
	tfk_free(owned);
	if (rc)
		goto out;
	if (!t.seen_header) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: no header entry (empty"
			      " table)", t.path);
		goto out;
	}
	rc = open_shards(b, err);
out:
	tfk_buf_release(&t.key);
	tfk_buf_release(&t.last);
	tfk_free(file);
	if (rc) {
		tfk_bundle_close(b);
		return rc;
	}
	*out = b;
	return 0;
}

void tfk_bundle_close(struct tfk_bundle *b)
{
	int i;

	if (!b)
		return;
	for (i = 0; i < b->n; i++)
		tfk_free(b->e[i].key);
	tfk_free(b->e);
	for (i = 0; b->shards && i < b->n_shards; i++) {
		if (b->shards[i].fd >= 0)
			close(b->shards[i].fd);
		tfk_free(b->shards[i].path);
	}
	tfk_free(b->shards);
	tfk_free(b->prefix);
	tfk_free(b->index_path);
	tfk_free(b);
}

int tfk_bundle_n(const struct tfk_bundle *b)
{
	return b->n;
}

const char *tfk_bundle_key(const struct tfk_bundle *b, int i)
{
	return i >= 0 && i < b->n ? b->e[i].key : NULL;
}

static int desc_of(const struct tfk_bundle *b, const struct entry *e,
		   struct tfk_tdesc *d, struct tfk_err *err)
{
	char kb[96];
	const char *k = key_show((const uint8_t *)e->key, e->klen, kb,
				 sizeof(kb));

	if (e->sliced)
		return tfk_errf(err, TFK_EINVAL, "%s: tensor '%s' is saved in"
				" slices (a partitioned variable): not"
				" supported", b->index_path, k);
	if (!tfk_dtype_size((enum tfk_dtype)e->dtype))
		return tfk_errf(err, TFK_EINVAL, "%s: tensor '%s': dtype %d"
				" not supported", b->index_path, k, e->dtype);
	if (e->rank < 0)
		return tfk_errf(err, TFK_EINVAL, "%s: tensor '%s': rank over"
				" %d or unknown", b->index_path, k,
				TFK_MAX_RANK);
	memset(d, 0, sizeof(*d));
	d->dtype = (enum tfk_dtype)e->dtype;
	d->rank = e->rank;
	memcpy(d->shape, e->shape, sizeof(e->shape[0]) * (size_t)e->rank);
	return 0;
}

int tfk_bundle_desc(const struct tfk_bundle *b, int i, struct tfk_tdesc *d)
{
	if (i < 0 || i >= b->n)
		return TFK_EINVAL;
	return desc_of(b, &b->e[i], d, NULL);
}

static const struct entry *find(const struct tfk_bundle *b, const char *key)
{
	size_t kl = strlen(key);
	int lo = 0, hi = b->n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int c = key_cmp((const uint8_t *)b->e[mid].key, b->e[mid].klen,
				(const uint8_t *)key, kl);

		if (c == 0)
			return &b->e[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got,
				  (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;	/* shrank since open */
		got += (size_t)r;
	}
	return 0;
}

/* Decode TF's string layout from p[0..n) into t (already shaped,
 * numel elements); *crc gets the CRC over it as TF computes it. */
static int decode_strings(struct tfk_tensor *t, int64_t numel,
			  const uint8_t *p, size_t n, uint32_t *crc,
			  const char *where, struct tfk_err *err)
{
	const uint8_t *q = p, *end = p + n;
	uint64_t *lens, total = 0;
	uint32_t c = 0, stored;
	int64_t i;
	int rc = 0;

	if ((uint64_t)numel > n)	/* at least one byte a length */
		return tfk_errf(err, TFK_ECORRUPT, "%s: %" PRId64 " strings"
				" in %zu bytes", where, numel, n);
	lens = tfk_malloc((size_t)numel * sizeof(*lens) + 1);
	if (!lens)
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", where);
	for (i = 0; i < numel; i++) {
		uint8_t le[8];

		if (!get_varint(&q, end, 10, &lens[i])) {
			rc = tfk_errf(err, TFK_ECORRUPT, "%s: string length %"
				      PRId64 " is cut off", where, i);
			goto out;
		}
		if (lens[i] <= UINT32_MAX) {
			put_fixed32(le, (uint32_t)lens[i]);
			c = tfk_crc32c_extend(c, le, 4);
		} else {
			put_fixed32(le, (uint32_t)lens[i]);
			put_fixed32(le + 4, (uint32_t)(lens[i] >> 32));
			c = tfk_crc32c_extend(c, le, 8);
		}
		if (lens[i] > n)
			total = UINT64_MAX;
		else if (total != UINT64_MAX)
			total += lens[i];
	}
	if ((size_t)(end - q) < 4) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: string length checksum"
			      " is cut off", where);
		goto out;
	}
	stored = get_fixed32(q);
	if (tfk_crc32c_unmask(stored) != c) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: string length checksum"
			      " mismatch", where);
		goto out;
	}
	c = tfk_crc32c_extend(c, q, 4);
	q += 4;
	if (total != (uint64_t)(end - q)) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: string lengths add up to"
			      " %s%" PRIu64 " bytes, entry holds %zu",
			      where, total == UINT64_MAX ? "over " : "",
			      total == UINT64_MAX ? (uint64_t)n : total,
			      (size_t)(end - q));
		goto out;
	}
	for (i = 0; i < numel; i++) {
		rc = tfk_tensor_set_str(t, i, q, (size_t)lens[i], err);
		if (rc)
			goto out;
		c = tfk_crc32c_extend(c, q, (size_t)lens[i]);
		q += lens[i];
	}
	*crc = c;
out:
	tfk_free(lens);
	return rc;
}

int tfk_bundle_read(struct tfk_bundle *b, const char *key,
		    struct tfk_tensor *t, struct tfk_err *err)
{
	const struct entry *e = find(b, key);
	struct tfk_tdesc d;
	struct shard *s;
	char kb[96], where[256];
	uint8_t *raw = NULL;
	uint32_t crc;
	int64_t numel;
	int rc;

	memset(t, 0, sizeof(*t));
	if (!e)
		return tfk_errf(err, TFK_ENOTFOUND, "%s: no tensor '%s'",
				b->index_path, key_show((const uint8_t *)key,
							strlen(key), kb,
							sizeof(kb)));
	rc = desc_of(b, e, &d, err);
	if (rc)
		return rc;
	s = &b->shards[e->shard];
	snprintf(where, sizeof(where), "%s: tensor '%s' at byte %" PRIu64,
		 s->path, key_show((const uint8_t *)e->key, e->klen, kb,
				   sizeof(kb)), e->off);
	/* sizes before allocating: a corrupt shape must not make us
	 * allocate what the data file cannot hold */
	rc = tfk_shape_numel(d.rank, d.shape, tfk_dtype_size(d.dtype), &numel,
			     err);
	if (rc)
		return tfk_errf(err, TFK_ECORRUPT, "%s: shape %s too large",
				where, tfk_shape_str(d.rank, d.shape, kb,
						     sizeof(kb)));
	if (d.dtype != TFK_DT_STRING &&
	    e->size != (uint64_t)numel * tfk_dtype_size(d.dtype))
		return tfk_errf(err, TFK_ECORRUPT, "%s: %" PRIu64 " bytes for"
				" a %s tensor of shape %s", where, e->size,
				tfk_dtype_name(d.dtype),
				tfk_shape_str(d.rank, d.shape, kb, sizeof(kb)));
	if (d.dtype == TFK_DT_STRING && (uint64_t)numel > e->size)
		return tfk_errf(err, TFK_ECORRUPT, "%s: %" PRId64 " strings"
				" in %" PRIu64 " bytes", where, numel, e->size);
	rc = tfk_tensor_init(t, d.dtype, d.rank, d.shape, err);
	if (rc)
		return tfk_err_prefix(err, "%s", where);
	if (d.dtype != TFK_DT_STRING) {
		raw = t->data;
	} else if (!(raw = tfk_malloc((size_t)e->size + 1))) {
		rc = tfk_errf(err, TFK_ENOMEM, "%s: out of memory", where);
		goto fail;
	}
	rc = pread_all(s->fd, raw, (size_t)e->size, e->off);
	if (rc) {
		rc = tfk_errf(err, TFK_EIO, "%s: %s", where,
			      rc == -EIO ? "file is shorter than at open" :
			      strerror(-rc));
		goto fail;
	}
	if (d.dtype == TFK_DT_STRING) {
		/* TF writes nothing at all for a tensor of 0 strings */
		crc = 0;
		if (e->size || numel)
			rc = decode_strings(t, numel, raw, (size_t)e->size,
					    &crc, where, err);
		tfk_free(raw);
		raw = NULL;
		if (rc)
			goto fail;
	} else {
		crc = tfk_crc32c(raw, (size_t)e->size);
	}
	if (tfk_crc32c_mask(crc) != e->crc) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: data crc mismatch",
			      where);
		goto fail;
	}
	return 0;
fail:
	if (d.dtype == TFK_DT_STRING)
		tfk_free(raw);
	tfk_tensor_release(t);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Writer                                                              */

struct block_builder {
	struct tfk_buf buf;
	uint32_t *restarts;
	size_t n_restarts, cap_restarts;
	int counter;
	int interval;
	struct tfk_buf last;
	int oom;
};

static void bb_init(struct block_builder *bb, int interval)
{
	memset(bb, 0, sizeof(*bb));
	tfk_buf_init(&bb->buf);
	tfk_buf_init(&bb->last);
	bb->interval = interval;
}

static void bb_release(struct block_builder *bb)
{
	tfk_buf_release(&bb->buf);
	tfk_buf_release(&bb->last);
	tfk_free(bb->restarts);
}

static void bb_reset(struct block_builder *bb)
{
	tfk_buf_reset(&bb->buf);
	tfk_buf_reset(&bb->last);
	bb->n_restarts = 0;
	bb->counter = 0;
}

static int bb_empty(const struct block_builder *bb)
{
	return bb->buf.len == 0;
}

static size_t bb_estimate(const struct block_builder *bb)
{
	return bb->buf.len + 4 * (bb->n_restarts ? bb->n_restarts : 1) + 4;
}

static void bb_restart(struct block_builder *bb, uint32_t at)
{
	if (bb->n_restarts == bb->cap_restarts) {
		size_t cap = bb->cap_restarts ? 2 * bb->cap_restarts : 64;
		uint32_t *r = tfk_realloc(bb->restarts, cap * sizeof(*r));

		if (!r) {
			bb->oom = 1;
			return;
		}
		bb->restarts = r;
		bb->cap_restarts = cap;
	}
	bb->restarts[bb->n_restarts++] = at;
}

static void bb_add(struct block_builder *bb, const uint8_t *key, size_t klen,
		   const uint8_t *val, size_t vlen)
{
	size_t shared = 0;

	if (bb_empty(bb) || bb->counter >= bb->interval) {
		bb_restart(bb, (uint32_t)bb->buf.len);
		bb->counter = 0;
	} else {
		size_t m = bb->last.len < klen ? bb->last.len : klen;

		while (shared < m && bb->last.data[shared] == key[shared])
			shared++;
	}
	tfk_buf_add_varint(&bb->buf, shared);
	tfk_buf_add_varint(&bb->buf, klen - shared);
	tfk_buf_add_varint(&bb->buf, vlen);
	tfk_buf_add(&bb->buf, key + shared, klen - shared);
	tfk_buf_add(&bb->buf, val, vlen);
	tfk_buf_reset(&bb->last);
	tfk_buf_add(&bb->last, key, klen);
	bb->counter++;
}

/* Append the restart array; the block's bytes are then bb->buf. */
static void bb_finish(struct block_builder *bb)
{
	size_t i;

	if (!bb->n_restarts)
		bb_restart(bb, 0);
	for (i = 0; i < bb->n_restarts; i++)
		buf_fixed32(&bb->buf, bb->restarts[i]);
	buf_fixed32(&bb->buf, (uint32_t)bb->n_restarts);
}

static int bb_ok(const struct block_builder *bb)
{
	return !bb->oom && tfk_buf_ok(&bb->buf) && tfk_buf_ok(&bb->last);
}

/* The table being written: its bytes in memory (an index is small),
 * the data block being filled, the index block and the pending index
 * entry of the last flushed data block. */
struct tbuild {
	struct tfk_buf file;
	struct block_builder data, index;
	int pending;
	uint64_t p_off, p_size;
	struct tfk_buf last_key;
	struct tfk_buf tmp;
};

/* Append the finished block with its trailer; its handle into off/size. */
static void tb_write_block(struct tbuild *tb, struct block_builder *bb,
			   uint64_t *off, uint64_t *size)
{
	uint8_t trailer[TRAILER_LEN];
	uint32_t crc;

	bb_finish(bb);
	*off = tb->file.len;
	*size = bb->buf.len;
	trailer[0] = 0;
	crc = tfk_crc32c_extend(tfk_crc32c(bb->buf.data, bb->buf.len),
				trailer, 1);
	put_fixed32(trailer + 1, tfk_crc32c_mask(crc));
	tfk_buf_add(&tb->file, bb->buf.data, bb->buf.len);
	tfk_buf_add(&tb->file, trailer, TRAILER_LEN);
	bb_reset(bb);
}

static void handle_enc(struct tfk_buf *b, uint64_t off, uint64_t size)
{
	tfk_buf_reset(b);
	tfk_buf_add_varint(b, off);
	tfk_buf_add_varint(b, size);
}

/* LevelDB's BytewiseComparator::FindShortestSeparator: shorten *start
 * to a key k with start <= k < limit. */
static void shortest_separator(struct tfk_buf *start, const uint8_t *limit,
			       size_t nlimit)
{
	size_t m = start->len < nlimit ? start->len : nlimit, d = 0;

	while (d < m && start->data[d] == limit[d])
		d++;
	if (d >= m)
		return;		/* one is a prefix of the other */
	if (start->data[d] < 0xff && start->data[d] + 1 < limit[d]) {
		start->data[d]++;
		start->len = d + 1;
	}
}

/* FindShortSuccessor: the shortest k >= key. */
static void short_successor(struct tfk_buf *key)
{
	size_t i;

	for (i = 0; i < key->len; i++)
		if (key->data[i] != 0xff) {
			key->data[i]++;
			key->len = i + 1;
			return;
		}
}

static void tb_flush(struct tbuild *tb)
{
	if (bb_empty(&tb->data))
		return;
	tb_write_block(tb, &tb->data, &tb->p_off, &tb->p_size);
	tb->pending = 1;
}

static void tb_add(struct tbuild *tb, const uint8_t *key, size_t klen,
		   const uint8_t *val, size_t vlen)
{
	if (tb->pending) {
		shortest_separator(&tb->last_key, key, klen);
		handle_enc(&tb->tmp, tb->p_off, tb->p_size);
		bb_add(&tb->index, tb->last_key.data, tb->last_key.len,
		       tb->tmp.data, tb->tmp.len);
		tb->pending = 0;
	}
	tfk_buf_reset(&tb->last_key);
	tfk_buf_add(&tb->last_key, key, klen);
	bb_add(&tb->data, key, klen, val, vlen);
	if (bb_estimate(&tb->data) >= BLOCK_SIZE)
		tb_flush(tb);
}

static void tb_finish(struct tbuild *tb)
{
	struct block_builder meta;
	uint64_t mi_off, mi_size, ix_off, ix_size;
	uint8_t footer[FOOTER_LEN];
	struct tfk_buf h;

	tb_flush(tb);
	bb_init(&meta, RESTART_INTERVAL);
	tb_write_block(tb, &meta, &mi_off, &mi_size);
	if (!bb_ok(&meta))
		tb->data.oom = 1;
	bb_release(&meta);
	if (tb->pending) {
		short_successor(&tb->last_key);
		handle_enc(&tb->tmp, tb->p_off, tb->p_size);
		bb_add(&tb->index, tb->last_key.data, tb->last_key.len,
		       tb->tmp.data, tb->tmp.len);
		tb->pending = 0;
	}
	tb_write_block(tb, &tb->index, &ix_off, &ix_size);
	tfk_buf_init(&h);
	tfk_buf_add_varint(&h, mi_off);
	tfk_buf_add_varint(&h, mi_size);
	tfk_buf_add_varint(&h, ix_off);
	tfk_buf_add_varint(&h, ix_size);
	memset(footer, 0, sizeof(footer));
	if (tfk_buf_ok(&h))
		memcpy(footer, h.data, h.len);	/* at most 40 bytes */
	else
		tb->data.oom = 1;
	tfk_buf_release(&h);
	put_fixed32(footer + 40, (uint32_t)TABLE_MAGIC);
	put_fixed32(footer + 44, (uint32_t)(TABLE_MAGIC >> 32));
	tfk_buf_add(&tb->file, footer, FOOTER_LEN);
}

static int tb_ok(const struct tbuild *tb)
{
	return tfk_buf_ok(&tb->file) && bb_ok(&tb->data) &&
	       bb_ok(&tb->index) && tfk_buf_ok(&tb->last_key) &&
	       tfk_buf_ok(&tb->tmp);
}

static void tb_release(struct tbuild *tb)
{
	tfk_buf_release(&tb->file);
	bb_release(&tb->data);
	bb_release(&tb->index);
	tfk_buf_release(&tb->last_key);
	tfk_buf_release(&tb->tmp);
}

struct wsort {
	const char *key;
	const struct tfk_tensor *t;
	uint64_t off, size;
	uint32_t crc;		/* masked */
};

static int wsort_cmp(const void *a, const void *b)
{
	return strcmp(((const struct wsort *)a)->key,
		      ((const struct wsort *)b)->key);
}

/* Append tensor t's stored form to out; size and masked crc out. */
static int write_tensor(struct tfk_out *out, struct tfk_buf *tmp,
			const struct tfk_tensor *t, uint64_t *size,
			uint32_t *crc, struct tfk_err *err)
{
	int64_t i, n = tfk_tensor_numel(t);
	uint32_t c = 0;
	uint8_t le[8];
	int rc;

	if (t->dtype != TFK_DT_STRING) {
		*size = t->nbytes;
		*crc = tfk_crc32c_mask(tfk_crc32c(t->data, t->nbytes));
		return t->nbytes ? tfk_out_write(out, t->data, t->nbytes, err)
				 : 0;
	}
	*size = 0;
	if (n == 0) {		/* TF writes nothing, crc of nothing */
		*crc = tfk_crc32c_mask(0);
		return 0;
	}
	tfk_buf_reset(tmp);
	for (i = 0; i < n; i++) {
		uint64_t len = tfk_tensor_str(t, i).len;

		tfk_buf_add_varint(tmp, len);
		put_fixed32(le, (uint32_t)len);
		put_fixed32(le + 4, (uint32_t)(len >> 32));
		c = tfk_crc32c_extend(c, le, len <= UINT32_MAX ? 4 : 8);
	}
	put_fixed32(le, tfk_crc32c_mask(c));
	tfk_buf_add(tmp, le, 4);
	c = tfk_crc32c_extend(c, le, 4);
	if (!tfk_buf_ok(tmp))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = tfk_out_write(out, tmp->data, tmp->len, err);
	*size = tmp->len;
	for (i = 0; !rc && i < n; i++) {
		struct tfk_str s = tfk_tensor_str(t, i);

		if (s.len)
			rc = tfk_out_write(out, s.ptr, s.len, err);
		c = tfk_crc32c_extend(c, s.ptr, s.len);
		*size += s.len;
	}
	*crc = tfk_crc32c_mask(c);
	return rc;
}

/* The serialized BundleEntryProto of w into b. */
static int entry_bytes(const struct wsort *w, struct tfk_buf *b)
{
	Tensorflow__BundleEntryProto m = TENSORFLOW__BUNDLE_ENTRY_PROTO__INIT;
	Tensorflow__TensorShapeProto s = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
	Tensorflow__TensorShapeProto__Dim dims[TFK_MAX_RANK];
	Tensorflow__TensorShapeProto__Dim *dp[TFK_MAX_RANK];
	size_t n;
	int i;

	for (i = 0; i < w->t->rank; i++) {
		tensorflow__tensor_shape_proto__dim__init(&dims[i]);
		dims[i].size = w->t->shape[i];
		dp[i] = &dims[i];
	}
	s.n_dim = (size_t)w->t->rank;
	s.dim = dp;
	m.dtype = (Tensorflow__DataType)w->t->dtype;
	m.shape = &s;
	m.offset = (int64_t)w->off;
	m.size = (int64_t)w->size;
	m.crc32c = w->crc;
	n = tensorflow__bundle_entry_proto__get_packed_size(&m);
	tfk_buf_reset(b);
	if (tfk_buf_reserve(b, n))
		return TFK_ENOMEM;
	b->len = tensorflow__bundle_entry_proto__pack(&m, b->data);
	return 0;
}

static int header_bytes(struct tfk_buf *b)
{
	Tensorflow__BundleHeaderProto h = TENSORFLOW__BUNDLE_HEADER_PROTO__INIT;
	Tensorflow__VersionDef v = TENSORFLOW__VERSION_DEF__INIT;
	size_t n;

	v.producer = BUNDLE_VERSION;
	h.num_shards = 1;
	h.version = &v;
	n = tensorflow__bundle_header_proto__get_packed_size(&h);
	tfk_buf_reset(b);
	if (tfk_buf_reserve(b, n))
		return TFK_ENOMEM;
	b->len = tensorflow__bundle_header_proto__pack(&h, b->data);
	return 0;
}

static int check_inputs(int n, const char *const *keys,
			const struct tfk_tensor *const *tensors,
			const char *prefix, struct tfk_err *err)
{
	int i;

	if (n < 0)
		return tfk_errf(err, TFK_EINVAL, "%s.index: %d tensors",
				prefix, n);
	for (i = 0; i < n; i++) {
		const struct tfk_tensor *t = tensors[i];
		size_t es;

		if (!keys[i] || !keys[i][0])
			return tfk_errf(err, TFK_EINVAL, "%s.index: tensor %d"
					" has an empty name", prefix, i);
		if (!t || !(es = tfk_dtype_size(t->dtype)))
			return tfk_errf(err, TFK_EINVAL, "%s.index: tensor"
					" '%s': unsupported dtype %d", prefix,
					keys[i], t ? (int)t->dtype : 0);
		if (t->rank < 0 || t->rank > TFK_MAX_RANK ||
		    t->nbytes != (size_t)tfk_tensor_numel(t) * es)
			return tfk_errf(err, TFK_EINVAL, "%s.index: tensor"
					" '%s': inconsistent shape", prefix,
					keys[i]);
	}
	return 0;
}

int tfk_bundle_write(const char *prefix, int n, const char *const *keys,
		     const struct tfk_tensor *const *tensors,
		     struct tfk_err *err)
{
	struct wsort *w = NULL;
	struct tfk_out *dout = NULL, *iout = NULL;
	struct tbuild tb;
	struct tfk_buf tmp, val;
	char *dpath = NULL, *ipath = NULL;
	uint64_t off = 0;
	int i, rc;

	rc = check_inputs(n, keys, tensors, prefix, err);
	if (rc)
		return rc;
	memset(&tb, 0, sizeof(tb));
	tfk_buf_init(&tb.file);
	bb_init(&tb.data, RESTART_INTERVAL);
	bb_init(&tb.index, 1);	/* LevelDB: index blocks restart each key */
	tfk_buf_init(&tb.last_key);
	tfk_buf_init(&tb.tmp);
	tfk_buf_init(&tmp);
	tfk_buf_init(&val);
	dpath = data_name(prefix, 0, 1);
	ipath = index_name(prefix);
	w = tfk_malloc((size_t)(n ? n : 1) * sizeof(*w));
	if (!dpath || !ipath || !w) {
		rc = tfk_errf(err, TFK_ENOMEM, "%s.index: out of memory",
			      prefix);
		goto out;
	}
	for (i = 0; i < n; i++) {
		w[i].key = keys[i];
		w[i].t = tensors[i];
	}
	qsort(w, (size_t)n, sizeof(*w), wsort_cmp);
	for (i = 1; i < n; i++)
		if (!strcmp(w[i - 1].key, w[i].key)) {
			rc = tfk_errf(err, TFK_EINVAL, "%s: duplicate tensor"
				      " '%s'", ipath, w[i].key);
			goto out;
		}

	rc = tfk_out_open(&dout, dpath, TFK_COMP_NONE, err);
	for (i = 0; !rc && i < n; i++) {
		w[i].off = off;
		rc = write_tensor(dout, &tmp, w[i].t, &w[i].size, &w[i].crc,
				  err);
		if (rc)
			tfk_err_prefix(err, "%s", dpath);
		off += w[i].size;
	}
	if (!rc)
		rc = tfk_out_finish(dout, err);
	if (rc)
		goto out;

	if (header_bytes(&val)) {
		rc = tfk_errf(err, TFK_ENOMEM, "%s: out of memory", ipath);
		goto out;
	}
	tb_add(&tb, (const uint8_t *)"", 0, val.data, val.len);
	for (i = 0; i < n; i++) {
		if (entry_bytes(&w[i], &val)) {
			rc = tfk_errf(err, TFK_ENOMEM, "%s: out of memory",
				      ipath);
			goto out;
		}
		tb_add(&tb, (const uint8_t *)w[i].key, strlen(w[i].key),
		       val.data, val.len);
	}
	tb_finish(&tb);
	if (!tb_ok(&tb)) {
		rc = tfk_errf(err, TFK_ENOMEM, "%s: out of memory", ipath);
		goto out;
	}
	rc = tfk_out_open(&iout, ipath, TFK_COMP_NONE, err);
	if (!rc)
		rc = tfk_out_write(iout, tb.file.data, tb.file.len, err);
	if (!rc)
		rc = tfk_out_finish(iout, err);
	if (rc)
		goto out;
	/* data first: an index never names a data file that is not there */
	rc = tfk_out_commit(dout, NULL, err);
	dout = NULL;
	if (rc)
		goto out;
	rc = tfk_out_commit(iout, NULL, err);
	iout = NULL;
out:
	tfk_out_discard(dout);
	tfk_out_discard(iout);
	tb_release(&tb);
	tfk_buf_release(&tmp);
	tfk_buf_release(&val);
	tfk_free(w);
	tfk_free(dpath);
	tfk_free(ipath);
	return rc;
}
