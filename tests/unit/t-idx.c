/*
 * t-idx.c - IDX reader: header fields and every refusal of
 * tfk_idx_parse_header, batches over plain and gzip files (written here
 * with zlib's own gz* writer), truncated, padded and damaged files,
 * Fashion-MNIST from Debian's dataset-fashion-mnist (its published
 * counts: 60,000/10,000 items, 6,000/1,000 per class), and failed
 * allocations.
 */
#include "data/idx.h"
#include "util/alloc.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define FMNIST "/usr/share/datasets/fashion-mnist/"

static void write_gz(const char *path, const void *p, size_t n)
{
	gzFile g = gzopen(path, "wb");

	if (g) {
		gzwrite(g, p, (unsigned)n);
		gzclose(g);
	}
}

/* A ubyte IDX: N items of rows x cols, item i pixel j = i * 16 + j. */
static size_t make_idx(uint8_t *buf, uint32_t n, uint32_t rows, uint32_t cols)
{
	size_t k = 0, i;
	uint32_t d[3] = { n, rows, cols };
	int j;

	buf[k++] = 0;
	buf[k++] = 0;
	buf[k++] = 0x08;
	buf[k++] = 3;
	for (j = 0; j < 3; j++) {
		buf[k++] = (uint8_t)(d[j] >> 24);
		buf[k++] = (uint8_t)(d[j] >> 16);
		buf[k++] = (uint8_t)(d[j] >> 8);
		buf[k++] = (uint8_t)d[j];
	}
	for (i = 0; i < (size_t)n * rows * cols; i++)
		buf[k++] = (uint8_t)((i / (rows * cols)) * 16 + i % (rows * cols));
	return k;
}

static void headers(void)
{
	static const uint8_t mnist[] = { 0, 0, 8, 3, 0, 0, 0xea, 0x60,
					 0, 0, 0, 28, 0, 0, 0, 28 };
	static const uint8_t f64[] = { 0, 0, 0x0e, 2, 0, 0, 0, 10, 0, 0, 1, 0 };
	struct tfk_idx_header h;
	struct tfk_err err;
	uint8_t b[64];

	is_int(tfk_idx_parse_header(&h, mnist, sizeof(mnist), "m", &err), 0,
	       "mnist header parses");
	ok(h.type == TFK_IDX_U8 && h.rank == 3 && h.dims[0] == 60000 &&
	   h.dims[1] == 28 && h.dims[2] == 28, "mnist header: ubyte 60000x28x28");
	ok(h.n_items == 60000 && h.item_size == 784 && h.header_len == 16 &&
	   h.data_len == 47040000, "mnist header: sizes");
	is_str(tfk_idx_type_name(h.type), "ubyte", "type name");

	is_int(tfk_idx_parse_header(&h, f64, sizeof(f64), "d", &err), 0,
	       "float64 rank 2 parses");
	ok(h.elem_size == 8 && h.item_size == 2048 && h.n_items == 10,
	   "float64: 8-byte elements, 256 per item");
	is_str(tfk_idx_type_name(0x0d), "float32", "type name float32");

	memcpy(b, mnist, sizeof(mnist));
	b[0] = 0x1f;
	is_int(tfk_idx_parse_header(&h, b, sizeof(mnist), "m", &err),
	       TFK_ECORRUPT, "bad magic refused");
	is_str(err.msg, "m: byte 0: bad magic 0x1f000803: not an IDX file "
	       "(expected 0x0000TTRR: type, rank)", "bad magic message");
	memcpy(b, mnist, sizeof(mnist));
	b[2] = 0x0a;
	is_int(tfk_idx_parse_header(&h, b, sizeof(mnist), "m", &err),
	       TFK_ECORRUPT, "type 0x0a refused");
	is_str(err.msg, "m: byte 2: unknown type code 0x0a (expected 0x08, "
	       "0x09, 0x0b-0x0e)", "unknown type message");
	b[2] = 8;
	b[3] = 0;
	is_int(tfk_idx_parse_header(&h, b, sizeof(mnist), "m", &err),
	       TFK_ECORRUPT, "rank 0 refused");
	is_str(err.msg, "m: byte 3: rank 0: expected 1 to 8", "rank 0 message");
	b[3] = 9;
	is_int(tfk_idx_parse_header(&h, b, sizeof(b), "m", &err),
	       TFK_ECORRUPT, "rank 9 refused");
	is_int(tfk_idx_parse_header(&h, mnist, 3, "m", &err), TFK_ETRUNC,
	       "3 bytes: truncated");
	is_str(err.msg, "m: byte 3: file ends inside the IDX header (4 bytes of "
	       "magic needed)", "3 bytes: message");
	is_int(tfk_idx_parse_header(&h, mnist, 15, "m", &err), TFK_ETRUNC,
	       "15 bytes of a rank-3 header: truncated");
	is_str(err.msg, "m: byte 15: file ends inside the IDX header (3 "
	       "dimensions need 16 bytes)", "15 bytes: message");
	memcpy(b, mnist, sizeof(mnist));
	b[15] = 0;
	is_int(tfk_idx_parse_header(&h, b, sizeof(mnist), "m", &err),
	       TFK_ECORRUPT, "zero column count refused");
	is_str(err.msg, "m: byte 12: dimension 2 is 0", "zero dimension message");
	memcpy(b, mnist, sizeof(mnist));
	b[4] = b[5] = b[6] = b[7] = 0;
	is_int(tfk_idx_parse_header(&h, b, sizeof(mnist), "m", &err), 0,
	       "zero items is a valid (empty) file");
	memcpy(b, mnist, sizeof(mnist));
	b[8] = 0xff;	/* rows 0xff00001c */
	is_int(tfk_idx_parse_header(&h, b, sizeof(mnist), "m", &err),
	       TFK_ECORRUPT, "absurd item size refused");
	is_str(err.msg, "m: byte 8: dimensions make items over 1073741824 bytes",
	       "absurd item size message");
	{
		/* rank 8 of 2^16 each would overflow 64 bits: refused early. */
		uint8_t big[36] = { 0, 0, 8, 8 };
		int i;

		for (i = 1; i < 8; i++)
			big[4 + 4 * i + 1] = 1;
		is_int(tfk_idx_parse_header(&h, big, sizeof(big), "b", &err),
		       TFK_ECORRUPT, "rank 8 of 65536 each: refused, no overflow");
	}
}

/* Read all items of path in batches of max; returns items or an error
 * code, and checks each item's bytes against make_idx's pattern. */
static long read_all(const char *path, size_t max, int *pattern_ok,
		     long *batches, struct tfk_err *err)
{
	struct tfk_idx *x;
	const uint8_t *p;
	long n = 0, k;
	int rc = tfk_idx_open(&x, path, err);

	*pattern_ok = 1;
	*batches = 0;
	if (rc)
		return rc;
	while ((k = tfk_idx_read(x, max, &p, err)) > 0) {
		size_t isz = (size_t)tfk_idx_hdr(x)->item_size, i, j;

		for (i = 0; i < (size_t)k; i++)
			for (j = 0; j < isz; j++)
				if (p[i * isz + j] != (uint8_t)((n + (long)i) * 16 + (long)j))
					*pattern_ok = 0;
		n += k;
		(*batches)++;
		if (tfk_idx_pos(x) != (uint64_t)n)
			*pattern_ok = 0;
	}
	tfk_idx_close(x);
	return k < 0 ? k : n;
}

static void files(void)
{
	static uint8_t buf[4096], gzbuf[8192];
	struct tfk_err err;
	size_t n = make_idx(buf, 5, 3, 2);
	long batches, got;
	int pat;
	FILE *f;

	tap_write_file(tap_tmp("a.idx"), buf, n);
	got = read_all(tap_tmp("a.idx"), 2, &pat, &batches, &err);
	is_int(got, 5, "plain: 5 items");
	is_int(batches, 3, "plain: batches of 2, 2, 1");
	ok(pat, "plain: item bytes and positions");
	got = read_all(tap_tmp("a.idx"), 100, &pat, &batches, &err);
	ok(got == 5 && batches == 1 && pat, "plain: one batch of all");

	write_gz(tap_tmp("a.idx.gz"), buf, n);
	got = read_all(tap_tmp("a.idx.gz"), 3, &pat, &batches, &err);
	ok(got == 5 && batches == 2 && pat, "gzip: 5 items in batches of 3, 2");

	/* Truncated plain file: refused at open, with the item. */
	tap_write_file(tap_tmp("short.idx"), buf, n - 4);
	got = read_all(tap_tmp("short.idx"), 2, &pat, &batches, &err);
	is_int(got, TFK_ETRUNC, "plain truncated: TFK_ETRUNC at open");
	ok(strstr(err.msg, "short.idx: item 4 at byte 40: file ends inside the "
		  "data: 5 items of 6 bytes need 46 bytes, the file has 42") != NULL,
	   "plain truncated: message (%s)", err.msg);

	/* Padded plain file. */
	memcpy(gzbuf, buf, n);
	gzbuf[n] = 7;
	gzbuf[n + 1] = 7;
	tap_write_file(tap_tmp("long.idx"), gzbuf, n + 2);
	got = read_all(tap_tmp("long.idx"), 2, &pat, &batches, &err);
	is_int(got, TFK_ECORRUPT, "plain padded: TFK_ECORRUPT");
	ok(strstr(err.msg, "long.idx: byte 46: 2 unexpected bytes after the "
		  "last of 5 items") != NULL, "plain padded: message (%s)", err.msg);

	/* The same inside gzip: found while streaming. */
	write_gz(tap_tmp("short.idx.gz"), buf, n - 4);
	got = read_all(tap_tmp("short.idx.gz"), 2, &pat, &batches, &err);
	is_int(got, TFK_ETRUNC, "gzip truncated data: TFK_ETRUNC");
	ok(strstr(err.msg, "short.idx.gz: item 4 at byte 40: file ends inside "
		  "the item (2 of 6 bytes)") != NULL,
	   "gzip truncated data: message (%s)", err.msg);
	write_gz(tap_tmp("long.idx.gz"), gzbuf, n + 2);
	got = read_all(tap_tmp("long.idx.gz"), 2, &pat, &batches, &err);
	is_int(got, TFK_ECORRUPT, "gzip padded: TFK_ECORRUPT");
	ok(strstr(err.msg, "long.idx.gz: byte 46: unexpected data after the "
		  "last of 5 items") != NULL, "gzip padded: message (%s)", err.msg);

	/* A gzip stream cut short (the compressed bytes themselves). */
	f = fopen(tap_tmp("a.idx.gz"), "rb");
	if (f) {
		size_t z = fread(gzbuf, 1, sizeof(gzbuf), f);

		fclose(f);
		tap_write_file(tap_tmp("cut.idx.gz"), gzbuf, z - 12);
	}
	got = read_all(tap_tmp("cut.idx.gz"), 2, &pat, &batches, &err);
	ok(got < 0, "cut gzip stream: error (%ld: %s)", got, err.msg);

	/* Header problems through open. */
	tap_write_file(tap_tmp("empty.idx"), "", 0);
	is_int(read_all(tap_tmp("empty.idx"), 1, &pat, &batches, &err), TFK_ETRUNC,
	       "empty file: TFK_ETRUNC");
	ok(strstr(err.msg, "empty.idx: empty file, not IDX") != NULL,
	   "empty file: message (%s)", err.msg);
	tap_write_file(tap_tmp("hdr.idx"), buf, 10);
	is_int(read_all(tap_tmp("hdr.idx"), 1, &pat, &batches, &err), TFK_ETRUNC,
	       "file ending in the dimensions: TFK_ETRUNC");
	ok(strstr(err.msg, "hdr.idx: byte 10: file ends inside the IDX header") != NULL,
	   "file ending in the dimensions: message (%s)", err.msg);
	tap_write_file(tap_tmp("text.idx"), "hello world\n", 12);
	is_int(read_all(tap_tmp("text.idx"), 1, &pat, &batches, &err), TFK_ECORRUPT,
	       "text file: bad magic");
	is_int(read_all(tap_tmp("missing.idx"), 1, &pat, &batches, &err), TFK_EIO,
	       "missing file: TFK_EIO");
	is_int(read_all(tap_tmpdir(), 1, &pat, &batches, &err), TFK_EIO,
	       "directory: TFK_EIO");

	/* Zero items: reads end at once, and nothing may follow. */
	n = make_idx(buf, 0, 3, 2);
	tap_write_file(tap_tmp("zero.idx"), buf, n);
	is_int(read_all(tap_tmp("zero.idx"), 4, &pat, &batches, &err), 0,
	       "zero items: 0 read");
}

static void fashion_mnist(void)
{
	static const struct {
		const char *file;
		uint32_t n;
		int rank;
	} sets[] = {
		{ FMNIST "train-images-idx3-ubyte.gz", 60000, 3 },
		{ FMNIST "t10k-images-idx3-ubyte.gz", 10000, 3 },
		{ FMNIST "train-labels-idx1-ubyte.gz", 60000, 1 },
		{ FMNIST "t10k-labels-idx1-ubyte.gz", 10000, 1 },
	};
	size_t s;

	for (s = 0; s < 4; s++) {
		struct tfk_idx *x;
		struct tfk_err err;
		const uint8_t *p;
		long k, hist[256] = { 0 }, i;
		uint64_t n = 0;
		int rc = tfk_idx_open(&x, sets[s].file, &err), even = 1;

		is_int(rc, 0, "%s: opens", sets[s].file);
		if (rc) {
			tap_diag("%s", err.msg);
			continue;
		}
		ok(tfk_idx_hdr(x)->rank == sets[s].rank &&
		   tfk_idx_hdr(x)->n_items == sets[s].n &&
		   (sets[s].rank == 1 || (tfk_idx_hdr(x)->dims[1] == 28 &&
					  tfk_idx_hdr(x)->dims[2] == 28)),
		   "%s: %u items of the right shape", sets[s].file, sets[s].n);
		while ((k = tfk_idx_read(x, 5000, &p, &err)) > 0) {
			if (sets[s].rank == 1)
				for (i = 0; i < k; i++)
					hist[p[i]]++;
			n += (uint64_t)k;
		}
		is_int(k, 0, "%s: clean end", sets[s].file);
		is_int(n, sets[s].n, "%s: all items read", sets[s].file);
		if (sets[s].rank == 1) {
			for (i = 0; i < 256; i++)
				if (hist[i] != (i < 10 ? (long)sets[s].n / 10 : 0))
					even = 0;
			ok(even, "%s: %u labels of each class 0-9",
			   sets[s].file, sets[s].n / 10);
		}
		tfk_idx_close(x);
	}
}

static void allocations(void)
{
	static uint8_t buf[512];
	size_t n = make_idx(buf, 7, 4, 4);
	int k, bad = 0, done = 0;

	write_gz(tap_tmp("oom.idx.gz"), buf, n);
	for (k = 0; k < 50 && !done; k++) {
		struct tfk_idx *x;
		struct tfk_err err;
		const uint8_t *p;
		long m = 0, got;
		int rc;

		tfk_alloc_fail_after(k);
		rc = tfk_idx_open(&x, tap_tmp("oom.idx.gz"), &err);
		if (!rc) {
			while ((got = tfk_idx_read(x, 3, &p, &err)) > 0)
				m += got;
			tfk_idx_close(x);
			if (got == 0 && m == 7)
				done = 1;
			else if (got != TFK_ENOMEM)
				bad++;
		} else if (rc != TFK_ENOMEM) {
			bad++;
		}
		tfk_alloc_fail_after(-1);
	}
	is_int(bad, 0, "allocation failures: TFK_ENOMEM or success");
	ok(done, "allocation failures: succeeds once allocations do");
}

int main(void)
{
	headers();
	files();
	fashion_mnist();
	allocations();
	return tap_done();
}
