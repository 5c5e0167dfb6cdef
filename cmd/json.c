/*
 * tfk-json: JSON lines in, tf.Example records out: the reverse of
 * `tfk-cat --json`.
 *
 * Each non-blank line holds one JSON object, {"name": [values], ...}, in
 * the form lib/example/exjson.h describes; it becomes one Example with
 * the features in the order written, floats and int64s packed, as
 * TensorFlow writes them, so `tfk-cat --json X | tfk-json --schema S`
 * gives back X byte for byte when X was written in TensorFlow's
 * canonical form. Where JSON cannot say the kind (an empty list,
 * integers meant as floats) the schema document of tfk-inspect --json
 * (--schema) decides.
 *
 * In TensorFlow this is a Python loop of json.loads and
 * tf.train.Example(...).SerializeToString() into a TFRecordWriter; here
 * a line goes straight from its bytes to the wire form with no tree in
 * between.
 *
 * A bad line stops the run: "tfk-json: FILE:LINE: feature \"x\": what",
 * exit 1, and with -o no output file (it is written under a temporary
 * name, renamed only when complete). Input may be GZIP or ZLIB
 * compressed (detected).
 */
#include "example/example.h"
#include "example/exjson.h"
#include "example/schema.h"
#include "io/in.h"
#include "io/record.h"
#include "util/cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* A JSON line longer than this is a mistake (a file without newlines),
 * not a record: refuse it instead of holding it all in memory. */
#define MAX_LINE ((size_t)256 << 20)

static const char *out_path = "-", *comp_arg = "none", *schema_path;

static const struct tfk_opt opts[] = {
	TFK_OPT_STR('o', "output", &out_path, "FILE",
		    "write the records to FILE, atomically (-: stdout)"),
	TFK_OPT_STR(0, "compression", &comp_arg, "TYPE",
		    "compress the output: none, gzip or zlib"),
	TFK_OPT_STR(0, "schema", &schema_path, "FILE",
		    "feature kinds from a tfk-inspect --json document, for "
		    "empty lists and integral floats"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-json",
	"[options] [FILE...]",
	"turn JSON lines (one object per line) into tf.Example records",
	"tfk-cat --json data.tfrecord | tfk-json --schema data.schema.json "
	"-o copy.tfrecord",
};

struct run {
	struct tfk_exjson_reader reader;
	struct tfk_example_builder b;
	struct tfk_rec_writer *w;
	struct tfk_err err;
};

/* JSON text starts with '{' or white space; anything else on an input
 * that could be compressed is taken for GZIP/ZLIB by its magic. */
static int looks_plain(const uint8_t *p, size_t n)
{
	return n == 0 || p[0] == '{' || p[0] == ' ' || p[0] == '\t' ||
	       p[0] == '\n' || p[0] == '\r';
}

static int blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

static int convert_line(struct run *r, const char *path, uint64_t lineno,
			const char *line, size_t len)
{
	const uint8_t *p;
	size_t n;
	int rc;

	tfk_exb_reset(&r->b);
	rc = tfk_exjson_read_line(&r->reader, line, len, &r->b, &r->err);
	if (!rc)
		rc = tfk_exb_finish(&r->b, &p, &n, &r->err);
	if (rc)
		return tfk_err_prefix(&r->err, "%s:%" PRIu64, path, lineno);
	return tfk_recw_write(r->w, p, n, &r->err);
}

static int convert_file(struct run *r, const char *name)
{
	struct tfk_in *in;
	const uint8_t *p;
	const char *path;
	size_t need = 1, scanned = 0;
	uint64_t lineno = 0;
	int rc;

	rc = tfk_in_open(&in, name, TFK_COMP_AUTO, looks_plain, &r->err);
	if (rc)
		return rc;
	path = tfk_in_path(in);
	for (;;) {
		ssize_t got = tfk_in_fill(in, need, &p, &r->err);
		const uint8_t *nl;
		size_t len;

		if (got <= 0) {
			rc = (int)got;
			break;
		}
		nl = memchr(p + scanned, '\n', (size_t)got - scanned);
		if (!nl && (size_t)got >= need) {
			/* no newline yet: make more visible */
			if ((size_t)got > MAX_LINE) {
				rc = tfk_errf(&r->err, TFK_EINVAL, "%s:%" PRIu64
					      ": line longer than %zu MiB",
					      path, lineno + 1, MAX_LINE >> 20);
				break;
			}
			scanned = (size_t)got;
			need = (size_t)got + 1;
			continue;
		}
		len = nl ? (size_t)(nl - p) : (size_t)got;
		lineno++;
		if (!blank((const char *)p, len) &&
		    (rc = convert_line(r, path, lineno, (const char *)p, len)))
			break;
		tfk_in_consume(in, nl ? len + 1 : len);
		need = 1;
		scanned = 0;
	}
	tfk_in_close(in);
	return rc;
}

int main(int argc, char **argv)
{
	struct tfk_schema schema;
	struct run r;
	int i, rc = 0, comp;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	comp = tfk_comp_parse(comp_arg);
	if (comp != TFK_COMP_NONE && comp != TFK_COMP_GZIP &&
	    comp != TFK_COMP_ZLIB)
		tfk_cli_usage_error("--compression: expected none, gzip or "
				    "zlib, not '%s'", comp_arg);
	tfk_schema_init(&schema);
	if (schema_path && tfk_schema_read(&schema, schema_path, &r.err)) {
		rc = tfk_cli_fail(&r.err);
		tfk_schema_release(&schema);
		return rc;
	}
	if (schema_path && schema.sequence) {
		tfk_cli_warn("%s: a SequenceExample schema (context, "
			     "feature_lists): tfk-json writes Examples",
			     schema_path);
		tfk_schema_release(&schema);
		return 1;
	}
	tfk_exjson_reader_init(&r.reader,
			       schema_path ? tfk_exjson_schema_kind : NULL,
			       &schema);
	tfk_exb_init(&r.b);
	rc = tfk_recw_open(&r.w, out_path, comp, &r.err);
	if (!rc && argc == 0)
		rc = convert_file(&r, "-");
	for (i = 0; !rc && i < argc; i++)
		rc = convert_file(&r, argv[i]);
	if (!rc)
		rc = tfk_recw_close(r.w, &r.err);
	else
		tfk_recw_discard(r.w);
	tfk_exb_release(&r.b);
	tfk_exjson_reader_release(&r.reader);
	tfk_schema_release(&schema);
	return rc ? tfk_cli_fail(&r.err) : 0;
}
