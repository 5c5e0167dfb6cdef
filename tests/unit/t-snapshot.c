/*
 * t-snapshot.c - lib/io/snapshot: SHA-256 against the FIPS 180-2 vectors
 * and sha256sum(1); the framing follower against TensorFlow's MNIST
 * fixture fed in pieces, truncated and damaged; fingerprints (what
 * changes them and what does not); the store (begin/commit/replay,
 * truncated and abandoned runs, a data file that does not match its
 * meta.json); meta.json parsing; locks; list and remove; failed
 * allocations.
 */
#include "io/out.h"
#include "io/snapshot.h"
#include "util/alloc.h"
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static uint8_t *mnist;
static size_t n_mnist;

static void hex_of(const void *p, size_t n, char hex[65])
{
	uint8_t d[32];

	tfk_sha256(p, n, d);
	tfk_sha256_hex(d, hex);
}

/* sha256sum's answer for path, the independent oracle. */
static void sha256sum(const char *path, char hex[65])
{
	char cmd[4200];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "sha256sum '%s'", path);
	f = popen(cmd, "r");
	hex[0] = 0;
	if (f) {
		if (fscanf(f, "%64s", hex) != 1)
			hex[0] = 0;
		pclose(f);
	}
}

static void sha256_vectors(void)
{
	char hex[65], want[65];
	uint8_t d[32];
	struct tfk_sha256 s;
	struct tfk_err err;
	char *a = malloc(1000000);
	size_t i, k;

	/* FIPS 180-2 appendix B.1, B.2, B.3; the empty string from NIST's
	 * examples. */
	hex_of("abc", 3, hex);
	is_str(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	       "FIPS 180-2 B.1: abc");
	hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	is_str(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
	       "FIPS 180-2 B.2: 56 bytes, the padding takes a second block");
	hex_of("", 0, hex);
	is_str(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	       "empty string");
	memset(a, 'a', 1000000);
	tfk_sha256_init(&s);
	for (i = 0, k = 1; i < 1000000; i += k, k = k % 131 + 7)
		tfk_sha256_update(&s, a + i, k < 1000000 - i ? k : 1000000 - i);
	tfk_sha256_final(&s, d);
	tfk_sha256_hex(d, hex);
	is_str(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
	       "FIPS 180-2 B.3: a million 'a' fed in pieces of 1 to 137 bytes");
	free(a);

	is_int(tfk_sha256_file(tap_fixture("tfrecord/tfx_mnist/mnist.tfrecord"),
			       d, &err), 0, "hash a file");
	tfk_sha256_hex(d, hex);
	sha256sum(tap_fixture("tfrecord/tfx_mnist/mnist.tfrecord"), want);
	is_str(hex, want, "... equals sha256sum(1) on the MNIST fixture");
	for (k = 55; k <= 65; k += 5) {
		char name[32];

		snprintf(name, sizeof(name), "len%zu", k);
		tap_write_file(tap_tmp(name), mnist, k);
		tfk_sha256_file(tap_tmp(name), d, &err);
		tfk_sha256_hex(d, hex);
		sha256sum(tap_tmp(name), want);
		is_str(hex, want, "sha256sum agrees at %zu bytes", k);
	}
	is_int(tfk_sha256_file(tap_tmp("nope"), d, &err), TFK_EIO,
	       "missing file: TFK_EIO");
	ok(strstr(err.msg, "nope: cannot open: No such file") != NULL,
	   "... naming it: %s", err.msg);
}

/* Feed p[0..n) in pieces of 1, 2, ... step bytes. */
static int feed(struct tfk_snap_frame *f, const uint8_t *p, size_t n,
		size_t step, struct tfk_err *err)
{
	size_t i, k;
	int rc = 0;

	for (i = 0, k = 1; i < n && !rc; i += k, k = k % step + 1) {
		if (k > n - i)
			k = n - i;
		rc = tfk_snap_frame_feed(f, p + i, k, err);
	}
	return rc;
}

static void framing(void)
{
	struct tfk_snap_frame f;
	struct tfk_err err;
	uint8_t *bad = malloc(n_mnist);

	tfk_snap_frame_init(&f);
	is_int(tfk_snap_frame_end(&f, &err), 0, "an empty stream is complete");
	is_int(tfk_snap_frame_feed(&f, mnist, n_mnist, &err), 0,
	       "MNIST fixture in one piece");
	is_int(f.records, 1000, "... 1000 records (the fixture's README)");
	is_int(tfk_snap_frame_end(&f, &err), 0, "... ends on a boundary");
	tfk_snap_frame_init(&f);
	is_int(feed(&f, mnist, n_mnist, 17, &err), 0, "in pieces of 1..17 bytes");
	is_int(f.records, 1000, "... 1000 records");
	is_int(tfk_snap_frame_end(&f, &err), 0, "... complete");

	tfk_snap_frame_init(&f);
	feed(&f, mnist, 3203 * 5 + 7, 5, &err);
	is_int(f.records, 5, "cut inside record 5's header: 5 records");
	is_int(tfk_snap_frame_end(&f, &err), TFK_ETRUNC, "... TFK_ETRUNC");
	is_str(err.msg, "record 5 at byte 16015: stream ends inside the record "
	       "(7 bytes of it)", "... located");
	tfk_snap_frame_init(&f);
	feed(&f, mnist, 3203 * 2 + 3000, 64, &err);
	is_int(tfk_snap_frame_end(&f, &err), TFK_ETRUNC, "cut inside a payload");
	is_str(err.msg, "record 2 at byte 6406: stream ends inside the record "
	       "(3000 bytes of it)", "... located");
	tfk_snap_frame_init(&f);
	feed(&f, mnist, 3203 * 3 - 1, 64, &err);
	is_int(tfk_snap_frame_end(&f, &err), TFK_ETRUNC,
	       "cut one byte short of the footer's end");

	memcpy(bad, mnist, n_mnist);
	bad[3203 * 3 + 2] ^= 1;		/* record 3's length */
	tfk_snap_frame_init(&f);
	is_int(feed(&f, bad, n_mnist, 100, &err), TFK_ECORRUPT,
	       "a flipped length bit: TFK_ECORRUPT");
	is_str(err.msg, "record 3 at byte 9609: length crc mismatch", "... located");
	is_int(tfk_snap_frame_feed(&f, mnist, 12, &err), TFK_ECORRUPT,
	       "... sticky: later feeds fail the same way");
	is_str(err.msg, "record 3 at byte 9609: length crc mismatch",
	       "... same message");
	is_int(tfk_snap_frame_end(&f, &err), TFK_ECORRUPT, "... and so does end");

	memcpy(bad, mnist, n_mnist);
	bad[3203 * 7 + 500] ^= 0x80;	/* a payload byte of record 7 */
	tfk_snap_frame_init(&f);
	is_int(feed(&f, bad, n_mnist, 300, &err), TFK_ECORRUPT,
	       "a flipped payload bit");
	is_str(err.msg, "record 7 at byte 22421: data crc mismatch", "... located");
	memcpy(bad, mnist, n_mnist);
	bad[3203 * 10 - 1] ^= 0xff;	/* record 9's data crc */
	tfk_snap_frame_init(&f);
	is_int(tfk_snap_frame_feed(&f, bad, n_mnist, &err), TFK_ECORRUPT,
	       "a damaged footer");
	is_str(err.msg, "record 9 at byte 28827: data crc mismatch", "... located");
	tfk_snap_frame_init(&f);
	is_int(tfk_snap_frame_feed(&f, "hello, world", 12, &err), TFK_ECORRUPT,
	       "text is not a record stream");
	free(bad);
}

static void set_mtime(const char *path, long sec)
{
	struct timeval tv[2] = { { sec, 0 }, { sec, 0 } };

	utimes(path, tv);
}

static int fingerprint(struct tfk_snap_fp *fp, int flags, const char *a0,
		       const char *a1, const char *a2)
{
	char *argv[4] = { (char *)a0, (char *)a1, (char *)a2, NULL };
	int argc = a2 ? 3 : a1 ? 2 : 1;
	struct tfk_err err;

	return tfk_snap_fingerprint(fp, argc, argv, NULL, 0, flags, &err);
}

static void fingerprints(void)
{
	struct tfk_snap_fp a, b;
	struct tfk_err err;
	char f1[4200], spec[4200], script[9000], real[4200], fa[65];
	const char *extra[1];
	char *argv[2];
	char *rp;

	snprintf(f1, sizeof(f1), "%s", tap_tmp("f1.tfrecord"));
	snprintf(spec, sizeof(spec), "%s", tap_tmp("prep.json"));
	tap_write_file(f1, mnist, 3203 * 2);
	tap_write_file(spec, "{}", 2);
	set_mtime(f1, 1000000000);
	rp = realpath(f1, NULL);
	snprintf(real, sizeof(real), "%s", rp ? rp : "");
	free(rp);

	is_int(fingerprint(&a, 0, "tfk-cat", f1, NULL), 0, "fingerprint");
	is_int(strlen(a.hex), 64, "... 64 hex digits");
	is_int(a.n_in, 1, "... one input");
	is_str(a.n_in ? a.in[0].path : "", real, "... by its real path");
	is_int(a.n_in ? a.in[0].size : 0, 3203 * 2, "... its size");
	is_int(a.n_in ? a.in[0].mtime_ns : 0, 1000000000LL * 1000000000LL,
	       "... its mtime in ns");
	memcpy(fa, a.hex, 65);
	fingerprint(&b, 0, "tfk-cat", f1, NULL);
	is_str(b.hex, fa, "same command, same files: same fingerprint");
	tfk_snap_fp_release(&b);
	fingerprint(&b, 0, "tfk-cat", f1, f1);
	ok(strcmp(b.hex, fa) != 0, "another argument: another fingerprint");
	is_int(b.n_in, 1, "... the same file twice is one input");
	tfk_snap_fp_release(&b);
	set_mtime(f1, 1000000001);
	fingerprint(&b, 0, "tfk-cat", f1, NULL);
	ok(strcmp(b.hex, fa) != 0, "a new mtime: another fingerprint");
	tfk_snap_fp_release(&b);
	tfk_snap_fp_release(&a);

	fingerprint(&a, TFK_SNAP_HASH_INPUTS, "tfk-cat", f1, NULL);
	ok(strcmp(a.hex, fa) != 0, "hashing inputs is another fingerprint");
	set_mtime(f1, 1000000002);
	fingerprint(&b, TFK_SNAP_HASH_INPUTS, "tfk-cat", f1, NULL);
	is_str(b.hex, a.hex, "... an mtime change does not matter");
	tfk_snap_fp_release(&b);
	tap_write_file(f1, mnist + 3203, 3203 * 2);
	set_mtime(f1, 1000000002);
	fingerprint(&b, TFK_SNAP_HASH_INPUTS, "tfk-cat", f1, NULL);
	ok(strcmp(b.hex, a.hex) != 0, "... same size and mtime, other content: "
	   "another fingerprint");
	tfk_snap_fp_release(&b);
	tfk_snap_fp_release(&a);

	snprintf(script, sizeof(script), "tfk-cat '%s' | tfk-map \"%s\" >%s",
		 f1, spec, tap_tmp("out"));
	tap_write_file(tap_tmp("out"), "x", 1);
	fingerprint(&a, 0, "sh", "-c", script);
	is_int(a.n_in, 2, "sh -c: two input words found, the > target left out");
	tfk_snap_fp_release(&a);
	snprintf(script, sizeof(script), "--spec=%s", spec);
	fingerprint(&a, 0, "tfk-map", script, NULL);
	is_int(a.n_in, 1, "--name=FILE: the value is an input");
	tfk_snap_fp_release(&a);
	fingerprint(&a, 0, "tfk-cat", tap_tmp("missing"), tap_tmpdir());
	is_int(a.n_in, 0, "missing files and directories are not inputs");
	tfk_snap_fp_release(&a);

	mkdir(tap_tmp("d"), 0777);
	mkdir(tap_tmp("d/e"), 0777);
	tap_write_file(tap_tmp("d/e/1"), "1", 1);
	tap_write_file(tap_tmp("d/2"), "2", 1);
	extra[0] = tap_tmp("d");
	argv[0] = "true";
	argv[1] = NULL;
	is_int(tfk_snap_fingerprint(&a, 1, argv, extra, 1, 0, &err), 0,
	       "an extra directory");
	is_int(a.n_in, 2, "... every file below it");
	ok(a.n_in == 2 && strstr(a.in[0].path, "/d/2") &&
	   strstr(a.in[1].path, "/d/e/1"), "... sorted by path");
	tfk_snap_fp_release(&a);
	extra[0] = tap_tmp("nope");
	is_int(tfk_snap_fingerprint(&a, 1, argv, extra, 1, 0, &err),
	       TFK_ENOTFOUND, "a missing extra input: TFK_ENOTFOUND");
	tfk_snap_fp_release(&a);
}

static void meta(void)
{
	uint64_t b, r;
	int64_t c;
	char *cmd;
	struct tfk_err err;
	const char *good = "{\"bytes\":10,\"records\":2,\"created\":7,"
			   "\"command\":[\"tfk-cat\",\"a b\"]}";

	is_int(tfk_snap_meta_parse("m", good, strlen(good), &b, &r, &c, &cmd,
				   &err), 0, "meta.json parses");
	ok(b == 10 && r == 2 && c == 7, "... bytes, records, created");
	is_str(cmd, "tfk-cat a b", "... command joined");
	tfk_free(cmd);
	is_int(tfk_snap_meta_parse("m", "{\"bytes\":1", 10, &b, &r, &c, NULL,
				   &err), TFK_ECORRUPT, "cut short: corrupt");
	ok(!strncmp(err.msg, "m: line 1: ", 11), "... located: %s", err.msg);
	is_int(tfk_snap_meta_parse("m", "{\"bytes\":1}", 11, &b, &r, &c, NULL,
				   &err), TFK_ECORRUPT, "records missing");
	is_str(err.msg, "m: \"bytes\" and \"records\" must be non-negative "
	       "integers", "... said");
	is_int(tfk_snap_meta_parse("m", "{\"bytes\":-1,\"records\":0}", 24, &b,
				   &r, &c, NULL, &err), TFK_ECORRUPT,
	       "negative bytes");
	is_int(tfk_snap_meta_parse("m", "[1]", 3, &b, &r, &c, NULL, &err),
	       TFK_ECORRUPT, "not an object");
	is_int(tfk_snap_meta_parse("m", "{\"bytes\":1,\"bytes\":1,\"records\":0}",
				   33, &b, &r, &c, NULL, &err), TFK_ECORRUPT,
	       "a duplicate key");
}

static int store_one(const char *dir, struct tfk_snap_fp *fp, const char *arg,
		     const uint8_t *p, size_t n)
{
	char *argv[3] = { "tfk-cat", (char *)arg, NULL };
	struct tfk_snap_writer *w;
	struct tfk_err err;
	int rc;

	rc = tfk_snap_fingerprint(fp, 2, argv, NULL, 0, 0, &err);
	if (!rc)
		rc = tfk_mkdirs(dir, &err);
	if (rc)
		return rc;
	rc = tfk_snap_begin(&w, dir, fp, &err);
	if (rc)
		return rc;
	rc = tfk_snap_write(w, p, n, &err);
	if (rc) {
		tfk_snap_abort(w);
		return rc;
	}
	return tfk_snap_commit(w, 2, argv, 0.5, &err);
}

/* The MNIST fixture in pieces of up to 4097 bytes. */
static int feed_writer(struct tfk_snap_writer *w)
{
	struct tfk_err err;
	size_t i, k;
	int rc = 0;

	for (i = 0, k = 1; i < n_mnist && !rc; i += k, k = k * 7 % 4097 + 1) {
		if (k > n_mnist - i)
			k = n_mnist - i;
		rc = tfk_snap_write(w, mnist + i, k, &err);
	}
	return rc;
}

static void store(void)
{
	char dir[4200], path[4400], *text;
	struct tfk_snap_fp fp, fp2;
	struct tfk_snap_writer *w;
	struct tfk_err err;
	struct tfk_snap_entry *e;
	char *argv[3] = { "tfk-cat", "x", NULL };
	uint64_t b, r, recs = 0;
	int64_t c;
	size_t n;
	uint8_t *got;
	int fd, fd2;

	snprintf(dir, sizeof(dir), "%s", tap_tmp("s/a/b"));
	is_int(tfk_mkdirs(dir, &err), 0, "mkdir with parents");
	is_int(tfk_mkdirs(dir, &err), 0, "... again: fine");
	tap_write_file(tap_tmp("file"), "x", 1);
	is_int(tfk_mkdirs(tap_tmp("file"), &err), TFK_EIO,
	       "mkdir over a file: TFK_EIO");
	ok(strstr(err.msg, "file: not a directory") != NULL, "... %s", err.msg);

	tfk_snap_fingerprint(&fp, 2, argv, NULL, 0, 0, &err);
	is_int(tfk_snap_complete(dir, fp.hex), 0, "nothing stored yet");
	is_int(tfk_snap_begin(&w, dir, &fp, &err), 0, "begin");
	is_int(feed_writer(w), 0, "write the MNIST fixture in pieces");
	is_int(tfk_snap_records(w), 1000, "... 1000 records");
	is_int(tfk_snap_bytes(w), n_mnist, "... every byte");
	is_int(tfk_snap_complete(dir, fp.hex), 0, "not complete before commit");
	is_int(tfk_snap_commit(w, 2, argv, 1.5, &err), 0, "commit");
	is_int(tfk_snap_complete(dir, fp.hex), 1, "complete");
	snprintf(path, sizeof(path), "%s/%s/meta.json", dir, fp.hex);
	text = tap_read_file(path, &n);
	is_int(tfk_snap_meta_parse("m", text, n, &b, &r, &c, NULL, &err), 0,
	       "its meta.json parses");
	ok(b == n_mnist && r == 1000, "... with the counts");
	ok(text && strstr(text, "\"command\":[\"tfk-cat\",\"x\"]") &&
	   strstr(text, fp.hex), "... the command and the fingerprint");
	free(text);
	snprintf(path, sizeof(path), "%s/%s/data.tfrecord", dir, fp.hex);
	got = tap_read_file(path, &n);
	is_mem(got, n, mnist, n_mnist, "the data is the bytes written");
	free(got);

	fd = open(tap_tmp("replayed"), O_WRONLY | O_CREAT | O_TRUNC, 0666);
	is_int(tfk_snap_replay(dir, fp.hex, fd, &recs, &err), 0, "replay");
	close(fd);
	is_int(recs, 1000, "... 1000 records");
	got = tap_read_file(tap_tmp("replayed"), &n);
	is_mem(got, n, mnist, n_mnist, "... byte for byte");
	free(got);

	/* locks */
	is_int(tfk_snap_lock(dir, fp.hex, 0, 1, &fd, &err), 1, "shared lock");
	is_int(tfk_snap_lock(dir, fp.hex, 0, 0, &fd2, &err), 1,
	       "... a second shared lock too");
	tfk_snap_unlock(fd2);
	is_int(tfk_snap_lock(dir, fp.hex, 1, 0, &fd2, &err), 0,
	       "... but no exclusive one (0: would block)");
	is_int(tfk_snap_remove(dir, fp.hex, &err), 0,
	       "remove skips a snapshot in use");
	is_int(tfk_snap_list(dir, &e, &n, &err), 0, "list");
	ok(n == 1 && e[0].complete && e[0].has_dir && e[0].locked &&
	   e[0].records == 1000 && e[0].bytes == n_mnist &&
	   !strcmp(e[0].command, "tfk-cat x"), "... one complete locked entry");
	tfk_snap_list_free(e, n);
	tfk_snap_unlock(fd);
	is_int(tfk_snap_lock(dir, fp.hex, 1, 0, &fd, &err), 1, "exclusive lock");
	is_int(tfk_snap_lock(dir, fp.hex, 0, 0, &fd2, &err), 0,
	       "... excludes a shared one");
	tfk_snap_unlock(fd);

	/* a replay must not pass off a data file that changed */
	snprintf(path, sizeof(path), "%s/%s/data.tfrecord", dir, fp.hex);
	tap_write_file(path, mnist, 3203);
	fd = open("/dev/null", O_WRONLY);
	is_int(tfk_snap_replay(dir, fp.hex, fd, &recs, &err), TFK_ECORRUPT,
	       "data shorter than meta.json says: TFK_ECORRUPT");
	ok(strstr(err.msg, "data.tfrecord: 3203 bytes, but meta.json says "
		  "3203000") != NULL, "... %s", err.msg);

	/* rebuilding: begin clears the old one; a truncated stream fails */
	is_int(tfk_snap_begin(&w, dir, &fp, &err), 0, "begin over a snapshot");
	is_int(tfk_snap_complete(dir, fp.hex), 0, "... it is gone");
	tfk_snap_write(w, mnist, 3203 + 100, &err);
	is_int(tfk_snap_commit(w, 2, argv, 0, &err), TFK_ETRUNC,
	       "commit of a stream cut inside a record: TFK_ETRUNC");
	snprintf(path, sizeof(path), "%s/%s", dir, fp.hex);
	ok(access(path, F_OK) != 0, "... and its directory is removed");
	is_int(tfk_snap_replay(dir, fp.hex, fd, &recs, &err), TFK_ENOTFOUND,
	       "replay of nothing: TFK_ENOTFOUND");
	close(fd);
	is_int(tfk_snap_begin(&w, dir, &fp, &err), 0, "begin");
	is_int(tfk_snap_write(w, "garbage here", 12, &err), TFK_ECORRUPT,
	       "writing text: TFK_ECORRUPT");
	tfk_snap_abort(w);
	ok(access(path, F_OK) != 0, "abort removes the directory");
	tfk_snap_abort(NULL);

	/* list: complete ones newest first, an incomplete one, a stale lock */
	is_int(store_one(dir, &fp2, "one", mnist, 3203), 0, "store another");
	tfk_snap_fp_release(&fp2);
	is_int(store_one(dir, &fp2, "two", mnist, 6406), 0, "and another");
	tfk_snap_begin(&w, dir, &fp, &err);
	tfk_snap_write(w, mnist, 3203, &err);
	is_int(tfk_snap_list(dir, &e, &n, &err), 0, "list");
	is_int(n, 3, "... three entries");
	if (n == 3) {
		int k;

		for (k = 0; k < 3 && strcmp(e[k].fp, fp.hex); k++)
			;
		ok(k < 3 && !e[k].complete && e[k].has_dir && !e[k].command,
		   "... the one being written: incomplete, no command");
		ok(e[k == 0 ? 1 : 0].complete && e[k == 2 ? 1 : 2].complete,
		   "... the others complete");
		ok(!strcmp(e[k == 0 ? 1 : 0].fp, fp2.hex),
		   "... the newest complete one first");
	}
	tfk_snap_list_free(e, n);
	tfk_snap_abort(w);
	is_int(tfk_snap_list(dir, &e, &n, &err), 0, "after abort");
	ok(n == 3 && !e[2].has_dir && !strcmp(e[2].fp, fp.hex),
	   "... a stale lock file is listed without a directory");
	tfk_snap_list_free(e, n);
	is_int(tfk_snap_remove(dir, fp.hex, &err), 1, "remove the stale lock");
	is_int(tfk_snap_remove(dir, fp2.hex, &err), 1, "remove a snapshot");
	snprintf(path, sizeof(path), "%s/%s.lock", dir, fp2.hex);
	ok(access(path, F_OK) != 0, "... with its lock file");
	is_int(tfk_snap_list(dir, &e, &n, &err), 0, "list");
	is_int(n, 1, "... one left");
	tfk_snap_list_free(e, n);
	is_int(tfk_snap_list(tap_tmp("nowhere"), &e, &n, &err), 0,
	       "list of a missing store");
	is_int(n, 0, "... is empty");
	tfk_snap_fp_release(&fp2);
	tfk_snap_fp_release(&fp);
}

/* Every allocation failure returns TFK_ENOMEM and leaks nothing (ASan
 * checks the leaks). */
static void oom(void)
{
	struct tfk_snap_fp fp;
	struct tfk_snap_entry *e;
	struct tfk_err err;
	char script[300];
	char *argv[4] = { "sh", "-c", script, NULL };
	const char *extra[1] = { tap_tmp("d") };
	long i;
	int rc, bad = 0, n_fail = 0;
	size_t n;

	snprintf(script, sizeof(script), "tfk-cat %s | tfk-map %s",
		 tap_tmp("f1.tfrecord"), tap_tmp("prep.json"));
	for (i = 0; i < 200; i++) {
		tfk_alloc_fail_after(i);
		rc = tfk_snap_fingerprint(&fp, 3, argv, extra, 1,
					  TFK_SNAP_HASH_INPUTS, &err);
		tfk_alloc_fail_after(-1);
		tfk_snap_fp_release(&fp);
		if (rc == 0)
			break;
		n_fail++;
		bad |= rc != TFK_ENOMEM;
	}
	ok(i < 200 && n_fail > 3 && !bad,
	   "fingerprint: each of %d failed allocations is TFK_ENOMEM", n_fail);
	for (i = n_fail = bad = 0; i < 200; i++) {
		char dir[64];

		snprintf(dir, sizeof(dir), "oom%ld", i);
		tfk_alloc_fail_after(i);
		rc = store_one(tap_tmp(dir), &fp, "x", mnist, 3203 * 3);
		tfk_alloc_fail_after(-1);
		tfk_snap_fp_release(&fp);
		if (rc == 0)
			break;
		n_fail++;
		bad |= rc != TFK_ENOMEM && rc != TFK_EIO;
	}
	ok(i < 200 && n_fail > 3 && !bad,
	   "store: each of %d failed allocations fails cleanly", n_fail);
	for (i = n_fail = bad = 0; i < 200; i++) {
		tfk_alloc_fail_after(i);
		rc = tfk_snap_list(tap_tmp("s/a/b"), &e, &n, &err);
		tfk_alloc_fail_after(-1);
		if (rc == 0) {
			tfk_snap_list_free(e, n);
			break;
		}
		n_fail++;
		bad |= rc != TFK_ENOMEM;
	}
	ok(i < 200 && n_fail > 1 && !bad,
	   "list: each of %d failed allocations is TFK_ENOMEM", n_fail);
}

int main(void)
{
	mnist = tap_read_file(tap_fixture("tfrecord/tfx_mnist/mnist.tfrecord"),
			      &n_mnist);
	ok(mnist && n_mnist == 3203000, "MNIST fixture read");
	if (!mnist)
		return tap_done();
	sha256_vectors();
	framing();
	fingerprints();
	meta();
	store();
	oom();
	free(mnist);
	return tap_done();
}
