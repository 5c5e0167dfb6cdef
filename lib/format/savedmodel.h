/*
 * savedmodel.h - reading a TensorFlow SavedModel directory.
 *
 * Layout (TensorFlow's, tensorflow/cc/saved_model/constants.h):
 *   DIR/saved_model.pb        a tensorflow.SavedModel (formats/saved_model.
 *                             proto): schema version and one MetaGraphDef
 *                             per tag set
 *   DIR/variables/variables.index, .data-00000-of-00001
 *                             the tensor bundle of the variables (see
 *                             format/bundle.h); absent when there are none
 *   DIR/assets/, DIR/assets.extra/, DIR/fingerprint.pb   (not read here)
 *
 * A MetaGraphDef holds: meta_info_def.tags ("serve", or {"train",
 * "serve"}), the GraphDef (nodes + the function library of TF2 models),
 * the TF1 SaverDef (restore path), collections, the SignatureDefs (key ->
 * method name and named inputs/outputs as TensorInfo: a tensor name
 * "x:0", a DataType -- reference types such as DT_FLOAT_REF (101) are
 * legal -- and a static shape that may be absent, of unknown rank, or
 * with -1 dims), asset files, and for TF2 the SavedObjectGraph.
 *
 * tfk_savedmodel_open parses saved_model.pb with protobuf-c once and
 * indexes it: meta graphs in file order, signatures and their inputs and
 * outputs sorted by key (as saved_model_cli prints them). The raw
 * protobuf-c tree stays available (graph_def, saver_def, object_graph,
 * proto) for the graph importer, which reads NodeDefs and FunctionDefs
 * directly. Everything in a struct tfk_savedmodel is owned by it and
 * valid until tfk_savedmodel_close.
 */
#ifndef TFK_SAVEDMODEL_H
#define TFK_SAVEDMODEL_H

#include "formats/saved_model.pb-c.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/* How a TensorInfo names its tensor (the proto's oneof encoding). */
enum tfk_tinfo_encoding {
	TFK_TINFO_NONE = 0,	/* no name at all */
	TFK_TINFO_NAME,		/* dense: name "x:0" */
	TFK_TINFO_COO_SPARSE,	/* SparseTensor: three tensor names */
	TFK_TINFO_COMPOSITE	/* CompositeTensor: components */
};

/* One input or output of a signature. */
struct tfk_tensor_info {
	const char *key;	/* the signature's name for it: "x" */
	const char *name;	/* graph tensor "x:0"; "" unless NAME */
	enum tfk_tinfo_encoding encoding;
	int dtype;		/* TF DataType number, as stored (101 =
				 * DT_FLOAT_REF); see tfk_savedmodel_dtype_name */
	int has_shape;		/* tensor_shape present in the proto */
	int unknown_rank;	/* shape present with unknown_rank set */
	int rank;		/* number of dims (0 when absent/unknown) */
	const int64_t *dims;	/* rank sizes, -1 = unknown */
};

struct tfk_signature {
	const char *key;	/* "serving_default" */
	const char *method_name;	/* "tensorflow/serving/predict" */
	int n_inputs;
	struct tfk_tensor_info *inputs;		/* sorted by key */
	int n_outputs;
	struct tfk_tensor_info *outputs;	/* sorted by key */
};

struct tfk_meta_graph {
	int n_tags;
	const char *const *tags;	/* file order */
	const char *tensorflow_version;	/* "" when not recorded */
	int n_signatures;
	struct tfk_signature *signatures;	/* sorted by key */
	/* The protobuf-c tree, for importers. graph_def is never NULL (an
	 * empty graph when the file has none); saver_def is NULL without a
	 * TF1 saver, object_graph NULL for TF1 models. */
	const Tensorflow__GraphDef *graph_def;
	const Tensorflow__SaverDef *saver_def;
	const Tensorflow__SavedObjectGraph *object_graph;
	const Tensorflow__MetaGraphDef *proto;
};

struct tfk_savedmodel {
	char *dir;		/* as given */
	/* DIR/variables/variables, the bundle prefix to open with
	 * tfk_bundle_open; has_variables when PREFIX.index exists. */
	char *variables_prefix;
	int has_variables;
	int64_t schema_version;
	int n_meta_graphs;
	struct tfk_meta_graph *meta_graphs;	/* file order */
	Tensorflow__SavedModel *proto;
};

/*
 * Read and parse DIR/saved_model.pb into *sm. Errors:
 *   TFK_ENOTFOUND "DIR: no such directory" / "DIR: SavedModel file does
 *       not exist at: DIR/saved_model.pb" (a .pbtxt is named as
 *       unsupported);
 *   TFK_EIO       read failures (errno text);
 *   TFK_ECORRUPT  "DIR/saved_model.pb: ... at byte OFF: ..." for bytes
 *       that are not a SavedModel (truncated, garbage, wrong types);
 *   TFK_ENOMEM.
 * On failure *sm is NULL.
 */
int tfk_savedmodel_open(struct tfk_savedmodel **sm, const char *dir,
			struct tfk_err *err);

/*
 * Parse the serialized SavedModel data[0..n) (not kept: copied into the
 * protobuf tree). name is used in messages (a path); dir, when not NULL,
 * is recorded as the model's directory and looked in for variables/.
 * Same errors as tfk_savedmodel_open from TFK_ECORRUPT on.
 */
int tfk_savedmodel_parse(struct tfk_savedmodel **sm, const void *data,
			 size_t n, const char *name, const char *dir,
			 struct tfk_err *err);

/* Free everything. NULL is fine. */
void tfk_savedmodel_close(struct tfk_savedmodel *sm);

/*
 * The meta graph whose tag set equals the comma-separated tag_set
 * ("serve", "serve,train": order free, empty parts ignored, so "" is the
 * empty set), as saved_model_cli matches them. Returns its index, or
 * TFK_ENOTFOUND with the message "MetaGraphDef associated with tag-set
 * T could not be found in the SavedModel; tag-sets are: 'serve',
 * 'serve, train'".
 */
int tfk_savedmodel_find_tags(const struct tfk_savedmodel *sm,
			     const char *tag_set, struct tfk_err *err);

/*
 * The signature keyed key of mg, or NULL with TFK_ENOTFOUND in err:
 * "could not find signature \"k\"; signatures are: a, b".
 */
const struct tfk_signature *
tfk_savedmodel_signature(const struct tfk_meta_graph *mg, const char *key,
			 struct tfk_err *err);

/*
 * The op types mg's graph uses, as TensorFlow's ops_used_by_graph_def
 * counts them: every node's op, and the ops of the library functions
 * reached from the graph (a node whose op is a function, or a
 * (Stateful)PartitionedCall's "f"), transitively; function names
 * themselves are left out. *ops gets a sorted array of n borrowed names
 * (free the array alone with tfk_free). Returns n >= 0 or TFK_ENOMEM.
 */
int tfk_savedmodel_ops(const struct tfk_meta_graph *mg, const char ***ops,
		       struct tfk_err *err);

/* TensorFlow's name of DataType number t ("DT_FLOAT", "DT_FLOAT_REF"),
 * or NULL for a number the enum does not have. Static storage. */
const char *tfk_savedmodel_dtype_name(int t);

#endif
