/*
 * servable.h - a model loaded once and run many times: a SavedModel
 * directory or a .tflite file behind one API, which tfk-model,
 * tfk-lite, tfk-predict and tfk-serve share.
 *
 * tfk_servable_open loads and verifies the model and describes its
 * signatures (TF Serving calls a loaded model version a servable).
 * tfk_runner_new prepares one signature to run: for a SavedModel the
 * signature imported as a pruned graph (model/import.h; variables read
 * once) and an executor (graph/exec.h); for a .tflite the float graph
 * or the int8 interpreter (model/lite.h). tfk_runner_run runs it on its
 * inputs as often as wanted, reusing its memory (a run whose shapes
 * equal the last run's allocates nothing); tfk_runner_bench times a
 * loop of runs.
 *
 * Threads. A servable is read-only once open, but for its state (below):
 * any number of threads may share it, call its getters and make runners
 * over it at the same time (the cache of imported SavedModel graphs is
 * behind a mutex). A runner belongs to one thread at a time:
 * it owns the executor's arena or the interpreter's buffers, and the
 * outputs of its last run. A server thus keeps one servable per model
 * version and one runner per worker thread and signature. The imported
 * graph of a SavedModel signature (its weights) is made once per
 * servable and set of fed inputs and shared by the runners over it;
 * every runner must be freed before its servable is closed.
 *
 * State. A signature may write variables (TF1 Assign/AssignAdd/
 * AssignSub on a VariableV2, TF2 Assign*VariableOp, e.g. a counter's
 * assign_add): the importer lowers the writes and the run makes them
 * (model/import.h, targets). One servable is one state, as one loaded
 * model in TensorFlow: the variables a run writes keep their values
 * for the servable's life and every later run of any of its
 * signatures, on any runner, reads them; a new servable starts again
 * from the checkpoint; nothing is written back to the files. Threads:
 * until a signature that writes has been prepared (tfk_runner_new),
 * runs take a shared lock only, and pure models stay as parallel as
 * before; after, a run of a writing signature, or of a pure one whose
 * variables are behind the state, holds the servable's state lock
 * alone, so runs that touch state are serialized in some order (the
 * order of concurrent runs is not defined) while pure runs that are up
 * to date still run in parallel.
 */
#ifndef TFK_SERVABLE_H
#define TFK_SERVABLE_H

#include "graph/tensor.h"
#include "util/err.h"
#include "util/latency.h"

#include <stdint.h>

struct tfk_savedmodel;
struct tfk_meta_graph;
struct tfk_tflite;

enum tfk_servable_kind {
	TFK_SERVABLE_SAVEDMODEL = 1,
	TFK_SERVABLE_TFLITE = 2
};

/* An input or output of a signature. */
struct tfk_sv_tensor {
	const char *key;	/* the signature's name for it: "x" */
	const char *name;	/* SavedModel: the graph tensor "x:0";
				 * .tflite: the tensor's name */
	enum tfk_dtype dtype;	/* as declared; a reference type (DT_FLOAT_
				 * REF) as its value type */
	int rank;		/* -1: unknown */
	int64_t shape[TFK_MAX_RANK];	/* -1: unknown */
	int tfl_type;		/* .tflite: the TensorType; -1: SavedModel */
	int tensor;		/* .tflite: its index in the subgraph; -1 */
};

struct tfk_sv_signature {
	const char *key;		/* "serving_default" */
	const char *method_name;	/* "tensorflow/serving/predict";
					 * "" for a .tflite */
	int n_inputs, n_outputs;
	const struct tfk_sv_tensor *inputs;	/* by key; see below */
	const struct tfk_sv_tensor *outputs;
};

struct tfk_servable;

struct tfk_servable_opts {
	const char *tag_set;	/* SavedModel: the MetaGraphDef's tags,
				 * comma-separated; NULL: "serve" */
	enum tfk_servable_kind kind;	/* 0: by the path (below) */
};

/*
 * Load the model at path: o->kind's, or with kind 0 a directory is a
 * SavedModel (the MetaGraphDef of o->tag_set) and anything else a
 * .tflite file ("-": standard input).
 * o may be NULL. Errors are those of tfk_savedmodel_open and
 * tfk_savedmodel_find_tags (prefixed with the directory) or of
 * tfk_tflite_load_file; *s is NULL on failure.
 *
 * Signatures: a SavedModel's as the MetaGraphDef declares them (sorted
 * by key, inputs and outputs by key); a .tflite's SignatureDefs (in file
 * order, outputs sorted by key, inputs in the order the SignatureDef
 * lists them) or, for a file without any, one signature keyed
 * "serving_default" over subgraph 0 whose keys are its tensors' names,
 * in the subgraph's order.
 */
int tfk_servable_open(struct tfk_servable **s, const char *path,
		      const struct tfk_servable_opts *o, struct tfk_err *err);
/* Close s (every runner over it freed first). NULL is fine. */
void tfk_servable_close(struct tfk_servable *s);

enum tfk_servable_kind tfk_servable_kind(const struct tfk_servable *s);
/* The path as given to open ("<stdin>" for "-"). */
const char *tfk_servable_path(const struct tfk_servable *s);
/* The loaded file: a SavedModel's parse and the chosen meta graph, or
 * the .tflite; NULL for the other kind. Borrowed until close. */
const struct tfk_savedmodel *tfk_servable_savedmodel(
	const struct tfk_servable *s);
const struct tfk_meta_graph *tfk_servable_meta_graph(
	const struct tfk_servable *s);
const struct tfk_tflite *tfk_servable_tflite(const struct tfk_servable *s);

/* The signatures, borrowed until close. */
int tfk_servable_n_signatures(const struct tfk_servable *s);
const struct tfk_sv_signature *tfk_servable_signature(
	const struct tfk_servable *s, int i);
/*
 * The signature keyed key, or NULL with TFK_ENOTFOUND: "could not find
 * signature \"k\"; signatures are: a, b". key NULL: a SavedModel's
 * "serving_default", a .tflite's only signature.
 */
const struct tfk_sv_signature *tfk_servable_find(const struct tfk_servable *s,
						 const char *key,
						 struct tfk_err *err);
/* 1 when the .tflite signature sig runs on the int8 interpreter. */
int tfk_servable_is_int8(const struct tfk_servable *s,
			 const struct tfk_sv_signature *sig);
/* The subgraph a .tflite signature runs (0 for a SavedModel). */
int tfk_servable_subgraph(const struct tfk_servable *s,
			  const struct tfk_sv_signature *sig);

/* Runners ---------------------------------------------------------------- */

struct tfk_runner;

struct tfk_runner_opts {
	int threads;		/* kernel threads; <= 0: 1 */
	uint64_t seed;		/* the key of random ops */
	int64_t max_work;	/* .tflite: the most operations a run may
				 * do (tfk_tflite_int8_max_work,
				 * tfk_tflite_graph_limited); 0: no limit */
	int any_shape;		/* SavedModel: run on inputs of any shape
				 * (dtype still checked), as TensorFlow's C++
				 * Session and so TF Serving feed them; 0:
				 * the shape must fit, as saved_model_cli */
};

/*
 * Prepare signature sig of s to run on the inputs keyed fed[0..n_fed)
 * (n_fed < 0: every input of the signature, in its order). A SavedModel
 * signature may leave out inputs it has a default for (a
 * PlaceholderWithDefault) or that its outputs do not need; a .tflite
 * needs all. o may be NULL. Errors: TFK_EINVAL "\"z\" is not a valid
 * input key of signature S; valid keys: \"x\"", "input 'b' is not
 * given", the importer's and the graph builder's (prefixed "DIR:
 * signature S"), TFK_ENOMEM. *r is NULL on failure. Any thread; see the
 * top comment.
 */
int tfk_runner_new(struct tfk_runner **r, struct tfk_servable *s,
		   const struct tfk_sv_signature *sig,
		   const char *const *fed, int n_fed,
		   const struct tfk_runner_opts *o, struct tfk_err *err);
void tfk_runner_free(struct tfk_runner *r);

/*
 * What a run takes and gives: input i is fed[i] of tfk_runner_new, with
 * the dtype and shape its placeholder or tensor has (so a TensorInfo
 * that declares another dtype than its placeholder is fed as the
 * placeholder takes it); output j is the signature's output j (dtype as
 * the graph computes it, shape as declared).
 */
int tfk_runner_n_inputs(const struct tfk_runner *r);
const struct tfk_sv_tensor *tfk_runner_input(const struct tfk_runner *r,
					     int i);
/* 0 when the outputs do not read input i (a SavedModel input the
 * pruned graph left out): its value is not looked at. */
int tfk_runner_needs(const struct tfk_runner *r, int i);
int tfk_runner_n_outputs(const struct tfk_runner *r);
const struct tfk_sv_tensor *tfk_runner_output(const struct tfk_runner *r,
					      int j);

/*
 * Run once on in[0..n_inputs) (borrowed for the call) and point out[j]
 * at output j, valid until the next run or free (out NULL: the outputs
 * are not wanted, and an int8 run copies none out). A SavedModel input
 * must have its placeholder's dtype and a fitting shape (same rank,
 * equal known dims: "input 'x': expected float32 [?, 1], got shape
 * [2]"; tfk_sv_convert makes it so); a .tflite input is given to the
 * graph (float32 and the tensors' own types) or to the int8 interpreter
 * (float32, quantized by its parameters, or integer values taken as
 * quantized ones) as is, and a new shape re-plans the run as TFLite's
 * ResizeInputTensor does. Errors are the executor's or interpreter's
 * ("node y: ..."); the caller adds which model and signature ran.
 */
int tfk_runner_run(struct tfk_runner *r, const struct tfk_tensor *in,
		   const struct tfk_tensor **out, struct tfk_err *err);

/*
 * Convert *t in place to the dtype of want as feeding a numpy array
 * converts it (integers to floats, narrower to wider, integers range
 * checked; never floats to integers, strings to numbers or bools to
 * anything else) and check its shape fits want's. A .tflite tensor
 * takes any shape (the run resizes), and one of a quantized type (INT8,
 * UINT8, INT16) takes integers as its quantized values (converted to
 * its own type, range checked) and floats as float32 (the interpreter
 * quantizes them); one of a type without a TensorFlow dtype keeps t's
 * numeric type. float16 values feed float32 and float64 tensors. Errors (TFK_EINVAL): "input 'x': expected
 * float32, got string values", "input 'x': value 300 out of range for
 * uint8", "input 'x': expected float32 [?, 1], got shape [2]".
 */
int tfk_sv_convert(struct tfk_tensor *t, const struct tfk_sv_tensor *want,
		   struct tfk_err *err);

/* Timing a runner -------------------------------------------------------- */

struct tfk_bench_opts {
	long warmup;		/* untimed runs first */
	long iterations;	/* timed runs; 0: as many as seconds allows */
	double seconds;		/* with iterations 0: time the loop this
				 * long (at least one run) */
	long profile_runs;	/* the first this many timed runs are
				 * recorded (util/profile.h, armed by the
				 * caller) as steps "predict" 1, 2, ... */
};

struct tfk_bench_result {
	long runs;				/* timed */
	struct tfk_latency_stats lat;		/* microseconds per run */
	double wall;				/* seconds of the timed loop */
	double runs_per_s;
};

/*
 * Run r on in o->warmup times, then time each run alone (clock_gettime
 * around tfk_runner_run) for o->iterations runs or o->seconds, into
 * *res: util/latency.h's min, mean and percentiles in microseconds,
 * runs per second of the loop's wall time. Errors are the run's.
 */
int tfk_runner_bench(struct tfk_runner *r, const struct tfk_tensor *in,
		     const struct tfk_bench_opts *o,
		     struct tfk_bench_result *res, struct tfk_err *err);

/* Seconds of CLOCK_MONOTONIC, for callers timing loads alike. */
double tfk_sv_now(void);

#endif
