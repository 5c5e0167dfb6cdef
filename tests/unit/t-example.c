/*
 * t-example.c - tf.Example decoding and encoding.
 *
 * Hand-built wire bytes for every protobuf rule the decoder claims
 * (packed and unpacked lists, unknown fields of each wire type, a
 * Feature with no kind, duplicate keys, Features twice, oneof given
 * twice, merged map values, missing key or value) and every corruption
 * it must refuse; exact encoder bytes; failed allocations; and the
 * independent oracle tests/py/tfexample.py (python3-protobuf):
 * protobuf reads what we write, and we read what it (and a raw writer
 * of odd encodings) writes, value by value, on TensorFlow-written
 * fixtures too.
 */
#include "example/example.h"
#include "io/record.h"
#include "util/alloc.h"
#include "oracle.h"
#include "tap.h"
#include "wire.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Wire bytes from pieces (more in wire.h) -------------------------- */

static struct blob F32(float f)
{
	struct blob b = blob_new(4);
	uint32_t u;

	memcpy(&u, &f, 4);
	b.p[0] = (uint8_t)u;
	b.p[1] = (uint8_t)(u >> 8);
	b.p[2] = (uint8_t)(u >> 16);
	b.p[3] = (uint8_t)(u >> 24);
	return b;
}

/* Map entry of Features: key 1, value 2 (a Feature body). */
static struct blob ENTRY(const char *name, struct blob feature)
{
	return L(1, C(L(1, S(name)), L(2, feature)));
}

/* An Example of the given map entries (one Features field). */
static struct blob EX(struct blob entries)
{
	return L(1, entries);
}

/* Showing decoded examples ------------------------------------------- */

static char shown[65536];

static void hexs(char **o, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		*o += sprintf(*o, "%02x", p[i]);
}

static void show_values(char **o, const struct tfk_feat *f, int bits)
{
	size_t i, it = 0, len;
	const uint8_t *p;
	long n;

	*o += sprintf(*o, "%s:", tfk_feat_kind_name(f->kind));
	if (f->kind == TFK_FEAT_FLOAT) {
		float *v = malloc((f->n + 1) * sizeof(*v));

		n = tfk_feat_floats(f, v, f->n);
		for (i = 0; i < (size_t)n; i++) {
			uint32_t u;

			memcpy(&u, &v[i], 4);
			if (bits && isnan(v[i]))
				*o += sprintf(*o, "%snan", i ? "," : "");
			else if (bits)
				*o += sprintf(*o, "%s%08x", i ? "," : "", u);
			else
				*o += sprintf(*o, "%s%.9g", i ? "," : "",
					      (double)v[i]);
		}
		free(v);
	} else if (f->kind == TFK_FEAT_INT64) {
		int64_t *v = malloc((f->n + 1) * sizeof(*v));

		n = tfk_feat_int64s(f, v, f->n);
		for (i = 0; i < (size_t)n; i++)
			*o += sprintf(*o, "%s%lld", i ? "," : "",
				      (long long)v[i]);
		free(v);
	} else if (f->kind == TFK_FEAT_BYTES) {
		for (i = 0; tfk_feat_bytes_next(f, &it, &p, &len); i++) {
			if (i)
				*(*o)++ = ',';
			hexs(o, p, len);
		}
	}
}

/* "name=kind:v,v name2=..." in wire order, floats as %.9g, bytes hex. */
static const char *show(const struct tfk_example *ex)
{
	char *o = shown;
	size_t i;

	*o = '\0';
	for (i = 0; i < ex->n_feat; i++) {
		const struct tfk_feat *f = &ex->feat[i];

		o += sprintf(o, "%s%.*s=", i ? " " : "", (int)f->name_len,
			     f->name);
		show_values(&o, f, 0);
	}
	return shown;
}

static int by_name(const void *a, const void *b)
{
	const struct tfk_feat *x = *(const struct tfk_feat *const *)a;
	const struct tfk_feat *y = *(const struct tfk_feat *const *)b;
	size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
	int c = n ? memcmp(x->name, y->name, n) : 0;

	if (c)
		return c;
	return x->name_len < y->name_len ? -1 : x->name_len > y->name_len;
}

/* tfexample.py's canonical line: sorted by name, hex names, float bits
 * ("nan" for NaNs). */
static const char *canon(const struct tfk_example *ex)
{
	const struct tfk_feat **v = malloc((ex->n_feat + 1) * sizeof(*v));
	char *o = shown;
	size_t i;

	*o = '\0';
	for (i = 0; i < ex->n_feat; i++)
		v[i] = &ex->feat[i];
	qsort(v, ex->n_feat, sizeof(*v), by_name);
	for (i = 0; i < ex->n_feat; i++) {
		if (i)
			*o++ = ' ';
		hexs(&o, (const uint8_t *)v[i]->name, v[i]->name_len);
		*o++ = '=';
		show_values(&o, v[i], 1);
	}
	*o = '\0';
	free(v);
	return shown;
}

static struct tfk_example ex;
static struct tfk_err err;

static int same_name(const struct tfk_feat *f, const char *name)
{
	return f->name_len == strlen(name) &&
	       !memcmp(f->name, name, f->name_len);
}

static int parse(struct blob b)
{
	return tfk_example_parse(&ex, b.p, b.n, &err);
}

/* Parse b, expect success and show() == want. */
static void decodes(const char *name, struct blob b, const char *want)
{
	int rc = parse(b);

	if (rc) {
		ok(0, "%s: parse failed: %s", name, err.msg);
		return;
	}
	is_str(show(&ex), want, "%s", name);
}

/* Parse b, expect TFK_ECORRUPT with exactly msg. */
static void refuses(const char *name, struct blob b, const char *msg)
{
	int rc = parse(b);

	ok(rc == TFK_ECORRUPT && ex.n_feat == 0, "%s: refused (rc %d)", name,
	   rc);
	if (rc)
		is_str(err.msg, msg, "%s: message", name);
}

/* Decoding rules ------------------------------------------------------- */

static void basics(void)
{
	/* Written by python3-protobuf (the serializer TensorFlow's python
	 * uses) for tf.train.Example with img=[b"\xff"], label=[3],
	 * x=[0.5]. */
	struct blob tf = H("0a2d 0a0c0a03696d6712050a030a01ff"
			   "0a0e0a056c6162656c12051a030a0103"
			   "0a0d0a0178120812060a040000003f");

	decodes("TF-written example", tf, "img=bytes:ff label=int64:3 x=float:0.5");
	ok(ex.feat[2].packed == ex.feat[2].body + 4, "packed float run found");
	decodes("empty buffer: no features", H(""), "");
	decodes("empty Features", H("0a00"), "");
	decodes("packed floats and int64s",
		EX(C(ENTRY("f", L(2, L(1, C(F32(1.5f), F32(-2), F32(1e-45f))))),
		     ENTRY("i", L(3, L(1, C(V(0), V(300), V((uint64_t)-1),
					     V((uint64_t)INT64_MIN))))))),
		"f=float:1.5,-2,1.40129846e-45 i=int64:0,300,-1,-9223372036854775808");
	ok(ex.feat[0].packed != NULL && ex.feat[0].n == 3,
	   "packed floats: fast path pointer, n 3");
	decodes("unpacked floats and int64s",
		EX(C(ENTRY("f", L(2, C(T(1, 5), F32(1), T(1, 5), F32(2)))),
		     ENTRY("i", L(3, C(T(1, 0), V(7), T(1, 0), V((uint64_t)-7)))))),
		"f=float:1,2 i=int64:7,-7");
	decodes("packed and unpacked mixed, split over fields",
		EX(C(ENTRY("f", L(2, C(L(1, C(F32(1), F32(2))), T(1, 5),
					  F32(3), L(1, F32(4))))),
		     ENTRY("i", L(3, C(T(1, 0), V(1), L(1, C(V(2), V(3)))))))),
		"f=float:1,2,3,4 i=int64:1,2,3");
	is_int(ex.feat[0].n, 4, "mixed floats: n counts every value");
	ok(ex.feat[0].packed == NULL, "several runs: no packed pointer");
	decodes("bytes values, empty ones included",
		EX(ENTRY("b", L(1, C(L(1, S("ab")), L(1, S("")), L(1, H("00ff")))))),
		"b=bytes:6162,,00ff");
	decodes("empty lists keep their kind",
		EX(C(ENTRY("b", L(1, H(""))), ENTRY("f", L(2, H(""))),
		     ENTRY("i", L(3, L(1, H("")))))),
		"b=bytes: f=float: i=int64:");
	decodes("Feature with no kind", EX(ENTRY("e", H(""))), "e=none:");
	is_int(ex.feat[0].n, 0, "no kind: n 0");
	decodes("10-byte varint with high bits set: extra bits dropped",
		EX(ENTRY("i", L(3, L(1, H("ffffffffffffffffff7f"))))),
		"i=int64:-1");
}

static void unknown_fields(void)
{
	/* one unknown field of each wire type, numbered past the known */
	struct blob u = C(C(T(5, 0), V(300)), C(T(6, 1), H("0102030405060708")),
			  L(7, S("xyz")), C(T(536870911, 5), H("01020304")));

	decodes("unknown fields at every level",
		C(u, L(1, C(u, L(1, C(u, L(1, S("f")), u,
			L(2, C(u, L(2, C(u, L(1, F32(0.25f)), u)), u)))), u)), u),
		"f=float:0.25");
	decodes("unknown fields inside lists of each kind",
		EX(C(ENTRY("b", L(1, C(u, L(1, S("v")), u))),
		     ENTRY("i", L(3, C(u, C(T(1, 0), V(5)), u))),
		     ENTRY("f", L(2, C(u, L(1, F32(2))))))),
		"b=bytes:76 i=int64:5 f=float:2");
	ok(ex.feat[2].packed != NULL, "unknown field before the run: still packed");
	refuses("group start", EX(C(ENTRY("a", H("")), T(9, 3))),
		"byte 9: field 9: groups (wire type 3) are not supported");
	refuses("group end", C(T(9, 4), EX(H(""))),
		"byte 0: field 9: groups (wire type 4) are not supported");
	refuses("invalid wire type 6", T(2, 6),
		"byte 0: field 2: invalid wire type 6");
	refuses("invalid wire type 7 in a list",
		EX(ENTRY("i", L(3, C(T(2, 7), H("00"))))),
		"byte 11: field 2: invalid wire type 7");
	refuses("field number 0", H("0000"), "byte 0: invalid field number 0");
	refuses("field number past 2^29-1", C(V((uint64_t)1 << 32 | 0), V(1)),
		"byte 0: invalid field number 536870912");
	refuses("unknown fixed64 cut short", C(T(6, 1), H("01020304")),
		"byte 0: fixed64 field 6 past end of message");
	refuses("unknown fixed32 cut short", C(T(6, 5), H("0102")),
		"byte 0: fixed32 field 6 past end of message");
}

static void merge_rules(void)
{
	struct blob a1 = ENTRY("a", L(3, L(1, V(1))));
	struct blob b = ENTRY("b", L(1, L(1, S("x"))));
	struct blob a2 = ENTRY("a", L(2, L(1, F32(2))));

	decodes("duplicate key: last wins, in the first one's place",
		EX(C(a1, b, a2)), "a=float:2 b=bytes:78");
	is_int(ex.n_feat, 2, "duplicate key: two features");
	decodes("Features given twice: maps merge",
		C(EX(C(a1, b)), EX(a2)), "a=float:2 b=bytes:78");
	decodes("Features twice, second adds a name",
		C(EX(a1), EX(b)), "a=int64:1 b=bytes:78");
	decodes("map entry without key: the empty name",
		EX(L(1, L(2, L(3, L(1, V(4)))))), "=int64:4");
	is_int(ex.feat[0].name_len, 0, "no key: name_len 0");
	ok(tfk_example_find(&ex, "") == &ex.feat[0], "find the empty name");
	decodes("map entry without value: kind none",
		EX(L(1, L(1, S("k")))), "k=none:");
	decodes("empty map entry", EX(L(1, H(""))), "=none:");
	decodes("key given twice in one entry: the last",
		EX(L(1, C(L(1, S("x")), L(1, S("y")), L(2, L(3, L(1, V(1))))))),
		"y=int64:1");
	decodes("value before key", EX(L(1, C(L(2, L(3, L(1, V(2)))), L(1, S("k"))))),
		"k=int64:2");
	decodes("oneof given twice: the last kind wins",
		EX(ENTRY("o", C(L(1, L(1, S("gone"))), L(3, L(1, V(9)))))),
		"o=int64:9");
	decodes("oneof: same kind twice merges the lists",
		EX(ENTRY("o", C(L(3, L(1, C(V(1), V(2)))), L(3, L(1, V(3)))))),
		"o=int64:1,2,3");
	decodes("oneof: A, B, A keeps only the last A",
		EX(ENTRY("o", C(L(2, L(1, F32(1))), L(3, L(1, V(5))),
				L(2, L(1, F32(2))), L(2, L(1, F32(3)))))),
		"o=float:2,3");
	is_int(ex.feat[0].n, 2, "oneof A,B,A: n counts the last run only");
	decodes("bytes split over two BytesLists",
		EX(ENTRY("s", C(L(1, L(1, S("a"))), L(1, C(L(1, S("b")), L(1, S("c"))))))),
		"s=bytes:61,62,63");
	decodes("map value given twice: the Features merge",
		EX(L(1, C(L(1, S("m")), L(2, L(2, L(1, F32(1)))), L(2, L(2, L(1, F32(2))))))),
		"m=float:1,2");
	decodes("map value twice, second switches kind",
		EX(L(1, C(L(1, S("m")), L(2, L(2, L(1, F32(1)))), L(2, L(1, L(1, S("z"))))))),
		"m=bytes:7a");
	decodes("map value twice, second empty keeps the first",
		EX(L(1, C(L(1, S("m")), L(2, L(3, L(1, V(8)))), L(2, H(""))))),
		"m=int64:8");
	decodes("merged value beside a plain one",
		EX(C(L(1, C(L(1, S("m")), L(2, L(3, L(1, V(1)))), L(2, L(3, L(1, V(2)))))),
		     ENTRY("n", L(3, L(1, V(3)))))),
		"m=int64:1,2 n=int64:3");
}

/* Records that are not Examples say what they are. */
static void not_examples(void)
{
	struct blob ev0 = H("09 000000c0e3a6d841 1a0d 627261696e2e4576656e743a32");
	struct blob ev1 = H("09 000000c0e3a6d841 1005 2a05 0a03 0a0178");
	const char *v;
	size_t vn;

	refuses("a TensorBoard event file's first record", ev0,
		"byte 0: a tensorflow.Event (TensorBoard event file, "
		"file_version \"brain.Event:2\"), not a tf.Example");
	refuses("an event with a step and a summary", ev1,
		"byte 0: a tensorflow.Event (TensorBoard event file), not a "
		"tf.Example");
	refuses("a line of text", H("68656c6c6f"),
		"byte 2: field 13: groups (wire type 4) are not supported "
		"(the payload is text, not a tf.Example)");
	is_int(tfk_payload_guess(ev0.p, ev0.n, &v, &vn), TFK_PAYLOAD_EVENT,
	       "guess: event");
	ok(vn == 13 && !memcmp(v, "brain.Event:2", 13), "guess: its version");
	is_int(tfk_payload_guess(ev1.p, ev1.n, &v, &vn), TFK_PAYLOAD_EVENT,
	       "guess: event without a version");
	ok(v == NULL && vn == 0, "  and no version");
	is_int(tfk_payload_guess(H("0a00 1200").p, 4, NULL, NULL),
	       TFK_PAYLOAD_SEQEX, "guess: SequenceExample");
	is_int(tfk_payload_guess(H("1200").p, 2, NULL, NULL),
	       TFK_PAYLOAD_SEQEX, "guess: SequenceExample without context");
	is_int(tfk_payload_guess(H("0a00").p, 2, NULL, NULL),
	       TFK_PAYLOAD_OTHER, "guess: an Example is other");
	is_int(tfk_payload_guess(H("0a7f").p, 2, NULL, NULL),
	       TFK_PAYLOAD_OTHER, "guess: DEL is not text");
	is_int(tfk_payload_guess(H("").p, 0, NULL, NULL), TFK_PAYLOAD_OTHER,
	       "guess: empty payload");
	is_int(tfk_payload_guess(H("09 0000").p, 3, NULL, NULL),
	       TFK_PAYLOAD_OTHER, "guess: a cut-off double is no event");
}

static void corrupt(void)
{
	refuses("truncated tag varint", H("80"), "byte 0: truncated varint");
	refuses("truncated length varint", H("0a80"), "byte 1: truncated varint");
	refuses("truncated value varint", H("2880"), "byte 1: truncated varint");
	refuses("varint of 11 bytes", C(T(5, 0), H("ffffffffffffffffffff01")),
		"byte 1: varint longer than 10 bytes");
	refuses("length past end", H("0a05 0a03"),
		"byte 0: field 1: length 5 past end of message (2 bytes left)");
	refuses("inner length past outer end", H("0a03 0a05 0a00"),
		"byte 2: field 1: length 5 past end of message (1 bytes left)");
	refuses("huge length", C(T(1, 2), V(UINT64_MAX), H("00")),
		"byte 0: field 1: length 18446744073709551615 past end of "
		"message (1 bytes left)");
	refuses("packed floats of 7 bytes",
		EX(ENTRY("f", L(2, L(1, H("00000000000000"))))),
		"byte 11: packed floats: 7 bytes is not a multiple of 4");
	refuses("truncated varint in a packed int64 run",
		EX(ENTRY("i", L(3, L(1, H("0180"))))), "byte 14: truncated varint");
	refuses("11-byte varint in a packed run",
		EX(ENTRY("i", L(3, L(1, H("01ffffffffffffffffffff01"))))),
		"byte 14: varint longer than 10 bytes");
	refuses("unpacked float cut short",
		EX(ENTRY("f", L(2, C(T(1, 5), H("0000"))))),
		"byte 11: fixed32 field 1 past end of message");
	/* wrong wire types for each known field */
	refuses("Example.features as varint", H("0801"),
		"byte 0: Example.features (field 1) has wire type 0, want 2");
	refuses("Features.feature as fixed32", L(1, H("0d00000000")),
		"byte 2: Features.feature (field 1) has wire type 5, want 2");
	refuses("map key as varint", EX(L(1, H("0801"))),
		"byte 4: map key (field 1) has wire type 0, want 2");
	refuses("map value as fixed64", EX(L(1, H("110000000000000000"))),
		"byte 4: map value (field 2) has wire type 1, want 2");
	refuses("float_list as varint", EX(ENTRY("f", H("1001"))),
		"byte 9: Feature.float_list (field 2) has wire type 0, want 2");
	refuses("BytesList.value as varint", EX(ENTRY("b", L(1, H("0801")))),
		"byte 11: BytesList.value (field 1) has wire type 0, want 2");
	refuses("FloatList.value as varint", EX(ENTRY("f", L(2, H("0801")))),
		"byte 11: FloatList.value (field 1) has wire type 0, want 5 or 2");
	refuses("Int64List.value as fixed32", EX(ENTRY("i", L(3, H("0d00000000")))),
		"byte 11: Int64List.value (field 1) has wire type 5, want 0 or 2");
	refuses("corruption in an overridden kind still counts",
		EX(ENTRY("o", C(L(2, L(1, H("000000"))), L(3, L(1, V(1)))))),
		"byte 11: packed floats: 3 bytes is not a multiple of 4");
	refuses("corruption in the second of two merged values",
		EX(L(1, C(L(1, S("m")), L(2, L(3, L(1, V(1)))), L(2, L(3, L(1, H("80"))))))),
		"byte 20: truncated varint");
	/* the decoder recovers: a good record after a bad one */
	decodes("good after bad", EX(ENTRY("k", L(3, L(1, V(1))))), "k=int64:1");
}

static void accessors(void)
{
	float f[4];
	int64_t i[4];
	size_t it = 0, len;
	const uint8_t *p;
	const struct tfk_feat *ff, *fi, *fb, *fn;

	decodes("accessor record",
		EX(C(ENTRY("f", L(2, L(1, C(F32(1), F32(2), F32(3))))),
		     ENTRY("i", L(3, C(T(1, 0), V(1), L(1, C(V(2), V(3)))))),
		     ENTRY("b", L(1, L(1, S("q")))), ENTRY("n", H("")))),
		"f=float:1,2,3 i=int64:1,2,3 b=bytes:71 n=none:");
	ff = tfk_example_find(&ex, "f");
	fi = tfk_example_find(&ex, "i");
	fb = tfk_example_find(&ex, "b");
	fn = tfk_example_find(&ex, "n");
	ok(ff && fi && fb && fn && !tfk_example_find(&ex, "fx") &&
	   !tfk_example_find(&ex, ""), "find by name");
	ok(tfk_example_findn(&ex, "fx", 1) == ff, "findn takes a length");
	f[1] = -9;
	is_int(tfk_feat_floats(ff, f, 1), 3, "floats: count beyond max");
	ok(f[0] == 1 && f[1] == -9, "floats: only max copied");
	is_int(tfk_feat_floats(ff, NULL, 0), 3, "floats: count only");
	i[2] = -9;
	is_int(tfk_feat_int64s(fi, i, 2), 3, "int64s: count beyond max");
	ok(i[0] == 1 && i[1] == 2 && i[2] == -9, "int64s: max across runs");
	is_int(tfk_feat_int64s(ff, i, 4), TFK_EINVAL, "int64s of floats: EINVAL");
	is_int(tfk_feat_floats(fi, f, 4), TFK_EINVAL, "floats of int64s: EINVAL");
	is_int(tfk_feat_floats(fn, f, 4), TFK_EINVAL, "floats of none: EINVAL");
	is_int(tfk_feat_bytes_next(ff, &it, &p, &len), 0, "bytes of floats: none");
	it = 0;
	ok(tfk_feat_bytes_next(fb, &it, &p, &len) == 1 && len == 1 && *p == 'q',
	   "bytes_next: value");
	is_int(tfk_feat_bytes_next(fb, &it, &p, &len), 0, "bytes_next: end");
	is_int(tfk_feat_bytes_next(fb, &it, &p, &len), 0, "bytes_next: stays at end");
	is_str(tfk_feat_kind_name(TFK_FEAT_INT64), "int64", "kind name");
	is_str(tfk_feat_kind_name(42), "?", "kind name of nonsense");
}

/* Wide records use the name index: many names, duplicates among them. */
static void wide(void)
{
	struct blob e = H("");
	char name[32], want[32];
	int k, good = 1;

	for (k = 0; k < 300; k++) {
		snprintf(name, sizeof(name), "n%d", k % 200);
		e = C(e, ENTRY(name, L(3, L(1, V((uint64_t)k)))));
	}
	is_int(parse(EX(e)), 0, "300 entries, 200 names: parses");
	is_int(ex.n_feat, 200, "200 features");
	for (k = 0; k < 200; k++) {
		const struct tfk_feat *f;
		int64_t v = -1;

		snprintf(name, sizeof(name), "n%d", k);
		f = tfk_example_find(&ex, name);
		tfk_feat_int64s(f, &v, 1);
		snprintf(want, sizeof(want), "n%d", k);
		if (!f || f != &ex.feat[k] || v != (k < 100 ? k + 200 : k) ||
		    f->name_len != strlen(want))
			good = 0;
	}
	ok(good, "wide: each name found in first-seen place, last value");
	ok(!tfk_example_find(&ex, "n200"), "wide: absent name");
	decodes("narrow record after a wide one", EX(ENTRY("a", H(""))), "a=none:");
	ok(!tfk_example_find(&ex, "n1"), "narrow: old names gone");
}

/* Encoding ------------------------------------------------------------ */

static void encoder(void)
{
	struct tfk_example_builder b;
	const uint8_t *p;
	size_t n;
	static const float fl[2] = { 0.5f, 1.0f };
	static const int64_t il[3] = { 3, -1, 300 };
	const uint8_t *bv[2] = { (const uint8_t *)"ab", (const uint8_t *)"" };
	size_t bl[2] = { 2, 0 };

	tfk_exb_init(&b);
	is_int(tfk_exb_finish(&b, &p, &n, &err), 0, "empty builder finishes");
	is_mem(p, n, "\x0a\x00", 2, "empty example: 0a 00");
	tfk_exb_reset(&b);
	tfk_exb_add_int64s(&b, "label", il, 1);
	tfk_exb_add_floats(&b, "x", fl, 2);
	tfk_exb_add_bytes1(&b, "img", "\xff", 1);
	tfk_exb_finish(&b, &p, &n, &err);
	/* protobuf's packed encoding, worked out by hand from the layout */
	{
		struct blob want = EX(C(ENTRY("label", L(3, L(1, V(3)))),
					ENTRY("x", L(2, L(1, C(F32(0.5f), F32(1))))),
					ENTRY("img", L(1, L(1, H("ff"))))));

		is_mem(p, n, want.p, want.n, "exact bytes: int64, floats, bytes");
	}
	tfk_exb_reset(&b);
	tfk_exb_add_int64s(&b, "i", il, 3);
	tfk_exb_add_bytes(&b, "b", bv, bl, 2);
	tfk_exb_add_floats(&b, "e", NULL, 0);
	tfk_exb_add_none(&b, "z");
	tfk_exb_finish(&b, &p, &n, &err);
	{
		struct blob want;
		struct blob body = C(
			ENTRY("i", L(3, L(1, C(V(3), V(UINT64_MAX), V(300))))),
			ENTRY("b", L(1, C(L(1, S("ab")), L(1, S(""))))),
			ENTRY("e", L(2, H(""))), ENTRY("z", H("")));

		want = C(C(H("0a"), V(body.n)), body);
		is_mem(p, n, want.p, want.n,
		       "exact bytes: negative varint, empty list, no kind");
	}
	is_int(parse((struct blob){ (uint8_t *)p, n }), 0, "decodes back");
	is_str(show(&ex), "i=int64:3,-1,300 b=bytes:6162, e=float: z=none:",
	       "round trip values");
	/* copy features through, one renamed */
	{
		struct tfk_example_builder c;
		const uint8_t *q;
		size_t m;
		struct blob src = EX(C(ENTRY("o", C(L(1, L(1, S("x"))),
						      L(3, C(T(1, 0), V(4))))),
				       ENTRY("p", L(2, L(1, F32(1))))));

		parse(src);
		tfk_exb_init(&c);
		tfk_exb_add_feat(&c, &ex.feat[0]);
		tfk_exb_add_feat_as(&c, "renamed", 7, &ex.feat[1]);
		tfk_exb_add_feat(&c, &ex.feat[1]);
		tfk_exb_finish(&c, &q, &m, &err);
		is_int(parse((struct blob){ (uint8_t *)q, m }), 0, "copied features parse");
		is_str(show(&ex), "o=int64:4 renamed=float:1 p=float:1",
		       "add_feat keeps values (only the winning kind)");
		tfk_exb_release(&c);
	}
	/* a big value: multi-byte lengths everywhere */
	{
		static uint8_t big[200000];
		const uint8_t *v;
		size_t it = 0, len;

		memset(big, 0xab, sizeof(big));
		tfk_exb_reset(&b);
		tfk_exb_add_bytes1(&b, "big", big, sizeof(big));
		is_int(tfk_exb_finish(&b, &p, &n, &err), 0, "200 kB value");
		parse((struct blob){ (uint8_t *)p, n });
		ok(tfk_feat_bytes_next(&ex.feat[0], &it, &v, &len) == 1 &&
		   len == sizeof(big) && v[len - 1] == 0xab, "200 kB value back");
	}
	tfk_exb_release(&b);
	tfk_exb_release(NULL);
	tfk_example_release(NULL);
}

/*
 * p (n bytes, already decoded into ex) with an unknown field appended
 * goes through the general walker instead of the straight-line pass:
 * 1 when both describe every feature the same way.
 */
static int same_both_ways(const uint8_t *p, size_t n)
{
	static uint8_t copy[1 << 16];
	struct tfk_example e;
	size_t i;
	int same;

	if (n + 2 > sizeof(copy))
		return 0;
	memcpy(copy, p, n);
	copy[n] = 5 << 3;
	copy[n + 1] = 0;
	tfk_example_init(&e);
	same = !tfk_example_parse(&e, copy, n + 2, &err) &&
	       e.n_feat == ex.n_feat;
	for (i = 0; same && i < ex.n_feat; i++) {
		const struct tfk_feat *a = &ex.feat[i], *c = &e.feat[i];

		/* merged values live in each example's scratch */
		if (a->body_len && (a->body < p || a->body >= p + n))
			continue;
		same = (!a->name_len || (const uint8_t *)a->name - p ==
					(const uint8_t *)c->name - copy) &&
		       a->name_len == c->name_len && a->kind == c->kind &&
		       a->n == c->n && a->body_len == c->body_len &&
		       (!a->body_len || a->body - p == c->body - copy) &&
		       !a->packed == !c->packed &&
		       (!a->packed || a->packed - p == c->packed - copy);
	}
	tfk_example_release(&e);
	return same;
}

/* Random round trips: values in, the same values out. */
static void round_trips(void)
{
	struct tfk_example_builder b;
	uint32_t seed = 12345;
	int r, k, good = 1;
	static float fv[8][40];
	static int64_t iv[8][40];

	tfk_exb_init(&b);
	for (r = 0; r < 300 && good; r++) {
		char names[8][8];
		int kinds[8], ns[8], nf = (int)(seed >> 20) % 9;
		const uint8_t *p;
		size_t n;

		tfk_exb_reset(&b);
		for (k = 0; k < nf; k++) {
			int j;

			seed = seed * 1103515245 + 12345;
			kinds[k] = (int)(seed >> 16) % 4;
			ns[k] = (int)(seed >> 8) % 40;
			snprintf(names[k], sizeof(names[k]), "f%d", k);
			for (j = 0; j < ns[k]; j++) {
				seed = seed * 1103515245 + 12345;
				fv[k][j] = (float)(int32_t)seed / 7.0f;
				iv[k][j] = (int64_t)((uint64_t)(int32_t)seed
						     << (j % 33));
			}
			if (kinds[k] == TFK_FEAT_FLOAT)
				tfk_exb_add_floats(&b, names[k], fv[k], (size_t)ns[k]);
			else if (kinds[k] == TFK_FEAT_INT64)
				tfk_exb_add_int64s(&b, names[k], iv[k], (size_t)ns[k]);
			else if (kinds[k] == TFK_FEAT_BYTES)
				tfk_exb_add_bytes1(&b, names[k], fv[k],
						   (size_t)ns[k] * 4);
			else
				tfk_exb_add_none(&b, names[k]);
		}
		if (tfk_exb_finish(&b, &p, &n, &err) ||
		    tfk_example_parse(&ex, p, n, &err) ||
		    ex.n_feat != (size_t)nf) {
			good = 0;
			break;
		}
		if (!same_both_ways(p, n)) {
			tap_diag("record %d: straight-line pass and walker "
				 "disagree", r);
			good = 0;
			break;
		}
		for (k = 0; k < nf; k++) {
			const struct tfk_feat *f = &ex.feat[k];
			float gf[40];
			int64_t gi[40];
			size_t it = 0, len;
			const uint8_t *v;

			if (f->kind != kinds[k] || !same_name(f, names[k]))
				good = 0;
			else if (f->kind == TFK_FEAT_FLOAT)
				good &= tfk_feat_floats(f, gf, 40) == ns[k] &&
					!memcmp(gf, fv[k], (size_t)ns[k] * 4);
			else if (f->kind == TFK_FEAT_INT64)
				good &= tfk_feat_int64s(f, gi, 40) == ns[k] &&
					!memcmp(gi, iv[k], (size_t)ns[k] * 8);
			else if (f->kind == TFK_FEAT_BYTES)
				good &= tfk_feat_bytes_next(f, &it, &v, &len) &&
					len == (size_t)ns[k] * 4 &&
					(!len || !memcmp(v, fv[k], len)) &&
					!tfk_feat_bytes_next(f, &it, &v, &len);
		}
		if (!good)
			break;
		seed = seed * 1103515245 + 12345;
	}
	ok(good, "300 random examples round trip, decoded alike by both "
	   "passes (stopped at %d)", r);
	tfk_exb_release(&b);
}

static void alloc_failures(void)
{
	struct blob e = H("");
	struct blob merged = L(1, C(L(1, S("m")), L(2, L(3, L(1, V(1)))),
				    L(2, L(3, L(1, V(2))))));
	char name[16];
	long n;
	int k, rc = -1, all_enomem = 1;

	for (k = 0; k < 40; k++) {
		snprintf(name, sizeof(name), "w%d", k);
		e = C(e, ENTRY(name, L(3, L(1, V(1)))));
	}
	e = EX(C(merged, e));
	for (n = 0; n < 100; n++) {
		struct tfk_example fresh;

		tfk_example_init(&fresh);
		tfk_alloc_fail_after(n);
		rc = tfk_example_parse(&fresh, e.p, e.n, &err);
		tfk_alloc_fail_after(-1);
		if (rc == 0) {
			ok(fresh.n_feat == 41, "parse succeeds after %ld allocations",
			   n);
			tfk_example_release(&fresh);
			break;
		}
		if (rc != TFK_ENOMEM || fresh.n_feat != 0)
			all_enomem = 0;
		tfk_example_release(&fresh);
	}
	ok(n > 2 && all_enomem, "every failed allocation: ENOMEM, no features "
	   "(%ld tried)", n);
	is_int(rc, 0, "and then it works");
	{
		struct tfk_example_builder b;
		const uint8_t *p;
		size_t len;
		static uint8_t big[5000];

		all_enomem = 1;
		for (n = 0; n < 50; n++) {
			tfk_exb_init(&b);
			tfk_alloc_fail_after(n);
			tfk_exb_add_bytes1(&b, "a", big, 100);
			tfk_exb_add_bytes1(&b, "b", big, sizeof(big));
			tfk_exb_add_int64s(&b, "c", (int64_t[]){ 1 }, 1);
			rc = tfk_exb_finish(&b, &p, &len, &err);
			tfk_alloc_fail_after(-1);
			if (rc == 0)
				break;
			if (rc != TFK_ENOMEM)
				all_enomem = 0;
			tfk_exb_release(&b);
		}
		ok(n > 0 && all_enomem && rc == 0,
		   "builder: ENOMEM from finish until memory suffices (%ld)", n);
		ok(rc == 0 && tfk_example_parse(&ex, p, len, &err) == 0 &&
		   ex.n_feat == 3, "builder: then a whole example");
		tfk_exb_release(&b);
	}
}

/* Fixtures written by TensorFlow ---------------------------------------- */

static void fixtures(void)
{
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	long counts[10] = { 0 }, n = 0, bad = 0;
	static const long want[10] = { 87, 137, 87, 90, 118, 79, 78, 107, 120, 97 };
	float px[784];
	int k;

	if (tfk_rec_open(&r, tap_fixture("tfrecord/tfx_mnist/mnist.tfrecord"),
			 TFK_COMP_AUTO, 0, &err)) {
		ok(0, "open mnist fixture: %s", err.msg);
		return;
	}
	while (tfk_rec_next(r, &rec, &err) == 1) {
		const struct tfk_feat *c, *im;
		int64_t cls = -1;

		if (tfk_example_parse(&ex, rec.data, rec.len, &err)) {
			bad++;
			continue;
		}
		if (!same_both_ways(rec.data, rec.len))
			bad++;
		c = tfk_example_find(&ex, "image_class");
		im = tfk_example_find(&ex, "image_floats");
		if (!c || !im || tfk_feat_int64s(c, &cls, 1) != 1 || cls < 0 ||
		    cls > 9 || tfk_feat_floats(im, px, 784) != 784 || !im->packed) {
			bad++;
			continue;
		}
		for (k = 0; k < 784; k++)
			if (!(px[k] >= -0.5f && px[k] <= 0.5f))
				bad++;
		counts[cls]++;
		n++;
	}
	tfk_rec_close(r);
	is_int(n, 1000, "mnist fixture: 1000 examples decoded");
	is_int(bad, 0, "mnist fixture: image_class int64[1], image_floats "
	       "float[784] in [-0.5, 0.5], decoded alike by both passes");
	ok(!memcmp(counts, want, sizeof(want)), "mnist fixture: class counts");

	if (tfk_rec_open(&r, tap_fixture("tfrecord/tfx_penguin/Split-train/"
					 "data_tfrecord-00000-of-00001.gz"),
			 TFK_COMP_AUTO, 0, &err)) {
		ok(0, "open penguin fixture: %s", err.msg);
		return;
	}
	tfk_rec_next(r, &rec, &err);
	is_int(tfk_example_parse(&ex, rec.data, rec.len, &err), 0,
	       "penguin record 0 parses");
	{
		static const char *const names[4] = {
			"body_mass_g", "culmen_depth_mm", "culmen_length_mm",
			"flipper_length_mm"
		};
		static const double vals[4] = {
			0.2916666567325592, 0.6666666865348816,
			0.2545454502105713, 0.1525423675775528
		};
		int64_t sp = -1;
		int good = 1;

		for (k = 0; k < 4; k++) {
			float v = -1;
			const struct tfk_feat *f = tfk_example_find(&ex, names[k]);

			if (!f || tfk_feat_floats(f, &v, 1) != 1 ||
			    (double)v != vals[k])
				good = 0;
		}
		ok(good, "penguin record 0: the four float values exactly");
		ok(tfk_feat_int64s(tfk_example_find(&ex, "species"), &sp, 1) == 1 &&
		   sp == 0, "penguin record 0: species 0");
	}
	tfk_rec_close(r);
}

/* The python oracle ---------------------------------------------------- */

/* Run the oracle with args; its stdout lines into *buf (malloc'd
 * buffer, NUL-separated), returns the line count or -1. */
static long run_oracle(const char *args, char **buf)
{
	size_t len, i;
	long lines = 0;
	int st = oracle_run(args, buf, &len);

	if (st != 0) {
		tap_diag("oracle failed: '%s' '%s' %s (status %d)",
			 tap_python(), oracle, args, st);
		return -1;
	}
	for (i = 0; i < len; i++)
		if ((*buf)[i] == '\n') {
			(*buf)[i] = '\0';
			lines++;
		}
	return lines;
}

static char *read_text(const char *path, long *lines)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long n, i;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	b = malloc((size_t)n + 1);
	n = (long)fread(b, 1, (size_t)n, f);
	fclose(f);
	b[n] = '\0';
	*lines = 0;
	for (i = 0; i < n; i++)
		if (b[i] == '\n') {
			b[i] = '\0';
			++*lines;
		}
	return b;
}

/* Our Examples, read by protobuf: values as the oracle sees them equal
 * the values we put in (written here, not from our decoder), and single-
 * name-order records equal protobuf's own deterministic bytes. */
static void python_reads_ours(void)
{
	struct tfk_example_builder b;
	struct tfk_rec_writer *w;
	const char *path = tap_tmp("ours.tfrecord");
	const uint8_t *p;
	size_t n;
	char *out = NULL, *line, expect[4096];
	long lines, k;
	static const float fv[5] = { 0.5f, -0.0f, 1e-45f, 3.4028235e38f, 0.1f };
	static const int64_t iv[5] = { 0, -1, INT64_MIN, INT64_MAX, 300 };
	uint8_t img[784];
	const char *want[4];
	char *reser = NULL;
	int good = 1;

	for (k = 0; k < 784; k++)
		img[k] = (uint8_t)(k * 7);
	tfk_recw_open(&w, path, TFK_COMP_NONE, &err);
	tfk_exb_init(&b);
	/* 0: Fashion-MNIST shaped; names added in sorted order */
	tfk_exb_add_bytes1(&b, "image", img, 784);
	tfk_exb_add_int64s(&b, "label", (int64_t[]){ 9 }, 1);
	tfk_exb_finish(&b, &p, &n, &err);
	tfk_recw_write(w, p, n, &err);
	/* 1: every kind, extreme values, sorted names */
	tfk_exb_reset(&b);
	tfk_exb_add_bytes(&b, "b", (const uint8_t *const[]){ (const uint8_t *)"",
			  (const uint8_t *)"\xe2\x98\x83" }, (size_t[]){ 0, 3 }, 2);
	tfk_exb_add_floats(&b, "f", fv, 5);
	tfk_exb_add_int64s(&b, "i", iv, 5);
	tfk_exb_add_none(&b, "n");
	tfk_exb_add_floats(&b, "z", NULL, 0);
	tfk_exb_finish(&b, &p, &n, &err);
	tfk_recw_write(w, p, n, &err);
	/* 2: empty */
	tfk_exb_reset(&b);
	tfk_exb_finish(&b, &p, &n, &err);
	tfk_recw_write(w, p, n, &err);
	/* 3: a non-ASCII name, NaN and infinities */
	tfk_exb_reset(&b);
	tfk_exb_add_floats(&b, "\xc3\xa9", (float[]){ NAN, INFINITY, -INFINITY }, 3);
	tfk_exb_finish(&b, &p, &n, &err);
	tfk_recw_write(w, p, n, &err);
	is_int(tfk_recw_close(w, &err), 0, "wrote our examples");
	tfk_exb_release(&b);

	/* the expected lines, from the inputs above */
	{
		char *o = expect;

		o += sprintf(o, "696d616765=bytes:");
		hexs(&o, img, 784);
		o += sprintf(o, " 6c6162656c=int64:9");
	}
	want[0] = expect;
	want[1] = "62=bytes:,e29883 66=float:3f000000,80000000,00000001,"
		  "7f7fffff,3dcccccd 69=int64:0,-1,-9223372036854775808,"
		  "9223372036854775807,300 6e=none: 7a=float:";
	want[2] = "";
	want[3] = "c3a9=float:nan,7f800000,ff800000";
	{
		char args[1024];

		snprintf(args, sizeof(args), "dump '%s'", path);
		lines = run_oracle(args, &out);
	}
	if (lines < 0) {
		ok(0, "python reads our records");
		free(out);
		return;
	}
	is_int(lines, 4, "python: 4 records");
	line = out;
	for (k = 0; k < 4 && k < lines; k++) {
		is_str(line, want[k], "python reads our record %ld value by value", k);
		line += strlen(line) + 1;
	}
	free(out);
	/* byte equality with protobuf's deterministic (sorted-key) writer */
	{
		char args[1024];
		struct tfk_rec_reader *rd;
		struct tfk_rec rec;

		snprintf(args, sizeof(args), "reserialize '%s'", path);
		lines = run_oracle(args, &reser);
		tfk_rec_open(&rd, path, TFK_COMP_NONE, 0, &err);
		line = reser;
		for (k = 0; k < lines && tfk_rec_next(rd, &rec, &err) == 1; k++) {
			char *o = expect;

			hexs(&o, rec.data, rec.len);
			*o = '\0';
			/* protobuf writes nothing for an empty list's
			 * packed field and for unset features, as we do;
			 * records 0-2 have sorted names */
			if (k < 3 && strcmp(line, expect))
				good = 0;
			line += strlen(line) + 1;
		}
		tfk_rec_close(rd);
		ok(lines == 4 && good, "our bytes equal protobuf's deterministic "
		   "serialization");
		free(reser);
	}
}

/* Protobuf's reading of odd-but-valid encodings equals ours; and where
 * we accept a damaged record, protobuf reads the same. */
static void ours_reads_python(void)
{
	const char *dir = tap_tmpdir();
	char args[1024], path[1024];
	char *out = NULL, *want, *line;
	long lines, k, wl, bad = 0, accepted = 0, both = 0;
	struct tfk_rec_reader *r;
	struct tfk_rec rec;

	snprintf(args, sizeof(args), "cases '%s' 600", dir);
	lines = run_oracle(args, &out);
	free(out);
	ok(lines == 0, "oracle wrote cases");
	snprintf(path, sizeof(path), "%s/cases.txt", dir);
	want = read_text(path, &wl);
	snprintf(path, sizeof(path), "%s/cases.tfrecord", dir);
	if (!want || tfk_rec_open(&r, path, TFK_COMP_NONE, 0, &err)) {
		ok(0, "read cases");
		free(want);
		return;
	}
	line = want;
	for (k = 0; k < wl && tfk_rec_next(r, &rec, &err) == 1; k++) {
		int rc = tfk_example_parse(&ex, rec.data, rec.len, &err);

		if (!rc && !same_both_ways(rec.data, rec.len))
			rc = -99;
		if (rc || strcmp(canon(&ex), line)) {
			if (bad++ < 3)
				tap_diag("case %ld: %s\n#  want %s\n#  got  %s", k,
					 rc ? err.msg : "", line, rc ? "" : shown);
		}
		line += strlen(line) + 1;
	}
	tfk_rec_close(r);
	is_int(k, 604, "604 python-written examples");
	is_int(bad, 0, "each decodes to protobuf's values (packed, unpacked, "
	       "split, oneof twice, dup keys, Features twice, unknown fields), "
	       "alike by both passes");
	free(want);

	snprintf(args, sizeof(args), "mutants '%s' 2000", dir);
	lines = run_oracle(args, &out);
	free(out);
	snprintf(path, sizeof(path), "%s/mutants.txt", dir);
	want = read_text(path, &wl);
	snprintf(path, sizeof(path), "%s/mutants.tfrecord", dir);
	if (!want || tfk_rec_open(&r, path, TFK_COMP_NONE, 0, &err)) {
		ok(0, "read mutants");
		free(want);
		return;
	}
	line = want;
	bad = 0;
	for (k = 0; k < wl && tfk_rec_next(r, &rec, &err) == 1;
	     k++, line += strlen(line) + 1) {
		int rc = tfk_example_parse(&ex, rec.data, rec.len, &err);
		int py_ok = strcmp(line, "ERROR") != 0;
		size_t i;
		int utf8 = 1;

		if (rc) {
			bad += rc != TFK_ECORRUPT;
			continue;
		}
		accepted++;
		for (i = 0; i < ex.n_feat; i++)
			utf8 &= tfk_utf8_valid((const uint8_t *)ex.feat[i].name,
					       ex.feat[i].name_len);
		/* protobuf refuses proto3 strings that are not UTF-8; we
		 * keep names as bytes */
		if (!py_ok && !utf8)
			continue;
		if (strcmp(canon(&ex), line) && bad++ < 3)
			tap_diag("mutant %ld: want %s\n#  got  %s", k, line, shown);
		both++;
	}
	tfk_rec_close(r);
	free(want);
	is_int(k, 2000, "2000 damaged examples");
	is_int(bad, 0, "where we accept damage, protobuf reads the same values "
	       "(%ld accepted, %ld by both)", accepted, both);
	ok(both > 100, "enough damaged records stay valid to compare (%ld)", both);
}

int main(void)
{
	tfk_example_init(&ex);
	basics();
	unknown_fields();
	merge_rules();
	corrupt();
	not_examples();
	accessors();
	wide();
	encoder();
	round_trips();
	alloc_failures();
	fixtures();
	if (!oracle_find()) {
		ok(0, "tests/py/tfexample.py found");
	} else {
		python_reads_ours();
		ours_reads_python();
	}
	tfk_example_release(&ex);
	return tap_done();
}
