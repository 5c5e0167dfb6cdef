/*
 * feed.c - records to batches: an in-memory row store per model input.
 *
 * Each input is one column: a growable array of rows, each row the
 * feature's values in their storage type (raw image bytes stay bytes).
 * A batch is one conversion pass per row into a buffer the feed keeps,
 * so a training step costs n row conversions and no allocation; uint8
 * rows convert through a 256-entry table (value * scale + offset
 * computed once per byte value in double), which is both exact to the
 * documented formula and faster than the multiply.
 *
 * Defaults that need the data (which feature, which storage type) are
 * settled by the first record (or the schema sidecar when given), then
 * fixed: a later record that disagrees is an error naming it, not a
 * silent second interpretation.
 *
 * A record that fails leaves the store as before it: rows are appended
 * at the end of every column, so rolling back is resetting the count.
 *
 * Rejected: keeping the records themselves and decoding per batch (a
 * protobuf walk per row per epoch, and 30% more memory for the framing);
 * converting to float32 at load (4x the memory of uint8 images).
 */
#include "nn/feed.h"

#include "data/batch.h"
#include "example/example.h"
#include "graph/graph.h"
#include "io/in.h"
#include "io/record.h"
#include "util/alloc.h"
#include "util/buf.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

enum store {
	ST_NONE = 0,		/* not decided yet */
	ST_U8,			/* one bytes value, a byte per element */
	ST_I8,
	ST_F32_RAW,		/* one bytes value of little-endian float32 */
	ST_F32,			/* float_list */
	ST_I64,			/* int64_list */
	ST_STR			/* bytes_list, one element per value:
				 * (offset, length) into col->sbuf */
};

static const size_t store_size[] = { 0, 1, 1, 4, 4, 8, 16 };

struct col {
	const char *input;	/* model input name (the model's) */
	char *feature;		/* NULL until decided */
	enum store st;		/* ST_NONE until decided */
	enum store want;	/* from "dtype": ST_NONE (any), ST_U8, ST_I8,
				 * ST_F32 (list or raw), ST_I64 */
	int rank;		/* of one row (input shape without batch) */
	int64_t shape[TFK_MAX_RANK];
	int64_t numel;
	double scale, offset;
	enum tfk_dtype out;	/* placeholder dtype */
	float lut[256];		/* ST_U8/ST_I8 -> float */
	int u8conv;		/* U8_LUT, U8_MUL or U8_DIV: equal results */
	float fa, fo;		/* U8_MUL: v * fa + fo; U8_DIV: v / fa + fo */
	uint8_t *data;		/* cap rows of numel * store_size[st] */
	uint8_t *obuf;		/* batch output */
	size_t ocap;		/* bytes */
	struct tfk_buf sbuf;	/* ST_STR: the values' bytes */
};

/* One output's labels. */
struct lab {
	int sparse;
	char loss_name[40];
	char *feature;
	enum tfk_dtype out;		/* INT64/INT32 sparse, FLOAT dense */
	int64_t n_classes;		/* sparse: class ids < this (0: any) */
	int rank;			/* dense: row shape (-1: from data) */
	int64_t shape[TFK_MAX_RANK];
	int64_t numel;			/* dense: values per row (0: unknown) */
	void *data;			/* int64 [cap] or float [cap*numel] */
	uint8_t *buf;			/* the batch's */
	size_t cap;
};

/* Bytes one stored row of a label takes. */
static size_t lab_row(const struct lab *b)
{
	return b->sparse ? sizeof(int64_t) : (size_t)b->numel * sizeof(float);
}

struct tfk_feed {
	const struct tfk_spec *spec;
	const struct tfk_model *m;
	int n_cols;
	struct col *cols;
	struct tfk_tensor *views;	/* [n_cols]: the batch's inputs */
	/* labels: one per model output (none for inference) */
	int has_labels;
	int n_labs;
	struct lab *labs;
	struct tfk_tensor *lviews;	/* [n_labs]: the batch's labels */
	/* class weights */
	const float *cw;
	long n_cw;
	int32_t *cls;			/* [cap] class of each row */
	uint8_t *scratch;		/* int64 labels on their way to float */
	size_t scratch_cap;
	float *wbuf;
	size_t wcap;
	/* rows */
	size_t rows, cap, want_cap;
	int resolved;
	const struct tfk_schema *schema;	/* only until resolved */
	/* decoding */
	struct tfk_example ex, row_ex;
	struct tfk_batch bt;
	struct tfk_tensor label_t, weight_t;
};

static int ensure(uint8_t **buf, size_t *cap, size_t need,
		  struct tfk_err *err);

/* Allocation sizes: never 0 (a 0-byte malloc may return NULL). */
static size_t nz(size_t n)
{
	return n ? n : 1;
}

static const char *store_name(enum store st)
{
	switch (st) {
	case ST_U8: return "uint8";
	case ST_I8: return "int8";
	case ST_F32_RAW: case ST_F32: return "float32";
	case ST_I64: return "int64";
	case ST_STR: return "string";
	default: return "?";
	}
}

static const char *store_kind(enum store st)
{
	switch (st) {
	case ST_U8: case ST_I8: case ST_F32_RAW: return "bytes";
	case ST_F32: return "float";
	case ST_I64: return "int64";
	case ST_STR: return "bytes";
	default: return "?";
	}
}

/* "784 (28x28)" for messages. */
static void dims_str(const struct col *c, char *b, size_t n)
{
	int i, k;

	k = snprintf(b, n, "%" PRId64 " (", c->numel);
	for (i = 0; i < c->rank && k > 0 && (size_t)k < n; i++)
		k += snprintf(b + k, n - (size_t)k, "%s%" PRId64, i ? "x" : "",
			      c->shape[i]);
	if (k > 0 && (size_t)k < n)
		snprintf(b + k, n - (size_t)k, "%s)", c->rank ? "" : "scalar");
}

/* Setup ------------------------------------------------------------------- */

static int parse_store(const char *s, enum store *st)
{
	if (!strcmp(s, "uint8"))
		*st = ST_U8;
	else if (!strcmp(s, "int8"))
		*st = ST_I8;
	else if (!strcmp(s, "float32") || !strcmp(s, "float"))
		*st = ST_F32;
	else if (!strcmp(s, "int64"))
		*st = ST_I64;
	else if (!strcmp(s, "string"))
		*st = ST_STR;
	else
		return -1;
	return 0;
}

static int input_cfg(struct tfk_feed *f, struct col *c, const json_t *cfg,
		     const char *where, struct tfk_err *err)
{
	static const char *const keys[] = { "feature", "dtype", "shape",
					    "scale", "offset", NULL };
	const char *s;
	json_t *sh, *v;
	int64_t shape[TFK_MAX_RANK], numel = 1;
	char want[64], got[300];
	size_t i;
	int rc, k;

	if (!json_is_object(cfg))
		return tfk_errf(err, TFK_EINVAL, "%s: expected an object "
				"{\"feature\": ..., \"dtype\": ..., \"shape\": "
				"[...], \"scale\": ..., \"offset\": ...}", where);
	if ((rc = tfk_spec_check_keys(cfg, where, keys, err)) < 0 ||
	    (rc = tfk_spec_num(cfg, "scale", where, 1, -HUGE_VAL, HUGE_VAL, 0,
			       &c->scale, err)) < 0 ||
	    (rc = tfk_spec_num(cfg, "offset", where, 0, -HUGE_VAL, HUGE_VAL, 0,
			       &c->offset, err)) < 0 ||
	    (rc = tfk_spec_str(cfg, "feature", where, NULL, &s, err)) < 0)
		return rc;
	if (s && !(c->feature = tfk_strdup(s)))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if ((rc = tfk_spec_str(cfg, "dtype", where, NULL, &s, err)) < 0)
		return rc;
	if (s && parse_store(s, &c->want))
		return tfk_errf(err, TFK_EINVAL, "%s.dtype: expected uint8, "
				"int8, float32 or int64", where);
	sh = json_object_get(cfg, "shape");
	if (sh && !json_is_null(sh)) {
		if (!json_is_array(sh) || json_array_size(sh) > TFK_MAX_RANK)
			return tfk_errf(err, TFK_EINVAL, "%s.shape: expected a "
					"list of at most %d sizes", where,
					TFK_MAX_RANK);
		json_array_foreach(sh, i, v) {
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > INT32_MAX)
				return tfk_errf(err, TFK_EINVAL, "%s.shape[%zu]: "
						"expected a size >= 0", where,
						i);
			shape[i] = json_integer_value(v);
			numel *= shape[i];
		}
		if (c->numel >= 0 && numel != c->numel) {
			dims_str(c, want, sizeof(want));
			k = snprintf(got, sizeof(got), "[");
			for (i = 0; i < json_array_size(sh); i++)
				k += snprintf(got + k, sizeof(got) - (size_t)k,
					      "%s%" PRId64, i ? ", " : "",
					      shape[i]);
			snprintf(got + k, sizeof(got) - (size_t)k, "]");
			return tfk_errf(err, TFK_EINVAL, "%s.shape: %s has %"
					PRId64 " elements, %s needs %s", where,
					got, numel, c->input, want);
		}
		if (c->numel < 0) {
			/* the input has unknown dims: the spec's shape
			 * names them, and must agree with the known ones */
			if ((int)json_array_size(sh) != c->rank)
				return tfk_errf(err, TFK_EINVAL, "%s.shape: "
						"expected %d sizes (the rank "
						"of %s)", where, c->rank,
						c->input);
			for (k = 0; k < c->rank; k++)
				if (c->shape[k] >= 0 && c->shape[k] !=
				    shape[k])
					return tfk_errf(err, TFK_EINVAL,
							"%s.shape[%d]: %s has "
							"%" PRId64 " there",
							where, k, c->input,
							c->shape[k]);
			memcpy(c->shape, shape, sizeof(shape));
			c->numel = numel;
		}
	}
	(void)f;
	return 0;
}

static int label_cfg(struct lab *b, const json_t *cfg, const char *where,
		     struct tfk_err *err)
{
	static const char *const keys[] = { "feature", "dtype", NULL };
	const char *s;
	enum tfk_dtype t;
	int rc;

	if (!json_is_object(cfg))
		return tfk_errf(err, TFK_EINVAL, "%s: expected an object "
				"{\"feature\": ..., \"dtype\": ...}", where);
	if ((rc = tfk_spec_check_keys(cfg, where, keys, err)) < 0 ||
	    (rc = tfk_spec_str(cfg, "feature", where, NULL, &s, err)) < 0)
		return rc;
	if (s) {
		tfk_free(b->feature);
		if (!(b->feature = tfk_strdup(s)))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	if ((rc = tfk_spec_str(cfg, "dtype", where, NULL, &s, err)) < 0)
		return rc;
	if (!s)
		return 0;
	if (tfk_dtype_parse(s, &t) < 0 ||
	    (b->sparse ? t != TFK_DT_INT64 && t != TFK_DT_INT32
		       : t != TFK_DT_FLOAT))
		return tfk_errf(err, TFK_EINVAL, "%s.dtype: expected %s for "
				"%s", where, b->sparse ? "int64 or int32" :
				"float32", b->loss_name);
	b->out = t;
	return 0;
}

/* Is labels the per-output form, {"<output>": {...}, ...}? With one
 * output only when its key is the output's name (the one-output form's
 * keys are "feature" and "dtype"). */
static int per_output(const json_t *labels, const struct tfk_model *m)
{
	const char *key;
	json_t *v;

	if (m->n_outputs > 1)
		return 1;
	json_object_foreach((json_t *)labels, key, v)
		if (m->n_outputs == 1 && !strcmp(key, m->outputs[0].name) &&
		    strcmp(key, "feature") && strcmp(key, "dtype"))
			return 1;
	return 0;
}

/* Output o's label: loss ls, shape from the output, the default
 * feature dflt. */
static int lab_init(struct lab *b, const struct tfk_model *m, int o,
		    const struct tfk_loss_spec *ls, const char *dflt,
		    struct tfk_err *err)
{
	const struct tfk_tdesc *d;
	int k;

	snprintf(b->loss_name, sizeof(b->loss_name), "%s", ls->name);
	b->sparse = !strncmp(ls->name, "sparse_", 7);
	b->out = b->sparse ? TFK_DT_INT64 : TFK_DT_FLOAT;
	d = tfk_graph_desc(m->g, m->outputs[o].train);
	b->rank = -1;
	if (d && d->rank >= 1) {
		int64_t last = d->shape[d->rank - 1];

		if (b->sparse) {
			b->n_classes = d->rank >= 2 && last > 0 ? last : 0;
		} else {
			b->rank = d->rank - 1;
			b->numel = 1;
			for (k = 0; k < b->rank; k++) {
				b->shape[k] = d->shape[k + 1];
				if (b->shape[k] < 0)
					b->rank = -1;
				else
					b->numel *= b->shape[k];
			}
			if (b->rank < 0)
				b->numel = 0;
		}
	}
	b->feature = tfk_strdup(dflt);
	return b->feature ? 0 : tfk_errf(err, TFK_ENOMEM, "out of memory");
}

/* The "labels" section (NULL: defaults): one output, {"feature",
 * "dtype"} or {"<output>": {...}}; several, {"<output>": {...}} with
 * each output's feature defaulting to its name. */
static int labels_cfg(struct tfk_feed *f, const json_t *labels,
		      const struct tfk_feed_opts *o, struct tfk_err *err)
{
	const struct tfk_model *m = f->m;
	const char *name = tfk_spec_name(f->spec), *key;
	char where[400], outs[300];
	size_t at = 0;
	json_t *v;
	int i, rc, per = labels && json_is_object(labels) &&
		per_output(labels, m);

	outs[0] = 0;
	for (i = 0; i < m->n_outputs && at < sizeof(outs); i++)
		at += (size_t)snprintf(outs + at, sizeof(outs) - at, "%s%s",
				       i ? ", " : "", m->outputs[i].name);
	if (m->n_outputs > 1 && (o->n_loss != m->n_outputs || o->output))
		return tfk_errf(err, TFK_EINVAL, "%s: labels: %d losses for "
				"a model with %d outputs", name,
				o->n_loss ? o->n_loss : 1, m->n_outputs);
	if (m->n_outputs < 1 || o->output < 0 || o->output >= m->n_outputs)
		return tfk_errf(err, TFK_EINVAL, "%s: labels: the model has "
				"no output %d", name, o->output);
	if (labels && !json_is_object(labels))
		return tfk_errf(err, TFK_EINVAL, "%s: labels: expected an "
				"object {\"feature\": ..., \"dtype\": ...}%s",
				name, m->n_outputs > 1 ? " per output" : "");
	if (per) {
		json_object_foreach((json_t *)labels, key, v) {
			for (i = 0; i < m->n_outputs; i++)
				if (!strcmp(m->outputs[i].name, key))
					break;
			if (i < m->n_outputs)
				continue;
			if (m->n_outputs > 1 && (!strcmp(key, "feature") ||
						 !strcmp(key, "dtype")))
				return tfk_errf(err, TFK_EINVAL, "%s: labels."
						"%s: the model has %d outputs "
						"(%s): give one entry per "
						"output, {\"%s\": {\"feature\":"
						" ...}, ...}", name, key,
						m->n_outputs, outs,
						m->outputs[0].name);
			return tfk_errf(err, TFK_EINVAL, "%s: labels.%s: the "
					"model has no output '%s' (outputs: "
					"%s)", name, key, key, outs);
		}
	}
	f->n_labs = m->n_outputs > 1 ? m->n_outputs : 1;
	f->labs = tfk_calloc((size_t)f->n_labs, sizeof(*f->labs));
	f->lviews = tfk_calloc((size_t)f->n_labs, sizeof(*f->lviews));
	if (!f->labs || !f->lviews)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	f->has_labels = 1;
	for (i = 0; i < f->n_labs; i++) {
		int out = f->n_labs > 1 ? i : o->output;
		const char *oname = m->outputs[out].name;
		const json_t *e;

		rc = lab_init(&f->labs[i], m, out, &o->loss[i],
			      f->n_labs > 1 ? oname : "label", err);
		if (rc < 0)
			return rc;
		e = !labels ? NULL : per ? json_object_get(labels, oname) :
			labels;
		if (!e || json_is_null(e))
			continue;
		if (per)
			snprintf(where, sizeof(where), "%.200s: labels.%.150s",
				 name, oname);
		else
			snprintf(where, sizeof(where), "%.200s: labels", name);
		if ((rc = label_cfg(&f->labs[i], e, where, err)) < 0)
			return rc;
	}
	if (o->class_weight && o->n_class_weight > 0) {
		if (f->n_labs > 1)
			return tfk_errf(err, TFK_EINVAL, "%s: fit.class_weight: "
					"only supported for models with a "
					"single output (as Keras)", name);
		f->cw = o->class_weight;
		f->n_cw = o->n_class_weight;
	}
	return 0;
}

struct loc;
static int resolve(struct tfk_feed *f, const struct tfk_example *ex,
		   const struct loc *l, struct tfk_err *err);

enum { U8_LUT = 0, U8_MUL, U8_DIV };

/* uint8 rows to float32 in a form the compiler vectorizes (restrict,
 * not inlined, fixed-length blocks: -O2's cheap vectorizer needs no alias
 * check and no epilogue); used
 * only when it gives exactly the table's values (checked on all 256). */
static __attribute__((noinline)) void
u8_mul(const uint8_t *restrict s, float *restrict d, size_t n, float a,
       float o)
{
	size_t j, k;

	/* blocks of a fixed length: what -O2's cheap vectorizer takes */
	for (j = 0; j + 16 <= n; j += 16)
		for (k = 0; k < 16; k++)
			d[j + k] = (float)s[j + k] * a + o;
	for (; j < n; j++)
		d[j] = (float)s[j] * a + o;
}

static __attribute__((noinline)) void
u8_div(const uint8_t *restrict s, float *restrict d, size_t n, float a,
       float o)
{
	size_t j, k;

	/* blocks of a fixed length: what -O2's cheap vectorizer takes */
	for (j = 0; j + 16 <= n; j += 16)
		for (k = 0; k < 16; k++)
			d[j + k] = (float)s[j + k] / a + o;
	for (; j < n; j++)
		d[j] = (float)s[j] / a + o;
}

/*
 * The table is the definition: float32(v * scale + offset) in double.
 * A table lookup per byte is a gather the compiler cannot vectorize, so
 * when float arithmetic reproduces the whole table bit for bit, that is
 * used instead: v / 255.0f does for scale 1/255 (and is what PyTorch's
 * x.float() / 255 computes), while v * float(1/255) differs in 126 of
 * the 256 values.
 */
/* The conversion training makes for a float input: (float)(v * scale +
 * offset) in double, for n stored values of st at src (tfk_feed_feat_
 * floats and every path of convert_row give these bits). */
static void to_float(enum store st, const void *src, size_t n,
		     double scale, double offset, float *dst)
{
	size_t j;

	switch (st) {
	case ST_U8:
		for (j = 0; j < n; j++)
			dst[j] = (float)((double)((const uint8_t *)src)[j] *
					 scale + offset);
		break;
	case ST_I8:
		for (j = 0; j < n; j++)
			dst[j] = (float)((double)((const int8_t *)src)[j] *
					 scale + offset);
		break;
	case ST_F32: case ST_F32_RAW:
		if (scale == 1 && offset == 0) {
			memmove(dst, src, n * 4);
			break;
		}
		for (j = 0; j < n; j++) {
			float v;

			memcpy(&v, (const uint8_t *)src + 4 * j, 4);
			dst[j] = (float)(v * scale + offset);
		}
		break;
	case ST_I64:
		for (j = 0; j < n; j++)
			dst[j] = (float)((double)((const int64_t *)src)[j] *
					 scale + offset);
		break;
	default:
		break;
	}
}

static void make_lut(struct col *c)
{
	uint8_t all[256];
	float got[256];
	double k;
	int v;

	for (v = 0; v < 256; v++)
		all[v] = (uint8_t)v;
	to_float(c->st, all, 256, c->scale, c->offset, c->lut);
	c->u8conv = U8_LUT;
	if (c->st != ST_U8)
		return;
	c->fo = (float)c->offset;
	c->fa = (float)c->scale;
	u8_mul(all, got, 256, c->fa, c->fo);
	if (!memcmp(got, c->lut, sizeof(got))) {
		c->u8conv = U8_MUL;
		return;
	}
	k = c->scale != 0 ? 1 / c->scale : 0;
	if (k >= 1 && k < 1e7 && fabs(k - nearbyint(k)) < 1e-6 * k) {
		c->fa = (float)nearbyint(k);
		u8_div(all, got, 256, c->fa, c->fo);
		if (!memcmp(got, c->lut, sizeof(got)))
			c->u8conv = U8_DIV;
	}
}

int tfk_feed_new(struct tfk_feed **out, const struct tfk_spec *s,
		 const struct tfk_model *m, const struct tfk_feed_opts *o,
		 struct tfk_err *err)
{
	struct tfk_feed *f;
	const json_t *inputs, *labels, *v;
	const char *name = tfk_spec_name(s), *key;
	char where[400];
	int i, k, rc;

	*out = NULL;
	f = tfk_calloc(1, sizeof(*f));
	if (!f)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	f->spec = s;
	f->m = m;
	f->schema = o ? o->schema : NULL;
	tfk_example_init(&f->ex);
	tfk_example_init(&f->row_ex);
	tfk_batch_init(&f->bt);
	f->n_cols = m->n_inputs;
	f->cols = tfk_calloc((size_t)(m->n_inputs ? m->n_inputs : 1),
			     sizeof(*f->cols));
	f->views = tfk_calloc((size_t)(m->n_inputs ? m->n_inputs : 1),
			      sizeof(*f->views));
	if (!f->cols || !f->views) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto fail;
	}
	inputs = json_object_get(tfk_spec_json(s), "inputs");
	if (json_is_null(inputs))
		inputs = NULL;
	labels = json_object_get(tfk_spec_json(s), "labels");
	if (json_is_null(labels))
		labels = NULL;
	/* every key of "inputs" must be a model input */
	if (inputs) {
		json_object_foreach((json_t *)inputs, key, v) {
			for (i = 0; i < m->n_inputs; i++)
				if (!strcmp(m->inputs[i].name, key))
					break;
			if (i == m->n_inputs) {
				rc = tfk_errf(err, TFK_EINVAL, "%s: inputs.%s: "
					      "the model has no input '%s' "
					      "(inputs:%s%s%s)", name, key,
					      key, m->n_inputs ? " " : " none",
					      m->n_inputs ? m->inputs[0].name
							  : "",
					      m->n_inputs > 1 ? ", ..." : "");
				goto fail;
			}
		}
	}
	for (i = 0; i < m->n_inputs; i++) {
		struct col *c = &f->cols[i];
		const struct tfk_model_input *mi = &m->inputs[i];

		c->input = mi->name;
		c->scale = 1;
		c->out = mi->dtype;
		if (mi->rank < 1) {
			rc = tfk_errf(err, TFK_EINVAL, "%s: model input %s: "
				      "expected a batch dimension", name,
				      mi->name);
			goto fail;
		}
		c->rank = mi->rank - 1;
		c->numel = 1;
		for (k = 0; k < c->rank; k++) {
			c->shape[k] = mi->shape[k + 1];
			if (c->shape[k] < 0)
				c->numel = -1;
			else if (c->numel >= 0)
				c->numel *= c->shape[k];
		}
		if (c->out != TFK_DT_FLOAT && c->out != TFK_DT_DOUBLE &&
		    c->out != TFK_DT_INT32 && c->out != TFK_DT_INT64 &&
		    c->out != TFK_DT_UINT8 && c->out != TFK_DT_STRING) {
			rc = tfk_errf(err, TFK_EINVAL, "%s: model input %s: "
				      "dtype %s cannot be fed from records",
				      name, mi->name,
				      tfk_dtype_name(c->out));
			goto fail;
		}
		v = inputs ? json_object_get(inputs, mi->name) : NULL;
		if (v && !json_is_null(v)) {
			snprintf(where, sizeof(where), "%.200s: inputs.%.150s",
				 name, mi->name);
			rc = input_cfg(f, c, v, where, err);
			if (rc < 0)
				goto fail;
		}
		/* string inputs take bytes values, one per element */
		if (c->out == TFK_DT_STRING ? c->want != ST_NONE &&
		    c->want != ST_STR : c->want == ST_STR) {
			rc = tfk_errf(err, TFK_EINVAL, "%s: inputs.%s.dtype: "
				      "%s values cannot feed the %s input %s",
				      name, mi->name, store_name(c->want),
				      tfk_dtype_name(c->out), mi->name);
			goto fail;
		}
		if (c->out == TFK_DT_STRING)
			c->want = ST_STR;
		if (c->numel < 0) {
			rc = tfk_errf(err, TFK_EINVAL, "%s: inputs.%s.shape: "
				      "required: the input's shape has "
				      "unknown sizes", name, mi->name);
			goto fail;
		}
		if (c->want == ST_F32 && (c->out == TFK_DT_INT32 ||
					  c->out == TFK_DT_INT64 ||
					  c->out == TFK_DT_UINT8)) {
			rc = tfk_errf(err, TFK_EINVAL, "%s: inputs.%s.dtype: "
				      "float32 values cannot feed the %s "
				      "input %s", name, mi->name,
				      tfk_dtype_name(c->out), mi->name);
			goto fail;
		}
	}

	/* labels */
	if (o && o->loss && (rc = labels_cfg(f, labels, o, err)) < 0)
		goto fail;
	/* with a schema the defaults are settled now: it is not kept */
	if (f->schema && (rc = resolve(f, NULL, NULL, err)) < 0)
		goto fail;
	f->schema = NULL;
	*out = f;
	return 0;
fail:
	tfk_feed_free(f);
	return rc;
}

void tfk_feed_free(struct tfk_feed *f)
{
	int i;

	if (!f)
		return;
	for (i = 0; f->cols && i < f->n_cols; i++) {
		tfk_free(f->cols[i].feature);
		tfk_free(f->cols[i].data);
		tfk_free(f->cols[i].obuf);
		tfk_buf_release(&f->cols[i].sbuf);
	}
	tfk_free(f->cols);
	tfk_free(f->views);
	for (i = 0; f->labs && i < f->n_labs; i++) {
		tfk_free(f->labs[i].feature);
		tfk_free(f->labs[i].data);
		tfk_free(f->labs[i].buf);
	}
	tfk_free(f->labs);
	tfk_free(f->lviews);
	tfk_free(f->cls);
	tfk_free(f->wbuf);
	tfk_free(f->scratch);
	tfk_example_release(&f->ex);
	tfk_example_release(&f->row_ex);
	tfk_batch_release(&f->bt);
	tfk_free(f);
}

/* Schema sidecars ---------------------------------------------------------- */

static int is_file(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Strip a trailing suffix; returns 1 when it was there. */
static int strip(char *p, const char *suf)
{
	size_t n = strlen(p), k = strlen(suf);

	if (n <= k || strcmp(p + n - k, suf))
		return 0;
	p[n - k] = 0;
	return 1;
}

/* "-NNNNN-of-NNNNN" at the end of p: strip it. */
static int strip_shard(char *p)
{
	size_t n = strlen(p), i;
	static const char pat[] = "-#####-of-#####";

	if (n <= sizeof(pat) - 1)
		return 0;
	for (i = 0; i < sizeof(pat) - 1; i++) {
		char c = p[n - (sizeof(pat) - 1) + i];

		if (pat[i] == '#' ? c < '0' || c > '9' : c != pat[i])
			return 0;
	}
	p[n - (sizeof(pat) - 1)] = 0;
	return 1;
}

int tfk_feed_find_schema(const char *path, struct tfk_schema *schema,
			 struct tfk_err *err)
{
	static const char *const comp_ext[] = { ".gz", ".zz", ".zlib", NULL };
	size_t n;
	char *p;
	int i, rc, found = 0;

	if (!path || !strcmp(path, "-"))
		return 0;
	n = strlen(path);
	p = tfk_malloc(n + 16);
	if (!p)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	/* FILE.schema.json */
	snprintf(p, n + 16, "%s.schema.json", path);
	if (is_file(p)) {
		found = 1;
	} else {
		memcpy(p, path, n + 1);
		for (i = 0; comp_ext[i]; i++)
			if (strip(p, comp_ext[i]))
				break;
		if (strip(p, ".tfrecord") || strip(p, ".tfrecords")) {
			size_t k = strlen(p);

			memcpy(p + k, ".schema.json", 13);
			if (is_file(p)) {
				found = 1;
			} else {
				p[k] = 0;
				if (strip_shard(p)) {
					strcat(p, ".schema.json");
					found = is_file(p);
				}
			}
		}
	}
	if (!found) {
		tfk_free(p);
		return 0;
	}
	rc = tfk_schema_read(schema, p, err);
	tfk_free(p);
	return rc < 0 ? rc : 1;
}

/* Rows -------------------------------------------------------------------- */

/* Where a record is, for messages. */
struct loc {
	const char *file;
	uint64_t index;
	long row;		/* -1: not a batched record */
};

static int locf(struct tfk_err *err, int code, const struct loc *l,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int locf(struct tfk_err *err, int code, const struct loc *l,
		const char *fmt, ...)
{
	char msg[TFK_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (l->row >= 0)
		return tfk_errf(err, code, "%s: record %" PRIu64 " row %ld: %s",
				l->file, l->index, l->row, msg);
	return tfk_errf(err, code, "%s: record %" PRIu64 ": %s", l->file,
			l->index, msg);
}

static int reserved(const char *name, size_t n)
{
	return (n == 6 && !memcmp(name, TFK_BATCH_ROWS, 6)) ||
	       (n >= 12 && !memcmp(name + n - 12, TFK_BATCH_LENGTHS, 12)) ||
	       (n == 12 && !memcmp(name, TFK_BATCH_ORDER, 12));
}

/* Names of the candidate features, for the "which feature" message. */
static void list_features(const struct tfk_feed *f,
			  const struct tfk_example *ex, char *b, size_t n)
{
	size_t i, k = 0;

	b[0] = 0;
	if (f->schema) {
		for (i = 0; i < f->schema->n_feat && k < n; i++)
			k += (size_t)snprintf(b + k, n - k, "%s%s", i ? ", " : "",
					      f->schema->feat[i].name);
		return;
	}
	for (i = 0; i < ex->n_feat && k < n; i++)
		k += (size_t)snprintf(b + k, n - k, "%s%.*s", i ? ", " : "",
				      (int)ex->feat[i].name_len,
				      ex->feat[i].name);
}

static int has_feature(const struct tfk_feed *f, const struct tfk_example *ex,
		       const char *name)
{
	if (f->schema)
		return tfk_schema_find(f->schema, name) != NULL;
	return tfk_example_findn(ex, name, strlen(name)) != NULL;
}

/* The only feature that is not the label into *out (a copy), or NULL
 * when there is none or several. 0 or TFK_ENOMEM. */
static int only_other(const struct tfk_feed *f, const struct tfk_example *ex,
		      char **out)
{
	const char *cand = NULL;
	size_t i, cn = 0, nf;
	int j;

	*out = NULL;
	nf = f->schema ? f->schema->n_feat : ex->n_feat;
	for (i = 0; i < nf; i++) {
		const char *nm;
		size_t len;

		if (f->schema) {
			nm = f->schema->feat[i].name;
			len = f->schema->feat[i].name_len;
		} else {
			nm = ex->feat[i].name;
			len = ex->feat[i].name_len;
		}
		if (reserved(nm, len))
			continue;
		for (j = 0; j < f->n_labs; j++) {
			const char *lab = f->labs[j].feature;

			if (strlen(lab) == len && !memcmp(nm, lab, len))
				break;
		}
		if (j < f->n_labs)
			continue;
		if (cand)
			return 0;
		cand = nm;
		cn = len;
	}
	if (!cand || memchr(cand, 0, cn))
		return 0;
	*out = tfk_malloc(cn + 1);
	if (!*out)
		return TFK_ENOMEM;
	memcpy(*out, cand, cn);
	(*out)[cn] = 0;
	return 0;
}

/* Settle the feature names from the schema or the first record. */
static int resolve(struct tfk_feed *f, const struct tfk_example *ex,
		   const struct loc *l, struct tfk_err *err)
{
	const char *name = tfk_spec_name(f->spec);
	char list[300];
	int i;

	for (i = 0; i < f->n_cols; i++) {
		struct col *c = &f->cols[i];

		if (c->feature)
			continue;
		if (has_feature(f, ex, c->input)) {
			c->feature = tfk_strdup(c->input);
		} else if (f->n_cols == 1) {
			if (only_other(f, ex, &c->feature) < 0)
				return tfk_errf(err, TFK_ENOMEM,
						"out of memory");
		}
		if (!c->feature && !has_feature(f, ex, c->input) &&
		    f->n_cols == 1) {
			list_features(f, ex, list, sizeof(list));
			if (f->schema || !l)
				return tfk_errf(err, TFK_EINVAL, "%s: inputs: "
						"cannot tell which feature "
						"feeds %s (features: %s); map "
						"it in \"inputs\"", name,
						c->input, list);
			return locf(err, TFK_EINVAL, l, "cannot tell which "
				    "feature feeds %s (features: %s); map it "
				    "in %s's \"inputs\"", c->input, list, name);
		}
		if (!c->feature && f->n_cols > 1)
			return tfk_errf(err, TFK_EINVAL, "%s: inputs.%s: no "
					"feature named %s; map it in "
					"\"inputs\"", name, c->input,
					c->input);
		if (!c->feature)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		/* the schema's dtype decides raw bytes' element type */
		if (c->want == ST_NONE && f->schema) {
			const struct tfk_schema_feat *sf =
				tfk_schema_find(f->schema, c->feature);

			if (sf && sf->kind == TFK_FEAT_BYTES && sf->dtype[0] &&
			    parse_store(sf->dtype, &c->want))
				return tfk_errf(err, TFK_EINVAL, "%s: inputs.%s: "
						"the schema gives feature %s "
						"dtype %s, which cannot feed "
						"a model; map it in "
						"\"inputs\"", name, c->input,
						c->feature, sf->dtype);
		}
	}
	f->resolved = 1;
	f->schema = NULL;
	return 0;
}

/* Decide a column's storage from the kind of its first value. */
static int decide_store(struct col *c, const struct tfk_feat *ft,
			const struct loc *l, struct tfk_err *err)
{
	enum store st = ST_NONE;

	switch (ft->kind) {
	case TFK_FEAT_BYTES:
		st = c->want == ST_STR ? ST_STR :
		     c->want == ST_NONE ? ST_U8 :
		     c->want == ST_F32 ? ST_F32_RAW :
		     c->want == ST_I64 ? ST_NONE : c->want;
		break;
	case TFK_FEAT_FLOAT:
		st = c->want == ST_NONE || c->want == ST_F32 ? ST_F32 : ST_NONE;
		break;
	case TFK_FEAT_INT64:
		st = c->want == ST_NONE || c->want == ST_I64 ? ST_I64 : ST_NONE;
		break;
	}
	if (st == ST_NONE)
		return locf(err, TFK_EINVAL, l, "feature %s: %s values, "
			    "expected %s (dtype %s)", c->feature,
			    tfk_feat_kind_name(ft->kind),
			    c->want == ST_F32 ? "float or bytes" :
			    store_kind(c->want), store_name(c->want));
	if (st == ST_F32 && (c->out == TFK_DT_INT32 ||
			     c->out == TFK_DT_INT64 || c->out == TFK_DT_UINT8))
		return locf(err, TFK_EINVAL, l, "feature %s: float values "
			    "cannot feed the %s input %s", c->feature,
			    tfk_dtype_name(c->out), c->input);
	c->st = st;
	if (st == ST_U8 || st == ST_I8)
		make_lut(c);
	return 0;
}

/*
 * Ask for transparent huge pages on a large row store: filling 47 MB of
 * fresh memory row by row otherwise takes 12,000 page faults, which in a
 * VM cost more than the copying (measured: half of the load time). A
 * hint only; the kernel may ignore it.
 */
static void hugepages(void *p, size_t n)
{
	uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)4095;

	if (n >= ((size_t)8 << 20) && e > a)
		madvise((void *)a, e - a, MADV_HUGEPAGE);
}

/* Room for need rows in every decided column and the labels. */
static int grow(struct tfk_feed *f, size_t need, struct tfk_err *err)
{
	size_t cap = f->cap ? f->cap : 256, i;
	void *p;

	if (need < f->want_cap)
		need = f->want_cap;
	if (need <= f->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	for (i = 0; i < (size_t)f->n_cols; i++) {
		struct col *c = &f->cols[i];
		size_t rb = (size_t)c->numel * store_size[c->st];

		if (rb && cap > SIZE_MAX / rb)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		p = tfk_realloc(c->data, nz(cap * rb));
		if (!p)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		c->data = p;
		hugepages(p, cap * rb);
	}
	for (i = 0; i < (size_t)f->n_labs; i++) {
		struct lab *b = &f->labs[i];

		p = tfk_realloc(b->data, nz(cap * lab_row(b)));
		if (!p)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		b->data = p;
	}
	if (f->has_labels) {
		if (f->cw) {
			p = tfk_realloc(f->cls, cap * sizeof(int32_t));
			if (!p)
				return tfk_errf(err, TFK_ENOMEM,
						"out of memory");
			f->cls = p;
		}
	}
	f->cap = cap;
	return 0;
}

/* Class id of a label value (integral check included). */
static int class_id(const struct lab *b, double v, const struct loc *l,
		    int64_t *id, struct tfk_err *err)
{
	if (!(v == floor(v)) || fabs(v) > 9.2e18)
		return locf(err, TFK_EINVAL, l, "feature %s: %g is not an "
			    "integer class id (%s)", b->feature, v,
			    b->loss_name);
	*id = (int64_t)v;
	return 0;
}

/* Label j of row r from ex (and the row's class for class weights). */
static int add_label(struct tfk_feed *f, int j, const struct tfk_example *ex,
		     size_t r, const struct loc *l, struct tfk_err *err)
{
	struct lab *b = &f->labs[j];
	const struct tfk_feat *ft = tfk_example_find(ex, b->feature);
	int64_t id = 0, k;
	float fv;
	double v;

	if (!ft)
		return locf(err, TFK_EINVAL, l, "no feature '%s' (the label%s%s)",
			    b->feature, f->n_labs > 1 ? " of " : "",
			    f->n_labs > 1 ? f->m->outputs[j].name : "");
	if (ft->kind != TFK_FEAT_INT64 && ft->kind != TFK_FEAT_FLOAT)
		return locf(err, TFK_EINVAL, l, "feature %s: %s values, "
			    "expected int64 or float labels", b->feature,
			    tfk_feat_kind_name(ft->kind));
	if (b->sparse) {
		if (ft->n != 1)
			return locf(err, TFK_EINVAL, l, "feature %s: %zu "
				    "values, expected one class id",
				    b->feature, ft->n);
		if (ft->kind == TFK_FEAT_INT64) {
			tfk_feat_int64s(ft, &id, 1);
		} else {
			tfk_feat_floats(ft, &fv, 1);
			if (class_id(b, fv, l, &id, err) < 0)
				return err ? err->code : TFK_EINVAL;
		}
		if (id < 0 || (b->n_classes && id >= b->n_classes))
			return locf(err, TFK_EINVAL, l, "feature %s: class %"
				    PRId64 " outside [0, %" PRId64 ")",
				    b->feature, id, b->n_classes ?
				    b->n_classes : INT64_MAX);
		((int64_t *)b->data)[r] = id;
	} else {
		float *dst;
		int64_t best = 0;

		if ((int64_t)ft->n != b->numel)
			return locf(err, TFK_EINVAL, l, "feature %s: %zu "
				    "values, the output%s%s needs %" PRId64,
				    b->feature, ft->n, f->n_labs > 1 ? " " : "",
				    f->n_labs > 1 ? f->m->outputs[j].name : "",
				    b->numel);
		dst = (float *)b->data + r * (size_t)b->numel;
		if (ft->kind == TFK_FEAT_FLOAT) {
			tfk_feat_floats(ft, dst, (size_t)b->numel);
		} else {
			size_t nb = (size_t)b->numel * sizeof(int64_t);

			if (ensure(&f->scratch, &f->scratch_cap, nb, err) < 0)
				return TFK_ENOMEM;
			tfk_feat_int64s(ft, (int64_t *)f->scratch,
					(size_t)b->numel);
			for (k = 0; k < b->numel; k++)
				dst[k] = (float)((int64_t *)f->scratch)[k];
		}
		if (f->cw) {
			if (b->numel > 1) {
				for (k = 1; k < b->numel; k++)
					if (dst[k] > dst[best])
						best = k;
				id = best;
			} else {
				v = nearbyint(dst[0]);
				id = (int64_t)v;
			}
		}
	}
	if (f->cw) {
		if (id < 0 || id >= f->n_cw)
			return locf(err, TFK_EINVAL, l, "feature %s: class %"
				    PRId64 " has no weight in fit.class_weight "
				    "(classes 0 to %ld)", b->feature, id,
				    f->n_cw - 1);
		f->cls[r] = (int32_t)id;
	}
	return 0;
}

/* Before the first row: decide each column's storage from the kinds
 * of the first record (and a dense label's length when the output's
 * shape does not tell it), then allocate. */
static int first_row(struct tfk_feed *f, const struct tfk_example *ex,
		     const struct loc *l, struct tfk_err *err)
{
	const struct tfk_feat *ft;
	int i, rc;

	for (i = 0; i < f->n_cols; i++) {
		struct col *c = &f->cols[i];

		if (c->st != ST_NONE)
			continue;
		ft = tfk_example_find(ex, c->feature);
		if (!ft)
			return locf(err, TFK_EINVAL, l, "no feature '%s' (%s)",
				    c->feature, c->input);
		if ((rc = decide_store(c, ft, l, err)) < 0)
			return rc;
	}
	for (i = 0; i < f->n_labs; i++) {
		struct lab *b = &f->labs[i];

		if (b->sparse || b->numel != 0)
			continue;
		ft = tfk_example_find(ex, b->feature);
		if (!ft)
			return locf(err, TFK_EINVAL, l, "no feature '%s' (the "
				    "label)", b->feature);
		if (ft->n == 0 || ft->n > INT32_MAX)
			return locf(err, TFK_EINVAL, l, "feature %s: %zu "
				    "values, expected a label", b->feature,
				    ft->n);
		b->rank = 1;
		b->shape[0] = (int64_t)ft->n;
		b->numel = (int64_t)ft->n;
	}
	return grow(f, 1, err);
}

static int count_error(const struct col *c, size_t got, const struct loc *l,
		       struct tfk_err *err)
{
	char want[64];

	dims_str(c, want, sizeof(want));
	return locf(err, TFK_EINVAL, l, "feature %s: %zu values, %s needs %s",
		    c->feature, got, c->input, want);
}

static int add_example(struct tfk_feed *f, const struct tfk_example *ex,
		       const struct loc *l, struct tfk_err *err)
{
	size_t r = f->rows, i;
	int rc;

	if (!f->resolved && (rc = resolve(f, ex, l, err)) < 0)
		return rc;
	if (f->cap == 0 && (rc = first_row(f, ex, l, err)) < 0)
		return rc;
	if (r >= f->cap && (rc = grow(f, r + 1, err)) < 0)
		return rc;
	for (i = 0; i < (size_t)f->n_cols; i++) {
		struct col *c = &f->cols[i];
		const struct tfk_feat *ft = tfk_example_find(ex, c->feature);
		const uint8_t *p;
		size_t len, it = 0, got;
		uint8_t *dst;

		if (!ft)
			return locf(err, TFK_EINVAL, l, "no feature '%s' (%s)",
				    c->feature, c->input);
		dst = c->data + r * (size_t)c->numel * store_size[c->st];
		switch (c->st) {
		case ST_U8: case ST_I8: case ST_F32_RAW:
			if (ft->kind != TFK_FEAT_BYTES)
				goto kind;
			if (ft->n != 1)
				return locf(err, TFK_EINVAL, l, "feature %s: "
					    "%zu bytes values, expected one",
					    c->feature, ft->n);
			tfk_feat_bytes_next(ft, &it, &p, &len);
			got = c->st == ST_F32_RAW ? len / 4 : len;
			if (c->st == ST_F32_RAW && len % 4)
				return locf(err, TFK_EINVAL, l, "feature %s: "
					    "%zu bytes is not a whole number "
					    "of float32s", c->feature, len);
			if ((int64_t)got != c->numel)
				return count_error(c, got, l, err);
			memcpy(dst, p, len);
			break;
		case ST_F32:
			if (ft->kind != TFK_FEAT_FLOAT)
				goto kind;
			if ((int64_t)ft->n != c->numel)
				return count_error(c, ft->n, l, err);
			tfk_feat_floats(ft, (float *)dst, ft->n);
			break;
		case ST_I64:
			if (ft->kind != TFK_FEAT_INT64)
				goto kind;
			if ((int64_t)ft->n != c->numel)
				return count_error(c, ft->n, l, err);
			tfk_feat_int64s(ft, (int64_t *)dst, ft->n);
			break;
		case ST_STR: {
			uint64_t *sd = (uint64_t *)dst;
			size_t j;

			if (ft->kind != TFK_FEAT_BYTES)
				goto kind;
			if ((int64_t)ft->n != c->numel)
				return count_error(c, ft->n, l, err);
			for (j = 0; j < ft->n; j++) {
				tfk_feat_bytes_next(ft, &it, &p, &len);
				sd[2 * j] = c->sbuf.len;
				sd[2 * j + 1] = len;
				tfk_buf_add(&c->sbuf, p, len);
				if (!tfk_buf_ok(&c->sbuf))
					return tfk_errf(err, TFK_ENOMEM,
							"out of memory");
			}
			break;
		}
		default:
			break;
		}
		continue;
kind:
		return locf(err, TFK_EINVAL, l, "feature %s: %s values, "
			    "expected %s (dtype %s)", c->feature,
			    tfk_feat_kind_name(ft->kind), store_kind(c->st),
			    store_name(c->st));
	}
	for (i = 0; i < (size_t)f->n_labs; i++)
		if ((rc = add_label(f, (int)i, ex, r, l, err)) < 0)
			return rc;
	f->rows = r + 1;
	return 0;
}

static int is_batched(const struct tfk_example *ex)
{
	return ex->n_feat > 0 && ex->feat[0].name_len == 6 &&
	       !memcmp(ex->feat[0].name, TFK_BATCH_ROWS, 6);
}

int tfk_feed_add(struct tfk_feed *f, const uint8_t *rec, size_t len,
		 const char *file, uint64_t index, struct tfk_err *err)
{
	struct loc l = { file, index, -1 };
	size_t rows0 = f->rows, i;
	const uint8_t *p;
	size_t n;
	int rc;

	rc = tfk_example_parse(&f->ex, rec, len, err);
	if (rc < 0)
		return tfk_err_prefix(err, "%s: record %" PRIu64, file, index);
	if (!is_batched(&f->ex))
		return add_example(f, &f->ex, &l, err);
	rc = tfk_batch_parse(&f->bt, rec, len, err);
	if (rc < 0)
		return tfk_err_prefix(err, "%s: record %" PRIu64, file, index);
	for (i = 0; i < f->bt.n_rows; i++) {
		l.row = (long)i;
		rc = tfk_batch_row(&f->bt, i, &p, &n, err);
		if (rc < 0)
			break;
		rc = tfk_example_parse(&f->row_ex, p, n, err);
		if (rc < 0) {
			tfk_err_prefix(err, "%s: record %" PRIu64 " row %zu",
				       file, index, i);
			break;
		}
		rc = add_example(f, &f->row_ex, &l, err);
		if (rc < 0)
			break;
	}
	if (rc < 0)
		f->rows = rows0;
	return rc < 0 ? rc : 0;
}

int tfk_feed_add_file(struct tfk_feed *f, const char *path,
		      struct tfk_err *err)
{
	uint64_t at = 0;

	return tfk_feed_add_shard(f, path, &at, 0, 1, err);
}

int tfk_feed_add_shard(struct tfk_feed *f, const char *path, uint64_t *at,
		       uint64_t shard_i, uint64_t shard_n,
		       struct tfk_err *err)
{
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	int rc, hinted = 0;

	rc = tfk_rec_open(&r, path, TFK_COMP_AUTO, 0, err);
	if (rc < 0)
		return rc;
	while ((rc = tfk_rec_next(r, &rec, err)) > 0) {
		size_t before = f->rows;
		uint64_t size;

		if ((*at)++ % shard_n != shard_i)
			continue;
		rc = tfk_feed_add(f, rec.data, rec.len, tfk_rec_path(r),
				  rec.index, err);
		if (rc < 0)
			break;
		/* a plain file's size tells how many more records of this
		 * size follow: room for them now, so the store is not
		 * copied at every doubling (and its fresh pages faulted in
		 * twice). Only a hint: records of other sizes may follow, so
		 * a failure here is no error (growing goes on as usual). */
		size = tfk_in_size(tfk_rec_input(r));
		if (!hinted++ && size != UINT64_MAX &&
		    tfk_in_comp(tfk_rec_input(r)) == TFK_COMP_NONE &&
		    f->rows > before && size / (rec.len + 16) < (1u << 30))
			tfk_feed_reserve(f, (size_t)(size / (rec.len + 16) /
						     shard_n) *
					 (f->rows - before) + 16, NULL);
	}
	tfk_rec_close(r);
	return rc < 0 ? rc : 0;
}

int tfk_feed_reserve(struct tfk_feed *f, size_t rows, struct tfk_err *err)
{
	size_t need = f->rows + rows;

	if (need > f->want_cap)
		f->want_cap = need;
	if (f->cap == 0)
		return 0;
	return grow(f, need, err);
}

size_t tfk_feed_rows(const struct tfk_feed *f)
{
	return f->rows;
}

size_t tfk_feed_bytes(const struct tfk_feed *f)
{
	size_t b = 0;
	int i;

	for (i = 0; i < f->n_cols; i++)
		b += f->rows * (size_t)f->cols[i].numel *
		     store_size[f->cols[i].st];
	for (i = 0; i < f->n_labs; i++)
		b += f->rows * lab_row(&f->labs[i]);
	return b;
}

void tfk_feed_clear(struct tfk_feed *f)
{
	int i;

	f->rows = 0;
	for (i = 0; i < f->n_cols; i++)
		f->cols[i].sbuf.len = 0;
}

void tfk_feed_shift(struct tfk_feed *f, size_t n)
{
	size_t rest;
	int i;

	if (n >= f->rows) {
		tfk_feed_clear(f);
		return;
	}
	rest = f->rows - n;
	for (i = 0; i < f->n_cols; i++) {
		struct col *c = &f->cols[i];
		size_t rb = (size_t)c->numel * store_size[c->st];

		memmove(c->data, c->data + n * rb, rest * rb);
		/* strings: rows append in order, so the rows left own a
		 * suffix of sbuf; move it to the front (a stream's memory
		 * stays what its rows hold) */
		if (c->st == ST_STR && c->numel > 0 &&
		    ((uint64_t *)c->data)[0] > 0) {
			uint64_t *o = (uint64_t *)c->data, base = o[0];
			size_t e, ne = rest * (size_t)c->numel;

			memmove(c->sbuf.data, c->sbuf.data + base,
				c->sbuf.len - base);
			c->sbuf.len -= base;
			for (e = 0; e < ne; e++)
				o[2 * e] -= base;
		}
	}
	for (i = 0; i < f->n_labs; i++) {
		size_t lb = lab_row(&f->labs[i]);

		memmove(f->labs[i].data, (uint8_t *)f->labs[i].data + n * lb,
			rest * lb);
	}
	if (f->has_labels) {
		if (f->cw)
			memmove(f->cls, f->cls + n, rest * sizeof(*f->cls));
	}
	f->rows = rest;
}

const char *tfk_feed_input_feature(const struct tfk_feed *f, int k)
{
	if (k < 0 || k >= f->n_cols || !f->resolved)
		return NULL;
	return f->cols[k].feature;
}

int tfk_feed_input_raw(const struct tfk_feed *f, int k, enum tfk_dtype *dtype,
		       double *scale, double *offset)
{
	static const enum tfk_dtype dt[] = {
		[ST_U8] = TFK_DT_UINT8, [ST_I8] = TFK_DT_INT8,
		[ST_F32_RAW] = TFK_DT_FLOAT, [ST_F32] = TFK_DT_FLOAT,
		[ST_I64] = TFK_DT_INT64, [ST_STR] = TFK_DT_STRING
	};
	const struct col *c;

	if (k < 0 || k >= f->n_cols || !f->resolved ||
	    f->cols[k].st == ST_NONE)
		return -1;
	c = &f->cols[k];
	*dtype = dt[c->st];
	/* integer and string inputs take the values as they are */
	*scale = c->out == TFK_DT_FLOAT || c->out == TFK_DT_DOUBLE ?
		 c->scale : 1;
	*offset = c->out == TFK_DT_FLOAT || c->out == TFK_DT_DOUBLE ?
		  c->offset : 0;
	return 0;
}

const char *tfk_feed_label_feature(const struct tfk_feed *f)
{
	return f->has_labels ? f->labs[0].feature : NULL;
}

/* Batches ----------------------------------------------------------------- */

static int ensure(uint8_t **buf, size_t *cap, size_t need,
		  struct tfk_err *err)
{
	void *p;

	if (need <= *cap)
		return 0;
	p = tfk_realloc(*buf, need);
	if (!p)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	*buf = p;
	*cap = need;
	return 0;
}

static void prefetch_row(const uint8_t *p, size_t n)
{
	size_t k;

	for (k = 0; k < n; k += 64)
		__builtin_prefetch(p + k);
}

/* One row of column c at src into dst, as c->out. */
static void convert_row(const struct col *c, const uint8_t *src, void *dst)
{
	size_t n = (size_t)c->numel, j;

	switch (c->out) {
	case TFK_DT_FLOAT: {
		float *d = dst;

		switch (c->st) {
		case ST_U8: case ST_I8:
			if (c->u8conv == U8_DIV)
				u8_div(src, d, n, c->fa, c->fo);
			else if (c->u8conv == U8_MUL)
				u8_mul(src, d, n, c->fa, c->fo);
			else
				for (j = 0; j < n; j++)
					d[j] = c->lut[src[j]];
			break;
		case ST_F32: case ST_F32_RAW: case ST_I64:
			to_float(c->st, src, n, c->scale, c->offset, d);
			break;
		default:
			break;
		}
		break;
	}
	case TFK_DT_DOUBLE: {
		double *d = dst;

		for (j = 0; j < n; j++) {
			double v = c->st == ST_U8 ? src[j] :
				   c->st == ST_I8 ? (int8_t)src[j] :
				   c->st == ST_I64 ? (double)((const int64_t *)
							      src)[j] :
				   ((const float *)src)[j];

			d[j] = v * c->scale + c->offset;
		}
		break;
	}
	case TFK_DT_STRING: {
		/* views of the stored bytes (valid until the next add) */
		const uint64_t *s = (const uint64_t *)src;
		struct tfk_str *d = dst;

		for (j = 0; j < n; j++) {
			d[j].ptr = s[2 * j + 1] ? (const char *)c->sbuf.data +
				   s[2 * j] : NULL;
			d[j].len = (size_t)s[2 * j + 1];
		}
		break;
	}
	case TFK_DT_INT32: case TFK_DT_INT64: case TFK_DT_UINT8:
		/* integer inputs (ids for Embedding): values as they are */
		for (j = 0; j < n; j++) {
			int64_t v = c->st == ST_U8 ? src[j] :
				    c->st == ST_I8 ? (int8_t)src[j] :
				    ((const int64_t *)src)[j];

			if (c->out == TFK_DT_INT32)
				((int32_t *)dst)[j] = (int32_t)v;
			else if (c->out == TFK_DT_INT64)
				((int64_t *)dst)[j] = v;
			else
				((uint8_t *)dst)[j] = (uint8_t)v;
		}
		break;
	default:
		break;
	}
}

/* Rows perm[start..start+n) (perm NULL: start..) of label b into its
 * batch buffer, viewed by *t. */
static int lab_batch(struct lab *b, const uint32_t *perm, size_t start,
		     size_t n, struct tfk_tensor *t, struct tfk_err *err)
{
	int64_t shape[TFK_MAX_RANK + 1];
	size_t i, r;
	int rc;

	shape[0] = (int64_t)n;
	if (b->sparse) {
		size_t es = b->out == TFK_DT_INT32 ? 4 : 8;
		const int64_t *lab = b->data;

		if ((rc = ensure(&b->buf, &b->cap, nz(n * es), err)) < 0)
			return rc;
		for (i = 0; i < n; i++) {
			r = perm ? perm[start + i] : start + i;
			if (es == 4)
				((int32_t *)b->buf)[i] = (int32_t)lab[r];
			else
				((int64_t *)b->buf)[i] = lab[r];
		}
		return tfk_tensor_init_view(t, b->out, 1, shape, b->buf,
					    n * es, TFK_OWN_BORROWED, err);
	}
	{
		size_t lb = (size_t)b->numel * 4;

		if ((rc = ensure(&b->buf, &b->cap, nz(n * lb), err)) < 0)
			return rc;
		for (i = 0; i < n; i++) {
			r = perm ? perm[start + i] : start + i;
			memcpy(b->buf + i * lb, (uint8_t *)b->data + r * lb,
			       lb);
		}
		memcpy(shape + 1, b->shape, (size_t)b->rank * sizeof(int64_t));
		return tfk_tensor_init_view(t, TFK_DT_FLOAT, b->rank + 1,
					    shape, b->buf, n * lb,
					    TFK_OWN_BORROWED, err);
	}
}

int tfk_feed_batch(struct tfk_feed *f, const uint32_t *perm, size_t start,
		   size_t n, struct tfk_feed_batch *b, struct tfk_err *err)
{
	int64_t shape[TFK_MAX_RANK + 1];
	size_t i, r, osz, rb;
	int k, rc;

	memset(b, 0, sizeof(*b));
	if (n == 0 || start > f->rows || n > f->rows - start)
		return tfk_errf(err, TFK_EINVAL, "batch of rows [%zu, %zu): "
				"the feed holds %zu rows", start, start + n,
				f->rows);
	if (perm)
		for (i = 0; i < n; i++)
			if (perm[start + i] >= f->rows)
				return tfk_errf(err, TFK_EINVAL, "batch: row %"
						PRIu32 " of the permutation is "
						"past the %zu rows",
						perm[start + i], f->rows);
	for (k = 0; k < f->n_cols; k++) {
		struct col *c = &f->cols[k];
		uint8_t *o;

		osz = (size_t)c->numel * tfk_dtype_size(c->out);
		rb = (size_t)c->numel * store_size[c->st];
		if ((rc = ensure(&c->obuf, &c->ocap, nz(n * osz),
				 err)) < 0)
			return rc;
		o = c->obuf;
		for (i = 0; i < n; i++) {
			r = perm ? perm[start + i] : start + i;
			/* permuted rows are cache misses: fetch the next row
			 * while this one converts */
			if (perm && i + 1 < n)
				prefetch_row(c->data + (size_t)perm[start + i + 1] *
					     rb, rb);
			convert_row(c, c->data + r * rb, o + i * osz);
		}
		shape[0] = (int64_t)n;
		memcpy(shape + 1, c->shape, (size_t)c->rank * sizeof(int64_t));
		rc = tfk_tensor_init_view(&f->views[k], c->out, c->rank + 1, shape,
					  c->obuf, n * osz, TFK_OWN_BORROWED,
					  err);
		if (rc < 0)
			return rc;
	}
	b->n = n;
	b->n_inputs = f->n_cols;
	b->inputs = f->views;
	for (k = 0; k < f->n_labs; k++) {
		struct lab *lb = &f->labs[k];

		if ((rc = lab_batch(lb, perm, start, n, &f->lviews[k],
				    err)) < 0)
			return rc;
	}
	if (f->has_labels) {
		b->label = f->lviews[0];
		b->n_labels = f->n_labs;
		b->labels = f->lviews;
		if (f->cw) {
			if ((rc = ensure((uint8_t **)&f->wbuf, &f->wcap,
					 n * sizeof(float), err)) < 0)
				return rc;
			for (i = 0; i < n; i++) {
				r = perm ? perm[start + i] : start + i;
				f->wbuf[i] = f->cw[f->cls[r]];
			}
			shape[0] = (int64_t)n;
			rc = tfk_tensor_init_view(&b->weight, TFK_DT_FLOAT, 1,
						  shape, f->wbuf,
						  n * sizeof(float),
						  TFK_OWN_BORROWED, err);
			if (rc < 0)
				return rc;
			b->has_weight = 1;
		}
	}
	return 0;
}

/* One input's values, converted as training converts them ----------- */

int tfk_feed_how_parse(const json_t *entry, const char *where,
		       struct tfk_feed_how *h, struct tfk_err *err)
{
	static const char *const keys[] = { "feature", "dtype", "shape",
					    "scale", "offset", NULL };
	enum store st = ST_NONE;
	const char *s = NULL;
	int rc;

	h->feature = NULL;
	h->bytes_dtype = TFK_DT_UINT8;
	h->scale = 1;
	h->offset = 0;
	if (!entry || json_is_null(entry))
		return 0;
	if (!json_is_object(entry))
		return tfk_errf(err, TFK_EINVAL, "%s: expected an object",
				where);
	if ((rc = tfk_spec_check_keys(entry, where, keys, err)) < 0 ||
	    (rc = tfk_spec_num(entry, "scale", where, 1, -HUGE_VAL, HUGE_VAL,
			       0, &h->scale, err)) < 0 ||
	    (rc = tfk_spec_num(entry, "offset", where, 0, -HUGE_VAL, HUGE_VAL,
			       0, &h->offset, err)) < 0 ||
	    (rc = tfk_spec_str(entry, "feature", where, NULL, &h->feature,
			       err)) < 0 ||
	    (rc = tfk_spec_str(entry, "dtype", where, NULL, &s, err)) < 0)
		return rc;
	if (s && (parse_store(s, &st) || st == ST_STR))
		return tfk_errf(err, TFK_EINVAL, "%s.dtype: expected uint8, "
				"int8, float32 or int64", where);
	h->bytes_dtype = st == ST_I8 ? TFK_DT_INT8 :
			 st == ST_F32 ? TFK_DT_FLOAT : TFK_DT_UINT8;
	return 0;
}

int64_t tfk_feed_feat_count(const struct tfk_feed_how *h,
			    const struct tfk_feat *ft)
{
	size_t it = 0, len, size = h->bytes_dtype == TFK_DT_FLOAT ? 4 : 1;
	const uint8_t *p;

	if (ft->kind != TFK_FEAT_BYTES)
		return (int64_t)ft->n;
	if (ft->n != 1 || !tfk_feat_bytes_next(ft, &it, &p, &len) ||
	    len % size)
		return -1;
	return (int64_t)(len / size);
}

int tfk_feed_feat_floats(const struct tfk_feed_how *h,
			 const struct tfk_feat *ft, float *dst, size_t n,
			 struct tfk_err *err)
{
	size_t it = 0, len;
	const uint8_t *p;
	int64_t small[256], *v = small;

	switch (ft->kind) {
	case TFK_FEAT_FLOAT:
		tfk_feat_floats(ft, dst, n);
		to_float(ST_F32, dst, n, h->scale, h->offset, dst);
		break;
	case TFK_FEAT_INT64:
		if (n > 256 && !(v = tfk_malloc(n * sizeof(*v))))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		tfk_feat_int64s(ft, v, n);
		to_float(ST_I64, v, n, h->scale, h->offset, dst);
		if (v != small)
			tfk_free(v);
		break;
	case TFK_FEAT_BYTES:
		if (!tfk_feat_bytes_next(ft, &it, &p, &len))
			break;
		to_float(h->bytes_dtype == TFK_DT_INT8 ? ST_I8 :
			 h->bytes_dtype == TFK_DT_FLOAT ? ST_F32_RAW : ST_U8,
			 p, n, h->scale, h->offset, dst);
		break;
	}
	return 0;
}
