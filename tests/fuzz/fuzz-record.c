/*
 * fuzz-record.c - the TFRecord reader (regular-file path) on arbitrary
 * bytes.
 *
 * FUZZ-SEEDS: fixtures/tfrecord/rust_raw_record/expected.tfrecord
 * FUZZ-SEEDS: fixtures/tfrecord/tfx_mnist/mnist.tfrecord
 *
 * The input's last byte (mod 3) picks one of three ways to read it, so
 * seeds need no header and a run costs one or two opens (each open
 * allocates a 1 MiB buffer, which ASan makes dear):
 *  1. as a file, CRCs verified, recovering as `tfk-cat --skip-corrupt`
 *     does: after a data crc error go on, after a bad header resync;
 *  2. the same without CRC checks (TFK_REC_NOVERIFY), which lets absurd
 *     lengths and partial footers through to the length logic;
 *  3. as payloads: the input is cut into chunks (a length byte, then up
 *     to 255 bytes), framed with tfk_rec_frame and read back. This must
 *     give back exactly those payloads; then one byte of the stream is
 *     flipped and read again with recovery. A flip inside a payload or
 *     footer must cost exactly that record (CRC-32C catches every
 *     single-byte error), the others come back in order.
 * The file is a memfd opened through /proc/self/fd, so the reader takes
 * the path of any regular file (size known, lengths checked against
 * it); nothing is written to disk.
 */
#include "io/record.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MEMFILE_NAME "fuzz-record"
#include "memfile.h"

struct got {
	const uint8_t **p;	/* copies of returned payloads */
	size_t *len;
	size_t n, cap;
};

static void got_add(struct got *g, const uint8_t *p, size_t n)
{
	uint8_t *c;

	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 16;
		g->p = realloc(g->p, g->cap * sizeof(*g->p));
		g->len = realloc(g->len, g->cap * sizeof(*g->len));
		if (!g->p || !g->len)
			abort();
	}
	c = malloc(n ? n : 1);
	if (!c)
		abort();
	memcpy(c, p, n);
	g->p[g->n] = c;
	g->len[g->n++] = n;
}

static void got_free(struct got *g)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		free((void *)g->p[i]);
	free(g->p);
	free(g->len);
	memset(g, 0, sizeof(*g));
}

/* Read mpath with recovery. Records go to g (when not NULL). Returns the
 * number of errors met. */
static long read_all(int flags, size_t size, struct got *g)
{
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	struct tfk_err err;
	long errors = 0, steps = 0;
	volatile uint8_t sink = 0;
	int rc;

	if (tfk_rec_open(&r, mpath, TFK_COMP_NONE, flags, &err))
		return 1;
	for (;;) {
		uint64_t off = tfk_rec_offset(r);

		if (++steps > 4 * (long)size + 16)
			abort();	/* no progress: the reader loops */
		rc = tfk_rec_next(r, &rec, &err);
		if (rc == 0)
			break;
		if (rc == 1) {
			if (rec.len > size || rec.off != off)
				abort();
			if (rec.len)	/* touch every byte: ASan checks bounds */
				sink ^= rec.data[0] ^ rec.data[rec.len - 1];
			if (g)
				got_add(g, rec.data, rec.len);
			continue;
		}
		errors++;
		if (err.msg[0] == '\0')
			abort();	/* every error carries a message */
		/* as tfk-cat --skip-corrupt: an error that did not move the
		 * reader ends the file unless a resync finds a header */
		if (rc != TFK_ECORRUPT && rc != TFK_ETRUNC)
			break;
		if (tfk_rec_offset(r) == off &&
		    (rc != TFK_ECORRUPT || tfk_rec_resync(r, &err) <= 0))
			break;
	}
	if (tfk_rec_offset(r) > size)
		abort();
	tfk_rec_close(r);
	(void)sink;
	return errors;
}

static void framed(const uint8_t *data, size_t size)
{
	uint8_t *s = malloc(size * 17 + 16), hdr[12], ftr[4];
	size_t i = 0, n = 0, k, nrec = 0, flip, *starts;
	struct got g = { 0 };
	int in_header = 0;
	size_t hit = (size_t)-1;

	starts = malloc((size + 1) * sizeof(*starts));
	if (!s || !starts)
		abort();
	while (i < size) {
		k = data[i++];
		if (k > size - i)
			k = size - i;
		tfk_rec_frame(hdr, ftr, data + i, k);
		starts[nrec++] = n;
		memcpy(s + n, hdr, 12);
		memcpy(s + n + 12, data + i, k);
		memcpy(s + n + 12 + k, ftr, 4);
		n += k + 16;
		i += k;
	}
	put_file(s, n);
	if (read_all(0, n, &g) != 0 || g.n != nrec)
		abort();
	for (i = 0, k = 0; k < nrec; k++) {
		size_t len = data[i++];

		if (len > size - i)
			len = size - i;
		if (g.len[k] != len || memcmp(g.p[k], data + i, len))
			abort();	/* framing and reading disagree */
		i += len;
	}
	got_free(&g);
	if (n == 0)
		goto out;

	/* One flipped byte. */
	flip = (size * 2654435761u + data[size - 1]) % n;
	for (k = 0; k < nrec; k++)
		if (flip >= starts[k] && (k + 1 == nrec || flip < starts[k + 1])) {
			hit = k;
			in_header = flip - starts[k] < 12;
		}
	s[flip] ^= (uint8_t)(1u << (data[0] & 7));
	put_file(s, n);
	read_all(0, n, &g);
	if (!in_header) {
		size_t j;

		if (g.n != nrec - 1)
			abort();
		for (i = 0, k = 0, j = 0; k < nrec; k++) {
			size_t len = data[i++];

			if (len > size - i)
				len = size - i;
			if (k != hit) {
				if (g.len[j] != len || memcmp(g.p[j], data + i, len))
					abort();
				j++;
			}
			i += len;
		}
	}
	got_free(&g);
out:
	free(starts);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	switch (size ? data[size - 1] % 3 : 0) {
	case 0:
		put_file(data, size);
		read_all(0, size, NULL);
		break;
	case 1:
		put_file(data, size);
		read_all(TFK_REC_NOVERIFY, size, NULL);
		break;
	default:
		if (size <= 1 << 16)
			framed(data, size);
	}
	return 0;
}
