/*
 * tfk-images: class directories of images (or a tar/zip of them) to
 * sharded TFRecord Examples, the way Keras' image_dataset_from_directory
 * reads them, decoded and resized once instead of every epoch.
 *
 * Each image becomes {image: bytes, label: int64, height, width,
 * channels: int64, filename: bytes}; image holds the resized pixels as
 * uint8 HWC (--encoding raw), or re-encoded as JPEG or PNG. Files are
 * indexed, ordered, shuffled and split exactly as Keras does
 * (lib/data/dataset.h: numpy's RandomState(seed) shuffle), so
 * --seed S --validation-split F --subset training selects the files
 * Keras selects for seed=S, in its order. Differences from Keras:
 *
 *  - pixels are stored as uint8, rounded from the float32 result Keras
 *    computes (see lib/prep/resize.h), not as float32;
 *  - the pixels are TF's by default (decode_image's full libjpeg decode
 *    with its IFAST DCT and fancy upsampling, then tf.image.resize);
 *    --fast-decode lets JPEGs at least twice the target size decode at
 *    1/2, 1/4 or 1/8 scale through libjpeg's DCT scaling first: several
 *    times faster, close to a full decode plus an antialiased resize,
 *    but not TF's pixels (a few levels off on average after a large
 *    downscale);
 *  - a corrupt, truncated, empty or non-image file is reported with its
 *    path and skipped (Keras stops in the middle of an epoch);
 *    --strict makes it an error;
 *  - records are written once in the shuffled order; Keras reshuffles
 *    every epoch (pipe through tfk-shuffle).
 *
 * Decoding and resizing run on -j threads through tfk_lrun_run (ordered:
 * the output never depends on -j); each thread keeps its own decoder
 * scratch, so steady state allocates only the record itself.
 */
#include "prep/image.h"
#include "data/labelrun.h"
#include "prep/resize.h"
#include "data/shardw.h"
#include "example/example.h"
#include "example/schema.h"
#include "util/alloc.h"
#include "util/cli.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>	/* after stdio.h: it uses FILE */
#include <png.h>

static const char *size_arg = "256x256", *interp_arg = "bilinear";
static const char *color_arg = "rgb", *encoding_arg = "raw";
static long quality = 95;
static int antialias, crop_aspect, pad_aspect, strict, exact, fast;
static struct tfk_lrun_args la = TFK_LRUN_ARGS_DEFAULTS;
static struct tfk_conv conv = TFK_CONV_DEFAULTS;

static const struct tfk_opt opts[] = {
	TFK_OPT_STR(0, "image-size", &size_arg, "HxW",
		    "resize every image to H rows by W columns"),
	TFK_OPT_STR(0, "interpolation", &interp_arg, "METHOD",
		    "bilinear, nearest, area or bicubic (tf.image.resize)"),
	TFK_OPT_FLAG(0, "antialias", &antialias,
		     "antialiased downscaling (tf.image.resize antialias=True)"),
	TFK_OPT_FLAG(0, "crop-to-aspect-ratio", &crop_aspect,
		     "center-crop to the target aspect ratio before resizing"),
	TFK_OPT_FLAG(0, "pad-to-aspect-ratio", &pad_aspect,
		     "resize keeping the aspect ratio and pad with zeros "
		     "(tf.image.resize_with_pad)"),
	TFK_OPT_STR(0, "color-mode", &color_arg, "MODE",
		    "grayscale, rgb or rgba"),
	TFK_OPT_STR(0, "encoding", &encoding_arg, "ENC",
		    "raw (uint8 HWC pixels), jpeg or png"),
	TFK_OPT_LONG(0, "quality", &quality, "Q", "JPEG quality, 1 to 100"),
	TFK_OPT_FLAG(0, "fast-decode", &fast,
		     "decode large JPEGs at 1/2..1/8 size by DCT scaling: "
		     "faster, but not TF's pixels"),
	TFK_OPT_FLAG(0, "exact", &exact,
		     "TF's pixels, the default (kept for older scripts; "
		     "not with --fast-decode)"),
	TFK_OPT_FLAG(0, "strict", &strict,
		     "a file that does not decode is an error, not skipped"),
	TFK_LRUN_OPTS(la),
	TFK_CONV_OPTS(conv),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-images",
	"[options] DIR|ARCHIVE",
	"decode, resize and convert class directories of images to sharded "
	"TFRecord Examples",
	"tfk-images flower_photos.tgz --image-size 180x180 --validation-split "
	"0.2 --subset both --seed 123 -j 2 -o data/flowers",
};

enum { ENC_RAW, ENC_JPEG, ENC_PNG };

/* Settled once in main, read by every worker. */
static int out_h, out_w, channels, method, encoding;

/* Encoders ---------------------------------------------------------------- */

struct jerr {
	struct jpeg_error_mgr pub;
	jmp_buf jb;
	char msg[JMSG_LENGTH_MAX];
};

static void jerr_exit(j_common_ptr ci)
{
	struct jerr *e = (struct jerr *)ci->err;

	ci->err->format_message(ci, e->msg);
	longjmp(e->jb, 1);
}

/* JPEG of px (out_h x out_w x channels, 1 or 3), as TF's encode_jpeg
 * with quality Q and its default 4:2:0 chroma subsampling. */
static int encode_jpeg(const uint8_t *px, struct tfk_buf *out,
		       struct tfk_err *err)
{
	struct jpeg_compress_struct ci;
	struct jerr je;
	unsigned char *mem = NULL;
	unsigned long len = 0;
	int y;

	memset(&ci, 0, sizeof(ci));
	ci.err = jpeg_std_error(&je.pub);
	je.pub.error_exit = jerr_exit;
	if (setjmp(je.jb)) {
		jpeg_destroy_compress(&ci);
		free(mem);
		return tfk_errf(err, TFK_ENOMEM, "jpeg encoder: %s", je.msg);
	}
	jpeg_create_compress(&ci);
	jpeg_mem_dest(&ci, &mem, &len);
	ci.image_width = (JDIMENSION)out_w;
	ci.image_height = (JDIMENSION)out_h;
	ci.input_components = channels;
	ci.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
	jpeg_set_defaults(&ci);
	jpeg_set_quality(&ci, (int)quality, TRUE);
	jpeg_start_compress(&ci, TRUE);
	for (y = 0; y < out_h; y++) {
		JSAMPROW row = (JSAMPROW)(px + (size_t)y * out_w * channels);

		jpeg_write_scanlines(&ci, &row, 1);
	}
	jpeg_finish_compress(&ci);
	jpeg_destroy_compress(&ci);
	tfk_buf_add(out, mem, len);
	free(mem);
	return 0;
}

struct pngw {
	struct tfk_buf *out;
	char msg[256];
};

static void png_write_buf(png_structp png, png_bytep p, png_size_t n)
{
	struct pngw *w = png_get_io_ptr(png);

	tfk_buf_add(w->out, p, n);
}

static void png_flush_nop(png_structp png)
{
}

static void png_fail_w(png_structp png, png_const_charp msg)
{
	struct pngw *w = png_get_error_ptr(png);

	snprintf(w->msg, sizeof(w->msg), "%s", msg);
	png_longjmp(png, 1);
}

static void png_warn_w(png_structp png, png_const_charp msg)
{
}

/* PNG of px, 8-bit gray, RGB or RGBA, zlib's default level (TF's
 * encode_png compression=-1). */
static int encode_png(const uint8_t *px, struct tfk_buf *out,
		      struct tfk_err *err)
{
	static const int types[5] = { 0, PNG_COLOR_TYPE_GRAY, 0,
				      PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGBA };
	struct pngw w = { out, "" };
	png_structp png;
	png_infop info = NULL;
	int y;

	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &w, png_fail_w,
				      png_warn_w);
	if (!png || !(info = png_create_info_struct(png))) {
		png_destroy_write_struct(&png, NULL);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	if (setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		return tfk_errf(err, TFK_ENOMEM, "png encoder: %s", w.msg);
	}
	png_set_write_fn(png, &w, png_write_buf, png_flush_nop);
	png_set_IHDR(png, info, (png_uint_32)out_w, (png_uint_32)out_h, 8,
		     types[channels], PNG_INTERLACE_NONE,
		     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, info);
	for (y = 0; y < out_h; y++)
		png_write_row(png, (png_const_bytep)(px + (size_t)y * out_w *
						     channels));
	png_write_end(png, info);
	png_destroy_write_struct(&png, &info);
	return 0;
}

/* Per-thread scratch --------------------------------------------------- */

struct scratch {
	struct tfk_img img;
	struct tfk_example_builder b;
	struct tfk_buf enc;
	uint8_t *px;
	int64_t *khot;
};

static pthread_key_t scratch_key;

static void scratch_free(void *p)
{
	struct scratch *s = p;

	if (!s)
		return;
	tfk_img_release(&s->img);
	tfk_exb_release(&s->b);
	tfk_buf_release(&s->enc);
	tfk_free(s->px);
	tfk_free(s->khot);
	tfk_free(s);
}

static struct scratch *scratch_get(size_t n_classes)
{
	struct scratch *s = pthread_getspecific(scratch_key);

	if (s)
		return s;
	s = tfk_calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	tfk_img_init(&s->img);
	tfk_exb_init(&s->b);
	tfk_buf_init(&s->enc);
	s->px = tfk_malloc((size_t)out_h * out_w * channels);
	s->khot = tfk_calloc(n_classes ? n_classes : 1, sizeof(*s->khot));
	if (!s->px || !s->khot || pthread_setspecific(scratch_key, s)) {
		scratch_free(s);
		return NULL;
	}
	return s;
}

/* One image to one Example ------------------------------------------------ */

static int convert(const struct tfk_lrun *lr, const struct tfk_ds_item *it,
		   const uint8_t *data, size_t len, struct tfk_buf *rec,
		   struct tfk_err *err)
{
	struct scratch *s = scratch_get(lr->ds->n_classes);
	struct tfk_img_opts io = TFK_IMG_OPTS_DEFAULT;
	struct tfk_img_resize ro;
	const uint8_t *img, *p;
	size_t img_len, n;
	int64_t v;
	int rc;

	if (!s)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	io.channels = channels;
	memset(&ro, 0, sizeof(ro));
	ro.out_w = out_w;
	ro.out_h = out_h;
	ro.method = method;
	ro.antialias = antialias;
	ro.crop = crop_aspect;
	ro.pad = pad_aspect;
	ro.fast = fast;
	rc = tfk_img_decode_resize(&s->img, data, len, &io, &ro, s->px, err);
	if (rc)
		return rc;
	img = s->px;
	img_len = (size_t)out_h * out_w * channels;
	if (encoding != ENC_RAW) {
		tfk_buf_reset(&s->enc);
		rc = encoding == ENC_JPEG ? encode_jpeg(s->px, &s->enc, err) :
			encode_png(s->px, &s->enc, err);
		if (rc)
			return rc;
		if (!tfk_buf_ok(&s->enc))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		img = s->enc.data;
		img_len = s->enc.len;
	}
	tfk_exb_reset(&s->b);
	tfk_exb_add_bytes1(&s->b, "image", img, img_len);
	rc = tfk_lrun_add_label(&s->b, lr, it, s->khot, err);
	if (rc)
		return rc;
	v = out_h;
	tfk_exb_add_int64s(&s->b, "height", &v, 1);
	v = out_w;
	tfk_exb_add_int64s(&s->b, "width", &v, 1);
	v = channels;
	tfk_exb_add_int64s(&s->b, "channels", &v, 1);
	tfk_exb_add_bytes1(&s->b, "filename", it->path, strlen(it->path));
	rc = tfk_exb_finish(&s->b, &p, &n, err);
	if (!rc)
		tfk_buf_add(rec, p, n);
	return rc;
}

static int describe(const struct tfk_lrun *lr, struct tfk_schema *s)
{
	static const char *const ints[] = { "height", "width", "channels" };
	static const char *const encs[] = { "raw", "jpeg", "png" };
	struct tfk_schema_feat *f = tfk_schema_feature(s, "image");
	int64_t shape[3] = { out_h, out_w, channels };

	if (!f)
		return TFK_ENOMEM;
	f->kind = TFK_FEAT_BYTES;
	tfk_schema_set_shape(f, 3, shape);
	snprintf(f->dtype, sizeof(f->dtype), "uint8");
	snprintf(f->encoding, sizeof(f->encoding), "%s", encs[encoding]);
	if (encoding == ENC_RAW)
		snprintf(f->content, sizeof(f->content), "binary");
	if (tfk_lrun_describe_label(s, lr))
		return TFK_ENOMEM;
	for (size_t i = 0; i < 3; i++) {
		f = tfk_schema_feature(s, ints[i]);
		if (!f)
			return TFK_ENOMEM;
		f->kind = TFK_FEAT_INT64;
		tfk_schema_set_shape(f, 0, shape);
	}
	return tfk_lrun_describe_utf8(s, "filename");
}

static void say(const struct tfk_lrun *lr, const char *msg)
{
	tfk_cli_warn("%s", msg);
}

/* Options ---------------------------------------------------------------- */

static void parse_size(const char *s)
{
	char *end;
	long h, w;

	h = strtol(s, &end, 10);
	if (*end == 'x' || *end == 'X')
		w = strtol(end + 1, &end, 10);
	else
		w = h;
	if (*end || h < 1 || w < 1 || h > 65535 || w > 65535 || s[0] == '-')
		tfk_cli_usage_error("--image-size: expected HxW (e.g. 180x180) "
				    "or N, from 1 to 65535, not '%s'", s);
	out_h = (int)h;
	out_w = (int)w;
}

static void check_options(const struct tfk_shardw_opts *so)
{
	parse_size(size_arg);
	method = tfk_resize_method_parse(interp_arg);
	if (method < 0)
		tfk_cli_usage_error("--interpolation: expected bilinear, nearest, "
				    "area or bicubic, not '%s'", interp_arg);
	if (!strcmp(color_arg, "grayscale"))
		channels = 1;
	else if (!strcmp(color_arg, "rgb"))
		channels = 3;
	else if (!strcmp(color_arg, "rgba"))
		channels = 4;
	else
		tfk_cli_usage_error("--color-mode: expected grayscale, rgb or "
				    "rgba, not '%s'", color_arg);
	if (!strcmp(encoding_arg, "raw"))
		encoding = ENC_RAW;
	else if (!strcmp(encoding_arg, "jpeg"))
		encoding = ENC_JPEG;
	else if (!strcmp(encoding_arg, "png"))
		encoding = ENC_PNG;
	else
		tfk_cli_usage_error("--encoding: expected raw, jpeg or png, not "
				    "'%s'", encoding_arg);
	if (encoding == ENC_JPEG && channels == 4)
		tfk_cli_usage_error("--encoding jpeg holds no alpha: use "
				    "--color-mode rgb or grayscale, or png");
	if (crop_aspect && pad_aspect)
		tfk_cli_usage_error("--crop-to-aspect-ratio and "
				    "--pad-to-aspect-ratio exclude each other");
	if (fast && exact)
		tfk_cli_usage_error("--fast-decode and --exact exclude each "
				    "other");
	if (quality < 1 || quality > 100)
		tfk_cli_usage_error("--quality: expected 1 to 100, not %ld",
				    quality);
	tfk_lrun_check(&la, &conv, so);
}

int main(int argc, char **argv)
{
	struct tfk_shardw_opts so;
	struct tfk_lrun lr;
	struct tfk_err err;
	long shard_i, shard_n;
	int rc;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	tfk_conv_check(&conv, &so, &shard_i, &shard_n);
	check_options(&so);
	if (argc == 0)
		tfk_cli_usage_error("a DIR or ARCHIVE is required");
	if (argc > 1)
		tfk_cli_usage_error("one DIR or ARCHIVE at a time, not %d", argc);

	memset(&lr, 0, sizeof(lr));
	lr.exts = tfk_ds_image_exts;
	lr.none_found = "no images found (.jpeg, .jpg, .png, .bmp, .gif)";
	lr.stop_on_bad = strict;
	lr.convert = convert;
	lr.describe = describe;
	lr.say = say;
	rc = tfk_lrun_open(&lr, argv[0], &la, &conv, shard_i, shard_n, &err);
	if (!rc && pthread_key_create(&scratch_key, scratch_free))
		rc = tfk_errf(&err, TFK_ENOMEM, "out of memory");
	if (!rc) {
		rc = tfk_lrun_run(&lr, &so, &err);
		/* the calling thread converts too */
		scratch_free(pthread_getspecific(scratch_key));
		pthread_setspecific(scratch_key, NULL);
	}
	tfk_lrun_close(&lr);
	return rc ? tfk_cli_fail(&err) : 0;
}
