/*
 * metrics.c - tfk-serve's Prometheus metrics, with TF Serving's names,
 * labels and buckets (TF's monitoring names with '/' written ':', as its
 * Prometheus exporter writes them):
 *
 *   :tensorflow:serving:request_count{model_name,status}       counter
 *       (predict, classify and regress requests)
 *   :tensorflow:serving:request_latency{model_name,API,entrypoint}
 *   :tensorflow:serving:runtime_latency{model_name,API,runtime}
 *       histograms of microseconds, buckets 10 * 1.8^i, i = 0..32
 *   :tensorflow:serving:request_example_counts{model}
 *       histogram of examples per classify/regress request, 2^i, 0..14
 *   :tensorflow:serving:request_example_count_total{model}     counter
 *   :tensorflow:serving:batching:processed_batch_size{model_name,signature}
 *   :tensorflow:serving:batching:padding_size{model_name,signature}
 *       histograms of rows per batch run (padded) and padding rows, 2^i
 *       (after TF's batching metrics; the signature names the queue)
 *
 * status is the request's canonical code name ("OK",
 * "INVALID_ARGUMENT", ...), API the method ("Predict", "Classify",
 * "Regress", "GetModelMetadata", "GetModelStatus"), entrypoint "REST",
 * runtime "tfkit". One mutex guards the cells: a request takes it once
 * or twice for a few additions, far below the cost of its JSON.
 */
#include "serve.h"
#include "util/alloc.h"
#include "util/buf.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

enum fam {
	F_REQUEST_COUNT, F_REQUEST_LATENCY, F_RUNTIME_LATENCY,
	F_EXAMPLE_COUNTS, F_EXAMPLE_TOTAL, F_BATCH_SIZE, F_PADDING, N_FAMS
};

#define N_LATENCY 33
#define N_EXAMPLES 15
#define MAX_BUCKETS N_LATENCY

static const struct family {
	const char *name, *type;
	const char *label[3];
	int n_buckets;
} fams[N_FAMS] = {
	{ ":tensorflow:serving:request_count", "counter",
	  { "model_name", "status", NULL }, 0 },
	{ ":tensorflow:serving:request_latency", "histogram",
	  { "model_name", "API", "entrypoint" }, N_LATENCY },
	{ ":tensorflow:serving:runtime_latency", "histogram",
	  { "model_name", "API", "runtime" }, N_LATENCY },
	{ ":tensorflow:serving:request_example_counts", "histogram",
	  { "model", NULL, NULL }, N_EXAMPLES },
	{ ":tensorflow:serving:request_example_count_total", "counter",
	  { "model", NULL, NULL }, 0 },
	{ ":tensorflow:serving:batching:processed_batch_size", "histogram",
	  { "model_name", "signature", NULL }, N_EXAMPLES },
	{ ":tensorflow:serving:batching:padding_size", "histogram",
	  { "model_name", "signature", NULL }, N_EXAMPLES },
};

struct cell {
	enum fam fam;
	char *model;
	const char *a, *b;		/* static strings */
	double sum;			/* counters: the count */
	uint64_t n;
	uint64_t bucket[MAX_BUCKETS + 1];	/* last: +Inf */
};

struct sv_metrics {
	pthread_mutex_t lock;
	struct cell *cells;
	int n_cells;
};

static double bound(enum fam f, int i)
{
	return f == F_REQUEST_LATENCY || f == F_RUNTIME_LATENCY ?
		10.0 * pow(1.8, i) : ldexp(1.0, i);
}

struct sv_metrics *sv_metrics_new(void)
{
	struct sv_metrics *m = tfk_calloc(1, sizeof(*m));

	if (m)
		pthread_mutex_init(&m->lock, NULL);
	return m;
}

void sv_metrics_free(struct sv_metrics *m)
{
	int i;

	if (!m)
		return;
	for (i = 0; i < m->n_cells; i++)
		tfk_free(m->cells[i].model);
	tfk_free(m->cells);
	pthread_mutex_destroy(&m->lock);
	tfk_free(m);
}

/* The cell of (f, model, a, b), made on first use (under m->lock). */
static struct cell *cell(struct sv_metrics *m, enum fam f, const char *model,
			 const char *a, const char *b)
{
	struct cell *c;
	int i;

	for (i = 0; i < m->n_cells; i++) {
		c = &m->cells[i];
		if (c->fam == f && !strcmp(c->model, model) && c->a == a &&
		    c->b == b)
			return c;
	}
	c = tfk_realloc(m->cells, (size_t)(m->n_cells + 1) * sizeof(*c));
	if (!c)
		return NULL;
	m->cells = c;
	c = &m->cells[m->n_cells];
	memset(c, 0, sizeof(*c));
	if (!(c->model = tfk_strdup(model)))
		return NULL;
	m->n_cells++;
	c->fam = f;
	c->a = a;
	c->b = b;
	return c;
}

static void add(struct sv_metrics *m, enum fam f, const char *model,
		const char *a, const char *b, double v)
{
	struct cell *c;
	int i;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	if ((c = cell(m, f, model, a, b))) {
		c->sum += v;
		c->n++;
		for (i = 0; i < fams[f].n_buckets && v > bound(f, i); i++)
			;
		c->bucket[i]++;
	}
	pthread_mutex_unlock(&m->lock);
}

/* TF Serving's canonical code name of an HTTP status it answers. */
static const char *code_of(unsigned status)
{
	switch (status) {
	case 200: return "OK";
	case 400: case 413: return "INVALID_ARGUMENT";
	case 404: return "NOT_FOUND";
	case 409: return "ALREADY_EXISTS";
	case 429: return "RESOURCE_EXHAUSTED";
	case 501: return "UNIMPLEMENTED";
	case 503: return "UNAVAILABLE";
	case 504: return "DEADLINE_EXCEEDED";
	default: return "INTERNAL";
	}
}

void sv_metrics_request(struct sv_metrics *m, const char *model,
			const char *api, unsigned status, double us)
{
	/* TF Serving counts inference requests only */
	if (!strcmp(api, "Predict") || !strcmp(api, "Classify") ||
	    !strcmp(api, "Regress"))
		add(m, F_REQUEST_COUNT, model, code_of(status), NULL, 1);
	add(m, F_REQUEST_LATENCY, model, api, "REST", us);
}

void sv_metrics_runtime(struct sv_metrics *m, const char *model,
			const char *api, double us)
{
	add(m, F_RUNTIME_LATENCY, model, api, "tfkit", us);
}

void sv_metrics_batch(struct sv_metrics *m, const char *model,
		      const char *sig, int64_t rows, int64_t size)
{
	add(m, F_BATCH_SIZE, model, sig, NULL, (double)size);
	add(m, F_PADDING, model, sig, NULL, (double)(size - rows));
}

void sv_metrics_examples(struct sv_metrics *m, const char *model, int n)
{
	add(m, F_EXAMPLE_COUNTS, model, NULL, NULL, n);
	add(m, F_EXAMPLE_TOTAL, model, NULL, NULL, n);
}

/* {l0="v0",l1="v1"[,le="x"]: label values are names tfk-serve checked,
 * free of '"' and '\\' except a model name, which is escaped. */
static void labels(struct tfk_buf *b, const struct family *f,
		   const struct cell *c, const char *le)
{
	const char *v[3] = { c->model, c->a, c->b };
	const char *p;
	int i;

	tfk_buf_adds(b, "{");
	for (i = 0; i < 3 && f->label[i]; i++) {
		tfk_buf_addf(b, "%s%s=\"", i ? "," : "", f->label[i]);
		for (p = v[i]; *p; p++) {
			if (*p == '"' || *p == '\\')
				tfk_buf_adds(b, "\\");
			if (*p == '\n')
				tfk_buf_adds(b, "\\n");
			else
				tfk_buf_add(b, p, 1);
		}
		tfk_buf_adds(b, "\"");
	}
	if (le)
		tfk_buf_addf(b, ",le=\"%s\"", le);
	tfk_buf_adds(b, "}");
}

void sv_metrics_text(struct sv_metrics *m, struct tfk_buf *b)
{
	enum fam f;
	int i, k;

	pthread_mutex_lock(&m->lock);
	for (f = 0; f < N_FAMS; f++) {
		const struct family *fm = &fams[f];
		int header = 0;

		for (i = 0; i < m->n_cells; i++) {
			const struct cell *c = &m->cells[i];
			uint64_t cum = 0;

			if (c->fam != f)
				continue;
			if (!header++)
				tfk_buf_addf(b, "# TYPE %s %s\n", fm->name,
					     fm->type);
			if (!fm->n_buckets) {
				tfk_buf_adds(b, fm->name);
				labels(b, fm, c, NULL);
				tfk_buf_addf(b, " %.17g\n", c->sum);
				continue;
			}
			for (k = 0; k <= fm->n_buckets; k++) {
				char le[32];

				cum += c->bucket[k];
				if (k < fm->n_buckets)
					snprintf(le, sizeof(le), "%.6g",
						 bound(f, k));
				else
					strcpy(le, "+Inf");
				tfk_buf_addf(b, "%s_bucket", fm->name);
				labels(b, fm, c, le);
				tfk_buf_addf(b, " %llu\n",
					     (unsigned long long)cum);
			}
			tfk_buf_addf(b, "%s_sum", fm->name);
			labels(b, fm, c, NULL);
			tfk_buf_addf(b, " %.17g\n", c->sum);
			tfk_buf_addf(b, "%s_count", fm->name);
			labels(b, fm, c, NULL);
			tfk_buf_addf(b, " %llu\n", (unsigned long long)c->n);
		}
	}
	pthread_mutex_unlock(&m->lock);
}
