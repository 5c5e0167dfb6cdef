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
#include "data/dataset.h"
#include "data/shardw.h"
#include "example/example.h"
#include "example/schema.h"
#include "io/in.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cli.h"
#include "util/progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *labels_arg = "inferred", *label_map, *subset_arg;
static double val_split;
static int no_shuffle, follow_links, skip_bad, lines_mode;
static long max_length, skip_header;
static struct tfk_conv conv = TFK_CONV_DEFAULTS;

static const struct tfk_opt opts[] = {
	TFK_OPT_STR(0, "labels", &labels_arg, "MODE",
		    "inferred (from subdirectories), none, or a FILE of class "
		    "names, one per line, in index order"),
	TFK_OPT_STR(0, "label-map", &label_map, "CSV",
		    "multi-label: lines 'filename,name;name' (k-hot label)"),
	TFK_OPT_DOUBLE(0, "validation-split", &val_split, "F",
		       "fraction of files held out for validation (0 < F < 1)"),
	TFK_OPT_STR(0, "subset", &subset_arg, "NAME",
		    "training, validation or both (PREFIX-training, "
		    "PREFIX-validation)"),
	TFK_OPT_FLAG(0, "no-shuffle", &no_shuffle,
		     "keep the sorted file order (Keras shuffle=False)"),
	TFK_OPT_FLAG(0, "follow-links", &follow_links,
		     "descend into symbolic links to directories"),
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

/* Directory mode ------------------------------------------------------- */

struct out {
	const char *what;		/* "training", ... for messages */
	char *prefix;			/* NULL: stdout */
	struct tfk_shardw *w;
	struct tfk_schema schema;
	uint64_t written, skipped;
	int schema_written;	/* this run wrote PREFIX.schema.json */
};

struct run {
	struct tfk_dataset *ds;
	struct out out[2];
	size_t n_first;
	struct tfk_example ex;
	struct tfk_progress prog;
	uint64_t done;
	struct tfk_err err;
	int want_schema;
};

static int convert(void *ctx, const struct tfk_ds_item *it,
		   const uint8_t *data, size_t len, struct tfk_buf *rec,
		   struct tfk_err *err)
{
	struct run *r = ctx;
	struct tfk_example_builder b;
	const uint8_t *p;
	size_t bad = tfk_utf8_prefix(data, len), n;
	int rc;

	if (bad < len)
		return tfk_errf(err, TFK_ECORRUPT, "byte %zu: not utf-8 text",
				bad);
	tfk_exb_init(&b);
	tfk_exb_add_bytes1(&b, "text", data, cut(data, len));
	if (r->ds->mode == TFK_DS_INFERRED) {
		int64_t label = it->label;

		tfk_exb_add_int64s(&b, "label", &label, 1);
	} else if (r->ds->mode == TFK_DS_MAP) {
		int64_t *khot = tfk_calloc(r->ds->n_classes ? r->ds->n_classes :
					   1, sizeof(*khot));

		if (!khot) {
			tfk_exb_release(&b);
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		}
		for (size_t i = 0; i < it->n_labels; i++)
			khot[it->labels[i]] = 1;
		tfk_exb_add_int64s(&b, "label", khot, r->ds->n_classes);
		tfk_free(khot);
	}
	tfk_exb_add_bytes1(&b, "filename", it->path, strlen(it->path));
	rc = tfk_exb_finish(&b, &p, &n, err);
	if (!rc)
		tfk_buf_add(rec, p, n);
	tfk_exb_release(&b);
	return rc;
}

static int write_rec(struct out *o, struct tfk_example *ex, int want_schema,
		     const uint8_t *rec, size_t len, struct tfk_err *err)
{
	int rc = tfk_shardw_write(o->w, rec, len, err);

	if (!rc && want_schema) {
		rc = tfk_example_parse(ex, rec, len, err);
		if (!rc)
			rc = tfk_schema_observe(&o->schema, ex, err);
	}
	if (!rc)
		o->written++;
	return rc;
}

static int emit(void *ctx, size_t k, const struct tfk_ds_item *it, int status,
		const uint8_t *rec, size_t len, const struct tfk_err *err)
{
	struct run *r = ctx;
	struct out *o = &r->out[k < r->n_first ? 0 : 1];

	tfk_progress_update(&r->prog, ++r->done);
	if (status) {
		if (!skip_bad || status == TFK_ENOMEM) {
			r->err = *err;
			return 1;
		}
		tfk_cli_warn("%s: skipped", err->msg);
		o->skipped++;
		return 0;
	}
	if (write_rec(o, &r->ex, r->want_schema, rec, len, &r->err))
		return 1;
	return 0;
}

static void on_warn(void *ctx, const char *msg)
{
	tfk_cli_warn("%s", msg);
}

static int describe(struct tfk_schema *s, const struct tfk_dataset *ds,
		    int lines)
{
	struct tfk_schema_feat *f = tfk_schema_feature(s, "text");
	int64_t shape[1];

	if (!f)
		return TFK_ENOMEM;
	f->kind = TFK_FEAT_BYTES;
	tfk_schema_set_shape(f, 0, shape);
	snprintf(f->encoding, sizeof(f->encoding), "utf-8");
	if (lines)
		return 0;
	if (ds->mode != TFK_DS_NONE) {
		f = tfk_schema_feature(s, "label");
		if (!f)
			return TFK_ENOMEM;
		f->kind = TFK_FEAT_INT64;
		shape[0] = (int64_t)ds->n_classes;
		tfk_schema_set_shape(f, ds->mode == TFK_DS_MAP, shape);
		if (tfk_schema_set_labels(f, (const char *const *)ds->classes,
					  ds->n_classes))
			return TFK_ENOMEM;
	}
	f = tfk_schema_feature(s, "filename");
	if (!f)
		return TFK_ENOMEM;
	f->kind = TFK_FEAT_BYTES;
	tfk_schema_set_shape(f, 0, shape);
	snprintf(f->encoding, sizeof(f->encoding), "utf-8");
	return 0;
}

static char *join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *s = tfk_malloc(n);

	if (!s)
		tfk_cli_usage_error("out of memory");
	snprintf(s, n, "%s%s", a, b);
	return s;
}

/* Open every output, run, then close them all or discard them all. */
static int finish(struct run *r, int n_out, int rc, const struct tfk_dataset *ds,
		  double t0)
{
	int i;

	for (i = 0; i < n_out && !rc; i++) {
		char *path;

		if (!r->out[i].prefix)
			continue;
		path = join(r->out[i].prefix, ".schema.json");
		rc = describe(&r->out[i].schema, ds, lines_mode);
		if (rc)
			tfk_errf(&r->err, rc, "out of memory");
		else
			rc = tfk_schema_write(&r->out[i].schema, path, &r->err);
		r->out[i].schema_written = !rc;
		tfk_free(path);
	}
	for (i = 0; i < n_out; i++) {
		struct out *o = &r->out[i];
		uint64_t bytes = 0;
		long shards = 0;

		if (!rc) {
			bytes = tfk_shardw_bytes(o->w);
			shards = tfk_shardw_shards(o->w);
			rc = tfk_shardw_close(o->w, &r->err);
			if (!rc && !conv.quiet) {
				fprintf(stderr, "%s: wrote %" PRIu64 " %s%s"
					"records (%" PRIu64 " skipped), %"
					PRIu64 " bytes, %ld shard%s%s%s in "
					"%.2f s\n", tfk_cli_name(), o->written,
					o->what ? o->what : "",
					o->what ? " " : "", o->skipped, bytes,
					shards, shards == 1 ? "" : "s",
					o->prefix ? " to " : "",
					o->prefix ? o->prefix : "",
					tfk_now() - t0);
			}
		} else {
			tfk_shardw_discard(o->w);
		}
		o->w = NULL;
	}
	if (rc) {
		/* no schema without its shards */
		for (i = 0; i < n_out; i++) {
			if (r->out[i].schema_written) {
				char *path = join(r->out[i].prefix,
						  ".schema.json");

				remove(path);
				tfk_free(path);
			}
		}
	}
	return rc;
}

static int parse_subset(const char *s)
{
	if (!s)
		return TFK_DS_ALL;
	if (!strcmp(s, "training"))
		return TFK_DS_TRAINING;
	if (!strcmp(s, "validation"))
		return TFK_DS_VALIDATION;
	if (!strcmp(s, "both"))
		return TFK_DS_BOTH;
	tfk_cli_usage_error("--subset: expected training, validation or "
			    "both, not '%s'", s);
}

static int run_dirs(const char *root, const struct tfk_shardw_opts *so,
		    long shard_i, long shard_n, double t0)
{
	struct tfk_ds_opts dopt;
	struct run r;
	struct tfk_ds_sink sink;
	size_t *sel = NULL, n_sel = 0, i;
	int subset = parse_subset(subset_arg), n_out = 1, rc;

	memset(&r, 0, sizeof(r));
	memset(&dopt, 0, sizeof(dopt));
	dopt.exts = tfk_ds_text_exts;
	dopt.follow_links = follow_links;
	dopt.warn = on_warn;
	dopt.label_map = label_map;
	if (label_map)
		dopt.mode = TFK_DS_MAP;
	else if (!strcmp(labels_arg, "none"))
		dopt.mode = TFK_DS_NONE;
	else
		dopt.mode = TFK_DS_INFERRED;
	if (strcmp(labels_arg, "inferred") && strcmp(labels_arg, "none"))
		dopt.class_file = labels_arg;
	if (label_map && !strcmp(labels_arg, "none"))
		tfk_cli_usage_error("--label-map gives labels: it cannot be "
				    "used with --labels none");

	rc = tfk_ds_open(&r.ds, root, &dopt, &r.err);
	if (rc) {
		tfk_cli_fail(&r.err);
		if (strstr(r.err.msg, "not a directory nor"))
			tfk_cli_warn("(to convert the lines of text files, use "
				     "--lines)");
		return 1;
	}
	if (r.ds->n_items == 0) {
		tfk_errf(&r.err, TFK_ENOTFOUND, "%s: no .txt files found%s",
			 root, dopt.mode == TFK_DS_INFERRED ?
			 " in class subdirectories" : "");
		tfk_ds_close(r.ds);
		return tfk_cli_fail(&r.err);
	}
	if (!conv.quiet) {
		if (dopt.mode == TFK_DS_NONE)
			tfk_cli_warn("found %zu files", r.ds->n_items);
		else
			tfk_cli_warn("found %zu files belonging to %zu classes",
				     r.ds->n_items, r.ds->n_classes);
		if (r.ds->n_warnings)
			tfk_cli_warn("%" PRIu64 " entr%s passed over while "
				     "indexing (see above)", r.ds->n_warnings,
				     r.ds->n_warnings == 1 ? "y" : "ies");
		if (r.ds->n_unmapped || r.ds->n_missing)
			tfk_cli_warn("%" PRIu64 " files not in %s left out, %"
				     PRIu64 " of its lines name no file found",
				     r.ds->n_unmapped, label_map,
				     r.ds->n_missing);
	}
	if (!no_shuffle)
		rc = tfk_ds_shuffle(r.ds, (uint32_t)conv.seed, &r.err);
	if (!rc)
		rc = tfk_ds_select(r.ds, subset, val_split, shard_i, shard_n,
				   &sel, &n_sel, &r.n_first, &r.err);
	if (rc) {
		tfk_ds_close(r.ds);
		return tfk_cli_fail(&r.err);
	}

	r.want_schema = so->prefix != NULL;
	if (subset == TFK_DS_BOTH) {
		n_out = 2;
		r.out[0].what = "training";
		r.out[1].what = "validation";
		r.out[0].prefix = join(so->prefix, "-training");
		r.out[1].prefix = join(so->prefix, "-validation");
	} else if (so->prefix) {
		r.out[0].prefix = join(so->prefix, "");
	}
	for (i = 0; i < (size_t)n_out && !rc; i++) {
		struct tfk_shardw_opts o = *so;

		o.prefix = r.out[i].prefix;
		tfk_schema_init(&r.out[i].schema);
		rc = tfk_shardw_open(&r.out[i].w, &o, &r.err);
	}
	if (!rc) {
		tfk_example_init(&r.ex);
		tfk_progress_init(&r.prog, tfk_progress_wanted(conv.progress,
							       conv.quiet),
				  "files", n_sel);
		memset(&sink, 0, sizeof(sink));
		sink.convert = convert;
		sink.emit = emit;
		sink.ctx = &r;
		sink.threads = (int)conv.jobs;
		rc = tfk_ds_run(r.ds, sel, n_sel, &sink, &r.err);
		tfk_progress_release(&r.prog);
		tfk_example_release(&r.ex);
	}
	rc = finish(&r, n_out, rc, r.ds, t0);
	for (i = 0; i < 2; i++) {
		tfk_schema_release(&r.out[i].schema);
		tfk_free(r.out[i].prefix);
	}
	tfk_free(sel);
	tfk_ds_close(r.ds);
	return rc ? tfk_cli_fail(&r.err) : 0;
}

/* Lines mode --------------------------------------------------------------- */

/* Plain text is everything but gzip: zlib's header bytes ("x^", "x\001")
 * are ordinary text. */
static int sniff_text(const uint8_t *p, size_t n)
{
	return !(n >= 2 && p[0] == 0x1f && p[1] == 0x8b);
}

static int line_record(struct run *r, struct tfk_example_builder *b,
		       const char *name, uint64_t line, const uint8_t *p,
		       size_t n)
{
	struct out *o = &r->out[0];
	const uint8_t *rec;
	size_t len, bad = tfk_utf8_prefix(p, n);

	if (bad < n) {
		tfk_errf(&r->err, TFK_ECORRUPT, "%s: line %" PRIu64 ": byte %zu: "
			 "not utf-8 text", name, line, bad);
		if (!skip_bad)
			return 1;
		tfk_cli_warn("%s: skipped", r->err.msg);
		o->skipped++;
		return 0;
	}
	tfk_exb_reset(b);
	tfk_exb_add_bytes1(b, "text", p, cut(p, n));
	if (tfk_exb_finish(b, &rec, &len, &r->err))
		return 1;
	return write_rec(o, &r->ex, r->want_schema, rec, len, &r->err) ? 1 : 0;
}

static int lines_file(struct run *r, struct tfk_example_builder *b,
		      const char *path)
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
			r->out[0].skipped++;
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
		    line_record(r, b, name, line, p, n)) {
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

static int run_lines(int argc, char **argv, const struct tfk_shardw_opts *so,
		     long shard_i, long shard_n, double t0)
{
	struct tfk_example_builder b;
	struct run r;
	int rc = 0, i;
	struct tfk_dataset fake;

	memset(&r, 0, sizeof(r));
	memset(&fake, 0, sizeof(fake));
	r.want_schema = so->prefix != NULL;
	r.out[0].prefix = so->prefix ? join(so->prefix, "") : NULL;
	tfk_schema_init(&r.out[0].schema);
	rc = tfk_shardw_open(&r.out[0].w, so, &r.err);
	if (rc) {
		tfk_free(r.out[0].prefix);
		return tfk_cli_fail(&r.err);
	}
	tfk_exb_init(&b);
	tfk_example_init(&r.ex);
	tfk_progress_init(&r.prog, tfk_progress_wanted(conv.progress,
						       conv.quiet),
			  "lines", 0);
	if (argc == 0) {
		if (shard_i == 0)
			rc = lines_file(&r, &b, "-");
	} else {
		for (i = 0; i < argc && !rc; i++)
			if (i % shard_n == shard_i)
				rc = lines_file(&r, &b, argv[i]);
	}
	tfk_progress_release(&r.prog);
	fake.mode = TFK_DS_NONE;
	rc = finish(&r, 1, rc, &fake, t0);
	tfk_exb_release(&b);
	tfk_example_release(&r.ex);
	tfk_schema_release(&r.out[0].schema);
	tfk_free(r.out[0].prefix);
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
	if (conv.seed < 0 || conv.seed > 4294967295L)
		tfk_cli_usage_error("--seed: expected 0 to 4294967295 (numpy's "
				    "range), not %ld", conv.seed);
	if (lines_mode) {
		if (val_split || subset_arg || label_map ||
		    strcmp(labels_arg, "inferred") || no_shuffle ||
		    follow_links)
			tfk_cli_usage_error("--lines takes no label, split, "
					    "shuffle or link options");
		if (skip_header < 0)
			tfk_cli_usage_error("--skip-header-lines: expected 0 or "
					    "more, not %ld", skip_header);
		return run_lines(argc, argv, &so, shard_i, shard_n, t0);
	}
	if (skip_header)
		tfk_cli_usage_error("--skip-header-lines needs --lines");
	if (argc == 0)
		tfk_cli_usage_error("a DIR or ARCHIVE is required");
	if (argc > 1)
		tfk_cli_usage_error("one DIR or ARCHIVE at a time, not %d", argc);
	if ((val_split != 0) != (subset_arg != NULL))
		tfk_cli_usage_error("--validation-split and --subset go together");
	if (val_split && !(val_split > 0 && val_split < 1))
		tfk_cli_usage_error("--validation-split: expected a fraction "
				    "between 0 and 1, not %g", val_split);
	if (subset_arg && !strcmp(subset_arg, "both") && !so.prefix)
		tfk_cli_usage_error("--subset both writes two outputs: it needs "
				    "-o PREFIX");
	return run_dirs(argv[0], &so, shard_i, shard_n, t0);
}
