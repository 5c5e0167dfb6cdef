/*
 * tfk-filter: keep the records for which an expression holds.
 *
 * The counterpart of tf.data's Dataset.filter(predicate), where the
 * predicate is a Python function traced into a graph. Here it is a
 * small expression language (lib/data/expr.h: comparisons, and/or/not,
 * arithmetic, len/has, f[i], string prefix and regex matches, a seeded
 * random()) parsed once, before any record is read, so a typo is an
 * error with a column, not a failure an hour into the data.
 *
 * Each record is decoded as a tf.Example (zero-copy), the expression is
 * evaluated, and a kept record is written out with its original framed
 * bytes (the crcs were just verified), so filtering never changes a
 * record. random() depends only on --seed and the record's position in
 * the whole input stream (0 for the first record of the first file),
 * so a run is reproducible and independent of anything else.
 */
#include "data/expr.h"
#include "example/example.h"
#include "io/record.h"
#include "util/cli.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *out_path = "-", *comp_arg = "none";
static long seed;
static int verbose;

static const struct tfk_opt opts[] = {
	TFK_OPT_STR('o', "output", &out_path, "FILE",
		    "write the kept records to FILE, atomically (-: stdout)"),
	TFK_OPT_STR(0, "compression", &comp_arg, "TYPE",
		    "compress the output: none, gzip or zlib"),
	TFK_OPT_LONG(0, "seed", &seed, "S", "seed of random()"),
	TFK_OPT_FLAG('v', "verbose", &verbose,
		     "report kept and dropped counts on stderr"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-filter",
	"[options] EXPR [FILE...]",
	"keep the tf.Example records for which an expression holds",
	"tfk-filter 'label == 3 and len(tokens) > 5' train.tfrecord | "
	"tfk-count\n  tfk-filter --seed 1 'random() < 0.1' all.tfrecord "
	"-o sample.tfrecord",
};

static struct tfk_expr *expr;
static struct tfk_rec_writer *w;
static struct tfk_example ex;
static uint64_t n_in, n_kept;

/* The line of src holding off, then a caret under off. */
static void show_caret(const char *src, size_t off)
{
	size_t start = off, end = off, i;

	while (start > 0 && src[start - 1] != '\n')
		start--;
	while (src[end] && src[end] != '\n')
		end++;
	fprintf(stderr, "  %.*s\n  ", (int)(end - start), src + start);
	for (i = start; i < off; i++)
		fputc(src[i] == '\t' ? '\t' : ' ', stderr);
	fputs("^\n", stderr);
}

static int filter_file(const char *path, struct tfk_err *err)
{
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	int rc;

	rc = tfk_rec_open(&r, path, TFK_COMP_AUTO, TFK_REC_READAHEAD, err);
	if (rc)
		return rc;
	while ((rc = tfk_rec_next(r, &rec, err)) == 1) {
		rc = tfk_example_parse(&ex, rec.data, rec.len, err);
		if (rc) {
			tfk_err_prefix(err, "%s: record %" PRIu64 " at byte %"
				       PRIu64 ": bad tf.Example",
				       tfk_rec_path(r), rec.index, rec.off);
			break;
		}
		rc = tfk_expr_eval(expr, &ex, n_in++, err);
		if (rc < 0) {
			tfk_err_prefix(err, "%s: record %" PRIu64 " at byte %"
				       PRIu64, tfk_rec_path(r), rec.index,
				       rec.off);
			break;
		}
		if (!rc)
			continue;
		n_kept++;
		rc = tfk_recw_write_framed(w, rec.data - TFK_REC_HEADER,
					   rec.len + TFK_REC_OVERHEAD, err);
		if (rc)
			break;
	}
	tfk_rec_close(r);
	return rc < 0 ? rc : 0;
}

int main(int argc, char **argv)
{
	static char *stdin_only[] = { "-" };
	struct tfk_err err;
	char **files;
	size_t off = 0;
	int i, n, comp, rc = 0;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (argc < 1)
		tfk_cli_usage_error("missing EXPR");
	comp = tfk_comp_parse(comp_arg);
	if (comp < 0 || comp == TFK_COMP_AUTO)
		tfk_cli_usage_error("--compression: expected none, gzip or "
				    "zlib, got '%s'", comp_arg);
	if (tfk_expr_parse(&expr, argv[0], &off, &err)) {
		tfk_cli_fail(&err);
		if (err.code == TFK_EINVAL)
			show_caret(argv[0], off);
		return 2;
	}
	tfk_expr_set_seed(expr, (uint64_t)seed);
	files = argc > 1 ? argv + 1 : stdin_only;
	n = argc > 1 ? argc - 1 : 1;

	if (!strcmp(out_path, "-"))
		fcntl(1, F_SETPIPE_SZ, 1 << 20);
	if (tfk_recw_open(&w, out_path, comp, &err)) {
		tfk_expr_free(expr);
		return tfk_cli_fail(&err);
	}
	tfk_example_init(&ex);
	for (i = 0; i < n && !rc; i++)
		rc = filter_file(files[i], &err);
	if (!rc) {
		rc = tfk_recw_close(w, &err);
	} else if (strcmp(out_path, "-")) {
		tfk_recw_discard(w);	/* a file named by -o: nothing */
	} else {
		struct tfk_err ignored;	/* stdout keeps what came before */

		tfk_recw_close(w, &ignored);
	}
	if (verbose)
		tfk_cli_warn("kept %" PRIu64 " of %" PRIu64 " records, "
			     "dropped %" PRIu64, n_kept, n_in, n_in - n_kept);
	tfk_example_release(&ex);
	tfk_expr_free(expr);
	return rc ? tfk_cli_fail(&err) : 0;
}
