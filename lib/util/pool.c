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
 * Rejected: a queue per worker with work stealing (more code for items
 * that each take far longer than a lock round trip), and having the
 * calling thread only deliver (wastes one of the -j threads).
 *
 * Threads are made per run and joined before returning: runs are few
 * and long (one per converter invocation). If pthread_create fails the
 * run goes on with the threads it has (at worst the calling thread
 * alone): the output is the same, only slower.
 */
#include "util/pool.h"
#include "util/alloc.h"
#include "util/err.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

struct pool {
	size_t n, window, stride;
	unsigned char *slots;
	unsigned char *done;	/* per slot: work finished */
	size_t next;		/* lowest unclaimed item */
	size_t delivered;	/* items delivered so far */
	int stop;		/* deliver failed: claim nothing more */
	pthread_mutex_t mu;
	pthread_cond_t can_claim;	/* next became claimable, or stop */
	pthread_cond_t item_done;
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

/* Work on item i (claimed by the caller, mu not held). */
static void run_item(struct pool *p, size_t i)
{
	void *slot = slot_of(p, i);

	memset(slot, 0, p->stride);
	p->work(p->ctx, i, slot);
	pthread_mutex_lock(&p->mu);
	p->done[i % p->window] = 1;
	pthread_cond_broadcast(&p->item_done);
	pthread_mutex_unlock(&p->mu);
}

static void *helper(void *arg)
{
	struct pool *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		size_t i;

		while (!claimable(p) && !p->stop && p->next < p->n)
			pthread_cond_wait(&p->can_claim, &p->mu);
		if (!claimable(p))
			break;
		i = p->next++;
		pthread_mutex_unlock(&p->mu);
		run_item(p, i);
		pthread_mutex_lock(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static int run_inline(size_t n, size_t slot_size,
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
		work(ctx, i, slot);
		rc = deliver(ctx, i, slot);
	}
	tfk_free(slot);
	return rc;
}

int tfk_pool_run(size_t n, int threads, size_t window, size_t slot_size,
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
		return run_inline(n, slot_size, work, deliver, ctx);
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
	pthread_cond_init(&p.can_claim, NULL);
	pthread_cond_init(&p.item_done, NULL);
	for (k = 0; k < threads - 1; k++)
		if (pthread_create(&tid[n_tid], NULL, helper, &p) == 0)
			n_tid++;

	for (d = 0; d < n; d++) {
		pthread_mutex_lock(&p.mu);
		while (!p.done[d % window]) {
			if (claimable(&p)) {
				size_t i = p.next++;

				pthread_mutex_unlock(&p.mu);
				run_item(&p, i);
				pthread_mutex_lock(&p.mu);
			} else {
				pthread_cond_wait(&p.item_done, &p.mu);
			}
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
	/* After a stop, items delivered..next-1 were worked, not delivered. */
	for (d = p.delivered; discard && d < p.next; d++)
		discard(ctx, d, slot_of(&p, d));

	pthread_cond_destroy(&p.item_done);
	pthread_cond_destroy(&p.can_claim);
	pthread_mutex_destroy(&p.mu);
	tfk_free(tid);
	tfk_free(p.done);
	tfk_free(p.slots);
	return rc;
}
