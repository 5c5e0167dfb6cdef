/*
 * run.c - `tfk-lite run`: TFLite's signature runner with saved_model_cli's
 * input options and output text (as `tfk-model run`), through the model
 * API (model/servable.h): a float subgraph becomes a tfk_graph
 * (lib/model/tflgraph.c) built for the shapes actually fed (TFLite's
 * ResizeInputTensor, implicitly), run once by the executor; quantized
 * (int8, uint8) models go through lib/model/tflint8.c's interpreter over the
 * lib/kernels/int8 kernels. Inputs are read by model/given.h.
 * --profile/--trace (profile-opts.h) record the run as step 1 (op and
 * memory events of a float model's executor; an int8 model's
 * interpreter records the step alone).
 */
#include "sub.h"
#include "../profile-opts.h"

#include "format/tflite.h"
#include "io/npy.h"
#include "io/out.h"
#include "model/given.h"
#include "model/servable.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *signature_key, *exprs_arg, *inputs_arg, *outdir;

static const struct tfk_opt run_opts[] = {
	TFK_OPT_STR(0, "signature", &signature_key, "KEY", "the signature "
		    "to run (default: the model's only signature)"),
	TFK_OPT_STR(0, "input_exprs", &exprs_arg, "K=LITERAL;...",
		    "inputs as Python literals, e.g. x=[[1.0]]"),
	TFK_OPT_STR(0, "inputs", &inputs_arg, "K=FILE;...", "inputs from "
		    ".npy files or FILE.npz[NAME]"),
	TFK_OPT_STR(0, "outdir", &outdir, "DIR", "also write each output "
		    "as DIR/KEY.npy (an existing file is replaced)"),
	PROFILE_OPTS,
	TFK_OPT_END
};

static const struct tfk_cmd run_cmd = {
	"tfk-lite",
	"run [--signature KEY] [--input_exprs K=LITERAL;...] "
	"[--inputs K=FILE;...] [--outdir DIR] MODEL.tflite",
	"run a float, int8 or uint8 .tflite model on the given inputs",
	"tfk-lite run hello_world_float.tflite --input_exprs 'dense_input=[[1.0]]'",
};

/* "a, b, c" of the signature's input keys, for messages. */
static const char *key_list(const struct tfk_sv_signature *sig)
{
	static char buf[512];
	size_t k = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < sig->n_inputs && k < sizeof(buf); i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s",
				      i ? ", " : "", sig->inputs[i].key);
	return buf;
}

static void outname(char *dst, size_t cap, const char *dir, const char *key)
{
	size_t k = (size_t)snprintf(dst, cap, "%s/", dir), i;

	for (i = 0; key[i] && k + 5 < cap; i++, k++) {
		char ch = key[i];

		dst[k] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			 (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' ||
			 ch == '_' ? ch : '_';
	}
	snprintf(dst + k, cap - k, ".npy");
}

/* The signature to run: --signature's, or the model's only one;
 * several without --signature is a usage error. NULL with a message
 * printed for an unknown key. */
static const struct tfk_sv_signature *pick(const struct tfk_servable *s,
					   const char *path)
{
	const struct tfk_tflite *m = tfk_servable_tflite(s);
	int i, n = tfk_servable_n_signatures(s);

	if (signature_key) {
		for (i = 0; i < m->n_signatures; i++)
			if (!strcmp(tfk_servable_signature(s, i)->key,
				    signature_key))
				return tfk_servable_signature(s, i);
		tfk_cli_warn("%s: no signature '%s' (signatures: %d)", path,
			     signature_key, m->n_signatures);
		return NULL;
	}
	if (n > 1) {
		char list[512];
		size_t kk = 0;

		list[0] = 0;
		for (i = 0; i < n && kk < sizeof(list); i++)
			kk += (size_t)snprintf(list + kk, sizeof(list) - kk,
					       "%s%s", i ? ", " : "",
					       tfk_servable_signature(s, i)->key);
		tfk_cli_usage_error("%s has %d signatures (%s): choose one "
				    "with --signature", path, n, list);
	}
	return tfk_servable_signature(s, 0);
}

static int no_item(const char *k, size_t kl, const char *v, size_t vl,
		   void *ctx, struct tfk_err *err)
{
	return 0;
}

/* An option value that is not "KEY=VALUE;..." is a usage error here. */
static void check_items(const char *spec, const char *opt)
{
	struct tfk_err err;

	if (spec && tfk_given_split(spec, opt, 0, no_item, NULL, &err))
		tfk_cli_usage_error("%s", err.msg);
}

static int run_model(struct tfk_servable *s)
{
	const char *path = tfk_servable_path(s);
	const struct tfk_sv_signature *sig = pick(s, path);
	struct tfk_givens g = { NULL, 0, 0 };
	struct tfk_runner *r = NULL;
	struct tfk_tensor *in = NULL;
	const struct tfk_tensor **got = NULL;
	struct tfk_err err;
	uint64_t t0;
	int i, j, rc = 1;

	if (!sig)
		return 1;
	check_items(exprs_arg, "--input_exprs");
	check_items(inputs_arg, "--inputs");
	if ((exprs_arg && tfk_givens_add(&g, TFK_GIVEN_EXPR, exprs_arg,
					 "--input_exprs", &err)) ||
	    (inputs_arg && tfk_givens_add(&g, TFK_GIVEN_NPY, inputs_arg,
					  "--inputs", &err))) {
		rc = tfk_cli_fail(&err);
		goto out;
	}
	for (i = 0; i < g.n; i++) {
		for (j = 0; j < sig->n_inputs; j++)
			if (!strcmp(sig->inputs[j].key, g.v[i].key))
				break;
		/* a key the model lacks is a mismatch with the model, exit
		 * 1, as in tfk-model run (man page, EXIT STATUS) */
		if (j == sig->n_inputs) {
			tfk_cli_warn("%s: %s: no input '%s' (inputs: %s)", path,
				     g.v[i].from, g.v[i].key, key_list(sig));
			goto out;
		}
	}
	for (j = 0; j < sig->n_inputs; j++)
		if (!tfk_givens_find(&g, sig->inputs[j].key)) {
			tfk_cli_warn("%s: input '%s' is not given (inputs: %s)",
				     path, sig->inputs[j].key, key_list(sig));
			goto out;
		}
	in = tfk_calloc((size_t)sig->n_inputs + 1, sizeof(*in));
	got = tfk_calloc((size_t)sig->n_outputs + 1, sizeof(*got));
	if (!in || !got) {
		tfk_cli_warn("out of memory");
		goto out;
	}
	for (j = 0; j < sig->n_inputs; j++) {
		struct tfk_given *it = tfk_givens_find(&g, sig->inputs[j].key);

		if (tfk_sv_convert(&it->t, &sig->inputs[j], &err)) {
			tfk_err_prefix(&err, "%s", path);
			rc = tfk_cli_fail(&err);
			goto out;
		}
		in[j] = it->t;
	}
	if (tfk_runner_new(&r, s, sig, NULL, -1, NULL, &err)) {
		rc = tfk_cli_fail(&err);
		goto out;
	}
	t0 = prof_step_begin(1, 1);
	rc = tfk_runner_run(r, in, got, &err);
	prof_step_end("predict", 1, t0);
	if (rc) {
		tfk_err_prefix(&err, "%s", path);
		rc = tfk_cli_fail(&err);
		goto out;
	}
	for (i = 0; i < sig->n_outputs && !rc; i++) {
		const char *key = sig->outputs[i].key;
		struct tfk_buf b;

		tfk_buf_init(&b);
		if (tfk_npy_str(got[i], &b, &err)) {
			rc = tfk_cli_fail(&err);
		} else {
			printf("Result for output key %s:\n%.*s\n", key,
			       (int)b.len, (const char *)b.data);
		}
		tfk_buf_release(&b);
		if (!rc && outdir) {
			char p[4096];

			outname(p, sizeof(p), outdir, key);
			if (tfk_npy_write(p, got[i], &err))
				rc = tfk_cli_fail(&err);
		}
	}
out:
	tfk_runner_free(r);
	tfk_givens_release(&g);
	tfk_free(in);
	tfk_free(got);
	return rc;
}

static int lite_run_main(int argc, char **argv)
{
	struct tfk_servable_opts so = { NULL, TFK_SERVABLE_TFLITE };
	struct tfk_servable *s;
	struct tfk_err err;
	int n, rc;

	n = tfk_cli_parse(argc, argv, &run_cmd, run_opts);
	if (n != 1)
		tfk_cli_usage_error(n ? "one model at a time" :
				    "run needs a MODEL.tflite");
	if (!exprs_arg && !inputs_arg)
		tfk_cli_usage_error("run needs --input_exprs or --inputs");
	if (prof_open(&err))
		return tfk_cli_fail(&err);
	if (tfk_servable_open(&s, argv[0], &so, &err)) {
		prof_abandon();
		return tfk_cli_fail(&err);
	}
	lite_load_warnings(tfk_servable_path(s), tfk_servable_tflite(s));
	if (outdir && tfk_mkdirs(outdir, &err)) {
		tfk_servable_close(s);
		prof_abandon();
		return tfk_cli_fail(&err);
	}
	rc = run_model(s);
	tfk_servable_close(s);
	if (!rc && (fflush(stdout) || ferror(stdout))) {
		tfk_cli_warn("write error on stdout");
		rc = 1;
	}
	if (!rc && prof_close(0, &err))
		rc = tfk_cli_fail(&err);
	else if (rc)
		prof_abandon();
	return rc;
}

const struct tfk_subcmd lite_run_sub = {
	"run", "run a float, int8 or uint8 model on inputs given as "
	"literals or .npy files", lite_run_main
};
