/*
 * t-record.c - TFRecord reader/writer: TensorFlow-written fixtures,
 * byte-exact framing, compression round trips, and every corruption the
 * reader must refuse (truncations, flipped crc bytes, absurd lengths,
 * invalid gzip, empty files, directories, failed allocations).
 */
#include "io/record.h"
#include "io/crc32c.h"
#include "util/alloc.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static long count_file(const char *path, int comp, int flags, int *rc_out,
		       struct tfk_err *err)
{
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	long n = 0;
	int rc = tfk_rec_open(&r, path, comp, flags, err);

	if (rc) {
		*rc_out = rc;
		return -1;
	}
	while ((rc = tfk_rec_next(r, &rec, err)) == 1)
		n++;
	*rc_out = rc;
	tfk_rec_close(r);
	return n;
}

static void fixtures(void)
{
	struct tfk_err err;
	int rc;
	long n;

	n = count_file(tap_fixture("tfrecord/tfx_mnist/mnist.tfrecord"),
		       TFK_COMP_AUTO, 0, &rc, &err);
	is_int(n, 1000, "mnist fixture: 1000 records");
	is_int(rc, 0, "mnist fixture: clean end");
	n = count_file(tap_fixture("tfrecord/tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz"),
		       TFK_COMP_AUTO, 0, &rc, &err);
	is_int(n, 234, "penguin train (gzip, detected): 234 records");
	n = count_file(tap_fixture("tfrecord/tfx_penguin/Split-eval/data_tfrecord-00000-of-00001.gz"),
		       TFK_COMP_GZIP, 0, &rc, &err);
	is_int(n, 100, "penguin eval (gzip, requested): 100 records");
	n = count_file(tap_fixture("tfrecord/tfx_penguin/Split-eval/data_tfrecord-00000-of-00001.gz"),
		       TFK_COMP_NONE, 0, &rc, &err);
	ok(rc < 0, "gzip file read as plain fails: %s", err.msg);

	{
		struct tfk_rec_reader *r;
		struct tfk_rec rec;

		tfk_rec_open(&r, tap_fixture("tfrecord/rust_raw_record/expected.tfrecord"),
			     TFK_COMP_AUTO, 0, &err);
		rc = tfk_rec_next(r, &rec, &err);
		is_int(rc, 1, "rust raw record: one record");
		is_mem(rec.data, rec.len, "The Quick Brown Fox", 19,
		       "rust raw record: payload");
		is_int(tfk_rec_next(r, &rec, &err), 0, "rust raw record: then end");
		tfk_rec_close(r);
	}
}

static void writer_exact(void)
{
	struct tfk_rec_writer *w;
	struct tfk_err err;
	uint8_t *got, *want;
	size_t ngot, nwant;
	const char *out = tap_tmp("fox.tfrecord");
	static const uint8_t two[] = {
		0x05, 0, 0, 0, 0, 0, 0, 0, 0xea, 0xb2, 0x04, 0x3e, 'f', 'i', 'r',
		's', 't', 0x55, 0xff, 0x23, 0xe5,
		0x06, 0, 0, 0, 0, 0, 0, 0, 0x73, 0x69, 0xd5, 0x37, 's', 'e', 'c',
		'o', 'n', 'd', 0xd3, 0xe0, 0xd3, 0xca,
	};

	is_int(tfk_recw_open(&w, out, TFK_COMP_NONE, &err), 0, "writer opens");
	ok(access(out, F_OK) != 0, "nothing under the final name while writing");
	tfk_recw_write(w, "The Quick Brown Fox", 19, &err);
	is_int(tfk_recw_close(w, &err), 0, "writer closes");
	got = tap_read_file(out, &ngot);
	want = tap_read_file(tap_fixture("tfrecord/rust_raw_record/"
				     "expected.tfrecord"), &nwant);
	is_mem(got, ngot, want, nwant, "byte for byte equal to TensorFlow's file");
	free(got);
	free(want);

	out = tap_tmp("two.tfrecord");
	tfk_recw_open(&w, out, TFK_COMP_NONE, &err);
	tfk_recw_write(w, "first", 5, &err);
	tfk_recw_write(w, "second", 6, &err);
	is_int(tfk_recw_count(w), 2, "writer counts records");
	tfk_recw_close(w, &err);
	got = tap_read_file(out, &ngot);
	is_mem(got, ngot, two, sizeof(two), "first/second framing as the README");
	free(got);

	out = tap_tmp("discard.tfrecord");
	tfk_recw_open(&w, out, TFK_COMP_NONE, &err);
	tfk_recw_write(w, "x", 1, &err);
	tfk_recw_discard(w);
	ok(access(out, F_OK) != 0, "discard leaves no file");
	{
		char cmd[1100];

		snprintf(cmd, sizeof(cmd), "ls -a %s | grep -q tmp-", tap_tmpdir());
		ok(system(cmd) != 0, "and no temporary either");
	}
}

static void compressed_roundtrip(int comp)
{
	struct tfk_rec_writer *w;
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	struct tfk_err err;
	const char *out = tap_tmp(comp == TFK_COMP_GZIP ? "c.gz" : "c.zz");
	char payload[300];
	int i, good = 1, rc;

	tfk_recw_open(&w, out, comp, &err);
	for (i = 0; i < 5000; i++) {
		memset(payload, 'a' + i % 26, sizeof(payload));
		tfk_recw_write(w, payload, (size_t)(i % 300), &err);
	}
	is_int(tfk_recw_close(w, &err), 0, "%s: write 5000 records",
	       tfk_comp_name(comp));
	tfk_rec_open(&r, out, TFK_COMP_AUTO, 0, &err);
	is_int(tfk_in_comp(tfk_rec_input(r)), comp, "%s: detected",
	       tfk_comp_name(comp));
	for (i = 0; (rc = tfk_rec_next(r, &rec, &err)) == 1; i++)
		if (rec.len != (size_t)(i % 300) ||
		    (rec.len && rec.data[0] != 'a' + i % 26))
			good = 0;
	is_int(i, 5000, "%s: read back 5000", tfk_comp_name(comp));
	ok(good && rc == 0, "%s: same payloads", tfk_comp_name(comp));
	tfk_rec_close(r);
}

static void gzip_multimember(void)
{
	char cmd[2048];
	struct tfk_err err;
	int rc;
	long n;
	const char *a = tap_tmp("a.gz"), *m = tap_tmp("multi.gz");

	snprintf(cmd, sizeof(cmd), "cat %s %s > %s",
		 tap_fixture("tfrecord/tfx_penguin/Split-eval/data_tfrecord-00000-of-00001.gz"),
		 tap_fixture("tfrecord/tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz"),
		 m);
	system(cmd);
	n = count_file(m, TFK_COMP_AUTO, 0, &rc, &err);
	is_int(n, 334, "concatenated gzip members: 100 + 234 records");

	/* truncated gzip */
	snprintf(cmd, sizeof(cmd), "head -c 3000 %s > %s", m, a);
	system(cmd);
	n = count_file(a, TFK_COMP_AUTO, 0, &rc, &err);
	ok(rc == TFK_ETRUNC && strstr(err.msg, "truncated"),
	   "truncated gzip: %s", err.msg);
	{
		struct tfk_rec_reader *r;
		struct tfk_rec rec;

		tfk_rec_open(&r, a, TFK_COMP_AUTO, 0, &err);
		while ((rc = tfk_rec_next(r, &rec, &err)) == 1)
			;
		is_int(rc, TFK_ETRUNC, "truncated gzip: the error once");
		is_int(tfk_rec_next(r, &rec, &err), 0, "then the end");
		tfk_rec_close(r);
	}
	/* garbage after a valid member */
	snprintf(cmd, sizeof(cmd), "cp %s %s && printf 'garbage!' >> %s",
		 tap_fixture("tfrecord/tfx_penguin/Split-eval/data_tfrecord-00000-of-00001.gz"),
		 a, a);
	system(cmd);
	n = count_file(a, TFK_COMP_AUTO, 0, &rc, &err);
	ok(rc == TFK_ECORRUPT && strstr(err.msg, "invalid gzip data"),
	   "garbage after a gzip member: %s", err.msg);
}

static void corruptions(void)
{
	struct tfk_err err;
	int rc;
	long n;
	uint8_t *buf;
	size_t len;
	const char *src = tap_fixture("tfrecord/tfx_mnist/mnist.tfrecord");
	const char *bad = tap_tmp("bad.tfrecord");
	uint64_t huge = UINT64_C(1) << 50;

	buf = tap_read_file(src, &len);

	tap_write_file(bad, buf, 0);
	n = count_file(bad, TFK_COMP_AUTO, 0, &rc, &err);
	ok(n == 0 && rc == 0, "empty file: zero records, no error");

	tap_write_file(bad, buf, 7);
	n = count_file(bad, TFK_COMP_AUTO, 0, &rc, &err);
	ok(n == 0 && rc == TFK_ETRUNC && strstr(err.msg, "record 0 at byte 0: truncated header"),
	   "7-byte file: %s", err.msg);

	tap_write_file(bad, buf, len - 1);
	n = count_file(bad, TFK_COMP_AUTO, 0, &rc, &err);
	ok(n == 999 && rc == TFK_ETRUNC && strstr(err.msg, "record 999 at byte"),
	   "last byte cut: 999 records then %s", err.msg);

	buf[9] ^= 0x40;	/* length crc of record 0 */
	tap_write_file(bad, buf, len);
	n = count_file(bad, TFK_COMP_NONE, 0, &rc, &err);
	ok(n == 0 && rc == TFK_ECORRUPT && strstr(err.msg, "record 0 at byte 0: length crc mismatch"),
	   "flipped length crc: %s", err.msg);
	buf[9] ^= 0x40;

	buf[100] ^= 1;	/* payload of record 0 */
	tap_write_file(bad, buf, len);
	{
		struct tfk_rec_reader *r;
		struct tfk_rec rec;

		tfk_rec_open(&r, bad, TFK_COMP_AUTO, 0, &err);
		rc = tfk_rec_next(r, &rec, &err);
		ok(rc == TFK_ECORRUPT && strstr(err.msg, "record 0 at byte 0: data crc mismatch"),
		   "flipped payload byte: %s", err.msg);
		n = 0;
		while (tfk_rec_next(r, &rec, &err) == 1)
			n++;
		is_int(n, 999, "reader continues after a data crc error");
		tfk_rec_close(r);
		n = count_file(bad, TFK_COMP_AUTO, TFK_REC_NOVERIFY, &rc, &err);
		is_int(n, 1000, "without verification all 1000 records read");
	}
	buf[100] ^= 1;

	/* absurd length with a valid length crc: must not allocate it */
	{
		uint8_t rec[64];
		uint32_t c;

		memcpy(rec, &huge, 8);
		c = tfk_crc32c_mask(tfk_crc32c(rec, 8));
		memcpy(rec + 8, &c, 4);
		memset(rec + 12, 0, 52);
		tap_write_file(bad, rec, sizeof(rec));
		n = count_file(bad, TFK_COMP_AUTO, 0, &rc, &err);
		ok(rc == TFK_ETRUNC && strstr(err.msg, "length 1125899906842624 needs 1125899906842628 bytes with its crc but only 52 are left"),
		   "absurd length on a file: %s", err.msg);
		/* the same on stdin: no giant allocation either */
		{
			if (!freopen(bad, "rb", stdin))
				return;
			n = count_file("-", TFK_COMP_AUTO, 0, &rc, &err);
			ok(rc == TFK_ETRUNC && strstr(err.msg, "<stdin>: record 0 at byte 0: truncated"),
			   "absurd length on stdin: %s", err.msg);
		}
	}

	n = count_file(tap_tmpdir(), TFK_COMP_AUTO, 0, &rc, &err);
	ok(rc == TFK_EIO && strstr(err.msg, "is a directory"), "directory: %s",
	   err.msg);
	n = count_file(tap_tmp("missing"), TFK_COMP_AUTO, 0, &rc, &err);
	ok(rc == TFK_EIO && strstr(err.msg, "missing: cannot open: No such file"),
	   "missing file: %s", err.msg);

	/* resync after a destroyed header finds the next record */
	{
		struct tfk_rec_reader *r;
		struct tfk_rec rec;
		uint64_t first_len;

		memcpy(&first_len, buf, 8);
		buf[0] ^= 0xff;
		tap_write_file(bad, buf, len);
		tfk_rec_open(&r, bad, TFK_COMP_AUTO, 0, &err);
		rc = tfk_rec_next(r, &rec, &err);
		ok(rc == TFK_ECORRUPT, "bad header detected");
		is_int(tfk_rec_resync(r, &err), 1, "resync finds a header");
		is_int(tfk_rec_skipped_bytes(r), first_len + 16, "skipping exactly record 0");
		n = 0;
		while (tfk_rec_next(r, &rec, &err) == 1)
			n++;
		is_int(n, 999, "then reads the other 999");
		tfk_rec_close(r);
		buf[0] ^= 0xff;
	}
	free(buf);
}

static void alloc_failures(void)
{
	struct tfk_err err;
	long k;
	int rc = -1, clean = 1;

	for (k = 0; k < 50; k++) {
		long n;

		tfk_alloc_fail_after(k);
		n = count_file(tap_fixture("tfrecord/tfx_penguin/Split-eval/data_tfrecord-00000-of-00001.gz"),
			       TFK_COMP_AUTO, 0, &rc, &err);
		tfk_alloc_fail_after(-1);
		if (rc == 0 && n == 100)
			break;
		if (rc != TFK_ENOMEM)
			clean = 0;
	}
	ok(clean && rc == 0, "every allocation failure reports ENOMEM (%ld tried)", k);
}

/* The payload budget: checked before the record is read, in plain and
 * compressed input alike; a record over it ends the file. */
static void budget(void)
{
	static const char *const names[] = { "b.rec", "b.gz" };
	struct tfk_rec_writer *w;
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	struct tfk_err err;
	char payload[100], want[256];
	int c, rc;

	memset(payload, 'p', sizeof(payload));
	for (c = 0; c < 2; c++) {
		const char *path = tap_tmp(names[c]);

		tfk_recw_open(&w, path, c ? TFK_COMP_GZIP : TFK_COMP_NONE,
			      &err);
		tfk_recw_write(w, payload, 10, &err);
		tfk_recw_write(w, payload, 100, &err);
		tfk_recw_write(w, payload, 10, &err);
		tfk_recw_close(w, &err);
		tfk_rec_open(&r, path, TFK_COMP_AUTO, 0, &err);
		tfk_rec_set_max_bytes(r, 99);
		is_int(tfk_rec_next(r, &rec, &err), 1, "%s: 10 bytes pass 99",
		       names[c]);
		rc = tfk_rec_next(r, &rec, &err);
		snprintf(want, sizeof(want), "%s: record 1 at byte 26: length "
			 "100 is more than the limit of 99 bytes "
			 "(TFK_MAX_RECORD_BYTES)", path);
		ok(rc == TFK_EINVAL && !strcmp(err.msg, want),
		   "%s: 100 bytes refused (%s)", names[c], err.msg);
		is_int(tfk_rec_next(r, &rec, &err), 0, "%s: then at the end",
		       names[c]);
		tfk_rec_close(r);
		setenv("TFK_MAX_RECORD_BYTES", "100", 1);
		ok(count_file(path, TFK_COMP_AUTO, 0, &rc, &err) == 3 && !rc,
		   "%s: TFK_MAX_RECORD_BYTES=100 reads all three", names[c]);
		setenv("TFK_MAX_RECORD_BYTES", "99", 1);
		ok(count_file(path, TFK_COMP_AUTO, 0, &rc, &err) == 1 &&
		   rc == TFK_EINVAL && !strcmp(err.msg, want),
		   "%s: TFK_MAX_RECORD_BYTES=99 stops at record 1", names[c]);
		setenv("TFK_MAX_RECORD_BYTES", "99 bytes", 1);
		ok(tfk_rec_open(&r, path, TFK_COMP_AUTO, 0, &err) ==
		   TFK_EINVAL && r == NULL && !strcmp(err.msg,
		   "TFK_MAX_RECORD_BYTES: '99 bytes' is not a size"),
		   "%s: a malformed budget fails the open (%s)", names[c],
		   err.msg);
		unsetenv("TFK_MAX_RECORD_BYTES");
	}
}

/* Record i of the read-ahead file: mostly ~1 KiB, now and then one
 * longer than the 256 KiB slack (the fall back to plain reads) or than
 * a chunk, and a run of tiny ones. */
static size_t ra_len(long i)
{
	if (i == 9000)
		return 300 << 10;
	if (i == 15000)
		return (2 << 20) + 5;
	if (i >= 20000 && i < 20100)
		return (size_t)(i % 7);
	return 512 + (size_t)((i * 7919) % 1024);
}

struct ra_sum {
	long n;
	uint32_t crc;	/* of every payload, offset and index in turn */
};

static int ra_read(const char *path, int flags, long seek_to,
		   struct ra_sum *sum, struct tfk_err *err)
{
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	long i = 0;
	int rc = tfk_rec_open(&r, path, TFK_COMP_NONE, flags, err);

	sum->n = 0;
	sum->crc = 0;
	if (rc)
		return rc;
	while ((rc = tfk_rec_next(r, &rec, err)) == 1) {
		uint64_t meta[3] = { rec.len, rec.off, rec.index };

		sum->crc = tfk_crc32c_extend(sum->crc, rec.data, rec.len);
		sum->crc = tfk_crc32c_extend(sum->crc, meta, sizeof(meta));
		sum->n++;
		if (++i == seek_to) {
			/* back to record 3: 3 records after the first */
			rc = tfk_rec_seek(r, 3 * 16 + ra_len(0) + ra_len(1) +
					  ra_len(2), 3, err);
			if (rc)
				break;
		}
	}
	tfk_rec_close(r);
	return rc;
}

/* TFK_REC_READAHEAD: the same records, offsets and errors as plain
 * reads, over a file large enough to start the thread. */
static void readahead(void)
{
	const char *path = tap_tmp("ra.tfrecord");
	struct tfk_rec_writer *w;
	struct tfk_err err;
	struct ra_sum a, b;
	uint8_t *p = malloc((2 << 20) + 5);
	long i, n = 24000, k;
	int rc, ra, clean = 1;
	FILE *f;

	tfk_recw_open(&w, path, TFK_COMP_NONE, &err);
	for (i = 0; i < n; i++) {
		size_t len = ra_len(i), j;

		for (j = 0; j < len; j++)
			p[j] = (uint8_t)(i * 31 + j);
		tfk_recw_write(w, p, len, &err);
	}
	is_int(tfk_recw_close(w, &err), 0, "read-ahead file written");
	rc = ra_read(path, 0, 0, &a, &err);
	ra = ra_read(path, TFK_REC_READAHEAD, 0, &b, &err);
	ok(rc == 0 && ra == 0 && a.n == n && b.n == n && a.crc == b.crc,
	   "read-ahead reads the same %ld records as plain reads", b.n);
	rc = ra_read(path, 0, 12000, &a, &err);
	ra = ra_read(path, TFK_REC_READAHEAD, 12000, &b, &err);
	ok(rc == 0 && ra == 0 && a.n == 12000 + n - 3 && a.crc == b.crc &&
	   a.n == b.n, "and the same after a seek back (%ld records)", b.n);

	/* a flipped payload byte past the first chunks: same error */
	f = fopen(path, "r+b");
	fseek(f, 5 << 20, SEEK_SET);
	fputc(0x5a ^ fgetc(f), f);
	fseek(f, 5 << 20, SEEK_SET);
	fclose(f);
	rc = ra_read(path, 0, 0, &a, &err);
	ra = ra_read(path, TFK_REC_READAHEAD, 0, &b, &err);
	ok(rc == ra && rc < 0 && a.n == b.n && a.crc == b.crc && a.n > 4000,
	   "a corrupt record stops both at record %ld (%s)", b.n, err.msg);

	for (k = 0; k < 12; k++) {
		tfk_alloc_fail_after(k);
		ra = ra_read(path, TFK_REC_READAHEAD, 0, &b, &err);
		tfk_alloc_fail_after(-1);
		if (ra != TFK_ENOMEM && !(ra == rc && b.n == a.n &&
					  b.crc == a.crc))
			clean = 0;
	}
	ok(clean, "allocation failures with read-ahead: ENOMEM or the "
	   "same records");
	free(p);
	unlink(path);
}

int main(void)
{
	readahead();
	budget();
	fixtures();
	writer_exact();
	compressed_roundtrip(TFK_COMP_GZIP);
	compressed_roundtrip(TFK_COMP_ZLIB);
	gzip_multimember();
	corruptions();
	alloc_failures();
	return tap_done();
}
