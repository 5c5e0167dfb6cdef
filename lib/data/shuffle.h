/*
 * shuffle.h - tf.data's shuffle: a bounded buffer shuffle and a full
 * external shuffle, over opaque byte strings (usually framed records).
 *
 * Randomness comes only from a 64-bit seed and an epoch number, so the
 * same (seed, epoch) gives the same order on every machine:
 *
 *   splitmix64      Steele, Lea, Flood, "Fast splittable pseudorandom
 *                   number generators" (OOPSLA 2014); the constants are
 *                   those of Vigna's reference splitmix64.c.
 *   xoshiro256**    Blackman, Vigna, "Scrambled linear pseudorandom
 *                   number generators" (2018), seeded from splitmix64
 *                   as its authors recommend.
 *   bounded draws   Lemire, "Fast random integer generation in an
 *                   interval" (ACM TOMACS 2019): unbiased.
 *
 * The generator of epoch e for seed s is xoshiro256** seeded by
 * splitmix64 from tfk_shuffle_epoch_seed(s, e).
 *
 * Buffer shuffle (tfk_shufbuf, tf.data's Dataset.shuffle(N)): the first
 * N records fill the buffer; then each output is a uniformly chosen
 * buffer element, whose place the next input takes; at the end of the
 * input the buffer drains, each output uniform over what is left. So
 * output position j holds an input record with index <= j + N - 1,
 * N = 1 keeps the order, and N >= the input size is a uniform
 * permutation. Records live in one compacting arena, not one malloc
 * each: memory is about twice the live bytes of the buffer at most.
 *
 * Full shuffle (tfk_shufall, every permutation equally likely): input
 * record i of epoch e gets the key splitmix64_i(tfk_shuffle_epoch_seed
 * (s, e)), the i-th output of a splitmix64 stream, and the output is the
 * records in increasing key order. The i-th output of splitmix64 is a
 * bijection of i, so keys never tie and the order does not depend on
 * how the sort was done: in memory, or, when the records exceed the
 * memory limit, as sorted runs spilled to unlinked temporary files and
 * merged (several passes when the runs outnumber the merge fan-in).
 * Later epochs re-key the stored records (from memory or from the runs)
 * without reading the input again.
 */
#ifndef TFK_SHUFFLE_H
#define TFK_SHUFFLE_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

/* The generator --------------------------------------------------------- */

struct tfk_shuffle_rng {
	uint64_t s[4];
};

/* splitmix64's output for state x + 0x9e3779b97f4a7c15 (one step). */
uint64_t tfk_shuffle_splitmix64(uint64_t x);
/* The seed of one epoch's stream: splitmix64 over seed, then epoch. */
uint64_t tfk_shuffle_epoch_seed(uint64_t seed, uint64_t epoch);
/* Seed rng for (seed, epoch). */
void tfk_shuffle_rng_init(struct tfk_shuffle_rng *rng, uint64_t seed,
			  uint64_t epoch);
/* Next 64 random bits (xoshiro256**). */
uint64_t tfk_shuffle_rng_next(struct tfk_shuffle_rng *rng);
/* Uniform integer in [0, n), n >= 1, without bias (Lemire). */
uint64_t tfk_shuffle_rng_below(struct tfk_shuffle_rng *rng, uint64_t n);

/*
 * Where records go: called with each output record in order; data is
 * valid only during the call. Return 0 to go on, or a negative TFK_E*
 * (with err filled) to stop: the caller gets that code back.
 */
typedef int (*tfk_shuffle_emit_fn)(void *ctx, const uint8_t *data,
				   size_t len, struct tfk_err *err);

/* Buffer shuffle ---------------------------------------------------------- */

struct tfk_shufbuf;

/* Statistics of a buffer shuffle (since tfk_shufbuf_new). */
struct tfk_shufbuf_stats {
	uint64_t n_in, n_out;		/* records pushed, emitted */
	uint64_t peak_records;		/* most records held at once */
	uint64_t peak_bytes;		/* most live record bytes held */
	uint64_t peak_arena;		/* largest arena allocated */
};

/*
 * A buffer of n >= 1 records drawing from the generator of (seed,
 * epoch). Errors: TFK_EINVAL (n == 0, or too large for memory indexes),
 * TFK_ENOMEM.
 */
int tfk_shufbuf_new(struct tfk_shufbuf **sb, uint64_t n, uint64_t seed,
		    uint64_t epoch, struct tfk_err *err);
void tfk_shufbuf_free(struct tfk_shufbuf *sb);
/*
 * Add one record (copied). When the buffer is already full, first
 * draws one element, calls emit with it and reuses its place. Returns
 * 0, emit's error, or TFK_ENOMEM.
 */
int tfk_shufbuf_push(struct tfk_shufbuf *sb, const void *data, size_t len,
		     tfk_shuffle_emit_fn emit, void *ctx, struct tfk_err *err);
/* End of input: emit what the buffer holds, in random order. */
int tfk_shufbuf_drain(struct tfk_shufbuf *sb, tfk_shuffle_emit_fn emit,
		      void *ctx, struct tfk_err *err);
/*
 * Start another epoch: forget the contents and draw from the generator
 * of (seed, epoch), keeping the memory. The statistics go on.
 */
void tfk_shufbuf_restart(struct tfk_shufbuf *sb, uint64_t epoch);
void tfk_shufbuf_stats(const struct tfk_shufbuf *sb,
		       struct tfk_shufbuf_stats *st);

/* Full shuffle ------------------------------------------------------------ */

struct tfk_shufall;

struct tfk_shufall_stats {
	uint64_t n_records, n_bytes;	/* stored records, payload bytes */
	uint64_t runs;			/* sorted runs spilled, all epochs */
	uint64_t spill_bytes;		/* bytes written to temporary files */
	uint64_t merge_passes;		/* intermediate merges (fan-in) */
	uint64_t peak_memory;		/* arena + index + run buffers */
};

/*
 * A full shuffle for seed that keeps at most about `memory` bytes
 * (records, their index entries and merge buffers) in memory and spills
 * to unlinked temporary files in tmpdir (NULL: $TMPDIR, else /tmp).
 * A record larger than memory is held alone. Errors: TFK_EINVAL
 * (memory < 4096), TFK_ENOMEM.
 */
int tfk_shufall_new(struct tfk_shufall **sa, uint64_t seed, uint64_t memory,
		    const char *tmpdir, struct tfk_err *err);
/* Closes (and so removes) every temporary file. NULL ok. */
void tfk_shufall_free(struct tfk_shufall *sa);
/*
 * Store the next input record (copied), keyed for epoch 0. May spill a
 * sorted run. Errors: TFK_EIO (temporary file: cannot create or write,
 * disk full), TFK_ENOMEM, TFK_EINVAL after tfk_shufall_emit.
 */
int tfk_shufall_add(struct tfk_shufall *sa, const void *data, size_t len,
		    struct tfk_err *err);
/*
 * Emit every stored record in the order of epoch; may be called again
 * for other epochs (each re-keys and re-sorts, spilling again when the
 * records do not fit). No record may be added after the first call.
 * Returns 0, emit's error, TFK_EIO (temporary files) or TFK_ENOMEM.
 */
int tfk_shufall_emit(struct tfk_shufall *sa, uint64_t epoch,
		     tfk_shuffle_emit_fn emit, void *ctx,
		     struct tfk_err *err);
void tfk_shufall_stats(const struct tfk_shufall *sa,
		       struct tfk_shufall_stats *st);

/*
 * Default memory for a full shuffle: a quarter of the physical memory,
 * in whole MiB, at least 64 MiB. Fixed for a machine, so --help shows
 * the same default every time.
 */
uint64_t tfk_shuffle_default_memory(void);

#endif
