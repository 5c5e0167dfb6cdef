/*
 * infer-impl.h - shape-inference checks shared by the CPU op families
 * (private to lib/kernels/cpu).
 */
#ifndef TFK_KERNELS_CPU_INFER_IMPL_H
#define TFK_KERNELS_CPU_INFER_IMPL_H

#include "graph/op.h"
#include "graph/tensor.h"
#include "util/err.h"

/*
 * Inputs 0 and 1 must have one shape where both are known (ranks known
 * and equal, each dim where both know it equal): 0, or TFK_EINVAL naming
 * both shapes. Leaves out[] alone.
 */
static inline int infer_agree2(struct tfk_infer_ctx *ic)
{
	char b1[128], b2[128];
	int i, bad;

	if (ic->in[0].rank < 0 || ic->in[1].rank < 0)
		return 0;
	bad = ic->in[0].rank != ic->in[1].rank;
	for (i = 0; !bad && i < ic->in[0].rank; i++)
		bad = ic->in[0].shape[i] >= 0 && ic->in[1].shape[i] >= 0 &&
			ic->in[0].shape[i] != ic->in[1].shape[i];
	if (!bad)
		return 0;
	return tfk_errf(ic->err, TFK_EINVAL, "input 1: shape %s, input 0 is "
			"%s", tfk_shape_str(ic->in[1].rank, ic->in[1].shape,
					    b1, sizeof(b1)),
			tfk_shape_str(ic->in[0].rank, ic->in[0].shape, b2,
				      sizeof(b2)));
}

#endif
