/*
 * tfk-serve: serve a SavedModel (or .tflite) over TensorFlow Serving's
 * REST API, with TF Serving's flags, URLs, JSON and version directories,
 * so that TF Serving's REST clients work unchanged.
 *
 * This file: options, the model's versions and main. The model's base
 * path holds numbered version directories (model/versions.h); the
 * version policy is TF Serving's default, "latest": the highest
 * complete version is served, alone. The main thread loads it at start
 * and then every --file_system_poll_wait_seconds scans again: a higher
 * version is loaded and, once loaded, replaces the one served; a served
 * version whose directory is gone is unloaded. A version that fails to
 * load is reported by the status endpoint with its error (state END) and
 * the version served before goes on serving, as in TF Serving; it is
 * tried again when its model file changes (TF Serving retries a fixed
 * number of times instead; a changed file is the better signal). Loads
 * run on the main thread, one at a time, while requests go on being
 * answered by the version served.
 *
 * Lifetime: a version is reference-counted (serve.h); requests hold a
 * reference while they run, so an unloaded version is freed by the last
 * request still using it, never under it.
 *
 * Signals: SIGTERM and SIGINT are blocked in every thread and taken by
 * the main thread with sigtimedwait, which is also the poll clock; on
 * one, the server stops accepting, finishes the requests in flight and
 * exits 0. Events (loaded, unloaded, failed, listening, stopping) are
 * one line each on stderr.
 *
 * Differences from TF Serving: REST only (no gRPC --port), one model
 * given by flags (no --model_config_file), no batching or monitoring;
 * those flags are refused with a usage error naming what to give
 * instead. The REST front end is cmd/serve/http.c.
 */
#include "model/servable.h"
#include "model/versions.h"
#include "serve/serve.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *model_name, *model_base_path, *access_log_path;
static long rest_api_port = 8501, poll_wait = 1, timeout_ms = 30000,
	    n_threads;
static uint64_t max_body = 64ull << 20;
/* TF Serving's flags this server refuses (see the top comment) */
static const char *grpc_port, *model_config_file, *batching_file,
		  *monitoring_file;
static int enable_batching;

static const struct tfk_opt opts[] = {
	TFK_OPT_STR(0, "model_name", &model_name, "NAME",
		    "the model's name in URLs (/v1/models/NAME)"),
	TFK_OPT_STR(0, "model_base_path", &model_base_path, "DIR",
		    "the directory of numbered version directories"),
	TFK_OPT_LONG(0, "rest_api_port", &rest_api_port, "PORT",
		     "the HTTP port (0: any free one, logged)"),
	TFK_OPT_LONG(0, "rest_api_num_threads", &n_threads, "N",
		     "HTTP worker threads (0: one per CPU)"),
	TFK_OPT_LONG(0, "rest_api_timeout_in_ms", &timeout_ms, "MS",
		     "close a connection idle this long"),
	TFK_OPT_LONG(0, "file_system_poll_wait_seconds", &poll_wait, "S",
		     "look for new versions this often (0: only at start)"),
	TFK_OPT_SIZE(0, "max_body_bytes", &max_body, "BYTES",
		     "refuse request bodies larger than this (413)"),
	TFK_OPT_STR(0, "access_log", &access_log_path, "FILE",
		    "append one line per request to FILE"),
	TFK_OPT_STR(0, "port", &grpc_port, "PORT",
		    "TF Serving's gRPC port: refused, REST only so far"),
	TFK_OPT_STR(0, "model_config_file", &model_config_file, "FILE",
		    "refused: one model, given by --model_name"),
	TFK_OPT_FLAG(0, "enable_batching", &enable_batching,
		     "refused: requests run one by one"),
	TFK_OPT_STR(0, "batching_parameters_file", &batching_file, "FILE",
		    "refused, as --enable_batching"),
	TFK_OPT_STR(0, "monitoring_config_file", &monitoring_file, "FILE",
		    "refused: no metrics endpoint so far"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-serve",
	"--model_name NAME --model_base_path DIR [--rest_api_port PORT] "
	"[--file_system_poll_wait_seconds S] [--access_log FILE]",
	"serve a SavedModel or .tflite over TensorFlow Serving's REST API",
	"tfk-serve --model_name half --model_base_path /models/half &\n"
	"  curl -d '{\"instances\": [1.0, 2.0]}' "
	"localhost:8501/v1/models/half:predict",
};

/* Versions --------------------------------------------------------------- */

enum rec_state { REC_AVAILABLE = 1, REC_END = 2 };

/* What the status endpoint tells of a version seen. */
struct sv_rec {
	int64_t num;
	enum rec_state state;
	const char *code;	/* TF Serving's error_code: "OK", ... */
	char *msg;
	int64_t size, mtime_ns;	/* of the model file, when it failed */
};

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

static void version_free(struct sv_version *v)
{
	int i;

	for (i = 0; i < v->n_slots * v->n_sigs; i++)
		tfk_runner_free(v->runners[i]);
	tfk_free(v->runners);
	tfk_servable_close(v->s);
	tfk_free(v->path);
	tfk_free(v);
}

struct sv_version *sv_acquire(struct sv_model *m, int64_t num)
{
	struct sv_version *v;

	pthread_mutex_lock(&m->lock);
	v = m->cur;
	if (v && (num < 0 || v->num == num))
		atomic_fetch_add(&v->refs, 1);
	else
		v = NULL;
	pthread_mutex_unlock(&m->lock);
	return v;
}

void sv_release(struct sv_version *v)
{
	if (!v || atomic_fetch_sub(&v->refs, 1) != 1)
		return;
	tfk_cli_warn("model %s: version %" PRId64 " unloaded", model_name,
		     v->num);
	version_free(v);
}

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
	v->path = tfk_strdup(d->path);
	atomic_init(&v->refs, 1);
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
	if (!v->runners) {
		tfk_errf(err, TFK_ENOMEM, "out of memory");
		version_free(v);
		return NULL;
	}
	return v;
}

/* Stop serving the current version (its requests finish on it). */
static void unserve(struct sv_model *m, const char *why)
{
	struct sv_version *v;

	pthread_mutex_lock(&m->lock);
	v = m->cur;
	m->cur = NULL;
	if (v)
		rec_set(m, v->num, REC_END, "OK", NULL);
	pthread_mutex_unlock(&m->lock);
	if (v) {
		tfk_cli_warn("model %s: version %" PRId64 " leaves serving: "
			     "%s", model_name, v->num, why);
		sv_release(v);
	}
}

/* One look at the base path (see the top comment). */
static void poll_versions(struct sv_model *m, int first)
{
	static int scan_failed;
	struct tfk_version_dir *d;
	struct tfk_err err;
	struct sv_version *v, *old;
	struct sv_rec *r;
	int n, i, best, cur_present = 0;
	int64_t cur_num;
	double t0;

	if (tfk_versions_scan(m->base, &d, &n, &err)) {
		if (!scan_failed++)
			tfk_cli_warn("model %s: %s", model_name, err.msg);
		return;
	}
	scan_failed = 0;
	pthread_mutex_lock(&m->lock);
	cur_num = m->cur ? m->cur->num : -1;
	pthread_mutex_unlock(&m->lock);
	for (i = 0; i < n; i++)
		cur_present |= d[i].kind && d[i].version == cur_num;
	best = tfk_versions_latest(d, n);
	if (best < 0) {
		if (first)
			tfk_cli_warn("model %s: no version under %s yet (a "
				     "numbered directory holding "
				     "saved_model.pb or model.tflite)",
				     model_name, m->base);
		if (cur_num >= 0)
			unserve(m, "its directory is gone");
		goto out;
	}
	if (d[best].version == cur_num)
		goto out;
	pthread_mutex_lock(&m->lock);
	r = NULL;
	for (i = 0; i < m->n_recs; i++)
		if (m->recs[i].num == d[best].version && m->recs[i].msg)
			r = &m->recs[i];
	i = r && r->size == d[best].size && r->mtime_ns == d[best].mtime_ns;
	pthread_mutex_unlock(&m->lock);
	if (i) {	/* failed before and unchanged: keep what is served */
		if (cur_num >= 0 && !cur_present)
			unserve(m, "its directory is gone");
		goto out;
	}
	t0 = tfk_sv_now();
	v = version_load(m, &d[best], &err);
	if (!v) {
		tfk_cli_warn("model %s: version %" PRId64 " failed to load: "
			     "%s", model_name, d[best].version, err.msg);
		pthread_mutex_lock(&m->lock);
		rec_set(m, d[best].version, REC_END, code_name(err.code),
			err.msg);
		if ((r = rec_get(m, d[best].version))) {
			r->size = d[best].size;
			r->mtime_ns = d[best].mtime_ns;
		}
		pthread_mutex_unlock(&m->lock);
		if (cur_num >= 0 && !cur_present)
			unserve(m, "its directory is gone");
		goto out;
	}
	pthread_mutex_lock(&m->lock);
	old = m->cur;
	m->cur = v;
	rec_set(m, v->num, REC_AVAILABLE, "OK", NULL);
	if (old)
		rec_set(m, old->num, REC_END, "OK", NULL);
	pthread_mutex_unlock(&m->lock);
	tfk_cli_warn("model %s: version %" PRId64 " loaded from %s (%s, "
		     "%.3f s)", model_name, v->num, v->path,
		     tfk_servable_kind(v->s) == TFK_SERVABLE_TFLITE ?
		     ".tflite" : "SavedModel", tfk_sv_now() - t0);
	if (old) {
		tfk_cli_warn("model %s: version %" PRId64 " leaves serving: "
			     "version %" PRId64 " replaces it",
			     model_name, old->num, v->num);
		sv_release(old);
	}
out:
	tfk_versions_free(d, n);
}

/* main ------------------------------------------------------------------- */

static void refuse(const char *given, const char *msg)
{
	if (given)
		tfk_cli_usage_error("%s", msg);
}

int main(int argc, char **argv)
{
	struct sv_model m = { 0 };
	struct sv_http_opts ho = { 0 };
	struct sv_http *h;
	sigset_t sigs;
	long port;
	int sig, i;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	refuse(grpc_port, "--port: tfk-serve serves REST only so far; give "
	       "--rest_api_port");
	refuse(model_config_file, "--model_config_file: tfk-serve serves "
	       "one model so far; give --model_name and --model_base_path");
	refuse(enable_batching ? "" : NULL, "--enable_batching: tfk-serve "
	       "runs requests one by one so far; leave it out");
	refuse(batching_file, "--batching_parameters_file: tfk-serve "
	       "runs requests one by one so far; leave it out");
	refuse(monitoring_file, "--monitoring_config_file: tfk-serve has "
	       "no metrics endpoint so far; leave it out");
	if (argc)
		tfk_cli_usage_error("unexpected argument '%s'", argv[0]);
	if (!model_name || !*model_name)
		tfk_cli_usage_error("--model_name is required");
	if (!model_base_path)
		tfk_cli_usage_error("--model_base_path is required");
	if (strchr(model_name, '/') || strchr(model_name, ':'))
		tfk_cli_usage_error("--model_name: '%s' holds '/' or ':', "
				    "which URLs cannot carry", model_name);
	if (rest_api_port < 0 || rest_api_port > 65535)
		tfk_cli_usage_error("--rest_api_port: %ld is not a port",
				    rest_api_port);
	if (poll_wait < 0 || timeout_ms <= 0 || n_threads < 0 ||
	    n_threads > 1024)
		tfk_cli_usage_error("--file_system_poll_wait_seconds, "
				    "--rest_api_timeout_in_ms and "
				    "--rest_api_num_threads must be positive");
	if (access_log_path) {
		ho.access_log = fopen(access_log_path, "a");
		if (!ho.access_log) {
			tfk_cli_warn("%s: cannot open: %s", access_log_path,
				     strerror(errno));
			return 1;
		}
		setvbuf(ho.access_log, NULL, _IOLBF, 0);
	}
	if (!n_threads) {
		n_threads = sysconf(_SC_NPROCESSORS_ONLN);
		if (n_threads < 1)
			n_threads = 1;
	}
	m.name = model_name;
	m.base = model_base_path;
	m.n_slots = (int)n_threads;
	pthread_mutex_init(&m.lock, NULL);

	/* blocked here, so every thread made from now on has them blocked */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	{
		struct tfk_version_dir *d;
		struct tfk_err err;
		int n;

		if (tfk_versions_scan(model_base_path, &d, &n, &err))
			return tfk_cli_fail(&err);
		tfk_versions_free(d, n);
	}
	poll_versions(&m, 1);

	ho.port = rest_api_port;
	ho.threads = n_threads;
	ho.timeout_ms = timeout_ms;
	ho.max_body = max_body;
	h = sv_http_start(&m, &ho, &port);
	if (!h) {
		unserve(&m, "the server stops");
		return 1;
	}
	tfk_cli_warn("model %s: REST API listening on port %ld", model_name,
		     port);
	for (;;) {
		struct timespec ts = { poll_wait ? poll_wait : 3600, 0 };

		sig = sigtimedwait(&sigs, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		if (sig < 0 && errno == EAGAIN && poll_wait)
			poll_versions(&m, 0);
	}
	tfk_cli_warn("%s: stopping: finishing the requests in flight",
		     strsignal(sig));
	sv_http_stop(h, timeout_ms);
	unserve(&m, "the server stops");
	for (i = 0; i < m.n_recs; i++)
		tfk_free(m.recs[i].msg);
	tfk_free(m.recs);
	if (ho.access_log)
		fclose(ho.access_log);
	tfk_cli_warn("stopped");
	return 0;
}
