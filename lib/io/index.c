/*
 * index.c - FILE.idx record indexes (see index.h for the format).
 *
 * The index is kept as n + 1 offsets rather than (offset, length) pairs:
 * the format requires records to be contiguous, so lengths are implied
 * and a range lookup is two array reads. The text parser is hand-written
 * instead of sscanf/strtoull: those accept signs, leading blanks and
 * overflow silently, and the index is untrusted input that decides
 * where we seek. An index is always read whole: a million records is
 * about 20 MB of text and parses in tens of milliseconds, and a partial
 * read could not check that the last record ends at the file size.
 */
#include "io/index.h"
#include "io/out.h"
#include "util/alloc.h"
#include "util/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void tfk_index_init(struct tfk_index *ix)
{
	memset(ix, 0, sizeof(*ix));
}

void tfk_index_release(struct tfk_index *ix)
{
	if (!ix)
		return;
	tfk_free(ix->off);
	tfk_index_init(ix);
}

static int reserve(struct tfk_index *ix, size_t n, struct tfk_err *err)
{
	uint64_t *p;
	size_t cap;

	if (n <= ix->cap)
		return 0;
	cap = ix->cap ? ix->cap : 1024;
	while (cap < n) {
		if (cap > SIZE_MAX / 2 / sizeof(*p))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		cap *= 2;
	}
	p = tfk_realloc(ix->off, cap * sizeof(*p));
	if (!p)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	ix->off = p;
	ix->cap = cap;
	return 0;
}

int tfk_index_add(struct tfk_index *ix, uint64_t len, struct tfk_err *err)
{
	uint64_t end;
	int rc = reserve(ix, ix->n + 2, err);

	if (rc)
		return rc;
	if (ix->n == 0)
		ix->off[0] = 0;
	end = ix->off[ix->n];
	if (len > UINT64_MAX - end)
		return tfk_errf(err, TFK_EINVAL, "index offset overflow");
	ix->off[++ix->n] = end + len;
	return 0;
}

int tfk_index_scan(struct tfk_index *ix, struct tfk_rec_reader *r,
		   struct tfk_err *err)
{
	struct tfk_rec rec;
	int rc;

	if (tfk_in_comp(tfk_rec_input(r)) != TFK_COMP_NONE)
		return tfk_errf(err, TFK_EINVAL, "%s: cannot index a "
				"%s-compressed file (offsets would not be "
				"seekable); decompress it first", tfk_rec_path(r),
				tfk_comp_name(tfk_in_comp(tfk_rec_input(r))));
	while ((rc = tfk_rec_next(r, &rec, err)) == 1) {
		rc = tfk_index_add(ix, (uint64_t)rec.len + TFK_REC_OVERHEAD, err);
		if (rc)
			return rc;
	}
	return rc;
}

/* Parse a decimal u64 at p[*i..n) ending at the byte `stop`. Returns 0,
 * or a short description of what is wrong. */
static const char *parse_u64(const char *p, size_t n, size_t *i, int stop,
			     uint64_t *v)
{
	size_t j = *i;
	uint64_t x = 0;

	if (j >= n)
		return NULL;	/* caller reports truncation */
	if (p[j] < '0' || p[j] > '9')
		return "expected a decimal number";
	for (; j < n && p[j] >= '0' && p[j] <= '9'; j++) {
		unsigned d = (unsigned)(p[j] - '0');

		if (x > (UINT64_MAX - d) / 10)
			return "number too large";
		x = x * 10 + d;
	}
	if (j < n && p[j] != stop)
		return stop == ' ' ? "expected 'OFFSET LENGTH'" :
				     "unexpected text after LENGTH";
	*v = x;
	*i = j;
	return "";
}

int tfk_index_parse(struct tfk_index *ix, const char *p, size_t n,
		    const char *name, struct tfk_err *err)
{
	size_t i = 0;
	uint64_t line = 0, off, len;
	int rc;

	ix->n = 0;
	if (n && (rc = reserve(ix, 2, err)))
		return rc;
	if (ix->cap)
		ix->off[0] = 0;
	while (i < n) {
		const char *what;

		line++;
		what = parse_u64(p, n, &i, ' ', &off);
		if (what && *what)
			return tfk_errf(err, TFK_ECORRUPT, "%s: line %" PRIu64
					": %s", name, line, what);
		if (!what || i >= n)
			goto trunc;
		i++;	/* the space */
		what = parse_u64(p, n, &i, '\n', &len);
		if (what && *what)
			return tfk_errf(err, TFK_ECORRUPT, "%s: line %" PRIu64
					": %s", name, line, what);
		if (!what || i >= n)
			goto trunc;
		i++;	/* the newline */
		if (off != ix->off[ix->n])
			return tfk_errf(err, TFK_ECORRUPT, "%s: line %" PRIu64
					": record at byte %" PRIu64 ", expected %"
					PRIu64 " (%s)", name, line, off,
					ix->off[ix->n], ix->n == 0 ?
					"the first record starts the file" :
					off < ix->off[ix->n] ? "offsets must increase" :
					"records must be contiguous");
		if (len < TFK_REC_OVERHEAD)
			return tfk_errf(err, TFK_ECORRUPT, "%s: line %" PRIu64
					": length %" PRIu64 " is shorter than a "
					"record's 16 bytes of framing", name,
					line, len);
		if (len > UINT64_MAX - off)
			return tfk_errf(err, TFK_ECORRUPT, "%s: line %" PRIu64
					": record ends past 2^64", name, line);
		rc = tfk_index_add(ix, len, err);
		if (rc)
			return rc;
	}
	return 0;
trunc:
	return tfk_errf(err, TFK_ETRUNC, "%s: line %" PRIu64
			": truncated (no newline at the end)", name, line);
}

int tfk_index_read(struct tfk_index *ix, const char *path,
		   struct tfk_err *err)
{
	struct stat st;
	char *text = NULL;
	size_t len = 0, cap;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tfk_errf(err, errno == ENOENT ? TFK_ENOTFOUND : TFK_EIO,
				"%s: cannot open: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = tfk_errf(err, TFK_EIO, "%s: cannot stat: %s", path,
			      strerror(errno));
		close(fd);
		return rc;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return tfk_errf(err, TFK_EIO, "%s: is a directory", path);
	}
	/* Regular files are read in one go; other inputs grow the buffer. */
	cap = S_ISREG(st.st_mode) && st.st_size > 0 ?
	      (size_t)st.st_size + 1 : 1 << 16;
	text = tfk_malloc(cap);
	if (!text) {
		close(fd);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	for (;;) {
		ssize_t k;

		if (len == cap) {
			char *t = cap > SIZE_MAX / 2 ? NULL :
				  tfk_realloc(text, cap * 2);

			if (!t) {
				rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
				goto out;
			}
			text = t;
			cap *= 2;
		}
		k = read(fd, text + len, cap - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = tfk_errf(err, TFK_EIO, "%s: cannot read: %s", path,
				      strerror(errno));
			goto out;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	rc = tfk_index_parse(ix, text, len, path, err);
out:
	tfk_free(text);
	close(fd);
	return rc;
}

/* Append v in decimal: snprintf per number would dominate the writer. */
static void add_u64(struct tfk_buf *b, uint64_t v)
{
	char tmp[20];
	int k = 0;

	do {
		tmp[k++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (k)
		tfk_buf_addc(b, tmp[--k]);
}

int tfk_index_write(const struct tfk_index *ix, const char *path,
		    struct tfk_err *err)
{
	struct tfk_out *out;
	struct tfk_buf b;
	size_t i;
	int rc;

	rc = tfk_out_open(&out, path, TFK_COMP_NONE, err);
	if (rc)
		return rc;
	tfk_buf_init(&b);
	for (i = 0; i < ix->n; i++) {
		add_u64(&b, ix->off[i]);
		tfk_buf_addc(&b, ' ');
		add_u64(&b, ix->off[i + 1] - ix->off[i]);
		tfk_buf_addc(&b, '\n');
		if (b.len >= (1u << 16) || i + 1 == ix->n) {
			if (!tfk_buf_ok(&b)) {
				rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
				break;
			}
			rc = tfk_out_write(out, b.data, b.len, err);
			if (rc)
				break;
			tfk_buf_reset(&b);
		}
	}
	tfk_buf_release(&b);
	if (rc) {
		tfk_out_discard(out);
		return rc;
	}
	return tfk_out_close(out, err);
}

static int newer(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

int tfk_index_fresh(const struct tfk_index *ix, const char *data_path,
		    const char *idx_path, struct tfk_err *err)
{
	struct stat sd, si;
	uint64_t end = ix->n ? ix->off[ix->n] : 0;

	if (stat(data_path, &sd) < 0)
		return tfk_errf(err, TFK_EIO, "%s: cannot stat: %s", data_path,
				strerror(errno));
	if (stat(idx_path, &si) < 0)
		return tfk_errf(err, TFK_EIO, "%s: cannot stat: %s", idx_path,
				strerror(errno));
	if (newer(&sd.st_mtim, &si.st_mtim)) {
		tfk_errf(err, TFK_OK, "%s: stale: older than %s", idx_path,
			 data_path);
		return 0;
	}
	if (end != (uint64_t)sd.st_size) {
		tfk_errf(err, TFK_OK, "%s: stale: records end at byte %" PRIu64
			 " but %s has %" PRIu64 " bytes", idx_path, end,
			 data_path, (uint64_t)sd.st_size);
		return 0;
	}
	return 1;
}

char *tfk_index_path(const char *data_path)
{
	size_t n = strlen(data_path);
	char *p = tfk_malloc(n + 5);

	if (p) {
		memcpy(p, data_path, n);
		memcpy(p + n, ".idx", 5);
	}
	return p;
}

int tfk_index_load(struct tfk_index *ix, const char *data_path,
		   struct tfk_err *err)
{
	char *idx = tfk_index_path(data_path);
	int rc;

	if (!idx)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = tfk_index_read(ix, idx, err);
	if (rc == TFK_ENOTFOUND) {
		tfk_errf(err, TFK_OK, "%s: no index", idx);
		rc = 0;
	} else if (rc == 0) {
		rc = tfk_index_fresh(ix, data_path, idx, err);
	}
	if (rc <= 0)
		ix->n = 0;
	tfk_free(idx);
	return rc;
}

uint64_t tfk_index_range(const struct tfk_index *ix, uint64_t a, uint64_t b,
			 uint64_t *off)
{
	if (b > ix->n)
		b = ix->n;
	if (a > b)
		a = b;
	*off = ix->n ? ix->off[a] : 0;
	return b - a;
}
