/*
 * t-flatbuf.c - the FlatBuffers reader and builder against Google's own
 * Python runtime (python3-flatbuffers, tests/py/tflite_fb.py): our
 * reader reads a buffer flatbuffers.Builder made (shared vtables, its
 * own field order and padding), Python reads a buffer our builder made;
 * then every truncation and every byte flip of a valid buffer, and
 * hand-made hostile headers, vtables, tables, vectors and strings, each
 * read from an exactly-sized allocation so ASan sees any over-read.
 */
#include "format/flatbuf.h"
#include "util/alloc.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The test schema (tflite_fb.py): root slots 0 u8, 1 i32, 2 i64, 3 f32,
 * 4 string, 5 [int], 6 [long], 7 child {0 u32, 1 string}, 8 [table
 * {0 u32}], 9 [string], 10 absent, 11 [float], 12 u64, 13 i8. */
struct vals {
	uint8_t u8;
	int32_t i32;
	int64_t i64;
	float f32;
	char str[16];
	int32_t vi32[3];
	int64_t vi64[2];
	uint32_t child_u32;
	char child_str[16];
	uint32_t items[2];
	char strs[2][4];
	int absent;
	float vf32[2];
	uint64_t u64;
	int8_t i8;
};

/* Read every field; 0, or the first error. Values into *v. */
static int walk(const void *p, size_t n, struct vals *v, struct tfk_err *err)
{
	struct tfk_fb fb;
	struct tfk_fb_table t, c, it;
	struct tfk_fb_vec vec;
	const char *s;
	uint32_t len, i;
	int rc;

	memset(v, 0, sizeof(*v));
	if ((rc = tfk_fb_open(&fb, p, n, "TFKT", &t, err)) ||
	    (rc = tfk_fb_u8(&t, 0, 0, &v->u8, err)) ||
	    (rc = tfk_fb_i32(&t, 1, 0, &v->i32, err)) ||
	    (rc = tfk_fb_i64(&t, 2, 0, &v->i64, err)) ||
	    (rc = tfk_fb_f32(&t, 3, 0, &v->f32, err)) ||
	    (rc = tfk_fb_u64(&t, 12, 0, &v->u64, err)) ||
	    (rc = tfk_fb_i8(&t, 13, 0, &v->i8, err)))
		return rc;
	if ((rc = tfk_fb_string(&t, 4, &s, &len, err)) < 0)
		return rc;
	snprintf(v->str, sizeof(v->str), "%.*s", (int)len, s ? s : "");
	if ((rc = tfk_fb_vector(&t, 5, 4, &vec, err)) < 0)
		return rc;
	for (i = 0; i < vec.len && i < 3; i++)
		v->vi32[i] = tfk_fb_vec_i32(&vec, i);
	if ((rc = tfk_fb_vector(&t, 6, 8, &vec, err)) < 0)
		return rc;
	for (i = 0; i < vec.len && i < 2; i++)
		v->vi64[i] = tfk_fb_vec_i64(&vec, i);
	if ((rc = tfk_fb_table_field(&t, 7, &c, err)) < 0)
		return rc;
	if (rc) {
		if ((rc = tfk_fb_u32(&c, 0, 0, &v->child_u32, err)) ||
		    (rc = tfk_fb_string(&c, 1, &s, &len, err)) < 0)
			return rc;
		snprintf(v->child_str, sizeof(v->child_str), "%.*s", (int)len,
			 s ? s : "");
	}
	if ((rc = tfk_fb_vector(&t, 8, 4, &vec, err)) < 0)
		return rc;
	for (i = 0; i < vec.len; i++) {
		uint32_t x;

		if ((rc = tfk_fb_vec_table(&vec, i, &it, err)) ||
		    (rc = tfk_fb_u32(&it, 0, 0, &x, err)))
			return rc;
		if (i < 2)
			v->items[i] = x;
	}
	if ((rc = tfk_fb_vector(&t, 9, 4, &vec, err)) < 0)
		return rc;
	for (i = 0; i < vec.len; i++) {
		if ((rc = tfk_fb_vec_string(&vec, i, &s, &len, err)))
			return rc;
		if (i < 2)
			snprintf(v->strs[i], 4, "%.*s", (int)len, s);
	}
	v->absent = !tfk_fb_has(&t, 10);
	if ((rc = tfk_fb_vector(&t, 11, 4, &vec, err)) < 0)
		return rc;
	for (i = 0; i < vec.len && i < 2; i++)
		v->vf32[i] = tfk_fb_vec_f32(&vec, i);
	return 0;
}

static void check_vals(const struct vals *v, const char *who)
{
	is_int(v->u8, 200, "%s: u8", who);
	is_int(v->i32, -123456, "%s: i32", who);
	ok(v->i64 == -1234567890123LL, "%s: i64", who);
	ok(v->f32 == 1.5f, "%s: f32", who);
	is_str(v->str, "hello", "%s: string", who);
	ok(v->vi32[0] == 1 && v->vi32[1] == -2 && v->vi32[2] == 3,
	   "%s: [int]", who);
	ok(v->vi64[0] == (1LL << 40) && v->vi64[1] == -5, "%s: [long]", who);
	is_int(v->child_u32, 7, "%s: child table scalar", who);
	is_str(v->child_str, "child", "%s: child table string", who);
	ok(v->items[0] == 1 && v->items[1] == 2, "%s: [table]", who);
	ok(!strcmp(v->strs[0], "a") && !strcmp(v->strs[1], "bc"),
	   "%s: [string]", who);
	ok(v->absent, "%s: absent slot", who);
	ok(v->vf32[0] == 0.25f && v->vf32[1] == -4.0f, "%s: [float]", who);
	ok(v->u64 == 0x8000000000000005ULL, "%s: u64", who);
	is_int(v->i8, -7, "%s: i8", who);
}

static int build(struct tfk_fbb *b, const uint8_t **p, size_t *n,
		 struct tfk_err *err)
{
	static const int32_t vi[] = { 1, -2, 3 };
	static const int64_t vl[] = { 1LL << 40, -5 };
	static const float vf[] = { 0.25f, -4.0f };
	uint32_t s_hello, v_i32, v_i64, s_child, child, items[2], v_items;
	uint32_t strs[2], v_strs, v_f32, root;
	int k;

	s_hello = tfk_fbb_string(b, "hello", 5);
	v_i32 = tfk_fbb_vector(b, vi, 3, 4);
	v_i64 = tfk_fbb_vector(b, vl, 2, 8);
	s_child = tfk_fbb_string(b, "child", 5);
	tfk_fbb_start(b);
	tfk_fbb_add_u32(b, 0, 7);
	tfk_fbb_add_ref(b, 1, s_child);
	child = tfk_fbb_end(b);
	for (k = 0; k < 2; k++) {
		tfk_fbb_start(b);
		tfk_fbb_add_u32(b, 0, (uint32_t)k + 1);
		items[k] = tfk_fbb_end(b);
	}
	v_items = tfk_fbb_vector_refs(b, items, 2);
	strs[0] = tfk_fbb_string(b, "a", 1);
	strs[1] = tfk_fbb_string(b, "bc", 2);
	v_strs = tfk_fbb_vector_refs(b, strs, 2);
	v_f32 = tfk_fbb_vector(b, vf, 2, 4);
	tfk_fbb_start(b);
	tfk_fbb_add_u8(b, 0, 200);
	tfk_fbb_add_i32(b, 1, -123456);
	tfk_fbb_add_i64(b, 2, -1234567890123LL);
	tfk_fbb_add_f32(b, 3, 1.5f);
	tfk_fbb_add_ref(b, 4, s_hello);
	tfk_fbb_add_ref(b, 5, v_i32);
	tfk_fbb_add_ref(b, 6, v_i64);
	tfk_fbb_add_ref(b, 7, child);
	tfk_fbb_add_ref(b, 8, v_items);
	tfk_fbb_add_ref(b, 9, v_strs);
	tfk_fbb_add_ref(b, 11, v_f32);
	tfk_fbb_add_u64(b, 12, 0x8000000000000005ULL);
	tfk_fbb_add_u8(b, 13, (uint8_t)-7);
	root = tfk_fbb_end(b);
	return tfk_fbb_finish(b, root, "TFKT", p, n, err);
}

static char *run_py(const char *args)
{
	char cmd[1024];
	const char *py = getenv("PYTHON");
	static char out[4096];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s %s %s", py ? py : "/usr/bin/python3",
		 tap_source("tests/py/tflite_fb.py"), args);
	f = popen(cmd, "r");
	if (!f)
		return NULL;
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	if (pclose(f) != 0)
		return NULL;
	return out;
}

/* Copy into an exact-size allocation so ASan flags any over-read. */
static int walk_exact(const uint8_t *p, size_t n, struct vals *v,
		      struct tfk_err *err)
{
	uint8_t *c = malloc(n ? n : 1);
	int rc;

	memcpy(c, p, n);
	rc = walk(c, n, v, err);
	free(c);
	return rc;
}

static void python_built(void)
{
	const char *path = tap_tmp("py.bin");
	char args[512];
	uint8_t *p;
	size_t n, k;
	struct vals v;
	struct tfk_err err;
	int rc, bad, refused;

	snprintf(args, sizeof(args), "build %s", path);
	ok(run_py(args) != NULL, "python3-flatbuffers built the test buffer");
	p = tap_read_file(path, &n);
	ok(p != NULL, "read it back");
	if (!p)
		return;
	rc = walk_exact(p, n, &v, &err);
	is_int(rc, 0, "our reader reads flatbuffers.Builder's buffer: %s",
	       rc ? err.msg : "ok");
	check_vals(&v, "python-built");

	/* every truncation: no over-read (ASan). Python's builder puts
	 * the first object's alignment padding at the very end (the
	 * buffer grows downwards): cutting only that padding loses
	 * nothing; every other cut is refused. */
	refused = 0;
	bad = 0;
	for (k = 0; k < n; k++) {
		size_t j;
		int pad = 1;

		for (j = k; j < n; j++)
			pad &= p[j] == 0;
		pad &= n - k < 4;
		rc = walk_exact(p, k, &v, &err);
		if (rc < 0)
			refused++;
		else if (!pad || v.u8 != 200 || strcmp(v.str, "hello"))
			bad++;
	}
	ok(refused >= (int)n - 3 && !bad, "truncations: %d of %zu refused, "
	   "the rest only cut trailing padding", refused, n);

	/* every byte flipped: never an over-read, whatever it does */
	bad = 0;
	for (k = 0; k < n; k++) {
		static const uint8_t x[] = { 0xff, 0x80, 0x01, 0x7f };
		size_t j;

		for (j = 0; j < sizeof(x); j++) {
			p[k] ^= x[j];
			rc = walk_exact(p, n, &v, &err);
			if (rc < 0 && (err.code != rc || !err.msg[0]))
				bad++;
			p[k] ^= x[j];
		}
	}
	is_int(bad, 0, "byte flips: every failure has a message");
	free(p);
}

static void ours_read_by_python(void)
{
	struct tfk_fbb b;
	const uint8_t *p;
	size_t n;
	struct tfk_err err;
	struct vals v;
	char args[512], *out;
	const char *path = tap_tmp("ours.bin");

	tfk_fbb_init(&b);
	is_int(build(&b, &p, &n, &err), 0, "builder finishes");
	ok(n % 8 == 0, "finished size %zu is a multiple of the 8-byte "
	   "alignment", n);
	is_int(walk_exact(p, n, &v, &err), 0, "our reader reads our builder");
	check_vals(&v, "ours");
	tap_write_file(path, p, n);
	snprintf(args, sizeof(args), "read %s", path);
	out = run_py(args);
	is_str(out, "u8=200\ni32=-123456\ni64=-1234567890123\nf32=1.5\n"
	       "str=hello\nvi32=[1, -2, 3]\nvi64=[1099511627776, -5]\n"
	       "child=7,child\nitems=[1, 2]\nstrs=['a', 'bc']\nabsent=True\n"
	       "vf32=[0.25, -4.0]\nu64=9223372036854775813\ni8=-7\n",
	       "python3-flatbuffers reads our builder's buffer");
	tfk_fbb_release(&b);
}

static void builder_failures(void)
{
	struct tfk_fbb b;
	const uint8_t *p;
	size_t n;
	struct tfk_err err;
	int k, rc = -1, nomem = 0;

	for (k = 0; k < 40 && rc; k++) {
		tfk_fbb_init(&b);
		tfk_alloc_fail_after(k);
		rc = build(&b, &p, &n, &err);
		tfk_alloc_fail_after(-1);
		if (rc == TFK_ENOMEM)
			nomem++;
		tfk_fbb_release(&b);
	}
	ok(rc == 0 && nomem == k - 1, "failed allocations: ENOMEM %d "
	   "times, then success", nomem);

	tfk_fbb_init(&b);
	tfk_fbb_end(&b);
	rc = tfk_fbb_finish(&b, 0, NULL, &p, &n, &err);
	is_int(rc, TFK_EINVAL, "end without start is refused: %s", err.msg);
	tfk_fbb_release(&b);
	tfk_fbb_init(&b);
	tfk_fbb_start(&b);
	tfk_fbb_add_u32(&b, TFK_FBB_MAX_SLOTS, 1);
	rc = tfk_fbb_finish(&b, tfk_fbb_end(&b), NULL, &p, &n, &err);
	is_int(rc, TFK_EINVAL, "slot out of range is refused");
	tfk_fbb_release(&b);
	tfk_fbb_init(&b);
	tfk_fbb_start(&b);
	rc = tfk_fbb_finish(&b, 0, NULL, &p, &n, &err);
	is_int(rc, TFK_EINVAL, "a table left open is refused");
	tfk_fbb_release(&b);
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/*
 * A minimal valid buffer to break: root at 16, vtable at 8 (size 8:
 * one slot), table at 16 (size 8: soffset + one u32 offset field at
 * 20 pointing to a vector/string at 24).
 *   0 root=16 | 4 "TFKT" | 8 vt: 8, 8, 4, 0 | 16 soffset 8 | 20 off 4
 *   24 len 2 | 28 "ab\0\0"
 */
static size_t mini(uint8_t *p)
{
	memset(p, 0, 32);
	put32(p, 16);
	memcpy(p + 4, "TFKT", 4);
	put16(p + 8, 8);
	put16(p + 10, 8);
	put16(p + 12, 4);
	put32(p + 16, 8);
	put32(p + 20, 4);
	put32(p + 24, 2);
	memcpy(p + 28, "ab", 2);
	return 32;
}

static int mini_read(const uint8_t *src, size_t n, int as_string,
		     uint32_t elem, struct tfk_err *err)
{
	uint8_t *c = malloc(n ? n : 1);
	struct tfk_fb fb;
	struct tfk_fb_table t;
	struct tfk_fb_vec v;
	const char *s;
	uint32_t len;
	int rc;

	memcpy(c, src, n);
	rc = tfk_fb_open(&fb, c, n, "TFKT", &t, err);
	if (!rc)
		rc = as_string ? tfk_fb_string(&t, 0, &s, &len, err)
			       : tfk_fb_vector(&t, 0, elem, &v, err);
	free(c);
	return rc;
}

/*
 * One field of mini()'s buffer overwritten (put16 or put32 of val at
 * off), read as a string or as a vector of elem-byte elements: the read
 * must fail with TFK_ECORRUPT and a message holding want.
 */
struct breakage {
	unsigned off;
	int bits;
	uint32_t val;
	int as_string;
	uint32_t elem;
	const char *want, *what;
};

static const struct breakage broken[] = {
	{ 0, 32, 4000, 1, 1, "root offset 4000", "root outside" },
	{ 0, 32, 18, 1, 1, "not aligned", "misaligned table" },
	{ 16, 32, 100, 1, 1, "before the buffer", "vtable before the buffer" },
	{ 16, 32, (uint32_t)-12, 1, 1, "vtable", "vtable past the end" },
	{ 8, 16, 7, 1, 1, "vtable size 7", "odd vtable size" },
	{ 8, 16, 2, 1, 1, "vtable size 2", "vtable size under 4" },
	{ 8, 16, 64, 1, 1, "vtable of 64 bytes",
	  "vtable longer than the buffer" },
	{ 10, 16, 40, 1, 1, "table of 40 bytes",
	  "table longer than the buffer" },
	{ 10, 16, 2, 1, 1, "table size 2", "table size under 4" },
	{ 12, 16, 6, 1, 1, "does not fit", "field beyond its table" },
	{ 20, 32, 0x7ffffff0, 1, 1, "vector length", "offset past the end" },
	{ 24, 32, 0xffffffff, 0, 8, "runs past the end",
	  "vector of 2^32-1 8-byte elements" },
	{ 24, 32, 4, 1, 1, "terminating 0 byte", "string without its 0 byte" },
}, broken_end[] = {
	{ 24, 32, 0, 0, 8, "not aligned to 8", "8-byte elements misaligned" },
	{ 20, 32, 3, 1, 1, "not aligned", "misaligned vector" },
};

static void break_each(const struct breakage *b, size_t n_b)
{
	uint8_t p[32];
	struct tfk_err err;
	size_t i, n;
	int rc;

	for (i = 0; i < n_b; i++) {
		n = mini(p);
		if (b[i].bits == 16)
			put16(p + b[i].off, (uint16_t)b[i].val);
		else
			put32(p + b[i].off, b[i].val);
		rc = mini_read(p, n, b[i].as_string, b[i].elem, &err);
		ok(rc == TFK_ECORRUPT && strstr(err.msg, b[i].want),
		   "%s: %s", b[i].what, err.msg);
	}
}

static void hostile(void)
{
	uint8_t p[32];
	struct tfk_err err;
	size_t n;
	int rc;

	n = mini(p);
	is_int(mini_read(p, n, 1, 1, &err), 1, "mini buffer: string read");

	rc = mini_read(p, 7, 1, 1, &err);
	ok(rc == TFK_ETRUNC && strstr(err.msg, "too small"),
	   "7 bytes: %s", err.msg);
	n = mini(p);
	memcpy(p + 4, "TFL3", 4);
	rc = mini_read(p, n, 1, 1, &err);
	ok(rc == TFK_ECORRUPT && strstr(err.msg, "'TFL3', expected 'TFKT'"),
	   "wrong identifier: %s", err.msg);
	break_each(broken, sizeof broken / sizeof broken[0]);
	n = mini(p);
	memcpy(p + 28, "abcd", 4);
	put32(p + 24, 4);
	rc = mini_read(p, n, 1, 1, &err);
	ok(rc == TFK_ECORRUPT, "string ending at the buffer's end: %s",
	   err.msg);
	break_each(broken_end, sizeof broken_end / sizeof broken_end[0]);
}

int main(void)
{
	python_built();
	ours_read_by_python();
	builder_failures();
	hostile();
	return tap_done();
}
