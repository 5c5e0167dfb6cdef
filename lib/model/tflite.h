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
 *    shape need (STRING: at least the 4-byte count), and buffers stored
 *    after the FlatBuffer (offset > 1, models over 2 GiB) lie inside
 *    the file;
 *  - quantization: as many zero points as scales, scales finite and
 *    > 0, per-channel counts equal to the quantized dimension's size.
 * Errors: "subgraphs[0]: tensors[3]: quantization: scale[1] is -0.5,
 * expected a finite value > 0" (TFK_ECORRUPT) or a structural error from flatbuf.c with
 * the same path prefix; the caller adds the file name.
 */
#ifndef TFK_TFLITE_H
#define TFK_TFLITE_H

#include "model/flatbuf.h"
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
	TFK_TFL_MEAN = 40, TFK_TFL_SUB = 41, TFK_TFL_DIV = 42,
	TFK_TFL_SQUEEZE = 43, TFK_TFL_QUANTIZE = 114
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

/* Float inference through the graph IR (tflgraph.c) ------------------- */

struct tfk_graph;

/*
 * Build subgraph sg of m as a tfk_graph for float32 inference. Every
 * tensor t of the subgraph is known in the graph by the name "t<index>"
 * ("t0", "t9"): a subgraph input is a Placeholder of that name, a
 * subgraph output a named output of that name (tfk_graph_find, and so
 * tfk_exec_new, resolve both). in[k] (k over the subgraph's inputs)
 * gives the shape each input is fed with, as TFLite's
 * ResizeInputTensor would set it; in NULL: the shape_signature (or
 * shape) the file declares. Constant tensors become Const nodes
 * (FLOAT16 and dequantized INT8 constants as float32).
 *
 * Operators map onto TensorFlow ops with TFLite's semantics: ADD, SUB,
 * MUL, DIV (AddV2, Sub, Mul, RealDiv), FULLY_CONNECTED (Reshape to
 * [-1, K], MatMul with transpose_b, BiasAdd; keep_num_dims), CONV_2D
 * (filter OHWI transposed to HWIO once, Conv2D, BiasAdd),
 * DEPTHWISE_CONV_2D (filter [1, H, W, I*M] as [H, W, I, M]),
 * MAX_POOL_2D, AVERAGE_POOL_2D, RESHAPE, SOFTMAX (beta), LOG_SOFTMAX,
 * CONCATENATION, MEAN, SUM, REDUCE_MAX, REDUCE_MIN, PAD, SQUEEZE,
 * EXPAND_DIMS, TRANSPOSE, RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR,
 * RELU, RELU6, RELU_N1_TO_1, LOGISTIC, TANH, ELU, LEAKY_RELU, EXP, LOG,
 * SQRT, RSQRT, SQUARE, NEG, ABS, FLOOR, MAXIMUM, MINIMUM,
 * SQUARED_DIFFERENCE, POW, DEQUANTIZE of constants; fused activations
 * (RELU, RELU6, RELU_N1_TO_1, TANH) as separate nodes.
 *
 * Refused (TFK_EINVAL, the message names the operator and tensor):
 * quantized models (an INT8, UINT8 or INT16 activation tensor, or a
 * QUANTIZE operator: "subgraph 0: tensor 0 'x' is INT8: quantized
 * models are not supported by run yet"), hybrid operators (INT8
 * weights read by FULLY_CONNECTED or CONV_2D directly), and every other
 * op ("operator 3: CUSTOM(TFLite_Detection_PostProcess) is not
 * supported"). *g is NULL on failure.
 */
int tfk_tflite_graph(const struct tfk_tflite *m, int sg,
		     const struct tfk_tdesc *in, struct tfk_graph **g,
		     struct tfk_err *err);

/*
 * `tfk-lite convert`: the convert subcommand's main (argv[0] is
 * "convert"), implemented in lib/model/tflconvert.c: a SavedModel
 * signature to a .tflite file. Returns the exit status.
 */
int tfk_lite_convert_main(int argc, char **argv);

/*
 * Quantized models (tflint8.c). tfk_tflite_is_int8: 1 when subgraph sg
 * has a QUANTIZE operator or an operator writing an INT8, UINT8 or
 * INT16 tensor (tfk_tflite_graph refuses those; run them here).
 * tfk_tflite_run_int8: run sg once with the lib/kernels/int8 kernels
 * (TFLite's reference integer arithmetic) on feeds[k] for subgraph
 * input k (float32; quantized with the input's parameters when the
 * input is INT8), batch = dimension 0 of feeds[0]; outs[j] gets a heap
 * copy of tensor out_tensors[j] (caller releases). Operators: QUANTIZE,
 * DEQUANTIZE, FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D, MAX_POOL_2D,
 * AVERAGE_POOL_2D, RESHAPE, SOFTMAX, ADD, SUB, MUL, LOGISTIC, TANH,
 * RELU, RELU6, CONCATENATION, PAD, MEAN; others TFK_EINVAL "operator 3
 * (GATHER): is not supported by run for int8 models".
 */
int tfk_tflite_is_int8(const struct tfk_tflite *m, int sg);
int tfk_tflite_run_int8(const struct tfk_tflite *m, int sg,
			const struct tfk_tensor *feeds, int n_out,
			const int *out_tensors, struct tfk_tensor *outs,
			struct tfk_err *err);
/*
 * The same interpreter prepared once and run many times (what
 * tfk_tflite_run_int8 does once): _new checks the tensor types (UINT8
 * and INT16 models are refused) and the operators' order (each reads
 * constants, inputs and tensors an earlier operator wrote; each output
 * is one of those) and borrows m, which must outlive it;
 * _run is tfk_tflite_run_int8 on it (n_out may be 0: nothing copied
 * out), reusing the buffers, packed weights and operator parameters
 * of earlier runs; _free accepts NULL.
 */
struct tfk_tfl_int8;
int tfk_tflite_int8_new(struct tfk_tfl_int8 **p, const struct tfk_tflite *m,
			int sg, struct tfk_err *err);
int tfk_tflite_int8_run(struct tfk_tfl_int8 *p, const struct tfk_tensor *feeds,
			int n_out, const int *out_tensors,
			struct tfk_tensor *outs, struct tfk_err *err);
void tfk_tflite_int8_free(struct tfk_tfl_int8 *p);
/* Threads of the fast FULLY_CONNECTED/CONV_2D kernels (default 1;
 * results do not depend on it). */
void tfk_tflite_int8_threads(struct tfk_tfl_int8 *p, int threads);
/* The most operations one run may do (0, the default: no limit), for
 * a caller running models it does not trust: each operator costs its
 * input's elements plus its output's times the weights or window taps
 * behind each output value; the operator that would pass the limit is
 * refused before it allocates or runs, TFK_EINVAL "operator 4
 * (DEPTHWISE_CONV_2D): the run would take more than 4194304 operations
 * (the limit)". */
void tfk_tflite_int8_max_work(struct tfk_tfl_int8 *p, int64_t ops);

/*
 * `tfk-lite bench` (tflbench.c): the bench subcommand's main (argv[0]
 * is "bench"): load time and invocation latency of a model in a loop,
 * as `tfk-model bench`. Returns the exit status.
 */
int tfk_lite_bench_main(int argc, char **argv);

/*
 * Quantization report (tflreport.c), for `tfk-lite convert --report
 * / --eval`.
 *
 * tfk_tfl_records_read: the first n_max rows (n_max <= 0: all) of the
 * TFRecord file path, mapped to model inputs as the SavedModel sm_dir's
 * training spec (assets.extra/tfkit_spec.json "inputs") says, through
 * nn/feed.h (the converter's calibration reads its records here too).
 * keys[k] is the spec model's input name k (a signature input key),
 * inputs[k] its rows [rows, ...] (owned). label non-NULL: labels[i] is
 * the int64 feature label of row i (one value per row). Errors name the
 * file and record ("eval.tfrecord: record 3: no feature 'label' (the
 * label)"), "FILE: no records", the spec's messages prefixed with
 * "PURPOSE needs the training spec tfk-train saves"; *r is then empty.
 */
struct tfk_tfl_records {
	int n_inputs;
	char **keys;
	struct tfk_tensor *inputs;
	int64_t *labels;	/* NULL without a label */
	size_t rows;
};
int tfk_tfl_records_read(struct tfk_tfl_records *r, const char *sm_dir,
			 const char *path, long n_max, const char *label,
			 const char *purpose, struct tfk_err *err);
/* Free what r holds; NULL is fine. */
void tfk_tfl_records_release(struct tfk_tfl_records *r);

/*
 * TF's quantization-debugger layer statistics (debugger.py
 * _DEFAULT_LAYER_DEBUG_METRICS) of quantized model qm against float
 * model fm on the rows of r: one entry per INT8 activation tensor of
 * qm that has a FLOAT32 activation tensor of the same name in fm, in
 * tensor order. Per row, diffs = dequantized qm value - fm value; each
 * metric is averaged over rows. The fm value is the float model's own
 * (whole-model verification: errors accumulate), or with layerwise
 * the output of the float operator writing it run alone on the
 * dequantized qm values of its inputs (TF's default NumericVerify; the
 * whole-model value where that operator or an input twin is missing).
 * The subgraph run is the first signature's (else subgraph 0), its
 * inputs fed from r by signature key. *out (tfk_free it; names borrow
 * qm) and *n; 0 or < 0.
 */
struct tfk_tfl_qstat {
	int tensor;		/* index in qm's subgraph */
	const char *name;
	const char *op;		/* the writing operator; "" for an input */
	int64_t num_elements;	/* per row */
	double stddev, mean_error, max_abs_error, mean_squared_error;
	double scale;
	int64_t zero_point;
};
int tfk_tflite_qstats(const struct tfk_tflite *fm, const struct tfk_tflite *qm,
		      const struct tfk_tfl_records *r, int layerwise,
		      struct tfk_tfl_qstat **out, int *n,
		      struct tfk_err *err);
/* Rows of r whose label is the argmax of m's first output (one output
 * unit: value > 0.5 means 1) into *correct. Needs r->labels. */
int tfk_tflite_accuracy(const struct tfk_tflite *m,
			const struct tfk_tfl_records *r, size_t *correct,
			struct tfk_err *err);

/*
 * Print convert's report to stdout (text, or one JSON object): the
 * per-tensor statistics on o->rep when o->report, and, when eval is
 * non-NULL, the float and quantized accuracy on it with both sizes.
 * float_model: the float conversion's bytes; the quantized model is
 * read from o->out_path. 0 or < 0 with err set (nothing printed).
 */
struct tfk_lite_report_opts {
	const char *sm_dir;	/* the SavedModel (its training spec) */
	const char *out_path;	/* the quantized .tflite just written */
	const char *quant;	/* "int8", "dynamic", "float16" */
	int report;		/* per-tensor statistics (int8) */
	int layerwise;		/* ... against each float op alone */
	const char *rep;	/* representative records */
	long n_rep;		/* at most this many */
	const char *eval;	/* eval records (for messages) */
	const char *label;	/* the label feature */
	int json;
};
int tfk_lite_report(const struct tfk_lite_report_opts *o,
		    const void *float_model, size_t float_size,
		    const struct tfk_tfl_records *eval, struct tfk_err *err);

#endif
