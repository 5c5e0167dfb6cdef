/*
 * graph.c - the op-graph IR (see graph.h).
 *
 * Nodes are heap objects held by an array of pointers, so a node pointer
 * stays valid while the graph grows; names are found through an
 * open-addressing hash of node indices (graphs from SavedModels have
 * tens of thousands of nodes, where a linear scan per added node would be
 * quadratic). A node is built completely on the side (attrs copied,
 * inputs checked, outputs inferred) and only then appended, so a failed
 * add leaves no trace.
 *
 * Gradients are kann-style reverse accumulation over the index order:
 * nodes that lie on a path from an x to a y get their op's gradient
 * builder called once, last consumer first; contributions to one port
 * are summed as they arrive. Builders add ordinary nodes, so the backward
 * pass is a graph an executor prunes and plans like any other.
 */
#include "graph/graph.h"
#include "util/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct var {
	char *name;
	struct tfk_tensor *t;
};

struct named_port {
	char *name;
	struct tfk_port port;
};

struct tfk_graph {
	struct tfk_node **nodes;
	int n, cap;
	int *hash;		/* node index + 1; 0 empty; size hcap */
	size_t hcap;
	struct var *vars;
	int n_vars, cap_vars;
	struct named_port *outs;
	int n_outs, cap_outs;
};

/* Names --------------------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a 64 offset basis */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int find_node(const struct tfk_graph *g, const char *name)
{
	size_t i;

	if (!g->hcap)
		return -1;
	for (i = hash_str(name) & (g->hcap - 1); g->hash[i];
	     i = (i + 1) & (g->hcap - 1))
		if (!strcmp(g->nodes[g->hash[i] - 1]->name, name))
			return g->hash[i] - 1;
	return -1;
}

static void hash_put(int *h, size_t cap, const char *name, int idx)
{
	size_t i;

	for (i = hash_str(name) & (cap - 1); h[i]; i = (i + 1) & (cap - 1))
		;
	h[i] = idx + 1;
}

/* Room for one more node (array and hash at most half full). */
static int reserve_node(struct tfk_graph *g)
{
	if (g->n == g->cap) {
		int cap = g->cap ? 2 * g->cap : 16;
		struct tfk_node **p = tfk_realloc(g->nodes, cap * sizeof(*p));

		if (!p)
			return TFK_ENOMEM;
		g->nodes = p;
		g->cap = cap;
	}
	if ((size_t)(g->n + 1) * 2 > g->hcap) {
		size_t cap = g->hcap ? 2 * g->hcap : 32;
		int *h = tfk_calloc(cap, sizeof(*h));
		int i;

		if (!h)
			return TFK_ENOMEM;
		for (i = 0; i < g->n; i++)
			hash_put(h, cap, g->nodes[i]->name, i);
		tfk_free(g->hash);
		g->hash = h;
		g->hcap = cap;
	}
	return 0;
}

/*
 * The name a new node gets: name itself; or, for NULL or a scope ending
 * in '/', scope + op made unique with "_1", "_2", ... as TF does.
 */
static char *make_name(const struct tfk_graph *g, const char *name,
		       const char *op)
{
	size_t n;
	char *s;
	int k;

	if (name && *name && name[strlen(name) - 1] != '/')
		return tfk_strdup(name);
	if (!name)
		name = "";
	n = strlen(name) + strlen(op) + 16;
	s = tfk_malloc(n);
	if (!s)
		return NULL;
	snprintf(s, n, "%s%s", name, op);
	for (k = 1; find_node(g, s) >= 0; k++)
		snprintf(s, n, "%s%s_%d", name, op, k);
	return s;
}

/* Attributes ---------------------------------------------------------- */

static void attr_value_release(struct tfk_attr_value *v)
{
	switch (v->kind) {
	case TFK_ATTR_STRING:
		tfk_free((char *)v->s.p);
		break;
	case TFK_ATTR_TENSOR:
		tfk_tensor_free((struct tfk_tensor *)v->tensor);
		break;
	case TFK_ATTR_LIST_INT:
		tfk_free((int64_t *)v->list.i);
		break;
	case TFK_ATTR_LIST_FLOAT:
		tfk_free((float *)v->list.f);
		break;
	case TFK_ATTR_LIST_TYPE:
		tfk_free((enum tfk_dtype *)v->list.type);
		break;
	default:
		break;
	}
	memset(v, 0, sizeof(*v));
}

static void *dup_mem(const void *p, size_t n)
{
	void *q = tfk_malloc(n ? n : 1);

	if (q && n)
		memcpy(q, p, n);
	return q;
}

/* Deep copy of src (of kind kind) into dst. 0 or TFK_ENOMEM. */
static int attr_value_copy(struct tfk_attr_value *dst,
			   const struct tfk_attr_value *src,
			   enum tfk_attr_kind kind, struct tfk_err *err)
{
	struct tfk_tensor *t;
	char *s;
	size_t n = src->list.n > 0 ? (size_t)src->list.n : 0;

	*dst = *src;
	dst->kind = kind;
	switch (kind) {
	case TFK_ATTR_STRING:
		s = tfk_malloc(src->s.len + 1);
		if (!s)
			goto oom;
		if (src->s.len)
			memcpy(s, src->s.p, src->s.len);
		s[src->s.len] = 0;
		dst->s.p = s;
		break;
	case TFK_ATTR_TENSOR:
		dst->tensor = NULL;
		if (!src->tensor)
			break;
		t = tfk_malloc(sizeof(*t));
		if (!t)
			goto oom;
		if (tfk_tensor_copy(t, src->tensor, err)) {
			tfk_free(t);
			return err ? err->code : TFK_ENOMEM;
		}
		dst->tensor = t;
		break;
	case TFK_ATTR_LIST_INT:
		dst->list.i = dup_mem(src->list.i, n * sizeof(int64_t));
		if (!dst->list.i)
			goto oom;
		break;
	case TFK_ATTR_LIST_FLOAT:
		dst->list.f = dup_mem(src->list.f, n * sizeof(float));
		if (!dst->list.f)
			goto oom;
		break;
	case TFK_ATTR_LIST_TYPE:
		dst->list.type = dup_mem(src->list.type,
					 n * sizeof(enum tfk_dtype));
		if (!dst->list.type)
			goto oom;
		break;
	default:
		break;
	}
	return 0;
oom:
	memset(dst, 0, sizeof(*dst));
	return tfk_errf(err, TFK_ENOMEM, "out of memory");
}

const struct tfk_attr_value *tfk_node_attr(const struct tfk_node *n,
					   const char *name)
{
	int i;

	for (i = 0; i < n->n_attrs; i++)
		if (!strcmp(n->attrs[i].name, name))
			return &n->attrs[i].v;
	return NULL;
}

int64_t tfk_node_attr_i(const struct tfk_node *n, const char *name,
			int64_t def)
{
	const struct tfk_attr_value *v = tfk_node_attr(n, name);

	return v && v->kind == TFK_ATTR_INT ? v->i : def;
}

float tfk_node_attr_f(const struct tfk_node *n, const char *name, float def)
{
	const struct tfk_attr_value *v = tfk_node_attr(n, name);

	return v && v->kind == TFK_ATTR_FLOAT ? v->f : def;
}

int tfk_node_attr_b(const struct tfk_node *n, const char *name, int def)
{
	const struct tfk_attr_value *v = tfk_node_attr(n, name);

	return v && v->kind == TFK_ATTR_BOOL ? v->b : def;
}

enum tfk_dtype tfk_node_attr_type(const struct tfk_node *n, const char *name,
				  enum tfk_dtype def)
{
	const struct tfk_attr_value *v = tfk_node_attr(n, name);

	return v && v->kind == TFK_ATTR_TYPE ? v->type : def;
}

/* Nodes --------------------------------------------------------------- */

static void node_free(struct tfk_node *n)
{
	int i;

	if (!n)
		return;
	for (i = 0; i < n->n_attrs; i++)
		attr_value_release(&n->attrs[i].v);
	tfk_free(n->attrs);
	tfk_free(n->inputs);
	tfk_free(n->outputs);
	tfk_free((char *)n->name);
	tfk_free(n);
}

int tfk_graph_new(struct tfk_graph **g, struct tfk_err *err)
{
	*g = tfk_calloc(1, sizeof(**g));
	return *g ? 0 : tfk_errf(err, TFK_ENOMEM, "out of memory");
}

void tfk_graph_free(struct tfk_graph *g)
{
	int i;

	if (!g)
		return;
	for (i = 0; i < g->n; i++)
		node_free(g->nodes[i]);
	for (i = 0; i < g->n_vars; i++) {
		tfk_free(g->vars[i].name);
		tfk_tensor_free(g->vars[i].t);
	}
	for (i = 0; i < g->n_outs; i++)
		tfk_free(g->outs[i].name);
	tfk_free(g->nodes);
	tfk_free(g->hash);
	tfk_free(g->vars);
	tfk_free(g->outs);
	tfk_free(g);
}

int tfk_graph_n_nodes(const struct tfk_graph *g)
{
	return g->n;
}

const struct tfk_node *tfk_graph_node(const struct tfk_graph *g, int i)
{
	return i >= 0 && i < g->n ? g->nodes[i] : NULL;
}

int tfk_graph_node_flag(struct tfk_graph *g, int i, unsigned flags)
{
	if (i < 0 || i >= g->n)
		return TFK_EINVAL;
	g->nodes[i]->flags |= flags;
	return 0;
}

const struct tfk_tdesc *tfk_graph_desc(const struct tfk_graph *g,
				       struct tfk_port p)
{
	const struct tfk_node *n = tfk_graph_node(g, p.node);

	return n && p.index >= 0 && p.index < n->n_outputs ?
		&n->outputs[p.index] : NULL;
}

const struct tfk_tensor *tfk_graph_const_value(const struct tfk_graph *g,
					       struct tfk_port p)
{
	const struct tfk_node *n = tfk_graph_node(g, p.node);
	const struct tfk_attr_value *v;

	if (!n || p.index || strcmp(n->op->name, "Const"))
		return NULL;
	v = tfk_node_attr(n, "value");
	return v ? v->tensor : NULL;
}

/* How many times arg is repeated (its number attr, else 1). */
static int arg_count(const struct tfk_node *n, const struct tfk_arg_def *a)
{
	return a->number_attr ? (int)tfk_node_attr_i(n, a->number_attr, 0) : 1;
}

static enum tfk_dtype arg_type(const struct tfk_node *n,
			       const struct tfk_arg_def *a)
{
	return a->type_attr ? tfk_node_attr_type(n, a->type_attr,
						 TFK_DT_INVALID) : a->type;
}

/* Output descriptions of n from its attrs and in[]: dtypes from the op
 * def, shapes from the op's infer. Errors prefixed with the node name. */
static int infer_with(const struct tfk_graph *g, const struct tfk_node *n,
		      const struct tfk_tdesc *in,
		      const struct tfk_tensor *const *known,
		      struct tfk_tdesc *out, struct tfk_err *err)
{
	const struct tfk_tensor *vals[64];
	struct tfk_infer_ctx ic;
	int i, j, k = 0, rc;

	if (n->n_inputs > 64)
		return tfk_errf(err, TFK_EINVAL, "node %s: more than 64 "
				"inputs", n->name);
	for (i = 0; i < tfk_op_n_outputs(n->op); i++) {
		const struct tfk_arg_def *a = &n->op->outputs[i];

		for (j = 0; j < arg_count(n, a); j++, k++) {
			memset(&out[k], 0, sizeof(out[k]));
			out[k].dtype = arg_type(n, a);
			out[k].rank = -1;
		}
	}
	for (i = 0; i < n->n_inputs; i++)
		vals[i] = known && known[i] ? known[i] :
			tfk_graph_const_value(g, n->inputs[i]);
	if (!n->op->infer) {
		if (n->n_inputs && n->n_outputs) {
			out[0].rank = in[0].rank;
			memcpy(out[0].shape, in[0].shape, sizeof(in[0].shape));
		}
		return 0;
	}
	ic.node = n;
	ic.n_in = n->n_inputs;
	ic.in = in;
	ic.in_value = vals;
	ic.n_out = n->n_outputs;
	ic.out = out;
	ic.err = err;
	rc = n->op->infer(&ic);
	if (rc)
		return tfk_err_prefix(err, "node %s", n->name);
	return 0;
}

int tfk_graph_infer_node(const struct tfk_graph *g, int i,
			 const struct tfk_tdesc *in, struct tfk_tdesc *out,
			 struct tfk_err *err)
{
	return infer_with(g, g->nodes[i], in, NULL, out, err);
}

int tfk_graph_infer_node_v(const struct tfk_graph *g, int i,
			   const struct tfk_tdesc *in,
			   const struct tfk_tensor *const *in_value,
			   struct tfk_tdesc *out, struct tfk_err *err)
{
	return infer_with(g, g->nodes[i], in, in_value, out, err);
}

static const char *type_list(uint64_t allowed, char *buf, size_t n)
{
	size_t o = 0;
	int t;

	buf[0] = 0;
	for (t = 0; t < 64 && o < n; t++)
		if (allowed & TFK_DT_BIT(t))
			o += snprintf(buf + o, n - o, "%s%s", o ? ", " : "",
				      tfk_dtype_name(t));
	return buf;
}

/* How many inputs arg a stands for, before attrs are bound: its number
 * attr as given, else all inputs the fixed args leave. */
static int given_count(const struct tfk_node *n, const struct tfk_arg_def *a,
		       const struct tfk_attr *attrs, int n_attrs)
{
	int j;

	if (!a->number_attr)
		return 1;
	for (j = 0; j < n_attrs; j++)
		if (!strcmp(attrs[j].name, a->number_attr) &&
		    attrs[j].v.kind == TFK_ATTR_INT)
			return (int)attrs[j].v.i;
	return n->n_inputs - (tfk_op_n_inputs(n->op) - 1);
}

/* Fill n->attrs from given attrs and defaults, and type attrs from
 * inputs. Errors are about n->name. */
static int bind_attrs(const struct tfk_graph *g, struct tfk_node *n,
		      const struct tfk_attr *attrs, int n_attrs,
		      struct tfk_err *err)
{
	const struct tfk_op_def *def = n->op;
	int na = tfk_op_n_attrs(def), ni = tfk_op_n_inputs(def);
	int i, j, k, rc;
	char b[256];

	for (j = 0; j < n_attrs; j++) {
		if (!tfk_op_attr_def(def, attrs[j].name))
			return tfk_errf(err, TFK_EINVAL, "node %s: unknown "
					"attr '%s' for op %s", n->name,
					attrs[j].name, def->name);
		for (k = 0; k < j; k++)
			if (!strcmp(attrs[k].name, attrs[j].name))
				return tfk_errf(err, TFK_EINVAL, "node %s: "
						"attr '%s' given twice",
						n->name, attrs[j].name);
	}
	n->attrs = tfk_calloc(na ? na : 1, sizeof(*n->attrs));
	if (!n->attrs)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (i = 0; i < na; i++) {
		const struct tfk_attr_def *ad = &def->attrs[i];
		const struct tfk_attr_value *src = NULL;
		struct tfk_attr_value from_input;

		for (j = 0; j < n_attrs; j++)
			if (!strcmp(attrs[j].name, ad->name))
				src = &attrs[j].v;
		if (src && src->kind != ad->kind)
			return tfk_errf(err, TFK_EINVAL, "node %s: attr %s: "
					"expected %s, got %s", n->name,
					ad->name, tfk_attr_kind_name(ad->kind),
					tfk_attr_kind_name(src->kind));
		if (!src && ad->kind == TFK_ATTR_TYPE) {
			/* the first input bound to this type attr */
			int in = 0;

			for (k = 0; k < ni && !src; k++) {
				const struct tfk_arg_def *a = &def->inputs[k];

				if (a->type_attr &&
				    !strcmp(a->type_attr, ad->name) &&
				    in < n->n_inputs) {
					memset(&from_input, 0,
					       sizeof(from_input));
					from_input.kind = TFK_ATTR_TYPE;
					from_input.type = tfk_graph_desc(g,
						n->inputs[in])->dtype;
					src = &from_input;
				}
				in += given_count(n, a, attrs, n_attrs);
			}
		}
		if (!src && ad->kind == TFK_ATTR_INT && !ad->has_def) {
			/* a number attr not given: all the variadic inputs */
			for (k = 0; k < ni; k++)
				if (def->inputs[k].number_attr &&
				    !strcmp(def->inputs[k].number_attr,
					    ad->name)) {
					memset(&from_input, 0,
					       sizeof(from_input));
					from_input.kind = TFK_ATTR_INT;
					from_input.i = n->n_inputs - (ni - 1);
					src = &from_input;
				}
		}
		if (!src && ad->has_def)
			src = &ad->def;
		if (!src)
			return tfk_errf(err, TFK_EINVAL, "node %s: missing "
					"attr %s (%s)", n->name, ad->name,
					tfk_attr_kind_name(ad->kind));
		rc = attr_value_copy(&n->attrs[i].v, src, ad->kind, err);
		if (rc)
			return rc;
		n->attrs[i].name = ad->name;
		n->n_attrs = i + 1;
		if (ad->kind == TFK_ATTR_TYPE && ad->allowed &&
		    !(ad->allowed & TFK_DT_BIT(src->type)))
			return tfk_errf(err, TFK_EINVAL, "node %s: attr %s: "
					"%s not allowed (%s)", n->name,
					ad->name, tfk_dtype_name(src->type),
					type_list(ad->allowed, b, sizeof(b)));
	}
	return 0;
}

/* Check input count and dtypes against the op def. */
static int check_inputs(const struct tfk_graph *g, const struct tfk_node *n,
			struct tfk_err *err)
{
	const struct tfk_op_def *def = n->op;
	int ni = tfk_op_n_inputs(def), want = 0, i, j, k = 0;

	for (i = 0; i < ni; i++) {
		int c = arg_count(n, &def->inputs[i]);

		if (c < 0)
			return tfk_errf(err, TFK_EINVAL, "node %s: attr %s "
					"is %d", n->name,
					def->inputs[i].number_attr, c);
		want += c;
	}
	if (want != n->n_inputs)
		return tfk_errf(err, TFK_EINVAL, "node %s: op %s takes %d "
				"inputs, got %d", n->name, def->name, want,
				n->n_inputs);
	for (i = 0; i < ni; i++) {
		const struct tfk_arg_def *a = &def->inputs[i];
		enum tfk_dtype t = arg_type(n, a);

		for (j = 0; j < arg_count(n, a); j++, k++) {
			const struct tfk_tdesc *d = tfk_graph_desc(g,
								   n->inputs[k]);

			if (d->dtype != t)
				return tfk_errf(err, TFK_EINVAL, "node %s: "
						"input %d: expected %s, got %s",
						n->name, k, tfk_dtype_name(t),
						tfk_dtype_name(d->dtype));
		}
	}
	return 0;
}

static int count_outputs(const struct tfk_node *n)
{
	int i, c = 0;

	for (i = 0; i < tfk_op_n_outputs(n->op); i++)
		c += arg_count(n, &n->op->outputs[i]);
	return c;
}

int tfk_graph_add_node(struct tfk_graph *g, const char *op, const char *name,
		       const struct tfk_port *inputs, int n_in,
		       const struct tfk_attr *attrs, int n_attrs,
		       struct tfk_port *out, struct tfk_err *err)
{
	struct tfk_tdesc in[64];
	struct tfk_node *n;
	int i, rc;

	n = tfk_calloc(1, sizeof(*n));
	if (!n)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	n->variable = -1;
	n->op = tfk_op_find(op);
	n->name = make_name(g, name, op);
	if (!n->name) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto fail;
	}
	if (!n->op) {
		rc = tfk_errf(err, TFK_ENOTFOUND, "node %s: unknown op '%s'",
			      n->name, op);
		goto fail;
	}
	if (find_node(g, n->name) >= 0) {
		rc = tfk_errf(err, TFK_EINVAL, "node %s: name already used",
			      n->name);
		goto fail;
	}
	if (n_in < 0 || n_in > 64) {
		rc = tfk_errf(err, TFK_EINVAL, "node %s: %d inputs", n->name,
			      n_in);
		goto fail;
	}
	for (i = 0; i < n_in; i++) {
		if (!tfk_graph_desc(g, inputs[i])) {
			rc = tfk_errf(err, TFK_EINVAL, "node %s: input %d: no "
				      "output %d of node %d", n->name, i,
				      inputs[i].index, inputs[i].node);
			goto fail;
		}
		in[i] = *tfk_graph_desc(g, inputs[i]);
	}
	n->inputs = tfk_malloc((n_in ? n_in : 1) * sizeof(*n->inputs));
	if (!n->inputs) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto fail;
	}
	if (n_in)
		memcpy(n->inputs, inputs, n_in * sizeof(*inputs));
	n->n_inputs = n_in;
	rc = bind_attrs(g, n, attrs, n_attrs, err);
	if (rc)
		goto fail;
	rc = check_inputs(g, n, err);
	if (rc)
		goto fail;
	n->n_outputs = count_outputs(n);
	if (n->n_outputs < 0 || n->n_outputs > 64) {
		rc = tfk_errf(err, TFK_EINVAL, "node %s: %d outputs",
			      n->name, n->n_outputs);
		goto fail;
	}
	n->outputs = tfk_calloc(n->n_outputs ? n->n_outputs : 1,
				sizeof(*n->outputs));
	if (!n->outputs) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto fail;
	}
	rc = infer_with(g, n, in, NULL, n->outputs, err);
	if (rc)
		goto fail;
	if (reserve_node(g)) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto fail;
	}
	hash_put(g->hash, g->hcap, n->name, g->n);
	g->nodes[g->n++] = n;
	if (out) {
		out->node = g->n - 1;
		out->index = 0;
	}
	return 0;
fail:
	node_free(n);
	return rc;
}

int tfk_graph_placeholder(struct tfk_graph *g, const char *name,
			  enum tfk_dtype dtype, int rank, const int64_t *shape,
			  struct tfk_port *out, struct tfk_err *err)
{
	struct tfk_attr a[2] = { TFK_A_TYPE("dtype", dtype) };

	if (rank > TFK_MAX_RANK)
		return tfk_errf(err, TFK_EINVAL, "node %s: rank %d above %d",
				name ? name : "Placeholder", rank,
				TFK_MAX_RANK);
	a[1].name = "shape";
	a[1].v.kind = TFK_ATTR_SHAPE;
	a[1].v.shape.rank = rank < 0 ? -1 : rank;
	if (rank > 0)
		memcpy(a[1].v.shape.dims, shape, rank * sizeof(*shape));
	return tfk_graph_add_node(g, "Placeholder", name, NULL, 0, a, 2, out,
				  err);
}

int tfk_graph_const(struct tfk_graph *g, const char *name,
		    const struct tfk_tensor *value, struct tfk_port *out,
		    struct tfk_err *err)
{
	struct tfk_attr a[2] = { TFK_A_TENSOR("value", value),
				 TFK_A_TYPE("dtype", value->dtype) };

	return tfk_graph_add_node(g, "Const", name, NULL, 0, a, 2, out, err);
}

int tfk_graph_const_f32(struct tfk_graph *g, const char *name, float v,
			struct tfk_port *out, struct tfk_err *err)
{
	struct tfk_tensor t;

	tfk_tensor_init_view(&t, TFK_DT_FLOAT, 0, NULL, &v, sizeof(v),
			     TFK_OWN_BORROWED, NULL);
	return tfk_graph_const(g, name, &t, out, err);
}

int tfk_graph_const_i32v(struct tfk_graph *g, const char *name,
			 const int32_t *v, int n, struct tfk_port *out,
			 struct tfk_err *err)
{
	struct tfk_tensor t;
	int64_t s = n;
	int32_t dummy = 0;
	int rc;

	rc = tfk_tensor_init_view(&t, TFK_DT_INT32, 1, &s,
				  n ? (void *)v : &dummy, n * sizeof(*v),
				  TFK_OWN_BORROWED, err);
	if (rc)
		return rc;
	return tfk_graph_const(g, name, &t, out, err);
}

/* Variables and named outputs ----------------------------------------- */

int tfk_graph_variable(struct tfk_graph *g, const char *name,
		       struct tfk_tensor *init, struct tfk_port *out,
		       struct tfk_err *err)
{
	struct tfk_attr a[2] = { TFK_A_TYPE("dtype", init->dtype) };
	struct tfk_tensor *t = NULL;
	struct tfk_port p;
	char *nm = NULL;
	int rc;

	a[1].name = "shape";
	a[1].v.kind = TFK_ATTR_SHAPE;
	a[1].v.shape.rank = init->rank;
	memcpy(a[1].v.shape.dims, init->shape, sizeof(init->shape));
	if (!name || !*name || tfk_graph_var(g, name)) {
		rc = tfk_errf(err, TFK_EINVAL, "variable '%s': %s",
			      name ? name : "", name && *name ?
			      "name already used" : "needs a name");
		goto fail;
	}
	if (g->n_vars == g->cap_vars) {
		int cap = g->cap_vars ? 2 * g->cap_vars : 8;
		struct var *v = tfk_realloc(g->vars, cap * sizeof(*v));

		if (!v)
			goto oom;
		g->vars = v;
		g->cap_vars = cap;
	}
	t = tfk_malloc(sizeof(*t));
	nm = tfk_strdup(name);
	if (!t || !nm)
		goto oom;
	rc = tfk_graph_add_node(g, "VariableV2", name, NULL, 0, a, 2, &p, err);
	if (rc)
		goto fail;
	*t = *init;
	memset(init, 0, sizeof(*init));
	g->nodes[p.node]->variable = g->n_vars;
	g->vars[g->n_vars].name = nm;
	g->vars[g->n_vars].t = t;
	g->n_vars++;
	if (out)
		*out = p;
	return 0;
oom:
	rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
fail:
	tfk_free(t);
	tfk_free(nm);
	tfk_tensor_release(init);
	return rc;
}

int tfk_graph_n_variables(const struct tfk_graph *g)
{
	return g->n_vars;
}

struct tfk_tensor *tfk_graph_var_at(struct tfk_graph *g, int i,
				    const char **name)
{
	if (i < 0 || i >= g->n_vars)
		return NULL;
	if (name)
		*name = g->vars[i].name;
	return g->vars[i].t;
}

struct tfk_tensor *tfk_graph_var(struct tfk_graph *g, const char *name)
{
	int i;

	for (i = 0; i < g->n_vars; i++)
		if (!strcmp(g->vars[i].name, name))
			return g->vars[i].t;
	return NULL;
}

int tfk_graph_set_output(struct tfk_graph *g, const char *name,
			 struct tfk_port port, struct tfk_err *err)
{
	char *nm;
	int i;

	if (!tfk_graph_desc(g, port))
		return tfk_errf(err, TFK_EINVAL, "output '%s': no such port",
				name);
	for (i = 0; i < g->n_outs; i++)
		if (!strcmp(g->outs[i].name, name))
			return tfk_errf(err, TFK_EINVAL, "output '%s': name "
					"already used", name);
	if (g->n_outs == g->cap_outs) {
		int cap = g->cap_outs ? 2 * g->cap_outs : 4;
		struct named_port *o = tfk_realloc(g->outs, cap * sizeof(*o));

		if (!o)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		g->outs = o;
		g->cap_outs = cap;
	}
	nm = tfk_strdup(name);
	if (!nm)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	g->outs[g->n_outs].name = nm;
	g->outs[g->n_outs].port = port;
	g->n_outs++;
	return 0;
}

int tfk_graph_n_outputs(const struct tfk_graph *g)
{
	return g->n_outs;
}

struct tfk_port tfk_graph_output_at(const struct tfk_graph *g, int i,
				    const char **name)
{
	struct tfk_port none = { -1, 0 };

	if (i < 0 || i >= g->n_outs)
		return none;
	if (name)
		*name = g->outs[i].name;
	return g->outs[i].port;
}

int tfk_graph_find(const struct tfk_graph *g, const char *name,
		   struct tfk_port *port, struct tfk_err *err)
{
	const char *colon;
	char buf[512];
	int i;

	for (i = 0; i < g->n_outs; i++)
		if (!strcmp(g->outs[i].name, name)) {
			*port = g->outs[i].port;
			return 0;
		}
	i = find_node(g, name);
	if (i >= 0) {
		port->node = i;
		port->index = 0;
		return 0;
	}
	colon = strrchr(name, ':');
	if (colon && colon[1] && (size_t)(colon - name) < sizeof(buf) &&
	    strspn(colon + 1, "0123456789") == strlen(colon + 1) &&
	    strlen(colon + 1) < 6) {
		memcpy(buf, name, colon - name);
		buf[colon - name] = 0;
		i = find_node(g, buf);
		if (i >= 0 && atoi(colon + 1) < g->nodes[i]->n_outputs) {
			port->node = i;
			port->index = atoi(colon + 1);
			return 0;
		}
	}
	return tfk_errf(err, TFK_ENOTFOUND, "no node or output named '%s'",
			name);
}

/* Gradients ----------------------------------------------------------- */

/* Add contribution c to the gradient slot *acc (summing with AddV2). */
static int accumulate(struct tfk_graph *g, struct tfk_port *acc,
		      struct tfk_port c, struct tfk_err *err)
{
	struct tfk_port in[2];

	if (c.node < 0)
		return 0;
	if (acc->node < 0) {
		*acc = c;
		return 0;
	}
	in[0] = *acc;
	in[1] = c;
	return tfk_graph_add_node(g, "AddV2", "gradients/", in, 2, NULL, 0,
				  acc, err);
}

int tfk_graph_gradients(struct tfk_graph *g, const struct tfk_port *ys,
			const struct tfk_port *dys, int n_ys,
			const struct tfk_port *xs, int n_xs,
			struct tfk_port *dxs, struct tfk_err *err)
{
	int n0 = g->n, i, j, k, rc = 0, lo = n0;
	char *from_x = NULL, *to_y = NULL;
	struct tfk_port **acc = NULL;
	struct tfk_port dx[64];
	char prefix[600];

	for (j = 0; j < n_xs; j++)
		dxs[j].node = -1, dxs[j].index = 0;
	for (k = 0; k < n_ys; k++) {
		const struct tfk_tdesc *y = tfk_graph_desc(g, ys[k]);
		const struct tfk_tdesc *dy = tfk_graph_desc(g, dys[k]);

		if (!y || !dy)
			return tfk_errf(err, TFK_EINVAL, "gradients: y %d: no "
					"such port", k);
		if (y->dtype != dy->dtype)
			return tfk_errf(err, TFK_EINVAL, "gradients: y %d: "
					"seed is %s, y is %s", k,
					tfk_dtype_name(dy->dtype),
					tfk_dtype_name(y->dtype));
	}
	for (j = 0; j < n_xs; j++)
		if (!tfk_graph_desc(g, xs[j]))
			return tfk_errf(err, TFK_EINVAL, "gradients: x %d: no "
					"such port", j);
	from_x = tfk_calloc(n0, 1);
	to_y = tfk_calloc(n0, 1);
	acc = tfk_calloc(n0, sizeof(*acc));
	if (!from_x || !to_y || !acc)
		goto oom;
	/* nodes downstream of an x, then those also upstream of a y */
	for (j = 0; j < n_xs; j++) {
		from_x[xs[j].node] = 1;
		if (xs[j].node < lo)
			lo = xs[j].node;
	}
	for (i = lo; i < n0; i++)
		for (k = 0; k < g->nodes[i]->n_inputs && !from_x[i]; k++)
			if (from_x[g->nodes[i]->inputs[k].node])
				from_x[i] = 1;
	for (k = 0; k < n_ys; k++)
		to_y[ys[k].node] = 1;
	for (i = n0 - 1; i >= 0; i--)
		if (to_y[i])
			for (k = 0; k < g->nodes[i]->n_inputs; k++)
				to_y[g->nodes[i]->inputs[k].node] = 1;
	for (k = 0; k < n_ys; k++) {
		struct tfk_port y = ys[k];

		if (!from_x[y.node])
			continue;
		if (!acc[y.node]) {
			acc[y.node] = tfk_malloc(g->nodes[y.node]->n_outputs *
						 sizeof(**acc));
			if (!acc[y.node])
				goto oom;
			for (j = 0; j < g->nodes[y.node]->n_outputs; j++)
				acc[y.node][j].node = -1;
		}
		rc = accumulate(g, &acc[y.node][y.index], dys[k], err);
		if (rc)
			goto out;
	}
	for (i = n0 - 1; i >= lo; i--) {
		const struct tfk_node *n = g->nodes[i];
		struct tfk_grad_ctx gc;
		int is_x = 0;

		if (!acc[i] || !from_x[i] || !to_y[i])
			continue;
		for (j = 0; j < n_xs; j++)
			if (xs[j].node == i)
				is_x = 1;
		if (!n->n_inputs || (is_x && !n->op->grad))
			continue;
		if (!n->op->grad) {
			rc = tfk_errf(err, TFK_EINVAL, "node %s: op %s has no "
				      "gradient", n->name, n->op->name);
			goto out;
		}
		if (n->n_inputs > 64) {
			rc = tfk_errf(err, TFK_EINVAL, "node %s: too many "
				      "inputs", n->name);
			goto out;
		}
		for (k = 0; k < n->n_inputs; k++)
			dx[k].node = -1, dx[k].index = 0;
		snprintf(prefix, sizeof(prefix), "gradients/%s_grad/", n->name);
		gc.g = g;
		gc.node_id = i;
		gc.node = n;
		gc.dy = acc[i];
		gc.dx = dx;
		gc.prefix = prefix;
		gc.err = err;
		rc = n->op->grad(&gc);
		if (rc) {
			if (!strstr(err ? err->msg : "", n->name))
				tfk_err_prefix(err, "node %s: gradient",
					       n->name);
			goto out;
		}
		for (k = 0; k < n->n_inputs; k++) {
			struct tfk_port p = n->inputs[k];
			int m;

			if (dx[k].node < 0 || !from_x[p.node])
				continue;
			if (!acc[p.node]) {
				m = g->nodes[p.node]->n_outputs;
				acc[p.node] = tfk_malloc(m * sizeof(**acc));
				if (!acc[p.node])
					goto oom;
				for (j = 0; j < m; j++)
					acc[p.node][j].node = -1;
			}
			rc = accumulate(g, &acc[p.node][p.index], dx[k], err);
			if (rc)
				goto out;
		}
	}
	for (j = 0; j < n_xs; j++)
		if (acc[xs[j].node])
			dxs[j] = acc[xs[j].node][xs[j].index];
	goto out;
oom:
	rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
out:
	if (acc)
		for (i = 0; i < n0; i++)
			tfk_free(acc[i]);
	tfk_free(acc);
	tfk_free(from_x);
	tfk_free(to_y);
	return rc;
}
