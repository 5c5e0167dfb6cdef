/*
 * model.c - a Keras Sequential or Functional config (model.to_json())
 * into a graph (see model.h): walks the layers and their connections;
 * layers.c expands each call into ops.
 *
 * Every layer object is parsed first (class, config keys, values), so a
 * typo anywhere fails before a node is added, with its JSON path. Then
 * Sequential chains the layers; Functional calls layers in the order
 * their inbound nodes become available (the config lists layers in a
 * topological order of their first call, but a shared layer's later
 * calls may depend on layers listed after it, as Keras' from_config
 * handles with its queue of unprocessed nodes). Both forms of inbound
 * nodes load: Keras 2's [[["dense", 0, 0, {}]]] and Keras 3's
 * [{"args": [{"class_name": "__keras_tensor__", "config": {
 * "keras_history": ["dense", 0, 0]}}], "kwargs": {}}].
 *
 * A layer's weights are made on its first call, from the inference
 * branch's input shape; each call adds the inference ops ("dense/...")
 * then the training ones ("train/dense/..."), both on the same
 * variables. Layers whose ops do not depend on the branch (Rescaling)
 * are built once when both branches feed them the same port.
 */
#include "nn/keras-impl.h"
#include "graph/graph.h"
#include "util/alloc.h"

#include <stdio.h>
#include <string.h>

struct kref {
	const char *layer;
	long node, tensor;
};

int kword_in(const char *list, const char *key)
{
	size_t n = strlen(key);
	const char *p = list;

	if (!n || strchr(key, ' '))
		return 0;
	while ((p = strstr(p, key))) {
		if (p > list && p[-1] == ' ' && p[n] == ' ')
			return 1;
		p += n;
	}
	return 0;
}

static int check_keys(struct kctx *c, const json_t *obj, const char *keys,
		      const char *fmt, const char *where)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)obj, k, v)
		if (!kword_in(keys, k))
			return tfk_errf(c->err, TFK_EINVAL, "%s%s.%s: unknown "
					"key", fmt, where, k);
	return 0;
}

/* Layers ----------------------------------------------------------------- */

static int parse_layer(struct kctx *c, struct klayer *l, const json_t *obj,
		       int functional)
{
	const json_t *cls, *nm;
	int rc;

	if (!json_is_object(obj))
		return tfk_errf(c->err, TFK_EINVAL, "%s: expected a layer "
				"object {\"class_name\": ..., \"config\": "
				"{...}}", l->path);
	if ((rc = check_keys(c, obj, " class_name config name inbound_nodes "
			     "module registered_name build_config ", l->path,
			     "")))
		return rc;
	cls = json_object_get(obj, "class_name");
	if (!json_is_string(cls))
		return tfk_errf(c->err, TFK_EINVAL, "%s.class_name: expected a "
				"string", l->path);
	l->k = tfk_keras_class(json_string_value(cls));
	if (!l->k)
		return tfk_errf(c->err, TFK_EINVAL, "%s.class_name: unknown "
				"layer '%s'%s", l->path, json_string_value(cls),
				strncmp(json_string_value(cls), "Random", 6) ?
				"" : " (the image augmentation layers here: "
				"RandomFlip, RandomRotation, RandomZoom, "
				"RandomTranslation, RandomContrast, "
				"RandomBrightness, RandomCrop)");
	l->obj = obj;
	l->cfg = json_object_get(obj, "config");
	if (!json_is_object(l->cfg))
		return tfk_errf(c->err, TFK_EINVAL, "%s.config: expected an "
				"object", l->path);
	nm = json_object_get(l->cfg, "name");
	if (!nm && functional)
		nm = json_object_get(obj, "name");
	/* '/' first or last, or "//", would make a graph scope, not a
	 * node name (graph.h), and the layer's nodes unfindable */
	if (!json_is_string(nm) || !json_string_length(nm) ||
	    strchr(json_string_value(nm), ':') ||
	    json_string_length(nm) > 100 ||
	    json_string_value(nm)[0] == '/' ||
	    json_string_value(nm)[json_string_length(nm) - 1] == '/' ||
	    strstr(json_string_value(nm), "//"))
		return tfk_errf(c->err, TFK_EINVAL, "%s.config.name: expected "
				"a layer name (1 to 100 characters, no ':', "
				"no '/' first, last or twice in a row)",
				l->path);
	l->name = json_string_value(nm);
	if (functional && json_object_get(obj, "name") &&
	    (!json_is_string(json_object_get(obj, "name")) ||
	     strcmp(json_string_value(json_object_get(obj, "name")), l->name)))
		return tfk_errf(c->err, TFK_EINVAL, "%s.name: differs from "
				"config.name", l->path);
	return tfk_keras_parse_layer(c, l);
}

static int add_input(struct kctx *c, const char *name, enum tfk_dtype dt,
		     int rank, const int64_t *shape, struct ktensor *out)
{
	struct tfk_model *m = c->m;
	struct tfk_model_input *in;
	int rc;

	in = tfk_realloc(m->inputs, (size_t)(m->n_inputs + 1) * sizeof(*in));
	if (!in)
		return tfk_errf(c->err, TFK_ENOMEM, "out of memory");
	m->inputs = in;
	in = &m->inputs[m->n_inputs];
	memset(in, 0, sizeof(*in));
	in->name = tfk_strdup(name);
	if (!in->name)
		return tfk_errf(c->err, TFK_ENOMEM, "out of memory");
	m->n_inputs++;
	in->dtype = dt;
	in->rank = rank;
	memcpy(in->shape, shape, (size_t)rank * sizeof(*shape));
	memset(out, 0, sizeof(*out));
	rc = tfk_graph_placeholder(c->g, name, dt, rank, shape, &out->i,
				   c->err);
	out->t = out->i;
	out->t_logits.node = out->i_logits.node = -1;
	return rc;
}

/* Prefix a graph error with the layer's path (messages made by the
 * layer code already start with it). */
static int layer_err(struct kctx *c, const struct klayer *l, int rc)
{
	if (rc == TFK_ENOMEM || !strncmp(c->err->msg, l->path,
					  strlen(l->path)))
		return rc;
	return tfk_err_prefix(c->err, "%s", l->path);
}

static int call_layer(struct kctx *c, struct klayer *l,
		      const struct ktensor *in, int n_in, struct ktensor *out)
{
	struct tfk_port pi[KMAX_IN], pt[KMAX_IN];
	struct tfk_tdesc d[KMAX_IN];
	struct ktensor *outs;
	struct kout oi, ot;
	int k, rc, same = 1;

	if (!(l->k->flags & KL_MERGE) && n_in != 1)
		return tfk_errf(c->err, TFK_EINVAL, "%s: expected 1 input, "
				"got %d", l->path, n_in);
	if (n_in < 1 || n_in > KMAX_IN)
		return tfk_errf(c->err, TFK_EINVAL, "%s: expected 1 to %d "
				"inputs, got %d", l->path, KMAX_IN, n_in);
	outs = tfk_realloc(l->outs, (size_t)(l->n_calls + 1) * sizeof(*outs));
	if (!outs)
		return tfk_errf(c->err, TFK_ENOMEM, "out of memory");
	l->outs = outs;
	for (k = 0; k < n_in; k++) {
		pi[k] = in[k].i;
		pt[k] = in[k].t;
		d[k] = *kdesc(c, pi[k]);
		same &= pi[k].node == pt[k].node && pi[k].index == pt[k].index;
	}
	if (!l->built && l->k->build) {
		rc = l->k->build(c, l, d, n_in);
		if (rc)
			return layer_err(c, l, rc);
	}
	l->built = 1;
	c->train = 0;
	snprintf(c->scope, sizeof(c->scope), "%s/", l->name);
	rc = l->k->apply(c, l, pi, n_in, &oi);
	if (!rc && (l->k->flags & KL_SHARED) && same) {
		ot = oi;
	} else if (!rc) {
		c->train = 1;
		snprintf(c->scope, sizeof(c->scope), "train/%s/", l->name);
		rc = l->k->apply(c, l, pt, n_in, &ot);
	}
	if (rc)
		return layer_err(c, l, rc);
	out->i = oi.p;
	out->t = ot.p;
	out->act = oi.act && ot.act && !strcmp(oi.act, ot.act) ? oi.act :
		NULL;
	out->i_logits = out->act ? oi.logits : (struct tfk_port){ -1, 0 };
	out->t_logits = out->act ? ot.logits : (struct tfk_port){ -1, 0 };
	l->outs[l->n_calls++] = *out;
	return 0;
}

/* Sequential ---------------------------------------------------------------- */

static int build_sequential(struct kctx *c, const json_t *cfg,
			    struct klayer *ls, int n)
{
	struct ktensor x;
	int i = 0, rc;

	if (n == 0)
		return tfk_errf(c->err, TFK_EINVAL, "%s.config.layers: no "
				"layers", c->path);
	if (ls[0].k->flags & KL_INPUT) {
		rc = add_input(c, ls[0].name, ls[0].dtype, ls[0].rank,
			       ls[0].shape, &x);
		if (rc)
			return rc;
		i = 1;
	} else {
		/* tf.keras names the implicit input "<first layer>_input" */
		struct klayer tmp = ls[0];
		const json_t *b = json_object_get(ls[0].cfg,
						  "batch_input_shape");
		char name[128];

		if (!b || json_is_null(b))
			b = json_object_get(ls[0].cfg, "batch_shape");
		if (!b || json_is_null(b))
			b = json_object_get(cfg, "build_input_shape");
		if (!b || json_is_null(b))
			return tfk_errf(c->err, TFK_EINVAL, "%s.config.layers"
					"[0].config: the first layer needs "
					"batch_input_shape (or an InputLayer "
					"first)", c->path);
		/* reuse the InputLayer parser on a view of that key */
		tmp.k = tfk_keras_class("InputLayer");
		{
			json_t *o = json_pack("{sO}", "batch_input_shape", b);
			const json_t *dt = json_object_get(ls[0].cfg, "dtype");

			if (!o)
				return tfk_errf(c->err, TFK_ENOMEM, "out of "
						"memory");
			if (json_is_string(dt) && json_object_set(o, "dtype",
								  (json_t *)dt))
				rc = tfk_errf(c->err, TFK_ENOMEM, "out of "
					      "memory");
			tmp.cfg = o;
			rc = tmp.k->parse(c, &tmp);
			json_decref(o);
			if (rc)
				return rc;
		}
		snprintf(name, sizeof(name), "%s_input", ls[0].name);
		rc = add_input(c, name, tmp.dtype, tmp.rank, tmp.shape, &x);
		if (rc)
			return rc;
	}
	for (; i < n; i++) {
		if (ls[i].k->flags & KL_INPUT)
			return tfk_errf(c->err, TFK_EINVAL, "%s: an InputLayer "
					"may only come first", ls[i].path);
		rc = call_layer(c, &ls[i], &x, 1, &x);
		if (rc)
			return rc;
	}
	return 0;
}

/* Functional ---------------------------------------------------------------- */

static int parse_ref(struct kctx *c, const json_t *v, const char *where,
		     struct kref *r)
{
	if (json_is_object(v)) {
		/* Keras 3: {"class_name": "__keras_tensor__", "config":
		 * {"keras_history": [layer, node, tensor], ...}} */
		const json_t *cls = json_object_get(v, "class_name");

		if (!json_is_string(cls) || strcmp(json_string_value(cls),
						   "__keras_tensor__"))
			return tfk_errf(c->err, TFK_EINVAL, "%s: expected a "
					"__keras_tensor__", where);
		v = json_object_get(json_object_get(v, "config"),
				    "keras_history");
	}
	if (!json_is_array(v) || json_array_size(v) < 3 ||
	    json_array_size(v) > 4 ||
	    !json_is_string(json_array_get(v, 0)) ||
	    !json_is_integer(json_array_get(v, 1)) ||
	    !json_is_integer(json_array_get(v, 2)) ||
	    json_integer_value(json_array_get(v, 1)) < 0 ||
	    json_integer_value(json_array_get(v, 1)) > 1 << 20 ||
	    json_integer_value(json_array_get(v, 2)) < 0 ||
	    (json_array_size(v) == 4 &&
	     !json_is_object(json_array_get(v, 3))))
		return tfk_errf(c->err, TFK_EINVAL, "%s: expected [layer "
				"name, node index, tensor index]", where);
	r->layer = json_string_value(json_array_get(v, 0));
	r->node = (long)json_integer_value(json_array_get(v, 1));
	r->tensor = (long)json_integer_value(json_array_get(v, 2));
	return 0;
}

/* The refs of inbound node `nd` (either form) into r[0..*n). */
static int node_refs(struct kctx *c, const struct klayer *l, size_t k,
		     const json_t *nd, struct kref *r, int *n)
{
	char where[300];
	const json_t *args;
	size_t i, cnt;
	int rc;

	*n = 0;
	if (json_is_object(nd)) {
		const char *key;
		json_t *v;

		json_object_foreach((json_t *)nd, key, v)
			if (strcmp(key, "args") && strcmp(key, "kwargs"))
				return tfk_errf(c->err, TFK_EINVAL, "%s."
						"inbound_nodes[%zu].%s: "
						"unknown key", l->path, k,
						key);
		args = json_object_get(nd, "args");
		if (!json_is_array(args) || json_array_size(args) != 1)
			return tfk_errf(c->err, TFK_EINVAL, "%s.inbound_nodes"
					"[%zu].args: expected one argument",
					l->path, k);
		nd = json_array_get(args, 0);
		if (!json_is_array(nd)) {
			snprintf(where, sizeof(where), "%s.inbound_nodes[%zu]"
				 ".args[0]", l->path, k);
			*n = 1;
			return parse_ref(c, nd, where, r);
		}
	} else if (!json_is_array(nd)) {
		return tfk_errf(c->err, TFK_EINVAL, "%s.inbound_nodes[%zu]: "
				"expected a list of inputs", l->path, k);
	}
	cnt = json_array_size(nd);
	/* Keras 2 writes one node as a flat [name, 0, 0, {}] at times */
	if (cnt >= 3 && json_is_string(json_array_get(nd, 0))) {
		snprintf(where, sizeof(where), "%s.inbound_nodes[%zu]",
			 l->path, k);
		*n = 1;
		return parse_ref(c, nd, where, r);
	}
	if (cnt < 1 || cnt > KMAX_IN)
		return tfk_errf(c->err, TFK_EINVAL, "%s.inbound_nodes[%zu]: "
				"expected 1 to %d inputs", l->path, k,
				KMAX_IN);
	for (i = 0; i < cnt; i++) {
		snprintf(where, sizeof(where), "%s.inbound_nodes[%zu][%zu]",
			 l->path, k, i);
		rc = parse_ref(c, json_array_get(nd, i), where, &r[i]);
		if (rc)
			return rc;
	}
	*n = (int)cnt;
	return 0;
}

static struct klayer *find_layer(struct klayer *ls, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(ls[i].name, name))
			return &ls[i];
	return NULL;
}

/* The ktensor of ref r, or NULL while its node is not built yet. */
static const struct ktensor *resolve(struct klayer *ls, int n,
				     const struct kref *r)
{
	struct klayer *l = find_layer(ls, n, r->layer);

	return l && r->node < l->n_calls ? &l->outs[r->node] : NULL;
}

/* A list of [name, node, tensor] triples (or one flat triple). */
static int ref_list(struct kctx *c, const json_t *cfg, const char *key,
		    struct kref *r, int *n)
{
	const json_t *v = json_object_get(cfg, key);
	char where[300];
	size_t i;
	int rc;

	snprintf(where, sizeof(where), "%s.config.%s", c->path, key);
	if (json_is_array(v) && json_array_size(v) >= 3 &&
	    json_is_string(json_array_get(v, 0))) {
		*n = 1;
		return parse_ref(c, v, where, r);
	}
	if (!json_is_array(v) || json_array_size(v) < 1 ||
	    json_array_size(v) > KMAX_IN)
		return tfk_errf(c->err, TFK_EINVAL, "%s: expected a list of "
				"1 to %d [layer name, node index, tensor "
				"index]", where, KMAX_IN);
	for (i = 0; i < json_array_size(v); i++) {
		snprintf(where, sizeof(where), "%s.config.%s[%zu]", c->path,
			 key, i);
		rc = parse_ref(c, json_array_get(v, i), where, &r[i]);
		if (rc)
			return rc;
	}
	*n = (int)json_array_size(v);
	return 0;
}

static int build_functional(struct kctx *c, const json_t *cfg,
			    struct klayer *ls, int n)
{
	struct kref r[KMAX_IN], ins[KMAX_IN];
	struct ktensor in[KMAX_IN], out;
	int i, k, n_r, n_in, rc, progress = 1, left;

	if ((rc = ref_list(c, cfg, "input_layers", ins, &n_in)))
		return rc;
	/* the model's inputs in input_layers order */
	for (i = 0; i < n_in; i++) {
		struct klayer *l = find_layer(ls, n, ins[i].layer);

		if (!l || !(l->k->flags & KL_INPUT) || ins[i].node ||
		    ins[i].tensor)
			return tfk_errf(c->err, TFK_EINVAL, "%s.config."
					"input_layers[%d]: '%s' is not an "
					"InputLayer of this model", c->path,
					i, ins[i].layer);
		if (l->n_calls)
			return tfk_errf(c->err, TFK_EINVAL, "%s.config."
					"input_layers[%d]: '%s' listed twice",
					c->path, i, ins[i].layer);
		l->outs = tfk_malloc(sizeof(*l->outs));
		if (!l->outs)
			return tfk_errf(c->err, TFK_ENOMEM, "out of memory");
		rc = add_input(c, l->name, l->dtype, l->rank, l->shape,
			       &l->outs[0]);
		if (rc)
			return rc;
		l->n_calls = 1;
	}
	/* check every node's refs once, then call layers as their inputs
	 * become available */
	for (i = 0; i < n; i++) {
		const json_t *nodes = json_object_get(ls[i].obj,
						      "inbound_nodes");

		if (ls[i].k->flags & KL_INPUT) {
			if (!ls[i].n_calls)
				return tfk_errf(c->err, TFK_EINVAL, "%s: "
						"InputLayer '%s' is not in "
						"input_layers", ls[i].path,
						ls[i].name);
			continue;
		}
		if (!json_is_array(nodes))
			return tfk_errf(c->err, TFK_EINVAL, "%s.inbound_nodes: "
					"expected a list", ls[i].path);
		for (k = 0; k < (int)json_array_size(nodes); k++) {
			int j;

			rc = node_refs(c, &ls[i], k, json_array_get(nodes, k),
				       r, &n_r);
			if (rc)
				return rc;
			for (j = 0; j < n_r; j++) {
				if (!find_layer(ls, n, r[j].layer))
					return tfk_errf(c->err, TFK_EINVAL,
							"%s.inbound_nodes[%d]:"
							" unknown layer '%s'",
							ls[i].path, k,
							r[j].layer);
				if (r[j].tensor)
					return tfk_errf(c->err, TFK_EINVAL,
							"%s.inbound_nodes[%d]:"
							" tensor index %ld (all"
							" layers here have one "
							"output)", ls[i].path,
							k, r[j].tensor);
			}
		}
	}
	while (progress) {
		progress = 0;
		left = 0;
		for (i = 0; i < n; i++) {
			const json_t *nodes = json_object_get(ls[i].obj,
							      "inbound_nodes");
			int j;

			if (ls[i].k->flags & KL_INPUT)
				continue;
			while (ls[i].n_calls < (int)json_array_size(nodes)) {
				k = ls[i].n_calls;
				node_refs(c, &ls[i], k,
					  json_array_get(nodes, k), r, &n_r);
				for (j = 0; j < n_r; j++) {
					const struct ktensor *t =
						resolve(ls, n, &r[j]);

					if (!t)
						break;
					in[j] = *t;
				}
				if (j < n_r) {
					left++;
					break;
				}
				rc = call_layer(c, &ls[i], in, n_r, &out);
				if (rc)
					return rc;
				progress = 1;
			}
		}
	}
	if (left) {
		for (i = 0; i < n; i++) {
			const json_t *nodes = json_object_get(ls[i].obj,
							      "inbound_nodes");

			if (!(ls[i].k->flags & KL_INPUT) &&
			    ls[i].n_calls < (int)json_array_size(nodes))
				return tfk_errf(c->err, TFK_EINVAL, "%s."
						"inbound_nodes[%d]: its inputs "
						"are never computed (a node "
						"index past a layer's calls, "
						"or a cycle)", ls[i].path,
						ls[i].n_calls);
		}
	}
	return 0;
}

/* Outputs, regularization ------------------------------------------------------- */

static int add_output(struct kctx *c, const char *name,
		      const struct ktensor *t)
{
	struct tfk_model *m = c->m;
	struct tfk_model_output *o;

	o = tfk_realloc(m->outputs, (size_t)(m->n_outputs + 1) * sizeof(*o));
	if (!o)
		return tfk_errf(c->err, TFK_ENOMEM, "out of memory");
	m->outputs = o;
	o = &m->outputs[m->n_outputs];
	memset(o, 0, sizeof(*o));
	o->name = tfk_strdup(name);
	if (!o->name)
		return tfk_errf(c->err, TFK_ENOMEM, "out of memory");
	m->n_outputs++;
	o->train = t->t;
	o->infer = t->i;
	o->act = t->act;
	o->train_logits = t->act ? t->t_logits : (struct tfk_port){ -1, 0 };
	o->infer_logits = t->act ? t->i_logits : (struct tfk_port){ -1, 0 };
	if (tfk_graph_find(c->g, name, &(struct tfk_port){ 0, 0 }, NULL) &&
	    tfk_graph_set_output(c->g, name, t->i, c->err))
		return tfk_err_prefix(c->err, "%s: output", c->path);
	return 0;
}

/* sum over vars of l1 * sum|w| + l2 * sum w^2 (keras.regularizers) */
static int build_reg(struct kctx *c)
{
	struct tfk_model *m = c->m;
	struct tfk_port total = { -1, 0 }, t, k;
	int i, j, rc;

	snprintf(c->scope, sizeof(c->scope), "regularization/");
	for (i = 0; i < m->n_vars; i++) {
		const struct tfk_model_var *v = &m->vars[i];
		const char *name;
		struct tfk_tensor *w = tfk_graph_var_at(c->g, v->var, &name);
		int32_t axes[TFK_MAX_RANK];
		struct tfk_port p, in[2];
		struct tfk_attr kd = TFK_A_BOOL("keep_dims", 0);

		if (!v->l1 && !v->l2)
			continue;
		if ((rc = tfk_graph_find(c->g, name, &p, c->err)))
			return rc;
		for (j = 0; j < w->rank; j++)
			axes[j] = j;
		for (j = 0; j < 2; j++) {
			float f = j ? v->l2 : v->l1;

			if (!f)
				continue;
			rc = j ? kop2(c, "Mul", p, p, &t) :
				kop1(c, "Abs", p, &t);
			in[0] = t;
			if (!rc)
				rc = kconst_iv(c, axes, w->rank, &in[1]);
			if (!rc)
				rc = kop(c, "Sum", in, 2, &kd, 1, &t);
			if (!rc)
				rc = kconst_f(c, f, &k);
			if (!rc)
				rc = kop2(c, "Mul", t, k, &t);
			if (!rc && total.node >= 0)
				rc = kop2(c, "AddV2", total, t, &t);
			if (rc)
				return tfk_err_prefix(c->err, "%s: "
						      "regularizer of %s",
						      c->path, name);
			total = t;
		}
	}
	m->reg_loss = total;
	return 0;
}

/* Entry ---------------------------------------------------------------------- */

void tfk_model_free(struct tfk_model *m)
{
	int i;

	if (!m)
		return;
	tfk_graph_free(m->g);
	tfk_free(m->name);
	for (i = 0; i < m->n_inputs; i++)
		tfk_free(m->inputs[i].name);
	tfk_free(m->inputs);
	for (i = 0; i < m->n_outputs; i++)
		tfk_free(m->outputs[i].name);
	tfk_free(m->outputs);
	tfk_free(m->vars);
	tfk_free(m->updates);
	tfk_free(m);
}

static int build(struct kctx *c, const json_t *model)
{
	const json_t *cls, *cfg, *layers, *nm;
	struct klayer *ls = NULL;
	int functional, n = 0, i, j, rc;
	struct kref r[KMAX_IN];
	int n_r;

	if (!json_is_object(model))
		return tfk_errf(c->err, TFK_EINVAL, "%s: expected a model "
				"object {\"class_name\": \"Sequential\", "
				"\"config\": {...}}", c->path);
	if ((rc = check_keys(c, model, " class_name config keras_version "
			     "backend module registered_name build_config "
			     "compile_config dtype_policy ", c->path, "")))
		return rc;
	/* tfkit's key for Keras' global policy (mixed_precision.
	 * set_global_policy is code, not config): every layer's */
	nm = json_object_get(model, "dtype_policy");
	if (nm && (!json_is_string(nm) ||
		   tfk_keras_policy(json_string_value(nm)) < 0))
		return tfk_errf(c->err, TFK_EINVAL, "%s.dtype_policy: "
				"unknown dtype policy%s%s%s (expected "
				"float32 or mixed_bfloat16)", c->path,
				json_is_string(nm) ? " '" : "",
				json_is_string(nm) ? json_string_value(nm) : "",
				json_is_string(nm) ? "'" : "");
	c->bf16 = nm && tfk_keras_policy(json_string_value(nm)) == 1;
	cls = json_object_get(model, "class_name");
	if (!json_is_string(cls))
		return tfk_errf(c->err, TFK_EINVAL, "%s.class_name: expected "
				"\"Sequential\" or \"Functional\"", c->path);
	if (!strcmp(json_string_value(cls), "Sequential"))
		functional = 0;
	else if (!strcmp(json_string_value(cls), "Functional") ||
		 !strcmp(json_string_value(cls), "Model"))
		functional = 1;
	else
		return tfk_errf(c->err, TFK_EINVAL, "%s.class_name: unknown "
				"model class '%s' (expected Sequential or "
				"Functional)", c->path,
				json_string_value(cls));
	cfg = json_object_get(model, "config");
	if (!json_is_object(cfg))
		return tfk_errf(c->err, TFK_EINVAL, "%s.config: expected an "
				"object", c->path);
	if ((rc = check_keys(c, cfg, functional ? " name trainable layers "
			     "input_layers output_layers " : " name trainable "
			     "dtype layers build_input_shape ", c->path,
			     ".config")))
		return rc;
	nm = json_object_get(cfg, "name");
	c->m->name = tfk_strdup(json_is_string(nm) ? json_string_value(nm) :
				functional ? "model" : "sequential");
	if (!c->m->name)
		return tfk_errf(c->err, TFK_ENOMEM, "out of memory");
	layers = json_object_get(cfg, "layers");
	if (!json_is_array(layers) || json_array_size(layers) > 100000)
		return tfk_errf(c->err, TFK_EINVAL, "%s.config.layers: "
				"expected a list of layers", c->path);
	n = (int)json_array_size(layers);
	ls = tfk_calloc(n ? (size_t)n : 1, sizeof(*ls));
	if (!ls)
		return tfk_errf(c->err, TFK_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		snprintf(ls[i].path, sizeof(ls[i].path), "%s.config.layers[%d]",
			 c->path, i);
		rc = parse_layer(c, &ls[i], json_array_get(layers, i),
				 functional);
		if (rc)
			goto out;
		for (j = 0; j < i; j++)
			if (!strcmp(ls[j].name, ls[i].name)) {
				rc = tfk_errf(c->err, TFK_EINVAL, "%s.config."
					      "name: '%s' is also the name of "
					      "layers[%d]", ls[i].path,
					      ls[i].name, j);
				goto out;
			}
	}
	if (!functional) {
		rc = build_sequential(c, cfg, ls, n);
		if (!rc && n)
			rc = add_output(c, ls[n - 1].name,
					&ls[n - 1].outs[ls[n - 1].n_calls - 1]);
		goto done;
	}
	rc = build_functional(c, cfg, ls, n);
	if (!rc)
		rc = ref_list(c, cfg, "output_layers", r, &n_r);
	for (i = 0; !rc && i < n_r; i++) {
		struct klayer *l = find_layer(ls, n, r[i].layer);

		if (!l || r[i].node >= l->n_calls || r[i].tensor)
			rc = tfk_errf(c->err, TFK_EINVAL, "%s.config."
				      "output_layers[%d]: no output '%s' node "
				      "%ld tensor %ld", c->path, i,
				      r[i].layer, r[i].node, r[i].tensor);
		else
			rc = add_output(c, l->name, &l->outs[r[i].node]);
	}
done:
	if (!rc)
		rc = build_reg(c);
out:
	for (i = 0; i < n; i++)
		tfk_free(ls[i].outs);
	tfk_free(ls);
	return rc;
}

int tfk_keras_build(const json_t *model, const char *path, uint64_t seed,
		    struct tfk_model **mp, struct tfk_err *err)
{
	struct tfk_model *m;
	struct kctx c;
	int rc;

	*mp = NULL;
	m = tfk_calloc(1, sizeof(*m));
	if (!m)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	m->reg_loss.node = -1;
	rc = tfk_graph_new(&m->g, err);
	if (rc) {
		tfk_free(m);
		return rc;
	}
	memset(&c, 0, sizeof(c));
	c.m = m;
	c.g = m->g;
	c.path = path ? path : "model";
	c.seed = seed;
	c.err = err;
	rc = build(&c, model);
	if (rc) {
		tfk_model_free(m);
		return rc;
	}
	*mp = m;
	return 0;
}
