/*
 * t-index.c - FILE.idx: parsing every kind of bad index text (garbage,
 * non-monotonic, gaps, truncation, overflow, stray whitespace), scanning
 * TensorFlow-written fixtures, atomic write and read back, freshness by
 * mtime and size, range lookups, and failed allocations.
 */
#include "io/index.h"
#include "io/record.h"
#include "util/alloc.h"
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void write_text(const char *path, const char *s)
{
	tap_write_file(path, s, strlen(s));
}

/* Parse s; return the code, leave the message in err. */
static int parse(struct tfk_index *ix, const char *s, struct tfk_err *err)
{
	return tfk_index_parse(ix, s, strlen(s), "x.idx", err);
}

static void bad(const char *text, int code, const char *msg, const char *what)
{
	struct tfk_index ix;
	struct tfk_err err;
	int rc;

	tfk_index_init(&ix);
	tfk_err_clear(&err);
	rc = parse(&ix, text, &err);
	if (!is_int(rc, code, "%s: refused", what) ||
	    !is_str(err.msg, msg, "%s: message", what))
		tap_diag("text: '%s'", text);
	tfk_index_release(&ix);
}

static void parsing(void)
{
	struct tfk_index ix;
	struct tfk_err err;

	tfk_index_init(&ix);
	is_int(parse(&ix, "0 35\n", &err), 0, "one line parses");
	ok(ix.n == 1 && ix.off[0] == 0 && ix.off[1] == 35, "one record [0,35)");
	is_int(parse(&ix, "0 16\n16 3203\n3219 100\n", &err), 0, "three lines");
	ok(ix.n == 3 && ix.off[1] == 16 && ix.off[2] == 3219 && ix.off[3] == 3319,
	   "offsets 0 16 3219, end 3319");
	is_int(parse(&ix, "", &err), 0, "empty text: an empty index");
	is_int(ix.n, 0, "... with no records");
	is_int(parse(&ix, "0 18446744073709551615\n", &err), 0,
	   "a length of 2^64-1 still fits");
	tfk_index_release(&ix);

	bad("garbage\n", TFK_ECORRUPT, "x.idx: line 1: expected a decimal number",
	    "garbage");
	bad("\n", TFK_ECORRUPT, "x.idx: line 1: expected a decimal number",
	    "empty line");
	bad("0 16\n\n", TFK_ECORRUPT, "x.idx: line 2: expected a decimal number",
	    "blank line after a good one");
	bad(" 0 16\n", TFK_ECORRUPT, "x.idx: line 1: expected a decimal number",
	    "leading blank");
	bad("+0 16\n", TFK_ECORRUPT, "x.idx: line 1: expected a decimal number",
	    "plus sign");
	bad("0 -16\n", TFK_ECORRUPT, "x.idx: line 1: expected a decimal number",
	    "negative length");
	bad("0  16\n", TFK_ECORRUPT, "x.idx: line 1: expected a decimal number",
	    "two spaces");
	bad("0\t16\n", TFK_ECORRUPT, "x.idx: line 1: expected 'OFFSET LENGTH'",
	    "tab");
	bad("0 16\r\n", TFK_ECORRUPT, "x.idx: line 1: unexpected text after LENGTH",
	    "CRLF line end");
	bad("0 16 7\n", TFK_ECORRUPT, "x.idx: line 1: unexpected text after LENGTH",
	    "three numbers");
	bad("0x0 16\n", TFK_ECORRUPT, "x.idx: line 1: expected 'OFFSET LENGTH'",
	    "hex");
	tfk_index_init(&ix);
	ok(tfk_index_parse(&ix, "0 1\0006\n", 6, "x.idx", &err) == TFK_ECORRUPT &&
	   !strcmp(err.msg, "x.idx: line 1: unexpected text after LENGTH"),
	   "a NUL byte inside a number: %s", err.msg);
	tfk_index_release(&ix);
	bad("0 16\n16 100\n50 100\n", TFK_ECORRUPT,
	    "x.idx: line 3: record at byte 50, expected 116 (offsets must increase)",
	    "non-monotonic");
	bad("0 16\n16 16\n16 16\n", TFK_ECORRUPT,
	    "x.idx: line 3: record at byte 16, expected 32 (offsets must increase)",
	    "repeated line");
	bad("0 100\n200 100\n", TFK_ECORRUPT,
	    "x.idx: line 2: record at byte 200, expected 100 (records must be contiguous)",
	    "gap");
	bad("12 100\n", TFK_ECORRUPT,
	    "x.idx: line 1: record at byte 12, expected 0 (the first record starts the file)",
	    "first record not at 0");
	bad("0 15\n", TFK_ECORRUPT,
	    "x.idx: line 1: length 15 is shorter than a record's 16 bytes of framing",
	    "length below 16");
	bad("0 0\n", TFK_ECORRUPT,
	    "x.idx: line 1: length 0 is shorter than a record's 16 bytes of framing",
	    "length 0");
	bad("0 18446744073709551616\n", TFK_ECORRUPT,
	    "x.idx: line 1: number too large", "2^64");
	bad("99999999999999999999999 16\n", TFK_ECORRUPT,
	    "x.idx: line 1: number too large", "huge offset");
	bad("0 18446744073709551615\n18446744073709551615 16\n", TFK_ECORRUPT,
	    "x.idx: line 2: record ends past 2^64", "end past 2^64");
	bad("0 16\n16 16", TFK_ETRUNC,
	    "x.idx: line 2: truncated (no newline at the end)", "no final newline");
	bad("0 16\n16 ", TFK_ETRUNC,
	    "x.idx: line 2: truncated (no newline at the end)", "cut after the space");
	bad("0 16\n16", TFK_ETRUNC,
	    "x.idx: line 2: truncated (no newline at the end)", "cut in the offset");
}

static void scan_write_read(void)
{
	struct tfk_rec_reader *r;
	struct tfk_index ix, back;
	struct tfk_err err;
	size_t i;
	int good = 1;
	const char *path = tap_tmp("mnist.idx");
	char buf[64];
	FILE *f;

	tfk_index_init(&ix);
	tfk_index_init(&back);
	tfk_rec_open(&r, tap_fixture("tfrecord/tfx_mnist/mnist.tfrecord"),
		     TFK_COMP_AUTO, 0, &err);
	is_int(tfk_index_scan(&ix, r, &err), 0, "scan mnist");
	tfk_rec_close(r);
	is_int(ix.n, 1000, "1000 records");
	/* The fixture's records are all 3203 bytes (784 floats + label). */
	for (i = 0; i <= ix.n; i++)
		if (ix.off[i] != 3203 * i)
			good = 0;
	ok(good, "offsets are 3203 * i, ending at the file size 3203000");

	is_int(tfk_index_write(&ix, path, &err), 0, "write");
	f = fopen(path, "r");
	ok(f && fgets(buf, sizeof(buf), f) && !strcmp(buf, "0 3203\n"),
	   "first line is '0 3203'");
	if (f)
		fclose(f);
	is_int(tfk_index_read(&back, path, &err), 0, "read back");
	ok(back.n == ix.n && !memcmp(back.off, ix.off, (ix.n + 1) * 8),
	   "same index");

	tfk_rec_open(&r, tap_fixture("tfrecord/rust_raw_record/expected.tfrecord"),
		     TFK_COMP_AUTO, 0, &err);
	tfk_index_release(&ix);
	tfk_index_init(&ix);
	tfk_index_scan(&ix, r, &err);
	tfk_rec_close(r);
	ok(ix.n == 1 && ix.off[1] == 35, "fox: one record of 35 bytes");

	tfk_rec_open(&r, tap_fixture("tfrecord/tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz"),
		     TFK_COMP_AUTO, 0, &err);
	is_int(tfk_index_scan(&ix, r, &err), TFK_EINVAL, "gzip input refused");
	ok(strstr(err.msg, "cannot index a gzip-compressed file") != NULL,
	   "... saying why: %s", err.msg);
	tfk_rec_close(r);

	is_int(tfk_index_read(&back, tap_tmp("none.idx"), &err), TFK_ENOTFOUND,
	       "missing index: ENOTFOUND");
	is_int(tfk_index_read(&back, tap_tmpdir(), &err), TFK_EIO,
	       "a directory: EIO");
	ok(strstr(err.msg, "is a directory") != NULL, "... %s", err.msg);
	is_int(tfk_index_write(&ix, tap_tmp("no/such/dir.idx"), &err), TFK_EIO,
	       "write into a missing directory: EIO");

	write_text(tap_tmp("bad.idx"), "0 35\n35 x\n");
	is_int(tfk_index_read(&back, tap_tmp("bad.idx"), &err), TFK_ECORRUPT,
	       "corrupt file: ECORRUPT");
	ok(strstr(err.msg, "bad.idx: line 2: expected a decimal number") != NULL,
	   "... named by its path: %s", err.msg);
	tfk_index_release(&ix);
	tfk_index_release(&back);
}

static void set_mtime(const char *path, time_t sec)
{
	struct timespec ts[2] = { { sec, 0 }, { sec, 0 } };

	utimensat(AT_FDCWD, path, ts, 0);
}

static void freshness(void)
{
	struct tfk_index ix;
	struct tfk_err err;
	char *data = tap_tmp("d.tfrecord"), *idx = tap_tmp("d.tfrecord.idx");
	FILE *f;
	char *p;

	tfk_index_init(&ix);
	write_text(data, "0123456789012345678901234567890123");	/* 34 bytes */
	write_text(idx, "0 16\n16 18\n");
	set_mtime(data, 1000000000);
	set_mtime(idx, 1000000000);
	tfk_index_read(&ix, idx, &err);
	is_int(tfk_index_fresh(&ix, data, idx, &err), 1,
	       "same mtime, ends at the size: fresh");
	set_mtime(data, 1000000001);
	is_int(tfk_index_fresh(&ix, data, idx, &err), 0, "data touched: stale");
	ok(strstr(err.msg, "d.tfrecord.idx: stale: older than") != NULL,
	   "... %s", err.msg);
	is_int(tfk_index_load(&ix, data, &err), 0, "load refuses it");
	is_int(ix.n, 0, "... and leaves the index empty");
	set_mtime(idx, 1000000002);
	is_int(tfk_index_load(&ix, data, &err), 1, "index newer again: loaded");
	is_int(ix.n, 2, "... 2 records");

	f = fopen(data, "ab");
	fputs("x", f);
	fclose(f);
	set_mtime(data, 1000000000);
	is_int(tfk_index_fresh(&ix, data, idx, &err), 0, "data grew: stale");
	ok(strstr(err.msg, "records end at byte 34 but") != NULL, "... %s", err.msg);
	is_int(tfk_index_fresh(&ix, tap_tmp("gone"), idx, &err), TFK_EIO,
	       "missing data file: EIO");

	write_text(idx, "0 16\nbanana\n");
	ok(tfk_index_load(&ix, data, &err) == TFK_ECORRUPT &&
	   strstr(err.msg, "line 2"), "corrupt index: load fails: %s", err.msg);
	unlink(idx);
	is_int(tfk_index_load(&ix, data, &err), 0, "no index: 0");
	ok(strstr(err.msg, "d.tfrecord.idx: no index") != NULL, "... %s", err.msg);

	p = tfk_index_path("a/b.tfrecord");
	is_str(p, "a/b.tfrecord.idx", "index path");
	tfk_free(p);
	tfk_index_release(&ix);
}

static void ranges(void)
{
	struct tfk_index ix;
	struct tfk_err err;
	uint64_t off = 99;
	int i;

	tfk_index_init(&ix);
	is_int(tfk_index_range(&ix, 0, 5, &off), 0, "empty index: empty range");
	is_int(off, 0, "... at 0");
	for (i = 0; i < 10; i++)
		tfk_index_add(&ix, 16 + (uint64_t)i, &err);	/* 16, 17, ... 25 */
	is_int(tfk_index_range(&ix, 2, 5, &off), 3, "[2,5): 3 records");
	is_int(off, 16 + 17, "... from byte 33");
	is_int(tfk_index_range(&ix, 8, 20, &off), 2, "[8,20) clamped: 2");
	is_int(tfk_index_range(&ix, 20, 30, &off), 0, "[20,30): none");
	is_int(off, ix.off[10], "... at the end");
	is_int(tfk_index_range(&ix, 5, 2, &off), 0, "[5,2): none");
	is_int(tfk_index_range(&ix, 0, UINT64_MAX, &off), 10, "[0,max): all 10");
	tfk_index_release(&ix);
}

static void alloc_failures(void)
{
	struct tfk_index ix;
	struct tfk_err err;
	char *text = malloc(40000), *path = tap_tmp("big.idx");
	size_t len = 0;
	long k;
	int i, rc = -1, clean = 1;

	/* 2000 lines: enough to make the offset array grow. */
	for (i = 0; i < 2000; i++)
		len += (size_t)sprintf(text + len, "%d 16\n", 16 * i);
	write_text(path, text);
	for (k = 0; k < 50; k++) {
		tfk_index_init(&ix);
		tfk_alloc_fail_after(k);
		rc = tfk_index_read(&ix, path, &err);
		tfk_alloc_fail_after(-1);
		if (rc == 0)
			ok(ix.n == 2000, "read with %ld allocations: 2000 records", k);
		tfk_index_release(&ix);
		if (rc == 0)
			break;
		if (rc != TFK_ENOMEM)
			clean = 0;
	}
	ok(clean && rc == 0, "every failed allocation reports ENOMEM (%ld tried)", k);
	for (k = 0, clean = 1; k < 50; k++) {
		tfk_index_init(&ix);
		tfk_index_parse(&ix, text, len, "x", &err);
		tfk_alloc_fail_after(k);
		rc = tfk_index_write(&ix, tap_tmp("w.idx"), &err);
		tfk_alloc_fail_after(-1);
		tfk_index_release(&ix);
		if (rc == 0)
			break;
		if (rc != TFK_ENOMEM)
			clean = 0;
	}
	ok(clean && rc == 0, "write: every failed allocation reports ENOMEM (%ld tried)", k);
	free(text);
}

int main(void)
{
	parsing();
	scan_write_read();
	freshness();
	ranges();
	alloc_failures();
	return tap_done();
}
