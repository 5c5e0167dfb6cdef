/*
 * versions.c - scan a model's base path for version directories (see
 * versions.h).
 *
 * One readdir and a stat per numbered entry and per model file: cheap
 * enough to run every poll (TF Serving polls each second by default).
 * Rejected: inotify, which misses changes on network file systems,
 * where models often live, and which TF Serving does not use either.
 */
#include "model/versions.h"

#include "util/alloc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int parse_version(const char *s, int64_t *v)
{
	int64_t x = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (x > (INT64_MAX - (*s - '0')) / 10)
			return -1;
		x = x * 10 + (*s - '0');
	}
	*v = x;
	return 0;
}

static int file_stat(const char *dir, const char *name, struct stat *st)
{
	char p[4096];

	if ((size_t)snprintf(p, sizeof(p), "%s/%s", dir, name) >= sizeof(p))
		return -1;
	return stat(p, st) == 0 && S_ISREG(st->st_mode) ? 0 : -1;
}

static int cmp_desc(const void *a, const void *b)
{
	const struct tfk_version_dir *x = a, *y = b;

	return x->version < y->version ? 1 : x->version > y->version ? -1 : 0;
}

void tfk_versions_free(struct tfk_version_dir *v, int n)
{
	int i;

	for (i = 0; v && i < n; i++)
		tfk_free(v[i].path);
	tfk_free(v);
}

int tfk_versions_scan(const char *base, struct tfk_version_dir **vp, int *np,
		      struct tfk_err *err)
{
	struct tfk_version_dir *v = NULL;
	int n = 0, cap = 0;
	struct dirent *e;
	DIR *d;

	*vp = NULL;
	*np = 0;
	if (!(d = opendir(base)))
		return tfk_errf(err, TFK_EIO, "%s: cannot open: %s", base,
				strerror(errno));
	while ((e = readdir(d))) {
		struct tfk_version_dir *x;
		struct stat st;
		int64_t ver;
		size_t len;

		if (parse_version(e->d_name, &ver))
			continue;
		if (n == cap) {
			int nc = cap ? cap * 2 : 8;
			struct tfk_version_dir *g =
				tfk_realloc(v, (size_t)nc * sizeof(*g));

			if (!g)
				goto nomem;
			v = g;
			cap = nc;
		}
		x = &v[n];
		memset(x, 0, sizeof(*x));
		len = strlen(base) + strlen(e->d_name) + 2;
		if (!(x->path = tfk_malloc(len)))
			goto nomem;
		snprintf(x->path, len, "%s/%s", base, e->d_name);
		if (stat(x->path, &st) || !S_ISDIR(st.st_mode)) {
			tfk_free(x->path);
			continue;
		}
		x->version = ver;
		x->size = -1;
		if (!file_stat(x->path, "saved_model.pb", &st))
			x->kind = TFK_SERVABLE_SAVEDMODEL;
		else if (!file_stat(x->path, "model.tflite", &st))
			x->kind = TFK_SERVABLE_TFLITE;
		if (x->kind) {
			x->size = (int64_t)st.st_size;
			x->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
				st.st_mtim.tv_nsec;
		}
		if (x->kind == TFK_SERVABLE_TFLITE) {
			char *p = tfk_malloc(len + sizeof("/model.tflite"));

			if (!p) {
				tfk_free(x->path);
				goto nomem;
			}
			snprintf(p, len + sizeof("/model.tflite"),
				 "%s/model.tflite", x->path);
			tfk_free(x->path);
			x->path = p;
		}
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, (size_t)n, sizeof(*v), cmp_desc);
	*vp = v;
	*np = n;
	return 0;
nomem:
	closedir(d);
	tfk_versions_free(v, n);
	return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", base);
}

int tfk_versions_latest(const struct tfk_version_dir *v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (v[i].kind)
			return i;
	return -1;
}
