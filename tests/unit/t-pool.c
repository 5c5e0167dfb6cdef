/*
 * t-pool.c - ordered parallel map: every item worked once, delivered in
 * order on the calling thread, results identical for every thread count
 * under random work delays, the in-flight bound, zeroed slots, stop on
 * a deliver error, and allocation failure; for streams also reads one
 * at a time in order, the end and a read error.
 */
#include "util/pool.h"
#include "util/alloc.h"
#include "util/err.h"
#include "tap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 600

struct slot {
	uint64_t tag;		/* streams: what read put there */
	uint64_t value;
	int dirty;		/* slot was not zeroed when work began */
	char pad[100];		/* an odd size: stride rounding */
};

struct run {
	pthread_t caller;
	atomic_int worked[N];
	atomic_long in_flight, max_in_flight;
	atomic_long max_index_worked;
	atomic_long delivered;	/* next index deliver expects */
	int out_of_order, wrong_thread, bad_value, dirty;
	uint64_t hash;		/* over delivered values, in order */
	long stop_at;		/* deliver returns -7 here; -1 never */
	long delays;		/* 1: sleep a random while in work */
	atomic_long saw_inline_order;	/* threads 1: work(i) after deliver(i-1) */
	long discarded;		/* items handed to discard */
	int discard_wrong;	/* discard got an unworked or delivered item */
	/* streams */
	long len, read_err_at;	/* read returns 0 at len, -5 at read_err_at */
	long next_read, reads;
	int read_out_of_order, bad_tag;
	atomic_int reading, read_overlap;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static void work(void *ctx, size_t i, void *slotp)
{
	struct run *r = ctx;
	struct slot *s = slotp;
	long f = atomic_fetch_add(&r->in_flight, 1) + 1, m, mi;
	size_t k;

	m = atomic_load(&r->max_in_flight);
	while (f > m && !atomic_compare_exchange_weak(&r->max_in_flight, &m, f))
		;
	mi = atomic_load(&r->max_index_worked);
	while ((long)i > mi &&
	       !atomic_compare_exchange_weak(&r->max_index_worked, &mi, (long)i))
		;
	for (k = 0; k < sizeof(*s); k++)
		if (((unsigned char *)s)[k])
			s->dirty = 1;
	if (r->delays) {
		/* 0..150 us, differing per item, so finish order scrambles. */
		struct timespec ts = { 0, (long)(mix(i) % 7) * 25000 };

		nanosleep(&ts, NULL);
	}
	if ((long)i == r->delivered)
		r->saw_inline_order++;
	atomic_fetch_add(&r->worked[i], 1);
	s->value = mix(i + 12345);
	memset(s->pad, (int)(i & 0xff), sizeof(s->pad));
}

static int deliver(void *ctx, size_t i, void *slotp)
{
	struct run *r = ctx;
	struct slot *s = slotp;
	size_t k;

	atomic_fetch_sub(&r->in_flight, 1);
	if ((long)i != r->delivered)
		r->out_of_order++;
	if (!pthread_equal(pthread_self(), r->caller))
		r->wrong_thread++;
	if (s->value != mix(i + 12345))
		r->bad_value++;
	for (k = 0; k < sizeof(s->pad); k++)
		if ((unsigned char)s->pad[k] != (i & 0xff))
			r->bad_value++;
	r->dirty += s->dirty;
	r->hash = mix(r->hash ^ s->value);
	r->delivered = (long)i + 1;
	return (long)i == r->stop_at ? -7 : 0;
}

static void setup(struct run *r, long stop_at, long delays)
{
	memset(r, 0, sizeof(*r));
	r->caller = pthread_self();
	r->stop_at = stop_at;
	r->delays = delays;
	atomic_store(&r->max_index_worked, -1);
}

static int all_worked_once(struct run *r, long upto)
{
	long i;

	for (i = 0; i < upto; i++)
		if (atomic_load(&r->worked[i]) != 1)
			return 0;
	return 1;
}

static void full_runs(void)
{
	static const int threads[] = { 1, 2, 3, 8 };
	static const size_t windows[] = { 1, 4, 0 };
	uint64_t want = 0;
	struct run *r = malloc(sizeof(*r));
	size_t t, w;

	setup(r, -1, 0);
	is_int(tfk_pool_run(N, 1, 1, sizeof(struct slot), work, deliver, NULL, r), 0,
	       "threads 1: returns 0");
	want = r->hash;
	is_int(r->delivered, N, "threads 1: all delivered");
	is_int(r->saw_inline_order, N, "threads 1: work i runs right after deliver i-1");
	ok(all_worked_once(r, N), "threads 1: every item worked once");

	for (t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
		for (w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
			size_t win = windows[w] ? windows[w] : 4 * (size_t)threads[t];
			long bound = (long)(win < (size_t)threads[t] ?
					    (size_t)threads[t] : win);
			int rc;

			setup(r, -1, 1);
			rc = tfk_pool_run(N, threads[t], windows[w],
					  sizeof(struct slot), work, deliver, NULL, r);
			ok(rc == 0 && r->delivered == N && !r->out_of_order &&
			   !r->wrong_thread && !r->bad_value && !r->dirty &&
			   all_worked_once(r, N),
			   "threads %d window %zu: every item once, in order, on "
			   "the caller, slots zeroed (rc %d, %ld delivered, %d out "
			   "of order, %d dirty)", threads[t], windows[w], rc,
			   r->delivered, r->out_of_order, r->dirty);
			is_int(r->hash, want,
			       "threads %d window %zu: same results as threads 1",
			       threads[t], windows[w]);
			ok(atomic_load(&r->max_in_flight) <= bound,
			   "threads %d window %zu: at most %ld in flight (saw %ld)",
			   threads[t], windows[w], bound,
			   (long)atomic_load(&r->max_in_flight));
		}
	}
	free(r);
}

/* For slot size 0: touch nothing but a counter. */
static atomic_int counted;

static void count_work(void *ctx, size_t i, void *slot)
{
	atomic_fetch_add((atomic_int *)ctx, 1);
}

static int count_deliver(void *ctx, size_t i, void *slot)
{
	atomic_fetch_add((atomic_int *)ctx, 1);
	return 0;
}

static void discard(void *ctx, size_t i, void *slotp)
{
	struct run *r = ctx;
	struct slot *s = slotp;

	if ((long)i < r->delivered || s->value != mix(i + 12345))
		r->discard_wrong = 1;
	r->discarded++;
}

static void stops(void)
{
	struct run *r = malloc(sizeof(*r));
	int rc;

	setup(r, 50, 1);
	r->discarded = 0;
	r->discard_wrong = 0;
	rc = tfk_pool_run(N, 4, 8, sizeof(struct slot), work, deliver, discard, r);
	is_int(rc, -7, "deliver error: returned as is");
	is_int(r->discarded, atomic_load(&r->max_index_worked) - 50,
	       "deliver error: every item worked after it goes to discard");
	ok(!r->discard_wrong, "deliver error: discard gets worked slots only");
	is_int(r->delivered, 51, "deliver error: nothing delivered after it");
	ok(atomic_load(&r->max_index_worked) < 51 + 8,
	   "deliver error: no work beyond the window (max index %ld)",
	   (long)atomic_load(&r->max_index_worked));
	is_int(atomic_load(&r->in_flight),
	       atomic_load(&r->max_index_worked) - 50,
	       "deliver error: items in flight finished before return");

	setup(r, 0, 0);
	rc = tfk_pool_run(N, 1, 1, sizeof(struct slot), work, deliver, NULL, r);
	is_int(rc, -7, "threads 1: deliver error stops at once");
	is_int(atomic_load(&r->max_index_worked), 0, "threads 1: no work after it");

	setup(r, N - 1, 0);
	is_int(tfk_pool_run(N, 2, 0, sizeof(struct slot), work, deliver, NULL, r), -7,
	       "error on the last item is still returned");

	setup(r, -1, 0);
	is_int(tfk_pool_run(0, 4, 0, sizeof(struct slot), work, deliver, NULL, r), 0,
	       "n 0: returns 0");
	is_int(atomic_load(&r->max_index_worked), -1, "n 0: nothing worked");
	is_int(r->delivered, 0, "n 0: nothing delivered");

	counted = 0;
	is_int(tfk_pool_run(5, 1, 0, 0, count_work, count_deliver, NULL, &counted), 0,
	       "slot size 0, threads 1: returns 0");
	is_int(counted, 10, "slot size 0, threads 1: all worked and delivered");
	counted = 0;
	is_int(tfk_pool_run(5, 3, 0, 0, count_work, count_deliver, NULL, &counted), 0,
	       "slot size 0, threads 3: returns 0");
	is_int(counted, 10, "slot size 0, threads 3: all worked and delivered");

	setup(r, -1, 0);
	is_int(tfk_pool_run(N, 0, 0, sizeof(struct slot), work, deliver, NULL, r), 0,
	       "threads 0 runs as threads 1");
	is_int(r->delivered, N, "threads 0: all delivered");

	setup(r, -1, 0);
	tfk_alloc_fail_after(0);
	rc = tfk_pool_run(N, 4, 0, sizeof(struct slot), work, deliver, NULL, r);
	tfk_alloc_fail_after(-1);
	is_int(rc, TFK_ENOMEM, "allocation failure: TFK_ENOMEM");
	is_int(atomic_load(&r->max_index_worked), -1,
	       "allocation failure: no work done");
	setup(r, -1, 0);
	tfk_alloc_fail_after(0);
	rc = tfk_pool_run(N, 1, 0, sizeof(struct slot), work, deliver, NULL, r);
	tfk_alloc_fail_after(-1);
	is_int(rc, TFK_ENOMEM, "allocation failure, threads 1: TFK_ENOMEM");
	free(r);
}

/* Streams -------------------------------------------------------------- */

static int sread(void *ctx, size_t i, void *slotp)
{
	struct run *r = ctx;
	struct slot *s = slotp;
	int rc;

	if (atomic_fetch_add(&r->reading, 1))
		atomic_fetch_add(&r->read_overlap, 1);
	if ((long)i != r->next_read)
		r->read_out_of_order++;
	r->next_read = (long)i + 1;
	r->reads++;
	if (r->delays && i % 5 == 0) {	/* let other threads try to read */
		struct timespec ts = { 0, 30000 };

		nanosleep(&ts, NULL);
	}
	s->tag = mix(i + 777);
	rc = (long)i == r->read_err_at ? -5 : (long)i >= r->len ? 0 : 1;
	atomic_fetch_sub(&r->reading, 1);
	return rc;
}

static void swork(void *ctx, size_t i, void *slotp)
{
	struct run *r = ctx;
	struct slot *s = slotp;

	if (s->tag != mix(i + 777))
		r->bad_tag++;
	s->tag = 0;
	work(ctx, i, slotp);
}

static void streams(void)
{
	static const int threads[] = { 1, 2, 3, 8 };
	static const size_t windows[] = { 1, 4, 0 };
	static const long lens[] = { 0, 1, 7, N };
	struct run *r = malloc(sizeof(*r));
	uint64_t want;
	size_t t, w, l;
	int rc;

	setup(r, -1, 0);
	tfk_pool_run(N, 1, 1, sizeof(struct slot), work, deliver, NULL, r);
	want = r->hash;
	for (t = 0; t < sizeof(threads) / sizeof(threads[0]); t++)
		for (w = 0; w < sizeof(windows) / sizeof(windows[0]); w++)
			for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
				setup(r, -1, lens[l] == N);
				r->len = lens[l];
				r->read_err_at = -1;
				rc = tfk_pool_stream(threads[t], windows[w],
						     sizeof(struct slot), sread,
						     swork, deliver, NULL, r);
				ok(rc == 0 && r->delivered == lens[l] &&
				   !r->out_of_order && !r->wrong_thread &&
				   !r->bad_value && !r->dirty && !r->bad_tag &&
				   all_worked_once(r, lens[l]) &&
				   atomic_load(&r->max_index_worked) ==
				   lens[l] - 1,
				   "stream of %ld, threads %d window %zu: every "
				   "item once, in order, slots as read left "
				   "them (rc %d, %ld delivered, %d bad tags)",
				   lens[l], threads[t], windows[w], rc,
				   r->delivered, r->bad_tag);
				ok(!r->read_out_of_order &&
				   !atomic_load(&r->read_overlap) &&
				   r->reads >= lens[l] + 1 &&
				   r->reads <= lens[l] + 1 + threads[t],
				   "stream of %ld, threads %d window %zu: reads "
				   "in order, one at a time, none far past the "
				   "end (%ld reads, %d out of order, %d "
				   "overlapping)", lens[l], threads[t],
				   windows[w], r->reads, r->read_out_of_order,
				   atomic_load(&r->read_overlap));
				if (lens[l] == N)
					is_int(r->hash, want, "stream of %d, "
					       "threads %d window %zu: same "
					       "results as tfk_pool_run", N,
					       threads[t], windows[w]);
			}

	setup(r, -1, 1);
	r->len = N;
	r->read_err_at = 100;
	rc = tfk_pool_stream(3, 0, sizeof(struct slot), sread, swork, deliver,
			     NULL, r);
	is_int(rc, -5, "read error: returned");
	is_int(r->delivered, 100, "read error: every item before it delivered");
	is_int(atomic_load(&r->max_index_worked), 99,
	       "read error: nothing after it worked");

	setup(r, -1, 0);
	r->len = N;
	r->read_err_at = 0;
	is_int(tfk_pool_stream(1, 0, sizeof(struct slot), sread, swork,
			       deliver, NULL, r), -5,
	       "read error on item 0, threads 1: returned");
	is_int(r->delivered, 0, "read error on item 0: nothing delivered");

	setup(r, 50, 1);
	r->len = N;
	r->read_err_at = 60;
	rc = tfk_pool_stream(4, 8, sizeof(struct slot), sread, swork, deliver,
			     discard, r);
	is_int(rc, -7, "deliver error before a read error: deliver's wins");
	is_int(r->delivered, 51, "deliver error in a stream: nothing after it");
	ok(!r->discard_wrong && r->discarded ==
	   atomic_load(&r->max_index_worked) - 50,
	   "deliver error in a stream: worked items go to discard");
	free(r);
}

/* tfk_parallel_for ---------------------------------------------------- */

#define PF_N 1000

struct pf_run {
	atomic_int hits[PF_N];
	int64_t begin[64], end[64];
	atomic_int calls[64];
	pthread_t who[64];
	int bad_worker;
	int nest_threads;		/* > 0: fn calls tfk_parallel_for again */
	atomic_long nested_sum;
	long sleep_chunk0_ns;		/* chunk 0 sleeps this long */
};

static void pf_fn(void *ctx, int64_t b, int64_t e, int k)
{
	struct pf_run *r = ctx;
	int64_t i;

	if (k < 0 || k >= 64) {
		r->bad_worker = 1;
		return;
	}
	r->begin[k] = b;
	r->end[k] = e;
	r->who[k] = pthread_self();
	atomic_fetch_add(&r->calls[k], 1);
	if (k == 0 && r->sleep_chunk0_ns) {
		struct timespec ts = { 0, r->sleep_chunk0_ns };

		nanosleep(&ts, NULL);
	}
	for (i = b; i < e; i++)
		atomic_fetch_add(&r->hits[i], 1);
}

/* Each index once, chunks in order with the documented lengths. */
static void pf_check(int threads, int64_t n)
{
	struct pf_run *r = calloc(1, sizeof(*r));
	int64_t i, c, q, rem, at = 0;
	int k, once = 1, bounds = 1, called = 1;

	is_int(tfk_parallel_for(threads, n, pf_fn, r), 0,
	       "parallel_for threads %d n %lld: returns 0", threads,
	       (long long)n);
	for (i = 0; i < n; i++)
		once &= atomic_load(&r->hits[i]) == 1;
	ok(once, "parallel_for threads %d n %lld: every index once", threads,
	   (long long)n);
	c = threads < 1 ? 1 : threads > 64 ? 64 : threads;
	if (c > n)
		c = n;
	q = c ? n / c : 0;
	rem = c ? n % c : 0;
	for (k = 0; k < 64; k++) {
		int want = k < c;

		called &= atomic_load(&r->calls[k]) == want;
		if (!want)
			continue;
		bounds &= r->begin[k] == at;
		at += q + (k < rem);
		bounds &= r->end[k] == at;
	}
	ok(called && !r->bad_worker, "parallel_for threads %d n %lld: "
	   "chunks 0..%lld once each", threads, (long long)n, (long long)c - 1);
	ok(bounds && at == (n > 0 ? n : 0), "parallel_for threads %d n %lld: "
	   "contiguous chunks, first n %% c one longer", threads,
	   (long long)n);
	free(r);
}

static void pf_sum_fn(void *ctx, int64_t b, int64_t e, int k)
{
	atomic_long *sum = ctx;

	atomic_fetch_add(sum, (long)(e - b) * 1000 + k);
}

static void pf_nest_fn(void *ctx, int64_t b, int64_t e, int k)
{
	struct pf_run *r = ctx;
	atomic_long sum = 0;

	/* Inline (nested), same split: 10 over 3 chunks. */
	tfk_parallel_for(r->nest_threads, 10, pf_sum_fn, &sum);
	atomic_fetch_add(&r->nested_sum, atomic_load(&sum));
	atomic_fetch_add(&r->calls[k], 1);
}

static void *pf_thread(void *arg)
{
	long *fails = arg;
	int i;

	for (i = 0; i < 2000; i++) {
		atomic_long sum = 0;

		tfk_parallel_for(2 + i % 3, 7 + i % 5, pf_sum_fn, &sum);
		/* sum of lengths * 1000 + sum of k */
		long c = 2 + i % 3, n = 7 + i % 5;

		if (atomic_load(&sum) != n * 1000 + c * (c - 1) / 2)
			(*fails)++;
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void parallel_for_cases(void)
{
	static const int th[] = { 0, 1, 2, 3, 4, 7, 64, 100 };
	static const int64_t ns[] = { 0, 1, 2, 3, 5, 63, 64, 65, 1000 };
	struct pf_run *r;
	pthread_t t1, t2;
	long fails1 = 0, fails2 = 0, bad = 0;
	size_t i, j;
	double t0, per;

	for (i = 0; i < sizeof(th) / sizeof(th[0]); i++)
		for (j = 0; j < sizeof(ns) / sizeof(ns[0]); j++)
			pf_check(th[i], ns[j]);

	/* Chunk 1 runs on a worker while chunk 0 sleeps. */
	r = calloc(1, sizeof(*r));
	r->sleep_chunk0_ns = 50 * 1000 * 1000;
	tfk_parallel_for(2, 100, pf_fn, r);
	ok(atomic_load(&r->calls[0]) == 1 && atomic_load(&r->calls[1]) == 1 &&
	   !pthread_equal(r->who[0], r->who[1]),
	   "parallel_for threads 2: chunks ran on two threads");
	free(r);

	/* Nested: inner calls run inline with the same split. */
	r = calloc(1, sizeof(*r));
	r->nest_threads = 3;
	tfk_parallel_for(2, 2, pf_nest_fn, r);
	is_int(atomic_load(&r->nested_sum), 2 * (10 * 1000 + 0 + 1 + 2),
	       "parallel_for nested: inner chunks 4,3,3 with k 0..2, twice");
	is_int(atomic_load(&r->calls[0]) + atomic_load(&r->calls[1]), 2,
	       "parallel_for nested: outer chunks once each");
	free(r);

	/* Two threads calling at once: one gets the workers, the other
	 * runs inline; both get every chunk. */
	pthread_create(&t1, NULL, pf_thread, &fails1);
	pthread_create(&t2, NULL, pf_thread, &fails2);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	is_int(fails1 + fails2, 0, "parallel_for from two threads at once: "
	       "4000 calls, every chunk once");

	/* Back to back: the workers stay awake, each call is cheap. */
	t0 = now_s();
	for (i = 0; i < 20000; i++) {
		atomic_long sum = 0;

		tfk_parallel_for(2, 2, pf_sum_fn, &sum);
		bad += atomic_load(&sum) != 2001;
	}
	per = (now_s() - t0) / 20000 * 1e6;
	is_int(bad, 0, "parallel_for 20000 back-to-back calls: all chunks");
	tap_diag("parallel_for threads 2: %.2f us per call", per);
}

int main(void)
{
	full_runs();
	stops();
	streams();
	parallel_for_cases();
	return tap_done();
}
