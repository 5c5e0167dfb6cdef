/*
 * tfk-zip: merge the features of record i of each input into one
 * record, like tf.data.Dataset.zip((a, b, ...)) followed by a map that
 * merges the feature dicts.
 *
 * Record i of the output holds the features of record i of the first
 * input, then those of the second, and so on, each copied unchanged
 * (tfk_exb_add_feat: the value bytes are not re-encoded). The output
 * ends with the shortest input, as Dataset.zip does; the other inputs
 * are not read further (with -v they are, to say how many records were
 * left over).
 *
 * A feature name found in two inputs would silently lose one of the
 * values (protobuf keeps the last map entry), so it is an error unless
 * --prefix renames: input k's features become PREFIXk + name. The
 * check is per record (records need not share one schema); with the
 * usual handful of inputs it is a few hash lookups per feature into the
 * other decoded records, no table of its own.
 */
#include "example/example.h"
#include "io/record.h"
#include "util/buf.h"
#include "util/cli.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *out_path = "-", *comp_arg = "none", *prefix_arg;
static int verbose;

static const struct tfk_opt opts[] = {
	TFK_OPT_STR(0, "prefix", &prefix_arg, "P1,P2,...",
		    "prepend Pk to the feature names of the k-th input (one "
		    "per input; may be empty)"),
	TFK_OPT_STR('o', "output", &out_path, "FILE",
		    "write the records to FILE, atomically (-: stdout)"),
	TFK_OPT_STR(0, "compression", &comp_arg, "TYPE",
		    "compress the output: none, gzip or zlib"),
	TFK_OPT_FLAG('v', "verbose", &verbose,
		     "report the records zipped and those left over"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-zip",
	"[options] FILE FILE...",
	"merge the features of record i of each input into record i",
	"tfk-zip images.tfrecord labels.tfrecord > both.tfrecord\n"
	"  tfk-zip --prefix a/,b/ a.tfrecord b.tfrecord -o ab.tfrecord",
};

struct input {
	const char *path;
	const char *prefix;
	size_t prefix_len;
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	struct tfk_example ex;
};

static struct input *in;
static size_t n_in;

static void parse_prefixes(void)
{
	const char *p = prefix_arg;
	size_t i;

	for (i = 0; i < n_in; i++) {
		const char *e = strchr(p, ',');

		if (!e && i + 1 < n_in)
			tfk_cli_usage_error("--prefix: %zu inputs need %zu "
					    "prefixes", n_in, n_in);
		in[i].prefix = p;
		in[i].prefix_len = e ? (size_t)(e - p) : strlen(p);
		p = e ? e + 1 : p + strlen(p);
		if (i + 1 == n_in && e)
			tfk_cli_usage_error("--prefix: %zu inputs need %zu "
					    "prefixes", n_in, n_in);
	}
}

/* Input j < i that already holds the output name name[0..len), or -1. */
static long clash(size_t i, const char *name, size_t len)
{
	size_t j;

	for (j = 0; j < i; j++) {
		size_t pl = in[j].prefix_len;

		if (len >= pl && !memcmp(name, in[j].prefix, pl) &&
		    tfk_example_findn(&in[j].ex, name + pl, len - pl))
			return (long)j;
	}
	return -1;
}

/* Build the next output record from the current record of every input. */
static int merge(struct tfk_example_builder *b,
		 struct tfk_buf *name, struct tfk_err *err)
{
	size_t i, k;

	tfk_exb_reset(b);
	for (i = 0; i < n_in; i++) {
		struct input *x = &in[i];
		int rc = tfk_example_parse(&x->ex, x->rec.data, x->rec.len,
					   err);

		if (rc)
			return tfk_err_prefix(err, "%s: record %" PRIu64
					      " at byte %" PRIu64 ": bad "
					      "tf.Example", x->path,
					      x->rec.index, x->rec.off);
		for (k = 0; k < x->ex.n_feat; k++) {
			const struct tfk_feat *f = &x->ex.feat[k];
			long j;

			tfk_buf_reset(name);
			tfk_buf_add(name, x->prefix, x->prefix_len);
			tfk_buf_add(name, f->name, f->name_len);
			if (!tfk_buf_ok(name))
				return tfk_errf(err, TFK_ENOMEM,
						"out of memory");
			j = clash(i, (const char *)name->data, name->len);
			if (j >= 0)
				return tfk_errf(err, TFK_EINVAL, "%s: record %"
						PRIu64 " at byte %" PRIu64
						": feature \"%.*s\" is also in "
						"%s (rename with --prefix)",
						x->path, x->rec.index,
						x->rec.off, (int)(name->len > 200
						? 200 : name->len),
						(const char *)name->data,
						in[j].path);
			tfk_exb_add_feat_as(b, (const char *)name->data,
					    name->len, f);
		}
	}
	return 0;
}

/* With -v: how many records input i has from here on (the current one
 * counts when have_current). Errors are reported, not fatal. */
static uint64_t left_over(struct input *x, int have_current)
{
	struct tfk_err err;
	uint64_t n = have_current ? 1 : 0;
	int rc;

	while ((rc = tfk_rec_next(x->r, &x->rec, &err)) == 1)
		n++;
	if (rc < 0)
		tfk_cli_warn("%s (while counting what was left over)",
			     err.msg);
	return n;
}

int main(int argc, char **argv)
{
	struct tfk_example_builder b;
	struct tfk_rec_writer *w = NULL;
	struct tfk_buf name;
	struct tfk_err err;
	uint64_t n = 0;
	size_t i, ended = 0;
	int comp, rc = 0, n_stdin = 0;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (argc < 1)
		tfk_cli_usage_error("no input files");
	comp = tfk_comp_parse(comp_arg);
	if (comp < 0 || comp == TFK_COMP_AUTO)
		tfk_cli_usage_error("--compression: expected none, gzip or "
				    "zlib, got '%s'", comp_arg);
	n_in = (size_t)argc;
	in = calloc(n_in, sizeof(*in));
	if (!in) {
		tfk_cli_warn("out of memory");
		return 1;
	}
	for (i = 0; i < n_in; i++) {
		in[i].path = argv[i];
		in[i].prefix = "";
		tfk_example_init(&in[i].ex);
		n_stdin += !strcmp(argv[i], "-");
	}
	if (n_stdin > 1)
		tfk_cli_usage_error("standard input ('-') given %d times",
				    n_stdin);
	if (prefix_arg)
		parse_prefixes();

	for (i = 0; i < n_in && !rc; i++) {
		rc = tfk_rec_open(&in[i].r, in[i].path, TFK_COMP_AUTO, 0,
				  &err);
		if (!rc)
			in[i].path = tfk_rec_path(in[i].r);
	}
	if (!rc && !strcmp(out_path, "-"))
		fcntl(1, F_SETPIPE_SZ, 1 << 20);
	if (!rc)
		rc = tfk_recw_open(&w, out_path, comp, &err);
	tfk_exb_init(&b);
	tfk_buf_init(&name);
	while (!rc) {
		const uint8_t *p;
		size_t len;

		for (i = 0; i < n_in; i++) {
			rc = tfk_rec_next(in[i].r, &in[i].rec, &err);
			if (rc <= 0)
				break;
		}
		if (rc <= 0) {
			ended = i;
			break;
		}
		rc = merge(&b, &name, &err);
		if (!rc)
			rc = tfk_exb_finish(&b, &p, &len, &err);
		if (!rc)
			rc = tfk_recw_write(w, p, len, &err);
		n++;
	}
	if (rc == 0 && verbose) {
		uint64_t *left = calloc(n_in, sizeof(*left)), any = 0;

		for (i = 0; left && i < n_in; i++)
			if (i != ended)
				any += left[i] = left_over(&in[i], i < ended);
		if (!any)
			tfk_cli_warn("zipped %" PRIu64 " records; no input "
				     "has records left over", n);
		else
			tfk_cli_warn("zipped %" PRIu64 " records; %s ended "
				     "first", n, in[ended].path);
		for (i = 0; any && i < n_in; i++)
			if (left[i])
				tfk_cli_warn("%s: %" PRIu64 " record%s left "
					     "over", in[i].path, left[i],
					     left[i] == 1 ? "" : "s");
		free(left);
	}
	if (!rc) {
		rc = tfk_recw_close(w, &err);
	} else if (w && strcmp(out_path, "-")) {
		tfk_recw_discard(w);
	} else if (w) {
		struct tfk_err ignored;

		tfk_recw_close(w, &ignored);
	}
	for (i = 0; i < n_in; i++) {
		tfk_rec_close(in[i].r);
		tfk_example_release(&in[i].ex);
	}
	tfk_exb_release(&b);
	tfk_buf_release(&name);
	free(in);
	return rc ? tfk_cli_fail(&err) : 0;
}
