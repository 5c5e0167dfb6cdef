/*
 * run.c - `tfk-model run`: run one SignatureDef of a SavedModel on
 * inputs from the command line, as saved_model_cli run does.
 *
 * The model is opened and the signature prepared through the model API
 * (model/servable.h) for the inputs given, which model/given.h turns
 * into tensors; one run gives the outputs, printed in key order as
 * "Result for output key K:" + numpy's str() of the array (io/npy.h),
 * and written as K.npy under --outdir.
 *
 * Inputs, with saved_model_cli's option names and syntax
 * ("key=value;key2=value2"):
 *   --inputs         key=FILE.npy, key=FILE.npz[NAME] (npz with one
 *                    array: the name may be left out)
 *   --input_exprs    key=LITERAL: saved_model_cli evals Python; here a
 *                    literal parser (numbers, strings, nested lists and
 *                    tuples, True/False) -- nothing is evaluated, so
 *                    np.ones(...) and the like are refused
 *   --input_examples key=[{"feature": [values], ...}, ...]: serialized
 *                    tf.Examples (float, int or bytes lists by the type
 *                    of each list's first value, as saved_model_cli)
 *   --input_records  key=FILE or FILE: every record of a TFRecord file
 *                    as a string vector (the serialized tf.Examples a
 *                    regress/classify signature takes); FILE alone when
 *                    the signature has one string input
 * Later options win for the same key (records > examples > exprs >
 * inputs), as in saved_model_cli.
 * Values are converted to the signature's dtype the way feeding numpy
 * arrays converts them (ints to floats, float64 to float32); a float to
 * an integer input, a string to a number and the like are refused.
 * Differences from saved_model_cli: --tag_set and --signature_def
 * default to "serve" and "serving_default"; a string output is written
 * as a fixed-width bytes array (|S) rather than a pickled object array.
 * --profile/--trace (profile-opts.h) record the run as step 1.
 */
#include "sub.h"
#include "../profile-opts.h"

#include "io/npy.h"
#include "io/out.h"
#include "kernels/cpu.h"
#include "model/given.h"
#include "model/servable.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *dir;
static const char *tag_set = "serve";
static const char *signature_def = "serving_default";
static const char *inputs_arg, *exprs_arg, *examples_arg, *records_arg;
static const char *outdir;
static int overwrite;
static long threads;

static const struct tfk_opt run_opts[] = {
	TFK_OPT_STR(0, "dir", &dir, "DIR", "the SavedModel directory"),
	TFK_OPT_STR(0, "tag_set", &tag_set, "TAGS", "the MetaGraphDef's "
		    "tags, comma-separated"),
	TFK_OPT_STR(0, "signature_def", &signature_def, "KEY",
		    "the signature to run"),
	TFK_OPT_STR(0, "inputs", &inputs_arg, "K=FILE", "inputs from .npy "
		    "files or FILE.npz[NAME] (';' between inputs)"),
	TFK_OPT_STR(0, "input_exprs", &exprs_arg, "K=LITERAL",
		    "inputs as Python literals, e.g. 'x=[[1.0],[2.0]]'"),
	TFK_OPT_STR(0, "input_examples", &examples_arg, "K=LIST",
		    "inputs as lists of tf.Example feature dicts, e.g. "
		    "'inputs=[{\"x\": [1.0]}]'"),
	TFK_OPT_STR(0, "input_records", &records_arg, "[K=]FILE",
		    "every record of a TFRecord file as a string vector"),
	TFK_OPT_STR(0, "outdir", &outdir, "DIR", "also write each output "
		    "as DIR/KEY.npy"),
	TFK_OPT_FLAG(0, "overwrite", &overwrite, "replace existing .npy "
		     "files in --outdir"),
	TFK_OPT_LONG('j', "threads", &threads, "N", "kernel threads "
		     "(0: all CPUs)"),
	PROFILE_OPTS,
	TFK_OPT_END
};

static const struct tfk_cmd run_cmd = {
	"tfk-model",
	"run --dir DIR [--tag_set TAGS] [--signature_def KEY] "
	"[--inputs K=FILE] [--input_exprs K=LITERAL] "
	"[--input_examples K=[{...}]] [--input_records [K=]FILE] "
	"[--outdir DIR [--overwrite]]",
	"run a SavedModel signature on the given inputs, as saved_model_cli "
	"run",
	"tfk-model run --dir model --signature_def serving_default "
	"--input_exprs 'x=[[2.0]]'",
};

/* Print output key's value and write it under --outdir. */
static int put_output(const char *key, const struct tfk_tensor *t,
		      struct tfk_buf *out, struct tfk_err *err)
{
	struct stat st;
	char *path;
	int rc;

	tfk_buf_reset(out);
	if ((rc = tfk_npy_str(t, out, err)))
		return rc;
	printf("Result for output key %s:\n%.*s\n", key, (int)out->len,
	       out->data ? (char *)out->data : "");
	if (!outdir)
		return 0;
	path = tfk_malloc(strlen(outdir) + strlen(key) + 8);
	if (!path)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	sprintf(path, "%s/%s.npy", outdir, key);
	if (!overwrite && !stat(path, &st))
		rc = tfk_errf(err, TFK_EIO, "output file %s already exists; "
			      "add --overwrite to overwrite the existing "
			      "output files", path);
	else if (!(rc = tfk_npy_write(path, t, err)))
		printf("Output %s is saved to %s\n", key, path);
	tfk_free(path);
	return rc;
}

/* The signature's one string input, for --input_records FILE; NULL
 * when it has none or several. */
static const char *only_string_input(const struct tfk_sv_signature *sig)
{
	const char *key = NULL;
	int i, n = 0;

	for (i = 0; i < sig->n_inputs; i++)
		if (sig->inputs[i].dtype == TFK_DT_STRING) {
			key = sig->inputs[i].key;
			n++;
		}
	return n == 1 ? key : NULL;
}

static int model_run_main(int argc, char **argv)
{
	struct tfk_servable_opts so = { NULL };
	struct tfk_runner_opts ro = { 0 };
	struct tfk_servable *s = NULL;
	const struct tfk_sv_signature *sig;
	struct tfk_runner *r = NULL;
	struct tfk_givens g = { NULL, 0, 0 };
	const char **keys = NULL;
	const struct tfk_tensor **got = NULL;
	struct tfk_tensor *in = NULL;
	struct tfk_buf out;
	struct tfk_err err;
	uint64_t t0;
	int rc = 0, n, i, j;

	tfk_err_clear(&err);
	tfk_buf_init(&out);
	n = tfk_cli_parse(argc, argv, &run_cmd, run_opts);
	if (n > 0)
		tfk_cli_usage_error("unexpected argument '%s'", argv[0]);
	if (!dir)
		tfk_cli_usage_error("run needs --dir DIR");
	if (overwrite && !outdir)
		tfk_cli_usage_error("--overwrite needs --outdir");
	if (threads < 0 || threads > 1024)
		tfk_cli_usage_error("--threads: expected 0 to 1024");
	if (!threads) {
		threads = sysconf(_SC_NPROCESSORS_ONLN);
		if (threads < 1)
			threads = 1;
	}
	/* OpenBLAS splits a product differently with more threads, and the
	 * sums round differently (seen: 2e-8 on the CNN's Dense); our own
	 * kernels give the same bits at any -j, so they alone thread */
	tfk_cpu_blas_threads(1);
	ro.threads = (int)threads;
	so.tag_set = tag_set;
	so.kind = TFK_SERVABLE_SAVEDMODEL;
	if (prof_open(&err))
		return tfk_cli_fail(&err);
	if (tfk_servable_open(&s, dir, &so, &err)) {
		prof_abandon();
		return tfk_cli_fail(&err);
	}
	sig = tfk_servable_find(s, signature_def, &err);
	if (!sig) {
		tfk_err_prefix(&err, "%s: tag-set %s", dir, tag_set);
		rc = tfk_cli_fail(&err);
		goto out;
	}
	/* a signature without inputs runs on none; any other needs one */
	if (!inputs_arg && !exprs_arg && !examples_arg && !records_arg &&
	    sig->n_inputs > 0)
		tfk_cli_usage_error("at least one of --inputs, --input_exprs, "
				    "--input_examples or --input_records is "
				    "needed (signature %s has %d input%s)",
				    sig->key, sig->n_inputs,
				    sig->n_inputs == 1 ? "" : "s");
	/* later options win for the same key, as in saved_model_cli */
	if ((inputs_arg && tfk_givens_add(&g, TFK_GIVEN_NPY, inputs_arg,
					  "--inputs", &err)) ||
	    (exprs_arg && tfk_givens_add(&g, TFK_GIVEN_EXPR, exprs_arg,
					 "--input_exprs", &err)) ||
	    (examples_arg && tfk_givens_add(&g, TFK_GIVEN_EXAMPLES,
					    examples_arg, "--input_examples",
					    &err)) ||
	    (records_arg && tfk_givens_add(&g, TFK_GIVEN_RECORDS, records_arg,
					   "--input_records", &err))) {
		rc = tfk_cli_fail(&err);
		goto out;
	}
	keys = tfk_calloc((size_t)g.n + 1, sizeof(*keys));
	in = tfk_calloc((size_t)g.n + 1, sizeof(*in));
	if (!keys || !in) {
		tfk_errf(&err, TFK_ENOMEM, "out of memory");
		rc = tfk_cli_fail(&err);
		goto out;
	}
	for (i = 0; i < g.n; i++) {
		struct tfk_given *it = &g.v[i];

		if (!it->key) {
			const char *k = only_string_input(sig);

			if (!k) {
				tfk_errf(&err, TFK_EINVAL, "--input_records: "
					 "%s: give KEY=FILE (the signature "
					 "does not have exactly one string "
					 "input)", it->value);
				rc = tfk_cli_fail(&err);
				goto out;
			}
			it->key = tfk_malloc(strlen(k) + 1);
			if (!it->key) {
				tfk_errf(&err, TFK_ENOMEM, "out of memory");
				rc = tfk_cli_fail(&err);
				goto out;
			}
			strcpy(it->key, k);
		}
		if (it->replaced)
			tfk_cli_warn("run: input key %s given by %s and %s; "
				     "the value from %s is used", it->key,
				     it->replaced, it->from, it->from);
	}
	for (i = 0; i < g.n; i++) {
		/* a records FILE without key and KEY=... for the same key */
		for (j = 0; j < i; j++)
			if (!strcmp(g.v[j].key, g.v[i].key))
				break;
		keys[i] = j < i ? NULL : g.v[i].key;
	}
	for (i = j = 0; i < g.n; i++)
		if (keys[i])
			keys[j++] = keys[i];
	n = j;
	if (tfk_runner_new(&r, s, sig, keys, n, &ro, &err)) {
		rc = tfk_cli_fail(&err);
		goto out;
	}
	/* inputs in the runner's order, converted and shape-checked */
	for (i = 0; i < n; i++) {
		struct tfk_given *it = NULL;

		for (j = 0; j < g.n; j++)
			if (!strcmp(g.v[j].key, keys[i]))
				it = &g.v[j];	/* the last one wins */
		if (tfk_sv_convert(&it->t, tfk_runner_input(r, i), &err)) {
			rc = tfk_cli_fail(&err);
			goto out;
		}
		in[i] = it->t;
	}
	got = tfk_calloc((size_t)tfk_runner_n_outputs(r) + 1, sizeof(*got));
	if (!got) {
		tfk_errf(&err, TFK_ENOMEM, "out of memory");
		rc = tfk_cli_fail(&err);
		goto out;
	}
	t0 = prof_step_begin(1, 1);
	rc = tfk_runner_run(r, in, got, &err);
	prof_step_end("predict", 1, t0);
	if (rc) {
		tfk_err_prefix(&err, "%s: signature %s", dir, sig->key);
		rc = tfk_cli_fail(&err);
		goto out;
	}
	if (outdir && tfk_mkdirs(outdir, &err)) {
		rc = tfk_cli_fail(&err);
		goto out;
	}
	for (j = 0; j < tfk_runner_n_outputs(r); j++)
		if (put_output(tfk_runner_output(r, j)->key, got[j], &out,
			       &err)) {
			rc = tfk_cli_fail(&err);
			goto out;
		}
out:
	if (fflush(stdout) && !rc) {
		tfk_cli_warn("stdout: write error");
		rc = 1;
	}
	if (!rc && prof_close(0, &err))
		rc = tfk_cli_fail(&err);
	else if (rc)
		prof_abandon();
	tfk_runner_free(r);
	tfk_servable_close(s);
	tfk_givens_release(&g);
	tfk_free(keys);
	tfk_free(in);
	tfk_free(got);
	tfk_buf_release(&out);
	return rc;
}

const struct tfk_subcmd model_run_sub = {
	"run", "run a signature on inputs given as literals, .npy "
	"files or tf.Examples", model_run_main
};
