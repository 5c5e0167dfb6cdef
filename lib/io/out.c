/*
 * out.c - atomic, optionally compressed output files (see out.h).
 *
 * The temporary lives in the target's directory so rename(2) is atomic;
 * mkstemp gives it mode 0600, so before the rename it gets the mode a
 * plain open would have left: a new file 0666 & ~umask, an existing
 * one its own permission bits (a 0600 file stays private) and, where
 * the kernel lets us, its owner and group. A group we cannot give it
 * loses its group bits rather than hand them to our own group. Writes
 * go through a 256 KiB buffer: small records would otherwise cost a
 * syscall each.
 * A target that exists and is not a regular file (/dev/null, a fifo,
 * /dev/stdout) is written through instead: renaming over it would
 * replace the device node or link itself with a plain file. A symlink
 * to a regular file gets the temporary next to the file it names, and
 * the rename replaces that file, so the link stays a link.
 */
#include "io/out.h"
#include "util/alloc.h"
#include "util/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define OBUF (256u << 10)

struct tfk_out {
	char *path;		/* final name */
	char *target;		/* what a symlink path resolves to, or NULL */
	char *tmp;		/* temporary name, NULL for stdout */
	int fd;
	int own_fd;		/* fd opened on a non-regular target */
	int comp;
	uint8_t *buf;
	size_t len;
	z_stream z;
	int z_live;
	uint8_t *zbuf;
	uint64_t bytes, file_bytes;
};

static int io_error(struct tfk_out *o, struct tfk_err *err, const char *what)
{
	return tfk_errf(err, TFK_EIO, "%s: %s: %s", o->path, what,
			strerror(errno));
}

static void free_out(struct tfk_out *o)
{
	if (o->z_live)
		deflateEnd(&o->z);
	if ((o->tmp || o->own_fd) && o->fd >= 0)
		close(o->fd);
	tfk_free(o->zbuf);
	tfk_free(o->buf);
	tfk_free(o->tmp);
	tfk_free(o->path);
	tfk_free(o->target);
	tfk_free(o);
}

int tfk_out_open(struct tfk_out **outp, const char *path, int comp,
		 struct tfk_err *err)
{
	struct tfk_out *o;
	struct stat st;
	int stdout_ = !path || !strcmp(path, "-");

	*outp = NULL;
	o = tfk_calloc(1, sizeof(*o));
	if (!o)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	o->fd = -1;
	o->comp = comp;
	o->path = tfk_strdup(stdout_ ? "<stdout>" : path);
	o->buf = tfk_malloc(OBUF);
	if (!o->path || !o->buf)
		goto oom;
	if (comp != TFK_COMP_NONE) {
		int bits = comp == TFK_COMP_GZIP ? 15 + 16 : 15;

		o->zbuf = tfk_malloc(OBUF);
		if (!o->zbuf)
			goto oom;
		if (deflateInit2(&o->z, 6, Z_DEFLATED, bits, 8,
				 Z_DEFAULT_STRATEGY) != Z_OK)
			goto oom;
		o->z_live = 1;
	}
	if (stdout_) {
		o->fd = 1;
	} else if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		int rc;

		if (S_ISDIR(st.st_mode)) {
			rc = tfk_errf(err, TFK_EIO, "%s: is a directory", path);
			free_out(o);
			return rc;
		}
		o->fd = open(path, O_WRONLY | O_CLOEXEC);
		if (o->fd < 0) {
			rc = io_error(o, err, "cannot open");
			free_out(o);
			return rc;
		}
		o->own_fd = 1;
	} else {
		const char *slash;
		size_t dlen, n;
		struct stat old;
		int had = stat(path, &old) == 0;
		mode_t um;

		/* A symlink to a file: replace the file it names (next to
		 * it, for an atomic rename), not the link. */
		if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
			char *real = realpath(path, NULL);

			if (real) {
				o->target = tfk_strdup(real);
				free(real);
				if (!o->target)
					goto oom;
				path = o->target;
			}
		}
		slash = strrchr(path, '/');
		dlen = slash ? (size_t)(slash - path + 1) : 0;
		n = strlen(path) + 16;
		o->tmp = tfk_malloc(n);
		if (!o->tmp)
			goto oom;
		snprintf(o->tmp, n, "%.*s.%s.tmp-XXXXXX", (int)dlen, path,
			 path + dlen);
		o->fd = mkstemp(o->tmp);
		if (o->fd < 0) {
			int rc = io_error(o, err, "cannot create");

			free_out(o);
			return rc;
		}
		/* Tracked under the name mkstemp chose, not the template. */
		if (tfk_cli_track_temp(o->tmp)) {
			unlink(o->tmp);
			goto oom;
		}
		if (had) {
			mode_t mode = old.st_mode & 0777;

			/* as root (or when they are ours already) owner and
			 * group stay; else the group alone if we are in it */
			if (fchown(o->fd, old.st_uid, old.st_gid) &&
			    fchown(o->fd, (uid_t)-1, old.st_gid))
				mode &= ~(mode_t)070;
			fchmod(o->fd, mode);
		} else {
			um = umask(0);
			umask(um);
			fchmod(o->fd, 0666 & ~um);
		}
	}
	*outp = o;
	return 0;
oom:
	free_out(o);
	return tfk_errf(err, TFK_ENOMEM, "out of memory");
}

static int write_all(struct tfk_out *o, const uint8_t *p, size_t n,
		     struct tfk_err *err)
{
	while (n) {
		ssize_t k = write(o->fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return io_error(o, err, "write failed");
		p += k;
		n -= (size_t)k;
		o->file_bytes += (uint64_t)k;
	}
	return 0;
}

static int deflate_some(struct tfk_out *o, const uint8_t *p, size_t n,
			int flush, struct tfk_err *err)
{
	int ret;

	o->z.next_in = (Bytef *)p;
	o->z.avail_in = (uInt)n;
	do {
		o->z.next_out = o->zbuf;
		o->z.avail_out = OBUF;
		ret = deflate(&o->z, flush);
		if (ret == Z_STREAM_ERROR)
			return tfk_errf(err, TFK_EIO, "%s: deflate failed", o->path);
		if (write_all(o, o->zbuf, OBUF - o->z.avail_out, err))
			return err ? err->code : TFK_EIO;
	} while (o->z.avail_out == 0 || (flush == Z_FINISH && ret != Z_STREAM_END));
	return 0;
}

static int drain(struct tfk_out *o, int flush, struct tfk_err *err)
{
	int rc;

	if (o->comp == TFK_COMP_NONE)
		rc = write_all(o, o->buf, o->len, err);
	else
		rc = deflate_some(o, o->buf, o->len, flush, err);
	o->len = 0;
	return rc;
}

int tfk_out_write(struct tfk_out *o, const void *p, size_t n,
		  struct tfk_err *err)
{
	const uint8_t *b = p;

	o->bytes += n;
	if (n >= OBUF && o->comp == TFK_COMP_NONE) {
		int rc = drain(o, Z_NO_FLUSH, err);

		return rc ? rc : write_all(o, b, n, err);
	}
	while (n) {
		size_t k = OBUF - o->len;

		if (k > n)
			k = n;
		memcpy(o->buf + o->len, b, k);
		o->len += k;
		b += k;
		n -= k;
		if (o->len == OBUF) {
			int rc = drain(o, Z_NO_FLUSH, err);

			if (rc)
				return rc;
		}
	}
	return 0;
}

int tfk_out_flush(struct tfk_out *o, struct tfk_err *err)
{
	return drain(o, o->comp == TFK_COMP_NONE ? Z_NO_FLUSH : Z_SYNC_FLUSH,
		     err);
}

int tfk_out_close(struct tfk_out *o, struct tfk_err *err)
{
	int rc;

	if (!o)
		return 0;
	rc = drain(o, Z_FINISH, err);
	if (!rc && o->tmp) {
		if (fsync(o->fd) < 0 && errno != EINVAL)
			rc = io_error(o, err, "fsync failed");
		if (!rc && close(o->fd) < 0)
			rc = io_error(o, err, "close failed");
		o->fd = -1;
		if (!rc && rename(o->tmp, o->target ? o->target : o->path) < 0)
			rc = io_error(o, err, "cannot rename temporary into place");
	}
	if (o->own_fd) {
		if (close(o->fd) < 0 && !rc)
			rc = io_error(o, err, "close failed");
		o->fd = -1;
	}
	if (o->tmp) {
		if (rc)
			unlink(o->tmp);
		tfk_cli_forget_temp(o->tmp);
	}
	free_out(o);
	return rc;
}

int tfk_out_finish(struct tfk_out *o, struct tfk_err *err)
{
	int rc = drain(o, Z_FINISH, err);

	if (!rc && o->tmp) {
		if (fsync(o->fd) < 0 && errno != EINVAL)
			rc = io_error(o, err, "fsync failed");
		if (close(o->fd) < 0 && !rc)
			rc = io_error(o, err, "close failed");
		o->fd = -1;
	}
	return rc;
}

int tfk_out_commit(struct tfk_out *o, const char *path, struct tfk_err *err)
{
	int rc = 0;

	if (o->tmp) {
		if (!path)
			path = o->target ? o->target : o->path;
		if (rename(o->tmp, path) < 0) {
			rc = tfk_errf(err, TFK_EIO, "%s: cannot rename temporary into place: %s",
				      path, strerror(errno));
			unlink(o->tmp);
		}
		tfk_cli_forget_temp(o->tmp);
	}
	free_out(o);
	return rc;
}

void tfk_out_discard(struct tfk_out *o)
{
	if (!o)
		return;
	if (o->tmp) {
		unlink(o->tmp);
		tfk_cli_forget_temp(o->tmp);
	}
	free_out(o);
}

uint64_t tfk_out_bytes(const struct tfk_out *o)
{
	return o->bytes;
}

uint64_t tfk_out_file_bytes(const struct tfk_out *o)
{
	return o->file_bytes;
}

const char *tfk_out_path(const struct tfk_out *o)
{
	return o->path;
}

int tfk_mkdirs(const char *dir, struct tfk_err *err)
{
	char *p = tfk_strdup(dir);
	struct stat st;
	int rc = 0;

	if (!p)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (char *s = p + 1; ; s++) {
		char c = *s;

		if (c != '/' && c)
			continue;
		*s = 0;
		if (mkdir(p, 0777) && errno != EEXIST) {
			rc = tfk_errf(err, TFK_EIO, "%s: cannot create: %s", p,
				      strerror(errno));
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	tfk_free(p);
	if (!rc && (stat(dir, &st) || !S_ISDIR(st.st_mode)))
		rc = tfk_errf(err, TFK_EIO, "%s: not a directory", dir);
	return rc;
}
