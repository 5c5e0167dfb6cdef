/*
 * serve.h - the parts of tfk-serve: the model and its versions
 * (cmd/serve.c: polling, loading, reference counts, status) and the
 * REST front end (cmd/serve/http.c: libmicrohttpd, routing, predict).
 */
#ifndef TFK_CMD_SERVE_H
#define TFK_CMD_SERVE_H

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
	char *path;
	struct tfk_servable *s;
	atomic_int refs;
	int n_slots, n_sigs;
	struct tfk_runner **runners;
};

struct sv_model {
	const char *name, *base;
	pthread_mutex_t lock;
	struct sv_version *cur;		/* the version served; NULL: none */
	struct sv_rec *recs;		/* every version seen, for status */
	int n_recs;
	int n_slots;			/* worker threads with own runners */
};

/* The version num (-1: the one served) with a reference, or NULL. */
struct sv_version *sv_acquire(struct sv_model *m, int64_t num);
void sv_release(struct sv_version *v);
/*
 * Append the GetModelStatus JSON of version num (-1: all) to b, or
 * return -1 when the model has no such version (nothing appended).
 */
int sv_status_json(struct sv_model *m, int64_t num, struct tfk_buf *b);

struct sv_http_opts {
	long port;		/* 0: any free one */
	long threads;
	long timeout_ms;	/* connection idle timeout */
	uint64_t max_body;
	FILE *access_log;	/* NULL: none */
};

struct sv_http;
/* Start serving m; *port gets the port bound. NULL on failure (logged). */
struct sv_http *sv_http_start(struct sv_model *m,
			      const struct sv_http_opts *o, long *port);
/* Stop accepting, wait for the requests in flight (up to wait_ms),
 * stop. */
void sv_http_stop(struct sv_http *h, long wait_ms);

#endif
