/*
 * serve.h - the parts of tfk-serve: the models and their versions
 * (cmd/serve/models.c: policies, polling, loading, reference counts,
 * status), the REST front end (cmd/serve/http.c: libmicrohttpd,
 * routing, predict), the gRPC front end (cmd/serve/grpc.c, its
 * connections accepted by cmd/serve/accept.c), the metrics
 * (cmd/serve/metrics.c) and options, config and signals (cmd/serve.c).
 */
#ifndef TFK_CMD_SERVE_H
#define TFK_CMD_SERVE_H

#include "model/batchconfig.h"
#include "model/modelconfig.h"
#include "model/servable.h"
#include "util/buf.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

/*
 * A loaded version. Shared by the requests that acquired it; freed
 * (runners, then the servable) by whoever drops the last reference: the
 * model when the version stops being served, or the last request still
 * running on it. runners[tid * n_sigs + k] is worker thread tid's runner
 * for signature k, made on first use and touched by that thread alone.
 */
struct sv_version {
	int64_t num;
	const char *model;		/* its model's name (for the log) */
	char *path;
	struct tfk_servable *s;
	atomic_int refs;
	int n_slots, n_sigs;
	struct tfk_runner **runners;
	/* --enable_batching: the parameters (NULL: off) and a batcher per
	 * signature, made on first use under batch_lock */
	const struct tfk_batch_config *batching;
	pthread_mutex_t batch_lock;
	struct sv_batcher **batchers;
	struct sv_metrics *metrics;	/* NULL: none */
};

/*
 * A configured model (cmd/serve/models.c). Its name never changes and
 * the struct lives as long as the server: a model taken out of the
 * config stops serving (configured 0) but keeps its status records, as
 * TF Serving reports unloaded versions END. lock guards served, labels
 * and recs; cfg and the scan state are the main thread's alone.
 */
struct sv_model {
	char *name;
	struct tfk_model_config cfg;
	pthread_mutex_t lock;
	struct sv_version **served;	/* highest version first */
	int n_served;
	struct tfk_version_label *labels;
	int n_labels;
	struct sv_rec *recs;		/* every version seen, for status */
	int n_recs;
	int configured;
	int n_slots;			/* worker threads with own runners */
	const struct tfk_batch_config *batching;	/* NULL: off */
	struct sv_metrics *metrics;	/* NULL: none */
	int scan_failed;
};

/*
 * The models: the array only grows, under lock. config_lock is held by
 * whoever configures or polls (the main thread, a gRPC
 * HandleReloadConfigRequest): one at a time.
 */
struct sv_server {
	pthread_mutex_t lock;
	pthread_mutex_t config_lock;
	struct sv_model **models;
	int n_models;
	int n_slots;
	const struct tfk_batch_config *batching;	/* NULL: off */
	struct sv_metrics *metrics;	/* NULL: none */
};

/* Batching (cmd/serve/batch.c) ------------------------------------------ */

/* The batch queue is full: 503 / UNAVAILABLE (a tfk_err code of ours). */
#define SV_EFULL (-100)

/* Outputs a batched run hands a request (owned; see sv_run). */
struct sv_outputs {
	struct tfk_tensor *t;
	int n;
};
/*
 * Run r (for signature sig of v) on in[]: through v's batcher when
 * batching is on and the inputs have a batch dimension, else directly.
 * out[] then points into r (direct) or into *own (batched), which the
 * caller releases with sv_outputs_release after using out[]. Errors: the
 * run's, TFK_EINVAL for a request over max_batch_size, SV_EFULL.
 */
int sv_run(struct sv_version *v, const struct tfk_sv_signature *sig,
	   struct tfk_runner *r, struct tfk_tensor *in,
	   const struct tfk_tensor **out, struct sv_outputs *own,
	   struct tfk_err *err);
void sv_outputs_release(struct sv_outputs *o);
/* Stop and free v's batchers (when v is freed: no request runs on it). */
void sv_batchers_free(struct sv_version *v);

/* The model named name[0..n), or NULL. */
struct sv_model *sv_find(struct sv_server *s, const char *name, size_t n);
/* The version num (-1: the highest served) with a reference, or NULL. */
struct sv_version *sv_acquire(struct sv_model *m, int64_t num);
void sv_release(struct sv_version *v);
/*
 * The runner for signature sig of v: worker tid's own (made on first
 * use, kept in v's slots, touched by that thread alone), or, for a tid
 * beyond the slots, a new one (*own set: free it after). TF Serving's
 * feeding rule: any shape (tfk_runner_opts.any_shape).
 */
struct tfk_runner *sv_runner(struct sv_version *v,
			     const struct tfk_sv_signature *sig, int tid,
			     int *own, struct tfk_err *err);
/* One version's status, for GetModelStatus. */
struct sv_status {
	int64_t version;
	int available;			/* else END */
	int code;			/* tensorflow.error.Code */
	char *msg;
};
/* The status of version num (-1: all) of m, highest first, into *out
 * (pair with sv_status_free): how many, or -1 out of memory. */
int sv_status_list(struct sv_model *m, int64_t num, struct sv_status **out);
void sv_status_free(struct sv_status *s, int n);
/* The version label[0..n) names: 0, or -1 for an unknown label. */
int sv_label(struct sv_model *m, const char *label, size_t n,
	     int64_t *num);
/*
 * Append the GetModelStatus JSON of version num (-1: all) to b, or
 * return -1 when the model has no such version (nothing appended).
 */
int sv_status_json(struct sv_model *m, int64_t num, struct tfk_buf *b);

/* Main thread: */
/* Take config c: new models added, changed ones updated (a new base
 * path starts afresh), dropped ones stop serving. */
int sv_configure(struct sv_server *s, const struct tfk_server_config *c,
		 struct tfk_err *err);
/* One look at every configured model's base path (loads and unloads). */
void sv_poll(struct sv_server *s, int first);
/* Stop serving everything and free the models. */
void sv_shutdown(struct sv_server *s);

/* Prometheus metrics (cmd/serve/metrics.c); every call takes NULL. */
struct sv_metrics;
struct sv_metrics *sv_metrics_new(void);
void sv_metrics_free(struct sv_metrics *m);
/* A request answered with HTTP status after us microseconds. */
void sv_metrics_request(struct sv_metrics *m, const char *model,
			const char *api, unsigned status, double us);
/* The model's run of one request took us microseconds. */
void sv_metrics_runtime(struct sv_metrics *m, const char *model,
			const char *api, double us);
/* A batch of rows (padded to size) ran for signature sig. */
void sv_metrics_batch(struct sv_metrics *m, const char *model,
		      const char *sig, int64_t rows, int64_t size);
/* A classify or regress request of n examples. */
void sv_metrics_examples(struct sv_metrics *m, const char *model, int n);
/* Append every metric in Prometheus' text format (version 0.0.4). */
void sv_metrics_text(struct sv_metrics *m, struct tfk_buf *b);

struct sv_http_opts {
	long port;		/* 0: any free one */
	long threads;
	long timeout_ms;	/* connection idle timeout */
	long max_conns, max_per_ip;	/* connections held at most */
	long header_ms, body_ms;	/* a request's headers, its body:
					 * received within this, or 408 */
	uint64_t max_body;
	FILE *access_log;	/* NULL: none */
	struct sv_metrics *metrics;	/* NULL: no metrics */
	const char *metrics_path;	/* GET here: the metrics */
	int thread_per_connection;	/* batching: requests wait */
};

struct sv_grpc_opts {
	const char *host;		/* "0.0.0.0" */
	long port;			/* 0: any free one */
	int threads;			/* workers */
	int first_tid;			/* their runner slots: from here */
	uint64_t max_body;		/* the largest request message */
	struct sv_metrics *metrics;	/* NULL: no metrics */
	long max_conns, max_per_ip;	/* connections held at most */
	long header_ms;			/* the HTTP/2 preface within this */
	const char *channel_args;	/* "k=v,k=v" (NULL: none) */
};

/*
 * A listening TCP socket (non-blocking, close-on-exec, backlog 1024) on
 * host:port: "0.0.0.0" as gRPC binds it, IPv6 and IPv4 on one socket
 * where the machine has IPv6 (IPv4 clients then come as mapped
 * addresses), else IPv4; any other host as an IPv4 address. *bound gets
 * the port bound (port 0: a free one). -1 with errno on failure.
 */
int sv_listen(const char *host, long port, long *bound);

/*
 * The gRPC front end's door (cmd/serve/accept.c): listen on host:port,
 * hold at most max_conns connections (max_per_ip per client address),
 * and hand each to hand(arg, fd) once it has sent HTTP/2's connection
 * preface, within preface_ms (else it is closed). *port gets the port
 * bound. NULL when the port cannot be bound (errno set).
 */
struct sv_accept_opts {
	const char *host;
	long port;
	long max_conns, max_per_ip;
	long preface_ms;
};
struct sv_acceptor;
struct sv_acceptor *sv_acceptor_start(const struct sv_accept_opts *o,
				      void (*hand)(void *arg, int fd),
				      void *arg, long *port);
/* Stop accepting: the connections still waiting are closed. */
void sv_acceptor_stop(struct sv_acceptor *a);

struct sv_grpc;
/* Start the gRPC front end (cmd/serve/grpc.c) on s; *port gets the port
 * bound. NULL on failure (logged). */
struct sv_grpc *sv_grpc_start(struct sv_server *s,
			      const struct sv_grpc_opts *o, long *port);
/* Stop accepting, let the calls in flight finish (up to wait_ms), stop. */
void sv_grpc_stop(struct sv_grpc *g, long wait_ms);

struct sv_http;
/* Start serving s; *port gets the port bound. NULL on failure (logged). */
struct sv_http *sv_http_start(struct sv_server *s,
			      const struct sv_http_opts *o, long *port);
/* Stop accepting, wait for the requests in flight (up to wait_ms),
 * stop. */
void sv_http_stop(struct sv_http *h, long wait_ms);

#endif
