/*
 * tfk-train: train a Keras model from a spec file on TFRecord data, as
 * model.compile(...) + model.fit(...) would.
 *
 * The spec (tfk-spec(5)) holds the model.to_json() config and the
 * compile/fit settings; records come from files or stdin, so the tool
 * ends a pipeline (tfk-idx | tfk-shuffle | tfk-train). Training data is
 * read into memory once (compact: uint8 pixels stay bytes) and each
 * epoch draws a new permutation from the seed, as fit(shuffle=True)
 * does for arrays; with fit.steps_per_epoch and stdin the records are
 * streamed instead, batch by batch, for endless pipes.
 *
 * Differences from Keras, each deliberate:
 *  - randomness only from --seed (default 0): initial weights, the
 *    shuffle of epoch e and every Dropout mask are functions of (seed,
 *    epoch or step), so --resume after a kill reproduces the
 *    uninterrupted run bit for bit at --threads 1;
 *  - a checkpoint after every epoch in --out (ckpt.h: tensor bundle +
 *    JSON state + TF's checkpoint pointer, the last five kept, as
 *    tf.train.CheckpointManager); earlier ones stay intact when a run
 *    fails;
 *  - a non-finite loss stops the run with its step number (Keras'
 *    TerminateOnNaN, on by default here) or, with --nan-policy skip,
 *    skips that update;
 *  - monitors naming keys the run cannot log are errors up front, not
 *    per-epoch warnings.
 * At the end --out also holds the trained model as a SavedModel
 * (saved_model.pb, variables/, assets.extra/tfkit_spec.json: see
 * format/savedmodel.h) with the final training state beside it in
 * assets.extra/tfkit_train.* (a checkpoint as ckpt.h's, written before
 * saved_model.pb); a model with ops TensorFlow lacks is not exported,
 * with a warning (its checkpoints are complete). --resume in a
 * directory holding only such a SavedModel (a copied export) continues
 * from that state.
 * Fine-tuning, as keras.models.load_model(DIR) + fit(): --init-from
 * DIR takes the weights from DIR/variables/ (exactly the spec model's
 * variables, by name, dtype and shape; anything else is an error
 * naming the variable), and the optimizer's slots and step count from
 * DIR's training state when the optimizer (class and whole config, as
 * Keras' get_config) is the same; otherwise, or with --reset-optimizer,
 * a fresh optimizer, with a note. Epochs, history and callbacks start
 * anew. SPEC may be omitted: a first argument not ending in ".json" is
 * data, and the spec is DIR/assets.extra/tfkit_spec.json (--set still
 * applies). With --resume too, a checkpoint in --out wins, so rerunning
 * a killed fine-tuning command continues it.
 * Progress goes to stderr in Keras' format: a bar with ETA on a
 * terminal, one line per epoch otherwise; --json prints the History
 * on stdout.
 * Profiling (--profile DIR, --trace FILE: profile-opts.h) records the
 * steps of --profile-steps A:B (global steps, 1-based, inclusive, as
 * the TensorBoard callback's profile_batch), each a "train" step span
 * (Keras' TraceMe name) holding the input wait
 * "IteratorGetNext:IteratorGetNext" (the op whose time the Profiler
 * counts as waiting for input) and the executor's op and memory
 * events; at the end it prints where the step time of the whole run
 * went and flags an input-bound run at the overview page's 20%.
 */
#include "kernels/cpu.h"
#include "nn/adapt.h"
#include "nn/callback.h"
#include "nn/ckpt.h"
#include "nn/feed.h"
#include "nn/kerasfile.h"
#include "nn/metric.h"
#include "nn/model.h"
#include "nn/optim.h"
#include "nn/replica.h"
#include "nn/spec.h"
#include "nn/train.h"
#include "io/out.h"
#include "io/record.h"
#include "model/smwrite.h"
#include "format/savedmodel.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cli.h"
#include "util/mpi.h"
#include "util/progress.h"

#include "profile-opts.h"
#include "train/inputsvc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static struct tfk_strlist train_files, val_files, sets;
static const char *out_dir, *logdir, *nan_policy = "stop", *init_from;
static const char *save_keras;
static uint64_t seed;
static long threads;
static int resume, json_out, quiet, force_progress, histograms;
static int reset_optimizer, export_only;
static long adapt_records = 100000;
static long prof_first = 3, prof_last = 7;	/* --profile-steps */
/* data-parallel (mpirun): this rank, the world, the shard it reads */
static int rank, ranks = 1, shard_files;
static const char *shard_arg;
static long shard_i, shard_n = 1;
static long fusion_bytes = 64L << 20;
static double stall_secs = 5;
/* the input service (train/inputsvc.h) */
static long input_workers, input_split_records;
static const char *input_pipeline = "tfk-cat {}", *input_mode,
		  *input_log;
static struct svc_opts svc;
static struct svc_split *splits;	/* svc.splits (freed at exit) */
static _Atomic long long cur_step, cur_epoch;	/* for the watchdog */
/* --init-from a Keras file (.keras or tf_keras .h5): read in main */
static struct tfk_kerasfile *kfile;

static int opt_seed(const char *arg, void *value)
{
	char *end;

	errno = 0;
	*(uint64_t *)value = strtoull(arg, &end, 0);
	return errno || end == arg || *end || *arg == '-' ? -1 : 0;
}

static int opt_secs(const char *arg, void *value)
{
	char *end;

	errno = 0;
	*(double *)value = strtod(arg, &end);
	return errno || end == arg || *end || *(double *)value < 0 ? -1 : 0;
}

/* --profile-steps A:B, 1 <= A <= B. */
static int opt_steps(const char *arg, void *value)
{
	char *end;
	long a, b;

	(void)value;
	errno = 0;
	a = strtol(arg, &end, 10);
	if (errno || end == arg || *end != ':' || a < 1)
		return -1;
	arg = end + 1;
	b = strtol(arg, &end, 10);
	if (errno || end == arg || *end || b < a)
		return -1;
	prof_first = a;
	prof_last = b;
	return 0;
}

static const struct tfk_opt opts[] = {
	TFK_OPT_LIST(0, "train", &train_files, "FILE",
		     "training records (repeatable; FILEs after SPEC too; "
		     "default: stdin)"),
	TFK_OPT_LIST(0, "val", &val_files, "FILE",
		     "validation records (repeatable), evaluated after each "
		     "epoch"),
	TFK_OPT_STR('o', "out", &out_dir, "DIR",
		    "checkpoint directory (required)"),
	TFK_OPT_STR(0, "logdir", &logdir, "DIR",
		    "TensorBoard logs in DIR/train and DIR/validation"),
	TFK_OPT_CALL('s', "seed", &seed, "S",
		     "seed of weights, shuffles and dropout (default: 0)",
		     opt_seed),
	TFK_OPT_LIST(0, "set", &sets, "PATH=VALUE",
		     "override a spec value, e.g. fit.batch_size=64 "
		     "(repeatable)"),
	TFK_OPT_FLAG(0, "resume", &resume,
		     "continue from the latest checkpoint in --out (or the "
		     "SavedModel there)"),
	TFK_OPT_STR(0, "init-from", &init_from, "DIR|FILE",
		    "fine-tune: start from the weights (and optimizer state) "
		    "of a SavedModel tfk-train wrote (SPEC defaults to its "
		    "assets.extra/tfkit_spec.json), or of a Keras .keras or "
		    ".h5 file (SPEC defaults to the file's config)"),
	TFK_OPT_FLAG(0, "export-only", &export_only,
		     "with --init-from: write the SavedModel in --out from "
		     "those weights, no training"),
	TFK_OPT_STR(0, "save-keras", &save_keras, "FILE",
		    "also write the trained model as a Keras 3 .keras file "
		    "(keras.models.load_model opens it)"),
	TFK_OPT_FLAG(0, "reset-optimizer", &reset_optimizer,
		     "with --init-from: a fresh optimizer, not the saved "
		     "one"),
	TFK_OPT_LONG(0, "adapt-records", &adapt_records, "N",
		     "adapt the model's preprocessing layers that lack a "
		     "vocabulary or statistics from the first N training "
		     "records (0: all)"),
	TFK_OPT_LONG('j', "threads", &threads, "N",
		     "kernel threads (default: all CPUs)"),
	TFK_OPT_FLAG(0, "json", &json_out,
		     "print the history as JSON on stdout"),
	TFK_OPT_STR(0, "nan-policy", &nan_policy, "stop|skip",
		    "on a non-finite loss: stop with an error (default) or "
		    "skip the update"),
	TFK_OPT_FLAG('q', "quiet", &quiet, "no progress output"),
	TFK_OPT_FLAG(0, "progress", &force_progress,
		     "progress bar even when stderr is not a terminal"),
	PROFILE_OPTS,
	TFK_OPT_CALL(0, "profile-steps", NULL, "A:B",
		     "steps profiled, 1-based inclusive (3:7)", opt_steps),
	TFK_OPT_FLAG(0, "histograms", &histograms,
		     "weight histograms in the TensorBoard logs each epoch"),
	TFK_OPT_STR(0, "shard", &shard_arg, "I/N",
		    "read records k with k % N == I of the training and "
		    "validation files (default under mpirun: RANK/SIZE)"),
	TFK_OPT_FLAG(0, "shard-files", &shard_files,
		     "shard whole files instead: file k when k % N == I"),
	TFK_OPT_LONG(0, "fusion-threshold", &fusion_bytes, "BYTES",
		     "under mpirun: gradients summed in buckets of at most "
		     "BYTES, as Horovod's tensor fusion"),
	TFK_OPT_LONG(0, "input-workers", &input_workers, "K",
		     "under mpirun: the last K ranks run the input pipeline "
		     "and stream its records to the others, which train"),
	TFK_OPT_STR(0, "input-pipeline", &input_pipeline, "CMD",
		    "the input workers' shell pipeline, {} a training file, "
		    "{seed} a seed"),
	TFK_OPT_LONG(0, "input-split-records", &input_split_records, "N",
		     "the input workers' splits are ranges of N records of "
		     "the training files, not whole files (plain TFRecord)"),
	TFK_OPT_STR(0, "input-mode", &input_mode, "MODE",
		    "distributed_epoch (default: each record once an epoch) "
		    "or parallel_epochs (every worker runs every file)"),
	TFK_OPT_STR(0, "input-log", &input_log, "PREFIX",
		    "each trainer writes PREFIX.RANK: a line per record it "
		    "trained on (epoch, CRC-32C)"),
	TFK_OPT_CALL(0, "stall-report", &stall_secs, "S",
		     "under mpirun: report a gradient sum that waits more "
		     "than S seconds for the other ranks (default 5; 0: "
		     "never)", opt_secs),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-train",
	"[options] SPEC.json [FILE...]",
	"train a Keras model (spec: model.to_json() + compile/fit) on "
	"TFRecord data",
	"tfk-idx train-images train-labels | tfk-train mlp.spec.json "
	"--out run1 --val test.tfrecord; tfk-train --init-from run1 --out "
	"run2 --set fit.epochs=2 more.tfrecord; mpirun -np 4 tfk-train "
	"mlp.spec.json train-*.tfrecord --set fit.batch_size=128 -j 1 "
	"--out run3",
};

#define KEEP 5			/* checkpoints kept, as CheckpointManager */

struct run {
	struct tfk_spec *spec;
	struct tfk_fit fit;
	struct tfk_compile comp;
	struct tfk_loss_spec *ls;	/* [outputs] */
	float *lw;			/* [outputs] loss weights */
	struct tfk_model *m;
	struct tfk_optim *opt;
	struct tfk_trainer *tr;
	struct tfk_feed *feed, *vfeed;
	struct tfk_callbacks *cbs;
	struct tfk_cb_env env;
	struct tfk_hparam *hp;
	int stream;		/* batches straight from stdin */
	struct svc_in *svc;	/* ... or from the input service */
	int svc_done;		/* this pass has no more records here */
	struct tfk_rec_reader *in;
	int in_eof;
	size_t n_train;		/* rows [0, n_train) train */
	size_t max_train, max_val;	/* the largest shard's (mpirun) */
	uint64_t *shard_rows;	/* every rank's n_train (mpirun) */
	size_t val_start, n_val;	/* validation rows of feed or vfeed */
	uint32_t *perm;
	int64_t epoch;		/* the epoch running (0-based) */
	int64_t epochs_done;
	json_t *history;	/* {"loss": [...], ...} */
	json_t *epochs;		/* [0, 1, ...] */
	char last_ckpt[4200];
	int bar;		/* redrawn progress bar on stderr */
	long skipped;
	/* profiling: seconds of all steps, and their parts */
	double step_s, input_s, compute_s;
	long n_timed;
};

static struct tfk_err err;

/* Output --------------------------------------------------------------- */

static void note(void *ctx, const char *msg)
{
	(void)ctx;
	if (!quiet)
		fprintf(stderr, "%s\n", msg);
}

/* Keras' Progbar number format. */
static void add_logs(struct tfk_buf *b, const struct tfk_logs *l)
{
	for (int i = 0; i < l->n; i++) {
		double v = l->val[i];

		tfk_buf_addf(b, " - %s: ", l->key[i]);
		if (fabs(v) > 1e-3 || v == 0 || !isfinite(v))
			tfk_buf_addf(b, "%.4f", v);
		else
			tfk_buf_addf(b, "%.4e", v);
	}
}

static void add_time(struct tfk_buf *b, double s, long steps)
{
	double per = steps ? s / (double)steps : 0;

	if (s >= 1)
		tfk_buf_addf(b, " - %.0fs", s);
	else
		tfk_buf_addf(b, " - %.0fms", s * 1e3);
	if (per >= 1)
		tfk_buf_addf(b, " %.0fs/step", per);
	else if (per >= 1e-3)
		tfk_buf_addf(b, " %.0fms/step", per * 1e3);
	else
		tfk_buf_addf(b, " %.0fus/step", per * 1e6);
}

static void draw_bar(long done, long total, double t0,
		     const struct tfk_logs *l, int final)
{
	struct tfk_buf b;
	double now = tfk_now(), dt = now - t0;
	int w = 30, k;
	char bar[31];

	tfk_buf_init(&b);
	if (total > 0) {
		int d = snprintf(NULL, 0, "%ld", total);

		k = (int)((double)w * (double)done / (double)total);
		if (k > w)
			k = w;
		for (int i = 0; i < w; i++)
			bar[i] = i < k ? '=' : (i == k && !final ? '>' : '.');
		if (final || k == w)
			memset(bar, '=', (size_t)w);
		bar[w] = '\0';
		tfk_buf_addf(&b, "\r%*ld/%ld [%s]", d, done, total, bar);
	} else {
		tfk_buf_addf(&b, "\r%ld", done);
	}
	if (final) {
		add_time(&b, dt, done);
	} else if (total > 0 && done > 0) {
		double eta = dt / (double)done * (double)(total - done);

		tfk_buf_addf(&b, " - ETA: %.0fs", eta);
	}
	add_logs(&b, l);
	tfk_buf_adds(&b, final ? "\033[K\n" : "\033[K");
	if (!b.oom)
		fwrite(b.data, 1, b.len, stderr);
	tfk_buf_release(&b);
}

/* Data ------------------------------------------------------------------ */

/* Fisher-Yates from a counter-based key: epoch e's order depends only
 * on (seed, e), so a resumed run shuffles as the uninterrupted one. */
static void permute(uint32_t *p, size_t n, uint64_t key)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint32_t)i;
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(tfk_rng_u64(key, i) % i);
		uint32_t t = p[i - 1];

		p[i - 1] = p[j];
		p[j] = t;
	}
}

/* Load this rank's shard of the files into f; no files: stdin. */
static int load_files(struct tfk_feed *f, struct tfk_strlist *files,
		      const char *what)
{
	size_t n = files->n ? files->n : 1;
	uint64_t at = 0;

	for (size_t i = 0; i < n; i++) {
		int rc;

		if (shard_files && i % (size_t)shard_n != (size_t)shard_i)
			continue;
		rc = shard_files ?
			tfk_feed_add_file(f, files->v[i], &err) :
			tfk_feed_add_shard(f, files->n ? files->v[i] : "-", &at,
					   (uint64_t)shard_i,
					   (uint64_t)shard_n, &err);
		if (rc == TFK_ENOMEM)
			tfk_err_prefix(&err, "%s data does not fit in memory "
				       "(stream it from stdin with "
				       "fit.steps_per_epoch)", what);
		if (rc)
			return rc;
	}
	return 0;
}

/* The rows of step s of an epoch on all ranks (shards in memory). */
static double step_rows(const struct run *r, size_t s, size_t bs)
{
	double sum = 0;

	for (int k = 0; k < ranks; k++) {
		uint64_t n = r->shard_rows[k], at = (uint64_t)s * bs;

		sum += (double)(n <= at ? 0 : n - at < bs ? n - at : bs);
	}
	return sum;
}

/* The largest of every rank's n (each rank's steps must match). */
static size_t max_over_ranks(size_t n)
{
	double v = (double)n;

	tfk_mpi_max_f64(&v, 1, &err);
	return (size_t)v;
}

/* The watchdog's report (its own thread): which step waits for whom. A
 * sum cannot tell which rank is missing; with two ranks it is the other. */
static void stalled(void *ctx, double waited)
{
	char who[64];

	(void)ctx;
	if (ranks == 2)
		snprintf(who, sizeof(who), "rank %d", !rank);
	else
		snprintf(who, sizeof(who), "a rank other than %d", rank);
	fprintf(stderr, "tfk-train: rank %d of %d: step %lld (epoch %lld): "
		"the gradient sum has waited %.0f s for %s: is a rank or a "
		"link down?\n", rank, ranks, (long long)cur_step + 1,
		(long long)cur_epoch + 1, waited, who);
}

/* Rank 0's decisions (callbacks run there: EarlyStopping, the learning
 * rate) to every rank. */
static void sync_control(struct run *r)
{
	double c[3] = { r->env.stop, r->env.lr_set, r->env.lr };

	if (ranks == 1)
		return;
	tfk_mpi_bcast(c, sizeof(c), 0, &err);
	r->env.stop = c[0] != 0;
	r->env.lr_set = c[1] != 0;
	r->env.lr = c[2];
	if (r->env.lr_set && rank)
		tfk_optim_set_lr(r->opt, r->env.lr);
}

/* Streaming: the next batch of up to bs rows from stdin into the feed
 * (rows [0, n)); 0 rows at the end of the input. */
static int stream_fill(struct run *r, size_t bs, size_t *n)
{
	struct tfk_rec rec;
	int rc;

	while (r->svc && !r->svc_done && tfk_feed_rows(r->feed) < bs) {
		const uint8_t *p;
		size_t n;

		rc = svc_in_next(r->svc, &p, &n, &err);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			r->svc_done = 1;
			break;
		}
		rc = tfk_feed_add(r->feed, p, n, "input service", 0, &err);
		if (rc)
			return rc;
	}
	while (!r->svc && !r->in_eof && tfk_feed_rows(r->feed) < bs) {
		rc = tfk_rec_next(r->in, &rec, &err);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			r->in_eof = 1;
			break;
		}
		rc = tfk_feed_add(r->feed, rec.data, rec.len,
				  tfk_rec_path(r->in), rec.index, &err);
		if (rc)
			return rc;
	}
	*n = tfk_feed_rows(r->feed) < bs ? tfk_feed_rows(r->feed) : bs;
	return 0;
}

/* Checkpoints ------------------------------------------------------------ */

/* The optimizer as Keras' serialize() gives it: what --init-from
 * compares to decide whether the saved slots fit. */
static json_t *optim_json(const struct tfk_optim *o)
{
	json_t *j = json_object();

	if (j) {
		json_object_set_new(j, "class_name",
				    json_string(tfk_optim_name(o)));
		json_object_set_new(j, "config", tfk_optim_config(o));
	}
	return j;
}

static json_t *state_json(struct run *r)
{
	json_t *s = json_object(), *spec;
	char *text = tfk_spec_dump(r->spec, 0);
	char sd[32];

	if (!s || !text) {
		json_decref(s);
		tfk_free(text);
		return NULL;
	}
	spec = json_loads(text, 0, NULL);
	tfk_free(text);
	snprintf(sd, sizeof(sd), "%" PRIu64, seed);
	json_object_set_new(s, "format", json_string("tfk-train 1"));
	json_object_set_new(s, "epoch", json_integer(r->epochs_done));
	json_object_set_new(s, "iterations",
			    json_integer(tfk_optim_iterations(r->opt)));
	json_object_set_new(s, "optimizer", optim_json(r->opt));
	json_object_set_new(s, "learning_rate", r->env.lr_set ?
			    json_real(r->env.lr) : json_null());
	json_object_set_new(s, "seed", json_string(sd));
	json_object_set_new(s, "callbacks", tfk_callbacks_state(r->cbs));
	json_object_set_new(s, "epochs", json_copy(r->epochs));
	json_object_set_new(s, "history", json_copy(r->history));
	json_object_set_new(s, "spec", spec ? spec : json_null());
	return s;
}

static int save_prefix(struct run *r, const char *prefix, struct tfk_err *e)
{
	json_t *st = state_json(r);
	char *dir = tfk_strdup(prefix), *slash;
	int rc;

	if (!st || !dir) {
		json_decref(st);
		tfk_free(dir);
		return tfk_errf(e, TFK_ENOMEM, "out of memory");
	}
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if ((rc = tfk_mkdirs(dir, e))) {
			json_decref(st);
			tfk_free(dir);
			return rc;
		}
	}
	tfk_free(dir);
	rc = tfk_ckpt_write(prefix, r->m->g, r->opt, tfk_trainer_opt_vars(r->tr),
			    st, e);
	json_decref(st);
	return rc;
}

static int cb_save(void *ctx, const char *prefix, struct tfk_err *e)
{
	return save_prefix(ctx, prefix, e);
}

static int checkpoint(struct run *r)
{
	char prefix[4200], name[64], names[KEEP][64];
	const char *all[KEEP];
	int64_t e = r->epochs_done, first = e - KEEP + 1, k;
	int n = 0, rc;

	snprintf(name, sizeof(name), "ckpt-%" PRId64, e);
	snprintf(prefix, sizeof(prefix), "%s/%s", out_dir, name);
	rc = save_prefix(r, prefix, &err);
	if (rc)
		return rc;
	if (first < 1)
		first = 1;
	for (k = first; k <= e; k++) {
		char p[4200];

		snprintf(names[n], sizeof(names[n]), "ckpt-%" PRId64, k);
		snprintf(p, sizeof(p), "%s/%s.index", out_dir, names[n]);
		if (k == e || !access(p, F_OK)) {
			all[n] = names[n];
			n++;
		}
	}
	rc = tfk_ckpt_set_latest(out_dir, name, all, n, &err);
	if (rc)
		return rc;
	if (first > 1) {
		snprintf(prefix, sizeof(prefix), "%s/ckpt-%" PRId64, out_dir,
			 first - 1);
		tfk_ckpt_remove(prefix);
	}
	snprintf(r->last_ckpt, sizeof(r->last_ckpt), "%s/%s", out_dir, name);
	return 0;
}

/* Resume ----------------------------------------------------------------- */

static int restore(struct run *r, int64_t *start)
{
	char prefix[4200];
	json_t *st = NULL, *v;
	int rc;

	*start = 0;
	rc = tfk_ckpt_latest(out_dir, prefix, sizeof(prefix), &err);
	if (rc == TFK_ENOTFOUND) {
		/* a SavedModel we exported (a copy holds no ckpt-N) */
		snprintf(prefix, sizeof(prefix), "%s/%s.index", out_dir,
			 TFK_CKPT_IN_SAVEDMODEL);
		if (!access(prefix, F_OK)) {
			tfk_err_clear(&err);
			snprintf(prefix, sizeof(prefix), "%s/%s", out_dir,
				 TFK_CKPT_IN_SAVEDMODEL);
			rc = 0;
		}
	}
	if (rc == TFK_ENOTFOUND) {
		tfk_err_clear(&err);
		if (init_from)
			return 1;
		if (!quiet)
			tfk_cli_warn("%s: no checkpoint to resume; starting "
				     "at epoch 1", out_dir);
		return 0;
	}
	if (!rc)
		rc = tfk_ckpt_read_state(prefix, &st, &err);
	if (rc)
		return rc;
	v = json_object_get(st, "epoch");
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    !json_is_integer(json_object_get(st, "iterations")) ||
	    !json_is_object(json_object_get(st, "history")) ||
	    !json_is_array(json_object_get(st, "epochs"))) {
		json_decref(st);
		return tfk_errf(&err, TFK_ECORRUPT, "%s.json: not a tfk-train "
				"checkpoint state", prefix);
	}
	rc = tfk_ckpt_restore(prefix, r->m->g, r->opt,
			      tfk_trainer_n_opt(r->tr),
			      tfk_trainer_opt_vars(r->tr), &err);
	if (!rc)
		rc = tfk_callbacks_restore(r->cbs, json_object_get(st,
							"callbacks"), &err);
	if (rc) {
		json_decref(st);
		return rc;
	}
	*start = json_integer_value(v);
	r->epochs_done = *start;
	tfk_optim_set_iterations(r->opt, json_integer_value(
		json_object_get(st, "iterations")));
	v = json_object_get(st, "learning_rate");
	if (json_is_number(v)) {
		r->env.lr_set = 1;
		r->env.lr = json_number_value(v);
		tfk_optim_set_lr(r->opt, r->env.lr);
	}
	json_decref(r->history);
	json_decref(r->epochs);
	r->history = json_incref(json_object_get(st, "history"));
	r->epochs = json_incref(json_object_get(st, "epochs"));
	snprintf(r->last_ckpt, sizeof(r->last_ckpt), "%s", prefix);
	r->env.resumed = 1;
	json_decref(st);
	return 0;
}

/* Fine-tuning ------------------------------------------------------------ */

/* Did the run that saved state use this optimizer? 1 yes, 0 no (what
 * differs into why[0..n): the class, or the first config key). */
static int same_optimizer(struct run *r, json_t *st, char *why, size_t n)
{
	json_t *have = optim_json(r->opt), *saved = json_object_get(st,
								     "optimizer");
	json_t *hc = json_object_get(have, "config");
	json_t *sc = json_object_get(saved, "config");
	const char *hn = json_string_value(json_object_get(have, "class_name"));
	const char *sn = json_string_value(json_object_get(saved,
							    "class_name"));
	const char *k;
	json_t *v;
	int same = saved && have && json_equal(have, saved);

	if (same) {
		json_decref(have);
		return 1;
	}
	snprintf(why, n, "no optimizer in the saved state");
	if (sn && hn && strcmp(sn, hn))
		snprintf(why, n, "saved %s, now %s", sn, hn);
	else if (json_is_object(sc) && json_is_object(hc)) {
		json_object_foreach(hc, k, v) {
			json_t *w = json_object_get(sc, k);
			char *a, *b;

			if (w && json_equal(v, w))
				continue;
			a = w ? json_dumps(w, JSON_ENCODE_ANY |
					   JSON_REAL_PRECISION(9)) : NULL;
			b = json_dumps(v, JSON_ENCODE_ANY |
				       JSON_REAL_PRECISION(9));
			snprintf(why, n, "%s %s: saved %.100s, now %.100s",
				 hn, k, a ? a : "none", b ? b : "?");
			free(a);	/* jansson's allocator */
			free(b);
			break;
		}
	}
	json_decref(have);
	return 0;
}

/*
 * --init-from DIR: the weights from DIR/variables/ (exactly the
 * model's), then the optimizer's slots and step count from DIR's
 * training state when it was the same optimizer (else a fresh one, and
 * a note). The run itself starts at epoch 1, as a new fit() would.
 */
static int init_weights(struct run *r)
{
	char prefix[4200], why[700];
	json_t *st = NULL;
	int rc;

	if (kfile) {
		/* Keras keeps its optimizer's variables by position only,
		 * so a Keras file gives the weights and a fresh optimizer */
		rc = tfk_kerasfile_apply(kfile, init_from, r->m, &err);
		if (rc)
			tfk_err_prefix(&err, "--init-from");
		return rc;
	}
	snprintf(prefix, sizeof(prefix), "%s/variables/variables.index",
		 init_from);
	if (tfk_graph_n_variables(r->m->g) && access(prefix, F_OK))
		return tfk_errf(&err, TFK_EIO, "%s: no variables/variables."
				"index: not a SavedModel with weights",
				init_from);
	snprintf(prefix, sizeof(prefix), "%s/variables/variables", init_from);
	if (tfk_graph_n_variables(r->m->g)) {
		rc = tfk_ckpt_restore_vars(prefix, r->m->g, &err);
		if (rc) {
			tfk_err_prefix(&err, "--init-from");
			return rc;
		}
	}
	if (reset_optimizer)
		return 0;
	snprintf(prefix, sizeof(prefix), "%s/%s.index", init_from,
		 TFK_CKPT_IN_SAVEDMODEL);
	if (access(prefix, F_OK)) {
		if (!quiet)
			tfk_cli_warn("%s: no training state in assets.extra/; "
				     "starting a fresh optimizer", init_from);
		return 0;
	}
	snprintf(prefix, sizeof(prefix), "%s/%s", init_from,
		 TFK_CKPT_IN_SAVEDMODEL);
	rc = tfk_ckpt_read_state(prefix, &st, &err);
	if (rc)
		return rc;
	if (!json_is_integer(json_object_get(st, "iterations")) ||
	    json_integer_value(json_object_get(st, "iterations")) < 0) {
		json_decref(st);
		return tfk_errf(&err, TFK_ECORRUPT, "%s.json: not a tfk-train "
				"checkpoint state", prefix);
	}
	if (!same_optimizer(r, st, why, sizeof(why))) {
		if (!quiet)
			tfk_cli_warn("%s: optimizer state not used (%s); "
				     "starting a fresh optimizer", init_from,
				     why);
		json_decref(st);
		return 0;
	}
	rc = tfk_ckpt_restore_slots(prefix, r->m->g, r->opt,
				    tfk_trainer_n_opt(r->tr),
				    tfk_trainer_opt_vars(r->tr), &err);
	if (!rc)
		tfk_optim_set_iterations(r->opt, json_integer_value(
			json_object_get(st, "iterations")));
	json_decref(st);
	return rc;
}

/* The loop ------------------------------------------------------------- */

static void hist_add(struct run *r, const struct tfk_logs *l)
{
	for (int i = 0; i < l->n; i++) {
		json_t *a = json_object_get(r->history, l->key[i]);

		if (!a) {
			a = json_array();
			json_object_set_new(r->history, l->key[i], a);
		}
		json_array_append_new(a, json_real(l->val[i]));
	}
	json_array_append_new(r->epochs, json_integer(r->epoch));
}

/* Keras logs are float32 values widened to Python floats. */
static double f32(double v)
{
	return (double)(float)v;
}

static void trainer_logs(struct run *r, struct tfk_logs *l, const char *pfx)
{
	char k[300];

	snprintf(k, sizeof(k), "%sloss", pfx);
	tfk_logs_set(l, k, f32(tfk_trainer_loss(r->tr)));
	for (int i = 0; i < tfk_trainer_n_metrics(r->tr); i++) {
		snprintf(k, sizeof(k), "%s%s", pfx,
			 tfk_trainer_metric_name(r->tr, i));
		tfk_logs_set(l, k, f32(tfk_trainer_metric(r->tr, i)));
	}
}

static int validate(struct run *r, struct tfk_logs *l)
{
	struct tfk_feed *f = r->vfeed ? r->vfeed : r->feed;
	size_t bs = (size_t)(r->fit.validation_batch_size ?
			     r->fit.validation_batch_size :
			     r->fit.batch_size);
	size_t steps, s;
	struct tfk_feed_batch b;
	int rc;

	bs = (bs + (size_t)ranks - 1) / (size_t)ranks;	/* per rank */
	steps = (r->max_val + bs - 1) / bs;
	if (r->fit.validation_steps && (size_t)r->fit.validation_steps < steps)
		steps = (size_t)r->fit.validation_steps;
	tfk_trainer_reset(r->tr);
	for (s = 0; s < steps; s++) {
		size_t start = s * bs, n = r->n_val - start < bs ?
			r->n_val - start : bs;

		if (start >= r->n_val)
			break;	/* this shard ran out: the sums tell */
		rc = tfk_feed_batch(f, NULL, r->val_start + start, n, &b, &err);
		if (!rc)
			rc = tfk_trainer_eval(r->tr, &b, &err);
		if (rc) {
			tfk_err_prefix(&err, "validation batch %zu", s + 1);
			return rc;
		}
	}
	if (ranks > 1 && (rc = tfk_trainer_sync_means(r->tr, &err)))
		return rc;
	trainer_logs(r, l, "val_");
	return 0;
}

/* Profiling ------------------------------------------------------------- */

/* The batch is ready: the input wait since t_step. */
static uint64_t prof_input_end(struct run *r, uint64_t t_step)
{
	uint64_t t = tfk_prof_now();

	tfk_prof_span("IteratorGetNext", "IteratorGetNext", t_step, t, -1);
	r->input_s += (double)(t - t_step) * 1e-9;
	return t;
}

static void prof_train_end(struct run *r, int64_t step, uint64_t t_step)
{
	r->step_s += (double)(tfk_prof_now() - t_step) * 1e-9;
	r->n_timed++;
	prof_step_end("train", step, t_step);
}

/* Where step time went, as the Profiler's overview page sums it. */
static void prof_summary(struct run *r)
{
	double st = r->step_s > 0 ? r->step_s : 1;
	double in = 100 * r->input_s / st, co = 100 * r->compute_s / st;
	const char *op;
	int64_t peak = tfk_prof_peak(&op);

	if (!r->n_timed)
		return;
	fprintf(stderr, "tfk-train: step time: %.3f ms/step over %ld steps: "
		"input %.1f%%, compute %.1f%%, other %.1f%%\n",
		1e3 * r->step_s / (double)r->n_timed, r->n_timed, in, co,
		100 - in - co > 0 ? 100 - in - co : 0);
	if (in >= 20)
		fprintf(stderr, "tfk-train: input-bound: %.0f%% of step time "
			"waiting for data\n", in);
	if (peak > 0)
		fprintf(stderr, "tfk-train: peak memory %.1f KiB (%lld bytes) "
			"in steps %ld:%ld, reached by %s\n",
			(double)peak / 1024, (long long)peak, prof_first,
			prof_last, op);
	else
		tfk_cli_warn("--profile-steps %ld:%ld: the run had %ld steps; "
			     "none profiled", prof_first, prof_last,
			     r->n_timed);
}

static int run_epoch(struct run *r, struct tfk_logs *l)
{
	size_t bs = (size_t)r->fit.batch_size / (size_t)ranks;	/* per rank */
	long steps, s;
	double t0 = tfk_now(), last = 0;
	struct tfk_feed_batch b;
	struct tfk_logs bl;
	int rc;

	if (r->svc)
		steps = LONG_MAX;	/* until no trainer has rows */
	else if (r->stream)
		steps = r->fit.steps_per_epoch;
	else {
		steps = (long)((r->max_train + bs - 1) / bs);
		if (r->fit.steps_per_epoch && r->fit.steps_per_epoch < steps)
			steps = r->fit.steps_per_epoch;
		if (r->fit.shuffle)
			permute(r->perm, r->n_train,
				tfk_rng_u64(seed ^ 0x73687566666c65ull ^
					    (uint64_t)rank << 48,
					    (uint64_t)r->epoch));
	}
	tfk_trainer_reset(r->tr);
	tfk_mpi_watch(1);
	for (s = 0; s < steps; s++) {
		uint64_t step = (uint64_t)tfk_optim_iterations(r->opt);
		uint64_t t_step = 0, t_in = 0;
		size_t n;

		cur_step = (long long)step;
		cur_epoch = r->epoch;
		if (r->shard_rows)
			tfk_trainer_step_rows(r->tr, step_rows(r, (size_t)s,
							       bs));
		if (prof_wanted())
			t_step = prof_step_begin((int64_t)step + 1,
						 (long)step + 1 >= prof_first &&
						 (long)step + 1 <= prof_last);
		if (r->svc) {
			rc = stream_fill(r, bs, &n);
			if (!rc && n)
				rc = tfk_feed_batch(r->feed, NULL, 0, n, &b,
						    &err);
		} else if (r->stream) {
			rc = stream_fill(r, bs, &n);
			if (rc)
				return rc;
			if (!n) {
				tfk_cli_warn("your input ran out of data after "
					     "%ld steps of epoch %" PRId64
					     "; training stopped",
					     s, r->epoch + 1);
				r->env.stop = 1;
				break;
			}
			rc = tfk_feed_batch(r->feed, NULL, 0, n, &b, &err);
		} else {
			size_t start = (size_t)s * bs;

			n = start >= r->n_train ? 0 : r->n_train - start < bs ?
				r->n_train - start : bs;
			rc = n ? tfk_feed_batch(r->feed, r->fit.shuffle ?
						r->perm : NULL, start, n, &b,
						&err) : 0;
		}
		if (prof_wanted())
			t_in = prof_input_end(r, t_step);
		if (!rc)
			rc = n ? tfk_trainer_step(r->tr, &b, step, &err) :
				tfk_trainer_step_idle(r->tr, &err);
		if (prof_wanted())
			r->compute_s += (double)(tfk_prof_now() - t_in) * 1e-9;
		if ((r->stream || r->svc) && rc >= 0)
			tfk_feed_shift(r->feed, n);
		if (rc == 2)		/* the input service's pass is over */
			break;
		if (rc == 1) {
			r->skipped++;
			if (prof_wanted())
				prof_train_end(r, (int64_t)step + 1, t_step);
			continue;
		}
		if (rc) {
			int nan = !strncmp(err.msg, "loss is ", 8);

			tfk_err_prefix(&err, "step %" PRIu64 " (epoch %" PRId64
				       ", batch %ld)", step + 1,
				       r->epoch + 1, s + 1);
			if (nan) {
				char m[TFK_ERR_MSG_MAX];

				snprintf(m, sizeof(m), "%s", err.msg);
				tfk_errf(&err, rc, "%s; --nan-policy skip "
					 "skips such steps", m);
			}
			return rc;
		}
		{
			tfk_logs_clear(&bl);
			trainer_logs(r, &bl, "");
			rc = tfk_callbacks_batch_end(r->cbs, &r->env,
						     (int64_t)step + 1, &bl,
						     &err);
			if (rc)
				return rc;
			if (r->bar && tfk_now() - last >= 0.1) {
				last = tfk_now();
				draw_bar(s + 1, r->svc ? s + 1 : steps, t0, &bl,
					 0);
			}
		}
		if (prof_wanted())
			prof_train_end(r, (int64_t)step + 1, t_step);
	}
	tfk_mpi_watch(0);
	if (r->svc) {
		steps = s;
		r->svc_done = 0;
		svc_in_next_pass(r->svc);
	}
	if (ranks > 1 && (rc = tfk_trainer_sync_means(r->tr, &err)))
		return rc;
	trainer_logs(r, l, "");
	if (r->n_val && (r->epoch + 1) % r->fit.validation_freq == 0) {
		rc = validate(r, l);
		if (rc)
			return rc;
	}
	/* the final line */
	if (!quiet) {
		if (r->bar) {
			draw_bar(s, steps, t0, l, 1);
		} else {
			struct tfk_buf o;

			tfk_buf_init(&o);
			tfk_buf_addf(&o, "Epoch %" PRId64 "/%ld - %ld/%ld",
				     r->epoch + 1, r->fit.epochs, s, steps);
			add_time(&o, tfk_now() - t0, s);
			add_logs(&o, l);
			tfk_buf_addc(&o, '\n');
			if (!o.oom)
				fwrite(o.data, 1, o.len, stderr);
			tfk_buf_release(&o);
		}
	}
	return 0;
}

static int log_keys(struct run *r, const char ***keys)
{
	enum { CAP = 2 * 64 + 2 };	/* keys checked, at most */
	int nm = tfk_trainer_n_metrics(r->tr), n = 0, pass;
	const char **k = tfk_calloc((size_t)(2 * nm + 2), sizeof(char *));
	static char buf[CAP][300];

	if (!k)
		return -1;
	for (pass = 0; pass < (r->n_val ? 2 : 1) && n < CAP; pass++) {
		const char *p = pass ? "val_" : "";

		snprintf(buf[n], sizeof(buf[n]), "%sloss", p);
		k[n] = buf[n];
		n++;
		for (int i = 0; i < nm && n < CAP; i++) {
			snprintf(buf[n], sizeof(buf[n]), "%s%s", p,
				 tfk_trainer_metric_name(r->tr, i));
			k[n] = buf[n];
			n++;
		}
	}
	*keys = k;
	return n;
}

static int fit(struct run *r)
{
	struct tfk_logs l;
	const char **keys = NULL;
	int64_t start = 0;
	int nk, rc;

	rc = resume && !rank ? restore(r, &start) : 1;
	if (rc < 0)
		return rc;
	if (rc == 1 && init_from && !rank) {
		rc = init_weights(r);
		if (rc)
			return rc;
	}
	if (export_only)
		return 0;
	if (ranks > 1) {
		/* every rank starts from rank 0's state */
		rc = tfk_replica_bcast(r->m->g, r->opt, r->tr, &err);
		if (rc)
			return rc;
		tfk_mpi_bcast(&start, sizeof(start), 0, &err);
		r->epochs_done = start;
		sync_control(r);
	}
	nk = log_keys(r, &keys);
	if (nk < 0)
		return tfk_errf(&err, TFK_ENOMEM, "out of memory");
	rc = tfk_callbacks_train_begin(r->cbs, &r->env, keys, nk, &err);
	tfk_free(keys);
	if (rc)
		return rc;
	if (start >= r->fit.epochs && !quiet)
		tfk_cli_warn("%s: already trained %" PRId64 " of %ld epochs",
			     out_dir, start, r->fit.epochs);
	for (r->epoch = start; r->epoch < r->fit.epochs && !r->env.stop;
	     r->epoch++) {
		long skipped = r->skipped;

		if (!quiet && r->bar)
			fprintf(stderr, "Epoch %" PRId64 "/%ld\n", r->epoch + 1,
				r->fit.epochs);
		rc = tfk_callbacks_epoch_begin(r->cbs, &r->env, r->epoch,
					       &err);
		sync_control(r);
		if (!rc) {
			tfk_logs_clear(&l);
			rc = run_epoch(r, &l);
		}
		if (rc)
			return rc;
		if (r->skipped > skipped && !quiet)
			tfk_cli_warn("epoch %" PRId64 ": %ld steps skipped "
				     "(non-finite loss)", r->epoch + 1,
				     r->skipped - skipped);
		r->epochs_done = r->epoch + 1;
		rc = tfk_callbacks_epoch_end(r->cbs, &r->env, r->epoch, &l,
					     &err);
		sync_control(r);
		if (rc)
			return rc;
		/* EarlyStopping's restore_best_weights acts on rank 0 */
		if (ranks > 1 && r->env.stop &&
		    (rc = tfk_replica_bcast(r->m->g, r->opt, r->tr, &err)))
			return rc;
		hist_add(r, &l);
		rc = rank ? 0 : checkpoint(r);
		if (rc)
			return rc;
	}
	if (ranks > 1 && (rc = tfk_replica_check(r->m->g, r->opt, &err)))
		return rc;
	return tfk_callbacks_train_end(r->cbs, &r->env, &err);
}

/* The training state next to the SavedModel (nn/ckpt.h). */
static int export_state(void *ctx, const char *extra_dir, struct tfk_err *e)
{
	char prefix[4200];

	snprintf(prefix, sizeof(prefix), "%s/tfkit_train", extra_dir);
	return save_prefix(ctx, prefix, e);
}

/* The trained model as a SavedModel in --out. */
static int export_model(struct run *r)
{
	char *spec = tfk_spec_dump(r->spec, 1);
	struct tfk_savedmodel_opts o;
	struct tfk_savedmodel_raw *raw;
	int rc, k;

	if (!spec)
		return tfk_errf(&err, TFK_ENOMEM, "out of memory");
	memset(&o, 0, sizeof(o));
	o.spec_json = spec;
	o.extra = export_state;
	o.ctx = r;
	raw = tfk_calloc((size_t)r->m->n_inputs + 1, sizeof(*raw));
	if (!raw) {
		tfk_free(spec);
		return tfk_errf(&err, TFK_ENOMEM, "out of memory");
	}
	/* serving_raw: the inputs as the records hold them, when the feed
	 * has decided for every input (it has after setup) */
	for (k = 0; k < r->m->n_inputs; k++) {
		enum tfk_dtype dt;

		raw[k].input = r->m->inputs[k].name;
		raw[k].feature = tfk_feed_input_feature(r->feed, k);
		if (!raw[k].feature || tfk_feed_input_raw(r->feed, k, &dt,
							   &raw[k].scale,
							   &raw[k].offset))
			break;
		raw[k].dtype = dt;
	}
	if (k == r->m->n_inputs) {
		o.n_raw = k;
		o.raw = raw;
	}
	rc = tfk_savedmodel_write_opts(out_dir, r->m, &o, &err);
	tfk_free(raw);
	tfk_free(spec);
	if (rc == TFK_EINVAL) {
		tfk_cli_warn("%s: no SavedModel written: %s", out_dir, err.msg);
		return 0;
	}
	if (rc)
		tfk_err_prefix(&err, "SavedModel export");
	return rc;
}

/* --save-keras FILE: the model config, compile settings and trained
 * weights as Keras 3 saves them (format/keras.h). */
static int write_keras(struct run *r)
{
	struct tfk_kerasfile *kf;
	int rc = tfk_kerasfile_of_model(r->m, tfk_spec_get(r->spec, "model"),
					tfk_spec_get(r->spec, "compile"), &kf,
					&err);

	if (!rc)
		rc = tfk_kerasfile_write(kf, save_keras, &err);
	tfk_kerasfile_free(kf);
	if (rc)
		tfk_err_prefix(&err, "--save-keras");
	return rc;
}

static void print_history(struct run *r)
{
	struct tfk_buf b;
	const char *k;
	json_t *a;
	char s[40];
	size_t i, j = 0;

	tfk_buf_init(&b);
	tfk_buf_adds(&b, "{\"epoch\":[");
	for (i = 0; i < json_array_size(r->epochs); i++)
		tfk_buf_addf(&b, "%s%lld", i ? "," : "", (long long)
			     json_integer_value(json_array_get(r->epochs, i)));
	tfk_buf_adds(&b, "],\"history\":{");
	json_object_foreach(r->history, k, a) {
		tfk_buf_addf(&b, "%s", j++ ? "," : "");
		tfk_buf_add_json_str(&b, k, strlen(k));
		tfk_buf_adds(&b, ":[");
		for (i = 0; i < json_array_size(a); i++) {
			double v = json_number_value(json_array_get(a, i));

			tfk_buf_adds(&b, i ? "," : "");
			tfk_buf_adds(&b, isfinite(v) ? tfk_py_repr(v, s) :
				     "null");
		}
		tfk_buf_addc(&b, ']');
	}
	tfk_buf_addf(&b, "},\"steps\":%" PRId64 ",\"checkpoint\":",
		     tfk_optim_iterations(r->opt));
	if (r->last_ckpt[0])
		tfk_buf_add_json_str(&b, r->last_ckpt, strlen(r->last_ckpt));
	else
		tfk_buf_adds(&b, "null");
	tfk_buf_adds(&b, "}\n");
	if (!b.oom)
		fwrite(b.data, 1, b.len, stdout);
	tfk_buf_release(&b);
}

/* Set-up ------------------------------------------------------------------ */

static int hparams(struct run *r)
{
	int n = tfk_spec_n_sets(r->spec);

	if (!n)
		return 0;
	r->hp = tfk_calloc((size_t)n, sizeof(*r->hp));
	if (!r->hp)
		return tfk_errf(&err, TFK_ENOMEM, "out of memory");
	for (int i = 0; i < n; i++) {
		const json_t *v;

		r->hp[i].name = tfk_spec_set_at(r->spec, i, &v);
		if (json_is_number(v))
			r->hp[i].num = json_number_value(v);
		else if (json_is_string(v))
			r->hp[i].str = json_string_value(v);
		else
			r->hp[i].str = json_is_true(v) ? "true" :
				json_is_false(v) ? "false" : "null";
	}
	r->env.hparams = r->hp;
	r->env.n_hparams = n;
	return 0;
}

static int check_out(void)
{
	char probe[4200];
	int fd, rc = tfk_mkdirs(out_dir, &err);

	if (rc)
		return rc;
	snprintf(probe, sizeof(probe), "%s/.tfk-train-probe-%ld", out_dir,
		 (long)getpid());
	fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return tfk_errf(&err, TFK_EIO, "%s: not writable: %s", out_dir,
				strerror(errno));
	close(fd);
	unlink(probe);
	return 0;
}

/* Replace stdin by an anonymous memory file holding what it held, so
 * that it can be read more than once: the adapt pass opens /dev/stdin
 * (a new reader from the start, each time), training reads fd 0 after
 * a rewind. */
static int spool_stdin(void)
{
	char buf[65536];
	ssize_t k, w;
	size_t off;
	int fd = memfd_create("tfk-train-stdin", 0), rc = 0;

	if (fd < 0)
		return tfk_errf(&err, TFK_EIO, "<stdin>: cannot keep the "
				"records to adapt from: %s", strerror(errno));
	while (!rc && (k = read(0, buf, sizeof(buf))) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			rc = tfk_errf(&err, TFK_EIO, "<stdin>: %s",
				      strerror(errno));
		for (off = 0; !rc && off < (size_t)k; off += (size_t)w) {
			w = write(fd, buf + off, (size_t)k - off);
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w < 0)
				rc = tfk_errf(&err, TFK_EIO, "<stdin>: "
					      "keeping the records to adapt "
					      "from: %s", strerror(errno));
		}
	}
	if (!rc && dup2(fd, 0) < 0)
		rc = tfk_errf(&err, TFK_EIO, "<stdin>: %s", strerror(errno));
	close(fd);
	return rc;
}

/* layer.adapt(train_data) before fit, for the layers that need it.
 * Records on stdin (not streamed) are kept in memory, adapted from and
 * then read again as stdin by training, as the same bytes. */
static int adapt(struct tfk_spec *s, const struct tfk_fit *fit)
{
	static const char *const dev_stdin[] = { "/dev/stdin" };
	const char *const *files = (const char *const *)train_files.v;
	size_t n_files = train_files.n;
	int n, rc, spooled = 0;

	if (adapt_records < 0)
		tfk_cli_usage_error("--adapt-records: expected N >= 0");
	if (!tfk_keras_adapt_needed(tfk_spec_json(s)))
		return 0;
	if (!fit->steps_per_epoch && (n_files == 0 || (n_files == 1 &&
						       !strcmp(files[0], "-")))) {
		if ((rc = spool_stdin()))
			return rc;
		files = dev_stdin;
		n_files = 1;
		spooled = 1;
	}
	rc = tfk_keras_adapt(tfk_spec_json(s), tfk_spec_name(s), files,
			     n_files, adapt_records, &n, &err);
	if (!rc && spooled && lseek(0, 0, SEEK_SET) < 0)
		rc = tfk_errf(&err, TFK_EIO, "<stdin>: %s", strerror(errno));
	if (!rc && n && !quiet)
		tfk_cli_warn("adapted %d preprocessing layer%s from the "
			     "training records", n, n == 1 ? "" : "s");
	return rc;
}

/*
 * compile.loss and loss_weights per output of m into new arrays (*ls,
 * *lw; freed first). Without m (before the model is built) a single
 * loss is only checked, so its errors come before the model's.
 */
static int losses(const struct tfk_compile *c, const struct tfk_model *m,
		  struct tfk_loss_spec **ls, float **lw)
{
	struct tfk_loss_spec one;

	if (!m)
		return json_is_array(c->loss) || (json_is_object(c->loss) &&
		       !json_object_get(c->loss, "class_name")) ? 0 :
			tfk_loss_parse(c->loss, c->loss_path, &one, &err);
	tfk_free(*ls);
	tfk_free(*lw);
	*ls = tfk_calloc((size_t)m->n_outputs + 1, sizeof(**ls));
	*lw = tfk_calloc((size_t)m->n_outputs + 1, sizeof(**lw));
	if (!*ls || !*lw)
		return tfk_errf(&err, TFK_ENOMEM, "out of memory");
	return tfk_loss_parse_outputs(c->loss, c->loss_path, c->loss_weights,
				      c->loss_weights_path, m, *ls, *lw, &err);
}

static int setup(struct run *r, const char *spec_path)
{
	struct tfk_feed_opts fo = { 0 };
	struct tfk_schema schema;
	struct tfk_train_opts to = { 0 };
	char path[300];
	int rc, has_schema = 0;
	const char *first;

	rc = r->spec ? 0 : tfk_spec_load(&r->spec, spec_path, &err);
	for (size_t i = 0; !rc && i < sets.n; i++)
		rc = tfk_spec_set(r->spec, sets.v[i], &err);
	if (!rc)
		rc = tfk_spec_fit(r->spec, &r->fit, &err);
	if (!rc)
		rc = adapt(r->spec, &r->fit);
	if (!rc)
		rc = tfk_spec_compile(r->spec, &r->comp, &err);
	if (!rc)
		rc = losses(&r->comp, NULL, &r->ls, &r->lw);
	if (!rc) {
		snprintf(path, sizeof(path), "%s: model",
			 tfk_spec_name(r->spec));
		rc = tfk_keras_build(json_object_get(tfk_spec_json(r->spec),
						     "model"), path, seed,
				     &r->m, &err);
	}
	if (!rc)
		rc = losses(&r->comp, r->m, &r->ls, &r->lw);
	if (!rc)
		rc = tfk_optim_new(r->comp.optimizer, r->comp.optimizer_path,
				   &r->opt, &err);
	if (!rc) {
		tfk_optim_set_threads(r->opt, (int)threads);
		/* rank r > 0 draws its own Dropout masks */
		to.seed = tfk_rng_u64(seed, 0x6578656375746f72ull) ^
			(uint64_t)rank << 40;
		to.threads = (int)threads;
		to.nan_skip = !strcmp(nan_policy, "skip");
		to.data_parallel = ranks > 1 || input_workers;
		to.bucket_bytes = (size_t)fusion_bytes;
		rc = tfk_trainer_new(&r->tr, r->m, r->ls, r->lw,
				     r->comp.metrics, r->comp.metrics_path,
				     r->opt, &to, &err);
	}
	if (!rc) {
		snprintf(path, sizeof(path), "%s: fit.callbacks",
			 tfk_spec_name(r->spec));
		/* under mpirun rank 0 decides and writes (sync_control) */
		rc = tfk_callbacks_new(rank ? NULL : r->fit.callbacks, path,
				       &r->cbs, &err);
	}
	if (!rc && r->fit.batch_size % ranks)
		rc = tfk_errf(&err, TFK_EINVAL, "%s: fit.batch_size %ld is the "
			      "global batch, split across %d ranks: it must "
			      "divide by %d", tfk_spec_name(r->spec),
			      r->fit.batch_size, ranks, ranks);
	if (!rc && input_workers && r->fit.steps_per_epoch)
		rc = tfk_errf(&err, TFK_EINVAL, "%s: fit.steps_per_epoch: with "
			      "--input-workers an epoch is a pass over the "
			      "files", tfk_spec_name(r->spec));
	if (!rc && ranks > 1 && !train_files.n)
		rc = tfk_errf(&err, TFK_EINVAL, "under mpirun every rank reads "
			      "its shard of the training files, and stdin "
			      "reaches rank 0 only: give the files");
	if (!rc && logdir)
		rc = tfk_callbacks_logdir(r->cbs, logdir, histograms, &err);
	if (!rc && histograms && !logdir)
		tfk_cli_usage_error("--histograms needs --logdir");
	if (!rc)
		rc = hparams(r);
	if (!rc && !rank)
		rc = check_out();
	if (rc)
		return rc;
	r->env.g = r->m->g;
	r->env.opt = r->opt;
	r->env.save = cb_save;
	r->env.note = note;
	r->env.ctx = r;

	/* Data. */
	first = train_files.n ? train_files.v[0] : "-";
	tfk_schema_init(&schema);
	rc = tfk_feed_find_schema(first, &schema, &err);
	if (rc < 0)
		return rc;
	has_schema = rc == 1;
	fo.loss = r->ls;
	fo.n_loss = r->m->n_outputs;
	fo.class_weight = r->fit.class_weight;
	fo.n_class_weight = r->fit.n_class_weight;
	fo.schema = has_schema ? &schema : NULL;
	rc = tfk_feed_new(&r->feed, r->spec, r->m, &fo, &err);
	if (!rc && val_files.n) {
		fo.class_weight = NULL;
		fo.n_class_weight = 0;
		rc = tfk_feed_new(&r->vfeed, r->spec, r->m, &fo, &err);
	}
	if (has_schema)
		tfk_schema_release(&schema);
	if (rc)
		return rc;
	r->stream = r->fit.steps_per_epoch && !strcmp(first, "-") &&
		train_files.n <= 1;
	if (input_workers) {
		svc.chunk_records = (int)(r->fit.batch_size / ranks);
		rc = svc_in_new(&r->svc, &svc, &err);
		if (rc)
			return rc;
	} else if (r->stream) {
		if (r->fit.validation_split > 0)
			return tfk_errf(&err, TFK_EINVAL, "%s: "
					"fit.validation_split needs the data "
					"in memory; give --val FILE when "
					"streaming", tfk_spec_name(r->spec));
		rc = tfk_rec_open(&r->in, "-", TFK_COMP_AUTO, 0, &err);
		if (rc)
			return rc;
	} else {
		size_t rows;

		rc = load_files(r->feed, &train_files, "training");
		if (rc)
			return rc;
		rows = tfk_feed_rows(r->feed);
		if (!rows && shard_n > 1)
			return tfk_errf(&err, TFK_EINVAL, "shard %ld/%ld of the "
					"training %s is empty: fewer %s than "
					"shards", shard_i, shard_n,
					shard_files ? "files" : "records",
					shard_files ? "files" : "records");
		if (!rows)
			return tfk_errf(&err, TFK_EINVAL, "%s: no training "
					"records", train_files.n == 1 ?
					train_files.v[0] : train_files.n ?
					"training files" : "<stdin>");
		r->n_train = rows;
		if (r->fit.validation_split > 0) {
			size_t at = (size_t)floor((double)rows *
						  (1 - r->fit.validation_split));

			if (at == 0 || at == rows)
				return tfk_errf(&err, TFK_EINVAL, "%zu "
						"training records cannot be "
						"split by fit.validation_split "
						"%g", rows,
						r->fit.validation_split);
			r->n_train = at;
			r->val_start = at;
			r->n_val = rows - at;
		}
		if (r->n_train > UINT32_MAX)
			return tfk_errf(&err, TFK_EINVAL, "more than 2^32 "
					"training rows");
		r->perm = tfk_calloc(r->n_train, sizeof(uint32_t));
		if (!r->perm)
			return tfk_errf(&err, TFK_ENOMEM, "out of memory");
	}
	if (r->vfeed) {
		if (r->fit.validation_split > 0)
			tfk_cli_warn("--val given: fit.validation_split "
				     "ignored");
		r->val_start = 0;
		rc = load_files(r->vfeed, &val_files, "validation");
		if (rc)
			return rc;
		r->n_val = tfk_feed_rows(r->vfeed);
		if (!r->n_val)
			return tfk_errf(&err, TFK_EINVAL, "%s: no validation "
					"records", val_files.v[0]);
	}
	if (ranks > 1 && !r->svc) {
		uint64_t mine = r->n_train;

		r->shard_rows = tfk_calloc((size_t)ranks, sizeof(uint64_t));
		if (!r->shard_rows)
			return tfk_errf(&err, TFK_ENOMEM, "out of memory");
		tfk_mpi_allgather(&mine, sizeof(mine), r->shard_rows, &err);
	}
	r->max_train = ranks > 1 ? max_over_ranks(r->n_train) : r->n_train;
	r->max_val = ranks > 1 ? max_over_ranks(r->n_val) : r->n_val;
	/* Build the graph now: a resume restores optimizer slots before
	 * the first step, and errors show before any work. */
	{
		struct tfk_feed_batch b;

		if (r->stream || r->svc) {
			size_t n;

			rc = stream_fill(r, (size_t)r->fit.batch_size /
					 (size_t)ranks, &n);
			if (!rc && !n)
				return tfk_errf(&err, TFK_EINVAL, "%s: no "
						"training records", r->svc ?
						"the input service" :
						"<stdin>");
			if (!rc)
				rc = tfk_feed_batch(r->feed, NULL, 0, n, &b,
						    &err);
		} else {
			rc = tfk_feed_batch(r->feed, NULL, 0, 1, &b, &err);
		}
		if (!rc)
			rc = tfk_trainer_prepare(r->tr, &b, &err);
		if (rc)
			return rc;
	}
	r->history = json_object();
	r->epochs = json_array();
	if (!r->history || !r->epochs)
		return tfk_errf(&err, TFK_ENOMEM, "out of memory");
	r->bar = !quiet && tfk_progress_wanted(force_progress, quiet);
	return 0;
}

static void teardown(struct run *r)
{
	svc_in_end(r->svc, NULL);
	tfk_rec_close(r->in);
	tfk_feed_free(r->feed);
	tfk_feed_free(r->vfeed);
	tfk_callbacks_free(r->cbs);
	tfk_trainer_free(r->tr);
	tfk_optim_free(r->opt);
	tfk_model_free(r->m);
	tfk_free(r->ls);
	tfk_free(r->lw);
	tfk_fit_release(&r->fit);
	tfk_spec_free(r->spec);
	tfk_kerasfile_free(kfile);
	tfk_free(r->perm);
	tfk_free(r->shard_rows);
	tfk_free(r->hp);
	json_decref(r->history);
	json_decref(r->epochs);
}

/*
 * --init-from FILE: a Keras file, read whole before set-up; without a
 * SPEC (has_spec 0) the spec is the file's own config.
 */
static int keras_init(struct run *r, int has_spec)
{
	int rc = tfk_kerasfile_read(&kfile, init_from, &err);

	if (rc) {
		tfk_err_prefix(&err, "--init-from");
		return rc;
	}
	return has_spec ? 0 : tfk_kerasfile_spec(kfile, init_from, &r->spec,
						 &err);
}

/*
 * Report err and fail. Under mpirun: a failure every rank shares (a
 * non-finite loss, known to all through the gradient sums) is reported
 * by rank 0 and every rank exits; any other ends the job (MPI_Abort), as
 * the other ranks would wait for this one forever, naming the rank.
 */
static int fail_rank(void)
{
	int shared = !strncmp(err.msg, "step ", 5) && strstr(err.msg,
							     ": loss is ");

	if (ranks == 1)
		return tfk_cli_fail(&err);
	if (shared) {
		if (!rank)
			tfk_cli_fail(&err);
		tfk_mpi_finalize();
		return 1;
	}
	tfk_err_prefix(&err, "rank %d of %d", rank, ranks);
	tfk_cli_fail(&err);
	tfk_mpi_abort(1);
	return 1;
}

/* Is s a name ending in ".json" (a spec, not records)? */
static int has_json_suffix(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > 5 && !strcmp(s + n - 5, ".json");
}

int main(int argc, char **argv)
{
	struct run r;
	int rc, first = 1;
	const char *spec;
	static char saved_spec[4200];
	struct stat st;

	memset(&r, 0, sizeof(r));
	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (input_workers < 0)
		tfk_cli_usage_error("--input-workers: expected K >= 0");
	if (input_mode && strcmp(input_mode, "distributed_epoch") &&
	    strcmp(input_mode, "parallel_epochs"))
		tfk_cli_usage_error("--input-mode: expected distributed_epoch "
				    "or parallel_epochs, got '%s'", input_mode);
	if (input_split_records < 0)
		tfk_cli_usage_error("--input-split-records: expected N >= 1");
	if ((input_mode || input_log || input_split_records) &&
	    !input_workers)
		tfk_cli_usage_error("--input-mode, --input-log and "
				    "--input-split-records need "
				    "--input-workers");
	if (input_workers)
		tfk_mpi_want_threads();	/* rank 0's dispatcher thread */
	if (tfk_mpi_init(&err))
		return tfk_cli_fail(&err);
	if (input_workers) {
		int world = tfk_mpi_world_size();

		if (input_workers >= world)
			tfk_cli_usage_error("--input-workers %ld: the job has %d "
					    "rank%s; at least one must train",
					    input_workers, world,
					    world == 1 ? "" : "s");
		svc.trainers = world - (int)input_workers;
		if (tfk_mpi_split(tfk_mpi_world_rank() >= svc.trainers, &err))
			return tfk_cli_fail(&err);
	}
	rank = tfk_mpi_rank();
	ranks = tfk_mpi_size();
	if (shard_arg && tfk_cli_shard(shard_arg, &shard_i, &shard_n))
		tfk_cli_usage_error("--shard: expected I/N with 0 <= I < N");
	if (!shard_arg) {
		shard_i = rank;
		shard_n = ranks;
	}
	if (ranks > 1 && tfk_mpi_watchdog(stall_secs, stalled, NULL, &err))
		return tfk_cli_fail(&err);
	if (fusion_bytes < 4)
		tfk_cli_usage_error("--fusion-threshold: expected at least 4 "
				    "bytes");
	if (rank) {
		/* rank 0 reports and writes; the others are quiet */
		quiet = 1;
		json_out = 0;
		histograms = 0;
		logdir = NULL;
		save_keras = NULL;
		prof_dir = trace_path = NULL;
	}
	spec = argc ? argv[0] : NULL;
	if (init_from && !stat(init_from, &st) && S_ISREG(st.st_mode)) {
		rc = keras_init(&r, has_json_suffix(spec));
		if (rc)
			return tfk_cli_fail(&err);
		if (!has_json_suffix(spec))
			first = 0;
	} else if (init_from && !has_json_suffix(spec)) {
		/* SPEC omitted: the one the SavedModel was trained with */
		snprintf(saved_spec, sizeof(saved_spec),
			 "%s/assets.extra/tfkit_spec.json", init_from);
		spec = saved_spec;
		first = 0;
	}
	if (!spec)
		tfk_cli_usage_error("no SPEC given");
	if (r.spec)
		spec = tfk_spec_name(r.spec);
	if (reset_optimizer && !init_from)
		tfk_cli_usage_error("--reset-optimizer needs --init-from");
	if (export_only && !init_from)
		tfk_cli_usage_error("--export-only needs --init-from");
	if (!out_dir)
		tfk_cli_usage_error("--out DIR is required");
	if (strcmp(nan_policy, "stop") && strcmp(nan_policy, "skip"))
		tfk_cli_usage_error("--nan-policy: expected stop or skip, "
				    "got '%s'", nan_policy);
	if (threads < 0 || threads > 1024)
		tfk_cli_usage_error("--threads: expected 1 to 1024");
	if (!threads) {
		threads = sysconf(_SC_NPROCESSORS_ONLN);
		if (threads < 1)
			threads = 1;
	}
	for (int i = first; i < argc; i++) {
		const char **v = realloc(train_files.v, (train_files.n + 1) *
					 sizeof(*v));

		if (!v) {
			tfk_errf(&err, TFK_ENOMEM, "out of memory");
			return tfk_cli_fail(&err);
		}
		v[train_files.n++] = argv[i];
		train_files.v = v;
	}
	if (input_workers) {
		svc.pipeline = input_pipeline;
		if (svc_cut(train_files.v, (int)train_files.n,
			    input_split_records, &splits, &svc.n_splits,
			    &err)) {
			tfk_cli_fail(&err);
			tfk_mpi_abort(1);
		}
		svc.splits = splits;
		svc.parallel = input_mode && !strcmp(input_mode,
						     "parallel_epochs");
		svc.seed = seed;
		svc.log = input_log;
		if (!train_files.n)
			tfk_cli_usage_error("--input-workers: give the training "
					    "files, the workers' splits");
		if (!svc.n_splits) {
			tfk_errf(&err, TFK_EINVAL, "--input-split-records: the "
				 "training files hold no records");
			tfk_cli_fail(&err);
			tfk_mpi_abort(1);
		}
		if (tfk_mpi_world_rank() >= svc.trainers) {
			/* an input worker: serve, nothing else */
			if (svc_worker(&svc, &err)) {
				tfk_cli_fail(&err);
				tfk_mpi_abort(1);
			}
			tfk_mpi_finalize();
			tfk_free(splits);
			return 0;
		}
	}
	tfk_cpu_blas_threads((int)threads);
	errno = 0;
	if (init_from && !kfile &&
	    (stat(init_from, &st) || !S_ISDIR(st.st_mode))) {
		tfk_errf(&err, TFK_EIO, "--init-from %s: %s", init_from,
			 errno ? strerror(errno) : "not a directory");
		return tfk_cli_fail(&err);
	}
	rc = prof_open(&err);
	if (!rc)
		rc = setup(&r, spec);
	if (!rc)
		rc = fit(&r);
	if (!rc && r.svc) {
		rc = svc_in_end(r.svc, &err);	/* rank 0 stops the workers */
		r.svc = NULL;
	}
	if (!rc && prof_wanted() && !quiet)
		prof_summary(&r);
	if (!rc)
		rc = prof_close(quiet, &err);
	else
		prof_abandon();
	if (!rc && !rank)
		rc = export_model(&r);
	if (!rc && save_keras)
		rc = write_keras(&r);
	if (!rc && json_out)
		print_history(&r);
	teardown(&r);
	if (rc)
		return fail_rank();
	tfk_mpi_finalize();
	tfk_free(splits);
	if (r.skipped && !quiet)
		tfk_cli_warn("%ld steps skipped in all (non-finite loss)",
			     r.skipped);
	return 0;
}
