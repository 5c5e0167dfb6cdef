/*
 * record.c - TFRecord reader and writer (see record.h for the layout).
 *
 * The reader asks its input for exactly one record's bytes at a time and
 * returns a pointer into the input's window, so reading costs the CRC
 * and nothing else. Length checks come before any allocation: on a
 * regular file a length larger than what is left is refused at once;
 * on a pipe the input grows its buffer only as bytes arrive. Neither
 * bounds compressed input, where a few KiB inflate to a claimed length
 * of gigabytes, so every record is also held to a byte budget (256 MiB,
 * TFK_MAX_RECORD_BYTES, or the caller's) checked before its bytes are
 * asked for. A record over it ends the file: skipping it would mean
 * inflating it all.
 */
#include "io/record.h"
#include "io/crc32c.h"
#include "util/alloc.h"
#include "util/limit.h"

#include <inttypes.h>
#include <string.h>

struct tfk_rec_reader {
	struct tfk_in *in;
	int flags;
	uint64_t index;
	uint64_t skipped;
	uint64_t max_len;	/* payload byte budget */
	int over;		/* a record was over it: at end */
};

struct tfk_rec_writer {
	struct tfk_out *out;
	uint64_t count;
};

static uint64_t le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t le32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

int tfk_rec_sniff(const uint8_t *p, size_t n)
{
	return n >= TFK_REC_HEADER &&
	       tfk_crc32c_mask(tfk_crc32c(p, 8)) == le32(p + 8);
}

int tfk_rec_open(struct tfk_rec_reader **rp, const char *path, int comp,
		 int flags, struct tfk_err *err)
{
	struct tfk_rec_reader *r;
	int rc;

	*rp = NULL;
	r = tfk_calloc(1, sizeof(*r));
	if (!r)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = tfk_limit_get("TFK_MAX_RECORD_BYTES", TFK_REC_MAX_BYTES_DEFAULT,
			   &r->max_len, err);
	if (!rc)
		rc = tfk_in_open(&r->in, path, comp, tfk_rec_sniff, err);
	if (rc) {
		tfk_free(r);
		return rc;
	}
	r->flags = flags;
	if (flags & TFK_REC_READAHEAD)
		tfk_in_set_readahead(r->in, 1);
	*rp = r;
	return 0;
}

void tfk_rec_set_max_bytes(struct tfk_rec_reader *r, uint64_t max)
{
	r->max_len = max;
}

void tfk_rec_close(struct tfk_rec_reader *r)
{
	if (!r)
		return;
	tfk_in_close(r->in);
	tfk_free(r);
}

/* Consume everything that is left so the next call reports end. */
static void drop_rest(struct tfk_rec_reader *r, size_t avail)
{
	const uint8_t *p;
	ssize_t k;

	tfk_in_consume(r->in, avail);
	while ((k = tfk_in_fill(r->in, 1 << 16, &p, NULL)) > 0)
		tfk_in_consume(r->in, (size_t)k);
}

int tfk_rec_next(struct tfk_rec_reader *r, struct tfk_rec *rec,
		 struct tfk_err *err)
{
	const char *path = tfk_in_path(r->in);
	uint64_t off = tfk_in_offset(r->in), len, size, left;
	const uint8_t *p;
	ssize_t avail;
	size_t need;
	int verify = !(r->flags & TFK_REC_NOVERIFY);

	if (r->over)
		return 0;
	avail = tfk_in_fill(r->in, TFK_REC_HEADER, &p, err);
	if (avail <= 0)
		return (int)avail;
	if (avail < TFK_REC_HEADER) {
		drop_rest(r, (size_t)avail);
		return tfk_errf(err, TFK_ETRUNC, "%s: record %" PRIu64
				" at byte %" PRIu64 ": truncated header (%zd of 12 bytes)",
				path, r->index, off, avail);
	}
	len = le64(p);
	if (verify && tfk_crc32c_mask(tfk_crc32c(p, 8)) != le32(p + 8))
		return tfk_errf(err, TFK_ECORRUPT, "%s: record %" PRIu64
				" at byte %" PRIu64 ": length crc mismatch",
				path, r->index, off);
	size = tfk_in_size(r->in);
	left = size != UINT64_MAX ? size - off - TFK_REC_HEADER : UINT64_MAX;
	if (len > SIZE_MAX - TFK_REC_OVERHEAD ||
	    (left != UINT64_MAX && (len > left || left - len < TFK_REC_FOOTER))) {
		if (left == UINT64_MAX)
			left = 0;

		if (verify) {
			drop_rest(r, (size_t)avail);
			return tfk_errf(err, TFK_ETRUNC, "%s: record %" PRIu64
					" at byte %" PRIu64 ": truncated: length %" PRIu64
					" needs %" PRIu64 " bytes with its crc but "
					"only %" PRIu64 " are left", path,
					r->index, off, len,
					len + TFK_REC_FOOTER, left);
		}
		return tfk_errf(err, TFK_ECORRUPT, "%s: record %" PRIu64
				" at byte %" PRIu64 ": length %" PRIu64
				" exceeds the %" PRIu64 " bytes left", path,
				r->index, off, len, left);
	}
	if (len > r->max_len) {
		r->over = 1;
		return tfk_errf(err, TFK_EINVAL, "%s: record %" PRIu64
				" at byte %" PRIu64 ": length %" PRIu64 " is "
				"more than the limit of %" PRIu64 " bytes "
				"(TFK_MAX_RECORD_BYTES)", path, r->index, off,
				len, r->max_len);
	}
	need = (size_t)len + TFK_REC_OVERHEAD;
	avail = tfk_in_fill(r->in, need, &p, err);
	if (avail < 0)
		return (int)avail;
	if ((size_t)avail < need) {
		drop_rest(r, (size_t)avail);
		return tfk_errf(err, TFK_ETRUNC, "%s: record %" PRIu64
				" at byte %" PRIu64 ": truncated: %zd of %zu bytes",
				path, r->index, off, avail, need);
	}
	r->index++;
	tfk_in_consume(r->in, need);
	if (verify && tfk_crc32c_mask(tfk_crc32c(p + TFK_REC_HEADER, len)) !=
		      le32(p + TFK_REC_HEADER + len))
		return tfk_errf(err, TFK_ECORRUPT, "%s: record %" PRIu64
				" at byte %" PRIu64 ": data crc mismatch",
				path, r->index - 1, off);
	rec->data = p + TFK_REC_HEADER;
	rec->len = (size_t)len;
	rec->index = r->index - 1;
	rec->off = off;
	return 1;
}

int tfk_rec_resync(struct tfk_rec_reader *r, struct tfk_err *err)
{
	const uint8_t *p;
	ssize_t avail;
	size_t i;

	/* The header at the current offset is bad: start one byte on. */
	avail = tfk_in_fill(r->in, 1, &p, err);
	if (avail <= 0)
		return (int)avail;
	tfk_in_consume(r->in, 1);
	r->skipped++;
	for (;;) {
		avail = tfk_in_fill(r->in, 1 << 16, &p, err);
		if (avail < 0)
			return (int)avail;
		if (avail < TFK_REC_HEADER) {
			tfk_in_consume(r->in, (size_t)avail);
			r->skipped += (uint64_t)avail;
			return 0;
		}
		for (i = 0; i + TFK_REC_HEADER <= (size_t)avail; i++) {
			if (tfk_rec_sniff(p + i, TFK_REC_HEADER)) {
				tfk_in_consume(r->in, i);
				r->skipped += i;
				return 1;
			}
		}
		tfk_in_consume(r->in, i);
		r->skipped += i;
	}
}

uint64_t tfk_rec_skipped_bytes(const struct tfk_rec_reader *r)
{
	return r->skipped;
}

uint64_t tfk_rec_offset(const struct tfk_rec_reader *r)
{
	return tfk_in_offset(r->in);
}

uint64_t tfk_rec_count(const struct tfk_rec_reader *r)
{
	return r->index;
}

const char *tfk_rec_path(const struct tfk_rec_reader *r)
{
	return tfk_in_path(r->in);
}

struct tfk_in *tfk_rec_input(struct tfk_rec_reader *r)
{
	return r->in;
}

int tfk_rec_seek(struct tfk_rec_reader *r, uint64_t off, uint64_t first_index,
		 struct tfk_err *err)
{
	int rc = tfk_in_seek(r->in, off, err);

	if (!rc)
		r->index = first_index;
	return rc;
}

/* Writing ------------------------------------------------------------ */

void tfk_rec_frame(uint8_t hdr[TFK_REC_HEADER], uint8_t ftr[TFK_REC_FOOTER],
		   const void *data, size_t len)
{
	uint64_t n = len;

	memcpy(hdr, &n, 8);
	put32(hdr + 8, tfk_crc32c_mask(tfk_crc32c(hdr, 8)));
	put32(ftr, tfk_crc32c_mask(tfk_crc32c(data, len)));
}

int tfk_recw_open(struct tfk_rec_writer **wp, const char *path, int comp,
		  struct tfk_err *err)
{
	struct tfk_rec_writer *w;
	int rc;

	*wp = NULL;
	w = tfk_calloc(1, sizeof(*w));
	if (!w)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = tfk_out_open(&w->out, path, comp, err);
	if (rc) {
		tfk_free(w);
		return rc;
	}
	*wp = w;
	return 0;
}

int tfk_recw_write(struct tfk_rec_writer *w, const void *data, size_t len,
		   struct tfk_err *err)
{
	uint8_t hdr[TFK_REC_HEADER], ftr[TFK_REC_FOOTER];
	int rc;

	tfk_rec_frame(hdr, ftr, data, len);
	rc = tfk_out_write(w->out, hdr, sizeof(hdr), err);
	if (!rc)
		rc = tfk_out_write(w->out, data, len, err);
	if (!rc)
		rc = tfk_out_write(w->out, ftr, sizeof(ftr), err);
	if (!rc)
		w->count++;
	return rc;
}

int tfk_recw_write_framed(struct tfk_rec_writer *w, const void *p, size_t n,
			  struct tfk_err *err)
{
	int rc = tfk_out_write(w->out, p, n, err);

	if (!rc)
		w->count++;
	return rc;
}

int tfk_recw_flush(struct tfk_rec_writer *w, struct tfk_err *err)
{
	return tfk_out_flush(w->out, err);
}

int tfk_recw_close(struct tfk_rec_writer *w, struct tfk_err *err)
{
	int rc;

	if (!w)
		return 0;
	rc = tfk_out_close(w->out, err);
	tfk_free(w);
	return rc;
}

void tfk_recw_discard(struct tfk_rec_writer *w)
{
	if (!w)
		return;
	tfk_out_discard(w->out);
	tfk_free(w);
}

uint64_t tfk_recw_count(const struct tfk_rec_writer *w)
{
	return w->count;
}

uint64_t tfk_recw_bytes(const struct tfk_rec_writer *w)
{
	return tfk_out_bytes(w->out);
}

uint64_t tfk_recw_file_bytes(const struct tfk_rec_writer *w)
{
	return tfk_out_file_bytes(w->out);
}
