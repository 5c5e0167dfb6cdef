/*
 * t-resize.c - tf.image.resize semantics.
 *
 * Three kinds of evidence: hand-computed values (half-pixel bilinear of
 * a two-pixel row, Keras' crop box for 375x500), the fast bilinear path
 * against tfk_resize_bilinear_ref (bit-identical floats, any stride,
 * channel count and direction), and every method against numpy
 * implementations of TensorFlow's formulas in tests/py/images.py, which
 * build whole-axis weight matrices instead of TF's per-pixel loops:
 * nearest must match exactly, the others within 2e-3 on 0..255 values
 * (float32 summation order differs from numpy's float64 matrices).
 */
#include "prep/resize.h"
#include "util/alloc.h"
#include "tap.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned long rnd_state = 12345;

static unsigned rnd(void)
{
	rnd_state = rnd_state * 6364136223846793005UL + 1442695040888963407UL;
	return (unsigned)(rnd_state >> 33);
}

static void known_values(void)
{
	const float row[2] = { 0, 1 };
	const float want[4] = { 0, 0.25f, 0.75f, 1 };
	float got[4], big[5 * 7];
	uint8_t u[4], one = 200, ubig[5 * 7];
	struct tfk_crop box;
	struct tfk_err err;
	int i, same = 1;

	tfk_resize_f32(row, 1, 2, 0, 1, got, 1, 4, TFK_RESIZE_BILINEAR, 0,
		       &err);
	ok(!memcmp(got, want, sizeof(want)),
	   "bilinear [0 1] -> [0 .25 .75 1] (half-pixel centers)");
	tfk_resize_f32(row, 1, 2, 0, 1, got, 1, 4, TFK_RESIZE_NEAREST, 0,
		       &err);
	ok(got[0] == 0 && got[1] == 0 && got[2] == 1 && got[3] == 1,
	   "nearest [0 1] -> [0 0 1 1]");
	{
		const float r3[3] = { 0, 3, 6 };
		float g2[2];

		tfk_resize_f32(r3, 1, 3, 0, 1, g2, 1, 2, TFK_RESIZE_AREA, 0,
			       &err);
		ok(fabsf(g2[0] - 1.0f) < 1e-6f && fabsf(g2[1] - 5.0f) < 1e-6f,
		   "area [0 3 6] -> [1 5]: %g %g", g2[0], g2[1]);
		tfk_resize_f32(r3, 1, 3, 0, 1, g2, 1, 2, TFK_RESIZE_NEAREST, 0,
			       &err);
		ok(g2[0] == 0 && g2[1] == 6, "nearest [0 3 6] -> [0 6]"
		   " (floor((x + .5) * 1.5))");
	}
	{
		const uint8_t r2[2] = { 10, 11 };

		tfk_resize_u8(r2, 1, 2, 0, 1, u, 1, 4, TFK_RESIZE_BILINEAR,
			      0, &err);
		ok(u[0] == 10 && u[1] == 10 && u[2] == 11 && u[3] == 11,
		   "uint8 rounds 10.25 -> 10, 10.75 -> 11");
	}
	{
		const uint8_t r2[2] = { 10, 11 };
		uint8_t h;

		tfk_resize_u8(r2, 1, 2, 0, 1, &h, 1, 1, TFK_RESIZE_BILINEAR,
			      0, &err);
		ok(h == 11, "uint8 rounds 10.5 away from zero: %d", h);
	}
	tfk_resize_u8(&one, 1, 1, 0, 1, ubig, 5, 7, TFK_RESIZE_BICUBIC, 0,
		      &err);
	for (i = 0; i < 35; i++)
		same &= ubig[i] == 200;
	ok(same, "1x1 -> 5x7 bicubic is constant");
	tfk_resize_f32(big, 1, 1, 0, 1, got, 1, 1, TFK_RESIZE_BILINEAR, 1,
		       &err);
	tfk_resize_crop_aspect(375, 500, 224, 224, &box);
	ok(box.y == 0 && box.x == 62 && box.h == 375 && box.w == 375,
	   "keras crop 375x500 -> 224x224: 375x375 at x=62");
	tfk_resize_crop_aspect(500, 375, 224, 224, &box);
	ok(box.y == 62 && box.x == 0 && box.h == 375 && box.w == 375,
	   "keras crop 500x375 -> 224x224: 375x375 at y=62");
	tfk_resize_crop_aspect(480, 640, 90, 160, &box);
	ok(box.y == 60 && box.x == 0 && box.h == 360 && box.w == 640,
	   "keras crop 480x640 -> 90x160: 640x360 at y=60");
	tfk_resize_crop_aspect(10, 10, 1, 1000, &box);
	ok(box.h == 1 && box.w == 10, "crop height never below 1");
	/* tf.image.resize_with_pad, worked by hand in float32 */
	ok(tfk_resize_pad_aspect(477, 720, 64, 64, &box) == 0 &&
	   box.y == 10 && box.x == 0 && box.h == 42 && box.w == 64,
	   "pad 477x720 -> 64x64: ratio 11.25, 42x64 at y=floor(10.8)");
	ok(tfk_resize_pad_aspect(25, 30, 40, 10, &box) == 0 &&
	   box.y == 15 && box.x == 0 && box.h == 8 && box.w == 10,
	   "pad 25x30 -> 40x10: ratio 3, 8x10 at y=floor(15.83)");
	ok(tfk_resize_pad_aspect(30, 20, 30, 20, &box) == 0 &&
	   box.y == 0 && box.x == 0 && box.h == 30 && box.w == 20,
	   "pad to the same aspect: the whole output");
	ok(tfk_resize_pad_aspect(1, 1000, 17, 13, &box) == -1,
	   "pad that keeps no row: refused");
}

/* tfk_resize_u8_to: the same pixels as tfk_resize_u8, in a window of a
 * larger image whose other bytes stay as they were. */
static void strided_out(void)
{
	static uint8_t src[23 * 31 * 3], want[9 * 11 * 3], big[20 * 30 * 3];
	struct tfk_err err;
	int i, y, x, m, bad = 0, kept = 1;

	for (i = 0; i < (int)sizeof(src); i++)
		src[i] = (uint8_t)rnd();
	for (m = 0; m < 4; m++) {
		tfk_resize_u8(src, 23, 31, 0, 3, want, 9, 11, m, m < 3, &err);
		memset(big, 7, sizeof(big));
		tfk_resize_u8_to(src, 23, 31, 0, 3, big + (4 * 30 + 5) * 3, 9,
				 11, 30 * 3, m, m < 3, &err);
		for (y = 0; y < 20; y++)
			for (x = 0; x < 30; x++) {
				const uint8_t *p = big + (y * 30 + x) * 3;
				int in = y >= 4 && y < 13 && x >= 5 && x < 16;

				if (in)
					bad |= memcmp(p, want + ((y - 4) * 11 +
							(x - 5)) * 3, 3);
				else
					kept &= p[0] == 7 && p[1] == 7 &&
						p[2] == 7;
			}
	}
	ok(!bad, "strided output: every method's pixels as contiguous");
	ok(kept, "  the bytes around the window untouched");
	is_int(tfk_resize_u8_to(src, 23, 31, 0, 3, big, 9, 11, 11 * 3 - 1,
				0, 0, &err), TFK_EINVAL,
	       "an output stride under a row is refused");
}

struct sz {
	int sh, sw, dh, dw;
};

static const struct sz sizes[] = {
	{ 1, 1, 5, 7 }, { 7, 5, 1, 1 }, { 100, 80, 37, 53 },
	{ 30, 40, 90, 120 }, { 23, 37, 23, 37 }, { 480, 640, 180, 180 },
	{ 2, 3, 3, 2 }, { 61, 83, 17, 200 },
};

static void fast_vs_ref(void)
{
	struct tfk_err err;
	size_t s;
	int c;

	for (s = 0; s < sizeof(sizes) / sizeof(*sizes); s++) {
		for (c = 1; c <= 4; c++) {
			const struct sz *z = &sizes[s];
			size_t ni = (size_t)z->sh * z->sw * c;
			size_t no = (size_t)z->dh * z->dw * c, i;
			/* pad each source row so the stride path is used */
			size_t stride = (size_t)z->sw * c + 5;
			float *src = malloc(ni * sizeof(float));
			float *srcs = malloc(z->sh * stride * sizeof(float));
			uint8_t *u8 = malloc(z->sh * stride);
			float *ref = malloc(no * sizeof(float));
			float *fast = malloc(no * sizeof(float));
			float *mixed = malloc(no * sizeof(float));
			uint8_t *uout = malloc(no);
			int y, bad_u8 = 0;

			for (y = 0; y < z->sh; y++)
				for (i = 0; i < (size_t)z->sw * c; i++) {
					uint8_t v = rnd() & 255;

					src[y * (size_t)z->sw * c + i] = v;
					srcs[y * stride + i] = v;
					u8[y * stride + i] = v;
				}
			tfk_resize_bilinear_ref(src, z->sh, z->sw, c, ref,
						z->dh, z->dw);
			tfk_resize_f32(srcs, z->sh, z->sw, stride, c, fast,
				       z->dh, z->dw, TFK_RESIZE_BILINEAR, 0,
				       &err);
			tfk_resize_u8_f32(u8, z->sh, z->sw, stride, c, mixed,
					  z->dh, z->dw, TFK_RESIZE_BILINEAR, 0,
					  &err);
			tfk_resize_u8(u8, z->sh, z->sw, stride, c, uout,
				      z->dh, z->dw, TFK_RESIZE_BILINEAR, 0,
				      &err);
			for (i = 0; i < no; i++) {
				double r = floor((double)ref[i] + 0.5);

				bad_u8 += uout[i] != (uint8_t)r;
			}
			ok(!memcmp(ref, fast, no * sizeof(float)) &&
			   !memcmp(ref, mixed, no * sizeof(float)) &&
			   bad_u8 == 0,
			   "bilinear %dx%dx%d -> %dx%d: fast f32, u8->f32 and"
			   " u8 equal the reference bit for bit", z->sh,
			   z->sw, c, z->dh, z->dw);
			free(src);
			free(srcs);
			free(u8);
			free(ref);
			free(fast);
			free(mixed);
			free(uout);
		}
	}
}

static float *read_floats(const char *path, size_t n)
{
	FILE *f = fopen(path, "rb");
	float *p = malloc(n * sizeof(float));

	if (!f || fread(p, sizeof(float), n, f) != n) {
		if (f)
			fclose(f);
		free(p);
		return NULL;
	}
	fclose(f);
	return p;
}

struct vcase {
	int method, aa, f32in;
	struct sz z;
	int c;
};

static void vs_numpy(void)
{
	static const struct sz vs[] = {
		{ 50, 70, 17, 23 }, { 13, 9, 40, 31 }, { 20, 60, 50, 15 },
		{ 64, 48, 64, 48 }, { 97, 101, 10, 9 },
	};
	struct vcase cases[64];
	const char *dir = tap_tmpdir(), *py = getenv("PYTHON");
	char path[PATH_MAX], cmd[PATH_MAX * 3 + 64];
	size_t nc = 0, i, s;
	FILE *list;
	int m;

	snprintf(path, sizeof(path), "%s/cases.txt", dir);
	list = fopen(path, "w");
	for (s = 0; s < sizeof(vs) / sizeof(*vs); s++)
		for (m = 0; m < 6; m++) {
			struct vcase *v = &cases[nc];
			static const int meth[6] = {
				TFK_RESIZE_BILINEAR, TFK_RESIZE_NEAREST,
				TFK_RESIZE_BICUBIC, TFK_RESIZE_AREA,
				TFK_RESIZE_BILINEAR, TFK_RESIZE_BICUBIC };
			size_t n, k;
			char in[PATH_MAX];

			v->method = meth[m];
			v->aa = m >= 4;
			v->z = vs[s];
			v->c = s == 1 ? 1 : 3;
			v->f32in = s == 2;
			n = (size_t)v->z.sh * v->z.sw * v->c;
			snprintf(in, sizeof(in), "%s/in%zu.raw", dir, nc);
			if (v->f32in) {
				float *f = malloc(n * sizeof(float));

				for (k = 0; k < n; k++)
					f[k] = (float)(rnd() % 25600) / 100.0f;
				tap_write_file(in, f, n * sizeof(float));
				free(f);
			} else {
				uint8_t *u = malloc(n);

				for (k = 0; k < n; k++)
					u[k] = rnd() & 255;
				tap_write_file(in, u, n);
				free(u);
			}
			fprintf(list, "%s %s %d %d %d %d %d %s %d %s/out%zu.raw\n",
				in, v->f32in ? "f32" : "u8", v->z.sh, v->z.sw,
				v->c, v->z.dh, v->z.dw,
				tfk_resize_method_name(v->method), v->aa, dir,
				nc);
			nc++;
		}
	fclose(list);
	snprintf(cmd, sizeof(cmd), "%s %s resize %s",
		 py ? py : "/usr/bin/python3", tap_source("tests/py/images.py"), path);
	ok(system(cmd) == 0, "numpy oracle ran %zu cases", nc);
	for (i = 0; i < nc; i++) {
		struct vcase *v = &cases[i];
		size_t ni = (size_t)v->z.sh * v->z.sw * v->c;
		size_t no = (size_t)v->z.dh * v->z.dw * v->c, k;
		float *want, *got = malloc(no * sizeof(float));
		uint8_t *u8 = malloc(no);
		void *src = malloc(ni * sizeof(float));
		struct tfk_err err;
		double d = 0, tol = v->method == TFK_RESIZE_NEAREST ? 0 : 2e-3;
		int du = 0, rc;
		FILE *f;

		snprintf(path, sizeof(path), "%s/in%zu.raw", dir, i);
		f = fopen(path, "rb");
		if (!f || fread(src, v->f32in ? 4 : 1, ni, f) != ni)
			tap_diag("cannot read %s", path);
		if (f)
			fclose(f);
		snprintf(path, sizeof(path), "%s/out%zu.raw", dir, i);
		want = read_floats(path, no);
		if (v->f32in)
			rc = tfk_resize_f32(src, v->z.sh, v->z.sw, 0, v->c,
					    got, v->z.dh, v->z.dw, v->method,
					    v->aa, &err);
		else
			rc = tfk_resize_u8_f32(src, v->z.sh, v->z.sw, 0, v->c,
					       got, v->z.dh, v->z.dw,
					       v->method, v->aa, &err);
		if (!v->f32in)
			rc |= tfk_resize_u8(src, v->z.sh, v->z.sw, 0, v->c,
					    u8, v->z.dh, v->z.dw, v->method,
					    v->aa, &err);
		for (k = 0; want && k < no; k++) {
			double e = fabs((double)got[k] - want[k]);
			double w = want[k] < 0 ? 0 : want[k] > 255 ? 255
								   : want[k];

			d = e > d ? e : d;
			if (!v->f32in) {
				int eu = abs((int)u8[k] - (int)floor(w + 0.5));

				du = eu > du ? eu : du;
			}
		}
		ok(rc == 0 && want && d <= tol && du <= 1,
		   "%s%s %s %dx%dx%d -> %dx%d vs numpy: max diff %.2g"
		   " (tolerance %.0g), uint8 max diff %d",
		   tfk_resize_method_name(v->method), v->aa ? " antialias" : "",
		   v->f32in ? "f32" : "u8", v->z.sh, v->z.sw, v->c, v->z.dh,
		   v->z.dw, d, tol, du);
		free(want);
		free(got);
		free(u8);
		free(src);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
}

static void errors(void)
{
	uint8_t src[12] = { 0 }, dst[64];
	struct tfk_err err;
	int m, bad = 0;

	ok(tfk_resize_u8(src, 2, 2, 0, 3, dst, 0, 4, 0, 0, &err) == TFK_EINVAL,
	   "zero output height: %s", err.msg);
	ok(tfk_resize_u8(src, -1, 2, 0, 3, dst, 2, 4, 0, 0, &err) ==
	   TFK_EINVAL, "negative input height");
	ok(tfk_resize_u8(src, 2, 2, 0, 0, dst, 2, 4, 0, 0, &err) == TFK_EINVAL,
	   "zero channels");
	ok(tfk_resize_u8(src, 2, 2, 0, 3, dst, 2, 4, 9, 0, &err) == TFK_EINVAL,
	   "unknown method: %s", err.msg);
	ok(tfk_resize_u8(src, 2, 2, 5, 3, dst, 2, 4, 0, 0, &err) == TFK_EINVAL,
	   "stride shorter than a row: %s", err.msg);
	for (m = 0; m < 4; m++) {
		tfk_alloc_fail_after(0);
		bad += tfk_resize_u8(src, 2, 2, 0, 3, dst, 3, 3, m, m & 1,
				     &err) != TFK_ENOMEM;
		tfk_alloc_fail_after(-1);
	}
	ok(bad == 0, "failed scratch allocation gives ENOMEM");
	is_int(tfk_resize_method_parse("bicubic"), TFK_RESIZE_BICUBIC,
	       "parse bicubic");
	is_int(tfk_resize_method_parse("lanczos3"), -1, "lanczos3 unknown");
	is_str(tfk_resize_method_name(TFK_RESIZE_AREA), "area", "name area");
}

int main(void)
{
	known_values();
	fast_vs_ref();
	strided_out();
	vs_numpy();
	errors();
	return tap_done();
}
