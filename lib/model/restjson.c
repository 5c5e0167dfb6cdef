/*
 * restjson.c - TF Serving's REST JSON <-> tensors (see restjson.h).
 *
 * Parsing is util/jdoc's (one arena per request, exact fast decimal
 * conversion), with the bare NaN, Infinity and -Infinity tokens TF
 * Serving's rapidjson accepts.
 *
 * Decoding follows TF Serving's json_tensor.cc rules (shape from the
 * first element of every list, each list then checked against it,
 * values at the leaf level only), written directly into a heap tensor
 * of the signature's dtype rather than through a TensorProto. Rejected:
 * truncating out-of-range integers as TF Serving's int_val does; an
 * error is more useful than a wrapped value.
 *
 * Encoding writes text by hand into a tfk_buf (NaN, and floats in TF
 * Serving's shortest-then-max_digits10 form).
 */
#include "model/restjson.h"

#include "example/example.h"
#include "util/alloc.h"
#include "util/fmtg.h"
#include "util/jdoc.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int oom(struct tfk_err *err)
{
	return tfk_errf(err, TFK_ENOMEM, "out of memory");
}

/* Parsing ---------------------------------------------------------------- */

#define IS(v, t) tfk_jd_is(v, TFK_JD_##t)
#define IS_BOOL(v) (IS(v, TRUE) || IS(v, FALSE))

static void free_doc(struct tfk_jd_doc *doc)
{
	tfk_jd_free(doc);
	tfk_free(doc);
}

void tfk_rj_release(struct tfk_rj_request *rq)
{
	if (!rq)
		return;
	tfk_free(rq->signature_name);
	free_doc(rq->doc);
	memset(rq, 0, sizeof(*rq));
}

/* Parse body[0..n) into *doc (heap, NULL if none could be had: free it
 * also after a failure), with the bare non-finite tokens. */
static int load_doc(struct tfk_jd_doc **doc, const char *body, size_t n,
		    struct tfk_err *err)
{
	int rc;

	*doc = tfk_calloc(1, sizeof(**doc));
	if (!*doc)
		return oom(err);
	if (n == 0)
		return tfk_errf(err, TFK_EINVAL, "JSON parse error: the "
				"document is empty");
	if ((rc = tfk_jd_parse(*doc, body, n, TFK_JD_NONFINITE, err)))
		return rc;
	if (!IS(&(*doc)->root, OBJECT))
		return tfk_errf(err, TFK_EINVAL, "request: expected a JSON "
				"object");
	return 0;
}

/* The optional "signature_name" of doc into *name. */
static int get_sig_name(char **name, const struct tfk_jd *doc,
			struct tfk_err *err)
{
	const struct tfk_jd *sig = tfk_jd_get(doc, "signature_name");

	if (!sig)
		return 0;
	if (!IS(sig, STRING) || strlen(sig->u.s) != sig->n)
		return tfk_errf(err, TFK_EINVAL, "request: "
				"'signature_name' must be a string");
	*name = tfk_strdup(sig->u.s);
	return *name ? 0 : oom(err);
}

int tfk_rj_parse(struct tfk_rj_request *rq, const char *body, size_t n,
		 struct tfk_err *err)
{
	struct tfk_jd_doc *d;
	const struct tfk_jd *doc, *ins, *inp;
	int rc;

	memset(rq, 0, sizeof(*rq));
	rc = load_doc(&d, body, n, err);
	rq->doc = d;
	if (rc)
		return rc;
	doc = &d->root;
	if ((rc = get_sig_name(&rq->signature_name, doc, err)))
		return rc;
	ins = tfk_jd_get(doc, "instances");
	inp = tfk_jd_get(doc, "inputs");
	if (ins && inp)
		return tfk_errf(err, TFK_EINVAL, "request: expected only one "
				"of 'inputs' or 'instances'");
	if (!ins && !inp)
		return tfk_errf(err, TFK_EINVAL, "request: missing 'inputs' "
				"or 'instances' key");
	if (ins && (!IS(ins, ARRAY) || !ins->n))
		return tfk_errf(err, TFK_EINVAL, "request: 'instances' must "
				"be a non-empty list");
	rq->format = ins ? TFK_RJ_ROW : TFK_RJ_COLUMNAR;
	return 0;
}

/* Decoding --------------------------------------------------------------- */

/*
 * The place of a value in the request, for messages: "inputs.x[1][0]",
 * a chain of steps up to a root ("inputs"), written out only when a
 * message needs it (where_str): formatting every element's place cost
 * a fifth of a request's time.
 */
struct where {
	const struct where *up;	/* NULL: s is the root's name */
	const char *key;	/* a member's key, or NULL: element i */
	long i;
	char s[256];		/* the place, once where_str wrote it */
};

#define WHERE_ROOT(name) { NULL, NULL, 0, name }

static void where_sub(struct where *w, const struct where *up, long i,
		      const char *key)
{
	w->up = up;
	w->key = key;
	w->i = i;
}

static const char *where_str(const struct where *cw)
{
	struct where *w = (struct where *)cw;	/* always a local's */

	if (!w->up)
		return w->s;
	if (w->key)
		snprintf(w->s, sizeof(w->s), "%.180s.%.60s",
			 where_str(w->up), w->key);
	else
		snprintf(w->s, sizeof(w->s), "%.180s[%ld]",
			 where_str(w->up), w->i);
	return w->s;
}

/* v is a bare NaN, Infinity or -Infinity token. */
static int is_mark(const struct tfk_jd *v)
{
	return IS(v, REAL) && v->bare;
}

/* A member of object v given again later (jansson kept the last). */
static int shadowed(const struct tfk_jd *v, uint32_t k)
{
	uint32_t j;

	for (j = k + 1; j < v->n; j++)
		if (!strcmp(tfk_jd_key(v, j), tfk_jd_key(v, k)))
			return 1;
	return 0;
}

static int is_b64_object(const struct tfk_jd *v)
{
	const struct tfk_jd *b = tfk_jd_get(v, "b64");

	return IS(v, OBJECT) && v->n == 1 &&
		IS(b, STRING);
}

/* A short picture of v for messages. */
static const char *show(const struct tfk_jd *v, char *buf, size_t n)
{
	if (is_mark(v))
		snprintf(buf, n, "%s", isnan(v->u.d) ? "NaN" :
			 v->u.d > 0 ? "Infinity" : "-Infinity");
	else if (IS(v, STRING))
		snprintf(buf, n, "string \"%.40s%s\"", v->u.s,
			 v->n > 40 ? "..." : "");
	else if (IS(v, INT))
		snprintf(buf, n, "%" PRId64, v->u.i);
	else if (IS(v, REAL))
		snprintf(buf, n, "%.17g", v->u.d);
	else if (IS_BOOL(v))
		snprintf(buf, n, "%s", IS(v, TRUE) ? "true" : "false");
	else if (IS(v, NULL))
		snprintf(buf, n, "null");
	else if (IS(v, OBJECT))
		snprintf(buf, n, "an object");
	else
		snprintf(buf, n, "a list");
	return buf;
}

static int b64_val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Standard base64 of s[0..n) into o (room for n bytes); -1 if invalid.
 * Padding is optional, as absl::Base64Unescape's is. */
static long b64_decode(const char *s, size_t n, uint8_t *o)
{
	size_t i, k = 0;
	uint32_t acc = 0;
	int bits = 0, pad = 0;

	for (i = 0; i < n; i++) {
		int v;

		if (s[i] == '=') {
			pad++;
			continue;
		}
		if (pad || (v = b64_val((unsigned char)s[i])) < 0)
			return -1;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			o[k++] = (uint8_t)(acc >> bits);
		}
	}
	if (bits >= 6 || pad > 2 || (pad && (n % 4)) ||
	    (acc & ((1u << bits) - 1)))
		return -1;
	return (long)k;
}

/* One leaf value into element i of t. */
static int put_value(struct tfk_tensor *t, int64_t i, const struct tfk_jd *v,
		     const struct where *w, struct tfk_err *err)
{
	enum tfk_dtype dt = t->dtype;
	char buf[96];

	if (dt == TFK_DT_STRING) {
		const struct tfk_jd *b;
		uint8_t *o;
		long m;
		int rc;

		if (IS(v, STRING))
			return tfk_tensor_set_str(t, i, v->u.s, v->n, err);
		if (!is_b64_object(v))
			return tfk_errf(err, TFK_EINVAL, "%s: expected string "
					"or {\"b64\": ...}, got %s", where_str(w),
					show(v, buf, sizeof(buf)));
		b = tfk_jd_get(v, "b64");
		o = tfk_malloc(b->n + 1);
		if (!o)
			return oom(err);
		m = b64_decode(b->u.s, b->n, o);
		if (m < 0) {
			tfk_free(o);
			return tfk_errf(err, TFK_EINVAL, "%s: invalid base64 "
					"in {\"b64\": ...}", where_str(w));
		}
		rc = tfk_tensor_set_str(t, i, o, (size_t)m, err);
		tfk_free(o);
		return rc;
	}
	if (dt == TFK_DT_BOOL) {
		if (!IS_BOOL(v))
			return tfk_errf(err, TFK_EINVAL, "%s: expected bool, "
					"got %s", where_str(w), show(v, buf,
							     sizeof(buf)));
		((uint8_t *)t->data)[i] = IS(v, TRUE);
		return 0;
	}
	if (dt == TFK_DT_FLOAT || dt == TFK_DT_DOUBLE) {
		double x;

		if (is_mark(v)) {
			x = v->u.d;
		} else if (IS(v, INT)) {
			int64_t q = v->u.i;
			int64_t lim = dt == TFK_DT_FLOAT ?
				((int64_t)1 << 24) - 1 :
				((int64_t)1 << 53) - 1;

			if (q > lim || q < -lim)
				return tfk_errf(err, TFK_EINVAL, "%s: %s cannot "
						"be %s without loss of "
						"precision", where_str(w),
						show(v, buf, sizeof(buf)),
						tfk_dtype_name(dt));
			x = (double)q;
		} else if (IS(v, REAL)) {
			x = v->u.d;
			if (dt == TFK_DT_FLOAT && fabs(x) > FLT_MAX)
				return tfk_errf(err, TFK_EINVAL, "%s: %s cannot "
						"be float32 without loss of "
						"precision", where_str(w),
						show(v, buf, sizeof(buf)));
		} else {
			return tfk_errf(err, TFK_EINVAL, "%s: expected %s, got "
					"%s", where_str(w), tfk_dtype_name(dt),
					show(v, buf, sizeof(buf)));
		}
		if (dt == TFK_DT_FLOAT)
			((float *)t->data)[i] = (float)x;
		else
			((double *)t->data)[i] = x;
		return 0;
	}
	{
		int64_t q, lo, hi;

		if (!IS(v, INT))
			return tfk_errf(err, TFK_EINVAL, "%s: expected %s, got "
					"%s", where_str(w), tfk_dtype_name(dt),
					show(v, buf, sizeof(buf)));
		q = v->u.i;
		switch (dt) {
		case TFK_DT_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
		case TFK_DT_UINT8: lo = 0; hi = UINT8_MAX; break;
		case TFK_DT_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
		case TFK_DT_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
		default: lo = INT64_MIN; hi = INT64_MAX;
		}
		if (q < lo || q > hi)
			return tfk_errf(err, TFK_EINVAL, "%s: %s is out of "
					"range for %s", where_str(w),
					show(v, buf, sizeof(buf)),
					tfk_dtype_name(dt));
		switch (dt) {
		case TFK_DT_INT8: ((int8_t *)t->data)[i] = (int8_t)q; break;
		case TFK_DT_UINT8: ((uint8_t *)t->data)[i] = (uint8_t)q; break;
		case TFK_DT_INT16: ((int16_t *)t->data)[i] = (int16_t)q; break;
		case TFK_DT_INT32: ((int32_t *)t->data)[i] = (int32_t)q; break;
		default: ((int64_t *)t->data)[i] = q;
		}
		return 0;
	}
}

static int dtype_ok(enum tfk_dtype dt)
{
	switch (dt) {
	case TFK_DT_FLOAT: case TFK_DT_DOUBLE: case TFK_DT_INT32:
	case TFK_DT_UINT8: case TFK_DT_INT16: case TFK_DT_INT8:
	case TFK_DT_STRING: case TFK_DT_INT64: case TFK_DT_BOOL:
		return 1;
	default:
		return 0;
	}
}

/* The shape of v as its first elements give it (TF Serving's rule). */
static int shape_of(const struct tfk_jd *v, int *rank, int64_t *dims,
		    const struct where *w, struct tfk_err *err)
{
	*rank = 0;
	while (IS(v, ARRAY)) {
		if (*rank == TFK_MAX_RANK)
			return tfk_errf(err, TFK_EINVAL, "%s: lists nested "
					"deeper than %d", where_str(w), TFK_MAX_RANK);
		dims[(*rank)++] = (int64_t)v->n;
		if (!v->n)
			break;
		v = &v->u.items[0];
	}
	return 0;
}

/* Fill t from element *at on with v at level (rank levels below it). */
static int fill(struct tfk_tensor *t, int64_t *at, const struct tfk_jd *v,
		int level, int rank, const int64_t *dims,
		const struct where *w, struct tfk_err *err)
{
	struct where sub;
	size_t i;
	int rc;

	if (!IS(v, ARRAY)) {
		if (level != rank)
			return tfk_errf(err, TFK_EINVAL, "%s: a value at level "
					"%d, expected lists down to level %d",
					where_str(w), level, rank);
		return put_value(t, (*at)++, v, w, err);
	}
	if (level >= rank)
		return tfk_errf(err, TFK_EINVAL, "%s: a list at level %d, "
				"expected a value", where_str(w), level);
	if ((int64_t)v->n != dims[level])
		return tfk_errf(err, TFK_EINVAL, "%s: expected %" PRId64
				" values at level %d, got %" PRIu32, where_str(w),
				dims[level], level, v->n);
	/* the common case inline: a row of float32 from decimals in range
	 * (anything else, and every error, through put_value) */
	if (level == rank - 1 && t->dtype == TFK_DT_FLOAT) {
		float *o = (float *)t->data + *at;

		for (i = 0; i < v->n; i++) {
			const struct tfk_jd *e = &v->u.items[i];

			if (IS(e, REAL) && fabs(e->u.d) <= FLT_MAX) {
				o[i] = (float)e->u.d;
				continue;
			}
			where_sub(&sub, w, (long)i, NULL);
			*at += (int64_t)i;
			rc = put_value(t, *at, e, &sub, err);
			*at -= (int64_t)i;
			if (rc)
				return rc;
		}
		*at += (int64_t)v->n;
		return 0;
	}
	for (i = 0; i < v->n; i++) {
		where_sub(&sub, w, (long)i, NULL);
		rc = fill(t, at, &v->u.items[i], level + 1, rank, dims,
			  &sub, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* Columnar: one input's whole value. */
static int decode_one(struct tfk_tensor *t, enum tfk_dtype dt,
		      const struct tfk_jd *v, const struct where *w,
		      struct tfk_err *err)
{
	int64_t dims[TFK_MAX_RANK], at = 0;
	int rank, rc;

	if ((rc = shape_of(v, &rank, dims, w, err)))
		return rc;
	if ((rc = tfk_tensor_init(t, dt, rank, dims, err)))
		return tfk_err_prefix(err, "%s", where_str(w));
	return fill(t, &at, v, 0, rank, dims, w, err);
}

static int find_input(const struct tfk_sv_signature *sig, const char *key)
{
	int i;

	for (i = 0; i < sig->n_inputs; i++)
		if (!strcmp(sig->inputs[i].key, key))
			return i;
	return -1;
}

static int bad_key(const struct tfk_sv_signature *sig, const char *what,
		   const char *key, struct tfk_err *err)
{
	char list[256];
	size_t o = 0;
	int i;

	list[0] = 0;
	for (i = 0; i < sig->n_inputs && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s",
				      i ? ", " : "", sig->inputs[i].key);
	return tfk_errf(err, TFK_EINVAL, "%s: '%s' is not an input of the "
			"signature; inputs: %s", what, key, list);
}

static int decode_columnar(const struct tfk_jd *v,
			   const struct tfk_sv_signature *sig,
			   struct tfk_tensor *in, struct tfk_err *err)
{
	struct where w = WHERE_ROOT("inputs"), sub;
	int i, rc;

	if (!IS(v, OBJECT) || is_b64_object(v)) {
		if (sig->n_inputs != 1)
			return tfk_errf(err, TFK_EINVAL, "inputs: a plain "
					"value or list, but the signature has "
					"%d inputs: expected an object with "
					"one member per input", sig->n_inputs);
		return decode_one(&in[0], sig->inputs[0].dtype, v, &w, err);
	}
	for (i = 0; i < sig->n_inputs; i++) {
		const struct tfk_jd *x = tfk_jd_get(v, sig->inputs[i].key);

		if (!x)
			return tfk_errf(err, TFK_EINVAL, "inputs: missing "
					"input '%s'", sig->inputs[i].key);
		where_sub(&sub, &w, 0, sig->inputs[i].key);
		rc = decode_one(&in[i], sig->inputs[i].dtype, x, &sub, err);
		if (rc)
			return rc;
	}
	return 0;
}

static int is_row_object(const struct tfk_jd *v)
{
	return IS(v, OBJECT) && !is_b64_object(v);
}

static int decode_rows(const struct tfk_jd *rows,
		       const struct tfk_sv_signature *sig,
		       struct tfk_tensor *in, struct tfk_err *err)
{
	size_t n = rows->n, r;
	int objects = is_row_object(&rows->u.items[0]);
	int n_in = sig->n_inputs, i, rc = 0;
	struct where base = WHERE_ROOT("instances"), w, sub;
	int64_t (*dims)[TFK_MAX_RANK];
	int *rank;
	int64_t *at;

	if (!objects && n_in != 1)
		return tfk_errf(err, TFK_EINVAL, "instances: a plain list, "
				"but the signature has %d inputs: expected a "
				"list of objects with one member per input",
				n_in);
	dims = tfk_calloc((size_t)n_in, sizeof(*dims));
	rank = tfk_calloc((size_t)n_in, sizeof(*rank));
	at = tfk_calloc((size_t)n_in, sizeof(*at));
	if (!dims || !rank || !at) {
		rc = oom(err);
		goto out;
	}
	for (r = 0; r < n && !rc; r++) {
		const struct tfk_jd *row = &rows->u.items[r];

		where_sub(&w, &base, (long)r, NULL);
		if (objects != is_row_object(row)) {
			rc = tfk_errf(err, TFK_EINVAL, "%s: expected %s, as "
				      "instances[0]", where_str(&w), objects ?
				      "an object" : "a value or list, not an "
				      "object");
			break;
		}
		if (objects) {
			uint32_t k;

			for (k = 0; k < row->n; k++)
				if (find_input(sig, tfk_jd_key(row, k)) < 0) {
					rc = bad_key(sig, where_str(&w),
						     tfk_jd_key(row, k), err);
					goto out;
				}
		}
		for (i = 0; i < n_in && !rc; i++) {
			const char *key = sig->inputs[i].key;
			const struct tfk_jd *x = objects ?
				tfk_jd_get(row, key) : row;
			int64_t d[TFK_MAX_RANK], full[TFK_MAX_RANK + 1];
			int rk, k;
			char a[128], b[128];

			if (!x) {
				rc = tfk_errf(err, TFK_EINVAL, "%s: missing "
					      "input '%s'", where_str(&w), key);
				break;
			}
			if (objects)
				where_sub(&sub, &w, 0, key);
			else
				sub = w;
			if ((rc = shape_of(x, &rk, d, &sub, err)))
				break;
			if (r == 0) {
				rank[i] = rk;
				memcpy(dims[i], d, sizeof(d));
				if (rk == TFK_MAX_RANK) {
					rc = tfk_errf(err, TFK_EINVAL, "%s: "
						      "lists nested deeper "
						      "than %d", where_str(&sub),
						      TFK_MAX_RANK - 1);
					break;
				}
				full[0] = (int64_t)n;
				for (k = 0; k < rk; k++)
					full[k + 1] = d[k];
				rc = tfk_tensor_init(&in[i],
						     sig->inputs[i].dtype,
						     rk + 1, full, err);
				if (rc) {
					tfk_err_prefix(err, "instances");
					break;
				}
			} else if (!tfk_shape_equal(rk, d, rank[i], dims[i])) {
				rc = tfk_errf(err, TFK_EINVAL, "%s: expected "
					      "shape %s, got %s as in "
					      "instances[0]", where_str(&sub),
					      tfk_shape_str(rank[i], dims[i],
							    a, sizeof(a)),
					      tfk_shape_str(rk, d, b,
							    sizeof(b)));
				break;
			}
			rc = fill(&in[i], &at[i], x, 0, rank[i], dims[i],
				  &sub, err);
		}
	}
out:
	tfk_free(dims);
	tfk_free(rank);
	tfk_free(at);
	return rc;
}

int tfk_rj_inputs(const struct tfk_rj_request *rq,
		  const struct tfk_sv_signature *sig, struct tfk_tensor *in,
		  struct tfk_err *err)
{
	const struct tfk_jd *doc = rq->doc;
	int i, rc;

	for (i = 0; i < sig->n_inputs; i++)
		memset(&in[i], 0, sizeof(in[i]));
	if (!doc || !rq->format)
		return tfk_errf(err, TFK_EINVAL, "request: not parsed");
	if (sig->n_inputs == 0)
		return tfk_errf(err, TFK_EINVAL, "signature '%s' has no "
				"inputs", sig->key);
	for (i = 0; i < sig->n_inputs; i++)
		if (!dtype_ok(sig->inputs[i].dtype))
			return tfk_errf(err, TFK_EINVAL, "input '%s': %s "
					"values cannot be given in JSON",
					sig->inputs[i].key,
					tfk_dtype_name(sig->inputs[i].dtype));
	if (rq->format == TFK_RJ_ROW)
		rc = decode_rows(tfk_jd_get(doc, "instances"), sig, in,
				 err);
	else
		rc = decode_columnar(tfk_jd_get(doc, "inputs"), sig, in,
				     err);
	if (rc)
		for (i = 0; i < sig->n_inputs; i++)
			tfk_tensor_release(&in[i]);
	return rc;
}

/* Encoding --------------------------------------------------------------- */

/* TF Serving's WriteDecimal: %g if it reads back, else max_digits10;
 * ".0" on whole numbers. */
static void put_decimal(struct tfk_buf *b, double v, int is_float)
{
	char s[TFK_FMT_MAX];

	if (isnan(v)) {
		tfk_buf_adds(b, "NaN");
		return;
	}
	if (isinf(v)) {
		tfk_buf_adds(b, v < 0 ? "-Infinity" : "Infinity");
		return;
	}
	tfk_fmt_g(s, v, 6);	/* "%g", printf's bytes */
	if (is_float ? strtof(s, NULL) != (float)v : strtod(s, NULL) != v)
		tfk_fmt_g(s, v, is_float ? 9 : 17);
	tfk_buf_adds(b, s);
	if (!strchr(s, '.') && !strchr(s, 'e'))
		tfk_buf_adds(b, ".0");
}

static int put_elem(struct tfk_buf *b, const struct tfk_tensor *t, int64_t i,
		    int as_bytes)
{
	switch (t->dtype) {
	case TFK_DT_FLOAT:
		put_decimal(b, ((const float *)t->data)[i], 1);
		break;
	case TFK_DT_DOUBLE:
		put_decimal(b, ((const double *)t->data)[i], 0);
		break;
	case TFK_DT_HALF:
		put_decimal(b, tfk_half_to_float(((const uint16_t *)t->data)[i]),
			    1);
		break;
	case TFK_DT_INT8:
		tfk_buf_addf(b, "%d", ((const int8_t *)t->data)[i]);
		break;
	case TFK_DT_UINT8:
		tfk_buf_addf(b, "%u", ((const uint8_t *)t->data)[i]);
		break;
	case TFK_DT_INT16:
		tfk_buf_addf(b, "%d", ((const int16_t *)t->data)[i]);
		break;
	case TFK_DT_INT32:
		tfk_buf_addf(b, "%" PRId32, ((const int32_t *)t->data)[i]);
		break;
	case TFK_DT_INT64:
		tfk_buf_addf(b, "%" PRId64, ((const int64_t *)t->data)[i]);
		break;
	case TFK_DT_BOOL:
		tfk_buf_adds(b, ((const uint8_t *)t->data)[i] ? "true" :
			     "false");
		break;
	case TFK_DT_STRING: {
		struct tfk_str s = tfk_tensor_str(t, i);

		if (!s.ptr)
			s.ptr = "";
		if (as_bytes || !tfk_utf8_valid((const uint8_t *)s.ptr,
						s.len)) {
			tfk_buf_adds(b, "{\"b64\":\"");
			tfk_buf_add_base64(b, (const uint8_t *)s.ptr, s.len);
			tfk_buf_adds(b, "\"}");
		} else {
			tfk_buf_add_json_str(b, s.ptr, s.len);
		}
		break;
	}
	default:
		return -1;
	}
	return 0;
}

/* Elements [*at, ...) of t as nested lists over dims from..rank. */
static int put_values(struct tfk_buf *b, const struct tfk_tensor *t,
		      int from, int64_t *at, int as_bytes)
{
	int64_t k;

	if (from >= t->rank)
		return put_elem(b, t, (*at)++, as_bytes);
	tfk_buf_addc(b, '[');
	for (k = 0; k < t->shape[from]; k++) {
		if (k)
			tfk_buf_addc(b, ',');
		if (put_values(b, t, from + 1, at, as_bytes))
			return -1;
	}
	tfk_buf_addc(b, ']');
	return 0;
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && !strcmp(s + n - k, suf);
}

static int key_order(const char *const *keys, int n, int *ord)
{
	int i, j;

	for (i = 0; i < n; i++) {
		int v = i;

		for (j = i; j > 0 && strcmp(keys[ord[j - 1]], keys[v]) > 0;
		     j--)
			ord[j] = ord[j - 1];
		ord[j] = v;
	}
	return 0;
}

/* The outputs in key order (ord): one output's value alone, several as
 * {"key": value, ...}; row: the next row of each (at[] advance). */
static void put_outputs(struct tfk_buf *b, int n, const char *const *keys,
			const int *ord, const struct tfk_tensor *const *out,
			int row, int64_t *at)
{
	int i;

	if (n > 1)
		tfk_buf_addc(b, '{');
	for (i = 0; i < n; i++) {
		const char *k = keys[ord[i]];

		if (n > 1) {
			if (i)
				tfk_buf_addc(b, ',');
			tfk_buf_add_json_str(b, k, strlen(k));
			tfk_buf_addc(b, ':');
		}
		put_values(b, out[ord[i]], row, &at[i],
			   ends_with(k, "_bytes"));
	}
	if (n > 1)
		tfk_buf_addc(b, '}');
}

int tfk_rj_encode(struct tfk_buf *b, enum tfk_rj_format f, int n,
		  const char *const *keys, const struct tfk_tensor *const *out,
		  struct tfk_err *err)
{
	int *ord, i, rc = 0;
	int64_t *at = NULL, rows = -1, r;

	if (n <= 0)
		return tfk_errf(err, TFK_EINVAL, "the signature has no "
				"outputs");
	ord = tfk_calloc((size_t)n, sizeof(*ord));
	at = tfk_calloc((size_t)n, sizeof(*at));
	if (!ord || !at) {
		rc = oom(err);
		goto out;
	}
	key_order(keys, n, ord);
	for (i = 0; i < n; i++) {
		const struct tfk_tensor *t = out[ord[i]];

		if (t->dtype != TFK_DT_STRING && t->dtype != TFK_DT_HALF &&
		    !dtype_ok(t->dtype)) {
			rc = tfk_errf(err, TFK_EINVAL, "output '%s': %s values "
				      "cannot be written as JSON", keys[ord[i]],
				      tfk_dtype_name(t->dtype));
			goto out;
		}
		if (f != TFK_RJ_ROW)
			continue;
		if (t->rank == 0) {
			rc = tfk_errf(err, TFK_EINVAL, "output '%s' is a "
				      "scalar: the row format needs a first "
				      "dimension (use \"inputs\")",
				      keys[ord[i]]);
			goto out;
		}
		if (rows >= 0 && t->shape[0] != rows) {
			rc = tfk_errf(err, TFK_EINVAL, "output '%s' has %"
				      PRId64 " rows, output '%s' %" PRId64,
				      keys[ord[i]], t->shape[0],
				      keys[ord[0]], rows);
			goto out;
		}
		rows = t->shape[0];
	}
	if (f == TFK_RJ_ROW) {
		tfk_buf_adds(b, "{\"predictions\":[");
		for (r = 0; r < rows; r++) {
			if (r)
				tfk_buf_addc(b, ',');
			put_outputs(b, n, keys, ord, out, 1, at);
		}
		tfk_buf_adds(b, "]}");
	} else {
		tfk_buf_adds(b, "{\"outputs\":");
		put_outputs(b, n, keys, ord, out, 0, at);
		tfk_buf_addc(b, '}');
	}
	if (!tfk_buf_ok(b))
		rc = oom(err);
out:
	tfk_free(ord);
	tfk_free(at);
	return rc;
}

void tfk_rj_error(struct tfk_buf *b, const char *msg)
{
	size_t n = tfk_utf8_prefix((const uint8_t *)msg, strlen(msg));

	tfk_buf_adds(b, "{\"error\":");
	tfk_buf_add_json_str(b, msg, n);
	tfk_buf_addc(b, '}');
}

/* Metadata --------------------------------------------------------------- */

static void put_str(struct tfk_buf *b, const char *s)
{
	s = s ? s : "";
	tfk_buf_add_json_str(b, s, tfk_utf8_prefix((const uint8_t *)s,
						   strlen(s)));
}

static void put_tensor_infos(struct tfk_buf *b,
			     const struct tfk_sv_tensor *v, int n)
{
	int i, d;

	tfk_buf_addc(b, '{');
	for (i = 0; i < n; i++) {
		if (i)
			tfk_buf_addc(b, ',');
		put_str(b, v[i].key);
		tfk_buf_adds(b, ":{\"dtype\":");
		put_str(b, tfk_dtype_tf_name(v[i].dtype));
		tfk_buf_adds(b, ",\"tensor_shape\":{\"dim\":[");
		for (d = 0; d < v[i].rank; d++)
			tfk_buf_addf(b, "%s{\"size\":\"%" PRId64 "\","
				     "\"name\":\"\"}", d ? "," : "",
				     v[i].shape[d]);
		tfk_buf_addf(b, "],\"unknown_rank\":%s},\"name\":",
			     v[i].rank < 0 ? "true" : "false");
		put_str(b, v[i].name);
		tfk_buf_addc(b, '}');
	}
	tfk_buf_addc(b, '}');
}

static int sig_cmp(const void *a, const void *b)
{
	const struct tfk_sv_signature *const *x = a, *const *y = b;

	return strcmp((*x)->key, (*y)->key);
}

void tfk_rj_metadata(struct tfk_buf *b, const char *name, int64_t version,
		     const struct tfk_servable *s)
{
	int n = tfk_servable_n_signatures(s), i;
	const struct tfk_sv_signature **v = tfk_calloc((size_t)n + 1,
						       sizeof(*v));

	if (!v) {
		b->oom = 1;
		return;
	}
	for (i = 0; i < n; i++)
		v[i] = tfk_servable_signature(s, i);
	qsort(v, (size_t)n, sizeof(*v), sig_cmp);
	tfk_buf_adds(b, "{\"model_spec\":{\"name\":");
	put_str(b, name);
	tfk_buf_addf(b, ",\"signature_name\":\"\",\"version\":\"%" PRId64
		     "\"},\"metadata\":{\"signature_def\":{\"signature_def\""
		     ":{", version);
	for (i = 0; i < n; i++) {
		if (i)
			tfk_buf_addc(b, ',');
		put_str(b, v[i]->key);
		tfk_buf_adds(b, ":{\"inputs\":");
		put_tensor_infos(b, v[i]->inputs, v[i]->n_inputs);
		tfk_buf_adds(b, ",\"outputs\":");
		put_tensor_infos(b, v[i]->outputs, v[i]->n_outputs);
		tfk_buf_adds(b, ",\"method_name\":");
		put_str(b, v[i]->method_name);
		tfk_buf_addc(b, '}');
	}
	tfk_buf_adds(b, "}}}}");
	tfk_free(v);
}

/* Classify and Regress --------------------------------------------------- */

void tfk_rj_examples_release(struct tfk_rj_examples *rq)
{
	if (!rq)
		return;
	tfk_free(rq->signature_name);
	tfk_tensor_release(&rq->examples);
	memset(rq, 0, sizeof(*rq));
}

/* The feature kind of one scalar JSON value, or NONE if it has none. */
static int scalar_kind(const struct tfk_jd *v)
{
	if (IS(v, REAL))
		return TFK_FEAT_FLOAT;
	if (IS(v, INT))
		return TFK_FEAT_INT64;
	if (IS(v, STRING) || is_b64_object(v))
		return TFK_FEAT_BYTES;
	return TFK_FEAT_NONE;
}

/* Scratch for one feature's values. */
struct fvals {
	float *f;
	int64_t *i;
	const uint8_t **p;
	size_t *len;
	uint8_t **owned;	/* decoded b64 values to free */
	size_t n, n_owned;
};

static void fvals_free(struct fvals *fv)
{
	size_t k;

	for (k = 0; k < fv->n_owned; k++)
		tfk_free(fv->owned[k]);
	tfk_free(fv->f);
	tfk_free(fv->i);
	tfk_free(fv->p);
	tfk_free(fv->len);
	tfk_free(fv->owned);
	memset(fv, 0, sizeof(*fv));
}

/* Value v (kind kind, at w) as value fv->n of fv (room made by caller). */
static int fval_put(struct fvals *fv, int kind, const struct tfk_jd *v,
		    const struct where *w, struct tfk_err *err)
{
	char buf[96];

	if (kind == TFK_FEAT_INT64) {
		fv->i[fv->n++] = v->u.i;
	} else if (kind == TFK_FEAT_FLOAT) {
		double x = IS(v, REAL) ? v->u.d : 0;

		if (is_mark(v))
			x = v->u.d;
		else if (fabs(x) > FLT_MAX)
			return tfk_errf(err, TFK_EINVAL, "%s: %s is out of "
					"range for a float feature", where_str(w),
					show(v, buf, sizeof(buf)));
		fv->f[fv->n++] = (float)x;
	} else if (IS(v, STRING)) {
		fv->p[fv->n] = (const uint8_t *)v->u.s;
		fv->len[fv->n++] = v->n;
	} else {
		const struct tfk_jd *b = tfk_jd_get(v, "b64");
		uint8_t *o = tfk_malloc(b->n + 1);
		long m;

		if (!o)
			return oom(err);
		fv->owned[fv->n_owned++] = o;
		m = b64_decode(b->u.s, b->n, o);
		if (m < 0)
			return tfk_errf(err, TFK_EINVAL, "%s: invalid base64 "
					"in {\"b64\": ...}", where_str(w));
		fv->p[fv->n] = o;
		fv->len[fv->n++] = (size_t)m;
	}
	return 0;
}

/* Add feature name = v (at w) to eb, by TF Serving's kind rules. */
static int add_feature(struct tfk_example_builder *eb, const char *name,
		       const struct tfk_jd *v, const struct where *w,
		       struct tfk_err *err)
{
	struct fvals fv = { 0 };
	struct where wi;
	size_t n = IS(v, ARRAY) ? v->n : 1, k;
	const struct tfk_jd *first = IS(v, ARRAY) ? &v->u.items[0] : v;
	char buf[96];
	int kind, rc = 0;

	if (IS(v, ARRAY) && n == 0) {
		tfk_exb_add_none(eb, name);	/* no values, no kind */
		return 0;
	}
	kind = scalar_kind(first);
	if (!kind) {
		if (IS(v, ARRAY))
			where_sub(&wi, w, 0, NULL);
		else
			wi = *w;
		return tfk_errf(err, TFK_EINVAL, "%s: a feature value is a "
				"number, a string or {\"b64\": ...} (or a list "
				"of them), got %s", where_str(&wi),
				show(first, buf, sizeof(buf)));
	}
	fv.f = tfk_malloc(n * sizeof(*fv.f));
	fv.i = tfk_malloc(n * sizeof(*fv.i));
	fv.p = tfk_malloc(n * sizeof(*fv.p));
	fv.len = tfk_malloc(n * sizeof(*fv.len));
	fv.owned = tfk_malloc(n * sizeof(*fv.owned));
	if (!fv.f || !fv.i || !fv.p || !fv.len || !fv.owned) {
		fvals_free(&fv);
		return oom(err);
	}
	for (k = 0; k < n && !rc; k++) {
		const struct tfk_jd *e = IS(v, ARRAY) ? &v->u.items[k] : v;

		if (IS(v, ARRAY))
			where_sub(&wi, w, (long)k, NULL);
		else
			wi = *w;
		if (scalar_kind(e) != kind)
			rc = tfk_errf(err, TFK_EINVAL, "%s: expected %s like "
				      "%s[0], got %s (a feature's "
				      "values are of one kind)", where_str(&wi),
				      tfk_feat_kind_name(kind), where_str(w),
				      show(e, buf, sizeof(buf)));
		else
			rc = fval_put(&fv, kind, e, &wi, err);
	}
	if (!rc && kind == TFK_FEAT_FLOAT)
		tfk_exb_add_floats(eb, name, fv.f, fv.n);
	else if (!rc && kind == TFK_FEAT_INT64)
		tfk_exb_add_int64s(eb, name, fv.i, fv.n);
	else if (!rc)
		tfk_exb_add_bytes(eb, name, fv.p, fv.len, fv.n);
	fvals_free(&fv);
	return rc;
}

/* Serialize example ex (at w; NULL: the context alone) merged with
 * context ctx (may be NULL) into element i of t. */
static int build_example(struct tfk_example_builder *eb, struct tfk_tensor *t,
			 int64_t i, const struct tfk_jd *ex, const struct tfk_jd *ctx,
			 const struct where *w, struct tfk_err *err)
{
	struct where wc = WHERE_ROOT("context"), wf;
	const uint8_t *p;
	size_t len;
	uint32_t k;
	int rc;

	tfk_exb_reset(eb);
	for (k = 0; ex && k < ex->n; k++) {
		const char *key = tfk_jd_key(ex, k);

		if (shadowed(ex, k))
			continue;
		where_sub(&wf, w, 0, key);
		if ((rc = add_feature(eb, key, tfk_jd_member(ex, k), &wf,
				      err)))
			return rc;
	}
	for (k = 0; ctx && k < ctx->n; k++) {
		const char *key = tfk_jd_key(ctx, k);

		if (shadowed(ctx, k) || (ex && tfk_jd_get(ex, key)))
			continue;	/* the example's own wins */
		where_sub(&wf, &wc, 0, key);
		if ((rc = add_feature(eb, key, tfk_jd_member(ctx, k), &wf,
				      err)))
			return rc;
	}
	if ((rc = tfk_exb_finish(eb, &p, &len, err)))
		return rc;
	return t ? tfk_tensor_set_str(t, i, p, len, err) : 0;
}

int tfk_rj_parse_examples(struct tfk_rj_examples *rq, const char *body,
			  size_t n, struct tfk_err *err)
{
	struct tfk_example_builder eb;
	struct where w = WHERE_ROOT("examples"), we;
	struct tfk_jd_doc *d;
	const struct tfk_jd *doc, *exs, *ctx;
	char buf[96];
	int64_t n_ex;
	size_t k;
	int rc;

	memset(rq, 0, sizeof(*rq));
	if ((rc = load_doc(&d, body, n, err)))
		goto out_doc;
	doc = &d->root;
	if ((rc = get_sig_name(&rq->signature_name, doc, err)))
		goto out_doc;
	exs = tfk_jd_get(doc, "examples");
	ctx = tfk_jd_get(doc, "context");
	if (!exs) {
		rc = tfk_errf(err, TFK_EINVAL, "request: missing 'examples' "
			      "key");
		goto out_doc;
	}
	if (!IS(exs, ARRAY) || !exs->n) {
		rc = tfk_errf(err, TFK_EINVAL, "request: 'examples' must be "
			      "a non-empty list");
		goto out_doc;
	}
	if (ctx && !IS(ctx, OBJECT)) {
		rc = tfk_errf(err, TFK_EINVAL, "request: 'context' must be an "
			      "object of features, got %s",
			      show(ctx, buf, sizeof(buf)));
		goto out_doc;
	}
	n_ex = (int64_t)exs->n;
	if ((rc = tfk_tensor_init(&rq->examples, TFK_DT_STRING, 1, &n_ex,
				  err)))
		goto out_doc;
	tfk_exb_init(&eb);
	/* the context alone first, so that its errors do not depend on
	 * which examples override which of its features */
	rc = ctx ? build_example(&eb, NULL, 0, NULL, ctx, &w, err) : 0;
	for (k = 0; !rc && k < exs->n; k++) {
		const struct tfk_jd *ex = &exs->u.items[k];

		where_sub(&we, &w, (long)k, NULL);
		if (!IS(ex, OBJECT))
			rc = tfk_errf(err, TFK_EINVAL, "%s: expected an "
				      "object of features, got %s", where_str(&we),
				      show(ex, buf, sizeof(buf)));
		else
			rc = build_example(&eb, &rq->examples, (int64_t)k, ex,
					   ctx, &we, err);
	}
	tfk_exb_release(&eb);
out_doc:
	free_doc(d);
	if (rc) {
		tfk_free(rq->signature_name);
		tfk_tensor_release(&rq->examples);
		memset(rq, 0, sizeof(*rq));
	}
	return rc;
}

static const char *const method_names[] = {
	NULL, "tensorflow/serving/classify", "tensorflow/serving/regress"
};

int tfk_rj_check_signature(const struct tfk_sv_signature *sig,
			   enum tfk_rj_method m, struct tfk_err *err)
{
	const char *want = method_names[m];

	if (strcmp(sig->method_name, want) &&
	    strcmp(sig->method_name, "tensorflow/serving/predict"))
		return tfk_errf(err, TFK_EINVAL, "signature %s: expected "
				"method_name %s (or a predict signature), "
				"got %s", sig->key, want,
				*sig->method_name ? sig->method_name :
				"none (a .tflite signature)");
	if (sig->n_inputs != 1)
		return tfk_errf(err, TFK_EINVAL, "signature %s: expected one "
				"string input (serialized tf.Examples), got "
				"%d inputs", sig->key, sig->n_inputs);
	if (sig->inputs[0].dtype != TFK_DT_STRING)
		return tfk_errf(err, TFK_EINVAL, "signature %s: expected one "
				"string input (serialized tf.Examples), got "
				"input '%s' of %s", sig->key,
				sig->inputs[0].key,
				tfk_dtype_name(sig->inputs[0].dtype));
	return 0;
}

static int find_key(int n, const char *const *keys, const char *k)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(keys[i], k))
			return i;
	return -1;
}

/* The keys for messages: "a, b". */
static const char *key_list(int n, const char *const *keys, char *buf,
			    size_t cap)
{
	size_t o = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < n && o < cap; i++)
		o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? ", " : "",
				      keys[i]);
	return buf;
}

static int is_float_t(const struct tfk_tensor *t)
{
	return t->dtype == TFK_DT_FLOAT || t->dtype == TFK_DT_DOUBLE;
}

static int regress_output(int n, const char *const *keys,
			  const struct tfk_tensor *const *out, int64_t n_ex,
			  const struct tfk_tensor **value, struct tfk_err *err)
{
	const struct tfk_tensor *t;
	char buf[200];
	int j = find_key(n, keys, "outputs");

	if (j < 0 && n == 1)
		j = 0;
	if (j < 0)
		return tfk_errf(err, TFK_EINVAL, "regress: the signature has "
				"no output 'outputs'; outputs: %s",
				key_list(n, keys, buf, sizeof(buf)));
	t = out[j];
	if (!is_float_t(t))
		return tfk_errf(err, TFK_EINVAL, "regress: output '%s' is %s, "
				"expected float32", keys[j],
				tfk_dtype_name(t->dtype));
	if (!(t->rank == 1 || (t->rank == 2 && t->shape[1] == 1)))
		return tfk_errf(err, TFK_EINVAL, "regress: output '%s': "
				"expected shape [batch_size] or [batch_size, "
				"1], got %s", keys[j],
				tfk_shape_str(t->rank, t->shape, buf,
					      sizeof(buf)));
	if (t->shape[0] != n_ex)
		return tfk_errf(err, TFK_EINVAL, "regress: output '%s' has "
				"%" PRId64 " values for %" PRId64 " examples",
				keys[j], t->shape[0], n_ex);
	*value = t;
	return 0;
}

static int classify_outputs(int n, const char *const *keys,
			    const struct tfk_tensor *const *out, int64_t n_ex,
			    const struct tfk_tensor **classes,
			    const struct tfk_tensor **scores,
			    struct tfk_err *err)
{
	int jc = find_key(n, keys, "classes"), js = find_key(n, keys, "scores");
	const struct tfk_tensor *c = jc >= 0 ? out[jc] : NULL;
	const struct tfk_tensor *s = js >= 0 ? out[js] : NULL;
	const struct tfk_tensor *t;
	char buf[200];
	int k;

	if (!c && !s)
		return tfk_errf(err, TFK_EINVAL, "classify: the signature has "
				"neither output 'classes' nor 'scores'; "
				"outputs: %s",
				key_list(n, keys, buf, sizeof(buf)));
	if (c && c->dtype != TFK_DT_STRING)
		return tfk_errf(err, TFK_EINVAL, "classify: output 'classes' "
				"is %s, expected string",
				tfk_dtype_name(c->dtype));
	if (s && !is_float_t(s))
		return tfk_errf(err, TFK_EINVAL, "classify: output 'scores' "
				"is %s, expected float32",
				tfk_dtype_name(s->dtype));
	for (k = 0; k < 2; k++) {
		t = k ? s : c;
		if (!t)
			continue;
		if (t->rank != 2 || t->shape[0] != n_ex)
			return tfk_errf(err, TFK_EINVAL, "classify: output "
					"'%s': expected shape [%" PRId64 ", "
					"num_classes], got %s",
					k ? "scores" : "classes", n_ex,
					tfk_shape_str(t->rank, t->shape, buf,
						      sizeof(buf)));
	}
	if (c && s && c->shape[1] != s->shape[1])
		return tfk_errf(err, TFK_EINVAL, "classify: %" PRId64 " "
				"classes but %" PRId64 " scores per example",
				c->shape[1], s->shape[1]);
	*classes = c;
	*scores = s;
	return 0;
}

int tfk_rj_result_outputs(enum tfk_rj_method m, int n,
			  const char *const *keys,
			  const struct tfk_tensor *const *out, int64_t n_ex,
			  const struct tfk_tensor **a,
			  const struct tfk_tensor **b, struct tfk_err *err)
{
	*a = *b = NULL;
	return m == TFK_RJ_REGRESS ?
		regress_output(n, keys, out, n_ex, a, err) :
		classify_outputs(n, keys, out, n_ex, a, b, err);
}

static void encode_regress(struct tfk_buf *b, const struct tfk_tensor *t,
			   int64_t n_ex)
{
	int64_t i;

	tfk_buf_adds(b, "{\"result\":[");
	for (i = 0; i < n_ex; i++) {
		if (i)
			tfk_buf_addc(b, ',');
		put_decimal(b, tfk_tensor_get_f64(t, i),
			    t->dtype == TFK_DT_FLOAT);
	}
	tfk_buf_adds(b, "]}");
}

static void encode_classify(struct tfk_buf *b, const struct tfk_tensor *c,
			    const struct tfk_tensor *s, int64_t n_ex)
{
	int64_t i, k, n_cls = (c ? c : s)->shape[1];

	tfk_buf_adds(b, "{\"result\":[");
	for (i = 0; i < n_ex; i++) {
		tfk_buf_adds(b, i ? ",[" : "[");
		for (k = 0; k < n_cls; k++) {
			tfk_buf_adds(b, k ? ",[" : "[");
			if (c)
				put_elem(b, c, i * n_cls + k, 0);
			else
				tfk_buf_addf(b, "\"%" PRId64 "\"", k);
			tfk_buf_addc(b, ',');
			if (s)
				put_decimal(b, tfk_tensor_get_f64(s,
					i * n_cls + k),
					s->dtype == TFK_DT_FLOAT);
			else
				tfk_buf_adds(b, "0.0");
			tfk_buf_addc(b, ']');
		}
		tfk_buf_addc(b, ']');
	}
	tfk_buf_adds(b, "]}");
}

int tfk_rj_encode_result(struct tfk_buf *b, enum tfk_rj_method m, int n,
			 const char *const *keys,
			 const struct tfk_tensor *const *out, int64_t n_ex,
			 struct tfk_err *err)
{
	const struct tfk_tensor *x, *y;
	int rc = tfk_rj_result_outputs(m, n, keys, out, n_ex, &x, &y, err);

	if (rc)
		return rc;
	if (m == TFK_RJ_REGRESS)
		encode_regress(b, x, n_ex);
	else
		encode_classify(b, x, y, n_ex);
	return tfk_buf_ok(b) ? 0 : oom(err);
}
