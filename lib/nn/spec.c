/*
 * spec.c - training specs: load, check, override, read typed values.
 *
 * The spec stays a jansson tree: the Keras front end, the optimizer and
 * metric parsers each walk their own part with its own grammar, so a
 * second C mirror of the whole document would only be a copy to keep in
 * step. What this module owns is the frame around those parts (the
 * top-level keys, "fit", "compile") and the --set overrides.
 *
 * An override is applied to a deep copy of nothing: the old root is
 * copied first, the change made, the whole frame checked again, and on
 * any failure the copy goes back. Specs are a few kilobytes, so the copy
 * costs nothing and "unchanged on failure" needs no undo log.
 *
 * Rejected: accepting unknown keys with a warning (STYLE.md: a typo in
 * a spec must not silently train something else), and coercing 5.0 to
 * 5 for integer settings (JSON written by Python has exact integers).
 */
#include "nn/spec.h"

#include "util/alloc.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct spec_set {
	char *path;
	json_t *value;
};

struct tfk_spec {
	char *name;
	json_t *root;
	json_t *dflt_optimizer;	/* "rmsprop", Keras' compile default */
	json_t *empty_array;	/* what absent callbacks/metrics read as */
	struct spec_set *sets;
	int n_sets;
};

static const char *const top_keys[] = {
	"model", "inputs", "labels", "compile", "fit", NULL
};

/* Checked getters --------------------------------------------------------- */

int tfk_spec_check_keys(const json_t *obj, const char *where,
			const char *const *allowed, struct tfk_err *err)
{
	const char *key;
	json_t *v;
	int i;

	json_object_foreach((json_t *)obj, key, v) {
		for (i = 0; allowed[i]; i++)
			if (!strcmp(key, allowed[i]))
				break;
		if (!allowed[i])
			return tfk_errf(err, TFK_EINVAL, "%s: unknown key '%s'",
					where, key);
	}
	return 0;
}

/* The value of key in obj, NULL when absent or null. */
static json_t *get(const json_t *obj, const char *key)
{
	json_t *v = obj ? json_object_get(obj, key) : NULL;

	return json_is_null(v) ? NULL : v;
}

int tfk_spec_int(const json_t *obj, const char *key, const char *where,
		 long dflt, long min, long max, long *out, struct tfk_err *err)
{
	json_t *v = get(obj, key);
	json_int_t x;

	*out = dflt;
	if (!v)
		return 0;
	if (json_is_integer(v)) {
		x = json_integer_value(v);
		if (x >= min && x <= max) {
			*out = (long)x;
			return 0;
		}
	}
	if (min == 1 && max == LONG_MAX)
		return tfk_errf(err, TFK_EINVAL, "%s.%s: expected a positive "
				"integer", where, key);
	if (min == 0 && max == LONG_MAX)
		return tfk_errf(err, TFK_EINVAL, "%s.%s: expected a "
				"non-negative integer", where, key);
	return tfk_errf(err, TFK_EINVAL, "%s.%s: expected an integer in "
			"[%ld, %ld]", where, key, min, max);
}

int tfk_spec_num(const json_t *obj, const char *key, const char *where,
		 double dflt, double min, double max, int max_open,
		 double *out, struct tfk_err *err)
{
	json_t *v = get(obj, key);
	double x;

	*out = dflt;
	if (!v)
		return 0;
	if (json_is_number(v)) {
		x = json_number_value(v);
		if (isfinite(x) && x >= min && (max_open ? x < max : x <= max)) {
			*out = x;
			return 0;
		}
	}
	if (isinf(max) && isinf(min))
		return tfk_errf(err, TFK_EINVAL, "%s.%s: expected a number",
				where, key);
	if (isinf(max) && min == 0)
		return tfk_errf(err, TFK_EINVAL, "%s.%s: expected a number "
				">= 0", where, key);
	if (isinf(max))
		return tfk_errf(err, TFK_EINVAL, "%s.%s: expected a number "
				">= %g", where, key, min);
	return tfk_errf(err, TFK_EINVAL, "%s.%s: expected a number in "
			"[%g, %g%c", where, key, min, max, max_open ? ')' : ']');
}

int tfk_spec_bool(const json_t *obj, const char *key, const char *where,
		  int dflt, int *out, struct tfk_err *err)
{
	json_t *v = get(obj, key);

	*out = dflt;
	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return tfk_errf(err, TFK_EINVAL, "%s.%s: expected true or "
				"false", where, key);
	*out = json_is_true(v);
	return 0;
}

int tfk_spec_str(const json_t *obj, const char *key, const char *where,
		 const char *dflt, const char **out, struct tfk_err *err)
{
	json_t *v = get(obj, key);

	*out = dflt;
	if (!v)
		return 0;
	if (!json_is_string(v))
		return tfk_errf(err, TFK_EINVAL, "%s.%s: expected a string",
				where, key);
	*out = json_string_value(v);
	return 0;
}

/* Frame ------------------------------------------------------------------- */

/* The top-level structure, after a load and after every set. */
static int check_root(const struct tfk_spec *s, const json_t *root,
		      struct tfk_err *err)
{
	const char *key;
	json_t *v, *cn;
	int i;

	if (!json_is_object(root))
		return tfk_errf(err, TFK_EINVAL, "%s: expected a JSON object "
				"{\"model\": ..., \"compile\": ..., \"fit\": "
				"...}", s->name);
	json_object_foreach((json_t *)root, key, v) {
		for (i = 0; top_keys[i]; i++)
			if (!strcmp(key, top_keys[i]))
				break;
		if (!top_keys[i])
			return tfk_errf(err, TFK_EINVAL, "%s: unknown key '%s' "
					"(expected model, inputs, labels, "
					"compile or fit)", s->name, key);
		if (i > 0 && !json_is_null(v) && !json_is_object(v))
			return tfk_errf(err, TFK_EINVAL, "%s: %s: expected an "
					"object", s->name, key);
	}
	v = json_object_get(root, "model");
	if (!v)
		return tfk_errf(err, TFK_EINVAL, "%s: model: required (a "
				"Keras model config, as model.to_json() "
				"writes it)", s->name);
	cn = json_is_object(v) ? json_object_get(v, "class_name") : NULL;
	if (!json_is_string(cn))
		return tfk_errf(err, TFK_EINVAL, "%s: model: expected a Keras "
				"model object {\"class_name\": ..., \"config\": "
				"...}", s->name);
	return 0;
}

int tfk_spec_parse(struct tfk_spec **out, const char *name, const char *text,
		   size_t len, struct tfk_err *err)
{
	struct tfk_spec *s;
	json_error_t je;
	int rc;

	*out = NULL;
	s = tfk_calloc(1, sizeof(*s));
	if (!s)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	s->name = tfk_strdup(name);
	s->dflt_optimizer = json_string("rmsprop");
	s->empty_array = json_array();
	if (!s->name || !s->dflt_optimizer || !s->empty_array) {
		tfk_spec_free(s);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	s->root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!s->root) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: line %d column %d: %s",
			      name, je.line, je.column, je.text);
		tfk_spec_free(s);
		return rc;
	}
	rc = check_root(s, s->root, err);
	if (rc < 0) {
		tfk_spec_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int tfk_spec_load(struct tfk_spec **s, const char *path, struct tfk_err *err)
{
	FILE *fp;
	char *text = NULL, *t;
	size_t len = 0, cap = 0, n;
	int rc, e;

	*s = NULL;
	fp = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!fp)
		return tfk_errf(err, TFK_EIO, "%s: %s", path, strerror(errno));
	for (;;) {
		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 65536;
			t = tfk_realloc(text, cap);
			if (!t) {
				rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
				goto done;
			}
			text = t;
		}
		n = fread(text + len, 1, cap - len, fp);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(fp)) {
		e = errno;
		rc = tfk_errf(err, TFK_EIO, "%s: %s", path, strerror(e));
		goto done;
	}
	rc = tfk_spec_parse(s, path, text, len, err);
done:
	if (fp != stdin)
		fclose(fp);
	tfk_free(text);
	return rc;
}

void tfk_spec_free(struct tfk_spec *s)
{
	int i;

	if (!s)
		return;
	for (i = 0; i < s->n_sets; i++) {
		tfk_free(s->sets[i].path);
		json_decref(s->sets[i].value);
	}
	tfk_free(s->sets);
	json_decref(s->root);
	json_decref(s->dflt_optimizer);
	json_decref(s->empty_array);
	tfk_free(s->name);
	tfk_free(s);
}

const char *tfk_spec_name(const struct tfk_spec *s)
{
	return s->name;
}

json_t *tfk_spec_json(const struct tfk_spec *s)
{
	return s->root;
}

/* Paths ------------------------------------------------------------------- */

/* One component of a path: a key (k, kn) or an index (idx >= 0). */
struct comp {
	const char *k;
	size_t kn;
	long idx;
};

/*
 * Next component of path at *p. Returns 1 with *c, 0 at the end, -1
 * when the path does not parse (empty key, bad index, stray bytes).
 */
static int next_comp(const char **p, int first, struct comp *c)
{
	const char *s = *p, *e;
	char *end;
	unsigned long v;

	if (!*s)
		return 0;
	if (*s == '[') {
		if (first || s[1] < '0' || s[1] > '9')
			return -1;
		errno = 0;
		v = strtoul(s + 1, &end, 10);
		if (errno || *end != ']' || v > LONG_MAX)
			return -1;
		c->k = NULL;
		c->kn = 0;
		c->idx = (long)v;
		*p = end + 1;
		return 1;
	}
	if (!first) {
		if (*s != '.')
			return -1;
		s++;
	}
	for (e = s; *e && *e != '.' && *e != '['; e++)
		;
	if (e == s)
		return -1;
	c->k = s;
	c->kn = (size_t)(e - s);
	c->idx = -1;
	*p = e;
	return 1;
}

/* The child of v named by c, or NULL. */
static json_t *child(json_t *v, const struct comp *c)
{
	if (c->idx >= 0)
		return json_is_array(v) ? json_array_get(v, (size_t)c->idx)
					: NULL;
	return json_is_object(v) ? json_object_getn(v, c->k, c->kn) : NULL;
}

json_t *tfk_spec_get(const struct tfk_spec *s, const char *path)
{
	const char *p = path;
	struct comp c;
	json_t *v = s->root;
	int r, first = 1;

	while ((r = next_comp(&p, first, &c)) > 0) {
		v = child(v, &c);
		if (!v)
			return NULL;
		first = 0;
	}
	return r < 0 || first ? NULL : v;
}

/* Overrides --------------------------------------------------------------- */

/* Walk path in root and set its last component to value (a new
 * reference, consumed). The caller restores the root on failure. */
static int set_path(struct tfk_spec *s, json_t *root, const char *a,
		    const char *path, json_t *value, struct tfk_err *err)
{
	const char *p = path, *q;
	struct comp c, nc;
	json_t *v = root, *ch;
	int r, first = 1, i;

	r = next_comp(&p, 1, &c);
	if (r <= 0)
		goto bad_path;
	for (i = 0; top_keys[i]; i++)
		if (strlen(top_keys[i]) == c.kn && !memcmp(top_keys[i], c.k, c.kn))
			break;
	if (!top_keys[i]) {
		json_decref(value);
		return tfk_errf(err, TFK_EINVAL, "--set %s: unknown top-level "
				"key '%.*s' (expected model, inputs, labels, "
				"compile or fit)", a, (int)c.kn, c.k);
	}
	for (;;) {
		q = p;
		r = next_comp(&q, 0, &nc);
		if (r < 0)
			goto bad_path;
		if (r == 0)
			break;
		/* c is not the last component: it must exist */
		ch = child(v, &c);
		if (first && (!ch || json_is_null(ch)) && i > 0) {
			/* optional sections appear when first set */
			ch = json_object();
			if (!ch || json_object_setn_new(v, c.k, c.kn, ch)) {
				json_decref(value);
				return tfk_errf(err, TFK_ENOMEM, "out of memory");
			}
		}
		if (!ch) {
			json_decref(value);
			return tfk_errf(err, TFK_EINVAL, "--set %s: %.*s: no "
					"such %s", a, (int)(p - path), path,
					c.idx >= 0 ? "element" : "key");
		}
		if (nc.idx >= 0 ? !json_is_array(ch) : !json_is_object(ch)) {
			json_decref(value);
			return tfk_errf(err, TFK_EINVAL, "--set %s: %.*s: not "
					"%s", a, (int)(p - path), path,
					nc.idx >= 0 ? "an array" :
					"an object");
		}
		v = ch;
		c = nc;
		p = q;
		first = 0;
	}
	if (c.idx >= 0) {
		if ((size_t)c.idx >= json_array_size(v)) {
			json_decref(value);
			return tfk_errf(err, TFK_EINVAL, "--set %s: %s: no such "
					"element (the array has %zu)", a, path,
					json_array_size(v));
		}
		if (json_array_set_new(v, (size_t)c.idx, value))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		return 0;
	}
	if (json_object_setn_new(v, c.k, c.kn, value))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	(void)s;
	return 0;
bad_path:
	json_decref(value);
	return tfk_errf(err, TFK_EINVAL, "--set %s: bad path '%s' (expected "
			"keys joined by '.' and [N] indexes, as "
			"fit.batch_size or model.config.layers[2].config."
			"units)", a, path);
}

int tfk_spec_set(struct tfk_spec *s, const char *a, struct tfk_err *err)
{
	const char *eq = strchr(a, '=');
	json_t *value, *saved;
	struct spec_set *ns;
	char *path;
	size_t vlen;
	int rc;

	if (!eq || eq == a)
		return tfk_errf(err, TFK_EINVAL, "--set %s: expected "
				"PATH=VALUE", a);
	vlen = strlen(eq + 1);
	value = json_loadb(eq + 1, vlen, JSON_DECODE_ANY |
			   JSON_REJECT_DUPLICATES, NULL);
	if (!value) {
		value = json_stringn(eq + 1, vlen);
		if (!value)
			return tfk_errf(err, TFK_EINVAL, "--set %s: the value "
					"is neither JSON nor UTF-8 text", a);
	}
	path = tfk_malloc((size_t)(eq - a) + 1);
	ns = tfk_realloc(s->sets, (size_t)(s->n_sets + 1) * sizeof(*ns));
	saved = json_deep_copy(s->root);
	if (ns)
		s->sets = ns;
	if (!path || !ns || !saved) {
		json_decref(value);
		json_decref(saved);
		tfk_free(path);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	memcpy(path, a, (size_t)(eq - a));
	path[eq - a] = 0;
	json_incref(value);	/* one for the tree, one for the record */
	rc = set_path(s, s->root, a, path, value, err);
	if (rc == 0) {
		rc = check_root(s, s->root, err);
		if (rc < 0)
			tfk_err_prefix(err, "--set %s", a);
	}
	if (rc < 0) {
		json_decref(s->root);
		s->root = saved;
		json_decref(value);
		tfk_free(path);
		return rc;
	}
	json_decref(saved);
	s->sets[s->n_sets].path = path;
	s->sets[s->n_sets].value = value;
	s->n_sets++;
	return 0;
}

int tfk_spec_n_sets(const struct tfk_spec *s)
{
	return s->n_sets;
}

const char *tfk_spec_set_at(const struct tfk_spec *s, int i,
			    const json_t **value)
{
	if (value)
		*value = s->sets[i].value;
	return s->sets[i].path;
}

char *tfk_spec_dump(const struct tfk_spec *s, int pretty)
{
	char *t, *out;
	size_t n;

	t = json_dumps(s->root, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17) |
		       (pretty ? JSON_INDENT(2) : JSON_COMPACT));
	if (!t)
		return NULL;
	n = strlen(t);
	out = tfk_malloc(n + 2);
	if (out) {
		memcpy(out, t, n);
		out[n] = '\n';
		out[n + 1] = 0;
	}
	free(t);
	return out;
}

/* fit --------------------------------------------------------------------- */

static const char *const fit_keys[] = {
	"epochs", "initial_epoch", "batch_size", "shuffle",
	"validation_split", "steps_per_epoch", "validation_steps",
	"validation_batch_size", "validation_freq", "class_weight",
	"callbacks", "verbose", NULL
};

static int class_weights(const json_t *cw, const char *where,
			 struct tfk_fit *f, struct tfk_err *err)
{
	size_t n = json_object_size(cw);
	const char *key, *k;
	char *end;
	unsigned long id;
	json_t *v;
	double w;

	if (n == 0)
		return 0;
	if (n > 1000000)
		return tfk_errf(err, TFK_EINVAL, "%s.class_weight: %zu "
				"classes is too many", where, n);
	f->class_weight = tfk_malloc(n * sizeof(float));
	if (!f->class_weight)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	f->n_class_weight = (long)n;
	json_object_foreach((json_t *)cw, key, v) {
		for (k = key; *k >= '0' && *k <= '9'; k++)
			;
		errno = 0;
		id = strtoul(key, &end, 10);
		if (*k || k == key || (key[0] == '0' && key[1]) || errno ||
		    id >= n)
			return tfk_errf(err, TFK_EINVAL, "%s.class_weight: "
					"expected the class ids 0 to %zu as "
					"keys, got \"%s\"", where, n - 1, key);
		w = json_is_number(v) ? json_number_value(v) : -1;
		if (!(w >= 0) || !isfinite(w) || w > 3.4e38)
			return tfk_errf(err, TFK_EINVAL, "%s.class_weight.%s: "
					"expected a number >= 0", where, key);
		/* ids are unique (JSON_REJECT_DUPLICATES) and n of them are
		 * in [0, n): each id appears once */
		f->class_weight[id] = (float)w;
	}
	return 0;
}

static int callbacks(const json_t *cb, const char *where, struct tfk_fit *f,
		     struct tfk_err *err)
{
	static const char *const item_keys[] = { "class_name", "config",
						 NULL };
	char w[340];
	size_t i;
	json_t *it, *v;
	int rc;

	if (!json_is_array(cb))
		return tfk_errf(err, TFK_EINVAL, "%s.callbacks: expected a "
				"list of {\"class_name\": ..., \"config\": "
				"{...}}", where);
	json_array_foreach((json_t *)cb, i, it) {
		snprintf(w, sizeof(w), "%s.callbacks[%zu]", where, i);
		if (!json_is_object(it))
			return tfk_errf(err, TFK_EINVAL, "%s: expected an "
					"object {\"class_name\": ..., "
					"\"config\": {...}}", w);
		rc = tfk_spec_check_keys(it, w, item_keys, err);
		if (rc < 0)
			return rc;
		if (!json_is_string(json_object_get(it, "class_name")))
			return tfk_errf(err, TFK_EINVAL, "%s.class_name: "
					"expected a string", w);
		v = get(it, "config");
		if (v && !json_is_object(v))
			return tfk_errf(err, TFK_EINVAL, "%s.config: expected "
					"an object", w);
	}
	f->callbacks = cb;
	return 0;
}

int tfk_spec_fit(const struct tfk_spec *s, struct tfk_fit *f,
		 struct tfk_err *err)
{
	const json_t *fit = get(s->root, "fit");
	char where[300];
	json_t *v;
	int rc;

	memset(f, 0, sizeof(*f));
	f->callbacks = s->empty_array;
	snprintf(where, sizeof(where), "%.200s: fit", s->name);
	if (fit) {
		rc = tfk_spec_check_keys(fit, where, fit_keys, err);
		if (rc < 0)
			goto fail;
	}
	if ((rc = tfk_spec_int(fit, "epochs", where, 1, 1, LONG_MAX,
			       &f->epochs, err)) < 0 ||
	    (rc = tfk_spec_int(fit, "initial_epoch", where, 0, 0, LONG_MAX,
			       &f->initial_epoch, err)) < 0 ||
	    (rc = tfk_spec_int(fit, "batch_size", where, 32, 1, LONG_MAX,
			       &f->batch_size, err)) < 0 ||
	    (rc = tfk_spec_bool(fit, "shuffle", where, 1, &f->shuffle,
				err)) < 0 ||
	    (rc = tfk_spec_num(fit, "validation_split", where, 0, 0, 1, 1,
			       &f->validation_split, err)) < 0 ||
	    (rc = tfk_spec_int(fit, "steps_per_epoch", where, 0, 1, LONG_MAX,
			       &f->steps_per_epoch, err)) < 0 ||
	    (rc = tfk_spec_int(fit, "validation_steps", where, 0, 1, LONG_MAX,
			       &f->validation_steps, err)) < 0 ||
	    (rc = tfk_spec_int(fit, "validation_batch_size", where, 0, 1,
			       LONG_MAX, &f->validation_batch_size, err)) < 0 ||
	    (rc = tfk_spec_int(fit, "validation_freq", where, 1, 1, LONG_MAX,
			       &f->validation_freq, err)) < 0)
		goto fail;
	v = get(fit, "verbose");
	if (v && !(json_is_integer(v) && json_integer_value(v) >= 0 &&
		   json_integer_value(v) <= 2) &&
	    !(json_is_string(v) && !strcmp(json_string_value(v), "auto"))) {
		rc = tfk_errf(err, TFK_EINVAL, "%s.verbose: expected 0, 1, 2 "
			      "or \"auto\"", where);
		goto fail;
	}
	v = get(fit, "class_weight");
	if (v && !json_is_object(v)) {
		rc = tfk_errf(err, TFK_EINVAL, "%s.class_weight: expected an "
			      "object {\"0\": weight, \"1\": weight, ...}",
			      where);
		goto fail;
	}
	if (v && (rc = class_weights(v, where, f, err)) < 0)
		goto fail;
	v = get(fit, "callbacks");
	if (v && (rc = callbacks(v, where, f, err)) < 0)
		goto fail;
	return 0;
fail:
	tfk_fit_release(f);
	return rc;
}

void tfk_fit_release(struct tfk_fit *f)
{
	if (!f)
		return;
	tfk_free(f->class_weight);
	memset(f, 0, sizeof(*f));
}

/* compile ----------------------------------------------------------------- */

static const char *const compile_keys[] = {
	"optimizer", "loss", "loss_weights", "metrics", "run_eagerly",
	"steps_per_execution", "jit_compile", NULL
};

int tfk_spec_compile(const struct tfk_spec *s, struct tfk_compile *c,
		     struct tfk_err *err)
{
	const json_t *cp = get(s->root, "compile");
	char where[300];
	long spe;
	int rc, b;

	memset(c, 0, sizeof(*c));
	snprintf(where, sizeof(where), "%.200s: compile", s->name);
	snprintf(c->optimizer_path, sizeof(c->optimizer_path),
		 "%.200s: compile.optimizer", s->name);
	snprintf(c->loss_path, sizeof(c->loss_path), "%.200s: compile.loss",
		 s->name);
	snprintf(c->loss_weights_path, sizeof(c->loss_weights_path),
		 "%.200s: compile.loss_weights", s->name);
	snprintf(c->metrics_path, sizeof(c->metrics_path),
		 "%.200s: compile.metrics", s->name);
	if (cp && (rc = tfk_spec_check_keys(cp, where, compile_keys,
					     err)) < 0)
		return rc;
	if ((rc = tfk_spec_bool(cp, "run_eagerly", where, 0, &b, err)) < 0 ||
	    (rc = tfk_spec_bool(cp, "jit_compile", where, 0, &b, err)) < 0 ||
	    (rc = tfk_spec_int(cp, "steps_per_execution", where, 1, 1,
			       LONG_MAX, &spe, err)) < 0)
		return rc;
	c->optimizer = get(cp, "optimizer");
	if (!c->optimizer)
		c->optimizer = s->dflt_optimizer;
	if (!json_is_string(c->optimizer) && !json_is_object(c->optimizer))
		return tfk_errf(err, TFK_EINVAL, "%s: expected a name "
				"(\"adam\") or an object {\"class_name\": "
				"\"Adam\", \"config\": {...}}",
				c->optimizer_path);
	c->loss = get(cp, "loss");
	if (!c->loss)
		return tfk_errf(err, TFK_EINVAL, "%s: required (e.g. "
				"\"sparse_categorical_crossentropy\")",
				c->loss_path);
	c->loss_weights = get(cp, "loss_weights");
	c->metrics = get(cp, "metrics");
	if (!c->metrics)
		c->metrics = s->empty_array;
	if (!json_is_array(c->metrics) && !json_is_object(c->metrics))
		return tfk_errf(err, TFK_EINVAL, "%s: expected a list such as "
				"[\"accuracy\"] (or, for a model with several "
				"outputs, an object keyed by output name)",
				c->metrics_path);
	return 0;
}
