/*
 * tfk-plot images: a grid of the first images of TFRecord files, each
 * with its label under it, as the Keras tutorials show a first batch
 * (plt.imshow in a 5 x 5 grid, class_names[label] as the caption).
 *
 * The image feature holds encoded bytes (JPEG, PNG, GIF, BMP: decoded
 * by lib/prep/image) or raw uint8 pixels, whose shape comes from the
 * schema (its "shape" [H, W, C]), else from height/width/channels
 * features of the record, else a square one-channel image. Class names
 * come from the schema's label_names: --schema FILE, or the sidecar
 * tfk-idx, tfk-images and tfk-csv write next to their shards
 * (PREFIX.schema.json for PREFIX-NNNNN-of-NNNNN.tfrecord) when there is
 * one. Raw pixels are drawn as stored (no rescaling); each image is
 * enlarged by --scale (default: to about 84 pixels) by pixel repetition.
 */
#include "sub.h"

#include "example/example.h"
#include "example/schema.h"
#include "io/record.h"
#include "prep/image.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *feature = "image", *label = "label", *schema_path;
static const char *out_path = "-";
static long count = 25, cols, scale;
static int ascii;

static const struct tfk_opt opts[] = {
	TFK_OPT_STR(0, "feature", &feature, "NAME",
		    "the image feature (default: image)"),
	TFK_OPT_STR(0, "label", &label, "NAME",
		    "the label feature (default: label; \"\" for none)"),
	TFK_OPT_LONG('n', "count", &count, "N",
		     "images to draw (default 25)"),
	TFK_OPT_LONG(0, "cols", &cols, "N",
		     "images per row (default: a square grid)"),
	TFK_OPT_LONG(0, "scale", &scale, "N",
		     "draw each pixel N x N (default: images about 84 "
		     "pixels wide)"),
	TFK_OPT_STR(0, "schema", &schema_path, "FILE",
		    "class names and raw image shape from FILE (default: "
		    "the records' PREFIX.schema.json, if any)"),
	TFK_OPT_STR('o', "output", &out_path, "FILE",
		    "write the PNG (or text) to FILE (default: stdout)"),
	TFK_OPT_FLAG(0, "ascii", &ascii, "draw as text for a terminal"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-plot images",
	"[options] [RECORDS...]",
	"draw a grid of images from TFRecords, each with its label",
	"tfk-plot images --feature image --label label "
	"test-00000-of-00001.tfrecord -o grid.png",
};

struct cell {
	uint8_t *px;
	int w, h, c;
	char label[64];
};

static struct cell *cells;
static long n_cells;
static struct tfk_schema schema;
static int have_schema;
static const struct tfk_schema_feat *img_sf, *lab_sf;

/* PREFIX.schema.json for PREFIX-NNNNN-of-NNNNN.tfrecord or
 * PREFIX.tfrecord; NULL when the name has neither form. */
static char *sidecar(const char *path)
{
	size_t n = strlen(path), k;
	char *s;

	if (n < 9 || strcmp(path + n - 9, ".tfrecord"))
		return NULL;
	n -= 9;
	k = n;
	if (n > 15 && path[n - 15] == '-' && !strncmp(path + n - 9, "-of-", 4))
		k = n - 15;
	if (!(s = malloc(k + 13)))
		return NULL;
	memcpy(s, path, k);
	memcpy(s + k, ".schema.json", 13);
	return s;
}

static int load_schema(const char *first)
{
	struct tfk_err err;
	char *guess = NULL;
	const char *p = schema_path;
	struct stat st;

	if (!p && first && (guess = sidecar(first)) && !stat(guess, &st))
		p = guess;
	if (!p) {
		free(guess);
		return 0;
	}
	if (tfk_schema_read(&schema, p, &err)) {
		free(guess);
		return tfk_cli_fail(&err);
	}
	have_schema = 1;
	img_sf = tfk_schema_find(&schema, feature);
	lab_sf = *label ? tfk_schema_find(&schema, label) : NULL;
	free(guess);
	return 0;
}

static int64_t int_feature(const struct tfk_example *ex, const char *name)
{
	const struct tfk_feat *f = tfk_example_find(ex, name);
	int64_t v;

	if (!f || tfk_feat_int64s(f, &v, 1) != 1)
		return -1;
	return v;
}

/* Decode one record's image into c; 0, or 1 after a reported error. */
static int take_image(const char *path, uint64_t idx,
		      const struct tfk_example *ex, struct cell *c)
{
	const struct tfk_feat *f = tfk_example_find(ex, feature);
	const uint8_t *p;
	size_t n, it = 0;
	struct tfk_err err;

	if (!f || f->kind != TFK_FEAT_BYTES || !tfk_feat_bytes_next(f, &it, &p,
								   &n)) {
		tfk_cli_warn("%s: record %" PRIu64 ": no bytes feature \"%s\"",
			     path, idx, feature);
		return 1;
	}
	if (tfk_img_sniff(p, n) != TFK_IMG_UNKNOWN) {
		struct tfk_img img;

		tfk_img_init(&img);
		if (tfk_img_decode(&img, p, n, NULL, &err)) {
			tfk_err_prefix(&err, "%s: record %" PRIu64 ": %s",
				       path, idx, feature);
			tfk_img_release(&img);
			return tfk_cli_fail(&err);
		}
		c->w = img.width;
		c->h = img.height;
		c->c = img.channels;
		n = (size_t)c->w * (size_t)c->h * (size_t)c->c;
		if ((c->c != 1 && c->c != 3 && c->c != 4) ||
		    !(c->px = malloc(n ? n : 1))) {
			tfk_cli_warn("%s: record %" PRIu64 ": %s: %s", path,
				     idx, feature, c->c == 2 ? "gray+alpha "
				     "images are not drawn" : "out of memory");
			tfk_img_release(&img);
			return 1;
		}
		memcpy(c->px, img.data, n);
		tfk_img_release(&img);
		return 0;
	}
	if (img_sf && img_sf->rank == 3 && img_sf->shape[0] > 0 &&
	    img_sf->shape[1] > 0) {
		c->h = (int)img_sf->shape[0];
		c->w = (int)img_sf->shape[1];
		c->c = (int)img_sf->shape[2];
	} else if (int_feature(ex, "height") > 0 &&
		   int_feature(ex, "width") > 0) {
		c->h = (int)int_feature(ex, "height");
		c->w = (int)int_feature(ex, "width");
		c->c = int_feature(ex, "channels") > 0 ?
			(int)int_feature(ex, "channels") : 1;
	} else {
		c->h = c->w = (int)lround(sqrt((double)n));
		c->c = 1;
	}
	if ((c->c != 1 && c->c != 3 && c->c != 4) || c->w > 4096 ||
	    c->h > 4096 || (size_t)c->w * (size_t)c->h * (size_t)c->c != n) {
		tfk_cli_warn("%s: record %" PRIu64 ": %s: %zu raw bytes are "
			     "not a %dx%dx%d image (give --schema)", path,
			     idx, feature, n, c->h, c->w, c->c);
		return 1;
	}
	if (!(c->px = malloc(n))) {
		tfk_cli_warn("out of memory");
		return 1;
	}
	memcpy(c->px, p, n);
	return 0;
}

static void take_label(const struct tfk_example *ex, struct cell *c)
{
	const struct tfk_feat *f = *label ? tfk_example_find(ex, label) : NULL;
	const uint8_t *p;
	size_t n, it = 0;
	int64_t v;

	c->label[0] = 0;
	if (!f)
		return;
	if (f->kind == TFK_FEAT_INT64 && tfk_feat_int64s(f, &v, 1) >= 1) {
		if (lab_sf && v >= 0 && (uint64_t)v < lab_sf->n_label_names)
			snprintf(c->label, sizeof(c->label), "%s",
				 lab_sf->label_names[v]);
		else
			snprintf(c->label, sizeof(c->label), "%" PRId64, v);
	} else if (f->kind == TFK_FEAT_BYTES &&
		   tfk_feat_bytes_next(f, &it, &p, &n)) {
		snprintf(c->label, sizeof(c->label), "%.*s",
			 (int)(n < 63 ? n : 63), (const char *)p);
	} else if (f->kind == TFK_FEAT_FLOAT) {
		float x;

		if (tfk_feat_floats(f, &x, 1) >= 1)
			snprintf(c->label, sizeof(c->label), "%g", x);
	}
}

static int read_records(const char *path)
{
	struct tfk_rec_reader *r;
	struct tfk_example ex;
	struct tfk_rec rec;
	struct tfk_err err;
	int rc, bad = 0;

	if (tfk_rec_open(&r, path, TFK_COMP_AUTO, 0, &err))
		return tfk_cli_fail(&err);
	tfk_example_init(&ex);
	while (n_cells < count && (rc = tfk_rec_next(r, &rec, &err)) > 0) {
		struct cell *c = &cells[n_cells];

		if (tfk_example_parse(&ex, rec.data, rec.len, &err)) {
			tfk_err_prefix(&err, "%s: record %" PRIu64, path,
				       rec.index);
			bad = tfk_cli_fail(&err);
			break;
		}
		if ((bad = take_image(path, rec.index, &ex, c)))
			break;
		take_label(&ex, c);
		n_cells++;
	}
	if (!bad && n_cells < count && rc < 0)
		bad = tfk_cli_fail(&err);
	tfk_example_release(&ex);
	tfk_rec_close(r);
	return bad;
}

/* The gray level of pixel (x, y). */
static int gray(const struct cell *c, int x, int y)
{
	const uint8_t *p = c->px + ((size_t)y * (size_t)c->w + (size_t)x) *
		(size_t)c->c;

	return c->c == 1 ? p[0] : (p[0] * 299 + p[1] * 587 + p[2] * 114) / 1000;
}

static int draw_ascii(void)
{
	static const char ramp[] = " .:-=+*#%@";
	struct tfk_buf b;
	long i;
	int x, y, rc;

	tfk_buf_init(&b);
	for (i = 0; i < n_cells; i++) {
		const struct cell *c = &cells[i];
		int step = c->w > 64 ? (c->w + 63) / 64 : 1;

		tfk_buf_addf(&b, "%s[%ld] %s\n", i ? "\n" : "", i, c->label);
		/* a character is about twice as tall as wide */
		for (y = 0; y < c->h; y += 2 * step) {
			for (x = 0; x < c->w; x += step)
				tfk_buf_addc(&b, ramp[gray(c, x, y) * 10 /
						      256]);
			tfk_buf_addc(&b, '\n');
		}
	}
	rc = plot_write_text(&b, out_path);
	tfk_buf_release(&b);
	return rc;
}

static int draw_png(void)
{
	struct tfk_raster r;
	struct tfk_err err;
	int cw = 0, ch = 0, s, nc, nr, i, rc;

	for (i = 0; i < n_cells; i++) {
		cw = cells[i].w > cw ? cells[i].w : cw;
		ch = cells[i].h > ch ? cells[i].h : ch;
	}
	s = scale ? (int)scale : cw < 84 ? (84 + cw - 1) / cw : 1;
	nc = cols ? (int)cols : (int)ceil(sqrt((double)n_cells));
	if (nc > n_cells)
		nc = (int)n_cells;
	nr = (int)((n_cells + nc - 1) / nc);
	cw = cw * s + 16;
	ch = ch * s + 8 + 18;
	if (cw < 80)
		cw = 80;
	if ((rc = tfk_raster_init(&r, nc * cw, nr * ch, 0xffffff, &err)))
		return tfk_cli_fail(&err);
	for (i = 0; i < n_cells; i++) {
		const struct cell *c = &cells[i];
		int x = (i % nc) * cw, y = (i / nc) * ch;
		int iw = c->w * s, tw = tfk_raster_text_width(c->label, 1);
		size_t np = (size_t)c->w * (size_t)c->h, k;
		uint8_t *rgb = NULL;

		/* RGBA: its colour channels, the alpha left out */
		if (c->c == 4 && (rgb = malloc(np * 3)))
			for (k = 0; k < np; k++)
				memcpy(rgb + 3 * k, c->px + 4 * k, 3);
		tfk_raster_paste(&r, x + (cw - iw) / 2, y + 8,
				 rgb ? rgb : c->px, c->w, c->h,
				 c->c == 4 ? 3 : c->c, s);
		free(rgb);
		tfk_raster_text(&r, x + (cw - tw) / 2, y + 8 + c->h * s + 5,
				c->label, 0x222222, 1, 0);
	}
	rc = plot_write_png(&r, out_path);
	tfk_raster_release(&r);
	return rc;
}

static int images_main(int argc, char **argv)
{
	int i, rc = 0;
	long k;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (count < 1 || count > 10000)
		tfk_cli_usage_error("--count %ld: want 1..10000", count);
	if (cols < 0 || scale < 0 || scale > 64)
		tfk_cli_usage_error("--cols and --scale want positive numbers "
				    "(--scale at most 64)");
	if (!(cells = calloc((size_t)count, sizeof(*cells)))) {
		tfk_cli_warn("out of memory");
		return 1;
	}
	tfk_schema_init(&schema);
	if (load_schema(argc ? argv[0] : NULL))
		return 1;
	if (!argc)
		rc = read_records("-");
	for (i = 0; i < argc && !rc && n_cells < count; i++)
		rc = read_records(argv[i]);
	if (!rc && !n_cells) {
		tfk_cli_warn("no records to draw");
		rc = 1;
	}
	if (!rc)
		rc = ascii ? draw_ascii() : draw_png();
	for (k = 0; k < n_cells; k++)
		free(cells[k].px);
	free(cells);
	tfk_schema_release(&schema);
	return rc;
}

const struct tfk_subcmd plot_images_sub = {
	"images", "a grid of images from TFRecords with their labels",
	images_main
};
