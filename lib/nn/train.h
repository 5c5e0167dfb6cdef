/*
 * train.h - the training step and evaluation of a Keras model.
 *
 * A trainer adds to the model's graph, on the first batch it sees
 * (when the labels' dtypes and shapes are known):
 *   - a label Placeholder "<output>_target" per output and, when
 *     batches carry class weights, a float32 [batch] Placeholder
 *     "sample_weight";
 *   - the loss of the training branch: sum over the outputs of
 *     loss_weight * the output's loss (tfk_loss_build, train 1), plus
 *     m->reg_loss (Keras 3's CompileLoss and compute_loss), and its
 *     gradients (tfk_graph_gradients) w.r.t. every trainable variable
 *     that the loss depends on (others are left to the optimizer's
 *     caller untouched, as Keras warns and skips them);
 *   - the same loss of the inference branch (train 0) (as
 *     model.evaluate reports it).
 * and makes two executors, each planned once and reused:
 *   train: feeds inputs, labels, weight; fetches the loss, the
 *          gradients, the BatchNormalization update values, the
 *          training outputs (for the metrics, as Keras computes them on
 *          the training forward pass) and, with several outputs, each
 *          output's unweighted loss;
 *   eval:  the same feeds; fetches the inference loss, outputs and
 *          per-output losses.
 * A step runs the train exec, checks the loss (non-finite: an error, or
 * a skipped update with nan_skip), applies the optimizer to the
 * variables in place, applies the moving-average updates, and adds the
 * batch to the running epoch means (loss weighted by batch size, as
 * Keras' loss tracker) and to the metrics.
 *
 * History keys are Keras 3's (checked against its fit()): "loss" (the
 * weighted total), then, with several outputs, "<output>_loss" for each
 * output (unweighted, as Keras records them) and "<output>_<metric>"
 * for each metric; with one output the metrics' own names.
 *
 * Randomness (Dropout) comes from the executor's key (seed, step), so
 * a run resumed at step s draws what the uninterrupted run drew.
 */
#ifndef TFK_TRAIN_H
#define TFK_TRAIN_H

#include "graph/exec.h"
#include "nn/feed.h"
#include "nn/model.h"
#include "nn/optim.h"
#include "util/err.h"

#include <jansson.h>
#include <stdint.h>

struct tfk_train_opts {
	uint64_t seed;		/* the executor's RNG seed */
	int threads;		/* kernel threads (<= 0: 1) */
	int nan_skip;		/* non-finite loss: skip the update */
	/* Data-parallel training (util/mpi.h's world, nn/gradsync.h):
	 * every step's gradients and batch statistics become the mean
	 * over all ranks' rows before the update, and a non-finite loss
	 * on any rank counts on every rank. */
	int data_parallel;
	size_t bucket_bytes;	/* fusion buckets (0: 64 MiB) */
};

struct tfk_trainer;

/*
 * A trainer for m (not consumed; must outlive the trainer) with losses
 * ls[m->n_outputs] and loss weights loss_weights[m->n_outputs] (NULL:
 * 1 each; tfk_loss_parse_outputs gives both), the metrics of `metrics`
 * (compile.metrics, may be NULL; metrics_path names it in messages):
 * a JSON array of metric entries (one output), or an array with one
 * item per output (null, an entry, or an array of entries; several
 * outputs), or an object keyed by output name, as Keras 3 reads it (a
 * flat list of another length is refused). Optimizer opt is borrowed.
 * The graph is built at the first step or eval; one trainer per model
 * (its placeholders are added to m->g). 0, TFK_EINVAL (a bad metric
 * naming its path: "spec.json: compile.metrics.a[1]: unknown metric
 * 'acuracy'"; metrics not of those forms), TFK_ENOMEM; *tr NULL on
 * failure.
 */
int tfk_trainer_new(struct tfk_trainer **tr, struct tfk_model *m,
		    const struct tfk_loss_spec *ls, const float *loss_weights,
		    const json_t *metrics, const char *metrics_path,
		    struct tfk_optim *opt, const struct tfk_train_opts *o,
		    struct tfk_err *err);
void tfk_trainer_free(struct tfk_trainer *tr);

/*
 * Build the graph additions and executors for batches like b (label
 * dtype and rank, weights or not) now instead of at the first step.
 * Idempotent. Errors from the loss, gradient and executor builders.
 */
int tfk_trainer_prepare(struct tfk_trainer *tr,
			const struct tfk_feed_batch *b, struct tfk_err *err);

/*
 * One training step on b; step is the global step (0-based: the
 * optimizer's iterations before it), the executor's RNG counter.
 * Returns 0, 1 when the loss was not finite and nan_skip is set (no
 * update, nothing accumulated), or a negative code: TFK_EINVAL "loss
 * is nan" / "loss is inf" without nan_skip (variables untouched),
 * shape errors from the executor, TFK_ENOMEM.
 */
int tfk_trainer_step(struct tfk_trainer *tr, const struct tfk_feed_batch *b,
		     uint64_t step, struct tfk_err *err);

/*
 * Data-parallel: this rank has no batch for this step (its shard ran
 * out first) but takes part in the step's sums with nothing, and
 * applies the same update as the others. The trainer must have been
 * prepared. Returns as tfk_trainer_step (1: a non-finite loss elsewhere
 * with nan_skip), or 2 when no rank had rows (no update: the ranks'
 * data all ran out); TFK_EINVAL outside data-parallel training.
 */
int tfk_trainer_step_idle(struct tfk_trainer *tr, struct tfk_err *err);
/* Data-parallel: the rows of the coming steps on all ranks together,
 * when the caller knows them (0: not known). Known, the means are made
 * as the gradients are copied for the sums, one pass fewer. */
void tfk_trainer_step_rows(struct tfk_trainer *tr, double rows);
/*
 * Data-parallel: replace the running means' sums (loss, every metric's
 * state) by their sums over all ranks, so that every rank reports the
 * means over all shards (sums of counts, not means of means). Call at
 * the same point on every rank.
 */
int tfk_trainer_sync_means(struct tfk_trainer *tr, struct tfk_err *err);

/* The loss of the last step or eval batch (its own value, not a mean). */
double tfk_trainer_last_loss(const struct tfk_trainer *tr);

/* Add batch b to the evaluation means (inference branch, no update). */
int tfk_trainer_eval(struct tfk_trainer *tr, const struct tfk_feed_batch *b,
		     struct tfk_err *err);

/* Start new epoch means (loss and every metric). */
void tfk_trainer_reset(struct tfk_trainer *tr);
/* The mean loss since the reset (NAN before any batch). */
double tfk_trainer_loss(const struct tfk_trainer *tr);
/* The values logged besides "loss": with several outputs each output's
 * loss first ("a_loss", "b_loss"), then the metrics. */
int tfk_trainer_n_metrics(const struct tfk_trainer *tr);
/* History key ("accuracy", "a_loss", "a_accuracy") and result of value
 * i since the reset (a loss: its mean weighted by batch size). */
const char *tfk_trainer_metric_name(const struct tfk_trainer *tr, int i);
double tfk_trainer_metric(const struct tfk_trainer *tr, int i);

/* The variables the optimizer updates: count and graph variable
 * indices (valid after prepare), for checkpoints (ckpt.h opt_var). */
int tfk_trainer_n_opt(const struct tfk_trainer *tr);
const int *tfk_trainer_opt_vars(const struct tfk_trainer *tr);

/* The statistics of the train (train 1) or eval executor (zeros before
 * prepare): a run of same-shaped batches makes no new plan. */
void tfk_trainer_exec_stats(const struct tfk_trainer *tr, int train,
			    struct tfk_exec_stats *s);

#endif
