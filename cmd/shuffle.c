/*
 * tfk-shuffle: shuffle a stream of TFRecords, as tf.data's
 * Dataset.shuffle(buffer_size, seed).repeat(count) does.
 *
 * --buffer N is tf.data's buffer: the first N records fill it, each
 * output is drawn uniformly from it and replaced by the next input,
 * and at the end the buffer drains in random order. Memory is the
 * buffer's records (in one arena, see lib/data/shuffle.c), whatever
 * the input size. --buffer all is a full uniform shuffle, which tf.data
 * can only do with a buffer as large as the data set in memory; here
 * the records spill to sorted runs on disk past --memory and are
 * merged, and the output is the same with or without spilling.
 *
 * Records are opaque: they are checked (both crcs) and kept framed, so
 * the output writes them back without re-framing or parsing them.
 *
 * Differences from tf.data: the generator is ours (xoshiro256** and
 * splitmix64, documented in shuffle.h), not TF's Philox, so the same
 * seed gives a different order than TensorFlow; there is no unseeded
 * mode (the default seed is 0: randomness only from --seed); and
 * --repeat with --buffer N re-reads the files, so it refuses standard
 * input (--buffer all keeps the records and does not need to).
 */
#include "data/shuffle.h"
#include "io/record.h"
#include "util/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t buffer_n;	/* 0: --buffer all */
static int buffer_set;
static uint64_t seed;
static long repeat_n = 1;
static uint64_t memory;
static const char *tmpdir, *out_path = "-", *comp_arg = "none";
static int verbose;

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

static int opt_buffer(const char *arg, void *value)
{
	buffer_set = 1;
	if (!strcmp(arg, "all")) {
		*(uint64_t *)value = 0;
		return 0;
	}
	if (parse_u64(arg, value) || *(uint64_t *)value == 0 ||
	    *(uint64_t *)value >= UINT32_MAX)
		return -1;
	return 0;
}

static int opt_seed(const char *arg, void *value)
{
	return parse_u64(arg, value);
}

static const struct tfk_opt opts[] = {
	TFK_OPT_CALL('b', "buffer", &buffer_n, "N|all",
		     "required: a buffer of N records (up to 2^32-2), or "
		     "a full shuffle", opt_buffer),
	TFK_OPT_CALL('s', "seed", &seed, "S",
		     "seed, 0 to 2^64-1 (default: 0)", opt_seed),
	TFK_OPT_LONG(0, "repeat", &repeat_n, "N",
		     "N epochs, each in a new order (0: forever)"),
	TFK_OPT_SIZE(0, "memory", &memory, "SIZE",
		     "with --buffer all: spill to disk past SIZE bytes, "
		     "a quarter of physical memory by default"),
	TFK_OPT_STR(0, "tmpdir", &tmpdir, "DIR",
		    "spill files go to DIR (default: $TMPDIR, else /tmp)"),
	TFK_OPT_STR('o', "output", &out_path, "FILE",
		    "write FILE (atomically) instead of stdout"),
	TFK_OPT_STR(0, "compression", &comp_arg, "TYPE",
		    "output compression: none, gzip or zlib"),
	TFK_OPT_FLAG('v', "verbose", &verbose,
		     "report memory use and spilling on stderr"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-shuffle",
	"--buffer N|all [options] [FILE...]",
	"shuffle TFRecords through a buffer, or all of them",
	"tfk-cat --interleave 4 train-*.tfrecord | "
	"tfk-shuffle --buffer 10000 --seed 1 | tfk-count",
};

static struct tfk_rec_writer *w;

static int emit(void *ctx, const uint8_t *data, size_t len,
		struct tfk_err *err)
{
	return tfk_recw_write_framed(w, data, len, err);
}

/*
 * Feed every record of the files, framed, to the buffer (sb) or the
 * full shuffle (sa). Errors come located from the reader.
 */
static int read_all(char **files, int n_files, struct tfk_shufbuf *sb,
		    struct tfk_shufall *sa, struct tfk_err *err)
{
	int i, rc = 0;

	for (i = 0; i < n_files && !rc; i++) {
		struct tfk_rec_reader *r;
		struct tfk_rec rec;

		rc = tfk_rec_open(&r, files[i], TFK_COMP_AUTO, 0, err);
		if (rc)
			break;
		while ((rc = tfk_rec_next(r, &rec, err)) == 1) {
			const uint8_t *p = rec.data - TFK_REC_HEADER;
			size_t n = rec.len + TFK_REC_OVERHEAD;

			rc = sb ? tfk_shufbuf_push(sb, p, n, emit, NULL, err) :
				  tfk_shufall_add(sa, p, n, err);
			if (rc)
				break;
		}
		tfk_rec_close(r);
	}
	return rc;
}

static int run_buffer(char **files, int n_files, struct tfk_err *err)
{
	struct tfk_shufbuf *sb;
	struct tfk_shufbuf_stats st;
	uint64_t e;
	int rc = tfk_shufbuf_new(&sb, buffer_n, seed, 0, err);

	if (rc)
		return rc;
	for (e = 0; repeat_n == 0 || e < (uint64_t)repeat_n; e++) {
		uint64_t before = tfk_recw_count(w);

		if (e)
			tfk_shufbuf_restart(sb, e);
		rc = read_all(files, n_files, sb, NULL, err);
		if (!rc)
			rc = tfk_shufbuf_drain(sb, emit, NULL, err);
		if (!rc && repeat_n != 1)
			rc = tfk_recw_flush(w, err);
		/* An empty input repeated forever is still empty. */
		if (rc || tfk_recw_count(w) == before)
			break;
	}
	tfk_shufbuf_stats(sb, &st);
	if (verbose && !rc)
		tfk_cli_warn("buffer of %" PRIu64 " records: peak %" PRIu64
			     " records, %" PRIu64 " bytes (%" PRIu64
			     " allocated); %" PRIu64 " records in, %" PRIu64
			     " out", buffer_n, st.peak_records, st.peak_bytes,
			     st.peak_arena, st.n_in, st.n_out);
	tfk_shufbuf_free(sb);
	return rc;
}

static int run_all(char **files, int n_files, struct tfk_err *err)
{
	struct tfk_shufall *sa;
	struct tfk_shufall_stats st;
	uint64_t e;
	int rc = tfk_shufall_new(&sa, seed, memory, tmpdir, err);

	if (rc)
		return rc;
	rc = read_all(files, n_files, NULL, sa, err);
	tfk_shufall_stats(sa, &st);
	for (e = 0; !rc && st.n_records &&
		    (repeat_n == 0 || e < (uint64_t)repeat_n); e++) {
		rc = tfk_shufall_emit(sa, e, emit, NULL, err);
		if (!rc && repeat_n != 1)
			rc = tfk_recw_flush(w, err);
	}
	tfk_shufall_stats(sa, &st);
	if (verbose && !rc)
		tfk_cli_warn("%" PRIu64 " records, %" PRIu64 " bytes; memory "
			     "limit %" PRIu64 ", peak %" PRIu64 "; %" PRIu64
			     " runs spilled (%" PRIu64 " bytes), %" PRIu64
			     " merge passes", st.n_records, st.n_bytes,
			     memory, st.peak_memory, st.runs, st.spill_bytes,
			     st.merge_passes);
	tfk_shufall_free(sa);
	return rc;
}

int main(int argc, char **argv)
{
	static char *stdin_only[] = { "-", NULL };
	struct tfk_err err;
	char **files = argv;
	int i, comp, rc;

	memory = tfk_shuffle_default_memory();
	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (!buffer_set)
		tfk_cli_usage_error("--buffer is required: N records, or all");
	if (repeat_n < 0)
		tfk_cli_usage_error("--repeat must not be negative");
	if (memory < 4096)
		tfk_cli_usage_error("--memory must be at least 4K");
	comp = tfk_comp_parse(comp_arg);
	if (comp < 0)
		tfk_cli_usage_error("--compression: expected none, gzip or "
				    "zlib, not '%s'", comp_arg);
	if (argc == 0) {
		files = stdin_only;
		argc = 1;
	}
	for (i = 0; i < argc; i++)
		if (!strcmp(files[i], "-") && buffer_n && repeat_n != 1)
			tfk_cli_usage_error("--repeat with --buffer N reads "
					    "its input again: give files, or "
					    "use --buffer all");

	if (!strcmp(out_path, "-"))
		fcntl(1, F_SETPIPE_SZ, 1 << 20);
	if (tfk_recw_open(&w, out_path, comp, &err))
		return tfk_cli_fail(&err);
	rc = buffer_n ? run_buffer(files, argc, &err) :
			run_all(files, argc, &err);
	if (!rc)
		return tfk_recw_close(w, &err) ? tfk_cli_fail(&err) : 0;
	if (strcmp(out_path, "-")) {
		tfk_recw_discard(w);	/* a file named by -o: nothing */
	} else {
		struct tfk_err ignored;	/* stdout keeps what was written */

		tfk_recw_close(w, &ignored);
	}
	return tfk_cli_fail(&err);
}
