/*
 * lite.h - running, converting and reporting on .tflite models: the
 * float path through the graph IR (tflgraph.c), the int8 interpreter
 * (tflint8.c), the converter from a SavedModel (tflconvert.c) and the
 * quantization report (tflreport.c). The file format itself, and
 * loading and verifying it, is format/tflite.h.
 */
#ifndef TFK_LITE_H
#define TFK_LITE_H

#include "format/tflite.h"
#include "graph/tensor.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/* What a run may touch (tflcheck.c), for both runners below ---------- */

/*
 * 0 when no input of subgraph sg has constant data, else TFK_EINVAL
 * "input 0: tensor 0 'x' has constant data (buffer 1, 16 bytes): an
 * input cannot be fed" (TFLite keeps such a tensor in the model's
 * read-only bytes and refuses to resize it; feeding it in place would
 * write over the model). tfk_tflite_graph and tfk_tflite_int8_new call
 * it, and prefix "subgraph 0".
 */
int tfk_tflite_check_inputs(const struct tfk_tflite *m, int sg,
			    struct tfk_err *err);
/*
 * 0 when constant tensor t of subgraph sg, read with its file shape,
 * lies inside its buffer: elements times the type's size (at least 1
 * byte each, as an int8 kernel reads any tensor) <= the buffer's bytes
 * (the loader cannot size a sparse, STRING or INT4 buffer). Else
 * TFK_EINVAL "tensor 1 'c': INT4 [2] needs 2 bytes, but its buffer 1
 * holds 1". Every read of constant bytes by a runner is behind it.
 */
int tfk_tflite_const_extent(const struct tfk_tflite *m, int sg, int t,
			    struct tfk_err *err);

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
 * (FLOAT16 and dequantized INT8 constants as float32; STRING ones from
 * their string buffer, which the loader checked).
 *
 * Operators map onto TensorFlow ops with TFLite's semantics: ADD, SUB,
 * MUL, DIV (AddV2, Sub, Mul, RealDiv), FULLY_CONNECTED (Reshape to
 * [-1, K], MatMul with transpose_b, BiasAdd; keep_num_dims; with INT8
 * weights, a dynamic-range file's hybrid operator, TFLiteHybridMatMul:
 * TFLite's EvalHybrid, each input row quantized at run time, symmetric
 * or as asymmetric_quantize_inputs says, see kernels/cpu.h), CONV_2D
 * (filter OHWI transposed to HWIO once, Conv2D, BiasAdd),
 * DEPTHWISE_CONV_2D (filter [1, H, W, I*M] as [H, W, I, M]),
 * MAX_POOL_2D, AVERAGE_POOL_2D, RESHAPE, SOFTMAX (beta), LOG_SOFTMAX,
 * CONCATENATION, MEAN, SUM, REDUCE_MAX, REDUCE_MIN, PAD, SQUEEZE,
 * EXPAND_DIMS, TRANSPOSE, RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR,
 * RELU, RELU6, RELU_N1_TO_1, LOGISTIC, TANH, ELU, LEAKY_RELU, EXP, LOG,
 * SQRT, RSQRT, SQUARE, NEG, ABS, FLOOR, MAXIMUM, MINIMUM,
 * SQUARED_DIFFERENCE, POW, SHAPE (out_type), STRIDED_SLICE (the five
 * masks; offset with constant begin and end), PACK, GATHER (GatherV2:
 * any element type, STRING inputs and constants included), RESHAPE to a shape
 * computed at run time (folded by the executor while planning),
 * DEQUANTIZE of constants; fused activations
 * (RELU, RELU6, RELU_N1_TO_1, TANH) as separate nodes.
 *
 * Refused (TFK_EINVAL, the message names the operator and tensor):
 * quantized models (an INT8, UINT8 or INT16 activation tensor, or a
 * QUANTIZE operator: "subgraph 0: tensor 0 'x' is INT8: quantized
 * models are not supported by run yet"), hybrid operators other than
 * FULLY_CONNECTED (INT8 weights read by CONV_2D directly), and every other
 * op ("operator 3: CUSTOM(TFLite_Detection_PostProcess) is not
 * supported"). *g is NULL on failure.
 */
int tfk_tflite_graph(const struct tfk_tflite *m, int sg,
		     const struct tfk_tdesc *in, struct tfk_graph **g,
		     struct tfk_err *err);
/*
 * tfk_tflite_graph refusing, while it builds, a graph whose run would
 * take more than max_work operations (0: no limit), for a caller
 * running models it does not trust (as tfk_tflite_int8_max_work): each
 * node costs its first input's elements plus its outputs' elements
 * times the taps behind each output value (MatMul, Conv2D and
 * DepthwiseConv2dNative: the weights per output channel; pools: the
 * window), from the shapes inferred for in (unknown and empty dimensions count
 * 1). The operator whose nodes pass the limit is refused before any
 * kernel runs: TFK_EINVAL "subgraph 0: operator 2 (CONV_2D): the run
 * would take more than 4194304 operations (the limit)". Outputs bound
 * memory too: no node makes more elements than its cost.
 */
int tfk_tflite_graph_limited(const struct tfk_tflite *m, int sg,
			     const struct tfk_tdesc *in, int64_t max_work,
			     struct tfk_graph **g, struct tfk_err *err);

/*
 * The converter (tflconvert.c): imp, a signature imported as the
 * executor runs it (model/import.h), lowered to TFLite builtins and
 * written as a .tflite to out_path (atomically, model/out.h; NULL:
 * appended to mem instead), its size in *out_size. o->quant picks the
 * weight quantization (tflconvert.c's top comment); TFK_LITE_INT8
 * calibrates on the first o->n_rep records of o->rep, fed as the
 * training spec of the SavedModel o->sm_dir says. 0 or < 0 with err set
 * (node-level messages; the caller prefixes the model).
 */
enum tfk_lite_quant {
	TFK_LITE_FLOAT = 0, TFK_LITE_FLOAT16, TFK_LITE_DYNAMIC, TFK_LITE_INT8
};
struct tfk_lite_convert_opts {
	enum tfk_lite_quant quant;
	const char *sm_dir;	/* int8: the SavedModel (its training spec) */
	const char *rep;	/* int8: representative records */
	long n_rep;		/* at most this many records */
	int io_int8;		/* int8 inputs/outputs, else float */
};
struct tfk_import;
struct tfk_buf;
int tfk_lite_convert(const struct tfk_import *imp,
		     const struct tfk_lite_convert_opts *o,
		     const char *out_path, struct tfk_buf *mem,
		     size_t *out_size, struct tfk_err *err);

/*
 * Quantized models (tflint8.c). tfk_tflite_is_int8: 1 when subgraph sg
 * has a QUANTIZE operator or an operator writing an INT8, UINT8 or
 * INT16 tensor (tfk_tflite_graph refuses those; run them here).
 * tfk_tflite_run_int8: run sg once with the lib/kernels/int8 kernels
 * (TFLite's reference integer arithmetic) on feeds[k] for subgraph
 * input k (float32, float16 or float64: quantized with the input's
 * parameters when the input is INT8 or UINT8; for such an input, int8,
 * uint8, int16, int32 or int64 values are the quantized values
 * themselves, each checked to lie in [-128, 127] or [0, 255]). UINT8
 * tensors are the legacy asymmetric uint8 models' (per-tensor, zero
 * points, uint8 weights) and run with TFLite's uint8 arithmetic; batch
 * = dimension 0 of feeds[0]; outs[j] gets a heap
 * copy of tensor out_tensors[j] (caller releases). Operators: QUANTIZE,
 * DEQUANTIZE, FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D, MAX_POOL_2D,
 * AVERAGE_POOL_2D, RESHAPE, SOFTMAX, ADD, SUB, MUL, LOGISTIC, TANH,
 * RELU, RELU6, CONCATENATION, PAD, MEAN, and SHAPE, STRIDED_SLICE (one
 * slice of a vector) and PACK (scalars, axis 0) over int32 shape vectors,
 * evaluated while planning (other dtypes TFK_EINVAL "... int32 shape
 * arithmetic only: ..."); others TFK_EINVAL "operator 3 (GATHER): is not
 * supported by run for int8 models".
 */
int tfk_tflite_is_int8(const struct tfk_tflite *m, int sg);
int tfk_tflite_run_int8(const struct tfk_tflite *m, int sg,
			const struct tfk_tensor *feeds, int n_out,
			const int *out_tensors, struct tfk_tensor *outs,
			struct tfk_err *err);
/*
 * The same interpreter prepared once and run many times (what
 * tfk_tflite_run_int8 does once): _new checks the tensor types (INT16
 * models are refused) and the operators' order (each reads
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
 * The numbers of convert's report (cmd/lite/convert.c prints them): the
 * per-tensor statistics on o->rep when o->report, and, when eval is
 * non-NULL, the float and quantized accuracy on it with both sizes.
 * float_model: the float conversion's bytes (borrowed until release);
 * the quantized model is read from o->out_path. 0, or < 0 with err set
 * and *res empty.
 */
struct tfk_lite_report_opts {
	const char *sm_dir;	/* the SavedModel (its training spec) */
	const char *out_path;	/* the quantized .tflite just written */
	int report;		/* per-tensor statistics (int8) */
	int layerwise;		/* ... against each float op alone */
	const char *rep;	/* representative records */
	long n_rep;		/* at most this many */
	const char *eval;	/* eval records (for messages) */
};
struct tfk_lite_report {
	struct tfk_tfl_qstat *st;	/* n_st, names borrowing qm */
	int n_st;
	size_t rep_rows;		/* representative records read */
	size_t float_correct, quant_correct;	/* of eval->rows */
	size_t float_bytes, quant_bytes;
	struct tfk_tflite fm, qm;	/* the two models */
};
int tfk_lite_report(const struct tfk_lite_report_opts *o,
		    const void *float_model, size_t float_size,
		    const struct tfk_tfl_records *eval,
		    struct tfk_lite_report *res, struct tfk_err *err);
void tfk_lite_report_release(struct tfk_lite_report *res);

#endif
