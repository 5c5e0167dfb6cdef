/*
 * t-exjson.c - tf.Example <-> JSON lines.
 *
 * Exact lines for hand-made Examples (every kind, escapes, float
 * spellings, b64 for non-UTF-8 bytes); reading with and without a
 * schema lookup, every refusal with its message; both readers (text
 * and jansson) agreeing; failed allocations; and the python oracle
 * (tests/py/tfexample.py): Python's json module checks our lines
 * against protobuf's reading of 600 odd Examples, and protobuf reads
 * the Examples we build from 400 JSON lines that Python wrote.
 */
#include "example/exjson.h"
#include "example/schema.h"
#include "io/record.h"
#include "util/alloc.h"
#include "oracle.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct tfk_example ex;
static struct tfk_example_builder b;
static struct tfk_exjson_reader rd;
static struct tfk_buf out;
static struct tfk_err err;

/* Build an Example with the builder calls in `add`, write it as JSON. */
static const char *write_json(void)
{
	const uint8_t *p;
	size_t n;

	tfk_exb_finish(&b, &p, &n, &err);
	if (tfk_example_parse(&ex, p, n, &err))
		return "(parse failed)";
	tfk_buf_reset(&out);
	if (tfk_exjson_write(&ex, &out, &err))
		return err.msg;
	tfk_buf_addc(&out, '\0');
	return (const char *)out.data;
}

static void writing(void)
{
	const uint8_t *bv[3] = { (const uint8_t *)"hi", (const uint8_t *)"",
				 (const uint8_t *)"a\"b\\c\n\x01\xe2\x98\x83" };
	size_t bl[3] = { 2, 0, 10 };

	tfk_exb_reset(&b);
	is_str(write_json(), "{}", "empty example");

	tfk_exb_reset(&b);
	tfk_exb_add_int64s(&b, "label", (int64_t[]){ 3 }, 1);
	tfk_exb_add_floats(&b, "x", (float[]){ 0.5f, 1.0f }, 2);
	tfk_exb_add_bytes(&b, "text", bv, bl, 1);
	tfk_exb_add_bytes1(&b, "img", "\xff\x00", 2);
	tfk_exb_add_none(&b, "unset");
	is_str(write_json(), "{\"label\":[3],\"x\":[0.5,1.0],\"text\":[\"hi\"],"
	       "\"img\":[{\"b64\":\"/wA=\"}],\"unset\":null}",
	       "the documented example line");

	tfk_exb_reset(&b);
	tfk_exb_add_int64s(&b, "i", (int64_t[]){ 0, -1, INT64_MIN, INT64_MAX },
			   4);
	tfk_exb_add_bytes(&b, "s", bv, bl, 3);
	tfk_exb_add_bytes(&b, "e", NULL, NULL, 0);
	tfk_exb_add_floats(&b, "f", NULL, 0);
	is_str(write_json(), "{\"i\":[0,-1,-9223372036854775808,"
	       "9223372036854775807],\"s\":[\"hi\",\"\",\"a\\\"b\\\\c\\n"
	       "\\u0001\xe2\x98\x83\"],\"e\":{\"bytes\":[]},"
	       "\"f\":{\"float\":[]}}",
	       "int64 extremes, escapes, empty values and lists");

	tfk_exb_reset(&b);
	tfk_exb_add_floats(&b, "f", (float[]){ 1, -3, 0.1f, -0.0f, 1e-45f,
			   1e6f, 16777216, 3.4028235e38f, 123456.5f, NAN,
			   INFINITY, -INFINITY, 999999, 0 }, 14);
	is_str(write_json(), "{\"f\":[1.0,-3.0,0.1,-0.0,1e-45,1e+06,"
	       "16777216.0,3.4028235e+38,123456.5,NaN,Infinity,-Infinity,"
	       "999999.0,0.0]}", "float spellings: always '.' or exponent");

	tfk_exb_reset(&b);
	tfk_exb_add_bytes1(&b, "bad", "\xc3\x28", 2);
	tfk_exb_add_bytes1(&b, "surrogate", "\xed\xa0\x80", 3);
	tfk_exb_add_bytes1(&b, "overlong", "\xc0\xaf", 2);
	is_str(write_json(), "{\"bad\":[{\"b64\":\"wyg=\"}],\"surrogate\":"
	       "[{\"b64\":\"7aCA\"}],\"overlong\":[{\"b64\":\"wK8=\"}]}",
	       "invalid UTF-8 as b64");

	tfk_exb_reset(&b);
	tfk_exb_add_bytes1(&b, "\xff", "x", 1);
	is_str(write_json(), "feature 0: name is not valid utf-8",
	       "a name that is not UTF-8 is refused");

	/* a long list (past the accessors' chunk) and unpacked floats */
	{
		int64_t big[1000];
		int k;

		for (k = 0; k < 1000; k++)
			big[k] = k;
		tfk_exb_reset(&b);
		tfk_exb_add_int64s(&b, "n", big, 1000);
		write_json();
		ok(out.len > 3000 && !memcmp(out.data, "{\"n\":[0,1,2,", 12) &&
		   !strcmp((char *)out.data + out.len - 11, ",998,999]}"),
		   "1000 int64s");
	}
	{
		/* FloatList { value: 1.5 (unpacked) value: 2 } */
		static const uint8_t un[] = {
			0x0a, 0x14, 0x0a, 0x12, 0x0a, 0x01, 'u', 0x12, 0x0d,
			0x12, 0x0b, 0x0d, 0, 0, 0xc0, 0x3f, 0x0a, 0x04,
			0, 0, 0, 0x40
		};

		tfk_example_parse(&ex, un, sizeof(un), &err);
		tfk_buf_reset(&out);
		tfk_exjson_write(&ex, &out, &err);
		is_mem(out.data, out.len, "{\"u\":[1.5,2.0]}", 15,
		       "unpacked and packed floats");
	}
}

/*
 * Our float spelling against tfk_buf_add_float (printf with growing
 * precision until strtof gives the float back) plus the ".0" rule, and
 * strtof of ours: random bit patterns, every exponent with mantissas at
 * both ends (powers of two have a narrower gap below), and a dense run
 * around 1.0.
 */
static void float_spelling(void)
{
	struct tfk_buf a, r;
	uint64_t x = 88172645463325252u;
	long i, n = 0, differ = 0, lost = 0;

	tfk_buf_init(&a);
	tfk_buf_init(&r);
	for (i = 0; i < 200000; i++) {
		uint32_t bits;
		float v, back;
		char *sa, *sr;

		if (i < 50000) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			bits = (uint32_t)x;
		} else if (i < 100000) {
			uint32_t j = (uint32_t)(i - 50000);

			bits = (j % 256) << 23 | (j / 256 % 2 ? 0x7fffff - j / 512 :
						  j / 512);
		} else {
			bits = 0x3f7e0000u + (uint32_t)(i - 100000);
		}
		memcpy(&v, &bits, 4);
		if (!isfinite(v))
			continue;
		n++;
		tfk_buf_reset(&a);
		tfk_buf_reset(&r);
		tfk_exjson_add_float(&a, v);
		tfk_buf_add_float(&r, v);
		tfk_buf_addc(&a, '\0');
		tfk_buf_addc(&r, '\0');
		sa = (char *)a.data;
		sr = (char *)r.data;
		back = strtof(sa, NULL);
		if (memcmp(&back, &v, 4) && lost++ < 3)
			tap_diag("%08x: %s reads back as %a", bits, sa,
				 (double)back);
		if (strncmp(sa, sr, strlen(sr)) ||
		    strcmp(sa + strlen(sr), strpbrk(sr, ".eNI") ? "" : ".0")) {
			if (differ++ < 3)
				tap_diag("%08x: ours %s, printf %s", bits, sa, sr);
		}
	}
	ok(n > 190000 && lost == 0, "%ld floats: each reads back exactly", n);
	is_int(differ, 0, "and is spelled as printf's shortest %%g");
	tfk_buf_release(&a);
	tfk_buf_release(&r);
}

/*
 * Number reading against strtof: random decimals of 1-21 digits with
 * and without fractions and exponents, read in lines of 500, each value
 * bit-equal to strtof of its text; and decimals that round to a double
 * lying exactly between two floats (a second rounding would go wrong).
 */
static void number_reading(void)
{
	struct tfk_exjson_reader r;
	struct tfk_example_builder c;
	struct tfk_example e;
	struct tfk_buf line;
	uint64_t x = 0x9e3779b97f4a7c15u;
	static char tok[500][48];
	long bad = 0, total = 0;
	int round, i;

	tfk_exjson_reader_init(&r, NULL, NULL);
	tfk_exb_init(&c);
	tfk_example_init(&e);
	tfk_buf_init(&line);
	for (round = 0; round < 40; round++) {
		float got[500];
		const uint8_t *p;
		size_t n;

		tfk_buf_reset(&line);
		tfk_buf_adds(&line, "{\"x\":[0.5");
		for (i = 0; i < 500; i++) {
			int digits, point, e10, j;
			char *o = tok[i];

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			digits = 1 + (int)(x % 21);
			point = (int)(x >> 8) % (digits + 1);
			e10 = (int)((x >> 16) % 81) - 40;
			if (x >> 40 & 1)
				*o++ = '-';
			for (j = 0; j < digits; j++) {
				if (j == point && j > 0)
					*o++ = '.';
				*o++ = (char)('0' + (j == 0 && digits > 1 ?
					      1 + (x >> (j % 50)) % 9 :
					      (x >> (3 * j % 60)) % 10));
			}
			if (x >> 41 & 1)
				o += sprintf(o, "e%d", e10);
			*o = '\0';
			if (round == 0 && i < 4) {
				/* on a float midpoint after rounding to double */
				static const char *const mid[] = {
					"16777217", "16777217.000000001",
					"-16777219.0000000001", "0.50000002980232239"
				};
				strcpy(tok[i], mid[i]);
			}
			tfk_buf_addc(&line, ',');
			tfk_buf_adds(&line, tok[i]);
		}
		tfk_buf_adds(&line, "]}");
		tfk_exb_reset(&c);
		if (tfk_exjson_read_line(&r, (char *)line.data, line.len, &c, &err) ||
		    tfk_exb_finish(&c, &p, &n, &err) ||
		    tfk_example_parse(&e, p, n, &err) ||
		    tfk_feat_floats(&e.feat[0], NULL, 0) != 501) {
			ok(0, "number line %d: %s", round, err.msg);
			break;
		}
		{
			float all[501];

			tfk_feat_floats(&e.feat[0], all, 501);
			memcpy(got, all + 1, sizeof(got));
		}
		for (i = 0; i < 500; i++) {
			float want = strtof(tok[i], NULL);

			total++;
			if (memcmp(&want, &got[i], 4) && bad++ < 3)
				tap_diag("%s: read %a, strtof %a", tok[i],
					 (double)got[i], (double)want);
		}
	}
	ok(total == 20000 && bad == 0, "20000 decimals read as strtof reads "
	   "them (%ld differ)", bad);
	tfk_buf_release(&line);
	tfk_example_release(&e);
	tfk_exb_release(&c);
	tfk_exjson_reader_release(&r);
}

/* Read a line into an Example, shown back as our JSON (or the error). */
static const char *read_show(const char *line)
{
	const uint8_t *p;
	size_t n;
	int rc;

	tfk_exb_reset(&b);
	rc = tfk_exjson_read_line(&rd, line, strlen(line), &b, &err);
	if (rc)
		return err.msg;
	if (tfk_exb_finish(&b, &p, &n, &err) ||
	    tfk_example_parse(&ex, p, n, &err))
		return "(bad example)";
	tfk_buf_reset(&out);
	tfk_exjson_write(&ex, &out, &err);
	tfk_buf_addc(&out, '\0');
	return (const char *)out.data;
}

/* Kinds for the schema cases. */
static int kinds(void *ctx, const char *name)
{
	(void)ctx;
	if (!strcmp(name, "f"))
		return TFK_FEAT_FLOAT;
	if (!strcmp(name, "i"))
		return TFK_FEAT_INT64;
	if (!strcmp(name, "b"))
		return TFK_FEAT_BYTES;
	return TFK_FEAT_NONE;
}

static void reading(void)
{
	tfk_exjson_reader_init(&rd, NULL, NULL);
	is_str(read_show("{\"label\":[3],\"x\":[0.5,1.0],\"text\":[\"hi\"],"
			 "\"img\":[{\"b64\":\"/wA=\"}],\"unset\":null}"),
	       "{\"label\":[3],\"x\":[0.5,1.0],\"text\":[\"hi\"],"
	       "\"img\":[{\"b64\":\"/wA=\"}],\"unset\":null}",
	       "the documented line reads back");
	is_str(read_show("  {}\n"), "{}", "empty object, white space");
	is_str(read_show("{ \"a\" : 3 , \"b\":\"s\",\"c\":{\"b64\":\"\"},"
			 "\"d\":2.5 }\r\n"),
	       "{\"a\":[3],\"b\":[\"s\"],\"c\":[\"\"],\"d\":[2.5]}",
	       "bare values are one-value lists");
	is_str(read_show("{\"x\":[1,2.5,3]}"), "{\"x\":[1.0,2.5,3.0]}",
	       "integers in a float list");
	is_str(read_show("{\"x\":[1,1e0]}"), "{\"x\":[1.0,1.0]}",
	       "an exponent makes a float");
	is_str(read_show("{\"x\":[NaN,Infinity,-Infinity,-0.0,-0]}"),
	       "{\"x\":[NaN,Infinity,-Infinity,-0.0,-0.0]}",
	       "NaN, Infinity, -Infinity, -0");
	is_str(read_show("{\"i\":[-0,9223372036854775807,-9223372036854775808]}"),
	       "{\"i\":[0,9223372036854775807,-9223372036854775808]}",
	       "int64 range");
	is_str(read_show("{\"x\":[0.1,3.4028235e38,1e39,1e-46,1e999]}"),
	       "{\"x\":[0.1,3.4028235e+38,Infinity,0.0,Infinity]}",
	       "floats round once from the text; beyond the range: inf, 0");
	is_str(read_show("{\"s\":[\"\\u00e9\\ud83d\\ude00\\/\\b\\f\\t\\r\","
			 "{\"b64\":\"AAEC\"},\"\xc3\xa9\"]}"),
	       "{\"s\":[\"\xc3\xa9\xf0\x9f\x98\x80/\\b\\f\\t\\r\","
	       "\"\\u0000\\u0001\\u0002\",\"\xc3\xa9\"]}",
	       "string escapes, surrogate pairs, b64 beside strings (bytes "
	       "00 01 02 are UTF-8: written as a string)");
	is_str(read_show("{\"b\":[{ \"b64\" : \"YQ==\" },{\"b64\":\"YWI=\"}]}"),
	       "{\"b\":[\"a\",\"ab\"]}", "b64 padding");
	is_str(read_show("{\"\":[1],\"\xe2\x98\x83\":[2]}"),
	       "{\"\":[1],\"\xe2\x98\x83\":[2]}", "empty and non-ASCII names");

	/* refusals */
	is_str(read_show("{\"x\":[]}"),
	       "feature \"x\": empty list has no kind; write "
	       "{\"int64\":[]}, {\"float\":[]} or {\"bytes\":[]}, or give "
	       "--schema", "empty list without a schema");
	is_str(read_show("{\"i\":{\"int64\":[]},\"f\":{ \"float\" : [ ] },"
			 "\"b\":{\"bytes\":[]},\"g\":{\"float\":[1,2]},"
			 "\"s\":{\"bytes\":[\"a\",{\"b64\":\"/w==\"}]}}"),
	       "{\"i\":{\"int64\":[]},\"f\":{\"float\":[]},"
	       "\"b\":{\"bytes\":[]},\"g\":[1.0,2.0],"
	       "\"s\":[\"a\",{\"b64\":\"/w==\"}]}",
	       "typed lists: empty lists keep their kind, integers as floats");
	is_str(read_show("{\"i\":{\"int64\":[0.5]}}"),
	       "feature \"i\": value 0 is not an integer, but the line says "
	       "int64", "typed list: a float in an int64 list");
	is_str(read_show("{\"i\":{\"bytes\":[1]}}"),
	       "feature \"i\": numbers, but the line says bytes",
	       "typed list: a number in a bytes list");
	is_str(read_show("{\"i\":{\"float\":1}}"),
	       "feature \"i\": expected a list after "
	       "{\"bytes\"/\"float\"/\"int64\":", "typed list: no list");
	is_str(read_show("{\"i\":{\"float\":[],\"x\":1}}"),
	       "feature \"i\": expected '}' after a typed list",
	       "typed list: a second key");
	is_str(read_show("{\"x\":[1,\"a\"]}"),
	       "feature \"x\": mixes strings and numbers", "mixed list");
	is_str(read_show("{\"x\":[[1]]}"),
	       "feature \"x\": nested list (SequenceExample lists are not "
	       "an Example)", "nested list");
	is_str(read_show("{\"x\":[true]}"),
	       "feature \"x\": true/false is not a value (bytes, float or "
	       "int64)", "true");
	is_str(read_show("{\"x\":false}"),
	       "feature \"x\": true/false is not a value (bytes, float or "
	       "int64)", "bare false");
	is_str(read_show("{\"x\":[1,null]}"), "feature \"x\": null inside a list",
	       "null inside a list");
	is_str(read_show("{\"x\":1,\"x\":2}"), "feature \"x\": given twice",
	       "a name given twice");
	is_str(read_show("{\"x\":[18446744073709551616]}"),
	       "feature \"x\": value 0 is out of the int64 range",
	       "integer past int64");
	is_str(read_show("{\"x\":[18446744073709551616, 0.5]}"),
	       "{\"x\":[1.8446744e+19,0.5]}", "but fine as a float");
	is_str(read_show("{\"x\":{\"b64\":\"YQ=\"}}"),
	       "feature \"x\": invalid base64", "bad base64 length");
	is_str(read_show("{\"x\":{\"b64\":\"Y!==\"}}"),
	       "feature \"x\": invalid base64", "bad base64 character");
	is_str(read_show("{\"x\":{\"b65\":\"YQ==\"}}"),
	       "feature \"x\": expected {\"b64\": \"...\"}", "other object");
	is_str(read_show("{\"x\":{\"b64\":3}}"),
	       "feature \"x\": b64 value must be a string", "b64 number");
	is_str(read_show("{\"x\":{\"b64\":\"YQ==\",\"y\":1}}"),
	       "feature \"x\": expected {\"b64\": \"...\"}", "b64 and more");
	is_str(read_show("{\"a\\u0000b\":[1]}"),
	       "feature \"a\": name holds a NUL character", "NUL in a name");
	is_str(read_show("[1]"), "byte 0: expected a JSON object", "array");
	is_str(read_show(""), "byte 0: expected a JSON object", "empty line");
	is_str(read_show("{\"x\" 1}"), "byte 5: expected ':' after a feature "
	       "name", "missing colon");
	is_str(read_show("{\"x\":1 \"y\":2}"),
	       "byte 7: expected ',' or '}' after a feature", "missing comma");
	is_str(read_show("{\"x\":[1 2]}"), "byte 8: expected ',' or ']' in a list",
	       "missing comma in a list");
	is_str(read_show("{\"x\":[1,]}"), "byte 8: expected a value",
	       "trailing comma");
	is_str(read_show("{\"x\":1}x"), "byte 7: trailing characters after "
	       "the object", "trailing garbage");
	is_str(read_show("{\"x\":1"), "byte 6: expected ',' or '}' after a "
	       "feature", "cut after a value");
	is_str(read_show("{\"x"), "byte 3: unterminated string",
	       "cut in a name");
	is_str(read_show("{\"x\":\"a\x01\"}"), "byte 7: control character in "
	       "string", "raw control character");
	is_str(read_show("{\"x\":\"\xff\"}"), "byte 6: string is not valid "
	       "utf-8", "raw invalid UTF-8");
	is_str(read_show("{\"x\":\"\\ud800\"}"), "byte 6: lone high surrogate "
	       "in \\u escape", "lone high surrogate");
	is_str(read_show("{\"x\":\"\\udc00\"}"), "byte 6: lone low surrogate "
	       "in \\u escape", "lone low surrogate");
	is_str(read_show("{\"x\":\"\\u12g4\"}"), "byte 6: bad \\u escape",
	       "bad hex");
	is_str(read_show("{\"x\":\"\\q\"}"), "byte 6: bad escape in string",
	       "bad escape");
	is_str(read_show("{\"x\":01}"), "byte 6: expected ',' or '}' after a "
	       "feature", "leading zero");
	is_str(read_show("{\"x\":1.}"), "byte 7: bad number: digits must "
	       "follow '.'", "1.");
	is_str(read_show("{\"x\":1e}"), "byte 7: bad number: digits must "
	       "follow the exponent", "1e");
	is_str(read_show("{\"x\":-}"), "byte 5: bad number", "lone minus");
	is_str(read_show("{\"x\":+1}"), "byte 5: expected a value", "plus sign");
	is_str(read_show("{\"x\":nan}"), "byte 5: expected a value",
	       "lowercase nan");
	is_str(read_show("{\"x\":.5}"), "byte 5: expected a value", ".5");
	is_str(read_show("{x:1}"), "byte 1: expected a feature name",
	       "unquoted name");
	{
		/* a number longer than the stack copy */
		char line[400];

		snprintf(line, sizeof(line), "{\"x\":[0.%0300d1]}", 0);
		is_str(read_show(line), "{\"x\":[0.0]}", "a 300-digit number "
		       "(1e-301) reads as float 0.0");
	}

	/* with a schema lookup */
	tfk_exjson_reader_release(&rd);
	tfk_exjson_reader_init(&rd, kinds, NULL);
	is_str(read_show("{\"f\":[1,2],\"i\":[],\"b\":[],\"f2\":[1]}"),
	       "{\"f\":[1.0,2.0],\"i\":{\"int64\":[]},\"b\":{\"bytes\":[]},"
	       "\"f2\":[1]}",
	       "schema: integers in a float feature, empty lists get kinds");
	is_str(read_show("{\"i\":[0.5]}"),
	       "feature \"i\": value 0 is not an integer, but the schema says "
	       "int64",
	       "schema: float in an int64 feature");
	is_str(read_show("{\"i\":[2.0]}"),
	       "feature \"i\": value 0 is not an integer, but the schema says "
	       "int64",
	       "schema: 2.0 in an int64 feature");
	is_str(read_show("{\"f\":[\"a\"]}"),
	       "feature \"f\": strings, but the schema says float",
	       "schema: string in a float feature");
	is_str(read_show("{\"b\":[1]}"),
	       "feature \"b\": numbers, but the schema says bytes",
	       "schema: number in a bytes feature");
	is_str(read_show("{\"b\":null,\"i\":null}"), "{\"b\":null,\"i\":null}",
	       "schema: null stays a Feature with no kind");

	/* the lookup over a real schema */
	{
		struct tfk_schema s;

		tfk_schema_init(&s);
		tfk_schema_feature(&s, "x")->kind = TFK_FEAT_FLOAT;
		tfk_schema_feature(&s, "m")->kind = TFK_FEAT_INT64;
		tfk_schema_feature(&s, "m")->mixed = 1;
		tfk_exjson_reader_release(&rd);
		tfk_exjson_reader_init(&rd, tfk_exjson_schema_kind, &s);
		is_str(read_show("{\"x\":[3],\"y\":[3],\"m\":[3]}"),
		       "{\"x\":[3.0],\"y\":[3],\"m\":[3]}",
		       "tfk_exjson_schema_kind: kinds from a tfk_schema");
		is_str(read_show("{\"m\":[]}"),
		       "feature \"m\": empty list has no kind; write "
		       "{\"int64\":[]}, {\"float\":[]} or {\"bytes\":[]}, "
		       "or give --schema",
		       "a mixed kind gives no kind");
		tfk_schema_release(&s);
	}
	tfk_exjson_reader_release(&rd);
	tfk_exjson_reader_init(&rd, NULL, NULL);
}

/* jansson's reading gives the same Example bytes as ours. */
static void jansson_agrees(void)
{
	static const char *const lines[] = {
		"{\"label\":[3],\"x\":[0.5,1.0],\"text\":[\"hi\"],"
		"\"img\":[{\"b64\":\"/wA=\"}],\"unset\":null}",
		"{\"a\":3,\"b\":\"s\",\"c\":{\"b64\":\"\"},\"d\":2.5}",
		"{\"x\":[1,2.5,3],\"i\":[-9223372036854775808],\"e\":[\"\"]}",
		"{\"s\":[\"\\u00e9\\ud83d\\ude00\"],\"n\":null}",
		"{\"i\":{\"int64\":[]},\"f\":{\"float\":[1]},\"b\":{\"bytes\":[]}}",
		"{}",
	};
	static const char *const bad[][2] = {
		{ "{\"x\":[]}", "feature \"x\": empty list has no kind; write "
		  "{\"int64\":[]}, {\"float\":[]} or {\"bytes\":[]}, or give "
		  "--schema" },
		{ "{\"x\":{\"float\":1}}", "feature \"x\": expected a list "
		  "after {\"bytes\"/\"float\"/\"int64\":" },
		{ "{\"x\":[[1]]}", "feature \"x\": nested list (SequenceExample "
		  "lists are not an Example)" },
		{ "{\"x\":[true]}", "feature \"x\": true/false is not a value "
		  "(bytes, float or int64)" },
		{ "{\"x\":[1,\"a\"]}", "feature \"x\": mixes strings and numbers" },
		{ "{\"x\":{\"b64\":\"YQ=\"}}", "feature \"x\": invalid base64" },
		{ "{\"x\":{\"c\":\"YQ==\"}}", "feature \"x\": expected "
		  "{\"b64\": \"...\"}" },
		{ "{\"x\":[null]}", "feature \"x\": null inside a list" },
		{ "[1]", "expected a JSON object" },
	};
	size_t k;
	int same = 1;

	for (k = 0; k < sizeof(lines) / sizeof(lines[0]); k++) {
		struct tfk_example_builder c;
		const uint8_t *p, *q;
		size_t n, m;
		json_t *j = json_loads(lines[k], JSON_DECODE_ANY, NULL);

		tfk_exb_reset(&b);
		tfk_exb_init(&c);
		if (!j || tfk_exjson_read_line(&rd, lines[k], strlen(lines[k]),
					       &b, &err) ||
		    tfk_exjson_read_json(&rd, j, &c, &err) ||
		    tfk_exb_finish(&b, &p, &n, &err) ||
		    tfk_exb_finish(&c, &q, &m, &err) || n != m ||
		    memcmp(p, q, n)) {
			same = 0;
			tap_diag("line %zu differs: %s", k, err.msg);
		}
		json_decref(j);
		tfk_exb_release(&c);
	}
	ok(same, "text and jansson readers build the same bytes");
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		json_t *j = json_loads(bad[k][0], JSON_DECODE_ANY, NULL);
		int rc;

		tfk_exb_reset(&b);
		rc = tfk_exjson_read_json(&rd, j, &b, &err);
		ok(rc == TFK_EINVAL && !strcmp(err.msg, bad[k][1]),
		   "jansson reader refuses %s: %s", bad[k][0], err.msg);
		json_decref(j);
	}
}

static void alloc_failures(void)
{
	const char *line = "{\"label\":[3],\"x\":[0.5,1.0,NaN],\"text\":"
			   "[\"hi\",\"\\u00e9\"],\"img\":[{\"b64\":\"/wA=\"}],"
			   "\"unset\":null}";
	long n;
	int rc = -1, all = 1;

	for (n = 0; n < 100; n++) {
		struct tfk_exjson_reader r;
		struct tfk_example_builder c;
		const uint8_t *p;
		size_t len;

		tfk_exjson_reader_init(&r, NULL, NULL);
		tfk_exb_init(&c);
		tfk_alloc_fail_after(n);
		rc = tfk_exjson_read_line(&r, line, strlen(line), &c, &err);
		if (!rc)
			rc = tfk_exb_finish(&c, &p, &len, &err);
		tfk_alloc_fail_after(-1);
		if (rc && rc != TFK_ENOMEM)
			all = 0;
		tfk_exjson_reader_release(&r);
		tfk_exb_release(&c);
		if (!rc)
			break;
	}
	ok(n > 0 && all && rc == 0, "reading: ENOMEM until memory suffices "
	   "(%ld allocations)", n);

	tfk_exb_reset(&b);
	tfk_exb_add_int64s(&b, "n", (int64_t[300]){ 1 }, 300);
	tfk_exb_add_floats(&b, "f", (float[300]){ 1 }, 300);
	write_json();
	all = 1;
	for (n = 0; n < 100; n++) {
		struct tfk_buf o;

		tfk_buf_init(&o);
		tfk_alloc_fail_after(n);
		rc = tfk_exjson_write(&ex, &o, &err);
		tfk_alloc_fail_after(-1);
		if (rc && rc != TFK_ENOMEM)
			all = 0;
		tfk_buf_release(&o);
		if (!rc)
			break;
	}
	ok(n > 0 && all && rc == 0, "writing: ENOMEM until memory suffices "
	   "(%ld allocations)", n);
}

/* The python oracle ---------------------------------------------------- */

static void python_checks_our_lines(void)
{
	const char *dir = tap_tmpdir();
	char args[4096], path[1024], jpath[1024], *text = NULL;
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	FILE *f;
	long n = 0, bad = 0;
	int st;

	snprintf(args, sizeof(args), "cases '%s' 600", dir);
	st = oracle_run(args, &text, NULL);
	free(text);
	snprintf(path, sizeof(path), "%s/cases.tfrecord", dir);
	snprintf(jpath, sizeof(jpath), "%s/ours.jsonl", dir);
	if (st || tfk_rec_open(&r, path, TFK_COMP_NONE, 0, &err)) {
		ok(0, "oracle cases");
		return;
	}
	f = fopen(jpath, "wb");
	while (tfk_rec_next(r, &rec, &err) == 1) {
		tfk_buf_reset(&out);
		if (tfk_example_parse(&ex, rec.data, rec.len, &err) ||
		    tfk_exjson_write(&ex, &out, &err))
			bad++;
		fwrite(out.data, 1, out.len, f);
		fputc('\n', f);
		n++;
	}
	fclose(f);
	tfk_rec_close(r);
	is_int(n, 604, "wrote 604 lines");
	is_int(bad, 0, "each example written");
	snprintf(args, sizeof(args), "check-json '%s' '%s'", path, jpath);
	oracle_check(args, "python: each line is protobuf's Example in our "
		     "JSON form (value types, float bits, strings vs b64)");
}

static void python_reads_our_builds(void)
{
	const char *dir = tap_tmpdir();
	char args[4096], path[1024], opath[1024], *text = NULL, *lines, *want;
	char *l, *w, *nl;
	struct tfk_rec_writer *wr;
	size_t len, wlen;
	long n = 0, bad = 0, jbad = 0, jn = 0;
	int st;

	snprintf(args, sizeof(args), "json-cases '%s' 400", dir);
	st = oracle_run(args, &text, NULL);
	free(text);
	snprintf(path, sizeof(path), "%s/json.jsonl", dir);
	lines = tap_read_file(path, &len);
	snprintf(path, sizeof(path), "%s/json.txt", dir);
	want = tap_read_file(path, &wlen);
	snprintf(opath, sizeof(opath), "%s/fromjson.tfrecord", dir);
	if (st || !lines || !want ||
	    tfk_recw_open(&wr, opath, TFK_COMP_NONE, &err)) {
		ok(0, "oracle json cases");
		free(lines);
		free(want);
		return;
	}
	for (l = lines; *l; l = nl + 1) {
		const uint8_t *p;
		size_t m;
		json_t *j;

		nl = strchr(l, '\n');
		if (!nl)
			break;
		tfk_exb_reset(&b);
		if (tfk_exjson_read_line(&rd, l, (size_t)(nl - l), &b, &err) ||
		    tfk_exb_finish(&b, &p, &m, &err)) {
			if (bad++ < 3)
				tap_diag("line %ld: %s", n, err.msg);
			tfk_exb_reset(&b);
			tfk_exb_finish(&b, &p, &m, &err);
		}
		tfk_recw_write(wr, p, m, &err);
		/* jansson takes the lines without NaN/Infinity */
		j = json_loadb(l, (size_t)(nl - l), 0, NULL);
		if (j) {
			struct tfk_example_builder c;
			const uint8_t *q;
			size_t qn;

			tfk_exb_init(&c);
			if (tfk_exjson_read_json(&rd, j, &c, &err) ||
			    tfk_exb_finish(&c, &q, &qn, &err) || qn != m ||
			    memcmp(p, q, m))
				jbad++;
			tfk_exb_release(&c);
			json_decref(j);
			jn++;
		}
		n++;
	}
	tfk_recw_close(wr, &err);
	is_int(n, 400, "read 400 python-written lines");
	is_int(bad, 0, "each line reads");
	ok(jn > 100 && jbad == 0, "jansson reader builds the same bytes "
	   "(%ld lines, %ld differ)", jn, jbad);
	snprintf(args, sizeof(args), "dump '%s'", opath);
	st = oracle_run(args, &text, NULL);
	ok(st == 0 && !strcmp(text, want), "protobuf reads back the values "
	   "python put in the lines");
	if (st == 0 && strcmp(text, want)) {
		for (l = text, w = want; *l && *l == *w; l++, w++)
			;
		tap_diag("first difference: got %.80s\n#  want %.80s", l, w);
	}
	free(text);
	free(lines);
	free(want);
}

int main(void)
{
	tfk_example_init(&ex);
	tfk_exb_init(&b);
	tfk_buf_init(&out);
	tfk_exjson_reader_init(&rd, NULL, NULL);
	writing();
	float_spelling();
	number_reading();
	reading();
	jansson_agrees();
	alloc_failures();
	if (!oracle_find()) {
		ok(0, "tests/py/tfexample.py found");
	} else {
		python_checks_our_lines();
		python_reads_our_builds();
	}
	tfk_exjson_reader_release(&rd);
	tfk_buf_release(&out);
	tfk_exb_release(&b);
	tfk_example_release(&ex);
	return tap_done();
}
