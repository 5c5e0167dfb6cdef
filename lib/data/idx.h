/*
 * idx.h - IDX files, the format of MNIST and Fashion-MNIST.
 *
 * Byte layout (all integers big-endian; Y. LeCun, "THE MNIST DATABASE
 * of handwritten digits", section "FILE FORMATS FOR THE MNIST DATABASE"):
 *
 *   offset    size      field
 *   0         2         zero
 *   2         1         type code: 0x08 ubyte, 0x09 sbyte, 0x0B int16,
 *                       0x0C int32, 0x0D float32, 0x0E float64
 *   3         1         rank: number of dimensions (1 to 8 here)
 *   4         4*rank    dimension sizes, u32 each; dims[0] counts items
 *   4+4*rank  ...       data: dims[0] items of dims[1]*...*dims[rank-1]
 *                       elements each, row-major, nothing after them
 *
 * So the first four bytes read as one big-endian "magic number":
 * 0x00000803 for MNIST images (ubyte, rank 3: N x 28 x 28) and
 * 0x00000801 for labels (ubyte, rank 1: N). The files are usually
 * shipped gzipped (train-images-idx3-ubyte.gz); the reader detects gzip
 * and zlib itself (lib/io/in.h).
 *
 * Errors name the file and the byte offset in the uncompressed stream:
 *   "t.idx: byte 3: rank 0: expected 1 to 8"
 *   "t.idx: item 59999 at byte 47039232: file ends inside the item
 *    (512 of 784 bytes)"
 */
#ifndef TFK_IDX_H
#define TFK_IDX_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define TFK_IDX_MAX_RANK 8
/* One item larger than this is not an image or a label but a corrupt
 * header: refused, so a bad dims field never asks for a huge buffer. */
#define TFK_IDX_MAX_ITEM (UINT64_C(1) << 30)

enum tfk_idx_type {
	TFK_IDX_U8 = 0x08,
	TFK_IDX_I8 = 0x09,
	TFK_IDX_I16 = 0x0B,
	TFK_IDX_I32 = 0x0C,
	TFK_IDX_F32 = 0x0D,
	TFK_IDX_F64 = 0x0E
};

struct tfk_idx_header {
	int type;			/* enum tfk_idx_type */
	int rank;			/* 1..TFK_IDX_MAX_RANK */
	uint32_t dims[TFK_IDX_MAX_RANK];
	size_t elem_size;		/* bytes per element of type */
	uint64_t n_items;		/* dims[0] */
	uint64_t item_size;		/* bytes per item: elements of dims[1..] */
	uint64_t header_len;		/* 4 + 4 * rank: where data starts */
	uint64_t data_len;		/* n_items * item_size */
};

/* "ubyte", "sbyte", "int16", "int32", "float32", "float64", "unknown". */
const char *tfk_idx_type_name(int type);

/*
 * Parse a header from p[0..n) (the first bytes of the uncompressed
 * file; n may exceed the header). name is used in messages. Returns 0,
 * or TFK_ETRUNC when n is shorter than the header, TFK_ECORRUPT for a
 * non-zero magic, unknown type code, rank 0 or above 8, a zero
 * dimension after the first, or an item over TFK_IDX_MAX_ITEM bytes.
 */
int tfk_idx_parse_header(struct tfk_idx_header *h, const uint8_t *p,
			 size_t n, const char *name, struct tfk_err *err);

struct tfk_idx;

/*
 * Open an IDX file ("-": stdin), plain, gzip or zlib, and parse its
 * header. For a regular plain file the size must be exactly header plus
 * data (TFK_ETRUNC when short, TFK_ECORRUPT when long); compressed and
 * piped input is checked as it is read. Errors: as tfk_in_open and
 * tfk_idx_parse_header; TFK_ETRUNC for a file that ends in the header.
 */
int tfk_idx_open(struct tfk_idx **x, const char *path, struct tfk_err *err);
void tfk_idx_close(struct tfk_idx *x);
const struct tfk_idx_header *tfk_idx_hdr(const struct tfk_idx *x);
/* The path as given ("<stdin>" for "-"), for messages. */
const char *tfk_idx_path(const struct tfk_idx *x);
/* Index of the next item tfk_idx_read returns. */
uint64_t tfk_idx_pos(const struct tfk_idx *x);

/*
 * Make up to max (>= 1) next items visible: *p points at
 * count * item_size contiguous bytes, valid until the next call or
 * close. Returns count (>= 1), 0 after the last item once it has
 * checked that no data follows, or a negative code: TFK_ETRUNC when the
 * data ends inside an item, TFK_ECORRUPT when bytes follow the last
 * item (or compressed data is corrupt), TFK_EIO, TFK_ENOMEM.
 */
long tfk_idx_read(struct tfk_idx *x, size_t max, const uint8_t **p,
		  struct tfk_err *err);

#endif
