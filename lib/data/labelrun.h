/*
 * labelrun.h - one labelled-dataset conversion, the part tfk-text and
 * tfk-images share: Keras' *_dataset_from_directory options, indexing
 * (dataset.h), the shuffle and the training/validation split, one or two
 * outputs with schema sidecars (exout.h), the ordered parallel run with
 * its progress line, and the skip-or-stop policy for files that fail.
 * A tool keeps only what differs: how one file becomes one Example, and
 * what its schema says about the features it makes.
 *
 *   static struct tfk_lrun_args la = TFK_LRUN_ARGS_DEFAULTS;
 *   opts[] = { ..., TFK_LRUN_OPTS(la), TFK_CONV_OPTS(conv), ... };
 *
 *   tfk_conv_check(&conv, &so, &si, &sn);
 *   tfk_lrun_check(&la, &conv, &so);
 *   lr.exts = ...; lr.convert = ...;	(the tool's part)
 *   if (tfk_lrun_open(&lr, root, &la, &conv, si, sn, &err) ||
 *       tfk_lrun_run(&lr, &so, &err))
 *           rc = tfk_cli_fail(&err);
 *   tfk_lrun_close(&lr);
 *
 * Messages (indexing problems, files skipped, the "found N files" and
 * "wrote ..." notes unless -q) go to lr->say, which a tool points at
 * its diagnostics; the library itself prints nothing but the progress
 * line.
 */
#ifndef TFK_LABELRUN_H
#define TFK_LABELRUN_H

#include <stddef.h>
#include <stdint.h>

#include "data/dataset.h"
#include "data/exout.h"
#include "data/shardw.h"
#include "example/example.h"
#include "example/schema.h"
#include "util/buf.h"
#include "util/cli.h"
#include "util/err.h"
#include "util/progress.h"

/* The options every labelled-directory tool takes. */
struct tfk_lrun_args {
	const char *labels;	/* --labels inferred|none|FILE */
	const char *label_map;	/* --label-map CSV */
	double val_split;	/* --validation-split F */
	const char *subset;	/* --subset training|validation|both */
	int no_shuffle;		/* --no-shuffle */
	int follow_links;	/* --follow-links */
	const char *class_names;	/* --class-names a,b,c */
	const char *label_mode;	/* --label-mode int|categorical|binary */
	const char *label_list;	/* --label-list FILE */
};

#define TFK_LRUN_ARGS_DEFAULTS \
	{ "inferred", NULL, 0, NULL, 0, 0, NULL, "int", NULL }

/* How an inferred class index is stored (Keras' label_mode). */
enum tfk_lrun_label_mode {
	TFK_LRUN_INT = 0,		/* int64 index (Keras: int32) */
	TFK_LRUN_CATEGORICAL = 1,	/* float one-hot[n_classes] */
	TFK_LRUN_BINARY = 2		/* float [1]: 0 or 1, two classes */
};

#define TFK_LRUN_OPTS(a) \
	TFK_OPT_STR(0, "labels", &(a).labels, "MODE", \
		    "inferred (from subdirectories), none, or a FILE of class " \
		    "names, one per line, in index order"), \
	TFK_OPT_STR(0, "label-map", &(a).label_map, "CSV", \
		    "multi-label: lines 'filename,name;name' (k-hot label)"), \
	TFK_OPT_STR(0, "label-list", &(a).label_list, "FILE", \
		    "one integer label per line for every file under DIR in " \
		    "sorted path order (Keras labels=[...])"), \
	TFK_OPT_DOUBLE(0, "validation-split", &(a).val_split, "F", \
		       "fraction of files held out for validation (0 < F < 1)"), \
	TFK_OPT_STR(0, "subset", &(a).subset, "NAME", \
		    "training, validation or both (PREFIX-training, " \
		    "PREFIX-validation)"), \
	TFK_OPT_FLAG(0, "no-shuffle", &(a).no_shuffle, \
		     "keep the sorted file order (Keras shuffle=False)"), \
	TFK_OPT_FLAG(0, "follow-links", &(a).follow_links, \
		     "descend into symbolic links to directories"), \
	TFK_OPT_STR(0, "class-names", &(a).class_names, "A,B,...", \
		    "the classes, in index order: a subset of the " \
		    "subdirectories (Keras class_names)"), \
	TFK_OPT_STR(0, "label-mode", &(a).label_mode, "MODE", \
		    "int (int64 index), categorical (float one-hot) or " \
		    "binary (float 0/1, two classes)")

/*
 * Check a and the seed in c after parsing (as tfk_conv_check does for
 * the converter options): --seed in numpy's 0..2^32-1, --validation-split
 * and --subset together, 0 < F < 1, a known subset, "both" only with -o
 * (so->prefix), --label-map not with --labels none, --class-names only
 * with inferred labels or a label map and not with --labels FILE, a
 * known --label-mode, other than int only with inferred labels or a
 * label list, --label-list with none of --labels, --label-map and
 * --class-names. Calls
 * tfk_cli_usage_error (exit 2) on a bad value.
 */
void tfk_lrun_check(const struct tfk_lrun_args *a, const struct tfk_conv *c,
		    const struct tfk_shardw_opts *so);

/* 1 when any option of a differs from its default (for a mode of a tool
 * that takes none of them). */
int tfk_lrun_args_given(const struct tfk_lrun_args *a);

struct tfk_lrun {
	/* The tool's part, set before tfk_lrun_open: */
	const char *const *exts;	/* wanted suffixes (dataset.h) */
	/* The error for an empty index, after "ROOT: " and before
	 * " in class subdirectories": "no .txt files found". */
	const char *none_found;
	/* A file that cannot be read or converted stops the run (1) or
	 * is reported "WHERE: what: skipped" and counted (0). Running out
	 * of memory always stops it. */
	int stop_on_bad;
	/* Worker threads: one file's bytes to one record in rec, as
	 * tfk_ds_sink.convert (thread-safe; lr is read-only then). */
	int (*convert)(const struct tfk_lrun *lr, const struct tfk_ds_item *it,
		       const uint8_t *data, size_t len, struct tfk_buf *rec,
		       struct tfk_err *err);
	/* Add to a sidecar what the statistics cannot infer (shapes,
	 * labels, encodings); 0 or TFK_ENOMEM. May be NULL. */
	int (*describe)(const struct tfk_lrun *lr, struct tfk_schema *s);
	/* Every message, without the tool name. May be NULL. */
	void (*say)(const struct tfk_lrun *lr, const char *msg);
	void *ctx;			/* the tool's, for its callbacks */

	/* Filled by tfk_lrun_open (read-only for the tool): */
	struct tfk_dataset *ds;
	size_t *sel, n_sel;		/* ds->items indices, output order */
	size_t n_first;			/* how many of sel go to out[0] */
	int subset;			/* enum tfk_ds_subset */
	int label_mode;			/* enum tfk_lrun_label_mode */
	/* Filled by tfk_lrun_run: */
	struct tfk_exout out[2];	/* training/validation, or one */
	size_t n_out;

	/* private */
	const struct tfk_conv *conv;
	struct tfk_progress prog;
	uint64_t done;
	struct tfk_err *err;		/* during tfk_lrun_run */
	double t0;
};

/*
 * Index root as a and c say (dataset.h), say what was found (unless
 * c->quiet), shuffle with c->seed unless --no-shuffle, and select the
 * subset and this task's part (shard_i of shard_n). The tool's part of
 * lr must be set; the rest is overwritten. Errors: those of tfk_ds_open
 * (the tool may add a hint), TFK_ENOTFOUND (no wanted file), TFK_EINVAL
 * (--label-mode binary without exactly two classes; a split that
 * leaves a subset empty, which Keras refuses too), those of
 * tfk_ds_select. lr is always left for tfk_lrun_close.
 */
int tfk_lrun_open(struct tfk_lrun *lr, const char *root,
		  const struct tfk_lrun_args *a, const struct tfk_conv *c,
		  long shard_i, long shard_n, struct tfk_err *err);

/*
 * Convert the selection on c->jobs threads into so's outputs (so->prefix
 * + "-training" and "-validation" for --subset both), with sidecars
 * described by lr->describe, and say the summary of each unless
 * c->quiet. On failure no shard and no sidecar of this run remains.
 * Errors: those of the outputs, of tfk_ds_run, and the first file that
 * fails when stop_on_bad.
 */
int tfk_lrun_run(struct tfk_lrun *lr, const struct tfk_shardw_opts *so,
		 struct tfk_err *err);

/* Free what open and run made; the tool's part stays. NULL ok. */
void tfk_lrun_close(struct tfk_lrun *lr);

/*
 * Add the "label" feature of item it to b as Keras labels it: inferred
 * or listed, by lr->label_mode (int64 class index or listed value; float
 * one-hot[n_classes], all zeros for a listed value past the classes as
 * tf.one_hot; or float [1]); k-hot int64[n_classes] with a label map
 * (khot is scratch for n_classes values, or NULL to allocate); nothing
 * with no labels. Errors: TFK_ENOMEM.
 */
int tfk_lrun_add_label(struct tfk_example_builder *b,
		       const struct tfk_lrun *lr,
		       const struct tfk_ds_item *it, int64_t *khot,
		       struct tfk_err *err);

/* Sidecar entries: "label" as tfk_lrun_add_label makes it (class names
 * attached; none with no labels), and a scalar UTF-8 bytes feature
 * ("filename", "text"). 0 or TFK_ENOMEM. */
int tfk_lrun_describe_label(struct tfk_schema *s,
			    const struct tfk_lrun *lr);
int tfk_lrun_describe_utf8(struct tfk_schema *s, const char *name);

#endif
