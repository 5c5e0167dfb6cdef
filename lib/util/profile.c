/*
 * profile.c - the trace recorder (see profile.h).
 *
 * Each thread appends to its own buffer (found through a thread-local
 * pointer, registered once under a lock), so recording never takes a
 * lock except for memory events, whose bytes-in-use total is the
 * process's. A generation number makes a thread's pointer stale when
 * the recorder is freed and armed again. Rejected: one shared ring
 * under a lock (contention between kernel threads) and recording into
 * the writers' protos directly (the layers below format/ must record).
 */
#include "util/profile.h"
#include "util/alloc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

atomic_int tfk_prof_recording;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tfk_prof_thread **threads;
static int n_threads, cap_threads;
static int armed;
static unsigned gen;
static uint64_t mono0, wall0, wall1;
static size_t max_ev;
static atomic_size_t n_ev_all;
static atomic_uint_fast64_t dropped;
static int64_t in_use, peak;
static _Thread_local int64_t step_now = -1;
static char peak_op[256];

static _Thread_local struct tfk_prof_thread *self;
static _Thread_local unsigned self_gen;

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t tfk_prof_now(void)
{
	return clock_ns(CLOCK_MONOTONIC) - mono0;
}

uint64_t tfk_prof_wall_start(void)
{
	return wall0;
}

uint64_t tfk_prof_wall_stop(void)
{
	return wall1 ? wall1 : clock_ns(CLOCK_REALTIME);
}

void tfk_prof_free(void)
{
	pthread_mutex_lock(&lock);
	atomic_store(&tfk_prof_recording, 0);
	armed = 0;
	for (int i = 0; i < n_threads; i++) {
		tfk_free(threads[i]->ev);
		tfk_free(threads[i]->str);
		tfk_free(threads[i]);
	}
	tfk_free(threads);
	threads = NULL;
	n_threads = cap_threads = 0;
	gen++;
	pthread_mutex_unlock(&lock);
}

int tfk_prof_start(size_t max_events, struct tfk_err *err)
{
	tfk_prof_free();
	pthread_mutex_lock(&lock);
	max_ev = max_events ? max_events : (size_t)1 << 20;
	atomic_store(&n_ev_all, 0);
	atomic_store(&dropped, 0);
	in_use = peak = 0;
	peak_op[0] = 0;
	mono0 = clock_ns(CLOCK_MONOTONIC);
	wall0 = clock_ns(CLOCK_REALTIME);
	wall1 = 0;
	armed = 1;
	pthread_mutex_unlock(&lock);
	(void)err;
	return 0;
}

void tfk_prof_record(int on)
{
	atomic_store(&tfk_prof_recording, on && armed);
}

void tfk_prof_stop(void)
{
	atomic_store(&tfk_prof_recording, 0);
	if (armed && !wall1)
		wall1 = clock_ns(CLOCK_REALTIME);
}

/* The calling thread's buffer, registered on first use; NULL when out
 * of memory. */
static struct tfk_prof_thread *me(void)
{
	struct tfk_prof_thread *t;

	if (self && self_gen == gen)
		return self;
	t = tfk_calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = (int64_t)syscall(SYS_gettid);
	snprintf(t->name, sizeof(t->name), "thread %lld", (long long)t->tid);
	pthread_mutex_lock(&lock);
	if (n_threads == cap_threads) {
		int nc = cap_threads ? 2 * cap_threads : 8;
		void *v = tfk_realloc(threads, (size_t)nc * sizeof(*threads));

		if (!v) {
			pthread_mutex_unlock(&lock);
			tfk_free(t);
			return NULL;
		}
		threads = v;
		cap_threads = nc;
	}
	threads[n_threads++] = t;
	self = t;
	self_gen = gen;
	pthread_mutex_unlock(&lock);
	return t;
}

void tfk_prof_thread_name(const char *name)
{
	struct tfk_prof_thread *t = me();

	if (t)
		snprintf(t->name, sizeof(t->name), "%s", name);
}

/* Append a, then b (may be NULL) after a ':' as one string. */
static uint32_t add_str(struct tfk_prof_thread *t, const char *a,
			const char *b, int *ok)
{
	size_t na = strlen(a), nb = b ? strlen(b) + 1 : 0;
	size_t need = t->n_str + na + nb + 1;
	uint32_t at = (uint32_t)t->n_str;

	if (need > UINT32_MAX) {
		*ok = 0;
		return 0;
	}
	if (need > t->cap_str) {
		size_t nc = t->cap_str ? 2 * t->cap_str : 1 << 16;
		char *s;

		while (nc < need)
			nc *= 2;
		s = tfk_realloc(t->str, nc);
		if (!s) {
			*ok = 0;
			return 0;
		}
		t->str = s;
		t->cap_str = nc;
	}
	memcpy(t->str + t->n_str, a, na);
	if (b) {
		t->str[t->n_str + na] = ':';
		memcpy(t->str + t->n_str + na + 1, b, nb - 1);
	}
	t->str[need - 1] = 0;
	t->n_str = need;
	return at;
}

/* A new event of the calling thread, or NULL (dropped). */
static struct tfk_prof_event *new_event(struct tfk_prof_thread **tp)
{
	struct tfk_prof_thread *t = me();

	if (!t || atomic_fetch_add(&n_ev_all, 1) >= max_ev)
		goto drop;
	if (t->n_ev == t->cap_ev) {
		size_t nc = t->cap_ev ? 2 * t->cap_ev : 4096;
		void *v = tfk_realloc(t->ev, nc * sizeof(*t->ev));

		if (!v)
			goto drop;
		t->ev = v;
		t->cap_ev = nc;
	}
	*tp = t;
	return memset(&t->ev[t->n_ev], 0, sizeof(t->ev[0]));
drop:
	atomic_fetch_add(&dropped, 1);
	return NULL;
}

void tfk_prof_span(const char *name, const char *type, uint64_t t0,
		   uint64_t t1, int64_t step)
{
	struct tfk_prof_thread *t;
	struct tfk_prof_event *e;
	int ok = 1;

	if (!tfk_prof_on() || !(e = new_event(&t)))
		return;
	e->kind = TFK_PROF_SPAN;
	e->start = t0;
	e->dur = t1 > t0 ? t1 - t0 : 0;
	e->step = step;
	e->typed = type != NULL;
	e->name = add_str(t, name, type, &ok);
	e->op = e->shape = add_str(t, "", NULL, &ok);
	if (ok)
		t->n_ev++;
	else
		atomic_fetch_add(&dropped, 1);
}

void tfk_prof_set_step(int64_t step)
{
	step_now = step;
}

void tfk_prof_mem(int alloc, int64_t bytes, const char *op, int dtype,
		  const char *shape)
{
	struct tfk_prof_thread *t;
	struct tfk_prof_event *e;
	int64_t now_in_use, now_peak;
	int ok = 1;

	if (!tfk_prof_on())
		return;
	/* the total counts even when the event is dropped */
	pthread_mutex_lock(&lock);
	in_use += alloc ? bytes : -bytes;
	if (in_use < 0)
		in_use = 0;
	if (in_use > peak) {
		peak = in_use;
		snprintf(peak_op, sizeof(peak_op), "%s", op);
	}
	now_in_use = in_use;
	now_peak = peak;
	pthread_mutex_unlock(&lock);
	if (!(e = new_event(&t)))
		return;
	e->kind = alloc ? TFK_PROF_ALLOC : TFK_PROF_FREE;
	e->start = tfk_prof_now();
	e->step = step_now;
	e->bytes = bytes;
	e->dtype = (uint8_t)dtype;
	e->in_use = now_in_use;
	e->peak = now_peak;
	e->name = add_str(t, alloc ? "MemoryAllocation" :
			  "MemoryDeallocation", NULL, &ok);
	e->op = add_str(t, op, NULL, &ok);
	e->shape = add_str(t, shape, NULL, &ok);
	if (ok)
		t->n_ev++;
	else
		atomic_fetch_add(&dropped, 1);
}

int tfk_prof_n_threads(void)
{
	return n_threads;
}

const struct tfk_prof_thread *tfk_prof_thread(int i)
{
	return i >= 0 && i < n_threads ? threads[i] : NULL;
}

uint64_t tfk_prof_dropped(void)
{
	return atomic_load(&dropped);
}

int64_t tfk_prof_peak(const char **op)
{
	if (op)
		*op = peak_op;
	return peak;
}
