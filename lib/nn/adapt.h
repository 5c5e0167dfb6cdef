/*
 * adapt.h - layer.adapt(train_data) for the preprocessing layers inside
 * a Keras model config, before training: what a Keras user calls before
 * fit, done by tfk-train from the training records.
 *
 * A TextVectorization, StringLookup or IntegerLookup without
 * "vocabulary", a Normalization whose "mean" or "variance" is null and
 * a Discretization without "bin_boundaries" is adapted from the first
 * max_records records of the training files, as tfk-map --adapt adapts
 * the same layer (nn/preprocess.h: Keras' vocabulary order, OOV and mask
 * tokens, max_tokens, idf weights; population mean and variance along
 * the last axis; Keras' approximate quantiles with each record one
 * batch of update_state), and what it learned is written into the
 * layer's config object, so the model is built, checkpointed and
 * exported with it (a lookup's vocabulary goes into the SavedModel's
 * table and assets/).
 *
 * The layer must read a model input directly (the first layer after the
 * InputLayer of a Sequential model; a Functional layer whose inbound
 * node is an InputLayer): its values are the input's feature, read as
 * the feed reads it (nn/feed.h: spec "inputs" feature, dtype, scale and
 * offset). A layer fed by another layer is refused with its JSON path
 * (adapt it with tfk-map --adapt, or give its statistics).
 */
#ifndef TFK_ADAPT_H
#define TFK_ADAPT_H

#include "util/err.h"

#include <jansson.h>
#include <stddef.h>

/* How many layers of spec's model need adapting (0: none). */
int tfk_keras_adapt_needed(const json_t *spec);

/*
 * Adapt every such layer of spec (the whole spec object: "model",
 * "inputs", "labels"; changed in place) from files[0..n_files) (any
 * compression; "-" is refused, since each layer reads the records
 * again: tfk-train keeps records on stdin in memory first), at most max_records records in all (0: every record). name
 * names the spec in messages ("spec.json: model.config.layers[1]
 * (StringLookup): ..."). *n_adapted gets how many layers were adapted.
 * 0, TFK_EINVAL (a layer that cannot be adapted, no records, wrong
 * feature kinds: the record and file named), TFK_EIO, TFK_ECORRUPT,
 * TFK_ENOMEM.
 */
int tfk_keras_adapt(json_t *spec, const char *name, const char *const *files,
		    size_t n_files, long max_records, int *n_adapted,
		    struct tfk_err *err);

#endif
