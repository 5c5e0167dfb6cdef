/*
 * t-jdoc.c - the JSON reader (util/jdoc.h) against two oracles: glibc's
 * strtod (correctly rounded) for every number form, 200000 random
 * decimals among them, and jansson for the trees of JSON texts, plus
 * the errors it must give with their offsets.
 */
#include "util/jdoc.h"
#include "tap.h"
#include "../fuzz/jdoc-jansson.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse(struct tfk_jd_doc *d, const char *s, unsigned flags,
		 char *msg)
{
	struct tfk_err err;
	int rc = tfk_jd_parse(d, s, strlen(s), flags, &err);

	msg[0] = 0;
	if (rc)
		snprintf(msg, TFK_ERR_MSG_MAX, "%s", err.msg);
	return rc;
}

/* One number text: ours is strtod's double, bit for bit. */
static int same_number(const char *s)
{
	struct tfk_jd_doc d;
	char msg[TFK_ERR_MSG_MAX];
	double want = strtod(s, NULL), got;
	int rc = parse(&d, s, 0, msg), same;

	if (rc) {
		tfk_jd_free(&d);
		return 0;
	}
	got = d.root.type == TFK_JD_INT ? (double)d.root.u.i : d.root.u.d;
	same = !memcmp(&got, &want, sizeof(got));
	tfk_jd_free(&d);
	return same;
}

static void numbers(void)
{
	static const char *const fixed[] = {
		"0", "0.0", "-0.0", "1", "-1", "0.1", "0.2", "0.3",
		"1e22", "1e23", "9007199254740993.0", "9007199254740992e-3",
		"123456789012345678.9", "0.1234", "1.7976931348623157e308",
		"2.2250738585072014e-308", "4.9e-324", "1e-400",
		"3.4028234663852886e38", "0.30000000000000004",
		"1.00000000000000011102230246251565404236316680908203125",
		"0.000000000000000000000000000000000000000001",
		"12345678901234567890123456789e-10", "1E5", "1e+5", "1e-5",
		"2.5e-22", "7.0e22", "4503599627370497.5",
	};
	struct tfk_jd_doc d;
	char s[64], msg[TFK_ERR_MSG_MAX];
	unsigned long seed = 7;
	size_t k;
	int bad = 0, i;

	for (k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++)
		ok(same_number(fixed[k]), "%s: strtod's double", fixed[k]);
	for (i = 0; i < 200000; i++) {
		unsigned long a, b;
		int e, form;

		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		a = seed >> 11;
		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		b = seed >> 40;
		e = (int)(b % 80) - 40;
		form = (int)(b >> 8) % 4;
		if (form == 0)	/* 0.dddd like a pixel */
			snprintf(s, sizeof(s), "0.%0*lu", (int)(b % 9) + 1,
				 a % 1000000000UL);
		else if (form == 1)	/* up to 17 digits and an exponent */
			snprintf(s, sizeof(s), "%s%lu.%lue%d", b & 1 ? "-" : "",
				 a % 100000000UL, a >> 40, e);
		else if (form == 2)	/* printf's %.9g of a float */
			snprintf(s, sizeof(s), "%.9g",
				 (double)(float)((double)(long)(a % 2000001) /
						 1e6 - 1.0));
		else		/* 19+ digits: past the fast path */
			snprintf(s, sizeof(s), "%lu%lu.%lue%d", a, a >> 20,
				 b, e);
		if (!same_number(s) && bad++ < 5)
			tap_diag("%s: not strtod's", s);
	}
	ok(!bad, "200000 random decimals: strtod's double, bit for bit "
	   "(%d differ)", bad);
	ok(!parse(&d, "-9223372036854775808", 0, msg) &&
	   d.root.type == TFK_JD_INT && d.root.u.i == INT64_MIN,
	   "INT64_MIN is an integer");
	tfk_jd_free(&d);
	ok(!parse(&d, "9223372036854775807", 0, msg) &&
	   d.root.u.i == INT64_MAX, "INT64_MAX is an integer");
	tfk_jd_free(&d);
	ok(parse(&d, "9223372036854775808", 0, msg) &&
	   strstr(msg, "offset 19: too big integer"), "2^63: %s", msg);
	tfk_jd_free(&d);
	ok(parse(&d, "[1e309]", 0, msg) &&
	   strstr(msg, "offset 1: real number overflow"), "1e309: %s", msg);
	tfk_jd_free(&d);
}

static void trees(void)
{
	static const char *const texts[] = {
		"{}", "[]", "[[],[[]],{}]", "  {\"a\" : [1, 2.5, -3e2, true, "
		"false, null, \"x\"]}\n",
		"{\"instances\": [[0.1, 0.2], [0.3, 0.4]], \"signature_name\":"
		" \"serving_default\"}",
		"[\"\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"\\u00e9\\u20ac\", "
		"\"\\ud83d\\ude00\", \"caf\xc3\xa9\", \"a\\u0000b\"]",
		"{\"a\": 1, \"b\": 2, \"a\": 3}",
		"{\"b64\": \"aGVsbG8=\"}", "[-0, 0e0, 1E-2, 123456789]",
	};
	size_t k;

	for (k = 0; k < sizeof(texts) / sizeof(texts[0]); k++) {
		struct tfk_jd_doc d;
		char msg[TFK_ERR_MSG_MAX];
		json_error_t je;
		json_t *j = json_loads(texts[k], JSON_DECODE_ANY |
				       JSON_ALLOW_NUL, &je);
		int rc = parse(&d, texts[k], 0, msg);

		ok(j && !rc && same_tree(&d.root, j), "%s: jansson's tree%s%s",
		   texts[k], rc ? ": " : "", msg);
		json_decref(j);
		tfk_jd_free(&d);
	}
}

static void refused(const char *s, unsigned flags, const char *part)
{
	struct tfk_jd_doc d;
	char msg[TFK_ERR_MSG_MAX];
	int rc = parse(&d, s, flags, msg);

	ok(rc == TFK_EINVAL && strstr(msg, part) && d.root.type == 0,
	   "%s: refused (%s)", s, msg);
	tfk_jd_free(&d);
}

static void errors(void)
{
	char deep[2 * TFK_JD_MAX_DEPTH + 8];
	int i;

	refused("", 0, "offset 0: premature end of input");
	refused("[1,", 0, "offset 3: premature end of input");
	refused("[1 2]", 0, "offset 3: expected ',' or ']'");
	refused("[1,]", 0, "offset 3: invalid token");
	refused("{\"a\" 1}", 0, "offset 5: expected ':'");
	refused("{1: 2}", 0, "offset 1: expected a string key");
	refused("{\"a\": 1,}", 0, "offset 8: expected a string key");
	refused("{\"a\": 1", 0, "offset 7: premature end of input in an "
		"object");
	refused("01", 0, "offset 1: invalid number: a leading zero");
	refused("1.", 0, "offset 2: invalid number: no digit after '.'");
	refused("1e", 0, "offset 2: invalid number: no digit in the exponent");
	refused("-", 0, "offset 1: invalid number");
	refused("tru", 0, "offset 0: invalid token");
	refused("[1] x", 0, "offset 4: end of input expected");
	refused("\"a", 0, "offset 2: premature end of input in a string");
	refused("\"a\tb\"", 0, "offset 2: control character in a string");
	refused("\"\\x\"", 0, "offset 1: invalid escape");
	refused("\"\\u12g4\"", 0, "offset 1: invalid \\u escape");
	refused("\"\\udc00\"", 0, "lone low surrogate");
	refused("\"\\ud800x\"", 0, "without its low one");
	refused("\"\xff\"", 0, "offset 1: invalid UTF-8 in a string");
	refused("[NaN]", 0, "offset 1: invalid token");
	refused("[Infinity]", 0, "offset 1: invalid token");
	refused("[-Infinity]", 0, "offset 2: invalid number");
	for (i = 0; i < TFK_JD_MAX_DEPTH + 1; i++)
		deep[i] = '[';
	deep[i] = 0;
	refused(deep, 0, "nested too deeply");
}

static void nonfinite(void)
{
	struct tfk_jd_doc d;
	char msg[TFK_ERR_MSG_MAX];
	const struct tfk_jd *v;

	ok(!parse(&d, "[NaN, Infinity, -Infinity, 1.5]", TFK_JD_NONFINITE,
		  msg) && d.root.n == 4, "bare NaN, Infinity, -Infinity taken "
	   "with TFK_JD_NONFINITE");
	v = d.root.u.items;
	ok(v[0].type == TFK_JD_REAL && v[0].bare && isnan(v[0].u.d) &&
	   v[1].bare && v[1].u.d == INFINITY && v[2].bare &&
	   v[2].u.d == -INFINITY && !v[3].bare && v[3].u.d == 1.5,
	   "their values, marked bare; 1.5 is not");
	tfk_jd_free(&d);
	ok(!parse(&d, "{\"x\": \"NaN\"}", TFK_JD_NONFINITE, msg) &&
	   tfk_jd_get(&d.root, "x")->type == TFK_JD_STRING,
	   "the string \"NaN\" stays a string");
	ok(tfk_jd_get(&d.root, "y") == NULL && tfk_jd_get(NULL, "x") == NULL,
	   "a missing key, and no object: NULL");
	tfk_jd_free(&d);
}

static void big(void)
{
	size_t n = 3000000, o = 0, k;
	char *s = malloc(n * 8 + 16);
	struct tfk_jd_doc d;
	struct tfk_err err;
	int rc, good = 1;

	s[o++] = '[';
	for (k = 0; k < n; k++)
		o += (size_t)sprintf(s + o, "%s%zu.5", k ? "," : "", k % 1000);
	s[o++] = ']';
	rc = tfk_jd_parse(&d, s, o, 0, &err);
	for (k = 0; !rc && k < n && good; k++)
		good = d.root.u.items[k].u.d == (double)(k % 1000) + 0.5;
	ok(!rc && d.root.n == n && good, "a list of 3e6 numbers (%zu bytes, "
	   "many arena blocks), every value", o);
	tfk_jd_free(&d);
	free(s);
}

int main(void)
{
	numbers();
	trees();
	errors();
	nonfinite();
	big();
	return tap_done();
}
