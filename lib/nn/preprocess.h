/*
 * preprocess.h - Keras preprocessing layers from JSON into graph ops.
 *
 * A spec (tfk-map(1)) names features and, for each, a list of Keras
 * layer objects exactly as layer.get_config()/model.to_json() give them:
 *
 *   {"features": {
 *      "image": [ {"class_name": "Rescaling",
 *                  "config": {"scale": 0.00392156862745098}}, ... ],
 *      "pixels": {"layers": [ ... ], "output": "x", "shape": [28, 28, 1]}
 *   }}
 *
 * A chain is either the layer list or an object with "layers" and
 * optional "output" (the output feature name; default the input's),
 * "shape" (the per-record shape of the feature's values: raw image
 * bytes are uint8 [h, w, c], float/int64 lists are reshaped) and
 * "channels" (for DecodeImage). A first layer {"class_name":
 * "DecodeImage", "config": {"channels": 3}} (a tfkit name: TF's
 * tf.io.decode_image, which Keras has no layer for) decodes JPEG, PNG,
 * GIF or BMP bytes; it runs before the graph, because a decoded image's
 * size is only known from its bytes and the executor plans memory from
 * shapes.
 *
 * Layers expand to ops of the graph IR (graph.h): Rescaling -> Cast, Mul,
 * AddV2; Normalization -> Cast, Sub, RealDiv (invert: Mul, AddV2);
 * Resizing -> ResizeBilinear/NearestNeighbor/Bicubic/Area (after a Slice
 * with crop_to_aspect_ratio); CenterCrop, RandomCrop, RandomFlip, RandomRotation, RandomTranslation, RandomZoom,
 * RandomContrast -> the op of that name (kernels/cpu/preprocess.c);
 * Discretization -> Bucketize, Cast (+ CategoryEncoding); Hashing (+
 * CategoryEncoding in the dense modes),
 * CategoryEncoding, StringLookup, IntegerLookup -> the op of that name
 * (kernels/cpu/categorical.c), lookups with their vocabulary as a tensor
 * attr. Lookups without a vocabulary and Discretization without
 * bin_boundaries are learned by tfk-map --adapt (building them before is
 * an error); invert and sparse are refused; tf_idf
 * (lookups and TextVectorization) needs idf_weights with a given
 * vocabulary, and --adapt learns both; TextVectorization -> the op of
 * that name (int mode needs output_sequence_length). Bytes features without "shape" or DecodeImage
 * are string tensors [n] (one element per value), for the lookups and
 * Hashing.
 *
 * Config keys Keras always writes and that change nothing here (name,
 * trainable, dtype, autocast, seed, data_format "channels_last") are
 * accepted; any other unknown key is an error naming its JSON path:
 *   "prep.json: features.image[2].config.factor: expected a number".
 */
#ifndef TFK_PREPROCESS_H
#define TFK_PREPROCESS_H

#include "graph/graph.h"
#include "graph/tensor.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

struct tfk_prep;

/* One chain's input and output, as the caller feeds and collects them. */
struct tfk_prep_input {
	const char *feature;	/* input feature name (NUL-terminated) */
	const char *output;	/* output feature name */
	char feed[32];		/* Placeholder name: "prep/in<i>" */
	char fetch[32];		/* output name: "prep/out<i>" */
	int decode;		/* 1: bytes are decoded as an image first */
	int channels;		/* DecodeImage channels (0: as stored) */
	int rank;		/* -1: no "shape" (a list is rank 1 [n]) */
	int64_t shape[TFK_MAX_RANK];
};

/*
 * Parse spec text[0..len); path names it in messages. Every layer is
 * checked here, so a bad spec fails before any data is read. 0, or
 * TFK_EINVAL ("PATH: JSON.PATH: what"), TFK_ENOMEM; *p NULL on failure.
 */
int tfk_prep_parse(struct tfk_prep **p, const char *path, const char *text,
		   size_t len, struct tfk_err *err);
/* Read the file path and parse it (TFK_EIO when unreadable). */
int tfk_prep_load(struct tfk_prep **p, const char *path,
		  struct tfk_err *err);
void tfk_prep_free(struct tfk_prep *p);

int tfk_prep_n_inputs(const struct tfk_prep *p);
/* Chain i's description (borrowed; valid until tfk_prep_free). */
const struct tfk_prep_input *tfk_prep_input(const struct tfk_prep *p, int i);

/*
 * Add every chain to g: a Placeholder in->feed of dtype dtypes[i] (what
 * the feature holds: uint8 for image bytes, float32, int64) and the
 * per-record shape (in->shape, or [-1] for a list, [-1, -1, c] for a
 * decoded image), the layers' ops, and the named output in->fetch.
 * Errors ("PATH: features.x[1]: ...", e.g. a Normalization without
 * mean and variance, or an image layer on a rank-1 feature) leave g
 * with the nodes added so far.
 */
int tfk_prep_build(const struct tfk_prep *p, struct tfk_graph *g,
		   const enum tfk_dtype *dtypes, struct tfk_err *err);

/* Adapt ------------------------------------------------------------------ */

/*
 * The next layer that needs adapting: TFK_PREP_ADAPT_NORM (a
 * Normalization whose mean or variance is null), TFK_PREP_ADAPT_TEXT
 * (a TextVectorization without vocabulary), TFK_PREP_ADAPT_LOOKUP (a
 * String/IntegerLookup without vocabulary) or TFK_PREP_ADAPT_DISC (a
 * Discretization without bin_boundaries), with *chain and *layer; 0
 * when none.
 */
enum { TFK_PREP_ADAPT_NORM = 1, TFK_PREP_ADAPT_TEXT = 2,
       TFK_PREP_ADAPT_LOOKUP = 3, TFK_PREP_ADAPT_DISC = 4 };
int tfk_prep_next_adapt(const struct tfk_prep *p, int *chain, int *layer);

/*
 * TextVectorization adapt (it must be first in its chain, reading the
 * feature's bytes): _new, then _add for each document (each bytes value
 * of each record), then _finish writes the vocabulary Keras would learn
 * (get_vocabulary(): "", "[UNK]", then tokens by frequency) into the
 * layer's config as "vocabulary", and in tf_idf mode Keras' weights as
 * "idf_weights" (one per vocabulary entry). Errors: TFK_EINVAL,
 * TFK_ENOMEM.
 */
struct tfk_prep_tadapt;
int tfk_prep_tadapt_new(struct tfk_prep *p, int chain, int layer,
			struct tfk_prep_tadapt **t, struct tfk_err *err);
int tfk_prep_tadapt_add(struct tfk_prep_tadapt *t, const char *s, size_t n,
			struct tfk_err *err);
int tfk_prep_tadapt_finish(struct tfk_prep_tadapt *t, struct tfk_err *err);
void tfk_prep_tadapt_free(struct tfk_prep_tadapt *t);
/*
 * Build only chain `chain`'s layers before `layer` (the adapt input),
 * with its Placeholder as tfk_prep_build and output "prep/adapt".
 */
int tfk_prep_build_adapt(const struct tfk_prep *p, struct tfk_graph *g,
			 int chain, int layer, enum tfk_dtype dtype,
			 struct tfk_err *err);
/*
 * Normalization statistics of that layer: the mean/variance along its
 * axis (n = size of the last axis; n 1 with axis null), written into the
 * spec's config as Keras' "mean" and "variance" lists. How many values
 * the layer wants for an input of last dimension d: tfk_prep_adapt_n.
 */
int tfk_prep_adapt_n(const struct tfk_prep *p, int chain, int layer,
		     int64_t last_dim);
int tfk_prep_set_norm(struct tfk_prep *p, int chain, int layer,
		      const double *mean, const double *var, int n,
		      struct tfk_err *err);
/*
 * String/IntegerLookup adapt (the lookup must be first in its chain,
 * reading the feature's bytes / int64 values; _is_int says which): _add
 * or _add_int each value, _end_doc after each record (a document, for
 * document counts), _finish runs tfk_lookup_adapt (Keras' order,
 * max_tokens, mask and OOV tokens dropped) and writes get_vocabulary()
 * (special tokens first) into the config as "vocabulary" (tf_idf: and
 * "idf_weights", as TextVectorization). TFK_EINVAL when nothing was
 * learned.
 */
struct tfk_prep_ladapt;
int tfk_prep_ladapt_new(struct tfk_prep *p, int chain, int layer,
			struct tfk_prep_ladapt **t, struct tfk_err *err);
int tfk_prep_ladapt_is_int(const struct tfk_prep_ladapt *t);
int tfk_prep_ladapt_add(struct tfk_prep_ladapt *t, const void *s, size_t n,
			struct tfk_err *err);
int tfk_prep_ladapt_add_int(struct tfk_prep_ladapt *t, int64_t v,
			    struct tfk_err *err);
void tfk_prep_ladapt_end_doc(struct tfk_prep_ladapt *t);
int tfk_prep_ladapt_finish(struct tfk_prep_ladapt *t, struct tfk_err *err);
void tfk_prep_ladapt_free(struct tfk_prep_ladapt *t);

/*
 * Discretization adapt (bin_boundaries null, num_bins and epsilon from
 * the config): _update with each batch of values (tfk-map: one record's
 * values, the output of tfk_prep_build_adapt), _finish writes Keras'
 * boundaries (discretize.h) as "bin_boundaries". TFK_EINVAL for NaN or
 * infinite values, or no values at all.
 */
struct tfk_prep_dadapt;
int tfk_prep_dadapt_new(struct tfk_prep *p, int chain, int layer,
			struct tfk_prep_dadapt **t, struct tfk_err *err);
int tfk_prep_dadapt_update(struct tfk_prep_dadapt *t, const float *v,
			   size_t n, struct tfk_err *err);
int tfk_prep_dadapt_finish(struct tfk_prep_dadapt *t, struct tfk_err *err);
void tfk_prep_dadapt_free(struct tfk_prep_dadapt *t);

/* The spec as JSON text (malloc'd, NUL-terminated; NULL: no memory). */
char *tfk_prep_dump(const struct tfk_prep *p);

/*
 * Add one preprocessing layer object of a Keras model config ({"class_name":
 * "Rescaling", "config": {...}}) to g on *x (a batch; *x gets the output):
 * Rescaling and Normalization, the layers that are elementwise. path names
 * the layer in messages ("spec.json: model.config.layers[0]"). 0,
 * TFK_EINVAL (bad config, other classes), TFK_ENOMEM.
 */
struct json_t;
int tfk_prep_layer_add(struct tfk_graph *g, const struct json_t *obj,
		       const char *path, struct tfk_port *x,
		       struct tfk_err *err);

#endif
