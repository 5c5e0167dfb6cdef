/*
 * keras.c - read Keras 3 .keras archives and tf_keras .h5 files (see
 * keras.h for both layouts).
 *
 * The whole file is read into memory and HDF5 opens it as a file image
 * (the core driver), so the zip member needs no temporary file and one
 * code path serves files, archives and the fuzzer. The JSON parts stay
 * jansson objects: lib/nn builds the model from them.
 *
 * Rejected: HDF5's high-level library (H5LT) for the file image and the
 * attribute strings; it is a second library for two calls.
 */
#include "format/keras.h"
#include "io/in.h"
#include "io/out.h"
#include "util/alloc.h"

#include <archive.h>
#include <archive_entry.h>
#include <hdf5.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Members and weights beyond these are not a model this trains. */
#define MAX_MEMBER (1ull << 32)
#define MAX_LAYERS 100000
#define MAX_DEPTH 8

static const unsigned char hdf5_sig[8] = {
	0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'
};

int tfk_kerasfile_sniff(const void *p, size_t n)
{
	return (n >= 4 && !memcmp(p, "PK\3\4", 4)) ||
	       (n >= 8 && !memcmp(p, hdf5_sig, 8));
}

void tfk_kerasfile_free(struct tfk_kerasfile *kf)
{
	if (!kf)
		return;
	for (int i = 0; i < kf->n_layers; i++) {
		struct tfk_keras_layer *l = &kf->layers[i];

		for (int j = 0; j < l->n_w; j++) {
			tfk_free(l->w[j].name);
			tfk_tensor_release(&l->w[j].t);
		}
		tfk_free(l->w);
		tfk_free(l->name);
	}
	tfk_free(kf->layers);
	tfk_free(kf->version);
	json_decref(kf->model);
	json_decref(kf->compile);
	tfk_free(kf);
}

const struct tfk_keras_layer *tfk_kerasfile_layer(
	const struct tfk_kerasfile *kf, const char *name)
{
	for (int i = 0; i < kf->n_layers; i++)
		if (!strcmp(kf->layers[i].name, name))
			return &kf->layers[i];
	return NULL;
}

/* HDF5 ------------------------------------------------------------------- */

/* The reading context: where messages point. */
struct h5 {
	hid_t f;
	const char *name;	/* "m.keras: model.weights.h5" or "m.h5" */
	struct tfk_kerasfile *kf;
	struct tfk_err *err;
};

static int h5_bad(struct h5 *h, const char *obj, const char *what)
{
	return tfk_errf(h->err, TFK_ECORRUPT, "%s: %s: %s", h->name, obj,
			what);
}

static hid_t h5_open_image(const void *data, size_t n)
{
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f = -1;

	if (fapl < 0)
		return -1;
	if (H5Pset_fapl_core(fapl, 1 << 16, 0) >= 0 &&
	    H5Pset_file_image(fapl, (void *)data, n) >= 0)
		f = H5Fopen("image.h5", H5F_ACC_RDONLY, fapl);
	H5Pclose(fapl);
	return f;
}

/*
 * The strings of attribute `attr` of obj (scalar or 1-D; variable or
 * fixed length) into a NULL-terminated array of *n (free with
 * strv_free). where names obj in messages.
 */
static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		tfk_free(v[i]);
	tfk_free(v);
}

static int h5_strings(struct h5 *h, hid_t obj, const char *where,
		      const char *attr, hssize_t max, char ***out,
		      size_t *n_out)
{
	hid_t a = -1, ft = -1, mt = -1, sp = -1;
	hssize_t n = 0;
	size_t size = 0, i;
	char **v = NULL, msg[160], *fixed = NULL;
	int rc = 0, vlen;

	*out = NULL;
	*n_out = 0;
	snprintf(msg, sizeof(msg), "attribute %s", attr);
	if (H5Aexists(obj, attr) <= 0)
		return tfk_errf(h->err, TFK_ECORRUPT, "%s: %s: no %s", h->name,
				where, msg);
	a = H5Aopen(obj, attr, H5P_DEFAULT);
	ft = a < 0 ? -1 : H5Aget_type(a);
	sp = a < 0 ? -1 : H5Aget_space(a);
	/* h5py writes an empty list as an empty float64 array */
	if (a >= 0 && ft >= 0 && sp >= 0 && H5Tget_class(ft) != H5T_STRING &&
	    H5Sget_simple_extent_ndims(sp) == 1 &&
	    H5Sget_simple_extent_npoints(sp) == 0) {
		v = tfk_calloc(1, sizeof(char *));
		rc = v ? 0 : tfk_errf(h->err, TFK_ENOMEM, "out of memory");
		goto out;
	}
	if (a < 0 || ft < 0 || sp < 0 || H5Tget_class(ft) != H5T_STRING ||
	    H5Sget_simple_extent_ndims(sp) > 1 ||
	    (n = H5Sget_simple_extent_npoints(sp)) < 0 || n > max) {
		rc = tfk_errf(h->err, TFK_ECORRUPT, "%s: %s: %s: not a string "
			      "or a list of strings", h->name, where, msg);
		goto out;
	}
	vlen = H5Tis_variable_str(ft) > 0;
	size = H5Tget_size(ft);
	mt = H5Tcopy(H5T_C_S1);
	v = tfk_calloc((size_t)n + 1, sizeof(char *));
	if (mt < 0 || !v) {
		rc = tfk_errf(h->err, TFK_ENOMEM, "out of memory");
		goto out;
	}
	H5Tset_cset(mt, H5Tget_cset(ft));
	if (vlen) {
		H5Tset_size(mt, H5T_VARIABLE);
		if (H5Aread(a, mt, v) < 0) {
			memset(v, 0, ((size_t)n + 1) * sizeof(char *));
			rc = h5_bad(h, where, "unreadable string attribute");
			goto out;
		}
		/* HDF5's strings into ours (a NULL one is empty) */
		for (i = 0; i < (size_t)n; i++) {
			char *s = tfk_strdup(v[i] ? v[i] : "");

			if (v[i])
				H5free_memory(v[i]);
			v[i] = s;
			if (!s)
				rc = tfk_errf(h->err, TFK_ENOMEM,
					      "out of memory");
		}
	} else {
		if (!size || size > (1u << 24)) {
			rc = h5_bad(h, where, "absurd string size");
			goto out;
		}
		H5Tset_size(mt, size);
		fixed = tfk_malloc((size_t)n * size + 1);
		if (!fixed) {
			rc = tfk_errf(h->err, TFK_ENOMEM, "out of memory");
			goto out;
		}
		if (H5Aread(a, mt, fixed) < 0) {
			rc = h5_bad(h, where, "unreadable string attribute");
			goto out;
		}
		for (i = 0; i < (size_t)n && !rc; i++) {
			const char *s = fixed + i * size;
			size_t len = strnlen(s, size);

			v[i] = tfk_malloc(len + 1);
			if (!v[i]) {
				rc = tfk_errf(h->err, TFK_ENOMEM,
					      "out of memory");
				break;
			}
			memcpy(v[i], s, len);
			v[i][len] = '\0';
		}
	}
out:
	tfk_free(fixed);
	if (mt >= 0)
		H5Tclose(mt);
	if (sp >= 0)
		H5Sclose(sp);
	if (ft >= 0)
		H5Tclose(ft);
	if (a >= 0)
		H5Aclose(a);
	if (rc) {
		strv_free(v);
		return rc;
	}
	*out = v;
	*n_out = (size_t)n;
	return 0;
}

/* Dataset `path` (relative to loc) into *t. where: its full name. */
static int h5_tensor(struct h5 *h, hid_t loc, const char *path,
		     const char *where, struct tfk_tensor *t)
{
	hid_t d, sp = -1, ty = -1;
	hsize_t dims[TFK_MAX_RANK];
	int64_t shape[TFK_MAX_RANK];
	int rank = -1, rc = 0, i;
	H5T_class_t cls = H5T_NO_CLASS;

	memset(t, 0, sizeof(*t));
	d = H5Dopen2(loc, path, H5P_DEFAULT);
	if (d < 0)
		return h5_bad(h, where, "not a dataset");
	sp = H5Dget_space(d);
	ty = H5Dget_type(d);
	if (sp >= 0)
		rank = H5Sget_simple_extent_ndims(sp);
	if (ty >= 0)
		cls = H5Tget_class(ty);
	if (rank < 0 || ty < 0) {
		rc = h5_bad(h, where, "unreadable dataspace or type");
		goto out;
	}
	if (rank > TFK_MAX_RANK) {
		rc = tfk_errf(h->err, TFK_EINVAL, "%s: %s: rank %d: at most "
			      "%d is supported", h->name, where, rank,
			      TFK_MAX_RANK);
		goto out;
	}
	if (cls != H5T_FLOAT && cls != H5T_INTEGER) {
		rc = tfk_errf(h->err, TFK_EINVAL, "%s: %s: not a float or "
			      "integer dataset", h->name, where);
		goto out;
	}
	H5Sget_simple_extent_dims(sp, dims, NULL);
	for (i = 0; i < rank; i++) {
		if (dims[i] > (hsize_t)INT64_MAX) {
			rc = h5_bad(h, where, "absurd dimension");
			goto out;
		}
		shape[i] = (int64_t)dims[i];
	}
	rc = tfk_tensor_init(t, cls == H5T_FLOAT ? TFK_DT_FLOAT :
			     TFK_DT_INT64, rank, shape, h->err);
	if (rc) {
		if (rc != TFK_ENOMEM)
			tfk_err_prefix(h->err, "%s: %s", h->name, where);
		goto out;
	}
	if (t->nbytes && H5Dread(d, cls == H5T_FLOAT ? H5T_NATIVE_FLOAT :
				 H5T_NATIVE_INT64, H5S_ALL, H5S_ALL,
				 H5P_DEFAULT, t->data) < 0) {
		tfk_tensor_release(t);
		rc = h5_bad(h, where, "data unreadable (truncated or corrupt)");
	}
out:
	if (ty >= 0)
		H5Tclose(ty);
	if (sp >= 0)
		H5Sclose(sp);
	H5Dclose(d);
	return rc;
}

static struct tfk_keras_layer *add_layer(struct h5 *h, const char *name)
{
	struct tfk_kerasfile *kf = h->kf;
	struct tfk_keras_layer *l;

	if (kf->n_layers >= MAX_LAYERS) {
		tfk_errf(h->err, TFK_ECORRUPT, "%s: more than %d layers",
			 h->name, MAX_LAYERS);
		return NULL;
	}
	l = tfk_realloc(kf->layers, (size_t)(kf->n_layers + 1) * sizeof(*l));
	if (!l) {
		tfk_errf(h->err, TFK_ENOMEM, "out of memory");
		return NULL;
	}
	kf->layers = l;
	l = &kf->layers[kf->n_layers];
	memset(l, 0, sizeof(*l));
	l->name = tfk_strdup(name);
	if (!l->name) {
		tfk_errf(h->err, TFK_ENOMEM, "out of memory");
		return NULL;
	}
	kf->n_layers++;
	return l;
}

static int add_weight(struct h5 *h, struct tfk_keras_layer *l, hid_t loc,
		      const char *path, const char *wname, const char *where)
{
	struct tfk_keras_weight *w;
	int rc;

	if (l->n_w >= MAX_LAYERS)
		return h5_bad(h, where, "too many weights");
	w = tfk_realloc(l->w, (size_t)(l->n_w + 1) * sizeof(*w));
	if (!w)
		return tfk_errf(h->err, TFK_ENOMEM, "out of memory");
	l->w = w;
	w = &l->w[l->n_w];
	w->name = tfk_strdup(wname);
	if (!w->name)
		return tfk_errf(h->err, TFK_ENOMEM, "out of memory");
	rc = h5_tensor(h, loc, path, where, &w->t);
	if (rc) {
		tfk_free(w->name);
		return rc;
	}
	l->n_w++;
	return 0;
}

/* Link names of group g, in name order. */
struct names {
	char **v;
	size_t n;
	int oom;
};

static herr_t name_cb(hid_t g, const char *name, const H5L_info_t *info,
		      void *op)
{
	struct names *ns = op;
	char **v;

	if (ns->n >= MAX_LAYERS)
		return 1;
	v = tfk_realloc(ns->v, (ns->n + 2) * sizeof(char *));
	if (!v || !(v[ns->n] = tfk_strdup(name))) {
		if (v)
			ns->v = v;
		ns->oom = 1;
		return -1;
	}
	ns->v = v;
	ns->v[++ns->n] = NULL;
	return 0;
}

static int h5_names(struct h5 *h, hid_t g, const char *where,
		    struct names *ns)
{
	hsize_t idx = 0;

	memset(ns, 0, sizeof(*ns));
	if (H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, name_cb,
		       ns) < 0 || ns->oom) {
		int oom = ns->oom;

		strv_free(ns->v);
		memset(ns, 0, sizeof(*ns));
		return oom ? tfk_errf(h->err, TFK_ENOMEM, "out of memory") :
			h5_bad(h, where, "unreadable group");
	}
	return 0;
}

static int is_group(hid_t loc, const char *name)
{
	H5O_info_t oi;

	return H5Lexists(loc, name, H5P_DEFAULT) > 0 &&
	       H5Oget_info_by_name(loc, name, &oi, H5P_DEFAULT) >= 0 &&
	       oi.type == H5O_TYPE_GROUP;
}

/*
 * Keras 3: the variables of the object at group g (path rel, "" for
 * the layer itself) into layer l: g/vars/0, 1, ... then each other
 * sub-group, in name order.
 */
static int k3_collect(struct h5 *h, struct tfk_keras_layer *l, hid_t g,
		      const char *where, const char *rel, int depth)
{
	char path[600], wname[400];
	struct names ns;
	int rc = 0;

	if (depth > MAX_DEPTH)
		return h5_bad(h, where, "groups nested too deep");
	if (is_group(g, "vars")) {
		hid_t v = H5Gopen2(g, "vars", H5P_DEFAULT);

		if (v < 0)
			return h5_bad(h, where, "unreadable vars group");
		for (int i = 0; !rc; i++) {
			char k[16];

			snprintf(k, sizeof(k), "%d", i);
			if (H5Lexists(v, k, H5P_DEFAULT) <= 0)
				break;
			snprintf(path, sizeof(path), "%s/vars/%s", where, k);
			snprintf(wname, sizeof(wname), "%svars/%s", rel, k);
			rc = add_weight(h, l, v, k, wname, path);
		}
		H5Gclose(v);
		if (rc)
			return rc;
	}
	rc = h5_names(h, g, where, &ns);
	for (size_t i = 0; !rc && i < ns.n; i++) {
		hid_t sub;

		if (!strcmp(ns.v[i], "vars") || !is_group(g, ns.v[i]))
			continue;
		sub = H5Gopen2(g, ns.v[i], H5P_DEFAULT);
		snprintf(path, sizeof(path), "%s/%s", where, ns.v[i]);
		snprintf(wname, sizeof(wname), "%s%s/", rel, ns.v[i]);
		rc = sub < 0 ? h5_bad(h, path, "unreadable group") :
			k3_collect(h, l, sub, path, wname, depth + 1);
		if (sub >= 0)
			H5Gclose(sub);
	}
	strv_free(ns.v);
	return rc;
}

static int k3_weights(struct h5 *h)
{
	struct names ns;
	hid_t g;
	int rc;

	if (!is_group(h->f, "layers"))
		return h5_bad(h, "/layers", "no such group");
	g = H5Gopen2(h->f, "layers", H5P_DEFAULT);
	if (g < 0)
		return h5_bad(h, "/layers", "unreadable group");
	rc = h5_names(h, g, "/layers", &ns);
	for (size_t i = 0; !rc && i < ns.n; i++) {
		struct tfk_keras_layer *l;
		char where[600];
		hid_t lg;

		if (!is_group(g, ns.v[i]))
			continue;
		snprintf(where, sizeof(where), "/layers/%s", ns.v[i]);
		if (!(l = add_layer(h, ns.v[i]))) {
			rc = h->err->code;
			break;
		}
		lg = H5Gopen2(g, ns.v[i], H5P_DEFAULT);
		rc = lg < 0 ? h5_bad(h, where, "unreadable group") :
			k3_collect(h, l, lg, where, "", 0);
		if (lg >= 0)
			H5Gclose(lg);
		/* Flatten, Dropout, ...: a group with no variables */
		if (!rc && !l->n_w) {
			tfk_free(l->name);
			h->kf->n_layers--;
		}
	}
	strv_free(ns.v);
	H5Gclose(g);
	return rc;
}

/* tf_keras: /model_weights per layer_names and weight_names. */
static int legacy_weights(struct h5 *h, hid_t mw)
{
	char **layers = NULL, **wn = NULL, where[1200], wname[800];
	size_t n_l, n_w;
	int rc;

	rc = h5_strings(h, mw, "/model_weights", "layer_names", MAX_LAYERS,
			&layers, &n_l);
	for (size_t i = 0; !rc && i < n_l; i++) {
		struct tfk_keras_layer *l;
		hid_t lg;

		snprintf(where, sizeof(where), "/model_weights/%s", layers[i]);
		if (!is_group(mw, layers[i])) {
			rc = h5_bad(h, where, "no such group");
			break;
		}
		lg = H5Gopen2(mw, layers[i], H5P_DEFAULT);
		if (lg < 0) {
			rc = h5_bad(h, where, "unreadable group");
			break;
		}
		rc = h5_strings(h, lg, where, "weight_names", MAX_LAYERS, &wn,
				&n_w);
		if (!rc && n_w && !(l = add_layer(h, layers[i])))
			rc = h->err->code;
		for (size_t j = 0; !rc && j < n_w; j++) {
			size_t len = strlen(wn[j]);
			char path[1400];

			snprintf(wname, sizeof(wname), "%s", wn[j]);
			if (len > 2 && !strcmp(wname + len - 2, ":0"))
				wname[len - 2] = '\0';
			snprintf(path, sizeof(path), "%s/%s", where, wn[j]);
			rc = add_weight(h, l, lg, wn[j], wname, path);
		}
		strv_free(wn);
		wn = NULL;
		H5Gclose(lg);
	}
	strv_free(layers);
	return rc;
}

static int parse_json(struct tfk_err *err, const char *name,
		      const char *text, size_t n, json_t **out)
{
	json_error_t je;

	*out = json_loadb(text, n, JSON_DECODE_ANY, &je);
	if (!*out)
		return tfk_errf(err, TFK_ECORRUPT, "%s: line %d column %d: %s",
				name, je.line, je.column, je.text);
	return 0;
}

/* The model object {"class_name", "config"} of a to_json() text. */
static int model_of(struct tfk_kerasfile *kf, json_t *root, const char *name,
		    struct tfk_err *err)
{
	json_t *cls = json_object_get(root, "class_name"),
	       *cfg = json_object_get(root, "config");

	if (!json_is_string(cls) || !json_is_object(cfg))
		return tfk_errf(err, TFK_ECORRUPT, "%s: not a Keras model "
				"config (no class_name and config)", name);
	kf->model = json_object();
	if (!kf->model || json_object_set(kf->model, "class_name", cls) ||
	    json_object_set(kf->model, "config", cfg))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	return 0;
}

static int legacy_json_attr(struct h5 *h, const char *attr, int required,
			    json_t **out)
{
	char **v, nm[600];
	size_t n;
	int rc;

	*out = NULL;
	if (!required && H5Aexists(h->f, attr) <= 0)
		return 0;
	rc = h5_strings(h, h->f, "/", attr, 1, &v, &n);
	if (rc)
		return rc;
	snprintf(nm, sizeof(nm), "%s: attribute %s", h->name, attr);
	rc = n == 1 ? parse_json(h->err, nm, v[0], strlen(v[0]), out) :
		tfk_errf(h->err, TFK_ECORRUPT, "%s: not one string", nm);
	strv_free(v);
	return rc;
}

static int read_legacy(struct h5 *h)
{
	json_t *cfg;
	char **v;
	size_t n;
	hid_t mw;
	int rc;

	h->kf->legacy = 1;
	if (H5Aexists(h->f, "model_config") <= 0)
		return tfk_errf(h->err, TFK_ECORRUPT, "%s: no model_config "
				"attribute: not a whole tf_keras model (a "
				"weights-only .h5 needs its model's config)",
				h->name);
	rc = legacy_json_attr(h, "model_config", 1, &cfg);
	if (rc)
		return rc;
	{
		char nm[600];

		snprintf(nm, sizeof(nm), "%s: attribute model_config",
			 h->name);
		rc = model_of(h->kf, cfg, nm, h->err);
	}
	json_decref(cfg);
	if (!rc)
		rc = legacy_json_attr(h, "training_config", 0,
				      &h->kf->compile);
	if (!rc && H5Aexists(h->f, "keras_version") > 0 &&
	    !h5_strings(h, h->f, "/", "keras_version", 1, &v, &n)) {
		if (n == 1) {
			h->kf->version = v[0];
			v[0] = NULL;
		}
		strv_free(v);
	}
	if (rc)
		return rc;
	if (!is_group(h->f, "model_weights"))
		return h5_bad(h, "/model_weights", "no such group");
	mw = H5Gopen2(h->f, "model_weights", H5P_DEFAULT);
	if (mw < 0)
		return h5_bad(h, "/model_weights", "unreadable group");
	rc = legacy_weights(h, mw);
	H5Gclose(mw);
	return rc;
}

/* Run fn over the HDF5 image data[0..n). */
static int with_h5(struct tfk_kerasfile *kf, const char *name,
		   const void *data, size_t n, int (*fn)(struct h5 *),
		   struct tfk_err *err)
{
	struct h5 h = { -1, name, kf, err };
	int rc;

	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if (n < 8 || memcmp(data, hdf5_sig, 8))
		return tfk_errf(err, TFK_ECORRUPT, "%s: not an HDF5 file",
				name);
	h.f = h5_open_image(data, n);
	if (h.f < 0)
		return tfk_errf(err, TFK_ECORRUPT, "%s: HDF5 file does not "
				"open (truncated or corrupt)", name);
	rc = fn(&h);
	H5Fclose(h.f);
	return rc;
}

/* Zip --------------------------------------------------------------------- */

struct member {
	const char *name;
	char *data;
	size_t n;
	int seen;
};

static int read_member(struct archive *a, const char *name, struct member *m,
		       struct tfk_err *err)
{
	size_t cap = 1 << 16;

	if (m->seen)
		return tfk_errf(err, TFK_ECORRUPT, "%s: %s twice in the "
				"archive", name, m->name);
	m->seen = 1;
	m->data = tfk_malloc(cap);
	if (!m->data)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (;;) {
		la_ssize_t r;

		if (m->n == cap) {
			char *p;

			if (cap >= MAX_MEMBER)
				return tfk_errf(err, TFK_EINVAL, "%s: %s: "
						"larger than 4 GiB", name,
						m->name);
			p = tfk_realloc(m->data, cap * 2);
			if (!p)
				return tfk_errf(err, TFK_ENOMEM,
						"out of memory");
			m->data = p;
			cap *= 2;
		}
		r = archive_read_data(a, m->data + m->n, cap - m->n);
		if (r < 0)
			return tfk_errf(err, TFK_ECORRUPT, "%s: %s: %s", name,
					m->name, archive_error_string(a));
		if (!r)
			return 0;
		m->n += (size_t)r;
	}
}

static int read_zip(struct tfk_kerasfile *kf, const char *name,
		    const void *data, size_t n, struct tfk_err *err)
{
	struct member mem[3] = {
		{ "config.json", NULL, 0, 0 },
		{ "metadata.json", NULL, 0, 0 },
		{ "model.weights.h5", NULL, 0, 0 },
	};
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	char nm[600];
	json_t *cfg = NULL, *meta = NULL, *cc;
	int rc = 0, r, i;

	if (!a)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	/* the seekable reader starts from the central directory, so an
	 * archive cut short is refused, not read as far as it goes */
	archive_read_support_format_zip_seekable(a);
	if (archive_read_open_memory(a, data, n) != ARCHIVE_OK) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: not a zip archive: %s",
			      name, archive_error_string(a));
		goto out;
	}
	while (!rc && (r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *p = archive_entry_pathname(e);

		for (i = 0; p && i < 3; i++)
			if (!strcmp(p, mem[i].name))
				break;
		if (p && i < 3)
			rc = read_member(a, name, &mem[i], err);
	}
	if (!rc && r != ARCHIVE_EOF)
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: corrupt zip archive: %s",
			      name, archive_error_string(a));
	for (i = 0; !rc && i < 3; i++)
		if (!mem[i].seen && i != 1)
			rc = tfk_errf(err, TFK_ECORRUPT, "%s: no %s: not a "
				      ".keras archive", name, mem[i].name);
	if (!rc) {
		snprintf(nm, sizeof(nm), "%s: config.json", name);
		rc = parse_json(err, nm, mem[0].data, mem[0].n, &cfg);
	}
	if (!rc)
		rc = model_of(kf, cfg, nm, err);
	if (!rc && (cc = json_object_get(cfg, "compile_config")) &&
	    json_is_object(cc))
		kf->compile = json_incref(cc);
	if (!rc && mem[1].seen) {
		snprintf(nm, sizeof(nm), "%s: metadata.json", name);
		rc = parse_json(err, nm, mem[1].data, mem[1].n, &meta);
		if (!rc && json_is_string(json_object_get(meta,
							  "keras_version")) &&
		    !(kf->version = tfk_strdup(json_string_value(
			    json_object_get(meta, "keras_version")))))
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	if (!rc) {
		snprintf(nm, sizeof(nm), "%s: model.weights.h5", name);
		rc = with_h5(kf, nm, mem[2].data, mem[2].n, k3_weights, err);
	}
out:
	json_decref(cfg);
	json_decref(meta);
	for (i = 0; i < 3; i++)
		tfk_free(mem[i].data);
	archive_read_free(a);
	return rc;
}

/* Entry points ----------------------------------------------------------- */

int tfk_kerasfile_parse(struct tfk_kerasfile **out, const char *name,
			const void *data, size_t n, struct tfk_err *err)
{
	struct tfk_kerasfile *kf = tfk_calloc(1, sizeof(*kf));
	int rc;

	*out = NULL;
	if (!kf)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (n >= 4 && !memcmp(data, "PK\3\4", 4))
		rc = read_zip(kf, name, data, n, err);
	else if (n >= 8 && !memcmp(data, hdf5_sig, 8))
		rc = with_h5(kf, name, data, n, read_legacy, err);
	else
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: not a Keras file (a "
			      ".keras zip archive or a tf_keras .h5 file)",
			      name);
	if (rc) {
		tfk_kerasfile_free(kf);
		return rc;
	}
	*out = kf;
	return 0;
}

int tfk_kerasfile_read(struct tfk_kerasfile **kf, const char *path,
		       struct tfk_err *err)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	size_t n = 0, cap = 0;
	int rc;

	*kf = NULL;
	if (!f)
		return tfk_errf(err, TFK_EIO, "%s: %s", path, strerror(errno));
	for (;;) {
		size_t r;

		if (n == cap) {
			char *p = cap >= MAX_MEMBER ? NULL :
				tfk_realloc(data, cap ? cap * 2 : 1 << 16);

			if (!p) {
				fclose(f);
				tfk_free(data);
				return cap >= MAX_MEMBER ?
					tfk_errf(err, TFK_EINVAL, "%s: larger "
						 "than 4 GiB", path) :
					tfk_errf(err, TFK_ENOMEM,
						 "out of memory");
			}
			data = p;
			cap = cap ? cap * 2 : 1 << 16;
		}
		r = fread(data + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		rc = tfk_errf(err, TFK_EIO, "%s: %s", path, strerror(errno));
		fclose(f);
		tfk_free(data);
		return rc;
	}
	fclose(f);
	rc = tfk_kerasfile_parse(kf, path, data, n, err);
	tfk_free(data);
	return rc;
}

/* Writing ---------------------------------------------------------------- */

/* The group at rel (a '/'-separated path) under g, made when missing. */
static hid_t h5_mkgroups(hid_t g, const char *rel)
{
	char buf[600], *p, *q;
	hid_t cur = H5Gopen2(g, ".", H5P_DEFAULT);

	snprintf(buf, sizeof(buf), "%s", rel);
	for (p = buf; cur >= 0 && p && *p; p = q) {
		hid_t next;

		q = strchr(p, '/');
		if (q)
			*q++ = '\0';
		next = H5Lexists(cur, p, H5P_DEFAULT) > 0 ?
			H5Gopen2(cur, p, H5P_DEFAULT) :
			H5Gcreate2(cur, p, H5P_DEFAULT, H5P_DEFAULT,
				   H5P_DEFAULT);
		H5Gclose(cur);
		cur = next;
	}
	return cur;
}

static int h5_put(hid_t g, const char *name, const struct tfk_tensor *t)
{
	hsize_t dims[TFK_MAX_RANK];
	hid_t sp, d;
	int rc = -1;

	for (int i = 0; i < t->rank; i++)
		dims[i] = (hsize_t)t->shape[i];
	sp = t->rank ? H5Screate_simple(t->rank, dims, NULL) :
		H5Screate(H5S_SCALAR);
	if (sp < 0)
		return -1;
	d = H5Dcreate2(g, name, t->dtype == TFK_DT_FLOAT ? H5T_IEEE_F32LE :
		       H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT,
		       H5P_DEFAULT);
	if (d >= 0) {
		rc = !t->nbytes || H5Dwrite(d, t->dtype == TFK_DT_FLOAT ?
					    H5T_NATIVE_FLOAT :
					    H5T_NATIVE_INT64, H5S_ALL,
					    H5S_ALL, H5P_DEFAULT,
					    t->data) >= 0 ? 0 : -1;
		H5Dclose(d);
	}
	H5Sclose(sp);
	return rc;
}

/* A string attribute name=value on g (Keras writes each vars group's
 * owner name so). */
static int h5_attr_str(hid_t g, const char *name, const char *value)
{
	hid_t ty = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), a = -1;
	int rc = -1;

	if (ty >= 0 && sp >= 0 && H5Tset_size(ty, H5T_VARIABLE) >= 0 &&
	    H5Tset_cset(ty, H5T_CSET_UTF8) >= 0)
		a = H5Acreate2(g, name, ty, sp, H5P_DEFAULT, H5P_DEFAULT);
	if (a >= 0) {
		rc = H5Awrite(a, ty, &value) >= 0 ? 0 : -1;
		H5Aclose(a);
	}
	if (sp >= 0)
		H5Sclose(sp);
	if (ty >= 0)
		H5Tclose(ty);
	return rc;
}

/* The weights file as an HDF5 image in memory (*data: tfk_free). */
static int weights_image(const struct tfk_kerasfile *kf, const char *path,
			 void **data, size_t *n, struct tfk_err *err)
{
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f = -1, root = -1;
	ssize_t len;
	int rc = 0;

	*data = NULL;
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	if (fapl >= 0 && H5Pset_fapl_core(fapl, 1 << 16, 0) >= 0)
		f = H5Fcreate("model.weights.h5", H5F_ACC_TRUNC, H5P_DEFAULT,
			      fapl);
	if (fapl >= 0)
		H5Pclose(fapl);
	if (f < 0)
		return tfk_errf(err, TFK_ENOMEM, "%s: HDF5 file not made",
				path);
	root = h5_mkgroups(f, "layers");
	if (root < 0)
		rc = -1;
	for (int i = 0; !rc && i < kf->n_layers; i++) {
		const struct tfk_keras_layer *l = &kf->layers[i];

		for (int j = 0; !rc && j < l->n_w; j++) {
			char rel[600], *slash;
			hid_t g;

			snprintf(rel, sizeof(rel), "%s/%s", l->name,
				 l->w[j].name);
			slash = strrchr(rel, '/');
			*slash = '\0';
			if (strlen(slash + 1) > 10 || strncmp(slash - 4, "vars",
							      4)) {
				rc = tfk_errf(err, TFK_EINVAL, "%s: layer '%s': "
					      "weight name %s is not .../vars/"
					      "<i>", path, l->name,
					      l->w[j].name);
				break;
			}
			g = h5_mkgroups(root, rel);
			if (g < 0) {
				rc = -1;
				break;
			}
			if (H5Aexists(g, "name") <= 0)
				rc = h5_attr_str(g, "name", l->name);
			if (!rc)
				rc = h5_put(g, slash + 1, &l->w[j].t);
			H5Gclose(g);
		}
	}
	if (!rc) {
		hid_t v = h5_mkgroups(f, "vars");

		rc = v < 0 ? -1 : 0;
		if (v >= 0)
			H5Gclose(v);
	}
	if (root >= 0)
		H5Gclose(root);
	if (!rc && (H5Fflush(f, H5F_SCOPE_GLOBAL) < 0 ||
		    (len = H5Fget_file_image(f, NULL, 0)) <= 0))
		rc = -1;
	if (!rc) {
		*data = tfk_malloc((size_t)len);
		if (!*data)
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		else if (H5Fget_file_image(f, *data, (size_t)len) != len)
			rc = -1;
		*n = (size_t)len;
	}
	H5Fclose(f);
	if (rc == -1)
		rc = tfk_errf(err, TFK_EIO, "%s: model.weights.h5 not written "
			      "(HDF5 failure)", path);
	if (rc) {
		tfk_free(*data);
		*data = NULL;
	}
	return rc;
}

struct zsink {
	struct tfk_out *out;
	struct tfk_err *err;
	int failed;
};

static la_ssize_t zwrite(struct archive *a, void *ctx, const void *p,
			 size_t n)
{
	struct zsink *z = ctx;

	if (tfk_out_write(z->out, p, n, z->err)) {
		z->failed = 1;
		return -1;
	}
	return (la_ssize_t)n;
}

static int zip_add(struct archive *a, const char *name, const void *p,
		   size_t n)
{
	struct archive_entry *e = archive_entry_new();
	int rc = -1;

	if (!e)
		return -1;
	archive_entry_set_pathname(e, name);
	archive_entry_set_size(e, (la_int64_t)n);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	if (archive_write_header(a, e) == ARCHIVE_OK &&
	    archive_write_data(a, p, n) == (la_ssize_t)n)
		rc = 0;
	archive_entry_free(e);
	return rc;
}

int tfk_kerasfile_write(const struct tfk_kerasfile *kf, const char *path,
			struct tfk_err *err)
{
	const json_t *mod = json_object_get(kf->model, "module"),
		     *cls = json_object_get(kf->model, "class_name");
	/* Keras 3 finds a model class by its module: Functional's is not
	 * the package's top level */
	const char *module = json_is_string(mod) ? json_string_value(mod) :
		json_is_string(cls) && !strcmp(json_string_value(cls),
					       "Functional") ?
		"keras.src.models.functional" : "keras";
	json_t *cfg = json_pack("{s:s,s:O,s:O,s:n,s:O}", "module", module,
				"class_name", json_object_get(kf->model,
							      "class_name"),
				"config", json_object_get(kf->model, "config"),
				"registered_name", "compile_config",
				kf->compile ? kf->compile : json_null());
	json_t *meta = json_pack("{s:s}", "keras_version",
				 kf->version ? kf->version : "3.0.0");
	char *ct = cfg ? json_dumps(cfg, JSON_PRESERVE_ORDER) : NULL,
	     *mt = meta ? json_dumps(meta, JSON_PRESERVE_ORDER) : NULL;
	struct zsink z = { NULL, err, 0 };
	struct archive *a = NULL;
	void *h5 = NULL;
	size_t h5n = 0;
	int rc;

	json_decref(cfg);
	json_decref(meta);
	if (!ct || !mt) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto out;
	}
	rc = weights_image(kf, path, &h5, &h5n, err);
	if (!rc)
		rc = tfk_out_open(&z.out, path, TFK_COMP_NONE, err);
	if (rc)
		goto out;
	a = archive_write_new();
	/* no padding to libarchive's 10240-byte blocks: a zip ends with
	 * its central directory */
	if (a)
		archive_write_set_bytes_in_last_block(a, 1);
	if (!a || archive_write_set_format_zip(a) != ARCHIVE_OK ||
	    archive_write_open(a, &z, NULL, zwrite, NULL) != ARCHIVE_OK ||
	    zip_add(a, "metadata.json", mt, strlen(mt)) ||
	    zip_add(a, "config.json", ct, strlen(ct)) ||
	    zip_add(a, "model.weights.h5", h5, h5n) ||
	    archive_write_close(a) != ARCHIVE_OK) {
		if (!z.failed)
			tfk_errf(err, TFK_EIO, "%s: zip not written: %s", path,
				 a ? archive_error_string(a) : "out of memory");
		rc = err->code ? err->code : TFK_EIO;
		tfk_out_discard(z.out);
		goto out;
	}
	rc = tfk_out_close(z.out, err);
out:
	if (a)
		archive_write_free(a);
	tfk_free(h5);
	free(ct);
	free(mt);
	return rc;
}
