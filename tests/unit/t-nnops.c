/*
 * t-nnops.c - the NN ops of nn.c, random.c and gather.c: forward and
 * backward against PyTorch (tests/py/torch_nn.py, float64 torch on the
 * same float32 inputs), gradients by central finite differences in
 * double, each fast kernel against its _ref, RandomUniform /
 * RandomStandardNormal statistics and determinism, and the error cases
 * (labels and indices out of range, bad shapes, PreventGradient).
 *
 * Our ops run in float32 through the executor; the error of a value a
 * against torch's b is |a - b| / max(|b|, 1) (relative above 1,
 * absolute below). Bounds, with the largest seen here in brackets:
 *   Relu6, LeakyRelu          1e-6  [0: exact]
 *   Elu, Selu, Softplus, Erf  1e-6  [~1.2e-7]
 *   LogSoftmax                1e-6  [~5e-7]
 *   SoftmaxCrossEntropyWithLogits, Sparse...  1e-6  [~5e-7]
 *   FusedBatchNormV3 train/infer + grad        1e-5  [~2e-6]
 *   GatherV2 / UnsortedSegmentSum (embedding)  1e-6  [0: exact]
 * Finite differences (float64, h 1e-6, loss = sum(y * R)):
 * |analytic - numeric| <= 1e-6 * (1 + |numeric|)  [~1e-9].
 * Fast vs _ref: float paths compute in float, the _refs in double:
 * |fast - ref| <= 2e-6 * max(|ref|, 1) (batch norm 1e-5), except the
 * batch norm grad's dscale/doffset, sums over all rows accumulated in
 * float blocks of 32 rows: |fast - ref| <= 4e-6 * sum_rows |dy|, the
 * summation-order bound (32 float eps times the terms' L1 norm, |xhat|
 * <= 2 here; the float-rounded mean adds eps |mean| sum dy)
 * [observed ~6e-7 of sum |dy|].
 */
#include "graph/exec.h"
#include "graph/graph.h"
#include "kernels/cpu.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545f4914f6cdd1dull;

static double urand(void)	/* xorshift64 (Marsaglia 2003), [0, 1) */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (rng >> 11) * (1.0 / 9007199254740992.0);
}

static void mk(struct tfk_tensor *t, enum tfk_dtype dt, int r,
	       const int64_t *s)
{
	if (tfk_tensor_init(t, dt, r, s, NULL))
		abort();
}

/* Uniform values in [lo, hi). */
static void fill(struct tfk_tensor *t, double lo, double hi)
{
	int64_t i, n = tfk_tensor_numel(t);

	for (i = 0; i < n; i++) {
		double v = lo + (hi - lo) * urand();

		if (t->dtype == TFK_DT_FLOAT)
			((float *)t->data)[i] = (float)v;
		else
			((double *)t->data)[i] = v;
	}
}

static void fill_int(struct tfk_tensor *t, int64_t lo, int64_t hi)
{
	int64_t i, n = tfk_tensor_numel(t);

	for (i = 0; i < n; i++) {
		int64_t v = lo + (int64_t)(urand() * (double)(hi - lo));

		if (t->dtype == TFK_DT_INT32)
			((int32_t *)t->data)[i] = (int32_t)v;
		else
			((int64_t *)t->data)[i] = v;
	}
}

static double at(const struct tfk_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case TFK_DT_FLOAT: return ((const float *)t->data)[i];
	case TFK_DT_DOUBLE: return ((const double *)t->data)[i];
	case TFK_DT_INT32: return ((const int32_t *)t->data)[i];
	default: return (double)((const int64_t *)t->data)[i];
	}
}

/* A graph around one op ------------------------------------------------ */

#define MAX_IN 6

struct spec {
	const char *op;
	int n_in;
	struct tfk_tensor in[MAX_IN];	/* values, owned */
	int is_const[MAX_IN];
	int grad[MAX_IN];		/* want d/d input k */
	struct tfk_attr attrs[4];
	int n_attrs;
	int n_out;			/* op outputs to fetch */
	struct tfk_tensor seed;		/* gradient of output 0, owned */
};

struct runner {
	struct tfk_graph *g;
	struct tfk_exec *ex;
	struct tfk_tensor feeds[MAX_IN + 1];
	int n_fetch;
	const struct tfk_tensor *out[16];
};

static void spec_free(struct spec *s)
{
	int k;

	for (k = 0; k < s->n_in; k++)
		tfk_tensor_release(&s->in[k]);
	tfk_tensor_release(&s->seed);
}

static void runner_free(struct runner *r)
{
	tfk_exec_free(r->ex);
	tfk_graph_free(r->g);
	memset(r, 0, sizeof(*r));
}

/* Build op(inputs) and its gradients for the inputs marked grad (seed:
 * the "g" placeholder for output 0); inputs not const are fed from
 * views of s->in (so changing s->in data changes the next run). */
static int runner_new(struct runner *r, struct spec *s, struct tfk_err *err)
{
	static const char *const names[] = { "in0", "in1", "in2", "in3",
					     "in4", "in5", "g" };
	static const char *const outs[] = { "o0", "o1", "o2", "o3", "o4",
					    "o5", "d0", "d1", "d2", "d3",
					    "d4", "d5" };
	const char *feed_names[MAX_IN + 1], *fetch[16];
	struct tfk_port in[MAX_IN], y, seed, xs[MAX_IN], dx[MAX_IN];
	int k, n_feed = 0, n_x = 0, rc;

	memset(r, 0, sizeof(*r));
	rc = tfk_graph_new(&r->g, err);
	for (k = 0; !rc && k < s->n_in; k++) {
		struct tfk_tensor *t = &s->in[k];

		if (s->is_const[k]) {
			rc = tfk_graph_const(r->g, names[k], t, &in[k], err);
			continue;
		}
		rc = tfk_graph_placeholder(r->g, names[k], t->dtype, t->rank,
					   t->shape, &in[k], err);
		if (rc)
			break;
		tfk_tensor_init_view(&r->feeds[n_feed], t->dtype, t->rank,
				     t->shape, t->data, t->nbytes,
				     TFK_OWN_BORROWED, NULL);
		feed_names[n_feed++] = names[k];
		if (s->grad[k])
			xs[n_x++] = in[k];
	}
	if (!rc)
		rc = tfk_graph_add_node(r->g, s->op, "op", in, s->n_in,
					s->attrs, s->n_attrs, &y, err);
	for (k = 0; !rc && k < s->n_out; k++)
		rc = tfk_graph_set_output(r->g, outs[k],
					  (struct tfk_port){ y.node, k }, err);
	r->n_fetch = s->n_out;
	if (!rc && n_x) {
		rc = tfk_graph_placeholder(r->g, "g", s->seed.dtype,
					   s->seed.rank, s->seed.shape, &seed,
					   err);
		tfk_tensor_init_view(&r->feeds[n_feed], s->seed.dtype,
				     s->seed.rank, s->seed.shape,
				     s->seed.data, s->seed.nbytes,
				     TFK_OWN_BORROWED, NULL);
		feed_names[n_feed++] = names[MAX_IN];
		if (!rc)
			rc = tfk_graph_gradients(r->g, &y, &seed, 1, xs, n_x,
						 dx, err);
		for (k = 0; !rc && k < n_x; k++) {
			if (dx[k].node < 0)
				rc = tfk_errf(err, TFK_EINVAL, "no gradient "
					      "for x %d", k);
			else
				rc = tfk_graph_set_output(r->g, outs[6 + k],
							  dx[k], err);
		}
		r->n_fetch += n_x;
	}
	for (k = 0; k < r->n_fetch; k++)
		fetch[k] = k < s->n_out ? outs[k] : outs[6 + k - s->n_out];
	if (!rc)
		rc = tfk_exec_new(&r->ex, r->g, feed_names, n_feed, fetch,
				  r->n_fetch, NULL, err);
	return rc;
}

static int runner_run(struct runner *r, uint64_t step, struct tfk_err *err)
{
	return tfk_exec_run(r->ex, r->feeds, step, r->out, err);
}

/* Torch comparison --------------------------------------------------- */

struct tcase {
	char name[32];
	char what[64];		/* for messages */
	int n;			/* results to compare */
	double bound;
	struct tfk_tensor got[8];	/* float32 copies of our results */
};

static struct tcase cases[32];
static int n_cases;
static FILE *manifest;

static void write_tensor(const char *name, const char *ext,
			 const struct tfk_tensor *t)
{
	char fn[128];

	snprintf(fn, sizeof(fn), "%.40s.%.16s", name, ext);
	tap_write_file(tap_tmp(fn), t->data, t->nbytes);
}

/* Run spec s (float32), keep its outputs for comparison with torch
 * (manifest line: NAME OP SHAPE extra). Consumes s. */
static void torch_case(struct spec *s, const char *name, const char *op,
		       const char *extra, double bound, const char *what)
{
	struct tcase *c = &cases[n_cases];
	struct runner r;
	struct tfk_err err = { 0, "" };
	char shape[64] = "";
	int k, o = 0;

	for (k = 0; k < s->in[0].rank; k++)
		o += snprintf(shape + o, sizeof(shape) - o, "%s%lld",
			      k ? "x" : "", (long long)s->in[0].shape[k]);
	if (runner_new(&r, s, &err) || runner_run(&r, 0, &err)) {
		ok(0, "%s: ran: %s", what, err.msg);
		runner_free(&r);
		spec_free(s);
		return;
	}
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->what, sizeof(c->what), "%s", what);
	c->bound = bound;
	c->n = r.n_fetch;
	for (k = 0; k < r.n_fetch; k++)
		tfk_tensor_copy(&c->got[k], r.out[k], NULL);
	for (k = 0; k < s->n_in; k++) {
		char ext[16];
		struct tfk_tensor t = s->in[k];
		int64_t i, n = tfk_tensor_numel(&t);

		snprintf(ext, sizeof(ext), "in%d", k);
		if (t.dtype == TFK_DT_INT32) {	/* torch wants int64 */
			int64_t *v = malloc(8 * (n ? n : 1));
			int64_t sh[TFK_MAX_RANK];

			for (i = 0; i < n; i++)
				v[i] = ((int32_t *)t.data)[i];
			memcpy(sh, t.shape, sizeof(sh));
			tfk_tensor_init_view(&t, TFK_DT_INT64, t.rank, sh, v,
					     8 * n, TFK_OWN_BORROWED, NULL);
			write_tensor(name, ext, &t);
			free(v);
		} else {
			write_tensor(name, ext, &t);
		}
	}
	write_tensor(name, "g", &s->seed);
	fprintf(manifest, "%s %s %s %s\n", name, op, shape, extra);
	n_cases++;
	runner_free(&r);
	spec_free(s);
}

static void torch_compare(void)
{
	char cmd[2048];
	int i, k;

	fclose(manifest);
	snprintf(cmd, sizeof(cmd), "'%s' '%s' '%s'", tap_python(),
		 tap_source("tests/py/torch_nn.py"), tap_tmpdir());
	if (!ok(system(cmd) == 0, "torch oracle ran (%d cases)", n_cases))
		return;
	for (i = 0; i < n_cases; i++) {
		struct tcase *c = &cases[i];
		double worst = 0;
		int bad = 0;

		for (k = 0; k < c->n; k++) {
			char fn[64];
			size_t nb;
			double *want;
			int64_t j, n = tfk_tensor_numel(&c->got[k]);

			snprintf(fn, sizeof(fn), "%.31s.t.%d", c->name, k);
			want = tap_read_file(tap_tmp(fn), &nb);
			if (!want || nb != (size_t)n * 8) {
				tap_diag("%s: output %d: torch gave %zu bytes "
					 "for %lld values", c->what, k,
					 want ? nb : 0, (long long)n);
				bad++;
				free(want);
				continue;
			}
			for (j = 0; j < n; j++) {
				double a = at(&c->got[k], j), b = want[j];
				double e = fabs(a - b) / fmax(fabs(b), 1);

				if (!(e <= c->bound)) {
					if (bad < 3)
						tap_diag("%s: output %d[%lld]: "
							 "%.9g vs torch %.9g",
							 c->what, k,
							 (long long)j, a, b);
					bad++;
				}
				if (e > worst)
					worst = e;
			}
			free(want);
			tfk_tensor_release(&c->got[k]);
		}
		ok(!bad, "%s == torch, forward and backward (max err %.2g, "
		   "bound %.0g)", c->what, worst, c->bound);
	}
}

static void set_in(struct spec *s, int k, enum tfk_dtype dt, int rank,
		   const int64_t *shape, double lo, double hi)
{
	mk(&s->in[k], dt, rank, shape);
	if (dt == TFK_DT_FLOAT || dt == TFK_DT_DOUBLE)
		fill(&s->in[k], lo, hi);
	else
		fill_int(&s->in[k], (int64_t)lo, (int64_t)hi);
	if (k >= s->n_in)
		s->n_in = k + 1;
}

static void set_seed(struct spec *s, enum tfk_dtype dt, int rank,
		     const int64_t *shape)
{
	mk(&s->seed, dt, rank, shape);
	fill(&s->seed, -1, 1);
}

/* Per-op specs, in float32 (torch) or float64 (finite differences). */

static void spec_act(struct spec *s, const char *op, enum tfk_dtype dt,
		     float alpha)
{
	int64_t sh[2] = { 4, 37 };

	memset(s, 0, sizeof(*s));
	s->op = op;
	set_in(s, 0, dt, 2, sh, -7, 7);
	s->grad[0] = 1;
	s->n_out = 1;
	if (!strcmp(op, "LeakyRelu"))
		s->attrs[s->n_attrs++] = TFK_A_FLOAT("alpha", alpha);
	set_seed(s, dt, 2, sh);
}

static void spec_xent(struct spec *s, int sparse, enum tfk_dtype dt,
		      enum tfk_dtype lt)
{
	int64_t sh[2] = { 8, 10 };
	int64_t r, j;

	memset(s, 0, sizeof(*s));
	s->op = sparse ? "SparseSoftmaxCrossEntropyWithLogits" :
		"SoftmaxCrossEntropyWithLogits";
	set_in(s, 0, dt, 2, sh, -5, 5);
	s->grad[0] = 1;
	if (sparse) {
		set_in(s, 1, lt, 1, sh, 0, 10);
	} else {
		set_in(s, 1, dt, 2, sh, 0, 1);	/* rows sum to 1 */
		for (r = 0; r < 8; r++) {
			double sum = 0;

			for (j = 0; j < 10; j++)
				sum += at(&s->in[1], r * 10 + j);
			for (j = 0; j < 10; j++) {
				double v = at(&s->in[1], r * 10 + j) / sum;

				if (dt == TFK_DT_FLOAT)
					((float *)s->in[1].data)[r * 10 + j] =
						(float)v;
				else
					((double *)s->in[1].data)[r * 10 + j] =
						v;
			}
		}
		s->grad[1] = 1;
	}
	s->n_out = 2;
	set_seed(s, dt, 1, sh);
}

static void spec_bn(struct spec *s, int train, float factor,
		    enum tfk_dtype dt, int rank)
{
	int64_t sh[4] = { 4, 5, 6, 3 }, c[1] = { 3 };

	if (rank == 2)
		sh[0] = 16, sh[1] = 3;
	memset(s, 0, sizeof(*s));
	s->op = "FusedBatchNormV3";
	set_in(s, 0, dt, rank, sh, -2, 5);
	set_in(s, 1, dt, 1, c, 0.5, 2);
	set_in(s, 2, dt, 1, c, -1, 1);
	set_in(s, 3, dt, 1, c, -0.5, 0.5);
	set_in(s, 4, dt, 1, c, 0.5, 2);
	s->grad[0] = s->grad[1] = s->grad[2] = 1;
	s->attrs[s->n_attrs++] = TFK_A_FLOAT("epsilon", 1e-3f);
	s->attrs[s->n_attrs++] = TFK_A_BOOL("is_training", train);
	s->attrs[s->n_attrs++] = TFK_A_FLOAT("exponential_avg_factor", factor);
	s->n_out = 3;
	set_seed(s, dt, rank, sh);
}

static void spec_gather(struct spec *s, enum tfk_dtype dt,
			enum tfk_dtype it)
{
	int64_t sh[2] = { 10, 4 }, ish[2] = { 3, 5 }, osh[3] = { 3, 5, 4 };

	memset(s, 0, sizeof(*s));
	s->op = "GatherV2";
	set_in(s, 0, dt, 2, sh, -1, 1);
	set_in(s, 1, it, 2, ish, 0, 10);
	set_in(s, 2, TFK_DT_INT32, 0, NULL, 0, 1);	/* axis 0 */
	s->is_const[1] = s->is_const[2] = 1;
	s->grad[0] = 1;
	s->n_out = 1;
	set_seed(s, dt, 3, osh);
}

static void against_torch(void)
{
	static const struct {
		const char *op, *t;
		float alpha;
	} acts[] = {
		{ "Relu6", "relu6", 0 }, { "Elu", "elu", 0 },
		{ "Selu", "selu", 0 }, { "LeakyRelu", "leaky_relu", 0.2f },
		{ "Softplus", "softplus", 0 }, { "LogSoftmax", "log_softmax", 0 },
	};
	struct spec s;
	size_t i;

	manifest = fopen(tap_tmp("manifest"), "w");
	for (i = 0; i < sizeof(acts) / sizeof(acts[0]); i++) {
		spec_act(&s, acts[i].op, TFK_DT_FLOAT, acts[i].alpha);
		torch_case(&s, acts[i].t, acts[i].t, "", 1e-6, acts[i].op);
	}
	spec_act(&s, "LeakyRelu", TFK_DT_FLOAT, 0.01f);
	torch_case(&s, "leaky001", "leaky_relu", "alpha=0.01", 1e-6,
		   "LeakyRelu alpha 0.01");
	if (tfk_op_find("Exp") && tfk_op_find("Square") && tfk_op_find("Neg")) {
		spec_act(&s, "Erf", TFK_DT_FLOAT, 0);
		torch_case(&s, "erf", "erf", "", 1e-6, "Erf");
	} else {
		ok(0, "Erf gradient: ops Exp, Square, Neg are not "
		   "registered yet");
	}
	spec_xent(&s, 0, TFK_DT_FLOAT, 0);
	torch_case(&s, "xent", "xent", "", 1e-6,
		   "SoftmaxCrossEntropyWithLogits");
	spec_xent(&s, 1, TFK_DT_FLOAT, TFK_DT_INT64);
	torch_case(&s, "sparse64", "sparse_xent", "", 1e-6,
		   "SparseSoftmaxCrossEntropyWithLogits int64 labels");
	spec_xent(&s, 1, TFK_DT_FLOAT, TFK_DT_INT32);
	torch_case(&s, "sparse32", "sparse_xent", "", 1e-6,
		   "SparseSoftmaxCrossEntropyWithLogits int32 labels");
	spec_bn(&s, 1, 0.01f, TFK_DT_FLOAT, 4);
	torch_case(&s, "bn_train", "bn_train", "eps=0.001 factor=0.01", 1e-5,
		   "FusedBatchNormV3 training, avg factor 0.01");
	spec_bn(&s, 1, 1, TFK_DT_FLOAT, 4);
	torch_case(&s, "bn_train1", "bn_train", "eps=0.001 factor=1", 1e-5,
		   "FusedBatchNormV3 training, avg factor 1");
	spec_bn(&s, 0, 1, TFK_DT_FLOAT, 4);
	torch_case(&s, "bn_infer", "bn_infer", "eps=0.001", 1e-5,
		   "FusedBatchNormV3 inference");
	spec_bn(&s, 1, 0.01f, TFK_DT_FLOAT, 2);
	torch_case(&s, "bn_2d", "bn_train", "eps=0.001 factor=0.01", 1e-5,
		   "FusedBatchNormV3 training on [b, c]");
	spec_gather(&s, TFK_DT_FLOAT, TFK_DT_INT64);
	torch_case(&s, "emb", "embedding", "ishape=3x5", 1e-6,
		   "GatherV2 + UnsortedSegmentSum (embedding)");
	torch_compare();
}

/* Finite differences ------------------------------------------------- */

/* sum(out0 * seed) of the current run. */
static double loss_of(struct runner *r, const struct spec *s)
{
	struct tfk_err err = { 0, "" };
	double l = 0;
	int64_t i, n;

	if (runner_run(r, 0, &err)) {
		tap_diag("run: %s", err.msg);
		return NAN;
	}
	n = tfk_tensor_numel(r->out[0]);
	for (i = 0; i < n; i++)
		l += at(r->out[0], i) * at(&s->seed, i);
	return l;
}

/* Check d/d input k for every marked input. Consumes s. */
static void fd_case(struct spec *s, const char *what)
{
	struct runner r;
	struct tfk_err err = { 0, "" };
	double worst = 0;
	int k, j = 0, bad = 0;
	double *grads[MAX_IN] = { 0 };

	if (runner_new(&r, s, &err) || runner_run(&r, 0, &err)) {
		ok(0, "%s: ran: %s", what, err.msg);
		runner_free(&r);
		spec_free(s);
		return;
	}
	for (k = 0; k < s->n_in; k++)
		if (s->grad[k] && !s->is_const[k]) {
			const struct tfk_tensor *g = r.out[s->n_out + j++];

			grads[k] = malloc(g->nbytes);
			memcpy(grads[k], g->data, g->nbytes);
		}
	for (k = 0; k < s->n_in; k++) {
		double *p = s->in[k].data;
		int64_t i, n = tfk_tensor_numel(&s->in[k]);

		if (!grads[k])
			continue;
		for (i = 0; i < n; i++) {
			const double h = 1e-6;
			double keep = p[i], up, down, num, e;

			p[i] = keep + h;
			up = loss_of(&r, s);
			p[i] = keep - h;
			down = loss_of(&r, s);
			p[i] = keep;
			num = (up - down) / (2 * h);
			e = fabs(grads[k][i] - num) / (1 + fabs(num));
			if (e > worst)
				worst = e;
			if (!(e <= 1e-6)) {
				if (bad < 3)
					tap_diag("%s: d/d in%d[%lld]: %.9g, "
						 "numeric %.9g", what, k,
						 (long long)i, grads[k][i],
						 num);
				bad++;
			}
		}
		free(grads[k]);
	}
	ok(!bad, "%s: gradient == central differences (max err %.2g)", what,
	   worst);
	runner_free(&r);
	spec_free(s);
}

static void finite_differences(void)
{
	static const char *const acts[] = { "Relu6", "Elu", "Selu",
					    "LeakyRelu", "Softplus",
					    "LogSoftmax", "Erf" };
	struct spec s;
	size_t i;

	for (i = 0; i < sizeof(acts) / sizeof(acts[0]); i++) {
		if (!strcmp(acts[i], "Erf") && !tfk_op_find("Exp")) {
			ok(0, "Erf finite differences: Exp not registered");
			continue;
		}
		spec_act(&s, acts[i], TFK_DT_DOUBLE, 0.3f);
		fd_case(&s, acts[i]);
	}
	spec_xent(&s, 0, TFK_DT_DOUBLE, 0);
	fd_case(&s, "SoftmaxCrossEntropyWithLogits (logits and labels)");
	spec_xent(&s, 1, TFK_DT_DOUBLE, TFK_DT_INT32);
	fd_case(&s, "SparseSoftmaxCrossEntropyWithLogits");
	spec_bn(&s, 1, 1, TFK_DT_DOUBLE, 4);
	fd_case(&s, "FusedBatchNormV3 training (x, scale, offset)");
	spec_bn(&s, 0, 1, TFK_DT_DOUBLE, 4);
	fd_case(&s, "FusedBatchNormV3 inference (x, scale, offset)");
	spec_gather(&s, TFK_DT_DOUBLE, TFK_DT_INT32);
	fd_case(&s, "GatherV2 axis 0 (params)");
	{
		/* UnsortedSegmentSum's gradient (GatherV2) */
		int64_t dsh[2] = { 6, 3 }, ish[1] = { 6 }, osh[2] = { 4, 3 };

		memset(&s, 0, sizeof(s));
		s.op = "UnsortedSegmentSum";
		set_in(&s, 0, TFK_DT_DOUBLE, 2, dsh, -1, 1);
		set_in(&s, 1, TFK_DT_INT32, 1, ish, 0, 4);
		set_in(&s, 2, TFK_DT_INT32, 0, NULL, 4, 5);
		s.is_const[1] = s.is_const[2] = 1;
		s.grad[0] = 1;
		s.n_out = 1;
		set_seed(&s, TFK_DT_DOUBLE, 2, osh);
		fd_case(&s, "UnsortedSegmentSum (data)");
	}
}

/* Fast paths vs _refs ------------------------------------------------ */

static int close_all(const struct tfk_tensor *a, const struct tfk_tensor *b,
		     double bound, double *worst)
{
	int64_t i, n = tfk_tensor_numel(a);
	int bad = 0;

	if (tfk_tensor_numel(b) != n)
		return 1;
	for (i = 0; i < n; i++) {
		double e = fabs(at(a, i) - at(b, i)) / fmax(fabs(at(b, i)), 1);

		if (!(e <= bound))
			bad++;
		if (e > *worst)
			*worst = e;
	}
	return bad;
}

static void fast_vs_ref(void)
{
	static const int64_t shapes[][3] = {
		{ 2, 1, 1 }, { 2, 7, 13 }, { 2, 64, 100 }, { 2, 3, 0 },
		{ 2, 1000, 37 },
	};
	struct tfk_err err = { 0, "" };
	double worst = 0;
	int bad = 0, op;
	size_t si;

	for (si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++) {
		const int64_t *sh = shapes[si] + 1;
		struct tfk_tensor x, g, a, b, lab, l1, l2;

		mk(&x, TFK_DT_FLOAT, 2, sh);
		mk(&g, TFK_DT_FLOAT, 2, sh);
		mk(&a, TFK_DT_FLOAT, 2, sh);
		mk(&b, TFK_DT_FLOAT, 2, sh);
		fill(&x, -20, 20);
		fill(&g, -1, 1);
		for (op = TFK_ACT_RELU6; op <= TFK_ACT_ERF; op++) {
			bad += tfk_cpu_act(op, 0.3f, &x, &a, &err) != 0;
			bad += tfk_cpu_act_ref(op, 0.3f, &x, &b, &err) != 0;
			bad += close_all(&a, &b, 2e-6, &worst);
			if (op == TFK_ACT_ERF)
				continue;
			bad += tfk_cpu_act_grad(op, 0.3f, &g, &x, &a, &err);
			bad += tfk_cpu_act_grad_ref(op, 0.3f, &g, &x, &b,
						    &err);
			bad += close_all(&a, &b, 2e-6, &worst);
		}
		bad += tfk_cpu_log_softmax(&x, &a, &err) != 0;
		bad += tfk_cpu_log_softmax_ref(&x, &b, &err) != 0;
		bad += close_all(&a, &b, 2e-6, &worst);
		mk(&lab, TFK_DT_FLOAT, 2, sh);
		fill(&lab, 0, 0.2);
		mk(&l1, TFK_DT_FLOAT, 1, sh);
		mk(&l2, TFK_DT_FLOAT, 1, sh);
		bad += tfk_cpu_xent(&x, &lab, &l1, &a, &err) != 0;
		bad += tfk_cpu_xent_ref(&x, &lab, &l2, &b, &err) != 0;
		bad += close_all(&a, &b, 2e-6, &worst);
		bad += close_all(&l1, &l2, 2e-6, &worst);
		tfk_tensor_release(&lab);
		if (sh[1]) {
			mk(&lab, TFK_DT_INT64, 1, sh);
			fill_int(&lab, 0, sh[1]);
			bad += tfk_cpu_sparse_xent(&x, &lab, &l1, &a, &err);
			bad += tfk_cpu_sparse_xent_ref(&x, &lab, &l2, &b,
						       &err);
			bad += close_all(&a, &b, 2e-6, &worst);
			bad += close_all(&l1, &l2, 2e-6, &worst);
			tfk_tensor_release(&lab);
		}
		tfk_tensor_release(&l1);
		tfk_tensor_release(&l2);
		tfk_tensor_release(&x);
		tfk_tensor_release(&g);
		tfk_tensor_release(&a);
		tfk_tensor_release(&b);
	}
	is_int(bad, 0, "activations, their grads, LogSoftmax, both "
	       "cross-entropies: fast == _ref (max err %.2g)", worst);

	/* batch norm: shapes, threads, both modes */
	double sum_worst = 0;

	worst = 0;
	bad = 0;
	{
		static const int64_t bsh[][4] = {
			{ 2, 3, 4, 5 }, { 32, 12, 12, 32 }, { 64, 8, 8, 16 },
			{ 1, 1, 1, 7 },
		};
		size_t i;
		int train, th;

		for (i = 0; i < sizeof(bsh) / sizeof(bsh[0]); i++)
			for (train = 0; train < 2; train++)
				for (th = 1; th <= 3; th += 2) {
			struct tfk_tensor x, dy, v[4], o1[5], o2[5], g1[3],
				g2[3];
			struct tfk_bn p = { 1e-3f, train ? 0.1f : 1, train };
			int64_t c = bsh[i][3];
			int k;

			mk(&x, TFK_DT_FLOAT, 4, bsh[i]);
			mk(&dy, TFK_DT_FLOAT, 4, bsh[i]);
			fill(&x, 3, 9);	/* mean >> std: cancellation */
			fill(&dy, -1, 1);
			for (k = 0; k < 4; k++) {
				mk(&v[k], TFK_DT_FLOAT, 1, &c);
				fill(&v[k], 0.5, 2);
			}
			mk(&o1[0], TFK_DT_FLOAT, 4, bsh[i]);
			mk(&o2[0], TFK_DT_FLOAT, 4, bsh[i]);
			mk(&g1[0], TFK_DT_FLOAT, 4, bsh[i]);
			mk(&g2[0], TFK_DT_FLOAT, 4, bsh[i]);
			for (k = 1; k < 5; k++) {
				mk(&o1[k], TFK_DT_FLOAT, 1, &c);
				mk(&o2[k], TFK_DT_FLOAT, 1, &c);
			}
			for (k = 1; k < 3; k++) {
				mk(&g1[k], TFK_DT_FLOAT, 1, &c);
				mk(&g2[k], TFK_DT_FLOAT, 1, &c);
			}
			bad += tfk_cpu_batch_norm(&p, &x, &v[0], &v[1], &v[2],
						  &v[3], &o1[0], &o1[1],
						  &o1[2], &o1[3], &o1[4], th,
						  NULL, &err) != 0;
			bad += tfk_cpu_batch_norm_ref(&p, &x, &v[0], &v[1],
						      &v[2], &v[3], &o2[0],
						      &o2[1], &o2[2], &o2[3],
						      &o2[4], &err) != 0;
			for (k = 0; k < 5; k++)
				bad += close_all(&o1[k], &o2[k], 1e-5, &worst);
			bad += tfk_cpu_batch_norm_grad(&p, &dy, &x, &v[0],
						       &o2[3], &o2[4], &g1[0],
						       &g1[1], &g1[2], th,
						       NULL, &err) != 0;
			bad += tfk_cpu_batch_norm_grad_ref(&p, &dy, &x, &v[0],
							   &o2[3], &o2[4],
							   &g2[0], &g2[1],
							   &g2[2], &err) != 0;
			bad += close_all(&g1[0], &g2[0], 1e-5, &worst);
			/* dscale, doffset: sums over the rows */
			for (k = 0; k < c; k++) {
				double l1 = 0;
				int64_t r, rows = tfk_tensor_numel(&x) / c;

				for (r = 0; r < rows; r++)
					l1 += fabs(at(&dy, r * c + k));
				bad += !(fabs(at(&g1[1], k) - at(&g2[1], k)) <=
					 4e-6 * l1);
				bad += !(fabs(at(&g1[2], k) - at(&g2[2], k)) <=
					 2e-6 * l1);
				if (fabs(at(&g1[1], k) - at(&g2[1], k)) / l1 >
				    sum_worst)
					sum_worst = fabs(at(&g1[1], k) -
							 at(&g2[1], k)) / l1;
			}
			tfk_tensor_release(&x);
			tfk_tensor_release(&dy);
			for (k = 0; k < 4; k++)
				tfk_tensor_release(&v[k]);
			for (k = 0; k < 5; k++) {
				tfk_tensor_release(&o1[k]);
				tfk_tensor_release(&o2[k]);
			}
			for (k = 0; k < 3; k++) {
				tfk_tensor_release(&g1[k]);
				tfk_tensor_release(&g2[k]);
			}
		}
	}
	is_int(bad, 0, "batch norm and its grad, 1 and 3 threads, training "
	       "and inference: fast == _ref (max err %.2g; dscale %.2g of "
	       "sum |dy|)", worst, sum_worst);

	/* gather and segment sum: exact */
	bad = 0;
	{
		int64_t ps[3] = { 4, 6, 5 }, is[2] = { 3, 7 };
		struct tfk_tensor p, ix, a, b, d, ids;
		int axis;

		mk(&p, TFK_DT_FLOAT, 3, ps);
		fill(&p, -1, 1);
		mk(&ix, TFK_DT_INT32, 2, is);
		for (axis = 0; axis < 3; axis++) {
			int64_t os[4], r = 0;
			int k;

			fill_int(&ix, 0, ps[axis]);
			for (k = 0; k < axis; k++)
				os[r++] = ps[k];
			os[r++] = 3;
			os[r++] = 7;
			for (k = axis + 1; k < 3; k++)
				os[r++] = ps[k];
			mk(&a, TFK_DT_FLOAT, 4, os);
			mk(&b, TFK_DT_FLOAT, 4, os);
			bad += tfk_cpu_gather(&p, &ix, axis, &a, &err) != 0;
			bad += tfk_cpu_gather_ref(&p, &ix, axis, &b, &err);
			bad += !tfk_tensor_equal(&a, &b);
			tfk_tensor_release(&a);
			tfk_tensor_release(&b);
		}
		/* segment sum: data [3, 7, 5] by ids [3, 7] into [9, 5],
		 * with negative ids dropped */
		{
			int64_t ds[3] = { 3, 7, 5 }, os[2] = { 9, 5 };

			mk(&d, TFK_DT_FLOAT, 3, ds);
			fill(&d, -1, 1);
			mk(&ids, TFK_DT_INT64, 2, is);
			fill_int(&ids, -2, 9);
			mk(&a, TFK_DT_FLOAT, 2, os);
			mk(&b, TFK_DT_FLOAT, 2, os);
			bad += tfk_cpu_segment_sum(&d, &ids, &a, &err) != 0;
			bad += tfk_cpu_segment_sum_ref(&d, &ids, &b, &err);
			bad += !tfk_tensor_equal(&a, &b);
			tfk_tensor_release(&a);
			tfk_tensor_release(&b);
			tfk_tensor_release(&d);
			tfk_tensor_release(&ids);
		}
		tfk_tensor_release(&p);
		tfk_tensor_release(&ix);
	}
	is_int(bad, 0, "GatherV2 on each axis and UnsortedSegmentSum (negative "
	       "ids dropped): fast == _ref, bit for bit");
}

/* Hand-computed values ------------------------------------------------ */

static void known_values(void)
{
	struct tfk_err err = { 0, "" };
	int64_t s2[2] = { 1, 3 }, s1[1] = { 1 };
	float x[3] = { 1, 2, 3 }, bp[3], loss, lab3[3] = { 0, 0, 1 };
	int64_t lab = 2;
	struct tfk_tensor tx, tl, tloss, tbp, tlab;
	double lse = 3 + log(exp(-2.0) + exp(-1.0) + 1);
	int rc;

	tfk_tensor_init_view(&tx, TFK_DT_FLOAT, 2, s2, x, 12,
			     TFK_OWN_BORROWED, NULL);
	tfk_tensor_init_view(&tl, TFK_DT_INT64, 1, s1, &lab, 8,
			     TFK_OWN_BORROWED, NULL);
	tfk_tensor_init_view(&tloss, TFK_DT_FLOAT, 1, s1, &loss, 4,
			     TFK_OWN_BORROWED, NULL);
	tfk_tensor_init_view(&tbp, TFK_DT_FLOAT, 2, s2, bp, 12,
			     TFK_OWN_BORROWED, NULL);
	rc = tfk_cpu_sparse_xent(&tx, &tl, &tloss, &tbp, &err);
	ok(!rc && fabs(loss - (lse - 3)) < 1e-6 &&
	   fabs(bp[2] - (exp(3 - lse) - 1)) < 1e-6 &&
	   fabs(bp[0] - exp(1 - lse)) < 1e-6,
	   "sparse xent of [1 2 3], label 2: loss %.7f = logsumexp - 3",
	   loss);
	tfk_tensor_init_view(&tlab, TFK_DT_FLOAT, 2, s2, lab3, 12,
			     TFK_OWN_BORROWED, NULL);
	ok(!tfk_cpu_xent(&tx, &tlab, &tloss, &tbp, &err) &&
	   fabs(loss - (lse - 3)) < 1e-6, "dense xent with one-hot labels "
	   "equals the sparse loss");
	/* huge logits: no overflow */
	x[0] = 1e4f, x[1] = -1e4f, x[2] = 1e4f;
	ok(!tfk_cpu_sparse_xent(&tx, &tl, &tloss, &tbp, &err) &&
	   fabs(loss - log(2.0)) < 1e-6 && fabs(bp[2] + 0.5) < 1e-6,
	   "logits of 1e4: loss log 2, finite");
	lab = 3;
	is_int(tfk_cpu_sparse_xent(&tx, &tl, &tloss, &tbp, &err), TFK_EINVAL,
	       "label 3 of 3 classes refused");
	is_str(err.msg, "row 0: received a label value of 3 which is outside "
	       "the valid range of [0, 3)", "message names row and value");
	lab = -1;
	is_int(tfk_cpu_sparse_xent_ref(&tx, &tl, &tloss, &tbp, &err),
	       TFK_EINVAL, "label -1 refused by the _ref too");
}

/* Errors through the graph ------------------------------------------- */

static void graph_errors(void)
{
	struct tfk_graph *g;
	struct tfk_err err = { 0, "" };
	int64_t f[2] = { -1, 10 }, l1[1] = { -1 }, l2[2] = { -1, 9 };
	int64_t r1[1] = { 10 }, sh4[4] = { 2, 2, 2, 3 }, c4[1] = { 4 };
	struct tfk_port x, lab, y, p, in[5], d[1], seed;
	struct tfk_attr msg = TFK_A_STR("message", "no way");

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 2, f, &x, &err);
	tfk_graph_placeholder(g, "l", TFK_DT_INT32, 1, l1, &lab, &err);
	in[0] = x, in[1] = lab;
	ok(!tfk_graph_add_node(g, "SparseSoftmaxCrossEntropyWithLogits",
			       "xent", in, 2, NULL, 0, &y, &err),
	   "sparse xent [?, 10] with int32 [?] labels: %s", err.msg);
	ok(tfk_graph_desc(g, y)->rank == 1 &&
	   tfk_graph_desc(g, (struct tfk_port){ y.node, 1 })->shape[1] == 10,
	   "loss [?], backprop [?, 10]");
	is_int(tfk_node_attr_type(tfk_graph_node(g, y.node), "Tlabels", 0),
	       TFK_DT_INT32, "Tlabels taken from the labels");
	tfk_graph_placeholder(g, "l2", TFK_DT_FLOAT, 2, l2, &in[1], &err);
	is_int(tfk_graph_add_node(g, "SoftmaxCrossEntropyWithLogits", NULL,
				  in, 2, NULL, 0, &y, &err), TFK_EINVAL,
	       "dense labels [?, 9] for features [?, 10]");
	ok(strstr(err.msg, "labels [?, 9] do not match features [?, 10]") !=
	   NULL, "message: %s", err.msg);
	tfk_graph_placeholder(g, "v", TFK_DT_FLOAT, 1, r1, &in[0], &err);
	is_int(tfk_graph_add_node(g, "LogSoftmax", NULL, in, 0, NULL, 0, &y,
				  &err), TFK_EINVAL, "LogSoftmax without input");
	is_int(tfk_graph_add_node(g, "SparseSoftmaxCrossEntropyWithLogits",
				  NULL, in, 2, NULL, 0, &y, &err), TFK_EINVAL,
	       "1-D features refused");

	/* batch norm: scale of 4 for 3 channels */
	tfk_graph_placeholder(g, "bx", TFK_DT_FLOAT, 4, sh4, &in[0], &err);
	for (int k = 1; k < 5; k++)
		tfk_graph_placeholder(g, NULL, TFK_DT_FLOAT, 1, c4, &in[k],
				      &err);
	is_int(tfk_graph_add_node(g, "FusedBatchNormV3", NULL, in, 5, NULL, 0,
				  &y, &err), TFK_EINVAL,
	       "scale [4] for 3 channels");
	ok(strstr(err.msg, "input 1: 4 values for 3 channels") != NULL,
	   "message: %s", err.msg);
	{
		struct tfk_attr fmt = TFK_A_STR("data_format", "NCHW");

		c4[0] = 3;
		for (int k = 1; k < 5; k++)
			tfk_graph_placeholder(g, NULL, TFK_DT_FLOAT, 1, c4,
					      &in[k], &err);
		is_int(tfk_graph_add_node(g, "FusedBatchNormV3", NULL, in, 5,
					  &fmt, 1, &y, &err), TFK_EINVAL,
		       "NCHW refused");
		ok(!tfk_graph_add_node(g, "FusedBatchNormV3", "bn", in, 5,
				       NULL, 0, &y, &err) &&
		   tfk_graph_desc(g, (struct tfk_port){ y.node, 5 })->rank == 0,
		   "NHWC accepted; reserve_space_3 is a scalar");
		ok(tfk_node_attr_f(tfk_graph_node(g, y.node), "epsilon", 0) ==
		   1e-4f && tfk_node_attr_b(tfk_graph_node(g, y.node),
					    "is_training", 0) == 1,
		   "defaults: epsilon 1e-4, is_training true");
	}

	/* PreventGradient */
	ok(!tfk_graph_add_node(g, "PreventGradient", "pg", &x, 1, &msg, 1, &p,
			       &err), "PreventGradient");
	tfk_graph_placeholder(g, "gs", TFK_DT_FLOAT, 2, f, &seed, &err);
	is_int(tfk_graph_gradients(g, &p, &seed, 1, &x, 1, d, &err),
	       TFK_EINVAL, "its gradient is an error");
	is_str(err.msg, "node pg: gradient explicitly disabled. Reason: no way",
	       "message");
	/* StopGradient: no gradient, no error */
	ok(!tfk_graph_add_node(g, "StopGradient", "sg", &x, 1, NULL, 0, &p,
			       &err), "StopGradient");
	ok(!tfk_graph_gradients(g, &p, &seed, 1, &x, 1, d, &err) &&
	   d[0].node < 0, "StopGradient: x gets no gradient");
	tfk_graph_free(g);
}

/* Run-time errors: labels and indices out of range. */
static void run_errors(void)
{
	struct spec s;
	struct runner r;
	struct tfk_err err = { 0, "" };

	spec_xent(&s, 1, TFK_DT_FLOAT, TFK_DT_INT64);
	((int64_t *)s.in[1].data)[5] = 12;
	ok(!runner_new(&r, &s, &err), "sparse xent graph");
	is_int(runner_run(&r, 0, &err), TFK_EINVAL, "label 12 of 10 at run");
	is_str(err.msg, "node op: row 5: received a label value of 12 which "
	       "is outside the valid range of [0, 10)", "message");
	runner_free(&r);
	spec_free(&s);

	spec_gather(&s, TFK_DT_FLOAT, TFK_DT_INT32);
	((int32_t *)s.in[1].data)[7] = 10;
	ok(!runner_new(&r, &s, &err), "gather graph");
	is_int(runner_run(&r, 0, &err), TFK_EINVAL, "index 10 of 10");
	is_str(err.msg, "node op: indices[1,2] = 10 is not in [0, 10)",
	       "message names the index");
	runner_free(&r);
	spec_free(&s);

	{
		int64_t ds[1] = { 3 };
		int32_t idv[3] = { 0, 5, 1 };

		memset(&s, 0, sizeof(s));
		s.op = "UnsortedSegmentSum";
		set_in(&s, 0, TFK_DT_FLOAT, 1, ds, 0, 1);
		set_in(&s, 1, TFK_DT_INT32, 1, ds, 0, 1);
		memcpy(s.in[1].data, idv, sizeof(idv));
		set_in(&s, 2, TFK_DT_INT32, 0, NULL, 3, 4);
		s.is_const[2] = 1;
		s.n_out = 1;
		ok(!runner_new(&r, &s, &err), "segment sum graph");
		is_int(runner_run(&r, 0, &err), TFK_EINVAL, "id 5 of 3");
		is_str(err.msg, "node op: segment_ids[1] = 5 is out of range "
		       "[0, 3)", "message");
		runner_free(&r);
		spec_free(&s);
	}
}

/* Random ---------------------------------------------------------------- */

static struct tfk_graph *random_graph(const char *op, enum tfk_dtype dt,
				      int64_t n)
{
	struct tfk_graph *g;
	struct tfk_err err = { 0, "" };
	struct tfk_port s, y;
	struct tfk_attr a = TFK_A_TYPE("dtype", dt);
	int32_t shape[2] = { (int32_t)(n / 100), 100 };

	tfk_graph_new(&g, &err);
	tfk_graph_const_i32v(g, "shape", shape, 2, &s, &err);
	if (tfk_graph_add_node(g, op, "r", &s, 1, &a, 1, &y, &err))
		tap_diag("%s: %s", op, err.msg);
	return g;
}

static void random_ops(void)
{
	const char *fetch[] = { "r" };
	struct tfk_exec_opts o1 = { NULL, 7, 1 }, o2 = { NULL, 7, 2 };
	struct tfk_exec_opts o3 = { NULL, 8, 1 };
	struct tfk_err err = { 0, "" };
	const int64_t n = 100000;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		const char *op = pass ? "RandomStandardNormal" :
			"RandomUniform";
		struct tfk_graph *g = random_graph(op, TFK_DT_FLOAT, n);
		struct tfk_exec *a, *b, *c;
		const struct tfk_tensor *ya, *yb, *yc;
		struct tfk_tensor keep;
		double sum = 0, sq = 0, lo = 1e9, hi = -1e9, m, v;
		int64_t i;

		ok(!tfk_exec_new(&a, g, NULL, 0, fetch, 1, &o1, &err) &&
		   !tfk_exec_new(&b, g, NULL, 0, fetch, 1, &o2, &err) &&
		   !tfk_exec_new(&c, g, NULL, 0, fetch, 1, &o3, &err),
		   "%s: execs: %s", op, err.msg);
		ok(!tfk_exec_run(a, NULL, 3, &ya, &err), "%s: run: %s", op,
		   err.msg);
		ok(ya->rank == 2 && ya->shape[0] == 1000 &&
		   ya->shape[1] == 100, "%s: shape [1000, 100] from the "
		   "shape input", op);
		for (i = 0; i < n; i++) {
			double x = ((const float *)ya->data)[i];

			sum += x;
			sq += x * x;
			lo = x < lo ? x : lo;
			hi = x > hi ? x : hi;
		}
		m = sum / n;
		v = sq / n - m * m;
		if (!pass) {
			ok(lo >= 0 && hi < 1, "uniform in [0, 1): min %g max "
			   "%.9g", lo, hi);
			/* mean sd sqrt(1/12/n); var of U is 1/12, its
			 * estimate's sd sqrt(1/180/n) */
			ok(fabs(m - 0.5) < 4 * sqrt(1.0 / 12 / n),
			   "uniform mean %.5f within 4 sigma of 0.5", m);
			ok(fabs(v - 1.0 / 12) < 4 * sqrt(1.0 / 180 / n),
			   "uniform variance %.5f within 4 sigma of 1/12", v);
		} else {
			ok(fabs(m) < 4 / sqrt((double)n),
			   "normal mean %.5f within 4 sigma of 0", m);
			ok(fabs(v - 1) < 4 * sqrt(2.0 / n),
			   "normal variance %.5f within 4 sigma of 1", v);
			ok(lo > -7 && hi < 7 && lo < -3 && hi > 3,
			   "normal range [%.2f, %.2f]", lo, hi);
		}
		tfk_tensor_copy(&keep, ya, NULL);
		ok(!tfk_exec_run(b, NULL, 3, &yb, &err) &&
		   tfk_tensor_equal(&keep, yb),
		   "%s: same seed and step, 2 threads: same values", op);
		ok(!tfk_exec_run(a, NULL, 3, &ya, &err) &&
		   tfk_tensor_equal(&keep, ya), "%s: rerun of step 3: same "
		   "values", op);
		ok(!tfk_exec_run(a, NULL, 4, &ya, &err) &&
		   !tfk_tensor_equal(&keep, ya) &&
		   memcmp(keep.data, ya->data, 400) != 0,
		   "%s: step 4: different values", op);
		ok(!tfk_exec_run(c, NULL, 3, &yc, &err) &&
		   memcmp(keep.data, yc->data, 400) != 0,
		   "%s: seed 8: different values", op);
		tfk_tensor_release(&keep);
		tfk_exec_free(a);
		tfk_exec_free(b);
		tfk_exec_free(c);
		tfk_graph_free(g);
	}

	/* fast (threaded) == _ref, float and double, odd length */
	{
		int64_t s[1] = { 40001 };
		struct tfk_tensor a, b;
		int bad = 0, dt;

		for (dt = 0; dt < 2; dt++) {
			enum tfk_dtype t = dt ? TFK_DT_DOUBLE : TFK_DT_FLOAT;

			mk(&a, t, 1, s);
			mk(&b, t, 1, s);
			tfk_cpu_random_uniform(99, &a, 2, &err);
			tfk_cpu_random_uniform_ref(99, &b, &err);
			bad += !tfk_tensor_equal(&a, &b);
			tfk_cpu_random_normal(99, &a, 2, &err);
			tfk_cpu_random_normal_ref(99, &b, &err);
			bad += !tfk_tensor_equal(&a, &b);
			tfk_tensor_release(&a);
			tfk_tensor_release(&b);
		}
		is_int(bad, 0, "threaded uniform/normal == _ref, bit for bit");
		mk(&a, TFK_DT_INT32, 1, s);
		is_int(tfk_cpu_random_uniform(1, &a, 1, &err), TFK_EINVAL,
		       "int32 random refused");
		tfk_tensor_release(&a);
	}
	/* shape from a Placeholder-fed int vector: rank known, dims not */
	{
		struct tfk_graph *g;
		struct tfk_port s, y;
		struct tfk_attr at = TFK_A_TYPE("dtype", TFK_DT_FLOAT);
		int64_t three[1] = { 3 };

		tfk_graph_new(&g, &err);
		tfk_graph_placeholder(g, "s", TFK_DT_INT64, 1, three, &s,
				      &err);
		ok(!tfk_graph_add_node(g, "RandomUniform", NULL, &s, 1, &at, 1,
				       &y, &err) &&
		   tfk_graph_desc(g, y)->rank == 3 &&
		   tfk_graph_desc(g, y)->shape[0] == -1,
		   "shape input not known at build: rank 3, dims unknown");
		tfk_graph_free(g);
	}
}

/*
 * Dropout as the front end composes it (TF's dropout): y = x * 2 *
 * Cast(RandomUniform(Shape(x)) >= 0.5), x [?, 50] fed [40, 50]: the
 * random shape comes from Shape(x) folded while planning; dy/dx is the
 * scaled mask and no gradient is asked of the random branch.
 */
static void dropout(void)
{
	struct tfk_graph *g;
	struct tfk_err err = { 0, "" };
	int64_t xs[2] = { -1, 50 }, fs[2] = { 40, 50 }, i, kept = 0;
	struct tfk_port x, sh, r, half, two, m, y, seed, dx;
	struct tfk_attr dt = TFK_A_TYPE("dtype", TFK_DT_FLOAT);
	struct tfk_attr to = TFK_A_TYPE("DstT", TFK_DT_FLOAT);
	const char *feeds[] = { "x", "g" }, *fetch[] = { "y", "dx" };
	const struct tfk_tensor *out[2];
	struct tfk_tensor feed[2];
	struct tfk_exec *ex = NULL;
	int rc, bad = 0;

	tfk_graph_new(&g, &err);
	rc = tfk_graph_placeholder(g, "x", TFK_DT_FLOAT, 2, xs, &x, &err);
	if (!rc)
		rc = tfk_graph_add_node(g, "Shape", NULL, &x, 1, NULL, 0, &sh,
					&err);
	if (!rc)
		rc = tfk_graph_add_node(g, "RandomUniform", NULL, &sh, 1, &dt,
					1, &r, &err);
	if (!rc)
		rc = tfk_graph_const_f32(g, "rate", 0.5f, &half, &err);
	if (!rc)
		rc = tfk_graph_const_f32(g, "scale", 2, &two, &err);
	if (!rc) {
		struct tfk_port in[2] = { r, half };

		rc = tfk_graph_add_node(g, "GreaterEqual", NULL, in, 2, NULL,
					0, &m, &err);
	}
	if (!rc)
		rc = tfk_graph_add_node(g, "Cast", NULL, &m, 1, &to, 1, &m,
					&err);
	if (!rc) {
		struct tfk_port in[2] = { x, two };

		rc = tfk_graph_add_node(g, "Mul", NULL, in, 2, NULL, 0, &y,
					&err);
	}
	if (!rc) {
		struct tfk_port in[2] = { y, m };

		rc = tfk_graph_add_node(g, "Mul", "y", in, 2, NULL, 0, &y,
					&err);
	}
	if (!rc)
		rc = tfk_graph_placeholder(g, "g", TFK_DT_FLOAT, 2, xs, &seed,
					   &err);
	if (!rc)
		rc = tfk_graph_gradients(g, &y, &seed, 1, &x, 1, &dx, &err);
	if (!rc)
		rc = tfk_graph_set_output(g, "dx", dx, &err);
	if (!rc)
		rc = tfk_exec_new(&ex, g, feeds, 2, fetch, 2, NULL, &err);
	if (!ok(!rc, "dropout graph with its gradient: %s", err.msg)) {
		tfk_graph_free(g);
		return;
	}
	mk(&feed[0], TFK_DT_FLOAT, 2, fs);
	fill(&feed[0], 1, 2);
	mk(&feed[1], TFK_DT_FLOAT, 2, fs);
	for (i = 0; i < 2000; i++)
		((float *)feed[1].data)[i] = 1;
	ok(!tfk_exec_run(ex, feed, 5, out, &err) && out[0]->shape[0] == 40,
	   "run with batch 40: %s", err.msg);
	for (i = 0; i < 2000; i++) {
		float xv = ((float *)feed[0].data)[i];
		float yv = ((const float *)out[0]->data)[i];
		float gv = ((const float *)out[1]->data)[i];

		if (yv != 0) {
			kept++;
			bad += yv != 2 * xv || gv != 2;
		} else {
			bad += gv != 0;
		}
	}
	is_int(bad, 0, "y = 2x where kept, else 0; dy/dx = 2 * mask");
	/* binomial(2000, 0.5): sd 22.4 */
	ok(kept > 1000 - 90 && kept < 1000 + 90, "%lld of 2000 kept (4 sigma "
	   "of 1000)", (long long)kept);
	tfk_tensor_release(&feed[0]);
	tfk_tensor_release(&feed[1]);
	tfk_exec_free(ex);
	tfk_graph_free(g);
}

int main(void)
{
	known_values();
	fast_vs_ref();
	graph_errors();
	run_errors();
	random_ops();
	dropout();
	finite_differences();
	against_torch();
	return tap_done();
}
