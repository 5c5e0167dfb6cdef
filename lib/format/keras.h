/*
 * keras.h - Keras model files: Keras 3 `.keras` archives and legacy
 * tf_keras `.h5` files, read whole into a model config and weights.
 *
 * Byte layouts (both are Keras' own, described in keras/src/saving/
 * saving_lib.py and tf_keras/src/saving/legacy/hdf5_format.py):
 *
 *   .keras   a zip archive (stored or deflated) of
 *              config.json       {"module": "keras", "class_name":
 *                                 "Sequential", "config": {...},
 *                                 "compile_config": {...} or null, ...}
 *              metadata.json     {"keras_version": "3.x", ...}
 *              model.weights.h5  HDF5: /layers/<layer>/vars/<i> datasets
 *                                (i = 0, 1, ...: the layer's variables in
 *                                creation order), sub-objects of a layer
 *                                (an RNN's cell) as groups beside vars:
 *                                /layers/lstm/cell/vars/0; /optimizer/vars
 *                                and /vars (the model's own) are not
 *                                weights of a layer.
 *   .h5      HDF5 (signature 89 48 44 46 0d 0a 1a 0a at byte 0) whose
 *            root attributes are model_config (JSON text, the model's
 *            to_json()) and training_config (JSON text, compile()'s
 *            settings, optional); group /model_weights has attribute
 *            layer_names (strings), one group per layer with attribute
 *            weight_names ("dense/kernel:0", ...) and each weight as a
 *            dataset at that path under the layer's group.
 *
 * A file is recognised by its first bytes (zip "PK\3\4" or the HDF5
 * signature), not its name. Weights are float32 (HDF5 floats of any
 * width are converted) or int64 (integers); rank at most TFK_MAX_RANK.
 * HDF5's own error printing is switched off; every failure is a
 * message naming the file and the object: "m.keras: model.weights.h5:
 * /layers/dense/vars/0: not a dataset".
 */
#ifndef TFK_KERAS_H
#define TFK_KERAS_H

#include "graph/tensor.h"
#include "util/err.h"

#include <jansson.h>
#include <stddef.h>

struct tfk_keras_weight {
	char *name;		/* tf_keras: "dense/kernel" (":0" dropped);
				 * Keras 3: "vars/0", "cell/vars/1" */
	struct tfk_tensor t;	/* owned */
};

struct tfk_keras_layer {
	char *name;		/* the layer's name */
	int n_w;
	struct tfk_keras_weight *w;	/* in the file's order */
};

struct tfk_kerasfile {
	int legacy;		/* 1: a tf_keras .h5 file */
	char *version;		/* keras_version, or NULL */
	json_t *model;		/* {"class_name": ..., "config": ...} */
	json_t *compile;	/* compile_config (Keras 3) or training_config
				 * (tf_keras); NULL when saved uncompiled */
	int n_layers;		/* layers with weights, file order */
	struct tfk_keras_layer *layers;
};

/*
 * Read the Keras file at path. 0, TFK_EIO (cannot read), TFK_ECORRUPT
 * (not a zip / HDF5 file, a member or attribute missing or malformed,
 * JSON that does not parse), TFK_EINVAL (a weight of an unsupported
 * type or rank), TFK_ENOMEM; *kf NULL on failure.
 */
int tfk_kerasfile_read(struct tfk_kerasfile **kf, const char *path,
		       struct tfk_err *err);
/* The same from data[0..n); name is used in messages. */
int tfk_kerasfile_parse(struct tfk_kerasfile **kf, const char *name,
			const void *data, size_t n, struct tfk_err *err);
void tfk_kerasfile_free(struct tfk_kerasfile *kf);

/*
 * Write kf as a Keras 3 .keras archive at path, atomically (io/out.h):
 * config.json is kf->model's "class_name" and "config" with module
 * "keras" and compile_config kf->compile (null when NULL);
 * metadata.json carries keras_version kf->version (default "3.0.0");
 * model.weights.h5 holds each layer's weights under
 * /layers/<layer>/<weight name> (the names as the reader gives them:
 * "vars/0", "cell/vars/1"; groups made as needed), float32 and int64
 * datasets, plus the empty /vars group of the model itself. 0, TFK_EIO
 * ("PATH: ..."), TFK_EINVAL (a weight name that is not a path of
 * "vars/<i>" under groups), TFK_ENOMEM.
 */
int tfk_kerasfile_write(const struct tfk_kerasfile *kf, const char *path,
			struct tfk_err *err);

/* 1 when the n bytes at p start a .keras (zip) or HDF5 file. */
int tfk_kerasfile_sniff(const void *p, size_t n);

/* The layer named name, or NULL. */
const struct tfk_keras_layer *tfk_kerasfile_layer(
	const struct tfk_kerasfile *kf, const char *name);

#endif
