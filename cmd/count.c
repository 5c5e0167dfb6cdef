/*
 * tfk-count: count the records and bytes of TFRecord files, like wc.
 *
 * TensorFlow has no direct way to count records: people write
 * `sum(1 for _ in tf.data.TFRecordDataset(f))`, which parses every
 * record in Python. Here the loop is the record reader alone: the file
 * is read in 1 MiB chunks into two reused buffers (not mapped: see
 * io/in.c), the next chunk's read(2) on a read-ahead thread while the
 * crcs of this one's records are checked in place (carry-less multiply
 * folding or the CRC-32C instruction), and nothing else happens per
 * record, so a count is also a full integrity check. Without the
 * thread the read's copy and the crcs took turns on one core: ~0.5x
 * the speed of cat. When FILE.idx exists and is fresh
 * (see tfk-index) the answer comes from the index without reading the
 * data; --no-index forces the scan.
 *
 * BYTES is the size of the uncompressed TFRecord stream (framing
 * included): the file size for plain files, more for GZIP/ZLIB ones.
 * A file that fails is reported and left out of the total, and the
 * other files are still counted (exit 1 at the end), as wc does.
 */
#include "io/index.h"
#include "io/record.h"
#include "util/buf.h"
#include "util/cli.h"
#include "util/limit.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int json, no_index, skip_corrupt;
static uint64_t max_record;	/* from TFK_MAX_RECORD_BYTES in main */

static const struct tfk_opt opts[] = {
	TFK_OPT_FLAG(0, "json", &json, "print one JSON object instead of lines"),
	TFK_OPT_FLAG(0, "no-index", &no_index,
		     "scan the data even when a fresh FILE.idx exists"),
	TFK_OPT_FLAG(0, "skip-corrupt", &skip_corrupt,
		     "count the good records past corrupt ones (reported on "
		     "stderr) instead of failing"),
	TFK_OPT_SIZE(0, "max-record-bytes", &max_record, "BYTES",
		     "refuse records longer than BYTES "
		     "($TFK_MAX_RECORD_BYTES when set)"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-count",
	"[options] [FILE...]",
	"count the records and bytes of TFRecord files (verifying every crc)",
	"tfk-count train-*.tfrecord; tfk-cat a.tfrecord.gz | tfk-count",
};

struct count {
	const char *name;	/* as given; NULL for implicit stdin */
	uint64_t records, bytes;
	uint64_t bad_records, bad_bytes;
	int comp;
	int indexed;
	int failed;
	struct tfk_err err;
};

/*
 * Read the next good record. Without --skip-corrupt an error is
 * returned as is. With it, a record whose data crc fails is stepped
 * over by the reader itself, a bad header is followed by a resync, and
 * an input ending inside a record ends the file; each counts as one
 * dropped record. A broken stream (corrupt or truncated GZIP) ends the
 * file with a warning; i/o errors and exhausted memory stay fatal.
 */
static int next_good(struct tfk_rec_reader *r, struct tfk_rec *rec,
		     struct count *c)
{
	for (;;) {
		uint64_t off = tfk_rec_offset(r);
		int rc = tfk_rec_next(r, rec, &c->err);

		if (rc >= 0 || !skip_corrupt || rc == TFK_EIO ||
		    rc == TFK_ENOMEM)
			return rc;
		/* Nothing to resync in (offset unmoved): the error came
		 * from the stream, not a record header. */
		if (tfk_rec_offset(r) == off &&
		    (rc != TFK_ECORRUPT || tfk_rec_resync(r, &c->err) < 0 ||
		     tfk_rec_offset(r) == off)) {
			tfk_cli_warn("%s; rest of the file skipped", c->err.msg);
			return 0;
		}
		c->bad_records++;
		c->bad_bytes += tfk_rec_offset(r) - off;
	}
}

static void count_file(const char *path, struct count *c)
{
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	int rc;

	if (!no_index && path && strcmp(path, "-")) {
		struct tfk_index ix;

		tfk_index_init(&ix);
		rc = tfk_index_load(&ix, path, &c->err);
		if (rc == 1) {
			c->records = ix.n;
			c->bytes = ix.n ? ix.off[ix.n] : 0;
			c->indexed = 1;
		} else if (rc < 0) {
			tfk_cli_warn("%s; counting without it", c->err.msg);
		}
		tfk_index_release(&ix);
		if (rc == 1)
			return;
	}
	rc = tfk_rec_open(&r, path ? path : "-", TFK_COMP_AUTO,
			  TFK_REC_READAHEAD, &c->err);
	if (rc) {
		c->failed = 1;
		return;
	}
	tfk_rec_set_max_bytes(r, max_record);
	c->comp = tfk_in_comp(tfk_rec_input(r));
	while ((rc = next_good(r, &rec, c)) == 1)
		c->records++;
	c->bytes = tfk_rec_offset(r) - c->bad_bytes;
	if (rc < 0)
		c->failed = 1;
	tfk_rec_close(r);
}

static void print_json(struct count *c, size_t n, const struct count *tot)
{
	struct tfk_buf b;
	size_t i;

	tfk_buf_init(&b);
	tfk_buf_adds(&b, "{\"files\":[");
	for (i = 0; i < n; i++) {
		const char *name = c[i].name ? c[i].name : "-";

		tfk_buf_adds(&b, i ? ",{\"file\":" : "{\"file\":");
		if (tfk_utf8_valid((const uint8_t *)name, strlen(name)))
			tfk_buf_add_json_str(&b, name, strlen(name));
		else
			tfk_buf_adds(&b, "null");
		if (c[i].failed) {
			tfk_buf_adds(&b, ",\"error\":");
			tfk_buf_add_json_str(&b, c[i].err.msg,
					     strlen(c[i].err.msg));
			tfk_buf_addc(&b, '}');
			continue;
		}
		tfk_buf_addf(&b, ",\"records\":%" PRIu64 ",\"bytes\":%" PRIu64
			     ",\"compression\":\"%s\",\"indexed\":%s",
			     c[i].records, c[i].bytes,
			     c[i].indexed ? "none" : tfk_comp_name(c[i].comp),
			     c[i].indexed ? "true" : "false");
		tfk_buf_addf(&b, ",\"corrupt_records\":%" PRIu64
			     ",\"corrupt_bytes\":%" PRIu64 "}",
			     c[i].bad_records, c[i].bad_bytes);
	}
	tfk_buf_addf(&b, "],\"records\":%" PRIu64 ",\"bytes\":%" PRIu64
		     ",\"corrupt_records\":%" PRIu64 ",\"corrupt_bytes\":%"
		     PRIu64 "}\n", tot->records, tot->bytes, tot->bad_records,
		     tot->bad_bytes);
	if (tfk_buf_ok(&b))
		fwrite(b.data, 1, b.len, stdout);
	tfk_buf_release(&b);
}

int main(int argc, char **argv)
{
	static struct count one;
	struct count *c = &one, tot;
	int i, n, rc = 0;

	/* the live default for --help; a malformed value is reported
	 * by tfk_rec_open, which reads it again */
	if (tfk_limit_get("TFK_MAX_RECORD_BYTES", TFK_REC_MAX_BYTES_DEFAULT,
			  &max_record, NULL))
		max_record = TFK_REC_MAX_BYTES_DEFAULT;
	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	n = argc ? argc : 1;
	if (argc > 1) {
		c = calloc((size_t)n, sizeof(*c));
		if (!c) {
			tfk_cli_warn("out of memory");
			return 1;
		}
	}
	memset(&tot, 0, sizeof(tot));
	for (i = 0; i < n; i++) {
		c[i].name = argc ? argv[i] : NULL;
		count_file(c[i].name, &c[i]);
		if (c[i].failed) {
			tfk_cli_fail(&c[i].err);
			rc = 1;
			continue;
		}
		if (c[i].bad_records)
			tfk_cli_warn("%s: skipped %" PRIu64 " corrupt record%s (%"
				     PRIu64 " bytes)", c[i].name ? c[i].name :
				     "<stdin>", c[i].bad_records,
				     c[i].bad_records == 1 ? "" : "s",
				     c[i].bad_bytes);
		tot.records += c[i].records;
		tot.bytes += c[i].bytes;
		tot.bad_records += c[i].bad_records;
		tot.bad_bytes += c[i].bad_bytes;
		if (!json)
			printf("%" PRIu64 " %" PRIu64 "%s%s\n", c[i].records,
			       c[i].bytes, c[i].name ? " " : "",
			       c[i].name ? c[i].name : "");
	}
	if (json)
		print_json(c, (size_t)n, &tot);
	else if (n > 1)
		printf("%" PRIu64 " %" PRIu64 " total\n", tot.records, tot.bytes);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		tfk_cli_warn("<stdout>: write failed");
		rc = 1;
	}
	if (c != &one)
		free(c);
	return rc;
}
