/*
 * fuzz-spec.c - training specs (lib/nn/spec.h) on arbitrary bytes: the
 * loader, the fit/compile getters, --set overrides, dump, and the
 * input/label mapping of lib/nn/feed.h over two small fixed models (one
 * output; two outputs "a" and "b"), with compile.loss, loss_weights
 * (tfk_loss_parse_outputs) and metrics (tfk_trainer_new) read for
 * each.
 *
 * Beyond "no crash, no leak, no undefined behaviour": every refusal
 * names the spec file (or the --set) in its message; an accepted spec
 * dumps to text that parses back to an equal JSON tree; a failed --set
 * leaves the spec byte for byte as it was.
 *
 * FUZZ-SEEDS: examples/*.spec.json
 */
#include "graph/graph.h"
#include "nn/feed.h"
#include "nn/spec.h"
#include "nn/train.h"
#include "util/alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int named(const struct tfk_err *err, const char *what)
{
	return err->code == TFK_ENOMEM || strstr(err->msg, what) != NULL;
}

/* The feed's mapping checks, on a model with input_1 [?, 4] and one
 * [?, 3] output "out" (n_out 1) or outputs "a" [?, 3] and "b" [?, 3]
 * (n_out 2), for a sparse and a dense loss; then the spec's own
 * compile.loss, loss_weights and metrics on that model. */
static void feed(const struct tfk_spec *s, int n_out)
{
	static const struct tfk_loss_spec losses[2][2] = {
		{ { "sparse_categorical_crossentropy", 0, 0, 0 },
		  { "mean_squared_error", 0, 0, 0 } },
		{ { "mean_squared_error", 0, 0, 0 },
		  { "sparse_categorical_crossentropy", 0, 0, 0 } }
	};
	static const char *const names[2][2] = { { "out" }, { "a", "b" } };
	const int64_t in[2] = { -1, 4 }, out[2] = { -1, 3 };
	struct tfk_model_input mi;
	struct tfk_model_output mo[2];
	struct tfk_model m;
	struct tfk_feed *f;
	struct tfk_err err;
	struct tfk_port p;
	struct tfk_compile c;
	struct tfk_loss_spec ls[2];
	struct tfk_train_opts to = { 0 };
	struct tfk_trainer *tr;
	float lw[2];
	int i;

	memset(&m, 0, sizeof(m));
	memset(&mi, 0, sizeof(mi));
	memset(mo, 0, sizeof(mo));
	if (tfk_graph_new(&m.g, &err))
		return;
	mi.name = "input_1";
	mi.dtype = TFK_DT_FLOAT;
	mi.rank = 2;
	memcpy(mi.shape, in, sizeof(in));
	if (tfk_graph_placeholder(m.g, "input_1", TFK_DT_FLOAT, 2, in, &p,
				  &err)) {
		tfk_graph_free(m.g);
		return;
	}
	for (i = 0; i < n_out; i++) {
		if (tfk_graph_placeholder(m.g, names[n_out - 1][i],
					  TFK_DT_FLOAT, 2, out, &p, &err)) {
			tfk_graph_free(m.g);
			return;
		}
		mo[i].name = (char *)names[n_out - 1][i];
		mo[i].train = mo[i].infer = p;
	}
	m.n_inputs = 1;
	m.inputs = &mi;
	m.n_outputs = n_out;
	m.outputs = mo;
	for (i = 0; i < 2; i++) {
		struct tfk_feed_opts o = { n_out > 1 ? losses[0] :
					   &losses[0][i], 0, NULL, 0, NULL,
					   n_out };

		if (n_out > 1 && i)
			o.loss = losses[1];
		if (tfk_feed_new(&f, s, &m, &o, &err)) {
			if (!named(&err, "s.json"))
				abort();
			continue;
		}
		tfk_feed_free(f);
	}
	if (tfk_spec_compile(s, &c, &err) == 0) {
		if (tfk_loss_parse_outputs(c.loss, c.loss_path, c.loss_weights,
					   c.loss_weights_path, &m, ls, lw,
					   &err)) {
			if (!named(&err, "s.json: compile.loss"))
				abort();
		} else if (tfk_trainer_new(&tr, &m, ls, lw, c.metrics,
					   c.metrics_path, NULL, &to, &err)) {
			if (!named(&err, "s.json: compile.metrics"))
				abort();
		} else {
			tfk_trainer_free(tr);
		}
	}
	tfk_graph_free(m.g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const sets[] = {
		"fit.batch_size=64", "model.config.layers[0].config.units=3",
		"compile.optimizer=adam", "fit.callbacks[0]=1",
		"inputs.input_1={\"scale\":2}", "model=1"
	};
	struct tfk_spec *s, *s2;
	struct tfk_compile c;
	struct tfk_fit f;
	struct tfk_err err;
	char *d, *d2;
	size_t i;

	if (tfk_spec_parse(&s, "s.json", (const char *)data, size, &err)) {
		if (!named(&err, "s.json"))
			abort();
		return 0;
	}
	if (tfk_spec_fit(s, &f, &err) == 0)
		tfk_fit_release(&f);
	else if (!named(&err, "s.json: fit"))
		abort();
	if (tfk_spec_compile(s, &c, &err) && !named(&err, "s.json: compile"))
		abort();
	feed(s, 1);
	feed(s, 2);
	for (i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		d = tfk_spec_dump(s, 0);
		if (tfk_spec_set(s, sets[i], &err)) {
			if (!named(&err, "--set "))
				abort();
			d2 = tfk_spec_dump(s, 0);
			if (d && d2 && strcmp(d, d2))
				abort();	/* a failed set changed it */
			tfk_free(d2);
		}
		tfk_free(d);
	}
	d = tfk_spec_dump(s, 1);
	if (d) {
		if (tfk_spec_parse(&s2, "s.json", d, strlen(d), &err) == 0) {
			if (!json_equal(tfk_spec_json(s), tfk_spec_json(s2)))
				abort();
			tfk_spec_free(s2);
		} else if (err.code != TFK_ENOMEM) {
			abort();	/* our own dump must parse */
		}
		tfk_free(d);
	}
	tfk_spec_free(s);
	return 0;
}
