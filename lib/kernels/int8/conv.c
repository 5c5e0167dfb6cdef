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
 * the input is copied once per call as x + 128 bytes into a padded
 * buffer whose border holds zp + 128 (so a padded tap's (x + 128) +
 * (in_offset - 128) is 0, as skipping it is). Each GEMM row, one output
 * pixel's patch in the filter's OHWI order (ky, kx, c), is then kh
 * runs of kw * c contiguous bytes of that copy: with dilation 1 in
 * width and c % 4 == 0 the VNNI kernel reads them in place (no im2col
 * at all; tfk_int8_pack_conv pads other c, a first layer's 1 or 3, to
 * a multiple of 4 with zero weights, and the copy with filler bytes, so
 * that they can be read in place too: 4 MACs for 1 beat a copy), else
 * they are copied per tile of 12 pixels into L1-resident scratch. With
 * tfk_int8_pack_conv_rows a filter row's kw * c bytes are padded as one
 * (a first layer's c = 1, kw = 5: 8 bytes, not 5 taps of 4) and read
 * in place with the next bytes of the input row, which meet zero
 * weights. A
 * per-byte gather with bounds checks (the first version) cost as much
 * as the multiply-adds; the copy, a quarter.
 */
#include "kernels/int8.h"
#include "kernels/int8/gemm-impl.h"
#include "util/pool.h"

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

/* The int32 sum of one CONV_2D output (b, oy, ox, oc), bias included. */
static int64_t conv_acc(const struct tfk_conv2d *g,
			const struct tfk_int8_rq *rq, const int8_t *x,
			const int8_t *f, const int32_t *bias, int64_t b,
			int64_t oy, int64_t ox, int64_t oc)
{
	int64_t grp = oc / (g->o / g->groups), acc = bias ? bias[oc] : 0;
	int64_t ky, kx, ic;

	for (ky = 0; ky < g->kh; ky++) {
		int64_t iy = oy * g->sh - g->pt + ky * g->dh;

		if (iy < 0 || iy >= g->h)
			continue;
		for (kx = 0; kx < g->kw; kx++) {
			int64_t ix = ox * g->sw - g->pl + kx * g->dw;
			const int8_t *xp, *fp;

			if (ix < 0 || ix >= g->w)
				continue;
			xp = x + ((b * g->h + iy) * g->w + ix) * g->c +
			     grp * g->kc;
			fp = f + ((oc * g->kh + ky) * g->kw + kx) * g->kc;
			for (ic = 0; ic < g->kc; ic++)
				acc += (int64_t)(fp[ic] + rq->w_offset) *
				       (xp[ic] + rq->in_offset);
		}
	}
	return acc;
}

/* The same for DEPTHWISE_CONV_2D: output channel oc reads input
 * channel oc / mult; the filter is [kh, kw, o]. */
static int64_t dw_acc(const struct tfk_conv2d *g,
		      const struct tfk_int8_rq *rq, const int8_t *x,
		      const int8_t *f, const int32_t *bias, int64_t b,
		      int64_t oy, int64_t ox, int64_t oc)
{
	int64_t ic = oc / g->mult, acc = bias ? bias[oc] : 0, ky, kx;

	for (ky = 0; ky < g->kh; ky++) {
		int64_t iy = oy * g->sh - g->pt + ky * g->dh;

		if (iy < 0 || iy >= g->h)
			continue;
		for (kx = 0; kx < g->kw; kx++) {
			int64_t ix = ox * g->sw - g->pl + kx * g->dw;
			int8_t xv, fv;

			if (ix < 0 || ix >= g->w)
				continue;
			xv = x[((b * g->h + iy) * g->w + ix) * g->c + ic];
			fv = f[(ky * g->kw + kx) * g->o + oc];
			acc += (int64_t)(fv + rq->w_offset) *
			       (xv + rq->in_offset);
		}
	}
	return acc;
}

void tfk_int8_conv2d_ref(const struct tfk_conv2d *g,
			 const struct tfk_int8_rq *rq, const int8_t *x,
			 const int8_t *f, const int32_t *bias, int8_t *y)
{
	int64_t b, oy, ox, oc;
	int8_t *yp = y;

	for (b = 0; b < g->n; b++)
		for (oy = 0; oy < g->oh; oy++)
			for (ox = 0; ox < g->ow; ox++)
				for (oc = 0; oc < g->o; oc++)
					*yp++ = finish(rq, conv_acc(g, rq, x, f,
								    bias, b,
								    oy, ox,
								    oc), oc);
}

void tfk_int8_dwconv2d_ref(const struct tfk_conv2d *g,
			   const struct tfk_int8_rq *rq, const int8_t *x,
			   const int8_t *f, const int32_t *bias, int8_t *y)
{
	int64_t b, oy, ox, oc;
	int8_t *yp = y;

	for (b = 0; b < g->n; b++)
		for (oy = 0; oy < g->oh; oy++)
			for (ox = 0; ox < g->ow; ox++)
				for (oc = 0; oc < g->o; oc++)
					*yp++ = finish(rq, dw_acc(g, rq, x, f,
								  bias, b, oy,
								  ox, oc), oc);
}

struct conv_rows {
	const struct tfk_conv2d *g;
	const int8_t *x;
	int64_t kp;
	int64_t ph, pw;		/* padded input */
	int64_t cs;		/* its bytes per pixel: c, or c to 4 */
	uint8_t pad;		/* zp + 128 */
	const uint8_t *px;	/* [n, ph, pw, c]: x + 128, pad outside */
	size_t slack;		/* bytes after it read by the last rows */
	int threads;
};

/* x ^ 0x80 (x + 128 as a byte), eight at a time */
static void flip_copy(uint8_t *d, const int8_t *s, int64_t n)
{
	const uint64_t m = 0x8080808080808080ull;
	int64_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t v;

		memcpy(&v, s + i, 8);
		v ^= m;
		memcpy(d + i, &v, 8);
	}
	for (; i < n; i++)
		d[i] = (uint8_t)s[i] ^ 0x80;
}

/* Rows [r0, r1) of the padded copy (each of n * ph rows: one input
 * row moved by 128 between pad bytes, or all pad). */
static void prep_rows(void *ctx, int64_t r0, int64_t r1, int k)
{
	const struct conv_rows *cr = ctx;
	const struct tfk_conv2d *g = cr->g;
	int64_t r, ix, c = g->c, cs = cr->cs, row = cr->pw * cs;
	uint8_t *buf = (uint8_t *)cr->px;

	(void)k;
	for (r = r0; r < r1; r++) {
		int64_t b = r / cr->ph, iy = r % cr->ph - g->pt;
		uint8_t *d = buf + r * row;
		const int8_t *s;

		if (iy < 0 || iy >= g->h) {
			memset(d, cr->pad, (size_t)row);
			continue;
		}
		s = cr->x + (b * g->h + iy) * g->w * c;
		memset(d, cr->pad, (size_t)(g->pl * cs));
		if (cs == c) {
			flip_copy(d + g->pl * c, s, g->w * c);
		} else {
			/* filler channels meet zero weights */
			memset(d + g->pl * cs, cr->pad, (size_t)(g->w * cs));
			for (ix = 0; ix < g->w; ix++)
				flip_copy(d + (g->pl + ix) * cs, s + ix * c, c);
		}
		memset(d + (g->pl + g->w) * cs, cr->pad,
		       (size_t)((cr->pw - g->pl - g->w) * cs));
	}
}

static void conv_prep(void *ctx, uint8_t *buf)
{
	struct conv_rows *cr = ctx;
	const struct tfk_conv2d *g = cr->g;

	cr->px = buf;
	/* the copy is a tenth of a small conv's time: over the threads
	 * when there are rows enough to split */
	tfk_parallel_for(g->n * cr->ph >= 64 ? cr->threads : 1,
			 g->n * cr->ph, prep_rows, cr);
	memset(buf + g->n * cr->ph * cr->pw * cr->cs, cr->pad, cr->slack);
}

/* Row r: output pixel (b, oy, ox)'s patch in (ky, kx, c) order, read
 * from the padded copy: kh runs of kw * c bytes when dilation is 1. */
static void conv_row(const void *ctx, int64_t r, uint8_t *dst)
{
	const struct conv_rows *cr = ctx;
	const struct tfk_conv2d *g = cr->g;
	int64_t ox = r % g->ow, oy = r / g->ow % g->oh, b = r / g->ow / g->oh;
	int64_t ky, kx, cs = cr->cs;
	uint8_t *d = dst;

	/* taps of cs bytes: the filler channels of a padded packing too */
	for (ky = 0; ky < g->kh; ky++) {
		const uint8_t *s = cr->px + ((b * cr->ph + oy * g->sh +
					     ky * g->dh) * cr->pw +
					    ox * g->sw) * cs;

		if (g->dw == 1) {
			memcpy(d, s, (size_t)(g->kw * cs));
			d += g->kw * cs;
			continue;
		}
		for (kx = 0; kx < g->kw; kx++, d += cs)
			memcpy(d, s + kx * g->dw * cs, (size_t)cs);
	}
	memset(d, 0, (size_t)(dst + cr->kp - d));
}

/* Row r's first segment (ky = 0) in the padded copy. */
static const uint8_t *conv_rowptr(const void *ctx, int64_t r)
{
	const struct conv_rows *cr = ctx;
	const struct tfk_conv2d *g = cr->g;
	int64_t ox = r % g->ow, oy = r / g->ow % g->oh, b = r / g->ow / g->oh;

	return cr->px + ((b * cr->ph + oy * g->sh) * cr->pw + ox * g->sw) *
	       cr->cs;
}

/* conv_rowptr of rows r0 .. r0 + n - 1, stepping through the pixels. */
static void conv_rowptrs(const void *ctx, int64_t r0, int n,
			 const uint8_t **rp)
{
	const struct conv_rows *cr = ctx;
	const struct tfk_conv2d *g = cr->g;
	int64_t ox = r0 % g->ow, oy = r0 / g->ow % g->oh;
	int64_t b = r0 / g->ow / g->oh, step = g->sw * cr->cs;
	const uint8_t *row = cr->px + (b * cr->ph + oy * g->sh) * cr->pw *
		cr->cs;

	for (int i = 0; i < n; i++) {
		rp[i] = row + ox * step;
		if (++ox == g->ow) {
			ox = 0;
			if (++oy == g->oh) {
				oy = 0;
				b++;
			}
			row = cr->px + (b * cr->ph + oy * g->sh) * cr->pw *
				cr->cs;
		}
	}
}

/* The padded input the fast kernel copies, rows and columns: every tap
 * any output reads lies inside it. */
static void padded_extent(const struct tfk_conv2d *g, int64_t *ph,
			  int64_t *pw)
{
	*ph = (g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1;
	*pw = (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1;
	if (*ph < g->pt + g->h)
		*ph = g->pt + g->h;
	if (*pw < g->pl + g->w)
		*pw = g->pl + g->w;
}

int tfk_int8_conv2d_fast(const struct tfk_conv2d *g,
			 const struct tfk_int8_rq *rq)
{
	int64_t ph, pw;
	double area;

	if (g->depthwise || g->groups != 1 || rq->w_offset)
		return 0;
	padded_extent(g, &ph, &pw);
	/* doubles: the products may pass int64 */
	area = (double)ph * (double)pw;
	return area <= 4.0 * (double)(g->h + g->kh) * (double)(g->w + g->kw) ||
	       area * (double)g->n * (double)(g->c + 3) <= 64.0 * 1024 * 1024;
}

int tfk_int8_conv2d(const struct tfk_conv2d *g, const struct tfk_int8_rq *rq,
		    const int8_t *x, const struct tfk_int8_packed *p,
		    const int32_t *bias, int8_t *y, int threads,
		    struct tfk_conv_ws *ws, struct tfk_err *err)
{
	struct conv_rows cr;
	struct tfk_i8_gemm gm;

	if (!tfk_int8_conv2d_fast(g, rq))
		return tfk_errf(err, TFK_EINVAL, "fast int8 conv: groups %lld"
				" (depthwise %d), filter zero point %d or "
				"dilations (%lld, %lld) not supported",
				(long long)g->groups, g->depthwise,
				(int)-rq->w_offset, (long long)g->dh,
				(long long)g->dw);
	/* taps of c channels (tfk_int8_pack), or padded (pack_conv), or
	 * filter rows padded (pack_conv_rows) */
	cr.cs = p->tap_c > g->c && p->k == g->kh * g->kw * p->tap_c ?
		p->tap_c : g->c;
	if (p->row_k) {
		if (g->dw != 1 || p->n != g->o || p->tap_c != g->c ||
		    p->row_k != (g->kw * g->c + 3) / 4 * 4 ||
		    p->k != g->kh * p->row_k)
			return tfk_errf(err, TFK_EINVAL, "fast int8 conv: "
					"weights packed by rows [%lld, %lld x "
					"%lld] for a filter [%lld, %lld, %lld, "
					"%lld], width dilation %lld",
					(long long)p->n, (long long)(p->k /
					p->row_k), (long long)p->row_k,
					(long long)g->o, (long long)g->kh,
					(long long)g->kw, (long long)g->c,
					(long long)g->dw);
	} else if (p->n != g->o || p->k != g->kh * g->kw * cr.cs)
		return tfk_errf(err, TFK_EINVAL, "fast int8 conv: packed "
				"weights [%lld, %lld], filter wants [%lld, "
				"%lld]", (long long)p->n, (long long)p->k,
				(long long)g->o,
				(long long)(g->kh * g->kw * g->kc));
	cr.g = g;
	cr.x = x;
	cr.kp = p->kp;
	cr.pad = (uint8_t)((-rq->in_offset + 128) & 0xff);
	padded_extent(g, &cr.ph, &cr.pw);
	cr.px = NULL;
	cr.slack = 0;
	cr.threads = threads;
	memset(&gm, 0, sizeof(gm));
	gm.rq = rq;
	gm.p = p;
	gm.m = g->n * g->oh * g->ow;
	gm.row = conv_row;
	gm.ctx = &cr;
	gm.bias = bias;
	gm.y = y;
	gm.pre_bytes = (size_t)(g->n * cr.ph * cr.pw * cr.cs);
	gm.prep = conv_prep;
	if (p->row_k) {
		/* a filter row's kw * c bytes and the next few, which meet
		 * zero weights: slack after the copy for the last one */
		cr.slack = (size_t)(p->row_k - g->kw * g->c);
		gm.pre_bytes += cr.slack;
		gm.rowptr = conv_rowptr;
		gm.rowptrs = conv_rowptrs;
		gm.nseg = g->kh;
		gm.seglen = p->row_k;
		gm.segstride = g->dh * cr.pw * cr.cs;
	} else if (g->dw == 1 && cr.cs % 4 == 0) {
		/* rows in place: kh segments of kw * cs bytes */
		gm.rowptr = conv_rowptr;
		gm.rowptrs = conv_rowptrs;
		gm.nseg = g->kh;
		gm.seglen = g->kw * cr.cs;
		gm.segstride = g->dh * cr.pw * cr.cs;
	}
	return tfk_i8_gemm_run(&gm, threads, ws, err);
}
