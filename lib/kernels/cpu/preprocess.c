/*
 * preprocess.c - the image ops of the Keras preprocessing layers.
 *
 * TF's own ops where TF has one: ResizeBilinear, ResizeNearestNeighbor,
 * ResizeBicubic, ResizeArea (half_pixel_centers only, as TF 2's
 * tf.image.resize). Where Keras composes several TF ops with random
 * draws in Python, one op named after the layer: CenterCrop, RandomCrop,
 * RandomFlip, RandomRotation, RandomTranslation, RandomZoom,
 * RandomContrast. Rescaling and Normalization need no op of their own
 * (Cast, Mul, AddV2, Sub, RealDiv, from elementwise.c).
 *
 * Every op takes an HWC image [h, w, c] or a batch [n, h, w, c] of uint8
 * or float32 and returns float32, as Keras does. The arithmetic is
 * lib/prep/augment.h and resize.h; this file is the glue to tensors.
 *
 * Randomness: the random ops are flagged TFK_OP_RANDOM and key Philox
 * (augment.h) with the kernel's rng_key, a function of (exec seed,
 * step, node) only; tfk-map runs step = record index, so a record's draw
 * depends on (seed, record, layer) and never on -j. Image k of a batch
 * uses counter word k. A stateful Keras-style generator was rejected:
 * its draws depend on processing order.
 */
#include "kernels/cpu.h"
#include "prep/augment.h"
#include "prep/resize.h"
#include "graph/graph.h"

#include <string.h>

#define IMG_T (TFK_DT_BIT(TFK_DT_FLOAT) | TFK_DT_BIT(TFK_DT_UINT8))

/* Shape inference ------------------------------------------------------- */

static int check_image(struct tfk_infer_ctx *ic)
{
	if (ic->in[0].rank >= 0 && ic->in[0].rank != 3 && ic->in[0].rank != 4)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: expected an "
				"image [h, w, c] or a batch [n, h, w, c], got "
				"rank %d", ic->in[0].rank);
	return 0;
}

/* Output: input's shape with h, w replaced (-1 keeps the input's). */
static int infer_hw(struct tfk_infer_ctx *ic, int64_t h, int64_t w)
{
	const struct tfk_tdesc *in = &ic->in[0];
	struct tfk_tdesc *out = &ic->out[0];
	int rc = check_image(ic), r;

	if (rc)
		return rc;
	out->rank = in->rank;
	memcpy(out->shape, in->shape, sizeof(out->shape));
	if (in->rank < 0)
		return 0;
	r = in->rank;
	if (h >= 0)
		out->shape[r - 3] = h;
	if (w >= 0)
		out->shape[r - 2] = w;
	return 0;
}

static int infer_same_image(struct tfk_infer_ctx *ic)
{
	return infer_hw(ic, -1, -1);
}

static int infer_crop(struct tfk_infer_ctx *ic)
{
	int64_t h = tfk_node_attr_i(ic->node, "height", 0);
	int64_t w = tfk_node_attr_i(ic->node, "width", 0);

	if (h < 1 || w < 1 || h > 1 << 20 || w > 1 << 20)
		return tfk_errf(ic->err, TFK_EINVAL, "height and width must "
				"be in 1..1048576, got %lld x %lld",
				(long long)h, (long long)w);
	return infer_hw(ic, h, w);
}

static int infer_resize(struct tfk_infer_ctx *ic)
{
	const struct tfk_tensor *size = ic->in_value[1];
	int64_t h = -1, w = -1;

	if (ic->in[1].rank >= 0 && (ic->in[1].rank != 1 ||
				    (ic->in[1].shape[0] >= 0 &&
				     ic->in[1].shape[0] != 2)))
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: size must be "
				"a vector of 2 int32");
	if (size) {
		const int32_t *s = size->data;

		if (s[0] < 1 || s[1] < 1 || s[0] > 1 << 20 || s[1] > 1 << 20)
			return tfk_errf(ic->err, TFK_EINVAL, "input 1: size "
					"must be in 1..1048576, got %d x %d",
					(int)s[0], (int)s[1]);
		h = s[0];
		w = s[1];
	}
	return infer_hw(ic, h, w);
}

/* Kernels ---------------------------------------------------------------- */

/* Image k of t (rank 3: k == 0). */
static struct tfk_aug_image image_at(const struct tfk_tensor *t, int64_t k)
{
	struct tfk_aug_image im = { 0 };
	int r = t->rank;
	size_t n;

	im.dtype = t->dtype;
	im.h = (int)t->shape[r - 3];
	im.w = (int)t->shape[r - 2];
	im.c = (int)t->shape[r - 1];
	n = (size_t)im.h * im.w * im.c * tfk_dtype_size(t->dtype);
	im.data = (char *)t->data + (size_t)k * n;
	return im;
}

static int64_t n_images(const struct tfk_tensor *t)
{
	return t->rank == 4 ? t->shape[0] : 1;
}

static int resize_method(const struct tfk_node *n)
{
	const char *op = n->op->name;

	if (!strcmp(op, "ResizeNearestNeighbor"))
		return TFK_RESIZE_NEAREST;
	if (!strcmp(op, "ResizeBicubic"))
		return TFK_RESIZE_BICUBIC;
	if (!strcmp(op, "ResizeArea"))
		return TFK_RESIZE_AREA;
	return TFK_RESIZE_BILINEAR;
}

/* TF 2 resizes with half-pixel centres and no corner alignment; the
 * other settings are TF 1 behaviours this library does not have. */
static int s_resize(const struct tfk_node *n)
{
	if (tfk_node_attr_b(n, "align_corners", 0))
		return 0;
	return !strcmp(n->op->name, "ResizeArea") ||
		tfk_node_attr_b(n, "half_pixel_centers", 1);
}

static int k_resize(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0];
	struct tfk_tensor *y = kc->out[0];
	int method = resize_method(kc->node);
	int64_t k;
	int rc;

	for (k = 0; k < n_images(x); k++) {
		struct tfk_aug_image s = image_at(x, k), d = image_at(y, k);

		if (x->dtype == TFK_DT_UINT8)
			rc = tfk_resize_u8_f32(s.data, s.h, s.w, 0, s.c,
					       d.data, d.h, d.w, method, 0,
					       kc->err);
		else
			rc = tfk_resize_f32(s.data, s.h, s.w, 0, s.c, d.data,
					    d.h, d.w, method, 0, kc->err);
		if (rc)
			return rc;
	}
	return 0;
}

static int warp_of(const struct tfk_node *n, struct tfk_aug_warp *wp,
		   struct tfk_err *err)
{
	const struct tfk_attr_value *fm = tfk_node_attr(n, "fill_mode");
	const struct tfk_attr_value *ip = tfk_node_attr(n, "interpolation");

	wp->fill = tfk_aug_fill_parse(fm ? fm->s.p : "reflect");
	wp->interp = tfk_aug_interp_parse(ip ? ip->s.p : "bilinear");
	wp->fill_value = tfk_node_attr_f(n, "fill_value", 0);
	if (wp->fill < 0)
		return tfk_errf(err, TFK_EINVAL, "fill_mode '%s': expected "
				"reflect, wrap, constant or nearest",
				fm ? fm->s.p : "");
	if (wp->interp < 0)
		return tfk_errf(err, TFK_EINVAL, "interpolation '%s': "
				"expected nearest or bilinear",
				ip ? ip->s.p : "");
	return 0;
}

/* One image of an augmentation op: src -> dst with its own generator. */
static int augment_one(struct tfk_kernel_ctx *kc, struct tfk_aug_image *s,
		       struct tfk_aug_image *d, struct tfk_aug_rng *rng)
{
	const struct tfk_node *n = kc->node;
	const char *op = n->op->name;
	int train = tfk_node_attr_b(n, "training", 1), rc;
	struct tfk_aug_warp wp;

	/* a Rescaling folded in (flips and transforms have the attrs) */
	s->rescale = (int)tfk_node_attr_i(n, "in_rescale", 0);
	s->scale = tfk_node_attr_f(n, "in_scale", 1);
	s->offset = tfk_node_attr_f(n, "in_offset", 0);
	if (s->rescale < TFK_AUG_RESCALE_NONE ||
	    s->rescale > TFK_AUG_RESCALE_OFFSET)
		return tfk_errf(kc->err, TFK_EINVAL, "in_rescale %d: expected "
				"0 (none), 1 (scale) or 2 (scale and offset)",
				s->rescale);

	if (!strcmp(op, "CenterCrop"))
		return tfk_aug_center_crop(s, d, kc->err);
	if (!strcmp(op, "RandomCrop"))
		return tfk_aug_random_crop(s, d, train, rng, kc->err);
	if (!strcmp(op, "RandomFlip")) {
		const struct tfk_attr_value *m = tfk_node_attr(n, "mode");
		int mode = tfk_aug_flip_parse(m ? m->s.p : "");

		if (mode < 0)
			return tfk_errf(kc->err, TFK_EINVAL, "mode '%s': "
					"expected horizontal, vertical or "
					"horizontal_and_vertical",
					m ? m->s.p : "");
		return tfk_aug_random_flip(s, d, mode, train, rng, NULL,
					   kc->err);
	}
	if (!strcmp(op, "RandomContrast"))
		return tfk_aug_random_contrast(s, d,
			tfk_node_attr_f(n, "lower", 0),
			tfk_node_attr_f(n, "upper", 0),
			tfk_node_attr_f(n, "value_lo", 0),
			tfk_node_attr_f(n, "value_hi", 255), train, rng,
			kc->err);
	rc = warp_of(n, &wp, kc->err);
	if (rc)
		return rc;
	if (!strcmp(op, "RandomRotation"))
		return tfk_aug_random_rotation(s, d,
			tfk_node_attr_f(n, "lower", 0),
			tfk_node_attr_f(n, "upper", 0), &wp, train, rng,
			kc->err);
	if (!strcmp(op, "RandomTranslation"))
		return tfk_aug_random_translation(s, d,
			tfk_node_attr_f(n, "h_lower", 0),
			tfk_node_attr_f(n, "h_upper", 0),
			tfk_node_attr_f(n, "w_lower", 0),
			tfk_node_attr_f(n, "w_upper", 0), &wp, train, rng,
			kc->err);
	return tfk_aug_random_zoom(s, d,
		tfk_node_attr_f(n, "h_lower", 0),
		tfk_node_attr_f(n, "h_upper", 0),
		(int)tfk_node_attr_b(n, "has_width", 0),
		tfk_node_attr_f(n, "w_lower", 0),
		tfk_node_attr_f(n, "w_upper", 0), &wp, train, rng, kc->err);
}

static int k_augment(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0];
	int64_t k;
	int rc;

	for (k = 0; k < n_images(x); k++) {
		struct tfk_aug_image s = image_at(x, k);
		struct tfk_aug_image d = image_at(kc->out[0], k);
		struct tfk_aug_rng rng;

		tfk_aug_rng_init(&rng, kc->rng_key, (uint64_t)k, 0);
		rc = augment_one(kc, &s, &d, &rng);
		if (rc)
			return rc;
	}
	return 0;
}

/* Tables ----------------------------------------------------------------- */

#define T_IMG { "T", TFK_ATTR_TYPE, 0, { 0 }, IMG_T }
#define IMG_IN { { "images", .type_attr = "T" } }
#define IMG_OUT { { "output", TFK_DT_FLOAT } }
#define A_F(nm, d) { nm, TFK_ATTR_FLOAT, 1, { .f = (d) } }
#define A_I(nm) { nm, TFK_ATTR_INT, 0, { 0 } }
#define A_B(nm, d) { nm, TFK_ATTR_BOOL, 1, { .b = (d) } }
#define A_S(nm, d) { nm, TFK_ATTR_STRING, 1, { .s = { d, sizeof(d) - 1 } } }
#define A_ID(nm, d) { nm, TFK_ATTR_INT, 1, { .i = (d) } }
/* A Rescaling (x * in_scale, + in_offset when in_rescale is 2) done on
 * the input as the op reads it: nn/preprocess.c folds one into the
 * flip or transform after it (augment.h, struct tfk_aug_image). */
#define RESCALE_ATTRS A_ID("in_rescale", 0), A_F("in_scale", 1), \
	A_F("in_offset", 0)
#define WARP_ATTRS A_S("fill_mode", "reflect"), \
	A_S("interpolation", "bilinear"), A_F("fill_value", 0), RESCALE_ATTRS

#define RESIZE(nm) {							\
	.name = nm,							\
	.inputs = { { "images", .type_attr = "T" },			\
		    { "size", TFK_DT_INT32 } },				\
	.outputs = IMG_OUT,						\
	.attrs = { T_IMG, A_B("align_corners", 0),			\
		   A_B("half_pixel_centers", 1) },			\
	.infer = infer_resize,						\
}

const struct tfk_op_def tfk_ops_preprocess[] = {
	RESIZE("ResizeBilinear"),
	RESIZE("ResizeNearestNeighbor"),
	RESIZE("ResizeBicubic"),
	{
		.name = "ResizeArea",
		.inputs = { { "images", .type_attr = "T" },
			    { "size", TFK_DT_INT32 } },
		.outputs = IMG_OUT,
		.attrs = { T_IMG, A_B("align_corners", 0) },
		.infer = infer_resize,
	},
	{
		.name = "CenterCrop",
		.inputs = IMG_IN, .outputs = IMG_OUT,
		.attrs = { T_IMG, A_I("height"), A_I("width") },
		.infer = infer_crop,
	},
	{
		.name = "RandomCrop",
		.inputs = IMG_IN, .outputs = IMG_OUT,
		.attrs = { T_IMG, A_I("height"), A_I("width"),
			   A_B("training", 1) },
		.flags = TFK_OP_RANDOM,
		.infer = infer_crop,
	},
	{
		.name = "RandomFlip",
		.inputs = IMG_IN, .outputs = IMG_OUT,
		.attrs = { T_IMG, A_S("mode", "horizontal_and_vertical"),
			   A_B("training", 1), RESCALE_ATTRS },
		.flags = TFK_OP_RANDOM,
		.infer = infer_same_image,
	},
	{
		.name = "RandomRotation",
		.inputs = IMG_IN, .outputs = IMG_OUT,
		.attrs = { T_IMG, A_F("lower", 0), A_F("upper", 0),
			   WARP_ATTRS, A_B("training", 1) },
		.flags = TFK_OP_RANDOM,
		.infer = infer_same_image,
	},
	{
		.name = "RandomTranslation",
		.inputs = IMG_IN, .outputs = IMG_OUT,
		.attrs = { T_IMG, A_F("h_lower", 0), A_F("h_upper", 0),
			   A_F("w_lower", 0), A_F("w_upper", 0), WARP_ATTRS,
			   A_B("training", 1) },
		.flags = TFK_OP_RANDOM,
		.infer = infer_same_image,
	},
	{
		.name = "RandomZoom",
		.inputs = IMG_IN, .outputs = IMG_OUT,
		.attrs = { T_IMG, A_F("h_lower", 0), A_F("h_upper", 0),
			   A_B("has_width", 0), A_F("w_lower", 0),
			   A_F("w_upper", 0), WARP_ATTRS,
			   A_B("training", 1) },
		.flags = TFK_OP_RANDOM,
		.infer = infer_same_image,
	},
	{
		.name = "RandomContrast",
		.inputs = IMG_IN, .outputs = IMG_OUT,
		.attrs = { T_IMG, A_F("lower", 0), A_F("upper", 0),
			   A_F("value_lo", 0), A_F("value_hi", 255),
			   A_B("training", 1) },
		.flags = TFK_OP_RANDOM,
		.infer = infer_same_image,
	},
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_preprocess[] = {
	{ "ResizeBilinear", "cpu", s_resize, k_resize, NULL },
	{ "ResizeNearestNeighbor", "cpu", s_resize, k_resize, NULL },
	{ "ResizeBicubic", "cpu", s_resize, k_resize, NULL },
	{ "ResizeArea", "cpu", s_resize, k_resize, NULL },
	{ "CenterCrop", "cpu", NULL, k_augment, NULL },
	{ "RandomCrop", "cpu", NULL, k_augment, NULL },
	{ "RandomFlip", "cpu", NULL, k_augment, NULL },
	{ "RandomRotation", "cpu", NULL, k_augment, NULL },
	{ "RandomTranslation", "cpu", NULL, k_augment, NULL },
	{ "RandomZoom", "cpu", NULL, k_augment, NULL },
	{ "RandomContrast", "cpu", NULL, k_augment, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
