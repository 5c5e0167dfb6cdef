/*
 * fuzz-dataset.c - the dataset indexer's parsers on arbitrary bytes:
 * archives (libarchive's tar/zip readers under our member-name
 * normalization, top-directory and class rules, then a full second pass
 * through tfk_ds_run), label map CSVs, class files and label lists.
 *
 * FUZZ-SEEDS: tests/fuzz/seeds/fuzz-dataset/*
 *
 * The first byte picks the mode (0: archive, 1: label map, 2: class
 * file, or with bit 32 a label list, for the small directory tree made
 * once under /tmp); the rest is
 * the file. Beyond "no crash, no leak":
 *  - every item path is relative, '/'-separated, UTF-8, with no "." or
 *    ".." component and no empty one;
 *  - labels lie in [0, n_classes) and items come class by class;
 *  - an archive's second pass emits every item, in order, with exactly
 *    the bytes its header promised (or fails as a whole).
 * Inputs live in memfds; the tree is the only thing written to disk.
 */
#include "data/dataset.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/err.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int fd = -1;
static char path[64];
static char tree[64];

static void put(const uint8_t *p, size_t n)
{
	if (fd < 0) {
		fd = memfd_create("fuzz-dataset", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || (n && pwrite(fd, p, n, 0) != (ssize_t)n))
		abort();
}

static void rm_tree(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tree);
	if (system(cmd))
		return;
}

static void make_tree(void)
{
	static const char *const files[] = {
		"a/1.jpg", "a/b/2.png", "b/3.gif", "b/x.txt", "c/4.bmp", "5.jpg"
	};
	char p[128];

	snprintf(tree, sizeof(tree), "/tmp/fuzz-dataset-XXXXXX");
	if (!mkdtemp(tree))
		abort();
	atexit(rm_tree);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f;

		snprintf(p, sizeof(p), "%s/a", tree);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/a/b", tree);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/b", tree);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/c", tree);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/%s", tree, files[i]);
		f = fopen(p, "w");
		if (!f)
			abort();
		fputs(files[i], f);
		fclose(f);
	}
}

static void check_items(const struct tfk_dataset *ds)
{
	long last = -1;

	for (size_t i = 0; i < ds->n_items; i++) {
		const struct tfk_ds_item *it = &ds->items[i];
		const char *s = it->path;

		if (!s[0] || s[0] == '/' || strstr(s, "//") ||
		    s[strlen(s) - 1] == '/' ||
		    !tfk_utf8_valid((const uint8_t *)s, strlen(s)))
			abort();
		for (const char *c = s; c; c = strchr(c, '/')) {
			if (*c == '/')
				c++;
			if ((c[0] == '.' && (c[1] == '/' || !c[1])) ||
			    (c[0] == '.' && c[1] == '.' && (c[2] == '/' || !c[2])))
				abort();
		}
		if (ds->mode == TFK_DS_INFERRED) {
			if (it->label < 0 || (size_t)it->label >= ds->n_classes ||
			    it->label < last)
				abort();
			last = it->label;
		}
		for (size_t k = 0; k < it->n_labels; k++)
			if (it->labels[k] >= ds->n_classes)
				abort();
	}
}

struct seen {
	size_t next;
	int bad;
};

static int conv(void *ctx, const struct tfk_ds_item *it, const uint8_t *data,
		size_t len, struct tfk_buf *rec, struct tfk_err *err)
{
	/* a zip member may not say its size up front (0 then) */
	if (it->size && len != it->size)
		abort();
	tfk_buf_add(rec, data, len);
	return 0;
}

static int emit(void *ctx, size_t k, const struct tfk_ds_item *it, int status,
		const uint8_t *rec, size_t len, const struct tfk_err *err)
{
	struct seen *s = ctx;

	if (k != s->next++)
		abort();
	if (!status && it->size && len != it->size)
		abort();
	return 0;
}

/* A label list: every label is one of the classes, which are distinct
 * decimal values in increasing order. */
static void check_listed(const struct tfk_dataset *ds)
{
	size_t i, k;

	for (k = 1; k < ds->n_classes; k++)
		if (strtol(ds->classes[k - 1], NULL, 10) >=
		    strtol(ds->classes[k], NULL, 10))
			abort();
	for (i = 0; i < ds->n_items; i++) {
		char v[24];

		snprintf(v, sizeof(v), "%ld", ds->items[i].label);
		for (k = 0; k < ds->n_classes; k++)
			if (!strcmp(v, ds->classes[k]))
				break;
		if (k == ds->n_classes)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct tfk_ds_opts o;
	struct tfk_dataset *ds;
	struct tfk_err err;
	int mode;

	if (n < 1)
		return 0;
	if (!tree[0])
		make_tree();
	mode = data[0] % 3;
	put(data + 1, n - 1);
	memset(&o, 0, sizeof(o));
	o.exts = tfk_ds_image_exts;
	if (mode == 0) {
		o.mode = data[0] & 4 ? TFK_DS_NONE : TFK_DS_INFERRED;
		if (tfk_ds_open(&ds, path, &o, &err) == 0) {
			struct seen s = { 0, 0 };
			struct tfk_ds_sink sink = { conv, emit, &s,
						    (data[0] & 8) ? 2 : 1,
						    (data[0] & 16) ? 16 : 0 };
			size_t *sel, n_sel, n_first;

			check_items(ds);
			tfk_ds_shuffle(ds, data[0], &err);
			if (tfk_ds_select(ds, TFK_DS_ALL, 0, 0, 1, &sel, &n_sel,
					  &n_first, &err) == 0) {
				if (tfk_ds_run(ds, sel, n_sel, &sink, &err) == 0 &&
				    s.next != n_sel)
					abort();
				tfk_free(sel);
			}
			tfk_ds_close(ds);
		}
	} else if (mode == 1) {
		o.mode = TFK_DS_MAP;
		o.label_map = path;
		if (tfk_ds_open(&ds, tree, &o, &err) == 0) {
			check_items(ds);
			tfk_ds_close(ds);
		}
	} else if (data[0] & 32) {
		o.mode = TFK_DS_LIST;
		o.label_list = path;
		if (tfk_ds_open(&ds, tree, &o, &err) == 0) {
			check_items(ds);
			check_listed(ds);
			tfk_ds_close(ds);
		}
	} else {
		o.mode = TFK_DS_INFERRED;
		o.class_file = path;
		if (tfk_ds_open(&ds, tree, &o, &err) == 0) {
			check_items(ds);
			tfk_ds_close(ds);
		}
	}
	return 0;
}
