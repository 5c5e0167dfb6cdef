/*
 * t-lookup.c - the categorical kernels: Fingerprint64 and SipHash-2-4
 * against TensorFlow's frozen values, the SipHash paper and other
 * implementations (libfarmhash, python3-siphashc via textprep.py);
 * Hashing against Keras' documented examples; StringLookup and
 * IntegerLookup against textprep.py; the dense encodings,
 * CategoryEncoding and Discretization against worked values and Keras'
 * quantile method redone in numpy; errors and failed allocations.
 */
#include "prep/discretize.h"
#include "prep/fprint.h"
#include "prep/lookup.h"
#include "util/alloc.h"
#include "tap.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int oracle(const char *args, const char *out)
{
	char cmd[PATH_MAX * 4];
	const char *p = getenv("PYTHON");

	snprintf(cmd, sizeof(cmd), "%s %s %s > %s", p ? p : "/usr/bin/python3",
		 tap_source("tests/py/textprep.py"), args, out);
	return system(cmd);
}

static void write_hex(FILE *f, const void *p, size_t n)
{
	const uint8_t *s = p;
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(f, "%02x", s[i]);
	fputc('\n', f);
}

/* Strings of every length 0..300 and every short-input branch. */
static uint8_t data[400];
static const size_t lens[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32,
			       33, 63, 64, 65, 100, 127, 128, 129, 200, 255,
			       256, 300, 399 };
#define NLENS (sizeof(lens) / sizeof(lens[0]))

static void hashes(void)
{
	const char *in = tap_tmp("hash.hex"), *out = tap_tmp("hash.out");
	FILE *f = fopen(in, "w");
	char *want, *p;
	size_t i, n, bad = 0;
	uint64_t k0 = 0x0706050403020100ULL, k1 = 0x0f0e0d0c0b0a0908ULL;
	uint8_t m[15];

	/* tensorflow/core/platform/fingerprint_test.cc, "IsForeverFrozen". */
	ok(tfk_fprint64("Hello", 5) == 15404698994557526151ULL,
	   "Fingerprint64(\"Hello\") = TensorFlow's frozen value");
	ok(tfk_fprint64("World", 5) == 18308117990299812472ULL,
	   "Fingerprint64(\"World\") = TensorFlow's frozen value");
	/* SipHash paper, appendix A: key 00..0f, message 00..0e. */
	for (i = 0; i < 15; i++)
		m[i] = (uint8_t)i;
	ok(tfk_siphash24(k0, k1, m, 15) == 0xa129ca6149be45e5ULL,
	   "SipHash-2-4 paper vector a129ca6149be45e5");
	ok(tfk_siphash24(k0, k1, m, 0) == 0x726fdb47dd0e0e31ULL,
	   "SipHash-2-4 reference vectors.h[0] (empty message)");

	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 131 + 7 + (i >> 3));
	for (i = 0; i < NLENS; i++)
		write_hex(f, data, lens[i]);
	fclose(f);
	{
		char args[PATH_MAX * 2];

		snprintf(args, sizeof(args), "fprint %s", in);
		ok(oracle(args, out) == 0, "libfarmhash oracle ran");
		want = tap_read_file(out, &n);
		for (i = 0, p = want; p && i < NLENS; i++) {
			unsigned long long w = strtoull(p, &p, 10);

			if (tfk_fprint64(data, lens[i]) != w) {
				tap_diag("length %zu: %016" PRIx64 " want %016llx",
					 lens[i], tfk_fprint64(data, lens[i]), w);
				bad++;
			}
		}
		free(want);
		ok(bad == 0, "Fingerprint64 = libfarmhash's util::Fingerprint64 "
		   "at %zu lengths 0..399", NLENS);
		snprintf(args, sizeof(args), "siphash 12345 987654321987 %s", in);
		ok(oracle(args, out) == 0, "siphashc oracle ran");
		want = tap_read_file(out, &n);
		for (bad = 0, i = 0, p = want; p && i < NLENS; i++)
			if (tfk_siphash24(12345, 987654321987ULL, data, lens[i]) !=
			    strtoull(p, &p, 10))
				bad++;
		free(want);
		ok(bad == 0, "SipHash-2-4 = python3-siphashc at %zu lengths",
		   NLENS);
	}
}

static void hashing_layer(void)
{
	struct tfk_hashing h = { 3, 0, 0, NULL, 0, 0, 0, { 0, 0 } };
	static const char *abcde[] = { "A", "B", "C", "D", "E" };
	static const int fast[] = { 1, 0, 1, 1, 2 };
	static const int salted[] = { 1, 2, 1, 0, 2 };
	static const int salt1[] = { 0, 0, 2, 1, 0 };
	static const char *masked[] = { "A", "B", "", "C", "D" };
	static const int mfast[] = { 1, 1, 0, 2, 2 };
	int i, good;

	/* keras/src/layers/preprocessing/hashing.py docstring examples. */
	for (good = 1, i = 0; i < 5; i++)
		good &= tfk_hashing_str(&h, abcde[i], 1) == fast[i];
	ok(good, "Hashing(num_bins=3): A..E -> 1 0 1 1 2");
	h.has_mask = 1;
	h.mask = "";
	h.mask_len = 0;
	for (good = 1, i = 0; i < 5; i++)
		good &= tfk_hashing_str(&h, masked[i], strlen(masked[i])) ==
			mfast[i];
	ok(good, "Hashing(num_bins=3, mask_value=''): 1 1 0 2 2");
	h.has_mask = 0;
	h.salted = 1;
	h.salt[0] = 133;
	h.salt[1] = 137;
	for (good = 1, i = 0; i < 5; i++)
		good &= tfk_hashing_str(&h, abcde[i], 1) == salted[i];
	ok(good, "Hashing(num_bins=3, salt=[133, 137]): 1 2 1 0 2");
	h.salt[1] = 133;
	for (good = 1, i = 0; i < 5; i++)
		good &= tfk_hashing_str(&h, abcde[i], 1) == salt1[i];
	ok(good, "Hashing(num_bins=3, salt=133): 0 0 2 1 0");

	/* Integers hash as their decimal text; floats truncate first. */
	h.salted = 0;
	h.num_bins = 1000003;
	is_int(tfk_hashing_int(&h, -42), tfk_hashing_str(&h, "-42", 3),
	       "int -42 hashes as \"-42\"");
	is_int(tfk_hashing_float(&h, -42.9), tfk_hashing_str(&h, "-42", 3),
	       "float -42.9 truncates to -42");
	ok(tfk_hashing_float(&h, NAN) < 0, "NaN refused");
	h.has_mask = 1;
	h.mask_is_int = 1;
	h.mask_int = 7;
	is_int(tfk_hashing_int(&h, 7), 0, "integer mask -> 0");
	ok(tfk_hashing_int(&h, 8) >= 1, "others -> 1..num_bins-1");
	h.num_bins = 1;
	is_int(tfk_hashing_int(&h, 7), 0, "one bin: the mask has no bin of "
	       "its own (Keras: only when num_bins > 1)");
	h.num_bins = 0;
	ok(tfk_hashing_str(&h, "a", 1) < 0, "num_bins 0 refused");

	/* Against the oracle over strings of many lengths. */
	{
		const char *in = tap_tmp("hash.hex"), *out = tap_tmp("bins.out");
		char args[PATH_MAX * 2], *want, *p;
		size_t i2, n, bad = 0;
		struct tfk_hashing m = { 17, 1, 0, "\0", 1, 0, 1, { 5, 77 } };

		snprintf(args, sizeof(args), "hash 17 00 5 77 %s", in);
		ok(oracle(args, out) == 0, "hash oracle ran");
		want = tap_read_file(out, &n);
		for (i2 = 0, p = want; p && i2 < NLENS; i2++)
			if (tfk_hashing_str(&m, data, lens[i2]) !=
			    strtol(p, &p, 10))
				bad++;
		free(want);
		ok(bad == 0, "salted, masked bins = oracle's (%zu differ)", bad);
	}
}

/* One lookup configuration against the oracle. */
static void lookup_case(int is_int, const char *mode, long noov,
			const char *mask, const char *oov, int invert,
			int farm, const char *vocab, const char *input,
			const char *what)
{
	const char *vp = tap_tmp("vocab.txt"), *ip = tap_tmp("input.txt");
	const char *op = tap_tmp("lookup.out");
	char args[PATH_MAX * 4], *want, *line, *save = NULL, *in, *isave = NULL;
	struct tfk_lookup_opts o;
	struct tfk_lookup l;
	struct tfk_err err;
	size_t n, bad = 0, rows = 0;
	char *mbuf = NULL, *obuf = NULL, *itext;

	tap_write_file(vp, vocab, strlen(vocab));
	tap_write_file(ip, input, strlen(input));
	snprintf(args, sizeof(args), "lookup %s %s %ld '%s' '%s' %d %d %s %s",
		 is_int ? "int" : "str", mode, noov, mask, oov, invert, farm,
		 vp, ip);
	if (oracle(args, op)) {
		ok(0, "oracle: %s", args);
		return;
	}
	if (is_int)
		tfk_lookup_opts_int(&o);
	else
		tfk_lookup_opts_string(&o);
	o.mode = tfk_lookup_mode_parse(mode);
	o.num_oov = noov;
	o.invert = invert;
	o.oov_farmhash = farm;
	if (strcmp(mask, "-")) {
		o.has_mask = 1;
		if (is_int)
			o.mask_int = strtoll(mask, NULL, 10);
		else {
			mbuf = strdup(mask);
			o.mask = mbuf;
			o.mask_len = 0;
			for (n = 0; mask[2 * n]; n++)
				sscanf(mask + 2 * n, "%2hhx", &mbuf[n]);
			o.mask_len = n;
		}
	}
	if (strcmp(oov, "-")) {
		if (is_int)
			o.oov_int = strtoll(oov, NULL, 10);
		else {
			obuf = strdup(oov);
			for (n = 0; oov[2 * n]; n++)
				sscanf(oov + 2 * n, "%2hhx", &obuf[n]);
			o.oov = obuf;
			o.oov_len = n;
		}
	}
	if (tfk_lookup_init(&l, &o, &err)) {
		ok(0, "%s: init: %s", what, err.msg);
		goto out;
	}
	if (is_int) {
		if (tfk_lookup_load_vocab(&l, vp, NULL, 0, &err))
			ok(0, "%s: vocab: %s", what, err.msg);
	} else {
		/* String vocabularies come as hex lines: decode them. */
		char *vt = strdup(vocab), *s, *vs = NULL;
		const char *toks[64];
		size_t tl[64], k = 0;

		for (s = strtok_r(vt, "\n", &vs); s && k < 64;
		     s = strtok_r(NULL, "\n", &vs)) {
			size_t j;

			for (j = 0; s[2 * j]; j++)
				sscanf(s + 2 * j, "%2hhx", &s[j]);
			toks[k] = s;
			tl[k++] = j;
		}
		if (tfk_lookup_set_vocab(&l, toks, tl, NULL, k, NULL, 0, &err))
			ok(0, "%s: vocab: %s", what, err.msg);
		free(vt);
	}
	want = tap_read_file(op, &n);
	itext = strdup(input);
	for (line = strtok_r(want, "\n", &save), in = strtok_r(itext, "\n",
							       &isave);
	     line && in; line = strtok_r(NULL, "\n", &save),
	     in = strtok_r(NULL, "\n", &isave)) {
		char *tok, *ts = NULL, *wt, *ws = NULL, got[128];

		rows++;
		for (tok = strtok_r(in, " ", &ts), wt = strtok_r(line, " ", &ws);
		     tok && wt; tok = strtok_r(NULL, " ", &ts),
		     wt = strtok_r(NULL, " ", &ws)) {
			int64_t r;

			if (invert && is_int) {
				r = tfk_lookup_invert_int(&l, strtoll(tok, NULL, 10));
				snprintf(got, sizeof(got), "%" PRId64, r);
			} else if (invert) {
				size_t gl, j;
				const char *g = tfk_lookup_invert(&l, strtoll(tok,
						NULL, 10), &gl);

				for (j = 0; j < gl && 2 * j + 2 < sizeof(got); j++)
					sprintf(got + 2 * j, "%02x",
						(unsigned char)g[j]);
				got[2 * j] = 0;
				if (!gl)
					strcpy(got, "-");
			} else {
				if (is_int)
					r = tfk_lookup_index_int(&l, strtoll(tok,
						NULL, 10), &err);
				else {
					char kb[64];
					size_t j;

					for (j = 0; tok[2 * j]; j++)
						sscanf(tok + 2 * j, "%2hhx", &kb[j]);
					r = tfk_lookup_index(&l, kb, j, &err);
				}
				if (r == TFK_LOOKUP_DROP)
					snprintf(got, sizeof(got), "drop");
				else if (r < 0)
					snprintf(got, sizeof(got), "error");
				else
					snprintf(got, sizeof(got), "%" PRId64, r);
			}
			if (strcmp(got, wt)) {
				if (!bad)
					tap_diag("%s: %s -> %s, want %s", what, tok,
						 got, wt);
				bad++;
			}
		}
	}
	ok(rows > 0 && bad == 0, "%s: %zu rows = oracle's", what, rows);
	free(want);
	free(itext);
	tfk_lookup_release(&l);
out:
	free(mbuf);
	free(obuf);
}

static void lookups(void)
{
	/* "a" "b" "cc" "d\xff" and an OOV-heavy input (hex). */
	static const char sv[] = "61\n62\n6363\n64ff\n";
	static const char sin[] = "61 62 7a 6363 64ff 00 \n"
				  "7a7a 79 78 77 76 75 74 73\n"
				  "5b554e4b5d 6162 62\n";
	static const char iv[] = "10\n-3\n7\n1000000000000\n";
	static const char iin[] = "10 -3 7 0 -1 -7 5 6 13 -14 1000000000000\n"
				  "42 -42 99 100 101 -9223372036854775808\n";

	lookup_case(0, "int", 1, "-", "5b554e4b5d", 0, 0, sv, sin,
		    "StringLookup defaults");
	lookup_case(0, "int", 3, "-", "5b554e4b5d", 0, 0, sv, sin,
		    "StringLookup 3 OOV buckets (Fingerprint64)");
	lookup_case(0, "int", 2, "00", "5b554e4b5d", 0, 0, sv, sin,
		    "StringLookup mask \\0, 2 OOV");
	lookup_case(0, "multi_hot", 2, "00", "5b554e4b5d", 0, 0, sv, sin,
		    "StringLookup mask dropped outside int mode");
	lookup_case(0, "int", 0, "-", "5b554e4b5d", 0, 0, sv, sin,
		    "StringLookup num_oov_indices 0: OOV is an error");
	lookup_case(0, "int", 1, "", "5b554e4b5d", 1, 0, sv,
		    "0 1 2 3 4 5 6 -1 99\n", "StringLookup invert, mask ''");
	lookup_case(1, "int", 1, "-", "-1", 0, 0, iv, iin,
		    "IntegerLookup defaults");
	lookup_case(1, "int", 4, "0", "-1", 0, 0, iv, iin,
		    "IntegerLookup mask 0, 4 OOV (floor-mod)");
	lookup_case(1, "int", 5, "-", "-1", 0, 1, iv, iin,
		    "IntegerLookup 5 OOV (farmhash of the decimal)");
	lookup_case(1, "int", 2, "0", "-1", 1, 0, iv,
		    "0 1 2 3 4 5 6 7 -5\n", "IntegerLookup invert");
}

static int rows_eq(const float *got, const float *want, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fabsf(got[i] - want[i]) > 1e-6f)
			return 0;
	return 1;
}

static void encodings(void)
{
	struct tfk_lookup_opts o;
	struct tfk_lookup l;
	struct tfk_vcount *c;
	struct tfk_err err;
	float out[64];
	int64_t idx[8];
	size_t i;
	static const char *doc1[] = { "a", "b", "a" }, *doc2[] = { "b", "c" };
	static const int64_t iv[] = { 5, 5, 3, 9, 3, 3, 1 };

	/* adapt with tf_idf: a (2x, 1 doc), b (2x, 2 docs), c (1x, 1 doc);
	 * order b, a, c (count, then high to low); idf = log(1 + 2/(1+df)). */
	tfk_lookup_opts_string(&o);
	o.mode = TFK_LOOKUP_TF_IDF;
	tfk_lookup_init(&l, &o, &err);
	tfk_vcount_new(&c, &err);
	for (i = 0; i < 3; i++)
		tfk_vcount_add(c, doc1[i], 1, &err);
	tfk_vcount_end_doc(c);
	for (i = 0; i < 2; i++)
		tfk_vcount_add(c, doc2[i], 1, &err);
	tfk_vcount_end_doc(c);
	ok(tfk_lookup_adapt(&l, c, &err) == 0, "adapt tf_idf");
	{
		size_t n;
		const char *t = tfk_lookup_token(&l, 1, &n);

		ok(n == 1 && *t == 'b' && *tfk_lookup_token(&l, 2, &n) == 'a' &&
		   *tfk_lookup_token(&l, 3, &n) == 'c', "vocabulary [UNK] b a c");
	}
	{
		float wb = (float)log(1 + 2.0 / 3), wa = (float)log(1 + 2.0 / 2);
		float mean = (float)(((double)wb + wa + wa) / 3);
		float want[4] = { mean, 2 * wb, wa, 0 };

		idx[0] = tfk_lookup_index(&l, "b", 1, &err);
		idx[1] = tfk_lookup_index(&l, "zz", 2, &err);
		idx[2] = tfk_lookup_index(&l, "b", 1, &err);
		idx[3] = tfk_lookup_index(&l, "a", 1, &err);
		ok(tfk_lookup_encode(&l, idx, 4, out, &err) == 0 &&
		   rows_eq(out, want, 4), "tf_idf row: counts * log(1 + N/(1+df)),"
		   " [UNK] weight = mean");
	}
	tfk_lookup_release(&l);

	/* count and one_hot from the same counter; count padded to 5. */
	tfk_lookup_opts_string(&o);
	o.mode = TFK_LOOKUP_COUNT;
	o.max_tokens = 5;
	o.pad_to_max_tokens = 1;
	tfk_lookup_init(&l, &o, &err);
	tfk_lookup_adapt(&l, c, &err);
	is_int(tfk_lookup_depth(&l), 5, "pad_to_max_tokens: depth 5");
	{
		float want[5] = { 1, 2, 0, 1, 0 };

		idx[0] = tfk_lookup_index(&l, "b", 1, &err);
		idx[1] = tfk_lookup_index(&l, "b", 1, &err);
		idx[2] = tfk_lookup_index(&l, "zz", 2, &err);
		idx[3] = tfk_lookup_index(&l, "c", 1, &err);
		ok(tfk_lookup_encode(&l, idx, 4, out, &err) == 0 &&
		   rows_eq(out, want, 5), "count row [UNK] b a c, zero-padded");
	}
	tfk_lookup_release(&l);
	o.mode = TFK_LOOKUP_ONE_HOT;
	o.max_tokens = 0;
	o.pad_to_max_tokens = 0;
	o.has_mask = 1;
	o.mask = "a";
	o.mask_len = 1;
	tfk_lookup_init(&l, &o, &err);
	tfk_lookup_adapt(&l, c, &err);
	is_int(tfk_lookup_size(&l), 3, "one_hot, mask 'a': [UNK] b c");
	{
		float want[9] = { 0, 1, 0, 0, 0, 0, 1, 0, 0 };

		idx[0] = tfk_lookup_index(&l, "b", 1, &err);
		idx[1] = tfk_lookup_index(&l, "a", 1, &err);
		idx[2] = tfk_lookup_index(&l, "q", 1, &err);
		ok(idx[1] == TFK_LOOKUP_DROP && tfk_lookup_encode(&l, idx, 3, out,
								  &err) == 0 &&
		   rows_eq(out, want, 9), "one_hot rows; the mask row is zero");
	}
	tfk_lookup_release(&l);
	tfk_vcount_free(c);

	/* IntegerLookup adapt: ties by value, high to low; oov -1 removed. */
	tfk_lookup_opts_int(&o);
	tfk_lookup_init(&l, &o, &err);
	tfk_vcount_new(&c, &err);
	for (i = 0; i < 7; i++)
		tfk_vcount_add_int(c, iv[i], &err);
	tfk_vcount_add_int(c, -1, &err);
	tfk_vcount_add_int(c, -1, &err);
	tfk_vcount_add_int(c, -1, &err);
	tfk_vcount_add_int(c, -1, &err);
	tfk_vcount_end_doc(c);
	tfk_lookup_adapt(&l, c, &err);
	ok(tfk_lookup_size(&l) == 5 && tfk_lookup_token_int(&l, 0) == -1 &&
	   tfk_lookup_token_int(&l, 1) == 3 && tfk_lookup_token_int(&l, 2) == 5 &&
	   tfk_lookup_token_int(&l, 3) == 9 && tfk_lookup_token_int(&l, 4) == 1,
	   "IntegerLookup vocabulary [-1, 3, 5, 9, 1]");
	{
		struct tfk_buf b;

		tfk_buf_init(&b);
		tfk_lookup_vocab_text(&l, &b, &err);
		is_mem(b.data, b.len, "-1\n3\n5\n9\n1", 10, "as text");
		tfk_buf_release(&b);
	}
	ok(tfk_lookup_index(&l, "a", 1, &err) == TFK_EINVAL,
	   "string into an integer lookup: %s", err.msg);
	ok(tfk_lookup_parse_vocab(&l, "1\nx\n", 4, "ints.txt", NULL, 0, &err) ==
	   TFK_EINVAL && strstr(err.msg, "ints.txt:2"), "bad integer line: %s",
	   err.msg);
	tfk_lookup_release(&l);
	tfk_vcount_free(c);

	/* Options Keras refuses. */
	tfk_lookup_opts_string(&o);
	o.invert = 1;
	o.mode = TFK_LOOKUP_COUNT;
	ok(tfk_lookup_init(&l, &o, &err) == TFK_EINVAL, "invert + count: %s",
	   err.msg);
	tfk_lookup_opts_string(&o);
	o.num_oov = -1;
	ok(tfk_lookup_init(&l, &o, &err) == TFK_EINVAL, "num_oov -1: %s",
	   err.msg);
	tfk_lookup_opts_string(&o);
	o.pad_to_max_tokens = 1;
	ok(tfk_lookup_init(&l, &o, &err) == TFK_EINVAL, "pad without max: %s",
	   err.msg);
	is_int(tfk_lookup_mode_parse("binary"), TFK_LOOKUP_MULTI_HOT,
	       "\"binary\" is multi_hot");
	is_int(tfk_lookup_mode_parse("tf-idf"), TFK_LOOKUP_TF_IDF, "\"tf-idf\"");
	is_int(tfk_lookup_mode_parse("dense"), -1, "unknown mode");
}

static void category_encoding(void)
{
	struct tfk_err err;
	float out[32];
	static const int64_t v[] = { 3, 2, 0, 3 };
	static const int64_t bad[] = { 1, 4 }, neg[] = { -1 };
	static const float w[] = { 0.5f, 2.0f, 1.0f, 0.25f };
	float mh[4] = { 1, 0, 1, 1 }, ct[4] = { 1, 0, 1, 2 };
	float wc[4] = { 1, 0, 2, 0.75f };
	float oh[8] = { 0, 0, 0, 1, 0, 0, 1, 0 };

	ok(tfk_catenc(4, TFK_LOOKUP_MULTI_HOT, v, 4, NULL, out, &err) == 0 &&
	   rows_eq(out, mh, 4), "multi_hot [3 2 0 3] -> 1 0 1 1");
	ok(tfk_catenc(4, TFK_LOOKUP_COUNT, v, 4, NULL, out, &err) == 0 &&
	   rows_eq(out, ct, 4), "count -> 1 0 1 2");
	ok(tfk_catenc(4, TFK_LOOKUP_COUNT, v, 4, w, out, &err) == 0 &&
	   rows_eq(out, wc, 4), "count with count_weights");
	ok(tfk_catenc(4, TFK_LOOKUP_ONE_HOT, v, 2, NULL, out, &err) == 0 &&
	   rows_eq(out, oh, 8), "one_hot: a row per value");
	ok(tfk_catenc(4, TFK_LOOKUP_COUNT, bad, 2, NULL, out, &err) ==
	   TFK_EINVAL && strstr(err.msg, "value 4 at position 1"),
	   "out of range: %s", err.msg);
	ok(tfk_catenc(4, TFK_LOOKUP_MULTI_HOT, neg, 1, NULL, out, &err) ==
	   TFK_EINVAL, "negative: %s", err.msg);
	ok(tfk_catenc(4, TFK_LOOKUP_MULTI_HOT, v, 4, w, out, &err) ==
	   TFK_EINVAL, "count_weights outside count: %s", err.msg);
	ok(tfk_catenc(0, TFK_LOOKUP_COUNT, v, 0, NULL, out, &err) == TFK_EINVAL,
	   "num_tokens 0: %s", err.msg);
	ok(tfk_catenc(4, TFK_LOOKUP_TF_IDF, v, 0, NULL, out, &err) ==
	   TFK_EINVAL, "tf_idf is not a CategoryEncoding mode: %s", err.msg);
}

static void discretize_case(const float *vals, size_t n, long bins,
			    double eps, size_t batch, const char *what)
{
	const char *in = tap_tmp("disc.txt"), *out = tap_tmp("disc.out");
	char args[PATH_MAX * 2], *want, *p;
	struct tfk_discretize d;
	struct tfk_err err;
	FILE *f = fopen(in, "w");
	size_t i, k = 0, bad = 0, len;

	for (i = 0; i < n; i++)
		fprintf(f, "%.9g\n", (double)vals[i]);
	fclose(f);
	snprintf(args, sizeof(args), "discretize %ld %.17g %zu %s", bins, eps,
		 batch, in);
	if (oracle(args, out)) {
		ok(0, "oracle: %s", args);
		return;
	}
	tfk_discretize_init_adapt(&d, bins, eps, &err);
	for (i = 0; i < n; i += batch)
		tfk_discretize_update(&d, vals + i, n - i < batch ? n - i : batch,
				      &err);
	tfk_discretize_finish(&d, &err);
	want = tap_read_file(out, &len);
	for (p = want; p && *p; k++) {
		char *e;
		double x = strtod(p, &e);

		if (e == p)
			break;
		if (k >= d.n_bounds || fabs(d.bounds[k] - x) >
		    1e-5 * fabs(x) + 1e-6) {
			if (!bad)
				tap_diag("%s: boundary %zu: %.9g want %.9g", what,
					 k, k < d.n_bounds ? d.bounds[k] : NAN, x);
			bad++;
		}
		p = e;
	}
	ok(bad == 0 && k == d.n_bounds, "%s: %zu boundaries = oracle's", what,
	   k);
	free(want);
	tfk_discretize_release(&d);
}

static void discretization(void)
{
	static const float b[] = { 0, 1, 2 };
	static const float unsorted[] = { 0, 2, 1 };
	struct tfk_discretize d;
	struct tfk_err err;
	float *v;
	size_t i;
	uint64_t s = 88172645463325252ULL;

	tfk_discretize_init(&d, b, 3, &err);
	ok(tfk_discretize_bucket(&d, -0.5) == 0 &&
	   tfk_discretize_bucket(&d, 0) == 1 &&
	   tfk_discretize_bucket(&d, 0.5) == 1 &&
	   tfk_discretize_bucket(&d, 1) == 2 &&
	   tfk_discretize_bucket(&d, 2) == 3 &&
	   tfk_discretize_bucket(&d, 1e9) == 3 &&
	   tfk_discretize_bucket(&d, -INFINITY) == 0,
	   "boundaries [0 1 2]: index = number of boundaries <= x");
	is_int(tfk_discretize_bucket(&d, NAN), 3, "NaN -> last bucket");
	ok(tfk_discretize_update(&d, b, 3, &err) == TFK_EINVAL,
	   "adapt with fixed boundaries: %s", err.msg);
	tfk_discretize_release(&d);
	ok(tfk_discretize_init(&d, unsorted, 3, &err) == TFK_EINVAL,
	   "unsorted: %s", err.msg);
	tfk_discretize_release(&d);
	ok(tfk_discretize_init_adapt(&d, 0, 0.01, &err) == TFK_EINVAL,
	   "num_bins 0: %s", err.msg);
	ok(tfk_discretize_init_adapt(&d, 4, 0.01, &err) == 0 &&
	   tfk_discretize_update(&d, (const float[]){ 1, NAN }, 2, &err) ==
	   TFK_EINVAL, "NaN in adapt: %s", err.msg);
	tfk_discretize_release(&d);

	/* Uniform values with ties, cut into batches as a dataset would
	 * be; 8 values (8 * 0.01 < 1) take Keras' keep-everything path. */
	v = malloc(20000 * sizeof(*v));
	for (i = 0; i < 20000; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		v[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 100 - 30);
		if (i % 10 == 0)
			v[i] = (float)(i % 7);	/* ties */
	}
	discretize_case(v, 8, 3, 0.01, 8, "8 values, 3 bins (small-data path)");
	discretize_case(v, 1000, 4, 0.01, 1000, "1000 values one batch, 4 bins");
	discretize_case(v, 20000, 10, 0.01, 1000, "20000 values in batches of "
			"1000, 10 bins");
	discretize_case(v, 5000, 7, 0.05, 333, "5000 values, batches of 333, "
			"eps 0.05, 7 bins");
	free(v);
}

static void alloc_failures(void)
{
	struct tfk_err err;
	long k;
	int fails = 0, okays = 0;
	static const float vals[300] = { 1, 2, 3 };

	for (k = 0; k < 40; k++) {
		struct tfk_lookup_opts o;
		struct tfk_lookup l;
		struct tfk_vcount *c = NULL;
		struct tfk_discretize d;
		char t[8];
		int rc, i;

		tfk_alloc_fail_after(k);
		tfk_lookup_opts_string(&o);
		o.mode = TFK_LOOKUP_TF_IDF;
		rc = tfk_lookup_init(&l, &o, &err);
		if (!rc)
			rc = tfk_vcount_new(&c, &err);
		for (i = 0; !rc && i < 100; i++) {
			snprintf(t, sizeof(t), "t%d", i);
			rc = tfk_vcount_add(c, t, strlen(t), &err);
		}
		if (!rc)
			rc = tfk_lookup_adapt(&l, c, &err);
		if (!rc)
			rc = tfk_discretize_init_adapt(&d, 3, 0.01, &err);
		if (!rc) {
			rc = tfk_discretize_update(&d, vals, 300, &err);
			if (!rc)
				rc = tfk_discretize_finish(&d, &err);
			tfk_discretize_release(&d);
		}
		tfk_alloc_fail_after(-1);
		if (rc == TFK_ENOMEM)
			fails++;
		else if (rc == 0)
			okays++;
		tfk_vcount_free(c);
		tfk_lookup_release(&l);
	}
	ok(fails > 5 && okays > 0, "allocation failures: %d ENOMEM, %d clean",
	   fails, okays);
}

int main(void)
{
	hashes();
	hashing_layer();
	lookups();
	encodings();
	category_encoding();
	discretization();
	alloc_failures();
	return tap_done();
}
