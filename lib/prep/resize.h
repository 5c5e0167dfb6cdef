/*
 * resize.h - tf.image.resize on HWC images (uint8 or float32).
 *
 * Semantics are TensorFlow 2's tf.image.resize (image_ops_impl.py
 * resize_images_v2) for one image of shape [h, w, c]:
 *
 *   bilinear  ResizeBilinear, half_pixel_centers=True:
 *             in = (out + 0.5) * (in_size / out_size) - 0.5,
 *             neighbours floor(in) and ceil(in) clamped to the edge.
 *   nearest   ResizeNearestNeighbor, half_pixel_centers=True:
 *             in = min(floor((out + 0.5) * scale), in_size - 1).
 *   bicubic   ResizeBicubic, half_pixel_centers=True, Keys a = -0.5,
 *             edge taps clamped, weights renormalised as TF does.
 *   area      ResizeArea (box filter over the exact pixel footprint).
 *   antialias bilinear/bicubic with antialias=True: ScaleAndTranslate
 *             with the triangle / Keys kernel widened by the downscale
 *             factor (no effect when upscaling).
 *
 * TF returns float32; the _u8 variants round the same float result to
 * the nearest integer (halves away from zero) and clamp to [0, 255] -
 * tfkit stores uint8, and rounding (not TF's truncating cast) keeps the
 * stored value within 0.5 of what Keras would compute.
 *
 * Source rows may be strided (stride = elements from one row to the
 * next; 0 means w * c), so a crop is just a pointer and a stride.
 */
#ifndef TFK_RESIZE_H
#define TFK_RESIZE_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

enum tfk_resize_method {
	TFK_RESIZE_BILINEAR = 0,	/* Keras' and TF's default */
	TFK_RESIZE_NEAREST = 1,
	TFK_RESIZE_BICUBIC = 2,
	TFK_RESIZE_AREA = 3
};

/* "bilinear", "nearest", "bicubic", "area" -> enum; -1 when unknown. */
int tfk_resize_method_parse(const char *s);
const char *tfk_resize_method_name(int method);

/* A window of an image: top-left corner (y, x) and size h x w. */
struct tfk_crop {
	int y, x, h, w;
};

/*
 * Keras crop_to_aspect_ratio (keras.utils.image_utils.smart_resize): the
 * largest centered window of an h x w image with the aspect ratio of
 * out_h x out_w, computed with Keras' float32 casts and truncation.
 */
void tfk_resize_crop_aspect(int h, int w, int out_h, int out_w,
			    struct tfk_crop *box);

/*
 * Keras pad_to_aspect_ratio (tf.image.resize_with_pad): where an h x w
 * image lands in an out_h x out_w output when resized, aspect kept, to
 * fit inside it: box is the resized size (h, w) and its top-left corner
 * (y, x); the rest of the output is zero. TF's float32 steps. Returns 0,
 * or -1 when the image would shrink to no rows or columns (TF fails
 * then too).
 */
int tfk_resize_pad_aspect(int h, int w, int out_h, int out_w,
			  struct tfk_crop *box);

/*
 * Resize src (sh x sw x c, row stride sstride elements, 0 = sw * c) to
 * dst (dh x dw x c, contiguous). antialias as tf.image.resize (only for
 * bilinear and bicubic; ignored by nearest and area, as TF). Returns 0,
 * TFK_EINVAL (sizes < 1, c < 1, unknown method) or TFK_ENOMEM (scratch
 * memory for the separable passes).
 */
int tfk_resize_u8(const uint8_t *src, int sh, int sw, size_t sstride, int c,
		  uint8_t *dst, int dh, int dw, int method, int antialias,
		  struct tfk_err *err);
int tfk_resize_f32(const float *src, int sh, int sw, size_t sstride, int c,
		   float *dst, int dh, int dw, int method, int antialias,
		   struct tfk_err *err);
/* tfk_resize_u8 into a window of a larger image: dst rows dstride
 * elements apart (0 = dw * c); what lies between them is not touched. */
int tfk_resize_u8_to(const uint8_t *src, int sh, int sw, size_t sstride,
		     int c, uint8_t *dst, int dh, int dw, size_t dstride,
		     int method, int antialias, struct tfk_err *err);
/* uint8 in, float32 out: exactly what tf.image.resize returns. */
int tfk_resize_u8_f32(const uint8_t *src, int sh, int sw, size_t sstride,
		      int c, float *dst, int dh, int dw, int method,
		      int antialias, struct tfk_err *err);

/*
 * The specification of bilinear: TF's ResizeBilinear loop with
 * half-pixel centers, float32 arithmetic in TF's order, no strides, no
 * scratch. The fast paths above are tested against it.
 */
void tfk_resize_bilinear_ref(const float *src, int sh, int sw, int c,
			     float *dst, int dh, int dw);

#endif
