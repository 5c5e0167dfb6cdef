/*
 * inputsvc.h - tfk-train's input service, as the tf.data service: under
 * mpirun with --input-workers K, the last K world ranks run the user's
 * input pipeline (a shell command line of tfkit tools, "{}" standing for
 * a split: one training file, or with --input-split-records N a range of
 * N records of one, fed on the pipeline's standard input, "{}" then
 * /dev/stdin) and stream its records to the trainers, the other ranks,
 * which train data-parallel among themselves.
 *
 * Processing modes, as tf.data service's:
 *   distributed_epoch: a dispatcher (a thread of trainer rank 0) hands
 *     out the splits of each pass on demand, so each record is produced
 *     once per epoch and a slow worker takes fewer splits;
 *   parallel_epochs: every worker runs the pipeline over every split,
 *     so each record comes K times per epoch.
 * "{seed}" in the pipeline is a seed per (--seed, pass, split) in
 * distributed_epoch and per (--seed, pass, worker) in parallel_epochs.
 *
 * Flow control: a trainer asks one worker for a chunk (chunk_records
 * records, at most 4 MiB) when its batch needs rows and waits for it, so a worker only
 * sends to a trainer that is receiving (never blocked by one that is in
 * a gradient sum), and a trainer holds at most one chunk beyond its
 * batch; each worker makes its next chunk while the trainers train. A pass
 * (an epoch) ends for a trainer when every worker has said it has no
 * more records for it; the trainers' gradient sums then find no rows
 * anywhere and the epoch ends.
 *
 * The messages (world ranks, util/mpi.h): WANT(pass) trainer -> worker;
 * REPLY(kind, pass, records) worker -> trainer, kind DATA or END; REQ
 * (pass) worker -> rank 0's dispatcher, answered by SPLIT(index or -1);
 * STOP rank 0 -> workers at the end. A dead worker or trainer ends the
 * job (mpirun names its rank).
 */
#ifndef TFK_TRAIN_INPUTSVC_H
#define TFK_TRAIN_INPUTSVC_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

/* A split: a file, or the bytes [off, off + len) of one (whole
 * records of a plain TFRecord file). */
struct svc_split {
	const char *file;
	int64_t off, len;	/* len < 0: the whole file */
};

/*
 * The splits of files[0..n): each file whole (per 0), or cut into ranges
 * of per records (the last one of a file shorter), found by reading the
 * records' length fields (their CRCs checked). *out (free with
 * tfk_free). Errors (TFK_EIO, TFK_ECORRUPT) name the file and offset: a
 * compressed or corrupt file cannot be cut.
 */
int svc_cut(const char *const *files, int n, long per,
	    struct svc_split **out, int *n_out, struct tfk_err *err);

struct svc_opts {
	const char *pipeline;	/* "{}": the split, "{seed}": a seed */
	const struct svc_split *splits;
	int n_splits;
	int parallel;		/* parallel_epochs, else distributed_epoch */
	int trainers;		/* world ranks [0, trainers) train */
	uint64_t seed;
	const char *log;	/* --input-log prefix, or NULL */
	int chunk_records;	/* records a trainer asks for at a time */
};

/* A worker rank: serve the trainers until rank 0 says stop. 0, or an
 * error naming the pipeline and split (the caller ends the job). */
int svc_worker(const struct svc_opts *o, struct tfk_err *err);

/* A trainer's end of the service (rank 0 also runs the dispatcher). */
struct svc_in;
int svc_in_new(struct svc_in **in, const struct svc_opts *o,
	       struct tfk_err *err);
/*
 * The next record of this pass: 1 with its bytes at *p (valid until the
 * next call), 0 when every worker is done with the pass (then
 * svc_in_next_pass starts the next one).
 */
int svc_in_next(struct svc_in *in, const uint8_t **p, size_t *n,
		struct tfk_err *err);
void svc_in_next_pass(struct svc_in *in);
/* Training is over: rank 0 stops the workers and the dispatcher; then
 * frees. Other ranks only free. */
int svc_in_end(struct svc_in *in, struct tfk_err *err);

#endif
