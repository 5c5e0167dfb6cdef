/*
 * fuzz-record-stream.c - the TFRecord reader through the buffered and
 * inflate paths of lib/io/in.c on arbitrary bytes.
 *
 * FUZZ-SEEDS: fixtures/tfrecord/tfx_penguin/Split-eval/data_tfrecord-00000-of-00001.gz
 * FUZZ-SEEDS: fixtures/tfrecord/tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz
 * FUZZ-SEEDS: fixtures/tfrecord/rust_raw_record/expected.tfrecord
 *
 * The input's last byte (mod 4) picks one of four ways to read it, so
 * seeds need no header and one run costs one or two opens (each open
 * allocates 1-2 MiB of buffers, which ASan makes dear):
 *  1. through a pipe on stdin with TFK_COMP_AUTO: plain, GZIP or ZLIB as
 *     the first bytes say, so garbage after a gzip magic reaches inflate;
 *  2. as a file with GZIP forced, and 3. with ZLIB forced (a regular
 *     compressed file is read through the buffer, not mapped);
 *  4. as payloads (length byte + up to 255 bytes, as fuzz-record) framed,
 *     gzip-compressed here with zlib and sent through the pipe with AUTO:
 *     the exact payloads must come back; then the compressed stream is
 *     cut short and must end in an error or fewer records, never more.
 * Each read recovers as `tfk-cat --skip-corrupt` would. An input larger
 * than the pipe's buffer is fed by a thread; SIGPIPE is ignored so an
 * early stop only ends the writer.
 */
#include "io/record.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#define MEMFILE_NAME "fuzz-record-stream"
#include "memfile.h"

static int nullfd = -1;

struct feed {
	int fd;
	const uint8_t *p;
	size_t n;
};

static void *writer(void *arg)
{
	struct feed *f = arg;
	size_t done = 0;

	while (done < f->n) {
		ssize_t k = write(f->fd, f->p + done, f->n - done);

		if (k <= 0)
			break;	/* EPIPE: the reader stopped early */
		done += (size_t)k;
	}
	close(f->fd);
	return NULL;
}

/* Read path with recovery; count records and, when want/nwant are
 * given, compare them to the expected payloads in order. Returns the
 * record count, or -1 on a mismatch. */
static long read_all(const char *path, int comp, size_t bound,
		     const uint8_t *const *want, const size_t *nwant,
		     size_t n_want, long *errors)
{
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	struct tfk_err err;
	long n = 0, steps = 0;
	volatile uint8_t sink = 0;
	int rc;

	*errors = 0;
	if (tfk_rec_open(&r, path, comp, 0, &err)) {
		if (err.msg[0] == '\0')
			abort();
		*errors = 1;
		return 0;
	}
	for (;;) {
		uint64_t off = tfk_rec_offset(r);

		if (++steps > 2100 * (long)bound + 64)
			abort();	/* no progress (inflate grows data <= 1032x) */
		rc = tfk_rec_next(r, &rec, &err);
		if (rc == 0)
			break;
		if (rc == 1) {
			if (rec.len)
				sink ^= rec.data[0] ^ rec.data[rec.len - 1];
			if (want && ((size_t)n >= n_want || rec.len != nwant[n] ||
				     memcmp(rec.data, want[n], rec.len)))
				n = -1000000;
			n++;
			continue;
		}
		(*errors)++;
		if (err.msg[0] == '\0')
			abort();
		/* as tfk-cat --skip-corrupt: an error that did not move the
		 * reader ends the file unless a resync finds a header */
		if (rc != TFK_ECORRUPT && rc != TFK_ETRUNC)
			break;
		if (tfk_rec_offset(r) == off &&
		    (rc != TFK_ECORRUPT || tfk_rec_resync(r, &err) <= 0))
			break;
	}
	tfk_rec_close(r);
	(void)sink;
	return n < 0 ? -1 : n;
}

static long read_pipe(const uint8_t *p, size_t n, size_t bound,
		      const uint8_t *const *want, const size_t *nwant,
		      size_t n_want, long *errors)
{
	struct feed f;
	pthread_t t;
	int fds[2], threaded;
	long got;

	if (pipe(fds) || dup2(fds[0], 0) < 0)
		abort();
	close(fds[0]);
	f.fd = fds[1];
	f.p = p;
	f.n = n;
	/* A thread per input is dear under ASan (stack shadow, TLB
	 * shootdowns): when the input fits in the pipe, write it first. */
	threaded = n > 65536 &&
		   fcntl(fds[1], F_SETPIPE_SZ, (int)n) < (long)n;
	if (!threaded)
		writer(&f);
	else if (pthread_create(&t, NULL, writer, &f))
		abort();
	got = read_all("-", TFK_COMP_AUTO, bound, want, nwant, n_want, errors);
	/* Put /dev/null on fd 0: closes the pipe's read end, which ends the
	 * writer if the reader stopped early, and keeps fd 0 taken so no
	 * other descriptor (the memfd) lands there. */
	if (dup2(nullfd, 0) < 0)
		abort();
	if (threaded)
		pthread_join(t, NULL);
	return got;
}

static void framed(const uint8_t *data, size_t size)
{
	uint8_t *s = malloc(size * 17 + 16), *z, hdr[12], ftr[4];
	const uint8_t **want = malloc((size + 1) * sizeof(*want));
	size_t *nwant = malloc((size + 1) * sizeof(*nwant));
	size_t i = 0, n = 0, k, nrec = 0, nz;
	z_stream zs;
	long got, errors;

	if (!s || !want || !nwant)
		abort();
	while (i < size) {
		k = data[i++];
		if (k > size - i)
			k = size - i;
		tfk_rec_frame(hdr, ftr, data + i, k);
		want[nrec] = data + i;
		nwant[nrec++] = k;
		memcpy(s + n, hdr, 12);
		memcpy(s + n + 12, data + i, k);
		memcpy(s + n + 12 + k, ftr, 4);
		n += k + 16;
		i += k;
	}
	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	nz = deflateBound(&zs, n) + 32;
	z = malloc(nz);
	if (!z)
		abort();
	zs.next_in = s;
	zs.avail_in = (uInt)n;
	zs.next_out = z;
	zs.avail_out = (uInt)nz;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		abort();
	nz = zs.total_out;
	deflateEnd(&zs);

	got = read_pipe(z, nz, n + nz, want, nwant, nrec, &errors);
	if (got != (long)nrec || errors)
		abort();	/* a clean gzip stream must read back exactly */

	/* cut short: a prefix of the records at most, and an error unless
	 * the cut only removed the gzip trailer's last bytes */
	if (nz > 1) {
		size_t cut = (size * 2654435761u) % (nz - 1) + 1;

		got = read_pipe(z, cut, n + nz, want, nwant, nrec, &errors);
		if (got < 0 || got > (long)nrec || errors == 0)
			abort();
	}
	free(z);
	free(s);
	free(want);
	free(nwant);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int once;
	long errors;

	if (!once) {
		signal(SIGPIPE, SIG_IGN);
		nullfd = open("/dev/null", O_RDONLY);
		if (nullfd < 0)
			abort();
		once = 1;
	}
	switch (size ? data[size - 1] % 4 : 0) {
	case 0:
		read_pipe(data, size, size, NULL, NULL, 0, &errors);
		break;
	case 1:
	case 2:
		put_file(data, size);
		read_all(mpath, data[size - 1] % 4 == 1 ? TFK_COMP_GZIP :
			 TFK_COMP_ZLIB, size, NULL, NULL, 0, &errors);
		break;
	default:
		if (size <= 1 << 16)
			framed(data, size);
	}
	return 0;
}
