/*
 * kerasfile.h - a Keras model file (format/keras.h: .keras or tf_keras
 * .h5) as a training spec and as the weights of the model built from it.
 *
 * Weights map onto the model's variables (named "<layer>/<weight>", see
 * model.h) layer by layer:
 *   - Keras 3 (.keras): the i-th of the layer's vars in the file is the
 *     layer's i-th variable in the model (both are the creation order:
 *     kernel, bias; gamma, beta, moving_mean, moving_variance; an RNN
 *     cell's kernel, recurrent_kernel, bias);
 *   - tf_keras (.h5): by name ("dense/kernel:0" is "dense/kernel").
 * Every variable of the model must get exactly one weight of its shape,
 * and every weight in the file must land: anything else is an error
 * naming the layer and the weight.
 */
#ifndef TFK_KERASFILE_H
#define TFK_KERASFILE_H

#include "format/keras.h"
#include "nn/model.h"
#include "nn/spec.h"
#include "util/err.h"

/*
 * Copy kf's weights into m's variables (path: the file, for messages:
 * "m.keras: layer 'dense': vars/0 is float32 [4, 3], the model's
 * dense/kernel is [4, 8]"). m is unchanged on failure. 0, TFK_EINVAL.
 */
int tfk_kerasfile_apply(const struct tfk_kerasfile *kf, const char *path,
			struct tfk_model *m, struct tfk_err *err);

/*
 * A training spec from the file alone: "model" is the file's model
 * config, "compile" its compile settings (Keras 3 compile_config or
 * tf_keras training_config: optimizer, loss, loss_weights, metrics;
 * for several outputs metrics per output, tf_keras' "<output>_<name>"
 * metric names back to the names compile() was given), so that
 * `tfk-train --init-from m.keras` and `tfk-eval m.keras` need no spec
 * file. The spec's name (for messages) is "PATH: config". A file saved
 * without compile() gives a spec without "compile" (tfk_spec_compile
 * then says the loss is required). 0, TFK_EINVAL (a compile setting
 * tfkit has no equivalent for, e.g. weighted_metrics), TFK_ENOMEM.
 */
int tfk_kerasfile_spec(const struct tfk_kerasfile *kf, const char *path,
		       struct tfk_spec **s, struct tfk_err *err);

/*
 * The model's weights as a Keras 3 file's layers, for
 * tfk_kerasfile_write: each layer's variables in graph order as
 * "vars/<i>", an RNN cell's ("lstm/lstm_cell/kernel") as "cell/vars/<i>"
 * (the attribute Keras 3 saves a cell under), each layer named by its
 * Keras 3 file key (its class in snake case, "_1", "_2" for repeats in
 * the config's order: a Dense named "a" may be "dense_1"; the HDF5
 * group's "name" attribute is that key too); model is the Keras model
 * object (class_name, config), compile the spec's compile section or
 * NULL, both copied. *kf NULL on failure. 0, TFK_ENOMEM.
 */
int tfk_kerasfile_of_model(struct tfk_model *m, const json_t *model,
			   const json_t *compile, struct tfk_kerasfile **kf,
			   struct tfk_err *err);

#endif
