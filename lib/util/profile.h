/*
 * profile.h - the process's trace recorder: timed spans, memory
 * events, per thread.
 *
 * One recorder per process (a profile is of a run, as TensorFlow's
 * profiler session is). tfk_prof_start arms it; between
 * tfk_prof_record(1) and tfk_prof_record(0) (tfk-train's --profile-steps
 * window) every call below appends an event to the calling thread's
 * own buffer, so threads never contend; tfk_prof_stop disarms it and
 * the writers (format/xplane.h, format/trace.h) read the buffers with
 * tfk_prof_n_threads/tfk_prof_thread. When nothing records, each hook
 * costs one load and branch (tfk_prof_on).
 *
 * Times are nanoseconds from the start (CLOCK_MONOTONIC), the wall
 * clock of the start is kept for the files. Names are copied, so the
 * caller's strings need not outlive the call.
 *
 * Memory events carry the accounting of one allocator ("cpu"): bytes
 * in use after the event and the peak so far, kept here so that every
 * executor in the process adds to one total, as TensorFlow's allocator
 * statistics do.
 */
#ifndef TFK_PROFILE_H
#define TFK_PROFILE_H

#include "util/err.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum tfk_prof_kind {
	TFK_PROF_SPAN,		/* [start, start + dur) */
	TFK_PROF_ALLOC,		/* MemoryAllocation at start */
	TFK_PROF_FREE		/* MemoryDeallocation at start */
};

struct tfk_prof_event {
	uint64_t start, dur;	/* ns since tfk_prof_start */
	uint32_t name;		/* offsets into the thread's strings */
	uint32_t op;		/* memory: the op that allocated ("") */
	uint32_t shape;		/* memory: "[32,10]" ("") */
	uint8_t kind;		/* enum tfk_prof_kind */
	uint8_t dtype;		/* memory: TF DataType, 0 unknown */
	uint8_t typed;		/* span: name is "name:type" */
	int64_t step;		/* step number, -1 none */
	int64_t bytes;		/* memory: bytes of the tensor */
	int64_t in_use;		/* memory: allocator bytes after it */
	int64_t peak;		/* memory: peak bytes in use so far */
};

struct tfk_prof_thread {
	int64_t tid;
	char name[64];
	struct tfk_prof_event *ev;
	size_t n_ev, cap_ev;
	char *str;		/* NUL-terminated names back to back */
	size_t n_str, cap_str;
};

/* Recording now (read by every hook; use tfk_prof_on()). */
extern atomic_int tfk_prof_recording;

static inline int tfk_prof_on(void)
{
	return atomic_load_explicit(&tfk_prof_recording, memory_order_relaxed);
}

/*
 * Arm the recorder (forgetting an earlier profile) with room for at
 * most max_events events in all (0: 2^20, about 100 MB of buffers);
 * events beyond it are counted in tfk_prof_dropped, not kept.
 * Recording starts with tfk_prof_record(1). Returns 0 (buffers grow
 * as events come; running out of memory drops events).
 */
int tfk_prof_start(size_t max_events, struct tfk_err *err);
/* Start (1) or pause (0) recording; a no-op unless armed. */
void tfk_prof_record(int on);
/* Stop recording; the buffers stay readable until tfk_prof_free. */
void tfk_prof_stop(void);
/* Free every buffer. */
void tfk_prof_free(void);

/* ns since tfk_prof_start (a monotonic clock). */
uint64_t tfk_prof_now(void);
/* Wall clock of tfk_prof_start and of tfk_prof_stop, ns since 1970. */
uint64_t tfk_prof_wall_start(void);
uint64_t tfk_prof_wall_stop(void);

/* Name the calling thread's line ("main", "input"); before or while
 * recording. */
void tfk_prof_thread_name(const char *name);

/* A span [t0, t1) named name, or "name:type" when type is not NULL
 * (TensorFlow's op event naming), with step number step (-1: none). */
void tfk_prof_span(const char *name, const char *type, uint64_t t0,
		   uint64_t t1, int64_t step);
/* The step the calling thread's memory events belong to (-1 at
 * first: none). */
void tfk_prof_set_step(int64_t step);
/*
 * A tensor of bytes bytes allocated (alloc 1) or freed (0) now by op
 * (node name), dtype and shape (a tfk_shape_str string), in the step of
 * tfk_prof_set_step. Updates the bytes in use and the peak, and
 * remembers the op at the peak (tfk_prof_peak).
 */
void tfk_prof_mem(int alloc, int64_t bytes, const char *op, int dtype,
		  const char *shape);

/* The recorded threads (valid until tfk_prof_free). */
int tfk_prof_n_threads(void);
const struct tfk_prof_thread *tfk_prof_thread(int i);
/* Events not kept (over max_events or out of memory). */
uint64_t tfk_prof_dropped(void);
/* Peak bytes in use and the op whose allocation reached it ("" none). */
int64_t tfk_prof_peak(const char **op);

#endif
