/*
 * import.c - GraphDef + function library -> tfk_graph (see import.h).
 *
 * Approach: a depth-first walk from the signature's output tensors.
 * Resolving a tensor resolves its node first (memoized per scope), so
 * nodes are added to the graph after their inputs: the walk is the
 * topological sort and the pruning at once, and nodes nothing needs
 * (savers, initializers, training ops) are never looked at -- which is
 * why a training graph with ops we lack still runs its serving
 * signature. A scope is the top-level graph or one inlined call of a
 * FunctionDef; a call's arguments are resolved lazily in the caller's
 * scope, so an argument the callee does not use costs nothing.
 *
 * Rejected: importing the whole GraphDef and pruning in the executor
 * (fails on the first unsupported op anywhere, e.g. SaveV2), and
 * running TF's restore ops (needs string/file ops and in-graph
 * assignment; reading the bundle directly is simpler and exact).
 *
 * Values: every output of a resolved node is a struct val: a port of
 * the tfk_graph, marked as a resource when it stands for a resource
 * handle (a VarHandleOp: then the port is the variable's VariableV2
 * node, and ReadVariableOp passes it through).
 *
 * Writes: Assign* on a ref and Assign*VariableOp on a resource become
 * _AssignVariable nodes writing the VariableV2's tensor in place. The
 * walk follows data edges only, so a write that nothing reads (a
 * tf.function's assign_add, reached by a control edge from the read
 * after it, or from the function's control_ret) is resolved when the
 * node that waits on it is, before it: the graph order is then the
 * program order, and the write is a run target (import.h) so the
 * executor does not prune it. Other control edges are still ignored.
 *
 * Hostile files: every "node:idx" / "node:arg:idx" index is parsed by
 * out_index alone, so each lands in 0..MAX_OUT_INDEX before it indexes
 * anything. Depth is bounded twice (MAX_DEPTH frames, MAX_CALLS nested
 * calls), and work by a budget of inlined nodes (TFK_MAX_IMPORT_NODES):
 * a function that calls the next one twice, twenty deep, is 2^20
 * inlined copies at call depth 20, which no depth limit catches.
 */
#include "model/import.h"

#include "formats/trackable_object_graph.pb-c.h"
#include "graph/op.h"
#include "format/bundle.h"
#include "format/tensorproto.h"
#include "util/alloc.h"
#include "util/limit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_DEPTH 4000		/* nested resolutions (stack frames) */
#define MAX_CALLS 64		/* nested function calls (recursion) */
#define MAX_OUT_INDEX 1000000	/* "node:idx": no op has more outputs */
#define DT_REF_OFFSET 100	/* DT_FLOAT_REF = 101 (types.proto) */

/* String -> int map (open addressing, FNV-1a). Keys are borrowed. */
struct smap {
	const char **keys;
	int *vals;
	size_t mask;
	size_t n;
};

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static int smap_init(struct smap *m, size_t want)
{
	size_t cap = 16;

	while (cap < want * 2 + 2)
		cap *= 2;
	m->keys = tfk_calloc(cap, sizeof(*m->keys));
	m->vals = tfk_calloc(cap, sizeof(*m->vals));
	m->mask = cap - 1;
	m->n = 0;
	return m->keys && m->vals ? 0 : -1;
}

static void smap_release(struct smap *m)
{
	tfk_free(m->keys);
	tfk_free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* Find key (n bytes): its value, or -1. */
static int smap_getn(const struct smap *m, const char *k, size_t n)
{
	size_t i;

	if (!m->keys)
		return -1;
	for (i = hash_str(k, n) & m->mask; m->keys[i]; i = (i + 1) & m->mask)
		if (!strncmp(m->keys[i], k, n) && !m->keys[i][n])
			return m->vals[i];
	return -1;
}

static int smap_get(const struct smap *m, const char *k)
{
	return smap_getn(m, k, strlen(k));
}

/* Insert (first wins). Capacity was sized by smap_init. */
static void smap_put(struct smap *m, const char *k, int v)
{
	size_t i;

	if (m->n * 2 + 2 > m->mask + 1)
		return;
	for (i = hash_str(k, strlen(k)) & m->mask; m->keys[i];
	     i = (i + 1) & m->mask)
		if (!strcmp(m->keys[i], k))
			return;
	m->keys[i] = k;
	m->vals[i] = v;
	m->n++;
}

/* Insert or replace. */
static void smap_set(struct smap *m, const char *k, int v)
{
	size_t i;

	for (i = hash_str(k, strlen(k)) & m->mask; m->keys[i];
	     i = (i + 1) & m->mask)
		if (!strcmp(m->keys[i], k)) {
			m->vals[i] = v;
			return;
		}
	smap_put(m, k, v);
}

/* Importer state ---------------------------------------------------- */

struct val {
	struct tfk_port port;
	int resource;
};

struct memo {
	int state;		/* 0 new, 1 resolving, 2 done */
	int n_out;
	struct val *vals;
	unsigned char *have;	/* per output (lazy ops) */
	struct scope *callee;	/* call nodes: the inlined scope */
};

struct scope {
	struct scope *caller;	/* NULL: the top-level graph */
	const Tensorflow__NodeDef *call;	/* the call node in caller */
	const Tensorflow__FunctionDef *fn;
	Tensorflow__NodeDef **nodes;
	size_t n_nodes;
	struct smap index;
	struct memo *memo;
	char *prefix;		/* "" or "CALL/" */
	struct val *args;	/* fn inputs, resolved lazily */
	unsigned char *args_have;
	struct scope *next_alloc;	/* list of all scopes, to free */
	int level;		/* calls from the top-level graph */
	int writes_done;	/* its control_ret writes resolved */
};

struct imp {
	const struct tfk_meta_graph *mg;
	const Tensorflow__GraphDef *gd;
	struct tfk_graph *g;
	struct scope *top;
	struct scope *scopes;
	struct smap funcs;	/* library function name -> index */
	struct smap feeds;	/* "node:idx" -> feed index */
	struct tfk_import *out;
	/* variable name (top-level node) -> checkpoint key */
	struct smap varkeys;
	char **keystore;	/* owned strings of varkeys */
	int n_keystore, cap_keystore;
	const char *var_prefix;
	struct tfk_bundle *bundle;
	int bundle_tried;
	Tensorflow__TrackableObjectGraph *tog;
	int depth;
	uint64_t n_inlined;	/* function nodes in inlined scopes */
	uint64_t max_inlined;	/* TFK_MAX_IMPORT_NODES */
	struct tfk_err *err;
};

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = tfk_malloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

static char *xstrndup(const char *s, size_t n)
{
	char *p = tfk_malloc(n + 1);

	if (p) {
		if (n)	/* protobuf-c gives NULL data for empty bytes */
			memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

static int oom(struct imp *im)
{
	return tfk_errf(im->err, TFK_ENOMEM, "out of memory");
}

/* Keep s (owned) for the import's lifetime; NULL on failure (s freed). */
static char *keep(struct imp *im, char *s)
{
	if (!s)
		return NULL;
	if (im->n_keystore == im->cap_keystore) {
		int cap = im->cap_keystore ? im->cap_keystore * 2 : 32;
		char **p = tfk_realloc(im->keystore, cap * sizeof(*p));

		if (!p) {
			tfk_free(s);
			return NULL;
		}
		im->keystore = p;
		im->cap_keystore = cap;
	}
	im->keystore[im->n_keystore++] = s;
	return s;
}

static const Tensorflow__AttrValue *node_attr(const Tensorflow__NodeDef *n,
					      const char *name)
{
	size_t i;

	for (i = 0; i < n->n_attr; i++)
		if (!strcmp(n->attr[i]->key, name))
			return n->attr[i]->value;
	return NULL;
}

static int64_t attr_i(const Tensorflow__NodeDef *n, const char *name,
		      int64_t def)
{
	const Tensorflow__AttrValue *a = node_attr(n, name);

	return a && a->value_case == TENSORFLOW__ATTR_VALUE__VALUE_I ?
		a->i : def;
}

static int strip_ref(int t)
{
	return t > DT_REF_OFFSET ? t - DT_REF_OFFSET : t;
}

static int dtype_ok(int t)
{
	return t > 0 && t < 64 && tfk_dtype_size((enum tfk_dtype)t) > 0;
}

static int is_control(const char *s)
{
	return s[0] == '^';
}

/* The k-th data (non-control) input of n, or NULL. */
static const char *data_input(const Tensorflow__NodeDef *n, int k)
{
	size_t i;

	for (i = 0; i < n->n_input; i++)
		if (!is_control(n->input[i]) && k-- == 0)
			return n->input[i];
	return NULL;
}

static int n_data_inputs(const Tensorflow__NodeDef *n)
{
	size_t i;
	int c = 0;

	for (i = 0; i < n->n_input; i++)
		c += !is_control(n->input[i]);
	return c;
}

/* Scopes ---------------------------------------------------------------- */

static struct scope *scope_new(struct imp *im, Tensorflow__NodeDef **nodes,
			       size_t n, const char *prefix)
{
	struct scope *s = tfk_calloc(1, sizeof(*s));
	size_t i;

	if (!s)
		return NULL;
	s->next_alloc = im->scopes;
	im->scopes = s;
	s->nodes = nodes;
	s->n_nodes = n;
	s->prefix = xstrdup(prefix);
	s->memo = tfk_calloc(n ? n : 1, sizeof(*s->memo));
	if (!s->prefix || !s->memo || smap_init(&s->index, n))
		return NULL;
	for (i = 0; i < n; i++)
		smap_put(&s->index, nodes[i]->name, (int)i);
	return s;
}

static void scope_free(struct scope *s)
{
	size_t i;

	for (i = 0; s->memo && i < s->n_nodes; i++) {
		tfk_free(s->memo[i].vals);
		tfk_free(s->memo[i].have);
	}
	tfk_free(s->memo);
	smap_release(&s->index);
	tfk_free(s->prefix);
	tfk_free(s->args);
	tfk_free(s->args_have);
	tfk_free(s);
}

static const Tensorflow__FunctionDef *find_func(struct imp *im,
						const char *name)
{
	int i = smap_get(&im->funcs, name);

	return i < 0 ? NULL : im->gd->library->function[i];
}

/* The function a node calls, or NULL when it is not a call. */
static const Tensorflow__FunctionDef *called_func(struct imp *im,
						  const Tensorflow__NodeDef *n)
{
	const Tensorflow__AttrValue *f;

	if (!strcmp(n->op, "StatefulPartitionedCall") ||
	    !strcmp(n->op, "PartitionedCall")) {
		f = node_attr(n, "f");
		if (f && f->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC &&
		    f->func)
			return find_func(im, f->func->name);
		return NULL;
	}
	return find_func(im, n->op);
}

/* Name of a node in the tfk graph. */
static char *full_name(const struct scope *s, const char *node)
{
	size_t a = strlen(s->prefix), b = strlen(node);
	char *p = tfk_malloc(a + b + 1);

	if (p) {
		memcpy(p, s->prefix, a);
		memcpy(p + a, node, b + 1);
	}
	return p;
}

/* Attr and tensor conversion ------------------------------------------- */

/* Attrs TF sets that change nothing here, when the op schema lacks them. */
static int ignorable_attr(const char *name, const Tensorflow__AttrValue *v)
{
	static const char *const hints[] = {
		"grad_a", "grad_b", "use_cudnn_on_gpu", "Truncate", NULL
	};
	int i;

	if (name[0] == '_')
		return 1;
	for (i = 0; hints[i]; i++)
		if (!strcmp(name, hints[i]))
			return 1;
	if (!strcmp(name, "data_format") &&
	    v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_S &&
	    v->s.len == 4 && !memcmp(v->s.data, "NHWC", 4))
		return 1;
	return 0;
}

/* Converted attrs of one node, with what they own. */
struct attrs {
	struct tfk_attr *a;
	int n;
	int cap;			/* slots of tensors and types */
	struct tfk_tensor *tensors;	/* n entries, released after add */
	enum tfk_dtype **types;		/* LIST_TYPE arrays */
};

static void attrs_release(struct attrs *as)
{
	int i;

	for (i = 0; i < as->cap; i++) {
		if (as->tensors)
			tfk_tensor_release(&as->tensors[i]);
		if (as->types)
			tfk_free(as->types[i]);
	}
	tfk_free(as->a);
	tfk_free(as->tensors);
	tfk_free(as->types);
	memset(as, 0, sizeof(*as));
}

static int attrs_convert(struct imp *im, const Tensorflow__NodeDef *n,
			 const char *fname, const struct tfk_op_def *def,
			 struct attrs *as)
{
	size_t i;
	int rc;

	memset(as, 0, sizeof(*as));
	as->a = tfk_calloc(n->n_attr + 1, sizeof(*as->a));
	as->tensors = tfk_calloc(n->n_attr + 1, sizeof(*as->tensors));
	as->types = tfk_calloc(n->n_attr + 1, sizeof(*as->types));
	if (!as->a || !as->tensors || !as->types)
		return oom(im);
	as->cap = (int)n->n_attr + 1;
	for (i = 0; i < n->n_attr; i++) {
		const char *name = n->attr[i]->key;
		const Tensorflow__AttrValue *v = n->attr[i]->value;
		const struct tfk_attr_def *ad = tfk_op_attr_def(def, name);
		struct tfk_attr *a = &as->a[as->n];
		int vc = v ? (int)v->value_case : 0;
		size_t k;

		if (!v || (!ad && ignorable_attr(name, v)))
			continue;
		if (!ad)
			return tfk_errf(im->err, TFK_EINVAL, "node %s: attr "
					"'%s' of op %s is not supported",
					fname, name, n->op);
		a->name = ad->name;
		a->v.kind = ad->kind;
#define NEED(c) if (vc != TENSORFLOW__ATTR_VALUE__VALUE_##c) goto mistyped
		switch (ad->kind) {
		case TFK_ATTR_INT:
			NEED(I);
			a->v.i = v->i;
			break;
		case TFK_ATTR_FLOAT:
			NEED(F);
			a->v.f = v->f;
			break;
		case TFK_ATTR_BOOL:
			NEED(B);
			a->v.b = !!v->b;
			break;
		case TFK_ATTR_STRING:
			NEED(S);
			a->v.s.p = (const char *)v->s.data;
			a->v.s.len = v->s.len;
			if (!a->v.s.p)
				a->v.s.p = "";
			break;
		case TFK_ATTR_TYPE:
			NEED(TYPE);
			if (!dtype_ok(strip_ref(v->type)))
				return tfk_errf(im->err, TFK_EINVAL, "node "
						"%s: attr %s: DataType %d not "
						"supported", fname, name,
						v->type);
			a->v.type = (enum tfk_dtype)strip_ref(v->type);
			break;
		case TFK_ATTR_SHAPE:
			NEED(SHAPE);
			rc = tfk_shape_from_proto(v->shape, &a->v.shape.rank,
					      a->v.shape.dims, im->err);
			if (rc)
				return tfk_err_prefix(im->err, "node %s: attr "
						      "%s", fname, name);
			break;
		case TFK_ATTR_TENSOR:
			NEED(TENSOR);
			rc = tfk_tensor_from_proto(v->tensor, &as->tensors[as->n],
					       im->err);
			if (rc)
				return tfk_err_prefix(im->err, "node %s: attr "
						      "%s", fname, name);
			a->v.tensor = &as->tensors[as->n];
			break;
		case TFK_ATTR_LIST_INT:
			NEED(LIST);
			a->v.list.n = (int)v->list->n_i;
			a->v.list.i = v->list->i;
			break;
		case TFK_ATTR_LIST_FLOAT:
			NEED(LIST);
			a->v.list.n = (int)v->list->n_f;
			a->v.list.f = v->list->f;
			break;
		case TFK_ATTR_LIST_TYPE:
			NEED(LIST);
			as->types[as->n] = tfk_calloc(v->list->n_type + 1,
						      sizeof(enum tfk_dtype));
			if (!as->types[as->n])
				return oom(im);
			for (k = 0; k < v->list->n_type; k++)
				as->types[as->n][k] = (enum tfk_dtype)
					strip_ref(v->list->type[k]);
			a->v.list.n = (int)v->list->n_type;
			a->v.list.type = as->types[as->n];
			break;
		default:
			goto mistyped;
		}
#undef NEED
		as->n++;
		continue;
mistyped:
		return tfk_errf(im->err, TFK_EINVAL, "node %s: attr %s: "
				"expected %s", fname, name,
				tfk_attr_kind_name(ad->kind));
	}
	return 0;
}

/* Variables -------------------------------------------------------------- */

/* The output index s spells (the text after a ':'): decimal digits,
 * no sign or blank, 0..MAX_OUT_INDEX. 0 and *idx, or -1. The one
 * parser of indices from the file, so none escapes the range check. */
static int out_index(const char *s, int *idx)
{
	long v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
		if (v > MAX_OUT_INDEX)
			return -1;
	}
	*idx = (int)v;
	return 0;
}

/* Split "node:idx" (top level) into node length and idx. A name whose
 * last ':' is not followed by an index is all node name (idx 0), so
 * "x:-1" is looked up, and not found, as the node "x:-1". */
static size_t split_top(const char *s, int *idx)
{
	const char *c = strrchr(s, ':');

	*idx = 0;
	if (!c || out_index(c + 1, idx))
		return strlen(s);
	return (size_t)(c - s);
}

/* Inside a function: "node:arg:idx" -> node length *len, out arg, idx;
 * "arg" (a function input) -> *len 0 with *arg = NULL. Returns 0, or -1
 * when idx is there but not an index (negative, huge, junk). */
static int split_fn(const char *s, size_t *len, const char **arg,
		    size_t *arg_len, int *idx)
{
	const char *c1 = strchr(s, ':'), *c2;

	*idx = 0;
	*arg = NULL;
	*arg_len = 0;
	*len = 0;
	if (!c1)
		return 0;
	c2 = strchr(c1 + 1, ':');
	*arg = c1 + 1;
	*arg_len = c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1);
	*len = (size_t)(c1 - s);
	return c2 ? out_index(c2 + 1, idx) : 0;
}

/* Follow Identity nodes from input string s in (nodes, index, fn?):
 * the producing node and output index (top level: idx; function:
 * the out arg's idx). Returns the node or NULL; *arg_name set when the
 * trail ends at a function input. */
static const Tensorflow__NodeDef *trace(const struct smap *index,
					Tensorflow__NodeDef **nodes, int in_fn,
					const char *s, int *idx,
					const char **arg_name)
{
	int hops;

	*arg_name = NULL;
	for (hops = 0; hops < 64; hops++) {
		const Tensorflow__NodeDef *n;
		size_t len;
		int i;

		if (in_fn) {
			const char *a;
			size_t al;

			if (split_fn(s, &len, &a, &al, idx))
				return NULL;
			if (!a) {
				*arg_name = s;
				return NULL;
			}
		} else {
			len = split_top(s, idx);
		}
		i = smap_getn(index, s, len);
		if (i < 0)
			return NULL;
		n = nodes[i];
		if (strcmp(n->op, "Identity") || !data_input(n, 0))
			return n;
		s = data_input(n, 0);
	}
	return NULL;
}

/* For each Assign/AssignVariableOp in nodes fed by RestoreV2:k whose
 * tensor_names is a Const: call found(var input string, key). */
static int scan_restores(struct imp *im, Tensorflow__NodeDef **nodes,
			 size_t n, const struct smap *index, int in_fn,
			 int (*found)(struct imp *, const char *var,
				      const char *arg, const char *key,
				      void *ctx), void *ctx)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const Tensorflow__NodeDef *a = nodes[i], *r, *names, *v;
		const Tensorflow__AttrValue *tv;
		const char *arg, *varg;
		int k, dummy, rc;
		char *key;

		if (strcmp(a->op, "Assign") && strcmp(a->op, "AssignVariableOp"))
			continue;
		if (!data_input(a, 0) || !data_input(a, 1))
			continue;
		r = trace(index, nodes, in_fn, data_input(a, 1), &k, &arg);
		if (!r || (strcmp(r->op, "RestoreV2") && strcmp(r->op,
								 "Restore")))
			continue;
		if (!data_input(r, 1))
			continue;
		names = trace(index, nodes, in_fn, data_input(r, 1), &dummy,
			      &arg);
		if (!names || strcmp(names->op, "Const"))
			continue;
		tv = node_attr(names, "value");
		if (!tv || tv->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR
		    || !tv->tensor || k < 0 ||
		    (size_t)k >= tv->tensor->n_string_val)
			continue;
		v = trace(index, nodes, in_fn, data_input(a, 0), &dummy, &varg);
		key = keep(im, xstrndup((const char *)
					tv->tensor->string_val[k].data,
					tv->tensor->string_val[k].len));
		if (!key)
			return oom(im);
		rc = found(im, v ? v->name : NULL, varg, key, ctx);
		if (rc)
			return rc;
	}
	return 0;
}

static int found_top(struct imp *im, const char *var, const char *arg,
		     const char *key, void *ctx)
{
	(void)arg;
	(void)key;
	(void)ctx;
	if (var)	/* the key was kept last: index n_keystore - 1 */
		smap_put(&im->varkeys, var, im->n_keystore);
	return 0;
}

struct fn_scan {
	const Tensorflow__FunctionDef *fn;
	int *arg_key;		/* per input arg: keystore index + 1, or 0 */
};

static int found_fn(struct imp *im, const char *var, const char *arg,
		    const char *key, void *ctx)
{
	struct fn_scan *fs = ctx;
	const Tensorflow__OpDef *sig = fs->fn->signature;
	size_t i;

	(void)var;
	(void)key;
	if (!arg || !sig)
		return 0;
	for (i = 0; i < sig->n_input_arg; i++)
		if (!strcmp(sig->input_arg[i]->name, arg))
			fs->arg_key[i] = im->n_keystore;
	return 0;
}

/* Map top-level variable node names to checkpoint keys by the restore
 * path. varkeys values are keystore index + 1 (0: unset). */
static int build_varkeys(struct imp *im)
{
	const Tensorflow__GraphDef *gd = im->gd;
	size_t f, i;
	int rc;

	if (smap_init(&im->varkeys, gd->n_node + 1))
		return oom(im);
	rc = scan_restores(im, gd->node, gd->n_node, &im->top->index, 0,
			   found_top, NULL);
	if (rc)
		return rc;
	if (!gd->library)
		return 0;
	for (f = 0; f < gd->library->n_function; f++) {
		const Tensorflow__FunctionDef *fn = gd->library->function[f];
		struct fn_scan fs = { fn, NULL };
		struct smap idx;
		size_t a, n_args;

		if (!fn->signature)
			continue;
		n_args = fn->signature->n_input_arg;
		fs.arg_key = tfk_calloc(n_args + 1, sizeof(int));
		if (!fs.arg_key || smap_init(&idx, fn->n_node_def)) {
			tfk_free(fs.arg_key);
			return oom(im);
		}
		for (i = 0; i < fn->n_node_def; i++)
			smap_put(&idx, fn->node_def[i]->name, (int)i);
		rc = scan_restores(im, fn->node_def, fn->n_node_def, &idx, 1,
				   found_fn, &fs);
		smap_release(&idx);
		for (a = 0; !rc && a < n_args; a++) {
			if (!fs.arg_key[a])
				continue;
			/* every top-level call of fn: its input a */
			for (i = 0; i < gd->n_node; i++) {
				const Tensorflow__NodeDef *c = gd->node[i], *v;
				const char *in, *an;
				int k;

				if (called_func(im, c) != fn)
					continue;
				in = data_input(c, (int)a);
				if (!in)
					continue;
				v = trace(&im->top->index, gd->node, 0, in,
					  &k, &an);
				if (v)
					smap_put(&im->varkeys, v->name,
						 fs.arg_key[a]);
			}
		}
		tfk_free(fs.arg_key);
		if (rc)
			return rc;
	}
	return 0;
}

static int open_bundle(struct imp *im)
{
	if (im->bundle)
		return 0;
	if (!im->var_prefix)
		return tfk_errf(im->err, TFK_EIO, "the model has variables "
				"but no variables/ directory");
	return tfk_bundle_open(&im->bundle, im->var_prefix, im->err);
}

/* checkpoint_key of the object graph attribute whose full_name is
 * name, or NULL. */
static const char *tog_key(struct imp *im, const char *name)
{
	size_t i, j;

	if (!im->tog && !im->bundle_tried) {
		struct tfk_tensor t;
		struct tfk_err e;

		im->bundle_tried = 1;
		tfk_err_clear(&e);
		memset(&t, 0, sizeof(t));
		if (!tfk_bundle_read(im->bundle, "_CHECKPOINTABLE_OBJECT_GRAPH",
				     &t, &e) && t.dtype == TFK_DT_STRING &&
		    tfk_tensor_numel(&t) == 1) {
			struct tfk_str s = tfk_tensor_str(&t, 0);

			im->tog = tensorflow__trackable_object_graph__unpack(
				NULL, s.len, (const uint8_t *)s.ptr);
		}
		tfk_tensor_release(&t);
	}
	if (!im->tog)
		return NULL;
	for (i = 0; i < im->tog->n_nodes; i++) {
		const Tensorflow__TrackableObjectGraph__TrackableObject *o =
			im->tog->nodes[i];

		for (j = 0; j < o->n_attributes; j++)
			if (o->attributes[j]->full_name &&
			    !strcmp(o->attributes[j]->full_name, name) &&
			    o->attributes[j]->checkpoint_key)
				return o->attributes[j]->checkpoint_key;
	}
	return NULL;
}

static int bundle_has(struct imp *im, const char *key)
{
	int i;

	for (i = 0; i < tfk_bundle_n(im->bundle); i++)
		if (!strcmp(tfk_bundle_key(im->bundle, i), key))
			return 1;
	return 0;
}

/* A VariableV2 node for variable node n (top-level name `name`). */
static int make_variable(struct imp *im, const struct scope *s,
			 const Tensorflow__NodeDef *n, const char *fname,
			 struct val *out)
{
	const Tensorflow__AttrValue *dt = node_attr(n, "dtype");
	const Tensorflow__AttrValue *sh = node_attr(n, "shape");
	const Tensorflow__AttrValue *sn = node_attr(n, "shared_name");
	const char *key = NULL;
	char shared[256], a[96], b[96];
	struct tfk_tensor t;
	int rank = -1, rc, k;
	int64_t dims[TFK_MAX_RANK];

	rc = open_bundle(im);
	if (rc)
		return tfk_err_prefix(im->err, "variable '%s'", fname);
	shared[0] = 0;
	if (sn && sn->value_case == TENSORFLOW__ATTR_VALUE__VALUE_S &&
	    sn->s.len && sn->s.len < sizeof(shared)) {
		memcpy(shared, sn->s.data, sn->s.len);
		shared[sn->s.len] = 0;
	}
	if (!s->caller) {
		k = smap_get(&im->varkeys, n->name);
		if (k > 0)
			key = im->keystore[k - 1];
	}
	if (!key)
		key = tog_key(im, shared[0] ? shared : n->name);
	if (!key && bundle_has(im, shared[0] ? shared : n->name))
		key = shared[0] ? shared : n->name;
	if (!key)
		return tfk_errf(im->err, TFK_EINVAL, "variable '%s': no "
				"checkpoint value (key '%s')", fname,
				shared[0] ? shared : n->name);
	rc = tfk_bundle_read(im->bundle, key, &t, im->err);
	if (rc)
		return tfk_err_prefix(im->err, "variable '%s'", fname);
	if (sh && sh->value_case == TENSORFLOW__ATTR_VALUE__VALUE_SHAPE &&
	    tfk_shape_from_proto(sh->shape, &rank, dims, im->err) == 0 &&
	    rank >= 0) {
		int ok = rank == t.rank, i;

		for (i = 0; ok && i < rank; i++)
			ok = dims[i] < 0 || dims[i] == t.shape[i];
		if (!ok)
			goto mismatch;
	}
	if (dt && dt->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE &&
	    strip_ref(dt->type) != (int)t.dtype)
		goto mismatch;
	rc = tfk_graph_variable(im->g, fname, &t, &out->port, im->err);
	tfk_tensor_release(&t);
	if (rc)
		return rc;
	im->out->n_variables++;
	return 0;
mismatch:
	rc = tfk_errf(im->err, TFK_EINVAL, "variable '%s': checkpoint key "
		      "'%s' has %s %s, the graph %s %s", fname, key,
		      tfk_dtype_name(t.dtype),
		      tfk_shape_str(t.rank, t.shape, a, sizeof(a)),
		      dt ? tfk_dtype_name((enum tfk_dtype)strip_ref(dt->type))
		      : "?", tfk_shape_str(rank, dims, b, sizeof(b)));
	tfk_tensor_release(&t);
	return rc;
}

/* Resolution ---------------------------------------------------------- */

static int resolve(struct imp *im, struct scope *s, const char *in,
		   struct val *out);
static int resolve_out(struct imp *im, struct scope *s, int ni, int k,
		       struct val *out);

/* Offset of output arg `arg` of node n among its flat outputs. */
static int out_arg_offset(struct imp *im, const Tensorflow__NodeDef *n,
			  const char *arg, size_t len, int *off)
{
	const struct tfk_op_def *def = tfk_op_find(n->op);
	int64_t ns;
	int i, o = 0;

#define IS(x) (len == strlen(x) && !memcmp(arg, x, len))
	*off = 0;
	if (!strcmp(n->op, "ParseExample") || !strcmp(n->op,
						      "ParseExampleV2")) {
		ns = attr_i(n, n->op[12] ? "num_sparse" : "Nsparse", 0);
		if (ns < 0 || ns > MAX_OUT_INDEX)
			return tfk_errf(im->err, TFK_EINVAL, "node %s: %" PRId64
					" sparse features not in 0..%d",
					n->name, ns, MAX_OUT_INDEX);
		if (IS("sparse_indices"))
			*off = 0;
		else if (IS("sparse_values"))
			*off = (int)ns;
		else if (IS("sparse_shapes"))
			*off = (int)(2 * ns);
		else if (IS("dense_values"))
			*off = (int)(3 * ns);
		else
			return tfk_errf(im->err, TFK_EINVAL, "node %s: output "
					"%.*s not supported", n->name,
					(int)len, arg);
		return 0;
	}
	if (!def || tfk_op_n_outputs(def) <= 1)
		return 0;
	for (i = 0; i < tfk_op_n_outputs(def); i++) {
		const struct tfk_arg_def *a = &def->outputs[i];

		int64_t k = a->number_attr ? attr_i(n, a->number_attr, 0) : 1;

		if (IS(a->name)) {
			*off = o;
			return 0;
		}
		if (k < 0 || k > MAX_OUT_INDEX - o)
			return tfk_errf(im->err, TFK_EINVAL, "node %s: %s = %"
					PRId64 " not in 0..%d", n->name,
					a->number_attr, k, MAX_OUT_INDEX);
		o += (int)k;
	}
#undef IS
	return tfk_errf(im->err, TFK_EINVAL, "node %s: op %s has no output "
			"%.*s", n->name, n->op, (int)len, arg);
}

static int fn_arg_index(const Tensorflow__FunctionDef *fn, const char *name)
{
	size_t i;

	for (i = 0; fn->signature && i < fn->signature->n_input_arg; i++)
		if (!strcmp(fn->signature->input_arg[i]->name, name))
			return (int)i;
	return -1;
}

static int resolve(struct imp *im, struct scope *s, const char *in,
		   struct val *out)
{
	int idx, ni, rc;
	size_t len;

	if (!s->caller) {
		char key[512];

		len = split_top(in, &idx);
		if (len < 400) {
			snprintf(key, sizeof(key), "%.*s:%d", (int)len, in, idx);
			ni = smap_get(&im->feeds, key);
			if (ni <= -2)
				return tfk_errf(im->err, TFK_EINVAL, "input "
						"'%s' is not given",
						im->out->feeds[-2 - ni].key);
			if (ni >= 0) {
				rc = tfk_graph_find(im->g,
						    im->out->feeds[ni].node,
						    &out->port, im->err);
				out->resource = 0;
				return rc;
			}
		}
		ni = smap_getn(&s->index, in, len);
		if (ni < 0)
			return tfk_errf(im->err, TFK_ENOTFOUND, "no node "
					"'%.*s' in the graph", (int)len, in);
		return resolve_out(im, s, ni, idx, out);
	} else {
		const char *arg;
		size_t arg_len;
		int off;

		if (split_fn(in, &len, &arg, &arg_len, &idx))
			return tfk_errf(im->err, TFK_EINVAL, "function %s: "
					"input '%.100s': output index not in "
					"0..%d", s->fn->signature->name, in,
					MAX_OUT_INDEX);
		if (!arg) {
			int a = fn_arg_index(s->fn, in);

			if (a < 0)
				return tfk_errf(im->err, TFK_ENOTFOUND,
						"function %s: no input '%s'",
						s->fn->signature->name, in);
			if (!s->args_have[a]) {
				const char *ci = data_input(s->call, a);

				if (!ci)
					return tfk_errf(im->err, TFK_EINVAL,
							"node %s: no input %d",
							s->call->name, a);
				rc = resolve(im, s->caller, ci, &s->args[a]);
				if (rc)
					return rc;
				s->args_have[a] = 1;
			}
			*out = s->args[a];
			return 0;
		}
		ni = smap_getn(&s->index, in, len);
		if (ni < 0)
			return tfk_errf(im->err, TFK_ENOTFOUND, "function %s: "
					"no node '%.*s'",
					s->fn->signature->name, (int)len, in);
		rc = out_arg_offset(im, s->nodes[ni], arg, arg_len, &off);
		if (rc)
			return rc;
		return resolve_out(im, s, ni, off + idx, out);
	}
}

/* A string Const's element j (as a new string) from port p. */
static char *const_str(struct imp *im, struct tfk_port p, int64_t j)
{
	const struct tfk_tensor *t = tfk_graph_const_value(im->g, p);
	struct tfk_str s;

	if (!t || t->dtype != TFK_DT_STRING || j >= tfk_tensor_numel(t))
		return NULL;
	s = tfk_tensor_str(t, j);
	return xstrndup(s.ptr ? s.ptr : "", s.len);
}

/* Dense output j of a ParseExample(V2) node -> a _ParseExampleDense. */
static int lower_parse(struct imp *im, struct scope *s,
		       const Tensorflow__NodeDef *n, const char *fname, int j,
		       struct val *out)
{
	int v2 = !strcmp(n->op, "ParseExampleV2");
	int64_t ns = attr_i(n, v2 ? "num_sparse" : "Nsparse", 0), nd;
	const Tensorflow__AttrValue *td = node_attr(n, "Tdense");
	const Tensorflow__AttrValue *ds = node_attr(n, "dense_shapes");
	struct tfk_port in[2];
	struct tfk_attr at[3];
	struct val v;
	char *key, *name;
	int rc, kidx, didx, rank;
	int64_t dims[TFK_MAX_RANK];

	if (ns)
		return tfk_errf(im->err, TFK_EINVAL, "node %s: sparse "
				"features are not supported", fname);
	if (v2) {
		const Tensorflow__AttrValue *rk = node_attr(n,
							    "ragged_value_types");

		if (rk && rk->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST
		    && rk->list->n_type)
			return tfk_errf(im->err, TFK_EINVAL, "node %s: ragged "
					"features are not supported", fname);
	}
	if (!td || td->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
	    !ds || ds->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST)
		return tfk_errf(im->err, TFK_EINVAL, "node %s: no Tdense or "
				"dense_shapes", fname);
	nd = (int64_t)td->list->n_type;
	j -= (int)(3 * ns);
	if (j < 0 || j >= nd || (size_t)nd != ds->list->n_shape)
		return tfk_errf(im->err, TFK_EINVAL, "node %s: output %d not "
				"supported (dense features only)", fname,
				j + (int)(3 * ns));
	/* V1: serialized, names, sparse_keys[ns], dense_keys[nd],
	 * dense_defaults[nd]; V2: serialized, names, sparse_keys,
	 * dense_keys, ragged_keys, dense_defaults[nd] */
	kidx = v2 ? 3 : 2 + (int)ns + j;
	didx = v2 ? 5 + j : 2 + (int)ns + (int)nd + j;
	rc = resolve(im, s, data_input(n, kidx) ? data_input(n, kidx) : "",
		     &v);
	if (rc)
		return tfk_err_prefix(im->err, "node %s: dense_keys", fname);
	{
		const struct tfk_tensor *kt = tfk_graph_const_value(im->g,
								    v.port);

		if (!kt || kt->dtype != TFK_DT_STRING ||
		    (v2 ? j : 0) >= tfk_tensor_numel(kt))
			return tfk_errf(im->err, TFK_EINVAL, "node %s: dense "
					"key %d is not a constant string",
					fname, j);
	}
	key = const_str(im, v.port, v2 ? j : 0);
	if (!key)
		return oom(im);
	rc = resolve(im, s, data_input(n, 0) ? data_input(n, 0) : "", &v);
	if (!rc) {
		in[0] = v.port;
		rc = resolve(im, s, data_input(n, didx) ? data_input(n, didx)
			     : "", &v);
		in[1] = v.port;
	}
	if (!rc)
		rc = tfk_shape_from_proto(ds->list->shape[j], &rank, dims,
				      im->err);
	name = tfk_malloc(strlen(fname) + 32);
	if (!rc && !name)
		rc = oom(im);
	if (!rc) {
		sprintf(name, "%s/dense_%d", fname, j);
		at[0] = TFK_A_STR("key", key);
		at[1] = TFK_A_TYPE("Tdense", (enum tfk_dtype)
				   strip_ref(td->list->type[j]));
		memset(&at[2], 0, sizeof(at[2]));
		at[2].name = "dense_shape";
		at[2].v.kind = TFK_ATTR_SHAPE;
		at[2].v.shape.rank = rank;
		memcpy(at[2].v.shape.dims, dims, sizeof(dims));
		rc = tfk_graph_add_node(im->g, "_ParseExampleDense", name, in,
					2, at, 3, &out->port, im->err);
	}
	tfk_free(name);
	tfk_free(key);
	out->resource = 0;
	return rc;
}

/* Ops a GraphDef may not name: internal lowerings and the sources the
 * importer makes itself. */
/* Tables ------------------------------------------------------------------ */

/*
 * HashTableV2 + InitializeTableFromTextFileV2 + LookupTableFindV2 (what
 * TF writes for a StaticHashTable over a vocabulary file, e.g. Keras'
 * StringLookup): the table is filled here, at import, as the loader's
 * init op would fill it after the restore, and the find becomes one
 * _TableFind node holding the table (kernels/cpu/tflookup.c). The file
 * name tensor is the asset path when asset_file_def names it
 * (DIR/assets/FILE, as loaders feed it), else its Const value. The file
 * is read as TF's TextFileLineIterator reads it with key_index -2 (the
 * whole line) and value_index -1 (the line number): lines end at '\n'
 * (a '\r' before it dropped), an empty line is an error, vocab_size
 * (-1: all) lines are read, each value is line number + offset.
 */

/* The node part of an input name ("x:1", "^x" -> "x"), in buf. */
static const char *input_node(const char *in, char *buf, size_t n)
{
	size_t len;

	if (in[0] == '^')
		in++;
	len = strcspn(in, ":");
	snprintf(buf, n, "%.*s", (int)len, in);
	return buf;
}

/* The initializer of table node tn in s (op in *op), or -1. */
static int table_init(const struct scope *s, const char *tn)
{
	char b[512];

	for (size_t i = 0; i < s->n_nodes; i++) {
		const Tensorflow__NodeDef *n = s->nodes[i];
		const char *in = data_input(n, 0);

		if ((!strcmp(n->op, "InitializeTableFromTextFileV2") ||
		     !strcmp(n->op, "InitializeTableFromTextFile")) && in &&
		    !strcmp(input_node(in, b, sizeof(b)), tn))
			return (int)i;
	}
	return -1;
}

/* The vocabulary file an initializer reads (owned), or NULL (err set). */
static char *table_path(struct imp *im, struct scope *s,
			const Tensorflow__NodeDef *init, const char *fname)
{
	const Tensorflow__MetaGraphDef *mg = im->mg->proto;
	const char *in = data_input(init, 1), *vp = im->var_prefix;
	const char *suf = "variables/variables";
	char a[512], b[512];
	struct val v;
	char *p;

	if (!in) {
		tfk_errf(im->err, TFK_EINVAL, "node %s: initializer without "
			 "a file name", fname);
		return NULL;
	}
	input_node(in, a, sizeof(a));
	for (size_t i = 0; mg && i < mg->n_asset_file_def; i++) {
		const Tensorflow__AssetFileDef *af = mg->asset_file_def[i];
		size_t dl;

		if (!af->tensor_info || !af->tensor_info->name ||
		    strcmp(input_node(af->tensor_info->name, b, sizeof(b)), a))
			continue;
		/* DIR/variables/variables -> DIR/assets/FILE */
		if (!vp || strlen(vp) < strlen(suf) ||
		    strcmp(vp + strlen(vp) - strlen(suf), suf) ||
		    strchr(af->filename, '/') || !af->filename[0]) {
			tfk_errf(im->err, TFK_EINVAL, "node %s: asset '%s': "
				 "cannot locate the assets directory", fname,
				 af->filename);
			return NULL;
		}
		dl = strlen(vp) - strlen(suf);
		p = tfk_malloc(dl + strlen(af->filename) + 8);
		if (!p) {
			oom(im);
			return NULL;
		}
		sprintf(p, "%.*sassets/%s", (int)dl, vp, af->filename);
		return p;
	}
	if (resolve(im, s, in, &v))
		return NULL;
	p = v.resource ? NULL : const_str(im, v.port, 0);
	if (!p)
		tfk_errf(im->err, TFK_EINVAL, "node %s: the table's file "
			 "name is neither an asset nor a string constant",
			 fname);
	return p;
}

int tfk_import_text_table(const char *text, size_t len, const char *name,
			  enum tfk_dtype kt, int64_t vocab_size,
			  int64_t offset, struct tfk_tensor *keys,
			  struct tfk_tensor *vals, struct tfk_err *err)
{
	int64_t n = 0, i;
	size_t s, e;
	int rc;

	if (kt != TFK_DT_STRING && kt != TFK_DT_INT64)
		return tfk_errf(err, TFK_EINVAL, "%s: keys of %s are not "
				"supported", name, tfk_dtype_name(kt));
	for (s = 0; s < len; s = e + 1) {	/* count lines */
		const char *nl = memchr(text + s, '\n', len - s);

		e = nl ? (size_t)(nl - text) : len;
		n++;
	}
	if (vocab_size >= 0 && n < vocab_size)
		return tfk_errf(err, TFK_EINVAL, "%s: invalid vocab_size: "
				"expected %lld lines but got %lld", name,
				(long long)vocab_size, (long long)n);
	if (vocab_size >= 0)
		n = vocab_size;
	if ((rc = tfk_tensor_init(keys, kt, 1, &n, err)))
		return rc;
	if ((rc = tfk_tensor_init(vals, TFK_DT_INT64, 1, &n, err))) {
		tfk_tensor_release(keys);
		return rc;
	}
	for (i = 0, s = 0; i < n && !rc; i++, s = e + 1) {
		const char *nl = memchr(text + s, '\n', len - s);
		size_t l;

		e = nl ? (size_t)(nl - text) : len;
		l = e - s;
		if (l && text[s + l - 1] == '\r')
			l--;
		((int64_t *)vals->data)[i] = (int64_t)((uint64_t)i +
							 (uint64_t)offset);
		if (!l) {
			rc = tfk_errf(err, TFK_EINVAL, "%s: line %lld is "
				      "empty", name, (long long)i + 1);
		} else if (kt == TFK_DT_STRING) {
			rc = tfk_tensor_set_str(keys, i, text + s, l, err);
		} else {
			char num[32], *end;

			snprintf(num, sizeof(num), "%.*s", (int)(l < 31 ? l :
				 31), text + s);
			errno = 0;
			((int64_t *)keys->data)[i] = strtoll(num, &end, 10);
			if (l > 30 || *end || errno || end == num)
				rc = tfk_errf(err, TFK_EINVAL, "%s: line %lld: "
					      "expected an integer", name,
					      (long long)i + 1);
		}
	}
	if (rc) {
		tfk_tensor_release(keys);
		tfk_tensor_release(vals);
	}
	return rc;
}

/* Fill keys (kt) and values (int64) from the file at path: a regular
 * file (a device or FIFO named by a hostile graph is refused, not read
 * forever) of at most 1 GiB. */
static int table_read(struct imp *im, const Tensorflow__NodeDef *init,
		      const char *fname, const char *path, enum tfk_dtype kt,
		      struct tfk_tensor *keys, struct tfk_tensor *vals)
{
	int64_t ki = attr_i(init, "key_index", 0);
	int64_t vi = attr_i(init, "value_index", 0);
	FILE *f;
	struct stat st;
	char *text;
	size_t len;
	int rc;

	if (ki != -2 || vi != -1)
		return tfk_errf(im->err, TFK_EINVAL, "node %s: a text file "
				"table with key_index %lld and value_index "
				"%lld is not supported (only -2, -1)", fname,
				(long long)ki, (long long)vi);
	f = fopen(path, "rb");
	if (!f)
		return tfk_errf(im->err, TFK_EIO, "node %s: vocabulary file "
				"%s: %s", fname, path, strerror(errno));
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) ||
	    st.st_size > ((off_t)1 << 30)) {
		fclose(f);
		return tfk_errf(im->err, TFK_EIO, "node %s: vocabulary file "
				"%s: not a regular file of at most 1 GiB",
				fname, path);
	}
	len = (size_t)st.st_size;
	text = tfk_malloc(len ? len : 1);
	if (!text) {
		fclose(f);
		return oom(im);
	}
	if (len && fread(text, 1, len, f) != len) {
		fclose(f);
		tfk_free(text);
		return tfk_errf(im->err, TFK_EIO, "node %s: vocabulary file "
				"%s: short read", fname, path);
	}
	fclose(f);
	rc = tfk_import_text_table(text, len, path, kt,
				   attr_i(init, "vocab_size", -1),
				   attr_i(init, "offset", 0), keys, vals,
				   im->err);
	tfk_free(text);
	if (rc)
		tfk_err_prefix(im->err, "node %s", fname);
	return rc;
}

/* The contents of the table LookupTableFindV2 n reads (its input 0: a
 * HashTableV2 of the top-level graph filled by a text file init). */
static int find_table(struct imp *im, struct scope *s,
		      const Tensorflow__NodeDef *n, const char *fname,
		      enum tfk_dtype *kt, struct tfk_tensor *keys,
		      struct tfk_tensor *vals)
{
	const Tensorflow__NodeDef *table, *init;
	const Tensorflow__AttrValue *kd, *vd;
	struct val tv;
	char *path;
	int ii, rc;

	if (n_data_inputs(n) != 3)
		return tfk_errf(im->err, TFK_EINVAL, "node %s: expected 3 "
				"inputs", fname);
	if ((rc = resolve(im, s, data_input(n, 0), &tv)))
		return rc;
	if (tv.resource != 2 || s->caller || tv.port.node < 0 ||
	    (size_t)tv.port.node >= s->n_nodes)
		return tfk_errf(im->err, TFK_EINVAL, "node %s: the table is "
				"not a HashTableV2 of the graph (tables in "
				"functions are not supported)", fname);
	table = s->nodes[tv.port.node];
	kd = node_attr(table, "key_dtype");
	vd = node_attr(table, "value_dtype");
	if (!kd || !vd || ((int)kd->type != TFK_DT_STRING &&
			   (int)kd->type != TFK_DT_INT64) ||
	    (int)vd->type != TFK_DT_INT64)
		return tfk_errf(im->err, TFK_EINVAL, "node %s: table %s: only "
				"string or int64 keys to int64 values are "
				"supported", fname, table->name);
	ii = table_init(s, table->name);
	if (ii < 0)
		return tfk_errf(im->err, TFK_EINVAL, "node %s: table %s has "
				"no InitializeTableFromTextFileV2", fname,
				table->name);
	init = s->nodes[ii];
	*kt = (enum tfk_dtype)kd->type;
	path = table_path(im, s, init, fname);
	if (!path)
		return TFK_EINVAL;
	rc = table_read(im, init, fname, path, *kt, keys, vals);
	tfk_free(path);
	return rc;
}

/* LookupTableFindV2 n (table, keys, default_value) -> _TableFind. */
static int lower_find(struct imp *im, struct scope *s,
		      const Tensorflow__NodeDef *n, const char *fname,
		      struct val *out)
{
	struct val kv, dv;
	struct tfk_tensor keys, vals;
	struct tfk_port in[2];
	enum tfk_dtype kt;
	int rc;

	if ((rc = find_table(im, s, n, fname, &kt, &keys, &vals)))
		return rc;
	if ((rc = resolve(im, s, data_input(n, 1), &kv)) ||
	    (rc = resolve(im, s, data_input(n, 2), &dv)))
		goto out;
	if (tfk_graph_desc(im->g, kv.port)->dtype != kt ||
	    tfk_graph_desc(im->g, dv.port)->dtype != TFK_DT_INT64) {
		rc = tfk_errf(im->err, TFK_EINVAL, "node %s: keys or default "
			      "of the wrong dtype for the table", fname);
		goto out;
	}
	in[0] = kv.port;
	in[1] = dv.port;
	{
		struct tfk_attr a[2] = { TFK_A_TENSOR("keys", &keys),
					 TFK_A_TENSOR("values", &vals) };

		rc = tfk_graph_add_node(im->g, "_TableFind", fname, in, 2, a,
					2, &out->port, im->err);
	}
	out->resource = 0;
out:
	tfk_tensor_release(&keys);
	tfk_tensor_release(&vals);
	return rc;
}

/* The node of scope s an input names, or NULL. */
static const Tensorflow__NodeDef *input_nodedef(const struct scope *s,
						const char *in, int *k)
{
	size_t len;
	int ni;

	if (!in || in[0] == '^')
		return NULL;
	len = strcspn(in, ":");
	*k = 0;
	if (in[len] == ':' && out_index(in + len + 1, k))
		return NULL;
	ni = smap_getn(&s->index, in, len);
	return ni < 0 ? NULL : s->nodes[ni];
}

static int64_t const_i(struct imp *im, struct tfk_port p, int64_t j,
		       int *ok)
{
	const struct tfk_tensor *t = tfk_graph_const_value(im->g, p);

	*ok = t && (t->dtype == TFK_DT_INT64 || t->dtype == TFK_DT_INT32) &&
	      j < tfk_tensor_numel(t);
	if (!*ok)
		return 0;
	return t->dtype == TFK_DT_INT64 ? ((const int64_t *)t->data)[j] :
		((const int32_t *)t->data)[j];
}

/*
 * RaggedTensorToTensor(shape [?, L], values, default, nrows,
 * value_rowids) over a whitespace StringSplitV2 whose values went
 * through a LookupTableFindV2 (and Keras' mask SelectV2) -- what a
 * TextVectorization in int mode with output_sequence_length L traces
 * to -- as one _SplitLookupPad (kernels/cpu/tflookup.c). The split's
 * outputs have data-dependent sizes, so nothing between the split and
 * the padding is imported on its own; other ragged graphs are refused.
 */
static int lower_ragged(struct imp *im, struct scope *s,
			const Tensorflow__NodeDef *n, const char *fname,
			struct val *out)
{
	const Tensorflow__AttrValue *rp = node_attr(n, "row_partition_types");
	const Tensorflow__NodeDef *v, *f, *sp;
	struct val shv, pv, dv, xv, sepv;
	struct tfk_tensor keys, vals;
	enum tfk_dtype kt;
	int64_t len, pad;
	int k, ok, rc;
	char *sep;

	if (!rp || rp->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
	    rp->list->n_s != 2 || rp->list->s[0].len != 14 ||
	    memcmp(rp->list->s[0].data, "FIRST_DIM_SIZE", 14) ||
	    rp->list->s[1].len != 12 ||
	    memcmp(rp->list->s[1].data, "VALUE_ROWIDS", 12) ||
	    n_data_inputs(n) != 5)
		return tfk_errf(im->err, TFK_EINVAL, "node %s: only row "
				"partitions FIRST_DIM_SIZE, VALUE_ROWIDS are "
				"supported", fname);
	if ((rc = resolve(im, s, data_input(n, 0), &shv)) ||
	    (rc = resolve(im, s, data_input(n, 2), &pv)))
		return rc;
	len = const_i(im, shv.port, 1, &ok);
	if (!ok || len < 0)
		return tfk_errf(im->err, TFK_EINVAL, "node %s: shape must be "
				"a constant [?, L]", fname);
	pad = const_i(im, pv.port, 0, &ok);
	if (!ok)
		return tfk_errf(im->err, TFK_EINVAL, "node %s: default_value "
				"must be a constant", fname);
	/* values: [SelectV2(mask, m, )] LookupTableFindV2(t, split:1, d) */
	v = input_nodedef(s, data_input(n, 1), &k);
	if (v && !strcmp(v->op, "SelectV2"))
		v = input_nodedef(s, data_input(v, 2), &k);
	f = v && !strcmp(v->op, "LookupTableFindV2") ? v : NULL;
	sp = f ? input_nodedef(s, data_input(f, 1), &k) : NULL;
	if (!sp || strcmp(sp->op, "StringSplitV2") || k != 1 ||
	    attr_i(sp, "maxsplit", -1) != -1)
		return tfk_errf(im->err, TFK_EINVAL, "node %s: only a "
				"StringSplitV2 looked up by LookupTableFindV2 "
				"can be padded here (TextVectorization)",
				fname);
	if ((rc = resolve(im, s, data_input(sp, 1), &sepv)))
		return rc;
	sep = const_str(im, sepv.port, 0);
	if (!sep || sep[0]) {
		tfk_free(sep);
		return tfk_errf(im->err, TFK_EINVAL, "node %s: only the "
				"whitespace split (sep \"\") is supported",
				sp->name);
	}
	tfk_free(sep);
	if ((rc = find_table(im, s, f, fname, &kt, &keys, &vals)))
		return rc;
	if (kt != TFK_DT_STRING) {
		rc = tfk_errf(im->err, TFK_EINVAL, "node %s: the table's keys "
			      "are not strings", fname);
		goto out;
	}
	if ((rc = resolve(im, s, data_input(sp, 0), &xv)) ||
	    (rc = resolve(im, s, data_input(f, 2), &dv)))
		goto out;
	{
		struct tfk_port in[2] = { xv.port, dv.port };
		struct tfk_attr a[4] = { TFK_A_TENSOR("keys", &keys),
					 TFK_A_TENSOR("values", &vals),
					 TFK_A_INT("length", len),
					 TFK_A_INT("pad", pad) };

		rc = tfk_graph_add_node(im->g, "_SplitLookupPad", fname, in,
					2, a, 4, &out->port, im->err);
	}
	out->resource = 0;
out:
	tfk_tensor_release(&keys);
	tfk_tensor_release(&vals);
	return rc;
}

/* Variable writes ------------------------------------------------------ */

/* _AssignVariable's mode for a TF variable-writing op, or -1. */
static int assign_mode(const char *op, int *resource)
{
	static const char *const ops[] = {
		"Assign", "AssignAdd", "AssignSub", "AssignVariableOp",
		"AssignAddVariableOp", "AssignSubVariableOp"
	};
	int i;

	for (i = 0; i < 6; i++)
		if (!strcmp(op, ops[i])) {
			*resource = i >= 3;
			return i % 3;
		}
	return -1;
}

static int add_target(struct imp *im, const char *name, int var)
{
	struct tfk_import *o = im->out;
	char **t = tfk_realloc(o->targets, (o->n_targets + 1) * sizeof(*t));
	int *a, i;

	if (!t)
		return oom(im);
	o->targets = t;
	if (!(t[o->n_targets] = xstrdup(name)))
		return oom(im);
	o->n_targets++;
	for (i = 0; i < o->n_assigned; i++)
		if (o->assigned[i] == var)
			return 0;
	a = tfk_realloc(o->assigned, (o->n_assigned + 1) * sizeof(*a));
	if (!a)
		return oom(im);
	o->assigned = a;
	a[o->n_assigned++] = var;
	return 0;
}

/*
 * A write of a variable (see tfcompat.c's _AssignVariable): input 0
 * must resolve to a VariableV2 node (a ref, or a resource handle for
 * the *VariableOp forms), whose tensor the kernel writes in place.
 */
static int lower_assign(struct imp *im, struct scope *s,
			const Tensorflow__NodeDef *n, const char *fname,
			struct val *out)
{
	const struct tfk_node *vn;
	struct val v, x;
	struct tfk_port in[2], p;
	struct tfk_attr a[2];
	int resource = 0, mode = assign_mode(n->op, &resource), rc;

	if (n_data_inputs(n) != 2)
		return tfk_errf(im->err, TFK_EINVAL, "node %s: op %s: %d "
				"inputs, expected 2", fname, n->op,
				n_data_inputs(n));
	if ((rc = resolve(im, s, data_input(n, 0), &v)) ||
	    (rc = resolve(im, s, data_input(n, 1), &x)))
		return rc;
	vn = tfk_graph_node(im->g, v.port.node);
	if (!vn || vn->variable < 0 || v.port.index ||
	    v.resource != resource)
		return tfk_errf(im->err, TFK_EINVAL, "node %s: op %s: input 0 "
				"is not a %s", fname, n->op, resource ?
				"resource variable handle" : "variable");
	if (x.resource)
		return tfk_errf(im->err, TFK_EINVAL, "node %s: op %s: input 1 "
				"is a resource handle", fname, n->op);
	in[0] = v.port;
	in[1] = x.port;
	a[0] = TFK_A_TYPE("T", vn->outputs[0].dtype);
	a[1] = TFK_A_INT("mode", mode);
	rc = tfk_graph_add_node(im->g, "_AssignVariable", fname, in, 2, a, 2,
				&p, im->err);
	if (rc)
		return rc;
	out->port = p;
	out->resource = 0;
	return add_target(im, fname, vn->variable);
}

/* Resolve the variable writes among the nodes named by inputs[] (the
 * "^node" control inputs, or a function's control_ret names when ctl
 * is 0), so they run before the node that waits on them. */
static int resolve_writes(struct imp *im, struct scope *s, char **names,
			  size_t n, int ctl)
{
	size_t i;
	int ni, rc, res;
	struct val v;

	for (i = 0; i < n; i++) {
		const char *nm = names[i];

		if (ctl) {
			if (!is_control(nm))
				continue;
			nm++;
		}
		ni = smap_get(&s->index, nm);
		if (ni < 0 || assign_mode(s->nodes[ni]->op, &res) < 0)
			continue;
		if ((rc = resolve_out(im, s, ni, 0, &v)))
			return rc;
	}
	return 0;
}

static int op_is_internal(const char *op)
{
	return op[0] == '_' || !strcmp(op, "VariableV2");
}

/* Add node ni of s as a registry op (all outputs). */
static int add_generic(struct imp *im, struct scope *s, int ni,
		       const char *fname, struct memo *m)
{
	const Tensorflow__NodeDef *n = s->nodes[ni];
	const struct tfk_op_def *def = tfk_op_find(n->op);
	const struct tfk_node *node;
	struct tfk_port *in = NULL, p;
	struct attrs as;
	int nin = n_data_inputs(n), i, rc = 0;

	if (!def || op_is_internal(n->op))
		return tfk_errf(im->err, TFK_EINVAL, "node %s: op %s is not "
				"supported", fname, n->op);
	in = tfk_calloc(nin + 1, sizeof(*in));
	if (!in)
		return oom(im);
	for (i = 0; i < nin && !rc; i++) {
		struct val v;

		rc = resolve(im, s, data_input(n, i), &v);
		if (!rc && v.resource)
			rc = tfk_errf(im->err, TFK_EINVAL, "node %s: op %s "
				      "on a resource handle is not supported",
				      fname, n->op);
		in[i] = v.port;
	}
	if (rc) {
		tfk_free(in);
		return rc;
	}
	rc = attrs_convert(im, n, fname, def, &as);
	if (!rc)
		rc = tfk_graph_add_node(im->g, n->op, fname, in, nin, as.a,
					as.n, &p, im->err);
	attrs_release(&as);
	tfk_free(in);
	if (rc)
		return rc;
	node = tfk_graph_node(im->g, p.node);
	if (!(def->flags & TFK_OP_SOURCE) && !tfk_kernel_find(node, "cpu"))
		return tfk_errf(im->err, TFK_EINVAL, "node %s: op %s has no "
				"cpu kernel for these attrs", fname, n->op);
	m->n_out = node->n_outputs;
	m->vals = tfk_calloc(m->n_out + 1, sizeof(*m->vals));
	m->have = tfk_calloc(m->n_out + 1, 1);
	if (!m->vals || !m->have)
		return oom(im);
	for (i = 0; i < m->n_out; i++) {
		m->vals[i].port.node = p.node;
		m->vals[i].port.index = i;
		m->have[i] = 1;
	}
	return 0;
}

static int lazy_slots(struct imp *im, struct memo *m, int n)
{
	if (m->vals)
		return 0;
	m->n_out = n;
	m->vals = tfk_calloc(n + 1, sizeof(*m->vals));
	m->have = tfk_calloc(n + 1, 1);
	return m->vals && m->have ? 0 : oom(im);
}

/* Output k of node ni of scope s. */
static int resolve_out(struct imp *im, struct scope *s, int ni, int k,
		       struct val *out)
{
	const Tensorflow__NodeDef *n = s->nodes[ni];
	struct memo *m = &s->memo[ni];
	const Tensorflow__FunctionDef *fn;
	char *fname = NULL;
	int rc = 0, res;

	if (k < 0 || k > MAX_OUT_INDEX)
		return tfk_errf(im->err, TFK_EINVAL, "node %s%s: output %d "
				"not in 0..%d", s->prefix, n->name, k,
				MAX_OUT_INDEX);
	if (m->state == 2 && k < m->n_out && m->have[k]) {
		*out = m->vals[k];
		return 0;
	}
	if (m->state == 1 && !m->callee)
		return tfk_errf(im->err, TFK_EINVAL, "node %s%s: cycle in the "
				"graph", s->prefix, n->name);
	if (++im->depth > MAX_DEPTH) {
		im->depth--;
		return tfk_errf(im->err, TFK_EINVAL, "node %s%s: graph nested "
				"deeper than %d", s->prefix, n->name,
				MAX_DEPTH);
	}
	fname = full_name(s, n->name);
	if (!fname) {
		rc = oom(im);
		goto done;
	}
	fn = called_func(im, n);
	if (fn) {
		/* one inlined scope per call node; outputs on demand */
		const Tensorflow__OpDef *sig = fn->signature;
		const char *ret = NULL, *oname;
		size_t j;

		if (!sig) {
			rc = tfk_errf(im->err, TFK_EINVAL, "node %s: function "
				      "without signature", fname);
			goto done;
		}
		rc = lazy_slots(im, m, (int)sig->n_output_arg);
		if (rc)
			goto done;
		if (!m->callee && s->level >= MAX_CALLS) {
			rc = tfk_errf(im->err, TFK_EINVAL, "function %s: calls "
				      "nested deeper than %d (recursion?)",
				      sig->name, MAX_CALLS);
			goto done;
		}
		if (!m->callee && fn->n_node_def > im->max_inlined -
		    im->n_inlined) {
			rc = tfk_errf(im->err, TFK_EINVAL, "node %s: inlining "
				      "function %s would pass %" PRIu64
				      " inlined nodes (TFK_MAX_IMPORT_NODES; "
				      "calls that fan out?)", fname,
				      sig->name, im->max_inlined);
			goto done;
		}
		if (!m->callee) {
			char *pre = tfk_malloc(strlen(fname) + 2);
			struct scope *c;

			im->n_inlined += fn->n_node_def;
			if (!pre) {
				rc = oom(im);
				goto done;
			}
			sprintf(pre, "%s/", fname);
			c = scope_new(im, fn->node_def, fn->n_node_def, pre);
			tfk_free(pre);
			if (!c) {
				rc = oom(im);
				goto done;
			}
			c->caller = s;
			c->level = s->level + 1;
			c->call = n;
			c->fn = fn;
			c->args = tfk_calloc(sig->n_input_arg + 1,
					     sizeof(*c->args));
			c->args_have = tfk_calloc(sig->n_input_arg + 1, 1);
			if (!c->args || !c->args_have) {
				rc = oom(im);
				goto done;
			}
			m->callee = c;
		}
		if (k < 0 || (size_t)k >= sig->n_output_arg) {
			rc = tfk_errf(im->err, TFK_EINVAL, "node %s: no output "
				      "%d", fname, k);
			goto done;
		}
		oname = sig->output_arg[k]->name;
		for (j = 0; j < fn->n_ret; j++)
			if (!strcmp(fn->ret[j]->key, oname))
				ret = fn->ret[j]->value;
		if (!ret) {
			rc = tfk_errf(im->err, TFK_EINVAL, "function %s: no "
				      "ret for output %s", sig->name, oname);
			goto done;
		}
		m->state = 1;
		rc = resolve(im, m->callee, ret, &m->vals[k]);
		/* writes the function makes whatever its outputs read (its
		 * control outputs), once per call */
		if (!rc && !m->callee->writes_done) {
			char **names = tfk_calloc(fn->n_control_ret + 1,
						  sizeof(*names));

			m->callee->writes_done = 1;
			if (!names) {
				rc = oom(im);
				goto done;
			}
			for (j = 0; j < fn->n_control_ret; j++)
				names[j] = fn->control_ret[j]->value;
			rc = resolve_writes(im, m->callee, names,
					    fn->n_control_ret, 0);
			tfk_free(names);
		}
		if (!rc) {
			m->have[k] = 1;
			m->state = 2;
		}
		goto done;
	}
	if (m->state == 2 || m->state == 1) {
		/* lazily lowered multi-output nodes */
		if (m->state == 1) {
			rc = tfk_errf(im->err, TFK_EINVAL, "node %s: cycle in "
				      "the graph", fname);
			goto done;
		}
	}
	m->state = 1;
	/* writes this node waits for run first (TF2's automatic control
	 * dependencies order a read after the assign before it) */
	if ((rc = resolve_writes(im, s, n->input, n->n_input, 1)))
		goto fail;
	if (assign_mode(n->op, &res) >= 0) {
		rc = lazy_slots(im, m, 1);
		if (!rc)
			rc = lower_assign(im, s, n, fname, &m->vals[0]);
		if (!rc)
			m->have[0] = 1;
	} else if (!strcmp(n->op, "Identity") ||
		   !strcmp(n->op, "ReadVariableOp") ||
	    !strcmp(n->op, "Snapshot")) {
		rc = lazy_slots(im, m, 1);
		if (!rc)
			rc = resolve(im, s, data_input(n, 0) ?
				     data_input(n, 0) : "", &m->vals[0]);
		if (!rc) {
			if (!strcmp(n->op, "ReadVariableOp"))
				m->vals[0].resource = 0;
			m->have[0] = 1;
		}
	} else if (!strcmp(n->op, "IdentityN")) {
		rc = lazy_slots(im, m, n_data_inputs(n));
		if (!rc && (k < 0 || k >= m->n_out))
			rc = tfk_errf(im->err, TFK_EINVAL, "node %s: no output "
				      "%d", fname, k);
		if (!rc)
			rc = resolve(im, s, data_input(n, k), &m->vals[k]);
		if (!rc)
			m->have[k] = 1;
	} else if (!strcmp(n->op, "VariableV2") || !strcmp(n->op, "Variable")
		   || !strcmp(n->op, "VarHandleOp")) {
		rc = lazy_slots(im, m, 1);
		if (!rc)
			rc = make_variable(im, s, n, fname, &m->vals[0]);
		if (!rc) {
			m->vals[0].resource = !strcmp(n->op, "VarHandleOp");
			m->have[0] = 1;
		}
	} else if (!strcmp(n->op, "ParseExample") ||
		   !strcmp(n->op, "ParseExampleV2")) {
		rc = lazy_slots(im, m, k + 1 > 64 ? k + 1 : 64);
		if (!rc && (k < 0 || k >= m->n_out))
			rc = tfk_errf(im->err, TFK_EINVAL, "node %s: no output "
				      "%d", fname, k);
		if (!rc)
			rc = lower_parse(im, s, n, fname, k, &m->vals[k]);
		if (!rc)
			m->have[k] = 1;
	} else if (!strcmp(n->op, "HashTableV2") ||
		   !strcmp(n->op, "HashTable")) {
		/* a handle: LookupTableFindV2 finds the node by it */
		rc = lazy_slots(im, m, 1);
		if (!rc) {
			m->vals[0].port.node = ni;
			m->vals[0].port.index = 0;
			m->vals[0].resource = 2;
			m->have[0] = 1;
		}
	} else if (!strcmp(n->op, "RaggedTensorToTensor")) {
		rc = lazy_slots(im, m, 1);
		if (!rc)
			rc = lower_ragged(im, s, n, fname, &m->vals[0]);
		if (!rc)
			m->have[0] = 1;
	} else if (!strcmp(n->op, "LookupTableFindV2") ||
		   !strcmp(n->op, "LookupTableFind")) {
		rc = lazy_slots(im, m, 1);
		if (!rc)
			rc = lower_find(im, s, n, fname, &m->vals[0]);
		if (!rc)
			m->have[0] = 1;
	} else if (!strcmp(n->op, "Placeholder") && s->caller) {
		rc = tfk_errf(im->err, TFK_EINVAL, "node %s: Placeholder in a "
			      "function", fname);
	} else {
		rc = add_generic(im, s, ni, fname, m);
	}
fail:
	if (!rc) {
		m->state = 2;
		if (k < 0 || k >= m->n_out || !m->have[k])
			rc = tfk_errf(im->err, TFK_EINVAL, "node %s: op %s has "
				      "no output %d", fname, n->op, k);
		else
			*out = m->vals[k];
	} else if (m->state == 1) {
		m->state = m->vals ? 2 : 0;
	}
done:
	if (!rc && fn)
		*out = m->vals[k];
	tfk_free(fname);
	im->depth--;
	return rc;
}

/* Public ---------------------------------------------------------------- */

void tfk_import_free(struct tfk_import *imp)
{
	int i;

	if (!imp)
		return;
	tfk_graph_free(imp->g);
	for (i = 0; i < imp->n_feeds; i++) {
		tfk_free((char *)imp->feeds[i].key);
		tfk_free((char *)imp->feeds[i].tensor);
		tfk_free((char *)imp->feeds[i].node);
	}
	for (i = 0; i < imp->n_fetches; i++) {
		tfk_free((char *)imp->fetches[i].key);
		tfk_free((char *)imp->fetches[i].tensor);
	}
	for (i = 0; i < imp->n_targets; i++)
		tfk_free(imp->targets[i]);
	tfk_free(imp->targets);
	tfk_free(imp->assigned);
	tfk_free(imp->feeds);
	tfk_free(imp->fetches);
	tfk_free(imp);
}

static int is_fed(const char *key, const char *const *fed, int n_fed)
{
	int i;

	if (n_fed < 0)
		return 1;
	for (i = 0; i < n_fed; i++)
		if (!strcmp(fed[i], key))
			return 1;
	return 0;
}

/* Placeholders for the signature's inputs (those fed). */
static int make_feeds(struct imp *im, const struct tfk_signature *sig,
		      const char *const *fed, int n_fed)
{
	struct tfk_import *o = im->out;
	int i, rc;

	o->feeds = tfk_calloc(sig->n_inputs + 1, sizeof(*o->feeds));
	if (!o->feeds || smap_init(&im->feeds, sig->n_inputs + 1))
		return oom(im);
	for (i = 0; i < sig->n_inputs; i++) {
		const struct tfk_tensor_info *ti = &sig->inputs[i];
		struct tfk_import_feed *f = &o->feeds[i];
		const Tensorflow__NodeDef *n;
		struct tfk_port p;
		char *key;
		size_t len;
		int idx, ni, d;

		f->key = xstrdup(ti->key);
		f->tensor = xstrdup(ti->name);
		o->n_feeds = i + 1;
		if (!f->key || !f->tensor)
			return oom(im);
		if (ti->encoding != TFK_TINFO_NAME)
			return tfk_errf(im->err, TFK_EINVAL, "input '%s': "
					"sparse and composite inputs are not "
					"supported", ti->key);
		d = strip_ref(ti->dtype);
		if (!dtype_ok(d))
			return tfk_errf(im->err, TFK_EINVAL, "input '%s': "
					"DataType %d not supported", ti->key,
					ti->dtype);
		f->dtype = (enum tfk_dtype)d;
		len = split_top(ti->name, &idx);
		ni = smap_getn(&im->top->index, ti->name, len);
		if (ni < 0)
			return tfk_errf(im->err, TFK_ENOTFOUND, "input '%s': "
					"tensor '%s' not in the graph",
					ti->key, ti->name);
		n = im->gd->node[ni];
		/* TF1's Session feeds the tensor, so the placeholder's dtype
		 * is what a run takes, whatever the TensorInfo says (a
		 * regress signature declaring DT_FLOAT over serialized
		 * Examples) */
		if (idx == 0 && (!strcmp(n->op, "Placeholder") ||
				 !strcmp(n->op, "PlaceholderWithDefault"))) {
			const Tensorflow__AttrValue *pd = node_attr(n, "dtype");

			if (pd && pd->value_case ==
			    TENSORFLOW__ATTR_VALUE__VALUE_TYPE &&
			    dtype_ok(strip_ref(pd->type)))
				f->dtype = (enum tfk_dtype)strip_ref(pd->type);
		}
		f->rank = -1;
		if (ti->has_shape && !ti->unknown_rank) {
			if (ti->rank > TFK_MAX_RANK)
				return tfk_errf(im->err, TFK_EINVAL, "input "
						"'%s': rank %d", ti->key,
						ti->rank);
			f->rank = ti->rank;
			if (ti->rank)
				memcpy(f->shape, ti->dims,
				       ti->rank * sizeof(int64_t));
		}
		if (!is_fed(ti->key, fed, n_fed)) {
			/* a Placeholder left unfed is named by its key when
			 * the outputs need it (not a PlaceholderWithDefault:
			 * its default runs) */
			if (strcmp(n->op, "Placeholder"))
				continue;
			key = tfk_malloc(len + 24);
			if (!keep(im, key))
				return oom(im);
			sprintf(key, "%.*s:%d", (int)len, ti->name, idx);
			if (smap_get(&im->feeds, key) == -1)
				smap_put(&im->feeds, key, -2 - i);
			continue;
		}
		if (idx == 0)
			f->node = xstrdup(n->name);
		else {
			char *p2 = tfk_malloc(len + 24);

			if (p2)
				sprintf(p2, "%.*s/output_%d", (int)len,
					ti->name, idx);
			f->node = p2;
		}
		key = tfk_malloc(len + 24);
		if (!f->node || !keep(im, key))
			return oom(im);
		sprintf(key, "%.*s:%d", (int)len, ti->name, idx);
		if (smap_get(&im->feeds, key) >= 0)
			return tfk_errf(im->err, TFK_EINVAL, "input '%s': "
					"tensor '%s' is fed twice", ti->key,
					ti->name);
		smap_set(&im->feeds, key, i);
		rc = tfk_graph_placeholder(im->g, f->node, f->dtype, f->rank,
					   f->shape, &p, im->err);
		if (rc)
			return tfk_err_prefix(im->err, "input '%s'", ti->key);
	}
	return 0;
}

static int make_fetches(struct imp *im, const struct tfk_signature *sig)
{
	struct tfk_import *o = im->out;
	int i, rc;

	o->fetches = tfk_calloc(sig->n_outputs + 1, sizeof(*o->fetches));
	if (!o->fetches)
		return oom(im);
	for (i = 0; i < sig->n_outputs; i++) {
		const struct tfk_tensor_info *ti = &sig->outputs[i];
		struct tfk_import_fetch *f = &o->fetches[i];
		const struct tfk_tdesc *d;
		struct val v;

		f->key = xstrdup(ti->key);
		f->tensor = xstrdup(ti->name);
		o->n_fetches = i + 1;
		if (!f->key || !f->tensor)
			return oom(im);
		if (ti->encoding != TFK_TINFO_NAME)
			return tfk_errf(im->err, TFK_EINVAL, "output '%s': "
					"sparse and composite outputs are not "
					"supported", ti->key);
		rc = resolve(im, im->top, ti->name, &v);
		if (rc)
			return tfk_err_prefix(im->err, "output '%s'", ti->key);
		if (v.resource)
			return tfk_errf(im->err, TFK_EINVAL, "output '%s': a "
					"resource handle", ti->key);
		d = tfk_graph_desc(im->g, v.port);
		f->dtype = d ? d->dtype : TFK_DT_INVALID;
		rc = tfk_graph_set_output(im->g, ti->key, v.port, im->err);
		if (rc)
			return rc;
	}
	return 0;
}

int tfk_import_signature(struct tfk_import **imp,
			 const struct tfk_meta_graph *mg,
			 const struct tfk_signature *sig,
			 const char *var_prefix, struct tfk_err *err)
{
	return tfk_import_signature_fed(imp, mg, sig, NULL, -1, var_prefix,
					err);
}

int tfk_import_signature_fed(struct tfk_import **imp,
			     const struct tfk_meta_graph *mg,
			     const struct tfk_signature *sig,
			     const char *const *fed, int n_fed,
			     const char *var_prefix, struct tfk_err *err)
{
	struct imp im;
	size_t i;
	int rc;

	*imp = NULL;
	memset(&im, 0, sizeof(im));
	im.mg = mg;
	im.gd = mg->graph_def;
	im.var_prefix = var_prefix;
	im.err = err;
	rc = tfk_limit_get("TFK_MAX_IMPORT_NODES", TFK_IMPORT_MAX_NODES_DEFAULT,
			   &im.max_inlined, err);
	if (rc)
		return rc;
	im.out = tfk_calloc(1, sizeof(*im.out));
	if (!im.out)
		return oom(&im);
	rc = tfk_graph_new(&im.out->g, err);
	if (rc)
		goto out;
	im.g = im.out->g;
	im.top = scope_new(&im, im.gd->node, im.gd->n_node, "");
	if (!im.top) {
		rc = oom(&im);
		goto out;
	}
	if (smap_init(&im.funcs, im.gd->library ?
		      im.gd->library->n_function : 0)) {
		rc = oom(&im);
		goto out;
	}
	for (i = 0; im.gd->library && i < im.gd->library->n_function; i++) {
		const Tensorflow__FunctionDef *f = im.gd->library->function[i];

		if (f->signature && f->signature->name)
			smap_put(&im.funcs, f->signature->name, (int)i);
	}
	rc = build_varkeys(&im);
	if (!rc)
		rc = make_feeds(&im, sig, fed, n_fed);
	if (!rc)
		rc = make_fetches(&im, sig);
out:
	while (im.scopes) {
		struct scope *s = im.scopes;

		im.scopes = s->next_alloc;
		scope_free(s);
	}
	smap_release(&im.funcs);
	smap_release(&im.feeds);
	smap_release(&im.varkeys);
	for (i = 0; i < (size_t)im.n_keystore; i++)
		tfk_free(im.keystore[i]);
	tfk_free(im.keystore);
	tfk_bundle_close(im.bundle);
	if (im.tog)
		tensorflow__trackable_object_graph__free_unpacked(im.tog,
								  NULL);
	if (rc) {
		tfk_import_free(im.out);
		return rc;
	}
	*imp = im.out;
	return 0;
}

int tfk_import_op_supported(const char *op)
{
	static const char *const lowered[] = {
		"Identity", "IdentityN", "ReadVariableOp", "VarHandleOp",
		"VariableV2", "Variable", "Snapshot", "ParseExample",
		"ParseExampleV2", "StatefulPartitionedCall",
		"PartitionedCall", "Placeholder", "Const", "HashTableV2",
		"HashTable", "LookupTableFindV2", "LookupTableFind",
		"InitializeTableFromTextFileV2", "InitializeTableFromTextFile",
		"RaggedTensorToTensor", "StringSplitV2", "Assign",
		"AssignAdd", "AssignSub", "AssignVariableOp",
		"AssignAddVariableOp", "AssignSubVariableOp", NULL
	};
	const struct tfk_op_def *def = tfk_op_find(op);
	const struct tfk_kernel *k;
	struct tfk_node n;
	int i;

	for (i = 0; lowered[i]; i++)
		if (!strcmp(op, lowered[i]))
			return 1;
	if (!def || op[0] == '_')
		return 0;
	memset(&n, 0, sizeof(n));
	n.op = def;
	n.variable = -1;
	k = tfk_kernel_find(&n, "cpu");
	return k != NULL;
}
