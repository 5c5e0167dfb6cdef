/*
 * t-image.c - image decoding against independent decoders.
 *
 * tests/py/images.py writes every supported variant (PNG of each colour
 * type, depth, tRNS and interlace; JPEG 4:4:4, 4:2:0, progressive, gray,
 * CMYK; BMP 1/4/8/24/32-bit, top-down, bitfields, core header; GIF
 * interlaced, animated, small frame, TF's transparency vector) together
 * with the pixels Pillow, djpeg or the generating numpy array says they
 * hold. Every manifest line is one test: same size, and no byte further
 * than the stated tolerance (0 except where two decoders legitimately
 * differ, e.g. Pillow's own CMYK->RGB). Then the corrupt files: empty,
 * non-image, truncations of every file, CRC damage, entropy damage,
 * absurd declared sizes (refused before allocating), unsupported BMP
 * variants, failed allocations, and decode_resize fast vs exact.
 */
#include "prep/image.h"
#include "prep/resize.h"
#include "util/alloc.h"
#include "tap.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static const char *dir;

static uint8_t *slurp(const char *name, size_t *n)
{
	char path[PATH_MAX];
	FILE *f;
	uint8_t *p;
	long len;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)len + 1);
	*n = fread(p, 1, (size_t)len, f);
	fclose(f);
	return p;
}

static int decode(struct tfk_img *img, const void *p, size_t n, int channels,
		  int dct, int scale, struct tfk_err *err)
{
	struct tfk_img_opts o = TFK_IMG_OPTS_DEFAULT;

	o.channels = channels;
	o.dct_method = dct;
	o.scale_denom = scale;
	return tfk_img_decode(img, p, n, &o, err);
}

static void manifest(void)
{
	char path[PATH_MAX], name[128], raw[128];
	int channels, dct, scale, tol, h, w, c;
	struct tfk_img img;
	struct tfk_err err;
	FILE *f;
	int lines = 0;

	tfk_img_init(&img);
	snprintf(path, sizeof(path), "%s/manifest.txt", dir);
	f = fopen(path, "r");
	ok(f != NULL, "manifest written");
	if (!f)
		return;
	while (fscanf(f, "%127s %d %d %d %d %d %d %d %127s", name, &channels,
		      &dct, &scale, &tol, &h, &w, &c, raw) == 9) {
		size_t n, nraw, i;
		uint8_t *p = slurp(name, &n), *want = slurp(raw, &nraw);
		int rc = decode(&img, p, n, channels, dct, scale, &err), d = 0;

		lines++;
		if (rc == 0 && img.height == h && img.width == w &&
		    img.channels == c && nraw == (size_t)h * w * c)
			for (i = 0; i < nraw; i++) {
				int e = abs((int)img.data[i] - want[i]);

				d = e > d ? e : d;
			}
		ok(rc == 0 && img.height == h && img.width == w &&
		   img.channels == c && d <= tol,
		   "%s channels=%d dct=%s scale=1/%d: %dx%dx%d, max diff %d"
		   " (tolerance %d)", name, channels, dct == 1 ? "islow" : "ifast",
		   scale, h, w, c, d, tol);
		if (rc)
			tap_diag("decode: %s", err.msg);
		else if (img.height != h || img.width != w || img.channels != c)
			tap_diag("got %dx%dx%d", img.height, img.width,
				 img.channels);
		free(p);
		free(want);
	}
	fclose(f);
	ok(lines >= 80, "manifest has %d cases", lines);
	tfk_img_release(&img);
}

/* Header-only probe agrees with a full decode for every file. */
static void probes(void)
{
	static const char *files[] = {
		"rgb.png", "rgba.png", "gray.png", "la.png", "bw.png",
		"pal.png", "paltrns.png", "gray16.png", "rgb16.png",
		"pal4trns.png", "graytrns.png", "interlaced.png", "q444.jpg",
		"q420.jpg", "prog.jpg", "gray.jpg", "cmyk.jpg", "rgb24.bmp",
		"pal8.bmp", "gray8.bmp", "bgra32.bmp", "bf32.bmp", "core.bmp",
		"pal.gif", "anim.gif", "canvas.gif",
	};
	struct tfk_img img;
	struct tfk_err err;
	size_t i, n;
	int bad = 0;

	tfk_img_init(&img);
	for (i = 0; i < sizeof(files) / sizeof(*files); i++) {
		struct tfk_img_info info;
		uint8_t *p = slurp(files[i], &n);

		if (tfk_img_probe(p, n, &info, &err) ||
		    decode(&img, p, n, 0, 0, 1, &err) ||
		    info.width != img.width || info.height != img.height ||
		    info.channels != img.channels ||
		    info.format != img.format) {
			tap_diag("probe %s: %dx%dx%d vs decode %dx%dx%d", files[i],
				 info.width, info.height, info.channels,
				 img.width, img.height, img.channels);
			bad++;
		}
		free(p);
	}
	ok(bad == 0, "probe matches decode for %zu files", i);
	tfk_img_release(&img);
}

static int try_decode(const void *p, size_t n, struct tfk_err *err)
{
	struct tfk_img img;
	int rc;

	tfk_img_init(&img);
	rc = decode(&img, p, n, 3, 0, 1, err);
	tfk_img_release(&img);
	return rc;
}

static void expect_fail(const void *p, size_t n, int code, const char *part,
			const char *what)
{
	struct tfk_err err;
	int rc = try_decode(p, n, &err);

	ok(rc == code && strstr(err.msg, part) != NULL,
	   "%s: %s (%s)", what, part, tfk_err_name(code));
	if (rc != code || !strstr(err.msg, part))
		tap_diag("rc %d: %s", rc, err.msg);
}

static void truncations(void)
{
	static const char *files[] = {
		"rgb.png", "pal.png", "interlaced.png", "rgb16.png", "q444.jpg",
		"q420.jpg", "prog.jpg", "gray.jpg", "cmyk.jpg", "rgb24.bmp",
		"pal8.bmp", "bgra32.bmp", "core.bmp", "pal.gif", "plain.gif",
	};
	size_t i, n, cut[5];
	int k;

	for (i = 0; i < sizeof(files) / sizeof(*files); i++) {
		uint8_t *p = slurp(files[i], &n);
		int bad = 0;
		struct tfk_err err;

		cut[0] = 0;
		cut[1] = 1;
		cut[2] = 9;
		cut[3] = n / 2;
		cut[4] = n * 3 / 4;
		for (k = 0; k < 5; k++) {
			int rc = try_decode(p, cut[k], &err);

			if (rc != TFK_ECORRUPT) {
				tap_diag("%s cut at %zu: rc %d %s", files[i],
					 cut[k], rc, err.msg);
				bad++;
			}
		}
		ok(bad == 0, "%s truncated at 0, 1, 9, n/2, 3n/4 bytes: corrupt",
		   files[i]);
		free(p);
	}
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void corrupt(void)
{
	uint8_t *p, *q;
	size_t n, i;
	struct tfk_img img;
	struct tfk_err err;
	struct tfk_img_opts o = TFK_IMG_OPTS_DEFAULT;
	int rc;

	expect_fail("", 0, TFK_ECORRUPT, "empty file", "empty input");
	expect_fail("hello, world\n", 13, TFK_ECORRUPT, "not an image",
		    "text");
	expect_fail("\xff\xd8\xff\xe0", 4, TFK_ECORRUPT, "jpeg:",
		    "jpeg magic only");
	expect_fail("GIF89a", 6, TFK_ECORRUPT, "gif:", "gif magic only");
	expect_fail("BM", 2, TFK_ECORRUPT, "bmp: truncated header",
		    "bmp magic only");

	/* PNG: one flipped byte inside IDAT -> crc error. */
	p = slurp("rgb.png", &n);
	q = memmem(p, n, "IDAT", 4);
	q[10] ^= 0x55;
	expect_fail(p, n, TFK_ECORRUPT, "png: idat: ", "png with damaged idat");
	q[10] ^= 0x55;
	q[4 + ((size_t)q[-2] << 8 | q[-1])] ^= 1;
	expect_fail(p, n, TFK_ECORRUPT, "png: idat: crc error",
		    "png with a wrong idat crc");
	free(p);
	/* PNG: absurd IHDR size with a valid crc -> refused by size. */
	p = slurp("rgb.png", &n);
	put_be32(p + 16, 100000);
	put_be32(p + 20, 100000);
	put_be32(p + 29, (uint32_t)crc32(0, p + 12, 17));
	expect_fail(p, n, TFK_EINVAL, "over the limit", "png 100000x100000");
	free(p);

	/* JPEG: a marker in the middle of the entropy-coded data. */
	p = slurp("q444.jpg", &n);
	p[n - 200] = 0xff;
	p[n - 199] = 0xd9;
	expect_fail(p, n, TFK_ECORRUPT, "jpeg: corrupt jpeg data",
		    "jpeg with an eoi inside the scan");
	free(p);
	/* JPEG: a progressive file must be complete, EOI included, since a
	 * cut at a scan boundary would otherwise pass as a blurry image. */
	p = slurp("prog.jpg", &n);
	expect_fail(p, n - 2, TFK_ECORRUPT, "premature end of jpeg file",
		    "progressive jpeg without eoi");
	for (q = p + n - 2; q > p && memcmp(q, "\xff\xda", 2); q--)
		;
	expect_fail(p, (size_t)(q - p), TFK_ECORRUPT,
		    "premature end of jpeg file",
		    "progressive jpeg cut before its last scan");
	free(p);
	/* JPEG: SOF0 declaring 60000x60000 -> refused before allocating. */
	p = slurp("q444.jpg", &n);
	q = memmem(p, n, "\xff\xc0", 2);
	q[5] = q[7] = 0xea;
	q[6] = q[8] = 0x60;
	expect_fail(p, n, TFK_EINVAL, "60000x60000 image is over the limit",
		    "jpeg 60000x60000");
	free(p);

	/* BMP: absurd size, RLE, 16-bit, bad bit depth, bad palette index. */
	p = slurp("rgb24.bmp", &n);
	p[18] = p[22] = 0x40;
	p[19] = p[23] = 0x42;
	p[20] = p[24] = 0x0f;	/* 1000000 x 1000000 */
	expect_fail(p, n, TFK_EINVAL, "over the limit", "bmp 1000000x1000000");
	free(p);
	p = slurp("pal8.bmp", &n);
	p[30] = 1;
	expect_fail(p, n, TFK_EINVAL, "rle compression is not supported",
		    "bmp rle8");
	p[30] = 0;
	p[28] = 16;
	expect_fail(p, n, TFK_EINVAL, "16-bit pixels are not supported",
		    "bmp 16-bit");
	p[28] = 7;
	expect_fail(p, n, TFK_ECORRUPT, "bad bit depth 7", "bmp 7-bit");
	p[28] = 8;
	p[46] = 2;		/* two colours used: indices above 1 are bad */
	expect_fail(p, n, TFK_ECORRUPT, "out of range", "bmp palette index");
	free(p);
	p = slurp("v4.bmp", &n);
	p[54] = 0xff;		/* red mask 0x00ff00ff */
	expect_fail(p, n, TFK_EINVAL, "only BGRA channel masks",
		    "bmp odd bitfields");
	free(p);

	/* GIF: absurd screen; TF's vector with an out-of-palette index. */
	p = slurp("pal.gif", &n);
	p[6] = p[7] = p[8] = p[9] = 0xff;
	expect_fail(p, n, TFK_EINVAL, "65535x65535", "gif 65535x65535");
	free(p);
	p = slurp("tftrans.gif", &n);
	p[40] = 0x56;
	expect_fail(p, n, TFK_ECORRUPT,
		    "found color index 3 outside of color map range 2",
		    "gif index outside the color map");
	free(p);

	/* Options. */
	p = slurp("rgb.png", &n);
	tfk_img_init(&img);
	o.max_pixels = 100;
	rc = tfk_img_decode(&img, p, n, &o, &err);
	ok(rc == TFK_EINVAL && strstr(err.msg, "limit of 100 pixels"),
	   "max_pixels refuses a 37x23 png at 100: %s", err.msg);
	o.max_pixels = 0;
	o.channels = 2;
	rc = tfk_img_decode(&img, p, n, &o, &err);
	ok(rc == TFK_EINVAL, "channels 2 is refused: %s", err.msg);
	rc = tfk_img_decode(&img, p, n, NULL, &err);
	ok(rc == 0 && img.channels == 3 && img.format == TFK_IMG_PNG,
	   "NULL options decode as stored");
	free(p);

	/* Failed allocations: every one reports ENOMEM and leaks nothing. */
	{
		static const char *files[] = { "rgb.png", "cmyk.jpg",
					       "pal.gif", "pal8.bmp" };
		int bad = 0;

		for (i = 0; i < 4; i++) {
			int k;

			p = slurp(files[i], &n);
			for (k = 0; k < 4; k++) {
				tfk_img_release(&img);
				tfk_alloc_fail_after(k);
				rc = decode(&img, p, n, 3, 0, 1, &err);
				tfk_alloc_fail_after(-1);
				if (rc != 0 && rc != TFK_ENOMEM)
					bad++;
			}
			tfk_alloc_fail_after(0);
			tfk_img_release(&img);
			rc = decode(&img, p, n, 3, 0, 1, &err);
			tfk_alloc_fail_after(-1);
			if (rc != TFK_ENOMEM)
				bad++;
			free(p);
		}
		ok(bad == 0, "allocation failures give ENOMEM");
	}
	tfk_img_release(&img);
}

static void formats(void)
{
	ok(tfk_img_sniff("\xff\xd8\xff", 3) == TFK_IMG_JPEG, "sniff jpeg");
	ok(tfk_img_sniff("\x89PNG\r\n\x1a\n", 8) == TFK_IMG_PNG, "sniff png");
	ok(tfk_img_sniff("GIF87a", 6) == TFK_IMG_GIF, "sniff gif87a");
	ok(tfk_img_sniff("BM", 2) == TFK_IMG_BMP, "sniff bmp");
	ok(tfk_img_sniff("\x89PNG", 4) == TFK_IMG_UNKNOWN, "short png magic");
	is_str(tfk_img_format_name(TFK_IMG_PNG), "png", "format name");
	is_int(tfk_img_pick_scale(1024, 768, 180, 180, 0), 4,
	       "1024x768 -> 180x180 decodes at 1/4");
	is_int(tfk_img_pick_scale(320, 240, 180, 180, 0), 1,
	       "320x240 -> 180x180 decodes at 1/1");
	is_int(tfk_img_pick_scale(640, 480, 180, 180, 1), 2,
	       "640x480 cropped -> 180x180 decodes at 1/2");
	is_int(tfk_img_pick_scale(1024, 768, 180, 180, 1), 4,
	       "1024x768 cropped -> 180x180 decodes at 1/4");
	is_int(tfk_img_pick_scale(4000, 3000, 28, 28, 0), 8, "at most 1/8");
}

/* decode_resize: exact path = decode + crop + resize; fast path close. */
static void decode_resize(void)
{
	struct tfk_img img, full;
	struct tfk_err err;
	struct tfk_img_opts io = TFK_IMG_OPTS_DEFAULT;
	struct tfk_img_resize ro = { 180, 180, TFK_RESIZE_BILINEAR, 0, 1, 0, 0 };
	struct tfk_crop box;
	uint8_t *p, *a = malloc(180 * 180 * 3), *b = malloc(180 * 180 * 3);
	size_t n, i;
	double sum = 0;
	int rc, mx = 0;

	tfk_img_init(&img);
	tfk_img_init(&full);
	p = slurp("big.jpg", &n);
	io.channels = 3;
	rc = tfk_img_decode_resize(&img, p, n, &io, &ro, a, &err);
	ok(rc == 0, "decode_resize exact: %s", rc ? err.msg : "ok");
	decode(&full, p, n, 3, 0, 1, &err);
	tfk_resize_crop_aspect(full.height, full.width, 180, 180, &box);
	ok(box.w == 480 && box.h == 480 && box.x == 80 && box.y == 0,
	   "640x480 crop box for 180x180 is 480x480 at x=80");
	tfk_resize_u8(full.data + (size_t)box.x * 3, box.h, box.w,
		      (size_t)full.width * 3, 3, b, 180, 180,
		      TFK_RESIZE_BILINEAR, 0, &err);
	ok(!memcmp(a, b, 180 * 180 * 3), "exact path = decode, crop, resize");
	ro.fast = 1;
	rc = tfk_img_decode_resize(&img, p, n, &io, &ro, a, &err);
	ok(rc == 0 && img.width == 320 && img.height == 240,
	   "fast path decoded at 1/2: %dx%d", img.width, img.height);
	for (i = 0; i < 180 * 180 * 3; i++) {
		int d = abs((int)a[i] - b[i]);

		sum += d;
		mx = d > mx ? d : mx;
	}
	/* DCT scaling averages like an area filter where bilinear at 2.7x
	 * samples two pixels: measured mean 1.27, max 7 on this image. */
	ok(sum / (180 * 180 * 3) < 2.0 && mx < 16,
	   "fast vs exact: mean abs diff %.2f < 2, max %d < 16",
	   sum / (180 * 180 * 3), mx);
	io.channels = 0;
	rc = tfk_img_decode_resize(&img, p, n, &io, &ro, a, &err);
	ok(rc == TFK_EINVAL, "decode_resize needs explicit channels");
	free(p);
	p = slurp("gray.png", &n);
	io.channels = 1;
	ro.out_w = 37;
	ro.out_h = 23;
	ro.crop = 0;
	rc = tfk_img_decode_resize(&img, p, n, &io, &ro, a, &err);
	ok(rc == 0 && !memcmp(a, img.data, 37 * 23),
	   "same size is a copy");
	free(p);
	free(a);
	free(b);
	tfk_img_release(&img);
	tfk_img_release(&full);
}

int main(void)
{
	char cmd[PATH_MAX * 2];
	const char *py = getenv("PYTHON");

	dir = tap_tmpdir();
	snprintf(cmd, sizeof(cmd), "%s %s gen %s", py ? py : "/usr/bin/python3",
		 tap_source("tests/py/images.py"), dir);
	ok(system(cmd) == 0, "images.py gen");
	formats();
	manifest();
	probes();
	truncations();
	corrupt();
	decode_resize();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		tap_diag("could not remove %s", dir);
	return tap_done();
}
