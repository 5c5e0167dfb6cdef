/*
 * given.c - saved_model_cli's input options into tensors (given.h).
 *
 * The splitter honours quotes (with backslash escapes) and (), [] and
 * {} nesting, so literals and example lists may hold ';' and '='.
 * Examples are built with example/example.h's builder, one record per
 * dict, as saved_model_cli's _create_example_string does.
 */
#include "model/given.h"

#include "example/example.h"
#include "io/npy.h"
#include "io/record.h"
#include "util/alloc.h"
#include "util/buf.h"

#include <string.h>

static char *dupn(const char *s, size_t n)
{
	char *p = tfk_malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

int tfk_given_split(const char *spec, const char *opt, int key_optional,
		    int (*fn)(const char *k, size_t kl, const char *v,
			      size_t vl, void *ctx, struct tfk_err *err),
		    void *ctx, struct tfk_err *err)
{
	const char *p = spec;

	while (*p) {
		const char *q = p, *eq = NULL;
		int depth = 0, rc;
		char quote = 0;

		for (; *q; q++) {
			if (quote) {
				if (*q == '\\' && q[1])
					q++;
				else if (*q == quote)
					quote = 0;
				continue;
			}
			if (*q == '\'' || *q == '"')
				quote = *q;
			else if (*q == '[' || *q == '(' || *q == '{')
				depth++;
			else if (*q == ']' || *q == ')' || *q == '}')
				depth--;
			else if (*q == '=' && !eq && !depth)
				eq = q;
			else if (*q == ';' && !depth)
				break;
		}
		if (q > p) {
			if (!eq && !key_optional)
				return tfk_errf(err, TFK_EINVAL, "%s: '%.*s' is "
						"not KEY=VALUE", opt,
						(int)(q - p), p);
			if (eq)
				rc = fn(p, (size_t)(eq - p), eq + 1,
					(size_t)(q - eq - 1), ctx, err);
			else
				rc = fn(NULL, 0, p, (size_t)(q - p), ctx,
					err);
			if (rc)
				return rc;
		}
		p = *q ? q + 1 : q;
	}
	return 0;
}

/* Whether a list whose first value is of kind k0 may hold kind k:
 * floats take ints, int64 lists take bools (saved_model_cli's rule). */
static int kind_fits(enum tfk_lit_kind k0, enum tfk_lit_kind k)
{
	if (k0 == TFK_LIT_FLOAT)
		return k == TFK_LIT_FLOAT || k == TFK_LIT_INT;
	if (k0 == TFK_LIT_INT || k0 == TFK_LIT_BOOL)
		return k == TFK_LIT_INT || k == TFK_LIT_BOOL;
	return k == k0;
}

/* The non-empty list l as feature name of b: a float, int64 or bytes
 * list by the kind of its first value. 0, 1 for mixed kinds, or < 0. */
static int add_feature(struct tfk_example_builder *b, const char *name,
		       const struct tfk_lit *l, struct tfk_err *err)
{
	enum tfk_lit_kind k0 = l->items[0].kind;
	float *f = tfk_calloc(l->n, sizeof(*f));
	int64_t *v = tfk_calloc(l->n, sizeof(*v));
	const uint8_t **s = tfk_calloc(l->n, sizeof(*s));
	size_t *lens = tfk_calloc(l->n, sizeof(*lens));
	int j, rc = 0;

	if (!f || !v || !s || !lens)
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (j = 0; !rc && j < l->n; j++) {
		const struct tfk_lit *it = &l->items[j];

		if (!kind_fits(k0, it->kind)) {
			rc = 1;
			break;
		}
		f[j] = it->kind == TFK_LIT_FLOAT ? (float)it->f :
			(float)it->i;
		v[j] = it->i;
		s[j] = (const uint8_t *)it->s;
		lens[j] = it->len;
	}
	if (!rc && k0 == TFK_LIT_FLOAT)
		tfk_exb_add_floats(b, name, f, l->n);
	else if (!rc && k0 == TFK_LIT_STR)
		tfk_exb_add_bytes(b, name, s, lens, l->n);
	else if (!rc)
		tfk_exb_add_int64s(b, name, v, l->n);
	tfk_free(f);
	tfk_free(v);
	tfk_free(s);
	tfk_free(lens);
	return rc;
}

/* One dict {"name": [values]} -> a serialized Example in b. */
static int build_example(const struct tfk_lit *d,
			 struct tfk_example_builder *b, int idx,
			 struct tfk_err *err)
{
	int i, rc;

	tfk_exb_reset(b);
	if (d->kind != TFK_LIT_DICT)
		return tfk_errf(err, TFK_EINVAL, "example %d is not a dict",
				idx);
	for (i = 0; i < d->n; i++) {
		const struct tfk_lit *l = &d->items[i];
		const char *name = d->keys[i];

		if (l->kind != TFK_LIT_LIST || l->n == 0)
			return tfk_errf(err, TFK_EINVAL, "example %d: feature "
					"'%s': value must be a non-empty list",
					idx, name);
		if (l->items[0].kind != TFK_LIT_FLOAT &&
		    l->items[0].kind != TFK_LIT_INT &&
		    l->items[0].kind != TFK_LIT_BOOL &&
		    l->items[0].kind != TFK_LIT_STR)
			return tfk_errf(err, TFK_EINVAL, "example %d: feature "
					"'%s': values must be floats, ints or "
					"strings", idx, name);
		rc = add_feature(b, name, l, err);
		if (rc > 0)
			return tfk_errf(err, TFK_EINVAL, "example %d: feature "
					"'%s': mixed value types", idx, name);
		if (rc)
			return rc;
	}
	return 0;
}

/* The examples of one literal list as a string tensor *t. */
static int read_examples(const char *s, struct tfk_tensor *t,
			 struct tfk_err *err)
{
	struct tfk_example_builder b;
	struct tfk_lit lit;
	int64_t n;
	int rc, i;

	memset(t, 0, sizeof(*t));
	if ((rc = tfk_lit_parse(s, &lit, err)))
		return rc;
	if (lit.kind != TFK_LIT_LIST) {
		tfk_lit_release(&lit);
		return tfk_errf(err, TFK_EINVAL, "must be a list of dicts");
	}
	n = lit.n;
	rc = tfk_tensor_init(t, TFK_DT_STRING, 1, &n, err);
	tfk_exb_init(&b);
	for (i = 0; !rc && i < lit.n; i++) {
		const uint8_t *p;
		size_t len;

		rc = build_example(&lit.items[i], &b, i, err);
		if (!rc)
			rc = tfk_exb_finish(&b, &p, &len, err);
		if (!rc)
			rc = tfk_tensor_set_str(t, i, p, len, err);
	}
	tfk_exb_release(&b);
	tfk_lit_release(&lit);
	if (rc)
		tfk_tensor_release(t);
	return rc;
}

static int read_expr(const char *s, struct tfk_tensor *t,
		     struct tfk_err *err)
{
	struct tfk_lit lit;
	int rc;

	memset(t, 0, sizeof(*t));
	if ((rc = tfk_lit_parse(s, &lit, err)))
		return rc;
	rc = tfk_lit_to_tensor(&lit, t, err);
	tfk_lit_release(&lit);
	return rc;
}

/* FILE.npy or FILE.npz[NAME]. */
static int read_npy(const char *v, struct tfk_tensor *t, struct tfk_err *err)
{
	size_t vl = strlen(v);
	char *path = dupn(v, vl), *name = NULL, *br;
	int rc;

	if (!path)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	br = strchr(path, '[');
	if (br && vl && path[vl - 1] == ']') {
		path[vl - 1] = 0;
		*br = 0;
		name = br + 1;
	}
	rc = tfk_npy_read(path, name, t, err);
	tfk_free(path);
	return rc;
}

int tfk_given_records(const char *path, struct tfk_tensor *t,
		      struct tfk_err *err)
{
	struct tfk_rec_reader *r = NULL;
	struct tfk_buf data;
	struct tfk_rec rec;
	size_t *lens = NULL, nrec = 0, cap = 0, off = 0, i;
	int64_t n;
	int rc;

	memset(t, 0, sizeof(*t));
	tfk_buf_init(&data);
	rc = tfk_rec_open(&r, path, TFK_COMP_AUTO, 0, err);
	while (!rc) {
		int got = tfk_rec_next(r, &rec, err);

		if (got <= 0) {
			rc = got;
			break;
		}
		if (nrec == cap) {
			size_t nc = cap ? cap * 2 : 64;
			size_t *nl = tfk_realloc(lens, nc * sizeof(*nl));

			if (!nl) {
				rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
				break;
			}
			lens = nl;
			cap = nc;
		}
		lens[nrec++] = rec.len;
		tfk_buf_add(&data, rec.data, rec.len);
	}
	tfk_rec_close(r);
	if (!rc && !tfk_buf_ok(&data))
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
	n = (int64_t)nrec;
	if (!rc)
		rc = tfk_tensor_init(t, TFK_DT_STRING, 1, &n, err);
	for (i = 0; !rc && i < nrec; i++) {
		rc = tfk_tensor_set_str(t, (int64_t)i, data.data + off,
					lens[i], err);
		off += lens[i];
	}
	tfk_buf_release(&data);
	tfk_free(lens);
	if (rc)
		tfk_tensor_release(t);
	return rc;
}

struct add_ctx {
	struct tfk_givens *g;
	enum tfk_given_kind kind;
	const char *opt;
};

struct tfk_given *tfk_givens_find(struct tfk_givens *g, const char *key)
{
	int i;

	for (i = 0; i < g->n; i++)
		if (g->v[i].key && key && !strcmp(g->v[i].key, key))
			return &g->v[i];
	return NULL;
}

static int add_item(const char *k, size_t kl, const char *v, size_t vl,
		    void *ctx, struct tfk_err *err)
{
	struct add_ctx *c = ctx;
	struct tfk_givens *g = c->g;
	struct tfk_given it, *old;
	int rc;

	memset(&it, 0, sizeof(it));
	it.from = c->opt;
	it.value = dupn(v, vl);
	if (k)
		it.key = dupn(k, kl);
	if (!it.value || (k && !it.key)) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto fail;
	}
	switch (c->kind) {
	case TFK_GIVEN_NPY: rc = read_npy(it.value, &it.t, err); break;
	case TFK_GIVEN_EXPR: rc = read_expr(it.value, &it.t, err); break;
	case TFK_GIVEN_EXAMPLES:
		rc = read_examples(it.value, &it.t, err);
		break;
	default: rc = tfk_given_records(it.value, &it.t, err); break;
	}
	if (rc) {
		if (c->kind == TFK_GIVEN_RECORDS)
			tfk_err_prefix(err, "%s", c->opt);
		else if (c->kind != TFK_GIVEN_NPY)
			tfk_err_prefix(err, "%s: %s", c->opt, it.key);
		goto fail;
	}
	old = tfk_givens_find(g, it.key);
	if (old) {
		it.replaced = old->from;
		tfk_free(old->key);
		tfk_free(old->value);
		tfk_tensor_release(&old->t);
		*old = it;
		return 0;
	}
	if (g->n == g->cap) {
		int cap = g->cap ? g->cap * 2 : 4;
		struct tfk_given *nv = tfk_realloc(g->v, cap * sizeof(*nv));

		if (!nv) {
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
			goto fail;
		}
		g->v = nv;
		g->cap = cap;
	}
	g->v[g->n++] = it;
	return 0;
fail:
	tfk_free(it.key);
	tfk_free(it.value);
	tfk_tensor_release(&it.t);
	return rc;
}

int tfk_givens_add(struct tfk_givens *g, enum tfk_given_kind kind,
		   const char *spec, const char *opt, struct tfk_err *err)
{
	struct add_ctx c = { g, kind, opt };

	return tfk_given_split(spec, opt, kind == TFK_GIVEN_RECORDS, add_item,
			       &c, err);
}

void tfk_givens_release(struct tfk_givens *g)
{
	int i;

	for (i = 0; i < g->n; i++) {
		tfk_free(g->v[i].key);
		tfk_free(g->v[i].value);
		tfk_tensor_release(&g->v[i].t);
	}
	tfk_free(g->v);
	memset(g, 0, sizeof(*g));
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);	/* Vigna's constants */

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int tfk_given_random(struct tfk_tensor *t, uint64_t *s, struct tfk_err *err)
{
	int64_t n = tfk_tensor_numel(t), i;

	for (i = 0; i < n; i++) {
		uint64_t r = splitmix64(s);
		double u = (double)(r >> 11) * (1.0 / 9007199254740992.0);

		switch (t->dtype) {
		case TFK_DT_FLOAT: ((float *)t->data)[i] = (float)u; break;
		case TFK_DT_DOUBLE: ((double *)t->data)[i] = u; break;
		case TFK_DT_INT32: ((int32_t *)t->data)[i] = r & 1; break;
		case TFK_DT_INT64: ((int64_t *)t->data)[i] = r & 1; break;
		case TFK_DT_INT16: ((int16_t *)t->data)[i] = r & 1; break;
		case TFK_DT_INT8: ((int8_t *)t->data)[i] = r & 1; break;
		case TFK_DT_UINT8:
		case TFK_DT_BOOL: ((uint8_t *)t->data)[i] = r & 1; break;
		default:
			return tfk_errf(err, TFK_EINVAL, "cannot make random "
					"%s values", tfk_dtype_name(t->dtype));
		}
	}
	return 0;
}
