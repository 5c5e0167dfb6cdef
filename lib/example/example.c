/*
 * example.c - tf.Example decoding and encoding (see example.h).
 *
 * Decoding is one pass over the bytes that validates everything an
 * accessor will later read (varints, lengths, packed runs) and records,
 * per feature, the name and the Feature body where it lies. It never
 * copies values and allocates only when a record is wider than any seen
 * before (the feature array, a name index past TFK_NAMES_MIN features). The
 * one exception is a map entry whose value field appears twice: the
 * two Feature bodies must merge, so they are concatenated into a
 * scratch buffer reserved once per record at the record's size (value
 * fields are disjoint parts of the record, so it never moves while
 * pointers into it are live). Protobuf's oneof rule needs no copy:
 * the feature's body starts at the first field of the last run of one
 * kind, and accessors walk only that kind's fields from there.
 *
 * Records laid out exactly as TensorFlow writes them (one Features
 * field, entries of key then value, one list field per Feature, one
 * packed run) take a straight-line pass first; anything else, including
 * every error, goes through the general walker, which also words the
 * messages. The fast pass must accept nothing the walker would refuse
 * and describe each feature exactly as the walker would: fuzz-example
 * and t-example check that by appending an unknown field to a record,
 * which sends it down the walker, and comparing the two decodings.
 *
 * Rejected: protobuf-c's generated unpacker (one allocation per message,
 * list and string: measured 10x slower on a 784-byte image record) and a
 * decoded value cache (accessors walking the validated body are as fast
 * as copying from a cache, and the common float case has the packed
 * pointer).
 *
 * Encoding computes every length before writing, so each feature is
 * written once, in place, into one growable buffer; the Example header
 * goes into a gap kept at the front, so finishing copies nothing.
 */
#include "example/example.h"
#include "example/names-impl.h"
#include "example/wire-impl.h"
#include "util/alloc.h"
#include "util/buf.h"

#include <string.h>

/* Features in one record before duplicate-key checks use a hash index
 * instead of a scan: below this a scan is cheaper than hashing. */
TFK_NAMES_CHECK(struct tfk_feat);

/* Bytes kept in front of the Features body for the Example header (a
 * tag byte and a varint of at most 10 bytes) and the caller's room. */
#define EXB_GAP (11 + TFK_EXB_ROOM_BEFORE)

_Static_assert(sizeof(size_t) >= 8, "bytes iterator packs two offsets");

const char *tfk_feat_kind_name(int kind)
{
	switch (kind) {
	case TFK_FEAT_NONE:	return "none";
	case TFK_FEAT_BYTES:	return "bytes";
	case TFK_FEAT_FLOAT:	return "float";
	case TFK_FEAT_INT64:	return "int64";
	}
	return "?";
}

void tfk_example_init(struct tfk_example *ex)
{
	memset(ex, 0, sizeof(*ex));
	tfk_buf_init(&ex->scratch);
}

void tfk_example_release(struct tfk_example *ex)
{
	if (!ex)
		return;
	tfk_free(ex->feat);
	tfk_free(ex->ht);
	tfk_buf_release(&ex->scratch);
	tfk_example_init(ex);
}

/* Name index ------------------------------------------------------------ */

int tfk_names_build(uint32_t **ht, size_t *ht_size, size_t *mask,
		    const void *elems, size_t stride, size_t n)
{
	size_t size = 64, i, slot;

	while (size < 4 * n)
		size *= 2;
	if (size > *ht_size) {
		uint32_t *p;

		if (size > SIZE_MAX / sizeof(*p))
			return TFK_ENOMEM;
		p = tfk_realloc(*ht, size * sizeof(*p));
		if (!p)
			return TFK_ENOMEM;
		*ht = p;
		*ht_size = size;
	}
	*mask = size - 1;
	memset(*ht, 0xff, size * sizeof(**ht));
	for (i = 0; i < n; i++) {
		const struct tfk_named *e = tfk_names_at(elems, stride, i);

		tfk_names_find(*ht, *mask, elems, stride, e->name, e->name_len,
			       &slot);
		(*ht)[slot] = (uint32_t)i;
	}
	return 0;
}

/* Index of the feature called name, or -1; *slot as tfk_names_find. */
static long ht_find(const struct tfk_example *ex, const char *name, size_t n,
		    size_t *slot)
{
	return tfk_names_find(ex->ht, ex->ht_mask, ex->feat, sizeof(*ex->feat),
			      name, n, slot);
}

static inline int same_name(const struct tfk_feat *f, const char *name,
			    size_t n)
{
	return tfk_names_same((const struct tfk_named *)f, name, n);
}

const struct tfk_feat *tfk_example_findn(const struct tfk_example *ex,
					 const char *name, size_t len)
{
	const struct tfk_feat *f = ex->feat, *end;
	size_t slot;
	long k;

	if (ex->n_feat == 0)	/* feat may still be NULL: no pointer math */
		return NULL;
	end = f + ex->n_feat;
	if (ex->ht_mask) {
		k = ht_find(ex, name, len, &slot);
		return k < 0 ? NULL : &ex->feat[k];
	}
	for (; f < end; f++)
		if (f->name_len == len && (len == 0 || (f->name[0] == name[0] &&
		    memcmp(f->name, name, len) == 0)))
			return f;
	return NULL;
}

static int grow(struct tfk_example *ex)
{
	size_t cap = ex->cap ? 2 * ex->cap : 8;
	struct tfk_feat *p;

	if (cap > SIZE_MAX / sizeof(*p) || cap > TFK_NAMES_EMPTY)
		return TFK_ENOMEM;
	p = tfk_realloc(ex->feat, cap * sizeof(*p));
	if (!p)
		return TFK_ENOMEM;
	ex->feat = p;
	ex->cap = cap;
	return 0;
}

/* Where the next feature is decoded: feat[n_feat], room made. NULL when
 * out of memory. */
static inline struct tfk_feat *next_slot(struct tfk_example *ex)
{
	if (ex->n_feat == ex->cap && grow(ex))
		return NULL;
	return &ex->feat[ex->n_feat];
}

/* commit_slot's general case: the name index, or its creation. */
static __attribute__((noinline)) int commit_indexed(struct tfk_example *ex)
{
	struct tfk_feat *f = &ex->feat[ex->n_feat];
	size_t slot = 0;
	long k;

	if (ex->ht_mask) {
		k = ht_find(ex, f->name, f->name_len, &slot);
	} else {
		for (k = (long)ex->n_feat - 1; k >= 0; k--)
			if (same_name(&ex->feat[k], f->name, f->name_len))
				break;
	}
	if (k >= 0) {
		ex->feat[k] = *f;
		return 0;
	}
	ex->n_feat++;
	return tfk_names_added(&ex->ht, &ex->ht_size, &ex->ht_mask, ex->feat,
			       sizeof(*ex->feat), ex->n_feat, slot);
}

/*
 * Keep the feature decoded into feat[n_feat]: append it, or let it
 * replace the feature of the same name (protobuf's map rule: the last
 * entry for a key wins). Narrow records take the short scan inline.
 */
static inline int commit_slot(struct tfk_example *ex)
{
	struct tfk_feat *f = &ex->feat[ex->n_feat];
	long k;

	if (ex->ht_mask || ex->n_feat + 1 >= TFK_NAMES_MIN)
		return commit_indexed(ex);
	for (k = (long)ex->n_feat - 1; k >= 0; k--) {
		if (same_name(&ex->feat[k], f->name, f->name_len)) {
			ex->feat[k] = *f;
			return 0;
		}
	}
	ex->n_feat++;
	return 0;
}

static int put_feat(struct tfk_example *ex, const struct tfk_feat *f)
{
	struct tfk_feat *slot = next_slot(ex);

	if (!slot)
		return TFK_ENOMEM;
	*slot = *f;
	return commit_slot(ex);
}

/* Decoding -------------------------------------------------------------- */

int tfk_pb_fail(const struct tfk_pbf *f, int rc, const uint8_t *end,
		const uint8_t *base, struct tfk_err *err)
{
	size_t at = (size_t)(f->tag - base);

	switch (rc) {
	case TFK_PB_E_TRUNC:
		return tfk_errf(err, TFK_ECORRUPT, "byte %zu: truncated varint",
				(size_t)(f->p - base));
	case TFK_PB_E_LONG:
		return tfk_errf(err, TFK_ECORRUPT, "byte %zu: varint longer "
				"than 10 bytes", (size_t)(f->p - base));
	case TFK_PB_E_NUM:
		return tfk_errf(err, TFK_ECORRUPT, "byte %zu: invalid field "
				"number %llu", at, (unsigned long long)f->v);
	case TFK_PB_E_PAST:
		return tfk_errf(err, TFK_ECORRUPT, "byte %zu: field %u: length "
				"%llu past end of message (%zu bytes left)", at,
				f->num, (unsigned long long)f->v,
				(size_t)(end - f->p));
	case TFK_PB_E_FIXED:
		return tfk_errf(err, TFK_ECORRUPT, "byte %zu: fixed%d field %u "
				"past end of message", at,
				f->wt == TFK_PB_I32 ? 32 : 64, f->num);
	case TFK_PB_E_GROUP:
		return tfk_errf(err, TFK_ECORRUPT, "byte %zu: field %u: groups "
				"(wire type %d) are not supported", at, f->num,
				f->wt);
	}
	return tfk_errf(err, TFK_ECORRUPT, "byte %zu: field %u: invalid wire "
			"type %d", at, f->num, f->wt);
}

int tfk_pb_wt_err(const struct tfk_pbf *f, const char *what,
		  const char *want, const uint8_t *base, struct tfk_err *err)
{
	return tfk_errf(err, TFK_ECORRUPT, "byte %zu: %s (field %u) has wire "
			"type %d, want %s", (size_t)(f->tag - base), what,
			f->num, f->wt, want);
}

/* Read the next field or return the located error from the function
 * using it (which has base and err in scope). */
static int corrupt_at(const uint8_t *at, const uint8_t *base,
		      struct tfk_err *err, const char *what)
{
	return tfk_errf(err, TFK_ECORRUPT, "byte %zu: %s", (size_t)(at - base),
			what);
}

/* Count the varints of a packed int64 run, checking each is complete
 * and at most 10 bytes. */
static int count_varints(const uint8_t *p, const uint8_t *end, size_t *n,
			 const uint8_t *base, struct tfk_err *err)
{
	size_t cnt = 0, cont = 0;

	for (; p < end; p++) {
		if (*p & 0x80) {
			if (++cont == 10)
				return corrupt_at(p - 9, base, err,
						  "varint longer than 10 bytes");
		} else {
			cont = 0;
			cnt++;
		}
	}
	if (cont)
		return corrupt_at(end - cont, base, err, "truncated varint");
	*n += cnt;
	return 0;
}

/*
 * Check one list message (BytesList, FloatList or Int64List: kind) and
 * add its values to *n and its value fields to *nvf; *pk gets the
 * packed float run of the last value field (NULL for a single value).
 */
static int check_list(int kind, const uint8_t *p, const uint8_t *end,
		      size_t *n, size_t *nvf, const uint8_t **pk,
		      const uint8_t *base, struct tfk_err *err)
{
	struct tfk_pbf f;
	int rc;

	while (p < end) {
		TFK_PB_NEXT(&p, end, &f);
		if (f.num != 1)
			continue;	/* unknown field, skipped */
		++*nvf;
		switch (kind) {
		case TFK_FEAT_BYTES:
			if (f.wt != TFK_PB_LEN)
				return tfk_pb_wt_err(&f, "BytesList.value",
						     "2", base, err);
			++*n;
			break;
		case TFK_FEAT_FLOAT:
			if (f.wt == TFK_PB_LEN) {
				if (f.v % 4)
					return tfk_errf(err, TFK_ECORRUPT,
						"byte %zu: packed floats: "
						"%zu bytes is not a multiple "
						"of 4", (size_t)(f.tag - base),
						(size_t)f.v);
				*n += (size_t)f.v / 4;
				*pk = f.p;
			} else if (f.wt == TFK_PB_I32) {
				++*n;
				*pk = NULL;
			} else {
				return tfk_pb_wt_err(&f, "FloatList.value",
						     "5 or 2", base, err);
			}
			break;
		default:
			if (f.wt == TFK_PB_LEN) {
				if ((rc = count_varints(f.p, f.end, n, base,
							err)))
					return rc;
			} else if (f.wt == TFK_PB_VARINT) {
				++*n;
			} else {
				return tfk_pb_wt_err(&f, "Int64List.value",
						     "0 or 2", base, err);
			}
		}
	}
	return 0;
}

int tfk_feat_parse(struct tfk_feat *feat, const uint8_t *p, size_t len,
		   const uint8_t *base, struct tfk_err *err)
{
	static const char *const kinds[] = {
		NULL, "Feature.bytes_list", "Feature.float_list",
		"Feature.int64_list"
	};
	const uint8_t *end = p + len, *run = end, *pk = NULL;
	size_t n = 0, nvf = 0;
	struct tfk_pbf f;
	int kind = TFK_FEAT_NONE, rc;

	while (p < end) {
		TFK_PB_NEXT(&p, end, &f);
		if (f.num - 1 > 2)
			continue;
		if (f.wt != TFK_PB_LEN)
			return tfk_pb_wt_err(&f, kinds[f.num], "2", base, err);
		if ((int)f.num != kind) {	/* oneof: the last member wins */
			kind = (int)f.num;
			run = f.tag;
			n = nvf = 0;
		}
		if ((rc = check_list(kind, f.p, f.end, &n, &nvf, &pk, base,
				     err)))
			return rc;
	}
	feat->kind = kind;
	feat->n = n;
	feat->body = run;
	feat->body_len = (size_t)(end - run);
	feat->packed = kind == TFK_FEAT_FLOAT && nvf == 1 ? pk : NULL;
	return 0;
}

/* Make room in the scratch buffer for this record's merged values. */
static int scratch_open(struct tfk_example *ex)
{
	if (ex->scratch.len == 0 && tfk_buf_reserve(&ex->scratch, ex->total))
		return TFK_ENOMEM;
	return 0;
}

/* One map entry of Features: { string key = 1; Feature value = 2; }. */
static int parse_entry(struct tfk_example *ex, const uint8_t *p,
		       const uint8_t *end, struct tfk_err *err)
{
	const uint8_t *base = ex->base, *v = NULL;
	size_t vlen = 0, nval = 0, mstart = 0;
	struct tfk_feat feat;
	struct tfk_pbf f;
	int rc;

	feat.name = "";
	feat.name_len = 0;
	while (p < end) {
		TFK_PB_NEXT(&p, end, &f);
		if (f.num == 1) {
			if (f.wt != TFK_PB_LEN)
				return tfk_pb_wt_err(&f, "map key", "2", base,
						     err);
			feat.name = (const char *)f.p;
			feat.name_len = (size_t)f.v;
		} else if (f.num == 2) {
			if (f.wt != TFK_PB_LEN)
				return tfk_pb_wt_err(&f, "map value", "2",
						     base, err);
			/* check each part where it lies, for true offsets */
			if ((rc = tfk_feat_parse(&feat, f.p, (size_t)f.v, base,
						 err)))
				return rc;
			if (nval == 1) {
				if (scratch_open(ex))
					return tfk_errf(err, TFK_ENOMEM,
							"out of memory");
				mstart = ex->scratch.len;
				tfk_buf_add(&ex->scratch, v, vlen);
			}
			if (nval >= 1)
				tfk_buf_add(&ex->scratch, f.p, (size_t)f.v);
			v = f.p;
			vlen = (size_t)f.v;
			nval++;
		}
	}
	if (nval == 0) {
		feat.kind = TFK_FEAT_NONE;
		feat.n = 0;
		feat.body = end;
		feat.body_len = 0;
		feat.packed = NULL;
	} else if (nval > 1) {	/* merged Feature: parse the concatenation */
		if ((rc = tfk_feat_parse(&feat, ex->scratch.data + mstart,
					 ex->scratch.len - mstart, base, err)))
			return rc;
	}
	if (put_feat(ex, &feat))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	return 0;
}

void tfk_example_begin(struct tfk_example *ex, const uint8_t *buf,
		       size_t len)
{
	ex->n_feat = 0;
	ex->ht_mask = 0;
	ex->base = buf;
	ex->total = len;
	ex->scratch.len = 0;
	ex->scratch.oom = 0;
}

int tfk_example_parse_features(struct tfk_example *ex, const uint8_t *p,
			       size_t len, struct tfk_err *err)
{
	const uint8_t *end = p + len, *base = ex->base;
	struct tfk_pbf f;
	int rc;

	while (p < end) {
		TFK_PB_NEXT(&p, end, &f);
		if (f.num != 1)
			continue;
		if (f.wt != TFK_PB_LEN)
			return tfk_pb_wt_err(&f, "Features.feature", "2", base,
					     err);
		if ((rc = parse_entry(ex, f.p, f.end, err)))
			return rc;
	}
	return 0;
}

static int parse_example(struct tfk_example *ex, const uint8_t *base,
			 size_t len, struct tfk_err *err)
{
	const uint8_t *p = base, *end = base + len;
	struct tfk_pbf f;
	int rc;

	if (len > TFK_PB_MAX)
		return tfk_errf(err, TFK_ECORRUPT, "byte 0: message of %zu "
				"bytes exceeds protobuf's 2 GiB limit", len);
	while (p < end) {
		TFK_PB_NEXT(&p, end, &f);
		if (f.num != 1)
			continue;
		if (f.wt != TFK_PB_LEN)
			return tfk_pb_wt_err(&f, "Example.features", "2", base,
					     err);
		if ((rc = tfk_example_parse_features(ex, f.p, (size_t)f.v,
						     err)))
			return rc;
	}
	return 0;
}

/*
 * The layout every TensorFlow writer produces: one Features field, each
 * entry exactly key then value, each Feature one list field, floats and
 * int64s in one packed run. Decoding it needs no field dispatch, so it
 * gets its own straight-line pass. Returns 1 when buf was decoded, 0 at
 * the first byte that departs from the layout (the general pass then
 * decodes the record or reports what is wrong with it), or TFK_ENOMEM.
 */
static int fast_parse(struct tfk_example *ex, const uint8_t *p,
		      const uint8_t *end)
{
	uint64_t n;

	if (p == end)
		return 1;
	if (*p++ != 0x0a || tfk_pb_varint(&p, end, &n) ||
	    n != (uint64_t)(end - p))
		return 0;
	while (p < end) {
		const uint8_t *e_end;
		struct tfk_feat *f = next_slot(ex);

		if (!f)
			return TFK_ENOMEM;

		if (*p++ != 0x0a || tfk_pb_varint(&p, end, &n) ||
		    n > (uint64_t)(end - p))
			return 0;
		e_end = p + n;
		if (p == e_end || *p++ != 0x0a || tfk_pb_varint(&p, e_end, &n) ||
		    n > (uint64_t)(e_end - p))
			return 0;
		f->name = (const char *)p;
		f->name_len = (size_t)n;
		p += n;
		if (p == e_end || *p++ != 0x12 || tfk_pb_varint(&p, e_end, &n) ||
		    n != (uint64_t)(e_end - p))
			return 0;
		f->body = p;
		f->body_len = (size_t)n;
		f->packed = NULL;
		f->n = 0;
		f->kind = TFK_FEAT_NONE;
		if (p < e_end) {
			uint8_t t = *p++;

			if ((t != 0x0a && t != 0x12 && t != 0x1a) ||
			    tfk_pb_varint(&p, e_end, &n) ||
			    n != (uint64_t)(e_end - p))
				return 0;
			f->kind = t >> 3;
		}
		if (f->kind == TFK_FEAT_BYTES) {
			while (p < e_end) {
				if (*p++ != 0x0a || tfk_pb_varint(&p, e_end, &n) ||
				    n > (uint64_t)(e_end - p))
					return 0;
				p += n;
				f->n++;
			}
		} else if (p < e_end) {		/* one packed run */
			if (*p++ != 0x0a || tfk_pb_varint(&p, e_end, &n) ||
			    n != (uint64_t)(e_end - p))
				return 0;
			if (f->kind == TFK_FEAT_FLOAT) {
				if (n % 4)
					return 0;
				f->packed = p;
				f->n = (size_t)n / 4;
			} else {
				size_t cont = 0;

				for (; p < e_end; p++) {
					if (*p < 0x80) {
						f->n++;
						cont = 0;
					} else if (++cont == 10) {
						return 0;
					}
				}
				if (cont)
					return 0;
			}
		}
		p = e_end;
		if (commit_slot(ex))
			return TFK_ENOMEM;
	}
	return 1;
}

int tfk_payload_guess(const uint8_t *p, size_t len, const char **version,
		      size_t *version_len)
{
	const uint8_t *end = p + len, *q = p;
	struct tfk_pbf f;
	int n = 0, event = 1, seqex = 1, lists = 0;

	if (version) {
		*version = NULL;
		*version_len = 0;
	}
	while (q < end && (event || seqex)) {
		if (tfk_pb_next(&q, end, &f)) {
			event = seqex = 0;
			break;
		}
		/* Event: 1 wall_time double, 2 step int64, 3 file_version
		 * string, 4-10 messages or bytes (graph_def, summary, ...) */
		if (n == 0 && (f.num != 1 || f.wt != TFK_PB_I64))
			event = 0;
		if (n > 0 && !(f.num == 2 && f.wt == TFK_PB_VARINT) &&
		    !(f.num >= 3 && f.num <= 10 && f.wt == TFK_PB_LEN))
			event = 0;
		if (event && f.num == 3 && version) {
			*version = (const char *)f.p;
			*version_len = (size_t)(f.end - f.p);
		}
		if (!((f.num == 1 || f.num == 2) && f.wt == TFK_PB_LEN))
			seqex = 0;
		lists |= f.num == 2;
		n++;
	}
	if (event && n > 0)
		return TFK_PAYLOAD_EVENT;
	if (version) {
		*version = NULL;
		*version_len = 0;
	}
	if (seqex && lists)
		return TFK_PAYLOAD_SEQEX;
	if (len && tfk_utf8_valid(p, len)) {
		for (q = p; q < end; q++)
			if ((*q < 0x20 && *q != '\t' && *q != '\n' &&
			     *q != '\r') || *q == 0x7f)
				return TFK_PAYLOAD_OTHER;
		return TFK_PAYLOAD_TEXT;
	}
	return TFK_PAYLOAD_OTHER;
}

/*
 * After parse_example failed: name what the payload is when we can
 * tell, instead of the wire detail that only says it is not an Example.
 */
static int say_what_it_is(const uint8_t *buf, size_t len,
			  struct tfk_err *err)
{
	const char *v;
	size_t vn;

	if (!err)
		return TFK_ECORRUPT;
	switch (tfk_payload_guess(buf, len, &v, &vn)) {
	case TFK_PAYLOAD_EVENT:
		if (v && vn < 64 && tfk_utf8_valid((const uint8_t *)v, vn))
			return tfk_errf(err, TFK_ECORRUPT, "byte 0: a "
					"tensorflow.Event (TensorBoard event "
					"file, file_version \"%.*s\"), not a "
					"tf.Example", (int)vn, v);
		return tfk_errf(err, TFK_ECORRUPT, "byte 0: a tensorflow.Event "
				"(TensorBoard event file), not a tf.Example");
	case TFK_PAYLOAD_TEXT: {
		static const char h[] = " (the payload is text, not a "
					"tf.Example)";
		size_t n = strlen(err->msg);

		if (n + sizeof(h) <= sizeof(err->msg))
			memcpy(err->msg + n, h, sizeof(h));
		return TFK_ECORRUPT;
	}
	}
	return TFK_ECORRUPT;
}

int tfk_example_parse(struct tfk_example *ex, const uint8_t *buf,
		      size_t len, struct tfk_err *err)
{
	int rc;

	tfk_example_begin(ex, buf, len);
	if (len <= TFK_PB_MAX) {
		rc = fast_parse(ex, buf, buf + len);
		if (rc == 1)
			return 0;
		if (rc == TFK_ENOMEM) {
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
			goto fail;
		}
		tfk_example_begin(ex, buf, len);
	}
	rc = parse_example(ex, buf, len, err);
	if (rc == 0)
		return 0;
	if (rc == TFK_ECORRUPT)
		rc = say_what_it_is(buf, len, err);
fail:
	ex->n_feat = 0;
	ex->ht_mask = 0;
	return rc;
}

/* Accessors ------------------------------------------------------------- */

static float float_le(const uint8_t *p)
{
	uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
		     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	float v;

	memcpy(&v, &u, 4);
	return v;
}

static void copy_floats(float *out, const uint8_t *p, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(out, p, n * 4);
#else
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = float_le(p + 4 * i);
#endif
}

/*
 * The accessors walk bytes that tfk_feat_parse checked, so a failure of
 * tfk_pb_next cannot happen there; they stop at one all the same
 * rather than trust that.
 */
long tfk_feat_floats(const struct tfk_feat *feat, float *out, size_t max)
{
	const uint8_t *p = feat->body, *end = p + feat->body_len;
	struct tfk_pbf f, g;
	size_t k = 0;

	if (feat->kind != TFK_FEAT_FLOAT)
		return TFK_EINVAL;
	if (feat->packed) {
		if (max)
			copy_floats(out, feat->packed,
				    feat->n < max ? feat->n : max);
		return (long)feat->n;
	}
	while (k < max && p < end && !tfk_pb_next(&p, end, &f)) {
		const uint8_t *q = f.p;

		if (f.num != TFK_FEAT_FLOAT || f.wt != TFK_PB_LEN)
			continue;
		while (k < max && q < f.end && !tfk_pb_next(&q, f.end, &g)) {
			size_t m;

			if (g.num != 1)
				continue;
			if (g.wt == TFK_PB_I32) {
				out[k++] = float_le(g.p);
				continue;
			}
			m = (size_t)(g.end - g.p) / 4;
			if (m > max - k)
				m = max - k;
			copy_floats(out + k, g.p, m);
			k += m;
		}
	}
	return (long)feat->n;
}

long tfk_feat_int64s(const struct tfk_feat *feat, int64_t *out, size_t max)
{
	const uint8_t *p = feat->body, *end = p + feat->body_len;
	struct tfk_pbf f, g;
	size_t k = 0;

	if (feat->kind != TFK_FEAT_INT64)
		return TFK_EINVAL;
	/* One Int64List of one packed run, short: TensorFlow's layout */
	if (feat->body_len >= 4 && p[0] == 0x1a && p[1] == feat->body_len - 2 &&
	    p[2] == 0x0a && p[3] == feat->body_len - 4) {
		const uint8_t *r = p + 4;
		uint64_t v;

		for (; k < max && r < end; k++) {
			if (*r < 0x80)
				v = *r++;
			else if (tfk_pb_varint(&r, end, &v))
				break;
			out[k] = (int64_t)v;
		}
		return (long)feat->n;
	}
	while (k < max && p < end && !tfk_pb_next(&p, end, &f)) {
		const uint8_t *q = f.p;

		if (f.num != TFK_FEAT_INT64 || f.wt != TFK_PB_LEN)
			continue;
		while (k < max && q < f.end && !tfk_pb_next(&q, f.end, &g)) {
			const uint8_t *r = g.p;
			uint64_t v;

			if (g.num != 1)
				continue;
			if (g.wt == TFK_PB_VARINT) {
				out[k++] = (int64_t)g.v;
				continue;
			}
			while (k < max && r < g.end) {
				if (*r < 0x80)
					v = *r++;
				else if (tfk_pb_varint(&r, g.end, &v))
					break;
				out[k++] = (int64_t)v;
			}
		}
	}
	return (long)feat->n;
}

/*
 * Iterator state: (end of the BytesList being read) << 32 | position,
 * both offsets into the body; an end of 0 means "between lists".
 * Bodies are under 2 GiB (TFK_PB_MAX), so both fit.
 */
int tfk_feat_bytes_next(const struct tfk_feat *feat, size_t *it,
			const uint8_t **p, size_t *len)
{
	const uint8_t *b = feat->body, *end = b + feat->body_len, *q;
	size_t pos = *it & 0xffffffffu, lend = *it >> 32;
	struct tfk_pbf f;

	if (feat->kind != TFK_FEAT_BYTES)
		return 0;
	/* The first value of a BytesList that comes first: straight */
	if (*it == 0 && feat->body_len >= 4 && b[0] == 0x0a) {
		uint64_t n1, n2;

		q = b + 1;
		if (!tfk_pb_varint(&q, end, &n1) && n1 <= (uint64_t)(end - q) &&
		    n1 >= 2 && q[0] == 0x0a) {
			lend = (size_t)(q - b) + (size_t)n1;
			q++;
			if (!tfk_pb_varint(&q, b + lend, &n2) &&
			    n2 <= (uint64_t)(b + lend - q)) {
				*p = q;
				*len = (size_t)n2;
				*it = lend << 32 | (size_t)(q + n2 - b);
				return 1;
			}
		}
		lend = 0;
	}
	for (;;) {
		if (lend) {
			q = b + pos;
			while (q < b + lend && !tfk_pb_next(&q, b + lend, &f)) {
				if (f.num == 1 && f.wt == TFK_PB_LEN) {
					*p = f.p;
					*len = (size_t)(f.end - f.p);
					*it = lend << 32 | (size_t)(q - b);
					return 1;
				}
			}
			pos = lend;
			lend = 0;
		}
		q = b + pos;
		while (q < end && !tfk_pb_next(&q, end, &f)) {
			if (f.num == TFK_FEAT_BYTES && f.wt == TFK_PB_LEN) {
				lend = (size_t)(f.end - b);
				pos = (size_t)(f.p - b);
				break;
			}
		}
		if (!lend) {
			*it = feat->body_len;
			return 0;
		}
	}
}

/* Encoding -------------------------------------------------------------- */

void tfk_exb_init(struct tfk_example_builder *b)
{
	tfk_buf_init(&b->feats);
}

void tfk_exb_release(struct tfk_example_builder *b)
{
	if (b)
		tfk_buf_release(&b->feats);
}

void tfk_exb_reset(struct tfk_example_builder *b)
{
	tfk_buf_reset(&b->feats);
}

/*
 * Reserve and start one map entry: name, and a Feature whose body is a
 * field `tag` of list_len bytes (tag 0: an empty Feature). Returns where
 * the list body goes (exactly list_len bytes), or NULL out of memory.
 */
static uint8_t *entry_begin(struct tfk_example_builder *b, const char *name,
			    size_t nlen, int tag, size_t list_len)
{
	size_t feat_len = tag ? 1 + tfk_varint_size(list_len) + list_len : 0;
	size_t entry_len = 1 + tfk_varint_size(nlen) + nlen + 1 +
			   tfk_varint_size(feat_len) + feat_len;
	uint8_t *o;

	if (b->feats.len < EXB_GAP) {
		if (tfk_buf_reserve(&b->feats, EXB_GAP))
			return NULL;
		b->feats.len = EXB_GAP;
	}
	if (tfk_buf_reserve(&b->feats, 1 + tfk_varint_size(entry_len) + entry_len))
		return NULL;
	o = b->feats.data + b->feats.len;
	*o++ = 1 << 3 | TFK_PB_LEN;		/* Features.feature */
	o = tfk_varint_put(o, entry_len);
	*o++ = 1 << 3 | TFK_PB_LEN;		/* key */
	o = tfk_varint_put(o, nlen);
	if (nlen)
		memcpy(o, name, nlen);
	o += nlen;
	*o++ = 2 << 3 | TFK_PB_LEN;		/* value */
	o = tfk_varint_put(o, feat_len);
	if (tag) {
		*o++ = (uint8_t)(tag << 3 | TFK_PB_LEN);
		o = tfk_varint_put(o, list_len);
	}
	b->feats.len = (size_t)(o - b->feats.data) + list_len;
	return o;
}

void tfk_exb_add_bytes(struct tfk_example_builder *b, const char *name,
		       const uint8_t *const *vals, const size_t *lens, size_t n)
{
	size_t i, list_len = 0;
	uint8_t *o;

	for (i = 0; i < n; i++)
		list_len += 1 + tfk_varint_size(lens[i]) + lens[i];
	o = entry_begin(b, name, strlen(name), TFK_FEAT_BYTES, list_len);
	if (!o)
		return;
	for (i = 0; i < n; i++) {
		*o++ = 1 << 3 | TFK_PB_LEN;
		o = tfk_varint_put(o, lens[i]);
		if (lens[i])
			memcpy(o, vals[i], lens[i]);
		o += lens[i];
	}
}

void tfk_exb_add_bytes1(struct tfk_example_builder *b, const char *name,
			const void *val, size_t len)
{
	const uint8_t *v = val;

	tfk_exb_add_bytes(b, name, &v, &len, 1);
}

void tfk_exb_add_floats(struct tfk_example_builder *b, const char *name,
			const float *vals, size_t n)
{
	size_t list_len = n ? 1 + tfk_varint_size(4 * (uint64_t)n) + 4 * n : 0;
	uint8_t *o = entry_begin(b, name, strlen(name), TFK_FEAT_FLOAT,
				 list_len);
	size_t i;

	if (!o || !n)
		return;
	*o++ = 1 << 3 | TFK_PB_LEN;
	o = tfk_varint_put(o, 4 * (uint64_t)n);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	(void)i;
	memcpy(o, vals, 4 * n);
#else
	for (i = 0; i < n; i++) {
		uint32_t u;

		memcpy(&u, &vals[i], 4);
		o[4 * i] = (uint8_t)u;
		o[4 * i + 1] = (uint8_t)(u >> 8);
		o[4 * i + 2] = (uint8_t)(u >> 16);
		o[4 * i + 3] = (uint8_t)(u >> 24);
	}
#endif
}

void tfk_exb_add_int64s(struct tfk_example_builder *b, const char *name,
			const int64_t *vals, size_t n)
{
	size_t i, payload = 0, list_len;
	uint8_t *o;

	for (i = 0; i < n; i++)
		payload += tfk_varint_size((uint64_t)vals[i]);
	list_len = n ? 1 + tfk_varint_size(payload) + payload : 0;
	o = entry_begin(b, name, strlen(name), TFK_FEAT_INT64, list_len);
	if (!o || !n)
		return;
	*o++ = 1 << 3 | TFK_PB_LEN;
	o = tfk_varint_put(o, payload);
	for (i = 0; i < n; i++)
		o = tfk_varint_put(o, (uint64_t)vals[i]);
}

void tfk_exb_add_none(struct tfk_example_builder *b, const char *name)
{
	entry_begin(b, name, strlen(name), 0, 0);
}

void tfk_exb_add_feat_as(struct tfk_example_builder *b, const char *name,
			 size_t name_len, const struct tfk_feat *f)
{
	size_t nlen = 1 + tfk_varint_size(name_len) + name_len;
	size_t entry_len = nlen + 1 + tfk_varint_size(f->body_len) + f->body_len;
	uint8_t *o;

	/* The body is a whole Feature already: write the entry by hand
	 * rather than through entry_begin's list framing. */
	if (b->feats.len < EXB_GAP) {
		if (tfk_buf_reserve(&b->feats, EXB_GAP))
			return;
		b->feats.len = EXB_GAP;
	}
	if (tfk_buf_reserve(&b->feats, 1 + tfk_varint_size(entry_len) + entry_len))
		return;
	o = b->feats.data + b->feats.len;
	*o++ = 1 << 3 | TFK_PB_LEN;
	o = tfk_varint_put(o, entry_len);
	*o++ = 1 << 3 | TFK_PB_LEN;
	o = tfk_varint_put(o, name_len);
	if (name_len)
		memcpy(o, name, name_len);
	o += name_len;
	*o++ = 2 << 3 | TFK_PB_LEN;
	o = tfk_varint_put(o, f->body_len);
	if (f->body_len)
		memcpy(o, f->body, f->body_len);
	o += f->body_len;
	b->feats.len = (size_t)(o - b->feats.data);
}

void tfk_exb_add_feat(struct tfk_example_builder *b, const struct tfk_feat *f)
{
	tfk_exb_add_feat_as(b, f->name, f->name_len, f);
}

int tfk_exb_finish(struct tfk_example_builder *b, const uint8_t **p,
		   size_t *len, struct tfk_err *err)
{
	size_t body, h;
	uint8_t *o;

	if (b->feats.len < EXB_GAP && !b->feats.oom &&
	    !tfk_buf_reserve(&b->feats, EXB_GAP))
		b->feats.len = EXB_GAP;
	if (!b->feats.oom)
		tfk_buf_reserve(&b->feats, TFK_EXB_ROOM_AFTER);
	if (!tfk_buf_ok(&b->feats))
		return tfk_errf(err, TFK_ENOMEM, "out of memory building an "
				"example");
	body = b->feats.len - EXB_GAP;
	h = 1 + tfk_varint_size(body);
	o = b->feats.data + EXB_GAP - h;
	*p = o;
	*o++ = 1 << 3 | TFK_PB_LEN;		/* Example.features */
	tfk_varint_put(o, body);
	*len = h + body;
	return 0;
}
