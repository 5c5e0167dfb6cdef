/*
 * t-expr.c - the filter expression language (lib/data/expr.h).
 *
 * One hand-built Example (every kind, lists, empty and kind-less
 * features, NULs in bytes, a hand-encoded unpacked float list) and a
 * table of expressions with the truth value the documented semantics
 * give; every parse error class with its line and column; run-time type
 * errors with their messages; random() statistics (mean, chi-square,
 * independence of the k-th call, reproducibility); failed allocations.
 */
#include "data/expr.h"
#include "util/alloc.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct tfk_example ex, ex_unpacked;
static struct tfk_err err;

/* Example { features { feature { key: "u" value { float_list { value: 1
 * value: 2 } } } } } with the floats written unpacked (tag 0x0d each). */
static const uint8_t unpacked[] = {
	0x0a, 0x13, 0x0a, 0x11, 0x0a, 0x01, 'u', 0x12, 0x0c, 0x12, 0x0a,
	0x0d, 0x00, 0x00, 0x80, 0x3f, 0x0d, 0x00, 0x00, 0x00, 0x40
};

static uint8_t *record;

static void build(void)
{
	struct tfk_example_builder b;
	const uint8_t *p;
	const uint8_t *sv[1] = { (const uint8_t *)"cat" };
	const uint8_t *nv[1] = { (const uint8_t *)"a\0b" };
	size_t sl[1] = { 3 }, nl[1] = { 3 }, n;

	tfk_exb_init(&b);
	tfk_exb_add_int64s(&b, "i", (int64_t[]){ 7 }, 1);
	tfk_exb_add_int64s(&b, "neg", (int64_t[]){ -3 }, 1);
	tfk_exb_add_int64s(&b, "big", (int64_t[]){ INT64_MAX }, 1);
	tfk_exb_add_floats(&b, "f", (float[]){ 0.5f }, 1);
	tfk_exb_add_floats(&b, "nan", (float[]){ NAN }, 1);
	tfk_exb_add_int64s(&b, "list", (int64_t[]){ 1, 2, 3 }, 3);
	tfk_exb_add_floats(&b, "fl", (float[]){ 1.5f, 2.5f }, 2);
	tfk_exb_add_bytes(&b, "s", sv, sl, 1);
	tfk_exb_add_bytes(&b, "nul", nv, nl, 1);
	tfk_exb_add_int64s(&b, "e", NULL, 0);
	tfk_exb_add_none(&b, "none");
	tfk_exb_add_int64s(&b, "a/b", (int64_t[]){ 1 }, 1);
	tfk_exb_add_int64s(&b, "len", (int64_t[]){ 4 }, 1);
	tfk_exb_add_int64s(&b, "and", (int64_t[]){ 5 }, 1);
	if (tfk_exb_finish(&b, &p, &n, &err))
		abort();
	record = malloc(n);
	memcpy(record, p, n);
	tfk_example_init(&ex);
	if (tfk_example_parse(&ex, record, n, &err))
		abort();
	tfk_exb_release(&b);
	tfk_example_init(&ex_unpacked);
	if (tfk_example_parse(&ex_unpacked, unpacked, sizeof(unpacked), &err))
		abort();
}

/* 1/0 for a holding/failing expression, -1 for a parse error, -2 for
 * an evaluation error (message in err). */
static int run(const char *src, const struct tfk_example *e)
{
	struct tfk_expr *x;
	int rc;

	if (tfk_expr_parse(&x, src, NULL, &err))
		return -1;
	rc = tfk_expr_eval(x, e, 0, &err);
	tfk_expr_free(x);
	return rc < 0 ? -2 : rc;
}

static const struct { const char *src; int want; } truth[] = {
	{ "i == 7", 1 }, { "i != 7", 0 }, { "i < 8 and i > 6", 1 },
	{ "i <= 7 and i >= 7", 1 }, { "i >= 7.5", 0 }, { "i >= 7.0", 1 },
	{ "i + 1 == 8", 1 }, { "i * 2 - 4 == 10", 1 }, { "i / 2 == 3.5", 1 },
	{ "i % 3 == 1", 1 }, { "neg % 2 == 1", 1 }, { "neg % -2 == -1", 1 },
	{ "-7 % 3 == 2", 1 }, { "7 % -3 == -2", 1 }, { "7.5 % 2 == 1.5", 1 },
	{ "-7.5 % 2 == 0.5", 1 },
	{ "i % 0 == 0", 0 }, { "i % 0 != 0", 1 }, { "i % 0.0 < 1", 0 },
	{ "1 / 0 > 1e308", 1 }, { "-1 / 0 < -1e308", 1 },
	{ "big + 1 == -9223372036854775807 - 1", 1 },
	{ "-9223372036854775808 < 0", 1 }, { "big == 9223372036854775807", 1 },
	{ "-big - 2 == big", 1 },
	{ "f == 0.5", 1 }, { "f < 1", 1 }, { "f * 4 == 2", 1 },
	{ "nan == nan", 0 }, { "nan != nan", 1 }, { "nan < 1", 0 },
	{ "nan >= 1", 0 }, { "0 / 0 == 0 / 0", 0 },
	{ "list == 1", 0 }, { "list != 1", 1 }, { "list > 0", 0 },
	{ "list <= 9", 0 }, { "list + 1 > 0", 0 }, { "list + 1 != 0", 1 },
	{ "len(list) == 3", 1 }, { "list[0] == 1", 1 }, { "list[2] == 3", 1 },
	{ "list[3] == 3", 0 }, { "list[3] != 3", 1 }, { "list[-1] == 3", 1 },
	{ "list[-3] == 1", 1 }, { "list[-4] == 1", 0 }, { "list[1.0] == 2", 1 },
	{ "list[len(list) - 1] == 3", 1 }, { "list[i - 6] == 2", 1 },
	{ "list[list[0]] == 2", 1 }, { "list[list] == 1", 0 },
	{ "fl[1] == 2.5", 1 }, { "fl == 1.5", 0 }, { "len(fl) == 2", 1 },
	{ "s == \"cat\"", 1 }, { "s != \"dog\"", 1 }, { "s < \"cau\"", 1 },
	{ "s > \"ca\"", 1 }, { "s < \"cat\\x00\"", 1 }, { "\"\" < s", 1 },
	{ "s ~ \"^c.t$\"", 1 }, { "s ~ \"x\"", 0 }, { "s ~ \"a\"", 1 },
	{ "s ~ \"^(dog|cat)$\"", 1 }, { "s ~ \"^CAT$\"", 0 },
	{ "startswith(s, \"ca\")", 1 }, { "startswith(s, \"cat!\")", 0 },
	{ "startswith(s, \"\")", 1 }, { "startswith(\"cattle\", s)", 1 },
	{ "startswith(list, \"x\")", 0 },
	{ "nul == \"a\\0b\"", 1 }, { "nul == \"a\"", 0 },
	{ "nul ~ \"b$\"", 1 }, { "nul ~ \"^a$\"", 0 },
	{ "len(nul) == 1", 1 }, { "len(e) == 0", 1 }, { "has(e)", 1 },
	{ "e == 0", 0 }, { "e != 0", 1 }, { "e[0] == 0", 0 },
	{ "len(none) == 0", 1 }, { "has(none)", 1 }, { "none != 1", 1 },
	{ "none ~ \"\"", 0 }, { "\"\" ~ \"\"", 1 }, { "len(missing) == 0", 1 },
	{ "not has(missing)", 1 }, { "has(missing) and missing == 1", 0 },
	{ "has(i) or missing == 1", 1 }, { "feature(\"a/b\") == 1", 1 },
	{ "feature(\"a/b\")[0] == 1", 1 }, { "feature(\"and\") == 5", 1 },
	{ "feature (\"s\") == \"cat\"", 1 },
	{ "len == 4", 1 }, { "len(len) == 1", 1 }, { "has(len)", 1 },
	{ "true", 1 }, { "false", 0 }, { "not false", 1 }, { "not not true", 1 },
	{ "has(i) == true", 1 }, { "has(i) != has(missing)", 1 },
	{ "(i == 7) == (s == \"cat\")", 1 }, { "-i == -7", 1 },
	{ "- - i == 7", 1 }, { "-f == -0.5", 1 }, { "1 + 2 * 3 == 7", 1 },
	{ "(1 + 2) * 3 == 9", 1 }, { "10 - 2 - 3 == 5", 1 },
	{ "12 / 2 / 3 == 2", 1 }, { "not i == 8", 1 },
	{ "i == 7 or i == 8 and false", 1 }, { "(i == 7 or i == 8) and false", 0 },
	{ "2e3 == 2000", 1 }, { ".5 == 0.5", 1 }, { "1.5e-1 == 0.15", 1 },
	{ "1E+2 == 100", 1 }, { "\"\\x41\\x62\" == \"Ab\"", 1 },
	{ "\"\\t\\n\\r\\\"\\\\\" == \"\\x09\\x0a\\x0d\\x22\\x5c\"", 1 },
	{ "random() >= 0 and random() < 1", 1 },
	{ "i==7 and(s==\"cat\")", 1 }, { "\ti\n==\r\n7", 1 },
};

static void semantics(void)
{
	size_t k;

	for (k = 0; k < sizeof(truth) / sizeof(truth[0]); k++) {
		int got = run(truth[k].src, &ex);
		char name[128], *q;

		snprintf(name, sizeof(name), "%s", truth[k].src);
		for (q = name; *q; q++)	/* one TAP line per test */
			if ((unsigned char)*q < ' ')
				*q = ' ';
		if (got < 0)
			tap_diag("%s", err.msg);
		is_int(got, truth[k].want, "%s", name);
	}
	is_int(run("u[1] == 2", &ex_unpacked), 1, "unpacked floats: u[1]");
	is_int(run("u[0] == 1 and len(u) == 2", &ex_unpacked), 1,
	       "unpacked floats: u[0], len");
	is_int(run("u == 1", &ex_unpacked), 0, "unpacked list is no scalar");
}

static const struct { const char *src, *msg; } rt_errors[] = {
	{ "s == 1", "cannot compare feature \"s\" (bytes) with a number" },
	{ "1 < s", "cannot compare a number with feature \"s\" (bytes)" },
	{ "i == s", "cannot compare feature \"i\" (int64) with feature \"s\" "
		    "(bytes)" },
	{ "f == \"x\"", "cannot compare feature \"f\" (float) with a string" },
	{ "s + 1 > 0", "feature \"s\" (bytes) where a number is needed" },
	{ "-s < 0", "feature \"s\" (bytes) where a number is needed" },
	{ "i ~ \"x\"", "feature \"i\" (int64) where a string (for '~') is "
		       "needed" },
	{ "startswith(i, \"x\")",
	  "feature \"i\" (int64) where a string is needed" },
	{ "startswith(s, f)",
	  "feature \"f\" (float) where a string is needed" },
	{ "missing == 1", "feature \"missing\": not in the record (test it "
			  "with has() first)" },
	{ "missing[0] == 1", "feature \"missing\": not in the record" },
	{ "missing[list] == 1", "feature \"missing\": not in the record" },
	{ "feature(\"x/y\") == 1", "feature \"x/y\": not in the record" },
	{ "list[0.5] == 1", "feature \"list\": index 0.5 is not an integer" },
	{ "list[1e30] == 1", "feature \"list\": index 1e+30 is not an "
			     "integer" },
	{ "list[s] == 1", "feature \"s\" (bytes) where a number (the index) "
			  "is needed" },
	{ "has(i) and missing > 0", "feature \"missing\"" },
};

static void runtime_errors(void)
{
	size_t k;

	for (k = 0; k < sizeof(rt_errors) / sizeof(rt_errors[0]); k++) {
		int got = run(rt_errors[k].src, &ex);

		ok(got == -2 && err.code == TFK_EINVAL &&
		   !strncmp(err.msg, rt_errors[k].msg,
			    strlen(rt_errors[k].msg)),
		   "run-time error: %s", rt_errors[k].src);
		if (got != -2 || strncmp(err.msg, rt_errors[k].msg,
					 strlen(rt_errors[k].msg)))
			tap_diag("got %d: %s", got, err.msg);
	}
}

static const struct { const char *src, *msg; size_t off; } parse_errors[] = {
	{ "(a > 1", "expression:1:7: expected ')'", 6 },
	{ "a = 1", "expression:1:3: '=' is not an operator (use '==')", 2 },
	{ "!a", "expression:1:1: '!' is not an operator (use 'not')", 0 },
	{ "a == 1 && b == 2", "expression:1:8: '&' is not an operator "
	  "(use 'and')", 7 },
	{ "a == 1 || b", "expression:1:8: '|' is not an operator (use 'or')",
	  7 },
	{ "a == @", "expression:1:6: unexpected '@'", 5 },
	{ "a == \x01", "expression:1:6: unexpected byte 0x01", 5 },
	{ "s == \"abc", "expression:1:6: unterminated string", 5 },
	{ "s == \"\\q\"", "expression:1:7: unknown escape '\\q'", 6 },
	{ "s == \"\\x4\"", "expression:1:7: expected two hex digits after "
	  "\\x", 6 },
	{ "3abc == 1", "expression:1:1: bad number", 0 },
	{ "1.2.3 == 1", "expression:1:1: bad number", 0 },
	{ "99999999999999999999 == a", "expression:1:1: integer out of "
	  "range", 0 },
	{ "9223372036854775808 == a", "expression:1:1: integer out of range",
	  0 },
	{ "a +", "expression:1:4: expected a value, got the end", 3 },
	{ "", "expression:1:1: expected a value, got the end", 0 },
	{ "a == )", "expression:1:6: expected a value", 5 },
	{ "a + \"x\" > 1", "expression:1:5: expected a number", 4 },
	{ "\"x\" * 2 > 1", "expression:1:1: expected a number", 0 },
	{ "-\"x\" < 1", "expression:1:2: expected a number", 1 },
	{ "a and b", "expression:1:1: expected a condition", 0 },
	{ "a == 1 and b", "expression:1:12: expected a condition", 11 },
	{ "not a", "expression:1:5: expected a condition", 4 },
	{ "a", "expression:1:1: expected a condition (e.g. a comparison), "
	  "got a value", 0 },
	{ "1 + 2", "expression:1:1: expected a condition (e.g. a comparison), "
	  "got a number", 0 },
	{ "1 == \"x\"", "expression:1:3: cannot compare a number with a "
	  "string", 2 },
	{ "(a == 1) == 1", "expression:1:10: cannot compare a condition "
	  "with a number", 9 },
	{ "(a == 1) < true", "expression:1:10: conditions can only be "
	  "compared with == and !=", 9 },
	{ "a < b < c", "expression:1:7: comparisons do not chain (use 'and')",
	  6 },
	{ "a ~ b", "expression:1:5: expected a regex string after '~'", 4 },
	{ "1 ~ \"x\"", "expression:1:1: expected a string (before '~')", 0 },
	{ "a ~ \"(\"", "expression:1:5: bad regex: ", 4 },
	{ "a ~ \"a\\0\"", "expression:1:5: a regex cannot hold a NUL byte", 4 },
	{ "foo(a) == 1", "expression:1:1: unknown function 'foo'", 0 },
	{ "len(3) == 1", "expression:1:5: expected a feature name", 4 },
	{ "len(a == 1", "expression:1:7: expected ')'", 6 },
	{ "len a", "expression:1:5: unexpected 'a'", 4 },
	{ "random(1) < 1", "expression:1:8: expected ')' (random takes no "
	  "arguments)", 7 },
	{ "startswith(a)", "expression:1:13: expected ','", 12 },
	{ "startswith(a, 1)", "expression:1:15: expected a string", 14 },
	{ "feature(a) == 1", "expression:1:9: expected a string (the feature "
	  "name)", 8 },
	{ "(a == 1)[0] == 1", "expression:1:9: only a feature can be indexed",
	  8 },
	{ "a[\"x\"] == 1", "expression:1:3: expected a number (the index)", 2 },
	{ "a[0 == 1", "expression:1:5: expected ']'", 4 },
	{ "a == 1 b", "expression:1:8: unexpected 'b'", 7 },
	{ "and == 1", "expression:1:1: 'and' is a keyword (a feature of that "
	  "name is feature(\"and\"))", 0 },
	{ "a == 1 and\n  (b == 2", "expression:2:10: expected ')'", 20 },
	{ "a == 1 and\n\tb +", "expression:2:5: expected a value, got the "
	  "end", 15 },
};

static void parse_error_cases(void)
{
	struct tfk_expr *x;
	size_t k, off;
	char deep[2000];

	for (k = 0; k < sizeof(parse_errors) / sizeof(parse_errors[0]); k++) {
		size_t n = strlen(parse_errors[k].msg);
		int rc;

		off = 12345;
		rc = tfk_expr_parse(&x, parse_errors[k].src, &off, &err);
		ok(rc == TFK_EINVAL && x == NULL && !strncmp(err.msg,
		   parse_errors[k].msg, n) && (n == strlen(err.msg) ||
		   parse_errors[k].msg[n - 1] == ' ') &&
		   off == parse_errors[k].off,
		   "parse error: %s", parse_errors[k].msg);
		if (rc != TFK_EINVAL || strncmp(err.msg, parse_errors[k].msg, n)
		    || off != parse_errors[k].off)
			tap_diag("got %d off %zu: %s", rc, off, err.msg);
	}

	memset(deep, '(', 300);
	strcpy(deep + 300, "a == 1");
	is_int(tfk_expr_parse(&x, deep, NULL, &err), TFK_EINVAL,
	       "300 parentheses refused");
	is_str(strstr(err.msg, "nested too deeply"), "nested too deeply",
	       "... as nested too deeply");
	memset(deep, '(', 150);
	strcpy(deep + 150, "a == 1");
	memset(deep + 156, ')', 150);
	deep[306] = 0;
	is_int(tfk_expr_parse(&x, deep, NULL, &err), 0,
	       "150 parentheses accepted");
	tfk_expr_free(x);
	for (k = 0; k < 300; k++)
		memcpy(deep + 4 * k, "not ", 4);
	strcpy(deep + 1200, "true");
	is_int(tfk_expr_parse(&x, deep, NULL, &err), TFK_EINVAL,
	       "300 nots refused");
}

/* A 5000-term sum is a tree 5000 deep: the evaluator's recursion
 * would follow it, so the parser refuses it. 1000 terms are fine. */
static void long_chains(void)
{
	struct tfk_expr *x;
	char *s = malloc(5000 * 4 + 16);
	size_t k;

	strcpy(s, "i");
	for (k = 1; k < 1000; k++)
		strcat(s + 4 * k - 4, " + i");
	strcat(s, " == 7000");
	ok(tfk_expr_parse(&x, s, NULL, &err) == 0 &&
	   tfk_expr_eval(x, &ex, 0, &err) == 1, "1000-term sum");
	tfk_expr_free(x);
	strcpy(s, "i");
	for (k = 1; k < 5000; k++)
		strcat(s + 4 * k - 4, " + i");
	strcat(s, " == 0");
	is_int(tfk_expr_parse(&x, s, NULL, &err), TFK_EINVAL,
	       "5000-term sum refused");
	ok(strstr(err.msg, "nested too deeply") != NULL, "... %s", err.msg);
	free(s);
}

static void randomness(void)
{
	struct tfk_expr *x;
	long bins[20] = { 0 }, below = 0, both = 0, same = 0;
	double chi = 0;
	uint64_t pos;
	int k;

	for (pos = 0; pos < 100000; pos++) {
		double r = tfk_expr_random(1, pos, 0);
		double r1 = tfk_expr_random(1, pos, 1);

		bins[(int)(r * 20)]++;
		below += r < 0.1;
		both += r < 0.5 && r1 < 0.5;
		same += (r < 0.5) == (tfk_expr_random(2, pos, 0) < 0.5);
	}
	for (k = 0; k < 20; k++)
		chi += (bins[k] - 5000.0) * (bins[k] - 5000.0) / 5000.0;
	/* 19 degrees of freedom: P(chi2 > 43.82) = 0.001. */
	ok(chi < 43.82, "random(): chi-square over 20 bins %.1f < 43.82", chi);
	/* Binomial(1e5, 0.1): sd 94.9, 4 sd either way. */
	ok(labs(below - 10000) < 380, "random() < 0.1 for %ld of 100000",
	   below);
	ok(labs(both - 25000) < 550, "k = 0 and k = 1 independent: %ld of "
	   "100000 both below 0.5", both);
	ok(labs(same - 50000) < 640, "seeds 1 and 2 unrelated: %ld of 100000 "
	   "agree", same);
	ok(tfk_expr_random(1, 7, 0) == tfk_expr_random(1, 7, 0),
	   "same seed, position and k: same value");

	/* Through the expression: seed and position decide, k counts the
	 * calls in the text from 0. */
	if (tfk_expr_parse(&x, "random() < 0.3 and random() >= 0.6", NULL,
			   &err))
		abort();
	is_int(tfk_expr_n_random(x), 2, "two random() calls");
	tfk_expr_set_seed(x, 42);
	for (pos = 0, k = 1; pos < 1000; pos++)
		if (tfk_expr_eval(x, &ex, pos, &err) !=
		    (tfk_expr_random(42, pos, 0) < 0.3 &&
		     tfk_expr_random(42, pos, 1) >= 0.6))
			k = 0;
	ok(k, "random() in an expression is tfk_expr_random(seed, pos, k)");
	tfk_expr_free(x);
	/* A known value of the documented formula (computed by hand from
	 * splitmix64's finalizer in Python: mix(0) = 0xe220a8397b1dcdaf). */
	ok(tfk_expr_mix64(0) == 0xe220a8397b1dcdafULL, "mix64(0)");
}

static void failed_allocations(void)
{
	struct tfk_expr *x;
	long n;
	int rc = TFK_ENOMEM, ok_nomem = 1;

	for (n = 0; n < 200 && rc == TFK_ENOMEM; n++) {
		tfk_alloc_fail_after(n);
		rc = tfk_expr_parse(&x, "(s ~ \"^c\" or startswith(s, \"x\")) "
				    "and list[2] == 3 and fl[1] > 2 and "
				    "feature(\"a/b\") + 1 == 2 and "
				    "nul ~ \"b\" and has(e)", NULL, &err);
		tfk_alloc_fail_after(-1);
		if (rc == TFK_ENOMEM && (x || strcmp(err.msg, "out of memory")))
			ok_nomem = 0;
	}
	ok(rc == 0 && ok_nomem, "parse: every failed allocation is ENOMEM "
	   "(%ld tried)", n);
	rc = TFK_ENOMEM;
	for (n = 0; n < 20 && rc == TFK_ENOMEM; n++) {
		tfk_alloc_fail_after(n);
		rc = tfk_expr_eval(x, &ex, 0, &err);
		tfk_alloc_fail_after(-1);
	}
	is_int(rc, 1, "eval after failed scratch allocations");
	tfk_expr_free(x);
	tfk_expr_free(NULL);
}

int main(void)
{
	build();
	semantics();
	runtime_errors();
	parse_error_cases();
	long_chains();
	randomness();
	failed_allocations();
	tfk_example_release(&ex);
	tfk_example_release(&ex_unpacked);
	free(record);
	return tap_done();
}
