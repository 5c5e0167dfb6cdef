/*
 * t-latency.c - the latency sampler of the bench subcommands: min,
 * mean and nearest-rank percentiles against values worked by hand, the
 * halving of a full sample (which runs are kept), and an empty loop.
 */
#include "util/latency.h"
#include "tap.h"

int main(void)
{
	struct tfk_latency l;
	struct tfk_latency_stats s;
	long i;

	/* 1..100 in reverse: sorted sample 1..100, nearest rank */
	ok(!tfk_latency_init(&l, 0), "init, runs unknown");
	for (i = 100; i >= 1; i--)
		tfk_latency_add(&l, (double)i);
	tfk_latency_stats(&l, &s);
	is_int(s.runs, 100, "runs counted");
	ok(s.min == 1 && s.mean == 50.5, "min 1, mean 50.5");
	ok(s.median == 50 && s.p90 == 90 && s.p99 == 99,
	   "median 50, p90 90, p99 99 (ceil(p n)-th smallest)");
	tfk_latency_release(&l);

	/* room for 4: runs 0..9 keep 0,1,2,3, then halve to 0,2 (stride
	 * 2) and add 4, 6, then halve to 0,4 (stride 4) and add 8 */
	ok(!tfk_latency_init(&l, 4), "init, room for 4");
	for (i = 0; i < 10; i++)
		tfk_latency_add(&l, (double)(i * 10));
	tfk_latency_stats(&l, &s);
	is_int(s.runs, 10, "every run counted");
	ok(s.min == 0 && s.mean == 45, "min and mean over all ten runs");
	ok(s.median == 40 && s.p90 == 80 && s.p99 == 80,
	   "percentiles over the kept runs 0, 40, 80 (%g %g %g)", s.median,
	   s.p90, s.p99);
	tfk_latency_release(&l);

	ok(!tfk_latency_init(&l, 5), "init again");
	tfk_latency_stats(&l, &s);
	ok(s.runs == 0 && s.median == 0 && s.mean == 0, "nothing added: zeros");
	tfk_latency_release(&l);
	return tap_done();
}
