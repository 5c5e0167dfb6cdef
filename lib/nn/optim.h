/*
 * optim.h - Keras optimizers and learning-rate schedules, applied in
 * place to a model's variables.
 *
 * An optimizer is made from a compile.optimizer value: a name ("adam",
 * "sgd", "rmsprop", "adagrad", "adamw"; Keras defaults) or an object
 * {"class_name": "Adam", "config": {"learning_rate": 0.001, ...}} whose
 * learning_rate may itself be a schedule object (ExponentialDecay,
 * PiecewiseConstantDecay, CosineDecay, with Keras' config keys).
 * Update rules are Keras 2.x / tf.keras (TF 2.11+) optimizers exactly
 * (epsilon placement, bias correction, nesterov form), in float32.
 *
 * Per variable the optimizer keeps its slots, named as the TF 2.11+
 * Keras optimizers name them (Adam/AdamW: "m", "v", and "vhat" with
 * amsgrad; SGD with momentum > 0: "m"; RMSprop: "velocity", then
 * "momentum" when momentum > 0 and "average_gradient" when centered;
 * Adagrad: "accumulator", starting at initial_accumulator_value),
 * float32 tensors of the variable's shape, listed for checkpoints by
 * tfk_optim_slot; `iterations` counts applied steps (the schedule's
 * step). weight_decay (AdamW's default 0.004, null elsewhere) applies
 * to every optimizer as Keras' base class does: w -= w * wd * lr before
 * the update. At most one of clipnorm, clipvalue and global_clipnorm.
 * Unknown config keys, use_ema true and legacy optimizers are refused
 * with the key's JSON path.
 */
#ifndef TFK_OPTIM_H
#define TFK_OPTIM_H

#include "graph/tensor.h"
#include "util/err.h"

#include <jansson.h>
#include <stdint.h>

struct tfk_optim;

/* Parse v (path names it in messages: "spec.json: compile.optimizer.
 * config.beta_1: expected a number in [0, 1)"). 0, TFK_EINVAL,
 * TFK_ENOMEM; *o NULL on failure. */
int tfk_optim_new(const json_t *v, const char *path, struct tfk_optim **o,
		  struct tfk_err *err);
void tfk_optim_free(struct tfk_optim *o);

/* Canonical class name ("Adam") and its config as Keras' get_config()
 * would give (new reference), for checkpoints and hparams. */
const char *tfk_optim_name(const struct tfk_optim *o);
json_t *tfk_optim_config(const struct tfk_optim *o);

/*
 * One step: vars[i] -= update(grads[i]) for i < n (float32, same
 * shapes; the same variables in the same order on every call: slots
 * are made on the first call). Then iterations += 1. 0, TFK_EINVAL
 * (dtype/shape/count change), TFK_ENOMEM.
 */
int tfk_optim_apply(struct tfk_optim *o, int n, struct tfk_tensor *const *vars,
		    const struct tfk_tensor *const *grads, struct tfk_err *err);

/* The learning rate the next step uses (schedule evaluated at
 * iterations), and an override: after set_lr, the rate is that constant
 * (ReduceLROnPlateau, LearningRateScheduler). */
double tfk_optim_lr(const struct tfk_optim *o);
void tfk_optim_set_lr(struct tfk_optim *o, double lr);

int64_t tfk_optim_iterations(const struct tfk_optim *o);
void tfk_optim_set_iterations(struct tfk_optim *o, int64_t it);

/* Threads for the update loops of large variables (default 1; the
 * result does not depend on it). */
void tfk_optim_set_threads(struct tfk_optim *o, int threads);
/* Test hook: on != 0 runs the plain C _ref loops (the specification)
 * instead of the vectorized ones; both give identical bits. */
void tfk_optim_set_ref(struct tfk_optim *o, int on);

/* Slots, for checkpoints: count after the first apply (0 before), and
 * the k-th: which variable (index into the apply arrays), its slot name
 * ("m") and its tensor (owned by the optimizer; write it in place when
 * restoring). tfk_optim_init_slots makes them (zeros) without a step,
 * given the variables, so a restore can fill them before training. */
int tfk_optim_n_slots(const struct tfk_optim *o);
struct tfk_tensor *tfk_optim_slot(struct tfk_optim *o, int k, int *var,
				  const char **name);
int tfk_optim_init_slots(struct tfk_optim *o, int n,
			 struct tfk_tensor *const *vars, struct tfk_err *err);

#endif
