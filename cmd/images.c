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
 *    computes (see lib/data/resize.h), not as float32;
 *  - JPEGs at least twice the target size are decoded at 1/2, 1/4 or
 *    1/8 scale by libjpeg's DCT scaling before the resize (--exact turns
 *    this off for TF's pixels): several times faster, and close to what
 *    the full decode plus an antialiased resize gives;
 *  - a corrupt, truncated, empty or non-image file is reported with its
 *    path and skipped (Keras stops in the middle of an epoch);
 *    --strict makes it an error;
 *  - records are written once in the shuffled order; Keras reshuffles
 *    every epoch (pipe through tfk-shuffle).
 *
 * Decoding and resizing run on -j threads through tfk_ds_run (ordered:
 * the output never depends on -j); each thread keeps its own decoder
 * scratch, so steady state allocates only the record itself.
 */
#include "data/dataset.h"
#include "data/image.h"
#include "data/resize.h"
#include "data/shardw.h"
#include "example/example.h"
#include "example/schema.h"
#include "util/alloc.h"
#include "util/cli.h"
#include "util/progress.h"

#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>	/* after stdio.h: it uses FILE */
#include <png.h>

static const char *labels_arg = "inferred", *label_map, *subset_arg;
static const char *size_arg = "256x256", *interp_arg = "bilinear";
static const char *color_arg = "rgb", *encoding_arg = "raw";
static double val_split;
static long quality = 95;
static int no_shuffle, follow_links, antialias, crop_aspect, strict, exact;
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
	TFK_OPT_STR(0, "color-mode", &color_arg, "MODE",
		    "grayscale, rgb or rgba"),
	TFK_OPT_STR(0, "encoding", &encoding_arg, "ENC",
		    "raw (uint8 HWC pixels), jpeg or png"),
	TFK_OPT_LONG(0, "quality", &quality, "Q", "JPEG quality, 1 to 100"),
	TFK_OPT_FLAG(0, "exact", &exact,
		     "decode JPEGs at full size (TF's pixels; slower)"),
	TFK_OPT_FLAG(0, "strict", &strict,
		     "a file that does not decode is an error, not skipped"),
	TFK_OPT_STR(0, "labels", &labels_arg, "MODE",
		    "inferred (from subdirectories), none, or a FILE of class "
		    "names, one per line, in index order"),
	TFK_OPT_STR(0, "label-map", &label_map, "CSV",
		    "multi-label: lines 'filename,name;name' (k-hot label)"),
	TFK_OPT_DOUBLE(0, "validation-split", &val_split, "F",
		       "fraction of files held out for validation (0 < F < 1)"),
	TFK_OPT_STR(0, "subset", &subset_arg, "NAME",
		    "training, validation or both (PREFIX-training, "
		    "PREFIX-validation)"),
	TFK_OPT_FLAG(0, "no-shuffle", &no_shuffle,
		     "keep the sorted file order (Keras shuffle=False)"),
	TFK_OPT_FLAG(0, "follow-links", &follow_links,
		     "descend into symbolic links to directories"),
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

/* The run ---------------------------------------------------------------- */

struct out {
	const char *what;
	char *prefix;
	struct tfk_shardw *w;
	struct tfk_schema schema;
	uint64_t written, skipped;
	int schema_written;	/* this run wrote PREFIX.schema.json */
};

struct run {
	struct tfk_dataset *ds;
	struct out out[2];
	size_t n_first;
	struct tfk_example ex;
	struct tfk_progress prog;
	uint64_t done;
	struct tfk_err err;
	int want_schema;
};

static int convert(void *ctx, const struct tfk_ds_item *it,
		   const uint8_t *data, size_t len, struct tfk_buf *rec,
		   struct tfk_err *err)
{
	struct run *r = ctx;
	struct scratch *s = scratch_get(r->ds->n_classes);
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
	ro.fast = !exact;
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
	if (r->ds->mode == TFK_DS_INFERRED) {
		v = it->label;
		tfk_exb_add_int64s(&s->b, "label", &v, 1);
	} else if (r->ds->mode == TFK_DS_MAP) {
		memset(s->khot, 0, r->ds->n_classes * sizeof(*s->khot));
		for (size_t i = 0; i < it->n_labels; i++)
			s->khot[it->labels[i]] = 1;
		tfk_exb_add_int64s(&s->b, "label", s->khot, r->ds->n_classes);
	}
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

static int emit(void *ctx, size_t k, const struct tfk_ds_item *it, int status,
		const uint8_t *rec, size_t len, const struct tfk_err *err)
{
	struct run *r = ctx;
	struct out *o = &r->out[k < r->n_first ? 0 : 1];
	int rc;

	tfk_progress_update(&r->prog, ++r->done);
	if (status) {
		if (strict || status == TFK_ENOMEM) {
			r->err = *err;
			return 1;
		}
		tfk_cli_warn("%s: skipped", err->msg);
		o->skipped++;
		return 0;
	}
	rc = tfk_shardw_write(o->w, rec, len, &r->err);
	if (!rc && r->want_schema) {
		rc = tfk_example_parse(&r->ex, rec, len, &r->err);
		if (!rc)
			rc = tfk_schema_observe(&o->schema, &r->ex, &r->err);
	}
	if (rc)
		return 1;
	o->written++;
	return 0;
}

static void on_warn(void *ctx, const char *msg)
{
	tfk_cli_warn("%s", msg);
}

static int describe(struct tfk_schema *s, const struct tfk_dataset *ds)
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
	if (ds->mode != TFK_DS_NONE) {
		f = tfk_schema_feature(s, "label");
		if (!f)
			return TFK_ENOMEM;
		f->kind = TFK_FEAT_INT64;
		shape[0] = (int64_t)ds->n_classes;
		tfk_schema_set_shape(f, ds->mode == TFK_DS_MAP, shape);
		if (tfk_schema_set_labels(f, (const char *const *)ds->classes,
					  ds->n_classes))
			return TFK_ENOMEM;
	}
	for (size_t i = 0; i < 3; i++) {
		f = tfk_schema_feature(s, ints[i]);
		if (!f)
			return TFK_ENOMEM;
		f->kind = TFK_FEAT_INT64;
		tfk_schema_set_shape(f, 0, shape);
	}
	f = tfk_schema_feature(s, "filename");
	if (!f)
		return TFK_ENOMEM;
	f->kind = TFK_FEAT_BYTES;
	tfk_schema_set_shape(f, 0, shape);
	snprintf(f->encoding, sizeof(f->encoding), "utf-8");
	return 0;
}

static char *join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 1;
	char *s = tfk_malloc(n);

	if (!s)
		tfk_cli_usage_error("out of memory");
	snprintf(s, n, "%s%s", a, b);
	return s;
}

/* Write the schemas, then close every output; or discard them all. */
static int finish(struct run *r, int n_out, int rc, double t0)
{
	int i;

	for (i = 0; i < n_out && !rc; i++) {
		char *path;

		if (!r->out[i].prefix)
			continue;
		path = join(r->out[i].prefix, ".schema.json");
		rc = describe(&r->out[i].schema, r->ds);
		if (rc)
			tfk_errf(&r->err, rc, "out of memory");
		else
			rc = tfk_schema_write(&r->out[i].schema, path, &r->err);
		r->out[i].schema_written = !rc;
		tfk_free(path);
	}
	for (i = 0; i < n_out; i++) {
		struct out *o = &r->out[i];
		uint64_t bytes;
		long shards;

		if (rc) {
			tfk_shardw_discard(o->w);
			o->w = NULL;
			continue;
		}
		bytes = tfk_shardw_bytes(o->w);
		shards = tfk_shardw_shards(o->w);
		rc = tfk_shardw_close(o->w, &r->err);
		o->w = NULL;
		if (!rc && !conv.quiet)
			fprintf(stderr, "%s: wrote %" PRIu64 " %s%srecords (%"
				PRIu64 " skipped), %" PRIu64 " bytes, %ld "
				"shard%s%s%s in %.2f s\n", tfk_cli_name(),
				o->written, o->what ? o->what : "",
				o->what ? " " : "", o->skipped, bytes, shards,
				shards == 1 ? "" : "s", o->prefix ? " to " : "",
				o->prefix ? o->prefix : "", tfk_now() - t0);
	}
	for (i = 0; rc && i < n_out; i++) {
		if (r->out[i].schema_written) {
			char *path = join(r->out[i].prefix, ".schema.json");

			remove(path);
			tfk_free(path);
		}
	}
	return rc;
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

static int parse_subset(const char *s)
{
	if (!s)
		return TFK_DS_ALL;
	if (!strcmp(s, "training"))
		return TFK_DS_TRAINING;
	if (!strcmp(s, "validation"))
		return TFK_DS_VALIDATION;
	if (!strcmp(s, "both"))
		return TFK_DS_BOTH;
	tfk_cli_usage_error("--subset: expected training, validation or "
			    "both, not '%s'", s);
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
	if (quality < 1 || quality > 100)
		tfk_cli_usage_error("--quality: expected 1 to 100, not %ld",
				    quality);
	if (conv.seed < 0 || conv.seed > 4294967295L)
		tfk_cli_usage_error("--seed: expected 0 to 4294967295 (numpy's "
				    "range), not %ld", conv.seed);
	if ((val_split != 0) != (subset_arg != NULL))
		tfk_cli_usage_error("--validation-split and --subset go together");
	if (val_split && !(val_split > 0 && val_split < 1))
		tfk_cli_usage_error("--validation-split: expected a fraction "
				    "between 0 and 1, not %g", val_split);
	parse_subset(subset_arg);
	if (subset_arg && !strcmp(subset_arg, "both") && !so->prefix)
		tfk_cli_usage_error("--subset both writes two outputs: it needs "
				    "-o PREFIX");
	if (label_map && !strcmp(labels_arg, "none"))
		tfk_cli_usage_error("--label-map gives labels: it cannot be "
				    "used with --labels none");
}

int main(int argc, char **argv)
{
	struct tfk_shardw_opts so;
	struct tfk_ds_opts dopt;
	struct tfk_ds_sink sink;
	struct run r;
	size_t *sel = NULL, n_sel = 0, i;
	long shard_i, shard_n;
	double t0 = tfk_now();
	int subset, n_out = 1, rc;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	tfk_conv_check(&conv, &so, &shard_i, &shard_n);
	check_options(&so);
	if (argc == 0)
		tfk_cli_usage_error("a DIR or ARCHIVE is required");
	if (argc > 1)
		tfk_cli_usage_error("one DIR or ARCHIVE at a time, not %d", argc);
	subset = parse_subset(subset_arg);

	memset(&r, 0, sizeof(r));
	memset(&dopt, 0, sizeof(dopt));
	dopt.exts = tfk_ds_image_exts;
	dopt.follow_links = follow_links;
	dopt.warn = on_warn;
	dopt.label_map = label_map;
	dopt.mode = label_map ? TFK_DS_MAP : !strcmp(labels_arg, "none") ?
		TFK_DS_NONE : TFK_DS_INFERRED;
	if (strcmp(labels_arg, "inferred") && strcmp(labels_arg, "none"))
		dopt.class_file = labels_arg;
	if (tfk_ds_open(&r.ds, argv[0], &dopt, &r.err))
		return tfk_cli_fail(&r.err);
	if (r.ds->n_items == 0) {
		tfk_errf(&r.err, TFK_ENOTFOUND, "%s: no images found (.jpeg, "
			 ".jpg, .png, .bmp, .gif)%s", argv[0],
			 dopt.mode == TFK_DS_INFERRED ?
			 " in class subdirectories" : "");
		tfk_ds_close(r.ds);
		return tfk_cli_fail(&r.err);
	}
	if (!conv.quiet) {
		if (dopt.mode == TFK_DS_NONE)
			tfk_cli_warn("found %zu files", r.ds->n_items);
		else
			tfk_cli_warn("found %zu files belonging to %zu classes",
				     r.ds->n_items, r.ds->n_classes);
		if (r.ds->n_warnings)
			tfk_cli_warn("%" PRIu64 " entr%s passed over while "
				     "indexing (see above)", r.ds->n_warnings,
				     r.ds->n_warnings == 1 ? "y" : "ies");
		if (r.ds->n_unmapped || r.ds->n_missing)
			tfk_cli_warn("%" PRIu64 " files not in %s left out, %"
				     PRIu64 " of its lines name no file found",
				     r.ds->n_unmapped, label_map,
				     r.ds->n_missing);
	}
	rc = no_shuffle ? 0 : tfk_ds_shuffle(r.ds, (uint32_t)conv.seed, &r.err);
	if (!rc)
		rc = tfk_ds_select(r.ds, subset, val_split, shard_i, shard_n,
				   &sel, &n_sel, &r.n_first, &r.err);
	if (rc) {
		tfk_ds_close(r.ds);
		return tfk_cli_fail(&r.err);
	}

	r.want_schema = so.prefix != NULL;
	if (subset == TFK_DS_BOTH) {
		n_out = 2;
		r.out[0].what = "training";
		r.out[1].what = "validation";
		r.out[0].prefix = join(so.prefix, "-training");
		r.out[1].prefix = join(so.prefix, "-validation");
	} else if (so.prefix) {
		r.out[0].prefix = join(so.prefix, "");
	}
	for (i = 0; i < 2; i++)
		tfk_schema_init(&r.out[i].schema);
	for (i = 0; i < (size_t)n_out && !rc; i++) {
		struct tfk_shardw_opts o = so;

		o.prefix = r.out[i].prefix;
		rc = tfk_shardw_open(&r.out[i].w, &o, &r.err);
	}
	if (!rc && pthread_key_create(&scratch_key, scratch_free))
		rc = tfk_errf(&r.err, TFK_ENOMEM, "out of memory");
	if (!rc) {
		tfk_example_init(&r.ex);
		tfk_progress_init(&r.prog, tfk_progress_wanted(conv.progress,
							       conv.quiet),
				  "files", n_sel);
		memset(&sink, 0, sizeof(sink));
		sink.convert = convert;
		sink.emit = emit;
		sink.ctx = &r;
		sink.threads = (int)conv.jobs;
		rc = tfk_ds_run(r.ds, sel, n_sel, &sink, &r.err);
		tfk_progress_release(&r.prog);
		tfk_example_release(&r.ex);
		scratch_free(pthread_getspecific(scratch_key));
		pthread_setspecific(scratch_key, NULL);
	}
	rc = finish(&r, n_out, rc, t0);
	for (i = 0; i < 2; i++) {
		tfk_schema_release(&r.out[i].schema);
		tfk_free(r.out[i].prefix);
	}
	tfk_free(sel);
	tfk_ds_close(r.ds);
	return rc ? tfk_cli_fail(&r.err) : 0;
}
