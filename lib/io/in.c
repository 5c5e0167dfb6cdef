/*
 * in.c - buffered or inflated input (see in.h).
 *
 * One window abstraction over two sources keeps the record reader
 * ignorant of where bytes come from. Regular files are read(2) into the
 * same buffer as pipes. mmap was tried first, to save read's copy, and
 * rejected on measurement: scanning a 1 GiB file in page cache with the
 * CRC ran at ~2 GB/s mapped against ~8 GB/s through a reused buffer
 * (page faults, and TLB misses on 4 KiB pages, are dear, worst in a
 * VM), while the copy lands in cache where the CRC reads it. Nor can a
 * buffer raise SIGBUS when another process truncates the file.
 *
 * Read-ahead, for one pass over a large file (tfk-count, tfk-filter):
 * a thread read(2)s up to three chunks ahead into a ring of buffers
 * while the caller works through this one, so the kernel's copy and the
 * caller's crcs run at once instead of in turn. A ring rather than two
 * buffers: on a busy machine the thread gets the cpu in slices, and
 * with one chunk ahead the caller slept at nearly every chunk. A chunk's leftover (the head of
 * a record it splits) is copied into the slack before the next chunk,
 * at most RA_SLACK bytes; a longer request, a seek or any failure to
 * start hands the window back to the plain path above, which owns
 * growing buffers. The thread only reads; the caller never waits
 * except for a chunk not read yet.
 */
#include "io/in.h"
#include "util/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define CHUNK (1u << 20)
#define SNIFF 12
#define RA_SLACK (CHUNK / 4)	/* room for a record's head before a chunk */
#define RA_MIN (8 * (uint64_t)CHUNK)	/* smaller files: no thread */

/* Read-ahead (tfk_in_set_readahead): one thread reads chunks ahead
 * into a ring of buffers; the reader works in one of them. */
#define RA_BUFS 4
struct ra {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint8_t *b[RA_BUFS];	/* each RA_SLACK + CHUNK bytes */
	ssize_t got[RA_BUFS];	/* bytes read into b[i], -1: error */
	int errnum[RA_BUFS];
	int cur;		/* the one in->buf is */
	int filled;		/* read and waiting after cur */
	int stopped;		/* the thread read its last (end, error) */
	int quit;
	int fd;
};

struct tfk_in {
	char *path;
	int fd;
	int comp;
	uint64_t size;		/* regular plain file size, else UINT64_MAX */
	/* window over decoded data: buf[pos..end) */
	uint8_t *buf;
	size_t cap, pos, end;
	uint64_t off;		/* stream offset of the current position */
	int eof;
	/* compressed input */
	z_stream z;
	int z_live;
	int z_member_done;
	uint8_t *zbuf;
	size_t zcap;
	int raw_eof;
	uint64_t raw_off;	/* compressed bytes consumed from the file */
	int ra_ok;		/* read-ahead asked for and possible */
	struct ra *ra;		/* running, or NULL */
};

int tfk_comp_parse(const char *s)
{
	if (!s || !*s || !strcasecmp(s, "none"))
		return TFK_COMP_NONE;
	if (!strcasecmp(s, "gzip"))
		return TFK_COMP_GZIP;
	if (!strcasecmp(s, "zlib"))
		return TFK_COMP_ZLIB;
	if (!strcasecmp(s, "auto"))
		return TFK_COMP_AUTO;
	return -2;
}

const char *tfk_comp_name(int comp)
{
	switch (comp) {
	case TFK_COMP_GZIP: return "gzip";
	case TFK_COMP_ZLIB: return "zlib";
	case TFK_COMP_AUTO: return "auto";
	}
	return "none";
}

static int detect(const uint8_t *p, size_t n,
		  int (*sniff)(const uint8_t *, size_t))
{
	if (n == 0 || (sniff && sniff(p, n)))
		return TFK_COMP_NONE;
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return TFK_COMP_GZIP;
	if (n >= 2 && (p[0] & 0x0f) == 8 && (p[0] >> 4) <= 7 &&
	    ((unsigned)p[0] << 8 | p[1]) % 31 == 0)
		return TFK_COMP_ZLIB;
	return TFK_COMP_NONE;
}

static ssize_t read_full(int fd, uint8_t *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = read(fd, p + got, n - got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		if (k == 0)
			break;
		got += (size_t)k;
		/* A pipe delivers in pieces: return what we have rather
		 * than block for a full chunk when the caller needs less. */
		if (got >= SNIFF && n > SNIFF)
			break;
	}
	return (ssize_t)got;
}

static int io_error(struct tfk_in *in, struct tfk_err *err, const char *what)
{
	return tfk_errf(err, TFK_EIO, "%s: %s: %s", in->path, what,
			strerror(errno));
}

static int start_inflate(struct tfk_in *in, struct tfk_err *err)
{
	int bits = in->comp == TFK_COMP_GZIP ? 15 + 16 : 15;

	if (inflateInit2(&in->z, bits) != Z_OK)
		return tfk_errf(err, TFK_ENOMEM, "%s: cannot start inflate",
				in->path);
	in->z_live = 1;
	return 0;
}

static int ra_stop(struct tfk_in *in, int keep);

int tfk_in_open(struct tfk_in **inp, const char *path, int comp,
		int (*sniff)(const uint8_t *p, size_t n), struct tfk_err *err)
{
	struct tfk_in *in;
	struct stat st;
	uint8_t head[SNIFF];
	ssize_t nhead = 0;
	size_t bufsize = CHUNK;
	int stdin_ = !path || !strcmp(path, "-");

	*inp = NULL;
	in = tfk_calloc(1, sizeof(*in));
	if (!in)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	in->path = tfk_strdup(stdin_ ? "<stdin>" : path);
	in->fd = -1;
	in->size = UINT64_MAX;
	if (!in->path) {
		tfk_in_close(in);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	in->fd = stdin_ ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		int rc = io_error(in, err, "cannot open");

		tfk_in_close(in);
		return rc;
	}
	if (fstat(in->fd, &st) < 0) {
		int rc = io_error(in, err, "cannot stat");

		tfk_in_close(in);
		return rc;
	}
	if (S_ISDIR(st.st_mode)) {
		tfk_in_close(in);
		return tfk_errf(err, TFK_EIO, "%s: is a directory",
				stdin_ ? "<stdin>" : path);
	}

	if (S_ISREG(st.st_mode)) {
		/* stdin may be a file already read from: start where it is. */
		off_t base = lseek(in->fd, 0, SEEK_CUR);

		if (base < 0 || base > st.st_size)
			base = 0;
		st.st_size -= base;
		/* Small files get small buffers: tools that open thousands
		 * of files (and the fuzzers) should not pay 1 MiB each. */
		if (st.st_size < (off_t)CHUNK)
			bufsize = (size_t)st.st_size < 4096 ? 4096 :
				  (size_t)st.st_size + 1;
		nhead = pread(in->fd, head, SNIFF, base);
		if (nhead < 0) {
			int rc = io_error(in, err, "cannot read");

			tfk_in_close(in);
			return rc;
		}
		in->comp = comp == TFK_COMP_AUTO ?
			   detect(head, (size_t)nhead, sniff) : comp;
		if (in->comp == TFK_COMP_NONE)
			in->size = (uint64_t)st.st_size;
		nhead = 0;	/* the stream path rereads from the start */
	} else {
		nhead = 0;
		if (comp == TFK_COMP_AUTO) {
			nhead = read_full(in->fd, head, SNIFF);
			if (nhead < 0) {
				int rc = io_error(in, err, "cannot read");

				tfk_in_close(in);
				return rc;
			}
		}
		in->comp = comp == TFK_COMP_AUTO ?
			   detect(head, (size_t)nhead, sniff) : comp;
	}

	in->cap = bufsize;
	in->buf = tfk_malloc(in->cap);
	if (!in->buf) {
		tfk_in_close(in);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	if (in->comp == TFK_COMP_NONE) {
		memcpy(in->buf, head, (size_t)nhead);
		in->end = (size_t)nhead;
	} else {
		int rc;

		in->zcap = bufsize;
		in->zbuf = tfk_malloc(in->zcap);
		if (!in->zbuf) {
			tfk_in_close(in);
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		}
		memcpy(in->zbuf, head, (size_t)nhead);
		rc = start_inflate(in, err);
		if (rc) {
			tfk_in_close(in);
			return rc;
		}
		in->z.next_in = in->zbuf;
		in->z.avail_in = (uInt)nhead;
	}
	*inp = in;
	return 0;
}

void tfk_in_close(struct tfk_in *in)
{
	if (!in)
		return;
	ra_stop(in, 0);
	if (in->z_live)
		inflateEnd(&in->z);
	if (in->fd > 0)
		close(in->fd);
	tfk_free(in->zbuf);
	tfk_free(in->buf);
	tfk_free(in->path);
	tfk_free(in);
}

/* Decode more bytes into buf[end..cap). Returns bytes added, 0 at end. */
static ssize_t inflate_some(struct tfk_in *in, struct tfk_err *err)
{
	size_t room = in->cap - in->end;

	/* zlib counts in uInt: past 4 GiB of room a plain cast could
	 * give 0, and inflate then makes no progress, forever */
	in->z.next_out = in->buf + in->end;
	in->z.avail_out = room > UINT_MAX ? UINT_MAX : (uInt)room;
	for (;;) {
		int ret;

		if (in->z.avail_in == 0 && !in->raw_eof) {
			ssize_t k = read_full(in->fd, in->zbuf, in->zcap);

			if (k < 0)
				return io_error(in, err, "cannot read");
			if (k == 0)
				in->raw_eof = 1;
			in->z.next_in = in->zbuf;
			in->z.avail_in = (uInt)k;
		}
		if (in->z_member_done) {
			if (in->z.avail_in == 0 && in->raw_eof)
				return 0;
			if (in->z.avail_in == 0)
				continue;
			/* Another gzip member follows (cat a.gz b.gz). */
			inflateReset(&in->z);
			in->z_member_done = 0;
		}
		{
			uInt before_in = in->z.avail_in;
			uInt before_out = in->z.avail_out;

			ret = inflate(&in->z, Z_NO_FLUSH);
			in->raw_off += before_in - in->z.avail_in;
			if (ret == Z_STREAM_END)
				in->z_member_done = 1;
			if (ret == Z_OK || ret == Z_STREAM_END ||
			    (ret == Z_BUF_ERROR && !(in->raw_eof && in->z.avail_in == 0))) {
				size_t got = before_out - in->z.avail_out;

				if (got)
					return (ssize_t)got;
				continue;
			}
			/* Hand out what decoded before the bad bytes first:
			 * the records in it are good. zlib stays in its error
			 * state, so the next call reports the error. */
			if (ret == Z_DATA_ERROR && before_out != in->z.avail_out)
				return (ssize_t)(before_out - in->z.avail_out);
		}
		if (ret == Z_BUF_ERROR)
			return tfk_errf(err, TFK_ETRUNC,
					"%s: %s stream truncated at compressed byte %" PRIu64,
					in->path, tfk_comp_name(in->comp), in->raw_off);
		if (ret == Z_MEM_ERROR)
			return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", in->path);
		return tfk_errf(err, TFK_ECORRUPT,
				"%s: invalid %s data at compressed byte %" PRIu64 ": %s",
				in->path, tfk_comp_name(in->comp), in->raw_off,
				in->z.msg ? in->z.msg : "corrupt");
	}
}

/* Read-ahead ------------------------------------------------------------ */

/*
 * The thread fills the slot after the last one filled while one is
 * free, and ends its reading at the end of the file or a read error
 * (kept in that slot). Only it writes slots past cur + filled; only the
 * reader touches cur and the slots up to cur + filled.
 */
static void *ra_main(void *arg)
{
	struct ra *ra = arg;

	pthread_mutex_lock(&ra->mu);
	for (;;) {
		uint8_t *p;
		size_t got = 0;
		int slot, errnum = 0;

		while (!ra->quit && (ra->stopped || ra->filled == RA_BUFS - 1))
			pthread_cond_wait(&ra->cv, &ra->mu);
		if (ra->quit)
			break;
		slot = (ra->cur + 1 + ra->filled) % RA_BUFS;
		p = ra->b[slot] + RA_SLACK;
		pthread_mutex_unlock(&ra->mu);
		while (got < CHUNK) {
			ssize_t k = read(ra->fd, p + got, CHUNK - got);

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0) {
				errnum = errno;
				break;
			}
			if (k == 0)
				break;
			got += (size_t)k;
		}
		pthread_mutex_lock(&ra->mu);
		ra->got[slot] = errnum ? -1 : (ssize_t)got;
		ra->errnum[slot] = errnum;
		if (errnum || got == 0)
			ra->stopped = 1;
		ra->filled++;
		pthread_cond_broadcast(&ra->cv);
	}
	pthread_mutex_unlock(&ra->mu);
	return NULL;
}

static void ra_free(struct ra *ra)
{
	int i;

	pthread_mutex_destroy(&ra->mu);
	pthread_cond_destroy(&ra->cv);
	for (i = 0; i < RA_BUFS; i++)
		tfk_free(ra->b[i]);
	tfk_free(ra);
}

/*
 * Start at the first fill of a large regular plain file. Any failure
 * (memory, thread) only leaves the plain read path in place.
 */
static void ra_start(struct tfk_in *in)
{
	struct ra *ra;
	int i, ok = 1;

	in->ra_ok = 0;
	if (in->comp != TFK_COMP_NONE || in->size == UINT64_MAX ||
	    in->size < RA_MIN || in->end != in->pos)
		return;
	ra = tfk_calloc(1, sizeof(*ra));
	if (!ra)
		return;
	for (i = 0; i < RA_BUFS; i++)
		ok &= (ra->b[i] = tfk_malloc(RA_SLACK + CHUNK)) != NULL;
	pthread_mutex_init(&ra->mu, NULL);
	pthread_cond_init(&ra->cv, NULL);
	ra->fd = in->fd;
	if (!ok || pthread_create(&ra->th, NULL, ra_main, ra)) {
		ra_free(ra);
		return;
	}
	tfk_free(in->buf);
	in->buf = ra->b[0];
	in->cap = RA_SLACK + CHUNK;
	in->pos = in->end = RA_SLACK;
	in->ra = ra;
}

/*
 * Stop the thread. With keep, what it has read joins the window in a
 * buffer of the plain path's own, so reading goes on from where it was
 * (an over-long record); without, the chunks read ahead are dropped
 * (seek, close, end). Returns -1 with errno set when keep and a read
 * failed, or on no memory (the window stays, the chunks go).
 */
static int ra_stop(struct tfk_in *in, int keep)
{
	struct ra *ra = in->ra;
	size_t left, total;
	uint8_t *nb;
	int i, n, rc = 0, e = 0, end = 0;

	if (!ra)
		return 0;
	pthread_mutex_lock(&ra->mu);
	ra->quit = 1;
	pthread_cond_broadcast(&ra->cv);
	pthread_mutex_unlock(&ra->mu);
	pthread_join(ra->th, NULL);
	in->ra = NULL;
	left = in->end - in->pos;
	total = left;
	n = keep ? ra->filled : 0;
	for (i = 1; i <= n; i++) {
		int s = (ra->cur + i) % RA_BUFS;

		if (ra->got[s] <= 0) {
			end = ra->got[s] == 0;
			e = ra->errnum[s];
			n = i - 1;
			break;
		}
		total += (size_t)ra->got[s];
	}
	nb = n || e || end ? tfk_malloc(total + CHUNK) : NULL;
	if (!nb) {
		/* the window stays in the buffer it is in */
		memmove(ra->b[ra->cur], in->buf + in->pos, left);
		in->buf = ra->b[ra->cur];
		in->cap = RA_SLACK + CHUNK;
		in->pos = 0;
		in->end = left;
		ra->b[ra->cur] = NULL;
		ra_free(ra);
		if (n || e || end) {
			errno = ENOMEM;
			return -1;
		}
		return 0;
	}
	memcpy(nb, in->buf + in->pos, left);
	total = left;
	for (i = 1; i <= n; i++) {
		int s = (ra->cur + i) % RA_BUFS;

		memcpy(nb + total, ra->b[s] + RA_SLACK, (size_t)ra->got[s]);
		total += (size_t)ra->got[s];
	}
	in->buf = nb;
	in->cap = total + CHUNK;
	in->pos = 0;
	in->end = total;
	if (end)
		in->eof = 1;
	if (e) {
		in->eof = 1;	/* as ra_next: a read error ends the file */
		errno = e;
		rc = -1;
	}
	ra_free(ra);
	return rc;
}

/*
 * The window's next chunk from the thread: the bytes left in the
 * current buffer go into the slack before the next chunk, and the
 * current buffer is handed back to the thread. Returns bytes added (0
 * at end), or -1 with errno set (a read error ends the file: the
 * thread reads no further past the damage).
 */
static ssize_t ra_next(struct tfk_in *in)
{
	struct ra *ra = in->ra;
	size_t left = in->end - in->pos;
	ssize_t got;
	int next, e;
	uint8_t *nb;

	pthread_mutex_lock(&ra->mu);
	while (ra->filled == 0)
		pthread_cond_wait(&ra->cv, &ra->mu);
	pthread_mutex_unlock(&ra->mu);
	next = (ra->cur + 1) % RA_BUFS;
	got = ra->got[next];
	e = ra->errnum[next];
	if (got <= 0) {
		ra_stop(in, 0);
		in->eof = 1;
		errno = e;
		return got;
	}
	nb = ra->b[next];
	memcpy(nb + RA_SLACK - left, in->buf + in->pos, left);
	in->buf = nb;
	in->pos = RA_SLACK - left;
	in->end = RA_SLACK + (size_t)got;
	pthread_mutex_lock(&ra->mu);
	ra->cur = next;
	ra->filled--;
	pthread_cond_broadcast(&ra->cv);
	pthread_mutex_unlock(&ra->mu);
	return got;
}

void tfk_in_set_readahead(struct tfk_in *in, int on)
{
	in->ra_ok = on && !in->ra;
}

ssize_t tfk_in_fill(struct tfk_in *in, size_t n, const uint8_t **p,
		    struct tfk_err *err)
{
	if (in->ra_ok)
		ra_start(in);
	if (in->ra && in->end - in->pos < n && n > RA_SLACK &&
	    ra_stop(in, 1) < 0)
		return errno == ENOMEM ?
		       tfk_errf(err, TFK_ENOMEM, "%s: out of memory", in->path) :
		       io_error(in, err, "cannot read");
	while (in->end - in->pos < n && !in->eof) {
		ssize_t k;

		if (in->ra) {
			k = ra_next(in);
			if (k < 0)
				return io_error(in, err, "cannot read");
			if (k == 0)
				in->eof = 1;
			continue;
		}
		if (in->pos > 0 && in->cap - in->end < CHUNK / 4) {
			memmove(in->buf, in->buf + in->pos, in->end - in->pos);
			in->end -= in->pos;
			in->pos = 0;
		}
		if (in->end == in->cap) {
			/* Full of real data and still short: grow, by
			 * doubling but not far past the window asked for
			 * (a 300 MiB record needs no 512 MiB buffer). */
			size_t want = in->cap * 2, fit = n + CHUNK;
			uint8_t *nb;

			if (fit > in->cap && fit < want)
				want = fit;
			nb = tfk_realloc(in->buf, want);
			if (!nb)
				return tfk_errf(err, TFK_ENOMEM,
						"%s: out of memory", in->path);
			in->buf = nb;
			in->cap = want;
		}
		if (in->comp == TFK_COMP_NONE) {
			k = read_full(in->fd, in->buf + in->end, in->cap - in->end);
			if (k < 0)
				return io_error(in, err, "cannot read");
		} else {
			k = inflate_some(in, err);
			if (k < 0 && k != TFK_ENOMEM) {
				/* A deflate stream cannot be resumed after bad
				 * or missing bytes: report once, then end. The
				 * partial record in the window goes too; the
				 * offset stays where the damage was found. */
				in->pos = in->end;
				in->eof = 1;
			}
			if (k < 0)
				return k;
		}
		if (k == 0)
			in->eof = 1;
		in->end += (size_t)k;
	}
	*p = in->buf + in->pos;
	return (ssize_t)(in->end - in->pos);
}

void tfk_in_consume(struct tfk_in *in, size_t n)
{
	in->off += n;
	in->pos += n;
}

int tfk_in_seek(struct tfk_in *in, uint64_t off, struct tfk_err *err)
{
	if (in->comp != TFK_COMP_NONE || in->size == UINT64_MAX)
		return tfk_errf(err, TFK_EINVAL, "%s: cannot seek in %s",
				in->path, in->comp != TFK_COMP_NONE ?
				"compressed input" : "a pipe");
	if (off > in->size)
		return tfk_errf(err, TFK_EINVAL,
				"%s: offset %" PRIu64 " is past the end (%" PRIu64 " bytes)",
				in->path, off, in->size);
	ra_stop(in, 0);
	in->ra_ok = 0;
	if (lseek(in->fd, (off_t)off, SEEK_SET) < 0)
		return io_error(in, err, "cannot seek");
	in->pos = in->end = 0;
	in->eof = 0;
	in->off = off;
	return 0;
}

uint64_t tfk_in_offset(const struct tfk_in *in)
{
	return in->off;
}

uint64_t tfk_in_size(const struct tfk_in *in)
{
	return in->size;
}

const char *tfk_in_path(const struct tfk_in *in)
{
	return in->path;
}

int tfk_in_comp(const struct tfk_in *in)
{
	return in->comp;
}
