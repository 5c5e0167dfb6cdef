/*
 * fuzz-npy.c - .npy/.npz decoding, the Python literal parser and
 * numpy's str() on arbitrary bytes.
 *
 * Seeds: tests/fuzz/seeds/fuzz-npy/ (numpy.save / numpy.savez files of
 * each descr we read, --input_exprs literals, the |S0 and <U0 files of
 * t1760).
 *
 * Each input is (1) decoded as .npy; a decoded array is printed, encoded
 * and decoded again, and must come back equal (strings ending in NUL
 * excepted: |S drops trailing NULs, as numpy does); (2) read as a file
 * through tfk_npy_read, which takes the .npz path for zip bytes (written
 * to a private directory under /tmp); (3) parsed as a literal (the
 * bytes up to the first NUL), turned into an array and printed; (4)
 * taken as a recipe for the header: byte 0 picks a descr (valid,
 * unsupported, item size 0, huge items), byte 1 the fortran flag and a
 * rank 0..8, then one byte per dim picks a size (0, small, 2^26, 2^31,
 * 2^40, ...), and the rest is the data; so the shape/descr combinations
 * that claim more than the file holds are tried from the first run.
 * Whatever is decoded must hold exactly its shape's bytes.
 *
 * TFK_MAX_TENSOR_BYTES=64M: a decode may cost no more than that, so an
 * out-of-memory under libFuzzer's 2 GB limit is a budget not applied.
 */
#include "io/npy.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static void setup(void)
{
	char dir[] = "/tmp/fuzz-npy-XXXXXX";

	if (path[0])
		return;
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/in.npz", dir);
	setenv("TFK_MAX_TENSOR_BYTES", "64M", 1);
}

static int ends_nul(const struct tfk_tensor *t)
{
	int64_t i, n = tfk_tensor_numel(t);

	if (t->dtype != TFK_DT_STRING)
		return 0;
	for (i = 0; i < n; i++) {
		struct tfk_str s = tfk_tensor_str(t, i);

		if (s.len && !s.ptr[s.len - 1])
			return 1;
	}
	return 0;
}

static void printed(const struct tfk_tensor *t)
{
	struct tfk_buf b;
	struct tfk_err err;

	tfk_buf_init(&b);
	if (tfk_npy_str(t, &b, &err) && err.code != TFK_ENOMEM)
		abort();
	tfk_buf_release(&b);
}

static const char *const descrs[] = {
	"<f4", ">f8", "<f2", "|i1", "<i2", ">i4", "<i8", "|u1", "|b1",
	"|S1", "|S7", "<U1", ">U3", "|S0", "<U0", "=i4", "<f0", "|b0",
	"<u2", "<c8", "|O8", "|V4", "<U1048576", "|S1048576", "<U1048577",
	"<f16", "|S-1", "<i", "", "<M8[s]"
};

static const char *const dims[] = {
	"0", "1", "2", "3", "7", "255", "65536", "67108864", "2147483648",
	"1099511627776", "9223372036854775807", "-1", "1.5", "True"
};

/* (4): the header from a recipe, the data after it. */
static void recipe(const uint8_t *data, size_t size)
{
	char hd[512], sh[256];
	size_t o = 0, hl, n, i;
	struct tfk_tensor t;
	struct tfk_err err;
	uint8_t *b;
	int rank, k;

	memset(&err, 0, sizeof(err));
	if (size < 2)
		return;
	rank = (data[1] >> 1) % (TFK_MAX_RANK + 1);
	if (size < 2 + (size_t)rank)
		return;
	sh[0] = 0;
	for (k = 0; k < rank; k++)
		o += (size_t)snprintf(sh + o, sizeof(sh) - o, "%s, ",
				      dims[data[2 + k] % (sizeof(dims) /
							  sizeof(dims[0]))]);
	hl = (size_t)snprintf(hd, sizeof(hd), "{'descr': '%s', "
			      "'fortran_order': %s, 'shape': (%s), }",
			      descrs[data[0] % (sizeof(descrs) /
						sizeof(descrs[0]))],
			      data[1] & 1 ? "True" : "False", sh);
	i = 2 + (size_t)rank;
	n = 10 + hl + 1 + (size - i);
	b = malloc(n);
	if (!b)
		return;
	memcpy(b, "\x93NUMPY\x01\x00", 8);
	b[8] = (uint8_t)((hl + 1) & 0xff);
	b[9] = (uint8_t)((hl + 1) >> 8);
	memcpy(b + 10, hd, hl);
	b[10 + hl] = '\n';
	if (size > i)
		memcpy(b + 11 + hl, data + i, size - i);
	if (!tfk_npy_decode(b, n, &t, &err)) {
		int64_t c;

		if (tfk_shape_numel(t.rank, t.shape, tfk_dtype_size(t.dtype),
				    &c, NULL) ||
		    (size_t)c * tfk_dtype_size(t.dtype) != t.nbytes)
			abort();
		printed(&t);
		tfk_tensor_release(&t);
	} else if (!err.msg[0]) {
		abort();
	}
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tfk_tensor t, u;
	struct tfk_err err;
	struct tfk_lit lit;
	struct tfk_buf b;
	char *s;
	FILE *f;

	setup();
	recipe(data, size);
	if (!tfk_npy_decode(data, size, &t, &err)) {
		printed(&t);
		tfk_buf_init(&b);
		if (!tfk_npy_encode(&t, &b, &err)) {
			if (tfk_npy_decode(b.data, b.len, &u, &err))
				abort();
			if (!ends_nul(&t) && t.dtype != TFK_DT_BOOL &&
			    !tfk_tensor_equal(&t, &u))
				abort();
			tfk_tensor_release(&u);
		}
		tfk_buf_release(&b);
		tfk_tensor_release(&t);
	}
	f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
		abort();
	if (!tfk_npy_read(path, NULL, &t, &err))
		tfk_tensor_release(&t);
	if (!tfk_npy_read(path, "a", &t, &err))
		tfk_tensor_release(&t);
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	if (!tfk_lit_parse(s, &lit, &err)) {
		if (!tfk_lit_to_tensor(&lit, &t, &err)) {
			printed(&t);
			tfk_tensor_release(&t);
		}
		tfk_lit_release(&lit);
	}
	free(s);
	return 0;
}
