/*
 * tfk-split: a deterministic train/validation/test split of records.
 *
 * TensorFlow has no one call for this: people write
 * ds.enumerate().filter(lambda i, x: i % 10 < 8) and its complement
 * (reading the data once per split), tf.keras.utils.split_dataset
 * (which shuffles in memory), or hash a key with
 * tf.strings.to_hash_bucket_fast. Here one pass over the input writes
 * every split at once.
 *
 * Each record gets a number u in [0, 1) and goes to the first split j
 * whose cumulative ratio r0 + ... + rj exceeds u (the last split takes
 * what rounding leaves). Without --key, u = tfk_expr_random(seed, pos,
 * 0), the same draw as tfk-filter's random() for the record at position
 * pos of the whole input: reproducible for the same input and seed.
 * With --key F, u comes from a seeded hash of the values of feature F
 * alone (see key_u), so a record lands in the same split in every run
 * and however the data set grows or is reordered: appending records
 * never moves old ones to another split (the property that keeps test
 * data out of training as a corpus grows).
 *
 * The ratios must sum to 1 within 1e-9; they are not normalised,
 * because "0.8,0.1,0.2" is far more often a typo than an intent.
 * All outputs appear together, only when the whole input was read:
 * they are written under temporary names and renamed at the end.
 */
#include "data/expr.h"
#include "example/example.h"
#include "io/out.h"
#include "io/record.h"
#include "util/cli.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SPLITS 1000

static const char *ratios_arg, *names_arg, *prefix, *key, *comp_arg = "none";
static long seed;
static int quiet;

static const struct tfk_opt opts[] = {
	TFK_OPT_STR(0, "ratios", &ratios_arg, "R,R,...",
		    "fractions of the records per split, summing to 1"),
	TFK_OPT_STR('o', "output", &prefix, "PREFIX",
		    "write PREFIX-NAME.tfrecord per split"),
	TFK_OPT_STR(0, "names", &names_arg, "N,N,...",
		    "split names (default train,val,test for 3 ratios, "
		    "train,test for 2, else split0,split1,...)"),
	TFK_OPT_STR(0, "key", &key, "FEATURE",
		    "split by a hash of this feature's values (stable as "
		    "data grows) instead of by position"),
	TFK_OPT_LONG(0, "seed", &seed, "S", "seed of the draw or the hash"),
	TFK_OPT_STR(0, "compression", &comp_arg, "TYPE",
		    "compress the outputs: none, gzip (.gz) or zlib (.zlib)"),
	TFK_OPT_FLAG('q', "quiet", &quiet,
		     "do not report the counts per split on stderr"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-split",
	"--ratios R,R,... -o PREFIX [options] [FILE...]",
	"split records into train/val/test files, by seeded draw or key hash",
	"tfk-split --ratios 0.8,0.1,0.1 --seed 1 -o data all.tfrecord\n"
	"  tfk-split --ratios 0.9,0.1 --key id -o data all.tfrecord",
};

struct split {
	char *name, *path;
	double cum;		/* r0 + ... + rj */
	struct tfk_out *out;
	uint64_t n;
};

static struct split *sp;
static size_t n_sp;
static struct tfk_example ex;
static uint64_t n_in;

/* FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3:
 * Fowler, Noll, Vo; draft-eastlake-fnv). */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
	uint8_t le[8];
	int i;

	for (i = 0; i < 8; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	return fnv(h, le, 8);
}

/*
 * The key's number in [0, 1): FNV-1a 64 over the seed (8 bytes,
 * little-endian), the kind (one byte: 1 bytes, 2 float, 3 int64), then
 * each value: int64s as 8 bytes little-endian, floats as their 4 IEEE
 * bytes little-endian, bytes values as their length (8 bytes
 * little-endian) and the bytes; then h = tfk_expr_mix64(h), because
 * FNV's high bits mix poorly, and u = (h >> 11) * 2^-53.
 */
static int key_u(const struct tfk_feat *f, double *u, struct tfk_err *err)
{
	uint64_t h = fnv_u64(0xcbf29ce484222325ULL, (uint64_t)seed);
	uint8_t kind = (uint8_t)f->kind;
	size_t it = 0, len;
	const uint8_t *p;

	h = fnv(h, &kind, 1);
	if (f->kind == TFK_FEAT_INT64 && f->n) {
		int64_t *v = malloc(f->n * sizeof(*v));
		size_t i;

		if (!v)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		tfk_feat_int64s(f, v, f->n);
		for (i = 0; i < f->n; i++)
			h = fnv_u64(h, (uint64_t)v[i]);
		free(v);
	} else if (f->kind == TFK_FEAT_FLOAT && f->n) {
		float *v = malloc(f->n * sizeof(*v));
		size_t i;

		if (!v)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		tfk_feat_floats(f, v, f->n);
		for (i = 0; i < f->n; i++) {
			uint32_t bits;
			uint8_t le[4];

			memcpy(&bits, &v[i], 4);
			le[0] = (uint8_t)bits;
			le[1] = (uint8_t)(bits >> 8);
			le[2] = (uint8_t)(bits >> 16);
			le[3] = (uint8_t)(bits >> 24);
			h = fnv(h, le, 4);
		}
		free(v);
	} else {
		while (tfk_feat_bytes_next(f, &it, &p, &len)) {
			h = fnv_u64(h, len);
			h = fnv(h, p, len);
		}
	}
	*u = (double)(tfk_expr_mix64(h) >> 11) * 0x1p-53;
	return 0;
}

static size_t pick(double u)
{
	size_t j;

	for (j = 0; j + 1 < n_sp; j++)
		if (u < sp[j].cum)
			return j;
	return n_sp - 1;
}

static int split_file(const char *path, struct tfk_err *err)
{
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	int rc;

	rc = tfk_rec_open(&r, path, TFK_COMP_AUTO, 0, err);
	if (rc)
		return rc;
	while ((rc = tfk_rec_next(r, &rec, err)) == 1) {
		double u = 0;
		size_t j;

		if (key) {
			const struct tfk_feat *f;

			rc = tfk_example_parse(&ex, rec.data, rec.len, err);
			if (rc) {
				tfk_err_prefix(err, "%s: record %" PRIu64
					       " at byte %" PRIu64 ": bad "
					       "tf.Example", tfk_rec_path(r),
					       rec.index, rec.off);
				break;
			}
			f = tfk_example_find(&ex, key);
			if (!f) {
				rc = tfk_errf(err, TFK_EINVAL, "%s: record %"
					      PRIu64 " at byte %" PRIu64 ": key "
					      "feature \"%s\" missing",
					      tfk_rec_path(r), rec.index,
					      rec.off, key);
				break;
			}
			if ((rc = key_u(f, &u, err)))
				break;
		} else {
			u = tfk_expr_random((uint64_t)seed, n_in, 0);
		}
		n_in++;
		j = pick(u);
		sp[j].n++;
		rc = tfk_out_write(sp[j].out, rec.data - TFK_REC_HEADER,
				   rec.len + TFK_REC_OVERHEAD, err);
		if (rc)
			break;
	}
	tfk_rec_close(r);
	return rc < 0 ? rc : 0;
}

/* Split "a,b,c" into a malloc'd array of malloc'd strings. */
static size_t split_list(const char *s, char ***out)
{
	size_t n = 1, i = 0;
	const char *p;
	char **v;

	for (p = s; *p; p++)
		n += *p == ',';
	if (n > MAX_SPLITS)
		tfk_cli_usage_error("at most %d splits", MAX_SPLITS);
	v = calloc(n, sizeof(*v));
	if (!v)
		tfk_cli_usage_error("out of memory");
	for (p = s;; p++) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		v[i] = strndup(p, len);
		if (!v[i++])
			tfk_cli_usage_error("out of memory");
		if (!e)
			break;
		p = e;
	}
	*out = v;
	return n;
}

static void setup(int comp)
{
	static const char *three[] = { "train", "val", "test" };
	static const char *two[] = { "train", "test" };
	const char *ext = comp == TFK_COMP_GZIP ? ".gz" :
			  comp == TFK_COMP_ZLIB ? ".zlib" : "";
	char **rs, **ns = NULL;
	double sum = 0;
	size_t i, j;

	if (!ratios_arg)
		tfk_cli_usage_error("--ratios is required");
	if (!prefix || !*prefix)
		tfk_cli_usage_error("-o PREFIX is required");
	n_sp = split_list(ratios_arg, &rs);
	sp = calloc(n_sp, sizeof(*sp));
	if (!sp)
		tfk_cli_usage_error("out of memory");
	for (i = 0; i < n_sp; i++) {
		char *end;
		double r = strtod(rs[i], &end);

		if (end == rs[i] || *end || !isfinite(r) || r < 0)
			tfk_cli_usage_error("--ratios: '%s' is not a "
					    "fraction >= 0", rs[i]);
		sum += r;
		sp[i].cum = sum;
		free(rs[i]);
	}
	free(rs);
	if (fabs(sum - 1) > 1e-9)
		tfk_cli_usage_error("--ratios: they sum to %.17g, not 1", sum);
	if (names_arg) {
		if (split_list(names_arg, &ns) != n_sp)
			tfk_cli_usage_error("--names: %zu ratios need %zu "
					    "names", n_sp, n_sp);
	}
	for (i = 0; i < n_sp; i++) {
		char buf[32];
		const char *name = ns ? ns[i] : n_sp == 3 ? three[i] :
				   n_sp == 2 ? two[i] : NULL;

		if (!name) {
			snprintf(buf, sizeof(buf), "split%zu", i);
			name = buf;
		}
		if (!*name || strchr(name, '/'))
			tfk_cli_usage_error("--names: '%s' is not a file name "
					    "part", name);
		for (j = 0; j < i; j++)
			if (!strcmp(sp[j].name, name))
				tfk_cli_usage_error("--names: '%s' given "
						    "twice", name);
		sp[i].name = strdup(name);
		if (!sp[i].name || asprintf(&sp[i].path, "%s-%s.tfrecord%s",
					    prefix, name, ext) < 0)
			tfk_cli_usage_error("out of memory");
		if (ns)
			free(ns[i]);
	}
	free(ns);
}

int main(int argc, char **argv)
{
	static char *stdin_only[] = { "-" };
	struct tfk_err err;
	char **files;
	size_t j;
	int i, n, comp, rc = 0;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	comp = tfk_comp_parse(comp_arg);
	if (comp < 0 || comp == TFK_COMP_AUTO)
		tfk_cli_usage_error("--compression: expected none, gzip or "
				    "zlib, got '%s'", comp_arg);
	setup(comp);
	if (!strcmp(prefix, "-"))
		tfk_cli_usage_error("-o PREFIX: several files are written, "
				    "not stdout");
	files = argc ? argv : stdin_only;
	n = argc ? argc : 1;

	for (j = 0; j < n_sp && !rc; j++)
		rc = tfk_out_open(&sp[j].out, sp[j].path, comp, &err);
	if (!rc) {
		tfk_example_init(&ex);
		for (i = 0; i < n && !rc; i++)
			rc = split_file(files[i], &err);
		tfk_example_release(&ex);
	}
	/* Complete every temporary first, then rename them all: a failure
	 * anywhere leaves none of the outputs. */
	for (j = 0; j < n_sp && !rc; j++)
		rc = tfk_out_finish(sp[j].out, &err);
	for (j = 0; j < n_sp; j++) {
		if (rc) {
			tfk_out_discard(sp[j].out);
		} else if ((rc = tfk_out_commit(sp[j].out, NULL, &err))) {
			size_t k;

			for (k = j + 1; k < n_sp; k++)
				tfk_out_discard(sp[k].out);
			break;
		}
	}
	if (!rc && !quiet)
		for (j = 0; j < n_sp; j++)
			tfk_cli_warn("%s: %" PRIu64 " records (%.2f%%) -> %s",
				     sp[j].name, sp[j].n, n_in ? 100.0 *
				     (double)sp[j].n / (double)n_in : 0.0,
				     sp[j].path);
	for (j = 0; j < n_sp; j++) {
		free(sp[j].name);
		free(sp[j].path);
	}
	free(sp);
	return rc ? tfk_cli_fail(&err) : 0;
}
