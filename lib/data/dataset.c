/*
 * dataset.c - index a labelled file set (directory or archive) the way
 * Keras does, shuffle it the way numpy does, and feed its files to a
 * converter in a fixed order on any number of threads (see dataset.h).
 *
 * Indexing collects (path, size, member) entries, then one function
 * assigns classes and sorts, so directories and archives share the
 * Keras rules and give the same list. The directory walk reads d_type
 * and stats only links and unknown types: a stat per file costs more
 * than the walk itself on large trees.
 *
 * Archives: reading the data of member i must follow member i-1, so in
 * tfk_ds_run each worker takes its turn at the archive (a mutex and a
 * turn counter), copies its member out and converts it outside the
 * lock; reading and decoding overlap. This relies on tfk_pool_run
 * starting item i only after items before it have started, which an
 * ordered pool does. Extracting to disk was rejected (the brief: never);
 * reading every member into memory first was rejected (archives of
 * many GB). Records are emitted in selection order through a reorder
 * store: memory, then an unlinked spill file.
 */
#include "data/dataset.h"
#include "util/alloc.h"
#include "util/pool.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <locale.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const tfk_ds_image_exts[] = {
	".jpeg", ".jpg", ".png", ".bmp", ".gif", NULL
};
const char *const tfk_ds_text_exts[] = { ".txt", NULL };

/* A label map line, after its class names are resolved. */
struct map_ent {
	char *path;
	char **names;		/* until resolved */
	size_t n_names;
	uint32_t *labels;
	size_t n_labels;
	size_t line;
	int used;
};

struct tfk_ds_priv {
	struct map_ent *map;
	size_t n_map;
};

/* Small helpers -------------------------------------------------------- */

static void warnf(struct tfk_dataset *ds, const struct tfk_ds_opts *o,
		  const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void warnf(struct tfk_dataset *ds, const struct tfk_ds_opts *o,
		  const char *fmt, ...)
{
	char msg[TFK_ERR_MSG_MAX];
	va_list ap;

	ds->n_warnings++;
	if (!o->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o->warn(o->warn_ctx, msg);
}

static int ext_ok(const char *name, const char *const *exts)
{
	size_t n = strlen(name);

	for (; exts && *exts; exts++) {
		size_t k = strlen(*exts), i;

		if (k > n)
			continue;
		for (i = 0; i < k; i++) {
			int c = (unsigned char)name[n - k + i];

			if (c >= 'A' && c <= 'Z')
				c += 'a' - 'A';
			if (c != (*exts)[i])
				break;
		}
		if (i == k)
			return 1;
	}
	return 0;
}

static int utf8_ok(const char *s)
{
	return tfk_utf8_valid((const uint8_t *)s, strlen(s));
}

/* Growable arrays of items and of strings. */
struct items {
	struct tfk_ds_item *v;
	size_t n, cap;
};

static int items_push(struct items *a, char *path, long label, uint64_t size,
		      uint64_t member)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 256;
		struct tfk_ds_item *v = tfk_realloc(a->v, cap * sizeof(*v));

		if (!v)
			return TFK_ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	memset(&a->v[a->n], 0, sizeof(a->v[0]));
	a->v[a->n].path = path;
	a->v[a->n].label = label;
	a->v[a->n].size = size;
	a->v[a->n].member = member;
	a->n++;
	return 0;
}

static void items_free(struct items *a)
{
	for (size_t i = 0; i < a->n; i++)
		tfk_free(a->v[i].path);
	tfk_free(a->v);
	memset(a, 0, sizeof(*a));
}

struct strs {
	char **v;
	size_t n, cap;
};

static int strs_push(struct strs *a, const char *s, size_t len)
{
	char *c;

	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		char **v = tfk_realloc(a->v, cap * sizeof(*v));

		if (!v)
			return TFK_ENOMEM;
		a->v = v;
		a->cap = cap;
	}
	c = tfk_malloc(len + 1);
	if (!c)
		return TFK_ENOMEM;
	memcpy(c, s, len);
	c[len] = '\0';
	a->v[a->n++] = c;
	return 0;
}

static void strs_free(struct strs *a)
{
	for (size_t i = 0; i < a->n; i++)
		tfk_free(a->v[i]);
	tfk_free(a->v);
	memset(a, 0, sizeof(*a));
}

/* qsort and bsearch with a NULL array are undefined even for n = 0. */
static void sort(void *v, size_t n, size_t size,
		 int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(v, n, size, cmp);
}

static void *find(const void *key, const void *v, size_t n, size_t size,
		  int (*cmp)(const void *, const void *))
{
	return n ? bsearch(key, v, n, size, cmp) : NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort and drop duplicates (strcmp is byte order: Python's for UTF-8). */
static void strs_sort_unique(struct strs *a)
{
	size_t i, k = 0;

	sort(a->v, a->n, sizeof(a->v[0]), cmp_str);
	for (i = 0; i < a->n; i++) {
		if (k && !strcmp(a->v[k - 1], a->v[i]))
			tfk_free(a->v[i]);
		else
			a->v[k++] = a->v[i];
	}
	a->n = k;
}

static long strs_find(const struct strs *a, const char *s)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->v[i], s))
			return (long)i;
	return -1;
}

/*
 * Keras' order: by class, then by the directory part (a directory
 * before its subdirectories: a shorter equal prefix sorts first, as
 * Python compares the walk's root strings), then by file name.
 */
static int cmp_item(const void *pa, const void *pb)
{
	const struct tfk_ds_item *a = pa, *b = pb;
	const char *sa = strrchr(a->path, '/'), *sb = strrchr(b->path, '/');
	size_t da = sa ? (size_t)(sa - a->path) : 0;
	size_t db = sb ? (size_t)(sb - b->path) : 0;
	int c;

	if (a->label != b->label)
		return a->label < b->label ? -1 : 1;
	c = memcmp(a->path, b->path, da < db ? da : db);
	if (c)
		return c;
	if (da != db)
		return da < db ? -1 : 1;
	c = strcmp(sa ? sa + 1 : a->path, sb ? sb + 1 : b->path);
	if (c)
		return c;
	return a->member < b->member ? -1 : a->member > b->member;
}

/* Read a whole regular file (or anything read(2) can drain) into b. */
static int slurp(const char *path, struct tfk_buf *b, struct tfk_err *err)
{
	struct stat st = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return tfk_errf(err, TFK_EIO, "cannot open: %s", strerror(errno));
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		return tfk_errf(err, TFK_EIO, "is a directory");
	}
	if (S_ISREG(st.st_mode) && tfk_buf_reserve(b, (size_t)st.st_size + 1)) {
		close(fd);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	for (;;) {
		ssize_t r;

		if (b->cap - b->len < 4096 && tfk_buf_reserve(b, 65536)) {
			close(fd);
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		}
		r = read(fd, b->data + b->len, b->cap - b->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			close(fd);
			return tfk_errf(err, TFK_EIO, "read error: %s",
					strerror(e));
		}
		if (r == 0)
			break;
		b->len += (size_t)r;
	}
	close(fd);
	return 0;
}

/* Directory walk ------------------------------------------------------- */

struct walk {
	struct tfk_dataset *ds;
	const struct tfk_ds_opts *o;
	struct items *out;
	char *path;		/* root "/" rel, NUL-terminated */
	size_t cap;
	size_t rel;		/* offset of rel inside path */
	long label;
	dev_t dev[64];		/* directories being walked: loop check */
	ino_t ino[64];
	int depth;
	struct tfk_err *err;
};

static int path_set(struct walk *w, size_t len, const char *name)
{
	size_t n = strlen(name);

	if (len + n + 2 > w->cap) {
		size_t cap = (len + n + 2) * 2;
		char *p = tfk_realloc(w->path, cap);

		if (!p)
			return tfk_errf(w->err, TFK_ENOMEM, "out of memory");
		w->path = p;
		w->cap = cap;
	}
	w->path[len] = '/';
	memcpy(w->path + len + 1, name, n + 1);
	return 0;
}

static int walk_dir(struct walk *w, size_t len);

static int walk_entry(struct walk *w, int dfd, size_t len,
		      const struct dirent *de)
{
	const char *name = de->d_name;
	size_t clen = len + 1 + strlen(name);
	int type = de->d_type, rc;
	struct stat st;

	if ((rc = path_set(w, len, name)))
		return rc;
	if (!utf8_ok(name)) {
		warnf(w->ds, w->o, "%s: name is not utf-8: skipped", w->path);
		return 0;
	}
	if (type == DT_UNKNOWN) {
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
			warnf(w->ds, w->o, "%s: cannot stat: %s", w->path,
			      strerror(errno));
			return 0;
		}
		type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ?
			DT_REG : S_ISLNK(st.st_mode) ? DT_LNK : DT_FIFO;
	}
	if (type == DT_LNK) {
		if (fstatat(dfd, name, &st, 0)) {
			if (ext_ok(name, w->o->exts) || errno == ELOOP)
				warnf(w->ds, w->o, "%s: %s: skipped", w->path,
				      errno == ELOOP ? "symlink loop" :
				      errno == ENOENT ? "broken symlink" :
				      strerror(errno));
			return 0;
		}
		if (S_ISDIR(st.st_mode)) {
			if (!w->o->follow_links)
				return 0;
			return walk_dir(w, clen);
		}
		type = S_ISREG(st.st_mode) ? DT_REG : DT_FIFO;
	}
	if (type == DT_DIR)
		return walk_dir(w, clen);
	if (!ext_ok(name, w->o->exts))
		return 0;
	if (type != DT_REG) {
		warnf(w->ds, w->o, "%s: not a regular file: skipped", w->path);
		return 0;
	}
	{
		char *rel = tfk_strdup(w->path + w->rel);

		if (!rel || items_push(w->out, rel, w->label, 0, 0)) {
			tfk_free(rel);
			return tfk_errf(w->err, TFK_ENOMEM, "out of memory");
		}
	}
	return 0;
}

/* Walk the directory path[0..len); errors only for out of memory. */
static int walk_dir(struct walk *w, size_t len)
{
	struct stat st = { 0 };
	struct dirent *de;
	DIR *d;
	int rc = 0, i;

	w->path[len] = '\0';
	d = opendir(w->path);
	if (!d) {
		warnf(w->ds, w->o, "%s: unreadable directory: %s: skipped",
		      w->path, strerror(errno));
		return 0;
	}
	if (fstat(dirfd(d), &st) == 0) {
		for (i = 0; i < w->depth; i++) {
			if (w->dev[i] == st.st_dev && w->ino[i] == st.st_ino) {
				warnf(w->ds, w->o, "%s: symlink loop: skipped",
				      w->path);
				closedir(d);
				return 0;
			}
		}
	}
	if (w->depth == (int)(sizeof(w->dev) / sizeof(w->dev[0]))) {
		warnf(w->ds, w->o, "%s: directories nested too deep: skipped",
		      w->path);
		closedir(d);
		return 0;
	}
	w->dev[w->depth] = st.st_dev;
	w->ino[w->depth] = st.st_ino;
	w->depth++;
	while (!rc) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno) {
				w->path[len] = '\0';
				warnf(w->ds, w->o, "%s: read error: %s",
				      w->path, strerror(errno));
			}
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		rc = walk_entry(w, dirfd(d), len, de);
	}
	w->depth--;
	closedir(d);
	return rc;
}

/* Walk root/sub (sub "" for the root itself) into out with label. */
static int walk_tree(struct tfk_dataset *ds, const struct tfk_ds_opts *o,
		     struct items *out, const char *sub, long label,
		     struct tfk_err *err)
{
	struct walk w;
	size_t rlen = strlen(ds->root), len;
	int rc;

	while (rlen > 1 && ds->root[rlen - 1] == '/')
		rlen--;
	memset(&w, 0, sizeof(w));
	w.ds = ds;
	w.o = o;
	w.out = out;
	w.label = label;
	w.err = err;
	w.cap = rlen + strlen(sub) + 256;
	w.path = tfk_malloc(w.cap);
	if (!w.path)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	memcpy(w.path, ds->root, rlen);
	w.path[rlen] = '\0';
	w.rel = rlen + 1;
	len = rlen;
	if (sub[0]) {
		if ((rc = path_set(&w, rlen, sub))) {
			tfk_free(w.path);
			return rc;
		}
		len = rlen + 1 + strlen(sub);
	}
	rc = walk_dir(&w, len);
	tfk_free(w.path);
	return rc;
}

/* The class directories of a directory root, sorted. */
static int list_classes(struct tfk_dataset *ds, const struct tfk_ds_opts *o,
			struct strs *out, struct tfk_err *err)
{
	DIR *d = opendir(ds->root);
	struct dirent *de;

	if (!d)
		return tfk_errf(err, TFK_EIO, "%s: cannot read directory: %s",
				ds->root, strerror(errno));
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) ||
		    !S_ISDIR(st.st_mode))
			continue;
		if (!utf8_ok(de->d_name)) {
			warnf(ds, o, "%s/%s: name is not utf-8: skipped",
			      ds->root, de->d_name);
			continue;
		}
		if (strs_push(out, de->d_name, strlen(de->d_name))) {
			closedir(d);
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		}
	}
	closedir(d);
	strs_sort_unique(out);
	return 0;
}

/* Archive index -------------------------------------------------------- */

/*
 * Member name -> normalized relative path: leading "/" and "." and
 * empty components dropped. Returns NULL for ".." (never outside the
 * root) or an empty result; *is_dir from a trailing slash.
 */
static char *norm_path(const char *s, struct tfk_err *err, int *bad)
{
	size_t n = strlen(s), k = 0;
	char *out = tfk_malloc(n + 1);
	const char *p = s;

	*bad = 0;
	if (!out) {
		tfk_errf(err, TFK_ENOMEM, "out of memory");
		return NULL;
	}
	while (*p) {
		const char *e = strchr(p, '/');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == 2 && p[0] == '.' && p[1] == '.') {
			*bad = 1;
			break;
		}
		if (len && !(len == 1 && p[0] == '.')) {
			if (k)
				out[k++] = '/';
			memcpy(out + k, p, len);
			k += len;
		}
		p += len;
		if (*p == '/')
			p++;
	}
	out[k] = '\0';
	if (*bad || k == 0) {
		*bad = 1;
		tfk_free(out);
		return NULL;
	}
	return out;
}

/* The name as stored (tar: raw bytes, checked for UTF-8 by the caller,
 * as a directory walk checks them); a zip's UTF-8 names need the _utf8
 * form, which converts nothing when the C locale cannot hold them. */
static const char *entry_name(struct archive_entry *e)
{
	const char *s = archive_entry_pathname(e);

	return s ? s : archive_entry_pathname_utf8(e);
}

/*
 * libarchive converts member names to the current locale's charset; in
 * the C locale a zip's UTF-8 names do not convert and come back NULL.
 * Archive calls therefore run under a thread-local C.UTF-8 locale
 * (uselocale: the process locale is left alone), where names pass
 * through as bytes and UTF-8 names as UTF-8.
 */
static pthread_once_t loc_once = PTHREAD_ONCE_INIT;
static locale_t loc_utf8;

static void loc_init(void)
{
	loc_utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

static locale_t loc_enter(void)
{
	pthread_once(&loc_once, loc_init);
	return loc_utf8 ? uselocale(loc_utf8) : (locale_t)0;
}

static void loc_leave(locale_t old)
{
	if (old)
		uselocale(old);
}

static struct archive *arc_open(const char *path, struct tfk_err *err)
{
	struct archive *a = archive_read_new();

	if (!a) {
		tfk_errf(err, TFK_ENOMEM, "out of memory");
		return NULL;
	}
	archive_read_support_filter_all(a);
	archive_read_support_format_tar(a);
	archive_read_support_format_gnutar(a);
	archive_read_support_format_zip(a);
	if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK) {
		tfk_errf(err, TFK_ECORRUPT,
			 "%s: not a directory nor a tar or zip archive: %s",
			 path, archive_error_string(a) ?
			 archive_error_string(a) : "unknown format");
		archive_read_free(a);
		return NULL;
	}
	return a;
}

static int n_comps(const char *p)
{
	int n = 1;

	for (; *p; p++)
		n += *p == '/';
	return n;
}

/*
 * One pass over the member headers: regular files into files (path,
 * size, member), directories into dirs. Then strip a single top
 * directory (see dataset.h).
 */
static int arc_scan(struct tfk_dataset *ds, const struct tfk_ds_opts *o,
		    struct items *files, struct strs *dirs, struct tfk_err *err)
{
	locale_t old = loc_enter();
	struct archive *a = arc_open(ds->root, err);
	struct archive_entry *e;
	int r, rc = 0;

	if (!a) {
		loc_leave(old);
		return err->code;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK ||
	       r == ARCHIVE_WARN) {
		uint64_t member = ds->n_members++;
		const char *name = entry_name(e);
		int type = (int)archive_entry_filetype(e), bad;
		char *p;

		if (!name)
			continue;
		p = norm_path(name, err, &bad);
		if (!p) {
			if (!bad) {
				rc = TFK_ENOMEM;
				break;
			}
			if (strcmp(name, ".") && strcmp(name, "./") &&
			    strcmp(name, "/"))
				warnf(ds, o, "%s: %s: unsafe member name: "
				      "skipped", ds->root, name);
			continue;
		}
		if (!utf8_ok(p)) {
			warnf(ds, o, "%s: member %" PRIu64 ": name is not "
			      "utf-8: skipped", ds->root, member);
			tfk_free(p);
			continue;
		}
		if (type == AE_IFDIR) {
			rc = strs_push(dirs, p, strlen(p));
			tfk_free(p);
			if (rc) {
				tfk_errf(err, rc, "out of memory");
				break;
			}
			continue;
		}
		if (type != AE_IFREG || archive_entry_hardlink(e)) {
			const char *base = strrchr(p, '/');

			if (ext_ok(base ? base + 1 : p, o->exts))
				warnf(ds, o, "%s: %s: %s: skipped", ds->root,
				      p, type == AE_IFLNK ? "symbolic link" :
				      archive_entry_hardlink(e) ? "hard link" :
				      "not a regular file");
			tfk_free(p);
			continue;
		}
		if (items_push(files, p, -1, (uint64_t)archive_entry_size(e),
			       member)) {
			tfk_free(p);
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
			break;
		}
	}
	if (!rc && r != ARCHIVE_EOF)
		rc = tfk_errf(err, r == ARCHIVE_FATAL ? TFK_ECORRUPT :
			      TFK_ECORRUPT, "%s: member %" PRIu64 ": %s",
			      ds->root, ds->n_members,
			      archive_error_string(a) ? archive_error_string(a) :
			      "unreadable archive");
	archive_read_free(a);
	loc_leave(old);
	return rc;
}

/* Strip the single top directory all entries share, when it holds the
 * dataset (see dataset.h). */
static int arc_strip_top(struct tfk_dataset *ds, const struct tfk_ds_opts *o,
			 struct items *files, struct strs *dirs,
			 struct tfk_err *err)
{
	const char *first = NULL;
	size_t flen = 0, i;
	int deep = 0;

	for (i = 0; i < files->n + dirs->n; i++) {
		const char *p = i < files->n ? files->v[i].path :
			dirs->v[i - files->n];
		const char *s = strchr(p, '/');
		size_t len = s ? (size_t)(s - p) : strlen(p);

		if (i < files->n && !s)
			return 0;	/* a file at the top level */
		if (!first) {
			first = p;
			flen = len;
		} else if (len != flen || memcmp(p, first, len)) {
			return 0;
		}
		if (i < files->n && n_comps(p) >= 3 &&
		    ext_ok(strrchr(p, '/') + 1, o->exts))
			deep = 1;
	}
	/* With inferred labels the top directory is the root when wanted
	 * files lie in subdirectories of it (its own README.txt or
	 * LICENSE.txt do not matter); else it is the one class (an archive
	 * of "daisy/"). */
	if (!first || (o->mode == TFK_DS_INFERRED && !deep))
		return 0;
	ds->top = tfk_malloc(flen + 1);
	if (!ds->top)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	memcpy(ds->top, first, flen);
	ds->top[flen] = '\0';
	for (i = 0; i < files->n + dirs->n; i++) {
		char *p = i < files->n ? files->v[i].path : dirs->v[i - files->n];
		size_t n = strlen(p);

		if (n <= flen + 1)
			p[0] = '\0';
		else
			memmove(p, p + flen + 1, n - flen);
	}
	return 0;
}

/* Class file and label map -------------------------------------------- */

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* TFK_DS_LIST: the labels of path, one per item; classes are their
 * distinct values as strings, in numeric order. */
static int apply_list(const char *path, struct items *a, struct strs *cls,
		      struct tfk_err *err)
{
	struct tfk_buf b;
	size_t i = 0, line = 0, k = 0, j;
	long *v = NULL;
	int rc;

	tfk_buf_init(&b);
	if ((rc = slurp(path, &b, err))) {
		tfk_err_prefix(err, "%s", path);
		goto out;
	}
	if (!(v = tfk_malloc((a->n ? a->n : 1) * sizeof(*v)))) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto out;
	}
	while (i < b.len) {
		const char *s = (const char *)b.data + i;
		const char *e = memchr(s, '\n', b.len - i);
		size_t n = e ? (size_t)(e - s) : b.len - i;
		char num[24], *end;
		long x;

		line++;
		i += n + 1;
		if (n && s[n - 1] == '\r')
			n--;
		if (!n)
			continue;
		if (n >= sizeof(num) || s[0] < '0' || s[0] > '9') {
			rc = tfk_errf(err, TFK_ECORRUPT, "%s:%zu: expected a label"
				      " from 0 to 2147483647", path, line);
			goto out;
		}
		memcpy(num, s, n);
		num[n] = 0;
		x = strtol(num, &end, 10);
		if (*end || x > 2147483647L) {
			rc = tfk_errf(err, TFK_ECORRUPT, "%s:%zu: expected a label"
				      " from 0 to 2147483647, not '%s'", path,
				      line, num);
			goto out;
		}
		if (k == a->n) {
			k++;
			break;
		}
		a->v[k].label = x;
		v[k++] = x;
	}
	while (i < b.len)	/* count the rest for the message */
		k += b.data[i++] == '\n';
	if (k != a->n) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: %s%zu labels for %zu "
			      "files", path, k > a->n ? "about " : "", k, a->n);
		goto out;
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_long);
	for (j = 0; j < k; j++) {
		char name[24];

		if (j && v[j] == v[j - 1])
			continue;
		snprintf(name, sizeof(name), "%ld", v[j]);
		if ((rc = strs_push(cls, name, strlen(name)))) {
			tfk_errf(err, rc, "out of memory");
			goto out;
		}
	}
out:
	tfk_free(v);
	tfk_buf_release(&b);
	return rc;
}

/* Keras' class_names given as "a,b,c" (--class-names). */
static int split_class_list(const char *list, struct strs *out,
			    struct tfk_err *err)
{
	const char *s = list;
	size_t k = 0;
	int rc;

	for (;;) {
		const char *e = strchr(s, ',');
		size_t n = e ? (size_t)(e - s) : strlen(s);

		k++;
		if (!n)
			return tfk_errf(err, TFK_EINVAL, "--class-names: name "
					"%zu is empty", k);
		if (!tfk_utf8_valid((const uint8_t *)s, n))
			return tfk_errf(err, TFK_EINVAL, "--class-names: name "
					"%zu is not utf-8", k);
		if ((rc = strs_push(out, s, n)))
			return tfk_errf(err, rc, "out of memory");
		if (strs_find(out, out->v[out->n - 1]) != (long)out->n - 1)
			return tfk_errf(err, TFK_EINVAL, "--class-names: class "
					"'%s' listed twice", out->v[out->n - 1]);
		if (!e)
			return 0;
		s = e + 1;
	}
}

static int read_class_file(const char *path, struct strs *out,
			   struct tfk_err *err)
{
	struct tfk_buf b;
	size_t i = 0, line = 0;
	int rc;

	tfk_buf_init(&b);
	if ((rc = slurp(path, &b, err))) {
		tfk_err_prefix(err, "%s", path);
		tfk_buf_release(&b);
		return rc;
	}
	while (i < b.len) {
		const uint8_t *s = b.data + i, *e = memchr(s, '\n', b.len - i);
		size_t n = e ? (size_t)(e - s) : b.len - i;

		line++;
		i += n + 1;
		if (n && s[n - 1] == '\r')
			n--;
		if (!n)
			continue;
		if (!tfk_utf8_valid(s, n) || memchr(s, '\0', n)) {
			rc = tfk_errf(err, TFK_ECORRUPT, "%s:%zu: class name is "
				      "not utf-8", path, line);
			break;
		}
		if ((rc = strs_push(out, (const char *)s, n))) {
			tfk_errf(err, rc, "out of memory");
			break;
		}
		if (strs_find(out, out->v[out->n - 1]) != (long)out->n - 1) {
			rc = tfk_errf(err, TFK_ECORRUPT, "%s:%zu: class '%s' "
				      "listed twice", path, line,
				      out->v[out->n - 1]);
			break;
		}
	}
	tfk_buf_release(&b);
	if (!rc && out->n == 0)
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: no class names", path);
	return rc;
}

/* One CSV field at *pos (RFC 4180); returns 0, 1 when the record ended
 * after it, or -1 for a bad quote. */
static int csv_field(const uint8_t *s, size_t n, size_t *pos, size_t *line,
		     struct tfk_buf *f)
{
	size_t i = *pos;

	tfk_buf_reset(f);
	if (i < n && s[i] == '"') {
		for (i++;; i++) {
			if (i >= n)
				return -1;
			if (s[i] == '"') {
				if (i + 1 < n && s[i + 1] == '"') {
					tfk_buf_addc(f, '"');
					i++;
					continue;
				}
				i++;
				break;
			}
			if (s[i] == '\n')
				(*line)++;
			tfk_buf_addc(f, s[i]);
		}
		if (i < n && s[i] != ',' && s[i] != '\n' && s[i] != '\r')
			return -1;
	} else {
		while (i < n && s[i] != ',' && s[i] != '\n' &&
		       !(s[i] == '\r' && (i + 1 == n || s[i + 1] == '\n'))) {
			if (s[i] == '"')
				return -1;
			tfk_buf_addc(f, s[i++]);
		}
	}
	tfk_buf_addc(f, '\0');
	f->len--;
	if (i < n && s[i] == ',') {
		*pos = i + 1;
		return 0;
	}
	if (i < n && s[i] == '\r')
		i++;
	if (i < n && s[i] == '\n')
		i++;
	*pos = i;
	return 1;
}

static void map_free(struct map_ent *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		tfk_free(m[i].path);
		for (size_t j = 0; j < m[i].n_names; j++)
			tfk_free(m[i].names[j]);
		tfk_free(m[i].names);
		tfk_free(m[i].labels);
	}
	tfk_free(m);
}

static int cmp_map(const void *a, const void *b)
{
	return strcmp(((const struct map_ent *)a)->path,
		      ((const struct map_ent *)b)->path);
}

/* Split "a; b;;c" into trimmed non-empty names. */
static int split_labels(const char *s, struct map_ent *m)
{
	struct strs names = { 0 };

	while (*s) {
		const char *e = strchr(s, ';');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		const char *b = s;

		while (len && (*b == ' ' || *b == '\t')) {
			b++;
			len--;
		}
		while (len && (b[len - 1] == ' ' || b[len - 1] == '\t'))
			len--;
		if (len && strs_push(&names, b, len)) {
			strs_free(&names);
			return TFK_ENOMEM;
		}
		s += e ? (size_t)(e - s) + 1 : strlen(s);
	}
	m->names = names.v;
	m->n_names = names.n;
	return 0;
}

static int read_label_map(const char *path, struct tfk_ds_priv *pv,
			  struct tfk_err *err)
{
	struct tfk_buf b, f0, f1;
	size_t pos = 0, line = 1, cap = 0;
	int rc = 0, first = 1;

	tfk_buf_init(&b);
	tfk_buf_init(&f0);
	tfk_buf_init(&f1);
	if ((rc = slurp(path, &b, err))) {
		tfk_err_prefix(err, "%s", path);
		goto out;
	}
	while (pos < b.len) {
		size_t start = line;
		int r;

		if (b.data[pos] == '\n' || (b.data[pos] == '\r' &&
		    pos + 1 < b.len && b.data[pos + 1] == '\n')) {
			pos += b.data[pos] == '\r' ? 2 : 1;
			line++;
			continue;
		}
		r = csv_field(b.data, b.len, &pos, &line, &f0);
		if (r == 0)
			r = csv_field(b.data, b.len, &pos, &line, &f1);
		else if (r == 1)
			r = 2;
		if (r < 0 || r == 0 || r == 2) {
			rc = tfk_errf(err, TFK_ECORRUPT, "%s:%zu: %s", path,
				      start, r < 0 ? "bad quoting" :
				      "expected 2 fields (filename,labels)");
			goto out;
		}
		line++;
		if (!tfk_buf_ok(&f0) || !tfk_buf_ok(&f1)) {
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
			goto out;
		}
		if (first && !strcmp((char *)f0.data, "filename") &&
		    !strcmp((char *)f1.data, "labels")) {
			first = 0;
			continue;
		}
		first = 0;
		if (!tfk_utf8_valid(f0.data, f0.len) ||
		    !tfk_utf8_valid(f1.data, f1.len) ||
		    memchr(f0.data, 0, f0.len) || memchr(f1.data, 0, f1.len)) {
			rc = tfk_errf(err, TFK_ECORRUPT, "%s:%zu: not utf-8",
				      path, start);
			goto out;
		}
		if (pv->n_map == cap) {
			size_t nc = cap ? 2 * cap : 64;
			struct map_ent *m = tfk_realloc(pv->map, nc * sizeof(*m));

			if (!m) {
				rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
				goto out;
			}
			pv->map = m;
			cap = nc;
		}
		{
			struct map_ent *m = &pv->map[pv->n_map];
			int bad;

			memset(m, 0, sizeof(*m));
			m->line = start;
			m->path = norm_path((char *)f0.data, err, &bad);
			if (!m->path) {
				if (!bad)
					rc = TFK_ENOMEM;
				else
					rc = tfk_errf(err, TFK_ECORRUPT,
						      "%s:%zu: bad file name "
						      "'%s'", path, start,
						      (char *)f0.data);
				goto out;
			}
			pv->n_map++;
			if (split_labels((char *)f1.data, m)) {
				rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
				goto out;
			}
		}
	}
	sort(pv->map, pv->n_map, sizeof(pv->map[0]), cmp_map);
	for (size_t i = 1; i < pv->n_map; i++) {
		if (!strcmp(pv->map[i].path, pv->map[i - 1].path)) {
			size_t l = pv->map[i].line > pv->map[i - 1].line ?
				pv->map[i].line : pv->map[i - 1].line;

			rc = tfk_errf(err, TFK_ECORRUPT, "%s:%zu: '%s' listed "
				      "twice", path, l, pv->map[i].path);
			goto out;
		}
	}
out:
	tfk_buf_release(&b);
	tfk_buf_release(&f0);
	tfk_buf_release(&f1);
	return rc;
}

/* Resolve the map's class names into indices of classes (which, when
 * empty, becomes every name used, sorted). */
static int map_resolve(struct tfk_ds_priv *pv, struct strs *classes,
		       int fixed, const char *map_path, const char *class_file,
		       struct tfk_err *err)
{
	size_t i, j;

	if (!fixed) {
		for (i = 0; i < pv->n_map; i++)
			for (j = 0; j < pv->map[i].n_names; j++)
				if (strs_push(classes, pv->map[i].names[j],
					      strlen(pv->map[i].names[j])))
					return tfk_errf(err, TFK_ENOMEM,
							"out of memory");
		strs_sort_unique(classes);
	}
	for (i = 0; i < pv->n_map; i++) {
		struct map_ent *m = &pv->map[i];

		m->labels = tfk_calloc(m->n_names ? m->n_names : 1,
				       sizeof(*m->labels));
		if (!m->labels)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		for (j = 0; j < m->n_names; j++) {
			long c;
			size_t k;

			if (fixed) {
				c = strs_find(classes, m->names[j]);
			} else {
				char **hit = find(&m->names[j], classes->v,
						     classes->n, sizeof(char *),
						     cmp_str);

				c = hit ? (long)(hit - classes->v) : -1;
			}
			if (c < 0)
				return tfk_errf(err, TFK_ECORRUPT, "%s:%zu: "
						"class '%s' is not in %s",
						map_path, m->line, m->names[j],
						class_file);
			for (k = 0; k < m->n_labels; k++)
				if (m->labels[k] == (uint32_t)c)
					break;
			if (k == m->n_labels)
				m->labels[m->n_labels++] = (uint32_t)c;
		}
	}
	return 0;
}

/* Build ------------------------------------------------------------------ */

static int index_dir(struct tfk_dataset *ds, const struct tfk_ds_opts *o,
		     struct strs *classes, int fixed, struct items *out,
		     struct tfk_err *err)
{
	int rc;

	if (ds->mode != TFK_DS_INFERRED)
		return walk_tree(ds, o, out, "", -1, err);
	if (!fixed) {
		if ((rc = list_classes(ds, o, classes, err)))
			return rc;
	} else {
		for (size_t i = 0; i < classes->n; i++) {
			char *p;
			struct stat st;
			size_t n = strlen(ds->root) + strlen(classes->v[i]) + 2;

			if (!(p = tfk_malloc(n)))
				return tfk_errf(err, TFK_ENOMEM, "out of memory");
			snprintf(p, n, "%s/%s", ds->root, classes->v[i]);
			rc = stat(p, &st) || !S_ISDIR(st.st_mode) ||
				strchr(classes->v[i], '/') ||
				classes->v[i][0] == '.';
			tfk_free(p);
			if (rc)
				return tfk_errf(err, TFK_ENOTFOUND, "%s: class "
						"'%s' is not a subdirectory "
						"of %s", o->class_file ?
						o->class_file : "--class-names",
						classes->v[i], ds->root);
		}
	}
	for (size_t i = 0; i < classes->n; i++)
		if ((rc = walk_tree(ds, o, out, classes->v[i], (long)i, err)))
			return rc;
	return 0;
}

static int index_archive(struct tfk_dataset *ds, const struct tfk_ds_opts *o,
			 struct strs *classes, int fixed, struct items *out,
			 struct tfk_err *err)
{
	struct items files = { 0 };
	struct strs dirs = { 0 }, found = { 0 };
	size_t i;
	int rc;

	if ((rc = arc_scan(ds, o, &files, &dirs, err)))
		goto out;
	if ((rc = arc_strip_top(ds, o, &files, &dirs, err)))
		goto out;
	if (ds->mode == TFK_DS_INFERRED) {
		/* classes: first components of directories and of files
		 * in a subdirectory */
		for (i = 0; i < files.n + dirs.n; i++) {
			const char *p = i < files.n ? files.v[i].path :
				dirs.v[i - files.n];
			const char *s = strchr(p, '/');

			if ((i < files.n && !s) || !p[0] || p[0] == '.')
				continue;
			if (strs_push(&found, p, s ? (size_t)(s - p) :
				      strlen(p))) {
				rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
				goto out;
			}
		}
		strs_sort_unique(&found);
		if (fixed) {
			for (i = 0; i < classes->n; i++) {
				if (strs_find(&found, classes->v[i]) < 0 ||
				    classes->v[i][0] == '.') {
					rc = tfk_errf(err, TFK_ENOTFOUND, "%s: "
						      "class '%s' is not a "
						      "subdirectory of %s",
						      o->class_file ?
						      o->class_file :
						      "--class-names",
						      classes->v[i], ds->root);
					goto out;
				}
			}
		} else {
			*classes = found;
			memset(&found, 0, sizeof(found));
		}
	}
	for (i = 0; i < files.n; i++) {
		char *p = files.v[i].path;
		const char *base = strrchr(p, '/');
		long label = -1;

		if (!p[0] || !ext_ok(base ? base + 1 : p, o->exts))
			continue;
		if (ds->mode == TFK_DS_INFERRED) {
			char save;

			if (!base)
				continue;
			save = *strchr(p, '/');
			*strchr(p, '/') = '\0';
			label = strs_find(classes, p);
			p[strlen(p)] = save;
			if (label < 0)
				continue;
		}
		if (items_push(out, p, label, files.v[i].size,
			       files.v[i].member)) {
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
			goto out;
		}
		files.v[i].path = NULL;
	}
out:
	items_free(&files);
	strs_free(&dirs);
	strs_free(&found);
	return rc;
}

/* Sort in Keras' order; in an archive a later member of the same name
 * replaces an earlier one, as extracting it would. */
static void sort_items(struct tfk_dataset *ds, const struct tfk_ds_opts *o,
		       struct items *a)
{
	size_t i, k = 0;

	sort(a->v, a->n, sizeof(a->v[0]), cmp_item);
	for (i = 0; i < a->n; i++) {
		if (k && a->v[k - 1].label == a->v[i].label &&
		    !strcmp(a->v[k - 1].path, a->v[i].path)) {
			warnf(ds, o, "%s: %s: member %" PRIu64 " replaced by "
			      "member %" PRIu64 " of the same name", ds->root,
			      a->v[i].path, a->v[k - 1].member, a->v[i].member);
			tfk_free(a->v[k - 1].path);
			a->v[k - 1] = a->v[i];
		} else {
			a->v[k++] = a->v[i];
		}
	}
	a->n = k;
}

static int apply_map(struct tfk_dataset *ds, struct items *a)
{
	struct tfk_ds_priv *pv = ds->priv;
	size_t i, k = 0;

	for (i = 0; i < a->n; i++) {
		struct map_ent key, *m;

		key.path = a->v[i].path;
		m = find(&key, pv->map, pv->n_map, sizeof(key), cmp_map);
		if (!m) {
			ds->n_unmapped++;
			tfk_free(a->v[i].path);
			continue;
		}
		m->used = 1;
		a->v[i].labels = m->labels;
		a->v[i].n_labels = m->n_labels;
		a->v[k++] = a->v[i];
	}
	a->n = k;
	for (i = 0; i < pv->n_map; i++)
		ds->n_missing += !pv->map[i].used;
	return 0;
}

int tfk_ds_open(struct tfk_dataset **out, const char *root,
		const struct tfk_ds_opts *o, struct tfk_err *err)
{
	struct tfk_dataset *ds;
	struct strs classes = { 0 };
	struct items items = { 0 };
	struct stat st;
	int rc = 0, fixed = 0;

	*out = NULL;
	if (!root || !strcmp(root, "-"))
		return tfk_errf(err, TFK_EINVAL, "<stdin>: a dataset is read "
				"twice (index, then data): give a directory "
				"or an archive file");
	if (o->mode < TFK_DS_INFERRED || o->mode > TFK_DS_LIST ||
	    (o->mode == TFK_DS_MAP && !o->label_map) ||
	    (o->mode == TFK_DS_LIST && !o->label_list) ||
	    ((o->mode == TFK_DS_NONE || o->mode == TFK_DS_LIST) &&
	     (o->class_file || o->class_list)) ||
	    (o->class_file && o->class_list))
		return tfk_errf(err, TFK_EINVAL, "bad dataset options");
	if (stat(root, &st))
		return tfk_errf(err, TFK_EIO, "%s: %s", root, strerror(errno));
	ds = tfk_calloc(1, sizeof(*ds));
	if (!ds || !(ds->priv = tfk_calloc(1, sizeof(*ds->priv))) ||
	    !(ds->root = tfk_strdup(root))) {
		tfk_ds_close(ds);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	ds->mode = o->mode;
	ds->archive = !S_ISDIR(st.st_mode);
	if (o->class_file || o->class_list) {
		rc = o->class_file ? read_class_file(o->class_file, &classes,
						     err) :
			split_class_list(o->class_list, &classes, err);
		if (rc)
			goto fail;
		fixed = 1;
	}
	if (o->mode == TFK_DS_MAP) {
		if ((rc = read_label_map(o->label_map, ds->priv, err)) ||
		    (rc = map_resolve(ds->priv, &classes, fixed, o->label_map,
				      o->class_file ? o->class_file :
				      "--class-names", err)))
			goto fail;
	}
	if (ds->archive)
		rc = index_archive(ds, o, &classes, fixed, &items, err);
	else
		rc = index_dir(ds, o, &classes, fixed, &items, err);
	if (rc)
		goto fail;
	sort_items(ds, o, &items);
	if (o->mode == TFK_DS_MAP)
		apply_map(ds, &items);
	if (o->mode == TFK_DS_LIST &&
	    (rc = apply_list(o->label_list, &items, &classes, err)))
		goto fail;
	ds->items = items.v;
	ds->n_items = items.n;
	if (o->mode != TFK_DS_NONE) {
		ds->classes = classes.v;
		ds->n_classes = classes.n;
	} else {
		strs_free(&classes);
	}
	*out = ds;
	return 0;
fail:
	items_free(&items);
	strs_free(&classes);
	tfk_ds_close(ds);
	return rc;
}

void tfk_ds_close(struct tfk_dataset *ds)
{
	size_t i;

	if (!ds)
		return;
	for (i = 0; i < ds->n_items; i++)
		tfk_free(ds->items[i].path);
	tfk_free(ds->items);
	for (i = 0; i < ds->n_classes; i++)
		tfk_free(ds->classes[i]);
	tfk_free(ds->classes);
	if (ds->priv)
		map_free(ds->priv->map, ds->priv->n_map);
	tfk_free(ds->priv);
	tfk_free(ds->top);
	tfk_free(ds->root);
	tfk_free(ds);
}

/* numpy's shuffle ------------------------------------------------------- */

/* MT19937 (Matsumoto & Nishimura 1998), as numpy's legacy RandomState. */
struct mt {
	uint32_t s[624];
	int i;
};

static void mt_seed(struct mt *m, uint32_t seed)
{
	m->s[0] = seed;
	for (int i = 1; i < 624; i++)
		m->s[i] = 1812433253u * (m->s[i - 1] ^ (m->s[i - 1] >> 30)) +
			(uint32_t)i;
	m->i = 624;
}

static uint32_t mt_next(struct mt *m)
{
	uint32_t y;

	if (m->i >= 624) {
		for (int k = 0; k < 624; k++) {
			y = (m->s[k] & 0x80000000u) |
				(m->s[(k + 1) % 624] & 0x7fffffffu);
			m->s[k] = m->s[(k + 397) % 624] ^ (y >> 1) ^
				(y & 1 ? 0x9908b0dfu : 0);
		}
		m->i = 0;
	}
	y = m->s[m->i++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	y ^= y >> 18;
	return y;
}

/* numpy's random_interval: uniform in [0, max] by masked rejection. */
static uint64_t mt_interval(struct mt *m, uint64_t max)
{
	uint64_t mask = max, v;

	if (max == 0)
		return 0;
	mask |= mask >> 1;
	mask |= mask >> 2;
	mask |= mask >> 4;
	mask |= mask >> 8;
	mask |= mask >> 16;
	mask |= mask >> 32;
	if (max <= 0xffffffffu) {
		while ((v = (mt_next(m) & mask)) > max)
			;
	} else {
		do {
			v = (uint64_t)mt_next(m) << 32;
			v |= mt_next(m);
			v &= mask;
		} while (v > max);
	}
	return v;
}

void tfk_ds_shuffle_index(size_t *v, size_t n, uint32_t seed)
{
	struct mt m;

	mt_seed(&m, seed);
	for (size_t i = n; i-- > 1;) {
		size_t j = (size_t)mt_interval(&m, i), t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

int tfk_ds_shuffle(struct tfk_dataset *ds, uint32_t seed, struct tfk_err *err)
{
	size_t *perm, i;
	struct tfk_ds_item *v;

	if (ds->n_items < 2)
		return 0;
	perm = tfk_malloc(ds->n_items * sizeof(*perm));
	v = tfk_malloc(ds->n_items * sizeof(*v));
	if (!perm || !v) {
		tfk_free(perm);
		tfk_free(v);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	for (i = 0; i < ds->n_items; i++)
		perm[i] = i;
	tfk_ds_shuffle_index(perm, ds->n_items, seed);
	for (i = 0; i < ds->n_items; i++)
		v[i] = ds->items[perm[i]];
	tfk_free(ds->items);
	tfk_free(perm);
	ds->items = v;
	return 0;
}

size_t tfk_ds_val_count(size_t n, double fraction)
{
	double v = fraction * (double)n;

	if (!(v > 0))
		return 0;
	if (v >= (double)n)
		return n;
	return (size_t)v;
}

int tfk_ds_select(const struct tfk_dataset *ds, int subset, double fraction,
		  long shard_i, long shard_n, size_t **sel, size_t *n_sel,
		  size_t *n_first, struct tfk_err *err)
{
	size_t n = ds->n_items, nval = 0, k = 0, i, part;
	size_t lo[2], hi[2];
	size_t *v;

	*sel = NULL;
	*n_sel = *n_first = 0;
	if (shard_n < 1 || shard_i < 0 || shard_i >= shard_n ||
	    subset < TFK_DS_ALL || subset > TFK_DS_BOTH)
		return tfk_errf(err, TFK_EINVAL, "bad selection");
	if (subset != TFK_DS_ALL)
		nval = tfk_ds_val_count(n, fraction);
	lo[0] = 0;
	hi[0] = n;
	lo[1] = hi[1] = n;
	if (subset == TFK_DS_TRAINING || subset == TFK_DS_BOTH)
		hi[0] = n - nval;
	if (subset == TFK_DS_VALIDATION)
		lo[0] = n - nval;
	if (subset == TFK_DS_BOTH)
		lo[1] = n - nval;
	v = tfk_malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (part = 0; part < 2; part++) {
		for (i = lo[part]; i < hi[part]; i++)
			if ((i - lo[part]) % (size_t)shard_n == (size_t)shard_i)
				v[k++] = i;
		if (part == 0)
			*n_first = k;
	}
	*sel = v;
	*n_sel = k;
	return 0;
}

void tfk_ds_where(const struct tfk_dataset *ds, const struct tfk_ds_item *it,
		  char *buf, size_t n)
{
	size_t rlen = strlen(ds->root);

	while (rlen > 1 && ds->root[rlen - 1] == '/')
		rlen--;
	if (ds->archive)
		snprintf(buf, n, "%s: %s%s%s", ds->root, ds->top ? ds->top : "",
			 ds->top ? "/" : "", it->path);
	else
		snprintf(buf, n, "%.*s/%s", (int)rlen, ds->root, it->path);
}

/* Running ---------------------------------------------------------------- */

#define HOLD_MEM_MAX (UINT64_C(64) << 20)

struct held {
	int state;		/* 0 empty, 1 ready */
	int status;
	uint8_t *mem;		/* record in memory, or NULL: in the spill */
	uint64_t off;
	size_t len;
	struct tfk_err *err;	/* failed items */
};

struct run {
	const struct tfk_dataset *ds;
	const size_t *sel;
	size_t n_sel;
	const struct tfk_ds_sink *sink;
	/* archive */
	struct archive *ar;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t turn;
	uint64_t ord;			/* members read so far */
	uint64_t *mem_of;		/* i -> member (archive order) */
	size_t *k_of;			/* i -> selection index */
	int fatal;
	struct tfk_err ferr;
	/* reorder store */
	struct held *held;
	size_t next;
	uint64_t held_mem;
	int spill;
	uint64_t spill_off;
	struct tfk_buf scratch;
};

struct slot {
	int status;
	int fatal;
	size_t k;
	struct tfk_buf data, rec;
	struct tfk_err err;
};

static void convert_slot(struct run *r, struct slot *s,
			 const struct tfk_ds_item *it)
{
	char where[TFK_ERR_MSG_MAX];

	if (!s->status) {
		tfk_err_clear(&s->err);
		s->status = r->sink->convert(r->sink->ctx, it, s->data.data ?
					     s->data.data : (const uint8_t *)"",
					     s->data.len, &s->rec, &s->err);
		if (!s->status && !tfk_buf_ok(&s->rec))
			s->status = tfk_errf(&s->err, TFK_ENOMEM,
					     "out of memory");
	}
	tfk_buf_release(&s->data);
	if (s->status) {
		tfk_ds_where(r->ds, it, where, sizeof(where));
		tfk_err_prefix(&s->err, "%s", where);
	}
}

static void dir_work(void *ctx, size_t i, void *slot)
{
	struct run *r = ctx;
	struct slot *s = slot;
	const struct tfk_ds_item *it = &r->ds->items[r->sel[i]];
	size_t rlen = strlen(r->ds->root), n = rlen + strlen(it->path) + 2;
	char *path = tfk_malloc(n);

	s->k = i;
	if (!path) {
		s->status = tfk_errf(&s->err, TFK_ENOMEM, "out of memory");
	} else {
		snprintf(path, n, "%s/%s", r->ds->root, it->path);
		s->status = slurp(path, &s->data, &s->err);
		tfk_free(path);
	}
	convert_slot(r, s, it);
}

static int emit_slot(struct run *r, size_t k, int status, const uint8_t *p,
		     size_t len, const struct tfk_err *err)
{
	return r->sink->emit(r->sink->ctx, k, &r->ds->items[r->sel[k]], status,
			     p, len, err);
}

static int dir_deliver(void *ctx, size_t i, void *slot)
{
	struct run *r = ctx;
	struct slot *s = slot;
	int rc = emit_slot(r, i, s->status, s->rec.data, s->rec.len, &s->err);

	tfk_buf_release(&s->rec);
	tfk_buf_release(&s->data);
	return rc;
}

/* An item worked but not delivered (the run stopped): free its slot. */
static void dir_discard(void *ctx, size_t i, void *slot)
{
	struct slot *s = slot;

	tfk_buf_release(&s->rec);
	tfk_buf_release(&s->data);
}

static void set_fatal(struct run *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Called with r->mu held. */
static void set_fatal(struct run *r, int code, const char *fmt, ...)
{
	va_list ap;

	if (r->fatal)
		return;
	r->fatal = code;
	r->ferr.code = code;
	va_start(ap, fmt);
	vsnprintf(r->ferr.msg, sizeof(r->ferr.msg), fmt, ap);
	va_end(ap);
}

/* Read member mem_of[i] into s->data; r->mu held. */
static void arc_read(struct run *r, size_t i, struct slot *s)
{
	const struct tfk_ds_item *it = &r->ds->items[r->sel[s->k]];
	struct archive_entry *e;
	int64_t size;

	for (;;) {
		int rc = archive_read_next_header(r->ar, &e);

		if (rc == ARCHIVE_EOF) {
			set_fatal(r, TFK_ECORRUPT, "%s: archive ended before "
				  "member %" PRIu64 " (changed since it was "
				  "indexed?)", r->ds->root, r->mem_of[i]);
			return;
		}
		if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
			set_fatal(r, TFK_ECORRUPT, "%s: member %" PRIu64 ": %s",
				  r->ds->root, r->ord,
				  archive_error_string(r->ar) ?
				  archive_error_string(r->ar) : "read error");
			return;
		}
		if (r->ord++ == r->mem_of[i])
			break;
	}
	size = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
	if (size != (int64_t)it->size) {
		set_fatal(r, TFK_ECORRUPT, "%s: member %" PRIu64 " changed "
			  "since it was indexed", r->ds->root, r->mem_of[i]);
		return;
	}
	if (size > 0 && tfk_buf_reserve(&s->data, (size_t)size)) {
		s->status = tfk_errf(&s->err, TFK_ENOMEM, "out of memory");
		return;
	}
	for (;;) {
		la_ssize_t n;

		if (s->data.cap - s->data.len < 4096 &&
		    tfk_buf_reserve(&s->data, 65536)) {
			s->status = tfk_errf(&s->err, TFK_ENOMEM,
					     "out of memory");
			return;
		}
		n = archive_read_data(r->ar, s->data.data + s->data.len,
				      s->data.cap - s->data.len);
		if (n == 0)
			break;
		if (n == ARCHIVE_RETRY)
			continue;
		if (n < 0) {
			const char *m = archive_error_string(r->ar);

			if (n == ARCHIVE_FATAL)
				set_fatal(r, TFK_ECORRUPT, "%s: member %" PRIu64
					  ": %s", r->ds->root, r->mem_of[i],
					  m ? m : "read error");
			else
				s->status = tfk_errf(&s->err, TFK_ECORRUPT,
						     "%s", m ? m : "read error");
			return;
		}
		s->data.len += (size_t)n;
	}
}

static void arc_work(void *ctx, size_t i, void *slot)
{
	struct run *r = ctx;
	struct slot *s = slot;

	s->k = r->k_of[i];
	pthread_mutex_lock(&r->mu);
	while (r->turn != i && !r->fatal)
		pthread_cond_wait(&r->cv, &r->mu);
	if (!r->fatal) {
		locale_t old = loc_enter();

		arc_read(r, i, s);
		loc_leave(old);
	}
	s->fatal = r->fatal;
	r->turn++;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	if (s->fatal) {
		tfk_buf_release(&s->data);
		return;
	}
	convert_slot(r, s, &r->ds->items[r->sel[s->k]]);
}

static int spill_write(struct run *r, const uint8_t *p, size_t n,
		       uint64_t *off, struct tfk_err *err)
{
	if (r->spill < 0) {
		const char *dir = getenv("TMPDIR");
		char path[4096];

		snprintf(path, sizeof(path), "%s/tfk-spill-XXXXXX",
			 dir && *dir ? dir : "/tmp");
		r->spill = mkstemp(path);
		if (r->spill < 0)
			return tfk_errf(err, TFK_EIO, "%s: cannot create "
					"temporary file: %s", path,
					strerror(errno));
		unlink(path);
	}
	*off = r->spill_off;
	while (n) {
		ssize_t w = pwrite(r->spill, p, n, (off_t)r->spill_off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return tfk_errf(err, TFK_EIO, "temporary file: write "
					"error: %s", strerror(errno));
		p += w;
		n -= (size_t)w;
		r->spill_off += (uint64_t)w;
	}
	return 0;
}

static int spill_read(struct run *r, uint64_t off, size_t n,
		      struct tfk_err *err)
{
	tfk_buf_reset(&r->scratch);
	if (tfk_buf_reserve(&r->scratch, n + 1))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	while (r->scratch.len < n) {
		ssize_t got = pread(r->spill, r->scratch.data + r->scratch.len,
				    n - r->scratch.len,
				    (off_t)(off + r->scratch.len));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return tfk_errf(err, TFK_EIO, "temporary file: read "
					"error: %s", got ? strerror(errno) :
					"short file");
		r->scratch.len += (size_t)got;
	}
	return 0;
}

static int hold(struct run *r, struct slot *s)
{
	struct held *h = &r->held[s->k];

	h->status = s->status;
	if (s->status) {
		h->err = tfk_malloc(sizeof(*h->err));
		if (!h->err)
			return tfk_errf(&r->ferr, TFK_ENOMEM, "out of memory");
		*h->err = s->err;
	} else if (r->held_mem + s->rec.len <= (r->sink->hold_max ?
		   r->sink->hold_max : HOLD_MEM_MAX)) {
		h->mem = s->rec.data;
		h->len = s->rec.len;
		r->held_mem += s->rec.len;
		tfk_buf_init(&s->rec);
		if (!h->mem) {
			h->mem = tfk_malloc(1);
			if (!h->mem)
				return tfk_errf(&r->ferr, TFK_ENOMEM,
						"out of memory");
		}
	} else {
		int rc = spill_write(r, s->rec.data, s->rec.len, &h->off,
				     &r->ferr);

		if (rc)
			return rc;
		h->len = s->rec.len;
	}
	h->state = 1;
	return 0;
}

static int drain(struct run *r)
{
	while (r->next < r->n_sel && r->held[r->next].state) {
		struct held *h = &r->held[r->next];
		const uint8_t *p = h->mem;
		int rc;

		if (!h->status && !p) {
			if ((rc = spill_read(r, h->off, h->len, &r->ferr)))
				return rc;
			p = r->scratch.data;
		}
		rc = emit_slot(r, r->next, h->status, p, h->len, h->err);
		if (h->mem)
			r->held_mem -= h->len;
		tfk_free(h->mem);
		tfk_free(h->err);
		memset(h, 0, sizeof(*h));
		h->state = 2;
		r->next++;
		if (rc)
			return rc;
	}
	return 0;
}

static int arc_deliver(void *ctx, size_t i, void *slot)
{
	struct run *r = ctx;
	struct slot *s = slot;
	int rc = 0;

	if (s->fatal) {
		rc = s->fatal;
	} else if (s->k == r->next) {
		rc = emit_slot(r, s->k, s->status, s->rec.data, s->rec.len,
			       &s->err);
		r->held[s->k].state = 2;
		r->next++;
		if (!rc)
			rc = drain(r);
	} else {
		rc = hold(r, s);
	}
	tfk_buf_release(&s->rec);
	tfk_buf_release(&s->data);
	return rc;
}

struct pair {
	uint64_t member;
	size_t k;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;

	return x->member < y->member ? -1 : x->member > y->member;
}

static int run_archive(struct run *r, struct tfk_err *err)
{
	struct pair *p;
	size_t i, window = 4 * (size_t)r->sink->threads;
	int rc;

	p = tfk_malloc((r->n_sel ? r->n_sel : 1) * sizeof(*p));
	r->mem_of = tfk_malloc((r->n_sel ? r->n_sel : 1) * sizeof(uint64_t));
	r->k_of = tfk_malloc((r->n_sel ? r->n_sel : 1) * sizeof(size_t));
	r->held = tfk_calloc(r->n_sel ? r->n_sel : 1, sizeof(*r->held));
	if (!p || !r->mem_of || !r->k_of || !r->held) {
		tfk_free(p);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	for (i = 0; i < r->n_sel; i++) {
		p[i].member = r->ds->items[r->sel[i]].member;
		p[i].k = i;
	}
	sort(p, r->n_sel, sizeof(*p), cmp_pair);
	for (i = 0; i < r->n_sel; i++) {
		if (i && p[i].member == p[i - 1].member) {
			tfk_free(p);
			return tfk_errf(err, TFK_EINVAL, "%s: an item is "
					"selected twice", r->ds->root);
		}
		r->mem_of[i] = p[i].member;
		r->k_of[i] = p[i].k;
	}
	tfk_free(p);
	{
		locale_t old = loc_enter();

		r->ar = arc_open(r->ds->root, err);
		loc_leave(old);
	}
	if (!r->ar)
		return err->code;
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	rc = tfk_pool_run(r->n_sel, r->sink->threads, window,
			  sizeof(struct slot), arc_work, arc_deliver, dir_discard,
			  r);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	if (rc < 0 && r->ferr.code)
		*err = r->ferr;
	else if (rc < 0)
		tfk_errf(err, rc, "%s: %s", r->ds->root, tfk_err_name(rc));
	else if (!rc && r->next != r->n_sel)
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: members missing on the "
			      "second pass (archive changed?)", r->ds->root);
	for (i = 0; i < r->n_sel; i++) {
		tfk_free(r->held[i].mem);
		tfk_free(r->held[i].err);
	}
	return rc;
}

int tfk_ds_run(const struct tfk_dataset *ds, const size_t *sel, size_t n_sel,
	       const struct tfk_ds_sink *sink, struct tfk_err *err)
{
	struct run r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.ds = ds;
	r.sel = sel;
	r.n_sel = n_sel;
	r.sink = sink;
	r.spill = -1;
	tfk_buf_init(&r.scratch);
	if (sink->threads < 1)
		return tfk_errf(err, TFK_EINVAL, "threads must be >= 1");
	if (!ds->archive) {
		rc = tfk_pool_run(n_sel, sink->threads,
				  4 * (size_t)sink->threads,
				  sizeof(struct slot), dir_work, dir_deliver, dir_discard,
				  &r);
		if (rc < 0)
			tfk_errf(err, rc, "%s: %s", ds->root, tfk_err_name(rc));
	} else {
		rc = run_archive(&r, err);
		if (r.ar)
			archive_read_free(r.ar);
		tfk_free(r.mem_of);
		tfk_free(r.k_of);
		tfk_free(r.held);
		if (r.spill >= 0)
			close(r.spill);
	}
	tfk_buf_release(&r.scratch);
	return rc;
}
