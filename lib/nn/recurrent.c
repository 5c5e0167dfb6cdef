/*
 * recurrent.c - Keras LSTM, GRU and SimpleRNN as TensorFlow ops,
 * unrolled over the timesteps (as Keras does with unroll=True).
 *
 * The number of timesteps must be known from the input shape [batch,
 * T, features] (an InputLayer of shape [T, F], or [T] before an
 * Embedding). The input projection of every step is one MatMul over
 * [batch * T, features] (+ BiasAdd), cut into steps by Unpack along the
 * time axis (SplitV into chunks of at most 64 steps first: Unpack,
 * Pack and SplitV take at most 64 tensors). Each step then adds h @
 * recurrent_kernel, cuts the gates with SplitV and applies the
 * activations with Sigmoid/Tanh/Mul/AddV2, in Keras' formulas
 * (implementation 2):
 *
 *   LSTM (gates i, f, c, o):  z = x W + h R + b
 *     c' = f(zf) * c + f(zi) * g(zc),  h' = f(zo) * g(c')
 *   GRU reset_after (z, r, h; bias [2, 3 units]: input, recurrent):
 *     xz, xr, xh = x W + b0;  rz, rr, rh = h R + b1
 *     z = f(xz + rz), r = f(xr + rr), hh = g(xh + r * rh)
 *   GRU reset_after false (bias [3 units]):
 *     z = f(xz + h Rz), r = f(xr + h Rr), hh = g(xh + (r * h) Rh)
 *     h' = z * h + (1 - z) * hh, written hh + z * (h - hh)
 *   SimpleRNN:  h' = g(x W + h R + b)
 *
 * with f the recurrent_activation (sigmoid) and g the activation
 * (tanh). The initial state is zero, so step 0 leaves out the terms
 * that multiply it (no Fill of a batch-sized zero tensor is needed).
 * go_backwards walks the steps from the last; with return_sequences
 * the outputs stay in the order walked, as Keras returns them. Every
 * op used has a gradient, so training needs nothing more.
 *
 * dropout (training branch only) multiplies the input by one mask
 * [batch, 1, features] for all steps and gates, as Keras 3 and Keras
 * 2's cell loop do with implementation 2 (Keras 2's fused path draws a
 * mask per step instead; implementation 1, a mask per gate, is
 * refused).
 *
 * Rejected: a fused LSTM op (TF's BlockLSTM / CudnnRNN): the
 * serializers would have to carry it and it would need its own
 * gradient; a While loop: the graph has no control flow, and known
 * lengths are what text classifiers built with Embedding(input_length)
 * feed. Refused, each with its config key: stateful, return_state
 * (a layer here has one output), recurrent_dropout other than 0,
 * time_major, and masking (Embedding refuses mask_zero).
 */
#include "nn/keras-impl.h"
#include "graph/graph.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define RNN_MAX_T (63 * 64)	/* 63 Pack chunks of 64 steps (ConcatV2
				 * takes at most 63 values + axis) */
#define CHUNK 64

enum { K_LSTM, K_GRU, K_SIMPLE };

static int kind_of(const struct klayer *l)
{
	return !strcmp(l->k->cls, "LSTM") ? K_LSTM :
		!strcmp(l->k->cls, "GRU") ? K_GRU : K_SIMPLE;
}

/* gates per kind: LSTM 4, GRU 3, SimpleRNN 1 */
static int n_gates(int kind)
{
	return kind == K_LSTM ? 4 : kind == K_GRU ? 3 : 1;
}

/* Config readers --------------------------------------------------------- */

static const json_t *cget(const struct klayer *l, const char *key)
{
	const json_t *v = json_object_get(l->cfg, key);

	return v && !json_is_null(v) ? v : NULL;
}

static int r_bool(struct kctx *c, struct klayer *l, const char *key, int def,
		  int *v)
{
	const json_t *j = cget(l, key);

	if (!j) {
		*v = def;
		return 0;
	}
	if (!json_is_boolean(j))
		return kcfg_bad(c, l, key, "expected true or false");
	*v = json_is_true(j);
	return 0;
}

/* A feature refused when true. */
static int r_false(struct kctx *c, struct klayer *l, const char *key,
		   const char *why)
{
	int b, rc = r_bool(c, l, key, 0, &b);

	return rc ? rc : b ? kcfg_bad(c, l, key, why) : 0;
}

static int r_act(struct kctx *c, struct klayer *l, const char *key,
		 const char *def, int *a)
{
	const json_t *j = cget(l, key);
	char what[96];

	if (!j) {
		tfk_keras_act_parse(def, a);
		return 0;
	}
	if (json_is_string(j) && !tfk_keras_act_parse(json_string_value(j),
						      a))
		return 0;
	snprintf(what, sizeof(what), "unknown activation '%s'",
		 json_is_string(j) ? json_string_value(j) : "?");
	return kcfg_bad(c, l, key, json_is_string(j) ? what :
			"expected an activation name");
}

/* dropout, recurrent_dropout: a rate in [0, 1) into *v */
static int r_rate(struct kctx *c, struct klayer *l, const char *key,
		  double *v)
{
	const json_t *j = cget(l, key);

	*v = 0;
	if (!j)
		return 0;
	if (!json_is_number(j) || json_number_value(j) < 0 ||
	    json_number_value(j) >= 1)
		return kcfg_bad(c, l, key, "expected a number in [0, 1)");
	*v = json_number_value(j);
	return 0;
}

int tfk_keras_rnn_parse(struct kctx *c, struct klayer *l)
{
	int kind = kind_of(l), b, rc;
	const json_t *j = cget(l, "units");
	double rd;

	if (!j || !json_is_integer(j) || json_integer_value(j) < 1 ||
	    json_integer_value(j) > (1 << 16))
		return kcfg_bad(c, l, "units", "expected an integer in "
				"1..65536");
	l->units = (long)json_integer_value(j);
	l->alpha = 0.2f;	/* keras.activations.leaky_relu */
	if ((rc = r_act(c, l, "activation", "tanh", &l->act)) ||
	    (kind != K_SIMPLE &&
	     (rc = r_act(c, l, "recurrent_activation", "sigmoid",
			 &l->ract))) ||
	    (rc = r_bool(c, l, "use_bias", 1, &l->use_bias)) ||
	    (rc = tfk_keras_init_parse(c, l, "kernel_initializer",
				       "glorot_uniform", &l->init[0])) ||
	    (rc = tfk_keras_init_parse(c, l, "recurrent_initializer",
				       "orthogonal", &l->init[1])) ||
	    (rc = tfk_keras_init_parse(c, l, "bias_initializer", "zeros",
				       &l->init[2])) ||
	    (rc = tfk_keras_reg_parse(c, l, "kernel_regularizer",
				      &l->reg[0])) ||
	    (rc = tfk_keras_reg_parse(c, l, "recurrent_regularizer",
				      &l->reg[1])) ||
	    (rc = tfk_keras_reg_parse(c, l, "bias_regularizer", &l->reg[2])) ||
	    (rc = r_rate(c, l, "dropout", &l->rate)) ||
	    (rc = r_rate(c, l, "recurrent_dropout", &rd)) ||
	    (rc = r_bool(c, l, "return_sequences", 0, &l->ret_seq)) ||
	    (rc = r_bool(c, l, "go_backwards", 0, &l->go_back)) ||
	    (rc = r_bool(c, l, "unroll", 0, &b)) ||
	    (rc = r_bool(c, l, "zero_output_for_mask", 0, &b)) ||
	    (rc = r_false(c, l, "return_state", "true is not supported (a "
			  "layer here has one output)")) ||
	    (rc = r_false(c, l, "stateful", "true is not supported")) ||
	    (rc = r_false(c, l, "time_major", "true is not supported "
			  "(inputs are [batch, timesteps, features])")))
		return rc;
	l->forget_bias = 0;
	if (kind == K_LSTM &&
	    (rc = r_bool(c, l, "unit_forget_bias", 1, &l->forget_bias)))
		return rc;
	l->reset_after = 0;
	if (kind == K_GRU &&
	    (rc = r_bool(c, l, "reset_after", 1, &l->reset_after)))
		return rc;
	if (rd != 0)
		return kcfg_bad(c, l, "recurrent_dropout", "only 0 is "
				"supported (recurrent dropout is not "
				"implemented)");
	j = cget(l, "implementation");
	if (j && (!json_is_integer(j) || json_integer_value(j) < 0 ||
		  json_integer_value(j) > 2))
		return kcfg_bad(c, l, "implementation", "expected 0, 1 or 2");
	/* implementation 1 draws one input mask per gate */
	if (j && json_integer_value(j) == 1 && l->rate != 0)
		return kcfg_bad(c, l, "implementation", "dropout with "
				"implementation 1 (a mask per gate) is not "
				"supported; use 2");
	/* Keras 3: "auto", true or false; no effect on a CPU */
	j = cget(l, "use_cudnn");
	if (j && !json_is_boolean(j) && !(json_is_string(j) &&
					  !strcmp(json_string_value(j),
						  "auto")))
		return kcfg_bad(c, l, "use_cudnn", "expected \"auto\", true "
				"or false");
	j = cget(l, "seed");
	if (j && !json_is_integer(j))
		return kcfg_bad(c, l, "seed", "expected an integer or null");
	return 0;
}

/* Weights ------------------------------------------------------------------ */

static int check_input(struct kctx *c, struct klayer *l,
		       const struct tfk_tdesc *d)
{
	char what[200], sh[96];

	if (d->dtype != TFK_DT_FLOAT)
		return kcfg_bad(c, l, NULL, "expected a float32 input "
				"[batch, timesteps, features]");
	if (d->rank != 3) {
		snprintf(what, sizeof(what), "expected an input of rank 3 "
			 "[batch, timesteps, features], got rank %d",
			 d->rank);
		return kcfg_bad(c, l, NULL, what);
	}
	if (d->shape[1] < 1 || d->shape[2] < 1) {
		tfk_shape_str(d->rank, d->shape, sh, sizeof(sh));
		snprintf(what, sizeof(what), "%s needs a known number of "
			 "timesteps and features, the input is %s (give the "
			 "InputLayer a fixed length)", l->k->cls, sh);
		return kcfg_bad(c, l, NULL, what);
	}
	if (d->shape[1] > RNN_MAX_T) {
		snprintf(what, sizeof(what), "%lld timesteps: at most %d are "
			 "supported (the layer is unrolled)",
			 (long long)d->shape[1], RNN_MAX_T);
		return kcfg_bad(c, l, NULL, what);
	}
	return 0;
}

int tfk_keras_rnn_build(struct kctx *c, struct klayer *l,
			const struct tfk_tdesc *in, int n_in)
{
	static const char *const cell[] = { "lstm_cell", "gru_cell",
					     "simple_rnn_cell" };
	int kind = kind_of(l), g = n_gates(kind), rc;
	int64_t u = l->units, ks[2] = { in->shape[2], g * u },
		rs[2] = { u, g * u }, bs[2] = { 2, g * u };
	char nm[64];

	if ((rc = check_input(c, l, in)))
		return rc;
	snprintf(nm, sizeof(nm), "%s/kernel", cell[kind]);
	if ((rc = tfk_keras_var(c, l, 0, nm, 2, ks, &l->init[0], &l->reg[0],
				1)))
		return rc;
	snprintf(nm, sizeof(nm), "%s/recurrent_kernel", cell[kind]);
	if ((rc = tfk_keras_var(c, l, 1, nm, 2, rs, &l->init[1], &l->reg[1],
				1)))
		return rc;
	if (!l->use_bias)
		return 0;
	snprintf(nm, sizeof(nm), "%s/bias", cell[kind]);
	if (l->reset_after)
		rc = tfk_keras_var(c, l, 2, nm, 2, bs, &l->init[2], &l->reg[2],
				   1);
	else
		rc = tfk_keras_var(c, l, 2, nm, 1, &bs[1], &l->init[2],
				   &l->reg[2], 1);
	if (!rc && l->forget_bias) {
		/* Keras' unit_forget_bias: the forget gate's bias starts
		 * at 1 (Jozefowicz et al., 2015) */
		struct tfk_tensor *b = tfk_graph_var_at(c->g,
			tfk_graph_node(c->g, l->w[2].node)->variable, NULL);
		int64_t i;

		for (i = u; i < 2 * u; i++)
			((float *)b->data)[i] = 1;
	}
	return rc;
}

/* Ops ---------------------------------------------------------------------- */

static int const_si(struct kctx *c, int32_t v, struct tfk_port *out)
{
	struct tfk_tensor t;
	int rc = tfk_tensor_init_view(&t, TFK_DT_INT32, 0, NULL, &v,
				      sizeof(v), TFK_OWN_BORROWED, c->err);

	return rc ? rc : tfk_graph_const(c->g, c->scope, &t, out, c->err);
}

static int reshape(struct kctx *c, struct tfk_port x, int32_t a, int32_t b,
		   int32_t d, int rank, struct tfk_port *out)
{
	int32_t v[3] = { a, b, d };
	struct tfk_port s;
	int rc = kconst_iv(c, v, rank, &s);

	return rc ? rc : kop2(c, "Reshape", x, s, out);
}

/* SplitV of x along axis into n parts of the given sizes: out[k]. */
static int splitv(struct kctx *c, struct tfk_port x, const int32_t *sizes,
		  int n, int32_t axis, struct tfk_port *out)
{
	struct tfk_attr at = TFK_A_INT("num_split", n);
	struct tfk_port in[3] = { x }, p;
	int k, rc;

	if ((rc = kconst_iv(c, sizes, n, &in[1])) ||
	    (rc = const_si(c, axis, &in[2])) ||
	    (rc = kop(c, "SplitV", in, 3, &at, 1, &p)))
		return rc;
	for (k = 0; k < n; k++)
		out[k] = (struct tfk_port){ p.node, k };
	return 0;
}

/* The n equal gates of z [batch, n * units]. */
static int gates(struct kctx *c, struct klayer *l, struct tfk_port z, int n,
		 struct tfk_port *out)
{
	int32_t s[4];
	int k;

	for (k = 0; k < n; k++)
		s[k] = (int32_t)l->units;
	return splitv(c, z, s, n, 1, out);
}

/* Activation a on x (the Keras activation's ops). */
static int act(struct kctx *c, struct klayer *l, int a, struct tfk_port x,
	       struct tfk_port *out)
{
	struct kout o;
	int rc = tfk_keras_act_apply(c, a, l->alpha, x, &o);

	*out = o.p;
	return rc;
}

/* a + b, or a alone when b is absent (node -1). */
static int add_opt(struct kctx *c, struct tfk_port a, struct tfk_port b,
		   struct tfk_port *out)
{
	if (b.node < 0) {
		*out = a;
		return 0;
	}
	return kop2(c, "AddV2", a, b, out);
}

/* Keras' input dropout in the training branch: x [batch, T, F] times
 * one mask [batch, 1, F] of 0 and 1 / (1 - rate) for all steps and
 * gates (DropoutRNNCell.get_dropout_mask, drawn once per call), the
 * mask node named "<scope>dropout_mask". */
static int input_dropout(struct kctx *c, struct klayer *l,
			 struct tfk_port *x)
{
	const struct tfk_tdesc *d = kdesc(c, *x);
	int32_t v0 = 0, v1 = 1, tail[2] = { 1, (int32_t)d->shape[2] };
	struct tfk_attr dt = TFK_A_TYPE("dtype", TFK_DT_FLOAT);
	struct tfk_attr na = TFK_A_INT("N", 2);
	struct tfk_attr ct = TFK_A_TYPE("DstT", TFK_DT_FLOAT);
	struct tfk_port sl[4], ci[3], shape, u, r, keep, k;
	char name[200];
	int rc;

	if ((rc = kop1(c, "Shape", *x, &sl[0])) ||
	    (rc = kconst_iv(c, &v0, 1, &sl[1])) ||
	    (rc = kconst_iv(c, &v1, 1, &sl[2])) ||
	    (rc = kconst_iv(c, &v1, 1, &sl[3])) ||
	    (rc = kop(c, "StridedSlice", sl, 4, NULL, 0, &ci[0])) ||
	    (rc = kconst_iv(c, tail, 2, &ci[1])) ||
	    (rc = const_si(c, 0, &ci[2])) ||
	    (rc = kop(c, "ConcatV2", ci, 3, &na, 1, &shape)) ||
	    (rc = kop(c, "RandomUniform", &shape, 1, &dt, 1, &u)) ||
	    (rc = kconst_f(c, (float)l->rate, &r)) ||
	    (rc = kop2(c, "GreaterEqual", u, r, &keep)) ||
	    (rc = kop(c, "Cast", &keep, 1, &ct, 1, &keep)) ||
	    (rc = kconst_f(c, (float)(1 / (1 - l->rate)), &k)))
		return rc;
	snprintf(name, sizeof(name), "%sdropout_mask", c->scope);
	{
		struct tfk_port in[2] = { keep, k };

		if ((rc = tfk_graph_add_node(c->g, "Mul", name, in, 2, NULL,
					     0, &keep, c->err)))
			return rc;
	}
	return kop2(c, "Mul", *x, keep, x);
}

/* x [batch, T, F] @ kernel (+ bias) cut into steps xs[0..T) [batch,
 * gates * units]. */
static int project(struct kctx *c, struct klayer *l, struct tfk_port x,
		   struct tfk_port bias, struct tfk_port *xs)
{
	const struct tfk_tdesc *d = kdesc(c, x);
	int32_t T = (int32_t)d->shape[1], F = (int32_t)d->shape[2];
	int32_t gu = (int32_t)(n_gates(kind_of(l)) * l->units);
	int32_t sizes[CHUNK];
	struct tfk_port p, chunks[CHUNK];
	int n_chunks = (T + CHUNK - 1) / CHUNK, k, rc, t = 0;

	if ((rc = reshape(c, x, -1, F, 0, 2, &p)) ||
	    (rc = kop2(c, "MatMul", p, l->w[0], &p)) ||
	    (bias.node >= 0 && (rc = kop2(c, "BiasAdd", p, bias, &p))) ||
	    (rc = reshape(c, p, -1, T, gu, 3, &p)))
		return rc;
	if (n_chunks == 1) {
		chunks[0] = p;
	} else {
		for (k = 0; k < n_chunks; k++)
			sizes[k] = k < n_chunks - 1 ? CHUNK : T - k * CHUNK;
		if ((rc = splitv(c, p, sizes, n_chunks, 1, chunks)))
			return rc;
	}
	for (k = 0; k < n_chunks; k++) {
		int32_t len = k < n_chunks - 1 ? CHUNK : T - k * CHUNK, i;
		struct tfk_attr at[2] = { TFK_A_INT("num", len),
					  TFK_A_INT("axis", 1) };

		if ((rc = kop(c, "Unpack", &chunks[k], 1, at, 2, &p)))
			return rc;
		for (i = 0; i < len; i++)
			xs[t++] = (struct tfk_port){ p.node, i };
	}
	return 0;
}

/* hs[0..T) [batch, units] stacked into [batch, T, units]. */
static int stack(struct kctx *c, const struct tfk_port *hs, int T,
		 struct tfk_port *out)
{
	struct tfk_port chunks[CHUNK];
	int n_chunks = (T + CHUNK - 1) / CHUNK, k, rc;

	for (k = 0; k < n_chunks; k++) {
		int len = k < n_chunks - 1 ? CHUNK : T - k * CHUNK;
		struct tfk_attr at[2] = { TFK_A_INT("N", len),
					  TFK_A_INT("axis", 1) };

		if ((rc = kop(c, "Pack", hs + k * CHUNK, len, at, 2,
			      &chunks[k])))
			return rc;
	}
	if (n_chunks == 1) {
		*out = chunks[0];
		return 0;
	}
	{
		struct tfk_attr at = TFK_A_INT("N", n_chunks);

		if ((rc = const_si(c, 1, &chunks[n_chunks])))
			return rc;
		return kop(c, "ConcatV2", chunks, n_chunks + 1, &at, 1, out);
	}
}

/* One LSTM step: x [batch, 4 units] (x W + b), state h, cs (node -1 at
 * step 0) into h, cs. */
static int lstm_step(struct kctx *c, struct klayer *l, struct tfk_port x,
		     struct tfk_port *h, struct tfk_port *cs)
{
	struct tfk_port z = x, gt[4], i, f, g, o, t;
	int rc;

	if (h->node >= 0 && ((rc = kop2(c, "MatMul", *h, l->w[1], &t)) ||
			     (rc = kop2(c, "AddV2", z, t, &z))))
		return rc;
	if ((rc = gates(c, l, z, 4, gt)) ||
	    (rc = act(c, l, l->ract, gt[0], &i)) ||
	    (rc = act(c, l, l->act, gt[2], &g)) ||
	    (rc = act(c, l, l->ract, gt[3], &o)) ||
	    (rc = kop2(c, "Mul", i, g, &t)))
		return rc;
	if (cs->node >= 0 && ((rc = act(c, l, l->ract, gt[1], &f)) ||
			      (rc = kop2(c, "Mul", f, *cs, &f)) ||
			      (rc = kop2(c, "AddV2", f, t, &t))))
		return rc;
	*cs = t;
	if ((rc = act(c, l, l->act, t, &t)))
		return rc;
	return kop2(c, "Mul", o, t, h);
}

/* One GRU step. x: x W + input bias; rb: the recurrent bias [3 units]
 * (reset_after; node -1 when none); rk[0], rk[1]: the recurrent kernel
 * cut into [units, 2 units] and [units, units] (reset_after false). */
static int gru_step(struct kctx *c, struct klayer *l, struct tfk_port x,
		    struct tfk_port rb, const struct tfk_port *rk,
		    struct tfk_port *h)
{
	struct tfk_port xg[3], rg[3] = { { -1, 0 }, { -1, 0 }, { -1, 0 } };
	struct tfk_port z, r, hh, t = { -1, 0 };
	int rc = 0;

	if ((rc = gates(c, l, x, 3, xg)))
		return rc;
	if (l->reset_after) {
		/* h R + b1 (step 0: b1 alone, broadcast) */
		if (h->node >= 0 &&
		    ((rc = kop2(c, "MatMul", *h, l->w[1], &t)) ||
		     (rb.node >= 0 && (rc = kop2(c, "BiasAdd", t, rb, &t)))))
			return rc;
		if (h->node >= 0)
			rc = gates(c, l, t, 3, rg);
		else if (rb.node >= 0)
			rc = splitv(c, rb, (int32_t[]){ (int32_t)l->units,
				    (int32_t)l->units, (int32_t)l->units }, 3,
				    0, rg);
		if (rc)
			return rc;
		if ((rc = add_opt(c, xg[0], rg[0], &z)) ||
		    (rc = act(c, l, l->ract, z, &z)))
			return rc;
		hh = xg[2];
		if (rg[2].node >= 0 &&
		    ((rc = add_opt(c, xg[1], rg[1], &r)) ||
		     (rc = act(c, l, l->ract, r, &r)) ||
		     (rc = kop2(c, "Mul", r, rg[2], &t)) ||
		     (rc = kop2(c, "AddV2", hh, t, &hh))))
			return rc;
	} else {
		if (h->node >= 0 &&
		    ((rc = kop2(c, "MatMul", *h, rk[0], &t)) ||
		     (rc = gates(c, l, t, 2, rg))))
			return rc;
		if ((rc = add_opt(c, xg[0], rg[0], &z)) ||
		    (rc = act(c, l, l->ract, z, &z)))
			return rc;
		hh = xg[2];
		if (h->node >= 0 &&
		    ((rc = kop2(c, "AddV2", xg[1], rg[1], &r)) ||
		     (rc = act(c, l, l->ract, r, &r)) ||
		     (rc = kop2(c, "Mul", r, *h, &t)) ||
		     (rc = kop2(c, "MatMul", t, rk[1], &t)) ||
		     (rc = kop2(c, "AddV2", hh, t, &hh))))
			return rc;
	}
	if ((rc = act(c, l, l->act, hh, &hh)))
		return rc;
	/* z * h + (1 - z) * hh = hh + z * (h - hh); step 0: hh - z * hh */
	if (h->node < 0)
		return (rc = kop2(c, "Mul", z, hh, &t)) ? rc :
			kop2(c, "Sub", hh, t, h);
	if ((rc = kop2(c, "Sub", *h, hh, &t)) ||
	    (rc = kop2(c, "Mul", z, t, &t)))
		return rc;
	return kop2(c, "AddV2", hh, t, h);
}

int tfk_keras_rnn_apply(struct kctx *c, struct klayer *l,
			const struct tfk_port *in, int n_in, struct kout *out)
{
	const struct tfk_tdesc *d = kdesc(c, in[0]);
	struct tfk_port xs[RNN_MAX_T], hs[RNN_MAX_T];
	struct tfk_port h = { -1, 0 }, cs = { -1, 0 };
	struct tfk_port bx = { -1, 0 }, br = { -1, 0 }, rk[2], x_in;
	int kind = kind_of(l), T, s, rc;

	if ((rc = check_input(c, l, d)))
		return rc;
	if (d->shape[2] != tfk_graph_desc(c->g, l->w[0])->shape[0]) {
		char what[96];

		snprintf(what, sizeof(what), "expected %lld features, got "
			 "%lld", (long long)tfk_graph_desc(c->g,
							   l->w[0])->shape[0],
			 (long long)d->shape[2]);
		return kcfg_bad(c, l, NULL, what);
	}
	T = (int)d->shape[1];
	if (l->use_bias) {
		bx = l->w[2];
		if (l->reset_after) {
			struct tfk_attr at[2] = { TFK_A_INT("num", 2),
						  TFK_A_INT("axis", 0) };

			if ((rc = kop(c, "Unpack", &l->w[2], 1, at, 2, &bx)))
				return rc;
			br = (struct tfk_port){ bx.node, 1 };
		}
	}
	if (kind == K_GRU && !l->reset_after &&
	    (rc = splitv(c, l->w[1], (int32_t[]){ (int32_t)(2 * l->units),
						  (int32_t)l->units }, 2, 1,
			 rk)))
		return rc;
	x_in = in[0];
	if (c->train && l->rate > 0 && (rc = input_dropout(c, l, &x_in)))
		return rc;
	if ((rc = project(c, l, x_in, bx, xs)))
		return rc;
	for (s = 0; s < T; s++) {
		struct tfk_port x = xs[l->go_back ? T - 1 - s : s], t;

		if (kind == K_LSTM) {
			rc = lstm_step(c, l, x, &h, &cs);
		} else if (kind == K_GRU) {
			rc = gru_step(c, l, x, br, rk, &h);
		} else {
			rc = 0;
			if (h.node >= 0 &&
			    ((rc = kop2(c, "MatMul", h, l->w[1], &t)) ||
			     (rc = kop2(c, "AddV2", x, t, &x))))
				return rc;
			rc = act(c, l, l->act, x, &h);
		}
		if (rc)
			return rc;
		hs[s] = h;
	}
	out->act = NULL;
	out->logits = (struct tfk_port){ -1, 0 };
	if (!l->ret_seq) {
		out->p = h;
		return 0;
	}
	return stack(c, hs, T, &out->p);
}
