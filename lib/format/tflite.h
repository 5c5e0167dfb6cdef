/*
 * tflite.h - TensorFlow Lite model files (.tflite): load and verify.
 *
 * A .tflite file is a FlatBuffer (see flatbuf.h for the byte layout)
 * with file identifier "TFL3" and root table Model, from TensorFlow's
 * tensorflow/compiler/mlir/lite/schema/schema.fbs. The tables read and
 * their slots (the field's position in the declaration):
 *
 *   Model          0 version:uint  1 operator_codes:[OperatorCode]
 *                  2 subgraphs:[SubGraph]  3 description:string
 *                  4 buffers:[Buffer]  5 metadata_buffer:[int]
 *                  6 metadata:[Metadata]  7 signature_defs:[SignatureDef]
 *   OperatorCode   0 deprecated_builtin_code:byte  1 custom_code:string
 *                  2 version:int = 1  3 builtin_code:int
 *   SubGraph       0 tensors:[Tensor]  1 inputs:[int]  2 outputs:[int]
 *                  3 operators:[Operator]  4 name:string
 *   Tensor         0 shape:[int]  1 type:byte  2 buffer:uint
 *                  3 name:string  4 quantization:QuantizationParameters
 *                  5 is_variable:bool  6 sparsity:table
 *                  7 shape_signature:[int]  8 has_rank:bool
 *   QuantizationParameters  0 min:[float]  1 max:[float]
 *                  2 scale:[float]  3 zero_point:[long]
 *                  4 details_type:ubyte  5 details:table
 *                  6 quantized_dimension:int
 *   Operator       0 opcode_index:uint  1 inputs:[int]  2 outputs:[int]
 *                  3 builtin_options_type:ubyte  4 builtin_options
 *                  5 custom_options:[ubyte]  6 custom_options_format
 *                  7 mutating_variable_inputs  8 intermediates:[int]
 *                  9 large_custom_options_offset:ulong
 *                  10 large_custom_options_size:ulong
 *                  11 builtin_options_2_type  12 builtin_options_2
 *   Buffer         0 data:[ubyte]  1 offset:ulong  2 size:ulong
 *   Metadata       0 name:string  1 buffer:uint
 *   TensorMap      0 name:string  1 tensor_index:uint
 *   SignatureDef   0 inputs:[TensorMap]  1 outputs:[TensorMap]
 *                  2 signature_key:string  3 (deprecated_tag)
 *                  4 subgraph_index:uint
 *
 * An operator's builtin op is max(builtin_code, deprecated_builtin_code)
 * (old files set only the byte; new ones set the byte to 127,
 * PLACEHOLDER_FOR_GREATER_OP_CODES, for codes above it), as TFLite's
 * GetBuiltinCode does.
 *
 * tfk_tflite_load verifies everything it keeps before returning: the
 * FlatBuffer structure, then the model's own rules, so that a loaded
 * model can be used without further checks:
 *  - schema version 3, at least one subgraph;
 *  - every index in range: opcode_index, tensor indices of operators
 *    (-1 allowed for optional operator inputs), subgraph inputs and
 *    outputs, tensor buffers, metadata buffers, signature subgraphs and
 *    tensor indices;
 *  - shapes: rank <= TFK_MAX_RANK, dims >= 0 (shape_signature: >= -1),
 *    the byte size of the tensor representable;
 *  - a tensor with a non-empty buffer has exactly the bytes its type and
 *    shape need (STRING: a string buffer, below, of as many strings as
 *    its shape has elements), and buffers stored
 *    after the FlatBuffer (offset > 1, models over 2 GiB) lie inside
 *    the file;
 *  - quantization: as many zero points as scales, scales finite and
 *    > 0, per-channel counts equal to the quantized dimension's size.
 *    A quantized_dimension outside the tensor's rank (TF1-era files
 *    wrote any value for rank-1 biases) is read as the one dimension
 *    whose size is the scale count, with a warning in m->warnings;
 *    with no such single dimension it is an error.
 * Errors: "subgraphs[0]: tensors[3]: quantization: scale[1] is -0.5,
 * expected a finite value > 0" (TFK_ECORRUPT) or a structural error from flatbuf.c with
 * the same path prefix; the caller adds the file name.
 */
#ifndef TFK_TFLITE_H
#define TFK_TFLITE_H

#include "format/flatbuf.h"
#include "graph/tensor.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/* TFLite's TensorType numbers (schema.fbs). */
enum tfk_tfl_type {
	TFK_TFL_FLOAT32 = 0, TFK_TFL_FLOAT16 = 1, TFK_TFL_INT32 = 2,
	TFK_TFL_UINT8 = 3, TFK_TFL_INT64 = 4, TFK_TFL_STRING = 5,
	TFK_TFL_BOOL = 6, TFK_TFL_INT16 = 7, TFK_TFL_COMPLEX64 = 8,
	TFK_TFL_INT8 = 9, TFK_TFL_FLOAT64 = 10, TFK_TFL_COMPLEX128 = 11,
	TFK_TFL_UINT64 = 12, TFK_TFL_RESOURCE = 13, TFK_TFL_VARIANT = 14,
	TFK_TFL_UINT32 = 15, TFK_TFL_UINT16 = 16, TFK_TFL_INT4 = 17,
	TFK_TFL_BFLOAT16 = 18
};

/* BuiltinOperator numbers used by name in code (the full table of
 * names is behind tfk_tfl_op_name). */
enum {
	TFK_TFL_ADD = 0, TFK_TFL_AVERAGE_POOL_2D = 1,
	TFK_TFL_CONCATENATION = 2, TFK_TFL_CONV_2D = 3,
	TFK_TFL_DEPTHWISE_CONV_2D = 4, TFK_TFL_DEQUANTIZE = 6,
	TFK_TFL_FULLY_CONNECTED = 9, TFK_TFL_LOGISTIC = 14,
	TFK_TFL_MAX_POOL_2D = 17, TFK_TFL_MUL = 18, TFK_TFL_RELU = 19,
	TFK_TFL_RELU6 = 21, TFK_TFL_RESHAPE = 22, TFK_TFL_SOFTMAX = 25,
	TFK_TFL_TANH = 28, TFK_TFL_CUSTOM = 32, TFK_TFL_PAD = 34,
	TFK_TFL_GATHER = 36,
	TFK_TFL_MEAN = 40, TFK_TFL_SUB = 41, TFK_TFL_DIV = 42,
	TFK_TFL_SQUEEZE = 43, TFK_TFL_STRIDED_SLICE = 45, TFK_TFL_SHAPE = 77,
	TFK_TFL_PACK = 83, TFK_TFL_QUANTIZE = 114
};

/* ActivationFunctionType. */
enum {
	TFK_TFL_ACT_NONE = 0, TFK_TFL_ACT_RELU = 1, TFK_TFL_ACT_RELU_N1_TO_1 = 2,
	TFK_TFL_ACT_RELU6 = 3, TFK_TFL_ACT_TANH = 4, TFK_TFL_ACT_SIGN_BIT = 5
};

struct tfk_tfl_quant {
	int n_scale, n_zero_point, n_min, n_max;
	float *scale;		/* owned arrays */
	int64_t *zero_point;
	float *min, *max;
	int32_t quantized_dimension;
	uint8_t details_type;	/* 0: none; else custom (not decoded) */
};

struct tfk_tfl_tensor {
	const char *name;	/* borrowed from the file; "" when absent */
	uint8_t type;		/* enum tfk_tfl_type */
	int rank;
	int64_t shape[TFK_MAX_RANK];
	int has_shape_signature;
	int64_t shape_signature[TFK_MAX_RANK];	/* -1: unknown */
	uint32_t buffer;
	int is_variable;
	int is_sparse;
	int has_quant;		/* a QuantizationParameters table */
	struct tfk_tfl_quant quant;
};

struct tfk_tfl_op {
	uint32_t opcode_index;
	int n_inputs, n_outputs, n_intermediates;
	int32_t *inputs, *outputs, *intermediates;	/* owned */
	uint8_t options_type;	/* BuiltinOptions union type, 0 none */
	int has_options;
	struct tfk_fb_table options;	/* verified table of that type */
	uint8_t options2_type;	/* BuiltinOptions2 union type */
	uint32_t custom_options_size;
};

struct tfk_tfl_subgraph {
	const char *name;	/* borrowed; "" when absent */
	int n_tensors, n_inputs, n_outputs, n_ops;
	struct tfk_tfl_tensor *tensors;
	int32_t *inputs, *outputs;
	struct tfk_tfl_op *ops;
};

struct tfk_tfl_opcode {
	int32_t builtin_code;	/* the resolved op: max of the two */
	int8_t deprecated_builtin_code;
	int32_t extended_builtin_code;
	const char *custom_code;	/* NULL when absent */
	int32_t version;
};

struct tfk_tfl_buffer {
	const uint8_t *data;	/* borrowed; NULL when empty */
	uint64_t size;
	uint64_t offset;	/* > 1: data is at file byte offset */
};

struct tfk_tfl_tensormap {
	const char *name;
	uint32_t tensor_index;
};

struct tfk_tfl_signature {
	const char *key;	/* "" when absent */
	uint32_t subgraph_index;
	int n_inputs, n_outputs;
	struct tfk_tfl_tensormap *inputs, *outputs;
};

struct tfk_tfl_metadata {
	const char *name;
	uint32_t buffer;
};

struct tfk_tflite {
	const uint8_t *p;	/* the file bytes (borrowed or owned) */
	size_t n;
	int owns;
	struct tfk_fb fb;
	uint32_t version;
	const char *description;	/* NULL when absent */
	int n_opcodes, n_subgraphs, n_buffers, n_metadata, n_signatures;
	int n_metadata_buffer;
	struct tfk_tfl_opcode *opcodes;
	struct tfk_tfl_subgraph *subgraphs;
	struct tfk_tfl_buffer *buffers;
	struct tfk_tfl_metadata *metadata;
	struct tfk_tfl_signature *signatures;
	int32_t *metadata_buffer;
	/* What loading let pass in a file TFLite's own runtime may refuse,
	 * one located line each ("subgraphs[0]: tensors[5] 'b':
	 * quantization: quantized_dimension 3 is outside the tensor's rank
	 * 1; read as 0, ..."); the library does not print them, tools do. */
	int n_warnings;
	char **warnings;	/* owned */
};

/*
 * Load a model from p[0..n), borrowed: p must outlive *m (names and
 * buffers point into it). Verifies as described above. 0, TFK_ECORRUPT
 * / TFK_ETRUNC (message "subgraphs[0]: operators[1]: ..."), TFK_EINVAL
 * (a value this library cannot hold: rank over TFK_MAX_RANK) or
 * TFK_ENOMEM; *m is then empty (releasable).
 */
int tfk_tflite_load(struct tfk_tflite *m, const void *p, size_t n,
		    struct tfk_err *err);
/* Read path whole ("-": standard input, named "<stdin>" in messages)
 * and load it (the model owns the bytes). Errors are prefixed with
 * path; TFK_EIO for a file that cannot be read. */
int tfk_tflite_load_file(struct tfk_tflite *m, const char *path,
			 struct tfk_err *err);
/* Free what m owns. NULL is fine. */
void tfk_tflite_release(struct tfk_tflite *m);

/* TFLite's name of a BuiltinOperator ("FULLY_CONNECTED"); NULL for a
 * number the schema does not name. */
const char *tfk_tfl_op_name(int32_t code);
/* Name of a TensorType in TFLite's spelling ("FLOAT32", "INT8");
 * NULL for unknown numbers. */
const char *tfk_tfl_type_name(int type);
/* The TensorFlow dtype of a TensorType, TFK_DT_INVALID when enum
 * tfk_dtype has none. */
enum tfk_dtype tfk_tfl_dtype(int type);
/* Bytes per element (0 for STRING, RESOURCE, VARIANT, INT4 and unknown
 * types). */
size_t tfk_tfl_type_size(int type);
/*
 * A STRING tensor's buffer (TFLite's string_util.h DynamicBuffer), all
 * int32 little-endian:
 *
 *   count N | offset[0] ... offset[N] | the strings' bytes
 *
 * string i is bytes [offset[i], offset[i + 1]) of the buffer; offset[0]
 * is the header's size, 4 * (N + 2), and offset[N] the buffer's size.
 * tfk_tfl_strings_check: 0 when p[0..n) is such a buffer holding numel
 * strings (offsets within it, never decreasing), as TFLite's verifier
 * (VerifyStringTensorBuffer) requires; else TFK_ECORRUPT "string
 * buffer: offset 2 (9) is before offset 1 (12)". tfk_tfl_string_at:
 * string i of a checked buffer (borrowing p).
 */
int tfk_tfl_strings_check(const uint8_t *p, uint64_t n, int64_t numel,
			  struct tfk_err *err);
void tfk_tfl_string_at(const uint8_t *p, int64_t i, const uint8_t **s,
		       size_t *len);
/* Name of a BuiltinOptions union member ("FullyConnectedOptions"),
 * NULL for 0 and unknown numbers. */
const char *tfk_tfl_options_name(int type);
/* "NONE", "RELU", ... for an ActivationFunctionType; NULL if unknown. */
const char *tfk_tfl_act_name(int act);

/* The string in the "min_runtime_version" metadata buffer (up to its
 * first 0 byte, at most cap - 1 bytes) into buf; 0, or TFK_ENOTFOUND
 * when the model has none. */
int tfk_tflite_min_runtime(const struct tfk_tflite *m, char *buf, size_t cap);

/*
 * One decoded field of an operator's builtin options, for display:
 * walk i = 0, 1, ... until it returns 0. Fills name and a printable
 * value (e.g. "RELU", "2", "0.5", "[1, -1]", "SAME"); kind says how to
 * print it in JSON: 's' string, 'i' integer, 'f' float, 'b' bool,
 * 'v' integer list (value is "[...]"). Returns 1, 0 past the last
 * field (or for option tables this module does not describe), or a
 * negative TFK_E* for a corrupt field.
 */
int tfk_tflite_option(const struct tfk_tfl_op *op, int i, const char **name,
		      char *value, size_t cap, int *kind, struct tfk_err *err);

/* Byte size of each part of the file, for `show`. */
struct tfk_tflite_sizes {
	uint64_t total;
	uint64_t buffers;	/* constant tensor data (not metadata) */
	uint64_t metadata;	/* buffers referenced by metadata */
	uint64_t external;	/* buffer bytes stored after the flatbuffer */
	uint64_t structure;	/* the rest: tables, names, padding */
};
void tfk_tflite_sizes(const struct tfk_tflite *m, struct tfk_tflite_sizes *s);

#endif
