/*
 * http.c - tfk-serve's REST front end on libmicrohttpd: TF Serving's
 * URLs, status codes and JSON (model/restjson.h does the JSON).
 *
 *   GET  /v1/models/NAME[/versions/N]            model status
 *   GET  /v1/models/NAME[/versions/N]/metadata   signatures
 *   POST /v1/models/NAME[/versions/N]:predict    instances / inputs
 *   POST /v1/models/NAME[/versions/N]:classify   examples, context
 *   POST /v1/models/NAME[/versions/N]:regress    examples, context
 *
 * and /labels/L wherever /versions/N goes: the version the model
 * config's version_labels give L; with --monitoring_config_file,
 *
 *   GET  /monitoring/prometheus/metrics          (or its path) metrics
 *
 * libmicrohttpd runs its own pool of threads (one per CPU by default),
 * with epoll where the library has it, a connection idle timeout and a
 * limit per client address (beyond it, closed at once, unanswered); our
 * own door thread accepts and hands connections to the pool in turn,
 * and stops accepting at the connection limit (new connections wait
 * in the listen queue; see door()); a reaper thread gives a
 * client late with its headers or body a 408 and closes it (see struct
 * conn). A request's body is gathered up to --max_body_bytes (413 beyond), then
 * answered in one go on its worker thread. Each
 * worker thread is given a small number on its first request and keeps
 * its own runner per version and signature in that version's slots
 * (serve.h), made on first use: no lock on the predict path but the
 * one that takes a reference on the version.
 *
 * Errors are {"error": "..."} with TF Serving's mapping of status to
 * HTTP: INVALID_ARGUMENT 400, NOT_FOUND 404, RESOURCE_EXHAUSTED 429
 * (413 for a body over the limit), a method it lacks 501, UNAVAILABLE 503
 * (when stopping), INTERNAL 500. Where TF Serving's docs say nothing
 * of a message, ours follow the house style (lowercase, where then
 * what).
 */
#include "model/restjson.h"
#include "model/servable.h"
#include "serve.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*
 * A connection's clock, for the reaper: it must send its request line
 * and headers within --header_timeout_in_ms of connecting (or of its
 * request line, after a request on a kept-alive connection), its body
 * within --body_timeout_in_ms of its headers, and after an answer its
 * next request line within --rest_api_timeout_in_ms (bytes trickled one
 * by one restart libmicrohttpd's own idle timeout, never these). While
 * a request runs there is no deadline. Guarded by the server's lock.
 */
enum phase { P_HEAD, P_BODY, P_RUN, P_IDLE, P_CUT };

struct conn {
	struct conn *prev, *next;
	int fd;
	enum phase phase;
	double deadline;
};

struct sv_http {
	struct MHD_Daemon *d;
	struct sv_server *s;
	struct sv_http_opts o;
	atomic_int in_flight;
	atomic_int stopping;
	atomic_int next_tid;
	pthread_mutex_t lock;		/* conns, reaper_stop, n_open */
	pthread_cond_t wake;
	struct conn *conns;
	int reaper_stop, reaper_on;
	pthread_t reaper;
	/* The door (pool mode): our listening socket, the thread accepting
	 * on it, its wake pipe, the connections it handed over that have
	 * not closed, and a signal for room under --max_connections.
	 * door_on is set before libmicrohttpd starts and never changes. */
	int lfd, door_wake[2], door_on;
	pthread_t door;
	long n_open;
	pthread_cond_t room;
};

/* One request: its body so far and what the access log wants. */
struct req {
	struct tfk_buf body;
	int too_big;
	double t0;
	unsigned status;
	size_t bytes;
	char method[12];
	char *path;
	const char *model, *api;	/* for the metrics; NULL: none */
};

static _Thread_local int worker_tid = -1;

/* Answers --------------------------------------------------------------- */

static enum MHD_Result answer(struct MHD_Connection *c, struct req *rq,
			      unsigned status, const struct tfk_buf *b)
{
	struct MHD_Response *r;
	enum MHD_Result ok;

	r = MHD_create_response_from_buffer(b->len, b->data,
					    MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	rq->status = status;
	rq->bytes = b->len;
	return ok;
}

static enum MHD_Result fail(struct MHD_Connection *c, struct req *rq,
			    unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static enum MHD_Result fail(struct MHD_Connection *c, struct req *rq,
			    unsigned status, const char *fmt, ...)
{
	struct tfk_buf b;
	char msg[TFK_ERR_MSG_MAX + 128];
	enum MHD_Result ok;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tfk_buf_init(&b);
	tfk_rj_error(&b, msg);
	ok = tfk_buf_ok(&b) ? answer(c, rq, status, &b) : MHD_NO;
	tfk_buf_release(&b);
	return ok;
}

/* The HTTP status of a library error met while predicting. */
static unsigned http_of(int code)
{
	switch (code) {
	case TFK_EINVAL: case TFK_ENOTFOUND: return 400;
	case TFK_ENOMEM: return 429;
	case SV_EFULL: return 503;
	default: return 500;
	}
}

/* Answer b with status, or (status 0) err as TF Serving's error JSON
 * with the HTTP status of code rc; out of memory is a 500. */
static enum MHD_Result reply(struct MHD_Connection *c, struct req *rq,
			     unsigned status, int rc, struct tfk_buf *b,
			     const struct tfk_err *err)
{
	if (!status) {
		status = http_of(rc);
		tfk_buf_reset(b);
		tfk_rj_error(b, err->msg);
	}
	return tfk_buf_ok(b) ? answer(c, rq, status, b) :
		fail(c, rq, 500, "out of memory");
}

/* Predict ---------------------------------------------------------------- */

/* This worker thread's number (serve.h: runner slots). */
static int tid_of(struct sv_http *h)
{
	if (worker_tid < 0)
		worker_tid = atomic_fetch_add(&h->next_tid, 1);
	return worker_tid;
}

static enum MHD_Result predict(struct sv_http *h, struct MHD_Connection *c,
			       struct req *rq, struct sv_version *v)
{
	struct tfk_rj_request jr;
	const struct tfk_sv_signature *sig;
	struct tfk_tensor *in = NULL;
	const struct tfk_tensor **out = NULL;
	const char **keys = NULL;
	struct tfk_runner *r = NULL;
	struct tfk_buf b;
	struct tfk_err err;
	enum MHD_Result ok;
	int i, n_out, own = 0, rc;
	unsigned status = 400;
	double t0;
	struct sv_outputs own_out = { NULL, 0 };

	tfk_buf_init(&b);
	rc = tfk_rj_parse(&jr, (const char *)rq->body.data, rq->body.len,
			  &err);
	if (rc)
		goto bad;
	sig = tfk_servable_find(v->s, jr.signature_name &&
				*jr.signature_name ? jr.signature_name : NULL,
				&err);
	if (!sig) {
		rc = TFK_EINVAL;
		goto bad;
	}
	in = tfk_calloc((size_t)sig->n_inputs + 1, sizeof(*in));
	if (!in) {
		rc = tfk_errf(&err, TFK_ENOMEM, "out of memory");
		goto bad;
	}
	if ((rc = tfk_rj_inputs(&jr, sig, in, &err)))
		goto bad;
	if (!(r = sv_runner(v, sig, tid_of(h), &own, &err))) {
		rc = err.code;
		goto bad;
	}
	for (i = 0; i < sig->n_inputs; i++) {
		struct tfk_sv_tensor w = *tfk_runner_input(r, i);

		w.rank = -1;	/* any shape: see tfk_runner_opts.any_shape */
		if ((rc = tfk_sv_convert(&in[i], &w, &err)))
			goto bad;
	}
	n_out = tfk_runner_n_outputs(r);
	out = tfk_calloc((size_t)n_out + 1, sizeof(*out));
	keys = tfk_calloc((size_t)n_out + 1, sizeof(*keys));
	if (!out || !keys) {
		rc = tfk_errf(&err, TFK_ENOMEM, "out of memory");
		goto bad;
	}
	t0 = tfk_sv_now();
	if ((rc = sv_run(v, sig, r, in, out, &own_out, &err))) {
		if (rc != SV_EFULL)
			tfk_err_prefix(&err, "signature %s", sig->key);
		goto bad;
	}
	sv_metrics_runtime(h->o.metrics, rq->model, rq->api,
			   (tfk_sv_now() - t0) * 1e6);
	for (i = 0; i < n_out; i++)
		keys[i] = tfk_runner_output(r, i)->key;
	if ((rc = tfk_rj_encode(&b, jr.format, n_out, keys, out, &err)))
		goto bad;
	status = 200;
	goto done;
bad:
	status = 0;
done:
	ok = reply(c, rq, status, rc, &b, &err);
	sv_outputs_release(&own_out);
	if (own)
		tfk_runner_free(r);
	for (i = 0; in && i < sig->n_inputs; i++)
		tfk_tensor_release(&in[i]);
	tfk_free(in);
	tfk_free(out);
	tfk_free(keys);
	tfk_rj_release(&jr);
	tfk_buf_release(&b);
	return ok;
}

/* :classify and :regress: examples as tf.Examples into the signature's
 * one string input (model/restjson.h). */
static enum MHD_Result examples(struct sv_http *h, struct MHD_Connection *c,
				struct req *rq, struct sv_version *v,
				enum tfk_rj_method m)
{
	struct tfk_rj_examples jr;
	const struct tfk_sv_signature *sig;
	const struct tfk_tensor **out = NULL;
	const char **keys = NULL;
	struct tfk_runner *r = NULL;
	struct tfk_sv_tensor w;
	struct tfk_buf b;
	struct tfk_err err;
	enum MHD_Result ok;
	int i, n_out, own = 0, rc;
	unsigned status = 400;
	double t0;
	struct sv_outputs own_out = { NULL, 0 };

	tfk_buf_init(&b);
	rc = tfk_rj_parse_examples(&jr, (const char *)rq->body.data,
				   rq->body.len, &err);
	if (rc)
		goto bad;
	sig = tfk_servable_find(v->s, jr.signature_name &&
				*jr.signature_name ? jr.signature_name : NULL,
				&err);
	if (!sig) {
		rc = TFK_EINVAL;
		goto bad;
	}
	if ((rc = tfk_rj_check_signature(sig, m, &err)))
		goto bad;
	if (!(r = sv_runner(v, sig, tid_of(h), &own, &err))) {
		rc = err.code;
		goto bad;
	}
	w = *tfk_runner_input(r, 0);
	w.rank = -1;	/* any shape: see tfk_runner_opts.any_shape */
	if ((rc = tfk_sv_convert(&jr.examples, &w, &err)))
		goto bad;
	n_out = tfk_runner_n_outputs(r);
	out = tfk_calloc((size_t)n_out + 1, sizeof(*out));
	keys = tfk_calloc((size_t)n_out + 1, sizeof(*keys));
	if (!out || !keys) {
		rc = tfk_errf(&err, TFK_ENOMEM, "out of memory");
		goto bad;
	}
	sv_metrics_examples(h->o.metrics, rq->model,
			    (int)tfk_tensor_numel(&jr.examples));
	t0 = tfk_sv_now();
	if ((rc = sv_run(v, sig, r, &jr.examples, out, &own_out, &err))) {
		if (rc != SV_EFULL)
			tfk_err_prefix(&err, "signature %s", sig->key);
		goto bad;
	}
	sv_metrics_runtime(h->o.metrics, rq->model, rq->api,
			   (tfk_sv_now() - t0) * 1e6);
	for (i = 0; i < n_out; i++)
		keys[i] = tfk_runner_output(r, i)->key;
	if ((rc = tfk_rj_encode_result(&b, m, n_out, keys, out,
				       jr.examples.shape[0], &err)))
		goto bad;
	status = 200;
	goto done;
bad:
	status = 0;
done:
	ok = reply(c, rq, status, rc, &b, &err);
	sv_outputs_release(&own_out);
	if (own)
		tfk_runner_free(r);
	tfk_free(out);
	tfk_free(keys);
	tfk_rj_examples_release(&jr);
	tfk_buf_release(&b);
	return ok;
}

/* GET --monitoring_config_file's path: Prometheus' text format. */
static enum MHD_Result metrics(struct sv_http *h, struct MHD_Connection *c,
			       struct req *rq)
{
	struct MHD_Response *r;
	struct tfk_buf b;
	enum MHD_Result ok;

	tfk_buf_init(&b);
	sv_metrics_text(h->o.metrics, &b);
	if (!tfk_buf_ok(&b)) {
		tfk_buf_release(&b);
		return fail(c, rq, 500, "out of memory");
	}
	r = MHD_create_response_from_buffer(b.len, b.data,
					    MHD_RESPMEM_MUST_COPY);
	if (!r) {
		tfk_buf_release(&b);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type",
				"text/plain; version=0.0.4");
	ok = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	rq->status = 200;
	rq->bytes = b.len;
	tfk_buf_release(&b);
	return ok;
}

/* Routing ---------------------------------------------------------------- */

static int parse_num(const char *s, size_t n, int64_t *v)
{
	int64_t x = 0;
	size_t i;

	if (!n || n > 18)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		x = x * 10 + (s[i] - '0');
	}
	*v = x;
	return 0;
}

static enum MHD_Result route(struct sv_http *h, struct MHD_Connection *c,
			     struct req *rq, const char *url,
			     const char *method)
{
	static const char pre[] = "/v1/models/";
	int is_get = !strcmp(method, "GET"), is_post = !strcmp(method, "POST");
	const char *p, *name, *rest;
	size_t name_n;
	int64_t ver = -1;
	struct sv_model *m;
	struct sv_version *v;
	struct tfk_buf b;
	enum MHD_Result ok;

	if (h->o.metrics && is_get && !strcmp(url, h->o.metrics_path))
		return metrics(h, c, rq);
	if (strncmp(url, pre, sizeof(pre) - 1))
		return fail(c, rq, 404, "%s: no such resource; the REST API "
			    "is under /v1/models/", url);
	name = url + sizeof(pre) - 1;
	name_n = strcspn(name, "/:");
	rest = name + name_n;
	m = sv_find(h->s, name, name_n);
	if (!strncmp(rest, "/versions/", 10)) {
		p = rest + 10;
		rest = p + strcspn(p, "/:");
		if (parse_num(p, (size_t)(rest - p), &ver))
			return fail(c, rq, 400, "Malformed request: %s %s: "
				    "a version is a decimal number", method,
				    url);
	} else if (!strncmp(rest, "/labels/", 8)) {
		p = rest + 8;
		rest = p + strcspn(p, "/:");
		if (m && sv_label(m, p, (size_t)(rest - p), &ver))
			return fail(c, rq, 400, "Unrecognized servable "
				    "version label: %.*s", (int)(rest - p),
				    p);
	}
	if (!(*rest == 0 && is_get) && !(!strcmp(rest, "/metadata") &&
					 is_get) &&
	    !(*rest == ':' && is_post))
		return fail(c, rq, 400, "Malformed request: %s %s", method,
			    url);
	if (!m)
		return fail(c, rq, 404, "Servable not found for request: "
			    "model '%.*s'", (int)name_n, name);
	rq->model = m->name;
	rq->api = *rest == 0 ? "GetModelStatus" : *rest == '/' ?
		"GetModelMetadata" : !strcmp(rest, ":classify") ? "Classify" :
		!strcmp(rest, ":regress") ? "Regress" : "Predict";
	if (*rest == 0) {
		tfk_buf_init(&b);
		if (sv_status_json(m, ver, &b)) {
			tfk_buf_release(&b);
			if (ver >= 0)
				return fail(c, rq, 404, "Could not find "
					    "version %" PRId64 " of model %s",
					    ver, m->name);
			return fail(c, rq, 404, "Could not find any versions "
				    "of model %s", m->name);
		}
		ok = tfk_buf_ok(&b) ? answer(c, rq, 200, &b) :
			fail(c, rq, 500, "out of memory");
		tfk_buf_release(&b);
		return ok;
	}
	if (*rest == ':' && strcmp(rest, ":predict") &&
	    strcmp(rest, ":classify") && strcmp(rest, ":regress"))
		return fail(c, rq, 400, "Malformed request: %s %s", method,
			    url);
	if (!(v = sv_acquire(m, ver))) {
		if (ver >= 0)
			return fail(c, rq, 404, "Servable not found for "
				    "request: Specific(%s, %" PRId64 ")",
				    m->name, ver);
		return fail(c, rq, 404, "Servable not found for request: "
			    "Latest(%s)", m->name);
	}
	if (!strcmp(rest, ":classify")) {
		ok = examples(h, c, rq, v, TFK_RJ_CLASSIFY);
	} else if (!strcmp(rest, ":regress")) {
		ok = examples(h, c, rq, v, TFK_RJ_REGRESS);
	} else if (*rest == ':') {
		ok = predict(h, c, rq, v);
	} else {
		tfk_buf_init(&b);
		tfk_rj_metadata(&b, m->name, v->num, v->s);
		ok = tfk_buf_ok(&b) ? answer(c, rq, 200, &b) :
			fail(c, rq, 500, "out of memory");
		tfk_buf_release(&b);
	}
	sv_release(v);
	return ok;
}

/* Slow clients ------------------------------------------------------------ */

static void on_conn(void *cls, struct MHD_Connection *c, void **ctx,
		    enum MHD_ConnectionNotificationCode code)
{
	struct sv_http *h = cls;
	struct conn *k = *ctx;
	const union MHD_ConnectionInfo *ci;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(c,
					     MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!ci || !(k = tfk_calloc(1, sizeof(*k))))
			return;	/* no clock: libmicrohttpd's timeout only */
		k->fd = ci->connect_fd;
		k->phase = P_HEAD;
		k->deadline = tfk_sv_now() + h->o.header_ms / 1000.0;
		pthread_mutex_lock(&h->lock);
		k->next = h->conns;
		if (h->conns)
			h->conns->prev = k;
		h->conns = k;
		pthread_mutex_unlock(&h->lock);
		*ctx = k;
		return;
	}
	/* closed: libmicrohttpd closes the socket after this */
	if (h->door_on) {
		pthread_mutex_lock(&h->lock);
		if (h->n_open > 0 && h->n_open-- >= h->o.max_conns)
			pthread_cond_signal(&h->room);
		pthread_mutex_unlock(&h->lock);
	}
	if (!k)
		return;
	pthread_mutex_lock(&h->lock);
	if (k->prev)
		k->prev->next = k->next;
	else
		h->conns = k->next;
	if (k->next)
		k->next->prev = k->prev;
	pthread_mutex_unlock(&h->lock);
	tfk_free(k);
	*ctx = NULL;
}

/*
 * Set c's clock to phase p, due ms from now (P_HEAD keeps a running
 * header clock: a first request's started at the connection). -1 when
 * the reaper has cut the connection (its 408 sent).
 */
static int clock_to(struct sv_http *h, struct MHD_Connection *c,
		    enum phase p, long ms)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *k = ci ? ci->socket_context : NULL;
	int cut;

	if (!k)
		return 0;
	pthread_mutex_lock(&h->lock);
	cut = k->phase == P_CUT;
	if (!cut && (p != P_HEAD || k->phase == P_IDLE)) {
		k->phase = p;
		k->deadline = tfk_sv_now() + ms / 1000.0;
	}
	pthread_mutex_unlock(&h->lock);
	return cut ? -1 : 0;
}

/* The request line is in: the next request's header clock starts. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)uri;
	clock_to(cls, c, P_HEAD, ((struct sv_http *)cls)->o.header_ms);
	return NULL;
}

/*
 * Cut k (the lock held): a client late with its headers or body gets
 * TF Serving's error form with 408 (written here: libmicrohttpd is
 * only reading it), then the socket is shut down, which ends
 * libmicrohttpd's reading and so the connection.
 */
static void cut(struct sv_http *h, struct conn *k)
{
	char body[256], msg[512];
	int n;

	if (k->phase != P_IDLE) {
		snprintf(body, sizeof(body), "{\"error\": \"the request's "
			 "%s did not arrive within %ld ms (--%s)\"}",
			 k->phase == P_HEAD ? "headers" : "body",
			 k->phase == P_HEAD ? h->o.header_ms : h->o.body_ms,
			 k->phase == P_HEAD ? "header_timeout_in_ms" :
			 "body_timeout_in_ms");
		n = snprintf(msg, sizeof(msg), "HTTP/1.1 408 Request Timeout"
			     "\r\nContent-Type: application/json\r\n"
			     "Content-Length: %zu\r\nConnection: close\r\n"
			     "\r\n%s", strlen(body), body);
		/* a client gone or not reading is not told */
		(void)send(k->fd, msg, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
	shutdown(k->fd, SHUT_RDWR);
	k->phase = P_CUT;
}

static void *reap(void *arg)
{
	struct sv_http *h = arg;

	pthread_mutex_lock(&h->lock);
	while (!h->reaper_stop) {
		double now = tfk_sv_now(), next = now + 1, rel;
		struct timespec ts;
		struct conn *k;

		for (k = h->conns; k; k = k->next) {
			if (k->phase == P_RUN || k->phase == P_CUT)
				continue;
			if (k->deadline <= now)
				cut(h, k);
			else if (k->deadline < next)
				next = k->deadline;
		}
		rel = next - now + 0.001;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)rel;
		ts.tv_nsec += (long)((rel - (double)(time_t)rel) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&h->wake, &h->lock, &ts);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *data,
				  size_t *data_n, void **con_cls)
{
	struct sv_http *h = cls;
	struct req *rq = *con_cls;

	if (!rq) {
		if (clock_to(h, c, P_BODY, h->o.body_ms))
			return MHD_NO;
		rq = tfk_calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		tfk_buf_init(&rq->body);
		rq->t0 = tfk_sv_now();
		snprintf(rq->method, sizeof(rq->method), "%s", method);
		rq->path = tfk_strdup(url);
		atomic_fetch_add(&h->in_flight, 1);
		*con_cls = rq;
		return MHD_YES;
	}
	if (*data_n) {
		if (rq->body.len + *data_n > h->o.max_body)
			rq->too_big = 1;
		else
			tfk_buf_add(&rq->body, data, *data_n);
		*data_n = 0;
		return MHD_YES;
	}
	if (clock_to(h, c, P_RUN, 0))
		return MHD_NO;	/* the reaper answered 408 */
	if (rq->too_big)
		return fail(c, rq, 413, "request body over the limit of %"
			    PRIu64 " bytes (--max_body_bytes)",
			    h->o.max_body);
	if (!tfk_buf_ok(&rq->body))
		return fail(c, rq, 429, "out of memory for the request body");
	if (atomic_load(&h->stopping))
		return fail(c, rq, 503, "the server is stopping");
	return route(h, c, rq, url, method);
}

static void on_done(void *cls, struct MHD_Connection *c, void **con_cls,
		    enum MHD_RequestTerminationCode why)
{
	struct sv_http *h = cls;
	struct req *rq = *con_cls;

	clock_to(h, c, P_IDLE, h->o.timeout_ms);
	if (!rq)
		return;
	if (h->o.access_log) {
		char when[32];
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		/* status 0: the connection ended before an answer */
		fprintf(h->o.access_log, "%s %s %s %u %zu %.0f\n", when,
			rq->method, rq->path ? rq->path : "-", rq->status,
			rq->bytes, (tfk_sv_now() - rq->t0) * 1e6);
	}
	/* status 0: the client left before an answer; not a request */
	if (rq->model && rq->api && rq->status)
		sv_metrics_request(h->o.metrics, rq->model, rq->api,
				   rq->status, (tfk_sv_now() - rq->t0) * 1e6);
	tfk_buf_release(&rq->body);
	tfk_free(rq->path);
	tfk_free(rq);
	*con_cls = NULL;
	atomic_fetch_sub(&h->in_flight, 1);
}

/* The door ---------------------------------------------------------------- */

/*
 * Wait (the lock held) while --max_connections are open; 0 when
 * stopping. The count is ours, not libmicrohttpd's: it takes an added
 * connection in its own thread later, so its count lags behind (a
 * reading of it let a seventh connection of six in under load). A
 * connection libmicrohttpd drops before it starts (out of memory) is
 * never told closed and stays counted.
 */
static int room_for_one(struct sv_http *h)
{
	while (h->n_open >= h->o.max_conns && !atomic_load(&h->stopping))
		pthread_cond_wait(&h->room, &h->lock);
	return !atomic_load(&h->stopping);
}

/*
 * The pool's threads each waiting in accept on one socket race for
 * every connection, and one thread often wins most of a client's
 * (wrk's 8 connections landed 6 to 2, halving the rate). Here one
 * thread accepts and hands each connection to libmicrohttpd, which
 * gives it to the pool thread its descriptor number picks (modulo the
 * pool's size, the next one with room): consecutive connections go to
 * consecutive threads. At --max_connections it stops accepting until
 * one closes (new ones wait in the listen queue); libmicrohttpd closes
 * one over --max_connections_per_ip at once.
 */
static void *door(void *arg)
{
	struct sv_http *h = arg;
	struct pollfd pf[2] = { { h->lfd, POLLIN, 0 },
				{ h->door_wake[0], POLLIN, 0 } };

	for (;;) {
		struct sockaddr_storage ss;
		socklen_t n = sizeof(ss);
		int fd, ok;

		pthread_mutex_lock(&h->lock);
		ok = room_for_one(h);
		pthread_mutex_unlock(&h->lock);
		if (!ok)
			break;
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			break;
		if (pf[1].revents)
			break;
		if (!(pf[0].revents & POLLIN))
			continue;
		fd = accept4(h->lfd, (struct sockaddr *)&ss, &n,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				struct timespec ts = { 0, 10 * 1000 * 1000 };

				tfk_cli_warn("REST: cannot accept a connection: "
					     "%s", strerror(errno));
				nanosleep(&ts, NULL);
			}
			continue;
		}
		pthread_mutex_lock(&h->lock);
		h->n_open++;
		pthread_mutex_unlock(&h->lock);
		/* refused (per address, or out of memory): closed, uncounted */
		if (MHD_add_connection(h->d, fd, (struct sockaddr *)&ss, n) !=
		    MHD_YES) {
			pthread_mutex_lock(&h->lock);
			h->n_open--;
			pthread_mutex_unlock(&h->lock);
		}
	}
	return NULL;
}

/* Open our listening socket and start the door; 0 or -1 (logged). */
static int door_open(struct sv_http *h, long *port)
{
	if ((h->lfd = sv_listen("0.0.0.0", h->o.port, port)) < 0)
		return -1;
	if (pipe2(h->door_wake, O_CLOEXEC)) {
		close(h->lfd);
		return -1;
	}
	h->door_on = 1;
	return 0;
}

static void door_close(struct sv_http *h)
{
	if (write(h->door_wake[1], "", 1) != 1)
		tfk_cli_warn("REST: cannot wake the door");
	pthread_mutex_lock(&h->lock);
	pthread_cond_signal(&h->room);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->door, NULL);
	close(h->lfd);
	close(h->door_wake[0]);
	close(h->door_wake[1]);
}

/* Start and stop ---------------------------------------------------------- */

/*
 * libmicrohttpd's messages, one line each; under a flood of refused or
 * abandoned connections the same message comes again and again, so a
 * message like the last (its first 32 bytes) within 10 s is counted,
 * and the count told with the next one logged.
 */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static char last[512];
	static double last_t;
	static long same;
	char msg[512];
	double now = tfk_sv_now();
	size_t n;

	(void)cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = 0;
	pthread_mutex_lock(&lock);
	if (!strncmp(msg, last, 32) && now - last_t < 10) {
		same++;
	} else {
		if (same)
			tfk_cli_warn("libmicrohttpd: %s (%ld more times)", last,
				     same);
		tfk_cli_warn("libmicrohttpd: %s", msg);
		memcpy(last, msg, n + 1);
		last_t = now;
		same = 0;
	}
	pthread_mutex_unlock(&lock);
}

struct sv_http *sv_http_start(struct sv_server *s,
			      const struct sv_http_opts *o, long *port)
{
	struct sv_http *h = tfk_calloc(1, sizeof(*h));
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC |
		MHD_USE_ERROR_LOG;
	const union MHD_DaemonInfo *di;

	if (!h) {
		tfk_cli_warn("out of memory");
		return NULL;
	}
	h->s = s;
	h->o = *o;
	/* libmicrohttpd shares the limit out among its pool's threads */
	if (h->o.threads > h->o.max_conns)
		h->o.threads = h->o.max_conns;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->wake, NULL);
	pthread_cond_init(&h->room, NULL);
	{
		/* the options both modes share; a pool's size only for a pool */
		struct MHD_OptionItem op[] = {
			{ MHD_OPTION_CONNECTION_TIMEOUT,
			  (intptr_t)((o->timeout_ms + 999) / 1000), NULL },
			{ MHD_OPTION_CONNECTION_LIMIT, (intptr_t)o->max_conns,
			  NULL },
			{ MHD_OPTION_PER_IP_CONNECTION_LIMIT,
			  (intptr_t)o->max_per_ip, NULL },
			{ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_conn, h },
			{ MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)on_uri, h },
			{ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_done, h },
			{ MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)h->o.threads,
			  NULL },
			{ MHD_OPTION_END, 0, NULL },
		};

		if (o->thread_per_connection) {
			/* a pool thread may hold several connections: one
			 * waiting for its batch would stall the others */
			flags |= MHD_USE_THREAD_PER_CONNECTION;
			op[6].option = MHD_OPTION_END;
		} else {
			if (door_open(h, port))
				goto fail;
			flags |= MHD_USE_NO_LISTEN_SOCKET;
			if (MHD_is_feature_supported(MHD_FEATURE_EPOLL) ==
			    MHD_YES)
				flags |= MHD_USE_EPOLL;
		}
		h->d = MHD_start_daemon(flags, (uint16_t)o->port, NULL, NULL,
					on_request, h,
					MHD_OPTION_EXTERNAL_LOGGER, mhd_log,
					NULL, MHD_OPTION_ARRAY, op,
					MHD_OPTION_END);
	}
	if (!h->d)
		goto fail;
	if (h->door_on && pthread_create(&h->door, NULL, door, h)) {
		MHD_stop_daemon(h->d);
		goto fail;
	}
	if (!pthread_create(&h->reaper, NULL, reap, h))
		h->reaper_on = 1;
	if (!h->door_on) {
		di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
		*port = di ? di->port : o->port;
	}
	return h;
fail:
	tfk_cli_warn("port %ld: cannot serve HTTP there (in use?)", o->port);
	if (h->door_on) {
		close(h->lfd);
		close(h->door_wake[0]);
		close(h->door_wake[1]);
	}
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->wake);
	pthread_cond_destroy(&h->room);
	tfk_free(h);
	return NULL;
}

void sv_http_stop(struct sv_http *h, long wait_ms)
{
	MHD_socket s;
	double end = tfk_sv_now() + wait_ms / 1000.0;

	atomic_store(&h->stopping, 1);
	if (h->door_on) {
		door_close(h);
	} else if ((s = MHD_quiesce_daemon(h->d)) != MHD_INVALID_SOCKET) {
		close(s);
	}
	while (atomic_load(&h->in_flight) > 0 && tfk_sv_now() < end) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	MHD_stop_daemon(h->d);
	if (h->reaper_on) {
		pthread_mutex_lock(&h->lock);
		h->reaper_stop = 1;
		pthread_cond_signal(&h->wake);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->reaper, NULL);
	}
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->wake);
	pthread_cond_destroy(&h->room);
	tfk_free(h);
}
