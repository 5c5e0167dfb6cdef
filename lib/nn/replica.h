/*
 * replica.h - data-parallel training's replicas: every rank of the MPI
 * job (util/mpi.h) holds rank 0's training state, as
 * MultiWorkerMirroredStrategy broadcasts the chief's initial values.
 */
#ifndef TFK_REPLICA_H
#define TFK_REPLICA_H

#include "graph/graph.h"
#include "nn/optim.h"
#include "nn/train.h"
#include "util/err.h"

#include <stdint.h>

/*
 * Rank 0's state to every rank: the bytes of every variable of g (all
 * numeric; a string variable is an error), the optimizer's slots (made
 * first where a rank has none, for the trainer's variables: tr must be
 * prepared) and its iteration count. Call on every rank at once.
 */
int tfk_replica_bcast(struct tfk_graph *g, struct tfk_optim *o,
		      struct tfk_trainer *tr, struct tfk_err *err);

/*
 * Do all ranks hold the same variables and slots, bit for bit? 0 when
 * they do; TFK_EINVAL naming the first rank that differs from rank 0
 * (a hash of every byte compared). Call on every rank at once.
 */
int tfk_replica_check(struct tfk_graph *g, struct tfk_optim *o,
		      struct tfk_err *err);

#endif
