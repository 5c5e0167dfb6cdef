/*
 * labelrun.c - one labelled-dataset conversion (see labelrun.h).
 *
 * tfk-text and tfk-images each carried a copy of this: the same run
 * state, the same two outputs, the same emit policy, the same summary.
 * What stays in a tool is a convert callback (file bytes to Example) and
 * a describe callback (its features' sidecar entries); the label and
 * filename features, the same in both, have helpers here.
 *
 * Messages go through the tool's say callback rather than being printed
 * here, so the library keeps its rule of reporting, not printing; the
 * one exception is tfk_lrun_check, which exits with a usage error
 * exactly as tfk_conv_check does for the options it checks.
 */
#include "data/labelrun.h"
#include "util/alloc.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Options --------------------------------------------------------------- */

static int parse_label_mode(const char *s)
{
	if (!strcmp(s, "int"))
		return TFK_LRUN_INT;
	if (!strcmp(s, "categorical"))
		return TFK_LRUN_CATEGORICAL;
	if (!strcmp(s, "binary"))
		return TFK_LRUN_BINARY;
	return -1;
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
	return -1;
}

void tfk_lrun_check(const struct tfk_lrun_args *a, const struct tfk_conv *c,
		    const struct tfk_shardw_opts *so)
{
	if (c->seed < 0 || c->seed > 4294967295L)
		tfk_cli_usage_error("--seed: expected 0 to 4294967295 (numpy's "
				    "range), not %ld", c->seed);
	if ((a->val_split != 0) != (a->subset != NULL))
		tfk_cli_usage_error("--validation-split and --subset go together");
	if (a->val_split && !(a->val_split > 0 && a->val_split < 1))
		tfk_cli_usage_error("--validation-split: expected a fraction "
				    "between 0 and 1, not %g", a->val_split);
	if (parse_subset(a->subset) < 0)
		tfk_cli_usage_error("--subset: expected training, validation or "
				    "both, not '%s'", a->subset);
	if (parse_subset(a->subset) == TFK_DS_BOTH && !so->prefix)
		tfk_cli_usage_error("--subset both writes two outputs: it needs "
				    "-o PREFIX");
	if (a->label_map && !strcmp(a->labels, "none"))
		tfk_cli_usage_error("--label-map gives labels: it cannot be "
				    "used with --labels none");
	if (a->class_names && !strcmp(a->labels, "none"))
		tfk_cli_usage_error("--class-names needs labels: it cannot be "
				    "used with --labels none");
	if (a->class_names && strcmp(a->labels, "inferred"))
		tfk_cli_usage_error("--class-names and --labels FILE both give "
				    "the classes: use one");
	if (parse_label_mode(a->label_mode) < 0)
		tfk_cli_usage_error("--label-mode: expected int, categorical or "
				    "binary, not '%s'", a->label_mode);
	if (a->label_list && (a->label_map || a->class_names ||
			      strcmp(a->labels, "inferred")))
		tfk_cli_usage_error("--label-list gives every file's label: it "
				    "cannot be used with --labels, --label-map "
				    "or --class-names");
	if (parse_label_mode(a->label_mode) != TFK_LRUN_INT &&
	    (a->label_map || !strcmp(a->labels, "none")))
		tfk_cli_usage_error("--label-mode %s is for inferred labels "
				    "(a label map gives k-hot int64, --labels "
				    "none no label)", a->label_mode);
}

int tfk_lrun_args_given(const struct tfk_lrun_args *a)
{
	return a->val_split || a->subset || a->label_map ||
		strcmp(a->labels, "inferred") || a->no_shuffle ||
		a->follow_links || a->class_names || a->label_list ||
		strcmp(a->label_mode, "int");
}

/* Messages -------------------------------------------------------------- */

static void sayf(const struct tfk_lrun *lr, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void sayf(const struct tfk_lrun *lr, const char *fmt, ...)
{
	char msg[TFK_ERR_MSG_MAX + 512];
	va_list ap;

	if (!lr->say)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	lr->say(lr, msg);
}

static void ds_warn(void *ctx, const char *msg)
{
	sayf(ctx, "%s", msg);
}

static void say_found(const struct tfk_lrun *lr, const char *label_map)
{
	const struct tfk_dataset *ds = lr->ds;

	if (ds->mode == TFK_DS_NONE)
		sayf(lr, "found %zu files", ds->n_items);
	else
		sayf(lr, "found %zu files belonging to %zu classes",
		     ds->n_items, ds->n_classes);
	if (ds->n_warnings)
		sayf(lr, "%" PRIu64 " entr%s passed over while indexing (see "
		     "above)", ds->n_warnings, ds->n_warnings == 1 ? "y" : "ies");
	if (ds->n_unmapped || ds->n_missing)
		sayf(lr, "%" PRIu64 " files not in %s left out, %" PRIu64
		     " of its lines name no file found", ds->n_unmapped,
		     label_map, ds->n_missing);
}

/* The run --------------------------------------------------------------- */

int tfk_lrun_open(struct tfk_lrun *lr, const char *root,
		  const struct tfk_lrun_args *a, const struct tfk_conv *c,
		  long shard_i, long shard_n, struct tfk_err *err)
{
	struct tfk_ds_opts dopt;
	int rc;

	lr->t0 = tfk_now();
	lr->ds = NULL;
	lr->sel = NULL;
	lr->n_sel = lr->n_first = 0;
	memset(lr->out, 0, sizeof(lr->out));
	lr->n_out = 0;
	lr->conv = c;
	lr->done = 0;
	lr->err = NULL;
	lr->subset = parse_subset(a->subset);
	if (lr->subset < 0)
		return tfk_errf(err, TFK_EINVAL, "--subset: unknown subset '%s'",
				a->subset);
	lr->label_mode = parse_label_mode(a->label_mode);
	if (lr->label_mode < 0)
		return tfk_errf(err, TFK_EINVAL, "--label-mode: unknown mode "
				"'%s'", a->label_mode);

	memset(&dopt, 0, sizeof(dopt));
	dopt.exts = lr->exts;
	dopt.follow_links = a->follow_links;
	dopt.warn = ds_warn;
	dopt.warn_ctx = lr;
	dopt.label_map = a->label_map;
	dopt.label_list = a->label_list;
	dopt.mode = a->label_map ? TFK_DS_MAP : a->label_list ? TFK_DS_LIST :
		!strcmp(a->labels, "none") ? TFK_DS_NONE : TFK_DS_INFERRED;
	if (strcmp(a->labels, "inferred") && strcmp(a->labels, "none"))
		dopt.class_file = a->labels;
	dopt.class_list = a->class_names;
	rc = tfk_ds_open(&lr->ds, root, &dopt, err);
	if (rc)
		return rc;
	if (lr->ds->n_items == 0)
		return tfk_errf(err, TFK_ENOTFOUND, "%s: %s%s", root,
				lr->none_found, dopt.mode == TFK_DS_INFERRED ?
				" in class subdirectories" : "");
	if (lr->label_mode == TFK_LRUN_BINARY && lr->ds->n_classes != 2)
		return tfk_errf(err, TFK_EINVAL, "%s: --label-mode binary needs"
				" exactly 2 classes, not %zu", root,
				lr->ds->n_classes);
	/* Keras: training is all but the last int(F * n), so none held out
	 * leaves training empty ("No training images found") */
	if (lr->subset != TFK_DS_ALL &&
	    tfk_ds_val_count(lr->ds->n_items, a->val_split) == 0)
		return tfk_errf(err, TFK_EINVAL, "%s: --validation-split %g of "
				"%zu files holds out int(%g) = 0: no "
				"validation files (and Keras then gives no "
				"training files)", root, a->val_split,
				lr->ds->n_items,
				a->val_split * (double)lr->ds->n_items);
	if (!c->quiet)
		say_found(lr, a->label_map);
	if (!a->no_shuffle)
		rc = tfk_ds_shuffle(lr->ds, (uint32_t)c->seed, err);
	if (!rc)
		rc = tfk_ds_select(lr->ds, lr->subset, a->val_split, shard_i,
				   shard_n, &lr->sel, &lr->n_sel, &lr->n_first,
				   err);
	return rc;
}

static int convert(void *ctx, const struct tfk_ds_item *it,
		   const uint8_t *data, size_t len, struct tfk_buf *rec,
		   struct tfk_err *err)
{
	const struct tfk_lrun *lr = ctx;

	return lr->convert(lr, it, data, len, rec, err);
}

static int emit(void *ctx, size_t k, const struct tfk_ds_item *it, int status,
		const uint8_t *rec, size_t len, const struct tfk_err *err)
{
	struct tfk_lrun *lr = ctx;
	struct tfk_exout *o = &lr->out[k < lr->n_first ? 0 : 1];

	tfk_progress_update(&lr->prog, ++lr->done);
	if (status) {
		if (lr->stop_on_bad || status == TFK_ENOMEM) {
			*lr->err = *err;
			return 1;
		}
		sayf(lr, "%s: skipped", err->msg);
		o->skipped++;
		return 0;
	}
	return tfk_exout_write(o, rec, len, lr->err) ? 1 : 0;
}

static int describe(void *ctx, struct tfk_schema *s)
{
	const struct tfk_lrun *lr = ctx;

	return lr->describe ? lr->describe(lr, s) : 0;
}

int tfk_lrun_run(struct tfk_lrun *lr, const struct tfk_shardw_opts *so,
		 struct tfk_err *err)
{
	static const char *const suffix[2] = { "-training", "-validation" };
	static const char *const what[2] = { "training", "validation" };
	const struct tfk_conv *c = lr->conv;
	struct tfk_ds_sink sink;
	size_t i, want = lr->subset == TFK_DS_BOTH ? 2 : 1;
	int rc = 0;

	for (i = 0; i < want && !rc; i++) {
		rc = tfk_exout_open(&lr->out[i], so, want == 2 ? suffix[i] : "",
				    want == 2 ? what[i] : NULL, err);
		lr->n_out = i + 1;
	}
	if (!rc) {
		lr->err = err;
		tfk_progress_init(&lr->prog, tfk_progress_wanted(c->progress,
								 c->quiet),
				  "files", lr->n_sel);
		memset(&sink, 0, sizeof(sink));
		sink.convert = convert;
		sink.emit = emit;
		sink.ctx = lr;
		sink.threads = (int)c->jobs;
		rc = tfk_ds_run(lr->ds, lr->sel, lr->n_sel, &sink, err);
		tfk_progress_release(&lr->prog);
		lr->err = NULL;
		if (rc > 0)	/* an emit stopped the run, err says why */
			rc = err->code < 0 ? err->code : TFK_EIO;
	}
	rc = tfk_exout_finish(lr->out, lr->n_out, rc, describe, lr, err);
	for (i = 0; !rc && !c->quiet && i < lr->n_out; i++) {
		char msg[TFK_ERR_MSG_MAX];

		tfk_exout_summary(&lr->out[i], tfk_now() - lr->t0, msg,
				  sizeof(msg));
		sayf(lr, "%s", msg);
	}
	return rc;
}

void tfk_lrun_close(struct tfk_lrun *lr)
{
	size_t i;

	if (!lr)
		return;
	for (i = 0; i < lr->n_out; i++)
		tfk_exout_release(&lr->out[i]);
	lr->n_out = 0;
	tfk_free(lr->sel);
	lr->sel = NULL;
	tfk_ds_close(lr->ds);
	lr->ds = NULL;
}

/* Features both tools make ------------------------------------------------ */

int tfk_lrun_add_label(struct tfk_example_builder *b,
		       const struct tfk_lrun *lr,
		       const struct tfk_ds_item *it, int64_t *khot,
		       struct tfk_err *err)
{
	const struct tfk_dataset *ds = lr->ds;
	int64_t *own = NULL;
	size_t i;

	if (ds->mode == TFK_DS_INFERRED || ds->mode == TFK_DS_LIST) {
		int64_t v = it->label;
		float f, *hot;

		switch (lr->label_mode) {
		case TFK_LRUN_CATEGORICAL:
			hot = tfk_calloc(ds->n_classes ? ds->n_classes : 1,
					 sizeof(*hot));
			if (!hot)
				return tfk_errf(err, TFK_ENOMEM, "out of memory");
			if ((size_t)it->label < ds->n_classes)
				hot[it->label] = 1.0f;
			tfk_exb_add_floats(b, "label", hot, ds->n_classes);
			tfk_free(hot);
			break;
		case TFK_LRUN_BINARY:
			f = (float)it->label;
			tfk_exb_add_floats(b, "label", &f, 1);
			break;
		default:
			tfk_exb_add_int64s(b, "label", &v, 1);
		}
		return 0;
	}
	if (ds->mode != TFK_DS_MAP)
		return 0;
	if (!khot) {
		own = khot = tfk_calloc(ds->n_classes ? ds->n_classes : 1,
					sizeof(*khot));
		if (!khot)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
	} else {
		memset(khot, 0, ds->n_classes * sizeof(*khot));
	}
	for (i = 0; i < it->n_labels; i++)
		khot[it->labels[i]] = 1;
	tfk_exb_add_int64s(b, "label", khot, ds->n_classes);
	tfk_free(own);
	return 0;
}

int tfk_lrun_describe_label(struct tfk_schema *s,
			    const struct tfk_lrun *lr)
{
	const struct tfk_dataset *ds = lr->ds;
	struct tfk_schema_feat *f;
	int64_t shape[1] = { (int64_t)ds->n_classes };
	int vector = ds->mode == TFK_DS_MAP;

	if (ds->mode == TFK_DS_NONE)
		return 0;
	f = tfk_schema_feature(s, "label");
	if (!f)
		return TFK_ENOMEM;
	f->kind = TFK_FEAT_INT64;
	if (ds->mode != TFK_DS_MAP && lr->label_mode != TFK_LRUN_INT) {
		f->kind = TFK_FEAT_FLOAT;
		vector = 1;
		if (lr->label_mode == TFK_LRUN_BINARY)
			shape[0] = 1;
	}
	tfk_schema_set_shape(f, vector, shape);
	if (tfk_schema_set_labels(f, (const char *const *)ds->classes,
				  ds->n_classes))
		return TFK_ENOMEM;
	return 0;
}

int tfk_lrun_describe_utf8(struct tfk_schema *s, const char *name)
{
	struct tfk_schema_feat *f = tfk_schema_feature(s, name);

	if (!f)
		return TFK_ENOMEM;
	f->kind = TFK_FEAT_BYTES;
	tfk_schema_set_shape(f, 0, NULL);
	snprintf(f->encoding, sizeof(f->encoding), "utf-8");
	return 0;
}
