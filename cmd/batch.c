/*
 * tfk-batch: merge N consecutive tf.Examples into one batched Example,
 * as tf.data's Dataset.batch / padded_batch / ragged_batch.
 *
 * The batched record is itself a tf.Example (layout in lib/data/batch.h
 * and tfk-records(5)): `_batch` = [rows], each feature's values row
 * after row, and NAME/row_lengths for ragged or padded features, so a
 * consumer needs no side information and tfk-unbatch restores every
 * row byte for byte. Unlike tf.data, which fixes each feature's batched
 * shape from the dataset's element spec, a feature here is fixed-length
 * or ragged per batch, as the rows show; --ragged NAME makes it ragged
 * in every batch so all batches have the same features.
 *
 * Files are read one after another as one stream (batches span files,
 * as TFRecordDataset(files).batch(N)). Records are copied into one
 * arena as they arrive (the reader's window moves on), decoded in place
 * when the batch is full and merged into one reused buffer: no
 * allocation per record once the buffers have grown.
 */
#include "data/batch.h"
#include "example/example.h"
#include "io/record.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cli.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int drop_remainder;
static long pad_to;
static const char *out_path = "-";
static struct tfk_strlist pads, raggeds;

static const struct tfk_opt opts[] = {
	TFK_OPT_FLAG(0, "drop-remainder", &drop_remainder,
		     "drop a last batch of fewer than N records"),
	TFK_OPT_LIST(0, "pad", &pads, "FEATURE=VALUE",
		     "pad FEATURE's rows with VALUE to the longest row (or "
		     "--pad-to), keeping the row lengths (repeatable)"),
	TFK_OPT_LONG(0, "pad-to", &pad_to, "LEN",
		     "pad --pad features to LEN values instead of the longest "
		     "row (0: longest)"),
	TFK_OPT_LIST(0, "ragged", &raggeds, "FEATURE",
		     "write FEATURE/row_lengths in every batch, even when the "
		     "rows have equal lengths (repeatable)"),
	TFK_OPT_STR('o', "output", &out_path, "FILE",
		    "write to FILE (appears when complete) instead of stdout"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-batch",
	"[options] N [FILE...]",
	"merge N consecutive tf.Examples into one batched record",
	"tfk-cat --interleave 4 train-*.tfrecord | tfk-batch 32 > batches.tfrecord",
};

/* Where each row of the batch being filled came from. */
struct row {
	const char *path;
	uint64_t index, off;
	size_t at, len;		/* its bytes in the arena */
};

static size_t batch_n;
static struct row *rows;
static struct tfk_example *ex;
static size_t n_rows, n_ex;
static struct tfk_buf arena;
static struct tfk_batcher batcher;
static struct tfk_rec_writer *w;

static int row_fail(const struct row *r, struct tfk_err *err)
{
	return tfk_err_prefix(err, "%s: record %" PRIu64 " at byte %" PRIu64,
			      r->path, r->index, r->off);
}

static int flush_batch(struct tfk_err *err)
{
	const uint8_t *p;
	size_t i, len, bad;
	int rc;

	for (i = 0; i < n_rows; i++) {
		rc = tfk_example_parse(&ex[i], arena.data + rows[i].at,
				       rows[i].len, err);
		if (rc) {
			tfk_err_prefix(err, "bad tf.Example");
			return row_fail(&rows[i], err);
		}
	}
	rc = tfk_batch_build(&batcher, ex, n_rows, &p, &len, &bad, err);
	if (rc)
		return row_fail(&rows[bad], err);
	n_rows = 0;
	tfk_buf_reset(&arena);
	return tfk_recw_write(w, p, len, err);
}

static int add_row(const char *path, const struct tfk_rec *rec,
		   struct tfk_err *err)
{
	struct row *r;

	if (n_rows == n_ex) {
		size_t n = n_ex ? 2 * n_ex : 16, i;
		void *p;

		if (n > batch_n)
			n = batch_n;
		if (!(p = tfk_realloc(rows, n * sizeof(*rows))))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		rows = p;
		if (!(p = tfk_realloc(ex, n * sizeof(*ex))))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		ex = p;
		for (i = n_ex; i < n; i++)
			tfk_example_init(&ex[i]);
		n_ex = n;
	}
	r = &rows[n_rows++];
	r->path = path;
	r->index = rec->index;
	r->off = rec->off;
	r->at = arena.len;
	r->len = rec->len;
	tfk_buf_add(&arena, rec->data, rec->len);
	if (!tfk_buf_ok(&arena))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	return n_rows == batch_n ? flush_batch(err) : 0;
}

static int batch_file(const char *path, struct tfk_err *err)
{
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	int rc;

	if ((rc = tfk_rec_open(&r, path, TFK_COMP_AUTO, 0, err)))
		return rc;
	/* Not tfk_rec_path: rows outlive the reader when batches span
	 * files. */
	if (!strcmp(path, "-"))
		path = "<stdin>";
	while ((rc = tfk_rec_next(r, &rec, err)) == 1)
		if ((rc = add_row(path, &rec, err)))
			break;
	tfk_rec_close(r);
	return rc;
}

static void setup(void)
{
	struct tfk_err err;
	size_t i;

	tfk_batcher_init(&batcher);
	if (pad_to < 0)
		tfk_cli_usage_error("--pad-to: %ld is negative", pad_to);
	if (pad_to && !pads.n)
		tfk_cli_usage_error("--pad-to needs --pad FEATURE=VALUE");
	tfk_batcher_pad_to(&batcher, (size_t)pad_to);
	for (i = 0; i < pads.n; i++) {
		const char *eq = strchr(pads.v[i], '=');
		char *name;
		int rc;

		if (!eq || eq == pads.v[i])
			tfk_cli_usage_error("--pad %s: want FEATURE=VALUE",
					    pads.v[i]);
		name = strndup(pads.v[i], (size_t)(eq - pads.v[i]));
		if (!name) {
			tfk_cli_warn("out of memory");
			exit(1);
		}
		rc = tfk_batcher_pad(&batcher, name, eq + 1, &err);
		free(name);
		if (rc == TFK_EINVAL)
			tfk_cli_usage_error("--pad: %s", err.msg);
		if (rc)
			exit(tfk_cli_fail(&err));
	}
	for (i = 0; i < raggeds.n; i++) {
		int rc = tfk_batcher_ragged(&batcher, raggeds.v[i], &err);

		if (rc == TFK_EINVAL)
			tfk_cli_usage_error("--ragged: %s", err.msg);
		if (rc)
			exit(tfk_cli_fail(&err));
	}
}

int main(int argc, char **argv)
{
	struct tfk_err err;
	char *end;
	long n;
	int i, rc = 0;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (argc < 1)
		tfk_cli_usage_error("missing N, the records per batch");
	n = strtol(argv[0], &end, 10);
	if (!*argv[0] || *end || n < 1 || n > INT32_MAX)
		tfk_cli_usage_error("N: want a record count from 1 to %d, "
				    "not \"%s\"", INT32_MAX, argv[0]);
	batch_n = (size_t)n;
	setup();
	tfk_buf_init(&arena);
	if (!strcmp(out_path, "-"))
		fcntl(1, F_SETPIPE_SZ, 1 << 20);
	if (tfk_recw_open(&w, out_path, TFK_COMP_NONE, &err))
		return tfk_cli_fail(&err);
	if (argc == 1)
		rc = batch_file("-", &err);
	for (i = 1; i < argc && !rc; i++)
		rc = batch_file(argv[i], &err);
	if (!rc && n_rows && !drop_remainder)
		rc = flush_batch(&err);
	if (!rc)
		rc = tfk_recw_close(w, &err);
	else if (strcmp(out_path, "-"))
		tfk_recw_discard(w);
	else
		tfk_recw_close(w, &(struct tfk_err){ 0 });
	if (rc)
		rc = tfk_cli_fail(&err);
	for (i = 0; (size_t)i < n_ex; i++)
		tfk_example_release(&ex[i]);
	tfk_free(ex);
	tfk_free(rows);
	tfk_buf_release(&arena);
	tfk_batcher_release(&batcher);
	return rc;
}
