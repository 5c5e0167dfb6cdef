/*
 * t-seqex.c - tf.SequenceExample decoding and its JSON form.
 *
 * Hand-built wire bytes for the merge rules and refusals; failed
 * allocations; and the python oracle (tests/py/tfexample.py): protobuf's
 * reading of 300 odd SequenceExamples equals ours step by step, and
 * Python's json module checks our JSON lines against it.
 */
#include "example/seqex.h"
#include "io/record.h"
#include "util/alloc.h"
#include "oracle.h"
#include "tap.h"
#include "wire.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Wire bytes from pieces (more in wire.h) -------------------------- */

static struct blob NONE_B = { NULL, 0 };

/* Feature with int64 values / one bytes value. */
static struct blob I1(uint64_t v) { return L(3, L(1, V(v))); }
static struct blob I2(uint64_t a, uint64_t b) { return L(3, L(1, C(V(a), V(b)))); }
static struct blob B1(const char *s) { return L(1, L(1, S(s))); }

/* Features map entry; FeatureLists map entry of steps. */
static struct blob CTX(const char *name, struct blob feature)
{
	return L(1, C(L(1, S(name)), L(2, feature)));
}

static struct blob LIST(const char *name, struct blob steps)
{
	return L(1, C(L(1, S(name)), L(2, steps)));
}

static struct blob STEP(struct blob feature)
{
	return L(1, feature);
}

/* Showing -------------------------------------------------------------- */

static struct tfk_seqex sx;
static struct tfk_err err;
static struct tfk_buf out;

static const char *json_of(struct blob b)
{
	int rc = tfk_seqex_parse(&sx, b.p, b.n, &err);

	if (rc)
		return err.msg;
	tfk_buf_reset(&out);
	if (tfk_seqex_write_json(&sx, &out, &err))
		return err.msg;
	tfk_buf_addc(&out, '\0');
	return (const char *)out.data;
}

static void rules(void)
{
	struct blob ctx = L(1, CTX("id", B1("a")));
	struct blob lists = L(2, LIST("tokens", C(STEP(I2(1, 2)), STEP(I1(3)))));

	is_str(json_of(C(ctx, lists)),
	       "{\"context\":{\"id\":[\"a\"]},\"feature_lists\":{\"tokens\":"
	       "[[1,2],[3]]}}", "context and one list");
	is_int(sx.n_lists, 1, "one list");
	ok(tfk_seqex_find(&sx, "tokens") == &sx.lists[0] &&
	   !tfk_seqex_find(&sx, "token"), "find");
	{
		int64_t v[2] = { 0, 0 };
		const struct tfk_seqlist *l = &sx.lists[0];

		ok(l->n == 2 && tfk_feat_int64s(tfk_seqex_step(&sx, l, 0), v, 2)
		   == 2 && v[0] == 1 && v[1] == 2, "step accessors");
	}
	is_str(json_of(NONE_B), "{\"context\":{},\"feature_lists\":{}}",
	       "empty buffer");
	{
		static uint8_t f15[4] = { 0, 0, 0xc0, 0x3f };	/* 1.5f LE */
		struct blob w = L(2, LIST("w", C(STEP(NONE_B),
				  STEP(L(2, L(1, (struct blob){ f15, 4 }))))));

		is_str(json_of(C(lists, w)),
		       "{\"context\":{},\"feature_lists\":{\"tokens\":"
		       "[[1,2],[3]],\"w\":[null,[1.5]]}}", "feature_lists twice "
		       "merge; a step with no kind is null");
	}
	is_str(json_of(L(2, C(LIST("a", STEP(I1(1))), LIST("b", STEP(I1(2))),
			      LIST("a", C(STEP(I1(3)), STEP(I1(4))))))),
	       "{\"context\":{},\"feature_lists\":{\"a\":[[3],[4]],\"b\":[[2]]}}",
	       "a list name again: the last list, in the first one's place");
	is_str(json_of(L(2, L(1, C(L(1, S("m")), L(2, STEP(I1(1))),
				   L(2, C(STEP(I1(2)), STEP(I1(3)))))))),
	       "{\"context\":{},\"feature_lists\":{\"m\":[[1],[2],[3]]}}",
	       "a list's value given twice: the steps concatenate");
	is_str(json_of(L(2, L(1, L(2, STEP(I1(7)))))),
	       "{\"context\":{},\"feature_lists\":{\"\":[[7]]}}",
	       "no key: the empty name");
	is_str(json_of(L(2, L(1, L(1, S("k"))))),
	       "{\"context\":{},\"feature_lists\":{\"k\":[]}}",
	       "no value: an empty list");
	is_str(json_of(C(L(1, CTX("a", I1(1))), L(1, C(CTX("b", I1(2)),
						    CTX("a", I1(3)))))),
	       "{\"context\":{\"a\":[3],\"b\":[2]},\"feature_lists\":{}}",
	       "context twice: maps merge, last key wins");
	is_str(json_of(C(V(5 << 3), V(1), ctx, C(V(6 << 3 | 5), S("abcd")))),
	       "{\"context\":{\"id\":[\"a\"]},\"feature_lists\":{}}",
	       "unknown fields skipped");
	/* wide: many lists use the name index */
	{
		struct blob e = NONE_B;
		char name[16];
		int k, good = 1;

		for (k = 0; k < 100; k++) {
			snprintf(name, sizeof(name), "l%d", k % 60);
			e = C(e, LIST(name, STEP(I1((uint64_t)k))));
		}
		e = L(2, e);
		is_int(tfk_seqex_parse(&sx, e.p, e.n, &err), 0, "100 lists parse");
		is_int(sx.n_lists, 60, "60 names");
		for (k = 0; k < 60; k++) {
			const struct tfk_seqlist *l;
			int64_t v = -1;

			snprintf(name, sizeof(name), "l%d", k);
			l = tfk_seqex_find(&sx, name);
			if (!l || l != &sx.lists[k] || l->n != 1 ||
			    tfk_feat_int64s(tfk_seqex_step(&sx, l, 0), &v, 1) != 1 ||
			    v != (k < 40 ? k + 60 : k))
				good = 0;
		}
		ok(good, "wide: every list found, last value, first place");
	}
}

static void refusals(void)
{
	static const struct {
		const char *name;
		const char *msg;
	} want[] = {
		{ "context as varint", "byte 0: SequenceExample.context "
		  "(field 1) has wire type 0, want 2" },
		{ "feature_lists as fixed32", "byte 0: SequenceExample."
		  "feature_lists (field 2) has wire type 5, want 2" },
		{ "FeatureLists entry as varint", "byte 2: FeatureLists."
		  "feature_list (field 1) has wire type 0, want 2" },
		{ "list value as varint", "byte 4: map value (field 2) has wire "
		  "type 0, want 2" },
		{ "step as varint", "byte 6: FeatureList.feature (field 1) has "
		  "wire type 0, want 2" },
		{ "corrupt step", "byte 10: packed floats: 3 bytes is not a "
		  "multiple of 4" },
		{ "truncated", "byte 0: field 2: length 9 past end of message "
		  "(2 bytes left)" },
		{ "group", "byte 0: field 3: groups (wire type 3) are not "
		  "supported" },
		{ "corrupt context", "byte 21: map key (field 1) has wire type 0, "
		  "want 2" },
	};
	struct blob cases[9];
	size_t k;

	cases[0] = C(V(1 << 3), V(1));
	cases[1] = C(V(2 << 3 | 5), S("abcd"));
	cases[2] = L(2, C(V(1 << 3), V(1)));
	cases[3] = L(2, L(1, C(V(2 << 3), V(1))));
	cases[4] = L(2, L(1, L(2, C(V(1 << 3), V(1)))));
	cases[5] = L(2, L(1, L(2, STEP(L(2, L(1, S("abc")))))));
	cases[6] = C(V(2 << 3 | 2), V(9), S("ab"));
	cases[7] = C(V(3 << 3 | 3), V(1));
	cases[8] = L(1, L(1, C(V(1 << 3), V(1))));
	cases[8] = C(L(2, LIST("ok", STEP(I1(1)))), cases[8]);
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		int rc = tfk_seqex_parse(&sx, cases[k].p, cases[k].n, &err);

		ok(rc == TFK_ECORRUPT && sx.n_lists == 0 && sx.n_steps == 0 &&
		   sx.context.n_feat == 0, "%s: refused, nothing kept",
		   want[k].name);
		is_str(err.msg, want[k].msg, "%s: message", want[k].name);
	}
	{
		uint8_t name[2] = { 0xff, 0xfe };
		struct blob b = L(2, L(1, C(L(1, (struct blob){ name, 2 }),
					    L(2, STEP(I1(1))))));

		is_str(json_of(b), "feature list 0: name is not valid utf-8",
		       "JSON refuses a list name that is not UTF-8");
	}
}

static void alloc_failures(void)
{
	struct blob e = L(1, C(CTX("a", I1(1)), CTX("b", B1("x"))));
	char name[16];
	long n;
	int k, rc = -1, all = 1;

	for (k = 0; k < 30; k++) {
		snprintf(name, sizeof(name), "l%d", k);
		e = C(e, L(2, LIST(name, C(STEP(I1(1)), STEP(I1(2)),
					   STEP(B1("y"))))));
	}
	for (n = 0; n < 100; n++) {
		struct tfk_seqex s;

		tfk_seqex_init(&s);
		tfk_alloc_fail_after(n);
		rc = tfk_seqex_parse(&s, e.p, e.n, &err);
		tfk_alloc_fail_after(-1);
		if (rc && (rc != TFK_ENOMEM || s.n_lists || s.n_steps))
			all = 0;
		if (!rc)
			ok(s.n_lists == 30 && s.n_steps == 90 &&
			   s.context.n_feat == 2, "then all 30 lists, 90 steps");
		tfk_seqex_release(&s);
		if (!rc)
			break;
	}
	ok(n > 2 && all && rc == 0, "ENOMEM, nothing kept, until memory "
	   "suffices (%ld allocations)", n);
	tfk_seqex_release(NULL);
}

/* The python oracle ---------------------------------------------------- */

static char canon_buf[1 << 16];

static void hexs(char **o, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		*o += sprintf(*o, "%02x", p[i]);
}

static void canon_values(char **o, const struct tfk_feat *f)
{
	size_t i, it = 0, len;
	const uint8_t *p;

	*o += sprintf(*o, "%s:", tfk_feat_kind_name(f->kind));
	if (f->kind == TFK_FEAT_FLOAT) {
		float *v = malloc((f->n + 1) * sizeof(*v));

		tfk_feat_floats(f, v, f->n);
		for (i = 0; i < f->n; i++) {
			uint32_t u;

			memcpy(&u, &v[i], 4);
			if (isnan(v[i]))
				*o += sprintf(*o, "%snan", i ? "," : "");
			else
				*o += sprintf(*o, "%s%08x", i ? "," : "", u);
		}
		free(v);
	} else if (f->kind == TFK_FEAT_INT64) {
		int64_t *v = malloc((f->n + 1) * sizeof(*v));

		tfk_feat_int64s(f, v, f->n);
		for (i = 0; i < f->n; i++)
			*o += sprintf(*o, "%s%lld", i ? "," : "", (long long)v[i]);
		free(v);
	} else if (f->kind == TFK_FEAT_BYTES) {
		for (i = 0; tfk_feat_bytes_next(f, &it, &p, &len); i++) {
			if (i)
				*(*o)++ = ',';
			hexs(o, p, len);
		}
	}
}

static int cmp_names(const char *a, size_t an, const char *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int c = n ? memcmp(a, b, n) : 0;

	return c ? c : (an > bn) - (an < bn);
}

static int by_feat(const void *a, const void *b)
{
	const struct tfk_feat *x = *(const struct tfk_feat *const *)a;
	const struct tfk_feat *y = *(const struct tfk_feat *const *)b;

	return cmp_names(x->name, x->name_len, y->name, y->name_len);
}

static int by_list(const void *a, const void *b)
{
	const struct tfk_seqlist *x = *(const struct tfk_seqlist *const *)a;
	const struct tfk_seqlist *y = *(const struct tfk_seqlist *const *)b;

	return cmp_names(x->name, x->name_len, y->name, y->name_len);
}

/* tfexample.py's canonical_seq line. */
static const char *canon(const struct tfk_seqex *s)
{
	const struct tfk_feat **f = malloc((s->context.n_feat + 1) * sizeof(*f));
	const struct tfk_seqlist **l = malloc((s->n_lists + 1) * sizeof(*l));
	char *o = canon_buf;
	size_t i, j;

	for (i = 0; i < s->context.n_feat; i++)
		f[i] = &s->context.feat[i];
	qsort(f, s->context.n_feat, sizeof(*f), by_feat);
	for (i = 0; i < s->context.n_feat; i++) {
		if (i)
			*o++ = ' ';
		hexs(&o, (const uint8_t *)f[i]->name, f[i]->name_len);
		*o++ = '=';
		canon_values(&o, f[i]);
	}
	o += sprintf(o, " | ");
	for (i = 0; i < s->n_lists; i++)
		l[i] = &s->lists[i];
	qsort(l, s->n_lists, sizeof(*l), by_list);
	for (i = 0; i < s->n_lists; i++) {
		if (i)
			*o++ = ' ';
		hexs(&o, (const uint8_t *)l[i]->name, l[i]->name_len);
		o += sprintf(o, "=[");
		for (j = 0; j < l[i]->n; j++) {
			if (j)
				*o++ = ';';
			canon_values(&o, tfk_seqex_step(s, l[i], j));
		}
		*o++ = ']';
	}
	*o = '\0';
	free(f);
	free(l);
	return canon_buf;
}

static void python(void)
{
	const char *dir = tap_tmpdir();
	char args[4096], path[1024], jpath[1024], *text = NULL, *want, *line;
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	FILE *f;
	long k = 0, bad = 0, jbad = 0;
	size_t wl;
	int st;

	snprintf(args, sizeof(args), "seq-cases '%s' 300", dir);
	st = oracle_run(args, &text, NULL);
	free(text);
	snprintf(path, sizeof(path), "%s/seq.txt", dir);
	f = fopen(path, "rb");
	want = malloc(1 << 22);
	wl = f ? fread(want, 1, (1 << 22) - 1, f) : 0;
	want[wl] = '\0';
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "%s/seq.tfrecord", dir);
	snprintf(jpath, sizeof(jpath), "%s/seq.jsonl", dir);
	if (st || !wl || tfk_rec_open(&r, path, TFK_COMP_NONE, 0, &err)) {
		ok(0, "oracle seq cases");
		free(want);
		return;
	}
	f = fopen(jpath, "wb");
	for (line = want; tfk_rec_next(r, &rec, &err) == 1; k++) {
		char *nl = strchr(line, '\n');
		int rc = tfk_seqex_parse(&sx, rec.data, rec.len, &err);

		if (!nl)
			break;
		*nl = '\0';
		if (rc || strcmp(canon(&sx), line)) {
			if (bad++ < 3)
				tap_diag("record %ld: %s\n#  want %.200s\n#  got  "
					 "%.200s", k, rc ? err.msg : "", line,
					 rc ? "" : canon_buf);
		}
		tfk_buf_reset(&out);
		if (!rc && tfk_seqex_write_json(&sx, &out, &err))
			jbad++;
		fwrite(out.data, 1, out.len, f);
		fputc('\n', f);
		line = nl + 1;
	}
	fclose(f);
	tfk_rec_close(r);
	free(want);
	is_int(k, 301, "301 python-written SequenceExamples");
	is_int(bad, 0, "each decodes to protobuf's values, step by step");
	is_int(jbad, 0, "each written as JSON");
	snprintf(args, sizeof(args), "check-json-seq '%s' '%s'", path, jpath);
	oracle_check(args, "python: each JSON line is protobuf's "
		     "SequenceExample in our form");
}

int main(void)
{
	tfk_seqex_init(&sx);
	tfk_buf_init(&out);
	rules();
	refusals();
	alloc_failures();
	if (!oracle_find())
		ok(0, "tests/py/tfexample.py found");
	else
		python();
	tfk_buf_release(&out);
	tfk_seqex_release(&sx);
	return tap_done();
}
