/*
 * tflconvert.c - `tfk-lite convert`: a SavedModel signature -> .tflite.
 *
 * Approach: the signature is imported as the executor would run it
 * (model/import.h: pruned to the outputs, calls inlined, variables read
 * from the checkpoint into graph variables), then the graph is walked
 * once in its topological order, each node lowered to TFLite builtins
 * the way TensorFlow's converter (the MLIR TFL legalization) lowers it:
 *   MatMul [+ BiasAdd] [+ Relu|Relu6|Tanh]  -> FULLY_CONNECTED (weights
 *       transposed to [out, in], fused activation)
 *   Conv2D [+ BiasAdd] [+ FusedBatchNormV3] [+ act] -> CONV_2D (filter
 *       HWIO -> OHWI; batch norm folded into filter and bias)
 *   DepthwiseConv2dNative [+ ...] -> DEPTHWISE_CONV_2D (filter
 *       [H, W, I, M] is already [1, H, W, I*M] in memory)
 *   MaxPool, AvgPool, Reshape, Softmax, AddV2/Add, Mul, Sub, BiasAdd
 *   (alone: ADD), ConcatV2, Mean, Pad, Relu, Relu6, Sigmoid, Tanh;
 *   Identity, StopGradient and Snapshot are dropped.
 * A node is fused into its producer only when it is the producer's one
 * consumer and the producer's output is not a signature output, so the
 * converted file computes exactly the graph's values. Anything else is
 * refused by the node's name and op.
 *
 * The batch dimension (-1 in the graph) is written as TF does: shape 1,
 * shape_signature -1. Constants of the graph get one buffer each;
 * buffer 0 is the empty buffer TFLite reserves.
 *
 * Weight quantization (--quantize):
 *   float16: every float constant of an op input stored as FLOAT16 and
 *     turned back into float32 by a DEQUANTIZE op in front of its user,
 *     as TF's float16 post-training quantization writes it;
 *   dynamic: conv/dense weights (and other float constants of 1024 or
 *     more elements, TF's threshold) as INT8, symmetric, per output
 *     channel (scale = max|w| / 127, zero point 0) for CONV_2D,
 *     DEPTHWISE_CONV_2D and FULLY_CONNECTED, per tensor otherwise, each
 *     followed by a DEQUANTIZE. TF's own dynamic-range files feed the
 *     INT8 weights to hybrid FULLY_CONNECTED/CONV_2D kernels instead;
 *     `tfk-lite run` has no hybrid kernels, so we write the DEQUANTIZE
 *     form (which TFLite, Arm NN and our runtime all run: same file
 *     size, float arithmetic on the dequantized weights).
 *   int8: full integer. The float model's tensors are calibrated (min
 *     and max over --representative records fed as the SavedModel's
 *     training spec says: one executor run of the pruned float graph,
 *     every activation fetched), then every tensor gets TFLite's int8
 *     parameters (asymmetric activations, symmetric weights per channel
 *     for convs and per tensor for FULLY_CONNECTED, int32 biases at
 *     in_scale * w_scale, fixed SOFTMAX/LOGISTIC/TANH outputs, pools,
 *     reshapes and pads keeping their input's, concatenations sharing
 *     one), with QUANTIZE/DEQUANTIZE at the ends for float I/O. Rejected:
 *     calibrating from .npy inputs (the records and the training spec
 *     are what tfk-train users have), and per-channel FULLY_CONNECTED
 *     (newer TFLite only; Arm NN and TFLite's reference kernel take per
 *     tensor).
 *
 * The writer (at the bottom) is a plain pass over the collected
 * tensors/operators with the flatbuf.h builder, children before
 * parents; slots are schema.fbs's field positions (see tflite.h).
 *
 * --report / --eval (tflreport.c): after the quantized file is written,
 * the signature is converted once more without quantization, into
 * memory, and both models are run on the records there.
 */
#include "model/lite.h"

#include "graph/graph.h"
#include "graph/op.h"
#include "model/import.h"
#include "format/savedmodel.h"
#include "graph/exec.h"
#include "nn/feed.h"
#include "nn/model.h"
#include "nn/spec.h"
#include "io/out.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* BuiltinOptions union numbers (schema.fbs order, NONE = 0). */
enum {
	OPT_CONV2D = 1, OPT_DEPTHWISE = 2, OPT_POOL2D = 5, OPT_FC = 8,
	OPT_SOFTMAX = 9, OPT_CONCAT = 10, OPT_ADD = 11, OPT_RESHAPE = 17,
	OPT_MUL = 21, OPT_PAD = 22, OPT_REDUCER = 27, OPT_SUB = 28,
	OPT_DEQUANTIZE = 38
};


/* TF's threshold for dynamic-range quantization of a constant
 * (lite/tools/optimize: kWeightsMinNumElementsDefault). */
#define DYN_MIN_ELEMS 1024

struct ctensor {
	char *name;
	uint8_t type;
	int rank;
	int64_t shape[TFK_MAX_RANK];
	int has_sig;
	int64_t sig[TFK_MAX_RANK];
	uint32_t buffer;	/* 0: none */
	int nq;			/* quantization: 0 none, else n scales */
	int qaxis;
	float *scale;
	int64_t *zp;
};

struct cbuffer {
	uint8_t *data;
	size_t n;
};

struct cop {
	int code;
	int version;
	int n_in, n_out;
	int32_t in[8];
	int32_t out[2];
	int opt_type;
	/* options, only those of opt_type used */
	int act, padding, stride_w, stride_h, dil_w, dil_h;
	int filter_w, filter_h, depth_mult, axis, keep_dims;
	float beta;
	int n_new_shape;
	int32_t new_shape[TFK_MAX_RANK];
};

struct conv {
	const struct tfk_graph *g;
	int quant;
	int n_nodes;
	int *tensor;		/* node -> tensor index of output 0, -1 */
	int *uses;		/* consumers of output 0 (+1 per named output) */
	int *done;		/* fused into an earlier node's operator */
	int n_t, cap_t;
	struct ctensor *t;
	int n_b, cap_b;
	struct cbuffer *b;
	int n_op, cap_op;
	struct cop *op;
	struct tfk_err *err;
};

/* Growing arrays --------------------------------------------------------- */

static int grow(void **p, int *cap, int need, size_t size)
{
	int nc;
	void *q;

	if (need <= *cap)
		return 0;
	nc = *cap ? *cap * 2 : 16;
	while (nc < need)
		nc *= 2;
	q = tfk_realloc(*p, (size_t)nc * size);
	if (!q)
		return TFK_ENOMEM;
	*p = q;
	*cap = nc;
	return 0;
}

static int oom(struct conv *c)
{
	return tfk_errf(c->err, TFK_ENOMEM, "out of memory");
}

/* A buffer holding a copy of p[0..n); its index, or < 0. */
static int add_buffer(struct conv *c, const void *p, size_t n)
{
	struct cbuffer *b;

	if (grow((void **)&c->b, &c->cap_b, c->n_b + 1, sizeof(*c->b)))
		return oom(c);
	b = &c->b[c->n_b];
	b->data = tfk_malloc(n ? n : 1);
	if (!b->data)
		return oom(c);
	memcpy(b->data, p, n);
	b->n = n;
	return c->n_b++;
}

static int tfl_type(enum tfk_dtype dt)
{
	switch (dt) {
	case TFK_DT_FLOAT: return TFK_TFL_FLOAT32;
	case TFK_DT_HALF: return TFK_TFL_FLOAT16;
	case TFK_DT_INT32: return TFK_TFL_INT32;
	case TFK_DT_UINT8: return TFK_TFL_UINT8;
	case TFK_DT_INT64: return TFK_TFL_INT64;
	case TFK_DT_STRING: return TFK_TFL_STRING;
	case TFK_DT_BOOL: return TFK_TFL_BOOL;
	case TFK_DT_INT16: return TFK_TFL_INT16;
	case TFK_DT_INT8: return TFK_TFL_INT8;
	case TFK_DT_DOUBLE: return TFK_TFL_FLOAT64;
	default: return -1;
	}
}

/* A new tensor named name of type and shape (dims -1: batch, written as
 * 1 with a shape_signature of -1). Its index, or < 0. */
static int add_tensor(struct conv *c, const char *name, int type, int rank,
		      const int64_t *shape)
{
	struct ctensor *t;
	int i;

	if (rank < 0)
		return tfk_errf(c->err, TFK_EINVAL, "tensor '%s' has an unknown "
				"rank: TFLite tensors need one", name);
	if (grow((void **)&c->t, &c->cap_t, c->n_t + 1, sizeof(*c->t)))
		return oom(c);
	t = &c->t[c->n_t];
	memset(t, 0, sizeof(*t));
	t->name = tfk_strdup(name);
	if (!t->name)
		return oom(c);
	t->type = (uint8_t)type;
	t->rank = rank;
	for (i = 0; i < rank; i++) {
		t->shape[i] = shape[i] < 0 ? 1 : shape[i];
		t->sig[i] = shape[i];
		if (shape[i] < 0)
			t->has_sig = 1;
	}
	return c->n_t++;
}

static int add_op(struct conv *c, int code, struct cop **out)
{
	if (grow((void **)&c->op, &c->cap_op, c->n_op + 1, sizeof(*c->op)))
		return oom(c);
	*out = &c->op[c->n_op++];
	memset(*out, 0, sizeof(**out));
	(*out)->code = code;
	(*out)->version = 1;
	return 0;
}

/* Constants ------------------------------------------------------------- */

/* IEEE binary16 of f, round to nearest even (as numpy's astype). */
static uint16_t to_half(float f)
{
	uint32_t x, sign, mant;
	int exp;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000;
	exp = (int)((x >> 23) & 0xff);
	mant = x & 0x7fffff;
	if (exp == 0xff)
		return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
	exp -= 127 - 15;
	if (exp >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		uint32_t m, r, half;
		int shift;

		if (exp < -10)
			return (uint16_t)sign;
		m = mant | 0x800000;
		shift = 14 - exp;
		r = m >> shift;
		half = 1u << (shift - 1);
		if ((m & ((half << 1) - 1)) > half ||
		    ((m & ((half << 1) - 1)) == half && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
	{
		uint32_t r = (uint32_t)exp << 10 | mant >> 13;
		uint32_t rest = mant & 0x1fff;

		if (rest > 0x1000 || (rest == 0x1000 && (r & 1)))
			r++;	/* may carry into the exponent: still right */
		return (uint16_t)(sign | r);
	}
}

/*
 * A constant of dtype/shape with data p into a tensor named name; float
 * constants go through the weight quantization of c->quant (qaxis: the
 * output-channel axis for per-channel int8, -1 per tensor). Returns the
 * index of the tensor ops should read (float32 for float constants),
 * or < 0.
 */
static int add_const(struct conv *c, const char *name, enum tfk_dtype dt,
		     int rank, const int64_t *shape, const void *p,
		     int qaxis)
{
	int64_t n = 1;
	int i, k, type = tfl_type(dt), ti, qi;
	struct cop *op;
	char nm[512];

	for (i = 0; i < rank; i++)
		n *= shape[i];
	if (type < 0 || dt == TFK_DT_STRING)
		return tfk_errf(c->err, TFK_EINVAL, "constant '%s': %s "
				"constants are not supported", name,
				tfk_dtype_name(dt));
	if (dt != TFK_DT_FLOAT || c->quant == TFK_LITE_FLOAT || c->quant == TFK_LITE_INT8 ||
	    (c->quant == TFK_LITE_DYNAMIC && n < DYN_MIN_ELEMS)) {
		k = add_buffer(c, p, (size_t)n * tfk_dtype_size(dt));
		if (k < 0)
			return k;
		ti = add_tensor(c, name, type, rank, shape);
		if (ti >= 0)
			c->t[ti].buffer = (uint32_t)k;
		return ti;
	}
	snprintf(nm, sizeof(nm), "%s%s", name, c->quant == TFK_LITE_FLOAT16 ?
		 "_fp16" : "_int8");
	if (c->quant == TFK_LITE_FLOAT16) {
		uint16_t *h = tfk_malloc((size_t)n * 2 + 1);

		if (!h)
			return oom(c);
		for (i = 0; i < n; i++)
			h[i] = to_half(((const float *)p)[i]);
		k = add_buffer(c, h, (size_t)n * 2);
		tfk_free(h);
		if (k < 0)
			return k;
		qi = add_tensor(c, nm, TFK_TFL_FLOAT16, rank, shape);
		if (qi < 0)
			return qi;
		c->t[qi].buffer = (uint32_t)k;
	} else {
		int nch = qaxis >= 0 ? (int)shape[qaxis] : 1;
		int64_t inner = 1, j;
		const float *w = p;
		int8_t *q;
		struct ctensor *t;

		for (i = qaxis + 1; qaxis >= 0 && i < rank; i++)
			inner *= shape[i];
		if (qaxis < 0)
			inner = n;
		q = tfk_malloc((size_t)n + 1);
		if (!q)
			return oom(c);
		qi = add_tensor(c, nm, TFK_TFL_INT8, rank, shape);
		if (qi < 0) {
			tfk_free(q);
			return qi;
		}
		t = &c->t[qi];
		t->nq = nch;
		t->qaxis = qaxis < 0 ? 0 : qaxis;
		t->scale = tfk_calloc((size_t)nch, sizeof(float));
		t->zp = tfk_calloc((size_t)nch, sizeof(int64_t));
		if (!t->scale || !t->zp) {
			tfk_free(q);
			return oom(c);
		}
		/* symmetric, narrow range [-127, 127], as TF's
		 * SymmetricPerChannelQuantizeValues */
		for (k = 0; k < nch; k++) {
			float mx = 0, s;

			for (j = 0; j < n; j++)
				if ((qaxis < 0 || (j / inner) % nch == k) &&
				    fabsf(w[j]) > mx)
					mx = fabsf(w[j]);
			s = mx > 0 ? mx / 127.0f : 1.0f;
			t->scale[k] = s;
			for (j = 0; j < n; j++) {
				float v;

				if (qaxis >= 0 && (j / inner) % nch != k)
					continue;
				v = roundf(w[j] / s);
				q[j] = (int8_t)(v > 127 ? 127 : v < -127 ?
						-127 : v);
			}
		}
		k = add_buffer(c, q, (size_t)n);
		tfk_free(q);
		if (k < 0)
			return k;
		c->t[qi].buffer = (uint32_t)k;
	}
	ti = add_tensor(c, name, TFK_TFL_FLOAT32, rank, shape);
	if (ti < 0 || (k = add_op(c, TFK_TFL_DEQUANTIZE, &op)))
		return ti < 0 ? ti : k;
	/* DEQUANTIZE version 3 takes FLOAT16 input, 2 INT8 (TF's
	 * op_version.cc) */
	op->version = c->quant == TFK_LITE_FLOAT16 ? 3 : 2;
	op->n_in = 1;
	op->in[0] = qi;
	op->n_out = 1;
	op->out[0] = ti;
	return ti;
}

/* Graph walking ---------------------------------------------------------- */

static const struct tfk_node *node(const struct conv *c, int i)
{
	return tfk_graph_node(c->g, i);
}

static int is_op(const struct tfk_node *n, const char *op)
{
	return !strcmp(n->op->name, op);
}

/* The value of port p when it is a constant (Const or a variable read
 * from the checkpoint), else NULL. */
static const struct tfk_tensor *const_of(struct conv *c, struct tfk_port p)
{
	const struct tfk_node *n = node(c, p.node);
	const struct tfk_tensor *v;

	while (n && (is_op(n, "Identity") || is_op(n, "StopGradient") ||
		     is_op(n, "Snapshot"))) {
		p = n->inputs[0];
		n = node(c, p.node);
	}
	if (!n)
		return NULL;
	if ((v = tfk_graph_const_value(c->g, p)))
		return v;
	if (n->variable >= 0)
		return tfk_graph_var_at((struct tfk_graph *)c->g, n->variable,
					NULL);
	return NULL;
}

/* The tensor index holding port p (output 0 of a lowered node, or a
 * constant made a tensor on first use). */
static int tensor_of(struct conv *c, struct tfk_port p)
{
	const struct tfk_node *n = node(c, p.node);
	const struct tfk_tensor *v;

	if (p.index != 0)
		return tfk_errf(c->err, TFK_EINVAL, "node %s: output %d is "
				"used: only first outputs are supported",
				n->name, p.index);
	if (c->tensor[p.node] >= 0)
		return c->tensor[p.node];
	if ((v = const_of(c, p))) {
		int ti = add_const(c, n->name, v->dtype, v->rank, v->shape,
				   v->data, -1);

		if (ti >= 0)
			c->tensor[p.node] = ti;
		return ti;
	}
	return tfk_errf(c->err, TFK_EINVAL, "node %s: op %s has no TFLite "
			"tensor", n->name, n->op->name);
}

/* The output tensor of node i (from the graph's inferred shape). */
static int out_tensor(struct conv *c, int i)
{
	const struct tfk_node *n = node(c, i);
	const struct tfk_tdesc *d = &n->outputs[0];
	int type = tfl_type(d->dtype), ti;

	if (type < 0)
		return tfk_errf(c->err, TFK_EINVAL, "node %s: %s outputs are "
				"not supported", n->name,
				tfk_dtype_name(d->dtype));
	ti = add_tensor(c, n->name, type, d->rank, d->shape);
	if (ti >= 0)
		c->tensor[i] = ti;
	return ti;
}

/* The one consumer of node i's output 0 when it may be fused into i's
 * operator (i has one use, not a signature output) and has op `op`
 * reading i as input `which` (-1: any); else -1. */
static int fusable(struct conv *c, int i, const char *op, int which)
{
	int j, k;

	if (c->uses[i] != 1)
		return -1;
	for (j = i + 1; j < c->n_nodes; j++) {
		const struct tfk_node *n = node(c, j);

		for (k = 0; k < n->n_inputs; k++)
			if (n->inputs[k].node == i) {
				if (!is_op(n, op) || n->inputs[k].index ||
				    (which >= 0 && k != which))
					return -1;
				return j;
			}
	}
	return -1;
}

/* The fused activation after node *last (Relu, Relu6, Tanh): sets
 * *last to the activation node. */
static int fuse_act(struct conv *c, int *last)
{
	int j;

	if ((j = fusable(c, *last, "Relu", 0)) >= 0) {
		*last = j;
		return TFK_TFL_ACT_RELU;
	}
	if ((j = fusable(c, *last, "Relu6", 0)) >= 0) {
		*last = j;
		return TFK_TFL_ACT_RELU6;
	}
	/* int8: TFLite's integer kernels have no fused TANH (their
	 * activation range would silently skip it): a TANH op follows */
	if (c->quant != TFK_LITE_INT8 && (j = fusable(c, *last, "Tanh", 0)) >= 0) {
		*last = j;
		return TFK_TFL_ACT_TANH;
	}
	return TFK_TFL_ACT_NONE;
}

/* A constant bias following node *last (BiasAdd, or AddV2/Add of a
 * constant vector of n): its values into b (added). */
static int fuse_bias(struct conv *c, int *last, float *b, int64_t n)
{
	static const char *ops[] = { "BiasAdd", "AddV2", "Add" };
	int j, k, s;

	for (k = 0; k < 3; k++) {
		const struct tfk_tensor *v;
		const struct tfk_node *nd;

		if ((j = fusable(c, *last, ops[k], -1)) < 0)
			continue;
		nd = node(c, j);
		s = nd->inputs[0].node == *last ? 1 : 0;
		if (k == 0 && s != 1)
			continue;
		v = const_of(c, nd->inputs[s]);
		if (!v || v->dtype != TFK_DT_FLOAT || v->rank != 1 ||
		    v->shape[0] != n)
			continue;
		for (s = 0; s < n; s++)
			b[s] += ((const float *)v->data)[s];
		*last = j;
		return 1;
	}
	return 0;
}

/* FusedBatchNormV3 (inference, NHWC) after a conv: fold into filter w
 * (n_out channels last-fastest as OHWI: w[o * per + r]) and bias b. */
static int fuse_bn(struct conv *c, int *last, float *w, int64_t per,
		   float *b, int64_t n_out, int ch_last, int64_t inner)
{
	const struct tfk_tensor *s, *o, *m, *v;
	const struct tfk_node *nd;
	float eps;
	int64_t k, r;
	int j;

	if ((j = fusable(c, *last, "FusedBatchNormV3", 0)) < 0 &&
	    (j = fusable(c, *last, "FusedBatchNorm", 0)) < 0)
		return 0;
	nd = node(c, j);
	if (tfk_node_attr_b(nd, "is_training", 0))
		return 0;
	s = const_of(c, nd->inputs[1]);
	o = const_of(c, nd->inputs[2]);
	m = const_of(c, nd->inputs[3]);
	v = const_of(c, nd->inputs[4]);
	if (!s || !o || !m || !v)
		return 0;
	if (s->dtype != TFK_DT_FLOAT || o->dtype != TFK_DT_FLOAT ||
	    m->dtype != TFK_DT_FLOAT || v->dtype != TFK_DT_FLOAT ||
	    tfk_tensor_numel(s) != n_out || tfk_tensor_numel(o) != n_out ||
	    tfk_tensor_numel(m) != n_out || tfk_tensor_numel(v) != n_out)
		return 0;
	eps = tfk_node_attr_f(nd, "epsilon", 0.001f);
	for (k = 0; k < n_out; k++) {
		float f = ((const float *)s->data)[k] /
			sqrtf(((const float *)v->data)[k] + eps);

		if (ch_last) {	/* depthwise [1, H, W, C]: channel fastest */
			for (r = 0; r < inner; r++)
				w[r * n_out + k] *= f;
		} else {
			for (r = 0; r < per; r++)
				w[k * per + r] *= f;
		}
		b[k] = (b[k] - ((const float *)m->data)[k]) * f +
			((const float *)o->data)[k];
	}
	*last = j;
	return 1;
}

/* Lowering ---------------------------------------------------------------- */

static int bad(struct conv *c, int i, const char *what)
{
	const struct tfk_node *n = node(c, i);

	return tfk_errf(c->err, TFK_EINVAL, "node %s: op %s: %s", n->name,
			n->op->name, what);
}

/* padding attr: SAME 0, VALID 1 (TFLite's Padding); -1 otherwise. */
static int padding_of(const struct tfk_node *n)
{
	const struct tfk_attr_value *p = tfk_node_attr(n, "padding");

	if (!p || p->kind != TFK_ATTR_STRING)
		return -1;
	if (p->s.len == 4 && !memcmp(p->s.p, "SAME", 4))
		return 0;
	if (p->s.len == 5 && !memcmp(p->s.p, "VALID", 5))
		return 1;
	return -1;
}

/* list attr name of 4 ints with [0] == [3] == 1 into v; 0 or -1. */
static int nhwc4(const struct tfk_node *n, const char *name, int64_t *v,
		 int64_t def)
{
	const struct tfk_attr_value *a = tfk_node_attr(n, name);
	int k;

	if (!a || a->kind != TFK_ATTR_LIST_INT || !a->list.n) {
		for (k = 0; k < 4; k++)
			v[k] = def;
		return 0;
	}
	if (a->list.n != 4 || a->list.i[0] != 1 || a->list.i[3] != 1)
		return -1;
	for (k = 0; k < 4; k++)
		v[k] = a->list.i[k];
	return 0;
}

static int data_format_ok(const struct tfk_node *n)
{
	const struct tfk_attr_value *a = tfk_node_attr(n, "data_format");

	return !a || a->kind != TFK_ATTR_STRING ||
		(a->s.len == 4 && !memcmp(a->s.p, "NHWC", 4));
}

/* Mark nodes first+1..last of a fused chain done, their tensor the
 * chain's output. */
static void chain_done(struct conv *c, int first, int last, int ti)
{
	int j;

	c->tensor[first] = ti;
	for (j = first + 1; j <= last; j++) {
		const struct tfk_node *n = node(c, j);
		int k;

		for (k = 0; k < n->n_inputs; k++)
			if (n->inputs[k].node == first ||
			    (c->done[n->inputs[k].node] &&
			     c->tensor[n->inputs[k].node] == ti))
				break;
		if (k < n->n_inputs || j == last) {
			c->done[j] = 1;
			c->tensor[j] = ti;
		}
	}
}

/*
 * The weight and bias constants of node i (NODE/wname, NODE/bias; qaxis
 * the weights' per-channel axis, as add_const) and the operator code
 * reading x with them into the output of the chain ending at last,
 * with fused activation act: 0 and *op, whose options the caller fills
 * before chain_done(c, i, last, *yi); or < 0.
 */
static int add_xwb_op(struct conv *c, int i, int last, int code, int x,
		      const char *wname, int wrank, const int64_t *wshape,
		      const float *wt, int qaxis, const float *b, int64_t nb,
		      int act, struct cop **op, int *yi)
{
	const struct tfk_node *n = node(c, i);
	char nm[512];
	int wi, bi;

	snprintf(nm, sizeof(nm), "%s/%s", n->name, wname);
	if ((wi = add_const(c, nm, TFK_DT_FLOAT, wrank, wshape, wt,
			    qaxis)) < 0)
		return wi;
	snprintf(nm, sizeof(nm), "%s/bias", n->name);
	if ((bi = add_const(c, nm, TFK_DT_FLOAT, 1, &nb, b, -1)) < 0)
		return bi;
	if ((*yi = out_tensor(c, last)) < 0)
		return *yi;
	if (add_op(c, code, op))
		return TFK_ENOMEM;
	(*op)->act = act;
	(*op)->n_in = 3;
	(*op)->in[0] = x;
	(*op)->in[1] = wi;
	(*op)->in[2] = bi;
	(*op)->n_out = 1;
	(*op)->out[0] = *yi;
	return 0;
}

static int lower_matmul(struct conv *c, int i)
{
	const struct tfk_node *n = node(c, i);
	const struct tfk_tensor *w = const_of(c, n->inputs[1]);
	int64_t K, N, k, o, sh[2];
	float *wt = NULL, *b = NULL;
	int last = i, x, yi, rc;
	struct cop *op;

	if (tfk_node_attr_b(n, "transpose_a", 0))
		return bad(c, i, "transpose_a is not supported");
	if (!w || w->dtype != TFK_DT_FLOAT || w->rank != 2)
		return bad(c, i, "the second input must be a constant float "
			   "matrix");
	if ((x = tensor_of(c, n->inputs[0])) < 0)
		return x;
	if (tfk_node_attr_b(n, "transpose_b", 0)) {
		N = w->shape[0];
		K = w->shape[1];
	} else {
		K = w->shape[0];
		N = w->shape[1];
	}
	wt = tfk_malloc((size_t)(K * N) * sizeof(float) + 1);
	b = tfk_calloc((size_t)N + 1, sizeof(float));
	if (!wt || !b) {
		rc = oom(c);
		goto out;
	}
	/* FULLY_CONNECTED weights are [out, in] */
	for (o = 0; o < N; o++)
		for (k = 0; k < K; k++)
			wt[o * K + k] = tfk_node_attr_b(n, "transpose_b", 0) ?
				((const float *)w->data)[o * K + k] :
				((const float *)w->data)[k * N + o];
	fuse_bias(c, &last, b, N);
	rc = fuse_act(c, &last);
	sh[0] = N;
	sh[1] = K;
	if ((rc = add_xwb_op(c, i, last, TFK_TFL_FULLY_CONNECTED, x,
			     "weights", 2, sh, wt, 0, b, N, rc, &op, &yi)))
		goto out;
	op->opt_type = OPT_FC;
	chain_done(c, i, last, yi);
	rc = 0;
out:
	tfk_free(wt);
	tfk_free(b);
	return rc;
}

static int lower_conv(struct conv *c, int i, int depthwise)
{
	const struct tfk_node *n = node(c, i);
	const struct tfk_tensor *w = const_of(c, n->inputs[1]);
	int64_t H, W, I, O, M = 1, st[4], dl[4], h, ww, ii, o, sh[4];
	float *wt = NULL, *b = NULL;
	int last = i, x, yi, rc, pad = padding_of(n);
	struct cop *op;

	if (pad < 0)
		return bad(c, i, "padding must be SAME or VALID");
	if (!data_format_ok(n))
		return bad(c, i, "only NHWC is supported");
	if (nhwc4(n, "strides", st, 1) || nhwc4(n, "dilations", dl, 1))
		return bad(c, i, "strides/dilations must be [1, h, w, 1]");
	if (!w || w->dtype != TFK_DT_FLOAT || w->rank != 4)
		return bad(c, i, "the filter must be a constant float tensor");
	if ((x = tensor_of(c, n->inputs[0])) < 0)
		return x;
	H = w->shape[0];
	W = w->shape[1];
	I = w->shape[2];
	if (depthwise) {
		M = w->shape[3];
		O = I * M;
	} else {
		O = w->shape[3];
	}
	wt = tfk_malloc((size_t)(H * W * I * (depthwise ? M : O)) *
			sizeof(float) + 1);
	b = tfk_calloc((size_t)O + 1, sizeof(float));
	if (!wt || !b) {
		rc = oom(c);
		goto out;
	}
	if (depthwise) {
		/* [H, W, I, M] is [1, H, W, I*M] byte for byte */
		memcpy(wt, w->data, (size_t)(H * W * O) * sizeof(float));
	} else {
		for (o = 0; o < O; o++)
			for (h = 0; h < H; h++)
				for (ww = 0; ww < W; ww++)
					for (ii = 0; ii < I; ii++)
						wt[((o * H + h) * W + ww) * I +
						   ii] = ((const float *)
							  w->data)[((h * W + ww)
								    * I + ii) *
								   O + o];
	}
	fuse_bias(c, &last, b, O);
	if (depthwise)
		fuse_bn(c, &last, wt, 0, b, O, 1, H * W);
	else
		fuse_bn(c, &last, wt, H * W * I, b, O, 0, 0);
	rc = fuse_act(c, &last);
	if (depthwise) {
		sh[0] = 1;
		sh[1] = H;
		sh[2] = W;
		sh[3] = O;
	} else {
		sh[0] = O;
		sh[1] = H;
		sh[2] = W;
		sh[3] = I;
	}
	if ((rc = add_xwb_op(c, i, last, depthwise ?
			     TFK_TFL_DEPTHWISE_CONV_2D : TFK_TFL_CONV_2D, x,
			     "filter", 4, sh, wt, depthwise ? 3 : 0, b, O, rc,
			     &op, &yi)))
		goto out;
	op->opt_type = depthwise ? OPT_DEPTHWISE : OPT_CONV2D;
	op->padding = pad;
	op->stride_h = (int)st[1];
	op->stride_w = (int)st[2];
	op->dil_h = (int)dl[1];
	op->dil_w = (int)dl[2];
	op->depth_mult = (int)M;
	chain_done(c, i, last, yi);
	rc = 0;
out:
	tfk_free(wt);
	tfk_free(b);
	return rc;
}

static int lower_pool(struct conv *c, int i, int code)
{
	const struct tfk_node *n = node(c, i);
	int64_t ks[4], st[4];
	int x, y, pad = padding_of(n);
	struct cop *op;

	if (pad < 0)
		return bad(c, i, "padding must be SAME or VALID");
	if (!data_format_ok(n))
		return bad(c, i, "only NHWC is supported");
	if (nhwc4(n, "ksize", ks, 1) || nhwc4(n, "strides", st, 1))
		return bad(c, i, "ksize/strides must be [1, h, w, 1]");
	if ((x = tensor_of(c, n->inputs[0])) < 0 || (y = out_tensor(c, i)) < 0)
		return x < 0 ? x : y;
	if (add_op(c, code, &op))
		return TFK_ENOMEM;
	op->opt_type = OPT_POOL2D;
	op->padding = pad;
	op->stride_h = (int)st[1];
	op->stride_w = (int)st[2];
	op->filter_h = (int)ks[1];
	op->filter_w = (int)ks[2];
	op->n_in = 1;
	op->in[0] = x;
	op->n_out = 1;
	op->out[0] = y;
	return 0;
}

/* An int32 copy of a constant int32/int64 vector or matrix as a tensor
 * named after node i's input k; its index, or < 0. */
static int int_const(struct conv *c, int i, int k, int32_t *vals,
		     int *n_vals)
{
	const struct tfk_node *n = node(c, i);
	const struct tfk_tensor *v = const_of(c, n->inputs[k]);
	int64_t m, j;
	int32_t *q;
	int ti;

	if (!v || (v->dtype != TFK_DT_INT32 && v->dtype != TFK_DT_INT64))
		return bad(c, i, "needs a constant integer input");
	m = tfk_tensor_numel(v);
	q = tfk_malloc((size_t)m * 4 + 4);
	if (!q)
		return oom(c);
	for (j = 0; j < m; j++)
		q[j] = v->dtype == TFK_DT_INT32 ?
			((const int32_t *)v->data)[j] :
			(int32_t)((const int64_t *)v->data)[j];
	if (vals && n_vals) {
		*n_vals = m <= TFK_MAX_RANK ? (int)m : 0;
		for (j = 0; j < *n_vals; j++)
			vals[j] = q[j];
	}
	ti = add_const(c, node(c, n->inputs[k].node)->name, TFK_DT_INT32,
		       v->rank, v->shape, q, -1);
	tfk_free(q);
	return ti;
}

/* Simple ops: the first k_in inputs as tensors (ints[k] set: input k
 * as an int32 constant instead), one output; *opp the new operator
 * (valid until the next add_op). */
static int lower_simple(struct conv *c, int i, int code, int k_in,
			const int *ints, struct cop **opp)
{
	const struct tfk_node *n = node(c, i);
	int k, y, in[8];
	struct cop *op;

	if (k_in > 8)
		return bad(c, i, "too many inputs");
	/* inputs first: a constant may add its DEQUANTIZE operator, which
	 * must come before this one */
	for (k = 0; k < k_in; k++) {
		in[k] = ints && ints[k] ? int_const(c, i, k, NULL, NULL) :
			tensor_of(c, n->inputs[k]);
		if (in[k] < 0)
			return in[k];
	}
	if ((y = out_tensor(c, i)) < 0)
		return y;
	if (add_op(c, code, &op))
		return TFK_ENOMEM;
	op->n_in = k_in;
	for (k = 0; k < k_in; k++)
		op->in[k] = in[k];
	op->n_out = 1;
	op->out[0] = y;
	*opp = op;
	return 0;
}

static int lower_node(struct conv *c, int i)
{
	const struct tfk_node *n = node(c, i);
	const char *o = n->op->name;
	struct cop *op;
	int rc;
	static const int second_int[2] = { 0, 1 };

	if (is_op(n, "Placeholder") || is_op(n, "Const") || n->variable >= 0)
		return 0;	/* inputs are made by the caller, constants
				 * on first use */
	if (is_op(n, "Identity") || is_op(n, "StopGradient") ||
	    is_op(n, "Snapshot")) {
		if (const_of(c, (struct tfk_port){ i, 0 }))
			return 0;
		rc = tensor_of(c, n->inputs[0]);
		if (rc >= 0)
			c->tensor[i] = rc;
		return rc < 0 ? rc : 0;
	}
	if (is_op(n, "MatMul"))
		return lower_matmul(c, i);
	if (is_op(n, "Conv2D"))
		return lower_conv(c, i, 0);
	if (is_op(n, "DepthwiseConv2dNative"))
		return lower_conv(c, i, 1);
	if (is_op(n, "MaxPool"))
		return lower_pool(c, i, TFK_TFL_MAX_POOL_2D);
	if (is_op(n, "AvgPool"))
		return lower_pool(c, i, TFK_TFL_AVERAGE_POOL_2D);
	if (is_op(n, "Reshape")) {
		int32_t ns[TFK_MAX_RANK];
		int nn = 0, k;

		if ((rc = lower_simple(c, i, TFK_TFL_RESHAPE, 2, second_int,
				       &op)))
			return rc;
		{
			const struct tfk_tensor *sv =
				const_of(c, n->inputs[1]);

			nn = (int)tfk_tensor_numel(sv);
			if (sv->rank != 1 || nn > TFK_MAX_RANK)
				return bad(c, i, "the shape must be a vector");
			for (k = 0; k < nn; k++)
				ns[k] = sv->dtype == TFK_DT_INT32 ?
					((const int32_t *)sv->data)[k] :
					(int32_t)((const int64_t *)
						  sv->data)[k];
		}
		op->opt_type = OPT_RESHAPE;
		op->n_new_shape = nn;
		for (k = 0; k < nn; k++)
			op->new_shape[k] = ns[k];
		return 0;
	}
	if (is_op(n, "Softmax")) {
		if ((rc = lower_simple(c, i, TFK_TFL_SOFTMAX, 1, NULL, &op)))
			return rc;
		op->opt_type = OPT_SOFTMAX;
		op->beta = 1.0f;
		return 0;
	}
	if (is_op(n, "AddV2") || is_op(n, "Add") || is_op(n, "BiasAdd")) {
		if (!data_format_ok(n))
			return bad(c, i, "only NHWC is supported");
		if ((rc = lower_simple(c, i, TFK_TFL_ADD, 2, NULL, &op)))
			return rc;
		op->opt_type = OPT_ADD;
		return 0;
	}
	if (is_op(n, "Mul") || is_op(n, "Sub")) {
		int sub = is_op(n, "Sub");

		if ((rc = lower_simple(c, i, sub ? TFK_TFL_SUB : TFK_TFL_MUL,
				       2, NULL, &op)))
			return rc;
		op->opt_type = sub ? OPT_SUB : OPT_MUL;
		return 0;
	}
	if (is_op(n, "ConcatV2")) {
		const struct tfk_tensor *ax;
		int nv = n->n_inputs - 1;

		ax = const_of(c, n->inputs[nv]);
		if (!ax || tfk_tensor_numel(ax) != 1 ||
		    (ax->dtype != TFK_DT_INT32 && ax->dtype != TFK_DT_INT64))
			return bad(c, i, "the axis must be a constant integer");
		if ((rc = lower_simple(c, i, TFK_TFL_CONCATENATION, nv, NULL,
				       &op)))
			return rc;
		op->opt_type = OPT_CONCAT;
		op->axis = ax->dtype == TFK_DT_INT32 ?
			*(const int32_t *)ax->data :
			(int)*(const int64_t *)ax->data;
		return 0;
	}
	if (is_op(n, "Mean")) {
		if ((rc = lower_simple(c, i, TFK_TFL_MEAN, 2, second_int, &op)))
			return rc;
		op->opt_type = OPT_REDUCER;
		op->keep_dims = tfk_node_attr_b(n, "keep_dims", 0);
		return 0;
	}
	if (is_op(n, "Pad")) {
		if ((rc = lower_simple(c, i, TFK_TFL_PAD, 2, second_int, &op)))
			return rc;
		op->opt_type = OPT_PAD;
		return 0;
	}
	if (is_op(n, "Relu"))
		return lower_simple(c, i, TFK_TFL_RELU, 1, NULL, &op);
	if (is_op(n, "Relu6"))
		return lower_simple(c, i, TFK_TFL_RELU6, 1, NULL, &op);
	if (is_op(n, "Sigmoid"))
		return lower_simple(c, i, TFK_TFL_LOGISTIC, 1, NULL, &op);
	if (is_op(n, "Tanh"))
		return lower_simple(c, i, TFK_TFL_TANH, 1, NULL, &op);
	return tfk_errf(c->err, TFK_EINVAL, "node %s: op %s is not supported "
			"by convert", n->name, o);
}

/* Writer ------------------------------------------------------------------ */

static const char *min_runtime(const struct cop *op)
{
	/* TF's lite/tools/versioning/runtime_version.cc, for the versions
	 * we write */
	switch (op->code) {
	case TFK_TFL_SUB: case TFK_TFL_MEAN:
		return op->version > 1 ? "1.14.0" : "1.6.0";	/* v2: int8 */
	case TFK_TFL_TANH: case TFK_TFL_LOGISTIC:
		return "1.14.0";
	case TFK_TFL_DEQUANTIZE:
		return op->version == 3 ? "1.15.0" : "1.14.0";
	case TFK_TFL_QUANTIZE:
		return "1.14.0";
	default:
		/* the int8 versions (2, 3, 4) of the ops we write */
		return op->version > 1 ? "1.14.0" : "1.5.0";
	}
}

static int vcmp(const char *a, const char *b)
{
	while (*a || *b) {
		long x = strtol(a, (char **)&a, 10), y = strtol(b, (char **)&b,
							       10);

		if (x != y)
			return x < y ? -1 : 1;
		if (*a == '.')
			a++;
		if (*b == '.')
			b++;
		if (!*a && !*b)
			break;
	}
	return 0;
}

static uint32_t ivec(struct tfk_fbb *b, const int64_t *v, int n)
{
	int32_t a[TFK_MAX_RANK];
	int k;

	for (k = 0; k < n; k++)
		a[k] = (int32_t)v[k];
	return tfk_fbb_vector(b, a, (uint32_t)n, 4);
}

static uint32_t write_options(struct tfk_fbb *b, const struct cop *op)
{
	switch (op->opt_type) {
	case OPT_CONV2D:
		tfk_fbb_start(b);
		tfk_fbb_add_u8(b, 0, (uint8_t)op->padding);
		tfk_fbb_add_i32(b, 1, op->stride_w);
		tfk_fbb_add_i32(b, 2, op->stride_h);
		tfk_fbb_add_u8(b, 3, (uint8_t)op->act);
		tfk_fbb_add_i32(b, 4, op->dil_w);
		tfk_fbb_add_i32(b, 5, op->dil_h);
		return tfk_fbb_end(b);
	case OPT_DEPTHWISE:
		tfk_fbb_start(b);
		tfk_fbb_add_u8(b, 0, (uint8_t)op->padding);
		tfk_fbb_add_i32(b, 1, op->stride_w);
		tfk_fbb_add_i32(b, 2, op->stride_h);
		tfk_fbb_add_i32(b, 3, op->depth_mult);
		tfk_fbb_add_u8(b, 4, (uint8_t)op->act);
		tfk_fbb_add_i32(b, 5, op->dil_w);
		tfk_fbb_add_i32(b, 6, op->dil_h);
		return tfk_fbb_end(b);
	case OPT_POOL2D:
		tfk_fbb_start(b);
		tfk_fbb_add_u8(b, 0, (uint8_t)op->padding);
		tfk_fbb_add_i32(b, 1, op->stride_w);
		tfk_fbb_add_i32(b, 2, op->stride_h);
		tfk_fbb_add_i32(b, 3, op->filter_w);
		tfk_fbb_add_i32(b, 4, op->filter_h);
		tfk_fbb_add_u8(b, 5, (uint8_t)op->act);
		return tfk_fbb_end(b);
	case OPT_FC:
		tfk_fbb_start(b);
		tfk_fbb_add_u8(b, 0, (uint8_t)op->act);
		tfk_fbb_add_u8(b, 1, 0);	/* weights_format DEFAULT */
		tfk_fbb_add_u8(b, 2, 0);	/* keep_num_dims */
		return tfk_fbb_end(b);
	case OPT_SOFTMAX:
		tfk_fbb_start(b);
		tfk_fbb_add_f32(b, 0, op->beta);
		return tfk_fbb_end(b);
	case OPT_CONCAT:
		tfk_fbb_start(b);
		tfk_fbb_add_i32(b, 0, op->axis);
		tfk_fbb_add_u8(b, 1, (uint8_t)op->act);
		return tfk_fbb_end(b);
	case OPT_ADD: case OPT_MUL: case OPT_SUB:
		tfk_fbb_start(b);
		tfk_fbb_add_u8(b, 0, (uint8_t)op->act);
		return tfk_fbb_end(b);
	case OPT_RESHAPE: {
		uint32_t v = tfk_fbb_vector(b, op->new_shape,
					    (uint32_t)op->n_new_shape, 4);

		tfk_fbb_start(b);
		tfk_fbb_add_ref(b, 0, v);
		return tfk_fbb_end(b);
	}
	case OPT_REDUCER:
		tfk_fbb_start(b);
		tfk_fbb_add_u8(b, 0, (uint8_t)op->keep_dims);
		return tfk_fbb_end(b);
	case OPT_PAD: case OPT_DEQUANTIZE:
		tfk_fbb_start(b);
		return tfk_fbb_end(b);
	}
	return 0;
}

struct sigio {
	const char *key;
	int tensor;
};

/* The finished flatbuffer of the model into *p and *n (owned by b). */
static int write_model(struct conv *c, const struct sigio *ins, int n_in,
		       const struct sigio *outs, int n_out,
		       struct tfk_fbb *b, const uint8_t **p, size_t *n)
{
	uint32_t *refs = NULL, *orefs = NULL, v_buf, v_t, v_op, v_codes;
	uint32_t v_sg, v_meta, v_sig, r, s_in, s_out, str;
	int codes[256], n_codes = 0, k, j, rc = 0;
	int32_t *idx = NULL;
	int *opcode_of = NULL;
	char rt[16];
	const char *ver = "1.5.0";
	uint32_t tm[64];
	int mx = c->n_t > c->n_op ? c->n_t : c->n_op;

	if (mx < c->n_b + 1)
		mx = c->n_b + 1;
	if (mx < n_in + n_out)
		mx = n_in + n_out;
	refs = tfk_calloc((size_t)mx + 1, sizeof(*refs));
	orefs = tfk_calloc((size_t)c->n_op + 1, sizeof(*orefs));
	idx = tfk_calloc((size_t)mx + 1, sizeof(*idx));
	opcode_of = tfk_calloc((size_t)c->n_op + 1, sizeof(*opcode_of));
	if (!refs || !orefs || !idx || !opcode_of) {
		rc = oom(c);
		goto out;
	}
	/* operator codes, in first-use order */
	for (k = 0; k < c->n_op; k++) {
		for (j = 0; j < n_codes; j++)
			if (c->op[codes[j]].code == c->op[k].code &&
			    c->op[codes[j]].version == c->op[k].version)
				break;
		if (j == n_codes)
			codes[n_codes++] = k;
		opcode_of[k] = j;
		if (vcmp(min_runtime(&c->op[k]), ver) > 0)
			ver = min_runtime(&c->op[k]);
	}
	/* buffers: the model's, then the metadata string's */
	memset(rt, 0, sizeof(rt));
	snprintf(rt, sizeof(rt), "%s", ver);
	for (k = 0; k < c->n_b; k++) {
		uint32_t d = c->b[k].n || k ? tfk_fbb_vector(b, c->b[k].data,
							     (uint32_t)c->b[k].n,
							     1) : 0;

		tfk_fbb_start(b);
		if (k)
			tfk_fbb_add_ref(b, 0, d);
		refs[k] = tfk_fbb_end(b);
	}
	r = tfk_fbb_vector(b, rt, sizeof(rt), 1);
	tfk_fbb_start(b);
	tfk_fbb_add_ref(b, 0, r);
	refs[c->n_b] = tfk_fbb_end(b);
	v_buf = tfk_fbb_vector_refs(b, refs, (uint32_t)c->n_b + 1);
	/* tensors */
	for (k = 0; k < c->n_t; k++) {
		const struct ctensor *t = &c->t[k];
		uint32_t sh = ivec(b, t->shape, t->rank), sg = 0, q = 0;

		if (t->has_sig)
			sg = ivec(b, t->sig, t->rank);
		if (t->nq) {
			uint32_t sc = tfk_fbb_vector(b, t->scale,
						     (uint32_t)t->nq, 4);
			uint32_t zp = tfk_fbb_vector(b, t->zp,
						     (uint32_t)t->nq, 8);

			tfk_fbb_start(b);
			tfk_fbb_add_ref(b, 2, sc);
			tfk_fbb_add_ref(b, 3, zp);
			tfk_fbb_add_i32(b, 6, t->qaxis);
			q = tfk_fbb_end(b);
		}
		str = tfk_fbb_string(b, t->name, strlen(t->name));
		tfk_fbb_start(b);
		tfk_fbb_add_ref(b, 0, sh);
		tfk_fbb_add_u8(b, 1, t->type);
		tfk_fbb_add_u32(b, 2, t->buffer);
		tfk_fbb_add_ref(b, 3, str);
		if (q)
			tfk_fbb_add_ref(b, 4, q);
		if (sg)
			tfk_fbb_add_ref(b, 7, sg);
		refs[k] = tfk_fbb_end(b);
	}
	v_t = tfk_fbb_vector_refs(b, refs, (uint32_t)c->n_t);
	/* operators */
	for (k = 0; k < c->n_op; k++) {
		const struct cop *op = &c->op[k];
		uint32_t vi = tfk_fbb_vector(b, op->in, (uint32_t)op->n_in, 4);
		uint32_t vo = tfk_fbb_vector(b, op->out, (uint32_t)op->n_out,
					     4);
		uint32_t o = write_options(b, op);

		tfk_fbb_start(b);
		tfk_fbb_add_u32(b, 0, (uint32_t)opcode_of[k]);
		tfk_fbb_add_ref(b, 1, vi);
		tfk_fbb_add_ref(b, 2, vo);
		if (op->opt_type) {
			tfk_fbb_add_u8(b, 3, (uint8_t)op->opt_type);
			tfk_fbb_add_ref(b, 4, o);
		}
		orefs[k] = tfk_fbb_end(b);
	}
	v_op = tfk_fbb_vector_refs(b, orefs, (uint32_t)c->n_op);
	for (j = 0; j < n_codes; j++) {
		const struct cop *op = &c->op[codes[j]];

		tfk_fbb_start(b);
		/* deprecated_builtin_code = min(code, 127), as TF writes */
		tfk_fbb_add_u8(b, 0, (uint8_t)(op->code < 127 ? op->code :
					       127));
		tfk_fbb_add_i32(b, 2, op->version);
		tfk_fbb_add_i32(b, 3, op->code);
		refs[j] = tfk_fbb_end(b);
	}
	v_codes = tfk_fbb_vector_refs(b, refs, (uint32_t)n_codes);
	for (k = 0; k < n_in; k++)
		idx[k] = ins[k].tensor;
	s_in = tfk_fbb_vector(b, idx, (uint32_t)n_in, 4);
	for (k = 0; k < n_out; k++)
		idx[k] = outs[k].tensor;
	s_out = tfk_fbb_vector(b, idx, (uint32_t)n_out, 4);
	str = tfk_fbb_string(b, "main", 4);
	tfk_fbb_start(b);
	tfk_fbb_add_ref(b, 0, v_t);
	tfk_fbb_add_ref(b, 1, s_in);
	tfk_fbb_add_ref(b, 2, s_out);
	tfk_fbb_add_ref(b, 3, v_op);
	tfk_fbb_add_ref(b, 4, str);
	r = tfk_fbb_end(b);
	v_sg = tfk_fbb_vector_refs(b, &r, 1);
	/* metadata */
	str = tfk_fbb_string(b, "min_runtime_version", 19);
	tfk_fbb_start(b);
	tfk_fbb_add_ref(b, 0, str);
	tfk_fbb_add_u32(b, 1, (uint32_t)c->n_b);
	r = tfk_fbb_end(b);
	v_meta = tfk_fbb_vector_refs(b, &r, 1);
	/* the serving_default signature */
	{
		uint32_t vin, vout, key;

		for (k = 0; k < n_in + n_out && k < 64; k++) {
			const struct sigio *s = k < n_in ? &ins[k] :
				&outs[k - n_in];

			str = tfk_fbb_string(b, s->key, strlen(s->key));
			tfk_fbb_start(b);
			tfk_fbb_add_ref(b, 0, str);
			tfk_fbb_add_u32(b, 1, (uint32_t)s->tensor);
			tm[k] = tfk_fbb_end(b);
		}
		vin = tfk_fbb_vector_refs(b, tm, (uint32_t)n_in);
		vout = tfk_fbb_vector_refs(b, tm + n_in, (uint32_t)n_out);
		key = tfk_fbb_string(b, "serving_default", 15);
		tfk_fbb_start(b);
		tfk_fbb_add_ref(b, 0, vin);
		tfk_fbb_add_ref(b, 1, vout);
		tfk_fbb_add_ref(b, 2, key);
		tfk_fbb_add_u32(b, 4, 0);
		r = tfk_fbb_end(b);
		v_sig = tfk_fbb_vector_refs(b, &r, 1);
	}
	str = tfk_fbb_string(b, "tfk-lite convert", 16);
	tfk_fbb_start(b);
	tfk_fbb_add_u32(b, 0, 3);
	tfk_fbb_add_ref(b, 1, v_codes);
	tfk_fbb_add_ref(b, 2, v_sg);
	tfk_fbb_add_ref(b, 3, str);
	tfk_fbb_add_ref(b, 4, v_buf);
	tfk_fbb_add_ref(b, 6, v_meta);
	tfk_fbb_add_ref(b, 7, v_sig);
	r = tfk_fbb_end(b);
	rc = tfk_fbb_finish(b, r, "TFL3", p, n, c->err);
out:
	tfk_free(refs);
	tfk_free(orefs);
	tfk_free(idx);
	tfk_free(opcode_of);
	return rc;
}

/* Full integer quantization ---------------------------------------------- */

/*
 * Calibration: the signature's inputs for the first n_max records of
 * rep, mapped as the SavedModel's training spec (assets.extra/
 * tfkit_spec.json "inputs", what tfk-train fed) maps them, run through
 * the float graph once; min/max of every activation tensor (those
 * without a buffer) into mn/mx. Tensors are named after the graph node
 * (or "NODE:0") they hold, so the fetch names are the tensor names.
 */
static int calibrate(struct conv *c, const struct tfk_import *imp,
		     const char *dir, const char *rep, long n_max,
		     float *mn, float *mx)
{
	struct tfk_tfl_records r;
	struct tfk_exec *x = NULL;
	const char **fetch = NULL, **feed = NULL;
	const struct tfk_tensor **got = NULL;
	struct tfk_tensor *fv = NULL;
	int *ti = NULL, n_fetch = 0, k, j, rc;

	if ((rc = tfk_tfl_records_read(&r, dir, rep, n_max, NULL,
					   "calibration", c->err)))
		return rc;
	fetch = tfk_calloc((size_t)c->n_t + 1, sizeof(*fetch));
	ti = tfk_calloc((size_t)c->n_t + 1, sizeof(*ti));
	got = tfk_calloc((size_t)c->n_t + 1, sizeof(*got));
	feed = tfk_calloc((size_t)imp->n_feeds + 1, sizeof(*feed));
	fv = tfk_calloc((size_t)imp->n_feeds + 1, sizeof(*fv));
	if (!fetch || !ti || !got || !feed || !fv) {
		rc = oom(c);
		goto out;
	}
	for (k = 0; k < c->n_t; k++)
		if (!c->t[k].buffer && c->t[k].type == TFK_TFL_FLOAT32) {
			ti[n_fetch] = k;
			fetch[n_fetch++] = c->t[k].name;
		}
	for (j = 0; j < imp->n_feeds; j++) {
		for (k = 0; k < r.n_inputs; k++)
			if (!strcmp(r.keys[k], imp->feeds[j].key))
				break;
		if (k == r.n_inputs) {
			rc = tfk_errf(c->err, TFK_EINVAL, "input '%s' is not "
				      "an input of the training spec's model",
				      imp->feeds[j].key);
			goto out;
		}
		feed[j] = imp->feeds[j].node;
		fv[j] = r.inputs[k];
		fv[j].owner = TFK_OWN_BORROWED;
		fv[j].strs = NULL;
		memset(&fv[j].quant, 0, sizeof(fv[j].quant));
	}
	if ((rc = tfk_exec_new(&x, imp->g, feed, imp->n_feeds, fetch,
			       n_fetch, NULL, c->err)) ||
	    (rc = tfk_exec_run(x, fv, 0, got, c->err)))
		goto out;
	for (k = 0; k < n_fetch; k++) {
		const float *v = got[k]->data;
		int64_t i, n = tfk_tensor_numel(got[k]);
		float lo = 0, hi = 0;	/* the range always holds 0 */

		for (i = 0; i < n; i++) {
			if (v[i] < lo)
				lo = v[i];
			if (v[i] > hi)
				hi = v[i];
		}
		mn[ti[k]] = lo;
		mx[ti[k]] = hi;
	}
out:
	tfk_exec_free(x);
	tfk_free(fetch);
	tfk_free(ti);
	tfk_free(got);
	tfk_free(feed);
	tfk_free(fv);
	tfk_tfl_records_release(&r);
	return rc;
}

static int set_q(struct conv *c, int t, int n, int axis, const float *scale,
		 const int64_t *zp)
{
	struct ctensor *x = &c->t[t];

	tfk_free(x->scale);
	tfk_free(x->zp);
	x->scale = tfk_calloc((size_t)n, sizeof(float));
	x->zp = tfk_calloc((size_t)n, sizeof(int64_t));
	if (!x->scale || !x->zp)
		return oom(c);
	memcpy(x->scale, scale, (size_t)n * sizeof(float));
	memcpy(x->zp, zp, (size_t)n * sizeof(int64_t));
	x->nq = n;
	x->qaxis = axis;
	return 0;
}

/* Asymmetric int8 parameters of [lo, hi] (holding 0), as TF's
 * GetAsymmetricQuantizationParams: scale (hi - lo) / 255, zero point
 * -128 - lo / scale rounded into [-128, 127]. */
static void range_q(float lo, float hi, float *scale, int64_t *zp)
{
	double s, z;

	if (lo > 0)
		lo = 0;
	if (hi < 0)
		hi = 0;
	s = ((double)hi - lo) / 255.0;
	if (s <= 0)
		s = 1.0 / 255;	/* an all-zero tensor */
	z = -128.0 - lo / s;
	z = z < -128 ? -128 : z > 127 ? 127 : z;
	*scale = (float)s;
	*zp = (int64_t)lround(z);
}

/* Replace float buffer b by its int8 quantization (per channel along
 * axis of a tensor of rank/shape, -1 per tensor; symmetric [-127,
 * 127]); the scales into sc[]. */
static int quant_weights(struct conv *c, int t, int axis)
{
	struct ctensor *x = &c->t[t];
	struct cbuffer *b = &c->b[x->buffer];
	int64_t n = (int64_t)(b->n / 4), inner = 1, j;
	int nch = axis >= 0 ? (int)x->shape[axis] : 1, k, i;
	const float *w = (const float *)b->data;
	int8_t *q = tfk_malloc((size_t)n + 1);
	float *sc = tfk_calloc((size_t)nch + 1, sizeof(float));
	int64_t *zp = tfk_calloc((size_t)nch + 1, sizeof(int64_t));

	if (!q || !sc || !zp) {
		tfk_free(q);
		tfk_free(sc);
		tfk_free(zp);
		return oom(c);
	}
	for (i = axis + 1; axis >= 0 && i < x->rank; i++)
		inner *= x->shape[i];
	for (k = 0; k < nch; k++) {
		float m = 0;

		for (j = 0; j < n; j++)
			if ((axis < 0 || (j / inner) % nch == k) &&
			    fabsf(w[j]) > m)
				m = fabsf(w[j]);
		sc[k] = m > 0 ? m / 127.0f : 1.0f;
	}
	for (j = 0; j < n; j++) {
		float v = roundf(w[j] / sc[axis < 0 ? 0 : (j / inner) % nch]);

		q[j] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
	}
	tfk_free(b->data);
	b->data = (uint8_t *)q;
	b->n = (size_t)n;
	x->type = TFK_TFL_INT8;
	k = set_q(c, t, nch, axis < 0 ? 0 : axis, sc, zp);
	tfk_free(sc);
	tfk_free(zp);
	return k;
}

/* Bias (float buffer) to int32 with scale in_scale * w_scale[k]. */
static int quant_bias(struct conv *c, int t, float in_scale, int wt)
{
	struct ctensor *x = &c->t[t];
	struct cbuffer *b = &c->b[x->buffer];
	int n = (int)(b->n / 4), k, nw = c->t[wt].nq;
	const float *v = (const float *)b->data;
	int32_t *q = tfk_malloc((size_t)n * 4 + 4);
	float *sc = tfk_calloc((size_t)n + 1, sizeof(float));
	int64_t *zp = tfk_calloc((size_t)n + 1, sizeof(int64_t));

	if (!q || !sc || !zp) {
		tfk_free(q);
		tfk_free(sc);
		tfk_free(zp);
		return oom(c);
	}
	for (k = 0; k < n; k++) {
		double r;

		sc[k] = in_scale * c->t[wt].scale[nw == n ? k : 0];
		r = round(v[k] / (double)sc[k]);
		q[k] = (int32_t)(r > INT32_MAX ? INT32_MAX : r < -INT32_MAX ?
				 -INT32_MAX : r);
	}
	memcpy(b->data, q, (size_t)n * 4);
	x->type = TFK_TFL_INT32;
	/* one scale per channel when the weights have them, as TF writes */
	k = set_q(c, t, nw == n ? n : 1, 0, sc, zp);
	tfk_free(q);
	tfk_free(sc);
	tfk_free(zp);
	return k;
}

/* Inputs/outputs of an op that must share their parameters with input
 * 0 (TFLite's int8 kernels for these do not rescale). */
static int same_as_input(int code)
{
	return code == TFK_TFL_MAX_POOL_2D || code == TFK_TFL_AVERAGE_POOL_2D ||
		code == TFK_TFL_RESHAPE || code == TFK_TFL_PAD ||
		code == TFK_TFL_CONCATENATION;
}

/* int8 op versions (TF's op_version.cc for int8 kernels). */
static int int8_version(int code)
{
	switch (code) {
	case TFK_TFL_CONV_2D: case TFK_TFL_DEPTHWISE_CONV_2D:
		return 3;
	case TFK_TFL_FULLY_CONNECTED:
		return 4;
	case TFK_TFL_RESHAPE:
		return 1;
	default:
		return 2;
	}
}

/*
 * Turn the float model in c into a full-integer one: activations INT8
 * from the calibrated ranges, weights INT8 (per channel for CONV_2D and
 * DEPTHWISE_CONV_2D, per tensor for FULLY_CONNECTED, as TFLite's int8
 * FULLY_CONNECTED reference kernel takes), biases INT32; float I/O
 * (io_int8 0) through QUANTIZE/DEQUANTIZE at the ends.
 */
static int quantize_int8(struct conv *c, struct sigio *ins, int n_in,
			 struct sigio *outs, int n_out, const float *mn,
			 const float *mx, int io_int8)
{
	int n_t = c->n_t, k, i, rc, n_op = c->n_op;
	float *lo = tfk_calloc((size_t)n_t + 1, sizeof(float));
	float *hi = tfk_calloc((size_t)n_t + 1, sizeof(float));
	struct cop *ops = NULL;

	if (!lo || !hi) {
		rc = oom(c);
		goto out;
	}
	memcpy(lo, mn, (size_t)n_t * sizeof(float));
	memcpy(hi, mx, (size_t)n_t * sizeof(float));
	/* concatenation: every input and the output take the union range */
	for (k = 0; k < n_op; k++) {
		struct cop *op = &c->op[k];
		float a = lo[op->out[0]], b = hi[op->out[0]];

		if (op->code != TFK_TFL_CONCATENATION)
			continue;
		for (i = 0; i < op->n_in; i++) {
			a = fminf(a, lo[op->in[i]]);
			b = fmaxf(b, hi[op->in[i]]);
		}
		for (i = 0; i < op->n_in; i++) {
			lo[op->in[i]] = a;
			hi[op->in[i]] = b;
		}
		lo[op->out[0]] = a;
		hi[op->out[0]] = b;
	}
	/* activations, in operator order so that same-as-input chains */
	for (i = 0; i < n_in; i++) {
		float s;
		int64_t z;

		range_q(lo[ins[i].tensor], hi[ins[i].tensor], &s, &z);
		if ((rc = set_q(c, ins[i].tensor, 1, 0, &s, &z)))
			goto out;
		c->t[ins[i].tensor].type = TFK_TFL_INT8;
	}
	for (k = 0; k < n_op; k++) {
		struct cop *op = &c->op[k];
		struct ctensor *y = &c->t[op->out[0]];
		float s;
		int64_t z;

		if (op->code == TFK_TFL_SOFTMAX ||
		    op->code == TFK_TFL_LOGISTIC) {
			s = 1.0f / 256;	/* TFLite's fixed int8 output */
			z = -128;
		} else if (op->code == TFK_TFL_TANH) {
			s = 1.0f / 128;
			z = 0;
		} else if (same_as_input(op->code) &&
			   c->t[op->in[0]].nq) {
			s = c->t[op->in[0]].scale[0];
			z = c->t[op->in[0]].zp[0];
		} else {
			range_q(lo[op->out[0]], hi[op->out[0]], &s, &z);
		}
		if ((rc = set_q(c, op->out[0], 1, 0, &s, &z)))
			goto out;
		y->type = TFK_TFL_INT8;
		op->version = int8_version(op->code);
		/* constant inputs */
		for (i = 0; i < op->n_in; i++) {
			struct ctensor *t = &c->t[op->in[i]];

			if (!t->buffer || t->type != TFK_TFL_FLOAT32)
				continue;
			if (op->code == TFK_TFL_CONV_2D && i == 1)
				rc = quant_weights(c, op->in[i], 0);
			else if (op->code == TFK_TFL_DEPTHWISE_CONV_2D && i == 1)
				rc = quant_weights(c, op->in[i], 3);
			else if (op->code == TFK_TFL_FULLY_CONNECTED && i == 1)
				rc = quant_weights(c, op->in[i], -1);
			else if (i == 2 && (op->code == TFK_TFL_CONV_2D ||
					    op->code ==
					    TFK_TFL_DEPTHWISE_CONV_2D ||
					    op->code ==
					    TFK_TFL_FULLY_CONNECTED))
				rc = quant_bias(c, op->in[i],
						c->t[op->in[0]].scale[0],
						op->in[1]);
			else {
				/* an elementwise constant: asymmetric, its
				 * own range */
				const float *v = (const float *)
					c->b[t->buffer].data;
				size_t j, nv = c->b[t->buffer].n / 4;
				float a = 0, b = 0, sc;
				int64_t zz;
				int8_t *q = tfk_malloc(nv + 1);

				if (!q) {
					rc = oom(c);
					goto out;
				}
				for (j = 0; j < nv; j++) {
					a = fminf(a, v[j]);
					b = fmaxf(b, v[j]);
				}
				range_q(a, b, &sc, &zz);
				for (j = 0; j < nv; j++) {
					double r = round(v[j] / sc) + zz;

					q[j] = (int8_t)(r > 127 ? 127 :
							r < -128 ? -128 : r);
				}
				tfk_free(c->b[t->buffer].data);
				c->b[t->buffer].data = (uint8_t *)q;
				c->b[t->buffer].n = nv;
				t->type = TFK_TFL_INT8;
				rc = set_q(c, op->in[i], 1, 0, &sc, &zz);
			}
			if (rc)
				goto out;
		}
	}
	if (io_int8) {
		rc = 0;
		goto out;
	}
	/* float ends: a float input tensor QUANTIZEd into the int8 one
	 * (operators go first), int8 outputs DEQUANTIZEd */
	ops = tfk_calloc((size_t)(n_op + n_in + n_out) + 1, sizeof(*ops));
	if (!ops) {
		rc = oom(c);
		goto out;
	}
	for (i = 0; i < n_in; i++) {
		struct ctensor *t = &c->t[ins[i].tensor];
		char nm[512];
		int f;
		int64_t shp[TFK_MAX_RANK];

		snprintf(nm, sizeof(nm), "%s_float", t->name);
		for (k = 0; k < t->rank; k++)
			shp[k] = t->has_sig ? t->sig[k] : t->shape[k];
		if ((f = add_tensor(c, nm, TFK_TFL_FLOAT32, c->t[ins[i].tensor]
				    .rank, shp)) < 0) {
			rc = f;
			goto out;
		}
		ops[i].code = TFK_TFL_QUANTIZE;
		ops[i].version = 1;
		ops[i].n_in = 1;
		ops[i].in[0] = f;
		ops[i].n_out = 1;
		ops[i].out[0] = ins[i].tensor;
		ins[i].tensor = f;
	}
	memcpy(ops + n_in, c->op, (size_t)n_op * sizeof(*ops));
	for (i = 0; i < n_out; i++) {
		struct ctensor *t = &c->t[outs[i].tensor];
		struct cop *op = &ops[n_in + n_op + i];
		char nm[512];
		int f;
		int64_t shp[TFK_MAX_RANK];

		snprintf(nm, sizeof(nm), "%s_float", t->name);
		for (k = 0; k < t->rank; k++)
			shp[k] = t->has_sig ? t->sig[k] : t->shape[k];
		if ((f = add_tensor(c, nm, TFK_TFL_FLOAT32, t->rank, shp)) < 0) {
			rc = f;
			goto out;
		}
		op->code = TFK_TFL_DEQUANTIZE;
		op->version = 2;
		op->n_in = 1;
		op->in[0] = outs[i].tensor;
		op->n_out = 1;
		op->out[0] = f;
		outs[i].tensor = f;
	}
	tfk_free(c->op);
	c->op = ops;
	c->n_op = c->cap_op = n_op + n_in + n_out;
	ops = NULL;
	rc = 0;
out:
	tfk_free(ops);
	tfk_free(lo);
	tfk_free(hi);
	return rc;
}

/* Conversion --------------------------------------------------------------- */

static void conv_release(struct conv *c)
{
	int k;

	for (k = 0; k < c->n_t; k++) {
		tfk_free(c->t[k].name);
		tfk_free(c->t[k].scale);
		tfk_free(c->t[k].zp);
	}
	for (k = 0; k < c->n_b; k++)
		tfk_free(c->b[k].data);
	tfk_free(c->t);
	tfk_free(c->b);
	tfk_free(c->op);
	tfk_free(c->tensor);
	tfk_free(c->uses);
	tfk_free(c->done);
}

int tfk_lite_convert(const struct tfk_import *imp,
		     const struct tfk_lite_convert_opts *q8,
		     const char *out_path, struct tfk_buf *mem,
		     size_t *out_size, struct tfk_err *err)
{
	float *mn = NULL, *mx = NULL;
	struct conv c;
	struct tfk_fbb b;
	struct sigio ins[32], outs[32];
	const uint8_t *p;
	size_t n;
	int i, k, rc;
	struct tfk_out *o = NULL;

	memset(&c, 0, sizeof(c));
	c.g = imp->g;
	c.quant = q8->quant;
	c.err = err;
	c.n_nodes = tfk_graph_n_nodes(imp->g);
	tfk_fbb_init(&b);
	if (imp->n_feeds > 32 || imp->n_fetches > 32) {
		rc = tfk_errf(err, TFK_EINVAL, "more than 32 signature inputs "
			      "or outputs");
		goto out;
	}
	c.tensor = tfk_malloc(((size_t)c.n_nodes + 1) * sizeof(int));
	c.uses = tfk_calloc((size_t)c.n_nodes + 1, sizeof(int));
	c.done = tfk_calloc((size_t)c.n_nodes + 1, sizeof(int));
	if (!c.tensor || !c.uses || !c.done) {
		rc = oom(&c);
		goto out;
	}
	for (i = 0; i < c.n_nodes; i++) {
		const struct tfk_node *nd = tfk_graph_node(imp->g, i);

		c.tensor[i] = -1;
		for (k = 0; k < nd->n_inputs; k++)
			if (nd->inputs[k].node >= 0 && !nd->inputs[k].index)
				c.uses[nd->inputs[k].node]++;
	}
	for (k = 0; k < tfk_graph_n_outputs(imp->g); k++) {
		struct tfk_port pt = tfk_graph_output_at(imp->g, k, NULL);

		if (pt.node >= 0)
			c.uses[pt.node] += 2;	/* never fused away */
	}
	if ((rc = add_buffer(&c, "", 0)) < 0)
		goto out;
	/* signature inputs first, in signature order */
	for (k = 0; k < imp->n_feeds; k++) {
		const struct tfk_import_feed *f = &imp->feeds[k];
		struct tfk_port pt;
		int type = tfl_type(f->dtype);

		if (!f->node || tfk_graph_find(imp->g, f->node, &pt, err)) {
			rc = tfk_errf(err, TFK_EINVAL, "input '%s' has no "
				      "placeholder", f->key);
			goto out;
		}
		if (type < 0 || f->dtype == TFK_DT_STRING) {
			rc = tfk_errf(err, TFK_EINVAL, "input '%s': %s inputs "
				      "are not supported", f->key,
				      tfk_dtype_name(f->dtype));
			goto out;
		}
		rc = add_tensor(&c, f->tensor, type, f->rank, f->shape);
		if (rc < 0)
			goto out;
		c.tensor[pt.node] = rc;
		ins[k].key = f->key;
		ins[k].tensor = rc;
	}
	for (i = 0; i < c.n_nodes; i++) {
		if (c.done[i] || (c.tensor[i] >= 0 &&
				  is_op(node(&c, i), "Placeholder")))
			continue;
		if ((rc = lower_node(&c, i)) < 0)
			goto out;
	}
	for (k = 0; k < imp->n_fetches; k++) {
		struct tfk_port pt;

		if ((rc = tfk_graph_find(imp->g, imp->fetches[k].key, &pt,
					 err)))
			goto out;
		if ((rc = tensor_of(&c, pt)) < 0)
			goto out;
		outs[k].key = imp->fetches[k].key;
		outs[k].tensor = rc;
	}
	if (q8->quant == TFK_LITE_INT8) {
		mn = tfk_calloc((size_t)c.n_t + 1, sizeof(float));
		mx = tfk_calloc((size_t)c.n_t + 1, sizeof(float));
		if (!mn || !mx) {
			rc = oom(&c);
			goto out;
		}
		if ((rc = calibrate(&c, imp, q8->sm_dir, q8->rep, q8->n_rep, mn, mx)) ||
		    (rc = quantize_int8(&c, ins, imp->n_feeds, outs,
					imp->n_fetches, mn, mx, q8->io_int8)))
			goto out;
	}
	if ((rc = write_model(&c, ins, imp->n_feeds, outs, imp->n_fetches,
			      &b, &p, &n)))
		goto out;
	if (!out_path) {
		tfk_buf_add(mem, p, n);
		if (!tfk_buf_ok(mem)) {
			rc = oom(&c);
			goto out;
		}
	} else if ((rc = tfk_out_open(&o, out_path, TFK_COMP_NONE, err)) ||
	    (rc = tfk_out_write(o, p, n, err)) ||
	    (rc = tfk_out_close(o, err))) {
		if (o && rc)
			tfk_out_discard(o);
		o = NULL;
		goto out;
	}
	*out_size = n;
	rc = 0;
out:
	tfk_free(mn);
	tfk_free(mx);
	tfk_fbb_release(&b);
	conv_release(&c);
	return rc < 0 ? rc : 0;
}
