/*
 * latency.h - the latencies of a timed loop (tfk-model bench, tfk-lite
 * bench): min and mean over every run, percentiles over a bounded
 * sample of them.
 *
 * tfk_latency_add keeps every stride-th latency; when the sample is
 * full, every other one is dropped and the stride doubles, so memory
 * stays bounded (at most 2^20 doubles, or `expected` when smaller) however
 * long a --seconds loop runs, and the kept runs stay spread evenly over
 * it. Percentiles are nearest-rank over the sorted sample.
 */
#ifndef TFK_LATENCY_H
#define TFK_LATENCY_H

struct tfk_latency {
	/* private */
	double *v;
	long cap, n, stride, runs;
	double sum, min;
};

struct tfk_latency_stats {
	long runs;
	double min, median, p90, p99, mean;	/* same unit as added */
};

/* expected: the number of runs if known, else <= 0. 0 or TFK_ENOMEM. */
int tfk_latency_init(struct tfk_latency *l, long expected);
void tfk_latency_add(struct tfk_latency *l, double t);
/* Sorts the sample; all zero when nothing was added. */
void tfk_latency_stats(struct tfk_latency *l, struct tfk_latency_stats *s);
void tfk_latency_release(struct tfk_latency *l);

#endif
