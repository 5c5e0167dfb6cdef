/*
 * graph.h - the op-graph IR: nodes, attributes, variables, gradients.
 *
 * A graph is a list of nodes in topological order: a node's inputs are
 * outputs of nodes added before it, so the index order is a valid run
 * order and no sort is ever needed (an importer of a GraphDef, whose
 * nodes may come in any order, sorts once before adding). Each node has
 * a unique name, an op from the registry (op.h), its typed attributes
 * (every attr of the op's schema, defaults filled in), inputs as
 * (node, output index) ports, and the dtype/shape of each output as
 * inferred when it was added (-1 for dims unknown until run time, e.g.
 * the batch dimension).
 *
 * tfk_graph_add_node validates as it adds: unknown op, missing or
 * unknown or mistyped attrs, wrong input count, dtype mismatches, shape
 * errors from the op's inference. Messages name the node and the input:
 *   "node dense/MatMul: input 1: expected float32, got int64"
 * and a failed add leaves the graph as it was.
 *
 * Sources: Placeholder (a named input; feeds by name), Const (attr
 * "value"), VariableV2 (a named variable: the graph owns its tensor,
 * executors read it at each run, an optimizer writes it in place between
 * runs). Named outputs (tfk_graph_set_output) give signatures their
 * output keys.
 *
 * Node names follow TF: given, or "<Op>" / "<Op>_<k>" made unique.
 * Ports refer to nodes by index; indices never change (nodes are only
 * appended). Not thread-safe for writing; reading from many threads is.
 */
#ifndef TFK_GRAPH_H
#define TFK_GRAPH_H

#include "graph/op.h"
#include "graph/tensor.h"
#include "util/err.h"

struct tfk_node {
	const char *name;
	const struct tfk_op_def *op;
	int n_attrs;		/* all of op's attrs, in schema order */
	struct tfk_attr *attrs;
	int n_inputs;
	struct tfk_port *inputs;
	int n_outputs;
	struct tfk_tdesc *outputs;
	int variable;		/* VariableV2: index of its variable; else -1 */
	unsigned flags;		/* TFK_NODE_*: tfkit's own, never exported */
};

/* MatMul, Conv2D and Conv2D's backprops: operands rounded to bfloat16,
 * float32 sums (Keras' mixed_bfloat16; kernels/cpu/bf16gemm.c,
 * bf16conv.c). A mark on how to compute, not a TF attr: SavedModel
 * export writes the float32 op. */
#define TFK_NODE_BF16 1u

struct tfk_graph;

/* Empty graph into *g. 0 or TFK_ENOMEM. */
int tfk_graph_new(struct tfk_graph **g, struct tfk_err *err);
/* Free the graph, its nodes, attrs and variables. NULL is fine. */
void tfk_graph_free(struct tfk_graph *g);

/*
 * Append a node of op `op` named name (NULL: "<op>" made unique; a
 * scope ending in '/', "gradients/x_grad/": scope + op made unique) with
 * inputs[0..n_in) and attrs[0..n_attrs) (copied: attr strings, lists and
 * tensors are deep-copied; names must be in the op's schema). Type attrs
 * that are not given are taken from the first input bound to them;
 * other missing attrs take their defaults; a required attr missing is
 * an error. Output 0's port goes to *out (may be NULL); output k is
 * {out->node, k}. Returns 0, or TFK_EINVAL/TFK_ENOTFOUND (message
 * "node NAME: ...") or TFK_ENOMEM; on failure the graph is unchanged.
 */
int tfk_graph_add_node(struct tfk_graph *g, const char *op, const char *name,
		       const struct tfk_port *inputs, int n_in,
		       const struct tfk_attr *attrs, int n_attrs,
		       struct tfk_port *out, struct tfk_err *err);

/* Placeholder named name with dtype and shape (rank -1: any rank; dims
 * -1: any size): a graph input. */
int tfk_graph_placeholder(struct tfk_graph *g, const char *name,
			  enum tfk_dtype dtype, int rank, const int64_t *shape,
			  struct tfk_port *out, struct tfk_err *err);
/* Const node holding a copy of value. */
int tfk_graph_const(struct tfk_graph *g, const char *name,
		    const struct tfk_tensor *value, struct tfk_port *out,
		    struct tfk_err *err);
/* Float32 scalar / int32 vector constants (small helpers for builders). */
int tfk_graph_const_f32(struct tfk_graph *g, const char *name, float v,
			struct tfk_port *out, struct tfk_err *err);
int tfk_graph_const_i32v(struct tfk_graph *g, const char *name,
			 const int32_t *v, int n, struct tfk_port *out,
			 struct tfk_err *err);
/*
 * VariableV2 node named name reading a variable of the same name whose
 * initial value is *init: consumes init's contents (init is left empty,
 * on failure too). The variable's dtype and shape are then fixed.
 */
int tfk_graph_variable(struct tfk_graph *g, const char *name,
		       struct tfk_tensor *init, struct tfk_port *out,
		       struct tfk_err *err);

/* Variables: count, i-th (name to *name when not NULL), by name (NULL
 * when absent). The tensor is the graph's: write its data in place
 * (never change its dtype, shape or data pointer). */
int tfk_graph_n_variables(const struct tfk_graph *g);
struct tfk_tensor *tfk_graph_var_at(struct tfk_graph *g, int i,
				    const char **name);
struct tfk_tensor *tfk_graph_var(struct tfk_graph *g, const char *name);

/* Name port as the signature output `name` (unique). 0, TFK_EINVAL. */
int tfk_graph_set_output(struct tfk_graph *g, const char *name,
			 struct tfk_port port, struct tfk_err *err);
int tfk_graph_n_outputs(const struct tfk_graph *g);
/* i-th named output: its port, and its name into *name. */
struct tfk_port tfk_graph_output_at(const struct tfk_graph *g, int i,
				    const char **name);

/*
 * Resolve a name to a port: a named output first, then a node name,
 * then "NODE:K" (output K of NODE), as TF's tensor names. 0 or
 * TFK_ENOTFOUND ("no node or output named 'x'").
 */
int tfk_graph_find(const struct tfk_graph *g, const char *name,
		   struct tfk_port *port, struct tfk_err *err);

/* OR flags (TFK_NODE_*) into node i's. 0, or TFK_EINVAL when i is out
 * of range. */
int tfk_graph_node_flag(struct tfk_graph *g, int i, unsigned flags);

int tfk_graph_n_nodes(const struct tfk_graph *g);
/* Node i (borrowed; valid until the graph is freed: nodes never move
 * even when more are added). NULL when i is out of range. */
const struct tfk_node *tfk_graph_node(const struct tfk_graph *g, int i);
/* The inferred description of a port (borrowed, as tfk_graph_node). */
const struct tfk_tdesc *tfk_graph_desc(const struct tfk_graph *g,
				       struct tfk_port p);
/* The value of a Const node's output, else NULL. */
const struct tfk_tensor *tfk_graph_const_value(const struct tfk_graph *g,
					       struct tfk_port p);

/* Attribute getters for kernels and builders: the node's attr of that
 * name, or NULL. The typed forms return def when the attr is absent or
 * of another kind. */
const struct tfk_attr_value *tfk_node_attr(const struct tfk_node *n,
					   const char *name);
int64_t tfk_node_attr_i(const struct tfk_node *n, const char *name,
			int64_t def);
float tfk_node_attr_f(const struct tfk_node *n, const char *name, float def);
int tfk_node_attr_b(const struct tfk_node *n, const char *name, int def);
enum tfk_dtype tfk_node_attr_type(const struct tfk_node *n, const char *name,
				  enum tfk_dtype def);

/*
 * Run node i's shape inference on in[] (concrete or partial shapes)
 * into out[] (n->n_outputs entries): what executors do when the feed
 * shapes are known. Messages are prefixed "node NAME: ".
 */
int tfk_graph_infer_node(const struct tfk_graph *g, int i,
			 const struct tfk_tdesc *in, struct tfk_tdesc *out,
			 struct tfk_err *err);
/* The same with the values of inputs known while planning: in_value[k]
 * (NULL entries: the Const value of that input, if any). */
int tfk_graph_infer_node_v(const struct tfk_graph *g, int i,
			   const struct tfk_tdesc *in,
			   const struct tfk_tensor *const *in_value,
			   struct tfk_tdesc *out, struct tfk_err *err);

/*
 * Reverse-mode autodiff (tf.gradients): add nodes computing
 * sum_k dys[k] . d ys[k] / d xs[j] for each j into dxs[j]. dys[k] is
 * the seed gradient for ys[k] (same dtype and shape; e.g. a Const 1.0
 * for a scalar loss). Gradient contributions reaching one port from
 * several consumers are summed with AddV2. dxs[j] is {-1, 0} when xs[j]
 * does not influence any ys. An op on the path without a gradient
 * builder is an error: "node NAME: op Softmax has no gradient".
 * On failure the nodes added so far stay (unused by any fetch; an
 * executor prunes them).
 */
int tfk_graph_gradients(struct tfk_graph *g, const struct tfk_port *ys,
			const struct tfk_port *dys, int n_ys,
			const struct tfk_port *xs, int n_xs,
			struct tfk_port *dxs, struct tfk_err *err);

#endif
