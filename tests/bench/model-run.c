/*
 * model-run.c - `tfk-model run` in a loop, for bench-model-run.sh: load
 * a SavedModel, import a signature, feed ones of the signature's shape
 * (unknown dims = the batch, default 1), run repeatedly.
 *
 *   model-run [-t SIG] [-b BATCH] [-s SECONDS] [-j THREADS] DIR
 *
 * Prints "LATENCY_US LOAD_MS RUNS": the mean time of one run (exec_run
 * on a planned executor, what a server loop pays per request) and the
 * time from opening DIR to the end of the first run (parse
 * saved_model.pb, read variables, import, plan, run once).
 */
#include "graph/exec.h"
#include "model/import.h"
#include "model/savedmodel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	const char *sig_key = "serving_default", *fetch;
	struct tfk_exec_opts eo = { NULL, 0, 1 };
	struct tfk_savedmodel *sm;
	const struct tfk_signature *sig;
	struct tfk_import *imp;
	struct tfk_exec *x;
	struct tfk_tensor in;
	const struct tfk_tensor *out;
	struct tfk_err err;
	double secs = 2, t0, t1, load;
	long batch = 1, runs = 0;
	int64_t shape[TFK_MAX_RANK];
	int c, d, k;

	while ((c = getopt(argc, argv, "t:b:s:j:")) != -1)
		switch (c) {
		case 't': sig_key = optarg; break;
		case 'b': batch = atol(optarg); break;
		case 's': secs = atof(optarg); break;
		case 'j': eo.threads = atoi(optarg); break;
		default: return 2;
		}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: model-run [-t SIG] [-b N] [-s SECS] "
			"[-j THREADS] DIR\n");
		return 2;
	}
	t0 = now();
	if (tfk_savedmodel_open(&sm, argv[optind], &err))
		goto fail;
	k = tfk_savedmodel_find_tags(sm, "serve", &err);
	if (k < 0)
		goto fail;
	sig = tfk_savedmodel_signature(&sm->meta_graphs[k], sig_key, &err);
	if (!sig || tfk_import_signature(&imp, &sm->meta_graphs[k], sig,
					 sm->variables_prefix, &err))
		goto fail;
	if (imp->n_feeds != 1 || imp->feeds[0].rank < 0 ||
	    imp->feeds[0].dtype != TFK_DT_FLOAT) {
		fprintf(stderr, "model-run: needs one float input of known "
			"rank\n");
		return 1;
	}
	for (d = 0; d < imp->feeds[0].rank; d++)
		shape[d] = imp->feeds[0].shape[d] < 0 ? batch :
			imp->feeds[0].shape[d];
	if (tfk_tensor_init(&in, TFK_DT_FLOAT, imp->feeds[0].rank, shape,
			    &err))
		goto fail;
	for (d = 0; d < tfk_tensor_numel(&in); d++)
		((float *)in.data)[d] = 1.0f;
	fetch = imp->fetches[0].key;
	if (tfk_exec_new(&x, imp->g, &imp->feeds[0].node, 1, &fetch, 1, &eo,
			 &err) || tfk_exec_run(x, &in, 0, &out, &err))
		goto fail;
	load = now() - t0;
	for (k = 0; k < 100; k++)	/* warm up */
		tfk_exec_run(x, &in, 0, &out, &err);
	t0 = now();
	do {
		for (k = 0; k < 100; k++)
			if (tfk_exec_run(x, &in, 0, &out, &err))
				goto fail;
		runs += 100;
		t1 = now();
	} while (t1 - t0 < secs);
	printf("%.3f %.3f %ld\n", (t1 - t0) / runs * 1e6, load * 1e3, runs);
	tfk_exec_free(x);
	tfk_tensor_release(&in);
	tfk_import_free(imp);
	tfk_savedmodel_close(sm);
	return 0;
fail:
	fprintf(stderr, "model-run: %s\n", err.msg);
	return 1;
}
