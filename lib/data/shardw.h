/*
 * shardw.h - sharded record output shared by the converters.
 *
 * TensorFlow's recommendation for large datasets is many files of
 * 100-200 MB. A shard writer takes records and writes them either to
 * stdout (no prefix, or "-") or to
 *
 *   PREFIX-00000-of-00004.tfrecord[.gz|.zlib]
 *
 * closing a shard once it holds --shard-size bytes (framed, before
 * compression), or spreading records round-robin over --num-shards files
 * (record i -> shard i % N, so every shard is open from the start;
 * --num-shards wins over --shard-size). With --shard-size the shard
 * count is known only at the end: shards are written under temporary
 * names (tracked, so a kill removes them) and renamed all at once by
 * tfk_shardw_close. A failed or killed run leaves no file matching
 * PREFIX-*-of-*. A run that writes no record still makes one empty
 * shard. Once the new set is in place, close removes shards of an
 * earlier run under the same PREFIX that are not part of it (another
 * count or compression), so PREFIX-* never mixes two runs.
 *
 * Job arrays: when --shard I/N (or Slurm/MPI) splits the inputs over
 * N > 1 tasks, tfk_conv_check appends "-taskIIIII" to -o PREFIX, so task
 * 3 of 8 writes PREFIX-task00003-00000-of-00002.tfrecord ... and
 * PREFIX-task00003.schema.json; all tasks may share one -o and never
 * clash. A glob PREFIX-task*-of-* reads the whole corpus.
 *
 * Every converter also shares one option set; TFK_CONV_OPTS expands to
 * the option-table entries and tfk_conv_* reads them.
 */
#ifndef TFK_SHARDW_H
#define TFK_SHARDW_H

#include <stddef.h>
#include <stdint.h>

#include "util/cli.h"
#include "util/err.h"

struct tfk_shardw_opts {
	const char *prefix;	/* NULL or "-": stdout, one stream */
	uint64_t shard_size;	/* bytes per shard; 0 = unlimited */
	long num_shards;	/* > 0: round-robin over exactly N files */
	int comp;		/* enum tfk_comp (not AUTO) */
};

struct tfk_shardw;

/*
 * Start writing. Round-robin mode creates its N temporaries now; by-size
 * mode creates each shard at its first record. Errors: TFK_EINVAL (comp
 * AUTO or unknown, num_shards outside 0..99999), TFK_EIO (cannot create
 * a temporary: the message names the shard), TFK_ENOMEM. One writer is
 * used from one thread (the pool's deliver side).
 */
int tfk_shardw_open(struct tfk_shardw **w, const struct tfk_shardw_opts *o,
		    struct tfk_err *err);
/* Frame and write one record to the current shard. Errors: TFK_EIO,
 * TFK_ENOMEM, TFK_EINVAL past 99999 shards; after any error the writer
 * refuses further writes and close, and only discard makes sense. */
int tfk_shardw_write(struct tfk_shardw *w, const void *data, size_t len,
		     struct tfk_err *err);
/* Finish every shard, rename all to their final names, remove stale
 * shards of an earlier run; frees w. On failure nothing of this run
 * remains under a final name. */
int tfk_shardw_close(struct tfk_shardw *w, struct tfk_err *err);
/* Remove everything written; frees w. NULL ok. */
void tfk_shardw_discard(struct tfk_shardw *w);
uint64_t tfk_shardw_records(const struct tfk_shardw *w);
/* Framed bytes written, before compression. */
uint64_t tfk_shardw_bytes(const struct tfk_shardw *w);
/* Number of shards close will produce (1 for stdout and for a run with
 * no records); call it before close, which frees w. */
long tfk_shardw_shards(const struct tfk_shardw *w);

/* Options every converter takes ----------------------------------------- */

struct tfk_conv {
	const char *out;	/* -o PREFIX */
	uint64_t shard_size;	/* --shard-size, default 128M */
	long num_shards;	/* --num-shards, default 0 (by size) */
	const char *compression;	/* --compression none|gzip|zlib */
	long jobs;		/* -j, default 1 */
	long seed;		/* --seed, default 0 */
	const char *shard;	/* --shard I/N (input files) */
	int progress, quiet;	/* --progress, -q */
};

#define TFK_CONV_DEFAULTS { NULL, UINT64_C(128) << 20, 0, "none", 1, 0, \
			    NULL, 0, 0 }

#define TFK_CONV_OPTS(c) \
	TFK_OPT_STR('o', "output", &(c).out, "PREFIX", \
		    "write shards PREFIX-NNNNN-of-NNNNN.tfrecord and PREFIX.schema.json (default: stdout)"), \
	TFK_OPT_SIZE(0, "shard-size", &(c).shard_size, "SIZE", \
		     "start a new shard after SIZE bytes (K, M, G suffixes)"), \
	TFK_OPT_LONG(0, "num-shards", &(c).num_shards, "N", \
		     "exactly N shards, records round-robin (0: by --shard-size)"), \
	TFK_OPT_STR(0, "compression", &(c).compression, "TYPE", \
		    "none, gzip or zlib"), \
	TFK_OPT_LONG('j', "jobs", &(c).jobs, "N", \
		     "worker threads; output is identical for every N"), \
	TFK_OPT_LONG(0, "seed", &(c).seed, "S", "random seed"), \
	TFK_OPT_STR(0, "shard", &(c).shard, "I/N", \
		    "process every N-th input file from the I-th (default from Slurm/MPI)"), \
	TFK_OPT_FLAG(0, "progress", &(c).progress, "show progress even when stderr is not a terminal"), \
	TFK_OPT_FLAG('q', "quiet", &(c).quiet, "no progress and no summary")

/*
 * Check c after parsing: compression name, 1 <= jobs <= 1024,
 * 0 <= num_shards <= 99999 (and > 1 only with -o), --shard syntax, a
 * PREFIX that is not a directory ("out/"); fills o (for tfk_shardw_open;
 * o->prefix stays valid until the next call) and shard_i, shard_n.
 * Calls tfk_cli_usage_error (exit 2) on a bad value.
 */
void tfk_conv_check(const struct tfk_conv *c, struct tfk_shardw_opts *o,
		    long *shard_i, long *shard_n);
/* PREFIX.schema.json for c->out (with the "-taskIIIII" part when the
 * input is split over tasks), or NULL when writing to stdout. The
 * string is malloc'd; free with tfk_free. */
char *tfk_conv_schema_path(const struct tfk_conv *c);

#endif
