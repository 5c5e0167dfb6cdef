/*
 * tfk-cat: concatenate, interleave, shard, slice and repeat TFRecord
 * files onto stdout (or into a file), as a tf.data input pipeline does.
 *
 * The order of operations is fixed and is tf.data's:
 *
 *   TFRecordDataset(files)            plain/GZIP/ZLIB, detected per file
 *     .interleave(cycle, block)       --interleave, --block
 *     .shard(N, I)                    --shard (--shard-files: files, earlier)
 *     .skip(n).take(n)                --skip, --take
 *     .repeat(n)                      --repeat, the whole thing again
 *
 * Interleaving follows TensorFlow's InterleaveDatasetOp exactly: slots
 * are filled lazily in cycle order, an exhausted file frees its slot
 * and the turn moves on, and the freed slot takes the next file when
 * the cycle comes back to it; so our order equals tf.data's for the
 * same cycle_length and block_length (TF's default cycle is AUTOTUNE,
 * ours is 1: plain concatenation). Unlike tf.data, a --repeat 0 pass
 * that yields no record ends the run instead of spinning forever.
 *
 * Fast path: framed output of verified input writes each record's
 * framed bytes straight from the reader's buffer; nothing is re-framed.
 * With --no-verify the records are re-framed, so the output's crcs are
 * always right. Everything else (json, raw, compression) is a different
 * encoder behind the same emit().
 */
#include "example/example.h"
#include "example/exjson.h"
#include "example/seqex.h"
#include "io/index.h"
#include "io/out.h"
#include "io/record.h"
#include "util/buf.h"
#include "util/cli.h"
#include "util/limit.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static long cycle = 1, block = 1, skip_n, take_n = -1, repeat_n = 1;
static const char *shard_arg, *records_arg, *out_path = "-",
		  *comp_arg = "none";
static int shard_files, json, sequence, raw, skip_corrupt, no_verify;
static uint64_t max_record;	/* from TFK_MAX_RECORD_BYTES in main */

static const struct tfk_opt opts[] = {
	TFK_OPT_LONG(0, "interleave", &cycle, "CYCLE",
		     "read CYCLE files at once, taking turns"),
	TFK_OPT_LONG(0, "block", &block, "N",
		     "consecutive records from a file per turn"),
	TFK_OPT_STR(0, "shard", &shard_arg, "I/N",
		    "keep every N-th record starting at the I-th (default: "
		    "Slurm/MPI task, else 0/1)"),
	TFK_OPT_FLAG(0, "shard-files", &shard_files,
		     "shard whole files instead: keep file k when k % N == I"),
	TFK_OPT_LONG(0, "skip", &skip_n, "N", "drop the first N records"),
	TFK_OPT_LONG(0, "take", &take_n, "N",
		     "stop after N records (-1: all)"),
	TFK_OPT_LONG(0, "repeat", &repeat_n, "N",
		     "do it all N times (0: forever)"),
	TFK_OPT_STR(0, "records", &records_arg, "A:B",
		    "only records [A,B) of each file, found through FILE.idx"),
	TFK_OPT_FLAG(0, "json", &json,
		     "write each record as one line of JSON (tf.Example)"),
	TFK_OPT_FLAG(0, "sequence", &sequence,
		     "with --json: the records are tf.SequenceExamples"),
	TFK_OPT_FLAG(0, "raw", &raw,
		     "write the payload bytes only, without framing"),
	TFK_OPT_STR('o', "output", &out_path, "FILE",
		    "write FILE (atomically) instead of stdout"),
	TFK_OPT_STR(0, "compression", &comp_arg, "TYPE",
		    "output compression: none, gzip or zlib"),
	TFK_OPT_FLAG(0, "skip-corrupt", &skip_corrupt,
		     "drop corrupt records (reported on stderr) and go on"),
	TFK_OPT_FLAG(0, "no-verify", &no_verify,
		     "do not check input crcs (output is re-framed)"),
	TFK_OPT_SIZE(0, "max-record-bytes", &max_record, "BYTES",
		     "refuse input records longer than BYTES "
		     "($TFK_MAX_RECORD_BYTES when set)"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-cat",
	"[options] [FILE...]",
	"concatenate, interleave, shard and slice TFRecord files",
	"tfk-cat --interleave 4 --shard 0/2 --take 1000 train-*.tfrecord "
	"| tfk-count",
};

/* Settings derived from the options. */
static long shard_i, shard_n = 1;
static uint64_t rec_a, rec_b = UINT64_MAX;
static int out_comp;

/* Output ---------------------------------------------------------------- */

static struct tfk_rec_writer *w;	/* framed output */
static struct tfk_out *o;		/* raw or JSON output */
static struct tfk_example ex;
static struct tfk_seqex sx;
static struct tfk_buf line;

/*
 * Point a record that is not what --json expected to the option that
 * reads it: --sequence for a SequenceExample, tfk-events for an event
 * file, --raw for anything else that is no Example (text lines).
 * Returns err->code.
 */
static int hint(struct tfk_err *err, const struct tfk_rec *rec)
{
	int what = tfk_payload_guess(rec->data, rec->len, NULL, NULL);
	const char *h = NULL;
	size_t n = strlen(err->msg);

	if (err->code != TFK_ECORRUPT)
		return err->code;
	if (!sequence && what == TFK_PAYLOAD_SEQEX)
		h = "; give --sequence";
	else if (what == TFK_PAYLOAD_EVENT)
		h = "; tfk-events prints its values, --raw its payloads";
	else if (what != TFK_PAYLOAD_SEQEX)
		h = "; --raw writes the payloads as they are";
	if (h && n + strlen(h) < sizeof(err->msg))
		memcpy(err->msg + n, h, strlen(h) + 1);
	return err->code;
}

/*
 * One record as a JSON line. A payload that does not decode is a
 * located error: "FILE: record N at byte OFF: bad tf.Example: byte 17:
 * ..." (the last offset is inside the payload).
 */
static int emit_json(const char *path, const struct tfk_rec *rec,
		     struct tfk_err *err)
{
	int rc;

	tfk_buf_reset(&line);
	if (sequence) {
		rc = tfk_seqex_parse(&sx, rec->data, rec->len, err);
		if (!rc)
			rc = tfk_seqex_write_json(&sx, &line, err);
	} else {
		rc = tfk_example_parse(&ex, rec->data, rec->len, err);
		/* an Example reader skips feature_lists (an unknown field):
		 * that would print a SequenceExample's context alone */
		if (!rc && tfk_payload_guess(rec->data, rec->len, NULL,
					     NULL) == TFK_PAYLOAD_SEQEX)
			rc = tfk_errf(err, TFK_ECORRUPT, "byte 0: a "
				      "tf.SequenceExample (it has feature "
				      "lists)");
		if (!rc)
			rc = tfk_exjson_write(&ex, &line, err);
	}
	if (rc) {
		tfk_err_prefix(err, "%s: record %" PRIu64 " at byte %" PRIu64
			       ": bad tf.%sExample", path, rec->index,
			       rec->off, sequence ? "Sequence" : "");
		return hint(err, rec);
	}
	tfk_buf_addc(&line, '\n');
	if (!tfk_buf_ok(&line))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	return tfk_out_write(o, line.data, line.len, err);
}

static int emit(const char *path, const struct tfk_rec *rec,
		struct tfk_err *err)
{
	if (json)
		return emit_json(path, rec, err);
	if (raw)
		return tfk_out_write(o, rec->data, rec->len, err);
	if (!no_verify)
		return tfk_recw_write_framed(w, rec->data - TFK_REC_HEADER,
					     rec->len + TFK_REC_OVERHEAD, err);
	return tfk_recw_write(w, rec->data, rec->len, err);
}

/* Input ------------------------------------------------------------------ */

struct slot {
	struct tfk_rec_reader *r;	/* NULL: empty slot */
	uint64_t end;			/* stop at this offset (--records) */
	uint64_t bad_records, bad_bytes;
};

/* Standard output when it is a regular file (tfk-cat f >> f), else
 * st_ino 0: reading what we append would never end. */
static struct stat out_st;

static int open_slot(struct slot *s, const char *path, struct tfk_err *err)
{
	struct tfk_index ix;
	struct stat st;
	uint64_t off, n;
	int rc;

	memset(s, 0, sizeof(*s));
	s->end = UINT64_MAX;
	if (out_st.st_ino &&
	    (strcmp(path, "-") ? stat(path, &st) : fstat(0, &st)) == 0 &&
	    st.st_dev == out_st.st_dev && st.st_ino == out_st.st_ino)
		return tfk_errf(err, TFK_EINVAL, "%s: input file is output "
				"file", strcmp(path, "-") ? path : "<stdin>");
	rc = tfk_rec_open(&s->r, path, TFK_COMP_AUTO,
			  no_verify ? TFK_REC_NOVERIFY : 0, err);
	if (!rc)
		tfk_rec_set_max_bytes(s->r, max_record);
	if (rc || !records_arg)
		return rc;
	tfk_index_init(&ix);
	rc = tfk_index_load(&ix, path, err);
	if (rc == 0) {
		char why[TFK_ERR_MSG_MAX];

		snprintf(why, sizeof(why), "%s", err->msg);
		rc = tfk_errf(err, TFK_ENOTFOUND, "%s: --records needs a fresh "
			      "index: %s (run tfk-index)", path, why);
	}
	if (rc == 1) {
		n = tfk_index_range(&ix, rec_a, rec_b, &off);
		s->end = off + (n ? ix.off[rec_a + n] - ix.off[rec_a] : 0);
		rc = tfk_rec_seek(s->r, off, rec_a < ix.n ? rec_a : ix.n, err);
	}
	tfk_index_release(&ix);
	if (rc) {
		tfk_rec_close(s->r);
		s->r = NULL;
	}
	return rc;
}

static void close_slot(struct slot *s, int report)
{
	if (report && s->bad_records)
		tfk_cli_warn("%s: skipped %" PRIu64 " corrupt record%s (%" PRIu64
			     " bytes)", tfk_rec_path(s->r), s->bad_records,
			     s->bad_records == 1 ? "" : "s", s->bad_bytes);
	tfk_rec_close(s->r);
	s->r = NULL;
}

/*
 * The next good record of a slot: 1, 0 at its end, or an error. With
 * --skip-corrupt, a data crc mismatch is stepped over by the reader, a
 * bad header is followed by a resync, an input ending inside a record
 * ends the file; each counts as one dropped record. A broken stream
 * (corrupt or truncated GZIP) ends the file with a warning. Only i/o
 * errors and exhausted memory stay fatal. Without --skip-corrupt every
 * error is, and the records before it have been written (to stdout; a
 * file named by -o is not created).
 */
static int next_good(struct slot *s, struct tfk_rec *rec, struct tfk_err *err)
{
	for (;;) {
		uint64_t off = tfk_rec_offset(s->r);
		int rc;

		if (off >= s->end)
			return 0;
		rc = tfk_rec_next(s->r, rec, err);
		if (rc >= 0 || !skip_corrupt || rc == TFK_EIO ||
		    rc == TFK_ENOMEM)
			return rc;
		/* Nothing to resync in (offset unmoved): the error came
		 * from the stream, not a record header. */
		if (tfk_rec_offset(s->r) == off &&
		    (rc != TFK_ECORRUPT || tfk_rec_resync(s->r, err) < 0 ||
		     tfk_rec_offset(s->r) == off)) {
			tfk_cli_warn("%s; rest of the file skipped", err->msg);
			return 0;
		}
		s->bad_records++;
		s->bad_bytes += tfk_rec_offset(s->r) - off;
	}
}

/* One pass ----------------------------------------------------------- */

/*
 * Run files -> interleave -> shard -> skip -> take once. Returns the
 * number of records written (>= 0) or an error.
 */
static long long one_pass(char **files, size_t n_files, int first,
			  struct tfk_err *err)
{
	struct slot *slots = calloc((size_t)cycle, sizeof(*slots));
	size_t next_file = 0, n_open = 0, ci = 0, i;
	long bi = 0;
	uint64_t k = 0, kept = 0, taken = 0;
	int end_of_input = 0, rc = 0;

	if (!slots)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (take_n == 0)
		end_of_input = 1;
	/* InterleaveDatasetOp::GetNext, record by record. */
	while (!end_of_input || n_open > 0) {
		struct slot *s = &slots[ci];
		struct tfk_rec rec;

		if (s->r) {
			rc = next_good(s, &rec, err);
			if (rc < 0)
				break;
			if (rc == 1) {
				uint64_t idx = k++;

				if (++bi == block) {
					bi = 0;
					ci = (ci + 1) % (size_t)cycle;
				}
				rc = 0;
				if (idx % (uint64_t)shard_n != (uint64_t)shard_i ||
				    kept++ < (uint64_t)skip_n)
					continue;
				rc = emit(tfk_rec_path(s->r), &rec, err);
				if (rc == TFK_ECORRUPT && skip_corrupt) {
					/* valid framing, payload not an
					 * Example: dropped like a bad crc */
					s->bad_records++;
					s->bad_bytes += rec.len + TFK_REC_OVERHEAD;
					rc = 0;
					continue;
				}
				if (rc)
					break;
				if (++taken == (uint64_t)take_n)
					break;
				continue;
			}
			close_slot(s, first);
			n_open--;
			bi = 0;
			ci = (ci + 1) % (size_t)cycle;
		} else if (!end_of_input) {
			if (next_file == n_files) {
				end_of_input = 1;
				continue;
			}
			rc = open_slot(s, files[next_file++], err);
			if (rc)
				break;
			n_open++;
		} else {
			bi = 0;
			ci = (ci + 1) % (size_t)cycle;
		}
	}
	for (i = 0; i < (size_t)cycle; i++)
		if (slots[i].r)
			close_slot(&slots[i], first && !rc);
	free(slots);
	return rc ? rc : (long long)taken;
}

/* Options ------------------------------------------------------------ */

static int parse_u64(const char *s, const char *end, uint64_t *v)
{
	uint64_t x = 0;

	if (s == end)
		return -1;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9' || x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = x;
	return 0;
}

static void check_options(char **files, int n_files)
{
	int i;

	if (cycle < 1)
		tfk_cli_usage_error("--interleave must be at least 1");
	if (block < 1)
		tfk_cli_usage_error("--block must be at least 1");
	if (skip_n < 0)
		tfk_cli_usage_error("--skip must not be negative");
	if (take_n < -1)
		tfk_cli_usage_error("--take must be -1 (all) or more");
	if (repeat_n < 0)
		tfk_cli_usage_error("--repeat must not be negative");
	if (tfk_cli_shard(shard_arg, &shard_i, &shard_n))
		tfk_cli_usage_error(shard_arg ? "--shard: expected I/N with "
				    "0 <= I < N" : "bad Slurm/MPI task "
				    "variables for the default --shard");
	if (sequence && !json)
		tfk_cli_usage_error("--sequence goes with --json");
	if (json && raw)
		tfk_cli_usage_error("--json and --raw exclude each other");
	out_comp = tfk_comp_parse(comp_arg);
	if (out_comp < 0)
		tfk_cli_usage_error("--compression: expected none, gzip or "
				    "zlib, not '%s'", comp_arg);
	if (records_arg) {
		const char *colon = strchr(records_arg, ':');
		const char *end = records_arg + strlen(records_arg);

		if (!colon || (colon > records_arg &&
			       parse_u64(records_arg, colon, &rec_a)) ||
		    (colon + 1 < end && parse_u64(colon + 1, end, &rec_b)))
			tfk_cli_usage_error("--records: expected A:B (either "
					    "may be left out), not '%s'",
					    records_arg);
	}
	for (i = 0; i < n_files; i++) {
		if (strcmp(files[i], "-"))
			continue;
		if (repeat_n != 1)
			tfk_cli_usage_error("--repeat cannot read standard "
					    "input twice");
		if (records_arg)
			tfk_cli_usage_error("--records needs files with an "
					    "index, not standard input");
	}
}

int main(int argc, char **argv)
{
	static char *stdin_only[] = { "-", NULL };
	struct tfk_err err;
	char **files = argv;
	long long pass, got = 0;
	size_t n_files;
	int i, rc;

	/* the live default for --help; a malformed value is reported
	 * by tfk_rec_open, which reads it again */
	if (tfk_limit_get("TFK_MAX_RECORD_BYTES", TFK_REC_MAX_BYTES_DEFAULT,
			  &max_record, NULL))
		max_record = TFK_REC_MAX_BYTES_DEFAULT;
	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (argc == 0) {
		files = stdin_only;
		argc = 1;
	}
	check_options(files, argc);
	n_files = (size_t)argc;
	if (shard_files) {
		/* k % N, not a stride of N: N may be past INT_MAX. */
		n_files = 0;
		for (i = 0; i < argc; i++)
			if (i % shard_n == shard_i)
				files[n_files++] = files[i];
		shard_i = 0;
		shard_n = 1;
	}
	/* Slots beyond the number of files would only ever be skipped: the
	 * order is the same with cycle = n_files, and no memory is asked
	 * for a huge --interleave. */
	if ((size_t)cycle > n_files)
		cycle = n_files ? (long)n_files : 1;

	/* A 1 MiB pipe (Linux's ceiling for users by default) instead of
	 * 64 KiB: fewer switches between us and the reader. Not a pipe, or
	 * not allowed: nothing happens. */
	if (!strcmp(out_path, "-")) {
		fcntl(1, F_SETPIPE_SZ, 1 << 20);
		if (fstat(1, &out_st) != 0 || !S_ISREG(out_st.st_mode))
			out_st.st_ino = 0;
	}
	rc = raw || json ? tfk_out_open(&o, out_path, out_comp, &err) :
		   tfk_recw_open(&w, out_path, out_comp, &err);
	if (rc)
		return tfk_cli_fail(&err);
	tfk_example_init(&ex);
	tfk_seqex_init(&sx);
	tfk_buf_init(&line);
	for (pass = 0; repeat_n == 0 || pass < repeat_n; pass++) {
		got = one_pass(files, n_files, pass == 0, &err);
		if (got <= 0)
			break;
		/* Each epoch reaches the reader whole, and a reader that has
		 * gone away is noticed within one pass. */
		if (repeat_n != 1 &&
		    (o ? tfk_out_flush(o, &err) : tfk_recw_flush(w, &err))) {
			got = -1;
			break;
		}
	}
	if (got >= 0) {
		rc = o ? tfk_out_close(o, &err) : tfk_recw_close(w, &err);
	} else if (strcmp(out_path, "-")) {
		/* A file named by -o: nothing appears. */
		tfk_out_discard(o);
		tfk_recw_discard(w);
		rc = 1;
	} else {
		/* stdout keeps the records before the error. */
		struct tfk_err ignored;

		if (o)
			tfk_out_close(o, &ignored);
		else
			tfk_recw_close(w, &ignored);
		rc = 1;
	}
	tfk_example_release(&ex);
	tfk_seqex_release(&sx);
	tfk_buf_release(&line);
	return rc ? tfk_cli_fail(&err) : 0;
}
