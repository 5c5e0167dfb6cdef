/*
 * t-restjson.c - TF Serving's REST JSON <-> tensors (model/restjson.h):
 * the row and columnar forms of TF Serving's REST API page decoded into
 * tensors of the signature's dtypes, the rules that refuse, and the
 * responses written in TF Serving's number form.
 */
#include "example/example.h"
#include "model/restjson.h"
#include "tap.h"

#include <math.h>
#include <string.h>

static const struct tfk_sv_tensor ins2[] = {
	{ "a", "a:0", TFK_DT_FLOAT, 1, { -1 }, -1, -1 },
	{ "s", "s:0", TFK_DT_STRING, 1, { -1 }, -1, -1 },
};
static const struct tfk_sv_tensor ins1[] = {
	{ "x", "x:0", TFK_DT_INT64, 2, { -1, 2 }, -1, -1 },
};
static const struct tfk_sv_signature two = { "two", "m", 2, 0, ins2, NULL };
static const struct tfk_sv_signature one = { "one", "m", 1, 0, ins1, NULL };

/* Decode body for sig: 0 or the error message into msg. */
static int dec(const char *body, const struct tfk_sv_signature *sig,
	       struct tfk_tensor *in, char *msg)
{
	struct tfk_rj_request rq;
	struct tfk_err err;
	int rc;

	msg[0] = 0;
	rc = tfk_rj_parse(&rq, body, strlen(body), &err);
	if (!rc)
		rc = tfk_rj_inputs(&rq, sig, in, &err);
	if (rc)
		strcpy(msg, err.msg);
	tfk_rj_release(&rq);
	return rc;
}

static void refused(const char *body, const struct tfk_sv_signature *sig,
		    const char *part)
{
	struct tfk_tensor in[2];
	char msg[TFK_ERR_MSG_MAX];
	int rc = dec(body, sig, in, msg);

	ok(rc == TFK_EINVAL && strstr(msg, part), "%s: refused (%s)", body,
	   msg);
}

static void encoded(enum tfk_rj_format f, int n, const char *const *keys,
		    const struct tfk_tensor *const *t, const char *want)
{
	struct tfk_buf b;
	struct tfk_err err;
	int rc;

	tfk_buf_init(&b);
	rc = tfk_rj_encode(&b, f, n, keys, t, &err);
	tfk_buf_addc(&b, 0);
	ok(rc == 0 && !strcmp((char *)b.data, want), "encode %s (got %s)",
	   want, rc ? err.msg : (char *)b.data);
	tfk_buf_release(&b);
}

/* Parse examples body: 0 or the error message into msg. */
static int dec_ex(const char *body, struct tfk_rj_examples *rq, char *msg)
{
	struct tfk_err err;
	int rc;

	msg[0] = 0;
	rc = tfk_rj_parse_examples(rq, body, strlen(body), &err);
	if (rc)
		strcpy(msg, err.msg);
	return rc;
}

static void ex_refused(const char *body, const char *part)
{
	struct tfk_rj_examples rq;
	char msg[TFK_ERR_MSG_MAX];
	int rc = dec_ex(body, &rq, msg);

	ok(rc == TFK_EINVAL && strstr(msg, part), "%s: refused (%s)", body,
	   msg);
	tfk_rj_examples_release(&rq);
}

/* Example i of rq decoded into ex; 0 or -1. */
static int ex_at(const struct tfk_rj_examples *rq, int64_t i,
		 struct tfk_example *ex)
{
	struct tfk_str s = tfk_tensor_str(&rq->examples, i);
	struct tfk_err err;

	return tfk_example_parse(ex, (const uint8_t *)s.ptr, s.len, &err) ?
		-1 : 0;
}

static void result(enum tfk_rj_method m, int n, const char *const *keys,
		   const struct tfk_tensor *const *t, int64_t n_ex,
		   int want_rc, const char *want)
{
	struct tfk_buf b;
	struct tfk_err err;
	int rc;

	tfk_buf_init(&b);
	rc = tfk_rj_encode_result(&b, m, n, keys, t, n_ex, &err);
	tfk_buf_addc(&b, 0);
	if (want_rc)
		ok(rc == want_rc && strstr(err.msg, want), "result refused: "
		   "%s", rc ? err.msg : "(accepted)");
	else
		ok(rc == 0 && !strcmp((char *)b.data, want), "result %s (got "
		   "%s)", want, rc ? err.msg : (char *)b.data);
	tfk_buf_release(&b);
}

static void test_examples(void)
{
	struct tfk_rj_examples rq;
	struct tfk_example ex;
	const struct tfk_feat *f;
	char msg[TFK_ERR_MSG_MAX];
	float fv[4];
	int64_t iv[4];
	const uint8_t *p;
	size_t len, it;

	tfk_example_init(&ex);
	/* TF Serving's kinds: fraction/exponent float, integer int64,
	 * string and b64 bytes; lists keep their kind */
	is_int(dec_ex("{\"signature_name\": \"s\", \"examples\": [{\"f\": "
		      "1.5, \"e\": 2e0, \"i\": [3, -4], \"s\": \"ab\", "
		      "\"b\": {\"b64\": \"AAE=\"}, \"n\": NaN, "
		      "\"z\": []}]}", &rq, msg), 0, "examples: every kind");
	is_str(rq.signature_name, "s", "signature_name");
	ok(rq.examples.dtype == TFK_DT_STRING && rq.examples.rank == 1 &&
	   rq.examples.shape[0] == 1, "one serialized example, [1] string");
	is_int(ex_at(&rq, 0, &ex), 0, "the example decodes");
	is_int(ex.n_feat, 7, "7 features");
	f = tfk_example_find(&ex, "f");
	ok(f && f->kind == TFK_FEAT_FLOAT && tfk_feat_floats(f, fv, 4) == 1 &&
	   fv[0] == 1.5f, "1.5: float [1.5]");
	f = tfk_example_find(&ex, "e");
	ok(f && f->kind == TFK_FEAT_FLOAT && tfk_feat_floats(f, fv, 4) == 1 &&
	   fv[0] == 2.0f, "2e0: float (an exponent)");
	f = tfk_example_find(&ex, "i");
	ok(f && f->kind == TFK_FEAT_INT64 && tfk_feat_int64s(f, iv, 4) == 2 &&
	   iv[0] == 3 && iv[1] == -4, "[3, -4]: int64 [3, -4]");
	f = tfk_example_find(&ex, "s");
	it = 0;
	ok(f && f->kind == TFK_FEAT_BYTES &&
	   tfk_feat_bytes_next(f, &it, &p, &len) && len == 2 &&
	   !memcmp(p, "ab", 2), "\"ab\": bytes");
	f = tfk_example_find(&ex, "b");
	it = 0;
	ok(f && f->kind == TFK_FEAT_BYTES &&
	   tfk_feat_bytes_next(f, &it, &p, &len) && len == 2 &&
	   p[0] == 0 && p[1] == 1, "{\"b64\": \"AAE=\"}: bytes 00 01");
	f = tfk_example_find(&ex, "n");
	ok(f && f->kind == TFK_FEAT_FLOAT && tfk_feat_floats(f, fv, 4) == 1 &&
	   isnan(fv[0]), "NaN: float");
	f = tfk_example_find(&ex, "z");
	ok(f && f->kind == TFK_FEAT_NONE && f->n == 0, "[]: no kind");
	tfk_rj_examples_release(&rq);

	/* context merged into each example, the example's own winning */
	is_int(dec_ex("{\"context\": {\"x\": 6.0, \"c\": \"k\"}, "
		      "\"examples\": [{\"x\": 1.0}, {\"y\": 2}]}", &rq, msg),
	       0, "context");
	ok(rq.signature_name == NULL && rq.examples.shape[0] == 2,
	   "two examples, no signature_name");
	is_int(ex_at(&rq, 0, &ex), 0, "example 0 decodes");
	f = tfk_example_find(&ex, "x");
	ok(ex.n_feat == 2 && f && tfk_feat_floats(f, fv, 4) == 1 &&
	   fv[0] == 1.0f && tfk_example_find(&ex, "c"),
	   "example 0: its own x = 1.0, and the context's c");
	is_int(ex_at(&rq, 1, &ex), 0, "example 1 decodes");
	f = tfk_example_find(&ex, "x");
	ok(ex.n_feat == 3 && f && tfk_feat_floats(f, fv, 4) == 1 &&
	   fv[0] == 6.0f && tfk_example_find(&ex, "y"),
	   "example 1: y, and the context's x = 6.0 and c");
	tfk_rj_examples_release(&rq);
	is_int(dec_ex("{\"examples\": [{}]}", &rq, msg), 0, "an empty example");
	is_int(ex_at(&rq, 0, &ex), 0, "... decodes");
	is_int(ex.n_feat, 0, "... with no features");
	tfk_rj_examples_release(&rq);
	tfk_example_release(&ex);

	ex_refused("{\"instances\": [1]}", "request: missing 'examples' key");
	ex_refused("{\"examples\": []}", "'examples' must be a non-empty list");
	ex_refused("{\"examples\": {\"x\": 1}}", "must be a non-empty list");
	ex_refused("[1]", "request: expected a JSON object");
	ex_refused("", "the document is empty");
	ex_refused("{\"examples\": [1", "JSON parse error at offset");
	ex_refused("{\"signature_name\": 1, \"examples\": [{}]}",
		   "'signature_name' must be a string");
	ex_refused("{\"context\": [1], \"examples\": [{}]}",
		   "request: 'context' must be an object of features, got a "
		   "list");
	ex_refused("{\"examples\": [{}, 3]}",
		   "examples[1]: expected an object of features, got 3");
	ex_refused("{\"examples\": [{\"x\": [1.0, \"a\"]}]}",
		   "examples[0].x[1]: expected float like "
		   "examples[0].x[0], got string \"a\"");
	ex_refused("{\"examples\": [{\"x\": [1, 2.5]}]}",
		   "examples[0].x[1]: expected int64 like");
	ex_refused("{\"examples\": [{\"x\": [[1.0]]}]}",
		   "examples[0].x[0]: a feature value is a number, a string "
		   "or {\"b64\": ...} (or a list of them), got a list");
	ex_refused("{\"examples\": [{\"x\": true}]}", "got true");
	ex_refused("{\"examples\": [{\"x\": null}]}", "got null");
	ex_refused("{\"examples\": [{\"x\": {\"a\": 1}}]}",
		   "examples[0].x: a feature value");
	ex_refused("{\"examples\": [{\"x\": 1e300}]}",
		   "examples[0].x: 1.0000000000000001e+300 is out of range");
	ex_refused("{\"examples\": [{\"x\": {\"b64\": \"@@\"}}]}",
		   "examples[0].x: invalid base64");
	ex_refused("{\"context\": {\"x\": [1, \"a\"]}, \"examples\": "
		   "[{\"x\": 1}]}", "context.x[1]: expected int64 like");
}

static void test_signatures(void)
{
	static const struct tfk_sv_tensor str_in[] = {
		{ "inputs", "tf_example:0", TFK_DT_STRING, -1, { 0 }, -1, -1 },
	};
	const struct tfk_sv_signature reg = {
		"r", "tensorflow/serving/regress", 1, 0, str_in, NULL };
	const struct tfk_sv_signature pred = {
		"p", "tensorflow/serving/predict", 1, 0, str_in, NULL };
	const struct tfk_sv_signature flt = {
		"f", "tensorflow/serving/regress", 1, 0, ins2, NULL };
	const struct tfk_sv_signature pair = {
		"two", "tensorflow/serving/predict", 2, 0, ins2, NULL };
	struct tfk_err err;

	is_int(tfk_rj_check_signature(&reg, TFK_RJ_REGRESS, &err), 0,
	       "a regress signature answers :regress");
	is_int(tfk_rj_check_signature(&pred, TFK_RJ_CLASSIFY, &err), 0,
	       "a predict signature over a string input answers :classify");
	is_int(tfk_rj_check_signature(&reg, TFK_RJ_CLASSIFY, &err), TFK_EINVAL,
	       "a regress signature does not answer :classify");
	is_str(err.msg, "signature r: expected method_name "
	       "tensorflow/serving/classify (or a predict signature), got "
	       "tensorflow/serving/regress", "... the message");
	is_int(tfk_rj_check_signature(&flt, TFK_RJ_REGRESS, &err), TFK_EINVAL,
	       "a float input is refused");
	is_str(err.msg, "signature f: expected one string input (serialized "
	       "tf.Examples), got input 'a' of float32", "... the message");
	is_int(tfk_rj_check_signature(&pair, TFK_RJ_REGRESS, &err),
	       TFK_EINVAL, "two inputs are refused");
	ok(strstr(err.msg, "got 2 inputs") != NULL, "%s", err.msg);
}

static void test_results(void)
{
	struct tfk_tensor y1, y2, sc, cl, bad;
	const struct tfk_tensor *p[2];
	const char *k_out[] = { "outputs" }, *k_y[] = { "y" };
	const char *k_cs[] = { "classes", "scores" }, *k_s[] = { "scores" };
	const char *k_c[] = { "classes" }, *k_ab[] = { "a", "b" };
	int64_t s1[1] = { 2 }, s2[2] = { 2, 1 }, s22[2] = { 2, 2 };
	struct tfk_err err;

	tfk_tensor_init(&y1, TFK_DT_FLOAT, 1, s1, &err);
	((float *)y1.data)[0] = 3.0f;
	((float *)y1.data)[1] = 0.1f;
	tfk_tensor_init(&y2, TFK_DT_FLOAT, 2, s2, &err);
	((float *)y2.data)[0] = 2.5f;
	((float *)y2.data)[1] = 3.0f;
	tfk_tensor_init(&sc, TFK_DT_FLOAT, 2, s22, &err);
	((float *)sc.data)[0] = 0.25f;
	((float *)sc.data)[1] = 0.75f;
	((float *)sc.data)[2] = 1.0f;
	((float *)sc.data)[3] = 0.0f;
	tfk_tensor_init(&cl, TFK_DT_STRING, 2, s22, &err);
	tfk_tensor_set_str(&cl, 0, "cat", 3, &err);
	tfk_tensor_set_str(&cl, 1, "dog", 3, &err);
	tfk_tensor_set_str(&cl, 2, "cat", 3, &err);
	tfk_tensor_set_str(&cl, 3, "dog", 3, &err);
	tfk_tensor_init(&bad, TFK_DT_FLOAT, 2, s22, &err);

	p[0] = &y1;
	result(TFK_RJ_REGRESS, 1, k_out, p, 2, 0, "{\"result\":[3.0,0.1]}");
	p[0] = &y2;
	result(TFK_RJ_REGRESS, 1, k_y, p, 2, 0, "{\"result\":[2.5,3.0]}");
	p[0] = &bad;
	result(TFK_RJ_REGRESS, 1, k_out, p, 2, TFK_EINVAL,
	       "regress: output 'outputs': expected shape [batch_size] or "
	       "[batch_size, 1], got [2, 2]");
	p[0] = &y1;
	p[1] = &y2;
	result(TFK_RJ_REGRESS, 2, k_ab, p, 2, TFK_EINVAL,
	       "regress: the signature has no output 'outputs'; outputs: a, b");
	p[0] = &y1;
	result(TFK_RJ_REGRESS, 1, k_out, p, 3, TFK_EINVAL,
	       "output 'outputs' has 2 values for 3 examples");
	p[0] = &cl;
	result(TFK_RJ_REGRESS, 1, k_out, p, 2, TFK_EINVAL,
	       "regress: output 'outputs' is string, expected float32");

	p[0] = &cl;
	p[1] = &sc;
	result(TFK_RJ_CLASSIFY, 2, k_cs, p, 2, 0, "{\"result\":"
	       "[[[\"cat\",0.25],[\"dog\",0.75]],[[\"cat\",1.0],"
	       "[\"dog\",0.0]]]}");
	p[0] = &sc;
	result(TFK_RJ_CLASSIFY, 1, k_s, p, 2, 0, "{\"result\":"
	       "[[[\"0\",0.25],[\"1\",0.75]],[[\"0\",1.0],[\"1\",0.0]]]}");
	p[0] = &cl;
	result(TFK_RJ_CLASSIFY, 1, k_c, p, 2, 0, "{\"result\":"
	       "[[[\"cat\",0.0],[\"dog\",0.0]],[[\"cat\",0.0],"
	       "[\"dog\",0.0]]]}");
	p[0] = &y2;
	p[1] = &sc;
	result(TFK_RJ_CLASSIFY, 2, k_cs, p, 2, TFK_EINVAL,
	       "classify: output 'classes' is float32, expected string");
	p[0] = &cl;
	p[1] = &y2;
	result(TFK_RJ_CLASSIFY, 2, k_cs, p, 2, TFK_EINVAL,
	       "classify: 2 classes but 1 scores per example");
	p[0] = &y1;
	result(TFK_RJ_CLASSIFY, 1, k_s, p, 2, TFK_EINVAL,
	       "classify: output 'scores': expected shape [2, num_classes], "
	       "got [2]");
	result(TFK_RJ_CLASSIFY, 1, k_y, p, 2, TFK_EINVAL,
	       "classify: the signature has neither output 'classes' nor "
	       "'scores'; outputs: y");
	tfk_tensor_release(&y1);
	tfk_tensor_release(&y2);
	tfk_tensor_release(&sc);
	tfk_tensor_release(&cl);
	tfk_tensor_release(&bad);
}

int main(void)
{
	struct tfk_tensor in[2], t[3];
	char msg[TFK_ERR_MSG_MAX];
	struct tfk_str s;
	int rc;

	/* row format, a list of objects (TF Serving's REST page) */
	rc = dec("{\"instances\": [{\"a\": 1.5, \"s\": \"hi\"},"
		 " {\"a\": -2, \"s\": {\"b64\": \"AAE=\"}}]}", &two, in, msg);
	is_int(rc, 0, "two inputs in rows (%s)", msg);
	if (!rc) {
		is_int(in[0].dtype, TFK_DT_FLOAT, "a: float32");
		is_int(in[0].rank, 1, "a: [2]");
		is_int(in[0].shape[0], 2, "a: 2 rows");
		ok(((float *)in[0].data)[0] == 1.5f &&
		   ((float *)in[0].data)[1] == -2.0f, "a: 1.5, -2");
		s = tfk_tensor_str(&in[1], 1);
		is_mem(s.ptr, s.len, "\0\1", 2, "s[1]: base64 decoded");
		s = tfk_tensor_str(&in[1], 0);
		is_mem(s.ptr, s.len, "hi", 2, "s[0]: a string");
		tfk_tensor_release(&in[0]);
		tfk_tensor_release(&in[1]);
	}
	/* row format, plain values for one input: stacked [rows, 2] */
	rc = dec("{\"instances\": [[1, 2], [3, -9007199254740993]]}", &one,
		 in, msg);
	is_int(rc, 0, "one input in rows (%s)", msg);
	if (!rc) {
		ok(in[0].rank == 2 && in[0].shape[0] == 2 &&
		   in[0].shape[1] == 2, "x: [2, 2]");
		ok(((int64_t *)in[0].data)[3] == -9007199254740993LL,
		   "int64 kept exactly");
		tfk_tensor_release(&in[0]);
	}
	/* columnar: an object, a plain value, NaN tokens */
	rc = dec("{\"signature_name\": \"two\", \"inputs\": {\"a\": [NaN, "
		 "-Infinity], \"s\": [\"\\u0003\\\"\", \"NaN\"], \"other\": 1}}", &two,
		 in, msg);
	is_int(rc, 0, "columnar object (%s)", msg);
	if (!rc) {
		ok(isnan(((float *)in[0].data)[0]) &&
		   isinf(((float *)in[0].data)[1]), "NaN and -Infinity");
		s = tfk_tensor_str(&in[1], 1);
		is_mem(s.ptr, s.len, "NaN", 3, "\"NaN\" in a string stays");
		s = tfk_tensor_str(&in[1], 0);
		is_mem(s.ptr, s.len, "\3\"", 2, "escapes in strings");
		tfk_tensor_release(&in[0]);
		tfk_tensor_release(&in[1]);
	}
	rc = dec("{\"inputs\": [[7, 8]]}", &one, in, msg);
	is_int(rc, 0, "columnar plain list");
	if (!rc) {
		ok(in[0].rank == 2 && in[0].shape[1] == 2, "[1, 2]");
		tfk_tensor_release(&in[0]);
	}

	refused("{\"instances\": [1.0,", &one, "JSON parse error at offset");
	refused("{\"inputs\": [NaN, 1.0,", &two, "JSON parse error");
	refused("{\"instances\": [{\"a\": 1}]}", &two, "missing input 's'");
	refused("{\"instances\": [{\"a\": 1, \"s\": \"\", \"z\": 1}]}", &two,
		"'z' is not an input of the signature; inputs: a, s");
	refused("{\"instances\": [1.0]}", &two, "a plain list");
	refused("{\"inputs\": [1.0]}", &two, "a plain value or list");
	refused("{\"instances\": [[1, 2], [1]]}", &one,
		"instances[1]: expected shape [2], got [1]");
	refused("{\"inputs\": [[1, 2], [1]]}", &one,
		"inputs[1]: expected 2 values at level 1, got 1");
	refused("{\"inputs\": [[1, 2], 3]}", &one, "a value at level 1");
	refused("{\"inputs\": [[1.5, 2]]}", &one,
		"inputs[0][0]: expected int64, got 1.5");
	refused("{\"inputs\": {\"a\": [16777216], \"s\": [\"\"]}}", &two,
		"without loss of precision");
	refused("{\"inputs\": {\"a\": [1e39], \"s\": [\"\"]}}", &two,
		"without loss of precision");
	refused("{\"inputs\": {\"a\": [1], \"s\": [1]}}", &two,
		"inputs.s[0]: expected string or {\"b64\": ...}, got 1");
	refused("{\"inputs\": {\"a\": [1], \"s\": [{\"b64\": \"A\"}]}}", &two,
		"invalid base64");
	refused("{\"inputs\": [[[[[[[[[[1]]]]]]]]]]}", &one, "nested deeper");
	refused("{\"instances\": {}}", &one, "non-empty list");

	/* encoding: TF Serving's number form, row and columnar */
	{
		static const char *k1[] = { "y" }, *k2[] = { "z", "a_bytes" };
		const struct tfk_tensor *p[2] = { &t[0], &t[1] };
		int64_t sh[2] = { 3, 1 };

		tfk_tensor_init(&t[0], TFK_DT_FLOAT, 2, sh, NULL);
		((float *)t[0].data)[0] = 0.1f;
		((float *)t[0].data)[1] = 3.0f;
		((float *)t[0].data)[2] = 1.0f / 3;
		encoded(TFK_RJ_ROW, 1, k1, p,
			"{\"predictions\":[[0.1],[3.0],[0.333333343]]}");
		encoded(TFK_RJ_COLUMNAR, 1, k1, p,
			"{\"outputs\":[[0.1],[3.0],[0.333333343]]}");
		sh[1] = 0;
		tfk_tensor_init(&t[1], TFK_DT_STRING, 1, sh, NULL);
		tfk_tensor_set_str(&t[1], 0, "ok", 2, NULL);
		tfk_tensor_set_str(&t[1], 2, "\xff", 1, NULL);
		p[0] = &t[1];
		p[1] = &t[1];
		encoded(TFK_RJ_ROW, 2, k2, p,
			"{\"predictions\":[{\"a_bytes\":{\"b64\":\"b2s=\"},"
			"\"z\":\"ok\"},{\"a_bytes\":{\"b64\":\"\"},\"z\":\"\"},"
			"{\"a_bytes\":{\"b64\":\"/w==\"},\"z\":{\"b64\":\"/w==\"}}]}");
		tfk_tensor_init(&t[2], TFK_DT_DOUBLE, 0, sh, NULL);
		((double *)t[2].data)[0] = 1e300;
		p[0] = &t[2];
		encoded(TFK_RJ_COLUMNAR, 1, k1, p, "{\"outputs\":1e+300}");
		{
			struct tfk_buf b;
			struct tfk_err err;

			tfk_buf_init(&b);
			is_int(tfk_rj_encode(&b, TFK_RJ_ROW, 1, k1, p, &err),
			       TFK_EINVAL, "a scalar in the row format");
			ok(strstr(err.msg, "is a scalar") != NULL, "%s",
			   err.msg);
			tfk_buf_release(&b);
		}
		tfk_tensor_release(&t[0]);
		tfk_tensor_release(&t[1]);
		tfk_tensor_release(&t[2]);
	}
	test_examples();
	test_signatures();
	test_results();
	return tap_done();
}
