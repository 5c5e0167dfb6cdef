/*
 * adapt.c - tfk-train's layer.adapt() pass over the training records
 * (see adapt.h).
 *
 * Each layer to adapt becomes a one-layer tfk-map spec ({"features":
 * {F: [layer]}}) so that the statistics are learned by the very code
 * tfk-map --adapt uses (nn/preprocess.c's tadapt/ladapt/dadapt and
 * set_norm), then the keys it learned are copied back into the model's
 * layer config. The layer reads a model input, so its values are the
 * feature's own, converted as the feed converts them (scale, offset):
 * no graph has to run.
 *
 * Rejected: building the model graph up to the layer and running it on
 * every record (a layer behind other layers): the model cannot be built
 * before its vocabularies are known, and Keras users adapt on the raw
 * input almost always; tfk-map --adapt covers chains.
 */
#include "nn/adapt.h"
#include "nn/preprocess.h"
#include "example/example.h"
#include "io/record.h"
#include "util/alloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The layer object's config key that says it has nothing to learn. */
static int needs_adapt(const json_t *obj, const char **cls)
{
	const json_t *cfg = json_object_get(obj, "config");
	const json_t *v;

	*cls = json_string_value(json_object_get(obj, "class_name"));
	if (!*cls || !json_is_object(cfg))
		return 0;
	if (!strcmp(*cls, "TextVectorization") ||
	    !strcmp(*cls, "StringLookup") || !strcmp(*cls, "IntegerLookup")) {
		v = json_object_get(cfg, "vocabulary");
		return !v || json_is_null(v);
	}
	if (!strcmp(*cls, "Normalization")) {
		v = json_object_get(cfg, "mean");
		if (!v || json_is_null(v))
			return 1;
		v = json_object_get(cfg, "variance");
		return !v || json_is_null(v);
	}
	if (!strcmp(*cls, "Discretization")) {
		v = json_object_get(cfg, "bin_boundaries");
		return !v || json_is_null(v);
	}
	return 0;
}

static const char *layer_name(const json_t *obj)
{
	const char *n = json_string_value(json_object_get(obj, "name"));

	if (!n)
		n = json_string_value(json_object_get(json_object_get(obj,
						"config"), "name"));
	return n ? n : "";
}

/* The layer name of a Functional layer's first inbound tensor (Keras
 * 2's [[["in", 0, 0, {}]]] or Keras 3's [{"args": [{"class_name":
 * "__keras_tensor__", "config": {"keras_history": ["in", 0, 0]}}]}]),
 * or NULL. */
static const char *inbound(const json_t *obj)
{
	const json_t *n = json_array_get(json_object_get(obj,
							 "inbound_nodes"), 0);
	const json_t *a;

	if (json_is_array(n)) {
		a = json_array_get(n, 0);
		return json_string_value(json_array_get(a, 0));
	}
	a = json_array_get(json_object_get(n, "args"), 0);
	a = json_object_get(json_object_get(a, "config"), "keras_history");
	return json_string_value(json_array_get(a, 0));
}

/* The batch shape of an InputLayer (or a first layer's) config. */
static const json_t *batch_shape(const json_t *cfg)
{
	const json_t *b = json_object_get(cfg, "batch_input_shape");

	if (!b || json_is_null(b))
		b = json_object_get(cfg, "batch_shape");
	return json_is_array(b) ? b : NULL;
}

struct target {
	const char *input;	/* model input (InputLayer name) */
	const json_t *shape;	/* its batch shape, or NULL */
	char implicit[160];	/* a Sequential's implicit input name */
};

/* Which model input layer i reads; TFK_EINVAL when another layer. */
static int find_input(const json_t *model, size_t i, const char *where,
		      struct target *tg, struct tfk_err *err)
{
	const json_t *layers = json_object_get(json_object_get(model,
							       "config"),
					       "layers");
	const char *mcls = json_string_value(json_object_get(model,
							     "class_name"));
	const json_t *first = json_array_get(layers, 0);
	const char *fcls = json_string_value(json_object_get(first,
							     "class_name"));
	size_t k;

	if (mcls && !strcmp(mcls, "Sequential")) {
		int has_input = fcls && !strcmp(fcls, "InputLayer");

		if (i != (size_t)has_input)
			goto refuse;
		if (has_input) {
			tg->input = layer_name(first);
		} else {
			/* tf.keras names it "<first layer>_input" */
			snprintf(tg->implicit, sizeof(tg->implicit),
				 "%.120s_input", layer_name(first));
			tg->input = tg->implicit;
		}
		tg->shape = batch_shape(json_object_get(first, "config"));
		return 0;
	}
	tg->input = inbound(json_array_get(layers, i));
	for (k = 0; tg->input && k < json_array_size(layers); k++) {
		const json_t *l = json_array_get(layers, k);
		const char *c = json_string_value(json_object_get(l,
							  "class_name"));

		if (strcmp(layer_name(l), tg->input))
			continue;
		if (!c || strcmp(c, "InputLayer"))
			break;
		tg->shape = batch_shape(json_object_get(l, "config"));
		return 0;
	}
refuse:
	return tfk_errf(err, TFK_EINVAL, "%s: to be adapted by tfk-train, "
			"the layer must read a model input directly; give its "
			"vocabulary or statistics, or adapt it with tfk-map "
			"--adapt", where);
}

/* How the feed maps the input: its feature, dtype, scale, offset. */
struct mapping {
	const char *feature;
	const char *dtype;	/* NULL: by the feature's kind */
	double scale, offset;
};

static void input_mapping(const json_t *spec, const char *input,
			  struct mapping *m)
{
	const json_t *in = json_object_get(json_object_get(spec, "inputs"),
					   input);
	const json_t *v;

	m->feature = json_string_value(json_object_get(in, "feature"));
	if (!m->feature)
		m->feature = input;
	m->dtype = json_string_value(json_object_get(in, "dtype"));
	v = json_object_get(in, "scale");
	m->scale = json_is_number(v) ? json_number_value(v) : 1;
	v = json_object_get(in, "offset");
	m->offset = json_is_number(v) ? json_number_value(v) : 0;
}

/* One pass over the records: the state of the layer being adapted. */
struct pass {
	struct tfk_prep *p;
	int kind;
	struct mapping m;
	long nch;			/* Normalization: channels */
	double *mean, *m2, *cnt;
	struct tfk_prep_tadapt *t;
	struct tfk_prep_ladapt *l;
	struct tfk_prep_dadapt *d;
	float *fv;			/* a record's values as float32 */
	int64_t *iv;
	size_t cap;
	struct tfk_example ex;
};

/* A record's numeric values as float32 (after scale and offset, as the
 * feed converts them), in ps->fv; returns how many, or < 0. */
static long numbers(struct pass *ps, const struct tfk_feat *f,
		    struct tfk_err *err)
{
	size_t n = f->n, k;
	int bytes_f32 = 0;
	const uint8_t *b = NULL;
	size_t blen = 0, it = 0;

	if (f->kind == TFK_FEAT_BYTES) {
		if (!tfk_feat_bytes_next(f, &it, &b, &blen))
			blen = 0;
		bytes_f32 = ps->m.dtype && !strcmp(ps->m.dtype, "float32");
		if (ps->m.dtype && !bytes_f32 && strcmp(ps->m.dtype, "uint8") &&
		    strcmp(ps->m.dtype, "int8"))
			return tfk_errf(err, TFK_EINVAL, "feature '%s': bytes "
					"values with dtype %s are not numbers",
					ps->m.feature, ps->m.dtype);
		n = bytes_f32 ? blen / 4 : blen;
	} else if (f->kind != TFK_FEAT_FLOAT && f->kind != TFK_FEAT_INT64) {
		return tfk_errf(err, TFK_EINVAL, "feature '%s': no values",
				ps->m.feature);
	}
	if (n > ps->cap) {
		float *nf = tfk_realloc(ps->fv, n * sizeof(*nf));
		int64_t *ni;

		if (!nf)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		ps->fv = nf;
		ni = tfk_realloc(ps->iv, n * sizeof(*ni));
		if (!ni)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		ps->iv = ni;
		ps->cap = n;
	}
	if (f->kind == TFK_FEAT_FLOAT)
		tfk_feat_floats(f, ps->fv, n);
	for (k = 0; k < n; k++) {
		double v;

		if (f->kind == TFK_FEAT_FLOAT) {
			v = ps->fv[k];
		} else if (f->kind == TFK_FEAT_INT64) {
			if (k == 0)
				tfk_feat_int64s(f, ps->iv, n);
			v = (double)ps->iv[k];
		} else if (bytes_f32) {
			float x;

			memcpy(&x, b + 4 * k, 4);
			v = x;
		} else if (ps->m.dtype && !strcmp(ps->m.dtype, "int8")) {
			v = (int8_t)b[k];
		} else {
			v = b[k];
		}
		ps->fv[k] = (float)(v * ps->m.scale + ps->m.offset);
	}
	return (long)n;
}

static int norm_add(struct pass *ps, long n, struct tfk_err *err)
{
	long k;

	if (!ps->mean) {
		ps->mean = tfk_calloc((size_t)ps->nch, sizeof(double));
		ps->m2 = tfk_calloc((size_t)ps->nch, sizeof(double));
		ps->cnt = tfk_calloc((size_t)ps->nch, sizeof(double));
		if (!ps->mean || !ps->m2 || !ps->cnt)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	if (n % ps->nch)
		return tfk_errf(err, TFK_EINVAL, "feature '%s': %ld values, "
				"not a multiple of the last dimension %ld",
				ps->m.feature, n, ps->nch);
	/* Welford, per channel of the last axis, as tfk-map --adapt */
	for (k = 0; k < n; k++) {
		double v = ps->fv[k], d;
		long ch = k % ps->nch;

		ps->cnt[ch] += 1;
		d = v - ps->mean[ch];
		ps->mean[ch] += d / ps->cnt[ch];
		ps->m2[ch] += d * (v - ps->mean[ch]);
	}
	return 0;
}

static int add_record(struct pass *ps, const uint8_t *rec, size_t len,
		      struct tfk_err *err)
{
	const struct tfk_feat *f;
	const uint8_t *p;
	size_t it = 0, n, k;
	long nv;
	int rc;

	rc = tfk_example_parse(&ps->ex, rec, len, err);
	if (rc)
		return tfk_err_prefix(err, "bad tf.Example");
	f = tfk_example_find(&ps->ex, ps->m.feature);
	if (!f)
		return tfk_errf(err, TFK_EINVAL, "no feature '%s' (the "
				"spec's inputs.NAME.feature names another)",
				ps->m.feature);
	switch (ps->kind) {
	case TFK_PREP_ADAPT_TEXT:
		if (f->kind != TFK_FEAT_BYTES)
			return tfk_errf(err, TFK_EINVAL, "feature '%s': "
					"TextVectorization takes bytes (text)",
					ps->m.feature);
		while (tfk_feat_bytes_next(f, &it, &p, &n))
			if ((rc = tfk_prep_tadapt_add(ps->t, (const char *)p,
						      n, err)))
				return rc;
		return 0;
	case TFK_PREP_ADAPT_LOOKUP:
		if (tfk_prep_ladapt_is_int(ps->l)) {
			if (f->kind != TFK_FEAT_INT64)
				return tfk_errf(err, TFK_EINVAL, "feature "
						"'%s': IntegerLookup takes "
						"int64 values", ps->m.feature);
			if ((nv = numbers(ps, f, err)) < 0)
				return (int)nv;
			for (k = 0; k < (size_t)nv; k++)
				if ((rc = tfk_prep_ladapt_add_int(ps->l,
						ps->iv[k], err)))
					return rc;
		} else {
			if (f->kind != TFK_FEAT_BYTES)
				return tfk_errf(err, TFK_EINVAL, "feature "
						"'%s': StringLookup takes "
						"bytes values", ps->m.feature);
			while (tfk_feat_bytes_next(f, &it, &p, &n))
				if ((rc = tfk_prep_ladapt_add(ps->l, p, n,
							      err)))
					return rc;
		}
		tfk_prep_ladapt_end_doc(ps->l);
		return 0;
	case TFK_PREP_ADAPT_DISC:
		if ((nv = numbers(ps, f, err)) < 0)
			return (int)nv;
		rc = tfk_prep_dadapt_update(ps->d, ps->fv, (size_t)nv, err);
		return rc ? tfk_err_prefix(err, "feature '%s'",
					   ps->m.feature) : 0;
	default:
		if ((nv = numbers(ps, f, err)) < 0)
			return (int)nv;
		return norm_add(ps, nv, err);
	}
}

/* Read the records into the pass; how many were read, or < 0. */
static long read_records(struct pass *ps, const char *const *files,
			 size_t n_files, long max_records, struct tfk_err *err)
{
	long total = 0;
	size_t i;
	int rc = 0;

	for (i = 0; i < n_files && (!max_records || total < max_records);
	     i++) {
		struct tfk_rec_reader *r;
		struct tfk_rec rec;

		rc = tfk_rec_open(&r, files[i], TFK_COMP_AUTO, 0, err);
		if (rc)
			return rc;
		while ((!max_records || total < max_records) &&
		       (rc = tfk_rec_next(r, &rec, err)) == 1) {
			total++;
			rc = add_record(ps, rec.data, rec.len, err);
			if (rc) {
				tfk_err_prefix(err, "%s: record %" PRIu64,
					       files[i], rec.index);
				break;
			}
		}
		tfk_rec_close(r);
		if (rc < 0)
			return rc;
	}
	return total;
}

static int finish(struct pass *ps, struct tfk_err *err)
{
	long k;

	switch (ps->kind) {
	case TFK_PREP_ADAPT_TEXT:
		return tfk_prep_tadapt_finish(ps->t, err);
	case TFK_PREP_ADAPT_LOOKUP:
		return tfk_prep_ladapt_finish(ps->l, err);
	case TFK_PREP_ADAPT_DISC:
		return tfk_prep_dadapt_finish(ps->d, err);
	}
	if (!ps->mean)
		return tfk_errf(err, TFK_EINVAL, "feature '%s': no values to "
				"adapt from", ps->m.feature);
	for (k = 0; k < ps->nch; k++)
		ps->m2[k] = ps->cnt[k] > 0 ? ps->m2[k] / ps->cnt[k] : 0;
	return tfk_prep_set_norm(ps->p, 0, 0, ps->mean, ps->m2, (int)ps->nch,
				 err);
}

/* Copy what the tfk-map layer learned into the model layer's config. */
static int copy_learned(struct tfk_prep *p, const char *feature,
			json_t *cfg, struct tfk_err *err)
{
	static const char *const keys[] = { "vocabulary", "idf_weights",
		"mean", "variance", "bin_boundaries" };
	char *text = tfk_prep_dump(p);
	json_t *root = text ? json_loads(text, 0, NULL) : NULL, *lc;
	size_t k;
	int rc = 0;

	free(text);
	lc = json_object_get(json_array_get(json_object_get(json_object_get(
		json_object_get(root, "features"), feature), "layers"), 0),
		"config");
	if (!lc)
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (k = 0; !rc && k < sizeof(keys) / sizeof(keys[0]); k++) {
		json_t *v = json_object_get(lc, keys[k]);

		if (v && !json_is_null(v) && json_object_set(cfg, keys[k], v))
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	/* Keras' get_config vocabulary_size: len(get_vocabulary()) */
	lc = json_object_get(cfg, "vocabulary");
	if (!rc && json_is_array(lc) && json_object_get(cfg,
							"vocabulary_size") &&
	    json_object_set_new(cfg, "vocabulary_size",
				json_integer((json_int_t)json_array_size(lc))))
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
	json_decref(root);
	return rc;
}

static int adapt_layer(json_t *spec, json_t *obj, const char *where,
		       const struct target *tg, const char *const *files,
		       size_t n_files, long max_records, struct tfk_err *err)
{
	struct pass ps;
	json_t *pspec = NULL, *chain;
	const json_t *last;
	char *text = NULL;
	int rc, ch, ly;
	long n;

	memset(&ps, 0, sizeof(ps));
	tfk_example_init(&ps.ex);
	input_mapping(spec, tg->input, &ps.m);
	/* the layer as tfk-map takes it: its class and config only */
	chain = json_pack("{s[{sOsO}]}", "layers", "class_name",
			  json_object_get(obj, "class_name"), "config",
			  json_object_get(obj, "config"));
	pspec = chain ? json_pack("{s{so}}", "features", ps.m.feature,
				  chain) : NULL;
	text = pspec ? json_dumps(pspec, JSON_COMPACT) : NULL;
	rc = text ? tfk_prep_parse(&ps.p, where, text, strlen(text), err) :
		tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (rc)
		goto out;
	ps.kind = tfk_prep_next_adapt(ps.p, &ch, &ly);
	switch (ps.kind) {
	case TFK_PREP_ADAPT_TEXT:
		rc = tfk_prep_tadapt_new(ps.p, 0, 0, &ps.t, err);
		break;
	case TFK_PREP_ADAPT_LOOKUP:
		rc = tfk_prep_ladapt_new(ps.p, 0, 0, &ps.l, err);
		break;
	case TFK_PREP_ADAPT_DISC:
		rc = tfk_prep_dadapt_new(ps.p, 0, 0, &ps.d, err);
		break;
	case TFK_PREP_ADAPT_NORM:
		last = tg->shape && json_array_size(tg->shape) > 1 ?
			json_array_get(tg->shape, json_array_size(tg->shape) -
				       1) : NULL;
		if (tg->shape && json_array_size(tg->shape) > 1 &&
		    !json_is_integer(last)) {
			rc = tfk_errf(err, TFK_EINVAL, "%s: input %s: the last "
				      "dimension must be known to adapt",
				      where, tg->input);
			goto out;
		}
		ps.nch = tfk_prep_adapt_n(ps.p, 0, 0, last ?
					  json_integer_value(last) : 1);
		if (ps.nch < 1)
			rc = tfk_errf(err, TFK_EINVAL, "%s: cannot adapt along "
				      "this axis", where);
		break;
	default:
		rc = tfk_errf(err, TFK_EINVAL, "%s: nothing to adapt", where);
	}
	if (rc)
		goto out;
	n = read_records(&ps, files, n_files, max_records, err);
	if (n < 0) {
		rc = (int)n;
		tfk_err_prefix(err, "adapting %s", where);
		goto out;
	}
	if (n == 0) {
		rc = tfk_errf(err, TFK_EINVAL, "%s: no training records to "
			      "adapt from", where);
		goto out;
	}
	rc = finish(&ps, err);
	if (rc) {
		tfk_err_prefix(err, "adapting %s", where);
		goto out;
	}
	rc = copy_learned(ps.p, ps.m.feature, json_object_get(obj, "config"),
			  err);
out:
	tfk_prep_tadapt_free(ps.t);
	tfk_prep_ladapt_free(ps.l);
	tfk_prep_dadapt_free(ps.d);
	tfk_prep_free(ps.p);
	tfk_example_release(&ps.ex);
	tfk_free(ps.mean);
	tfk_free(ps.m2);
	tfk_free(ps.cnt);
	tfk_free(ps.fv);
	tfk_free(ps.iv);
	free(text);
	json_decref(pspec);
	return rc;
}

int tfk_keras_adapt_needed(const json_t *spec)
{
	const json_t *layers = json_object_get(json_object_get(
		json_object_get(spec, "model"), "config"), "layers");
	const char *cls;
	size_t i;
	int n = 0;

	for (i = 0; i < json_array_size(layers); i++)
		n += needs_adapt(json_array_get(layers, i), &cls);
	return n;
}

int tfk_keras_adapt(json_t *spec, const char *name, const char *const *files,
		    size_t n_files, long max_records, int *n_adapted,
		    struct tfk_err *err)
{
	json_t *model = json_object_get(spec, "model");
	json_t *layers = json_object_get(json_object_get(model, "config"),
					 "layers");
	size_t i, k;
	int rc;

	*n_adapted = 0;
	for (i = 0; i < json_array_size(layers); i++) {
		json_t *obj = json_array_get(layers, i);
		struct target tg = { NULL, NULL, "" };
		const char *cls;
		char where[300];

		if (!needs_adapt(obj, &cls))
			continue;
		snprintf(where, sizeof(where), "%s: model.config.layers[%zu] "
			 "(%s '%.100s')", name, i, cls, layer_name(obj));
		for (k = 0; k < n_files; k++)
			if (!strcmp(files[k], "-"))
				return tfk_errf(err, TFK_EINVAL, "%s: adapting "
						"reads the training records "
						"once per layer: give them as "
						"files, not a stream on stdin",
						where);
		if (!n_files)
			return tfk_errf(err, TFK_EINVAL, "%s: adapting reads "
					"the training records once per layer: "
					"give them as files, not a stream on "
					"stdin", where);
		if ((rc = find_input(model, i, where, &tg, err)) ||
		    (rc = adapt_layer(spec, obj, where, &tg, files, n_files,
				      max_records, err)))
			return rc;
		++*n_adapted;
	}
	return 0;
}
