/*
 * gather.c - GatherV2 and UnsortedSegmentSum (TF's array_ops.cc and
 * math_ops.cc op defs), the pair Embedding trains with.
 *
 * TF's gradient of GatherV2 is an IndexedSlices (values dy, indices)
 * that the optimizer applies sparsely; ours is the dense tensor
 * UnsortedSegmentSum(dy, indices, params.shape[0]), which is what TF
 * itself densifies it to when an IndexedSlices meets a dense op. Only
 * axis 0 (Embedding's) has a gradient; other axes are refused when the
 * gradient is built, not silently wrong. UnsortedSegmentSum's gradient
 * is GatherV2(dy, segment_ids) (TF's _GatherDropNegatives without the
 * drop: a negative segment id, which the forward drops, makes that
 * Gather fail with an error naming the index instead of giving 0).
 *
 * Kernels: both view the operands as [outer, n, inner] blocks; the _ref
 * copies element by element, the fast path one memcpy (gather) or one
 * vectorizable add loop (segment sum) per inner block.
 */
#include "kernels/cpu.h"
#include "graph/graph.h"

#include <stdio.h>
#include <string.h>

#define NUMBERS (TFK_DT_BIT(TFK_DT_FLOAT) | TFK_DT_BIT(TFK_DT_DOUBLE) | \
		 TFK_DT_BIT(TFK_DT_INT32) | TFK_DT_BIT(TFK_DT_INT64))
#define INDEX (TFK_DT_BIT(TFK_DT_INT32) | TFK_DT_BIT(TFK_DT_INT64))

static int64_t idx_at(const struct tfk_tensor *t, int64_t i)
{
	return t->dtype == TFK_DT_INT32 ? ((const int32_t *)t->data)[i] :
		((const int64_t *)t->data)[i];
}

/* "2,1": the coordinates of flat index i in t's shape. */
static char *coords(const struct tfk_tensor *t, int64_t i, char *buf,
		    size_t n)
{
	int64_t c[TFK_MAX_RANK];
	size_t o = 0;
	int d;

	for (d = t->rank - 1; d >= 0; d--) {
		c[d] = t->shape[d] ? i % t->shape[d] : 0;
		i = t->shape[d] ? i / t->shape[d] : 0;
	}
	buf[0] = 0;
	for (d = 0; d < t->rank && o < n; d++)
		o += snprintf(buf + o, n - o, "%s%lld", d ? "," : "",
			      (long long)c[d]);
	return buf;
}

static int check_gather(const struct tfk_tensor *params,
			const struct tfk_tensor *indices, int axis,
			const struct tfk_tensor *out, int64_t *outer,
			int64_t *inner, struct tfk_err *err)
{
	int64_t i, n, ni = tfk_tensor_numel(indices);
	char b[128];
	int d, r;

	if (indices->dtype != TFK_DT_INT32 && indices->dtype != TFK_DT_INT64)
		return tfk_errf(err, TFK_EINVAL, "indices of %s",
				tfk_dtype_name(indices->dtype));
	if (axis < 0 || axis >= params->rank)
		return tfk_errf(err, TFK_EINVAL, "axis %d out of range for "
				"rank %d", axis, params->rank);
	r = params->rank - 1 + indices->rank;
	if (out->dtype != params->dtype || out->rank != r)
		return tfk_errf(err, TFK_EINVAL, "gather output must be %s of "
				"rank %d", tfk_dtype_name(params->dtype), r);
	*outer = *inner = 1;
	for (d = 0; d < params->rank; d++) {
		int64_t want = params->shape[d];
		int od = d < axis ? d : d - 1 + indices->rank;

		if (d == axis)
			continue;
		if (out->shape[od] != want)
			return tfk_errf(err, TFK_EINVAL, "gather output dim %d "
					"is %lld, want %lld", od,
					(long long)out->shape[od],
					(long long)want);
		if (d < axis)
			*outer *= want;
		else
			*inner *= want;
	}
	for (d = 0; d < indices->rank; d++)
		if (out->shape[axis + d] != indices->shape[d])
			return tfk_errf(err, TFK_EINVAL, "gather output dim %d "
					"is %lld, want %lld", axis + d,
					(long long)out->shape[axis + d],
					(long long)indices->shape[d]);
	n = params->shape[axis];
	for (i = 0; i < ni; i++) {
		int64_t k = idx_at(indices, i);

		if (k < 0 || k >= n)
			return tfk_errf(err, TFK_EINVAL, "indices[%s] = %lld is "
					"not in [0, %lld)",
					coords(indices, i, b, sizeof(b)),
					(long long)k, (long long)n);
	}
	return 0;
}

int tfk_cpu_gather_ref(const struct tfk_tensor *params,
		       const struct tfk_tensor *indices, int axis,
		       struct tfk_tensor *out, struct tfk_err *err)
{
	size_t es = tfk_dtype_size(params->dtype);
	int64_t outer, inner, o, i, e, ni = tfk_tensor_numel(indices), n;
	int rc = check_gather(params, indices, axis, out, &outer, &inner, err);

	if (rc)
		return rc;
	n = params->shape[axis];
	for (o = 0; o < outer; o++)
		for (i = 0; i < ni; i++)
			for (e = 0; e < inner; e++) {
				int64_t src = (o * n + idx_at(indices, i)) *
					inner + e;
				int64_t dst = (o * ni + i) * inner + e;

				memcpy((char *)out->data + dst * es,
				       (const char *)params->data + src * es,
				       es);
			}
	return 0;
}

int tfk_cpu_gather(const struct tfk_tensor *params,
		   const struct tfk_tensor *indices, int axis,
		   struct tfk_tensor *out, struct tfk_err *err)
{
	size_t es = tfk_dtype_size(params->dtype), row;
	int64_t outer, inner, o, i, ni = tfk_tensor_numel(indices), n;
	const char *src = params->data;
	char *dst = out->data;
	int rc = check_gather(params, indices, axis, out, &outer, &inner, err);

	if (rc)
		return rc;
	n = params->shape[axis];
	row = (size_t)inner * es;
	if (!row)
		return 0;
	for (o = 0; o < outer; o++)
		for (i = 0; i < ni; i++, dst += row)
			memcpy(dst, src + (size_t)(o * n + idx_at(indices, i)) *
			       row, row);
	return 0;
}

static int check_segment(const struct tfk_tensor *data,
			 const struct tfk_tensor *ids,
			 const struct tfk_tensor *out, int64_t *inner,
			 struct tfk_err *err)
{
	int64_t i, ni = tfk_tensor_numel(ids), num;
	char b[128];
	int d;

	if (!(TFK_DT_BIT(data->dtype) & NUMBERS) || out->dtype != data->dtype)
		return tfk_errf(err, TFK_EINVAL, "segment sum of %s",
				tfk_dtype_name(data->dtype));
	if (ids->dtype != TFK_DT_INT32 && ids->dtype != TFK_DT_INT64)
		return tfk_errf(err, TFK_EINVAL, "segment ids of %s",
				tfk_dtype_name(ids->dtype));
	if (ids->rank > data->rank || out->rank != data->rank - ids->rank + 1)
		return tfk_errf(err, TFK_EINVAL, "segment ids of rank %d for "
				"data of rank %d", ids->rank, data->rank);
	for (d = 0; d < ids->rank; d++)
		if (ids->shape[d] != data->shape[d])
			return tfk_errf(err, TFK_EINVAL, "segment_ids.shape "
					"%s is not a prefix of data.shape",
					tfk_shape_str(ids->rank, ids->shape, b,
						      sizeof(b)));
	*inner = 1;
	for (d = ids->rank; d < data->rank; d++) {
		if (out->shape[d - ids->rank + 1] != data->shape[d])
			return tfk_errf(err, TFK_EINVAL, "segment sum output "
					"dim %d is %lld, want %lld",
					d - ids->rank + 1,
					(long long)out->shape[d - ids->rank + 1],
					(long long)data->shape[d]);
		*inner *= data->shape[d];
	}
	num = out->shape[0];
	for (i = 0; i < ni; i++) {
		int64_t k = idx_at(ids, i);

		if (k >= num)
			return tfk_errf(err, TFK_EINVAL, "segment_ids[%s] = "
					"%lld is out of range [0, %lld)",
					coords(ids, i, b, sizeof(b)),
					(long long)k, (long long)num);
	}
	return 0;
}

int tfk_cpu_segment_sum_ref(const struct tfk_tensor *data,
			    const struct tfk_tensor *ids,
			    struct tfk_tensor *out, struct tfk_err *err)
{
	int64_t inner, i, e, ni = tfk_tensor_numel(ids);
	int rc = check_segment(data, ids, out, &inner, err);

	if (rc)
		return rc;
	if (out->nbytes)
		memset(out->data, 0, out->nbytes);
	for (i = 0; i < ni; i++) {
		int64_t k = idx_at(ids, i);

		if (k < 0)
			continue;
		for (e = 0; e < inner; e++) {
			int64_t s = i * inner + e, d = k * inner + e;

			switch (data->dtype) {
			case TFK_DT_FLOAT:
				((float *)out->data)[d] +=
					((const float *)data->data)[s];
				break;
			case TFK_DT_DOUBLE:
				((double *)out->data)[d] +=
					((const double *)data->data)[s];
				break;
			case TFK_DT_INT32:
				((int32_t *)out->data)[d] = (int32_t)(
					(uint32_t)((int32_t *)out->data)[d] +
					(uint32_t)((const int32_t *)
						   data->data)[s]);
				break;
			default:
				((int64_t *)out->data)[d] = (int64_t)(
					(uint64_t)((int64_t *)out->data)[d] +
					(uint64_t)((const int64_t *)
						   data->data)[s]);
				break;
			}
		}
	}
	return 0;
}

int tfk_cpu_segment_sum(const struct tfk_tensor *data,
			const struct tfk_tensor *ids, struct tfk_tensor *out,
			struct tfk_err *err)
{
	int64_t inner, i, e, ni = tfk_tensor_numel(ids);
	int rc = check_segment(data, ids, out, &inner, err);

	if (rc)
		return rc;
	if (data->dtype != TFK_DT_FLOAT)
		return tfk_cpu_segment_sum_ref(data, ids, out, err);
	if (out->nbytes)
		memset(out->data, 0, out->nbytes);
	for (i = 0; i < ni; i++) {
		int64_t k = idx_at(ids, i);
		const float *s = (const float *)data->data + i * inner;
		float *d = (float *)out->data + k * inner;

		if (k < 0)
			continue;
		for (e = 0; e < inner; e++)
			d[e] += s[e];
	}
	return 0;
}

/* Shape inference -------------------------------------------------------- */

static int scalar_int(const struct tfk_tensor *t, int64_t *v)
{
	if (!t || tfk_tensor_numel(t) != 1 || t->rank > 1)
		return -1;
	*v = idx_at(t, 0);
	return 0;
}

static int infer_gather(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *p = &ic->in[0], *ix = &ic->in[1];
	int64_t axis;
	int d, r = 0;

	if (tfk_node_attr_i(ic->node, "batch_dims", 0) != 0)
		return tfk_errf(ic->err, TFK_EINVAL, "batch_dims %lld not "
				"supported (only 0)", (long long)
				tfk_node_attr_i(ic->node, "batch_dims", 0));
	if (ic->in[2].rank > 0)
		return tfk_errf(ic->err, TFK_EINVAL, "input 2: axis must be a "
				"scalar");
	if (p->rank < 0 || ix->rank < 0) {
		ic->out[0].rank = -1;
		return 0;
	}
	if (p->rank < 1)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: params must "
				"have rank >= 1");
	if (p->rank - 1 + ix->rank > TFK_MAX_RANK)
		return tfk_errf(ic->err, TFK_EINVAL, "output rank %d above %d",
				p->rank - 1 + ix->rank, TFK_MAX_RANK);
	ic->out[0].rank = p->rank - 1 + ix->rank;
	if (scalar_int(ic->in_value[2], &axis)) {
		for (d = 0; d < ic->out[0].rank; d++)
			ic->out[0].shape[d] = -1;
		return 0;
	}
	if (axis < -p->rank || axis >= p->rank)
		return tfk_errf(ic->err, TFK_EINVAL, "input 2: axis %lld out "
				"of range for rank %d", (long long)axis,
				p->rank);
	if (axis < 0)
		axis += p->rank;
	for (d = 0; d < axis; d++)
		ic->out[0].shape[r++] = p->shape[d];
	for (d = 0; d < ix->rank; d++)
		ic->out[0].shape[r++] = ix->shape[d];
	for (d = (int)axis + 1; d < p->rank; d++)
		ic->out[0].shape[r++] = p->shape[d];
	return 0;
}

static int infer_segment(struct tfk_infer_ctx *ic)
{
	const struct tfk_tdesc *x = &ic->in[0], *ids = &ic->in[1];
	int64_t num = -1;
	char b1[128], b2[128];
	int d;

	if (ic->in[2].rank > 0)
		return tfk_errf(ic->err, TFK_EINVAL, "input 2: num_segments "
				"must be a scalar");
	if (x->rank < 0 || ids->rank < 0) {
		ic->out[0].rank = -1;
		return 0;
	}
	if (ids->rank > x->rank)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: segment_ids "
				"rank %d above data rank %d", ids->rank,
				x->rank);
	for (d = 0; d < ids->rank; d++)
		if (ids->shape[d] >= 0 && x->shape[d] >= 0 &&
		    ids->shape[d] != x->shape[d])
			return tfk_errf(ic->err, TFK_EINVAL, "input 1: "
					"segment_ids.shape %s is not a prefix "
					"of data.shape %s",
					tfk_shape_str(ids->rank, ids->shape,
						      b1, sizeof(b1)),
					tfk_shape_str(x->rank, x->shape, b2,
						      sizeof(b2)));
	if (!scalar_int(ic->in_value[2], &num) && num < 0)
		return tfk_errf(ic->err, TFK_EINVAL, "input 2: num_segments "
				"%lld is negative", (long long)num);
	ic->out[0].rank = x->rank - ids->rank + 1;
	ic->out[0].shape[0] = num;
	for (d = ids->rank; d < x->rank; d++)
		ic->out[0].shape[d - ids->rank + 1] = x->shape[d];
	return 0;
}

/* Kernels ---------------------------------------------------------------- */

static int k_gather(struct tfk_kernel_ctx *kc)
{
	int64_t axis;

	if (scalar_int(kc->in[2], &axis))
		return tfk_errf(kc->err, TFK_EINVAL, "axis must be a scalar");
	if (axis < 0)
		axis += kc->in[0]->rank;
	return tfk_cpu_gather(kc->in[0], kc->in[1], (int)axis, kc->out[0],
			      kc->err);
}

static int k_segment(struct tfk_kernel_ctx *kc)
{
	return tfk_cpu_segment_sum(kc->in[0], kc->in[1], kc->out[0], kc->err);
}

/* Gradients -------------------------------------------------------------- */

static int grad_gather(struct tfk_grad_ctx *gc)
{
	const struct tfk_node *n = gc->node;
	const struct tfk_tdesc *p = tfk_graph_desc(gc->g, n->inputs[0]);
	const struct tfk_tensor *ax = tfk_graph_const_value(gc->g,
							    n->inputs[2]);
	struct tfk_port in[3];
	struct tfk_tensor num;
	int64_t axis;
	int32_t n32;
	int rc;

	if (!(TFK_DT_BIT(p->dtype) & (TFK_DT_BIT(TFK_DT_FLOAT) |
				      TFK_DT_BIT(TFK_DT_DOUBLE))))
		return 0;
	if (scalar_int(ax, &axis) || (axis != 0 && axis != -p->rank))
		return tfk_errf(gc->err, TFK_EINVAL, "node %s: gradient only "
				"for a Const axis 0", n->name);
	if (p->rank < 1 || p->shape[0] < 0 || p->shape[0] > INT32_MAX)
		return tfk_errf(gc->err, TFK_EINVAL, "node %s: gradient needs "
				"params' first dimension known", n->name);
	n32 = (int32_t)p->shape[0];
	tfk_tensor_init_view(&num, TFK_DT_INT32, 0, NULL, &n32, 4,
			     TFK_OWN_BORROWED, NULL);
	rc = tfk_graph_const(gc->g, gc->prefix, &num, &in[2], gc->err);
	if (rc)
		return rc;
	in[0] = gc->dy[0];
	in[1] = n->inputs[1];
	return tfk_graph_add_node(gc->g, "UnsortedSegmentSum", gc->prefix, in,
				  3, NULL, 0, &gc->dx[0], gc->err);
}

static int grad_segment(struct tfk_grad_ctx *gc)
{
	struct tfk_port in[3];
	struct tfk_tensor z;
	int32_t zero = 0;
	int rc;

	if (!(TFK_DT_BIT(gc->node->outputs[0].dtype) &
	      (TFK_DT_BIT(TFK_DT_FLOAT) | TFK_DT_BIT(TFK_DT_DOUBLE))))
		return 0;
	/* a scalar axis 0, as TF's */
	tfk_tensor_init_view(&z, TFK_DT_INT32, 0, NULL, &zero, 4,
			     TFK_OWN_BORROWED, NULL);
	rc = tfk_graph_const(gc->g, gc->prefix, &z, &in[2], gc->err);
	if (rc)
		return rc;
	in[0] = gc->dy[0];
	in[1] = gc->node->inputs[1];
	return tfk_graph_add_node(gc->g, "GatherV2", gc->prefix, in, 3, NULL,
				  0, &gc->dx[0], gc->err);
}

/* Tables ----------------------------------------------------------------- */

const struct tfk_op_def tfk_ops_gather[] = {
	{
		.name = "GatherV2",
		.inputs = { { "params", .type_attr = "Tparams" },
			    { "indices", .type_attr = "Tindices" },
			    { "axis", .type_attr = "Taxis" } },
		.outputs = { { "output", .type_attr = "Tparams" } },
		.attrs = {
			{ "batch_dims", TFK_ATTR_INT, 1, { .i = 0 } },
			{ "Tparams", TFK_ATTR_TYPE, 0, { 0 }, 0 },
			{ "Tindices", TFK_ATTR_TYPE, 0, { 0 }, INDEX },
			{ "Taxis", TFK_ATTR_TYPE, 0, { 0 }, INDEX },
		},
		.infer = infer_gather,
		.grad = grad_gather,
	},
	{
		.name = "UnsortedSegmentSum",
		.inputs = { { "data", .type_attr = "T" },
			    { "segment_ids", .type_attr = "Tindices" },
			    { "num_segments", .type_attr = "Tnumsegments" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = {
			{ "T", TFK_ATTR_TYPE, 0, { 0 }, NUMBERS },
			{ "Tindices", TFK_ATTR_TYPE, 0, { 0 }, INDEX },
			{ "Tnumsegments", TFK_ATTR_TYPE, 1,
			  { .type = TFK_DT_INT32 }, INDEX },
		},
		.infer = infer_segment,
		.grad = grad_segment,
	},
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_gather[] = {
	{ "GatherV2", "cpu", NULL, k_gather, NULL },
	{ "UnsortedSegmentSum", "cpu", NULL, k_segment, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
