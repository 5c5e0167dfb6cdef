/*
 * tfk-index: write FILE.idx, one "OFFSET LENGTH" line per record.
 *
 * The index is the text format of NVIDIA DALI's tfrecord2idx, so DALI's
 * readers can use ours and tfk-cat --records / tfk-count can use DALI's.
 * TensorFlow itself has no record index: tf.data reaches record N by
 * reading the N records before it. Unlike tfrecord2idx, every record is
 * verified (both crcs) while indexing, so an index never describes a
 * corrupt file, and compressed files are refused instead of indexed
 * with offsets into the compressed bytes, which no reader could seek to.
 * Each index appears atomically (temporary name, then rename).
 */
#include "io/index.h"
#include "io/record.h"
#include "util/alloc.h"
#include "util/cli.h"

#include <string.h>

static const struct tfk_opt opts[] = {
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-index",
	"FILE...",
	"write FILE.idx (\"OFFSET LENGTH\" per record, DALI's format) for "
	"each TFRecord file",
	"tfk-index train-*.tfrecord && tfk-count train-*.tfrecord",
};

static int index_file(const char *path)
{
	struct tfk_rec_reader *r;
	struct tfk_index ix;
	struct tfk_err err;
	char *idx;
	int rc;

	if (!strcmp(path, "-")) {
		tfk_cli_warn("-: cannot index standard input (offsets need a "
			     "file)");
		return 1;
	}
	rc = tfk_rec_open(&r, path, TFK_COMP_AUTO, 0, &err);
	if (rc)
		return tfk_cli_fail(&err);
	tfk_index_init(&ix);
	rc = tfk_index_scan(&ix, r, &err);
	tfk_rec_close(r);
	if (!rc) {
		idx = tfk_index_path(path);
		rc = idx ? tfk_index_write(&ix, idx, &err) :
			   tfk_errf(&err, TFK_ENOMEM, "out of memory");
		tfk_free(idx);
	}
	tfk_index_release(&ix);
	return rc ? tfk_cli_fail(&err) : 0;
}

int main(int argc, char **argv)
{
	int i, rc = 0;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (argc == 0)
		tfk_cli_usage_error("no input files");
	for (i = 0; i < argc; i++)
		rc |= index_file(argv[i]);
	return rc;
}
