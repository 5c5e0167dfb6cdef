/*
 * pool.c - MaxPool, AvgPool and their gradients (MaxPoolGrad,
 * AvgPoolGrad), NHWC, with TensorFlow's window geometry (cpu.h).
 *
 * The _refs loop over output elements and their windows in double:
 * the specification. The fast paths (float32) keep the channel loop
 * innermost, where NHWC makes it contiguous, so each window position is
 * a vectorized pass over c values; they split the work over threads
 * with tfk_parallel_for: forward passes by output row (n, oh), gradient
 * passes by image (n), since windows of one image overlap and their
 * scatter-adds must not race, while different images never share dx.
 *
 * MaxPoolGrad recomputes the argmax from the input (TF's CPU kernel
 * does the same; orig_output is taken for the op's signature only):
 * the gradient goes to the first maximum in row-major window order
 * (a later equal value does not replace it), summed over windows.
 * AvgPool counts only in-bounds elements (TF's SAME semantics, unlike
 * a zero-padded average).
 */
#include "kernels/cpu.h"
#include "graph/graph.h"
#include "kernels/cpu/grad-impl.h"
#include "util/pool.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define FLOATS (TFK_DT_BIT(TFK_DT_FLOAT) | TFK_DT_BIT(TFK_DT_DOUBLE))

int tfk_pool2d_geom(struct tfk_pool2d *p, const int64_t *in,
		    const int64_t *ksize, const int64_t *strides,
		    const char *padding, struct tfk_err *err)
{
	int same = !strcmp(padding, "SAME"), d;

	if (!same && strcmp(padding, "VALID"))
		return tfk_errf(err, TFK_EINVAL, "padding %s not supported "
				"(SAME or VALID)", padding);
	if (ksize[0] != 1 || ksize[3] != 1 || strides[0] != 1 ||
	    strides[3] != 1)
		return tfk_errf(err, TFK_EINVAL, "pooling over the batch or "
				"channel dimension is not supported (ksize "
				"and strides must be [1, h, w, 1])");
	for (d = 1; d < 3; d++)
		if (ksize[d] < 1 || strides[d] < 1)
			return tfk_errf(err, TFK_EINVAL, "ksize and strides "
					"must be >= 1 (ksize [1, %lld, %lld, "
					"1], strides [1, %lld, %lld, 1])",
					(long long)ksize[1],
					(long long)ksize[2],
					(long long)strides[1],
					(long long)strides[2]);
	p->n = in[0], p->h = in[1], p->w = in[2], p->c = in[3];
	p->kh = ksize[1], p->kw = ksize[2];
	p->sh = strides[1], p->sw = strides[2];
	if (same) {
		int64_t ph, pw;

		p->oh = p->h < 0 ? -1 : (p->h + p->sh - 1) / p->sh;
		p->ow = p->w < 0 ? -1 : (p->w + p->sw - 1) / p->sw;
		ph = (p->oh - 1) * p->sh + p->kh - p->h;
		pw = (p->ow - 1) * p->sw + p->kw - p->w;
		p->pad_t = ph > 0 ? ph / 2 : 0;
		p->pad_l = pw > 0 ? pw / 2 : 0;
	} else {
		if ((p->h >= 0 && p->h < p->kh) || (p->w >= 0 && p->w < p->kw))
			return tfk_errf(err, TFK_EINVAL, "window %lldx%lld "
					"larger than the %lldx%lld input with "
					"VALID padding", (long long)p->kh,
					(long long)p->kw, (long long)p->h,
					(long long)p->w);
		p->oh = p->h < 0 ? -1 : (p->h - p->kh) / p->sh + 1;
		p->ow = p->w < 0 ? -1 : (p->w - p->kw) / p->sw + 1;
		p->pad_t = p->pad_l = 0;
	}
	return 0;
}

static int check_io(const struct tfk_pool2d *p, const struct tfk_tensor *x,
		    const struct tfk_tensor *y, struct tfk_err *err)
{
	if (!(TFK_DT_BIT(x->dtype) & FLOATS) || x->dtype != y->dtype ||
	    x->rank != 4 || y->rank != 4 || x->shape[0] != p->n ||
	    x->shape[1] != p->h || x->shape[2] != p->w ||
	    x->shape[3] != p->c || y->shape[0] != p->n ||
	    y->shape[1] != p->oh || y->shape[2] != p->ow ||
	    y->shape[3] != p->c)
		return tfk_errf(err, TFK_EINVAL, "pool: operands do not match "
				"the geometry");
	return 0;
}

static double ld(const struct tfk_tensor *t, int64_t i)
{
	return t->dtype == TFK_DT_FLOAT ? ((const float *)t->data)[i] :
		((const double *)t->data)[i];
}

static void st(struct tfk_tensor *t, int64_t i, double v)
{
	if (t->dtype == TFK_DT_FLOAT)
		((float *)t->data)[i] = (float)v;
	else
		((double *)t->data)[i] = v;
}

/* The in-bounds window of output (oh, ow): rows [*h0, *h1), cols
 * [*w0, *w1). */
static void window(const struct tfk_pool2d *p, int64_t oh, int64_t ow,
		   int64_t *h0, int64_t *h1, int64_t *w0, int64_t *w1)
{
	int64_t hs = oh * p->sh - p->pad_t, ws = ow * p->sw - p->pad_l;

	*h0 = hs < 0 ? 0 : hs;
	*h1 = hs + p->kh > p->h ? p->h : hs + p->kh;
	*w0 = ws < 0 ? 0 : ws;
	*w1 = ws + p->kw > p->w ? p->w : ws + p->kw;
}

#define XI(P, N, H, W, C) \
	((((N) * (P)->h + (H)) * (P)->w + (W)) * (P)->c + (C))
#define YI(P, N, H, W, C) \
	((((N) * (P)->oh + (H)) * (P)->ow + (W)) * (P)->c + (C))

/* _ref ------------------------------------------------------------------- */

/* Index into x of the first maximum of window (n, oh, ow, c). */
static int64_t argmax_ref(const struct tfk_pool2d *p,
			  const struct tfk_tensor *x, int64_t n, int64_t oh,
			  int64_t ow, int64_t c)
{
	int64_t h0, h1, w0, w1, h, w, best = -1;

	window(p, oh, ow, &h0, &h1, &w0, &w1);
	for (h = h0; h < h1; h++)
		for (w = w0; w < w1; w++) {
			int64_t i = XI(p, n, h, w, c);

			if (best < 0 || ld(x, i) > ld(x, best))
				best = i;
		}
	return best;
}

int tfk_cpu_max_pool_ref(const struct tfk_pool2d *p,
			 const struct tfk_tensor *x, struct tfk_tensor *y,
			 struct tfk_err *err)
{
	int64_t n, oh, ow, c;
	int rc = check_io(p, x, y, err);

	if (rc)
		return rc;
	for (n = 0; n < p->n; n++)
		for (oh = 0; oh < p->oh; oh++)
			for (ow = 0; ow < p->ow; ow++)
				for (c = 0; c < p->c; c++)
					st(y, YI(p, n, oh, ow, c), ld(x,
					   argmax_ref(p, x, n, oh, ow, c)));
	return 0;
}

int tfk_cpu_max_pool_grad_ref(const struct tfk_pool2d *p,
			      const struct tfk_tensor *x,
			      const struct tfk_tensor *dy,
			      struct tfk_tensor *dx, struct tfk_err *err)
{
	int64_t n, oh, ow, c;
	int rc = check_io(p, x, dy, err);

	if (!rc)
		rc = check_io(p, dx, dy, err);
	if (rc)
		return rc;
	memset(dx->data, 0, dx->nbytes);
	for (n = 0; n < p->n; n++)
		for (oh = 0; oh < p->oh; oh++)
			for (ow = 0; ow < p->ow; ow++)
				for (c = 0; c < p->c; c++) {
					int64_t i = argmax_ref(p, x, n, oh, ow,
							       c);

					st(dx, i, ld(dx, i) +
					   ld(dy, YI(p, n, oh, ow, c)));
				}
	return 0;
}

int tfk_cpu_avg_pool_ref(const struct tfk_pool2d *p,
			 const struct tfk_tensor *x, struct tfk_tensor *y,
			 struct tfk_err *err)
{
	int64_t n, oh, ow, c, h0, h1, w0, w1, h, w;
	int rc = check_io(p, x, y, err);

	if (rc)
		return rc;
	for (n = 0; n < p->n; n++)
		for (oh = 0; oh < p->oh; oh++)
			for (ow = 0; ow < p->ow; ow++) {
				window(p, oh, ow, &h0, &h1, &w0, &w1);
				for (c = 0; c < p->c; c++) {
					double s = 0;

					for (h = h0; h < h1; h++)
						for (w = w0; w < w1; w++)
							s += ld(x, XI(p, n, h,
								      w, c));
					st(y, YI(p, n, oh, ow, c),
					   s / (double)((h1 - h0) * (w1 - w0)));
				}
			}
	return 0;
}

int tfk_cpu_avg_pool_grad_ref(const struct tfk_pool2d *p,
			      const struct tfk_tensor *dy,
			      struct tfk_tensor *dx, struct tfk_err *err)
{
	int64_t n, oh, ow, c, h0, h1, w0, w1, h, w;
	int rc = check_io(p, dx, dy, err);

	if (rc)
		return rc;
	memset(dx->data, 0, dx->nbytes);
	for (n = 0; n < p->n; n++)
		for (oh = 0; oh < p->oh; oh++)
			for (ow = 0; ow < p->ow; ow++) {
				window(p, oh, ow, &h0, &h1, &w0, &w1);
				for (c = 0; c < p->c; c++) {
					double g = ld(dy, YI(p, n, oh, ow, c)) /
						(double)((h1 - h0) * (w1 - w0));

					for (h = h0; h < h1; h++)
						for (w = w0; w < w1; w++) {
							int64_t i = XI(p, n, h,
								       w, c);

							st(dx, i, ld(dx, i) + g);
						}
				}
			}
	return 0;
}

/* Fast (float32) ----------------------------------------------------------- */

struct job {
	const struct tfk_pool2d *p;
	const float *x, *dy;
	float *y, *dx;
};

/* o[c] = max(o[c], x[c]) as the _ref's first-maximum rule (a NaN in o
 * stays, a NaN in x is passed over); restrict and fixed blocks so -O2
 * vectorizes it (the plain loop may alias and stayed scalar). */
static __attribute__((noinline)) void
max_into(float *restrict o, const float *restrict x, int64_t n)
{
	int64_t i, k;

	for (i = 0; i + 16 <= n; i += 16)
		for (k = 0; k < 16; k++) {
			float a = o[i + k], v = x[i + k];

			o[i + k] = v > a ? v : a;
		}
	for (; i < n; i++)
		o[i] = x[i] > o[i] ? x[i] : o[i];
}

/* rows [b, e) of n * oh */
static void max_rows(void *ctx, int64_t b, int64_t e, int k)
{
	const struct job *j = ctx;
	const struct tfk_pool2d *p = j->p;
	int64_t r, ow, h0, h1, w0, w1, h, w, C = p->c;

	for (r = b; r < e; r++) {
		int64_t n = r / p->oh, oh = r % p->oh;

		for (ow = 0; ow < p->ow; ow++) {
			float *o = j->y + YI(p, n, oh, ow, 0);
			int first = 1;

			window(p, oh, ow, &h0, &h1, &w0, &w1);
			for (h = h0; h < h1; h++)
				for (w = w0; w < w1; w++) {
					const float *xi = j->x +
						XI(p, n, h, w, 0);

					if (first) {
						memcpy(o, xi, C * sizeof(*o));
						first = 0;
						continue;
					}
					max_into(o, xi, C);
				}
		}
	}
	(void)k;
}

static void avg_rows(void *ctx, int64_t b, int64_t e, int k)
{
	const struct job *j = ctx;
	const struct tfk_pool2d *p = j->p;
	int64_t r, ow, h0, h1, w0, w1, h, w, c, C = p->c;

	for (r = b; r < e; r++) {
		int64_t n = r / p->oh, oh = r % p->oh;

		for (ow = 0; ow < p->ow; ow++) {
			float *o = j->y + YI(p, n, oh, ow, 0), inv;

			window(p, oh, ow, &h0, &h1, &w0, &w1);
			memset(o, 0, C * sizeof(*o));
			for (h = h0; h < h1; h++)
				for (w = w0; w < w1; w++) {
					const float *xi = j->x +
						XI(p, n, h, w, 0);

					for (c = 0; c < C; c++)
						o[c] += xi[c];
				}
			inv = 1.0f / (float)((h1 - h0) * (w1 - w0));
			for (c = 0; c < C; c++)
				o[c] *= inv;
		}
	}
	(void)k;
}

/*
 * One window of one image: dx[window] += dy at the first maximum, per
 * channel. x, dx and g point at the window's first element (x, dx) and
 * its dy row; rs is the stride of an image row, C of a column. With
 * SSE2 (every x86-64) four channels at a time keep their argmax as a
 * window position updated by compare-and-mask: a branch per element
 * mispredicts on random data and was most of MaxPoolGrad's time, and
 * GCC's vectorizer does not if-convert this two-result select. The
 * masked add puts +0 at the other positions, which leaves dx bit for
 * bit as the branchy form did (dx starts at +0; x + 0 == x for all x
 * but -0). Channels left over (or no SSE2) take the plain loop.
 */
static void max_grad_window(const float *x, float *dx, const float *g,
			    int64_t rs, int64_t C, int64_t hn, int64_t wn)
{
	int64_t c = 0, h, w;

#ifdef __SSE2__
	for (; c + 4 <= C; c += 4) {
		__m128 best = _mm_loadu_ps(x + c);
		__m128i arg = _mm_setzero_si128();
		int32_t q = 0;

		for (h = 0; h < hn; h++)
			for (w = 0; w < wn; w++, q++) {
				__m128 v = _mm_loadu_ps(x + h * rs + w * C + c);
				__m128 gt = _mm_cmpgt_ps(v, best);
				__m128i gi = _mm_castps_si128(gt);

				best = _mm_or_ps(_mm_and_ps(gt, v),
						 _mm_andnot_ps(gt, best));
				arg = _mm_or_si128(_mm_and_si128(gi,
						   _mm_set1_epi32(q)),
						   _mm_andnot_si128(gi, arg));
			}
		q = 0;
		for (h = 0; h < hn; h++)
			for (w = 0; w < wn; w++, q++) {
				float *d = dx + h * rs + w * C + c;
				__m128 hit = _mm_castsi128_ps(_mm_cmpeq_epi32(
						arg, _mm_set1_epi32(q)));

				_mm_storeu_ps(d, _mm_add_ps(_mm_loadu_ps(d),
					_mm_and_ps(hit, _mm_loadu_ps(g + c))));
			}
	}
#endif
	for (; c < C; c++) {
		int64_t bh = 0, bw = 0;
		float b = x[c];

		for (h = 0; h < hn; h++)
			for (w = 0; w < wn; w++)
				if (x[h * rs + w * C + c] > b) {
					b = x[h * rs + w * C + c];
					bh = h, bw = w;
				}
		dx[bh * rs + bw * C + c] += g[c];
	}
}

/* images [b, e) */
static void max_grad_images(void *ctx, int64_t b, int64_t e, int k)
{
	const struct job *j = ctx;
	const struct tfk_pool2d *p = j->p;
	int64_t n, oh, ow, h0, h1, w0, w1, C = p->c;

	for (n = b; n < e; n++) {
		memset(j->dx + XI(p, n, 0, 0, 0), 0,
		       p->h * p->w * C * sizeof(float));
		for (oh = 0; oh < p->oh; oh++)
			for (ow = 0; ow < p->ow; ow++) {
				int64_t i0;

				window(p, oh, ow, &h0, &h1, &w0, &w1);
				i0 = XI(p, n, h0, w0, 0);
				max_grad_window(j->x + i0, j->dx + i0,
						j->dy + YI(p, n, oh, ow, 0),
						p->w * C, C, h1 - h0, w1 - w0);
			}
	}
	(void)k;
}

static void avg_grad_images(void *ctx, int64_t b, int64_t e, int k)
{
	const struct job *j = ctx;
	const struct tfk_pool2d *p = j->p;
	int64_t n, oh, ow, h0, h1, w0, w1, h, w, c, C = p->c;

	for (n = b; n < e; n++) {
		memset(j->dx + XI(p, n, 0, 0, 0), 0,
		       p->h * p->w * C * sizeof(float));
		for (oh = 0; oh < p->oh; oh++)
			for (ow = 0; ow < p->ow; ow++) {
				const float *g = j->dy + YI(p, n, oh, ow, 0);
				float inv;

				window(p, oh, ow, &h0, &h1, &w0, &w1);
				inv = 1.0f / (float)((h1 - h0) * (w1 - w0));
				for (h = h0; h < h1; h++)
					for (w = w0; w < w1; w++) {
						float *d = j->dx +
							XI(p, n, h, w, 0);

						for (c = 0; c < C; c++)
							d[c] += g[c] * inv;
					}
			}
	}
	(void)k;
}

/* A forward pool (MaxPool, AvgPool): rows of float tensors over threads,
 * other dtypes through its _ref. */
static int pool_fwd(const struct tfk_pool2d *p, const struct tfk_tensor *x,
		    struct tfk_tensor *y, int threads,
		    int (*ref)(const struct tfk_pool2d *p,
			       const struct tfk_tensor *x,
			       struct tfk_tensor *y, struct tfk_err *err),
		    void (*rows)(void *ctx, int64_t b, int64_t e, int k),
		    struct tfk_err *err)
{
	struct job j = { p, x->data, NULL, y->data, NULL };
	int rc = check_io(p, x, y, err);

	if (rc)
		return rc;
	if (x->dtype != TFK_DT_FLOAT)
		return ref(p, x, y, err);
	if (!y->nbytes)	/* 0 channels: y->data may be NULL (fuzz-tflrun) */
		return 0;
	tfk_parallel_for(threads, p->n * p->oh, rows, &j);
	return 0;
}

int tfk_cpu_max_pool(const struct tfk_pool2d *p, const struct tfk_tensor *x,
		     struct tfk_tensor *y, int threads, struct tfk_err *err)
{
	return pool_fwd(p, x, y, threads, tfk_cpu_max_pool_ref, max_rows, err);
}

int tfk_cpu_avg_pool(const struct tfk_pool2d *p, const struct tfk_tensor *x,
		     struct tfk_tensor *y, int threads, struct tfk_err *err)
{
	return pool_fwd(p, x, y, threads, tfk_cpu_avg_pool_ref, avg_rows, err);
}

int tfk_cpu_max_pool_grad(const struct tfk_pool2d *p,
			  const struct tfk_tensor *x,
			  const struct tfk_tensor *dy, struct tfk_tensor *dx,
			  int threads, struct tfk_err *err)
{
	struct job j = { p, x->data, dy->data, NULL, dx->data };
	int rc = check_io(p, x, dy, err);

	if (!rc)
		rc = check_io(p, dx, dy, err);
	if (rc)
		return rc;
	if (x->dtype != TFK_DT_FLOAT)
		return tfk_cpu_max_pool_grad_ref(p, x, dy, dx, err);
	if (p->oh == 0 || p->ow == 0) {
		memset(dx->data, 0, dx->nbytes);
		return 0;
	}
	tfk_parallel_for(threads, p->n, max_grad_images, &j);
	return 0;
}

int tfk_cpu_avg_pool_grad(const struct tfk_pool2d *p,
			  const struct tfk_tensor *dy, struct tfk_tensor *dx,
			  int threads, struct tfk_err *err)
{
	struct job j = { p, NULL, dy->data, NULL, dx->data };
	int rc = check_io(p, dx, dy, err);

	if (rc)
		return rc;
	if (dx->dtype != TFK_DT_FLOAT)
		return tfk_cpu_avg_pool_grad_ref(p, dy, dx, err);
	tfk_parallel_for(threads, p->n, avg_grad_images, &j);
	return 0;
}

/* Op defs ---------------------------------------------------------------- */

/* ksize, strides, padding of node n into geometry for input shape in. */
static int node_geom(const struct tfk_node *nd, const int64_t *in,
		     struct tfk_pool2d *p, struct tfk_err *err)
{
	const struct tfk_attr_value *k = tfk_node_attr(nd, "ksize");
	const struct tfk_attr_value *s = tfk_node_attr(nd, "strides");
	const struct tfk_attr_value *pad = tfk_node_attr(nd, "padding");
	const struct tfk_attr_value *f = tfk_node_attr(nd, "data_format");

	if (!k || k->list.n != 4)
		return tfk_errf(err, TFK_EINVAL, "ksize: need 4 values, got "
				"%d", k ? k->list.n : 0);
	if (!s || s->list.n != 4)
		return tfk_errf(err, TFK_EINVAL, "strides: need 4 values, got "
				"%d", s ? s->list.n : 0);
	if (f && strcmp(f->s.p, "NHWC"))
		return tfk_errf(err, TFK_EINVAL, "data_format %s not "
				"supported (only NHWC)", f->s.p);
	return tfk_pool2d_geom(p, in, k->list.i, s->list.i,
			       pad ? pad->s.p : "", err);
}

static int out_shape(struct tfk_infer_ctx *ic, const struct tfk_tdesc *x)
{
	struct tfk_pool2d p;
	int64_t unk[4] = { -1, -1, -1, -1 };
	int rc;

	if (x->rank >= 0 && x->rank != 4)
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: rank %d, "
				"pooling needs 4 (NHWC)", x->rank);
	rc = node_geom(ic->node, x->rank == 4 ? x->shape : unk, &p, ic->err);
	if (rc)
		return rc;
	ic->out[0].rank = 4;
	ic->out[0].shape[0] = p.n;
	ic->out[0].shape[1] = p.oh;
	ic->out[0].shape[2] = p.ow;
	ic->out[0].shape[3] = p.c;
	return 0;
}

static int infer_pool(struct tfk_infer_ctx *ic)
{
	return out_shape(ic, &ic->in[0]);
}

/* MaxPoolGrad: dx has orig_input's shape; grad must be the pool's
 * output shape. */
static int infer_max_pool_grad(struct tfk_infer_ctx *ic)
{
	int rc = out_shape(ic, &ic->in[0]), i, k;
	char b1[128], b2[128];

	if (rc)
		return rc;
	for (k = 1; k < 3; k++) {
		const struct tfk_tdesc *g = &ic->in[k];
		int bad = g->rank >= 0 && g->rank != 4;

		for (i = 0; !bad && g->rank == 4 && i < 4; i++)
			bad = g->shape[i] >= 0 && ic->out[0].shape[i] >= 0 &&
				g->shape[i] != ic->out[0].shape[i];
		if (bad)
			return tfk_errf(ic->err, TFK_EINVAL, "input %d: shape "
					"%s, the pool's output is %s", k,
					tfk_shape_str(g->rank, g->shape, b1,
						      sizeof(b1)),
					tfk_shape_str(4, ic->out[0].shape, b2,
						      sizeof(b2)));
	}
	ic->out[0] = ic->in[0];
	return 0;
}

static int infer_avg_pool_grad(struct tfk_infer_ctx *ic)
{
	const struct tfk_tensor *v = ic->in_value[0];
	const struct tfk_tdesc *g = &ic->in[1];
	struct tfk_tdesc x;
	int i, rc;

	if (ic->in[0].rank >= 0 && (ic->in[0].rank != 1 ||
				    (ic->in[0].shape[0] >= 0 &&
				     ic->in[0].shape[0] != 4)))
		return tfk_errf(ic->err, TFK_EINVAL, "input 0: "
				"orig_input_shape must be 4 values");
	x.dtype = ic->out[0].dtype;
	x.rank = 4;
	if (v && tfk_tensor_numel(v) == 4) {
		for (i = 0; i < 4; i++)
			x.shape[i] = ((const int32_t *)v->data)[i];
		for (i = 0; i < 4; i++)
			if (x.shape[i] < 0)
				return tfk_errf(ic->err, TFK_EINVAL, "input 0: "
						"negative dim");
	} else {
		/* while building: batch and channels from grad */
		x.shape[0] = g->rank == 4 ? g->shape[0] : -1;
		x.shape[1] = x.shape[2] = -1;
		x.shape[3] = g->rank == 4 ? g->shape[3] : -1;
	}
	rc = out_shape(ic, &x);
	if (rc)
		return rc;
	if (g->rank >= 0 && g->rank != 4)
		return tfk_errf(ic->err, TFK_EINVAL, "input 1: rank %d, need "
				"4", g->rank);
	for (i = 0; g->rank == 4 && i < 4; i++)
		if (g->shape[i] >= 0 && ic->out[0].shape[i] >= 0 &&
		    g->shape[i] != ic->out[0].shape[i])
			return tfk_errf(ic->err, TFK_EINVAL, "input 1: grad "
					"does not match the pool's output");
	ic->out[0] = x;
	return 0;
}

/* Kernels ---------------------------------------------------------------- */

static int k_max_pool(struct tfk_kernel_ctx *kc)
{
	struct tfk_pool2d p;
	int rc = node_geom(kc->node, kc->in[0]->shape, &p, kc->err);

	return rc ? rc : tfk_cpu_max_pool(&p, kc->in[0], kc->out[0],
					  kc->threads, kc->err);
}

static int k_avg_pool(struct tfk_kernel_ctx *kc)
{
	struct tfk_pool2d p;
	int rc = node_geom(kc->node, kc->in[0]->shape, &p, kc->err);

	return rc ? rc : tfk_cpu_avg_pool(&p, kc->in[0], kc->out[0],
					  kc->threads, kc->err);
}

static int k_max_pool_grad(struct tfk_kernel_ctx *kc)
{
	struct tfk_pool2d p;
	int rc = node_geom(kc->node, kc->in[0]->shape, &p, kc->err);

	return rc ? rc : tfk_cpu_max_pool_grad(&p, kc->in[0], kc->in[2],
					       kc->out[0], kc->threads,
					       kc->err);
}

static int k_avg_pool_grad(struct tfk_kernel_ctx *kc)
{
	struct tfk_pool2d p;
	int rc = node_geom(kc->node, kc->out[0]->shape, &p, kc->err);

	return rc ? rc : tfk_cpu_avg_pool_grad(&p, kc->in[1], kc->out[0],
					       kc->threads, kc->err);
}

/* Gradients -------------------------------------------------------------- */

/* The pooling attrs of the forward node, for its grad node. */
static int pool_attrs(const struct tfk_node *n, struct tfk_attr *a)
{
	static const char *const names[] = { "ksize", "strides", "padding",
					     "data_format", "T" };
	int i, k = 0;

	for (i = 0; i < 5; i++) {
		const struct tfk_attr_value *v = tfk_node_attr(n, names[i]);

		if (v) {
			a[k].name = names[i];
			a[k++].v = *v;
		}
	}
	return k;
}

/* TF's _MaxPoolGrad: MaxPoolGrad(x, y, dy) */
static int grad_max_pool(struct tfk_grad_ctx *gc)
{
	struct tfk_port in[3] = { gc->node->inputs[0], { gc->node_id, 0 },
				  gc->dy[0] };
	struct tfk_attr a[5];

	return gb_add(gc, "MaxPoolGrad", in, 3, a, pool_attrs(gc->node, a),
		      &gc->dx[0]);
}

/* TF's _AvgPoolGrad: AvgPoolGrad(Shape(x), dy); a Const shape when x's
 * is fully known */
static int grad_avg_pool(struct tfk_grad_ctx *gc)
{
	const struct tfk_tdesc *x = tfk_graph_desc(gc->g,
						   gc->node->inputs[0]);
	struct tfk_port in[2] = { { -1, 0 }, gc->dy[0] };
	struct tfk_attr a[5];
	int32_t s[4];
	int i, rc = 0, known = x->rank == 4;

	for (i = 0; known && i < 4; i++) {
		known = x->shape[i] >= 0 && x->shape[i] <= INT32_MAX;
		s[i] = (int32_t)x->shape[i];
	}
	if (known)
		rc = gb_ints(gc, s, 4, &in[0]);
	else
		rc = gb_1(gc, "Shape", gc->node->inputs[0], &in[0]);
	return rc ? rc : gb_add(gc, "AvgPoolGrad", in, 2, a,
				pool_attrs(gc->node, a), &gc->dx[0]);
}

/* Tables ----------------------------------------------------------------- */

#define POOL_ATTRS(explicit)						\
	{ "T", TFK_ATTR_TYPE, 1, { .type = TFK_DT_FLOAT }, FLOATS },	\
	{ "ksize", TFK_ATTR_LIST_INT },					\
	{ "strides", TFK_ATTR_LIST_INT },				\
	{ "padding", TFK_ATTR_STRING },					\
	explicit							\
	{ "data_format", TFK_ATTR_STRING, 1, { .s = { "NHWC", 4 } } }
#define EXPLICIT { "explicit_paddings", TFK_ATTR_LIST_INT, 1, { 0 } },

const struct tfk_op_def tfk_ops_pool[] = {
	{
		.name = "MaxPool",
		.inputs = { { "input", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { POOL_ATTRS(EXPLICIT) },
		.infer = infer_pool,
		.grad = grad_max_pool,
	},
	{
		.name = "MaxPoolGrad",
		.inputs = { { "orig_input", .type_attr = "T" },
			    { "orig_output", .type_attr = "T" },
			    { "grad", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { POOL_ATTRS(EXPLICIT) },
		.infer = infer_max_pool_grad,
	},
	{
		.name = "AvgPool",
		.inputs = { { "value", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { POOL_ATTRS() },
		.infer = infer_pool,
		.grad = grad_avg_pool,
	},
	{
		.name = "AvgPoolGrad",
		.inputs = { { "orig_input_shape", TFK_DT_INT32 },
			    { "grad", .type_attr = "T" } },
		.outputs = { { "output", .type_attr = "T" } },
		.attrs = { POOL_ATTRS() },
		.infer = infer_avg_pool_grad,
	},
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_pool[] = {
	{ "MaxPool", "cpu", NULL, k_max_pool, NULL },
	{ "MaxPoolGrad", "cpu", NULL, k_max_pool_grad, NULL },
	{ "AvgPool", "cpu", NULL, k_avg_pool, NULL },
	{ "AvgPoolGrad", "cpu", NULL, k_avg_pool_grad, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
