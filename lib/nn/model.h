/*
 * model.h - a Keras model config (model.to_json()) expanded into ops,
 * and the losses that train it.
 *
 * tfk_keras_build reads the "config" of a Sequential or Functional model
 * (class_name + config, as model.to_json() gives, or the object under a
 * spec's "model") and adds to a graph:
 *   - one Placeholder per model input, named after its InputLayer
 *     ("input_1"), shape [-1, ...] (batch first), dtype from the layer;
 *   - one VariableV2 per weight, named as Keras names them
 *     ("dense/kernel", "dense/bias", "batch_normalization/moving_mean"),
 *     initialised from the layer's initializer config (Keras defaults:
 *     glorot_uniform kernels, zeros biases) drawn from `seed`;
 *   - the forward ops twice: once as in training (Dropout active,
 *     BatchNormalization on batch statistics) and once as in inference,
 *     both reading the same variables and placeholders. Node names:
 *     "<layer>/<Op>" for inference, "train/<layer>/<Op>" for training.
 * Layers are expanded when first called, so shared layers (a layer
 * object called on several inputs in a Functional model) share their
 * variables, and residual connections (Add of two branches) need no
 * special case.
 *
 * Unknown class names, unknown config keys and bad values are errors
 * naming the JSON path under the model: "model.config.layers[2].config.
 * units: expected a positive integer". Keys Keras always writes and that
 * change nothing here (name, trainable, dtype, batch_input_shape, ...)
 * are accepted.
 */
#ifndef TFK_MODEL_H
#define TFK_MODEL_H

#include "graph/graph.h"
#include "graph/tensor.h"
#include "util/err.h"

#include <jansson.h>
#include <stdint.h>

struct tfk_model_input {
	char *name;		/* InputLayer name = Placeholder name */
	enum tfk_dtype dtype;
	int rank;		/* with the batch dim (shape[0] = -1) */
	int64_t shape[TFK_MAX_RANK];
};

struct tfk_model_output {
	char *name;		/* the Keras layer producing it */
	struct tfk_port train;	/* the output in the training branch */
	struct tfk_port infer;	/* ... and in the inference branch */
	/* When the output layer's last op is Softmax or Sigmoid: that
	 * activation ("softmax"/"sigmoid") and its input (the logits) in
	 * each branch, so crossentropy losses can use the fused, stable
	 * from-logits form as Keras does. Else act NULL, ports node -1. */
	const char *act;
	struct tfk_port train_logits;
	struct tfk_port infer_logits;
};

struct tfk_model_var {
	int var;		/* graph variable index (tfk_graph_var_at) */
	int trainable;		/* 0: BN moving stats, frozen layers */
	float l1, l2;		/* regularizer factors (0: none) */
};

/* A non-gradient update the training step applies after each step:
 * var = var * momentum + value * (1 - momentum) (BatchNormalization's
 * moving mean and variance; value is a port of the training branch). */
struct tfk_model_update {
	int var;
	struct tfk_port value;
	float momentum;
};

struct tfk_model {
	struct tfk_graph *g;	/* owned */
	char *name;
	int n_inputs;
	struct tfk_model_input *inputs;
	int n_outputs;
	struct tfk_model_output *outputs;
	int n_vars;		/* every variable of g, in graph order */
	struct tfk_model_var *vars;
	int n_updates;
	struct tfk_model_update *updates;
	/* Sum of the weight regularization terms (float32 scalar, built
	 * on the variables), or node -1 when no layer has a regularizer. */
	struct tfk_port reg_loss;
};

/*
 * Build the model in `model` (a JSON object with "class_name"
 * "Sequential"/"Functional"/"Model" and "config"); path is the JSON path
 * of that object for messages (e.g. "spec.json: model"). 0, TFK_EINVAL
 * (message "PATH.config.layers[2].class_name: unknown layer
 * 'Conv3D'"), TFK_ENOMEM; *m NULL on failure.
 */
int tfk_keras_build(const json_t *model, const char *path, uint64_t seed,
		    struct tfk_model **m, struct tfk_err *err);
void tfk_model_free(struct tfk_model *m);

/* Losses ---------------------------------------------------------------- */

/*
 * A Keras loss by name ("mse", "mean_squared_error", "mae", "huber",
 * "binary_crossentropy", "categorical_crossentropy",
 * "sparse_categorical_crossentropy") or object ({"class_name":
 * "SparseCategoricalCrossentropy", "config": {"from_logits": true}}).
 */
struct tfk_loss_spec {
	char name[40];		/* canonical snake_case name, as above */
	int from_logits;
	float delta;		/* huber */
	float label_smoothing;	/* crossentropies */
};

/* Parse a compile.loss value. 0 or TFK_EINVAL naming path. */
int tfk_loss_parse(const json_t *v, const char *path,
		   struct tfk_loss_spec *ls, struct tfk_err *err);

/*
 * compile.loss and compile.loss_weights for every output of m, as Keras
 * 3's CompileLoss reads them: loss one loss (every output gets it), a
 * list of m->n_outputs losses in output order, or an object keyed by
 * output (layer) name with every output's key (an object with a
 * "class_name" is one loss, not a dict); loss_weights NULL/null (1
 * each), a list of m->n_outputs numbers or an object with every
 * output's key (a number alone: one-output models only). ls[] and w[]
 * have m->n_outputs elements. Errors (TFK_EINVAL) name the path and
 * the key or index: "spec.json: compile.loss: expected keys a, b (the
 * outputs), got 'c'", "spec.json: compile.loss_weights[1]: expected a
 * finite number".
 */
int tfk_loss_parse_outputs(const json_t *loss, const char *path,
			   const json_t *loss_weights, const char *wpath,
			   const struct tfk_model *m,
			   struct tfk_loss_spec *ls, float *w,
			   struct tfk_err *err);

/*
 * Add the loss of output o to m->g: y_true is the label placeholder
 * (sparse: int32/int64 [batch] or [batch, 1]; else float32 of the
 * output's shape), weight a float32 [batch] placeholder of per-example
 * weights (node -1: all 1), train selects the branch. The loss is
 * Keras' reduction SUM_OVER_BATCH_SIZE: sum(weight * per_example) /
 * batch. Uses o->*_logits when the loss is a crossentropy with
 * from_logits false and the output ends in the matching activation
 * (Keras does the same). *loss gets a float32 scalar port.
 */
int tfk_loss_build(struct tfk_model *m, int output,
		   const struct tfk_loss_spec *ls, int train,
		   struct tfk_port y_true, struct tfk_port weight,
		   struct tfk_port *loss, struct tfk_err *err);

#endif
