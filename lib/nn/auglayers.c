/*
 * auglayers.c - Keras' image augmentation layers inside a model
 * (RandomFlip, RandomRotation, RandomZoom, RandomTranslation,
 * RandomContrast, RandomBrightness, RandomCrop): random in the training
 * branch, the identity in the inference branch, as Keras calls them
 * with training=True in fit() and training=False in predict() and in
 * an export; and the two image preprocessing layers made of the same
 * crop and resize, Resizing (bilinear, optionally cropped to the
 * target's aspect first) and CenterCrop (a target no larger than the
 * input), the same in both branches.
 *
 * The config is read by Keras 3's rules (keras/src/layers/
 * preprocessing/image_preprocessing): a factor f means (-f, f) for
 * rotation, zoom, translation and brightness and (0, f) for contrast
 * (its bounds are [0, 1]); a list [a, b] is sorted; the bounds are
 * checked as Keras checks them. Messages name the JSON path.
 *
 * Training branch: the tfk-map ops of kernels/cpu/preprocess.c (one
 * per layer, the arithmetic of prep/augment.h) on the [batch, h, w, c]
 * tensor. They draw per image, from Philox keyed by the executor's
 * per-step key, so every example of every step gets its own transform
 * (Keras 3 draws RandomCrop's window once per batch: here it is per
 * image, as tfk-map does). RandomBrightness is Keras' own expansion,
 * x + (u * (hi - lo) + lo) * (vr1 - vr0), clipped to value_range, with
 * u RandomUniform of shape [batch, 1, 1, 1] (ops TensorFlow has).
 *
 * Inference branch: nothing, except RandomCrop, which returns the
 * target size as Keras documents ("at inference time ... the largest
 * possible window in the image that matches the target aspect ratio",
 * tf_keras' smart_resize): a centred Slice and a ResizeBilinear
 * (half-pixel centres), TF ops, so the SavedModel is TensorFlow's.
 * Keras 3.15's code returns the image uncropped there, which breaks
 * every layer after it whose weights were built for the target size.
 *
 * The layers' "seed" is accepted and unused: randomness comes from
 * tfk-train --seed only. The random ops have no gradient: the layers
 * go where Keras users put them, before any trainable weight, and one
 * after a weight is refused by name (RandomBrightness, made of ops with
 * gradients, works anywhere).
 */
#include "nn/keras-impl.h"
#include "prep/augment.h"
#include "graph/graph.h"
#include "util/alloc.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { A_FLIP, A_ROT, A_ZOOM, A_TRANS, A_CONTRAST, A_BRIGHT, A_CROP,
	A_RESIZE, A_CENTER };

/* One layer's config, as Keras holds it after __init__. */
struct aug {
	int kind;
	int mode;			/* RandomFlip: TFK_AUG_FLIP_* */
	double lo, hi;			/* factor / height_factor */
	double wlo, whi;		/* width_factor */
	int has_width;			/* RandomZoom: width_factor given */
	double vlo, vhi;		/* value_range */
	struct tfk_aug_warp wp;
	const char *fill_mode, *interp;
	long h, w;			/* RandomCrop, Resizing, CenterCrop */
	int crop_aspect;		/* Resizing: crop_to_aspect_ratio */
};

static const json_t *cget(const struct klayer *l, const char *key)
{
	const json_t *v = json_object_get(l->cfg, key);

	return v && !json_is_null(v) ? v : NULL;
}

static int kind_of(const char *cls)
{
	static const char *const names[] = { "RandomFlip", "RandomRotation",
		"RandomZoom", "RandomTranslation", "RandomContrast",
		"RandomBrightness", "RandomCrop", "Resizing", "CenterCrop" };
	int i;

	for (i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (!strcmp(cls, names[i]))
			return i;
	return -1;
}

/*
 * A factor at key by Keras 3's rules. base (the BaseImagePreprocessing
 * layers: rotation, contrast, brightness): a number f in [blo, bhi]
 * gives (max(-|f|, blo), |f|); a list [a, b] is refused when a > bhi or
 * b < blo, then sorted. Otherwise (zoom, translation): each number in
 * (blo, bhi] (zoom) or [blo, bhi] (translation, open 0), f gives
 * (-|f|, |f|), a list is sorted.
 */
static int factor(struct kctx *c, struct klayer *l, const char *key,
		  int base, double blo, double bhi, int lo_open,
		  double *lo, double *hi)
{
	const json_t *j = cget(l, key);
	char what[160];
	double a, b;

	snprintf(what, sizeof(what), "expected a number or a list of 2 "
		 "numbers in %s%g, %g]", lo_open ? "(" : "[", blo, bhi);
	if (json_is_number(j)) {
		a = json_number_value(j);
		if (!isfinite(a) || a > bhi || a < blo ||
		    (lo_open && a == blo))
			return kcfg_bad(c, l, key, what);
		a = fabs(a);
		*lo = base ? fmax(-a, blo) : -a;
		*hi = a;
		return 0;
	}
	if (!json_is_array(j) || json_array_size(j) != 2 ||
	    !json_is_number(json_array_get(j, 0)) ||
	    !json_is_number(json_array_get(j, 1)))
		return kcfg_bad(c, l, key, what);
	a = json_number_value(json_array_get(j, 0));
	b = json_number_value(json_array_get(j, 1));
	if (!isfinite(a) || !isfinite(b))
		return kcfg_bad(c, l, key, what);
	if (base ? (a > bhi || b < blo) :
	    (a > bhi || b > bhi || a < blo || b < blo ||
	     (lo_open && (a == blo || b == blo))))
		return kcfg_bad(c, l, key, what);
	*lo = fmin(a, b);
	*hi = fmax(a, b);
	return 0;
}

static int value_range(struct kctx *c, struct klayer *l, struct aug *a)
{
	const json_t *j = cget(l, "value_range");

	a->vlo = 0;
	a->vhi = 255;
	if (!j)
		return 0;
	if (!json_is_array(j) || json_array_size(j) != 2 ||
	    !json_is_number(json_array_get(j, 0)) ||
	    !json_is_number(json_array_get(j, 1)) ||
	    !isfinite(json_number_value(json_array_get(j, 0))) ||
	    !isfinite(json_number_value(json_array_get(j, 1))))
		return kcfg_bad(c, l, "value_range", "expected a list of 2 "
				"numbers");
	a->vlo = json_number_value(json_array_get(j, 0));
	a->vhi = json_number_value(json_array_get(j, 1));
	if (a->vlo > a->vhi) {	/* Keras sorts RandomBrightness' */
		double t = a->vlo;

		if (a->kind != A_BRIGHT)
			return kcfg_bad(c, l, "value_range", "expected [low, "
					"high]");
		a->vlo = a->vhi;
		a->vhi = t;
	}
	return 0;
}

static int warp(struct kctx *c, struct klayer *l, struct aug *a)
{
	const json_t *fm = cget(l, "fill_mode"), *ip = cget(l, "interpolation");
	const json_t *fv = cget(l, "fill_value");

	a->fill_mode = "reflect";
	a->interp = "bilinear";
	if (fm && (!json_is_string(fm) ||
		   tfk_aug_fill_parse(json_string_value(fm)) < 0))
		return kcfg_bad(c, l, "fill_mode", "expected reflect, wrap, "
				"constant or nearest");
	if (ip && (!json_is_string(ip) ||
		   tfk_aug_interp_parse(json_string_value(ip)) < 0))
		return kcfg_bad(c, l, "interpolation", "expected nearest or "
				"bilinear");
	if (fv && (!json_is_number(fv) || !isfinite(json_number_value(fv))))
		return kcfg_bad(c, l, "fill_value", "expected a number");
	if (fm)
		a->fill_mode = json_string_value(fm);
	if (ip)
		a->interp = json_string_value(ip);
	a->wp.fill = tfk_aug_fill_parse(a->fill_mode);
	a->wp.interp = tfk_aug_interp_parse(a->interp);
	a->wp.fill_value = fv ? (float)json_number_value(fv) : 0.0f;
	return 0;
}

static int crop_size(struct kctx *c, struct klayer *l, const char *key,
		     long *v)
{
	const json_t *j = cget(l, key);

	if (!json_is_integer(j) || json_integer_value(j) < 1 ||
	    json_integer_value(j) > 1 << 20)
		return kcfg_bad(c, l, key, "expected an integer in "
				"1..1048576");
	*v = (long)json_integer_value(j);
	return 0;
}

/* l's config into *a (every check of parse; apply reads it again). */
static int aug_config(struct kctx *c, struct klayer *l, struct aug *a)
{
	const json_t *j;
	int rc = 0;

	memset(a, 0, sizeof(*a));
	a->kind = kind_of(l->k->cls);
	j = cget(l, "data_format");
	if (j && !(json_is_string(j) &&
		   !strcmp(json_string_value(j), "channels_last")))
		return kcfg_bad(c, l, "data_format", "only \"channels_last\" "
				"is supported");
	j = cget(l, "seed");
	if (j && !json_is_integer(j))
		return kcfg_bad(c, l, "seed", "expected an integer or null");
	switch (a->kind) {
	case A_FLIP:
		j = cget(l, "mode");
		a->mode = j ? (json_is_string(j) ?
			       tfk_aug_flip_parse(json_string_value(j)) : -1) :
			  TFK_AUG_FLIP_HV;
		if (a->mode < 0)
			return kcfg_bad(c, l, "mode", "expected horizontal, "
					"vertical or horizontal_and_vertical");
		return 0;
	case A_ROT:
		if ((rc = factor(c, l, "factor", 1, -1, 1, 0, &a->lo,
				 &a->hi)))
			return rc;
		return warp(c, l, a);
	case A_ZOOM:
	case A_TRANS:
		if ((rc = factor(c, l, "height_factor", 0, -1, 1,
				 a->kind == A_ZOOM, &a->lo, &a->hi)))
			return rc;
		a->has_width = cget(l, "width_factor") != NULL;
		if (a->kind == A_TRANS && !a->has_width)
			return kcfg_bad(c, l, "width_factor", "expected a "
					"number or a list of 2 numbers in "
					"[-1, 1]");
		if (a->has_width && (rc = factor(c, l, "width_factor", 0, -1,
						 1, a->kind == A_ZOOM, &a->wlo,
						 &a->whi)))
			return rc;
		return warp(c, l, a);
	case A_CONTRAST:
		if ((rc = factor(c, l, "factor", 1, 0, 1, 0, &a->lo, &a->hi)))
			return rc;
		return value_range(c, l, a);
	case A_BRIGHT:
		if ((rc = factor(c, l, "factor", 1, -1, 1, 0, &a->lo, &a->hi)))
			return rc;
		return value_range(c, l, a);
	case A_CROP:
	case A_CENTER:
		if ((rc = crop_size(c, l, "height", &a->h)) ||
		    (rc = crop_size(c, l, "width", &a->w)))
			return rc;
		return 0;
	case A_RESIZE:
		if ((rc = crop_size(c, l, "height", &a->h)) ||
		    (rc = crop_size(c, l, "width", &a->w)))
			return rc;
		j = cget(l, "interpolation");
		if (j && !(json_is_string(j) &&
			   !strcmp(json_string_value(j), "bilinear")))
			return kcfg_bad(c, l, "interpolation", "only "
					"\"bilinear\" is supported");
		j = cget(l, "antialias");
		if (j && !json_is_false(j))
			return kcfg_bad(c, l, "antialias", "only false is "
					"supported");
		j = cget(l, "pad_to_aspect_ratio");
		if (j && !json_is_false(j))
			return kcfg_bad(c, l, "pad_to_aspect_ratio", "only "
					"false is supported");
		j = cget(l, "crop_to_aspect_ratio");
		if (j && !json_is_boolean(j))
			return kcfg_bad(c, l, "crop_to_aspect_ratio",
					"expected true or false");
		a->crop_aspect = json_is_true(j);
		return 0;
	}
	return kcfg_bad(c, l, NULL, "not an augmentation layer");
}

int tfk_keras_aug_parse(struct kctx *c, struct klayer *l)
{
	struct aug a;

	return aug_config(c, l, &a);
}

/* x as float32 (Keras casts its inputs to the compute dtype). */
static int to_float(struct kctx *c, struct tfk_port *x)
{
	struct tfk_attr at = TFK_A_TYPE("DstT", TFK_DT_FLOAT);

	if (kdesc(c, *x)->dtype == TFK_DT_FLOAT)
		return 0;
	return kop(c, "Cast", x, 1, &at, 1, x);
}

/* RandomBrightness in training: Keras' ops (see the top). */
static int brightness(struct kctx *c, const struct aug *a,
		      struct tfk_port *x)
{
	struct tfk_attr na = TFK_A_INT("N", 2);
	struct tfk_attr dt = TFK_A_TYPE("dtype", TFK_DT_FLOAT);
	int32_t v0 = 0, v1 = 1, tail[4] = { 1, 1, 1, 1 };
	struct tfk_port sl[4], ci[3], shape, u, k;
	struct tfk_tensor t;
	double span = a->vhi - a->vlo;
	int rc;

	if ((rc = kop1(c, "Shape", *x, &sl[0])) ||
	    (rc = kconst_iv(c, &v0, 1, &sl[1])) ||
	    (rc = kconst_iv(c, &v1, 1, &sl[2])) ||
	    (rc = kconst_iv(c, &v1, 1, &sl[3])) ||
	    (rc = kop(c, "StridedSlice", sl, 4, NULL, 0, &ci[0])) ||
	    (rc = kconst_iv(c, tail, 3, &ci[1])))
		return rc;
	rc = tfk_tensor_init_view(&t, TFK_DT_INT32, 0, NULL, &v0, sizeof(v0),
				  TFK_OWN_BORROWED, c->err);
	if (!rc)
		rc = tfk_graph_const(c->g, c->scope, &t, &ci[2], c->err);
	if (rc || (rc = kop(c, "ConcatV2", ci, 3, &na, 1, &shape)) ||
	    (rc = kop(c, "RandomUniform", &shape, 1, &dt, 1, &u)))
		return rc;
	/* [batch, 1, 1, 1] known to shape inference, so the sum keeps x's */
	tail[0] = -1;
	if ((rc = kconst_iv(c, tail, 4, &k)) ||
	    (rc = kop2(c, "Reshape", u, k, &u)))
		return rc;
	/* (u * (hi - lo) + lo) * span, in Keras' order */
	if ((rc = kconst_f(c, (float)(a->hi - a->lo), &k)) ||
	    (rc = kop2(c, "Mul", u, k, &u)) ||
	    (rc = kconst_f(c, (float)a->lo, &k)) ||
	    (rc = kop2(c, "AddV2", u, k, &u)) ||
	    (rc = kconst_f(c, (float)span, &k)) ||
	    (rc = kop2(c, "Mul", u, k, &u)) ||
	    (rc = kop2(c, "AddV2", *x, u, x)) ||
	    (rc = kconst_f(c, (float)a->vlo, &k)) ||
	    (rc = kop2(c, "Maximum", *x, k, x)) ||
	    (rc = kconst_f(c, (float)a->vhi, &k)))
		return rc;
	return kop2(c, "Minimum", *x, k, x);
}

/*
 * The centred window of x (a->h x a->w for CenterCrop; for RandomCrop
 * at inference and Resizing with crop_to_aspect_ratio, the largest of
 * the target's aspect: Keras' get_random_transformation else branch,
 * smart_resize), resized bilinear (half-pixel centres) to the target
 * when it is not that size already; Resizing without the crop resizes
 * the whole image.
 */
static int center_crop(struct kctx *c, struct klayer *l,
		       const struct aug *a, struct tfk_port *x)
{
	const struct tfk_tdesc *d = kdesc(c, *x);
	int64_t h = d->shape[1], w = d->shape[2], ch = h, cw = w;
	int32_t begin[4], size[4], hw[2];
	struct tfk_port in[3];
	char what[160];
	int rc;

	if (h < 1 || w < 1) {
		snprintf(what, sizeof(what), "%s needs an input of known "
			 "height and width (as Keras)", l->k->cls);
		return kcfg_bad(c, l, NULL, what);
	}
	if (a->kind == A_CENTER) {
		if (h < a->h || w < a->w) {
			snprintf(what, sizeof(what), "CenterCrop to %ldx%ld "
				 "of a %" PRId64 "x%" PRId64 " input: a "
				 "target larger than the input is not "
				 "supported", a->h, a->w, h, w);
			return kcfg_bad(c, l, NULL, what);
		}
		ch = a->h;
		cw = a->w;
	} else if (a->kind == A_CROP || a->crop_aspect) {
		ch = (int64_t)((double)(w * a->h) / (double)a->w);
		ch = ch < h ? ch : h;
		ch = ch > 1 ? ch : 1;
		cw = (int64_t)((double)(h * a->w) / (double)a->h);
		cw = cw < w ? cw : w;
		cw = cw > 1 ? cw : 1;
	}
	if (ch != h || cw != w) {
		begin[0] = begin[3] = 0;
		begin[1] = (int32_t)((h - ch) / 2);
		begin[2] = (int32_t)((w - cw) / 2);
		size[0] = size[3] = -1;
		size[1] = (int32_t)ch;
		size[2] = (int32_t)cw;
		in[0] = *x;
		if ((rc = kconst_iv(c, begin, 4, &in[1])) ||
		    (rc = kconst_iv(c, size, 4, &in[2])) ||
		    (rc = kop(c, "Slice", in, 3, NULL, 0, x)))
			return rc;
	}
	if (ch == a->h && cw == a->w)
		return 0;
	hw[0] = (int32_t)a->h;
	hw[1] = (int32_t)a->w;
	{
		struct tfk_attr at[2] = { TFK_A_BOOL("align_corners", 0),
					  TFK_A_BOOL("half_pixel_centers", 1) };

		in[0] = *x;
		if ((rc = kconst_iv(c, hw, 2, &in[1])))
			return rc;
		return kop(c, "ResizeBilinear", in, 2, at, 2, x);
	}
}

/* 1 when x depends on a variable (a trainable layer before this one):
 * the random ops have no gradient. -1: out of memory. */
static int after_weights(struct kctx *c, struct tfk_port x)
{
	int n = tfk_graph_n_nodes(c->g), top = 0, found = 0, k;
	int *stack = tfk_calloc((size_t)n + 1, sizeof(*stack));
	char *seen = tfk_calloc((size_t)n + 1, 1);

	if (!stack || !seen) {
		tfk_free(stack);
		tfk_free(seen);
		return -1;
	}
	stack[top++] = x.node;
	seen[x.node] = 1;
	while (top && !found) {
		const struct tfk_node *nd = tfk_graph_node(c->g, stack[--top]);

		found = nd->variable >= 0;
		for (k = 0; k < nd->n_inputs; k++) {
			int id = nd->inputs[k].node;

			if (id >= 0 && id < n && !seen[id]) {
				seen[id] = 1;
				stack[top++] = id;
			}
		}
	}
	tfk_free(stack);
	tfk_free(seen);
	return found;
}

int tfk_keras_aug_apply(struct kctx *c, struct klayer *l,
			const struct tfk_port *in, int n_in,
			struct kout *out)
{
	const struct tfk_tdesc *d = kdesc(c, in[0]);
	struct tfk_attr at[12];
	struct tfk_port x = in[0];
	const char *op = NULL;
	struct aug a;
	int na = 0, rc;

	(void)n_in;
	out->act = NULL;
	out->logits.node = -1;
	out->logits.index = 0;
	out->p = x;
	if ((rc = aug_config(c, l, &a)))
		return rc;
	if (d->rank != 4 || (d->dtype != TFK_DT_FLOAT &&
			     d->dtype != TFK_DT_UINT8 &&
			     d->dtype != TFK_DT_INT64 &&
			     d->dtype != TFK_DT_INT32)) {
		char what[160];

		snprintf(what, sizeof(what), "%s takes a batch of images "
			 "[batch, height, width, channels] of numbers, got "
			 "rank %d", l->k->cls, d->rank);
		return kcfg_bad(c, l, NULL, what);
	}
	if (a.kind == A_RESIZE || a.kind == A_CENTER) {
		/* not random: the same in training and inference */
		if (c->train && a.kind == A_RESIZE &&
		    (rc = after_weights(c, x))) {
			if (rc < 0)
				return tfk_errf(c->err, TFK_ENOMEM, "out of "
						"memory");
			return kcfg_bad(c, l, NULL, "Resizing after a layer "
					"with weights is not supported yet (no "
					"gradient of ResizeBilinear); put it "
					"before them");
		}
		if ((rc = to_float(c, &x)) ||
		    (rc = center_crop(c, l, &a, &x)))
			return rc;
		out->p = x;
		return 0;
	}
	if (!c->train) {
		/* the identity, as Keras at training=False */
		if (a.kind == A_CROP) {
			if ((rc = to_float(c, &x)) ||
			    (rc = center_crop(c, l, &a, &x)))
				return rc;
		}
		out->p = x;
		return 0;
	}
	if (a.kind != A_BRIGHT && (rc = after_weights(c, x))) {
		char what[200];

		if (rc < 0)
			return tfk_errf(c->err, TFK_ENOMEM, "out of memory");
		snprintf(what, sizeof(what), "%s after a layer with weights "
			 "is not supported yet (its random transform has no "
			 "gradient); put it before them, as Keras' examples "
			 "do", l->k->cls);
		return kcfg_bad(c, l, NULL, what);
	}
	if (d->dtype != TFK_DT_FLOAT && d->dtype != TFK_DT_UINT8 &&
	    (rc = to_float(c, &x)))
		return rc;
	switch (a.kind) {
	case A_BRIGHT:
		if ((rc = to_float(c, &x)) || (rc = brightness(c, &a, &x)))
			return rc;
		out->p = x;
		return 0;
	case A_CROP:
		op = "RandomCrop";
		at[na++] = TFK_A_INT("height", a.h);
		at[na++] = TFK_A_INT("width", a.w);
		break;
	case A_FLIP:
		op = "RandomFlip";
		at[na++] = TFK_A_STR("mode",
			a.mode == TFK_AUG_FLIP_H ? "horizontal" :
			a.mode == TFK_AUG_FLIP_V ? "vertical" :
			"horizontal_and_vertical");
		break;
	case A_ROT:
	case A_CONTRAST:
		op = a.kind == A_ROT ? "RandomRotation" : "RandomContrast";
		at[na++] = TFK_A_FLOAT("lower", (float)a.lo);
		at[na++] = TFK_A_FLOAT("upper", (float)a.hi);
		if (a.kind == A_CONTRAST) {
			at[na++] = TFK_A_FLOAT("value_lo",
				(float)a.vlo);
			at[na++] = TFK_A_FLOAT("value_hi",
				(float)a.vhi);
		}
		break;
	case A_ZOOM:
	case A_TRANS:
		op = a.kind == A_TRANS ? "RandomTranslation" : "RandomZoom";
		at[na++] = TFK_A_FLOAT("h_lower", (float)a.lo);
		at[na++] = TFK_A_FLOAT("h_upper", (float)a.hi);
		at[na++] = TFK_A_FLOAT("w_lower",
							(float)a.wlo);
		at[na++] = TFK_A_FLOAT("w_upper",
							(float)a.whi);
		if (a.kind == A_ZOOM)
			at[na++] = TFK_A_BOOL("has_width",
							       a.has_width);
		break;
	}
	if (a.kind == A_ROT || a.kind == A_ZOOM || a.kind == A_TRANS) {
		at[na++] = TFK_A_STR("fill_mode", a.fill_mode);
		at[na++] = TFK_A_STR("interpolation",
						      a.interp);
		at[na++] = TFK_A_FLOAT("fill_value",
							a.wp.fill_value);
	}
	if ((rc = kop(c, op, &x, 1, at, na, &x)))
		return rc;
	out->p = x;
	return 0;
}
