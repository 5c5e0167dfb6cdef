/*
 * feed.h - records in, batches of tensors out: what a model's
 * placeholders are fed with while training and evaluating.
 *
 * Mapping (the spec's "inputs" and "labels", tfk-spec(5)):
 *
 *   "inputs": {"input_1": {"feature": "image", "dtype": "uint8",
 *                          "shape": [28, 28], "scale": 0.00392156862745098,
 *                          "offset": 0.0}},
 *   "labels": {"feature": "label", "dtype": "int64"}
 *
 * For each model input (keyed by its InputLayer name):
 *   feature  the Example feature that feeds it. Default: the feature of
 *            the same name when the data has one; else, when the model
 *            has one input, the only feature of the data that is not
 *            the label feature; else an error naming the candidates.
 *   dtype    how the feature's values are stored: "uint8" or "int8"
 *            (one raw byte per element of a single bytes value), "float32"
 *            (a float_list, or a single bytes value of little-endian
 *            float32s), "int64" (an int64_list), "string" (a
 *            bytes_list, one value per element: the only storage, and
 *            the default, of a string input, e.g. for StringLookup).
 *            Default: the schema sidecar's "dtype" for a bytes
 *            feature, else by the kind of the feature in the first
 *            record (bytes: uint8).
 *   shape    the shape of one record's values (a check: its element
 *            count must be the input's). Default: the input's shape.
 *            Values are reshaped to the input's shape (row-major), as
 *            raw image bytes [784] feed an input [28, 28].
 *   scale, offset   value * scale + offset, in double then cast
 *            (defaults 1 and 0: a plain cast, as the issue says; the
 *            example specs scale images by 1/255).
 * The placeholder gets the input's dtype (float32 usually; int32/int64
 * inputs, e.g. for Embedding, get the values unscaled).
 *
 * The label ("labels"), for a model with one output:
 *   feature  default "label";
 *   dtype    the label tensor's dtype: "int64" or "int32" for sparse
 *            losses (class ids, [batch]), "float32" otherwise ([batch,
 *            ...output shape]). Default int64 for sparse, else float32.
 * A model with several outputs takes one such entry per output, keyed
 * by the output's (layer) name, each with its own output's loss
 * deciding its dtype and shape; an output left out reads the feature
 * named as the output (as Keras maps y dicts by output name):
 *   "labels": {"a": {"feature": "ya"}, "b": {"feature": "yb",
 *              "dtype": "float32"}}
 * (the per-output form also serves one output: {"dense_1": {...}}).
 * The one-output form for a model with several outputs, an unknown
 * output name, and fit.class_weight with several outputs (Keras refuses
 * it) are errors naming the JSON path.
 * For a sparse loss every label must be an integer (int64 values, or
 * floats with an integral value) in [0, classes) where classes is the
 * output's last dimension; else the record is refused with its number.
 *
 * Storage: rows are kept in the feature's storage dtype (uint8 images
 * stay bytes: Fashion-MNIST's 60,000 images take 47 MB), one growable
 * array per input; labels as int64 class ids (sparse) or float32 rows.
 * A batch converts rows [start, start+n) of a permutation into tensors
 * the feed owns and reuses: one pass per row, no allocation once the
 * largest batch has been made.
 *
 * Records are tf.Example bytes, or batched records as tfk-batch writes
 * them (a first feature "_batch"; batch.h): each row of a batched
 * record is added as a row here. Messages name the file and the record
 * (and the row inside a batched record):
 *   "train.tfrecord: record 17: feature image: 780 values, input_1 needs
 *    784 (28x28)"
 *   "train.tfrecord: record 4 row 9: no feature 'label' (the label)"
 *   "train.tfrecord: record 3: no feature 'yb' (the label of b)"
 *   "train.tfrecord: record 2: feature label: 2.5 is not an integer
 *    class id (sparse_categorical_crossentropy)"
 *   "train.tfrecord: record 2: feature label: class 12 outside [0, 10)"
 *   "train.tfrecord: record 0: feature image: int64 values, expected
 *    bytes (dtype uint8)"
 * A failed add leaves the feed as it was before that record (a batched
 * record is all or nothing).
 */
#ifndef TFK_FEED_H
#define TFK_FEED_H

#include "example/schema.h"
#include "graph/tensor.h"
#include "nn/model.h"
#include "nn/spec.h"
#include "util/err.h"

#include <jansson.h>

#include <stddef.h>
#include <stdint.h>

struct tfk_feed;

struct tfk_feed_opts {
	/* The loss the labels are for (its name decides sparse or dense);
	 * NULL: no labels are read (inference). A model with several
	 * outputs takes n_loss = its outputs' count losses, one per output
	 * in output order, and a label per output. */
	const struct tfk_loss_spec *loss;
	/* Which output the labels are for (0 for single-output models;
	 * must be 0 with several outputs). */
	int output;
	/* fit.class_weight (tfk_fit), or NULL/0: batches carry no weights. */
	const float *class_weight;
	long n_class_weight;
	/* The records' schema sidecar (tfk_feed_find_schema), or NULL. It
	 * decides defaults (feature names, dtypes) before the first record
	 * and is not needed after tfk_feed_new. */
	const struct tfk_schema *schema;
	/* Losses at loss[] (0 counts as 1). */
	int n_loss;
};

/*
 * A feed for model m mapped as s's "inputs"/"labels" say (s and m must
 * outlive the feed). Checks the mapping now (unknown keys, a model
 * input missing from "inputs" with no default yet known, a shape whose
 * count differs from the input's, dtype names, the labels' outputs) and
 * finishes the defaults that need data at the first record. 0,
 * TFK_EINVAL naming the JSON path ("spec.json: inputs.input_1.shape:
 * [28, 27] has 756 elements, input_1 needs 784 (28x28)"), TFK_ENOMEM;
 * *f NULL on failure.
 */
int tfk_feed_new(struct tfk_feed **f, const struct tfk_spec *s,
		 const struct tfk_model *m, const struct tfk_feed_opts *o,
		 struct tfk_err *err);
void tfk_feed_free(struct tfk_feed *f);

/*
 * Find the schema sidecar of a records file: FILE.schema.json, else
 * FILE with its extension(s) .tfrecord[.gz|.zz|.zlib] replaced by
 * .schema.json, else for a shard PREFIX-NNNNN-of-NNNNN.tfrecord[...]
 * PREFIX.schema.json (the converters' naming). Returns 1 and reads it
 * into *schema (initialized by the call; release it), 0 when there is
 * none (stdin: none), or a negative code when one exists but does not
 * read (its message names it).
 */
int tfk_feed_find_schema(const char *records_path, struct tfk_schema *schema,
			 struct tfk_err *err);

/* Rows ---------------------------------------------------------------- */

/*
 * Add one record (a serialized tf.Example, or a batched record: all its
 * rows). file and index name it in messages. 0, TFK_ECORRUPT (the
 * Example does not decode), TFK_EINVAL (mapping: missing feature, kind,
 * count, label), TFK_ENOMEM.
 */
int tfk_feed_add(struct tfk_feed *f, const uint8_t *rec, size_t len,
		 const char *file, uint64_t index, struct tfk_err *err);
/* Every record of a TFRecord file (any compression; "-": stdin), in
 * order. Errors as tfk_rec_next and tfk_feed_add; the rows added before
 * an error stay. */
int tfk_feed_add_file(struct tfk_feed *f, const char *path,
		      struct tfk_err *err);
/* Shard shard_i of shard_n of records: *at counts the records seen so
 * far (across files, from 0), and record *at is kept when *at % shard_n
 * == shard_i (tf.data's shard, AutoShardPolicy DATA). */
int tfk_feed_add_shard(struct tfk_feed *f, const char *path, uint64_t *at,
		       uint64_t shard_i, uint64_t shard_n,
		       struct tfk_err *err);
/* Make room for rows more rows (when the count is known: one
 * allocation instead of doubling). 0 or TFK_ENOMEM. */
int tfk_feed_reserve(struct tfk_feed *f, size_t rows, struct tfk_err *err);

size_t tfk_feed_rows(const struct tfk_feed *f);
/* Bytes the stored rows take (inputs and labels). */
size_t tfk_feed_bytes(const struct tfk_feed *f);
/* Forget all rows (keeps memory). */
void tfk_feed_clear(struct tfk_feed *f);
/*
 * Streaming: drop the first n rows (n <= rows), moving the rest to the
 * front. With it, an endless stdin stream is fed batch by batch: add
 * records until rows >= batch_size, take the batch of rows [0,
 * batch_size), shift batch_size (a batched record's extra rows carry
 * over to the next batch).
 */
void tfk_feed_shift(struct tfk_feed *f, size_t n);

/* The feature name chosen for input k / the label (output 0's) (after
 * the first record or a schema decided the defaults; NULL before). */
const char *tfk_feed_input_feature(const struct tfk_feed *f, int k);
const char *tfk_feed_label_feature(const struct tfk_feed *f);
/* How input k's records hold it, once decided as above: the stored
 * dtype (UINT8, INT8, FLOAT, INT64 or STRING) and the scale and offset
 * applied (1 and 0 for integer and string inputs, which take values as
 * they are). 0, or -1 before the defaults are decided. */
int tfk_feed_input_raw(const struct tfk_feed *f, int k, enum tfk_dtype *dtype,
		       double *scale, double *offset);

/* Batches ------------------------------------------------------------- */

struct tfk_feed_batch {
	size_t n;			/* rows in this batch */
	int n_inputs;			/* = the model's */
	/* [n_inputs], in the model's input order: the input's dtype,
	 * shape [n, ...input shape]. Views of buffers the feed owns. */
	struct tfk_tensor *inputs;
	/* sparse: int64/int32 [n]; dense: float32 [n, ...output shape];
	 * no labels (opts.loss NULL): dtype TFK_DT_INVALID, data NULL. */
	struct tfk_tensor label;
	/* class weights: float32 [n], w[i] = class_weight[class of row i]
	 * (sparse: the label; dense: the argmax of a one-hot row, or the
	 * rounded value of a one-value row, as Keras); has_weight 0 and
	 * data NULL when there are no class weights. */
	int has_weight;
	struct tfk_tensor weight;
	/* [n_labels], one per model output in output order (labels[0] is
	 * label); NULL and 0 without labels. */
	int n_labels;
	struct tfk_tensor *labels;
};

/*
 * Fill *b with rows perm[start], ..., perm[start+n-1] (perm NULL: rows
 * start .. start+n-1), n >= 1, every index < rows. The tensors stay
 * valid until the next tfk_feed_batch, add, shift, clear or free.
 * 0, TFK_EINVAL (range), TFK_ENOMEM (the first time a larger batch is
 * asked for).
 */
int tfk_feed_batch(struct tfk_feed *f, const uint32_t *perm, size_t start,
		   size_t n, struct tfk_feed_batch *b, struct tfk_err *err);

/* One input's values, converted as training converts them ----------- */

/*
 * How a spec's "inputs" entry (tfk-spec(5); the one tfk-train saves in
 * its export's assets.extra/tfkit_spec.json) says records feed a float
 * input, for tools that feed the export with the records the model was
 * trained on (tfk-predict, a server): the feature named (NULL: none),
 * the element type of a single bytes value (TFK_DT_UINT8, the default
 * as in training, TFK_DT_INT8 or TFK_DT_FLOAT: little-endian float32s),
 * scale and offset (1 and 0 when absent). entry NULL: all defaults.
 * Errors (TFK_EINVAL, "WHERE.dtype: ..."): the key checks of
 * tfk_feed_new. h->feature is borrowed from entry.
 */
struct tfk_feed_how {
	const char *feature;
	enum tfk_dtype bytes_dtype;
	double scale, offset;
};
int tfk_feed_how_parse(const json_t *entry, const char *where,
		       struct tfk_feed_how *h, struct tfk_err *err);

struct tfk_feat;
/*
 * The number of values feature ft gives a float input read as h says
 * (a float or int64 list: its length; one bytes value: its bytes /
 * element size), or -1 when it cannot feed one: several bytes values,
 * a length that is not a whole number of elements.
 */
int64_t tfk_feed_feat_count(const struct tfk_feed_how *h,
			    const struct tfk_feat *ft);
/*
 * Those values as training feeds them to a float32 input: each stored
 * value v becomes (float)(v * scale + offset), computed in double (the
 * one definition of the conversion; tfk_feed_batch's faster paths give
 * the same bits). n must be tfk_feed_feat_count's count. 0 or
 * TFK_ENOMEM (a long int64 list needs a copy).
 */
int tfk_feed_feat_floats(const struct tfk_feed_how *h,
			 const struct tfk_feat *ft, float *dst, size_t n,
			 struct tfk_err *err);

#endif
