/*
 * fuzz-smrun.c - what `tfk-model run` does with a saved_model.pb and
 * feeds: import each signature (lib/model/import) and run it
 * (lib/graph/exec) on feeds of varied shapes and values, under work
 * budgets, so a valid but huge graph is refused, not a timeout.
 *
 * FUZZ-SEEDS: fixtures/savedmodel/matrix_half_plus_two/1/saved_model.pb
 * FUZZ-SEEDS: fixtures/savedmodel/half_plus_two_cpu_tf1/00000123/saved_model.pb
 * Seeds: tests/fuzz/seeds/fuzz-smrun/ (the hostile models of t1760,
 * tests/py/hostile.py, some with a feed header).
 *
 * Input: an optional feed header, then the saved_model.pb bytes.
 *   "FEED" n  then n feed specs: rank (byte % 5), rank dims (one byte
 *   each, 0..255), a value byte (float feeds get value/16 - 8, integer
 *   and bool feeds the byte, strings that many 'a's up to 15)
 * Without "FEED" the whole input is the .pb and every feed is ones of
 * the signature's shape (unknown dims 1), as fuzz-import does. Spec i
 * feeds signature input i; a spec's shape is used as given, so shapes
 * that do not fit the signature reach the executor's feed check.
 *
 * Budgets, set once: TFK_MAX_TENSOR_BYTES=1M (every tensor a Const,
 * checkpoint or inferred output may take), TFK_MAX_IMPORT_NODES=5000.
 * Invariants: an import or run that fails says why (a message); an
 * import that succeeds has a feed per signature input and an output
 * per signature output; a successful run fetches tensors whose byte
 * size matches their dtype and shape.
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

#define MAX_FEEDS 8
#define MAX_FEED_ELEMS 4096

struct spec {
	int rank;
	int64_t shape[4];
	uint8_t value;
};

static char prefix[512];

static void setup(void)
{
	const char *f = getenv("TFK_FIXTURES");

	if (prefix[0])
		return;
	snprintf(prefix, sizeof(prefix), "%s/savedmodel/half_plus_two_cpu_tf1"
		 "/00000123/variables/variables", f ? f : FIXTURES);
	setenv("TFK_MAX_TENSOR_BYTES", "1M", 1);
	setenv("TFK_MAX_IMPORT_NODES", "5000", 1);
}

/* Parse the feed header; returns the bytes it took (0: none). */
static size_t parse_specs(const uint8_t *d, size_t n, struct spec *sp,
			  int *n_sp)
{
	size_t o = 5;
	int i, j, k;

	*n_sp = 0;
	if (n < 5 || memcmp(d, "FEED", 4))
		return 0;
	k = d[4] % (MAX_FEEDS + 1);
	for (i = 0; i < k && o < n; i++) {
		sp[i].rank = d[o++] % 5;
		for (j = 0; j < sp[i].rank; j++)
			sp[i].shape[j] = o < n ? d[o++] : 1;
		sp[i].value = o < n ? d[o++] : 1;
		(*n_sp)++;
	}
	return o < n ? o : n;
}

static void fill(struct tfk_tensor *t, uint8_t v)
{
	int64_t i, n = tfk_tensor_numel(t);
	char a[16];

	memset(a, 'a', sizeof(a));
	for (i = 0; i < n; i++) {
		switch (t->dtype) {
		case TFK_DT_FLOAT:
			((float *)t->data)[i] = v / 16.0f - 8.0f;
			break;
		case TFK_DT_DOUBLE:
			((double *)t->data)[i] = v / 16.0 - 8.0;
			break;
		case TFK_DT_INT32:
			((int32_t *)t->data)[i] = v;
			break;
		case TFK_DT_INT64:
			((int64_t *)t->data)[i] = v;
			break;
		case TFK_DT_UINT8:
		case TFK_DT_INT8:
			((uint8_t *)t->data)[i] = v;
			break;
		case TFK_DT_BOOL:
			((uint8_t *)t->data)[i] = v & 1;
			break;
		case TFK_DT_STRING:
			if (tfk_tensor_set_str(t, i, a, v % 16, NULL))
				return;
			break;
		default:
			return;
		}
	}
}

static void run_it(struct tfk_import *imp, const struct spec *sp, int n_sp)
{
	const char *feeds[16], *fetches[16];
	struct tfk_tensor vals[16];
	const struct tfk_tensor *out[16];
	struct tfk_exec *x = NULL;
	struct tfk_err err;
	int i, j, nf = 0, rc;

	memset(&err, 0, sizeof(err));
	if (imp->n_feeds > 16 || imp->n_fetches > 16 || !imp->n_fetches)
		return;
	for (i = 0; i < imp->n_feeds; i++) {
		const struct tfk_import_feed *f = &imp->feeds[i];
		int64_t shape[TFK_MAX_RANK], cnt = 1;
		int r;

		if (i < n_sp) {
			r = sp[i].rank;
			memcpy(shape, sp[i].shape, sizeof(sp[i].shape));
		} else {
			r = f->rank < 0 ? 1 : f->rank;
			for (j = 0; j < r; j++)
				shape[j] = f->rank < 0 || f->shape[j] < 0 ?
					1 : f->shape[j];
		}
		for (j = 0; j < r; j++) {
			if (shape[j] > MAX_FEED_ELEMS)
				goto out;
			cnt *= shape[j];
			if (cnt > MAX_FEED_ELEMS)
				goto out;
		}
		if (tfk_tensor_init(&vals[nf], f->dtype, r, shape, &err))
			goto out;
		fill(&vals[nf], i < n_sp ? sp[i].value : 24);
		feeds[nf++] = f->node;
	}
	for (i = 0; i < imp->n_fetches; i++)
		fetches[i] = imp->fetches[i].key;
	rc = tfk_exec_new(&x, imp->g, feeds, nf, fetches, imp->n_fetches,
			  NULL, &err);
	if (!rc)
		rc = tfk_exec_run(x, vals, 0, out, &err);
	if (rc && !err.msg[0])
		abort();
	for (i = 0; !rc && i < imp->n_fetches; i++) {
		int64_t n;

		if (tfk_shape_numel(out[i]->rank, out[i]->shape,
				    tfk_dtype_size(out[i]->dtype), &n, NULL) ||
		    (size_t)n * tfk_dtype_size(out[i]->dtype) !=
		    out[i]->nbytes)
			abort();
	}
	tfk_exec_free(x);
out:
	for (i = 0; i < nf; i++)
		tfk_tensor_release(&vals[i]);
}

struct specs {
	const struct spec *sp;
	int n_sp;
};

static void run_one(struct tfk_import *imp, void *ctx)
{
	const struct specs *sc = ctx;

	run_it(imp, sc->sp, sc->n_sp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spec sp[MAX_FEEDS];
	struct specs sc;
	struct tfk_savedmodel *sm;
	struct tfk_err err;
	size_t h;
	int n_sp;

	setup();
	memset(&err, 0, sizeof(err));
	h = parse_specs(data, size, sp, &n_sp);
	if (tfk_savedmodel_parse(&sm, data + h, size - h, "fuzz", NULL, &err))
		return 0;
	sc.sp = sp;
	sc.n_sp = n_sp;
	each_signature(sm, prefix, run_one, &sc);
	tfk_savedmodel_close(sm);
	return 0;
}
