/*
 * events-read.c - reading TensorBoard event files (tfk_evr_*) and
 * finding them under a log directory (tfk_ev_files_find).
 *
 * Records come from the TFRecord reader (crcs checked), each payload is
 * unpacked by the protobuf-c code generated from formats/event.proto
 * and its summary values are decoded into struct tfk_ev_value. The
 * unpacked Event is kept until the next call so tags and histogram
 * buckets are borrowed, not copied.
 *
 * Recovery follows tfk-cat --skip-corrupt: a data crc mismatch costs
 * its record, a bad header is followed by a resync on the next call, a
 * payload protobuf-c cannot unpack is reported and skipped, and a file
 * ending inside a record ends the file. Each is returned as an error so
 * the caller reports every one and still shows the readable rest.
 *
 * TF2's tf.summary.scalar writes the "scalars" plugin metadata with a
 * tag's first value only; the reader keeps the names of such tags so
 * later values of the same tag count as scalars too (EventAccumulator
 * does the same). A linear list: files hold tens of tags, not millions.
 */
#include "format/events.h"

#include "formats/event.pb-c.h"
#include "io/record.h"
#include "util/alloc.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct tfk_evr {
	struct tfk_rec_reader *rec;
	Tensorflow__Event *ev;		/* the last event, freed next call */
	struct tfk_ev_value *val;
	size_t cap_val;
	char **scalar_tags;		/* TF2 tags seen with "scalars" */
	size_t n_tags, cap_tags;
	char *path;
	uint64_t end_off, end_index;	/* past the last whole record */
	int resync;			/* the last header was bad */
	int oom;
};

static void *pb_alloc(void *data, size_t n)
{
	void *p = tfk_malloc(n ? n : 1);

	if (!p && data)
		*(int *)data = 1;
	return p;
}

static void pb_free(void *data, void *p)
{
	(void)data;
	tfk_free(p);
}

const char *tfk_evk_name(int kind)
{
	static const char *const names[TFK_EVK_N] = {
		"other", "scalar", "histogram", "tensor"
	};

	return kind >= 0 && kind < TFK_EVK_N ? names[kind] : "other";
}

int tfk_evr_open(struct tfk_evr **out, const char *path, struct tfk_err *err)
{
	struct tfk_evr *r;
	int rc;

	*out = NULL;
	r = tfk_calloc(1, sizeof(*r));
	if (!r)
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", path);
	if (!(r->path = tfk_strdup(path))) {
		tfk_free(r);
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", path);
	}
	rc = tfk_rec_open(&r->rec, path, TFK_COMP_AUTO, 0, err);
	if (rc) {
		tfk_free(r->path);
		tfk_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

static void free_event(struct tfk_evr *r)
{
	ProtobufCAllocator a = { pb_alloc, pb_free, NULL };

	if (r->ev)
		tensorflow__event__free_unpacked(r->ev, &a);
	r->ev = NULL;
}

void tfk_evr_close(struct tfk_evr *r)
{
	size_t i;

	if (!r)
		return;
	free_event(r);
	tfk_rec_close(r->rec);
	for (i = 0; i < r->n_tags; i++)
		tfk_free(r->scalar_tags[i]);
	tfk_free(r->scalar_tags);
	tfk_free(r->val);
	tfk_free(r->path);
	tfk_free(r);
}

uint64_t tfk_evr_end(const struct tfk_evr *r)
{
	return r->end_off;
}

int tfk_evr_reopen(struct tfk_evr *r, struct tfk_err *err)
{
	struct tfk_rec_reader *nr;
	int rc;

	free_event(r);
	rc = tfk_rec_open(&nr, r->path, TFK_COMP_NONE, 0, err);
	if (rc)
		return rc;
	if (r->end_off && (rc = tfk_rec_seek(nr, r->end_off, r->end_index,
					     err))) {
		tfk_rec_close(nr);
		return rc;
	}
	tfk_rec_close(r->rec);
	r->rec = nr;
	r->resync = 0;
	return 0;
}

static int tag_known(const struct tfk_evr *r, const char *tag)
{
	size_t i;

	for (i = 0; i < r->n_tags; i++)
		if (!strcmp(r->scalar_tags[i], tag))
			return 1;
	return 0;
}

static int tag_add(struct tfk_evr *r, const char *tag)
{
	char **nt;

	if (tag_known(r, tag))
		return 0;
	if (r->n_tags == r->cap_tags) {
		size_t cap = r->cap_tags ? 2 * r->cap_tags : 16;

		nt = tfk_realloc(r->scalar_tags, cap * sizeof(*nt));
		if (!nt)
			return -1;
		r->scalar_tags = nt;
		r->cap_tags = cap;
	}
	if (!(r->scalar_tags[r->n_tags] = tfk_strdup(tag)))
		return -1;
	r->n_tags++;
	return 0;
}

/* The one element of a float or double scalar tensor, from its typed
 * field or its little-endian tensor_content. 0, or -1 when t is not
 * one. */
static int tensor_scalar(const Tensorflow__TensorProto *t, double *v,
			 int *f32)
{
	const uint8_t *c = t->tensor_content.data;
	size_t n = t->tensor_content.len;

	if (t->tensor_shape && t->tensor_shape->n_dim)
		return -1;
	if (t->dtype == TENSORFLOW__DATA_TYPE__DT_FLOAT) {
		float f;

		if (t->n_float_val >= 1)
			f = t->float_val[0];
		else if (n == 4) {
			uint32_t u = (uint32_t)c[0] | (uint32_t)c[1] << 8 |
				     (uint32_t)c[2] << 16 | (uint32_t)c[3] << 24;

			memcpy(&f, &u, 4);
		} else
			return -1;
		*v = f;
		*f32 = 1;
		return 0;
	}
	if (t->dtype == TENSORFLOW__DATA_TYPE__DT_DOUBLE) {
		if (t->n_double_val >= 1)
			*v = t->double_val[0];
		else if (n == 8) {
			uint64_t u = 0;
			int i;

			for (i = 7; i >= 0; i--)
				u = u << 8 | c[i];
			memcpy(v, &u, 8);
		} else
			return -1;
		*f32 = 0;
		return 0;
	}
	return -1;
}

/* Decode one summary value into out. -1: out of memory. */
static int decode_value(struct tfk_evr *r, const Tensorflow__Summary__Value *v,
			struct tfk_ev_value *out)
{
	const Tensorflow__SummaryMetadata *md = v->metadata;
	const char *plugin = md && md->plugin_data &&
		md->plugin_data->plugin_name ? md->plugin_data->plugin_name : "";

	memset(out, 0, sizeof(*out));
	out->tag = v->tag ? v->tag : "";
	out->kind = TFK_EVK_OTHER;
	switch (v->value_case) {
	case TENSORFLOW__SUMMARY__VALUE__VALUE_SIMPLE_VALUE:
		out->kind = TFK_EVK_SCALAR;
		out->value = v->simple_value;
		out->f32 = 1;
		break;
	case TENSORFLOW__SUMMARY__VALUE__VALUE_HISTO:
		if (!v->histo)
			break;
		out->kind = TFK_EVK_HISTO;
		out->histo.min = v->histo->min;
		out->histo.max = v->histo->max;
		out->histo.num = v->histo->num;
		out->histo.sum = v->histo->sum;
		out->histo.sum_squares = v->histo->sum_squares;
		/* TF writes as many limits as buckets; trust the shorter */
		out->histo.n_bucket = v->histo->n_bucket;
		if (out->histo.n_bucket > v->histo->n_bucket_limit)
			out->histo.n_bucket = v->histo->n_bucket_limit;
		out->histo.limit = v->histo->bucket_limit;
		out->histo.count = v->histo->bucket;
		break;
	case TENSORFLOW__SUMMARY__VALUE__VALUE_TENSOR:
		if (!v->tensor)
			break;
		out->kind = TFK_EVK_TENSOR;
		if (!strcmp(plugin, "scalars") ||
		    (!*plugin && tag_known(r, out->tag))) {
			if (tensor_scalar(v->tensor, &out->value, &out->f32))
				break;
			out->kind = TFK_EVK_SCALAR;
			if (*plugin && tag_add(r, out->tag))
				return -1;
		}
		break;
	default:
		break;
	}
	return 0;
}

int tfk_evr_next(struct tfk_evr *r, struct tfk_ev_event *e,
		 struct tfk_err *err)
{
	const char *path = tfk_rec_path(r->rec);
	struct tfk_rec rec;
	ProtobufCAllocator a = { pb_alloc, pb_free, NULL };
	Tensorflow__Event *ev;
	uint64_t off;
	size_t i, n;
	int rc;

	free_event(r);
	memset(e, 0, sizeof(*e));
	if (r->resync) {
		r->resync = 0;
		rc = tfk_rec_resync(r->rec, err);
		if (rc <= 0)
			return rc;
	}
	off = tfk_rec_offset(r->rec);
	rc = tfk_rec_next(r->rec, &rec, err);
	if (rc == TFK_ECORRUPT && tfk_rec_offset(r->rec) == off)
		r->resync = 1;
	if (rc != TFK_ETRUNC && (rc >= 0 || tfk_rec_offset(r->rec) != off)) {
		r->end_off = tfk_rec_offset(r->rec);
		r->end_index = tfk_rec_count(r->rec);
	}
	if (rc <= 0)
		return rc;
	r->oom = 0;
	a.allocator_data = &r->oom;
	ev = tensorflow__event__unpack(&a, rec.len, rec.data);
	if (!ev)
		return r->oom ? tfk_errf(err, TFK_ENOMEM, "%s: record %" PRIu64
					 ": out of memory", path, rec.index)
			: tfk_errf(err, TFK_ECORRUPT, "%s: record %" PRIu64
				   " at byte %" PRIu64 ": not a "
				   "tensorflow.Event (wire error in %zu "
				   "bytes)", path, rec.index, rec.off,
				   rec.len);
	r->ev = ev;
	e->wall_time = ev->wall_time;
	e->step = ev->step;
	e->index = rec.index;
	e->off = rec.off;
	if (ev->what_case == TENSORFLOW__EVENT__WHAT_FILE_VERSION)
		e->file_version = ev->file_version ? ev->file_version : "";
	if (ev->what_case != TENSORFLOW__EVENT__WHAT_SUMMARY || !ev->summary)
		return 1;
	e->is_summary = 1;
	n = ev->summary->n_value;
	if (n > r->cap_val) {
		struct tfk_ev_value *nv = tfk_realloc(r->val, n * sizeof(*nv));

		if (!nv)
			return tfk_errf(err, TFK_ENOMEM, "%s: record %" PRIu64
					": out of memory", path, rec.index);
		r->val = nv;
		r->cap_val = n;
	}
	for (i = 0; i < n; i++)
		if (decode_value(r, ev->summary->value[i], &r->val[i]))
			return tfk_errf(err, TFK_ENOMEM, "%s: record %" PRIu64
					": out of memory", path, rec.index);
	e->n_value = n;
	e->value = r->val;
	return 1;
}

/* Finding files ------------------------------------------------------ */

struct found {
	struct tfk_ev_file *f;
	size_t n, cap;
};

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = tfk_malloc(la + lb + 2);

	if (!s)
		return NULL;
	while (la > 1 && a[la - 1] == '/')
		la--;
	memcpy(s, a, la);
	s[la] = '/';
	memcpy(s + la + 1, b, lb + 1);
	return s;
}

static int cmp_file(const void *x, const void *y)
{
	const struct tfk_ev_file *a = x, *b = y;
	int c = strcmp(a->run, b->run);

	return c ? c : strcmp(a->path, b->path);
}

/* Walk dir (run: its name relative to the logdir) depth first. */
static int walk(struct found *fd, const char *dir, const char *run,
		int depth, struct tfk_err *err)
{
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if (depth > 64)
		return tfk_errf(err, TFK_EINVAL, "%s: directories nested too "
				"deep", dir);
	if (!(d = opendir(dir)))
		return tfk_errf(err, TFK_EIO, "%s: %s", dir, strerror(errno));
	while (!rc && (de = readdir(d))) {
		struct stat st;
		char *p;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!(p = join(dir, de->d_name))) {
			rc = tfk_errf(err, TFK_ENOMEM, "%s: out of memory", dir);
			break;
		}
		if (stat(p, &st)) {
			tfk_free(p);	/* a dangling link: not ours */
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			char *sub = strcmp(run, ".") ? join(run, de->d_name)
				: tfk_strdup(de->d_name);

			rc = sub ? walk(fd, p, sub, depth + 1, err)
				: tfk_errf(err, TFK_ENOMEM, "%s: out of memory",
					   dir);
			tfk_free(sub);
			tfk_free(p);
			continue;
		}
		if (!S_ISREG(st.st_mode) || !strstr(de->d_name, "tfevents")) {
			tfk_free(p);
			continue;
		}
		if (fd->n == fd->cap) {
			size_t cap = fd->cap ? 2 * fd->cap : 16;
			struct tfk_ev_file *nf = tfk_realloc(fd->f, cap *
							     sizeof(*nf));

			if (!nf) {
				tfk_free(p);
				rc = tfk_errf(err, TFK_ENOMEM, "%s: out of "
					      "memory", dir);
				break;
			}
			fd->f = nf;
			fd->cap = cap;
		}
		fd->f[fd->n].path = p;
		if (!(fd->f[fd->n].run = tfk_strdup(run))) {
			tfk_free(p);
			rc = tfk_errf(err, TFK_ENOMEM, "%s: out of memory", dir);
			break;
		}
		fd->n++;
	}
	closedir(d);
	return rc;
}

int tfk_ev_files_find(const char *logdir, struct tfk_ev_file **files,
		      size_t *n, struct tfk_err *err)
{
	struct found fd = { NULL, 0, 0 };
	int rc = walk(&fd, logdir, ".", 0, err);

	if (rc) {
		tfk_ev_files_free(fd.f, fd.n);
		*files = NULL;
		*n = 0;
		return rc;
	}
	if (fd.n)
		qsort(fd.f, fd.n, sizeof(*fd.f), cmp_file);
	*files = fd.f;
	*n = fd.n;
	return 0;
}

void tfk_ev_files_free(struct tfk_ev_file *files, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		tfk_free(files[i].run);
		tfk_free(files[i].path);
	}
	tfk_free(files);
}
