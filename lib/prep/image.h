/*
 * image.h - decode JPEG, PNG, GIF and BMP from memory into uint8 HWC
 * pixels, the way TensorFlow's tf.io.decode_image does.
 *
 * Output is always uint8, rows top to bottom, channels interleaved
 * (HWC, as TensorFlow's NHWC without the batch dimension):
 *
 *   pixel (y, x) channel k = data[(y * width + x) * channels + k]
 *
 * The format is sniffed from the magic bytes, never from a file name:
 *
 *   JPEG  ff d8 ff
 *   PNG   89 50 4e 47 0d 0a 1a 0a
 *   GIF   "GIF87a" | "GIF89a"
 *   BMP   "BM" + 14-byte file header + BITMAPINFOHEADER (or later)
 *
 * channels (as TF's `channels` argument): 0 = as stored (JPEG 1 or 3,
 * PNG 1, 2, 3 or 4, GIF 3, BMP 1, 3 or 4); 1 = grayscale, 3 = RGB,
 * 4 = RGBA. Conversions follow TensorFlow per format (see image.c for the
 * details and their sources): JPEG gray comes from libjpeg's own
 * YCbCr->Y conversion, PNG gray from libpng's, GIF/BMP/CMYK gray from
 * tf.image.rgb_to_grayscale; a missing alpha becomes 255; CMYK JPEGs
 * become RGB as TF does (Adobe inverted CMYK). Gamma and EXIF
 * orientation are ignored, as TF ignores them.
 *
 * Errors: empty, truncated, corrupt or non-image data -> TFK_ECORRUPT
 * with a message ("jpeg: premature end of jpeg file", "png: idat: crc
 * error", "not an image (jpeg, png, gif or bmp): starts with ...");
 * unsupported variants (e.g. RLE BMP) -> TFK_EINVAL; declared sizes over
 * max_pixels -> TFK_EINVAL before anything is allocated; TFK_ENOMEM.
 * Messages carry no file name: callers prefix it (tfk_err_prefix).
 * libjpeg warnings about missing or corrupt scan data are errors (TF's
 * default try_recover_truncated=false); harmless ones are not. One
 * leniency: a single-scan JPEG lacking only its final EOI marker
 * decodes (see image.c).
 *
 * Thread safety: every function is reentrant; use one struct tfk_img per
 * thread and reuse it, so steady-state decoding allocates nothing.
 */
#ifndef TFK_IMAGE_H
#define TFK_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

enum tfk_img_format {
	TFK_IMG_UNKNOWN = 0,
	TFK_IMG_JPEG = 1,
	TFK_IMG_PNG = 2,
	TFK_IMG_GIF = 3,
	TFK_IMG_BMP = 4
};

/* JPEG inverse DCT, as TF's decode_jpeg dct_method. */
enum tfk_img_dct {
	TFK_IMG_DCT_DEFAULT = 0,	/* TF's default: IFAST (image.c) */
	TFK_IMG_DCT_ISLOW = 1,		/* "INTEGER_ACCURATE"; Pillow's */
	TFK_IMG_DCT_IFAST = 2,		/* "INTEGER_FAST" */
	TFK_IMG_DCT_FLOAT = 3
};

/* Refuse images with more pixels than this by default (2^28). */
#define TFK_IMG_MAX_PIXELS (UINT64_C(1) << 28)

/* Format of p[0..n) from its magic bytes; TFK_IMG_UNKNOWN if none. */
int tfk_img_sniff(const void *p, size_t n);
/* "jpeg", "png", "gif", "bmp" (the schema "content" names) or "unknown". */
const char *tfk_img_format_name(int format);

/* What the header says, without decoding pixels. */
struct tfk_img_info {
	int format;		/* enum tfk_img_format */
	int width, height;
	int channels;		/* what channels = 0 would give */
};

/*
 * Read the header of p[0..n) only. Returns 0, or TFK_ECORRUPT (not an
 * image, truncated header), TFK_EINVAL (unsupported variant).
 */
int tfk_img_probe(const void *p, size_t n, struct tfk_img_info *info,
		  struct tfk_err *err);

struct tfk_img_opts {
	int channels;		/* 0 (as stored), 1, 3 or 4 */
	int dct_method;		/* enum tfk_img_dct */
	/*
	 * JPEG only (other formats ignore it): decode at 1/scale_denom of the
	 * size through libjpeg's DCT scaling (1, 2, 4 or 8; 0 means 1). The
	 * result is ceil(width / N) x ceil(height / N), much faster to get
	 * than a full decode, and close to (not equal to) a full decode
	 * followed by an area downscale.
	 */
	int scale_denom;
	uint64_t max_pixels;	/* width * height limit; 0: default */
};

/* Defaults: channels as stored, TF's DCT, full size, default limit. */
#define TFK_IMG_OPTS_DEFAULT { 0, TFK_IMG_DCT_DEFAULT, 1, 0 }

/* A decoded image; the buffer is reused across decodes. */
struct tfk_img {
	uint8_t *data;		/* height * width * channels bytes */
	int width, height, channels;
	int format;		/* enum tfk_img_format of the source */
	size_t cap;		/* bytes allocated at data */
};

void tfk_img_init(struct tfk_img *img);
void tfk_img_release(struct tfk_img *img);

/*
 * Decode p[0..n) into img (its buffer grows as needed and is kept).
 * o may be NULL for the defaults. GIF: the first frame, composited on a
 * black canvas of the logical screen size as TF's decode_gif does.
 * Returns 0 or a negative TFK_E* (see the top of this file); on failure
 * img keeps its buffer but its contents and size are unspecified.
 */
int tfk_img_decode(struct tfk_img *img, const void *p, size_t n,
		   const struct tfk_img_opts *o, struct tfk_err *err);

/*
 * The DCT scale denominator (1, 2, 4 or 8) that tfk_img_decode_resize
 * uses in fast mode: the largest N such that a w x h source, first
 * center-cropped to the target aspect ratio when crop is set, still
 * measures at least out_w x out_h after scaling by 1/N. Non-JPEG
 * formats always decode at 1.
 */
int tfk_img_pick_scale(int w, int h, int out_w, int out_h, int crop);

struct tfk_img_resize {
	int out_w, out_h;	/* target size, both > 0 */
	int method;		/* enum tfk_resize_method (prep/resize.h) */
	int antialias;		/* as tf.image.resize(antialias=True) */
	int crop;		/* Keras crop_to_aspect_ratio: center crop the
				 * largest window of the target aspect first */
	int fast;		/* allow JPEG DCT scaling (not TF-exact) */
	int pad;		/* Keras pad_to_aspect_ratio: resize, aspect
				 * kept, into a zero-padded window
				 * (tf.image.resize_with_pad); not with crop */
};

/*
 * Decode p[0..n), crop or pad and resize to o->out_h x o->out_w x
 * channels (channels 1, 3 or 4, from io), rounding to uint8 (see
 * resize.h), into dst. img is scratch (reused). This is what Keras'
 * image_dataset_from_directory does per file (decode_image, then
 * smart_resize, resize_with_pad or resize), except that Keras keeps
 * float32. With fast unset (the default) the pixels are TF's; fast lets
 * a JPEG at least twice the target (or the padded window) decode at
 * 1/2, 1/4 or 1/8 scale first: several times faster, but on large
 * downscales a few levels off TF's on average (far more at edges).
 * Returns 0 or a negative TFK_E* (TFK_EINVAL for crop with pad, or a
 * pad that leaves no rows or columns).
 */
int tfk_img_decode_resize(struct tfk_img *img, const void *p, size_t n,
			  const struct tfk_img_opts *io,
			  const struct tfk_img_resize *ro, uint8_t *dst,
			  struct tfk_err *err);

#endif
