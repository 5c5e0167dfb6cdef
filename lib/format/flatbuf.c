/*
 * flatbuf.c - FlatBuffers reader with checked accessors, and builder.
 *
 * The reader verifies lazily, at each access, instead of walking the
 * whole buffer once up front as flatbuffers::Verifier does: a schema-
 * less reader cannot know which bytes are tables until the schema code
 * (tflite.c) asks, and the TFLite loader reads every field it keeps
 * once, at load, before any use — so the effect is the same: nothing is
 * used that was not checked. Every position is held in uint64_t while
 * it is checked, so sums of hostile 32-bit offsets cannot wrap.
 *
 * Rejected: generated code from flatc (a build dependency, and its
 * generated C++ trusts whatever the separate verifier let through);
 * flatcc (another dependency for the few tables TFLite needs).
 *
 * Builder: the buffer grows downwards as in FlatBuffers; a reference is
 * the number of bytes written when the object was finished, so an
 * offset stored at reference r pointing at reference t is r - t + ...
 * computed by refer() below. Allocation failures latch b->failed and
 * make every later call a no-op, reported once by tfk_fbb_finish.
 */
#include "format/flatbuf.h"

#include "util/alloc.h"

#include <string.h>

#define FB_MAX ((uint64_t)0x7fffffff)	/* FlatBuffers' 2 GiB limit */

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* Reader -------------------------------------------------------------- */

/* 0 when [pos, pos + size) lies inside the buffer and pos is a multiple
 * of align. */
static int span(const struct tfk_fb *fb, uint64_t pos, uint64_t size,
		uint64_t align, const char *what, struct tfk_err *err)
{
	if (pos > fb->n || size > fb->n - pos)
		return tfk_errf(err, TFK_ECORRUPT, "at byte %llu: %s of %llu "
				"bytes runs past the end of the %zu-byte "
				"buffer", (unsigned long long)pos, what,
				(unsigned long long)size, fb->n);
	if (align > 1 && pos % align)
		return tfk_errf(err, TFK_ECORRUPT, "at byte %llu: %s is not "
				"aligned to %llu bytes",
				(unsigned long long)pos, what,
				(unsigned long long)align);
	return 0;
}

int tfk_fb_table_at(const struct tfk_fb *fb, uint64_t pos,
		    struct tfk_fb_table *t, struct tfk_err *err)
{
	int64_t so;
	int64_t vt;
	uint16_t vs, ts;
	int rc;

	memset(t, 0, sizeof(*t));
	if ((rc = span(fb, pos, 4, 4, "table", err)))
		return rc;
	so = (int32_t)rd32(fb->p + pos);
	vt = (int64_t)pos - so;
	if (vt < 0 || (rc = span(fb, (uint64_t)vt, 4, 2, "vtable", err)))
		return vt < 0 ? tfk_errf(err, TFK_ECORRUPT, "at byte %llu: "
					 "vtable offset %lld points before "
					 "the buffer",
					 (unsigned long long)pos,
					 (long long)so) : rc;
	vs = rd16(fb->p + vt);
	ts = rd16(fb->p + vt + 2);
	if (vs < 4 || vs % 2)
		return tfk_errf(err, TFK_ECORRUPT, "at byte %lld: vtable size "
				"%u is not an even number >= 4", (long long)vt,
				vs);
	if ((rc = span(fb, (uint64_t)vt, vs, 2, "vtable", err)))
		return rc;
	if (ts < 4)
		return tfk_errf(err, TFK_ECORRUPT, "at byte %llu: table size "
				"%u is under 4", (unsigned long long)pos, ts);
	if ((rc = span(fb, pos, ts, 4, "table", err)))
		return rc;
	t->fb = fb;
	t->pos = (uint32_t)pos;
	t->vt = (uint32_t)vt;
	t->vt_size = vs;
	t->t_size = ts;
	return 0;
}

int tfk_fb_open(struct tfk_fb *fb, const void *p, size_t n,
		const char *ident, struct tfk_fb_table *root,
		struct tfk_err *err)
{
	uint32_t off;

	fb->p = p;
	fb->n = n;
	memset(root, 0, sizeof(*root));
	if (n < 8)
		return tfk_errf(err, TFK_ETRUNC, "buffer of %zu bytes is too "
				"small for a flatbuffer", n);
	if (n > FB_MAX)
		return tfk_errf(err, TFK_ECORRUPT, "buffer of %zu bytes is "
				"over the 2 GiB a flatbuffer can address", n);
	if (ident && memcmp(fb->p + 4, ident, 4)) {
		const uint8_t *g = fb->p + 4;
		int i, text = 1;

		for (i = 0; i < 4; i++)
			text &= g[i] >= 0x20 && g[i] < 0x7f && g[i] != '\'';
		if (text)
			return tfk_errf(err, TFK_ECORRUPT, "file identifier is "
					"'%.4s', expected '%.4s'",
					(const char *)g, ident);
		return tfk_errf(err, TFK_ECORRUPT, "file identifier is bytes "
				"%02x %02x %02x %02x, expected '%.4s'", g[0],
				g[1], g[2], g[3], ident);
	}
	off = rd32(fb->p);
	if ((uint64_t)off + 4 > n)
		return tfk_errf(err, TFK_ECORRUPT, "at byte 0: root offset %u "
				"is outside the %zu-byte buffer", off, n);
	return tfk_fb_table_at(fb, off, root, err);
}

/* Position of slot's field, checked to lie with size bytes inside the
 * table and aligned; 0 when absent; < 0 on error. */
static int64_t field(const struct tfk_fb_table *t, int slot, uint32_t size,
		     struct tfk_err *err)
{
	uint32_t e = 4 + 2 * (uint32_t)slot;
	uint16_t fo;

	if (slot < 0 || e + 2 > t->vt_size)
		return 0;
	fo = rd16(t->fb->p + t->vt + e);
	if (!fo)
		return 0;
	if (fo < 4 || (uint32_t)fo + size > t->t_size)
		return tfk_errf(err, TFK_ECORRUPT, "at byte %u: field %d at "
				"table offset %u does not fit the table's %u "
				"bytes", t->pos, slot, fo, t->t_size);
	if (((uint64_t)t->pos + fo) % size)
		return tfk_errf(err, TFK_ECORRUPT, "at byte %llu: field %d is "
				"not aligned to %u bytes",
				(unsigned long long)t->pos + fo, slot, size);
	return (int64_t)t->pos + fo;
}

int tfk_fb_has(const struct tfk_fb_table *t, int slot)
{
	uint32_t e = 4 + 2 * (uint32_t)slot;

	return slot >= 0 && e + 2 <= t->vt_size &&
	       rd16(t->fb->p + t->vt + e) != 0;
}

#define SCALAR(name, type, size, expr) \
int tfk_fb_##name(const struct tfk_fb_table *t, int slot, type def, \
		  type *v, struct tfk_err *err) \
{ \
	int64_t pos = field(t, slot, size, err); \
	const uint8_t *p; \
 \
	*v = def; \
	if (pos <= 0) \
		return (int)pos; \
	p = t->fb->p + pos; \
	*v = (expr); \
	return 0; \
}

SCALAR(u8, uint8_t, 1, p[0])
SCALAR(i8, int8_t, 1, (int8_t)p[0])
SCALAR(i32, int32_t, 4, (int32_t)rd32(p))
SCALAR(u32, uint32_t, 4, rd32(p))
SCALAR(i64, int64_t, 8, (int64_t)rd64(p))
SCALAR(u64, uint64_t, 8, rd64(p))

int tfk_fb_f32(const struct tfk_fb_table *t, int slot, float def, float *v,
	       struct tfk_err *err)
{
	uint32_t u;
	int rc = tfk_fb_u32(t, slot, 0, &u, err);

	*v = def;
	if (rc < 0 || !tfk_fb_has(t, slot))
		return rc;
	memcpy(v, &u, 4);
	return 0;
}

/* The target of the u32 offset at pos (already checked in bounds). */
static uint64_t deref(const struct tfk_fb *fb, uint64_t pos)
{
	return pos + rd32(fb->p + pos);
}

int tfk_fb_table_field(const struct tfk_fb_table *t, int slot,
		       struct tfk_fb_table *out, struct tfk_err *err)
{
	int64_t pos = field(t, slot, 4, err);
	int rc;

	memset(out, 0, sizeof(*out));
	if (pos <= 0)
		return (int)pos;
	rc = tfk_fb_table_at(t->fb, deref(t->fb, (uint64_t)pos), out, err);
	return rc ? rc : 1;
}

static int vec_at(const struct tfk_fb *fb, uint64_t pos, uint32_t es,
		  struct tfk_fb_vec *out, struct tfk_err *err)
{
	uint32_t len;
	int rc;

	if ((rc = span(fb, pos, 4, 4, "vector length", err)))
		return rc;
	len = rd32(fb->p + pos);
	if ((rc = span(fb, pos + 4, (uint64_t)len * es, es, "vector", err)))
		return rc;
	out->fb = fb;
	out->pos = (uint32_t)(pos + 4);
	out->len = len;
	out->elem_size = es;
	return 0;
}

int tfk_fb_vector(const struct tfk_fb_table *t, int slot, uint32_t elem_size,
		  struct tfk_fb_vec *out, struct tfk_err *err)
{
	int64_t pos = field(t, slot, 4, err);
	int rc;

	memset(out, 0, sizeof(*out));
	if (pos <= 0)
		return (int)pos;
	if (elem_size != 1 && elem_size != 2 && elem_size != 4 &&
	    elem_size != 8)
		return tfk_errf(err, TFK_EINVAL, "element size %u is not 1, "
				"2, 4 or 8", elem_size);
	rc = vec_at(t->fb, deref(t->fb, (uint64_t)pos), elem_size, out, err);
	return rc ? rc : 1;
}

static int str_at(const struct tfk_fb *fb, uint64_t pos, const char **s,
		  uint32_t *len, struct tfk_err *err)
{
	struct tfk_fb_vec v;
	int rc;

	if ((rc = vec_at(fb, pos, 1, &v, err)))
		return rc;
	if ((uint64_t)v.pos + v.len >= fb->n || fb->p[v.pos + v.len] != 0)
		return tfk_errf(err, TFK_ECORRUPT, "at byte %llu: string of "
				"%u bytes lacks its terminating 0 byte",
				(unsigned long long)pos, v.len);
	*s = (const char *)fb->p + v.pos;
	*len = v.len;
	return 0;
}

int tfk_fb_string(const struct tfk_fb_table *t, int slot, const char **s,
		  uint32_t *len, struct tfk_err *err)
{
	int64_t pos = field(t, slot, 4, err);
	int rc;

	*s = NULL;
	*len = 0;
	if (pos <= 0)
		return (int)pos;
	rc = str_at(t->fb, deref(t->fb, (uint64_t)pos), s, len, err);
	return rc ? rc : 1;
}

uint8_t tfk_fb_vec_u8(const struct tfk_fb_vec *v, uint32_t i)
{
	return v->fb->p[v->pos + i];
}

int32_t tfk_fb_vec_i32(const struct tfk_fb_vec *v, uint32_t i)
{
	return (int32_t)rd32(v->fb->p + v->pos + 4 * (size_t)i);
}

int64_t tfk_fb_vec_i64(const struct tfk_fb_vec *v, uint32_t i)
{
	return (int64_t)rd64(v->fb->p + v->pos + 8 * (size_t)i);
}

float tfk_fb_vec_f32(const struct tfk_fb_vec *v, uint32_t i)
{
	uint32_t u = rd32(v->fb->p + v->pos + 4 * (size_t)i);
	float f;

	memcpy(&f, &u, 4);
	return f;
}

const void *tfk_fb_vec_data(const struct tfk_fb_vec *v)
{
	return v->fb ? v->fb->p + v->pos : NULL;
}

int tfk_fb_vec_table(const struct tfk_fb_vec *v, uint32_t i,
		     struct tfk_fb_table *out, struct tfk_err *err)
{
	uint64_t pos = (uint64_t)v->pos + 4 * (uint64_t)i;

	return tfk_fb_table_at(v->fb, deref(v->fb, pos), out, err);
}

int tfk_fb_vec_string(const struct tfk_fb_vec *v, uint32_t i,
		      const char **s, uint32_t *len, struct tfk_err *err)
{
	uint64_t pos = (uint64_t)v->pos + 4 * (uint64_t)i;

	*s = NULL;
	*len = 0;
	return str_at(v->fb, deref(v->fb, pos), s, len, err);
}

/* Builder ------------------------------------------------------------- */

void tfk_fbb_init(struct tfk_fbb *b)
{
	memset(b, 0, sizeof(*b));
	b->minalign = 1;
}

void tfk_fbb_release(struct tfk_fbb *b)
{
	if (!b)
		return;
	tfk_free(b->buf);
	tfk_fbb_init(b);
}

/* Room for n more bytes at the front. 0, or -1 (failed latched). */
static int grow(struct tfk_fbb *b, size_t n)
{
	size_t cap;
	uint8_t *nb;

	if (b->failed)
		return -1;
	if (n <= b->cap - b->len)
		return 0;
	if (b->len + n > FB_MAX) {
		b->failed = TFK_EINVAL;
		return -1;
	}
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < n)
		cap *= 2;
	nb = tfk_malloc(cap);
	if (!nb) {
		b->failed = TFK_ENOMEM;
		return -1;
	}
	if (b->len)
		memcpy(nb + cap - b->len, b->buf + b->cap - b->len, b->len);
	tfk_free(b->buf);
	b->buf = nb;
	b->cap = cap;
	return 0;
}

static uint8_t *front(struct tfk_fbb *b)
{
	return b->buf + b->cap - b->len;
}

/* Pad with zeros so that after `extra` more bytes, len is a multiple of
 * align (FlatBuffers' Prep). */
static int prep(struct tfk_fbb *b, size_t align, size_t extra)
{
	size_t pad = (align - ((b->len + extra) % align)) % align;

	if (align > b->minalign)
		b->minalign = align;
	if (grow(b, pad + extra))
		return -1;
	b->len += pad;
	if (pad)
		memset(front(b), 0, pad);
	return 0;
}

static void push(struct tfk_fbb *b, const void *p, size_t n)
{
	b->len += n;
	if (n)
		memcpy(front(b), p, n);
}

static void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void push32(struct tfk_fbb *b, uint32_t v)
{
	uint8_t t[4];

	wr32(t, v);
	push(b, t, 4);
}

/* The u32 to store at the next 4 bytes pushed (aligned) so that it
 * points at reference ref. */
static uint32_t refer(struct tfk_fbb *b, uint32_t ref)
{
	return (uint32_t)(b->len + 4 - ref);
}

uint32_t tfk_fbb_vector(struct tfk_fbb *b, const void *elems, uint32_t n,
			uint32_t elem_size)
{
	size_t bytes = (size_t)n * elem_size;
	size_t i;

	if (prep(b, 4, bytes) || prep(b, elem_size, bytes) ||
	    grow(b, bytes + 4))
		return 0;
	/* elements little-endian: byte copy (hosts are little-endian, as
	 * TFLite itself assumes for its buffers) */
	b->len += bytes;
	for (i = 0; i < bytes; i++)
		front(b)[i] = ((const uint8_t *)elems)[i];
	push32(b, n);
	return (uint32_t)b->len;
}

uint32_t tfk_fbb_vector_refs(struct tfk_fbb *b, const uint32_t *refs,
			     uint32_t n)
{
	uint32_t i;

	if (prep(b, 4, (size_t)n * 4 + 4))
		return 0;
	for (i = n; i-- > 0;)
		push32(b, refer(b, refs[i]));
	push32(b, n);
	return (uint32_t)b->len;
}

uint32_t tfk_fbb_string(struct tfk_fbb *b, const char *s, size_t len)
{
	uint8_t z = 0;

	if (len > FB_MAX) {
		b->failed = TFK_EINVAL;
		return 0;
	}
	if (prep(b, 4, len + 1) || grow(b, len + 5))
		return 0;
	push(b, &z, 1);
	push(b, s, len);
	push32(b, (uint32_t)len);
	return (uint32_t)b->len;
}

void tfk_fbb_start(struct tfk_fbb *b)
{
	if (b->in_table && !b->failed)
		b->failed = TFK_EINVAL;
	b->in_table = 1;
	b->n_slots = 0;
	memset(b->slot_ref, 0, sizeof(b->slot_ref));
	b->table_start = b->len;
}

static void add(struct tfk_fbb *b, int slot, const void *p, size_t size)
{
	if (!b->in_table || slot < 0 || slot >= TFK_FBB_MAX_SLOTS) {
		if (!b->failed)
			b->failed = TFK_EINVAL;
		return;
	}
	if (prep(b, size, 0) || grow(b, size))
		return;
	push(b, p, size);
	b->slot_ref[slot] = (uint32_t)b->len;
	if (slot + 1 > b->n_slots)
		b->n_slots = slot + 1;
}

void tfk_fbb_add_u8(struct tfk_fbb *b, int slot, uint8_t v)
{
	add(b, slot, &v, 1);
}

void tfk_fbb_add_i32(struct tfk_fbb *b, int slot, int32_t v)
{
	tfk_fbb_add_u32(b, slot, (uint32_t)v);
}

void tfk_fbb_add_u32(struct tfk_fbb *b, int slot, uint32_t v)
{
	uint8_t t[4];

	wr32(t, v);
	add(b, slot, t, 4);
}

void tfk_fbb_add_i64(struct tfk_fbb *b, int slot, int64_t v)
{
	tfk_fbb_add_u64(b, slot, (uint64_t)v);
}

void tfk_fbb_add_u64(struct tfk_fbb *b, int slot, uint64_t v)
{
	uint8_t t[8];

	wr32(t, (uint32_t)v);
	wr32(t + 4, (uint32_t)(v >> 32));
	add(b, slot, t, 8);
}

void tfk_fbb_add_f32(struct tfk_fbb *b, int slot, float v)
{
	uint32_t u;

	memcpy(&u, &v, 4);
	tfk_fbb_add_u32(b, slot, u);
}

void tfk_fbb_add_ref(struct tfk_fbb *b, int slot, uint32_t ref)
{
	uint8_t t[4];

	if (prep(b, 4, 0) || grow(b, 4))
		return;
	wr32(t, refer(b, ref));
	add(b, slot, t, 4);
}

uint32_t tfk_fbb_end(struct tfk_fbb *b)
{
	size_t obj, tsize, vsize;
	int k;

	if (!b->in_table) {
		if (!b->failed)
			b->failed = TFK_EINVAL;
		return 0;
	}
	b->in_table = 0;
	/* the soffset placeholder, then the vtable just below the table */
	if (prep(b, 4, 0) || grow(b, 4))
		return 0;
	push32(b, 0);
	obj = b->len;
	tsize = obj - b->table_start;
	vsize = 4 + 2 * (size_t)b->n_slots;
	if (tsize > 0xffff) {
		b->failed = TFK_EINVAL;
		return 0;
	}
	if (grow(b, vsize))
		return 0;
	for (k = b->n_slots; k-- > 0;) {
		uint16_t fo = b->slot_ref[k] ?
			(uint16_t)(obj - b->slot_ref[k]) : 0;
		uint8_t t[2] = { (uint8_t)fo, (uint8_t)(fo >> 8) };

		push(b, t, 2);
	}
	{
		uint8_t t[4] = { (uint8_t)tsize, (uint8_t)(tsize >> 8),
				 (uint8_t)vsize, (uint8_t)(vsize >> 8) };

		/* pushed back to front: t_size then vt_size in memory
		 * order means vt_size first */
		uint8_t m[4] = { t[2], t[3], t[0], t[1] };

		push(b, m, 4);
	}
	/* table's soffset: table position minus vtable position */
	wr32(b->buf + b->cap - obj, (uint32_t)(b->len - obj));
	return (uint32_t)obj;
}

int tfk_fbb_finish(struct tfk_fbb *b, uint32_t root, const char *ident,
		   const uint8_t **p, size_t *n, struct tfk_err *err)
{
	*p = NULL;
	*n = 0;
	if (b->in_table && !b->failed)
		b->failed = TFK_EINVAL;
	if (!b->failed) {
		size_t extra = 4 + (ident ? 4 : 0);

		if (!prep(b, b->minalign > 4 ? b->minalign : 4, extra)) {
			if (ident)
				push(b, ident, 4);
			push32(b, refer(b, root));
		}
	}
	if (b->failed == TFK_ENOMEM)
		return tfk_errf(err, TFK_ENOMEM, "out of memory building a "
				"flatbuffer");
	if (b->failed)
		return tfk_errf(err, TFK_EINVAL, "flatbuffer builder misused "
				"(table left open, slot out of range, or over "
				"2 GiB)");
	*p = front(b);
	*n = b->len;
	return 0;
}
