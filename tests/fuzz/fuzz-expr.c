/*
 * fuzz-expr.c - the tfk-filter expression parser and evaluator on
 * arbitrary text.
 *
 * Beyond "no crash, no leak, no undefined behaviour": a refused
 * expression has a located message ("expression:LINE:COL: ...") whose
 * offset lies inside the text; an accepted one evaluates, against a few
 * Examples (every kind, lists, empty and kind-less features, NaN, int64
 * extremes), to 0, 1 or a located TFK_EINVAL, and gives the same answer
 * twice (it is a pure function of the record, seed and position).
 *
 * Inputs holding '{' or more than 12 '+' are skipped: glibc's regcomp
 * takes exponential time and memory on nested bounded repetitions
 * ("(a{999}){999}") and on stacked '+' ("a+++...", each '+' copies what
 * it repeats: 51 of them took 2 GB), which is the C library's behaviour,
 * not ours, and would only drown the run in timeouts.
 */
#include "data/expr.h"
#include "example/example.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N_EX 3

static struct tfk_example ex[N_EX];
static uint8_t *rec[N_EX];

static void build(void)
{
	struct tfk_example_builder b;
	struct tfk_err err;
	const uint8_t *sv[3] = { (const uint8_t *)"cat", (const uint8_t *)"",
				 (const uint8_t *)"a\0b" };
	size_t sl[3] = { 3, 0, 3 }, n;
	const uint8_t *p;
	int k;

	tfk_exb_init(&b);
	for (k = 0; k < N_EX; k++) {
		tfk_exb_reset(&b);
		if (k == 0) {
			tfk_exb_add_int64s(&b, "a", (int64_t[]){ 3 }, 1);
			tfk_exb_add_int64s(&b, "i", (int64_t[]){ INT64_MIN }, 1);
			tfk_exb_add_floats(&b, "x", (float[]){ 0.5f }, 1);
			tfk_exb_add_bytes(&b, "s", sv, sl, 1);
			tfk_exb_add_int64s(&b, "l", (int64_t[]){ 1, -2, 3 }, 3);
		} else if (k == 1) {
			tfk_exb_add_floats(&b, "a", (float[]){ NAN, INFINITY },
					   2);
			tfk_exb_add_int64s(&b, "i", (int64_t[]){ INT64_MAX }, 1);
			tfk_exb_add_bytes(&b, "x", sv, sl, 3);
			tfk_exb_add_none(&b, "s");
			tfk_exb_add_int64s(&b, "l", NULL, 0);
			tfk_exb_add_floats(&b, "f", (float[]){ -0.0f }, 1);
		}
		/* k == 2: the empty Example */
		if (tfk_exb_finish(&b, &p, &n, &err))
			abort();
		rec[k] = malloc(n ? n : 1);
		memcpy(rec[k], p, n);
		tfk_example_init(&ex[k]);
		if (tfk_example_parse(&ex[k], rec[k], n, &err))
			abort();
	}
	tfk_exb_release(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int built;
	struct tfk_expr *e;
	struct tfk_err err;
	size_t off = (size_t)-1, len;
	char *src;
	int k, rc, plus;

	if (!built) {
		build();
		built = 1;
	}
	if (size > 4096 || memchr(data, '{', size))
		return 0;
	for (k = 0, plus = 0; k < (int)size; k++)
		plus += data[k] == '+';
	if (plus > 12)
		return 0;
	src = malloc(size + 1);
	memcpy(src, data, size);
	src[size] = 0;
	len = strlen(src);
	rc = tfk_expr_parse(&e, src, &off, &err);
	if (rc) {
		if (rc != TFK_EINVAL || e != NULL || off > len ||
		    strncmp(err.msg, "expression:", 11))
			abort();
		free(src);
		return 0;
	}
	tfk_expr_set_seed(e, size);
	for (k = 0; k < N_EX; k++) {
		int r1 = tfk_expr_eval(e, &ex[k], (uint64_t)k, &err);
		int r2 = tfk_expr_eval(e, &ex[k], (uint64_t)k, &err);

		if (r1 != r2 || r1 > 1 || (r1 < 0 && (r1 != TFK_EINVAL ||
						     !err.msg[0])))
			abort();
	}
	tfk_expr_free(e);
	free(src);
	return 0;
}
