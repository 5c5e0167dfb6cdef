/*
 * gemm-impl.h - the int8 GEMM core shared by the fast FULLY_CONNECTED
 * (fc.c) and CONV_2D (conv.c); private to lib/kernels/int8.
 *
 * y[m, j] = requant(bias2[j] + sum_k a[m, k] * w[j, k]) where a holds
 * x + 128 as unsigned bytes (rows made on the fly by row(), k padded to
 * kp) and bias2 folds in the bias and the correction (in_offset - 128)
 * * rowsum(w). Rows go in tiles of TFK_I8_TILE, split over threads.
 */
#ifndef TFK_KERNELS_INT8_GEMM_IMPL_H
#define TFK_KERNELS_INT8_GEMM_IMPL_H

#include "kernels/int8.h"

#define TFK_I8_TILE 12

struct tfk_i8_gemm {
	const struct tfk_int8_rq *rq;
	const struct tfk_int8_packed *p;
	int64_t m;		/* rows of y */
	/* Writes row r (< m) of a: p->kp bytes. */
	void (*row)(const void *ctx, int64_t r, uint8_t *dst);
	/* Or, when rowptr is set, rows read in place: row r is nseg
	 * segments of seglen bytes (a multiple of 4; nseg * seglen = kp),
	 * segment s at rowptr(ctx, r) + s * segstride. */
	const uint8_t *(*rowptr)(const void *ctx, int64_t r);
	/* Optional with rowptr: rp[i] = rowptr(ctx, r0 + i) for i < n, at
	 * once (a conv steps through its pixels instead of dividing). */
	void (*rowptrs)(const void *ctx, int64_t r0, int n,
			const uint8_t **rp);
	int64_t nseg, seglen, segstride;
	const void *ctx;
	const int32_t *bias;	/* the op's bias [n] or NULL */
	int8_t *y;		/* [m, n] */
	/* Optional: pre_bytes of ws handed to prep(ctx, buf) before the
	 * rows are made (the conv's padded x + 128 copy). */
	size_t pre_bytes;
	void (*prep)(void *ctx, uint8_t *buf);
};

/* Runs it; TFK_ENOMEM growing ws, TFK_EINVAL for w_offset != 0. */
int tfk_i8_gemm_run(const struct tfk_i8_gemm *g, int threads,
		    struct tfk_conv_ws *ws, struct tfk_err *err);

#endif
