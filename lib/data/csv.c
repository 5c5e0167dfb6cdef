/*
 * csv.c - CSV tokenizer, number parsing and Example encoding (see csv.h).
 *
 * Tokenizing: one pass over the input window per row. An unquoted field
 * ends at the next delimiter or LF, found 16 bytes at a time with SSE2;
 * a quoted field at its closing quote, found with memchr. Fields are
 * recorded as offsets into the row, and the finished row's raw bytes
 * are copied into the batch in one memcpy; a quoted field holding ""
 * is then unescaped in place (the unescaped text is never longer). A
 * row that runs past the end of the window is abandoned (the batch is
 * cut back to where the row began) and parsed again once more input is
 * visible, so the scanner keeps no state across windows; rows are
 * short, so the rare rescan costs nothing. Copying rows into the batch
 * was chosen over pointing into the window because the window moves on
 * every refill, and a batch must live on while another thread encodes
 * it; copying each field on its own cost a memcpy call per field, a
 * third of the tokenizer's time.
 *
 * Numbers: TensorFlow stores float32, and the text must become the
 * float strtof would give. strtof is slow (a locale lookup and a big
 * number fallback per call), so the common case takes Clinger's fast
 * path: at most 19 significant digits and a power of ten up to 22 make
 * the quotient or product one correctly rounded double operation. Going
 * through double then rounding to float can round twice; that is only
 * wrong when the double lands exactly on a midpoint between two floats
 * (float midpoints are doubles, and rounding to double never crosses
 * one), so those, subnormal and huge results go to strtof.
 *
 * Encoding: the Example is written straight into the batch's output
 * buffer: each column's map-entry key ("0a L name 12") is prepared once,
 * the value bytes follow, and the Example header goes into a gap left
 * in front, so a record is never copied. tfk_exb (example.c) would give
 * the same bytes but costs a copy and a length pass per feature, which
 * is most of the work for rows of short fields. Schema statistics are
 * gathered per batch into a tfk_schema directly (not by decoding each
 * record again for tfk_schema_observe, which would double the cost) and
 * merged in order by the caller.
 */
#include "data/csv.h"
#include "io/in.h"
#include "util/alloc.h"
#include "util/buf.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Batches ------------------------------------------------------------- */

void tfk_csv_batch_init(struct tfk_csv_batch *b)
{
	memset(b, 0, sizeof(*b));
	tfk_buf_init(&b->text);
	tfk_buf_init(&b->out);
	tfk_schema_init(&b->stats);
}

static void clear_output(struct tfk_csv_batch *b)
{
	size_t i;

	tfk_buf_reset(&b->out);
	b->n_written = b->n_skipped = 0;
	b->bad = TFK_CSV_BAD_NONE;
	b->bad_row = b->bad_col = SIZE_MAX;
	for (i = 0; i < b->n_warn; i++)
		tfk_free(b->warn[i]);
	b->n_warn = 0;
	tfk_schema_release(&b->stats);
	tfk_schema_init(&b->stats);
}

void tfk_csv_batch_release(struct tfk_csv_batch *b)
{
	if (!b)
		return;
	clear_output(b);
	tfk_schema_release(&b->stats);
	tfk_buf_release(&b->text);
	tfk_buf_release(&b->out);
	tfk_free(b->cell);
	tfk_free(b->row);
	tfk_free(b->rec_off);
	tfk_free(b->rec_len);
	memset(b, 0, sizeof(*b));
}

void tfk_csv_batch_reset(struct tfk_csv_batch *b)
{
	tfk_buf_reset(&b->text);
	b->n_cell = b->n_row = 0;
	clear_output(b);
}

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t nc;
	void *nv;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap : 64;
	while (nc < need)
		nc *= 2;
	nv = tfk_realloc(*v, nc * size);
	if (!nv)
		return TFK_ENOMEM;
	*v = nv;
	*cap = nc;
	return 0;
}

/* Reading ------------------------------------------------------------- */

struct tfk_csv_reader {
	struct tfk_in *in;	/* NULL: memory source */
	const uint8_t *mem;
	size_t mem_len, mem_off;
	char *path;
	int delim;
	const uint8_t *w;	/* window */
	size_t n;		/* bytes visible */
	size_t pos;		/* parse position in the window */
	int eof;		/* nothing more beyond the window */
	int bom_done;
	uint64_t base;		/* stream offset of w[0] */
	uint64_t line;		/* line number at pos */
	size_t step;
};

enum { ROW = 1, BLANK = 2, END = 0, NEED = 3 };

/* Only gzip counts as compressed: a zlib header is two bytes that plain
 * text can start with ("x " is one), and nobody gzips CSV as zlib. */
static int sniff_plain(const uint8_t *p, size_t n)
{
	return !(n >= 2 && p[0] == 0x1f && p[1] == 0x8b);
}

static int check_delim(int delim, struct tfk_err *err)
{
	if (delim < 0 || delim > 255 || delim == '"' || delim == '\n' ||
	    delim == '\r')
		return tfk_errf(err, TFK_EINVAL, "delimiter must be one byte, "
				"not a quote, CR or LF");
	return 0;
}

static struct tfk_csv_reader *reader_new(const char *name, int delim)
{
	struct tfk_csv_reader *r = tfk_calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->path = tfk_strdup(name);
	if (!r->path) {
		tfk_free(r);
		return NULL;
	}
	r->delim = delim;
	r->line = 1;
	r->step = 1u << 20;
	return r;
}

int tfk_csv_open(struct tfk_csv_reader **rp, const char *path, int delim,
		 struct tfk_err *err)
{
	struct tfk_csv_reader *r;
	int rc;

	*rp = NULL;
	if ((rc = check_delim(delim, err)))
		return rc;
	r = reader_new(!path || !strcmp(path, "-") ? "<stdin>" : path, delim);
	if (!r)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = tfk_in_open(&r->in, path, TFK_COMP_AUTO, sniff_plain, err);
	if (rc) {
		tfk_csv_close(r);
		return rc;
	}
	*rp = r;
	return 0;
}

int tfk_csv_open_mem(struct tfk_csv_reader **rp, const char *name,
		     const void *p, size_t n, int delim, struct tfk_err *err)
{
	struct tfk_csv_reader *r;
	int rc;

	*rp = NULL;
	if ((rc = check_delim(delim, err)))
		return rc;
	r = reader_new(name ? name : "<memory>", delim);
	if (!r)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	r->mem = p ? p : (const void *)"";
	r->mem_len = p ? n : 0;
	*rp = r;
	return 0;
}

void tfk_csv_close(struct tfk_csv_reader *r)
{
	if (!r)
		return;
	tfk_in_close(r->in);
	tfk_free(r->path);
	tfk_free(r);
}

uint64_t tfk_csv_offset(const struct tfk_csv_reader *r)
{
	return r->base + r->pos;
}

uint64_t tfk_csv_size(const struct tfk_csv_reader *r)
{
	return r->in ? tfk_in_size(r->in) : r->mem_len;
}

const char *tfk_csv_path(const struct tfk_csv_reader *r)
{
	return r->path;
}

void tfk_csv_set_step(struct tfk_csv_reader *r, size_t step)
{
	r->step = step ? step : 1;
}

/* Drop the parsed bytes and make more visible. */
static int refill(struct tfk_csv_reader *r, struct tfk_err *err)
{
	size_t rem = r->n - r->pos, want;

	if (rem > TFK_CSV_MAX_ROW)
		return tfk_errf(err, TFK_ECORRUPT, "%s:%" PRIu64 ":1: row longer "
				"than %u bytes (an unterminated quote?)",
				r->path, r->line, TFK_CSV_MAX_ROW);
	r->base += r->pos;
	want = rem + (rem > r->step ? rem : r->step);
	if (r->in) {
		ssize_t got;

		tfk_in_consume(r->in, r->pos);
		r->pos = 0;
		got = tfk_in_fill(r->in, want, &r->w, err);
		if (got < 0)
			return (int)got;
		r->n = (size_t)got;
		r->eof = r->n < want;
	} else {
		r->mem_off += r->pos;
		r->pos = 0;
		r->w = r->mem + r->mem_off;
		r->n = r->mem_len - r->mem_off;
		if (r->n > want)
			r->n = want;
		r->eof = r->mem_off + r->n == r->mem_len;
	}
	return 0;
}

/* Index of the first delimiter or LF in p[0..n), or n. */
static inline size_t scan_plain(const uint8_t *p, size_t n, int delim)
{
	size_t i = 0;

#if defined(__SSE2__)
	const __m128i vd = _mm_set1_epi8((char)delim);
	const __m128i vn = _mm_set1_epi8('\n');

	for (; i + 16 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(p + i));
		int m = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(x, vd),
						       _mm_cmpeq_epi8(x, vn)));

		if (m)
			return i + (size_t)__builtin_ctz((unsigned)m);
	}
#endif
	for (; i < n; i++)
		if (p[i] == delim || p[i] == '\n')
			return i;
	return n;
}

static inline uint32_t col32(size_t c)
{
	return c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

/* Marks a quoted field holding "" until the row's text is in place. */
#define ESCAPED 0x80000000u

/* Turn "" into " in the n bytes at p; returns the new length. */
static uint32_t unescape(uint8_t *p, uint32_t n)
{
	uint32_t i, k = 0;

	for (i = 0; i < n; i++) {
		p[k++] = p[i];
		if (p[i] == '"')
			i++;	/* the second quote of the pair */
	}
	return k;
}

/*
 * Parse one row at r->pos into b. Returns ROW, BLANK (an empty line,
 * skipped), END, NEED (the row runs past the window: b is unchanged)
 * or a negative error. Cells get offsets into the row's raw bytes,
 * which are copied into b->text once the row is complete.
 */
static int scan_row(struct tfk_csv_reader *r, struct tfk_csv_batch *b,
		    struct tfk_err *err)
{
	const uint8_t *w = r->w, *end, *p, *ls, *row0;
	const int delim = r->delim;
	const size_t cell0 = b->n_cell;
	uint32_t dl = 0, nf = 0;
	int quoted = 0, escapes = 0;
	struct tfk_csv_row row;
	struct tfk_csv_cell *c;
	size_t raw;

	if (!w)
		return NEED;	/* nothing read yet */
	end = w + r->n;
	if (!r->bom_done) {
		if (r->n - r->pos < 3 && !r->eof)
			return NEED;
		if (r->n - r->pos >= 3 && !memcmp(w + r->pos, "\xef\xbb\xbf", 3))
			r->pos += 3;
		r->bom_done = 1;
	}
	p = ls = row0 = w + r->pos;
	if (p == end)
		return r->eof ? END : NEED;
	for (;;) {
		if (b->n_cell == b->cap_cell &&
		    grow((void **)&b->cell, &b->cap_cell, b->n_cell + 1,
			 sizeof(*c)))
			goto oom;
		c = &b->cell[b->n_cell];
		c->col = col32((size_t)(p - ls) + 1);
		c->dline = dl;
		quoted = p < end && *p == '"';
		if (quoted) {
			const uint8_t *q, *nl;
			uint32_t l0 = dl, col0 = c->col, esc = 0;

			c->off = (uint32_t)(p + 1 - row0);
			for (q = ++p;; q += 2) {
				const uint8_t *s = q;

				q = memchr(q, '"', (size_t)(end - q));
				if (!q)
					q = end;
				for (nl = s; (nl = memchr(nl, '\n', (size_t)(q - nl)));
				     nl++) {
					dl++;
					ls = nl + 1;
				}
				if (q == end) {
					if (!r->eof)
						goto need;
					b->n_cell = cell0;
					return tfk_errf(err, TFK_ECORRUPT,
							"%s:%" PRIu64 ":%" PRIu32 ": "
							"unterminated quoted field",
							r->path, r->line + l0, col0);
				}
				if (q + 1 == end && !r->eof)
					goto need;
				if (q + 1 < end && q[1] == '"') {
					esc = ESCAPED;
					continue;
				}
				break;
			}
			c->len = (uint32_t)(q - p) | esc;
			escapes |= esc != 0;
			p = q + 1;
			if (p < end && *p != delim && *p != '\n') {
				if (*p == '\r' && p + 1 == end && !r->eof)
					goto need;
				if (!(*p == '\r' && (p + 1 == end || p[1] == '\n'))) {
					b->n_cell = cell0;
					return tfk_errf(err, TFK_ECORRUPT,
							"%s:%" PRIu64 ":%zu: text after "
							"closing quote",
							r->path, r->line + dl,
							(size_t)(p - ls) + 1);
				}
				p++;	/* the CR of CRLF, or a final CR */
			}
		} else {
			size_t k = scan_plain(p, (size_t)(end - p), delim);
			const uint8_t *e = p + k;

			if (e == end && !r->eof)
				goto need;
			/* the CR of a CRLF (or of a final line) is no data */
			if (k && e[-1] == '\r' && (e == end || *e == '\n'))
				k--;
			c->off = (uint32_t)(p - row0);
			c->len = (uint32_t)k;
			p = e;
		}
		b->n_cell++;
		if (++nf > TFK_CSV_MAX_FIELDS) {
			b->n_cell = cell0;
			return tfk_errf(err, TFK_ECORRUPT, "%s:%" PRIu64 ":%" PRIu32
					": more than %u fields in a row",
					r->path, r->line + dl, c->col,
					TFK_CSV_MAX_FIELDS);
		}
		if (p < end && *p == delim) {
			p++;
			continue;
		}
		break;	/* LF or end of input */
	}
	raw = (size_t)(p - row0);
	if (raw > TFK_CSV_MAX_ROW) {
		b->n_cell = cell0;
		return tfk_errf(err, TFK_ECORRUPT, "%s:%" PRIu64 ":1: row longer "
				"than %u bytes", r->path, r->line, TFK_CSV_MAX_ROW);
	}
	row.cell = cell0;
	row.n_cells = nf;
	row.end_col = col32((size_t)(p - ls) + 1);
	row.end_dline = dl;
	row.line = r->line;
	if (p < end)	/* the LF */
		p++, dl++;
	r->line += dl;
	r->pos = (size_t)(p - w);
	if (nf == 1 && !quoted && b->cell[cell0].len == 0) {
		b->n_cell = cell0;
		return BLANK;
	}
	if ((b->n_row == b->cap_row &&
	     grow((void **)&b->row, &b->cap_row, b->n_row + 1, sizeof(row))) ||
	    tfk_buf_reserve(&b->text, raw + 16)) {
		b->n_cell = cell0;
		b->text.oom = 0;
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	row.text_off = b->text.len;
	memcpy(b->text.data + b->text.len, row0, raw);
	if (escapes) {
		size_t i;

		for (i = cell0; i < b->n_cell; i++) {
			c = &b->cell[i];
			if (c->len & ESCAPED)
				c->len = unescape(b->text.data + row.text_off + c->off,
						  c->len & ~ESCAPED);
		}
	}
	b->text.len += raw;
	b->row[b->n_row++] = row;
	return ROW;
need:
	b->n_cell = cell0;
	return NEED;
oom:
	b->n_cell = cell0;
	return tfk_errf(err, TFK_ENOMEM, "out of memory");
}

long tfk_csv_read(struct tfk_csv_reader *r, struct tfk_csv_batch *b,
		  size_t max_rows, size_t max_bytes, struct tfk_err *err)
{
	size_t added = 0;

	/* cell offsets are 32-bit: a batch stays well below 4 GiB */
	if (max_bytes > (1u << 30))
		max_bytes = 1u << 30;
	while (added < max_rows) {
		int rc = scan_row(r, b, err);

		if (rc == ROW) {
			added++;
			if (b->text.len >= max_bytes)
				break;
		} else if (rc == END) {
			break;
		} else if (rc == NEED) {
			if ((rc = refill(r, err)) < 0)
				return rc;
		} else if (rc < 0) {
			return rc;
		}
	}
	return (long)added;
}

/* Numbers ------------------------------------------------------------- */

static inline int is_ws(int c)
{
	return c == ' ' || c == '\t';
}

static inline void trim(const char **p, const char **e)
{
	while (*p < *e && is_ws((unsigned char)**p))
		(*p)++;
	while (*e > *p && is_ws((unsigned char)(*e)[-1]))
		(*e)--;
}

static inline int parse_int64(const char *s, size_t n, int64_t *v)
{
	const char *p = s, *e = s + n;
	uint64_t x = 0;
	int neg = 0;

	if (n && (is_ws((unsigned char)*p) || is_ws((unsigned char)e[-1])))
		trim(&p, &e);
	if (p < e && (*p == '-' || *p == '+'))
		neg = *p++ == '-';
	if (p == e)
		return -1;
	while (e - p > 19 && *p == '0')
		p++;
	if (e - p > 19)
		return -1;
	/* 19 digits cannot overflow a uint64 */
	for (; p < e; p++) {
		unsigned d = (unsigned)(unsigned char)*p - '0';

		if (d > 9)
			return -1;
		x = x * 10 + d;
	}
	if (x > (uint64_t)INT64_MAX + neg)
		return -1;
	*v = neg ? (int64_t)(0 - x) : (int64_t)x;
	return 0;
}

int tfk_csv_parse_int64(const char *p, size_t n, int64_t *v)
{
	return parse_int64(p, n, v);
}

static const double pow10d[23] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

static int word_is(const char *p, const char *e, const char *w)
{
	size_t n = strlen(w);

	return (size_t)(e - p) == n && !strncasecmp(p, w, n);
}

/* strtof of p[0..e), which the caller checked is a decimal or a word. */
static int slow_float(const char *p, const char *e, float *v)
{
	char small[128], *s = small;
	size_t n = (size_t)(e - p);

	if (n >= sizeof(small)) {
		s = tfk_malloc(n + 1);
		if (!s)
			return -1;
	}
	memcpy(s, p, n);
	s[n] = '\0';
	*v = strtof(s, NULL);
	if (s != small)
		tfk_free(s);
	return 0;
}

static inline const char *digits(const char *p, const char *e)
{
	while (p < e && (unsigned)(*p - '0') <= 9)
		p++;
	return p;
}

static inline int parse_float(const char *s, size_t n, float *v)
{
	const char *p = s, *e = s + n, *t, *i0, *i1, *f0 = NULL, *f1 = NULL;
	uint64_t m = 0;
	long ex = 0;
	int neg = 0;

	if (n && (is_ws((unsigned char)*p) || is_ws((unsigned char)e[-1])))
		trim(&p, &e);
	t = p;
	if (p < e && (*p == '-' || *p == '+'))
		neg = *p++ == '-';
	if (p == e)
		return -1;
	if (*p != '.' && (unsigned)(*p - '0') > 9) {
		if (word_is(p, e, "inf") || word_is(p, e, "infinity") ||
		    word_is(p, e, "nan"))
			return slow_float(t, e, v);
		return -1;
	}
	i0 = p;
	i1 = p = digits(p, e);
	if (p < e && *p == '.') {
		f0 = p + 1;
		f1 = p = digits(f0, e);
	}
	if (i1 == i0 && f1 == f0)
		return -1;	/* no digits at all */
	if (p < e && (*p == 'e' || *p == 'E')) {
		const char *d0;
		int eneg = 0;

		if (++p < e && (*p == '-' || *p == '+'))
			eneg = *p++ == '-';
		d0 = p;
		for (; p < e && (unsigned)(*p - '0') <= 9; p++)
			if (ex < 100000)
				ex = ex * 10 + (*p - '0');
		if (p == d0)
			return -1;
		if (eneg)
			ex = -ex;
	}
	if (p != e)
		return -1;
	/* at most 19 digits, or 19 after leading zeros: exact in m */
	while (i0 < i1 && *i0 == '0')
		i0++;
	if (i0 == i1 && f0)
		while (f0 < f1 && *f0 == '0') {
			f0++;
			ex--;
		}
	if ((i1 - i0) + (f1 - f0) > 19)
		return slow_float(t, e, v);
	for (; i0 < i1; i0++)
		m = m * 10 + (unsigned)(*i0 - '0');
	for (; f0 < f1; f0++, ex--)
		m = m * 10 + (unsigned)(*f0 - '0');
	if (m == 0) {
		*v = neg ? -0.0f : 0.0f;
		return 0;
	}
	if (m <= (UINT64_C(1) << 53) && ex >= -22 && ex <= 22) {
		double d = (double)m;
		uint64_t bits;

		d = ex < 0 ? d / pow10d[-ex] : d * pow10d[ex];
		memcpy(&bits, &d, sizeof(bits));
		/* normal float range, and not a float midpoint (the low
		 * 29 of the 52 fraction bits are exactly 1000...0) */
		if (d >= (double)FLT_MIN && d < 0x1p127 &&
		    (bits & 0x1fffffff) != 0x10000000) {
			float f = (float)d;

			*v = neg ? -f : f;
			return 0;
		}
	}
	return slow_float(t, e, v);
}

int tfk_csv_parse_float(const char *p, size_t n, float *v)
{
	return parse_float(p, n, v);
}

int tfk_csv_classify(const char *p, size_t n)
{
	int64_t i;
	float f;

	if (!parse_int64(p, n, &i))
		return TFK_FEAT_INT64;
	if (!parse_float(p, n, &f))
		return TFK_FEAT_FLOAT;
	return TFK_FEAT_BYTES;
}

/* Tables -------------------------------------------------------------- */

void tfk_csv_table_init(struct tfk_csv_table *t)
{
	memset(t, 0, sizeof(*t));
}

void tfk_csv_table_release(struct tfk_csv_table *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n_col; i++) {
		struct tfk_csv_col *c = &t->col[i];

		if (c->feat != c->name)
			tfk_free(c->feat);
		tfk_free(c->name);
		tfk_free(c->def);
		tfk_free(c->key);
	}
	for (i = 0; i < t->n_na; i++)
		tfk_free(t->na[i]);
	tfk_free(t->col);
	tfk_free(t->na);
	tfk_free(t->na_len);
	tfk_free(t->sel);
	memset(t, 0, sizeof(*t));
}

int tfk_csv_table_add_column(struct tfk_csv_table *t, const char *name,
			     size_t len, struct tfk_err *err)
{
	struct tfk_csv_col *c, *v;

	if (memchr(name, '\0', len))
		return tfk_errf(err, TFK_ECORRUPT, "column %zu: name holds a "
				"NUL byte", t->n_col + 1);
	v = tfk_realloc(t->col, (t->n_col + 1) * sizeof(*v));
	if (!v)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	t->col = v;
	c = &t->col[t->n_col];
	memset(c, 0, sizeof(*c));
	c->name = tfk_malloc(len + 1);
	if (!c->name)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	memcpy(c->name, name, len);
	c->name[len] = '\0';
	c->feat = c->name;
	t->n_col++;
	return 0;
}

long tfk_csv_table_find(const struct tfk_csv_table *t, const char *name)
{
	long found = -1;
	size_t i;

	for (i = 0; i < t->n_col; i++) {
		if (strcmp(t->col[i].name, name))
			continue;
		if (found >= 0)
			return -2;
		found = (long)i;
	}
	return found;
}

static struct tfk_csv_col *need_col(struct tfk_csv_table *t, const char *name,
				    struct tfk_err *err)
{
	long i = tfk_csv_table_find(t, name);

	if (i == -2) {
		tfk_errf(err, TFK_EINVAL, "column name '%s' is ambiguous "
			 "(two columns have it)", name);
		return NULL;
	}
	if (i < 0) {
		tfk_errf(err, TFK_ENOTFOUND, "no column '%s'", name);
		return NULL;
	}
	return &t->col[i];
}

/* *dst := a copy of value, freeing the old string unless it is keep
 * (a column's feature name starts as its column name). */
static int set_str(char **dst, const char *keep, const char *value,
		   struct tfk_err *err)
{
	char *d = tfk_strdup(value);

	if (!d)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (*dst != keep)
		tfk_free(*dst);
	*dst = d;
	return 0;
}

int tfk_csv_table_select(struct tfk_csv_table *t, const char *name,
			 struct tfk_err *err)
{
	struct tfk_csv_col *c = need_col(t, name, err);

	if (!c)
		return err ? err->code : TFK_EINVAL;
	c->selected = 1;
	t->selecting = 1;
	return 0;
}

int tfk_csv_table_set_label(struct tfk_csv_table *t, const char *name,
			    const char *feat_name, struct tfk_err *err)
{
	struct tfk_csv_col *c = need_col(t, name, err);
	int rc;

	if (!c)
		return err ? err->code : TFK_EINVAL;
	rc = set_str(&c->feat, c->name, feat_name, err);
	if (!rc)
		c->selected = 1;
	return rc;
}

int tfk_csv_table_set_kind(struct tfk_csv_table *t, const char *name,
			   int kind, struct tfk_err *err)
{
	struct tfk_csv_col *c;

	if (kind != TFK_FEAT_INT64 && kind != TFK_FEAT_FLOAT &&
	    kind != TFK_FEAT_BYTES)
		return tfk_errf(err, TFK_EINVAL, "column '%s': type must be "
				"int64, float or bytes", name);
	c = need_col(t, name, err);
	if (!c)
		return err ? err->code : TFK_EINVAL;
	c->kind = kind;
	c->forced = 1;
	return 0;
}

int tfk_csv_table_set_default(struct tfk_csv_table *t, const char *name,
			      const char *value, struct tfk_err *err)
{
	struct tfk_csv_col *c = need_col(t, name, err);

	if (!c)
		return err ? err->code : TFK_EINVAL;
	return set_str(&c->def, NULL, value, err);
}

int tfk_csv_table_add_na(struct tfk_csv_table *t, const char *value,
			 struct tfk_err *err)
{
	char **v = tfk_realloc(t->na, (t->n_na + 1) * sizeof(*v));
	size_t *l;

	if (!v)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	t->na = v;
	l = tfk_realloc(t->na_len, (t->n_na + 1) * sizeof(*l));
	if (!l)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	t->na_len = l;
	v[t->n_na] = tfk_strdup(value);
	if (!v[t->n_na])
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	l[t->n_na] = strlen(value);
	t->n_na++;
	return 0;
}

static inline int is_missing(const struct tfk_csv_table *t, const char *p,
			     size_t n)
{
	size_t i;

	if (n == 0)
		return 1;
	for (i = 0; i < t->n_na; i++)
		if (t->na_len[i] == n && !memcmp(t->na[i], p, n))
			return 1;
	return 0;
}

int tfk_csv_table_is_na(const struct tfk_csv_table *t, const char *p,
			size_t n)
{
	return is_missing(t, p, n);
}

/* Inference order: nothing < int64 < float < bytes. */
static int kind_rank(int kind)
{
	switch (kind) {
	case TFK_FEAT_INT64: return 1;
	case TFK_FEAT_FLOAT: return 2;
	case TFK_FEAT_BYTES: return 3;
	}
	return 0;
}

static int widen(int a, int b)
{
	return kind_rank(b) > kind_rank(a) ? b : a;
}

static int is_selected(const struct tfk_csv_table *t, size_t j)
{
	return !t->selecting || t->col[j].selected;
}

void tfk_csv_table_observe(struct tfk_csv_table *t,
			   const struct tfk_csv_batch *b)
{
	size_t r, j;

	for (r = 0; r < b->n_row; r++) {
		const struct tfk_csv_row *row = &b->row[r];

		if (row->n_cells != t->n_col)
			continue;
		for (j = 0; j < t->n_col; j++) {
			struct tfk_csv_col *c = &t->col[j];
			const struct tfk_csv_cell *cell = &b->cell[row->cell + j];
			const char *p = (const char *)b->text.data +
					row->text_off + cell->off;

			if (c->forced || c->seen == TFK_FEAT_BYTES ||
			    !is_selected(t, j) || is_missing(t, p, cell->len))
				continue;
			c->seen = widen(c->seen, tfk_csv_classify(p, cell->len));
		}
	}
}

static const char *kind_name(int kind)
{
	return kind == TFK_FEAT_INT64 ? "int64" :
	       kind == TFK_FEAT_FLOAT ? "float" : "bytes";
}

int tfk_csv_table_resolve(struct tfk_csv_table *t, struct tfk_err *err)
{
	size_t j, k, n = 0;

	tfk_free(t->sel);
	t->sel = tfk_malloc((t->n_col ? t->n_col : 1) * sizeof(*t->sel));
	if (!t->sel)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	t->row_fixed = 16;
	for (j = 0; j < t->n_col; j++) {
		struct tfk_csv_col *c = &t->col[j];
		size_t len = strlen(c->feat);
		uint8_t *q;

		if (!is_selected(t, j))
			continue;
		c->selected = 1;
		if (!c->name[0])
			return tfk_errf(err, TFK_EINVAL, "column %zu has an "
					"empty name", j + 1);
		for (k = 0; k < n; k++)
			if (!strcmp(t->col[t->sel[k]].feat, c->feat))
				return tfk_errf(err, TFK_EINVAL, "two features "
						"called '%s' (columns %zu and %zu)",
						c->feat, t->sel[k] + 1, j + 1);
		if (!c->forced) {
			c->kind = c->seen;
			if (c->def && c->def[0])
				c->kind = widen(c->kind,
						tfk_csv_classify(c->def,
								 strlen(c->def)));
			if (c->kind == TFK_FEAT_NONE)
				c->kind = TFK_FEAT_BYTES;
		}
		if (c->def) {
			size_t dn = strlen(c->def);

			if ((c->kind == TFK_FEAT_INT64 &&
			     parse_int64(c->def, dn, &c->def_i)) ||
			    (c->kind == TFK_FEAT_FLOAT &&
			     parse_float(c->def, dn, &c->def_f)))
				return tfk_errf(err, TFK_EINVAL, "column '%s': "
						"default '%s' is not %s %s",
						c->name, c->def,
						c->kind == TFK_FEAT_INT64 ? "an" : "a",
						kind_name(c->kind));
			if (c->kind == TFK_FEAT_BYTES)
				t->row_fixed += dn;
		}
		tfk_free(c->key);
		c->key_len = 1 + tfk_varint_size(len) + len + 1;
		c->key = tfk_calloc(1, c->key_len + 16);
		if (!c->key)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		q = c->key;
		*q++ = 0x0a;
		q = tfk_varint_put(q, len);
		memcpy(q, c->feat, len);
		q[len] = 0x12;
		/* entry tag and length, feature length, list headers and
		 * the largest varint value */
		t->row_fixed += c->key_len + 48;
		t->sel[n++] = j;
	}
	t->n_sel = n;
	if (!n)
		return tfk_errf(err, TFK_EINVAL, "no columns selected");
	t->resolved = 1;
	return 0;
}

/* Encoding ------------------------------------------------------------ */

enum { V_VALUE, V_EMPTY };

struct val {
	int state;
	int64_t i;
	float f;
	const char *p;
	size_t n;
};

/* A value for a message: quoted, shortened, control bytes escaped. */
static void quote_value(char *out, size_t cap, const char *p, size_t n)
{
	size_t i, k = 0;

	out[k++] = '\'';
	for (i = 0; i < n && k + 8 < cap; i++) {
		unsigned char ch = (unsigned char)p[i];

		if (i == 40) {
			k += (size_t)snprintf(out + k, cap - k, "...");
			break;
		}
		if (ch < 0x20 || ch == 0x7f)
			k += (size_t)snprintf(out + k, cap - k, "\\x%02x", ch);
		else
			out[k++] = (char)ch;
	}
	out[k++] = '\'';
	out[k] = '\0';
}

/* Locate and describe why row r is bad; returns the message code. */
static int describe_bad(const struct tfk_csv_table *t,
			const struct tfk_csv_batch *b, size_t r, size_t j,
			int why, const char *path, struct tfk_err *err)
{
	const struct tfk_csv_row *row = &b->row[r];
	const struct tfk_csv_cell *cell;
	char v[128];

	if (why == TFK_CSV_BAD_COUNT) {
		uint64_t line = row->line + row->end_dline;
		uint32_t col = row->end_col;

		if (row->n_cells > t->n_col) {
			cell = &b->cell[row->cell + t->n_col];
			line = row->line + cell->dline;
			col = cell->col;
		}
		return tfk_errf(err, TFK_ECORRUPT, "%s:%" PRIu64 ":%" PRIu32
				": expected %zu field%s, found %" PRIu32,
				path, line, col, t->n_col,
				t->n_col == 1 ? "" : "s", row->n_cells);
	}
	cell = &b->cell[row->cell + j];
	if (why == TFK_CSV_BAD_MISSING)
		return tfk_errf(err, TFK_ECORRUPT, "%s:%" PRIu64 ":%" PRIu32
				": column '%.60s': missing value and no default",
				path, row->line + cell->dline, cell->col,
				t->col[j].name);
	quote_value(v, sizeof(v), (const char *)b->text.data + row->text_off +
		    cell->off, cell->len);
	return tfk_errf(err, TFK_ECORRUPT, "%s:%" PRIu64 ":%" PRIu32
			": column '%.60s': %s is not %s %s", path,
			row->line + cell->dline, cell->col, t->col[j].name, v,
			t->col[j].kind == TFK_FEAT_INT64 ? "an" : "a",
			kind_name(t->col[j].kind));
}

/* Copy n bytes; short runs as one 16-byte move, which the caller
 * allows by having 16 bytes readable at src and writable at dst. */
static inline void copy16(uint8_t *dst, const void *src, size_t n)
{
#if defined(__SSE2__)
	if (n <= 16) {
		_mm_storeu_si128((__m128i *)dst,
				 _mm_loadu_si128((const __m128i *)src));
		return;
	}
#endif
	memcpy(dst, src, n);
}

/* "0a LEN key" of a map entry whose value part is rest bytes long. */
static inline uint8_t *put_key(uint8_t *q, const struct tfk_csv_col *c,
			       size_t rest)
{
	size_t len = c->key_len + rest;

	*q++ = 0x0a;
	if (len < 0x80)
		*q++ = (uint8_t)len;
	else
		q = tfk_varint_put(q, len);
	copy16(q, c->key, c->key_len);
	return q + c->key_len;
}

/* An empty list of the column's kind: Feature "tag 00". */
static inline uint8_t *put_empty(uint8_t *q, const struct tfk_csv_col *c)
{
	q = put_key(q, c, 3);
	q[0] = 2;
	q[1] = c->kind == TFK_FEAT_INT64 ? 0x1a :
	       c->kind == TFK_FEAT_FLOAT ? 0x12 : 0x0a;
	q[2] = 0;
	return q + 3;
}

static inline uint8_t *put_float(uint8_t *q, const struct tfk_csv_col *c,
				 float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	q = put_key(q, c, 9);
	q[0] = 8;		/* Feature length */
	q[1] = 0x12;		/* float_list */
	q[2] = 6;
	q[3] = 0x0a;		/* packed value */
	q[4] = 4;
	q[5] = (uint8_t)u;
	q[6] = (uint8_t)(u >> 8);
	q[7] = (uint8_t)(u >> 16);
	q[8] = (uint8_t)(u >> 24);
	return q + 9;
}

static inline uint8_t *put_int64(uint8_t *q, const struct tfk_csv_col *c,
				 int64_t i)
{
	size_t vs = tfk_varint_size((uint64_t)i);

	q = put_key(q, c, 5 + vs);
	q[0] = (uint8_t)(4 + vs);	/* Feature length */
	q[1] = 0x1a;			/* int64_list */
	q[2] = (uint8_t)(2 + vs);
	q[3] = 0x0a;			/* packed value */
	q[4] = (uint8_t)vs;
	return tfk_varint_put(q + 5, (uint64_t)i);
}

/* pad: 16 bytes are readable at p (the batch text), so short values
 * may be copied with one move. */
static inline uint8_t *put_bytes(uint8_t *q, const struct tfk_csv_col *c,
				 const char *p, size_t n, int pad)
{
	size_t bl = 1 + tfk_varint_size(n) + n;
	size_t fl = 1 + tfk_varint_size(bl) + bl;

	q = put_key(q, c, tfk_varint_size(fl) + fl);
	q = tfk_varint_put(q, fl);		/* Feature length */
	*q++ = 0x0a;			/* bytes_list */
	q = tfk_varint_put(q, bl);
	*q++ = 0x0a;			/* value */
	q = tfk_varint_put(q, n);
	if (pad)
		copy16(q, p, n);
	else
		memcpy(q, p, n);
	return q + n;
}

/*
 * Parse and write row r's features at q. Fills v (for the statistics)
 * and returns the end, or NULL with *why and *bad_col for a bad row.
 */
static uint8_t *put_row(const struct tfk_csv_table *t,
			const struct tfk_csv_batch *b, size_t r,
			struct val *v, uint8_t *q, int *why, size_t *bad_col)
{
	const struct tfk_csv_row *row = &b->row[r];
	const struct tfk_csv_cell *cells = &b->cell[row->cell];
	const char *text = (const char *)b->text.data + row->text_off;
	size_t k;

	for (k = 0; k < t->n_sel; k++) {
		size_t j = t->sel[k];
		const struct tfk_csv_col *c = &t->col[j];
		const char *p = text + cells[j].off;
		size_t n = cells[j].len;
		struct val *x = &v[k];

		x->state = V_VALUE;
		if (n == 0 || (t->n_na && is_missing(t, p, n))) {
			if (c->def) {
				x->i = c->def_i;
				x->f = c->def_f;
				x->p = c->def;
				x->n = strlen(c->def);
			} else if (t->missing == TFK_CSV_EMPTY) {
				x->state = V_EMPTY;
				q = put_empty(q, c);
				continue;
			} else if (t->missing == TFK_CSV_ERROR) {
				*bad_col = j;
				*why = TFK_CSV_BAD_MISSING;
				return NULL;
			} else {
				x->i = 0;
				x->f = 0.0f;
				x->p = "";
				x->n = 0;
			}
			if (c->kind == TFK_FEAT_INT64)
				q = put_int64(q, c, x->i);
			else if (c->kind == TFK_FEAT_FLOAT)
				q = put_float(q, c, x->f);
			else
				q = put_bytes(q, c, x->p, x->n, 0);
			continue;
		}
		switch (c->kind) {
		case TFK_FEAT_INT64:
			if (parse_int64(p, n, &x->i))
				goto bad;
			q = put_int64(q, c, x->i);
			break;
		case TFK_FEAT_FLOAT:
			if (parse_float(p, n, &x->f))
				goto bad;
			q = put_float(q, c, x->f);
			break;
		default:
			x->p = p;
			x->n = n;
			q = put_bytes(q, c, p, n, 1);
			break;
		}
		continue;
bad:
		*bad_col = j;
		*why = TFK_CSV_BAD_VALUE;
		return NULL;
	}
	return q;
}

/* 1 if p[0..n) is ASCII, the common case of valid UTF-8. */
static inline int ascii(const char *p, size_t n)
{
	uint64_t acc = 0, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		acc |= w;
	}
	for (; i < n; i++)
		acc |= (uint8_t)p[i];
	return !(acc & UINT64_C(0x8080808080808080));
}

/* Render a sample as schema.c does (text cut at 40 characters). */
static int sample(struct tfk_schema_feat *sf, int kind, const struct val *x)
{
	struct tfk_buf b;
	char *s;

	tfk_buf_init(&b);
	if (kind == TFK_FEAT_INT64) {
		tfk_buf_addf(&b, "%" PRId64, x->i);
	} else if (kind == TFK_FEAT_FLOAT) {
		if (isnan(x->f))
			tfk_buf_adds(&b, "\"NaN\"");
		else if (isinf(x->f))
			tfk_buf_adds(&b, x->f > 0 ? "\"Infinity\"" : "\"-Infinity\"");
		else
			tfk_buf_add_float(&b, x->f);
	} else if (!tfk_utf8_valid((const uint8_t *)x->p, x->n)) {
		tfk_buf_adds(&b, "{\"b64\": \"");
		tfk_buf_add_base64(&b, (const uint8_t *)x->p,
				   x->n < TFK_SCHEMA_SAMPLE_B64 ?
				   x->n : TFK_SCHEMA_SAMPLE_B64);
		tfk_buf_adds(&b, "\"}");
	} else {
		size_t i, chars = 0;

		for (i = 0; i < x->n; i++)
			if (((uint8_t)x->p[i] & 0xc0) != 0x80 &&
			    chars++ == TFK_SCHEMA_SAMPLE_CHARS)
				break;
		tfk_buf_add_json_str(&b, x->p, i);
	}
	tfk_buf_addc(&b, '\0');
	s = tfk_buf_ok(&b) ? tfk_strdup((const char *)b.data) : NULL;
	tfk_buf_release(&b);
	if (!s)
		return TFK_ENOMEM;
	sf->samples[sf->n_samples++] = s;
	return 0;
}

static int observe_row(const struct tfk_csv_table *t, struct tfk_schema *s,
		       const struct val *v)
{
	size_t k;

	for (k = 0; k < t->n_sel; k++) {
		struct tfk_schema_feat *sf = &s->feat[k];
		const struct val *x = &v[k];
		int kind = t->col[t->sel[k]].kind;
		uint64_t n = x->state == V_EMPTY ? 0 : 1;

		sf->count++;
		if (n < sf->len_min)
			sf->len_min = n;
		if (n > sf->len_max)
			sf->len_max = n;
		sf->len_sum += (double)n;
		sf->n_len++;
		sf->n_values += n;
		if (!n)
			continue;
		if (kind == TFK_FEAT_FLOAT) {
			double d = x->f;

			if (!isfinite(d)) {
				sf->n_nonfinite++;
			} else if (!sf->has_range) {
				sf->vmin = sf->vmax = d;
				sf->has_range = 1;
			} else if (d < sf->vmin) {
				sf->vmin = d;
			} else if (d > sf->vmax) {
				sf->vmax = d;
			}
		} else if (kind == TFK_FEAT_INT64) {
			if (!sf->has_range) {
				sf->imin = sf->imax = x->i;
				sf->vmin = sf->vmax = (double)x->i;
				sf->has_range = 1;
			} else if (x->i < sf->imin) {
				sf->imin = x->i;
				sf->vmin = (double)x->i;
			} else if (x->i > sf->imax) {
				sf->imax = x->i;
				sf->vmax = (double)x->i;
			}
		} else {
			if (x->n < sf->size_min)
				sf->size_min = x->n;
			if (x->n > sf->size_max)
				sf->size_max = x->n;
			sf->size_sum += (double)x->n;
			/* "text" until a value is not UTF-8, then "binary"
			 * for good, as tfk_schema_observe */
			if (sf->content[0] != 'b') {
				if (!ascii(x->p, x->n) &&
				    !tfk_utf8_valid((const uint8_t *)x->p, x->n))
					strcpy(sf->content, "binary");
				else if (!sf->content[0])
					strcpy(sf->content, "text");
			}
		}
		if (sf->n_samples < TFK_SCHEMA_SAMPLES && sample(sf, kind, x))
			return TFK_ENOMEM;
	}
	s->records++;
	return 0;
}

int tfk_csv_encode(const struct tfk_csv_table *t, struct tfk_csv_batch *b,
		   const char *path, int skip_bad, struct tfk_err *err)
{
	struct val *v;
	size_t r, k;
	int rc = 0;

	clear_output(b);
	for (k = 0; k < t->n_sel; k++) {
		struct tfk_schema_feat *sf =
			tfk_schema_feature(&b->stats, t->col[t->sel[k]].feat);

		if (!sf)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		sf->kind = t->col[t->sel[k]].kind;
	}
	if (b->n_row > b->cap_rec) {
		size_t *o = tfk_realloc(b->rec_off, b->n_row * sizeof(*o));

		if (o)
			b->rec_off = o;
		o = o ? tfk_realloc(b->rec_len, b->n_row * sizeof(*o)) : NULL;
		if (!o)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		b->rec_len = o;
		b->cap_rec = b->n_row;
	}
	v = tfk_malloc((t->n_sel ? t->n_sel : 1) * sizeof(*v));
	if (!v)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (r = 0; r < b->n_row; r++) {
		const struct tfk_csv_row *row = &b->row[r];
		size_t bad_col = SIZE_MAX, text, flen;
		int why = TFK_CSV_BAD_COUNT;
		uint8_t *base, *q = NULL;

		b->rec_off[r] = b->out.len;
		b->rec_len[r] = 0;
		text = r + 1 < b->n_row ? b->row[r + 1].text_off - row->text_off :
		       b->text.len - row->text_off;
		if (tfk_buf_reserve(&b->out, t->row_fixed + text)) {
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
			break;
		}
		/* the Example header goes into the 6 bytes before q */
		base = b->out.data + b->out.len;
		if (row->n_cells == t->n_col)
			q = put_row(t, b, r, v, base + 6, &why, &bad_col);
		if (!q) {
			struct tfk_err e;

			if (b->bad == TFK_CSV_BAD_NONE) {
				b->bad = why;
				b->bad_row = r;
				b->bad_col = bad_col;
			}
			if (!skip_bad) {
				rc = describe_bad(t, b, r, bad_col, why, path, err);
				break;
			}
			b->n_skipped++;
			if (b->n_warn < TFK_CSV_WARN_MAX) {
				describe_bad(t, b, r, bad_col, why, path, &e);
				b->warn[b->n_warn] = tfk_strdup(e.msg);
				if (b->warn[b->n_warn])
					b->n_warn++;
			}
			continue;
		}
		flen = (size_t)(q - (base + 6));
		base += 6 - 1 - tfk_varint_size(flen);
		base[0] = 0x0a;
		tfk_varint_put(base + 1, flen);
		b->rec_off[r] = (size_t)(base - b->out.data);
		b->rec_len[r] = (size_t)(q - base);
		b->out.len = (size_t)(q - b->out.data);
		b->n_written++;
		if (observe_row(t, &b->stats, v)) {
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
			break;
		}
	}
	tfk_free(v);
	return rc;
}

void tfk_csv_table_schema(const struct tfk_csv_table *t, struct tfk_schema *s)
{
	size_t k;

	for (k = 0; k < t->n_sel; k++) {
		const struct tfk_csv_col *c = &t->col[t->sel[k]];
		struct tfk_schema_feat *f;

		if (c->kind != TFK_FEAT_BYTES)
			continue;
		f = (struct tfk_schema_feat *)tfk_schema_find(s, c->feat);
		if (f && !strcmp(f->content, "text"))
			snprintf(f->encoding, sizeof(f->encoding), "utf-8");
	}
}
