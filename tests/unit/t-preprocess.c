/*
 * t-preprocess: the Keras preprocessing front end (lib/nn/preprocess.h)
 * and the image ops (lib/kernels/cpu/preprocess.c): spec errors with
 * their JSON paths, the graphs layers expand to, values against the
 * layers' documented formulas (Rescaling x*scale+offset, Normalization
 * (x-mean)/max(sqrt(var),1e-7) and its inverse), exact rotations by a
 * half turn, flips, resize shapes, the RNG key contract, adapt write-back
 * and failed allocations.
 */
#include "tap.h"

#include "graph/exec.h"
#include "graph/graph.h"
#include "graph/op.h"
#include "nn/preprocess.h"
#include "util/alloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct tfk_prep *parse(const char *s, struct tfk_err *err, int *rc)
{
	struct tfk_prep *p;

	*rc = tfk_prep_parse(&p, "s.json", s, strlen(s), err);
	return p;
}

static void spec_errors(void)
{
	static const struct {
		const char *spec, *want;
	} cases[] = {
		{ "[]", "s.json: expected an object" },
		{ "{\"feature\": {}}", "s.json: feature: unknown key" },
		{ "{\"features\": {}}", "features: expected an object naming" },
		{ "{\"features\": {\"x\": 3}}", "features.x: expected a list" },
		{ "{\"features\": {\"x\": [3]}}", "features.x[0]: expected a "
		  "layer object" },
		{ "{\"features\": {\"x\": [{\"class_name\": \"Dense\"}]}}",
		  "features.x[0]: unknown layer class 'Dense'" },
		{ "{\"features\": {\"x\": [{\"class_name\": "
		  "\"TextVectorization\", \"config\": {\"output_mode\": "
		  "\"one_hot\"}}]}}", "features.x[0].config.output_mode: "
		  "expected int, multi_hot, count or tf_idf" },
		{ "{\"features\": {\"x\": [{\"class_name\": \"Hashing\"}]}}",
		  "features.x[0].config.num_bins: expected an integer" },
		{ "{\"features\": {\"x\": [{\"class_name\": \"StringLookup\", "
		  "\"config\": {\"vocabulary\": null, \"num_oov_indices\": "
		  "-1}}]}}", "config.num_oov_indices: expected an integer" },
		{ "{\"features\": {\"x\": [{\"class_name\": "
		  "\"Discretization\", \"config\": {\"bin_boundaries\": "
		  "null}}]}}", "config.num_bins: expected an integer in "
		  "1..16777216 when bin_boundaries is null" },
		{ "{\"features\": {\"x\": [{\"class_name\": \"StringLookup\", "
		  "\"config\": {\"vocabulary\": [\"a\", \"a\"]}}]}}",
		  "features.x[0].config.vocabulary: " },
		{ "{\"features\": {\"x\": [{\"class_name\": \"IntegerLookup\","
		  " \"config\": {\"vocabulary\": [\"a\"]}}]}}",
		  "config.vocabulary: expected a list of integers" },
		{ "{\"features\": {\"x\": [{\"class_name\": \"Discretization\","
		  " \"config\": {\"bin_boundaries\": [1, 0]}}]}}",
		  "config.bin_boundaries: expected non-decreasing" },
		{ "{\"features\": {\"x\": [{\"class_name\": "
		  "\"CategoryEncoding\", \"config\": {\"num_tokens\": 3, "
		  "\"output_mode\": \"int\"}}]}}", "config.output_mode: "
		  "expected one_hot, multi_hot or count" },
		{ "{\"features\": {\"x\": [{\"class_name\": \"Rescaling\", "
		  "\"config\": {}}]}}", "features.x[0].config.scale: expected "
		  "a number or a list" },
		{ "{\"features\": {\"x\": [{\"class_name\": \"Rescaling\", "
		  "\"config\": {\"scale\": 1, \"bias\": 2}}]}}",
		  "features.x[0].config.bias: unknown config key" },
		{ "{\"features\": {\"x\": [{\"class_name\": \"Rescaling\", "
		  "\"config\": {\"scale\": 1}, \"extra\": 1}]}}",
		  "features.x[0].extra: unknown key" },
		{ "{\"features\": {\"x\": {\"layers\": [], \"shape\": [0]}}}",
		  "features.x.shape[0]: expected an integer" },
		{ "{\"features\": {\"x\": {\"layers\": [{\"class_name\": "
		  "\"RandomZoom\", \"config\": {\"height_factor\": [0.2, "
		  "0.1]}}]}}}", "features.x.layers[0].config.height_factor: "
		  "lower bound above upper" },
		{ "{\"features\": {\"x\": [{\"class_name\": \"Resizing\", "
		  "\"config\": {\"height\": 2, \"width\": 2, \"antialias\": "
		  "true}}]}}", "config.antialias: true is not supported" },
		{ "{\"features\": {\"x\": [{\"class_name\": \"Resizing\", "
		  "\"config\": {\"height\": 2, \"width\": 2, \"interpolation\":"
		  " \"lanczos3\"}}]}}", "config.interpolation: expected "
		  "bilinear" },
		{ "{\"features\": {\"x\": [{\"class_name\": \"RandomFlip\", "
		  "\"config\": {\"data_format\": \"channels_first\"}}]}}",
		  "config.data_format: only channels_last" },
		{ "{\"features\": {\"x\": [{\"class_name\": \"Normalization\","
		  " \"config\": {\"axis\": 1}}]}}", "config.axis: only -1" },
		{ "{\"features\": {\"x\": [{\"class_name\": \"Normalization\","
		  " \"config\": {\"mean\": [1]}}]}}", "mean and variance must "
		  "be given together" },
		{ "{\"features\": {\"x\": [{\"class_name\": \"Normalization\","
		  " \"config\": {\"mean\": 1, \"variance\": -1}}]}}",
		  "config.variance: expected values >= 0" },
		{ "{\"features\": {\"x\": [{\"class_name\": \"RandomFlip\"},"
		  "{\"class_name\": \"DecodeImage\"}]}}", "features.x[1]: "
		  "DecodeImage must be the first layer" },
		{ "{\"features\": {\"x\": [], \"y\": {\"layers\": [], "
		  "\"output\": \"x\"}}}", "features.y: output 'x' is also" },
		{ "{\"features\": {\"x\": [], \"x\": []}}", "s.json:1:" },
		/* an empty key once looped forever (fuzz-mapspec) */
		{ "{\"features\": {\"x\": [{\"class_name\": \"RandomFlip\", "
		  "\"config\": {\"\": 1}}]}}", "features.x[0].config.: "
		  "unknown config key" },
	};
	struct tfk_err err;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tfk_prep *p = parse(cases[i].spec, &err, &rc);

		ok(rc == TFK_EINVAL && !p && strstr(err.msg, cases[i].want),
		   "spec error %zu: %s", i, cases[i].want);
		if (!strstr(err.msg, cases[i].want))
			tap_diag("got: %s", err.msg);
	}
}

/* Build spec for one float feature "x" of shape, run one record. */
static int run1(const char *spec, enum tfk_dtype dt, int rank,
		const int64_t *shape, const void *data, uint64_t seed,
		uint64_t step, struct tfk_tensor *out, struct tfk_err *err)
{
	struct tfk_prep *p;
	struct tfk_graph *g = NULL;
	struct tfk_exec *x = NULL;
	struct tfk_exec_opts o = { NULL, seed, 1 };
	struct tfk_tensor in;
	const struct tfk_tensor *got;
	const char *feed, *fetch;
	int rc;

	rc = tfk_prep_parse(&p, "s.json", spec, strlen(spec), err);
	if (rc)
		return rc;
	feed = tfk_prep_input(p, 0)->feed;
	fetch = tfk_prep_input(p, 0)->fetch;
	rc = tfk_graph_new(&g, err);
	if (!rc)
		rc = tfk_prep_build(p, g, &dt, err);
	if (!rc)
		rc = tfk_exec_new(&x, g, &feed, 1, &fetch, 1, &o, err);
	if (!rc) {
		int64_t n;

		tfk_shape_numel(rank, shape, 0, &n, err);
		rc = tfk_tensor_init_view(&in, dt, rank, shape, (void *)data,
					  (size_t)n * tfk_dtype_size(dt),
					  TFK_OWN_BORROWED, err);
	}
	if (!rc)
		rc = tfk_exec_run(x, &in, step, &got, err);
	if (!rc)
		rc = tfk_tensor_copy(out, got, err);
	tfk_exec_free(x);
	tfk_graph_free(g);
	tfk_prep_free(p);
	return rc;
}

#define X(layers) "{\"features\": {\"x\": {\"layers\": [" layers "]" \
	", \"shape\": [2, 3, 2]}}}"

static void values(void)
{
	static const int64_t shape[3] = { 2, 3, 2 };
	float v[12], *o;
	uint8_t u[12];
	struct tfk_tensor out;
	struct tfk_err err;
	int i, rc, good;

	for (i = 0; i < 12; i++) {
		v[i] = (float)(i * 1.5 - 4);
		u[i] = (uint8_t)(i * 20 + 3);
	}
	rc = run1(X("{\"class_name\": \"Rescaling\", \"config\": {\"scale\":"
		    " [0.5, 3], \"offset\": -1, \"name\": \"r\"}}"),
		  TFK_DT_UINT8, 3, shape, u, 0, 0, &out, &err);
	good = !rc && out.dtype == TFK_DT_FLOAT && out.rank == 3;
	for (i = 0; good && i < 12; i++)
		good = ((float *)out.data)[i] ==
			(float)u[i] * (i % 2 ? 3.0f : 0.5f) + -1.0f;
	ok(good, "Rescaling uint8 per channel: x * scale + offset, float32");
	tfk_tensor_release(&out);

	rc = run1(X("{\"class_name\": \"Normalization\", \"config\": "
		    "{\"axis\": -1, \"mean\": [1, -2], \"variance\": [4, 0]}}"),
		  TFK_DT_FLOAT, 3, shape, v, 0, 0, &out, &err);
	good = !rc;
	for (i = 0; good && i < 12; i++) {
		double want = i % 2 ? (v[i] + 2) / 1e-7 : (v[i] - 1) / 2.0;

		good = fabs(((float *)out.data)[i] - want) <=
			1e-6 * fabs(want) + 1e-6;
	}
	ok(good, "Normalization: (x - mean) / max(sqrt(var), 1e-7)");
	tfk_tensor_release(&out);

	rc = run1(X("{\"class_name\": \"Normalization\", \"config\": "
		    "{\"axis\": null, \"mean\": 2, \"variance\": 9, "
		    "\"invert\": true}}"),
		  TFK_DT_FLOAT, 3, shape, v, 0, 0, &out, &err);
	good = !rc;
	for (i = 0; good && i < 12; i++)
		good = fabsf(((float *)out.data)[i] - (2 + v[i] * 3)) < 1e-5f;
	ok(good, "Normalization invert, axis null: mean + x * sqrt(var)");
	tfk_tensor_release(&out);

	/* Half a turn about the centre is exact up to the float32 sin/cos
	 * rounding: out(y, x) = in(h-1-y, w-1-x). */
	rc = run1(X("{\"class_name\": \"RandomRotation\", \"config\": "
		    "{\"factor\": [0.5, 0.5], \"fill_mode\": \"constant\"}}"),
		  TFK_DT_FLOAT, 3, shape, v, 1, 0, &out, &err);
	o = out.data;
	good = !rc;
	for (i = 0; good && i < 12; i++) {
		int y = i / 6, x = i / 2 % 3, c = i % 2;

		good = fabsf(o[i] - v[((1 - y) * 3 + (2 - x)) * 2 + c]) < 1e-3f;
	}
	ok(good, "RandomRotation by exactly 180 degrees");
	tfk_tensor_release(&out);

	rc = run1(X("{\"class_name\": \"Resizing\", \"config\": {\"height\":"
		    " 5, \"width\": 7, \"interpolation\": \"nearest\"}}"),
		  TFK_DT_UINT8, 3, shape, u, 0, 0, &out, &err);
	ok(!rc && out.rank == 3 && out.shape[0] == 5 && out.shape[1] == 7 &&
	   out.shape[2] == 2 && ((float *)out.data)[0] == u[0] &&
	   ((float *)out.data)[5 * 7 * 2 - 1] == u[11],
	   "Resizing nearest: shape [5, 7, 2], corners kept");
	tfk_tensor_release(&out);

	rc = run1(X("{\"class_name\": \"Resizing\", \"config\": {\"height\":"
		    " 5, \"width\": 7}}"),
		  TFK_DT_FLOAT, 1, (int64_t[]){ 12 }, v, 0, 0, &out, &err);
	ok(rc == TFK_EINVAL, "a feed of another rank than the spec's shape "
	   "is refused by the executor");
}

/* RandomFlip vertical: identical or mirrored, by the key of (seed, step)
 * only; both outcomes occur over steps. */
static void flips(void)
{
	static const int64_t shape[3] = { 2, 3, 2 };
	const char *spec = X("{\"class_name\": \"RandomFlip\", \"config\": "
			     "{\"mode\": \"vertical\", \"seed\": 3}}");
	float v[12];
	struct tfk_tensor a, b;
	struct tfk_err err;
	int i, step, n_flip = 0, n_same = 0, bad = 0, rc;

	for (i = 0; i < 12; i++)
		v[i] = (float)i;
	for (step = 0; step < 40; step++) {
		float *o;
		int same = 1, flip = 1;

		rc = run1(spec, TFK_DT_FLOAT, 3, shape, v, 5, (uint64_t)step,
			  &a, &err);
		rc |= run1(spec, TFK_DT_FLOAT, 3, shape, v, 5, (uint64_t)step,
			   &b, &err);
		if (rc || !tfk_tensor_equal(&a, &b))
			bad++;
		o = a.data;
		for (i = 0; !rc && i < 12; i++) {
			same &= o[i] == v[i];
			flip &= o[i] == v[(i + 6) % 12];
		}
		n_same += same;
		n_flip += flip;
		bad += same == flip;
		tfk_tensor_release(&a);
		tfk_tensor_release(&b);
	}
	ok(!bad && n_same > 5 && n_flip > 5, "RandomFlip vertical: same "
	   "(seed, step) same result; %d same, %d flipped of 40", n_same,
	   n_flip);
}

static void registry(void)
{
	static const char *const random_ops[] = { "RandomCrop", "RandomFlip",
		"RandomRotation", "RandomTranslation", "RandomZoom",
		"RandomContrast", NULL };
	int i, good = 1;

	for (i = 0; random_ops[i]; i++) {
		const struct tfk_op_def *d = tfk_op_find(random_ops[i]);

		good &= d && (d->flags & TFK_OP_RANDOM);
	}
	ok(good, "random image ops are registered and flagged random");
	ok(tfk_op_find("ResizeBilinear") && tfk_op_find("ResizeArea") &&
	   tfk_op_find("CenterCrop") &&
	   !(tfk_op_find("CenterCrop")->flags & TFK_OP_RANDOM),
	   "resize ops and CenterCrop are registered");
}

static void adapt(void)
{
	const char *spec = "{\"features\": {\"x\": [{\"class_name\": "
		"\"Rescaling\", \"config\": {\"scale\": 2}}, {\"class_name\": "
		"\"Normalization\", \"config\": {\"mean\": null, \"variance\":"
		" null}}]}}";
	struct tfk_prep *p, *q;
	struct tfk_err err;
	double m[2] = { 1.5, -2 }, var[2] = { 0.25, 4 };
	int c = -1, l = -1, rc;
	char *s;

	rc = tfk_prep_parse(&p, "s.json", spec, strlen(spec), &err);
	ok(!rc && tfk_prep_next_adapt(p, &c, &l) == 1 && c == 0 && l == 1,
	   "the Normalization without statistics needs adapting");
	ok(tfk_prep_adapt_n(p, 0, 1, 2) == 2, "axis -1: one per channel");
	rc = tfk_prep_set_norm(p, 0, 1, m, var, 2, &err);
	s = tfk_prep_dump(p);
	ok(!rc && s && strstr(s, "\"mean\": [\n") &&
	   strstr(s, "1.5") && strstr(s, "-2.0") && strstr(s, "0.25"),
	   "set_norm writes Keras' mean/variance lists into the config");
	rc = s ? tfk_prep_parse(&q, "s2.json", s, strlen(s), &err) : -1;
	ok(!rc && !tfk_prep_next_adapt(q, &c, &l),
	   "the dumped spec parses and needs no more adapting");
	if (!rc)
		tfk_prep_free(q);
	free(s);
	tfk_prep_free(p);
}

/* Lookup and Discretization adapt through the API; expected values by
 * Keras' rules worked by hand (counts high to low, ties by token high to
 * low; mask and OOV tokens never learned) and, for the boundaries,
 * tests/py/textprep.py discretize 4 0.01 100 over 0..99. */
static void adapt_lookups(void)
{
	const char *spec = "{\"features\": {\"s\": [{\"class_name\": "
		"\"StringLookup\", \"config\": {\"vocabulary\": null}}], "
		"\"i\": [{\"class_name\": \"IntegerLookup\", \"config\": "
		"{\"vocabulary\": null, \"mask_token\": 0}}], "
		"\"x\": [{\"class_name\": \"Discretization\", \"config\": "
		"{\"bin_boundaries\": null, \"num_bins\": 4}}]}}";
	static const char *const toks[] = { "b", "a", "b", "c", "a",
					     "[UNK]" };
	static const int64_t ints[] = { 5, 3, 5, 0, 3, 7, -1 };
	struct tfk_prep *p, *q;
	struct tfk_prep_ladapt *la;
	struct tfk_prep_dadapt *da;
	struct tfk_graph *g;
	struct tfk_err err;
	enum tfk_dtype dt[3] = { TFK_DT_STRING, TFK_DT_INT64, TFK_DT_FLOAT };
	float v[100];
	int c = -1, l = -1, rc, k;
	size_t i;
	char *s;

	rc = tfk_prep_parse(&p, "l.json", spec, strlen(spec), &err);
	ok(!rc, "lookups and Discretization without state parse");
	if (rc)
		return;
	rc = tfk_graph_new(&g, &err);
	ok(!rc && tfk_prep_build(p, g, dt, &err) == TFK_EINVAL &&
	   strstr(err.msg, "StringLookup has no vocabulary: run tfk-map "
		  "--adapt first"), "building before adapt is refused");
	if (!rc)
		tfk_graph_free(g);
	k = tfk_prep_next_adapt(p, &c, &l);
	ok(k == TFK_PREP_ADAPT_LOOKUP && c == 0 && l == 0,
	   "the StringLookup needs adapting first");
	rc = tfk_prep_ladapt_new(p, 0, 0, &la, &err);
	for (i = 0; !rc && i < 6; i++)
		rc = tfk_prep_ladapt_add(la, toks[i], strlen(toks[i]), &err);
	if (!rc) {
		tfk_prep_ladapt_end_doc(la);
		rc = tfk_prep_ladapt_finish(la, &err);
	}
	tfk_prep_ladapt_free(la);
	ok(!rc, "StringLookup adapt runs");
	k = tfk_prep_next_adapt(p, &c, &l);
	ok(k == TFK_PREP_ADAPT_LOOKUP && c == 1 && l == 0,
	   "then the IntegerLookup");
	rc = tfk_prep_ladapt_new(p, 1, 0, &la, &err);
	ok(!rc && tfk_prep_ladapt_is_int(la), "integer keys");
	for (i = 0; !rc && i < 7; i++)
		rc = tfk_prep_ladapt_add_int(la, ints[i], &err);
	if (!rc)
		rc = tfk_prep_ladapt_finish(la, &err);
	tfk_prep_ladapt_free(la);
	ok(!rc, "IntegerLookup adapt runs");
	k = tfk_prep_next_adapt(p, &c, &l);
	ok(k == TFK_PREP_ADAPT_DISC && c == 2 && l == 0,
	   "then the Discretization");
	rc = tfk_prep_dadapt_new(p, 2, 0, &da, &err);
	ok(!rc && tfk_prep_dadapt_finish(da, &err) == TFK_EINVAL &&
	   strstr(err.msg, "no values to adapt from"),
	   "Discretization adapt without values is an error");
	for (i = 0; i < 100; i++)
		v[i] = (float)i;
	if (!rc)
		rc = tfk_prep_dadapt_update(da, v, 100, &err);
	if (!rc)
		rc = tfk_prep_dadapt_finish(da, &err);
	tfk_prep_dadapt_free(da);
	ok(!rc && !tfk_prep_next_adapt(p, &c, &l), "nothing left to adapt");
	s = tfk_prep_dump(p);
	ok(s && strstr(s, "\"vocabulary\": [\n            \"[UNK]\",\n"
		       "            \"b\",\n            \"a\",\n"
		       "            \"c\"\n          ]"),
	   "StringLookup vocabulary: [UNK], b, a, c (tie b > a)");
	ok(s && strstr(s, "\"vocabulary\": [\n            0,\n            -1,"
		       "\n            5,\n            3,\n            7\n"),
	   "IntegerLookup vocabulary: mask 0, oov -1, 5, 3, 7");
	ok(s && strstr(s, "\"bin_boundaries\": [\n            24.75,\n"
		       "            49.5,\n            74.25\n"),
	   "Discretization boundaries 24.75, 49.5, 74.25 (textprep.py)");
	rc = s ? tfk_prep_parse(&q, "l2.json", s, strlen(s), &err) : -1;
	ok(!rc && !tfk_prep_next_adapt(q, &c, &l),
	   "the dumped spec parses and needs no more adapting");
	if (!rc) {
		rc = tfk_graph_new(&g, &err);
		ok(!rc && !tfk_prep_build(q, g, dt, &err),
		   "and builds a graph");
		if (!rc)
			tfk_graph_free(g);
		tfk_prep_free(q);
	}
	if (!s)
		tap_diag("dump failed");
	else if (!strstr(s, "24.75"))
		tap_diag("%s", s);
	free(s);
	tfk_prep_free(p);
}

static void failed_allocs(void)
{
	static const int64_t shape[3] = { 2, 3, 2 };
	const char *spec = X("{\"class_name\": \"Rescaling\", \"config\": "
			     "{\"scale\": [1, 2], \"offset\": [3, 4]}}, "
			     "{\"class_name\": \"RandomRotation\", \"config\":"
			     " {\"factor\": 0.1}}");
	float v[12] = { 0 };
	struct tfk_tensor out;
	struct tfk_err err;
	long n;
	int rc = TFK_ENOMEM, all_nomem = 1;

	for (n = 0; n < 500 && rc == TFK_ENOMEM; n++) {
		tfk_alloc_fail_after(n);
		rc = run1(spec, TFK_DT_FLOAT, 3, shape, v, 0, 0, &out, &err);
		tfk_alloc_fail_after(-1);
		if (rc && rc != TFK_ENOMEM)
			all_nomem = 0;
	}
	ok(rc == 0, "parse, build and run succeed after %ld failing points",
	   n - 1);
	ok(all_nomem, "every failure is TFK_ENOMEM (no leaks: ASan)");
	tfk_tensor_release(&out);
}

int main(void)
{
	spec_errors();
	values();
	flips();
	registry();
	adapt();
	adapt_lookups();
	failed_allocs();
	return tap_done();
}
