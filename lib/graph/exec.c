/*
 * exec.c - prune, plan, run (see exec.h).
 *
 * Memory plan: each intermediate output is a buffer with a lifetime
 * [step that writes it, last step that reads it]; buffers are placed in
 * one arena greedily, largest first, each at the lowest 64-byte aligned
 * offset that overlaps no already placed buffer whose lifetime overlaps
 * its own (TFLite's arena planner does the same; optimal placement is
 * NP-hard and greedy-by-size is within a few percent on real nets). A
 * node's output never shares bytes with its inputs (their lifetimes
 * meet at the node's step), so kernels need not handle aliasing.
 *
 * Except byte-preserving ops (Reshape, Identity, Squeeze, ExpandDims):
 * their output is a view of their input's bytes, planned as no buffer
 * of its own, and the node does not run (a Flatten and its gradient
 * were two copies per step). The input's lifetime then extends to the
 * alias's last reader, so nothing overwrites the bytes while a reader
 * of the alias is still to come. An alias may view another alias, an
 * arena buffer or a feed (its pointer is taken at each run, as feeds
 * change), never a Const or a variable (an optimizer may write the
 * variable later in the same run), and a fetched output is never a
 * view of a feed (the fetch would dangle when the caller frees it).
 * String tensors are copied as before.
 *
 * Batch changes: the plan is a function of the feed shapes. Re-planning
 * when they change (O(n^2) in buffers, microseconds for hundreds of
 * nodes) was preferred to planning once for a maximum batch: it needs
 * no maximum from the caller, and the arena only grows, so a stream
 * whose last batch is short costs one plan and no allocation.
 *
 * Profiles (util/profile.h): while the recorder records, each kernel
 * run is an op event "name:Type", and each planned buffer is a
 * MemoryAllocation when its step starts and a MemoryDeallocation after
 * its last reader (fetched ones at the end of the run): the lifetimes
 * the plan already has, so the memory profile shows what the arena
 * holds live, not the arena's one allocation.
 */
#include "graph/exec.h"
#include "util/alloc.h"
#include "util/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ALIGN 64

struct slot {
	int node;			/* graph index */
	const struct tfk_node *n;
	const struct tfk_kernel *k;
	void *state;
	const struct tfk_tensor **in;	/* n->n_inputs producer values */
	struct tfk_tensor *out;		/* n->n_outputs values */
	struct tfk_tdesc *desc;		/* current concrete shapes */
	int *last;			/* per output: last reading step */
	size_t *off;			/* per output: arena offset */
	struct tfk_tensor *val;		/* per output: value known while
					 * planning (see fold), or NULL */
	int known;			/* val holds this plan's values */
	double prof_s;			/* TFK_PROFILE: seconds in compute */
	int alias;			/* output 0 is a view of input 0 */
};

struct tfk_exec {
	const struct tfk_graph *g;
	struct tfk_exec_opts opts;
	int any_shape;		/* tfk_exec_any_shape */
	int n_slots;
	struct slot *slots;
	int *pos;			/* graph index -> slot, or -1 */
	int n_graph;
	int n_feed, n_fetch;
	int *feed_slot;
	struct tfk_tdesc *feed_last;	/* shapes the plan was made for */
	struct tfk_port *fetch;		/* node = slot index */
	int *fetch_by_slot;		/* fetch indices by slot, n_fetch */
	void (*on_fetch)(void *, int, const struct tfk_tensor *);
	void *on_fetch_ctx;
	int planned;
	char *arena;
	size_t cap;
	struct tfk_exec_stats st;
	int prof;			/* TFK_PROFILE set: time each node */
	long prof_runs;
	/* profiles: free_buf[free_at[i] .. free_at[i + 1]) are the
	 * buffers whose last reader is slot i (node = slot index) */
	int *free_at;
	struct tfk_port *free_buf;
};

static int is_source(const struct slot *s)
{
	return s->n->op->flags & TFK_OP_SOURCE;
}

static void exec_free_slots(struct tfk_exec *x)
{
	int i, k;

	for (i = 0; i < x->n_slots; i++) {
		struct slot *s = &x->slots[i];

		if (s->k && s->k->free && s->state)
			s->k->free(s->state);
		if (s->out && !is_source(s))
			for (k = 0; k < s->n->n_outputs; k++) {
				s->out[k].owner = TFK_OWN_ARENA;
				tfk_tensor_release(&s->out[k]);
			}
		if (s->val)
			for (k = 0; k < s->n->n_outputs; k++)
				tfk_tensor_release(&s->val[k]);
		tfk_free(s->val);
		tfk_free(s->in);
		tfk_free(s->out);
		tfk_free(s->desc);
		tfk_free(s->last);
		tfk_free(s->off);
	}
}

/*
 * TFK_PROFILE=1: wall time per node, summed over runs and printed to
 * stderr when the exec is freed, largest first. A debugging aid asked
 * for by the environment, so the one place lib/ prints.
 */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int by_prof_desc(const void *a, const void *b)
{
	const struct slot *x = *(struct slot *const *)a;
	const struct slot *y = *(struct slot *const *)b;

	return (x->prof_s < y->prof_s) - (x->prof_s > y->prof_s);
}

static void prof_print(struct tfk_exec *x)
{
	struct slot **v = tfk_malloc((x->n_slots + 1) * sizeof(*v));
	double tot = 0;
	char b[128];
	int i;

	if (!v || !x->prof_runs) {
		tfk_free(v);
		return;
	}
	for (i = 0; i < x->n_slots; i++) {
		v[i] = &x->slots[i];
		tot += v[i]->prof_s;
	}
	qsort(v, x->n_slots, sizeof(*v), by_prof_desc);
	fprintf(stderr, "tfk profile: %d nodes, %ld runs, %.3f ms/run\n",
		x->n_slots, x->prof_runs, tot * 1e3 / x->prof_runs);
	for (i = 0; i < x->n_slots && v[i]->prof_s > 0; i++)
		fprintf(stderr, "%9.4f ms %5.1f%%  %-18s %s %s\n",
			v[i]->prof_s * 1e3 / x->prof_runs,
			100 * v[i]->prof_s / (tot > 0 ? tot : 1),
			v[i]->n->op->name, v[i]->n->name,
			v[i]->n->n_outputs ? tfk_shape_str(v[i]->desc[0].rank,
			v[i]->desc[0].shape, b, sizeof(b)) : "");
	tfk_free(v);
}

void tfk_exec_free(struct tfk_exec *x)
{
	if (!x)
		return;
	if (x->prof && x->slots)
		prof_print(x);
	if (x->slots)
		exec_free_slots(x);
	tfk_free(x->slots);
	tfk_free(x->pos);
	tfk_free(x->feed_slot);
	tfk_free(x->feed_last);
	tfk_free(x->fetch);
	tfk_free(x->fetch_by_slot);
	tfk_free(x->arena);
	tfk_free(x->free_at);
	tfk_free(x->free_buf);
	tfk_free(x);
}

static int setup_slot(struct tfk_exec *x, struct slot *s, int gi,
		      struct tfk_err *err)
{
	const struct tfk_node *n = tfk_graph_node(x->g, gi);
	int no = n->n_outputs ? n->n_outputs : 1;
	int k;

	s->node = gi;
	s->n = n;
	s->in = tfk_calloc(n->n_inputs ? n->n_inputs : 1, sizeof(*s->in));
	s->out = tfk_calloc(no, sizeof(*s->out));
	s->desc = tfk_calloc(no, sizeof(*s->desc));
	s->last = tfk_calloc(no, sizeof(*s->last));
	s->off = tfk_calloc(no, sizeof(*s->off));
	if (!s->in || !s->out || !s->desc || !s->last || !s->off)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (k = 0; k < n->n_inputs; k++) {
		struct tfk_port p = n->inputs[k];
		struct slot *src = &x->slots[x->pos[p.node]];

		s->in[k] = &src->out[p.index];
	}
	if (is_source(s))
		return 0;
	if (x->opts.backend)
		s->k = tfk_kernel_find(n, x->opts.backend);
	if (!s->k)
		s->k = tfk_kernel_find(n, "cpu");
	if (!s->k)
		return tfk_errf(err, TFK_EINVAL, "node %s: no kernel for op "
				"%s (%s) on backend cpu", n->name, n->op->name,
				n->n_outputs ? tfk_dtype_name(n->outputs[0].dtype)
				: "no outputs");
	return 0;
}

int tfk_exec_new(struct tfk_exec **xp, const struct tfk_graph *g,
		 const char *const *feeds, int n_feed,
		 const char *const *fetches, int n_fetch,
		 const struct tfk_exec_opts *opts, struct tfk_err *err)
{
	struct tfk_exec *x;
	char *need = NULL;
	int i, j, k, rc;

	*xp = NULL;
	x = tfk_calloc(1, sizeof(*x));
	if (!x)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	x->g = g;
	x->prof = getenv("TFK_PROFILE") && *getenv("TFK_PROFILE") &&
		strcmp(getenv("TFK_PROFILE"), "0");
	if (opts)
		x->opts = *opts;
	if (x->opts.threads <= 0)
		x->opts.threads = 1;
	x->n_graph = tfk_graph_n_nodes(g);
	x->n_feed = n_feed;
	x->n_fetch = n_fetch;
	x->pos = tfk_malloc((x->n_graph ? x->n_graph : 1) * sizeof(*x->pos));
	need = tfk_calloc(x->n_graph ? x->n_graph : 1, 1);
	x->feed_slot = tfk_calloc(n_feed ? n_feed : 1, sizeof(int));
	x->feed_last = tfk_calloc(n_feed ? n_feed : 1, sizeof(*x->feed_last));
	x->fetch = tfk_calloc(n_fetch ? n_fetch : 1, sizeof(*x->fetch));
	if (!x->pos || !need || !x->feed_slot || !x->feed_last || !x->fetch)
		goto oom;
	for (j = 0; j < n_fetch; j++) {
		rc = tfk_graph_find(g, fetches[j], &x->fetch[j], err);
		if (rc) {
			tfk_err_prefix(err, "fetch '%s'", fetches[j]);
			goto fail;
		}
		need[x->fetch[j].node] = 1;
	}
	for (i = x->n_graph - 1; i >= 0; i--) {
		const struct tfk_node *n = tfk_graph_node(g, i);

		if (need[i])
			for (k = 0; k < n->n_inputs; k++)
				need[n->inputs[k].node] = 1;
	}
	for (j = 0; j < n_feed; j++) {
		struct tfk_port p;

		rc = tfk_graph_find(g, feeds[j], &p, err);
		if (rc) {
			tfk_err_prefix(err, "feed '%s'", feeds[j]);
			goto fail;
		}
		if (strcmp(tfk_graph_node(g, p.node)->op->name,
			   "Placeholder")) {
			rc = tfk_errf(err, TFK_EINVAL, "feed '%s': node %s is "
				      "not a Placeholder", feeds[j],
				      tfk_graph_node(g, p.node)->name);
			goto fail;
		}
		need[p.node] = 2 + j;	/* fed; kept even if unused */
	}
	for (i = 0; i < x->n_graph; i++) {
		x->pos[i] = need[i] ? x->n_slots++ : -1;
		if (need[i] == 1 && !strcmp(tfk_graph_node(g, i)->op->name,
					    "Placeholder")) {
			rc = tfk_errf(err, TFK_EINVAL, "placeholder '%s' is "
				      "needed by the fetches but not fed",
				      tfk_graph_node(g, i)->name);
			goto fail;
		}
	}
	x->slots = tfk_calloc(x->n_slots ? x->n_slots : 1, sizeof(*x->slots));
	if (!x->slots)
		goto oom;
	for (i = 0; i < x->n_graph; i++) {
		if (x->pos[i] < 0)
			continue;
		rc = setup_slot(x, &x->slots[x->pos[i]], i, err);
		if (rc)
			goto fail;
		if (need[i] >= 2)
			x->feed_slot[need[i] - 2] = x->pos[i];
	}
	for (j = 0; j < n_fetch; j++)
		x->fetch[j].node = x->pos[x->fetch[j].node];
	x->st.n_nodes = x->n_slots;
	tfk_free(need);
	*xp = x;
	return 0;
oom:
	rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
fail:
	tfk_free(need);
	tfk_exec_free(x);
	return rc;
}

/* Shapes and plan ------------------------------------------------------ */

struct buf {
	size_t size, off;
	int first, last;
	int slot, out;
};

static int by_size_desc(const void *a, const void *b)
{
	const struct buf *x = a, *y = b;

	if (x->size != y->size)
		return x->size < y->size ? 1 : -1;
	return x->first - y->first;	/* stable for equal sizes */
}

/*
 * Planning-time values (constant folding of shapes). A shape-valued
 * input computed from Shape(x) (Reshape(dy, Shape(x)) in gradients,
 * RandomUniform(Shape(x)) in dropout) must be known before the plan,
 * since the plan needs every output's shape. So while inferring, a slot
 * whose op is a shape function, or whose op is deterministic with all
 * inputs known and small integer outputs, is computed right away into
 * s->val and handed to its consumers' inference as in_value. At run time
 * these nodes run again as any other (a few integers): one code path.
 */
#define FOLD_MAX 64		/* elements of a foldable output */

static const struct tfk_tensor *known_value(struct tfk_exec *x,
					    struct tfk_port p)
{
	struct slot *src = &x->slots[x->pos[p.node]];

	if (is_source(src))
		return tfk_graph_const_value(x->g, p);
	return src->known ? &src->val[p.index] : NULL;
}

static int foldable(const struct slot *s, const struct tfk_tensor *const *iv)
{
	int k;

	if (s->n->op->flags & TFK_OP_SHAPE_FN)
		return 1;
	if (s->n->op->flags & (TFK_OP_STATEFUL | TFK_OP_RANDOM) ||
	    !s->n->n_inputs)
		return 0;
	for (k = 0; k < s->n->n_inputs; k++)
		if (!iv[k])
			return 0;
	for (k = 0; k < s->n->n_outputs; k++) {
		int64_t cnt = 1;

		if (s->desc[k].dtype != TFK_DT_INT32 &&
		    s->desc[k].dtype != TFK_DT_INT64)
			return 0;
		tfk_shape_numel(s->desc[k].rank, s->desc[k].shape, 0, &cnt,
				NULL);
		if (cnt > FOLD_MAX)
			return 0;
	}
	return 1;
}

/* Run s's kernel now on iv (or, for a shape function, data-less views
 * of the input shapes) into s->val. */
static int fold(struct tfk_exec *x, struct slot *s,
		const struct tfk_tensor *const *iv, struct tfk_err *err)
{
	struct tfk_tensor shapes[64], *outs[64];
	const struct tfk_tensor *in[64];
	struct tfk_kernel_ctx kc;
	void *state = NULL;
	int k, rc;

	if (!s->val) {
		s->val = tfk_calloc(s->n->n_outputs ? s->n->n_outputs : 1,
				    sizeof(*s->val));
		if (!s->val)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	for (k = 0; k < s->n->n_inputs; k++) {
		if (s->n->op->flags & TFK_OP_SHAPE_FN) {
			const struct tfk_port p = s->n->inputs[k];
			const struct tfk_tdesc *d =
				&x->slots[x->pos[p.node]].desc[p.index];

			memset(&shapes[k], 0, sizeof(shapes[k]));
			shapes[k].dtype = d->dtype;
			shapes[k].rank = d->rank;
			memcpy(shapes[k].shape, d->shape, sizeof(d->shape));
			in[k] = &shapes[k];
		} else {
			in[k] = iv[k];
		}
	}
	for (k = 0; k < s->n->n_outputs; k++) {
		tfk_tensor_release(&s->val[k]);
		rc = tfk_tensor_init(&s->val[k], s->desc[k].dtype,
				     s->desc[k].rank, s->desc[k].shape, err);
		if (rc)
			return rc;
		outs[k] = &s->val[k];
	}
	kc.node = s->n;
	kc.n_in = s->n->n_inputs;
	kc.in = in;
	kc.n_out = s->n->n_outputs;
	kc.out = outs;
	kc.state = &state;
	kc.rng_key = 0;
	kc.threads = 1;
	kc.err = err;
	rc = s->k->compute(&kc);
	if (s->k->free && state)
		s->k->free(state);
	if (rc)
		return tfk_err_prefix(err, "node %s", s->n->name);
	s->known = 1;
	return 0;
}

/* Infer concrete shapes for every slot from the feeds' shapes. */
static int infer_all(struct tfk_exec *x, struct tfk_err *err)
{
	struct tfk_tdesc in[64];
	const struct tfk_tensor *iv[64];
	char b[128];
	int i, k;

	for (i = 0; i < x->n_slots; i++) {
		struct slot *s = &x->slots[i];
		const struct tfk_node *n = s->n;
		int rc;

		s->known = 0;
		if (is_source(s)) {
			tfk_tensor_desc(&s->out[0], &s->desc[0]);
			continue;
		}
		if (n->n_inputs > 64 || n->n_outputs > 64)
			return tfk_errf(err, TFK_EINVAL, "node %s: more than "
					"64 inputs or outputs", n->name);
		for (k = 0; k < n->n_inputs; k++) {
			struct tfk_port p = n->inputs[k];

			in[k] = x->slots[x->pos[p.node]].desc[p.index];
			iv[k] = known_value(x, p);
		}
		rc = tfk_graph_infer_node_v(x->g, s->node, in, iv, s->desc,
					    err);
		if (rc)
			return rc;
		for (k = 0; k < n->n_outputs; k++) {
			int64_t cnt;

			if (s->desc[k].rank < 0 ||
			    tfk_shape_numel(s->desc[k].rank, s->desc[k].shape,
					    tfk_dtype_size(s->desc[k].dtype),
					    &cnt, NULL))
				return tfk_errf(err, TFK_EINVAL, "node %s: "
						"output %d: shape %s not known "
						"or too large at run time",
						n->name, k, tfk_shape_str(
						s->desc[k].rank,
						s->desc[k].shape, b, sizeof(b)));
			/* before any kernel or fold writes it */
			rc = tfk_tensor_check_size(s->desc[k].dtype,
						   s->desc[k].rank,
						   s->desc[k].shape, err);
			if (rc)
				return tfk_err_prefix(err, "node %s: output %d",
						      n->name, k);
		}
		if (foldable(s, iv)) {
			rc = fold(x, s, iv, err);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int is_view_op(const struct slot *s)
{
	static const char *const ops[] = { "Reshape", "Identity", "Squeeze",
					   "ExpandDims" };
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(s->n->op->name, ops[i]))
			return 1;
	return 0;
}

static struct slot *producer(struct tfk_exec *x, const struct slot *s)
{
	return &x->slots[x->pos[s->n->inputs[0].node]];
}

/*
 * Decide which slots are views (s->alias: 1 of an arena buffer, 2 of a
 * feed; see the top comment) and extend the lifetime of each viewed
 * output to its views' last reader. Called with the lifetimes (last[])
 * set, fetched outputs at n_slots.
 */
static void plan_aliases(struct tfk_exec *x)
{
	int i;

	for (i = 0; i < x->n_slots; i++) {
		struct slot *s = &x->slots[i], *p;
		const struct tfk_tdesc *d = &s->desc[0], *pd;
		int fetched = s->n->n_outputs && s->last[0] == x->n_slots;
		int64_t a = 1, b = 1;

		s->alias = 0;
		if (is_source(s) || !is_view_op(s) || s->n->n_inputs < 1 ||
		    s->n->n_outputs != 1 || d->dtype == TFK_DT_STRING)
			continue;
		p = producer(x, s);
		pd = &p->desc[s->n->inputs[0].index];
		tfk_shape_numel(d->rank, d->shape, 0, &a, NULL);
		tfk_shape_numel(pd->rank, pd->shape, 0, &b, NULL);
		if (pd->dtype != d->dtype || a != b)
			continue;
		if (is_source(p))
			s->alias = strcmp(p->n->op->name, "Placeholder") ||
				fetched ? 0 : 2;
		else
			s->alias = p->alias == 2 ? (fetched ? 0 : 2) : 1;
	}
	/* a view's readers read its root: extend the root's lifetime
	 * (reverse order carries a chain's end down to its root) */
	for (i = x->n_slots - 1; i >= 0; i--) {
		struct slot *s = &x->slots[i], *p;
		int k;

		if (!s->alias)
			continue;
		p = producer(x, s);
		k = s->n->inputs[0].index;
		if (!is_source(p) && p->last[k] < s->last[0])
			p->last[k] = s->last[0];
	}
}

/* The buffers each step frees last (for profiles), from the plan. */
static int plan_frees(struct tfk_exec *x, const struct buf *bufs, size_t nb,
		      struct tfk_err *err)
{
	size_t j;
	int i, *fill;

	tfk_free(x->free_at);
	tfk_free(x->free_buf);
	x->free_at = tfk_calloc((size_t)x->n_slots + 2, sizeof(int));
	x->free_buf = tfk_malloc((nb ? nb : 1) * sizeof(*x->free_buf));
	fill = tfk_calloc((size_t)x->n_slots + 1, sizeof(int));
	if (!x->free_at || !x->free_buf || !fill) {
		tfk_free(fill);
		return tfk_errf(err, TFK_ENOMEM, "out of memory for the "
				"memory plan");
	}
	for (j = 0; j < nb; j++)
		x->free_at[bufs[j].last + 1]++;
	for (i = 0; i <= x->n_slots; i++)
		x->free_at[i + 1] += x->free_at[i];
	for (j = 0; j < nb; j++) {
		int at = x->free_at[bufs[j].last] + fill[bufs[j].last]++;

		x->free_buf[at].node = bufs[j].slot;
		x->free_buf[at].index = bufs[j].out;
	}
	tfk_free(fill);
	return 0;
}

static int plan(struct tfk_exec *x, struct tfk_err *err)
{
	struct buf *bufs;
	size_t nb = 0, top = 0, sum = 0;
	int i, j, k, m, rc;

	for (i = 0; i < x->n_slots; i++)
		if (!is_source(&x->slots[i]))
			nb += x->slots[i].n->n_outputs;
	bufs = tfk_malloc((nb ? nb : 1) * sizeof(*bufs));
	if (!bufs)
		return tfk_errf(err, TFK_ENOMEM, "out of memory for the "
				"memory plan");
	for (i = 0; i < x->n_slots; i++)
		for (k = 0; k < x->slots[i].n->n_outputs; k++)
			x->slots[i].last[k] = i;
	for (i = 0; i < x->n_slots; i++) {
		const struct tfk_node *n = x->slots[i].n;

		for (k = 0; k < n->n_inputs; k++) {
			struct slot *src = &x->slots[x->pos[n->inputs[k].node]];

			src->last[n->inputs[k].index] = i;
		}
	}
	for (j = 0; j < x->n_fetch; j++)
		x->slots[x->fetch[j].node].last[x->fetch[j].index] = x->n_slots;
	plan_aliases(x);
	nb = 0;
	for (i = 0; i < x->n_slots; i++) {
		struct slot *s = &x->slots[i];

		if (is_source(s) || s->alias)
			continue;
		for (k = 0; k < s->n->n_outputs; k++) {
			int64_t cnt = 1;

			tfk_shape_numel(s->desc[k].rank, s->desc[k].shape, 0,
					&cnt, NULL);
			bufs[nb].size = (size_t)cnt *
				tfk_dtype_size(s->desc[k].dtype);
			if (bufs[nb].size > SIZE_MAX / 2) {
				tfk_free(bufs);
				return tfk_errf(err, TFK_EINVAL, "node %s: "
						"output %d: %zu bytes do not "
						"fit a memory plan",
						s->n->name, k, bufs[nb].size);
			}
			bufs[nb].size = (bufs[nb].size + ALIGN - 1) /
				ALIGN * ALIGN;
			bufs[nb].first = i;
			bufs[nb].last = s->last[k];
			bufs[nb].slot = i;
			bufs[nb].out = k;
			sum += bufs[nb].size;
			nb++;
		}
	}
	qsort(bufs, nb, sizeof(*bufs), by_size_desc);
	for (j = 0; j < (int)nb; j++) {
		size_t off = 0;
		int moved = 1;

		/* lowest offset clear of every placed, live-overlapping
		 * buffer: restart the scan whenever off moves */
		while (moved) {
			moved = 0;
			for (m = 0; m < j; m++) {
				if (bufs[m].last < bufs[j].first ||
				    bufs[j].last < bufs[m].first)
					continue;
				if (off < bufs[m].off + bufs[m].size &&
				    bufs[m].off < off + bufs[j].size) {
					off = bufs[m].off + bufs[m].size;
					moved = 1;
				}
			}
		}
		if (off > SIZE_MAX / 2) {
			tfk_free(bufs);
			return tfk_errf(err, TFK_EINVAL, "memory plan over %zu "
					"bytes", (size_t)SIZE_MAX / 2);
		}
		bufs[j].off = off;
		if (off + bufs[j].size > top)
			top = off + bufs[j].size;
	}
	if (top > x->cap) {
		char *a;

		tfk_free(x->arena);
		x->arena = NULL;
		x->cap = 0;
		a = tfk_malloc(top);
		if (!a) {
			tfk_free(bufs);
			return tfk_errf(err, TFK_ENOMEM, "out of memory for "
					"an arena of %zu bytes", top);
		}
		x->arena = a;
		x->cap = top;
		x->st.n_allocs++;
	}
	for (j = 0; j < (int)nb; j++) {
		struct slot *s = &x->slots[bufs[j].slot];
		struct tfk_tensor *t = &s->out[bufs[j].out];
		const struct tfk_tdesc *d = &s->desc[bufs[j].out];
		struct tfk_strblock *strs = t->strs;
		int64_t cnt = 1;

		tfk_shape_numel(d->rank, d->shape, 0, &cnt, NULL);
		/* all-empty tensors: no arena (NULL + 0 is UB) */
		tfk_tensor_init_view(t, d->dtype, d->rank, d->shape,
				     x->arena ? x->arena + bufs[j].off : NULL,
				     (size_t)cnt * tfk_dtype_size(d->dtype),
				     TFK_OWN_ARENA, NULL);
		t->strs = strs;
		s->off[bufs[j].out] = bufs[j].off;
	}
	for (i = 0; i < x->n_slots; i++) {
		struct slot *s = &x->slots[i];
		const struct tfk_tdesc *d = &s->desc[0];
		int64_t cnt = 1;

		if (!s->alias)
			continue;
		/* the bytes are the input's, pointed at by each run */
		tfk_shape_numel(d->rank, d->shape, 0, &cnt, NULL);
		tfk_tensor_init_view(&s->out[0], d->dtype, d->rank, d->shape,
				     NULL, (size_t)cnt * tfk_dtype_size(d->dtype),
				     TFK_OWN_ARENA, NULL);
		s->off[0] = (size_t)-1;
	}
	rc = plan_frees(x, bufs, nb, err);
	tfk_free(bufs);
	if (rc)
		return rc;
	x->st.arena_bytes = top;
	x->st.sum_bytes = sum;
	x->st.capacity = x->cap;
	x->st.n_plans++;
	return 0;
}

/* Running -------------------------------------------------------------- */

static int feed_fits(const struct tfk_tdesc *want, const struct tfk_tensor *t,
		     int any_shape)
{
	int i;

	if (want->dtype != t->dtype)
		return 0;
	if (want->rank < 0 || any_shape)
		return 1;
	if (want->rank != t->rank)
		return 0;
	for (i = 0; i < t->rank; i++)
		if (want->shape[i] >= 0 && want->shape[i] != t->shape[i])
			return 0;
	return 1;
}

/* A profile's memory event for output k of slot s. */
static void prof_mem(const struct slot *s, int k, int alloc)
{
	const struct tfk_tdesc *d = &s->desc[k];
	int64_t cnt = 1;
	char b[128];

	tfk_shape_numel(d->rank, d->shape, 0, &cnt, NULL);
	tfk_prof_mem(alloc, cnt * (int64_t)tfk_dtype_size(d->dtype),
		     s->n->name, d->dtype,
		     tfk_shape_str(d->rank, d->shape, b, sizeof(b)));
}

/* Free the buffers whose last reader is slot i (n_slots: fetched). */
static void prof_frees(struct tfk_exec *x, int i)
{
	for (int j = x->free_at[i]; j < x->free_at[i + 1]; j++)
		prof_mem(&x->slots[x->free_buf[j].node],
			 x->free_buf[j].index, 0);
}

/* Run slot i's kernel as an op event with its memory events. */
static int run_traced(struct tfk_exec *x, int i, struct tfk_kernel_ctx *kc)
{
	struct slot *s = &x->slots[i];
	uint64_t t0;
	int k, rc;

	/* the allocations just before the op's event, not inside it: the
	 * Profile plugin counts events nested in an op as occurrences */
	for (k = 0; k < s->n->n_outputs; k++)
		prof_mem(s, k, 1);
	t0 = tfk_prof_now();
	rc = s->k->compute(kc);
	tfk_prof_span(s->n->name, s->n->op->name, t0, tfk_prof_now(), -1);
	prof_frees(x, i);
	return rc;
}

void tfk_exec_any_shape(struct tfk_exec *x, int on)
{
	x->any_shape = on;
}

/* on_fetch for the fetches of slots before slot i, from position next
 * of fetch_by_slot; the position after them. */
static int fetches_ready(struct tfk_exec *x, int i, int next)
{
	for (; next < x->n_fetch; next++) {
		int j = x->fetch_by_slot[next];
		const struct tfk_port *f = &x->fetch[j];

		if (f->node >= i)
			break;
		x->on_fetch(x->on_fetch_ctx, j, &x->slots[f->node].out[f->index]);
	}
	return next;
}

int tfk_exec_run(struct tfk_exec *x, const struct tfk_tensor *feeds,
		 uint64_t step, const struct tfk_tensor **fetched,
		 struct tfk_err *err)
{
	struct tfk_graph *gw = (struct tfk_graph *)x->g;
	uint64_t key = tfk_rng_u64(x->opts.seed, step);
	int i, j, k, rc, next, changed = !x->planned;
	char b1[128], b2[128];

	for (j = 0; j < x->n_feed; j++) {
		struct slot *s = &x->slots[x->feed_slot[j]];
		const struct tfk_tdesc *want = &s->n->outputs[0];
		struct tfk_tdesc got;

		if (!feed_fits(want, &feeds[j], x->any_shape))
			return tfk_errf(err, TFK_EINVAL, "feed '%s': expected "
					"%s %s, got %s %s", s->n->name,
					tfk_dtype_name(want->dtype),
					tfk_shape_str(want->rank, want->shape,
						      b1, sizeof(b1)),
					tfk_dtype_name(feeds[j].dtype),
					tfk_shape_str(feeds[j].rank,
						      feeds[j].shape, b2,
						      sizeof(b2)));
		tfk_tensor_desc(&feeds[j], &got);
		if (!tfk_shape_equal(got.rank, got.shape, x->feed_last[j].rank,
				     x->feed_last[j].shape))
			changed = 1;
		s->out[0] = feeds[j];
		s->out[0].owner = TFK_OWN_BORROWED;
		s->out[0].strs = NULL;
	}
	for (i = 0; i < x->n_slots; i++) {
		struct slot *s = &x->slots[i];
		const struct tfk_attr_value *v;

		if (!is_source(s) || !strcmp(s->n->op->name, "Placeholder"))
			continue;
		if (s->n->variable >= 0) {
			s->out[0] = *tfk_graph_var_at(gw, s->n->variable, NULL);
		} else {
			v = tfk_node_attr(s->n, "value");
			s->out[0] = *v->tensor;
		}
		s->out[0].owner = TFK_OWN_BORROWED;
		s->out[0].strs = NULL;
	}
	if (changed) {
		x->planned = 0;
		rc = infer_all(x, err);
		if (!rc)
			rc = plan(x, err);
		if (rc)
			return rc;
		for (j = 0; j < x->n_feed; j++)
			tfk_tensor_desc(&feeds[j], &x->feed_last[j]);
		x->planned = 1;
	}
	for (i = 0, next = 0; i < x->n_slots; i++) {
		struct slot *s = &x->slots[i];
		struct tfk_tensor *outs[64];
		struct tfk_kernel_ctx kc;

		if (x->on_fetch)
			next = fetches_ready(x, i, next);
		if (is_source(s))
			continue;
		if (s->alias) {
			s->out[0].data = s->in[0]->data;
			continue;
		}
		for (k = 0; k < s->n->n_outputs && k < 64; k++) {
			outs[k] = &s->out[k];
			if (outs[k]->dtype == TFK_DT_STRING)
				tfk_tensor_clear_strs(outs[k]);
		}
		kc.node = s->n;
		kc.n_in = s->n->n_inputs;
		kc.in = s->in;
		kc.n_out = s->n->n_outputs;
		kc.out = outs;
		kc.state = &s->state;
		kc.rng_key = tfk_rng_u64(key, (uint64_t)s->node);
		kc.threads = x->opts.threads;
		kc.err = err;
		if (tfk_prof_on()) {
			rc = run_traced(x, i, &kc);
		} else if (x->prof) {
			double t0 = now_s();

			rc = s->k->compute(&kc);
			s->prof_s += now_s() - t0;
		} else {
			rc = s->k->compute(&kc);
		}
		if (rc)
			return tfk_err_prefix(err, "node %s", s->n->name);
	}
	if (x->on_fetch)
		fetches_ready(x, x->n_slots, next);
	x->prof_runs++;
	if (tfk_prof_on())
		prof_frees(x, x->n_slots);
	for (j = 0; j < x->n_fetch; j++)
		fetched[j] = &x->slots[x->fetch[j].node].out[x->fetch[j].index];
	return 0;
}

/* Fetches by the slot computing them, for on_fetch's calls in order. */
static int by_slot(const void *a, const void *b, void *ctx)
{
	const struct tfk_exec *x = ctx;
	int i = x->fetch[*(const int *)a].node, j = x->fetch[*(const int *)b].node;

	return (i > j) - (i < j);
}

int tfk_exec_on_fetch(struct tfk_exec *x,
		      void (*fn)(void *ctx, int j, const struct tfk_tensor *v),
		      void *ctx, struct tfk_err *err)
{
	if (!x->fetch_by_slot) {
		x->fetch_by_slot = tfk_calloc(x->n_fetch ? x->n_fetch : 1,
					      sizeof(int));
		if (!x->fetch_by_slot)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		for (int j = 0; j < x->n_fetch; j++)
			x->fetch_by_slot[j] = j;
		qsort_r(x->fetch_by_slot, (size_t)x->n_fetch, sizeof(int),
			by_slot, x);
	}
	x->on_fetch = fn;
	x->on_fetch_ctx = ctx;
	return 0;
}

int tfk_exec_fetch_when(const struct tfk_exec *x, int j)
{
	return x->fetch[j].node;
}

void tfk_exec_stats(const struct tfk_exec *x, struct tfk_exec_stats *s)
{
	*s = x->st;
}
