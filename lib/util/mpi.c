/*
 * mpi.c - OpenMPI through dlopen: the few calls tfkit makes, by symbol.
 */
#include "util/mpi.h"

#include "util/alloc.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* OpenMPI's handles are pointers to its predefined objects. */
typedef void *mpi_handle;

/* OpenMPI 3-5's MPI_Status */
struct status {
	int source, tag, error, cancelled;
	size_t ucount;
};

static struct {
	int joined;		/* MPI_Init ran */
	int tried;
	int rank, size;		/* in comm */
	int wrank, wsize;	/* in the world */
	mpi_handle world;
	void *lib;
	mpi_handle comm, f32, f64, byte, sum, max;
	int (*init)(int *, char ***);
	int (*init_thread)(int *, char ***, int, int *);
	int multiple;		/* tfk_mpi_want_threads */
	int (*finalize)(void);
	int (*abort)(mpi_handle, int);
	int (*comm_rank)(mpi_handle, int *);
	int (*comm_size)(mpi_handle, int *);
	int (*allreduce)(const void *, void *, int, mpi_handle, mpi_handle,
			 mpi_handle);
	int (*bcast)(void *, int, mpi_handle, int, mpi_handle);
	int (*allgather)(const void *, int, mpi_handle, void *, int,
			 mpi_handle, mpi_handle);
	int (*gatherv)(const void *, int, mpi_handle, void *, const int *,
		       const int *, mpi_handle, int, mpi_handle);
	int (*split)(mpi_handle, int, int, mpi_handle *);
	int (*send)(const void *, int, mpi_handle, int, int, mpi_handle);
	int (*recv)(void *, int, mpi_handle, int, int, mpi_handle,
		    struct status *);
	int (*iprobe)(int, int, mpi_handle, int *, struct status *);
	int (*get_count)(const struct status *, mpi_handle, int *);
	/* shared windows (tfk_mpi_shm_new): MPI-3, looked up on their own */
	int shm_tried, shm_ok;
	mpi_handle info_null;
	int (*split_type)(mpi_handle, int, int, mpi_handle, mpi_handle *);
	int (*comm_free)(mpi_handle *);
	int (*win_alloc_shared)(long, int, mpi_handle, mpi_handle, void *,
				mpi_handle *);
	int (*win_query)(mpi_handle, int, long *, int *, void *);
	int (*win_lock_all)(int, mpi_handle);
	int (*win_unlock_all)(mpi_handle);
	int (*win_sync)(mpi_handle);
	int (*win_free)(mpi_handle *);
	int (*barrier)(mpi_handle);
	struct tfk_mpi_shm *shms;	/* every window made, freed at the end */
} w = { .size = 1 };

#define IN_PLACE ((void *)1)	/* OpenMPI's MPI_IN_PLACE */
#define CHUNK ((size_t)1 << 30)	/* elements per call: counts are int */

/* The launcher, when the environment names one; NULL outside MPI. */
static const char *launch(const char **var)
{
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(*vars); i++)
		if (getenv(vars[i])) {
			*var = vars[i];
			return getenv(vars[i]);
		}
	return NULL;
}

static int sym(void **f, const char *name, const char *lib,
	       struct tfk_err *err)
{
	*f = dlsym(w.lib, name);
	if (*f)
		return 0;
	return tfk_errf(err, TFK_EIO, "%s: no symbol %s: not OpenMPI 3 to 5",
			lib, name);
}

static int load(const char *lib, struct tfk_err *err)
{
	static const struct {
		size_t off;
		const char *name;
	} fn[] = {
#define F(field, name) { offsetof(__typeof__(w), field), name }
		F(init, "MPI_Init"), F(init_thread, "MPI_Init_thread"),
		F(finalize, "MPI_Finalize"),
		F(abort, "MPI_Abort"), F(comm_rank, "MPI_Comm_rank"),
		F(comm_size, "MPI_Comm_size"), F(allreduce, "MPI_Allreduce"),
		F(bcast, "MPI_Bcast"),
		F(allgather, "MPI_Allgather"), F(gatherv, "MPI_Gatherv"),
		F(split, "MPI_Comm_split"), F(send, "MPI_Send"),
		F(recv, "MPI_Recv"),
		F(iprobe, "MPI_Iprobe"), F(get_count, "MPI_Get_count"),
		F(comm, "ompi_mpi_comm_world"), F(f32, "ompi_mpi_float"),
		F(f64, "ompi_mpi_double"), F(byte, "ompi_mpi_byte"),
		F(sum, "ompi_mpi_op_sum"), F(max, "ompi_mpi_op_max"),
#undef F
	};

	/* GLOBAL: OpenMPI's own plugins resolve libmpi's symbols. */
	w.lib = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
	if (!w.lib)
		return tfk_errf(err, TFK_EIO, "cannot load %s (%s); install "
				"OpenMPI (Debian: libopenmpi3) or set "
				"TFK_MPI_LIB", lib, dlerror());
	for (size_t i = 0; i < sizeof(fn) / sizeof(*fn); i++) {
		int rc = sym((void **)((char *)&w + fn[i].off), fn[i].name,
			     lib, err);

		if (rc)
			return rc;
	}
	return 0;
}

int tfk_mpi_init(struct tfk_err *err)
{
	const char *var = NULL, *lib = getenv("TFK_MPI_LIB");
	int rc;

	if (w.tried)
		return w.joined || w.size == 1 ? 0 :
			tfk_errf(err, TFK_EIO, "MPI did not start");
	w.tried = 1;
	if (!launch(&var))
		return 0;
	if (!strcmp(var, "PMI_RANK") && !getenv("OMPI_COMM_WORLD_SIZE") &&
	    !lib)
		return tfk_errf(err, TFK_EIO, "launched by an MPI other than "
				"OpenMPI (PMI_RANK is set): tfkit speaks "
				"OpenMPI's ABI (set TFK_MPI_LIB to its "
				"libmpi.so.40 if it is OpenMPI)");
	if (!lib)
		lib = "libmpi.so.40";
	w.size = 0;
	rc = load(lib, err);
	if (!rc && !w.multiple && w.init(NULL, NULL))
		rc = tfk_errf(err, TFK_EIO, "MPI_Init failed");
	if (!rc && w.multiple) {
		int got = 0;

		/* MPI_THREAD_MULTIPLE is 3 in OpenMPI */
		if (w.init_thread(NULL, NULL, 3, &got))
			rc = tfk_errf(err, TFK_EIO, "MPI_Init_thread failed");
		else if (got < 3)
			rc = tfk_errf(err, TFK_EIO, "this MPI gives no "
				      "MPI_THREAD_MULTIPLE (level %d)", got);
	}
	if (rc) {
		tfk_err_prefix(err, "%s is set: an MPI launch", var);
		return rc;
	}
	w.joined = 1;
	w.world = w.comm;
	w.comm_rank(w.comm, &w.rank);
	w.comm_size(w.comm, &w.size);
	w.wrank = w.rank;
	w.wsize = w.size;
	return 0;
}

void tfk_mpi_want_threads(void)
{
	w.multiple = 1;
}

static void shm_release_all(void);

void tfk_mpi_finalize(void)
{
	if (w.joined) {
		shm_release_all();
		w.finalize();
	}
	w.joined = 0;
}

void tfk_mpi_abort(int code)
{
	if (w.joined)
		w.abort(w.world, code);
	exit(code);
}

int tfk_mpi_rank(void)
{
	return w.rank;
}

int tfk_mpi_size(void)
{
	return w.size > 0 ? w.size : 1;
}

int tfk_mpi_gather(const void *p, size_t n, void **all, size_t *sizes,
		   struct tfk_err *err)
{
	int size = tfk_mpi_size(), *cnt = NULL, *at = NULL, rc = 0;
	uint64_t mine = n, *ns = tfk_calloc((size_t)size, sizeof(*ns));
	size_t total = 0;

	*all = NULL;
	if (!ns)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = tfk_mpi_allgather(&mine, sizeof(mine), ns, err);
	for (int r = 0; !rc && r < size; r++) {
		sizes[r] = (size_t)ns[r];
		total += (size_t)ns[r];
	}
	tfk_free(ns);
	if (rc)
		return rc;
	if (total > INT_MAX)
		return tfk_errf(err, TFK_EINVAL, "gathering %zu bytes on rank "
				"0: at most %d", total, INT_MAX);
	cnt = tfk_calloc((size_t)size, sizeof(int));
	at = tfk_calloc((size_t)size, sizeof(int));
	if (!cnt || !at)
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (int r = 0, off = 0; !rc && r < size; r++) {
		cnt[r] = (int)sizes[r];
		at[r] = off;
		off += cnt[r];
	}
	if (!rc && !w.rank && !(*all = tfk_malloc(total + 1)))
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
	/* a rank that failed to allocate still sends (rank 0's failure
	 * ends the job from its caller) */
	if (w.joined && !(rc && !w.rank))
		w.gatherv(p, (int)n, w.byte, *all, cnt, at, w.byte, 0, w.comm);
	else if (*all)
		memcpy(*all, p, n);
	tfk_free(cnt);
	tfk_free(at);
	return rc;
}

/* The watchdog: when the watched call in flight began (ns, 0: none). */
static struct {
	pthread_t th;
	int running;
	atomic_int on;
	atomic_llong since;
	double secs;
	void (*stalled)(void *, double);
	void *ctx;
} dog;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *watch(void *arg)
{
	long long told = 0;

	(void)arg;
	for (;;) {
		long long t = atomic_load(&dog.since);
		double waited = t ? (double)(now_ns() - t) / 1e9 : 0;

		if (t && t != told && waited > dog.secs) {
			told = t;
			dog.stalled(dog.ctx, waited);
		}
		usleep(200000);
	}
	return NULL;
}

int tfk_mpi_watchdog(double secs, void (*stalled)(void *ctx, double waited),
		     void *ctx, struct tfk_err *err)
{
	dog.secs = secs > 0 ? secs : 1e300;
	dog.stalled = stalled;
	dog.ctx = ctx;
	if (secs <= 0 || dog.running || !w.joined)
		return 0;
	if (pthread_create(&dog.th, NULL, watch, NULL))
		return tfk_errf(err, TFK_ENOMEM, "no thread for the MPI "
				"watchdog");
	pthread_detach(dog.th);
	dog.running = 1;
	return 0;
}

void tfk_mpi_watch(int on)
{
	atomic_store(&dog.on, on);
}

static int reduce(void *x, size_t n, size_t elem, mpi_handle type,
		  mpi_handle op)
{
	int watched = atomic_load(&dog.on) && dog.running;

	if (watched)
		atomic_store(&dog.since, now_ns());
	for (size_t i = 0; i < n; i += CHUNK) {
		size_t k = n - i < CHUNK ? n - i : CHUNK;

		w.allreduce(IN_PLACE, (char *)x + i * elem, (int)k, type, op,
			    w.comm);
	}
	if (watched)
		atomic_store(&dog.since, 0);
	return 0;
}

int tfk_mpi_split(int color, struct tfk_err *err)
{
	mpi_handle c;

	if (!w.joined)
		return 0;
	if (w.split(w.world, color, w.wrank, &c))
		return tfk_errf(err, TFK_EIO, "MPI_Comm_split failed");
	w.comm = c;
	w.comm_rank(w.comm, &w.rank);
	w.comm_size(w.comm, &w.size);
	return 0;
}

int tfk_mpi_world_rank(void)
{
	return w.joined ? w.wrank : 0;
}

int tfk_mpi_world_size(void)
{
	return w.joined ? w.wsize : 1;
}

int tfk_mpi_send(const void *p, size_t n, int to, int tag,
		 struct tfk_err *err)
{
	if (!w.joined)
		return tfk_errf(err, TFK_EINVAL, "a message outside MPI");
	if (n > INT_MAX)
		return tfk_errf(err, TFK_EINVAL, "a message of %zu bytes: at "
				"most %d", n, INT_MAX);
	w.send(p, (int)n, w.byte, to, tag, w.world);
	return 0;
}

int tfk_mpi_peek(int from, int tag, int wait, int *src, int *got_tag,
		 size_t *n)
{
	struct status st;
	int flag = 1, cnt = 0;

	if (!w.joined)
		return 0;
	/* waiting sleeps between polls (10 us, doubling to 1 ms): MPI_Probe
	 * spins, and the input service's waits would take the cores its
	 * pipelines need */
	for (long nap = 10000;; nap = nap < 1000000 ? nap * 2 : nap) {
		w.iprobe(from, tag, w.world, &flag, &st);
		if (flag || !wait)
			break;
		nanosleep(&(struct timespec){ 0, nap }, NULL);
	}
	if (!flag)
		return 0;
	w.get_count(&st, w.byte, &cnt);
	*src = st.source;
	*got_tag = st.tag;
	*n = (size_t)cnt;
	return 1;
}

int tfk_mpi_recv(void *p, size_t n, int from, int tag, struct tfk_err *err)
{
	struct status st;

	if (!w.joined)
		return tfk_errf(err, TFK_EINVAL, "a message outside MPI");
	w.recv(p, (int)n, w.byte, from, tag, w.world, &st);
	return 0;
}

int tfk_mpi_sum_f32(float *x, size_t n, struct tfk_err *err)
{
	(void)err;
	return w.joined ? reduce(x, n, sizeof(*x), w.f32, w.sum) : 0;
}

int tfk_mpi_sum_f64(double *x, size_t n, struct tfk_err *err)
{
	(void)err;
	return w.joined ? reduce(x, n, sizeof(*x), w.f64, w.sum) : 0;
}

int tfk_mpi_max_f64(double *x, size_t n, struct tfk_err *err)
{
	(void)err;
	return w.joined ? reduce(x, n, sizeof(*x), w.f64, w.max) : 0;
}

int tfk_mpi_bcast(void *p, size_t n, int root, struct tfk_err *err)
{
	(void)err;
	if (!w.joined)
		return 0;
	for (size_t i = 0; i < n; i += CHUNK) {
		size_t k = n - i < CHUNK ? n - i : CHUNK;

		w.bcast((char *)p + i, (int)k, w.byte, root, w.comm);
	}
	return 0;
}

int tfk_mpi_allgather(const void *p, size_t n, void *all,
		      struct tfk_err *err)
{
	if (!w.joined) {
		memmove(all, p, n);
		return 0;
	}
	if (n > INT_MAX)
		return tfk_errf(err, TFK_EINVAL, "allgather of %zu bytes "
				"per rank: at most %d", n, INT_MAX);
	w.allgather(p, (int)n, w.byte, all, (int)n, w.byte, w.comm);
	return 0;
}

/* Shared windows ------------------------------------------------------------ */

struct tfk_mpi_shm {
	struct tfk_mpi_shm *next;
	mpi_handle win, node;
	float **own;		/* per rank of the group */
	float *common;
};

/* MPI-3's shared-window calls, found once (an MPI without them: none). */
static int shm_syms(void)
{
	static const struct {
		size_t off;
		const char *name;
	} fn[] = {
#define F(field, name) { offsetof(__typeof__(w), field), name }
		F(info_null, "ompi_mpi_info_null"),
		F(split_type, "MPI_Comm_split_type"),
		F(comm_free, "MPI_Comm_free"),
		F(win_alloc_shared, "MPI_Win_allocate_shared"),
		F(win_query, "MPI_Win_shared_query"),
		F(win_lock_all, "MPI_Win_lock_all"),
		F(win_unlock_all, "MPI_Win_unlock_all"),
		F(win_sync, "MPI_Win_sync"), F(win_free, "MPI_Win_free"),
		F(barrier, "MPI_Barrier"),
#undef F
	};

	if (w.shm_tried)
		return w.shm_ok;
	w.shm_tried = 1;
	for (size_t i = 0; i < sizeof(fn) / sizeof(*fn); i++)
		if (!(*(void **)((char *)&w + fn[i].off) = dlsym(w.lib,
								fn[i].name)))
			return 0;
	w.shm_ok = 1;
	return 1;
}

#define COMM_TYPE_SHARED 0	/* OpenMPI's MPI_COMM_TYPE_SHARED */
#define MODE_NOCHECK 1		/* OpenMPI's MPI_MODE_NOCHECK */

int tfk_mpi_shm_new(struct tfk_mpi_shm **sp, size_t n, struct tfk_err *err)
{
	const char *env = getenv("TFK_MPI_SHM");
	struct tfk_mpi_shm *s;
	size_t bytes = (n * sizeof(float) + 63) & ~(size_t)63;
	int node_size = 0, du, r;
	mpi_handle node, win;
	void *base;
	long got;

	*sp = NULL;
	/* the same answer on every rank: the environment is the job's */
	if (!w.joined || w.size < 2 || !n || (env && !strcmp(env, "0")) ||
	    !shm_syms())
		return 0;
	if (w.split_type(w.comm, COMM_TYPE_SHARED, w.rank, w.info_null,
			 &node))
		return tfk_errf(err, TFK_EIO, "MPI_Comm_split_type failed");
	w.comm_size(node, &node_size);
	/* all on one node, or (on every rank alike) not */
	if (node_size != w.size) {
		w.comm_free(&node);
		return 0;
	}
	/* rank 0's segment holds the common floats after its own */
	if (w.win_alloc_shared((long)(w.rank ? bytes : 2 * bytes), 1,
			       w.info_null, node, &base, &win))
		return tfk_errf(err, TFK_EIO, "MPI_Win_allocate_shared "
				"failed");
	s = tfk_calloc(1, sizeof(*s));
	if (s && !(s->own = tfk_calloc((size_t)w.size, sizeof(*s->own)))) {
		tfk_free(s);
		s = NULL;
	}
	/* the others wait at the first barrier; the caller's error ends
	 * the job */
	if (!s)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	s->win = win;
	s->node = node;
	for (r = 0; r < w.size; r++)
		w.win_query(s->win, r, &got, &du, &s->own[r]);
	s->common = s->own[0] + bytes / sizeof(float);
	w.win_lock_all(MODE_NOCHECK, s->win);
	s->next = w.shms;
	w.shms = s;
	*sp = s;
	return 0;
}

float *tfk_mpi_shm_own(const struct tfk_mpi_shm *s, int rank)
{
	return s->own[rank];
}

float *tfk_mpi_shm_common(const struct tfk_mpi_shm *s)
{
	return s->common;
}

void tfk_mpi_shm_barrier(struct tfk_mpi_shm *s)
{
	int watched = atomic_load(&dog.on) && dog.running;

	if (watched)
		atomic_store(&dog.since, now_ns());
	w.win_sync(s->win);
	w.barrier(s->node);
	w.win_sync(s->win);
	if (watched)
		atomic_store(&dog.since, 0);
}

/* Windows are freed together at the end: MPI_Win_free is collective,
 * and a tool's error path on one rank must not wait for the others. */
static void shm_release_all(void)
{
	while (w.shms) {
		struct tfk_mpi_shm *s = w.shms;

		w.shms = s->next;
		w.win_unlock_all(s->win);
		w.win_free(&s->win);
		w.comm_free(&s->node);
		tfk_free(s->own);
		tfk_free(s);
	}
}
