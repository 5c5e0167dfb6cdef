/*
 * conv.c - Conv2D, DepthwiseConv2dNative and their backprop ops: op
 * defs (TensorFlow's names, inputs and attrs), shape inference,
 * gradients and CPU kernels, NHWC.
 *
 * The _ref functions are the direct loops (each output a sum over the
 * window, accumulated in double) and the specification. The float32
 * fast path is an implicit GEMM: no im2col matrix is built. A tile of
 * up to 12 neighbouring output pixels x 32 output channels is held in
 * registers while the loop runs over (ky, kx, input channel), reading
 * the (zero-padded) input in place and the filter from a copy packed
 * with its output channels rounded up to the vector width. The same
 * loop computes the input gradient, as the convolution of the
 * out_backprop (spread by the stride, padded by the filter's effective
 * size minus 1 minus the forward padding) with the filter rotated by
 * 180 degrees and its channel axes swapped. The filter gradient keeps
 * a tile of up to 12 input channels x 32 output channels in registers
 * and sums over the output pixels of a block of rows.
 *
 * Why not im2col + OpenBLAS: for the 5x5 32->32 layer of the CNN
 * benchmark the im2col matrix is 18432 x 800 floats (59 MB) written and
 * read per call, and Debian's OpenBLAS 0.3.21 runs Haswell kernels on
 * this machine's Zen 5 (no AVX-512); the direct tile loops read the
 * input from cache and use AVX-512 where the CPU has it (AVX2+FMA, else
 * plain C, chosen once at run time).
 *
 * Threads: rows of output pixels are split across tfk_parallel_for
 * chunks; every output is computed by one tile in a fixed order, so
 * results do not depend on the thread count. The filter gradient sums
 * over pixels: the rows are cut into a fixed number of blocks (not one
 * per thread), each summed into its own partial, and the partials added
 * in block order, so it too is independent of the thread count.
 * Scratch (padded input, packed filter, partials) lives in a workspace
 * the kernel keeps in its state and only grows.
 *
 * Depthwise convolutions run the _ref loops (no fast path yet); double
 * runs the _ref loops (finite-difference tests). A float32 Conv2D node
 * marked TFK_NODE_BF16 (Keras' mixed_bfloat16) runs bf16conv.c's
 * kernels, and its gradient ops carry the mark.
 */
#include "kernels/cpu.h"
#include "graph/graph.h"
#include "kernels/cpu/grad-impl.h"
#include "util/alloc.h"
#include "util/pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CONV_X86 1
#endif

/* Geometry -------------------------------------------------------------- */

/* TF's GetWindowedOutputSizeVerbose for one spatial dim; in or k < 0
 * (unknown) gives *out -1. */
static int out_dim(int64_t in, int64_t k, int64_t s, int64_t d, int pad,
		   int64_t ex_b, int64_t ex_a, int64_t *out, int64_t *pb,
		   int64_t *pa, const char *what, struct tfk_err *err)
{
	int64_t eff, need;

	*out = -1;
	*pb = *pa = 0;
	if (in < 0 || k < 0)
		return 0;
	eff = (k - 1) * d + 1;
	switch (pad) {
	case TFK_CONV_VALID:
		*out = (in - eff + s) / s;
		break;
	case TFK_CONV_SAME:
		*out = (in + s - 1) / s;
		need = (*out - 1) * s + eff - in;
		if (need < 0)
			need = 0;
		*pb = need / 2;
		*pa = need - *pb;
		break;
	default:
		*pb = ex_b;
		*pa = ex_a;
		*out = (in + ex_b + ex_a - eff + s) / s;
		break;
	}
	/* TF's rule: a negative size is an error, 0 is an empty output */
	if (*out < 0)
		return tfk_errf(err, TFK_EINVAL, "input 0: %s %lld is smaller "
				"than the filter's effective %s %lld (%lld "
				"with padding)", what, (long long)in, what,
				(long long)eff, (long long)(in + *pb + *pa));
	return 0;
}

int tfk_conv2d_geom(struct tfk_conv2d *g, const int64_t *in,
		    const int64_t *filter, int depthwise,
		    const struct tfk_conv2d_attrs *a, struct tfk_err *err)
{
	int rc;

	memset(g, 0, sizeof(*g));
	g->n = in[0], g->h = in[1], g->w = in[2], g->c = in[3];
	g->kh = filter[0], g->kw = filter[1];
	g->sh = a->strides[1], g->sw = a->strides[2];
	g->dh = a->dilations[1], g->dw = a->dilations[2];
	g->depthwise = depthwise;
	/* node_attrs checks a graph node's; a .tflite's options come here
	 * unchecked (a fuzzed negative dilation read outside the input) */
	if (g->sh < 1 || g->sw < 1 || g->dh < 1 || g->dw < 1)
		return tfk_errf(err, TFK_EINVAL, "strides (%lld, %lld) and "
				"dilations (%lld, %lld) must be >= 1",
				(long long)g->sh, (long long)g->sw,
				(long long)g->dh, (long long)g->dw);
	if (depthwise) {
		g->kc = 1;
		g->mult = filter[3];
		if (g->c >= 0 && filter[2] >= 0 && filter[2] != g->c)
			return tfk_errf(err, TFK_EINVAL, "input 1: filter in "
					"channels %lld, input has %lld",
					(long long)filter[2],
					(long long)g->c);
		g->groups = g->c;
		g->o = g->c < 0 || g->mult < 0 ? -1 : g->c * g->mult;
	} else {
		g->kc = filter[2];
		g->o = filter[3];
		g->mult = 1;
		g->groups = -1;
		if (g->c >= 0 && g->kc >= 0) {
			if (g->kc == 0 || g->c % g->kc)
				return tfk_errf(err, TFK_EINVAL, "input 1: "
						"filter in channels %lld do not "
						"divide the input's %lld",
						(long long)g->kc,
						(long long)g->c);
			g->groups = g->c / g->kc;
			if (!g->groups)
				return tfk_errf(err, TFK_EINVAL, "input 0: "
						"the input has 0 channels");
			if (g->o >= 0 && g->o % g->groups)
				return tfk_errf(err, TFK_EINVAL, "input 1: "
						"%lld groups do not divide "
						"the %lld filters",
						(long long)g->groups,
						(long long)g->o);
		}
	}
	rc = out_dim(g->h, g->kh, g->sh, g->dh, a->padding, a->pads[2],
		     a->pads[3], &g->oh, &g->pt, &g->pb, "height", err);
	if (!rc)
		rc = out_dim(g->w, g->kw, g->sw, g->dw, a->padding,
			     a->pads[4], a->pads[5], &g->ow, &g->pl, &g->pr,
			     "width", err);
	return rc;
}

/* The attrs of a node of the conv family, checked as TF does. */
static int node_attrs(const struct tfk_node *nd, struct tfk_conv2d_attrs *a,
		      struct tfk_err *err)
{
	const struct tfk_attr_value *s = tfk_node_attr(nd, "strides");
	const struct tfk_attr_value *d = tfk_node_attr(nd, "dilations");
	const struct tfk_attr_value *p = tfk_node_attr(nd, "padding");
	const struct tfk_attr_value *e = tfk_node_attr(nd,
						       "explicit_paddings");
	const struct tfk_attr_value *f = tfk_node_attr(nd, "data_format");
	int i;

	memset(a, 0, sizeof(*a));
	if (f && !(f->s.len == 4 && !memcmp(f->s.p, "NHWC", 4)))
		return tfk_errf(err, TFK_EINVAL, "attr data_format: '%.*s' is "
				"not supported, only NHWC", (int)f->s.len,
				f->s.p);
	if (!s || s->list.n != 4)
		return tfk_errf(err, TFK_EINVAL, "attr strides: expected 4 "
				"values, got %d", s ? s->list.n : 0);
	if (!d || d->list.n != 4)
		return tfk_errf(err, TFK_EINVAL, "attr dilations: expected 4 "
				"values, got %d", d ? d->list.n : 0);
	for (i = 0; i < 4; i++) {
		a->strides[i] = s->list.i[i];
		a->dilations[i] = d->list.i[i];
		if (a->strides[i] < 1)
			return tfk_errf(err, TFK_EINVAL, "attr strides: values "
					"must be positive");
		if (a->dilations[i] < 1)
			return tfk_errf(err, TFK_EINVAL, "attr dilations: "
					"values must be positive");
	}
	if (a->strides[0] != 1 || a->strides[3] != 1)
		return tfk_errf(err, TFK_EINVAL, "attr strides: strides in "
				"the batch and depth dimensions must be 1");
	if (a->dilations[0] != 1 || a->dilations[3] != 1)
		return tfk_errf(err, TFK_EINVAL, "attr dilations: dilations "
				"in the batch and depth dimensions must be 1");
	if (p && p->s.len == 4 && !memcmp(p->s.p, "SAME", 4))
		a->padding = TFK_CONV_SAME;
	else if (p && p->s.len == 5 && !memcmp(p->s.p, "VALID", 5))
		a->padding = TFK_CONV_VALID;
	else if (p && p->s.len == 8 && !memcmp(p->s.p, "EXPLICIT", 8))
		a->padding = TFK_CONV_EXPLICIT;
	else
		return tfk_errf(err, TFK_EINVAL, "attr padding: expected SAME, "
				"VALID or EXPLICIT, got '%.*s'",
				p ? (int)p->s.len : 0, p ? p->s.p : "");
	if (a->padding != TFK_CONV_EXPLICIT) {
		if (e && e->list.n)
			return tfk_errf(err, TFK_EINVAL, "attr "
					"explicit_paddings: must be empty "
					"unless padding is EXPLICIT");
		return 0;
	}
	if (!e || e->list.n != 8)
		return tfk_errf(err, TFK_EINVAL, "attr explicit_paddings: "
				"expected 8 values with padding EXPLICIT, got "
				"%d", e ? e->list.n : 0);
	for (i = 0; i < 8; i++) {
		a->pads[i] = e->list.i[i];
		if (a->pads[i] < 0)
			return tfk_errf(err, TFK_EINVAL, "attr "
					"explicit_paddings: values must be "
					"non-negative");
	}
	if (a->pads[0] || a->pads[1] || a->pads[6] || a->pads[7])
		return tfk_errf(err, TFK_EINVAL, "attr explicit_paddings: "
				"batch and depth paddings must be 0");
	return 0;
}

static int node_geom(const struct tfk_node *nd, const int64_t *in,
		     const int64_t *filter, int depthwise,
		     struct tfk_conv2d *g, struct tfk_err *err)
{
	struct tfk_conv2d_attrs a;
	int rc = node_attrs(nd, &a, err);

	return rc ? rc : tfk_conv2d_geom(g, in, filter, depthwise, &a, err);
}

/* Reference kernels ----------------------------------------------------- */

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

/* Index of filter element (ky, kx, input channel c of the full input,
 * output channel o) and whether c feeds o. */
static int64_t fidx(const struct tfk_conv2d *g, int64_t ky, int64_t kx,
		    int64_t c, int64_t o, int *use)
{
	if (g->depthwise) {
		*use = o / g->mult == c;
		return ((ky * g->kw + kx) * g->c + c) * g->mult + o % g->mult;
	}
	*use = c / g->kc == o / (g->o / g->groups);
	return ((ky * g->kw + kx) * g->kc + c % g->kc) * g->o + o;
}

/* Input row/column of output oy (ox) and filter tap ky (kx), or -1
 * when it falls in the padding. */
static int64_t in_y(const struct tfk_conv2d *g, int64_t oy, int64_t ky)
{
	int64_t y = oy * g->sh - g->pt + ky * g->dh;

	return y >= 0 && y < g->h ? y : -1;
}

static int64_t in_x(const struct tfk_conv2d *g, int64_t ox, int64_t kx)
{
	int64_t x = ox * g->sw - g->pl + kx * g->dw;

	return x >= 0 && x < g->w ? x : -1;
}

/* Channels c of the input that output o reads: [*c0, *c1). */
static void in_chans(const struct tfk_conv2d *g, int64_t o, int64_t *c0,
		     int64_t *c1)
{
	if (g->depthwise) {
		*c0 = o / g->mult;
		*c1 = *c0 + 1;
	} else {
		*c0 = o / (g->o / g->groups) * g->kc;
		*c1 = *c0 + g->kc;
	}
}

int tfk_cpu_conv2d_ref(const struct tfk_conv2d *g, const struct tfk_tensor *x,
		       const struct tfk_tensor *f, struct tfk_tensor *y,
		       struct tfk_err *err)
{
	int64_t n, oy, ox, o, ky, kx, c, c0, c1;
	int use;

	for (n = 0; n < g->n; n++)
		for (oy = 0; oy < g->oh; oy++)
			for (ox = 0; ox < g->ow; ox++)
				for (o = 0; o < g->o; o++) {
					double s = 0;

					in_chans(g, o, &c0, &c1);
					for (ky = 0; ky < g->kh; ky++)
						for (kx = 0; kx < g->kw; kx++) {
							int64_t iy = in_y(g, oy, ky);
							int64_t ix = in_x(g, ox, kx);

							if (iy < 0 || ix < 0)
								continue;
							for (c = c0; c < c1; c++) {
								int64_t fi = fidx(g, ky, kx, c, o, &use);

								s += ld(x, ((n * g->h + iy) * g->w + ix) * g->c + c) *
									ld(f, fi);
							}
						}
					st(y, ((n * g->oh + oy) * g->ow + ox) * g->o + o, s);
				}
	return 0;
}

int tfk_cpu_conv2d_bp_input_ref(const struct tfk_conv2d *g,
				const struct tfk_tensor *f,
				const struct tfk_tensor *dy,
				struct tfk_tensor *dx, struct tfk_err *err)
{
	int64_t n, iy, ix, c, ky, kx, o, oy, ox, o0, o1, og;

	og = g->depthwise ? g->mult : g->o / g->groups;
	for (n = 0; n < g->n; n++)
		for (iy = 0; iy < g->h; iy++)
			for (ix = 0; ix < g->w; ix++)
				for (c = 0; c < g->c; c++) {
					double s = 0;

					o0 = g->depthwise ? c * g->mult :
						c / g->kc * og;
					o1 = o0 + og;
					for (ky = 0; ky < g->kh; ky++) {
						int64_t ty = iy + g->pt - ky * g->dh;

						if (ty < 0 || ty % g->sh ||
						    (oy = ty / g->sh) >= g->oh)
							continue;
						for (kx = 0; kx < g->kw; kx++) {
							int64_t tx = ix + g->pl - kx * g->dw;
							int use;

							if (tx < 0 || tx % g->sw ||
							    (ox = tx / g->sw) >= g->ow)
								continue;
							for (o = o0; o < o1; o++)
								s += ld(dy, ((n * g->oh + oy) * g->ow + ox) * g->o + o) *
									ld(f, fidx(g, ky, kx, c, o, &use));
						}
					}
					st(dx, ((n * g->h + iy) * g->w + ix) * g->c + c, s);
				}
	return 0;
}

int tfk_cpu_conv2d_bp_filter_ref(const struct tfk_conv2d *g,
				 const struct tfk_tensor *x,
				 const struct tfk_tensor *dy,
				 struct tfk_tensor *df, struct tfk_err *err)
{
	int64_t ky, kx, c, o, n, oy, ox, c0, c1;
	int use;

	for (ky = 0; ky < g->kh; ky++)
		for (kx = 0; kx < g->kw; kx++)
			for (o = 0; o < g->o; o++) {
				in_chans(g, o, &c0, &c1);
				for (c = c0; c < c1; c++) {
					double s = 0;
					int64_t fi = fidx(g, ky, kx, c, o, &use);

					for (n = 0; n < g->n; n++)
						for (oy = 0; oy < g->oh; oy++) {
							int64_t iy = in_y(g, oy, ky);

							if (iy < 0)
								continue;
							for (ox = 0; ox < g->ow; ox++) {
								int64_t ix = in_x(g, ox, kx);

								if (ix < 0)
									continue;
								s += ld(x, ((n * g->h + iy) * g->w + ix) * g->c + c) *
									ld(dy, ((n * g->oh + oy) * g->ow + ox) * g->o + o);
							}
						}
					st(df, fi, s);
				}
			}
	return 0;
}

/* Fast float32 kernels --------------------------------------------------- */

/* One forward tile (see conv-impl.h). */
struct ftile {
	const float *a;		/* input at the tile's first pixel, tap
				 * (0, 0), the group's first channel */
	int64_t a_px;		/* floats between the tile's pixels */
	int64_t a_ky, a_kx;	/* floats per filter row / column step */
	int64_t kh, kw, kc;
	const float *b;		/* packed filter [kh][kw][kc][ldb] at the
				 * tile's first column */
	int64_t ldb;
	float *y;		/* output at the tile's first pixel/column */
	int64_t y_px;		/* floats between output pixels */
	int64_t ncols;		/* columns to store (<= nv * width) */
};

/* One filter-gradient tile: sums over n_rows rows of ow pixels. */
struct wtile {
	const float *const *arow;	/* input at each row's first pixel */
	const float *const *drow;	/* out_backprop at each row's start */
	int64_t n_rows, ow;
	int64_t a_off, a_px;	/* tap + channel offset; pixel step */
	int64_t d_off, d_px;
	float *dw;		/* partial gradient tile, rows ldw apart */
	int64_t ldw;
};

#define IF_R2(x) x
#define IF_R3(x) x
#define IF_R4(x) x

/* Plain C: any CPU. */
#define CI_NAME(x) x##_c
#define CI_ATTR
#define CI_V float
#define CI_W 1
#define CI_ZERO() 0.0f
#define CI_SET1(x) (x)
#define CI_LOAD(p) (*(p))
#define CI_STORE(p, v) (*(p) = (v))
#define CI_FMA(a, b, acc) ((acc) + (a) * (b))
#define CI_R 4
#define CI_NV 4
#define IF_R6(x)
#define IF_R8(x)
#define IF_R12(x)
#define IF_NV2(x) x
#define IF_NV3(x) x
#define IF_NV4(x) x
#include "kernels/cpu/conv-impl.h"

#ifdef CONV_X86
/* AVX2 + FMA: 16 ymm registers, 6 x 2 accumulators. */
#define CI_NAME(x) x##_avx2
#define CI_ATTR __attribute__((target("avx2,fma")))
#define CI_V __m256
#define CI_W 8
#define CI_ZERO() _mm256_setzero_ps()
#define CI_SET1(x) _mm256_set1_ps(x)
#define CI_LOAD(p) _mm256_loadu_ps(p)
#define CI_STORE(p, v) _mm256_storeu_ps((p), (v))
#define CI_FMA(a, b, acc) _mm256_fmadd_ps((a), (b), (acc))
#define CI_R 6
#define CI_NV 2
#define IF_R6(x) x
#define IF_R8(x)
#define IF_R12(x)
#define IF_NV2(x) x
#define IF_NV3(x)
#define IF_NV4(x)
#include "kernels/cpu/conv-impl.h"

/* AVX-512: 32 zmm registers, 12 x 2 accumulators. */
#define CI_NAME(x) x##_avx512
#define CI_ATTR __attribute__((target("avx512f,fma")))
#define CI_V __m512
#define CI_W 16
#define CI_ZERO() _mm512_setzero_ps()
#define CI_SET1(x) _mm512_set1_ps(x)
#define CI_LOAD(p) _mm512_loadu_ps(p)
#define CI_STORE(p, v) _mm512_storeu_ps((p), (v))
#define CI_FMA(a, b, acc) _mm512_fmadd_ps((a), (b), (acc))
#define CI_R 12
#define CI_NV 2
#define IF_R6(x) x
#define IF_R8(x) x
#define IF_R12(x) x
#define IF_NV2(x) x
#define IF_NV3(x)
#define IF_NV4(x)
#include "kernels/cpu/conv-impl.h"
#endif

struct conv_isa {
	const char *name;
	int w, r, nv;		/* vector width, tile rows, vectors */
	void (*fwd)(const struct ftile *t, int r, int nv);
	void (*wgt)(const struct wtile *t, int r, int nv);
};

static const struct conv_isa isas[] = {
	{ "c", 1, 4, 4, fwd_tile_c, wgt_tile_c },
#ifdef CONV_X86
	{ "avx2", 8, 6, 2, fwd_tile_avx2, wgt_tile_avx2 },
	{ "avx512", 16, 12, 2, fwd_tile_avx512, wgt_tile_avx512 },
#endif
};

#define N_ISAS ((int)(sizeof(isas) / sizeof(isas[0])))

static int isa_ok(int i)
{
#ifdef CONV_X86
	if (!strcmp(isas[i].name, "avx2"))
		return __builtin_cpu_supports("avx2") &&
			__builtin_cpu_supports("fma");
	if (!strcmp(isas[i].name, "avx512"))
		return __builtin_cpu_supports("avx512f") &&
			__builtin_cpu_supports("fma");
#endif
	return 1;
}

static const struct conv_isa *isa_cur;
static pthread_once_t isa_once = PTHREAD_ONCE_INIT;

static void isa_pick(void)
{
	int i;

#ifdef CONV_X86
	__builtin_cpu_init();
#endif
	for (i = N_ISAS - 1; i > 0 && !isa_ok(i); i--)
		;
	isa_cur = &isas[i];
}

static const struct conv_isa *isa_get(void)
{
	pthread_once(&isa_once, isa_pick);
	return isa_cur;
}

const char *tfk_cpu_conv_isa(const char *want)
{
	int i;

	isa_get();
	if (!want)
		return isa_cur->name;
	for (i = 0; i < N_ISAS; i++)
		if (!strcmp(isas[i].name, want) && isa_ok(i)) {
			isa_cur = &isas[i];
			return isa_cur->name;
		}
	return NULL;
}

void tfk_conv_ws_release(struct tfk_conv_ws *ws)
{
	if (!ws)
		return;
	tfk_free(ws->p);
	ws->p = NULL;
	ws->cap = 0;
}

int tfk_conv_ws_carve(struct tfk_conv_ws *ws, void **ptr,
		      const size_t *sizes, int n, struct tfk_err *err)
{
	size_t total = 64, off;
	unsigned char *base;
	int i;

	for (i = 0; i < n; i++)
		total += (sizes[i] + 63) & ~(size_t)63;
	if (total > ws->cap) {
		void *p = tfk_malloc(total);

		if (!p)
			return tfk_errf(err, TFK_ENOMEM, "conv workspace: out "
					"of memory (%zu bytes)", total);
		tfk_free(ws->p);
		ws->p = p;
		ws->cap = total;
	}
	base = (unsigned char *)(((uintptr_t)ws->p + 63) & ~(uintptr_t)63);
	for (i = 0, off = 0; i < n; i++) {
		ptr[i] = base + off;
		off += (sizes[i] + 63) & ~(size_t)63;
	}
	return 0;
}

static int64_t round_up(int64_t v, int64_t m)
{
	return (v + m - 1) / m * m;
}

/* Zero-padded copy of a [n][h][w][c] tensor into [n][hp][wp][c]: row j
 * of the copy is row j - top of the source (zero outside), column k is
 * column (k - left) / step when k - left is a multiple of step (zero
 * otherwise): step > 1 spreads an out_backprop by its stride. */
struct padjob {
	const float *src;
	float *dst;
	int64_t h, w, c, hp, wp, top, left, sy, sx;
};

static void pad_rows(void *ctx, int64_t b, int64_t e, int k)
{
	const struct padjob *p = ctx;
	int64_t row, col;

	for (row = b; row < e; row++) {
		int64_t n = row / p->hp, j = row % p->hp - p->top, sj;
		float *d = p->dst + row * p->wp * p->c;

		if (j < 0 || j % p->sy || (sj = j / p->sy) >= p->h) {
			memset(d, 0, p->wp * p->c * sizeof(float));
			continue;
		}
		for (col = 0; col < p->wp; col++, d += p->c) {
			int64_t i = col - p->left, si;

			if (i < 0 || i % p->sx || (si = i / p->sx) >= p->w)
				memset(d, 0, p->c * sizeof(float));
			else
				memcpy(d, p->src + ((n * p->h + sj) * p->w +
						    si) * p->c,
				       p->c * sizeof(float));
		}
	}
}

/* The direct convolution over a padded input (forward, and input
 * gradient over the spread out_backprop). */
struct fdrv {
	const struct conv_isa *isa;
	const float *in;	/* [n][hp][wp][cin] */
	int64_t hp, wp, cin;
	int64_t groups, kc, og;	/* per group: input and output channels */
	int64_t kh, kw, sh, sw, dh, dw;
	int64_t oh, ow, cout;	/* cout = groups * og */
	const float *b;		/* packed [groups][kh][kw][kc][ldb] */
	int64_t ldb;
	float *out;		/* [n][oh][ow][cout] */
};

static void fdrv_rows(void *ctx, int64_t b, int64_t e, int k)
{
	const struct fdrv *d = ctx;
	const struct conv_isa *isa = d->isa;
	int64_t row, x0, g, o0, blk = (int64_t)isa->nv * isa->w;
	struct ftile t;

	t.a_px = d->sw * d->cin;
	t.a_ky = d->dh * d->wp * d->cin;
	t.a_kx = d->dw * d->cin;
	t.kh = d->kh, t.kw = d->kw, t.kc = d->kc;
	t.ldb = d->ldb;
	t.y_px = d->cout;
	for (row = b; row < e; row++) {
		int64_t n = row / d->oh, oy = row % d->oh;
		const float *arow = d->in + (n * d->hp + oy * d->sh) * d->wp *
			d->cin;
		float *yrow = d->out + row * d->ow * d->cout;

		for (x0 = 0; x0 < d->ow; x0 += isa->r) {
			int r = (int)(d->ow - x0 < isa->r ? d->ow - x0 : isa->r);

			for (g = 0; g < d->groups; g++)
				for (o0 = 0; o0 < d->og; o0 += blk) {
					t.ncols = d->og - o0 < blk ? d->og - o0 :
						blk;
					t.a = arow + x0 * t.a_px + g * d->kc;
					t.b = d->b + g * d->kh * d->kw * d->kc *
						d->ldb + o0;
					t.y = yrow + x0 * d->cout + g * d->og + o0;
					isa->fwd(&t, r, (int)((t.ncols + isa->w -
							       1) / isa->w));
				}
		}
	}
}

static int is_f32(const struct tfk_conv2d *g, const struct tfk_tensor *t)
{
	return t->dtype == TFK_DT_FLOAT && !g->depthwise;
}

int tfk_cpu_conv2d(const struct tfk_conv2d *g, const struct tfk_tensor *x,
		   const struct tfk_tensor *f, struct tfk_tensor *y,
		   int threads, struct tfk_conv_ws *ws, struct tfk_err *err)
{
	const struct conv_isa *isa = isa_get();
	int64_t og, ldb, hp, wp, grp, ky, kx, c;
	int pad = g->pt || g->pb || g->pl || g->pr;
	const float *fw = f->data;
	struct fdrv d;
	void *p[2];
	size_t sz[2];
	float *packed;
	int rc;

	if (!is_f32(g, x))
		return tfk_cpu_conv2d_ref(g, x, f, y, err);
	if (!g->n || !g->oh || !g->ow || !g->o)
		return 0;
	og = g->o / g->groups;
	ldb = round_up(og, isa->w);
	hp = g->h + g->pt + g->pb;
	wp = g->w + g->pl + g->pr;
	/* a dilation that makes the padded copy mostly padding (SAME,
	 * dilation 1073741825: 240 GB asked for, fuzz-tflrun) runs the
	 * reference loops instead, as tfk_int8_conv2d_fast decides */
	if (pad && (double)hp * (double)wp > 4.0 * (double)(g->h + g->kh) *
	    (double)(g->w + g->kw) && (double)hp * (double)wp *
	    (double)g->n * (double)(g->c + 3) > 64.0 * 1024 * 1024)
		return tfk_cpu_conv2d_ref(g, x, f, y, err);
	sz[0] = (size_t)(g->groups * g->kh * g->kw * g->kc * ldb) *
		sizeof(float);
	sz[1] = pad ? (size_t)(g->n * hp * wp * g->c) * sizeof(float) : 0;
	if ((rc = tfk_conv_ws_carve(ws, p, sz, 2, err)))
		return rc;
	packed = p[0];
	for (grp = 0; grp < g->groups; grp++)
		for (ky = 0; ky < g->kh; ky++)
			for (kx = 0; kx < g->kw; kx++)
				for (c = 0; c < g->kc; c++) {
					float *dst = packed + (((grp * g->kh + ky) *
								g->kw + kx) * g->kc + c) * ldb;

					memcpy(dst, fw + ((ky * g->kw + kx) * g->kc + c) *
					       g->o + grp * og, og * sizeof(float));
					memset(dst + og, 0, (ldb - og) * sizeof(float));
				}
	d.in = x->data;
	if (pad) {
		struct padjob pj = { x->data, p[1], g->h, g->w, g->c, hp, wp,
				     g->pt, g->pl, 1, 1 };

		tfk_parallel_for(threads, g->n * hp, pad_rows, &pj);
		d.in = p[1];
	}
	d.isa = isa;
	d.hp = hp, d.wp = wp, d.cin = g->c;
	d.groups = g->groups, d.kc = g->kc, d.og = og;
	d.kh = g->kh, d.kw = g->kw, d.sh = g->sh, d.sw = g->sw;
	d.dh = g->dh, d.dw = g->dw;
	d.oh = g->oh, d.ow = g->ow, d.cout = g->o;
	d.b = packed, d.ldb = ldb;
	d.out = y->data;
	tfk_parallel_for(threads, g->n * g->oh, fdrv_rows, &d);
	return 0;
}

int tfk_cpu_conv2d_bp_input(const struct tfk_conv2d *g,
			    const struct tfk_tensor *f,
			    const struct tfk_tensor *dy, struct tfk_tensor *dx,
			    int threads, struct tfk_conv_ws *ws,
			    struct tfk_err *err)
{
	const struct conv_isa *isa = isa_get();
	int64_t og, ldb, hb, wb, grp, ky, kx, o, c;
	const float *fw = f->data;
	struct fdrv d;
	struct padjob pj;
	void *p[2];
	size_t sz[2];
	float *packed;
	int rc;

	if (!is_f32(g, dy))
		return tfk_cpu_conv2d_bp_input_ref(g, f, dy, dx, err);
	if (!g->n || !g->h || !g->w || !g->c)
		return 0;
	if (!g->oh || !g->ow || !g->o) {
		memset(dx->data, 0, dx->nbytes);
		return 0;
	}
	og = g->o / g->groups;
	/* The "forward" here has og input and kc output channels per
	 * group, the filter rotated and transposed. */
	ldb = round_up(g->kc, isa->w);
	hb = g->h + (g->kh - 1) * g->dh;
	wb = g->w + (g->kw - 1) * g->dw;
	sz[0] = (size_t)(g->groups * g->kh * g->kw * og * ldb) *
		sizeof(float);
	sz[1] = (size_t)(g->n * hb * wb * g->o) * sizeof(float);
	if ((rc = tfk_conv_ws_carve(ws, p, sz, 2, err)))
		return rc;
	packed = p[0];
	for (grp = 0; grp < g->groups; grp++)
		for (ky = 0; ky < g->kh; ky++)
			for (kx = 0; kx < g->kw; kx++)
				for (o = 0; o < og; o++) {
					float *dst = packed + (((grp * g->kh + ky) *
								g->kw + kx) * og + o) * ldb;
					const float *src = fw + ((g->kh - 1 - ky) *
								 g->kw + g->kw - 1 - kx) *
						g->kc * g->o + grp * og + o;

					for (c = 0; c < g->kc; c++)
						dst[c] = src[c * g->o];
					for (; c < ldb; c++)
						dst[c] = 0;
				}
	pj.src = dy->data, pj.dst = p[1];
	pj.h = g->oh, pj.w = g->ow, pj.c = g->o, pj.hp = hb, pj.wp = wb;
	pj.top = (g->kh - 1) * g->dh - g->pt;
	pj.left = (g->kw - 1) * g->dw - g->pl;
	pj.sy = g->sh, pj.sx = g->sw;
	tfk_parallel_for(threads, g->n * hb, pad_rows, &pj);
	d.isa = isa;
	d.in = p[1];
	d.hp = hb, d.wp = wb, d.cin = g->o;
	d.groups = g->groups, d.kc = og, d.og = g->kc;
	d.kh = g->kh, d.kw = g->kw, d.sh = 1, d.sw = 1;
	d.dh = g->dh, d.dw = g->dw;
	d.oh = g->h, d.ow = g->w, d.cout = g->c;
	d.b = packed, d.ldb = ldb;
	d.out = dx->data;
	tfk_parallel_for(threads, g->n * g->h, fdrv_rows, &d);
	return 0;
}

/* Row blocks summed into separate partials: fixed, so the sum order
 * does not depend on the thread count. */
#define WG_BLOCKS 8
#define WG_ROWS 4		/* rows per tile sweep: stay in L1 */

struct wdrv {
	const struct conv_isa *isa;
	const struct tfk_conv2d *g;
	const float *const *arow, *const *drow;
	int64_t rows, og, ldb, a_px, a_ky, a_kx, d_px, d_grp;
	float *part;		/* WG_BLOCKS x [groups][kh][kw][kc][ldb] */
	int64_t part_n;
	int n_blocks;
};

static void wdrv_block(void *ctx, int64_t b, int64_t e, int k)
{
	const struct wdrv *d = ctx;
	const struct tfk_conv2d *g = d->g;
	const struct conv_isa *isa = d->isa;
	int64_t blk = (int64_t)isa->nv * isa->w, i;

	for (i = b; i < e; i++) {
		int64_t r0 = d->rows * i / d->n_blocks;
		int64_t r1 = d->rows * (i + 1) / d->n_blocks, q;
		float *part = d->part + i * d->part_n;
		struct wtile t;

		memset(part, 0, d->part_n * sizeof(float));
		t.ow = g->ow, t.a_px = d->a_px, t.d_px = d->d_px;
		t.ldw = d->ldb;
		for (q = r0; q < r1; q += WG_ROWS) {
			int64_t grp, ky, kx, c0, o0;

			t.arow = d->arow + q;
			t.drow = d->drow + q;
			t.n_rows = r1 - q < WG_ROWS ? r1 - q : WG_ROWS;
			for (grp = 0; grp < g->groups; grp++)
				for (ky = 0; ky < g->kh; ky++)
					for (kx = 0; kx < g->kw; kx++)
						for (c0 = 0; c0 < g->kc; c0 += isa->r) {
							int r = (int)(g->kc - c0 < isa->r ?
								      g->kc - c0 : isa->r);

							t.a_off = ky * d->a_ky + kx * d->a_kx +
								grp * g->kc + c0;
							for (o0 = 0; o0 < d->og; o0 += blk) {
								int64_t nc = d->og - o0 < blk ?
									d->og - o0 : blk;

								t.d_off = grp * d->d_grp + o0;
								t.dw = part + (((grp * g->kh + ky) *
										g->kw + kx) * g->kc + c0) *
									d->ldb + o0;
								isa->wgt(&t, r, (int)((nc + isa->w - 1) /
										      isa->w));
							}
						}
		}
	}
}

int tfk_cpu_conv2d_bp_filter(const struct tfk_conv2d *g,
			     const struct tfk_tensor *x,
			     const struct tfk_tensor *dy,
			     struct tfk_tensor *df, int threads,
			     struct tfk_conv_ws *ws, struct tfk_err *err)
{
	const struct conv_isa *isa = isa_get();
	int64_t og, ldb, hp, wp, rows, q, grp, ky, kx, c, o;
	int pad = g->pt || g->pb || g->pl || g->pr, pack_dy, i;
	const float *xin = x->data, *din = dy->data;
	float *out = df->data;
	struct wdrv d;
	void *p[5];
	size_t sz[5];
	int rc;

	if (!is_f32(g, x))
		return tfk_cpu_conv2d_bp_filter_ref(g, x, dy, df, err);
	rows = g->n * g->oh;
	if (!rows || !g->ow || !g->c) {
		memset(df->data, 0, df->nbytes);
		return 0;
	}
	og = g->o / g->groups;
	ldb = round_up(og, isa->w);
	/* Tiles load whole vectors of out_backprop: pad its rows when a
	 * group's channels are not a multiple of the width. */
	pack_dy = og % isa->w != 0;
	hp = g->h + g->pt + g->pb;
	wp = g->w + g->pl + g->pr;
	d.n_blocks = (int)(rows < WG_BLOCKS ? rows : WG_BLOCKS);
	d.part_n = g->groups * g->kh * g->kw * g->kc * ldb;
	sz[0] = (size_t)(d.n_blocks * d.part_n) * sizeof(float);
	sz[1] = (size_t)rows * sizeof(float *);
	sz[2] = (size_t)rows * sizeof(float *);
	sz[3] = pad ? (size_t)(g->n * hp * wp * g->c) * sizeof(float) : 0;
	sz[4] = pack_dy ? (size_t)(rows * g->ow * g->groups * ldb) *
		sizeof(float) : 0;
	if ((rc = tfk_conv_ws_carve(ws, p, sz, 5, err)))
		return rc;
	if (pad) {
		struct padjob pj = { x->data, p[3], g->h, g->w, g->c, hp, wp,
				     g->pt, g->pl, 1, 1 };

		tfk_parallel_for(threads, g->n * hp, pad_rows, &pj);
		xin = p[3];
	}
	d.d_px = g->o;
	d.d_grp = og;
	if (pack_dy) {
		float *dp = p[4];
		int64_t px;

		d.d_px = g->groups * ldb;
		d.d_grp = ldb;
		for (px = 0; px < rows * g->ow; px++)
			for (grp = 0; grp < g->groups; grp++) {
				float *dst = dp + px * d.d_px + grp * ldb;

				memcpy(dst, din + px * g->o + grp * og,
				       og * sizeof(float));
				memset(dst + og, 0, (ldb - og) * sizeof(float));
			}
		din = dp;
	}
	for (q = 0; q < rows; q++) {
		int64_t n = q / g->oh, oy = q % g->oh;

		((const float **)p[1])[q] = xin + (n * hp + oy * g->sh) * wp *
			g->c;
		((const float **)p[2])[q] = din + q * g->ow * d.d_px;
	}
	d.isa = isa;
	d.g = g;
	d.arow = p[1];
	d.drow = p[2];
	d.rows = rows;
	d.og = og;
	d.ldb = ldb;
	d.a_px = g->sw * g->c;
	d.a_ky = g->dh * wp * g->c;
	d.a_kx = g->dw * g->c;
	d.part = p[0];
	tfk_parallel_for(threads, d.n_blocks, wdrv_block, &d);
	for (ky = 0; ky < g->kh; ky++)
		for (kx = 0; kx < g->kw; kx++)
			for (c = 0; c < g->kc; c++)
				for (grp = 0; grp < g->groups; grp++)
					for (o = 0; o < og; o++) {
						int64_t at = (((grp * g->kh + ky) * g->kw +
							       kx) * g->kc + c) * ldb + o;
						float s = d.part[at];

						for (i = 1; i < d.n_blocks; i++)
							s += d.part[i * d.part_n + at];
						out[((ky * g->kw + kx) * g->kc + c) *
						    g->o + grp * og + o] = s;
					}
	return 0;
}

/* Shape inference -------------------------------------------------------- */

static int rank4(const struct tfk_tdesc *t, int i, struct tfk_err *err)
{
	if (t->rank >= 0 && t->rank != 4)
		return tfk_errf(err, TFK_EINVAL, "input %d: rank %d, expected "
				"4", i, t->rank);
	return 0;
}

static void dims4(const struct tfk_tdesc *t, int64_t *d)
{
	int i;

	for (i = 0; i < 4; i++)
		d[i] = t->rank == 4 ? t->shape[i] : -1;
}

/* An int32 vector of 4 sizes (input_sizes, filter_sizes) when known:
 * 1 and v filled; 0 when not known; negative on a bad value. */
static int sizes4(const struct tfk_infer_ctx *ic, int i, int64_t *v)
{
	const struct tfk_tensor *t = ic->in_value[i];
	int k;

	if (ic->in[i].rank >= 0 && (ic->in[i].rank != 1 ||
				     (ic->in[i].shape[0] >= 0 &&
				      ic->in[i].shape[0] != 4)))
		return tfk_errf(ic->err, TFK_EINVAL, "input %d: expected an "
				"int32 vector of 4 sizes", i);
	if (!t)
		return 0;
	if (t->rank != 1 || t->shape[0] != 4)
		return tfk_errf(ic->err, TFK_EINVAL, "input %d: expected an "
				"int32 vector of 4 sizes", i);
	for (k = 0; k < 4; k++) {
		v[k] = ((const int32_t *)t->data)[k];
		if (v[k] < 0)
			return tfk_errf(ic->err, TFK_EINVAL, "input %d: size "
					"%d is negative", i, k);
	}
	return 1;
}

static int is_depthwise(const struct tfk_node *nd)
{
	return !strncmp(nd->op->name, "Depthwise", 9);
}

/* Check out_backprop's shape against the convolution's output. */
static int check_dy(const struct tfk_conv2d *g, const int64_t *dy, int i,
		    struct tfk_err *err)
{
	int64_t want[4] = { g->n, g->oh, g->ow, g->o };
	char b1[64], b2[64];
	int k;

	for (k = 0; k < 4; k++)
		if (want[k] >= 0 && dy[k] >= 0 && want[k] != dy[k])
			return tfk_errf(err, TFK_EINVAL, "input %d: "
					"out_backprop %s does not match the "
					"convolution's output %s", i,
					tfk_shape_str(4, dy, b1, sizeof(b1)),
					tfk_shape_str(4, want, b2,
						      sizeof(b2)));
	return 0;
}

static int infer_conv(struct tfk_infer_ctx *ic)
{
	int64_t x[4], f[4];
	struct tfk_conv2d g;
	int rc;

	if ((rc = rank4(&ic->in[0], 0, ic->err)) ||
	    (rc = rank4(&ic->in[1], 1, ic->err)))
		return rc;
	dims4(&ic->in[0], x);
	dims4(&ic->in[1], f);
	if ((rc = node_geom(ic->node, x, f, is_depthwise(ic->node), &g,
			    ic->err)))
		return rc;
	ic->out[0].rank = 4;
	ic->out[0].shape[0] = g.n;
	ic->out[0].shape[1] = g.oh;
	ic->out[0].shape[2] = g.ow;
	ic->out[0].shape[3] = g.o;
	return 0;
}

/* Conv2DBackpropInput(input_sizes, filter, out_backprop) */
static int infer_bp_input(struct tfk_infer_ctx *ic)
{
	int64_t x[4], f[4], dy[4];
	struct tfk_conv2d g;
	int rc, k;

	if ((rc = rank4(&ic->in[1], 1, ic->err)) ||
	    (rc = rank4(&ic->in[2], 2, ic->err)))
		return rc;
	dims4(&ic->in[1], f);
	dims4(&ic->in[2], dy);
	if ((rc = sizes4(ic, 0, x)) < 0)
		return rc;
	if (!rc) {
		x[0] = dy[0];
		x[1] = x[2] = -1;
		x[3] = is_depthwise(ic->node) ? f[2] : -1;
	}
	if ((rc = node_geom(ic->node, x, f, is_depthwise(ic->node), &g,
			    ic->err)) || (rc = check_dy(&g, dy, 2, ic->err)))
		return rc;
	ic->out[0].rank = 4;
	for (k = 0; k < 4; k++)
		ic->out[0].shape[k] = x[k];
	return 0;
}

/* Conv2DBackpropFilter(input, filter_sizes, out_backprop) */
static int infer_bp_filter(struct tfk_infer_ctx *ic)
{
	int64_t x[4], f[4], dy[4];
	struct tfk_conv2d g;
	int rc, k;

	if ((rc = rank4(&ic->in[0], 0, ic->err)) ||
	    (rc = rank4(&ic->in[2], 2, ic->err)))
		return rc;
	dims4(&ic->in[0], x);
	dims4(&ic->in[2], dy);
	if ((rc = sizes4(ic, 1, f)) < 0)
		return rc;
	if (!rc) {
		f[0] = f[1] = f[2] = f[3] = -1;
		if (is_depthwise(ic->node))
			f[2] = x[3];
		else
			f[3] = dy[3];
	}
	if ((rc = node_geom(ic->node, x, f, is_depthwise(ic->node), &g,
			    ic->err)) || (rc = check_dy(&g, dy, 2, ic->err)))
		return rc;
	ic->out[0].rank = 4;
	for (k = 0; k < 4; k++)
		ic->out[0].shape[k] = f[k];
	return 0;
}

/* Kernels ---------------------------------------------------------------- */

static struct tfk_conv_ws *ws_of(struct tfk_kernel_ctx *kc)
{
	if (!*kc->state)
		*kc->state = tfk_calloc(1, sizeof(struct tfk_conv_ws));
	return *kc->state;
}

static void ws_free(void *state)
{
	tfk_conv_ws_release(state);
	tfk_free(state);
}

static int k_conv(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0], *f = kc->in[1];
	struct tfk_conv2d g;
	struct tfk_conv_ws *ws;
	int rc;

	if ((rc = node_geom(kc->node, x->shape, f->shape,
			    is_depthwise(kc->node), &g, kc->err)))
		return rc;
	if (!is_f32(&g, x))
		return tfk_cpu_conv2d_ref(&g, x, f, kc->out[0], kc->err);
	if (!(ws = ws_of(kc)))
		return tfk_errf(kc->err, TFK_ENOMEM, "out of memory");
	if (kc->node->flags & TFK_NODE_BF16)
		return tfk_cpu_conv2d_bf16(&g, x, f, kc->out[0], kc->threads,
					   ws, kc->err);
	return tfk_cpu_conv2d(&g, x, f, kc->out[0], kc->threads, ws, kc->err);
}

static int k_bp_input(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *f = kc->in[1], *dy = kc->in[2];
	struct tfk_tensor *dx = kc->out[0];
	struct tfk_conv2d g;
	struct tfk_conv_ws *ws;
	int rc;

	if ((rc = node_geom(kc->node, dx->shape, f->shape,
			    is_depthwise(kc->node), &g, kc->err)) ||
	    (rc = check_dy(&g, dy->shape, 2, kc->err)))
		return rc;
	if (!is_f32(&g, dy))
		return tfk_cpu_conv2d_bp_input_ref(&g, f, dy, dx, kc->err);
	if (!(ws = ws_of(kc)))
		return tfk_errf(kc->err, TFK_ENOMEM, "out of memory");
	if (kc->node->flags & TFK_NODE_BF16)
		return tfk_cpu_conv2d_bp_input_bf16(&g, f, dy, dx, kc->threads,
						    ws, kc->err);
	return tfk_cpu_conv2d_bp_input(&g, f, dy, dx, kc->threads, ws,
				       kc->err);
}

static int k_bp_filter(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0], *dy = kc->in[2];
	struct tfk_tensor *df = kc->out[0];
	struct tfk_conv2d g;
	struct tfk_conv_ws *ws;
	int rc;

	if ((rc = node_geom(kc->node, x->shape, df->shape,
			    is_depthwise(kc->node), &g, kc->err)) ||
	    (rc = check_dy(&g, dy->shape, 2, kc->err)))
		return rc;
	if (!is_f32(&g, x))
		return tfk_cpu_conv2d_bp_filter_ref(&g, x, dy, df, kc->err);
	if (!(ws = ws_of(kc)))
		return tfk_errf(kc->err, TFK_ENOMEM, "out of memory");
	if (kc->node->flags & TFK_NODE_BF16)
		return tfk_cpu_conv2d_bp_filter_bf16(&g, x, dy, df,
						     kc->threads, ws, kc->err);
	return tfk_cpu_conv2d_bp_filter(&g, x, dy, df, kc->threads, ws,
					kc->err);
}

/* Gradients (TF's nn_grad.py) --------------------------------------------- */

/* The shape of x as an int32 [4] Const when fully known, else
 * Shape(x) (the batch is unknown while a training graph is built). */
static int gb_sizes(struct tfk_grad_ctx *gc, struct tfk_port x,
		    struct tfk_port *out)
{
	const struct tfk_tdesc *t = tfk_graph_desc(gc->g, x);
	int32_t s[4];
	int i;

	for (i = 0; t->rank == 4 && i < 4; i++) {
		if (t->shape[i] < 0 || t->shape[i] > INT32_MAX)
			break;
		s[i] = (int32_t)t->shape[i];
	}
	if (i == 4)
		return gb_ints(gc, s, 4, out);
	return gb_1(gc, "Shape", x, out);
}

/* op(a, b, c) with the node's own attrs (the whole family shares one
 * attr set per kind) and its TFK_NODE_BF16 mark: a bf16 convolution's
 * gradients are bf16 products too, as TF's on bfloat16 operands. */
static int gb_3(struct tfk_grad_ctx *gc, const char *op, struct tfk_port a,
		struct tfk_port b, struct tfk_port c, struct tfk_port *out)
{
	struct tfk_port in[3] = { a, b, c };
	int rc = gb_add(gc, op, in, 3, gc->node->attrs, gc->node->n_attrs,
			out);

	return rc ? rc : tfk_graph_node_flag(gc->g, out->node,
					     gc->node->flags & TFK_NODE_BF16);
}

static int gb_conv(struct tfk_grad_ctx *gc, const char *op, struct tfk_port a,
		   struct tfk_port b, struct tfk_port *out)
{
	struct tfk_port in[2] = { a, b };
	int rc = gb_add(gc, op, in, 2, gc->node->attrs, gc->node->n_attrs,
			out);

	return rc ? rc : tfk_graph_node_flag(gc->g, out->node,
					     gc->node->flags & TFK_NODE_BF16);
}

struct fam {
	const char *fwd, *bp_input, *bp_filter;
};

static const struct fam conv_fam = { "Conv2D", "Conv2DBackpropInput",
				     "Conv2DBackpropFilter" };
static const struct fam dw_fam = { "DepthwiseConv2dNative",
				   "DepthwiseConv2dNativeBackpropInput",
				   "DepthwiseConv2dNativeBackpropFilter" };

static const struct fam *fam_of(const struct tfk_node *nd)
{
	return is_depthwise(nd) ? &dw_fam : &conv_fam;
}

/* y = conv(x, f): dx = BackpropInput(shape(x), f, dy), df =
 * BackpropFilter(x, shape(f), dy). */
static int grad_conv(struct tfk_grad_ctx *gc)
{
	const struct fam *fm = fam_of(gc->node);
	struct tfk_port x = gc->node->inputs[0], f = gc->node->inputs[1];
	struct tfk_port s;
	int rc;

	if (gc->dy[0].node < 0)
		return 0;
	if ((rc = gb_sizes(gc, x, &s)) ||
	    (rc = gb_3(gc, fm->bp_input, s, f, gc->dy[0], &gc->dx[0])) ||
	    (rc = gb_sizes(gc, f, &s)))
		return rc;
	return gb_3(gc, fm->bp_filter, x, s, gc->dy[0], &gc->dx[1]);
}

/* z = BackpropInput(sizes, f, dy): dz/df = BackpropFilter(g, shape(f),
 * dy), dz/ddy = conv(g, f). */
static int grad_bp_input(struct tfk_grad_ctx *gc)
{
	const struct fam *fm = fam_of(gc->node);
	struct tfk_port f = gc->node->inputs[1], dy = gc->node->inputs[2];
	struct tfk_port s;
	int rc;

	if (gc->dy[0].node < 0)
		return 0;
	if ((rc = gb_sizes(gc, f, &s)) ||
	    (rc = gb_3(gc, fm->bp_filter, gc->dy[0], s, dy, &gc->dx[1])))
		return rc;
	return gb_conv(gc, fm->fwd, gc->dy[0], f, &gc->dx[2]);
}

/* z = BackpropFilter(x, sizes, dy): dz/dx = BackpropInput(shape(x), g,
 * dy), dz/ddy = conv(x, g). */
static int grad_bp_filter(struct tfk_grad_ctx *gc)
{
	const struct fam *fm = fam_of(gc->node);
	struct tfk_port x = gc->node->inputs[0], dy = gc->node->inputs[2];
	struct tfk_port s;
	int rc;

	if (gc->dy[0].node < 0)
		return 0;
	if ((rc = gb_sizes(gc, x, &s)) ||
	    (rc = gb_3(gc, fm->bp_input, s, gc->dy[0], dy, &gc->dx[0])))
		return rc;
	return gb_conv(gc, fm->fwd, x, gc->dy[0], &gc->dx[2]);
}

/* Tables ----------------------------------------------------------------- */

static const int64_t ones4[4] = { 1, 1, 1, 1 };

#define FLOATS (TFK_DT_BIT(TFK_DT_FLOAT) | TFK_DT_BIT(TFK_DT_DOUBLE))
#define A_T { "T", TFK_ATTR_TYPE, 0, { 0 }, FLOATS }
#define A_STRIDES { "strides", TFK_ATTR_LIST_INT, 0, { 0 }, 0 }
#define A_CUDNN { "use_cudnn_on_gpu", TFK_ATTR_BOOL, 1, { .b = 1 }, 0 }
#define A_PADDING { "padding", TFK_ATTR_STRING, 0, { 0 }, 0 }
#define A_EXPLICIT { "explicit_paddings", TFK_ATTR_LIST_INT, 1, \
		     { .list = { 0, NULL, NULL, NULL } }, 0 }
#define A_FORMAT { "data_format", TFK_ATTR_STRING, 1, \
		   { .s = { "NHWC", 4 } }, 0 }
#define A_DILATIONS { "dilations", TFK_ATTR_LIST_INT, 1, \
		      { .list = { 4, ones4, NULL, NULL } }, 0 }
#define CONV_ATTRS { A_T, A_STRIDES, A_CUDNN, A_PADDING, A_EXPLICIT, \
		     A_FORMAT, A_DILATIONS }
#define DW_ATTRS { A_T, A_STRIDES, A_PADDING, A_EXPLICIT, A_FORMAT, \
		   A_DILATIONS }

#define FWD(nm, at) {						\
	.name = nm,							\
	.inputs = { { "input", .type_attr = "T" },			\
		    { "filter", .type_attr = "T" } },			\
	.outputs = { { "output", .type_attr = "T" } },			\
	.attrs = at,							\
	.infer = infer_conv,						\
	.grad = grad_conv,						\
}
#define BP_INPUT(nm, at) {						\
	.name = nm,							\
	.inputs = { { "input_sizes", TFK_DT_INT32, NULL, NULL },			\
		    { "filter", .type_attr = "T" },			\
		    { "out_backprop", .type_attr = "T" } },		\
	.outputs = { { "output", .type_attr = "T" } },			\
	.attrs = at,							\
	.infer = infer_bp_input,					\
	.grad = grad_bp_input,						\
}
#define BP_FILTER(nm, at) {						\
	.name = nm,							\
	.inputs = { { "input", .type_attr = "T" },			\
		    { "filter_sizes", TFK_DT_INT32, NULL, NULL },			\
		    { "out_backprop", .type_attr = "T" } },		\
	.outputs = { { "output", .type_attr = "T" } },			\
	.attrs = at,							\
	.infer = infer_bp_filter,					\
	.grad = grad_bp_filter,						\
}

const struct tfk_op_def tfk_ops_conv[] = {
	FWD("Conv2D", CONV_ATTRS),
	BP_INPUT("Conv2DBackpropInput", CONV_ATTRS),
	BP_FILTER("Conv2DBackpropFilter", CONV_ATTRS),
	FWD("DepthwiseConv2dNative", DW_ATTRS),
	BP_INPUT("DepthwiseConv2dNativeBackpropInput", DW_ATTRS),
	BP_FILTER("DepthwiseConv2dNativeBackpropFilter", DW_ATTRS),
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_conv[] = {
	{ "Conv2D", "cpu", NULL, k_conv, ws_free },
	{ "Conv2DBackpropInput", "cpu", NULL, k_bp_input, ws_free },
	{ "Conv2DBackpropFilter", "cpu", NULL, k_bp_filter, ws_free },
	{ "DepthwiseConv2dNative", "cpu", NULL, k_conv, ws_free },
	{ "DepthwiseConv2dNativeBackpropInput", "cpu", NULL, k_bp_input,
	  ws_free },
	{ "DepthwiseConv2dNativeBackpropFilter", "cpu", NULL, k_bp_filter,
	  ws_free },
	{ NULL, NULL, NULL, NULL, NULL }
};
