/*
 * seqex.c - tf.SequenceExample decoding and JSON (see seqex.h).
 *
 * Our own walker over the wire bytes, sharing example.c's field reader
 * and Feature decoder: the context is an Example's Features, and every
 * step is a Feature, so steps are struct tfk_feat and the same accessors
 * read them. Steps of all lists go into one array that grows to the
 * longest record and is reused; a list is a slice of it. A list name
 * given again gets a new slice (the old steps stay unused until the next
 * record). Rejected: protobuf-c's generated unpacker, which allocates
 * every message and copies every value.
 */
#include "example/seqex.h"
#include "example/exjson.h"
#include "example/names-impl.h"
#include "example/wire-impl.h"
#include "util/alloc.h"

#include <string.h>

TFK_NAMES_CHECK(struct tfk_seqlist);

void tfk_seqex_init(struct tfk_seqex *s)
{
	memset(s, 0, sizeof(*s));
	tfk_example_init(&s->context);
}

void tfk_seqex_release(struct tfk_seqex *s)
{
	if (!s)
		return;
	tfk_example_release(&s->context);
	tfk_free(s->lists);
	tfk_free(s->steps);
	tfk_free(s->ht);
	tfk_seqex_init(s);
}

/* List names --------------------------------------------------------- */

static long find_list(const struct tfk_seqex *s, const char *name, size_t n,
		      size_t *slot)
{
	size_t i;

	if (s->ht_mask)
		return tfk_names_find(s->ht, s->ht_mask, s->lists,
				      sizeof(*s->lists), name, n, slot);
	for (i = 0; i < s->n_lists; i++)
		if (tfk_names_same((const struct tfk_named *)&s->lists[i],
				   name, n))
			return (long)i;
	return -1;
}

const struct tfk_seqlist *tfk_seqex_find(const struct tfk_seqex *s,
					 const char *name)
{
	size_t slot;
	long k = find_list(s, name, strlen(name), &slot);

	return k < 0 ? NULL : &s->lists[k];
}

/* Add list l, or replace the list of the same name. */
static int put_list(struct tfk_seqex *s, const struct tfk_seqlist *l)
{
	size_t slot = 0;
	long k = find_list(s, l->name, l->name_len, &slot);

	if (k >= 0) {
		s->lists[k] = *l;
		return 0;
	}
	if (s->n_lists == s->lists_cap) {
		size_t cap = s->lists_cap ? 2 * s->lists_cap : 8;
		struct tfk_seqlist *p;

		if (cap > TFK_NAMES_EMPTY)
			return TFK_ENOMEM;
		p = tfk_realloc(s->lists, cap * sizeof(*p));
		if (!p)
			return TFK_ENOMEM;
		s->lists = p;
		s->lists_cap = cap;
	}
	s->lists[s->n_lists++] = *l;
	return tfk_names_added(&s->ht, &s->ht_size, &s->ht_mask, s->lists,
			       sizeof(*s->lists), s->n_lists, slot);
}

/* Decoding ----------------------------------------------------------- */

static int add_step(struct tfk_seqex *s, const uint8_t *p,
		    const uint8_t *end, const uint8_t *base,
		    struct tfk_err *err)
{
	struct tfk_feat *f;
	int rc;

	if (s->n_steps == s->steps_cap) {
		size_t cap = s->steps_cap ? 2 * s->steps_cap : 16;

		f = tfk_realloc(s->steps, cap * sizeof(*f));
		if (!f)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		s->steps = f;
		s->steps_cap = cap;
	}
	f = &s->steps[s->n_steps];
	f->name = "";
	f->name_len = 0;
	if ((rc = tfk_feat_parse(f, p, (size_t)(end - p), base, err)))
		return rc;
	s->n_steps++;
	return 0;
}

typedef int (*body_fn)(struct tfk_seqex *s, const uint8_t *p,
		       const uint8_t *end, const uint8_t *base,
		       struct tfk_err *err);

/* The repeated message field 1 of [p, end) (what: its name for the wire
 * type error), each body passed to fn; other fields are skipped. */
static int each_one(struct tfk_seqex *s, const uint8_t *p,
		    const uint8_t *end, const uint8_t *base, const char *what,
		    body_fn fn, struct tfk_err *err)
{
	struct tfk_pbf f;
	int rc;

	while (p < end) {
		TFK_PB_NEXT(&p, end, &f);
		if (f.num != 1)
			continue;
		if (f.wt != TFK_PB_LEN)
			return tfk_pb_wt_err(&f, what, "2", base, err);
		if ((rc = fn(s, f.p, f.end, base, err)))
			return rc;
	}
	return 0;
}

/* FeatureList body: repeated Feature feature = 1. */
static int parse_list(struct tfk_seqex *s, const uint8_t *p,
		      const uint8_t *end, const uint8_t *base,
		      struct tfk_err *err)
{
	return each_one(s, p, end, base, "FeatureList.feature", add_step, err);
}

/* FeatureLists map entry: { string key = 1; FeatureList value = 2; }.
 * The steps of every value field are appended in order, so the list is
 * the slice from the first to the last. */
static int parse_entry(struct tfk_seqex *s, const uint8_t *p,
		       const uint8_t *end, const uint8_t *base,
		       struct tfk_err *err)
{
	struct tfk_seqlist l = { "", 0, s->n_steps, 0 };
	struct tfk_pbf f;
	int rc;

	while (p < end) {
		TFK_PB_NEXT(&p, end, &f);
		if (f.num == 1) {
			if (f.wt != TFK_PB_LEN)
				return tfk_pb_wt_err(&f, "map key", "2", base,
						     err);
			l.name = (const char *)f.p;
			l.name_len = (size_t)f.v;
		} else if (f.num == 2) {
			if (f.wt != TFK_PB_LEN)
				return tfk_pb_wt_err(&f, "map value", "2",
						     base, err);
			if ((rc = parse_list(s, f.p, f.end, base, err)))
				return rc;
		}
	}
	l.n = s->n_steps - l.first;
	if (put_list(s, &l))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	return 0;
}

/* FeatureLists body: map<string, FeatureList> feature_list = 1. */
static int parse_lists(struct tfk_seqex *s, const uint8_t *p,
		       const uint8_t *end, const uint8_t *base,
		       struct tfk_err *err)
{
	return each_one(s, p, end, base, "FeatureLists.feature_list",
			parse_entry, err);
}

static int parse(struct tfk_seqex *s, const uint8_t *base, size_t len,
		 struct tfk_err *err)
{
	const uint8_t *p = base, *end = base + len;
	struct tfk_pbf f;
	int rc;

	if (len > TFK_PB_MAX)
		return tfk_errf(err, TFK_ECORRUPT, "byte 0: message of %zu "
				"bytes exceeds protobuf's 2 GiB limit", len);
	while (p < end) {
		TFK_PB_NEXT(&p, end, &f);
		if (f.num == 1) {
			if (f.wt != TFK_PB_LEN)
				return tfk_pb_wt_err(&f, "SequenceExample.context",
						     "2", base, err);
			if ((rc = tfk_example_parse_features(&s->context, f.p,
							     (size_t)f.v, err)))
				return rc;
		} else if (f.num == 2) {
			if (f.wt != TFK_PB_LEN)
				return tfk_pb_wt_err(&f, "SequenceExample."
						     "feature_lists", "2", base,
						     err);
			if ((rc = parse_lists(s, f.p, f.end, base, err)))
				return rc;
		}
	}
	return 0;
}

int tfk_seqex_parse(struct tfk_seqex *s, const uint8_t *buf, size_t len,
		    struct tfk_err *err)
{
	int rc;

	tfk_example_begin(&s->context, buf, len);
	s->n_lists = 0;
	s->n_steps = 0;
	s->ht_mask = 0;
	rc = parse(s, buf, len, err);
	if (rc) {
		tfk_example_begin(&s->context, buf, len);
		s->n_lists = 0;
		s->n_steps = 0;
		s->ht_mask = 0;
	}
	return rc;
}

/* JSON ----------------------------------------------------------------- */

int tfk_seqex_write_json(const struct tfk_seqex *s, struct tfk_buf *out,
			 struct tfk_err *err)
{
	size_t i, j;
	int rc;

	tfk_buf_adds(out, "{\"context\":");
	if ((rc = tfk_exjson_write(&s->context, out, err)))
		return rc;
	tfk_buf_adds(out, ",\"feature_lists\":{");
	for (i = 0; i < s->n_lists; i++) {
		const struct tfk_seqlist *l = &s->lists[i];

		if ((rc = tfk_exjson_add_key(out, l->name, l->name_len,
					     "feature list", i, err)))
			return rc;
		tfk_buf_addc(out, '[');
		for (j = 0; j < l->n; j++) {
			if (j)
				tfk_buf_addc(out, ',');
			tfk_exjson_add_values(out, tfk_seqex_step(s, l, j));
		}
		tfk_buf_addc(out, ']');
	}
	tfk_buf_add(out, "}}", 2);
	if (!tfk_buf_ok(out))
		return tfk_errf(err, TFK_ENOMEM, "out of memory writing json");
	return 0;
}
