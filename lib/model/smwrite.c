/*
 * smwrite.c - export a model's inference branch as a SavedModel (see
 * savedmodel.h, "Writing").
 *
 * The GraphDef is the TF1 form that tf.compat.v1.saved_model.Builder
 * writes for resource variables, because it is the one form that every
 * TensorFlow loader (C++ LoadSavedModel, TF Serving, Python's
 * tf.saved_model.load through load_v1_in_v2) and our own importer read
 * without a function library: flat nodes, restored by running the
 * SaverDef's restore op with the variables prefix fed to its filename
 * tensor. The TF2 object-graph form (functions, _CHECKPOINTABLE_OBJECT_
 * GRAPH, "a/.ATTRIBUTES/VARIABLE_VALUE" keys) was rejected: it needs
 * the trackable object graph and a traced function per signature for no
 * gain to a loader, and its checkpoint keys would not match the
 * training checkpoints' plain variable names.
 *
 * Nodes, in this order:
 *   the model's inference nodes, pruned to what m->outputs[i].infer
 *     need, under their own names, with each VariableV2 replaced by
 *     VarHandleOp NAME (dtype, shape, container "", shared_name NAME)
 *     and ReadVariableOp NAME/Read/ReadVariableOp, which the consumers
 *     read, and each StringLookup/IntegerLookup and Hashing node
 *     replaced by the TF ops Keras traces for it (see "Lookups" below:
 *     a HashTableV2 filled from assets/NAME_vocab.txt, the hashing ops);
 *   Identity, Identity_1, ...: one per output, the signature's tensors;
 *   NoOp: the __saved_model_init_op (restore assigns every variable;
 *     with lookups it has a control input on each table's init, and
 *     the asset_file_def and TF1's asset, table-initializer and main-op
 *     collections name the files and the op);
 *   saver_filename and save/...: TF1's sharded V2 Saver graph
 *     (saver.py _AddShardedSaveOpsForV2 / _AddShardedRestoreOps) with
 *     checkpoint keys = variable names, restore by AssignVariableOp
 *     from RestoreV2:k through save/Identity_k+1, as TF names them.
 * Attributes are TensorFlow's: every op we may emit is listed in
 * tf_ops[] with TF's attr names (from TF's op registrations); a node
 * attr TF does not know, or a required TF attr the node lacks, fails
 * the export rather than writing a graph TF would refuse. Ops of ours
 * with no TF equivalent (the image preprocessing and augmentation ops,
 * CategoryEncoding and TextVectorization as tfk-map builds them, lookups
 * in a dense mode, ...) are refused by name; a model's TextVectorization
 * (_SplitLookupPad) is expanded as emit_splitpad says.
 *
 * Raw inputs (tfk_savedmodel_opts.raw, tfk-train's feed mapping): a
 * second signature, "serving_raw", takes each input as the records
 * hold it (uint8 image bytes) under the feature's name; for a float
 * input the feed transformed, the model input becomes a
 * PlaceholderWithDefault whose default is
 *   Placeholder serving_raw_FEATURE (stored dtype) -> Cast (double) ->
 *   Mul scale -> AddV2 offset -> Cast (the input's dtype),
 * the feed's float32(double(v) * scale + offset) op for op, so the raw
 * signature gives tfk-eval's values bit for bit. serving_default keeps
 * feeding the model input itself (a fed PlaceholderWithDefault never
 * evaluates its default), so every consumer of the model's own inputs
 * (tfk-lite convert, tfk-predict, TF Serving) sees the graph as before.
 * Rejected: making serving_default itself raw; its callers (the TFLite
 * converter's calibration maps records through the spec's scale, the
 * model's float inputs are what Keras' model.save would export) would
 * all change meaning.
 *
 * The protobuf tree is built with protobuf-c from the formats/ protos on a
 * private allocation list freed in one go; packing it gives the bytes.
 * Files: assets/ first (the lookups' vocabularies, each through
 * tfk_out), variables/ (tfk_bundle_write, atomic), then
 * assets.extra/tfkit_spec.json, then what the caller's extra hook
 * writes there (tfk-train: the training checkpoint tfkit_train.*, see
 * nn/ckpt.h), then saved_model.pb last through tfk_out (temporary +
 * rename), so a saved_model.pb never appears before the variables it
 * restores nor before the training state that belongs with them.
 */
#include "model/smwrite.h"
#include "format/savedmodel.h"

#include "prep/lookup.h"
#include "graph/graph.h"
#include "graph/tensor.h"
#include "io/out.h"
#include "format/bundle.h"
#include "nn/model.h"
#include "util/alloc.h"
#include "util/buf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* TensorFlow version this GraphDef is written as: TF 2.14.0's
 * TF_GRAPH_DEF_VERSION 1569 and min consumer 12, the values
 * tf.saved_model.save of TF 2.14.0 wrote into the
 * half_plus_two_tf2_cpu fixture (its meta_info_def carries "2.14.0"
 * and git version "unknown", copied as written). */
#define TF_VERSION "2.14.0"
#define TF_GIT_VERSION "unknown"
#define TF_PRODUCER 1569
#define TF_MIN_CONSUMER 12

/*
 * TensorFlow's attrs of each op we export (REGISTER_OP in
 * tensorflow/core/ops/{math,nn,array,state,io,string}_ops.cc). A name
 * with a leading '!' has no default in TF: the node must carry it.
 * Attrs TF has and we do not set are left for TF to default.
 */
struct tf_op {
	const char *name;
	const char *attrs;
};

static const struct tf_op tf_ops[] = {
	{ "Abs", "!T" }, { "Add", "!T" }, { "AddV2", "!T" },
	{ "ArgMax", "!T Tidx output_type" },
	{ "ArgMin", "!T Tidx output_type" },
	{ "AvgPool", "!ksize !strides !padding data_format !T" },
	{ "BiasAdd", "!T data_format" },
	{ "BroadcastTo", "!T Tidx" },
	{ "Bucketize", "!T !boundaries" },
	{ "Cast", "!SrcT !DstT Truncate" },
	{ "ConcatV2", "!N !T Tidx" },
	{ "Conv2D", "!T !strides use_cudnn_on_gpu !padding explicit_paddings "
	  "data_format dilations" },
	{ "DenseBincount", "!Tidx !T binary_output" },
	{ "DepthwiseConv2dNative", "!T !strides !padding explicit_paddings "
	  "data_format dilations" },
	{ "Elu", "!T" },
	{ "Equal", "!T incompatible_shape_error" },
	{ "Erf", "!T" }, { "Exp", "!T" }, { "ExpandDims", "!T Tdim" },
	{ "Fill", "!T index_type" }, { "Floor", "!T" }, { "FloorMod", "!T" },
	{ "FusedBatchNormV3", "!T !U epsilon exponential_avg_factor "
	  "data_format is_training" },
	{ "GatherV2", "batch_dims !Tparams !Tindices !Taxis" },
	{ "HashTableV2", "container shared_name use_node_name_sharing "
	  "!key_dtype !value_dtype" },
	{ "InitializeTableFromTextFileV2", "!key_index !value_index "
	  "vocab_size delimiter offset" },
	{ "LookupTableFindV2", "!Tin !Tout" },
	{ "StringToHashBucketFast", "!num_buckets" },
	{ "StringLower", "encoding" },
	{ "StaticRegexReplace", "!pattern !rewrite replace_global" },
	{ "StringSplitV2", "maxsplit" },
	{ "RaggedTensorToTensor", "!T !Tindex !Tshape "
	  "!num_row_partition_tensors !row_partition_types" },
	{ "StringToHashBucketStrong", "!num_buckets !key" },
	{ "AsString", "!T precision scientific shortest width fill" },
	{ "Greater", "!T" }, { "GreaterEqual", "!T" },
	{ "Identity", "!T" },
	{ "LeakyRelu", "alpha T" },
	{ "Less", "!T" }, { "LessEqual", "!T" },
	{ "Log", "!T" }, { "Log1p", "!T" }, { "LogSoftmax", "!T" },
	{ "LogicalAnd", "" },
	{ "MatMul", "transpose_a transpose_b !T" },
	{ "Max", "keep_dims !T Tidx" }, { "Maximum", "!T" },
	{ "MaxPool", "T !ksize !strides !padding explicit_paddings "
	  "data_format" },
	{ "Mean", "keep_dims !T Tidx" }, { "Min", "keep_dims !T Tidx" },
	{ "Minimum", "!T" }, { "Mul", "!T" }, { "Neg", "!T" },
	{ "NotEqual", "!T incompatible_shape_error" },
	{ "Pack", "!N !T axis" },
	{ "Pad", "!T Tpaddings" }, { "PadV2", "!T Tpaddings" },
	{ "Pow", "!T" }, { "PreventGradient", "!T message" },
	{ "Prod", "keep_dims !T Tidx" },
	{ "Rank", "!T" }, { "RealDiv", "!T" },
	{ "Relu", "!T" }, { "Relu6", "!T" },
	{ "Reshape", "!T Tshape" },
	{ "ResizeArea", "!T align_corners" },
	{ "ResizeBicubic", "!T align_corners half_pixel_centers" },
	{ "ResizeBilinear", "!T align_corners half_pixel_centers" },
	{ "ResizeNearestNeighbor", "!T align_corners half_pixel_centers" },
	{ "Rsqrt", "!T" },
	{ "SelectV2", "!T" }, { "Selu", "!T" },
	{ "Shape", "!T out_type" },
	{ "Sigmoid", "!T" }, { "Sign", "!T" }, { "Size", "!T out_type" },
	{ "Slice", "!T !Index" },
	{ "Softmax", "!T" }, { "Softplus", "!T" },
	{ "SplitV", "!num_split !T Tlen" },
	{ "Sqrt", "!T" }, { "Square", "!T" }, { "SquaredDifference", "!T" },
	{ "Squeeze", "!T squeeze_dims" },
	{ "StopGradient", "!T" },
	{ "StridedSlice", "!T !Index begin_mask end_mask ellipsis_mask "
	  "new_axis_mask shrink_axis_mask" },
	{ "Sub", "!T" }, { "Sum", "keep_dims !T Tidx" },
	{ "Tanh", "!T" }, { "Tile", "!T Tmultiples" },
	{ "Transpose", "!T Tperm" },
	{ "Unpack", "!num !T axis" },
	{ "UnsortedSegmentSum", "!T !Tindices Tnumsegments" },
	{ "ZerosLike", "!T" },
	{ NULL, NULL }
};

static const struct tf_op *tf_op_find(const char *name)
{
	for (const struct tf_op *o = tf_ops; o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

/* Is attr name in the space-separated list (with '!' marks)? */
static int attr_listed(const char *list, const char *name, int *required)
{
	size_t n = strlen(name);
	const char *p = list;

	while (*p) {
		int req = 0;
		size_t len;

		while (*p == ' ')
			p++;
		if (*p == '!') {
			req = 1;
			p++;
		}
		len = strcspn(p, " ");
		if (len == n && !memcmp(p, name, n)) {
			if (required)
				*required = req;
			return 1;
		}
		p += len;
	}
	return 0;
}

/* Allocation list ------------------------------------------------------- */

struct pool {
	void **p;
	size_t n, cap;
	int oom;
};

static void *pz(struct pool *pl, size_t n)
{
	void *p;

	if (pl->oom)
		return NULL;
	if (pl->n == pl->cap) {
		size_t cap = pl->cap ? pl->cap * 2 : 256;
		void **q = tfk_realloc(pl->p, cap * sizeof(*q));

		if (!q) {
			pl->oom = 1;
			return NULL;
		}
		pl->p = q;
		pl->cap = cap;
	}
	p = tfk_calloc(1, n ? n : 1);
	if (!p) {
		pl->oom = 1;
		return NULL;
	}
	pl->p[pl->n++] = p;
	return p;
}

static char *pstr(struct pool *pl, const char *s)
{
	size_t n;
	char *p;

	if (!s) {
		pl->oom = 1;
		return NULL;
	}
	n = strlen(s) + 1;
	p = pz(pl, n);

	if (p)
		memcpy(p, s, n);
	return p;
}

static char *pstrf(struct pool *pl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static char *pstrf(struct pool *pl, const char *fmt, ...)
{
	va_list ap;
	char buf[1024];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		pl->oom = 1;	/* a name this long is refused as OOM-like */
		return NULL;
	}
	return pstr(pl, buf);
}

static void pool_free(struct pool *pl)
{
	for (size_t i = 0; i < pl->n; i++)
		tfk_free(pl->p[i]);
	tfk_free(pl->p);
	memset(pl, 0, sizeof(*pl));
}

/* Growable pointer arrays (NodeDef list, attr list). */
struct vec {
	void **v;
	size_t n, cap;
};

static int vec_push(struct pool *pl, struct vec *a, void *x)
{
	if (!x)
		return -1;
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 8;
		void **q = pz(pl, cap * sizeof(*q));

		if (!q)
			return -1;
		if (a->n)
			memcpy(q, a->v, a->n * sizeof(*q));
		a->v = q;
		a->cap = cap;
	}
	a->v[a->n++] = x;
	return 0;
}

/* Protobuf builders ------------------------------------------------------ */

static Tensorflow__TensorShapeProto *mk_shape(struct pool *pl, int rank,
					      const int64_t *dims)
{
	Tensorflow__TensorShapeProto *s = pz(pl, sizeof(*s));

	if (!s)
		return NULL;
	tensorflow__tensor_shape_proto__init(s);
	if (rank < 0) {
		s->unknown_rank = 1;
		return s;
	}
	if (rank == 0)
		return s;
	s->dim = pz(pl, (size_t)rank * sizeof(*s->dim));
	if (!s->dim)
		return NULL;
	s->n_dim = (size_t)rank;
	for (int i = 0; i < rank; i++) {
		Tensorflow__TensorShapeProto__Dim *d = pz(pl, sizeof(*d));

		if (!d)
			return NULL;
		tensorflow__tensor_shape_proto__dim__init(d);
		d->size = dims[i];
		s->dim[i] = d;
	}
	return s;
}

/* A TensorProto of t: numeric bytes as tensor_content (little-endian
 * raw, as TF writes non-scalar constants), strings as string_val. */
static Tensorflow__TensorProto *mk_tensor(struct pool *pl,
					  const struct tfk_tensor *t)
{
	Tensorflow__TensorProto *tp = pz(pl, sizeof(*tp));
	int64_t n = tfk_tensor_numel(t);

	if (!tp)
		return NULL;
	tensorflow__tensor_proto__init(tp);
	tp->dtype = (Tensorflow__DataType)t->dtype;
	tp->tensor_shape = mk_shape(pl, t->rank, t->shape);
	if (!tp->tensor_shape)
		return NULL;
	if (t->dtype == TFK_DT_STRING) {
		tp->string_val = pz(pl, (size_t)n * sizeof(*tp->string_val));
		if (!tp->string_val)
			return NULL;
		tp->n_string_val = (size_t)n;
		for (int64_t i = 0; i < n; i++) {
			struct tfk_str s = tfk_tensor_str(t, i);
			uint8_t *b = pz(pl, s.len);

			if (!b)
				return NULL;
			if (s.len)
				memcpy(b, s.ptr, s.len);
			tp->string_val[i].data = b;
			tp->string_val[i].len = s.len;
		}
		return tp;
	}
	if (t->nbytes) {
		uint8_t *b = pz(pl, t->nbytes);

		if (!b)
			return NULL;
		memcpy(b, t->data, t->nbytes);
		tp->tensor_content.data = b;
		tp->tensor_content.len = t->nbytes;
	}
	return tp;
}

/* A scalar or vector string tensor. */
static Tensorflow__TensorProto *mk_str_tensor(struct pool *pl, int rank,
					      const char *const *s, size_t n)
{
	Tensorflow__TensorProto *tp = pz(pl, sizeof(*tp));
	int64_t dim = (int64_t)n;

	if (!tp)
		return NULL;
	tensorflow__tensor_proto__init(tp);
	tp->dtype = TENSORFLOW__DATA_TYPE__DT_STRING;
	tp->tensor_shape = mk_shape(pl, rank, &dim);
	tp->string_val = pz(pl, (n ? n : 1) * sizeof(*tp->string_val));
	if (!tp->tensor_shape || !tp->string_val)
		return NULL;
	tp->n_string_val = n;
	for (size_t i = 0; i < n; i++) {
		tp->string_val[i].data = (uint8_t *)pstr(pl, s[i]);
		tp->string_val[i].len = strlen(s[i]);
		if (!tp->string_val[i].data)
			return NULL;
	}
	return tp;
}

static Tensorflow__TensorProto *mk_i32_scalar(struct pool *pl, int32_t v)
{
	Tensorflow__TensorProto *tp = pz(pl, sizeof(*tp));

	if (!tp)
		return NULL;
	tensorflow__tensor_proto__init(tp);
	tp->dtype = TENSORFLOW__DATA_TYPE__DT_INT32;
	tp->tensor_shape = mk_shape(pl, 0, NULL);
	tp->int_val = pz(pl, sizeof(int32_t));
	if (!tp->tensor_shape || !tp->int_val)
		return NULL;
	tp->int_val[0] = v;
	tp->n_int_val = 1;
	return tp;
}

struct nb {
	Tensorflow__NodeDef *nd;
	struct vec in, attr;
};

static int nb_begin(struct pool *pl, struct nb *b, const char *name,
		    const char *op)
{
	memset(b, 0, sizeof(*b));
	b->nd = pz(pl, sizeof(*b->nd));
	if (!b->nd)
		return -1;
	tensorflow__node_def__init(b->nd);
	b->nd->name = pstr(pl, name);
	b->nd->op = pstr(pl, op);
	return b->nd->name && b->nd->op ? 0 : -1;
}

static int nb_in(struct pool *pl, struct nb *b, const char *in)
{
	return vec_push(pl, &b->in, pstr(pl, in));
}

static Tensorflow__AttrValue *nb_attr(struct pool *pl, struct nb *b,
				      const char *key)
{
	Tensorflow__NodeDef__AttrEntry *e = pz(pl, sizeof(*e));
	Tensorflow__AttrValue *v = pz(pl, sizeof(*v));

	if (!e || !v)
		return NULL;
	tensorflow__node_def__attr_entry__init(e);
	tensorflow__attr_value__init(v);
	e->key = pstr(pl, key);
	e->value = v;
	if (!e->key || vec_push(pl, &b->attr, e))
		return NULL;
	return v;
}

static int nb_type(struct pool *pl, struct nb *b, const char *key, int t)
{
	Tensorflow__AttrValue *v = nb_attr(pl, b, key);

	if (!v)
		return -1;
	v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
	v->type = (Tensorflow__DataType)t;
	return 0;
}

static int nb_int(struct pool *pl, struct nb *b, const char *key, int64_t i)
{
	Tensorflow__AttrValue *v = nb_attr(pl, b, key);

	if (!v)
		return -1;
	v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_I;
	v->i = i;
	return 0;
}

static int nb_bool(struct pool *pl, struct nb *b, const char *key, int x)
{
	Tensorflow__AttrValue *v = nb_attr(pl, b, key);

	if (!v)
		return -1;
	v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_B;
	v->b = x != 0;
	return 0;
}

static int nb_str(struct pool *pl, struct nb *b, const char *key,
		  const void *s, size_t n)
{
	Tensorflow__AttrValue *v = nb_attr(pl, b, key);
	uint8_t *p = pz(pl, n);

	if (!v || !p)
		return -1;
	if (n)
		memcpy(p, s, n);
	v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_S;
	v->s.data = p;
	v->s.len = n;
	return 0;
}

static int nb_shape(struct pool *pl, struct nb *b, const char *key,
		    int rank, const int64_t *dims)
{
	Tensorflow__AttrValue *v = nb_attr(pl, b, key);

	if (!v)
		return -1;
	v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_SHAPE;
	v->shape = mk_shape(pl, rank, dims);
	return v->shape ? 0 : -1;
}

static int nb_tensor(struct pool *pl, struct nb *b, const char *key,
		     Tensorflow__TensorProto *tp)
{
	Tensorflow__AttrValue *v = nb_attr(pl, b, key);

	if (!v || !tp)
		return -1;
	v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TENSOR;
	v->tensor = tp;
	return 0;
}

static Tensorflow__AttrValue__ListValue *nb_list(struct pool *pl,
						 struct nb *b,
						 const char *key)
{
	Tensorflow__AttrValue *v = nb_attr(pl, b, key);
	Tensorflow__AttrValue__ListValue *l = pz(pl, sizeof(*l));

	if (!v || !l)
		return NULL;
	tensorflow__attr_value__list_value__init(l);
	v->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
	v->list = l;
	return l;
}

static int nb_types(struct pool *pl, struct nb *b, const char *key,
		    const enum tfk_dtype *t, size_t n)
{
	Tensorflow__AttrValue__ListValue *l = nb_list(pl, b, key);

	if (!l)
		return -1;
	l->type = pz(pl, (n ? n : 1) * sizeof(*l->type));
	if (!l->type)
		return -1;
	for (size_t i = 0; i < n; i++)
		l->type[i] = (Tensorflow__DataType)t[i];
	l->n_type = n;
	return 0;
}

static int nb_end(struct pool *pl, struct nb *b, struct vec *nodes)
{
	if (pl->oom || !b->nd)
		return -1;
	b->nd->input = (char **)b->in.v;
	b->nd->n_input = b->in.n;
	b->nd->attr = (Tensorflow__NodeDef__AttrEntry **)b->attr.v;
	b->nd->n_attr = b->attr.n;
	return vec_push(pl, nodes, b->nd);
}

/* One node attribute of ours as an AttrValue. */
static int put_attr(struct pool *pl, struct nb *b, const struct tfk_attr *a)
{
	const struct tfk_attr_value *v = &a->v;
	Tensorflow__AttrValue__ListValue *l;
	int n = v->list.n;

	switch (v->kind) {
	case TFK_ATTR_INT:
		return nb_int(pl, b, a->name, v->i);
	case TFK_ATTR_FLOAT: {
		Tensorflow__AttrValue *x = nb_attr(pl, b, a->name);

		if (!x)
			return -1;
		x->value_case = TENSORFLOW__ATTR_VALUE__VALUE_F;
		x->f = v->f;
		return 0;
	}
	case TFK_ATTR_BOOL:
		return nb_bool(pl, b, a->name, v->b);
	case TFK_ATTR_STRING:
		return nb_str(pl, b, a->name, v->s.p, v->s.len);
	case TFK_ATTR_TYPE:
		return nb_type(pl, b, a->name, v->type);
	case TFK_ATTR_SHAPE:
		return nb_shape(pl, b, a->name, v->shape.rank, v->shape.dims);
	case TFK_ATTR_TENSOR:
		return nb_tensor(pl, b, a->name, mk_tensor(pl, v->tensor));
	case TFK_ATTR_LIST_INT:
		l = nb_list(pl, b, a->name);
		if (!l || !(l->i = pz(pl, (size_t)(n ? n : 1) * sizeof(*l->i))))
			return -1;
		if (n)
			memcpy(l->i, v->list.i, (size_t)n * sizeof(*l->i));
		l->n_i = (size_t)n;
		return 0;
	case TFK_ATTR_LIST_FLOAT:
		l = nb_list(pl, b, a->name);
		if (!l || !(l->f = pz(pl, (size_t)(n ? n : 1) * sizeof(*l->f))))
			return -1;
		if (n)
			memcpy(l->f, v->list.f, (size_t)n * sizeof(*l->f));
		l->n_f = (size_t)n;
		return 0;
	case TFK_ATTR_LIST_TYPE:
		return nb_types(pl, b, a->name, v->list.type, (size_t)n);
	default:
		return -1;
	}
}

/* Export ------------------------------------------------------------------ */

struct exp {
	struct pool pl;
	const struct tfk_model *m;
	const struct tfk_savedmodel_opts *o;	/* or NULL */
	char **raw_ph;		/* [m->n_inputs] serving_raw's tensor names */
	const struct tfk_graph *g;
	int n;			/* graph nodes */
	char *need;		/* [n] node is exported */
	char *is_var;		/* [n] model variable node */
	char **out0;		/* [n] "name" of output 0 as consumers read it
				 * (the Read of a variable) */
	struct vec nodes;
	struct vec inits;	/* table initializer names (lookups) */
	struct vec assets;	/* their AssetFileDefs */
	struct vec colls;	/* collection_def entries */
	struct tfk_err *err;
};

static int oom(struct exp *x)
{
	return tfk_errf(x->err, TFK_ENOMEM, "out of memory");
}

/* The input string for port p: "name", "name:k", or the variable's
 * read. */
static char *port_name(struct exp *x, struct tfk_port p)
{
	const struct tfk_node *n = tfk_graph_node(x->g, p.node);

	if (p.index == 0)
		return x->out0[p.node] ? x->out0[p.node] : pstr(&x->pl,
								n->name);
	return pstrf(&x->pl, "%s:%d", n->name, p.index);
}

/* Lookups ---------------------------------------------------------------- */

/*
 * StringLookup / IntegerLookup in output_mode int, written the way
 * TensorFlow exports a Keras lookup whose vocabulary is a file
 * (keras index_lookup.py over lookup_ops.StaticHashTable with a
 * TextFileInitializer; TF1 Builder's asset handling):
 *   NAME/hash_table          HashTableV2 (key_dtype, value_dtype int64,
 *                            shared_name as TextFileInitializer names it)
 *   NAME/vocabulary_path     Const string: the asset file name; loaders
 *                            feed DIR/assets/FILE to it (asset_file_def)
 *   NAME/table_init          InitializeTableFromTextFileV2: key = whole
 *                            line (-2), value = line number (-1) + offset
 *                            token_start, vocab_size = the token count;
 *                            run by __saved_model_init_op
 *   NAME/default_value       Const int64: the OOV index (oov_start)
 *   NAME (or NAME/LookupTableFindV2 with a mask)   LookupTableFindV2
 *   with a mask token: Equal(keys, NAME/mask_token), SelectV2 (NAME)
 *   of NAME/mask_value (0) and the found indexes, as Keras' _lookup_dense.
 * The file, assets/NAME_vocab.txt, holds the learned tokens in index
 * order, one per line (tfk_savedmodel_write writes it). A StringLookup
 * with K > 1 OOV indices adds Keras' buckets: where the find gave
 * oov_start, oov_start + StringToHashBucketFast(keys, K) (Equal,
 * AddV2, SelectV2); an IntegerLookup's buckets are FloorMod(keys, K).
 * Other modes and num_oov_indices 0 (an error in Keras at run time) are
 * refused by name.
 */
static Tensorflow__TensorInfo *mk_tinfo(struct pool *pl, const char *name,
					int dtype, int rank,
					const int64_t *dims);

static int is_lookup(const char *op)
{
	return !strcmp(op, "StringLookup") || !strcmp(op, "IntegerLookup");
}

static const char *node_s(const struct tfk_node *n, const char *name)
{
	const struct tfk_attr_value *v = tfk_node_attr(n, name);

	return v && v->kind == TFK_ATTR_STRING ? v->s.p : "";
}

/* The node's lookup, from its attrs as its kernel builds it. */
static int node_lookup(const struct tfk_node *n, struct tfk_lookup *l,
		       struct tfk_err *err)
{
	int rc = tfk_lookup_from_node(n, l, err);

	return rc ? tfk_err_prefix(err, "node %s", n->name) : 0;
}

static int check_lookup(struct exp *x, int i)
{
	const struct tfk_node *n = tfk_graph_node(x->g, i);
	const struct tfk_tdesc *in = tfk_graph_desc(x->g, n->inputs[0]);
	int is_int = !strcmp(n->op->name, "IntegerLookup"), rc;
	long k = (long)tfk_node_attr_i(n, "num_oov_indices", 1);
	struct tfk_lookup l;

	if (strcmp(node_s(n, "output_mode"), "int"))
		return tfk_errf(x->err, TFK_EINVAL, "node %s: %s in "
				"output_mode %s cannot be exported yet (only "
				"int)", n->name, n->op->name,
				node_s(n, "output_mode"));
	if (k < 1)
		return tfk_errf(x->err, TFK_EINVAL, "node %s: %s with "
				"num_oov_indices 0 cannot be exported (an "
				"error on OOV values in Keras)", n->name,
				n->op->name);
	if (is_int ? in->dtype != TFK_DT_INT64 && in->dtype != TFK_DT_INT32
		   : in->dtype != TFK_DT_STRING)
		return tfk_errf(x->err, TFK_EINVAL, "node %s: %s of %s keys",
				n->name, n->op->name,
				tfk_dtype_name(in->dtype));
	if ((rc = node_lookup(n, &l, x->err)))
		return rc;
	/* TF reads the file line by line: a token must be one line */
	for (long t = l.token_start; !is_int && t < tfk_lookup_size(&l);
	     t++) {
		size_t len;
		const char *p = tfk_lookup_token(&l, t, &len);

		if (!len || memchr(p, '\n', len) || p[len - 1] == '\r') {
			rc = tfk_errf(x->err, TFK_EINVAL, "node %s: "
				      "vocabulary entry %ld is empty or holds "
				      "a line break; a vocabulary file "
				      "cannot hold it", n->name,
				      t - l.token_start);
			break;
		}
	}
	tfk_lookup_release(&l);
	return rc;
}

/* "NAME_vocab.txt" with '/' as '_'. */
static char *asset_name(struct pool *pl, const char *node)
{
	char *s = pstrf(pl, "%s_vocab.txt", node);

	for (char *p = s; p && *p; p++)
		if (*p == '/')
			*p = '_';
	return s;
}

static Tensorflow__TensorProto *mk_scalar(struct exp *x, int dtype,
					  const char *s, int64_t v)
{
	struct tfk_tensor t;
	Tensorflow__TensorProto *tp;

	int32_t v32 = (int32_t)v;

	if (dtype == TFK_DT_STRING)
		return mk_str_tensor(&x->pl, 0, &s, 1);
	if (dtype == TFK_DT_INT32 ?
	    tfk_tensor_init_view(&t, TFK_DT_INT32, 0, NULL, &v32, sizeof(v32),
				 TFK_OWN_BORROWED, x->err) :
	    tfk_tensor_init_view(&t, TFK_DT_INT64, 0, NULL, &v, sizeof(v),
				 TFK_OWN_BORROWED, x->err))
		return NULL;
	tp = mk_tensor(&x->pl, &t);
	tfk_tensor_release(&t);
	return tp;
}

static int emit_const(struct exp *x, const char *name, int dtype,
		      const char *s, int64_t v)
{
	struct nb b;

	return nb_begin(&x->pl, &b, name, "Const") ||
	       nb_type(&x->pl, &b, "dtype", dtype) ||
	       nb_tensor(&x->pl, &b, "value", mk_scalar(x, dtype, s, v)) ||
	       nb_end(&x->pl, &b, &x->nodes);
}

/* NAME/hash_table filled by NAME/table_init from assets/NAME_vocab.txt
 * (nv lines, values line + offset) through NAME/vocabulary_path, with
 * its init and asset recorded; *table gets the table's name. */
static int emit_table(struct exp *x, const char *nm, int kt, long nv,
		      long offset, char **table)
{
	struct pool *pl = &x->pl;
	Tensorflow__AssetFileDef *af = pz(pl, sizeof(*af));
	char *file = asset_name(pl, nm), *path, *init, *shared;
	struct nb b;

	*table = pstrf(pl, "%s/hash_table", nm);
	path = pstrf(pl, "%s/vocabulary_path", nm);
	init = pstrf(pl, "%s/table_init", nm);
	/* TextFileInitializer's shared name for its table */
	shared = pstrf(pl, "hash_table_%s_%ld_-2_-1", file ? file : "", nv);
	if (!af || !file || !*table || !path || !init || !shared)
		return oom(x);
	if (nb_begin(pl, &b, *table, "HashTableV2") ||
	    nb_str(pl, &b, "container", "", 0) ||
	    nb_str(pl, &b, "shared_name", shared, strlen(shared)) ||
	    nb_bool(pl, &b, "use_node_name_sharing", 0) ||
	    nb_type(pl, &b, "key_dtype", kt) ||
	    nb_type(pl, &b, "value_dtype", TFK_DT_INT64) ||
	    nb_end(pl, &b, &x->nodes))
		return oom(x);
	if (emit_const(x, path, TFK_DT_STRING, file, 0) ||
	    nb_begin(pl, &b, init, "InitializeTableFromTextFileV2") ||
	    nb_in(pl, &b, *table) || nb_in(pl, &b, path) ||
	    nb_int(pl, &b, "key_index", -2) ||
	    nb_int(pl, &b, "value_index", -1) ||
	    nb_int(pl, &b, "vocab_size", nv) ||
	    nb_str(pl, &b, "delimiter", "\t", 1) ||
	    nb_int(pl, &b, "offset", offset) ||
	    nb_end(pl, &b, &x->nodes) ||
	    vec_push(pl, &x->inits, pstrf(pl, "^%s", init)))
		return oom(x);
	tensorflow__asset_file_def__init(af);
	af->tensor_info = mk_tinfo(pl, pstrf(pl, "%s:0", path),
				   TFK_DT_STRING, 0, NULL);
	af->filename = file;
	if (!af->tensor_info || vec_push(pl, &x->assets, af))
		return oom(x);
	return 0;
}

static int emit_lookup(struct exp *x, int i)
{
	const struct tfk_node *n = tfk_graph_node(x->g, i);
	const struct tfk_tdesc *in = tfk_graph_desc(x->g, n->inputs[0]);
	int is_int = !strcmp(n->op->name, "IntegerLookup");
	int kt = is_int ? TFK_DT_INT64 : TFK_DT_STRING, mask, rc;
	struct pool *pl = &x->pl;
	struct tfk_lookup l;
	long nv, oov_start, token_start, k;
	char *table, *dflt, *keys, *find;
	const char *nm = n->name;
	struct nb b;

	if ((rc = node_lookup(n, &l, x->err)))
		return rc;
	k = l.o.num_oov;
	nv = tfk_lookup_size(&l) - l.token_start;
	oov_start = l.oov_start;
	token_start = l.token_start;
	mask = l.o.has_mask;
	tfk_lookup_release(&l);
	dflt = pstrf(pl, "%s/default_value", nm);
	keys = port_name(x, n->inputs[0]);
	find = mask || k > 1 ? pstrf(pl, "%s/LookupTableFindV2", nm) :
	       pstr(pl, nm);
	if (!dflt || !keys || !find)
		return oom(x);
	if ((rc = emit_table(x, nm, kt, nv, token_start, &table)))
		return rc;
	if (is_int && in->dtype == TFK_DT_INT32) {
		char *cast = pstrf(pl, "%s/Cast", nm);

		if (!cast || nb_begin(pl, &b, cast, "Cast") ||
		    nb_in(pl, &b, keys) ||
		    nb_type(pl, &b, "SrcT", TFK_DT_INT32) ||
		    nb_type(pl, &b, "DstT", TFK_DT_INT64) ||
		    nb_bool(pl, &b, "Truncate", 0) ||
		    nb_end(pl, &b, &x->nodes))
			return oom(x);
		keys = cast;
	}
	if (emit_const(x, dflt, TFK_DT_INT64, NULL, oov_start) ||
	    nb_begin(pl, &b, find, "LookupTableFindV2") ||
	    nb_in(pl, &b, table) || nb_in(pl, &b, keys) ||
	    nb_in(pl, &b, dflt) ||
	    nb_type(pl, &b, "Tin", kt) ||
	    nb_type(pl, &b, "Tout", TFK_DT_INT64) ||
	    nb_end(pl, &b, &x->nodes))
		return oom(x);
	if (k > 1) {
		/* K OOV buckets: oov_start + Fingerprint64 % K (ints:
		 * floormod K) where the table found nothing (Keras'
		 * _lookup_dense) */
		char *hb = pstrf(pl, "%s/oov_bucket", nm);
		char *os = pstrf(pl, "%s/oov_start", nm);
		char *oi = pstrf(pl, "%s/oov_index", nm);
		char *io = pstrf(pl, "%s/is_oov", nm);
		char *sel = mask ? pstrf(pl, "%s/oov", nm) : pstr(pl, nm);
		char *kc = pstrf(pl, "%s/num_oov_indices", nm);

		if (!hb || !os || !oi || !io || !sel || !kc)
			return oom(x);
		/* ints: floormod(keys, K); strings: hash buckets */
		if (is_int ? emit_const(x, kc, TFK_DT_INT64, NULL, k) ||
			     nb_begin(pl, &b, hb, "FloorMod") ||
			     nb_in(pl, &b, keys) || nb_in(pl, &b, kc) ||
			     nb_type(pl, &b, "T", TFK_DT_INT64) ||
			     nb_end(pl, &b, &x->nodes) :
		    nb_begin(pl, &b, hb, "StringToHashBucketFast") ||
		    nb_in(pl, &b, keys) || nb_int(pl, &b, "num_buckets", k) ||
		    nb_end(pl, &b, &x->nodes))
			return oom(x);
		if (
		    emit_const(x, os, TFK_DT_INT64, NULL, oov_start) ||
		    nb_begin(pl, &b, oi, "AddV2") || nb_in(pl, &b, hb) ||
		    nb_in(pl, &b, os) || nb_type(pl, &b, "T", TFK_DT_INT64) ||
		    nb_end(pl, &b, &x->nodes) ||
		    nb_begin(pl, &b, io, "Equal") || nb_in(pl, &b, find) ||
		    nb_in(pl, &b, os) || nb_type(pl, &b, "T", TFK_DT_INT64) ||
		    nb_bool(pl, &b, "incompatible_shape_error", 1) ||
		    nb_end(pl, &b, &x->nodes) ||
		    nb_begin(pl, &b, sel, "SelectV2") || nb_in(pl, &b, io) ||
		    nb_in(pl, &b, oi) || nb_in(pl, &b, find) ||
		    nb_type(pl, &b, "T", TFK_DT_INT64) ||
		    nb_end(pl, &b, &x->nodes))
			return oom(x);
		find = sel;
	}
	if (mask) {
		char *mt = pstrf(pl, "%s/mask_token", nm);
		char *eq = pstrf(pl, "%s/Equal", nm);
		char *mv = pstrf(pl, "%s/mask_value", nm);
		const char *ms = node_s(n, "mask_token");

		if (!mt || !eq || !mv ||
		    emit_const(x, mt, kt, ms, strtoll(ms, NULL, 10)) ||
		    nb_begin(pl, &b, eq, "Equal") ||
		    nb_in(pl, &b, keys) || nb_in(pl, &b, mt) ||
		    nb_type(pl, &b, "T", kt) ||
		    nb_bool(pl, &b, "incompatible_shape_error", 1) ||
		    nb_end(pl, &b, &x->nodes) ||
		    emit_const(x, mv, TFK_DT_INT64, NULL, 0) ||
		    nb_begin(pl, &b, nm, "SelectV2") ||
		    nb_in(pl, &b, eq) || nb_in(pl, &b, mv) ||
		    nb_in(pl, &b, find) ||
		    nb_type(pl, &b, "T", TFK_DT_INT64) ||
		    nb_end(pl, &b, &x->nodes))
			return oom(x);
	}
	return 0;
}

/*
 * Hashing as Keras' _hash_values_to_bins traces it: with a mask (and
 * num_bins > 1) Equal(x, mask) first and num_bins - 1 buckets; integer
 * inputs through AsString (decimal); StringToHashBucketFast, or
 * StringToHashBucketStrong with key [salt0, salt1] when salted; with
 * the mask AddV2 1 and SelectV2(mask, 0, bins). The final node keeps
 * the Hashing node's name.
 */
static int emit_hashing(struct exp *x, int i)
{
	const struct tfk_node *n = tfk_graph_node(x->g, i);
	int dt = tfk_graph_desc(x->g, n->inputs[0])->dtype;
	int64_t bins = tfk_node_attr_i(n, "num_bins", 1);
	int mask = tfk_node_attr_b(n, "has_mask", 0) && bins > 1;
	int salted = tfk_node_attr_b(n, "salted", 0);
	const char *nm = n->name, *ms = node_s(n, "mask_value");
	struct pool *pl = &x->pl;
	char *keys = port_name(x, n->inputs[0]), *s = keys, *h, *eq = NULL;
	struct nb b;

	if (mask) {
		char *mv = pstrf(pl, "%s/mask_value", nm);

		eq = pstrf(pl, "%s/Equal", nm);
		bins--;
		if (!mv || !eq || emit_const(x, mv, dt, ms,
					     strtoll(ms, NULL, 10)) ||
		    nb_begin(pl, &b, eq, "Equal") || nb_in(pl, &b, keys) ||
		    nb_in(pl, &b, mv) || nb_type(pl, &b, "T", dt) ||
		    nb_bool(pl, &b, "incompatible_shape_error", 1) ||
		    nb_end(pl, &b, &x->nodes))
			return oom(x);
	}
	if (dt != TFK_DT_STRING) {
		s = pstrf(pl, "%s/AsString", nm);
		if (!s || nb_begin(pl, &b, s, "AsString") ||
		    nb_in(pl, &b, keys) || nb_type(pl, &b, "T", dt) ||
		    nb_end(pl, &b, &x->nodes))
			return oom(x);
	}
	h = mask ? pstrf(pl, "%s/hash", nm) : pstr(pl, nm);
	if (!h || nb_begin(pl, &b, h, salted ? "StringToHashBucketStrong" :
			   "StringToHashBucketFast") ||
	    nb_in(pl, &b, s) || nb_int(pl, &b, "num_buckets", bins))
		return oom(x);
	if (salted) {
		Tensorflow__AttrValue__ListValue *l = nb_list(pl, &b, "key");

		if (!l || !(l->i = pz(pl, 2 * sizeof(*l->i))))
			return oom(x);
		l->i[0] = tfk_node_attr_i(n, "salt0", 0);
		l->i[1] = tfk_node_attr_i(n, "salt1", 0);
		l->n_i = 2;
	}
	if (nb_end(pl, &b, &x->nodes))
		return oom(x);
	if (mask) {
		char *one = pstrf(pl, "%s/ones", nm);
		char *add = pstrf(pl, "%s/add", nm);
		char *zero = pstrf(pl, "%s/zeros", nm);

		if (!one || !add || !zero ||
		    emit_const(x, one, TFK_DT_INT64, NULL, 1) ||
		    nb_begin(pl, &b, add, "AddV2") || nb_in(pl, &b, h) ||
		    nb_in(pl, &b, one) || nb_type(pl, &b, "T", TFK_DT_INT64) ||
		    nb_end(pl, &b, &x->nodes) ||
		    emit_const(x, zero, TFK_DT_INT64, NULL, 0) ||
		    nb_begin(pl, &b, nm, "SelectV2") || nb_in(pl, &b, eq) ||
		    nb_in(pl, &b, zero) || nb_in(pl, &b, add) ||
		    nb_type(pl, &b, "T", TFK_DT_INT64) ||
		    nb_end(pl, &b, &x->nodes))
			return oom(x);
	}
	return 0;
}

/*
 * _SplitLookupPad (a TextVectorization's split, lookup and padding) as
 * Keras traces tf.strings.split -> the lookup on the ragged values ->
 * to_tensor(0, [None, L]):
 *   NAME/StringSplitV2 (NAME/sep "": whitespace), NAME/value_rowids =
 *   indices[:, 0] and NAME/nrows = dense_shape[0] (StridedSlice), the
 *   table as emit_table makes it (offset = the first token's index),
 *   NAME/LookupTableFindV2 on the split values with the node's default
 *   (the OOV index), Keras' mask select (Equal to "", SelectV2 0), and
 *   NAME = RaggedTensorToTensor(NAME/shape [-1, L], values, NAME/pad,
 *   nrows, value_rowids) with row_partition_types FIRST_DIM_SIZE,
 *   VALUE_ROWIDS.
 * The node's values must be consecutive (a file's line numbers).
 */
static int check_splitpad(struct exp *x, int i)
{
	const struct tfk_node *n = tfk_graph_node(x->g, i);
	const struct tfk_attr_value *k = tfk_node_attr(n, "keys");
	const struct tfk_attr_value *v = tfk_node_attr(n, "values");
	int64_t j, nk = k ? k->tensor->shape[0] : 0;

	if (!k || !v || k->tensor->dtype != TFK_DT_STRING ||
	    v->tensor->dtype != TFK_DT_INT64 || v->tensor->shape[0] != nk)
		return tfk_errf(x->err, TFK_EINVAL, "node %s: a table of "
				"string keys to int64 values is needed",
				n->name);
	for (j = 0; j < nk; j++) {
		struct tfk_str s = tfk_tensor_str(k->tensor, j);

		if (((const int64_t *)v->tensor->data)[j] !=
		    ((const int64_t *)v->tensor->data)[0] + j)
			return tfk_errf(x->err, TFK_EINVAL, "node %s: values "
					"are not consecutive; a vocabulary "
					"file cannot hold them", n->name);
		if (!s.len || memchr(s.ptr, '\n', s.len) ||
		    s.ptr[s.len - 1] == '\r')
			return tfk_errf(x->err, TFK_EINVAL, "node %s: "
					"vocabulary entry %lld is empty or "
					"holds a line break; a vocabulary file "
					"cannot hold it", n->name,
					(long long)j);
	}
	return 0;
}

static int emit_splitpad(struct exp *x, int i)
{
	const struct tfk_node *n = tfk_graph_node(x->g, i);
	const struct tfk_tensor *v = tfk_node_attr(n, "values")->tensor;
	const char *nm = n->name;
	struct pool *pl = &x->pl;
	long nv = (long)v->shape[0];
	long off = nv ? (long)((const int64_t *)v->data)[0] : 0;
	int64_t shape[2] = { -1, tfk_node_attr_i(n, "length", 0) };
	int64_t two = 2;
	char *split = pstrf(pl, "%s/StringSplitV2", nm);
	char *sep = pstrf(pl, "%s/sep", nm);
	char *rows = pstrf(pl, "%s/value_rowids", nm);
	char *nrows = pstrf(pl, "%s/nrows", nm);
	char *find = pstrf(pl, "%s/LookupTableFindV2", nm);
	char *mt = pstrf(pl, "%s/mask_token", nm);
	char *eq = pstrf(pl, "%s/Equal", nm);
	char *mv = pstrf(pl, "%s/mask_value", nm);
	char *sel = pstrf(pl, "%s/SelectV2", nm);
	char *shp = pstrf(pl, "%s/shape", nm);
	char *pad = pstrf(pl, "%s/pad", nm);
	char *vals = pstrf(pl, "%s/StringSplitV2:1", nm);
	char *table;
	struct tfk_tensor st;
	Tensorflow__AttrValue__ListValue *l;
	struct nb b;
	int rc;

	if (!split || !sep || !rows || !nrows || !find || !mt || !eq ||
	    !mv || !sel || !shp || !pad || !vals)
		return oom(x);
	if (emit_const(x, sep, TFK_DT_STRING, "", 0) ||
	    nb_begin(pl, &b, split, "StringSplitV2") ||
	    nb_in(pl, &b, port_name(x, n->inputs[0])) ||
	    nb_in(pl, &b, sep) || nb_int(pl, &b, "maxsplit", -1) ||
	    nb_end(pl, &b, &x->nodes))
		return oom(x);
	/* indices[:, 0] and dense_shape[0]: begin, end, strides */
	{
		static const int32_t sv[2][3][2] = {
			{ { 0, 0 }, { 0, 1 }, { 1, 1 } },
			{ { 0 }, { 1 }, { 1 } } };
		static const char *const what[3] = { "stack", "stack_1",
						     "stack_2" };
		const char *sl[2] = { rows, nrows };

		for (int k = 0; k < 2; k++) {
			int64_t r = 2 - k;

			if (nb_begin(pl, &b, sl[k], "StridedSlice") ||
			    nb_in(pl, &b, pstrf(pl, "%s:%d", split,
						k ? 2 : 0)))
				return oom(x);
			for (int q = 0; q < 3; q++) {
				char *cn = pstrf(pl, "%s/%s", sl[k], what[q]);
				struct nb cb;

				if (tfk_tensor_init_view(&st, TFK_DT_INT32, 1,
							 &r,
							 (void *)sv[k][q],
							 (size_t)r * 4,
							 TFK_OWN_BORROWED,
							 x->err))
					return TFK_EINVAL;
				if (!cn || nb_begin(pl, &cb, cn, "Const") ||
				    nb_type(pl, &cb, "dtype", TFK_DT_INT32) ||
				    nb_tensor(pl, &cb, "value",
					      mk_tensor(pl, &st)) ||
				    nb_end(pl, &cb, &x->nodes) ||
				    nb_in(pl, &b, cn))
					return oom(x);
			}
			if (nb_type(pl, &b, "T", TFK_DT_INT64) ||
			    nb_type(pl, &b, "Index", TFK_DT_INT32) ||
			    nb_int(pl, &b, "begin_mask", k ? 0 : 1) ||
			    nb_int(pl, &b, "end_mask", k ? 0 : 1) ||
			    nb_int(pl, &b, "ellipsis_mask", 0) ||
			    nb_int(pl, &b, "new_axis_mask", 0) ||
			    nb_int(pl, &b, "shrink_axis_mask", k ? 1 : 2) ||
			    nb_end(pl, &b, &x->nodes))
				return oom(x);
		}
	}
	if ((rc = emit_table(x, nm, TFK_DT_STRING, nv, off, &table)))
		return rc;
	if (nb_begin(pl, &b, find, "LookupTableFindV2") ||
	    nb_in(pl, &b, table) || nb_in(pl, &b, vals) ||
	    nb_in(pl, &b, port_name(x, n->inputs[1])) ||
	    nb_type(pl, &b, "Tin", TFK_DT_STRING) ||
	    nb_type(pl, &b, "Tout", TFK_DT_INT64) ||
	    nb_end(pl, &b, &x->nodes) ||
	    emit_const(x, mt, TFK_DT_STRING, "", 0) ||
	    nb_begin(pl, &b, eq, "Equal") || nb_in(pl, &b, vals) ||
	    nb_in(pl, &b, mt) || nb_type(pl, &b, "T", TFK_DT_STRING) ||
	    nb_bool(pl, &b, "incompatible_shape_error", 1) ||
	    nb_end(pl, &b, &x->nodes) ||
	    emit_const(x, mv, TFK_DT_INT64, NULL, 0) ||
	    nb_begin(pl, &b, sel, "SelectV2") || nb_in(pl, &b, eq) ||
	    nb_in(pl, &b, mv) || nb_in(pl, &b, find) ||
	    nb_type(pl, &b, "T", TFK_DT_INT64) ||
	    nb_end(pl, &b, &x->nodes))
		return oom(x);
	if (tfk_tensor_init_view(&st, TFK_DT_INT64, 1, &two, shape,
				 sizeof(shape), TFK_OWN_BORROWED, x->err))
		return TFK_EINVAL;
	{
		struct nb cb;

		if (nb_begin(pl, &cb, shp, "Const") ||
		    nb_type(pl, &cb, "dtype", TFK_DT_INT64) ||
		    nb_tensor(pl, &cb, "value", mk_tensor(pl, &st)) ||
		    nb_end(pl, &cb, &x->nodes) ||
		    emit_const(x, pad, TFK_DT_INT64, NULL,
			       tfk_node_attr_i(n, "pad", 0)))
			return oom(x);
	}
	if (nb_begin(pl, &b, nm, "RaggedTensorToTensor") ||
	    nb_in(pl, &b, shp) || nb_in(pl, &b, sel) || nb_in(pl, &b, pad) ||
	    nb_in(pl, &b, nrows) || nb_in(pl, &b, rows) ||
	    nb_type(pl, &b, "T", TFK_DT_INT64) ||
	    nb_type(pl, &b, "Tindex", TFK_DT_INT64) ||
	    nb_type(pl, &b, "Tshape", TFK_DT_INT64) ||
	    nb_int(pl, &b, "num_row_partition_tensors", 2))
		return oom(x);
	l = nb_list(pl, &b, "row_partition_types");
	if (!l || !(l->s = pz(pl, 2 * sizeof(*l->s))))
		return oom(x);
	l->s[0].data = (uint8_t *)pstr(pl, "FIRST_DIM_SIZE");
	l->s[0].len = 14;
	l->s[1].data = (uint8_t *)pstr(pl, "VALUE_ROWIDS");
	l->s[1].len = 12;
	l->n_s = 2;
	if (!l->s[0].data || !l->s[1].data || nb_end(pl, &b, &x->nodes))
		return oom(x);
	return 0;
}

/* Check node i can be written as TF's op, before anything is built. */
static int check_node(struct exp *x, int i)
{
	const struct tfk_node *n = tfk_graph_node(x->g, i);
	const char *op = n->op->name;
	const struct tf_op *t;
	int req;

	if (!strcmp(op, "Placeholder") || !strcmp(op, "Const"))
		return 0;
	if (is_lookup(op))
		return check_lookup(x, i);
	if (!strcmp(op, "_SplitLookupPad"))
		return check_splitpad(x, i);
	if (!strcmp(op, "Hashing")) {
		int dt = tfk_graph_desc(x->g, n->inputs[0])->dtype;

		if (dt != TFK_DT_STRING && dt != TFK_DT_INT64 &&
		    dt != TFK_DT_INT32)
			return tfk_errf(x->err, TFK_EINVAL, "node %s: Hashing "
					"of %s values cannot be exported",
					n->name, tfk_dtype_name(dt));
		return 0;
	}
	if (!strcmp(op, "VariableV2")) {
		if (!x->is_var[i])
			return tfk_errf(x->err, TFK_EINVAL, "node %s: variable "
					"is not one of the model's", n->name);
		return 0;
	}
	t = tf_op_find(op);
	if (!t)
		return tfk_errf(x->err, TFK_EINVAL, "node %s: op %s has no "
				"TensorFlow equivalent; cannot export it",
				n->name, op);
	for (int k = 0; k < n->n_attrs; k++)
		if (!attr_listed(t->attrs, n->attrs[k].name, NULL))
			return tfk_errf(x->err, TFK_EINVAL, "node %s: attr "
					"'%s' of op %s is not TensorFlow's; "
					"cannot export it", n->name,
					n->attrs[k].name, op);
	/* Every TF-required attr must be among the node's. */
	for (const char *p = t->attrs; *p;) {
		char name[64];
		size_t len;

		while (*p == ' ')
			p++;
		req = *p == '!';
		p += req;
		len = strcspn(p, " ");
		if (len >= sizeof(name))
			len = sizeof(name) - 1;
		memcpy(name, p, len);
		name[len] = '\0';
		p += strcspn(p, " ");
		if (req && len && !tfk_node_attr(n, name))
			return tfk_errf(x->err, TFK_EINVAL, "node %s: op %s "
					"needs attr '%s'", n->name, op, name);
	}
	return 0;
}

static int emit_variable(struct exp *x, int i)
{
	const struct tfk_node *n = tfk_graph_node(x->g, i);
	const struct tfk_tdesc *d = &n->outputs[0];
	struct pool *pl = &x->pl;
	struct nb b;
	char *read;

	if (nb_begin(pl, &b, n->name, "VarHandleOp") ||
	    nb_str(pl, &b, "container", "", 0) ||
	    nb_type(pl, &b, "dtype", d->dtype) ||
	    nb_shape(pl, &b, "shape", d->rank, d->shape) ||
	    nb_str(pl, &b, "shared_name", n->name, strlen(n->name)) ||
	    nb_end(pl, &b, &x->nodes))
		return oom(x);
	read = pstrf(pl, "%s/Read/ReadVariableOp", n->name);
	if (!read || nb_begin(pl, &b, read, "ReadVariableOp") ||
	    nb_in(pl, &b, n->name) ||
	    nb_type(pl, &b, "dtype", d->dtype) ||
	    nb_end(pl, &b, &x->nodes))
		return oom(x);
	x->out0[i] = read;
	return 0;
}

static int emit_node(struct exp *x, int i)
{
	const struct tfk_node *n = tfk_graph_node(x->g, i);
	const char *op = n->op->name;
	struct pool *pl = &x->pl;
	struct nb b;

	if (x->is_var[i])
		return emit_variable(x, i);
	if (is_lookup(op))
		return emit_lookup(x, i);
	if (!strcmp(op, "_SplitLookupPad"))
		return emit_splitpad(x, i);
	if (!strcmp(op, "Hashing"))
		return emit_hashing(x, i);
	if (nb_begin(pl, &b, n->name, op))
		return oom(x);
	for (int k = 0; k < n->n_inputs; k++)
		if (vec_push(pl, &b.in, port_name(x, n->inputs[k])))
			return oom(x);
	if (!strcmp(op, "Const")) {
		const struct tfk_tensor *v =
			tfk_graph_const_value(x->g, (struct tfk_port){ i, 0 });

		if (!v)
			return tfk_errf(x->err, TFK_EINVAL, "node %s: Const "
					"without a value", n->name);
		if (nb_type(pl, &b, "dtype", v->dtype) ||
		    nb_tensor(pl, &b, "value", mk_tensor(pl, v)))
			return oom(x);
	} else {
		for (int k = 0; k < n->n_attrs; k++)
			if (put_attr(pl, &b, &n->attrs[k]))
				return oom(x);
	}
	if (nb_end(pl, &b, &x->nodes))
		return oom(x);
	return 0;
}

static Tensorflow__TensorInfo *mk_tinfo(struct pool *pl, const char *name,
					int dtype, int rank,
					const int64_t *dims)
{
	Tensorflow__TensorInfo *ti = pz(pl, sizeof(*ti));

	if (!ti)
		return NULL;
	tensorflow__tensor_info__init(ti);
	ti->encoding_case = TENSORFLOW__TENSOR_INFO__ENCODING_NAME;
	ti->name = pstr(pl, name);
	ti->dtype = (Tensorflow__DataType)dtype;
	ti->tensor_shape = mk_shape(pl, rank, dims);
	return ti->name && ti->tensor_shape ? ti : NULL;
}

/* Variables in key order (the order of the bundle and of TF1's saver,
 * which sorts by name). */
struct var_ref {
	const char *name;
	const struct tfk_tensor *t;
};

static int var_cmp(const void *a, const void *b)
{
	return strcmp(((const struct var_ref *)a)->name,
		      ((const struct var_ref *)b)->name);
}

static int collect_vars(const struct tfk_model *m, struct var_ref **out,
			struct tfk_err *err)
{
	struct var_ref *v = tfk_calloc((size_t)(m->n_vars ? m->n_vars : 1),
				       sizeof(*v));

	if (!v)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (int i = 0; i < m->n_vars; i++)
		v[i].t = tfk_graph_var_at(m->g, m->vars[i].var, &v[i].name);
	qsort(v, (size_t)m->n_vars, sizeof(*v), var_cmp);
	*out = v;
	return 0;
}

/* A Const node name holding the string vector s[0..n); 0 or -1. */
static int nb_str_const(struct exp *x, struct nb *b, const char *name,
			const char *const *s, int n)
{
	struct pool *pl = &x->pl;

	return nb_begin(pl, b, name, "Const") ||
		nb_type(pl, b, "dtype", TFK_DT_STRING) ||
		nb_tensor(pl, b, "value", mk_str_tensor(pl, 1, s,
							(size_t)n)) ||
		nb_end(pl, b, &x->nodes) ? -1 : 0;
}

/* TF1's sharded V2 saver, reading and restoring vars[0..nv). */
static int emit_saver(struct exp *x, const struct var_ref *vars, int nv,
		      Tensorflow__SaverDef **sdef)
{
	struct pool *pl = &x->pl;
	struct nb b;
	const char **names = pz(pl, (size_t)(nv ? nv : 1) * sizeof(char *));
	const char **empty = pz(pl, (size_t)(nv ? nv : 1) * sizeof(char *));
	enum tfk_dtype *dt = pz(pl, (size_t)(nv ? nv : 1) * sizeof(*dt));
	const char *part[] = { "_temp/part" };
	struct vec assigns = { 0 };
	Tensorflow__SaverDef *s;

	if (!names || !empty || !dt)
		return oom(x);
	for (int k = 0; k < nv; k++) {
		names[k] = vars[k].name;
		empty[k] = "";
		dt[k] = vars[k].t->dtype;
	}
	/* The filename fed by loaders (SaverDef.filename_tensor_name). */
	if (nb_begin(pl, &b, "saver_filename", "Placeholder") ||
	    nb_type(pl, &b, "dtype", TFK_DT_STRING) ||
	    nb_shape(pl, &b, "shape", 0, NULL) || nb_end(pl, &b, &x->nodes))
		return oom(x);
	/* Save: write a temporary shard, then merge it into the prefix. */
	if (nb_begin(pl, &b, "save/StringJoin/inputs_1", "Const") ||
	    nb_type(pl, &b, "dtype", TFK_DT_STRING) ||
	    nb_tensor(pl, &b, "value", mk_str_tensor(pl, 0, part, 1)) ||
	    nb_end(pl, &b, &x->nodes))
		return oom(x);
	if (nb_begin(pl, &b, "save/StringJoin", "StringJoin") ||
	    nb_in(pl, &b, "saver_filename") ||
	    nb_in(pl, &b, "save/StringJoin/inputs_1") ||
	    nb_int(pl, &b, "N", 2) || nb_str(pl, &b, "separator", "", 0) ||
	    nb_end(pl, &b, &x->nodes))
		return oom(x);
	if (nb_begin(pl, &b, "save/num_shards", "Const") ||
	    nb_type(pl, &b, "dtype", TFK_DT_INT32) ||
	    nb_tensor(pl, &b, "value", mk_i32_scalar(pl, 1)) ||
	    nb_end(pl, &b, &x->nodes))
		return oom(x);
	if (nb_begin(pl, &b, "save/ShardedFilename/shard", "Const") ||
	    nb_type(pl, &b, "dtype", TFK_DT_INT32) ||
	    nb_tensor(pl, &b, "value", mk_i32_scalar(pl, 0)) ||
	    nb_end(pl, &b, &x->nodes))
		return oom(x);
	if (nb_begin(pl, &b, "save/ShardedFilename", "ShardedFilename") ||
	    nb_in(pl, &b, "save/StringJoin") ||
	    nb_in(pl, &b, "save/ShardedFilename/shard") ||
	    nb_in(pl, &b, "save/num_shards") || nb_end(pl, &b, &x->nodes))
		return oom(x);
	if (nb_str_const(x, &b, "save/SaveV2/tensor_names", names, nv))
		return oom(x);
	if (nb_str_const(x, &b, "save/SaveV2/shape_and_slices", empty, nv))
		return oom(x);
	if (nb_begin(pl, &b, "save/SaveV2", "SaveV2") ||
	    nb_in(pl, &b, "save/ShardedFilename") ||
	    nb_in(pl, &b, "save/SaveV2/tensor_names") ||
	    nb_in(pl, &b, "save/SaveV2/shape_and_slices"))
		return oom(x);
	for (int k = 0; k < nv; k++)
		if (vec_push(pl, &b.in, pstrf(pl, "%s/Read/ReadVariableOp",
					      vars[k].name)))
			return oom(x);
	if (nb_types(pl, &b, "dtypes", dt, (size_t)nv) ||
	    nb_end(pl, &b, &x->nodes))
		return oom(x);
	if (nb_begin(pl, &b, "save/control_dependency", "Identity") ||
	    nb_in(pl, &b, "save/ShardedFilename") ||
	    nb_in(pl, &b, "^save/SaveV2") ||
	    nb_type(pl, &b, "T", TFK_DT_STRING) || nb_end(pl, &b, &x->nodes))
		return oom(x);
	if (nb_begin(pl, &b, "save/MergeV2Checkpoints/checkpoint_prefixes",
		     "Pack") ||
	    nb_in(pl, &b, "save/ShardedFilename") ||
	    nb_in(pl, &b, "^save/control_dependency") ||
	    nb_int(pl, &b, "N", 1) || nb_type(pl, &b, "T", TFK_DT_STRING) ||
	    nb_int(pl, &b, "axis", 0) || nb_end(pl, &b, &x->nodes))
		return oom(x);
	if (nb_begin(pl, &b, "save/MergeV2Checkpoints", "MergeV2Checkpoints") ||
	    nb_in(pl, &b, "save/MergeV2Checkpoints/checkpoint_prefixes") ||
	    nb_in(pl, &b, "saver_filename") ||
	    nb_bool(pl, &b, "delete_old_dirs", 1) ||
	    nb_end(pl, &b, &x->nodes))
		return oom(x);
	if (nb_begin(pl, &b, "save/Identity", "Identity") ||
	    nb_in(pl, &b, "saver_filename") ||
	    nb_in(pl, &b, "^save/MergeV2Checkpoints") ||
	    nb_in(pl, &b, "^save/control_dependency") ||
	    nb_type(pl, &b, "T", TFK_DT_STRING) || nb_end(pl, &b, &x->nodes))
		return oom(x);
	/* Restore: RestoreV2 by key, assigned to each variable. */
	if (nb_str_const(x, &b, "save/RestoreV2/tensor_names", names, nv))
		return oom(x);
	if (nb_str_const(x, &b, "save/RestoreV2/shape_and_slices", empty, nv))
		return oom(x);
	if (nb_begin(pl, &b, "save/RestoreV2", "RestoreV2") ||
	    nb_in(pl, &b, "saver_filename") ||
	    nb_in(pl, &b, "save/RestoreV2/tensor_names") ||
	    nb_in(pl, &b, "save/RestoreV2/shape_and_slices") ||
	    nb_types(pl, &b, "dtypes", dt, (size_t)nv) ||
	    nb_end(pl, &b, &x->nodes))
		return oom(x);
	for (int k = 0; k < nv; k++) {
		char *id = pstrf(pl, "save/Identity_%d", k + 1);
		char *as = k ? pstrf(pl, "save/AssignVariableOp_%d", k) :
			pstr(pl, "save/AssignVariableOp");

		if (!id || !as || nb_begin(pl, &b, id, "Identity") ||
		    nb_in(pl, &b, k ? pstrf(pl, "save/RestoreV2:%d", k) :
			  "save/RestoreV2") ||
		    nb_type(pl, &b, "T", dt[k]) || nb_end(pl, &b, &x->nodes))
			return oom(x);
		if (nb_begin(pl, &b, as, "AssignVariableOp") ||
		    nb_in(pl, &b, vars[k].name) || nb_in(pl, &b, id) ||
		    nb_type(pl, &b, "dtype", dt[k]) ||
		    nb_end(pl, &b, &x->nodes) ||
		    vec_push(pl, &assigns, pstrf(pl, "^%s", as)))
			return oom(x);
	}
	if (nb_begin(pl, &b, "save/restore_shard", "NoOp"))
		return oom(x);
	b.in = assigns;
	if (nb_end(pl, &b, &x->nodes))
		return oom(x);
	if (nb_begin(pl, &b, "save/restore_all", "NoOp") ||
	    nb_in(pl, &b, "^save/restore_shard") || nb_end(pl, &b, &x->nodes))
		return oom(x);

	s = pz(pl, sizeof(*s));
	if (!s)
		return oom(x);
	tensorflow__saver_def__init(s);
	s->filename_tensor_name = "saver_filename:0";
	s->save_tensor_name = "save/Identity:0";
	s->restore_op_name = "save/restore_all";
	s->max_to_keep = 5;	/* tf.compat.v1.train.Saver's defaults */
	s->sharded = 1;
	s->keep_checkpoint_every_n_hours = 10000.0f;
	s->version = TENSORFLOW__SAVER_DEF__CHECKPOINT_FORMAT_VERSION__V2;
	*sdef = s;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* TensorFlow's node name rule (graph/node_builder, IsValidNodeName):
 * [A-Za-z0-9.][A-Za-z0-9_./>-]*  */
static int valid_name(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
	      (*s >= '0' && *s <= '9') || *s == '.'))
		return 0;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || strchr("_./>-", *s)))
			return 0;
	return 1;
}

/* Node names must be valid for TensorFlow and unique in a GraphDef. */
static int check_names(struct exp *x)
{
	size_t n = x->nodes.n;
	const char **v = tfk_calloc(n ? n : 1, sizeof(*v));
	int rc = 0;

	if (!v)
		return oom(x);
	for (size_t i = 0; i < n; i++) {
		v[i] = ((Tensorflow__NodeDef *)x->nodes.v[i])->name;
		if (!rc && !valid_name(v[i]))
			rc = tfk_errf(x->err, TFK_EINVAL, "node name '%s' is "
				      "not a valid TensorFlow node name", v[i]);
	}
	if (rc) {
		tfk_free(v);
		return rc;
	}
	qsort(v, n, sizeof(*v), name_cmp);
	for (size_t i = 1; i < n && !rc; i++)
		if (!strcmp(v[i], v[i - 1]))
			rc = tfk_errf(x->err, TFK_EINVAL, "node name '%s' "
				      "twice in the exported graph", v[i]);
	tfk_free(v);
	return rc;
}

/* A node name not used yet, "base" or "base_k". */
static char *fresh_name(struct exp *x, const char *base)
{
	for (int k = 0;; k++) {
		char *s = k ? pstrf(&x->pl, "%s_%d", base, k) :
			pstr(&x->pl, base);
		int used = 0;

		if (!s)
			return NULL;
		for (size_t i = 0; i < x->nodes.n && !used; i++)
			used = !strcmp(((Tensorflow__NodeDef *)
					x->nodes.v[i])->name, s);
		for (int i = 0; i < x->n && !used; i++)
			used = x->need[i] && !strcmp(
				tfk_graph_node(x->g, i)->name, s);
		if (!used)
			return s;
	}
}

/* The collections TF1's Builder and tables_initializer() write for
 * assets and tables: "saved_model_assets" (the AssetFileDefs as Any,
 * loader_impl.get_asset_tensors' fallback), "table_initializer"
 * (GraphKeys.TABLE_INITIALIZERS) and "saved_model_main_op" (the init
 * op, for loaders older than the __saved_model_init_op signature). */
static int add_assets(struct exp *x, const char *init_op)
{
	struct pool *pl = &x->pl;
	Tensorflow__CollectionDef__AnyList *al = pz(pl, sizeof(*al));
	Tensorflow__CollectionDef__NodeList *tl = pz(pl, sizeof(*tl));
	Tensorflow__CollectionDef__NodeList *ml = pz(pl, sizeof(*ml));
	static const char *const keys[] = { "saved_model_assets",
		"saved_model_main_op", "table_initializer" };

	if (!al || !tl || !ml)
		return -1;
	tensorflow__collection_def__any_list__init(al);
	tensorflow__collection_def__node_list__init(tl);
	tensorflow__collection_def__node_list__init(ml);
	al->value = pz(pl, x->assets.n * sizeof(*al->value));
	tl->value = pz(pl, x->inits.n * sizeof(*tl->value));
	ml->value = pz(pl, sizeof(*ml->value));
	if (!al->value || !tl->value || !ml->value)
		return -1;
	for (size_t k = 0; k < x->assets.n; k++) {
		Tensorflow__AssetFileDef *af = x->assets.v[k];
		Google__Protobuf__Any *any = pz(pl, sizeof(*any));
		size_t n = tensorflow__asset_file_def__get_packed_size(af);

		if (!any)
			return -1;
		google__protobuf__any__init(any);
		any->type_url = "type.googleapis.com/tensorflow.AssetFileDef";
		any->value.data = pz(pl, n);
		if (!any->value.data)
			return -1;
		any->value.len = tensorflow__asset_file_def__pack(af,
							any->value.data);
		al->value[al->n_value++] = any;
	}
	for (size_t k = 0; k < x->inits.n; k++)
		tl->value[tl->n_value++] = (char *)x->inits.v[k] + 1;
	ml->value[ml->n_value++] = (char *)init_op;
	for (int k = 0; k < 3; k++) {
		Tensorflow__MetaGraphDef__CollectionDefEntry *e =
			pz(pl, sizeof(*e));
		Tensorflow__CollectionDef *c = pz(pl, sizeof(*c));

		if (!e || !c)
			return -1;
		tensorflow__meta_graph_def__collection_def_entry__init(e);
		tensorflow__collection_def__init(c);
		e->key = (char *)keys[k];
		e->value = c;
		if (k == 0) {
			c->kind_case =
				TENSORFLOW__COLLECTION_DEF__KIND_ANY_LIST;
			c->any_list = al;
		} else {
			c->kind_case =
				TENSORFLOW__COLLECTION_DEF__KIND_NODE_LIST;
			c->node_list = k == 1 ? ml : tl;
		}
		if (vec_push(pl, &x->colls, e))
			return -1;
	}
	return 0;
}

/* Raw inputs ------------------------------------------------------------ */

/* Does the feed's transform of input k change its values? */
static int raw_transforms(const struct tfk_model_input *in,
			  const struct tfk_savedmodel_raw *r)
{
	/* integer and string inputs take their values as they are (a
	 * reader such as tfk-predict converts int64 ids to int32) */
	if (in->dtype == TFK_DT_FLOAT || in->dtype == TFK_DT_DOUBLE)
		return r->dtype != (int)in->dtype || r->scale != 1 ||
		       r->offset != 0;
	return 0;
}

/* The input index k when node i is a model input that serving_raw
 * feeds through a transform, else -1. */
static int raw_input(struct exp *x, int i)
{
	const char *name = tfk_graph_node(x->g, i)->name;

	if (!x->o || x->o->n_raw != x->m->n_inputs)
		return -1;
	for (int k = 0; k < x->m->n_inputs; k++)
		if (!strcmp(x->m->inputs[k].name, name))
			return raw_transforms(&x->m->inputs[k],
					      &x->o->raw[k]) ? k : -1;
	return -1;
}

/* A double scalar Const NAME. */
static int emit_f64(struct exp *x, const char *name, double v)
{
	struct pool *pl = &x->pl;
	struct tfk_tensor t;
	struct nb b;

	memset(&t, 0, sizeof(t));
	t.dtype = TFK_DT_DOUBLE;
	t.data = &v;
	t.nbytes = sizeof(v);
	if (!name || nb_begin(pl, &b, name, "Const") ||
	    nb_type(pl, &b, "dtype", TFK_DT_DOUBLE) ||
	    nb_tensor(pl, &b, "value", mk_tensor(pl, &t)) ||
	    nb_end(pl, &b, &x->nodes))
		return -1;
	return 0;
}

static int emit_cast(struct exp *x, const char *name, const char *in,
		     int from, int to)
{
	struct pool *pl = &x->pl;
	struct nb b;

	if (!name || nb_begin(pl, &b, name, "Cast") || nb_in(pl, &b, in) ||
	    nb_type(pl, &b, "SrcT", from) || nb_type(pl, &b, "DstT", to) ||
	    nb_bool(pl, &b, "Truncate", 0) || nb_end(pl, &b, &x->nodes))
		return -1;
	return 0;
}

/* Model input node i as a PlaceholderWithDefault of the transformed raw
 * Placeholder (see the top comment). */
static int emit_raw_input(struct exp *x, int i)
{
	int k = raw_input(x, i);
	const struct tfk_model_input *in = &x->m->inputs[k];
	const struct tfk_savedmodel_raw *r = &x->o->raw[k];
	struct pool *pl = &x->pl;
	char *base, *cur, *p;
	struct nb b;

	if (!x->raw_ph)
		x->raw_ph = pz(pl, (size_t)x->m->n_inputs * sizeof(char *));
	base = pstrf(pl, "serving_raw_%s", r->feature);
	if (!x->raw_ph || !base)
		return oom(x);
	/* a feature name may hold what TF node names cannot */
	for (p = base; *p; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || strchr("_.-", *p)))
			*p = '_';
	base = fresh_name(x, base);
	if (!base || nb_begin(pl, &b, base, "Placeholder") ||
	    nb_type(pl, &b, "dtype", r->dtype) ||
	    nb_shape(pl, &b, "shape", in->rank, in->shape) ||
	    nb_end(pl, &b, &x->nodes))
		return oom(x);
	x->raw_ph[k] = pstrf(pl, "%s:0", base);
	cur = base;
	{
		char *mul = pstrf(pl, "%s/mul", base);
		char *add = pstrf(pl, "%s/add", base);
		char *sc = pstrf(pl, "%s/scale", base);
		char *of = pstrf(pl, "%s/offset", base);

		if (r->dtype != TFK_DT_DOUBLE) {
			cur = pstrf(pl, "%s/Cast", base);
			if (emit_cast(x, cur, base, r->dtype, TFK_DT_DOUBLE))
				return oom(x);
		}
		if (emit_f64(x, sc, r->scale) || emit_f64(x, of, r->offset) ||
		    !mul || nb_begin(pl, &b, mul, "Mul") ||
		    nb_in(pl, &b, cur) || nb_in(pl, &b, sc) ||
		    nb_type(pl, &b, "T", TFK_DT_DOUBLE) ||
		    nb_end(pl, &b, &x->nodes) ||
		    !add || nb_begin(pl, &b, add, "AddV2") ||
		    nb_in(pl, &b, mul) || nb_in(pl, &b, of) ||
		    nb_type(pl, &b, "T", TFK_DT_DOUBLE) ||
		    nb_end(pl, &b, &x->nodes))
			return oom(x);
		cur = add;
		if (in->dtype != TFK_DT_DOUBLE) {
			cur = pstrf(pl, "%s/Cast_1", base);
			if (emit_cast(x, cur, add, TFK_DT_DOUBLE, in->dtype))
				return oom(x);
		}
	}
	if (nb_begin(pl, &b, in->name, "PlaceholderWithDefault") ||
	    nb_in(pl, &b, cur) || nb_type(pl, &b, "dtype", in->dtype) ||
	    nb_shape(pl, &b, "shape", in->rank, in->shape) ||
	    nb_end(pl, &b, &x->nodes))
		return oom(x);
	return 0;
}

/* The "serving_raw" signature: serving_default's outputs, the inputs
 * keyed by feature as the records hold them. */
static int add_raw_signature(struct exp *x, Tensorflow__MetaGraphDef *mg,
			     const Tensorflow__SignatureDef *def)
{
	const struct tfk_model *m = x->m;
	struct pool *pl = &x->pl;
	Tensorflow__SignatureDef *rs = pz(pl, sizeof(*rs));
	Tensorflow__MetaGraphDef__SignatureDefEntry **se, *e;

	se = pz(pl, (mg->n_signature_def + 1) * sizeof(*se));
	e = pz(pl, sizeof(*e));
	if (!rs || !se || !e)
		return oom(x);
	tensorflow__signature_def__init(rs);
	rs->method_name = "tensorflow/serving/predict";
	rs->inputs = pz(pl, (size_t)(m->n_inputs + 1) * sizeof(void *));
	if (!rs->inputs)
		return oom(x);
	for (int k = 0; k < m->n_inputs; k++) {
		const struct tfk_model_input *in = &m->inputs[k];
		const struct tfk_savedmodel_raw *r = &x->o->raw[k];
		int raw = raw_transforms(in, r);
		Tensorflow__SignatureDef__InputsEntry *ie = pz(pl, sizeof(*ie));
		char *key = pstr(pl, r->feature);

		if (!ie || !key)
			return oom(x);
		for (int j = 1;; j++) {
			int dup = 0;

			for (size_t q = 0; q < rs->n_inputs && !dup; q++)
				dup = !strcmp(rs->inputs[q]->key, key);
			if (!dup)
				break;
			if (!(key = pstrf(pl, "%s_%d", r->feature, j)))
				return oom(x);
		}
		tensorflow__signature_def__inputs_entry__init(ie);
		ie->key = key;
		ie->value = mk_tinfo(pl, raw ? x->raw_ph[k] :
				     pstrf(pl, "%s:0", in->name),
				     raw ? r->dtype : (int)in->dtype,
				     in->rank, in->shape);
		if (!ie->value)
			return oom(x);
		rs->inputs[rs->n_inputs++] = ie;
	}
	rs->outputs = def->outputs;
	rs->n_outputs = def->n_outputs;
	memcpy(se, mg->signature_def, mg->n_signature_def * sizeof(*se));
	tensorflow__meta_graph_def__signature_def_entry__init(e);
	e->key = "serving_raw";
	e->value = rs;
	se[mg->n_signature_def] = e;
	mg->signature_def = se;
	mg->n_signature_def++;
	return 0;
}

static int build(struct exp *x, Tensorflow__SavedModel **out)
{
	const struct tfk_model *m = x->m;
	struct pool *pl = &x->pl;
	struct var_ref *vars = NULL;
	Tensorflow__SavedModel *sm;
	Tensorflow__MetaGraphDef *mg;
	Tensorflow__MetaGraphDef__MetaInfoDef *mi;
	Tensorflow__GraphDef *gd;
	Tensorflow__VersionDef *ver;
	Tensorflow__SignatureDef *sig, *init;
	Tensorflow__MetaGraphDef__SignatureDefEntry **se;
	Tensorflow__SaverDef *sdef = NULL;
	struct nb b;
	int rc;

	x->n = tfk_graph_n_nodes(x->g);
	x->need = pz(pl, (size_t)x->n);
	x->is_var = pz(pl, (size_t)x->n);
	x->out0 = pz(pl, (size_t)x->n * sizeof(char *));
	if (!x->need || !x->is_var || !x->out0)
		return oom(x);
	for (int i = 0; i < m->n_vars; i++) {
		const char *name;
		struct tfk_port p;

		tfk_graph_var_at(m->g, m->vars[i].var, &name);
		if (tfk_graph_find(x->g, name, &p, x->err))
			return TFK_EINVAL;
		x->is_var[p.node] = 1;
		x->need[p.node] = 1;
	}
	for (int i = 0; i < m->n_inputs; i++) {
		struct tfk_port p;

		if (tfk_graph_find(x->g, m->inputs[i].name, &p, x->err))
			return TFK_EINVAL;
		x->need[p.node] = 1;
	}
	for (int i = 0; i < m->n_outputs; i++) {
		int node = m->outputs[i].infer.node;

		if (node < 0 || node >= x->n)
			return tfk_errf(x->err, TFK_EINVAL, "output %s: no "
					"inference port", m->outputs[i].name);
		x->need[node] = 1;
	}
	for (int i = x->n - 1; i >= 0; i--) {
		const struct tfk_node *n = tfk_graph_node(x->g, i);

		if (!x->need[i])
			continue;
		for (int k = 0; k < n->n_inputs; k++)
			x->need[n->inputs[k].node] = 1;
	}
	for (int i = 0; i < x->n; i++)
		if (x->need[i] && (rc = check_node(x, i)))
			return rc;
	for (int i = 0; i < x->n; i++)
		if (x->need[i] && (rc = raw_input(x, i) >= 0 ?
				   emit_raw_input(x, i) : emit_node(x, i)))
			return rc;

	sig = pz(pl, sizeof(*sig));
	init = pz(pl, sizeof(*init));
	if (!sig || !init)
		return oom(x);
	tensorflow__signature_def__init(sig);
	tensorflow__signature_def__init(init);
	sig->method_name = "tensorflow/serving/predict";
	sig->inputs = pz(pl, (size_t)(m->n_inputs + 1) * sizeof(void *));
	sig->outputs = pz(pl, (size_t)(m->n_outputs + 1) * sizeof(void *));
	if (!sig->inputs || !sig->outputs)
		return oom(x);
	for (int i = 0; i < m->n_inputs; i++) {
		const struct tfk_model_input *in = &m->inputs[i];
		Tensorflow__SignatureDef__InputsEntry *e = pz(pl, sizeof(*e));
		char *tn = pstrf(pl, "%s:0", in->name);

		if (!e || !tn)
			return oom(x);
		tensorflow__signature_def__inputs_entry__init(e);
		e->key = pstr(pl, in->name);
		e->value = mk_tinfo(pl, tn, in->dtype, in->rank, in->shape);
		if (!e->key || !e->value)
			return oom(x);
		sig->inputs[sig->n_inputs++] = e;
	}
	for (int i = 0; i < m->n_outputs; i++) {
		const struct tfk_model_output *o = &m->outputs[i];
		const struct tfk_tdesc *d = tfk_graph_desc(x->g, o->infer);
		Tensorflow__SignatureDef__OutputsEntry *e = pz(pl, sizeof(*e));
		char *id = fresh_name(x, "Identity"), *key = pstr(pl, o->name);

		if (!e || !id || !key)
			return oom(x);
		/* Keys are unique: a second output of one layer gets
		 * "name_1", as Keras uniquifies. */
		for (int k = 1;; k++) {
			int dup = 0;

			for (size_t j = 0; j < sig->n_outputs && !dup; j++)
				dup = !strcmp(sig->outputs[j]->key, key);
			if (!dup)
				break;
			key = pstrf(pl, "%s_%d", o->name, k);
			if (!key)
				return oom(x);
		}
		if (nb_begin(pl, &b, id, "Identity") ||
		    vec_push(pl, &b.in, port_name(x, o->infer)) ||
		    nb_type(pl, &b, "T", d->dtype) ||
		    nb_end(pl, &b, &x->nodes))
			return oom(x);
		tensorflow__signature_def__outputs_entry__init(e);
		e->key = key;
		e->value = mk_tinfo(pl, pstrf(pl, "%s:0", id), d->dtype,
				    d->rank, d->shape);
		if (!e->value)
			return oom(x);
		sig->outputs[sig->n_outputs++] = e;
	}
	/* __saved_model_init_op: a NoOp, as TF 2 writes it when there is
	 * nothing to initialise (loader.cc GetInitOp reads the signature's
	 * output name and runs it after the restore). */
	{
		Tensorflow__SignatureDef__OutputsEntry *e = pz(pl, sizeof(*e));
		char *noop = fresh_name(x, "NoOp");

		init->outputs = pz(pl, sizeof(void *));
		if (!e || !noop || !init->outputs ||
		    nb_begin(pl, &b, noop, "NoOp"))
			return oom(x);
		/* the lookups' tables are filled by it (^table_init) */
		for (size_t k = 0; k < x->inits.n; k++)
			if (vec_push(pl, &b.in, x->inits.v[k]))
				return oom(x);
		if (nb_end(pl, &b, &x->nodes) ||
		    (x->inits.n && add_assets(x, noop)))
			return oom(x);
		tensorflow__signature_def__outputs_entry__init(e);
		e->key = "__saved_model_init_op";
		e->value = mk_tinfo(pl, noop, 0, -1, NULL);
		if (!e->value)
			return oom(x);
		init->outputs[0] = e;
		init->n_outputs = 1;
	}
	rc = collect_vars(m, &vars, x->err);
	if (rc)
		return rc;
	/* No variables, no saver (TF1's Saver refuses an empty list, and
	 * loaders skip the restore without a SaverDef). */
	rc = m->n_vars ? emit_saver(x, vars, m->n_vars, &sdef) : 0;
	tfk_free(vars);
	if (rc)
		return rc;
	rc = check_names(x);
	if (rc)
		return rc;

	gd = pz(pl, sizeof(*gd));
	ver = pz(pl, sizeof(*ver));
	mi = pz(pl, sizeof(*mi));
	mg = pz(pl, sizeof(*mg));
	sm = pz(pl, sizeof(*sm));
	se = pz(pl, 2 * sizeof(*se));
	if (!gd || !ver || !mi || !mg || !sm || !se)
		return oom(x);
	tensorflow__graph_def__init(gd);
	tensorflow__version_def__init(ver);
	ver->producer = TF_PRODUCER;
	ver->min_consumer = TF_MIN_CONSUMER;
	gd->versions = ver;
	gd->node = (Tensorflow__NodeDef **)x->nodes.v;
	gd->n_node = x->nodes.n;
	tensorflow__meta_graph_def__meta_info_def__init(mi);
	mi->tags = pz(pl, sizeof(char *));
	if (!mi->tags)
		return oom(x);
	mi->tags[0] = "serve";
	mi->n_tags = 1;
	mi->tensorflow_version = TF_VERSION;
	mi->tensorflow_git_version = TF_GIT_VERSION;
	tensorflow__meta_graph_def__init(mg);
	mg->meta_info_def = mi;
	mg->graph_def = gd;
	mg->saver_def = sdef;
	mg->asset_file_def = (Tensorflow__AssetFileDef **)x->assets.v;
	mg->n_asset_file_def = x->assets.n;
	mg->collection_def = (Tensorflow__MetaGraphDef__CollectionDefEntry **)
		x->colls.v;
	mg->n_collection_def = x->colls.n;
	for (int k = 0; k < 2; k++) {
		se[k] = pz(pl, sizeof(**se));
		if (!se[k])
			return oom(x);
		tensorflow__meta_graph_def__signature_def_entry__init(se[k]);
	}
	se[0]->key = "__saved_model_init_op";
	se[0]->value = init;
	se[1]->key = "serving_default";
	se[1]->value = sig;
	mg->signature_def = se;
	mg->n_signature_def = 2;
	if (x->o && x->o->n_raw == m->n_inputs && m->n_inputs &&
	    (rc = add_raw_signature(x, mg, sig)))
		return rc;
	tensorflow__saved_model__init(sm);
	sm->saved_model_schema_version = 1;
	sm->meta_graphs = pz(pl, sizeof(*sm->meta_graphs));
	if (!sm->meta_graphs)
		return oom(x);
	sm->meta_graphs[0] = mg;
	sm->n_meta_graphs = 1;
	if (pl->oom)
		return oom(x);
	*out = sm;
	return 0;
}

static int pack_opts(const struct tfk_model *m,
		     const struct tfk_savedmodel_opts *o, void **data,
		     size_t *n, struct tfk_err *err);

int tfk_savedmodel_pack(const struct tfk_model *m, void **data, size_t *n,
			struct tfk_err *err)
{
	return pack_opts(m, NULL, data, n, err);
}

static int pack_opts(const struct tfk_model *m,
		     const struct tfk_savedmodel_opts *o, void **data,
		     size_t *n, struct tfk_err *err)
{
	struct exp x;
	Tensorflow__SavedModel *sm = NULL;
	int rc;

	*data = NULL;
	*n = 0;
	memset(&x, 0, sizeof(x));
	x.m = m;
	x.o = o;
	x.g = m->g;
	x.err = err;
	rc = build(&x, &sm);
	if (!rc) {
		size_t len = tensorflow__saved_model__get_packed_size(sm);
		uint8_t *p = tfk_malloc(len ? len : 1);

		if (!p) {
			rc = oom(&x);
		} else {
			tensorflow__saved_model__pack(sm, p);
			*data = p;
			*n = len;
		}
	}
	pool_free(&x.pl);
	return rc;
}

static int write_file(const char *path, const void *p, size_t n,
		      struct tfk_err *err)
{
	struct tfk_out *o;
	int rc = tfk_out_open(&o, path, TFK_COMP_NONE, err);

	if (rc)
		return rc;
	rc = tfk_out_write(o, p, n, err);
	if (rc) {
		tfk_out_discard(o);
		return rc;
	}
	return tfk_out_close(o, err);
}

/* DIR/assets/NAME_vocab.txt of every lookup the outputs need: the
 * learned tokens in index order, one per line (decimal for integers),
 * as the InitializeTableFromTextFileV2 of emit_lookup reads them. */
static int write_assets(const char *dir, const struct tfk_model *m,
			struct tfk_err *err)
{
	int n = tfk_graph_n_nodes(m->g), rc = 0, made = 0;
	char *need = tfk_calloc((size_t)(n ? n : 1), 1);
	struct pool pl;
	struct tfk_buf b;

	if (!need)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	memset(&pl, 0, sizeof(pl));
	tfk_buf_init(&b);
	for (int i = 0; i < m->n_outputs; i++)
		if (m->outputs[i].infer.node >= 0 &&
		    m->outputs[i].infer.node < n)
			need[m->outputs[i].infer.node] = 1;
	for (int i = n - 1; i >= 0; i--) {
		const struct tfk_node *nd = tfk_graph_node(m->g, i);

		for (int k = 0; need[i] && k < nd->n_inputs; k++)
			need[nd->inputs[k].node] = 1;
	}
	for (int i = 0; i < n && !rc; i++) {
		const struct tfk_node *nd = tfk_graph_node(m->g, i);
		struct tfk_lookup l;
		char *path;

		if (!need[i] || (!is_lookup(nd->op->name) &&
				 strcmp(nd->op->name, "_SplitLookupPad")))
			continue;
		if (!made) {
			path = pstrf(&pl, "%s/assets", dir);
			rc = path ? tfk_mkdirs(path, err) :
			     tfk_errf(err, TFK_ENOMEM, "out of memory");
			made = 1;
			if (rc)
				break;
		}
		tfk_buf_reset(&b);
		if (!is_lookup(nd->op->name)) {
			const struct tfk_tensor *k =
				tfk_node_attr(nd, "keys")->tensor;

			for (int64_t t = 0; t < k->shape[0]; t++) {
				struct tfk_str s = tfk_tensor_str(k, t);

				tfk_buf_add(&b, s.ptr, s.len);
				tfk_buf_addc(&b, '\n');
			}
			goto write;
		}
		if ((rc = node_lookup(nd, &l, err)))
			break;
		for (long t = l.token_start; t < tfk_lookup_size(&l); t++) {
			size_t len;
			const char *p = tfk_lookup_token(&l, t, &len);

			if (l.o.is_int)
				tfk_buf_addf(&b, "%" PRId64 "\n",
					     tfk_lookup_token_int(&l, t));
			else {
				tfk_buf_add(&b, p, len);
				tfk_buf_addc(&b, '\n');
			}
		}
		tfk_lookup_release(&l);
write:
		path = pstrf(&pl, "%s/assets/%s", dir,
			     asset_name(&pl, nd->name));
		if (!path || !tfk_buf_ok(&b))
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		else
			rc = write_file(path, b.data ? (const void *)b.data :
					"", b.len, err);
	}
	tfk_buf_release(&b);
	pool_free(&pl);
	tfk_free(need);
	return rc;
}

int tfk_savedmodel_write(const char *dir, const struct tfk_model *m,
			 const char *spec_json, struct tfk_err *err)
{
	struct tfk_savedmodel_opts o;

	memset(&o, 0, sizeof(o));
	o.spec_json = spec_json;
	return tfk_savedmodel_write_opts(dir, m, &o, err);
}

int tfk_savedmodel_write_opts(const char *dir, const struct tfk_model *m,
			      const struct tfk_savedmodel_opts *o,
			      struct tfk_err *err)
{
	const char *spec_json = o ? o->spec_json : NULL;
	tfk_savedmodel_extra_fn extra = o ? o->extra : NULL;
	void *ctx = o ? o->ctx : NULL;
	struct var_ref *vars = NULL;
	const char **keys = NULL;
	const struct tfk_tensor **ts = NULL;
	void *pb = NULL;
	size_t n = 0, len = strlen(dir) + 64;
	char *path = tfk_malloc(len);
	int rc;

	if (!path)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	/* Build first: a model we cannot export writes nothing. */
	rc = pack_opts(m, o, &pb, &n, err);
	if (!rc)
		rc = write_assets(dir, m, err);
	if (!rc)
		rc = collect_vars(m, &vars, err);
	if (!rc && m->n_vars) {
		keys = tfk_calloc((size_t)m->n_vars, sizeof(*keys));
		ts = tfk_calloc((size_t)m->n_vars, sizeof(*ts));
		if (!keys || !ts)
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		for (int i = 0; !rc && i < m->n_vars; i++) {
			keys[i] = vars[i].name;
			ts[i] = vars[i].t;
		}
		snprintf(path, len, "%s/variables", dir);
		if (!rc)
			rc = tfk_mkdirs(path, err);
		snprintf(path, len, "%s/variables/variables", dir);
		if (!rc)
			rc = tfk_bundle_write(path, m->n_vars, keys, ts, err);
	} else if (!rc) {
		rc = tfk_mkdirs(dir, err);
	}
	if (!rc && (spec_json || extra)) {
		snprintf(path, len, "%s/assets.extra", dir);
		rc = tfk_mkdirs(path, err);
	}
	if (!rc && spec_json) {
		snprintf(path, len, "%s/assets.extra/tfkit_spec.json", dir);
		rc = write_file(path, spec_json, strlen(spec_json), err);
	}
	if (!rc && extra) {
		snprintf(path, len, "%s/assets.extra", dir);
		rc = extra(ctx, path, err);
	}
	if (!rc) {
		snprintf(path, len, "%s/saved_model.pb", dir);
		rc = write_file(path, pb, n, err);
	}
	tfk_free(keys);
	tfk_free(ts);
	tfk_free(vars);
	tfk_free(pb);
	tfk_free(path);
	return rc;
}
