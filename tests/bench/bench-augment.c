/*
 * bench-augment.c - RandomRotation's per-image cost: tfk_aug_transform
 * with Keras' rotation matrix on uint8 HWC images, one thread.
 *
 *   bench-augment [--u8] [--fill MODE] [--repeat R] IMAGES N H W ANGLES
 *
 * IMAGES holds N uint8 images of H x W x 3, concatenated; ANGLES one
 * angle in degrees per image (counter-clockwise, as Keras and Pillow).
 * Every image is rotated by its angle (bilinear, fill MODE, default
 * reflect as Keras' default); the output is float32 as Keras returns,
 * or uint8 with --u8. Prints the best of R passes (default 5) as
 * "IMAGES_PER_SECOND" on stdout. Only the rotations are timed.
 */
#include "prep/augment.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct tfk_aug_warp wp = TFK_AUG_WARP_DEFAULT;
	int u8 = 0, repeat = 5, n, h, w, i, r;
	double best = 0;
	uint8_t *imgs;
	float *angles;
	void *out;
	size_t sz;
	FILE *f;

	while (argc > 1 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "--u8")) {
			u8 = 1;
		} else if (!strcmp(argv[1], "--repeat") && argc > 2) {
			repeat = atoi(argv[2]);
			argc--, argv++;
		} else if (!strcmp(argv[1], "--fill") && argc > 2) {
			wp.fill = tfk_aug_fill_parse(argv[2]);
			argc--, argv++;
		} else {
			break;
		}
		argc--, argv++;
	}
	if (argc != 6 || wp.fill < 0 || repeat < 1) {
		fprintf(stderr, "usage: bench-augment [--u8] [--fill MODE] "
			"[--repeat R] IMAGES N H W ANGLES\n");
		return 2;
	}
	n = atoi(argv[2]);
	h = atoi(argv[3]);
	w = atoi(argv[4]);
	if (n < 1 || h < 1 || w < 1)
		return 2;
	sz = (size_t)h * w * 3;
	imgs = malloc(sz * n);
	angles = malloc(sizeof(float) * n);
	out = malloc(sz * sizeof(float));
	f = fopen(argv[1], "rb");
	if (!imgs || !angles || !out || !f ||
	    fread(imgs, sz, n, f) != (size_t)n) {
		fprintf(stderr, "bench-augment: cannot read %s\n", argv[1]);
		return 1;
	}
	fclose(f);
	f = fopen(argv[5], "r");
	for (i = 0; f && i < n; i++)
		if (fscanf(f, "%f", &angles[i]) != 1)
			break;
	if (!f || i < n) {
		fprintf(stderr, "bench-augment: cannot read %d angles\n", n);
		return 1;
	}
	fclose(f);
	for (r = 0; r < repeat; r++) {
		double t0 = now(), dt;

		for (i = 0; i < n; i++) {
			struct tfk_aug_image s = { .dtype = TFK_AUG_U8,
				.h = h, .w = w, .c = 3, .data = imgs + sz * i };
			struct tfk_aug_image d = { .dtype = u8 ? TFK_AUG_U8 :
				TFK_AUG_F32, .h = h, .w = w, .c = 3,
				.data = out };
			struct tfk_err err;
			float t[8];

			tfk_aug_rotation_matrix(h, w, angles[i] * (M_PI / 180),
						t);
			if (tfk_aug_transform(&s, &d, t, &wp, &err)) {
				fprintf(stderr, "bench-augment: %s\n", err.msg);
				return 1;
			}
		}
		dt = now() - t0;
		if (r == 0 || dt < best)
			best = dt;
	}
	printf("%.1f\n", n / best);
	free(imgs);
	free(angles);
	free(out);
	return 0;
}
