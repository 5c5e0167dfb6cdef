/*
 * op.c - the registry (see op.h) and the source ops every graph has.
 *
 * The registry is the concatenation of static tables, one per family
 * file, listed below. Lookups are a linear scan by name: a few dozen
 * ops, looked up when nodes are added and executors made, never per
 * run, so a hash table would only add code.
 *
 * The source ops (Placeholder, Const, VariableV2) live here because the
 * executor, not a kernel, gives their values; their attrs are TF's.
 */
#include "graph/op.h"
#include "graph/graph.h"

#include <string.h>

/* Families: add a family's tables here (see op.h). */
extern const struct tfk_op_def tfk_ops_elementwise[];
extern const struct tfk_op_def tfk_ops_matmul[];
extern const struct tfk_kernel tfk_kernels_cpu_elementwise[];
extern const struct tfk_kernel tfk_kernels_cpu_matmul[];
extern const struct tfk_op_def tfk_ops_preprocess[];
extern const struct tfk_kernel tfk_kernels_cpu_preprocess[];
extern const struct tfk_op_def tfk_ops_categorical[];
extern const struct tfk_kernel tfk_kernels_cpu_categorical[];
extern const struct tfk_op_def tfk_ops_nn[];
extern const struct tfk_kernel tfk_kernels_cpu_nn[];
extern const struct tfk_op_def tfk_ops_random[];
extern const struct tfk_kernel tfk_kernels_cpu_random[];
extern const struct tfk_op_def tfk_ops_gather[];
extern const struct tfk_kernel tfk_kernels_cpu_gather[];
extern const struct tfk_op_def tfk_ops_reduce[];
extern const struct tfk_kernel tfk_kernels_cpu_reduce[];
extern const struct tfk_op_def tfk_ops_shape[];
extern const struct tfk_kernel tfk_kernels_cpu_shape[];
extern const struct tfk_op_def tfk_ops_pool[];
extern const struct tfk_kernel tfk_kernels_cpu_pool[];
extern const struct tfk_op_def tfk_ops_conv[];
extern const struct tfk_kernel tfk_kernels_cpu_conv[];
extern const struct tfk_op_def tfk_ops_tfcompat[];
extern const struct tfk_kernel tfk_kernels_cpu_tfcompat[];
extern const struct tfk_op_def tfk_ops_tflookup[];
extern const struct tfk_kernel tfk_kernels_cpu_tflookup[];
extern const struct tfk_op_def tfk_ops_tfhash[];
extern const struct tfk_kernel tfk_kernels_cpu_tfhash[];
extern const struct tfk_op_def tfk_ops_bincount[];
extern const struct tfk_kernel tfk_kernels_cpu_bincount[];
extern const struct tfk_op_def tfk_ops_tfstring[];
extern const struct tfk_kernel tfk_kernels_cpu_tfstring[];

static int infer_placeholder(struct tfk_infer_ctx *ic)
{
	const struct tfk_attr_value *s = tfk_node_attr(ic->node, "shape");

	ic->out[0].rank = s ? s->shape.rank : -1;
	if (ic->out[0].rank > 0)
		memcpy(ic->out[0].shape, s->shape.dims,
		       ic->out[0].rank * sizeof(int64_t));
	return 0;
}

static int infer_const(struct tfk_infer_ctx *ic)
{
	const struct tfk_attr_value *v = tfk_node_attr(ic->node, "value");

	if (!v || !v->tensor)
		return tfk_errf(ic->err, TFK_EINVAL, "attr value: no tensor");
	if (v->tensor->dtype != ic->out[0].dtype)
		return tfk_errf(ic->err, TFK_EINVAL, "attr value: %s tensor "
				"for dtype %s", tfk_dtype_name(v->tensor->dtype),
				tfk_dtype_name(ic->out[0].dtype));
	tfk_tensor_desc(v->tensor, &ic->out[0]);
	return 0;
}

static const struct tfk_op_def core_ops[] = {
	{
		.name = "Placeholder",
		.outputs = { { "output", .type_attr = "dtype" } },
		.attrs = {
			{ "dtype", TFK_ATTR_TYPE },
			{ "shape", TFK_ATTR_SHAPE, 1,
			  { .shape = { .rank = -1 } } },
		},
		.flags = TFK_OP_SOURCE,
		.infer = infer_placeholder,
	},
	{
		.name = "Const",
		.outputs = { { "output", .type_attr = "dtype" } },
		.attrs = {
			{ "value", TFK_ATTR_TENSOR },
			{ "dtype", TFK_ATTR_TYPE },
		},
		.flags = TFK_OP_SOURCE,
		.infer = infer_const,
	},
	{
		/* TF1's variable op: shape and dtype of the variable the
		 * node reads (tfk_graph_variable); container and
		 * shared_name kept for SavedModel round trips. */
		.name = "VariableV2",
		.outputs = { { "ref", .type_attr = "dtype" } },
		.attrs = {
			{ "shape", TFK_ATTR_SHAPE },
			{ "dtype", TFK_ATTR_TYPE },
			{ "container", TFK_ATTR_STRING, 1, { .s = { "", 0 } } },
			{ "shared_name", TFK_ATTR_STRING, 1,
			  { .s = { "", 0 } } },
		},
		.flags = TFK_OP_SOURCE | TFK_OP_STATEFUL,
		.infer = infer_placeholder,
	},
	{ .name = NULL }
};

static const struct tfk_op_def *const op_families[] = {
	core_ops,
	tfk_ops_elementwise,
	tfk_ops_matmul,
	tfk_ops_preprocess,
	tfk_ops_categorical,
	tfk_ops_nn,
	tfk_ops_random,
	tfk_ops_gather,
	tfk_ops_reduce,
	tfk_ops_shape,
	tfk_ops_pool,
	tfk_ops_conv,
	tfk_ops_tfcompat,
	tfk_ops_tflookup,
	tfk_ops_tfhash,
	tfk_ops_bincount,
	tfk_ops_tfstring,
};

static const struct tfk_kernel *const kernel_families[] = {
	tfk_kernels_cpu_elementwise,
	tfk_kernels_cpu_matmul,
	tfk_kernels_cpu_preprocess,
	tfk_kernels_cpu_categorical,
	tfk_kernels_cpu_nn,
	tfk_kernels_cpu_random,
	tfk_kernels_cpu_gather,
	tfk_kernels_cpu_reduce,
	tfk_kernels_cpu_shape,
	tfk_kernels_cpu_pool,
	tfk_kernels_cpu_conv,
	tfk_kernels_cpu_tfcompat,
	tfk_kernels_cpu_tflookup,
	tfk_kernels_cpu_tfhash,
	tfk_kernels_cpu_bincount,
	tfk_kernels_cpu_tfstring,
};

#define N_OP_FAMILIES (int)(sizeof(op_families) / sizeof(op_families[0]))
#define N_KERNEL_FAMILIES \
	(int)(sizeof(kernel_families) / sizeof(kernel_families[0]))

int tfk_op_count(void)
{
	int f, n = 0;
	const struct tfk_op_def *d;

	for (f = 0; f < N_OP_FAMILIES; f++)
		for (d = op_families[f]; d->name; d++)
			n++;
	return n;
}

const struct tfk_op_def *tfk_op_at(int i)
{
	int f;
	const struct tfk_op_def *d;

	if (i < 0)
		return NULL;
	for (f = 0; f < N_OP_FAMILIES; f++)
		for (d = op_families[f]; d->name; d++)
			if (i-- == 0)
				return d;
	return NULL;
}

const struct tfk_op_def *tfk_op_find(const char *name)
{
	int f;
	const struct tfk_op_def *d;

	for (f = 0; f < N_OP_FAMILIES; f++)
		for (d = op_families[f]; d->name; d++)
			if (!strcmp(d->name, name))
				return d;
	return NULL;
}

int tfk_op_n_inputs(const struct tfk_op_def *def)
{
	int n = 0;

	while (n < TFK_OP_MAX_ARGS && def->inputs[n].name)
		n++;
	return n;
}

int tfk_op_n_outputs(const struct tfk_op_def *def)
{
	int n = 0;

	while (n < TFK_OP_MAX_ARGS && def->outputs[n].name)
		n++;
	return n;
}

int tfk_op_n_attrs(const struct tfk_op_def *def)
{
	int n = 0;

	while (n < TFK_OP_MAX_ATTRS && def->attrs[n].name)
		n++;
	return n;
}

const struct tfk_attr_def *tfk_op_attr_def(const struct tfk_op_def *def,
					   const char *name)
{
	int i, n = tfk_op_n_attrs(def);

	for (i = 0; i < n; i++)
		if (!strcmp(def->attrs[i].name, name))
			return &def->attrs[i];
	return NULL;
}

const struct tfk_kernel *tfk_kernel_find(const struct tfk_node *n,
					 const char *backend)
{
	int f;
	const struct tfk_kernel *k;

	for (f = 0; f < N_KERNEL_FAMILIES; f++)
		for (k = kernel_families[f]; k->op; k++)
			if (!strcmp(k->op, n->op->name) &&
			    !strcmp(k->backend, backend) &&
			    (!k->supports || k->supports(n)))
				return k;
	return NULL;
}

const char *tfk_attr_kind_name(enum tfk_attr_kind k)
{
	switch (k) {
	case TFK_ATTR_INT: return "int";
	case TFK_ATTR_FLOAT: return "float";
	case TFK_ATTR_BOOL: return "bool";
	case TFK_ATTR_STRING: return "string";
	case TFK_ATTR_TYPE: return "type";
	case TFK_ATTR_SHAPE: return "shape";
	case TFK_ATTR_TENSOR: return "tensor";
	case TFK_ATTR_LIST_INT: return "list(int)";
	case TFK_ATTR_LIST_FLOAT: return "list(float)";
	case TFK_ATTR_LIST_TYPE: return "list(type)";
	case TFK_ATTR_NONE: break;
	}
	return "none";
}

/* splitmix64 (Steele, Lea, Flood 2014; constants from Vigna's public
 * domain reference): a bijective mix, so distinct counters under one key
 * never collide. */
uint64_t tfk_rng_u64(uint64_t key, uint64_t counter)
{
	uint64_t z = key + (counter + 1) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
