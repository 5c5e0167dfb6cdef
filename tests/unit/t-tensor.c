/*
 * t-tensor.c - dtypes (TensorFlow's DataType numbers and names), shapes
 * with overflow refusal, heap/view tensors, reshape views, deep copies,
 * string elements with stable storage, quantization parameters, and
 * failed allocations.
 */
#include "graph/tensor.h"
#include "util/alloc.h"
#include "tap.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void dtypes(void)
{
	/* numbers from tensorflow/core/framework/types.proto */
	static const struct {
		enum tfk_dtype t;
		int num;
		size_t size;
		const char *name, *tf;
	} want[] = {
		{ TFK_DT_FLOAT, 1, 4, "float32", "DT_FLOAT" },
		{ TFK_DT_DOUBLE, 2, 8, "float64", "DT_DOUBLE" },
		{ TFK_DT_INT32, 3, 4, "int32", "DT_INT32" },
		{ TFK_DT_UINT8, 4, 1, "uint8", "DT_UINT8" },
		{ TFK_DT_INT16, 5, 2, "int16", "DT_INT16" },
		{ TFK_DT_INT8, 6, 1, "int8", "DT_INT8" },
		{ TFK_DT_STRING, 7, sizeof(struct tfk_str), "string",
		  "DT_STRING" },
		{ TFK_DT_INT64, 9, 8, "int64", "DT_INT64" },
		{ TFK_DT_BOOL, 10, 1, "bool", "DT_BOOL" },
		{ TFK_DT_HALF, 19, 2, "float16", "DT_HALF" },
	};
	enum tfk_dtype t;
	size_t i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		is_int(want[i].t, want[i].num, "%s is DataType %d",
		       want[i].tf, want[i].num);
		is_int(tfk_dtype_size(want[i].t), want[i].size, "%s size",
		       want[i].name);
		is_str(tfk_dtype_name(want[i].t), want[i].name, "name %d",
		       want[i].num);
		is_str(tfk_dtype_tf_name(want[i].t), want[i].tf, "tf name %d",
		       want[i].num);
		t = TFK_DT_INVALID;
		ok(!tfk_dtype_parse(want[i].name, &t) && t == want[i].t,
		   "parse %s", want[i].name);
		t = TFK_DT_INVALID;
		ok(!tfk_dtype_parse(want[i].tf, &t) && t == want[i].t,
		   "parse %s", want[i].tf);
	}
	ok(!tfk_dtype_parse("float", &t) && t == TFK_DT_FLOAT,
	   "Keras 'float' is float32");
	is_int(tfk_dtype_parse("float31", &t), TFK_EINVAL, "unknown dtype");
	is_int(tfk_dtype_size(8), 0, "complex64 (8) not supported: size 0");
	is_str(tfk_dtype_name(99), "invalid", "unknown number's name");
	is_str(tfk_dtype_tf_name(0), "DT_INVALID", "DT_INVALID");
}

static void shapes(void)
{
	struct tfk_err err = { 0, "" };
	int64_t n = -7, s[TFK_MAX_RANK + 1] = { 2, 3, 4 };
	int64_t big[3] = { INT64_MAX / 2, 2, 2 };
	int64_t unk[2] = { -1, 784 };
	char b[64];

	ok(!tfk_shape_numel(3, s, 4, &n, &err) && n == 24, "numel 2x3x4");
	ok(!tfk_shape_numel(0, s, 4, &n, &err) && n == 1, "scalar has 1");
	s[1] = 0;
	ok(!tfk_shape_numel(3, s, 4, &n, &err) && n == 0, "zero dim");
	s[1] = 3;
	is_int(tfk_shape_numel(3, big, 1, &n, &err), TFK_EINVAL,
	       "element count overflow refused");
	is_str(err.msg, "shape [4611686018427387903, 2, 2]: byte size "
	       "overflows", "overflow message");
	big[0] = INT64_MAX / 4;
	is_int(tfk_shape_numel(1, big, 8, &n, &err), TFK_EINVAL,
	       "byte size overflow refused (count fits)");
	ok(!tfk_shape_numel(1, big, 4, &n, &err), "INT64_MAX/4 x 4 bytes fits");
	is_int(tfk_shape_numel(2, unk, 4, &n, &err), TFK_EINVAL,
	       "unknown dim refused");
	is_str(err.msg, "shape [?, 784]: dim 0 is not known", "message");
	is_int(tfk_shape_numel(9, s, 4, &n, &err), TFK_EINVAL, "rank 9");
	is_str(tfk_shape_str(2, unk, b, sizeof(b)), "[?, 784]", "shape str");
	is_str(tfk_shape_str(0, unk, b, sizeof(b)), "[]", "scalar str");
	is_str(tfk_shape_str(-1, unk, b, sizeof(b)), "<unknown>", "rank -1");
	is_str(tfk_shape_str(2, unk, b, 4), "[?,", "truncated, terminated");
	ok(tfk_shape_equal(2, unk, 2, unk), "equal");
	ok(!tfk_shape_equal(2, unk, 1, unk), "ranks differ");
}

static void tensors(void)
{
	struct tfk_tensor t, v, c, *h;
	struct tfk_err err = { 0, "" };
	int64_t s[2] = { 2, 3 }, r[2] = { 3, -1 }, bad[2] = { 4, -1 };
	float data[6] = { 1, 2, 3, 4, 5, 6 };
	int i;

	ok(!tfk_tensor_init(&t, TFK_DT_FLOAT, 2, s, &err), "init 2x3");
	is_int(t.nbytes, 24, "nbytes");
	is_int(t.owner, TFK_OWN_HEAP, "heap owned");
	is_int(tfk_tensor_numel(&t), 6, "numel");
	for (i = 0; i < 6; i++)
		if (((float *)t.data)[i] != 0)
			break;
	is_int(i, 6, "zeroed");
	memcpy(t.data, data, sizeof(data));

	ok(!tfk_tensor_reshape(&t, 2, r, &v, &err), "reshape to [3, -1]");
	is_int(v.shape[1], 2, "-1 computed as 2");
	ok(v.data == t.data && v.owner == TFK_OWN_BORROWED, "view shares data");
	is_int(tfk_tensor_reshape(&t, 2, bad, &v, &err), TFK_EINVAL,
	       "6 into [4, -1] refused");
	is_str(err.msg, "cannot reshape [2, 3] into [4, ?]", "message");
	r[1] = -1;
	r[0] = -1;
	is_int(tfk_tensor_reshape(&t, 2, r, &v, &err), TFK_EINVAL,
	       "two unknown dims refused");

	ok(!tfk_tensor_copy(&c, &t, &err), "copy");
	ok(c.data != t.data && tfk_tensor_equal(&c, &t), "deep and equal");
	((float *)c.data)[5] = 7;
	ok(!tfk_tensor_equal(&c, &t), "changed copy differs");
	tfk_tensor_release(&c);
	ok(c.data == NULL && c.rank == 0, "release empties");
	tfk_tensor_release(&c);
	tfk_tensor_release(NULL);

	ok(!tfk_tensor_init_view(&v, TFK_DT_FLOAT, 2, s, data, sizeof(data),
				 TFK_OWN_MAPPED, &err), "view of caller data");
	ok(tfk_tensor_equal(&v, &t), "view equals heap tensor");
	tfk_tensor_release(&v);
	is_int(data[0], 1, "release of a view leaves the data alone");
	is_int(tfk_tensor_init_view(&v, TFK_DT_FLOAT, 2, s, data, 20,
				    TFK_OWN_BORROWED, &err), TFK_EINVAL,
	       "view with wrong nbytes refused");
	is_str(err.msg, "20 bytes for 6 elements of float32", "message");
	tfk_tensor_release(&t);

	s[0] = INT64_MAX / 8;
	s[1] = 3;
	is_int(tfk_tensor_init(&t, TFK_DT_DOUBLE, 2, s, &err), TFK_EINVAL,
	       "init refuses an overflowing byte size");
	ok(t.data == NULL, "and leaves the tensor empty");
	s[0] = -1;
	is_int(tfk_tensor_init(&t, TFK_DT_FLOAT, 2, s, &err), TFK_EINVAL,
	       "init refuses unknown dims");
	is_int(tfk_tensor_init(&t, 8, 0, s, &err), TFK_EINVAL,
	       "init refuses complex64");

	ok(!tfk_tensor_new(&h, TFK_DT_INT64, 0, NULL, &err), "new scalar");
	is_int(h->nbytes, 8, "scalar int64 is 8 bytes");
	tfk_tensor_free(h);
	tfk_tensor_free(NULL);
}

static void strings(void)
{
	struct tfk_tensor t, c;
	struct tfk_err err = { 0, "" };
	int64_t s[1] = { 3 }, i;
	char big[10000];
	struct tfk_str e;
	const char *p0;

	ok(!tfk_tensor_init(&t, TFK_DT_STRING, 1, s, &err), "string vector");
	is_int(t.nbytes, 3 * sizeof(struct tfk_str), "nbytes = 3 pairs");
	e = tfk_tensor_str(&t, 1);
	ok(e.len == 0, "empty at first");
	ok(!tfk_tensor_set_str(&t, 0, "hello", 5, &err), "set 0");
	p0 = tfk_tensor_str(&t, 0).ptr;
	ok(!tfk_tensor_set_str(&t, 1, "a\0b", 3, &err), "set 1 with NUL");
	memset(big, 'x', sizeof(big));
	ok(!tfk_tensor_set_str(&t, 2, big, sizeof(big), &err),
	   "set 2: larger than a block");
	is_mem(tfk_tensor_str(&t, 0).ptr, tfk_tensor_str(&t, 0).len,
	       "hello", 5, "element 0 intact after more sets");
	ok(tfk_tensor_str(&t, 0).ptr == p0, "element 0 did not move");
	is_mem(tfk_tensor_str(&t, 1).ptr, tfk_tensor_str(&t, 1).len, "a\0b", 3,
	       "element 1 bytes");
	is_int(tfk_tensor_str(&t, 2).len, sizeof(big), "element 2 length");
	is_int(tfk_tensor_set_str(&t, 3, "x", 1, &err), TFK_EINVAL,
	       "index out of range");
	ok(!tfk_tensor_copy(&c, &t, &err), "copy strings");
	ok(tfk_tensor_equal(&c, &t), "copies equal");
	ok(tfk_tensor_str(&c, 0).ptr != p0, "copy owns its bytes");
	tfk_tensor_set_str(&c, 1, "a\0c", 3, &err);
	ok(!tfk_tensor_equal(&c, &t), "one byte differs");
	tfk_tensor_release(&c);
	tfk_tensor_clear_strs(&t);
	is_int(tfk_tensor_str(&t, 0).len, 0, "cleared");
	for (i = 0; i < 3; i++)
		tfk_tensor_set_str(&t, i, "again", 5, &err);
	is_mem(tfk_tensor_str(&t, 2).ptr, 5, "again", 5, "reused storage");
	tfk_tensor_release(&t);

	ok(!tfk_tensor_init(&t, TFK_DT_FLOAT, 1, s, &err), "float vector");
	is_int(tfk_tensor_set_str(&t, 0, "x", 1, &err), TFK_EINVAL,
	       "set_str on float refused");
	is_str(err.msg, "set_str on a float32 tensor", "message");
	tfk_tensor_release(&t);
}

static void quant(void)
{
	struct tfk_tensor t, c;
	struct tfk_err err = { 0, "" };
	int64_t s[2] = { 3, 2 };
	float sc[3] = { 0.5f, 0.25f, 0.125f }, zero = 0, inf = 1.0f / zero;
	int64_t zp[3] = { 0, -3, 7 };

	ok(!tfk_tensor_init(&t, TFK_DT_INT8, 2, s, &err), "int8 tensor");
	ok(!tfk_tensor_set_quant(&t, 1, -1, sc, zp, &err), "per tensor");
	ok(t.quant.n == 1 && t.quant.axis == -1 && t.quant.scale[0] == 0.5f,
	   "per-tensor params stored");
	ok(!tfk_tensor_set_quant(&t, 3, 0, sc, zp, &err), "per channel axis 0");
	ok(t.quant.n == 3 && t.quant.zero_point[2] == 7 &&
	   t.quant.scale[1] == 0.25f, "per-channel params replace");
	is_int(tfk_tensor_set_quant(&t, 3, 1, sc, zp, &err), TFK_EINVAL,
	       "3 scales along an axis of 2");
	is_str(err.msg, "quantization along axis 1 needs 2 scales, got 3",
	       "message");
	is_int(tfk_tensor_set_quant(&t, 2, -1, sc, zp, &err), TFK_EINVAL,
	       "per-tensor with 2 scales");
	is_int(tfk_tensor_set_quant(&t, 1, 2, sc, zp, &err), TFK_EINVAL,
	       "axis out of rank");
	sc[0] = 0;
	is_int(tfk_tensor_set_quant(&t, 1, -1, sc, zp, &err), TFK_EINVAL,
	       "zero scale");
	sc[0] = inf;
	is_int(tfk_tensor_set_quant(&t, 1, -1, sc, zp, &err), TFK_EINVAL,
	       "infinite scale");
	ok(t.quant.n == 3, "failed sets keep the old params");
	ok(!tfk_tensor_copy(&c, &t, &err), "copy");
	ok(c.quant.n == 3 && c.quant.scale != t.quant.scale &&
	   c.quant.zero_point[1] == -3, "copy has its own params");
	tfk_tensor_release(&c);
	tfk_tensor_release(&t);
	ok(!tfk_tensor_init(&t, TFK_DT_FLOAT, 2, s, &err), "float tensor");
	is_int(tfk_tensor_set_quant(&t, 1, -1, sc + 1, zp, &err), TFK_EINVAL,
	       "quant on float refused");
	tfk_tensor_release(&t);
}

static void alloc_failures(void)
{
	struct tfk_tensor t, c;
	struct tfk_err err = { 0, "" };
	int64_t s[1] = { 2 };
	float sc = 1;
	int64_t zp = 0;
	long k;
	int rc = -1;

	tfk_alloc_fail_after(0);
	is_int(tfk_tensor_init(&t, TFK_DT_FLOAT, 1, s, &err), TFK_ENOMEM,
	       "init: ENOMEM");
	tfk_alloc_fail_after(-1);
	ok(t.data == NULL, "left empty");

	tfk_tensor_init(&t, TFK_DT_STRING, 1, s, &err);
	tfk_tensor_set_str(&t, 0, "abc", 3, &err);
	tfk_tensor_set_str(&t, 1, "de", 2, &err);
	for (k = 0; k < 10; k++) {
		tfk_alloc_fail_after(k);
		rc = tfk_tensor_copy(&c, &t, &err);
		tfk_alloc_fail_after(-1);
		if (!rc)
			break;
		if (rc != TFK_ENOMEM || c.data)
			break;
	}
	ok(!rc && k == 2, "string copy: ENOMEM and clean after each of %ld "
	   "failures, then succeeds", k);
	tfk_tensor_release(&c);
	tfk_tensor_release(&t);

	tfk_tensor_init(&t, TFK_DT_UINT8, 1, s, &err);
	tfk_alloc_fail_after(1);
	is_int(tfk_tensor_set_quant(&t, 1, -1, &sc, &zp, &err), TFK_ENOMEM,
	       "set_quant: ENOMEM");
	tfk_alloc_fail_after(-1);
	ok(t.quant.n == 0, "no params after failure");
	tfk_tensor_release(&t);
}

/* The tensor byte budget (TFK_MAX_TENSOR_BYTES), as every heap
 * tensor meets it. */
static void budget(void)
{
	int64_t big[2] = { 1 << 20, 1 << 20 }, ok4g[1] = { 1 << 30 },
		over4g[1] = { (1 << 30) + 1 }, s[1] = { 16 };
	struct tfk_tensor t;
	struct tfk_err err;

	ok(tfk_tensor_check_size(TFK_DT_FLOAT, 2, big, &err) == TFK_EINVAL &&
	   !strcmp(err.msg, "tensor float32 [1048576, 1048576] is "
		   "4398046511104 bytes, more than the limit of 4294967296 "
		   "(TFK_MAX_TENSOR_BYTES)"), "4 TiB refused: %s", err.msg);
	is_int(tfk_tensor_check_size(TFK_DT_FLOAT, 1, ok4g, &err), 0,
	       "exactly 4 GiB is within the default");
	ok(tfk_tensor_check_size(TFK_DT_FLOAT, 1, over4g, &err) ==
	   TFK_EINVAL, "4 GiB + 4 bytes is not");
	ok(tfk_tensor_init(&t, TFK_DT_FLOAT, 2, big, &err) == TFK_EINVAL &&
	   t.data == NULL && strstr(err.msg, "(TFK_MAX_TENSOR_BYTES)"),
	   "tfk_tensor_init checks it before allocating");
	setenv("TFK_MAX_TENSOR_BYTES", "256", 1);
	ok(tfk_tensor_init(&t, TFK_DT_STRING, 1, s, &err) == 0,
	   "TFK_MAX_TENSOR_BYTES=256: 16 strings (256 bytes) fit");
	tfk_tensor_release(&t);
	s[0] = 17;
	ok(tfk_tensor_init(&t, TFK_DT_STRING, 1, s, &err) == TFK_EINVAL &&
	   !strcmp(err.msg, "tensor string [17] is 272 bytes, more than the "
		   "limit of 256 (TFK_MAX_TENSOR_BYTES)"), "17 do not: %s",
	   err.msg);
	setenv("TFK_MAX_TENSOR_BYTES", "1K", 1);
	is_int(tfk_tensor_check_size(TFK_DT_INT8, 1, (int64_t[]){ 1024 }, &err),
	       0, "TFK_MAX_TENSOR_BYTES=1K: 1024 bytes");
	setenv("TFK_MAX_TENSOR_BYTES", "x", 1);
	ok(tfk_tensor_check_size(TFK_DT_INT8, 0, NULL, &err) == TFK_EINVAL &&
	   !strcmp(err.msg, "TFK_MAX_TENSOR_BYTES: 'x' is not a size"),
	   "a malformed budget is an error: %s", err.msg);
	unsetenv("TFK_MAX_TENSOR_BYTES");
}

int main(void)
{
	budget();
	dtypes();
	shapes();
	tensors();
	strings();
	quant();
	alloc_failures();
	return tap_done();
}
