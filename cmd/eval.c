/*
 * tfk-eval: the loss and metrics of a model on TFRecord data, as
 * model.evaluate(...) reports them.
 *
 * The model is a training directory (tfk-train --out: its latest
 * checkpoint, whose state carries the spec it was trained with; with
 * no checkpoint, the state its SavedModel export keeps in
 * assets.extra/tfkit_train), a
 * checkpoint prefix (DIR/ckpt-3, or a ModelCheckpoint filepath), a
 * Keras model file (.keras or tf_keras .h5, recognised by its first
 * bytes: its config, compile settings and weights, as
 * keras.models.load_model(FILE).evaluate), or a spec file (weights
 * freshly initialized from --seed: a baseline).
 * Evaluation uses the inference branch (Dropout off, BatchNormalization
 * on its moving statistics) and adds the regularization losses to the
 * loss, as Keras does; class weights are a training setting and are
 * not applied. Records are read into memory first, as tfk-train does,
 * and evaluated in batches of --batch-size (default: the spec's
 * validation_batch_size, else batch_size).
 * --profile/--trace (profile-opts.h) record every batch as a step
 * "test" (Keras' TraceMe name for evaluate) with its input wait.
 */
#include "kernels/cpu.h"
#include "nn/ckpt.h"
#include "nn/feed.h"
#include "nn/kerasfile.h"
#include "nn/model.h"
#include "nn/spec.h"
#include "nn/train.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cli.h"
#include "util/mpi.h"
#include "util/progress.h"
#include "nn/callback.h"

#include "profile-opts.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t seed;
static long threads, batch_size;
static int json_out, quiet, force_progress;
static int rank, ranks = 1;	/* under mpirun: a shard of records each */

/* The sum of every rank's n. */
static size_t sum_over_ranks(size_t n)
{
	double v = (double)n;

	tfk_mpi_sum_f64(&v, 1, NULL);
	return (size_t)v;
}

static int opt_seed(const char *arg, void *value)
{
	char *end;

	errno = 0;
	*(uint64_t *)value = strtoull(arg, &end, 0);
	return errno || end == arg || *end || *arg == '-' ? -1 : 0;
}

static const struct tfk_opt opts[] = {
	TFK_OPT_LONG('b', "batch-size", &batch_size, "N",
		     "examples per batch (default: the spec's)"),
	TFK_OPT_CALL('s', "seed", &seed, "S",
		     "initial weights of a bare spec (default: 0)", opt_seed),
	TFK_OPT_LONG('j', "threads", &threads, "N",
		     "kernel threads (default: all CPUs)"),
	TFK_OPT_FLAG(0, "json", &json_out,
		     "print one JSON object instead of a line"),
	TFK_OPT_FLAG('q', "quiet", &quiet, "no progress output"),
	PROFILE_OPTS,
	TFK_OPT_FLAG(0, "progress", &force_progress,
		     "progress bar even when stderr is not a terminal"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-eval",
	"[options] SPEC_OR_DIR [FILE...]",
	"loss and metrics of a trained model (tfk-train --out DIR) on "
	"TFRecord data",
	"tfk-eval run1 test.tfrecord; tfk-eval --json run1/ckpt-3 test.tfrecord",
};

static struct tfk_err err;
static struct tfk_kerasfile *kfile;

/* Is the file at p a Keras file (by its first bytes)? */
static int is_keras_file(const char *p)
{
	unsigned char head[8];
	FILE *f = fopen(p, "rb");
	size_t n = f ? fread(head, 1, sizeof(head), f) : 0;

	if (f)
		fclose(f);
	return tfk_kerasfile_sniff(head, n);
}

static int is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

/* SPEC_OR_DIR: a checkpoint prefix into prefix (empty for a spec). */
static int locate(const char *arg, char *prefix, size_t n)
{
	char p[4200];

	prefix[0] = '\0';
	if (is_dir(arg)) {
		int rc = tfk_ckpt_latest(arg, prefix, n, &err);

		/* no checkpoint: a SavedModel tfk-train exported (copied
		 * without them) holds the final state */
		snprintf(p, sizeof(p), "%s/%s.json", arg,
			 TFK_CKPT_IN_SAVEDMODEL);
		if (rc != TFK_ENOTFOUND || access(p, F_OK))
			return rc;
		if (strlen(p) - 5 >= n)
			return tfk_errf(&err, TFK_EINVAL, "%s: path too long",
					arg);
		snprintf(prefix, n, "%s/%s", arg, TFK_CKPT_IN_SAVEDMODEL);
		tfk_err_clear(&err);
		return 0;
	}
	snprintf(p, sizeof(p), "%s.json", arg);
	if (!access(p, F_OK)) {
		if (strlen(arg) >= n)
			return tfk_errf(&err, TFK_EINVAL, "%s: path too long",
					arg);
		strcpy(prefix, arg);
	}
	return 0;
}

static int load_spec(const char *arg, const char *prefix,
		     struct tfk_spec **spec, uint64_t *mseed)
{
	json_t *st, *sp;
	char *text, name[4300];
	int rc;

	*mseed = seed;
	if (!prefix[0] && is_keras_file(arg)) {
		rc = tfk_kerasfile_read(&kfile, arg, &err);
		return rc ? rc : tfk_kerasfile_spec(kfile, arg, spec, &err);
	}
	if (!prefix[0])
		return tfk_spec_load(spec, arg, &err);
	rc = tfk_ckpt_read_state(prefix, &st, &err);
	if (rc)
		return rc;
	sp = json_object_get(st, "spec");
	if (!json_is_object(sp)) {
		json_decref(st);
		return tfk_errf(&err, TFK_ECORRUPT, "%s.json: no spec",
				prefix);
	}
	text = json_dumps(sp, JSON_PRESERVE_ORDER | JSON_COMPACT);
	json_decref(st);
	if (!text)
		return tfk_errf(&err, TFK_ENOMEM, "out of memory");
	snprintf(name, sizeof(name), "%s.json: spec", prefix);
	rc = tfk_spec_parse(spec, name, text, strlen(text), &err);
	free(text);
	return rc;
}

static void print(struct tfk_trainer *tr, size_t rows)
{
	struct tfk_buf b;
	char s[40];
	int i, nm = tfk_trainer_n_metrics(tr);

	tfk_buf_init(&b);
	if (json_out) {
		tfk_buf_adds(&b, "{\"loss\":");
		tfk_buf_adds(&b, tfk_py_repr((float)tfk_trainer_loss(tr), s));
		for (i = 0; i < nm; i++) {
			const char *k = tfk_trainer_metric_name(tr, i);
			double v = (float)tfk_trainer_metric(tr, i);

			tfk_buf_addc(&b, ',');
			tfk_buf_add_json_str(&b, k, strlen(k));
			tfk_buf_addc(&b, ':');
			tfk_buf_adds(&b, isfinite(v) ? tfk_py_repr(v, s) :
				     "null");
		}
		tfk_buf_addf(&b, ",\"examples\":%zu}\n", rows);
	} else {
		tfk_buf_addf(&b, "loss: %.4f", tfk_trainer_loss(tr));
		for (i = 0; i < nm; i++)
			tfk_buf_addf(&b, " - %s: %.4f",
				     tfk_trainer_metric_name(tr, i),
				     tfk_trainer_metric(tr, i));
		tfk_buf_addc(&b, '\n');
	}
	if (!b.oom)
		fwrite(b.data, 1, b.len, stdout);
	tfk_buf_release(&b);
}

int main(int argc, char **argv)
{
	struct tfk_spec *spec = NULL;
	struct tfk_fit fit;
	struct tfk_compile comp;
	struct tfk_loss_spec *ls = NULL, one;
	float *lw = NULL;
	struct tfk_model *m = NULL;
	struct tfk_trainer *tr = NULL;
	struct tfk_feed *feed = NULL;
	struct tfk_feed_opts fo = { 0 };
	struct tfk_train_opts to = { 0 };
	struct tfk_schema schema;
	struct tfk_progress pg;
	char prefix[4200], path[4400];
	uint64_t mseed;
	int rc, has_fit = 0, has_schema = 0;
	size_t rows = 0, all = 0, bs, s, steps;
	uint64_t at = 0;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (tfk_mpi_init(&err))
		return tfk_cli_fail(&err);
	ranks = tfk_mpi_size();
	rank = tfk_mpi_rank();
	if (rank) {
		quiet = 1;
		prof_dir = trace_path = NULL;
	}
	if (argc < 1)
		tfk_cli_usage_error("no SPEC or DIR given");
	if (batch_size < 0)
		tfk_cli_usage_error("--batch-size: expected a positive "
				    "integer");
	if (threads < 0 || threads > 1024)
		tfk_cli_usage_error("--threads: expected 1 to 1024");
	if (!threads) {
		threads = sysconf(_SC_NPROCESSORS_ONLN);
		if (threads < 1)
			threads = 1;
	}
	tfk_cpu_blas_threads((int)threads);
	memset(&fit, 0, sizeof(fit));
	rc = prof_open(&err);
	if (!rc)
		rc = locate(argv[0], prefix, sizeof(prefix));
	if (!rc)
		rc = load_spec(argv[0], prefix, &spec, &mseed);
	if (!rc && !(rc = tfk_spec_fit(spec, &fit, &err)))
		has_fit = 1;
	if (!rc)
		rc = tfk_spec_compile(spec, &comp, &err);
	/* a single loss's errors before the model's (as tfk-train) */
	if (!rc && !json_is_array(comp.loss) && !(json_is_object(comp.loss) &&
	    !json_object_get(comp.loss, "class_name")))
		rc = tfk_loss_parse(comp.loss, comp.loss_path, &one, &err);
	if (!rc) {
		snprintf(path, sizeof(path), "%s: model", tfk_spec_name(spec));
		rc = tfk_keras_build(json_object_get(tfk_spec_json(spec),
						     "model"), path, mseed, &m,
				     &err);
	}
	if (!rc) {
		ls = tfk_calloc((size_t)m->n_outputs + 1, sizeof(*ls));
		lw = tfk_calloc((size_t)m->n_outputs + 1, sizeof(*lw));
		rc = !ls || !lw ? tfk_errf(&err, TFK_ENOMEM, "out of memory") :
			tfk_loss_parse_outputs(comp.loss, comp.loss_path,
					       comp.loss_weights,
					       comp.loss_weights_path, m, ls,
					       lw, &err);
	}
	if (!rc && prefix[0])
		rc = tfk_ckpt_restore(prefix, m->g, NULL, 0, NULL, &err);
	if (!rc && kfile)
		rc = tfk_kerasfile_apply(kfile, argv[0], m, &err);
	if (!rc) {
		to.threads = (int)threads;
		rc = tfk_trainer_new(&tr, m, ls, lw, comp.metrics,
				     comp.metrics_path, NULL, &to, &err);
	}
	if (!rc) {
		const char *first = argc > 1 ? argv[1] : "-";

		tfk_schema_init(&schema);
		rc = tfk_feed_find_schema(first, &schema, &err);
		has_schema = rc == 1;
		if (rc > 0)
			rc = 0;
	}
	if (!rc) {
		fo.loss = ls;
		fo.n_loss = m->n_outputs;
		fo.schema = has_schema ? &schema : NULL;
		rc = tfk_feed_new(&feed, spec, m, &fo, &err);
	}
	if (has_schema)
		tfk_schema_release(&schema);
	if (!rc && ranks > 1 && argc < 2)
		rc = tfk_errf(&err, TFK_EINVAL, "under mpirun every rank reads "
			      "its shard of the files, and stdin reaches rank "
			      "0 only: give the files");
	for (int i = 1; !rc && i < (argc > 1 ? argc : 2); i++)
		rc = tfk_feed_add_shard(feed, argc > 1 ? argv[i] : "-", &at,
					(uint64_t)rank, (uint64_t)ranks, &err);
	if (!rc) {
		rows = tfk_feed_rows(feed);
		all = ranks > 1 ? sum_over_ranks(rows) : rows;
		if (!all)
			rc = tfk_errf(&err, TFK_EINVAL, "%s: no records",
				      argc == 2 ? argv[1] : argc > 2 ?
				      "input files" : "<stdin>");
	}
	if (!rc) {
		bs = (size_t)(batch_size ? batch_size :
			      fit.validation_batch_size ?
			      fit.validation_batch_size : fit.batch_size);
		bs = (bs + (size_t)ranks - 1) / (size_t)ranks;	/* per rank */
		steps = (rows + bs - 1) / bs;
		tfk_progress_init(&pg, tfk_progress_wanted(force_progress,
							   quiet),
				  "batches", steps);
		for (s = 0; !rc && s < steps; s++) {
			struct tfk_feed_batch b;
			size_t n = rows - s * bs < bs ? rows - s * bs : bs;
			uint64_t t0 = prof_step_begin((int64_t)s + 1,
						      prof_wanted());

			rc = tfk_feed_batch(feed, NULL, s * bs, n, &b, &err);
			tfk_prof_span("IteratorGetNext", "IteratorGetNext", t0,
				      tfk_prof_now(), -1);
			if (!rc)
				rc = tfk_trainer_eval(tr, &b, &err);
			prof_step_end("test", (int64_t)s + 1, t0);
			if (rc)
				tfk_err_prefix(&err, "batch %zu", s + 1);
			tfk_progress_update(&pg, s + 1);
		}
		tfk_progress_release(&pg);
	}
	if (!rc && ranks > 1)
		rc = tfk_trainer_sync_means(tr, &err);
	if (!rc)
		rc = prof_close(quiet, &err);
	else
		prof_abandon();
	if (!rc && !rank)
		print(tr, all);
	tfk_feed_free(feed);
	tfk_trainer_free(tr);
	tfk_model_free(m);
	tfk_free(ls);
	tfk_free(lw);
	if (has_fit)
		tfk_fit_release(&fit);
	tfk_spec_free(spec);
	tfk_kerasfile_free(kfile);
	if (rc && ranks > 1) {
		/* the others would wait for this rank's sums forever */
		tfk_err_prefix(&err, "rank %d of %d", rank, ranks);
		tfk_cli_fail(&err);
		tfk_mpi_abort(1);
	}
	tfk_mpi_finalize();
	return rc ? tfk_cli_fail(&err) : 0;
}
