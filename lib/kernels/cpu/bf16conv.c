/*
 * bf16conv.c - Conv2D and its two backprops with bfloat16 products and
 * float32 sums (Keras' mixed_bfloat16 on a Conv2D/Conv1D layer).
 *
 * What is computed (cpu.h has it too): every input element rounded to
 * bfloat16 as TensorFlow's Cast does (tfk_bf16_round: nearest, ties to
 * even), the exact products (two bf16 make at most 16 significant bits)
 * summed in float32, one chain per output starting at +0, in the order
 * of AVX512-BF16's VDPBF16PS (Intel SDM): the reduction is taken in
 * pairs and for each pair the odd element's product is added first,
 * then the even one's, each addition rounded to float32. Which
 * elements make a pair:
 *  - forward and backprop input: adjacent channels (2q, 2q+1) of the
 *    group at one tap (an odd channel count's last alone, a zero
 *    partner); taps in (ky, kx) order for the forward and from (kh - 1,
 *    kw - 1) down for the input gradient, which is the forward's loop
 *    over the stride-spread out_backprop with the filter rotated, as in
 *    conv.c. Padding and the gaps of the spread read 0 (0 times a
 *    finite value adds nothing: a chain from +0 never holds -0).
 *  - forward with one input channel per group (the first layer of an
 *    image model): channel pairs would all have a zero partner, so the
 *    pairs are taps (2q, 2q+1) of each filter row instead (an odd
 *    width's last alone), rows in order.
 *  - backprop filter: the reduction is over output pixels: adjacent
 *    pixels (2q, 2q+1) of one output row (an odd width's last alone);
 *    rows in order within each of min(rows, 8) fixed blocks, and the
 *    blocks' sums added in block order (conv.c's float32 split, so
 *    threads can share the work without changing the result).
 * The _ref functions are those loops in plain C; they are the
 * specification. tfk_cpu_conv2d_bp_filter_bf16_ref etc. read float32
 * tensors and round on every read.
 *
 * Fast path: conv.c's direct convolution with VDPBF16PS for VFMADD231PS
 * (bf16conv-impl.h, conv-impl.h's loops): a tile of 12 output pixels x
 * 32 output channels in 24 zmm accumulators, per step one 32-bit
 * broadcast of an input pair and two loads of filter pairs for 16
 * columns each; twice the multiply-adds per instruction of float32.
 * The operands are packed per call: the (padded) input as bf16 pairs
 * of adjacent channels, [n][hp][wp][groups][ceil(kc / 2)], which for
 * an even kc is the input's own order (one VCVTNE2PS2BF16 per 32
 * floats of a row); the filter as [groups][kh][kw][ceil(kc / 2)][o
 * rounded to 16] pairs. For the filter gradient the pairs are of
 * pixels: the padded input as (x[y][p], x[y][p + sw]) per channel, the
 * out_backprop as (dy[2q], dy[2q+1]) per output channel, and the tile
 * is r input channels (with one channel: r taps of a filter row, or a
 * tile would hold 2 accumulators and wait on the dot product's
 * latency) x 32 output channels summed over pixel pairs.
 * Threads take rows of output pixels (forward, input gradient) or the
 * fixed row blocks (filter gradient); every output is one chain, so
 * results do not depend on the thread count.
 *
 * Without avx512_bf16 (or with TFK_BF16_SCALAR=1, as bf16gemm.c) the
 * same packed operands run through the same loops compiled with a
 * scalar "vector" of 1 lane whose dot step is the two additions in
 * C: the _ref's order, bit for bit (no flush of subnormals either).
 * The fast path flushes subnormal inputs, operands and partial sums
 * (VCVTNE2PS2BF16 and VDPBF16PS do), so it equals the _ref while no
 * value is subnormal and inputs are finite (an odd count's zero
 * partner meets a real input value in the packed pixel pairs: 0 x
 * finite adds nothing, 0 x inf would be NaN).
 *
 * With one input channel per group the forward packs the padded input
 * as pixel pairs dw apart, (x[y][p], x[y][p + dw]), and the filter as
 * tap pairs, and runs the same tiles over half as many steps of twice
 * the tap stride: the book CNN's first layer (1.6% of its step) takes
 * 0.7 of float32's time (0.23 against 0.32 ms for 32 images on one
 * thread), where zero partners took as long as float32 (its filter
 * gradient pairs pixels anyway; its input gradient is not computed).
 * Rejected: caching the packed filter across calls (a variable has no
 * version number to say when the optimizer changed it; packing it is
 * under 1% of a call).
 *
 * Measured (build/bench/conv -p bf16 against -p float32, best of three
 * on a shared 2-core Zen 5): the CNN's 5x5 32 -> 32 SAME layer on
 * [32, 24, 24, 32], one thread: forward 2.51 ms against 4.78, input
 * gradient 2.61 against 4.84, filter gradient 3.11 against 5.17 (1.8x
 * a step; 2.1x on two threads); the tiles run at ~80% of the
 * VDPBF16PS peak (tests/bench/peak.c's FMA rate: the same instruction
 * rate), packing is ~7% of the time (perf). Its first layer on
 * [32, 28, 28, 1], two threads: forward 0.30 ms against 0.33, filter
 * gradient 0.31 against 0.48. The whole training step
 * (bench-train-cnn.sh's train-cnn-bf16) gained less, 1.36x: the
 * float32 ops around the convolutions (pooling, ReLU, bias, dropout,
 * their gradients) and the step's work outside the graph stay as
 * they were.
 */
#include "kernels/cpu.h"
#include "util/pool.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define BF_X86 1
#include <immintrin.h>
#endif

static float rb(float f)
{
	return tfk_bf16_float(tfk_bf16_round(f));
}

static int check(const struct tfk_conv2d *g, const struct tfk_tensor *t,
		 struct tfk_err *err)
{
	if (t->dtype != TFK_DT_FLOAT || g->depthwise)
		return tfk_errf(err, TFK_EINVAL, "bfloat16 products: float32 "
				"Conv2D only");
	return 0;
}

/* Reference kernels ----------------------------------------------------- */

/* Input channel c at output pixel (n, oy, ox), tap (ky, kx), rounded;
 * 0 in the padding. */
static float xat(const struct tfk_conv2d *g, const float *xp, int64_t n,
		 int64_t oy, int64_t ox, int64_t ky, int64_t kx, int64_t c)
{
	int64_t iy = oy * g->sh - g->pt + ky * g->dh;
	int64_t ix = ox * g->sw - g->pl + kx * g->dw;

	if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w)
		return 0;
	return rb(xp[((n * g->h + iy) * g->w + ix) * g->c + c]);
}

int tfk_cpu_conv2d_bf16_ref(const struct tfk_conv2d *g,
			    const struct tfk_tensor *x,
			    const struct tfk_tensor *f, struct tfk_tensor *y,
			    struct tfk_err *err)
{
	const float *xp = x->data, *fp = f->data;
	float *yp = y->data;
	int64_t og, n, oy, ox, o, ky, kx, c;
	int rc;

	if ((rc = check(g, x, err)))
		return rc;
	og = g->groups > 0 ? g->o / g->groups : 0;
	for (n = 0; n < g->n; n++)
		for (oy = 0; oy < g->oh; oy++)
			for (ox = 0; ox < g->ow; ox++)
				for (o = 0; o < g->o; o++) {
					int64_t c0 = o / og * g->kc;
					float s = 0;

					for (ky = 0; ky < g->kh; ky++) {
						/* one channel: taps (2q, 2q+1) of the row */
						const float *fr = fp + ky * g->kw *
							g->kc * g->o + o;

						for (kx = 0; g->kc == 1 && kx < g->kw;
						     kx += 2) {
							if (kx + 1 < g->kw)
								s += xat(g, xp, n, oy, ox, ky,
									 kx + 1, c0) *
									rb(fr[(kx + 1) * g->o]);
							s += xat(g, xp, n, oy, ox, ky, kx, c0) *
								rb(fr[kx * g->o]);
						}
						for (kx = 0; g->kc > 1 && kx < g->kw;
						     kx++, fr += g->kc * g->o)
							for (c = 0; c < g->kc; c += 2) {
								if (c + 1 < g->kc)
									s += xat(g, xp, n, oy, ox, ky,
										 kx, c0 + c + 1) *
										rb(fr[(c + 1) * g->o]);
								s += xat(g, xp, n, oy, ox, ky, kx,
									 c0 + c) * rb(fr[c * g->o]);
							}
					}
					yp[((n * g->oh + oy) * g->ow + ox) * g->o + o] = s;
				}
	return 0;
}

int tfk_cpu_conv2d_bp_input_bf16_ref(const struct tfk_conv2d *g,
				     const struct tfk_tensor *f,
				     const struct tfk_tensor *dy,
				     struct tfk_tensor *dx,
				     struct tfk_err *err)
{
	const float *fp = f->data, *dp = dy->data;
	float *xp = dx->data;
	int64_t og, n, iy, ix, c, ky, kx, q;
	int rc;

	if ((rc = check(g, dy, err)))
		return rc;
	og = g->groups > 0 ? g->o / g->groups : 0;
	for (n = 0; n < g->n; n++)
		for (iy = 0; iy < g->h; iy++)
			for (ix = 0; ix < g->w; ix++)
				for (c = 0; c < g->c; c++) {
					int64_t o0 = c / g->kc * og, ci = c % g->kc;
					float s = 0;

					for (ky = g->kh - 1; ky >= 0; ky--)
						for (kx = g->kw - 1; kx >= 0; kx--) {
							int64_t ty = iy + g->pt - ky * g->dh;
							int64_t tx = ix + g->pl - kx * g->dw;
							const float *dr = ty >= 0 && tx >= 0 &&
								!(ty % g->sh) && !(tx % g->sw) &&
								ty / g->sh < g->oh &&
								tx / g->sw < g->ow ? dp +
								((n * g->oh + ty / g->sh) * g->ow +
								 tx / g->sw) * g->o + o0 : NULL;
							const float *fr = fp + ((ky * g->kw + kx) *
								g->kc + ci) * g->o + o0;

							for (q = 0; q < og; q += 2) {
								if (q + 1 < og)
									s += (dr ? rb(dr[q + 1]) : 0.0f) *
										rb(fr[q + 1]);
								s += (dr ? rb(dr[q]) : 0.0f) *
									rb(fr[q]);
							}
						}
					xp[((n * g->h + iy) * g->w + ix) * g->c + c] = s;
				}
	return 0;
}

/* Row blocks of the filter gradient: fixed, as conv.c's float32. */
#define WG_BLOCKS 8
#define WG_ROWS 4		/* rows per tile sweep: stay in L1 */

int tfk_cpu_conv2d_bp_filter_bf16_ref(const struct tfk_conv2d *g,
				      const struct tfk_tensor *x,
				      const struct tfk_tensor *dy,
				      struct tfk_tensor *df,
				      struct tfk_err *err)
{
	const float *xp = x->data, *dp = dy->data;
	float *fp = df->data;
	int64_t og, rows, nb, ky, kx, ci, o, b, row, ox;
	int rc;

	if ((rc = check(g, x, err)))
		return rc;
	og = g->groups > 0 ? g->o / g->groups : 0;
	rows = g->n * g->oh;
	nb = rows < WG_BLOCKS ? rows : WG_BLOCKS;
	for (ky = 0; ky < g->kh; ky++)
		for (kx = 0; kx < g->kw; kx++)
			for (ci = 0; ci < g->kc; ci++)
				for (o = 0; o < g->o; o++) {
					int64_t c = o / og * g->kc + ci;
					float tot = 0;

					for (b = 0; b < nb; b++) {
						float s = 0;

						for (row = rows * b / nb;
						     row < rows * (b + 1) / nb; row++) {
							int64_t n = row / g->oh, oy = row % g->oh;
							int64_t iy = oy * g->sh - g->pt + ky * g->dh;
							const float *d = dp + row * g->ow * g->o + o;
							float v[2], e[2];
							int k;

							for (ox = 0; ox < g->ow; ox += 2) {
								for (k = 0; k < 2; k++) {
									int64_t ix = (ox + k) * g->sw -
										g->pl + kx * g->dw;

									v[k] = ox + k < g->ow && iy >= 0 &&
										iy < g->h && ix >= 0 &&
										ix < g->w ? rb(xp[((n * g->h +
										iy) * g->w + ix) * g->c + c]) : 0;
									e[k] = ox + k < g->ow ?
										rb(d[(ox + k) * g->o]) : 0;
								}
								if (ox + 1 < g->ow)
									s += v[1] * e[1];
								s += v[0] * e[0];
							}
						}
						tot = b ? tot + s : s;
					}
					fp[((ky * g->kw + kx) * g->kc + ci) * g->o + o] = tot;
				}
	return 0;
}

/* Tiles (see bf16conv-impl.h) -------------------------------------------- */

struct bftile {
	const uint32_t *a;	/* input pairs at the tile's first pixel,
				 * tap (0, 0), the group's first pair */
	int64_t a_px, a_ky, a_kx;	/* pairs per pixel / tap step */
	int64_t kh, kw, kp;	/* kp: pairs of the reduction per tap */
	const uint32_t *b;	/* packed filter [kh][kw][kp][ldb] at the
				 * tile's first column */
	int64_t ldb;
	float *y;		/* output at the tile's first pixel/column */
	int64_t y_px, ncols;
};

struct bwtile {
	const uint32_t *const *arow;	/* input pixel pairs, each row */
	const uint32_t *const *drow;	/* out_backprop pixel pairs */
	int64_t n_rows, np;	/* rows, pixel pairs per row */
	int64_t a_off, a_pp;	/* tap + channel offset; pair step */
	int64_t a_r;		/* between the tile's rows: 1 (channels)
				 * or dw * c (taps, one channel) */
	int64_t d_off, d_pp;
	float *dw;		/* partial gradient tile, rows ldw apart */
	int64_t ldw;
};

/* The scalar dot step: VDPBF16PS's order on one lane. A product of two
 * bfloat16 is exact in float32, so contraction into an FMA (which
 * -std=c11 does not do anyway) would not change it. */
static inline float dp_c(float s, uint32_t a, uint32_t b)
{
	s += tfk_bf16_float((uint16_t)(a >> 16)) *
		tfk_bf16_float((uint16_t)(b >> 16));
	s += tfk_bf16_float((uint16_t)(a & 0xffff)) *
		tfk_bf16_float((uint16_t)(b & 0xffff));
	return s;
}

#define IF_R2(x) x
#define IF_R3(x) x
#define IF_R4(x) x

#define BI_NAME(x) x##_c
#define BI_ATTR
#define BI_V float
#define BI_P uint32_t
#define BI_W 1
#define BI_ZERO() 0.0f
#define BI_LOADF(p) (*(p))
#define BI_STOREF(p, v) (*(p) = (v))
#define BI_LOADP(p) (*(p))
#define BI_SET1P(u) (u)
#define BI_DP(acc, a, b) dp_c((acc), (a), (b))
#define BI_R 4
#define BI_NV 4
#define IF_R6(x)
#define IF_R8(x)
#define IF_R12(x)
#define IF_NV2(x) x
#define IF_NV3(x) x
#define IF_NV4(x) x
#include "kernels/cpu/bf16conv-impl.h"

#ifdef BF_X86
#define BI_NAME(x) x##_avx512bf16
#define BI_ATTR __attribute__((target("avx512f,avx512bf16")))
#define BI_V __m512
#define BI_P __m512bh
#define BI_W 16
#define BI_ZERO() _mm512_setzero_ps()
#define BI_LOADF(p) _mm512_loadu_ps(p)
#define BI_STOREF(p, v) _mm512_storeu_ps((p), (v))
#define BI_LOADP(p) ((__m512bh)_mm512_loadu_si512(p))
#define BI_SET1P(u) ((__m512bh)_mm512_set1_epi32((int)(u)))
#define BI_DP(acc, a, b) _mm512_dpbf16_ps((acc), (a), (b))
#define BI_R 12
#define BI_NV 2
#define IF_R6(x) x
#define IF_R8(x) x
#define IF_R12(x) x
#define IF_NV2(x) x
#define IF_NV3(x)
#define IF_NV4(x)
#include "kernels/cpu/bf16conv-impl.h"
#endif

struct bisa {
	int w, r, nv, vec;	/* lanes, tile rows, vectors; packing */
	void (*fwd)(const struct bftile *t, int r, int nv);
	void (*wgt)(const struct bwtile *t, int r, int nv);
};

static const struct bisa isa_c = { 1, 4, 4, 0, bfwd_tile_c, bwgt_tile_c };
#ifdef BF_X86
static const struct bisa isa_bf = { 16, 12, 2, 1, bfwd_tile_avx512bf16,
				    bwgt_tile_avx512bf16 };
#endif

static const struct bisa *isa_get(void)
{
#ifdef BF_X86
	if (tfk_cpu_have_avx512bf16())
		return &isa_bf;
#endif
	return &isa_c;
}

static int64_t round_up(int64_t v, int64_t m)
{
	return (v + m - 1) / m * m;
}

/* conv.c's guard: a dilation that makes the padded copy mostly padding
 * (fuzzed .tflite options) runs the reference loops instead. */
static int too_padded(const struct tfk_conv2d *g, int64_t hp, int64_t wp)
{
	return (double)hp * (double)wp > 4.0 * (double)(g->h + g->kh) *
		(double)(g->w + g->kw) && (double)hp * (double)wp *
		(double)g->n * (double)(g->c + 3) > 64.0 * 1024 * 1024;
}

/* Packing ----------------------------------------------------------------- */

/*
 * A [n][h][w][c] float tensor into padded channel pairs [n][hp][wp]
 * [groups][kp] (kp = ceil(kc / 2) per group of kc channels): row j of
 * the copy is source row (j - top) / sy when j - top is a multiple of
 * sy, column k likewise with left and sx (zero elsewhere).
 */
struct cpack {
	const float *src;
	uint32_t *dst;
	int64_t h, w, c, groups, kc, kp, hp, wp, top, left, sy, sx;
	int vec;
};

/* npx consecutive source pixels at s into their pairs at d: an even
 * kc is the pixels' own order paired, kc 1 is each value with a zero
 * (both one vector pass over the run); another odd kc pairs within
 * each group, element by element. */
static void cpack_run(const struct cpack *p, const float *s, int64_t npx,
		      uint32_t *d)
{
	int64_t i, grp, q;

	if (p->kc % 2 == 0) {
		tfk_bf16_pack_run(s, npx * p->c, d, p->vec);
		return;
	}
	if (p->kc == 1) {
		tfk_bf16_pack_pairs(s, NULL, npx * p->c, d, p->vec);
		return;
	}
	for (i = 0; i < npx; i++, s += p->c)
		for (grp = 0; grp < p->groups; grp++)
			for (q = 0; q < p->kp; q++, d++) {
				const float *e = s + grp * p->kc + 2 * q;

				*d = tfk_bf16_round(e[0]) | (2 * q + 1 < p->kc ?
					(uint32_t)tfk_bf16_round(e[1]) << 16 : 0);
			}
}

static void cpack_rows(void *ctx, int64_t b, int64_t e, int k)
{
	const struct cpack *p = ctx;
	int64_t cp = p->groups * p->kp, row, col;

	for (row = b; row < e; row++) {
		int64_t n = row / p->hp, j = row % p->hp - p->top, sj;
		uint32_t *d = p->dst + row * p->wp * cp;
		const float *s;

		if (j < 0 || j % p->sy || (sj = j / p->sy) >= p->h) {
			memset(d, 0, (size_t)(p->wp * cp) * sizeof(*d));
			continue;
		}
		s = p->src + (n * p->h + sj) * p->w * p->c;
		if (p->sx == 1) {
			/* the row's pixels are one run */
			int64_t c0 = p->left > 0 ? p->left : 0;
			int64_t c1 = p->left + p->w < p->wp ? p->left + p->w :
				p->wp;

			c0 = c0 < p->wp ? c0 : p->wp;
			c1 = c1 > c0 ? c1 : c0;
			memset(d, 0, (size_t)(c0 * cp) * sizeof(*d));
			if (c1 > c0)
				cpack_run(p, s + (c0 - p->left) * p->c, c1 - c0,
					  d + c0 * cp);
			memset(d + c1 * cp, 0, (size_t)((p->wp - c1) * cp) *
			       sizeof(*d));
			continue;
		}
		for (col = 0; col < p->wp; col++) {
			int64_t i = col - p->left, si;

			if (i < 0 || i % p->sx || (si = i / p->sx) >= p->w)
				memset(d + col * cp, 0, (size_t)cp *
				       sizeof(*d));
			else
				cpack_run(p, s + si * p->c, 1, d + col * cp);
		}
	}
	(void)k;
}

/* The direct convolution over packed pairs (forward; input gradient
 * over the spread out_backprop). */
struct fdrv {
	const struct bisa *isa;
	const uint32_t *in;	/* [n][hp][wp][groups * kp] */
	int64_t hp, wp, cinp;
	int64_t groups, kp, og;	/* per group: input pairs, output channels */
	int64_t kh, kw, sh, sw, dh, dw;
	int64_t oh, ow, cout;
	const uint32_t *b;	/* [groups][kh][kw][kp][ldb] */
	int64_t ldb;
	float *out;
};

static void fdrv_rows(void *ctx, int64_t b, int64_t e, int k)
{
	const struct fdrv *d = ctx;
	const struct bisa *isa = d->isa;
	int64_t row, x0, g, o0, blk = (int64_t)isa->nv * isa->w;
	struct bftile t;

	t.a_px = d->sw * d->cinp;
	t.a_ky = d->dh * d->wp * d->cinp;
	t.a_kx = d->dw * d->cinp;
	t.kh = d->kh, t.kw = d->kw, t.kp = d->kp;
	t.ldb = d->ldb;
	t.y_px = d->cout;
	for (row = b; row < e; row++) {
		int64_t n = row / d->oh, oy = row % d->oh;
		const uint32_t *arow = d->in + (n * d->hp + oy * d->sh) *
			d->wp * d->cinp;
		float *yrow = d->out + row * d->ow * d->cout;

		for (x0 = 0; x0 < d->ow; x0 += isa->r) {
			int r = (int)(d->ow - x0 < isa->r ? d->ow - x0 : isa->r);

			for (g = 0; g < d->groups; g++)
				for (o0 = 0; o0 < d->og; o0 += blk) {
					t.ncols = d->og - o0 < blk ? d->og - o0 :
						blk;
					t.a = arow + x0 * t.a_px + g * d->kp;
					t.b = d->b + g * d->kh * d->kw * d->kp *
						d->ldb + o0;
					t.y = yrow + x0 * d->cout + g * d->og + o0;
					isa->fwd(&t, r, (int)((t.ncols + isa->w -
							       1) / isa->w));
				}
		}
	}
	(void)k;
}

/* The padded input as pixel pairs (x[y][p], x[y][p + sx]) per channel,
 * [n][hp][wp][c] (beyond the row: 0), read from the unpadded source:
 * the columns whose pair lies inside it as one run, the few at the
 * edges one by one; zero: c zeros (the left partner in the padding). */
struct xpack {
	const float *src;
	uint32_t *dst;
	const float *zero;
	int64_t h, w, c, hp, wp, top, left, sx;
	int vec;
};

static void xpack_rows(void *ctx, int64_t b, int64_t e, int k)
{
	const struct xpack *p = ctx;
	int64_t c = p->c, wp = p->wp, row, col;
	int64_t a0 = p->left, a1 = p->left + p->w - p->sx;

	for (row = b; row < e; row++) {
		int64_t n = row / p->hp, j = row % p->hp - p->top;
		uint32_t *d = p->dst + row * wp * c;
		const float *s;

		if (j < 0 || j >= p->h) {
			memset(d, 0, (size_t)(wp * c) * sizeof(*d));
			continue;
		}
		s = p->src + (n * p->h + j) * p->w * c;
		for (col = 0; col < wp; col++) {
			int64_t i0 = col - p->left, i1 = i0 + p->sx;
			int v0 = i0 >= 0 && i0 < p->w, v1 = i1 >= 0 && i1 < p->w;

			if (col == a0 && a1 > a0) {
				tfk_bf16_pack_pairs(s + i0 * c, s + i1 * c,
						    (a1 - a0) * c, d + col * c,
						    p->vec);
				col = a1 - 1;
			} else if (!v0 && !v1) {
				memset(d + col * c, 0, (size_t)c * sizeof(*d));
			} else {
				tfk_bf16_pack_pairs(v0 ? s + i0 * c : p->zero,
						    v1 ? s + i1 * c : NULL, c,
						    d + col * c, p->vec);
			}
		}
	}
	(void)k;
}

int tfk_cpu_conv2d_bf16(const struct tfk_conv2d *g, const struct tfk_tensor *x,
			const struct tfk_tensor *f, struct tfk_tensor *y,
			int threads, struct tfk_conv_ws *ws,
			struct tfk_err *err)
{
	const struct bisa *isa = isa_get();
	int64_t og, kp, kw, ldb, hp, wp, grp, ky, kx, q;
	const float *fw = f->data;
	int taps = g->kc == 1;	/* pairs of taps, not of channels */
	struct fdrv d;
	void *p[3];
	size_t sz[3];
	uint32_t *packed;
	int rc;

	if ((rc = check(g, x, err)))
		return rc;
	if (!g->n || !g->oh || !g->ow || !g->o)
		return 0;
	og = g->o / g->groups;
	/* per tap kp channel pairs, or (one channel) kw / 2 tap pairs */
	kp = taps ? 1 : (g->kc + 1) / 2;
	kw = taps ? (g->kw + 1) / 2 : g->kw;
	ldb = round_up(og, isa->w);
	hp = g->h + g->pt + g->pb;
	wp = g->w + g->pl + g->pr;
	if (too_padded(g, hp, wp))
		return tfk_cpu_conv2d_bf16_ref(g, x, f, y, err);
	sz[0] = (size_t)(g->groups * g->kh * kw * kp * ldb) * 4;
	sz[1] = (size_t)(g->n * hp * wp * g->groups * kp) * 4;
	sz[2] = taps ? (size_t)g->c * sizeof(float) : 0;
	if ((rc = tfk_conv_ws_carve(ws, p, sz, 3, err)))
		return rc;
	packed = p[0];
	for (grp = 0; grp < g->groups; grp++)
		for (ky = 0; ky < g->kh; ky++)
			for (kx = 0; kx < kw; kx++)
				for (q = 0; q < kp; q++) {
					uint32_t *dst = packed + (((grp * g->kh + ky) *
						kw + kx) * kp + q) * ldb;
					/* the pair's even element and whether it
					 * has an odd one, o floats further */
					int64_t e = taps ? ky * g->kw + 2 * kx :
						(ky * g->kw + kx) * g->kc + 2 * q;
					int odd = taps ? 2 * kx + 1 < g->kw :
						2 * q + 1 < g->kc;
					const float *r0 = fw + e * g->o + grp * og;

					tfk_bf16_pack_pairs(r0, odd ? r0 + g->o : NULL,
							    og, dst, isa->vec);
					memset(dst + og, 0, (size_t)(ldb - og) * 4);
				}
	if (taps) {
		/* pixel pairs dw apart: tap 2q's and 2q+1's value */
		struct xpack xk = { x->data, p[1], p[2], g->h, g->w, g->c,
				    hp, wp, g->pt, g->pl, g->dw, isa->vec };

		memset(p[2], 0, sz[2]);
		tfk_parallel_for(threads, g->n * hp, xpack_rows, &xk);
	} else {
		struct cpack pk = { x->data, p[1], g->h, g->w, g->c, g->groups,
				    g->kc, kp, hp, wp, g->pt, g->pl, 1, 1,
				    isa->vec };

		tfk_parallel_for(threads, g->n * hp, cpack_rows, &pk);
	}
	d.isa = isa;
	d.in = p[1];
	d.hp = hp, d.wp = wp, d.cinp = g->groups * kp;
	d.groups = g->groups, d.kp = kp, d.og = og;
	d.kh = g->kh, d.kw = kw, d.sh = g->sh, d.sw = g->sw;
	/* a tap pair steps two taps */
	d.dh = g->dh, d.dw = taps ? 2 * g->dw : g->dw;
	d.oh = g->oh, d.ow = g->ow, d.cout = g->o;
	d.b = packed, d.ldb = ldb;
	d.out = y->data;
	tfk_parallel_for(threads, g->n * g->oh, fdrv_rows, &d);
	return 0;
}

int tfk_cpu_conv2d_bp_input_bf16(const struct tfk_conv2d *g,
				 const struct tfk_tensor *f,
				 const struct tfk_tensor *dy,
				 struct tfk_tensor *dx, int threads,
				 struct tfk_conv_ws *ws, struct tfk_err *err)
{
	const struct bisa *isa = isa_get();
	int64_t og, kp, ldb, hb, wb, grp, ky, kx, q, c;
	const float *fw = f->data;
	struct fdrv d;
	struct cpack pk;
	void *p[2];
	size_t sz[2];
	uint32_t *packed;
	int rc;

	if ((rc = check(g, dy, err)))
		return rc;
	if (!g->n || !g->h || !g->w || !g->c)
		return 0;
	if (!g->oh || !g->ow || !g->o) {
		memset(dx->data, 0, dx->nbytes);
		return 0;
	}
	og = g->o / g->groups;
	kp = (og + 1) / 2;
	/* the "forward" has og input and kc output channels per group,
	 * the filter rotated and its channel axes swapped */
	ldb = round_up(g->kc, isa->w);
	hb = g->h + (g->kh - 1) * g->dh;
	wb = g->w + (g->kw - 1) * g->dw;
	sz[0] = (size_t)(g->groups * g->kh * g->kw * kp * ldb) * 4;
	sz[1] = (size_t)(g->n * hb * wb * g->groups * kp) * 4;
	if ((rc = tfk_conv_ws_carve(ws, p, sz, 2, err)))
		return rc;
	packed = p[0];
	for (grp = 0; grp < g->groups; grp++)
		for (ky = 0; ky < g->kh; ky++)
			for (kx = 0; kx < g->kw; kx++)
				for (q = 0; q < kp; q++) {
					uint32_t *dst = packed + (((grp * g->kh + ky) *
						g->kw + kx) * kp + q) * ldb;
					const float *src = fw + ((g->kh - 1 - ky) *
						g->kw + g->kw - 1 - kx) * g->kc *
						g->o + grp * og + 2 * q;

					for (c = 0; c < g->kc; c++)
						dst[c] = tfk_bf16_round(src[c * g->o]) |
							(2 * q + 1 < og ? (uint32_t)
							 tfk_bf16_round(src[c * g->o +
									1]) << 16 : 0);
					for (; c < ldb; c++)
						dst[c] = 0;
				}
	pk = (struct cpack){ dy->data, p[1], g->oh, g->ow, g->o, g->groups,
			     og, kp, hb, wb, (g->kh - 1) * g->dh - g->pt,
			     (g->kw - 1) * g->dw - g->pl, g->sh, g->sw,
			     isa->vec };
	tfk_parallel_for(threads, g->n * hb, cpack_rows, &pk);
	d.isa = isa;
	d.in = p[1];
	d.hp = hb, d.wp = wb, d.cinp = g->groups * kp;
	d.groups = g->groups, d.kp = kp, d.og = g->kc;
	d.kh = g->kh, d.kw = g->kw, d.sh = 1, d.sw = 1;
	d.dh = g->dh, d.dw = g->dw;
	d.oh = g->h, d.ow = g->w, d.cout = g->c;
	d.b = packed, d.ldb = ldb;
	d.out = dx->data;
	tfk_parallel_for(threads, g->n * g->h, fdrv_rows, &d);
	return 0;
}

/* The out_backprop as pixel pairs (dy[2q], dy[2q+1]) per output channel,
 * [rows][np][groups][ldb] (an odd width's last with 0; columns from og
 * to ldb 0). */
struct dpack {
	const float *src;
	uint32_t *dst;
	int64_t ow, o, groups, og, ldb, np;
	int vec;
};

static void dpack_rows(void *ctx, int64_t b, int64_t e, int k)
{
	const struct dpack *p = ctx;
	int64_t row, q, grp;

	for (row = b; row < e; row++)
		for (q = 0; q < p->np; q++) {
			const float *p0 = p->src + (row * p->ow + 2 * q) * p->o;
			const float *p1 = 2 * q + 1 < p->ow ? p0 + p->o : NULL;
			uint32_t *d = p->dst + (row * p->np + q) * p->groups *
				p->ldb;

			for (grp = 0; grp < p->groups; grp++, d += p->ldb) {
				tfk_bf16_pack_pairs(p0 + grp * p->og, p1 ? p1 +
						    grp * p->og : NULL, p->og, d,
						    p->vec);
				memset(d + p->og, 0, (size_t)(p->ldb - p->og) *
				       sizeof(*d));
			}
		}
	(void)k;
}

struct wdrv {
	const struct bisa *isa;
	const struct tfk_conv2d *g;
	const uint32_t *const *arow, *const *drow;
	int64_t rows, np, og, ldb, a_pp, a_ky, a_kx, d_pp;
	float *part;		/* n_blocks x [groups][kh][kw][kc][ldb] */
	int64_t part_n, n_blocks;
};

static void wdrv_block(void *ctx, int64_t b, int64_t e, int k)
{
	const struct wdrv *d = ctx;
	const struct tfk_conv2d *g = d->g;
	const struct bisa *isa = d->isa;
	int64_t blk = (int64_t)isa->nv * isa->w, i;
	/* one channel per group: a tile's rows are taps of a filter row
	 * (2 accumulators a tile would wait on the dot product's latency) */
	int taps = g->kc == 1;
	int64_t nkx = taps ? 1 : g->kw, nc = taps ? g->kw : g->kc;

	for (i = b; i < e; i++) {
		int64_t r0 = d->rows * i / d->n_blocks;
		int64_t r1 = d->rows * (i + 1) / d->n_blocks, q;
		float *part = d->part + i * d->part_n;
		struct bwtile t;

		memset(part, 0, (size_t)d->part_n * sizeof(float));
		t.np = d->np, t.a_pp = d->a_pp, t.d_pp = d->d_pp;
		t.ldw = d->ldb;
		t.a_r = taps ? d->a_kx : 1;
		for (q = r0; q < r1; q += WG_ROWS) {
			int64_t grp, ky, kx, c0, o0;

			t.arow = d->arow + q;
			t.drow = d->drow + q;
			t.n_rows = r1 - q < WG_ROWS ? r1 - q : WG_ROWS;
			for (grp = 0; grp < g->groups; grp++)
				for (ky = 0; ky < g->kh; ky++)
					for (kx = 0; kx < nkx; kx++)
						for (c0 = 0; c0 < nc; c0 += isa->r) {
							int r = (int)(nc - c0 < isa->r ?
								      nc - c0 : isa->r);
							/* (kx, c) of the tile's first row */
							int64_t tx = taps ? c0 : kx;
							int64_t tc = taps ? 0 : c0;

							t.a_off = ky * d->a_ky + tx * d->a_kx +
								grp * g->kc + tc;
							for (o0 = 0; o0 < d->og; o0 += blk) {
								int64_t ncol = d->og - o0 < blk ?
									d->og - o0 : blk;

								t.d_off = grp * d->ldb + o0;
								t.dw = part + (((grp * g->kh + ky) *
										g->kw + tx) * g->kc + tc) *
									d->ldb + o0;
								isa->wgt(&t, r, (int)((ncol + isa->w -
										       1) / isa->w));
							}
						}
		}
	}
	(void)k;
}

int tfk_cpu_conv2d_bp_filter_bf16(const struct tfk_conv2d *g,
				  const struct tfk_tensor *x,
				  const struct tfk_tensor *dy,
				  struct tfk_tensor *df, int threads,
				  struct tfk_conv_ws *ws, struct tfk_err *err)
{
	const struct bisa *isa = isa_get();
	int64_t og, ldb, hp, wp, rows, np, q, grp, ky, kx, c, o, i;
	float *out = df->data;
	struct wdrv d;
	struct xpack xp;
	struct dpack dp;
	void *p[6];
	size_t sz[6];
	int rc;

	if ((rc = check(g, x, err)))
		return rc;
	rows = g->n * g->oh;
	if (!rows || !g->ow || !g->c) {
		memset(df->data, 0, df->nbytes);
		return 0;
	}
	og = g->o / g->groups;
	ldb = round_up(og, isa->w);
	np = (g->ow + 1) / 2;
	hp = g->h + g->pt + g->pb;
	wp = g->w + g->pl + g->pr;
	if (too_padded(g, hp, wp))
		return tfk_cpu_conv2d_bp_filter_bf16_ref(g, x, dy, df, err);
	d.n_blocks = rows < WG_BLOCKS ? rows : WG_BLOCKS;
	d.part_n = g->groups * g->kh * g->kw * g->kc * ldb;
	sz[0] = (size_t)(d.n_blocks * d.part_n) * sizeof(float);
	sz[1] = (size_t)rows * sizeof(uint32_t *);
	sz[2] = (size_t)rows * sizeof(uint32_t *);
	sz[3] = (size_t)(g->n * hp * wp * g->c) * 4;
	sz[4] = (size_t)(rows * np * g->groups * ldb) * 4;
	sz[5] = (size_t)g->c * sizeof(float);
	if ((rc = tfk_conv_ws_carve(ws, p, sz, 6, err)))
		return rc;
	xp = (struct xpack){ x->data, p[3], p[5], g->h, g->w, g->c, hp, wp,
			     g->pt, g->pl, g->sw, isa->vec };
	memset(p[5], 0, sz[5]);
	tfk_parallel_for(threads, g->n * hp, xpack_rows, &xp);
	dp = (struct dpack){ dy->data, p[4], g->ow, g->o, g->groups, og, ldb,
			     np, isa->vec };
	tfk_parallel_for(threads, rows, dpack_rows, &dp);
	for (q = 0; q < rows; q++) {
		int64_t n = q / g->oh, oy = q % g->oh;

		((const uint32_t **)p[1])[q] = (const uint32_t *)p[3] +
			(n * hp + oy * g->sh) * wp * g->c;
		((const uint32_t **)p[2])[q] = (const uint32_t *)p[4] +
			q * np * g->groups * ldb;
	}
	d.isa = isa;
	d.g = g;
	d.arow = p[1];
	d.drow = p[2];
	d.rows = rows;
	d.np = np;
	d.og = og;
	d.ldb = ldb;
	d.a_pp = 2 * g->sw * g->c;
	d.a_ky = g->dh * wp * g->c;
	d.a_kx = g->dw * g->c;
	d.d_pp = g->groups * ldb;
	d.part = p[0];
	tfk_parallel_for(threads, d.n_blocks, wdrv_block, &d);
	/* the blocks in order, a row of og at a time (it vectorizes) */
	for (ky = 0; ky < g->kh; ky++)
		for (kx = 0; kx < g->kw; kx++)
			for (c = 0; c < g->kc; c++)
				for (grp = 0; grp < g->groups; grp++) {
					const float *src = d.part + (((grp * g->kh +
						ky) * g->kw + kx) * g->kc + c) * ldb;
					float *dst = out + ((ky * g->kw + kx) *
						g->kc + c) * g->o + grp * og;

					memcpy(dst, src, (size_t)og * sizeof(*dst));
					for (i = 1; i < d.n_blocks; i++)
						for (o = 0; o < og; o++)
							dst[o] += src[i * d.part_n + o];
				}
	return 0;
}
