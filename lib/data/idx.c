/*
 * idx.c - IDX reader (see idx.h).
 *
 * Streams items through lib/io/in.c windows instead of loading the
 * file: a gzipped training set inflates to 47 MB, and a caller that
 * converts batch by batch never needs it all at once. Items are handed
 * out in batches (one window per call) so the per-item cost is pointer
 * arithmetic, not a call into the inflater.
 *
 * Every size check that can be made from the header is made at open:
 * for a plain file the exact length is known, so a truncated or padded
 * file fails before the caller writes anything. Compressed input is
 * checked as it streams, and once more after the last item (anything
 * left is an error: IDX has no trailer).
 */
#include "data/idx.h"
#include "io/in.h"
#include "util/alloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct tfk_idx {
	struct tfk_in *in;
	struct tfk_idx_header h;
	uint64_t next;		/* next item index */
	size_t pending;		/* bytes handed out, consumed at next read */
	int ended;		/* trailing-data check done */
};

const char *tfk_idx_type_name(int type)
{
	switch (type) {
	case TFK_IDX_U8: return "ubyte";
	case TFK_IDX_I8: return "sbyte";
	case TFK_IDX_I16: return "int16";
	case TFK_IDX_I32: return "int32";
	case TFK_IDX_F32: return "float32";
	case TFK_IDX_F64: return "float64";
	}
	return "unknown";
}

static size_t elem_size(int type)
{
	switch (type) {
	case TFK_IDX_U8: case TFK_IDX_I8: return 1;
	case TFK_IDX_I16: return 2;
	case TFK_IDX_I32: case TFK_IDX_F32: return 4;
	case TFK_IDX_F64: return 8;
	}
	return 0;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

int tfk_idx_parse_header(struct tfk_idx_header *h, const uint8_t *p,
			 size_t n, const char *name, struct tfk_err *err)
{
	uint64_t item;
	int i;

	memset(h, 0, sizeof(*h));
	if (n < 4)
		return tfk_errf(err, TFK_ETRUNC, "%s: byte %zu: file ends inside "
				"the IDX header (4 bytes of magic needed)", name, n);
	if (p[0] || p[1])
		return tfk_errf(err, TFK_ECORRUPT, "%s: byte 0: bad magic 0x%08" PRIx32
				": not an IDX file (expected 0x0000TTRR: type, rank)",
				name, be32(p));
	h->type = p[2];
	h->elem_size = elem_size(h->type);
	if (!h->elem_size)
		return tfk_errf(err, TFK_ECORRUPT, "%s: byte 2: unknown type code "
				"0x%02x (expected 0x08, 0x09, 0x0b-0x0e)", name,
				h->type);
	h->rank = p[3];
	if (h->rank < 1 || h->rank > TFK_IDX_MAX_RANK)
		return tfk_errf(err, TFK_ECORRUPT, "%s: byte 3: rank %d: expected 1 "
				"to %d", name, h->rank, TFK_IDX_MAX_RANK);
	h->header_len = 4 + 4 * (uint64_t)h->rank;
	if (n < h->header_len)
		return tfk_errf(err, TFK_ETRUNC, "%s: byte %zu: file ends inside "
				"the IDX header (%d dimensions need %" PRIu64 " bytes)",
				name, n, h->rank, h->header_len);
	item = h->elem_size;
	for (i = 0; i < h->rank; i++) {
		h->dims[i] = be32(p + 4 + 4 * i);
		if (i == 0)
			continue;
		if (h->dims[i] == 0)
			return tfk_errf(err, TFK_ECORRUPT, "%s: byte %d: dimension %d "
					"is 0", name, 4 + 4 * i, i);
		item *= h->dims[i];
		if (item > TFK_IDX_MAX_ITEM)
			return tfk_errf(err, TFK_ECORRUPT, "%s: byte %d: dimensions "
					"make items over %" PRIu64 " bytes", name,
					4 + 4 * i, TFK_IDX_MAX_ITEM);
	}
	h->n_items = h->dims[0];
	h->item_size = item;
	h->data_len = h->n_items * item;
	return 0;
}

int tfk_idx_open(struct tfk_idx **xp, const char *path, struct tfk_err *err)
{
	struct tfk_idx *x;
	const uint8_t *p;
	ssize_t got;
	int rc;

	*xp = NULL;
	x = tfk_calloc(1, sizeof(*x));
	if (!x)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = tfk_in_open(&x->in, path, TFK_COMP_AUTO, NULL, err);
	if (rc)
		goto fail;
	got = tfk_in_fill(x->in, 4, &p, err);
	if (got < 0) {
		rc = (int)got;
		goto fail;
	}
	if (got == 0) {
		rc = tfk_errf(err, TFK_ETRUNC, "%s: empty file, not IDX",
			      tfk_in_path(x->in));
		goto fail;
	}
	if (got >= 4 && !p[0] && !p[1] && p[3] >= 1 && p[3] <= TFK_IDX_MAX_RANK) {
		got = tfk_in_fill(x->in, 4 + 4 * (size_t)p[3], &p, err);
		if (got < 0) {
			rc = (int)got;
			goto fail;
		}
	}
	rc = tfk_idx_parse_header(&x->h, p, (size_t)got, tfk_in_path(x->in), err);
	if (rc)
		goto fail;
	tfk_in_consume(x->in, x->h.header_len);
	if (tfk_in_size(x->in) != UINT64_MAX) {
		uint64_t size = tfk_in_size(x->in);
		uint64_t want = x->h.header_len + x->h.data_len;

		if (size < want) {
			uint64_t at = (size - x->h.header_len) / x->h.item_size;

			rc = tfk_errf(err, TFK_ETRUNC, "%s: item %" PRIu64 " at byte %"
				      PRIu64 ": file ends inside the data: %" PRIu64
				      " items of %" PRIu64 " bytes need %" PRIu64
				      " bytes, the file has %" PRIu64,
				      tfk_in_path(x->in), at,
				      x->h.header_len + at * x->h.item_size,
				      x->h.n_items, x->h.item_size, want, size);
			goto fail;
		}
		if (size > want) {
			rc = tfk_errf(err, TFK_ECORRUPT, "%s: byte %" PRIu64 ": %"
				      PRIu64 " unexpected bytes after the last of %"
				      PRIu64 " items", tfk_in_path(x->in), want,
				      size - want, x->h.n_items);
			goto fail;
		}
	}
	*xp = x;
	return 0;
fail:
	tfk_idx_close(x);
	return rc;
}

void tfk_idx_close(struct tfk_idx *x)
{
	if (!x)
		return;
	tfk_in_close(x->in);
	tfk_free(x);
}

const struct tfk_idx_header *tfk_idx_hdr(const struct tfk_idx *x)
{
	return &x->h;
}

const char *tfk_idx_path(const struct tfk_idx *x)
{
	return tfk_in_path(x->in);
}

uint64_t tfk_idx_pos(const struct tfk_idx *x)
{
	return x->next;
}

long tfk_idx_read(struct tfk_idx *x, size_t max, const uint8_t **p,
		  struct tfk_err *err)
{
	uint64_t left = x->h.n_items - x->next, want;
	ssize_t got;

	tfk_in_consume(x->in, x->pending);
	x->pending = 0;
	if (left == 0) {
		if (x->ended)
			return 0;
		got = tfk_in_fill(x->in, 1, p, err);
		if (got < 0)
			return (long)got;
		if (got > 0)
			return tfk_errf(err, TFK_ECORRUPT, "%s: byte %" PRIu64
					": unexpected data after the last of %"
					PRIu64 " items", tfk_in_path(x->in),
					tfk_in_offset(x->in), x->h.n_items);
		x->ended = 1;
		return 0;
	}
	if (max < 1)
		max = 1;
	if (max > left)
		max = (size_t)left;
	/* A batch of at most ~1 MiB keeps the window (and, for compressed
	 * input, the buffer) small; one item may be larger. */
	want = (uint64_t)max * x->h.item_size;
	if (want > (1u << 20) && max > 1) {
		max = (size_t)((1u << 20) / x->h.item_size);
		if (max < 1)
			max = 1;
		want = (uint64_t)max * x->h.item_size;
	}
	got = tfk_in_fill(x->in, (size_t)want, p, err);
	if (got < 0)
		return (long)got;
	if ((uint64_t)got < x->h.item_size)
		return tfk_errf(err, TFK_ETRUNC, "%s: item %" PRIu64 " at byte %"
				PRIu64 ": file ends inside the item (%zd of %"
				PRIu64 " bytes)", tfk_in_path(x->in), x->next,
				tfk_in_offset(x->in), got, x->h.item_size);
	if ((uint64_t)got < want)
		max = (size_t)((uint64_t)got / x->h.item_size);
	x->pending = max * (size_t)x->h.item_size;
	x->next += max;
	return (long)max;
}
