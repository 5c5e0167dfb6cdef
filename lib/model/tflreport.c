/*
 * tflreport.c - `tfk-lite convert --report / --eval`: how much a
 * quantized model differs from its float model, per tensor and in
 * accuracy.
 *
 * Records: a TFRecord file of tf.Example records becomes the model's
 * inputs as the SavedModel's training spec (assets.extra/
 * tfkit_spec.json "inputs", what tfk-train fed) maps them, through
 * nn/feed.h, the same mapping the converter calibrates with
 * (tfk_tfl_records_read is its one implementation); labels, when asked
 * for, are read here from an int64 feature of each record.
 *
 * Per-tensor statistics are the layer statistics of TensorFlow's
 * quantization debugger (tf.lite.experimental.QuantizationDebugger,
 * lite/tools/optimize/debugging/python/debugger.py): for each record,
 * diffs = dequantized quantized tensor - float tensor, and over its
 * elements num_elements, stddev (population, np.std), mean_error,
 * max_abs_error and mean_squared_error; each metric is then averaged
 * over the records (np.nanmean), and reported with the tensor's scale
 * and zero point. The derived rmse/scale (sqrt(mean_squared_error) /
 * scale: the error in quanta) is the column TF's debugger tutorial adds
 * to find the layers worth keeping in float.
 *
 * Which float value a quantized tensor is compared with: TF's debugger
 * instruments the quantized model with NumericVerify ops and by default
 * compares each op with a float op fed the dequantized quantized
 * inputs (layer-wise errors); its enable_whole_model_verify mode feeds
 * the float ops from the float model, so errors accumulate from the
 * input onwards. Both without instrumentation: the float .tflite
 * (run through the graph IR, tflgraph.c) and the quantized one
 * (tflint8.c) are run with every tensor fetched, pairs matched by
 * tensor name (the converter keeps each float tensor's name for its
 * quantized twin). Whole-model (the default) compares those two runs;
 * layer-wise (--layerwise) runs each float operator again alone, as a
 * one-operator view of the float subgraph whose inputs are fed the
 * dequantized quantized tensors (the executor feeds only
 * placeholders, so the view makes them the subgraph's inputs).
 *
 * Accuracy: argmax of the first output of the subgraph against the
 * label (one output unit: > 0.5 means class 1), for the float and the
 * quantized file on the same records. Records go through both models
 * in chunks of CHUNK rows so that a large eval set (Fashion-MNIST's
 * 10,000 test images) never holds every activation at once.
 */
#include "model/lite.h"

#include "example/example.h"
#include "graph/exec.h"
#include "graph/graph.h"
#include "io/in.h"
#include "io/record.h"
#include "nn/feed.h"
#include "nn/model.h"
#include "nn/spec.h"
#include "util/alloc.h"
#include "util/cli.h"
#include "util/err.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 256

/* Records ------------------------------------------------------------------ */

static int oom(struct tfk_err *err)
{
	return tfk_errf(err, TFK_ENOMEM, "out of memory");
}

void tfk_tfl_records_release(struct tfk_tfl_records *r)
{
	int k;

	if (!r)
		return;
	for (k = 0; k < r->n_inputs; k++) {
		tfk_free(r->keys ? r->keys[k] : NULL);
		if (r->inputs)
			tfk_tensor_release(&r->inputs[k]);
	}
	tfk_free(r->keys);
	tfk_free(r->inputs);
	tfk_free(r->labels);
	memset(r, 0, sizeof(*r));
}

/* The n int64 labels of one record (n rows of it) at r->labels + at. */
static int read_labels(struct tfk_tfl_records *r, size_t *cap,
		       struct tfk_example *ex, const struct tfk_rec *rec,
		       const char *path, const char *label, size_t at,
		       size_t n, struct tfk_err *err)
{
	const struct tfk_feat *f;

	if (tfk_example_parse(ex, rec->data, rec->len, err))
		return tfk_err_prefix(err, "%s: record %" PRIu64, path,
				      rec->index);
	f = tfk_example_find(ex, label);
	if (!f)
		return tfk_errf(err, TFK_EINVAL, "%s: record %" PRIu64 ": no "
				"feature '%s' (the label)", path, rec->index,
				label);
	if (f->kind != TFK_FEAT_INT64)
		return tfk_errf(err, TFK_EINVAL, "%s: record %" PRIu64 ": "
				"feature %s: %s values, expected int64 class "
				"ids", path, rec->index, label,
				tfk_feat_kind_name(f->kind));
	if (f->n != n)
		return tfk_errf(err, TFK_EINVAL, "%s: record %" PRIu64 ": "
				"feature %s: %zu values, expected %zu (one "
				"per row)", path, rec->index, label, f->n, n);
	if (at + n > *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		int64_t *p;

		while (nc < at + n)
			nc *= 2;
		p = tfk_realloc(r->labels, nc * sizeof(*p));
		if (!p)
			return oom(err);
		r->labels = p;
		*cap = nc;
	}
	tfk_feat_int64s(f, r->labels + at, n);
	return 0;
}

int tfk_tfl_records_read(struct tfk_tfl_records *r, const char *sm_dir,
			 const char *path, long n_max, const char *label,
			 const char *purpose, struct tfk_err *err)
{
	struct tfk_spec *spec = NULL;
	struct tfk_model *m = NULL;
	struct tfk_feed *f = NULL;
	struct tfk_feed_opts fo;
	struct tfk_feed_batch fb;
	struct tfk_rec_reader *rd = NULL;
	struct tfk_rec rec;
	struct tfk_example ex;
	size_t rows, cap = 0;
	char *sp;
	int k, rc;

	memset(r, 0, sizeof(*r));
	tfk_example_init(&ex);
	sp = tfk_malloc(strlen(sm_dir) + 40);
	if (!sp)
		return oom(err);
	sprintf(sp, "%s/assets.extra/tfkit_spec.json", sm_dir);
	rc = tfk_spec_load(&spec, sp, err);
	tfk_free(sp);
	if (rc) {
		tfk_err_prefix(err, "%s needs the training spec tfk-train "
			       "saves", purpose);
		goto out;
	}
	if ((rc = tfk_keras_build(tfk_spec_get(spec, "model"), "spec: model",
				  0, &m, err)))
		goto out;
	memset(&fo, 0, sizeof(fo));
	if ((rc = tfk_feed_new(&f, spec, m, &fo, err)) ||
	    (rc = tfk_rec_open(&rd, path, TFK_COMP_AUTO, 0, err)) < 0)
		goto out;
	while ((n_max <= 0 || tfk_feed_rows(f) < (size_t)n_max) &&
	       (rc = tfk_rec_next(rd, &rec, err)) > 0) {
		size_t before = tfk_feed_rows(f);

		if ((rc = tfk_feed_add(f, rec.data, rec.len,
				       tfk_rec_path(rd), rec.index, err)) < 0)
			goto out;
		if (label && (rc = read_labels(r, &cap, &ex, &rec,
					       tfk_rec_path(rd), label, before,
					       tfk_feed_rows(f) - before,
					       err)))
			goto out;
	}
	if (rc < 0)
		goto out;
	rows = tfk_feed_rows(f);
	if (!rows) {
		rc = tfk_errf(err, TFK_EINVAL, "%s: no records", path);
		goto out;
	}
	if (n_max > 0 && rows > (size_t)n_max)
		rows = (size_t)n_max;
	if ((rc = tfk_feed_batch(f, NULL, 0, rows, &fb, err)))
		goto out;
	r->keys = tfk_calloc((size_t)m->n_inputs + 1, sizeof(*r->keys));
	r->inputs = tfk_calloc((size_t)m->n_inputs + 1, sizeof(*r->inputs));
	if (!r->keys || !r->inputs) {
		rc = oom(err);
		goto out;
	}
	r->n_inputs = m->n_inputs;
	for (k = 0; k < m->n_inputs; k++) {
		r->keys[k] = tfk_strdup(m->inputs[k].name);
		if (!r->keys[k]) {
			rc = oom(err);
			goto out;
		}
		if ((rc = tfk_tensor_copy(&r->inputs[k], &fb.inputs[k], err)))
			goto out;
	}
	r->rows = rows;
	rc = 0;
out:
	if (rc)
		tfk_tfl_records_release(r);
	tfk_example_release(&ex);
	tfk_rec_close(rd);
	tfk_feed_free(f);
	tfk_model_free(m);
	tfk_spec_free(spec);
	return rc < 0 ? rc : 0;
}

/* Running a model on rows ------------------------------------------------- */

/* The subgraph a report runs: the one signature's, else subgraph 0. */
static int report_sg(const struct tfk_tflite *m)
{
	return m->n_signatures ? (int)m->signatures[0].subgraph_index : 0;
}

/* Which record input feeds subgraph input k: the signature key of its
 * tensor (else the tensor's name) among the records' keys. */
static int input_of(const struct tfk_tflite *m, int sg,
		    const struct tfk_tfl_records *r, int k,
		    struct tfk_err *err)
{
	const struct tfk_tfl_subgraph *s = &m->subgraphs[sg];
	const char *key = s->tensors[s->inputs[k]].name;
	int i;

	for (i = 0; m->n_signatures && i < m->signatures[0].n_inputs; i++)
		if ((int)m->signatures[0].inputs[i].tensor_index ==
		    s->inputs[k])
			key = m->signatures[0].inputs[i].name;
	for (i = 0; i < r->n_inputs; i++)
		if (!strcmp(r->keys[i], key))
			return i;
	return tfk_errf(err, TFK_EINVAL, "input '%s' is not an input of "
			"the training spec's model", key);
}

/* A float32 copy of t (INT8 dequantized with tensor x's parameters). */
static int to_float(const struct tfk_tensor *t,
		    const struct tfk_tfl_tensor *x, struct tfk_tensor *o,
		    struct tfk_err *err)
{
	int64_t i, n = tfk_tensor_numel(t);
	float *d;
	int rc;

	if ((rc = tfk_tensor_init(o, TFK_DT_FLOAT, t->rank, t->shape, err)))
		return rc;
	d = o->data;
	if (t->dtype == TFK_DT_FLOAT) {
		memcpy(d, t->data, (size_t)n * sizeof(float));
	} else if (t->dtype == TFK_DT_INT8 && x->has_quant &&
		   x->quant.n_scale == 1) {
		double sc = x->quant.scale[0];
		int64_t zp = x->quant.n_zero_point ?
			x->quant.zero_point[0] : 0;

		for (i = 0; i < n; i++)
			d[i] = (float)(((const int8_t *)t->data)[i] - zp) *
				(float)sc;
	} else {
		tfk_tensor_release(o);
		return tfk_errf(err, TFK_EINVAL, "tensor '%s': %s values "
				"cannot be compared", x->name,
				tfk_dtype_name(t->dtype));
	}
	return 0;
}

/*
 * Run subgraph sg of m once on feeds[k] (subgraph input k); out[j]
 * (float32, caller releases) gets tensor fetch[j], dequantized. Int8
 * subgraphs go through tflint8.c, float ones through the graph IR.
 */
static int run_feeds(const struct tfk_tflite *m, int sg,
		     const struct tfk_tensor *feeds, int n_fetch,
		     const int *fetch, struct tfk_tensor *out,
		     struct tfk_err *err)
{
	const struct tfk_tfl_subgraph *s = &m->subgraphs[sg];
	struct tfk_tensor *raw = NULL;
	const struct tfk_tensor **got = NULL;
	struct tfk_tdesc *desc = NULL;
	const char **fnames = NULL, **onames = NULL;
	char (*names)[16] = NULL;
	struct tfk_graph *g = NULL;
	struct tfk_exec *x = NULL;
	int k, j, rc = 0;

	for (j = 0; j < n_fetch; j++)
		memset(&out[j], 0, sizeof(out[j]));
	desc = tfk_calloc((size_t)s->n_inputs + 1, sizeof(*desc));
	fnames = tfk_calloc((size_t)s->n_inputs + 1, sizeof(*fnames));
	onames = tfk_calloc((size_t)n_fetch + 1, sizeof(*onames));
	names = tfk_calloc((size_t)(s->n_inputs + n_fetch) + 1,
			   sizeof(*names));
	raw = tfk_calloc((size_t)n_fetch + 1, sizeof(*raw));
	got = tfk_calloc((size_t)n_fetch + 1, sizeof(*got));
	if (!desc || !fnames || !onames || !names || !raw || !got) {
		rc = oom(err);
		goto out;
	}
	for (k = 0; k < s->n_inputs; k++) {
		tfk_tensor_desc(&feeds[k], &desc[k]);
		snprintf(names[k], sizeof(names[k]), "t%d", s->inputs[k]);
		fnames[k] = names[k];
	}
	for (j = 0; j < n_fetch; j++) {
		snprintf(names[s->n_inputs + j], sizeof(names[0]), "t%d",
			 fetch[j]);
		onames[j] = names[s->n_inputs + j];
	}
	if (tfk_tflite_is_int8(m, sg)) {
		if ((rc = tfk_tflite_run_int8(m, sg, feeds, n_fetch, fetch,
					      raw, err)))
			goto out;
		for (j = 0; j < n_fetch; j++)
			got[j] = &raw[j];
	} else if ((rc = tfk_tflite_graph(m, sg, desc, &g, err)) ||
		   (rc = tfk_exec_new(&x, g, fnames, s->n_inputs, onames,
				      n_fetch, NULL, err)) ||
		   (rc = tfk_exec_run(x, feeds, 0, got, err))) {
		goto out;
	}
	for (j = 0; j < n_fetch; j++)
		if ((rc = to_float(got[j], &s->tensors[fetch[j]], &out[j],
				   err)))
			goto out;
out:
	if (rc)
		for (j = 0; j < n_fetch; j++)
			tfk_tensor_release(&out[j]);
	for (j = 0; raw && j < n_fetch; j++)
		tfk_tensor_release(&raw[j]);
	tfk_exec_free(x);
	tfk_graph_free(g);
	tfk_free(desc);
	tfk_free(fnames);
	tfk_free(onames);
	tfk_free(names);
	tfk_free(raw);
	tfk_free(got);
	return rc;
}

/*
 * Run m on rows [start, start+n) of r (views, no copy); out[j] as for
 * run_feeds.
 */
static int run_rows(const struct tfk_tflite *m, const struct tfk_tfl_records *r,
		    size_t start, size_t n, int n_fetch, const int *fetch,
		    struct tfk_tensor *out, struct tfk_err *err)
{
	int sg = report_sg(m);
	const struct tfk_tfl_subgraph *s = &m->subgraphs[sg];
	struct tfk_tensor *feeds;
	int k, rc = 0;

	feeds = tfk_calloc((size_t)s->n_inputs + 1, sizeof(*feeds));
	if (!feeds)
		return oom(err);
	for (k = 0; k < s->n_inputs && !rc; k++) {
		const struct tfk_tensor *all;
		int64_t sh[TFK_MAX_RANK];
		size_t row;
		int i = input_of(m, sg, r, k, err);

		if (i < 0) {
			rc = i;
			break;
		}
		all = &r->inputs[i];
		memcpy(sh, all->shape, sizeof(sh));
		sh[0] = (int64_t)n;
		row = all->nbytes / r->rows;
		rc = tfk_tensor_init_view(&feeds[k], all->dtype, all->rank, sh,
					  (uint8_t *)all->data + row * start,
					  row * n, TFK_OWN_BORROWED, err);
	}
	if (!rc)
		rc = run_feeds(m, sg, feeds, n_fetch, fetch, out, err);
	tfk_free(feeds);
	return rc;
}

/* Per-tensor statistics ------------------------------------------------------ */

/*
 * tfk_tflite_graph names only the subgraph's inputs and outputs
 * ("t<index>"), so the float model's intermediate tensors cannot be
 * fetched as they are: its subgraph gets every operator output added
 * to its output list (after the file's own, so outputs[0] stays the
 * first output). Only the loaded struct changes, never the file.
 */
static int expose_all(struct tfk_tflite *m, int sg, struct tfk_err *err)
{
	struct tfk_tfl_subgraph *s = &m->subgraphs[sg];
	int32_t *o;
	int n = s->n_outputs, k, j, i;

	o = tfk_calloc((size_t)(s->n_outputs + s->n_tensors) + 1, sizeof(*o));
	if (!o)
		return oom(err);
	memcpy(o, s->outputs, (size_t)s->n_outputs * sizeof(*o));
	for (k = 0; k < s->n_ops; k++)
		for (j = 0; j < s->ops[k].n_outputs; j++) {
			int t = s->ops[k].outputs[j];

			for (i = 0; i < n && o[i] != t; i++)
				;
			if (i == n && t >= 0)
				o[n++] = t;
		}
	tfk_free(s->outputs);
	s->outputs = o;
	s->n_outputs = n;
	return 0;
}

static int is_activation(const struct tfk_tflite *m,
			 const struct tfk_tfl_tensor *x)
{
	return !x->buffer || !m->buffers[x->buffer].size;
}

/* Index of the float activation tensor called name, or -1. */
static int float_twin(const struct tfk_tflite *fm, int sg, const char *name)
{
	const struct tfk_tfl_subgraph *s = &fm->subgraphs[sg];
	int k;

	for (k = 0; k < s->n_tensors; k++)
		if (s->tensors[k].type == TFK_TFL_FLOAT32 &&
		    is_activation(fm, &s->tensors[k]) &&
		    !strcmp(s->tensors[k].name, name))
			return k;
	return -1;
}

/* TFLite's name of the operator writing tensor t; "" for an input. */
static const char *writer_of(const struct tfk_tflite *m, int sg, int t)
{
	const struct tfk_tfl_subgraph *s = &m->subgraphs[sg];
	int k, j;

	for (k = 0; k < s->n_ops; k++)
		for (j = 0; j < s->ops[k].n_outputs; j++)
			if (s->ops[k].outputs[j] == t) {
				const char *nm = tfk_tfl_op_name(m->opcodes[
					s->ops[k].opcode_index].builtin_code);

				return nm ? nm : "UNKNOWN";
			}
	return "";
}

/*
 * Layer-wise reference for stat k (TF's NumericVerify): the float op
 * writing float tensor f, run alone on the dequantized quantized
 * values of its activation inputs (qv[j] holds the twin of float
 * tensor fi[j]). 1 with *ref filled, 0 when there is no such op or an
 * input has no quantized twin (the whole-model value is then kept).
 */
static int layer_ref(const struct tfk_tflite *fm, int fsg, int f,
		     const int *fi, const struct tfk_tensor *qv, int n,
		     struct tfk_tensor *ref, struct tfk_err *err)
{
	const struct tfk_tfl_subgraph *fs = &fm->subgraphs[fsg];
	struct tfk_tfl_subgraph one;
	struct tfk_tflite m1;
	struct tfk_tensor feeds[8];
	int32_t ins[8], out1 = f;
	int k, j, i, n_in = 0, op = -1, rc;

	for (k = 0; k < fs->n_ops && op < 0; k++)
		for (j = 0; j < fs->ops[k].n_outputs; j++)
			if (fs->ops[k].outputs[j] == f)
				op = k;
	if (op < 0)
		return 0;
	for (k = 0; k < fs->ops[op].n_inputs; k++) {
		int t = fs->ops[op].inputs[k];

		if (t < 0 || !is_activation(fm, &fs->tensors[t]))
			continue;
		for (i = 0; i < n_in && ins[i] != t; i++)
			;
		if (i < n_in)
			continue;	/* the same tensor twice */
		for (j = 0; j < n && fi[j] != t; j++)
			;
		if (j == n || n_in == 8)
			return 0;
		feeds[n_in] = qv[j];
		feeds[n_in].owner = TFK_OWN_BORROWED;
		feeds[n_in].strs = NULL;
		memset(&feeds[n_in].quant, 0, sizeof(feeds[n_in].quant));
		ins[n_in++] = t;
	}
	one = *fs;
	one.ops = &fs->ops[op];
	one.n_ops = 1;
	one.inputs = ins;
	one.n_inputs = n_in;
	one.outputs = &out1;
	one.n_outputs = 1;
	m1 = *fm;
	m1.subgraphs = &one;
	m1.n_subgraphs = 1;
	m1.n_signatures = 0;
	if ((rc = run_feeds(&m1, 0, feeds, 1, &f, ref, err)))
		return tfk_err_prefix(err, "float operator %d alone", op);
	return 1;
}

int tfk_tflite_qstats(const struct tfk_tflite *fm, const struct tfk_tflite *qm,
		      const struct tfk_tfl_records *r, int layerwise,
		      struct tfk_tfl_qstat **out, int *n_out,
		      struct tfk_err *err)
{
	int fsg = report_sg(fm), qsg = report_sg(qm);
	const struct tfk_tfl_subgraph *qs = &qm->subgraphs[qsg];
	struct tfk_tfl_qstat *st = NULL;
	struct tfk_tensor *fv = NULL, *qv = NULL;
	int *fi = NULL, *qi = NULL, n = 0, k, rc = 0;
	size_t start, row;

	*out = NULL;
	*n_out = 0;
	st = tfk_calloc((size_t)qs->n_tensors + 1, sizeof(*st));
	fi = tfk_calloc((size_t)qs->n_tensors + 1, sizeof(*fi));
	qi = tfk_calloc((size_t)qs->n_tensors + 1, sizeof(*qi));
	if (!st || !fi || !qi) {
		rc = oom(err);
		goto out;
	}
	for (k = 0; k < qs->n_tensors; k++) {
		const struct tfk_tfl_tensor *x = &qs->tensors[k];
		int f;

		if (x->type != TFK_TFL_INT8 || !is_activation(qm, x) ||
		    !x->has_quant || x->quant.n_scale != 1)
			continue;
		if ((f = float_twin(fm, fsg, x->name)) < 0)
			continue;
		st[n].tensor = k;
		st[n].name = x->name;
		st[n].op = writer_of(qm, qsg, k);
		st[n].scale = x->quant.scale[0];
		st[n].zero_point = x->quant.n_zero_point ?
			x->quant.zero_point[0] : 0;
		fi[n] = f;
		qi[n] = k;
		n++;
	}
	fv = tfk_calloc((size_t)n + 1, sizeof(*fv));
	qv = tfk_calloc((size_t)n + 1, sizeof(*qv));
	if (!fv || !qv) {
		rc = oom(err);
		goto out;
	}
	for (start = 0; n && start < r->rows; start += CHUNK) {
		size_t rows = r->rows - start < CHUNK ? r->rows - start : CHUNK;

		if ((rc = run_rows(fm, r, start, rows, n, fi, fv, err))) {
			tfk_err_prefix(err, "float model");
			goto out;
		}
		if ((rc = run_rows(qm, r, start, rows, n, qi, qv, err))) {
			tfk_err_prefix(err, "quantized model");
			goto chunk;
		}
		for (k = 0; layerwise && k < n; k++) {
			struct tfk_tensor ref;

			if ((rc = layer_ref(fm, fsg, fi[k], fi, qv, n, &ref,
					    err)) < 0)
				goto chunk;
			if (rc) {
				tfk_tensor_release(&fv[k]);
				fv[k] = ref;
			}
			rc = 0;
		}
		for (k = 0; k < n; k++) {
			const float *a = qv[k].data, *b = fv[k].data;
			int64_t e = tfk_tensor_numel(&qv[k]) / (int64_t)rows, i;

			if (tfk_tensor_numel(&fv[k]) != tfk_tensor_numel(&qv[k]) ||
			    !qv[k].rank || qv[k].shape[0] != (int64_t)rows) {
				rc = tfk_errf(err, TFK_EINVAL, "tensor %d '%s': "
					      "float and quantized shapes "
					      "differ", qi[k], st[k].name);
				goto chunk;
			}
			st[k].num_elements = e;
			for (row = 0; row < rows; row++) {
				double s = 0, s2 = 0, mx = 0, mean;

				for (i = 0; i < e; i++) {
					double d = (double)a[row * e + i] -
						   b[row * e + i];

					s += d;
					s2 += d * d;
					if (fabs(d) > mx)
						mx = fabs(d);
				}
				mean = e ? s / (double)e : 0;
				st[k].mean_error += mean;
				st[k].mean_squared_error += e ? s2 / (double)e : 0;
				st[k].max_abs_error += mx;
				st[k].stddev += e ? sqrt(fmax(0, s2 / (double)e -
							     mean * mean)) : 0;
			}
		}
chunk:
		for (k = 0; k < n; k++) {
			tfk_tensor_release(&fv[k]);
			tfk_tensor_release(&qv[k]);
		}
		if (rc)
			goto out;
	}
	for (k = 0; k < n; k++) {
		st[k].mean_error /= (double)r->rows;
		st[k].mean_squared_error /= (double)r->rows;
		st[k].max_abs_error /= (double)r->rows;
		st[k].stddev /= (double)r->rows;
	}
	*out = st;
	*n_out = n;
	st = NULL;
out:
	tfk_free(st);
	tfk_free(fi);
	tfk_free(qi);
	tfk_free(fv);
	tfk_free(qv);
	return rc;
}

/* Accuracy ------------------------------------------------------------------ */

int tfk_tflite_accuracy(const struct tfk_tflite *m,
			const struct tfk_tfl_records *r, size_t *correct,
			struct tfk_err *err)
{
	int sg = report_sg(m), t, rc;
	const struct tfk_tfl_subgraph *s = &m->subgraphs[sg];
	size_t start, row, ok = 0;

	if (!r->labels)
		return tfk_errf(err, TFK_EINVAL, "accuracy needs labels");
	if (!s->n_outputs)
		return tfk_errf(err, TFK_EINVAL, "the model has no outputs");
	t = s->outputs[0];
	for (start = 0; start < r->rows; start += CHUNK) {
		size_t rows = r->rows - start < CHUNK ? r->rows - start : CHUNK;
		struct tfk_tensor o;
		int64_t c, i;
		const float *v;

		if ((rc = run_rows(m, r, start, rows, 1, &t, &o, err)))
			return rc;
		c = o.rank ? tfk_tensor_numel(&o) / (int64_t)rows : 0;
		if (!o.rank || o.shape[0] != (int64_t)rows || c < 1) {
			tfk_tensor_release(&o);
			return tfk_errf(err, TFK_EINVAL, "output '%s': expected "
					"[batch, classes], got %d dimensions",
					s->tensors[t].name, o.rank);
		}
		v = o.data;
		for (row = 0; row < rows; row++) {
			const float *p = v + row * (size_t)c;
			int64_t best = 0;

			if (c == 1) {
				best = p[0] > 0.5f;
			} else {
				for (i = 1; i < c; i++)
					if (p[i] > p[best])
						best = i;
			}
			ok += best == r->labels[start + row];
		}
		tfk_tensor_release(&o);
	}
	*correct = ok;
	return 0;
}

/* The convert subcommand's report ------------------------------------------ */

int tfk_lite_report(const struct tfk_lite_report_opts *o,
		    const void *float_model, size_t float_size,
		    const struct tfk_tfl_records *eval,
		    struct tfk_lite_report *res, struct tfk_err *err)
{
	struct tfk_tfl_records rep;
	int rc;

	memset(res, 0, sizeof(*res));
	memset(&rep, 0, sizeof(rep));
	res->float_bytes = float_size;
	if ((rc = tfk_tflite_load(&res->fm, float_model, float_size, err))) {
		tfk_err_prefix(err, "float model");
		return rc;
	}
	if (o->report && (rc = expose_all(&res->fm, report_sg(&res->fm),
					  err)))
		goto out;
	if ((rc = tfk_tflite_load_file(&res->qm, o->out_path, err)))
		goto out;
	res->quant_bytes = res->qm.n;
	if (o->report &&
	    ((rc = tfk_tfl_records_read(&rep, o->sm_dir, o->rep, o->n_rep,
					NULL, "--report", err)) ||
	     (rc = tfk_tflite_qstats(&res->fm, &res->qm, &rep, o->layerwise,
				     &res->st, &res->n_st, err))))
		goto out;
	res->rep_rows = rep.rows;
	if (eval && ((rc = tfk_tflite_accuracy(&res->fm, eval,
					       &res->float_correct, err)) ||
		     (rc = tfk_tflite_accuracy(&res->qm, eval,
					       &res->quant_correct, err))))
		tfk_err_prefix(err, "%s", o->eval);
out:
	tfk_tfl_records_release(&rep);
	if (rc)
		tfk_lite_report_release(res);
	return rc;
}

void tfk_lite_report_release(struct tfk_lite_report *res)
{
	tfk_free(res->st);
	tfk_tflite_release(&res->fm);
	tfk_tflite_release(&res->qm);
	memset(res, 0, sizeof(*res));
}
