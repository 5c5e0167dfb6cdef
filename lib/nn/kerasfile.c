/*
 * kerasfile.c - a Keras model file's weights onto a tfkit model, and
 * its config as a training spec (see kerasfile.h).
 *
 * The mapping works per layer: the model's variables are grouped by
 * the layer part of their names, in graph order (the order the layer
 * made them, which is Keras' creation order). Everything is checked
 * before the first copy, so a mismatch leaves the model as it was.
 */
#include "nn/kerasfile.h"
#include "graph/graph.h"
#include "util/alloc.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Is var_name "<layer>/..."? */
static int of_layer(const char *var_name, const char *layer)
{
	size_t n = strlen(layer);

	return !strncmp(var_name, layer, n) && var_name[n] == '/';
}

/* Keras' naming.to_snake_case of a class name: "BatchNormalization" ->
 * "batch_normalization", "Conv2D" -> "conv2d", "LSTM" -> "lstm". */
static void snake(const char *c, char *out, size_t n)
{
	size_t k = 0, len = strlen(c);

	for (size_t i = 0; i < len && k + 2 < n; i++) {
		int up = isupper((unsigned char)c[i]);
		/* "(.)([A-Z][a-z]+)" and "([a-z])([A-Z])" get a '_' between */
		int cut = i && up && ((i + 1 < len &&
				       islower((unsigned char)c[i + 1])) ||
				      islower((unsigned char)c[i - 1]));

		if (!isalnum((unsigned char)c[i]) && c[i] != '_')
			continue;
		if (cut && k && out[k - 1] != '_')
			out[k++] = '_';
		out[k++] = (char)tolower((unsigned char)c[i]);
	}
	out[k] = '\0';
}

/*
 * The model's name of the layer a Keras 3 file keys as key: the file
 * names the layers of model.layers by their class (snake case, "_1",
 * "_2" for repeats: saving_lib's container naming), not by the names
 * the user gave them. NULL when no layer of the config has that key.
 */
static const char *layer_of_key(const struct tfk_kerasfile *kf,
				const char *key);

/* The key a Keras 3 file gives layer i of layers (into key[n]): its
 * class in snake case, "_N" after it for the N-th earlier layer of the
 * same class ("dense", "dense_1"). 0 when the layer has no class. */
static int class_key(json_t *layers, size_t i, char *key, size_t n)
{
	const char *cls = json_string_value(json_object_get(
		json_array_get(layers, i), "class_name"));
	char mine[128], other[128];
	int seen = 0;
	size_t j;

	if (!cls)
		return 0;
	snake(cls, mine, sizeof(mine));
	for (j = 0; j < i; j++) {
		const char *c2 = json_string_value(json_object_get(
			json_array_get(layers, j), "class_name"));

		if (!c2)
			continue;
		snake(c2, other, sizeof(other));
		seen += !strcmp(mine, other);
	}
	if (seen)
		snprintf(key, n, "%s_%d", mine, seen);
	else
		snprintf(key, n, "%s", mine);
	return 1;
}

/* The other way: the key a Keras 3 file gives layer nm (into key[n]),
 * or 0 when the config has no such layer. */
static int key_of_layer(const struct tfk_kerasfile *kf, const char *nm,
			char *key, size_t n)
{
	json_t *layers = json_object_get(json_object_get(kf->model, "config"),
					 "layers"), *l;
	size_t i;

	json_array_foreach(layers, i, l) {
		const char *ln = json_string_value(json_object_get(
			json_object_get(l, "config"), "name"));

		if (ln && !strcmp(ln, nm))
			return class_key(layers, i, key, n);
	}
	return 0;
}

static const char *layer_of_key(const struct tfk_kerasfile *kf,
				const char *key)
{
	json_t *layers = json_object_get(json_object_get(kf->model, "config"),
					 "layers"), *l;
	size_t i;

	json_array_foreach(layers, i, l) {
		const char *nm = json_string_value(json_object_get(
			json_object_get(l, "config"), "name"));
		char k[160];

		if (nm && class_key(layers, i, k, sizeof(k)) && !strcmp(k, key))
			return nm;
	}
	return NULL;
}

static void shape_str(const struct tfk_tensor *t, char *buf, size_t n)
{
	tfk_shape_str(t->rank, t->shape, buf, n);
}

int tfk_kerasfile_apply(const struct tfk_kerasfile *kf, const char *path,
			struct tfk_model *m, struct tfk_err *err)
{
	struct tfk_graph *g = m->g;
	int nv = tfk_graph_n_variables(g), rc = 0, i, j, k;
	const struct tfk_tensor **src = tfk_calloc((size_t)nv + 1,
						   sizeof(*src));

	if (!src)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (i = 0; !rc && i < kf->n_layers; i++) {
		const struct tfk_keras_layer *l = &kf->layers[i];
		const char *name = kf->legacy ? NULL : layer_of_key(kf, l->name);
		int n_model = 0;

		if (!name)
			name = l->name;
		for (k = 0; k < nv; k++) {
			const char *vn;

			tfk_graph_var_at(g, k, &vn);
			n_model += of_layer(vn, name);
		}
		if (!n_model) {
			rc = tfk_errf(err, TFK_EINVAL, "%s: layer '%s' has %d "
				      "weights in the file, the model has no "
				      "variables of that layer", path, l->name,
				      l->n_w);
			break;
		}
		if (n_model != l->n_w) {
			rc = tfk_errf(err, TFK_EINVAL, "%s: layer '%s' has %d "
				      "weights in the file, %d in the model",
				      path, l->name, l->n_w, n_model);
			break;
		}
		for (j = 0; !rc && j < l->n_w; j++) {
			const struct tfk_keras_weight *w = &l->w[j];
			struct tfk_tensor *dst = NULL;
			const char *vn = NULL;
			char a[80], b[80];
			int nth = 0;

			for (k = 0; k < nv; k++) {
				struct tfk_tensor *t = tfk_graph_var_at(g, k,
									&vn);

				if (!of_layer(vn, name))
					continue;
				if (kf->legacy ? !strcmp(vn, w->name) :
				    nth == j) {
					dst = t;
					break;
				}
				nth++;
			}
			if (!dst) {
				rc = tfk_errf(err, TFK_EINVAL, "%s: layer '%s': "
					      "weight %s is not a variable of "
					      "the model", path, l->name,
					      w->name);
				break;
			}
			if (src[k]) {
				rc = tfk_errf(err, TFK_EINVAL, "%s: layer '%s': "
					      "weight %s given twice", path,
					      l->name, w->name);
				break;
			}
			if (w->t.dtype != dst->dtype ||
			    !tfk_shape_equal(w->t.rank, w->t.shape, dst->rank,
					     dst->shape)) {
				shape_str(&w->t, a, sizeof(a));
				shape_str(dst, b, sizeof(b));
				rc = tfk_errf(err, TFK_EINVAL, "%s: layer '%s': "
					      "%s is %s %s in the file, the "
					      "model's %s is %s %s", path,
					      l->name, w->name,
					      tfk_dtype_name(w->t.dtype), a,
					      vn, tfk_dtype_name(dst->dtype),
					      b);
				break;
			}
			src[k] = &w->t;
		}
	}
	for (k = 0; !rc && k < nv; k++) {
		const char *vn;

		tfk_graph_var_at(g, k, &vn);
		if (!src[k])
			rc = tfk_errf(err, TFK_EINVAL, "%s: the model's "
				      "variable '%s' is not in the file",
				      path, vn);
	}
	for (k = 0; !rc && k < nv; k++) {
		struct tfk_tensor *t = tfk_graph_var_at(g, k, NULL);

		memcpy(t->data, src[k]->data, t->nbytes);
	}
	tfk_free(src);
	return rc;
}

/* A metric as tf_keras serializes a string one, {"class_name":
 * "MeanMetricWrapper", "config": {"name": "accuracy", "fn": ...}}, is
 * that string; others pass unchanged (borrowed). */
static json_t *metric_of(json_t *e)
{
	json_t *cfg = json_object_get(e, "config"),
	       *nm = json_object_get(cfg, "name");

	if (json_is_string(json_object_get(e, "class_name")) &&
	    !strcmp(json_string_value(json_object_get(e, "class_name")),
		    "MeanMetricWrapper") && json_is_string(nm))
		return nm;
	return e;
}

/* The name of output i of the model config ("output_layers": [[name,
 * 0, 0], ...]), or NULL. */
static const char *output_name(const struct tfk_kerasfile *kf, size_t i)
{
	json_t *cfg = json_object_get(kf->model, "config");
	json_t *o = json_array_get(json_object_get(cfg, "output_layers"), i);

	return json_string_value(json_array_get(o, 0));
}

/* tf_keras names an output's metric "<output>_<name>" in its
 * training_config: the name as compile() was given it. A new
 * reference, or NULL when out of memory. */
static json_t *metric_of_output(const struct tfk_kerasfile *kf, size_t o,
				json_t *e)
{
	const char *on = output_name(kf, o), *nm;
	size_t len;

	e = metric_of(e);
	nm = json_string_value(e);
	len = on ? strlen(on) : 0;
	if (nm && on && !strncmp(nm, on, len) && nm[len] == '_')
		return json_string(nm + len + 1);
	return json_incref(e);
}

/* The spec's "compile" from Keras 3's compile_config or tf_keras'
 * training_config. Several outputs: loss and loss_weights as they are
 * (lists or objects keyed by output); metrics an object (Keras 3) or a
 * list of lists (both; tf_keras' names lose their output prefix). */
static int compile_of(const struct tfk_kerasfile *kf, const char *path,
		      json_t *c, struct tfk_err *err)
{
	const json_t *cc = kf->compile, *v;
	json_t *cfg = json_object_get(kf->model, "config");
	size_t n_out = json_array_size(json_object_get(cfg, "output_layers"));

	v = json_object_get(cc, kf->legacy ? "optimizer_config" :
			    "optimizer");
	if (v && !json_is_null(v) && json_object_set(c, "optimizer",
						     (json_t *)v))
		return TFK_ENOMEM;
	v = json_object_get(cc, "loss");
	if (v && !json_is_null(v) && json_object_set(c, "loss", (json_t *)v))
		return TFK_ENOMEM;
	v = json_object_get(cc, "metrics");
	if (json_is_array(v) && n_out > 1) {
		json_t *ms = json_array();
		size_t i, j;

		if (!ms || json_object_set_new(c, "metrics", ms))
			return TFK_ENOMEM;
		for (i = 0; i < json_array_size(v); i++) {
			json_t *e = json_array_get(v, i), *l;

			if (!json_is_array(e)) {
				if (json_array_append_new(ms, json_is_null(e) ?
					json_null() : metric_of_output(kf, i, e)))
					return TFK_ENOMEM;
				continue;
			}
			l = json_array();
			if (!l || json_array_append_new(ms, l))
				return TFK_ENOMEM;
			for (j = 0; j < json_array_size(e); j++)
				if (json_array_append_new(l, metric_of_output(
					kf, i, json_array_get(e, j))))
					return TFK_ENOMEM;
		}
	} else if (json_is_array(v)) {
		json_t *ms = json_array();
		size_t i;

		if (!ms || json_object_set_new(c, "metrics", ms))
			return TFK_ENOMEM;
		for (i = 0; i < json_array_size(v); i++) {
			json_t *e = json_array_get(v, i);

			/* tf_keras nests a list per output */
			if (json_is_array(e) && json_array_size(v) == 1) {
				size_t j;

				for (j = 0; j < json_array_size(e); j++)
					if (json_array_append(ms, metric_of(
						json_array_get(e, j))))
						return TFK_ENOMEM;
			} else if (json_array_append(ms, metric_of(e))) {
				return TFK_ENOMEM;
			}
		}
	} else if (json_is_object(v)) {
		json_t *ms = json_object(), *e;
		const char *key;

		if (!ms || json_object_set_new(c, "metrics", ms))
			return TFK_ENOMEM;
		json_object_foreach((json_t *)v, key, e) {
			json_t *l = e;

			if (json_is_array(e)) {
				size_t j;

				if (!(l = json_array()))
					return TFK_ENOMEM;
				for (j = 0; j < json_array_size(e); j++)
					json_array_append(l, metric_of(
						json_array_get(e, j)));
			} else {
				json_incref(l = metric_of(e));
			}
			if (json_object_set_new(ms, key, l))
				return TFK_ENOMEM;
		}
	}
	v = json_object_get(cc, "loss_weights");
	if (v && !json_is_null(v) &&
	    json_object_set(c, "loss_weights", (json_t *)v))
		return TFK_ENOMEM;
	v = json_object_get(cc, "weighted_metrics");
	if (v && !json_is_null(v) && !(json_is_array(v) &&
				       !json_array_size(v)))
		return tfk_errf(err, TFK_EINVAL, "%s: compile "
				"weighted_metrics: not supported", path);
	return 0;
}

int tfk_kerasfile_spec(const struct tfk_kerasfile *kf, const char *path,
		       struct tfk_spec **s, struct tfk_err *err)
{
	json_t *root = json_object(), *c = json_object();
	char name[600], *text = NULL;
	int rc = TFK_ENOMEM;

	*s = NULL;
	if (root && c && !json_object_set(root, "model", kf->model)) {
		rc = kf->compile ? compile_of(kf, path, c, err) : 0;
		if (!rc && json_object_size(c) &&
		    json_object_set(root, "compile", c))
			rc = TFK_ENOMEM;
		if (!rc)
			text = json_dumps(root, JSON_PRESERVE_ORDER |
					  JSON_COMPACT);
		if (!rc && !text)
			rc = TFK_ENOMEM;
	}
	json_decref(root);
	json_decref(c);
	if (rc == TFK_ENOMEM)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (rc)
		return rc;
	snprintf(name, sizeof(name), "%s: config", path);
	rc = tfk_spec_parse(s, name, text, strlen(text), err);
	free(text);
	return rc;
}

/* v (new reference) with the "module" Keras 3's safe deserialization
 * needs to find a built-in class ({"class_name": "Adam", "config":
 * ...} is refused without it); names and other values as they are. */
static json_t *keras3_object(json_t *v, const char *module)
{
	json_t *c;

	if (!json_is_object(v) || json_object_get(v, "module"))
		return json_incref(v);
	c = json_copy(v);
	if (c && (json_object_set_new(c, "module", json_string(module)) ||
		  json_object_set_new(c, "registered_name", json_null()))) {
		json_decref(c);
		return NULL;
	}
	return c;
}

int tfk_kerasfile_of_model(struct tfk_model *m, const json_t *model,
			   const json_t *compile, struct tfk_kerasfile **out,
			   struct tfk_err *err)
{
	struct tfk_kerasfile *kf = tfk_calloc(1, sizeof(*kf));
	int nv = tfk_graph_n_variables(m->g), k;

	*out = NULL;
	if (!kf)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	kf->model = json_deep_copy(model);
	if (compile) {
		json_t *opt = json_object_get(compile, "optimizer"), *loss;

		/* compile()'s default optimizer, as the spec's */
		opt = opt ? keras3_object(opt, "keras.optimizers") :
			json_string("rmsprop");
		kf->compile = json_pack("{s:o,s:O,s:O,s:O,s:n,s:b,s:i,s:b}",
					"optimizer", opt,
					"loss", loss = keras3_object(
						json_object_get(compile,
								"loss"),
						"keras.losses"),
					"metrics", json_object_get(compile,
								   "metrics") ?
					json_object_get(compile, "metrics") :
					json_null(), "loss_weights",
					json_object_get(compile,
							"loss_weights") ?
					json_object_get(compile,
							"loss_weights") :
					json_null(),
					"weighted_metrics", "run_eagerly", 0,
					"steps_per_execution", 1,
					"jit_compile", 0);
		json_decref(loss);
	}
	if (!kf->model || (compile && !kf->compile))
		goto oom;
	for (k = 0; k < nv; k++) {
		struct tfk_tensor *t;
		struct tfk_keras_layer *l = NULL;
		struct tfk_keras_weight *w;
		const char *vn, *slash;
		char layer[256], wn[64];
		int i, sub, nth = 0;

		t = tfk_graph_var_at(m->g, k, &vn);
		slash = strchr(vn, '/');
		if (!slash)
			continue;
		snprintf(layer, sizeof(layer), "%.*s", (int)(slash - vn), vn);
		sub = strchr(slash + 1, '/') != NULL;
		for (i = 0; i < kf->n_layers; i++)
			if (!strcmp(kf->layers[i].name, layer))
				l = &kf->layers[i];
		if (!l) {
			l = tfk_realloc(kf->layers, (size_t)(kf->n_layers + 1) *
					sizeof(*l));
			if (!l)
				goto oom;
			kf->layers = l;
			l = &kf->layers[kf->n_layers];
			memset(l, 0, sizeof(*l));
			if (!(l->name = tfk_strdup(layer)))
				goto oom;
			kf->n_layers++;
		}
		for (i = 0; i < l->n_w; i++)
			nth += (strncmp(l->w[i].name, "cell/", 5) == 0) == sub;
		snprintf(wn, sizeof(wn), "%svars/%d", sub ? "cell/" : "", nth);
		w = tfk_realloc(l->w, (size_t)(l->n_w + 1) * sizeof(*w));
		if (!w)
			goto oom;
		l->w = w;
		w = &l->w[l->n_w];
		memset(w, 0, sizeof(*w));
		if (!(w->name = tfk_strdup(wn)))
			goto oom;
		if (tfk_tensor_init(&w->t, t->dtype, t->rank, t->shape, err)) {
			tfk_free(w->name);
			tfk_kerasfile_free(kf);
			return err->code;
		}
		memcpy(w->t.data, t->data, t->nbytes);
		l->n_w++;
	}
	/* a Keras 3 file keys layers by class, not by the names given
	 * ("a" is "dense_1" when it is model.layers' second Dense), as
	 * the reader (layer_of_key) expects */
	for (k = 0; k < kf->n_layers; k++) {
		char key[160], *c;

		if (!key_of_layer(kf, kf->layers[k].name, key, sizeof(key)) ||
		    !strcmp(key, kf->layers[k].name))
			continue;
		if (!(c = tfk_strdup(key)))
			goto oom;
		tfk_free(kf->layers[k].name);
		kf->layers[k].name = c;
	}
	*out = kf;
	return 0;
oom:
	tfk_kerasfile_free(kf);
	return tfk_errf(err, TFK_ENOMEM, "out of memory");
}
