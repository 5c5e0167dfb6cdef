/*
 * tflite.c - load and verify .tflite models (see tflite.h).
 *
 * The loader copies what it keeps into plain C structs (index arrays,
 * quantization parameters) and keeps borrowed pointers into the file
 * for names and buffer bytes, so a loaded model is read without any
 * FlatBuffer access: the verification described in tflite.h happens in
 * one place, before use. Builtin options stay FlatBuffer tables (one
 * verified table per operator), decoded on demand by field descriptors
 * below; a converter or interpreter reads the fields it needs through
 * flatbuf.h, which checks each access.
 *
 * Names of ops and options are TFLite's (schema.fbs BuiltinOperator and
 * the BuiltinOptions union, in declaration order: the number is the
 * position). Rejected: a generated table per option type (hundreds of
 * types; `show` needs the common ones, the interpreter its own few).
 */
#include "format/tflite.h"

#include "util/alloc.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* BuiltinOperator, schema.fbs: index = number. */
static const char *const op_names[] = {
	"ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D",
	"DEPTH_TO_SPACE", "DEQUANTIZE", "EMBEDDING_LOOKUP", "FLOOR",
	"FULLY_CONNECTED", "HASHTABLE_LOOKUP", "L2_NORMALIZATION", "L2_POOL_2D",
	"LOCAL_RESPONSE_NORMALIZATION", "LOGISTIC", "LSH_PROJECTION", "LSTM",
	"MAX_POOL_2D", "MUL", "RELU", "RELU_N1_TO_1", "RELU6", "RESHAPE",
	"RESIZE_BILINEAR", "RNN", "SOFTMAX", "SPACE_TO_DEPTH", "SVDF", "TANH",
	"CONCAT_EMBEDDINGS", "SKIP_GRAM", "CALL", "CUSTOM",
	"EMBEDDING_LOOKUP_SPARSE", "PAD", "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER",
	"BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND", "TRANSPOSE", "MEAN", "SUB", "DIV",
	"SQUEEZE", "UNIDIRECTIONAL_SEQUENCE_LSTM", "STRIDED_SLICE",
	"BIDIRECTIONAL_SEQUENCE_RNN", "EXP", "TOPK_V2", "SPLIT", "LOG_SOFTMAX",
	"DELEGATE", "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST", "PRELU", "MAXIMUM",
	"ARG_MAX", "MINIMUM", "LESS", "NEG", "PADV2", "GREATER", "GREATER_EQUAL",
	"LESS_EQUAL", "SELECT", "SLICE", "SIN", "TRANSPOSE_CONV", "SPARSE_TO_DENSE",
	"TILE", "EXPAND_DIMS", "EQUAL", "NOT_EQUAL", "LOG", "SUM", "SQRT", "RSQRT",
	"SHAPE", "POW", "ARG_MIN", "FAKE_QUANT", "REDUCE_PROD", "REDUCE_MAX",
	"PACK", "LOGICAL_OR", "ONE_HOT", "LOGICAL_AND", "LOGICAL_NOT", "UNPACK",
	"REDUCE_MIN", "FLOOR_DIV", "REDUCE_ANY", "SQUARE", "ZEROS_LIKE", "FILL",
	"FLOOR_MOD", "RANGE", "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU",
	"SQUARED_DIFFERENCE", "MIRROR_PAD", "ABS", "SPLIT_V", "UNIQUE", "CEIL",
	"REVERSE_V2", "ADD_N", "GATHER_ND", "COS", "WHERE", "RANK", "ELU",
	"REVERSE_SEQUENCE", "MATRIX_DIAG", "QUANTIZE", "MATRIX_SET_DIAG", "ROUND",
	"HARD_SWISH", "IF", "WHILE", "NON_MAX_SUPPRESSION_V4",
	"NON_MAX_SUPPRESSION_V5", "SCATTER_ND", "SELECT_V2", "DENSIFY",
	"SEGMENT_SUM", "BATCH_MATMUL", "PLACEHOLDER_FOR_GREATER_OP_CODES", "CUMSUM",
	"CALL_ONCE", "BROADCAST_TO", "RFFT2D", "CONV_3D", "IMAG", "REAL",
	"COMPLEX_ABS", "HASHTABLE", "HASHTABLE_FIND", "HASHTABLE_IMPORT",
	"HASHTABLE_SIZE", "REDUCE_ALL", "CONV_3D_TRANSPOSE", "VAR_HANDLE",
	"READ_VARIABLE", "ASSIGN_VARIABLE", "BROADCAST_ARGS",
	"RANDOM_STANDARD_NORMAL", "BUCKETIZE", "RANDOM_UNIFORM", "MULTINOMIAL",
	"GELU", "DYNAMIC_UPDATE_SLICE", "RELU_0_TO_1", "UNSORTED_SEGMENT_PROD",
	"UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_SUM", "ATAN2",
	"UNSORTED_SEGMENT_MIN", "SIGN", "BITCAST", "BITWISE_XOR", "RIGHT_SHIFT",
	"STABLEHLO_LOGISTIC", "STABLEHLO_ADD", "STABLEHLO_DIVIDE",
	"STABLEHLO_MULTIPLY", "STABLEHLO_MAXIMUM", "STABLEHLO_RESHAPE",
	"STABLEHLO_CLAMP", "STABLEHLO_CONCATENATE", "STABLEHLO_BROADCAST_IN_DIM",
	"STABLEHLO_CONVOLUTION", "STABLEHLO_SLICE", "STABLEHLO_CUSTOM_CALL",
	"STABLEHLO_REDUCE", "STABLEHLO_ABS", "STABLEHLO_AND", "STABLEHLO_COSINE",
	"STABLEHLO_EXPONENTIAL", "STABLEHLO_FLOOR", "STABLEHLO_LOG",
	"STABLEHLO_MINIMUM", "STABLEHLO_NEGATE", "STABLEHLO_OR", "STABLEHLO_POWER",
	"STABLEHLO_REMAINDER", "STABLEHLO_RSQRT", "STABLEHLO_SELECT",
	"STABLEHLO_SUBTRACT", "STABLEHLO_TANH", "STABLEHLO_SCATTER",
	"STABLEHLO_COMPARE", "STABLEHLO_CONVERT", "STABLEHLO_DYNAMIC_SLICE",
	"STABLEHLO_DYNAMIC_UPDATE_SLICE", "STABLEHLO_PAD", "STABLEHLO_IOTA",
	"STABLEHLO_DOT_GENERAL", "STABLEHLO_REDUCE_WINDOW", "STABLEHLO_SORT",
	"STABLEHLO_WHILE", "STABLEHLO_GATHER", "STABLEHLO_TRANSPOSE", "DILATE",
	"STABLEHLO_RNG_BIT_GENERATOR", "REDUCE_WINDOW", "STABLEHLO_COMPOSITE",
	"COMPLEX",
};

/* The BuiltinOptions union: index + 1 = union type number. */
static const char *const options_names[] = {
	"Conv2DOptions", "DepthwiseConv2DOptions", "ConcatEmbeddingsOptions",
	"LSHProjectionOptions", "Pool2DOptions", "SVDFOptions", "RNNOptions",
	"FullyConnectedOptions", "SoftmaxOptions", "ConcatenationOptions",
	"AddOptions", "L2NormOptions", "LocalResponseNormalizationOptions",
	"LSTMOptions", "ResizeBilinearOptions", "CallOptions", "ReshapeOptions",
	"SkipGramOptions", "SpaceToDepthOptions", "EmbeddingLookupSparseOptions",
	"MulOptions", "PadOptions", "GatherOptions", "BatchToSpaceNDOptions",
	"SpaceToBatchNDOptions", "TransposeOptions", "ReducerOptions", "SubOptions",
	"DivOptions", "SqueezeOptions", "SequenceRNNOptions", "StridedSliceOptions",
	"ExpOptions", "TopKV2Options", "SplitOptions", "LogSoftmaxOptions",
	"CastOptions", "DequantizeOptions", "MaximumMinimumOptions",
	"ArgMaxOptions", "LessOptions", "NegOptions", "PadV2Options",
	"GreaterOptions", "GreaterEqualOptions", "LessEqualOptions",
	"SelectOptions", "SliceOptions", "TransposeConvOptions",
	"SparseToDenseOptions", "TileOptions", "ExpandDimsOptions", "EqualOptions",
	"NotEqualOptions", "ShapeOptions", "PowOptions", "ArgMinOptions",
	"FakeQuantOptions", "PackOptions", "LogicalOrOptions", "OneHotOptions",
	"LogicalAndOptions", "LogicalNotOptions", "UnpackOptions",
	"FloorDivOptions", "SquareOptions", "ZerosLikeOptions", "FillOptions",
	"BidirectionalSequenceLSTMOptions", "BidirectionalSequenceRNNOptions",
	"UnidirectionalSequenceLSTMOptions", "FloorModOptions", "RangeOptions",
	"ResizeNearestNeighborOptions", "LeakyReluOptions",
	"SquaredDifferenceOptions", "MirrorPadOptions", "AbsOptions",
	"SplitVOptions", "UniqueOptions", "ReverseV2Options", "AddNOptions",
	"GatherNdOptions", "CosOptions", "WhereOptions", "RankOptions",
	"ReverseSequenceOptions", "MatrixDiagOptions", "QuantizeOptions",
	"MatrixSetDiagOptions", "HardSwishOptions", "IfOptions", "WhileOptions",
	"DepthToSpaceOptions", "NonMaxSuppressionV4Options",
	"NonMaxSuppressionV5Options", "ScatterNdOptions", "SelectV2Options",
	"DensifyOptions", "SegmentSumOptions", "BatchMatMulOptions",
	"CumsumOptions", "CallOnceOptions", "BroadcastToOptions", "Rfft2dOptions",
	"Conv3DOptions", "HashtableOptions", "HashtableFindOptions",
	"HashtableImportOptions", "HashtableSizeOptions", "VarHandleOptions",
	"ReadVariableOptions", "AssignVariableOptions", "RandomOptions",
	"BucketizeOptions", "GeluOptions", "DynamicUpdateSliceOptions",
	"UnsortedSegmentProdOptions", "UnsortedSegmentMaxOptions",
	"UnsortedSegmentMinOptions", "UnsortedSegmentSumOptions", "ATan2Options",
	"SignOptions", "BitcastOptions", "BitwiseXorOptions", "RightShiftOptions",
};

#define N_OPS ((int)(sizeof(op_names) / sizeof(op_names[0])))
#define N_OPTIONS ((int)(sizeof(options_names) / sizeof(options_names[0])))

const char *tfk_tfl_op_name(int32_t code)
{
	return code >= 0 && code < N_OPS ? op_names[code] : NULL;
}

const char *tfk_tfl_options_name(int type)
{
	return type >= 1 && type <= N_OPTIONS ? options_names[type - 1] : NULL;
}

static const char *const type_names[] = {
	"FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "STRING", "BOOL",
	"INT16", "COMPLEX64", "INT8", "FLOAT64", "COMPLEX128", "UINT64",
	"RESOURCE", "VARIANT", "UINT32", "UINT16", "INT4", "BFLOAT16",
};

#define N_TYPES ((int)(sizeof(type_names) / sizeof(type_names[0])))

const char *tfk_tfl_type_name(int type)
{
	return type >= 0 && type < N_TYPES ? type_names[type] : NULL;
}

enum tfk_dtype tfk_tfl_dtype(int type)
{
	switch (type) {
	case TFK_TFL_FLOAT32: return TFK_DT_FLOAT;
	case TFK_TFL_FLOAT16: return TFK_DT_HALF;
	case TFK_TFL_INT32: return TFK_DT_INT32;
	case TFK_TFL_UINT8: return TFK_DT_UINT8;
	case TFK_TFL_INT64: return TFK_DT_INT64;
	case TFK_TFL_STRING: return TFK_DT_STRING;
	case TFK_TFL_BOOL: return TFK_DT_BOOL;
	case TFK_TFL_INT16: return TFK_DT_INT16;
	case TFK_TFL_INT8: return TFK_DT_INT8;
	case TFK_TFL_FLOAT64: return TFK_DT_DOUBLE;
	default: return TFK_DT_INVALID;
	}
}

size_t tfk_tfl_type_size(int type)
{
	switch (type) {
	case TFK_TFL_UINT8: case TFK_TFL_BOOL: case TFK_TFL_INT8:
		return 1;
	case TFK_TFL_FLOAT16: case TFK_TFL_INT16: case TFK_TFL_UINT16:
	case TFK_TFL_BFLOAT16:
		return 2;
	case TFK_TFL_FLOAT32: case TFK_TFL_INT32: case TFK_TFL_UINT32:
		return 4;
	case TFK_TFL_INT64: case TFK_TFL_FLOAT64: case TFK_TFL_UINT64:
	case TFK_TFL_COMPLEX64:
		return 8;
	case TFK_TFL_COMPLEX128:
		return 16;
	default:
		return 0;
	}
}

static const char *const act_names[] = {
	"NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT",
};

const char *tfk_tfl_act_name(int act)
{
	return act >= 0 && act < 6 ? act_names[act] : NULL;
}

/* Loading ------------------------------------------------------------- */

void tfk_tflite_release(struct tfk_tflite *m)
{
	int i, j;

	if (!m)
		return;
	for (i = 0; i < m->n_subgraphs && m->subgraphs; i++) {
		struct tfk_tfl_subgraph *s = &m->subgraphs[i];

		for (j = 0; j < s->n_tensors && s->tensors; j++) {
			struct tfk_tfl_quant *q = &s->tensors[j].quant;

			tfk_free(q->scale);
			tfk_free(q->zero_point);
			tfk_free(q->min);
			tfk_free(q->max);
		}
		for (j = 0; j < s->n_ops && s->ops; j++) {
			tfk_free(s->ops[j].inputs);
			tfk_free(s->ops[j].outputs);
			tfk_free(s->ops[j].intermediates);
		}
		tfk_free(s->tensors);
		tfk_free(s->inputs);
		tfk_free(s->outputs);
		tfk_free(s->ops);
	}
	for (i = 0; i < m->n_signatures && m->signatures; i++) {
		tfk_free(m->signatures[i].inputs);
		tfk_free(m->signatures[i].outputs);
	}
	tfk_free(m->subgraphs);
	tfk_free(m->opcodes);
	tfk_free(m->buffers);
	tfk_free(m->metadata);
	tfk_free(m->signatures);
	tfk_free(m->metadata_buffer);
	for (i = 0; i < m->n_warnings; i++)
		tfk_free(m->warnings[i]);
	tfk_free(m->warnings);
	if (m->owns)
		tfk_free((void *)m->p);
	memset(m, 0, sizeof(*m));
}

static int nomem(struct tfk_err *err)
{
	return tfk_errf(err, TFK_ENOMEM, "out of memory");
}

/* calloc of n elements (at least one byte, so NULL means failure). */
static void *alloc_n(size_t n, size_t size)
{
	return tfk_calloc(n ? n : 1, size);
}

/* Vector of tables at slot (absent: n 0); *n its length. */
static int table_vec(const struct tfk_fb_table *t, int slot,
		     struct tfk_fb_vec *v, int *n, struct tfk_err *err)
{
	int rc = tfk_fb_vector(t, slot, 4, v, err);

	*n = 0;
	if (rc < 0)
		return rc;
	if (v->len > 0x7fffffff / 64)
		return tfk_errf(err, TFK_ECORRUPT, "vector of %u entries is "
				"too long", v->len);
	*n = (int)v->len;
	return 0;
}

/* An [int] vector at slot copied into *out (owned; absent: n 0). */
static int int_vec(const struct tfk_fb_table *t, int slot, int32_t **out,
		   int *n, struct tfk_err *err)
{
	struct tfk_fb_vec v;
	uint32_t i;
	int rc = tfk_fb_vector(t, slot, 4, &v, err);

	*out = NULL;
	*n = 0;
	if (rc < 0)
		return rc;
	*out = alloc_n(v.len, sizeof(int32_t));
	if (!*out)
		return nomem(err);
	for (i = 0; i < v.len; i++)
		(*out)[i] = tfk_fb_vec_i32(&v, i);
	*n = (int)v.len;
	return 0;
}

static int float_vec(const struct tfk_fb_table *t, int slot, float **out,
		     int *n, struct tfk_err *err)
{
	struct tfk_fb_vec v;
	uint32_t i;
	int rc = tfk_fb_vector(t, slot, 4, &v, err);

	*out = NULL;
	*n = 0;
	if (rc < 0)
		return rc;
	if (!rc)
		return 0;
	*out = alloc_n(v.len, sizeof(float));
	if (!*out)
		return nomem(err);
	for (i = 0; i < v.len; i++)
		(*out)[i] = tfk_fb_vec_f32(&v, i);
	*n = (int)v.len;
	return 0;
}

/* A string field, "" when absent. */
static int str_field(const struct tfk_fb_table *t, int slot, const char **s,
		     struct tfk_err *err)
{
	uint32_t len;
	int rc = tfk_fb_string(t, slot, s, &len, err);

	if (rc < 0)
		return rc;
	if (!rc)
		*s = "";
	return 0;
}

static int load_shape(const struct tfk_fb_table *t, int slot, int64_t *shape,
		      int *rank, int64_t min_dim, const char *what,
		      struct tfk_err *err)
{
	struct tfk_fb_vec v;
	uint32_t i;
	int rc = tfk_fb_vector(t, slot, 4, &v, err);

	*rank = 0;
	if (rc <= 0)
		return rc;
	if (v.len > TFK_MAX_RANK)
		return tfk_errf(err, TFK_EINVAL, "%s: rank %u is over the %d "
				"dimensions tfkit supports", what, v.len,
				TFK_MAX_RANK);
	for (i = 0; i < v.len; i++) {
		shape[i] = tfk_fb_vec_i32(&v, i);
		if (shape[i] < min_dim)
			return tfk_errf(err, TFK_ECORRUPT, "%s: dimension %u "
					"is %lld", what, i,
					(long long)shape[i]);
	}
	*rank = (int)v.len;
	return 1;
}

/* Append a load warning (printf-style) to m->warnings. */
static int warn(struct tfk_tflite *m, struct tfk_err *err, const char *fmt,
		...) __attribute__((format(printf, 3, 4)));
static int warn(struct tfk_tflite *m, struct tfk_err *err, const char *fmt,
		...)
{
	char buf[512], **w;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	w = tfk_realloc(m->warnings, (size_t)(m->n_warnings + 1) * sizeof(*w));
	if (!w)
		return nomem(err);
	m->warnings = w;
	if (!(w[m->n_warnings] = tfk_strdup(buf)))
		return nomem(err);
	m->n_warnings++;
	return 0;
}

/*
 * The axis of a per-channel tensor whose quantized_dimension is out of
 * range: TF1-era converters wrote any value there for rank-1 biases
 * (LiteRT refuses such files). When exactly one dimension has as many
 * entries as there are scales, that is the axis the file means: it is
 * taken, and the load warns. -1 when no single dimension fits.
 */
static int legacy_axis(const struct tfk_tfl_tensor *x, int n_scale)
{
	int i, d = -1;

	for (i = 0; i < x->rank; i++)
		if (x->shape[i] == n_scale) {
			if (d >= 0)
				return -1;
			d = i;
		}
	return d;
}

static int load_quant(struct tfk_tflite *m, struct tfk_tfl_tensor *x,
		      const struct tfk_fb_table *qt, int sg, int ti,
		      struct tfk_err *err)
{
	struct tfk_tfl_quant *q = &x->quant;
	struct tfk_fb_vec v;
	int rc, i;

	if ((rc = float_vec(qt, 0, &q->min, &q->n_min, err)) ||
	    (rc = float_vec(qt, 1, &q->max, &q->n_max, err)) ||
	    (rc = float_vec(qt, 2, &q->scale, &q->n_scale, err)))
		return rc;
	if ((rc = tfk_fb_vector(qt, 3, 8, &v, err)) < 0)
		return rc;
	if (rc) {
		q->zero_point = alloc_n(v.len, sizeof(int64_t));
		if (!q->zero_point)
			return nomem(err);
		for (i = 0; i < (int)v.len; i++)
			q->zero_point[i] = tfk_fb_vec_i64(&v, (uint32_t)i);
		q->n_zero_point = (int)v.len;
	}
	if ((rc = tfk_fb_u8(qt, 4, 0, &q->details_type, err)) ||
	    (rc = tfk_fb_i32(qt, 6, 0, &q->quantized_dimension, err)))
		return rc;
	if (q->n_min != q->n_max)
		return tfk_errf(err, TFK_ECORRUPT, "%d min values but %d max "
				"values", q->n_min, q->n_max);
	if (q->n_scale && q->n_zero_point && q->n_scale != q->n_zero_point)
		return tfk_errf(err, TFK_ECORRUPT, "%d scales but %d zero "
				"points", q->n_scale, q->n_zero_point);
	for (i = 0; i < q->n_scale; i++)
		if (!isfinite(q->scale[i]) || !(q->scale[i] > 0))
			return tfk_errf(err, TFK_ECORRUPT, "scale[%d] is %g, "
					"expected a finite value > 0", i,
					(double)q->scale[i]);
	for (i = 0; i < q->n_zero_point; i++) {
		int64_t z = q->zero_point[i], lo = INT64_MIN, hi = INT64_MAX;

		if (x->type == TFK_TFL_INT8)
			lo = -128, hi = 127;
		else if (x->type == TFK_TFL_UINT8)
			lo = 0, hi = 255;
		else if (x->type == TFK_TFL_INT16)
			lo = -32768, hi = 32767;
		if (z < lo || z > hi)
			return tfk_errf(err, TFK_ECORRUPT, "zero_point[%d] %lld "
					"is outside the range of %s", i,
					(long long)z,
					tfk_tfl_type_name(x->type));
	}
	if (q->n_scale > 1) {
		int d = q->quantized_dimension;

		if ((d < 0 || d >= x->rank) &&
		    legacy_axis(x, q->n_scale) >= 0) {
			q->quantized_dimension = legacy_axis(x, q->n_scale);
			if ((rc = warn(m, err, "subgraphs[%d]: tensors[%d] '%s':"
				       " quantization: quantized_dimension %d "
				       "is outside the tensor's rank %d; read "
				       "as %d, the one dimension with %d "
				       "entries, one per scale (a legacy "
				       "file)", sg, ti, x->name, d, x->rank,
				       q->quantized_dimension, q->n_scale)))
				return rc;
			d = q->quantized_dimension;
		}
		if (d < 0 || d >= x->rank)
			return tfk_errf(err, TFK_ECORRUPT, "quantized_dimension "
					"%d is outside the tensor's rank %d",
					d, x->rank);
		if (x->shape[d] != q->n_scale)
			return tfk_errf(err, TFK_ECORRUPT, "%d scales for "
					"dimension %d of size %lld",
					q->n_scale, d, (long long)x->shape[d]);
	}
	return 0;
}

static int load_tensor(struct tfk_tflite *m, struct tfk_tfl_tensor *x,
		       const struct tfk_fb_table *t, int sg, int ti,
		       struct tfk_err *err)
{
	struct tfk_fb_table qt, sp;
	uint8_t b;
	int rc, rank;

	if ((rc = load_shape(t, 0, x->shape, &x->rank, 0, "shape", err)) < 0)
		return rc;
	if ((rc = tfk_fb_u8(t, 1, 0, &x->type, err)) ||
	    (rc = tfk_fb_u32(t, 2, 0, &x->buffer, err)) ||
	    (rc = str_field(t, 3, &x->name, err)) ||
	    (rc = tfk_fb_u8(t, 5, 0, &b, err)))
		return rc;
	x->is_variable = b != 0;
	if (!tfk_tfl_type_name(x->type))
		return tfk_errf(err, TFK_ECORRUPT, "type %u is not a TFLite "
				"TensorType", x->type);
	if ((rc = tfk_fb_table_field(t, 6, &sp, err)) < 0)
		return rc;
	x->is_sparse = rc;
	rc = load_shape(t, 7, x->shape_signature, &rank, -1,
			"shape_signature", err);
	if (rc < 0)
		return rc;
	if (rc) {
		if (rank != x->rank)
			return tfk_errf(err, TFK_ECORRUPT, "shape_signature has "
					"%d dimensions, shape %d", rank,
					x->rank);
		x->has_shape_signature = 1;
	}
	if (x->buffer >= (uint32_t)m->n_buffers && m->n_buffers)
		return tfk_errf(err, TFK_ECORRUPT, "buffer %u is outside the "
				"model's %d buffers", x->buffer, m->n_buffers);
	if (x->buffer && !m->n_buffers)
		return tfk_errf(err, TFK_ECORRUPT, "buffer %u, but the model "
				"has no buffers", x->buffer);
	if ((rc = tfk_fb_table_field(t, 4, &qt, err)) < 0)
		return rc;
	if (rc) {
		x->has_quant = 1;
		if ((rc = load_quant(m, x, &qt, sg, ti, err)))
			return tfk_err_prefix(err, "quantization");
	}
	{
		int64_t numel;
		size_t es = tfk_tfl_type_size(x->type);
		uint64_t have = m->n_buffers ? m->buffers[x->buffer].size : 0;

		if (tfk_shape_numel(x->rank, x->shape, es, &numel, err))
			return tfk_err_prefix(err, "shape");
		if (have && !x->is_sparse && es &&
		    have != (uint64_t)numel * es)
			return tfk_errf(err, TFK_ECORRUPT, "buffer %u holds "
					"%llu bytes, but %s %s needs %llu",
					x->buffer, (unsigned long long)have,
					tfk_tfl_type_name(x->type),
					tfk_shape_str(x->rank, x->shape,
						      (char[64]){ 0 }, 64),
					(unsigned long long)numel * es);
		if (have && x->type == TFK_TFL_STRING && have < 4)
			return tfk_errf(err, TFK_ECORRUPT, "buffer %u of %llu "
					"bytes is too small for a string "
					"tensor", x->buffer,
					(unsigned long long)have);
		if (have && x->type == TFK_TFL_STRING && !x->is_sparse) {
			if ((rc = tfk_tfl_strings_check(
				     m->buffers[x->buffer].data, have, numel,
				     err)))
				return tfk_err_prefix(err, "buffer %u",
						      x->buffer);
		}
	}
	return 0;
}

static uint32_t rd_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		(uint32_t)p[3] << 24;
}

int tfk_tfl_strings_check(const uint8_t *p, uint64_t n, int64_t numel,
			  struct tfk_err *err)
{
	int64_t count, i;
	uint64_t head, prev, off;

	if (n < 4)
		return tfk_errf(err, TFK_ECORRUPT, "string buffer: %llu "
				"bytes, too small for the count",
				(unsigned long long)n);
	count = (int32_t)rd_u32(p);
	if (count < 0 || count != numel)
		return tfk_errf(err, TFK_ECORRUPT, "string buffer: %lld "
				"strings, but the tensor has %lld elements",
				(long long)count, (long long)numel);
	head = 4 * ((uint64_t)count + 2);
	if (head > n)
		return tfk_errf(err, TFK_ECORRUPT, "string buffer: %lld "
				"offsets need %llu bytes, the buffer holds "
				"%llu",
				(long long)count + 1, (unsigned long long)head,
				(unsigned long long)n);
	prev = rd_u32(p + 4);
	if (prev != head)
		return tfk_errf(err, TFK_ECORRUPT, "string buffer: offset 0 "
				"(%llu) is not the header's size %llu",
				(unsigned long long)prev,
				(unsigned long long)head);
	for (i = 1; i <= count; i++, prev = off) {
		off = rd_u32(p + 4 + 4 * i);
		if (off < prev)
			return tfk_errf(err, TFK_ECORRUPT, "string buffer: "
					"offset %lld (%llu) is before offset "
					"%lld (%llu)", (long long)i,
					(unsigned long long)off,
					(long long)i - 1,
					(unsigned long long)prev);
	}
	if (prev != n)
		return tfk_errf(err, TFK_ECORRUPT, "string buffer: offset %lld "
				"(%llu) is not the buffer's size %llu",
				(long long)count, (unsigned long long)prev,
				(unsigned long long)n);
	return 0;
}

void tfk_tfl_string_at(const uint8_t *p, int64_t i, const uint8_t **s,
		       size_t *len)
{
	uint32_t a = rd_u32(p + 4 + 4 * i), b = rd_u32(p + 8 + 4 * i);

	*s = p + a;
	*len = b - a;
}

static int in_range(const int32_t *v, int n, int32_t lo, int32_t hi,
		    const char *what, struct tfk_err *err)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i] < lo || v[i] >= hi)
			return tfk_errf(err, TFK_ECORRUPT, "%s[%d]: tensor %d "
					"is outside the subgraph's %d tensors",
					what, i, v[i], hi);
	return 0;
}

static int load_op(struct tfk_tflite *m, struct tfk_tfl_subgraph *s,
		   struct tfk_tfl_op *o, const struct tfk_fb_table *t,
		   struct tfk_err *err)
{
	struct tfk_fb_vec v;
	const char *name;
	char value[64];
	int rc, k, kind;

	if ((rc = tfk_fb_u32(t, 0, 0, &o->opcode_index, err)) ||
	    (rc = int_vec(t, 1, &o->inputs, &o->n_inputs, err)) ||
	    (rc = int_vec(t, 2, &o->outputs, &o->n_outputs, err)) ||
	    (rc = int_vec(t, 8, &o->intermediates, &o->n_intermediates,
			  err)) ||
	    (rc = tfk_fb_u8(t, 3, 0, &o->options_type, err)) ||
	    (rc = tfk_fb_u8(t, 11, 0, &o->options2_type, err)))
		return rc;
	if (o->opcode_index >= (uint32_t)m->n_opcodes)
		return tfk_errf(err, TFK_ECORRUPT, "opcode_index %u is outside "
				"the model's %d operator codes",
				o->opcode_index, m->n_opcodes);
	if ((rc = in_range(o->inputs, o->n_inputs, -1, s->n_tensors,
			   "inputs", err)) ||
	    (rc = in_range(o->outputs, o->n_outputs, 0, s->n_tensors,
			   "outputs", err)) ||
	    (rc = in_range(o->intermediates, o->n_intermediates, 0,
			   s->n_tensors, "intermediates", err)))
		return rc;
	if ((rc = tfk_fb_table_field(t, 4, &o->options, err)) < 0)
		return tfk_err_prefix(err, "builtin_options");
	o->has_options = rc;
	if (o->has_options && !o->options_type)
		return tfk_errf(err, TFK_ECORRUPT, "builtin_options without "
				"a type");
	/* the option fields this module decodes are checked now, so that
	 * no later reader meets a corrupt one */
	for (k = 0; (rc = tfk_tflite_option(o, k, &name, value,
					    sizeof(value), &kind, err)) == 1;
	     k++)
		;
	if (rc < 0)
		return rc;
	if ((rc = tfk_fb_vector(t, 5, 1, &v, err)) < 0)
		return tfk_err_prefix(err, "custom_options");
	o->custom_options_size = v.len;
	return 0;
}

static int load_subgraph(struct tfk_tflite *m, struct tfk_tfl_subgraph *s,
			 const struct tfk_fb_table *t, struct tfk_err *err)
{
	struct tfk_fb_vec tv, ov;
	struct tfk_fb_table x;
	int rc, i;

	if ((rc = table_vec(t, 0, &tv, &s->n_tensors, err)) ||
	    (rc = table_vec(t, 3, &ov, &s->n_ops, err)) ||
	    (rc = int_vec(t, 1, &s->inputs, &s->n_inputs, err)) ||
	    (rc = int_vec(t, 2, &s->outputs, &s->n_outputs, err)) ||
	    (rc = str_field(t, 4, &s->name, err)))
		return rc;
	s->tensors = alloc_n((size_t)s->n_tensors, sizeof(*s->tensors));
	s->ops = alloc_n((size_t)s->n_ops, sizeof(*s->ops));
	if (!s->tensors || !s->ops) {
		/* the release loops must not walk missing arrays */
		if (!s->tensors)
			s->n_tensors = 0;
		if (!s->ops)
			s->n_ops = 0;
		return nomem(err);
	}
	if ((rc = in_range(s->inputs, s->n_inputs, 0, s->n_tensors, "inputs",
			   err)) ||
	    (rc = in_range(s->outputs, s->n_outputs, 0, s->n_tensors,
			   "outputs", err)))
		return rc;
	for (i = 0; i < s->n_tensors; i++)
		if ((rc = tfk_fb_vec_table(&tv, (uint32_t)i, &x, err)) ||
		    (rc = load_tensor(m, &s->tensors[i], &x,
				       (int)(s - m->subgraphs), i, err)))
			return tfk_err_prefix(err, "tensors[%d]", i);
	for (i = 0; i < s->n_ops; i++)
		if ((rc = tfk_fb_vec_table(&ov, (uint32_t)i, &x, err)) ||
		    (rc = load_op(m, s, &s->ops[i], &x, err)))
			return tfk_err_prefix(err, "operators[%d]", i);
	return 0;
}

static int load_buffer(struct tfk_tflite *m, struct tfk_tfl_buffer *b,
		       const struct tfk_fb_table *t, struct tfk_err *err)
{
	struct tfk_fb_vec v;
	uint64_t size;
	int rc;

	if ((rc = tfk_fb_vector(t, 0, 1, &v, err)) < 0 ||
	    (rc = tfk_fb_u64(t, 1, 0, &b->offset, err)) ||
	    (rc = tfk_fb_u64(t, 2, 0, &size, err)))
		return rc;
	if (v.len) {
		b->data = tfk_fb_vec_data(&v);
		b->size = v.len;
	} else if (b->offset > 1) {
		/* schema.fbs: data outside the flatbuffer, at this offset
		 * from the start of the file */
		if (b->offset > m->n || size > m->n - b->offset)
			return tfk_errf(err, TFK_ECORRUPT, "offset %llu and "
					"size %llu run past the end of the "
					"%zu-byte file",
					(unsigned long long)b->offset,
					(unsigned long long)size, m->n);
		b->data = m->p + b->offset;
		b->size = size;
	}
	return 0;
}

static int load_signature(struct tfk_tflite *m, struct tfk_tfl_signature *g,
			  const struct tfk_fb_table *t, struct tfk_err *err)
{
	int rc, k, i;

	if ((rc = str_field(t, 2, &g->key, err)) ||
	    (rc = tfk_fb_u32(t, 4, 0, &g->subgraph_index, err)))
		return rc;
	if (g->subgraph_index >= (uint32_t)m->n_subgraphs)
		return tfk_errf(err, TFK_ECORRUPT, "subgraph_index %u is "
				"outside the model's %d subgraphs",
				g->subgraph_index, m->n_subgraphs);
	for (k = 0; k < 2; k++) {
		struct tfk_fb_vec v;
		struct tfk_fb_table x;
		struct tfk_tfl_tensormap **map = k ? &g->outputs : &g->inputs;
		int *n = k ? &g->n_outputs : &g->n_inputs;
		const char *what = k ? "outputs" : "inputs";
		int n_tensors = m->subgraphs[g->subgraph_index].n_tensors;

		if ((rc = table_vec(t, k, &v, n, err)))
			return rc;
		*map = alloc_n((size_t)*n, sizeof(**map));
		if (!*map) {
			*n = 0;
			return nomem(err);
		}
		for (i = 0; i < *n; i++) {
			if ((rc = tfk_fb_vec_table(&v, (uint32_t)i, &x, err)) ||
			    (rc = str_field(&x, 0, &(*map)[i].name, err)) ||
			    (rc = tfk_fb_u32(&x, 1, 0, &(*map)[i].tensor_index,
					     err)))
				return tfk_err_prefix(err, "%s[%d]", what, i);
			if ((*map)[i].tensor_index >= (uint32_t)n_tensors)
				return tfk_errf(err, TFK_ECORRUPT, "%s[%d]: "
						"tensor_index %u is outside "
						"subgraph %u's %d tensors",
						what, i,
						(*map)[i].tensor_index,
						g->subgraph_index, n_tensors);
		}
	}
	return 0;
}

static int load_model(struct tfk_tflite *m, struct tfk_err *err)
{
	struct tfk_fb_table root, x;
	struct tfk_fb_vec cv, sv, bv, mv, gv;
	uint32_t len;
	int rc, i;

	if ((rc = tfk_fb_open(&m->fb, m->p, m->n, "TFL3", &root, err)))
		return rc;
	if ((rc = tfk_fb_u32(&root, 0, 0, &m->version, err)))
		return rc;
	if (m->version != 3)
		return tfk_errf(err, TFK_ECORRUPT, "schema version %u, "
				"expected 3", m->version);
	if ((rc = table_vec(&root, 1, &cv, &m->n_opcodes, err)))
		return tfk_err_prefix(err, "operator_codes");
	if ((rc = table_vec(&root, 2, &sv, &m->n_subgraphs, err)))
		return tfk_err_prefix(err, "subgraphs");
	if ((rc = table_vec(&root, 4, &bv, &m->n_buffers, err)))
		return tfk_err_prefix(err, "buffers");
	if ((rc = table_vec(&root, 6, &mv, &m->n_metadata, err)))
		return tfk_err_prefix(err, "metadata");
	if ((rc = table_vec(&root, 7, &gv, &m->n_signatures, err)))
		return tfk_err_prefix(err, "signature_defs");
	if (tfk_fb_string(&root, 3, &m->description, &len, err) < 0)
		return tfk_err_prefix(err, "description");
	if ((rc = int_vec(&root, 5, &m->metadata_buffer,
			  &m->n_metadata_buffer, err)))
		return rc == TFK_ENOMEM ? rc :
			tfk_err_prefix(err, "metadata_buffer");
	if (!m->n_subgraphs)
		return tfk_errf(err, TFK_ECORRUPT, "the model has no "
				"subgraphs");
	m->opcodes = alloc_n((size_t)m->n_opcodes, sizeof(*m->opcodes));
	m->subgraphs = alloc_n((size_t)m->n_subgraphs, sizeof(*m->subgraphs));
	m->buffers = alloc_n((size_t)m->n_buffers, sizeof(*m->buffers));
	m->metadata = alloc_n((size_t)m->n_metadata, sizeof(*m->metadata));
	m->signatures = alloc_n((size_t)m->n_signatures,
				sizeof(*m->signatures));
	if (!m->opcodes || !m->subgraphs || !m->buffers || !m->metadata ||
	    !m->signatures) {
		if (!m->subgraphs)
			m->n_subgraphs = 0;
		if (!m->signatures)
			m->n_signatures = 0;
		return nomem(err);
	}
	for (i = 0; i < m->n_opcodes; i++) {
		struct tfk_tfl_opcode *c = &m->opcodes[i];
		uint32_t n;

		if ((rc = tfk_fb_vec_table(&cv, (uint32_t)i, &x, err)) ||
		    (rc = tfk_fb_i8(&x, 0, 0, &c->deprecated_builtin_code,
				    err)) ||
		    (rc = tfk_fb_string(&x, 1, &c->custom_code, &n, err)) < 0 ||
		    (rc = tfk_fb_i32(&x, 2, 1, &c->version, err)) ||
		    (rc = tfk_fb_i32(&x, 3, 0, &c->extended_builtin_code,
				     err)))
			return tfk_err_prefix(err, "operator_codes[%d]", i);
		/* TFLite's GetBuiltinCode (schema_utils.cc) */
		c->builtin_code = c->extended_builtin_code >
			c->deprecated_builtin_code ? c->extended_builtin_code :
			c->deprecated_builtin_code;
	}
	for (i = 0; i < m->n_buffers; i++)
		if ((rc = tfk_fb_vec_table(&bv, (uint32_t)i, &x, err)) ||
		    (rc = load_buffer(m, &m->buffers[i], &x, err)))
			return tfk_err_prefix(err, "buffers[%d]", i);
	for (i = 0; i < m->n_metadata_buffer; i++)
		if (m->metadata_buffer[i] < 0 ||
		    m->metadata_buffer[i] >= m->n_buffers)
			return tfk_errf(err, TFK_ECORRUPT, "metadata_buffer[%d]: "
					"buffer %d is outside the model's %d "
					"buffers", i, m->metadata_buffer[i],
					m->n_buffers);
	for (i = 0; i < m->n_metadata; i++) {
		if ((rc = tfk_fb_vec_table(&mv, (uint32_t)i, &x, err)) ||
		    (rc = str_field(&x, 0, &m->metadata[i].name, err)) ||
		    (rc = tfk_fb_u32(&x, 1, 0, &m->metadata[i].buffer, err)))
			return tfk_err_prefix(err, "metadata[%d]", i);
		if (m->metadata[i].buffer >= (uint32_t)m->n_buffers)
			return tfk_errf(err, TFK_ECORRUPT, "metadata[%d]: buffer "
					"%u is outside the model's %d buffers",
					i, m->metadata[i].buffer,
					m->n_buffers);
	}
	for (i = 0; i < m->n_subgraphs; i++)
		if ((rc = tfk_fb_vec_table(&sv, (uint32_t)i, &x, err)) ||
		    (rc = load_subgraph(m, &m->subgraphs[i], &x, err)))
			return tfk_err_prefix(err, "subgraphs[%d]", i);
	for (i = 0; i < m->n_signatures; i++)
		if ((rc = tfk_fb_vec_table(&gv, (uint32_t)i, &x, err)) ||
		    (rc = load_signature(m, &m->signatures[i], &x, err)))
			return tfk_err_prefix(err, "signature_defs[%d]", i);
	return 0;
}

int tfk_tflite_load(struct tfk_tflite *m, const void *p, size_t n,
		    struct tfk_err *err)
{
	int rc;

	memset(m, 0, sizeof(*m));
	m->p = p;
	m->n = n;
	rc = load_model(m, err);
	if (rc)
		tfk_tflite_release(m);
	return rc;
}

int tfk_tflite_load_file(struct tfk_tflite *m, const char *path,
			 struct tfk_err *err)
{
	int std = !strcmp(path, "-");
	FILE *f = std ? stdin : fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	int rc;

	memset(m, 0, sizeof(*m));
	if (std)
		path = "<stdin>";
	if (!f)
		return tfk_errf(err, TFK_EIO, "%s: %s", path, strerror(errno));
	for (;;) {
		size_t got;

		if (n == cap) {
			size_t nc = cap ? cap * 2 : 65536;
			uint8_t *nb = tfk_realloc(buf, nc);

			if (!nb) {
				tfk_free(buf);
				if (!std)
					fclose(f);
				return tfk_errf(err, TFK_ENOMEM, "%s: out of "
						"memory", path);
			}
			buf = nb;
			cap = nc;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		rc = tfk_errf(err, TFK_EIO, "%s: %s", path, strerror(errno));
		if (!std)
			fclose(f);
		tfk_free(buf);
		return rc;
	}
	if (!std)
		fclose(f);
	rc = tfk_tflite_load(m, buf, n, err);
	if (rc) {
		tfk_free(buf);
		return tfk_err_prefix(err, "%s", path);
	}
	m->owns = 1;
	return 0;
}

int tfk_tflite_min_runtime(const struct tfk_tflite *m, char *buf, size_t cap)
{
	int i;

	for (i = 0; i < m->n_metadata; i++) {
		const struct tfk_tfl_buffer *b;
		size_t k;

		if (strcmp(m->metadata[i].name, "min_runtime_version"))
			continue;
		b = &m->buffers[m->metadata[i].buffer];
		for (k = 0; k + 1 < cap && k < b->size && b->data[k]; k++)
			buf[k] = (char)b->data[k];
		if (cap)
			buf[k] = 0;
		return 0;
	}
	return TFK_ENOTFOUND;
}

void tfk_tflite_sizes(const struct tfk_tflite *m, struct tfk_tflite_sizes *s)
{
	int i, j;

	memset(s, 0, sizeof(*s));
	s->total = m->n;
	for (i = 0; i < m->n_buffers; i++) {
		int meta = 0;

		for (j = 0; j < m->n_metadata; j++)
			meta |= m->metadata[j].buffer == (uint32_t)i;
		for (j = 0; j < m->n_metadata_buffer; j++)
			meta |= m->metadata_buffer[j] == i;
		if (meta)
			s->metadata += m->buffers[i].size;
		else
			s->buffers += m->buffers[i].size;
		if (m->buffers[i].offset > 1 && m->buffers[i].data)
			s->external += m->buffers[i].size;
	}
	s->structure = s->total - s->buffers - s->metadata;
}

/* Builtin options for display ----------------------------------------- */

enum fk { F_ACT, F_PAD, F_I32, F_F32, F_BOOL, F_TTYPE, F_IVEC, F_I8 };

struct field_desc {
	const char *name;
	int slot;
	enum fk kind;
	int32_t def;
};

struct options_desc {
	const char *table;
	struct field_desc f[8];
};

/* Fields and slots from schema.fbs (declaration order). */
static const struct options_desc options_descs[] = {
	{ "Conv2DOptions", { { "padding", 0, F_PAD, 0 },
		{ "stride_w", 1, F_I32, 0 }, { "stride_h", 2, F_I32, 0 },
		{ "fused_activation_function", 3, F_ACT, 0 },
		{ "dilation_w_factor", 4, F_I32, 1 },
		{ "dilation_h_factor", 5, F_I32, 1 } } },
	{ "DepthwiseConv2DOptions", { { "padding", 0, F_PAD, 0 },
		{ "stride_w", 1, F_I32, 0 }, { "stride_h", 2, F_I32, 0 },
		{ "depth_multiplier", 3, F_I32, 0 },
		{ "fused_activation_function", 4, F_ACT, 0 },
		{ "dilation_w_factor", 5, F_I32, 1 },
		{ "dilation_h_factor", 6, F_I32, 1 } } },
	{ "Pool2DOptions", { { "padding", 0, F_PAD, 0 },
		{ "stride_w", 1, F_I32, 0 }, { "stride_h", 2, F_I32, 0 },
		{ "filter_width", 3, F_I32, 0 },
		{ "filter_height", 4, F_I32, 0 },
		{ "fused_activation_function", 5, F_ACT, 0 } } },
	{ "FullyConnectedOptions", {
		{ "fused_activation_function", 0, F_ACT, 0 },
		{ "weights_format", 1, F_I8, 0 },
		{ "keep_num_dims", 2, F_BOOL, 0 },
		{ "asymmetric_quantize_inputs", 3, F_BOOL, 0 } } },
	{ "SoftmaxOptions", { { "beta", 0, F_F32, 0 } } },
	{ "ConcatenationOptions", { { "axis", 0, F_I32, 0 },
		{ "fused_activation_function", 1, F_ACT, 0 } } },
	{ "AddOptions", { { "fused_activation_function", 0, F_ACT, 0 },
		{ "pot_scale_int16", 1, F_BOOL, 1 } } },
	{ "SubOptions", { { "fused_activation_function", 0, F_ACT, 0 },
		{ "pot_scale_int16", 1, F_BOOL, 1 } } },
	{ "MulOptions", { { "fused_activation_function", 0, F_ACT, 0 } } },
	{ "DivOptions", { { "fused_activation_function", 0, F_ACT, 0 } } },
	{ "L2NormOptions", { { "fused_activation_function", 0, F_ACT, 0 } } },
	{ "ReshapeOptions", { { "new_shape", 0, F_IVEC, 0 } } },
	{ "ReducerOptions", { { "keep_dims", 0, F_BOOL, 0 } } },
	{ "SqueezeOptions", { { "squeeze_dims", 0, F_IVEC, 0 } } },
	{ "GatherOptions", { { "axis", 0, F_I32, 0 },
		{ "batch_dims", 1, F_I32, 0 } } },
	{ "StridedSliceOptions", { { "begin_mask", 0, F_I32, 0 },
		{ "end_mask", 1, F_I32, 0 }, { "ellipsis_mask", 2, F_I32, 0 },
		{ "new_axis_mask", 3, F_I32, 0 },
		{ "shrink_axis_mask", 4, F_I32, 0 },
		{ "offset", 5, F_BOOL, 0 } } },
	{ "SplitOptions", { { "num_splits", 0, F_I32, 0 } } },
	{ "SplitVOptions", { { "num_splits", 0, F_I32, 0 } } },
	{ "CastOptions", { { "in_data_type", 0, F_TTYPE, 0 },
		{ "out_data_type", 1, F_TTYPE, 0 } } },
	{ "ArgMaxOptions", { { "output_type", 0, F_TTYPE, 0 } } },
	{ "ArgMinOptions", { { "output_type", 0, F_TTYPE, 0 } } },
	{ "ShapeOptions", { { "out_type", 0, F_TTYPE, 0 } } },
	{ "TransposeConvOptions", { { "padding", 0, F_PAD, 0 },
		{ "stride_w", 1, F_I32, 0 }, { "stride_h", 2, F_I32, 0 },
		{ "fused_activation_function", 3, F_ACT, 0 } } },
	{ "FakeQuantOptions", { { "min", 0, F_F32, 0 },
		{ "max", 1, F_F32, 0 }, { "num_bits", 2, F_I32, 0 },
		{ "narrow_range", 3, F_BOOL, 0 } } },
	{ "PackOptions", { { "values_count", 0, F_I32, 0 },
		{ "axis", 1, F_I32, 0 } } },
	{ "UnpackOptions", { { "num", 0, F_I32, 0 },
		{ "axis", 1, F_I32, 0 } } },
	{ "OneHotOptions", { { "axis", 0, F_I32, 0 } } },
	{ "LeakyReluOptions", { { "alpha", 0, F_F32, 0 } } },
	{ "ResizeBilinearOptions", { { "align_corners", 2, F_BOOL, 0 },
		{ "half_pixel_centers", 3, F_BOOL, 0 } } },
	{ "ResizeNearestNeighborOptions", {
		{ "align_corners", 0, F_BOOL, 0 },
		{ "half_pixel_centers", 1, F_BOOL, 0 } } },
	{ "SpaceToDepthOptions", { { "block_size", 0, F_I32, 0 } } },
	{ "DepthToSpaceOptions", { { "block_size", 0, F_I32, 0 } } },
	{ "MirrorPadOptions", { { "mode", 0, F_I8, 0 } } },
	{ "BatchMatMulOptions", { { "adj_x", 0, F_BOOL, 0 },
		{ "adj_y", 1, F_BOOL, 0 },
		{ "asymmetric_quantize_inputs", 2, F_BOOL, 0 } } },
	{ "CallOptions", { { "subgraph", 0, F_I32, 0 } } },
	{ "IfOptions", { { "then_subgraph_index", 0, F_I32, 0 },
		{ "else_subgraph_index", 1, F_I32, 0 } } },
	{ "WhileOptions", { { "cond_subgraph_index", 0, F_I32, 0 },
		{ "body_subgraph_index", 1, F_I32, 0 } } },
	{ "GeluOptions", { { "approximate", 0, F_BOOL, 0 } } },
};

static const struct options_desc *find_desc(int type)
{
	const char *nm = tfk_tfl_options_name(type);
	size_t i;

	if (!nm)
		return NULL;
	for (i = 0; i < sizeof(options_descs) / sizeof(options_descs[0]); i++)
		if (!strcmp(options_descs[i].table, nm))
			return &options_descs[i];
	return NULL;
}

int tfk_tflite_option(const struct tfk_tfl_op *op, int i, const char **name,
		      char *value, size_t cap, int *kind, struct tfk_err *err)
{
	const struct options_desc *d;
	const struct field_desc *f;
	const struct tfk_fb_table *t = &op->options;
	int rc = 0;

	if (!op->has_options || !(d = find_desc(op->options_type)) || i < 0 ||
	    i >= 8 || !d->f[i].name)
		return 0;
	f = &d->f[i];
	*name = f->name;
	switch (f->kind) {
	case F_ACT: case F_PAD: case F_I8: case F_TTYPE: case F_BOOL: {
		int8_t v;
		const char *s = NULL;

		if ((rc = tfk_fb_i8(t, f->slot, (int8_t)f->def, &v, err)))
			break;
		if (f->kind == F_ACT)
			s = tfk_tfl_act_name(v);
		else if (f->kind == F_PAD)
			s = v == 0 ? "SAME" : v == 1 ? "VALID" : NULL;
		else if (f->kind == F_TTYPE)
			s = tfk_tfl_type_name(v);
		if (f->kind == F_BOOL) {
			snprintf(value, cap, "%s", v ? "true" : "false");
			*kind = 'b';
		} else if (s) {
			snprintf(value, cap, "%s", s);
			*kind = 's';
		} else {
			snprintf(value, cap, "%d", v);
			*kind = 'i';
		}
		break;
	}
	case F_I32: {
		int32_t v;

		if (!(rc = tfk_fb_i32(t, f->slot, f->def, &v, err))) {
			snprintf(value, cap, "%d", v);
			*kind = 'i';
		}
		break;
	}
	case F_F32: {
		float v;

		if (!(rc = tfk_fb_f32(t, f->slot, 0, &v, err))) {
			snprintf(value, cap, "%.9g", (double)v);
			*kind = 'f';
		}
		break;
	}
	case F_IVEC: {
		struct tfk_fb_vec v;
		size_t k = 0;
		uint32_t j;

		if ((rc = tfk_fb_vector(t, f->slot, 4, &v, err)) < 0)
			break;
		rc = 0;
		k += (size_t)snprintf(value, cap, "[");
		for (j = 0; j < v.len && k < cap; j++)
			k += (size_t)snprintf(value + k, cap - k, "%s%d",
					      j ? ", " : "",
					      tfk_fb_vec_i32(&v, j));
		if (k < cap)
			snprintf(value + k, cap - k, "]");
		*kind = 'v';
		break;
	}
	}
	if (rc)
		return tfk_err_prefix(err, "%s.%s", d->table, f->name);
	return 1;
}
