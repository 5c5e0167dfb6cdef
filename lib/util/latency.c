/*
 * latency.c - the latencies of a timed loop (see latency.h).
 */
#include "util/latency.h"
#include "util/alloc.h"
#include "util/err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SAMPLES (1L << 20)	/* 8 MiB */

int tfk_latency_init(struct tfk_latency *l, long expected)
{
	memset(l, 0, sizeof(*l));
	l->cap = expected > 0 && expected < MAX_SAMPLES ? expected :
		MAX_SAMPLES;
	l->stride = 1;
	l->min = HUGE_VAL;
	l->v = tfk_malloc((size_t)l->cap * sizeof(*l->v));
	return l->v ? 0 : TFK_ENOMEM;
}

void tfk_latency_add(struct tfk_latency *l, double t)
{
	long k = l->runs++, i;

	l->sum += t;
	if (t < l->min)
		l->min = t;
	if (k % l->stride)
		return;
	if (l->n == l->cap) {
		for (i = 0; 2 * i < l->n; i++)
			l->v[i] = l->v[2 * i];
		l->n = i;
		l->stride *= 2;
		if (k % l->stride)
			return;
	}
	l->v[l->n++] = t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted v[0..n), n > 0. */
static double pct(const double *v, long n, double p)
{
	long k = (long)ceil(p * n) - 1;

	return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

void tfk_latency_stats(struct tfk_latency *l, struct tfk_latency_stats *s)
{
	memset(s, 0, sizeof(*s));
	if (!l->n)
		return;
	qsort(l->v, (size_t)l->n, sizeof(*l->v), cmp_double);
	s->runs = l->runs;
	s->min = l->min;
	s->median = pct(l->v, l->n, 0.5);
	s->p90 = pct(l->v, l->n, 0.9);
	s->p99 = pct(l->v, l->n, 0.99);
	s->mean = l->sum / l->runs;
}

void tfk_latency_release(struct tfk_latency *l)
{
	tfk_free(l->v);
	l->v = NULL;
}
