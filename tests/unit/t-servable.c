/*
 * t-servable: the model API (model/servable.h) on TensorFlow-written
 * fixtures, whose README gives the expected values: half_plus_two
 * (y = 0.5 x + 2; regress_x2_to_y3: 0.5 x2 + 3), hello_world float and
 * int8 (about sin x). Runners on four threads over one servable must
 * each get their own inputs' answers.
 */
#include "model/servable.h"

#include "format/tflite.h"
#include "tap.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

#define TF1 "savedmodel/half_plus_two_cpu_tf1/00000123"

static void vec(struct tfk_tensor *t, const float *v, int64_t n, int rank2)
{
	int64_t shape[2] = { n, 1 };

	tfk_tensor_init(t, TFK_DT_FLOAT, rank2 ? 2 : 1, shape, NULL);
	memcpy(t->data, v, (size_t)n * sizeof(float));
}

static void test_signatures(struct tfk_servable *s)
{
	const struct tfk_sv_signature *sig;
	struct tfk_err err;
	int i, n = tfk_servable_n_signatures(s);

	is_int(tfk_servable_kind(s), TFK_SERVABLE_SAVEDMODEL, "a directory "
	       "is a SavedModel");
	is_int(n, 5, "half_plus_two has 5 signatures");
	for (i = 1; i < n; i++)
		ok(strcmp(tfk_servable_signature(s, i - 1)->key,
			  tfk_servable_signature(s, i)->key) < 0,
		   "signatures sorted by key (%d)", i);
	sig = tfk_servable_find(s, NULL, &err);
	ok(sig && !strcmp(sig->key, "serving_default"), "NULL key is "
	   "serving_default");
	is_str(sig->method_name, "tensorflow/serving/predict", "method");
	is_int(sig->n_inputs, 1, "one input");
	is_str(sig->inputs[0].key, "x", "input key");
	is_str(sig->inputs[0].name, "x:0", "input tensor");
	is_int(sig->inputs[0].dtype, TFK_DT_FLOAT, "input dtype");
	ok(sig->inputs[0].rank == 2 && sig->inputs[0].shape[0] == -1 &&
	   sig->inputs[0].shape[1] == 1, "input shape [-1, 1]");
	is_str(sig->outputs[0].key, "y", "output key");
	ok(!tfk_servable_find(s, "nope", &err), "unknown signature");
	ok(strstr(err.msg, "could not find signature \"nope\"; signatures "
		  "are: classify_x_to_y, ") != NULL, "message lists them: %s",
	   err.msg);
}

static void test_run(struct tfk_servable *s)
{
	const struct tfk_sv_signature *sig = tfk_servable_find(s, NULL, NULL);
	const float x3[] = { 2, 3, 4 }, x1[] = { 10 };
	const struct tfk_tensor *out[1];
	struct tfk_runner *r = NULL;
	struct tfk_bench_opts bo = { 2, 5, 0, 0 };
	struct tfk_bench_result br;
	struct tfk_tensor in;
	struct tfk_err err;
	const float *y;

	ok(!tfk_runner_new(&r, s, sig, NULL, -1, NULL, &err), "runner: %s",
	   err.msg);
	is_int(tfk_runner_n_inputs(r), 1, "runner inputs");
	is_int(tfk_runner_n_outputs(r), 1, "runner outputs");
	vec(&in, x3, 3, 1);
	ok(!tfk_runner_run(r, &in, out, &err), "run [3, 1]: %s", err.msg);
	y = out[0]->data;
	ok(out[0]->shape[0] == 3 && y[0] == 3.0f && y[1] == 3.5f &&
	   y[2] == 4.0f, "y = 0.5 x + 2: %g %g %g", y[0], y[1], y[2]);
	tfk_tensor_release(&in);
	vec(&in, x1, 1, 1);
	ok(!tfk_runner_run(r, &in, out, &err), "run again, batch 1");
	y = out[0]->data;
	ok(out[0]->shape[0] == 1 && y[0] == 7.0f, "batch 1: %g", y[0]);
	ok(!tfk_runner_bench(r, &in, &bo, &br, &err), "bench");
	is_int(br.runs, 5, "bench: 5 timed runs");
	ok(br.lat.min > 0 && br.lat.min <= br.lat.median &&
	   br.lat.median <= br.lat.p99, "bench latencies ordered");
	tfk_tensor_release(&in);
	vec(&in, x3, 3, 0);
	ok(tfk_runner_run(r, &in, out, &err) == TFK_EINVAL, "rank 1 refused");
	is_str(err.msg, "input 'x': expected float32 [?, 1], got shape [3]",
	       "shape message");
	tfk_tensor_release(&in);
	tfk_runner_free(r);
}

static void test_fed(struct tfk_servable *s)
{
	const struct tfk_sv_signature *sig = tfk_servable_find(
		s, "regress_x_to_y", NULL);
	const char *bad[] = { "z" }, *fed[] = { "inputs" };
	struct tfk_runner *r = NULL;
	struct tfk_err err;

	ok(sig != NULL, "regress_x_to_y");
	ok(tfk_runner_new(&r, s, tfk_servable_find(s, NULL, NULL), bad, 1,
			  NULL, &err) == TFK_EINVAL && !r, "unknown key");
	is_str(err.msg, "\"z\" is not a valid input key of signature "
	       "serving_default; valid keys: \"x\"", "its message");
	ok(!tfk_runner_new(&r, s, sig, fed, 1, NULL, &err), "fed by key: %s",
	   err.msg);
	is_int(tfk_runner_input(r, 0)->dtype, TFK_DT_STRING, "regress takes "
	       "serialized Examples");
	tfk_runner_free(r);
}

struct job {
	struct tfk_servable *s;
	float x;
	int runs, good;
};

static void *worker(void *p)
{
	struct job *j = p;
	const struct tfk_sv_signature *sig = tfk_servable_find(j->s, NULL,
							       NULL);
	const struct tfk_tensor *out[1];
	struct tfk_runner *r = NULL;
	struct tfk_tensor in;
	struct tfk_err err;
	int k;

	if (tfk_runner_new(&r, j->s, sig, NULL, -1, NULL, &err))
		return NULL;
	vec(&in, &j->x, 1, 1);
	for (k = 0; k < j->runs; k++)
		if (!tfk_runner_run(r, &in, out, &err) &&
		    ((const float *)out[0]->data)[0] == 0.5f * j->x + 2)
			j->good++;
	tfk_tensor_release(&in);
	tfk_runner_free(r);
	return NULL;
}

static void test_threads(struct tfk_servable *s)
{
	pthread_t t[4];
	struct job j[4];
	int i;

	for (i = 0; i < 4; i++) {
		j[i].s = s;
		j[i].x = (float)(i * 10);
		j[i].runs = 300;
		j[i].good = 0;
		pthread_create(&t[i], NULL, worker, &j[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		is_int(j[i].good, 300, "thread %d: every run its own answer", i);
	}
}

static void test_tflite(void)
{
	struct tfk_servable_opts so = { NULL, 0 };
	struct tfk_servable *s = NULL;
	const struct tfk_sv_signature *sig;
	const struct tfk_tensor *out[1];
	struct tfk_runner *r = NULL;
	struct tfk_tensor in;
	struct tfk_err err;
	const float x[] = { 0, 1, 3, 5 };
	const float want[] = { 0.0264056f, 0.8630436f, 0.1276463f,
			       -0.9565187f };
	float y;
	int i, q;

	ok(!tfk_servable_open(&s, tap_fixture("tflite/hello_world/"
					      "hello_world_float.tflite"),
			      &so, &err), "open float .tflite: %s", err.msg);
	is_int(tfk_servable_kind(s), TFK_SERVABLE_TFLITE, "a file is a "
	       ".tflite");
	sig = tfk_servable_find(s, NULL, &err);
	ok(sig != NULL, "its only signature");
	ok(!tfk_runner_new(&r, s, sig, NULL, -1, NULL, &err), "runner: %s",
	   err.msg);
	for (i = 0; i < 4; i++) {
		vec(&in, &x[i], 1, 1);
		ok(!tfk_runner_run(r, &in, out, &err), "run x=%g: %s", x[i],
		   err.msg);
		y = ((const float *)out[0]->data)[0];
		ok(fabsf(y - want[i]) < 1e-6f, "x=%g: %.7f (reference %.7f)",
		   x[i], y, want[i]);
		tfk_tensor_release(&in);
	}
	tfk_runner_free(r);
	tfk_servable_close(s);

	ok(!tfk_servable_open(&s, tap_fixture("tflite/hello_world/"
					      "hello_world_int8.tflite"),
			      &so, &err), "open int8 .tflite: %s", err.msg);
	sig = tfk_servable_find(s, NULL, &err);
	ok(tfk_servable_is_int8(s, sig), "int8 interpreter");
	ok(!tfk_runner_new(&r, s, sig, NULL, -1, NULL, &err), "runner: %s",
	   err.msg);
	y = 1.57f;
	vec(&in, &y, 1, 1);
	ok(!tfk_runner_run(r, &in, out, &err), "run: %s", err.msg);
	q = ((const int8_t *)out[0]->data)[0];
	ok(fabs((q - 5) * 0.008290956728160381 - sin(1.57)) < 0.05,
	   "sin(1.57) from int8 %d", q);
	tfk_tensor_release(&in);
	tfk_runner_free(r);
	tfk_servable_close(s);
}

static void test_convert(void)
{
	struct tfk_sv_tensor w = { "x", "x:0", TFK_DT_UINT8, 1, { -1 }, -1,
				   -1 };
	struct tfk_tensor t;
	struct tfk_err err;
	int64_t n = 2;

	tfk_tensor_init(&t, TFK_DT_INT64, 1, &n, NULL);
	((int64_t *)t.data)[0] = 7;
	((int64_t *)t.data)[1] = 300;
	ok(tfk_sv_convert(&t, &w, &err) == TFK_EINVAL, "300 as uint8");
	is_str(err.msg, "input 'x': value 300 out of range for uint8",
	       "range message");
	w.dtype = TFK_DT_FLOAT;
	ok(!tfk_sv_convert(&t, &w, &err) && t.dtype == TFK_DT_FLOAT &&
	   ((float *)t.data)[1] == 300.0f, "int64 to float32");
	w.dtype = TFK_DT_INT32;
	ok(tfk_sv_convert(&t, &w, &err) == TFK_EINVAL, "float to int");
	is_str(err.msg, "input 'x': expected int32, got float32 values",
	       "never floats to integers");
	tfk_tensor_release(&t);

	/* float16 feeds float32: 0x3c00 is 1.0, 0xc500 -5.0 */
	tfk_tensor_init(&t, TFK_DT_HALF, 1, &n, NULL);
	((uint16_t *)t.data)[0] = 0x3c00;
	((uint16_t *)t.data)[1] = 0xc500;
	w.dtype = TFK_DT_FLOAT;
	ok(!tfk_sv_convert(&t, &w, &err) && t.dtype == TFK_DT_FLOAT &&
	   ((float *)t.data)[0] == 1.0f && ((float *)t.data)[1] == -5.0f,
	   "float16 to float32");
	tfk_tensor_release(&t);

	/* a .tflite INT8 input: integers become its int8 values */
	w.dtype = TFK_DT_INT8;
	w.tfl_type = TFK_TFL_INT8;
	tfk_tensor_init(&t, TFK_DT_INT16, 1, &n, NULL);
	((int16_t *)t.data)[0] = -128;
	((int16_t *)t.data)[1] = 127;
	ok(!tfk_sv_convert(&t, &w, &err) && t.dtype == TFK_DT_INT8 &&
	   ((int8_t *)t.data)[0] == -128 && ((int8_t *)t.data)[1] == 127,
	   "int16 values for an INT8 tensor become int8");
	tfk_tensor_release(&t);
	tfk_tensor_init(&t, TFK_DT_UINT8, 1, &n, NULL);
	((uint8_t *)t.data)[0] = 3;
	((uint8_t *)t.data)[1] = 200;
	ok(tfk_sv_convert(&t, &w, &err) == TFK_EINVAL, "uint8 200 as INT8");
	is_str(err.msg, "input 'x': value 200 out of range for int8",
	       "INT8 range message");
	tfk_tensor_release(&t);
	tfk_tensor_init(&t, TFK_DT_HALF, 1, &n, NULL);
	((uint16_t *)t.data)[0] = 0x3c00;
	((uint16_t *)t.data)[1] = 0;
	ok(!tfk_sv_convert(&t, &w, &err) && t.dtype == TFK_DT_FLOAT &&
	   ((float *)t.data)[0] == 1.0f, "float16 for an INT8 tensor: "
	   "float32, for the interpreter to quantize");
	tfk_tensor_release(&t);
}

int main(void)
{
	struct tfk_servable *s = NULL;
	struct tfk_err err;

	ok(!tfk_servable_open(&s, tap_fixture(TF1), NULL, &err), "open: %s",
	   err.msg);
	test_signatures(s);
	test_run(s);
	test_fed(s);
	test_threads(s);
	tfk_servable_close(s);
	ok(tfk_servable_open(&s, tap_fixture("savedmodel/nope"), NULL,
			     &err) < 0 && !s, "missing directory");
	test_tflite();
	test_convert();
	return tap_done();
}
