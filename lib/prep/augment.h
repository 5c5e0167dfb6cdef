/*
 * augment.h - image kernels of the Keras preprocessing layers: Rescaling,
 * CenterCrop, RandomCrop, RandomFlip, RandomRotation, RandomTranslation,
 * RandomZoom, RandomContrast, on one HWC image (uint8 or float32).
 *
 * Semantics are Keras 3's (the layers' .py files under keras/src/layers/
 * preprocessing/image_preprocessing) with the TensorFlow backend; the
 * geometric layers all run TensorFlow's ImageProjectiveTransformV3 kernel
 * (tensorflow/core/kernels/image/image_ops.h), reproduced here as
 * tfk_aug_transform_ref. Keras casts images to float32 before every
 * layer and returns float32; a float32 destination gets exactly that.
 * A uint8 destination gets the same float rounded to the nearest integer
 * (halves away from zero) and clamped to [0, 255], as lib/prep/resize.h.
 *
 * Randomness is not Keras' (its stream depends on a stateful seed
 * generator and the batch): every draw comes from Philox-4x32-10
 * (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11;
 * the generator behind TF's stateless random ops) keyed by the user's
 * seed, with the record index and the layer index in the counter. So a
 * record's augmentation depends on (seed, record, layer) only, never on
 * the thread count or the order records are processed in. What each
 * layer draws, in order, is documented at its function; uniform floats
 * are made as TF makes them (23 random mantissa bits, [0, 1)).
 *
 * Images: struct tfk_aug_image, contiguous row-major [h, w, c]. dtype
 * uses TensorFlow's DataType numbers (as tfk_tensor does): 1 float32,
 * 4 uint8. Source and destination must not overlap. Every function
 * returns 0, TFK_EINVAL (bad sizes, dtypes or options, with a message)
 * or TFK_ENOMEM; on error dst's contents are unspecified.
 */
#ifndef TFK_AUGMENT_H
#define TFK_AUGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

enum {
	TFK_AUG_F32 = 1,	/* DT_FLOAT */
	TFK_AUG_U8 = 4		/* DT_UINT8 */
};

struct tfk_aug_image {
	int dtype;		/* TFK_AUG_F32 or TFK_AUG_U8 */
	int h, w, c;		/* each >= 1 */
	void *data;		/* h * w * c elements, HWC */
	/* A source only: its values as a Keras Rescaling layer before
	 * the op would give them, each element x read as x * scale
	 * (then + offset with TFK_AUG_RESCALE_OFFSET) in float32, so the
	 * op does the Rescaling on the way instead of a pass of its own
	 * (bit for bit the same). Honoured by the flips and transforms
	 * (rotation, translation, zoom); the other functions refuse it. */
	int rescale;		/* TFK_AUG_RESCALE_*; 0: values as they are */
	float scale, offset;
};

enum {
	TFK_AUG_RESCALE_NONE,
	TFK_AUG_RESCALE_SCALE,	/* x * scale */
	TFK_AUG_RESCALE_OFFSET	/* x * scale + offset */
};

/* The generator --------------------------------------------------------- */

/*
 * Philox-4x32-10 (Random123's philox4x32_R(10, ctr, key)): one block of
 * four 32-bit outputs. Tested against Random123's known-answer vectors.
 */
void tfk_aug_philox(const uint32_t ctr[4], const uint32_t key[2],
		    uint32_t out[4]);

/*
 * The stream of one layer on one record: key = seed (low word first),
 * counter = (block, layer, record low, record high), blocks 0, 1, ...
 * of four outputs each, consumed in order.
 */
struct tfk_aug_rng {
	uint32_t key[2];
	uint32_t ctr[4];
	uint32_t buf[4];
	int n_used;		/* outputs of buf already consumed (4 = none) */
};

void tfk_aug_rng_init(struct tfk_aug_rng *rng, uint64_t seed,
		      uint64_t record, uint32_t layer);
uint32_t tfk_aug_rng_u32(struct tfk_aug_rng *rng);
/* TF's random_uniform: r = (the low 23 bits as a float mantissa) - 1 in
 * [0, 1), then r * (hi - lo) + lo in float32. One u32 per call. */
float tfk_aug_rng_uniform(struct tfk_aug_rng *rng, float lo, float hi);

/* The projective transform (ImageProjectiveTransformV3) ------------------ */

enum tfk_aug_interp {		/* TF's Interpolation enum */
	TFK_AUG_NEAREST = 0,
	TFK_AUG_BILINEAR = 1	/* Keras' default */
};

enum tfk_aug_fill {		/* TF's Mode enum */
	TFK_AUG_REFLECT = 0,	/* d c b a | a b c d | d c b a (default) */
	TFK_AUG_WRAP = 1,	/* a b c d | a b c d | a b c d */
	TFK_AUG_CONSTANT = 2,	/* k k k k | a b c d | k k k k */
	TFK_AUG_EDGE = 3	/* a a a a | a b c d | d d d d ("nearest") */
};

/* Keras' names ("nearest", "bilinear"; "reflect", "wrap", "constant",
 * "nearest") -> enum; -1 when unknown. */
int tfk_aug_interp_parse(const char *s);
int tfk_aug_fill_parse(const char *s);
const char *tfk_aug_interp_name(int interp);
const char *tfk_aug_fill_name(int fill);

struct tfk_aug_warp {
	int interp;		/* enum tfk_aug_interp */
	int fill;		/* enum tfk_aug_fill */
	float fill_value;	/* used by TFK_AUG_CONSTANT */
};

#define TFK_AUG_WARP_DEFAULT { TFK_AUG_BILINEAR, TFK_AUG_REFLECT, 0.0f }

/*
 * The specification: TF's ProjectiveGenerator loop on float32, in TF's
 * float order. t = [a0 a1 a2 b0 b1 b2 c0 c1] maps each OUTPUT pixel
 * (x, y) to the input point ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2)
 * / k), k = c0 x + c1 y + 1; k == 0 gives fill_value. The point is mapped
 * into the image by the fill mode (TF's MapCoordinate, after scipy),
 * then read by nearest (std::round, halves away from zero) or bilinear
 * interpolation, where a neighbour outside the image reads as
 * fill_value. Points outside the image after mapping (constant mode
 * only) give fill_value.
 * Where TF's behaviour is undefined (a NaN point, or |point| >= 1e18
 * under reflect/wrap, where TF's int64 casts overflow) this gives
 * fill_value.
 */
void tfk_aug_transform_ref(const float *src, int h, int w, int c,
			   float *dst, int oh, int ow, const float t[8],
			   const struct tfk_aug_warp *wp);

/*
 * The same transform for any dtype pair: src h x w x c into dst (its own
 * h x w; same c). Affine transforms (c0 = c1 = 0) take a fast path:
 * per-row products, no division, interior pixels without the fill-mode
 * mapping, the weights computed once per pixel for all channels. Its
 * float32 results are bit-identical to tfk_aug_transform_ref (the same
 * float operations in the same order). TFK_ENOMEM only for a uint8 dst
 * (one row of float scratch).
 */
int tfk_aug_transform(const struct tfk_aug_image *src,
		      struct tfk_aug_image *dst, const float t[8],
		      const struct tfk_aug_warp *wp, struct tfk_err *err);

/*
 * Keras' matrices (computed in double, stored as float32; Keras itself
 * computes them in float32):
 *  rotation    by angle radians counter-clockwise about the centre
 *              ((w-1)/2, (h-1)/2): [cos, -sin, cx - cx cos + cy sin,
 *              sin, cos, cy - cx sin - cy cos, 0, 0]
 *              (RandomRotation._compute_affine_matrix, no shear/scale).
 *  zoom        [zx, 0, (w-1)/2 (1 - zx), 0, zy, (h-1)/2 (1 - zy), 0, 0]
 *              (RandomZoom._get_zoom_matrix; zx > 1 zooms out).
 *  translation [1, 0, -dx, 0, 1, -dy, 0, 0] (dx, dy in pixels; positive
 *              moves the content right / down).
 */
void tfk_aug_rotation_matrix(int h, int w, double angle, float t[8]);
void tfk_aug_zoom_matrix(int h, int w, double zx, double zy, float t[8]);
void tfk_aug_translation_matrix(double dx, double dy, float t[8]);

/* Layers ------------------------------------------------------------------ */

/*
 * Rescaling: dst = x * scale + offset in float32 (Keras casts x, scale
 * and offset to float32). n_param is 1 (scalars) or c (one pair per
 * channel, Keras' broadcast of a list). dst has src's shape.
 */
int tfk_aug_rescale(const struct tfk_aug_image *src,
		    struct tfk_aug_image *dst, const float *scale,
		    const float *offset, int n_param, struct tfk_err *err);

/*
 * CenterCrop to dst->h x dst->w: when the image is at least that large
 * in both dimensions, the window at (int((h - th) / 2), int((w - tw) /
 * 2)); otherwise Keras' smart_resize: the largest centred window with
 * the target's aspect ratio (tfk_resize_crop_aspect), resized bilinear
 * (tf.image.resize, half-pixel centres, no antialias) to the target.
 */
int tfk_aug_center_crop(const struct tfk_aug_image *src,
			struct tfk_aug_image *dst, struct tfk_err *err);

/*
 * RandomCrop to dst->h x dst->w. Training, when h > th and w > tw: the
 * window at (int(u0 * (h - th + 1)), int(u1 * (w - tw + 1))), u0 then
 * u1 drawn uniform [0, 1). Otherwise (inference, or an image not larger
 * in both dimensions): smart_resize as CenterCrop's second case - the
 * documented Keras behaviour ("at inference time, and during training
 * if an input image is smaller than the target size, the input will be
 * resized and cropped so as to return the largest possible window in
 * the image that matches the target aspect ratio"). Nothing is drawn
 * then.
 */
int tfk_aug_random_crop(const struct tfk_aug_image *src,
			struct tfk_aug_image *dst, int training,
			struct tfk_aug_rng *rng, struct tfk_err *err);

enum {
	TFK_AUG_FLIP_H = 1,	/* "horizontal": mirror left-right */
	TFK_AUG_FLIP_V = 2,	/* "vertical": mirror top-bottom */
	TFK_AUG_FLIP_HV = 3	/* "horizontal_and_vertical" (default) */
};

/* "horizontal", "vertical", "horizontal_and_vertical" -> mode; -1. */
int tfk_aug_flip_parse(const char *s);

/* Mirror src into dst (same shape): mode a TFK_AUG_FLIP_* mask, 0 copies. */
int tfk_aug_flip(const struct tfk_aug_image *src, struct tfk_aug_image *dst,
		 int mode, struct tfk_err *err);

/*
 * RandomFlip: one draw u; when training and u <= 0.5 the image is
 * flipped in every direction of mode - Keras 3 uses the same draw for
 * both directions of "horizontal_and_vertical", so that mode gives the
 * image unchanged or rotated by 180 degrees, each with probability 1/2.
 * Not training: a copy, nothing drawn. *flipped (may be NULL) gets
 * whether it flipped.
 */
int tfk_aug_random_flip(const struct tfk_aug_image *src,
			struct tfk_aug_image *dst, int mode, int training,
			struct tfk_aug_rng *rng, int *flipped,
			struct tfk_err *err);

/*
 * Contrast: per channel, m = mean over the image (in double, stored as
 * float32), dst = (x - m) * factor + m in float32, clipped to [lo, hi]
 * (Keras' value_range, default [0, 255]).
 */
int tfk_aug_contrast(const struct tfk_aug_image *src,
		     struct tfk_aug_image *dst, float factor, float lo,
		     float hi, struct tfk_err *err);

/*
 * RandomContrast: factor drawn uniform [1 - lower, 1 + upper), then
 * tfk_aug_contrast. Keras documents a single float f as lower = upper =
 * f (the caller passes both). Not training: a copy, nothing drawn.
 */
int tfk_aug_random_contrast(const struct tfk_aug_image *src,
			    struct tfk_aug_image *dst, float lower,
			    float upper, float lo, float hi, int training,
			    struct tfk_aug_rng *rng, struct tfk_err *err);

/*
 * RandomRotation: angle drawn uniform [lower * 360, upper * 360) degrees
 * (lower, upper: Keras' factor as fractions of a turn, positive counter-
 * clockwise), then tfk_aug_rotation_matrix and tfk_aug_transform.
 * Not training: a copy, nothing drawn.
 */
int tfk_aug_random_rotation(const struct tfk_aug_image *src,
			    struct tfk_aug_image *dst, float lower,
			    float upper, const struct tfk_aug_warp *wp,
			    int training, struct tfk_aug_rng *rng,
			    struct tfk_err *err);

/*
 * RandomTranslation: dy = uniform [h_lower, h_upper) * h drawn first,
 * then dx = uniform [w_lower, w_upper) * w (fractions of the size),
 * then tfk_aug_translation_matrix. Not training: a copy.
 */
int tfk_aug_random_translation(const struct tfk_aug_image *src,
			       struct tfk_aug_image *dst, float h_lower,
			       float h_upper, float w_lower, float w_upper,
			       const struct tfk_aug_warp *wp, int training,
			       struct tfk_aug_rng *rng, struct tfk_err *err);

/*
 * RandomZoom: zy = uniform [1 + h_lower, 1 + h_upper) drawn first; then,
 * when has_width, zx = uniform [1 + w_lower, 1 + w_upper), else zx = zy
 * (Keras keeps the aspect when width_factor is None); then
 * tfk_aug_zoom_matrix. Not training: a copy.
 */
int tfk_aug_random_zoom(const struct tfk_aug_image *src,
			struct tfk_aug_image *dst, float h_lower,
			float h_upper, int has_width, float w_lower,
			float w_upper, const struct tfk_aug_warp *wp,
			int training, struct tfk_aug_rng *rng,
			struct tfk_err *err);

#endif
