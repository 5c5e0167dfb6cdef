/*
 * metric.h - Keras metrics, accumulated over batches.
 *
 * A metric is made from a compile.metrics entry: a name ("accuracy",
 * "acc", "sparse_categorical_accuracy", "categorical_accuracy",
 * "binary_accuracy", "precision", "recall", "auc", "mae", "mse", and
 * Keras' long spellings) or an object {"class_name": "AUC", "config":
 * {...}}. "accuracy" is resolved as Keras' compile_utils resolves it,
 * from the shapes: binary_accuracy for an output of last dimension 1,
 * else sparse_categorical_accuracy when y_true has a lower rank than
 * y_pred (or a last dimension 1), else categorical_accuracy (so a
 * multi-label binary crossentropy output gets categorical_accuracy, as
 * in Keras). out_last and a sparse/categorical crossentropy loss decide
 * it at creation; otherwise the first update does. Results equal Keras'
 * (float32 state, the same thresholds: AUC with 200 thresholds,
 * interpolated as Keras' default summation_method).
 *
 * Supported configs: BinaryAccuracy threshold; Precision/Recall one
 * threshold, top_k, class_id; AUC num_thresholds, curve ROC/PR,
 * summation_method interpolation/minoring/majoring, from_logits (not
 * multi_label, explicit thresholds or label_weights: refused with the
 * key's path); every class: name, dtype float32.
 */
#ifndef TFK_METRIC_H
#define TFK_METRIC_H

#include "graph/tensor.h"
#include "util/err.h"

#include <jansson.h>

struct tfk_metric;

/* loss: the canonical loss name (model.h tfk_loss_spec.name); out_last:
 * the output's last dimension (1 for a [batch] output). 0, TFK_EINVAL
 * naming path, TFK_ENOMEM. */
int tfk_metric_new(const json_t *v, const char *path, const char *loss,
		   int64_t out_last, struct tfk_metric **m,
		   struct tfk_err *err);
void tfk_metric_free(struct tfk_metric *m);

/* History key as Keras names it: a function name is its own key (the
 * name given: "accuracy", "acc", "mae", "mean_squared_error"); a class
 * (by object, or by its name "AUC", "Precision", "auc") has its config
 * name or Keras' default ("auc", "precision", "mean_absolute_error"). */
const char *tfk_metric_name(const struct tfk_metric *m);

/*
 * Accumulate a batch: y_true (int32/int64 class ids [b] or [b, 1] for
 * sparse; float32 otherwise, y_pred's shape), y_pred float32 [b, ...],
 * w per-example weights [b] or NULL. 0 or TFK_EINVAL (shapes, a class
 * id outside [0, classes)).
 */
int tfk_metric_update(struct tfk_metric *m, const struct tfk_tensor *y_true,
		      const struct tfk_tensor *y_pred, const float *w,
		      struct tfk_err *err);
double tfk_metric_result(const struct tfk_metric *m);
void tfk_metric_reset(struct tfk_metric *m);

/* The accumulated state as numbers that add across data shards (Keras'
 * metric variables, all summed across replicas): how many, a copy into
 * s, and a replacement from s (a sum of several ranks' states). */
size_t tfk_metric_state_len(const struct tfk_metric *m);
void tfk_metric_state(const struct tfk_metric *m, double *s);
void tfk_metric_set_state(struct tfk_metric *m, const double *s);

#endif
