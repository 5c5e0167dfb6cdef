/*
 * op.h - the op registry: what an op is, independent of any graph.
 *
 * An op is known by its TensorFlow name ("MatMul", "AddV2") and has
 * TensorFlow's attribute names ("T", "transpose_a"), so a SavedModel
 * GraphDef or a TFLite model maps onto it without renaming. Each op def
 * gives (as TF's OpDef): its attrs with kinds and defaults, its inputs
 * and outputs (fixed dtype, or a type attr such as "T", optionally
 * repeated by a number attr such as "N"), flags, a shape+dtype
 * inference function and a gradient builder.
 *
 * Kernels are registered apart from op defs (TF's REGISTER_OP vs
 * REGISTER_KERNEL_BUILDER): a kernel names its op and backend ("cpu",
 * later "cuda", "int8") and implements the backend interface
 * {supports, compute, free}. So a CUDA or int8 family file adds kernels
 * for existing ops without touching their definitions, and a caller
 * falls back to "cpu" when a backend does not support a node.
 *
 * Registration is one static table per family file, e.g.
 *   const struct tfk_op_def tfk_ops_elementwise[];   (name NULL ends it)
 *   const struct tfk_kernel tfk_kernels_cpu_elementwise[];
 * collected by one array in op.c. Constructors were rejected: an object
 * file of libtfk.a that nothing references is not linked, so a
 * constructor-registered family would silently be missing from tools;
 * the explicit array makes the linker pull every family in.
 * Adding a family: write the tables, add their extern lines and entries
 * to op.c. Names must be unique (t-graph checks the whole registry).
 */
#ifndef TFK_OP_H
#define TFK_OP_H

#include "graph/tensor.h"
#include "util/err.h"

#include <stdint.h>
#include <string.h>

#define TFK_OP_MAX_ARGS 8	/* inputs or outputs per op def */
#define TFK_OP_MAX_ATTRS 16

/* TensorFlow's AttrValue kinds (attr_value.proto). */
enum tfk_attr_kind {
	TFK_ATTR_NONE = 0,
	TFK_ATTR_INT,		/* int64 */
	TFK_ATTR_FLOAT,		/* float */
	TFK_ATTR_BOOL,
	TFK_ATTR_STRING,	/* bytes */
	TFK_ATTR_TYPE,		/* enum tfk_dtype */
	TFK_ATTR_SHAPE,		/* rank -1 = unknown rank, dims -1 unknown */
	TFK_ATTR_TENSOR,
	TFK_ATTR_LIST_INT,
	TFK_ATTR_LIST_FLOAT,
	TFK_ATTR_LIST_TYPE
};

/*
 * A typed attribute value. Pointers are borrowed when a value is passed
 * to the graph builder (the graph copies) and owned by the node once in
 * a graph. Strings are bytes (p may lack a NUL; a node's copy has one).
 */
struct tfk_attr_value {
	enum tfk_attr_kind kind;
	union {
		int64_t i;
		float f;
		int b;
		enum tfk_dtype type;
		struct {
			const char *p;
			size_t len;
		} s;
		struct {
			int rank;
			int64_t dims[TFK_MAX_RANK];
		} shape;
		const struct tfk_tensor *tensor;
		struct {
			int n;
			const int64_t *i;	/* LIST_INT */
			const float *f;		/* LIST_FLOAT */
			const enum tfk_dtype *type;	/* LIST_TYPE */
		} list;
	};
};

/* A named attribute, as the builder takes them and a node holds them. */
struct tfk_attr {
	const char *name;
	struct tfk_attr_value v;
};

/* Builder shorthands: TFK_A_BOOL("transpose_a", 1). */
#define TFK_A_INT(nm, x) ((struct tfk_attr){ .name = (nm), \
	.v = { .kind = TFK_ATTR_INT, .i = (x) } })
#define TFK_A_FLOAT(nm, x) ((struct tfk_attr){ .name = (nm), \
	.v = { .kind = TFK_ATTR_FLOAT, .f = (x) } })
#define TFK_A_BOOL(nm, x) ((struct tfk_attr){ .name = (nm), \
	.v = { .kind = TFK_ATTR_BOOL, .b = (x) } })
#define TFK_A_TYPE(nm, x) ((struct tfk_attr){ .name = (nm), \
	.v = { .kind = TFK_ATTR_TYPE, .type = (x) } })
#define TFK_A_STR(nm, x) ((struct tfk_attr){ .name = (nm), \
	.v = { .kind = TFK_ATTR_STRING, .s = { (x), strlen(x) } } })
#define TFK_A_TENSOR(nm, x) ((struct tfk_attr){ .name = (nm), \
	.v = { .kind = TFK_ATTR_TENSOR, .tensor = (x) } })

/* Attribute schema. Without has_def the attr is required, except a type
 * attr that the builder can take from an input bound to it. */
struct tfk_attr_def {
	const char *name;
	enum tfk_attr_kind kind;
	int has_def;
	struct tfk_attr_value def;	/* kind need not be set */
	uint64_t allowed;	/* TYPE: TFK_DT_BIT set; 0 = any */
};

/* One input or output (TF's ArgDef): dtype fixed (type) or from a type
 * attr (type_attr); repeated number_attr times when that is set. */
struct tfk_arg_def {
	const char *name;
	enum tfk_dtype type;
	const char *type_attr;
	const char *number_attr;
};

enum {
	TFK_OP_STATEFUL = 1 << 0,	/* has state beyond its inputs */
	TFK_OP_RANDOM = 1 << 1,	/* uses the run's RNG key */
	TFK_OP_SOURCE = 1 << 2,	/* value given by the executor (feed,
				 * constant, variable): no kernel */
	TFK_OP_SHAPE_FN = 1 << 3	/* outputs depend on the input shapes
					 * only (Shape, Size, Rank): the kernel
					 * reads in[k]->rank/shape, never data,
					 * so executors can run it while
					 * planning, on data-less inputs */
};

struct tfk_node;
struct tfk_graph;

/* An output of a node: (node index, output index). node < 0: none. */
struct tfk_port {
	int node;
	int index;
};

/*
 * Shape inference. The graph fills node (attrs readable with the
 * tfk_node_attr_* getters), in[] (dtypes are checked against the op def
 * before infer runs) and in_value[] (the value of an input fed by a
 * Const node, else NULL: Reshape's shape). infer fills out[]'s shapes
 * (dtypes are preset from the op def) and returns 0, or a negative
 * TFK_E* with a message naming the input ("input 1: ..."); the graph
 * prefixes "node NAME: ". Called while building (unknown dims -1) and by
 * executors with concrete shapes: it must keep known dims exact.
 * Executors also give in_value[k] for every input whose value is known
 * while planning: Const outputs, outputs of TFK_OP_SHAPE_FN ops, and
 * small integer outputs of deterministic ops whose inputs are all known
 * (Shape -> StridedSlice -> Pack), so a shape-valued input (Reshape's
 * shape, Fill's dims, Conv2DBackpropInput's input_sizes) computed from
 * Shape(x) has its value at run time. While building it may be NULL:
 * infer must then give what it can (rank from the shape input's
 * length, dims -1), not fail.
 */
struct tfk_infer_ctx {
	const struct tfk_node *node;
	int n_in;
	const struct tfk_tdesc *in;
	const struct tfk_tensor *const *in_value;
	int n_out;
	struct tfk_tdesc *out;
	struct tfk_err *err;
};

/*
 * Gradient builder (reverse mode). Given dy[k], the port of d(loss)/d
 * (output k) (node -1: no gradient flows into output k), it adds nodes
 * to g computing dx[i] = d(loss)/d(input i), with the same shape and
 * dtype as input i, and stores their ports; dx[i] is preset to
 * {-1, 0} and left so for inputs without gradient (integer inputs,
 * shape inputs). New node names should start with prefix
 * ("gradients/NODE_grad/"). The node's ports are node_id's outputs;
 * its inputs are node->inputs. Returns 0 or a negative TFK_E*.
 */
struct tfk_grad_ctx {
	struct tfk_graph *g;
	int node_id;
	const struct tfk_node *node;
	const struct tfk_port *dy;
	struct tfk_port *dx;
	const char *prefix;
	struct tfk_err *err;
};

struct tfk_op_def {
	const char *name;
	struct tfk_arg_def inputs[TFK_OP_MAX_ARGS];	/* name NULL ends */
	struct tfk_arg_def outputs[TFK_OP_MAX_ARGS];
	struct tfk_attr_def attrs[TFK_OP_MAX_ATTRS];
	unsigned flags;
	int (*infer)(struct tfk_infer_ctx *ic);	/* NULL: outputs take the
						 * shape of input 0 */
	int (*grad)(struct tfk_grad_ctx *gc);	/* NULL: not differentiable */
};

/*
 * A kernel's view of one node during a run. Inputs are concrete
 * tensors; outputs are preallocated by the executor with the shapes
 * inference gave (arena memory, never overlapping the inputs). state is
 * the node's backend state slot (NULL at first; the kernel may allocate
 * and keep it across runs; the backend's free releases it). rng_key is
 * a function of (exec seed, step, node) only, so random kernels give
 * the same values whatever the thread count; derive element values as
 * tfk_rng_u64(rng_key, element index).
 */
struct tfk_kernel_ctx {
	const struct tfk_node *node;
	int n_in;
	const struct tfk_tensor *const *in;
	int n_out;
	struct tfk_tensor *const *out;
	void **state;
	uint64_t rng_key;
	int threads;
	struct tfk_err *err;
};

/* The backend interface. supports NULL: every node of the op. compute
 * returns 0 or a negative TFK_E* (message without the node name; the
 * executor prefixes it). free NULL: no state. */
struct tfk_kernel {
	const char *op;
	const char *backend;	/* "cpu", "cuda", "int8" */
	int (*supports)(const struct tfk_node *n);
	int (*compute)(struct tfk_kernel_ctx *kc);
	void (*free)(void *state);
};

/* The op def named name, or NULL. */
const struct tfk_op_def *tfk_op_find(const char *name);
/* Registry listing: number of ops, and the i-th (0 <= i < count). */
int tfk_op_count(void);
const struct tfk_op_def *tfk_op_at(int i);
/* Number of inputs/outputs/attrs declared by def (not counting number
 * attr repetition). */
int tfk_op_n_inputs(const struct tfk_op_def *def);
int tfk_op_n_outputs(const struct tfk_op_def *def);
int tfk_op_n_attrs(const struct tfk_op_def *def);
/* The attr schema entry named name, or NULL. */
const struct tfk_attr_def *tfk_op_attr_def(const struct tfk_op_def *def,
					   const char *name);

/* The first kernel for n's op on backend whose supports accepts n, or
 * NULL. */
const struct tfk_kernel *tfk_kernel_find(const struct tfk_node *n,
					 const char *backend);

/* "int", "float", "list(int)", ... (TF's spelling). */
const char *tfk_attr_kind_name(enum tfk_attr_kind k);

/* Counter-based generator (splitmix64 of key + counter): the same
 * (key, counter) always gives the same value on any thread. */
uint64_t tfk_rng_u64(uint64_t key, uint64_t counter);

#endif
