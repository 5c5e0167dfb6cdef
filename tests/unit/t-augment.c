/*
 * t-augment.c - the Keras image augmentation kernels of lib/prep/augment.c.
 *
 * Evidence, independent of our code where it can be:
 *  - Philox-4x32-10 against Random123's published known-answer vectors;
 *  - the projective transform against tests/py/augment.py, a whole-array
 *    numpy implementation of TF's ImageProjectiveTransformV3 formulas, on
 *    random images for every fill mode and interpolation (tolerance: 1e-3
 *    on 0..255 values - the numpy version does the same float32 steps in
 *    another order only where numpy broadcasting forces it);
 *  - rotations by quarter turns against numpy.rot90 (exactly equal: the
 *    matrix entries are then integers, so every step is exact);
 *  - flip, rescale, contrast, center crop against numpy (and images.py's
 *    tf.image.resize oracle for CenterCrop's smart_resize case);
 *  - the fast transform against tfk_aug_transform_ref: bit-identical
 *    float32 (the same float operations in the same order), and uint8
 *    results equal to the reference rounded half away from zero;
 *  - the random layers: equal to their documented draws applied by hand,
 *    identical for the same (seed, record, layer), flip frequency near
 *    1/2, every crop window reachable;
 *  - bad arguments, NaN and huge matrices, failed allocations.
 */
#include "prep/augment.h"
#include "util/alloc.h"
#include "tap.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long rnd_state = 424242;

static unsigned rnd(void)
{
	rnd_state = rnd_state * 6364136223846793005UL + 1442695040888963407UL;
	return (unsigned)(rnd_state >> 33);
}

static double rndf(double lo, double hi)
{
	return lo + (hi - lo) * (rnd() / 2147483648.0);
}

static uint8_t *rand_u8(size_t n)
{
	uint8_t *p = malloc(n);
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = rnd() & 255;
	return p;
}

static struct tfk_aug_image img(int dtype, int h, int w, int c, void *data)
{
	struct tfk_aug_image im = { .dtype = dtype, .h = h, .w = w, .c = c,
				    .data = data };

	return im;
}

static uint8_t round_u8(float v)
{
	double d = floor((double)v + 0.5);

	if (!(v > 0))
		return 0;
	return d >= 255 ? 255 : (uint8_t)d;
}

static void philox_vectors(void)
{
	/* Random123 tests/kat_vectors, the three philox4x32 10 lines. */
	static const uint32_t kat[3][10] = {
		{ 0, 0, 0, 0, 0, 0,
		  0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 },
		{ 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
		  0xffffffff, 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd },
		{ 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822,
		  0x299f31d0, 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 },
	};
	struct tfk_aug_rng r, r2;
	uint32_t out[4], blk[4], ctr[4], key[2];
	int i, same = 1, differ = 0, in_range = 1;

	for (i = 0; i < 3; i++) {
		tfk_aug_philox(kat[i], kat[i] + 4, out);
		is_mem(out, 16, kat[i] + 6, 16, "philox4x32-10 vector %d", i);
	}
	/* The stream layout: key = seed, counter = (block, layer, record). */
	tfk_aug_rng_init(&r, 0x299f31d0a4093822ull, 0x0370734413198a2eull,
			 0x85a308d3);
	key[0] = 0xa4093822;
	key[1] = 0x299f31d0;
	for (i = 0; i < 12; i++) {
		if (i % 4 == 0) {
			ctr[0] = (uint32_t)(i / 4);
			ctr[1] = 0x85a308d3;
			ctr[2] = 0x13198a2e;
			ctr[3] = 0x03707344;
			tfk_aug_philox(ctr, key, blk);
		}
		same &= tfk_aug_rng_u32(&r) == blk[i % 4];
	}
	ok(same, "rng: blocks 0, 1, 2 of (seed, layer, record) in order");
	tfk_aug_rng_init(&r, 7, 0, 0);
	is_int(tfk_aug_rng_u32(&r) == 0 ? 0 : 1, 1, "rng: seed 7 draws");
	for (i = 0; i < 64; i++) {
		tfk_aug_rng_init(&r, 7, (uint64_t)i, 3);
		tfk_aug_rng_init(&r2, 7, (uint64_t)i + 1, 3);
		differ += tfk_aug_rng_u32(&r) != tfk_aug_rng_u32(&r2);
	}
	is_int(differ, 64, "rng: neighbouring records draw differently");
	tfk_aug_rng_init(&r, 1, 2, 3);
	tfk_aug_rng_init(&r2, 1, 2, 4);
	ok(tfk_aug_rng_u32(&r) != tfk_aug_rng_u32(&r2),
	   "rng: layers draw differently");
	tfk_aug_rng_init(&r, 1, 2, 3);
	for (i = 0; i < 10000; i++) {
		float u = tfk_aug_rng_uniform(&r, -2.0f, 3.0f);

		in_range &= u >= -2.0f && u < 3.0f;
	}
	ok(in_range, "rng: uniform(-2, 3) stays in [-2, 3)");
	/* 23 mantissa bits: u32 0x00000000 -> lo, 0x007fffff -> 1 - 2^-23 */
	{
		uint32_t word;
		float u;

		tfk_aug_rng_init(&r, 5, 6, 7);
		r2 = r;
		word = tfk_aug_rng_u32(&r2);
		u = tfk_aug_rng_uniform(&r, 0.0f, 1.0f);
		ok(u == (float)(word & 0x7fffff) / 8388608.0f,
		   "rng: uniform = low 23 bits / 2^23 (%g)", u);
	}
}

static void names(void)
{
	is_int(tfk_aug_fill_parse("reflect"), TFK_AUG_REFLECT, "fill reflect");
	is_int(tfk_aug_fill_parse("wrap"), TFK_AUG_WRAP, "fill wrap");
	is_int(tfk_aug_fill_parse("constant"), TFK_AUG_CONSTANT,
	       "fill constant");
	is_int(tfk_aug_fill_parse("nearest"), TFK_AUG_EDGE, "fill nearest");
	is_int(tfk_aug_fill_parse("mirror"), -1, "fill mirror: unknown");
	is_int(tfk_aug_interp_parse("bilinear"), TFK_AUG_BILINEAR, "bilinear");
	is_int(tfk_aug_interp_parse("bicubic"), -1, "bicubic: unknown");
	is_int(tfk_aug_flip_parse("horizontal_and_vertical"), TFK_AUG_FLIP_HV,
	       "flip horizontal_and_vertical");
	is_int(tfk_aug_flip_parse("vertical"), TFK_AUG_FLIP_V, "flip vertical");
	is_int(tfk_aug_flip_parse(NULL), -1, "flip NULL");
	is_str(tfk_aug_fill_name(TFK_AUG_EDGE), "nearest", "fill name");
	is_str(tfk_aug_interp_name(TFK_AUG_NEAREST), "nearest", "interp name");
}

static void known_values(void)
{
	/* 2x2 single channel [[0 10] [20 30]], translation by half a pixel:
	 * out(0,0) = bilinear at (-0.5, -0.5) under each fill mode. */
	const float src[4] = { 0, 10, 20, 30 };
	float t[8], out[4];
	struct tfk_aug_warp wp = TFK_AUG_WARP_DEFAULT;

	tfk_aug_translation_matrix(0.5, 0, t);
	wp.fill = TFK_AUG_CONSTANT;
	wp.fill_value = 100;
	tfk_aug_transform_ref(src, 2, 2, 1, out, 2, 2, t, &wp);
	ok(out[0] == 100 && out[1] == 5 && out[2] == 100 && out[3] == 25,
	   "constant: x=-0.5 is outside, x=0.5 blends: %g %g %g %g",
	   out[0], out[1], out[2], out[3]);
	wp.fill = TFK_AUG_REFLECT;
	tfk_aug_transform_ref(src, 2, 2, 1, out, 2, 2, t, &wp);
	/* reflect(-0.5, 2) = -(-0.5) - 1 = -0.5 -> clamp 0 */
	ok(out[0] == 0 && out[1] == 5, "reflect: -0.5 maps to 0: %g %g",
	   out[0], out[1]);
	wp.fill = TFK_AUG_WRAP;
	tfk_aug_transform_ref(src, 2, 2, 1, out, 2, 2, t, &wp);
	/* wrap(-0.5, 2) = -0.5 + 2 * (0 + 1) = 1.5 -> clamp 1 */
	ok(out[0] == 10 && out[2] == 30, "wrap: -0.5 maps to 1.5, clamped: "
	   "%g %g", out[0], out[2]);
	wp.interp = TFK_AUG_NEAREST;
	wp.fill = TFK_AUG_CONSTANT;
	tfk_aug_translation_matrix(-0.5, 0, t);
	tfk_aug_transform_ref(src, 2, 2, 1, out, 2, 2, t, &wp);
	/* x = 0.5 rounds (away from zero) to 1; x = 1.5 is outside */
	ok(out[0] == 10 && out[1] == 100, "nearest: 0.5 rounds up to 1, 1.5 "
	   "outside: %g %g", out[0], out[1]);
	tfk_aug_rotation_matrix(3, 5, 0, t);
	ok(t[0] == 1 && t[1] == 0 && t[2] == 0 && t[3] == 0 && t[4] == 1 &&
	   t[5] == 0 && t[6] == 0 && t[7] == 0, "rotation by 0 is identity");
	tfk_aug_zoom_matrix(5, 9, 2, 0.5, t);
	ok(t[0] == 2 && t[2] == -4 && t[4] == 0.5f && t[5] == 1,
	   "zoom matrix: [2 0 -4 0 .5 1 0 0]");
	/* projection k = 0 on the whole row y = 1: fill */
	{
		const float p[8] = { 1, 0, 0, 0, 1, 0, 0, -1 };

		wp.interp = TFK_AUG_BILINEAR;
		wp.fill = TFK_AUG_REFLECT;
		wp.fill_value = -7;
		tfk_aug_transform_ref(src, 2, 2, 1, out, 2, 2, p, &wp);
		ok(out[0] == 0 && out[1] == 10 && out[2] == -7 && out[3] == -7,
		   "projective k == 0 row gives fill_value");
	}
}

/* Transform cases for the oracle and the fast/ref comparison. */
struct tcase {
	int h, w, c, oh, ow, f32in, interp, fill;
	float fill_value, t[8];
};

static void make_case(struct tcase *k, int i)
{
	static const int sizes[][2] = { { 17, 23 }, { 1, 9 }, { 32, 32 },
					{ 9, 1 }, { 40, 27 }, { 2, 2 } };
	int kind = i % 6, j;

	memset(k, 0, sizeof(*k));
	k->h = sizes[(i / 8) % 6][0];
	k->w = sizes[(i / 8) % 6][1];
	k->c = (i % 5 == 0) ? 1 : (i % 5 == 1) ? 4 : (i % 7 == 0) ? 2 : 3;
	k->oh = k->h;
	k->ow = k->w;
	if (i % 9 == 4) {
		k->oh = k->h + 5;
		k->ow = k->w + 3;
	}
	k->f32in = i % 3 == 2;
	k->interp = (i / 4) % 2;
	k->fill = i % 4;
	k->fill_value = (float)rndf(-20, 300);
	switch (kind) {
	case 0:
		tfk_aug_rotation_matrix(k->h, k->w, rndf(-M_PI, M_PI), k->t);
		break;
	case 1:
		tfk_aug_zoom_matrix(k->h, k->w, rndf(0.3, 2.5),
				    rndf(0.3, 2.5), k->t);
		break;
	case 2:
		tfk_aug_translation_matrix(rndf(-3, 3) * k->w,
					   rndf(-3, 3) * k->h, k->t);
		break;
	case 3:		/* a general affine map, large and sheared */
		for (j = 0; j < 6; j++)
			k->t[j] = (float)rndf(-4, 4);
		k->t[2] = (float)rndf(-60, 60);
		k->t[5] = (float)rndf(-60, 60);
		break;
	case 4:		/* projective */
		tfk_aug_rotation_matrix(k->h, k->w, rndf(-1, 1), k->t);
		k->t[6] = (float)rndf(-0.05, 0.05);
		k->t[7] = (float)rndf(-0.05, 0.05);
		break;
	default:	/* rotation plus zoom, as a composed layer stack would */
		tfk_aug_rotation_matrix(k->h, k->w, rndf(-3, 3), k->t);
		k->t[0] *= 1.7f;
		k->t[4] *= 0.6f;
		break;
	}
}

static void *case_src(const struct tcase *k)
{
	size_t n = (size_t)k->h * k->w * k->c, i;

	if (k->f32in) {
		float *f = malloc(n * sizeof(float));

		for (i = 0; i < n; i++)
			f[i] = (float)(rnd() % 25600) / 100.0f - 1.0f;
		return f;
	}
	return rand_u8(n);
}

static struct tfk_aug_warp case_warp(const struct tcase *k)
{
	struct tfk_aug_warp wp = { k->interp, k->fill, k->fill_value };

	return wp;
}

static float *as_f32(const struct tcase *k, const void *src)
{
	size_t n = (size_t)k->h * k->w * k->c, i;
	float *f = malloc(n * sizeof(float));

	for (i = 0; i < n; i++)
		f[i] = k->f32in ? ((const float *)src)[i]
				: (float)((const uint8_t *)src)[i];
	return f;
}

static float *read_floats(const char *path, size_t n)
{
	size_t got;
	float *p = tap_read_file(path, &got);

	if (p && got != n * sizeof(float)) {
		tap_diag("%s: %zu bytes, want %zu", path, got, n * 4);
		free(p);
		return NULL;
	}
	return p;
}

static void fast_vs_ref(void)
{
	int i, bad_f = 0, bad_u = 0, n = 0;

	for (i = 0; i < 240; i++) {
		struct tcase k;
		struct tfk_aug_warp wp;
		void *src;
		float *fsrc, *ref, *got;
		uint8_t *u8;
		size_t no, j;
		struct tfk_aug_image s, d;
		struct tfk_err err;
		int rc;

		make_case(&k, i);
		wp = case_warp(&k);
		src = case_src(&k);
		fsrc = as_f32(&k, src);
		no = (size_t)k.oh * k.ow * k.c;
		ref = malloc(no * sizeof(float));
		got = malloc(no * sizeof(float));
		u8 = malloc(no);
		tfk_aug_transform_ref(fsrc, k.h, k.w, k.c, ref, k.oh, k.ow,
				      k.t, &wp);
		s = img(k.f32in ? TFK_AUG_F32 : TFK_AUG_U8, k.h, k.w, k.c, src);
		d = img(TFK_AUG_F32, k.oh, k.ow, k.c, got);
		rc = tfk_aug_transform(&s, &d, k.t, &wp, &err);
		if (rc || memcmp(got, ref, no * sizeof(float))) {
			if (bad_f++ < 3)
				tap_diag("case %d (%dx%dx%d %s %s): rc %d, "
					 "float results differ", i, k.h, k.w,
					 k.c, tfk_aug_interp_name(k.interp),
					 tfk_aug_fill_name(k.fill), rc);
		}
		d = img(TFK_AUG_U8, k.oh, k.ow, k.c, u8);
		rc = tfk_aug_transform(&s, &d, k.t, &wp, &err);
		for (j = 0; j < no; j++)
			if (rc || u8[j] != round_u8(ref[j])) {
				if (bad_u++ < 3)
					tap_diag("case %d: uint8 [%zu] = %d, "
						 "ref %.9g", i, j, u8[j],
						 ref[j]);
				break;
			}
		n++;
		free(src);
		free(fsrc);
		free(ref);
		free(got);
		free(u8);
	}
	is_int(bad_f, 0, "fast transform = ref, bit for bit (float32 out), "
	       "%d cases: rotations, zooms, translations, shears, "
	       "projective; every fill and interpolation; uint8 and float "
	       "sources; 1..4 channels", n);
	is_int(bad_u, 0, "fast transform, uint8 out = ref rounded half away "
	       "from zero, clamped");
}

/*
 * A rescaled source (a Rescaling folded into the op) against the plain
 * op on the Rescaling's float32 output, computed here: bit for bit, for
 * the transforms of fast_vs_ref's cases and the flips; the functions
 * that do not fold one refuse it.
 */
static void rescaled_sources(void)
{
	static const float scales[] = { 0.00392156862745098f, -0.37f, 2.5f };
	static const float offsets[] = { 0.25f, -1.0f, 0.0f };
	int i, bad_t = 0, bad_f = 0, n = 0;
	struct tfk_err err;

	for (i = 0; i < 240; i++) {
		struct tcase k;
		struct tfk_aug_warp wp;
		struct tfk_aug_image s, d, ps;
		void *src;
		float *fsrc, *ref, *got, *pre;
		size_t no, ni, j;
		int mode = 1 + i % 2, rc;
		float sc = scales[i % 3], off = offsets[(i / 3) % 3];

		make_case(&k, i);
		wp = case_warp(&k);
		src = case_src(&k);
		fsrc = as_f32(&k, src);
		ni = (size_t)k.h * k.w * k.c;
		no = (size_t)k.oh * k.ow * k.c;
		pre = malloc(ni * sizeof(float));
		for (j = 0; j < ni; j++) {	/* Cast, Mul, AddV2 */
			volatile float v = fsrc[j] * sc;

			pre[j] = mode == TFK_AUG_RESCALE_OFFSET ? v + off : v;
		}
		ref = malloc((no > ni ? no : ni) * sizeof(float));
		got = malloc((no > ni ? no : ni) * sizeof(float));
		tfk_aug_transform_ref(pre, k.h, k.w, k.c, ref, k.oh, k.ow,
				      k.t, &wp);
		s = img(k.f32in ? TFK_AUG_F32 : TFK_AUG_U8, k.h, k.w, k.c, src);
		s.rescale = mode;
		s.scale = sc;
		s.offset = off;
		d = img(TFK_AUG_F32, k.oh, k.ow, k.c, got);
		rc = tfk_aug_transform(&s, &d, k.t, &wp, &err);
		if ((rc || memcmp(got, ref, no * sizeof(float))) &&
		    bad_t++ < 3)
			tap_diag("case %d (%dx%dx%d %s %s, rescale %d): rc %d, "
				 "results differ", i, k.h, k.w, k.c,
				 tfk_aug_interp_name(k.interp),
				 tfk_aug_fill_name(k.fill), mode, rc);
		ps = img(TFK_AUG_F32, k.h, k.w, k.c, pre);
		d = img(TFK_AUG_F32, k.h, k.w, k.c, ref);
		tfk_aug_flip(&ps, &d, 1 + i % 3, &err);
		d = img(TFK_AUG_F32, k.h, k.w, k.c, got);
		rc = tfk_aug_flip(&s, &d, 1 + i % 3, &err);
		if ((rc || memcmp(got, ref, ni * sizeof(float))) &&
		    bad_f++ < 3)
			tap_diag("case %d: flip %d of a rescaled %dx%dx%d "
				 "source differs", i, 1 + i % 3, k.h, k.w,
				 k.c);
		n++;
		free(src);
		free(fsrc);
		free(pre);
		free(ref);
		free(got);
	}
	is_int(bad_t, 0, "transform of a rescaled source = transform of "
	       "the Rescaling's output, bit for bit (%d cases, scale and "
	       "scale+offset)", n);
	is_int(bad_f, 0, "flip of a rescaled source = flip of the "
	       "Rescaling's output, bit for bit");
	{
		uint8_t px[2 * 2 * 3] = { 0 };
		float out[2 * 2 * 3];
		struct tfk_aug_image s = img(TFK_AUG_U8, 2, 2, 3, px);
		struct tfk_aug_image d = img(TFK_AUG_F32, 1, 1, 3, out);

		s.rescale = TFK_AUG_RESCALE_SCALE;
		s.scale = 2;
		is_int(tfk_aug_center_crop(&s, &d, &err), TFK_EINVAL,
		       "center crop refuses a rescaled source");
		is_str(err.msg, "source image: only flips and transforms "
		       "take a rescaled source", "... and says so");
	}
}

static void vs_numpy(void)
{
	enum { NC = 96 };
	static struct tcase cases[NC];
	const char *dir = tap_tmpdir(), *py = getenv("PYTHON");
	char path[PATH_MAX], cmd[PATH_MAX * 3 + 64];
	FILE *list;
	int i, m, worst_case = -1;
	double worst = 0;
	int per_mode_bad[2][4] = { { 0 } };

	snprintf(path, sizeof(path), "%s/tcases.txt", dir);
	list = fopen(path, "w");
	for (i = 0; i < NC; i++) {
		struct tcase *k = &cases[i];
		char in[PATH_MAX];
		void *src;

		make_case(k, i + 1000);
		k->interp = (i / 4) % 2;
		k->fill = i % 4;
		src = case_src(k);
		snprintf(in, sizeof(in), "%s/t%d.raw", dir, i);
		tap_write_file(in, src, (size_t)k->h * k->w * k->c *
			       (k->f32in ? 4 : 1));
		free(src);
		fprintf(list, "%s %s %d %d %d %d %d %s %s %.9g", in,
			k->f32in ? "f32" : "u8", k->h, k->w, k->c, k->oh,
			k->ow, tfk_aug_interp_name(k->interp),
			tfk_aug_fill_name(k->fill), k->fill_value);
		for (m = 0; m < 8; m++)
			fprintf(list, " %.9g", k->t[m]);
		fprintf(list, " %s/t%d.out\n", dir, i);
	}
	fclose(list);
	snprintf(cmd, sizeof(cmd), "%s %s transform %s",
		 py ? py : "/usr/bin/python3", tap_source("tests/py/augment.py"),
		 path);
	ok(system(cmd) == 0, "numpy oracle ran %d transform cases", NC);
	for (i = 0; i < NC; i++) {
		struct tcase *k = &cases[i];
		size_t no = (size_t)k->oh * k->ow * k->c, j;
		struct tfk_aug_warp wp = case_warp(k);
		void *src;
		float *want, *got = malloc(no * sizeof(float)), *fs;
		double d = 0;
		size_t nread;

		snprintf(path, sizeof(path), "%s/t%d.raw", dir, i);
		src = tap_read_file(path, &nread);
		snprintf(path, sizeof(path), "%s/t%d.out", dir, i);
		want = read_floats(path, no);
		if (!src || !want) {
			per_mode_bad[k->interp][k->fill]++;
			free(src);
			free(want);
			free(got);
			continue;
		}
		fs = as_f32(k, src);
		tfk_aug_transform_ref(fs, k->h, k->w, k->c, got, k->oh, k->ow,
				      k->t, &wp);
		for (j = 0; j < no; j++) {
			double e = fabs((double)got[j] - want[j]);

			if (isnan(e))
				e = INFINITY;
			d = e > d ? e : d;
		}
		if (d > 1e-3)
			per_mode_bad[k->interp][k->fill]++;
		if (d > worst || worst_case < 0) {
			worst = d;
			worst_case = i;
		}
		free(src);
		free(want);
		free(got);
		free(fs);
	}
	for (m = 0; m < 8; m++)
		is_int(per_mode_bad[m / 4][m % 4], 0,
		       "transform vs numpy, %s interpolation, fill %s: "
		       "%d cases within 1e-3", tfk_aug_interp_name(m / 4),
		       tfk_aug_fill_name(m % 4), NC / 8);
	tap_diag("largest difference from numpy: %.3g (case %d)", worst,
		 worst_case);
	snprintf(cmd, sizeof(cmd), "rm -f %s/t*.raw %s/t*.out %s/tcases.txt",
		 dir, dir, dir);
	if (system(cmd) != 0)
		tap_diag("could not clean %s", dir);
}

/* ops cases: each produces float32 via our code; numpy writes want. */
struct ocase {
	char op[16];
	int h, w, c, a, b;
	float x, y, z;
};

static int run_op(const struct ocase *o, const uint8_t *src, float *out,
		  int *oh, int *ow, struct tfk_err *err)
{
	struct tfk_aug_image s = img(TFK_AUG_U8, o->h, o->w, o->c,
				     (void *)src), d;

	*oh = o->h;
	*ow = o->w;
	if (!strcmp(o->op, "centercrop")) {
		*oh = o->a;
		*ow = o->b;
	}
	d = img(TFK_AUG_F32, *oh, *ow, o->c, out);
	if (!strcmp(o->op, "flip"))
		return tfk_aug_flip(&s, &d, o->a, err);
	if (!strcmp(o->op, "rescale"))
		return tfk_aug_rescale(&s, &d, &o->x, &o->y, 1, err);
	if (!strcmp(o->op, "contrast"))
		return tfk_aug_contrast(&s, &d, o->x, o->y, o->z, err);
	if (!strcmp(o->op, "centercrop"))
		return tfk_aug_center_crop(&s, &d, err);
	if (!strcmp(o->op, "rot90")) {	/* RandomRotation, factor a/4 */
		struct tfk_aug_rng r;
		struct tfk_aug_warp wp = TFK_AUG_WARP_DEFAULT;

		wp.interp = o->b;
		tfk_aug_rng_init(&r, 1, 2, 3);
		return tfk_aug_random_rotation(&s, &d, o->a / 4.0f,
					       o->a / 4.0f, &wp, 1, &r, err);
	}
	return -1;
}

static void ops_vs_numpy(void)
{
	static const struct ocase ops[] = {
		{ "flip", 7, 5, 3, 1, 0, 0, 0, 0 },
		{ "flip", 7, 5, 3, 2, 0, 0, 0, 0 },
		{ "flip", 6, 9, 1, 3, 0, 0, 0, 0 },
		{ "flip", 1, 4, 2, 3, 0, 0, 0, 0 },
		{ "rescale", 8, 6, 3, 0, 0, 1.0f / 255, 0, 0 },
		{ "rescale", 8, 6, 3, 0, 0, 1.0f / 127.5f, -1, 0 },
		{ "contrast", 9, 11, 3, 0, 0, 1.7f, 0, 255 },
		{ "contrast", 9, 11, 3, 0, 0, 0.3f, 0, 255 },
		{ "contrast", 5, 4, 1, 0, 0, 2.5f, 20, 200 },
		{ "centercrop", 10, 13, 3, 6, 7, 0, 0, 0 },
		{ "centercrop", 10, 13, 3, 10, 13, 0, 0, 0 },
		{ "centercrop", 9, 12, 3, 4, 5, 0, 0, 0 },
		{ "centercrop", 10, 13, 3, 20, 15, 0, 0, 0 },
		{ "centercrop", 10, 13, 3, 8, 20, 0, 0, 0 },
		{ "centercrop", 30, 13, 1, 31, 5, 0, 0, 0 },
		{ "rot90", 12, 12, 3, 1, TFK_AUG_BILINEAR, 0, 0, 0 },
		{ "rot90", 12, 12, 3, 2, TFK_AUG_BILINEAR, 0, 0, 0 },
		{ "rot90", 12, 12, 3, 3, TFK_AUG_NEAREST, 0, 0, 0 },
		{ "rot90", 7, 11, 2, 2, TFK_AUG_BILINEAR, 0, 0, 0 },
		{ "rot90", 13, 13, 1, -1, TFK_AUG_BILINEAR, 0, 0, 0 },
	};
	const int n = (int)(sizeof(ops) / sizeof(*ops));
	const char *dir = tap_tmpdir(), *py = getenv("PYTHON");
	char path[PATH_MAX], cmd[PATH_MAX * 3 + 64];
	FILE *list;
	int i;

	snprintf(path, sizeof(path), "%s/ocases.txt", dir);
	list = fopen(path, "w");
	for (i = 0; i < n; i++) {
		const struct ocase *o = &ops[i];
		size_t ni = (size_t)o->h * o->w * o->c;
		uint8_t *src = rand_u8(ni);
		char in[PATH_MAX];

		snprintf(in, sizeof(in), "%s/o%d.raw", dir, i);
		tap_write_file(in, src, ni);
		free(src);
		fprintf(list, "%s %s %d %d %d ", o->op, in, o->h, o->w, o->c);
		if (!strcmp(o->op, "flip"))
			fprintf(list, "%d", o->a);
		else if (!strcmp(o->op, "rescale"))
			fprintf(list, "%.9g %.9g", o->x, o->y);
		else if (!strcmp(o->op, "contrast"))
			fprintf(list, "%.9g %.9g %.9g", o->x, o->y, o->z);
		else if (!strcmp(o->op, "centercrop"))
			fprintf(list, "%d %d", o->a, o->b);
		else
			fprintf(list, "%d", (o->a + 4) % 4);
		fprintf(list, " %s/o%d.out\n", dir, i);
	}
	fclose(list);
	snprintf(cmd, sizeof(cmd), "%s %s ops %s",
		 py ? py : "/usr/bin/python3", tap_source("tests/py/augment.py"),
		 path);
	ok(system(cmd) == 0, "numpy oracle ran %d layer cases", n);
	for (i = 0; i < n; i++) {
		const struct ocase *o = &ops[i];
		int oh, ow, rc, exact = strcmp(o->op, "centercrop") ||
					(o->h >= o->a && o->w >= o->b);
		size_t no, j;
		float *got, *want;
		uint8_t *src;
		struct tfk_err err;
		double d = 0;
		size_t nread;

		snprintf(path, sizeof(path), "%s/o%d.raw", dir, i);
		src = tap_read_file(path, &nread);
		oh = !strcmp(o->op, "centercrop") ? o->a : o->h;
		ow = !strcmp(o->op, "centercrop") ? o->b : o->w;
		no = (size_t)oh * ow * o->c;
		got = malloc(no * sizeof(float));
		snprintf(path, sizeof(path), "%s/o%d.out", dir, i);
		want = read_floats(path, no);
		rc = src ? run_op(o, src, got, &oh, &ow, &err) : -1;
		for (j = 0; want && j < no; j++) {
			double e = fabs((double)got[j] - want[j]);

			d = e > d ? e : d;
		}
		if (exact)
			ok(rc == 0 && want && d == 0,
			   "%s %dx%dx%d (%d %d %g %g %g) = numpy exactly%s",
			   o->op, o->h, o->w, o->c, o->a, o->b, o->x, o->y,
			   o->z, !strcmp(o->op, "rot90") ?
			   " (numpy.rot90)" : "");
		else
			ok(rc == 0 && want && d <= 2e-3,
			   "centercrop %dx%d -> %dx%d (smart_resize) vs numpy:"
			   " max diff %.2g (tolerance 2e-3)", o->h, o->w,
			   o->a, o->b, d);
		free(src);
		free(got);
		free(want);
	}
	snprintf(cmd, sizeof(cmd), "rm -f %s/o*.raw %s/o*.out %s/ocases.txt",
		 dir, dir, dir);
	if (system(cmd) != 0)
		tap_diag("could not clean %s", dir);
}

static void random_layers(void)
{
	enum { H = 6, W = 8, C = 3, N = H * W * C };
	uint8_t *src = rand_u8(N);
	float a[N], b[N], want[N];
	struct tfk_aug_image s = img(TFK_AUG_U8, H, W, C, src);
	struct tfk_aug_image da = img(TFK_AUG_F32, H, W, C, a);
	struct tfk_aug_image db = img(TFK_AUG_F32, H, W, C, b);
	struct tfk_aug_image dw = img(TFK_AUG_F32, H, W, C, want);
	struct tfk_aug_warp wp = TFK_AUG_WARP_DEFAULT;
	struct tfk_aug_rng r, r2;
	struct tfk_err err;
	float t[8], u0, u1;
	int i, flips = 0, hv_ok = 1, same = 1, differ = 0, rc;

	/* RandomFlip: u <= 0.5 flips; HV is all or nothing. */
	for (i = 0; i < 2000; i++) {
		int f;
		float u;

		tfk_aug_rng_init(&r, 99, (uint64_t)i, 0);
		r2 = r;
		u = tfk_aug_rng_uniform(&r2, 0, 1);
		tfk_aug_random_flip(&s, &da, TFK_AUG_FLIP_HV, 1, &r, &f, &err);
		tfk_aug_flip(&s, &db, f ? TFK_AUG_FLIP_HV : 0, &err);
		hv_ok &= !memcmp(a, b, sizeof(a)) && f == (u <= 0.5f);
		flips += f;
	}
	ok(hv_ok, "random flip: flipped iff u <= 0.5, both axes together");
	/* Binomial(2000, 1/2): sd 22.4; 5 sd either side. */
	ok(flips > 1000 - 112 && flips < 1000 + 112,
	   "random flip: %d of 2000 flipped", flips);
	tfk_aug_rng_init(&r, 99, 0, 0);
	rc = tfk_aug_random_flip(&s, &da, TFK_AUG_FLIP_H, 0, &r, NULL, &err);
	tfk_aug_flip(&s, &db, 0, &err);
	ok(rc == 0 && !memcmp(a, b, sizeof(a)) && r.n_used == 4,
	   "random flip, inference: a copy, nothing drawn");

	/* RandomRotation = the drawn angle applied by hand. */
	for (i = 0; i < 50; i++) {
		float deg;

		tfk_aug_rng_init(&r, 5, (uint64_t)i, 2);
		r2 = r;
		rc = tfk_aug_random_rotation(&s, &da, -0.2f, 0.3f, &wp, 1, &r,
					     &err);
		deg = tfk_aug_rng_uniform(&r2, -0.2f * 360, 0.3f * 360);
		tfk_aug_rotation_matrix(H, W, deg * (M_PI / 180.0), t);
		tfk_aug_transform(&s, &dw, t, &wp, &err);
		same &= rc == 0 && !memcmp(a, want, sizeof(a)) && deg >= -72 &&
			deg < 108;
		tfk_aug_rng_init(&r, 5, (uint64_t)i, 2);
		tfk_aug_random_rotation(&s, &db, -0.2f, 0.3f, &wp, 1, &r, &err);
		same &= !memcmp(a, b, sizeof(a));
		tfk_aug_rng_init(&r, 5, (uint64_t)i + 1, 2);
		tfk_aug_random_rotation(&s, &db, -0.2f, 0.3f, &wp, 1, &r, &err);
		differ += !!memcmp(a, b, sizeof(a));
	}
	ok(same, "random rotation: angle uniform [-72, 108) degrees, applied "
	   "as documented; same (seed, record, layer) same output");
	ok(differ >= 48, "random rotation: %d of 50 neighbouring records "
	   "differ", differ);
	tfk_aug_rng_init(&r, 5, 0, 2);
	rc = tfk_aug_random_rotation(&s, &da, -0.2f, 0.3f, &wp, 0, &r, &err);
	same = 1;
	for (i = 0; i < N; i++)
		same &= a[i] == (float)src[i];
	ok(rc == 0 && same && r.n_used == 4,
	   "random rotation, inference: the image as float, nothing drawn");

	/* RandomTranslation: height first, then width, in pixels. */
	tfk_aug_rng_init(&r, 8, 9, 1);
	r2 = r;
	rc = tfk_aug_random_translation(&s, &da, -0.5f, 0.5f, -0.25f, 0.4f,
					&wp, 1, &r, &err);
	u0 = tfk_aug_rng_uniform(&r2, -0.5f, 0.5f) * H;
	u1 = tfk_aug_rng_uniform(&r2, -0.25f, 0.4f) * W;
	tfk_aug_translation_matrix(u1, u0, t);
	tfk_aug_transform(&s, &dw, t, &wp, &err);
	ok(rc == 0 && !memcmp(a, want, sizeof(a)),
	   "random translation: dy then dx drawn, moved by (%g, %g)", u1, u0);

	/* RandomZoom: height first; width only when given. */
	tfk_aug_rng_init(&r, 8, 9, 1);
	r2 = r;
	rc = tfk_aug_random_zoom(&s, &da, -0.3f, 0.2f, 1, 0.1f, 0.5f, &wp, 1,
				 &r, &err);
	u0 = tfk_aug_rng_uniform(&r2, 0.7f, 1.2f);
	u1 = tfk_aug_rng_uniform(&r2, 1.1f, 1.5f);
	tfk_aug_zoom_matrix(H, W, u1, u0, t);
	tfk_aug_transform(&s, &dw, t, &wp, &err);
	ok(rc == 0 && !memcmp(a, want, sizeof(a)),
	   "random zoom: zy then zx drawn (%g, %g)", u0, u1);
	tfk_aug_rng_init(&r, 8, 9, 1);
	r2 = r;
	tfk_aug_random_zoom(&s, &da, -0.3f, 0.2f, 0, 0, 0, &wp, 1, &r, &err);
	u0 = tfk_aug_rng_uniform(&r2, 0.7f, 1.2f);
	tfk_aug_zoom_matrix(H, W, u0, u0, t);
	tfk_aug_transform(&s, &dw, t, &wp, &err);
	ok(!memcmp(a, want, sizeof(a)) && r.n_used == 1,
	   "random zoom without width factor: zx = zy, one draw");

	/* RandomContrast */
	tfk_aug_rng_init(&r, 3, 4, 5);
	r2 = r;
	rc = tfk_aug_random_contrast(&s, &da, 0.4f, 0.6f, 0, 255, 1, &r, &err);
	u0 = tfk_aug_rng_uniform(&r2, 0.6f, 1.6f);
	tfk_aug_contrast(&s, &dw, u0, 0, 255, &err);
	ok(rc == 0 && !memcmp(a, want, sizeof(a)),
	   "random contrast: factor %g from [0.6, 1.6)", u0);

	/* RandomCrop: every window reachable, each equal to its slice. */
	{
		enum { CH = 3, CW = 4 };
		uint8_t crop[CH * CW * C];
		struct tfk_aug_image dc = img(TFK_AUG_U8, CH, CW, C, crop);
		int seen[H - CH + 1][W - CW + 1];
		int all = 1, match = 1, y, x;

		memset(seen, 0, sizeof(seen));
		for (i = 0; i < 600; i++) {
			int found = 0;

			tfk_aug_rng_init(&r, 11, (uint64_t)i, 4);
			r2 = r;
			tfk_aug_random_crop(&s, &dc, 1, &r, &err);
			y = (int)(tfk_aug_rng_uniform(&r2, 0, H - CH + 1));
			x = (int)(tfk_aug_rng_uniform(&r2, 0, W - CW + 1));
			for (int yy = 0; yy < CH; yy++)
				found |= memcmp(crop + yy * CW * C,
						src + ((y + yy) * W + x) * C,
						CW * C);
			match &= !found;
			seen[y][x]++;
		}
		for (y = 0; y <= H - CH; y++)
			for (x = 0; x <= W - CW; x++)
				all &= seen[y][x] > 0;
		ok(match, "random crop: the window at (int(u0 (h-th+1)), "
		   "int(u1 (w-tw+1)))");
		ok(all, "random crop: all %d windows drawn in 600 records",
		   (H - CH + 1) * (W - CW + 1));
	}
	/* RandomCrop inference = CenterCrop's smart_resize, even when the
	 * image is larger (Keras' documented inference behaviour). */
	{
		float c1[3 * 3 * C], c2[3 * 3 * C];
		struct tfk_aug_image d1 = img(TFK_AUG_F32, 3, 3, C, c1);
		struct tfk_aug_image d2 = img(TFK_AUG_F32, 3, 3, C, c2);
		struct tfk_aug_image big = img(TFK_AUG_U8, H, W, C, src);
		struct tfk_aug_image smaller = img(TFK_AUG_U8, 2, 2, C, src);

		tfk_aug_rng_init(&r, 1, 1, 1);
		rc = tfk_aug_random_crop(&big, &d1, 0, &r, &err);
		/* smart_resize of 6x8 to 3x3: the centred 6x6 window */
		tfk_aug_center_crop(&smaller, &d2, &err);
		ok(rc == 0 && r.n_used == 4, "random crop, inference: nothing "
		   "drawn");
		{
			/* the 6x6 window resized 2:1 bilinear, half-pixel:
			 * output (0,0) = mean of the 2x2 block at (0,1) */
			float m = (src[(0 * W + 1) * C] + src[(0 * W + 2) * C] +
				   src[(1 * W + 1) * C] + src[(1 * W + 2) * C]) /
				  4.0f;

			ok(fabsf(c1[0] - m) < 1e-3f, "random crop, inference: "
			   "the centred square window resized (%g, want %g)",
			   c1[0], m);
		}
		tfk_aug_rng_init(&r, 1, 1, 1);
		rc = tfk_aug_random_crop(&smaller, &d1, 1, &r, &err);
		ok(rc == 0 && !memcmp(c1, c2, sizeof(c1)) && r.n_used == 4,
		   "random crop, training, smaller image: smart_resize as "
		   "CenterCrop");
	}
	free(src);
}

static void rot90_keras(void)
{
	/* factor (0.25, 0.25) is a quarter turn counter-clockwise: equal to
	 * numpy.rot90, which the numpy cases check; here the orientation by
	 * hand on a 2x2: [[a b] [c d]] -> [[b d] [a c]]. */
	const uint8_t src[4] = { 1, 2, 3, 4 };
	float out[4];
	struct tfk_aug_image s = img(TFK_AUG_U8, 2, 2, 1, (void *)src);
	struct tfk_aug_image d = img(TFK_AUG_F32, 2, 2, 1, out);
	struct tfk_aug_warp wp = TFK_AUG_WARP_DEFAULT;
	struct tfk_aug_rng r;
	struct tfk_err err;

	tfk_aug_rng_init(&r, 0, 0, 0);
	tfk_aug_random_rotation(&s, &d, 0.25f, 0.25f, &wp, 1, &r, &err);
	ok(out[0] == 2 && out[1] == 4 && out[2] == 1 && out[3] == 3,
	   "quarter turn is counter-clockwise: %g %g %g %g", out[0], out[1],
	   out[2], out[3]);
}

static void edge_cases(void)
{
	uint8_t src[5 * 7 * 3];
	float out[5 * 7 * 3];
	struct tfk_aug_image s = img(TFK_AUG_U8, 5, 7, 3, src);
	struct tfk_aug_image d = img(TFK_AUG_F32, 5, 7, 3, out);
	struct tfk_aug_warp wp = TFK_AUG_WARP_DEFAULT;
	struct tfk_err err;
	int m, fills = 1, i;

	memset(src, 9, sizeof(src));
	for (m = 0; m < 4; m++) {
		const float huge[8] = { 1e30f, 0, 0, 0, 1, 0, 0, 0 };
		const float nan8[8] = { NAN, 0, 0, 0, 1, 0, 0, 0 };
		const float inf8[8] = { 1, 0, INFINITY, 0, 1, 0, 0, 0 };
		const float proj[8] = { 1, 0, 0, 0, 1, 0, 1e-30f, 1e30f };

		wp.fill = m;
		wp.fill_value = -1;
		tfk_aug_transform(&s, &d, huge, &wp, &err);
		tfk_aug_transform(&s, &d, inf8, &wp, &err);
		tfk_aug_transform(&s, &d, proj, &wp, &err);
		tfk_aug_transform(&s, &d, nan8, &wp, &err);
		/* column 0: 0 * NaN = NaN -> fill; everything NaN here */
		for (i = 0; i < 5 * 7 * 3; i++)
			fills &= out[i] == -1;
	}
	ok(fills, "NaN points give fill_value in every mode; huge, infinite "
	   "and projective-overflow matrices run (UBSan-clean)");
	wp.fill = TFK_AUG_REFLECT;
	{
		/* reflect far away: -1e6 on a 7-wide axis */
		const float far[8] = { 1, 0, -1e6f, 0, 1, 0, 0, 0 };
		int rc = tfk_aug_transform(&s, &d, far, &wp, &err);

		ok(rc == 0 && out[0] == 9, "reflect a million pixels away");
	}
}

static void errors(void)
{
	uint8_t src[4 * 4 * 3] = { 0 }, u8[4 * 4 * 3];
	float f[4 * 4 * 3], t[8], sc = 1, off = 0;
	struct tfk_aug_image s = img(TFK_AUG_U8, 4, 4, 3, src);
	struct tfk_aug_image d = img(TFK_AUG_F32, 4, 4, 3, f);
	struct tfk_aug_image du = img(TFK_AUG_U8, 4, 4, 3, u8);
	struct tfk_aug_image bad;
	struct tfk_aug_warp wp = TFK_AUG_WARP_DEFAULT;
	struct tfk_err err;

	tfk_aug_rotation_matrix(4, 4, 0.3, t);
	bad = s;
	bad.dtype = 3;
	ok(tfk_aug_transform(&bad, &d, t, &wp, &err) == TFK_EINVAL,
	   "int32 source: %s", err.msg);
	bad = s;
	bad.h = 0;
	ok(tfk_aug_flip(&bad, &d, 1, &err) == TFK_EINVAL, "zero height: %s",
	   err.msg);
	bad = s;
	bad.data = NULL;
	ok(tfk_aug_rescale(&bad, &d, &sc, &off, 1, &err) == TFK_EINVAL,
	   "no data: %s", err.msg);
	bad = s;
	bad.h = bad.w = INT_MAX;
	ok(tfk_aug_contrast(&bad, &d, 1, 0, 255, &err) == TFK_EINVAL,
	   "absurd shape: %s", err.msg);
	bad = d;
	bad.c = 4;
	ok(tfk_aug_transform(&s, &bad, t, &wp, &err) == TFK_EINVAL,
	   "channel mismatch: %s", err.msg);
	bad = d;
	bad.w = 5;
	ok(tfk_aug_flip(&s, &bad, 1, &err) == TFK_EINVAL, "size mismatch: %s",
	   err.msg);
	ok(tfk_aug_flip(&s, &d, 4, &err) == TFK_EINVAL, "flip mode 4: %s",
	   err.msg);
	ok(tfk_aug_random_flip(&s, &d, 0, 1, NULL, NULL, &err) == TFK_EINVAL,
	   "random flip mode 0: %s", err.msg);
	wp.interp = 2;
	ok(tfk_aug_transform(&s, &d, t, &wp, &err) == TFK_EINVAL,
	   "interpolation 2: %s", err.msg);
	wp.interp = TFK_AUG_BILINEAR;
	wp.fill = 4;
	ok(tfk_aug_transform(&s, &d, t, &wp, &err) == TFK_EINVAL,
	   "fill mode 4: %s", err.msg);
	wp.fill = TFK_AUG_REFLECT;
	ok(tfk_aug_transform(&s, &d, t, NULL, &err) == TFK_EINVAL,
	   "no warp options: %s", err.msg);
	ok(tfk_aug_transform(&s, &d, NULL, &wp, &err) == TFK_EINVAL,
	   "no matrix: %s", err.msg);
	ok(tfk_aug_rescale(&s, &d, &sc, &off, 2, &err) == TFK_EINVAL,
	   "rescale with 2 values for 3 channels: %s", err.msg);
	ok(tfk_aug_contrast(&s, &d, 1, 10, 5, &err) == TFK_EINVAL,
	   "contrast range [10, 5]: %s", err.msg);
	ok(tfk_aug_random_rotation(&s, &d, 0, 1, &wp, 1, NULL, &err) ==
	   TFK_EINVAL, "random rotation without generator: %s", err.msg);
	ok(tfk_aug_random_crop(&s, &(struct tfk_aug_image){ .dtype = TFK_AUG_U8,
			       .h = 2, .w = 2, .c = 3, .data = u8 }, 1, NULL,
			       &err) == TFK_EINVAL,
	   "random crop without generator: %s", err.msg);

	tfk_alloc_fail_after(0);
	ok(tfk_aug_transform(&s, &du, t, &wp, &err) == TFK_ENOMEM,
	   "uint8 out, no memory for the row: %s", err.msg);
	{
		float fs[2 * 2 * 3] = { 0 };
		struct tfk_aug_image sf = img(TFK_AUG_F32, 2, 2, 3, fs);

		ok(tfk_aug_center_crop(&sf, &du, &err) == TFK_ENOMEM,
		   "float to uint8 smart_resize, no memory: %s", err.msg);
	}
	{
		enum { CC = 70 };
		static uint8_t ms[CC];
		static float mf[CC];
		struct tfk_aug_image a = img(TFK_AUG_U8, 1, 1, CC, ms);
		struct tfk_aug_image b = img(TFK_AUG_F32, 1, 1, CC, mf);

		ok(tfk_aug_contrast(&a, &b, 1, 0, 255, &err) == TFK_ENOMEM,
		   "contrast of %d channels, no memory: %s", CC, err.msg);
		tfk_alloc_fail_after(-1);
		ms[69] = 200;
		ok(tfk_aug_contrast(&a, &b, 1, 0, 255, &err) == 0 &&
		   mf[69] == 200, "contrast of %d channels with memory", CC);
	}
	tfk_alloc_fail_after(-1);
	ok(tfk_aug_transform(&s, &du, t, &wp, &err) == 0,
	   "uint8 out with memory");
}

int main(void)
{
	philox_vectors();
	names();
	known_values();
	fast_vs_ref();
	rescaled_sources();
	vs_numpy();
	ops_vs_numpy();
	random_layers();
	rot90_keras();
	edge_cases();
	errors();
	return tap_done();
}
