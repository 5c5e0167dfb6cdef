/*
 * batch.h - batched tf.Example records: N Examples merged into one, and
 * split back (tfk-batch, tfk-unbatch, and the trainer's input reader).
 *
 * Layout of a batched record (a plain tf.Example; see tfk-records(5),
 * BATCHED RECORDS). Consumers need no side information:
 *
 *   feature              kind    values
 *   _batch               int64   [R]  the number of rows (first feature)
 *   NAME                 any     the rows' values of NAME, row after row
 *   NAME/row_lengths     int64   [R]  only for ragged or padded NAME,
 *                                     right after NAME
 *   _batch/order         int64   [R*F] only when some row's features
 *                                     came in another order (last)
 *
 * The data features follow the order of the first row. For each NAME
 * with V values in the batched record:
 *   - no NAME/row_lengths: fixed length, every row holds L = V / R
 *     values (R must divide V); reshape as [R, L] or by the schema;
 *   - NAME/row_lengths with sum == V: ragged, row i holds the next
 *     row_lengths[i] values (tf.RaggedTensor.from_row_lengths);
 *   - NAME/row_lengths with sum != V: padded, V == R * L, row i is
 *     values[i*L, i*L + L), of which the first row_lengths[i] are data
 *     and the rest padding (tf.data's padded_batch, lengths kept).
 * A feature with no kind (NONE) stays NONE and has no values. Bytes
 * features batch like the others: a BytesList of the rows' strings.
 * Names "_batch", "_batch/order" and "*\/row_lengths" are reserved:
 * rows that carry them cannot be batched (unbatch first).
 *
 * Every row of a batch must hold the same F feature names with the same
 * kinds; the first row fixes the order of the data features. Protobuf
 * maps have no order, but TensorFlow writes them in hash order, which
 * differs from record to record; so when a row's order differs,
 * _batch/order holds, for each row, the index (among the F data
 * features, in the batched record's order) of each of its features in
 * its own wire order. Unbatching writes packed floats and int64s, as
 * TensorFlow does, so batch then unbatch gives back each record byte for
 * byte when it was encoded that way (an empty record, which has no
 * Features message, comes back as "0a 00").
 */
#ifndef TFK_BATCH_H
#define TFK_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "example/example.h"
#include "util/buf.h"
#include "util/err.h"

#define TFK_BATCH_ROWS "_batch"
#define TFK_BATCH_LENGTHS "/row_lengths"
#define TFK_BATCH_ORDER "_batch/order"

enum tfk_batch_layout {
	TFK_BATCH_FIXED = 0,	/* every row row_len values */
	TFK_BATCH_RAGGED = 1,	/* row i: row_lengths[i] values */
	TFK_BATCH_PADDED = 2	/* row i: row_len slots, row_lengths[i] data */
};

/* "fixed", "ragged", "padded". */
const char *tfk_batch_layout_name(int layout);

/* Building ------------------------------------------------------------ */

struct tfk_batch_pad {
	char *name;
	char *value;		/* parsed by the feature's kind when used */
};

struct tfk_batcher {
	/* private */
	struct tfk_batch_pad *pad;
	size_t n_pad;
	char **ragged;
	size_t n_ragged;
	size_t pad_to;		/* 0: pad to the longest row */
	struct tfk_buf out;	/* the record, after a header gap */
	struct tfk_buf tmp;	/* re-encoded rows that were not packed */
	struct tfk_buf dec;	/* values decoded on the way to tmp */
	const struct tfk_feat **rowf;	/* per row of the batch: */
	size_t *lens;		/* values */
	const uint8_t **rp;	/* packed floats or int64 varints */
	size_t *rn;		/* their bytes */
	size_t *toff;		/* offset in tmp, or SIZE_MAX */
	size_t cap;
	int64_t *order;		/* [row * F + position]: feature index */
	size_t order_cap;
};

void tfk_batcher_init(struct tfk_batcher *b);
void tfk_batcher_release(struct tfk_batcher *b);

/*
 * Settings, before the first build. tfk_batcher_pad: pad the feature
 * called name with value (an integer for int64 features, a number for
 * floats, the bytes themselves for bytes features; checked when the
 * feature's kind is known). tfk_batcher_pad_to: pad to len values
 * instead of the longest row (0: longest). tfk_batcher_ragged: write
 * name/row_lengths even when every row has the same length, so every
 * batch has the same features. Errors: TFK_ENOMEM, TFK_EINVAL (a name
 * given twice, or a reserved one).
 */
int tfk_batcher_pad(struct tfk_batcher *b, const char *name,
		    const char *value, struct tfk_err *err);
void tfk_batcher_pad_to(struct tfk_batcher *b, size_t len);
int tfk_batcher_ragged(struct tfk_batcher *b, const char *name,
		       struct tfk_err *err);

/*
 * Merge rows[0..n) (n >= 1, decoded Examples) into one batched record.
 * *p and *len get it, valid until the next build or release; nothing
 * is allocated once the buffers have grown to the largest batch.
 * Errors: TFK_EINVAL with *bad_row set to the row at fault and a message
 * naming the feature ("feature \"x\": ..."): a missing or extra feature,
 * a kind disagreement, a reserved name, a row longer than the pad
 * length, a pad value of the wrong kind; TFK_ENOMEM.
 */
int tfk_batch_build(struct tfk_batcher *b, const struct tfk_example *rows,
		    size_t n, const uint8_t **p, size_t *len, size_t *bad_row,
		    struct tfk_err *err);

/* Reading ------------------------------------------------------------- */

/* One data feature of a batched record. */
struct tfk_batch_feat {
	const char *name;	/* not NUL-terminated; borrows the record */
	size_t name_len;
	int kind;		/* enum tfk_feat_kind */
	int layout;		/* enum tfk_batch_layout */
	size_t n_values;	/* values in the batched feature */
	size_t row_len;		/* FIXED, PADDED: values (slots) per row */
	const int64_t *row_lengths; /* RAGGED, PADDED: [n_rows]; else NULL */
	const struct tfk_feat *values; /* the batched values (accessors) */
	/* private: where row i starts (RAGGED), the values decoded */
	const int64_t *row_start;
	const uint8_t *f32;	/* little-endian floats */
	const int64_t *i64;
	size_t bv;		/* first bytes value in the batch's table */
};

struct tfk_batch_bytes {
	const uint8_t *p;
	size_t len;
};

struct tfk_batch {
	size_t n_rows;
	struct tfk_batch_feat *feat;	/* in the batched record's order */
	size_t n_feat;
	/* private */
	size_t cap;
	struct tfk_example ex;
	struct tfk_buf names;
	int64_t *i64;
	size_t i64_cap;
	float *f32;
	size_t f32_cap;
	struct tfk_batch_bytes *bv;
	size_t bv_cap;
	struct tfk_buf row;
	const int64_t *order;	/* _batch/order decoded, or NULL */
};

void tfk_batch_init(struct tfk_batch *bt);
void tfk_batch_release(struct tfk_batch *bt);

/*
 * Decode and check a batched record rec[0..len); bt then describes it,
 * borrowing rec until it changes or the next parse. Errors:
 * TFK_ECORRUPT ("byte OFF: what" for a bad Example; "not a batched
 * record: ..." without a valid _batch; "feature \"x\": ..." for row
 * lengths that do not fit the values), TFK_ENOMEM.
 */
int tfk_batch_parse(struct tfk_batch *bt, const uint8_t *rec, size_t len,
		    struct tfk_err *err);

/*
 * Serialize row i (< n_rows) of the parsed batch as a tf.Example into
 * *p, *len (valid until the next call on bt). Any order; each call
 * costs the size of the row. Errors: TFK_EINVAL (i out of range),
 * TFK_ENOMEM.
 */
int tfk_batch_row(struct tfk_batch *bt, size_t i, const uint8_t **p,
		  size_t *len, struct tfk_err *err);

#endif
