/*
 * mpi.h - the MPI world a tool runs in, with MPI loaded at run time.
 *
 * tfkit links no MPI library: a process started by mpirun (OpenMPI sets
 * OMPI_COMM_WORLD_SIZE) or by srun with PMIx (PMIX_RANK) opens OpenMPI's
 * libmpi.so.40 (or $TFK_MPI_LIB) with dlopen, as OpenBLAS is found at
 * load time, so a machine without OpenMPI runs every tool and only an
 * MPI launch needs the library. Outside such a launch the world is one
 * rank and every collective is the identity.
 *
 * The handles (MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM, ...) are OpenMPI's
 * exported objects (ompi_mpi_comm_world, ...): the ABI of OpenMPI 3 to
 * 5, whose soname is libmpi.so.40. MPICH's integer handles differ; a
 * launch it made (PMI_RANK without OpenMPI's variables) is refused with
 * an error that says so.
 *
 * Errors are MPI's own: the default handler (MPI_ERRORS_ARE_FATAL)
 * ends the job, and mpirun reports which rank failed; a rank that dies
 * makes mpirun stop the others.
 */
#ifndef TFK_MPI_H
#define TFK_MPI_H

#include "util/err.h"

#include <stddef.h>

/*
 * Join the MPI world if the process was launched as a rank of one (see
 * above); otherwise a world of one. Idempotent. 0, or TFK_EIO naming the
 * launch and what failed (no library, a missing symbol, MPI_Init).
 */
int tfk_mpi_init(struct tfk_err *err);
/* Before init: threads will make MPI calls at once (MPI_THREAD_MULTIPLE). */
void tfk_mpi_want_threads(void);
/* Leave the world (MPI_Finalize) if init joined it. */
void tfk_mpi_finalize(void);
/* End every rank of the job now with exit code code (MPI_Abort); in a
 * world of one, exit(code). */
void tfk_mpi_abort(int code);

/* This rank and the world's size (0 and 1 before init or outside MPI). */
int tfk_mpi_rank(void);
int tfk_mpi_size(void);

/* In place, across all ranks: x[i] = the sum of every rank's x[i]. Every
 * rank gets the same bits. 0 (MPI's errors end the job). */
int tfk_mpi_sum_f32(float *x, size_t n, struct tfk_err *err);
int tfk_mpi_sum_f64(double *x, size_t n, struct tfk_err *err);
/* In place: x[i] = the largest of every rank's x[i]. */
int tfk_mpi_max_f64(double *x, size_t n, struct tfk_err *err);
/* Rank root's n bytes at p to every rank's p. */
int tfk_mpi_bcast(void *p, size_t n, int root, struct tfk_err *err);
/* Every rank's n bytes at p, in rank order, into all (size * n bytes),
 * on every rank. */
int tfk_mpi_allgather(const void *p, size_t n, void *all,
		      struct tfk_err *err);

/*
 * Every rank's n bytes at p (n may differ by rank) to rank 0: there
 * *all gets them end to end (tfk_malloc'd; the caller frees) and
 * sizes[r] rank r's count (sizes has tfk_mpi_size() entries); on the
 * other ranks *all is NULL. At most INT_MAX bytes in all. 0,
 * TFK_EINVAL (too many bytes), TFK_ENOMEM.
 */
int tfk_mpi_gather(const void *p, size_t n, void **all, size_t *sizes,
		   struct tfk_err *err);

/*
 * Split the world: the ranks passing the same color form a group, and
 * from then on tfk_mpi_rank, tfk_mpi_size and every collective above
 * (sums, broadcasts, gathers) are the group's; the messages below still
 * address ranks of the whole world. Call once, on every rank.
 */
int tfk_mpi_split(int color, struct tfk_err *err);
/* This rank and the size of the whole world, whatever the split. */
int tfk_mpi_world_rank(void);
int tfk_mpi_world_size(void);

/* Messages between world ranks, matched by tag (>= 0). */
#define TFK_MPI_ANY (-1)	/* any source (receive) */
/* Send n bytes to world rank to (MPI_Send: small messages return at
 * once, large ones when the receiver takes them). */
int tfk_mpi_send(const void *p, size_t n, int to, int tag,
		 struct tfk_err *err);
/*
 * Is a message from world rank from (or TFK_MPI_ANY) with tag (or
 * TFK_MPI_ANY) waiting? wait 1: block until one is. 1 with its source,
 * tag and size, or 0 (wait 0, none yet). Waiting sleeps between polls
 * (up to 1 ms), leaving the cores to others.
 */
int tfk_mpi_peek(int from, int tag, int wait, int *src, int *got_tag,
		 size_t *n);
/* Receive that message: exactly n bytes into p. */
int tfk_mpi_recv(void *p, size_t n, int from, int tag, struct tfk_err *err);

/*
 * Node-shared memory for sums (MPI-3 shared windows). When every rank
 * of the group is on one node (MPI_Comm_split_type's shared type), each
 * rank gets n floats of its own that every other rank can read and
 * write, and all share n more (rank 0's segment holds them): a sum made
 * there needs no message, each rank adding up its slice of every
 * rank's floats. Collective: call on every rank with the same n. *s is
 * NULL (and 0 returned) for a world of one, a group over several nodes,
 * or TFK_MPI_SHM=0 in the environment: sum with tfk_mpi_sum_f32 then.
 * MPI's errors end the job. The memory stays until tfk_mpi_finalize
 * frees every window (freeing one is collective, and an error path on
 * one rank must not wait for the others).
 */
struct tfk_mpi_shm;
int tfk_mpi_shm_new(struct tfk_mpi_shm **s, size_t n, struct tfk_err *err);
/* Rank r's n floats (r in the group), and the shared n floats. */
float *tfk_mpi_shm_own(const struct tfk_mpi_shm *s, int rank);
float *tfk_mpi_shm_common(const struct tfk_mpi_shm *s);
/* Wait for every rank of the group; what any rank wrote before it is
 * seen by every rank after it (MPI_Win_sync, MPI_Barrier, MPI_Win_sync).
 * Watched by the watchdog as the sums are. */
void tfk_mpi_shm_barrier(struct tfk_mpi_shm *s);

/*
 * A watchdog on the sums: while a tfk_mpi_sum_* call made after
 * tfk_mpi_watch(1) has waited more than secs seconds, stalled(ctx,
 * waited) is called once, from the watchdog's own thread (it may only
 * print; the sum goes on waiting: MPI's launcher decides the job's end,
 * e.g. on a lost daemon). Starts the thread at the first call; secs <= 0
 * stops watching. 0 or TFK_ENOMEM.
 */
int tfk_mpi_watchdog(double secs, void (*stalled)(void *ctx, double waited),
		     void *ctx, struct tfk_err *err);
/* Watch the sums from now (on 1) or not (0): the steps, not the
 * epoch-end waits for rank 0's checkpoints. */
void tfk_mpi_watch(int on);

#endif
