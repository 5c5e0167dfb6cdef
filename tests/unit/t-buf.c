/*
 * t-buf.c - the byte buffer and its encoders.
 *
 * Oracles, none of them our own code: jansson decodes our JSON strings
 * and numbers; libc's strtof/strtod read our floats back; RFC 4648
 * section 10 gives the base64 vectors; the protobuf encoding guide gives
 * the varints; Unicode's table 3-7 ("well-formed UTF-8 byte sequences"),
 * written out below as ranges, judges the UTF-8 validator exhaustively
 * over every 1-3 byte sequence. Expected float strings are numpy's
 * shortest repr (np.float32) in C's %g spelling.
 */
#include "util/buf.h"
#include "util/alloc.h"
#include "util/err.h"
#include "tap.h"

#include <float.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* xorshift64*: reproducible random input without libc's rand state. */
static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1du;
}

static int buf_is(const struct tfk_buf *b, const char *want)
{
	return b->len == strlen(want) && !memcmp(b->data, want, b->len);
}

static void basics(void)
{
	struct tfk_buf b;
	uint8_t *mem;
	size_t i;
	int good = 1;

	tfk_buf_init(&b);
	ok(b.data == NULL && b.len == 0 && tfk_buf_ok(&b), "init: empty, ok");
	tfk_buf_adds(&b, "abc");
	tfk_buf_addc(&b, '-');
	tfk_buf_add(&b, "xyz", 2);
	tfk_buf_add(&b, NULL, 0);
	ok(buf_is(&b, "abc-xy"), "adds, addc, add");
	tfk_buf_addf(&b, "[%d|%s]", 42, "q");
	ok(buf_is(&b, "abc-xy[42|q]"), "addf appends");
	mem = b.data;
	tfk_buf_reset(&b);
	ok(b.len == 0 && b.data == mem, "reset keeps the memory");
	for (i = 0; i < 1000; i++)
		tfk_buf_addf(&b, "%05zu,", i);
	for (i = 0; i < 1000 && good; i++) {
		char want[8];

		snprintf(want, sizeof(want), "%05zu,", i);
		good = !memcmp(b.data + 6 * i, want, 6);
	}
	ok(good && b.len == 6000, "1000 addf calls grow the buffer intact");
	tfk_buf_reset(&b);
	{
		char big[300];

		memset(big, 'z', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		tfk_buf_adds(&b, "ab");
		tfk_buf_addf(&b, "<%s>", big);
		ok(b.len == 2 + 301 && b.data[2] == '<' && b.data[302] == '>' &&
		   b.data[150] == 'z', "addf longer than the first reservation");
	}
	ok(b.cap >= b.len, "capacity covers length");
	tfk_buf_release(&b);
	ok(b.data == NULL && b.len == 0 && b.cap == 0, "release empties");
	tfk_buf_release(NULL);
	ok(1, "release(NULL) is a no-op");
}

static void oom(void)
{
	struct tfk_buf b;

	tfk_buf_init(&b);
	tfk_alloc_fail_after(0);
	tfk_buf_adds(&b, "hello");
	tfk_alloc_fail_after(-1);
	ok(!tfk_buf_ok(&b) && b.len == 0, "failed growth sets the sticky flag");
	tfk_buf_adds(&b, "more");
	ok(!tfk_buf_ok(&b) && b.len == 0, "later appends are dropped while flagged");
	is_int(tfk_buf_reserve(&b, 1), TFK_ENOMEM, "reserve reports ENOMEM while flagged");
	tfk_buf_reset(&b);
	ok(tfk_buf_ok(&b), "reset clears the flag");
	tfk_buf_adds(&b, "ok");
	ok(buf_is(&b, "ok"), "appends work again");
	is_int(tfk_buf_reserve(&b, SIZE_MAX - 8), TFK_ENOMEM,
	       "absurd reservation refused, not wrapped");
	ok(!tfk_buf_ok(&b) && buf_is(&b, "ok"), "contents kept after a refused reserve");
	tfk_buf_reset(&b);
	tfk_buf_adds(&b, "0123456789");
	tfk_alloc_fail_after(0);
	{
		char big[1000];

		memset(big, 'a', sizeof(big));
		tfk_buf_add(&b, big, sizeof(big));
	}
	tfk_alloc_fail_after(-1);
	ok(!tfk_buf_ok(&b) && buf_is(&b, "0123456789"),
	   "a failed realloc keeps the old contents");
	tfk_buf_release(&b);
}

static void varints(void)
{
	/* protobuf encoding guide: 1 -> 01, 150 -> 96 01, 300 -> ac 02 */
	static const struct { uint64_t v; const char *hex; } cases[] = {
		{ 0, "00" }, { 1, "01" }, { 127, "7f" }, { 128, "8001" },
		{ 150, "9601" }, { 300, "ac02" }, { 16383, "ff7f" },
		{ 16384, "808001" }, { UINT32_MAX, "ffffffff0f" },
		{ (uint64_t)-1, "ffffffffffffffffff01" },
		{ (uint64_t)-2, "feffffffffffffffff01" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tfk_buf b;
		char hex[32] = "";
		size_t k;

		tfk_buf_init(&b);
		tfk_buf_add_varint(&b, cases[i].v);
		for (k = 0; k < b.len && k < 15; k++)
			sprintf(hex + 2 * k, "%02x", b.data[k]);
		is_str(hex, cases[i].hex, "varint %llu", (unsigned long long)cases[i].v);
		tfk_buf_release(&b);
	}
}

/* JSON strings ------------------------------------------------------- */

static void json_exact(const char *in, size_t n, const char *want,
		       const char *name)
{
	struct tfk_buf b;

	tfk_buf_init(&b);
	tfk_buf_add_json_str(&b, in, n);
	is_mem(b.data, b.len, want, strlen(want), "json string: %s", name);
	tfk_buf_release(&b);
}

static void json_strings(void)
{
	int i, good = 1, bad_at = -1;

	json_exact("", 0, "\"\"", "empty");
	json_exact("plain", 5, "\"plain\"", "plain ASCII unchanged");
	json_exact("a\"b\\c/d", 7, "\"a\\\"b\\\\c/d\"", "quote and backslash escaped, slash not");
	json_exact("\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"", "short escapes");
	json_exact("\x01\x1f\x7f", 3, "\"\\u0001\\u001f\x7f\"",
		   "other controls as \\u00XX, DEL literal");
	json_exact("a\0b", 3, "\"a\\u0000b\"", "NUL as \\u0000");
	json_exact("h\xc3\xa9llo \xe2\x82\xac \xf0\x9d\x84\x9e", 15,
		   "\"h\xc3\xa9llo \xe2\x82\xac \xf0\x9d\x84\x9e\"",
		   "UTF-8 passes through unescaped");

	/* Random strings of controls, quotes, backslashes and multi-byte
	 * characters, decoded by jansson: must give back the input. */
	for (i = 0; i < 3000 && good; i++) {
		static const char *const parts[] = {
			"a", "Z", " ", "\"", "\\", "/", "\n", "\t", "\x01", "\x1f",
			"\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
			"\r", "\b", "\f", "\x1b", "{", "}",
		};
		char in[256];
		size_t n = 0, len = rnd() % 40;
		struct tfk_buf b;
		json_t *j;
		json_error_t je;

		while (len--) {
			const char *p = parts[rnd() % 20];

			memcpy(in + n, p, strlen(p));
			n += strlen(p);
		}
		if (rnd() % 4 == 0)
			in[n++] = '\0';
		tfk_buf_init(&b);
		tfk_buf_add_json_str(&b, in, n);
		j = json_loadb((const char *)b.data, b.len,
			       JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
		good = j && json_is_string(j) && json_string_length(j) == n &&
		       !memcmp(json_string_value(j), in, n);
		if (!good)
			bad_at = i;
		json_decref(j);
		tfk_buf_release(&b);
	}
	ok(good, "3000 random strings: jansson decodes them back exactly%s",
	   bad_at >= 0 ? " (failed)" : "");
}

/* Floats ---------------------------------------------------------------- */

/* Significant digits in a %g-style number ("-1.25e-07" -> 3). */
static int sig_digits(const char *s)
{
	int n = 0, lead = 1, trail = 0;

	for (; *s && *s != 'e'; s++) {
		if (*s < '0' || *s > '9')
			continue;
		if (lead && *s == '0')
			continue;
		lead = 0;
		n++;
		trail = *s == '0' ? trail + 1 : 0;
	}
	return n - trail;
}

static int json_number(const char *s, size_t n)
{
	json_error_t je;
	json_t *j = json_loadb(s, n, JSON_DECODE_ANY, &je);
	int r = j && json_is_number(j);

	json_decref(j);
	return r;
}

static const char *fmt_float(struct tfk_buf *b, float v)
{
	tfk_buf_reset(b);
	tfk_buf_add_float(b, v);
	tfk_buf_addc(b, '\0');
	return (const char *)b->data;
}

static const char *fmt_double(struct tfk_buf *b, double v)
{
	tfk_buf_reset(b);
	tfk_buf_add_double(b, v);
	tfk_buf_addc(b, '\0');
	return (const char *)b->data;
}

static void floats(void)
{
	static const struct { float v; const char *s; } fc[] = {
		{ 0.0f, "0" }, { 1.0f, "1" }, { -2.5f, "-2.5" }, { 0.1f, "0.1" },
		{ 0.3f, "0.3" }, { 1e10f, "1e+10" }, { 123456.7f, "123456.7" },
		{ 16777216.0f, "16777216" }, { 16777217.0f, "16777216" },
		{ 1.0f / 3.0f, "0.33333334" }, { FLT_MAX, "3.4028235e+38" },
		{ FLT_MIN, "1.1754944e-38" }, { 0.2916666567325592f, "0.29166666" },
		{ 1e-7f, "1e-07" },
	};
	static const struct { double v; const char *s; } dc[] = {
		{ 0.1, "0.1" }, { 1.0 / 3.0, "0.3333333333333333" },
		{ 2.0 / 3.0, "0.6666666666666666" }, { 1e300, "1e+300" },
		{ DBL_MAX, "1.7976931348623157e+308" }, { 0.4280262589454651, "0.4280262589454651" },
		{ 100.0, "100" }, { -1e-5, "-1e-05" },
	};
	struct tfk_buf b;
	size_t i;
	long k, n_rt = 0, n_short = 0, n_json = 0, n_sub = 0, n_sub_rt = 0;
	const char *s;

	tfk_buf_init(&b);
	for (i = 0; i < sizeof(fc) / sizeof(fc[0]); i++)
		is_str(fmt_float(&b, fc[i].v), fc[i].s, "float %s", fc[i].s);
	for (i = 0; i < sizeof(dc) / sizeof(dc[0]); i++)
		is_str(fmt_double(&b, dc[i].v), dc[i].s, "double %s", dc[i].s);
	is_str(fmt_float(&b, -0.0f), "-0", "float -0 keeps its sign");
	is_str(fmt_float(&b, NAN), "NaN", "float NaN as Python's json");
	is_str(fmt_float(&b, INFINITY), "Infinity", "float +inf as Python's json");
	is_str(fmt_float(&b, -INFINITY), "-Infinity", "float -inf as Python's json");
	is_str(fmt_double(&b, NAN), "NaN", "double NaN");
	is_str(fmt_double(&b, -INFINITY), "-Infinity", "double -inf");

	/* 200000 random finite floats (every exponent): read back equal,
	 * valid JSON, and no shorter decimal rounds back (normal range). */
	for (k = 0; k < 200000; k++) {
		uint32_t bits = (uint32_t)rnd();
		float v, back;
		int nd;

		memcpy(&v, &bits, 4);
		if (!isfinite(v)) {
			k--;
			continue;
		}
		s = fmt_float(&b, v);
		back = strtof(s, NULL);
		if (!memcmp(&back, &v, 4))
			n_rt++;
		if (k % 20 == 0 && json_number(s, strlen(s)))
			n_json++;
		if (v != 0 && fabsf(v) < FLT_MIN) {
			n_sub++;
			n_sub_rt += !memcmp(&back, &v, 4);
			continue;
		}
		nd = sig_digits(s);
		if (nd <= 1) {
			n_short++;
		} else {
			char t[400];

			snprintf(t, sizeof(t), "%.*g", nd - 1, (double)v);
			if (strtof(t, NULL) != v)
				n_short++;
		}
	}
	is_int(n_rt, 200000, "200000 random floats read back bit-exact");
	is_int(n_json, 10000, "every sampled float is a JSON number");
	is_int(n_short, 200000 - n_sub, "normal floats use the fewest digits");
	ok(n_sub > 0 && n_sub_rt == n_sub, "%ld subnormal floats read back", n_sub);

	n_rt = n_short = n_json = 0;
	for (k = 0; k < 100000; k++) {
		uint64_t bits = rnd();
		double v, back;
		int nd;

		memcpy(&v, &bits, 8);
		if (!isfinite(v) || (v != 0 && fabs(v) < DBL_MIN)) {
			k--;
			continue;
		}
		s = fmt_double(&b, v);
		back = strtod(s, NULL);
		if (!memcmp(&back, &v, 8))
			n_rt++;
		if (k % 20 == 0 && json_number(s, strlen(s)))
			n_json++;
		nd = sig_digits(s);
		if (nd <= 1) {
			n_short++;
		} else {
			char t[400];

			snprintf(t, sizeof(t), "%.*g", nd - 1, v);
			if (strtod(t, NULL) != v)
				n_short++;
		}
	}
	is_int(n_rt, 100000, "100000 random doubles read back bit-exact");
	is_int(n_json, 5000, "every sampled double is a JSON number");
	is_int(n_short, 100000, "normal doubles use the fewest digits");
	tfk_buf_release(&b);
}

/* Base64 ------------------------------------------------------------- */

static int b64val(int c)
{
	if (c >= 'A' && c <= 'Z') return c - 'A';
	if (c >= 'a' && c <= 'z') return c - 'a' + 26;
	if (c >= '0' && c <= '9') return c - '0' + 52;
	if (c == '+') return 62;
	if (c == '/') return 63;
	return -1;
}

/* Strict RFC 4648 decoder for the round trip; returns length or -1. */
static long b64dec(const uint8_t *s, size_t n, uint8_t *out)
{
	size_t i, o = 0;

	if (n % 4)
		return -1;
	for (i = 0; i < n; i += 4) {
		int a = b64val(s[i]), b = b64val(s[i + 1]);
		int c = s[i + 2] == '=' ? -2 : b64val(s[i + 2]);
		int d = s[i + 3] == '=' ? -2 : b64val(s[i + 3]);

		if (a < 0 || b < 0 || c == -1 || d == -1 ||
		    ((c == -2 || d == -2) && i + 4 != n) || (c == -2 && d != -2))
			return -1;
		out[o++] = (uint8_t)(a << 2 | b >> 4);
		if (c >= 0)
			out[o++] = (uint8_t)((b & 15) << 4 | c >> 2);
		if (d >= 0)
			out[o++] = (uint8_t)((c & 3) << 6 | d);
	}
	return (long)o;
}

static void base64(void)
{
	/* RFC 4648 section 10 */
	static const char *const rfc[][2] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" },
		{ "foob", "Zm9vYg==" }, { "fooba", "Zm9vYmE=" },
		{ "foobar", "Zm9vYmFy" },
	};
	struct tfk_buf b;
	uint8_t in[300], back[300];
	size_t i, n;
	int good = 1;

	tfk_buf_init(&b);
	for (i = 0; i < 7; i++) {
		tfk_buf_reset(&b);
		tfk_buf_add_base64(&b, (const uint8_t *)rfc[i][0], strlen(rfc[i][0]));
		is_mem(b.data, b.len, rfc[i][1], strlen(rfc[i][1]),
		       "base64 RFC 4648 '%s'", rfc[i][0]);
	}
	tfk_buf_reset(&b);
	{
		static const uint8_t hi[] = { 0xfb, 0xff, 0xbf };

		tfk_buf_add_base64(&b, hi, 3);
		ok(buf_is(&b, "+/+/"), "base64 uses + and / (not the URL alphabet)");
	}
	tfk_buf_reset(&b);
	tfk_buf_adds(&b, "x:");
	tfk_buf_add_base64(&b, (const uint8_t *)"foob", 4);
	ok(buf_is(&b, "x:Zm9vYg=="), "base64 appends after existing bytes");
	for (n = 0; n < 300 && good; n++) {
		long m;

		for (i = 0; i < n; i++)
			in[i] = (uint8_t)rnd();
		tfk_buf_reset(&b);
		tfk_buf_add_base64(&b, in, n);
		m = b64dec(b.data, b.len, back);
		good = b.len == (n + 2) / 3 * 4 && m == (long)n &&
		       !memcmp(in, back, n);
	}
	ok(good, "random bytes of every length 0..299 decode back");
	tfk_buf_release(&b);
}

/* UTF-8 ---------------------------------------------------------------- */

/* Unicode 15, table 3-7: the well-formed byte sequences. */
static int within(uint8_t c, int lo, int hi)
{
	return c >= lo && c <= hi;
}

static int table37(const uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint8_t c = p[i];
		int lo = 0x80, hi = 0xbf, k;

		if (c <= 0x7f) {
			i++;
			continue;
		}
		if (within(c, 0xc2, 0xdf))
			k = 1;
		else if (c == 0xe0)
			k = 2, lo = 0xa0;
		else if (within(c, 0xe1, 0xec) || within(c, 0xee, 0xef))
			k = 2;
		else if (c == 0xed)
			k = 2, hi = 0x9f;
		else if (c == 0xf0)
			k = 3, lo = 0x90;
		else if (within(c, 0xf1, 0xf3))
			k = 3;
		else if (c == 0xf4)
			k = 3, hi = 0x8f;
		else
			return 0;
		if (n - i <= (size_t)k || !within(p[i + 1], lo, hi))
			return 0;
		for (int j = 2; j <= k; j++)
			if (!within(p[i + j], 0x80, 0xbf))
				return 0;
		i += (size_t)k + 1;
	}
	return 1;
}

static void utf8(void)
{
	static const struct { const char *s; size_t n; int valid; const char *what; } cases[] = {
		{ "", 0, 1, "empty" },
		{ "a\0b", 3, 1, "NUL is valid UTF-8" },
		{ "\x7f", 1, 1, "U+007F" },
		{ "\xc2\x80", 2, 1, "U+0080" },
		{ "\xdf\xbf", 2, 1, "U+07FF" },
		{ "\xe0\xa0\x80", 3, 1, "U+0800" },
		{ "\xed\x9f\xbf", 3, 1, "U+D7FF" },
		{ "\xee\x80\x80", 3, 1, "U+E000" },
		{ "\xef\xbf\xbf", 3, 1, "U+FFFF" },
		{ "\xef\xbb\xbf", 3, 1, "BOM" },
		{ "\xf0\x90\x80\x80", 4, 1, "U+10000" },
		{ "\xf4\x8f\xbf\xbf", 4, 1, "U+10FFFF" },
		{ "h\xc3\xa9llo \xe2\x82\xac \xf0\x9d\x84\x9e", 15, 1, "mixed text" },
		{ "\x80", 1, 0, "lone continuation byte" },
		{ "\xbf", 1, 0, "lone continuation 0xBF" },
		{ "a\x80z", 3, 0, "continuation inside ASCII" },
		{ "\xc0\x80", 2, 0, "overlong NUL (C0 80)" },
		{ "\xc1\xbf", 2, 0, "overlong U+007F (C1 BF)" },
		{ "\xe0\x80\x80", 3, 0, "overlong NUL in 3 bytes" },
		{ "\xe0\x9f\xbf", 3, 0, "overlong U+07FF in 3 bytes" },
		{ "\xf0\x80\x80\x80", 4, 0, "overlong NUL in 4 bytes" },
		{ "\xf0\x8f\xbf\xbf", 4, 0, "overlong U+FFFF in 4 bytes" },
		{ "\xed\xa0\x80", 3, 0, "surrogate U+D800" },
		{ "\xed\xbf\xbf", 3, 0, "surrogate U+DFFF" },
		{ "\xed\xa0\xbd\xed\xb8\x80", 6, 0, "CESU-8 surrogate pair" },
		{ "\xf4\x90\x80\x80", 4, 0, "U+110000 (> U+10FFFF)" },
		{ "\xf5\x80\x80\x80", 4, 0, "F5 lead byte" },
		{ "\xf7\xbf\xbf\xbf", 4, 0, "U+1FFFFF" },
		{ "\xf8\x88\x80\x80\x80", 5, 0, "5-byte form" },
		{ "\xfc\x84\x80\x80\x80\x80", 6, 0, "6-byte form" },
		{ "\xfe", 1, 0, "FE" },
		{ "\xff", 1, 0, "FF" },
		{ "\xc2", 1, 0, "truncated 2-byte" },
		{ "\xe0\xa0", 2, 0, "truncated 3-byte" },
		{ "\xf0\x90\x80", 3, 0, "truncated 4-byte" },
		{ "ok\xe2\x82", 4, 0, "truncated at the end of text" },
		{ "\xe2\x28\xa1", 3, 0, "bad second byte" },
		{ "\xe2\x82\x28", 3, 0, "bad third byte" },
		{ "\xc2\x41", 2, 0, "ASCII where a continuation belongs" },
		{ "\xf0\x90\x80\xc0", 4, 0, "bad fourth byte" },
	};
	uint8_t s[4];
	size_t i;
	long bad = 0, n;
	unsigned a, b, c;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_int(tfk_utf8_valid((const uint8_t *)cases[i].s, cases[i].n),
		       cases[i].valid, "utf-8 %s: %s", cases[i].valid ? "valid" : "invalid",
		       cases[i].what);

	/* Every sequence of 1, 2 and 3 bytes against table 3-7. */
	n = 0;
	for (a = 0; a < 256; a++) {
		s[0] = (uint8_t)a;
		bad += tfk_utf8_valid(s, 1) != table37(s, 1);
		for (b = 0; b < 256; b++) {
			s[1] = (uint8_t)b;
			bad += tfk_utf8_valid(s, 2) != table37(s, 2);
			for (c = 0; c < 256; c++) {
				s[2] = (uint8_t)c;
				n++;
				bad += tfk_utf8_valid(s, 3) != table37(s, 3);
			}
		}
	}
	is_int(bad, 0, "all %ld 3-byte (and 1-, 2-byte) sequences agree with table 3-7", n);

	/* 4-byte sequences: every lead F0..FF and second byte, random rest,
	 * plus every code point's canonical encoding. */
	bad = 0;
	for (a = 0xf0; a < 256; a++)
		for (b = 0; b < 256; b++)
			for (c = 0; c < 16; c++) {
				uint32_t r = (uint32_t)rnd();

				s[0] = (uint8_t)a;
				s[1] = (uint8_t)b;
				s[2] = c < 8 ? (uint8_t)(0x80 | (r & 0x3f)) : (uint8_t)r;
				s[3] = c % 2 ? (uint8_t)(0x80 | ((r >> 8) & 0x3f)) : (uint8_t)(r >> 8);
				bad += tfk_utf8_valid(s, 4) != table37(s, 4);
			}
	is_int(bad, 0, "4-byte sequences agree with table 3-7");

	bad = 0;
	for (uint32_t cp = 0; cp <= 0x10ffff; cp++) {
		size_t k;

		if (cp < 0x80) {
			s[0] = (uint8_t)cp;
			k = 1;
		} else if (cp < 0x800) {
			s[0] = (uint8_t)(0xc0 | cp >> 6);
			s[1] = (uint8_t)(0x80 | (cp & 0x3f));
			k = 2;
		} else if (cp < 0x10000) {
			s[0] = (uint8_t)(0xe0 | cp >> 12);
			s[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
			s[2] = (uint8_t)(0x80 | (cp & 0x3f));
			k = 3;
		} else {
			s[0] = (uint8_t)(0xf0 | cp >> 18);
			s[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
			s[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
			s[3] = (uint8_t)(0x80 | (cp & 0x3f));
			k = 4;
		}
		bad += tfk_utf8_valid(s, k) != !(cp >= 0xd800 && cp <= 0xdfff);
	}
	is_int(bad, 0, "every scalar value valid, every surrogate invalid");
}

int main(void)
{
	basics();
	oom();
	varints();
	json_strings();
	floats();
	base64();
	utf8();
	return tap_done();
}
