/*
 * conv.c - int8 CONV_2D and DEPTHWISE_CONV_2D.
 *
 * The _refs are reference_integer_ops::ConvPerChannel and
 * DepthwiseConvPerChannel: for each output, the int32 sum over the
 * in-bounds taps of filter * (input + in_offset) (a padded tap is the
 * real value 0, so it is skipped, not read as the zero point), plus
 * bias, requantized per output channel. Geometry is struct tfk_conv2d,
 * whose SAME/VALID rules are TFLite's as well as TF's.
 *
 * The fast CONV_2D is the FC GEMM core (fc.c) over an implicit im2col:
 * each row is one output pixel's patch in the filter's OHWI order (ky,
 * kx, c), built per tile of 8 pixels as x + 128 bytes, with padded taps
 * set to zp + 128 so that their (x + 128) + (in_offset - 128) is 0, as
 * skipping them is.
 */
#include "kernels/int8.h"
#include "kernels/int8/gemm-impl.h"

#include <string.h>

static int8_t finish(const struct tfk_int8_rq *rq, int64_t acc, int64_t ch)
{
	/* TFLite's int32 accumulator, wrapping */
	int32_t v = (int32_t)(uint32_t)acc;

	v = tfk_int8_mbqm(v, rq->mult[ch % rq->n], rq->shift[ch % rq->n]) +
	    rq->out_offset;
	v = v < rq->act_min ? rq->act_min : v;
	v = v > rq->act_max ? rq->act_max : v;
	return (int8_t)v;
}

void tfk_int8_conv2d_ref(const struct tfk_conv2d *g,
			 const struct tfk_int8_rq *rq, const int8_t *x,
			 const int8_t *f, const int32_t *bias, int8_t *y)
{
	int64_t b, oy, ox, oc, ky, kx, ic;
	int64_t per_group = g->o / g->groups;

	for (b = 0; b < g->n; b++)
		for (oy = 0; oy < g->oh; oy++)
			for (ox = 0; ox < g->ow; ox++)
				for (oc = 0; oc < g->o; oc++) {
					int64_t grp = oc / per_group, acc = 0;

					for (ky = 0; ky < g->kh; ky++) {
						int64_t iy = oy * g->sh - g->pt +
							     ky * g->dh;

						if (iy < 0 || iy >= g->h)
							continue;
						for (kx = 0; kx < g->kw; kx++) {
							int64_t ix = ox * g->sw -
								g->pl + kx * g->dw;
							const int8_t *xp, *fp;

							if (ix < 0 || ix >= g->w)
								continue;
							xp = x + ((b * g->h + iy) *
								  g->w + ix) * g->c +
							     grp * g->kc;
							fp = f + ((oc * g->kh + ky) *
								  g->kw + kx) * g->kc;
							for (ic = 0; ic < g->kc; ic++)
								acc += (int64_t)(fp[ic] +
									rq->w_offset) *
									(xp[ic] +
									 rq->in_offset);
						}
					}
					if (bias)
						acc += bias[oc];
					y[((b * g->oh + oy) * g->ow + ox) * g->o +
					  oc] = finish(rq, acc, oc);
				}
}

void tfk_int8_dwconv2d_ref(const struct tfk_conv2d *g,
			   const struct tfk_int8_rq *rq, const int8_t *x,
			   const int8_t *f, const int32_t *bias, int8_t *y)
{
	int64_t b, oy, ox, oc, ky, kx;

	for (b = 0; b < g->n; b++)
		for (oy = 0; oy < g->oh; oy++)
			for (ox = 0; ox < g->ow; ox++)
				for (oc = 0; oc < g->o; oc++) {
					int64_t ic = oc / g->mult, acc = 0;

					for (ky = 0; ky < g->kh; ky++) {
						int64_t iy = oy * g->sh - g->pt +
							     ky * g->dh;

						if (iy < 0 || iy >= g->h)
							continue;
						for (kx = 0; kx < g->kw; kx++) {
							int64_t ix = ox * g->sw -
								g->pl + kx * g->dw;
							int8_t xv, fv;

							if (ix < 0 || ix >= g->w)
								continue;
							xv = x[((b * g->h + iy) *
								g->w + ix) * g->c + ic];
							fv = f[(ky * g->kw + kx) *
							       g->o + oc];
							acc += (int64_t)(fv +
								rq->w_offset) *
								(xv + rq->in_offset);
						}
					}
					if (bias)
						acc += bias[oc];
					y[((b * g->oh + oy) * g->ow + ox) * g->o +
					  oc] = finish(rq, acc, oc);
				}
}

struct conv_rows {
	const struct tfk_conv2d *g;
	const int8_t *x;
	int64_t kp;
	uint8_t pad;		/* zp + 128 */
};

static void conv_row(const void *ctx, int64_t r, uint8_t *dst)
{
	const struct conv_rows *cr = ctx;
	const struct tfk_conv2d *g = cr->g;
	int64_t ox = r % g->ow, oy = r / g->ow % g->oh, b = r / g->ow / g->oh;
	int64_t ky, kx, i, c = g->c;
	uint8_t *d = dst;

	for (ky = 0; ky < g->kh; ky++) {
		int64_t iy = oy * g->sh - g->pt + ky * g->dh;

		for (kx = 0; kx < g->kw; kx++, d += c) {
			int64_t ix = ox * g->sw - g->pl + kx * g->dw;
			const int8_t *xp;

			if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w) {
				memset(d, cr->pad, (size_t)c);
				continue;
			}
			xp = cr->x + ((b * g->h + iy) * g->w + ix) * c;
			for (i = 0; i < c; i++)
				d[i] = (uint8_t)xp[i] ^ 0x80;
		}
	}
	memset(d, 0, (size_t)(dst + cr->kp - d));
}

int tfk_int8_conv2d(const struct tfk_conv2d *g, const struct tfk_int8_rq *rq,
		    const int8_t *x, const struct tfk_int8_packed *p,
		    const int32_t *bias, int8_t *y, int threads,
		    struct tfk_conv_ws *ws, struct tfk_err *err)
{
	struct conv_rows cr;
	struct tfk_i8_gemm gm;

	if (g->depthwise || g->groups != 1)
		return tfk_errf(err, TFK_EINVAL, "fast int8 conv: groups %lld"
				" (depthwise %d) not supported",
				(long long)g->groups, g->depthwise);
	if (p->n != g->o || p->k != g->kh * g->kw * g->kc)
		return tfk_errf(err, TFK_EINVAL, "fast int8 conv: packed "
				"weights [%lld, %lld], filter wants [%lld, "
				"%lld]", (long long)p->n, (long long)p->k,
				(long long)g->o,
				(long long)(g->kh * g->kw * g->kc));
	cr.g = g;
	cr.x = x;
	cr.kp = p->kp;
	cr.pad = (uint8_t)((-rq->in_offset + 128) & 0xff);
	gm.rq = rq;
	gm.p = p;
	gm.m = g->n * g->oh * g->ow;
	gm.row = conv_row;
	gm.ctx = &cr;
	gm.bias = bias;
	gm.y = y;
	return tfk_i8_gemm_run(&gm, threads, ws, err);
}
