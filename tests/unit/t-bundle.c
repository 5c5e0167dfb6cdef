/*
 * t-bundle.c - tensor bundle reader and writer.
 *
 * Oracles: the TensorFlow-written SavedModel variables in
 * $TFK_FIXTURES (values from the fixture README; the TF1 index has a
 * Snappy-compressed data block, the TF2 one a DT_STRING object graph),
 * and tests/py/bundle_check.py, an independent pure-Python LevelDB table
 * codec with python3-protobuf messages from TF's field numbers: it reads
 * and strictly checks what we write (block CRCs, restarts, index
 * separators, every data CRC) and writes bundles with small blocks,
 * Snappy blocks and unshortened index keys that we must read. Every
 * entry is compared line by line, bytes in hex. Then the corruptions a
 * reader must refuse (truncated index, bad magic, block and data CRC
 * mismatches, missing or short data file, string length checksum), each
 * message naming the file, atomic writes under failed allocations, and
 * failed allocations in open and read.
 */
#include "format/bundle.h"
#include "util/alloc.h"
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Run bundle_check.py ARGS; its stdout into out (NUL-terminated).
 * Returns the exit status, -1 when it could not run. */
static int oracle(const char *args, char *out, size_t cap)
{
	char cmd[4096];
	FILE *f;
	size_t n = 0;
	int st;

	snprintf(cmd, sizeof(cmd), "'%s' '%s' %s", tap_python(),
		 tap_source("tests/py/bundle_check.py"), args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (n + 1 < cap) {
		size_t r = fread(out + n, 1, cap - 1 - n, f);

		if (!r)
			break;
		n += r;
	}
	out[n] = 0;
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void hex(char **o, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		*o += sprintf(*o, "%02x", b[i]);
}

/* Our reading of every entry, in the oracle's line format without the
 * shard=, offset= and size= fields (those are the writer's choice; the oracle
 * checks them against the data file itself). */
static int ours(const char *prefix, char *out, size_t cap)
{
	struct tfk_bundle *b;
	struct tfk_err err;
	char *o = out;
	int i, rc;

	rc = tfk_bundle_open(&b, prefix, &err);
	if (rc) {
		tap_diag("open %s: %s", prefix, err.msg);
		return rc;
	}
	for (i = 0; i < tfk_bundle_n(b); i++) {
		const char *k = tfk_bundle_key(b, i);
		struct tfk_tensor t;
		struct tfk_tdesc d;
		int64_t j;

		if ((size_t)(o - out) + 4096 > cap)
			break;
		rc = tfk_bundle_desc(b, i, &d);
		if (!rc)
			rc = tfk_bundle_read(b, k, &t, &err);
		if (rc) {
			tap_diag("read %s: %s", k, err.msg);
			break;
		}
		if (d.dtype != t.dtype || d.rank != t.rank) {
			rc = -100;
			break;
		}
		hex(&o, k, strlen(k));
		o += sprintf(o, " dtype=%d shape=", (int)t.dtype);
		for (j = 0; j < t.rank; j++)
			o += sprintf(o, "%s%lld", j ? "," : "",
				     (long long)t.shape[j]);
		o += sprintf(o, " crc=ok ");
		if (t.dtype == TFK_DT_STRING) {
			o += sprintf(o, "str:");
			for (j = 0; j < tfk_tensor_numel(&t); j++) {
				struct tfk_str s = tfk_tensor_str(&t, j);

				if (j)
					*o++ = ',';
				if ((size_t)(o - out) + 2 * s.len + 64 > cap)
					break;
				hex(&o, s.ptr, s.len);
			}
		} else {
			if ((size_t)(o - out) + 2 * t.nbytes + 64 < cap)
				hex(&o, t.data, t.nbytes);
		}
		*o++ = '\n';
		*o = 0;
		tfk_tensor_release(&t);
	}
	*o = 0;
	tfk_bundle_close(b);
	return rc;
}

/* The oracle's dump with " shard=S offset=O size=Z" removed and the header and
 * blocks lines dropped; *blocks gets the data block count. */
static void oracle_entries(char *dump, int *blocks, char *header, size_t hcap)
{
	char *r = dump, *w = dump;

	*blocks = -1;
	header[0] = 0;
	while (*r) {
		char *nl = strchr(r, '\n');
		size_t len = nl ? (size_t)(nl - r + 1) : strlen(r);
		char *off;

		if (!strncmp(r, "header ", 7)) {
			snprintf(header, hcap, "%.*s", (int)(len - (nl ? 1 : 0)),
				 r);
			r += len;
			continue;
		}
		if (!strncmp(r, "blocks data=", 12)) {
			*blocks = atoi(r + 12);
			r += len;
			continue;
		}
		off = strstr(r, " shard=");
		if (off && off < r + len) {
			char *crc = strstr(off, " crc=");

			memmove(w, r, (size_t)(off - r));
			w += off - r;
			len -= (size_t)(crc - r);
			r = crc;
		}
		memmove(w, r, len);
		w += len;
		r += len;
	}
	*w = 0;
	if (w > dump && w[-1] != '\n') {
		*w++ = '\n';
		*w = 0;
	}
}

static char dump_buf[1 << 20], ours_buf[1 << 20];

/* Oracle and our reader agree on every entry of prefix. */
static void agree(const char *prefix, const char *what, int min_blocks)
{
	char args[2048], header[256];
	int blocks, st;

	snprintf(args, sizeof(args), "dump '%s'", prefix);
	st = oracle(args, dump_buf, sizeof(dump_buf));
	is_int(st, 0, "%s: the python oracle accepts the bundle", what);
	oracle_entries(dump_buf, &blocks, header, sizeof(header));
	ok(blocks >= min_blocks, "%s: %d data blocks (>= %d)", what, blocks,
	   min_blocks);
	is_int(ours(prefix, ours_buf, sizeof(ours_buf)), 0,
	       "%s: we read every entry", what);
	is_str(ours_buf, dump_buf, "%s: entries agree with the oracle", what);
}

/* Fixtures ------------------------------------------------------------ */

static float read_f32(struct tfk_bundle *b, const char *key)
{
	struct tfk_tensor t;
	struct tfk_err err;
	float v = -12345;

	if (tfk_bundle_read(b, key, &t, &err)) {
		tap_diag("%s: %s", key, err.msg);
		return v;
	}
	if (t.dtype == TFK_DT_FLOAT && tfk_tensor_numel(&t) == 1)
		v = *(float *)t.data;
	tfk_tensor_release(&t);
	return v;
}

static void fixtures(void)
{
	struct tfk_bundle *b;
	struct tfk_err err;
	struct tfk_tensor t;
	struct tfk_tdesc d;
	int rc;

	rc = tfk_bundle_open(&b, tap_fixture("savedmodel/half_plus_two_cpu_tf1/"
					     "00000123/variables/variables"), &err);
	is_int(rc, 0, "tf1 (snappy index): opens %s", rc ? err.msg : "");
	if (!rc) {
		is_int(tfk_bundle_n(b), 5, "tf1: 5 tensors");
		is_str(tfk_bundle_key(b, 0), "a", "tf1: key 0 a");
		is_str(tfk_bundle_key(b, 1), "a2", "tf1: key 1 a2");
		is_str(tfk_bundle_key(b, 4), "c2", "tf1: key 4 c2");
		ok(tfk_bundle_key(b, 5) == NULL, "tf1: no key 5");
		is_int(tfk_bundle_desc(b, 2, &d), 0, "tf1: desc of b");
		ok(d.dtype == TFK_DT_FLOAT && d.rank == 0, "tf1: b is a float"
		   " scalar");
		ok(read_f32(b, "a") == 0.5f, "tf1: a = 0.5");
		ok(read_f32(b, "a2") == 0.5f, "tf1: a2 = 0.5");
		ok(read_f32(b, "b") == 2.0f, "tf1: b = 2");
		ok(read_f32(b, "c") == 3.0f, "tf1: c = 3");
		ok(read_f32(b, "c2") == 3.0f, "tf1: c2 = 3");
		rc = tfk_bundle_read(b, "x", &t, &err);
		is_int(rc, TFK_ENOTFOUND, "tf1: missing key");
		ok(strstr(err.msg, "variables.index: no tensor 'x'") != NULL,
		   "tf1: message: %s", err.msg);
		tfk_bundle_close(b);
	}

	rc = tfk_bundle_open(&b, tap_fixture("savedmodel/half_plus_two_tf2_cpu/"
					     "00000123/variables/variables"), &err);
	is_int(rc, 0, "tf2: opens %s", rc ? err.msg : "");
	if (!rc) {
		is_int(tfk_bundle_n(b), 4, "tf2: 4 entries");
		is_str(tfk_bundle_key(b, 0), "_CHECKPOINTABLE_OBJECT_GRAPH",
		       "tf2: object graph first");
		ok(read_f32(b, "a/.ATTRIBUTES/VARIABLE_VALUE") == 0.5f,
		   "tf2: a = 0.5");
		ok(read_f32(b, "b/.ATTRIBUTES/VARIABLE_VALUE") == 2.0f,
		   "tf2: b = 2");
		ok(read_f32(b, "c/.ATTRIBUTES/VARIABLE_VALUE") == 3.0f,
		   "tf2: c = 3");
		rc = tfk_bundle_read(b, "_CHECKPOINTABLE_OBJECT_GRAPH", &t, &err);
		is_int(rc, 0, "tf2: string object graph reads, CRCs ok %s",
		       rc ? err.msg : "");
		if (!rc) {
			struct tfk_str s = tfk_tensor_str(&t, 0);

			ok(t.dtype == TFK_DT_STRING && t.rank == 0,
			   "tf2: a string scalar");
			/* a TrackableObjectGraph: field 1 (nodes), LEN */
			is_int(s.len, 613, "tf2: 613 bytes");
			ok(s.len && (uint8_t)s.ptr[0] == 0x0a,
			   "tf2: starts with field 1, wire type 2");
			tfk_tensor_release(&t);
		}
		tfk_bundle_close(b);
	}

	rc = tfk_bundle_open(&b, tap_fixture("savedmodel/rust_regression_tf1/"
					     "variables/variables"), &err);
	is_int(rc, 0, "rust regression: opens %s", rc ? err.msg : "");
	if (!rc) {
		rc = tfk_bundle_read(b, "w", &t, &err);
		is_int(rc, 0, "rust: w reads");
		if (!rc) {
			ok(t.rank == 1 && t.shape[0] == 1, "rust: w is [1]");
			ok(((float *)t.data)[0] == -0.8578622341156006f,
			   "rust: w = -0.8578622341156006");
			tfk_tensor_release(&t);
		}
		rc = tfk_bundle_read(b, "b", &t, &err);
		ok(!rc && ((float *)t.data)[0] == 0.0f, "rust: b = [0]");
		if (!rc)
			tfk_tensor_release(&t);
		tfk_bundle_close(b);
	}

	agree(tap_fixture("savedmodel/half_plus_two_cpu_tf1/00000123/variables/variables"),
	      "tf1 fixture", 1);
	agree(tap_fixture("savedmodel/half_plus_two_tf2_cpu/00000123/variables/variables"),
	      "tf2 fixture", 1);
	agree(tap_fixture("savedmodel/rust_regression_tf1/variables/variables"),
	      "rust fixture", 1);
}

/* Bundles the oracle writes ------------------------------------------- */

static void python_written(void)
{
	static const struct {
		int block, snappy, min_blocks;
	} cases[] = { { 100, 0, 20 }, { 512, 1, 10 }, { 262144, 0, 1 },
		      { 1, 1, 300 } };
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[64], args[1024], what[64];
		const char *prefix;

		snprintf(name, sizeof(name), "py%zu", i);
		prefix = tap_tmp(name);
		snprintf(args, sizeof(args), "write '%s' %d %d >/dev/null",
			 prefix, cases[i].block, cases[i].snappy);
		is_int(oracle(args, dump_buf, sizeof(dump_buf)), 0,
		       "python writes bundle %zu", i);
		snprintf(what, sizeof(what), "python bundle (block %d%s)",
			 cases[i].block, cases[i].snappy ? ", snappy" : "");
		agree(prefix, what, cases[i].min_blocks);
	}
}

/* Bundles we write ------------------------------------------------------ */

#define N_MANY 300

struct set {
	int n;
	const char *keys[N_MANY + 16];
	struct tfk_tensor t[N_MANY + 16];
	const struct tfk_tensor *tp[N_MANY + 16];
	char names[N_MANY][64];
};

static void add(struct set *s, const char *key, enum tfk_dtype dt, int rank,
		const int64_t *shape, const void *data)
{
	struct tfk_tensor *t = &s->t[s->n];
	struct tfk_err err;

	if (tfk_tensor_init(t, dt, rank, shape, &err))
		abort();
	if (dt != TFK_DT_STRING && t->nbytes)
		memcpy(t->data, data, t->nbytes);
	s->keys[s->n] = key;
	s->tp[s->n] = t;
	s->n++;
}

static void make_set(struct set *s)
{
	static const float kernel[6] = { 0.5f, -1.25f, 3.0f, 1e-3f, -0.0f, 7.5f };
	static const double pi = 3.141592653589793;
	static const int32_t i32[4] = { 1, -2, 2147483647, -2147483647 - 1 };
	static const uint8_t u8[4] = { 0, 1, 254, 255 };
	static const int16_t i16[2] = { -300, 300 };
	static const int8_t i8[3] = { -128, 0, 127 };
	static const int64_t step = 123456789012ll;
	static const uint8_t flags[3] = { 1, 0, 1 };
	static const uint16_t half[2] = { 0x3e00, 0xc000 };
	int64_t sh23[2] = { 2, 3 }, sh4[1] = { 4 }, sh22[2] = { 2, 2 },
		sh2[1] = { 2 }, sh3[1] = { 3 }, sh04[2] = { 0, 4 },
		sh1[1] = { 1 }, sh0[1] = { 0 };
	struct tfk_err err;
	int i;

	memset(s, 0, sizeof(*s));
	/* deliberately unsorted */
	add(s, "zeta/kernel", TFK_DT_FLOAT, 2, sh23, kernel);
	add(s, "dense/bias", TFK_DT_DOUBLE, 0, NULL, &pi);
	add(s, "ints32", TFK_DT_INT32, 1, sh4, i32);
	add(s, "bytes_u8", TFK_DT_UINT8, 2, sh22, u8);
	add(s, "i16", TFK_DT_INT16, 1, sh2, i16);
	add(s, "i8", TFK_DT_INT8, 1, sh3, i8);
	add(s, "step", TFK_DT_INT64, 0, NULL, &step);
	add(s, "flags", TFK_DT_BOOL, 1, sh3, flags);
	add(s, "half", TFK_DT_HALF, 1, sh2, half);
	add(s, "empty", TFK_DT_FLOAT, 2, sh04, NULL);
	add(s, "vocab", TFK_DT_STRING, 1, sh3, NULL);
	tfk_tensor_set_str(&s->t[s->n - 1], 0, "hello", 5, &err);
	tfk_tensor_set_str(&s->t[s->n - 1], 2, "w\0rld", 5, &err);
	add(s, "_CHECKPOINTABLE_OBJECT_GRAPH", TFK_DT_STRING, 0, NULL, NULL);
	tfk_tensor_set_str(&s->t[s->n - 1], 0, "\x0a\x05graph", 7, &err);
	add(s, "no_strings", TFK_DT_STRING, 1, sh0, NULL);
	for (i = N_MANY - 1; i >= 0; i--) {
		int32_t v = i * 7 - 1000;

		snprintf(s->names[i], sizeof(s->names[i]),
			 "model/layer_with_a_long_name_%03d/kernel", i);
		add(s, s->names[i], TFK_DT_INT32, 1, sh1, &v);
	}
}

static void free_set(struct set *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		tfk_tensor_release(&s->t[i]);
}

/* Our expected line per entry, sorted by key bytes (the oracle's order). */
static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void expected_lines(const struct set *s, char *out)
{
	const char *sorted[N_MANY + 16];
	char *o = out;
	int i, j, k;

	memcpy(sorted, s->keys, sizeof(sorted[0]) * (size_t)s->n);
	qsort(sorted, (size_t)s->n, sizeof(sorted[0]), cmp_keys);
	for (k = 0; k < s->n; k++) {
		const struct tfk_tensor *t = NULL;

		for (i = 0; i < s->n; i++)
			if (s->keys[i] == sorted[k])
				t = &s->t[i];
		hex(&o, sorted[k], strlen(sorted[k]));
		o += sprintf(o, " dtype=%d shape=", (int)t->dtype);
		for (j = 0; j < t->rank; j++)
			o += sprintf(o, "%s%lld", j ? "," : "",
				     (long long)t->shape[j]);
		o += sprintf(o, " crc=ok ");
		if (t->dtype == TFK_DT_STRING) {
			o += sprintf(o, "str:");
			for (j = 0; j < tfk_tensor_numel(t); j++) {
				struct tfk_str e = tfk_tensor_str(t, j);

				if (j)
					*o++ = ',';
				hex(&o, e.ptr, e.len);
			}
		} else {
			hex(&o, t->data, t->nbytes);
		}
		*o++ = '\n';
	}
	*o = 0;
}

static char expect_buf[1 << 20];

static void we_write(void)
{
	struct set *s = calloc(1, sizeof(*s));
	struct tfk_err err;
	struct tfk_bundle *b;
	const char *prefix = tap_tmp("ours");
	char args[1024], header[256];
	int blocks, rc, i;

	make_set(s);
	rc = tfk_bundle_write(prefix, s->n, s->keys, s->tp, &err);
	is_int(rc, 0, "write %d tensors %s", s->n, rc ? err.msg : "");
	snprintf(args, sizeof(args), "dump '%s'", prefix);
	is_int(oracle(args, dump_buf, sizeof(dump_buf)), 0,
	       "oracle accepts our bundle (table structure, every crc)");
	oracle_entries(dump_buf, &blocks, header, sizeof(header));
	is_str(header, "header shards=1 endian=0 producer=1 min_consumer=0"
	       " bad=[]", "oracle: header as TF writes it");
	ok(blocks >= 3, "oracle: %d data blocks of ~4 KiB", blocks);
	expected_lines(s, expect_buf);
	is_str(dump_buf, expect_buf, "oracle: every key, dtype, shape and"
	       " byte as given");

	rc = tfk_bundle_open(&b, prefix, &err);
	is_int(rc, 0, "we read our own bundle");
	if (!rc) {
		int same = 1;

		is_int(tfk_bundle_n(b), s->n, "all entries listed");
		for (i = 0; i < s->n; i++) {
			struct tfk_tensor t;

			if (tfk_bundle_read(b, s->keys[i], &t, &err)) {
				same = 0;
				tap_diag("%s: %s", s->keys[i], err.msg);
				continue;
			}
			if (!tfk_tensor_equal(&t, &s->t[i])) {
				same = 0;
				tap_diag("%s differs", s->keys[i]);
			}
			tfk_tensor_release(&t);
		}
		ok(same, "round trip: every tensor equal");
		tfk_bundle_close(b);
	}

	/* bad input */
	{
		const char *keys[2] = { "a", "a" };
		const struct tfk_tensor *tp[2] = { &s->t[0], &s->t[1] };
		const char *p2 = tap_tmp("bad");

		rc = tfk_bundle_write(p2, 2, keys, tp, &err);
		is_int(rc, TFK_EINVAL, "duplicate key refused");
		ok(strstr(err.msg, "duplicate tensor 'a'") != NULL, "message:"
		   " %s", err.msg);
		keys[1] = "";
		rc = tfk_bundle_write(p2, 2, keys, tp, &err);
		is_int(rc, TFK_EINVAL, "empty key refused (it is the header's)");
		ok(access(tap_tmp("bad.index"), F_OK) != 0 &&
		   access(tap_tmp("bad.data-00000-of-00001"), F_OK) != 0,
		   "refused writes leave no files");
		rc = tfk_bundle_write(tap_tmp("nodir/x/model"), 1, keys, tp,
				      &err);
		is_int(rc, TFK_EIO, "missing directory: EIO");
		ok(strstr(err.msg, "nodir/x/model.data-00000-of-00001") != NULL,
		   "names the file: %s", err.msg);
	}
	/* an empty bundle is valid: only the header */
	rc = tfk_bundle_write(tap_tmp("none"), 0, NULL, NULL, &err);
	is_int(rc, 0, "empty bundle written");
	snprintf(args, sizeof(args), "dump '%s'", tap_tmp("none"));
	is_int(oracle(args, dump_buf, sizeof(dump_buf)), 0,
	       "oracle accepts the empty bundle");
	rc = tfk_bundle_open(&b, tap_tmp("none"), &err);
	ok(!rc && tfk_bundle_n(b) == 0, "empty bundle: 0 entries");
	if (!rc)
		tfk_bundle_close(b);
	free_set(s);
	free(s);
}

/* Corruption --------------------------------------------------------------- */

static void copy_file(const char *from, const char *to)
{
	size_t n;
	void *p = tap_read_file(from, &n);

	if (!p || tap_write_file(to, p, n))
		abort();
	free(p);
}

/* A fresh copy of a small bundle at tap_tmp(name) with its paths. */
static void fresh(const char *src, const char *name, char *index,
		  char *data)
{
	char a[1024];

	sprintf(index, "%s.index", tap_tmp(name));
	sprintf(data, "%s.data-00000-of-00001", tap_tmp(name));
	sprintf(a, "%s.index", src);
	copy_file(a, index);
	sprintf(a, "%s.data-00000-of-00001", src);
	copy_file(a, data);
}

static int open_err(const char *name, struct tfk_err *err)
{
	struct tfk_bundle *b;
	int rc = tfk_bundle_open(&b, tap_tmp(name), err);

	if (!rc)
		tfk_bundle_close(b);
	return rc;
}

static void flip(const char *path, long at, uint8_t x)
{
	size_t n;
	uint8_t *p = tap_read_file(path, &n);

	if (!p)
		abort();
	p[at < 0 ? (long)n + at : at] ^= x;
	tap_write_file(path, p, n);
	free(p);
}

static void cut(const char *path, size_t keep)
{
	if (truncate(path, (off_t)keep))
		abort();
}

static size_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (size_t)st.st_size;
}

static void corruption(void)
{
	const char *keys[3] = { "w", "names", "b" };
	struct tfk_tensor w, names, bias;
	const struct tfk_tensor *tp[3] = { &w, &names, &bias };
	int64_t sh[1] = { 4 }, sh2[1] = { 2 };
	struct tfk_err err;
	struct tfk_bundle *b;
	struct tfk_tensor t;
	char src[512], idx[1024], dat[1024];
	int rc;

	tfk_tensor_init(&w, TFK_DT_FLOAT, 1, sh, &err);
	tfk_tensor_init(&bias, TFK_DT_FLOAT, 1, sh, &err);
	((float *)w.data)[2] = 1.5f;
	tfk_tensor_init(&names, TFK_DT_STRING, 1, sh2, &err);
	tfk_tensor_set_str(&names, 0, "abc", 3, &err);
	tfk_tensor_set_str(&names, 1, "de", 2, &err);
	snprintf(src, sizeof(src), "%s", tap_tmp("src"));
	rc = tfk_bundle_write(src, 3, keys, tp, &err);
	is_int(rc, 0, "corruption source written");

	/* data layout (key order): b [0,16), names [16, 16+2+4+5), w */
	fresh(src, "c1", idx, dat);
	cut(idx, file_size(idx) - 10);
	rc = open_err("c1", &err);
	is_int(rc, TFK_ECORRUPT, "truncated index (footer cut): corrupt");
	ok(strstr(err.msg, "c1.index: bad footer magic") != NULL, "message:"
	   " %s", err.msg);

	fresh(src, "c2", idx, dat);
	cut(idx, 20);
	rc = open_err("c2", &err);
	is_int(rc, TFK_ECORRUPT, "index cut to 20 bytes: corrupt");
	ok(strstr(err.msg, "c2.index: 20 bytes, too short") != NULL,
	   "message: %s", err.msg);

	fresh(src, "c3", idx, dat);
	flip(idx, -1, 0x01);
	rc = open_err("c3", &err);
	is_int(rc, TFK_ECORRUPT, "bad footer magic");
	ok(strstr(err.msg, "c3.index: bad footer magic") != NULL,
	   "message: %s", err.msg);

	fresh(src, "c4", idx, dat);
	flip(idx, 3, 0x20);	/* inside the header entry's key lengths */
	rc = open_err("c4", &err);
	is_int(rc, TFK_ECORRUPT, "flipped byte in data block: corrupt");
	ok(strstr(err.msg, "c4.index: block at 0: crc mismatch") != NULL,
	   "message: %s", err.msg);

	fresh(src, "c5", idx, dat);
	flip(idx, -49, 0x80);	/* the index block's crc, before the footer */
	rc = open_err("c5", &err);
	is_int(rc, TFK_ECORRUPT, "index block crc flipped: corrupt");
	ok(strstr(err.msg, "c5.index: block at") &&
	   strstr(err.msg, "crc mismatch"), "message: %s", err.msg);

	fresh(src, "c6", idx, dat);
	flip(dat, 40, 0x04);	/* inside w */
	rc = tfk_bundle_open(&b, tap_tmp("c6"), &err);
	is_int(rc, 0, "flipped data byte: open still works");
	if (!rc) {
		rc = tfk_bundle_read(b, "w", &t, &err);
		is_int(rc, TFK_ECORRUPT, "flipped data byte: read w fails");
		ok(strstr(err.msg, "c6.data-00000-of-00001: tensor 'w' at byte"
			  " 27: data crc mismatch") != NULL, "message: %s",
		   err.msg);
		rc = tfk_bundle_read(b, "b", &t, &err);
		is_int(rc, 0, "other tensors still read");
		if (!rc)
			tfk_tensor_release(&t);
		tfk_bundle_close(b);
	}

	fresh(src, "c7", idx, dat);
	flip(dat, 17, 0x01);	/* the string length checksum of names */
	rc = tfk_bundle_open(&b, tap_tmp("c7"), &err);
	if (!rc) {
		rc = tfk_bundle_read(b, "names", &t, &err);
		is_int(rc, TFK_ECORRUPT, "string length checksum flipped");
		ok(strstr(err.msg, "c7.data-00000-of-00001: tensor 'names'") &&
		   strstr(err.msg, "length checksum mismatch"), "message: %s",
		   err.msg);
		tfk_bundle_close(b);
	} else {
		ok(0, "c7 opens");
		ok(0, "c7 message");
	}

	fresh(src, "c7b", idx, dat);
	flip(dat, 24, 0x01);	/* a string byte of names */
	rc = tfk_bundle_open(&b, tap_tmp("c7b"), &err);
	if (!rc) {
		rc = tfk_bundle_read(b, "names", &t, &err);
		is_int(rc, TFK_ECORRUPT, "string byte flipped: data crc");
		ok(strstr(err.msg, "data crc mismatch") != NULL, "message: %s",
		   err.msg);
		tfk_bundle_close(b);
	} else {
		ok(0, "c7b opens");
		ok(0, "c7b message");
	}

	fresh(src, "c8", idx, dat);
	unlink(dat);
	rc = open_err("c8", &err);
	is_int(rc, TFK_EIO, "missing data file");
	ok(strstr(err.msg, "c8.data-00000-of-00001: No such file") != NULL,
	   "message: %s", err.msg);

	fresh(src, "c9", idx, dat);
	cut(dat, 30);
	rc = open_err("c9", &err);
	is_int(rc, TFK_ECORRUPT, "short data file (offset past end)");
	ok(strstr(err.msg, "c9.index: tensor 'w': bytes 27..43 run past the"
		  " end of") && strstr(err.msg, "c9.data-00000-of-00001 (30"
				       " bytes)"), "message: %s", err.msg);

	rc = open_err("nothing", &err);
	is_int(rc, TFK_EIO, "missing index");
	ok(strstr(err.msg, "nothing.index: No such file") != NULL,
	   "message: %s", err.msg);

	/* every single-byte flip of a block is refused (and never
	 * crashes: the ASan run) */
	{
		size_t n, i;
		uint8_t *orig;
		int refused = 0, total = 0;

		fresh(src, "cf", idx, dat);
		orig = tap_read_file(idx, &n);
		/* all bytes before the footer are in a crc-checked block */
		for (i = 0; orig && i + 48 < n; i++) {
			orig[i] ^= 0x10;
			tap_write_file(idx, orig, n);
			orig[i] ^= 0x10;
			rc = open_err("cf", &err);
			total++;
			if (rc == TFK_ECORRUPT && strstr(err.msg, "cf.index"))
				refused++;
			else
				tap_diag("flip at %zu: %d %s", i, rc, err.msg);
		}
		ok(total > 100 && refused == total, "every byte flip in the"
		   " index's blocks refused, naming it (%d of %d)", refused,
		   total);
		free(orig);
	}
	tfk_tensor_release(&w);
	tfk_tensor_release(&bias);
	tfk_tensor_release(&names);
}

/* Atomic writes and failed allocations ------------------------------------ */

static int count_files(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strstr(e->d_name, prefix))
			n++;
	closedir(d);
	return n;
}

static void alloc_failures(void)
{
	struct set *s = calloc(1, sizeof(*s));
	struct tfk_err err;
	struct tfk_bundle *b;
	struct tfk_tensor t;
	const char *prefix = tap_tmp("atomic/model");
	char dir[512];
	long k;
	int rc = -1, bad = 0, old_ok = 1;
	float old;

	make_set(s);
	snprintf(dir, sizeof(dir), "%s", prefix);
	*strrchr(dir, '/') = 0;
	mkdir(dir, 0755);
	/* an earlier bundle under the same prefix: 2 tensors */
	rc = tfk_bundle_write(prefix, 2, s->keys, s->tp, &err);
	is_int(rc, 0, "old bundle written");
	for (k = 0; k < 100000; k++) {
		tfk_alloc_fail_after(k);
		rc = tfk_bundle_write(prefix, s->n, s->keys, s->tp, &err);
		tfk_alloc_fail_after(-1);
		if (!rc)
			break;
		if (rc != TFK_ENOMEM)
			bad++;
		/* only the two final files: no temporaries left */
		if (count_files(dir, "model") != 2)
			bad++;
		if (tfk_bundle_open(&b, prefix, &err)) {
			old_ok = 0;
		} else {
			if (tfk_bundle_n(b) > 2 &&
			    tfk_bundle_n(b) != s->n)
				old_ok = 0;
			tfk_bundle_close(b);
		}
	}
	is_int(rc, 0, "write succeeds after %ld failing allocations", k);
	is_int(bad, 0, "each failed write: ENOMEM and no temporary files");
	ok(old_ok, "each failed write leaves a readable bundle (the old one,"
	   " or the new one when only the index rename was left)");
	is_int(count_files(dir, "model"), 2, "exactly two files at the end");

	/* no earlier bundle: a failed write leaves no file at all */
	bad = 0;
	mkdir(tap_tmp("fresh"), 0755);
	for (k = 0; k < 100000; k++) {
		tfk_alloc_fail_after(k);
		rc = tfk_bundle_write(tap_tmp("fresh/m"), s->n, s->keys, s->tp,
				      &err);
		tfk_alloc_fail_after(-1);
		if (!rc)
			break;
		if (rc != TFK_ENOMEM || count_files(tap_tmp("fresh"), "m") != 0)
			bad++;
	}
	is_int(rc, 0, "fresh write succeeds after %ld failing allocations", k);
	is_int(bad, 0, "each failed fresh write: ENOMEM and no file at all");

	/* open and read under failing allocations */
	bad = 0;
	for (k = 0; k < 100000; k++) {
		tfk_alloc_fail_after(k);
		rc = tfk_bundle_open(&b, prefix, &err);
		if (!rc) {
			rc = tfk_bundle_read(b, "vocab", &t, &err);
			if (!rc)
				tfk_tensor_release(&t);
			tfk_bundle_close(b);
		}
		tfk_alloc_fail_after(-1);
		if (!rc)
			break;
		if (rc != TFK_ENOMEM && !bad++)
			tap_diag("allocation %ld: %s", k, err.msg);
	}
	is_int(rc, 0, "open + read succeed after %ld failing allocations", k);
	is_int(bad, 0, "each failure in open/read is ENOMEM");
	rc = tfk_bundle_open(&b, prefix, &err);
	old = 0;
	if (!rc) {
		rc = tfk_bundle_read(b, "zeta/kernel", &t, &err);
		if (!rc) {
			old = ((float *)t.data)[5];
			tfk_tensor_release(&t);
		}
		tfk_bundle_close(b);
	}
	ok(old == 7.5f, "final bundle holds the new values");
	free_set(s);
	free(s);
}

int main(void)
{
	fixtures();
	python_written();
	we_write();
	corruption();
	alloc_failures();
	tap_rm_tmpdir();
	return tap_done();
}
