/*
 * exout.h - where a converter's Examples go: a shard writer (shardw.h)
 * plus its PREFIX.schema.json sidecar, and the counts of the summary
 * line every converter prints.
 *
 * A run opens one output (or two: training and validation), writes each
 * record through tfk_exout_write, which also feeds the schema statistics
 * when there is a sidecar (not on stdout), and ends with
 * tfk_exout_finish over all of them at once: every sidecar is written
 * (after the tool describes what the bytes cannot say: shapes, labels,
 * encodings), then every writer is closed. When the run failed, or
 * anything in finishing fails, the shards are discarded and the sidecars
 * this run wrote are removed: no sidecar outlives its shards, and a
 * sidecar of an earlier run is kept when a run fails before its own.
 */
#ifndef TFK_EXOUT_H
#define TFK_EXOUT_H

#include <stddef.h>
#include <stdint.h>

#include "data/shardw.h"
#include "example/example.h"
#include "example/schema.h"
#include "util/err.h"

struct tfk_exout {
	const char *what;	/* "training", "validation" or NULL */
	char *prefix;		/* the shards' PREFIX; NULL: stdout */
	struct tfk_shardw *w;
	struct tfk_schema schema;	/* statistics of what was written */
	struct tfk_example ex;		/* parse scratch for the schema */
	uint64_t written;
	uint64_t skipped;	/* counted by the caller, for the summary */
	uint64_t bytes;		/* after a good finish: framed bytes */
	long shards;		/* after a good finish: shard count */
	int schema_written;	/* this run wrote PREFIX.schema.json */
};

/*
 * Start an output writing to so->prefix + suffix ("" or "-training"),
 * or to stdout when so->prefix is NULL; what names it in the summary
 * (borrowed). o is always left ready for tfk_exout_release, also on
 * failure (as is an all-zero struct). Errors: those of tfk_shardw_open,
 * TFK_ENOMEM.
 */
int tfk_exout_open(struct tfk_exout *o, const struct tfk_shardw_opts *so,
		   const char *suffix, const char *what, struct tfk_err *err);

/* Write one serialized Example (and observe it for the sidecar).
 * Errors: those of tfk_shardw_write, tfk_example_parse and
 * tfk_schema_observe (a record that is not an Example). */
int tfk_exout_write(struct tfk_exout *o, const uint8_t *rec, size_t len,
		    struct tfk_err *err);

/*
 * End the run of o[0..n). With rc == 0: for each output with a PREFIX,
 * describe(ctx, schema) adds what the statistics cannot infer (0 or
 * TFK_ENOMEM) and the sidecar is written; then every writer is closed
 * and bytes/shards filled. With rc != 0, or on the first failure, the
 * rest is discarded and this run's sidecars removed. Returns rc, or the
 * failure, with err filled. The writers are gone afterwards.
 */
int tfk_exout_finish(struct tfk_exout *o, size_t n, int rc,
		     int (*describe)(void *ctx, struct tfk_schema *s),
		     void *ctx, struct tfk_err *err);

/* "wrote 49 training records (0 skipped), 1234 bytes, 1 shard to
 * out/x-training in 0.12 s", after a good finish; written into buf
 * (always terminated). seconds: the run's wall time. */
void tfk_exout_summary(const struct tfk_exout *o, double seconds, char *buf,
		       size_t n);

/* Free what o holds (discarding a writer still open); NULL ok. */
void tfk_exout_release(struct tfk_exout *o);

#endif
