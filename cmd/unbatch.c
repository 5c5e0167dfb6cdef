/*
 * tfk-unbatch: split batched records (from tfk-batch) back into their
 * rows, as tf.data's Dataset.unbatch.
 *
 * Each input record must be a batched record (lib/data/batch.h): its
 * `_batch` feature says how many rows it holds, NAME/row_lengths how a
 * ragged or padded feature splits. Padding is dropped, so the rows come
 * back exactly as tfk-batch received them (byte for byte for records
 * encoded as TensorFlow encodes them). Unlike tf.data's unbatch, which
 * splits every component along its first dimension and needs the
 * element spec for that, the layout is read from each record itself.
 * A record that is not a batched one is an error, not passed through:
 * a pipeline that forgot its tfk-batch should fail loudly.
 */
#include "data/batch.h"
#include "io/record.h"
#include "util/cli.h"

#include <fcntl.h>
#include <inttypes.h>
#include <string.h>

static const char *out_path = "-";

static const struct tfk_opt opts[] = {
	TFK_OPT_STR('o', "output", &out_path, "FILE",
		    "write to FILE (appears when complete) instead of stdout"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-unbatch",
	"[options] [FILE...]",
	"split batched records (from tfk-batch) back into tf.Examples",
	"tfk-cat batches.tfrecord | tfk-unbatch | tfk-count",
};

static struct tfk_batch bt;
static struct tfk_rec_writer *w;

static int unbatch_file(const char *path, struct tfk_err *err)
{
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	const uint8_t *p;
	size_t i, len;
	int rc;

	if ((rc = tfk_rec_open(&r, path, TFK_COMP_AUTO, 0, err)))
		return rc;
	while ((rc = tfk_rec_next(r, &rec, err)) == 1) {
		rc = tfk_batch_parse(&bt, rec.data, rec.len, err);
		for (i = 0; !rc && i < bt.n_rows; i++) {
			rc = tfk_batch_row(&bt, i, &p, &len, err);
			if (!rc)
				rc = tfk_recw_write(w, p, len, err);
		}
		if (rc) {
			if (rc != TFK_EIO)
				tfk_err_prefix(err, "%s: record %" PRIu64
					       " at byte %" PRIu64,
					       tfk_rec_path(r), rec.index,
					       rec.off);
			break;
		}
	}
	tfk_rec_close(r);
	return rc;
}

int main(int argc, char **argv)
{
	struct tfk_err err;
	int i, rc = 0;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	tfk_batch_init(&bt);
	if (!strcmp(out_path, "-"))
		fcntl(1, F_SETPIPE_SZ, 1 << 20);
	if (tfk_recw_open(&w, out_path, TFK_COMP_NONE, &err))
		return tfk_cli_fail(&err);
	if (argc == 0)
		rc = unbatch_file("-", &err);
	for (i = 0; i < argc && !rc; i++)
		rc = unbatch_file(argv[i], &err);
	if (!rc)
		rc = tfk_recw_close(w, &err);
	else if (strcmp(out_path, "-"))
		tfk_recw_discard(w);
	else
		tfk_recw_close(w, &(struct tfk_err){ 0 });
	if (rc)
		rc = tfk_cli_fail(&err);
	tfk_batch_release(&bt);
	return rc;
}
