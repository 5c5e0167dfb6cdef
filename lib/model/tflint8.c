/*
 * tflint8.c - running quantized (int8) .tflite subgraphs with the
 * TFLite-exact int8 kernels of lib/kernels/int8.
 *
 * Approach: a direct interpreter, not the graph IR: the registry has no
 * int8 ops, and a full-integer model is a straight line of operators
 * whose every parameter (multipliers, shifts, lookup tables) TFLite
 * computes once in Prepare; here each operator is prepared and run in
 * file order, one buffer per tensor. Shapes are the file's, with the
 * batch (dimension 0 of a tensor whose shape_signature has -1 there)
 * replaced by the fed batch, which is the only dynamic dimension a
 * converter writes.
 *
 * Operators: QUANTIZE (float -> int8, int8 -> int8), DEQUANTIZE,
 * FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D, MAX_POOL_2D,
 * AVERAGE_POOL_2D, RESHAPE, SOFTMAX, ADD, SUB, MUL, LOGISTIC, TANH,
 * RELU, RELU6, CONCATENATION (int8 inputs sharing the output's parameters,
 * uint8 ones rescaled where they differ,
 * as TF's converter writes them), PAD, MEAN (constant axes, either
 * keep_dims), and SHAPE, STRIDED_SLICE, PACK over int32 shape vectors
 * (evaluated by the planning pass, so that a RESHAPE to a shape computed
 * at run time, Keras 3's Flatten, knows its output before any buffer is
 * made). Anything else is refused by operator index and name.
 *
 * The interpreter is prepared once (tfk_tflite_int8_new) and run many
 * times, as TFLite's Interpreter: each tensor's buffer is kept for the
 * next run while it is large enough, and FC/CONV_2D weights are packed
 * for the fast kernels on the first run only (they are constants), as
 * are each operator's Prepare results (multipliers, shifts, lookup
 * tables: functions of constant quantization parameters). A later run
 * is then the kernels and shape checks, what `tfk-lite bench` times.
 *
 * UINT8 tensors (TF1-era asymmetric uint8 models, and the uint8 inputs
 * and outputs of an int8 model converted with inference_input_type
 * tf.uint8) run through the same int8 kernels: a uint8 tensor is held
 * as int8 bytes v - 128 with its zero point moved by -128 (qp_of), its
 * constants copied so once (tfk_tflite_int8_new), its feeds and outputs
 * moved at the edges. TFLite's uint8 kernels compute on v - zp, which
 * the move keeps, and clamp to [0, 255], which it maps onto [-128, 127],
 * so every operator gives the same bytes (moved by 128) except the two
 * whose uint8 rounding is not that of the moved int8 values: the
 * average pool (uint8 rounds (sum + count / 2) / count on the uint8
 * sum; tfk_int8_avg_pool_u8) and SOFTMAX (its uint8 output
 * rounding; run on the uint8 bytes themselves). Rejected: a uint8 copy
 * of every kernel (twice the code for the one arithmetic).
 */
#include "model/lite.h"
#include "model/lite-impl.h"

#include "kernels/cpu.h"
#include "kernels/int8.h"
#include "util/alloc.h"
#include "util/err.h"

#include <stdio.h>
#include <string.h>

/* An operator's parameters as TFLite's Prepare makes them: they depend
 * only on constant quantization, so the first run makes them. */
struct prep {
	int ready;
	struct tfk_int8_rq rq;	/* FULLY_CONNECTED, CONV_2D, DEPTHWISE */
	union {
		struct tfk_int8_softmax sm;
		struct tfk_int8_bin bin;
		struct tfk_int8_lut lut;
	} u;
};

/* The value of an int32 shape tensor (SHAPE, STRIDED_SLICE and PACK
 * outputs), computed by the planning pass so that a RESHAPE reading it
 * knows its output shape before any buffer is made; the kernel pass
 * copies it into the tensor's buffer. */
struct ivec {
	int known;
	int n;
	int32_t v[TFK_MAX_RANK];
};

/* The prepared interpreter (struct tfk_tfl_int8 of tflite.h): buffers
 * and packed weights outlive a run, so that a second run of the same
 * shapes allocates and packs nothing. */
struct i8run {
	const struct tfk_tflite *m;
	const struct tfk_tfl_subgraph *s;
	int sg;
	int64_t batch;
	void **data;		/* per tensor; constants point into the file */
	int *owned;
	size_t *cap;		/* bytes of an owned buffer */
	int *rank;		/* runtime shapes, per tensor */
	int64_t (*shape)[TFK_MAX_RANK];
	struct tfk_int8_packed *pk;	/* per operator, packed on first use */
	uint8_t *packed;
	struct prep *prep;	/* per operator, made on first use */
	struct tfk_err *err;
	int op_i;
	int data_rc;		/* why data_of last returned NULL */
	struct tfk_conv_ws ws;	/* the fast kernels' scratch */
	int threads;		/* of the fast FC/CONV_2D */
	int64_t work, max_work;	/* this run's so far; its limit, 0 none */
	struct ivec *iv;	/* per tensor: int32 shape values planned */
	int8_t **moved;		/* per UINT8 constant: its bytes - 128 */
	int *type;		/* per tensor: its type in this run */
};

struct tfk_tfl_int8 {
	struct i8run r;
};

/* Largest buffer one tensor may take: a corrupt file's absurd shapes
 * are refused rather than allocated. */
#define MAX_TENSOR_BYTES ((int64_t)1 << 30)

/* The types the int8 kernels read and write (UINT8 moved by 128). */
static int is8(int type)
{
	return type == TFK_TFL_INT8 || type == TFK_TFL_UINT8;
}

static int is_q(int type)
{
	return type == TFK_TFL_INT8 || type == TFK_TFL_UINT8 ||
		type == TFK_TFL_INT16;
}

int tfk_tflite_is_int8(const struct tfk_tflite *m, int sg)
{
	const struct tfk_tfl_subgraph *s = &m->subgraphs[sg];
	int k;

	for (k = 0; k < s->n_ops; k++) {
		int32_t code = m->opcodes[s->ops[k].opcode_index].builtin_code;
		int t = s->ops[k].n_outputs ? s->ops[k].outputs[0] : -1;

		if (code == TFK_TFL_QUANTIZE)
			return 1;
		if (t >= 0 && is_q(s->tensors[t].type))
			return 1;
	}
	return 0;
}

static const char *op_name(const struct i8run *r)
{
	const struct tfk_tfl_op *op = &r->s->ops[r->op_i];
	const char *nm = tfk_tfl_op_name(
		r->m->opcodes[op->opcode_index].builtin_code);

	return nm ? nm : "UNKNOWN";
}

static int op_err(struct i8run *r, const char *fmt, const char *a)
{
	return tfk_errf(r->err, TFK_EINVAL, "operator %d (%s): %s%s", r->op_i,
			op_name(r), fmt, a ? a : "");
}

static int is_const(const struct i8run *r, int t)
{
	return r->m->buffers[r->s->tensors[t].buffer].size > 0;
}

/* The file's shape of tensor t with the batch replaced (a dynamic
 * dimension 0) into shape; its rank. A constant keeps its shape: its
 * bytes are the file's, whatever its shape_signature says (TFLite
 * reads the shape only, too). */
static int file_shape(const struct i8run *r, int t, int64_t *shape)
{
	const struct tfk_tfl_tensor *x = &r->s->tensors[t];
	int k;

	for (k = 0; k < x->rank; k++)
		shape[k] = x->shape[k];
	if (x->rank && x->has_shape_signature && x->shape_signature[0] < 0 &&
	    !is_const(r, t))
		shape[0] = r->batch;
	return x->rank;
}

/* The runtime shape of tensor t (as fed, or as its operator made it). */
static int shape_of(const struct i8run *r, int t, int64_t *shape)
{
	int k;

	for (k = 0; k < r->rank[t]; k++)
		shape[k] = r->shape[t][k];
	return r->rank[t];
}

static void set_shape(struct i8run *r, int t, int rank, const int64_t *sh)
{
	int k;

	r->rank[t] = rank;
	for (k = 0; k < rank; k++)
		r->shape[t][k] = sh[k];
}

static int64_t numel_of(const struct i8run *r, int t)
{
	int64_t sh[TFK_MAX_RANK], n = 1;
	int k, rank = shape_of(r, t, sh);

	for (k = 0; k < rank; k++)
		n *= sh[k];
	return n;
}

/* The data of tensor t: the file's bytes for a constant (its extent
 * checked when the interpreter was made), else the buffer
 * check_extents made for this run; NULL (data_rc set) for a tensor no
 * extent was checked for. */
static void *data_of(struct i8run *r, int t)
{
	const struct tfk_tfl_buffer *b =
		&r->m->buffers[r->s->tensors[t].buffer];

	if (b->size && r->moved[t])
		return r->moved[t];
	if (b->size)
		return (void *)(b->offset > 1 ? r->m->p + b->offset : b->data);
	if (!r->data[t])
		r->data_rc = tfk_errf(r->err, TFK_EINVAL, "tensor %d '%s' has "
				      "no buffer", t, r->s->tensors[t].name);
	return r->data[t];
}

/* Tensor t's buffer for its runtime shape: elements times the type's
 * size (1 byte for a type without one: int8 kernels write bytes), kept
 * from an earlier run when it is large enough. 0, TFK_EINVAL (over
 * MAX_TENSOR_BYTES) or TFK_ENOMEM. */
static int make_buffer(struct i8run *r, int t)
{
	const struct tfk_tfl_tensor *x = &r->s->tensors[t];
	/* the run's type, not the file's: ADD, SUB and MUL give their
	 * output their second input's (a FLOAT32 sum of an INT8 tensor
	 * overran a buffer sized by the file's INT8) */
	size_t es = tfk_tfl_type_size(r->type[t]);
	int64_t n;
	int rc;

	if (!es)
		es = 1;

	if ((rc = tfk_shape_numel(r->rank[t], r->shape[t], es, &n, r->err)))
		return tfk_err_prefix(r->err, "tensor %d '%s'", t, x->name);
	if (n * (int64_t)es > MAX_TENSOR_BYTES)
		return tfk_errf(r->err, TFK_EINVAL, "tensor %d '%s' would take "
				"%lld bytes", t, x->name,
				(long long)(n * (int64_t)es));
	if (r->owned[t] && r->cap[t] >= ((size_t)n + 1) * es)
		return 0;
	if (r->owned[t])
		tfk_free(r->data[t]);
	r->owned[t] = 0;
	r->data[t] = tfk_calloc((size_t)n + 1, es);
	if (!r->data[t])
		return tfk_errf(r->err, TFK_ENOMEM, "out of memory");
	r->cap[t] = ((size_t)n + 1) * es;
	r->owned[t] = 1;
	return 0;
}

/*
 * What the run may touch, checked once its shapes are resolved (the
 * planning pass) and before any kernel: each tensor an operator reads
 * or writes, each input and each output. A constant keeps its file
 * shape, whose extent tfk_tflite_int8_new checked, so only its runtime
 * shape is compared with it here; every other tensor gets a buffer of
 * its runtime size. The kernels then touch, of each tensor, at most its
 * elements times its element size (at least one byte), which is what
 * each buffer holds.
 */
static int check_extents(struct i8run *r)
{
	const struct tfk_tfl_subgraph *s = r->s;
	int i, k, t, rc;

	for (i = -2; i < s->n_ops; i++) {
		const int32_t *v = i == -2 ? s->inputs : i == -1 ? s->outputs :
			s->ops[i].inputs;
		int n = i == -2 ? s->n_inputs : i == -1 ? s->n_outputs :
			s->ops[i].n_inputs + s->ops[i].n_outputs;

		for (k = 0; k < n; k++) {
			t = i >= 0 && k >= s->ops[i].n_inputs ?
				s->ops[i].outputs[k - s->ops[i].n_inputs] :
				v[k];
			if (t < 0)
				continue;
			if (is_const(r, t)) {
				int64_t sh[TFK_MAX_RANK];

				if (!tfk_shape_equal(r->rank[t], r->shape[t],
						     file_shape(r, t, sh), sh))
					return tfk_errf(r->err, TFK_EINVAL,
							"tensor %d '%s': a "
							"constant's shape "
							"changed", t,
							s->tensors[t].name);
			} else if ((rc = make_buffer(r, t))) {
				return rc;
			}
		}
	}
	return 0;
}

/* Per-tensor parameters (scale[0], zp[0]) or per channel; qp borrows
 * zp32 storage of cap entries. */
static int qp_of(struct i8run *r, int t, struct tfk_int8_qp *qp,
		 int32_t *zp32, int cap)
{
	const struct tfk_tfl_tensor *x = &r->s->tensors[t];
	int k;

	if (!x->has_quant || x->quant.n_scale < 1)
		return op_err(r, "tensor has no quantization: ", x->name);
	if (x->quant.n_scale > cap)
		return op_err(r, "too many channels: ", x->name);
	if (x->quant.n_zero_point && x->quant.n_zero_point != x->quant.n_scale)
		return op_err(r, "zero points and scales differ in number: ",
			      x->name);
	for (k = 0; k < x->quant.n_scale; k++)	/* none given: 0 */
		zp32[k] = (x->quant.n_zero_point ?
			   (int32_t)x->quant.zero_point[k] : 0) -
			(r->type[t] == TFK_TFL_UINT8 ? 128 : 0);
	qp->scale = x->quant.scale;
	qp->zp = zp32;
	qp->n = x->quant.n_scale;
	return 0;
}

static int opt_i32(const struct tfk_tfl_op *op, int slot, int32_t def,
		   struct tfk_err *err)
{
	int32_t v = def;

	if (op->has_options && tfk_fb_i32(&op->options, slot, def, &v, err))
		return def;
	return v;
}

static int opt_u8(const struct tfk_tfl_op *op, int slot, struct tfk_err *err)
{
	uint8_t v = 0;

	if (op->has_options && tfk_fb_u8(&op->options, slot, 0, &v, err))
		return 0;
	return v;
}

#define MAXCH 4096

/* The values of int32 tensor t, a scalar or a vector of at most
 * TFK_MAX_RANK values: a constant's, or those the planning pass
 * computed for it (struct ivec). 0 or TFK_EINVAL. */
static int int_vals(struct i8run *r, int t, struct ivec *o)
{
	const struct tfk_tfl_tensor *x = &r->s->tensors[t];
	int64_t n;
	int k;

	if (x->type != TFK_TFL_INT32)
		return op_err(r, "int32 shape arithmetic only: tensor is ",
			      tfk_tfl_type_name(x->type));
	if (r->iv[t].known) {
		*o = r->iv[t];
		return 0;
	}
	n = numel_of(r, t);
	if (!is_const(r, t) || r->rank[t] > 1 || n > TFK_MAX_RANK)
		return op_err(r, "int32 shape arithmetic only: not a shape "
			      "vector of known values: ", x->name);
	{
		const int32_t *v = data_of(r, t);

		if (!v)
			return r->data_rc;
		for (k = 0; k < n; k++)
			o->v[k] = v[k];
	}
	o->n = (int)n;
	o->known = 1;
	return 0;
}

/*
 * SHAPE, STRIDED_SLICE and PACK over int32 shape vectors (Keras 3's
 * Flatten: SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE), evaluated while
 * planning into r->iv[out], their output's shape set. STRIDED_SLICE
 * takes a vector and one slice spec (begin/end/strides of one value;
 * begin_mask, end_mask, shrink_axis_mask, an ellipsis, offset); PACK
 * scalars along axis 0. Anything else is refused.
 */
static int shape_values(struct i8run *r, const struct tfk_tfl_op *op,
			int32_t code)
{
	int out = op->outputs[0], in0 = op->inputs[0], k;
	struct ivec *o = &r->iv[out], a, b, e, st;
	int64_t sy[1] = { 0 };

	if (r->type[out] != TFK_TFL_INT32)
		return op_err(r, "int32 shape arithmetic only: output is ",
			      tfk_tfl_type_name(r->type[out]));
	memset(o, 0, sizeof(*o));
	if (code == TFK_TFL_SHAPE) {
		int ty = op->has_options ? opt_u8(op, 0, r->err) :
			TFK_TFL_INT32;

		if (ty != TFK_TFL_INT32)
			return op_err(r, "int32 shape arithmetic only: "
				      "out_type is ", tfk_tfl_type_name(ty));
		o->n = r->rank[in0];
		for (k = 0; k < o->n; k++) {
			if (r->shape[in0][k] > INT32_MAX)
				return op_err(r, "a dimension does not fit "
					      "int32", NULL);
			o->v[k] = (int32_t)r->shape[in0][k];
		}
		sy[0] = o->n;
		set_shape(r, out, 1, sy);
	} else if (code == TFK_TFL_PACK) {
		if (opt_i32(op, 1, 0, r->err) != 0 &&
		    opt_i32(op, 1, 0, r->err) != -1)
			return op_err(r, "int32 shape arithmetic only: axis "
				      "must be 0", NULL);
		if (op->n_inputs > TFK_MAX_RANK)
			return op_err(r, "more values than a shape has", NULL);
		for (k = 0; k < op->n_inputs; k++) {
			int rc;

			if (op->inputs[k] < 0)
				return op_err(r, "a value is absent", NULL);
			if ((rc = int_vals(r, op->inputs[k], &a)))
				return rc;
			if (r->rank[op->inputs[k]] != 0 || a.n != 1)
				return op_err(r, "int32 shape arithmetic only: "
					      "the values must be scalars",
					      NULL);
			o->v[k] = a.v[0];
		}
		o->n = op->n_inputs;
		sy[0] = o->n;
		set_shape(r, out, 1, sy);
	} else {
		int32_t bm = opt_i32(op, 0, 0, r->err);
		int32_t em = opt_i32(op, 1, 0, r->err);
		int32_t elm = opt_i32(op, 2, 0, r->err);
		int32_t nm = opt_i32(op, 3, 0, r->err);
		int32_t sm = opt_i32(op, 4, 0, r->err);
		int offset = opt_u8(op, 5, r->err);
		int rc;

		if (op->n_inputs < 4 || op->inputs[1] < 0 ||
		    op->inputs[2] < 0 || op->inputs[3] < 0)
			return op_err(r, "begin, end and strides are needed",
				      NULL);
		if ((rc = int_vals(r, in0, &a)) ||
		    (rc = int_vals(r, op->inputs[1], &b)) ||
		    (rc = int_vals(r, op->inputs[2], &e)) ||
		    (rc = int_vals(r, op->inputs[3], &st)))
			return rc;
		if (r->rank[in0] != 1 || b.n != 1 || e.n != 1 || st.n != 1 ||
		    (nm & 1))
			return op_err(r, "int32 shape arithmetic only: one "
				      "slice of a vector", NULL);
		{
			int64_t av[TFK_MAX_RANK], ov[TFK_MAX_RANK];
			int no, sc;
			const char *why = NULL;

			for (k = 0; k < a.n; k++)
				av[k] = a.v[k];
			if (tfk_tfl_slice_vec(av, a.n, b.v[0], e.v[0], st.v[0],
					      bm, em, elm, sm, offset, ov, &no,
					      &sc, &why))
				return op_err(r, why, NULL);
			for (k = 0; k < no; k++)
				o->v[k] = (int32_t)ov[k];
			o->n = no;
			sy[0] = no;
			set_shape(r, out, sc ? 0 : 1, sy);
		}
	}
	o->known = 1;
	return 0;
}

/*
 * The runtime shape of op's output from its input's (sa, ra), as
 * TFLite's Prepare computes it after ResizeInputTensor: elementwise and
 * unary ops broadcast or keep their inputs', FULLY_CONNECTED is [rows,
 * units], conv and pool from their geometry (computed again by run_op;
 * the file's spatial shape is kept here unless the input's differs),
 * RESHAPE resolves its -1, CONCATENATION sums, PAD adds.
 */
static int out_shape(struct i8run *r, const struct tfk_tfl_op *op,
		     int32_t code, const int64_t *sa, int ra)
{
	int out = op->outputs[0], k, d;
	int64_t sy[TFK_MAX_RANK], sb[TFK_MAX_RANK];
	int ry = file_shape(r, out, sy), rb;

	switch (code) {
	case TFK_TFL_QUANTIZE: case TFK_TFL_DEQUANTIZE: case TFK_TFL_SOFTMAX:
	case TFK_TFL_LOGISTIC: case TFK_TFL_TANH: case TFK_TFL_RELU:
	case TFK_TFL_RELU6:
		set_shape(r, out, ra, sa);
		return 0;
	case TFK_TFL_ADD: case TFK_TFL_SUB: case TFK_TFL_MUL:
		if (op->n_inputs < 2)
			return 0;
		rb = shape_of(r, op->inputs[1], sb);
		ry = ra > rb ? ra : rb;
		for (k = 0; k < ry; k++) {
			int64_t a = k - (ry - ra) >= 0 ? sa[k - (ry - ra)] : 1;
			int64_t b = k - (ry - rb) >= 0 ? sb[k - (ry - rb)] : 1;

			if (a != b && a != 1 && b != 1)
				return op_err(r, "input shapes do not "
					      "broadcast", NULL);
			sy[k] = a == 1 ? b : a;
		}
		set_shape(r, out, ry, sy);
		return 0;
	case TFK_TFL_FULLY_CONNECTED: {
		int64_t n = 1, kk;

		if (op->n_inputs < 2 || shape_of(r, op->inputs[1], sb) != 2 ||
		    !sb[1])
			return op_err(r, "weights must have rank 2", NULL);
		for (k = 0; k < ra; k++)
			n *= sa[k];
		kk = sb[1];
		sy[0] = n / kk;
		sy[1] = sb[0];
		set_shape(r, out, 2, sy);
		return 0;
	}
	case TFK_TFL_CONV_2D: case TFK_TFL_DEPTHWISE_CONV_2D:
	case TFK_TFL_MAX_POOL_2D: case TFK_TFL_AVERAGE_POOL_2D: {
		int64_t st[2], ks[2] = { 0, 0 }, dl[2] = { 1, 1 };
		int pool = code == TFK_TFL_MAX_POOL_2D ||
			code == TFK_TFL_AVERAGE_POOL_2D;
		int dw = code == TFK_TFL_DEPTHWISE_CONV_2D;
		int valid = opt_u8(op, 0, r->err) == 1;

		if (ra != 4 || ry != 4)
			return op_err(r, "input and output must have rank 4",
				      NULL);
		st[0] = opt_i32(op, 2, 1, r->err);
		st[1] = opt_i32(op, 1, 1, r->err);
		if (pool) {
			ks[0] = opt_i32(op, 4, 1, r->err);
			ks[1] = opt_i32(op, 3, 1, r->err);
		} else {
			if (op->n_inputs < 2 ||
			    shape_of(r, op->inputs[1], sb) != 4)
				return op_err(r, "filter must have rank 4",
					      NULL);
			ks[0] = sb[1];
			ks[1] = sb[2];
			dl[0] = opt_i32(op, dw ? 6 : 5, 1, r->err);
			dl[1] = opt_i32(op, dw ? 5 : 4, 1, r->err);
		}
		sy[0] = sa[0];
		for (d = 0; d < 2; d++) {
			int64_t ek = (ks[d] - 1) * dl[d] + 1;

			if (st[d] < 1)
				return op_err(r, "stride must be >= 1", NULL);
			sy[1 + d] = valid ? (sa[1 + d] - ek + st[d]) / st[d] :
				(sa[1 + d] + st[d] - 1) / st[d];
			if (sy[1 + d] < 1)
				return op_err(r, "input smaller than the "
					      "window", NULL);
		}
		sy[3] = pool ? sa[3] : dw ? sb[3] : sb[0];
		set_shape(r, out, 4, sy);
		return 0;
	}
	case TFK_TFL_RESHAPE: {
		int64_t n = 1, m = 1;
		int neg = -1;

		for (k = 0; k < ra; k++)
			n *= sa[k];
		if (op->n_inputs > 1 && op->inputs[1] >= 0 &&
		    r->type[op->inputs[1]] == TFK_TFL_INT32 &&
		    r->m->buffers[r->s->tensors[op->inputs[1]].buffer].size) {
			const int32_t *v = data_of(r, op->inputs[1]);

			ry = (int)numel_of(r, op->inputs[1]);
			if (ry > TFK_MAX_RANK)
				return op_err(r, "shape too long", NULL);
			for (k = 0; k < ry; k++)
				sy[k] = v[k];
		} else if (op->n_inputs > 1 && op->inputs[1] >= 0 &&
			   r->iv[op->inputs[1]].known) {
			/* computed by SHAPE/STRIDED_SLICE/PACK */
			const struct ivec *v = &r->iv[op->inputs[1]];

			ry = v->n;
			for (k = 0; k < ry; k++)
				sy[k] = v->v[k];
		} else if (op->n_inputs > 1 && op->inputs[1] >= 0) {
			return op_err(r, "the new shape must be a constant or "
				      "an int32 shape vector computed from "
				      "shapes", NULL);
		}
		for (k = 0; k < ry; k++) {
			if (sy[k] < 0) {
				neg = k;
			} else {
				if (sy[k] && m > INT64_MAX / sy[k])
					return op_err(r, "new shape too large",
						      NULL);
				m *= sy[k];
			}
		}
		if (neg >= 0)
			sy[neg] = m ? n / m : 0;
		set_shape(r, out, ry, sy);
		return 0;
	}
	case TFK_TFL_CONCATENATION: {
		int axis = opt_i32(op, 0, 0, r->err);

		if (axis < 0)
			axis += ra;
		if (axis < 0 || axis >= ra)
			return op_err(r, "axis out of range", NULL);
		for (k = 0; k < ra; k++)
			sy[k] = sa[k];
		for (k = 1; k < op->n_inputs; k++) {
			if (shape_of(r, op->inputs[k], sb) != ra)
				return op_err(r, "inputs differ in rank", NULL);
			sy[axis] += sb[axis];
		}
		set_shape(r, out, ra, sy);
		return 0;
	}
	case TFK_TFL_MEAN: {
		const int32_t *ax;
		uint8_t red[TFK_MAX_RANK];
		int keep = opt_u8(op, 0, r->err), at;
		int64_t n_ax, j;

		at = op->n_inputs > 1 ? op->inputs[1] : -1;
		if (at < 0 || r->type[at] != TFK_TFL_INT32 ||
		    !r->m->buffers[r->s->tensors[at].buffer].size ||
		    !(ax = data_of(r, at)))
			return op_err(r, "the axes must be a constant INT32 "
				      "tensor", NULL);
		/* the buffer's count: a constant's runtime shape could
		 * differ from it (a -1 batch in its shape_signature) */
		n_ax = (int64_t)(r->m->buffers[r->s->tensors[at].buffer].size /
				 4);
		memset(red, 0, sizeof(red));
		for (j = 0; j < n_ax; j++) {
			int a = ax[j] < 0 ? ax[j] + ra : ax[j];

			if (a < 0 || a >= ra)
				return op_err(r, "axis out of range", NULL);
			red[a] = 1;
		}
		for (k = 0, ry = 0; k < ra; k++)
			if (!red[k])
				sy[ry++] = sa[k];
			else if (keep)
				sy[ry++] = 1;
		set_shape(r, out, ry, sy);
		return 0;
	}
	case TFK_TFL_SHAPE: case TFK_TFL_STRIDED_SLICE: case TFK_TFL_PACK:
		return shape_values(r, op, code);
	case TFK_TFL_PAD: {
		const int32_t *pads;

		if (op->n_inputs < 2 || op->inputs[1] < 0 ||
		    !is_const(r, op->inputs[1]) ||
		    r->type[op->inputs[1]] != TFK_TFL_INT32 ||
		    numel_of(r, op->inputs[1]) != 2 * ra ||
		    !(pads = data_of(r, op->inputs[1])))
			return op_err(r, "paddings must be a constant INT32 "
				      "[rank, 2]", NULL);
		for (k = 0; k < ra; k++) {
			if (pads[2 * k] < 0 || pads[2 * k + 1] < 0)
				return op_err(r, "negative padding", NULL);
			sy[k] = sa[k] + pads[2 * k] + pads[2 * k + 1];
		}
		set_shape(r, out, ra, sy);
		return 0;
	}
	}
	set_shape(r, out, ry, sy);
	return 0;
}

/* a * b of two counts (>= 0), INT64_MAX when that overflows */
static int64_t mul_sat(int64_t a, int64_t b)
{
	return a && b > INT64_MAX / a ? INT64_MAX : a * b;
}

static int64_t numel_sat(const struct i8run *r, int t)
{
	int64_t n = 1;
	int k;

	/* an empty dimension counts 1: a kernel's loops over the others
	 * still run (fuzz-tflrun: a float conv of [2, 1157627908, 0, 2]) */
	for (k = 0; k < r->rank[t]; k++)
		n = mul_sat(n, r->shape[t][k] > 0 ? r->shape[t][k] : 1);
	return n;
}

/* What the operator costs, once out_shape has set its output's runtime
 * shape: its input's elements plus its output's times the taps of each
 * output (weights per output channel, or the pool window); saturates. */
static int64_t op_work(const struct i8run *r, const struct tfk_tfl_op *op,
		       int32_t code)
{
	int64_t taps = 1, n, in = numel_sat(r, op->inputs[0]);
	int wt = op->n_inputs > 1 ? op->inputs[1] : -1;

	if (code == TFK_TFL_SHAPE)
		return numel_sat(r, op->outputs[0]);	/* dims, not data */

	if (code == TFK_TFL_MAX_POOL_2D || code == TFK_TFL_AVERAGE_POOL_2D) {
		int64_t kh = opt_i32(op, 4, 1, r->err);
		int64_t kw = opt_i32(op, 3, 1, r->err);

		taps = mul_sat(kh > 0 ? kh : 1, kw > 0 ? kw : 1);
	} else if (wt >= 0 && r->rank[wt] >= 2 &&
		   (code == TFK_TFL_FULLY_CONNECTED ||
		    code == TFK_TFL_CONV_2D ||
		    code == TFK_TFL_DEPTHWISE_CONV_2D)) {
		/* FC [o, k], CONV_2D [o, kh, kw, c], DEPTHWISE [1, kh, kw, o] */
		n = r->shape[wt][code == TFK_TFL_DEPTHWISE_CONV_2D ?
				 r->rank[wt] - 1 : 0];
		taps = numel_sat(r, wt) / (n > 0 ? n : 1);
	}
	n = mul_sat(numel_sat(r, op->outputs[0]), taps);
	return n > INT64_MAX - in ? INT64_MAX : n + in;
}

/* QUANTIZE writes int8 (or uint8) values, DEQUANTIZE float32 ones: their output
 * tensors must have that type. (The other operators write int8 into
 * their output whatever its type, as TFLite's kernels, which set an
 * ADD's output type to its input's; no buffer is smaller than that.) */
static int check_out_type(struct i8run *r, int t, int type)
{
	int is = r->type[t];

	if (is == type)
		return 0;
	return tfk_errf(r->err, TFK_EINVAL, "operator %d (%s): output tensor "
			"%d '%s' is %s, expected %s", r->op_i, op_name(r), t,
			r->s->tensors[t].name, tfk_tfl_type_name(is),
			tfk_tfl_type_name(type));
}

/* Operators on quantized values: where the output or an input is
 * UINT8, all of them are (TFLite's Prepare requires one type; a uint8
 * value read as int8 would be off by 128). The weighted ones check
 * their own (run_op). Other types keep the int8 kernels' rule: they
 * write int8 bytes whatever the output's type (check_out_type). 0 or
 * TFK_EINVAL. */
static int check_q_types(struct i8run *r, const struct tfk_tfl_op *op,
			 int32_t code)
{
	int n = code == TFK_TFL_ADD || code == TFK_TFL_SUB ||
		code == TFK_TFL_MUL || code == TFK_TFL_CONCATENATION ?
		op->n_inputs : 1, k, t;
	int ty = r->type[op->outputs[0]], u8 = ty == TFK_TFL_UINT8;

	switch (code) {
	case TFK_TFL_MAX_POOL_2D: case TFK_TFL_AVERAGE_POOL_2D:
	case TFK_TFL_SOFTMAX: case TFK_TFL_ADD: case TFK_TFL_SUB:
	case TFK_TFL_MUL: case TFK_TFL_LOGISTIC: case TFK_TFL_TANH:
	case TFK_TFL_RELU: case TFK_TFL_RELU6: case TFK_TFL_CONCATENATION:
	case TFK_TFL_MEAN: case TFK_TFL_PAD:
		break;
	default:
		return 0;
	}
	for (k = 0; k < n; k++)
		if (op->inputs[k] >= 0 &&
		    r->type[op->inputs[k]] == TFK_TFL_UINT8)
			u8 = 1;
	if (!u8)
		return 0;
	for (k = 0; k < n; k++) {
		t = op->inputs[k];
		if (t >= 0 && r->type[t] != ty)
			return op_err(r, "inputs must have the output's type ",
				      tfk_tfl_type_name(ty));
	}
	return 0;
}

static int supported(int32_t code)
{
	switch (code) {
	case TFK_TFL_QUANTIZE: case TFK_TFL_DEQUANTIZE:
	case TFK_TFL_FULLY_CONNECTED: case TFK_TFL_CONV_2D:
	case TFK_TFL_DEPTHWISE_CONV_2D: case TFK_TFL_MAX_POOL_2D:
	case TFK_TFL_AVERAGE_POOL_2D: case TFK_TFL_RESHAPE:
	case TFK_TFL_SOFTMAX: case TFK_TFL_ADD: case TFK_TFL_SUB:
	case TFK_TFL_MUL: case TFK_TFL_LOGISTIC: case TFK_TFL_TANH:
	case TFK_TFL_RELU: case TFK_TFL_RELU6: case TFK_TFL_CONCATENATION:
	case TFK_TFL_PAD: case TFK_TFL_MEAN:
	case TFK_TFL_SHAPE: case TFK_TFL_STRIDED_SLICE: case TFK_TFL_PACK:
		return 1;
	}
	return 0;
}

/* Operator r->op_i: with plan, its output's runtime shape and its cost
 * (the planning pass, before check_extents); else its kernel. */
/* A CONV_2D filter OHWI sb[] packed for the fast kernel: by filter
 * rows when its taps' channels need padding and a row's taps lie
 * together in the input (width dilation 1) and that pads less (a first
 * layer's one channel), else by taps. */
static int pack_conv(const struct tfk_conv2d *g, struct tfk_int8_packed *pk,
		     const int64_t *sb, const int8_t *w, struct tfk_err *err)
{
	int64_t c4 = (sb[3] + 3) / 4 * 4, sp = (sb[2] * sb[3] + 3) / 4 * 4;

	if (g->dw == 1 && c4 != sb[3] && sp < sb[2] * c4)
		return tfk_int8_pack_conv_rows(pk, sb[0], sb[1], sb[2], sb[3],
					       w, err);
	return tfk_int8_pack_conv(pk, sb[0], sb[1], sb[2], sb[3], w, err);
}

static int run_op(struct i8run *r, int plan)
{
	const struct tfk_tfl_op *op = &r->s->ops[r->op_i];
	int32_t code = r->m->opcodes[op->opcode_index].builtin_code;
	int in0 = op->n_inputs > 0 ? op->inputs[0] : -1;
	int out = op->n_outputs > 0 ? op->outputs[0] : -1;
	int32_t zpa[MAXCH], zpb[MAXCH], zpc[MAXCH];
	struct tfk_int8_qp qa, qb, qc;
	int64_t sa[TFK_MAX_RANK], sb[TFK_MAX_RANK], sy[TFK_MAX_RANK];
	int ra, rb, ry, rc = 0;
	void *x, *y;

	if (in0 < 0 || out < 0)
		return op_err(r, "missing input or output", NULL);
	ra = shape_of(r, in0, sa);
	if (plan) {
		/* its output's shape, from its inputs', and its cost: all
		 * before any buffer is made or any kernel runs */
		if (!supported(code))
			return op_err(r, "is not supported by run for int8 "
				      "models", NULL);
		/* the two kernels whose output type is not int8: the
		 * extent of their output is of the type they write */
		if ((code == TFK_TFL_QUANTIZE &&
		     (rc = check_out_type(r, out, r->type[out] ==
					  TFK_TFL_UINT8 ? TFK_TFL_UINT8 :
					  TFK_TFL_INT8))) ||
		    (code == TFK_TFL_DEQUANTIZE &&
		     (rc = check_out_type(r, out, TFK_TFL_FLOAT32))))
			return rc;
		/* ADD, SUB and MUL make their output of their second
		 * input's type, whatever the file says (TFLite's Prepare:
		 * output->type = input2->type; add_quantized.bin declares
		 * FLOAT32 for a uint8 sum) */
		if ((code == TFK_TFL_ADD || code == TFK_TFL_SUB ||
		     code == TFK_TFL_MUL) && op->n_inputs > 1 &&
		    op->inputs[1] >= 0)
			r->type[out] = r->type[op->inputs[1]];
		if ((rc = check_q_types(r, op, code)) ||
		    (rc = out_shape(r, op, code, sa, ra)))
			return rc;
		if (r->max_work) {
			int64_t w = op_work(r, op, code);

			if (w > r->max_work - r->work)
				return tfk_errf(r->err, TFK_EINVAL, "operator "
						"%d (%s): the run would take "
						"more than %lld operations "
						"(the limit)", r->op_i,
						op_name(r),
						(long long)r->max_work);
			r->work += w;
		}
		return 0;
	}
	if (!(x = data_of(r, in0)) || !(y = data_of(r, out)))
		return r->data_rc;
	ry = shape_of(r, out, sy);
	switch (code) {
	case TFK_TFL_QUANTIZE:
		if ((rc = qp_of(r, out, &qc, zpc, MAXCH)))
			return rc;
		if (r->type[in0] == TFK_TFL_FLOAT32)
			return tfk_int8_quantize_ref(&qc, TFK_DT_INT8,
						     numel_of(r, in0), x, y,
						     r->err);
		if (!is8(r->type[in0]))
			return op_err(r, "input must be FLOAT32, INT8 or "
				      "UINT8, not ", tfk_tfl_type_name(
					      r->type[in0]));
		if ((rc = qp_of(r, in0, &qa, zpa, MAXCH)))
			return rc;
		return tfk_int8_requantize_ref(&qa, TFK_DT_INT8, &qc,
					       TFK_DT_INT8, numel_of(r, in0),
					       x, y, r->err);
	case TFK_TFL_DEQUANTIZE: {
		const struct tfk_tfl_tensor *t = &r->s->tensors[in0];

		if ((rc = qp_of(r, in0, &qa, zpa, MAXCH)))
			return rc;
		return tfk_int8_dequantize_ref(&qa, r->type[in0] ==
					       TFK_TFL_UINT8 ? TFK_DT_INT8 :
					       tfk_tfl_dtype(r->type[in0]), ra,
					       sa, t->quant.quantized_dimension,
					       x, y, r->err);
	}
	case TFK_TFL_FULLY_CONNECTED: case TFK_TFL_CONV_2D:
	case TFK_TFL_DEPTHWISE_CONV_2D: {
		struct prep *pp = &r->prep[r->op_i];
		const struct tfk_int8_rq *rq = &pp->rq;
		int dw = code == TFK_TFL_DEPTHWISE_CONV_2D;
		int act = opt_u8(op, code == TFK_TFL_FULLY_CONNECTED ? 0 :
				 dw ? 4 : 3, r->err);
		int wt = op->n_inputs > 1 ? op->inputs[1] : -1;
		int bt = op->n_inputs > 2 ? op->inputs[2] : -1;
		const int8_t *w;
		const int32_t *bias = NULL;
		int64_t ch;

		/* TFLite's conv, depthwise and FC take int8 or uint8
		 * (legacy, asymmetric weights), one type for all three */
		if (wt < 0 || !is8(r->type[in0]) ||
		    r->type[wt] != r->type[in0] ||
		    r->type[out] != r->type[in0])
			return op_err(r, "only int8 or uint8 input, weights "
				      "and output of one type are supported",
				      NULL);
		if (r->type[wt] == TFK_TFL_UINT8 &&
		    r->s->tensors[wt].quant.n_scale > 1)
			return op_err(r, "uint8 weights are quantized per "
				      "tensor (per-channel weights are int8): ",
				      r->s->tensors[wt].name);
		if (bt >= 0 && r->type[bt] != TFK_TFL_INT32)
			return op_err(r, "the bias must be INT32", NULL);
		w = data_of(r, wt);
		bias = bt >= 0 ? data_of(r, bt) : NULL;
		rb = shape_of(r, wt, sb);
		ch = code == TFK_TFL_FULLY_CONNECTED || !dw ? sb[0] : sb[3];
		if (!w || (bt >= 0 && (!bias || numel_of(r, bt) != ch)))
			return op_err(r, "bias size differs from the output "
				      "channels", NULL);
		if (dw && (rb != 4 || ra != 4 || sb[0] != 1 || !sa[3] ||
			   sb[3] % sa[3]))
			return op_err(r, "filter channels are not a multiple "
				      "of the input's", NULL);
		if (numel_of(r, out) % (ch ? ch : 1) || !ch)
			return op_err(r, "output size does not fit the "
				      "channels", NULL);
		if (!pp->ready &&
		    ((rc = qp_of(r, in0, &qa, zpa, MAXCH)) ||
		     (rc = qp_of(r, wt, &qb, zpb, MAXCH)) ||
		     (rc = qp_of(r, out, &qc, zpc, MAXCH)) ||
		     (rc = tfk_int8_rq_init(&pp->rq, ch, &qa, &qb, &qc, act,
					    r->err))))
			return rc;
		pp->ready = 1;
		if (code == TFK_TFL_FULLY_CONNECTED) {
			int64_t k = rb == 2 ? sb[1] : 0;

			struct tfk_int8_packed *pk = &r->pk[r->op_i];

			if (!k || numel_of(r, in0) % k)
				rc = op_err(r, "input size does not fit the "
					    "weights", NULL);
			else if (rq->w_offset)	/* asymmetric weights */
				tfk_int8_fc_ref(rq, numel_of(r, in0) / k, k,
						ch, x, w, bias, y);
			else if (r->packed[r->op_i] ||
				 !(rc = tfk_int8_pack(pk, ch, k, w, r->err))) {
				/* the fast path: bit-exact with the _ref
				 * (lib/kernels/int8 tests it); the weights
				 * are constants, packed once */
				r->packed[r->op_i] = 1;
				rc = tfk_int8_fc(rq, pk, numel_of(r, in0) / k,
						 x, bias, y, r->threads,
						 &r->ws, r->err);
			}
		} else {
			struct tfk_conv2d g;
			struct tfk_conv2d_attrs a;
			int64_t fs[4];

			memset(&a, 0, sizeof(a));
			a.strides[0] = a.strides[3] = 1;
			a.dilations[0] = a.dilations[3] = 1;
			a.strides[1] = opt_i32(op, 2, 1, r->err);
			a.strides[2] = opt_i32(op, 1, 1, r->err);
			a.dilations[1] = opt_i32(op, dw ? 6 : 5, 1, r->err);
			a.dilations[2] = opt_i32(op, dw ? 5 : 4, 1, r->err);
			a.padding = opt_u8(op, 0, r->err) == 1 ?
				TFK_CONV_VALID : TFK_CONV_SAME;
			if (dw) {	/* [1, kh, kw, c * m] as [kh, kw, c, m] */
				fs[0] = sb[1];
				fs[1] = sb[2];
				fs[2] = sa[3];
				fs[3] = sb[3] / (sa[3] ? sa[3] : 1);
			} else {	/* OHWI as TF's [kh, kw, kc, o] */
				fs[0] = sb[1];
				fs[1] = sb[2];
				fs[2] = sb[3];
				fs[3] = sb[0];
			}
			if (ra != 4 || rb != 4)
				rc = op_err(r, "input and filter must have rank "
					    "4", NULL);
			else if ((rc = tfk_conv2d_geom(&g, sa, fs, dw, &a,
							r->err)))
				rc = tfk_err_prefix(r->err, "operator %d "
						    "(%s)", r->op_i, dw ?
						    "DEPTHWISE_CONV_2D" :
						    "CONV_2D");
			else if (g.n != sy[0] || g.oh != sy[1] ||
				 g.ow != sy[2] || g.o != sy[3])
				rc = op_err(r, "output shape differs from the "
					    "geometry", NULL);
			else {
				struct tfk_int8_packed *pk = &r->pk[r->op_i];

				if (dw)
					tfk_int8_dwconv2d_ref(&g, rq, x, w,
							      bias, y);
				else if (!tfk_int8_conv2d_fast(&g, rq))
					tfk_int8_conv2d_ref(&g, rq, x, w, bias,
							    y);
				else if (r->packed[r->op_i] ||
					 !(rc = pack_conv(&g, pk, sb, w,
							  r->err))) {
					r->packed[r->op_i] = 1;
					rc = tfk_int8_conv2d(&g, rq, x, pk,
							     bias, y,
							     r->threads,
							     &r->ws, r->err);
				}
			}
		}
		return rc;
	}
	case TFK_TFL_MAX_POOL_2D: case TFK_TFL_AVERAGE_POOL_2D: {
		struct tfk_pool2d p;
		int64_t ks[4] = { 1, 1, 1, 1 }, st[4] = { 1, 1, 1, 1 };
		int32_t lo, hi;

		st[1] = opt_i32(op, 2, 1, r->err);
		st[2] = opt_i32(op, 1, 1, r->err);
		ks[1] = opt_i32(op, 4, 1, r->err);
		ks[2] = opt_i32(op, 3, 1, r->err);
		if ((rc = qp_of(r, out, &qc, zpc, 1)) ||
		    (rc = tfk_int8_act_range(opt_u8(op, 5, r->err),
					     qc.scale[0], qc.zp[0], -128, 127,
					     &lo, &hi, r->err)) ||
		    (rc = tfk_pool2d_geom(&p, sa, ks, st,
					  opt_u8(op, 0, r->err) == 1 ? "VALID" :
					  "SAME", r->err)))
			return rc;
		if (p.n != sy[0] || p.oh != sy[1] || p.ow != sy[2] ||
		    p.c != sy[3])
			return op_err(r, "output shape differs from the "
				      "geometry", NULL);
		if (ks[1] > sa[1] || ks[2] > sa[2])	/* the loops walk the
							 * whole window */
			return op_err(r, "pool filter larger than the input",
				      NULL);
		if (code == TFK_TFL_MAX_POOL_2D)
			tfk_int8_max_pool(&p, lo, hi, x, y, r->threads);
		else if (r->type[in0] == TFK_TFL_UINT8)
			tfk_int8_avg_pool_u8(&p, lo, hi, x, y, r->threads);
		else
			tfk_int8_avg_pool(&p, lo, hi, x, y, r->threads);
		return 0;
	}
	case TFK_TFL_SHAPE: case TFK_TFL_STRIDED_SLICE: case TFK_TFL_PACK:
		/* planned: the values go to the buffer too, for a reader
		 * other than RESHAPE and for the outputs */
		if (!r->iv[out].known || numel_of(r, out) != r->iv[out].n)
			return op_err(r, "shape values not planned", NULL);
		memcpy(y, r->iv[out].v, (size_t)r->iv[out].n * 4);
		return 0;
	case TFK_TFL_RESHAPE:
		if (numel_of(r, in0) != numel_of(r, out))
			return op_err(r, "element counts differ", NULL);
		if (r->type[in0] != r->type[out])
			return op_err(r, "input and output types differ", NULL);
		memcpy(y, x, (size_t)numel_of(r, in0) *
		       tfk_tfl_type_size(r->type[in0]));
		return 0;
	case TFK_TFL_SOFTMAX: {
		struct prep *pp = &r->prep[r->op_i];
		int u8 = r->type[in0] == TFK_TFL_UINT8;
		int64_t i, n = numel_of(r, in0);
		float beta = 1;

		if (!pp->ready && op->has_options &&
		    tfk_fb_f32(&op->options, 0, 1.0f, &beta, r->err))
			return TFK_ECORRUPT;
		if (!pp->ready &&
		    ((rc = qp_of(r, in0, &qa, zpa, 1)) ||
		     (rc = qp_of(r, out, &qc, zpc, 1))))
			return rc;
		if (!pp->ready && u8) {	/* uint8's kernel, uint8 bytes */
			zpa[0] += 128;
			zpc[0] += 128;
		}
		if (!pp->ready &&
		    (rc = tfk_int8_softmax_init(&pp->u.sm, beta, &qa, &qc, u8,
						r->err)))
			return rc;
		pp->ready = 1;
		if (ra < 1 || sa[ra - 1] < 1 || n != numel_of(r, out))
			return op_err(r, "input must have rank >= 1 and the "
				      "output's size", NULL);
		if (!u8) {
			tfk_int8_softmax_ref(&pp->u.sm, n / sa[ra - 1],
					     sa[ra - 1], x, y);
			return 0;
		}
		/* its uint8 rounding is not the moved int8 one: the
		 * uint8 bytes in y, the kernel in place, moved back */
		for (i = 0; i < n; i++)
			((uint8_t *)y)[i] = ((const uint8_t *)x)[i] ^ 0x80;
		tfk_int8_softmax_ref(&pp->u.sm, n / sa[ra - 1], sa[ra - 1], y,
				     y);
		for (i = 0; i < n; i++)
			((uint8_t *)y)[i] ^= 0x80;
		return 0;
	}
	case TFK_TFL_ADD: case TFK_TFL_SUB: case TFK_TFL_MUL: {
		struct prep *pp = &r->prep[r->op_i];
		int t2 = op->n_inputs > 1 ? op->inputs[1] : -1;
		void *x2;

		if (t2 < 0 || !(x2 = data_of(r, t2)))
			return op_err(r, "missing input", NULL);
		rb = shape_of(r, t2, sb);
		if (!pp->ready &&
		    ((rc = qp_of(r, in0, &qa, zpa, 1)) ||
		     (rc = qp_of(r, t2, &qb, zpb, 1)) ||
		     (rc = qp_of(r, out, &qc, zpc, 1)) ||
		     (rc = tfk_int8_bin_init(&pp->u.bin, code == TFK_TFL_ADD ?
					     TFK_INT8_ADD : code ==
					     TFK_TFL_SUB ? TFK_INT8_SUB :
					     TFK_INT8_MUL, TFK_DT_INT8, &qa,
					     &qb, &qc, opt_u8(op, 0, r->err),
					     r->err))))
			return rc;
		pp->ready = 1;
		return tfk_int8_bin_ref(&pp->u.bin, ra, sa, x, rb, sb, x2, y, r->err);
	}
	case TFK_TFL_LOGISTIC: case TFK_TFL_TANH: case TFK_TFL_RELU:
	case TFK_TFL_RELU6: {
		struct prep *pp = &r->prep[r->op_i];

		if (!pp->ready &&
		    ((rc = qp_of(r, in0, &qa, zpa, 1)) ||
		     (rc = qp_of(r, out, &qc, zpc, 1)) ||
		     (rc = tfk_int8_lut_init(&pp->u.lut, code ==
					     TFK_TFL_LOGISTIC ?
					     TFK_INT8_LOGISTIC : code ==
					     TFK_TFL_TANH ? TFK_INT8_TANH :
					     code == TFK_TFL_RELU ?
					     TFK_INT8_RELU : TFK_INT8_RELU6,
					     &qa, &qc, r->err))))
			return rc;
		pp->ready = 1;
		tfk_int8_lut_ref(&pp->u.lut, numel_of(r, in0), x, y);
		return 0;
	}
	case TFK_TFL_CONCATENATION: {
		int axis = opt_i32(op, 0, 0, r->err), k, d, same;
		int64_t outer = 1, inner_y = 1, off = 0, o;

		if (axis < 0)
			axis += ry;
		if (axis < 0 || axis >= ry)
			return op_err(r, "axis out of range", NULL);
		for (d = 0; d < axis; d++)
			outer *= sy[d];
		for (d = axis; d < ry; d++)
			inner_y *= sy[d];
		for (k = 0; k < op->n_inputs; k++) {
			int t = op->inputs[k];
			int64_t inner = numel_of(r, t) / (outer ? outer : 1);
			const int8_t *src = data_of(r, t);

			for (d = 0; d < ry; d++)
				if (d != axis && (r->rank[t] != ry ||
						  r->shape[t][d] != sy[d]))
					return op_err(r, "input shapes differ "
						      "outside the axis", NULL);
			if (!src || !is8(r->type[t]))
				return op_err(r, "inputs must be INT8 or UINT8",
					      NULL);
			if ((rc = qp_of(r, t, &qa, zpa, 1)) ||
			    (rc = qp_of(r, out, &qc, zpc, 1)))
				return rc;
			same = qa.scale[0] == qc.scale[0] && zpa[0] == zpc[0];
			/* TFLite rescales uint8 inputs whose parameters
			 * differ (ConcatenationWithScaling); int8 ones must
			 * share the output's */
			if (!same && r->type[out] != TFK_TFL_UINT8)
				return op_err(r, "inputs must share the "
					      "output's quantization", NULL);
			for (o = 0; o < outer; o++)
				if (same)
					memcpy((int8_t *)y + o * inner_y + off,
					       src + o * inner, (size_t)inner);
				else
					tfk_int8_rescale_u8_ref(
						qa.scale[0], zpa[0] + 128,
						qc.scale[0], zpc[0] + 128,
						inner, src + o * inner,
						(int8_t *)y + o * inner_y +
						off);
			off += inner;
		}
		return 0;
	}
	case TFK_TFL_MEAN: {
		struct tfk_int8_mean mn;
		int at = op->inputs[1];	/* out_shape checked it */

		if (!is8(r->type[in0]) || !is8(r->type[out]))
			return op_err(r, "only int8 or uint8 input and output "
				      "are supported", NULL);
		if ((rc = qp_of(r, in0, &qa, zpa, 1)) ||
		    (rc = qp_of(r, out, &qc, zpc, 1)) ||
		    (rc = tfk_int8_mean_init(&mn, &qa, &qc, ra, sa,
					     data_of(r, at), (int)(r->m->buffers[
					     r->s->tensors[at].buffer].size / 4),
					     opt_u8(op, 0, r->err), r->err)) ||
		    (r->type[in0] == TFK_TFL_UINT8 &&
		     (rc = tfk_int8_mean_u8(&mn, qa.scale[0], zpa[0] + 128,
					    qc.scale[0], zpc[0] + 128,
					    r->err))))
			return rc;
		if (tfk_int8_mean_outputs(&mn) != numel_of(r, out))
			return op_err(r, "output size differs from the "
				      "reduction", NULL);
		tfk_int8_mean_ref(&mn, x, y);
		return 0;
	}
	case TFK_TFL_PAD: {
		int pt = op->n_inputs > 1 ? op->inputs[1] : -1;
		const int32_t *pads;
		int64_t i, n = numel_of(r, in0);
		int d;

		if (pt < 0 || !(pads = data_of(r, pt)) ||
		    r->type[pt] != TFK_TFL_INT32 ||
		    !is8(r->type[in0]) ||
		    (rc = qp_of(r, out, &qc, zpc, 1)))
			return rc ? rc : op_err(r, "int8 or uint8 input and "
						"INT32 paddings only", NULL);
		memset(y, (int8_t)qc.zp[0], (size_t)numel_of(r, out));
		for (i = 0; i < n; i++) {	/* element i of x to y */
			int64_t rem = i, yi = 0, stride = 1;

			for (d = ra - 1; d >= 0; d--) {
				int64_t c = rem % sa[d];

				rem /= sa[d];
				yi += (c + pads[2 * d]) * stride;
				stride *= sy[d];
			}
			((int8_t *)y)[yi] = ((const int8_t *)x)[i];
		}
		return 0;
	}
	}
	return op_err(r, "is not supported by run for int8 models", NULL);
}

void tfk_tflite_int8_free(struct tfk_tfl_int8 *p)
{
	struct i8run *r;
	int k;

	if (!p)
		return;
	r = &p->r;
	for (k = 0; r->data && k < r->s->n_tensors; k++)
		if (r->owned[k])
			tfk_free(r->data[k]);
	for (k = 0; r->pk && k < r->s->n_ops; k++)
		tfk_int8_packed_release(&r->pk[k]);
	for (k = 0; r->prep && k < r->s->n_ops; k++)
		tfk_int8_rq_release(&r->prep[k].rq);
	for (k = 0; r->moved && k < r->s->n_tensors; k++)
		tfk_free(r->moved[k]);
	tfk_free(r->moved);
	tfk_free(r->type);
	tfk_free(r->prep);
	tfk_free(r->iv);
	tfk_free(r->data);
	tfk_free(r->owned);
	tfk_free(r->cap);
	tfk_free(r->rank);
	tfk_free(r->shape);
	tfk_free(r->pk);
	tfk_free(r->packed);
	tfk_conv_ws_release(&r->ws);
	tfk_free(p);
}

/* Each operator reads only constants, subgraph inputs and tensors an
 * earlier operator wrote (an absent input only where one may be), and
 * each subgraph output is one of those: a
 * tensor read before it is written would hold zeros on the first run
 * and the last run's values after. Each tensor an operator writes is
 * written by that operator only, and is no constant nor input: the
 * planning pass gives it one shape for the whole run, so a second
 * writer's shape would be the first one's kernel's too. 0 or
 * TFK_EINVAL. */
static int check_order(struct i8run *r, struct tfk_err *err)
{
	const struct tfk_tfl_subgraph *s = r->s;
	uint8_t *ready = tfk_calloc((size_t)s->n_tensors + 1, 1);
	int i, k, t, rc = 0;

	if (!ready)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (t = 0; t < s->n_tensors; t++)
		ready[t] = r->m->buffers[s->tensors[t].buffer].size > 0;
	for (k = 0; k < s->n_inputs; k++)
		ready[s->inputs[k]] = 2;
	for (i = 0; i < s->n_ops && !rc; i++) {
		const struct tfk_tfl_op *op = &s->ops[i];

		int32_t code = r->m->opcodes[op->opcode_index].builtin_code;

		r->op_i = i;
		r->err = err;
		for (k = 0; k < op->n_inputs && !rc; k++) {
			t = op->inputs[k];
			/* absent (-1): a bias or RESHAPE's new shape only */
			if (t < 0 && k && !(k == 1 && code == TFK_TFL_RESHAPE) &&
			    !(k == 2 && (code == TFK_TFL_FULLY_CONNECTED ||
					 code == TFK_TFL_CONV_2D ||
					 code == TFK_TFL_DEPTHWISE_CONV_2D)))
				rc = tfk_errf(err, TFK_EINVAL, "operator %d (%s):"
					      " input %d is absent", i,
					      op_name(r), k);
			else if (t >= 0 && !ready[t])
				rc = tfk_errf(err, TFK_EINVAL, "operator %d (%s):"
					      " reads tensor %d '%s' before "
					      "an operator writes it", i,
					      op_name(r), t,
					      s->tensors[t].name);
		}
		for (k = 0; k < op->n_outputs && !rc; k++) {
			int j;

			t = op->outputs[k];
			for (j = 0; j < op->n_inputs && !rc; j++)
				if (op->inputs[j] == t)
					/* in place: a kernel would read what
					 * it has written */
					rc = tfk_errf(err, TFK_EINVAL,
						      "operator %d (%s): reads "
						      "the tensor it writes", i,
						      op_name(r));
			if (rc)
				break;
			if (r->m->buffers[s->tensors[t].buffer].size)
				rc = tfk_errf(err, TFK_EINVAL, "operator %d (%s):"
					      " writes constant tensor %d '%s'",
					      i, op_name(r), t,
					      s->tensors[t].name);
			else if (ready[t])
				rc = tfk_errf(err, TFK_EINVAL, "operator %d (%s):"
					      " writes tensor %d '%s', which "
					      "is %s", i, op_name(r), t,
					      s->tensors[t].name,
					      ready[t] == 2 ? "a subgraph input" :
					      "written by an earlier operator");
			ready[t] = 1;
		}
	}
	for (k = 0; k < s->n_outputs && !rc; k++)
		if (!ready[s->outputs[k]])
			rc = tfk_errf(err, TFK_EINVAL, "subgraph %d: output "
				      "tensor %d '%s' is not written by any "
				      "operator", r->sg, s->outputs[k],
				      s->tensors[s->outputs[k]].name);
	tfk_free(ready);
	return rc;
}

/* The constants a run reads (operator inputs) or copies out (subgraph
 * outputs) lie inside their buffers, with the shapes they keep for
 * every run (tfk_tflite_const_extent). 0 or TFK_EINVAL. */
static int check_consts(struct i8run *r, struct tfk_err *err)
{
	const struct tfk_tfl_subgraph *s = r->s;
	int i, k, t;

	for (i = -1; i < s->n_ops; i++) {
		int n = i < 0 ? s->n_outputs : s->ops[i].n_inputs;

		for (k = 0; k < n; k++) {
			t = i < 0 ? s->outputs[k] : s->ops[i].inputs[k];
			if (t < 0 || !is_const(r, t) ||
			    !tfk_tflite_const_extent(r->m, r->sg, t, err))
				continue;
			if (i < 0)
				return tfk_err_prefix(err, "subgraph %d: output "
						      "%d", r->sg, k);
			r->op_i = i;
			return tfk_err_prefix(err, "operator %d (%s)", i,
					      op_name(r));
		}
	}
	return 0;
}

/* Each UINT8 constant as the kernels read it (its bytes - 128, the
 * file's left as they are): all of its buffer, whose extent
 * check_consts has checked for those a run reads. 0 or TFK_ENOMEM. */
static int move_u8_consts(struct i8run *r, struct tfk_err *err)
{
	const struct tfk_tfl_subgraph *s = r->s;
	int t;
	uint64_t i;

	for (t = 0; t < s->n_tensors; t++) {
		const struct tfk_tfl_buffer *b =
			&r->m->buffers[s->tensors[t].buffer];
		const uint8_t *v;

		if (s->tensors[t].type != TFK_TFL_UINT8 || !b->size)
			continue;
		v = b->offset > 1 ? r->m->p + b->offset : b->data;
		if (!(r->moved[t] = tfk_malloc((size_t)b->size)))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		for (i = 0; i < b->size; i++)
			r->moved[t][i] = (int8_t)(v[i] ^ 0x80);
	}
	return 0;
}

int tfk_tflite_int8_new(struct tfk_tfl_int8 **out, const struct tfk_tflite *m,
			int sg, struct tfk_err *err)
{
	const struct tfk_tfl_subgraph *s = &m->subgraphs[sg];
	struct tfk_tfl_int8 *p = tfk_calloc(1, sizeof(*p));
	struct i8run *r;
	size_t nt = (size_t)s->n_tensors + 1, no = (size_t)s->n_ops + 1;
	int k;

	*out = NULL;
	if (!p)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	r = &p->r;
	r->m = m;
	r->s = s;
	r->sg = sg;
	r->threads = 1;
	r->data = tfk_calloc(nt, sizeof(*r->data));
	r->owned = tfk_calloc(nt, sizeof(*r->owned));
	r->cap = tfk_calloc(nt, sizeof(*r->cap));
	r->rank = tfk_calloc(nt, sizeof(*r->rank));
	r->shape = tfk_calloc(nt, sizeof(*r->shape));
	r->pk = tfk_calloc(no, sizeof(*r->pk));
	r->packed = tfk_calloc(no, sizeof(*r->packed));
	r->prep = tfk_calloc(no, sizeof(*r->prep));
	r->iv = tfk_calloc(nt, sizeof(*r->iv));
	r->moved = tfk_calloc(nt, sizeof(*r->moved));
	r->type = tfk_calloc(nt, sizeof(*r->type));
	if (!r->data || !r->owned || !r->cap || !r->rank || !r->iv ||
	    !r->shape || !r->pk || !r->packed || !r->prep || !r->moved ||
	    !r->type) {
		tfk_tflite_int8_free(p);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	for (k = 0; k < s->n_tensors; k++)
		if (s->tensors[k].type == TFK_TFL_INT16) {
			tfk_errf(err, TFK_EINVAL, "subgraph %d: tensor %d "
				 "'%s' is %s: 16-bit quantized models are not "
				 "supported by run (int8 and uint8 ones are)",
				 sg, k, s->tensors[k].name,
				 tfk_tfl_type_name(s->tensors[k].type));
			tfk_tflite_int8_free(p);
			return TFK_EINVAL;
		}
	if ((k = tfk_tflite_check_inputs(m, sg, err)))
		k = tfk_err_prefix(err, "subgraph %d", sg);
	if (k || (k = check_order(r, err)) || (k = check_consts(r, err)) ||
	    (k = move_u8_consts(r, err))) {
		tfk_tflite_int8_free(p);
		return k;
	}
	*out = p;
	return 0;
}

void tfk_tflite_int8_threads(struct tfk_tfl_int8 *p, int threads)
{
	p->r.threads = threads < 1 ? 1 : threads;
}

void tfk_tflite_int8_max_work(struct tfk_tfl_int8 *p, int64_t ops)
{
	p->r.max_work = ops > 0 ? ops : 0;
}

static int is_int_dtype(enum tfk_dtype t)
{
	return t == TFK_DT_INT8 || t == TFK_DT_UINT8 || t == TFK_DT_INT16 ||
		t == TFK_DT_INT32 || t == TFK_DT_INT64;
}

/* Element i of an integer tensor (is_int_dtype). */
static int64_t int_at(const struct tfk_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case TFK_DT_INT8: return ((const int8_t *)t->data)[i];
	case TFK_DT_UINT8: return ((const uint8_t *)t->data)[i];
	case TFK_DT_INT16: return ((const int16_t *)t->data)[i];
	case TFK_DT_INT32: return ((const int32_t *)t->data)[i];
	default: return ((const int64_t *)t->data)[i];
	}
}

int tfk_tflite_int8_run(struct tfk_tfl_int8 *p, const struct tfk_tensor *feeds,
			int n_out, const int *out_tensors,
			struct tfk_tensor *outs, struct tfk_err *err)
{
	struct i8run *r = &p->r;
	const struct tfk_tfl_subgraph *s = r->s;
	int k, rc = 0;

	for (k = 0; k < n_out; k++)
		memset(&outs[k], 0, sizeof(outs[k]));
	r->err = err;
	r->op_i = 0;
	r->work = 0;
	r->batch = s->n_inputs && feeds[0].rank ? feeds[0].shape[0] : 1;
	for (k = 0; k < s->n_tensors; k++) {
		r->rank[k] = file_shape(r, k, r->shape[k]);
		r->type[k] = s->tensors[k].type;
		r->iv[k].known = 0;
	}
	for (k = 0; k < s->n_inputs; k++)
		set_shape(r, s->inputs[k], feeds[k].rank, feeds[k].shape);
	/* shapes and costs, then every extent, then the kernels */
	for (k = 0; k < s->n_ops; k++) {
		r->op_i = k;
		if ((rc = run_op(r, 1))) {
			if (strncmp(r->err->msg, "operator ", 9))
				tfk_err_prefix(r->err, "operator %d (%s)",
					       r->op_i, op_name(r));
			goto out;
		}
	}
	if ((rc = check_extents(r)))
		goto out;
	/* inputs: float given for an INT8 input is quantized with its
	 * parameters (what a caller of TFLite does before Invoke) */
	for (k = 0; k < s->n_inputs; k++) {
		int t = s->inputs[k];
		const struct tfk_tfl_tensor *x = &s->tensors[t];
		int64_t n = numel_of(r, t);
		void *d;

		if (tfk_tensor_numel(&feeds[k]) != n) {
			rc = tfk_errf(err, TFK_EINVAL, "input %d '%s': %lld "
				      "values, expected %lld", k, x->name,
				      (long long)tfk_tensor_numel(&feeds[k]),
				      (long long)n);
			goto out;
		}
		if (!(d = data_of(r, t))) {
			rc = r->data_rc;
			goto out;
		}
		if (r->type[t] == TFK_TFL_FLOAT32 &&
		    feeds[k].dtype == TFK_DT_FLOAT) {
			memcpy(d, feeds[k].data, (size_t)n * 4);
		} else if (is8(r->type[t]) &&
			   (feeds[k].dtype == TFK_DT_FLOAT ||
			    feeds[k].dtype == TFK_DT_DOUBLE ||
			    feeds[k].dtype == TFK_DT_HALF)) {
			struct tfk_int8_qp q;
			int32_t zp[1];
			float *f = feeds[k].data, *tmp = NULL;
			int64_t i;

			if (feeds[k].dtype != TFK_DT_FLOAT) {
				tmp = tfk_malloc((size_t)n * 4 + 4);
				if (!tmp) {
					rc = tfk_errf(err, TFK_ENOMEM,
						      "out of memory");
					goto out;
				}
				for (i = 0; i < n; i++)
					tmp[i] = feeds[k].dtype == TFK_DT_HALF ?
						tfk_half_to_float(((const
						uint16_t *)feeds[k].data)[i]) :
						(float)((const double *)
							feeds[k].data)[i];
				f = tmp;
			}
			r->op_i = 0;
			if (!(rc = qp_of(r, t, &q, zp, 1)))
				rc = tfk_int8_quantize_ref(&q, TFK_DT_INT8, n,
							   f, d, err);
			tfk_free(tmp);
			if (rc)
				goto out;
		} else if (is8(r->type[t]) && is_int_dtype(feeds[k].dtype)) {
			/* integers are the quantized values themselves, as
			 * an integer numpy array fed to TFLite (a uint8
			 * one held moved by 128) */
			int u8 = r->type[t] == TFK_TFL_UINT8;
			int64_t i, v;

			for (i = 0; i < n; i++) {
				v = int_at(&feeds[k], i);
				if (v < (u8 ? 0 : -128) ||
				    v > (u8 ? 255 : 127)) {
					rc = tfk_errf(err, TFK_EINVAL, "input "
						      "%d '%s': value %lld is "
						      "outside %s", k,
						      x->name, (long long)v,
						      u8 ? "uint8" : "int8");
					goto out;
				}
				((int8_t *)d)[i] = (int8_t)(v - (u8 ? 128 : 0));
			}
		} else {
			rc = tfk_errf(err, TFK_EINVAL, "input %d '%s': %s "
				      "values for a %s tensor are not "
				      "supported", k, x->name,
				      tfk_dtype_name(feeds[k].dtype),
				      tfk_tfl_type_name(r->type[t]));
			goto out;
		}
	}
	for (k = 0; k < s->n_ops; k++) {
		r->op_i = k;
		if ((rc = run_op(r, 0))) {
			/* the kernels' own messages do not say where */
			if (strncmp(r->err->msg, "operator ", 9))
				tfk_err_prefix(r->err, "operator %d (%s)",
					       r->op_i, op_name(r));
			goto out;
		}
	}
	for (k = 0; k < n_out; k++) {
		int t = out_tensors[k];
		int64_t sh[TFK_MAX_RANK];
		int rank = shape_of(r, t, sh);
		enum tfk_dtype dt = tfk_tfl_dtype(r->type[t]);
		void *d = data_of(r, t);

		if (!d) {
			rc = r->data_rc;
			goto out;
		}
		if ((rc = tfk_tensor_init(&outs[k], dt, rank, sh, err)))
			goto out;
		memcpy(outs[k].data, d, outs[k].nbytes);
		if (r->type[t] == TFK_TFL_UINT8) {	/* held moved */
			size_t i;

			for (i = 0; i < outs[k].nbytes; i++)
				((uint8_t *)outs[k].data)[i] ^= 0x80;
		}
	}
out:
	if (rc)
		for (k = 0; k < n_out; k++)
			tfk_tensor_release(&outs[k]);
	return rc;
}

int tfk_tflite_run_int8(const struct tfk_tflite *m, int sg,
			const struct tfk_tensor *feeds, int n_out,
			const int *out_tensors, struct tfk_tensor *outs,
			struct tfk_err *err)
{
	struct tfk_tfl_int8 *p;
	int k, rc;

	for (k = 0; k < n_out; k++)
		memset(&outs[k], 0, sizeof(outs[k]));
	if ((rc = tfk_tflite_int8_new(&p, m, sg, err)))
		return rc;
	rc = tfk_tflite_int8_run(p, feeds, n_out, out_tensors, outs, err);
	tfk_tflite_int8_free(p);
	return rc;
}
