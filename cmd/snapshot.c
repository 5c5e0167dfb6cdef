/*
 * tfk-snapshot: run a record-producing command once, keep its output
 * under a fingerprint, replay it on later runs, as
 * tf.data.experimental.snapshot does for a dataset.
 *
 *   tfk-snapshot DIR -- COMMAND [ARG...]
 *
 * COMMAND is run directly (no shell: argv as given); pipelines are
 * written `tfk-snapshot cache -- sh -c 'tfk-cat a | tfk-map ...'`. Its
 * stdout streams through to ours and into DIR/<fp>/ at the same time,
 * so a first run costs one extra copy, not a wait. The fingerprint
 * (lib/io/snapshot.h) covers the command line, the tfkit version and
 * every file the command names, by path, size and mtime, or by content
 * with --hash-inputs. tf.data fingerprints the dataset graph instead;
 * here the command line is the graph.
 *
 * Differences from tf.data's snapshot: one stream, not sharded
 * readers; the snapshot is complete only when COMMAND exits 0 and its
 * output is well-framed TFRecords (both crcs of each record checked on
 * the way through), else nothing is kept and COMMAND's exit status is
 * ours. A downstream reader that stops early (`| head`) abandons the
 * snapshot too: storing the rest would mean running COMMAND to its end
 * for nobody.
 *
 * Concurrency: writers hold an exclusive flock on DIR/<fp>.lock,
 * replays a shared one, so a second run of the same command waits for
 * the first and then replays (--no-wait: runs COMMAND uncached
 * instead). SIGINT/SIGTERM/SIGHUP are passed on to COMMAND before the
 * shared handler removes our temporary files and we die of the signal.
 */
#include "io/out.h"
#include "io/snapshot.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int list, gc, json, hash_inputs, no_wait, verbose, print_fp;
static const char *keep_arg, *max_age_arg;
static struct tfk_strlist extra_inputs;

static const struct tfk_opt opts[] = {
	TFK_OPT_FLAG(0, "hash-inputs", &hash_inputs,
		     "identify input files by a SHA-256 of their content "
		     "instead of size and mtime"),
	TFK_OPT_LIST(0, "input", &extra_inputs, "PATH",
		     "also fingerprint PATH (a directory: every file below "
		     "it); repeatable"),
	TFK_OPT_FLAG(0, "no-wait", &no_wait,
		     "when another run holds the snapshot, run COMMAND "
		     "without caching instead of waiting"),
	TFK_OPT_FLAG(0, "fingerprint", &print_fp,
		     "print the fingerprint of COMMAND and exit"),
	TFK_OPT_FLAG(0, "list", &list,
		     "list the snapshots in DIR, newest first"),
	TFK_OPT_FLAG(0, "json", &json, "--list as JSON lines"),
	TFK_OPT_FLAG(0, "gc", &gc,
		     "remove incomplete snapshots (not running ones) and, "
		     "with --keep/--max-age, old ones"),
	TFK_OPT_STR(0, "keep", &keep_arg, "N",
		    "--gc keeps the N newest complete snapshots"),
	TFK_OPT_STR(0, "max-age", &max_age_arg, "DAYS",
		    "--gc removes snapshots older than DAYS days"),
	TFK_OPT_FLAG('v', "verbose", &verbose,
		     "say on stderr what was replayed, stored or removed"),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-snapshot",
	"[options] DIR -- COMMAND [ARG...] | DIR --list | DIR --gc",
	"run a command once, store its records under a fingerprint, replay "
	"them on later runs",
	"tfk-snapshot cache -- sh -c 'tfk-csv train.csv | "
	"tfk-cat --take 1000' | tfk-count",
};

/* Running COMMAND ----------------------------------------------------- */

static volatile pid_t child = -1;
static const int fwd_sigs[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction old_act[3];

/* Pass the signal on to COMMAND, then let the shared handler remove
 * our temporaries and end us (it re-raises). */
static void on_signal(int sig)
{
	size_t i;

	if (child > 0)
		kill(child, sig);
	for (i = 0; i < 3; i++) {
		if (fwd_sigs[i] != sig)
			continue;
		if (old_act[i].sa_handler != SIG_DFL &&
		    old_act[i].sa_handler != SIG_IGN) {
			old_act[i].sa_handler(sig);
		} else {
			signal(sig, SIG_DFL);
			raise(sig);
		}
	}
}

static void forward_signals(void)
{
	struct sigaction sa;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++) {
		sigaction(fwd_sigs[i], NULL, &old_act[i]);
		if (old_act[i].sa_handler != SIG_IGN)
			sigaction(fwd_sigs[i], &sa, NULL);
	}
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* We were writing into a closed pipe: end as the other tools do. */
static void die_of_sigpipe(void)
{
	signal(SIGPIPE, SIG_DFL);
	raise(SIGPIPE);
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Run argv with its stdout through us to our stdout and into w (NULL:
 * just pass through). Returns our exit status: COMMAND's when it
 * failed, 1 when its output could not be stored, else 0.
 */
static int run(char **argv, struct tfk_snap_writer *w,
	       const struct tfk_snap_fp *fp, int argc)
{
	struct tfk_err err;
	uint8_t *buf;
	int pfd[2], status, rc = 0, store_failed = 0, pipe_gone = 0;
	double t0 = now_s();
	ssize_t k;
	pid_t pid;

	buf = tfk_malloc(1 << 20);
	if (!buf || pipe2(pfd, O_CLOEXEC) < 0) {
		tfk_cli_warn("cannot start %s: %s", argv[0],
			     buf ? strerror(errno) : "out of memory");
		tfk_free(buf);
		tfk_snap_abort(w);
		return 1;
	}
	fcntl(pfd[0], F_SETPIPE_SZ, 1 << 20);
	pid = fork();
	if (pid < 0) {
		tfk_cli_warn("cannot start %s: %s", argv[0], strerror(errno));
		tfk_free(buf);
		tfk_snap_abort(w);
		return 1;
	}
	if (pid == 0) {
		dup2(pfd[1], 1);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		tfk_cli_warn("%s: %s", argv[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	child = pid;
	close(pfd[1]);
	while ((k = read(pfd[0], buf, 1 << 20)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			tfk_cli_warn("%s: read failed: %s", argv[0],
				     strerror(errno));
			rc = 1;
			break;
		}
		if (write_all(1, buf, (size_t)k) < 0) {
			if (errno == EPIPE) {
				pipe_gone = 1;
			} else {
				tfk_cli_warn("<stdout>: write failed: %s",
					     strerror(errno));
				rc = 1;
			}
			break;
		}
		if (w && tfk_snap_write(w, buf, (size_t)k, &err) < 0) {
			tfk_cli_warn("%s output: %s; not stored", argv[0],
				     err.msg);
			tfk_snap_abort(w);
			w = NULL;
			store_failed = 1;
		}
	}
	/* Closing our end makes COMMAND's next write fail (SIGPIPE) when
	 * we stopped early, as in any pipeline. */
	close(pfd[0]);
	tfk_free(buf);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	child = -1;
	if (pipe_gone) {
		tfk_snap_abort(w);
		die_of_sigpipe();
	}
	if (WIFSIGNALED(status)) {
		tfk_cli_warn("%s: killed by signal %d; nothing stored",
			     argv[0], WTERMSIG(status));
		tfk_snap_abort(w);
		return 128 + WTERMSIG(status);
	}
	if (WEXITSTATUS(status)) {
		if (w)
			tfk_cli_warn("%s: exit status %d; nothing stored",
				     argv[0], WEXITSTATUS(status));
		tfk_snap_abort(w);
		return WEXITSTATUS(status);
	}
	if (rc || !w) {
		tfk_snap_abort(w);
		return rc || store_failed;
	}
	{
		uint64_t recs = tfk_snap_records(w), bytes = tfk_snap_bytes(w);

		if (tfk_snap_commit(w, argc, argv, now_s() - t0, &err) < 0) {
			tfk_cli_warn("%s output: %s; not stored", argv[0],
				     err.msg);
			return 1;
		}
		if (verbose)
			tfk_cli_warn("stored snapshot %s: %" PRIu64 " records, %"
				     PRIu64 " bytes", fp->hex, recs, bytes);
	}
	return 0;
}

static int replay(const char *dir, const char *fp)
{
	struct tfk_err err;
	uint64_t recs;

	if (tfk_snap_replay(dir, fp, 1, &recs, &err) < 0) {
		if (err.code == TFK_EIO && errno == EPIPE)
			die_of_sigpipe();
		tfk_cli_warn("%s; remove %s/%s to recompute", err.msg, dir, fp);
		return 1;
	}
	if (verbose)
		tfk_cli_warn("replayed snapshot %s: %" PRIu64 " records", fp,
			     recs);
	return 0;
}

static int snapshot(const char *dir, int argc, char **argv)
{
	struct tfk_snap_fp fp;
	struct tfk_snap_writer *w;
	struct tfk_err err;
	int rc, fd, got;

	if (tfk_snap_fingerprint(&fp, argc, argv, extra_inputs.v,
				 extra_inputs.n,
				 hash_inputs ? TFK_SNAP_HASH_INPUTS : 0,
				 &err) < 0) {
		tfk_snap_fp_release(&fp);
		return tfk_cli_fail(&err);
	}
	if (print_fp) {
		printf("%s\n", fp.hex);
		tfk_snap_fp_release(&fp);
		return 0;
	}
	forward_signals();
	if (tfk_mkdirs(dir, &err) < 0)
		goto fail;
	got = tfk_snap_lock(dir, fp.hex, 0, !no_wait, &fd, &err);
	if (got < 0)
		goto fail;
	if (got && tfk_snap_complete(dir, fp.hex)) {
		rc = replay(dir, fp.hex);
		tfk_snap_unlock(fd);
		goto out;
	}
	if (got)
		tfk_snap_unlock(fd);
	got = got ? tfk_snap_lock(dir, fp.hex, 1, !no_wait, &fd, &err) : 0;
	if (got < 0)
		goto fail;
	if (!got) {
		if (verbose)
			tfk_cli_warn("snapshot %s is being written by another "
				     "run; running %s without it", fp.hex,
				     argv[0]);
		rc = run(argv, NULL, &fp, argc);
		goto out;
	}
	/* Someone may have finished it while we waited. */
	if (tfk_snap_complete(dir, fp.hex)) {
		rc = replay(dir, fp.hex);
	} else if (tfk_snap_begin(&w, dir, &fp, &err) < 0) {
		tfk_snap_unlock(fd);
		goto fail;
	} else {
		rc = run(argv, w, &fp, argc);
	}
	tfk_snap_unlock(fd);
out:
	tfk_snap_fp_release(&fp);
	return rc;
fail:
	tfk_snap_fp_release(&fp);
	return tfk_cli_fail(&err);
}

/* --list, --gc --------------------------------------------------------- */

static void format_age(int64_t s, char *out, size_t n)
{
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(out, n, "%llds", (long long)s);
	else if (s < 2 * 3600)
		snprintf(out, n, "%lldm", (long long)(s / 60));
	else if (s < 2 * 86400)
		snprintf(out, n, "%lldh", (long long)(s / 3600));
	else
		snprintf(out, n, "%lldd", (long long)(s / 86400));
}

static int do_list(const char *dir)
{
	struct tfk_snap_entry *e;
	struct tfk_err err;
	struct tfk_buf b;
	int64_t now = time(NULL);
	size_t n, i;

	if (tfk_snap_list(dir, &e, &n, &err) < 0)
		return tfk_cli_fail(&err);
	tfk_buf_init(&b);
	for (i = 0; i < n; i++) {
		const char *c = e[i].command;
		char age[32];

		if (!e[i].has_dir)
			continue;
		tfk_buf_reset(&b);
		if (json) {
			tfk_buf_addf(&b, "{\"fingerprint\":\"%s\",\"complete\":%s,"
				     "\"locked\":%s,\"bytes\":%" PRIu64
				     ",\"records\":%" PRIu64 ",\"created\":%lld,"
				     "\"age_seconds\":%lld,\"command\":",
				     e[i].fp, e[i].complete ? "true" : "false",
				     e[i].locked ? "true" : "false",
				     e[i].bytes, e[i].records,
				     (long long)e[i].created,
				     (long long)(now - e[i].created));
			if (c && tfk_utf8_valid((const uint8_t *)c, strlen(c)))
				tfk_buf_add_json_str(&b, c, strlen(c));
			else
				tfk_buf_adds(&b, "null");
			tfk_buf_adds(&b, "}\n");
		} else {
			format_age(now - e[i].created, age, sizeof(age));
			tfk_buf_addf(&b, "%s %12" PRIu64 " %10" PRIu64 " %5s  %s\n",
				     e[i].fp, e[i].bytes, e[i].records, age,
				     e[i].complete ? c : e[i].locked ?
				     "(being written)" : "(incomplete)");
		}
		if (!tfk_buf_ok(&b) || fwrite(b.data, 1, b.len, stdout) != b.len)
			break;
	}
	tfk_buf_release(&b);
	tfk_snap_list_free(e, n);
	if (fflush(stdout) != 0) {
		tfk_cli_warn("<stdout>: write failed: %s", strerror(errno));
		return 1;
	}
	return 0;
}

static int do_gc(const char *dir, long keep, double max_age)
{
	struct tfk_snap_entry *e;
	struct tfk_err err;
	int64_t now = time(NULL);
	size_t n, i;
	long kept = 0;
	int rc = 0;

	if (tfk_snap_list(dir, &e, &n, &err) < 0)
		return tfk_cli_fail(&err);
	for (i = 0; i < n; i++) {
		const char *why = NULL;
		int r;

		if (!e[i].complete)
			why = e[i].has_dir ? "incomplete" : "stale lock";
		else if (max_age >= 0 && now - e[i].created > max_age * 86400)
			why = "older than --max-age";
		else if (keep >= 0 && kept >= keep)
			why = "beyond --keep";
		if (!why) {
			kept++;
			continue;
		}
		r = tfk_snap_remove(dir, e[i].fp, &err);
		if (r < 0) {
			rc = tfk_cli_fail(&err);
		} else if (r == 0) {
			if (verbose && e[i].has_dir)
				tfk_cli_warn("kept %s: in use", e[i].fp);
			if (e[i].complete)
				kept++;
		} else if (verbose && e[i].has_dir) {
			tfk_cli_warn("removed %s (%s)", e[i].fp, why);
		}
	}
	tfk_snap_list_free(e, n);
	return rc;
}

int main(int argc, char **argv)
{
	int split = argc, npos, k;
	long keep = -1;
	double max_age = -1;
	char *end;

	/* Everything after the first "--" is COMMAND, untouched by our
	 * option parser. */
	for (k = 1; k < argc; k++)
		if (!strcmp(argv[k], "--")) {
			split = k;
			break;
		}
	npos = tfk_cli_parse(split, argv, &cmd, opts);
	if (npos != 1)
		tfk_cli_usage_error(npos ? "expected one DIR, got %d arguments "
				    "before --" : "missing DIR", npos);
	if (list + gc + print_fp > 1)
		tfk_cli_usage_error("--list, --gc and --fingerprint exclude "
				    "each other");
	if ((keep_arg || max_age_arg) && !gc)
		tfk_cli_usage_error("--keep and --max-age go with --gc");
	if (json && !list)
		tfk_cli_usage_error("--json goes with --list");
	if (keep_arg) {
		errno = 0;
		keep = strtol(keep_arg, &end, 10);
		if (errno || end == keep_arg || *end || keep < 0)
			tfk_cli_usage_error("--keep: expected a count, got '%s'",
					    keep_arg);
	}
	if (max_age_arg) {
		errno = 0;
		max_age = strtod(max_age_arg, &end);
		if (errno || end == max_age_arg || *end || !(max_age >= 0))
			tfk_cli_usage_error("--max-age: expected days, got '%s'",
					    max_age_arg);
	}
	if (list || gc) {
		if (split < argc)
			tfk_cli_usage_error("--%s takes no COMMAND",
					    list ? "list" : "gc");
		return list ? do_list(argv[0]) : do_gc(argv[0], keep, max_age);
	}
	if (split + 1 >= argc)
		tfk_cli_usage_error("missing -- COMMAND [ARG...]");
	/* A closed stdout must be an EPIPE we can clean up after, not a
	 * sudden death with the temporary left behind. */
	signal(SIGPIPE, SIG_IGN);
	return snapshot(argv[0], argc - split - 1, argv + split + 1);
}
