/*
 * t-schema.c - schema inference, merging, the JSON document and its
 * strict reader.
 *
 * Oracles: TensorFlow-written fixtures, with the facts checked here
 * (first labels, value ranges, shortest float forms) taken from
 * python3-protobuf and numpy's float32 repr; a hand-written golden
 * document for a small crafted data set; and the reader's refusals, each
 * with the JSON path its message must name.
 */
#include "example/schema.h"
#include "io/record.h"
#include "util/alloc.h"
#include "tap.h"
#include "allocfail.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MNIST "tfrecord/tfx_mnist/mnist.tfrecord"
#define PTRAIN "tfrecord/tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz"
#define PEVAL "tfrecord/tfx_penguin/Split-eval/data_tfrecord-00000-of-00001.gz"

/* Observe every record of a fixture; returns the last status. */
static int observe_file(struct tfk_schema *s, const char *rel,
			struct tfk_err *err)
{
	struct tfk_rec_reader *r;
	struct tfk_example ex;
	struct tfk_rec rec;
	int rc;

	if ((rc = tfk_rec_open(&r, tap_fixture(rel), TFK_COMP_AUTO, 0, err)))
		return rc;
	tfk_example_init(&ex);
	while ((rc = tfk_rec_next(r, &rec, err)) == 1) {
		rc = tfk_example_parse(&ex, rec.data, rec.len, err);
		if (!rc)
			rc = tfk_schema_observe(s, &ex, err);
		if (rc)
			break;
	}
	tfk_example_release(&ex);
	tfk_rec_close(r);
	return rc;
}

/* Render to a malloc'd NUL-terminated string. */
static char *render(const struct tfk_schema *s)
{
	struct tfk_buf b;
	char *t;

	tfk_buf_init(&b);
	if (tfk_schema_to_json(s, &b)) {
		tfk_buf_release(&b);
		return NULL;
	}
	t = malloc(b.len + 1);
	memcpy(t, b.data, b.len);
	t[b.len] = '\0';
	tfk_buf_release(&b);
	return t;
}

/* render(parse(render(s))) == render(s) */
static void roundtrip(const struct tfk_schema *s, const char *what)
{
	struct tfk_schema t;
	struct tfk_err err;
	char *a = render(s), *b = NULL;
	int rc = tfk_schema_parse(&t, what, a, strlen(a), &err);

	ok(rc == 0, "%s: own document reads back (%s)", what,
	   rc ? err.msg : "ok");
	if (!rc)
		b = render(&t);
	is_str(b ? b : "", a, "%s: and renders the same", what);
	free(a);
	free(b);
	tfk_schema_release(&t);
}

static void fixtures(void)
{
	struct tfk_schema s, a, b;
	const struct tfk_schema_feat *f;
	struct tfk_err err;
	int64_t shape[TFK_SCHEMA_MAX_RANK];
	char *x, *y;

	tfk_schema_init(&s);
	is_int(observe_file(&s, MNIST, &err), 0, "mnist: observed");
	is_int(s.records, 1000, "mnist: 1000 records");
	is_int(s.n_feat, 2, "mnist: 2 features");
	f = tfk_schema_find(&s, "image_class");
	ok(f && f->kind == TFK_FEAT_INT64 && !f->mixed, "image_class: int64");
	if (f) {
		is_int(f->count, 1000, "image_class: in every record");
		ok(f->len_min == 1 && f->len_max == 1, "image_class: length 1");
		ok(f->has_range && f->imin == 0 && f->imax == 9,
		   "image_class: range 0..9");
		is_int(tfk_schema_feat_shape(f, shape), 1, "image_class: rank 1");
		is_int(shape[0], 1, "image_class: shape [1] from data alone");
		is_int(f->n_samples, 3, "image_class: 3 samples");
		if (f->n_samples == 3)
			ok(!strcmp(f->samples[0], "9") && !strcmp(f->samples[1], "3")
			   && !strcmp(f->samples[2], "6"),
			   "image_class: samples 9, 3, 6 (python3-protobuf)");
	}
	f = tfk_schema_find(&s, "image_floats");
	ok(f && f->kind == TFK_FEAT_FLOAT, "image_floats: float");
	if (f) {
		ok(f->len_min == 784 && f->len_max == 784 &&
		   f->len_sum == 784000.0, "image_floats: 784 per record");
		ok(f->vmin == -0.5 && f->vmax == 0.5, "image_floats: range [-0.5, 0.5]");
		is_int(f->n_nonfinite, 0, "image_floats: all finite");
		is_int(f->n_values, 784000, "image_floats: 784000 values");
		is_int(tfk_schema_feat_shape(f, shape), 1, "image_floats: rank 1");
		is_int(shape[0], 784, "image_floats: shape [784]");
		ok(f->n_samples == 3 && !strcmp(f->samples[0], "-0.5"),
		   "image_floats: sample -0.5");
		is_str(f->content, "", "image_floats: no content kind");
	}
	roundtrip(&s, "mnist");
	tfk_schema_release(&s);

	tfk_schema_init(&s);
	is_int(observe_file(&s, PTRAIN, &err), 0, "penguin train: observed");
	is_int(s.records, 234, "penguin train: 234 records");
	is_int(s.n_feat, 5, "penguin train: 5 features");
	f = tfk_schema_find(&s, "species");
	ok(f && f->kind == TFK_FEAT_INT64 && f->imin == 0 && f->imax == 2,
	   "species: int64 in 0..2");
	f = tfk_schema_find(&s, "culmen_length_mm");
	ok(f && f->kind == TFK_FEAT_FLOAT &&
	   (float)f->vmin == 0.036363635212183f && f->vmax == 1.0,
	   "culmen_length_mm: range [0.036363635, 1]");
	f = tfk_schema_find(&s, "body_mass_g");
	ok(f && f->n_samples == 3 && !strcmp(f->samples[0], "0.29166666") &&
	   !strcmp(f->samples[1], "0.30555555") &&
	   !strcmp(f->samples[2], "0.15277778"),
	   "body_mass_g: shortest float samples (numpy float32 repr)");
	ok(!tfk_schema_find(&s, "image_class"), "find: absent name is NULL");

	/* one pass over both files equals two schemas merged */
	is_int(observe_file(&s, PEVAL, &err), 0, "penguin eval: observed too");
	tfk_schema_init(&a);
	tfk_schema_init(&b);
	observe_file(&a, PTRAIN, &err);
	observe_file(&b, PEVAL, &err);
	is_int(tfk_schema_merge(&a, &b, &err), 0, "merge train + eval");
	is_int(a.records, 334, "merged: 334 records");
	f = tfk_schema_find(&a, "culmen_depth_mm");
	ok(f && f->vmin == 0.0 && f->vmax == 1.0 && f->count == 334,
	   "merged: ranges widen, counts add");
	x = render(&s);
	y = render(&a);
	is_str(y, x, "merged document equals one pass over both files");
	free(x);
	free(y);
	roundtrip(&a, "penguin");
	tfk_schema_release(&a);
	tfk_schema_release(&b);
	tfk_schema_release(&s);
}

/* A crafted data set ---------------------------------------------------- */

struct rec_builder {
	struct tfk_example_builder b;
	struct tfk_example ex;
};

static void rb_observe(struct rec_builder *rb, struct tfk_schema *s)
{
	const uint8_t *p;
	size_t n;
	struct tfk_err err;

	if (tfk_exb_finish(&rb->b, &p, &n, &err) ||
	    tfk_example_parse(&rb->ex, p, n, &err) ||
	    tfk_schema_observe(s, &rb->ex, &err))
		ok(0, "build and observe: %s", err.msg);
	tfk_exb_reset(&rb->b);
}

static void small_set(struct tfk_schema *s)
{
	struct rec_builder rb;
	int64_t l;
	float v[3];
	const uint8_t *bv[2];
	size_t bl[2];

	tfk_exb_init(&rb.b);
	tfk_example_init(&rb.ex);

	l = 1;
	tfk_exb_add_int64s(&rb.b, "label", &l, 1);
	tfk_exb_add_bytes1(&rb.b, "text", "hello", 5);
	v[0] = 0.5f;
	v[1] = NAN;
	tfk_exb_add_floats(&rb.b, "vals", v, 2);
	tfk_exb_add_none(&rb.b, "e");
	rb_observe(&rb, s);

	l = -3;
	tfk_exb_add_int64s(&rb.b, "label", &l, 1);
	tfk_exb_add_bytes1(&rb.b, "text", "world wide", 10);
	v[0] = 1.5f;
	v[1] = INFINITY;
	v[2] = -2.0f;
	tfk_exb_add_floats(&rb.b, "vals", v, 3);
	rb_observe(&rb, s);

	l = INT64_MAX;
	tfk_exb_add_int64s(&rb.b, "label", &l, 1);
	bv[0] = (const uint8_t *)"";
	bl[0] = 0;
	bv[1] = (const uint8_t *)"xy";
	bl[1] = 2;
	tfk_exb_add_bytes(&rb.b, "text", bv, bl, 2);
	tfk_exb_add_none(&rb.b, "e");
	rb_observe(&rb, s);

	tfk_exb_release(&rb.b);
	tfk_example_release(&rb.ex);
}

static const char golden[] =
	"{\n"
	"  \"format\": \"tfkit-schema\",\n"
	"  \"version\": 1,\n"
	"  \"records\": 3,\n"
	"  \"features\": {\n"
	"    \"label\": {\n"
	"      \"kind\": \"int64\",\n"
	"      \"count\": 3,\n"
	"      \"length\": {\"min\": 1, \"max\": 1, \"mean\": 1.0},\n"
	"      \"range\": {\"min\": -3, \"max\": 9223372036854775807},\n"
	"      \"shape\": [1],\n"
	"      \"samples\": [1, -3, 9223372036854775807]\n"
	"    },\n"
	"    \"text\": {\n"
	"      \"kind\": \"bytes\",\n"
	"      \"count\": 3,\n"
	"      \"length\": {\"min\": 1, \"max\": 2, \"mean\": 1.333333333},\n"
	"      \"size\": {\"min\": 0, \"max\": 10, \"mean\": 4.25},\n"
	"      \"content\": \"text\",\n"
	"      \"samples\": [\"hello\", \"world wide\", \"\"]\n"
	"    },\n"
	"    \"vals\": {\n"
	"      \"kind\": \"float\",\n"
	"      \"count\": 2,\n"
	"      \"length\": {\"min\": 2, \"max\": 3, \"mean\": 2.5},\n"
	"      \"range\": {\"min\": -2, \"max\": 1.5},\n"
	"      \"nonfinite\": 2,\n"
	"      \"samples\": [0.5, 1.5]\n"
	"    },\n"
	"    \"e\": {\n"
	"      \"kind\": \"none\",\n"
	"      \"count\": 2,\n"
	"      \"length\": {\"min\": 0, \"max\": 0, \"mean\": 0.0}\n"
	"    }\n"
	"  }\n"
	"}\n";

static void document(void)
{
	struct tfk_schema s, t;
	struct tfk_schema_feat *f;
	struct tfk_err err;
	char *x;
	static const int64_t img[3] = { 28, 28, 1 };
	static const char *const names[2] = { "cat", "dog \"big\"" };

	tfk_schema_init(&s);
	small_set(&s);
	x = render(&s);
	is_str(x, golden, "small set renders as the golden document");
	free(x);
	roundtrip(&s, "small set");

	/* explicit shape, dtype, encoding, labels as a converter sets them */
	f = tfk_schema_feature(&s, "text");
	tfk_schema_set_shape(f, 3, img);
	snprintf(f->dtype, sizeof(f->dtype), "uint8");
	snprintf(f->encoding, sizeof(f->encoding), "raw");
	f = tfk_schema_feature(&s, "label");
	is_int(tfk_schema_set_labels(f, names, 2), 0, "set label names");
	x = render(&s);
	ok(strstr(x, "\"shape\": [28, 28, 1],\n      \"dtype\": \"uint8\",\n"
		  "      \"encoding\": \"raw\"") != NULL,
	   "explicit shape, dtype, encoding rendered");
	ok(strstr(x, "\"label_names\": [\"cat\", \"dog \\\"big\\\"\"]") != NULL,
	   "label names rendered as JSON strings");
	free(x);
	roundtrip(&s, "with converter keys");
	f = tfk_schema_feature(&s, "new one");
	ok(f && f->kind == TFK_FEAT_NONE && f->rank == -1 && s.n_feat == 5,
	   "feature(): creates an empty feature");

	/* reading a hand-written document: only kind is needed */
	{
		static const char doc[] = "{\"format\": \"tfkit-schema\", "
			"\"version\": 1, \"features\": {\"a\": {\"kind\": "
			"\"float\"}, \"b.c\": {\"kind\": \"bytes\", \"count\": 4}}}";

		is_int(tfk_schema_parse(&t, "h.json", doc, sizeof(doc) - 1, &err),
		       0, "minimal document reads");
		ok(t.n_feat == 2 && t.feat[0].kind == TFK_FEAT_FLOAT &&
		   t.feat[1].kind == TFK_FEAT_BYTES, "kinds in document order");
		is_int(t.records, 4, "records absent: the largest count");
		tfk_schema_release(&t);
	}
	{
		/* found by fuzz-schema: a list with a count and no steps
		 * rendered its empty steps as min 2^64-1, max 0 */
		static const char doc[] = "{\"format\": \"tfkit-schema\", "
			"\"version\": 1, \"context\": {}, \"feature_lists\": "
			"{\"t\": {\"kind\": \"int64\", \"count\": 1}}}";

		is_int(tfk_schema_parse(&t, "l.json", doc, sizeof(doc) - 1, &err),
		       0, "a list without steps reads");
		roundtrip(&t, "list without steps");
		tfk_schema_release(&t);
	}
	tfk_schema_release(&s);
}

/* Content, kinds, samples -------------------------------------------- */

static const char *content_of(const void *const *vals, const size_t *lens,
			      size_t n)
{
	static char got[16];
	struct tfk_schema s;
	struct rec_builder rb;
	size_t i;

	tfk_schema_init(&s);
	tfk_exb_init(&rb.b);
	tfk_example_init(&rb.ex);
	for (i = 0; i < n; i++) {
		tfk_exb_add_bytes1(&rb.b, "x", vals[i], lens[i]);
		rb_observe(&rb, &s);
	}
	snprintf(got, sizeof(got), "%s", s.n_feat ? s.feat[0].content : "?");
	tfk_exb_release(&rb.b);
	tfk_example_release(&rb.ex);
	tfk_schema_release(&s);
	return got;
}

static void content(void)
{
	static const uint8_t jpeg[] = { 0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'J' };
	static const uint8_t png[] = { 0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a,
				       0x0a, 0, 0, 0, 13, 'I', 'H', 'D', 'R' };
	static const uint8_t bmp[26] = { 'B', 'M', 0x1a, 0, 0, 0, 0, 0, 0, 0,
					 0x1a, 0, 0, 0, 12, 0, 0, 0, 1, 0 };
	static const uint8_t bin[] = { 0x00, 0x80, 0xfe, 0x41 };
	const void *v[2];
	size_t l[2];

	v[0] = jpeg; l[0] = sizeof(jpeg);
	is_str(content_of(v, l, 1), "jpeg", "FF D8 FF: jpeg");
	v[0] = png; l[0] = sizeof(png);
	is_str(content_of(v, l, 1), "png", "PNG signature: png");
	v[0] = "GIF89a\x01\x00"; l[0] = 8;
	is_str(content_of(v, l, 1), "gif", "GIF89a: gif");
	v[0] = "GIF87a"; l[0] = 6;
	is_str(content_of(v, l, 1), "gif", "GIF87a: gif");
	v[0] = bmp; l[0] = sizeof(bmp);
	is_str(content_of(v, l, 1), "bmp", "BM + core header: bmp");
	v[0] = "BMW and Audi are cars"; l[0] = 21;
	is_str(content_of(v, l, 1), "text", "\"BMW...\" is text, not a bitmap");
	v[0] = "gr\xc3\xbc\xc3\x9f dich"; l[0] = 10;
	is_str(content_of(v, l, 1), "text", "UTF-8: text");
	v[0] = "\xc0\xaf"; l[0] = 2;
	is_str(content_of(v, l, 1), "binary", "overlong UTF-8: binary");
	v[0] = bin; l[0] = sizeof(bin);
	is_str(content_of(v, l, 1), "binary", "other bytes: binary");
	v[0] = jpeg; l[0] = sizeof(jpeg);
	v[1] = png; l[1] = sizeof(png);
	is_str(content_of(v, l, 2), "binary", "jpeg and png disagree: binary");
	v[0] = "abc"; l[0] = 3;
	v[1] = bin; l[1] = sizeof(bin);
	is_str(content_of(v, l, 2), "binary", "text then binary: binary");
	v[0] = png; l[0] = sizeof(png);
	v[1] = png; l[1] = sizeof(png);
	is_str(content_of(v, l, 2), "png", "png twice: png");
}

/* A first numeric feature with no values: nothing to copy, still fine
 * (the scratch buffer was never allocated: once "out of memory"). */
static void empty_first(void)
{
	const int kinds[] = { TFK_FEAT_FLOAT, TFK_FEAT_INT64 };
	size_t k;

	for (k = 0; k < 2; k++) {
		struct tfk_schema s;
		struct tfk_example_builder b;
		struct tfk_example ex;
		const struct tfk_schema_feat *f;
		struct tfk_err err;
		const uint8_t *p;
		size_t n;
		int rc;

		tfk_schema_init(&s);
		tfk_exb_init(&b);
		tfk_example_init(&ex);
		if (kinds[k] == TFK_FEAT_FLOAT)
			tfk_exb_add_floats(&b, "e", NULL, 0);
		else
			tfk_exb_add_int64s(&b, "e", NULL, 0);
		rc = tfk_exb_finish(&b, &p, &n, &err);
		if (!rc)
			rc = tfk_example_parse(&ex, p, n, &err);
		if (!rc)
			rc = tfk_schema_observe(&s, &ex, &err);
		f = tfk_schema_find(&s, "e");
		ok(rc == 0 && f && f->kind == kinds[k] && f->len_max == 0,
		   "an empty %s list as the first numeric feature: observed "
		   "(rc %d%s%s)", tfk_feat_kind_name(kinds[k]), rc,
		   rc ? ": " : "", rc ? err.msg : "");
		tfk_example_release(&ex);
		tfk_exb_release(&b);
		tfk_schema_release(&s);
	}
}

static void kinds_and_samples(void)
{
	struct tfk_schema s;
	struct rec_builder rb;
	const struct tfk_schema_feat *f;
	int64_t shape[TFK_SCHEMA_MAX_RANK], iv[4] = { 1, 2, 3, 4 };
	float fv = 2.5f;
	char long_text[200], *x;
	uint8_t bin[100];
	int i;

	tfk_schema_init(&s);
	tfk_exb_init(&rb.b);
	tfk_example_init(&rb.ex);

	/* m: int64 then float (mixed); n: none then float; v: lengths vary */
	tfk_exb_add_int64s(&rb.b, "m", iv, 1);
	tfk_exb_add_none(&rb.b, "n");
	tfk_exb_add_int64s(&rb.b, "v", iv, 4);
	for (i = 0; i < 50; i++)	/* 50 two-byte characters */
		memcpy(long_text + 2 * i, "\xc3\xa9", 2);
	tfk_exb_add_bytes1(&rb.b, "t", long_text, 100);
	for (i = 0; i < 100; i++)
		bin[i] = (uint8_t)(255 - i);
	tfk_exb_add_bytes1(&rb.b, "b", bin, sizeof(bin));
	tfk_exb_add_bytes1(&rb.b, "z", "a\0b", 3);
	{
		float bad[3] = { NAN, -INFINITY, INFINITY };

		tfk_exb_add_floats(&rb.b, "nf", bad, 3);
	}
	rb_observe(&rb, &s);
	tfk_exb_add_floats(&rb.b, "m", &fv, 1);
	tfk_exb_add_floats(&rb.b, "n", &fv, 1);
	tfk_exb_add_int64s(&rb.b, "v", iv, 2);
	rb_observe(&rb, &s);

	f = tfk_schema_find(&s, "m");
	ok(f && f->mixed, "int64 then float: mixed");
	is_str(f ? tfk_schema_kind_name(f) : "", "mixed", "kind name mixed");
	ok(f && tfk_schema_feat_shape(f, shape) == -1, "mixed: no shape");
	f = tfk_schema_find(&s, "n");
	ok(f && !f->mixed && f->kind == TFK_FEAT_FLOAT,
	   "empty Feature then float: float, not mixed");
	ok(f && f->len_min == 0 && f->len_max == 1, "n: lengths 0 and 1");
	f = tfk_schema_find(&s, "v");
	ok(f && tfk_schema_feat_shape(f, shape) == -1,
	   "lengths 4 and 2: no fixed shape");
	ok(f && f->len_sum / (double)f->n_len == 3.0, "v: mean length 3");
	f = tfk_schema_find(&s, "t");
	ok(f && f->n_samples == 1 && strlen(f->samples[0]) == 82 &&
	   !strncmp(f->samples[0], "\"\xc3\xa9\xc3\xa9", 5),
	   "text sample: 40 characters (80 bytes) in quotes");
	f = tfk_schema_find(&s, "b");
	ok(f && f->n_samples == 1 &&
	   !strcmp(f->samples[0], "{\"b64\": \"//79/Pv6+fj39vX08/Lx8O/u7ezr6uno5+bl5OPi\"}"),
	   "binary sample: base64 of the first 30 bytes");
	f = tfk_schema_find(&s, "z");
	ok(f && !strcmp(f->samples[0], "\"a\\u0000b\"") &&
	   !strcmp(f->content, "text"), "NUL inside text: escaped, still text");
	f = tfk_schema_find(&s, "nf");
	ok(f && !f->has_range && f->n_nonfinite == 3,
	   "only NaN and infinities: no range, 3 non-finite");
	x = render(&s);
	ok(strstr(x, "\"nf\": {\n      \"kind\": \"float\",\n      \"count\": 1,\n"
		  "      \"length\": {\"min\": 3, \"max\": 3, \"mean\": 3.0},\n"
		  "      \"nonfinite\": 3,\n      \"shape\": [3],\n"
		  "      \"samples\": [\"NaN\"]\n") != NULL,
	   "non-finite only: rendered without range, sample \"NaN\"");
	ok(strstr(x, "\"m\": {\n      \"kind\": \"mixed\"") != NULL,
	   "mixed kind rendered");
	free(x);
	roundtrip(&s, "kinds and samples");
	tfk_exb_release(&rb.b);
	tfk_example_release(&rb.ex);
	tfk_schema_release(&s);
}

/* Sequence schemas ---------------------------------------------------- */

static void sequence(void)
{
	struct tfk_schema s, c;
	struct tfk_example_builder b;
	struct tfk_example ex;
	struct tfk_err err;
	const struct tfk_schema_feat *f;
	const uint8_t *p;
	size_t n;
	int64_t tok[3] = { 7, 8, 9 };
	char *x;

	tfk_schema_init(&s);
	tfk_exb_init(&b);
	tfk_example_init(&ex);
	/* three steps of the list "tokens", lengths 1, 3, 2 */
	tfk_exb_add_int64s(&b, "s0", tok, 1);
	tfk_exb_add_int64s(&b, "s1", tok, 3);
	tfk_exb_add_int64s(&b, "s2", tok + 1, 2);
	tfk_exb_finish(&b, &p, &n, &err);
	tfk_example_parse(&ex, p, n, &err);
	is_int(tfk_schema_observe_feat(&s, &ex.feat[0], &err), 0,
	       "context feature observed");
	is_int(tfk_schema_observe_list(&s, "tokens", 6, ex.feat, 3, &err), 0,
	       "feature list of 3 steps observed");
	s.records++;
	is_int(tfk_schema_observe_list(&s, "tokens", 6, ex.feat, 1, &err), 0,
	       "second record: 1 step");
	s.records++;
	ok(s.sequence, "observing a list makes a sequence schema");
	f = tfk_schema_find_list(&s, "tokens");
	ok(f && f->count == 2 && f->steps_min == 1 && f->steps_max == 3,
	   "tokens: 2 records, 1..3 steps");
	ok(f && f->n_len == 4 && f->len_min == 1 && f->len_max == 3 &&
	   f->len_sum == 7.0, "tokens: per-step lengths 1, 3, 2, 1");
	ok(f && f->imin == 7 && f->imax == 9, "tokens: values 7..9");
	x = render(&s);
	ok(strstr(x, "\"context\": {\n    \"s0\": {") &&
	   strstr(x, "\"feature_lists\": {\n    \"tokens\": {\n      \"kind\": "
		  "\"int64\",\n      \"count\": 2,\n      \"steps\": {\"min\": 1, "
		  "\"max\": 3, \"mean\": 2.0},\n      \"length\": {\"min\": 1, "
		  "\"max\": 3, \"mean\": 1.75}") && !strstr(x, "\"features\""),
	   "sequence document: context and feature_lists");
	free(x);
	roundtrip(&s, "sequence");
	tfk_schema_init(&c);
	tfk_schema_observe(&c, &ex, &err);
	is_int(tfk_schema_merge(&c, &s, &err), TFK_EINVAL,
	       "merging Example and SequenceExample schemas: refused");
	ok(strstr(err.msg, "cannot merge") != NULL, "  %s", err.msg);
	tfk_schema_release(&c);
	tfk_schema_init(&c);
	is_int(tfk_schema_merge(&c, &s, &err), 0, "merge into an empty schema");
	ok(c.sequence && c.records == 2, "takes the sequence kind and records");
	tfk_schema_release(&c);
	tfk_exb_release(&b);
	tfk_example_release(&ex);
	tfk_schema_release(&s);
}

/* The reader's refusals ----------------------------------------------- */

#define HEAD "{\"format\": \"tfkit-schema\", \"version\": 1, "

static void refuses(const char *doc, const char *want)
{
	struct tfk_schema s;
	struct tfk_err err;
	int rc = tfk_schema_parse(&s, "x.json", doc, strlen(doc), &err);

	ok(rc == TFK_ECORRUPT && strstr(err.msg, want) &&
	   !strncmp(err.msg, "x.json: ", 8) && s.n_feat == 0,
	   "refused: %s", rc ? err.msg : doc);
	if (rc != TFK_ECORRUPT || !strstr(err.msg, want))
		tap_diag("want: %s", want);
	tfk_schema_release(&s);
}

static void errors(void)
{
	struct tfk_schema s;
	struct tfk_err err;

	refuses("", "x.json: line 1 column 0: ");
	refuses("{\"format\": ", "x.json: line 1 column 11: ");
	refuses("[]", "(top): expected a tfkit-schema object");
	refuses(HEAD "\"features\": {}, \"extra\": 1}", "x.json: extra: unknown key");
	refuses("{\"version\": 1, \"features\": {}}", "format: expected \"tfkit-schema\"");
	refuses("{\"format\": \"tf\", \"version\": 1, \"features\": {}}",
		"format: expected \"tfkit-schema\"");
	refuses("{\"format\": \"tfkit-schema\", \"version\": 2, \"features\": {}}",
		"version: expected 1");
	refuses(HEAD "\"records\": -1, \"features\": {}}",
		"records: expected a non-negative integer");
	refuses(HEAD "\"records\": 1}", "(top): missing features");
	refuses(HEAD "\"features\": [], \"records\": 1}",
		"features: expected an object of features");
	refuses(HEAD "\"features\": {}, \"context\": {}}",
		"context: an Example schema (features) has no context");
	refuses(HEAD "\"features\": {\"a\": {\"kind\": \"float\"}, \"a\": {}}}",
		"duplicate object key");
	refuses(HEAD "\"features\": {\"x\": 3}}", "features.x: expected an object");
	refuses(HEAD "\"features\": {\"x\": {}}}", "features.x: missing kind");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"int32\"}}}",
		"features.x.kind: expected bytes, float, int64, none or mixed");
	refuses(HEAD "\"features\": {\"a.b\": {\"kind\": 1}}}",
		"features[\"a.b\"].kind: expected bytes");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"float\", \"kidn\": 1}}}",
		"features.x.kidn: unknown key");
	refuses(HEAD "\"records\": 3, \"features\": {\"x\": {\"kind\": \"float\", \"count\": 5}}}",
		"features.x.count: 5 is more than records (3)");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"float\", \"count\": 1.5}}}",
		"features.x.count: expected a non-negative integer");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"float\", \"size\": "
		"{\"min\": 1, \"max\": 1, \"mean\": 1}}}}",
		"features.x.size: only for bytes features");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"int64\", \"length\": "
		"{\"min\": 1, \"max\": 1}}}}", "features.x.length: missing mean");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"int64\", \"length\": "
		"{\"min\": 1, \"max\": 1, \"avg\": 1}}}}",
		"features.x.length.avg: unknown key");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"int64\", \"length\": "
		"{\"min\": 3, \"max\": 1, \"mean\": 2}}}}",
		"features.x.length: min 3 is more than max 1");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"int64\", \"length\": "
		"{\"min\": 1, \"max\": 2, \"mean\": 7}}}}",
		"features.x.length: mean is outside [min, max]");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"int64\", \"length\": 4}}}",
		"features.x.length: expected an object with min, max, mean");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"int64\", \"range\": "
		"{\"min\": 0.5, \"max\": 1}}}}",
		"features.x.range.min: expected an integer");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"float\", \"range\": "
		"{\"min\": 0, \"max\": 1e39}}}}",
		"features.x.range.max: out of float range");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"float\", \"range\": "
		"{\"min\": 2, \"max\": 1}}}}", "features.x.range: min is more than max");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"bytes\", \"range\": "
		"{\"min\": 0, \"max\": 1}}}}",
		"features.x.range: only for float and int64 features");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"int64\", \"nonfinite\": 1}}}",
		"features.x.nonfinite: only for float features");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"bytes\", \"content\": \"jpg\"}}}",
		"features.x.content: expected jpeg, png, gif, bmp, text or binary");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"int64\", \"content\": \"text\"}}}",
		"features.x.content: only for bytes features");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"int64\", \"shape\": [1, -2]}}}",
		"features.x.shape[1]: expected an integer >= -1");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"int64\", \"shape\": "
		"[1, 1, 1, 1, 1, 1, 1, 1, 1]}}}", "features.x.shape: rank 9 is more than 8");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"bytes\", \"dtype\": \"uint9\"}}}",
		"features.x.dtype: expected uint8, int8");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"bytes\", \"encoding\": \"webp\"}}}",
		"features.x.encoding: expected raw, jpeg, png, gif, bmp or utf-8");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"int64\", \"label_names\": [\"a\", 2]}}}",
		"features.x.label_names[1]: expected a string without NUL");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"int64\", \"samples\": [1, \"a\"]}}}",
		"features.x.samples[1]: wrong type for kind int64");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"float\", \"samples\": [\"nan\"]}}}",
		"features.x.samples[0]: expected a number, \"NaN\"");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"bytes\", \"samples\": [{\"b64\": \"AB=C\"}]}}}",
		"features.x.samples[0]: expected {\"b64\": BASE64}");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"bytes\", \"samples\": [1, 2, 3, 4]}}}",
		"features.x.samples: more than 3 samples");
	refuses(HEAD "\"features\": {\"x\": {\"kind\": \"int64\", \"steps\": "
		"{\"min\": 1, \"max\": 1, \"mean\": 1}}}}", "features.x.steps: unknown key");
	refuses(HEAD "\"feature_lists\": {\"t\": {\"kind\": \"int64\", \"steps\": 1}}}",
		"feature_lists.t.steps: expected an object");

	is_int(tfk_schema_read(&s, "/nonexistent/x.schema.json", &err), TFK_EIO,
	       "missing file: EIO");
	ok(strstr(err.msg, "/nonexistent/x.schema.json: cannot open: No such file") != NULL,
	   "  %s", err.msg);
	tfk_schema_release(&s);
	ok(tfk_schema_read(&s, tap_tmpdir(), &err) < 0 &&
	   strstr(err.msg, "Is a directory"), "directory: %s", err.msg);
	tfk_schema_release(&s);
	ok(tfk_schema_read(&s, tap_fixture(MNIST), &err) == TFK_ECORRUPT &&
	   strstr(err.msg, "mnist.tfrecord: line 1 column"),
	   "a TFRecord file is not a schema: %s", err.msg);
	tfk_schema_release(&s);
}

static void files(void)
{
	struct tfk_schema s, t;
	struct tfk_err err;
	char path[1024], cmd[2100], *a, *b;

	snprintf(path, sizeof(path), "%s/s.schema.json", tap_tmpdir());
	tfk_schema_init(&s);
	small_set(&s);
	is_int(tfk_schema_write(&s, path, &err), 0, "write a schema file");
	is_int(tfk_schema_read(&t, path, &err), 0, "read it back");
	a = render(&s);
	b = render(&t);
	is_str(b, a, "file round trip");
	free(a);
	free(b);
	tfk_schema_release(&t);
	snprintf(cmd, sizeof(cmd), "ls -a %s | grep -q tmp-", tap_tmpdir());
	ok(system(cmd) != 0, "no temporary left behind");
	is_int(tfk_schema_write(&s, "/nonexistent/dir/s.json", &err), TFK_EIO,
	       "write into a missing directory: EIO");
	tfk_schema_release(&s);
}

/*
 * The calls alloc_failures sweeps (alloc_sweep): each starts from an
 * empty t (or b) and the undo releases it.
 */
struct sweep {
	struct tfk_schema s, t;
	struct tfk_buf b;
	const char *doc;
	struct tfk_err err;
};

static int observe_call(void *ctx)
{
	struct sweep *a = ctx;

	tfk_schema_init(&a->t);
	return observe_file(&a->t, PEVAL, &a->err);
}

static int parse_call(void *ctx)
{
	struct sweep *a = ctx;

	return tfk_schema_parse(&a->t, "a.json", a->doc, strlen(a->doc),
				&a->err);
}

static int merge_call(void *ctx)
{
	struct sweep *a = ctx;

	tfk_schema_init(&a->t);
	return tfk_schema_merge(&a->t, &a->s, &a->err);
}

static void release_t(void *ctx)
{
	tfk_schema_release(&((struct sweep *)ctx)->t);
}

static int render_call(void *ctx)
{
	struct sweep *a = ctx;

	tfk_buf_init(&a->b);
	return tfk_schema_to_json(&a->s, &a->b);
}

static void release_b(void *ctx)
{
	tfk_buf_release(&((struct sweep *)ctx)->b);
}

static void alloc_failures(void)
{
	struct sweep a;
	char *doc;
	long k;
	int clean;

	clean = alloc_sweep(200, observe_call, release_t, &a, &k);
	ok(clean, "observe: every failed allocation is ENOMEM "
	   "(%ld tried)", k);

	tfk_schema_init(&a.s);
	small_set(&a.s);
	tfk_schema_feature(&a.s, "label");
	{
		static const char *const names[2] = { "x", "y" };

		tfk_schema_set_labels(tfk_schema_feature(&a.s, "label"),
				      names, 2);
	}
	a.doc = doc = render(&a.s);
	clean = alloc_sweep(200, parse_call, release_t, &a, &k);
	ok(clean, "parse: every failed allocation is ENOMEM "
	   "(%ld tried)", k);
	clean = alloc_sweep(200, merge_call, release_t, &a, &k);
	ok(clean, "merge: every failed allocation is ENOMEM "
	   "(%ld tried)", k);
	clean = alloc_sweep(50, render_call, release_b, &a, &k);
	ok(clean, "render: failed allocation is ENOMEM (%ld tried)", k);
	free(doc);
	tfk_schema_release(&a.s);
}

int main(void)
{
	fixtures();
	document();
	content();
	kinds_and_samples();
	empty_first();
	sequence();
	errors();
	files();
	alloc_failures();
	return tap_done();
}
