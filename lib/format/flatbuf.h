/*
 * flatbuf.h - a small FlatBuffers reader (with verification at every
 * access) and builder, enough for the TFLite schema; no flatc.
 *
 * Byte layout (FlatBuffers binary format, little-endian throughout):
 *
 *   0   u32 root       offset from byte 0 to the root table
 *   4   char ident[4]  file identifier ("TFL3"), optional in general
 *
 *   table at T:   i32 soffset   vtable is at T - soffset
 *                 fields...     scalars inline, offsets as u32 relative
 *                               to the field's own position
 *   vtable at V:  u16 vt_size   bytes of the vtable (4 + 2 * slots)
 *                 u16 t_size    bytes of the table's inline part
 *                 u16 field[k]  offset of slot k from T; 0 = absent
 *                               (the field then has its default)
 *   vector at P:  u32 len       then len elements (scalars inline, or
 *                               u32 offsets to tables/strings, each
 *                               relative to its own position)
 *   string at P:  u32 len       then len bytes and a 0 byte
 *   union field:  slot k holds u8 type (0 = NONE), slot k+1 the
 *                 offset of the table of that type
 *
 * A schema field's slot is its position in the table declaration
 * (deprecated fields keep theirs).
 *
 * Reader: every accessor checks what it touches before reading it, as
 * flatbuffers::Verifier does for a whole buffer: offsets inside the
 * buffer, alignment (a table and a vector's length at 4, a vtable at 2,
 * a vector's elements at their own size), the vtable inside the buffer
 * with an even size of at least 4, a field inside its table's t_size,
 * a vector's len * elem_size inside the buffer, a string's 0 byte. So
 * a program that reads only through this API cannot read outside the
 * buffer, whatever the bytes. Errors are TFK_ECORRUPT with a message
 * "at byte OFF: what"; callers prefix the file and the path of the
 * field ("subgraphs[0]: tensors[3]: ..."). Buffers must be under 2 GiB
 * (FlatBuffers' own limit).
 *
 * Builder: FlatBuffers' own scheme (the buffer grows downwards: children
 * are written before their parents, an object is known by its
 * "reference", the buffer size when it was finished; tables end with
 * their vtable, no vtable sharing). Used by tests to make hostile files
 * and by the TFLite writer.
 */
#ifndef TFK_FLATBUF_H
#define TFK_FLATBUF_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/* Reader -------------------------------------------------------------- */

struct tfk_fb {
	const uint8_t *p;
	size_t n;
};

/* A verified table: its position, its vtable and their sizes. */
struct tfk_fb_table {
	const struct tfk_fb *fb;
	uint32_t pos;
	uint32_t vt;
	uint16_t vt_size;
	uint16_t t_size;
};

/* A verified vector: element 0 at pos, len elements of elem_size. */
struct tfk_fb_vec {
	const struct tfk_fb *fb;
	uint32_t pos;
	uint32_t len;
	uint32_t elem_size;
};

/*
 * Set fb over p[0..n) (borrowed: must outlive every table and vector
 * read from it) and verify the root table into *root. ident (4 chars)
 * or NULL: when given, bytes 4..7 must equal it. 0, or TFK_ECORRUPT /
 * TFK_ETRUNC ("buffer of 3 bytes is too small for a flatbuffer",
 * "file identifier is 'XXXX', expected 'TFL3'", "at byte 0: root
 * offset 9999 is outside the 100-byte buffer").
 */
int tfk_fb_open(struct tfk_fb *fb, const void *p, size_t n,
		const char *ident, struct tfk_fb_table *root,
		struct tfk_err *err);

/* Verify the table at byte pos into *t. */
int tfk_fb_table_at(const struct tfk_fb *fb, uint64_t pos,
		    struct tfk_fb_table *t, struct tfk_err *err);

/* 1 if the table's vtable has slot set (non-zero offset). */
int tfk_fb_has(const struct tfk_fb_table *t, int slot);

/*
 * Scalars of slot: *v = the field's value, or def when absent. Return 0
 * or TFK_ECORRUPT (field outside its table or misaligned).
 */
int tfk_fb_u8(const struct tfk_fb_table *t, int slot, uint8_t def,
	      uint8_t *v, struct tfk_err *err);
int tfk_fb_i8(const struct tfk_fb_table *t, int slot, int8_t def,
	      int8_t *v, struct tfk_err *err);
int tfk_fb_i32(const struct tfk_fb_table *t, int slot, int32_t def,
	       int32_t *v, struct tfk_err *err);
int tfk_fb_u32(const struct tfk_fb_table *t, int slot, uint32_t def,
	       uint32_t *v, struct tfk_err *err);
int tfk_fb_i64(const struct tfk_fb_table *t, int slot, int64_t def,
	       int64_t *v, struct tfk_err *err);
int tfk_fb_u64(const struct tfk_fb_table *t, int slot, uint64_t def,
	       uint64_t *v, struct tfk_err *err);
int tfk_fb_f32(const struct tfk_fb_table *t, int slot, float def,
	       float *v, struct tfk_err *err);

/*
 * Offset fields. Return 1 (present: *out verified), 0 (absent: *out
 * zeroed / *s NULL and *len 0) or a negative TFK_E*.
 * tfk_fb_vector: elem_size 1, 2, 4 or 8 (the alignment the elements
 * need; tables and strings are vectors of 4-byte offsets).
 */
int tfk_fb_table_field(const struct tfk_fb_table *t, int slot,
		       struct tfk_fb_table *out, struct tfk_err *err);
int tfk_fb_vector(const struct tfk_fb_table *t, int slot, uint32_t elem_size,
		  struct tfk_fb_vec *out, struct tfk_err *err);
int tfk_fb_string(const struct tfk_fb_table *t, int slot, const char **s,
		  uint32_t *len, struct tfk_err *err);

/* Elements of a verified vector (i < v->len is the caller's contract;
 * the element's bytes were checked by tfk_fb_vector). */
uint8_t tfk_fb_vec_u8(const struct tfk_fb_vec *v, uint32_t i);
int32_t tfk_fb_vec_i32(const struct tfk_fb_vec *v, uint32_t i);
int64_t tfk_fb_vec_i64(const struct tfk_fb_vec *v, uint32_t i);
float tfk_fb_vec_f32(const struct tfk_fb_vec *v, uint32_t i);
/* Borrowed pointer to element 0 (len * elem_size bytes). */
const void *tfk_fb_vec_data(const struct tfk_fb_vec *v);
/* Element i of a vector of tables / strings, verified. 0 or < 0. */
int tfk_fb_vec_table(const struct tfk_fb_vec *v, uint32_t i,
		     struct tfk_fb_table *out, struct tfk_err *err);
int tfk_fb_vec_string(const struct tfk_fb_vec *v, uint32_t i,
		      const char **s, uint32_t *len, struct tfk_err *err);

/* Builder ------------------------------------------------------------- */

#define TFK_FBB_MAX_SLOTS 64

struct tfk_fbb {
	uint8_t *buf;		/* data is buf[cap - len .. cap) */
	size_t cap;
	size_t len;
	size_t minalign;
	int failed;		/* an allocation failed: finish reports it */
	int in_table;
	size_t table_start;
	int n_slots;
	uint32_t slot_ref[TFK_FBB_MAX_SLOTS];	/* 0: slot not set */
};

/* Empty builder (no allocation yet). Pair with tfk_fbb_release. */
void tfk_fbb_init(struct tfk_fbb *b);
void tfk_fbb_release(struct tfk_fbb *b);

/* A vector of n elements of elem_size bytes (1, 2, 4, 8) copied from
 * elems in order; its reference. */
uint32_t tfk_fbb_vector(struct tfk_fbb *b, const void *elems, uint32_t n,
			uint32_t elem_size);
/* A vector of n offsets to earlier-built tables or strings. */
uint32_t tfk_fbb_vector_refs(struct tfk_fbb *b, const uint32_t *refs,
			     uint32_t n);
/* A string of s[0..len) (a 0 byte is added). */
uint32_t tfk_fbb_string(struct tfk_fbb *b, const char *s, size_t len);

/* Table: start, add fields (any order; slot < TFK_FBB_MAX_SLOTS; a
 * scalar equal to its default is still written, as force_defaults),
 * end -> reference. Vectors, strings and child tables must be built
 * before start. */
void tfk_fbb_start(struct tfk_fbb *b);
void tfk_fbb_add_u8(struct tfk_fbb *b, int slot, uint8_t v);
void tfk_fbb_add_i32(struct tfk_fbb *b, int slot, int32_t v);
void tfk_fbb_add_u32(struct tfk_fbb *b, int slot, uint32_t v);
void tfk_fbb_add_i64(struct tfk_fbb *b, int slot, int64_t v);
void tfk_fbb_add_u64(struct tfk_fbb *b, int slot, uint64_t v);
void tfk_fbb_add_f32(struct tfk_fbb *b, int slot, float v);
void tfk_fbb_add_ref(struct tfk_fbb *b, int slot, uint32_t ref);
uint32_t tfk_fbb_end(struct tfk_fbb *b);

/*
 * Finish with root table ref and identifier ident (4 chars or NULL);
 * *p and *n then describe the finished buffer, owned by the builder
 * (valid until release). 0, or TFK_ENOMEM when any allocation failed,
 * TFK_EINVAL when a table was left open or a slot was out of range.
 */
int tfk_fbb_finish(struct tfk_fbb *b, uint32_t root, const char *ident,
		   const uint8_t **p, size_t *n, struct tfk_err *err);

#endif
