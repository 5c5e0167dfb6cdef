/*
 * preprocess.c - the front end from Keras preprocessing layer configs
 * to graph ops (see preprocess.h for the spec format).
 *
 * Parsing checks every layer into a small struct at load time (so a typo
 * fails before data is read, with its JSON path); building turns those
 * structs into nodes once the feature dtypes are known (the caller
 * learns them from the first record). The jansson tree is kept so that
 * --adapt can write statistics back into the user's own config objects
 * and dump the spec with everything else as it was.
 *
 * Rejected: one op per layer for Rescaling and Normalization. They are
 * TF's elementwise ops in Keras too, and a SavedModel or TFLite writer
 * then needs nothing new for them.
 */
#include "nn/preprocess.h"
#include "prep/augment.h"
#include "prep/lookup.h"
#include "prep/textvec.h"
#include "prep/resize.h"
#include "prep/discretize.h"
#include "util/alloc.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	L_DECODE, L_RESCALE, L_NORM, L_RESIZE, L_CENTER, L_RCROP, L_FLIP,
	L_ROT, L_TRANS, L_ZOOM, L_CONTRAST, L_HASH, L_DISC, L_CATENC,
	L_SLOOK, L_ILOOK, L_TEXTVEC
};

struct layer {
	int kind;
	char path[160];		/* "features.image[2]" */
	json_t *cfg;		/* the config object (borrowed from root) */
	int h, w, method, has_width, invert, scalar, crop;
	const char *mode, *fill_mode, *interp;
	float fill_value, a_lo, a_hi, b_lo, b_hi;
	int n_a, n_b;		/* Rescaling scale/offset, Norm mean/var */
	float *a, *b;		/* (Discretization: a = boundaries) */
	float *idf;		/* tf_idf: idf_weights, n_idf of them */
	int n_idf;
	/* categorical layers */
	const char *omode;	/* output_mode */
	long num, num_oov, max_tokens, depth;
	int has_mask, salted, pad;	/* pad: pad_to_max_tokens */
	int64_t salt[2];
	const char *mask, *oov;
	char mask_buf[24], oov_buf[24];
	json_t *vocab;
	int need_adapt;		/* lookup/Discretization to adapt */
	double epsilon;		/* Discretization adapt */
	struct tfk_textvec_opts tvo;	/* TextVectorization */
	int pos;			/* index in its chain */
};

struct chain {
	struct tfk_prep_input in;
	int n_layers;
	struct layer *layers;
};

struct tfk_prep {
	json_t *root;
	char *path;
	int n;
	struct chain *c;
};

#define KERAS_EPSILON 1e-7f	/* keras.backend.epsilon() */

/* Config readers -------------------------------------------------------- */

struct ctx {
	const char *file;
	struct tfk_err *err;
};

static int bad(struct ctx *x, const char *path, const char *key,
	       const char *what)
{
	return tfk_errf(x->err, TFK_EINVAL, "%s: %s%s%s: %s", x->file, path,
			key ? ".config." : "", key ? key : "", what);
}

static int get_num(struct ctx *x, struct layer *l, const char *key,
		   double def, double *v)
{
	json_t *j = json_object_get(l->cfg, key);

	if (!j || json_is_null(j)) {
		*v = def;
		return 0;
	}
	if (!json_is_number(j))
		return bad(x, l->path, key, "expected a number");
	*v = json_number_value(j);
	return 0;
}

static int get_int(struct ctx *x, struct layer *l, const char *key, int *v)
{
	json_t *j = json_object_get(l->cfg, key);

	if (!json_is_integer(j) || json_integer_value(j) < 1 ||
	    json_integer_value(j) > 1 << 20)
		return bad(x, l->path, key, "expected an integer in "
			   "1..1048576");
	*v = (int)json_integer_value(j);
	return 0;
}

static int get_bool_false(struct ctx *x, struct layer *l, const char *key)
{
	json_t *j = json_object_get(l->cfg, key);

	if (!j || json_is_false(j) || json_is_null(j))
		return 0;
	if (json_is_true(j))
		return bad(x, l->path, key, "true is not supported");
	return bad(x, l->path, key, "expected a boolean");
}

static int get_bool(struct ctx *x, struct layer *l, const char *key, int *v)
{
	json_t *j = json_object_get(l->cfg, key);

	*v = json_is_true(j);
	if (!j || json_is_boolean(j) || json_is_null(j))
		return 0;
	return bad(x, l->path, key, "expected a boolean");
}

static int get_str(struct ctx *x, struct layer *l, const char *key,
		   const char *def, const char **v)
{
	json_t *j = json_object_get(l->cfg, key);

	if (!j || json_is_null(j)) {
		*v = def;
		return 0;
	}
	if (!json_is_string(j))
		return bad(x, l->path, key, "expected a string");
	*v = json_string_value(j);
	return 0;
}

/* A number or a list of numbers into a malloc'd float array. */
static int get_floats(struct ctx *x, struct layer *l, const char *key,
		      float **out, int *n)
{
	json_t *j = json_object_get(l->cfg, key), *e;
	size_t i;

	*out = NULL;
	*n = 0;
	if (!j || json_is_null(j))
		return 0;
	if (json_is_number(j)) {
		*out = tfk_malloc(sizeof(float));
		if (!*out)
			return tfk_errf(x->err, TFK_ENOMEM, "out of memory");
		(*out)[0] = (float)json_number_value(j);
		*n = 1;
		return 0;
	}
	if (!json_is_array(j) || json_array_size(j) == 0 ||
	    json_array_size(j) > 1 << 20)
		return bad(x, l->path, key, "expected a number or a list of "
			   "numbers");
	/* Keras may nest a per-channel list ([[[m0, m1, m2]]]): flatten a
	 * chain of one-element lists. */
	while (json_array_size(j) == 1 && json_is_array(json_array_get(j, 0)))
		j = json_array_get(j, 0);
	*out = tfk_malloc(json_array_size(j) * sizeof(float));
	if (!*out)
		return tfk_errf(x->err, TFK_ENOMEM, "out of memory");
	json_array_foreach(j, i, e) {
		if (!json_is_number(e))
			return bad(x, l->path, key, "expected a number or a "
				   "list of numbers");
		(*out)[i] = (float)json_number_value(e);
	}
	*n = (int)json_array_size(j);
	return 0;
}

/* Keras' factor: f -> (-f, f) (or (f, f) when sym is 0), [a, b] -> (a, b). */
static int get_factor(struct ctx *x, struct layer *l, const char *key,
		      int sym, int required, float *lo, float *hi, int *given)
{
	json_t *j = json_object_get(l->cfg, key);

	*given = 0;
	*lo = *hi = 0;
	if (!j || json_is_null(j)) {
		if (required)
			return bad(x, l->path, key, "expected a number or a "
				   "list of 2 numbers");
		return 0;
	}
	if (json_is_number(j)) {
		double f = json_number_value(j);

		*lo = (float)(sym ? -f : f);
		*hi = (float)f;
	} else if (json_is_array(j) && json_array_size(j) == 2 &&
		   json_is_number(json_array_get(j, 0)) &&
		   json_is_number(json_array_get(j, 1))) {
		*lo = (float)json_number_value(json_array_get(j, 0));
		*hi = (float)json_number_value(json_array_get(j, 1));
		if (*lo > *hi)
			return bad(x, l->path, key, "lower bound above upper");
	} else {
		return bad(x, l->path, key, "expected a number or a list of "
			   "2 numbers");
	}
	*given = 1;
	return 0;
}

static int get_warp(struct ctx *x, struct layer *l)
{
	double fv = 0;
	int rc;

	if ((rc = get_str(x, l, "fill_mode", "reflect", &l->fill_mode)) ||
	    (rc = get_str(x, l, "interpolation", "bilinear", &l->interp)) ||
	    (rc = get_num(x, l, "fill_value", 0, &fv)))
		return rc;
	l->fill_value = (float)fv;
	if (tfk_aug_fill_parse(l->fill_mode) < 0)
		return bad(x, l->path, "fill_mode", "expected reflect, wrap, "
			   "constant or nearest");
	if (tfk_aug_interp_parse(l->interp) < 0)
		return bad(x, l->path, "interpolation", "expected nearest or "
			   "bilinear");
	return 0;
}

/* Layers ------------------------------------------------------------------ */

static const struct {
	const char *cls;
	int kind;
	const char *keys;	/* config keys with an effect, space-separated */
} classes[] = {
	{ "DecodeImage", L_DECODE, "channels" },
	{ "Rescaling", L_RESCALE, "scale offset" },
	{ "Normalization", L_NORM, "axis mean variance invert" },
	{ "Resizing", L_RESIZE, "height width interpolation "
	  "crop_to_aspect_ratio pad_to_aspect_ratio fill_mode fill_value "
	  "antialias" },
	{ "CenterCrop", L_CENTER, "height width" },
	{ "RandomCrop", L_RCROP, "height width" },
	{ "RandomFlip", L_FLIP, "mode" },
	{ "RandomRotation", L_ROT, "factor fill_mode interpolation "
	  "fill_value value_range" },
	{ "RandomTranslation", L_TRANS, "height_factor width_factor "
	  "fill_mode interpolation fill_value" },
	{ "RandomZoom", L_ZOOM, "height_factor width_factor fill_mode "
	  "interpolation fill_value" },
	{ "RandomContrast", L_CONTRAST, "factor value_range" },
	{ "Hashing", L_HASH, "num_bins mask_value salt output_mode sparse" },
	{ "Discretization", L_DISC, "bin_boundaries num_bins epsilon "
	  "output_mode sparse" },
	{ "CategoryEncoding", L_CATENC, "num_tokens output_mode sparse" },
	{ "StringLookup", L_SLOOK, "max_tokens num_oov_indices mask_token "
	  "oov_token vocabulary idf_weights invert output_mode sparse "
	  "pad_to_max_tokens encoding vocabulary_size oov_method salt" },
	{ "IntegerLookup", L_ILOOK, "max_tokens num_oov_indices mask_token "
	  "oov_token vocabulary vocabulary_dtype idf_weights invert "
	  "output_mode sparse pad_to_max_tokens vocabulary_size oov_method "
	  "salt" },
	{ "TextVectorization", L_TEXTVEC, "max_tokens standardize split "
	  "ngrams output_mode output_sequence_length pad_to_max_tokens "
	  "sparse ragged vocabulary idf_weights encoding vocabulary_size" },
};

static const char *const unsupported[] = {
	NULL
};

/* Keys Keras writes that change nothing here. */
static const char *const ignored_keys = " name trainable dtype autocast "
	"seed ";

/* Is key one of the space-separated words of list? */
static int in_list(const char *list, const char *key)
{
	size_t n = strlen(key), w;
	const char *p = list + strspn(list, " ");

	while (n && *p) {
		w = strcspn(p, " ");
		if (w == n && !memcmp(p, key, n))
			return 1;
		p += w;
		p += strspn(p, " ");
	}
	return 0;
}

/* A string, or (ints) an integer written as decimal into buf. */
static int get_token(struct ctx *x, struct layer *l, const char *key,
		     int ints, char *buf, const char **v, int *given)
{
	json_t *j = json_object_get(l->cfg, key);

	*given = j && !json_is_null(j);
	if (!*given)
		return 0;
	if (ints && json_is_integer(j)) {
		snprintf(buf, 24, "%" PRId64, (int64_t)json_integer_value(j));
		*v = buf;
		return 0;
	}
	if (!ints && json_is_string(j)) {
		*v = json_string_value(j);
		if (strlen(*v) != json_string_length(j))
			return bad(x, l->path, key, "NUL bytes are not "
				   "supported");
		return 0;
	}
	return bad(x, l->path, key, ints ? "expected an integer" :
		   "expected a string");
}

static int get_mode(struct ctx *x, struct layer *l, const char *def,
		    int int_ok)
{
	int rc = get_str(x, l, "output_mode", def, &l->omode);

	if (rc)
		return rc;
	if (!strcmp(l->omode, "binary"))
		l->omode = "multi_hot";
	if (!strcmp(l->omode, "tf-idf"))	/* Keras 2.5/2.6's spelling */
		l->omode = "tf_idf";
	if ((int_ok && !strcmp(l->omode, "int")) ||
	    !strcmp(l->omode, "one_hot") || !strcmp(l->omode, "multi_hot") ||
	    !strcmp(l->omode, "count"))
		return 0;
	/* Keras: tf_idf only for the IndexLookup layers */
	if (!strcmp(l->omode, "tf_idf") && (l->kind == L_SLOOK ||
	    l->kind == L_ILOOK || l->kind == L_TEXTVEC))
		return 0;
	if (l->kind == L_SLOOK || l->kind == L_ILOOK || l->kind == L_TEXTVEC)
		return bad(x, l->path, "output_mode", "expected int, one_hot, "
			   "multi_hot, count or tf_idf");
	return bad(x, l->path, "output_mode", int_ok ? "expected int, "
		   "one_hot, multi_hot or count" :
		   "expected one_hot, multi_hot or count");
}

static int get_long(struct ctx *x, struct layer *l, const char *key,
		    long lo, long hi, long def, long *v)
{
	json_t *j = json_object_get(l->cfg, key);
	char msg[80];

	if (!j || json_is_null(j)) {
		*v = def;
		return 0;
	}
	if (!json_is_integer(j) || json_integer_value(j) < lo ||
	    json_integer_value(j) > hi) {
		snprintf(msg, sizeof(msg), "expected an integer in %ld..%ld",
			 lo, hi);
		return bad(x, l->path, key, msg);
	}
	*v = (long)json_integer_value(j);
	return 0;
}

/* The tfk_lookup options of a parsed String/IntegerLookup layer. */
static void lookup_opts(const struct layer *l, struct tfk_lookup_opts *o)
{
	if (l->kind == L_ILOOK)
		tfk_lookup_opts_int(o);
	else
		tfk_lookup_opts_string(o);
	o->mode = tfk_lookup_mode_parse(l->omode);
	o->max_tokens = l->max_tokens;
	o->pad_to_max_tokens = l->pad;
	o->num_oov = l->num_oov;
	o->has_mask = l->has_mask;
	o->mask = l->mask;
	o->mask_len = strlen(l->mask);
	o->mask_int = strtoll(l->mask, NULL, 10);
	o->oov = l->oov;
	o->oov_len = strlen(l->oov);
	o->oov_int = strtoll(l->oov, NULL, 10);
}

/*
 * idf_weights of a lookup or TextVectorization (Keras' rules): required
 * with a vocabulary in tf_idf mode, one weight per vocabulary entry;
 * not allowed in other modes nor without a vocabulary (adapt learns
 * them). Checked against the vocabulary by tfk_lookup_set_vocab.
 */
static int parse_idf(struct ctx *x, struct layer *l, int have_vocab)
{
	json_t *j = json_object_get(l->cfg, "idf_weights");
	int given = j && !json_is_null(j), rc;

	if (strcmp(l->omode, "tf_idf"))
		return given ? bad(x, l->path, "idf_weights", "only for "
				   "output_mode tf_idf") : 0;
	if (!have_vocab)
		return given ? bad(x, l->path, "idf_weights", "only with a "
				   "vocabulary (--adapt learns both)") : 0;
	if (!given || !json_is_array(j))
		return bad(x, l->path, "idf_weights", "expected a list of "
			   "numbers, one per vocabulary entry (tf_idf)");
	rc = get_floats(x, l, "idf_weights", &l->idf, &l->n_idf);
	if (rc)
		return rc;
	return 0;
}

/* Hashing, Discretization, CategoryEncoding, String/IntegerLookup. */
static int parse_categorical(struct ctx *x, struct layer *l)
{
	struct tfk_lookup_opts o;
	struct tfk_lookup lk;
	json_t *j, *e;
	size_t i, n;
	int rc, given, ints = l->kind == L_ILOOK;
	const char **tok = NULL;
	size_t *len = NULL;
	int64_t *vals = NULL;

	if ((rc = get_bool_false(x, l, "sparse")))
		return rc;
	switch (l->kind) {
	case L_HASH:
		if ((rc = get_long(x, l, "num_bins", 1, 1L << 31, 0,
				   &l->num)) ||
		    (rc = get_mode(x, l, "int", 1)))
			return rc;
		if (!l->num)
			return bad(x, l->path, "num_bins", "expected an "
				   "integer in 1..2147483648");
		l->depth = l->num;
		j = json_object_get(l->cfg, "mask_value");
		if (json_is_integer(j) || json_is_string(j))
			rc = get_token(x, l, "mask_value", json_is_integer(j),
				       l->mask_buf, &l->mask, &l->has_mask);
		else if (j && !json_is_null(j))
			return bad(x, l->path, "mask_value", "expected a "
				   "string or an integer");
		if (rc)
			return rc;
		j = json_object_get(l->cfg, "salt");
		if (json_is_integer(j)) {
			l->salted = 1;
			l->salt[0] = l->salt[1] = json_integer_value(j);
		} else if (json_is_array(j) && json_array_size(j) == 2 &&
			   json_is_integer(json_array_get(j, 0)) &&
			   json_is_integer(json_array_get(j, 1))) {
			l->salted = 1;
			l->salt[0] = json_integer_value(json_array_get(j, 0));
			l->salt[1] = json_integer_value(json_array_get(j, 1));
		} else if (j && !json_is_null(j)) {
			return bad(x, l->path, "salt", "expected an integer or "
				   "a list of 2 integers");
		}
		return 0;
	case L_DISC:
		if ((rc = get_mode(x, l, "int", 1)))
			return rc;
		j = json_object_get(l->cfg, "bin_boundaries");
		if (!j || json_is_null(j)) {
			/* adapt (Keras: num_bins required then) */
			if ((rc = get_long(x, l, "num_bins", 1, 1L << 24, 0,
					   &l->num)) ||
			    (rc = get_num(x, l, "epsilon", 0.01,
					  &l->epsilon)))
				return rc;
			if (!l->num)
				return bad(x, l->path, "num_bins", "expected "
					   "an integer in 1..16777216 when "
					   "bin_boundaries is null");
			if (!(l->epsilon > 0 && l->epsilon < 1))
				return bad(x, l->path, "epsilon", "expected "
					   "a number in (0, 1)");
			l->need_adapt = 1;
			l->depth = l->num;
			return 0;
		}
		if ((rc = get_floats(x, l, "bin_boundaries", &l->a, &l->n_a)))
			return rc;
		for (i = 1; i < (size_t)l->n_a; i++)
			if (!(l->a[i] >= l->a[i - 1]))
				return bad(x, l->path, "bin_boundaries",
					   "expected non-decreasing numbers");
		l->depth = l->n_a + 1;
		return 0;
	case L_CATENC:
		if ((rc = get_long(x, l, "num_tokens", 1, 1L << 24, 0,
				   &l->num)) ||
		    (rc = get_mode(x, l, "multi_hot", 0)))
			return rc;
		if (!l->num)
			return bad(x, l->path, "num_tokens", "expected an "
				   "integer in 1..16777216");
		l->depth = l->num;
		return 0;
	}
	/* String/IntegerLookup; Keras 3's get_config writes oov_method
	 * "floormod" and salt null, the only pair a vocabulary-less
	 * OOV index needs here (vocabulary_size is only informative) */
	j = json_object_get(l->cfg, "oov_method");
	if (j && !json_is_null(j) && !(json_is_string(j) &&
	    !strcmp(json_string_value(j), "floormod")))
		return bad(x, l->path, "oov_method", "only \"floormod\" is "
			   "supported");
	j = json_object_get(l->cfg, "salt");
	if (j && !json_is_null(j))
		return bad(x, l->path, "salt", "only null is supported");
	if ((rc = get_bool_false(x, l, "invert")) ||
	    (rc = get_bool(x, l, "pad_to_max_tokens", &l->pad)) ||
	    (rc = get_mode(x, l, "int", 1)) ||
	    (rc = get_long(x, l, "max_tokens", 2, 1L << 24, 0,
			   &l->max_tokens)) ||
	    (rc = get_long(x, l, "num_oov_indices", 0, 1L << 20, 1,
			   &l->num_oov)) ||
	    (rc = get_token(x, l, "mask_token", ints, l->mask_buf, &l->mask,
			    &l->has_mask)) ||
	    (rc = get_token(x, l, "oov_token", ints, l->oov_buf, &l->oov,
			    &given)))
		return rc;
	if (!given)
		l->oov = ints ? "-1" : "[UNK]";
	if (!l->has_mask)
		l->mask = "";
	j = json_object_get(l->cfg, "vocabulary");
	if ((rc = parse_idf(x, l, j && !json_is_null(j))))
		return rc;
	if (!j || json_is_null(j)) {
		/* learned by tfk-map --adapt; check the options now */
		lookup_opts(l, &o);
		rc = tfk_lookup_init(&lk, &o, x->err);
		if (rc)
			return tfk_err_prefix(x->err, "%s: %s.config",
					      x->file, l->path);
		tfk_lookup_release(&lk);
		l->vocab = NULL;
		l->need_adapt = 1;
		return 0;
	}
	if (!json_is_array(j) || json_array_size(j) == 0)
		return bad(x, l->path, "vocabulary", ints ? "expected a list "
			   "of integers" : "expected a list of strings");
	n = json_array_size(j);
	tok = tfk_calloc(n, sizeof(*tok));
	len = tfk_calloc(n, sizeof(*len));
	vals = tfk_calloc(n, sizeof(*vals));
	if (!tok || !len || !vals) {
		rc = tfk_errf(x->err, TFK_ENOMEM, "out of memory");
		goto out;
	}
	json_array_foreach(j, i, e) {
		if (ints ? !json_is_integer(e) : !json_is_string(e)) {
			rc = bad(x, l->path, "vocabulary", ints ? "expected a "
				 "list of integers" : "expected a list of "
				 "strings");
			goto out;
		}
		if (ints) {
			vals[i] = json_integer_value(e);
		} else {
			tok[i] = json_string_value(e);
			len[i] = json_string_length(e);
		}
	}
	lookup_opts(l, &o);
	rc = tfk_lookup_init(&lk, &o, x->err);
	if (!rc) {
		rc = tfk_lookup_set_vocab(&lk, tok, len, vals, n, l->idf,
					  (size_t)l->n_idf, x->err);
		l->depth = tfk_lookup_depth(&lk);
		tfk_lookup_release(&lk);
	}
	if (rc)
		tfk_err_prefix(x->err, "%s: %s.config.vocabulary", x->file,
			       l->path);
	l->vocab = j;
out:
	tfk_free(tok);
	tfk_free(len);
	tfk_free(vals);
	return rc;
}

/* Depth of a TextVectorization with vocabulary j (NULL: none yet). */
static int textvec_depth(struct ctx *x, struct layer *l, json_t *j)
{
	struct tfk_textvec tv;
	const char **tok;
	size_t *len, i, n = json_array_size(j);
	json_t *e;
	int rc;

	rc = tfk_textvec_init(&tv, &l->tvo, x->err);
	if (rc)
		return tfk_err_prefix(x->err, "%s: %s.config", x->file,
				      l->path);
	tok = tfk_calloc(n + 1, sizeof(*tok));
	len = tfk_calloc(n + 1, sizeof(*len));
	if (!tok || !len) {
		rc = tfk_errf(x->err, TFK_ENOMEM, "out of memory");
		goto out;
	}
	json_array_foreach(j, i, e) {
		if (!json_is_string(e)) {
			rc = bad(x, l->path, "vocabulary", "expected a list "
				 "of strings");
			goto out;
		}
		tok[i] = json_string_value(e);
		len[i] = json_string_length(e);
	}
	rc = tfk_lookup_set_vocab(&tv.lk, tok, len, NULL, n, l->idf,
				  (size_t)l->n_idf, x->err);
	if (rc)
		tfk_err_prefix(x->err, "%s: %s.config.vocabulary", x->file,
			       l->path);
	else
		l->depth = tfk_textvec_depth(&tv);
out:
	tfk_free(tok);
	tfk_free(len);
	tfk_textvec_release(&tv);
	return rc;
}

static int parse_textvec(struct ctx *x, struct layer *l)
{
	struct tfk_textvec_opts *o = &l->tvo;
	const char *str;
	json_t *j;
	long v;
	int rc;

	tfk_textvec_opts_default(o);
	if ((rc = get_bool_false(x, l, "sparse")) ||
	    (rc = get_bool_false(x, l, "ragged")) ||
	    (rc = get_bool(x, l, "pad_to_max_tokens",
			   &o->pad_to_max_tokens)) ||
	    (rc = get_mode(x, l, "int", 1)) ||
	    (rc = get_long(x, l, "max_tokens", 2, 1L << 24, 0, &v)))
		return rc;
	o->max_tokens = v;
	o->mode = tfk_lookup_mode_parse(l->omode);
	if (o->mode == TFK_LOOKUP_ONE_HOT)
		return bad(x, l->path, "output_mode", "expected int, "
			   "multi_hot, count or tf_idf");
	/* absent: Keras' defaults; null: none */
	if ((rc = get_str(x, l, "standardize", json_object_get(l->cfg,
			  "standardize") ? NULL : "lower_and_strip_punctuation",
			  &str)))
		return rc;
	o->standardize = str ? tfk_textvec_std_parse(str) : TFK_STD_NONE;
	if (o->standardize < 0)
		return bad(x, l->path, "standardize", "expected "
			   "lower_and_strip_punctuation, lower, "
			   "strip_punctuation or null");
	if ((rc = get_str(x, l, "split", json_object_get(l->cfg, "split") ?
			  NULL : "whitespace", &str)))
		return rc;
	o->split = str ? tfk_textvec_split_parse(str) : TFK_SPLIT_NONE;
	if (o->split < 0)
		return bad(x, l->path, "split", "expected whitespace or null "
			   "(character is not supported)");
	j = json_object_get(l->cfg, "ngrams");
	if (json_is_integer(j)) {
		if (json_integer_value(j) < 1 ||
		    json_integer_value(j) > TFK_TEXTVEC_MAX_NGRAMS)
			return bad(x, l->path, "ngrams", "expected 1..16");
		tfk_textvec_opts_ngrams_upto(o, (int)json_integer_value(j));
	} else if (json_is_array(j) && json_array_size(j) >= 1 &&
		   json_array_size(j) <= TFK_TEXTVEC_MAX_NGRAMS) {
		size_t i;
		json_t *e;

		json_array_foreach(j, i, e) {
			if (!json_is_integer(e) || json_integer_value(e) < 1 ||
			    json_integer_value(e) > 1 << 20)
				return bad(x, l->path, "ngrams", "expected "
					   "widths >= 1");
			o->ngrams[i] = (int)json_integer_value(e);
		}
		o->n_ngrams = (int)json_array_size(j);
	} else if (j && !json_is_null(j)) {
		return bad(x, l->path, "ngrams", "expected an integer, a list "
			   "of widths or null");
	}
	if ((rc = get_long(x, l, "output_sequence_length", 1, 1L << 24, -1,
			   &v)))
		return rc;
	o->output_sequence_length = v;
	if (o->mode == TFK_LOOKUP_INT && v < 0)
		return bad(x, l->path, "output_sequence_length", "null "
			   "(ragged output) is not supported: give a length");
	if (o->mode != TFK_LOOKUP_INT && v >= 0)
		return bad(x, l->path, "output_sequence_length", "only in "
			   "int mode");
	j = json_object_get(l->cfg, "vocabulary");
	if ((rc = parse_idf(x, l, j && !json_is_null(j))))
		return rc;
	if (!j || json_is_null(j)) {
		l->vocab = NULL;
		return 0;
	}
	if (!json_is_array(j) || json_array_size(j) == 0)
		return bad(x, l->path, "vocabulary", "expected a list of "
			   "strings or null");
	l->vocab = j;
	return textvec_depth(x, l, j);
}

static int parse_layer(struct ctx *x, struct layer *l, json_t *obj, int pos)
{
	json_t *cls, *v;
	const char *name, *key;
	size_t i;
	int rc, k = -1, given;
	double d;

	if (!json_is_object(obj))
		return bad(x, l->path, NULL, "expected a layer object "
			   "{\"class_name\": ..., \"config\": {...}}");
	json_object_foreach(obj, key, v) {
		if (strcmp(key, "class_name") && strcmp(key, "config") &&
		    strcmp(key, "module") && strcmp(key, "registered_name") &&
		    strcmp(key, "build_config") && strcmp(key, "name"))
			return tfk_errf(x->err, TFK_EINVAL, "%s: %s.%s: "
					"unknown key", x->file, l->path, key);
	}
	cls = json_object_get(obj, "class_name");
	if (!json_is_string(cls))
		return tfk_errf(x->err, TFK_EINVAL, "%s: %s.class_name: "
				"expected a string", x->file, l->path);
	name = json_string_value(cls);
	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (!strcmp(classes[i].cls, name))
			k = (int)i;
	if (k < 0) {
		for (i = 0; unsupported[i]; i++)
			if (!strcmp(unsupported[i], name))
				return tfk_errf(x->err, TFK_EINVAL, "%s: %s: "
						"layer class %s is not "
						"supported", x->file,
						l->path, name);
		return tfk_errf(x->err, TFK_EINVAL, "%s: %s: unknown layer "
				"class '%s'", x->file, l->path, name);
	}
	l->kind = classes[k].kind;
	l->cfg = json_object_get(obj, "config");
	if (!l->cfg) {
		l->cfg = json_object();
		if (!l->cfg || json_object_set_new(obj, "config", l->cfg))
			return tfk_errf(x->err, TFK_ENOMEM, "out of memory");
	}
	if (!json_is_object(l->cfg))
		return tfk_errf(x->err, TFK_EINVAL, "%s: %s.config: expected "
				"an object", x->file, l->path);
	json_object_foreach(l->cfg, key, v) {
		if (in_list(ignored_keys, key) || in_list(classes[k].keys, key))
			continue;
		if (!strcmp(key, "data_format") && (json_is_null(v) ||
		    (json_is_string(v) &&
		     !strcmp(json_string_value(v), "channels_last"))))
			continue;
		if (!strcmp(key, "data_format"))
			return bad(x, l->path, key, "only channels_last is "
				   "supported");
		return bad(x, l->path, key, "unknown config key");
	}
	if (l->kind == L_DECODE && pos != 0)
		return bad(x, l->path, NULL, "DecodeImage must be the first "
			   "layer");

	switch (l->kind) {
	case L_DECODE:
		l->h = 0;
		v = json_object_get(l->cfg, "channels");
		if (v && !json_is_null(v)) {
			if (!json_is_integer(v) || (json_integer_value(v) != 0
			    && json_integer_value(v) != 1 &&
			    json_integer_value(v) != 3 &&
			    json_integer_value(v) != 4))
				return bad(x, l->path, "channels", "expected "
					   "0, 1, 3 or 4");
			l->h = (int)json_integer_value(v);
		}
		return 0;
	case L_RESCALE:
		if ((rc = get_floats(x, l, "scale", &l->a, &l->n_a)) ||
		    (rc = get_floats(x, l, "offset", &l->b, &l->n_b)))
			return rc;
		if (!l->n_a)
			return bad(x, l->path, "scale", "expected a number or "
				   "a list of numbers");
		return 0;
	case L_NORM:
		v = json_object_get(l->cfg, "axis");
		if (!v) {
			l->scalar = 0;
		} else if (json_is_null(v) || (json_is_array(v) &&
			   json_array_size(v) == 0)) {
			l->scalar = 1;
		} else if ((json_is_integer(v) && json_integer_value(v) == -1)
			   || (json_is_array(v) && json_array_size(v) == 1 &&
			       json_is_integer(json_array_get(v, 0)) &&
			       json_integer_value(json_array_get(v, 0)) == -1)) {
			l->scalar = 0;
		} else {
			return bad(x, l->path, "axis", "only -1 (the last "
				   "axis) or null is supported");
		}
		v = json_object_get(l->cfg, "invert");
		if (v && !json_is_boolean(v) && !json_is_null(v))
			return bad(x, l->path, "invert", "expected a boolean");
		l->invert = json_is_true(v);
		if ((rc = get_floats(x, l, "mean", &l->a, &l->n_a)) ||
		    (rc = get_floats(x, l, "variance", &l->b, &l->n_b)))
			return rc;
		if ((l->n_a == 0) != (l->n_b == 0))
			return bad(x, l->path, l->n_a ? "variance" : "mean",
				   "mean and variance must be given together");
		if (l->n_a != l->n_b && l->n_a != 1 && l->n_b != 1)
			return bad(x, l->path, "variance", "not as long as "
				   "mean");
		for (i = 0; i < (size_t)l->n_b; i++)
			if (!(l->b[i] >= 0))
				return bad(x, l->path, "variance", "expected "
					   "values >= 0");
		return 0;
	case L_RESIZE:
		if ((rc = get_int(x, l, "height", &l->h)) ||
		    (rc = get_int(x, l, "width", &l->w)) ||
		    (rc = get_str(x, l, "interpolation", "bilinear",
				  &l->interp)) ||
		    (rc = get_bool(x, l, "crop_to_aspect_ratio", &l->crop)) ||
		    (rc = get_bool_false(x, l, "pad_to_aspect_ratio")) ||
		    (rc = get_bool_false(x, l, "antialias")))
			return rc;
		l->method = tfk_resize_method_parse(l->interp);
		if (l->method < 0)
			return bad(x, l->path, "interpolation", "expected "
				   "bilinear, nearest, bicubic or area");
		return 0;
	case L_CENTER:
	case L_RCROP:
		if ((rc = get_int(x, l, "height", &l->h)) ||
		    (rc = get_int(x, l, "width", &l->w)))
			return rc;
		return 0;
	case L_FLIP:
		if ((rc = get_str(x, l, "mode", "horizontal_and_vertical",
				  &l->mode)))
			return rc;
		if (tfk_aug_flip_parse(l->mode) < 0)
			return bad(x, l->path, "mode", "expected horizontal, "
				   "vertical or horizontal_and_vertical");
		return 0;
	case L_ROT:
		if ((rc = get_factor(x, l, "factor", 1, 1, &l->a_lo, &l->a_hi,
				     &given)))
			return rc;
		return get_warp(x, l);
	case L_TRANS:
		if ((rc = get_factor(x, l, "height_factor", 1, 1, &l->a_lo,
				     &l->a_hi, &given)) ||
		    (rc = get_factor(x, l, "width_factor", 1, 1, &l->b_lo,
				     &l->b_hi, &given)))
			return rc;
		return get_warp(x, l);
	case L_ZOOM:
		if ((rc = get_factor(x, l, "height_factor", 1, 1, &l->a_lo,
				     &l->a_hi, &given)) ||
		    (rc = get_factor(x, l, "width_factor", 1, 0, &l->b_lo,
				     &l->b_hi, &l->has_width)))
			return rc;
		if (l->a_lo <= -1 || l->b_lo <= -1)
			return bad(x, l->path, "height_factor", "zoom factors "
				   "must be above -1");
		return get_warp(x, l);
	case L_HASH:
	case L_DISC:
	case L_CATENC:
	case L_SLOOK:
	case L_ILOOK:
		l->pos = pos;
		return parse_categorical(x, l);
	case L_TEXTVEC:
		l->pos = pos;
		return parse_textvec(x, l);
	case L_CONTRAST:
		if ((rc = get_factor(x, l, "factor", 0, 1, &l->a_lo,
				     &l->a_hi, &given)))
			return rc;
		if (l->a_lo < 0 || l->a_hi < 0)
			return bad(x, l->path, "factor", "expected values >= "
				   "0");
		l->b_lo = 0;
		l->b_hi = 255;
		v = json_object_get(l->cfg, "value_range");
		if (v && !json_is_null(v)) {
			if (!json_is_array(v) || json_array_size(v) != 2 ||
			    !json_is_number(json_array_get(v, 0)) ||
			    !json_is_number(json_array_get(v, 1)))
				return bad(x, l->path, "value_range",
					   "expected a list of 2 numbers");
			l->b_lo = (float)json_number_value(json_array_get(v, 0));
			l->b_hi = (float)json_number_value(json_array_get(v, 1));
		}
		(void)d;
		return 0;
	}
	return 0;
}

static int parse_shape(struct ctx *x, const char *path, json_t *v,
		       struct tfk_prep_input *in)
{
	json_t *e;
	size_t i;

	if (!json_is_array(v) || json_array_size(v) < 1 ||
	    json_array_size(v) > TFK_MAX_RANK)
		return tfk_errf(x->err, TFK_EINVAL, "%s: %s.shape: expected "
				"a list of 1 to %d sizes", x->file, path,
				TFK_MAX_RANK);
	json_array_foreach(v, i, e) {
		if (!json_is_integer(e) || json_integer_value(e) < 1 ||
		    json_integer_value(e) > 1 << 24)
			return tfk_errf(x->err, TFK_EINVAL, "%s: %s.shape[%zu]:"
					" expected an integer in 1..16777216",
					x->file, path, i);
		in->shape[i] = json_integer_value(e);
	}
	in->rank = (int)json_array_size(v);
	return 0;
}

static int parse_chain(struct ctx *x, struct chain *c, const char *feature,
		       json_t *v, int idx)
{
	char path[128];
	json_t *layers = v, *e;
	const char *key;
	size_t i;
	int rc, listy = 1;

	snprintf(path, sizeof(path), "features.%s", feature);
	c->in.feature = feature;
	c->in.output = feature;
	c->in.rank = -1;
	snprintf(c->in.feed, sizeof(c->in.feed), "prep/in%d", idx);
	snprintf(c->in.fetch, sizeof(c->in.fetch), "prep/out%d", idx);
	if (json_is_object(v)) {
		listy = 0;
		json_object_foreach(v, key, e) {
			if (!strcmp(key, "layers")) {
				continue;
			} else if (!strcmp(key, "output")) {
				if (!json_is_string(e) ||
				    !json_string_length(e))
					return tfk_errf(x->err, TFK_EINVAL,
						"%s: %s.output: expected a "
						"feature name", x->file, path);
				c->in.output = json_string_value(e);
			} else if (!strcmp(key, "shape")) {
				if ((rc = parse_shape(x, path, e, &c->in)))
					return rc;
			} else {
				return tfk_errf(x->err, TFK_EINVAL, "%s: %s.%s:"
						" unknown key", x->file, path,
						key);
			}
		}
		layers = json_object_get(v, "layers");
		snprintf(path + strlen(path), sizeof(path) - strlen(path),
			 ".layers");
	}
	if (!json_is_array(layers))
		return tfk_errf(x->err, TFK_EINVAL, "%s: %s: expected a list "
				"of layers", x->file, path);
	c->layers = tfk_calloc(json_array_size(layers) + 1,
			       sizeof(*c->layers));
	if (!c->layers)
		return tfk_errf(x->err, TFK_ENOMEM, "out of memory");
	json_array_foreach(layers, i, e) {
		struct layer *l = &c->layers[i];

		snprintf(l->path, sizeof(l->path), "%s[%zu]", path, i);
		c->n_layers = (int)i + 1;
		rc = parse_layer(x, l, e, (int)i);
		if (rc)
			return rc;
		if (l->kind == L_DECODE) {
			c->in.decode = 1;
			c->in.channels = l->h;
		}
	}
	(void)listy;
	if (c->in.decode && c->in.rank >= 0)
		return tfk_errf(x->err, TFK_EINVAL, "%s: %s: a decoded image "
				"takes its shape from its bytes: drop "
				"\"shape\"", x->file, path);
	return 0;
}

int tfk_prep_parse(struct tfk_prep **out, const char *path, const char *text,
		   size_t len, struct tfk_err *err)
{
	struct ctx x = { path, err };
	struct tfk_prep *p;
	json_error_t je;
	json_t *feats, *v;
	const char *key;
	int rc = 0, i = 0;

	*out = NULL;
	p = tfk_calloc(1, sizeof(*p));
	if (!p)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	p->path = tfk_malloc(strlen(path) + 1);
	if (!p->path) {
		tfk_free(p);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	strcpy(p->path, path);
	x.file = p->path;
	p->root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!p->root) {
		rc = tfk_errf(err, TFK_EINVAL, "%s:%d:%d: %s", path, je.line,
			      je.column, je.text);
		goto fail;
	}
	if (!json_is_object(p->root)) {
		rc = tfk_errf(err, TFK_EINVAL, "%s: expected an object "
			      "{\"features\": {...}}", path);
		goto fail;
	}
	json_object_foreach(p->root, key, v) {
		if (strcmp(key, "features")) {
			rc = tfk_errf(err, TFK_EINVAL, "%s: %s: unknown key",
				      path, key);
			goto fail;
		}
	}
	feats = json_object_get(p->root, "features");
	if (!json_is_object(feats) || json_object_size(feats) == 0) {
		rc = tfk_errf(err, TFK_EINVAL, "%s: features: expected an "
			      "object naming at least one feature", path);
		goto fail;
	}
	p->c = tfk_calloc(json_object_size(feats), sizeof(*p->c));
	if (!p->c) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto fail;
	}
	json_object_foreach(feats, key, v) {
		p->n = i + 1;
		rc = parse_chain(&x, &p->c[i], key, v, i);
		if (rc)
			goto fail;
		i++;
	}
	for (i = 0; i < p->n; i++) {
		int j;

		for (j = 0; j < i; j++)
			if (!strcmp(p->c[i].in.output, p->c[j].in.output)) {
				rc = tfk_errf(err, TFK_EINVAL, "%s: features."
					      "%s: output '%s' is also the "
					      "output of features.%s", path,
					      p->c[i].in.feature,
					      p->c[i].in.output,
					      p->c[j].in.feature);
				goto fail;
			}
	}
	*out = p;
	return 0;
fail:
	tfk_prep_free(p);
	return rc;
}

int tfk_prep_load(struct tfk_prep **p, const char *path, struct tfk_err *err)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, got;
	int rc;

	*p = NULL;
	if (!f)
		return tfk_errf(err, TFK_EIO, "%s: %s", path, strerror(errno));
	for (;;) {
		if (n == cap) {
			char *nb = tfk_realloc(buf, cap ? 2 * cap : 4096);

			if (!nb) {
				tfk_free(buf);
				fclose(f);
				return tfk_errf(err, TFK_ENOMEM, "out of "
						"memory");
			}
			buf = nb;
			cap = cap ? 2 * cap : 4096;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		tfk_free(buf);
		fclose(f);
		return tfk_errf(err, TFK_EIO, "%s: read error", path);
	}
	fclose(f);
	rc = tfk_prep_parse(p, path, buf, n, err);
	tfk_free(buf);
	return rc;
}

void tfk_prep_free(struct tfk_prep *p)
{
	int i, j;

	if (!p)
		return;
	for (i = 0; i < p->n; i++) {
		for (j = 0; j < p->c[i].n_layers; j++) {
			tfk_free(p->c[i].layers[j].a);
			tfk_free(p->c[i].layers[j].b);
			tfk_free(p->c[i].layers[j].idf);
		}
		tfk_free(p->c[i].layers);
	}
	tfk_free(p->c);
	json_decref(p->root);
	tfk_free(p->path);
	tfk_free(p);
}

int tfk_prep_n_inputs(const struct tfk_prep *p)
{
	return p->n;
}

const struct tfk_prep_input *tfk_prep_input(const struct tfk_prep *p, int i)
{
	return i >= 0 && i < p->n ? &p->c[i].in : NULL;
}

/* Building ---------------------------------------------------------------- */

static int to_float(struct tfk_graph *g, struct tfk_port *x,
		    struct tfk_err *err)
{
	const struct tfk_tdesc *d = tfk_graph_desc(g, *x);
	struct tfk_attr a = TFK_A_TYPE("DstT", TFK_DT_FLOAT);

	if (d->dtype == TFK_DT_FLOAT)
		return 0;
	return tfk_graph_add_node(g, "Cast", NULL, x, 1, &a, 1, x, err);
}

static int const_vec(struct tfk_graph *g, const float *v, int n,
		     struct tfk_port *out, struct tfk_err *err)
{
	struct tfk_tensor t;
	int64_t shape[1] = { n };
	int rc;

	if (n == 1)
		return tfk_graph_const_f32(g, NULL, v[0], out, err);
	rc = tfk_tensor_init(&t, TFK_DT_FLOAT, 1, shape, err);
	if (rc)
		return rc;
	memcpy(t.data, v, (size_t)n * sizeof(float));
	rc = tfk_graph_const(g, NULL, &t, out, err);
	tfk_tensor_release(&t);
	return rc;
}

static int binop(struct tfk_graph *g, const char *op, struct tfk_port *x,
		 struct tfk_port y, struct tfk_err *err)
{
	struct tfk_port in[2] = { *x, y };

	return tfk_graph_add_node(g, op, NULL, in, 2, NULL, 0, x, err);
}

/* Last dimension of x when it must match a per-channel list of n. */
static int check_last(struct tfk_graph *g, struct tfk_port x, int n,
		      struct tfk_err *err)
{
	const struct tfk_tdesc *d = tfk_graph_desc(g, x);
	int64_t last;

	if (n == 1)
		return 0;
	if (d->rank < 1)
		return tfk_errf(err, TFK_EINVAL, "%d values for a scalar "
				"input", n);
	last = d->shape[d->rank - 1];
	if (last >= 0 && last != n)
		return tfk_errf(err, TFK_EINVAL, "%d values for a last "
				"dimension of %lld", n, (long long)last);
	return 0;
}

static int vocab_tensor(const json_t *vocab, enum tfk_dtype dt,
			struct tfk_tensor *voc, struct tfk_err *err)
{
	int64_t n = (int64_t)json_array_size(vocab), i;
	int rc;

	rc = tfk_tensor_init(voc, dt, 1, &n, err);
	for (i = 0; i < n && !rc; i++) {
		json_t *e = json_array_get(vocab, (size_t)i);

		if (dt == TFK_DT_STRING)
			rc = tfk_tensor_set_str(voc, i, json_string_value(e),
						json_string_length(e), err);
		else
			((int64_t *)voc->data)[i] = json_integer_value(e);
	}
	if (rc)
		tfk_tensor_release(voc);
	return rc;
}

static int add_textvec(struct tfk_graph *g, const struct layer *l,
		       struct tfk_port *x, struct tfk_err *err)
{
	const struct tfk_tdesc *d = tfk_graph_desc(g, *x);
	const struct tfk_textvec_opts *o = &l->tvo;
	int64_t ng[TFK_TEXTVEC_MAX_NGRAMS];
	struct tfk_attr at[12];
	struct tfk_tensor voc;
	int na = 0, rc, i;

	if (!l->vocab)
		return tfk_errf(err, TFK_EINVAL, "TextVectorization has no "
				"vocabulary: run tfk-map --adapt first, or "
				"give one");
	if (d->dtype != TFK_DT_STRING)
		return tfk_errf(err, TFK_EINVAL, "TextVectorization takes "
				"bytes (text), got %s",
				tfk_dtype_name(d->dtype));
	rc = vocab_tensor(l->vocab, TFK_DT_STRING, &voc, err);
	if (rc)
		return rc;
	for (i = 0; i < o->n_ngrams; i++)
		ng[i] = o->ngrams[i];
	at[na++] = TFK_A_TYPE("out_type", o->mode == TFK_LOOKUP_INT ?
			      TFK_DT_INT64 : TFK_DT_FLOAT);
	at[na++] = TFK_A_TENSOR("vocabulary", &voc);
	at[na++] = TFK_A_STR("standardize", o->standardize == TFK_STD_NONE ?
			     "" : o->standardize == TFK_STD_LOWER ? "lower" :
			     o->standardize == TFK_STD_STRIP_PUNCTUATION ?
			     "strip_punctuation" :
			     "lower_and_strip_punctuation");
	at[na++] = TFK_A_STR("split", o->split == TFK_SPLIT_NONE ? "" :
			     "whitespace");
	at[na++] = (struct tfk_attr){ "ngrams", { .kind = TFK_ATTR_LIST_INT,
		.list = { .n = o->n_ngrams, .i = ng } } };
	at[na++] = TFK_A_STR("output_mode", l->omode);
	at[na++] = TFK_A_INT("max_tokens", o->max_tokens);
	at[na++] = TFK_A_BOOL("pad_to_max_tokens", o->pad_to_max_tokens);
	at[na++] = TFK_A_INT("output_sequence_length",
			     o->output_sequence_length);
	at[na++] = TFK_A_INT("depth", l->depth > 0 ? l->depth : 1);
	if (l->n_idf)
		at[na++] = (struct tfk_attr){ "idf_weights", { .kind =
			TFK_ATTR_LIST_FLOAT, .list = { .n = l->n_idf,
			.f = l->idf } } };
	rc = tfk_graph_add_node(g, "TextVectorization", NULL, x, 1, at, na,
				x, err);
	tfk_tensor_release(&voc);
	return rc;
}

/* Resizing's crop_to_aspect_ratio (Keras' smart_resize): the centered
 * window of the output's aspect ratio, a Slice, before the resize. The
 * window depends on the image size, so that size must be fixed. */
static int crop_aspect(struct tfk_graph *g, const struct layer *l,
		       struct tfk_port *x, struct tfk_err *err)
{
	const struct tfk_tdesc *d = tfk_graph_desc(g, *x);
	struct tfk_crop box;
	struct tfk_port in[3];
	int32_t begin[3], size[3];
	int rc;

	if (!d || d->rank != 3 || d->shape[0] < 1 || d->shape[1] < 1)
		return tfk_errf(err, TFK_EINVAL, "crop_to_aspect_ratio needs "
				"images of one fixed size (give the chain a "
				"\"shape\", not DecodeImage)");
	tfk_resize_crop_aspect((int)d->shape[0], (int)d->shape[1], l->h, l->w,
			       &box);
	begin[0] = box.y;
	begin[1] = box.x;
	begin[2] = 0;
	size[0] = box.h;
	size[1] = box.w;
	size[2] = -1;
	in[0] = *x;
	if ((rc = tfk_graph_const_i32v(g, NULL, begin, 3, &in[1], err)) ||
	    (rc = tfk_graph_const_i32v(g, NULL, size, 3, &in[2], err)))
		return rc;
	return tfk_graph_add_node(g, "Slice", NULL, in, 3, NULL, 0, x, err);
}

static int add_categorical(struct tfk_graph *g, const struct layer *l,
			   struct tfk_port *x, struct tfk_err *err)
{
	const struct tfk_tdesc *d = tfk_graph_desc(g, *x);
	struct tfk_attr at[12];
	struct tfk_tensor voc;
	int na = 0, rc;

	if (d->rank > 1)
		return tfk_errf(err, TFK_EINVAL, "expected a list of values "
				"(rank 0 or 1), got rank %d", d->rank);
	switch (l->kind) {
	case L_HASH:
		if (d->dtype != TFK_DT_STRING && d->dtype != TFK_DT_INT64 &&
		    d->dtype != TFK_DT_INT32)
			return tfk_errf(err, TFK_EINVAL, "Hashing takes bytes "
					"or int64 values, got %s",
					tfk_dtype_name(d->dtype));
		at[na++] = TFK_A_INT("num_bins", l->num);
		at[na++] = TFK_A_BOOL("has_mask", l->has_mask);
		if (l->has_mask)
			at[na++] = TFK_A_STR("mask_value", l->mask);
		at[na++] = TFK_A_BOOL("salted", l->salted);
		at[na++] = TFK_A_INT("salt0", l->salt[0]);
		at[na++] = TFK_A_INT("salt1", l->salt[1]);
		rc = tfk_graph_add_node(g, "Hashing", NULL, x, 1, at, na, x,
					err);
		if (rc || !strcmp(l->omode, "int"))
			return rc;
		na = 0;
		at[na++] = TFK_A_INT("num_tokens", l->depth);
		at[na++] = TFK_A_STR("output_mode", l->omode);
		return tfk_graph_add_node(g, "CategoryEncoding", NULL, x, 1,
					  at, na, x, err);
	case L_DISC: {
		struct tfk_attr b = { "boundaries", { .kind =
			TFK_ATTR_LIST_FLOAT, .list = { .n = l->n_a,
			.f = l->a } } };
		struct tfk_attr c = TFK_A_TYPE("DstT", TFK_DT_INT64);

		if (l->need_adapt)
			return tfk_errf(err, TFK_EINVAL, "Discretization has "
					"no bin_boundaries: run tfk-map "
					"--adapt first, or give them");
		if (d->dtype == TFK_DT_STRING || d->dtype == TFK_DT_UINT8)
			return tfk_errf(err, TFK_EINVAL, "Discretization takes "
					"numbers, got %s",
					tfk_dtype_name(d->dtype));
		rc = tfk_graph_add_node(g, "Bucketize", NULL, x, 1, &b, 1, x,
					err);
		if (rc)
			return rc;
		rc = tfk_graph_add_node(g, "Cast", NULL, x, 1, &c, 1, x, err);
		if (rc || !strcmp(l->omode, "int"))
			return rc;
		at[na++] = TFK_A_INT("num_tokens", l->depth);
		at[na++] = TFK_A_STR("output_mode", l->omode);
		return tfk_graph_add_node(g, "CategoryEncoding", NULL, x, 1,
					  at, na, x, err);
	}
	case L_CATENC:
		if (d->dtype != TFK_DT_INT64 && d->dtype != TFK_DT_INT32)
			return tfk_errf(err, TFK_EINVAL, "CategoryEncoding "
					"takes integers, got %s",
					tfk_dtype_name(d->dtype));
		at[na++] = TFK_A_INT("num_tokens", l->num);
		at[na++] = TFK_A_STR("output_mode", l->omode);
		return tfk_graph_add_node(g, "CategoryEncoding", NULL, x, 1,
					  at, na, x, err);
	}
	if (l->kind == L_TEXTVEC)
		return add_textvec(g, l, x, err);
	/* lookups */
	if (!l->vocab)
		return tfk_errf(err, TFK_EINVAL, "%s has no vocabulary: run "
				"tfk-map --adapt first, or give one",
				l->kind == L_SLOOK ? "StringLookup" :
				"IntegerLookup");
	if (l->kind == L_SLOOK ? d->dtype != TFK_DT_STRING :
	    d->dtype != TFK_DT_INT64 && d->dtype != TFK_DT_INT32)
		return tfk_errf(err, TFK_EINVAL, "%s takes %s values, got %s",
				l->kind == L_SLOOK ? "StringLookup" :
				"IntegerLookup", l->kind == L_SLOOK ?
				"bytes" : "int64", tfk_dtype_name(d->dtype));
	{
		int64_t n = (int64_t)json_array_size(l->vocab), i;

		rc = tfk_tensor_init(&voc, l->kind == L_SLOOK ?
				     TFK_DT_STRING : TFK_DT_INT64, 1, &n, err);
		if (rc)
			return rc;
		for (i = 0; i < n && !rc; i++) {
			json_t *e = json_array_get(l->vocab, (size_t)i);

			if (l->kind == L_SLOOK)
				rc = tfk_tensor_set_str(&voc, i,
					json_string_value(e),
					json_string_length(e), err);
			else
				((int64_t *)voc.data)[i] =
					json_integer_value(e);
		}
	}
	if (!rc) {
		at[na++] = TFK_A_TYPE("out_type", strcmp(l->omode, "int") ?
				      TFK_DT_FLOAT : TFK_DT_INT64);
		at[na++] = TFK_A_TENSOR("vocabulary", &voc);
		at[na++] = TFK_A_INT("num_oov_indices", l->num_oov);
		at[na++] = TFK_A_BOOL("has_mask", l->has_mask);
		at[na++] = TFK_A_STR("mask_token", l->mask);
		at[na++] = TFK_A_STR("oov_token", l->oov);
		at[na++] = TFK_A_STR("output_mode", l->omode);
		at[na++] = TFK_A_INT("max_tokens", l->max_tokens);
		at[na++] = TFK_A_BOOL("pad_to_max_tokens", l->pad);
		at[na++] = TFK_A_INT("depth", l->depth);
		if (l->n_idf)
			at[na++] = (struct tfk_attr){ "idf_weights", { .kind =
				TFK_ATTR_LIST_FLOAT, .list = { .n = l->n_idf,
				.f = l->idf } } };
		rc = tfk_graph_add_node(g, l->kind == L_SLOOK ?
					"StringLookup" : "IntegerLookup", NULL,
					x, 1, at, na, x, err);
	}
	tfk_tensor_release(&voc);
	return rc;
}

/*
 * A Rescaling right before a flip or a transform, by one scale (and
 * offset), is done by that op as it reads its input (struct
 * tfk_aug_image's rescale): bit for bit the same values, one pass over
 * the image instead of three (Cast, Mul, the op). Its nodes are still
 * added, unused, so the later nodes keep their numbers, which key their
 * random draws; the executor prunes them.
 */
static int folds(const struct layer *l, const struct layer *next)
{
	return l->kind == L_RESCALE && l->n_a == 1 && l->n_b <= 1 &&
		(next->kind == L_FLIP || next->kind == L_ROT ||
		 next->kind == L_TRANS || next->kind == L_ZOOM);
}

/* Add layer l's nodes after *x, with pre (or NULL) folded in. */
static int add_layer(struct tfk_graph *g, const struct layer *l,
		     const struct layer *pre, struct tfk_port *x,
		     struct tfk_err *err)
{
	const struct tfk_tdesc *d = tfk_graph_desc(g, *x);
	struct tfk_port c;
	struct tfk_attr at[12];
	const char *op = NULL;
	int na = 0, rc;

	if (l->kind >= L_HASH)
		return add_categorical(g, l, x, err);
	if (d->dtype == TFK_DT_STRING && l->kind != L_DECODE)
		return tfk_errf(err, TFK_EINVAL, "expected numbers, got bytes "
				"(strings): raw image bytes need a \"shape\" "
				"in the spec, encoded ones DecodeImage");
	if (l->kind != L_RESCALE && l->kind != L_NORM && l->kind != L_DECODE
	    && d->rank != 3)
		return tfk_errf(err, TFK_EINVAL, "expected an image [h, w, c]"
				" (uint8 bytes with a \"shape\" or DecodeImage,"
				" or floats with a \"shape\"), got rank %d",
				d->rank);
	/* Keras casts inputs to its float compute dtype; the image ops take
	 * uint8 as is (exact in float32) and other integers cast. */
	if (l->kind != L_DECODE && d->dtype != TFK_DT_UINT8 &&
	    (rc = to_float(g, x, err)))
		return rc;
	switch (l->kind) {
	case L_DECODE:
		return 0;
	case L_RESCALE:
		if ((rc = to_float(g, x, err)) ||
		    (rc = check_last(g, *x, l->n_a, err)) ||
		    (rc = const_vec(g, l->a, l->n_a, &c, err)) ||
		    (rc = binop(g, "Mul", x, c, err)))
			return rc;
		if (!l->n_b)
			return 0;
		if ((rc = check_last(g, *x, l->n_b, err)) ||
		    (rc = const_vec(g, l->b, l->n_b, &c, err)))
			return rc;
		return binop(g, "AddV2", x, c, err);
	case L_NORM: {
		float *sd;
		int i, n = l->n_b;

		if (!l->n_a)
			return tfk_errf(err, TFK_EINVAL, "Normalization has no "
					"mean and variance: run tfk-map "
					"--adapt first, or give them");
		if (l->scalar && (l->n_a != 1 || l->n_b != 1))
			return tfk_errf(err, TFK_EINVAL, "axis null takes one "
					"mean and one variance");
		/* (x - mean) / max(sqrt(var), epsilon), as Keras' call() */
		sd = tfk_malloc((size_t)n * sizeof(float));
		if (!sd)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		for (i = 0; i < n; i++) {
			sd[i] = sqrtf(l->b[i]);
			if (!(sd[i] >= KERAS_EPSILON))
				sd[i] = KERAS_EPSILON;
		}
		rc = to_float(g, x, err);
		if (!rc)
			rc = check_last(g, *x, l->n_a, err);
		if (!rc)
			rc = check_last(g, *x, n, err);
		if (!rc && !l->invert) {
			if (!(rc = const_vec(g, l->a, l->n_a, &c, err)) &&
			    !(rc = binop(g, "Sub", x, c, err)) &&
			    !(rc = const_vec(g, sd, n, &c, err)))
				rc = binop(g, "RealDiv", x, c, err);
		} else if (!rc) {
			/* mean + x * max(sqrt(var), epsilon) */
			if (!(rc = const_vec(g, sd, n, &c, err)) &&
			    !(rc = binop(g, "Mul", x, c, err)) &&
			    !(rc = const_vec(g, l->a, l->n_a, &c, err)))
				rc = binop(g, "AddV2", x, c, err);
		}
		tfk_free(sd);
		return rc;
	}
	case L_RESIZE: {
		static const char *const names[] = { "ResizeBilinear",
			"ResizeNearestNeighbor", "ResizeBicubic",
			"ResizeArea" };
		int32_t size[2] = { l->h, l->w };
		struct tfk_port in[2];

		if (l->crop && (rc = crop_aspect(g, l, x, err)))
			return rc;
		rc = tfk_graph_const_i32v(g, NULL, size, 2, &c, err);
		if (rc)
			return rc;
		in[0] = *x;
		in[1] = c;
		return tfk_graph_add_node(g, names[l->method], NULL, in, 2,
					  NULL, 0, x, err);
	}
	case L_CENTER:
	case L_RCROP:
		op = l->kind == L_CENTER ? "CenterCrop" : "RandomCrop";
		at[na++] = TFK_A_INT("height", l->h);
		at[na++] = TFK_A_INT("width", l->w);
		break;
	case L_FLIP:
		op = "RandomFlip";
		at[na++] = TFK_A_STR("mode", l->mode);
		break;
	case L_ROT:
	case L_CONTRAST:
		op = l->kind == L_ROT ? "RandomRotation" : "RandomContrast";
		at[na++] = TFK_A_FLOAT("lower", l->a_lo);
		at[na++] = TFK_A_FLOAT("upper", l->a_hi);
		if (l->kind == L_CONTRAST) {
			at[na++] = TFK_A_FLOAT("value_lo", l->b_lo);
			at[na++] = TFK_A_FLOAT("value_hi", l->b_hi);
		}
		break;
	case L_TRANS:
	case L_ZOOM:
		op = l->kind == L_TRANS ? "RandomTranslation" : "RandomZoom";
		at[na++] = TFK_A_FLOAT("h_lower", l->a_lo);
		at[na++] = TFK_A_FLOAT("h_upper", l->a_hi);
		at[na++] = TFK_A_FLOAT("w_lower", l->b_lo);
		at[na++] = TFK_A_FLOAT("w_upper", l->b_hi);
		if (l->kind == L_ZOOM)
			at[na++] = TFK_A_BOOL("has_width", l->has_width);
		break;
	}
	if (l->kind == L_ROT || l->kind == L_TRANS || l->kind == L_ZOOM) {
		at[na++] = TFK_A_STR("fill_mode", l->fill_mode);
		at[na++] = TFK_A_STR("interpolation", l->interp);
		at[na++] = TFK_A_FLOAT("fill_value", l->fill_value);
	}
	if (pre) {
		at[na++] = TFK_A_INT("in_rescale", pre->n_b ?
				     TFK_AUG_RESCALE_OFFSET :
				     TFK_AUG_RESCALE_SCALE);
		at[na++] = TFK_A_FLOAT("in_scale", pre->a[0]);
		at[na++] = TFK_A_FLOAT("in_offset", pre->n_b ? pre->b[0] : 0);
	}
	return tfk_graph_add_node(g, op, NULL, x, 1, at, na, x, err);
}

static int build_chain(const struct tfk_prep *p, struct tfk_graph *g,
		       int ci, int upto, enum tfk_dtype dtype,
		       const char *outname, struct tfk_err *err)
{
	const struct chain *c = &p->c[ci];
	int64_t shape[TFK_MAX_RANK];
	struct tfk_port x, before;
	int rank, i, rc;

	if (c->in.decode) {
		rank = 3;
		shape[0] = shape[1] = -1;
		shape[2] = c->in.channels ? c->in.channels : -1;
	} else if (c->in.rank >= 0) {
		rank = c->in.rank;
		memcpy(shape, c->in.shape, sizeof(shape));
	} else {
		rank = 1;
		shape[0] = -1;
	}
	rc = tfk_graph_placeholder(g, c->in.feed, dtype, rank, shape, &x, err);
	if (rc)
		return tfk_err_prefix(err, "%s: features.%s", p->path,
				      c->in.feature);
	for (i = 0; i < upto; i++) {
		const struct layer *l = &c->layers[i];
		int fold = i > 0 && folds(l - 1, l);
		struct tfk_port in = fold ? before : x;	/* fold: skip l - 1 */

		before = x;
		rc = add_layer(g, l, fold ? l - 1 : NULL, &in, err);
		if (rc)
			return tfk_err_prefix(err, "%s: %s", p->path, l->path);
		x = in;
	}
	rc = tfk_graph_set_output(g, outname, x, err);
	if (rc)
		return tfk_err_prefix(err, "%s: features.%s", p->path,
				      c->in.feature);
	return 0;
}

int tfk_prep_build(const struct tfk_prep *p, struct tfk_graph *g,
		   const enum tfk_dtype *dtypes, struct tfk_err *err)
{
	int i, rc;

	for (i = 0; i < p->n; i++) {
		rc = build_chain(p, g, i, p->c[i].n_layers, dtypes[i],
				 p->c[i].in.fetch, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* Adapt ------------------------------------------------------------------ */

int tfk_prep_next_adapt(const struct tfk_prep *p, int *chain, int *layer)
{
	int i, j;

	for (i = 0; i < p->n; i++)
		for (j = 0; j < p->c[i].n_layers; j++) {
			const struct layer *l = &p->c[i].layers[j];

			*chain = i;
			*layer = j;
			if (l->kind == L_NORM && !l->n_a)
				return TFK_PREP_ADAPT_NORM;
			if (l->kind == L_TEXTVEC && !l->vocab)
				return TFK_PREP_ADAPT_TEXT;
			if ((l->kind == L_SLOOK || l->kind == L_ILOOK) &&
			    l->need_adapt)
				return TFK_PREP_ADAPT_LOOKUP;
			if (l->kind == L_DISC && l->need_adapt)
				return TFK_PREP_ADAPT_DISC;
		}
	return 0;
}

/* tf_idf: store the learned weights as "idf_weights", one per entry of
 * get_vocabulary() (the special slots' mean in front, as Keras pads
 * them), and keep them for building. */
static int set_idf(const struct tfk_prep *p, struct layer *l,
		   const struct tfk_lookup *lk, struct tfk_err *err)
{
	long i, n = tfk_lookup_size(lk);
	json_t *arr = json_array();
	float *w = tfk_malloc((size_t)(n ? n : 1) * sizeof(*w));

	(void)p;
	if (!arr || !w) {
		json_decref(arr);
		tfk_free(w);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		w[i] = tfk_lookup_idf(lk, i);
		if (json_array_append_new(arr, json_real((double)w[i]))) {
			json_decref(arr);
			tfk_free(w);
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		}
	}
	if (json_object_set_new(l->cfg, "idf_weights", arr)) {
		tfk_free(w);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	tfk_free(l->idf);
	l->idf = w;
	l->n_idf = (int)n;
	return 0;
}

/* Store a learned vocabulary as the layer's "vocabulary" config, as
 * Keras' get_vocabulary() lists it: strings, or integers (ints); in
 * tf_idf mode its "idf_weights" too. */
static int set_vocabulary(const struct tfk_prep *p, struct layer *l,
			  const struct tfk_lookup *lk, int ints,
			  struct tfk_err *err)
{
	json_t *arr = json_array();
	long i, n = tfk_lookup_size(lk);

	if (!arr)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		size_t len = 0;
		const char *tok = ints ? NULL : tfk_lookup_token(lk, i, &len);
		json_t *js = ints ? json_integer(tfk_lookup_token_int(lk, i)) :
			     json_stringn(tok ? tok : "", tok ? len : 0);

		if (!js) {	/* jansson refuses what is not UTF-8 */
			json_decref(arr);
			return tfk_errf(err, TFK_EINVAL, "%s: %s: vocabulary "
					"token %ld is not UTF-8 text, which a "
					"JSON spec cannot hold", p->path,
					l->path, i);
		}
		if (json_array_append_new(arr, js)) {
			json_decref(arr);
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		}
	}
	if (json_object_set_new(l->cfg, "vocabulary", arr))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	l->vocab = arr;
	return lk->o.mode == TFK_LOOKUP_TF_IDF ? set_idf(p, l, lk, err) : 0;
}

struct tfk_prep_tadapt {
	struct tfk_prep *p;
	struct layer *l;
	struct tfk_textvec tv;
	struct tfk_vcount *vc;
};

int tfk_prep_tadapt_new(struct tfk_prep *p, int chain, int layer,
			struct tfk_prep_tadapt **out, struct tfk_err *err)
{
	struct tfk_prep_tadapt *t;
	int rc;

	*out = NULL;
	if (p->c[chain].layers[layer].pos != 0)
		return tfk_errf(err, TFK_EINVAL, "%s: %s: adapting "
				"TextVectorization needs it first in its chain",
				p->path, p->c[chain].layers[layer].path);
	t = tfk_calloc(1, sizeof(*t));
	if (!t)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	t->p = p;
	t->l = &p->c[chain].layers[layer];
	rc = tfk_textvec_init(&t->tv, &t->l->tvo, err);
	if (rc) {
		tfk_err_prefix(err, "%s: %s", p->path, t->l->path);
		tfk_free(t);
		return rc;
	}
	rc = tfk_vcount_new(&t->vc, err);
	if (rc) {
		tfk_textvec_release(&t->tv);
		tfk_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int tfk_prep_tadapt_add(struct tfk_prep_tadapt *t, const char *s, size_t n,
			struct tfk_err *err)
{
	return tfk_textvec_adapt(&t->tv, t->vc, s, n, err);
}

int tfk_prep_tadapt_finish(struct tfk_prep_tadapt *t, struct tfk_err *err)
{
	struct layer *l = t->l;
	int rc;

	rc = tfk_textvec_adapt_finish(&t->tv, t->vc, err);
	if (rc)
		return rc;
	rc = set_vocabulary(t->p, l, &t->tv.lk, 0, err);
	if (rc)
		return rc;
	l->depth = tfk_textvec_depth(&t->tv);
	return 0;
}

void tfk_prep_tadapt_free(struct tfk_prep_tadapt *t)
{
	if (!t)
		return;
	tfk_textvec_release(&t->tv);
	tfk_vcount_free(t->vc);
	tfk_free(t);
}

int tfk_prep_build_adapt(const struct tfk_prep *p, struct tfk_graph *g,
			 int chain, int layer, enum tfk_dtype dtype,
			 struct tfk_err *err)
{
	return build_chain(p, g, chain, layer, dtype, "prep/adapt", err);
}

int tfk_prep_adapt_n(const struct tfk_prep *p, int chain, int layer,
		     int64_t last_dim)
{
	return p->c[chain].layers[layer].scalar ? 1 : (int)last_dim;
}

int tfk_prep_set_norm(struct tfk_prep *p, int chain, int layer,
		      const double *mean, const double *var, int n,
		      struct tfk_err *err)
{
	struct layer *l = &p->c[chain].layers[layer];
	json_t *jm, *jv;
	int i;

	l->a = tfk_malloc((size_t)n * sizeof(float));
	l->b = tfk_malloc((size_t)n * sizeof(float));
	jm = l->scalar ? json_real(mean[0]) : json_array();
	jv = l->scalar ? json_real(var[0]) : json_array();
	if (!l->a || !l->b || !jm || !jv)
		goto nomem;
	for (i = 0; i < n; i++) {
		l->a[i] = (float)mean[i];
		l->b[i] = (float)var[i];
		if (!l->scalar && (json_array_append_new(jm,
						json_real(mean[i])) ||
				   json_array_append_new(jv,
						json_real(var[i]))))
			goto nomem;
	}
	if (json_object_set_new(l->cfg, "mean", jm)) {
		jm = NULL;
		goto nomem;
	}
	jm = NULL;
	if (json_object_set_new(l->cfg, "variance", jv)) {
		jv = NULL;
		goto nomem;
	}
	l->n_a = l->n_b = n;
	return 0;
nomem:
	json_decref(jm);
	json_decref(jv);
	tfk_free(l->a);
	tfk_free(l->b);
	l->a = l->b = NULL;
	l->n_a = l->n_b = 0;
	return tfk_errf(err, TFK_ENOMEM, "out of memory");
}

/* Lookup adapt ----------------------------------------------------------- */

struct tfk_prep_ladapt {
	struct tfk_prep *p;
	struct layer *l;
	struct tfk_lookup lk;
	struct tfk_vcount *vc;
};

int tfk_prep_ladapt_new(struct tfk_prep *p, int chain, int layer,
			struct tfk_prep_ladapt **out, struct tfk_err *err)
{
	struct layer *l = &p->c[chain].layers[layer];
	struct tfk_lookup_opts o;
	struct tfk_prep_ladapt *t;
	int rc;

	*out = NULL;
	if (l->pos != 0)
		return tfk_errf(err, TFK_EINVAL, "%s: %s: adapting a lookup "
				"needs it first in its chain", p->path,
				l->path);
	t = tfk_calloc(1, sizeof(*t));
	if (!t)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	t->p = p;
	t->l = l;
	lookup_opts(l, &o);
	rc = tfk_lookup_init(&t->lk, &o, err);
	if (rc) {
		tfk_err_prefix(err, "%s: %s", p->path, l->path);
		tfk_free(t);
		return rc;
	}
	rc = tfk_vcount_new(&t->vc, err);
	if (rc) {
		tfk_lookup_release(&t->lk);
		tfk_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int tfk_prep_ladapt_is_int(const struct tfk_prep_ladapt *t)
{
	return t->l->kind == L_ILOOK;
}

int tfk_prep_ladapt_add(struct tfk_prep_ladapt *t, const void *s, size_t n,
			struct tfk_err *err)
{
	return tfk_vcount_add(t->vc, s, n, err);
}

int tfk_prep_ladapt_add_int(struct tfk_prep_ladapt *t, int64_t v,
			    struct tfk_err *err)
{
	return tfk_vcount_add_int(t->vc, v, err);
}

void tfk_prep_ladapt_end_doc(struct tfk_prep_ladapt *t)
{
	tfk_vcount_end_doc(t->vc);
}

int tfk_prep_ladapt_finish(struct tfk_prep_ladapt *t, struct tfk_err *err)
{
	struct layer *l = t->l;
	int ints = l->kind == L_ILOOK;
	int rc;

	rc = tfk_lookup_adapt(&t->lk, t->vc, err);
	if (rc)
		return tfk_err_prefix(err, "%s: %s", t->p->path, l->path);
	if (tfk_lookup_size(&t->lk) <= t->lk.token_start)
		return tfk_errf(err, TFK_EINVAL, "%s: %s: no tokens to learn "
				"a vocabulary from", t->p->path, l->path);
	rc = set_vocabulary(t->p, l, &t->lk, ints, err);
	if (rc)
		return rc;
	l->need_adapt = 0;
	l->depth = tfk_lookup_depth(&t->lk);
	return 0;
}

void tfk_prep_ladapt_free(struct tfk_prep_ladapt *t)
{
	if (!t)
		return;
	tfk_lookup_release(&t->lk);
	tfk_vcount_free(t->vc);
	tfk_free(t);
}

/* Discretization adapt ---------------------------------------------------- */

struct tfk_prep_dadapt {
	struct tfk_prep *p;
	struct layer *l;
	struct tfk_discretize d;
	int64_t n;
};

int tfk_prep_dadapt_new(struct tfk_prep *p, int chain, int layer,
			struct tfk_prep_dadapt **out, struct tfk_err *err)
{
	struct tfk_prep_dadapt *t;
	int rc;

	*out = NULL;
	t = tfk_calloc(1, sizeof(*t));
	if (!t)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	t->p = p;
	t->l = &p->c[chain].layers[layer];
	rc = tfk_discretize_init_adapt(&t->d, t->l->num, t->l->epsilon, err);
	if (rc) {
		tfk_err_prefix(err, "%s: %s", p->path, t->l->path);
		tfk_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int tfk_prep_dadapt_update(struct tfk_prep_dadapt *t, const float *v,
			   size_t n, struct tfk_err *err)
{
	if (!n)
		return 0;
	t->n += (int64_t)n;
	return tfk_discretize_update(&t->d, v, n, err);
}

int tfk_prep_dadapt_finish(struct tfk_prep_dadapt *t, struct tfk_err *err)
{
	struct layer *l = t->l;
	json_t *arr;
	float *a;
	size_t i;
	int rc;

	if (!t->n)
		return tfk_errf(err, TFK_EINVAL, "%s: %s: no values to adapt "
				"from", t->p->path, l->path);
	rc = tfk_discretize_finish(&t->d, err);
	if (rc)
		return tfk_err_prefix(err, "%s: %s", t->p->path, l->path);
	arr = json_array();
	a = tfk_malloc((t->d.n_bounds ? t->d.n_bounds : 1) * sizeof(float));
	if (!arr || !a)
		goto nomem;
	for (i = 0; i < t->d.n_bounds; i++) {
		a[i] = t->d.bounds[i];
		if (json_array_append_new(arr, json_real(t->d.bounds[i])))
			goto nomem;
	}
	if (json_object_set_new(l->cfg, "bin_boundaries", arr)) {
		arr = NULL;
		goto nomem;
	}
	tfk_free(l->a);
	l->a = a;
	l->n_a = (int)t->d.n_bounds;
	l->depth = l->n_a + 1;
	l->need_adapt = 0;
	return 0;
nomem:
	json_decref(arr);
	tfk_free(a);
	return tfk_errf(err, TFK_ENOMEM, "out of memory");
}

void tfk_prep_dadapt_free(struct tfk_prep_dadapt *t)
{
	if (!t)
		return;
	tfk_discretize_release(&t->d);
	tfk_free(t);
}

char *tfk_prep_dump(const struct tfk_prep *p)
{
	return json_dumps(p->root, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
			  JSON_REAL_PRECISION(17));
}

/* One layer inside a model -------------------------------------------------- */

/*
 * The Keras model front end (nn/model.c) reuses the layer parser and
 * builder for the preprocessing layers a model carries. Only the
 * elementwise ones apply to a batch as they do to one record; the image
 * layers work on one [h, w, c] image and stay in tfk-map.
 */
int tfk_prep_layer_add(struct tfk_graph *g, const struct json_t *obj,
		       const char *path, struct tfk_port *x,
		       struct tfk_err *err)
{
	char file[160];
	const char *sep = strstr(path, ": ");
	struct ctx cx = { file, err };
	struct layer l;
	json_t *cfg = json_object_get(obj, "config"), *view;
	int rc;

	memset(&l, 0, sizeof(l));
	snprintf(file, sizeof(file), "%.*s", sep ? (int)(sep - path) : 0,
		 path);
	snprintf(l.path, sizeof(l.path), "%s", sep ? sep + 2 : path);
	if (!json_is_object(cfg))
		return bad(&cx, l.path, NULL, "expected a \"config\" object");
	/* the layer without the model's keys (inbound_nodes, name) */
	view = json_pack("{s:O, s:O}", "class_name",
			 json_object_get(obj, "class_name"), "config", cfg);
	if (!view)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = parse_layer(&cx, &l, view, 1);
	json_decref(view);
	/* the categorical ones through nn/preplayers.c */
	if (!rc && l.kind != L_RESCALE && l.kind != L_NORM &&
	    l.kind != L_SLOOK && l.kind != L_ILOOK && l.kind != L_HASH &&
	    l.kind != L_DISC && l.kind != L_TEXTVEC)
		rc = bad(&cx, l.path, NULL, "only Rescaling, Normalization, "
			 "StringLookup, IntegerLookup, Hashing, "
			 "Discretization and TextVectorization work inside a "
			 "model; image layers run in tfk-map");
	if (!rc) {
		rc = add_layer(g, &l, NULL, x, err);
		if (rc)
			tfk_err_prefix(err, "%s: %s", file, l.path);
	}
	tfk_free(l.a);
	tfk_free(l.b);
	if (rc && !sep && !strncmp(err->msg, ": ", 2))
		memmove(err->msg, err->msg + 2, strlen(err->msg + 2) + 1);
	return rc;
}
