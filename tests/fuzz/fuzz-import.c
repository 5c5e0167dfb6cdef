/*
 * fuzz-import.c - the signature importer (lib/model/import) and the
 * executor on arbitrary saved_model.pb bytes.
 *
 * FUZZ-SEEDS: fixtures/savedmodel/half_plus_two_cpu_tf1/00000123/saved_model.pb
 * FUZZ-SEEDS: fixtures/savedmodel/half_plus_two_tf2_cpu/00000123/saved_model.pb
 * FUZZ-SEEDS: fixtures/savedmodel/matrix_half_plus_two/1/saved_model.pb
 * FUZZ-SEEDS: fixtures/savedmodel/rust_regression_tf1/saved_model.pb
 *
 * The bytes are parsed (tfk_savedmodel_parse, nothing on disk) and every
 * signature of every meta graph is imported with the TF1 fixture's
 * variables (so graphs that need variables get values or a clear
 * error). A graph that imports is planned and run with every fed input
 * a tensor of ones of its shape (unknown dims 1; string inputs empty).
 * Mutated graphs bring cycles, self-calling functions, bad input names,
 * wrong attr kinds, absurd shapes: the importer must refuse them with a
 * message, never crash, loop or leak. Invariant: an import that
 * succeeds has one feed per signature input and a graph output for
 * each signature output.
 */
#include "graph/exec.h"
#include "model/import.h"
#include "each-signature.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FIXTURES
#define FIXTURES "../shared/fixtures"
#endif

static char prefix[512];

static void setup(void)
{
	const char *f = getenv("TFK_FIXTURES");

	if (prefix[0])
		return;
	snprintf(prefix, sizeof(prefix), "%s/savedmodel/half_plus_two_cpu_tf1"
		 "/00000123/variables/variables", f ? f : FIXTURES);
}

static void run_it(struct tfk_import *imp)
{
	const char *feeds[16], *fetches[16];
	struct tfk_tensor vals[16];
	const struct tfk_tensor *out[16];
	struct tfk_exec *x = NULL;
	struct tfk_err err;
	int i, j, nf = 0;

	if (imp->n_feeds > 16 || imp->n_fetches > 16 || !imp->n_fetches)
		return;
	for (i = 0; i < imp->n_feeds; i++) {
		const struct tfk_import_feed *f = &imp->feeds[i];
		int64_t shape[TFK_MAX_RANK];
		int r = f->rank < 0 ? 1 : f->rank, ok = 1;

		for (j = 0; j < r; j++) {
			shape[j] = f->rank < 0 || f->shape[j] < 0 ? 1 :
				f->shape[j];
			ok &= shape[j] <= 64;
		}
		if (!ok || tfk_tensor_init(&vals[nf], f->dtype, r, shape, &err))
			goto out;
		if (f->dtype == TFK_DT_FLOAT)
			for (j = 0; j < tfk_tensor_numel(&vals[nf]); j++)
				((float *)vals[nf].data)[j] = 1.0f;
		feeds[nf++] = f->node;
	}
	for (i = 0; i < imp->n_fetches; i++)
		fetches[i] = imp->fetches[i].key;
	if (!tfk_exec_new(&x, imp->g, feeds, nf, fetches, imp->n_fetches,
			  NULL, &err))
		tfk_exec_run(x, vals, 0, out, &err);
	tfk_exec_free(x);
out:
	for (i = 0; i < nf; i++)
		tfk_tensor_release(&vals[i]);
}

static void run_one(struct tfk_import *imp, void *ctx)
{
	run_it(imp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tfk_savedmodel *sm;
	struct tfk_err err;

	setup();
	if (tfk_savedmodel_parse(&sm, data, size, "fuzz", NULL, &err))
		return 0;
	each_signature(sm, prefix, run_one, NULL);
	tfk_savedmodel_close(sm);
	return 0;
}
