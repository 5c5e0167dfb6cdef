/*
 * t-spec.c - training specs: loading, the frame checks, --set
 * overrides, the fit/compile getters and their Keras defaults, dump.
 *
 * Oracles: the Keras defaults are keras.Model.fit's and compile's
 * signatures (epochs=1, batch_size=None -> 32, shuffle=True,
 * validation_split=0.0, steps_per_epoch=None, optimizer="rmsprop"); the
 * messages are the ones tfk-spec(5) documents, asserted byte for byte;
 * the shipped example specs must load and give the settings.
 */
#include "nn/spec.h"
#include "util/alloc.h"
#include "tap.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MODEL "{\"class_name\":\"Sequential\",\"config\":{\"name\":\"s\"," \
	"\"layers\":[{\"class_name\":\"InputLayer\",\"config\":{" \
	"\"batch_input_shape\":[null,4],\"name\":\"input_1\"}}," \
	"{\"class_name\":\"Dense\",\"config\":{\"name\":\"d\",\"units\":3}}]}}"

static struct tfk_spec *parse(const char *text, struct tfk_err *err)
{
	struct tfk_spec *s = NULL;

	tfk_err_clear(err);
	tfk_spec_parse(&s, "spec.json", text, strlen(text), err);
	return s;
}

/* The error message of parsing text, or "" when it parsed. */
static const char *parse_err(const char *text)
{
	static struct tfk_err err;
	struct tfk_spec *s = parse(text, &err);

	tfk_spec_free(s);
	return s ? "" : err.msg;
}

/* The message of tfk_spec_fit on a spec with this "fit" object. */
static const char *fit_err(const char *fit)
{
	static struct tfk_err err;
	char text[2048];
	struct tfk_spec *s;
	struct tfk_fit f;

	snprintf(text, sizeof(text), "{\"model\":" MODEL ",\"fit\":%s}", fit);
	s = parse(text, &err);
	if (!s)
		return err.msg;
	if (tfk_spec_fit(s, &f, &err) == 0) {
		tfk_fit_release(&f);
		tfk_spec_free(s);
		return "";
	}
	tfk_spec_free(s);
	return err.msg;
}

static void defaults(void)
{
	struct tfk_err err;
	struct tfk_spec *s = parse("{\"model\":" MODEL ",\"compile\":{"
				   "\"loss\":\"mse\"}}", &err);
	struct tfk_compile c;
	struct tfk_fit f;

	ok(s != NULL, "minimal spec loads: %s", err.msg);
	if (!s)
		return;
	is_int(tfk_spec_fit(s, &f, &err), 0, "fit getter without fit");
	is_int(f.epochs, 1, "epochs default 1");
	is_int(f.initial_epoch, 0, "initial_epoch default 0");
	is_int(f.batch_size, 32, "batch_size default 32");
	is_int(f.shuffle, 1, "shuffle default true");
	ok(f.validation_split == 0, "validation_split default 0");
	is_int(f.steps_per_epoch, 0, "steps_per_epoch default null");
	is_int(f.validation_steps, 0, "validation_steps default null");
	is_int(f.validation_batch_size, 0, "validation_batch_size null");
	is_int(f.validation_freq, 1, "validation_freq default 1");
	ok(f.class_weight == NULL && f.n_class_weight == 0,
	   "class_weight default null");
	ok(json_is_array(f.callbacks) && json_array_size(f.callbacks) == 0,
	   "callbacks default []");
	tfk_fit_release(&f);
	is_int(tfk_spec_compile(s, &c, &err), 0, "compile getter");
	is_str(json_string_value(c.optimizer), "rmsprop",
	       "optimizer default rmsprop (keras compile)");
	is_str(json_string_value(c.loss), "mse", "loss as given");
	ok(json_is_array(c.metrics) && json_array_size(c.metrics) == 0,
	   "metrics default []");
	is_str(c.optimizer_path, "spec.json: compile.optimizer",
	       "optimizer path");
	is_str(c.loss_path, "spec.json: compile.loss", "loss path");
	is_str(c.metrics_path, "spec.json: compile.metrics", "metrics path");
	is_str(tfk_spec_name(s), "spec.json", "name");
	ok(tfk_spec_get(s, "model.config.layers[1].config.units") &&
	   json_integer_value(tfk_spec_get(s, "model.config.layers[1]."
					   "config.units")) == 3,
	   "get by path");
	ok(!tfk_spec_get(s, "model.config.layers[2]"), "get past the end");
	ok(!tfk_spec_get(s, "model..config"), "get of a bad path");
	ok(!tfk_spec_get(s, ""), "get of an empty path");
	tfk_spec_free(s);
}

static void full_values(void)
{
	struct tfk_err err;
	struct tfk_spec *s = parse(
		"{\"model\":" MODEL ",\"compile\":{\"optimizer\":{"
		"\"class_name\":\"Adam\",\"config\":{\"learning_rate\":0.001}},"
		"\"loss\":\"sparse_categorical_crossentropy\",\"metrics\":["
		"\"accuracy\"],\"run_eagerly\":false,\"jit_compile\":null,"
		"\"steps_per_execution\":4},"
		"\"fit\":{\"epochs\":5,\"initial_epoch\":2,\"batch_size\":64,"
		"\"shuffle\":false,\"validation_split\":0.1,\"steps_per_epoch\":"
		"100,\"validation_steps\":7,\"validation_batch_size\":128,"
		"\"validation_freq\":2,\"verbose\":\"auto\",\"class_weight\":{"
		"\"1\":2.5,\"0\":1,\"2\":0},\"callbacks\":[{\"class_name\":"
		"\"EarlyStopping\",\"config\":{\"patience\":2}},{\"class_name\":"
		"\"CSVLogger\"}]}}", &err);
	struct tfk_compile c;
	struct tfk_fit f;

	ok(s != NULL, "full spec loads: %s", err.msg);
	if (!s)
		return;
	is_int(tfk_spec_fit(s, &f, &err), 0, "fit: %s", err.msg);
	is_int(f.epochs, 5, "epochs");
	is_int(f.initial_epoch, 2, "initial_epoch");
	is_int(f.batch_size, 64, "batch_size");
	is_int(f.shuffle, 0, "shuffle false");
	ok(f.validation_split == 0.1, "validation_split");
	is_int(f.steps_per_epoch, 100, "steps_per_epoch");
	is_int(f.validation_steps, 7, "validation_steps");
	is_int(f.validation_batch_size, 128, "validation_batch_size");
	is_int(f.validation_freq, 2, "validation_freq");
	is_int(f.n_class_weight, 3, "three class weights");
	ok(f.class_weight && f.class_weight[0] == 1.0f &&
	   f.class_weight[1] == 2.5f && f.class_weight[2] == 0.0f,
	   "class weights by id, not by key order");
	is_int(json_array_size(f.callbacks), 2, "two callbacks");
	tfk_fit_release(&f);
	is_int(tfk_spec_compile(s, &c, &err), 0, "compile: %s", err.msg);
	is_str(json_string_value(json_object_get(c.optimizer, "class_name")),
	       "Adam", "optimizer object");
	is_str(json_string_value(json_array_get(c.metrics, 0)), "accuracy",
	       "metrics list");
	tfk_spec_free(s);
}

static void frame_errors(void)
{
	struct tfk_err err;
	struct tfk_spec *s;

	is_str(parse_err("{\"model\":" MODEL ",\"optimiser\":{}}"),
	       "spec.json: unknown key 'optimiser' (expected model, inputs, "
	       "labels, compile or fit)", "unknown top-level key");
	is_str(parse_err("{\"fit\":{}}"),
	       "spec.json: model: required (a Keras model config, as "
	       "model.to_json() writes it)", "model missing");
	is_str(parse_err("{\"model\":[1]}"),
	       "spec.json: model: expected a Keras model object "
	       "{\"class_name\": ..., \"config\": ...}", "model not an object");
	is_str(parse_err("{\"model\":" MODEL ",\"fit\":3}"),
	       "spec.json: fit: expected an object", "fit not an object");
	is_str(parse_err("[1, 2]"),
	       "spec.json: expected a JSON object {\"model\": ..., "
	       "\"compile\": ..., \"fit\": ...}", "root not an object");
	s = parse("{\"model\":\n  {,}}", &err);
	ok(!s && err.code == TFK_ECORRUPT, "bad JSON is corrupt");
	ok(!strncmp(err.msg, "spec.json: line 2 column 4: ", 28),
	   "bad JSON names line and column: %s", err.msg);
	s = parse("{\"model\":" MODEL ",\"fit\":{},\"fit\":{}}", &err);
	ok(!s && strstr(err.msg, "duplicate"), "duplicate keys refused: %s",
	   err.msg);
	is_str(parse_err("{\"model\":" MODEL ",\"fit\":null,\"inputs\":null}"),
	       "", "null sections are absent");

	s = parse("{\"model\":" MODEL "}", &err);
	{
		struct tfk_compile c;

		is_int(tfk_spec_compile(s, &c, &err), TFK_EINVAL,
		       "compile without loss");
		is_str(err.msg, "spec.json: compile.loss: required (e.g. "
		       "\"sparse_categorical_crossentropy\")", "loss required");
	}
	tfk_spec_free(s);
	s = parse("{\"model\":" MODEL ",\"compile\":{\"loss\":\"mse\","
		  "\"metrics\":\"accuracy\"}}", &err);
	{
		struct tfk_compile c;

		tfk_spec_compile(s, &c, &err);
		is_str(err.msg, "spec.json: compile.metrics: expected a list "
		       "such as [\"accuracy\"] (or, for a model with several "
		       "outputs, an object keyed by output name)",
		       "metrics must be a list (or an object)");
	}
	tfk_spec_free(s);
	s = parse("{\"model\":" MODEL ",\"compile\":{\"loss\":\"mse\","
		  "\"optimizer\":3}}", &err);
	{
		struct tfk_compile c;

		tfk_spec_compile(s, &c, &err);
		is_str(err.msg, "spec.json: compile.optimizer: expected a name "
		       "(\"adam\") or an object {\"class_name\": \"Adam\", "
		       "\"config\": {...}}", "optimizer type");
	}
	tfk_spec_free(s);
	s = parse("{\"model\":" MODEL ",\"compile\":{\"loss\":\"mse\","
		  "\"lr\":3}}", &err);
	{
		struct tfk_compile c;

		tfk_spec_compile(s, &c, &err);
		is_str(err.msg, "spec.json: compile: unknown key 'lr'",
		       "compile unknown key");
	}
	tfk_spec_free(s);
}

static void fit_errors(void)
{
	is_str(fit_err("{\"epochs\":0}"),
	       "spec.json: fit.epochs: expected a positive integer",
	       "epochs 0");
	is_str(fit_err("{\"epochs\":\"5\"}"),
	       "spec.json: fit.epochs: expected a positive integer",
	       "epochs as a string");
	is_str(fit_err("{\"epochs\":5.0}"),
	       "spec.json: fit.epochs: expected a positive integer",
	       "epochs as a real");
	is_str(fit_err("{\"batch_size\":-1}"),
	       "spec.json: fit.batch_size: expected a positive integer",
	       "negative batch");
	is_str(fit_err("{\"initial_epoch\":-1}"),
	       "spec.json: fit.initial_epoch: expected a non-negative integer",
	       "negative initial epoch");
	is_str(fit_err("{\"validation_split\":1}"),
	       "spec.json: fit.validation_split: expected a number in [0, 1)",
	       "validation_split 1");
	is_str(fit_err("{\"validation_split\":-0.5}"),
	       "spec.json: fit.validation_split: expected a number in [0, 1)",
	       "validation_split negative");
	is_str(fit_err("{\"shuffle\":\"batch\"}"),
	       "spec.json: fit.shuffle: expected true or false",
	       "shuffle batch");
	is_str(fit_err("{\"epoch\":3}"),
	       "spec.json: fit: unknown key 'epoch'", "typo in fit");
	is_str(fit_err("{\"verbose\":3}"),
	       "spec.json: fit.verbose: expected 0, 1, 2 or \"auto\"",
	       "verbose 3");
	is_str(fit_err("{\"steps_per_epoch\":0}"),
	       "spec.json: fit.steps_per_epoch: expected a positive integer",
	       "steps 0");
	is_str(fit_err("{\"steps_per_epoch\":null}"), "", "steps null");
	is_str(fit_err("{\"class_weight\":{\"0\":1,\"2\":1}}"),
	       "spec.json: fit.class_weight: expected the class ids 0 to 1 as "
	       "keys, got \"2\"", "class weights with a gap");
	is_str(fit_err("{\"class_weight\":{\"01\":1,\"0\":1}}"),
	       "spec.json: fit.class_weight: expected the class ids 0 to 1 as "
	       "keys, got \"01\"", "class weight key with a leading zero");
	is_str(fit_err("{\"class_weight\":{\"a\":1}}"),
	       "spec.json: fit.class_weight: expected the class ids 0 to 0 as "
	       "keys, got \"a\"", "class weight key not a number");
	is_str(fit_err("{\"class_weight\":{\"0\":-1}}"),
	       "spec.json: fit.class_weight.0: expected a number >= 0",
	       "negative class weight");
	is_str(fit_err("{\"class_weight\":{\"0\":\"x\"}}"),
	       "spec.json: fit.class_weight.0: expected a number >= 0",
	       "class weight not a number");
	is_str(fit_err("{\"class_weight\":[1,2]}"),
	       "spec.json: fit.class_weight: expected an object {\"0\": "
	       "weight, \"1\": weight, ...}", "class weights as a list");
	is_str(fit_err("{\"callbacks\":{}}"),
	       "spec.json: fit.callbacks: expected a list of {\"class_name\": "
	       "..., \"config\": {...}}", "callbacks not a list");
	is_str(fit_err("{\"callbacks\":[{\"class_name\":\"A\"},3]}"),
	       "spec.json: fit.callbacks[1]: expected an object "
	       "{\"class_name\": ..., \"config\": {...}}",
	       "callback not an object");
	is_str(fit_err("{\"callbacks\":[{\"config\":{}}]}"),
	       "spec.json: fit.callbacks[0].class_name: expected a string",
	       "callback without class_name");
	is_str(fit_err("{\"callbacks\":[{\"class_name\":\"A\",\"cfg\":1}]}"),
	       "spec.json: fit.callbacks[0]: unknown key 'cfg'",
	       "callback unknown key");
	is_str(fit_err("{\"callbacks\":[{\"class_name\":\"A\",\"config\":1}]}"),
	       "spec.json: fit.callbacks[0].config: expected an object",
	       "callback config type");
}

static void getters(void)
{
	struct tfk_err err;
	json_t *o = json_loads("{\"a\":3,\"b\":2.5,\"c\":\"s\",\"n\":null,"
			       "\"t\":true}", 0, NULL);
	long l;
	double d;
	const char *s;
	int b;

	is_int(tfk_spec_int(o, "a", "x: cfg", 9, 0, 5, &l, &err), 0, "int");
	is_int(l, 3, "int value");
	is_int(tfk_spec_int(o, "n", "x: cfg", 9, 0, 5, &l, &err), 0,
	       "null int");
	is_int(l, 9, "null gives the default");
	is_int(tfk_spec_int(o, "zz", "x: cfg", 7, 0, 5, &l, &err), 0,
	       "absent int");
	is_int(l, 7, "absent gives the default");
	tfk_spec_int(o, "a", "x: cfg", 9, 4, 5, &l, &err);
	is_str(err.msg, "x: cfg.a: expected an integer in [4, 5]",
	       "int range message");
	is_int(tfk_spec_num(o, "a", "x: cfg", 0, 0, 10, 0, &d, &err), 0,
	       "integer as a number");
	ok(d == 3, "number value");
	tfk_spec_num(o, "b", "x: cfg", 0, 0, 1, 0, &d, &err);
	is_str(err.msg, "x: cfg.b: expected a number in [0, 1]",
	       "number range message");
	tfk_spec_num(o, "c", "x: cfg", 0, 0, INFINITY, 0, &d, &err);
	is_str(err.msg, "x: cfg.c: expected a number >= 0", "number type");
	is_int(tfk_spec_str(o, "c", "x: cfg", NULL, &s, &err), 0, "string");
	is_str(s, "s", "string value");
	tfk_spec_str(o, "a", "x: cfg", NULL, &s, &err);
	is_str(err.msg, "x: cfg.a: expected a string", "string type");
	is_int(tfk_spec_bool(o, "t", "x: cfg", 0, &b, &err), 0, "bool");
	is_int(b, 1, "bool value");
	tfk_spec_bool(o, "a", "x: cfg", 0, &b, &err);
	is_str(err.msg, "x: cfg.a: expected true or false", "bool type");
	{
		static const char *const keys[] = { "a", "b", "c", "n", NULL };

		tfk_spec_check_keys(o, "x: cfg", keys, &err);
		is_str(err.msg, "x: cfg: unknown key 't'", "check_keys");
	}
	json_decref(o);
}

/* The message of one --set on a fresh copy of text ("" on success). */
static const char *set_err(const char *text, const char *a)
{
	static struct tfk_err err;
	struct tfk_spec *s = parse(text, &err);
	char *before, *after;
	int rc;

	if (!s)
		return err.msg;
	before = tfk_spec_dump(s, 0);
	rc = tfk_spec_set(s, a, &err);
	after = tfk_spec_dump(s, 0);
	if (rc < 0 && strcmp(before, after))
		snprintf(err.msg, sizeof(err.msg), "changed on failure");
	tfk_free(before);
	tfk_free(after);
	tfk_spec_free(s);
	return rc < 0 ? err.msg : "";
}

static void overrides(void)
{
	const char *base = "{\"model\":" MODEL ",\"compile\":{\"loss\":"
			   "\"mse\",\"optimizer\":\"sgd\"}}";
	struct tfk_err err;
	struct tfk_spec *s = parse(base, &err);
	struct tfk_compile c;
	struct tfk_fit f;
	const json_t *v;
	json_t *j;
	char *d;

	is_int(tfk_spec_set(s, "fit.batch_size=64", &err), 0,
	       "set creates the fit section: %s", err.msg);
	is_int(tfk_spec_set(s, "fit.epochs=3", &err), 0, "second fit key");
	is_int(tfk_spec_set(s, "model.config.layers[1].config.units=256",
			    &err), 0, "set inside a layer: %s", err.msg);
	is_int(tfk_spec_set(s, "compile.optimizer=adam", &err), 0,
	       "bare word is a string");
	is_int(tfk_spec_set(s, "model.config.layers[1].config.activation="
			    "\"relu\"", &err), 0, "new leaf key");
	is_int(tfk_spec_set(s, "fit.shuffle=false", &err), 0, "bool value");
	is_int(tfk_spec_set(s, "fit.validation_split=0.25", &err), 0,
	       "real value");
	is_int(tfk_spec_set(s, "model.config.layers[0].config."
			    "batch_input_shape[1]=8", &err), 0,
	       "array element");
	is_int(tfk_spec_set(s, "compile.optimizer={\"class_name\":\"Adam\","
			    "\"config\":{\"learning_rate\":0.01}}", &err), 0,
	       "object value");
	is_int(tfk_spec_set(s, "fit.callbacks=[]", &err), 0, "list value");
	is_int(tfk_spec_set(s, "compile.loss=1 2", &err), 0,
	       "invalid JSON text is a string");
	is_int(tfk_spec_fit(s, &f, &err), 0, "fit after sets: %s", err.msg);
	is_int(f.batch_size, 64, "batch_size from --set");
	is_int(f.epochs, 3, "epochs from --set");
	is_int(f.shuffle, 0, "shuffle from --set");
	ok(f.validation_split == 0.25, "validation_split from --set");
	tfk_fit_release(&f);
	is_int(json_integer_value(tfk_spec_get(
		       s, "model.config.layers[1].config.units")), 256,
	       "units replaced");
	is_str(json_string_value(tfk_spec_get(
		       s, "model.config.layers[1].config.activation")), "relu",
	       "leaf added");
	is_int(json_integer_value(tfk_spec_get(
		       s, "model.config.layers[0].config.batch_input_shape[1]")),
	       8, "element replaced");
	tfk_spec_compile(s, &c, &err);
	ok(json_is_object(c.optimizer), "optimizer object from --set");
	is_str(json_string_value(c.loss), "1 2", "string fallback");
	is_int(tfk_spec_n_sets(s), 11, "sets remembered");
	is_str(tfk_spec_set_at(s, 0, &v), "fit.batch_size", "first set path");
	is_int(json_integer_value(v), 64, "first set value");
	is_str(tfk_spec_set_at(s, 3, &v), "compile.optimizer", "4th path");
	is_str(json_string_value(v), "adam", "4th value (later replaced)");

	/* dump round trip */
	d = tfk_spec_dump(s, 1);
	ok(d && d[strlen(d) - 1] == '\n', "dump ends in a newline");
	{
		struct tfk_spec *s2 = parse(d, &err);

		ok(s2 && json_equal(tfk_spec_json(s2), tfk_spec_json(s)),
		   "dump parses back to the same spec");
		tfk_spec_free(s2);
	}
	ok(d && !strncmp(d, "{\n  \"model\": {", 14), "pretty dump keeps "
	   "the file's key order");
	tfk_free(d);
	d = tfk_spec_dump(s, 0);
	ok(d && !strncmp(d, "{\"model\":{\"class_name\":", 23) &&
	   !strstr(d, "\n  "), "compact dump has no spaces or indentation");
	j = json_loads(d, 0, NULL);
	ok(j && json_equal(j, tfk_spec_json(s)), "compact dump is the spec");
	json_decref(j);
	tfk_free(d);
	tfk_spec_free(s);

	/* errors, each leaving the spec unchanged */
	is_str(set_err(base, "fit.batch_size"),
	       "--set fit.batch_size: expected PATH=VALUE", "no '='");
	is_str(set_err(base, "=3"), "--set =3: expected PATH=VALUE",
	       "empty path");
	is_str(set_err(base, "optimiser=adam"),
	       "--set optimiser=adam: unknown top-level key 'optimiser' "
	       "(expected model, inputs, labels, compile or fit)",
	       "unknown top-level key");
	is_str(set_err(base, "model.config.layerz[2].units=3"),
	       "--set model.config.layerz[2].units=3: model.config.layerz: "
	       "no such key", "missing parent");
	is_str(set_err(base, "model.config.layers[7].config.units=3"),
	       "--set model.config.layers[7].config.units=3: "
	       "model.config.layers[7]: no such element",
	       "parent index past the end");
	is_str(set_err(base, "model.config.layers[2]=3"),
	       "--set model.config.layers[2]=3: model.config.layers[2]: no "
	       "such element (the array has 2)", "leaf index past the end");
	is_str(set_err(base, "model.config.name.x=3"),
	       "--set model.config.name.x=3: model.config.name: not an object",
	       "through a string");
	is_str(set_err(base, "model.config[0]=3"),
	       "--set model.config[0]=3: model.config: not an array",
	       "index into an object");
	is_str(set_err(base, "fit..epochs=3"),
	       "--set fit..epochs=3: bad path 'fit..epochs' (expected keys "
	       "joined by '.' and [N] indexes, as fit.batch_size or "
	       "model.config.layers[2].config.units)", "empty key");
	is_str(set_err(base, "fit.x[=3"),
	       "--set fit.x[=3: bad path 'fit.x[' (expected keys joined by "
	       "'.' and [N] indexes, as fit.batch_size or model.config."
	       "layers[2].config.units)", "bad index");
	is_str(set_err(base, "fit.a.b=3"),
	       "--set fit.a.b=3: fit.a: no such key",
	       "a new section gets only a leaf");
	is_str(set_err(base, "model=3"),
	       "--set model=3: spec.json: model: expected a Keras model object "
	       "{\"class_name\": ..., \"config\": ...}",
	       "a set that breaks the frame is undone");
	is_str(set_err(base, "fit=[1]"),
	       "--set fit=[1]: spec.json: fit: expected an object",
	       "fit replaced by a list");
	is_str(set_err(base, "fit={\"epochs\":2}"), "", "whole section");
}

/* The example specs shipped in examples/ load and hold the issue's
 * settings (batch 32, Adam 1e-3, sparse crossentropy). */
static void examples(void)
{
	static const char *const files[] = { "examples/mlp.spec.json",
					     "examples/cnn.spec.json" };
	struct tfk_err err;
	int i;

	for (i = 0; i < 2; i++) {
		struct tfk_spec *s = NULL;
		struct tfk_compile c;
		struct tfk_fit f;

		is_int(tfk_spec_load(&s, tap_source(files[i]), &err), 0,
		       "%s loads: %s", files[i], err.msg);
		if (!s)
			continue;
		is_int(tfk_spec_fit(s, &f, &err), 0, "%s fit", files[i]);
		is_int(f.batch_size, 32, "%s batch 32", files[i]);
		tfk_fit_release(&f);
		is_int(tfk_spec_compile(s, &c, &err), 0, "%s compile",
		       files[i]);
		is_str(json_string_value(json_object_get(c.optimizer,
							 "class_name")),
		       "Adam", "%s Adam", files[i]);
		ok(json_number_value(json_object_get(json_object_get(
			c.optimizer, "config"), "learning_rate")) == 0.001,
		   "%s lr 1e-3", files[i]);
		is_str(json_string_value(c.loss),
		       "sparse_categorical_crossentropy", "%s loss", files[i]);
		is_str(json_string_value(tfk_spec_get(s, "model.class_name")),
		       "Sequential", "%s Sequential", files[i]);
		tfk_spec_free(s);
	}
	{
		struct tfk_spec *s = NULL;

		is_int(tfk_spec_load(&s, "/nonexistent/spec.json", &err),
		       TFK_EIO, "missing file");
		is_str(err.msg, "/nonexistent/spec.json: No such file or "
		       "directory", "missing file message");
	}
}

/* Every allocation failure ends in TFK_ENOMEM (or success) and leaks
 * nothing (ASan's leak check runs this under make check). */
static void alloc_failures(void)
{
	const char *text = "{\"model\":" MODEL ",\"fit\":{\"class_weight\":"
			   "{\"0\":1,\"1\":2}}}";
	int k, bad = 0, succeeded = 0;

	for (k = 0; k < 40 && !succeeded; k++) {
		struct tfk_err err;
		struct tfk_spec *s = NULL;
		struct tfk_fit f;
		int rc;

		tfk_alloc_fail_after(k);
		rc = tfk_spec_parse(&s, "spec.json", text, strlen(text), &err);
		if (rc == 0)
			rc = tfk_spec_set(s, "fit.epochs=2", &err);
		if (rc == 0) {
			rc = tfk_spec_fit(s, &f, &err);
			if (rc == 0)
				tfk_fit_release(&f);
		}
		if (rc == 0) {
			char *d = tfk_spec_dump(s, 1);

			if (!d)
				rc = TFK_ENOMEM;
			tfk_free(d);
		}
		tfk_alloc_fail_after(-1);
		if (rc != 0 && rc != TFK_ENOMEM)
			bad++;
		if (rc == 0)
			succeeded = 1;
		tfk_spec_free(s);
	}
	is_int(bad, 0, "allocation failures give TFK_ENOMEM");
	ok(succeeded, "and with enough allocations it works");
}

int main(void)
{
	defaults();
	full_values();
	frame_errors();
	fit_errors();
	getters();
	overrides();
	examples();
	alloc_failures();
	return tap_done();
}
