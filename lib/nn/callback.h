/*
 * callback.h - Keras' fit callbacks, driven by the training loop.
 *
 * fit.callbacks is a list of {"class_name": C, "config": {...}} with
 * Keras' class names, config keys and defaults:
 *   ModelCheckpoint     filepath (required; "{epoch:02d}" and
 *                       "{val_loss:.4f}" fields as Python's format),
 *                       monitor "val_loss", verbose 0, save_best_only
 *                       false, save_weights_only false, mode "auto",
 *                       save_freq "epoch", initial_value_threshold null.
 *                       Writes a checkpoint (ckpt.h) at the formatted
 *                       path as prefix (TF's save_weights format for a
 *                       path without .h5); .h5/.keras paths are refused.
 *   EarlyStopping       monitor "val_loss", min_delta 0, patience 0,
 *                       verbose 0, mode "auto", baseline null,
 *                       restore_best_weights false, start_from_epoch 0.
 *   LearningRateScheduler  Keras takes a Python function; here the
 *                       schedule is piecewise constant by epoch:
 *                       boundaries [e1, e2, ...] (0-based epochs, each
 *                       the first epoch of the next value, increasing)
 *                       and values [v0, v1, ...] (one more), verbose 0.
 *   ReduceLROnPlateau   monitor "val_loss", factor 0.1, patience 10,
 *                       verbose 0, mode "auto", min_delta 1e-4,
 *                       cooldown 0, min_lr 0.
 *   CSVLogger           filename (required), separator ",", append
 *                       false. Columns "epoch" (0-based) then the log
 *                       keys sorted, values as Python's repr.
 *   TensorBoard         log_dir "logs", histogram_freq 0,
 *                       update_freq "epoch" or N (batch_<key> scalars
 *                       every N steps), write_graph, write_images,
 *                       write_steps_per_second, profile_batch,
 *                       embeddings_freq, embeddings_metadata accepted
 *                       (the graph, images, profiles and embeddings are
 *                       not written). Scalars epoch_<key> at step =
 *                       epoch (0-based) in log_dir/train and, for val_
 *                       keys without the prefix, log_dir/validation;
 *                       histograms of every variable ("dense/kernel_0",
 *                       as Keras names them) every histogram_freq
 *                       epochs; hparams in log_dir when given.
 * Monitors must name a log key ("loss", a metric, "val_" + either, or
 * "lr"); one the run cannot produce is an error at train begin, not
 * Keras' per-epoch warning.
 *
 * The library prints nothing: what Keras prints under verbose > 0 is
 * handed to env->note.
 */
#ifndef TFK_CALLBACK_H
#define TFK_CALLBACK_H

#include "graph/graph.h"
#include "format/events.h"
#include "nn/optim.h"
#include "util/err.h"

#include <jansson.h>
#include <stdint.h>

#define TFK_LOGS_MAX 48

/* An epoch's (or a batch's) logs, in insertion order. */
struct tfk_logs {
	int n;
	char key[TFK_LOGS_MAX][64];
	double val[TFK_LOGS_MAX];
};

void tfk_logs_clear(struct tfk_logs *l);
/* Set key (added when new; silently dropped past TFK_LOGS_MAX). */
void tfk_logs_set(struct tfk_logs *l, const char *key, double v);
/* 1 and *v when present, else 0. */
int tfk_logs_get(const struct tfk_logs *l, const char *key, double *v);

/* What callbacks may touch, given by the loop. */
struct tfk_cb_env {
	struct tfk_graph *g;	/* the model's variables */
	struct tfk_optim *opt;
	/* Write a full checkpoint at prefix (the loop knows the state). */
	int (*save)(void *ctx, const char *prefix, struct tfk_err *err);
	/* A message Keras would print (no newline). May be NULL. */
	void (*note)(void *ctx, const char *msg);
	void *ctx;
	/* hparams for TensorBoard (the --set values), n_hparams. */
	const struct tfk_hparam *hparams;
	int n_hparams;
	int resumed;		/* CSVLogger appends, writers reopen */
	/* Out: */
	int stop;		/* EarlyStopping asked to stop */
	int lr_set;		/* a callback set the learning rate ... */
	double lr;		/* ... to this */
};

struct tfk_callbacks;

/*
 * Parse list (fit.callbacks, may be NULL or null: none); path names it
 * in messages ("spec.json: fit.callbacks[1].config.patience: expected
 * a non-negative integer"). 0, TFK_EINVAL, TFK_ENOMEM.
 */
int tfk_callbacks_new(const json_t *list, const char *path,
		      struct tfk_callbacks **cbs, struct tfk_err *err);
void tfk_callbacks_free(struct tfk_callbacks *cbs);

/*
 * Add a TensorBoard callback for --logdir (replacing the log_dir of
 * one given in the spec, else a new one with Keras' defaults);
 * histograms 1: histogram_freq 1. 0 or TFK_ENOMEM.
 */
int tfk_callbacks_logdir(struct tfk_callbacks *cbs, const char *dir,
			 int histograms, struct tfk_err *err);

/*
 * Train begin: keys[0..n) are the log keys an epoch will have (for
 * checking monitors); opens files. 0, TFK_EINVAL ("PATH.config.monitor:
 * 'val_loss' is not logged by this run (logs: loss, accuracy)"),
 * TFK_EIO.
 */
int tfk_callbacks_train_begin(struct tfk_callbacks *cbs,
			      struct tfk_cb_env *env, const char *const *keys,
			      int n, struct tfk_err *err);
/* Epoch begin (0-based): LearningRateScheduler sets the rate. */
int tfk_callbacks_epoch_begin(struct tfk_callbacks *cbs,
			      struct tfk_cb_env *env, int64_t epoch,
			      struct tfk_err *err);
/* After a training step (global step, 1-based after the step) with
 * its logs (the running epoch means). */
int tfk_callbacks_batch_end(struct tfk_callbacks *cbs,
			    struct tfk_cb_env *env, int64_t step,
			    const struct tfk_logs *logs, struct tfk_err *err);
/* Epoch end: logs may gain "lr" (ReduceLROnPlateau, the scheduler). */
int tfk_callbacks_epoch_end(struct tfk_callbacks *cbs,
			    struct tfk_cb_env *env, int64_t epoch,
			    struct tfk_logs *logs, struct tfk_err *err);
/* Train end: EarlyStopping's restore, files closed. */
int tfk_callbacks_train_end(struct tfk_callbacks *cbs,
			    struct tfk_cb_env *env, struct tfk_err *err);

/* Callback states for a checkpoint (new reference: an array, one
 * object per callback), and their restore on --resume (before
 * tfk_callbacks_train_begin). */
json_t *tfk_callbacks_state(const struct tfk_callbacks *cbs);
int tfk_callbacks_restore(struct tfk_callbacks *cbs, const json_t *state,
			  struct tfk_err *err);

/* Python's repr() of a float into buf (>= 32 bytes): "0.5", "1e-05",
 * "0.30000001192092896", "nan", "inf". */
char *tfk_py_repr(double v, char *buf);

#endif
