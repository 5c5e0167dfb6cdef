/*
 * smwrite.h - writing a SavedModel directory from a trained model
 * (lib/model/smwrite.c): the graph, its signatures, the variables as a
 * tensor bundle, and tfkit's own extras under assets.extra/.
 */
#ifndef TFK_SMWRITE_H
#define TFK_SMWRITE_H

#include "util/err.h"

#include <stddef.h>

struct tfk_model;

/*
 * Export the inference branch of m (nn/model.h: m->outputs[i].infer) as
 * a SavedModel in dir (created if missing; files already there other
 * than those below are left alone):
 *   dir/variables/variables.{index,data-00000-of-00001}  every model
 *       variable under its name ("dense/kernel"), the TF1 checkpoint keys;
 *   dir/assets.extra/tfkit_spec.json  spec_json verbatim (the training
 *       spec), when spec_json is not NULL;
 *   dir/saved_model.pb  schema version 1, one MetaGraphDef tagged
 *       "serve" (TF 2.14.0's GraphDef producer version 1569): the
 *       inputs as Placeholders named after the InputLayers, variables
 *       as VarHandleOp + ReadVariableOp, the ops under their graph
 *       names with TensorFlow's attrs, one Identity per output; the
 *       SignatureDef "serving_default" (tensorflow/serving/predict;
 *       inputs keyed by input name, outputs by output layer name, with
 *       dtype and shape, -1 batch), "__saved_model_init_op" (a NoOp),
 *       and TF1's sharded V2 SaverDef ("saver_filename:0",
 *       "save/Identity:0", "save/restore_all") over SaveV2 / RestoreV2 +
 *       AssignVariableOp nodes.
 * Every file is written under a temporary name and renamed, variables
 * first and saved_model.pb last. What TensorFlow could not load fails
 * before any file is written, TFK_EINVAL: "node NAME: op X has no
 * TensorFlow equivalent; cannot export it" (the preprocessing,
 * augmentation and lookup ops of ours), an attr TF's op lacks, "node
 * name 'a b/kernel' is not a valid TensorFlow node name". Also TFK_EIO
 * naming the file, TFK_ENOMEM.
 */
int tfk_savedmodel_write(const char *dir, const struct tfk_model *m,
			 const char *spec_json, struct tfk_err *err);

/*
 * A model input as training records hold it (tfk-train's feed, nn/
 * feed.h): the feature name, its stored dtype (TFK_DT_UINT8, INT8,
 * FLOAT, INT64, STRING) and the transform the feed applied,
 * float32(double(value) * scale + offset) for float inputs.
 */
struct tfk_savedmodel_raw {
	const char *input;	/* the model input's name */
	const char *feature;	/* the records' feature: the signature key */
	int dtype;		/* enum tfk_dtype */
	double scale, offset;
};

/* Called after variables/ and tfkit_spec.json are written and before
 * saved_model.pb, to add files of its own to extra_dir ("DIR/
 * assets.extra", created for it), each atomically. */
typedef int (*tfk_savedmodel_extra_fn)(void *ctx, const char *extra_dir,
				       struct tfk_err *err);

struct tfk_savedmodel_opts {
	const char *spec_json;	/* assets.extra/tfkit_spec.json, or NULL */
	tfk_savedmodel_extra_fn extra;	/* or NULL */
	void *ctx;			/* extra's */
	/*
	 * n_raw = m->n_inputs (or 0: no "serving_raw" signature): raw[i]
	 * describes m->inputs[i]. The graph then also has the signature
	 * "serving_raw" (tensorflow/serving/predict, the same outputs as
	 * serving_default) whose inputs are keyed by feature name and take
	 * the values as the records hold them: for a float input whose
	 * records need a transform, a Placeholder "serving_raw_FEATURE" of the
	 * stored dtype and the input's shape, then Cast to double, Mul by
	 * scale, AddV2 offset, Cast to the input's dtype (the feed's
	 * formula, so bit for bit its values), which is the default of the
	 * model input, now a PlaceholderWithDefault (serving_default still
	 * feeds it directly); other inputs (integer, string, float
	 * records fed unscaled) are the model input itself.
	 */
	int n_raw;
	const struct tfk_savedmodel_raw *raw;
};

/*
 * tfk_savedmodel_write with options (NULL: none). An error of extra
 * fails the export (saved_model.pb is then not written).
 */
int tfk_savedmodel_write_opts(const char *dir, const struct tfk_model *m,
			      const struct tfk_savedmodel_opts *o,
			      struct tfk_err *err);

/* The saved_model.pb bytes tfk_savedmodel_write would write, into
 * *data (tfk_free it) and *n. Same errors, no files. */
int tfk_savedmodel_pack(const struct tfk_model *m, void **data, size_t *n,
			struct tfk_err *err);

#endif
