/*
 * image.c - JPEG (libjpeg-turbo), PNG (libpng), GIF (giflib) and BMP (own
 * code) decoding from memory into uint8 HWC, matching TensorFlow.
 *
 * Each decoder follows the TensorFlow source it mirrors, so a tfkit
 * record holds the pixels Keras would have seen:
 *
 * JPEG (tensorflow/core/lib/jpeg/jpeg_mem.cc, decode_image_op.cc):
 *   dct_method JDCT_IFAST by default ("the TensorFlow-chosen default"; also
 *   what decode_image uses), fancy upsampling on, libjpeg's own
 *   colour conversion for channels 1 (YCbCr -> Y) and 3. CMYK and YCCK
 *   files are read as CMYK and turned into RGB with TF's integer formula
 *   (Adobe inverted CMYK: r = k * c / 255; plain: (255-k)(255-c)/255).
 *   Where TF refuses we extend: channels 4 gives alpha 255, and channels 1
 *   of a CMYK file goes through tf.image.rgb_to_grayscale.
 *   libjpeg's error_exit longjmps back here; of its warnings, those that
 *   mean missing or corrupt entropy-coded data (bad Huffman code,
 *   premature end of data segment, lost restart markers, bad
 *   progression) are errors, because the pixels after them would be
 *   invented grey. Harmless ones (extraneous bytes before a marker,
 *   unknown Adobe/JFIF versions, a bad ICC marker) are ignored, as TF
 *   ignores them. The end of the data ("premature end of JPEG file")
 *   is an error for multi-scan (progressive) files, where a cut at a
 *   scan boundary would silently give a blurrier image; a single-scan
 *   file that merely lacks its EOI marker decodes (every bit of its one
 *   scan was there, or the decoder would have reported a premature end
 *   of data segment). TF refuses both; Pillow accepts both.
 *
 * PNG (tensorflow/core/lib/png/png_io.cc CommonInitDecode): the same
 *   libpng transformations in the same way: alpha kept when an even
 *   channel count is asked for (tRNS becomes alpha), stripped otherwise;
 *   16-bit samples keep their high byte (png_set_strip_16); palettes
 *   expand to RGB(A); gray <8 bit expands; colour -> gray with
 *   png_set_rgb_to_gray(0.299, 0.587) (libpng's fixed-point Rec.601).
 *   Gamma (gAMA, sRGB, iCCP) is ignored, as TF ignores it: samples are
 *   returned as stored. One deliberate difference: TF fills a missing
 *   alpha with (1 << bit_depth) - 1, which is 1 for a 1-bit gray image;
 *   we fill 255 (opaque) for every depth.
 *
 * GIF (tensorflow/core/lib/gif/gif_io.cc): the first frame only (what
 *   decode_image(expand_animations=False) returns), drawn on a black
 *   canvas of the logical screen size; pixels of the transparent index
 *   stay black; an index outside the colour map (other than the
 *   transparent one) is an error. Read record by record with giflib's
 *   low-level calls, so later frames are never decoded. channels 1 uses
 *   tf.image.rgb_to_grayscale, channels 4 gives alpha 0 where the canvas
 *   is transparent or uncovered (TF offers neither).
 *
 * BMP (own decoder; TF's decode_bmp reads only uncompressed 8/24/32-bit
 *   files and treats 8-bit data as gray without looking at the palette):
 *   BITMAPCOREHEADER and BITMAPINFOHEADER..V5, bottom-up or top-down;
 *   1/4/8-bit palettes (applied, as Pillow does; a palette of grays gives
 *   1 native channel, like TF's 8-bit case), 24-bit BGR, 32-bit BGRA
 *   (byte 4 is alpha, as TF) or BI_BITFIELDS with the standard masks.
 *   RLE, 16-bit, embedded JPEG/PNG and other masks are refused with
 *   TFK_EINVAL naming what is unsupported.
 *
 * Grayscale from colour where the format has no own conversion (GIF,
 * BMP, CMYK) is TF's tf.image.rgb_to_grayscale on uint8: float32
 * 0.2989 r + 0.5870 g + 0.1140 b on values scaled by 1/255, then
 * convert_image_dtype back (multiply by 255.5, truncate).
 *
 * Declared dimensions are checked against max_pixels before anything is
 * allocated. Rejected: decoding via Pillow-like "draft" modes or
 * DGifSlurp (which decodes and stores every frame of an animation).
 */
#include "prep/image.h"
#include "prep/resize.h"
#include "util/alloc.h"

#include <ctype.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <gif_lib.h>
#include <jpeglib.h>
#include <jerror.h>
#include <png.h>

#define MAX_SIDE (1 << 30)	/* keeps w * h * 4 far inside size_t */

int tfk_img_sniff(const void *p, size_t n)
{
	const uint8_t *b = p;

	if (n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff)
		return TFK_IMG_JPEG;
	if (n >= 8 && !memcmp(b, "\x89PNG\r\n\x1a\n", 8))
		return TFK_IMG_PNG;
	if (n >= 6 && (!memcmp(b, "GIF87a", 6) || !memcmp(b, "GIF89a", 6)))
		return TFK_IMG_GIF;
	if (n >= 2 && b[0] == 'B' && b[1] == 'M')
		return TFK_IMG_BMP;
	return TFK_IMG_UNKNOWN;
}

const char *tfk_img_format_name(int format)
{
	switch (format) {
	case TFK_IMG_JPEG: return "jpeg";
	case TFK_IMG_PNG: return "png";
	case TFK_IMG_GIF: return "gif";
	case TFK_IMG_BMP: return "bmp";
	default: return "unknown";
	}
}

void tfk_img_init(struct tfk_img *img)
{
	memset(img, 0, sizeof(*img));
}

void tfk_img_release(struct tfk_img *img)
{
	if (!img)
		return;
	tfk_free(img->data);
	memset(img, 0, sizeof(*img));
}

/* ---------------------------------------------------------------------- */

static uint64_t max_pixels(const struct tfk_img_opts *o)
{
	return o && o->max_pixels ? o->max_pixels : TFK_IMG_MAX_PIXELS;
}

static int check_dims(const char *fmt, uint64_t w, uint64_t h, uint64_t max,
		      struct tfk_err *err)
{
	if (w == 0 || h == 0)
		return tfk_errf(err, TFK_ECORRUPT, "%s: image has no pixels"
				" (%" PRIu64 "x%" PRIu64 ")", fmt, w, h);
	if (w > MAX_SIDE || h > MAX_SIDE || w * h > max)
		return tfk_errf(err, TFK_EINVAL, "%s: %" PRIu64 "x%" PRIu64
				" image is over the limit of %" PRIu64
				" pixels", fmt, w, h, max);
	return 0;
}

/* Size img for w x h x c; contents undefined. */
static int img_reserve(struct tfk_img *img, int w, int h, int c,
		       struct tfk_err *err)
{
	size_t need = (size_t)w * (size_t)h * (size_t)c;

	if (need > img->cap) {
		tfk_free(img->data);
		img->cap = 0;
		img->data = tfk_malloc(need);
		if (!img->data)
			return tfk_errf(err, TFK_ENOMEM, "out of memory for a"
					" %dx%dx%d image", w, h, c);
		img->cap = need;
	}
	img->width = w;
	img->height = h;
	img->channels = c;
	return 0;
}

/* tf.image.rgb_to_grayscale for uint8, in TF's float32 steps. */
static uint8_t tf_gray(unsigned r, unsigned g, unsigned b)
{
	const float s = (float)(1.0 / 255.0);
	float v = (float)r * s * 0.2989f + (float)g * s * 0.5870f +
		  (float)b * s * 0.1140f;

	return (uint8_t)(v * 255.5f);
}

/* Store one RGBA pixel as c channels (1: TF gray, 3: RGB, 4: RGBA). */
static inline void put_px(uint8_t *d, int c, uint8_t r, uint8_t g, uint8_t b,
			  uint8_t a)
{
	if (c == 1) {
		d[0] = (r == g && g == b) ? r : tf_gray(r, g, b);
	} else {
		d[0] = r;
		d[1] = g;
		d[2] = b;
		if (c == 4)
			d[3] = a;
	}
}

/* "Premature end of JPEG file" -> "jpeg: premature end of jpeg file". */
static int lib_err(struct tfk_err *err, int code, const char *fmt,
		   const char *msg)
{
	char low[256];
	size_t i;

	for (i = 0; msg[i] && i < sizeof(low) - 1; i++)
		low[i] = (char)tolower((unsigned char)msg[i]);
	low[i] = 0;
	return tfk_errf(err, code, "%s: %s", fmt, low);
}

/* JPEG ----------------------------------------------------------------- */

struct jpeg_ctx {
	struct jpeg_error_mgr pub;	/* first: libjpeg casts to it */
	jmp_buf jb;
	int eof;		/* the data ended before an EOI marker */
	int code;		/* TFK_E* for the longjmp */
	char msg[JMSG_LENGTH_MAX];
};

static void jpeg_fail(j_common_ptr ci)
{
	struct jpeg_ctx *x = (struct jpeg_ctx *)ci->err;

	if (x->eof)	/* whatever broke, the cause is a truncation */
		snprintf(x->msg, sizeof(x->msg), "premature end of jpeg file");
	else
		ci->err->format_message(ci, x->msg);
	x->code = TFK_ECORRUPT;
	longjmp(x->jb, 1);
}

/* Warnings that mean the pixels are not what the encoder wrote. */
static int jpeg_warning_fatal(int code)
{
	switch (code) {
	case JWRN_HIT_MARKER:
	case JWRN_HUFF_BAD_CODE:
	case JWRN_ARITH_BAD_CODE:
	case JWRN_MUST_RESYNC:
	case JWRN_BOGUS_PROGRESSION:
	case JWRN_NOT_SEQUENTIAL:
		return 1;
	default:
		return 0;
	}
}

static void jpeg_emit(j_common_ptr ci, int level)
{
	struct jpeg_ctx *x = (struct jpeg_ctx *)ci->err;
	int code = ci->err->msg_code;

	if (level >= 0)
		return;		/* trace message */
	ci->err->num_warnings++;
	if (code == JWRN_JPEG_EOF)
		x->eof = 1;
	else if (jpeg_warning_fatal(code))
		jpeg_fail(ci);
}

static void jpeg_ctx_init(struct jpeg_decompress_struct *ci,
			  struct jpeg_ctx *x)
{
	memset(x, 0, sizeof(*x));
	ci->err = jpeg_std_error(&x->pub);
	x->pub.error_exit = jpeg_fail;
	x->pub.emit_message = jpeg_emit;
}

/* Convert one CMYK row (libjpeg order, maybe Adobe-inverted) as TF does. */
static void cmyk_row(const uint8_t *s, uint8_t *d, int w, int c, int adobe)
{
	int i;

	for (i = 0; i < w; i++, s += 4, d += c) {
		int r, g, b, k = s[3];

		if (adobe) {
			r = (k * s[0]) / 255;
			g = (k * s[1]) / 255;
			b = (k * s[2]) / 255;
		} else {
			r = (255 - k) * (255 - s[0]) / 255;
			g = (255 - k) * (255 - s[1]) / 255;
			b = (255 - k) * (255 - s[2]) / 255;
		}
		put_px(d, c, (uint8_t)r, (uint8_t)g, (uint8_t)b, 255);
	}
}

static J_DCT_METHOD dct_of(int m)
{
	switch (m) {
	case TFK_IMG_DCT_ISLOW: return JDCT_ISLOW;
	case TFK_IMG_DCT_FLOAT: return JDCT_FLOAT;
	default: return JDCT_IFAST;
	}
}

/* fit: when set (decode_resize's fast mode), the DCT scale is chosen
 * from the header just read, so the header is parsed once. */
static int decode_jpeg(struct tfk_img *img, const uint8_t *p, size_t n,
		       const struct tfk_img_opts *o,
		       const struct tfk_img_resize *fit, struct tfk_err *err)
{
	struct jpeg_decompress_struct ci;
	struct jpeg_ctx x;
	uint8_t *volatile tmp = NULL;
	int rc, c, cmyk, denom, multi;

	jpeg_ctx_init(&ci, &x);
	if (setjmp(x.jb)) {
		jpeg_destroy_decompress(&ci);
		tfk_free(tmp);
		return lib_err(err, x.code, "jpeg", x.msg);
	}
	jpeg_create_decompress(&ci);
	jpeg_mem_src(&ci, p, (unsigned long)n);
	jpeg_read_header(&ci, TRUE);

	rc = check_dims("jpeg", ci.image_width, ci.image_height,
			max_pixels(o), err);
	if (rc)
		goto out;
	cmyk = ci.jpeg_color_space == JCS_CMYK ||
	       ci.jpeg_color_space == JCS_YCCK;
	c = o->channels ? o->channels : (ci.num_components == 1 ? 1 : 3);
	if (cmyk)
		ci.out_color_space = JCS_CMYK;
	else if (c == 1)
		ci.out_color_space = JCS_GRAYSCALE;
	else if (c == 3)
		ci.out_color_space = JCS_RGB;
	else
		ci.out_color_space = JCS_EXT_RGBA;
	denom = o->scale_denom;
	if (fit)
		denom = tfk_img_pick_scale((int)ci.image_width,
					   (int)ci.image_height, fit->out_w,
					   fit->out_h, fit->crop);
	if (denom != 2 && denom != 4 && denom != 8)
		denom = 1;
	ci.scale_num = 1;
	ci.scale_denom = (unsigned)denom;
	ci.dct_method = dct_of(o->dct_method);
	ci.do_fancy_upsampling = TRUE;
	jpeg_calc_output_dimensions(&ci);
	rc = img_reserve(img, (int)ci.output_width, (int)ci.output_height, c,
			 err);
	if (rc)
		goto out;
	if (cmyk) {
		tmp = tfk_malloc((size_t)ci.output_width * 4);
		if (!tmp) {
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
			goto out;
		}
	}
	jpeg_start_decompress(&ci);
	if ((int)ci.output_components != (cmyk ? 4 : c)) {
		rc = tfk_errf(err, TFK_ECORRUPT, "jpeg: unexpected %d output"
			      " components", (int)ci.output_components);
		goto out;
	}
	while (ci.output_scanline < ci.output_height) {
		size_t stride = (size_t)img->width * (size_t)c;
		unsigned y = ci.output_scanline, k, got;
		JSAMPROW rows[16];

		if (cmyk) {
			rows[0] = tmp;
			got = jpeg_read_scanlines(&ci, rows, 1);
			if (got == 1)
				cmyk_row(tmp, img->data + y * stride,
					 img->width, c, ci.saw_Adobe_marker);
		} else {
			for (k = 0; k < 16 && y + k < ci.output_height; k++)
				rows[k] = img->data + (y + k) * stride;
			got = jpeg_read_scanlines(&ci, rows, k);
		}
		if (got == 0) {
			rc = tfk_errf(err, TFK_ECORRUPT, "jpeg: premature end"
				      " of jpeg file at row %u", y);
			goto out;
		}
	}
	multi = jpeg_has_multiple_scans(&ci);
	jpeg_finish_decompress(&ci);
	rc = 0;
	if (x.eof && multi)
		rc = tfk_errf(err, TFK_ECORRUPT, "jpeg: premature end of jpeg"
			      " file");
out:
	jpeg_destroy_decompress(&ci);
	tfk_free(tmp);
	return rc;
}

static int probe_jpeg(const uint8_t *p, size_t n, struct tfk_img_info *info,
		      struct tfk_err *err)
{
	struct jpeg_decompress_struct ci;
	struct jpeg_ctx x;

	jpeg_ctx_init(&ci, &x);
	if (setjmp(x.jb)) {
		jpeg_destroy_decompress(&ci);
		return lib_err(err, x.code, "jpeg", x.msg);
	}
	jpeg_create_decompress(&ci);
	jpeg_mem_src(&ci, p, (unsigned long)n);
	jpeg_read_header(&ci, TRUE);
	info->width = (int)ci.image_width;
	info->height = (int)ci.image_height;
	info->channels = ci.num_components == 1 ? 1 : 3;
	jpeg_destroy_decompress(&ci);
	return 0;
}

/* PNG ------------------------------------------------------------------ */

struct png_src {
	const uint8_t *p;
	size_t n, off;
	char msg[256];
};

static void png_fail(png_structp png, png_const_charp msg)
{
	struct png_src *s = png_get_error_ptr(png);

	snprintf(s->msg, sizeof(s->msg), "%s", msg);
	png_longjmp(png, 1);
}

static void png_warn(png_structp png, png_const_charp msg)
{
	(void)png;
	(void)msg;
}

static void png_read_mem(png_structp png, png_bytep out, png_size_t len)
{
	struct png_src *s = png_get_io_ptr(png);

	if (len > s->n - s->off)
		png_error(png, "truncated png data");
	memcpy(out, s->p + s->off, len);
	s->off += len;
}

static int decode_png(struct tfk_img *img, const uint8_t *p, size_t n,
		      const struct tfk_img_opts *o, struct tfk_err *err)
{
	struct png_src src = { p, n, 0, "" };
	png_structp png;
	png_infop info;
	png_bytep *volatile rows = NULL;
	png_uint_32 w, h;
	int depth, type, c, has_trns, has_alpha, is_gray, rc, y;

	png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, png_fail,
				     png_warn);
	if (!png)
		return tfk_errf(err, TFK_ENOMEM, "png: out of memory");
	info = png_create_info_struct(png);
	if (!info) {
		png_destroy_read_struct(&png, NULL, NULL);
		return tfk_errf(err, TFK_ENOMEM, "png: out of memory");
	}
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_read_struct(&png, &info, NULL);
		tfk_free(rows);
		return lib_err(err, TFK_ECORRUPT, "png", src.msg);
	}
	png_set_read_fn(png, &src, png_read_mem);
	png_read_info(png, info);
	png_get_IHDR(png, info, &w, &h, &depth, &type, NULL, NULL, NULL);
	rc = check_dims("png", w, h, max_pixels(o), err);
	if (rc)
		goto out;

	/* The transformations of TF's CommonInitDecode, in its order. */
	has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
	c = o->channels;
	if (c == 0)
		c = type == PNG_COLOR_TYPE_PALETTE ? (has_trns ? 4 : 3)
						   : png_get_channels(png, info);
	has_alpha = (type & PNG_COLOR_MASK_ALPHA) != 0;
	if ((c & 1) == 0) {
		if (!has_alpha) {
			if (has_trns)
				png_set_tRNS_to_alpha(png);
			else
				png_set_add_alpha(png, 0xffff,
						  PNG_FILLER_AFTER);
		}
	} else if (has_alpha || has_trns) {
		png_set_strip_alpha(png);
	}
	if (depth > 8)
		png_set_strip_16(png);
	png_set_packing(png);
	png_set_interlace_handling(png);
	if (type == PNG_COLOR_TYPE_PALETTE)
		png_set_palette_to_rgb(png);
	is_gray = !(type & PNG_COLOR_MASK_COLOR);
	if (is_gray && depth < 8)
		png_set_expand_gray_1_2_4_to_8(png);
	if (c < 3) {
		if (!is_gray)
			png_set_rgb_to_gray(png, 1, 0.299, 0.587);
	} else if (is_gray) {
		png_set_gray_to_rgb(png);
	}
	png_read_update_info(png, info);
	if (png_get_channels(png, info) != c ||
	    png_get_bit_depth(png, info) != 8 ||
	    png_get_rowbytes(png, info) != (size_t)w * (size_t)c) {
		rc = tfk_errf(err, TFK_ECORRUPT, "png: unexpected row layout"
			      " after conversion");
		goto out;
	}
	rc = img_reserve(img, (int)w, (int)h, c, err);
	if (rc)
		goto out;
	rows = tfk_malloc(sizeof(*rows) * h);
	if (!rows) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto out;
	}
	for (y = 0; y < (int)h; y++)
		rows[y] = img->data + (size_t)y * w * (size_t)c;
	png_read_image(png, rows);
	png_read_end(png, NULL);
	rc = 0;
out:
	png_destroy_read_struct(&png, &info, NULL);
	tfk_free(rows);
	return rc;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static int probe_png(const uint8_t *p, size_t n, struct tfk_img_info *info,
		     struct tfk_err *err)
{
	size_t off = 8 + 25;
	int type;

	if (n < 8 + 25 || be32(p + 8) != 13 || memcmp(p + 12, "IHDR", 4))
		return tfk_errf(err, TFK_ECORRUPT, "png: missing ihdr chunk");
	info->width = (int)(be32(p + 16) & 0x7fffffff);
	info->height = (int)(be32(p + 20) & 0x7fffffff);
	type = p[25];
	switch (type) {
	case 0: info->channels = 1; break;
	case 2: info->channels = 3; break;
	case 4: info->channels = 2; break;
	case 6: info->channels = 4; break;
	case 3:
		info->channels = 3;
		while (off + 8 <= n) {	/* a tRNS before IDAT adds alpha */
			uint32_t len = be32(p + off);

			if (!memcmp(p + off + 4, "tRNS", 4)) {
				info->channels = 4;
				break;
			}
			if (!memcmp(p + off + 4, "IDAT", 4) ||
			    !memcmp(p + off + 4, "IEND", 4) ||
			    len > n - off - 8)
				break;
			off += (size_t)len + 12;
		}
		break;
	default:
		return tfk_errf(err, TFK_ECORRUPT, "png: bad color type %d",
				type);
	}
	return 0;
}

/* GIF ------------------------------------------------------------------ */

struct mem_src {
	const uint8_t *p;
	size_t n, off;
};

static int gif_read_mem(GifFileType *gf, GifByteType *buf, int len)
{
	struct mem_src *m = gf->UserData;
	size_t k = len < 0 ? 0 : (size_t)len;

	if (k > m->n - m->off)
		k = m->n - m->off;
	memcpy(buf, m->p + m->off, k);
	m->off += k;
	return (int)k;
}

static int gif_err(struct tfk_err *err, int code)
{
	const char *s = GifErrorString(code);

	return lib_err(err, TFK_ECORRUPT, "gif", s ? s : "unknown error");
}

/* Palette as c-channel pixels, for fast per-index stores. */
static void palette_px(const GifColorType *cm, int n, int c, uint8_t *pal)
{
	int i;

	for (i = 0; i < n; i++)
		put_px(pal + i * 4, c, cm[i].Red, cm[i].Green, cm[i].Blue,
		       255);
}

static int decode_gif(struct tfk_img *img, const uint8_t *p, size_t n,
		      const struct tfk_img_opts *o, struct tfk_err *err)
{
	struct mem_src m = { p, n, 0 };
	GifFileType *gf;
	GifRecordType type;
	GifByteType *ext;
	GifPixelType *line = NULL;
	ColorMapObject *cm;
	uint8_t pal[256 * 4];
	int e = 0, rc, c, transparent = -1, code, W, H;
	int fl, ft, fw, fh, pass, y, x, ncol;
	static const int pass_off[4] = { 0, 4, 2, 1 };
	static const int pass_step[4] = { 8, 8, 4, 2 };

	gf = DGifOpen(&m, gif_read_mem, &e);
	if (!gf)
		return gif_err(err, e);
	W = gf->SWidth;
	H = gf->SHeight;
	rc = check_dims("gif", (uint64_t)(W < 0 ? 0 : W),
			(uint64_t)(H < 0 ? 0 : H), max_pixels(o), err);
	if (rc)
		goto out;
	for (;;) {		/* skip to the first image descriptor */
		if (DGifGetRecordType(gf, &type) != GIF_OK)
			goto lib;
		if (type == IMAGE_DESC_RECORD_TYPE)
			break;
		if (type == TERMINATE_RECORD_TYPE) {
			rc = tfk_errf(err, TFK_ECORRUPT, "gif: no image in"
				      " file");
			goto out;
		}
		if (type != EXTENSION_RECORD_TYPE)
			continue;
		if (DGifGetExtension(gf, &code, &ext) != GIF_OK)
			goto lib;
		if (code == GRAPHICS_EXT_FUNC_CODE && ext && ext[0] >= 4)
			transparent = (ext[1] & 1) ? ext[4] : -1;
		while (ext)
			if (DGifGetExtensionNext(gf, &ext) != GIF_OK)
				goto lib;
	}
	if (DGifGetImageDesc(gf) != GIF_OK)
		goto lib;
	fl = gf->Image.Left;
	ft = gf->Image.Top;
	fw = gf->Image.Width;
	fh = gf->Image.Height;
	if (fw <= 0 || fh <= 0 ||
	    (uint64_t)fw * (uint64_t)fh > max_pixels(o)) {
		rc = tfk_errf(err, fw <= 0 || fh <= 0 ? TFK_ECORRUPT
				   : TFK_EINVAL, "gif: bad frame size %dx%d",
			      fw, fh);
		goto out;
	}
	cm = gf->Image.ColorMap ? gf->Image.ColorMap : gf->SColorMap;
	if (!cm) {
		rc = tfk_errf(err, TFK_ECORRUPT, "gif: missing color map for"
			      " frame 0");
		goto out;
	}
	ncol = cm->ColorCount < 256 ? cm->ColorCount : 256;
	c = o->channels ? o->channels : 3;
	palette_px(cm->Colors, ncol, c, pal);
	rc = img_reserve(img, W, H, c, err);
	if (rc)
		goto out;
	memset(img->data, 0, (size_t)W * H * c);	/* black canvas */
	line = tfk_malloc((size_t)fw);
	if (!line) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto out;
	}
	for (pass = gf->Image.Interlace ? 0 : 3; pass < 4; pass++) {
		int y0 = gf->Image.Interlace ? pass_off[pass] : 0;
		int dy = gf->Image.Interlace ? pass_step[pass] : 1;

		for (y = y0; y < fh; y += dy) {
			int cy = ft + y;
			uint8_t *row;

			if (DGifGetLine(gf, line, fw) != GIF_OK)
				goto lib;
			if (cy < 0 || cy >= H)
				continue;
			row = img->data + (size_t)cy * W * c;
			for (x = 0; x < fw; x++) {
				int cx = fl + x, idx = line[x];

				if (cx >= W)
					break;
				if (idx == transparent)
					continue;
				if (idx >= ncol) {
					rc = tfk_errf(err, TFK_ECORRUPT, "gif:"
						" found color index %d outside"
						" of color map range %d", idx,
						ncol);
					goto out;
				}
				memcpy(row + (size_t)cx * c, pal + idx * 4,
				       (size_t)c);
			}
		}
	}
	rc = 0;
	goto out;
lib:
	rc = gif_err(err, gf->Error);
out:
	tfk_free(line);
	DGifCloseFile(gf, &e);
	return rc;
}

static int probe_gif(const uint8_t *p, size_t n, struct tfk_img_info *info,
		     struct tfk_err *err)
{
	if (n < 10)
		return tfk_errf(err, TFK_ECORRUPT, "gif: truncated header");
	info->width = p[6] | p[7] << 8;
	info->height = p[8] | p[9] << 8;
	info->channels = 3;
	return 0;
}

/* BMP ------------------------------------------------------------------ */

struct bmp {
	uint32_t off;		/* pixel data offset */
	int64_t w, h;		/* h > 0 */
	int top_down, bpp, alpha;	/* alpha: byte 4 of 32-bit pixels */
	const uint8_t *pal;
	int n_pal, pal_size, gray;	/* entries, bytes per entry */
	uint64_t row_size;
	int channels;		/* native */
};

static uint32_t le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static unsigned le16(const uint8_t *p)
{
	return p[0] | (unsigned)p[1] << 8;
}

static int bmp_parse(const uint8_t *p, size_t n, struct bmp *b,
		     struct tfk_err *err)
{
	uint32_t hsize, comp = 0, clr_used = 0, masks_at = 0;
	size_t pal_at;
	int64_t h;
	int i;

	memset(b, 0, sizeof(*b));
	if (n < 18)
		return tfk_errf(err, TFK_ECORRUPT, "bmp: truncated header");
	b->off = le32(p + 10);
	hsize = le32(p + 14);
	if (hsize != 12 && hsize != 40 && hsize != 52 && hsize != 56 &&
	    hsize != 64 && hsize != 108 && hsize != 124)
		return tfk_errf(err, TFK_EINVAL, "bmp: unsupported header"
				" size %" PRIu32, hsize);
	if (n < 14 + (size_t)hsize)
		return tfk_errf(err, TFK_ECORRUPT, "bmp: truncated header");
	if (hsize == 12) {
		b->w = le16(p + 18);
		h = le16(p + 20);
		b->bpp = (int)le16(p + 24);
		b->pal_size = 3;
	} else {
		b->w = (int32_t)le32(p + 18);
		h = (int32_t)le32(p + 22);
		b->bpp = (int)le16(p + 28);
		comp = le32(p + 30);
		clr_used = le32(p + 46);
		b->pal_size = 4;
	}
	pal_at = 14 + (size_t)hsize;
	if (comp == 3 || comp == 6) {		/* BI_(ALPHA)BITFIELDS */
		masks_at = 14 + 40;
		if (hsize == 40)
			pal_at += comp == 3 ? 12 : 16;
		if (n < masks_at + 12)
			return tfk_errf(err, TFK_ECORRUPT, "bmp: truncated"
					" header");
	} else if (comp == 1 || comp == 2) {
		return tfk_errf(err, TFK_EINVAL, "bmp: rle compression is not"
				" supported");
	} else if (comp == 4 || comp == 5) {
		return tfk_errf(err, TFK_EINVAL, "bmp: embedded %s is not"
				" supported", comp == 4 ? "jpeg" : "png");
	} else if (comp != 0) {
		return tfk_errf(err, TFK_EINVAL, "bmp: compression %" PRIu32
				" is not supported", comp);
	}
	if (b->w <= 0 || h == 0 || h == INT32_MIN)
		return tfk_errf(err, TFK_ECORRUPT, "bmp: bad size %" PRId64
				"x%" PRId64, b->w, h);
	b->top_down = h < 0;
	b->h = h < 0 ? -h : h;
	switch (b->bpp) {
	case 1: case 4: case 8:
		if (comp != 0)
			return tfk_errf(err, TFK_ECORRUPT, "bmp: bitfields"
					" with %d-bit pixels", b->bpp);
		b->n_pal = clr_used && clr_used < (1u << b->bpp) ?
			   (int)clr_used : 1 << b->bpp;
		if (pal_at > n || (size_t)b->n_pal * b->pal_size > n - pal_at)
			return tfk_errf(err, TFK_ECORRUPT, "bmp: truncated"
					" palette");
		b->pal = p + pal_at;
		b->gray = 1;
		for (i = 0; i < b->n_pal; i++) {
			const uint8_t *e = b->pal + i * b->pal_size;

			if (e[0] != e[1] || e[1] != e[2])
				b->gray = 0;
		}
		b->channels = b->gray ? 1 : 3;
		break;
	case 24:
		if (comp != 0)
			return tfk_errf(err, TFK_ECORRUPT, "bmp: bitfields"
					" with 24-bit pixels");
		b->channels = 3;
		break;
	case 32:
		b->alpha = 1;
		if (comp != 0) {
			uint32_t a = 0;

			if (le32(p + masks_at) != 0x00ff0000 ||
			    le32(p + masks_at + 4) != 0x0000ff00 ||
			    le32(p + masks_at + 8) != 0x000000ff)
				return tfk_errf(err, TFK_EINVAL, "bmp: only"
						" BGRA channel masks are"
						" supported");
			if ((comp == 6 || hsize >= 56) &&
			    n >= masks_at + 16)
				a = le32(p + masks_at + 12);
			if (a != 0 && a != 0xff000000)
				return tfk_errf(err, TFK_EINVAL, "bmp: only"
						" BGRA channel masks are"
						" supported");
			b->alpha = a != 0;
		}
		b->channels = b->alpha ? 4 : 3;
		break;
	case 16:
		return tfk_errf(err, TFK_EINVAL, "bmp: 16-bit pixels are not"
				" supported");
	default:
		return tfk_errf(err, TFK_ECORRUPT, "bmp: bad bit depth %d",
				b->bpp);
	}
	b->row_size = ((uint64_t)b->bpp * (uint64_t)b->w + 31) / 32 * 4;
	return 0;
}

static int decode_bmp(struct tfk_img *img, const uint8_t *p, size_t n,
		      const struct tfk_img_opts *o, struct tfk_err *err)
{
	struct bmp b;
	uint8_t pal[256 * 4];
	int rc, c, y, x;

	rc = bmp_parse(p, n, &b, err);
	if (rc)
		return rc;
	rc = check_dims("bmp", (uint64_t)b.w, (uint64_t)b.h, max_pixels(o),
			err);
	if (rc)
		return rc;
	if (b.off > n || b.row_size * (uint64_t)b.h > n - b.off)
		return tfk_errf(err, TFK_ECORRUPT, "bmp: truncated pixel data"
				" (%" PRIu64 " bytes at offset %" PRIu32
				", file has %zu)", b.row_size * (uint64_t)b.h,
				b.off, n);
	c = o->channels ? o->channels : b.channels;
	rc = img_reserve(img, (int)b.w, (int)b.h, c, err);
	if (rc)
		return rc;
	for (x = 0; x < b.n_pal; x++) {
		const uint8_t *e = b.pal + x * b.pal_size;

		put_px(pal + x * 4, c, e[2], e[1], e[0], 255);
	}
	for (y = 0; y < (int)b.h; y++) {
		const uint8_t *s = p + b.off +
			(size_t)(b.top_down ? y : (int)b.h - 1 - y) *
			b.row_size;
		uint8_t *d = img->data + (size_t)y * b.w * c;

		switch (b.bpp) {
		case 24:
			for (x = 0; x < (int)b.w; x++, s += 3, d += c)
				put_px(d, c, s[2], s[1], s[0], 255);
			break;
		case 32:
			for (x = 0; x < (int)b.w; x++, s += 4, d += c)
				put_px(d, c, s[2], s[1], s[0],
				       b.alpha ? s[3] : 255);
			break;
		default: {
			int bits = b.bpp, mask = (1 << bits) - 1;

			for (x = 0; x < (int)b.w; x++, d += c) {
				int bit = x * bits;
				int idx = (s[bit >> 3] >> (8 - bits -
					   (bit & 7))) & mask;

				if (idx >= b.n_pal)
					return tfk_errf(err, TFK_ECORRUPT,
						"bmp: row %d: palette index %d"
						" out of range (%d colors)", y,
						idx, b.n_pal);
				memcpy(d, pal + idx * 4, (size_t)c);
			}
		}
		}
	}
	return 0;
}

/* ---------------------------------------------------------------------- */

int tfk_img_probe(const void *data, size_t n, struct tfk_img_info *info,
		  struct tfk_err *err)
{
	const uint8_t *p = data;
	struct bmp b;
	int rc;

	memset(info, 0, sizeof(*info));
	info->format = tfk_img_sniff(p, n);
	switch (info->format) {
	case TFK_IMG_JPEG: return probe_jpeg(p, n, info, err);
	case TFK_IMG_PNG: return probe_png(p, n, info, err);
	case TFK_IMG_GIF: return probe_gif(p, n, info, err);
	case TFK_IMG_BMP:
		rc = bmp_parse(p, n, &b, err);
		if (rc)
			return rc;
		info->width = (int)(b.w > INT32_MAX ? INT32_MAX : b.w);
		info->height = (int)(b.h > INT32_MAX ? INT32_MAX : b.h);
		info->channels = b.channels;
		return 0;
	default:
		if (n == 0)
			return tfk_errf(err, TFK_ECORRUPT, "empty file");
		return tfk_errf(err, TFK_ECORRUPT, "not an image (jpeg, png,"
				" gif or bmp): starts with %02x %02x %02x"
				" %02x", n > 0 ? p[0] : 0, n > 1 ? p[1] : 0,
				n > 2 ? p[2] : 0, n > 3 ? p[3] : 0);
	}
}

int tfk_img_decode(struct tfk_img *img, const void *data, size_t n,
		   const struct tfk_img_opts *o, struct tfk_err *err)
{
	static const struct tfk_img_opts def = TFK_IMG_OPTS_DEFAULT;
	const uint8_t *p = data;
	int format = tfk_img_sniff(p, n);
	struct tfk_img_info info;

	if (!o)
		o = &def;
	if (o->channels != 0 && o->channels != 1 && o->channels != 3 &&
	    o->channels != 4)
		return tfk_errf(err, TFK_EINVAL, "channels must be 0, 1, 3 or"
				" 4, not %d", o->channels);
	img->format = format;
	switch (format) {
	case TFK_IMG_JPEG: return decode_jpeg(img, p, n, o, NULL, err);
	case TFK_IMG_PNG: return decode_png(img, p, n, o, err);
	case TFK_IMG_GIF: return decode_gif(img, p, n, o, err);
	case TFK_IMG_BMP: return decode_bmp(img, p, n, o, err);
	default: return tfk_img_probe(p, n, &info, err);
	}
}

/* ---------------------------------------------------------------------- */

int tfk_img_pick_scale(int w, int h, int out_w, int out_h, int crop)
{
	int denom;

	for (denom = 8; denom > 1; denom /= 2) {
		int sw = (w + denom - 1) / denom, sh = (h + denom - 1) / denom;
		struct tfk_crop box = { 0, 0, sh, sw };

		if (crop)
			tfk_resize_crop_aspect(sh, sw, out_h, out_w, &box);
		if (box.w >= out_w && box.h >= out_h)
			return denom;
	}
	return 1;
}

/* Where a pad_to_aspect_ratio resize of an h x w image lands in dst. */
static int pad_window(int h, int w, const struct tfk_img_resize *ro,
		      struct tfk_crop *at, struct tfk_err *err)
{
	if (tfk_resize_pad_aspect(h, w, ro->out_h, ro->out_w, at))
		return tfk_errf(err, TFK_EINVAL, "a %dx%d image padded to"
				" %dx%d keeps no rows or columns", h, w,
				ro->out_h, ro->out_w);
	return 0;
}

int tfk_img_decode_resize(struct tfk_img *img, const void *p, size_t n,
			  const struct tfk_img_opts *io,
			  const struct tfk_img_resize *ro, uint8_t *dst,
			  struct tfk_err *err)
{
	struct tfk_img_opts o = *io;
	struct tfk_img_resize fit = *ro;
	struct tfk_img_info info;
	struct tfk_crop box, at = { 0, 0, ro->out_h, ro->out_w };
	size_t row = (size_t)ro->out_w * (size_t)io->channels;
	int rc, c = io->channels;
	int scaled = ro->fast && tfk_img_sniff(p, n) == TFK_IMG_JPEG;

	if (c != 1 && c != 3 && c != 4)
		return tfk_errf(err, TFK_EINVAL, "channels must be 1, 3 or 4"
				" to resize, not %d", c);
	if (ro->out_w < 1 || ro->out_h < 1)
		return tfk_errf(err, TFK_EINVAL, "bad target size %dx%d",
				ro->out_w, ro->out_h);
	if (ro->crop && ro->pad)
		return tfk_errf(err, TFK_EINVAL, "crop and pad to the aspect"
				" ratio exclude each other");
	if (ro->pad && scaled) {
		/* TF's window comes from the stored size: a DCT-scaled
		 * decode is picked for, and resized into, that window */
		if ((rc = tfk_img_probe(p, n, &info, err)) ||
		    (rc = pad_window(info.height, info.width, ro, &at, err)))
			return rc;
		fit.out_h = at.h;
		fit.out_w = at.w;
	}
	o.scale_denom = 1;
	if (scaled) {
		img->format = TFK_IMG_JPEG;
		rc = decode_jpeg(img, p, n, &o, &fit, err);
	} else {
		rc = tfk_img_decode(img, p, n, &o, err);
		if (!rc && ro->pad)
			rc = pad_window(img->height, img->width, ro, &at, err);
	}
	if (rc)
		return rc;
	box.y = box.x = 0;
	box.h = img->height;
	box.w = img->width;
	if (ro->crop)
		tfk_resize_crop_aspect(img->height, img->width, ro->out_h,
				       ro->out_w, &box);
	if (ro->pad) {
		/* pad_to_bounding_box: zeros around the resized image */
		memset(dst, 0, row * (size_t)ro->out_h);
		dst += (size_t)at.y * row + (size_t)at.x * (size_t)c;
	}
	if (!ro->pad && box.h == ro->out_h && box.w == ro->out_w &&
	    box.w == img->width) {
		memcpy(dst, img->data + (size_t)box.y * box.w * c,
		       (size_t)box.h * box.w * c);
		return 0;
	}
	return tfk_resize_u8_to(img->data + ((size_t)box.y * img->width +
					     box.x) * c, box.h, box.w,
				(size_t)img->width * c, c, dst, at.h, at.w,
				row, ro->method, ro->antialias, err);
}
