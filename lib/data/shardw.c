/*
 * shardw.c - sharded record output and the converters' shared options
 * (see shardw.h).
 *
 * Every shard is a tfk_out (lib/io/out.c): written under a hidden
 * temporary next to its final name, tracked so a kill removes it. A
 * shard is never renamed when it is full: all shards are finished
 * first (flushed, fsynced, closed) and only then renamed, in
 * tfk_shardw_close, because with --shard-size the "-of-NNNNN" part of
 * every name is known only at the end, and because a run that fails on
 * shard 7 must not leave shards 0-6 looking like a complete set. A
 * failure during the renames removes what was already renamed.
 *
 * Stale shards: a second run with the same PREFIX may make a different
 * number of shards (or change compression). After our set is in place,
 * close removes every other PREFIX-NNNNN-of-NNNNN.tfrecord[.gz|.zlib]
 * in the directory, so a glob over PREFIX-* never mixes two runs.
 * Refusing to run instead was rejected: re-running a conversion into
 * the same place is the common case, and the new set replaces the old
 * one exactly as the single-file writer replaces a file.
 *
 * Framing is done here (tfk_rec_frame) rather than through the record
 * writer, so that one tfk_out per shard is all the state a shard needs;
 * round-robin mode keeps N of them open, each with its own 256 KiB
 * buffer (more with compression).
 */
#include "data/shardw.h"
#include "io/out.h"
#include "io/record.h"
#include "util/alloc.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* TensorFlow's own sharded names use five digits (NAME-00000-of-00010);
 * more shards than that would make names of different widths. */
#define MAX_SHARDS 99999L

struct tfk_shardw {
	char *prefix;		/* NULL: stdout */
	uint64_t shard_size;
	long num_shards;	/* > 0: round-robin */
	int comp;
	struct tfk_out **outs;	/* every shard opened, in index order */
	long n_outs, cap;
	struct tfk_out *cur;	/* size mode: the shard being filled */
	uint64_t cur_bytes;
	uint64_t records, bytes;
	int failed;		/* a write failed: only discard is sane */
};

static const char *ext_of(int comp)
{
	return comp == TFK_COMP_GZIP ? ".gz" : comp == TFK_COMP_ZLIB ? ".zlib" : "";
}

/* PREFIX-IIIII-of-NNNNN.tfrecord[.ext], or PREFIX-IIIII.tfrecord[.ext]
 * (a provisional name, never created) when n < 0. malloc'd. */
static char *shard_name(const struct tfk_shardw *w, long i, long n)
{
	size_t len = strlen(w->prefix) + 64;
	char *s = tfk_malloc(len);

	if (!s)
		return NULL;
	if (n < 0)
		snprintf(s, len, "%s-%05ld.tfrecord%s", w->prefix, i,
			 ext_of(w->comp));
	else
		snprintf(s, len, "%s-%05ld-of-%05ld.tfrecord%s", w->prefix, i, n,
			 ext_of(w->comp));
	return s;
}

/* Open shard number n_outs under its final name when the count is
 * known (round-robin), else under a provisional one. */
static int open_shard(struct tfk_shardw *w, struct tfk_err *err)
{
	struct tfk_out *o;
	char *name;
	int rc;

	if (w->n_outs >= MAX_SHARDS)
		return tfk_errf(err, TFK_EINVAL, "%s: more than %ld shards: "
				"use a larger --shard-size", w->prefix, MAX_SHARDS);
	if (w->n_outs == w->cap) {
		long cap = w->cap ? 2 * w->cap : 16;
		struct tfk_out **v = tfk_realloc(w->outs, (size_t)cap * sizeof(*v));

		if (!v)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		w->outs = v;
		w->cap = cap;
	}
	name = shard_name(w, w->n_outs, w->num_shards > 0 ? w->num_shards : -1);
	if (!name)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = tfk_out_open(&o, name, w->comp, err);
	tfk_free(name);
	if (rc)
		return rc;
	w->outs[w->n_outs++] = o;
	return 0;
}

int tfk_shardw_open(struct tfk_shardw **wp, const struct tfk_shardw_opts *opt,
		    struct tfk_err *err)
{
	struct tfk_shardw *w;
	int rc = 0;
	long i;

	*wp = NULL;
	if (opt->comp != TFK_COMP_NONE && opt->comp != TFK_COMP_GZIP &&
	    opt->comp != TFK_COMP_ZLIB)
		return tfk_errf(err, TFK_EINVAL, "compression must be none, gzip or zlib");
	if (opt->num_shards < 0 || opt->num_shards > MAX_SHARDS)
		return tfk_errf(err, TFK_EINVAL, "number of shards must be 0 to %ld",
				MAX_SHARDS);
	w = tfk_calloc(1, sizeof(*w));
	if (!w)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	w->comp = opt->comp;
	w->shard_size = opt->shard_size;
	if (!opt->prefix || !strcmp(opt->prefix, "-")) {
		rc = tfk_out_open(&w->cur, "-", w->comp, err);
		if (rc) {
			tfk_free(w);
			return rc;
		}
		w->shard_size = 0;
		*wp = w;
		return 0;
	}
	w->num_shards = opt->num_shards;
	w->prefix = tfk_strdup(opt->prefix);
	if (!w->prefix) {
		tfk_free(w);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	for (i = 0; !rc && i < w->num_shards; i++)
		rc = open_shard(w, err);
	if (rc) {
		tfk_shardw_discard(w);
		return rc;
	}
	*wp = w;
	return 0;
}

static int put(struct tfk_shardw *w, struct tfk_out *o, const void *data,
	       size_t len, struct tfk_err *err)
{
	uint8_t hdr[TFK_REC_HEADER], ftr[TFK_REC_FOOTER];
	int rc;

	tfk_rec_frame(hdr, ftr, data, len);
	rc = tfk_out_write(o, hdr, sizeof(hdr), err);
	if (!rc)
		rc = tfk_out_write(o, data, len, err);
	if (!rc)
		rc = tfk_out_write(o, ftr, sizeof(ftr), err);
	if (rc)
		w->failed = 1;
	return rc;
}

int tfk_shardw_write(struct tfk_shardw *w, const void *data, size_t len,
		     struct tfk_err *err)
{
	uint64_t framed = (uint64_t)len + TFK_REC_OVERHEAD;
	int rc;

	if (w->failed)
		return tfk_errf(err, TFK_EINVAL, "%s: write after a failed write",
				w->prefix ? w->prefix : "<stdout>");
	if (w->num_shards > 0) {
		rc = put(w, w->outs[w->records % (uint64_t)w->num_shards], data,
			 len, err);
	} else {
		if (!w->cur) {
			rc = open_shard(w, err);
			if (rc) {
				w->failed = 1;
				return rc;
			}
			w->cur = w->outs[w->n_outs - 1];
			w->cur_bytes = 0;
		}
		rc = put(w, w->cur, data, len, err);
		w->cur_bytes += framed;
		if (!rc && w->shard_size && w->cur_bytes >= w->shard_size) {
			rc = tfk_out_finish(w->cur, err);
			if (rc)
				w->failed = 1;
			w->cur = NULL;
		}
	}
	if (rc)
		return rc;
	w->records++;
	w->bytes += framed;
	return 0;
}

/* Does name (a directory entry) look like base-IIIII-of-NNNNN.tfrecord
 * with an optional compression extension? Five or more digits each. */
static int is_shard_name(const char *name, const char *base)
{
	size_t bl = strlen(base), k;
	const char *p;

	if (strncmp(name, base, bl) || name[bl] != '-')
		return 0;
	p = name + bl + 1;
	for (k = 0; p[k] >= '0' && p[k] <= '9'; k++)
		;
	if (k < 5 || strncmp(p + k, "-of-", 4))
		return 0;
	p += k + 4;
	for (k = 0; p[k] >= '0' && p[k] <= '9'; k++)
		;
	if (k < 5 || strncmp(p + k, ".tfrecord", 9))
		return 0;
	p += k + 9;
	return !*p || !strcmp(p, ".gz") || !strcmp(p, ".zlib");
}

/* Scratch for remove_stale, allocated before any shard is renamed so
 * that nothing can fail for want of memory once renaming has begun. */
struct stale {
	char *dir;		/* "" or "some/dir/" */
	const char *base;	/* prefix after the last slash */
	char *ours, *path;
	size_t ours_len, path_len;
};

static int stale_init(struct stale *st, const char *prefix)
{
	const char *slash = strrchr(prefix, '/');
	size_t dlen = slash ? (size_t)(slash - prefix + 1) : 0;

	st->base = slash ? slash + 1 : prefix;
	st->ours_len = strlen(st->base) + 64;
	st->path_len = dlen + 300;
	st->dir = tfk_malloc(dlen + 1);
	st->ours = tfk_malloc(st->ours_len);
	st->path = tfk_malloc(st->path_len);
	if (!st->dir || !st->ours || !st->path)
		return TFK_ENOMEM;
	memcpy(st->dir, prefix, dlen);
	st->dir[dlen] = 0;
	return 0;
}

static void stale_release(struct stale *st)
{
	tfk_free(st->dir);
	tfk_free(st->ours);
	tfk_free(st->path);
}

/* Remove shards of another run under the same prefix: every shard name
 * that is not one of ours (n shards, our extension). */
static int remove_stale(struct tfk_shardw *w, struct stale *st, long n,
			struct tfk_err *err)
{
	struct dirent *e;
	DIR *d = opendir(*st->dir ? st->dir : ".");
	int rc = 0;

	if (!d)
		return 0;	/* we just wrote there: nothing to clean */
	while ((e = readdir(d))) {
		long i;

		if (!is_shard_name(e->d_name, st->base) || strlen(e->d_name) > 255)
			continue;
		i = strtol(e->d_name + strlen(st->base) + 1, NULL, 10);
		snprintf(st->ours, st->ours_len, "%s-%05ld-of-%05ld.tfrecord%s",
			 st->base, i, n, ext_of(w->comp));
		if (i < n && !strcmp(st->ours, e->d_name))
			continue;
		snprintf(st->path, st->path_len, "%s%s", st->dir, e->d_name);
		if (unlink(st->path) < 0 && errno != ENOENT) {
			rc = tfk_errf(err, TFK_EIO, "%s: cannot remove stale shard: %s",
				      st->path, strerror(errno));
			break;
		}
	}
	closedir(d);
	return rc;
}

int tfk_shardw_close(struct tfk_shardw *w, struct tfk_err *err)
{
	struct stale st = { 0 };
	char **names = NULL;
	long i, n;
	int rc = 0;

	if (!w)
		return 0;
	if (w->failed) {
		rc = tfk_errf(err, TFK_EINVAL, "%s: not closed after a failed write",
			      w->prefix ? w->prefix : "<stdout>");
		tfk_shardw_discard(w);
		return rc;
	}
	if (!w->prefix) {
		rc = tfk_out_close(w->cur, err);
		tfk_free(w);
		return rc;
	}
	/* An empty run still makes one (empty) shard, so the set exists
	 * and PREFIX-* globs of later tools find it. */
	if (!w->n_outs) {
		rc = open_shard(w, err);
		if (!rc)
			w->cur = w->outs[0];
	}
	if (!rc && w->num_shards > 0) {
		for (i = 0; !rc && i < w->n_outs; i++)
			rc = tfk_out_finish(w->outs[i], err);
	} else if (!rc && w->cur) {
		rc = tfk_out_finish(w->cur, err);
	}
	w->cur = NULL;
	n = w->n_outs;
	if (!rc) {
		names = tfk_calloc((size_t)n, sizeof(*names));
		if (!names || stale_init(&st, w->prefix))
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		for (i = 0; !rc && i < n; i++)
			if (!(names[i] = shard_name(w, i, n)))
				rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	/* From here on only the file system can fail. */
	for (i = 0; !rc && i < n; i++) {
		rc = tfk_out_commit(w->outs[i], names[i], err);
		w->outs[i] = NULL;	/* commit freed it either way */
		if (rc) {
			long j;

			for (j = 0; j < i; j++)
				unlink(names[j]);
		}
	}
	if (!rc)
		rc = remove_stale(w, &st, n, err);
	for (i = 0; names && i < n; i++)
		tfk_free(names[i]);
	tfk_free(names);
	stale_release(&st);
	tfk_shardw_discard(w);	/* removes what was not renamed; frees w */
	return rc;
}

void tfk_shardw_discard(struct tfk_shardw *w)
{
	long i;

	if (!w)
		return;
	if (!w->prefix)
		tfk_out_discard(w->cur);
	for (i = 0; i < w->n_outs; i++)
		tfk_out_discard(w->outs[i]);
	tfk_free(w->outs);
	tfk_free(w->prefix);
	tfk_free(w);
}

uint64_t tfk_shardw_records(const struct tfk_shardw *w)
{
	return w->records;
}

uint64_t tfk_shardw_bytes(const struct tfk_shardw *w)
{
	return w->bytes;
}

long tfk_shardw_shards(const struct tfk_shardw *w)
{
	if (!w->prefix)
		return 1;
	return w->n_outs ? w->n_outs : 1;
}

/* Converter options ---------------------------------------------------- */

/* The output prefix a run really uses: -o PREFIX, plus "-taskIIIII"
 * when --shard I/N (or Slurm/MPI) splits the input over N > 1 tasks, so
 * tasks of one job array never write (or clean up) each other's
 * shards. NULL for stdout; malloc'd otherwise. */
static char *conv_prefix(const struct tfk_conv *c, long si, long sn)
{
	size_t n;
	char *s;

	if (!c->out || !strcmp(c->out, "-"))
		return NULL;
	n = strlen(c->out) + 32;
	s = tfk_malloc(n);
	if (!s)
		return NULL;
	if (sn > 1)
		snprintf(s, n, "%s-task%05ld", c->out, si);
	else
		snprintf(s, n, "%s", c->out);
	return s;
}

void tfk_conv_check(const struct tfk_conv *c, struct tfk_shardw_opts *o,
		    long *shard_i, long *shard_n)
{
	/* Reachable for the whole run: o->prefix points into it. */
	static char *prefix;
	int comp = tfk_comp_parse(c->compression ? c->compression : "none");

	if (comp != TFK_COMP_NONE && comp != TFK_COMP_GZIP &&
	    comp != TFK_COMP_ZLIB)
		tfk_cli_usage_error("--compression: expected none, gzip or zlib, "
				    "not '%s'", c->compression);
	if (c->jobs < 1 || c->jobs > 1024)
		tfk_cli_usage_error("-j: expected 1 to 1024 threads, not %ld",
				    c->jobs);
	if (c->num_shards < 0 || c->num_shards > MAX_SHARDS)
		tfk_cli_usage_error("--num-shards: expected 0 to %ld, not %ld",
				    MAX_SHARDS, c->num_shards);
	if (tfk_cli_shard(c->shard, shard_i, shard_n))
		tfk_cli_usage_error(c->shard ? "--shard: expected I/N with 0 <= I < N, not '%s'"
				    : "--shard: bad task id/count in the Slurm or MPI "
				      "environment%s", c->shard ? c->shard : "");
	if (c->out && (!*c->out || c->out[strlen(c->out) - 1] == '/'))
		tfk_cli_usage_error("-o '%s': PREFIX starts file names, it is not "
				    "a directory (try -o %sdata)", c->out, c->out);
	if (c->num_shards > 1 && (!c->out || !strcmp(c->out, "-")))
		tfk_cli_usage_error("--num-shards %ld needs -o PREFIX: stdout is one "
				    "stream", c->num_shards);
	tfk_free(prefix);
	prefix = conv_prefix(c, *shard_i, *shard_n);
	if (c->out && strcmp(c->out, "-") && !prefix)
		tfk_cli_usage_error("out of memory");
	o->prefix = prefix;
	o->shard_size = c->shard_size;
	o->num_shards = c->num_shards;
	o->comp = comp;
}

char *tfk_conv_schema_path(const struct tfk_conv *c)
{
	long si = 0, sn = 1;
	char *p, *s;
	size_t n;

	if (tfk_cli_shard(c->shard, &si, &sn)) {
		si = 0;
		sn = 1;
	}
	p = conv_prefix(c, si, sn);
	if (!p)
		return NULL;
	n = strlen(p) + 16;
	s = tfk_malloc(n);
	if (s)
		snprintf(s, n, "%s.schema.json", p);
	tfk_free(p);
	return s;
}
