/*
 * t-npy.c - NumPy interop: .npy bytes written by numpy.save (the arrays
 * below were produced by numpy 1.24, np.save into a BytesIO), decode of
 * every descr we hold, byte-exact encoding, corrupt headers and data,
 * .npz via a numpy-written archive made at run time is in t1710; here
 * the Python literal parser and numpy's str() with expected strings
 * printed by numpy 1.24 (str(a) of the same arrays), and failed
 * allocations.
 */
#include "io/npy.h"
#include "util/alloc.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * What numpy 1.24's np.save wrote for each array (into a BytesIO), held as
 * the header dict and the data bytes; npy_v1 lays them out as np.save does
 * for format 1.0: magic, version 1.0, the header length (u16, little
 * endian), the dict padded with spaces to 128 bytes in all and a newline,
 * then the data.
 */
struct npy_file {
	unsigned char b[256];
	size_t n;
};

static struct npy_file npy_f32_1x2, npy_i64_scalar, npy_be_i4, npy_fortran_i2,
	npy_unicode, npy_bytes, npy_bool, npy_f64_3;

static void npy_v1(struct npy_file *f, const char *dict, const char *data,
		   size_t n_data)
{
	size_t n_dict = strlen(dict);

	memcpy(f->b, "\x93NUMPY\x01\x00\x76\x00", 10);
	memcpy(f->b + 10, dict, n_dict);
	memset(f->b + 10 + n_dict, ' ', 127 - 10 - n_dict);
	f->b[127] = '\n';
	memcpy(f->b + 128, data, n_data);
	f->n = 128 + n_data;
}

#define NPY_V1(f, dict, data) npy_v1(&(f), dict, data, sizeof(data) - 1)

static void numpy_vectors(void)
{
	NPY_V1(npy_f32_1x2,
	       "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }",
	       "\x00\x00\xc0\x3f\x00\x00\x00\x40");
	NPY_V1(npy_i64_scalar,
	       "{'descr': '<i8', 'fortran_order': False, 'shape': (), }",
	       "\x07\x00\x00\x00\x00\x00\x00\x00");
	NPY_V1(npy_be_i4,
	       "{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }",
	       "\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x03");
	NPY_V1(npy_fortran_i2,
	       "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }",
	       "\x00\x00\x03\x00\x01\x00\x04\x00\x02\x00\x05\x00");
	NPY_V1(npy_unicode,
	       "{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }",
	       "\x61\x00\x00\x00\x62\x00\x00\x00\x63\x00\x00\x00\x00\x00\x00\x00");
	NPY_V1(npy_bytes,
	       "{'descr': '|S2', 'fortran_order': False, 'shape': (2,), }",
	       "\x61\x62\x63\x00");
	NPY_V1(npy_bool,
	       "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
	       "\x01\x00\x01");
	NPY_V1(npy_f64_3,
	       "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
	       "\x00\x00\x00\x00\x00\x00\xe0\x3f\x00\x00\x00\x00\x00\x00\xf0\xbf"
	       "\x9c\x75\x00\x88\x3c\xe4\x37\x7e");
}

static void decode_vectors(void)
{
	struct tfk_tensor t;
	struct tfk_err err;
	int rc;

	rc = tfk_npy_decode(npy_f32_1x2.b, npy_f32_1x2.n, &t, &err);
	ok(!rc && t.dtype == TFK_DT_FLOAT && t.rank == 2 && t.shape[0] == 1 &&
	   t.shape[1] == 2, "f4 (1, 2)");
	ok(!rc && ((float *)t.data)[0] == 1.5f && ((float *)t.data)[1] == 2.0f,
	   "f4 values");
	tfk_tensor_release(&t);
	rc = tfk_npy_decode(npy_i64_scalar.b, npy_i64_scalar.n, &t, &err);
	ok(!rc && t.dtype == TFK_DT_INT64 && t.rank == 0 &&
	   *(int64_t *)t.data == 7, "i8 scalar ()");
	tfk_tensor_release(&t);
	rc = tfk_npy_decode(npy_be_i4.b, npy_be_i4.n, &t, &err);
	ok(!rc && t.dtype == TFK_DT_INT32 && t.shape[0] == 3 &&
	   ((int32_t *)t.data)[0] == 1 && ((int32_t *)t.data)[2] == 3,
	   "big-endian >i4 swapped");
	tfk_tensor_release(&t);
	rc = tfk_npy_decode(npy_fortran_i2.b, npy_fortran_i2.n, &t, &err);
	ok(!rc && t.dtype == TFK_DT_INT16 && t.rank == 2, "fortran i2");
	if (!rc) {
		int k, good = 1;

		for (k = 0; k < 6; k++)
			good &= ((int16_t *)t.data)[k] == k;
		ok(good, "fortran order read back in C order (arange(6))");
	}
	tfk_tensor_release(&t);
	rc = tfk_npy_decode(npy_unicode.b, npy_unicode.n, &t, &err);
	ok(!rc && t.dtype == TFK_DT_STRING && tfk_tensor_str(&t, 0).len == 2 &&
	   !memcmp(tfk_tensor_str(&t, 0).ptr, "ab", 2) &&
	   tfk_tensor_str(&t, 1).len == 1, "<U2 to utf-8 strings");
	tfk_tensor_release(&t);
	rc = tfk_npy_decode(npy_bytes.b, npy_bytes.n, &t, &err);
	ok(!rc && t.dtype == TFK_DT_STRING && tfk_tensor_str(&t, 1).len == 1 &&
	   tfk_tensor_str(&t, 1).ptr[0] == 'c', "|S2, trailing NULs stripped");
	tfk_tensor_release(&t);
	rc = tfk_npy_decode(npy_bool.b, npy_bool.n, &t, &err);
	ok(!rc && t.dtype == TFK_DT_BOOL && ((uint8_t *)t.data)[0] == 1 &&
	   ((uint8_t *)t.data)[1] == 0, "|b1");
	tfk_tensor_release(&t);
}

/* tfk_npy_encode of what decode read gives numpy's bytes back. */
static void encode_exact(const unsigned char *v, size_t n, const char *what)
{
	struct tfk_tensor t;
	struct tfk_err err;
	struct tfk_buf b;

	tfk_buf_init(&b);
	ok(!tfk_npy_decode(v, n, &t, &err) && !tfk_npy_encode(&t, &b, &err),
	   "%s: decode + encode", what);
	is_mem(b.data, b.len, v, n, "%s: the bytes numpy.save wrote", what);
	tfk_buf_release(&b);
	tfk_tensor_release(&t);
}

static void corrupt(void)
{
	unsigned char b[512];
	struct tfk_tensor t;
	struct tfk_err err;
	size_t n = npy_f32_1x2.n, cut;
	int bad = 0;

	for (cut = 0; cut < n; cut++)
		if (tfk_npy_decode(npy_f32_1x2.b, cut, &t, &err) != TFK_ECORRUPT)
			bad++;
	is_int(bad, 0, "every truncation is TFK_ECORRUPT");
	memcpy(b, npy_f32_1x2.b, n);
	b[0] = 'X';
	is_int(tfk_npy_decode(b, n, &t, &err), TFK_ECORRUPT, "bad magic");
	ok(strstr(err.msg, "byte 0: not a .npy file") != NULL, "%s", err.msg);
	memcpy(b, npy_f32_1x2.b, n);
	b[6] = 9;
	is_int(tfk_npy_decode(b, n, &t, &err), TFK_ECORRUPT, "version 9");
	ok(strstr(err.msg, "format version 9.0") != NULL, "%s", err.msg);
	memcpy(b, npy_f32_1x2.b, n);
	b[8] = 0xff;
	b[9] = 0xff;
	is_int(tfk_npy_decode(b, n, &t, &err), TFK_ECORRUPT, "absurd header "
	       "length");
	memcpy(b, npy_f32_1x2.b, n);
	memcpy(b + 10 + 10, "'<c8'", 5);
	is_int(tfk_npy_decode(b, n, &t, &err), TFK_EINVAL, "complex64 refused");
	ok(strstr(err.msg, "descr '<c8' not supported") != NULL, "%s", err.msg);
	memcpy(b, npy_f32_1x2.b, n);
	/* shape (1, 2) -> (9, 2): short data */
	((char *)memmem(b, n, "(1, 2)", 6))[1] = '9';
	is_int(tfk_npy_decode(b, n, &t, &err), TFK_ECORRUPT, "short data");
	ok(strstr(err.msg, "bytes of data") != NULL, "%s", err.msg);
	memcpy(b, npy_f32_1x2.b, n);
	b[10 + 1] = '[';
	is_int(tfk_npy_decode(b, n, &t, &err), TFK_ECORRUPT, "header syntax");
	memcpy(b, npy_f32_1x2.b, n);
	memcpy(b + 10 + 2, "DESCR", 5);
	is_int(tfk_npy_decode(b, n, &t, &err), TFK_ECORRUPT, "no descr key");
	ok(strstr(err.msg, "header needs 'descr'") != NULL, "%s", err.msg);
}

static void literals(void)
{
	struct tfk_lit v;
	struct tfk_tensor t;
	struct tfk_err err;

	ok(!tfk_lit_parse(" [[1, 2.5], (3, -4e-1)] ", &v, &err) &&
	   v.kind == TFK_LIT_LIST && v.n == 2, "nested list and tuple");
	ok(!tfk_lit_to_tensor(&v, &t, &err) && t.dtype == TFK_DT_DOUBLE &&
	   t.rank == 2 && t.shape[0] == 2 && t.shape[1] == 2 &&
	   ((double *)t.data)[3] == -0.4, "np.array: float64 [2, 2]");
	tfk_tensor_release(&t);
	tfk_lit_release(&v);
	ok(!tfk_lit_parse("[1, -2, 3]", &v, &err) &&
	   !tfk_lit_to_tensor(&v, &t, &err) && t.dtype == TFK_DT_INT64 &&
	   ((int64_t *)t.data)[1] == -2, "ints: int64");
	tfk_tensor_release(&t);
	tfk_lit_release(&v);
	ok(!tfk_lit_parse("[b'a\\x00', \"it's\"]", &v, &err) &&
	   !tfk_lit_to_tensor(&v, &t, &err) && t.dtype == TFK_DT_STRING &&
	   tfk_tensor_str(&t, 0).len == 2 && tfk_tensor_str(&t, 0).ptr[1] == 0
	   && tfk_tensor_str(&t, 1).len == 4, "strings with escapes");
	tfk_tensor_release(&t);
	tfk_lit_release(&v);
	ok(!tfk_lit_parse("[True, False]", &v, &err) &&
	   !tfk_lit_to_tensor(&v, &t, &err) && t.dtype == TFK_DT_BOOL,
	   "bools");
	tfk_tensor_release(&t);
	tfk_lit_release(&v);
	ok(!tfk_lit_parse("2.", &v, &err) && !tfk_lit_to_tensor(&v, &t, &err) &&
	   t.rank == 0 && *(double *)t.data == 2.0, "scalar 2.");
	tfk_tensor_release(&t);
	tfk_lit_release(&v);
	ok(!tfk_lit_parse("[{'x': [1.0], \"y\": ['a']}]", &v, &err) &&
	   v.items[0].kind == TFK_LIT_DICT && v.items[0].n == 2 &&
	   !strcmp(v.items[0].keys[1], "y"), "list of dicts");
	tfk_lit_release(&v);
	is_int(tfk_lit_parse("np.ones((2, 3))", &v, &err), TFK_EINVAL,
	       "calls are refused");
	ok(strstr(err.msg, "column 1: names and calls") != NULL, "%s", err.msg);
	is_int(tfk_lit_parse("__import__('os')", &v, &err), TFK_EINVAL,
	       "names are refused");
	is_int(tfk_lit_parse("[1, 2", &v, &err), TFK_EINVAL, "unclosed");
	ok(strstr(err.msg, "column 6: expected ',' or ']'") != NULL, "%s",
	   err.msg);
	is_int(tfk_lit_parse("'abc", &v, &err), TFK_EINVAL, "unterminated");
	is_int(tfk_lit_parse("1 2", &v, &err), TFK_EINVAL, "trailing text");
	is_int(tfk_lit_parse("99999999999999999999", &v, &err), TFK_EINVAL,
	       "int64 overflow");
	is_int(tfk_lit_parse("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]"
			     "]]]]]]]]]]]]]]]]]]]", &v, &err), TFK_EINVAL,
	       "depth limit");
	ok(!tfk_lit_parse("[[1], [2, 3]]", &v, &err), "ragged parses");
	is_int(tfk_lit_to_tensor(&v, &t, &err), TFK_EINVAL, "ragged refused");
	ok(strstr(err.msg, "ragged nested lists (dim 1: 1 vs 2)") != NULL, "%s",
	   err.msg);
	tfk_lit_release(&v);
	ok(!tfk_lit_parse("[1, 'a']", &v, &err), "mixed parses");
	is_int(tfk_lit_to_tensor(&v, &t, &err), TFK_EINVAL, "mixed refused");
	tfk_lit_release(&v);
}

static void str_is(const struct tfk_tensor *t, const char *want,
		   const char *what)
{
	struct tfk_buf b;
	struct tfk_err err;

	tfk_buf_init(&b);
	tfk_npy_str(t, &b, &err);
	tfk_buf_addc(&b, 0);
	is_str((char *)b.data, want, "str: %s", what);
	tfk_buf_release(&b);
}

static void str_lit(const char *lit, enum tfk_dtype dt, const char *want)
{
	struct tfk_lit v;
	struct tfk_tensor t, c;
	struct tfk_err err;
	int64_t i, n;

	if (tfk_lit_parse(lit, &v, &err) || tfk_lit_to_tensor(&v, &t, &err)) {
		ok(0, "%s: %s", lit, err.msg);
		return;
	}
	tfk_lit_release(&v);
	if (dt != t.dtype) {
		tfk_tensor_init(&c, dt, t.rank, t.shape, &err);
		n = tfk_tensor_numel(&t);
		for (i = 0; i < n; i++) {
			double x = t.dtype == TFK_DT_DOUBLE ?
				((double *)t.data)[i] :
				(double)((int64_t *)t.data)[i];

			if (dt == TFK_DT_FLOAT)
				((float *)c.data)[i] = (float)x;
			else if (dt == TFK_DT_INT32)
				((int32_t *)c.data)[i] = (int32_t)x;
		}
		tfk_tensor_release(&t);
		t = c;
	}
	str_is(&t, want, lit);
	tfk_tensor_release(&t);
}

static void numpy_str(void)
{
	struct tfk_tensor t;
	struct tfk_err err;
	int64_t shape[2] = { 2, 1000 }, i;

	str_lit("[1.5, -2.25, 100.0]", TFK_DT_DOUBLE, "[  1.5   -2.25 100.  ]");
	str_lit("[1e-5, 1e5]", TFK_DT_DOUBLE, "[1.e-05 1.e+05]");
	str_lit("[0.1, 0.2, 0.30000000000000004]", TFK_DT_DOUBLE,
		"[0.1 0.2 0.3]");
	str_lit("[[1, -20], [300, 4]]", TFK_DT_INT32, "[[  1 -20]\n [300   4]]");
	str_lit("[True, False]", TFK_DT_BOOL, "[ True False]");
	str_lit("[b'a', b\"it's\", b'\\x00\\n']", TFK_DT_STRING,
		"[b'a' b\"it's\" b'\\x00\\n']");
	str_lit("3.0", TFK_DT_FLOAT, "3.0");
	str_lit("1e-5", TFK_DT_DOUBLE, "1e-05");
	str_lit("0.1", TFK_DT_FLOAT, "0.1");
	str_lit("-7", TFK_DT_INT64, "-7");
	str_lit("True", TFK_DT_BOOL, "True");
	str_lit("1e16", TFK_DT_DOUBLE, "1e+16");
	str_lit("123.456", TFK_DT_DOUBLE, "123.456");
	str_lit("[[[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]]",
		TFK_DT_DOUBLE,
		"[[[0. 0.]\n  [0. 0.]]\n\n [[0. 0.]\n  [0. 0.]]]");
	tfk_tensor_init(&t, TFK_DT_DOUBLE, 1, (int64_t[]){ 2 }, &err);
	((double *)t.data)[0] = NAN;
	((double *)t.data)[1] = 1.0;
	str_is(&t, "[nan  1.]", "nan pads");
	tfk_tensor_release(&t);
	tfk_tensor_init(&t, TFK_DT_INT64, 1, (int64_t[]){ 30 }, &err);
	for (i = 0; i < 30; i++)
		((int64_t *)t.data)[i] = i * 1000;
	str_is(&t, "[    0  1000  2000  3000  4000  5000  6000  7000  8000  "
	       "9000 10000 11000\n 12000 13000 14000 15000 16000 17000 18000 "
	       "19000 20000 21000 22000 23000\n 24000 25000 26000 27000 28000 "
	       "29000]", "line wrap at 75");
	tfk_tensor_release(&t);
	tfk_tensor_init(&t, TFK_DT_DOUBLE, 2, shape, &err);
	for (i = 0; i < 2000; i++)
		((double *)t.data)[i] = (double)i;
	str_is(&t, "[[0.000e+00 1.000e+00 2.000e+00 ... 9.970e+02 9.980e+02 "
	       "9.990e+02]\n [1.000e+03 1.001e+03 1.002e+03 ... 1.997e+03 "
	       "1.998e+03 1.999e+03]]", "summary over 1000 elements");
	tfk_tensor_release(&t);
	tfk_tensor_init(&t, TFK_DT_FLOAT, 2, (int64_t[]){ 1, 0 }, &err);
	str_is(&t, "[]", "empty");
	tfk_tensor_release(&t);
}

static void alloc_failures(void)
{
	struct tfk_tensor t;
	struct tfk_lit v;
	struct tfk_err err;
	long k;
	int rc, bad = 0;

	for (k = 0; k < 40; k++) {
		tfk_alloc_fail_after(k);
		rc = tfk_npy_decode(npy_unicode.b, npy_unicode.n, &t, &err);
		tfk_alloc_fail_after(-1);
		if (rc && rc != TFK_ENOMEM)
			bad++;
		if (!rc)
			tfk_tensor_release(&t);
		tfk_alloc_fail_after(k);
		rc = tfk_lit_parse("[{'a': [1, 'x']}, (2.5,)]", &v, &err);
		tfk_alloc_fail_after(-1);
		if (rc && rc != TFK_ENOMEM)
			bad++;
		if (!rc)
			tfk_lit_release(&v);
	}
	is_int(bad, 0, "failed allocations give TFK_ENOMEM (ASan: no leaks)");
}

/* A v1.0 .npy of header dict h (padded to 128 bytes, a multiple of 64
 * as numpy writes) and then n bytes of data (zeros) into buf; returns
 * the length. */
static size_t hostile_npy(unsigned char *buf, const char *h, size_t n)
{
	size_t hl = 128 - 10;

	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (unsigned char)hl;
	buf[9] = 0;
	memset(buf + 10, ' ', hl);
	memcpy(buf + 10, h, strlen(h));
	buf[10 + hl - 1] = '\n';
	memset(buf + 128, 0, n);
	return 128 + n;
}

/* Shapes and descrs that claim more than the file holds, and the
 * tensor byte budget (TFK_MAX_TENSOR_BYTES) on .npy and .npz. */
static void hostile(void)
{
	static unsigned char buf[128 + 4096];
	struct tfk_tensor t;
	struct tfk_err err;
	size_t n;
	int rc;

	n = hostile_npy(buf, "{'descr': '|S0', 'fortran_order': False, "
			"'shape': (67108864,), }", 0);
	rc = tfk_npy_decode(buf, n, &t, &err);
	ok(rc == TFK_EINVAL && !strcmp(err.msg, "descr '|S0': item size 0 "
				       "not supported"), "|S0: %s", err.msg);
	n = hostile_npy(buf, "{'descr': '<U0', 'fortran_order': False, "
			"'shape': (67108864,), }", 0);
	rc = tfk_npy_decode(buf, n, &t, &err);
	ok(rc == TFK_EINVAL && !strcmp(err.msg, "descr '<U0': item size 0 "
				       "not supported"), "<U0: %s", err.msg);
	n = hostile_npy(buf, "{'descr': '<f4', 'fortran_order': False, "
			"'shape': (1024, 1024), }", 4096);
	rc = tfk_npy_decode(buf, n, &t, &err);
	ok(rc == TFK_ECORRUPT && !strcmp(err.msg, "byte 128: 4096 bytes of "
		"data, shape [1024, 1024] needs 4194304"), "short data: %s",
	   err.msg);
	n = hostile_npy(buf, "{'descr': '|S1', 'fortran_order': False, "
			"'shape': (4096,), }", 4096);
	setenv("TFK_MAX_TENSOR_BYTES", "64K", 1);
	rc = tfk_npy_decode(buf, n, &t, &err);
	is_int(rc, 0, "|S1 x 4096: 64 KiB of tfk_str, within 64K");
	tfk_tensor_release(&t);
	setenv("TFK_MAX_TENSOR_BYTES", "65535", 1);
	rc = tfk_npy_decode(buf, n, &t, &err);
	ok(rc == TFK_EINVAL && !strcmp(err.msg, "tensor string [4096] is "
		"65536 bytes, more than the limit of 65535 "
		"(TFK_MAX_TENSOR_BYTES)"), "... not within 65535: %s",
	   err.msg);
	tap_write_file(tap_tmp("big.npy"), buf, n);
	rc = tfk_npy_read(tap_tmp("big.npy"), NULL, &t, &err);
	ok(rc == TFK_EINVAL && !strncmp(err.msg, tap_tmp("big.npy"),
		strlen(tap_tmp("big.npy"))) && strstr(err.msg,
		": tensor string [4096] is 65536 bytes"),
	   "the file name leads: %s", err.msg);
	unsetenv("TFK_MAX_TENSOR_BYTES");
}

int main(void)
{
	numpy_vectors();
	decode_vectors();
	encode_exact(npy_f32_1x2.b, npy_f32_1x2.n, "f4 (1, 2)");
	encode_exact(npy_i64_scalar.b, npy_i64_scalar.n, "i8 ()");
	encode_exact(npy_bytes.b, npy_bytes.n, "|S2");
	encode_exact(npy_bool.b, npy_bool.n, "|b1");
	encode_exact(npy_f64_3.b, npy_f64_3.n, "f8 (3,)");
	corrupt();
	literals();
	numpy_str();
	alloc_failures();
	hostile();
	return tap_done();
}
