/*
 * tflgraph.c - a TFLite subgraph as a tfk_graph, for float inference
 * (see tfk_tflite_graph in tflite.h).
 *
 * TFLite's builtin ops are fused forms of TensorFlow ops (the converter
 * made them from TF graphs), so each one expands back into the TF ops of
 * the registry, and the executor, its memory plan and the CPU kernels
 * are the ones every other tool uses: no second interpreter. Weights
 * are re-laid-out once here (CONV_2D's OHWI filter to TF's HWIO), never
 * per run. Fused activations become their own nodes; the elementwise
 * pass this costs is small next to the GEMM or convolution it follows.
 *
 * TFLite ignores the builtin options of an operator whose union type is
 * not the op's own (builtin_options_as_X() returns null and the op uses
 * its defaults); so does this importer (opt_table below).
 *
 * One op is no TF op: a FULLY_CONNECTED reading INT8 weights directly
 * (dynamic-range files) becomes TFLiteHybridMatMul (kernels/cpu.h), the
 * arithmetic of TFLite's hybrid kernel, since a Const dequantized here
 * would give float results that differ from LiteRT's by the input's
 * quantization error.
 *
 * Rejected: running TFLite's own reference kernels op by op over the
 * flatbuffer (a second set of float kernels to test and speed up); the
 * int8 path is a separate backend of the same graph (a later part).
 */
#include "model/lite.h"
#include "model/lite-impl.h"

#include "graph/graph.h"
#include "util/alloc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct ctx {
	const struct tfk_tflite *m;
	const struct tfk_tfl_subgraph *s;
	struct tfk_graph *g;
	struct tfk_port *port;		/* per tensor; node -1: none yet */
	const struct tfk_tfl_op *op;	/* the operator being converted */
	int op_i;
	struct tfk_err *err;
	int sg;
	int64_t work, max_work;	/* the nodes' cost so far; limit, 0 none */
};

static const char *op_name(const struct ctx *c)
{
	const struct tfk_tfl_opcode *oc = &c->m->opcodes[c->op->opcode_index];
	const char *nm = tfk_tfl_op_name(oc->builtin_code);

	if (oc->builtin_code == TFK_TFL_CUSTOM && oc->custom_code)
		return oc->custom_code;
	return nm ? nm : "UNKNOWN";
}

/* "operator 3 (CONV_2D): " + message */
static int op_err(struct ctx *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int op_err(struct ctx *c, int code, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* a subgraph output that is a constant: no operator to name */
	if (!c->op)
		return tfk_errf(c->err, code, "output: %s", msg);
	return tfk_errf(c->err, code, "operator %d (%s): %s", c->op_i,
			op_name(c), msg);
}

static int is_quantized(int type)
{
	return type == TFK_TFL_INT8 || type == TFK_TFL_UINT8 ||
	       type == TFK_TFL_INT16 || type == TFK_TFL_INT4;
}

static int has_data(const struct ctx *c, int t)
{
	const struct tfk_tfl_tensor *x = &c->s->tensors[t];

	return c->m->n_buffers && c->m->buffers[x->buffer].size > 0;
}

/* The bytes of constant t, NULL (c->err set) unless its file shape
 * lies inside its buffer (tfk_tflite_const_extent): every read of
 * constant bytes here comes through this. */
static const uint8_t *data_of(struct ctx *c, int t)
{
	if (tfk_tflite_const_extent(c->m, c->sg, t, c->err)) {
		tfk_err_prefix(c->err, "operator %d (%s)", c->op_i,
			       op_name(c));
		return NULL;
	}
	return c->m->buffers[c->s->tensors[t].buffer].data;
}

static int32_t rd_i32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
			 (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

/* Const node named "t<t>" from constant tensor t: FLOAT32, INT32,
 * INT64, BOOL and STRING (its string buffer) as they are; FLOAT16
 * widened; INT8/UINT8 dequantized (real = scale * (q - zero_point), per
 * tensor or per channel) only when dequant is set (a DEQUANTIZE reads
 * it). */
static int make_const(struct ctx *c, int t, int dequant, struct tfk_port *out)
{
	const struct tfk_tfl_tensor *x = &c->s->tensors[t];
	const uint8_t *p;
	enum tfk_dtype dt = tfk_tfl_dtype(x->type);
	struct tfk_tensor v;
	char name[32];
	int64_t i, n;
	int rc;

	if (x->is_sparse)
		/* its buffer holds the sparse encoding, not numel values */
		return op_err(c, TFK_EINVAL, "sparse constant '%s' is not "
			      "supported", x->name);
	if (x->type == TFK_TFL_INT4)
		/* packed two to a byte; the loader does not size-check its
		 * buffer, so it must never be indexed as bytes */
		return op_err(c, TFK_EINVAL, "INT4 constant '%s' is not "
			      "supported", x->name);
	if (x->type == TFK_TFL_FLOAT16 || (dequant && is_quantized(x->type)))
		dt = TFK_DT_FLOAT;
	if (is_quantized(x->type) && !dequant)
		return op_err(c, TFK_EINVAL, "tensor '%s' holds quantized "
			      "weights read directly (a hybrid, dynamic-range "
			      "operator): not supported by run yet", x->name);
	if (dt != TFK_DT_FLOAT && dt != TFK_DT_INT32 && dt != TFK_DT_INT64 &&
	    dt != TFK_DT_BOOL && dt != TFK_DT_STRING)
		return op_err(c, TFK_EINVAL, "constant tensor '%s' of type %s "
			      "is not supported", x->name,
			      tfk_tfl_type_name(x->type));
	if (!(p = data_of(c, t)))
		return c->err->code;
	if ((rc = tfk_tensor_init(&v, dt, x->rank, x->shape, c->err)))
		return rc;
	n = tfk_tensor_numel(&v);
	if (x->type == TFK_TFL_FLOAT16) {
		for (i = 0; i < n; i++)
			((float *)v.data)[i] = tfk_half_to_float(
				(uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
	} else if (is_quantized(x->type)) {
		const struct tfk_tfl_quant *q = &x->quant;
		int64_t inner = 1, ch = 1;
		int d;

		if (!q->n_scale) {
			tfk_tensor_release(&v);
			return op_err(c, TFK_EINVAL, "quantized constant '%s' "
				      "has no scale", x->name);
		}
		if (q->n_scale > 1) {
			for (d = q->quantized_dimension + 1; d < x->rank; d++)
				inner *= x->shape[d];
			ch = q->n_scale;
		}
		for (i = 0; i < n; i++) {
			int64_t k = q->n_scale > 1 ? (i / inner) % ch : 0;
			int64_t qv = x->type == TFK_TFL_INT8 ?
				(int8_t)p[i] : x->type == TFK_TFL_UINT8 ? p[i] :
				(int16_t)(p[2 * i] | p[2 * i + 1] << 8);
			int64_t zp = q->n_zero_point ? q->zero_point[k] : 0;

			((float *)v.data)[i] = q->scale[k] * (float)(qv - zp);
		}
	} else if (dt == TFK_DT_STRING) {
		/* the loader checked the string buffer: n strings */
		for (i = 0; i < n; i++) {
			const uint8_t *sp;
			size_t len;

			tfk_tfl_string_at(p, i, &sp, &len);
			if ((rc = tfk_tensor_set_str(&v, i, sp, len, c->err))) {
				tfk_tensor_release(&v);
				return rc;
			}
		}
	} else if (v.nbytes) {
		memcpy(v.data, p, v.nbytes);	/* little-endian host */
	}
	snprintf(name, sizeof(name), "t%d", t);
	rc = tfk_graph_const(c->g, name, &v, out, c->err);
	tfk_tensor_release(&v);
	return rc;
}

/* The port of operator input k (a constant is made on first use). */
static int in_port(struct ctx *c, int k, struct tfk_port *p)
{
	int t, rc;

	if (k >= c->op->n_inputs || c->op->inputs[k] < 0)
		return op_err(c, TFK_EINVAL, "input %d is missing", k);
	t = c->op->inputs[k];
	if (c->port[t].node < 0) {
		if (!has_data(c, t))
			return op_err(c, TFK_EINVAL, "input tensor %d '%s' is "
				      "read before any operator writes it", t,
				      c->s->tensors[t].name);
		if ((rc = make_const(c, t, 0, &c->port[t])))
			return rc;
	}
	*p = c->port[t];
	return 0;
}

/* Values of constant int tensor input k (INT32 or INT64) into v[0..cap);
 * the count into *n. */
static int const_ints(struct ctx *c, int k, int64_t *v, int cap, int *n)
{
	const struct tfk_tfl_tensor *x;
	const uint8_t *p;
	int64_t i, cnt = 1;
	int t, d;

	if (k >= c->op->n_inputs || c->op->inputs[k] < 0)
		return op_err(c, TFK_EINVAL, "input %d is missing", k);
	t = c->op->inputs[k];
	x = &c->s->tensors[t];
	if (!has_data(c, t) || x->is_sparse ||
	    (x->type != TFK_TFL_INT32 && x->type != TFK_TFL_INT64))
		return op_err(c, TFK_EINVAL, "input %d must be a constant "
			      "int32 or int64 tensor", k);
	for (d = 0; d < x->rank; d++)
		cnt *= x->shape[d];
	if (cnt > cap)
		return op_err(c, TFK_EINVAL, "input tensor '%s' has over %d "
			      "values", x->name, cap);
	if (!(p = data_of(c, t)))
		return c->err->code;
	for (i = 0; i < cnt; i++) {
		if (x->type == TFK_TFL_INT32) {
			v[i] = rd_i32(p + 4 * i);
		} else {
			uint64_t u = (uint64_t)(uint32_t)rd_i32(p + 8 * i) |
				(uint64_t)(uint32_t)rd_i32(p + 8 * i + 4) << 32;

			v[i] = (int64_t)u;
		}
	}
	*n = (int)cnt;
	return 0;
}

static int node(struct ctx *c, const char *op, const struct tfk_port *in,
		int n_in, const struct tfk_attr *at, int n_at,
		struct tfk_port *out)
{
	int rc = tfk_graph_add_node(c->g, op, NULL, in, n_in, at, n_at, out,
				    c->err);

	if (rc)
		tfk_err_prefix(c->err, "operator %d (%s)", c->op_i,
			       op_name(c));
	return rc;
}

static int const_i32v(struct ctx *c, const int64_t *v, int n,
		      struct tfk_port *out)
{
	int32_t w[TFK_MAX_RANK * 2 + 8];
	int i;

	if (n > (int)(sizeof(w) / sizeof(w[0])))
		return op_err(c, TFK_EINVAL, "%d values are too many", n);
	for (i = 0; i < n; i++)
		w[i] = (int32_t)v[i];
	return tfk_graph_const_i32v(c->g, NULL, w, n, out, c->err);
}

static int const_f32(struct ctx *c, float v, struct tfk_port *out)
{
	return tfk_graph_const_f32(c->g, NULL, v, out, c->err);
}

/* The operator's builtin options table when it is of type `table`
 * (TFLite's builtin_options_as_X), else NULL: defaults apply. */
static const struct tfk_fb_table *opt_table(const struct ctx *c,
					    const char *table)
{
	const char *nm = tfk_tfl_options_name(c->op->options_type);

	if (!c->op->has_options || !nm || strcmp(nm, table))
		return NULL;
	return &c->op->options;
}

static int opt_i8(struct ctx *c, const char *table, int slot, int def)
{
	const struct tfk_fb_table *t = opt_table(c, table);
	int8_t v = (int8_t)def;

	if (t && tfk_fb_i8(t, slot, (int8_t)def, &v, c->err))
		return def;
	return v;
}

static int32_t opt_i32(struct ctx *c, const char *table, int slot,
		       int32_t def)
{
	const struct tfk_fb_table *t = opt_table(c, table);
	int32_t v = def;

	if (t && tfk_fb_i32(t, slot, def, &v, c->err))
		return def;
	return v;
}

static float opt_f32(struct ctx *c, const char *table, int slot, float def)
{
	const struct tfk_fb_table *t = opt_table(c, table);
	float v = def;

	if (t && tfk_fb_f32(t, slot, def, &v, c->err))
		return def;
	return v;
}

/* A fused activation after *p. */
static int act(struct ctx *c, int a, struct tfk_port *p)
{
	struct tfk_port k, in[2];
	int rc;

	switch (a) {
	case TFK_TFL_ACT_NONE:
		return 0;
	case TFK_TFL_ACT_RELU:
		return node(c, "Relu", p, 1, NULL, 0, p);
	case TFK_TFL_ACT_RELU6:
		return node(c, "Relu6", p, 1, NULL, 0, p);
	case TFK_TFL_ACT_TANH:
		return node(c, "Tanh", p, 1, NULL, 0, p);
	case TFK_TFL_ACT_RELU_N1_TO_1:
		if ((rc = const_f32(c, 1.0f, &k)))
			return rc;
		in[0] = *p;
		in[1] = k;
		if ((rc = node(c, "Minimum", in, 2, NULL, 0, p)) ||
		    (rc = const_f32(c, -1.0f, &k)))
			return rc;
		in[0] = *p;
		in[1] = k;
		return node(c, "Maximum", in, 2, NULL, 0, p);
	default:
		return op_err(c, TFK_EINVAL, "fused activation %d is not "
			      "supported", a);
	}
}

static struct tfk_attr a_ints(const char *name, const int64_t *v, int n)
{
	struct tfk_attr a;

	memset(&a, 0, sizeof(a));
	a.name = name;
	a.v.kind = TFK_ATTR_LIST_INT;
	a.v.list.n = n;
	a.v.list.i = v;
	return a;
}

static int set_out(struct ctx *c, int k, struct tfk_port p)
{
	if (k >= c->op->n_outputs)
		return op_err(c, TFK_EINVAL, "output %d is missing", k);
	c->port[c->op->outputs[k]] = p;
	return 0;
}

static int binary(struct ctx *c, const char *tfop, const char *table)
{
	struct tfk_port in[2], y;
	int rc;

	if ((rc = in_port(c, 0, &in[0])) || (rc = in_port(c, 1, &in[1])) ||
	    (rc = node(c, tfop, in, 2, NULL, 0, &y)))
		return rc;
	if (table && (rc = act(c, opt_i8(c, table, 0, 0), &y)))
		return rc;
	return set_out(c, 0, y);
}

static int unary(struct ctx *c, const char *tfop)
{
	struct tfk_port x;
	int rc;

	if ((rc = in_port(c, 0, &x)) || (rc = node(c, tfop, &x, 1, NULL, 0,
						   &x)))
		return rc;
	return set_out(c, 0, x);
}

static int optional_bias(struct ctx *c, int k, struct tfk_port *y)
{
	struct tfk_port in[2];

	if (k >= c->op->n_inputs || c->op->inputs[k] < 0)
		return 0;
	in[0] = *y;
	if (in_port(c, k, &in[1]))
		return c->err->code;
	return node(c, "BiasAdd", in, 2, NULL, 0, y);
}

/*
 * INT8 weights read by a float FULLY_CONNECTED (dynamic-range files):
 * TFLite's hybrid kernel, the op TFLiteHybridMatMul over the raw int8
 * weights and their scales (per tensor or per output channel, zero
 * points 0), each input row quantized at run time (symmetric, or
 * asymmetric as asymmetric_quantize_inputs says). in[1] gets the
 * weights, *hyb is set; not INT8 weights: *hyb 0, nothing made.
 */
static int hybrid_weights(struct ctx *c, struct tfk_port *w, int *hyb)
{
	int t = c->op->n_inputs > 1 ? c->op->inputs[1] : -1;
	const struct tfk_tfl_tensor *x;
	const struct tfk_tfl_quant *q;
	const uint8_t *p;
	struct tfk_tensor v;
	int64_t n1;
	int rc, k;

	*hyb = 0;
	if (t < 0 || c->s->tensors[t].type != TFK_TFL_INT8 || !has_data(c, t) ||
	    c->port[t].node >= 0)
		return 0;
	x = &c->s->tensors[t];
	q = &x->quant;
	if (x->is_sparse || x->rank != 2 || !q->n_scale ||
	    (q->n_scale > 1 && (q->n_scale != x->shape[0] ||
				q->quantized_dimension != 0)))
		return make_const(c, t, 0, w);	/* refuses */
	for (k = 0; k < q->n_zero_point; k++)
		if (q->zero_point[k])
			return op_err(c, TFK_EINVAL, "hybrid weights '%s' with "
				      "zero point %lld are not supported",
				      x->name, (long long)q->zero_point[k]);
	if (!(p = data_of(c, t)))
		return c->err->code;
	if ((rc = tfk_tensor_init(&v, TFK_DT_INT8, 2, x->shape, c->err)))
		return rc;
	if (v.nbytes)
		memcpy(v.data, p, v.nbytes);
	rc = tfk_graph_const(c->g, NULL, &v, &w[0], c->err);
	tfk_tensor_release(&v);
	if (rc)
		return rc;
	n1 = q->n_scale;
	if ((rc = tfk_tensor_init(&v, TFK_DT_FLOAT, 1, &n1, c->err)))
		return rc;
	memcpy(v.data, q->scale, (size_t)n1 * sizeof(float));
	rc = tfk_graph_const(c->g, NULL, &v, &w[1], c->err);
	tfk_tensor_release(&v);
	if (rc)
		return rc;
	*hyb = 1;
	return 0;
}

static int fully_connected(struct ctx *c)
{
	static const char *T = "FullyConnectedOptions";
	struct tfk_port x, in[2], y;
	const struct tfk_tdesc *xd;
	const struct tfk_tfl_tensor *w;
	int64_t shape[TFK_MAX_RANK], k;
	struct tfk_attr tb = TFK_A_BOOL("transpose_b", 1);
	int rc, d, keep = opt_i8(c, T, 2, 0), hyb;
	struct tfk_port hw[2];

	if (opt_i8(c, T, 1, 0) != 0)
		return op_err(c, TFK_EINVAL, "weights_format %d is not "
			      "supported", opt_i8(c, T, 1, 0));
	if ((rc = in_port(c, 0, &x)) || (rc = hybrid_weights(c, hw, &hyb)) ||
	    (!hyb && (rc = in_port(c, 1, &in[1]))))
		return rc;
	w = &c->s->tensors[c->op->inputs[1]];
	if (w->rank != 2)
		return op_err(c, TFK_EINVAL, "weights '%s' of rank %d, "
			      "expected 2", w->name, w->rank);
	k = w->shape[1];
	xd = tfk_graph_desc(c->g, x);
	if (xd->rank != 2) {
		int64_t s2[2] = { -1, k };
		struct tfk_port sp, r[2];

		if ((rc = const_i32v(c, s2, 2, &sp)))
			return rc;
		r[0] = x;
		r[1] = sp;
		if ((rc = node(c, "Reshape", r, 2, NULL, 0, &in[0])))
			return rc;
	} else {
		in[0] = x;
	}
	for (d = 0; d < xd->rank; d++)
		shape[d] = xd->shape[d];
	if (hyb) {
		struct tfk_attr as = TFK_A_BOOL("asymmetric",
						opt_i8(c, T, 3, 0));
		struct tfk_port h[3] = { in[0], hw[0], hw[1] };

		rc = node(c, "TFLiteHybridMatMul", h, 3, &as, 1, &y);
	} else {
		rc = node(c, "MatMul", in, 2, &tb, 1, &y);
	}
	if (rc || (rc = optional_bias(c, 2, &y)) ||
	    (rc = act(c, opt_i8(c, T, 0, 0), &y)))
		return rc;
	if (keep && xd->rank > 2) {
		struct tfk_port sp, r[2];

		shape[xd->rank - 1] = w->shape[0];
		if ((rc = const_i32v(c, shape, xd->rank, &sp)))
			return rc;
		r[0] = y;
		r[1] = sp;
		if ((rc = node(c, "Reshape", r, 2, NULL, 0, &y)))
			return rc;
	}
	return set_out(c, 0, y);
}

static const char *padding(struct ctx *c, const char *table)
{
	return opt_i8(c, table, 0, 0) == 1 ? "VALID" : "SAME";
}

/* Constant float filter input 1, checked, as (data, O, H, W, I). */
static int filter(struct ctx *c, const float **f, int64_t *dims)
{
	int t = c->op->n_inputs > 1 ? c->op->inputs[1] : -1;
	const struct tfk_tfl_tensor *x;
	int d;

	if (t < 0)
		return op_err(c, TFK_EINVAL, "no filter");
	x = &c->s->tensors[t];
	if (is_quantized(x->type) || x->is_sparse)
		return make_const(c, t, 0, &c->port[t]);	/* refuses */
	if (x->type == TFK_TFL_FLOAT32 && !has_data(c, t) &&
	    c->port[t].node >= 0) {
		/* the output of a DEQUANTIZE of a FLOAT16 or INT8 constant
		 * (float16 and dynamic-range files): already a Const */
		const struct tfk_tensor *v = tfk_graph_const_value(c->g,
								   c->port[t]);

		if (v && v->dtype == TFK_DT_FLOAT && v->rank == 4) {
			for (d = 0; d < 4; d++)
				dims[d] = v->shape[d];
			*f = (const float *)v->data;
			return 0;
		}
	}
	if (x->type != TFK_TFL_FLOAT32 || !has_data(c, t) || x->rank != 4)
		return op_err(c, TFK_EINVAL, "filter '%s' must be a constant "
			      "float32 tensor of rank 4", x->name);
	for (d = 0; d < 4; d++)
		dims[d] = x->shape[d];
	if (!(*f = (const float *)data_of(c, t)))
		return c->err->code;
	return 0;
}

static int conv2d(struct ctx *c, int depthwise)
{
	const char *T = depthwise ? "DepthwiseConv2DOptions" : "Conv2DOptions";
	int s_act = depthwise ? 4 : 3, s_dil = depthwise ? 5 : 4;
	struct tfk_port in[2], y;
	struct tfk_tensor w;
	const float *f = NULL;
	int64_t dims[4], hw[4], strides[4], dil[4];
	struct tfk_attr at[3];
	int rc;

	if ((rc = filter(c, &f, dims)) || (rc = in_port(c, 0, &in[0])))
		return rc;
	if (depthwise) {
		const struct tfk_tdesc *xd = tfk_graph_desc(c->g, in[0]);
		int64_t ic = xd->rank == 4 ? xd->shape[3] : -1;

		if (ic <= 0 || dims[0] != 1 || dims[3] % ic)
			return op_err(c, TFK_EINVAL, "filter of %lld output "
				      "channels does not fit the input's "
				      "channels", (long long)dims[3]);
		hw[0] = dims[1];
		hw[1] = dims[2];
		hw[2] = ic;
		hw[3] = dims[3] / ic;
		/* [1, H, W, I*M] is [H, W, I, M] in memory */
		if ((rc = tfk_tensor_init(&w, TFK_DT_FLOAT, 4, hw, c->err)))
			return rc;
		memcpy(w.data, f, w.nbytes);
	} else {
		int64_t o, h, x, k;

		hw[0] = dims[1];
		hw[1] = dims[2];
		hw[2] = dims[3];
		hw[3] = dims[0];
		if ((rc = tfk_tensor_init(&w, TFK_DT_FLOAT, 4, hw, c->err)))
			return rc;
		/* OHWI -> HWIO */
		for (o = 0; o < dims[0]; o++)
			for (h = 0; h < dims[1]; h++)
				for (x = 0; x < dims[2]; x++)
					for (k = 0; k < dims[3]; k++)
						((float *)w.data)[((h * dims[2] + x) *
							dims[3] + k) * dims[0] + o] =
							f[((o * dims[1] + h) *
							   dims[2] + x) * dims[3] + k];
	}
	rc = tfk_graph_const(c->g, NULL, &w, &in[1], c->err);
	tfk_tensor_release(&w);
	if (rc)
		return rc;
	strides[0] = strides[3] = dil[0] = dil[3] = 1;
	strides[1] = opt_i32(c, T, 2, 1);	/* stride_h */
	strides[2] = opt_i32(c, T, 1, 1);	/* stride_w */
	dil[1] = opt_i32(c, T, s_dil + 1, 1);	/* dilation_h_factor */
	dil[2] = opt_i32(c, T, s_dil, 1);
	at[0] = a_ints("strides", strides, 4);
	at[1] = TFK_A_STR("padding", padding(c, T));
	at[2] = a_ints("dilations", dil, 4);
	if ((rc = node(c, depthwise ? "DepthwiseConv2dNative" : "Conv2D", in,
		       2, at, 3, &y)) ||
	    (rc = optional_bias(c, 2, &y)) ||
	    (rc = act(c, opt_i8(c, T, s_act, 0), &y)))
		return rc;
	return set_out(c, 0, y);
}

static int pool(struct ctx *c, const char *tfop)
{
	static const char *T = "Pool2DOptions";
	int64_t ks[4], st[4];
	struct tfk_attr at[3];
	struct tfk_port x;
	int rc;

	ks[0] = ks[3] = st[0] = st[3] = 1;
	st[1] = opt_i32(c, T, 2, 1);
	st[2] = opt_i32(c, T, 1, 1);
	ks[1] = opt_i32(c, T, 4, 1);	/* filter_height */
	ks[2] = opt_i32(c, T, 3, 1);
	at[0] = a_ints("ksize", ks, 4);
	at[1] = a_ints("strides", st, 4);
	at[2] = TFK_A_STR("padding", padding(c, T));
	if ((rc = in_port(c, 0, &x)) ||
	    (rc = node(c, tfop, &x, 1, at, 3, &x)) ||
	    (rc = act(c, opt_i8(c, T, 5, 0), &x)))
		return rc;
	return set_out(c, 0, x);
}

/* Reshape x to the int vector v. */
static int reshape_to(struct ctx *c, struct tfk_port x, const int64_t *v,
		      int n, struct tfk_port *y)
{
	struct tfk_port in[2];
	int rc;

	in[0] = x;
	if ((rc = const_i32v(c, v, n, &in[1])))
		return rc;
	return node(c, "Reshape", in, 2, NULL, 0, y);
}

static int reshape(struct ctx *c)
{
	int64_t v[TFK_MAX_RANK];
	struct tfk_port x;
	int n = 0, rc, i;

	if ((rc = in_port(c, 0, &x)))
		return rc;
	if (c->op->n_inputs > 1 && c->op->inputs[1] >= 0 &&
	    !has_data(c, c->op->inputs[1])) {
		/* a shape computed at run time (SHAPE, STRIDED_SLICE, PACK:
		 * Keras 3's Flatten); the executor folds it while planning */
		struct tfk_port in[2];

		if ((rc = in_port(c, 1, &in[1])))
			return rc;
		if (c->max_work && !tfk_graph_const_value(c->g, in[1]))
			/* the shapes after it, and so their cost, would be
			 * known only while running */
			return op_err(c, TFK_EINVAL, "a new shape not known "
				      "before the run is refused under a "
				      "work limit");
		in[0] = x;
		if ((rc = node(c, "Reshape", in, 2, NULL, 0, &x)))
			return rc;
		return set_out(c, 0, x);
	}
	if (c->op->n_inputs > 1 && c->op->inputs[1] >= 0) {
		if ((rc = const_ints(c, 1, v, TFK_MAX_RANK, &n)))
			return rc;
	} else if (opt_table(c, "ReshapeOptions")) {
		struct tfk_fb_vec fv;

		if ((rc = tfk_fb_vector(opt_table(c, "ReshapeOptions"), 0, 4,
					&fv, c->err)) < 0)
			return rc;
		if (fv.len > TFK_MAX_RANK)
			return op_err(c, TFK_EINVAL, "new_shape of %u "
				      "dimensions", fv.len);
		for (i = 0; i < (int)fv.len; i++)
			v[i] = tfk_fb_vec_i32(&fv, (uint32_t)i);
		n = (int)fv.len;
	} else {
		const struct tfk_tfl_tensor *o;

		if (c->op->n_outputs < 1)
			return op_err(c, TFK_EINVAL, "no output");
		o = &c->s->tensors[c->op->outputs[0]];
		for (i = 0; i < o->rank; i++)
			v[i] = o->has_shape_signature ?
				o->shape_signature[i] : o->shape[i];
		n = o->rank;
	}
	if ((rc = reshape_to(c, x, v, n, &x)))
		return rc;
	return set_out(c, 0, x);
}

int tfk_tfl_slice_vec(const int64_t *a, int n, int64_t b, int64_t e,
		      int64_t s, int bm, int em, int elm, int sm, int offset,
		      int64_t *out, int *n_out, int *scalar, const char **why)
{
	int64_t lo, hi, cnt, i, d = n;

	*scalar = 0;
	if (elm & 1) {
		for (i = 0; i < n; i++)
			out[i] = a[i];
		*n_out = n;
		return 0;
	}
	if (!s) {
		*why = "strides[0] is 0";
		return -1;
	}
	if (offset)
		e += b;
	if (sm & 1) {
		b = b < 0 ? b + d : b;
		if (b < 0 || b >= d) {
			*why = "index out of range";
			return -1;
		}
		out[0] = a[b];
		*n_out = 1;
		*scalar = 1;
		return 0;
	}
	lo = s > 0 ? 0 : -1;
	hi = s > 0 ? d : d - 1;
	b = bm & 1 ? (s > 0 ? lo : hi) : b < 0 ? b + d : b;
	e = em & 1 ? (s > 0 ? hi : lo) : e < 0 ? e + d : e;
	b = b < lo ? lo : b > hi ? hi : b;
	e = e < lo ? lo : e > hi ? hi : e;
	cnt = s > 0 ? (e > b ? (e - b + s - 1) / s : 0) :
		(b > e ? (b - e - s - 1) / -s : 0);
	for (i = 0; i < cnt; i++)
		out[i] = a[b + i * s];
	*n_out = (int)cnt;
	return 0;
}

/* Const port p's integer values (a scalar or a vector of at most
 * TFK_MAX_RANK, INT32 or INT64) into v, their count into *n, rank into
 * *rank; 0 when p is no such Const. */
static int const_port_ints(const struct ctx *c, struct tfk_port p,
			   int64_t *v, int *n, int *rank)
{
	const struct tfk_tensor *t = tfk_graph_const_value(c->g, p);
	int64_t i, cnt;

	if (!t || (t->dtype != TFK_DT_INT32 && t->dtype != TFK_DT_INT64) ||
	    t->rank > 1 || (cnt = tfk_tensor_numel(t)) > TFK_MAX_RANK)
		return 0;
	for (i = 0; i < cnt; i++)
		v[i] = t->dtype == TFK_DT_INT32 ? ((const int32_t *)t->data)[i]
			: ((const int64_t *)t->data)[i];
	*n = (int)cnt;
	*rank = t->rank;
	return 1;
}

/* A Const of n ints of dtype dt (rank 0 when scalar). */
static int const_ints_port(struct ctx *c, enum tfk_dtype dt, const int64_t *v,
			   int n, int scalar, struct tfk_port *out)
{
	int64_t sh[1] = { n };
	struct tfk_tensor t;
	int rc, i;

	if ((rc = tfk_tensor_init(&t, dt, scalar ? 0 : 1, sh, c->err)))
		return rc;
	for (i = 0; i < n; i++) {
		if (dt == TFK_DT_INT32)
			((int32_t *)t.data)[i] = (int32_t)v[i];
		else
			((int64_t *)t.data)[i] = v[i];
	}
	rc = tfk_graph_const(c->g, NULL, &t, out, c->err);
	tfk_tensor_release(&t);
	return rc;
}

/* SHAPE: TF's Shape, out_type INT32 (default) or INT64; a Const when
 * the input's shape is known while building (the usual case: the fed
 * shapes are), so that the shape arithmetic after it folds here and
 * every node's shape, and cost, is known before the run. */
static int shape_op(struct ctx *c)
{
	int ty = opt_i8(c, "ShapeOptions", 0, TFK_TFL_INT32);
	struct tfk_attr at;
	struct tfk_port x;
	int rc;

	if (ty != TFK_TFL_INT32 && ty != TFK_TFL_INT64)
		return op_err(c, TFK_EINVAL, "out_type %s is not supported",
			      tfk_tfl_type_name(ty));
	at = TFK_A_TYPE("out_type", tfk_tfl_dtype(ty));
	if ((rc = in_port(c, 0, &x)))
		return rc;
	{
		const struct tfk_tdesc *xd = tfk_graph_desc(c->g, x);
		int64_t v[TFK_MAX_RANK];
		int d, known = xd->rank >= 0;

		for (d = 0; known && d < xd->rank; d++) {
			v[d] = xd->shape[d];
			known = v[d] >= 0 && (ty == TFK_TFL_INT64 ||
					      v[d] <= INT32_MAX);
		}
		if (known) {
			if ((rc = const_ints_port(c, tfk_tfl_dtype(ty), v,
						  xd->rank, 0, &x)))
				return rc;
			return set_out(c, 0, x);
		}
	}
	if (
	    (rc = node(c, "Shape", &x, 1, &at, 1, &x)))
		return rc;
	return set_out(c, 0, x);
}

/* STRIDED_SLICE: TF's StridedSlice with the five masks; offset (end
 * counted from begin) is folded into a constant end. */
static int strided_slice(struct ctx *c)
{
	static const char *T = "StridedSliceOptions";
	static const char *const masks[5] = { "begin_mask", "end_mask",
		"ellipsis_mask", "new_axis_mask", "shrink_axis_mask" };
	struct tfk_attr at[5];
	struct tfk_port in[4], y;
	int k, rc;

	for (k = 0; k < 5; k++)
		at[k] = TFK_A_INT(masks[k], opt_i32(c, T, k, 0));
	for (k = 0; k < 4; k++)
		if ((rc = in_port(c, k, &in[k])))
			return rc;
	if (opt_i8(c, T, 5, 0)) {
		int64_t b[TFK_MAX_RANK], e[TFK_MAX_RANK];
		int nb, ne, i;

		if ((rc = const_ints(c, 1, b, TFK_MAX_RANK, &nb)) ||
		    (rc = const_ints(c, 2, e, TFK_MAX_RANK, &ne)))
			return tfk_err_prefix(c->err, "offset");
		if (nb != ne)
			return op_err(c, TFK_EINVAL, "begin has %d values, "
				      "end %d", nb, ne);
		for (i = 0; i < nb; i++)
			e[i] += b[i];
		if ((rc = const_i32v(c, e, ne, &in[2])))
			return rc;
	}
	{
		/* a slice of a known shape vector: folded */
		int64_t a[TFK_MAX_RANK], b[TFK_MAX_RANK], e[TFK_MAX_RANK],
			s[TFK_MAX_RANK], o[TFK_MAX_RANK];
		int na, nb, ne, ns, ra, r1, r2, r3, no, sc;
		const char *why = NULL;
		const struct tfk_tensor *xv = tfk_graph_const_value(c->g,
								    in[0]);

		if (const_port_ints(c, in[0], a, &na, &ra) && ra == 1 &&
		    const_port_ints(c, in[1], b, &nb, &r1) && nb == 1 &&
		    const_port_ints(c, in[2], e, &ne, &r2) && ne == 1 &&
		    const_port_ints(c, in[3], s, &ns, &r3) && ns == 1 &&
		    !(at[3].v.i & 1)) {	/* offset: in[2] made above */
			if (tfk_tfl_slice_vec(a, na, b[0], e[0], s[0],
					      (int)at[0].v.i, (int)at[1].v.i,
					      (int)at[2].v.i, (int)at[4].v.i,
					      0, o, &no, &sc, &why))
				return op_err(c, TFK_EINVAL, "%s", why);
			if ((rc = const_ints_port(c, xv->dtype, o, no, sc,
						  &y)))
				return rc;
			return set_out(c, 0, y);
		}
	}
	if ((rc = node(c, "StridedSlice", in, 4, at, 5, &y)))
		return rc;
	return set_out(c, 0, y);
}

/* PACK: TF's Pack (values_count is the number of inputs). */
/* GATHER: GatherV2 with the options' axis as a Const and batch_dims
 * (TFLite's gather.cc is TF's GatherV2: any params type, strings
 * included, int32 or int64 indices, out-of-range ones an error). */
static int gather(struct ctx *c)
{
	static const char *T = "GatherOptions";
	struct tfk_port in[3], y;
	struct tfk_attr at[1];
	int64_t axis = opt_i32(c, T, 0, 0);
	int rc;

	if ((rc = in_port(c, 0, &in[0])) || (rc = in_port(c, 1, &in[1])) ||
	    (rc = const_ints_port(c, TFK_DT_INT32, &axis, 1, 1, &in[2])))
		return rc;
	at[0] = TFK_A_INT("batch_dims", opt_i32(c, T, 1, 0));
	if ((rc = node(c, "GatherV2", in, 3, at, 1, &y)))
		return rc;
	return set_out(c, 0, y);
}

static int pack(struct ctx *c)
{
	static const char *T = "PackOptions";
	struct tfk_port in[TFK_OP_MAX_ARGS * 8], y;
	int n = c->op->n_inputs, k, rc;
	struct tfk_attr at[2];

	if (n < 1 || n > (int)(sizeof(in) / sizeof(in[0])))
		return op_err(c, TFK_EINVAL, "%d inputs", n);
	if (opt_table(c, T) && opt_i32(c, T, 0, n) != n)
		return op_err(c, TFK_EINVAL, "values_count %d, but %d inputs",
			      (int)opt_i32(c, T, 0, n), n);
	for (k = 0; k < n; k++)
		if ((rc = in_port(c, k, &in[k])))
			return rc;
	at[0] = TFK_A_INT("N", n);
	at[1] = TFK_A_INT("axis", opt_i32(c, T, 1, 0));
	if (n <= TFK_MAX_RANK && (at[1].v.i == 0 || at[1].v.i == -1)) {
		/* known scalars of one type (a shape being built): folded */
		const struct tfk_tensor *t0 = tfk_graph_const_value(c->g,
								    in[0]);
		int64_t v[TFK_MAX_RANK], one[TFK_MAX_RANK];
		int cnt, r, ok = t0 != NULL;

		for (k = 0; ok && k < n; k++) {
			const struct tfk_tensor *t =
				tfk_graph_const_value(c->g, in[k]);

			ok = t && t->dtype == t0->dtype &&
				const_port_ints(c, in[k], one, &cnt, &r) &&
				r == 0 && cnt == 1;
			if (ok)
				v[k] = one[0];
		}
		if (ok) {
			if ((rc = const_ints_port(c, t0->dtype, v, n, 0, &y)))
				return rc;
			return set_out(c, 0, y);
		}
	}
	if ((rc = node(c, "Pack", in, n, at, 2, &y)))
		return rc;
	return set_out(c, 0, y);
}

static int softmax(struct ctx *c)
{
	float beta = opt_f32(c, "SoftmaxOptions", 0, 1.0f);
	struct tfk_port x, in[2];
	int rc;

	if ((rc = in_port(c, 0, &x)))
		return rc;
	if (beta != 1.0f) {
		in[0] = x;
		if ((rc = const_f32(c, beta, &in[1])) ||
		    (rc = node(c, "Mul", in, 2, NULL, 0, &x)))
			return rc;
	}
	if ((rc = node(c, "Softmax", &x, 1, NULL, 0, &x)))
		return rc;
	return set_out(c, 0, x);
}

static int concat(struct ctx *c)
{
	static const char *T = "ConcatenationOptions";
	struct tfk_port in[TFK_OP_MAX_ARGS * 8 + 1], y;
	int64_t axis = opt_i32(c, T, 0, 0);
	struct tfk_attr at = TFK_A_INT("N", c->op->n_inputs);
	int k, rc;

	if (c->op->n_inputs < 1 ||
	    c->op->n_inputs >= (int)(sizeof(in) / sizeof(in[0])))
		return op_err(c, TFK_EINVAL, "%d inputs", c->op->n_inputs);
	for (k = 0; k < c->op->n_inputs; k++)
		if ((rc = in_port(c, k, &in[k])))
			return rc;
	{
		/* ConcatV2's axis: an int32 scalar */
		struct tfk_tensor a;

		if ((rc = tfk_tensor_init(&a, TFK_DT_INT32, 0, NULL, c->err)))
			return rc;
		*(int32_t *)a.data = (int32_t)axis;
		rc = tfk_graph_const(c->g, NULL, &a, &in[k], c->err);
		tfk_tensor_release(&a);
		if (rc)
			return rc;
	}
	if ((rc = node(c, "ConcatV2", in, k + 1, &at, 1, &y)) ||
	    (rc = act(c, opt_i8(c, T, 1, 0), &y)))
		return rc;
	return set_out(c, 0, y);
}

/* x and a constant int input 1 as a Const: Mean, Pad, Transpose, ... */
static int with_const_ints(struct ctx *c, const char *tfop,
			   const struct tfk_attr *at, int n_at)
{
	int64_t v[TFK_MAX_RANK * 2];
	const struct tfk_tfl_tensor *x;
	struct tfk_port in[2], y;
	int n, rc;

	if ((rc = in_port(c, 0, &in[0])) ||
	    (rc = const_ints(c, 1, v, TFK_MAX_RANK * 2, &n)))
		return rc;
	x = &c->s->tensors[c->op->inputs[1]];
	{
		int32_t w[TFK_MAX_RANK * 2];
		struct tfk_tensor t;
		int i;

		for (i = 0; i < n; i++)
			w[i] = (int32_t)v[i];
		if ((rc = tfk_tensor_init(&t, TFK_DT_INT32, x->rank, x->shape,
					  c->err)))
			return rc;
		memcpy(t.data, w, t.nbytes);
		rc = tfk_graph_const(c->g, NULL, &t, &in[1], c->err);
		tfk_tensor_release(&t);
		if (rc)
			return rc;
	}
	if ((rc = node(c, tfop, in, 2, at, n_at, &y)))
		return rc;
	return set_out(c, 0, y);
}

static int reduce(struct ctx *c, const char *tfop)
{
	struct tfk_attr at = TFK_A_BOOL("keep_dims",
					opt_i8(c, "ReducerOptions", 0, 0));

	return with_const_ints(c, tfop, &at, 1);
}

static int squeeze(struct ctx *c)
{
	const struct tfk_fb_table *t = opt_table(c, "SqueezeOptions");
	int64_t dims[TFK_MAX_RANK];
	struct tfk_attr at;
	struct tfk_fb_vec v;
	struct tfk_port x;
	int rc, n = 0, i;

	if (t) {
		if ((rc = tfk_fb_vector(t, 0, 4, &v, c->err)) < 0)
			return rc;
		if (v.len > TFK_MAX_RANK)
			return op_err(c, TFK_EINVAL, "%u squeeze_dims", v.len);
		for (i = 0; i < (int)v.len; i++)
			dims[i] = tfk_fb_vec_i32(&v, (uint32_t)i);
		n = (int)v.len;
	}
	at = a_ints("squeeze_dims", dims, n);
	if ((rc = in_port(c, 0, &x)) ||
	    (rc = node(c, "Squeeze", &x, 1, &at, 1, &x)))
		return rc;
	return set_out(c, 0, x);
}

static int resize(struct ctx *c, const char *tfop, const char *table,
		  int s_align)
{
	struct tfk_attr at[2] = {
		TFK_A_BOOL("align_corners", opt_i8(c, table, s_align, 0)),
		TFK_A_BOOL("half_pixel_centers",
			   opt_i8(c, table, s_align + 1, 0)),
	};

	return with_const_ints(c, tfop, at, 2);
}

static int leaky_relu(struct ctx *c)
{
	struct tfk_attr at = TFK_A_FLOAT("alpha", opt_f32(c, "LeakyReluOptions",
							  0, 0.2f));
	struct tfk_port x;
	int rc;

	if ((rc = in_port(c, 0, &x)) ||
	    (rc = node(c, "LeakyRelu", &x, 1, &at, 1, &x)))
		return rc;
	return set_out(c, 0, x);
}

static int dequantize(struct ctx *c)
{
	int t = c->op->n_inputs > 0 ? c->op->inputs[0] : -1;
	struct tfk_port p;
	int rc;

	if (t < 0 || !has_data(c, t))
		return op_err(c, TFK_EINVAL, "DEQUANTIZE of a computed tensor "
			      "(a quantized model) is not supported by run "
			      "yet");
	if ((rc = make_const(c, t, 1, &p)))
		return rc;
	return set_out(c, 0, p);
}

static int convert_op(struct ctx *c)
{
	int32_t code = c->m->opcodes[c->op->opcode_index].builtin_code;

	switch (code) {
	case TFK_TFL_ADD: return binary(c, "AddV2", "AddOptions");
	case TFK_TFL_SUB: return binary(c, "Sub", "SubOptions");
	case TFK_TFL_MUL: return binary(c, "Mul", "MulOptions");
	case TFK_TFL_DIV: return binary(c, "RealDiv", "DivOptions");
	case 55: return binary(c, "Maximum", NULL);	/* MAXIMUM */
	case 57: return binary(c, "Minimum", NULL);	/* MINIMUM */
	case 78: return binary(c, "Pow", NULL);		/* POW */
	case 99: return binary(c, "SquaredDifference", NULL);
	case TFK_TFL_FULLY_CONNECTED: return fully_connected(c);
	case TFK_TFL_CONV_2D: return conv2d(c, 0);
	case TFK_TFL_DEPTHWISE_CONV_2D: return conv2d(c, 1);
	case TFK_TFL_MAX_POOL_2D: return pool(c, "MaxPool");
	case TFK_TFL_AVERAGE_POOL_2D: return pool(c, "AvgPool");
	case TFK_TFL_RESHAPE: return reshape(c);
	case TFK_TFL_SHAPE: return shape_op(c);
	case TFK_TFL_STRIDED_SLICE: return strided_slice(c);
	case TFK_TFL_PACK: return pack(c);
	case TFK_TFL_GATHER: return gather(c);
	case TFK_TFL_SOFTMAX: return softmax(c);
	case 50: return unary(c, "LogSoftmax");		/* LOG_SOFTMAX */
	case TFK_TFL_CONCATENATION: return concat(c);
	case TFK_TFL_MEAN: return reduce(c, "Mean");
	case 74: return reduce(c, "Sum");		/* SUM */
	case 82: return reduce(c, "Max");		/* REDUCE_MAX */
	case 89: return reduce(c, "Min");		/* REDUCE_MIN */
	case TFK_TFL_PAD: return with_const_ints(c, "Pad", NULL, 0);
	case 39: return with_const_ints(c, "Transpose", NULL, 0);
	case 70: return with_const_ints(c, "ExpandDims", NULL, 0);
	case TFK_TFL_SQUEEZE: return squeeze(c);
	case 23: return resize(c, "ResizeBilinear", "ResizeBilinearOptions",
			       2);
	case 97: return resize(c, "ResizeNearestNeighbor",
			       "ResizeNearestNeighborOptions", 0);
	case TFK_TFL_RELU: return unary(c, "Relu");
	case TFK_TFL_RELU6: return unary(c, "Relu6");
	case TFK_TFL_LOGISTIC: return unary(c, "Sigmoid");
	case TFK_TFL_TANH: return unary(c, "Tanh");
	case 111: return unary(c, "Elu");		/* ELU */
	case 47: return unary(c, "Exp");		/* EXP */
	case 73: return unary(c, "Log");		/* LOG */
	case 75: return unary(c, "Sqrt");		/* SQRT */
	case 76: return unary(c, "Rsqrt");		/* RSQRT */
	case 92: return unary(c, "Square");		/* SQUARE */
	case 59: return unary(c, "Neg");		/* NEG */
	case 101: return unary(c, "Abs");		/* ABS */
	case 8: return unary(c, "Floor");		/* FLOOR */
	case 98: return leaky_relu(c);			/* LEAKY_RELU */
	case 20: {					/* RELU_N1_TO_1 */
		struct tfk_port x;
		int rc;

		if ((rc = in_port(c, 0, &x)) ||
		    (rc = act(c, TFK_TFL_ACT_RELU_N1_TO_1, &x)))
			return rc;
		return set_out(c, 0, x);
	}
	case TFK_TFL_DEQUANTIZE: return dequantize(c);
	case TFK_TFL_QUANTIZE:
		return op_err(c, TFK_EINVAL, "quantized models are not "
			      "supported by run yet");
	case TFK_TFL_CUSTOM:
		return op_err(c, TFK_EINVAL, "custom op '%s' is not supported "
			      "by run", op_name(c));
	default:
		return op_err(c, TFK_EINVAL, "op %s (%d) is not supported by "
			      "run", op_name(c), code);
	}
}

/* Quantized activations are the int8 backend's (not here yet). */
static int refuse_quantized(struct ctx *c)
{
	int i, k;

	for (i = 0; i < c->s->n_ops; i++) {
		const struct tfk_tfl_op *o = &c->s->ops[i];

		for (k = 0; k < o->n_inputs + o->n_outputs; k++) {
			int t = k < o->n_inputs ? o->inputs[k] :
				o->outputs[k - o->n_inputs];
			const struct tfk_tfl_tensor *x;

			if (t < 0)
				continue;
			x = &c->s->tensors[t];
			if (is_quantized(x->type) && !has_data(c, t))
				return tfk_errf(c->err, TFK_EINVAL, "tensor %d "
						"'%s' is %s: quantized models "
						"are not supported by run yet",
						t, x->name,
						tfk_tfl_type_name(x->type));
		}
	}
	for (i = 0; i < c->s->n_inputs; i++) {
		const struct tfk_tfl_tensor *x =
			&c->s->tensors[c->s->inputs[i]];

		if (is_quantized(x->type))
			return tfk_errf(c->err, TFK_EINVAL, "input tensor %d "
					"'%s' is %s: quantized models are not "
					"supported by run yet",
					c->s->inputs[i], x->name,
					tfk_tfl_type_name(x->type));
	}
	return 0;
}

/* a * b of two counts (>= 0), INT64_MAX when that overflows */
static int64_t mul_sat(int64_t a, int64_t b)
{
	return a && b > INT64_MAX / a ? INT64_MAX : a * b;
}

/* Elements of d, unknown and empty dimensions as 1 (a kernel's loops
 * over the other dimensions still run: fuzz-tflrun timed out in a
 * conv of [2, 1157627908, 0, 2]); saturates. */
static int64_t numel_sat(const struct tfk_tdesc *d)
{
	int64_t n = 1;
	int k;

	for (k = 0; k < d->rank; k++)
		n = mul_sat(n, d->shape[k] > 0 ? d->shape[k] : 1);
	return n;
}

/* The cost of node i (tfk_tflite_graph_limited): its first input's
 * elements plus its outputs' times the taps behind each value. */
static int64_t node_work(const struct ctx *c, int i)
{
	const struct tfk_node *n = tfk_graph_node(c->g, i);
	const char *op = n->op->name;
	int64_t taps = 1, w = 0, out = 0;
	int k;

	if (n->n_inputs > 0 && strcmp(op, "Shape"))
		/* Shape reads its input's dims, never its data */
		w = numel_sat(tfk_graph_desc(c->g, n->inputs[0]));
	if ((!strcmp(op, "MatMul") || !strcmp(op, "Conv2D") ||
	     !strcmp(op, "TFLiteHybridMatMul") ||
	     !strcmp(op, "DepthwiseConv2dNative")) && n->n_inputs > 1 &&
	    n->n_outputs > 0 && n->outputs[0].rank > 0) {
		/* weights per output channel: [K, N] (or [N, K]) / N,
		 * HWIO / O, HWIM over I * M channels / (I * M) */
		int64_t ch = n->outputs[0].shape[n->outputs[0].rank - 1];

		taps = numel_sat(tfk_graph_desc(c->g, n->inputs[1])) /
			(ch > 0 ? ch : 1);
	} else if (!strcmp(op, "MaxPool") || !strcmp(op, "AvgPool")) {
		const struct tfk_attr_value *a = tfk_node_attr(n, "ksize");

		for (k = 0; a && a->kind == TFK_ATTR_LIST_INT &&
		     k < a->list.n; k++)
			taps = mul_sat(taps, a->list.i[k] > 0 ?
				       a->list.i[k] : 1);
	}
	for (k = 0; k < n->n_outputs; k++) {
		int64_t e = numel_sat(&n->outputs[k]);

		out = out > INT64_MAX - e ? INT64_MAX : out + e;
	}
	out = mul_sat(out, taps > 0 ? taps : 1);
	return out > INT64_MAX - w ? INT64_MAX : out + w;
}

/* Nodes [from, to) are operator c->op_i's: their cost against the
 * limit. */
static int charge(struct ctx *c, int from, int to)
{
	int i;

	for (i = from; i < to && c->max_work; i++) {
		int64_t w = node_work(c, i);

		if (w > c->max_work - c->work)
			return op_err(c, TFK_EINVAL, "the run would take more "
				      "than %lld operations (the limit)",
				      (long long)c->max_work);
		c->work += w;
	}
	return 0;
}

static int build(struct ctx *c, const struct tfk_tdesc *in)
{
	char name[32];
	int i, rc, n0;

	if ((rc = refuse_quantized(c)) ||
	    (rc = tfk_tflite_check_inputs(c->m, c->sg, c->err)))
		return rc;
	for (i = 0; i < c->s->n_inputs; i++) {
		int t = c->s->inputs[i];
		const struct tfk_tfl_tensor *x = &c->s->tensors[t];
		enum tfk_dtype dt = tfk_tfl_dtype(x->type);

		if (dt == TFK_DT_INVALID || dt == TFK_DT_HALF)
			return tfk_errf(c->err, TFK_EINVAL, "input tensor %d "
					"'%s' of type %s is not supported by "
					"run", t, x->name,
					tfk_tfl_type_name(x->type));
		snprintf(name, sizeof(name), "t%d", t);
		if (c->port[t].node >= 0)
			continue;	/* the same tensor listed twice */
		if (in)
			rc = tfk_graph_placeholder(c->g, name, dt, in[i].rank,
						   in[i].shape, &c->port[t],
						   c->err);
		else
			rc = tfk_graph_placeholder(c->g, name, dt, x->rank,
						   x->has_shape_signature ?
						   x->shape_signature :
						   x->shape, &c->port[t],
						   c->err);
		if (rc)
			return rc;
	}
	for (i = 0; i < c->s->n_ops; i++) {
		c->op = &c->s->ops[i];
		c->op_i = i;
		n0 = tfk_graph_n_nodes(c->g);
		if ((rc = convert_op(c)) ||
		    (rc = charge(c, n0, tfk_graph_n_nodes(c->g))))
			return rc;
	}
	c->op = NULL;
	for (i = 0; i < c->s->n_outputs; i++) {
		int t = c->s->outputs[i];

		if (c->port[t].node < 0) {
			if (!has_data(c, t))
				return tfk_errf(c->err, TFK_EINVAL, "output "
						"tensor %d '%s' is not computed "
						"by any operator", t,
						c->s->tensors[t].name);
			if ((rc = make_const(c, t, 0, &c->port[t])))
				return rc;
		}
		snprintf(name, sizeof(name), "t%d", t);
		if ((rc = tfk_graph_set_output(c->g, name, c->port[t], c->err)))
			return rc;
	}
	return 0;
}

int tfk_tflite_graph(const struct tfk_tflite *m, int sg,
		     const struct tfk_tdesc *in, struct tfk_graph **g,
		     struct tfk_err *err)
{
	return tfk_tflite_graph_limited(m, sg, in, 0, g, err);
}

int tfk_tflite_graph_limited(const struct tfk_tflite *m, int sg,
			     const struct tfk_tdesc *in, int64_t max_work,
			     struct tfk_graph **g, struct tfk_err *err)
{
	struct ctx c;
	int rc, i;

	*g = NULL;
	if (sg < 0 || sg >= m->n_subgraphs)
		return tfk_errf(err, TFK_EINVAL, "no subgraph %d (the model "
				"has %d)", sg, m->n_subgraphs);
	memset(&c, 0, sizeof(c));
	c.m = m;
	c.s = &m->subgraphs[sg];
	c.sg = sg;
	c.max_work = max_work > 0 ? max_work : 0;
	c.err = err;
	c.port = tfk_calloc((size_t)c.s->n_tensors + 1, sizeof(*c.port));
	if (!c.port)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (i = 0; i < c.s->n_tensors; i++)
		c.port[i].node = -1;
	rc = tfk_graph_new(&c.g, err);
	if (!rc)
		rc = build(&c, in);
	tfk_free(c.port);
	if (rc) {
		tfk_graph_free(c.g);
		return tfk_err_prefix(err, "subgraph %d", sg);
	}
	*g = c.g;
	return 0;
}
