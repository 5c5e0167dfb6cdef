/*
 * models.c - tfk-serve's models and their versions: TF Serving's
 * version policies over numbered version directories (model/versions.h),
 * loading, reference counts, labels and the status records.
 *
 * Each poll scans a model's base path, takes the complete versions,
 * leaves out one that failed to load and has not changed since (it is
 * retried once its model file changes; TF Serving retries a fixed
 * number of times instead, a changed file is the better signal), and
 * lets the policy (latest N, all, specific) pick the versions to serve.
 * Those not yet served are loaded first, then those no longer wanted
 * are unloaded: availability first, as TF Serving's default
 * AvailabilityPreservingPolicy, so a new version replaces the old one
 * without a gap, and a new version that fails to load leaves the one
 * served before serving. A version whose directory is gone is no longer
 * complete, so no longer wanted. Loads run on the main thread, one at a
 * time, while requests go on being answered.
 *
 * Requests hold a reference on the version they run on, so an unloaded
 * version is freed by the last request still using it, never under it.
 */
#include "model/modelconfig.h"
#include "model/servable.h"
#include "model/versions.h"
#include "serve.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

enum rec_state { REC_AVAILABLE = 1, REC_END = 2 };

/* What the status endpoint tells of a version seen. */
struct sv_rec {
	int64_t num;
	enum rec_state state;
	const char *code;	/* TF Serving's error_code: "OK", ... */
	char *msg;
	int64_t size, mtime_ns;	/* of the model file, when it failed */
};

static int rec_cmp(const void *a, const void *b);

static const char *code_name(int rc)
{
	switch (rc) {
	case TFK_EINVAL: return "INVALID_ARGUMENT";
	case TFK_ECORRUPT: case TFK_ETRUNC: return "DATA_LOSS";
	case TFK_ENOTFOUND: return "NOT_FOUND";
	case TFK_ENOMEM: return "RESOURCE_EXHAUSTED";
	default: return "UNKNOWN";
	}
}

/* Versions ---------------------------------------------------------------- */

static void version_free(struct sv_version *v)
{
	int i;

	sv_batchers_free(v);
	pthread_mutex_destroy(&v->batch_lock);
	for (i = 0; i < v->n_slots * v->n_sigs; i++)
		tfk_runner_free(v->runners[i]);
	tfk_free(v->runners);
	tfk_servable_close(v->s);
	tfk_free(v->path);
	tfk_free(v);
}

struct sv_version *sv_acquire(struct sv_model *m, int64_t num)
{
	struct sv_version *v = NULL;
	int i;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->n_served && !v; i++)
		if (num < 0 || m->served[i]->num == num)
			v = m->served[i];
	if (v)
		atomic_fetch_add(&v->refs, 1);
	pthread_mutex_unlock(&m->lock);
	return v;
}

void sv_release(struct sv_version *v)
{
	if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
		return;
	tfk_cli_warn("model %s: version %" PRId64 " unloaded", v->model,
		     v->num);
	version_free(v);
}

struct tfk_runner *sv_runner(struct sv_version *v,
			     const struct tfk_sv_signature *sig, int tid,
			     int *own, struct tfk_err *err)
{
	struct tfk_runner_opts ro = { 0 };
	struct tfk_runner **slot = NULL, *r;
	int k;

	*own = 0;
	for (k = 0; k < v->n_sigs; k++)
		if (tfk_servable_signature(v->s, k) == sig)
			break;
	if (tid >= 0 && tid < v->n_slots && k < v->n_sigs) {
		slot = &v->runners[tid * v->n_sigs + k];
		if (*slot)
			return *slot;
	}
	ro.threads = 1;
	ro.any_shape = 1;	/* TF Serving feeds a request as it comes */
	if (tfk_runner_new(&r, v->s, sig, NULL, -1, &ro, err))
		return NULL;
	if (slot)
		*slot = r;
	else
		*own = 1;
	return r;
}

static const struct { const char *name; int num; } codes[] = {
	{ "OK", 0 }, { "UNKNOWN", 2 }, { "INVALID_ARGUMENT", 3 },
	{ "NOT_FOUND", 5 }, { "RESOURCE_EXHAUSTED", 8 }, { "DATA_LOSS", 15 },
};

int sv_status_list(struct sv_model *m, int64_t num, struct sv_status **out)
{
	struct sv_status *o;
	int i, j, k = 0;

	*out = NULL;
	pthread_mutex_lock(&m->lock);
	qsort(m->recs, (size_t)m->n_recs, sizeof(*m->recs), rec_cmp);
	o = tfk_calloc((size_t)m->n_recs + 1, sizeof(*o));
	for (i = 0; o && i < m->n_recs; i++) {
		const struct sv_rec *r = &m->recs[i];

		if (num >= 0 && r->num != num)
			continue;
		o[k].version = r->num;
		o[k].available = r->state == REC_AVAILABLE;
		o[k].code = 2;
		for (j = 0; j < (int)(sizeof(codes) / sizeof(codes[0])); j++)
			if (!strcmp(codes[j].name, r->code))
				o[k].code = codes[j].num;
		o[k].msg = tfk_strdup(r->msg ? r->msg : "");
		k++;
	}
	pthread_mutex_unlock(&m->lock);
	if (!o)
		return -1;
	*out = o;
	return k;
}

void sv_status_free(struct sv_status *s, int n)
{
	int i;

	for (i = 0; s && i < n; i++)
		tfk_free(s[i].msg);
	tfk_free(s);
}

int sv_label(struct sv_model *m, const char *label, size_t n, int64_t *num)
{
	int i, rc = -1;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->n_labels && rc; i++)
		if (strlen(m->labels[i].label) == n &&
		    !memcmp(m->labels[i].label, label, n)) {
			*num = m->labels[i].version;
			rc = 0;
		}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

struct sv_model *sv_find(struct sv_server *s, const char *name, size_t n)
{
	struct sv_model *m = NULL;
	int i;

	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_models && !m; i++)
		if (strlen(s->models[i]->name) == n &&
		    !memcmp(s->models[i]->name, name, n))
			m = s->models[i];
	pthread_mutex_unlock(&s->lock);
	return m;
}

/* Status records ---------------------------------------------------------- */

static struct sv_rec *rec_get(struct sv_model *m, int64_t num)
{
	struct sv_rec *r;
	int i;

	for (i = 0; i < m->n_recs; i++)
		if (m->recs[i].num == num)
			return &m->recs[i];
	r = tfk_realloc(m->recs, (size_t)(m->n_recs + 1) * sizeof(*r));
	if (!r)
		return NULL;
	m->recs = r;
	r = &m->recs[m->n_recs++];
	memset(r, 0, sizeof(*r));
	r->num = num;
	r->code = "OK";
	return r;
}

/* Set the record of num (under m->lock). */
static void rec_set(struct sv_model *m, int64_t num, enum rec_state st,
		    const char *code, const char *msg)
{
	struct sv_rec *r = rec_get(m, num);

	if (!r)
		return;
	r->state = st;
	r->code = code;
	tfk_free(r->msg);
	r->msg = msg ? tfk_strdup(msg) : NULL;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct sv_rec *x = a, *y = b;

	return x->num < y->num ? 1 : x->num > y->num ? -1 : 0;
}

int sv_status_json(struct sv_model *m, int64_t num, struct tfk_buf *b)
{
	int i, k = 0;

	pthread_mutex_lock(&m->lock);
	qsort(m->recs, (size_t)m->n_recs, sizeof(*m->recs), rec_cmp);
	for (i = 0; i < m->n_recs; i++)
		k += num < 0 || m->recs[i].num == num;
	if (!k) {
		pthread_mutex_unlock(&m->lock);
		return -1;
	}
	tfk_buf_adds(b, "{\"model_version_status\":[");
	for (i = 0, k = 0; i < m->n_recs; i++) {
		const struct sv_rec *r = &m->recs[i];
		const char *msg = r->msg ? r->msg : "";

		if (num >= 0 && r->num != num)
			continue;
		tfk_buf_addf(b, "%s{\"version\":\"%" PRId64 "\",\"state\":"
			     "\"%s\",\"status\":{\"error_code\":\"%s\","
			     "\"error_message\":", k++ ? "," : "", r->num,
			     r->state == REC_AVAILABLE ? "AVAILABLE" : "END",
			     r->code);
		tfk_buf_add_json_str(b, msg, tfk_utf8_prefix(
			(const uint8_t *)msg, strlen(msg)));
		tfk_buf_adds(b, "}}");
	}
	tfk_buf_adds(b, "]}");
	pthread_mutex_unlock(&m->lock);
	return 0;
}

/* Loading and unloading --------------------------------------------------- */

static struct sv_version *version_load(struct sv_model *m,
				       const struct tfk_version_dir *d,
				       struct tfk_err *err)
{
	struct tfk_servable_opts so = { NULL, d->kind };
	struct sv_version *v = tfk_calloc(1, sizeof(*v));

	if (!v) {
		tfk_errf(err, TFK_ENOMEM, "out of memory");
		return NULL;
	}
	v->num = d->version;
	v->model = m->name;
	v->path = tfk_strdup(d->path);
	atomic_init(&v->refs, 1);
	pthread_mutex_init(&v->batch_lock, NULL);
	if (!v->path || tfk_servable_open(&v->s, d->path, &so, err)) {
		if (!v->path)
			tfk_errf(err, TFK_ENOMEM, "out of memory");
		version_free(v);
		return NULL;
	}
	v->n_sigs = tfk_servable_n_signatures(v->s);
	v->n_slots = m->n_slots;
	v->runners = tfk_calloc((size_t)(v->n_slots * v->n_sigs) + 1,
				sizeof(*v->runners));
	v->metrics = m->metrics;
	if (m->batching) {
		v->batching = m->batching;
		v->batchers = tfk_calloc((size_t)v->n_sigs + 1,
					 sizeof(*v->batchers));
	}
	if (!v->runners || (m->batching && !v->batchers)) {
		tfk_errf(err, TFK_ENOMEM, "out of memory");
		version_free(v);
		return NULL;
	}
	return v;
}

static int is_served(struct sv_model *m, int64_t num)
{
	int i, k = 0;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->n_served; i++)
		k |= m->served[i]->num == num;
	pthread_mutex_unlock(&m->lock);
	return k;
}

/* Put v among the served, highest first (0, or -1 out of memory). */
static int serve_version(struct sv_model *m, struct sv_version *v)
{
	struct sv_version **g;
	int i;

	pthread_mutex_lock(&m->lock);
	g = tfk_realloc(m->served, (size_t)(m->n_served + 1) * sizeof(*g));
	if (!g) {
		pthread_mutex_unlock(&m->lock);
		return -1;
	}
	m->served = g;
	for (i = m->n_served; i > 0 && g[i - 1]->num < v->num; i--)
		g[i] = g[i - 1];
	g[i] = v;
	m->n_served++;
	rec_set(m, v->num, REC_AVAILABLE, "OK", NULL);
	pthread_mutex_unlock(&m->lock);
	return 0;
}

/* Stop serving version num (its requests finish on it). */
static void unserve(struct sv_model *m, int64_t num, const char *why)
{
	struct sv_version *v = NULL;
	int i;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->n_served; i++)
		if (m->served[i]->num == num) {
			v = m->served[i];
			memmove(&m->served[i], &m->served[i + 1],
				(size_t)(m->n_served - i - 1) *
				sizeof(*m->served));
			m->n_served--;
			rec_set(m, num, REC_END, "OK", NULL);
			break;
		}
	pthread_mutex_unlock(&m->lock);
	if (v) {
		tfk_cli_warn("model %s: version %" PRId64 " leaves serving: "
			     "%s", m->name, num, why);
		sv_release(v);
	}
}

static void unserve_all(struct sv_model *m, const char *why)
{
	int64_t num;

	for (;;) {
		pthread_mutex_lock(&m->lock);
		num = m->n_served ? m->served[0]->num : -1;
		pthread_mutex_unlock(&m->lock);
		if (num < 0)
			return;
		unserve(m, num, why);
	}
}

/* Failed to load before, and its model file unchanged since? */
static int failed_unchanged(struct sv_model *m,
			    const struct tfk_version_dir *d)
{
	int i, k = 0;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->n_recs; i++)
		if (m->recs[i].num == d->version && m->recs[i].msg &&
		    m->recs[i].size == d->size &&
		    m->recs[i].mtime_ns == d->mtime_ns)
			k = 1;
	pthread_mutex_unlock(&m->lock);
	return k;
}

static void load_failed(struct sv_model *m, const struct tfk_version_dir *d,
			const struct tfk_err *err)
{
	struct sv_rec *r;

	tfk_cli_warn("model %s: version %" PRId64 " failed to load: %s",
		     m->name, d->version, err->msg);
	pthread_mutex_lock(&m->lock);
	rec_set(m, d->version, REC_END, code_name(err->code), err->msg);
	if ((r = rec_get(m, d->version))) {
		r->size = d->size;
		r->mtime_ns = d->mtime_ns;
	}
	pthread_mutex_unlock(&m->lock);
}

/*
 * The versions to serve now: the policy over the complete versions of
 * d[0..n) (highest first) that have not failed unchanged, into want[].
 */
static void pick(struct sv_model *m, const struct tfk_version_dir *d, int n,
		 int *want)
{
	int64_t *have = tfk_calloc((size_t)n + 1, sizeof(*have));
	int *idx = tfk_calloc((size_t)n + 1, sizeof(*idx)),
	    *w = tfk_calloc((size_t)n + 1, sizeof(*w));
	int i, k = 0;

	for (i = 0; i < n; i++)
		want[i] = 0;
	if (have && idx && w) {
		for (i = 0; i < n; i++)
			if (d[i].kind && !failed_unchanged(m, &d[i])) {
				idx[k] = i;
				have[k++] = d[i].version;
			}
		tfk_model_config_wanted(&m->cfg, have, k, w);
		for (i = 0; i < k; i++)
			want[idx[i]] = w[i];
	}
	tfk_free(have);
	tfk_free(idx);
	tfk_free(w);
}

/* One look at m's base path (see the top comment). */
static void poll_model(struct sv_model *m, int first)
{
	struct tfk_version_dir *d;
	struct tfk_err err;
	struct sv_version *v;
	int n, i, j, *want, again, any;
	double t0;

	if (tfk_versions_scan(m->cfg.base_path, &d, &n, &err)) {
		if (!m->scan_failed++)
			tfk_cli_warn("model %s: %s", m->name, err.msg);
		return;
	}
	m->scan_failed = 0;
	if (!(want = tfk_calloc((size_t)n + 1, sizeof(*want)))) {
		tfk_versions_free(d, n);
		return;
	}
	do {	/* a failed load changes what the policy picks */
		again = 0;
		pick(m, d, n, want);
		for (i = 0; i < n && !again; i++) {
			if (!want[i] || is_served(m, d[i].version))
				continue;
			t0 = tfk_sv_now();
			if (!(v = version_load(m, &d[i], &err))) {
				load_failed(m, &d[i], &err);
				again = 1;
				continue;
			}
			if (serve_version(m, v)) {
				version_free(v);
				continue;
			}
			tfk_cli_warn("model %s: version %" PRId64 " loaded "
				     "from %s (%s, %.3f s)", m->name, v->num,
				     v->path, tfk_servable_kind(v->s) ==
				     TFK_SERVABLE_TFLITE ? ".tflite" :
				     "SavedModel", tfk_sv_now() - t0);
		}
	} while (again);
	for (any = 0, i = 0; i < n; i++)
		any |= want[i];
	if (!any && first)
		tfk_cli_warn("model %s: no version under %s yet (a numbered "
			     "directory holding saved_model.pb or "
			     "model.tflite)", m->name, m->cfg.base_path);
	for (;;) {	/* served but not wanted: unload */
		int64_t drop = -1;
		int gone = 1;

		pthread_mutex_lock(&m->lock);
		for (j = 0; j < m->n_served && drop < 0; j++) {
			int64_t num = m->served[j]->num;
			int wanted = 0;

			for (i = 0; i < n; i++)
				if (d[i].version == num) {
					wanted = want[i];
					gone = !d[i].kind;
				}
			if (!wanted)
				drop = num;
		}
		pthread_mutex_unlock(&m->lock);
		if (drop < 0)
			break;
		unserve(m, drop, gone ? "its directory is gone" :
			"the version policy no longer serves it");
	}
	tfk_free(want);
	tfk_versions_free(d, n);
}

void sv_poll(struct sv_server *s, int first)
{
	int i, n;

	pthread_mutex_lock(&s->lock);
	n = s->n_models;
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++)	/* models[0..n) stay put: only appended */
		if (s->models[i]->configured)
			poll_model(s->models[i], first);
}

/* Configuration ----------------------------------------------------------- */

/* Put labels[0..n) in m's place (under the lock) and free the old ones. */
static void labels_swap(struct sv_model *m, struct tfk_version_label *labels,
			int n)
{
	struct tfk_version_label *old;
	int i, n_old;

	pthread_mutex_lock(&m->lock);
	old = m->labels;
	n_old = m->n_labels;
	m->labels = labels;
	m->n_labels = n;
	pthread_mutex_unlock(&m->lock);
	for (i = 0; i < n_old; i++)
		tfk_free(old[i].label);
	tfk_free(old);
}

static struct sv_model *model_new(struct sv_server *s, const char *name)
{
	struct sv_model *m = tfk_calloc(1, sizeof(*m)), **g;

	if (!m || !(m->name = tfk_strdup(name))) {
		tfk_free(m);
		return NULL;
	}
	pthread_mutex_init(&m->lock, NULL);
	m->n_slots = s->n_slots;
	m->batching = s->batching;
	m->metrics = s->metrics;
	pthread_mutex_lock(&s->lock);
	g = tfk_realloc(s->models, (size_t)(s->n_models + 1) * sizeof(*g));
	if (g) {
		s->models = g;
		g[s->n_models++] = m;
	}
	pthread_mutex_unlock(&s->lock);
	if (!g) {
		tfk_free(m->name);
		tfk_free(m);
		return NULL;
	}
	return m;
}

/*
 * Give m the config c. m->labels (read by requests) holds the labels;
 * m->cfg, the main thread's, holds none.
 */
static int model_set(struct sv_model *m, const struct tfk_model_config *c)
{
	struct tfk_model_config n;
	int new_base = !m->cfg.base_path ||
		strcmp(m->cfg.base_path, c->base_path);

	if (tfk_model_config_copy(&n, c))
		return -1;
	if (m->configured && new_base)
		unserve_all(m, "its base path changed");
	labels_swap(m, n.labels, n.n_labels);
	n.labels = NULL;
	n.n_labels = 0;
	tfk_model_config_free(&m->cfg);
	m->cfg = n;
	m->configured = 1;
	return 0;
}

int sv_configure(struct sv_server *s, const struct tfk_server_config *c,
		 struct tfk_err *err)
{
	int i, j, n;

	for (i = 0; i < c->n_models; i++) {
		struct sv_model *m = sv_find(s, c->models[i].name,
					     strlen(c->models[i].name));
		int added = !m || !m->configured;

		if (!m && !(m = model_new(s, c->models[i].name)))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		if (model_set(m, &c->models[i]))
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		if (added)
			tfk_cli_warn("model %s: configured, versions from %s",
				     m->name, m->cfg.base_path);
	}
	pthread_mutex_lock(&s->lock);
	n = s->n_models;
	pthread_mutex_unlock(&s->lock);
	for (i = 0; i < n; i++) {
		struct sv_model *m = s->models[i];

		for (j = 0; j < c->n_models; j++)
			if (!strcmp(c->models[j].name, m->name))
				break;
		if (j < c->n_models || !m->configured)
			continue;
		m->configured = 0;
		unserve_all(m, "the model is no longer configured");
		labels_swap(m, NULL, 0);
	}
	return 0;
}

void sv_shutdown(struct sv_server *s)
{
	int i, j;

	for (i = 0; i < s->n_models; i++) {
		struct sv_model *m = s->models[i];

		unserve_all(m, "the server stops");
		for (j = 0; j < m->n_recs; j++)
			tfk_free(m->recs[j].msg);
		tfk_free(m->recs);
		tfk_free(m->served);
		tfk_model_config_free(&m->cfg);
		labels_swap(m, NULL, 0);
		pthread_mutex_destroy(&m->lock);
		tfk_free(m->name);
		tfk_free(m);
	}
	tfk_free(s->models);
	s->models = NULL;
	s->n_models = 0;
}
