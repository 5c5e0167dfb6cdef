/*
 * pool.h - ordered parallel map: work in any order, deliver in order.
 *
 * Converters and tfk-map decode/resize items on -j threads but must write
 * them in input order, so output never depends on -j. tfk_pool_run calls
 * work(ctx, i, slot) for every i in [0, n) on `threads` threads (the
 * calling thread included) and deliver(ctx, i, slot) on the calling
 * thread strictly in index order. At most `window` items are in flight
 * (claimed by a worker but not yet delivered), so memory stays bounded;
 * window 0 means 4 * threads, and a window below threads is raised to
 * threads. Each item gets its own slot of slot_size bytes (zeroed
 * before work, aligned as malloc aligns) to pass a result from work to
 * deliver; it stays valid until deliver returns. work may run on any
 * thread, concurrently with other work calls and with deliver. With
 * threads <= 1 it runs work then deliver inline, no threads made.
 * Returns 0, deliver's non-zero value, or TFK_ENOMEM before any work
 * when the slots cannot be had.
 *
 * work returns nothing: it records a per-item error in its slot and
 * deliver, which sees items in order, turns it into a stop or a skip;
 * a non-zero return from deliver stops the run: no new work starts, the
 * items in flight finish and are handed to discard (when not NULL)
 * instead of deliver, so their slots can free what work put in them,
 * and tfk_pool_run returns that value.
 */
#ifndef TFK_POOL_H
#define TFK_POOL_H

#include <stddef.h>

int tfk_pool_run(size_t n, int threads, size_t window, size_t slot_size,
		 void (*work)(void *ctx, size_t i, void *slot),
		 int (*deliver)(void *ctx, size_t i, void *slot),
		 void (*discard)(void *ctx, size_t i, void *slot),
		 void *ctx);

#endif
