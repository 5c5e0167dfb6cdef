/*
 * t-textvec.c - TextVectorization: Keras' documented examples, the exact
 * standardization/split rules, and generated corpora (unicode,
 * punctuation, odd whitespace, empty strings) compared with
 * tests/py/textprep.py, which redoes every step with Python's re, bytes
 * and numpy.lexsort as Keras does; vocabulary files, bad options and
 * failed allocations.
 */
#include "prep/textvec.h"
#include "util/alloc.h"
#include "tap.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *py(void)
{
	const char *p = getenv("PYTHON");

	return p ? p : "/usr/bin/python3";
}

/* Run textprep.py with args, stdout to out; 0 on success. */
static int oracle(const char *args, const char *out)
{
	char cmd[PATH_MAX * 4];

	snprintf(cmd, sizeof(cmd), "%s %s %s > %s", py(),
		 tap_source("tests/py/textprep.py"), args, out);
	return system(cmd);
}

static int unhex(int c)
{
	return c <= '9' ? c - '0' : (c | 32) - 'a' + 10;
}

/* Hex lines of path: strings (malloc'd, decoded in place). */
struct strs {
	char **s;
	size_t *n;
	size_t count;
	char *buf;
};

static int read_hex(const char *path, struct strs *v)
{
	size_t len, i, k = 0, lines = 0;
	char *p = tap_read_file(path, &len), *line;

	memset(v, 0, sizeof(*v));
	if (!p)
		return -1;
	for (i = 0; i < len; i++)
		lines += p[i] == '\n';
	v->s = calloc(lines + 1, sizeof(*v->s));
	v->n = calloc(lines + 1, sizeof(*v->n));
	v->buf = p;
	for (line = p; k < lines; k++) {
		char *nl = strchr(line, '\n'), *o = line;

		*nl = 0;
		for (i = 0; line[i] && line[i + 1]; i += 2)
			*o++ = (char)(unhex(line[i]) << 4 | unhex(line[i + 1]));
		v->s[k] = line;
		v->n[k] = (size_t)(o - line);
		line = nl + 1;
	}
	v->count = lines;
	return 0;
}

static void free_strs(struct strs *v)
{
	free(v->s);
	free(v->n);
	free(v->buf);
}

static void keras_examples(void)
{
	struct tfk_textvec tv;
	struct tfk_textvec_opts o;
	struct tfk_vcount *c;
	struct tfk_err err;
	const int64_t *out;
	size_t n, i;
	static const char *docs[] = { "foo bar", "bar baz", "baz bada boom" };
	static const char *vocab[] = { "earth", "wind", "and", "fire" };
	static const char *want[] = { "", "[UNK]", "earth", "wind", "and",
				      "fire" };
	size_t vlen[4];
	struct tfk_buf b;

	/* TextVectorization docstring: max_tokens 5000, int, length 4. */
	tfk_textvec_opts_default(&o);
	o.max_tokens = 5000;
	o.output_sequence_length = 4;
	ok(tfk_textvec_init(&tv, &o, &err) == 0, "init");
	tfk_vcount_new(&c, &err);
	for (i = 0; i < 3; i++)
		tfk_textvec_adapt(&tv, c, docs[i], strlen(docs[i]), &err);
	ok(tfk_textvec_adapt_finish(&tv, c, &err) == 0, "adapt");
	ok(tfk_textvec_int(&tv, "foo qux bar", 11, &out, &n, &err) == 0 &&
	   n == 4 && out[0] == 4 && out[1] == 1 && out[2] == 3 && out[3] == 0,
	   "docstring: \"foo qux bar\" -> [4, 1, 3, 0] (ties high to low)");
	ok(tfk_textvec_int(&tv, "qux baz", 7, &out, &n, &err) == 0 && n == 4 &&
	   out[0] == 1 && out[1] == 2 && out[2] == 0 && out[3] == 0,
	   "docstring: \"qux baz\" -> [1, 2, 0, 0]");
	is_int(tfk_lookup_size(&tv.lk), 7, "vocabulary: '', [UNK] + 5 words");
	ok(tfk_textvec_adapt_finish(&tv, c, &err) == 0 &&
	   tfk_lookup_size(&tv.lk) == 7, "adapt again: same vocabulary");
	tfk_vcount_free(c);
	tfk_textvec_release(&tv);

	/* First-occurrence ties (TFK_VOCAB_TIE_FIRST): bar before baz. */
	o.tie = TFK_VOCAB_TIE_FIRST;
	tfk_textvec_init(&tv, &o, &err);
	tfk_vcount_new(&c, &err);
	for (i = 0; i < 3; i++)
		tfk_textvec_adapt(&tv, c, docs[i], strlen(docs[i]), &err);
	tfk_textvec_adapt_finish(&tv, c, &err);
	ok(tfk_textvec_int(&tv, "foo qux bar", 11, &out, &n, &err) == 0 &&
	   out[0] == 4 && out[2] == 2, "first-occurrence ties: bar=2 foo=4");
	tfk_vcount_free(c);
	tfk_textvec_release(&tv);

	/* Docstring: a given vocabulary gains '' and [UNK] in front. */
	tfk_textvec_opts_default(&o);
	o.output_sequence_length = 4;
	tfk_textvec_init(&tv, &o, &err);
	for (i = 0; i < 4; i++)
		vlen[i] = strlen(vocab[i]);
	ok(tfk_lookup_set_vocab(&tv.lk, vocab, vlen, NULL, 4, NULL, 0,
				&err) == 0, "set vocabulary");
	is_int(tfk_lookup_size(&tv.lk), 6, "get_vocabulary has 6 entries");
	for (i = 0; i < 6; i++) {
		const char *t = tfk_lookup_token(&tv.lk, (long)i, &n);

		is_mem(t, n, want[i], strlen(want[i]), "vocabulary[%zu]", i);
	}
	tfk_buf_init(&b);
	tfk_lookup_vocab_text(&tv.lk, &b, &err);
	is_mem(b.data, b.len, "\n[UNK]\nearth\nwind\nand\nfire", 26,
	       "vocabulary text: Keras' save_assets form");
	tfk_buf_release(&b);
	ok(tfk_textvec_int(&tv, "Fire AND wind, earth!", 21, &out, &n,
			   &err) == 0 && out[0] == 5 && out[1] == 4 &&
	   out[2] == 3 && out[3] == 2, "lookup after standardizing");
	ok(tfk_lookup_adapt(&tv.lk, NULL, &err) == TFK_EINVAL,
	   "adapt after set_vocabulary refused: %s", err.msg);
	tfk_textvec_release(&tv);
}

static void standardize(void)
{
	char out[128];
	const char *want;
	size_t n;
	static const char in[] = "H\xc3\xa9llo, WORLD! \xc2\xbfQU\xc3\x89? "
				 "don't e-mail U.S.A. a_b [x]{y}|~`^@#$%&*+=<>/\\\"';:";

	n = tfk_textvec_standardize(TFK_STD_LOWER_AND_STRIP_PUNCTUATION, in,
				    sizeof(in) - 1, out);
	want = "h\xc3\xa9llo world \xc2\xbfqu\xc3\x89 dont email usa ab xy";
	is_mem(out, n, want, strlen(want),
	       "lower_and_strip: ASCII only, the 32 punctuation bytes");
	n = tfk_textvec_standardize(TFK_STD_LOWER, "AbC\xc3\x89!", 6, out);
	is_mem(out, n, "abc\xc3\x89!", 6, "lower keeps punctuation and \xc3\x89");
	n = tfk_textvec_standardize(TFK_STD_STRIP_PUNCTUATION, "AbC!", 4, out);
	is_mem(out, n, "AbC", 3, "strip_punctuation keeps case");
	n = tfk_textvec_standardize(TFK_STD_NONE, "A,b", 3, out);
	is_mem(out, n, "A,b", 3, "None: unchanged");
	is_int(tfk_textvec_std_parse("lower"), TFK_STD_LOWER, "parse lower");
	is_int(tfk_textvec_std_parse(NULL), TFK_STD_NONE, "parse None");
	is_int(tfk_textvec_std_parse("upper"), -1, "parse unknown");
	is_int(tfk_textvec_split_parse("character"), -1,
	       "split character: absent, refused");
}

static void split_ngrams(void)
{
	struct tfk_textvec tv;
	struct tfk_textvec_opts o;
	struct tfk_err err;
	const char *t;
	size_t n;
	long k;
	static const char *want[] = { "a", "b", "c", "a b", "b c", "a b c" };
	int i;

	tfk_textvec_opts_default(&o);
	tfk_textvec_opts_ngrams_upto(&o, 3);
	tfk_textvec_init(&tv, &o, &err);
	k = tfk_textvec_tokens(&tv, " \tA\x0b b\x0c\r\nC  ", 12, &err);
	is_int(k, 6, "3 words, widths 1..3: 6 tokens");
	for (i = 0; i < 6 && i < k; i++) {
		t = tfk_textvec_token(&tv, (size_t)i, &n);
		is_mem(t, n, want[i], strlen(want[i]), "token %d", i);
	}
	k = tfk_textvec_tokens(&tv, "a\xc2\xa0" "b\x1c" "c", 6, &err);
	is_int(k, 1, "NBSP and \\x1c are not whitespace to tf.strings.split");
	is_int(tfk_textvec_tokens(&tv, " ,. ", 4, &err), 0,
	       "punctuation only: no tokens");
	tfk_textvec_release(&tv);

	o.n_ngrams = 2;
	o.ngrams[0] = 3;
	o.ngrams[1] = 1;
	tfk_textvec_init(&tv, &o, &err);
	k = tfk_textvec_tokens(&tv, "x y", 3, &err);
	t = tfk_textvec_token(&tv, 0, &n);
	ok(k == 2 && n == 1 && *t == 'x', "ngrams (3, 1): too short for 3, "
	   "then the words");
	tfk_textvec_release(&tv);

	o.split = TFK_SPLIT_NONE;
	o.n_ngrams = 0;
	tfk_textvec_init(&tv, &o, &err);
	k = tfk_textvec_tokens(&tv, "Two Words.", 10, &err);
	t = tfk_textvec_token(&tv, 0, &n);
	ok(k == 1 && n == 9 && !memcmp(t, "two words", 9),
	   "split None: one token per string");
	tfk_textvec_release(&tv);
}

/* One generated-corpus case against the oracle. */
static void corpus_case(const char *std, const char *split, int ngrams,
			const char *mode, long max, long seqlen, int pad,
			const char *tie, const char *adapt, const char *apply)
{
	char args[PATH_MAX * 3], *want, *line, *save = NULL;
	const char *exp = tap_tmp("expected.txt");
	struct tfk_textvec tv;
	struct tfk_textvec_opts o;
	struct tfk_vcount *c;
	struct tfk_err err;
	struct strs a, b;
	size_t i, n, nv = 0, nd = 0, bad = 0, badv = 0, badi = 0, ni = 0;
	float *row = NULL;
	long depth;

	snprintf(args, sizeof(args), "textvec %s %s %d %s %ld %ld %d %s %s %s",
		 std, split, ngrams, mode, max, seqlen, pad, tie, adapt, apply);
	if (oracle(args, exp)) {
		ok(0, "oracle ran: %s", args);
		return;
	}
	tfk_textvec_opts_default(&o);
	o.standardize = tfk_textvec_std_parse(strcmp(std, "none") ? std : NULL);
	o.split = tfk_textvec_split_parse(strcmp(split, "none") ? split : NULL);
	tfk_textvec_opts_ngrams_upto(&o, ngrams);
	o.mode = tfk_lookup_mode_parse(mode);
	o.max_tokens = max;
	o.output_sequence_length = seqlen;
	o.pad_to_max_tokens = pad;
	o.tie = strcmp(tie, "first") ? TFK_VOCAB_TIE_KERAS : TFK_VOCAB_TIE_FIRST;
	if (tfk_textvec_init(&tv, &o, &err)) {
		ok(0, "init %s: %s", args, err.msg);
		return;
	}
	read_hex(adapt, &a);
	read_hex(apply, &b);
	tfk_vcount_new(&c, &err);
	for (i = 0; i < a.count; i++)
		tfk_textvec_adapt(&tv, c, a.s[i], a.n[i], &err);
	tfk_textvec_adapt_finish(&tv, c, &err);
	depth = tfk_textvec_depth(&tv);
	row = calloc((size_t)depth + 1, sizeof(*row));
	want = tap_read_file(exp, &n);
	for (line = strtok_r(want, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "vocab ", 6)) {
			char *h = line + 6, tok[512];
			size_t tl = 0, gl = 0;
			const char *g = tfk_lookup_token(&tv.lk, (long)nv, &gl);

			for (; h[0] && h[1] && tl < sizeof(tok); h += 2)
				tok[tl++] = (char)(unhex(h[0]) << 4 | unhex(h[1]));
			if (!g || gl != tl || memcmp(g, tok, tl))
				badv++;
			nv++;
		} else if (!strncmp(line, "idf ", 4)) {
			double w = strtod(line + 4, NULL);

			if (fabs(tfk_lookup_idf(&tv.lk, (long)ni) - w) >
			    1e-6 * fabs(w) + 1e-7)
				badi++;
			ni++;
		} else if (!strncmp(line, "out", 3) && nd < b.count) {
			char *p = line + 3, *e;

			if (o.mode == TFK_LOOKUP_INT) {
				const int64_t *out;
				size_t k = 0, m;

				if (tfk_textvec_int(&tv, b.s[nd], b.n[nd], &out, &m,
						    &err))
					bad++;
				else {
					for (;; k++) {
						long long x = strtoll(p, &e, 10);

						if (e == p)
							break;
						if (k >= m || out[k] != x)
							break;
						p = e;
					}
					while (*p == ' ')
						p++;
					if (k != m || *p) {
						if (!bad)
							tap_diag("doc %zu: got %zu "
								 "ids, first %lld; "
								 "want %s", nd, m,
								 m ? (long long)out[0]
								 : -1LL, line);
						bad++;
					}
				}
			} else {
				long k;

				if (tfk_textvec_dense(&tv, b.s[nd], b.n[nd], row,
						      &err))
					bad++;
				else
					for (k = 0; k < depth; k++) {
						double x = strtod(p, &e);

						if (e == p || fabs(row[k] - x) >
						    1e-6 * fabs(x) + 1e-6) {
							bad++;
							break;
						}
						p = e;
					}
			}
			nd++;
		}
	}
	ok(nv == (size_t)tfk_lookup_size(&tv.lk) && badv == 0,
	   "%s/%s/ngrams %d/%s/max %ld/tie %s: vocabulary (%zu entries) = "
	   "oracle's", std, split, ngrams, mode, max, tie, nv);
	ok(nd == b.count && bad == 0, "... %zu outputs = oracle's (%zu differ)",
	   nd, bad);
	if (ni)
		ok(badi == 0 && ni == (size_t)depth, "... %zu idf weights = "
		   "oracle's (%zu differ)", ni, badi);
	free(want);
	free(row);
	free_strs(&a);
	free_strs(&b);
	tfk_vcount_free(c);
	tfk_textvec_release(&tv);
}

static void corpora(void)
{
	char adapt[PATH_MAX], apply[PATH_MAX];

	snprintf(adapt, sizeof(adapt), "%s", tap_tmp("adapt.hex"));
	snprintf(apply, sizeof(apply), "%s", tap_tmp("apply.hex"));
	ok(oracle("corpus 7 600", adapt) == 0 &&
	   oracle("corpus 8 200", apply) == 0, "generated corpora");
	corpus_case("lower_and_strip_punctuation", "whitespace", 0, "int", 0, -1,
		    0, "keras", adapt, apply);
	corpus_case("lower_and_strip_punctuation", "whitespace", 0, "int", 12,
		    5, 0, "keras", adapt, apply);
	corpus_case("lower", "whitespace", 2, "int", 40, 8, 0, "keras", adapt,
		    apply);
	corpus_case("strip_punctuation", "whitespace", 3, "int", 0, -1, 0,
		    "first", adapt, apply);
	corpus_case("none", "whitespace", 0, "multi_hot", 0, -1, 0, "keras",
		    adapt, apply);
	corpus_case("lower_and_strip_punctuation", "whitespace", 0, "count", 20,
		    -1, 1, "keras", adapt, apply);
	corpus_case("lower_and_strip_punctuation", "whitespace", 2, "tf_idf", 0,
		    -1, 0, "keras", adapt, apply);
	corpus_case("lower_and_strip_punctuation", "whitespace", 0, "tf_idf", 30,
		    -1, 1, "keras", adapt, apply);
	corpus_case("lower_and_strip_punctuation", "none", 0, "int", 0, -1, 0,
		    "keras", adapt, apply);
	corpus_case("none", "none", 0, "count", 0, -1, 0, "first", adapt,
		    apply);
}

static void vocab_files(void)
{
	struct tfk_textvec tv;
	struct tfk_textvec_opts o;
	struct tfk_err err;
	const char *path = tap_tmp("vocab.txt");
	const int64_t *out;
	size_t n, len;
	char *text;
	static const char crlf[] = "\r\n[UNK]\r\nb\r\na\r\n\r\n\n";
	static const float idf[] = { 0.5f, 1.5f, 2.5f };

	tfk_textvec_opts_default(&o);
	tfk_textvec_init(&tv, &o, &err);
	ok(tfk_lookup_parse_vocab(&tv.lk, crlf, sizeof(crlf) - 1, "v", NULL, 0,
				  &err) == 0,
	   "CRLF file with its special lines and trailing empty lines");
	is_int(tfk_lookup_size(&tv.lk), 4, "special prefix recognised");
	ok(tfk_lookup_save_vocab(&tv.lk, path, &err) == 0, "save");
	text = tap_read_file(path, &len);
	is_mem(text, len, "\n[UNK]\nb\na", 10, "saved as Keras writes it");
	free(text);
	tfk_textvec_release(&tv);

	tfk_textvec_init(&tv, &o, &err);
	ok(tfk_lookup_load_vocab(&tv.lk, path, NULL, 0, &err) == 0 &&
	   tfk_textvec_int(&tv, "A b c", 5, &out, &n, &err) == 0 && n == 3 &&
	   out[0] == 3 && out[1] == 2 && out[2] == 1, "load round trip");
	tfk_textvec_release(&tv);

	tfk_textvec_init(&tv, &o, &err);
	ok(tfk_lookup_parse_vocab(&tv.lk, "a\nb\na", 5, "v.txt", NULL, 0,
				  &err) == TFK_EINVAL &&
	   strstr(err.msg, "v.txt") && strstr(err.msg, "repeated token \"a\""),
	   "repeated token: %s", err.msg);
	ok(tfk_lookup_parse_vocab(&tv.lk, "a\n\nb", 4, "v.txt", NULL, 0,
				  &err) == TFK_EINVAL &&
	   strstr(err.msg, "mask"), "mask token inside: %s", err.msg);
	ok(tfk_lookup_parse_vocab(&tv.lk, "", 0, "v.txt", NULL, 0,
				  &err) == TFK_EINVAL, "empty: %s", err.msg);
	ok(tfk_lookup_load_vocab(&tv.lk, "/nonexistent/v", NULL, 0, &err) ==
	   TFK_EIO, "missing file: %s", err.msg);
	tfk_textvec_release(&tv);

	o.max_tokens = 3;
	tfk_textvec_init(&tv, &o, &err);
	ok(tfk_lookup_parse_vocab(&tv.lk, "a\nb", 3, "v", NULL, 0, &err) ==
	   TFK_EINVAL && strstr(err.msg, "max_tokens"), "over max_tokens: %s",
	   err.msg);
	tfk_textvec_release(&tv);

	/* tf_idf with given weights: no special prefix, so [UNK] gets the
	 * mean of the weights (Keras' set_vocabulary). */
	o.max_tokens = 0;
	o.mode = TFK_LOOKUP_TF_IDF;
	tfk_textvec_init(&tv, &o, &err);
	ok(tfk_lookup_parse_vocab(&tv.lk, "a\nb\nc", 5, "v", NULL, 0, &err) ==
	   TFK_EINVAL, "tf_idf without weights: %s", err.msg);
	ok(tfk_lookup_parse_vocab(&tv.lk, "a\nb\nc", 5, "v", idf, 3, &err) == 0,
	   "tf_idf with weights");
	{
		float row[4];

		ok(tfk_textvec_dense(&tv, "c a c z", 7, row, &err) == 0 &&
		   row[0] == 1.5f && row[1] == 0.5f && row[2] == 0 &&
		   row[3] == 5.0f, "tf_idf = count * idf, [UNK] weight = mean");
	}
	tfk_textvec_release(&tv);
}

static void bad_options(void)
{
	struct tfk_textvec tv;
	struct tfk_textvec_opts o;
	struct tfk_err err;
	const int64_t *out;
	size_t n;

	tfk_textvec_opts_default(&o);
	o.mode = TFK_LOOKUP_COUNT;
	o.output_sequence_length = 3;
	ok(tfk_textvec_init(&tv, &o, &err) == TFK_EINVAL,
	   "output_sequence_length outside int: %s", err.msg);
	tfk_textvec_release(&tv);
	tfk_textvec_opts_default(&o);
	o.mode = TFK_LOOKUP_ONE_HOT;
	ok(tfk_textvec_init(&tv, &o, &err) == TFK_EINVAL, "one_hot: %s",
	   err.msg);
	tfk_textvec_release(&tv);
	tfk_textvec_opts_default(&o);
	o.split = TFK_SPLIT_NONE;
	o.n_ngrams = 1;
	o.ngrams[0] = 2;
	ok(tfk_textvec_init(&tv, &o, &err) == TFK_EINVAL, "ngrams without "
	   "split: %s", err.msg);
	tfk_textvec_release(&tv);
	tfk_textvec_opts_default(&o);
	o.n_ngrams = 1;
	o.ngrams[0] = 0;
	ok(tfk_textvec_init(&tv, &o, &err) == TFK_EINVAL, "width 0: %s",
	   err.msg);
	tfk_textvec_release(&tv);
	tfk_textvec_opts_default(&o);
	o.max_tokens = 1;
	ok(tfk_textvec_init(&tv, &o, &err) == TFK_EINVAL, "max_tokens 1: %s",
	   err.msg);
	tfk_textvec_release(&tv);
	tfk_textvec_opts_default(&o);
	tfk_textvec_init(&tv, &o, &err);
	ok(tfk_textvec_int(&tv, "a", 1, &out, &n, &err) == TFK_EINVAL,
	   "no vocabulary yet: %s", err.msg);
	tfk_textvec_release(&tv);
}

/* Every allocation of adapt + apply fails in turn: an error, no leak
 * (ASan), no crash. */
static void alloc_failures(void)
{
	static const char *docs[] = { "The cat sat", "on the MAT!", "a b c d e" };
	struct tfk_textvec_opts o;
	struct tfk_err err;
	long k;
	int fails = 0, okays = 0;

	tfk_textvec_opts_default(&o);
	tfk_textvec_opts_ngrams_upto(&o, 2);
	o.mode = TFK_LOOKUP_TF_IDF;
	for (k = 0; k < 60; k++) {
		struct tfk_textvec tv;
		struct tfk_vcount *c = NULL;
		float row[64];
		int rc, i;

		tfk_alloc_fail_after(k);
		rc = tfk_textvec_init(&tv, &o, &err);
		if (!rc)
			rc = tfk_vcount_new(&c, &err);
		for (i = 0; !rc && i < 3; i++)
			rc = tfk_textvec_adapt(&tv, c, docs[i], strlen(docs[i]),
					       &err);
		if (!rc)
			rc = tfk_textvec_adapt_finish(&tv, c, &err);
		if (!rc && tfk_textvec_depth(&tv) <= 64)
			rc = tfk_textvec_dense(&tv, "the cat", 7, row, &err);
		tfk_alloc_fail_after(-1);
		if (rc == TFK_ENOMEM)
			fails++;
		else if (rc == 0)
			okays++;
		tfk_vcount_free(c);
		tfk_textvec_release(&tv);
	}
	ok(fails > 5 && okays > 0, "allocation failures: %d ENOMEM, then %d "
	   "clean runs", fails, okays);
}

/* Adapt streams: many documents, memory = distinct tokens. */
static void streaming(void)
{
	struct tfk_textvec tv;
	struct tfk_textvec_opts o;
	struct tfk_vcount *c;
	struct tfk_err err;
	char doc[64];
	int i, n;
	int64_t docs;

	tfk_textvec_opts_default(&o);
	o.max_tokens = 102;
	tfk_textvec_init(&tv, &o, &err);
	tfk_vcount_new(&c, &err);
	for (i = 0; i < 200000; i++) {
		n = snprintf(doc, sizeof(doc), "w%d W%d common", i % 5000,
			     i % 7);
		tfk_textvec_adapt(&tv, c, doc, (size_t)n, &err);
	}
	is_int(tfk_vcount_size(c), 5001, "200000 documents: 5001 distinct "
	       "tokens counted (W0..W6 lowercase into w0..w6)");
	is_int(tfk_vcount_get(c, "common", 6, &docs), 200000, "count");
	is_int(docs, 200000, "document count");
	tfk_textvec_adapt_finish(&tv, c, &err);
	{
		size_t len;
		const char *t = tfk_lookup_token(&tv.lk, 2, &len);

		is_mem(t, len, "common", 6, "most frequent first");
		t = tfk_lookup_token(&tv.lk, 3, &len);
		is_mem(t, len, "w2", 2, "then w0..w2 (28612 each), high to "
		       "low");
	}
	is_int(tfk_lookup_size(&tv.lk), 102, "cut at max_tokens");
	tfk_vcount_free(c);
	tfk_textvec_release(&tv);
}

int main(void)
{
	keras_examples();
	standardize();
	split_ngrams();
	corpora();
	vocab_files();
	bad_options();
	alloc_failures();
	streaming();
	return tap_done();
}
