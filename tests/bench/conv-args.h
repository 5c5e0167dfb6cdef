/*
 * conv-args.h - what the conv and int8 bench drivers share: a monotonic
 * clock, and their one command line
 *
 *   PROG [-t THREADS] [-s SECONDS] [-i ISA] [-p PRECISION] N H W C KH KW O
 *        [SAME|VALID]
 *
 * (stride 1, no dilation) turned into a Conv2D geometry. -p is the conv
 * driver's (float32 or bf16); int8 ignores it.
 */
#ifndef TFK_BENCH_CONV_ARGS_H
#define TFK_BENCH_CONV_ARGS_H

#include "kernels/cpu.h"
#include "util/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct conv_args {
	int threads;		/* -t; the caller presets the defaults */
	double secs;		/* -s */
	const char *prec;	/* -p, or NULL */
	int64_t in[4], fs[4], ys[4];	/* NHWC input, HWIO filter, output
					 * (from g) */
};

/*
 * Parse argv into c, select -i's ISA through pick (tfk_cpu_conv_isa or
 * tfk_int8_isa) and compute the geometry into g. Returns 0, or the exit status
 * after a message on stderr that names prog: 2 for a usage error, 1 for
 * an ISA this CPU lacks or a geometry conv2d refuses.
 */
static inline int conv_args_parse(struct conv_args *c, struct tfk_conv2d *g,
				  int argc, char **argv, const char *prog,
				  const char *(*pick)(const char *want))
{
	struct tfk_conv2d_attrs a = { { 1, 1, 1, 1 }, { 1, 1, 1, 1 }, { 0 },
				      TFK_CONV_SAME };
	struct tfk_err err = { 0, "" };
	const char *isa = NULL;
	int i = 1, k;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-t"))
			c->threads = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-s"))
			c->secs = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "-i"))
			isa = argv[i + 1];
		else if (!strcmp(argv[i], "-p"))
			c->prec = argv[i + 1];
	}
	if (argc - i < 7) {
		fprintf(stderr, "usage: %s [-t THREADS] [-s SECONDS] "
			"[-i ISA] [-p PRECISION] N H W C KH KW O [SAME|VALID]\n",
			prog);
		return 2;
	}
	for (k = 0; k < 4; k++)
		c->in[k] = atoll(argv[i + k]);
	c->fs[0] = atoll(argv[i + 4]);
	c->fs[1] = atoll(argv[i + 5]);
	c->fs[2] = c->in[3];
	c->fs[3] = atoll(argv[i + 6]);
	if (argc - i > 7 && !strcmp(argv[i + 7], "VALID"))
		a.padding = TFK_CONV_VALID;
	if (isa && !pick(isa)) {
		fprintf(stderr, "%s: isa %s not available\n", prog, isa);
		return 1;
	}
	if (tfk_conv2d_geom(g, c->in, c->fs, 0, &a, &err)) {
		fprintf(stderr, "%s: %s\n", prog, err.msg);
		return 1;
	}
	c->ys[0] = g->n, c->ys[1] = g->oh, c->ys[2] = g->ow, c->ys[3] = g->o;
	return 0;
}

#endif
