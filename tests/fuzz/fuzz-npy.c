/*
 * fuzz-npy.c - .npy/.npz decoding, the Python literal parser and
 * numpy's str() on arbitrary bytes.
 *
 * Seeds: tests/fuzz/seeds/npy/ (numpy.save / numpy.savez files of each
 * descr we read, and --input_exprs literals).
 *
 * Each input is (1) decoded as .npy; a decoded array is printed, encoded
 * and decoded again, and must come back equal (strings ending in NUL
 * excepted: |S drops trailing NULs, as numpy does); (2) read as a file
 * through tfk_npy_read, which takes the .npz path for zip bytes (written
 * to a private directory under /tmp); (3) parsed as a literal (the
 * bytes up to the first NUL), turned into an array and printed.
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tfk_tensor t, u;
	struct tfk_err err;
	struct tfk_lit lit;
	struct tfk_buf b;
	char *s;
	FILE *f;

	setup();
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
