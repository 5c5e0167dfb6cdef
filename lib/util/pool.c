/*
 * pool.c - ordered parallel map (see pool.h).
 *
 * One mutex and two condition variables. Item i lives in slot
 * i % window; it may be claimed only once item i - window has been
 * delivered, which is what bounds memory and keeps slots unshared.
 * Helper threads loop: claim the lowest unclaimed item, work on it,
 * mark it done. The calling thread delivers strictly in order; while
 * the next item is not done yet it works on an unclaimed item itself
 * instead of sleeping, so -j 2 means two threads working, not one
 * working and one waiting.
 *
 * A stream (tfk_pool_stream) has no n up front: whoever claims item i
 * also reads it, by calling read() under a second mutex (in_mu) that it
 * takes before letting go of mu, so reads happen one at a time and in
 * claim order, and overlap other items' work. The first item read()
 * refuses becomes the end (n); items claimed past it are dropped
 * unread.
 *
 * Rejected: a queue per worker with work stealing (more code for items
 * that each take far longer than a lock round trip), having the
 * calling thread only deliver (wastes one of the -j threads), and, for
 * streams, reading fixed batches between runs (tfk-map did: a barrier
 * per batch, a read-ahead thread competing with the -j workers for the
 * CPUs, and batch buffers too big to stay in cache).
 *
 * Threads are made per run and joined before returning: runs are few
 * and long (one per converter invocation). If pthread_create fails the
 * run goes on with the threads it has (at worst the calling thread
 * alone): the output is the same, only slower.
 */
#include "util/pool.h"
#include "util/alloc.h"
#include "util/err.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct pool {
	size_t n, window, stride;	/* n: SIZE_MAX while a stream has
					 * not ended */
	unsigned char *slots;
	unsigned char *done;	/* per slot: work finished */
	size_t next;		/* lowest unclaimed item */
	size_t delivered;	/* items delivered so far */
	int stop;		/* deliver failed: claim nothing more */
	pthread_mutex_t mu;
	pthread_cond_t can_claim;	/* next became claimable, or stop */
	pthread_cond_t item_done;	/* or n shrank */
	int (*read)(void *ctx, size_t i, void *slot);	/* streams */
	pthread_mutex_t in_mu;	/* held around read() */
	size_t in_end;		/* first item read() refused (in_mu) */
	int in_rc;		/* its negative return, or 0 (in_mu) */
	void (*work)(void *ctx, size_t i, void *slot);
	void *ctx;
};

/* Called with mu held. */
static int claimable(const struct pool *p)
{
	return !p->stop && p->next < p->n && p->next < p->delivered + p->window;
}

static void *slot_of(struct pool *p, size_t i)
{
	return p->slots + (i % p->window) * p->stride;
}

/* Read (streams) and work on the item just claimed, i: called with mu
 * held, returns with it held. */
static void run_item(struct pool *p, size_t i)
{
	void *slot = slot_of(p, i);
	int rc = 1;

	if (p->read) {
		pthread_mutex_lock(&p->in_mu);	/* before mu: claim order */
		pthread_mutex_unlock(&p->mu);
		memset(slot, 0, p->stride);
		rc = 0;
		if (i < p->in_end) {
			rc = p->read(p->ctx, i, slot);
			if (rc <= 0) {
				p->in_end = i;
				p->in_rc = rc;
			}
		}
		pthread_mutex_unlock(&p->in_mu);
	} else {
		pthread_mutex_unlock(&p->mu);
		memset(slot, 0, p->stride);
	}
	if (rc > 0)
		p->work(p->ctx, i, slot);
	pthread_mutex_lock(&p->mu);
	if (rc > 0)
		p->done[i % p->window] = 1;
	else if (i < p->n)
		p->n = i;
	pthread_cond_broadcast(&p->item_done);
	if (rc <= 0)
		pthread_cond_broadcast(&p->can_claim);
}

static void *helper(void *arg)
{
	struct pool *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!claimable(p) && !p->stop && p->next < p->n)
			pthread_cond_wait(&p->can_claim, &p->mu);
		if (!claimable(p))
			break;
		run_item(p, p->next++);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static int run_inline(size_t n, size_t slot_size,
		      int (*read)(void *, size_t, void *),
		      void (*work)(void *, size_t, void *),
		      int (*deliver)(void *, size_t, void *), void *ctx)
{
	void *slot = tfk_malloc(slot_size ? slot_size : 1);
	size_t i;
	int rc = 0;

	if (!slot)
		return TFK_ENOMEM;
	for (i = 0; i < n && !rc; i++) {
		memset(slot, 0, slot_size);
		if (read && (rc = read(ctx, i, slot)) <= 0)
			break;
		work(ctx, i, slot);
		rc = deliver(ctx, i, slot);
	}
	tfk_free(slot);
	return rc;
}

static int run(size_t n, int threads, size_t window, size_t slot_size,
	       int (*read)(void *ctx, size_t i, void *slot),
	       void (*work)(void *ctx, size_t i, void *slot),
	       int (*deliver)(void *ctx, size_t i, void *slot),
	       void (*discard)(void *ctx, size_t i, void *slot),
	       void *ctx)
{
	struct pool p;
	pthread_t *tid;
	int n_tid = 0, rc = 0, k;
	size_t d;

	if (threads < 1)
		threads = 1;
	if (threads == 1 || n <= 1)
		return run_inline(n, slot_size, read, work, deliver, ctx);
	if (window == 0)
		window = 4 * (size_t)threads;
	if (window < (size_t)threads)
		window = (size_t)threads;
	if (window > n)
		window = n;

	memset(&p, 0, sizeof(p));
	p.n = n;
	p.window = window;
	/* Slots hold whatever struct the caller likes: keep them aligned
	 * as malloc would, and apart so neighbours share no cache line. */
	p.stride = (slot_size + 63) & ~(size_t)63;
	if (!p.stride)
		p.stride = 64;
	p.read = read;
	p.in_end = SIZE_MAX;
	p.work = work;
	p.ctx = ctx;
	if (p.stride > SIZE_MAX / window)
		return TFK_ENOMEM;
	p.slots = tfk_malloc(window * p.stride);
	p.done = tfk_calloc(window, 1);
	tid = tfk_malloc((size_t)(threads - 1) * sizeof(*tid));
	if (!p.slots || !p.done || !tid) {
		tfk_free(p.slots);
		tfk_free(p.done);
		tfk_free(tid);
		return TFK_ENOMEM;
	}
	pthread_mutex_init(&p.mu, NULL);
	pthread_mutex_init(&p.in_mu, NULL);
	pthread_cond_init(&p.can_claim, NULL);
	pthread_cond_init(&p.item_done, NULL);
	for (k = 0; k < threads - 1; k++)
		if (pthread_create(&tid[n_tid], NULL, helper, &p) == 0)
			n_tid++;

	for (d = 0;; d++) {
		pthread_mutex_lock(&p.mu);
		while (d < p.n && !p.done[d % window]) {
			if (claimable(&p))
				run_item(&p, p.next++);
			else
				pthread_cond_wait(&p.item_done, &p.mu);
		}
		if (d >= p.n) {
			pthread_mutex_unlock(&p.mu);
			break;
		}
		pthread_mutex_unlock(&p.mu);

		/* Slot d is ours until delivered advances: nobody can
		 * claim item d + window before that. */
		rc = deliver(ctx, d, slot_of(&p, d));

		pthread_mutex_lock(&p.mu);
		p.done[d % window] = 0;
		p.delivered = d + 1;
		if (rc)
			p.stop = 1;
		pthread_cond_broadcast(&p.can_claim);
		pthread_mutex_unlock(&p.mu);
		if (rc)
			break;
	}

	/* Items still in flight finish inside their threads; join waits. */
	pthread_mutex_lock(&p.mu);
	p.stop = 1;
	pthread_cond_broadcast(&p.can_claim);
	pthread_mutex_unlock(&p.mu);
	for (k = 0; k < n_tid; k++)
		pthread_join(tid[k], NULL);
	/* After a stop, items delivered..next-1 were worked, not delivered
	 * (those of a stream past its end were not even read). */
	for (d = p.delivered; discard && d < p.next && d < p.n; d++)
		discard(ctx, d, slot_of(&p, d));
	if (!rc)
		rc = p.in_rc;

	pthread_cond_destroy(&p.item_done);
	pthread_cond_destroy(&p.can_claim);
	pthread_mutex_destroy(&p.in_mu);
	pthread_mutex_destroy(&p.mu);
	tfk_free(tid);
	tfk_free(p.done);
	tfk_free(p.slots);
	return rc;
}

int tfk_pool_run(size_t n, int threads, size_t window, size_t slot_size,
		 void (*work)(void *ctx, size_t i, void *slot),
		 int (*deliver)(void *ctx, size_t i, void *slot),
		 void (*discard)(void *ctx, size_t i, void *slot),
		 void *ctx)
{
	return run(n, threads, window, slot_size, NULL, work, deliver,
		   discard, ctx);
}

int tfk_pool_stream(int threads, size_t window, size_t slot_size,
		    int (*read)(void *ctx, size_t i, void *slot),
		    void (*work)(void *ctx, size_t i, void *slot),
		    int (*deliver)(void *ctx, size_t i, void *slot),
		    void (*discard)(void *ctx, size_t i, void *slot),
		    void *ctx)
{
	return run(SIZE_MAX, threads, window, slot_size, read, work,
		   deliver, discard, ctx);
}

/*
 * tfk_parallel_for (see pool.h).
 *
 * Kernels call it tens of times per training step, so a call must cost
 * microseconds: workers are made once and kept. A job is published by
 * bumping `gen`; workers spin on it briefly (back-to-back calls, the
 * common case inside a step, never reach the kernel) and then sleep on
 * it with FUTEX_WAIT. Chunks are claimed from `ticket` (job id in the
 * high half, next chunk in the low half) by CAS, so a worker that woke
 * late for an old job can never claim a chunk of a newer one; the caller
 * claims chunks too, which is also how a job finishes when workers
 * could not be made or are slow to wake. The last chunk to finish
 * wakes the caller if it went to sleep. Which thread runs a chunk
 * varies; the chunk boundaries and k never do.
 *
 * Rejected: a mutex + condition variable per call (every call would
 * put workers to sleep and wake them: a scheduler round trip each time),
 * threads made per call (worse), and OpenMP (one more runtime, and its own idea of how
 * many threads exist). Workers are joined by an atexit handler so that
 * valgrind and LeakSanitizer see a clean exit; a forked child starts
 * with no workers.
 */

#define PF_MAX_CHUNKS 64
#define PF_SPIN 4000		/* polls before sleeping: ~100 us (pause ~25 ns on Zen 5) */
#define PF_CLOSED 0xffffffffu

typedef void (*pf_fn)(void *ctx, int64_t begin, int64_t end, int worker);

static struct {
	pthread_mutex_t call_mu;	/* one caller at a time */
	atomic_uint gen;		/* job id; workers wait on it */
	atomic_uint_fast64_t ticket;	/* gen << 32 | next chunk */
	atomic_uint left;		/* chunks of the job not finished */
	atomic_int sleepers;		/* workers in FUTEX_WAIT on gen */
	atomic_int caller_asleep;	/* caller in FUTEX_WAIT on left */
	_Atomic(pf_fn) fn;
	_Atomic(void *) ctx;
	atomic_llong n;
	atomic_uint chunks;
	atomic_int quit;
	int n_workers, hooks_set;
	pthread_t tid[PF_MAX_CHUNKS - 1];
} pf = { .call_mu = PTHREAD_MUTEX_INITIALIZER };

static _Thread_local int pf_inside;	/* in a worker or inside a call */

static void futex_wait(atomic_uint *addr, unsigned val)
{
	syscall(SYS_futex, (unsigned *)addr, FUTEX_WAIT_PRIVATE, val,
		NULL, NULL, 0);
}

static void futex_wake(atomic_uint *addr, int count)
{
	syscall(SYS_futex, (unsigned *)addr, FUTEX_WAKE_PRIVATE, count,
		NULL, NULL, 0);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static void chunk_range(int64_t n, unsigned c, unsigned k, int64_t *b,
			int64_t *e)
{
	int64_t q = n / c, r = n % c;

	*b = (int64_t)k * q + ((int64_t)k < r ? (int64_t)k : r);
	*e = *b + q + ((int64_t)k < r);
}

/* Claim and run chunks of job `job` until none is left; returns how
 * many this thread ran. */
static int pf_run_chunks(unsigned job)
{
	pf_fn fn = atomic_load(&pf.fn);
	void *ctx = atomic_load(&pf.ctx);
	int64_t n = atomic_load(&pf.n), b, e;
	unsigned c = atomic_load(&pf.chunks);
	int ran = 0;

	for (;;) {
		uint_fast64_t t = atomic_load(&pf.ticket);
		unsigned k;

		do {
			/* The fields read above belong to `job` whenever
			 * this CAS can succeed: the caller closes the
			 * ticket before it rewrites them. */
			if ((unsigned)(t >> 32) != job)
				return ran;
			k = (unsigned)t;
			if (k >= c)
				return ran;
		} while (!atomic_compare_exchange_weak(&pf.ticket, &t, t + 1));
		chunk_range(n, c, k, &b, &e);
		fn(ctx, b, e, (int)k);
		ran++;
		if (atomic_fetch_sub(&pf.left, 1) == 1 &&
		    atomic_load(&pf.caller_asleep))
			futex_wake(&pf.left, 1);
	}
}

static void *pf_worker(void *arg)
{
	unsigned seen = (unsigned)(uintptr_t)arg;
	int busy = 1;

	pf_inside = 1;
	for (;;) {
		unsigned g;
		long spin = busy ? 0 : PF_SPIN;

		while ((g = atomic_load(&pf.gen)) == seen) {
			if (++spin < PF_SPIN) {
				cpu_relax();
				continue;
			}
			atomic_fetch_add(&pf.sleepers, 1);
			futex_wait(&pf.gen, seen);
			atomic_fetch_sub(&pf.sleepers, 1);
		}
		if (atomic_load(&pf.quit))
			break;
		seen = g;
		/* A worker that found nothing to do sleeps at once: spare
		 * workers must not spin on a machine with few cores. */
		busy = pf_run_chunks(g) > 0;
	}
	return NULL;
}

/* atexit: stop and join the workers (none may be running a job: a
 * call in progress holds call_mu, and then they are left alone). */
static void pf_shutdown(void)
{
	int i;

	if (pthread_mutex_trylock(&pf.call_mu))
		return;
	atomic_store(&pf.quit, 1);
	atomic_fetch_add(&pf.gen, 1);
	futex_wake(&pf.gen, INT_MAX);
	for (i = 0; i < pf.n_workers; i++)
		pthread_join(pf.tid[i], NULL);
	pf.n_workers = 0;
	pthread_mutex_unlock(&pf.call_mu);
}

/* The child of a fork has only the forking thread. */
static void pf_after_fork(void)
{
	pthread_mutex_init(&pf.call_mu, NULL);
	pf.n_workers = 0;
	atomic_store(&pf.sleepers, 0);
}

/* More workers than cores only spin against each other: chunks beyond
 * the workers are claimed by whoever is free, the split stays. */
static int pf_max_workers(void)
{
	static int max;

	if (!max) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		max = cpus < 2 ? 1 : cpus > PF_MAX_CHUNKS ? PF_MAX_CHUNKS - 1 :
			(int)cpus - 1;
	}
	return max;
}

/* Called with call_mu held. Workers block every signal: signals are
 * the main thread's business. */
static void pf_grow(int want)
{
	sigset_t all, old;

	if (!pf.hooks_set) {
		pf.hooks_set = 1;
		atexit(pf_shutdown);
		pthread_atfork(NULL, NULL, pf_after_fork);
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (pf.n_workers < want) {
		void *arg = (void *)(uintptr_t)atomic_load(&pf.gen);

		if (pthread_create(&pf.tid[pf.n_workers], NULL, pf_worker, arg))
			break;
		pf.n_workers++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int tfk_parallel_for(int threads, int64_t n,
		     void (*fn)(void *ctx, int64_t begin, int64_t end,
				int worker),
		     void *ctx)
{
	unsigned c, k, job, left;
	int64_t b, e;
	long spin = 0;

	if (n <= 0)
		return 0;
	if (threads < 1)
		threads = 1;
	c = (unsigned)(threads < PF_MAX_CHUNKS ? threads : PF_MAX_CHUNKS);
	if ((int64_t)c > n)
		c = (unsigned)n;
	if (c == 1 || pf_inside || atomic_load(&pf.quit) ||
	    pthread_mutex_trylock(&pf.call_mu)) {
		for (k = 0; k < c; k++) {
			chunk_range(n, c, k, &b, &e);
			fn(ctx, b, e, (int)k);
		}
		return 0;
	}
	pf_inside = 1;
	if (pf.n_workers < (int)c - 1 && pf.n_workers < pf_max_workers())
		pf_grow((int)c - 1 < pf_max_workers() ? (int)c - 1 :
			pf_max_workers());

	job = atomic_load(&pf.gen) + 1;
	atomic_store(&pf.ticket, (uint_fast64_t)job << 32 | PF_CLOSED);
	atomic_store(&pf.fn, fn);
	atomic_store(&pf.ctx, ctx);
	atomic_store(&pf.n, n);
	atomic_store(&pf.chunks, c);
	atomic_store(&pf.left, c);
	atomic_store(&pf.ticket, (uint_fast64_t)job << 32);
	atomic_store(&pf.gen, job);
	if (atomic_load(&pf.sleepers) > 0)
		futex_wake(&pf.gen, (int)c - 1);

	pf_run_chunks(job);
	while ((left = atomic_load(&pf.left)) != 0) {
		if (++spin < PF_SPIN) {
			cpu_relax();
			continue;
		}
		atomic_store(&pf.caller_asleep, 1);
		if ((left = atomic_load(&pf.left)) != 0)
			futex_wait(&pf.left, left);
		atomic_store(&pf.caller_asleep, 0);
	}
	pf_inside = 0;
	pthread_mutex_unlock(&pf.call_mu);
	return 0;
}
