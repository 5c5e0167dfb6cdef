/*
 * names-impl.h - the name index shared by example.c (features) and
 * seqex.c (feature lists); private to lib/example.
 *
 * Both keep their entries in wire order in an array whose element type
 * starts with { const char *name; size_t name_len; } (struct tfk_feat,
 * struct tfk_seqlist: checked where they are used). Narrow records are
 * searched by a short scan; from TFK_NAMES_MIN entries on, an
 * open-addressed table of element indices (linear probing, FNV-1a, at
 * most half full, rebuilt at a quarter load when it grows) finds a name
 * in one probe or two. The table is three fields of the owning struct:
 * ht (slots, TFK_NAMES_EMPTY when free), ht_size (slots allocated) and
 * ht_mask (slots in use - 1; 0 while there is no index).
 */
#ifndef TFK_EXAMPLE_NAMES_IMPL_H
#define TFK_EXAMPLE_NAMES_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TFK_NAMES_MIN 16
#define TFK_NAMES_EMPTY UINT32_MAX

/* The leading members every indexed element type has. */
struct tfk_named {
	const char *name;	/* not NUL-terminated */
	size_t name_len;
};

#define TFK_NAMES_CHECK(type) \
	_Static_assert(offsetof(type, name) == offsetof(struct tfk_named, \
			name) && offsetof(type, name_len) == \
			offsetof(struct tfk_named, name_len), \
		       #type " must start with name, name_len")

/* The element k of an array of elements of size stride. */
static inline const struct tfk_named *tfk_names_at(const void *elems,
						   size_t stride, size_t k)
{
	return (const struct tfk_named *)((const char *)elems + k * stride);
}

/* FNV-1a, 64-bit (offset basis and prime from the FNV specification),
 * high bits folded in for the mask. */
static inline uint64_t tfk_names_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325u;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (uint8_t)s[i];
		h *= 0x100000001b3u;
	}
	return h ^ (h >> 29);
}

static inline int tfk_names_same(const struct tfk_named *e, const char *name,
				 size_t n)
{
	size_t i;

	if (e->name_len != n)
		return 0;
	if (n > 16)
		return memcmp(e->name, name, n) == 0;
	for (i = 0; i < n; i++)	/* short names: no call */
		if (e->name[i] != name[i])
			return 0;
	return 1;
}

/* Index of the element called name, or -1; *slot gets the slot where it
 * is or where it would go. Needs a live index (mask != 0). */
static inline long tfk_names_find(const uint32_t *ht, size_t mask,
				  const void *elems, size_t stride,
				  const char *name, size_t n, size_t *slot)
{
	size_t i = (size_t)tfk_names_hash(name, n) & mask;

	for (;; i = (i + 1) & mask) {
		uint32_t k = ht[i];

		if (k == TFK_NAMES_EMPTY ||
		    tfk_names_same(tfk_names_at(elems, stride, k), name, n)) {
			*slot = i;
			return k == TFK_NAMES_EMPTY ? -1 : (long)k;
		}
	}
}

/* (Re)build the index over elems[0..n) at a load of at most a quarter.
 * Returns 0 or TFK_ENOMEM (the old index, if any, left as it was).
 * Defined in example.c. */
int tfk_names_build(uint32_t **ht, size_t *ht_size, size_t *mask,
		    const void *elems, size_t stride, size_t n);

/* elems[n-1] was just appended under a name not present before (slot:
 * from tfk_names_find when there is an index): index it, or build the
 * index once the array is wide enough. Returns 0 or TFK_ENOMEM. */
static inline int tfk_names_added(uint32_t **ht, size_t *ht_size,
				  size_t *mask, const void *elems,
				  size_t stride, size_t n, size_t slot)
{
	if (*mask && 2 * n <= *mask + 1) {
		(*ht)[slot] = (uint32_t)(n - 1);
		return 0;
	}
	if (*mask || n >= TFK_NAMES_MIN)
		return tfk_names_build(ht, ht_size, mask, elems, stride, n);
	return 0;
}

#endif
