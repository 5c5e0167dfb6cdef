/*
 * fuzz-modelconfig.c - the text-format reader (util/textproto.h) and TF
 * Serving's model, monitoring and batching configs on it
 * (model/modelconfig.h, model/monitoring.h, model/batchconfig.h), on
 * arbitrary bytes.
 *
 * A refused text leaves a located message ("FILE:LINE:COL: ..." or
 * "FILE: ...") and nothing allocated; an accepted one holds the
 * invariants modelconfig.h promises (names and base paths non-empty,
 * names and labels free of '/' and ':', distinct names, num_versions at
 * least 1, a specific policy's labels among its versions), and its
 * policy applied to a list of versions wants no more than are given.
 * Every scalar of the tree goes through each typed read, so their
 * refusals are exercised on whatever the parser lets through.
 */
#include "model/batchconfig.h"
#include "model/modelconfig.h"
#include "model/monitoring.h"
#include "util/textproto.h"

#include <stdlib.h>
#include <string.h>

static void typed_reads(const struct tfk_tp_node *f)
{
	struct tfk_err err;
	const char *s;
	int64_t v;
	int b, i;

	if (f->is_msg) {
		for (i = 0; i < f->n_kids; i++)
			typed_reads(&f->kids[i]);
		return;
	}
	if (!f->value || f->value[f->value_len])
		abort();
	if (!tfk_tp_string(f, "f", &s, &err) && strlen(s) != f->value_len)
		abort();
	if (tfk_tp_int(f, "f", -5, 5, &v, &err) == 0 && (v < -5 || v > 5))
		abort();
	if (tfk_tp_bool(f, "f", &b, &err) == 0 && b != 0 && b != 1)
		abort();
}

static void check(const struct tfk_server_config *c)
{
	int64_t have[8] = { 9, 7, 5, 4, 3, 2, 1, 0 };
	int want[8], i, j;

	for (i = 0; i < c->n_models; i++) {
		const struct tfk_model_config *m = &c->models[i];

		if (!*m->name || !*m->base_path || strchr(m->name, '/') ||
		    strchr(m->name, ':') || m->num_versions < 1)
			abort();
		for (j = 0; j < i; j++)
			if (!strcmp(c->models[j].name, m->name))
				abort();
		for (j = 0; j < m->n_labels; j++)
			if (!*m->labels[j].label ||
			    strchr(m->labels[j].label, '/'))
				abort();
		if (tfk_model_config_wanted(m, have, 8, want) > 8)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tfk_server_config c;
	struct tfk_tp_node root;
	struct tfk_err err;

	if (tfk_tp_parse((const char *)data, size, "f", &root, &err) == 0) {
		typed_reads(&root);
		tfk_tp_free(&root);
	} else if (strncmp(err.msg, "f:", 2) || root.kids) {
		abort();
	}
	if (tfk_server_config_parse((const char *)data, size, "f", &c,
				    &err) == 0) {
		check(&c);
		tfk_server_config_free(&c);
	} else if (strncmp(err.msg, "f", 1) || c.models) {
		abort();
	}
	{
		struct tfk_monitoring_config mc;

		if (tfk_monitoring_config_parse((const char *)data, size, "f",
						&mc, &err) == 0) {
			if (mc.path[0] != '/' || (mc.prometheus != 0 &&
						  mc.prometheus != 1))
				abort();
		} else if (strncmp(err.msg, "f", 1)) {
			abort();
		}
	}
	{
		struct tfk_batch_config bc;
		int i;

		if (tfk_batch_config_parse((const char *)data, size, "f", &bc,
					   &err) == 0) {
			if (bc.max_batch_size < 1 || bc.n_allowed < 0 ||
			    bc.n_allowed > TFK_MAX_ALLOWED_BATCH_SIZES ||
			    (bc.n_allowed && bc.allowed[bc.n_allowed - 1] !=
			     bc.max_batch_size))
				abort();
			for (i = 1; i < bc.n_allowed; i++)
				if (bc.allowed[i] <= bc.allowed[i - 1])
					abort();
		} else if (strncmp(err.msg, "f", 1)) {
			abort();
		}
	}
	return 0;
}
