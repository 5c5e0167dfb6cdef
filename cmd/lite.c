/*
 * tfk-lite: inspect and run TensorFlow Lite models (.tflite).
 *
 * `show` prints what a .tflite file holds: schema version, description,
 * min_runtime_version, the size of each part of the file (constant
 * buffers, metadata, FlatBuffer structure), every subgraph with its
 * inputs, outputs, tensors (name, type, shape and shape_signature,
 * buffer, quantization) and operators (TFLite builtin names with their
 * BuiltinOperator numbers, version, inputs, outputs, decoded builtin
 * options), the signatures and the metadata entries. `--json` gives the
 * same facts as one JSON object. TensorFlow's nearest equivalents are
 * tf.lite.experimental.Analyzer.analyze (text for people) and flatc
 * --json with schema.fbs (every field, raw): this sits between, and
 * needs neither Python nor the schema at run time.
 *
 * `run` (cmd/lite/run.c) is TFLite's signature runner with
 * saved_model_cli's input options and output text (as `tfk-model run`).
 *
 * The file is verified whole before anything is used (lib/model/
 * tflite.c): a corrupt or truncated file is one error naming the file
 * and the place, exit 1, and nothing on stdout.
 *
 * `bench` (cmd/lite/bench.c) times loading and invoking a model in a
 * loop, as `tfk-model bench` does for a SavedModel; `convert`
 * (cmd/lite/convert.c) writes one from a SavedModel. This file holds
 * `show` and dispatches.
 *
 * Each subcommand has its own option table, so its --help lists its
 * options; the top-level --help lists the commands (scripts/check-man
 * reads both).
 */
#include "graph/exec.h"
#include "graph/graph.h"
#include "io/npy.h"
#include "io/out.h"
#include "model/lite.h"
#include "lite/sub.h"
#include "util/buf.h"
#include "util/cli.h"

#include <jansson.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct tfk_cmd top_cmd = {
	"tfk-lite",
	"COMMAND [options] MODEL.tflite",
	"inspect and run TensorFlow Lite models",
	"tfk-lite show model.tflite",
};

/* show ----------------------------------------------------------------- */

static int json;

static const struct tfk_opt show_opts[] = {
	TFK_OPT_FLAG(0, "json", &json, "print one JSON object instead of "
		     "text"),
	TFK_OPT_END
};

static const struct tfk_cmd show_cmd = {
	"tfk-lite",
	"show [--json] MODEL.tflite",
	"print the subgraphs, tensors, operators, signatures, metadata and "
	"section sizes of a .tflite model",
	"tfk-lite show --json model.tflite | jq '.subgraphs[0].operators'",
};

/* s with control bytes and backslashes escaped (\xNN, \\), for
 * names from the file in text output; one of four rotating buffers. */
static const char *esc(const char *s)
{
	static char bufs[4][4096];
	static int k;
	char *b = bufs[k++ & 3];
	size_t n = 0;

	for (; s && *s && n + 8 < sizeof(bufs[0]); s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch < 0x20 || ch == 0x7f || ch == '\\')
			n += (size_t)snprintf(b + n, 8, ch == '\\' ? "\\\\" :
					      "\\x%02x", ch);
		else
			b[n++] = (char)ch;
	}
	b[n] = 0;
	return b;
}

/* "FULLY_CONNECTED", or "CUSTOM(name)" / "UNKNOWN(300)". */
static const char *op_label(const struct tfk_tflite *m, uint32_t idx,
			    char *buf, size_t cap)
{
	const struct tfk_tfl_opcode *c = &m->opcodes[idx];
	const char *nm = tfk_tfl_op_name(c->builtin_code);

	if (c->builtin_code == TFK_TFL_CUSTOM && c->custom_code)
		snprintf(buf, cap, "CUSTOM(%s)", c->custom_code);
	else if (nm)
		snprintf(buf, cap, "%s", nm);
	else
		snprintf(buf, cap, "UNKNOWN(%d)", c->builtin_code);
	return buf;
}

static void print_ints(const int32_t *v, int n)
{
	int i;

	putchar('[');
	for (i = 0; i < n; i++)
		printf("%s%d", i ? ", " : "", v[i]);
	putchar(']');
}

static const char *tname(const struct tfk_tfl_subgraph *s, int32_t t)
{
	return t >= 0 && t < s->n_tensors ? s->tensors[t].name : "";
}

static void print_io(const char *what, const struct tfk_tfl_subgraph *s,
		     const int32_t *v, int n)
{
	int i;

	printf("  %s:", what);
	if (!n)
		printf(" none");
	for (i = 0; i < n; i++)
		printf("%s %d '%s'", i ? "," : "", v[i], esc(tname(s, v[i])));
	putchar('\n');
}

/* Up to 4 values, then "... (N)". */
static void print_floats(const char *name, const float *v, int n)
{
	int i;

	printf(" %s ", name);
	if (n != 1)
		putchar('[');
	for (i = 0; i < n && i < 4; i++)
		printf("%s%.9g", i ? ", " : "", (double)v[i]);
	if (n > 4)
		printf(", ... (%d)", n);
	if (n != 1)
		putchar(']');
}

static void print_quant(const struct tfk_tfl_tensor *x)
{
	const struct tfk_tfl_quant *q = &x->quant;
	int i;

	if (!x->has_quant || (!q->n_scale && !q->n_min))
		return;
	printf(" quant");
	if (q->n_scale) {
		print_floats("scale", q->scale, q->n_scale);
		printf(" zero_point ");
		if (q->n_zero_point != 1)
			putchar('[');
		for (i = 0; i < q->n_zero_point && i < 4; i++)
			printf("%s%" PRId64, i ? ", " : "", q->zero_point[i]);
		if (q->n_zero_point > 4)
			printf(", ... (%d)", q->n_zero_point);
		if (q->n_zero_point != 1)
			putchar(']');
		if (q->n_scale > 1)
			printf(" quantized_dimension %d",
			       q->quantized_dimension);
	}
	if (q->n_min) {
		print_floats("min", q->min, q->n_min);
		print_floats("max", q->max, q->n_max);
	}
}

static int show_text(const char *path, const struct tfk_tflite *m)
{
	struct tfk_tflite_sizes sz;
	struct tfk_err err;
	char buf[256], rt[64];
	int i, j, k;

	tfk_tflite_sizes(m, &sz);
	printf("%s: TFLite schema version %u\n", path, m->version);
	if (m->description)
		printf("description: %s\n", esc(m->description));
	if (!tfk_tflite_min_runtime(m, rt, sizeof(rt)))
		printf("min_runtime_version: %s\n", esc(rt));
	printf("size: %" PRIu64 " bytes: buffers %" PRIu64 ", metadata %"
	       PRIu64 ", structure %" PRIu64, sz.total, sz.buffers,
	       sz.metadata, sz.structure);
	if (sz.external)
		printf(" (%" PRIu64 " buffer bytes after the flatbuffer)",
		       sz.external);
	printf("\noperator codes: %d, buffers: %d\n", m->n_opcodes,
	       m->n_buffers);
	for (i = 0; i < m->n_subgraphs; i++) {
		const struct tfk_tfl_subgraph *s = &m->subgraphs[i];

		printf("\nsubgraph %d '%s': %d tensors, %d operators\n", i,
		       esc(s->name), s->n_tensors, s->n_ops);
		print_io("inputs", s, s->inputs, s->n_inputs);
		print_io("outputs", s, s->outputs, s->n_outputs);
		printf("  tensors:\n");
		for (j = 0; j < s->n_tensors; j++) {
			const struct tfk_tfl_tensor *x = &s->tensors[j];

			printf("    %d '%s' %s %s", j, esc(x->name),
			       tfk_tfl_type_name(x->type),
			       tfk_shape_str(x->rank, x->shape, buf,
					     sizeof(buf)));
			if (x->has_shape_signature &&
			    !tfk_shape_equal(x->rank, x->shape, x->rank,
					     x->shape_signature))
				printf(" signature %s",
				       tfk_shape_str(x->rank,
						     x->shape_signature, buf,
						     sizeof(buf)));
			if (x->buffer && m->buffers[x->buffer].size)
				printf(" buffer %u (%" PRIu64 " bytes)",
				       x->buffer, m->buffers[x->buffer].size);
			if (x->is_variable)
				printf(" variable");
			if (x->is_sparse)
				printf(" sparse");
			print_quant(x);
			putchar('\n');
		}
		printf("  operators:\n");
		for (j = 0; j < s->n_ops; j++) {
			const struct tfk_tfl_op *o = &s->ops[j];
			const struct tfk_tfl_opcode *c =
				&m->opcodes[o->opcode_index];
			const char *fname;
			char val[256];
			int kind, rc;

			printf("    %d %s (%d) v%d inputs ", j,
			       esc(op_label(m, o->opcode_index, buf,
					    sizeof(buf))),
			       c->builtin_code, c->version);
			print_ints(o->inputs, o->n_inputs);
			printf(" outputs ");
			print_ints(o->outputs, o->n_outputs);
			for (k = 0; (rc = tfk_tflite_option(o, k, &fname, val,
					sizeof(val), &kind, &err)) == 1; k++)
				printf(" %s=%s", fname, val);
			if (rc < 0) {
				putchar('\n');
				tfk_err_prefix(&err, "%s: subgraphs[%d]: "
					       "operators[%d]", path, i, j);
				return tfk_cli_fail(&err);
			}
			if (o->custom_options_size)
				printf(" custom_options %u bytes",
				       o->custom_options_size);
			putchar('\n');
		}
	}
	if (m->n_signatures)
		printf("\nsignatures:\n");
	for (i = 0; i < m->n_signatures; i++) {
		const struct tfk_tfl_signature *g = &m->signatures[i];
		const struct tfk_tfl_subgraph *s =
			&m->subgraphs[g->subgraph_index];

		printf("  '%s': subgraph %u\n", esc(g->key),
		       g->subgraph_index);
		for (j = 0; j < g->n_inputs; j++)
			printf("    input '%s': tensor %u '%s'\n",
			       esc(g->inputs[j].name),
			       g->inputs[j].tensor_index,
			       esc(tname(s, (int32_t)
					 g->inputs[j].tensor_index)));
		for (j = 0; j < g->n_outputs; j++)
			printf("    output '%s': tensor %u '%s'\n",
			       esc(g->outputs[j].name),
			       g->outputs[j].tensor_index,
			       esc(tname(s, (int32_t)
					 g->outputs[j].tensor_index)));
	}
	if (m->n_metadata)
		printf("\nmetadata:\n");
	for (i = 0; i < m->n_metadata; i++)
		printf("  '%s': buffer %u (%" PRIu64 " bytes)\n",
		       esc(m->metadata[i].name), m->metadata[i].buffer,
		       m->buffers[m->metadata[i].buffer].size);
	return 0;
}

/* A JSON string of s; bytes that are not valid UTF-8 (names in a
 * hostile or broken file) become '?', so the key is never lost. */
static json_t *jstr(const char *s)
{
	json_t *j = json_string(s);
	char *c;
	size_t i;

	if (j || !s)
		return j ? j : json_null();
	c = strdup(s);
	if (!c)
		return json_null();
	for (i = 0; c[i]; i++)
		if ((unsigned char)c[i] >= 0x80)
			c[i] = '?';
	j = json_string(c);
	free(c);
	return j ? j : json_null();
}

static json_t *ints_json(const int32_t *v, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

static json_t *shape_json(const int64_t *v, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

static json_t *floats_json(const float *v, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_real(v[i]));
	return a;
}

static json_t *tensor_json(const struct tfk_tflite *m,
			   const struct tfk_tfl_tensor *x)
{
	json_t *o = json_object();
	const struct tfk_tfl_quant *q = &x->quant;

	json_object_set_new(o, "name", jstr(x->name));
	json_object_set_new(o, "type", jstr(tfk_tfl_type_name(x->type)));
	json_object_set_new(o, "shape", shape_json(x->shape, x->rank));
	if (x->has_shape_signature)
		json_object_set_new(o, "shape_signature",
				    shape_json(x->shape_signature, x->rank));
	json_object_set_new(o, "buffer", json_integer(x->buffer));
	json_object_set_new(o, "buffer_bytes", json_integer(
		m->n_buffers ? (json_int_t)m->buffers[x->buffer].size : 0));
	if (x->is_variable)
		json_object_set_new(o, "is_variable", json_true());
	if (x->is_sparse)
		json_object_set_new(o, "sparse", json_true());
	if (x->has_quant) {
		json_t *qo = json_object(), *zp = json_array();
		int i;

		json_object_set_new(qo, "scale", floats_json(q->scale,
							     q->n_scale));
		for (i = 0; i < q->n_zero_point; i++)
			json_array_append_new(zp,
					      json_integer(q->zero_point[i]));
		json_object_set_new(qo, "zero_point", zp);
		json_object_set_new(qo, "quantized_dimension",
				    json_integer(q->quantized_dimension));
		if (q->n_min) {
			json_object_set_new(qo, "min",
					    floats_json(q->min, q->n_min));
			json_object_set_new(qo, "max",
					    floats_json(q->max, q->n_max));
		}
		json_object_set_new(o, "quantization", qo);
	}
	return o;
}

static json_t *op_json(const struct tfk_tflite *m, const struct tfk_tfl_op *o,
		       struct tfk_err *err, int *bad)
{
	json_t *j = json_object(), *opts = json_object();
	const struct tfk_tfl_opcode *c = &m->opcodes[o->opcode_index];
	const char *fname, *nm = tfk_tfl_options_name(o->options_type);
	char val[256], buf[256];
	int k, kind, rc;

	json_object_set_new(j, "opcode_index", json_integer(o->opcode_index));
	json_object_set_new(j, "op", jstr(op_label(m, o->opcode_index,
							  buf, sizeof(buf))));
	json_object_set_new(j, "builtin_code", json_integer(c->builtin_code));
	json_object_set_new(j, "version", json_integer(c->version));
	json_object_set_new(j, "inputs", ints_json(o->inputs, o->n_inputs));
	json_object_set_new(j, "outputs", ints_json(o->outputs, o->n_outputs));
	if (o->n_intermediates)
		json_object_set_new(j, "intermediates",
				    ints_json(o->intermediates,
					      o->n_intermediates));
	if (nm)
		json_object_set_new(j, "options_type", jstr(nm));
	for (k = 0; (rc = tfk_tflite_option(o, k, &fname, val, sizeof(val),
					    &kind, err)) == 1; k++) {
		json_t *v;

		if (kind == 'i')
			v = json_integer(strtoll(val, NULL, 10));
		else if (kind == 'f')
			v = json_real((float)strtod(val, NULL));
		else if (kind == 'b')
			v = json_boolean(!strcmp(val, "true"));
		else if (kind == 'v')
			v = json_loads(val, 0, NULL);
		else
			v = jstr(val);
		json_object_set_new(opts, fname, v ? v : json_null());
	}
	if (rc < 0)
		*bad = 1;
	json_object_set_new(j, "options", opts);
	if (o->custom_options_size)
		json_object_set_new(j, "custom_options_bytes",
				    json_integer(o->custom_options_size));
	return j;
}

static json_t *tmap_json(const struct tfk_tfl_tensormap *v, int n)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < n; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "name", jstr(v[i].name));
		json_object_set_new(o, "tensor_index",
				    json_integer(v[i].tensor_index));
		json_array_append_new(a, o);
	}
	return a;
}

static int show_json(const char *path, const struct tfk_tflite *m)
{
	struct tfk_tflite_sizes sz;
	struct tfk_err err;
	json_t *root = json_object(), *a, *so;
	char rt[64];
	int i, j, bad = 0;

	tfk_tflite_sizes(m, &sz);
	json_object_set_new(root, "file", jstr(path));
	json_object_set_new(root, "version", json_integer(m->version));
	json_object_set_new(root, "description", m->description ?
			    jstr(m->description) : json_null());
	json_object_set_new(root, "min_runtime_version",
			    tfk_tflite_min_runtime(m, rt, sizeof(rt)) ?
			    json_null() : jstr(rt));
	so = json_object();
	json_object_set_new(so, "total", json_integer((json_int_t)sz.total));
	json_object_set_new(so, "buffers",
			    json_integer((json_int_t)sz.buffers));
	json_object_set_new(so, "metadata",
			    json_integer((json_int_t)sz.metadata));
	json_object_set_new(so, "structure",
			    json_integer((json_int_t)sz.structure));
	json_object_set_new(so, "external",
			    json_integer((json_int_t)sz.external));
	json_object_set_new(root, "sizes", so);
	a = json_array();
	for (i = 0; i < m->n_opcodes; i++) {
		const struct tfk_tfl_opcode *c = &m->opcodes[i];
		json_t *o = json_object();
		const char *nm = tfk_tfl_op_name(c->builtin_code);

		json_object_set_new(o, "builtin_code",
				    json_integer(c->builtin_code));
		json_object_set_new(o, "name", nm ? jstr(nm)
					       : json_null());
		json_object_set_new(o, "deprecated_builtin_code",
				    json_integer(c->deprecated_builtin_code));
		json_object_set_new(o, "version", json_integer(c->version));
		if (c->custom_code)
			json_object_set_new(o, "custom_code",
					    jstr(c->custom_code));
		json_array_append_new(a, o);
	}
	json_object_set_new(root, "operator_codes", a);
	a = json_array();
	for (i = 0; i < m->n_subgraphs; i++) {
		const struct tfk_tfl_subgraph *s = &m->subgraphs[i];
		json_t *o = json_object(), *t = json_array(), *ops = json_array();

		json_object_set_new(o, "name", jstr(s->name));
		json_object_set_new(o, "inputs", ints_json(s->inputs,
							   s->n_inputs));
		json_object_set_new(o, "outputs", ints_json(s->outputs,
							    s->n_outputs));
		for (j = 0; j < s->n_tensors; j++)
			json_array_append_new(t, tensor_json(m,
							     &s->tensors[j]));
		for (j = 0; j < s->n_ops && !bad; j++) {
			json_array_append_new(ops, op_json(m, &s->ops[j], &err,
							   &bad));
			if (bad)
				tfk_err_prefix(&err, "%s: subgraphs[%d]: "
					       "operators[%d]", path, i, j);
		}
		json_object_set_new(o, "tensors", t);
		json_object_set_new(o, "operators", ops);
		json_array_append_new(a, o);
	}
	json_object_set_new(root, "subgraphs", a);
	a = json_array();
	for (i = 0; i < m->n_signatures; i++) {
		const struct tfk_tfl_signature *g = &m->signatures[i];
		json_t *o = json_object();

		json_object_set_new(o, "signature_key", jstr(g->key));
		json_object_set_new(o, "subgraph_index",
				    json_integer(g->subgraph_index));
		json_object_set_new(o, "inputs", tmap_json(g->inputs,
							   g->n_inputs));
		json_object_set_new(o, "outputs", tmap_json(g->outputs,
							    g->n_outputs));
		json_array_append_new(a, o);
	}
	json_object_set_new(root, "signature_defs", a);
	a = json_array();
	for (i = 0; i < m->n_metadata; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "name",
				    jstr(m->metadata[i].name));
		json_object_set_new(o, "buffer",
				    json_integer(m->metadata[i].buffer));
		json_object_set_new(o, "bytes", json_integer((json_int_t)
			m->buffers[m->metadata[i].buffer].size));
		json_array_append_new(a, o);
	}
	json_object_set_new(root, "metadata", a);
	if (bad) {
		json_decref(root);
		return tfk_cli_fail(&err);
	}
	json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
		   JSON_REAL_PRECISION(17));
	putchar('\n');
	json_decref(root);
	return 0;
}

void lite_load_warnings(const char *path, const struct tfk_tflite *m)
{
	int i;

	for (i = 0; m && i < m->n_warnings; i++)
		tfk_cli_warn("%s: warning: %s", path, m->warnings[i]);
}

static int show_main(int argc, char **argv)
{
	struct tfk_tflite m;
	struct tfk_err err;
	int n, rc;

	n = tfk_cli_parse(argc, argv, &show_cmd, show_opts);
	if (n != 1)
		tfk_cli_usage_error(n ? "one model at a time" :
				    "show needs a MODEL.tflite");
	if (tfk_tflite_load_file(&m, argv[0], &err))
		return tfk_cli_fail(&err);
	{
		const char *shown = strcmp(argv[0], "-") ? argv[0] : "<stdin>";

		lite_load_warnings(shown, &m);

		rc = json ? show_json(shown, &m) : show_text(shown, &m);
	}
	tfk_tflite_release(&m);
	if (!rc && (fflush(stdout) || ferror(stdout))) {
		tfk_cli_warn("write error on stdout");
		rc = 1;
	}
	return rc;
}

static const struct tfk_subcmd show_sub = {
	"show", "subgraphs, tensors, operators, signatures, "
	"metadata and sizes of a model", show_main
};

int main(int argc, char **argv)
{
	static const struct tfk_subcmd *const subs[] = {
		&show_sub, &lite_run_sub, &lite_convert_sub, &lite_bench_sub, NULL
	};

	return tfk_cli_subcommands(argc, argv, &top_cmd, subs);
}
