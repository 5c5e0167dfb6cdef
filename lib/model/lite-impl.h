/*
 * lite-impl.h - private to lib/model's TFLite runners (tflgraph.c,
 * tflint8.c).
 */
#ifndef TFK_MODEL_LITE_IMPL_H
#define TFK_MODEL_LITE_IMPL_H

#include <stdint.h>

/*
 * One STRIDED_SLICE of the int vector a[0..n) (shape arithmetic: Keras
 * 3's Flatten slices the batch out of SHAPE's vector): begin b, end e,
 * stride s, with bit 0 of begin_mask (bm), end_mask (em), ellipsis_mask
 * (elm) and shrink_axis_mask (sm), and offset (end counted from begin),
 * as TFLite's StridedSlice clamps them. The values go to out (n at
 * most), their count to *n_out; *scalar is 1 when the axis is shrunk
 * (one value, rank 0). 0, or -1 with *why a reason (stride 0, index out
 * of range).
 */
int tfk_tfl_slice_vec(const int64_t *a, int n, int64_t b, int64_t e,
		      int64_t s, int bm, int em, int elm, int sm, int offset,
		      int64_t *out, int *n_out, int *scalar, const char **why);

#endif
