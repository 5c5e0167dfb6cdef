/*
 * tfk-text: text files to sharded TFRecord Examples, the way Keras'
 * text_dataset_from_directory and tf.data.TextLineDataset read them.
 *
 * Directory mode (the default): DIR (or a .tar/.tgz/.zip of it) holds
 * one subdirectory per class of .txt files; each file becomes one
 * record {text: bytes, label: int64, filename: bytes}. Files are
 * indexed, ordered and shuffled exactly as Keras does (lib/data/
 * dataset.h: numpy's RandomState(seed) shuffle), so --seed S
 * --validation-split F --subset training gives the files, in the order,
 * that Keras gives for seed=S. Differences from Keras: the records are
 * written once, in that shuffled order (Keras reshuffles every epoch:
 * pipe through tfk-shuffle for that); --max-length counts bytes, as
 * Keras' tf.strings.substr does, but never cuts inside a UTF-8
 * character (Keras can); a file that is not UTF-8 is an error naming it
 * (Keras does not check), or with --skip is left out and counted.
 * With --label-map the label is k-hot over the map's classes
 * (int64[C]).
 *
 * Lines mode (--lines): every line of the FILEs becomes one record
 * {text}, as TextLineDataset: lines end at "\n", one "\r" before it is
 * dropped (so CRLF files read as LF files; a lone "\r" is kept), a last
 * line without "\n" counts when not empty. --skip-header-lines N drops
 * the first N lines of each file. Input may be gzip-compressed.
 *
 * Rejected: decoding other encodings (Keras has none either: bytes
 * that are not UTF-8 are the user's to convert, with iconv).
 */
#include "data/exout.h"
#include "data/labelrun.h"
#include "data/shardw.h"
#include "example/example.h"
#include "example/schema.h"
#include "io/in.h"
#include "util/buf.h"
#include "util/cli.h"
#include "util/progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct tfk_lrun_args la = TFK_LRUN_ARGS_DEFAULTS;
static int skip_bad, lines_mode;
static long max_length, skip_header;
static struct tfk_conv conv = TFK_CONV_DEFAULTS;

static const struct tfk_opt opts[] = {
	TFK_LRUN_OPTS(la),
	TFK_OPT_LONG(0, "max-length", &max_length, "BYTES",
		     "truncate texts to at most BYTES, never inside a UTF-8 "
		     "character (0: no limit)"),
	TFK_OPT_FLAG(0, "skip", &skip_bad,
		     "skip and count files (lines) that are not UTF-8 or "
		     "cannot be read, instead of failing"),
	TFK_OPT_FLAG(0, "lines", &lines_mode,
		     "one record per line of each FILE (TextLineDataset)"),
	TFK_OPT_LONG(0, "skip-header-lines", &skip_header, "N",
		     "with --lines: drop the first N lines of every file"),
	TFK_CONV_OPTS(conv),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-text",
	"[options] DIR|ARCHIVE  |  --lines [options] [FILE...]",
	"convert class directories of .txt files (or text lines) to sharded "
	"TFRecord Examples",
	"tfk-text aclImdb/train --validation-split 0.2 --subset both "
	"--seed 1337 -o data/imdb",
};

/* Length to keep of valid UTF-8 p[0..n) under --max-length: at most
 * max_length bytes, backed up to the start of a character. */
static size_t cut(const uint8_t *p, size_t n)
{
	if (max_length <= 0 || n <= (size_t)max_length)
		return n;
	n = (size_t)max_length;
	while (n > 0 && (p[n] & 0xc0) == 0x80)
		n--;
	return n;
}

static void say(const struct tfk_lrun *lr, const char *msg)
{
	tfk_cli_warn("%s", msg);
}

/* Directory mode ------------------------------------------------------- */

static int convert(const struct tfk_lrun *lr, const struct tfk_ds_item *it,
		   const uint8_t *data, size_t len, struct tfk_buf *rec,
		   struct tfk_err *err)
{
	struct tfk_example_builder b;
	const uint8_t *p;
	size_t bad = tfk_utf8_prefix(data, len), n;
	int rc;

	if (bad < len)
		return tfk_errf(err, TFK_ECORRUPT, "byte %zu: not utf-8 text",
				bad);
	tfk_exb_init(&b);
	tfk_exb_add_bytes1(&b, "text", data, cut(data, len));
	rc = tfk_lrun_add_label(&b, lr, it, NULL, err);
	tfk_exb_add_bytes1(&b, "filename", it->path, strlen(it->path));
	if (!rc)
		rc = tfk_exb_finish(&b, &p, &n, err);
	if (!rc)
		tfk_buf_add(rec, p, n);
	tfk_exb_release(&b);
	return rc;
}

static int describe(const struct tfk_lrun *lr, struct tfk_schema *s)
{
	if (tfk_lrun_describe_utf8(s, "text") ||
	    tfk_lrun_describe_label(s, lr) ||
	    tfk_lrun_describe_utf8(s, "filename"))
		return TFK_ENOMEM;
	return 0;
}

static int run_dirs(const char *root, const struct tfk_shardw_opts *so,
		    long shard_i, long shard_n)
{
	struct tfk_lrun lr;
	struct tfk_err err;
	int rc;

	memset(&lr, 0, sizeof(lr));
	lr.exts = tfk_ds_text_exts;
	lr.none_found = "no .txt files found";
	lr.stop_on_bad = !skip_bad;
	lr.convert = convert;
	lr.describe = describe;
	lr.say = say;
	rc = tfk_lrun_open(&lr, root, &la, &conv, shard_i, shard_n, &err);
	if (rc) {
		tfk_cli_fail(&err);
		if (strstr(err.msg, "not a directory nor"))
			tfk_cli_warn("(to convert the lines of text files, use "
				     "--lines)");
	} else {
		rc = tfk_lrun_run(&lr, so, &err);
		if (rc)
			tfk_cli_fail(&err);
	}
	tfk_lrun_close(&lr);
	return rc ? 1 : 0;
}

/* Lines mode --------------------------------------------------------------- */

/* Plain text is everything but gzip: zlib's header bytes ("x^", "x\001")
 * are ordinary text. */
static int sniff_text(const uint8_t *p, size_t n)
{
	return !(n >= 2 && p[0] == 0x1f && p[1] == 0x8b);
}

/* The state of a --lines run. */
struct lines {
	struct tfk_exout out;
	struct tfk_example_builder b;
	struct tfk_progress prog;
	uint64_t done;
	struct tfk_err err;
};

static int line_record(struct lines *r, const char *name, uint64_t line,
		       const uint8_t *p, size_t n)
{
	const uint8_t *rec;
	size_t len, bad = tfk_utf8_prefix(p, n);

	if (bad < n) {
		tfk_errf(&r->err, TFK_ECORRUPT, "%s: line %" PRIu64 ": byte %zu: "
			 "not utf-8 text", name, line, bad);
		if (!skip_bad)
			return 1;
		tfk_cli_warn("%s: skipped", r->err.msg);
		r->out.skipped++;
		return 0;
	}
	tfk_exb_reset(&r->b);
	tfk_exb_add_bytes1(&r->b, "text", p, cut(p, n));
	if (tfk_exb_finish(&r->b, &rec, &len, &r->err))
		return 1;
	return tfk_exout_write(&r->out, rec, len, &r->err) ? 1 : 0;
}

static int lines_file(struct lines *r, const char *path)
{
	struct tfk_in *in;
	const char *name;
	uint64_t line = 0;
	size_t want = 1 << 16;
	int rc;

	rc = tfk_in_open(&in, path, TFK_COMP_AUTO, sniff_text, &r->err);
	if (rc) {
		if (skip_bad && rc != TFK_ENOMEM) {
			tfk_cli_warn("%s: skipped", r->err.msg);
			r->out.skipped++;
			return 0;
		}
		return 1;
	}
	name = tfk_in_path(in);
	for (;;) {
		const uint8_t *p, *nl;
		ssize_t got = tfk_in_fill(in, want, &p, &r->err);
		size_t n;

		if (got < 0) {
			rc = 1;
			break;
		}
		if (got == 0)
			break;
		nl = memchr(p, '\n', (size_t)got);
		if (!nl && (size_t)got >= want) {
			want *= 2;	/* a line longer than the window */
			continue;
		}
		n = nl ? (size_t)(nl - p) : (size_t)got;
		line++;
		if (n && p[n - 1] == '\r')
			n--;
		/* TextLineDataset: an unterminated last line counts only
		 * when it is not empty */
		if ((nl || n) && line > (uint64_t)skip_header &&
		    line_record(r, name, line, p, n)) {
			rc = 1;
			break;
		}
		tfk_in_consume(in, nl ? (size_t)(nl - p) + 1 : (size_t)got);
		tfk_progress_update(&r->prog, ++r->done);
		if (want > (1 << 16) && (size_t)got < want / 4)
			want = 1 << 16;
	}
	tfk_in_close(in);
	return rc;
}

static int describe_lines(void *ctx, struct tfk_schema *s)
{
	return tfk_lrun_describe_utf8(s, "text");
}

static int run_lines(int argc, char **argv, const struct tfk_shardw_opts *so,
		     long shard_i, long shard_n, double t0)
{
	struct lines r;
	int rc, i;

	memset(&r, 0, sizeof(r));
	tfk_exb_init(&r.b);
	rc = tfk_exout_open(&r.out, so, "", NULL, &r.err);
	if (!rc) {
		tfk_progress_init(&r.prog, tfk_progress_wanted(conv.progress,
							       conv.quiet),
				  "lines", 0);
		if (argc == 0) {
			if (shard_i == 0)
				rc = lines_file(&r, "-");
		} else {
			for (i = 0; i < argc && !rc; i++)
				if (i % shard_n == shard_i)
					rc = lines_file(&r, argv[i]);
		}
		tfk_progress_release(&r.prog);
		rc = tfk_exout_finish(&r.out, 1, rc, describe_lines, NULL,
				      &r.err);
	}
	if (!rc && !conv.quiet) {
		char msg[TFK_ERR_MSG_MAX];

		tfk_exout_summary(&r.out, tfk_now() - t0, msg, sizeof(msg));
		tfk_cli_warn("%s", msg);
	}
	tfk_exout_release(&r.out);
	tfk_exb_release(&r.b);
	return rc ? tfk_cli_fail(&r.err) : 0;
}

int main(int argc, char **argv)
{
	struct tfk_shardw_opts so;
	long shard_i, shard_n;
	double t0 = tfk_now();

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	tfk_conv_check(&conv, &so, &shard_i, &shard_n);
	if (max_length < 0)
		tfk_cli_usage_error("--max-length: expected 0 or more bytes, "
				    "not %ld", max_length);
	if (lines_mode) {
		if (tfk_lrun_args_given(&la))
			tfk_cli_usage_error("--lines takes no label, split, "
					    "shuffle or link options");
		if (skip_header < 0)
			tfk_cli_usage_error("--skip-header-lines: expected 0 or "
					    "more, not %ld", skip_header);
	}
	tfk_lrun_check(&la, &conv, &so);
	if (lines_mode)
		return run_lines(argc, argv, &so, shard_i, shard_n, t0);
	if (skip_header)
		tfk_cli_usage_error("--skip-header-lines needs --lines");
	if (argc == 0)
		tfk_cli_usage_error("a DIR or ARCHIVE is required");
	if (argc > 1)
		tfk_cli_usage_error("one DIR or ARCHIVE at a time, not %d", argc);
	return run_dirs(argv[0], &so, shard_i, shard_n);
}
