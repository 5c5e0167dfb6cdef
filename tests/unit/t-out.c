/*
 * t-out.c - atomic output files: nothing under the final name before
 * close, the temporary next to it, discard and failure remove it, a kill
 * removes it, the mode honours umask, stdout is written through, and
 * GZIP/ZLIB output is read back by zlib's own decoders (gzread for
 * GZIP, uncompress for ZLIB, inflate for a flushed partial stream) and
 * by gzip(1).
 */
#include "io/out.h"
#include "util/alloc.h"
#include "util/cli.h"
#include "tap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

/* Number of entries in dir whose name starts with prefix; the last one
 * found is copied to found (when not NULL). */
static int count_prefix(const char *dir, const char *prefix, char *found,
			size_t n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int k = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		k++;
		if (found)
			snprintf(found, n, "%s/%s", dir, e->d_name);
	}
	closedir(d);
	return k;
}

static uint8_t *pattern(size_t n, unsigned seed)
{
	uint8_t *p = malloc(n);
	size_t i;

	/* compressible but not trivially: words from a small alphabet */
	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)("abcdefgh \n"[(seed >> 16) % 10]);
	}
	return p;
}

static void atomic(void)
{
	struct tfk_out *o;
	struct tfk_err err;
	const char *final = tap_tmp("a.bin");
	char tpath[700];
	uint8_t *got, *big = pattern(600000, 1);
	size_t n;
	struct stat st;

	is_int(tfk_out_open(&o, final, TFK_COMP_NONE, &err), 0, "open");
	is_str(tfk_out_path(o), final, "path is the final name");
	ok(access(final, F_OK) != 0, "nothing under the final name after open");
	is_int(count_prefix(tap_tmpdir(), ".a.bin.tmp-", tpath, sizeof(tpath)), 1,
	       "one temporary .a.bin.tmp-XXXXXX next to it");
	tfk_out_write(o, "hello ", 6, &err);
	tfk_out_write(o, big, 600000, &err);	/* > the 256 KiB buffer */
	tfk_out_write(o, "bye", 3, &err);
	ok(access(final, F_OK) != 0, "nothing under the final name while writing");
	is_int(tfk_out_flush(o, &err), 0, "flush");
	ok(stat(tpath, &st) == 0 && st.st_size == 600009,
	   "after flush the temporary holds every byte");
	is_int(tfk_out_bytes(o), 600009, "bytes counted");
	is_int(tfk_out_file_bytes(o), 600009, "file bytes equal bytes uncompressed");
	is_int(tfk_out_close(o, &err), 0, "close");
	ok(access(tpath, F_OK) != 0, "temporary gone after close");
	got = tap_read_file(final, &n);
	ok(n == 600009 && !memcmp(got, "hello ", 6) && !memcmp(got + 6, big, 600000) &&
	   !memcmp(got + 600006, "bye", 3), "final file holds exactly what was written");
	free(got);

	/* replacing an existing file: the old contents stay until close */
	tfk_out_open(&o, final, TFK_COMP_NONE, &err);
	tfk_out_write(o, "new", 3, &err);
	tfk_out_flush(o, &err);
	ok(stat(final, &st) == 0 && st.st_size == 600009,
	   "an existing file is untouched before close");
	tfk_out_close(o, &err);
	got = tap_read_file(final, &n);
	is_mem(got, n, "new", 3, "and replaced whole on close");
	free(got);

	/* discard */
	tfk_out_open(&o, final, TFK_COMP_NONE, &err);
	tfk_out_write(o, "zzz", 3, &err);
	tfk_out_discard(o);
	is_int(count_prefix(tap_tmpdir(), ".a.bin.tmp-", NULL, 0), 0,
	       "discard removes the temporary");
	got = tap_read_file(final, &n);
	is_mem(got, n, "new", 3, "discard leaves the old file alone");
	free(got);
	unlink(final);

	tfk_out_open(&o, final, TFK_COMP_NONE, &err);
	tfk_out_discard(o);
	ok(access(final, F_OK) != 0, "discard of a new file leaves nothing");
	tfk_out_discard(NULL);
	is_int(tfk_out_close(NULL, &err), 0, "close(NULL) and discard(NULL) are no-ops");

	/* a relative path: the temporary goes into the current directory */
	{
		char cwd[4096];

		if (getcwd(cwd, sizeof(cwd)) && chdir(tap_tmpdir()) == 0) {
			tfk_out_open(&o, "rel.txt", TFK_COMP_NONE, &err);
			is_int(count_prefix(".", ".rel.txt.tmp-", NULL, 0), 1,
			       "relative path: temporary in the current directory");
			tfk_out_write(o, "r", 1, &err);
			tfk_out_close(o, &err);
			ok(access("rel.txt", F_OK) == 0, "relative path: renamed into place");
			unlink("rel.txt");
			if (chdir(cwd))
				return;
		}
	}
	free(big);
}

static void modes(void)
{
	static const mode_t masks[] = { 022, 027, 077, 0 };
	size_t i;

	for (i = 0; i < sizeof(masks) / sizeof(masks[0]); i++) {
		struct tfk_out *o;
		struct tfk_err err;
		struct stat st;
		mode_t old = umask(masks[i]);
		const char *p = tap_tmp("mode.bin");

		tfk_out_open(&o, p, TFK_COMP_NONE, &err);
		tfk_out_write(o, "m", 1, &err);
		tfk_out_close(o, &err);
		umask(old);
		stat(p, &st);
		is_int(st.st_mode & 0777, 0666 & ~masks[i],
		       "umask %03o: mode %03o", (unsigned)masks[i],
		       (unsigned)(0666 & ~masks[i]));
		unlink(p);
	}
}

/* Replacing a file keeps its permission bits, whatever the umask. */
static void kept_modes(void)
{
	static const mode_t modes_[] = { 0600, 0640, 0604, 0755, 0400 };
	size_t i;

	for (i = 0; i < sizeof(modes_) / sizeof(modes_[0]); i++) {
		struct tfk_out *o;
		struct tfk_err err;
		struct stat st;
		mode_t old = umask(0);
		const char *p = tap_tmp("kept.bin");
		int rc;

		tap_write_file(p, "old", 3);
		chmod(p, modes_[i]);
		rc = tfk_out_open(&o, p, TFK_COMP_NONE, &err);
		if (!rc)
			tfk_out_write(o, "new", 3, &err);
		if (!rc)
			rc = tfk_out_close(o, &err);
		umask(old);
		stat(p, &st);
		ok(!rc && (st.st_mode & 0777) == modes_[i] &&
		   st.st_uid == getuid(), "an existing %03o file stays %03o "
		   "(got %03o)", (unsigned)modes_[i], (unsigned)modes_[i],
		   (unsigned)(st.st_mode & 0777));
		unlink(p);
	}
}

static void gzip_out(void)
{
	struct tfk_out *o;
	struct tfk_err err;
	const char *p = tap_tmp("c.gz");
	size_t n = 3u << 20, got = 0, k;
	uint8_t *src = pattern(n, 7), *back = malloc(n + 16);
	gzFile gz;
	char cmd[1400];
	struct stat st;

	is_int(tfk_out_open(&o, p, TFK_COMP_GZIP, &err), 0, "gzip: open");
	for (k = 0; k < n; k += 1000)
		tfk_out_write(o, src + k, k + 1000 <= n ? 1000 : n - k, &err);
	is_int(tfk_out_bytes(o), n, "gzip: bytes counted before compression");
	is_int(tfk_out_close(o, &err), 0, "gzip: close");
	stat(p, &st);
	ok(st.st_size > 100 && (uint64_t)st.st_size < n / 2,
	   "gzip: file is compressed (%lld bytes for %zu)", (long long)st.st_size, n);
	gz = gzopen(p, "rb");
	if (gz) {
		int r;

		while ((r = gzread(gz, back + got, 65536)) > 0)
			got += (size_t)r;
		gzclose(gz);
	}
	ok(got == n && !memcmp(src, back, n), "gzip: zlib's gzread gives the bytes back");
	{
		uint8_t *raw;
		size_t nraw;

		raw = tap_read_file(p, &nraw);
		ok(nraw > 10 && raw[0] == 0x1f && raw[1] == 0x8b && raw[2] == 8,
		   "gzip: RFC 1952 magic and deflate method");
		free(raw);
	}
	snprintf(cmd, sizeof(cmd), "gzip -t %s", p);
	is_int(system(cmd), 0, "gzip: gzip -t accepts it");
	unlink(p);
	free(src);
	free(back);
}

static void zlib_out(void)
{
	struct tfk_out *o;
	struct tfk_err err;
	const char *p = tap_tmp("c.zz");
	size_t n = 1u << 20;
	uint8_t *src = pattern(n, 9), *raw, *back = malloc(n);
	size_t nraw;
	uLongf nback = n;

	tfk_out_open(&o, p, TFK_COMP_ZLIB, &err);
	tfk_out_write(o, src, n, &err);
	is_int(tfk_out_close(o, &err), 0, "zlib: close");
	raw = tap_read_file(p, &nraw);
	ok(nraw > 2 && raw[0] == 0x78 && ((raw[0] << 8) | raw[1]) % 31 == 0,
	   "zlib: RFC 1950 header (78 xx, check bits)");
	ok(uncompress(back, &nback, raw, nraw) == Z_OK && nback == n &&
	   !memcmp(back, src, n), "zlib: zlib's uncompress gives the bytes back");
	free(raw);
	unlink(p);

	/* flush makes a compressed stream readable so far (a pipe consumer
	 * must see whole records without waiting for close) */
	{
		char tpath[700];
		z_stream z;
		uint8_t out[4096];
		int rc;

		tfk_out_open(&o, tap_tmp("f.gz"), TFK_COMP_GZIP, &err);
		tfk_out_write(o, "record one;record two;", 22, &err);
		is_int(tfk_out_flush(o, &err), 0, "gzip: flush");
		count_prefix(tap_tmpdir(), ".f.gz.tmp-", tpath, sizeof(tpath));
		raw = tap_read_file(tpath, &nraw);
		memset(&z, 0, sizeof(z));
		inflateInit2(&z, 15 + 16);
		z.next_in = raw;
		z.avail_in = (uInt)nraw;
		z.next_out = out;
		z.avail_out = sizeof(out);
		rc = inflate(&z, Z_SYNC_FLUSH);
		ok((rc == Z_OK || rc == Z_BUF_ERROR) && z.total_out == 22 &&
		   !memcmp(out, "record one;record two;", 22),
		   "gzip: after flush, everything written so far inflates");
		inflateEnd(&z);
		free(raw);
		tfk_out_discard(o);
		ok(access(tpath, F_OK) != 0, "gzip: discard removes the temporary");
	}
	free(src);
	free(back);
}

static void to_stdout(void)
{
	struct tfk_out *o;
	struct tfk_err err;
	const char *p = tap_tmp("stdout.bin");
	int save, fd;
	uint8_t *got;
	size_t n;

	fflush(stdout);
	save = dup(1);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 1);
	close(fd);
	tfk_out_open(&o, "-", TFK_COMP_NONE, &err);
	tfk_out_write(o, "to stdout\n", 10, &err);
	tfk_out_flush(o, &err);
	{
		struct stat st;

		fstat(1, &st);
		n = (size_t)st.st_size;
	}
	tfk_out_write(o, "second\n", 7, &err);
	fd = tfk_out_close(o, &err);
	dup2(save, 1);
	close(save);
	is_int(n, 10, "stdout: flush writes through");
	is_int(fd, 0, "stdout: close");
	got = tap_read_file(p, &n);
	is_mem(got, n, "to stdout\nsecond\n", 17, "stdout: bytes in order");
	free(got);

	tfk_out_open(&o, NULL, TFK_COMP_NONE, &err);
	is_str(tfk_out_path(o), "<stdout>", "NULL path is stdout, shown as <stdout>");
	tfk_out_discard(o);
	ok(fcntl(1, F_GETFD) != -1, "discarding stdout output keeps fd 1 open");
	unlink(p);
}

/* Error messages -------------------------------------------------------- */

static void open_in_child(const char *path, int drop, char *msg, size_t n,
			  int *code)
{
	int pfd[2];
	pid_t pid;
	int st;
	ssize_t k;

	if (pipe(pfd))
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct tfk_out *o;
		struct tfk_err err;
		int rc;

		close(pfd[0]);
		if (drop && (setgid(65534) || setuid(65534)))
			_exit(3);
		tfk_err_clear(&err);
		rc = tfk_out_open(&o, path, TFK_COMP_NONE, &err);
		if (rc == 0)
			tfk_out_discard(o);
		if (write(pfd[1], err.msg, strlen(err.msg)) < 0)
			_exit(4);
		_exit(-rc);
	}
	close(pfd[1]);
	k = read(pfd[0], msg, n - 1);
	msg[k > 0 ? k : 0] = '\0';
	close(pfd[0]);
	waitpid(pid, &st, 0);
	*code = WIFEXITED(st) ? -WEXITSTATUS(st) : -99;
}

static void errors(void)
{
	struct tfk_out *o;
	struct tfk_err err;
	char want[800], msg[1000], dir[700], exp[1000];
	const char *p = tap_tmp("missing-dir/x.tfrecord");
	int code = 0;

	tfk_err_clear(&err);
	is_int(tfk_out_open(&o, p, TFK_COMP_NONE, &err), TFK_EIO,
	       "missing directory: TFK_EIO");
	ok(o == NULL, "no handle on failure");
	snprintf(want, sizeof(want), "%s: cannot create: No such file or directory", p);
	is_str(err.msg, want, "missing directory: message names the final path");

	snprintf(dir, sizeof(dir), "%s/ro", tap_tmpdir());
	mkdir(dir, 0755);
	chmod(tap_tmpdir(), 0755);
	snprintf(want, sizeof(want), "%s/out.tfrecord", dir);
	/* root ignores permissions: the child drops to nobody first */
	if (geteuid() != 0)
		chmod(dir, 0555);
	open_in_child(want, geteuid() == 0, msg, sizeof(msg), &code);
	is_int(code, TFK_EIO, "unwritable directory: TFK_EIO");
	snprintf(exp, sizeof(exp), "%s: cannot create: Permission denied", want);
	is_str(msg, exp, "unwritable directory: '%s: cannot create: Permission denied'",
	       "DIR/out.tfrecord");
	ok(count_prefix(dir, ".", NULL, 0) == 2, "and nothing left in it");
	chmod(dir, 0755);
	rmdir(dir);

	/* a path through a regular file */
	{
		const char *f = tap_tmp("plain");
		int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		close(fd);
		snprintf(want, sizeof(want), "%s/x", f);
		is_int(tfk_out_open(&o, want, TFK_COMP_NONE, &err), TFK_EIO,
		       "a file used as a directory: TFK_EIO");
		ok(strstr(err.msg, "cannot create: Not a directory") != NULL,
		   "message: %s", strstr(err.msg, "cannot") ? strstr(err.msg, "cannot") : err.msg);
		unlink(f);
	}

	/* writing to a closed pipe is an error, not a crash (SIGPIPE
	 * ignored here, as a tool that handles EPIPE itself would) */
	{
		int pfd[2], save;
		void (*old)(int) = signal(SIGPIPE, SIG_IGN);
		int rc;

		if (pipe(pfd) == 0) {
			fflush(stdout);
			save = dup(1);
			dup2(pfd[1], 1);
			close(pfd[1]);
			close(pfd[0]);
			tfk_out_open(&o, "-", TFK_COMP_NONE, &err);
			tfk_out_write(o, "x", 1, &err);
			rc = tfk_out_close(o, &err);
			dup2(save, 1);
			close(save);
			is_int(rc, TFK_EIO, "closed pipe: TFK_EIO");
			is_str(err.msg, "<stdout>: write failed: Broken pipe",
			       "closed pipe: message");
		}
		signal(SIGPIPE, old);
	}
}

/* An existing target that is not a regular file is written through,
 * never renamed over: a device node or fifo must survive -o. */
static void not_regular(void)
{
	struct tfk_out *o;
	struct tfk_err err;
	struct stat st;
	char fifo[700], want[800], buf[16];
	int rfd, rc, fifo_ok;
	ssize_t k;

	tfk_err_clear(&err);
	snprintf(fifo, sizeof(fifo), "%s/fifo", tap_tmpdir());
	if (mkfifo(fifo, 0600) != 0) {
		ok(0, "mkfifo %s: %s", fifo, strerror(errno));
		return;
	}
	rfd = open(fifo, O_RDONLY | O_NONBLOCK);
	is_int(tfk_out_open(&o, fifo, TFK_COMP_NONE, &err), 0, "fifo opens");
	tfk_out_write(o, "hello", 5, &err);
	is_int(tfk_out_close(o, &err), 0, "fifo: close ok");
	k = read(rfd, buf, sizeof(buf));
	is_int((int)k, 5, "fifo: the reader gets the 5 bytes");
	close(rfd);
	fifo_ok = stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode);
	ok(fifo_ok, "the fifo is still a fifo");
	unlink(fifo);

	/* Only when the fifo survived: a regression would rename a file
	 * over /dev/full (the tests may run as root). */
	if (fifo_ok) {
		is_int(tfk_out_open(&o, "/dev/full", TFK_COMP_NONE, &err), 0,
		       "/dev/full opens");
		tfk_out_write(o, "abc", 3, &err);
		rc = tfk_out_close(o, &err);
		is_int(rc, TFK_EIO, "/dev/full: the write error is seen at close");
		is_str(err.msg, "/dev/full: write failed: No space left on device",
		       "/dev/full: message");
		ok(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode),
		   "/dev/full is still a character device");
		is_int(count_prefix("/dev", ".full.tmp-", NULL, 0), 0,
		       "no temporary in /dev");
	}

	/* A symlink to a file: the file is replaced, the link stays. */
	{
		char sub[700], real[800], link[800], lbuf[800];
		uint8_t *got;
		size_t n = 0;
		int fd;
		ssize_t ln;

		snprintf(sub, sizeof(sub), "%s/real", tap_tmpdir());
		mkdir(sub, 0755);
		snprintf(real, sizeof(real), "%s/data.bin", sub);
		snprintf(link, sizeof(link), "%s/link.bin", tap_tmpdir());
		fd = open(real, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			if (write(fd, "old", 3) != 3)
				ok(0, "write old");
			close(fd);
		}
		ok(symlink("real/data.bin", link) == 0, "symlink made");
		is_int(tfk_out_open(&o, link, TFK_COMP_NONE, &err), 0,
		       "symlink opens");
		tfk_out_write(o, "new!", 4, &err);
		is_int(count_prefix(sub, ".data.bin.tmp-", NULL, 0), 1,
		       "the temporary is next to the link's target");
		is_int(tfk_out_close(o, &err), 0, "symlink: close ok");
		ok(lstat(link, &st) == 0 && S_ISLNK(st.st_mode),
		   "the link is still a link");
		ln = readlink(link, lbuf, sizeof(lbuf) - 1);
		if (ln >= 0)
			lbuf[ln] = 0;
		is_str(ln >= 0 ? lbuf : "", "real/data.bin",
		       "pointing where it did");
		got = tap_read_file(real, &n);
		ok(got && n == 4 && !memcmp(got, "new!", 4),
		   "the target holds the new bytes");
		free(got);
		is_int(count_prefix(sub, ".data.bin.tmp-", NULL, 0), 0,
		       "no temporary left");
		unlink(link);
		unlink(real);
		rmdir(sub);
	}

	is_int(tfk_out_open(&o, tap_tmpdir(), TFK_COMP_NONE, &err), TFK_EIO,
	       "a directory: TFK_EIO at open, before any data");
	snprintf(want, sizeof(want), "%s: is a directory", tap_tmpdir());
	is_str(err.msg, want, "a directory: message");
}

/* A kill while writing leaves neither the final name nor the temporary. */
static void killed(void)
{
	static const struct tfk_cmd cmd = { "tfk-t", "", "", "" };
	char dir[700];
	pid_t pid;
	int st;

	snprintf(dir, sizeof(dir), "%s/kill", tap_tmpdir());
	mkdir(dir, 0755);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		static char *argv[] = { "tfk-t", NULL };
		struct tfk_out *o;
		struct tfk_err err;
		char path[800];

		tfk_cli_parse(1, argv, &cmd, (const struct tfk_opt[]){ TFK_OPT_END });
		snprintf(path, sizeof(path), "%s/k.tfrecord", dir);
		tfk_out_open(&o, path, TFK_COMP_GZIP, &err);
		tfk_out_write(o, "partial", 7, &err);
		tfk_out_flush(o, &err);
		raise(SIGTERM);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "child killed by SIGTERM");
	is_int(count_prefix(dir, "", NULL, 0), 2,
	       "killed while writing: only . and .. remain");
	rmdir(dir);
}

static void alloc_failures(void)
{
	long k;
	int clean = 1, rc = -1;

	for (k = 0; k < 20; k++) {
		struct tfk_out *o = NULL;
		struct tfk_err err;

		tfk_alloc_fail_after(k);
		rc = tfk_out_open(&o, tap_tmp("oom.gz"), TFK_COMP_GZIP, &err);
		tfk_alloc_fail_after(-1);
		if (rc == 0) {
			tfk_out_write(o, "ok", 2, &err);
			rc = tfk_out_close(o, &err);
			break;
		}
		if (rc != TFK_ENOMEM || o != NULL)
			clean = 0;
	}
	ok(clean && rc == 0, "every allocation failure in open is ENOMEM (%ld tried)", k);
	is_int(count_prefix(tap_tmpdir(), ".oom.gz", NULL, 0), 0,
	       "no temporaries left by the failed opens");
	unlink(tap_tmp("oom.gz"));
}

int main(void)
{
	atomic();
	modes();
	kept_modes();
	gzip_out();
	zlib_out();
	to_stdout();
	errors();
	not_regular();
	killed();
	alloc_failures();
	tap_rm_tmpdir();
	return tap_done();
}
