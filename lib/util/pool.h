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
#include <stdint.h>

int tfk_pool_run(size_t n, int threads, size_t window, size_t slot_size,
		 void (*work)(void *ctx, size_t i, void *slot),
		 int (*deliver)(void *ctx, size_t i, void *slot),
		 void (*discard)(void *ctx, size_t i, void *slot),
		 void *ctx);

/*
 * tfk_pool_stream - the same for a stream of unknown length: item i
 * exists once read(ctx, i, slot) returns > 0, having put the item (or
 * where to find it) in its zeroed slot. read is called once per item,
 * in index order, never two at a time, on whichever thread claims the
 * item, and overlaps other items' work and delivery. The first item
 * read refuses ends the stream: 0 at its end, a negative value for an
 * error, which tfk_pool_stream returns after every item before it has
 * been delivered (unless deliver stopped the run first). work and
 * deliver are as for tfk_pool_run and see the slot read filled.
 */
int tfk_pool_stream(int threads, size_t window, size_t slot_size,
		    int (*read)(void *ctx, size_t i, void *slot),
		    void (*work)(void *ctx, size_t i, void *slot),
		    int (*deliver)(void *ctx, size_t i, void *slot),
		    void (*discard)(void *ctx, size_t i, void *slot),
		    void *ctx);

/*
 * tfk_parallel_for - fork-join over [0, n) for kernels.
 *
 * Splits [0, n) into c = min(threads, n, 64) contiguous chunks in order,
 * each n / c long and the first n % c of them one longer, and calls
 * fn(ctx, begin, end, k) once per chunk k (none when n <= 0),
 * the calling thread taking part. The split depends only on n and
 * threads, never on scheduling, and k in [0, c) names the chunk (so
 * per-chunk scratch indexed by k and per-chunk partial sums combined in
 * k order give the same result on every run). Returns when every chunk
 * has returned. fn must not fail; it records errors in ctx.
 *
 * Workers are made once per process, lazily (at most one fewer than
 * the online CPUs: more chunks than workers are claimed by whoever is
 * free), kept sleeping on a futex between calls after a short spin, and
 * joined at exit. A call costs a few microseconds. threads <= 1, n <= 1, a call
 * from inside fn (nested) and a call while another thread's call is in
 * progress all run the same chunks inline, in order, on the calling
 * thread: same split, same k, same result. If workers cannot be made the
 * calling thread runs their chunks too. Returns 0.
 */
int tfk_parallel_for(int threads, int64_t n,
		     void (*fn)(void *ctx, int64_t begin, int64_t end,
				int worker),
		     void *ctx);

#endif
