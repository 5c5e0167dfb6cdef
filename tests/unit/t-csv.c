/*
 * t-csv.c - CSV tokenizer (every RFC 4180 rule, window boundaries,
 * errors with line:col), number parsing against strtof/strtoll as the
 * reference (random decimals, float midpoints, subnormals, overflow),
 * type inference, Example bytes against hand-assembled protobuf wire
 * bytes, bad-row handling, schema statistics and allocation failures.
 */
#include "data/csv.h"
#include "util/alloc.h"
#include "tap.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Rows of a parsed input as text: fields joined by '|', rows by '\n',
 * each field as "line:col=value". */
static char *dump(const struct tfk_csv_batch *b, int with_pos)
{
	static char out[8192];
	size_t r, f, k = 0;

	out[0] = '\0';
	for (r = 0; r < b->n_row; r++) {
		const struct tfk_csv_row *row = &b->row[r];

		for (f = 0; f < row->n_cells; f++) {
			const struct tfk_csv_cell *c = &b->cell[row->cell + f];
			size_t len;
			const char *s = tfk_csv_field(b, r, f, &len);

			if (f)
				out[k++] = '|';
			if (with_pos)
				k += (size_t)snprintf(out + k, sizeof(out) - k,
						      "%" PRIu64 ":%" PRIu32 "=",
						      row->line + c->dline, c->col);
			memcpy(out + k, s, len);
			k += len;
		}
		out[k++] = '\n';
		out[k] = '\0';
	}
	return out;
}

/* Parse text (n bytes) with the given window step; returns the dump or
 * the error message. */
static const char *parse(const char *text, size_t n, int delim, size_t step,
			 int with_pos)
{
	static char msg[TFK_ERR_MSG_MAX + 8];
	struct tfk_csv_reader *r;
	struct tfk_csv_batch b;
	struct tfk_err err;
	long got;
	const char *res;

	if (tfk_csv_open_mem(&r, "t.csv", text, n, delim, &err)) {
		snprintf(msg, sizeof(msg), "E %s", err.msg);
		return msg;
	}
	if (step)
		tfk_csv_set_step(r, step);
	tfk_csv_batch_init(&b);
	/* small batches: rows must carry over between calls */
	while ((got = tfk_csv_read(r, &b, 2, SIZE_MAX, &err)) > 0)
		;
	if (got < 0) {
		snprintf(msg, sizeof(msg), "E %s", err.msg);
		res = msg;
	} else {
		res = dump(&b, with_pos);
	}
	tfk_csv_batch_release(&b);
	tfk_csv_close(r);
	return res;
}

#define P(s) parse(s, sizeof(s) - 1, ',', 0, 0)
#define PP(s) parse(s, sizeof(s) - 1, ',', 0, 1)

static void tokenizer(void)
{
	/* RFC 4180 2.1: records on lines ending in CRLF */
	is_str(P("aaa,bbb,ccc\r\nzzz,yyy,xxx\r\n"), "aaa|bbb|ccc\nzzz|yyy|xxx\n",
	       "2.1 CRLF rows");
	/* 2.2: the last record may lack a line break */
	is_str(P("aaa,bbb,ccc\r\nzzz,yyy,xxx"), "aaa|bbb|ccc\nzzz|yyy|xxx\n",
	       "2.2 no final line break");
	is_str(P("a,b\nc,d\n"), "a|b\nc|d\n", "LF rows");
	is_str(P("a,b\r\nc,d\ne,f\r\n"), "a|b\nc|d\ne|f\n", "mixed CRLF and LF");
	/* 2.4: spaces are part of a field */
	is_str(P(" a , b \n"), " a | b \n", "2.4 spaces kept");
	/* 2.5: fields may be quoted */
	is_str(P("\"aaa\",\"bbb\",\"ccc\"\r\n"), "aaa|bbb|ccc\n", "2.5 quoted");
	/* 2.6: quoted fields hold CRLF, quotes and commas */
	is_str(P("\"aaa\",\"b\r\nbb\",\"ccc\"\r\nzzz,yyy,xxx\r\n"),
	       "aaa|b\r\nbb|ccc\nzzz|yyy|xxx\n", "2.6 CRLF inside quotes");
	is_str(P("\"a,b\",c\n"), "a,b|c\n", "2.6 comma inside quotes");
	/* 2.7: "" is one quote */
	is_str(P("\"aaa\",\"b\"\"bb\",\"ccc\"\n"), "aaa|b\"bb|ccc\n", "2.7 escaped quote");
	is_str(P("\"\"\"\"\n"), "\"\n", "2.7 a field of one quote");
	is_str(P("\"\",x\n"), "|x\n", "quoted empty field");
	is_str(P("a,,c\n,,\n"), "a||c\n||\n", "empty fields");
	is_str(P("a,\n"), "a|\n", "trailing delimiter: empty last field");
	is_str(P("a,b,"), "a|b|\n", "trailing delimiter at end of input");
	is_str(P("ab\"c,d\n"), "ab\"c|d\n", "quote inside unquoted field is data");
	is_str(P(" \"a\",b\n"), " \"a\"|b\n", "quote after a space is data");
	is_str(P("a\rb,c\n"), "a\rb|c\n", "lone CR inside a field is data");
	is_str(P("a,b\r"), "a|b\n", "final CR without LF is no data");
	is_str(P("\"q\"\r\n\"r\"\r"), "q\nr\n", "CR after closing quote");
	/* BOM */
	is_str(P("\xef\xbb\xbf" "a,b\n1,2\n"), "a|b\n1|2\n", "BOM skipped");
	is_str(P("x\n\xef\xbb\xbf" "a\n"), "x\n\xef\xbb\xbf" "a\n",
	       "BOM past the start is data");
	is_str(P("\xef\xbb"), "\xef\xbb\n", "two BOM bytes alone are data");
	is_str(P("\xef\xbb\xbf"), "", "a BOM alone is no row");
	/* blank lines */
	is_str(P("a\n\n\r\nb\n\n"), "a\nb\n", "blank lines skipped");
	is_str(P("\"\"\n"), "\n", "a quoted empty line is a row");
	is_str(P(""), "", "empty input: no rows");
	is_str(P("\n\n"), "", "only blank lines: no rows");
	/* other delimiters */
	is_str(parse("a\tb\t\"c\td\"\n", 11, '\t', 0, 0), "a|b|c\td\n", "tab");
	is_str(parse("a;b,c\n", 6, ';', 0, 0), "a|b,c\n", "semicolon");
	ok(!strncmp(parse("a", 1, '"', 0, 0), "E delimiter", 11), "quote delimiter refused");
	ok(!strncmp(parse("a", 1, '\n', 0, 0), "E delimiter", 11), "LF delimiter refused");
	/* long fields cross the 16-byte scanner */
	is_str(P("0123456789abcdefghijklmnopqrstuvwxyz,0123456789abcdef\n"),
	       "0123456789abcdefghijklmnopqrstuvwxyz|0123456789abcdef\n",
	       "fields longer than 16 bytes");
	is_str(P("0123456789abcdef\n0123456789abcde,\n"),
	       "0123456789abcdef\n0123456789abcde|\n", "delimiter at byte 15");

	/* positions */
	is_str(PP("ab,cd\n\"e\nf\",g\n"),
	       "1:1=ab|1:4=cd\n2:1=e\nf|3:4=g\n", "line:col of fields");
	is_str(PP("\xef\xbb\xbf" "a,b\n"), "1:1=a|1:3=b\n", "columns count after the BOM");
	is_str(PP("\n\na\n"), "3:1=a\n", "blank lines are counted");

	/* errors */
	is_str(P("a,b\nc,\"d\ne\n"), "E t.csv:2:3: unterminated quoted field",
	       "unterminated quote names its start");
	is_str(P("a,\"b\"c\n"), "E t.csv:1:6: text after closing quote",
	       "text after closing quote");
	is_str(P("\"a\"\"\n"), "E t.csv:1:1: unterminated quoted field",
	       "quote pair then end");
	is_str(P("x\n\"a\nb\" c\n"), "E t.csv:3:3: text after closing quote",
	       "position after a quoted newline");
}

/* Every window step gives the same rows as one window. */
static void boundaries(void)
{
	static const char text[] =
		"\xef\xbb\xbf" "h1,h2,h3\r\n"
		"\"a,\"\"b\"\"\r\nc\",,\"\"\r\n"
		"0123456789abcdefghij,\"q\",x\r\n"
		"\n"
		"last,\"\"\"\",row";
	const char *want;
	char ref[8192];
	size_t step;
	int same = 1;

	want = parse(text, sizeof(text) - 1, ',', 0, 1);
	snprintf(ref, sizeof(ref), "%s", want);
	is_str(ref, "1:1=h1|1:4=h2|1:7=h3\n"
	       "2:1=a,\"b\"\r\nc|3:4=|3:5=\n"
	       "4:1=0123456789abcdefghij|4:22=q|4:26=x\n"
	       "6:1=last|6:6=\"|6:11=row\n", "reference parse");
	for (step = 1; step < sizeof(text) + 2; step++) {
		const char *got = parse(text, sizeof(text) - 1, ',', step, 1);

		if (strcmp(got, ref)) {
			same = 0;
			tap_diag("step %zu: %s", step, got);
		}
	}
	ok(same, "every window step parses alike");
	is_str(parse("a,\"b", 4, ',', 1, 0), "E t.csv:1:3: unterminated quoted field",
	       "unterminated quote, byte by byte");
}

static void limits(void)
{
	size_t n = TFK_CSV_MAX_ROW + 100;
	char *big = malloc(n), *wide;
	const char *res;

	memset(big, 'x', n);
	big[n - 1] = '\n';
	res = parse(big, n, ',', 0, 0);
	ok(strstr(res, "t.csv:1:1: row longer than") != NULL,
	   "a row over the limit is refused: %s", res);
	big[0] = '"';
	res = parse(big, n, ',', 0, 0);
	is_str(res, "E t.csv:1:1: unterminated quoted field",
	       "an unterminated quote over the limit");
	free(big);

	n = 2 * ((size_t)TFK_CSV_MAX_FIELDS + 1);
	wide = malloc(n);
	memset(wide, ',', n);
	res = parse(wide, n, ',', 0, 0);
	ok(strstr(res, "more than 1048576 fields") != NULL,
	   "a row over the field limit is refused: %.80s", res);
	free(wide);
}

static void files(void)
{
	char path[512];
	struct tfk_csv_reader *r;
	struct tfk_csv_batch b;
	struct tfk_err err;
	gzFile gz;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/t.csv.gz", tap_tmpdir());
	gz = gzopen(path, "wb");
	gzputs(gz, "\xef\xbb\xbf" "a,b\r\n1,\"x\r\ny\"\r\n");
	gzclose(gz);
	tfk_csv_batch_init(&b);
	is_int(tfk_csv_open(&r, path, ',', &err), 0, "open gzip csv");
	n = tfk_csv_read(r, &b, 100, SIZE_MAX, &err);
	is_int(n, 2, "gzip csv: 2 rows");
	is_str(dump(&b, 0), "a|b\n1|x\r\ny\n", "gzip csv: inflated and parsed");
	is_int(tfk_csv_read(r, &b, 100, SIZE_MAX, &err), 0, "gzip csv: end");
	tfk_csv_close(r);

	snprintf(path, sizeof(path), "%s/t.csv", tap_tmpdir());
	f = fopen(path, "wb");
	fputs("x,y\n3,4\n5,6\n", f);
	fclose(f);
	tfk_csv_batch_reset(&b);
	is_int(tfk_csv_open(&r, path, ',', &err), 0, "open plain csv");
	is_int(tfk_csv_read(r, &b, 2, SIZE_MAX, &err), 2, "max_rows respected");
	is_int(tfk_csv_offset(r), 8, "offset after two rows");
	is_int(tfk_csv_size(r), 12, "size of the file");
	is_int(tfk_csv_read(r, &b, 2, 1, &err), 1, "max_bytes ends a batch");
	is_str(dump(&b, 0), "x|y\n3|4\n5|6\n", "rows appended across calls");
	tfk_csv_close(r);
	tfk_csv_batch_release(&b);

	snprintf(path, sizeof(path), "%s/nonexistent.csv", tap_tmpdir());
	is_int(tfk_csv_open(&r, path, ',', &err), TFK_EIO, "missing file");
	ok(strstr(err.msg, "nonexistent.csv") != NULL, "error names the file");
	is_int(tfk_csv_open(&r, tap_tmpdir(), ',', &err), TFK_EIO, "directory refused");
}

/* Numbers -------------------------------------------------------------- */

static int same_float(float a, float b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b) && !signbit(a) == !signbit(b);
	return !memcmp(&a, &b, sizeof(a));
}

/* Our parse against strtof of the same text; counts mismatches. */
static int check_float(const char *s, long *bad)
{
	float got = 0, want = strtof(s, NULL);

	if (tfk_csv_parse_float(s, strlen(s), &got)) {
		if ((*bad)++ < 5)
			tap_diag("refused '%s'", s);
		return 0;
	}
	if (!same_float(got, want)) {
		if ((*bad)++ < 5)
			tap_diag("'%s': got %a want %a", s, got, want);
		return 0;
	}
	return 1;
}

static void ints(void)
{
	static const struct { const char *s; int rc; int64_t v; } c[] = {
		{ "0", 0, 0 }, { "-0", 0, 0 }, { "+7", 0, 7 }, { " 12\t", 0, 12 },
		{ "007", 0, 7 }, { "9223372036854775807", 0, INT64_MAX },
		{ "-9223372036854775808", 0, INT64_MIN },
		{ "9223372036854775808", -1, 0 }, { "-9223372036854775809", -1, 0 },
		{ "99999999999999999999", -1, 0 }, { "1.0", -1, 0 }, { "", -1, 0 },
		{ "-", -1, 0 }, { " ", -1, 0 }, { "1 2", -1, 0 }, { "0x10", -1, 0 },
		{ "1e3", -1, 0 }, { "--1", -1, 0 }, { "12a", -1, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int64_t v = 0;
		int rc = tfk_csv_parse_int64(c[i].s, strlen(c[i].s), &v);

		if (c[i].rc)
			is_int(rc, -1, "int64 '%s' refused", c[i].s);
		else
			ok(rc == 0 && v == c[i].v, "int64 '%s' = %" PRId64, c[i].s, v);
	}
	/* random values round trip against strtoll */
	{
		long bad = 0, k;
		uint64_t x = 88172645463325252ull;

		for (k = 0; k < 100000; k++) {
			char s[32];
			int64_t v, want;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			want = (int64_t)(x >> (x % 63));
			if (x & 1)
				want = -want;
			snprintf(s, sizeof(s), "%" PRId64, want);
			if (tfk_csv_parse_int64(s, strlen(s), &v) || v != want ||
			    v != strtoll(s, NULL, 10))
				bad++;
		}
		is_int(bad, 0, "100000 random int64s match strtoll");
	}
}

static void floats(void)
{
	static const char *good[] = {
		"0", "-0", "0.0", "-0.0", "0e5", ".5", "5.", "-.5e1", "+1.5",
		"1.5", "3.14159", "0.1", "1e10", "1E-10", "123456789", "1.17549435e-38",
		"1.1754942e-38", "1e-45", "1.4e-45", "7e-46", "7.1e-46", "1e-50",
		"3.4028235e38", "3.40282356e38", "3.4028236e38", "1e39", "-1e39",
		"16777217", "16777219", "0.30000001192092896", "9007199254740993",
		"123456789012345678901234567890", "0.000000000000000000000000001",
		"1.00000005960464477539062500000000000000000000000000000000001",
		"1.000000059604644775390625", "4.4501477170144023e-308",
		"2.2250738585072011e-308", "1e400", "1e-400", "1e100000000000000",
		"inf", "-inf", "Infinity", "-INFINITY", "nan", "NaN", "-nan",
		" 1.5 ", "\t2\t", "1e+5", "1e-5", "00001.50000",
	};
	static const char *bad_s[] = {
		"", " ", ".", "-", "+", "e5", ".e5", "1e", "1e+", "1e-", "--1",
		"1.2.3", "0x1p3", "nan(1)", "1,5", "infinit", "infx", "1 5",
		"1e5.5", "abc", "1f", "+-1", "1..2",
	};
	long bad = 0, k;
	size_t i;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	char s[128];

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ok(check_float(good[i], &bad), "float '%s' as strtof", good[i]);
	for (i = 0; i < sizeof(bad_s) / sizeof(bad_s[0]); i++) {
		float v;

		is_int(tfk_csv_parse_float(bad_s[i], strlen(bad_s[i]), &v), -1,
		       "float '%s' refused", bad_s[i]);
	}

	/* random decimals: 1..25 digits, a point anywhere, exponents */
	bad = 0;
	for (k = 0; k < 300000; k++) {
		int nd, pt, j, e;
		size_t n = 0;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		nd = 1 + (int)(x % 25);
		pt = (int)((x >> 8) % (uint64_t)(nd + 1));
		if (x & (1ull << 40))
			s[n++] = '-';
		for (j = 0; j < nd; j++) {
			uint64_t y = x >> (j % 50);

			if (j == pt && (x & (1ull << 41)))
				s[n++] = '.';
			s[n++] = (char)('0' + (y ^ (uint64_t)j * 7) % 10);
		}
		if (x & (1ull << 42)) {
			e = (int)((x >> 20) % 90) - 45;
			n += (size_t)snprintf(s + n, sizeof(s) - n, "e%d", e);
		}
		s[n] = '\0';
		check_float(s, &bad);
	}
	is_int(bad, 0, "300000 random decimals are bit-identical to strtof");

	/* exact midpoints between neighbouring floats, and a hair off */
	bad = 0;
	for (k = 0; k < 100000; k++) {
		uint32_t u;
		float f, g;
		double mid;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		u = (uint32_t)x & 0x7f7fffff;	/* finite, positive */
		memcpy(&f, &u, 4);
		g = nextafterf(f, INFINITY);
		mid = ((double)f + (double)g) / 2;
		snprintf(s, sizeof(s), "%.40e", mid);
		check_float(s, &bad);
		snprintf(s, sizeof(s), "%.17e", nextafter(mid, 0));
		check_float(s, &bad);
		snprintf(s, sizeof(s), "%.17e", nextafter(mid, INFINITY));
		check_float(s, &bad);
		snprintf(s, sizeof(s), "%.9g", (double)f);
		check_float(s, &bad);
	}
	is_int(bad, 0, "midpoints and shortest forms are bit-identical to strtof");

	is_int(tfk_csv_classify("12", 2), TFK_FEAT_INT64, "classify int");
	is_int(tfk_csv_classify(" -3 ", 4), TFK_FEAT_INT64, "classify int with spaces");
	is_int(tfk_csv_classify("1.5", 3), TFK_FEAT_FLOAT, "classify float");
	is_int(tfk_csv_classify("1e3", 3), TFK_FEAT_FLOAT, "classify exponent");
	is_int(tfk_csv_classify("nan", 3), TFK_FEAT_FLOAT, "classify nan");
	is_int(tfk_csv_classify("99999999999999999999", 20), TFK_FEAT_FLOAT,
	       "int64 overflow is a float");
	is_int(tfk_csv_classify("abc", 3), TFK_FEAT_BYTES, "classify text");
	is_int(tfk_csv_classify(" ", 1), TFK_FEAT_BYTES, "classify spaces");
}

/* Tables and encoding ------------------------------------------------------ */

struct conv {
	struct tfk_csv_table t;
	struct tfk_csv_batch b;
	struct tfk_err err;
	int rc;
};

/* Header from the first row of text, then infer from all rows. */
static int load(struct conv *c, const char *text, int infer)
{
	struct tfk_csv_reader *r;
	struct tfk_csv_batch h;
	size_t i;
	long n;

	tfk_csv_table_init(&c->t);
	tfk_csv_batch_init(&c->b);
	tfk_csv_batch_init(&h);
	if (tfk_csv_open_mem(&r, "t.csv", text, strlen(text), ',', &c->err))
		return -1;
	n = tfk_csv_read(r, &h, 1, SIZE_MAX, &c->err);
	for (i = 0; n == 1 && i < h.row[0].n_cells; i++) {
		size_t len;
		const char *s = tfk_csv_field(&h, 0, i, &len);

		if (tfk_csv_table_add_column(&c->t, s, len, &c->err))
			n = -1;
	}
	if (n == 1)
		n = tfk_csv_read(r, &c->b, 1000, SIZE_MAX, &c->err);
	tfk_csv_batch_release(&h);
	tfk_csv_close(r);
	if (n < 0)
		return -1;
	if (infer)
		tfk_csv_table_observe(&c->t, &c->b);
	return 0;
}

static void unload(struct conv *c)
{
	tfk_csv_batch_release(&c->b);
	tfk_csv_table_release(&c->t);
}

static int encode(struct conv *c, int skip)
{
	c->rc = tfk_csv_table_resolve(&c->t, &c->err);
	if (!c->rc)
		c->rc = tfk_csv_encode(&c->t, &c->b, "t.csv", skip, &c->err);
	return c->rc;
}

static void wire(void)
{
	/* Example{features{feature{"a": int64 [5]}, {"b": float [1.5]},
	 * {"c": bytes ["hi"]}}}, assembled by hand from the protobuf
	 * encoding rules (tag = field << 3 | wire type). */
	static const uint8_t want[] = {
		0x0a, 0x28,				/* Example.features */
		0x0a, 0x0a,				/* feature entry */
		  0x0a, 0x01, 'a',			/* key */
		  0x12, 0x05, 0x1a, 0x03,		/* value: int64_list */
		    0x0a, 0x01, 0x05,			/* packed [5] */
		0x0a, 0x0d,
		  0x0a, 0x01, 'b',
		  0x12, 0x08, 0x12, 0x06,		/* float_list */
		    0x0a, 0x04, 0x00, 0x00, 0xc0, 0x3f,	/* packed [1.5f] */
		0x0a, 0x0b,
		  0x0a, 0x01, 'c',
		  0x12, 0x06, 0x0a, 0x04,		/* bytes_list */
		    0x0a, 0x02, 'h', 'i',
	};
	/* negative int64: ten-byte varint; empty lists: "tag 00" */
	static const uint8_t want2[] = {
		0x0a, 0x30,
		0x0a, 0x13, 0x0a, 0x01, 'a', 0x12, 0x0e, 0x1a, 0x0c, 0x0a, 0x0a,
		  0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
		0x0a, 0x07, 0x0a, 0x01, 'b', 0x12, 0x02, 0x12, 0x00,
		0x0a, 0x07, 0x0a, 0x01, 'c', 0x12, 0x02, 0x0a, 0x00,
		0x0a, 0x07, 0x0a, 0x01, 'd', 0x12, 0x02, 0x1a, 0x00,
	};
	struct conv c;

	load(&c, "a,b,c\n5,1.5,hi\n", 1);
	is_int(encode(&c, 0), 0, "encode a row");
	is_int(c.b.n_written, 1, "one record");
	is_mem(c.b.out.data + c.b.rec_off[0], c.b.rec_len[0], want, sizeof(want),
	       "Example bytes as the wire format says");
	unload(&c);

	load(&c, "a,b,c,d\n-1,,,\n2,3.5,x,4\n", 1);
	c.t.missing = TFK_CSV_EMPTY;
	is_int(encode(&c, 0), 0, "encode with missing values");
	is_mem(c.b.out.data + c.b.rec_off[0], c.b.rec_len[0], want2, sizeof(want2),
	       "negative varint and empty lists");
	unload(&c);
}

static const char *kinds(struct tfk_csv_table *t)
{
	static char s[256];
	size_t i, k = 0;

	for (i = 0; i < t->n_col; i++)
		k += (size_t)snprintf(s + k, sizeof(s) - k, "%s%s=%s", i ? " " : "",
				      t->col[i].name, !t->col[i].selected ? "-" :
				      t->col[i].kind == TFK_FEAT_INT64 ? "int64" :
				      t->col[i].kind == TFK_FEAT_FLOAT ? "float" :
				      t->col[i].kind == TFK_FEAT_BYTES ? "bytes" : "?");
	return s;
}

static void inference(void)
{
	struct conv c;

	load(&c, "i,f,s,m,n,e\n1,1,a,,NA,1\n2,2.5,3,,7,\n-3,1e2,x,,NA,2\n", 1);
	tfk_csv_table_add_na(&c.t, "NA", &c.err);
	/* NA was added after observe: n saw "NA" as text */
	is_int(tfk_csv_table_resolve(&c.t, &c.err), 0, "resolve");
	is_str(kinds(&c.t), "i=int64 f=float s=bytes m=bytes n=bytes e=int64",
	       "int64, widened to float, text, all missing, missing ignored");
	unload(&c);

	load(&c, "n,d\nNA,\n7,\n", 0);
	tfk_csv_table_add_na(&c.t, "NA", &c.err);
	tfk_csv_table_set_default(&c.t, "d", "0.5", &c.err);
	tfk_csv_table_observe(&c.t, &c.b);
	is_int(tfk_csv_table_resolve(&c.t, &c.err), 0, "resolve with NA first");
	is_str(kinds(&c.t), "n=int64 d=float", "NA ignored; a default takes part");
	is_int(encode(&c, 0), 0, "encode with default");
	is_int(c.b.stats.feat[1].has_range, 1, "default counted in stats");
	ok(c.b.stats.feat[1].vmin == 0.5 && c.b.stats.feat[1].vmax == 0.5,
	   "default value written");
	ok(c.b.stats.feat[0].imin == 0 && c.b.stats.feat[0].imax == 7,
	   "NA filled with 0 in an int64 column");
	unload(&c);

	load(&c, "a,b,c\n1,2,3\n", 1);
	is_int(tfk_csv_table_set_kind(&c.t, "a", TFK_FEAT_FLOAT, &c.err), 0, "force float");
	is_int(tfk_csv_table_set_kind(&c.t, "b", TFK_FEAT_BYTES, &c.err), 0, "force bytes");
	is_int(tfk_csv_table_set_kind(&c.t, "z", TFK_FEAT_BYTES, &c.err),
	       TFK_ENOTFOUND, "force unknown column");
	is_str(c.err.msg, "no column 'z'", "unknown column message");
	is_int(tfk_csv_table_set_kind(&c.t, "c", 9, &c.err), TFK_EINVAL, "bad kind");
	is_int(tfk_csv_table_resolve(&c.t, &c.err), 0, "resolve forced");
	is_str(kinds(&c.t), "a=float b=bytes c=int64", "forced kinds win");
	unload(&c);

	load(&c, "a,b\n1,2\n", 1);
	tfk_csv_table_set_kind(&c.t, "a", TFK_FEAT_INT64, &c.err);
	tfk_csv_table_set_default(&c.t, "a", "x", &c.err);
	is_int(tfk_csv_table_resolve(&c.t, &c.err), TFK_EINVAL, "bad default refused");
	is_str(c.err.msg, "column 'a': default 'x' is not an int64", "bad default message");
	unload(&c);

	load(&c, "a,b,c\n1,x,2.5\n", 1);
	is_int(tfk_csv_table_select(&c.t, "c", &c.err), 0, "select c");
	is_int(tfk_csv_table_set_label(&c.t, "a", "label", &c.err), 0, "label a");
	is_int(encode(&c, 0), 0, "encode selection");
	is_str(kinds(&c.t), "a=int64 b=- c=float", "unselected column dropped");
	is_int(c.b.stats.n_feat, 2, "two features");
	is_str(c.b.stats.feat[0].name, "label", "label renamed, in column order");
	is_str(c.b.stats.feat[1].name, "c", "then c");
	unload(&c);

	load(&c, "a,a,b\n1,2,3\n", 1);
	is_int(tfk_csv_table_find(&c.t, "a"), -2, "duplicate name is ambiguous");
	is_int(tfk_csv_table_select(&c.t, "a", &c.err), TFK_EINVAL, "select ambiguous");
	is_int(tfk_csv_table_resolve(&c.t, &c.err), TFK_EINVAL, "duplicate features refused");
	is_str(c.err.msg, "two features called 'a' (columns 1 and 2)", "duplicate message");
	unload(&c);

	load(&c, "a,,b\n1,2,3\n", 1);
	is_int(tfk_csv_table_resolve(&c.t, &c.err), TFK_EINVAL, "empty name refused");
	is_str(c.err.msg, "column 2 has an empty name", "empty name message");
	unload(&c);

	load(&c, "label,y\n1,2\n", 1);
	tfk_csv_table_set_label(&c.t, "y", "label", &c.err);
	is_int(tfk_csv_table_resolve(&c.t, &c.err), TFK_EINVAL, "label clashes with a column");
	unload(&c);

	tfk_csv_table_init(&c.t);
	is_int(tfk_csv_table_add_column(&c.t, "a\0b", 3, &c.err), TFK_ECORRUPT,
	       "NUL in a name refused");
	is_int(tfk_csv_table_resolve(&c.t, &c.err), TFK_EINVAL, "no columns refused");
	tfk_csv_table_release(&c.t);
}

static void bad_rows(void)
{
	struct conv c;

	load(&c, "a,b\n1,2\n3,x\n", 0);
	tfk_csv_table_set_kind(&c.t, "b", TFK_FEAT_INT64, &c.err);
	is_int(encode(&c, 0), TFK_ECORRUPT, "bad value stops");
	is_str(c.err.msg, "t.csv:3:3: column 'b': 'x' is not an int64", "bad value message");
	is_int(c.b.bad, TFK_CSV_BAD_VALUE, "bad kind recorded");
	is_int(c.b.bad_row, 1, "bad row recorded");
	is_int(c.b.bad_col, 1, "bad column recorded");
	unload(&c);

	load(&c, "a,b,c\n1,2,3\n1,2\n", 1);
	is_int(encode(&c, 0), TFK_ECORRUPT, "too few fields");
	is_str(c.err.msg, "t.csv:3:4: expected 3 fields, found 2", "too few: where the row ends");
	unload(&c);

	load(&c, "a,b\n1,2,3,4\n", 1);
	is_int(encode(&c, 0), TFK_ECORRUPT, "too many fields");
	is_str(c.err.msg, "t.csv:2:5: expected 2 fields, found 4",
	       "too many: where the first extra field starts");
	unload(&c);

	load(&c, "a,b\n\"x\ny\",\"1\n2\",3\n", 1);
	is_int(encode(&c, 0), TFK_ECORRUPT, "too many fields after newlines");
	is_str(c.err.msg, "t.csv:4:4: expected 2 fields, found 3",
	       "line counts quoted newlines");
	unload(&c);

	load(&c, "a,b\n1,\n", 1);
	c.t.missing = TFK_CSV_ERROR;
	is_int(encode(&c, 0), TFK_ECORRUPT, "missing value under error");
	is_str(c.err.msg, "t.csv:2:3: column 'b': missing value and no default",
	       "missing value message");
	unload(&c);

	load(&c, "a\n1\n\x01\x02 this is a long value of more than forty bytes in all\n", 0);
	tfk_csv_table_set_kind(&c.t, "a", TFK_FEAT_FLOAT, &c.err);
	is_int(encode(&c, 0), TFK_ECORRUPT, "long bad value");
	is_str(c.err.msg, "t.csv:3:1: column 'a': '\\x01\\x02 this is a long value "
	       "of more than for...' is not a float", "value escaped and shortened");
	unload(&c);

	load(&c, "a,b\n1,2\nx,3\n4\n5,6\n7,y\n8,9,10\n", 0);
	tfk_csv_table_set_kind(&c.t, "a", TFK_FEAT_INT64, &c.err);
	tfk_csv_table_set_kind(&c.t, "b", TFK_FEAT_INT64, &c.err);
	is_int(encode(&c, 1), 0, "skipping bad rows");
	is_int(c.b.n_written, 2, "two rows written");
	is_int(c.b.n_skipped, 4, "four rows skipped");
	is_int(c.b.n_warn, 4, "every message kept");
	is_str(c.b.warn[0], "t.csv:3:1: column 'a': 'x' is not an int64", "first message");
	is_str(c.b.warn[1], "t.csv:4:2: expected 2 fields, found 1", "second message");
	is_int(c.b.rec_len[1], 0, "skipped rows have no record");
	ok(c.b.rec_len[0] > 0 && c.b.rec_len[3] > 0, "good rows have records");
	is_int(c.b.stats.records, 2, "stats count written rows only");
	ok(c.b.stats.feat[0].imin == 1 && c.b.stats.feat[0].imax == 5,
	   "stats from written rows only");
	unload(&c);
}

static void stats(void)
{
	struct conv c;

	load(&c, "i,f,s,t\n3,1.5,abc,\n-2,inf,\xff\xfe,x\n10,-0.25,"
	     "\"0123456789012345678901234567890123456789xyz\",\n", 1);
	c.t.missing = TFK_CSV_EMPTY;
	is_int(encode(&c, 0), 0, "encode for stats");
	is_int(c.b.stats.records, 3, "records");
	is_int(c.b.stats.feat[0].kind, TFK_FEAT_INT64, "kind set");
	ok(c.b.stats.feat[0].imin == -2 && c.b.stats.feat[0].imax == 10, "int range");
	ok(c.b.stats.feat[1].vmin == -0.25 && c.b.stats.feat[1].vmax == 1.5,
	   "float range over finite values");
	is_int(c.b.stats.feat[1].n_nonfinite, 1, "inf counted apart");
	is_str(c.b.stats.feat[2].content, "binary", "invalid UTF-8 makes binary");
	is_int(c.b.stats.feat[2].size_min, 2, "size min");
	is_int(c.b.stats.feat[2].size_max, 43, "size max");
	is_str(c.b.stats.feat[2].samples[0], "\"abc\"", "text sample");
	is_str(c.b.stats.feat[2].samples[1], "{\"b64\": \"//4=\"}", "binary sample");
	is_str(c.b.stats.feat[2].samples[2],
	       "\"0123456789012345678901234567890123456789\"",
	       "sample cut at 40 characters");
	is_str(c.b.stats.feat[1].samples[1], "\"Infinity\"", "non-finite sample");
	is_int(c.b.stats.feat[3].len_min, 0, "empty list length 0");
	is_int(c.b.stats.feat[3].n_values, 1, "one value in t");
	is_int(c.b.stats.feat[3].n_samples, 1, "samples only of values");
	is_str(c.b.stats.feat[3].content, "text", "text content");
	tfk_csv_table_schema(&c.t, &c.b.stats);
	is_str(c.b.stats.feat[3].encoding, "utf-8", "text gets utf-8 encoding");
	is_str(c.b.stats.feat[2].encoding, "", "binary gets none");
	unload(&c);
}

/* Every allocation failing in turn: ENOMEM, never a crash or a leak. */
static void allocation(void)
{
	static const char text[] = "a,b,c\n1,2.5,\"x\"\"y\"\n3,,z\n";
	long n, failures = 0, done = 0;

	for (n = 0; n < 200 && !done; n++) {
		struct tfk_csv_reader *r = NULL;
		struct tfk_csv_table t;
		struct tfk_csv_batch b;
		struct tfk_err err;
		size_t i;
		long got = 0;
		int rc;

		tfk_csv_table_init(&t);
		tfk_csv_batch_init(&b);
		tfk_alloc_fail_after(n);
		rc = tfk_csv_open_mem(&r, "t.csv", text, sizeof(text) - 1, ',', &err);
		if (!rc)
			got = tfk_csv_read(r, &b, 10, SIZE_MAX, &err);
		if (!rc && got < 0)
			rc = (int)got;
		for (i = 0; !rc && i < 3; i++)
			rc = tfk_csv_table_add_column(&t, "abc" + i, 1, &err);
		if (!rc)
			rc = tfk_csv_table_add_na(&t, "NA", &err);
		if (!rc)
			rc = tfk_csv_table_set_default(&t, "b", "7", &err);
		if (!rc)
			rc = tfk_csv_table_set_label(&t, "c", "label", &err);
		if (!rc) {
			b.row++;	/* skip the header row */
			b.n_row--;
			tfk_csv_table_observe(&t, &b);
			rc = tfk_csv_table_resolve(&t, &err);
			if (!rc)
				rc = tfk_csv_encode(&t, &b, "t.csv", 0, &err);
			b.row--;
			b.n_row++;
		}
		tfk_alloc_fail_after(-1);
		if (rc == 0)
			done = 1;
		else if (rc == TFK_ENOMEM)
			failures++;
		else
			tap_diag("allocation %ld: unexpected %d %s", n, rc, err.msg);
		tfk_csv_close(r);
		tfk_csv_batch_release(&b);
		tfk_csv_table_release(&t);
	}
	ok(done, "conversion succeeds once allocations work (%ld)", n);
	is_int(failures, n - 1, "every earlier allocation failure is ENOMEM");
}

int main(void)
{
	tokenizer();
	boundaries();
	limits();
	files();
	ints();
	floats();
	wire();
	inference();
	bad_rows();
	stats();
	allocation();
	return tap_done();
}
