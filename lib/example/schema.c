/*
 * schema.c - schema inference, merging and the JSON document (schema.h).
 *
 * Statistics are running extremes and sums, so observing is one pass
 * over the values with no allocation per record once the feature table
 * has grown; the feature a record names is first looked for where the
 * previous record's next feature was (records repeat their order), so
 * the lookup is O(1) in practice without a hash table. Samples are
 * rendered to JSON text when taken (only the first three), so merging
 * and writing never look at records again.
 *
 * The document is written with tfk_buf rather than jansson: floats get
 * their shortest round-trip form (jansson prints 17 digits), key order
 * is fixed, and small objects stay on one line. It is read with jansson
 * (duplicate keys rejected), and every key is checked: an unknown key is
 * an error naming its JSON path, not a silent default.
 */
#include "example/schema.h"
#include "io/out.h"
#include "util/alloc.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A schema file larger than this is not a schema (label names of the
 * largest public class sets are well under 1 MiB). */
#define SCHEMA_MAX_BYTES (64u << 20)

void tfk_schema_init(struct tfk_schema *s)
{
	memset(s, 0, sizeof(*s));
}

static void feat_release(struct tfk_schema_feat *f)
{
	size_t i;

	tfk_free(f->name);
	for (i = 0; i < f->n_label_names; i++)
		tfk_free(f->label_names[i]);
	tfk_free(f->label_names);
	for (i = 0; i < f->n_samples; i++)
		tfk_free(f->samples[i]);
}

void tfk_schema_release(struct tfk_schema *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n_feat; i++)
		feat_release(&s->feat[i]);
	for (i = 0; i < s->n_lists; i++)
		feat_release(&s->lists[i]);
	tfk_free(s->feat);
	tfk_free(s->lists);
	tfk_free(s->scratch);
	tfk_schema_init(s);
}

/* Feature tables ------------------------------------------------------ */

static int name_is(const struct tfk_schema_feat *f, const char *name,
		   size_t len)
{
	return f->name_len == len && !memcmp(f->name, name, len);
}

static struct tfk_schema_feat *lookup(struct tfk_schema_feat *v, size_t n,
				      size_t *hint, const char *name,
				      size_t len)
{
	size_t i;

	if (hint && *hint < n && name_is(&v[*hint], name, len))
		return &v[(*hint)++];
	for (i = 0; i < n; i++) {
		if (name_is(&v[i], name, len)) {
			if (hint)
				*hint = i + 1;
			return &v[i];
		}
	}
	return NULL;
}

static struct tfk_schema_feat *add_feat(struct tfk_schema_feat **v,
					size_t *n, size_t *cap,
					const char *name, size_t len)
{
	struct tfk_schema_feat *f;

	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		struct tfk_schema_feat *nv = tfk_realloc(*v, nc * sizeof(*nv));

		if (!nv)
			return NULL;
		*v = nv;
		*cap = nc;
	}
	f = &(*v)[*n];
	memset(f, 0, sizeof(*f));
	f->name = tfk_malloc(len + 1);
	if (!f->name)
		return NULL;
	memcpy(f->name, name, len);
	f->name[len] = '\0';
	f->name_len = len;
	f->rank = -1;
	f->len_min = f->size_min = f->steps_min = UINT64_MAX;
	(*n)++;
	return f;
}

static struct tfk_schema_feat *get_feat(struct tfk_schema *s, int list,
					const char *name, size_t len)
{
	struct tfk_schema_feat *f;

	if (list) {
		f = lookup(s->lists, s->n_lists, NULL, name, len);
		return f ? f : add_feat(&s->lists, &s->n_lists, &s->cap_lists,
					name, len);
	}
	f = lookup(s->feat, s->n_feat, &s->hint, name, len);
	if (!f) {
		f = add_feat(&s->feat, &s->n_feat, &s->cap, name, len);
		s->hint = s->n_feat;
	}
	return f;
}

struct tfk_schema_feat *tfk_schema_feature(struct tfk_schema *s,
					   const char *name)
{
	return get_feat(s, 0, name, strlen(name));
}

const struct tfk_schema_feat *tfk_schema_find(const struct tfk_schema *s,
					      const char *name)
{
	return lookup(s->feat, s->n_feat, NULL, name, strlen(name));
}

const struct tfk_schema_feat *tfk_schema_find_list(const struct tfk_schema *s,
						   const char *name)
{
	return lookup(s->lists, s->n_lists, NULL, name, strlen(name));
}

int tfk_schema_set_labels(struct tfk_schema_feat *f, const char *const *names,
			  size_t n)
{
	char **v = tfk_calloc(n ? n : 1, sizeof(*v));
	size_t i;

	if (!v)
		return TFK_ENOMEM;
	for (i = 0; i < n; i++) {
		v[i] = tfk_strdup(names[i]);
		if (!v[i]) {
			while (i--)
				tfk_free(v[i]);
			tfk_free(v);
			return TFK_ENOMEM;
		}
	}
	for (i = 0; i < f->n_label_names; i++)
		tfk_free(f->label_names[i]);
	tfk_free(f->label_names);
	f->label_names = v;
	f->n_label_names = n;
	return 0;
}

void tfk_schema_set_shape(struct tfk_schema_feat *f, int rank,
			  const int64_t *shape)
{
	if (rank > TFK_SCHEMA_MAX_RANK)
		rank = TFK_SCHEMA_MAX_RANK;
	f->rank = rank < 0 ? -1 : rank;
	if (rank > 0)
		memcpy(f->shape, shape, (size_t)rank * sizeof(*shape));
}

int tfk_schema_feat_shape(const struct tfk_schema_feat *f, int64_t *shape)
{
	if (f->rank >= 0) {
		memcpy(shape, f->shape, (size_t)f->rank * sizeof(*shape));
		return f->rank;
	}
	if (f->n_len == 0 || f->len_min != f->len_max || f->mixed ||
	    f->kind == TFK_FEAT_NONE)
		return -1;
	shape[0] = (int64_t)f->len_min;
	return 1;
}

const char *tfk_schema_kind_name(const struct tfk_schema_feat *f)
{
	return f->mixed ? "mixed" : tfk_feat_kind_name(f->kind);
}

/* Observing ----------------------------------------------------------- */

static const char *sniff_content(const uint8_t *p, size_t n)
{
	static const uint8_t png[8] = { 0x89, 'P', 'N', 'G', 0x0d, 0x0a,
					0x1a, 0x0a };

	if (n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff)
		return "jpeg";
	if (n >= 8 && !memcmp(p, png, 8))
		return "png";
	if (n >= 6 && (!memcmp(p, "GIF87a", 6) || !memcmp(p, "GIF89a", 6)))
		return "gif";
	/* "BM" alone would call every text starting "BMW" a bitmap: also
	 * ask for the zero reserved field and a known DIB header size
	 * (BITMAPCOREHEADER 12 .. BITMAPV5HEADER 124). */
	if (n >= 18 && p[0] == 'B' && p[1] == 'M' &&
	    !p[6] && !p[7] && !p[8] && !p[9]) {
		uint32_t dib = (uint32_t)p[14] | (uint32_t)p[15] << 8 |
			       (uint32_t)p[16] << 16 | (uint32_t)p[17] << 24;

		if (dib == 12 || dib == 40 || dib == 52 || dib == 56 ||
		    dib == 64 || dib == 108 || dib == 124)
			return "bmp";
	}
	if (tfk_utf8_valid(p, n))
		return "text";
	return "binary";
}

static void merge_content(struct tfk_schema_feat *f, const char *c)
{
	if (!c[0])
		return;
	if (!f->content[0])
		snprintf(f->content, sizeof(f->content), "%s", c);
	else if (strcmp(f->content, c))
		snprintf(f->content, sizeof(f->content), "binary");
}

/* Non-finite floats are JSON strings, as JSON has no NaN. */
static void render_float(struct tfk_buf *b, float v)
{
	if (isnan(v))
		tfk_buf_adds(b, "\"NaN\"");
	else if (isinf(v))
		tfk_buf_adds(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
	else
		tfk_buf_add_float(b, v);
}

/* A JSON string for bytes that may not be UTF-8: invalid bytes become
 * \u00XX (their Latin-1 reading), so the output is always valid JSON. */
static void render_name(struct tfk_buf *b, const char *s, size_t n)
{
	size_t i;

	if (tfk_utf8_valid((const uint8_t *)s, n)) {
		tfk_buf_add_json_str(b, s, n);
		return;
	}
	tfk_buf_addc(b, '"');
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x80 || c < 0x20 || c == '"' || c == '\\')
			tfk_buf_addf(b, "\\u%04x", c);
		else
			tfk_buf_addc(b, c);
	}
	tfk_buf_addc(b, '"');
}

static void render_bytes_sample(struct tfk_buf *b, const uint8_t *p, size_t n)
{
	size_t i, chars = 0;

	if (!tfk_utf8_valid(p, n)) {
		tfk_buf_adds(b, "{\"b64\": \"");
		tfk_buf_add_base64(b, p, n < TFK_SCHEMA_SAMPLE_B64 ?
				   n : TFK_SCHEMA_SAMPLE_B64);
		tfk_buf_adds(b, "\"}");
		return;
	}
	/* cut at a character boundary: count lead bytes */
	for (i = 0; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80 && chars++ == TFK_SCHEMA_SAMPLE_CHARS)
			break;
	}
	tfk_buf_add_json_str(b, (const char *)p, i);
}

static int take_sample(struct tfk_schema_feat *f, struct tfk_buf *b)
{
	char *s;

	if (!tfk_buf_ok(b))
		return TFK_ENOMEM;
	s = tfk_malloc(b->len + 1);
	if (!s)
		return TFK_ENOMEM;
	memcpy(s, b->data, b->len);
	s[b->len] = '\0';
	f->samples[f->n_samples++] = s;
	return 0;
}

static int sample_float(struct tfk_schema_feat *f, float v)
{
	struct tfk_buf b;
	int rc;

	tfk_buf_init(&b);
	render_float(&b, v);
	rc = take_sample(f, &b);
	tfk_buf_release(&b);
	return rc;
}

static int sample_int64(struct tfk_schema_feat *f, int64_t v)
{
	struct tfk_buf b;
	int rc;

	tfk_buf_init(&b);
	tfk_buf_addf(&b, "%" PRId64, v);
	rc = take_sample(f, &b);
	tfk_buf_release(&b);
	return rc;
}

static int sample_bytes(struct tfk_schema_feat *f, const uint8_t *p, size_t n)
{
	struct tfk_buf b;
	int rc;

	tfk_buf_init(&b);
	render_bytes_sample(&b, p, n);
	rc = take_sample(f, &b);
	tfk_buf_release(&b);
	return rc;
}

static void *scratch(struct tfk_schema *s, size_t n)
{
	if (!s->scratch || n > s->scratch_cap) {	/* n may be 0 */
		size_t nc = n < 4096 ? 4096 : n;
		void *p = tfk_malloc(nc);

		if (!p)
			return NULL;
		tfk_free(s->scratch);
		s->scratch = p;
		s->scratch_cap = nc;
	}
	return s->scratch;
}

static int bad_values(struct tfk_err *err, const struct tfk_feat *f)
{
	return tfk_errf(err, TFK_ECORRUPT, "feature \"%.*s\": value list "
			"does not decode", (int)(f->name_len < 200 ?
						 f->name_len : 200), f->name);
}

/*
 * Range of the finite values of v[0..n), returning how many are not
 * finite (*lo > *hi when none is). Branch-free so that it vectorizes:
 * x - x is 0 for finite x and NaN for NaN and infinities. The statistics
 * are kept in locals, not in the feature, for the same reason.
 */
static size_t float_range(const float *v, size_t n, float *lo, float *hi)
{
	float a = INFINITY, b = -INFINITY;
	size_t i, bad = 0;

	for (i = 0; i < n; i++) {
		float x = v[i];
		int fin = x - x == 0.0f;

		bad += !fin;
		a = fin && x < a ? x : a;
		b = fin && x > b ? x : b;
	}
	*lo = a;
	*hi = b;
	return bad;
}

static int observe_floats(struct tfk_schema *s, struct tfk_schema_feat *sf,
			  const struct tfk_feat *f, struct tfk_err *err)
{
	float *v = scratch(s, f->n * sizeof(float));
	float lo, hi;
	size_t bad;

	if (!v)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (tfk_feat_floats(f, v, f->n) != (long)f->n)
		return bad_values(err, f);
	bad = float_range(v, f->n, &lo, &hi);
	sf->n_nonfinite += bad;
	if (bad < f->n) {
		if (!sf->has_range) {
			sf->vmin = lo;
			sf->vmax = hi;
			sf->has_range = 1;
		}
		if (lo < sf->vmin)
			sf->vmin = lo;
		if (hi > sf->vmax)
			sf->vmax = hi;
	}
	if (f->n && sf->n_samples < TFK_SCHEMA_SAMPLES &&
	    sample_float(sf, v[0]))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	return 0;
}

static int observe_int64s(struct tfk_schema *s, struct tfk_schema_feat *sf,
			  const struct tfk_feat *f, struct tfk_err *err)
{
	int64_t *v = scratch(s, f->n * sizeof(int64_t));
	size_t i;

	if (!v)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (tfk_feat_int64s(f, v, f->n) != (long)f->n)
		return bad_values(err, f);
	for (i = 0; i < f->n; i++) {
		int64_t x = v[i];

		if (!sf->has_range) {
			sf->imin = sf->imax = x;
			sf->vmin = sf->vmax = (double)x;
			sf->has_range = 1;
			continue;
		}
		if (x < sf->imin)
			sf->imin = x;
		if (x > sf->imax)
			sf->imax = x;
		if ((double)x < sf->vmin)
			sf->vmin = (double)x;
		if ((double)x > sf->vmax)
			sf->vmax = (double)x;
	}
	if (f->n && sf->n_samples < TFK_SCHEMA_SAMPLES &&
	    sample_int64(sf, v[0]))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	return 0;
}

static int observe_bytes(struct tfk_schema_feat *sf, const struct tfk_feat *f,
			 struct tfk_err *err)
{
	const uint8_t *p;
	size_t it = 0, len, n = 0;

	while (tfk_feat_bytes_next(f, &it, &p, &len) == 1) {
		if (len < sf->size_min)
			sf->size_min = len;
		if (len > sf->size_max)
			sf->size_max = len;
		sf->size_sum += (double)len;
		/* once binary, always binary: stop looking */
		if (strcmp(sf->content, "binary"))
			merge_content(sf, sniff_content(p, len));
		if (n++ == 0 && sf->n_samples < TFK_SCHEMA_SAMPLES &&
		    sample_bytes(sf, p, len))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	if (n != f->n)
		return bad_values(err, f);
	return 0;
}

/* One occurrence of a Feature (a record's value, or one step of a list). */
static int observe_values(struct tfk_schema *s, struct tfk_schema_feat *sf,
			  const struct tfk_feat *f, struct tfk_err *err)
{
	uint64_t n = f->n;

	if (f->kind != TFK_FEAT_NONE) {
		if (sf->kind == TFK_FEAT_NONE && !sf->mixed)
			sf->kind = f->kind;
		else if (sf->kind != f->kind)
			sf->mixed = 1;
	}
	if (n < sf->len_min)
		sf->len_min = n;
	if (n > sf->len_max)
		sf->len_max = n;
	sf->len_sum += (double)n;
	sf->n_len++;
	sf->n_values += n;
	switch (f->kind) {
	case TFK_FEAT_FLOAT:
		return observe_floats(s, sf, f, err);
	case TFK_FEAT_INT64:
		return observe_int64s(s, sf, f, err);
	case TFK_FEAT_BYTES:
		return observe_bytes(sf, f, err);
	}
	return 0;
}

int tfk_schema_observe_feat(struct tfk_schema *s, const struct tfk_feat *f,
			    struct tfk_err *err)
{
	struct tfk_schema_feat *sf = get_feat(s, 0, f->name, f->name_len);

	if (!sf)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	sf->count++;
	return observe_values(s, sf, f, err);
}

int tfk_schema_observe_list(struct tfk_schema *s, const char *name,
			    size_t name_len, const struct tfk_feat *steps,
			    size_t n_steps, struct tfk_err *err)
{
	struct tfk_schema_feat *sf = get_feat(s, 1, name, name_len);
	size_t i;
	int rc;

	if (!sf)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	s->sequence = 1;
	sf->count++;
	if (n_steps < sf->steps_min)
		sf->steps_min = n_steps;
	if (n_steps > sf->steps_max)
		sf->steps_max = n_steps;
	sf->steps_sum += (double)n_steps;
	for (i = 0; i < n_steps; i++)
		if ((rc = observe_values(s, sf, &steps[i], err)))
			return rc;
	return 0;
}

int tfk_schema_observe(struct tfk_schema *s, const struct tfk_example *ex,
		       struct tfk_err *err)
{
	size_t i;
	int rc;

	for (i = 0; i < ex->n_feat; i++)
		if ((rc = tfk_schema_observe_feat(s, &ex->feat[i], err)))
			return rc;
	s->records++;
	return 0;
}

/* Merging ------------------------------------------------------------- */

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

static int merge_feat(struct tfk_schema_feat *a,
		      const struct tfk_schema_feat *b)
{
	size_t i;

	if (b->mixed || (a->kind != TFK_FEAT_NONE &&
			 b->kind != TFK_FEAT_NONE && a->kind != b->kind))
		a->mixed = 1;
	if (a->kind == TFK_FEAT_NONE)
		a->kind = b->kind;
	a->count += b->count;
	a->len_min = MIN(a->len_min, b->len_min);
	a->len_max = MAX(a->len_max, b->len_max);
	a->len_sum += b->len_sum;
	a->n_len += b->n_len;
	a->size_min = MIN(a->size_min, b->size_min);
	a->size_max = MAX(a->size_max, b->size_max);
	a->size_sum += b->size_sum;
	a->n_values += b->n_values;
	a->steps_min = MIN(a->steps_min, b->steps_min);
	a->steps_max = MAX(a->steps_max, b->steps_max);
	a->steps_sum += b->steps_sum;
	if (b->has_range) {
		if (!a->has_range) {
			a->vmin = b->vmin;
			a->vmax = b->vmax;
			a->imin = b->imin;
			a->imax = b->imax;
			a->has_range = 1;
		} else {
			a->vmin = MIN(a->vmin, b->vmin);
			a->vmax = MAX(a->vmax, b->vmax);
			a->imin = MIN(a->imin, b->imin);
			a->imax = MAX(a->imax, b->imax);
		}
	}
	a->n_nonfinite += b->n_nonfinite;
	merge_content(a, b->content);
	if (a->rank < 0) {
		tfk_schema_set_shape(a, b->rank, b->shape);
	} else if (b->rank >= 0 && (a->rank != b->rank ||
		   memcmp(a->shape, b->shape,
			  (size_t)a->rank * sizeof(a->shape[0])))) {
		a->rank = -1;
	}
	if (!a->dtype[0])
		memcpy(a->dtype, b->dtype, sizeof(a->dtype));
	if (!a->encoding[0])
		memcpy(a->encoding, b->encoding, sizeof(a->encoding));
	if (!a->n_label_names && b->n_label_names &&
	    tfk_schema_set_labels(a, (const char *const *)b->label_names,
				  b->n_label_names))
		return TFK_ENOMEM;
	for (i = 0; i < b->n_samples && a->n_samples < TFK_SCHEMA_SAMPLES;
	     i++) {
		char *c = tfk_strdup(b->samples[i]);

		if (!c)
			return TFK_ENOMEM;
		a->samples[a->n_samples++] = c;
	}
	return 0;
}

int tfk_schema_merge(struct tfk_schema *a, const struct tfk_schema *b,
		     struct tfk_err *err)
{
	size_t i;

	if (a->sequence != b->sequence && (a->records || a->n_feat) &&
	    (b->records || b->n_feat))
		return tfk_errf(err, TFK_EINVAL, "cannot merge a SequenceExample "
				"schema with an Example schema");
	for (i = 0; i < b->n_feat; i++) {
		const struct tfk_schema_feat *bf = &b->feat[i];
		struct tfk_schema_feat *af = get_feat(a, 0, bf->name,
						      bf->name_len);

		if (!af || merge_feat(af, bf))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	for (i = 0; i < b->n_lists; i++) {
		const struct tfk_schema_feat *bf = &b->lists[i];
		struct tfk_schema_feat *af = get_feat(a, 1, bf->name,
						      bf->name_len);

		if (!af || merge_feat(af, bf))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	a->sequence |= b->sequence;
	a->records += b->records;
	return 0;
}

/* Rendering ----------------------------------------------------------- */

/*
 * A mean, to 10 significant digits and always with a point ("1.0", not
 * "1", so JSON readers keep it a real). Ten digits, not the shortest
 * round-trip form: reading a document turns means back into sums, and
 * sum / count differs from the mean read by an ulp or so; rounded to 10
 * digits it prints the same again, so read/write cycles are stable.
 */
static void render_mean(struct tfk_buf *b, double v)
{
	char s[40];

	snprintf(s, sizeof(s), "%.10g", v);
	tfk_buf_adds(b, s);
	if (!strpbrk(s, ".e"))
		tfk_buf_adds(b, ".0");
}

static void render_stats(struct tfk_buf *b, const char *key, uint64_t min,
			 uint64_t max, double mean)
{
	tfk_buf_addf(b, ",\n      \"%s\": {\"min\": %" PRIu64 ", \"max\": %"
		     PRIu64 ", \"mean\": ", key, min, max);
	render_mean(b, mean);
	tfk_buf_addc(b, '}');
}

static void render_range(struct tfk_buf *b, const struct tfk_schema_feat *f)
{
	tfk_buf_adds(b, ",\n      \"range\": {\"min\": ");
	if (f->kind == TFK_FEAT_INT64 && !f->mixed) {
		tfk_buf_addf(b, "%" PRId64 ", \"max\": %" PRId64 "}", f->imin,
			     f->imax);
		return;
	}
	if (f->kind == TFK_FEAT_FLOAT && !f->mixed)
		tfk_buf_add_float(b, (float)f->vmin);
	else
		tfk_buf_add_double(b, f->vmin);
	tfk_buf_adds(b, ", \"max\": ");
	if (f->kind == TFK_FEAT_FLOAT && !f->mixed)
		tfk_buf_add_float(b, (float)f->vmax);
	else
		tfk_buf_add_double(b, f->vmax);
	tfk_buf_addc(b, '}');
}

static void render_feat(struct tfk_buf *b, const struct tfk_schema_feat *f,
			int list)
{
	int64_t shape[TFK_SCHEMA_MAX_RANK];
	int rank = tfk_schema_feat_shape(f, shape), i;
	size_t k;

	tfk_buf_adds(b, "    ");
	render_name(b, f->name, f->name_len);
	tfk_buf_addf(b, ": {\n      \"kind\": \"%s\"", tfk_schema_kind_name(f));
	tfk_buf_addf(b, ",\n      \"count\": %" PRIu64, f->count);
	if (list && f->count && f->steps_min <= f->steps_max)
		render_stats(b, "steps", f->steps_min, f->steps_max,
			     f->steps_sum / (double)f->count);
	if (f->n_len)
		render_stats(b, "length", f->len_min, f->len_max,
			     f->len_sum / (double)f->n_len);
	if (f->kind == TFK_FEAT_BYTES && !f->mixed && f->n_values &&
	    f->size_min <= f->size_max)
		render_stats(b, "size", f->size_min, f->size_max,
			     f->size_sum / (double)f->n_values);
	if (f->has_range)
		render_range(b, f);
	if (f->n_nonfinite)
		tfk_buf_addf(b, ",\n      \"nonfinite\": %" PRIu64,
			     f->n_nonfinite);
	if (f->content[0])
		tfk_buf_addf(b, ",\n      \"content\": \"%s\"", f->content);
	if (rank >= 0) {
		tfk_buf_adds(b, ",\n      \"shape\": [");
		for (i = 0; i < rank; i++)
			tfk_buf_addf(b, "%s%" PRId64, i ? ", " : "", shape[i]);
		tfk_buf_addc(b, ']');
	}
	if (f->dtype[0])
		tfk_buf_addf(b, ",\n      \"dtype\": \"%s\"", f->dtype);
	if (f->encoding[0])
		tfk_buf_addf(b, ",\n      \"encoding\": \"%s\"", f->encoding);
	if (f->n_label_names) {
		tfk_buf_adds(b, ",\n      \"label_names\": [");
		for (k = 0; k < f->n_label_names; k++) {
			if (k)
				tfk_buf_adds(b, ", ");
			render_name(b, f->label_names[k],
				    strlen(f->label_names[k]));
		}
		tfk_buf_addc(b, ']');
	}
	if (f->n_samples) {
		tfk_buf_adds(b, ",\n      \"samples\": [");
		for (k = 0; k < f->n_samples; k++) {
			if (k)
				tfk_buf_adds(b, ", ");
			tfk_buf_adds(b, f->samples[k]);
		}
		tfk_buf_addc(b, ']');
	}
	tfk_buf_adds(b, "\n    }");
}

static void render_section(struct tfk_buf *b, const char *key,
			   const struct tfk_schema_feat *v, size_t n, int list)
{
	size_t i;

	tfk_buf_addf(b, ",\n  \"%s\": {", key);
	for (i = 0; i < n; i++) {
		tfk_buf_adds(b, i ? ",\n" : "\n");
		render_feat(b, &v[i], list);
	}
	tfk_buf_adds(b, n ? "\n  }" : "}");
}

int tfk_schema_to_json(const struct tfk_schema *s, struct tfk_buf *b)
{
	tfk_buf_addf(b, "{\n  \"format\": \"tfkit-schema\",\n  \"version\": 1,"
		     "\n  \"records\": %" PRIu64, s->records);
	if (s->sequence) {
		render_section(b, "context", s->feat, s->n_feat, 0);
		render_section(b, "feature_lists", s->lists, s->n_lists, 1);
	} else {
		render_section(b, "features", s->feat, s->n_feat, 0);
	}
	tfk_buf_adds(b, "\n}\n");
	return tfk_buf_ok(b) ? 0 : TFK_ENOMEM;
}

int tfk_schema_write(const struct tfk_schema *s, const char *path,
		     struct tfk_err *err)
{
	struct tfk_buf b;
	struct tfk_out *out;
	int rc;

	tfk_buf_init(&b);
	if (tfk_schema_to_json(s, &b)) {
		tfk_buf_release(&b);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	rc = tfk_out_open(&out, path, TFK_COMP_NONE, err);
	if (!rc)
		rc = tfk_out_write(out, b.data, b.len, err);
	if (!rc)
		rc = tfk_out_close(out, err);
	else
		tfk_out_discard(out);
	tfk_buf_release(&b);
	return rc;
}

/* Reading ------------------------------------------------------------- */

struct pctx {
	const char *name;	/* file name for messages */
	struct tfk_err *err;
};

#define PATH_MAX_LEN 256

/* parent + key as a JSON path: ".key" for identifiers, else ["key"]. */
static void path_key(char *out, const char *parent, const char *key,
		     size_t klen)
{
	size_t i, n;
	int ident = klen > 0 && !(key[0] >= '0' && key[0] <= '9');

	for (i = 0; i < klen && ident; i++) {
		char c = key[i];

		ident = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '_';
	}
	n = (size_t)snprintf(out, PATH_MAX_LEN, "%s", parent);
	if (ident) {
		snprintf(out + n, PATH_MAX_LEN - n, "%s%.*s", n ? "." : "",
			 (int)(klen < 64 ? klen : 64), key);
		return;
	}
	if (n + 3 < PATH_MAX_LEN)
		out[n++] = '[', out[n++] = '"';
	for (i = 0; i < klen && i < 64 && n + 6 < PATH_MAX_LEN; i++) {
		unsigned char c = (unsigned char)key[i];

		if (c < 0x20 || c == '"' || c == '\\' || c == 0x7f)
			n += (size_t)snprintf(out + n, PATH_MAX_LEN - n,
					      "\\x%02x", c);
		else
			out[n++] = (char)c;
	}
	snprintf(out + n, PATH_MAX_LEN - n, "%s\"]", i < klen ? "..." : "");
}

static int bad(struct pctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(struct pctx *c, const char *path, const char *fmt, ...)
{
	char what[TFK_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return tfk_errf(c->err, TFK_ECORRUPT, "%s: %s: %s", c->name,
			path[0] ? path : "(top)", what);
}

static int oom(struct pctx *c)
{
	return tfk_errf(c->err, TFK_ENOMEM, "%s: out of memory", c->name);
}

static int get_u64(struct pctx *c, const char *path, json_t *v,
		   uint64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return bad(c, path, "expected a non-negative integer");
	*out = (uint64_t)json_integer_value(v);
	return 0;
}

static int get_str(struct pctx *c, const char *path, json_t *v,
		   const char *const *allowed, char *out, size_t outsz)
{
	const char *s;
	char list[200];
	size_t i, n = 0;

	if (json_is_string(v)) {
		s = json_string_value(v);
		for (i = 0; allowed[i]; i++) {
			if (!strcmp(s, allowed[i]) &&
			    strlen(s) == json_string_length(v)) {
				snprintf(out, outsz, "%s", s);
				return 0;
			}
		}
	}
	list[0] = '\0';
	for (i = 0; allowed[i]; i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s",
				      i == 0 ? "" : allowed[i + 1] ? ", " :
				      " or ", allowed[i]);
	return bad(c, path, "expected %s", list);
}

/* {"min": u64, "max": u64, "mean": number}, all three required. */
static int get_stats(struct pctx *c, const char *path, json_t *v,
		     uint64_t *min, uint64_t *max, double *mean)
{
	char sub[PATH_MAX_LEN];
	const char *key;
	size_t klen;
	json_t *x;
	int rc, seen = 0;

	if (!json_is_object(v))
		return bad(c, path, "expected an object with min, max, mean");
	json_object_keylen_foreach(v, key, klen, x) {
		path_key(sub, path, key, klen);
		if (!strcmp(key, "min") && klen == 3) {
			rc = get_u64(c, sub, x, min);
			seen |= 1;
		} else if (!strcmp(key, "max") && klen == 3) {
			rc = get_u64(c, sub, x, max);
			seen |= 2;
		} else if (!strcmp(key, "mean") && klen == 4) {
			if (!json_is_number(x) || json_number_value(x) < 0)
				return bad(c, sub, "expected a non-negative "
					   "number");
			*mean = json_number_value(x);
			rc = 0;
			seen |= 4;
		} else {
			return bad(c, sub, "unknown key");
		}
		if (rc)
			return rc;
	}
	if (seen != 7)
		return bad(c, path, "missing %s", !(seen & 1) ? "min" :
			   !(seen & 2) ? "max" : "mean");
	if (*min > *max)
		return bad(c, path, "min %" PRIu64 " is more than max %" PRIu64,
			   *min, *max);
	/* The mean is printed to 10 digits: allow that much rounding, then
	 * clamp, so sums rebuilt from it stay finite and consistent. */
	if (*mean < (double)*min * (1 - 1e-9) ||
	    *mean > (double)*max * (1 + 1e-9))
		return bad(c, path, "mean is outside [min, max]");
	*mean = MAX(*mean, (double)*min);
	*mean = MIN(*mean, (double)*max);
	return 0;
}

static int float_in_range(double v)
{
	return v >= -FLT_MAX && v <= FLT_MAX;
}

static int get_range(struct pctx *c, const char *path, json_t *v,
		     struct tfk_schema_feat *f)
{
	char sub[PATH_MAX_LEN];
	const char *key;
	size_t klen;
	json_t *x;
	int seen = 0, ints = f->kind == TFK_FEAT_INT64 && !f->mixed;

	if (f->kind == TFK_FEAT_BYTES || (f->kind == TFK_FEAT_NONE &&
					  !f->mixed))
		return bad(c, path, "only for float and int64 features");
	if (!json_is_object(v))
		return bad(c, path, "expected an object with min, max");
	json_object_keylen_foreach(v, key, klen, x) {
		int is_min = klen == 3 && !strcmp(key, "min");

		path_key(sub, path, key, klen);
		if (!is_min && !(klen == 3 && !strcmp(key, "max")))
			return bad(c, sub, "unknown key");
		if (ints) {
			if (!json_is_integer(x))
				return bad(c, sub, "expected an integer");
			*(is_min ? &f->imin : &f->imax) = json_integer_value(x);
			*(is_min ? &f->vmin : &f->vmax) =
				(double)json_integer_value(x);
		} else {
			if (!json_is_number(x))
				return bad(c, sub, "expected a number");
			if (f->kind == TFK_FEAT_FLOAT &&
			    !float_in_range(json_number_value(x)))
				return bad(c, sub, "out of float range");
			*(is_min ? &f->vmin : &f->vmax) = json_number_value(x);
		}
		seen |= is_min ? 1 : 2;
	}
	if (seen != 3)
		return bad(c, path, "missing %s", seen & 1 ? "max" : "min");
	if (f->vmin > f->vmax || (ints && f->imin > f->imax))
		return bad(c, path, "min is more than max");
	f->has_range = 1;
	return 0;
}

static int get_shape(struct pctx *c, const char *path, json_t *v,
		     struct tfk_schema_feat *f)
{
	size_t i;
	json_t *x;

	if (!json_is_array(v))
		return bad(c, path, "expected an array of dimensions");
	if (json_array_size(v) > TFK_SCHEMA_MAX_RANK)
		return bad(c, path, "rank %zu is more than %d",
			   json_array_size(v), TFK_SCHEMA_MAX_RANK);
	json_array_foreach(v, i, x) {
		if (!json_is_integer(x) || json_integer_value(x) < -1) {
			char sub[PATH_MAX_LEN + 24];

			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			return bad(c, sub, "expected an integer >= -1");
		}
		f->shape[i] = json_integer_value(x);
	}
	f->rank = (int)json_array_size(v);
	return 0;
}

static int get_labels(struct pctx *c, const char *path, json_t *v,
		      struct tfk_schema_feat *f)
{
	size_t i, n;
	json_t *x;

	if (!json_is_array(v))
		return bad(c, path, "expected an array of strings");
	n = json_array_size(v);
	f->label_names = tfk_calloc(n ? n : 1, sizeof(char *));
	if (!f->label_names)
		return oom(c);
	json_array_foreach(v, i, x) {
		if (!json_is_string(x) ||
		    strlen(json_string_value(x)) != json_string_length(x)) {
			char sub[PATH_MAX_LEN + 24];

			snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
			return bad(c, sub, "expected a string without NUL");
		}
		f->label_names[i] = tfk_strdup(json_string_value(x));
		if (!f->label_names[i])
			return oom(c);
		f->n_label_names++;
	}
	return 0;
}

static int b64_valid(const char *s, size_t n)
{
	size_t i, pad = 0;

	if (n % 4)
		return 0;
	for (i = 0; i < n; i++) {
		char ch = s[i];

		if (ch == '=') {
			pad++;
			continue;
		}
		if (pad || !((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
			     (ch >= '0' && ch <= '9') || ch == '+' || ch == '/'))
			return 0;
	}
	return pad <= 2;
}

/* Check one sample against the kind and render it back to JSON text. */
static int get_sample(struct pctx *c, const char *path, json_t *x,
		      struct tfk_schema_feat *f)
{
	struct tfk_buf b;
	int kind = f->mixed ? -1 : f->kind, rc;

	tfk_buf_init(&b);
	if (json_is_integer(x) && (kind == TFK_FEAT_INT64 || kind == -1)) {
		tfk_buf_addf(&b, "%" JSON_INTEGER_FORMAT, json_integer_value(x));
	} else if (json_is_number(x) && (kind == TFK_FEAT_FLOAT || kind == -1)) {
		double d = json_number_value(x);

		if (kind == TFK_FEAT_FLOAT && !float_in_range(d)) {
			tfk_buf_release(&b);
			return bad(c, path, "out of float range");
		}
		if (kind == TFK_FEAT_FLOAT)
			tfk_buf_add_float(&b, (float)d);
		else
			tfk_buf_add_double(&b, d);
	} else if (json_is_string(x) && (kind == TFK_FEAT_FLOAT ||
					 kind == TFK_FEAT_BYTES || kind == -1)) {
		const char *s = json_string_value(x);

		if (kind == TFK_FEAT_FLOAT && strcmp(s, "NaN") &&
		    strcmp(s, "Infinity") && strcmp(s, "-Infinity")) {
			tfk_buf_release(&b);
			return bad(c, path, "expected a number, \"NaN\", "
				   "\"Infinity\" or \"-Infinity\"");
		}
		tfk_buf_add_json_str(&b, s, json_string_length(x));
	} else if (json_is_object(x) && (kind == TFK_FEAT_BYTES || kind == -1)) {
		json_t *s = json_object_get(x, "b64");

		if (json_object_size(x) != 1 || !json_is_string(s) ||
		    !b64_valid(json_string_value(s), json_string_length(s))) {
			tfk_buf_release(&b);
			return bad(c, path, "expected {\"b64\": BASE64}");
		}
		tfk_buf_adds(&b, "{\"b64\": \"");
		tfk_buf_adds(&b, json_string_value(s));
		tfk_buf_adds(&b, "\"}");
	} else {
		tfk_buf_release(&b);
		return bad(c, path, "wrong type for kind %s",
			   tfk_schema_kind_name(f));
	}
	rc = take_sample(f, &b);
	tfk_buf_release(&b);
	return rc ? oom(c) : 0;
}

static int get_samples(struct pctx *c, const char *path, json_t *v,
		       struct tfk_schema_feat *f)
{
	char sub[PATH_MAX_LEN + 24];
	size_t i;
	json_t *x;
	int rc;

	if (!json_is_array(v))
		return bad(c, path, "expected an array");
	if (json_array_size(v) > TFK_SCHEMA_SAMPLES)
		return bad(c, path, "more than %d samples", TFK_SCHEMA_SAMPLES);
	json_array_foreach(v, i, x) {
		snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
		if ((rc = get_sample(c, sub, x, f)))
			return rc;
	}
	return 0;
}

/* Nearest integer, saturating: a cast of a double past 2^64 is undefined. */
static uint64_t round_u64(double v)
{
	if (!(v >= 0))
		return 0;
	if (v >= 18446744073709551615.0)
		return UINT64_MAX;
	return (uint64_t)(v + 0.5);
}

static const char *const kinds[] = { "bytes", "float", "int64", "none",
				     "mixed", NULL };
static const char *const contents[] = { "jpeg", "png", "gif", "bmp", "text",
					"binary", NULL };
static const char *const dtypes[] = { "uint8", "int8", "uint16", "int16",
				      "int32", "int64", "float16", "float32",
				      "float64", "bool", "string", NULL };
static const char *const encodings[] = { "raw", "jpeg", "png", "gif", "bmp",
					 "utf-8", NULL };

static int parse_feat(struct pctx *c, const char *path, json_t *o,
		      struct tfk_schema_feat *f, int list, uint64_t records,
		      int has_records)
{
	char sub[PATH_MAX_LEN], kind[8];
	const char *key;
	size_t klen;
	json_t *x;
	double len_mean = 0, size_mean = 0, steps_mean = 0;
	int rc = 0, has_len = 0, has_size = 0, has_steps = 0;

	if (!json_is_object(o))
		return bad(c, path, "expected an object");
	x = json_object_get(o, "kind");
	path_key(sub, path, "kind", 4);
	if (!x)
		return bad(c, path, "missing kind");
	if ((rc = get_str(c, sub, x, kinds, kind, sizeof(kind))))
		return rc;
	if (!strcmp(kind, "mixed"))
		f->mixed = 1;
	else if (strcmp(kind, "none"))
		f->kind = !strcmp(kind, "bytes") ? TFK_FEAT_BYTES :
			  !strcmp(kind, "float") ? TFK_FEAT_FLOAT :
			  TFK_FEAT_INT64;

	json_object_keylen_foreach(o, key, klen, x) {
		path_key(sub, path, key, klen);
		if (strlen(key) != klen)
			return bad(c, sub, "unknown key");
		if (!strcmp(key, "kind")) {
			continue;
		} else if (!strcmp(key, "count")) {
			rc = get_u64(c, sub, x, &f->count);
			if (!rc && has_records && f->count > records)
				return bad(c, sub, "%" PRIu64 " is more than "
					   "records (%" PRIu64 ")", f->count,
					   records);
		} else if (!strcmp(key, "length")) {
			rc = get_stats(c, sub, x, &f->len_min, &f->len_max,
				       &len_mean);
			has_len = 1;
		} else if (!strcmp(key, "steps") && list) {
			rc = get_stats(c, sub, x, &f->steps_min, &f->steps_max,
				       &steps_mean);
			has_steps = 1;
		} else if (!strcmp(key, "size")) {
			if (f->kind != TFK_FEAT_BYTES || f->mixed)
				return bad(c, sub, "only for bytes features");
			rc = get_stats(c, sub, x, &f->size_min, &f->size_max,
				       &size_mean);
			has_size = 1;
		} else if (!strcmp(key, "range")) {
			rc = get_range(c, sub, x, f);
		} else if (!strcmp(key, "nonfinite")) {
			if (f->kind != TFK_FEAT_FLOAT && !f->mixed)
				return bad(c, sub, "only for float features");
			rc = get_u64(c, sub, x, &f->n_nonfinite);
		} else if (!strcmp(key, "content")) {
			if (f->kind != TFK_FEAT_BYTES || f->mixed)
				return bad(c, sub, "only for bytes features");
			rc = get_str(c, sub, x, contents, f->content,
				     sizeof(f->content));
		} else if (!strcmp(key, "shape")) {
			rc = get_shape(c, sub, x, f);
		} else if (!strcmp(key, "dtype")) {
			rc = get_str(c, sub, x, dtypes, f->dtype,
				     sizeof(f->dtype));
		} else if (!strcmp(key, "encoding")) {
			rc = get_str(c, sub, x, encodings, f->encoding,
				     sizeof(f->encoding));
		} else if (!strcmp(key, "label_names")) {
			rc = get_labels(c, sub, x, f);
		} else if (!strcmp(key, "samples")) {
			rc = get_samples(c, sub, x, f);
		} else {
			return bad(c, sub, "unknown key");
		}
		if (rc)
			return rc;
	}

	/* Back from means to the sums observing keeps (means are clamped
	 * to [min, max] <= 2^64, counts < 2^63: products stay finite). */
	if (list) {
		if (has_steps && f->count) {
			f->steps_sum = steps_mean * (double)f->count;
		} else {
			f->steps_min = UINT64_MAX;
			f->steps_max = 0;
		}
		f->n_len = round_u64(f->steps_sum);
	} else {
		f->n_len = f->count;
	}
	if (has_len && f->n_len) {
		f->len_sum = len_mean * (double)f->n_len;
		f->n_values = round_u64(f->len_sum);
	} else {
		f->n_len = 0;
		f->len_min = UINT64_MAX;
		f->len_max = 0;
	}
	if (has_size && f->n_values) {
		f->size_sum = size_mean * (double)f->n_values;
	} else {
		f->size_min = UINT64_MAX;
		f->size_max = 0;
	}
	return 0;
}

static int parse_section(struct pctx *c, struct tfk_schema *s,
			 const char *path, json_t *o, int list,
			 int has_records)
{
	char sub[PATH_MAX_LEN];
	const char *key;
	size_t klen;
	json_t *x;
	int rc;

	if (!json_is_object(o))
		return bad(c, path, "expected an object of features");
	json_object_keylen_foreach(o, key, klen, x) {
		struct tfk_schema_feat *f = list ?
			add_feat(&s->lists, &s->n_lists, &s->cap_lists, key,
				 klen) :
			add_feat(&s->feat, &s->n_feat, &s->cap, key, klen);

		if (!f)
			return oom(c);
		path_key(sub, path, key, klen);
		rc = parse_feat(c, sub, x, f, list, s->records, has_records);
		if (rc)
			return rc;
	}
	return 0;
}

static int parse_doc(struct pctx *c, struct tfk_schema *s, json_t *root)
{
	json_t *v, *features, *context, *lists;
	const char *key;
	size_t klen, i;
	int rc, has_records;

	if (!json_is_object(root))
		return bad(c, "", "expected a tfkit-schema object");
	json_object_keylen_foreach(root, key, klen, v) {
		static const char *const known[] = { "format", "version",
			"records", "features", "context", "feature_lists" };
		char sub[PATH_MAX_LEN];

		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strlen(known[i]) == klen && !strcmp(key, known[i]))
				break;
		if (i == sizeof(known) / sizeof(known[0])) {
			path_key(sub, "", key, klen);
			return bad(c, sub, "unknown key");
		}
	}
	v = json_object_get(root, "format");
	if (!json_is_string(v) || strcmp(json_string_value(v), "tfkit-schema"))
		return bad(c, "format", "expected \"tfkit-schema\"");
	v = json_object_get(root, "version");
	if (!json_is_integer(v) || json_integer_value(v) != 1)
		return bad(c, "version", "expected 1 (the version this tfkit "
			   "reads)");
	v = json_object_get(root, "records");
	has_records = v != NULL;
	if (v && (rc = get_u64(c, "records", v, &s->records)))
		return rc;
	features = json_object_get(root, "features");
	context = json_object_get(root, "context");
	lists = json_object_get(root, "feature_lists");
	if (features && (context || lists))
		return bad(c, context ? "context" : "feature_lists",
			   "an Example schema (features) has no %s",
			   context ? "context" : "feature_lists");
	if (!features && !context && !lists)
		return bad(c, "", "missing features");
	if (features && (rc = parse_section(c, s, "features", features, 0,
					    has_records)))
		return rc;
	if (context && (rc = parse_section(c, s, "context", context, 0,
					   has_records)))
		return rc;
	if (lists && (rc = parse_section(c, s, "feature_lists", lists, 1,
					 has_records)))
		return rc;
	s->sequence = !features;
	if (!has_records) {
		for (i = 0; i < s->n_feat; i++)
			s->records = MAX(s->records, s->feat[i].count);
		for (i = 0; i < s->n_lists; i++)
			s->records = MAX(s->records, s->lists[i].count);
	}
	return 0;
}

int tfk_schema_parse(struct tfk_schema *s, const char *name,
		     const char *text, size_t len, struct tfk_err *err)
{
	struct pctx c = { name, err };
	json_error_t jerr;
	json_t *root;
	int rc;

	tfk_schema_init(s);
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
			  &jerr);
	if (!root)
		return tfk_errf(err, TFK_ECORRUPT, "%s: line %d column %d: %s",
				name, jerr.line, jerr.column, jerr.text);
	rc = parse_doc(&c, s, root);
	json_decref(root);
	if (rc)
		tfk_schema_release(s);
	return rc;
}

int tfk_schema_read(struct tfk_schema *s, const char *path,
		    struct tfk_err *err)
{
	FILE *f;
	char *text = NULL;
	size_t n = 0, cap = 0;
	int rc;

	tfk_schema_init(s);
	f = fopen(path, "rb");
	if (!f)
		return tfk_errf(err, TFK_EIO, "%s: cannot open: %s", path,
				strerror(errno));
	for (;;) {
		size_t got;

		if (n == cap) {
			char *t;

			if (cap >= SCHEMA_MAX_BYTES) {
				fclose(f);
				tfk_free(text);
				return tfk_errf(err, TFK_ECORRUPT, "%s: more "
						"than %u MiB: not a schema",
						path, SCHEMA_MAX_BYTES >> 20);
			}
			cap = cap ? cap * 2 : 65536;
			t = tfk_realloc(text, cap);
			if (!t) {
				fclose(f);
				tfk_free(text);
				return tfk_errf(err, TFK_ENOMEM, "%s: out of "
						"memory", path);
			}
			text = t;
		}
		got = fread(text + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		rc = tfk_errf(err, TFK_EIO, "%s: read error: %s", path,
			      strerror(errno));
		fclose(f);
		tfk_free(text);
		return rc;
	}
	fclose(f);
	rc = tfk_schema_parse(s, path, text, n, err);
	tfk_free(text);
	return rc;
}
