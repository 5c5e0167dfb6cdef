/*
 * grad-impl.h - small helpers for gradient builders of the CPU op
 * families (private to lib/kernels/cpu): add a node under the builder's
 * prefix, make a scalar Const of a given dtype, and get a shape vector
 * for a port that is a Const when the shape is static enough.
 *
 * gb_shape: a Const keeps the graph's build-time shapes exact (an infer
 * given a Const shape knows every dim), while Shape(x) is only known
 * when an executor plans; so the Const is used whenever x has at most
 * one unknown dim and the consumer accepts -1 for it (Reshape does).
 */
#ifndef TFK_KERNELS_CPU_GRAD_IMPL_H
#define TFK_KERNELS_CPU_GRAD_IMPL_H

#include "graph/graph.h"

static inline int gb_add(struct tfk_grad_ctx *gc, const char *op,
			 const struct tfk_port *in, int n_in,
			 const struct tfk_attr *at, int n_at,
			 struct tfk_port *out)
{
	return tfk_graph_add_node(gc->g, op, gc->prefix, in, n_in, at, n_at,
				  out, gc->err);
}

/* op(a) */
static inline int gb_1(struct tfk_grad_ctx *gc, const char *op,
		       struct tfk_port a, struct tfk_port *out)
{
	return gb_add(gc, op, &a, 1, NULL, 0, out);
}

/* op(a, b) */
static inline int gb_2(struct tfk_grad_ctx *gc, const char *op,
		       struct tfk_port a, struct tfk_port b,
		       struct tfk_port *out)
{
	struct tfk_port in[2] = { a, b };

	return gb_add(gc, op, in, 2, NULL, 0, out);
}

/* Scalar Const of dtype dt (FLOAT, DOUBLE, INT32, INT64) holding v. */
static inline int gb_scalar(struct tfk_grad_ctx *gc, enum tfk_dtype dt,
			    double v, struct tfk_port *out)
{
	struct tfk_tensor t;
	union {
		float f;
		double d;
		int32_t i;
		int64_t l;
	} u;

	switch (dt) {
	case TFK_DT_FLOAT: u.f = (float)v; break;
	case TFK_DT_DOUBLE: u.d = v; break;
	case TFK_DT_INT32: u.i = (int32_t)v; break;
	default: u.l = (int64_t)v; break;
	}
	tfk_tensor_init_view(&t, dt, 0, NULL, &u, tfk_dtype_size(dt),
			     TFK_OWN_BORROWED, NULL);
	return tfk_graph_const(gc->g, gc->prefix, &t, out, gc->err);
}

/* int32 vector Const */
static inline int gb_ints(struct tfk_grad_ctx *gc, const int32_t *v, int n,
			  struct tfk_port *out)
{
	return tfk_graph_const_i32v(gc->g, gc->prefix, v, n, out, gc->err);
}

/*
 * The shape of x as an int32 vector for Reshape: a Const (the unknown
 * dim, if one, as -1) when x has a known rank and at most one unknown
 * dim, else Shape(x).
 */
static inline int gb_shape(struct tfk_grad_ctx *gc, struct tfk_port x,
			   struct tfk_port *out)
{
	const struct tfk_tdesc *t = tfk_graph_desc(gc->g, x);
	int32_t s[TFK_MAX_RANK];
	int i, unk = 0, big = 0;

	for (i = 0; t->rank >= 0 && i < t->rank; i++) {
		s[i] = t->shape[i] < 0 ? -1 : (int32_t)t->shape[i];
		unk += t->shape[i] < 0;
		big += t->shape[i] > INT32_MAX;
	}
	if (t->rank >= 0 && unk <= 1 && !big)
		return gb_ints(gc, s, t->rank, out);
	return gb_1(gc, "Shape", x, out);
}

#endif
