/*
 * gradsync.h - data-parallel gradients: each step's gradients summed
 * across the ranks of an MPI job (util/mpi.h) while the backward pass
 * still runs, so that every rank applies the same update.
 *
 * The tensors to reduce are fetches of the training executor. They are
 * laid out, in the order the executor makes them final, in one fusion
 * buffer cut into buckets of at most bucket_bytes (Horovod's tensor
 * fusion; its default threshold, 64 MiB, is TFK_GRADSYNC_BUCKET). When
 * the executor reports a fetch final (exec.h tfk_exec_on_fetch), it is
 * copied in, scaled by this rank's weight (its rows in the batch), and
 * each bucket whose tensors are all in is summed at once (MPI_Allreduce),
 * between the backward pass's kernels, not after all of them. A header
 * rides in the first bucket: the weight and whether this rank's loss
 * was finite, so the sum tells every rank the global batch size and
 * whether any rank saw a non-finite loss.
 *
 * After end every value is the weighted mean over all ranks' rows
 * (sum of w_r x_r / sum of w_r): for per-batch means (gradients of a
 * mean loss, batch statistics) exactly what one rank would compute on
 * the union of the batches, up to float summation order.
 */
#ifndef TFK_GRADSYNC_H
#define TFK_GRADSYNC_H

#include "graph/exec.h"
#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

#define TFK_GRADSYNC_BUCKET ((size_t)64 << 20)

struct tfk_gradsync;

/*
 * A sync of n fetches of x: fetch[k] (an index into x's fetches) is a
 * float32 tensor shaped as like[k] (its variable). loss_fetch is the fetch of the scalar loss
 * (whose finiteness the header carries). bucket_bytes 0: the default.
 * Installs itself as x's on_fetch. 0, TFK_ENOMEM; *gs NULL on failure.
 */
int tfk_gradsync_new(struct tfk_gradsync **gs, struct tfk_exec *x, int n,
		     const int *fetch, const struct tfk_tensor *const *like,
		     int loss_fetch,
		     size_t bucket_bytes, struct tfk_err *err);
void tfk_gradsync_free(struct tfk_gradsync *gs);

/* The next run of x contributes with weight w (its rows, > 0); total,
 * when > 0, is the sum of every rank's w for this step, known ahead (the
 * copies are then the means' terms, and no pass after the sum is
 * needed; end checks the sum). */
void tfk_gradsync_begin(struct tfk_gradsync *gs, double w, double total);
/* This rank has no rows this step: contribute nothing (weight 0, zeros)
 * and take part in the sums, in place of a run; total as for begin. */
int tfk_gradsync_idle(struct tfk_gradsync *gs, double total,
		      struct tfk_err *err);

/*
 * After the run (or idle): make the means. The
 * sum of the weights to *w; the number of ranks whose loss was not
 * finite to *bad (then the values are not meaningful).
 */
int tfk_gradsync_end(struct tfk_gradsync *gs, double *w, int *bad,
		     struct tfk_err *err);
/* The mean of the k-th tensor (like[k]'s shape),
 * valid until the next begin or idle. */
const struct tfk_tensor *tfk_gradsync_value(const struct tfk_gradsync *gs,
					    int k);

/* Buckets the buffer is cut into, and the bytes summed per step. */
int tfk_gradsync_n_buckets(const struct tfk_gradsync *gs);
size_t tfk_gradsync_bytes(const struct tfk_gradsync *gs);

#endif
