/*
 * csv.h - CSV (RFC 4180) to tf.Example: a streaming tokenizer, exact
 * number parsing, type inference and the record encoder behind tfk-csv.
 *
 * Dialect (RFC 4180 plus what real files do):
 *   - fields are separated by one delimiter byte (',' by default) and
 *     rows end with CRLF or LF; a CR before the LF is not data;
 *   - a field that starts with '"' is quoted: it may hold delimiters,
 *     CR, LF, and '""' for one '"'; after the closing quote only a
 *     delimiter, a row end or the end of input may follow;
 *   - a '"' inside an unquoted field is data (Python's csv module
 *     agrees; RFC 4180 does not allow it, TensorFlow refuses it);
 *   - a UTF-8 byte order mark at the start of input is skipped;
 *   - empty lines are skipped (pandas does the same); the last row
 *     needs no line end.
 * Line and column numbers in messages are 1-based; columns count bytes
 * from the start of the line, so "a.csv:12:7" is where an editor that
 * counts bytes puts the cursor.
 *
 * Data flow: tfk_csv_read tokenizes rows into a tfk_csv_batch, copying
 * the (unquoted) field bytes into the batch, so a batch outlives the
 * input window and can be encoded on another thread. A tfk_csv_table
 * says which columns become which features with which types;
 * tfk_csv_encode turns a batch into serialized Examples plus schema
 * statistics, touching nothing shared (the table is read only), so
 * batches encode in parallel and give the same bytes for every -j.
 *
 * Example layout written (field numbers from TensorFlow's example.proto
 * and feature.proto): one Feature per selected column, in file column
 * order, each a list of one value (int64 and float packed, as
 * TensorFlow writes them), or an empty list for a missing value under
 * TFK_CSV_EMPTY.
 */
#ifndef TFK_CSV_H
#define TFK_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "example/example.h"
#include "example/schema.h"
#include "util/buf.h"
#include "util/err.h"

/* A row longer than this is refused (most likely an unterminated
 * quote), so a stream is read in bounded memory. */
#define TFK_CSV_MAX_ROW (64u << 20)
/* At most this many fields in one row. */
#define TFK_CSV_MAX_FIELDS (1u << 20)

/* Batches ------------------------------------------------------------- */

/* One field of a row: its bytes, unquoted, at text.data + row text_off
 * + off. A row's text is its raw bytes (delimiters included), with
 * quoted fields unescaped in place, and at least 16 readable bytes
 * follow the end of the text (for 16-byte copies). */
struct tfk_csv_cell {
	uint32_t off;
	uint32_t len;
	uint32_t col;		/* column of its first byte (the quote) */
	uint32_t dline;		/* lines after the row's first line */
};

struct tfk_csv_row {
	size_t text_off;	/* where its text starts in batch->text */
	size_t cell;		/* index of its first cell */
	uint32_t n_cells;
	uint32_t end_col;	/* where the row ends (for "too few fields") */
	uint32_t end_dline;
	uint64_t line;		/* line where the row starts */
};

/* Why tfk_csv_encode refused a row. */
enum tfk_csv_bad {
	TFK_CSV_BAD_NONE = 0,
	TFK_CSV_BAD_COUNT,	/* wrong number of fields */
	TFK_CSV_BAD_VALUE,	/* not a number of the column's type */
	TFK_CSV_BAD_MISSING	/* missing value, no default, TFK_CSV_ERROR */
};

#define TFK_CSV_WARN_MAX 5

struct tfk_csv_batch {
	struct tfk_buf text;	/* field bytes of every row, back to back */
	struct tfk_csv_cell *cell;
	size_t n_cell, cap_cell;
	struct tfk_csv_row *row;
	size_t n_row, cap_row;

	/* Filled by tfk_csv_encode. Record r is out.data[rec_off[r]] for
	 * rec_len[r] bytes; rec_len is 0 for a skipped row (an Example is
	 * never empty: it has at least its Features header). */
	struct tfk_buf out;
	size_t *rec_off, *rec_len;
	size_t cap_rec;
	uint64_t n_written, n_skipped;
	/* The first bad row (the error when not skipping): row index,
	 * column index in the table (or SIZE_MAX), why. */
	size_t bad_row, bad_col;
	int bad;
	/* With skipping: messages of the first TFK_CSV_WARN_MAX bad rows. */
	char *warn[TFK_CSV_WARN_MAX];
	size_t n_warn;
	/* Statistics of the written records, one feature per selected
	 * column in order (see tfk_csv_encode). */
	struct tfk_schema stats;
};

void tfk_csv_batch_init(struct tfk_csv_batch *b);
void tfk_csv_batch_release(struct tfk_csv_batch *b);
/* Forget the rows and the encoded output, keep the memory. */
void tfk_csv_batch_reset(struct tfk_csv_batch *b);

/* Field f of row r: *p (not NUL-terminated) and its length. */
static inline const char *tfk_csv_field(const struct tfk_csv_batch *b,
					size_t r, size_t f, size_t *len)
{
	const struct tfk_csv_cell *c = &b->cell[b->row[r].cell + f];

	*len = c->len;
	return (const char *)b->text.data + b->row[r].text_off + c->off;
}

/* Reading ------------------------------------------------------------- */

struct tfk_csv_reader;

/*
 * Open path ("-" or NULL: stdin) for reading; gzip and zlib input is
 * detected and inflated (lib/io/in.h). delim is the field delimiter,
 * any byte but '"', CR and LF. Errors: TFK_EINVAL (delimiter), TFK_EIO,
 * TFK_ENOMEM.
 */
int tfk_csv_open(struct tfk_csv_reader **r, const char *path, int delim,
		 struct tfk_err *err);
/* The same over p[0..n) (borrowed until close); name is for messages. */
int tfk_csv_open_mem(struct tfk_csv_reader **r, const char *name,
		     const void *p, size_t n, int delim, struct tfk_err *err);
void tfk_csv_close(struct tfk_csv_reader *r);

/*
 * Append up to max_rows rows to b (fewer when the batch holds more than
 * max_bytes bytes of row text, checked after each row). Returns the
 * number of rows added, 0 at the end of input, or a negative code:
 *   TFK_ECORRUPT  "a.csv:12:7: unterminated quoted field", "... text
 *                 after closing quote", row or field count over the
 *                 limits above
 *   TFK_EIO, TFK_ENOMEM, and errors of compressed input
 * After an error b holds the rows read before it; stop reading.
 */
long tfk_csv_read(struct tfk_csv_reader *r, struct tfk_csv_batch *b,
		  size_t max_rows, size_t max_bytes, struct tfk_err *err);

/* Bytes of (decompressed) input consumed so far. */
uint64_t tfk_csv_offset(const struct tfk_csv_reader *r);
/* Size of a plain regular file, else UINT64_MAX. */
uint64_t tfk_csv_size(const struct tfk_csv_reader *r);
/* The path for messages ("<stdin>" for stdin). */
const char *tfk_csv_path(const struct tfk_csv_reader *r);
/* Test hook: how many more bytes to ask of the input at a time
 * (default 1 MiB; 1 makes every row cross a window boundary). */
void tfk_csv_set_step(struct tfk_csv_reader *r, size_t step);

/* Values -------------------------------------------------------------- */

/*
 * Parse a whole field as an int64: optional spaces/tabs around an
 * optional sign and decimal digits (TensorFlow allows the spaces).
 * Returns 0, or -1 when the text is not that or overflows int64.
 */
int tfk_csv_parse_int64(const char *p, size_t n, int64_t *v);
/*
 * Parse a whole field as a float: optional spaces/tabs around a decimal
 * number ([+-]digits[.digits][(e|E)[+-]digits], digits on at least one
 * side of the point) or inf, infinity, nan (any case, signed). The
 * result is bit-identical to strtof of the same text (round to nearest
 * even; overflow gives +-inf). Returns 0 or -1.
 */
int tfk_csv_parse_float(const char *p, size_t n, float *v);
/* TFK_FEAT_INT64 if the field parses as int64, else TFK_FEAT_FLOAT if
 * as float, else TFK_FEAT_BYTES: the inference order of TensorFlow's
 * make_csv_dataset. */
int tfk_csv_classify(const char *p, size_t n);

/* Tables: columns -> features ---------------------------------------- */

/* What a missing value (empty, or one of the NA strings) becomes when
 * its column has no default. */
enum tfk_csv_missing {
	TFK_CSV_FILL = 0,	/* the type's zero: 0, 0.0, "" (make_csv_dataset) */
	TFK_CSV_EMPTY,		/* an empty value list */
	TFK_CSV_ERROR		/* a bad row (CsvDataset's required column) */
};

struct tfk_csv_col {
	char *name;		/* column name (header or given) */
	char *feat;		/* feature name: name, or the label's name */
	int selected;
	int kind;		/* TFK_FEAT_*: given, or set by _resolve */
	int forced;		/* kind given by the user */
	int seen;		/* widest kind seen while inferring */
	char *def;		/* default text, or NULL */
	int64_t def_i;
	float def_f;
	/* private: the map entry's key part, "0a L name 12" */
	uint8_t *key;
	size_t key_len;
};

struct tfk_csv_table {
	struct tfk_csv_col *col;
	size_t n_col;
	int missing;		/* enum tfk_csv_missing */
	char **na;		/* extra strings read as missing */
	size_t *na_len;
	size_t n_na;
	int selecting;		/* tfk_csv_table_select was called */
	int resolved;
	/* private, set by _resolve */
	size_t *sel;		/* indexes of selected columns */
	size_t n_sel;
	size_t row_fixed;	/* output bytes bound per row, without text */
};

void tfk_csv_table_init(struct tfk_csv_table *t);
void tfk_csv_table_release(struct tfk_csv_table *t);

/* Add a column called name[0..len) (copied). Errors: TFK_ENOMEM. */
int tfk_csv_table_add_column(struct tfk_csv_table *t, const char *name,
			     size_t len, struct tfk_err *err);
/* Index of the column called name, -1 when none, -2 when ambiguous
 * (two columns share it). */
long tfk_csv_table_find(const struct tfk_csv_table *t, const char *name);

/* Configuration, before tfk_csv_table_resolve. Each names a column;
 * errors are TFK_ENOTFOUND "no column 'x'", TFK_EINVAL "column name
 * 'x' is ambiguous" or a bad value, TFK_ENOMEM. */
/* Keep only selected columns (once called, unselected ones are
 * dropped; the label is always kept). */
int tfk_csv_table_select(struct tfk_csv_table *t, const char *name,
			 struct tfk_err *err);
/* Write column name as feature feat_name. */
int tfk_csv_table_set_label(struct tfk_csv_table *t, const char *name,
			    const char *feat_name, struct tfk_err *err);
/* Force a column's kind (TFK_FEAT_INT64, FLOAT or BYTES). */
int tfk_csv_table_set_kind(struct tfk_csv_table *t, const char *name,
			   int kind, struct tfk_err *err);
/* Value used for a missing value of the column (text, parsed by
 * _resolve; it takes part in type inference). */
int tfk_csv_table_set_default(struct tfk_csv_table *t, const char *name,
			      const char *value, struct tfk_err *err);
/* A string read as missing in every column (the empty field always
 * is). */
int tfk_csv_table_add_na(struct tfk_csv_table *t, const char *value,
			 struct tfk_err *err);

/* 1 if field p[0..n) is missing: empty or an NA string. */
int tfk_csv_table_is_na(const struct tfk_csv_table *t, const char *p,
			size_t n);

/* Type inference: widen each unforced selected column's seen kind by
 * the values of b's rows that have the right number of fields. */
void tfk_csv_table_observe(struct tfk_csv_table *t,
			   const struct tfk_csv_batch *b);
/*
 * Fix the kinds (forced, else the widest seen, bytes when nothing was
 * seen), parse the defaults, check feature names (non-empty, unique)
 * and prepare encoding. Errors: TFK_EINVAL "column 'x': default 'y' is
 * not an int64", "two features called 'x'", "column 3 has an empty
 * name", "no columns selected".
 */
int tfk_csv_table_resolve(struct tfk_csv_table *t, struct tfk_err *err);

/*
 * Encode every row of b as a serialized Example into b->out (see the
 * batch fields) and its statistics into b->stats (reset first: one
 * feature per selected column, in order, records = rows written). The
 * table must be resolved; it is only read, so batches may be encoded
 * concurrently. path names the input in messages.
 *
 * A bad row (wrong field count, value not of its column's type, missing
 * value under TFK_CSV_ERROR) is skipped and counted when skip_bad is
 * set; otherwise encoding stops there and returns TFK_ECORRUPT with
 *   "a.csv:12:7: column 'age': 'abc' is not an int64"
 *   "a.csv:12:9: expected 3 fields, found 4"
 *   "a.csv:12:3: column 'x': missing value and no default"
 * and b->bad_row/bad_col/bad tell which. Errors: TFK_ENOMEM.
 */
int tfk_csv_encode(const struct tfk_csv_table *t, struct tfk_csv_batch *b,
		   const char *path, int skip_bad, struct tfk_err *err);

/*
 * Finish a schema whose statistics came from tfk_csv_encode batches
 * (merged with tfk_schema_merge): text columns get encoding "utf-8".
 */
void tfk_csv_table_schema(const struct tfk_csv_table *t, struct tfk_schema *s);

#endif
