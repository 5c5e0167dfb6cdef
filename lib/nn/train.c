/*
 * train.c - the training step and evaluation (see train.h).
 *
 * Everything that depends on the batch layout is built once, at the
 * first batch: each output's label placeholder takes the feed's label
 * dtype and rank, so no Cast or Reshape is added for int32 vs int64
 * labels. One train exec fetches loss, gradients, BN update values, the
 * outputs and (several outputs) each output's loss together, so a step
 * is a single pass of the executor over a memory plan made once; the
 * optimizer then reads the gradients where the executor left them
 * (arena memory, valid until the next run) and writes the variables in
 * place, which the next run reads afresh. The only per-step work
 * outside the kernels is the optimizer's own loop, the moving averages
 * and the metric updates.
 *
 * Several outputs: the per-output losses are fetched rather than
 * recomputed from the outputs, and they and every metric add to epoch
 * sums that tfk_trainer_sync_means sums across ranks like the loss.
 *
 * Rejected: one exec for training and evaluation with a "training"
 * feed selecting the branch: the executor would then plan both
 * branches' buffers, and Keras' graph has the two branches anyway.
 */
#include "nn/train.h"

#include "graph/exec.h"
#include "nn/gradsync.h"
#include "nn/metric.h"
#include "util/alloc.h"
#include "util/mpi.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct tfk_trainer {
	struct tfk_model *m;
	int n_out;		/* the model's outputs */
	struct tfk_loss_spec *ls;	/* [n_out] */
	float *lw;		/* [n_out] loss weights */
	struct tfk_optim *opt;
	struct tfk_train_opts o;
	int n_metrics;
	struct tfk_metric **metrics;
	int *mout;		/* [n_metrics] the output each one reads */
	char **keys;		/* [n_lkeys + n_metrics] history keys */
	int n_lkeys;		/* several outputs: "<out>_loss" each */

	int built;
	int weighted;		/* batches carry class weights */
	struct tfk_exec *xt, *xe;
	int n_feed;
	struct tfk_tensor *feeds;	/* views: inputs, labels, weight */
	int n_opt;
	int *opt_vars;		/* graph var index per optimizer var */
	struct tfk_tensor **vars;	/* n_opt, the graph's tensors */
	const struct tfk_tensor **grads;	/* n_tfetch, fetched */
	/* train fetches: loss, n_opt grads, n_updates, n_out outputs (from
	 * out_at), n_lkeys per-output losses (from out_at + n_out) */
	int n_tfetch, out_at;
	const struct tfk_tensor **efetch;	/* eval: loss, outputs,
						 * per-output losses */

	struct tfk_gradsync *gs;	/* data-parallel: the sums */
	double step_rows;	/* the next step's rows on all ranks, or 0 */
	const struct tfk_tensor **synced;	/* n_opt grads, n_updates */

	double loss_sum, loss_n, last_loss;
	double *lsum;		/* [n_lkeys] per-output loss sums */
	float *ones;		/* weights for unweighted batches */
	size_t n_ones;
};

static int nomem(struct tfk_err *err)
{
	return tfk_errf(err, TFK_ENOMEM, "out of memory");
}

/* Metric entry v for output o into the trainer ("<out>_" before its
 * history key when the model has several outputs). */
static int metric_add(struct tfk_trainer *tr, const json_t *v,
		      const char *path, int o, struct tfk_err *err)
{
	const struct tfk_tdesc *d;
	int64_t last;
	const char *nm;
	size_t len;
	char *k;
	int i = tr->n_metrics, rc;

	d = tfk_graph_desc(tr->m->g, tr->m->outputs[o].infer);
	last = d && d->rank > 1 ? d->shape[d->rank - 1] : 1;
	rc = tfk_metric_new(v, path, tr->ls[o].name, last, &tr->metrics[i],
			    err);
	if (rc)
		return rc;
	tr->n_metrics++;
	tr->mout[i] = o;
	nm = tfk_metric_name(tr->metrics[i]);
	len = strlen(nm) + strlen(tr->m->outputs[o].name) + 2;
	k = tfk_malloc(len);
	if (!k)
		return nomem(err);
	if (tr->n_out > 1)
		snprintf(k, len, "%s_%s", tr->m->outputs[o].name, nm);
	else
		snprintf(k, len, "%s", nm);
	tr->keys[tr->n_lkeys + i] = k;
	return 0;
}

/* An output's metrics: null (none), one entry, or a list of them. */
static int metrics_of(struct tfk_trainer *tr, const json_t *v,
		      const char *path, int o, struct tfk_err *err)
{
	char p[400];
	size_t j;
	int rc;

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return metric_add(tr, v, path, o, err);
	for (j = 0; j < json_array_size(v); j++) {
		snprintf(p, sizeof(p), "%s[%zu]", path, j);
		if ((rc = metric_add(tr, json_array_get(v, j), p, o, err)))
			return rc;
	}
	return 0;
}

/* Count the metric entries of metrics (an upper bound is enough). */
static size_t count_entries(const json_t *metrics)
{
	const char *key;
	json_t *v;
	size_t n = 0, i;

	if (json_is_array(metrics)) {
		for (i = 0; i < json_array_size(metrics); i++) {
			v = json_array_get(metrics, i);
			n += json_is_array(v) ? json_array_size(v) : 1;
		}
	} else if (json_is_object(metrics)) {
		json_object_foreach((json_t *)metrics, key, v)
			n += json_is_array(v) ? json_array_size(v) : 1;
	}
	return n;
}

/*
 * compile.metrics as Keras 3 reads it: one output, a list of entries
 * (or an object keyed by the output's name: the keys stay unprefixed);
 * several outputs, a list with one item per output (null, an entry or
 * a list of entries) or an object keyed by output name (outputs not
 * named get none). A flat list of another length is refused, as Keras
 * 3 refuses it ("tuple arity mismatch").
 */
static int metrics_parse(struct tfk_trainer *tr, const json_t *metrics,
			 const char *path, struct tfk_err *err)
{
	struct tfk_model *m = tr->m;
	const char *key;
	json_t *v;
	char p[400], names[300];
	size_t at = 0;
	int i, rc;

	names[0] = 0;
	for (i = 0; i < m->n_outputs && at < sizeof(names); i++)
		at += (size_t)snprintf(names + at, sizeof(names) - at, "%s%s",
				       i ? ", " : "", m->outputs[i].name);
	if (!metrics || json_is_null(metrics))
		return 0;
	if (tr->n_out == 1 && json_is_array(metrics)) {
		for (i = 0; i < (int)json_array_size(metrics); i++) {
			snprintf(p, sizeof(p), "%s[%d]", path, i);
			rc = metric_add(tr, json_array_get(metrics, (size_t)i),
					p, 0, err);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (!json_is_array(metrics) && !json_is_object(metrics))
		return tfk_errf(err, TFK_EINVAL, "%s: expected a list such as "
				"[\"accuracy\"]%s", path, tr->n_out > 1 ?
				" or an object keyed by output name" : "");
	if (json_is_array(metrics)) {
		if (!json_array_size(metrics))
			return 0;
		if (json_array_size(metrics) != (size_t)tr->n_out)
			return tfk_errf(err, TFK_EINVAL, "%s: a list of %zu, "
					"the model has %d outputs (%s): give "
					"one item per output (a metric, a "
					"list of them or null) or an object "
					"keyed by output name", path,
					json_array_size(metrics), tr->n_out,
					names);
		for (i = 0; i < tr->n_out; i++) {
			snprintf(p, sizeof(p), "%s[%d]", path, i);
			rc = metrics_of(tr, json_array_get(metrics, (size_t)i),
					p, i, err);
			if (rc)
				return rc;
		}
		return 0;
	}
	json_object_foreach((json_t *)metrics, key, v) {
		for (i = 0; i < m->n_outputs; i++)
			if (!strcmp(m->outputs[i].name, key))
				break;
		if (i == m->n_outputs)
			return tfk_errf(err, TFK_EINVAL, "%s.%s: the model has "
					"no output '%s' (outputs: %s)", path,
					key, key, names);
	}
	for (i = 0; i < tr->n_out; i++) {
		snprintf(p, sizeof(p), "%s.%s", path, m->outputs[i].name);
		rc = metrics_of(tr, json_object_get(metrics,
						    m->outputs[i].name),
				p, i, err);
		if (rc)
			return rc;
	}
	return 0;
}

int tfk_trainer_new(struct tfk_trainer **trp, struct tfk_model *m,
		    const struct tfk_loss_spec *ls, const float *loss_weights,
		    const json_t *metrics, const char *metrics_path,
		    struct tfk_optim *opt, const struct tfk_train_opts *o,
		    struct tfk_err *err)
{
	struct tfk_trainer *tr;
	size_t n = count_entries(metrics);
	int i, rc;

	*trp = NULL;
	if (m->n_outputs < 1)
		return tfk_errf(err, TFK_EINVAL, "model %s: no outputs",
				m->name ? m->name : "");
	tr = tfk_calloc(1, sizeof(*tr));
	if (!tr)
		return nomem(err);
	tr->m = m;
	tr->n_out = m->n_outputs;
	tr->n_lkeys = tr->n_out > 1 ? tr->n_out : 0;
	tr->opt = opt;
	tr->o = *o;
	tr->ls = tfk_calloc((size_t)tr->n_out, sizeof(*tr->ls));
	tr->lw = tfk_calloc((size_t)tr->n_out, sizeof(*tr->lw));
	tr->lsum = tfk_calloc((size_t)tr->n_out, sizeof(*tr->lsum));
	tr->metrics = tfk_calloc(n + 1, sizeof(*tr->metrics));
	tr->mout = tfk_calloc(n + 1, sizeof(*tr->mout));
	tr->keys = tfk_calloc(n + (size_t)tr->n_lkeys + 1,
			      sizeof(*tr->keys));
	if (!tr->ls || !tr->lw || !tr->lsum || !tr->metrics || !tr->mout ||
	    !tr->keys) {
		tfk_trainer_free(tr);
		return nomem(err);
	}
	for (i = 0; i < tr->n_out; i++) {
		tr->ls[i] = ls[i];
		tr->lw[i] = loss_weights ? loss_weights[i] : 1;
	}
	for (i = 0; i < tr->n_lkeys; i++) {
		size_t len = strlen(m->outputs[i].name) + 6;

		if (!(tr->keys[i] = tfk_malloc(len))) {
			tfk_trainer_free(tr);
			return nomem(err);
		}
		snprintf(tr->keys[i], len, "%s_loss", m->outputs[i].name);
	}
	rc = metrics_parse(tr, metrics, metrics_path, err);
	if (rc) {
		tfk_trainer_free(tr);
		return rc;
	}
	tfk_trainer_reset(tr);
	*trp = tr;
	return 0;
}

void tfk_trainer_free(struct tfk_trainer *tr)
{
	if (!tr)
		return;
	for (int i = 0; i < tr->n_metrics; i++)
		tfk_metric_free(tr->metrics[i]);
	for (int i = 0; tr->keys && i < tr->n_lkeys + tr->n_metrics; i++)
		tfk_free(tr->keys[i]);
	tfk_free(tr->keys);
	tfk_free(tr->metrics);
	tfk_free(tr->mout);
	tfk_free(tr->ls);
	tfk_free(tr->lw);
	tfk_free(tr->lsum);
	tfk_free(tr->efetch);
	tfk_gradsync_free(tr->gs);
	tfk_free(tr->synced);
	tfk_exec_free(tr->xt);
	tfk_exec_free(tr->xe);
	tfk_free(tr->feeds);
	tfk_free(tr->opt_vars);
	tfk_free(tr->vars);
	tfk_free(tr->grads);
	tfk_free(tr->ones);
	tfk_free(tr);
}

/* "name" or "name:k": the executor's fetch spelling of a port. */
static char *port_name(const struct tfk_graph *g, struct tfk_port p)
{
	const struct tfk_node *n = tfk_graph_node(g, p.node);
	size_t len = strlen(n->name) + 16;
	char *s = tfk_malloc(len);

	if (s) {
		if (p.index)
			snprintf(s, len, "%s:%d", n->name, p.index);
		else
			snprintf(s, len, "%s", n->name);
	}
	return s;
}

static int add_reg(struct tfk_model *m, struct tfk_port loss,
		   const char *name, struct tfk_port *out, struct tfk_err *err)
{
	struct tfk_port in[2] = { loss, m->reg_loss };

	if (m->reg_loss.node < 0) {
		*out = loss;
		return 0;
	}
	return tfk_graph_add_node(m->g, "AddV2", name, in, 2, NULL, 0, out,
				  err);
}

static void free_names(char **v, int n)
{
	for (int i = 0; v && i < n; i++)
		tfk_free(v[i]);
	tfk_free(v);
}

/* Data-parallel: the gradients and moving-average values, summed. */
static int sync_new(struct tfk_trainer *tr, struct tfk_err *err)
{
	struct tfk_model *m = tr->m;
	int n = tr->n_opt + m->n_updates, i, rc;
	int *fetch = tfk_calloc((size_t)n + 1, sizeof(int));
	const struct tfk_tensor **like = tfk_calloc((size_t)n + 1,
						    sizeof(*like));

	tr->synced = tfk_calloc((size_t)n + 1, sizeof(*tr->synced));
	if (!fetch || !like || !tr->synced) {
		tfk_free(fetch);
		tfk_free(like);
		return nomem(err);
	}
	for (i = 0; i < n; i++) {
		fetch[i] = 1 + i;
		like[i] = i < tr->n_opt ? tr->vars[i] :
			tfk_graph_var_at(m->g, m->updates[i - tr->n_opt].var,
					 NULL);
	}
	rc = tfk_gradsync_new(&tr->gs, tr->xt, n, fetch, like, 0,
			      tr->o.bucket_bytes, err);
	for (i = 0; !rc && i < n; i++)
		tr->synced[i] = tfk_gradsync_value(tr->gs, i);
	tfk_free(fetch);
	tfk_free(like);
	return rc;
}

/* The batch's label of output o (a batch from an older caller may fill
 * only b->label: output 0's). */
static const struct tfk_tensor *label_of(const struct tfk_feed_batch *b,
					 int o)
{
	return b->labels && o < b->n_labels ? &b->labels[o] : &b->label;
}

/* sum_i w_i * l_i over the outputs, plus the regularization (Keras 3's
 * CompileLoss, then Trainer.compute_loss adds model.losses). A weight
 * of 1 multiplies nothing (Keras' product by 1.0 is exact anyway). */
static int total_loss(struct tfk_trainer *tr, const struct tfk_port *l,
		      int train, struct tfk_port *out, struct tfk_err *err)
{
	struct tfk_model *m = tr->m;
	const char *pfx = train ? "train/" : "";
	struct tfk_port t = { -1, 0 }, x, k, in[2];
	char name[80];
	int i, rc = 0;

	for (i = 0; !rc && i < tr->n_out; i++) {
		x = l[i];
		if (tr->lw[i] != 1) {
			snprintf(name, sizeof(name), "%sloss_weights/", pfx);
			rc = tfk_graph_const_f32(m->g, name, tr->lw[i], &k, err);
			if (!rc) {
				in[0] = x;
				in[1] = k;
				rc = tfk_graph_add_node(m->g, "Mul", name, in,
							2, NULL, 0, &x, err);
			}
		}
		if (!rc && i) {
			snprintf(name, sizeof(name), "%sloss_sum/", pfx);
			in[0] = t;
			in[1] = x;
			rc = tfk_graph_add_node(m->g, "AddV2", name, in, 2,
						NULL, 0, &x, err);
		}
		t = x;
	}
	if (!rc)
		rc = add_reg(m, t, train ? "train/total_loss" : "total_loss",
			     out, err);
	return rc;
}

int tfk_trainer_prepare(struct tfk_trainer *tr,
			const struct tfk_feed_batch *b, struct tfk_err *err)
{
	struct tfk_model *m = tr->m;
	struct tfk_graph *g = m->g;
	struct tfk_port weight = { -1, 0 }, lt, le, one;
	struct tfk_port *label = NULL, *lts = NULL, *les = NULL;
	struct tfk_port *xs = NULL, *dxs = NULL;
	struct tfk_exec_opts eo = { NULL, tr->o.seed, tr->o.threads };
	char **feed_names = NULL, **tf = NULL, **ef = NULL;
	char name[300];
	int64_t shape[TFK_MAX_RANK];
	int nv = tfk_graph_n_variables(g), n_train = 0, i, k, o, rc = 0;
	int n_in = m->n_inputs, n_out = tr->n_out, n_ef = 1 + n_out +
		tr->n_lkeys;

	if (tr->built)
		return 0;
	if (b->labels ? b->n_labels != n_out : n_out != 1)
		return tfk_errf(err, TFK_EINVAL, "batch has %d labels, the "
				"model %d outputs", b->labels ? b->n_labels : 1,
				n_out);
	tr->weighted = b->has_weight;
	label = tfk_calloc((size_t)n_out, sizeof(*label));
	lts = tfk_calloc((size_t)n_out, sizeof(*lts));
	les = tfk_calloc((size_t)n_out, sizeof(*les));
	if (!label || !lts || !les) {
		rc = nomem(err);
		goto out;
	}
	/* Placeholders, named so they cannot clash with layer names. */
	for (o = 0; !rc && o < n_out; o++) {
		const struct tfk_tensor *y = label_of(b, o);

		for (i = 0; i < y->rank; i++)
			shape[i] = i ? y->shape[i] : -1;
		snprintf(name, sizeof(name), "%s_target", m->outputs[o].name);
		rc = tfk_graph_placeholder(g, name, y->dtype, y->rank, shape,
					   &label[o], err);
	}
	if (!rc && tr->weighted) {
		int64_t s1 = -1;

		rc = tfk_graph_placeholder(g, "sample_weight", TFK_DT_FLOAT, 1,
					   &s1, &weight, err);
	}
	for (o = 0; !rc && o < n_out; o++) {
		rc = tfk_loss_build(m, o, &tr->ls[o], 1, label[o], weight,
				    &lts[o], err);
		if (!rc)
			rc = tfk_loss_build(m, o, &tr->ls[o], 0, label[o],
					    weight, &les[o], err);
		if (rc && n_out > 1)
			tfk_err_prefix(err, "output %s", m->outputs[o].name);
	}
	if (!rc)
		rc = total_loss(tr, lts, 1, &lt, err);
	if (!rc)
		rc = total_loss(tr, les, 0, &le, err);
	if (rc)
		goto out;

	/* Gradients w.r.t. the trainable variables. */
	xs = tfk_calloc((size_t)nv + 1, sizeof(*xs));
	dxs = tfk_calloc((size_t)nv + 1, sizeof(*dxs));
	tr->opt_vars = tfk_calloc((size_t)nv + 1, sizeof(int));
	if (!xs || !dxs || !tr->opt_vars) {
		rc = nomem(err);
		goto out;
	}
	for (i = 0; i < m->n_vars; i++) {
		if (!m->vars[i].trainable)
			continue;
		/* The variable's VariableV2 node. */
		for (k = 0; k < tfk_graph_n_nodes(g); k++) {
			const struct tfk_node *n = tfk_graph_node(g, k);

			if (n->variable == m->vars[i].var)
				break;
		}
		if (k == tfk_graph_n_nodes(g))
			continue;
		xs[n_train].node = k;
		xs[n_train].index = 0;
		tr->opt_vars[n_train++] = m->vars[i].var;
	}
	rc = tfk_graph_const_f32(g, "gradients/grad_ys_0", 1.0f, &one, err);
	if (!rc)
		rc = tfk_graph_gradients(g, &lt, &one, 1, xs, n_train, dxs,
					 err);
	if (rc)
		goto out;
	/* Keep only variables the loss depends on. */
	for (i = k = 0; i < n_train; i++)
		if (dxs[i].node >= 0) {
			dxs[k] = dxs[i];
			tr->opt_vars[k++] = tr->opt_vars[i];
		}
	tr->n_opt = k;

	/* Feeds: inputs, labels, weight. */
	tr->n_feed = n_in + n_out + tr->weighted;
	feed_names = tfk_calloc((size_t)tr->n_feed, sizeof(char *));
	tr->feeds = tfk_calloc((size_t)tr->n_feed, sizeof(*tr->feeds));
	tr->out_at = 1 + tr->n_opt + m->n_updates;
	tr->n_tfetch = tr->out_at + n_out + tr->n_lkeys;
	tf = tfk_calloc((size_t)tr->n_tfetch, sizeof(char *));
	ef = tfk_calloc((size_t)n_ef, sizeof(char *));
	tr->vars = tfk_calloc((size_t)tr->n_opt + 1, sizeof(*tr->vars));
	tr->grads = tfk_calloc((size_t)tr->n_tfetch, sizeof(*tr->grads));
	tr->efetch = tfk_calloc((size_t)n_ef, sizeof(*tr->efetch));
	if (!feed_names || !tr->feeds || !tf || !ef || !tr->vars ||
	    !tr->grads || !tr->efetch) {
		rc = nomem(err);
		goto out;
	}
	rc = TFK_ENOMEM;
	for (i = 0; i < n_in; i++)
		if (!(feed_names[i] = tfk_strdup(m->inputs[i].name)))
			goto oom;
	for (o = 0; o < n_out; o++)
		if (!(feed_names[n_in + o] = port_name(g, label[o])))
			goto oom;
	if (tr->weighted &&
	    !(feed_names[n_in + n_out] = port_name(g, weight)))
		goto oom;
	k = 0;
	if (!(tf[k++] = port_name(g, lt)))
		goto oom;
	for (i = 0; i < tr->n_opt; i++) {
		tr->vars[i] = tfk_graph_var_at(g, tr->opt_vars[i], NULL);
		if (!(tf[k++] = port_name(g, dxs[i])))
			goto oom;
	}
	for (i = 0; i < m->n_updates; i++)
		if (!(tf[k++] = port_name(g, m->updates[i].value)))
			goto oom;
	for (o = 0; o < n_out; o++)
		if (!(tf[k++] = port_name(g, m->outputs[o].train)))
			goto oom;
	for (o = 0; o < tr->n_lkeys; o++)
		if (!(tf[k++] = port_name(g, lts[o])))
			goto oom;
	if (!(ef[0] = port_name(g, le)))
		goto oom;
	for (o = 0; o < n_out; o++)
		if (!(ef[1 + o] = port_name(g, m->outputs[o].infer)))
			goto oom;
	for (o = 0; o < tr->n_lkeys; o++)
		if (!(ef[1 + n_out + o] = port_name(g, les[o])))
			goto oom;
	rc = tfk_exec_new(&tr->xt, g, (const char *const *)feed_names,
			  tr->n_feed, (const char *const *)tf, tr->n_tfetch,
			  &eo, err);
	if (!rc)
		rc = tfk_exec_new(&tr->xe, g, (const char *const *)feed_names,
				  tr->n_feed, (const char *const *)ef, n_ef,
				  &eo, err);
	if (!rc && tr->o.data_parallel)
		rc = sync_new(tr, err);
	if (!rc)
		tr->built = 1;
	goto out;
oom:
	rc = nomem(err);
out:
	free_names(feed_names, tr->n_feed);
	free_names(tf, tr->n_tfetch);
	free_names(ef, n_ef);
	tfk_free(label);
	tfk_free(lts);
	tfk_free(les);
	tfk_free(xs);
	tfk_free(dxs);
	return rc;
}

/*
 * The feed tensors of b in exec order (views, no copy). With
 * use_weight 0 (evaluation: Keras applies class_weight to training
 * only) or a batch without weights, a weighted graph gets ones.
 */
static int set_feeds(struct tfk_trainer *tr, const struct tfk_feed_batch *b,
		     int use_weight, struct tfk_err *err)
{
	int i, n_in = tr->m->n_inputs, w_at = n_in + tr->n_out;

	if (b->n_inputs != n_in)
		return tfk_errf(err, TFK_EINVAL, "batch has %d inputs, the "
				"model %d", b->n_inputs, n_in);
	if (b->labels ? b->n_labels != tr->n_out : tr->n_out != 1)
		return tfk_errf(err, TFK_EINVAL, "batch has %d labels, the "
				"model %d outputs", b->labels ? b->n_labels : 1,
				tr->n_out);
	for (i = 0; i < n_in; i++)
		tr->feeds[i] = b->inputs[i];
	for (i = 0; i < tr->n_out; i++)
		tr->feeds[n_in + i] = *label_of(b, i);
	if (!tr->weighted)
		return 0;
	if (use_weight && b->has_weight) {
		tr->feeds[w_at] = b->weight;
		return 0;
	}
	if (tr->n_ones < b->n) {
		float *p = tfk_realloc(tr->ones, b->n * sizeof(float));

		if (!p)
			return nomem(err);
		tr->ones = p;
		for (size_t j = tr->n_ones; j < b->n; j++)
			p[j] = 1;
		tr->n_ones = b->n;
	}
	return tfk_tensor_init_view(&tr->feeds[w_at], TFK_DT_FLOAT, 1,
				    (int64_t[]){ (int64_t)b->n }, tr->ones,
				    b->n * sizeof(float), TFK_OWN_BORROWED,
				    err);
}

/* compile.metrics are unweighted: Keras gives sample and class weights
 * to the loss and to weighted_metrics only (compile_utils). */
static int update_metrics(struct tfk_trainer *tr,
			  const struct tfk_feed_batch *b,
			  const struct tfk_tensor *const *y,
			  struct tfk_err *err)
{
	for (int i = 0; i < tr->n_metrics; i++) {
		int o = tr->mout[i];
		int rc = tfk_metric_update(tr->metrics[i], label_of(b, o),
					   y[o], NULL, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* The batch's per-output losses (fetched at l[0..n_lkeys)) into the
 * epoch sums, weighted by batch size as Keras 3's loss trackers. */
static void add_losses(struct tfk_trainer *tr, const struct tfk_tensor **l,
		       size_t n)
{
	for (int i = 0; i < tr->n_lkeys; i++)
		tr->lsum[i] += *(const float *)l[i]->data * (double)n;
}

static int check_loss(double l, struct tfk_err *err)
{
	if (isfinite(l))
		return 0;
	return tfk_errf(err, TFK_EINVAL, "loss is %s",
			isnan(l) ? "nan" : l > 0 ? "inf" : "-inf");
}

/* The optimizer's step and the moving averages, from values[0..n_opt)
 * (gradients) and values[n_opt..] (the batch statistics). */
static int apply(struct tfk_trainer *tr, const struct tfk_tensor **values,
		 struct tfk_err *err)
{
	struct tfk_model *m = tr->m;
	int rc = tfk_optim_apply(tr->opt, tr->n_opt, tr->vars, values, err);

	if (rc)
		return rc;
	for (int i = 0; i < m->n_updates; i++) {
		const struct tfk_model_update *u = &m->updates[i];
		struct tfk_tensor *v = tfk_graph_var_at(m->g, u->var, NULL);
		const float *x = values[tr->n_opt + i]->data;
		float *d = v->data, mo = u->momentum;
		int64_t j, n = tfk_tensor_numel(v);

		for (j = 0; j < n; j++)
			d[j] = d[j] * mo + x[j] * (1 - mo);
	}
	return 0;
}

/* Data-parallel: the sums are in; did any rank see a bad loss? The
 * rows of the step over all ranks to *w. */
static int sync_end(struct tfk_trainer *tr, double *w, struct tfk_err *err)
{
	int bad, rc = tfk_gradsync_end(tr->gs, w, &bad, err);

	if (rc)
		return rc;
	if (!bad)
		return 0;
	if (!isfinite(tr->last_loss))
		rc = check_loss(tr->last_loss, err);
	else
		rc = tfk_errf(err, TFK_EINVAL, "loss is not finite on %d "
			      "other rank%s", bad, bad > 1 ? "s" : "");
	return tr->o.nan_skip ? 1 : rc;
}

int tfk_trainer_step(struct tfk_trainer *tr, const struct tfk_feed_batch *b,
		     uint64_t step, struct tfk_err *err)
{
	const struct tfk_tensor **f;
	double loss;
	int rc;

	rc = tfk_trainer_prepare(tr, b, err);
	f = tr->grads;
	if (!rc)
		rc = set_feeds(tr, b, 1, err);
	if (!rc && tr->gs)
		tfk_gradsync_begin(tr->gs, (double)b->n, tr->step_rows);
	if (!rc)
		rc = tfk_exec_run(tr->xt, tr->feeds, step, f, err);
	if (rc)
		return rc;
	loss = *(const float *)f[0]->data;
	tr->last_loss = loss;
	if (tr->gs) {
		double w;

		if ((rc = sync_end(tr, &w, err)))
			return rc;
	} else if (check_loss(loss, err)) {
		return tr->o.nan_skip ? 1 : TFK_EINVAL;
	}
	rc = apply(tr, tr->gs ? tr->synced : f + 1, err);
	if (rc)
		return rc;
	tr->loss_sum += loss * (double)b->n;
	tr->loss_n += (double)b->n;
	add_losses(tr, f + tr->out_at + tr->n_out, b->n);
	return update_metrics(tr, b, f + tr->out_at, err);
}

int tfk_trainer_step_idle(struct tfk_trainer *tr, struct tfk_err *err)
{
	double w = 0;
	int rc;

	if (!tr->gs)
		return tfk_errf(err, TFK_EINVAL, "a step without data outside "
				"data-parallel training");
	tr->last_loss = 0;
	rc = tfk_gradsync_idle(tr->gs, tr->step_rows, err);
	if (!rc)
		rc = sync_end(tr, &w, err);
	if (!rc && !(w > 0))
		return 2;	/* no rank had rows: no step */
	return rc ? rc : apply(tr, tr->synced, err);
}

void tfk_trainer_step_rows(struct tfk_trainer *tr, double rows)
{
	tr->step_rows = rows;
}

int tfk_trainer_sync_means(struct tfk_trainer *tr, struct tfk_err *err)
{
	size_t n = 2 + (size_t)tr->n_lkeys, k;
	double *s;
	int i, rc;

	for (i = 0; i < tr->n_metrics; i++)
		n += tfk_metric_state_len(tr->metrics[i]);
	s = tfk_calloc(n, sizeof(*s));
	if (!s)
		return nomem(err);
	s[0] = tr->loss_sum;
	s[1] = tr->loss_n;
	for (i = 0; i < tr->n_lkeys; i++)
		s[2 + i] = tr->lsum[i];
	for (i = 0, k = 2 + (size_t)tr->n_lkeys; i < tr->n_metrics; i++) {
		tfk_metric_state(tr->metrics[i], s + k);
		k += tfk_metric_state_len(tr->metrics[i]);
	}
	rc = tfk_mpi_sum_f64(s, n, err);
	if (!rc) {
		tr->loss_sum = s[0];
		tr->loss_n = s[1];
		for (i = 0; i < tr->n_lkeys; i++)
			tr->lsum[i] = s[2 + i];
		for (i = 0, k = 2 + (size_t)tr->n_lkeys; i < tr->n_metrics;
		     i++) {
			tfk_metric_set_state(tr->metrics[i], s + k);
			k += tfk_metric_state_len(tr->metrics[i]);
		}
	}
	tfk_free(s);
	return rc;
}

int tfk_trainer_eval(struct tfk_trainer *tr, const struct tfk_feed_batch *b,
		     struct tfk_err *err)
{
	const struct tfk_tensor **f;
	double loss;
	int rc;

	rc = tfk_trainer_prepare(tr, b, err);
	f = tr->efetch;
	if (!rc)
		rc = set_feeds(tr, b, 0, err);
	if (!rc)
		rc = tfk_exec_run(tr->xe, tr->feeds, 0, f, err);
	if (rc)
		return rc;
	loss = *(const float *)f[0]->data;
	tr->last_loss = loss;
	tr->loss_sum += loss * (double)b->n;
	tr->loss_n += (double)b->n;
	add_losses(tr, f + 1 + tr->n_out, b->n);
	return update_metrics(tr, b, f + 1, err);
}

double tfk_trainer_last_loss(const struct tfk_trainer *tr)
{
	return tr->last_loss;
}

void tfk_trainer_reset(struct tfk_trainer *tr)
{
	tr->loss_sum = tr->loss_n = 0;
	for (int i = 0; i < tr->n_lkeys; i++)
		tr->lsum[i] = 0;
	for (int i = 0; i < tr->n_metrics; i++)
		tfk_metric_reset(tr->metrics[i]);
}

double tfk_trainer_loss(const struct tfk_trainer *tr)
{
	return tr->loss_n > 0 ? tr->loss_sum / tr->loss_n : NAN;
}

int tfk_trainer_n_metrics(const struct tfk_trainer *tr)
{
	return tr->n_lkeys + tr->n_metrics;
}

const char *tfk_trainer_metric_name(const struct tfk_trainer *tr, int i)
{
	return tr->keys[i];
}

double tfk_trainer_metric(const struct tfk_trainer *tr, int i)
{
	if (i < tr->n_lkeys)
		return tr->loss_n > 0 ? tr->lsum[i] / tr->loss_n : NAN;
	return tfk_metric_result(tr->metrics[i - tr->n_lkeys]);
}

int tfk_trainer_n_opt(const struct tfk_trainer *tr)
{
	return tr->n_opt;
}

const int *tfk_trainer_opt_vars(const struct tfk_trainer *tr)
{
	return tr->opt_vars;
}

void tfk_trainer_exec_stats(const struct tfk_trainer *tr, int train,
			    struct tfk_exec_stats *s)
{
	const struct tfk_exec *x = train ? tr->xt : tr->xe;

	memset(s, 0, sizeof(*s));
	if (x)
		tfk_exec_stats(x, s);
}
