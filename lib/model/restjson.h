/*
 * restjson.h - TensorFlow Serving's REST JSON for predict requests and
 * responses, between JSON text and tensors, and the JSON of a model's
 * metadata: the part of a REST front end that is not HTTP, shared by
 * tfk-serve and anything else that speaks TF Serving's REST API.
 *
 * Requests (TF Serving's "REST API" page, and its json_tensor.cc):
 *   {"signature_name": "S", "instances": [ROW, ...]}    row format
 *   {"signature_name": "S", "inputs": VALUE}             columnar format
 * A ROW is one value (a signature with one input) or an object with one
 * member per input; the rows are stacked into tensors whose first
 * dimension is the number of rows, so every row of an input must have
 * the same shape. VALUE is one input's value, or an object with a
 * member per input (other members are ignored, as TF Serving does). A
 * value is a number, string, bool, {"b64": "..."} (a DT_STRING element
 * given as standard base64) or a list of them nested as deep as the
 * rank, every list at one level of the same length. Numbers: JSON
 * integers for integer inputs (range-checked), integers or decimals for
 * float inputs when they convert without loss (|integer| < 2^24 for
 * float32, 2^53 for float64; decimals within the type's range); NaN,
 * Infinity and -Infinity are accepted as bare tokens, as TF Serving's
 * parser (rapidjson with kParseNanAndInfFlag) does.
 *
 * Responses: {"predictions": [...]} for the row format, one entry per
 * row of the outputs (the output's value for that row, or an object of
 * every output's when there are several; all outputs must then share
 * their first dimension), {"outputs": VALUE} for the columnar format
 * (the one output's value, or an object of all). Floats print as
 * TF Serving writes them: "%g" when it reads back to the same value,
 * else with max_digits10 (9 for float32, 17 for float64), with ".0"
 * added to whole numbers, NaN/Infinity/-Infinity bare; integers and
 * bools as JSON's; strings as JSON strings, or {"b64": ...} when the
 * output's key ends in "_bytes" (TF Serving's rule) or the bytes are not
 * UTF-8 (which JSON cannot carry). Objects are in key order.
 *
 * Classify and Regress (TF Serving's "Classify and Regress API"):
 *   {"signature_name": "S", "context": {FEATURES},
 *    "examples": [{FEATURES}, ...]}
 * FEATURES maps a name to a value or a list of values of one kind: a
 * JSON number with a fraction or exponent (or NaN, Infinity) is a float
 * feature, an integer an int64 feature, a string or {"b64": "..."} a
 * bytes feature. Each example is serialized as a tf.Example with the
 * context's features merged in (the example's own value wins) and the
 * examples become a 1-D string tensor for the signature's one string
 * input. Answers: {"result": [Y, ...]} (regress, one float per
 * example), {"result": [[["LABEL", SCORE], ...], ...]} (classify).
 *
 * Errors are TFK_EINVAL (the request is wrong: HTTP 400) with a message
 * that names the place ("instances[1].x: expected 3 values at level 1,
 * got 2"), or TFK_ENOMEM.
 */
#ifndef TFK_RESTJSON_H
#define TFK_RESTJSON_H

#include "graph/tensor.h"
#include "model/servable.h"
#include "util/buf.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

enum tfk_rj_format {
	TFK_RJ_ROW = 1,		/* "instances" in, "predictions" out */
	TFK_RJ_COLUMNAR = 2	/* "inputs" in, "outputs" out */
};

struct tfk_rj_request {
	char *signature_name;	/* as given; NULL when absent */
	enum tfk_rj_format format;
	void *doc;		/* the parsed document (private) */
};

/*
 * Parse body[0..n) (need not end in NUL) into *rq: a JSON object with
 * an optional string "signature_name" and exactly one of "instances" (a
 * non-empty list) or "inputs". Pair with tfk_rj_release, also after a
 * failure. Errors: "JSON parse error at offset 7: ..." (the offset in
 * body), "request: expected a JSON object", "request: 'signature_name'
 * must be a string", "request: missing 'inputs' or 'instances' key",
 * "request: expected only one of 'inputs' or 'instances'",
 * "request: 'instances' must be a non-empty list".
 */
int tfk_rj_parse(struct tfk_rj_request *rq, const char *body, size_t n,
		 struct tfk_err *err);
void tfk_rj_release(struct tfk_rj_request *rq);

/*
 * Decode the values for every input of sig into in[0..sig->n_inputs)
 * (caller storage, heap tensors to release; all left empty on failure),
 * each of the dtype the signature declares for it (a .tflite input of a
 * type without a TensorFlow dtype is refused). Shapes are the request's
 * own; checking them against the signature is the runner's business.
 * Errors (TFK_EINVAL): "instances[0]: expected an object with the keys
 * a, b (the signature has 2 inputs)", "instances[0]: 'z' is not an
 * input of the signature; inputs: x", "instances[1]: missing input
 * 'b'", "inputs: missing input 'b'", "instances[2].x: expected shape
 * [3], got [2] as in instances[0]", "inputs.x[1]: expected float32,
 * got string \"a\"", "inputs.x: 16777217 cannot be float32 without loss
 * of precision", "inputs.x[0]: 300 is out of range for uint8", "...:
 * invalid base64", "...: lists nested deeper than 8", TFK_ENOMEM.
 */
int tfk_rj_inputs(const struct tfk_rj_request *rq,
		  const struct tfk_sv_signature *sig, struct tfk_tensor *in,
		  struct tfk_err *err);

/*
 * Append the response for format f to b: outputs out[0..n), named
 * keys[0..n) (any order; written in key order). Errors (TFK_EINVAL, b
 * then holds part of a response: reset it): "output 'y' is a scalar: the
 * row format needs a first dimension" (TF Serving: "has no shape
 * information"), "output 'b' has 3 rows, output 'a' 2", "output 'y':
 * float16 ... cannot be written as JSON"; TFK_ENOMEM when b ran out.
 */
int tfk_rj_encode(struct tfk_buf *b, enum tfk_rj_format f, int n,
		  const char *const *keys, const struct tfk_tensor *const *out,
		  struct tfk_err *err);

/* Classify and Regress ------------------------------------------------ */

struct tfk_rj_examples {
	char *signature_name;		/* as given; NULL when absent */
	struct tfk_tensor examples;	/* [n] DT_STRING: tf.Examples */
};

enum tfk_rj_method {
	TFK_RJ_CLASSIFY = 1,	/* :classify */
	TFK_RJ_REGRESS = 2	/* :regress */
};

/*
 * Parse a Classify or Regress request body[0..n) (need not end in NUL)
 * into *rq: an object with an optional "signature_name", an optional
 * object "context" and a non-empty list "examples" of objects, each
 * serialized (context merged) into rq->examples. An empty list is a
 * feature with no kind set (its kind cannot be told); a name given in
 * both the context and an example is written once, with the example's
 * value. Pair with tfk_rj_examples_release, also after a failure.
 * Errors (TFK_EINVAL): the JSON ones of tfk_rj_parse, "request: missing
 * 'examples' key", "request: 'examples' must be a non-empty list",
 * "request: 'context' must be an object of features, got a list",
 * "examples[1]: expected an object of features, got 3",
 * "examples[0].x[1]: expected float like examples[0].x[0], got
 * string \"a\" (a feature's values are of one kind)",
 * "context.x[0]: a feature value is a number, a string or {\"b64\":
 * ...} (or a list of them), got a list", "examples[0].x: 1e+300 is out
 * of range for a float feature", "...: invalid base64 in {\"b64\":
 * ...}"; TFK_ENOMEM.
 */
int tfk_rj_parse_examples(struct tfk_rj_examples *rq, const char *body,
			  size_t n, struct tfk_err *err);
void tfk_rj_examples_release(struct tfk_rj_examples *rq);

/*
 * 0 when sig can answer method m: its method_name is m's
 * ("tensorflow/serving/classify" or ".../regress") or predict's, and it
 * has exactly one input, of DT_STRING. Errors (TFK_EINVAL): "signature
 * S: expected method_name tensorflow/serving/regress (or a predict
 * signature), got tensorflow/serving/classify", "signature S: expected
 * one string input (serialized tf.Examples), got input 'x' of float32".
 */
int tfk_rj_check_signature(const struct tfk_sv_signature *sig,
			   enum tfk_rj_method m, struct tfk_err *err);

/*
 * Append the answer of method m for n_ex examples to b, from outputs
 * out[0..n) keyed keys[0..n). Regress: the output "outputs" (or the
 * only one), float, [n_ex] or [n_ex, 1]: {"result": [Y, ...]}.
 * Classify: "classes" (string) and/or "scores" (float), each [n_ex, K]:
 * {"result": [[[LABEL, SCORE] * K] * n_ex]}; without classes the labels
 * are the class indexes as strings ("0", "1", ...), without scores the
 * scores are 0.0. Floats print as tfk_rj_encode's. Errors (TFK_EINVAL;
 * b then holds part of an answer): "regress: the signature has no
 * output 'outputs'; outputs: a, b", "regress: output 'outputs':
 * expected shape [batch_size] or [batch_size, 1], got [2, 3]",
 * "classify: the signature has neither output 'classes' nor 'scores';
 * ...", "classify: output 'scores': expected shape [2, num_classes],
 * got [2]", "classify: 3 classes but 2 scores per example", dtype
 * mismatches; TFK_ENOMEM.
 */
/*
 * The outputs TF Serving's rules above take for a result (shared with
 * the gRPC front end): regress, *a the value tensor ([N] or [N, 1]
 * float); classify, *a "classes" ([N, K] string, or NULL) and *b
 * "scores" ([N, K] float, or NULL), one at least. TFK_EINVAL with the
 * messages above otherwise.
 */
int tfk_rj_result_outputs(enum tfk_rj_method m, int n,
			  const char *const *keys,
			  const struct tfk_tensor *const *out, int64_t n_ex,
			  const struct tfk_tensor **a,
			  const struct tfk_tensor **b, struct tfk_err *err);
int tfk_rj_encode_result(struct tfk_buf *b, enum tfk_rj_method m, int n,
			 const char *const *keys,
			 const struct tfk_tensor *const *out, int64_t n_ex,
			 struct tfk_err *err);

/* Append {"error": msg} to b. */
void tfk_rj_error(struct tfk_buf *b, const char *msg);

/*
 * Append TF Serving's GetModelMetadata response for version of model
 * name served by s:
 *   {"model_spec": {"name": N, "signature_name": "", "version": "V"},
 *    "metadata": {"signature_def": {"signature_def": {KEY: {"inputs":
 *    {K: {"dtype": "DT_FLOAT", "tensor_shape": {"dim": [{"size": "-1",
 *    "name": ""}], "unknown_rank": false}, "name": "x:0"}}, "outputs":
 *    {...}, "method_name": "..."}}}}}
 * (protobuf's JSON mapping with default fields printed: int64 sizes as
 * strings), every signature of s in key order.
 */
void tfk_rj_metadata(struct tfk_buf *b, const char *name, int64_t version,
		     const struct tfk_servable *s);

#endif
