/*
 * tfk-plot confusion: the confusion matrix of tfk-predict's output, as
 * tf.math.confusion_matrix counts it (rows the true labels, columns the
 * predictions) and the Keras tutorials draw it: cells shaded by the
 * share of their row, the count written in each.
 *
 * Input is tfk-predict's default output (TFRecords of tf.Example with
 * one feature per signature output, and the true label copied by
 * --keep label). The prediction is the argmax of a float output with
 * several values (class scores or logits), a float output with one
 * value thresholded at 0.5 (a sigmoid), or an int64 output taken as the
 * class. --pred names the output; by default it is the one feature
 * besides the label. Class names come from --schema (the label's
 * label_names; tfk-predict writes no sidecar). Shading by row share,
 * not count, so that a rare class's cells are as readable as a common
 * one's and a perfect prediction is a dark diagonal.
 */
#include "sub.h"

#include "example/example.h"
#include "example/schema.h"
#include "io/record.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CLASSES 256

static const char *label = "label", *pred, *schema_path;
static const char *out_path = "-";
static int ascii;

static const struct tfk_opt opts[] = {
	TFK_OPT_STR(0, "label", &label, "NAME",
		    "the true label feature (default: label)"),
	TFK_OPT_STR(0, "pred", &pred, "NAME", "the prediction feature "
		    "(default: the one feature besides the label)"),
	TFK_OPT_STR(0, "schema", &schema_path, "FILE",
		    "class names from FILE's label_names of the label"),
	TFK_OPT_STR('o', "output", &out_path, "FILE",
		    "write the PNG (or text) to FILE (default: stdout)"),
	TFK_OPT_FLAG(0, "ascii", &ascii, "print the matrix as a table"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-plot confusion",
	"[options] [RECORDS...]",
	"draw the confusion matrix of tfk-predict's output",
	"tfk-predict --dir model --keep label test.tfrecord | "
	"tfk-plot confusion -o confusion.png",
};

static uint64_t m[MAX_CLASSES][MAX_CLASSES];
static int n_classes;
static uint64_t n_rec;
static char **names;
static size_t n_names;

static int class_of(const char *path, uint64_t idx, const struct tfk_feat *f,
		    const char *what, int *out)
{
	float buf[MAX_CLASSES * 4];
	int64_t v;
	long n, i, best = 0;

	if (f->kind == TFK_FEAT_INT64 && tfk_feat_int64s(f, &v, 1) == 1) {
		if (v < 0 || v >= MAX_CLASSES)
			goto range;
		*out = (int)v;
		return 0;
	}
	if (f->kind != TFK_FEAT_FLOAT)
		goto kind;
	n = tfk_feat_floats(f, buf, sizeof(buf) / sizeof(buf[0]));
	if (n < 1 || (size_t)n > sizeof(buf) / sizeof(buf[0]))
		goto kind;
	if (n == 1 && !strcmp(what, "prediction")) {
		*out = buf[0] >= 0.5f;
		return 0;
	}
	if (n == 1) {
		if (!(buf[0] >= 0 && buf[0] < MAX_CLASSES))
			goto range;
		*out = (int)lroundf(buf[0]);
		return 0;
	}
	for (i = 1; i < n; i++)
		if (buf[i] > buf[best])
			best = i;
	if (best >= MAX_CLASSES)
		goto range;
	*out = (int)best;
	return 0;
kind:
	tfk_cli_warn("%s: record %" PRIu64 ": %s \"%.*s\": want one int64, "
		     "or floats (at most %d)", path, idx, what,
		     (int)f->name_len, f->name, MAX_CLASSES * 4);
	return 1;
range:
	tfk_cli_warn("%s: record %" PRIu64 ": %s \"%.*s\": a class outside "
		     "0..%d", path, idx, what, (int)f->name_len, f->name,
		     MAX_CLASSES - 1);
	return 1;
}

static const struct tfk_feat *find_pred(const char *path, uint64_t idx,
					const struct tfk_example *ex)
{
	const struct tfk_feat *f = NULL;
	size_t i, n = 0;

	if (pred) {
		f = tfk_example_find(ex, pred);
		if (!f)
			tfk_cli_warn("%s: record %" PRIu64 ": no feature "
				     "\"%s\"", path, idx, pred);
		return f;
	}
	for (i = 0; i < ex->n_feat; i++)
		if (ex->feat[i].name_len != strlen(label) ||
		    memcmp(ex->feat[i].name, label, ex->feat[i].name_len)) {
			f = &ex->feat[i];
			n++;
		}
	if (n != 1) {
		tfk_cli_warn("%s: record %" PRIu64 ": %zu features besides "
			     "\"%s\": name the prediction with --pred", path,
			     idx, n, label);
		return NULL;
	}
	return f;
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
	while ((rc = tfk_rec_next(r, &rec, &err)) > 0) {
		const struct tfk_feat *lf, *pf;
		int t, p;

		if (tfk_example_parse(&ex, rec.data, rec.len, &err)) {
			tfk_err_prefix(&err, "%s: record %" PRIu64, path,
				       rec.index);
			bad = tfk_cli_fail(&err);
			break;
		}
		if (!(lf = tfk_example_find(&ex, label))) {
			tfk_cli_warn("%s: record %" PRIu64 ": no label \"%s\" "
				     "(tfk-predict --keep %s)", path, rec.index,
				     label, label);
			bad = 1;
			break;
		}
		if (!(pf = find_pred(path, rec.index, &ex)) ||
		    class_of(path, rec.index, lf, "label", &t) ||
		    class_of(path, rec.index, pf, "prediction", &p)) {
			bad = 1;
			break;
		}
		m[t][p]++;
		n_rec++;
		if (t >= n_classes)
			n_classes = t + 1;
		if (p >= n_classes)
			n_classes = p + 1;
	}
	if (!bad && rc < 0)
		bad = tfk_cli_fail(&err);
	tfk_example_release(&ex);
	tfk_rec_close(r);
	return bad;
}

static void class_name(char *s, size_t n, int k)
{
	if ((size_t)k < n_names && names[k])
		snprintf(s, n, "%s", names[k]);
	else
		snprintf(s, n, "%d", k);
}

static uint64_t row_sum(int t)
{
	uint64_t s = 0;
	int p;

	for (p = 0; p < n_classes; p++)
		s += m[t][p];
	return s;
}

static double accuracy(void)
{
	uint64_t ok = 0;
	int k;

	for (k = 0; k < n_classes; k++)
		ok += m[k][k];
	return n_rec ? (double)ok / (double)n_rec : 0;
}

static int draw_ascii(void)
{
	struct tfk_buf b;
	char s[64];
	int t, p, w = 5, rc;

	tfk_buf_init(&b);
	for (t = 0; t < n_classes; t++) {
		class_name(s, sizeof(s), t);
		if ((int)strlen(s) + 1 > w)
			w = (int)strlen(s) + 1;
	}
	tfk_buf_addf(&b, "%-*s", w, "true\\pred");
	for (p = 0; p < n_classes; p++) {
		class_name(s, sizeof(s), p);
		tfk_buf_addf(&b, " %*s", w, s);
	}
	tfk_buf_addc(&b, '\n');
	for (t = 0; t < n_classes; t++) {
		class_name(s, sizeof(s), t);
		tfk_buf_addf(&b, "%-*s", w, s);
		for (p = 0; p < n_classes; p++)
			tfk_buf_addf(&b, " %*" PRIu64, w, m[t][p]);
		tfk_buf_addc(&b, '\n');
	}
	tfk_buf_addf(&b, "%" PRIu64 " records, accuracy %.4f\n", n_rec,
		     accuracy());
	rc = plot_write_text(&b, out_path);
	tfk_buf_release(&b);
	return rc;
}

static int draw_png(void)
{
	struct tfk_raster r;
	struct tfk_err err;
	char s[96];
	int cell = 40, lw = 0, t, p, L, T = 30, W, H, rc;

	for (t = 0; t < n_classes; t++) {
		class_name(s, sizeof(s), t);
		if (tfk_raster_text_width(s, 1) > lw)
			lw = tfk_raster_text_width(s, 1);
	}
	L = lw + 26;
	W = L + cell * n_classes + 16;
	H = T + cell * n_classes + lw + 30;
	if (W < 220)
		W = 220;
	if ((rc = tfk_raster_init(&r, W, H, 0xffffff, &err)))
		return tfk_cli_fail(&err);
	snprintf(s, sizeof(s), "%" PRIu64 " records, accuracy %.4f", n_rec,
		 accuracy());
	tfk_raster_text(&r, L, 10, s, 0x222222, 1, 0);
	for (t = 0; t < n_classes; t++) {
		uint64_t rs = row_sum(t);

		for (p = 0; p < n_classes; p++) {
			double f = rs ? (double)m[t][p] / (double)rs : 0;
			int x = L + p * cell, y = T + t * cell, tw;
			/* white to dark blue (0x0d47a1) by the row share */
			uint32_t c = (uint32_t)lround(255 - f * (255 - 0x0d))
				<< 16 | (uint32_t)lround(255 - f * (255 - 0x47))
				<< 8 | (uint32_t)lround(255 - f * (255 - 0xa1));

			tfk_raster_rect(&r, x, y, x + cell, y + cell, c);
			snprintf(s, sizeof(s), "%" PRIu64, m[t][p]);
			tw = tfk_raster_text_width(s, 1);
			if (tw < cell - 2)
				tfk_raster_text(&r, x + (cell - tw) / 2,
						y + cell / 2 - 3, s,
						f > 0.5 ? 0xffffff : 0x222222,
						1, 0);
		}
		class_name(s, sizeof(s), t);
		tfk_raster_text(&r, L - 6 - tfk_raster_text_width(s, 1),
				T + t * cell + cell / 2 - 3, s, 0x222222, 1, 0);
		tfk_raster_text(&r, L + t * cell + cell / 2 - 3,
				T + n_classes * cell + 6 +
				tfk_raster_text_width(s, 1), s, 0x222222, 1, 1);
	}
	tfk_raster_rect(&r, L - 1, T - 1, L + n_classes * cell + 1, T,
			0xbbbbbb);
	tfk_raster_rect(&r, L - 1, T + n_classes * cell,
			L + n_classes * cell + 1, T + n_classes * cell + 1,
			0xbbbbbb);
	tfk_raster_text(&r, 4, T + n_classes * cell / 2 + 30, "true label",
			0x222222, 1, 1);
	tfk_raster_text(&r, L + n_classes * cell / 2 - 45, H - 12,
			"predicted label", 0x222222, 1, 0);
	rc = plot_write_png(&r, out_path);
	tfk_raster_release(&r);
	return rc;
}

static int load_names(void)
{
	struct tfk_schema s;
	struct tfk_err err;
	const struct tfk_schema_feat *f;
	size_t i;

	if (!schema_path)
		return 0;
	if (tfk_schema_read(&s, schema_path, &err)) {
		tfk_schema_release(&s);
		return tfk_cli_fail(&err);
	}
	f = tfk_schema_find(&s, label);
	if (f && f->n_label_names) {
		names = calloc(f->n_label_names, sizeof(*names));
		for (i = 0; names && i < f->n_label_names; i++)
			names[n_names++] = strdup(f->label_names[i]);
	}
	tfk_schema_release(&s);
	if (!f || !f->n_label_names)
		tfk_cli_warn("%s: no label_names for \"%s\"; classes are "
			     "numbered", schema_path, label);
	return 0;
}

static int confusion_main(int argc, char **argv)
{
	int i, rc = 0;
	size_t k;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (load_names())
		return 1;
	if (!argc)
		rc = read_records("-");
	for (i = 0; i < argc && !rc; i++)
		rc = read_records(argv[i]);
	if (!rc && !n_rec) {
		tfk_cli_warn("no records");
		rc = 1;
	}
	if (!rc && (size_t)n_classes < n_names)
		n_classes = n_names < MAX_CLASSES ? (int)n_names
			: MAX_CLASSES;
	if (!rc)
		rc = ascii ? draw_ascii() : draw_png();
	for (k = 0; k < n_names; k++)
		free(names[k]);
	free(names);
	return rc;
}

const struct tfk_subcmd plot_confusion_sub = {
	"confusion", "the confusion matrix of tfk-predict's output",
	confusion_main
};
