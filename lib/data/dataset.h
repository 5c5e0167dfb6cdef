/*
 * dataset.h - a labelled set of files, indexed the way Keras'
 * image_dataset_from_directory / text_dataset_from_directory index it,
 * from a directory or from a tar/zip archive read in-stream.
 *
 * Layout (Keras' index_directory):
 *
 *   ROOT/                       or  ROOT.tgz / ROOT.tar / ROOT.zip with the
 *     daisy/100.jpg                 same members, optionally all under one
 *     daisy/sub/7.jpg               top directory (flower_photos/daisy/...)
 *     roses/12.jpg
 *
 * An archive's single top directory is stripped (taken as ROOT) when
 * every member lies under it and, with inferred labels, some wanted
 * file lies in a subdirectory of it; otherwise (an archive of daisy/
 * alone) it is the one class.
 *
 * Labels "inferred": the classes are the subdirectories of ROOT in byte
 * order (names starting with "." ignored), or the order of an explicit
 * class list (a subset of them, as Keras' class_names). Files are found
 * recursively in each class directory, kept when their lower-cased name
 * ends in one of the allowed extensions, and listed class by class, in
 * each class ordered as Keras orders them (by directory path, then file
 * name, both compared as bytes, which is Python's code-point order for
 * UTF-8). Labels "none": every matching file under ROOT, same order.
 * Label map: every matching file under ROOT that a CSV names, with one
 * or more class names each (multi-label).
 *
 * Symbolic links: class directories may be links; below them linked
 * directories are not entered unless follow_links (Keras' follow_links);
 * links to files are followed. Symlink loops, broken links, unreadable
 * directories and names that are not UTF-8 are passed over: reported
 * through opts->warn and counted in n_warnings, never fatal.
 *
 * Archives cannot be read at random, so indexing makes one pass over the
 * member headers only (data is skipped; for a compressed tar this still
 * costs one decompression of the whole archive; a zip is indexed from
 * its central directory), and tfk_ds_run makes a second pass reading
 * the data of the selected members. Records come out in the selection
 * order whatever the member order: out-of-order records wait in memory
 * (64 MiB by default) and then in an unlinked temporary file under $TMPDIR
 * (default /tmp), so that pass may need as much temporary space as the
 * output. An archive on stdin is refused (two passes).
 */
#ifndef TFK_DATASET_H
#define TFK_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

enum tfk_ds_mode {
	TFK_DS_INFERRED = 0,	/* class = subdirectory of the root */
	TFK_DS_NONE = 1,	/* no labels */
	TFK_DS_MAP = 2,		/* multi-label, from a CSV label map */
	TFK_DS_LIST = 3		/* one given integer label per file */
};

/* Keras' ALLOWLIST_FORMATS of image_dataset_from_directory. */
extern const char *const tfk_ds_image_exts[];
/* text_dataset_from_directory: ".txt". */
extern const char *const tfk_ds_text_exts[];

struct tfk_ds_opts {
	const char *const *exts;	/* lower-case suffixes, NULL-ended */
	int mode;			/* enum tfk_ds_mode */
	/* Class names in class-index order, one per line (the --labels
	 * FILE of the tools), or NULL for byte order. INFERRED: each must
	 * be a subdirectory, and only those classes are indexed. MAP: the
	 * map may use no other names. */
	const char *class_file;
	/* The same as a comma-separated list ("cat,dog", Keras'
	 * class_names); not with class_file. */
	const char *class_list;
	/*
	 * MAP: a CSV file (RFC 4180 quoting), one line per file:
	 *
	 *   filename,labels
	 *   daisy/1.jpg,flower;white
	 *   "a,b.jpg",flower
	 *   c.jpg,
	 *
	 * The first field is the path relative to the root as the
	 * "filename" feature spells it, the second the file's class names
	 * separated by ';' (none is allowed). A first line that reads
	 * exactly "filename,labels" is a header; blank lines are ignored.
	 * Classes are the class_file order, else every name used, in byte
	 * order. Files under the root that the map does not name are left
	 * out and counted in n_unmapped; map lines naming no file found
	 * are counted in n_missing.
	 */
	const char *label_map;
	/*
	 * LIST (Keras' labels=[...]): a file of one integer per line,
	 * 0 to 2^31-1, the labels of every matching file under the root in
	 * NONE's order (sorted paths); blank lines are ignored and the
	 * counts must agree. Classes are the distinct values in numeric
	 * order, as decimal strings; an item's label is its value itself
	 * (not an index into them), as in Keras.
	 */
	const char *label_list;
	int follow_links;
	/* Called for each entry passed over while indexing, with a
	 * message naming it ("DIR/x: unreadable directory: Permission
	 * denied"). May be NULL. */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
};

struct tfk_ds_item {
	char *path;		/* relative to the root, '/'-separated UTF-8 */
	long label;		/* class index (LIST: the value); -1 with no
				 * labels or a map */
	const uint32_t *labels;	/* MAP: this file's class indices */
	size_t n_labels;
	uint64_t size;		/* archive: bytes from the header; else 0 */
	uint64_t member;	/* archive: ordinal of the member header */
};

struct tfk_dataset {
	char *root;		/* as given */
	int archive;		/* 1 when root is a tar/zip file */
	char *top;		/* archive: top directory stripped, or NULL */
	char **classes;		/* class names by index */
	size_t n_classes;
	struct tfk_ds_item *items;	/* in Keras' index order */
	size_t n_items;
	uint64_t n_warnings;	/* entries passed over while indexing */
	uint64_t n_unmapped;	/* MAP: files the map does not name */
	uint64_t n_missing;	/* MAP: map lines naming no file */
	uint64_t n_members;	/* archive: member headers seen */
	int mode;		/* enum tfk_ds_mode */
	struct tfk_ds_priv *priv;
};

/*
 * Index root, a directory or a .tar/.tar.gz/.tgz/.zip file (any tar or
 * zip libarchive reads, detected from the bytes, not the name). Errors:
 * TFK_EIO (root missing or unreadable, read failure), TFK_ECORRUPT (not
 * a directory nor a readable archive; a bad class file or label map,
 * "map.csv:7: ..."), TFK_ENOTFOUND (a listed class that is not a
 * subdirectory), TFK_EINVAL (bad options, archive on stdin),
 * TFK_ENOMEM. An empty result is not an error.
 */
int tfk_ds_open(struct tfk_dataset **ds, const char *root,
		const struct tfk_ds_opts *opts, struct tfk_err *err);
/* Free everything; NULL ok. */
void tfk_ds_close(struct tfk_dataset *ds);

/*
 * Shuffle v[0..n) in place exactly as numpy's
 * np.random.RandomState(seed).shuffle(v) does (MT19937 seeded with
 * init_genrand, Fisher-Yates from the end with masked rejection
 * sampling), which is how Keras shuffles its file list: the same seed
 * selects the same files as Keras.
 */
void tfk_ds_shuffle_index(size_t *v, size_t n, uint32_t seed);
/* Reorder ds->items by tfk_ds_shuffle_index. Errors: TFK_ENOMEM. */
int tfk_ds_shuffle(struct tfk_dataset *ds, uint32_t seed,
		   struct tfk_err *err);
/*
 * Keras' get_training_or_validation_split: of n items the validation
 * subset is the last int(fraction * n), the training subset the rest.
 * Returns that validation count. (Keras returns every item for
 * training when the count is 0; here training is then all n items and
 * validation none, which is what the fraction means.)
 */
size_t tfk_ds_val_count(size_t n, double fraction);

enum tfk_ds_subset {
	TFK_DS_ALL = 0,		/* no split */
	TFK_DS_TRAINING = 1,
	TFK_DS_VALIDATION = 2,
	TFK_DS_BOTH = 3		/* training, then validation */
};

/*
 * The items a run converts, as indices into ds->items in output order:
 * every item (ALL), the training part (the first n - tfk_ds_val_count(n,
 * fraction) items), the validation part (the rest) or both, training
 * first. Each part then keeps only its positions j (0-based within the
 * part) with j % shard_n == shard_i: --shard I/N. *sel is allocated
 * (tfk_free it), *n_first is how many of *n_sel belong to the first
 * part (the training part for BOTH, else all of them).
 * Errors: TFK_EINVAL (shard_i/shard_n out of range), TFK_ENOMEM.
 */
int tfk_ds_select(const struct tfk_dataset *ds, int subset, double fraction,
		  long shard_i, long shard_n, size_t **sel, size_t *n_sel,
		  size_t *n_first, struct tfk_err *err);

/* "DIR/daisy/1.jpg" or "A.tgz: flower_photos/daisy/1.jpg": where an
 * item is, for messages. Written into buf (always terminated). */
void tfk_ds_where(const struct tfk_dataset *ds, const struct tfk_ds_item *it,
		  char *buf, size_t n);

/* What tfk_ds_run does with each selected item. */
struct tfk_ds_sink {
	/*
	 * Worker threads: turn one file's bytes into a record in rec
	 * (empty on entry). Return 0, or a negative TFK_E* with err
	 * filled; the message need not name the file (emit gets it with
	 * the place prefixed). Must be thread-safe.
	 */
	int (*convert)(void *ctx, const struct tfk_ds_item *it,
		       const uint8_t *data, size_t len, struct tfk_buf *rec,
		       struct tfk_err *err);
	/*
	 * The calling thread, strictly in selection order (k = 0, 1, ...):
	 * status 0 with the record (borrowed until emit returns), or the
	 * negative status of a failed read or convert with err saying
	 * where and what. Return 0 to go on; a positive value stops the
	 * run and is returned by tfk_ds_run.
	 */
	int (*emit)(void *ctx, size_t k, const struct tfk_ds_item *it,
		    int status, const uint8_t *rec, size_t len,
		    const struct tfk_err *err);
	void *ctx;
	int threads;		/* >= 1 */
	/* Archives: bytes of out-of-order records kept in memory before
	 * the rest go to a temporary file; 0 means 64 MiB. */
	uint64_t hold_max;
};

/*
 * Read and convert ds->items[sel[k]] for k in [0, n_sel) on
 * sink->threads threads and emit them in k order. The output never
 * depends on the thread count. Returns 0, the non-zero value an emit
 * returned, or a negative TFK_E* for a failure that stops the run (an
 * archive that cannot be read on, temporary file I/O, out of memory),
 * with err filled. A file that cannot be read is not such a failure:
 * it reaches emit with its status.
 */
int tfk_ds_run(const struct tfk_dataset *ds, const size_t *sel, size_t n_sel,
	       const struct tfk_ds_sink *sink, struct tfk_err *err);

#endif
