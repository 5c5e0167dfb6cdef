/*
 * snapshot.c - fingerprints, the snapshot store, locking and replay (see
 * snapshot.h for the layout and what a fingerprint covers).
 *
 * Completeness is one atomic rename: meta.json appears only after the
 * data is in place, so every crash before that leaves a directory that
 * readers treat as absent and gc removes. A separate marker file was
 * rejected: it would be a third file to keep consistent with the other
 * two, and the metadata must be written last anyway.
 *
 * Locks are flock(2) on a sibling DIR/<fp>.lock rather than on the
 * snapshot directory, so the directory can be removed and rebuilt under
 * the lock. Because gc unlinks lock files, a locker checks after
 * flock() that the path still names the file it locked and retries
 * otherwise (the usual pattern for removable lock files).
 *
 * SHA-256 is a plain implementation of FIPS 180-2, tested against its
 * vectors: only --hash-inputs hashes file content, so its speed is off
 * the critical path, and a crypto library was not linked for one hash.
 */
#include "io/snapshot.h"
#include "io/crc32c.h"
#include "io/out.h"
#include "util/alloc.h"
#include "util/buf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* SHA-256 (FIPS 180-2) --------------------------------------------- */

static const uint32_t K256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, k, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^
			      (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^
			      (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0], b = h[1], c = h[2], d = h[3];
	e = h[4], f = h[5], g = h[6], k = h[7];
	for (i = 0; i < 64; i++) {
		t1 = k + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
		     ((e & f) ^ (~e & g)) + K256[i] + w[i];
		t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) +
		     ((a & b) ^ (a & c) ^ (b & c));
		k = g, g = f, f = e, e = d + t1;
		d = c, c = b, b = a, a = t1 + t2;
	}
	h[0] += a, h[1] += b, h[2] += c, h[3] += d;
	h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void tfk_sha256_init(struct tfk_sha256 *s)
{
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
	};

	memcpy(s->h, h0, sizeof(h0));
	s->n = 0;
}

void tfk_sha256_update(struct tfk_sha256 *s, const void *data, size_t n)
{
	const uint8_t *p = data;
	size_t have = s->n % 64;

	s->n += n;
	if (have) {
		size_t k = 64 - have < n ? 64 - have : n;

		memcpy(s->buf + have, p, k);
		p += k;
		n -= k;
		if (have + k < 64)
			return;
		sha256_block(s->h, s->buf);
	}
	for (; n >= 64; p += 64, n -= 64)
		sha256_block(s->h, p);
	if (n)
		memcpy(s->buf, p, n);
}

void tfk_sha256_final(struct tfk_sha256 *s, uint8_t out[32])
{
	uint64_t bits = s->n * 8;
	size_t have = s->n % 64;
	int i;

	s->buf[have++] = 0x80;
	if (have > 56) {
		memset(s->buf + have, 0, 64 - have);
		sha256_block(s->h, s->buf);
		have = 0;
	}
	memset(s->buf + have, 0, 56 - have);
	for (i = 0; i < 8; i++)
		s->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_block(s->h, s->buf);
	for (i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(s->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)s->h[i];
	}
}

void tfk_sha256(const void *p, size_t n, uint8_t out[32])
{
	struct tfk_sha256 s;

	tfk_sha256_init(&s);
	tfk_sha256_update(&s, p, n);
	tfk_sha256_final(&s, out);
}

void tfk_sha256_hex(const uint8_t d[32], char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 32; i++) {
		hex[2 * i] = digits[d[i] >> 4];
		hex[2 * i + 1] = digits[d[i] & 15];
	}
	hex[64] = 0;
}

int tfk_sha256_file(const char *path, uint8_t out[32], struct tfk_err *err)
{
	struct tfk_sha256 s;
	uint8_t *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t k;

	if (fd < 0)
		return tfk_errf(err, TFK_EIO, "%s: cannot open: %s", path,
				strerror(errno));
	buf = tfk_malloc(1 << 20);
	if (!buf) {
		close(fd);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	tfk_sha256_init(&s);
	while ((k = read(fd, buf, 1 << 20)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = errno;

			tfk_free(buf);
			close(fd);
			return tfk_errf(err, TFK_EIO, "%s: read failed: %s",
					path, strerror(e));
		}
		tfk_sha256_update(&s, buf, (size_t)k);
	}
	tfk_free(buf);
	close(fd);
	tfk_sha256_final(&s, out);
	return 0;
}

/* Framing follower --------------------------------------------------- */

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

void tfk_snap_frame_init(struct tfk_snap_frame *f)
{
	memset(f, 0, sizeof(*f));
}

static int frame_bad(struct tfk_snap_frame *f, const char *what,
		     struct tfk_err *err)
{
	f->bad = 1;
	tfk_errf(&f->err, TFK_ECORRUPT, "record %" PRIu64 " at byte %" PRIu64
		 ": %s", f->records, f->rec_off, what);
	if (err)
		*err = f->err;
	return TFK_ECORRUPT;
}

int tfk_snap_frame_feed(struct tfk_snap_frame *f, const void *data, size_t n,
			struct tfk_err *err)
{
	const uint8_t *p = data;

	if (f->bad) {
		if (err)
			*err = f->err;
		return f->err.code;
	}
	while (n) {
		size_t k;

		if (f->state == 0) {
			if (f->n_hdr == 0)
				f->rec_off = f->off;
			k = 12 - f->n_hdr < n ? 12 - f->n_hdr : n;
			memcpy(f->hdr + f->n_hdr, p, k);
			f->n_hdr += k;
			if (f->n_hdr == 12) {
				if (tfk_crc32c_mask(tfk_crc32c(f->hdr, 8)) !=
				    le32(f->hdr + 8))
					return frame_bad(f, "length crc mismatch",
							 err);
				f->left = le64(f->hdr);
				f->crc = 0;
				f->n_ftr = 0;
				f->state = 1;
			}
		} else if (f->state == 1) {
			k = f->left < n ? (size_t)f->left : n;
			f->crc = tfk_crc32c_extend(f->crc, p, k);
			f->left -= k;
		} else {
			k = 4 - f->n_ftr < n ? 4 - f->n_ftr : n;
			memcpy(f->ftr + f->n_ftr, p, k);
			f->n_ftr += k;
			if (f->n_ftr == 4) {
				if (tfk_crc32c_mask(f->crc) != le32(f->ftr))
					return frame_bad(f, "data crc mismatch",
							 err);
				f->records++;
				f->n_hdr = 0;
				f->state = 0;
			}
		}
		if (f->state == 1 && f->left == 0)
			f->state = 2;
		p += k;
		n -= k;
		f->off += k;
	}
	return 0;
}

int tfk_snap_frame_end(const struct tfk_snap_frame *f, struct tfk_err *err)
{
	if (f->bad) {
		if (err)
			*err = f->err;
		return f->err.code;
	}
	if (f->state == 0 && f->n_hdr == 0)
		return 0;
	return tfk_errf(err, TFK_ETRUNC, "record %" PRIu64 " at byte %" PRIu64
			": stream ends inside the record (%" PRIu64 " bytes of it)",
			f->records, f->rec_off, f->off - f->rec_off);
}

/* Fingerprint -------------------------------------------------------- */

struct inputs {
	struct tfk_snap_input *v;
	size_t n, cap;
	int oom;
};

static void add_input(struct inputs *in, const char *path)
{
	struct stat st;
	char *real;

	if (in->oom || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	real = realpath(path, NULL);
	if (!real)
		return;
	if (in->n == in->cap) {
		size_t cap = in->cap ? 2 * in->cap : 16;
		void *v = tfk_realloc(in->v, cap * sizeof(*in->v));

		if (!v) {
			free(real);
			in->oom = 1;
			return;
		}
		in->v = v;
		in->cap = cap;
	}
	in->v[in->n].path = tfk_strdup(real);
	free(real);
	if (!in->v[in->n].path) {
		in->oom = 1;
		return;
	}
	in->v[in->n].size = (uint64_t)st.st_size;
	in->v[in->n].mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
				st.st_mtim.tv_nsec;
	memset(in->v[in->n].sha256, 0, 32);
	in->n++;
}

/* A word as given, its "--name=VALUE" value, and its glob expansion. */
static void add_word(struct inputs *in, const char *w)
{
	const char *eq = w[0] == '-' ? strchr(w, '=') : NULL;

	if (!*w)
		return;
	add_input(in, w);
	if (eq && eq[1])
		add_input(in, eq + 1);
	if (strpbrk(w, "*?[")) {
		glob_t g;
		size_t i;

		if (glob(w, GLOB_NOSORT, NULL, &g) == 0)
			for (i = 0; i < g.gl_pathc; i++)
				add_input(in, g.gl_pathv[i]);
		globfree(&g);
	}
}

/* The words of a shell script, roughly: split at blanks and shell
 * punctuation, quotes dropped. Enough to find file names in
 * `sh -c 'tfk-cat a.tfrecord | tfk-map prep.json'`; a name the split
 * misses only makes the fingerprint blind to that file. The word after
 * '>' is an output the script writes (a log, a counter), not an input:
 * fingerprinting it would change the fingerprint on every run. */
static void add_script_words(struct inputs *in, const char *s)
{
	char *w = tfk_malloc(strlen(s) + 1);
	size_t n = 0;
	int redirect = 0;

	if (!w) {
		in->oom = 1;
		return;
	}
	for (;; s++) {
		if (!*s || strchr(" \t\n|;&<>()`$", *s)) {
			w[n] = 0;
			if (n && !redirect)
				add_word(in, w);
			if (n)
				redirect = 0;
			if (*s == '>')
				redirect = 1;
			n = 0;
			if (!*s)
				break;
		} else if (*s != '\'' && *s != '"' && *s != '\\') {
			w[n++] = *s;
		}
	}
	tfk_free(w);
}

static struct inputs *walk_in;

static int walk_one(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	if (type == FTW_F && S_ISREG(st->st_mode))
		add_input(walk_in, path);
	return walk_in->oom;
}

static int cmp_input(const void *a, const void *b)
{
	return strcmp(((const struct tfk_snap_input *)a)->path,
		      ((const struct tfk_snap_input *)b)->path);
}

static void hash_u64(struct tfk_sha256 *s, uint64_t v)
{
	uint8_t b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	tfk_sha256_update(s, b, 8);
}

static void hash_bytes(struct tfk_sha256 *s, const char *p)
{
	size_t n = strlen(p);

	hash_u64(s, n);
	tfk_sha256_update(s, p, n);
}

int tfk_snap_fingerprint(struct tfk_snap_fp *fp, int argc,
			 char *const argv[], const char *const *extra,
			 size_t n_extra, int flags, struct tfk_err *err)
{
	struct inputs in = { 0 };
	struct tfk_sha256 s;
	uint8_t d[32];
	size_t i, j;
	int k;

	memset(fp, 0, sizeof(*fp));
	fp->flags = flags;
	for (k = 0; k < argc; k++) {
		add_word(&in, argv[k]);
		if (strpbrk(argv[k], " \t\n|;&<>()`$'\""))
			add_script_words(&in, argv[k]);
	}
	for (i = 0; i < n_extra && !in.oom; i++) {
		struct stat st;

		if (stat(extra[i], &st) < 0) {
			fp->in = in.v;
			fp->n_in = in.n;
			return tfk_errf(err, TFK_ENOTFOUND, "%s: %s", extra[i],
					strerror(errno));
		}
		if (S_ISDIR(st.st_mode)) {
			walk_in = &in;
			nftw(extra[i], walk_one, 16, FTW_PHYS);
		} else {
			add_input(&in, extra[i]);
		}
	}
	fp->in = in.v;
	fp->n_in = in.n;
	if (in.oom)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (in.n)
		qsort(in.v, in.n, sizeof(*in.v), cmp_input);
	for (i = j = 0; i < in.n; i++) {
		if (j && !strcmp(in.v[j - 1].path, in.v[i].path)) {
			tfk_free(in.v[i].path);
			continue;
		}
		in.v[j++] = in.v[i];
	}
	fp->n_in = j;

	tfk_sha256_init(&s);
	tfk_sha256_update(&s, "tfk-snapshot 1\n", 15);
	tfk_sha256_update(&s, TFK_VERSION "\n", strlen(TFK_VERSION) + 1);
	hash_u64(&s, (uint64_t)argc);
	for (k = 0; k < argc; k++)
		hash_bytes(&s, argv[k]);
	hash_u64(&s, fp->n_in);
	for (i = 0; i < fp->n_in; i++) {
		struct tfk_snap_input *x = &fp->in[i];

		hash_bytes(&s, x->path);
		hash_u64(&s, x->size);
		if (flags & TFK_SNAP_HASH_INPUTS) {
			int rc = tfk_sha256_file(x->path, x->sha256, err);

			if (rc)
				return rc;
			tfk_sha256_update(&s, "H", 1);
			tfk_sha256_update(&s, x->sha256, 32);
		} else {
			tfk_sha256_update(&s, "S", 1);
			hash_u64(&s, (uint64_t)x->mtime_ns);
		}
	}
	tfk_sha256_final(&s, d);
	tfk_sha256_hex(d, fp->hex);
	return 0;
}

void tfk_snap_fp_release(struct tfk_snap_fp *fp)
{
	size_t i;

	if (!fp)
		return;
	for (i = 0; i < fp->n_in; i++)
		tfk_free(fp->in[i].path);
	tfk_free(fp->in);
	fp->in = NULL;
	fp->n_in = 0;
}

/* Store -------------------------------------------------------------- */

static char *path_of(const char *dir, const char *fp, const char *leaf)
{
	size_t n = strlen(dir) + strlen(fp) + (leaf ? strlen(leaf) : 0) + 8;
	char *p = tfk_malloc(n);

	if (p)
		snprintf(p, n, "%s/%s%s%s", dir, fp, leaf && *leaf != '.' ?
			 "/" : "", leaf ? leaf : "");
	return p;
}

int tfk_snap_lock(const char *dir, const char *fp, int exclusive, int wait,
		  int *fdp, struct tfk_err *err)
{
	char *path = path_of(dir, fp, ".lock");
	int op = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB);

	if (!path)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (;;) {
		struct stat a, b;
		int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
		int e;

		if (fd < 0) {
			e = errno;
			tfk_errf(err, TFK_EIO, "%s: cannot open: %s", path,
				 strerror(e));
			tfk_free(path);
			return TFK_EIO;
		}
		while (flock(fd, op) < 0) {
			e = errno;
			if (e == EINTR)
				continue;
			close(fd);
			if (e == EWOULDBLOCK) {
				tfk_free(path);
				return 0;
			}
			tfk_errf(err, TFK_EIO, "%s: cannot lock: %s", path,
				 strerror(e));
			tfk_free(path);
			return TFK_EIO;
		}
		/* Still the file at path? A gc may have unlinked it. */
		if (fstat(fd, &a) == 0 && stat(path, &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
			*fdp = fd;
			tfk_free(path);
			return 1;
		}
		close(fd);
	}
}

void tfk_snap_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

int tfk_snap_complete(const char *dir, const char *fp)
{
	char *p = path_of(dir, fp, "meta.json");
	struct stat st;
	int ok;

	if (!p)
		return 0;
	ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);
	tfk_free(p);
	return ok;
}

/* Remove dir/fp/ and what it holds (files only: the store makes no
 * deeper directories). */
static int remove_tree(const char *path, struct tfk_err *err)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		if (errno == ENOENT)
			return 0;
		if (errno == ENOTDIR && unlink(path) == 0)
			return 0;
		return tfk_errf(err, TFK_EIO, "%s: cannot open: %s", path,
				strerror(errno));
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) < 0 && errno != ENOENT &&
		    !rc)
			rc = tfk_errf(err, TFK_EIO, "%s/%s: cannot remove: %s",
				      path, e->d_name, strerror(errno));
	}
	closedir(d);
	if (rmdir(path) < 0 && errno != ENOENT && !rc)
		rc = tfk_errf(err, TFK_EIO, "%s: cannot remove: %s", path,
			      strerror(errno));
	return rc;
}

static int read_small(const char *path, char **out, size_t *n,
		      struct tfk_err *err)
{
	struct tfk_buf b;
	char chunk[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t k;

	if (fd < 0)
		return tfk_errf(err, errno == ENOENT ? TFK_ENOTFOUND : TFK_EIO,
				"%s: cannot open: %s", path, strerror(errno));
	tfk_buf_init(&b);
	while ((k = read(fd, chunk, sizeof(chunk))) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 || b.len > (1u << 24)) {
			int e = k < 0 ? errno : EFBIG;

			close(fd);
			tfk_buf_release(&b);
			return tfk_errf(err, TFK_EIO, "%s: read failed: %s",
					path, strerror(e));
		}
		tfk_buf_add(&b, chunk, (size_t)k);
	}
	close(fd);
	tfk_buf_addc(&b, 0);
	if (!tfk_buf_ok(&b)) {
		tfk_buf_release(&b);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	*out = (char *)b.data;
	*n = b.len - 1;
	return 0;
}

int tfk_snap_meta_parse(const char *name, const void *p, size_t n,
			uint64_t *bytes, uint64_t *records, int64_t *created,
			char **command, struct tfk_err *err)
{
	json_error_t je;
	json_t *root = json_loadb(p, n, JSON_REJECT_DUPLICATES, &je);
	json_t *b, *r, *c, *cmd;
	int rc = 0;

	if (command)
		*command = NULL;
	if (!root)
		return tfk_errf(err, TFK_ECORRUPT, "%s: line %d: %s", name,
				je.line, je.text);
	b = json_object_get(root, "bytes");
	r = json_object_get(root, "records");
	c = json_object_get(root, "created");
	cmd = json_object_get(root, "command");
	if (!json_is_object(root) || !json_is_integer(b) ||
	    json_integer_value(b) < 0 || !json_is_integer(r) ||
	    json_integer_value(r) < 0) {
		json_decref(root);
		return tfk_errf(err, TFK_ECORRUPT, "%s: \"bytes\" and "
				"\"records\" must be non-negative integers",
				name);
	}
	*bytes = (uint64_t)json_integer_value(b);
	*records = (uint64_t)json_integer_value(r);
	*created = json_is_integer(c) ? json_integer_value(c) : 0;
	if (command && json_is_array(cmd)) {
		struct tfk_buf s;
		size_t i;

		tfk_buf_init(&s);
		for (i = 0; i < json_array_size(cmd); i++) {
			const char *a = json_string_value(json_array_get(cmd, i));

			if (i)
				tfk_buf_addc(&s, ' ');
			tfk_buf_adds(&s, a ? a : "?");
		}
		tfk_buf_addc(&s, 0);
		if (!tfk_buf_ok(&s)) {
			tfk_buf_release(&s);
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		} else {
			*command = (char *)s.data;
		}
	}
	json_decref(root);
	return rc;
}

static int copy_fd(int in, int out, uint64_t n, struct tfk_err *err,
		   const char *path)
{
	char *buf = NULL;

	while (n) {
		size_t want = n > (1u << 30) ? 1u << 30 : (size_t)n;
		ssize_t k = buf ? read(in, buf, want < (1u << 20) ?
				       want : 1u << 20) :
				  sendfile(out, in, NULL, want);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && !buf && (errno == EINVAL || errno == ENOSYS)) {
			buf = tfk_malloc(1 << 20);
			if (!buf)
				return tfk_errf(err, TFK_ENOMEM,
						"out of memory");
			continue;
		}
		if (k < 0) {
			int e = errno;

			/* sendfile's errors are mostly the pipe's (EPIPE). */
			tfk_errf(err, TFK_EIO, "%s: %s", buf ? path :
				 "<stdout>", strerror(e));
			tfk_free(buf);
			errno = e;
			return TFK_EIO;
		}
		if (k == 0) {
			tfk_free(buf);
			return tfk_errf(err, TFK_ECORRUPT, "%s: shorter than "
					"its meta.json says", path);
		}
		if (buf) {
			char *q = buf;
			size_t m = (size_t)k;

			while (m) {
				ssize_t w = write(out, q, m);

				if (w < 0 && errno == EINTR)
					continue;
				if (w < 0) {
					int e = errno;

					tfk_free(buf);
					errno = e;
					return tfk_errf(err, TFK_EIO,
							"<stdout>: %s",
							strerror(e));
				}
				q += w;
				m -= (size_t)w;
			}
		}
		n -= (uint64_t)k;
	}
	tfk_free(buf);
	return 0;
}

int tfk_snap_replay(const char *dir, const char *fp, int fd,
		    uint64_t *records, struct tfk_err *err)
{
	char *meta = path_of(dir, fp, "meta.json");
	char *data = path_of(dir, fp, "data.tfrecord");
	char *text = NULL;
	size_t n;
	uint64_t bytes, recs;
	int64_t created;
	struct stat st;
	int in = -1, rc;

	if (!meta || !data) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto out;
	}
	rc = read_small(meta, &text, &n, err);
	if (rc)
		goto out;
	rc = tfk_snap_meta_parse(meta, text, n, &bytes, &recs, &created, NULL,
				 err);
	if (rc)
		goto out;
	in = open(data, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) < 0) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: cannot open: %s", data,
			      strerror(errno));
		goto out;
	}
	if ((uint64_t)st.st_size != bytes) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: %" PRIu64 " bytes, but "
			      "meta.json says %" PRIu64, data,
			      (uint64_t)st.st_size, bytes);
		goto out;
	}
	rc = copy_fd(in, fd, bytes, err, data);
	if (!rc && records)
		*records = recs;
out:
	if (in >= 0) {
		int e = errno;

		close(in);
		errno = e;
	}
	tfk_free(text);
	tfk_free(meta);
	tfk_free(data);
	return rc;
}

struct tfk_snap_writer {
	char *dir;
	char *path;		/* dir/fp */
	const struct tfk_snap_fp *fp;
	struct tfk_out *data;
	struct tfk_snap_frame frame;
};

static void free_writer(struct tfk_snap_writer *w)
{
	tfk_free(w->dir);
	tfk_free(w->path);
	tfk_free(w);
}

int tfk_snap_begin(struct tfk_snap_writer **wp, const char *dir,
		   const struct tfk_snap_fp *fp, struct tfk_err *err)
{
	struct tfk_snap_writer *w = tfk_calloc(1, sizeof(*w));
	char *data;
	int rc;

	if (!w || !(w->dir = tfk_strdup(dir)) ||
	    !(w->path = path_of(dir, fp->hex, NULL))) {
		if (w)
			free_writer(w);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	w->fp = fp;
	tfk_snap_frame_init(&w->frame);
	rc = remove_tree(w->path, err);
	if (!rc && mkdir(w->path, 0777) < 0)
		rc = tfk_errf(err, TFK_EIO, "%s: cannot create: %s", w->path,
			      strerror(errno));
	if (rc) {
		free_writer(w);
		return rc;
	}
	data = path_of(dir, fp->hex, "data.tfrecord");
	rc = data ? tfk_out_open(&w->data, data, TFK_COMP_NONE, err) :
		    tfk_errf(err, TFK_ENOMEM, "out of memory");
	tfk_free(data);
	if (rc) {
		remove_tree(w->path, NULL);
		free_writer(w);
		return rc;
	}
	*wp = w;
	return 0;
}

int tfk_snap_write(struct tfk_snap_writer *w, const void *p, size_t n,
		   struct tfk_err *err)
{
	int rc = tfk_snap_frame_feed(&w->frame, p, n, err);

	return rc ? rc : tfk_out_write(w->data, p, n, err);
}

uint64_t tfk_snap_records(const struct tfk_snap_writer *w)
{
	return w->frame.records;
}

uint64_t tfk_snap_bytes(const struct tfk_snap_writer *w)
{
	return w->frame.off;
}

void tfk_snap_abort(struct tfk_snap_writer *w)
{
	if (!w)
		return;
	tfk_out_discard(w->data);
	remove_tree(w->path, NULL);
	free_writer(w);
}

/* JSON string of s, with bytes that are not UTF-8 shown as '?' (argv
 * and paths are bytes; meta.json must stay valid JSON). */
static void add_str(struct tfk_buf *b, const char *s)
{
	size_t n = strlen(s), i;
	char *t;

	if (tfk_utf8_valid((const uint8_t *)s, n)) {
		tfk_buf_add_json_str(b, s, n);
		return;
	}
	t = tfk_strdup(s);
	if (!t) {
		b->oom = 1;
		return;
	}
	for (i = 0; i < n; i++)
		if ((unsigned char)t[i] >= 0x80)
			t[i] = '?';
	tfk_buf_add_json_str(b, t, n);
	tfk_free(t);
}

int tfk_snap_commit(struct tfk_snap_writer *w, int argc, char *const argv[],
		    double seconds, struct tfk_err *err)
{
	const struct tfk_snap_fp *fp = w->fp;
	struct tfk_out *meta = NULL;
	struct tfk_buf b;
	char *cwd, *path;
	size_t i;
	int k, rc;

	rc = tfk_snap_frame_end(&w->frame, err);
	if (!rc) {
		rc = tfk_out_close(w->data, err);
		w->data = NULL;
	}
	if (rc) {
		tfk_snap_abort(w);
		return rc;
	}
	tfk_buf_init(&b);
	tfk_buf_adds(&b, "{\"fingerprint\":\"");
	tfk_buf_adds(&b, fp->hex);
	tfk_buf_adds(&b, "\",\"version\":\"" TFK_VERSION "\",\"command\":[");
	for (k = 0; k < argc; k++) {
		if (k)
			tfk_buf_addc(&b, ',');
		add_str(&b, argv[k]);
	}
	tfk_buf_adds(&b, "],\"cwd\":");
	cwd = getcwd(NULL, 0);
	if (cwd)
		add_str(&b, cwd);
	else
		tfk_buf_adds(&b, "null");
	free(cwd);
	tfk_buf_addf(&b, ",\"created\":%lld,\"seconds\":%.3f,\"records\":%"
		     PRIu64 ",\"bytes\":%" PRIu64 ",\"hash_inputs\":%s,"
		     "\"inputs\":[", (long long)time(NULL), seconds,
		     w->frame.records, w->frame.off,
		     fp->flags & TFK_SNAP_HASH_INPUTS ? "true" : "false");
	for (i = 0; i < fp->n_in; i++) {
		const struct tfk_snap_input *x = &fp->in[i];

		tfk_buf_adds(&b, i ? ",{\"path\":" : "{\"path\":");
		add_str(&b, x->path);
		tfk_buf_addf(&b, ",\"size\":%" PRIu64, x->size);
		if (fp->flags & TFK_SNAP_HASH_INPUTS) {
			char hex[65];

			tfk_sha256_hex(x->sha256, hex);
			tfk_buf_addf(&b, ",\"sha256\":\"%s\"}", hex);
		} else {
			tfk_buf_addf(&b, ",\"mtime_ns\":%" PRId64 "}",
				     x->mtime_ns);
		}
	}
	tfk_buf_adds(&b, "]}\n");
	path = path_of(w->dir, fp->hex, "meta.json");
	if (!tfk_buf_ok(&b) || !path) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
	} else {
		rc = tfk_out_open(&meta, path, TFK_COMP_NONE, err);
		if (!rc)
			rc = tfk_out_write(meta, b.data, b.len, err);
		if (!rc)
			rc = tfk_out_close(meta, err);
		else
			tfk_out_discard(meta);
	}
	tfk_free(path);
	tfk_buf_release(&b);
	if (rc)
		tfk_snap_abort(w);
	else
		free_writer(w);
	return rc;
}

/* Listing and removal ----------------------------------------------- */

static int is_fp(const char *s)
{
	int i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[64] == 0;
}

static uint64_t tree_bytes(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	uint64_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct stat st;

		if (strcmp(e->d_name, "meta.json") &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode))
			n += (uint64_t)st.st_size;
	}
	closedir(d);
	return n;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct tfk_snap_entry *x = a, *y = b;

	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? 1 : -1;
	return strcmp(x->fp, y->fp);
}

int tfk_snap_list(const char *dir, struct tfk_snap_entry **ep, size_t *np,
		  struct tfk_err *err)
{
	struct tfk_snap_entry *v = NULL;
	size_t n = 0, cap = 0;
	DIR *d = opendir(dir);
	struct dirent *de;

	*ep = NULL;
	*np = 0;
	if (!d) {
		if (errno == ENOENT)
			return 0;
		return tfk_errf(err, TFK_EIO, "%s: cannot open: %s", dir,
				strerror(errno));
	}
	while ((de = readdir(d))) {
		struct tfk_snap_entry *x;
		struct stat st;
		char *path, *text = NULL;
		size_t len;
		int fd;

		char name[65];
		size_t nl = strlen(de->d_name);
		int has_dir;

		if (nl == 69 && !strcmp(de->d_name + 64, ".lock")) {
			/* Listed here only when its directory is missing. */
			memcpy(name, de->d_name, 64);
			name[64] = 0;
			if (!is_fp(name) ||
			    fstatat(dirfd(d), name, &st, 0) == 0)
				continue;
			if (fstatat(dirfd(d), de->d_name, &st, 0) < 0)
				continue;
			has_dir = 0;
		} else {
			if (!is_fp(de->d_name))
				continue;
			if (fstatat(dirfd(d), de->d_name, &st, 0) < 0 ||
			    !S_ISDIR(st.st_mode))
				continue;
			memcpy(name, de->d_name, 65);
			has_dir = 1;
		}
		if (n == cap) {
			size_t c2 = cap ? 2 * cap : 16;
			void *nv = tfk_realloc(v, c2 * sizeof(*v));

			if (!nv)
				goto oom;
			v = nv;
			cap = c2;
		}
		x = &v[n++];
		memset(x, 0, sizeof(*x));
		memcpy(x->fp, name, 65);
		x->has_dir = has_dir;
		x->created = st.st_mtim.tv_sec;
		x->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
			      st.st_mtim.tv_nsec;
		path = path_of(dir, x->fp, NULL);
		if (!path)
			goto oom;
		x->bytes = has_dir ? tree_bytes(path) : 0;
		tfk_free(path);
		path = path_of(dir, x->fp, "meta.json");
		if (!path)
			goto oom;
		if (has_dir && read_small(path, &text, &len, NULL) == 0) {
			uint64_t b, r;
			int64_t c;

			if (tfk_snap_meta_parse(path, text, len, &b, &r, &c,
						&x->command, NULL) == 0) {
				x->complete = 1;
				x->records = r;
				x->created = c;
				if (stat(path, &st) == 0)
					x->mtime_ns = (int64_t)st.st_mtim.tv_sec *
						      1000000000 +
						      st.st_mtim.tv_nsec;
			}
			tfk_free(text);
		}
		tfk_free(path);
		path = path_of(dir, x->fp, ".lock");
		if (!path)
			goto oom;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0 &&
		    errno == EWOULDBLOCK)
			x->locked = 1;
		if (fd >= 0)
			close(fd);
		tfk_free(path);
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_entry);
	*ep = v;
	*np = n;
	return 0;
oom:
	closedir(d);
	tfk_snap_list_free(v, n);
	return tfk_errf(err, TFK_ENOMEM, "out of memory");
}

void tfk_snap_list_free(struct tfk_snap_entry *e, size_t n)
{
	size_t i;

	for (i = 0; e && i < n; i++)
		tfk_free(e[i].command);
	tfk_free(e);
}

int tfk_snap_remove(const char *dir, const char *fp, struct tfk_err *err)
{
	char *path, *lock;
	int fd, rc;

	rc = tfk_snap_lock(dir, fp, 1, 0, &fd, err);
	if (rc <= 0)
		return rc;
	path = path_of(dir, fp, NULL);
	lock = path_of(dir, fp, ".lock");
	if (!path || !lock) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
	} else {
		/* meta.json first: from here on nobody replays it. */
		char *meta = path_of(dir, fp, "meta.json");

		if (meta)
			unlink(meta);
		tfk_free(meta);
		rc = remove_tree(path, err);
		if (!rc) {
			unlink(lock);
			rc = 1;
		}
	}
	tfk_snap_unlock(fd);
	tfk_free(path);
	tfk_free(lock);
	return rc;
}
