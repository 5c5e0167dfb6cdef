/*
 * fuzz-image.c - the image decoders (JPEG, PNG, GIF, BMP, sniffed from
 * the bytes) and decode + crop + resize on arbitrary input.
 *
 * FUZZ-SEEDS: tests/fuzz/seeds/fuzz-image/*
 *
 * Each input is decoded with channels 0, 1, 3 and 4 (and JPEGs at 1/2
 * DCT scale) under a small pixel limit, so libFuzzer explores formats
 * rather than allocation sizes. Beyond "no crash, no leak":
 *  - a successful decode gives 1..4 channels and the buffer it claims;
 *  - a header probe that succeeds agrees with a full decode on the size;
 *  - the first byte selects the resize method, antialias and crop for a
 *    decode_resize to a small target, which must succeed whenever the
 *    plain decode did.
 * The tfk_img buffer is reused across calls, as tools reuse it.
 */
#include "prep/image.h"
#include "prep/resize.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT (1u << 18)	/* pixels */

static struct tfk_img img;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static const int chans[4] = { 0, 1, 3, 4 };
	struct tfk_img_opts o = TFK_IMG_OPTS_DEFAULT;
	struct tfk_img_info info;
	struct tfk_err err;
	int k, ok3 = 0, probed, w = 0, h = 0;
	volatile unsigned sum = 0;
	size_t i;
	uint8_t out[17 * 13 * 4];

	o.max_pixels = LIMIT;
	probed = tfk_img_probe(data, n, &info, &err) == 0;
	for (k = 0; k < 4; k++) {
		o.channels = chans[k];
		if (tfk_img_decode(&img, data, n, &o, &err))
			continue;
		if (img.channels < 1 || img.channels > 4 ||
		    (chans[k] && img.channels != chans[k]) ||
		    (size_t)img.width * img.height * img.channels > img.cap)
			abort();
		/* read every byte: a short buffer is an ASan report */
		for (i = 0; i < (size_t)img.width * img.height * img.channels;
		     i++)
			sum += img.data[i];
		if (probed && (info.width != img.width ||
			       info.height != img.height))
			abort();
		if (chans[k] == 3) {
			ok3 = 1;
			w = img.width;
			h = img.height;
		}
	}
	o.channels = 3;
	o.scale_denom = 2;
	(void)tfk_img_decode(&img, data, n, &o, &err);
	if (ok3) {
		struct tfk_img_resize ro = { 17, 13, 0, 0, 0, 1, 0 };

		ro.method = n ? data[0] & 3 : 0;
		ro.antialias = n ? (data[0] >> 2) & 1 : 0;
		ro.crop = n ? (data[0] >> 3) & 1 : 0;
		ro.pad = n && !ro.crop ? (data[0] >> 4) & 1 : 0;
		o.scale_denom = 1;
		/* a pad may keep no rows of a very long image: refused */
		if (tfk_img_decode_resize(&img, data, n, &o, &ro, out, &err) &&
		    (size_t)w * h <= LIMIT && !ro.pad)
			abort();
	}
	if (n == 0)
		tfk_img_release(&img);
	return 0;
}
