/*
 * tfk-serve: serve SavedModels (or .tflite) over TensorFlow Serving's
 * REST and gRPC APIs, with TF Serving's flags, URLs, JSON, messages,
 * version directories and model config file, so that TF Serving's
 * clients work unchanged.
 *
 * This file: options, the config, signals and main. The models are
 * given by --model_name and --model_base_path (one model, TF Serving's
 * default policy "latest") or by --model_config_file (several models,
 * their version policies and labels; model/modelconfig.h), read again
 * on SIGHUP and every --model_config_file_poll_wait_seconds. Each
 * model's base path is polled every --file_system_poll_wait_seconds;
 * cmd/serve/models.c loads and unloads versions as the policy says.
 *
 * Signals: SIGTERM, SIGINT and SIGHUP are blocked in every thread and
 * taken by the main thread with sigtimedwait, which is also the poll
 * clock; on SIGTERM or SIGINT the server stops accepting, finishes the
 * requests in flight and exits 0. Events (configured, loaded, unloaded,
 * failed, listening, stopping) are one line each on stderr.
 *
 * --monitoring_config_file turns on Prometheus metrics with TF
 * Serving's names (cmd/serve/metrics.c) at the path it gives.
 *
 * Both front ends are on at once, as in TF Serving: gRPC on --port
 * (cmd/serve/grpc.c) and REST on --rest_api_port (cmd/serve/http.c),
 * each with --rest_api_num_threads workers.
 *
 * Slow and greedy clients: each front end holds at most
 * --max_connections connections, --max_connections_per_ip of them
 * from one address; a request's headers must come within
 * --header_timeout_in_ms and its body within --body_timeout_in_ms
 * (cmd/serve/http.c; for gRPC the HTTP/2 preface, cmd/serve/accept.c,
 * and an idle connection closes after grpc.max_connection_idle_ms).
 *
 * --enable_batching merges requests for the same version and
 * signature into batches (cmd/serve/batch.c) as --batching_parameters_
 * file says. The REST front end is cmd/serve/http.c.
 */
#include "model/batchconfig.h"
#include "model/modelconfig.h"
#include "model/monitoring.h"
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

static const char *model_name, *model_base_path, *access_log_path,
		  *model_config_file;
static long rest_api_port = 8501, grpc_port = 8500, poll_wait = 1,
	    timeout_ms = 30000, n_threads, config_poll_wait;
static uint64_t max_body = 64ull << 20;
static long max_conns = 1024, max_per_ip = 128, header_ms = 10000,
	    body_ms = 60000;
static const char *grpc_channel_arguments;
static const char *monitoring_file, *batching_file;
static struct tfk_monitoring_config monitoring;	/* read from it */
static struct tfk_batch_config batching;	/* read from the other */
static int enable_batching, check_config;

static const struct tfk_opt opts[] = {
	TFK_OPT_STR(0, "model_name", &model_name, "NAME",
		    "the model's name in URLs (/v1/models/NAME)"),
	TFK_OPT_STR(0, "model_base_path", &model_base_path, "DIR",
		    "the directory of numbered version directories"),
	TFK_OPT_STR(0, "model_config_file", &model_config_file, "FILE",
		    "models, version policies and labels (tfk-serve.config(5)); "
		    "instead of --model_name"),
	TFK_OPT_LONG(0, "model_config_file_poll_wait_seconds",
		     &config_poll_wait, "S",
		     "read the config file again this often (0: on SIGHUP "
		     "only)"),
	TFK_OPT_FLAG(0, "check_config", &check_config,
		     "print the model config as JSON and exit (tfkit's own)"),
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
	TFK_OPT_LONG(0, "max_connections", &max_conns, "N",
		     "connections each API holds at most (more: REST's wait "
		     "to be accepted, gRPC's are closed)"),
	TFK_OPT_LONG(0, "max_connections_per_ip", &max_per_ip, "N",
		     "connections each API holds at most from one client "
		     "address"),
	TFK_OPT_LONG(0, "header_timeout_in_ms", &header_ms, "MS",
		     "a request's headers (gRPC: the HTTP/2 preface) must "
		     "arrive within this (else 408, closed)"),
	TFK_OPT_LONG(0, "body_timeout_in_ms", &body_ms, "MS",
		     "a REST request's body must arrive within this (else "
		     "408, closed)"),
	TFK_OPT_STR(0, "grpc_channel_arguments", &grpc_channel_arguments,
		    "K=V,...", "gRPC server channel arguments, as TF Serving "
		    "(grpc.max_connection_idle_ms=300000 unless given)"),
	TFK_OPT_STR(0, "access_log", &access_log_path, "FILE",
		    "append one line per request to FILE"),
	TFK_OPT_LONG(0, "port", &grpc_port, "PORT",
		     "the gRPC port (0: any free one, logged)"),
	TFK_OPT_FLAG(0, "enable_batching", &enable_batching,
		     "run requests that arrive together as one batch"),
	TFK_OPT_STR(0, "batching_parameters_file", &batching_file, "FILE",
		    "max_batch_size, batch_timeout_micros, ... (text "
		    "format)"),
	TFK_OPT_STR(0, "monitoring_config_file", &monitoring_file, "FILE",
		    "serve Prometheus metrics as FILE says (prometheus_config "
		    "{ enable: true })"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-serve",
	"(--model_name NAME --model_base_path DIR | --model_config_file F) "
	"[--port PORT] [--rest_api_port PORT] "
	"[--file_system_poll_wait_seconds S] [--access_log FILE]",
	"serve SavedModels or .tflite over TensorFlow Serving's REST and gRPC "
	"APIs",
	"tfk-serve --model_name half --model_base_path /models/half &\n"
	"  curl -d '{\"instances\": [1.0, 2.0]}' "
	"localhost:8501/v1/models/half:predict",
};

/* Config ---------------------------------------------------------------- */

/* The config the flags give: --model_name at --model_base_path, latest. */
static int flags_config(struct tfk_server_config *c)
{
	memset(c, 0, sizeof(*c));
	if (!(c->models = tfk_calloc(1, sizeof(*c->models))))
		return -1;
	c->n_models = 1;
	c->models[0].policy = TFK_POLICY_LATEST;
	c->models[0].num_versions = 1;
	c->models[0].name = tfk_strdup(model_name);
	c->models[0].base_path = tfk_strdup(model_base_path);
	c->models[0].versions = tfk_calloc(1, sizeof(int64_t));
	c->models[0].labels = tfk_calloc(1, sizeof(*c->models[0].labels));
	return c->models[0].name && c->models[0].base_path &&
		c->models[0].versions && c->models[0].labels ? 0 : -1;
}

/*
 * --check_config: the config read, as one JSON object on stdout, so that
 * a script (and the TensorFlow tier, against TF Serving's own parser)
 * sees what the server would serve:
 *   {"models":[{"name":"a","base_path":"/m","policy":"specific",
 *     "num_versions":1,"versions":[1,2],"labels":{"stable":1}}]}
 */
static int print_config(void)
{
	static const char *const policies[] = { "latest", "all", "specific" };
	struct tfk_server_config c;
	struct tfk_err err;
	struct tfk_buf b;
	int i, j, rc;

	if (model_config_file)
		rc = tfk_server_config_load(model_config_file, &c, &err);
	else
		rc = flags_config(&c) ? tfk_errf(&err, TFK_ENOMEM,
						 "out of memory") : 0;
	if (rc) {
		tfk_server_config_free(&c);
		return tfk_cli_fail(&err);
	}
	tfk_buf_init(&b);
	tfk_buf_adds(&b, "{\"models\":[");
	for (i = 0; i < c.n_models; i++) {
		const struct tfk_model_config *m = &c.models[i];

		tfk_buf_adds(&b, i ? ",{\"name\":" : "{\"name\":");
		tfk_buf_add_json_str(&b, m->name, strlen(m->name));
		tfk_buf_adds(&b, ",\"base_path\":");
		tfk_buf_add_json_str(&b, m->base_path, strlen(m->base_path));
		tfk_buf_addf(&b, ",\"policy\":\"%s\",\"num_versions\":%d,"
			     "\"versions\":[", policies[m->policy],
			     m->num_versions);
		for (j = 0; j < m->n_versions; j++)
			tfk_buf_addf(&b, "%s%" PRId64, j ? "," : "",
				     m->versions[j]);
		tfk_buf_adds(&b, "],\"labels\":{");
		for (j = 0; j < m->n_labels; j++) {
			if (j)
				tfk_buf_adds(&b, ",");
			tfk_buf_add_json_str(&b, m->labels[j].label,
					     strlen(m->labels[j].label));
			tfk_buf_addf(&b, ":%" PRId64, m->labels[j].version);
		}
		tfk_buf_adds(&b, "}}");
	}
	tfk_buf_adds(&b, "]}\n");
	tfk_server_config_free(&c);
	rc = !tfk_buf_ok(&b) || fwrite(b.data, 1, b.len, stdout) != b.len ||
		fflush(stdout);
	tfk_buf_release(&b);
	if (rc)
		tfk_cli_warn("standard output: cannot write");
	return rc;
}

/*
 * Read --model_config_file and take it. At start a bad file ends the
 * server (exit 1); later, on SIGHUP or a poll, it is logged and the
 * config served goes on, as TF Serving keeps its config on a failed
 * reload.
 */
static int load_config(struct sv_server *s, int first)
{
	struct tfk_server_config c;
	struct tfk_err err;
	int rc;

	rc = tfk_server_config_load(model_config_file, &c, &err);
	if (!rc)
		rc = sv_configure(s, &c, &err);
	tfk_server_config_free(&c);
	if (rc) {
		if (first)
			return tfk_cli_fail(&err);
		tfk_cli_warn("%s (the config served is kept)", err.msg);
		return 0;
	}
	if (!first)
		tfk_cli_warn("%s: config reloaded", model_config_file);
	return 0;
}

/* --grpc_channel_arguments: "K=V" items, comma-separated, each key set. */
static void check_channel_arguments(const char *a)
{
	const char *p = a;

	while (*p) {
		size_t n = strcspn(p, ","), k = strcspn(p, "=");

		if (k >= n || !k)
			tfk_cli_usage_error("--grpc_channel_arguments: '%.*s' "
					    "is not KEY=VALUE", (int)n, p);
		p += n;
		if (*p)
			p++;
	}
}

/* main ------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct sv_server srv = { 0 };
	struct sv_http_opts ho = { 0 };
	struct sv_grpc_opts go = { 0 };
	struct sv_http *h;
	struct sv_grpc *g;
	sigset_t sigs;
	double next_poll, next_config;
	long port;
	int sig;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (batching_file && !enable_batching)
		tfk_cli_usage_error("--batching_parameters_file: give "
				    "--enable_batching too");
	if (argc)
		tfk_cli_usage_error("unexpected argument '%s'", argv[0]);
	if (model_config_file && (model_name || model_base_path))
		tfk_cli_usage_error("--model_config_file names the models: "
				    "leave out --model_name and "
				    "--model_base_path");
	if (!model_config_file) {
		if (!model_name || !*model_name)
			tfk_cli_usage_error("--model_name is required (or "
					    "--model_config_file)");
		if (!model_base_path)
			tfk_cli_usage_error("--model_base_path is required");
		if (strchr(model_name, '/') || strchr(model_name, ':'))
			tfk_cli_usage_error("--model_name: '%s' holds '/' or "
					    "':', which URLs cannot carry",
					    model_name);
	} else if (config_poll_wait < 0) {
		tfk_cli_usage_error("--model_config_file_poll_wait_seconds "
				    "must be 0 or more");
	}
	if (check_config)
		return print_config();
	if (rest_api_port < 0 || rest_api_port > 65535)
		tfk_cli_usage_error("--rest_api_port: %ld is not a port",
				    rest_api_port);
	if (grpc_port < 0 || grpc_port > 65535)
		tfk_cli_usage_error("--port: %ld is not a port", grpc_port);
	if (poll_wait < 0 || timeout_ms <= 0 || n_threads < 0 ||
	    n_threads > 1024)
		tfk_cli_usage_error("--file_system_poll_wait_seconds, "
				    "--rest_api_timeout_in_ms and "
				    "--rest_api_num_threads must be positive");
	if (max_conns < 1 || max_per_ip < 1 || header_ms < 1 || body_ms < 1)
		tfk_cli_usage_error("--max_connections, "
				    "--max_connections_per_ip, "
				    "--header_timeout_in_ms and "
				    "--body_timeout_in_ms must be 1 or more");
	if (grpc_channel_arguments)
		check_channel_arguments(grpc_channel_arguments);
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
		/* a request waits in its thread for its batch: with batching,
		 * enough gRPC workers to fill batches from many clients (REST
		 * then has a thread per connection: cmd/serve/http.c) */
		if (enable_batching && n_threads < 64)
			n_threads = 64;
	}
	if (enable_batching) {
		struct tfk_err err;

		tfk_batch_config_defaults(&batching);
		if (batching_file && tfk_batch_config_load(batching_file,
							   &batching, &err))
			return tfk_cli_fail(&err);
		srv.batching = &batching;
		ho.thread_per_connection = 1;
	}
	if (monitoring_file) {
		struct tfk_err err;

		if (tfk_monitoring_config_load(monitoring_file, &monitoring,
					       &err))
			return tfk_cli_fail(&err);
		if (monitoring.prometheus) {
			if (!(ho.metrics = sv_metrics_new())) {
				tfk_cli_warn("out of memory");
				return 1;
			}
			ho.metrics_path = monitoring.path;
			srv.metrics = ho.metrics;
		}
	}
	/* runner slots: the REST threads', then the gRPC workers' */
	srv.n_slots = 2 * (int)n_threads;
	pthread_mutex_init(&srv.lock, NULL);
	pthread_mutex_init(&srv.config_lock, NULL);

	/* blocked here, so every thread made from now on has them blocked */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	if (model_config_file) {
		if (load_config(&srv, 1))
			return 1;
	} else {
		struct tfk_server_config c;
		struct tfk_version_dir *d;
		struct tfk_err err;
		int n, rc;

		/* one model by flags: a base path that is not there is an
		 * error at start, as in TF Serving */
		if (tfk_versions_scan(model_base_path, &d, &n, &err))
			return tfk_cli_fail(&err);
		tfk_versions_free(d, n);
		rc = flags_config(&c) ? TFK_ENOMEM :
			sv_configure(&srv, &c, &err);
		tfk_server_config_free(&c);
		if (rc)
			return tfk_cli_fail(&err);
	}
	sv_poll(&srv, 1);

	ho.port = rest_api_port;
	ho.threads = n_threads;
	ho.timeout_ms = timeout_ms;
	ho.max_body = max_body;
	ho.max_conns = go.max_conns = max_conns;
	ho.max_per_ip = go.max_per_ip = max_per_ip;
	ho.header_ms = go.header_ms = header_ms;
	ho.body_ms = body_ms;
	go.channel_args = grpc_channel_arguments;
	go.host = "0.0.0.0";
	go.port = grpc_port;
	go.threads = (int)n_threads;
	go.first_tid = (int)n_threads;
	go.max_body = max_body;
	go.metrics = ho.metrics;
	if (!(g = sv_grpc_start(&srv, &go, &port))) {
		sv_shutdown(&srv);
		return 1;
	}
	tfk_cli_warn("gRPC API listening on port %ld", port);
	h = sv_http_start(&srv, &ho, &port);
	if (!h) {
		sv_grpc_stop(g, timeout_ms);
		sv_shutdown(&srv);
		return 1;
	}
	tfk_cli_warn("REST API listening on port %ld", port);
	if (ho.metrics)
		tfk_cli_warn("Prometheus metrics at %s", ho.metrics_path);
	next_poll = tfk_sv_now() + (double)poll_wait;
	next_config = tfk_sv_now() + (double)config_poll_wait;
	for (;;) {
		double now = tfk_sv_now(), wake = 3600;
		struct timespec ts;

		if (poll_wait && next_poll - now < wake)
			wake = next_poll - now;
		if (model_config_file && config_poll_wait &&
		    next_config - now < wake)
			wake = next_config - now;
		if (wake < 0)
			wake = 0;
		ts.tv_sec = (time_t)wake;
		ts.tv_nsec = (long)((wake - (double)ts.tv_sec) * 1e9);
		sig = sigtimedwait(&sigs, NULL, &ts);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		now = tfk_sv_now();
		pthread_mutex_lock(&srv.config_lock);
		if (model_config_file && (sig == SIGHUP || (config_poll_wait &&
							   now >= next_config))) {
			load_config(&srv, 0);
			next_config = now + (double)config_poll_wait;
			sv_poll(&srv, 0);	/* a new model is served now */
		} else if (sig == SIGHUP) {
			tfk_cli_warn("SIGHUP: no --model_config_file to read "
				     "again");
		}
		if (poll_wait && now >= next_poll) {
			sv_poll(&srv, 0);
			next_poll = now + (double)poll_wait;
		}
		pthread_mutex_unlock(&srv.config_lock);
	}
	tfk_cli_warn("%s: stopping: finishing the requests in flight",
		     strsignal(sig));
	sv_http_stop(h, timeout_ms);
	sv_grpc_stop(g, timeout_ms);
	sv_shutdown(&srv);
	pthread_mutex_destroy(&srv.lock);
	pthread_mutex_destroy(&srv.config_lock);
	if (ho.access_log)
		fclose(ho.access_log);
	sv_metrics_free(ho.metrics);
	tfk_cli_warn("stopped");
	return 0;
}
