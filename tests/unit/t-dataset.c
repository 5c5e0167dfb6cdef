/*
 * t-dataset.c - indexing labelled file sets as Keras does: class order,
 * file order (directory part before file name), extensions, hidden
 * classes, symlinks and loops, non-UTF-8 names, unreadable directories,
 * class files, label maps; archives (tar, tgz, zip, with and without a
 * top directory) giving the same list as the directory; numpy's shuffle
 * (values printed by numpy 1.24 RandomState, written here); Keras'
 * split counts; ordered runs on 1 and 3 threads with spilling; corrupt
 * archives; failed allocations.
 */
#include "data/dataset.h"
#include "util/alloc.h"
#include "tap.h"
#include "allocfail.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char root[600], flowers[600];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static const char *py(void)
{
	const char *p = getenv("PYTHON");

	return p ? p : "/usr/bin/python3";
}

static int n_warn;
static char last_warn[TFK_ERR_MSG_MAX];

static void on_warn(void *ctx, const char *msg)
{
	n_warn++;
	snprintf(last_warn, sizeof(last_warn), "%s", msg);
	tap_diag("warning: %s", msg);
}

/* "label:path,label:path,..." of a dataset, for one-line comparisons. */
static const char *listing(const struct tfk_dataset *ds)
{
	static char buf[8192];
	size_t k = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ds->n_items && k < sizeof(buf) - 100; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%ld:%s",
				      i ? "," : "", ds->items[i].label,
				      ds->items[i].path);
	return buf;
}

static const char *class_list(const struct tfk_dataset *ds)
{
	static char buf[1024];
	size_t k = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ds->n_classes; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s",
				      i ? "," : "", ds->classes[i]);
	return buf;
}

static struct tfk_ds_opts opts(int mode)
{
	struct tfk_ds_opts o;

	memset(&o, 0, sizeof(o));
	o.exts = tfk_ds_image_exts;
	o.mode = mode;
	o.warn = on_warn;
	return o;
}

static void make_trees(void)
{
	snprintf(root, sizeof(root), "%s/tree", tap_tmpdir());
	snprintf(flowers, sizeof(flowers), "%s/flowers", tap_tmpdir());
	sh("cd %s && mkdir -p tree/a/a 'tree/a/a b' tree/a-x tree/b/sub "
	   "tree/.git && "
	   "printf AZ > tree/a/z.JPG && printf AY > tree/a/y.png && "
	   "printf AB > tree/a/b.jpg && printf AAZ > tree/a/a/z.jpg && "
	   "printf AABC > 'tree/a/a b/c.jpeg' && printf N > tree/a/notes.txt && "
	   "printf H > tree/a/.hidden.jpg && printf Q > tree/a-x/q.bmp && "
	   "printf G > tree/.git/x.jpg && printf T > tree/top.jpg && "
	   "printf B1 > tree/b/1.gif && printf B2 > tree/b/sub/2.png && "
	   "ln -s ../b/1.gif tree/a/link.jpg && "
	   "ln -s nowhere tree/a/broken.jpg && ln -s .. tree/b/sub/up && "
	   "printf X > \"tree/a/$(printf '\\377')x.jpg\"",
	   tap_tmpdir());
	/* a clean tree (no links) for the archive comparisons */
	sh("cd %s && mkdir -p flowers/daisy/deep flowers/roses flowers/tulips && "
	   "printf d1 > flowers/daisy/1.jpg && printf d2 > flowers/daisy/2.jpg && "
	   "printf d3 > flowers/daisy/deep/3.png && printf BADr1 > flowers/roses/r1.jpg && "
	   "printf r2 > flowers/roses/r2.gif && printf LICENSE > flowers/LICENSE.txt && "
	   "for i in 10 11 12 13 14 15 16 17 18 19; do printf r$i > flowers/roses/x$i.bmp; done",
	   tap_tmpdir());
}

static void dir_inferred(void)
{
	struct tfk_ds_opts o = opts(TFK_DS_INFERRED);
	struct tfk_dataset *ds;
	struct tfk_err err;

	n_warn = 0;
	is_int(tfk_ds_open(&ds, root, &o, &err), 0, "index a directory");
	is_str(class_list(ds), "a,a-x,b",
	       "classes: sorted subdirectories, hidden ones left out");
	is_str(listing(ds),
	       "0:a/.hidden.jpg,0:a/b.jpg,0:a/link.jpg,0:a/y.png,0:a/z.JPG,"
	       "0:a/a/z.jpg,0:a/a b/c.jpeg,1:a-x/q.bmp,2:b/1.gif,2:b/sub/2.png",
	       "Keras order: by class, directory, then file name; extensions "
	       "any case; top-level files ignored; links to files followed");
	is_int(ds->n_warnings, 2, "two entries passed over");
	is_int(n_warn, 2, "and reported");
	ok(ds->mode == TFK_DS_INFERRED && !ds->archive, "mode and kind");
	tfk_ds_close(ds);

	/* follow_links walks into linked directories and stops at a loop */
	o.follow_links = 1;
	n_warn = 0;
	is_int(tfk_ds_open(&ds, root, &o, &err), 0, "index following links");
	is_int(ds->n_items, 10, "the loop adds no file");
	ok(strstr(last_warn, "b/sub/up: symlink loop"), "loop reported: %s",
	   last_warn);
	is_int(ds->n_warnings, 3, "loop, broken link, non-utf-8 name");
	tfk_ds_close(ds);
}

static void dir_none_and_classes(void)
{
	struct tfk_ds_opts o = opts(TFK_DS_NONE);
	struct tfk_dataset *ds;
	struct tfk_err err;
	char path[700];

	is_int(tfk_ds_open(&ds, root, &o, &err), 0, "labels none");
	is_str(listing(ds),
	       "-1:top.jpg,-1:.git/x.jpg,-1:a/.hidden.jpg,-1:a/b.jpg,"
	       "-1:a/link.jpg,-1:a/y.png,-1:a/z.JPG,-1:a-x/q.bmp,-1:a/a/z.jpg,"
	       "-1:a/a b/c.jpeg,-1:b/1.gif,-1:b/sub/2.png",
	       "labels none: every file, directory part compared as bytes");
	is_int(ds->n_classes, 0, "no classes");
	tfk_ds_close(ds);

	snprintf(path, sizeof(path), "%s/classes.txt", tap_tmpdir());
	sh("printf 'b\\r\\na\\n\\n' > %s", path);
	o = opts(TFK_DS_INFERRED);
	o.class_file = path;
	is_int(tfk_ds_open(&ds, root, &o, &err), 0, "class file");
	is_str(class_list(ds), "b,a", "class order from the file (CRLF ok)");
	is_str(listing(ds),
	       "0:b/1.gif,0:b/sub/2.png,1:a/.hidden.jpg,1:a/b.jpg,1:a/link.jpg,"
	       "1:a/y.png,1:a/z.JPG,1:a/a/z.jpg,1:a/a b/c.jpeg",
	       "only the listed classes, in the listed order");
	tfk_ds_close(ds);

	sh("printf 'a\\nnope\\n' > %s", path);
	is_int(tfk_ds_open(&ds, root, &o, &err), TFK_ENOTFOUND,
	       "a class that is no subdirectory");
	ok(strstr(err.msg, "class 'nope' is not a subdirectory of"), "%s",
	   err.msg);
	sh("printf 'a\\nb\\na\\n' > %s", path);
	is_int(tfk_ds_open(&ds, root, &o, &err), TFK_ECORRUPT, "duplicate class");
	ok(strstr(err.msg, "classes.txt:3: class 'a' listed twice"), "%s",
	   err.msg);
	sh("printf '.git\\n' > %s", path);
	is_int(tfk_ds_open(&ds, root, &o, &err), TFK_ENOTFOUND,
	       "hidden directories are not classes");

	o = opts(TFK_DS_INFERRED);
	snprintf(path, sizeof(path), "%s/missing-dir", tap_tmpdir());
	is_int(tfk_ds_open(&ds, path, &o, &err), TFK_EIO, "missing root");
	ok(strstr(err.msg, "missing-dir: No such file"), "%s", err.msg);
	is_int(tfk_ds_open(&ds, "-", &o, &err), TFK_EINVAL, "stdin refused");
}

static void unreadable_dir(void)
{
	struct tfk_ds_opts o = opts(TFK_DS_INFERRED);
	struct tfk_dataset *ds;
	struct tfk_err err;
	char r2[700];

	/* Root can read any directory, so make one opendir cannot reach:
	 * a path longer than PATH_MAX (ENAMETOOLONG). */
	snprintf(r2, sizeof(r2), "%s/deep", tap_tmpdir());
	sh("mkdir -p %s/c && printf ok > %s/c/ok.png && cd %s/c && "
	   "%s -c 'import os\nfor i in range(24):\n os.mkdir(\"d\" * 200)\n"
	   " os.chdir(\"d\" * 200)\nopen(\"far.png\", \"w\").close()'",
	   r2, r2, r2, py());
	n_warn = 0;
	is_int(tfk_ds_open(&ds, r2, &o, &err), 0, "unreadable directory: run goes on");
	is_str(listing(ds), "0:c/ok.png", "readable files indexed");
	ok(ds->n_warnings == 1 && strstr(last_warn, "deep/c/dddd"),
	   "and the directory reported");
	tfk_ds_close(ds);
}

static void label_map(void)
{
	struct tfk_ds_opts o = opts(TFK_DS_MAP);
	struct tfk_dataset *ds;
	struct tfk_err err;
	char map[700], cls[700];
	const struct tfk_ds_item *it;

	snprintf(map, sizeof(map), "%s/map.csv", tap_tmpdir());
	snprintf(cls, sizeof(cls), "%s/mapclasses.txt", tap_tmpdir());
	o.label_map = map;
	sh("printf 'filename,labels\\r\\na/b.jpg,cat;dog\\r\\n\\n\"a/a b/c.jpeg\","
	   "\" dog \"\\nb/1.gif,\\nnothere.jpg,cat\\n./a/y.png,dog;dog\\n' > %s",
	   map);
	is_int(tfk_ds_open(&ds, root, &o, &err), 0, "label map");
	is_str(class_list(ds), "cat,dog", "classes: names used, sorted");
	is_str(listing(ds), "-1:a/b.jpg,-1:a/y.png,-1:a/a b/c.jpeg,-1:b/1.gif",
	       "files named by the map, in Keras order");
	it = &ds->items[0];
	ok(it->n_labels == 2 && it->labels[0] == 0 && it->labels[1] == 1,
	   "a/b.jpg: cat and dog");
	it = &ds->items[1];
	ok(it->n_labels == 1 && it->labels[0] == 1, "a/y.png: dog once");
	it = &ds->items[2];
	ok(it->n_labels == 1 && it->labels[0] == 1, "quoted name, trimmed label");
	is_int(ds->items[3].n_labels, 0, "no labels is allowed");
	is_int(ds->n_unmapped, 8, "8 files not in the map");
	is_int(ds->n_missing, 1, "1 map line naming no file");
	tfk_ds_close(ds);

	sh("printf 'dog\\ncat\\n' > %s", cls);
	o.class_file = cls;
	is_int(tfk_ds_open(&ds, root, &o, &err), 0, "label map with class file");
	is_str(class_list(ds), "dog,cat", "class file order");
	ok(ds->items[0].labels[0] == 1 && ds->items[0].labels[1] == 0,
	   "indices follow it");
	tfk_ds_close(ds);
	sh("printf 'dog\\n' > %s", cls);
	is_int(tfk_ds_open(&ds, root, &o, &err), TFK_ECORRUPT,
	       "a label not in the class file");
	ok(strstr(err.msg, "map.csv:2: class 'cat' is not in"), "%s", err.msg);
	o.class_file = NULL;

	sh("printf 'x.jpg,a\\ny.jpg,a,b\\n' > %s", map);
	is_int(tfk_ds_open(&ds, root, &o, &err), TFK_ECORRUPT, "three fields");
	ok(strstr(err.msg, "map.csv:2: expected 2 fields"), "%s", err.msg);
	sh("printf 'x.jpg,a\\n\"y.jpg,a\\n' > %s", map);
	is_int(tfk_ds_open(&ds, root, &o, &err), TFK_ECORRUPT, "open quote");
	ok(strstr(err.msg, "map.csv:2: bad quoting"), "%s", err.msg);
	sh("printf 'x.jpg,a\\nx.jpg,b\\n' > %s", map);
	is_int(tfk_ds_open(&ds, root, &o, &err), TFK_ECORRUPT, "duplicate line");
	ok(strstr(err.msg, "map.csv:2: 'x.jpg' listed twice"), "%s", err.msg);
	sh("printf 'x.jpg\\n' > %s", map);
	is_int(tfk_ds_open(&ds, root, &o, &err), TFK_ECORRUPT, "one field");
	sh("printf '../x.jpg,a\\n' > %s", map);
	is_int(tfk_ds_open(&ds, root, &o, &err), TFK_ECORRUPT, "path outside");
	ok(strstr(err.msg, "bad file name '../x.jpg'"), "%s", err.msg);
	o.label_map = "/nonexistent/map.csv";
	is_int(tfk_ds_open(&ds, root, &o, &err), TFK_EIO, "missing map");
	ok(strstr(err.msg, "/nonexistent/map.csv: cannot open"), "%s", err.msg);
}

static void archives(void)
{
	struct tfk_ds_opts o = opts(TFK_DS_INFERRED);
	struct tfk_dataset *ds;
	struct tfk_err err;
	char want[4096], path[700];
	static const char *const kinds[] = {
		"top.tgz", "top.tar", "top.zip", "flat.tar.gz", "flat.zip",
		"dot.tar"
	};

	sh("cd %s && tar czf top.tgz flowers && tar cf top.tar flowers && "
	   "zip -qr top.zip flowers && tar czf flat.tar.gz -C flowers daisy "
	   "roses tulips && (cd flowers && zip -qr ../flat.zip daisy roses "
	   "tulips) && tar cf dot.tar -C flowers .", tap_tmpdir());
	is_int(tfk_ds_open(&ds, flowers, &o, &err), 0, "the directory");
	snprintf(want, sizeof(want), "%s", listing(ds));
	is_str(class_list(ds), "daisy,roses,tulips", "an empty class counts");
	is_int(ds->n_items, 15, "15 images");
	tfk_ds_close(ds);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", tap_tmpdir(), kinds[i]);
		n_warn = 0;
		is_int(tfk_ds_open(&ds, path, &o, &err), 0, "%s: indexed", kinds[i]);
		if (!ds) {
			tap_diag("%s", err.msg);
			continue;
		}
		ok(ds->archive, "%s: is an archive", kinds[i]);
		is_str(class_list(ds), "daisy,roses,tulips", "%s: classes",
		       kinds[i]);
		is_str(listing(ds), want, "%s: same list as the directory",
		       kinds[i]);
		if (!strncmp(kinds[i], "top", 3))
			is_str(ds->top, "flowers", "%s: top directory stripped",
			       kinds[i]);
		is_int(n_warn, 0, "%s: no warnings", kinds[i]);
		tfk_ds_close(ds);
	}

	/* a label map over an archive names paths below its top directory */
	{
		struct tfk_ds_opts om = opts(TFK_DS_MAP);
		char map[700];

		snprintf(map, sizeof(map), "%s/arcmap.csv", tap_tmpdir());
		sh("printf 'daisy/deep/3.png,b;a\nroses/x10.bmp,a\n' > %s", map);
		om.label_map = map;
		snprintf(path, sizeof(path), "%s/top.zip", tap_tmpdir());
		is_int(tfk_ds_open(&ds, path, &om, &err), 0, "label map on a zip");
		is_str(listing(ds), "-1:daisy/deep/3.png,-1:roses/x10.bmp",
		       "top directory stripped, mapped files only");
		ok(ds->n_items == 2 && ds->items[0].n_labels == 2 &&
		   ds->items[0].labels[0] == 1 && ds->items[0].labels[1] == 0,
		   "labels from the map");
		is_int(ds->n_unmapped, 13, "13 images not in the map");
		tfk_ds_close(ds);
	}

	/* a single class and no top directory: the directory is the class;
	 * with images in a subdirectory it is the root */
	sh("cd %s && tar cf one.tar -C flowers roses && "
	   "tar cf onedeep.tar -C flowers daisy", tap_tmpdir());
	snprintf(path, sizeof(path), "%s/one.tar", tap_tmpdir());
	is_int(tfk_ds_open(&ds, path, &o, &err), 0, "single class archive");
	is_str(class_list(ds), "roses", "its directory is the class");
	is_int(ds->n_items, 12, "12 files");
	tfk_ds_close(ds);
	snprintf(path, sizeof(path), "%s/onedeep.tar", tap_tmpdir());
	is_int(tfk_ds_open(&ds, path, &o, &err), 0, "top with a subdirectory");
	is_str(class_list(ds), "deep", "is the root");
	is_str(listing(ds), "0:deep/3.png", "its own files are not in a class");
	tfk_ds_close(ds);
	o.exts = tfk_ds_text_exts;
	sh("cd %s && mkdir -p t2/top/c && printf x > t2/top/c/a.txt && "
	   "printf r > t2/top/README.txt && tar czf t2.tgz -C t2 top",
	   tap_tmpdir());
	snprintf(path, sizeof(path), "%s/t2.tgz", tap_tmpdir());
	is_int(tfk_ds_open(&ds, path, &o, &err), 0, "text archive");
	ok(ds->top && !strcmp(ds->top, "top") && !strcmp(listing(ds), "0:c/a.txt"),
	   "README.txt in the top directory does not make it a class");
	tfk_ds_close(ds);
	o.exts = tfk_ds_image_exts;

	/* unsafe names, symlinks, non-UTF-8 and duplicates inside a tar */
	sh("cd %s && %s -c 'import tarfile, io\n"
	   "t = tarfile.open(\"odd.tar\", \"w\")\n"
	   "def add(n, d, **kw):\n"
	   " i = tarfile.TarInfo(n); i.size = len(d)\n"
	   " [setattr(i, k, v) for k, v in kw.items()]\n"
	   " t.addfile(i, io.BytesIO(d))\n"
	   "add(\"c/a.jpg\", b\"first\")\n"
	   "add(\"../evil.jpg\", b\"x\")\n"
	   "add(\"c/l.jpg\", b\"\", type=tarfile.SYMTYPE, linkname=\"a.jpg\")\n"
	   "add(\"c/b.jpg\", b\"bb\")\n"
	   "add(\"c/a.jpg\", b\"second\")\n"
	   "t.close()\n"
	   "t = tarfile.open(\"odd.tar\", \"a\", encoding=\"latin-1\", "
	   "format=tarfile.GNU_FORMAT)\n"
	   "add(\"c/\\xff.jpg\", b\"y\")\n"
	   "t.close()'", tap_tmpdir(), py());
	snprintf(path, sizeof(path), "%s/odd.tar", tap_tmpdir());
	n_warn = 0;
	is_int(tfk_ds_open(&ds, path, &o, &err), 0, "odd tar");
	is_str(listing(ds), "0:c/a.jpg,0:c/b.jpg", "safe regular files only");
	is_int(ds->items[0].member, 4, "a later member replaces one of the same name");
	is_int(ds->items[0].size, 6, "its size from the header");
	is_int(ds->n_warnings, 4, "unsafe, link, duplicate, non-utf-8 reported");
	is_int(n_warn, 4, "through the callback");
	tfk_ds_close(ds);

	/* a zip with UTF-8 names (its flag set, as Python writes them) */
	sh("cd %s && %s -c 'import zipfile\n"
	   "z = zipfile.ZipFile(\"utf.zip\", \"w\")\n"
	   "z.writestr(\"fleur/\\u00e9t\\u00e9.jpg\", b\"e\")\n"
	   "z.writestr(\"fleur/\\u6f22.png\", b\"k\")\n"
	   "z.close()'", tap_tmpdir(), py());
	snprintf(path, sizeof(path), "%s/utf.zip", tap_tmpdir());
	is_int(tfk_ds_open(&ds, path, &o, &err), 0, "zip with UTF-8 names");
	is_str(listing(ds), "0:fleur/\xc3\xa9t\xc3\xa9.jpg,0:fleur/\xe6\xbc\xa2.png",
	       "names as UTF-8");
	tfk_ds_close(ds);

	/* not an archive, and a truncated one */
	sh("cd %s && printf 'just some text\\n' > junk.tgz && "
	   "head -c 300 top.tgz > cut.tgz", tap_tmpdir());
	snprintf(path, sizeof(path), "%s/junk.tgz", tap_tmpdir());
	is_int(tfk_ds_open(&ds, path, &o, &err), TFK_ECORRUPT, "not an archive");
	ok(strstr(err.msg, "junk.tgz: not a directory nor a tar or zip archive"),
	   "%s", err.msg);
	snprintf(path, sizeof(path), "%s/cut.tgz", tap_tmpdir());
	is_int(tfk_ds_open(&ds, path, &o, &err), TFK_ECORRUPT, "truncated tgz");
	ok(strstr(err.msg, "cut.tgz: ") && strstr(err.msg, "truncated"), "%s",
	   err.msg);
}

static void shuffle_and_split(void)
{
	size_t v[100000], i;
	static const size_t w1337[] = { 6, 3, 0, 4, 5, 2, 1, 9, 8, 7 };
	static const size_t w0[] = { 6, 2, 1, 3, 0, 5, 4 };
	static const size_t w42[] = { 0, 17, 15, 1, 8, 5, 11, 3, 18, 16, 13,
				      2, 9, 19, 4, 12, 7, 10, 14, 6 };
	static const size_t wmax[] = { 11, 8, 5, 9, 1, 10, 6, 0, 4, 7, 2, 3 };
	unsigned long long sum = 0;
	int good;

#define PERM(seed, n, want) do { \
		for (i = 0; i < (n); i++) \
			v[i] = i; \
		tfk_ds_shuffle_index(v, (n), (seed)); \
		good = 1; \
		for (i = 0; i < (n); i++) \
			good &= v[i] == (want)[i]; \
		ok(good, "RandomState(%lu).shuffle(range(%d)) as numpy", \
		   (unsigned long)(seed), (int)(n)); \
	} while (0)
	PERM(1337u, 10, w1337);
	PERM(0u, 7, w0);
	PERM(42u, 20, w42);
	PERM(4294967295u, 12, wmax);
	for (i = 0; i < 100000; i++)
		v[i] = i;
	tfk_ds_shuffle_index(v, 100000, 123);
	for (i = 0; i < 100000; i++)
		sum = (sum + i * v[i]) % 1000000007ull;
	ok(v[0] == 42083 && v[1] == 71825 && v[99999] == 15725 &&
	   sum == 38323511, "100000 items, seed 123: as numpy");

	is_int(tfk_ds_val_count(10, 0.2), 2, "int(0.2 * 10)");
	is_int(tfk_ds_val_count(10, 0.3), 3, "int(0.3 * 10)");
	is_int(tfk_ds_val_count(100, 0.29), 28, "int(0.29 * 100) = 28 in floats");
	is_int(tfk_ds_val_count(3, 0.1), 0, "int(0.1 * 3) = 0");
	is_int(tfk_ds_val_count(1000, 0.999), 999, "int(0.999 * 1000)");
	is_int(tfk_ds_val_count(5, 0), 0, "no split");
	is_int(tfk_ds_val_count(5, 1.0), 5, "everything");

	{
		struct tfk_dataset fake;
		struct tfk_err err;
		size_t *sel, n_sel, n_first;
		char s[256];

		memset(&fake, 0, sizeof(fake));
		fake.n_items = 10;
#define SEL(sub, f, si, sn, want, wfirst) do { \
		size_t k_ = 0; \
		tfk_ds_select(&fake, (sub), (f), (si), (sn), &sel, &n_sel, \
			      &n_first, &err); \
		s[0] = '\0'; \
		for (i = 0; i < n_sel; i++) \
			k_ += (size_t)snprintf(s + k_, sizeof(s) - k_, "%zu ", \
					       sel[i]); \
		is_str(s, (want), "select subset %d, %g, shard %d/%d", \
		       (sub), (f), (si), (sn)); \
		is_int(n_first, (wfirst), "  first part"); \
		tfk_free(sel); \
	} while (0)
		SEL(TFK_DS_ALL, 0.0, 0, 1, "0 1 2 3 4 5 6 7 8 9 ", 10);
		SEL(TFK_DS_TRAINING, 0.3, 0, 1, "0 1 2 3 4 5 6 ", 7);
		SEL(TFK_DS_VALIDATION, 0.3, 0, 1, "7 8 9 ", 3);
		SEL(TFK_DS_BOTH, 0.3, 0, 1, "0 1 2 3 4 5 6 7 8 9 ", 7);
		SEL(TFK_DS_BOTH, 0.3, 1, 2, "1 3 5 8 ", 3);
		SEL(TFK_DS_TRAINING, 0.05, 0, 3, "0 3 6 9 ", 4);
		SEL(TFK_DS_VALIDATION, 0.05, 0, 3, "", 0);
		ok(tfk_ds_select(&fake, TFK_DS_ALL, 0, 2, 2, &sel, &n_sel,
				 &n_first, &err) == TFK_EINVAL, "shard 2/2 refused");
	}
	{
		struct tfk_ds_opts o = opts(TFK_DS_INFERRED);
		struct tfk_dataset *ds;
		struct tfk_err err;
		char before[4096];

		tfk_ds_open(&ds, flowers, &o, &err);
		snprintf(before, sizeof(before), "%s", listing(ds));
		is_int(tfk_ds_shuffle(ds, 1337, &err), 0, "shuffle items");
		ok(strcmp(before, listing(ds)), "order changed");
		is_str(ds->items[0].path, "roses/x10.bmp",
		       "first item is numpy's pick (index 5 of 15)");
		tfk_ds_close(ds);
	}
}

/* Runs ------------------------------------------------------------------ */

struct got {
	char s[8192];
	size_t len, next;
	int bad_order, fails;
	int stop_at;
};

static int conv_copy(void *ctx, const struct tfk_ds_item *it,
		     const uint8_t *data, size_t len, struct tfk_buf *rec,
		     struct tfk_err *err)
{
	if (len >= 3 && !memcmp(data, "BAD", 3))
		return tfk_errf(err, TFK_ECORRUPT, "bad content");
	tfk_buf_add(rec, it->path, strlen(it->path));
	tfk_buf_addc(rec, '=');
	tfk_buf_add(rec, data, len);
	return 0;
}

static int emit_collect(void *ctx, size_t k, const struct tfk_ds_item *it,
			int status, const uint8_t *rec, size_t len,
			const struct tfk_err *err)
{
	struct got *g = ctx;

	if (k != g->next++)
		g->bad_order = 1;
	if (status) {
		g->fails++;
		g->len += (size_t)snprintf(g->s + g->len, sizeof(g->s) - g->len,
					   "[%s]", err->msg);
	} else {
		g->len += (size_t)snprintf(g->s + g->len, sizeof(g->s) - g->len,
					   "%.*s;", (int)len, (const char *)rec);
	}
	return g->stop_at && (int)k + 1 == g->stop_at ? 7 : 0;
}

static void run_one(const char *path, int threads, uint64_t hold,
		    const char *want, const char *what)
{
	struct tfk_ds_opts o = opts(TFK_DS_INFERRED);
	struct tfk_dataset *ds;
	struct tfk_err err;
	struct got g;
	struct tfk_ds_sink sink = { conv_copy, emit_collect, &g, threads, hold };
	size_t sel[64], n;
	int rc;

	memset(&g, 0, sizeof(g));
	if (tfk_ds_open(&ds, path, &o, &err)) {
		ok(0, "%s: %s", what, err.msg);
		return;
	}
	tfk_ds_shuffle(ds, 7, &err);
	/* select the items in reverse, leaving out the last */
	for (n = 0; n + 1 < ds->n_items; n++)
		sel[n] = ds->n_items - 1 - n;
	rc = tfk_ds_run(ds, sel, n, &sink, &err);
	is_int(rc, 0, "%s: run", what);
	ok(!g.bad_order && g.next == n, "%s: emitted in order", what);
	is_str(g.s, want, "%s: records and failures", what);
	tfk_ds_close(ds);
}

static void runs(void)
{
	char want[8192], path[700];
	struct tfk_ds_opts o = opts(TFK_DS_INFERRED);
	struct tfk_dataset *ds;
	struct tfk_err err;
	struct got g;
	struct tfk_ds_sink sink = { conv_copy, emit_collect, &g, 2, 0 };
	size_t sel[64];
	int rc;

	/* expected: from the directory on one thread */
	memset(&g, 0, sizeof(g));
	tfk_ds_open(&ds, flowers, &o, &err);
	tfk_ds_shuffle(ds, 7, &err);
	for (size_t n = 0; n + 1 < ds->n_items; n++)
		sel[n] = ds->n_items - 1 - n;
	sink.threads = 1;
	tfk_ds_run(ds, sel, ds->n_items - 1, &sink, &err);
	snprintf(want, sizeof(want), "%s", g.s);
	ok(strstr(want, "roses/r1.jpg: bad content]") &&
	   strstr(want, "daisy/deep/3.png=d3;"),
	   "directory run: contents and a failure naming the file");
	is_int(g.fails, 1, "one failure");
	tfk_ds_close(ds);

	run_one(flowers, 3, 0, want, "directory, 3 threads");
	snprintf(path, sizeof(path), "%s/top.tgz", tap_tmpdir());
	/* the archive names its failures inside the archive */
	{
		char w2[8192];
		const char *p = want;
		size_t k = 0;
		char dirpfx[800], arcpfx[800];

		snprintf(dirpfx, sizeof(dirpfx), "%s/roses/r1.jpg", flowers);
		snprintf(arcpfx, sizeof(arcpfx), "%s: flowers/roses/r1.jpg", path);
		while (*p) {
			if (!strncmp(p, dirpfx, strlen(dirpfx))) {
				k += (size_t)snprintf(w2 + k, sizeof(w2) - k, "%s",
						      arcpfx);
				p += strlen(dirpfx);
			} else {
				w2[k++] = *p++;
			}
		}
		w2[k] = '\0';
		run_one(path, 1, 0, w2, "tgz, 1 thread");
		run_one(path, 3, 0, w2, "tgz, 3 threads");
		run_one(path, 3, 8, w2, "tgz, 3 threads, spilling after 8 bytes");
		snprintf(path, sizeof(path), "%s/top.zip", tap_tmpdir());
		snprintf(arcpfx, sizeof(arcpfx), "%s: flowers/roses/r1.jpg", path);
		p = want;
		k = 0;
		while (*p) {
			if (!strncmp(p, dirpfx, strlen(dirpfx))) {
				k += (size_t)snprintf(w2 + k, sizeof(w2) - k, "%s",
						      arcpfx);
				p += strlen(dirpfx);
			} else {
				w2[k++] = *p++;
			}
		}
		w2[k] = '\0';
		run_one(path, 2, 1, w2, "zip, 2 threads, spilling everything");
	}

	/* emit stops the run; a file gone since indexing is an item error */
	memset(&g, 0, sizeof(g));
	g.stop_at = 3;
	tfk_ds_open(&ds, flowers, &o, &err);
	for (size_t n = 0; n < ds->n_items; n++)
		sel[n] = n;
	sink.threads = 2;
	rc = tfk_ds_run(ds, sel, ds->n_items, &sink, &err);
	ok(rc == 7 && g.next == 3, "emit's value stops the run (%d)", rc);
	sh("mv %s/daisy/2.jpg %s/gone", flowers, tap_tmpdir());
	memset(&g, 0, sizeof(g));
	rc = tfk_ds_run(ds, sel, ds->n_items, &sink, &err);
	ok(rc == 0 && g.fails == 2 && strstr(g.s, "daisy/2.jpg: cannot open: No "
					     "such file"), "vanished file: %s", g.s);
	sh("mv %s/gone %s/daisy/2.jpg", tap_tmpdir(), flowers);
	tfk_ds_close(ds);

	/* an archive whose data is damaged after the headers were read */
	sh("cd %s && cp top.tgz dmg.tgz", tap_tmpdir());
	snprintf(path, sizeof(path), "%s/dmg.tgz", tap_tmpdir());
	tfk_ds_open(&ds, path, &o, &err);
	sh("cd %s && head -c 200 top.tgz > dmg.tgz", tap_tmpdir());
	memset(&g, 0, sizeof(g));
	for (size_t n = 0; n < ds->n_items; n++)
		sel[n] = n;
	rc = tfk_ds_run(ds, sel, ds->n_items, &sink, &err);
	ok(rc < 0 && strstr(err.msg, "dmg.tgz"), "damaged archive stops the "
	   "run: %s", err.msg);
	tfk_ds_close(ds);
}

/* tfk_ds_open of path, for alloc_sweep. */
struct ds_open {
	struct tfk_dataset *ds;
	const char *path;
	struct tfk_ds_opts o;
	struct tfk_err err;
};

static int ds_open_call(void *ctx)
{
	struct ds_open *a = ctx;

	return tfk_ds_open(&a->ds, a->path, &a->o, &a->err);
}

static void alloc_failures(void)
{
	struct ds_open a = { NULL, root, opts(TFK_DS_INFERRED), { 0, "" } };
	char path[700];
	long k;
	int clean;

	a.o.warn = NULL;
	clean = alloc_sweep(400, ds_open_call, NULL, &a, &k);
	ok(clean, "directory: every failed allocation is ENOMEM "
	   "(%ld tried)", k);
	tfk_ds_close(a.ds);
	snprintf(path, sizeof(path), "%s/top.zip", tap_tmpdir());
	a.path = path;
	clean = alloc_sweep(400, ds_open_call, NULL, &a, &k);
	ok(clean, "archive: every failed allocation is ENOMEM "
	   "(%ld tried)", k);
	tfk_ds_close(a.ds);
}

int main(void)
{
	make_trees();
	dir_inferred();
	dir_none_and_classes();
	unreadable_dir();
	label_map();
	archives();
	shuffle_and_split();
	runs();
	alloc_failures();
	sh("rm -rf %s", tap_tmpdir());
	return tap_done();
}
