/*
 * t-restjson.c - TF Serving's REST JSON <-> tensors (model/restjson.h):
 * the row and columnar forms of TF Serving's REST API page decoded into
 * tensors of the signature's dtypes, the rules that refuse, and the
 * responses written in TF Serving's number form.
 */
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
	return tap_done();
}
