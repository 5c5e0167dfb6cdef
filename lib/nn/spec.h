/*
 * spec.h - a training spec: one JSON file holding a Keras model config
 * and the settings of compile() and fit(), as tfk-train reads it
 * (tfk-spec(5) is the user's documentation):
 *
 *   {
 *     "model":   {"class_name": "Sequential", "config": {...}},
 *     "inputs":  {"input_1": {"feature": "image", "scale": 0.00392...}},
 *     "labels":  {"feature": "label"},
 *     "compile": {"optimizer": "adam", "loss": "...", "metrics": [...]},
 *     "fit":     {"epochs": 5, "batch_size": 32, "callbacks": [...]}
 *   }
 *
 * "model" is required (model.to_json() output, or its object); the
 * others are optional. Any other top-level key is an error naming it.
 * "inputs" and "labels" are read by feed.h, "model" by model.h
 * (tfk_keras_build), compile.optimizer by optim.h, compile.metrics by
 * metric.h, compile.loss by tfk_loss_parse; this module checks the
 * section keys and gives typed, validated fit/compile values with Keras'
 * defaults.
 *
 * Messages name the spec file as given and the JSON path:
 *   "spec.json: fit.epochs: expected a positive integer"
 *   "spec.json: unknown key 'optimiser' (expected model, inputs, labels,
 *    compile or fit)"
 * JSON null counts as absent everywhere (Keras' to_json writes null for
 * unset values), so a null takes the default.
 */
#ifndef TFK_SPEC_H
#define TFK_SPEC_H

#include "util/err.h"

#include <jansson.h>
#include <stddef.h>

struct tfk_spec;

/*
 * Read and check the spec file at path ("-": stdin): JSON text whose
 * root is an object with a "model" object and only the known top-level
 * keys, each of the right JSON type (objects; "model" an object with a
 * "class_name"). *s NULL on failure. Errors: TFK_EIO (cannot read),
 * TFK_ECORRUPT ("spec.json: line 3 column 7: ..." for bad JSON),
 * TFK_EINVAL (structure), TFK_ENOMEM.
 */
int tfk_spec_load(struct tfk_spec **s, const char *path, struct tfk_err *err);
/* The same from text[0..len); name is used in messages (a checkpoint's
 * saved spec is reloaded this way). */
int tfk_spec_parse(struct tfk_spec **s, const char *name, const char *text,
		   size_t len, struct tfk_err *err);
void tfk_spec_free(struct tfk_spec *s);

/* The name messages use (the path given to load). Valid while s is. */
const char *tfk_spec_name(const struct tfk_spec *s);

/*
 * The jansson root object, borrowed (valid until tfk_spec_free; a later
 * tfk_spec_set may replace values under it, so re-fetch sub-objects
 * after a set). Callers must not modify it; use tfk_spec_set.
 */
json_t *tfk_spec_json(const struct tfk_spec *s);

/*
 * The value at a JSON path ("fit.batch_size", "model.config.layers[2].
 * config.units"; keys separated by '.', array elements by [N]), or NULL
 * when absent or the path does not parse. Borrowed, as tfk_spec_json.
 */
json_t *tfk_spec_get(const struct tfk_spec *s, const char *path);

/*
 * Apply one override "PATH=VALUE" (tfk-train --set). VALUE is parsed as
 * JSON (any value: 64, 0.5, true, null, [3, 3], {"a": 1}); when it is not
 * valid JSON it is taken as a string (adam, relu). Every component of
 * PATH but the last must exist, except that the optional top-level
 * sections (inputs, labels, compile, fit) are created empty when
 * missing; the last may create a new key of an object, or replace an
 * element of an array (an index past the end is an error). Errors
 * (TFK_EINVAL): "--set fit.batchsize=64" style messages:
 *   "--set model.config.layerz[2].units=3: model.config.layerz: no such
 *    key"
 *   "--set fit: expected PATH=VALUE"
 *   "--set optimiser=x: unknown top-level key 'optimiser'"
 * The spec is unchanged on failure. Each accepted set is remembered in
 * order (for TensorBoard hparams and checkpoints).
 */
int tfk_spec_set(struct tfk_spec *s, const char *assignment,
		 struct tfk_err *err);
/* Overrides applied so far: count, and the i-th's path (as given) and
 * value (borrowed; valid while s is). */
int tfk_spec_n_sets(const struct tfk_spec *s);
const char *tfk_spec_set_at(const struct tfk_spec *s, int i,
			    const json_t **value);

/*
 * The spec as JSON text (with the overrides applied), pretty (2-space
 * indent) or compact, keys in the file's order, ending in a newline.
 * tfk_spec_parse of it gives the same spec. NULL when out of memory;
 * free with tfk_free.
 */
char *tfk_spec_dump(const struct tfk_spec *s, int pretty);

/* fit ------------------------------------------------------------------ */

/*
 * fit's settings with Keras' defaults (keras.Model.fit). Keys allowed in
 * "fit": those below plus "verbose" (0, 1, 2 or "auto"; tfk-train's -q
 * and --progress decide the output, so it changes nothing).
 */
struct tfk_fit {
	long epochs;			/* >= 1; default 1 */
	long initial_epoch;		/* >= 0, < epochs; default 0 */
	long batch_size;		/* >= 1; default 32 */
	int shuffle;			/* true/false; default true */
	double validation_split;	/* [0, 1); default 0 */
	long steps_per_epoch;		/* >= 1; 0 when null (the default):
					 * an epoch is one pass over the data */
	long validation_steps;		/* >= 1; 0 when null */
	long validation_batch_size;	/* >= 1; 0 when null: batch_size */
	long validation_freq;		/* >= 1; default 1 (every epoch) */
	/* class_weight {"0": 1.0, "1": 2.5, ...}: keys must be the class ids
	 * 0..n-1, each once (Keras' rule), weights finite numbers >= 0.
	 * NULL/0 when null (the default). Owned: tfk_fit_release. */
	float *class_weight;
	long n_class_weight;
	/* callbacks: an array (empty when absent) whose items are objects
	 * {"class_name": STRING, "config": OBJECT} (config optional, no
	 * other keys); the class names and configs are checked by the
	 * callback code. Borrowed from the spec (as tfk_spec_json). */
	const json_t *callbacks;
};

/*
 * Read and check s's "fit" section into *f (which needs no init; call
 * tfk_fit_release after success). Errors: TFK_EINVAL naming the path
 * ("spec.json: fit.batch_size: expected a positive integer",
 * "spec.json: fit.class_weight: expected keys 0 to 2, got \"5\"",
 * "spec.json: fit: unknown key 'epoch'"), TFK_ENOMEM. *f is empty after
 * a failure.
 */
int tfk_spec_fit(const struct tfk_spec *s, struct tfk_fit *f,
		 struct tfk_err *err);
void tfk_fit_release(struct tfk_fit *f);

/* compile -------------------------------------------------------------- */

/*
 * compile's values, borrowed from the spec (or from s's own defaults),
 * unparsed: they go to tfk_optim_new, tfk_loss_parse and
 * tfk_metric_new, which know their grammar. The paths are ready for
 * those calls' path argument ("spec.json: compile.optimizer").
 * Keys allowed in "compile": optimizer, loss, loss_weights, metrics,
 * and the Keras execution switches run_eagerly, steps_per_execution,
 * jit_compile (checked for type, no effect here). A model with several
 * outputs takes loss and loss_weights per output (tfk_loss_parse_outputs)
 * and metrics per output (tfk_trainer_new).
 */
struct tfk_compile {
	const json_t *optimizer;	/* default the string "rmsprop", as
					 * keras.Model.compile */
	const json_t *loss;		/* required: "compile.loss: required" */
	const json_t *loss_weights;	/* NULL when absent or null */
	const json_t *metrics;		/* an array or an object; an empty
					 * array when absent */
	char optimizer_path[256];
	char loss_path[256];
	char loss_weights_path[256];
	char metrics_path[256];		/* metrics[i]: append "[i]" */
};

/* Fill *c. Errors: TFK_EINVAL naming the path (a missing loss, metrics
 * not an array, an unknown key, optimizer not a string or an object). */
int tfk_spec_compile(const struct tfk_spec *s, struct tfk_compile *c,
		     struct tfk_err *err);

/* Checked getters for config objects --------------------------------- */

/*
 * Shared by this module, feed.c and the callback code, so every config
 * error reads the same. `where` is the message prefix of obj, e.g.
 * "spec.json: fit" or "spec.json: fit.callbacks[1].config"; a key that
 * is absent or null gives the default. Each returns 0 or TFK_EINVAL
 * with "WHERE.KEY: expected ...".
 */

/* Every key of obj is in allowed[] (NULL-terminated), else "WHERE:
 * unknown key 'x'". */
int tfk_spec_check_keys(const json_t *obj, const char *where,
			const char *const *allowed, struct tfk_err *err);
/* A JSON integer in [min, max]. Messages: min 1 and max LONG_MAX
 * "expected a positive integer", min 0 "expected a non-negative
 * integer", else "expected an integer in [min, max]". */
int tfk_spec_int(const json_t *obj, const char *key, const char *where,
		 long dflt, long min, long max, long *out,
		 struct tfk_err *err);
/* A JSON number (integer or real), finite, in [min, max] (or [min,
 * max) when max_open). */
int tfk_spec_num(const json_t *obj, const char *key, const char *where,
		 double dflt, double min, double max, int max_open,
		 double *out, struct tfk_err *err);
/* true/false. */
int tfk_spec_bool(const json_t *obj, const char *key, const char *where,
		  int dflt, int *out, struct tfk_err *err);
/* A JSON string (borrowed from obj; dflt may be NULL). */
int tfk_spec_str(const json_t *obj, const char *key, const char *where,
		 const char *dflt, const char **out, struct tfk_err *err);

#endif
