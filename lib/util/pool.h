/*
 * pool.h - ordered parallel map: work in any order, deliver in order.
 *
 * Converters and tfk-map decode/resize items on -j threads but must write
 * them in input order, so output never depends on -j. tfk_pool_run calls
 * work(ctx, i, slot) for every i in [0, n) on `threads` threads (the
 * calling thread included) and deliver(ctx, i, slot) on the calling
 * thread strictly in index order. At most `window` items are in flight,
 * so memory stays bounded; each item gets its own slot of slot_size
 * bytes (zeroed before work) to pass a result from work to deliver.
 * With threads == 1 it runs work then deliver inline, no threads made.
 *
 * A non-zero return from work is passed to deliver through the slot as
 * the caller chooses (work should record per-item errors in its slot);
 * a non-zero return from deliver stops the run: no new work starts, the
 * items in flight finish, and tfk_pool_run returns that value.
 */
#ifndef TFK_POOL_H
#define TFK_POOL_H

#include <stddef.h>

int tfk_pool_run(size_t n, int threads, size_t window, size_t slot_size,
		 void (*work)(void *ctx, size_t i, void *slot),
		 int (*deliver)(void *ctx, size_t i, void *slot),
		 void *ctx);

#endif
