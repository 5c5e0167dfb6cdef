/*
 * import.h - a SavedModel signature as a runnable tfk_graph.
 *
 * tfk_import_signature turns one SignatureDef of a loaded MetaGraphDef
 * (format/savedmodel.h) into a graph holding only what the signature's
 * outputs need, in topological order:
 *   - each signature input's tensor ("x:0", any node's output, as TF
 *     lets a session feed any tensor) becomes a Placeholder with the
 *     TensorInfo's dtype and shape; the graph above it is cut off;
 *   - StatefulPartitionedCall / PartitionedCall (and nodes whose op is
 *     a library function) are inlined: the callee's nodes are added
 *     under "CALLER/", its "node:out_arg:idx" input names resolved, its
 *     ret map followed;
 *   - VariableV2 (TF1) and VarHandleOp (TF2) become graph variables
 *     holding the checkpoint's value; ReadVariableOp, Identity and
 *     IdentityN are pass-throughs;
 *   - ParseExample / ParseExampleV2 (dense features only) become one
 *     _ParseExampleDense node per dense key (kernels/cpu/tfcompat.c);
 *   - every other op must be in the registry with a cpu kernel, its
 *     NodeDef attrs mapped by name onto the op's schema (attrs starting
 *     with '_' are TF bookkeeping and skipped, a few hint attrs too;
 *     any other unknown attr is an error rather than silently dropped).
 * Control inputs ("^x") are ordering hints in TF and are ignored: a
 * pruned inference graph has no side effects to order.
 *
 * Checkpoint keys of variables are found, in this order: by following
 * the model's restore path (Assign/AssignVariableOp fed from
 * RestoreV2:k, top level for TF1 savers, inside the restore function
 * for TF2), by the _CHECKPOINTABLE_OBJECT_GRAPH entry of the bundle
 * (attribute full_name == the VarHandleOp's shared_name -> its
 * checkpoint_key, e.g. "a/.ATTRIBUTES/VARIABLE_VALUE"), and last by the
 * variable's own name.
 */
#ifndef TFK_IMPORT_H
#define TFK_IMPORT_H

#include "graph/graph.h"
#include "graph/tensor.h"
#include "format/savedmodel.h"
#include "util/err.h"

/* A signature input as fed: key, the Placeholder node to feed (the
 * feed name for tfk_exec_new), its dtype and shape (rank -1: any). */
struct tfk_import_feed {
	const char *key;
	const char *tensor;	/* the TensorInfo name, "x:0" */
	const char *node;
	enum tfk_dtype dtype;
	int rank;
	int64_t shape[TFK_MAX_RANK];
};

/* A signature output: the graph output named key (fetch it by key). */
struct tfk_import_fetch {
	const char *key;
	const char *tensor;
	enum tfk_dtype dtype;
};

struct tfk_import {
	struct tfk_graph *g;
	int n_feeds;
	struct tfk_import_feed *feeds;		/* signature order (by key) */
	int n_fetches;
	struct tfk_import_fetch *fetches;	/* by key */
	int n_variables;	/* variables read from the checkpoint */
	/* Variable writes (Assign*, Assign*VariableOp, lowered to
	 * _AssignVariable): the nodes a run must execute besides the
	 * fetches' (a write reached only by a control edge), by graph
	 * node name, and the graph variables they write (indices for
	 * tfk_graph_var_at, no repeats). 0: the signature is pure. */
	int n_targets;
	char **targets;
	int n_assigned;
	int *assigned;
};

/* Default of TFK_MAX_IMPORT_NODES (util/limit.h): how many function
 * nodes one import may inline, counting every copy (a function called
 * from two places is inlined twice). Real serving signatures inline a
 * few thousand; a 3 KiB file whose functions each call the next twice
 * asks for millions. An inlined node costs the importer ~450 bytes
 * (its scope's index and memo, prefixed names, the graph node), so the
 * default bounds that to ~25 MB and a tenth of a second (four times
 * that under ASan). */
#define TFK_IMPORT_MAX_NODES_DEFAULT 50000

/*
 * Import signature sig of mg. var_prefix is the bundle prefix
 * (DIR/variables/variables), opened only when a variable is needed
 * (so a model without variables needs no bundle; a missing one is then
 * the bundle's TFK_EIO naming the file). *imp is owned by the caller
 * (tfk_import_free); the graph does not borrow mg.
 * Errors (TFK_EINVAL unless said): "node N: op Foo is not supported",
 * "node N: attr 'a' of op Foo is not supported", "input 'k': tensor
 * 'x:0' not in the graph" (TFK_ENOTFOUND), "variable 'a': no checkpoint
 * value (key 'a')", "variable 'a': checkpoint has int32 [2], the graph
 * float32 []", cycles, sparse ParseExample features, the graph
 * builder's own errors (shapes, dtypes) prefixed with the node; what
 * hostile files bring: "function f: input 'm:z:-1': output index not
 * in 0..1000000", "node a/b: inlining function f would pass 50000
 * inlined nodes (TFK_MAX_IMPORT_NODES; calls that fan out?)", "function
 * f: calls nested deeper than 64 (recursion?)", a Const over the
 * tensor byte budget (graph/tensor.h: "... (TFK_MAX_TENSOR_BYTES)");
 * and TFK_ENOMEM. On failure *imp is NULL.
 */
int tfk_import_signature(struct tfk_import **imp,
			 const struct tfk_meta_graph *mg,
			 const struct tfk_signature *sig,
			 const char *var_prefix, struct tfk_err *err);

/*
 * The same when only the inputs keyed fed[0..n_fed) will be fed: the
 * others keep their graph (a PlaceholderWithDefault then gives its
 * default; a Placeholder the outputs need is TFK_EINVAL "input 'k' is
 * not given", by its signature key). Their feeds[] entries have node
 * NULL. n_fed < 0: all are fed (tfk_import_signature).
 */
int tfk_import_signature_fed(struct tfk_import **imp,
			     const struct tfk_meta_graph *mg,
			     const struct tfk_signature *sig,
			     const char *const *fed, int n_fed,
			     const char *var_prefix, struct tfk_err *err);

void tfk_import_free(struct tfk_import *imp);

/*
 * A static hash table's contents as TensorFlow's TextFileLineIterator
 * reads a vocabulary file for InitializeTableFromTextFileV2 with
 * key_index -2 (the whole line) and value_index -1 (the line number):
 * text[0..len) split at '\n' (a '\r' before it dropped; a last line
 * without '\n' counts), the first vocab_size lines (-1: all; a file
 * with fewer is an error), keys[i] = line i (kt DT_STRING, or DT_INT64
 * as decimal), values[i] = i + offset (int64). An empty line is an
 * error, as in TF. name (the file) starts messages: "vocab.txt: line 2
 * is empty". Makes *keys and *vals (the caller releases both); on
 * failure neither. TFK_EINVAL, TFK_ENOMEM.
 */
int tfk_import_text_table(const char *text, size_t len, const char *name,
			  enum tfk_dtype kt, int64_t vocab_size,
			  int64_t offset, struct tfk_tensor *keys,
			  struct tfk_tensor *vals, struct tfk_err *err);

/* 1 when the importer can run op type `op`: a registry op with a cpu
 * kernel, or one it lowers (Identity, IdentityN, ReadVariableOp,
 * VarHandleOp, VariableV2, ParseExample(V2), calls). For `show --ops`. */
int tfk_import_op_supported(const char *op);

#endif
