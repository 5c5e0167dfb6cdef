/*
 * keras-impl.h - private to lib/nn: the pieces of the Keras front end
 * (model.c walks the model config, layers.c expands layers into ops,
 * initializer.c makes weights, loss.c adds losses) and what they share.
 *
 * A Keras tensor is a pair of ports, one per branch (training and
 * inference); a layer call builds its ops once per branch, with the
 * branch's node-name scope ("train/dense/" or "dense/"), reading the
 * same variables. Layers whose ops are the same in both branches and
 * take the same port in both (Rescaling at the model input) share one
 * set of nodes.
 */
#ifndef TFK_KERAS_IMPL_H
#define TFK_KERAS_IMPL_H

#include "nn/model.h"

#include <jansson.h>
#include <stdint.h>

#define KERAS_EPS 1e-7f		/* keras.backend.epsilon() */
#define KMAX_IN 16		/* inputs of one merge layer call */
#define KMAX_W 6		/* weights of one layer */

/* One Keras tensor: its port in each branch, and when its last op is
 * Softmax/Sigmoid, that activation and its input (logits). */
struct ktensor {
	struct tfk_port t, i;
	const char *act;
	struct tfk_port t_logits, i_logits;
};

/* An initializer config: kind and its parameters. */
enum {
	KI_ZEROS, KI_ONES, KI_CONST, KI_RUNIFORM, KI_RNORMAL, KI_TNORMAL,
	KI_VSCALE, KI_ORTHO
};
enum { KI_FAN_IN, KI_FAN_OUT, KI_FAN_AVG };
enum { KI_D_TRUNC, KI_D_NORMAL, KI_D_UNIFORM };
struct kinit {
	int kind;
	double a, b;		/* minval/maxval, mean/stddev, value, scale */
	int mode, dist;		/* VarianceScaling */
	int has_seed;
	int64_t seed;
};

/* A regularizer: factors (0 = none). */
struct kreg {
	float l1, l2;
};

/* Activations by Keras name. */
enum {
	KA_LINEAR, KA_RELU, KA_RELU6, KA_SIGMOID, KA_TANH, KA_SOFTMAX,
	KA_ELU, KA_SELU, KA_SOFTPLUS, KA_SOFTSIGN, KA_SWISH, KA_GELU,
	KA_LEAKY, KA_EXP
};

struct klayer;

/* One branch's output of a layer call. */
struct kout {
	struct tfk_port p;
	const char *act;	/* "softmax"/"sigmoid" or NULL */
	struct tfk_port logits;
};

/* The build context. */
struct kctx {
	struct tfk_model *m;
	struct tfk_graph *g;
	const char *path;	/* the model's JSON path, for messages */
	uint64_t seed;
	struct tfk_err *err;
	int train;		/* branch being built */
	char scope[160];	/* node name scope of the current layer */
	int bf16;		/* model.dtype_policy is mixed_bfloat16 */
};

/* 1 when key is one of the words of list (" a b c ": a space before and
 * after each word), else 0, also for an empty key or one holding a
 * space; for the key lists of layer classes and model configs
 * (model.c). */
int kword_in(const char *list, const char *key);

/* Layer parse/apply, by class (layers.c). */
struct klayer_class {
	const char *cls;
	const char *keys;	/* accepted config keys: " a b c " */
	int (*parse)(struct kctx *c, struct klayer *l);
	/* Make the weights given the (inference branch) input shapes. */
	int (*build)(struct kctx *c, struct klayer *l,
		     const struct tfk_tdesc *in, int n_in);
	/* Add the ops of one call in branch c->train (in[k]: that
	 * branch's ports) into *out. */
	int (*apply)(struct kctx *c, struct klayer *l,
		     const struct tfk_port *in, int n_in, struct kout *out);
	int flags;
};
enum {
	KL_MERGE = 1,		/* takes a list of inputs */
	KL_SHARED = 2,		/* same ops in both branches: build once */
	KL_INPUT = 4		/* InputLayer */
};

struct klayer {
	const struct klayer_class *k;
	const char *name;	/* the layer's name (borrowed from JSON) */
	const json_t *obj, *cfg;
	char path[224];		/* "spec.json: model.config.layers[2]" */
	int trainable;
	int keras3;		/* a Keras 3 config (its dtype a DTypePolicy) */
	int bf16;		/* mixed_bfloat16: products in bfloat16 */
	/* parsed config */
	int act;
	float alpha;		/* LeakyReLU, ELU */
	long units, filters, groups, mult, in_dim, out_dim;
	int use_bias, center, scale, keepdims, same, causal;
	int64_t ks[2], st[2], dil[2];
	int64_t target[TFK_MAX_RANK];
	int target_rank, axis;
	double rate, eps, momentum, max_value, threshold;
	struct kinit init[KMAX_W];
	struct kreg reg[KMAX_W];
	enum tfk_dtype dtype;	/* InputLayer */
	int rank;		/* InputLayer: with the batch dim */
	int64_t shape[TFK_MAX_RANK];
	/* LSTM, GRU, SimpleRNN (recurrent.c) */
	int ract, ret_seq, go_back, reset_after, forget_bias;
	/* built */
	int built;
	struct tfk_port w[KMAX_W];
	/* calls (Functional: node index = call index) */
	int n_calls;
	struct ktensor *outs;
};

/* layers.c */
const struct klayer_class *tfk_keras_class(const char *cls);
int tfk_keras_parse_layer(struct kctx *c, struct klayer *l);
/* 1 for "mixed_bfloat16", 0 for "float32", -1 for any other name. */
int tfk_keras_policy(const char *name);
/* Activation by name into *a (alpha for leaky_relu); -1 unknown. */
int tfk_keras_act_parse(const char *s, int *a);
/* Add activation a to x in the current branch and scope (out->p: x
 * itself for linear); sets out->act/logits for softmax and sigmoid. */
int tfk_keras_act_apply(struct kctx *c, int a, float alpha,
			struct tfk_port x, struct kout *out);

/* Graph helpers in the current scope (layers.c). */
int kop(struct kctx *c, const char *op, const struct tfk_port *in, int n,
	const struct tfk_attr *a, int na, struct tfk_port *out);
int kop1(struct kctx *c, const char *op, struct tfk_port x,
	 struct tfk_port *out);
int kop2(struct kctx *c, const char *op, struct tfk_port x,
	 struct tfk_port y, struct tfk_port *out);
int kconst_f(struct kctx *c, float v, struct tfk_port *out);
int kconst_iv(struct kctx *c, const int32_t *v, int n, struct tfk_port *out);
const struct tfk_tdesc *kdesc(struct kctx *c, struct tfk_port p);
/* Config readers: the value at key of l->cfg (absent/null: default);
 * errors name "PATH.config.KEY". */
int kcfg_bad(struct kctx *c, const struct klayer *l, const char *key,
	     const char *what);

/* recurrent.c: LSTM, GRU and SimpleRNN, unrolled over a known number
 * of timesteps (parse, build, apply as struct klayer_class). */
int tfk_keras_rnn_parse(struct kctx *c, struct klayer *l);
int tfk_keras_rnn_build(struct kctx *c, struct klayer *l,
			const struct tfk_tdesc *in, int n_in);
int tfk_keras_rnn_apply(struct kctx *c, struct klayer *l,
			const struct tfk_port *in, int n_in,
			struct kout *out);

/* preplayers.c: StringLookup, IntegerLookup, Hashing, Discretization,
 * CategoryEncoding and TextVectorization inside a model (apply as
 * struct klayer_class; the config keys are checked by preprocess.c);
 * what cannot be exported is refused by name. */
int tfk_keras_prep_apply(struct kctx *c, struct klayer *l,
			 const struct tfk_port *in, int n_in,
			 struct kout *out);

/* auglayers.c: RandomFlip, RandomRotation, RandomZoom,
 * RandomTranslation, RandomContrast, RandomBrightness and RandomCrop
 * (parse and apply as struct klayer_class): random in the training
 * branch, the identity at inference (RandomCrop: Keras' centred
 * crop-and-resize to its size). */
int tfk_keras_aug_parse(struct kctx *c, struct klayer *l);
int tfk_keras_aug_apply(struct kctx *c, struct klayer *l,
			const struct tfk_port *in, int n_in,
			struct kout *out);

/* initializer.c */
/* Parse an initializer value (name string or {"class_name", "config"})
 * at l's config key; absent or null: def (a Keras name). */
int tfk_keras_init_parse(struct kctx *c, const struct klayer *l,
			 const char *key, const char *def, struct kinit *ki);
/* Fill t (float32) from ki, deterministically from (seed, name). */
int tfk_keras_init_fill(const struct kinit *ki, uint64_t seed,
			const char *name, struct tfk_tensor *t,
			struct tfk_err *err);
int tfk_keras_reg_parse(struct kctx *c, const struct klayer *l,
			const char *key, struct kreg *r);
/* Make variable "<layer>/<wname>" of shape, initialised from ki, into
 * l->w[slot] and the model's variable list. */
int tfk_keras_var(struct kctx *c, struct klayer *l, int slot,
		  const char *wname, int rank, const int64_t *shape,
		  const struct kinit *ki, const struct kreg *reg,
		  int trainable);

#endif
