/*
 * ckpt.h - training checkpoints: weights, optimizer slots, loop state.
 *
 * A checkpoint is three files sharing a prefix:
 *   PREFIX.index, PREFIX.data-00000-of-00001  a TF tensor bundle
 *       (lib/format/bundle.h): key = variable name ("dense/kernel") for
 *       every variable of the graph (trainable or not), and
 *       "optimizer/<var>/<slot>" ("optimizer/dense/kernel/m") for each
 *       optimizer slot;
 *   PREFIX.json  the loop state as a JSON object the caller composes
 *       (epoch, optimizer iterations, learning-rate override, seed,
 *       callback states, history, the spec), written last.
 * Every file goes through a temporary name and a rename, so a killed
 * run leaves either a whole checkpoint or none under the final names
 * (a PREFIX.json without its bundle cannot appear: the bundle is
 * written first).
 *
 * A training directory holds ckpt-<epoch> checkpoints and a pointer
 * file DIR/checkpoint in TF's CheckpointState text form, replaced by
 * rename after the checkpoint it names is complete:
 *   model_checkpoint_path: "ckpt-3"
 *   all_model_checkpoint_paths: "ckpt-2"
 *   all_model_checkpoint_paths: "ckpt-3"
 * Older checkpoints beyond max_to_keep are removed after the pointer
 * moved on, as tf.train.CheckpointManager does.
 *
 * A SavedModel tfk-train exported holds one more checkpoint of this
 * form, DIR/assets.extra/tfkit_train.{index,data-00000-of-00001,json}
 * (TFK_CKPT_IN_SAVEDMODEL): the state at the end of the run, from
 * which --resume and --init-from continue.
 */
#ifndef TFK_CKPT_H
#define TFK_CKPT_H

#include "graph/graph.h"
#include "nn/optim.h"
#include "util/err.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* The training checkpoint's prefix inside a SavedModel directory. */
#define TFK_CKPT_IN_SAVEDMODEL "assets.extra/tfkit_train"

/*
 * Write PREFIX.{data-00000-of-00001,index,json}: every variable of g,
 * the slots of o when o is not NULL (opt_var[i] is the graph variable
 * index of the optimizer's i-th apply variable), then state (not
 * NULL) as JSON. 0, TFK_EIO ("PREFIX.index: ..."), TFK_EINVAL,
 * TFK_ENOMEM.
 */
int tfk_ckpt_write(const char *prefix, struct tfk_graph *g,
		   struct tfk_optim *o, const int *opt_var,
		   const json_t *state, struct tfk_err *err);

/* PREFIX.json into *state (new reference). TFK_EIO / TFK_ECORRUPT
 * ("PREFIX.json: line 3: ..."), TFK_ENOMEM. */
int tfk_ckpt_read_state(const char *prefix, json_t **state,
			struct tfk_err *err);

/*
 * Restore from PREFIX: every variable of g must be in the bundle with
 * its dtype and shape ("PREFIX.index: no tensor 'dense/kernel'",
 * "PREFIX.index: dense/kernel: float32 [784, 64] in the checkpoint,
 * the model has [784, 128]"); with o (n_opt variables, opt_var as for
 * tfk_ckpt_write) the optimizer's slots are made and filled from
 * "optimizer/<var>/<slot>". Variables are only written once all have
 * been checked and read, so a failed restore leaves g unchanged.
 */
int tfk_ckpt_restore(const char *prefix, struct tfk_graph *g,
		     struct tfk_optim *o, int n_opt, const int *opt_var,
		     struct tfk_err *err);

/*
 * Only the variables, and exactly them: every variable of g from the
 * bundle at PREFIX (a SavedModel's DIR/variables/variables), which must
 * hold no other key. Errors name the variable: "PREFIX.index: the
 * model's variable 'dense/kernel' is missing", "PREFIX.index: variable
 * 'dense_9/kernel' is not in the model", a dtype/shape mismatch as
 * tfk_ckpt_restore. g is unchanged on failure.
 */
int tfk_ckpt_restore_vars(const char *prefix, struct tfk_graph *g,
			  struct tfk_err *err);

/*
 * Only the optimizer's slots (made, then filled from
 * "optimizer/<var>/<slot>"; arguments as tfk_ckpt_restore); the
 * variables are not touched. On failure the slots may be zeros.
 */
int tfk_ckpt_restore_slots(const char *prefix, struct tfk_graph *g,
			   struct tfk_optim *o, int n_opt, const int *opt_var,
			   struct tfk_err *err);

/*
 * Point DIR/checkpoint at name ("ckpt-3", relative to dir), listing
 * all[0..n) (oldest first, name among them) as
 * all_model_checkpoint_paths. Atomic. 0, TFK_EIO, TFK_ENOMEM.
 */
int tfk_ckpt_set_latest(const char *dir, const char *name,
			const char *const *all, int n, struct tfk_err *err);

/*
 * The prefix of DIR's latest checkpoint ("DIR/ckpt-3") into buf[0..n),
 * read from DIR/checkpoint. TFK_ENOTFOUND ("DIR: no checkpoint") when
 * DIR/checkpoint does not exist, TFK_ECORRUPT when it does not parse,
 * TFK_EINVAL when buf is too small.
 */
int tfk_ckpt_latest(const char *dir, char *buf, size_t n,
		    struct tfk_err *err);

/* Remove PREFIX's three files (missing ones are fine). */
void tfk_ckpt_remove(const char *prefix);

#endif
