/*
 * tfk-predict: run a SavedModel signature over a stream of tf.Example
 * records in batches and write one prediction record per input record,
 * as TF Serving's batch prediction or model.predict(dataset) does.
 *
 * The model is loaded once and the signature prepared as one runner
 * (model/servable.h: pruned to the inputs fed, one executor) that runs
 * every batch; its arena is planned once for the full batch size and
 * once more for a short last batch.
 *
 * Feeding. Each signature input is fed from the Example feature of the
 * same name (--map INPUT=FEATURE overrides; for a model tfk-train wrote,
 * the feature its spec fed the input from, when the records have it),
 * the values of one record making one row of the batch, reshaped to the
 * input's shape without its batch dimension (one unknown dimension is
 * inferred from the count; an input of unknown rank gets [batch,
 * count]). A model tfk-train wrote takes the records it was trained on:
 * the feature training read feeds a float input converted as training
 * converted it (its spec in assets.extra/tfkit_spec.json: raw uint8,
 * int8 or float32 bytes, int64 or float lists, times scale plus offset;
 * nn/feed.h's tfk_feed_feat_floats, the one definition), except on
 * serving_raw, which does that in its graph. Otherwise only
 * conversions that lose nothing and guess nothing are made: float_list
 * -> float32, int64_list -> float32 (a cast, as TF Serving's JSON and
 * training make it), int64 or int32 (range-checked), bytes_list ->
 * string, one bytes value -> uint8 (raw bytes, e.g. an image). Anything
 * else is an error naming the record, the feature and what the
 * signature wants (for a model tfk-train wrote, plus how its training
 * spec fed that input and that serving_raw takes the records as they
 * are). A signature whose one input is a string, with no feature of
 * that name in the first record, takes the serialized records
 * themselves: TF Serving's regress/classify signatures and TFX serving
 * functions, whose graph starts with ParseExample. Which inputs are fed
 * is decided by the first record: an input without a feature there (and
 * without --map) is left to its default, and the run fails if the
 * outputs need it.
 *
 * Output. Per record: one feature per output key (in key order) with
 * the record's row of that output flattened (float types as a
 * float_list, integer and bool types as an int64_list, strings as a
 * bytes_list), then the --keep features copied unchanged. As TFRecords
 * of tf.Example (default), JSON lines in tfk-cat --json's form, or CSV
 * with a header (an output with several values per record becomes
 * KEY_0, KEY_1, ...; the same for kept features).
 *
 * Rejected: converting dtypes beyond the above (uint8 image bytes to a
 * float input of a model without a training spec would need a scale
 * only the user knows); threads over
 * batches (-j gives the kernels threads; batches run in order, so the
 * output order is the input order and -j never changes it).
 *
 * --profile/--trace (profile-opts.h) record every batch as a step
 * "predict": from the end of the last batch, reading and converting
 * its records (the input wait, "IteratorGetNext"), the model's run and
 * writing its predictions.
 */
#include "example/example.h"
#include "example/exjson.h"
#include "io/out.h"
#include "io/record.h"
#include "util/mpi.h"
#include "kernels/cpu.h"
#include "model/servable.h"
#include "nn/feed.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cli.h"

#include "profile-opts.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *dir, *tag_set = "serve",
		  *signature_def = "serving_default", *out_path = "-";
static long batch_size = 256, jobs = 1;
static struct tfk_strlist keep_arg, map_arg;
static int json_out, csv_out;
/* under mpirun: this rank reads records k with k % ranks == rank */
static int rank, ranks = 1, gather;
static uint64_t seen;

/* DIR/assets.extra/tfkit_spec.json's "inputs" (tfk-train's mapping of
 * features to inputs), when the model has one: only for hints. */
static json_t *train_spec;
static int raw_sig;	/* the model has serving_raw and it is not the one run */

static const struct tfk_opt opts[] = {
	TFK_OPT_STR(0, "dir", &dir, "DIR", "the SavedModel directory"),
	TFK_OPT_STR(0, "tag_set", &tag_set, "TAGS",
		    "the MetaGraphDef's tags, comma-separated"),
	TFK_OPT_STR(0, "signature_def", &signature_def, "KEY",
		    "the signature to run"),
	TFK_OPT_LONG('b', "batch", &batch_size, "N",
		     "records per run of the model (the last batch is short)"),
	TFK_OPT_LIST(0, "keep", &keep_arg, "FEATURE,...",
		     "copy these input features next to the predictions"),
	TFK_OPT_LIST(0, "map", &map_arg, "INPUT=FEATURE",
		     "feed signature input INPUT from FEATURE (default: the "
		     "feature named INPUT, or the one tfk-train fed it from)"),
	TFK_OPT_FLAG(0, "json", &json_out,
		     "write JSON lines (tfk-cat --json's form), not records"),
	TFK_OPT_FLAG(0, "csv", &csv_out,
		     "write CSV with a header, not records"),
	TFK_OPT_STR('o', "output", &out_path, "FILE",
		    "write to FILE, atomically (-: stdout)"),
	TFK_OPT_LONG('j', "jobs", &jobs, "N", "kernel threads"),
	TFK_OPT_FLAG(0, "gather", &gather,
		     "under mpirun: rank 0 writes every rank's predictions "
		     "in the input's order (default: each rank writes "
		     "FILE's shard NAME-RRRRR-of-NNNNN.EXT)"),
	PROFILE_OPTS,
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-predict",
	"--dir DIR [--signature_def KEY] [--batch N] [--keep FEATURE] "
	"[--map INPUT=FEATURE] [--json|--csv] [-o FILE] [FILE...]",
	"run a SavedModel signature over tf.Example records, one prediction "
	"record per record",
	"tfk-predict --dir model --keep label --csv test.tfrecord",
};

/* A record of the current batch: its bytes in the batch store. */
struct brec {
	size_t off, len;
	const char *file;
	uint64_t index, byte;
};

/* A signature input and how it is fed. */
struct input {
	const struct tfk_sv_tensor *ti;		/* as the signature says */
	const struct tfk_sv_tensor *fd;		/* as the runner takes it */
	int slot;		/* its runner input */
	const char *feature;
	int mapped;		/* --map named the feature */
	/* how tfk-train fed this input (its spec in the export), and
	 * whether the feature fed is the one training read, so its values
	 * are converted as training converted them (nn/feed.h) */
	struct tfk_feed_how how;
	int convert;
	int fed;
	int whole;		/* fed the serialized records */
	int rank;		/* of one row; -1: unknown ([count]) */
	int64_t dims[TFK_MAX_RANK];	/* of one row, -1 unknown */
	struct tfk_buf vals;	/* the batch's values */
	struct tfk_buf tmp;	/* int64s of one row for an int32 input */
	int64_t per;		/* values per row in this batch */
	int64_t row_dims[TFK_MAX_RANK];	/* resolved for this batch */
	uint64_t first_row;	/* record that fixed per, for messages */
	const char *first_file;
};

/* A kept feature: its CSV column count (from the first record). */
struct keep {
	const char *name;
	long cols;
};

struct run {
	uint64_t t_step;	/* profiles: the batch's start */
	int64_t n_steps;	/* profiles: batches run */
	struct tfk_servable *sv;
	const struct tfk_sv_signature *sig;
	struct tfk_runner *r;
	int n_fetch;		/* the runner's outputs */
	int n_in;
	struct input *in;
	int n_keep;
	struct keep *keep;
	int n_feed;
	struct input **feed_in;		/* the inputs fed and needed */
	struct tfk_tensor *feeds;	/* by runner input: views of vals */
	const struct tfk_tensor **fetched;
	long *out_cols;		/* per fetch, from the first batch */
	long batch;		/* effective batch size */
	int fixed_batch;	/* an input's batch dimension is fixed */
	int any_feature;	/* some input reads features */
	int ready;		/* imported, header written */
	struct tfk_buf store;	/* the batch's record bytes */
	struct brec *recs;
	long n_recs;
	struct tfk_example ex;
	struct tfk_example_builder b;
	struct tfk_buf line, scratch;
	struct tfk_rec_writer *w;
	struct tfk_out *o;
	uint64_t n_out;
};

static char *shape_of(const struct input *in, char *buf, size_t n)
{
	char s[128];

	const struct tfk_sv_tensor *t = in->fd ? in->fd : in->ti;

	tfk_shape_str(t->rank, t->shape, s, sizeof(s));
	snprintf(buf, n, "%s %s", tfk_dtype_name(t->dtype), s);
	return buf;
}

/* Errors about record r: "FILE: record N at byte OFF: ". */
static int rec_err(struct tfk_err *err, const struct brec *r)
{
	return tfk_err_prefix(err, "%s: record %" PRIu64 " at byte %" PRIu64,
			      r->file, r->index, r->byte);
}

/*
 * When tfk-train wrote the model, its spec says how records fed input
 * key in training (feature, storage dtype, scale); append that to err as
 * a hint, since a record stream it was trained on does not feed the
 * SavedModel as is (no conversion is guessed here).
 */
static int spec_hint(struct tfk_err *err, const char *key)
{
	json_t *in = train_spec ? json_object_get(train_spec, key) : NULL;
	json_t *f = in ? json_object_get(in, "feature") : NULL;
	json_t *dt = in ? json_object_get(in, "dtype") : NULL;
	json_t *sc = in ? json_object_get(in, "scale") : NULL;
	json_t *of = in ? json_object_get(in, "offset") : NULL;
	char how[160] = "";
	size_t n = strlen(err->msg), k = 0;

	if (!json_is_string(f))
		return err->code;
	if (json_is_string(dt))
		k += snprintf(how + k, sizeof(how) - k, "%s%s",
			      k ? ", " : " (", json_string_value(dt));
	if (json_is_number(sc) && k < sizeof(how))
		k += snprintf(how + k, sizeof(how) - k, "%sscale %.9g",
			      k ? ", " : " (", json_number_value(sc));
	if (json_is_number(of) && k < sizeof(how))
		k += snprintf(how + k, sizeof(how) - k, "%soffset %.9g",
			      k ? ", " : " (", json_number_value(of));
	if (k && k < sizeof(how))
		snprintf(how + k, sizeof(how) - k, ")");
	snprintf(err->msg + n, sizeof(err->msg) - n, "; in training it was "
		 "fed from feature '%s'%s: convert that feature first, e.g. "
		 "with tfk-map, then --map %s=NEW_FEATURE%s",
		 json_string_value(f), how, key, raw_sig ? ", or use "
		 "--signature_def serving_raw, which takes the records as "
		 "they are" : "");
	return err->code;
}

/* Set-up ---------------------------------------------------------------- */

static int find_output(const struct tfk_sv_signature *sig, const char *key)
{
	int j;

	for (j = 0; j < sig->n_outputs; j++)
		if (!strcmp(sig->outputs[j].key, key))
			return j;
	return -1;
}

/* Parse --map and --keep against the signature (before any record). */
static int setup_names(struct run *R, struct tfk_err *err)
{
	const struct tfk_sv_signature *sig = R->sig;
	size_t i;
	int j;

	R->n_in = sig->n_inputs;
	R->in = tfk_calloc(sig->n_inputs + 1, sizeof(*R->in));
	if (!R->in)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (j = 0; j < sig->n_inputs; j++) {
		struct input *in = &R->in[j];
		char where[200];

		in->ti = &sig->inputs[j];
		in->feature = sig->inputs[j].key;
		tfk_buf_init(&in->vals);
		tfk_buf_init(&in->tmp);
		snprintf(where, sizeof(where), "%s/assets.extra/"
			 "tfkit_spec.json: inputs.%s", dir, in->ti->key);
		/* serving_raw's keys are features, not the spec's inputs */
		if (tfk_feed_how_parse(train_spec && strcmp(sig->key,
				       "serving_raw") ?
				       json_object_get(train_spec,
						       in->ti->key) : NULL,
				       where, &in->how, err))
			return err->code;
	}
	for (i = 0; i < map_arg.n; i++) {
		const char *m = map_arg.v[i], *eq = strchr(m, '=');

		if (!eq || eq == m || !eq[1])
			tfk_cli_usage_error("--map %s: expected INPUT=FEATURE",
					    m);
		for (j = 0; j < sig->n_inputs; j++)
			if (strlen(sig->inputs[j].key) == (size_t)(eq - m) &&
			    !strncmp(sig->inputs[j].key, m, eq - m))
				break;
		if (j == sig->n_inputs) {
			struct tfk_buf l;
			int k;

			tfk_buf_init(&l);
			for (k = 0; k < sig->n_inputs; k++)
				tfk_buf_addf(&l, "%s%s", k ? ", " : "",
					     sig->inputs[k].key);
			tfk_buf_addc(&l, 0);
			tfk_errf(err, TFK_EINVAL, "--map %s: signature %s has "
				 "no input '%.*s'; its inputs: %s", m,
				 sig->key, (int)(eq - m), m,
				 l.data ? (char *)l.data : "");
			tfk_buf_release(&l);
			return err->code;
		}
		R->in[j].feature = eq + 1;
		R->in[j].mapped = 1;
	}
	/* --keep a,b and --keep a --keep b */
	for (i = 0; i < keep_arg.n; i++) {
		const char *p = keep_arg.v[i];

		while (*p) {
			const char *q = strchr(p, ',');
			size_t n = q ? (size_t)(q - p) : strlen(p);
			struct keep *nk;
			char *name;

			if (n) {
				name = tfk_malloc(n + 1);
				nk = tfk_realloc(R->keep, (R->n_keep + 1) *
						 sizeof(*nk));
				if (!name || !nk) {
					tfk_free(name);
					if (nk)
						R->keep = nk;
					return tfk_errf(err, TFK_ENOMEM,
							"out of memory");
				}
				R->keep = nk;
				memcpy(name, p, n);
				name[n] = 0;
				R->keep[R->n_keep].name = name;
				R->keep[R->n_keep].cols = 0;
				R->n_keep++;
				if (find_output(R->sig, name) >= 0)
					return tfk_errf(err, TFK_EINVAL,
							"--keep %s: signature "
							"%s has an output of "
							"that name", name,
							sig->key);
			}
			p += n;
			if (*p)
				p++;
		}
	}
	return 0;
}

static int dtype_feedable(enum tfk_dtype t)
{
	return t == TFK_DT_FLOAT || t == TFK_DT_INT64 ||
		t == TFK_DT_INT32 || t == TFK_DT_STRING || t == TFK_DT_UINT8;
}

/* Decide the feeds from the first record, import, make the executor. */
static int setup_model(struct run *R, const struct brec *r0,
		       struct tfk_err *err)
{
	const uint8_t *p0 = R->store.data + r0->off;
	const char **names = NULL;
	struct tfk_runner_opts ro;
	int i, j, n_fed = 0, rc;
	char sbuf[160];

	/* the first record decides which features exist; a record that is
	 * not an Example can still feed a single string input whole */
	rc = tfk_example_parse(&R->ex, p0, r0->len, err);
	if (rc && !(R->n_in == 1 &&
		    R->in[0].ti->dtype == TFK_DT_STRING && !R->in[0].mapped))
		return rec_err(err, r0);
	names = tfk_calloc(R->n_in + 1, sizeof(*names));
	if (!names)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (i = 0; i < R->n_in; i++) {
		struct input *in = &R->in[i];
		const char *trained = in->how.feature ? in->how.feature :
				      in->ti->key;
		int present;

		/* the feature training read, when the records have it */
		if (!in->mapped && !rc && tfk_example_findn(&R->ex, trained,
							    strlen(trained)))
			in->feature = trained;
		present = !rc && tfk_example_findn(&R->ex, in->feature,
						   strlen(in->feature));
		in->convert = train_spec && in->ti->dtype == TFK_DT_FLOAT &&
			      strcmp(R->sig->key, "serving_raw") &&
			      !strcmp(in->feature, trained);

		if (R->n_in == 1 && in->ti->dtype == TFK_DT_STRING &&
		    !in->mapped && !present)
			in->whole = 1;
		in->fed = in->whole || present || in->mapped;
		if (in->fed)
			names[n_fed++] = in->ti->key;
	}
	if (rc) {
		/* whole-record input with a record that is not an Example */
		tfk_err_clear(err);
		tfk_example_release(&R->ex);
		tfk_example_init(&R->ex);
	}
	memset(&ro, 0, sizeof(ro));
	ro.threads = (int)jobs;
	rc = tfk_runner_new(&R->r, R->sv, R->sig, names, n_fed, &ro, err);
	tfk_free(names);
	names = NULL;
	if (rc) {
		/* most likely an input the outputs need but no feature fed */
		for (i = 0; i < R->n_in; i++) {
			const struct input *in = &R->in[i];

			if (in->fed || !strstr(err->msg, "not fed"))
				continue;
			rc = tfk_errf(err, TFK_EINVAL, "no feature '%s' for "
				      "input '%s' (%s), which signature %s "
				      "needs", in->feature, in->ti->key,
				      shape_of(in, sbuf, sizeof(sbuf)),
				      R->sig->key);
			spec_hint(err, in->ti->key);
			rec_err(err, r0);
			break;
		}
		return rc;
	}
	R->batch = batch_size;
	R->n_fetch = tfk_runner_n_outputs(R->r);
	R->feeds = tfk_calloc(n_fed + 1, sizeof(*R->feeds));
	R->feed_in = tfk_calloc(n_fed + 1, sizeof(*R->feed_in));
	R->fetched = tfk_calloc(R->n_fetch + 1, sizeof(*R->fetched));
	R->out_cols = tfk_calloc(R->n_fetch + 1, sizeof(*R->out_cols));
	if (!R->feeds || !R->feed_in || !R->fetched || !R->out_cols)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	for (i = 0; i < R->n_in; i++) {
		struct input *in = &R->in[i];
		const struct tfk_sv_tensor *fd = NULL;

		for (j = 0; in->fed && j < n_fed; j++)
			if (!strcmp(tfk_runner_input(R->r, j)->key,
				    in->ti->key)) {
				fd = tfk_runner_input(R->r, j);
				in->slot = j;
			}
		in->fd = fd;
		if (!in->fed || !fd || !tfk_runner_needs(R->r, in->slot)) {
			in->fed = 0;
			continue;
		}
		if (in->whole ? fd->dtype != TFK_DT_STRING :
		    !dtype_feedable(fd->dtype)) {
			rc = tfk_errf(err, TFK_EINVAL, "input '%s' is %s: "
				      "Example features feed only float32, "
				      "int64, int32, string and uint8 inputs",
				      in->ti->key, shape_of(in, sbuf,
							    sizeof(sbuf)));
			goto out;
		}
		if (fd->rank == 0) {
			rc = tfk_errf(err, TFK_EINVAL, "input '%s' is a scalar "
				      "(%s): it has no batch dimension to "
				      "put records in", in->ti->key,
				      shape_of(in, sbuf, sizeof(sbuf)));
			goto out;
		}
		if (fd->rank > 0 && fd->shape[0] > 0) {
			if (R->fixed_batch && R->batch != fd->shape[0]) {
				rc = tfk_errf(err, TFK_EINVAL, "inputs have "
					      "different fixed batch sizes "
					      "(%ld and %" PRId64 ")",
					      R->batch, fd->shape[0]);
				goto out;
			}
			R->fixed_batch = 1;
			R->batch = (long)fd->shape[0];
		}
		if (in->whole) {
			if (fd->rank > 1) {
				rc = tfk_errf(err, TFK_EINVAL, "input '%s' is "
					      "%s: serialized records fill a "
					      "vector", in->ti->key,
					      shape_of(in, sbuf,
						       sizeof(sbuf)));
				goto out;
			}
			in->rank = 0;
		} else if (fd->rank < 0) {
			in->rank = -1;
			R->any_feature = 1;
		} else {
			int unknown = 0;

			in->rank = fd->rank - 1;
			for (j = 1; j < fd->rank; j++) {
				in->dims[j - 1] = fd->shape[j];
				unknown += fd->shape[j] < 0;
			}
			if (unknown > 1) {
				rc = tfk_errf(err, TFK_EINVAL, "input '%s' is "
					      "%s: with more than one unknown "
					      "dimension a record's values "
					      "have no one shape", in->ti->key,
					      shape_of(in, sbuf,
						       sizeof(sbuf)));
				goto out;
			}
			R->any_feature = 1;
		}
		R->feed_in[R->n_feed++] = in;
	}
out:
	return rc;
}

/* Feeding ---------------------------------------------------------------- */

/* Add record r's values of input in to in->vals. */
static int add_row(struct input *in, const struct tfk_example *ex,
		   const struct brec *r, const uint8_t *base,
		   struct tfk_err *err)
{
	static const struct tfk_feed_how cast = { NULL, TFK_DT_UINT8, 1, 0 };
	const struct tfk_feed_how *how = NULL;
	const struct tfk_feat *f;
	enum tfk_dtype dt = in->fd->dtype;
	int want_kind;
	int64_t count;
	char sbuf[160];

	if (in->whole) {
		struct tfk_str s = { (const char *)base + r->off, r->len };

		tfk_buf_add(&in->vals, &s, sizeof(s));
		return 0;
	}
	f = tfk_example_findn(ex, in->feature, strlen(in->feature));
	if (!f) {
		tfk_errf(err, TFK_EINVAL, "no feature '%s' for input '%s' (%s)",
			 in->feature, in->ti->key,
			 shape_of(in, sbuf, sizeof(sbuf)));
		return spec_hint(err, in->ti->key);
	}
	want_kind = dt == TFK_DT_FLOAT ? TFK_FEAT_FLOAT :
		dt == TFK_DT_STRING || dt == TFK_DT_UINT8 ? TFK_FEAT_BYTES :
		TFK_FEAT_INT64;
	/* a float input takes what training fed it, converted as training
	 * converts (nn/feed.h); int64 values are cast, as training and TF
	 * Serving's JSON do */
	if (dt == TFK_DT_FLOAT && (in->convert || f->kind == TFK_FEAT_INT64))
		how = in->convert ? &in->how : &cast;
	if (how) {
		count = tfk_feed_feat_count(how, f);
		if (count < 0)
			return tfk_errf(err, TFK_EINVAL, "feature '%s': %zu "
					"bytes values, input '%s' (%s) takes "
					"one value of whole %s elements, as "
					"training read it", in->feature, f->n,
					in->ti->key, shape_of(in, sbuf,
							      sizeof(sbuf)),
					tfk_dtype_name(how->bytes_dtype));
	} else if (f->kind != want_kind) {
		tfk_errf(err, TFK_EINVAL, "feature '%s': %s values, input '%s' "
			 "wants %s (%s list)", in->feature,
			 tfk_feat_kind_name(f->kind), in->ti->key,
			 shape_of(in, sbuf, sizeof(sbuf)),
			 tfk_feat_kind_name(want_kind));
		return spec_hint(err, in->ti->key);
	}
	if (!how)
		count = (int64_t)f->n;
	if (dt == TFK_DT_UINT8) {
		size_t it = 0, len;
		const uint8_t *p;

		if (f->n != 1)
			return tfk_errf(err, TFK_EINVAL, "feature '%s': %zu "
					"bytes values, input '%s' (%s) takes "
					"one (raw bytes)", in->feature, f->n,
					in->ti->key,
					shape_of(in, sbuf, sizeof(sbuf)));
		tfk_feat_bytes_next(f, &it, &p, &len);
		count = (int64_t)len;
	}
	/* the row's shape: known, inferred once per batch, or [count] */
	if (in->per < 0) {
		int64_t known = 1;
		int d, unk = -1;

		for (d = 0; d < in->rank; d++) {
			if (in->dims[d] < 0)
				unk = d;
			else
				known *= in->dims[d];
			in->row_dims[d] = in->dims[d];
		}
		if (in->rank < 0) {
			in->row_dims[0] = count;
		} else if (unk >= 0) {
			if (known == 0 || count % known)
				goto bad_count;
			in->row_dims[unk] = count / known;
		} else if (count != known) {
			goto bad_count;
		}
		in->per = count;
		in->first_row = r->index;
		in->first_file = r->file;
	} else if (count != in->per) {
		if (in->rank < 0 || in->rank > 0) {
			int d;

			for (d = 0; d < in->rank; d++)
				if (in->dims[d] < 0)
					break;
			if (in->rank < 0 || d < in->rank)
				return tfk_errf(err, TFK_EINVAL, "feature '%s':"
						" %" PRId64 " values, but %s: "
						"record %" PRIu64 " in the "
						"same batch had %" PRId64
						" (input '%s' is %s; one batch "
						"is one tensor)", in->feature,
						count, in->first_file,
						in->first_row, in->per,
						in->ti->key,
						shape_of(in, sbuf,
							 sizeof(sbuf)));
		}
		goto bad_count;
	}
	switch (dt) {
	case TFK_DT_FLOAT: {
		size_t at = in->vals.len;

		if (tfk_buf_reserve(&in->vals, (size_t)count * 4))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		if (!how)
			tfk_feat_floats(f, (float *)(in->vals.data + at),
					(size_t)count);
		else if (tfk_feed_feat_floats(how, f, (float *)
					      (in->vals.data + at),
					      (size_t)count, err))
			return err->code;
		in->vals.len += (size_t)count * 4;
		break;
	}
	case TFK_DT_INT64: {
		size_t at = in->vals.len;

		if (tfk_buf_reserve(&in->vals, (size_t)count * 8))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		tfk_feat_int64s(f, (int64_t *)(in->vals.data + at),
				(size_t)count);
		in->vals.len += (size_t)count * 8;
		break;
	}
	case TFK_DT_INT32: {
		const int64_t *v;
		int64_t k;

		tfk_buf_reset(&in->tmp);
		if (tfk_buf_reserve(&in->tmp, (size_t)count * 8 + 8) ||
		    tfk_buf_reserve(&in->vals, (size_t)count * 4))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		v = (const int64_t *)in->tmp.data;
		tfk_feat_int64s(f, (int64_t *)in->tmp.data, (size_t)count);
		for (k = 0; k < count; k++) {
			int32_t w;

			if (v[k] < INT32_MIN || v[k] > INT32_MAX)
				return tfk_errf(err, TFK_EINVAL, "feature '%s'"
						": value %" PRId64 " is out of "
						"range for input '%s' (%s)",
						in->feature, v[k], in->ti->key,
						shape_of(in, sbuf,
							 sizeof(sbuf)));
			w = (int32_t)v[k];
			tfk_buf_add(&in->vals, &w, 4);
		}
		break;
	}
	case TFK_DT_STRING: {
		size_t it = 0, len;
		const uint8_t *p;

		while (tfk_feat_bytes_next(f, &it, &p, &len)) {
			struct tfk_str s = { (const char *)p, len };

			tfk_buf_add(&in->vals, &s, sizeof(s));
		}
		break;
	}
	case TFK_DT_UINT8: {
		size_t it = 0, len;
		const uint8_t *p;

		tfk_feat_bytes_next(f, &it, &p, &len);
		tfk_buf_add(&in->vals, p, len);
		break;
	}
	default:
		break;
	}
	return 0;
bad_count:
	if (dt == TFK_DT_UINT8)
		return tfk_errf(err, TFK_EINVAL, "feature '%s': %" PRId64
				" bytes, input '%s' wants %s (one byte per "
				"element)", in->feature, count, in->ti->key,
				shape_of(in, sbuf, sizeof(sbuf)));
	return tfk_errf(err, TFK_EINVAL, "feature '%s': %" PRId64 " values, "
			"input '%s' wants %s", in->feature, count,
			in->ti->key, shape_of(in, sbuf, sizeof(sbuf)));
}

/* Output ----------------------------------------------------------------- */

static int out_kind(enum tfk_dtype t)
{
	switch (t) {
	case TFK_DT_FLOAT: case TFK_DT_DOUBLE: case TFK_DT_HALF:
		return TFK_FEAT_FLOAT;
	case TFK_DT_INT8: case TFK_DT_UINT8: case TFK_DT_INT16:
	case TFK_DT_INT32: case TFK_DT_INT64: case TFK_DT_BOOL:
		return TFK_FEAT_INT64;
	case TFK_DT_STRING:
		return TFK_FEAT_BYTES;
	default:
		return TFK_FEAT_NONE;
	}
}

/* Output j's row i as a feature in the builder. */
static int add_output(struct run *R, int j, int64_t i, struct tfk_err *err)
{
	const struct tfk_tensor *t = R->fetched[j];
	const char *key = tfk_runner_output(R->r, j)->key;
	int64_t per = R->out_cols[j], k, at = i * per;

	tfk_buf_reset(&R->scratch);
	switch (out_kind(t->dtype)) {
	case TFK_FEAT_FLOAT:
		if (t->dtype == TFK_DT_FLOAT) {
			tfk_exb_add_floats(&R->b, key, (const float *)t->data +
					   at, (size_t)per);
			return 0;
		}
		for (k = 0; k < per; k++) {
			float v = (float)tfk_tensor_get_f64(t, at + k);

			tfk_buf_add(&R->scratch, &v, 4);
		}
		break;
	case TFK_FEAT_INT64:
		if (t->dtype == TFK_DT_INT64) {
			tfk_exb_add_int64s(&R->b, key, (const int64_t *)t->data
					   + at, (size_t)per);
			return 0;
		}
		for (k = 0; k < per; k++) {
			int64_t v = tfk_tensor_get_i64(t, at + k);

			tfk_buf_add(&R->scratch, &v, 8);
		}
		break;
	default: {
		const struct tfk_str *s = (const struct tfk_str *)t->data + at;

		for (k = 0; k < per; k++)
			tfk_buf_add(&R->scratch, &s[k].ptr, sizeof(s[k].ptr));
		for (k = 0; k < per; k++)
			tfk_buf_add(&R->scratch, &s[k].len, sizeof(s[k].len));
		break;
	}
	}
	if (!tfk_buf_ok(&R->scratch))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	switch (out_kind(t->dtype)) {
	case TFK_FEAT_FLOAT:
		tfk_exb_add_floats(&R->b, key, (const float *)R->scratch.data,
				   (size_t)per);
		break;
	case TFK_FEAT_INT64:
		tfk_exb_add_int64s(&R->b, key,
				   (const int64_t *)R->scratch.data,
				   (size_t)per);
		break;
	default:
		tfk_exb_add_bytes(&R->b, key,
				  (const uint8_t *const *)R->scratch.data,
				  (const size_t *)(R->scratch.data +
						   per * sizeof(void *)),
				  (size_t)per);
	}
	return 0;
}

/* A CSV field from bytes: quoted when it must be (RFC 4180). */
static int csv_bytes(struct tfk_buf *l, const uint8_t *p, size_t n,
		     const char *name, struct tfk_err *err)
{
	size_t k;

	if (!tfk_utf8_valid(p, n))
		return tfk_errf(err, TFK_EINVAL, "feature '%s': bytes that "
				"are not UTF-8 text cannot go into CSV (use "
				"--json)", name);
	if (!memchr(p, ',', n) && !memchr(p, '"', n) && !memchr(p, '\n', n) &&
	    !memchr(p, '\r', n)) {
		tfk_buf_add(l, p, n);
		return 0;
	}
	tfk_buf_addc(l, '"');
	for (k = 0; k < n; k++) {
		if (p[k] == '"')
			tfk_buf_addc(l, '"');
		tfk_buf_addc(l, p[k]);
	}
	tfk_buf_addc(l, '"');
	return 0;
}

static void csv_col(struct tfk_buf *l, const char *name, long cols, long k)
{
	if (l->len)
		tfk_buf_addc(l, ',');
	/* names are text; a comma or quote in one is quoted */
	if (cols == 1) {
		struct tfk_err e;

		if (csv_bytes(l, (const uint8_t *)name, strlen(name), name, &e))
			tfk_buf_adds(l, name);
	} else {
		char *s = tfk_malloc(strlen(name) + 24);
		struct tfk_err e;

		if (!s) {
			l->oom = 1;
			return;
		}
		sprintf(s, "%s_%ld", name, k);
		if (csv_bytes(l, (const uint8_t *)s, strlen(s), s, &e))
			tfk_buf_adds(l, s);
		tfk_free(s);
	}
}

static int write_text(struct run *R, struct tfk_err *err)
{
	if (!tfk_buf_ok(&R->line))
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	return tfk_out_write(R->o, R->line.data, R->line.len, err);
}

static int csv_header(struct run *R, struct tfk_err *err)
{
	int j;
	long k;

	tfk_buf_reset(&R->line);
	for (j = 0; j < R->n_fetch; j++)
		for (k = 0; k < R->out_cols[j]; k++)
			csv_col(&R->line, tfk_runner_output(R->r, j)->key,
				R->out_cols[j], k);
	for (j = 0; j < R->n_keep; j++)
		for (k = 0; k < R->keep[j].cols; k++)
			csv_col(&R->line, R->keep[j].name, R->keep[j].cols, k);
	tfk_buf_addc(&R->line, '\n');
	return write_text(R, err);
}

/* Record i of the batch as a CSV line. ex holds its parsed Example. */
static int csv_line(struct run *R, int64_t i, struct tfk_err *err)
{
	int j, rc;
	int64_t k;

	tfk_buf_reset(&R->line);
	for (j = 0; j < R->n_fetch; j++) {
		const struct tfk_tensor *t = R->fetched[j];
		int64_t per = R->out_cols[j], at = i * per;

		for (k = 0; k < per; k++) {
			if (R->line.len)
				tfk_buf_addc(&R->line, ',');
			switch (out_kind(t->dtype)) {
			case TFK_FEAT_FLOAT:
				tfk_exjson_add_float(&R->line,
						     (float)tfk_tensor_get_f64(t, at + k));
				break;
			case TFK_FEAT_INT64:
				tfk_buf_addf(&R->line, "%" PRId64,
					     tfk_tensor_get_i64(t, at + k));
				break;
			default: {
				struct tfk_str s = tfk_tensor_str(t, at + k);

				rc = csv_bytes(&R->line,
					       (const uint8_t *)s.ptr, s.len,
					       tfk_runner_output(R->r, j)->key, err);
				if (rc)
					return tfk_err_prefix(err, "output");
			}
			}
		}
	}
	for (j = 0; j < R->n_keep; j++) {
		const struct tfk_feat *f = tfk_example_find(&R->ex,
							    R->keep[j].name);
		long cols = R->keep[j].cols;

		if (f->kind == TFK_FEAT_NONE ? cols != 1 :
		    (long)f->n != cols)
			return tfk_errf(err, TFK_EINVAL, "feature '%s': %zu "
					"values, but the CSV header has %ld "
					"column%s for it (from the first "
					"record)", R->keep[j].name, f->n, cols,
					cols == 1 ? "" : "s");
		if (f->kind == TFK_FEAT_NONE) {
			if (R->line.len)
				tfk_buf_addc(&R->line, ',');
			continue;
		}
		if (f->kind == TFK_FEAT_BYTES) {
			size_t it = 0, len;
			const uint8_t *p;

			while (tfk_feat_bytes_next(f, &it, &p, &len)) {
				if (R->line.len)
					tfk_buf_addc(&R->line, ',');
				rc = csv_bytes(&R->line, p, len,
					       R->keep[j].name, err);
				if (rc)
					return rc;
			}
			continue;
		}
		tfk_buf_reset(&R->scratch);
		if (tfk_buf_reserve(&R->scratch, f->n * 8 + 8))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		if (f->kind == TFK_FEAT_FLOAT) {
			const float *v = (const float *)R->scratch.data;

			tfk_feat_floats(f, (float *)R->scratch.data, f->n);
			for (k = 0; k < (int64_t)f->n; k++) {
				if (R->line.len)
					tfk_buf_addc(&R->line, ',');
				tfk_exjson_add_float(&R->line, v[k]);
			}
		} else {
			const int64_t *v = (const int64_t *)R->scratch.data;

			tfk_feat_int64s(f, (int64_t *)R->scratch.data, f->n);
			for (k = 0; k < (int64_t)f->n; k++) {
				if (R->line.len)
					tfk_buf_addc(&R->line, ',');
				tfk_buf_addf(&R->line, "%" PRId64, v[k]);
			}
		}
	}
	tfk_buf_addc(&R->line, '\n');
	return write_text(R, err);
}

/* Record i as an Example (records or JSON). ex holds its Example. */
static int example_line(struct run *R, int64_t i, struct tfk_err *err)
{
	const uint8_t *p;
	size_t len;
	int j, rc;

	tfk_exb_reset(&R->b);
	for (j = 0; j < R->n_fetch; j++) {
		rc = add_output(R, j, i, err);
		if (rc)
			return rc;
	}
	for (j = 0; j < R->n_keep; j++)
		tfk_exb_add_feat(&R->b, tfk_example_find(&R->ex,
							 R->keep[j].name));
	rc = tfk_exb_finish(&R->b, &p, &len, err);
	if (rc)
		return rc;
	if (!json_out)
		return tfk_recw_write(R->w, p, len, err);
	{
		struct tfk_example ox;

		tfk_example_init(&ox);
		rc = tfk_example_parse(&ox, p, len, err);
		tfk_buf_reset(&R->line);
		if (!rc)
			rc = tfk_exjson_write(&ox, &R->line, err);
		tfk_example_release(&ox);
		if (rc)
			return rc;
	}
	tfk_buf_addc(&R->line, '\n');
	return write_text(R, err);
}

/* A batch ---------------------------------------------------------------- */

static int run_batch_1(struct run *R, struct tfk_err *err)
{
	int64_t n = R->n_recs, i;
	int j, k, rc;
	char sbuf[160];

	if (!n)
		return 0;
	if (R->fixed_batch && n != R->batch) {
		for (k = 0; k < R->n_feed; k++)
			if (R->feed_in[k]->fd->shape[0] > 0)
				break;
		return tfk_errf(err, TFK_EINVAL, "%s: the last batch has "
				"%" PRId64 " records, but input '%s' (%s) "
				"takes batches of exactly %ld", R->recs[0].file,
				n, R->feed_in[k]->ti->key,
				shape_of(R->feed_in[k], sbuf, sizeof(sbuf)),
				R->batch);
	}
	for (k = 0; k < R->n_feed; k++) {
		tfk_buf_reset(&R->feed_in[k]->vals);
		R->feed_in[k]->per = -1;
	}
	for (i = 0; i < n; i++) {
		const struct brec *r = &R->recs[i];

		if (R->any_feature) {
			rc = tfk_example_parse(&R->ex, R->store.data + r->off,
					       r->len, err);
			if (rc)
				return rec_err(err, r);
		}
		for (k = 0; k < R->n_feed; k++) {
			rc = add_row(R->feed_in[k], &R->ex, r, R->store.data,
				     err);
			if (rc)
				return rec_err(err, r);
		}
	}
	for (k = 0; k < R->n_feed; k++) {
		struct input *in = R->feed_in[k];
		int64_t shape[TFK_MAX_RANK + 1];
		int rank, d;

		if (!tfk_buf_ok(&in->vals))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		shape[0] = n;
		if (in->whole) {
			rank = 1;
		} else if (in->rank < 0) {
			rank = 2;
			shape[1] = in->row_dims[0];
		} else {
			rank = in->rank + 1;
			for (d = 0; d < in->rank; d++)
				shape[d + 1] = in->row_dims[d];
		}
		tfk_tensor_release(&R->feeds[in->slot]);
		rc = tfk_tensor_init_view(&R->feeds[in->slot], in->fd->dtype,
					  rank,
					  shape, in->vals.data, in->vals.len,
					  TFK_OWN_BORROWED, err);
		if (rc)
			return tfk_err_prefix(err, "input '%s'", in->ti->key);
	}
	tfk_prof_span("IteratorGetNext", "IteratorGetNext", R->t_step,
		      tfk_prof_now(), -1);
	rc = tfk_runner_run(R->r, R->feeds, R->fetched, err);
	if (rc) {
		/* ParseExample names the bad element: name its record */
		const char *sp = strstr(err->msg, "serialized[");
		long e = sp ? strtol(sp + 11, NULL, 10) : -1;

		if (e >= 0 && e < n) {
			tfk_err_prefix(err, "signature %s", R->sig->key);
			return rec_err(err, &R->recs[e]);
		}
		return tfk_err_prefix(err, "%s: records %" PRIu64 "..%" PRIu64
				      ": signature %s", R->recs[0].file,
				      R->recs[0].index, R->recs[n - 1].index,
				      R->sig->key);
	}
	for (j = 0; j < R->n_fetch; j++) {
		const struct tfk_tensor *t = R->fetched[j];
		const char *key = tfk_runner_output(R->r, j)->key;
		int64_t cols;

		if (t->rank < 1 || t->shape[0] != n)
			return tfk_errf(err, TFK_EINVAL, "output '%s' has "
					"shape %s for a batch of %" PRId64
					" records: no row per record", key,
					tfk_shape_str(t->rank, t->shape, sbuf,
						      sizeof(sbuf)), n);
		if (out_kind(t->dtype) == TFK_FEAT_NONE)
			return tfk_errf(err, TFK_EINVAL, "output '%s' is %s: "
					"no Example feature kind holds it",
					key, tfk_dtype_name(t->dtype));
		cols = tfk_tensor_numel(t) / n;
		if (R->out_cols[j] && csv_out && R->out_cols[j] != cols)
			return tfk_errf(err, TFK_EINVAL, "output '%s': %"
					PRId64 " values per record, but the "
					"CSV header has %ld columns for it "
					"(from the first batch)", key, cols,
					R->out_cols[j]);
		R->out_cols[j] = (long)cols;
	}
	for (i = 0; i < n; i++) {
		const struct brec *r = &R->recs[i];

		if (R->n_keep) {
			rc = tfk_example_parse(&R->ex, R->store.data + r->off,
					       r->len, err);
			if (rc)
				return rec_err(err, r);
			for (j = 0; j < R->n_keep; j++) {
				const struct tfk_feat *f = tfk_example_find(
					&R->ex, R->keep[j].name);

				if (!f) {
					tfk_errf(err, TFK_EINVAL, "no feature "
						 "'%s' to keep",
						 R->keep[j].name);
					return rec_err(err, r);
				}
				if (!R->keep[j].cols)
					R->keep[j].cols = f->kind ==
						TFK_FEAT_NONE || !f->n ? 1 :
						(long)f->n;
			}
		}
		if (csv_out && !R->n_out && !i) {
			rc = csv_header(R, err);
			if (rc)
				return rc;
		}
		rc = csv_out ? csv_line(R, i, err) : example_line(R, i, err);
		if (rc)
			return rc == TFK_EIO ? rc : rec_err(err, r);
	}
	R->n_out += (uint64_t)n;
	R->n_recs = 0;
	tfk_buf_reset(&R->store);
	rc = R->w ? tfk_recw_flush(R->w, err) : tfk_out_flush(R->o, err);
	return rc;
}

/* Run the batch collected, a profile's step. */
static int run_batch(struct run *R, struct tfk_err *err)
{
	int rc;

	if (!R->n_recs)
		return 0;
	tfk_prof_set_step(++R->n_steps);
	rc = run_batch_1(R, err);
	tfk_prof_span("predict", NULL, R->t_step, tfk_prof_now(), R->n_steps);
	R->t_step = tfk_prof_now();
	return rc;
}

static int predict_file(struct run *R, const char *path, struct tfk_err *err)
{
	struct tfk_rec_reader *rd = NULL;
	struct tfk_rec rec;
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	int rc;

	rc = tfk_rec_open(&rd, path, TFK_COMP_AUTO, 0, err);
	while (!rc) {
		struct brec *br;

		rc = tfk_rec_next(rd, &rec, err);
		if (rc <= 0)
			break;
		rc = 0;
		if (seen++ % (uint64_t)ranks != (uint64_t)rank)
			continue;	/* another rank's */
		br = &R->recs[R->n_recs];
		br->off = R->store.len;
		br->len = rec.len;
		br->file = name;
		br->index = rec.index;
		br->byte = rec.off;
		tfk_buf_add(&R->store, rec.data, rec.len);
		if (!tfk_buf_ok(&R->store)) {
			rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
			break;
		}
		R->n_recs++;
		if (!R->ready) {
			rc = setup_model(R, br, err);
			if (rc)
				break;
			R->ready = 1;
			if (R->batch > batch_size) {
				struct brec *nr = tfk_realloc(R->recs,
					(size_t)R->batch * sizeof(*nr));

				if (!nr) {
					rc = tfk_errf(err, TFK_ENOMEM,
						      "out of memory");
					break;
				}
				R->recs = nr;
			}
		}
		if (R->n_recs == R->batch)
			rc = run_batch(R, err);
	}
	tfk_rec_close(rd);
	return rc;
}

static void run_release(struct run *R)
{
	int i;

	for (i = 0; i < R->n_in; i++) {
		tfk_buf_release(&R->in[i].vals);
		tfk_buf_release(&R->in[i].tmp);
	}
	tfk_free(R->in);
	for (i = 0; i < R->n_keep; i++)
		tfk_free((char *)R->keep[i].name);
	tfk_free(R->keep);
	for (i = 0; R->feeds && R->r && i < tfk_runner_n_inputs(R->r);
	     i++)
		tfk_tensor_release(&R->feeds[i]);
	/* after the loop above, which asks the runner its input count */
	tfk_runner_free(R->r);
	tfk_free(R->feeds);
	tfk_free(R->feed_in);
	tfk_free(R->fetched);
	tfk_free(R->out_cols);
	tfk_free(R->recs);
	tfk_buf_release(&R->store);
	tfk_buf_release(&R->line);
	tfk_buf_release(&R->scratch);
	tfk_example_release(&R->ex);
	tfk_exb_release(&R->b);
	tfk_servable_close(R->sv);
}

/* Under mpirun ------------------------------------------------------------ */

/* FILE's shard for this rank, NAME-RRRRR-of-NNNNN.EXT as TF names
 * them, into buf; 0, or -1 when it does not fit. */
static int shard_name(const char *path, char *buf, size_t n)
{
	const char *slash = strrchr(path, '/');
	const char *dot = strchr(slash ? slash + 1 : path, '.');
	size_t stem = dot ? (size_t)(dot - path) : strlen(path);
	int k = snprintf(buf, n, "%.*s-%05d-of-%05d%s", (int)stem, path,
			 rank, ranks, dot ? dot : "");

	return k < 0 || (size_t)k >= n ? -1 : 0;
}

/* The length of the output unit (a record, or a line: a CSV line ends
 * at a newline outside quotes) at p, of n bytes left; 0 when truncated. */
static size_t unit_len(const uint8_t *p, size_t n)
{
	size_t i;
	int quoted = 0;

	if (!json_out && !csv_out) {
		uint64_t len = 0;

		if (n < 16)
			return 0;
		for (i = 0; i < 8; i++)
			len |= (uint64_t)p[i] << (8 * i);
		return len <= n - 16 ? (size_t)len + 16 : 0;
	}
	for (i = 0; i < n; i++) {
		if (p[i] == '"')
			quoted = !quoted;
		else if (p[i] == '\n' && !quoted)
			return i + 1;
	}
	return 0;
}

/* The whole file at path into b. */
static int slurp(struct tfk_buf *b, const char *path, struct tfk_err *err)
{
	char chunk[65536];
	size_t k;
	FILE *f = fopen(path, "rb");

	if (!f)
		return tfk_errf(err, TFK_EIO, "%s: %s", path, strerror(errno));
	while ((k = fread(chunk, 1, sizeof(chunk), f)) > 0)
		tfk_buf_add(b, chunk, k);
	k = ferror(f);
	fclose(f);
	if (k)
		return tfk_errf(err, TFK_EIO, "%s: read error", path);
	return tfk_buf_ok(b) ? 0 : tfk_errf(err, TFK_ENOMEM, "out of memory");
}

/*
 * --gather: every rank's output (its file at tmp, which is removed) to
 * rank 0, which writes them to out_path interleaved as the input was
 * dealt: unit i of rank r is the input's record i * ranks + r; a CSV
 * header once, from the first rank that has one.
 */
static int gather_out(const char *tmp, struct tfk_err *err)
{
	struct tfk_buf mine;
	size_t *sizes = tfk_calloc((size_t)ranks, sizeof(*sizes));
	size_t *at = tfk_calloc((size_t)ranks, sizeof(*at)), off = 0;
	uint8_t *all = NULL;
	struct tfk_out *o = NULL;
	int rc = sizes && at ? 0 : tfk_errf(err, TFK_ENOMEM, "out of memory");
	int r, left, header = !csv_out;

	tfk_buf_init(&mine);
	if (!rc)
		rc = slurp(&mine, tmp, err);
	unlink(tmp);
	if (!rc)
		rc = tfk_mpi_gather(mine.data, mine.len, (void **)&all, sizes,
				    err);
	tfk_buf_release(&mine);
	if (!rc && !rank)
		rc = tfk_out_open(&o, out_path, TFK_COMP_NONE, err);
	for (r = 0; !rc && !rank && r < ranks; r++) {
		at[r] = off;
		off += sizes[r];
		sizes[r] = off;	/* now each rank's end */
		if (csv_out) {	/* the header line */
			size_t h = unit_len(all + at[r], sizes[r] - at[r]);

			if (h && !header++)
				rc = tfk_out_write(o, all + at[r], h, err);
			at[r] += h;
		}
	}
	for (left = 1; !rc && !rank && left;) {
		left = 0;
		for (r = 0; !rc && r < ranks; r++) {
			size_t u = unit_len(all + at[r], sizes[r] - at[r]);

			if (!u)
				continue;
			rc = tfk_out_write(o, all + at[r], u, err);
			at[r] += u;
			left = 1;
		}
	}
	if (o)
		rc = rc ? (tfk_out_discard(o), rc) : tfk_out_close(o, err);
	tfk_free(all);
	tfk_free(sizes);
	tfk_free(at);
	return rc;
}

int main(int argc, char **argv)
{
	static char *stdin_only[] = { "-", NULL };
	struct tfk_servable_opts so = { NULL, 0 };
	struct run R;
	struct tfk_err err;
	char **files = argv;
	static char gather_tmp[4200];	/* --gather's part, or the shard */
	const char *final_path;
	int i, rc = 0;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (tfk_mpi_init(&err))
		return tfk_cli_fail(&err);
	rank = tfk_mpi_rank();
	ranks = tfk_mpi_size();
	final_path = out_path;
	if (ranks > 1 && !argc)
		tfk_cli_usage_error("under mpirun every rank reads its shard of "
				    "the files, and stdin reaches rank 0 only: "
				    "give the files");
	if (ranks > 1 && !gather && !strcmp(out_path, "-"))
		tfk_cli_usage_error("under mpirun: -o FILE (each rank writes "
				    "its shard of it) or --gather");
	if (gather && ranks > 1) {
		const char *td = getenv("TMPDIR");

		snprintf(gather_tmp, sizeof(gather_tmp),
			 "%s/tfk-predict-%ld-%d", td && *td ? td : "/tmp",
			 (long)getpid(), rank);
		final_path = gather_tmp;
	} else if (ranks > 1) {
		if (shard_name(out_path, gather_tmp, sizeof(gather_tmp)))
			tfk_cli_usage_error("-o %s: too long a name", out_path);
		final_path = gather_tmp;
	}
	if (argc == 0) {
		files = stdin_only;
		argc = 1;
	}
	if (!dir)
		tfk_cli_usage_error("--dir DIR is required");
	if (batch_size < 1 || batch_size > (1L << 24))
		tfk_cli_usage_error("--batch: expected 1 to %ld", 1L << 24);
	if (jobs < 1 || jobs > 1024)
		tfk_cli_usage_error("--jobs: expected 1 to 1024");
	if (json_out && csv_out)
		tfk_cli_usage_error("--json and --csv exclude each other");
	tfk_cpu_blas_threads((int)jobs);
	memset(&R, 0, sizeof(R));
	tfk_err_clear(&err);
	tfk_buf_init(&R.store);
	tfk_buf_init(&R.line);
	tfk_buf_init(&R.scratch);
	tfk_example_init(&R.ex);
	tfk_exb_init(&R.b);
	so.tag_set = tag_set;
	so.kind = TFK_SERVABLE_SAVEDMODEL;
	if (prof_open(&err)) {
		rc = tfk_cli_fail(&err);
		goto out;
	}
	tfk_prof_record(prof_wanted());
	if (tfk_servable_open(&R.sv, dir, &so, &err)) {
		rc = tfk_cli_fail(&err);
		goto out;
	}
	R.sig = tfk_servable_find(R.sv, signature_def, &err);
	if (!R.sig) {
		tfk_err_prefix(&err, "%s: tag-set %s", dir, tag_set);
		rc = tfk_cli_fail(&err);
		goto out;
	}
	if (strcmp(signature_def, "serving_raw")) {
		struct tfk_err e;

		tfk_err_clear(&e);
		raw_sig = tfk_servable_find(R.sv, "serving_raw", &e) != NULL;
	}
	{
		char *p = tfk_malloc(strlen(dir) + 40);
		json_t *root;

		if (p) {
			sprintf(p, "%s/assets.extra/tfkit_spec.json", dir);
			root = json_load_file(p, 0, NULL);
			train_spec = json_incref(json_object_get(root,
								 "inputs"));
			json_decref(root);
			tfk_free(p);
		}
	}
	R.recs = tfk_calloc((size_t)batch_size, sizeof(*R.recs));
	if (!R.recs) {
		tfk_errf(&err, TFK_ENOMEM, "out of memory");
		rc = tfk_cli_fail(&err);
		goto out;
	}
	if (setup_names(&R, &err)) {
		rc = tfk_cli_fail(&err);
		goto out;
	}
	if (json_out || csv_out ?
	    tfk_out_open(&R.o, final_path, TFK_COMP_NONE, &err) :
	    tfk_recw_open(&R.w, final_path, TFK_COMP_NONE, &err)) {
		rc = tfk_cli_fail(&err);
		goto out;
	}
	R.t_step = tfk_prof_now();
	for (i = 0; i < argc && !rc; i++)
		rc = predict_file(&R, files[i], &err);
	if (!rc)
		rc = run_batch(&R, &err);
	if (!rc)
		rc = R.w ? tfk_recw_close(R.w, &err) : tfk_out_close(R.o,
								     &err);
	else if (R.w)
		tfk_recw_discard(R.w);
	else
		tfk_out_discard(R.o);
	R.w = NULL;
	R.o = NULL;
	if (!rc && gather && ranks > 1)
		rc = gather_out(gather_tmp, &err);
	if (!rc)
		rc = prof_close(0, &err);
	if (rc && ranks > 1) {
		/* the others would wait for this rank forever */
		tfk_err_prefix(&err, "rank %d of %d", rank, ranks);
		tfk_cli_fail(&err);
		tfk_mpi_abort(1);
	}
	rc = rc ? tfk_cli_fail(&err) : 0;
	tfk_mpi_finalize();
out:
	if (rc)
		prof_abandon();
	run_release(&R);
	json_decref(train_spec);
	return rc;
}
