/*
 * events-read.c - reading TensorBoard event files (tfk_evr_*) and
 * finding them under a log directory (tfk_ev_files_find).
 *
 * Records come from the TFRecord reader (crcs checked). A payload of
 * the shapes TensorFlow writes for scalars (simple_value, a TF2 scalar
 * tensor) is read by the wire scanner of events-scan.c, which
 * allocates nothing: its tags are copied, '\0'-terminated, into one
 * buffer reused by every event. Any other payload is unpacked by the
 * protobuf-c code generated from formats/event.proto and its summary
 * values are decoded into struct tfk_ev_value; the unpacked Event is
 * kept until the next call so tags and histogram buckets are borrowed,
 * not copied. Both give the same events (fuzz-events reads every input
 * both ways, tfk_evr_set_scan).
 *
 * Recovery follows tfk-cat --skip-corrupt: a data crc mismatch costs
 * its record, a bad header is followed by a resync on the next call, a
 * payload protobuf-c cannot unpack is reported and skipped, and a file
 * ending inside a record ends the file. Each is returned as an error so
 * the caller reports every one and still shows the readable rest.
 *
 * TF2's tf.summary writes a tag's plugin metadata with its first value
 * only; the reader keeps each such tag with the kind its plugin gave it
 * so later values of the same tag are read alike (EventAccumulator does
 * the same). A linear list: files hold tens of tags, not millions.
 * What a value needs beyond the unpacked Event (a TF2 histogram's
 * edges, an unpacked hparams proto) is allocated per event and freed
 * with it.
 */
#include "format/events.h"
#include "format/events-impl.h"

#include "formats/event.pb-c.h"
#include "formats/hparams_plugin_data.pb-c.h"
#include "io/record.h"
#include "util/alloc.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct tag_kind {
	char *tag;
	int kind;
};

/* One allocation of the current event: plain memory, or an unpacked
 * HParamsPluginData. */
struct scratch {
	struct scratch *next;
	Tensorboard__Hparams__HParamsPluginData *pd;
};

struct tfk_evr {
	struct tfk_rec_reader *rec;
	Tensorflow__Event *ev;		/* the last event, freed next call */
	struct tfk_ev_value *val;
	size_t cap_val;
	struct tag_kind *tags;		/* TF2 tags seen with a plugin */
	size_t n_tags, cap_tags;
	struct scratch *scratch;	/* this event's allocations */
	char *path;
	uint64_t end_off, end_index;	/* past the last whole record */
	int resync;			/* the last header was bad */
	int oom;
	int no_scan;			/* protobuf-c for every event */
	struct tfk_evs_event *scan;	/* the scanner's last event */
	char *str;			/* its tags and file_version */
	size_t cap_str;
	size_t n_clean;			/* val[0..n_clean) are zero but for
					   what from_scan sets */
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
		"other", "scalar", "histogram", "tensor", "image", "text",
		"hparams"
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

#define hparams_free tensorboard__hparams__hparams_plugin_data__free_unpacked
#define HP_START \
	TENSORBOARD__HPARAMS__HPARAMS_PLUGIN_DATA__DATA_SESSION_START_INFO
#define HP_END TENSORBOARD__HPARAMS__HPARAMS_PLUGIN_DATA__DATA_SESSION_END_INFO

static void free_event(struct tfk_evr *r)
{
	ProtobufCAllocator a = { pb_alloc, pb_free, NULL };

	while (r->scratch) {
		struct scratch *sc = r->scratch;

		r->scratch = sc->next;
		if (sc->pd)
			hparams_free(sc->pd, &a);
		tfk_free(sc);
	}
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
		tfk_free(r->tags[i].tag);
	tfk_free(r->tags);
	tfk_free(r->val);
	tfk_free(r->scan);
	tfk_free(r->str);
	tfk_free(r->path);
	tfk_free(r);
}

void tfk_evr_set_scan(struct tfk_evr *r, int on)
{
	r->no_scan = !on;
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

/* The kind a tag's plugin gave it, or -1 for a tag not seen with one. */
static int tag_kind(const struct tfk_evr *r, const char *tag)
{
	size_t i;

	for (i = 0; i < r->n_tags; i++)
		if (!strcmp(r->tags[i].tag, tag))
			return r->tags[i].kind;
	return -1;
}

static int tag_add(struct tfk_evr *r, const char *tag, int kind)
{
	struct tag_kind *nt;

	if (tag_kind(r, tag) >= 0)
		return 0;
	if (r->n_tags == r->cap_tags) {
		size_t cap = r->cap_tags ? 2 * r->cap_tags : 16;

		nt = tfk_realloc(r->tags, cap * sizeof(*nt));
		if (!nt)
			return -1;
		r->tags = nt;
		r->cap_tags = cap;
	}
	if (!(r->tags[r->n_tags].tag = tfk_strdup(tag)))
		return -1;
	r->tags[r->n_tags++].kind = kind;
	return 0;
}

/* n bytes freed with the current event; NULL when out of memory. */
static void *scratch_alloc(struct tfk_evr *r, size_t n)
{
	struct scratch *sc = tfk_calloc(1, sizeof(*sc) + n);

	if (!sc)
		return NULL;
	sc->next = r->scratch;
	r->scratch = sc;
	return sc + 1;
}

static int plugin_kind(const char *plugin)
{
	static const struct {
		const char *name;
		int kind;
	} k[] = {
		{ "scalars", TFK_EVK_SCALAR }, { "histograms", TFK_EVK_HISTO },
		{ "images", TFK_EVK_IMAGE }, { "text", TFK_EVK_TEXT },
		{ "hparams", TFK_EVK_HPARAMS },
	};
	size_t i;

	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (!strcmp(plugin, k[i].name))
			return k[i].kind;
	return TFK_EVK_TENSOR;
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

/* Element i of a float or double tensor as a double; -1 when t is
 * neither or too short. */
static int tensor_num(const Tensorflow__TensorProto *t, size_t i, double *v)
{
	const uint8_t *c = t->tensor_content.data;
	size_t n = t->tensor_content.len;
	uint64_t u = 0;
	int k;

	if (t->dtype == TENSORFLOW__DATA_TYPE__DT_FLOAT) {
		float f;

		if (i < t->n_float_val) {
			*v = t->float_val[i];
			return 0;
		}
		if (n < 4 || i >= n / 4)
			return -1;
		for (k = 3; k >= 0; k--)
			u = u << 8 | c[4 * i + (size_t)k];
		memcpy(&f, &(uint32_t){ (uint32_t)u }, 4);
		*v = f;
		return 0;
	}
	if (t->dtype == TENSORFLOW__DATA_TYPE__DT_DOUBLE) {
		if (i < t->n_double_val) {
			*v = t->double_val[i];
			return 0;
		}
		if (n < 8 || i >= n / 8)
			return -1;
		for (k = 7; k >= 0; k--)
			u = u << 8 | c[8 * i + (size_t)k];
		memcpy(v, &u, 8);
		return 0;
	}
	return -1;
}

/* Elements by the shape; -1 for a negative or absurd dimension. */
static int64_t tensor_elems(const Tensorflow__TensorProto *t, int *rank)
{
	int64_t n = 1;
	size_t i;

	*rank = t->tensor_shape ? (int)t->tensor_shape->n_dim : 0;
	for (i = 0; i < (size_t)*rank; i++) {
		int64_t d = t->tensor_shape->dim[i]->size;

		if (d < 0 || (d && n > INT64_MAX / 4 / d))
			return -1;
		n *= d;
	}
	return n;
}

/* A TF2 "histograms" tensor: [k, 3] rows of (left, right, count).
 * 1 done, 0 not one, -1 out of memory. */
static int tensor_histo(struct tfk_evr *r, const Tensorflow__TensorProto *t,
			struct tfk_ev_histo *h)
{
	int rank;
	int64_t n = tensor_elems(t, &rank);
	size_t k, i;
	double *lim, *cnt, left, right, c;

	if (rank != 2 || n < 0 || t->tensor_shape->dim[1]->size != 3)
		return 0;
	k = (size_t)t->tensor_shape->dim[0]->size;
	memset(h, 0, sizeof(*h));
	if (!k)
		return 1;
	if (tensor_num(t, 3 * k - 1, &c))
		return 0;
	if (!(lim = scratch_alloc(r, 2 * k * sizeof(double))))
		return -1;
	cnt = lim + k;
	for (i = 0; i < k; i++) {
		if (tensor_num(t, 3 * i, &left) ||
		    tensor_num(t, 3 * i + 1, &right) ||
		    tensor_num(t, 3 * i + 2, &c))
			return 0;
		if (!i)
			h->min = left;
		lim[i] = right;
		cnt[i] = c;
		h->num += c;
		/* bucket midpoints: the sums the tensor form no longer has */
		h->sum += c * (left + right) / 2;
		h->sum_squares += c * (left + right) / 2 * (left + right) / 2;
	}
	h->max = lim[k - 1];
	h->n_bucket = k;
	h->limit = lim;
	h->count = cnt;
	return 1;
}

static const char *sniff(const uint8_t *p, size_t n)
{
	if (n >= 8 && !memcmp(p, "\x89PNG\r\n\x1a\n", 8))
		return "png";
	if (n >= 3 && !memcmp(p, "\xff\xd8\xff", 3))
		return "jpeg";
	if (n >= 6 && (!memcmp(p, "GIF87a", 6) || !memcmp(p, "GIF89a", 6)))
		return "gif";
	if (n >= 2 && !memcmp(p, "BM", 2))
		return "bmp";
	return "unknown";
}

/* A decimal string of at most 9 digits (an image dimension); -1 if not. */
static int dim_str(const ProtobufCBinaryData *b)
{
	int v = 0;
	size_t i;

	if (!b->len || b->len > 9)
		return -1;
	for (i = 0; i < b->len; i++) {
		if (b->data[i] < '0' || b->data[i] > '9')
			return -1;
		v = v * 10 + (b->data[i] - '0');
	}
	return v;
}

/* A TF2 "images" tensor: strings width, height, image... 1 or 0. */
static int tensor_image(const Tensorflow__TensorProto *t,
			struct tfk_ev_image *im)
{
	if (t->dtype != TENSORFLOW__DATA_TYPE__DT_STRING ||
	    t->n_string_val < 2)
		return 0;
	im->width = dim_str(&t->string_val[0]);
	im->height = dim_str(&t->string_val[1]);
	if (im->width < 0 || im->height < 0)
		return 0;
	im->n = t->n_string_val - 2;
	im->format = "unknown";
	if (im->n) {
		im->data = t->string_val[2].data;
		im->nbytes = t->string_val[2].len;
		im->format = sniff(im->data, im->nbytes);
	}
	return 1;
}

static int cmp_hparam(const void *x, const void *y)
{
	return strcmp(((const struct tfk_hparam *)x)->name,
		      ((const struct tfk_hparam *)y)->name);
}

/* The hparams plugin's content. 1 done, 0 not HParamsPluginData, -1
 * out of memory. */
static int plugin_hparams(struct tfk_evr *r, const ProtobufCBinaryData *c,
			  struct tfk_ev_hparams *out)
{
	ProtobufCAllocator a = { pb_alloc, pb_free, &r->oom };
	Tensorboard__Hparams__HParamsPluginData *pd;
	const Tensorboard__Hparams__SessionStartInfo *si;
	void *slot = scratch_alloc(r, 0);	/* holds pd until freed */
	struct tfk_hparam *hp;
	size_t i;

	if (!slot)
		return -1;
	r->oom = 0;
	pd = tensorboard__hparams__hparams_plugin_data__unpack(&a, c->len,
							       c->data);
	if (!pd)
		return r->oom ? -1 : 0;
	((struct scratch *)slot - 1)->pd = pd;
	memset(out, 0, sizeof(*out));
	out->group = "";
	if (pd->data_case == HP_END && pd->session_end_info) {
		out->what = TFK_EVH_END;
		out->status = pd->session_end_info->status;
		out->end_time = pd->session_end_info->end_time_secs;
		return 1;
	}
	if (pd->data_case != HP_START || !(si = pd->session_start_info))
		return 1;	/* an experiment: by kind only */
	out->what = TFK_EVH_START;
	out->group = si->group_name ? si->group_name : "";
	out->start_time = si->start_time_secs;
	if (!(hp = scratch_alloc(r, (si->n_hparams + 1) * sizeof(*hp))))
		return -1;
	for (i = 0; i < si->n_hparams; i++) {
		const Google__Protobuf__Value *v = si->hparams[i]->value;

		hp[out->n].name = si->hparams[i]->key ? si->hparams[i]->key
			: "";
		hp[out->n].str = NULL;
		hp[out->n].num = 0;
		if (!v)
			continue;
		switch (v->kind_case) {
		case GOOGLE__PROTOBUF__VALUE__KIND_NUMBER_VALUE:
			hp[out->n].num = v->number_value;
			break;
		case GOOGLE__PROTOBUF__VALUE__KIND_STRING_VALUE:
			hp[out->n].str = v->string_value ? v->string_value
				: "";
			break;
		case GOOGLE__PROTOBUF__VALUE__KIND_BOOL_VALUE:
			hp[out->n].str = v->bool_value ? "true" : "false";
			break;
		default:
			continue;	/* no HParams column shows others */
		}
		out->n++;
	}
	qsort(hp, out->n, sizeof(*hp), cmp_hparam);
	out->hp = hp;
	return 1;
}

/* Decode one summary value into out. -1: out of memory. */
static int decode_value(struct tfk_evr *r, const Tensorflow__Summary__Value *v,
			struct tfk_ev_value *out)
{
	const Tensorflow__SummaryMetadata *md = v->metadata;
	const Tensorflow__SummaryMetadata__PluginData *pl =
		md && md->plugin_data ? md->plugin_data : NULL;
	const char *plugin = pl && pl->plugin_name ? pl->plugin_name : "";
	const Tensorflow__TensorProto *t = v->tensor;
	int kind, rc;

	memset(out, 0, sizeof(*out));
	out->tag = v->tag ? v->tag : "";
	out->tag_len = strlen(out->tag);
	out->kind = TFK_EVK_OTHER;
	switch (v->value_case) {
	case TENSORFLOW__SUMMARY__VALUE__VALUE_SIMPLE_VALUE:
		out->kind = TFK_EVK_SCALAR;
		out->value = v->simple_value;
		out->f32 = 1;
		return 0;
	case TENSORFLOW__SUMMARY__VALUE__VALUE_HISTO:
		if (!v->histo)
			return 0;
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
		return 0;
	case TENSORFLOW__SUMMARY__VALUE__VALUE_IMAGE:
		if (!v->image)
			return 0;
		out->kind = TFK_EVK_IMAGE;
		out->image.width = v->image->width;
		out->image.height = v->image->height;
		out->image.n = 1;
		out->image.data = v->image->encoded_image_string.data;
		out->image.nbytes = v->image->encoded_image_string.len;
		out->image.format = sniff(out->image.data, out->image.nbytes);
		return 0;
	case TENSORFLOW__SUMMARY__VALUE__VALUE_TENSOR:
		break;
	default:
		return 0;
	}
	if (!t)
		return 0;
	out->kind = TFK_EVK_TENSOR;
	kind = *plugin ? plugin_kind(plugin) : tag_kind(r, out->tag);
	if (*plugin && kind != TFK_EVK_TENSOR && tag_add(r, out->tag, kind))
		return -1;
	switch (kind) {
	case TFK_EVK_SCALAR:
		if (!tensor_scalar(t, &out->value, &out->f32))
			out->kind = TFK_EVK_SCALAR;
		break;
	case TFK_EVK_HISTO:
		if ((rc = tensor_histo(r, t, &out->histo)) < 0)
			return -1;
		if (rc)
			out->kind = TFK_EVK_HISTO;
		break;
	case TFK_EVK_IMAGE:
		if (tensor_image(t, &out->image))
			out->kind = TFK_EVK_IMAGE;
		break;
	case TFK_EVK_TEXT:
		if (t->dtype != TENSORFLOW__DATA_TYPE__DT_STRING)
			break;
		out->kind = TFK_EVK_TEXT;
		out->n_text = t->n_string_val;
		out->text = "";
		if (t->n_string_val) {
			out->text = (const char *)t->string_val[0].data;
			out->text_len = t->string_val[0].len;
		}
		break;
	case TFK_EVK_HPARAMS:
		if (!pl)
			break;
		if ((rc = plugin_hparams(r, &pl->content, &out->hparams)) < 0)
			return -1;
		if (rc)
			out->kind = TFK_EVK_HPARAMS;
		break;
	default:
		break;
	}
	return 0;
}

double tfk_ev_histo_quantile(const struct tfk_ev_histo *h, double q)
{
	double total = 0, want, cum = 0, prev, lhs, rhs;
	size_t i;

	for (i = 0; i < h->n_bucket; i++)
		total += h->count[i];
	if (!(total > 0))
		return NAN;
	want = q * total;
	for (i = 0; i < h->n_bucket; i++) {
		prev = cum;
		cum += h->count[i];
		if (cum <= want && !(i == h->n_bucket - 1))
			continue;
		if (cum == prev)
			continue;
		lhs = !i || !prev ? h->min : fmax(h->limit[i - 1], h->min);
		rhs = fmin(h->limit[i], h->max);
		if (want > cum)
			return h->max;
		return lhs + (rhs - lhs) * (want - prev) / (cum - prev);
	}
	return h->max;
}

static int grow_values(struct tfk_evr *r, size_t n)
{
	struct tfk_ev_value *nv;

	if (n <= r->cap_val)
		return 0;
	if (!(nv = tfk_realloc(r->val, n * sizeof(*nv))))
		return -1;
	r->val = nv;
	r->cap_val = n;
	return 0;
}

/*
 * The scanner's reading of the payload into *e. 0 done, 1 when a value
 * needs what only decode_value knows (a tensor whose tag was not seen
 * with the plugin "scalars"), -1 out of memory. Tags are looked up and
 * added in the order of the values, as decode_value does.
 */
static int from_scan(struct tfk_evr *r, struct tfk_ev_event *e)
{
	const struct tfk_evs_event *s = r->scan;
	size_t need = s->fv_len + 1, i;
	char *o;

	for (i = 0; i < s->n_value; i++)
		need += s->value[i].tag_len + 1;
	if (need > r->cap_str) {
		size_t cap = need < 256 ? 256 : 2 * need;

		tfk_free(r->str);
		if (!(r->str = tfk_malloc(cap))) {
			r->cap_str = 0;
			return -1;
		}
		r->cap_str = cap;
	}
	if (grow_values(r, s->n_value))
		return -1;
	o = r->str;
	for (i = 0; i < s->n_value; i++) {
		const struct tfk_evs_value *sv = &s->value[i];
		struct tfk_ev_value *v = &r->val[i];

		if (i >= r->n_clean) {
			memset(v, 0, sizeof(*v));
			r->n_clean = i + 1;
		}
		memcpy(o, sv->tag, sv->tag_len);
		o[sv->tag_len] = '\0';
		v->tag = o;
		v->tag_len = memchr(o, '\0', sv->tag_len) ? strlen(o)
			: sv->tag_len;
		o += sv->tag_len + 1;
		v->kind = TFK_EVK_SCALAR;
		v->value = sv->value;
		v->f32 = sv->f32;
		if (!sv->tensor)
			continue;
		if (sv->scalars) {
			if (tag_add(r, v->tag, TFK_EVK_SCALAR))
				return -1;
		} else if (tag_kind(r, v->tag) != TFK_EVK_SCALAR) {
			return 1;
		}
	}
	if (s->file_version) {
		memcpy(o, s->file_version, s->fv_len);
		o[s->fv_len] = '\0';
		e->file_version = o;
	}
	e->wall_time = s->wall_time;
	e->step = s->step;
	e->is_summary = s->is_summary;
	e->n_value = s->n_value;
	e->value = r->val;
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
	if (!r->no_scan && !r->scan &&
	    !(r->scan = tfk_malloc(sizeof(*r->scan))))
		return tfk_errf(err, TFK_ENOMEM, "%s: record %" PRIu64
				": out of memory", path, rec.index);
	if (!r->no_scan && tfk_evs_scan(rec.data, rec.len, r->scan)) {
		e->index = rec.index;
		e->off = rec.off;
		rc = from_scan(r, e);
		if (rc < 0)
			return tfk_errf(err, TFK_ENOMEM, "%s: record %" PRIu64
					": out of memory", path, rec.index);
		if (!rc)
			return 1;
		memset(e, 0, sizeof(*e));
	}
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
	if (grow_values(r, n))
		return tfk_errf(err, TFK_ENOMEM, "%s: record %" PRIu64
				": out of memory", path, rec.index);
	r->n_clean = 0;
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
