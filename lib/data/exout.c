/*
 * exout.c - a converter's output: shards plus schema sidecar (see
 * exout.h).
 *
 * The sidecars are written before any writer is closed, so that a
 * failure to write one still discards every shard: the shards' final
 * names appear only once everything the run promised is in place. The
 * reverse order (close, then write the sidecar) was rejected: a failed
 * sidecar would leave shards without their description. The statistics
 * come from parsing each record again as it is written, which costs
 * little next to making it and keeps the tools from reporting their own
 * view of what they wrote.
 */
#include "data/exout.h"
#include "util/alloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static char *join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 1;
	char *s = tfk_malloc(n);

	if (s)
		snprintf(s, n, "%s%s", a, b);
	return s;
}

int tfk_exout_open(struct tfk_exout *o, const struct tfk_shardw_opts *so,
		   const char *suffix, const char *what, struct tfk_err *err)
{
	struct tfk_shardw_opts wo = *so;

	memset(o, 0, sizeof(*o));
	tfk_schema_init(&o->schema);
	tfk_example_init(&o->ex);
	o->what = what;
	if (so->prefix) {
		o->prefix = join(so->prefix, suffix ? suffix : "");
		if (!o->prefix)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	wo.prefix = o->prefix;
	return tfk_shardw_open(&o->w, &wo, err);
}

int tfk_exout_write(struct tfk_exout *o, const uint8_t *rec, size_t len,
		    struct tfk_err *err)
{
	int rc = tfk_shardw_write(o->w, rec, len, err);

	if (!rc && o->prefix) {
		rc = tfk_example_parse(&o->ex, rec, len, err);
		if (!rc)
			rc = tfk_schema_observe(&o->schema, &o->ex, err);
	}
	if (!rc)
		o->written++;
	return rc;
}

static int write_schema(struct tfk_exout *o,
			int (*describe)(void *ctx, struct tfk_schema *s),
			void *ctx, struct tfk_err *err)
{
	char *path = join(o->prefix, ".schema.json");
	int rc;

	if (!path)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = describe ? describe(ctx, &o->schema) : 0;
	if (rc)
		tfk_errf(err, rc, "out of memory");
	else
		rc = tfk_schema_write(&o->schema, path, err);
	o->schema_written = !rc;
	tfk_free(path);
	return rc;
}

int tfk_exout_finish(struct tfk_exout *o, size_t n, int rc,
		     int (*describe)(void *ctx, struct tfk_schema *s),
		     void *ctx, struct tfk_err *err)
{
	size_t i;

	for (i = 0; i < n && !rc; i++)
		if (o[i].prefix)
			rc = write_schema(&o[i], describe, ctx, err);
	for (i = 0; i < n; i++) {
		if (rc) {
			tfk_shardw_discard(o[i].w);
		} else {
			o[i].bytes = tfk_shardw_bytes(o[i].w);
			o[i].shards = tfk_shardw_shards(o[i].w);
			rc = tfk_shardw_close(o[i].w, err);
		}
		o[i].w = NULL;
	}
	for (i = 0; rc && i < n; i++) {
		char *path;

		if (!o[i].schema_written)
			continue;
		/* no sidecar without its shards; out of memory here leaves
		 * it, which beats failing differently */
		path = join(o[i].prefix, ".schema.json");
		if (path)
			remove(path);
		tfk_free(path);
		o[i].schema_written = 0;
	}
	return rc;
}

void tfk_exout_summary(const struct tfk_exout *o, double seconds, char *buf,
		       size_t n)
{
	snprintf(buf, n, "wrote %" PRIu64 " %s%srecords (%" PRIu64
		 " skipped), %" PRIu64 " bytes, %ld shard%s%s%s in %.2f s",
		 o->written, o->what ? o->what : "", o->what ? " " : "",
		 o->skipped, o->bytes, o->shards, o->shards == 1 ? "" : "s",
		 o->prefix ? " to " : "", o->prefix ? o->prefix : "", seconds);
}

void tfk_exout_release(struct tfk_exout *o)
{
	if (!o)
		return;
	tfk_shardw_discard(o->w);
	o->w = NULL;
	tfk_schema_release(&o->schema);
	tfk_example_release(&o->ex);
	tfk_free(o->prefix);
	o->prefix = NULL;
}
