/*
 * servable.c - a SavedModel or .tflite loaded once, its signatures run
 * through per-thread runners (see servable.h for the contract).
 *
 * A SavedModel signature is imported for the set of inputs a runner
 * feeds (the importer prunes to what the outputs need and keeps
 * PlaceholderWithDefault defaults for the rest), so the import is
 * cached per (signature, sorted fed keys) on the servable, behind its
 * mutex, and the graph shared read-only by every runner over it: an
 * executor only reads its graph (graph/exec.h), so N worker threads
 * hold one copy of the weights and N arenas. Rejected: importing per
 * runner (N copies of the weights, and N bundle reads at load) and one
 * lock around every run (a server's threads would take turns).
 *
 * A .tflite runner builds its own float graph or int8 interpreter: the
 * float graph is built for the fed shapes (TFLite's ResizeInputTensor),
 * so a run with new input shapes rebuilds it; the int8 interpreter
 * resizes itself. Neither is shared: the int8 interpreter keeps packed
 * weights and buffers per instance, and a float graph costs no more
 * than the executor beside it.
 */
#include "model/servable.h"

#include "format/savedmodel.h"
#include "graph/exec.h"
#include "graph/graph.h"
#include "model/import.h"
#include "model/lite.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/profile.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* One cached SavedModel import: a signature imported for a fed set. */
struct sv_import {
	const struct tfk_signature *sig;
	char *fed;		/* the fed keys, sorted, '\n'-joined */
	struct tfk_import *imp;
	uint64_t gen;		/* the state generation its graph's
				 * variables hold (under state_lock) */
	struct sv_import *next;
};

/* A variable's value as the last stateful run left it. */
struct sv_var {
	char *name;		/* the graph variable's name */
	enum tfk_dtype dtype;
	size_t nbytes;
	void *data;
	struct sv_var *next;
};

/* A signature and what servable.h shows of it (owned arrays). */
struct sv_sig {
	struct tfk_sv_signature pub;
	struct tfk_sv_tensor *ins, *outs;
	const struct tfk_signature *sm;		/* SavedModel */
	const struct tfk_tfl_signature *tfl;	/* .tflite; NULL: none */
	int subgraph;
	int *in_tensor, *out_tensor;		/* .tflite tensor indices */
};

struct tfk_servable {
	enum tfk_servable_kind kind;
	char *path;
	struct tfk_savedmodel *sm;
	const struct tfk_meta_graph *mg;
	struct tfk_tflite tfl;
	int has_tfl;
	int n_sigs;
	struct sv_sig *sigs;
	pthread_mutex_t lock;
	struct sv_import *imports;
	/* The state (see servable.h): variables written by runs, and the
	 * lock ordering runs once a signature that writes was imported
	 * (stateful: set under both locks, read under state_lock). */
	pthread_rwlock_t state_lock;
	int stateful;
	uint64_t state_gen;	/* stateful runs so far */
	struct sv_var *state;
};

struct tfk_runner {
	struct tfk_servable *s;
	const struct sv_sig *sig;
	struct tfk_runner_opts o;
	int n_in, n_out;
	struct tfk_sv_tensor *ins;	/* fed order */
	/* SavedModel */
	const struct tfk_import *imp;
	struct sv_import *ci;	/* the cache entry of imp */
	int *slot;		/* input i -> exec feed slot, -1 unneeded */
	int n_feed;
	struct tfk_tensor *feeds;
	/* .tflite */
	int is_int8;
	int *sg_slot;		/* subgraph input k -> runner input */
	struct tfk_tdesc *desc;	/* the shapes the float graph is built for */
	struct tfk_graph *g;
	struct tfk_tfl_int8 *q8;
	struct tfk_tensor *q8_out;
	/* both */
	struct tfk_exec *x;
	const struct tfk_tensor **out;
};

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = tfk_malloc(n);

	if (p)
		memcpy(p, s, n);
	return p;
}

static int oom(struct tfk_err *err)
{
	return tfk_errf(err, TFK_ENOMEM, "out of memory");
}

/* Signatures ------------------------------------------------------------- */

static void tinfo_to_sv(const struct tfk_tensor_info *ti,
			struct tfk_sv_tensor *t)
{
	int d;

	t->key = ti->key;
	t->name = ti->name;
	t->dtype = (enum tfk_dtype)(ti->dtype > 100 ? ti->dtype - 100 :
				    ti->dtype);
	t->rank = ti->has_shape && !ti->unknown_rank &&
		ti->rank <= TFK_MAX_RANK ? ti->rank : -1;
	for (d = 0; d < t->rank; d++)
		t->shape[d] = ti->dims[d];
	t->tfl_type = -1;
	t->tensor = -1;
}

static int sm_signatures(struct tfk_servable *s, struct tfk_err *err)
{
	const struct tfk_meta_graph *mg = s->mg;
	int i, j;

	s->sigs = tfk_calloc((size_t)mg->n_signatures + 1, sizeof(*s->sigs));
	if (!s->sigs)
		return oom(err);
	for (i = 0; i < mg->n_signatures; i++) {
		const struct tfk_signature *g = &mg->signatures[i];
		struct sv_sig *v = &s->sigs[i];

		s->n_sigs++;
		v->sm = g;
		v->ins = tfk_calloc((size_t)g->n_inputs + 1, sizeof(*v->ins));
		v->outs = tfk_calloc((size_t)g->n_outputs + 1,
				     sizeof(*v->outs));
		if (!v->ins || !v->outs)
			return oom(err);
		for (j = 0; j < g->n_inputs; j++)
			tinfo_to_sv(&g->inputs[j], &v->ins[j]);
		for (j = 0; j < g->n_outputs; j++)
			tinfo_to_sv(&g->outputs[j], &v->outs[j]);
		v->pub.key = g->key;
		v->pub.method_name = g->method_name;
		v->pub.n_inputs = g->n_inputs;
		v->pub.n_outputs = g->n_outputs;
		v->pub.inputs = v->ins;
		v->pub.outputs = v->outs;
	}
	return 0;
}

static void tfl_to_sv(const struct tfk_tfl_tensor *x, const char *key,
		      struct tfk_sv_tensor *t)
{
	enum tfk_dtype dt = tfk_tfl_dtype(x->type);
	int d;

	t->key = key;
	t->name = x->name;
	t->dtype = dt;
	t->tfl_type = x->type;
	t->rank = x->rank;
	for (d = 0; d < x->rank; d++)
		t->shape[d] = x->has_shape_signature ? x->shape_signature[d] :
			x->shape[d];
}

static int tmap_cmp(const void *a, const void *b)
{
	return strcmp(((const struct tfk_sv_tensor *)a)->key,
		      ((const struct tfk_sv_tensor *)b)->key);
}

/* One .tflite signature: sig, or subgraph 0 by tensor names. */
static int tfl_signature(struct tfk_servable *s, struct sv_sig *v,
			 const struct tfk_tfl_signature *sig,
			 struct tfk_err *err)
{
	const struct tfk_tfl_subgraph *g;
	int j, n_in, n_out;

	v->tfl = sig;
	v->subgraph = sig ? (int)sig->subgraph_index : 0;
	g = &s->tfl.subgraphs[v->subgraph];
	n_in = sig ? sig->n_inputs : g->n_inputs;
	n_out = sig ? sig->n_outputs : g->n_outputs;
	v->ins = tfk_calloc((size_t)n_in + 1, sizeof(*v->ins));
	v->outs = tfk_calloc((size_t)n_out + 1, sizeof(*v->outs));
	v->in_tensor = tfk_calloc((size_t)n_in + 1, sizeof(int));
	v->out_tensor = tfk_calloc((size_t)n_out + 1, sizeof(int));
	if (!v->ins || !v->outs || !v->in_tensor || !v->out_tensor)
		return oom(err);
	for (j = 0; j < n_in; j++) {
		int t = sig ? (int)sig->inputs[j].tensor_index : g->inputs[j];

		tfl_to_sv(&g->tensors[t], sig ? sig->inputs[j].name :
			  g->tensors[t].name, &v->ins[j]);
		v->ins[j].tensor = t;
		v->in_tensor[j] = t;
	}
	for (j = 0; j < n_out; j++) {
		int t = sig ? (int)sig->outputs[j].tensor_index :
			g->outputs[j];

		tfl_to_sv(&g->tensors[t], sig ? sig->outputs[j].name :
			  g->tensors[t].name, &v->outs[j]);
		v->outs[j].tensor = t;
		v->out_tensor[j] = t;
	}
	if (sig && n_out > 1) {
		/* outputs by key, as TFLite's signature runner lists them;
		 * sort an index so the tensor numbers follow */
		int *idx = tfk_calloc((size_t)n_out, sizeof(int)), a, b;
		struct tfk_sv_tensor *o = tfk_calloc((size_t)n_out,
						     sizeof(*o));
		int *ot = tfk_calloc((size_t)n_out, sizeof(int));

		if (!idx || !o || !ot) {
			tfk_free(idx);
			tfk_free(o);
			tfk_free(ot);
			return oom(err);
		}
		for (a = 0; a < n_out; a++)
			idx[a] = a;
		for (a = 1; a < n_out; a++)	/* insertion: stable, small */
			for (b = a; b > 0 && tmap_cmp(&v->outs[idx[b - 1]],
						      &v->outs[idx[b]]) > 0;
			     b--) {
				int t = idx[b];

				idx[b] = idx[b - 1];
				idx[b - 1] = t;
			}
		for (a = 0; a < n_out; a++) {
			o[a] = v->outs[idx[a]];
			ot[a] = v->out_tensor[idx[a]];
		}
		tfk_free(v->outs);
		tfk_free(v->out_tensor);
		tfk_free(idx);
		v->outs = o;
		v->out_tensor = ot;
	}
	v->pub.key = sig ? sig->key : "serving_default";
	v->pub.method_name = "";
	v->pub.n_inputs = n_in;
	v->pub.n_outputs = n_out;
	v->pub.inputs = v->ins;
	v->pub.outputs = v->outs;
	return 0;
}

static int tfl_signatures(struct tfk_servable *s, struct tfk_err *err)
{
	int n = s->tfl.n_signatures ? s->tfl.n_signatures : 1, i, rc;

	s->sigs = tfk_calloc((size_t)n, sizeof(*s->sigs));
	if (!s->sigs)
		return oom(err);
	for (i = 0; i < n; i++) {
		s->n_sigs++;
		rc = tfl_signature(s, &s->sigs[i], s->tfl.n_signatures ?
				   &s->tfl.signatures[i] : NULL, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* Servables -------------------------------------------------------------- */

int tfk_servable_open(struct tfk_servable **sp, const char *path,
		      const struct tfk_servable_opts *o, struct tfk_err *err)
{
	struct tfk_servable *s;
	struct stat st;
	int rc, k;

	*sp = NULL;
	s = tfk_calloc(1, sizeof(*s));
	if (!s)
		return oom(err);
	pthread_mutex_init(&s->lock, NULL);
	pthread_rwlock_init(&s->state_lock, NULL);
	s->path = dup_str(strcmp(path, "-") ? path : "<stdin>");
	if (!s->path) {
		rc = oom(err);
		goto fail;
	}
	if (o && o->kind ? o->kind == TFK_SERVABLE_SAVEDMODEL :
	    strcmp(path, "-") && !stat(path, &st) && S_ISDIR(st.st_mode)) {
		const char *tags = o && o->tag_set ? o->tag_set : "serve";

		s->kind = TFK_SERVABLE_SAVEDMODEL;
		if ((rc = tfk_savedmodel_open(&s->sm, path, err)))
			goto fail;
		k = tfk_savedmodel_find_tags(s->sm, tags, err);
		if (k < 0) {
			rc = tfk_err_prefix(err, "%s", path);
			goto fail;
		}
		s->mg = &s->sm->meta_graphs[k];
		rc = sm_signatures(s, err);
	} else {
		s->kind = TFK_SERVABLE_TFLITE;
		if ((rc = tfk_tflite_load_file(&s->tfl, path, err)))
			goto fail;
		s->has_tfl = 1;
		rc = tfl_signatures(s, err);
	}
	if (rc)
		goto fail;
	*sp = s;
	return 0;
fail:
	tfk_servable_close(s);
	return rc;
}

void tfk_servable_close(struct tfk_servable *s)
{
	struct sv_import *c, *next;
	int i;

	if (!s)
		return;
	for (c = s->imports; c; c = next) {
		next = c->next;
		tfk_import_free(c->imp);
		tfk_free(c->fed);
		tfk_free(c);
	}
	for (i = 0; i < s->n_sigs; i++) {
		tfk_free(s->sigs[i].ins);
		tfk_free(s->sigs[i].outs);
		tfk_free(s->sigs[i].in_tensor);
		tfk_free(s->sigs[i].out_tensor);
	}
	tfk_free(s->sigs);
	tfk_savedmodel_close(s->sm);
	if (s->has_tfl)
		tfk_tflite_release(&s->tfl);
	pthread_mutex_destroy(&s->lock);
	pthread_rwlock_destroy(&s->state_lock);
	while (s->state) {
		struct sv_var *v = s->state;

		s->state = v->next;
		tfk_free(v->name);
		tfk_free(v->data);
		tfk_free(v);
	}
	tfk_free(s->path);
	tfk_free(s);
}

enum tfk_servable_kind tfk_servable_kind(const struct tfk_servable *s)
{
	return s->kind;
}

const char *tfk_servable_path(const struct tfk_servable *s)
{
	return s->path;
}

const struct tfk_savedmodel *tfk_servable_savedmodel(
	const struct tfk_servable *s)
{
	return s->sm;
}

const struct tfk_meta_graph *tfk_servable_meta_graph(
	const struct tfk_servable *s)
{
	return s->mg;
}

const struct tfk_tflite *tfk_servable_tflite(const struct tfk_servable *s)
{
	return s->has_tfl ? &s->tfl : NULL;
}

int tfk_servable_n_signatures(const struct tfk_servable *s)
{
	return s->n_sigs;
}

const struct tfk_sv_signature *tfk_servable_signature(
	const struct tfk_servable *s, int i)
{
	return i >= 0 && i < s->n_sigs ? &s->sigs[i].pub : NULL;
}

const struct tfk_sv_signature *tfk_servable_find(const struct tfk_servable *s,
						 const char *key,
						 struct tfk_err *err)
{
	struct tfk_buf l;
	int i;

	if (!key && s->kind == TFK_SERVABLE_TFLITE && s->n_sigs == 1)
		return &s->sigs[0].pub;
	if (!key)
		key = "serving_default";
	if (s->kind == TFK_SERVABLE_SAVEDMODEL) {
		/* the meta graph's own lookup, for its message */
		const struct tfk_signature *g =
			tfk_savedmodel_signature(s->mg, key, err);

		for (i = 0; g && i < s->n_sigs; i++)
			if (s->sigs[i].sm == g)
				return &s->sigs[i].pub;
		return NULL;
	}
	for (i = 0; i < s->n_sigs; i++)
		if (!strcmp(s->sigs[i].pub.key, key))
			return &s->sigs[i].pub;
	tfk_buf_init(&l);
	for (i = 0; i < s->n_sigs; i++)
		tfk_buf_addf(&l, "%s%s", i ? ", " : "", s->sigs[i].pub.key);
	tfk_buf_addc(&l, 0);
	tfk_errf(err, TFK_ENOTFOUND, "could not find signature \"%s\"; "
		 "signatures are: %s", key, l.data ? (char *)l.data : "");
	tfk_buf_release(&l);
	return NULL;
}

static const struct sv_sig *sig_of(const struct tfk_servable *s,
				   const struct tfk_sv_signature *sig)
{
	return (const struct sv_sig *)sig;	/* pub is the first member */
}

int tfk_servable_is_int8(const struct tfk_servable *s,
			 const struct tfk_sv_signature *sig)
{
	return s->has_tfl && tfk_tflite_is_int8(&s->tfl,
						sig_of(s, sig)->subgraph);
}

int tfk_servable_subgraph(const struct tfk_servable *s,
			  const struct tfk_sv_signature *sig)
{
	return sig_of(s, sig)->subgraph;
}

/* Runners ---------------------------------------------------------------- */

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The cached import of v for the keys fed, made on first use. */
static int sm_import(struct tfk_servable *s, const struct sv_sig *v,
		     const char *const *fed, int n_fed,
		     struct sv_import **ci, struct tfk_err *err)
{
	const char **sorted = tfk_calloc((size_t)n_fed + 1, sizeof(*sorted));
	struct sv_import *c;
	struct tfk_buf key;
	int i, rc = 0;

	if (!sorted)
		return oom(err);
	memcpy(sorted, fed, (size_t)n_fed * sizeof(*sorted));
	qsort(sorted, (size_t)n_fed, sizeof(*sorted), str_cmp);
	tfk_buf_init(&key);
	for (i = 0; i < n_fed; i++)
		tfk_buf_addf(&key, "%s\n", sorted[i]);
	tfk_buf_addc(&key, 0);
	tfk_free(sorted);
	if (!tfk_buf_ok(&key)) {
		tfk_buf_release(&key);
		return oom(err);
	}
	pthread_mutex_lock(&s->lock);
	for (c = s->imports; c; c = c->next)
		if (c->sig == v->sm && !strcmp(c->fed, (char *)key.data))
			break;
	if (!c) {
		c = tfk_calloc(1, sizeof(*c));
		if (!c) {
			rc = oom(err);
		} else {
			c->sig = v->sm;
			c->fed = (char *)key.data;
			key.data = NULL;
			rc = tfk_import_signature_fed(&c->imp, s->mg, v->sm,
						      fed, n_fed,
						      s->sm->variables_prefix,
						      err);
			if (rc) {
				tfk_err_prefix(err, "%s: signature %s",
					       s->path, v->pub.key);
				tfk_free(c->fed);
				tfk_free(c);
				c = NULL;
			} else {
				c->next = s->imports;
				s->imports = c;
				if (c->imp->n_targets) {
					pthread_rwlock_wrlock(&s->state_lock);
					s->stateful = 1;
					pthread_rwlock_unlock(&s->state_lock);
				}
			}
		}
	}
	pthread_mutex_unlock(&s->lock);
	tfk_buf_release(&key);
	if (c)
		*ci = c;
	return rc;
}

static int bad_key(const struct sv_sig *v, const char *key,
		   struct tfk_err *err)
{
	struct tfk_buf l;
	int j;

	tfk_buf_init(&l);
	for (j = 0; j < v->pub.n_inputs; j++)
		tfk_buf_addf(&l, "%s\"%s\"", j ? ", " : "", v->ins[j].key);
	tfk_buf_addc(&l, 0);
	tfk_errf(err, TFK_EINVAL, "\"%s\" is not a valid input key of "
		 "signature %s; valid keys: %s", key, v->pub.key,
		 l.data ? (char *)l.data : "");
	tfk_buf_release(&l);
	return TFK_EINVAL;
}

static int sm_runner(struct tfk_runner *r, const char *const *fed,
		     struct tfk_err *err)
{
	const struct tfk_import *imp = NULL;
	struct tfk_exec_opts eo = { NULL, 0, 1 };
	const char **names, **fetch;
	int i, j, rc;

	if ((rc = sm_import(r->s, r->sig, fed, r->n_in, &r->ci, err)))
		return rc;
	imp = r->imp = r->ci->imp;
	r->slot = tfk_calloc((size_t)r->n_in + 1, sizeof(int));
	r->feeds = tfk_calloc((size_t)r->n_in + 1, sizeof(*r->feeds));
	names = tfk_calloc((size_t)r->n_in + 1, sizeof(*names));
	/* the writes run as fetches of their own, after the outputs */
	fetch = tfk_calloc((size_t)(imp->n_fetches + imp->n_targets) + 1,
			   sizeof(*fetch));
	r->out = tfk_calloc((size_t)(imp->n_fetches + imp->n_targets) + 1,
			    sizeof(*r->out));
	if (!r->slot || !r->feeds || !names || !fetch || !r->out) {
		rc = oom(err);
		goto out;
	}
	for (i = 0; i < r->n_in; i++) {
		const struct tfk_import_feed *fd = NULL;
		struct tfk_sv_tensor *t = &r->ins[i];

		for (j = 0; j < imp->n_feeds; j++)
			if (!strcmp(imp->feeds[j].key, fed[i]))
				fd = &imp->feeds[j];
		r->slot[i] = -1;
		if (!fd)
			continue;
		t->dtype = fd->dtype;
		t->rank = fd->rank;
		memcpy(t->shape, fd->shape, sizeof(t->shape));
		if (!fd->node)
			continue;
		r->slot[i] = r->n_feed;
		names[r->n_feed++] = fd->node;
	}
	for (j = 0; j < imp->n_fetches; j++)
		fetch[j] = imp->fetches[j].key;
	for (j = 0; j < imp->n_targets; j++)
		fetch[imp->n_fetches + j] = imp->targets[j];
	eo.threads = r->o.threads;
	eo.seed = r->o.seed;
	rc = tfk_exec_new(&r->x, imp->g, names, r->n_feed, fetch,
			  imp->n_fetches + imp->n_targets, &eo, err);
	if (!rc)
		tfk_exec_any_shape(r->x, r->o.any_shape);
	if (rc)
		tfk_err_prefix(err, "%s: signature %s", r->s->path,
			       r->sig->pub.key);
out:
	tfk_free(names);
	tfk_free(fetch);
	return rc;
}

static int tfl_runner(struct tfk_runner *r, struct tfk_err *err)
{
	const struct tfk_tflite *m = &r->s->tfl;
	const struct tfk_tfl_subgraph *g = &m->subgraphs[r->sig->subgraph];
	int k, i, rc;

	r->sg_slot = tfk_calloc((size_t)g->n_inputs + 1, sizeof(int));
	r->feeds = tfk_calloc((size_t)g->n_inputs + 1, sizeof(*r->feeds));
	r->desc = tfk_calloc((size_t)g->n_inputs + 1, sizeof(*r->desc));
	r->out = tfk_calloc((size_t)r->n_out + 1, sizeof(*r->out));
	if (!r->sg_slot || !r->feeds || !r->desc || !r->out)
		return oom(err);
	for (k = 0; k < g->n_inputs; k++) {
		const char *key = NULL;

		for (i = 0; i < r->sig->pub.n_inputs; i++)
			if (r->sig->in_tensor[i] == g->inputs[k])
				key = r->sig->ins[i].key;
		if (!key)
			return tfk_errf(err, TFK_EINVAL, "%s: input tensor %d "
					"'%s' has no signature key",
					r->s->path, g->inputs[k],
					g->tensors[g->inputs[k]].name);
		r->sg_slot[k] = -1;
		for (i = 0; i < r->n_in; i++)
			if (!strcmp(r->ins[i].key, key))
				r->sg_slot[k] = i;
		if (r->sg_slot[k] < 0)
			return tfk_errf(err, TFK_EINVAL, "%s: input '%s' is "
					"not given", r->s->path, key);
	}
	r->is_int8 = tfk_tflite_is_int8(m, r->sig->subgraph);
	if (!r->is_int8)
		return 0;	/* the graph is built for the first run's shapes */
	r->q8_out = tfk_calloc((size_t)r->n_out + 1, sizeof(*r->q8_out));
	if (!r->q8_out)
		return oom(err);
	if ((rc = tfk_tflite_int8_new(&r->q8, m, r->sig->subgraph, err)))
		return tfk_err_prefix(err, "%s", r->s->path);
	tfk_tflite_int8_threads(r->q8, r->o.threads > 0 ? r->o.threads : 1);
	if (r->o.max_work > 0)
		tfk_tflite_int8_max_work(r->q8, r->o.max_work);
	for (i = 0; i < r->n_out; i++)
		r->out[i] = &r->q8_out[i];
	return 0;
}

int tfk_runner_new(struct tfk_runner **rp, struct tfk_servable *s,
		   const struct tfk_sv_signature *sig,
		   const char *const *fed, int n_fed,
		   const struct tfk_runner_opts *o, struct tfk_err *err)
{
	const struct sv_sig *v = sig_of(s, sig);
	const char **keys = NULL;
	struct tfk_runner *r;
	int i, j, rc;

	*rp = NULL;
	r = tfk_calloc(1, sizeof(*r));
	if (!r)
		return oom(err);
	r->s = s;
	r->sig = v;
	if (o)
		r->o = *o;
	r->n_in = n_fed < 0 ? v->pub.n_inputs : n_fed;
	r->n_out = v->pub.n_outputs;
	r->ins = tfk_calloc((size_t)r->n_in + 1, sizeof(*r->ins));
	keys = tfk_calloc((size_t)r->n_in + 1, sizeof(*keys));
	if (!r->ins || !keys) {
		rc = oom(err);
		goto out;
	}
	for (i = 0; i < r->n_in; i++) {
		const char *k = n_fed < 0 ? v->ins[i].key : fed[i];

		for (j = 0; j < v->pub.n_inputs; j++)
			if (!strcmp(v->ins[j].key, k))
				break;
		if (j == v->pub.n_inputs) {
			rc = bad_key(v, k, err);
			goto out;
		}
		r->ins[i] = v->ins[j];
		keys[i] = v->ins[j].key;
	}
	rc = s->kind == TFK_SERVABLE_SAVEDMODEL ? sm_runner(r, keys, err) :
		tfl_runner(r, err);
out:
	tfk_free(keys);
	if (rc) {
		tfk_runner_free(r);
		return rc;
	}
	*rp = r;
	return 0;
}

void tfk_runner_free(struct tfk_runner *r)
{
	int i;

	if (!r)
		return;
	tfk_exec_free(r->x);
	tfk_graph_free(r->g);
	tfk_tflite_int8_free(r->q8);
	for (i = 0; r->q8_out && i < r->n_out; i++)
		tfk_tensor_release(&r->q8_out[i]);
	tfk_free(r->q8_out);
	tfk_free(r->ins);
	tfk_free(r->slot);
	tfk_free(r->sg_slot);
	tfk_free(r->desc);
	tfk_free(r->feeds);
	tfk_free(r->out);
	tfk_free(r);
}

int tfk_runner_n_inputs(const struct tfk_runner *r)
{
	return r->n_in;
}

int tfk_runner_needs(const struct tfk_runner *r, int i)
{
	return r->s->kind != TFK_SERVABLE_SAVEDMODEL || r->slot[i] >= 0;
}

const struct tfk_sv_tensor *tfk_runner_input(const struct tfk_runner *r,
					     int i)
{
	return &r->ins[i];
}

int tfk_runner_n_outputs(const struct tfk_runner *r)
{
	return r->n_out;
}

const struct tfk_sv_tensor *tfk_runner_output(const struct tfk_runner *r,
					      int j)
{
	return &r->sig->outs[j];
}

/* A borrowed view of t for a feed (no ownership, no quantization). */
static struct tfk_tensor view(const struct tfk_tensor *t)
{
	struct tfk_tensor v = *t;

	v.owner = TFK_OWN_BORROWED;
	memset(&v.quant, 0, sizeof(v.quant));
	return v;
}

static int shape_fits(const struct tfk_sv_tensor *w,
		      const struct tfk_tensor *t)
{
	int d;

	if (w->rank < 0)
		return 1;
	if (w->rank != t->rank)
		return 0;
	for (d = 0; d < t->rank; d++)
		if (w->shape[d] >= 0 && w->shape[d] != t->shape[d])
			return 0;
	return 1;
}

/* The servable's state into g's variables of the same name. */
static void state_in(struct tfk_servable *s, struct tfk_graph *g)
{
	const struct sv_var *v;
	struct tfk_tensor *t;

	for (v = s->state; v; v = v->next)
		if ((t = tfk_graph_var(g, v->name)) && t->dtype == v->dtype &&
		    t->nbytes == v->nbytes && v->nbytes)
			memcpy(t->data, v->data, v->nbytes);
}

/* The variables imp writes into the servable's state. */
static int state_out(struct tfk_servable *s, const struct tfk_import *imp,
		     struct tfk_err *err)
{
	struct sv_var *v;
	const char *name;
	int i;

	for (i = 0; i < imp->n_assigned; i++) {
		const struct tfk_tensor *t =
			tfk_graph_var_at(imp->g, imp->assigned[i], &name);

		for (v = s->state; v; v = v->next)
			if (!strcmp(v->name, name))
				break;
		if (!v) {
			v = tfk_calloc(1, sizeof(*v));
			if (!v || !(v->name = dup_str(name)) ||
			    !(v->data = tfk_malloc(t->nbytes + 1))) {
				if (v)
					tfk_free(v->name);
				tfk_free(v);
				return oom(err);
			}
			v->dtype = t->dtype;
			v->nbytes = t->nbytes;
			v->next = s->state;
			s->state = v;
		}
		if (v->nbytes == t->nbytes && t->nbytes)
			memcpy(v->data, t->data, t->nbytes);
	}
	return 0;
}

/*
 * One run under the servable's state lock (servable.h): shared while
 * no signature that writes has been imported, or when this graph
 * writes nothing and holds the state's latest generation; else
 * exclusive, the state copied in before and (for a writer) out after.
 */
static int state_run(struct tfk_runner *r, struct tfk_err *err)
{
	struct tfk_servable *s = r->s;
	struct sv_import *c = r->ci;
	int rc, rc2;

	pthread_rwlock_rdlock(&s->state_lock);
	if (!s->stateful || !tfk_graph_n_variables(c->imp->g) ||
	    (!c->imp->n_targets && c->gen == s->state_gen)) {
		rc = tfk_exec_run(r->x, r->feeds, 0, r->out, err);
		pthread_rwlock_unlock(&s->state_lock);
		return rc;
	}
	pthread_rwlock_unlock(&s->state_lock);
	pthread_rwlock_wrlock(&s->state_lock);
	if (c->gen != s->state_gen)
		state_in(s, c->imp->g);
	c->gen = s->state_gen;
	rc = tfk_exec_run(r->x, r->feeds, 0, r->out, err);
	/* a failed run may have written some variables already: they are
	 * kept, as TensorFlow keeps them */
	if (c->imp->n_targets) {
		rc2 = state_out(s, c->imp, err);
		c->gen = ++s->state_gen;
		if (!rc)
			rc = rc2;
	}
	pthread_rwlock_unlock(&s->state_lock);
	return rc;
}

static int sm_run(struct tfk_runner *r, const struct tfk_tensor *in,
		  struct tfk_err *err)
{
	int i;

	for (i = 0; i < r->n_in; i++) {
		const struct tfk_sv_tensor *w = &r->ins[i];
		char a[128], b[128];

		if (r->slot[i] < 0)
			continue;
		if (in[i].dtype != w->dtype)
			return tfk_errf(err, TFK_EINVAL, "input '%s': expected "
					"%s, got %s values", w->key,
					tfk_dtype_name(w->dtype),
					tfk_dtype_name(in[i].dtype));
		if (!r->o.any_shape && !shape_fits(w, &in[i]))
			return tfk_errf(err, TFK_EINVAL, "input '%s': expected "
					"%s %s, got shape %s", w->key,
					tfk_dtype_name(w->dtype),
					tfk_shape_str(w->rank, w->shape, a,
						      sizeof(a)),
					tfk_shape_str(in[i].rank, in[i].shape,
						      b, sizeof(b)));
		r->feeds[r->slot[i]] = in[i];
	}
	return state_run(r, err);
}

/* (Re)build the float graph and its executor for the feeds' shapes. */
static int tfl_plan(struct tfk_runner *r, int n_in, struct tfk_err *err)
{
	const struct tfk_tfl_subgraph *g =
		&r->s->tfl.subgraphs[r->sig->subgraph];
	struct tfk_exec_opts eo = { NULL, 0, 1 };
	char (*names)[16];
	const char **fn, **on;
	int k, rc;

	tfk_exec_free(r->x);
	r->x = NULL;
	tfk_graph_free(r->g);
	r->g = NULL;
	names = tfk_calloc((size_t)(n_in + r->n_out) + 1, sizeof(*names));
	fn = tfk_calloc((size_t)n_in + 1, sizeof(*fn));
	on = tfk_calloc((size_t)r->n_out + 1, sizeof(*on));
	if (!names || !fn || !on) {
		rc = oom(err);
		goto out;
	}
	for (k = 0; k < n_in; k++) {
		snprintf(names[k], sizeof(names[k]), "t%d", g->inputs[k]);
		fn[k] = names[k];
	}
	for (k = 0; k < r->n_out; k++) {
		snprintf(names[n_in + k], sizeof(names[0]), "t%d",
			 r->sig->out_tensor[k]);
		on[k] = names[n_in + k];
	}
	eo.threads = r->o.threads;
	eo.seed = r->o.seed;
	if (!(rc = tfk_tflite_graph_limited(&r->s->tfl, r->sig->subgraph,
					    r->desc, r->o.max_work, &r->g,
					    err)))
		rc = tfk_exec_new(&r->x, r->g, fn, n_in, on, r->n_out, &eo,
				  err);
out:
	tfk_free(names);
	tfk_free(fn);
	tfk_free(on);
	return rc;
}

static int tfl_run(struct tfk_runner *r, const struct tfk_tensor *in,
		   int want_out, struct tfk_err *err)
{
	const struct tfk_tfl_subgraph *g =
		&r->s->tfl.subgraphs[r->sig->subgraph];
	int k, rc = 0, replan = !r->x;

	for (k = 0; k < g->n_inputs; k++) {
		const struct tfk_tensor *t = &in[r->sg_slot[k]];
		struct tfk_tdesc d;

		r->feeds[k] = view(t);
		r->feeds[k].strs = NULL;
		if (r->is_int8)
			continue;
		tfk_tensor_desc(t, &d);
		if (memcmp(&d, &r->desc[k], sizeof(d))) {
			r->desc[k] = d;
			replan = 1;
		}
	}
	if (r->is_int8) {
		int i;

		for (i = 0; i < r->n_out; i++)
			tfk_tensor_release(&r->q8_out[i]);
		rc = tfk_tflite_int8_run(r->q8, r->feeds,
					 want_out ? r->n_out : 0,
					 r->sig->out_tensor, r->q8_out, err);
	} else {
		if (replan)
			rc = tfl_plan(r, g->n_inputs, err);
		if (!rc)
			rc = tfk_exec_run(r->x, r->feeds, 0, r->out, err);
	}
	return rc;
}

int tfk_runner_run(struct tfk_runner *r, const struct tfk_tensor *in,
		   const struct tfk_tensor **out, struct tfk_err *err)
{
	int rc, j;

	rc = r->s->kind == TFK_SERVABLE_SAVEDMODEL ? sm_run(r, in, err) :
		tfl_run(r, in, out != NULL, err);
	if (rc)
		return rc;
	for (j = 0; out && j < r->n_out; j++)
		out[j] = r->out[j];
	return 0;
}

/* Feeding conversion ----------------------------------------------------- */

static int is_float(enum tfk_dtype t)
{
	return t == TFK_DT_FLOAT || t == TFK_DT_DOUBLE || t == TFK_DT_HALF;
}

static int is_int(enum tfk_dtype t)
{
	return t == TFK_DT_INT8 || t == TFK_DT_INT16 || t == TFK_DT_INT32 ||
		t == TFK_DT_INT64 || t == TFK_DT_UINT8;
}

/* *t in place as dtype want (numeric only; see tfk_sv_convert). */
static int convert(struct tfk_tensor *t, enum tfk_dtype want,
		   const char *key, struct tfk_err *err)
{
	struct tfk_tensor o;
	int64_t n, i;
	int rc;

	if (t->dtype == want)
		return 0;
	if (!((is_float(want) && (is_float(t->dtype) || is_int(t->dtype)) &&
	       want != TFK_DT_HALF) ||
	      (is_int(want) && is_int(t->dtype))))
		return tfk_errf(err, TFK_EINVAL, "input '%s': expected %s, "
				"got %s values", key, tfk_dtype_name(want),
				tfk_dtype_name(t->dtype));
	rc = tfk_tensor_init(&o, want, t->rank, t->shape, err);
	if (rc)
		return rc;
	n = tfk_tensor_numel(t);
	for (i = 0; i < n; i++) {
		if (is_float(want)) {
			double v = is_float(t->dtype) ? tfk_tensor_get_f64(t, i) :
				(double)tfk_tensor_get_i64(t, i);

			if (want == TFK_DT_FLOAT)
				((float *)o.data)[i] = (float)v;
			else
				((double *)o.data)[i] = v;
		} else {
			int64_t v = tfk_tensor_get_i64(t, i), lo, hi;

			switch (want) {
			case TFK_DT_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
			case TFK_DT_UINT8: lo = 0; hi = UINT8_MAX; break;
			case TFK_DT_INT16: lo = INT16_MIN; hi = INT16_MAX;
				break;
			case TFK_DT_INT32: lo = INT32_MIN; hi = INT32_MAX;
				break;
			default: lo = INT64_MIN; hi = INT64_MAX;
			}
			if (v < lo || v > hi) {
				tfk_tensor_release(&o);
				return tfk_errf(err, TFK_EINVAL, "input '%s': "
						"value %" PRId64 " out of "
						"range for %s", key, v,
						tfk_dtype_name(want));
			}
			switch (want) {
			case TFK_DT_INT8: ((int8_t *)o.data)[i] = (int8_t)v;
				break;
			case TFK_DT_UINT8: ((uint8_t *)o.data)[i] = (uint8_t)v;
				break;
			case TFK_DT_INT16: ((int16_t *)o.data)[i] = (int16_t)v;
				break;
			case TFK_DT_INT32: ((int32_t *)o.data)[i] = (int32_t)v;
				break;
			default: ((int64_t *)o.data)[i] = v;
			}
		}
	}
	tfk_tensor_release(t);
	*t = o;
	return 0;
}

/* The dtype a quantized .tflite input is fed in: integers as its own
 * quantized values (range checked against its type), floats as float32
 * for the interpreter to quantize; TFK_DT_INVALID: as given. */
static enum tfk_dtype quant_feed(const struct tfk_sv_tensor *want,
				 enum tfk_dtype have)
{
	if (is_float(have))
		return TFK_DT_FLOAT;
	if (!is_int(have))
		return TFK_DT_INVALID;
	switch (want->tfl_type) {
	case TFK_TFL_INT8: return TFK_DT_INT8;
	case TFK_TFL_UINT8: return TFK_DT_UINT8;
	case TFK_TFL_INT16: return TFK_DT_INT16;
	default: return TFK_DT_INVALID;
	}
}

int tfk_sv_convert(struct tfk_tensor *t, const struct tfk_sv_tensor *want,
		   struct tfk_err *err)
{
	enum tfk_dtype w = want->dtype;
	char a[128], b[128];
	int tfl = want->tfl_type >= 0;
	int keep = tfl && (want->tfl_type == TFK_TFL_INT8 ||
			   want->tfl_type == TFK_TFL_UINT8 ||
			   want->tfl_type == TFK_TFL_INT16 ||
			   w == TFK_DT_INVALID);

	if ((w == TFK_DT_STRING) != (t->dtype == TFK_DT_STRING) ||
	    (w == TFK_DT_BOOL) != (t->dtype == TFK_DT_BOOL))
		return tfk_errf(err, TFK_EINVAL, "input '%s': expected %s, got "
				"%s values", want->key, tfk_dtype_name(w),
				tfk_dtype_name(t->dtype));
	if (keep) {
		enum tfk_dtype q = quant_feed(want, t->dtype);

		if (q != TFK_DT_INVALID && convert(t, q, want->key, err))
			return TFK_EINVAL;
	} else if (w != TFK_DT_STRING && w != TFK_DT_BOOL &&
		   convert(t, w, want->key, err)) {
		return TFK_EINVAL;
	}
	if (!tfl && !shape_fits(want, t))
		return tfk_errf(err, TFK_EINVAL, "input '%s': expected %s %s, "
				"got shape %s", want->key, tfk_dtype_name(w),
				tfk_shape_str(want->rank, want->shape, a,
					      sizeof(a)),
				tfk_shape_str(t->rank, t->shape, b,
					      sizeof(b)));
	return 0;
}

/* Timing ----------------------------------------------------------------- */

double tfk_sv_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int tfk_runner_bench(struct tfk_runner *r, const struct tfk_tensor *in,
		     const struct tfk_bench_opts *o,
		     struct tfk_bench_result *res, struct tfk_err *err)
{
	struct tfk_latency lat = { 0 };
	double t0, t1;
	long k;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	for (k = 0; k < o->warmup; k++)
		if ((rc = tfk_runner_run(r, in, NULL, err)))
			return rc;
	if (tfk_latency_init(&lat, o->iterations))
		return oom(err);
	t0 = tfk_sv_now();
	for (k = 0; o->iterations > 0 ? k < o->iterations :
	     k == 0 || tfk_sv_now() - t0 < o->seconds; k++) {
		uint64_t p0 = 0;

		if (k < o->profile_runs) {
			tfk_prof_record(1);
			tfk_prof_set_step(k + 1);
			p0 = tfk_prof_now();
		}
		t1 = tfk_sv_now();
		rc = tfk_runner_run(r, in, NULL, err);
		if (!rc)
			tfk_latency_add(&lat, (tfk_sv_now() - t1) * 1e6);
		if (k < o->profile_runs) {
			tfk_prof_span("predict", NULL, p0, tfk_prof_now(),
				      k + 1);
			tfk_prof_record(0);
		}
		if (rc)
			break;
	}
	if (!rc) {
		res->wall = tfk_sv_now() - t0;
		res->runs = k;
		tfk_latency_stats(&lat, &res->lat);
		res->runs_per_s = res->wall > 0 ? res->runs / res->wall : 0;
	}
	tfk_latency_release(&lat);
	return rc;
}
