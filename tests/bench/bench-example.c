/*
 * bench-example.c - tf.Example decode speed on Fashion-MNIST-sized
 * records: 60,000 Examples of a 784-byte `image` (bytes) and an int64
 * `label`, built in memory with the encoder; each run decodes every
 * record and reads both values, as a training input pipeline does.
 * Prints one JSON line with the best of several runs in records/s.
 *
 *   bench-example [OUT.tfrecord]   also write the records there (framed)
 *                                  so a peer can parse the same bytes
 */
#include "example/example.h"
#include "io/record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N_REC 60000
#define IMG 784
#define PASSES 10	/* decodes of all records per timed run */
#define RUNS 5

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	struct tfk_example_builder b;
	struct tfk_example ex;
	struct tfk_err err;
	uint8_t *blob, img[IMG];
	size_t *off, *len, total = 0, cap = (size_t)N_REC * (IMG + 64);
	uint32_t seed = 1;
	uint64_t check = 0;
	double best = 1e30;
	int i, k, run;

	blob = malloc(cap);
	off = malloc(N_REC * sizeof(*off));
	len = malloc(N_REC * sizeof(*len));
	if (!blob || !off || !len)
		return 1;
	tfk_exb_init(&b);
	for (i = 0; i < N_REC; i++) {
		const uint8_t *p;
		size_t n;
		int64_t label = i % 10;

		for (k = 0; k < IMG; k++) {
			seed = seed * 1103515245 + 12345;
			img[k] = (uint8_t)(seed >> 24);
		}
		tfk_exb_reset(&b);
		tfk_exb_add_bytes1(&b, "image", img, IMG);
		tfk_exb_add_int64s(&b, "label", &label, 1);
		if (tfk_exb_finish(&b, &p, &n, &err) || total + n > cap)
			return 1;
		memcpy(blob + total, p, n);
		off[i] = total;
		len[i] = n;
		total += n;
	}
	tfk_exb_release(&b);
	if (argc > 1) {
		struct tfk_rec_writer *w;

		if (tfk_recw_open(&w, argv[1], TFK_COMP_NONE, &err))
			goto fail;
		for (i = 0; i < N_REC; i++)
			if (tfk_recw_write(w, blob + off[i], len[i], &err))
				goto fail;
		if (tfk_recw_close(w, &err))
			goto fail;
	}

	tfk_example_init(&ex);
	for (run = 0; run < RUNS; run++) {
		double t0 = now(), dt;
		int pass;

		for (pass = 0; pass < PASSES; pass++) {
			for (i = 0; i < N_REC; i++) {
				const struct tfk_feat *fi, *fl;
				const uint8_t *p;
				size_t n, it = 0;
				int64_t label;

				if (tfk_example_parse(&ex, blob + off[i], len[i],
						      &err))
					goto fail;
				fi = tfk_example_find(&ex, "image");
				fl = tfk_example_find(&ex, "label");
				if (!fi || !fl ||
				    tfk_feat_bytes_next(fi, &it, &p, &n) != 1 ||
				    tfk_feat_int64s(fl, &label, 1) != 1)
					goto fail;
				check += p[n - 1] + (uint64_t)label + n;
			}
		}
		dt = now() - t0;
		if (dt < best)
			best = dt;
	}
	tfk_example_release(&ex);
	printf("{\"records\":%d,\"bytes\":%zu,\"best_s\":%.6f,"
	       "\"records_per_s\":%.0f,\"check\":%llu}\n", N_REC, total,
	       best / PASSES, (double)N_REC * PASSES / best,
	       (unsigned long long)check);
	free(blob);
	free(off);
	free(len);
	return 0;
fail:
	fprintf(stderr, "bench-example: %s\n", err.msg);
	return 1;
}
