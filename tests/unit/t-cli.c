/*
 * t-cli.c - the shared command-line layer: every option kind, both value
 * spellings, combined short flags, "--" and "-", size suffixes, --help
 * and --version, usage errors (exit 2 with the synopsis), tfk_cli_shard
 * with Slurm/MPI environments, and the signal set-up every tool relies on
 * (SIGPIPE default, temporaries removed on SIGTERM).
 *
 * Everything that exits or dies runs in a forked child whose stdout and
 * stderr go to files the parent reads back.
 */
#include "util/cli.h"
#include "tap.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct tfk_cmd cmd = {
	"tfk-t", "[options] [FILE...]", "exercise the option parser",
	"tfk-t -v --count 3 a.tfrecord"
};

/* Option values, reset before each parse. */
static int o_verbose, o_quiet, o_all;
static long o_count;
static double o_rate;
static const char *o_name;
static uint64_t o_size;
static struct tfk_strlist o_list;
static int o_even;

static int parse_even(const char *arg, void *value)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*end || v % 2)
		return -1;
	*(int *)value = (int)v;
	return 0;
}

static const struct tfk_opt opts[] = {
	TFK_OPT_FLAG('v', "verbose", &o_verbose, "say more"),
	TFK_OPT_FLAG('q', "quiet", &o_quiet, "say less"),
	TFK_OPT_FLAG(0, "all", &o_all, "everything"),
	TFK_OPT_LONG('n', "count", &o_count, "N", "how many"),
	TFK_OPT_DOUBLE('r', "rate", &o_rate, "R", "how fast"),
	TFK_OPT_STR('o', "output", &o_name, "FILE", "where to"),
	TFK_OPT_SIZE('s', "size", &o_size, "SIZE", "how big"),
	TFK_OPT_LIST('f', "feature", &o_list, "NAME", "repeatable"),
	TFK_OPT_CALL(0, "even", &o_even, "N", "an even number", parse_even),
	TFK_OPT_END
};

static void reset(void)
{
	o_verbose = o_quiet = o_all = 0;
	o_count = 10;
	o_rate = 0.5;
	o_name = NULL;
	o_size = UINT64_C(128) << 20;
	free(o_list.v);
	o_list.v = NULL;
	o_list.n = 0;
	o_even = 0;
}

/* Parse a NULL-terminated argument vector (copied: the parser reorders
 * it). Returns the positional count; pos receives the positionals. */
static char *argbuf[32];

static int parse(const char *const *args)
{
	int argc = 0;

	reset();
	argbuf[argc++] = "tfk-t";
	while (*args)
		argbuf[argc++] = (char *)*args++;
	argbuf[argc] = NULL;
	return tfk_cli_parse(argc, argbuf, &cmd, opts);
}

#define PARSE(...) parse((const char *const[]){ __VA_ARGS__, NULL })

/* Run fn(arg) in a child with stdout/stderr captured. Returns the exit
 * status (or 128 + signal); out/err get up to n-1 bytes each. */
struct captured {
	int status;
	char out[4096];
	char err[4096];
};

static void slurp(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	ssize_t k = fd >= 0 ? read(fd, buf, n - 1) : 0;

	buf[k > 0 ? k : 0] = '\0';
	if (fd >= 0)
		close(fd);
	unlink(path);
}

static void run_child(struct captured *c, void (*fn)(const void *),
		      const void *arg)
{
	char po[600], pe[600];
	pid_t pid;
	int st;

	snprintf(po, sizeof(po), "%s/out", tap_tmpdir());
	snprintf(pe, sizeof(pe), "%s/err", tap_tmpdir());
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		dup2(fo, 1);
		dup2(fe, 2);
		fn(arg);
		fflush(stdout);
		_exit(99);	/* fn was expected to exit */
	}
	waitpid(pid, &st, 0);
	c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	slurp(po, c->out, sizeof(c->out));
	slurp(pe, c->err, sizeof(c->err));
}

static void child_parse(const void *arg)
{
	parse(arg);
}

#define CHILD(c, ...) run_child(c, child_parse, \
				(const char *const[]){ __VA_ARGS__, NULL })

static void kinds(void)
{
	int n;

	n = PARSE("a");
	ok(n == 1 && !strcmp(argbuf[0], "a") && !argbuf[1],
	   "one positional, moved to argv[0], NULL after");
	ok(o_count == 10 && o_rate == 0.5 && !o_name && !o_verbose &&
	   o_size == UINT64_C(128) << 20, "defaults untouched without options");

	n = PARSE("--verbose", "--count", "7", "--rate=2.25", "--output", "x.rec",
		  "--size=3K", "--feature", "a", "--feature=b", "--even", "4",
		  "--all");
	is_int(n, 0, "long options: no positionals");
	ok(o_verbose && o_all && !o_quiet, "long flags set");
	is_int(o_count, 7, "--count 7 (separate value)");
	ok(o_rate == 2.25, "--rate=2.25 (attached value)");
	is_str(o_name, "x.rec", "--output x.rec");
	is_int(o_size, 3072, "--size=3K is 3072");
	ok(o_list.n == 2 && !strcmp(o_list.v[0], "a") && !strcmp(o_list.v[1], "b"),
	   "--feature repeatable, in order");
	is_int(o_even, 4, "callback option stores its value");

	n = PARSE("-n", "5", "-r1e-3", "-ofile", "-s", "2M", "-fx", "-f", "y");
	is_int(n, 0, "short options: no positionals");
	is_int(o_count, 5, "-n 5 (separate)");
	ok(o_rate == 1e-3, "-r1e-3 (attached)");
	is_str(o_name, "file", "-ofile (attached)");
	is_int(o_size, 2 << 20, "-s 2M");
	ok(o_list.n == 2 && !strcmp(o_list.v[0], "x") && !strcmp(o_list.v[1], "y"),
	   "-fx -f y");

	n = PARSE("-vq");
	ok(n == 0 && o_verbose && o_quiet, "-vq sets both flags");
	n = PARSE("-vn3", "p");
	ok(n == 1 && o_verbose && o_count == 3 && !strcmp(argbuf[0], "p"),
	   "-vn3: flag then a short option with its value attached");
	n = PARSE("-qvn", "12");
	ok(n == 0 && o_verbose && o_quiet && o_count == 12,
	   "-qvn 12: flags then a short option taking the next argument");
	n = PARSE("-n", "-3");
	is_int(o_count, -3, "a value may start with '-'");
	n = PARSE("--output", "--weird");
	ok(n == 0 && !strcmp(o_name, "--weird"),
	   "a separate value is taken verbatim even if it looks like an option");
	n = PARSE("--output=");
	ok(n == 0 && o_name && !strcmp(o_name, ""), "--output= gives an empty string");

	n = PARSE("a", "-v", "b", "--count=2", "c");
	ok(n == 3 && !strcmp(argbuf[0], "a") && !strcmp(argbuf[1], "b") &&
	   !strcmp(argbuf[2], "c") && o_verbose && o_count == 2,
	   "options between positionals, order of positionals kept");
	n = PARSE("-", "x");
	ok(n == 2 && !strcmp(argbuf[0], "-") && !strcmp(argbuf[1], "x"),
	   "\"-\" is a positional (stdin)");
	n = PARSE("-v", "--", "-q", "--count", "-");
	ok(n == 3 && o_verbose && !o_quiet && o_count == 10 &&
	   !strcmp(argbuf[0], "-q") && !strcmp(argbuf[1], "--count") &&
	   !strcmp(argbuf[2], "-"), "everything after \"--\" is positional");
	n = PARSE("--", "--");
	ok(n == 1 && !strcmp(argbuf[0], "--"), "a second \"--\" is a positional");
	reset();
}

static void sizes(void)
{
	static const struct { const char *s; uint64_t v; } good[] = {
		{ "0", 0 }, { "10", 10 }, { "1k", 1024 }, { "1K", 1024 },
		{ "5KiB", 5120 }, { "5kb", 5120 }, { "5KB", 5120 },
		{ "2m", 2 << 20 }, { "3G", UINT64_C(3) << 30 },
		{ "1T", UINT64_C(1) << 40 }, { "1Ti", UINT64_C(1) << 40 },
		{ "18446744073709551615", UINT64_MAX },
		{ "17179869183G", UINT64_C(17179869183) << 30 },
	};
	static const char *const bad[] = {
		"", "-1", "1X", "1.5M", "K", "1KK", "1B", "1 K", "0x10",
		"17179869184G", "18446744073709551616", "1Mx",
	};
	char buf[64];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(buf, sizeof(buf), "--size=%s", good[i].s);
		PARSE(buf);
		ok(o_size == good[i].v, "size '%s' = %llu", good[i].s,
		   (unsigned long long)good[i].v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct captured c;
		char want[128];

		snprintf(buf, sizeof(buf), "--size=%s", bad[i]);
		CHILD(&c, buf);
		snprintf(want, sizeof(want),
			 "tfk-t: option '--size=%s': invalid value '%s'\n", bad[i],
			 bad[i]);
		ok(c.status == 2 && !strncmp(c.err, want, strlen(want)),
		   "size '%s' refused, exit 2", bad[i]);
	}
	reset();
}

#define HELP_HEAD "usage: tfk-t [options] [FILE...]\nexercise the option parser\n"

static void help_version(void)
{
	struct captured c;

	CHILD(&c, "--help");
	is_int(c.status, 0, "--help exits 0");
	is_str(c.err, "", "--help writes nothing to stderr");
	ok(!strncmp(c.out, HELP_HEAD, strlen(HELP_HEAD)),
	   "--help starts with the synopsis and summary");
	ok(strstr(c.out, "  -n, --count N ") && strstr(c.out, "how many (default: 10)"),
	   "--help lists -n/--count with its live default");
	ok(strstr(c.out, "--size SIZE") && strstr(c.out, "(default: 128M)"),
	   "size default shown with a suffix");
	ok(strstr(c.out, "(default: 0.5)") != NULL, "double default shown");
	ok(strstr(c.out, "      --all ") != NULL,
	   "long-only option indented past the short column");
	ok(strstr(c.out, "--even N") != NULL, "callback option listed");
	ok(strstr(c.out, "-h, --help") && strstr(c.out, "--version"),
	   "--help and --version listed");
	ok(strstr(c.out, "\nExample:\n  tfk-t -v --count 3 a.tfrecord\n") != NULL,
	   "example shown");
	ok(strstr(c.out, "See tfk-t(1).") != NULL, "man page named");

	CHILD(&c, "-h");
	ok(c.status == 0 && !strncmp(c.out, "usage: tfk-t", 12), "-h is --help");
	CHILD(&c, "-vh");
	ok(c.status == 0 && !strncmp(c.out, "usage: tfk-t", 12),
	   "-h inside combined flags");
	CHILD(&c, "x", "--help", "--bogus");
	ok(c.status == 0 && !strncmp(c.out, "usage: tfk-t", 12),
	   "--help wins when it comes before an unknown option");
	CHILD(&c, "--version");
	ok(c.status == 0 && !strcmp(c.out, "tfk-t (tfkit) " TFK_VERSION "\n"),
	   "--version prints name, project and version");
}

static void usage_errors(void)
{
	static const struct {
		const char *args[3];
		const char *msg;
	} cases[] = {
		{ { "--bogus" }, "tfk-t: unknown option '--bogus'\n" },
		{ { "--bogus=1" }, "tfk-t: unknown option '--bogus'\n" },
		{ { "--coun", "3" }, "tfk-t: unknown option '--coun'\n" },
		{ { "-x" }, "tfk-t: unknown option '-x'\n" },
		{ { "-vx" }, "tfk-t: unknown option '-x'\n" },
		{ { "--count" }, "tfk-t: option '--count' needs a value\n" },
		{ { "-n" }, "tfk-t: option '-n' needs a value\n" },
		{ { "-vn" }, "tfk-t: option '-n' needs a value\n" },
		{ { "--count=abc" }, "tfk-t: option '--count=abc': invalid value 'abc'\n" },
		{ { "-n", "3x" }, "tfk-t: option '-n': invalid value '3x'\n" },
		{ { "--count", "" }, "tfk-t: option '--count': invalid value ''\n" },
		{ { "--count", "99999999999999999999" },
		  "tfk-t: option '--count': invalid value '99999999999999999999'\n" },
		{ { "--rate=fast" }, "tfk-t: option '--rate=fast': invalid value 'fast'\n" },
		{ { "--verbose=1" }, "tfk-t: option '--verbose' takes no value\n" },
		{ { "--even", "3" }, "tfk-t: option '--even': invalid value '3'\n" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct captured c;
		const char *const *a = cases[i].args;
		size_t n = strlen(cases[i].msg);

		if (a[1])
			CHILD(&c, a[0], a[1]);
		else
			CHILD(&c, a[0]);
		ok(c.status == 2 && !strncmp(c.err, cases[i].msg, n) &&
		   !strncmp(c.err + n, "usage: tfk-t [options] [FILE...]\n", 33) &&
		   strstr(c.err, "Try 'tfk-t --help'") && c.out[0] == '\0',
		   "%s%s%s: exit 2, message, synopsis on stderr", a[0],
		   a[1] ? " " : "", a[1] ? a[1] : "");
		if (c.status != 2 || strncmp(c.err, cases[i].msg, n))
			tap_diag("status %d, stderr: %s", c.status, c.err);
	}
}

static void do_usage_error(const void *arg)
{
	PARSE("x");
	tfk_cli_usage_error("need %s", (const char *)arg);
}

static void do_fail(const void *arg)
{
	struct tfk_err err;

	PARSE("x");
	tfk_errf(&err, TFK_ECORRUPT, "a.tfrecord: record %d at byte %d: %s",
		 3, 120, (const char *)arg);
	exit(tfk_cli_fail(&err));
}

static void do_fail_empty(const void *arg)
{
	struct tfk_err err;

	(void)arg;
	PARSE("x");
	tfk_err_clear(&err);
	err.code = TFK_ENOMEM;
	exit(tfk_cli_fail(&err));
}

static void messages(void)
{
	struct captured c;

	run_child(&c, do_usage_error, "two files");
	ok(c.status == 2 && !strncmp(c.err, "tfk-t: need two files\nusage: tfk-t ", 34),
	   "tfk_cli_usage_error: message, synopsis, exit 2");
	run_child(&c, do_fail, "data crc mismatch");
	ok(c.status == 1 && !strcmp(c.err, "tfk-t: a.tfrecord: record 3 at byte 120: data crc mismatch\n"),
	   "tfk_cli_fail: tool name + located message, returns 1");
	run_child(&c, do_fail_empty, NULL);
	ok(c.status == 1 && !strcmp(c.err, "tfk-t: out of memory\n"),
	   "tfk_cli_fail with an empty message names the code");
	is_str(tfk_cli_name(), "tfk-t", "tfk_cli_name after parse");
}

static void setenv_list(const char *const *kv)
{
	static const char *const all[] = {
		"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
		"SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_STEP",
		"OMPI_COMM_WORLD_RANK",
		"OMPI_COMM_WORLD_SIZE", NULL
	};
	const char *const *p;

	for (p = all; *p; p++)
		unsetenv(*p);
	for (; kv && *kv; kv += 2)
		setenv(kv[0], kv[1], 1);
}

#define ENV(...) setenv_list((const char *const[]){ __VA_ARGS__, NULL })

static void shards(void)
{
	static const struct { const char *s; long i, n; } good[] = {
		{ "0/1", 0, 1 }, { "3/4", 3, 4 }, { "0/1000", 0, 1000 },
		{ "999/1000", 999, 1000 },
	};
	static const char *const bad[] = {
		"4/4", "-1/4", "1/0", "0/0", "a/b", "1/4x", "1", "1/", "/4",
		"", "1/-4", "1//4",
	};
	long i, n;
	size_t k;
	int rc;

	setenv_list(NULL);
	for (k = 0; k < sizeof(good) / sizeof(good[0]); k++) {
		i = n = -7;
		rc = tfk_cli_shard(good[k].s, &i, &n);
		ok(rc == 0 && i == good[k].i && n == good[k].n, "shard '%s'",
		   good[k].s);
	}
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		is_int(tfk_cli_shard(bad[k], &i, &n), -1, "shard '%s' refused",
		       bad[k]);

	rc = tfk_cli_shard(NULL, &i, &n);
	ok(rc == 0 && i == 0 && n == 1, "no environment: 0/1");
	ENV("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "5");
	rc = tfk_cli_shard(NULL, &i, &n);
	ok(rc == 0 && i == 2 && n == 5, "Slurm array task 2 of 5");
	ENV("SLURM_ARRAY_TASK_ID", "8", "SLURM_ARRAY_TASK_COUNT", "8",
	    "SLURM_ARRAY_TASK_MIN", "1");
	rc = tfk_cli_shard(NULL, &i, &n);
	ok(rc == 0 && i == 7 && n == 8, "--array=1-8: task 8 is shard 7/8");
	ENV("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "8",
	    "SLURM_ARRAY_TASK_MIN", "1");
	rc = tfk_cli_shard(NULL, &i, &n);
	ok(rc == 0 && i == 0 && n == 8, "--array=1-8: task 1 is shard 0/8");
	ENV("SLURM_ARRAY_TASK_ID", "9", "SLURM_ARRAY_TASK_COUNT", "8",
	    "SLURM_ARRAY_TASK_MIN", "1");
	is_int(tfk_cli_shard(NULL, &i, &n), -1, "Slurm id past MIN+COUNT refused");
	ENV("SLURM_ARRAY_TASK_ID", "8", "SLURM_ARRAY_TASK_COUNT", "4",
	    "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_STEP", "4");
	rc = tfk_cli_shard(NULL, &i, &n);
	ok(rc == 0 && i == 2 && n == 4, "--array=0-15:4: task 8 is shard 2/4");
	ENV("SLURM_ARRAY_TASK_ID", "12", "SLURM_ARRAY_TASK_COUNT", "4",
	    "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_STEP", "4");
	rc = tfk_cli_shard(NULL, &i, &n);
	ok(rc == 0 && i == 3 && n == 4, "--array=0-15:4: task 12 is shard 3/4");
	ENV("SLURM_ARRAY_TASK_ID", "7", "SLURM_ARRAY_TASK_COUNT", "3",
	    "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_STEP", "3");
	rc = tfk_cli_shard(NULL, &i, &n);
	ok(rc == 0 && i == 2 && n == 3, "--array=1-7:3: task 7 is shard 2/3");
	ENV("SLURM_ARRAY_TASK_ID", "6", "SLURM_ARRAY_TASK_COUNT", "3",
	    "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_STEP", "3");
	is_int(tfk_cli_shard(NULL, &i, &n), -1, "id off the step refused");
	ENV("SLURM_ARRAY_TASK_ID", "0", "SLURM_ARRAY_TASK_COUNT", "8",
	    "SLURM_ARRAY_TASK_MIN", "1");
	is_int(tfk_cli_shard(NULL, &i, &n), -1, "id below MIN refused");
	ENV("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "8",
	    "SLURM_ARRAY_TASK_MIN", "-9223372036854775808");
	is_int(tfk_cli_shard(NULL, &i, &n), -1, "negative MIN refused (no overflow)");
	ENV("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "8",
	    "SLURM_ARRAY_TASK_MIN", "z");
	is_int(tfk_cli_shard(NULL, &i, &n), -1, "malformed MIN refused");
	ENV("SLURM_ARRAY_TASK_ID", "", "SLURM_ARRAY_TASK_COUNT", "8");
	is_int(tfk_cli_shard(NULL, &i, &n), -1, "empty Slurm id refused");
	ENV("SLURM_ARRAY_TASK_ID", "99999999999999999999", "SLURM_ARRAY_TASK_COUNT", "8");
	is_int(tfk_cli_shard(NULL, &i, &n), -1, "overflowing Slurm id refused");
	ENV("SLURM_ARRAY_TASK_ID", "x", "SLURM_ARRAY_TASK_COUNT", "8");
	is_int(tfk_cli_shard(NULL, &i, &n), -1, "malformed Slurm id refused");
	ENV("OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_SIZE", "4");
	rc = tfk_cli_shard(NULL, &i, &n);
	ok(rc == 0 && i == 3 && n == 4, "MPI rank 3 of 4");
	ENV("OMPI_COMM_WORLD_RANK", "4", "OMPI_COMM_WORLD_SIZE", "4");
	is_int(tfk_cli_shard(NULL, &i, &n), -1, "MPI rank == size refused");
	ENV("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "2",
	    "OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_SIZE", "4");
	rc = tfk_cli_shard(NULL, &i, &n);
	ok(rc == 0 && i == 1 && n == 2, "Slurm wins over MPI");
	ENV("SLURM_ARRAY_TASK_ID", "1", "OMPI_COMM_WORLD_RANK", "3",
	    "OMPI_COMM_WORLD_SIZE", "4");
	rc = tfk_cli_shard(NULL, &i, &n);
	ok(rc == 0 && i == 3 && n == 4, "Slurm id without a count: MPI used");
	ENV("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "2");
	rc = tfk_cli_shard("0/3", &i, &n);
	ok(rc == 0 && i == 0 && n == 3, "an explicit --shard beats the environment");
	setenv_list(NULL);
}

/* Signals: a tool dies by SIGPIPE (quietly) and removes temporaries on
 * SIGTERM, even when its parent ignored SIGPIPE. */
static void do_sigpipe(const void *arg)
{
	int p[2];

	(void)arg;
	signal(SIGPIPE, SIG_IGN);
	PARSE("x");
	if (pipe(p))
		_exit(98);
	close(p[0]);
	if (write(p[1], "x", 1) < 0)
		_exit(97);
	_exit(0);
}

static void do_sigterm(const void *arg)
{
	const char *path = arg;
	int fd;

	PARSE("x");
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	close(fd);
	tfk_cli_track_temp(path);
	raise(SIGTERM);
	_exit(0);
}

static void do_forget(const void *arg)
{
	const char *path = arg;
	char other[600];
	int fd;

	PARSE("x");
	snprintf(other, sizeof(other), "%s.other", path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	close(fd);
	fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	close(fd);
	tfk_cli_track_temp(path);
	tfk_cli_track_temp(other);
	tfk_cli_forget_temp(path);
	raise(SIGINT);
	_exit(0);
}

static void signals(void)
{
	struct captured c;
	char path[600], other[620];

	run_child(&c, do_sigpipe, NULL);
	ok(c.status == 128 + SIGPIPE && c.err[0] == '\0',
	   "SIGPIPE restored to default: writer dies quietly (status %d)",
	   c.status);

	snprintf(path, sizeof(path), "%s/.x.tmp-abc", tap_tmpdir());
	run_child(&c, do_sigterm, path);
	is_int(c.status, 128 + SIGTERM, "SIGTERM still kills");
	ok(access(path, F_OK) != 0, "tracked temporary removed on SIGTERM");

	run_child(&c, do_forget, path);
	snprintf(other, sizeof(other), "%s.other", path);
	is_int(c.status, 128 + SIGINT, "SIGINT still kills");
	ok(access(path, F_OK) == 0, "forgotten temporary kept");
	ok(access(other, F_OK) != 0, "still-tracked temporary removed on SIGINT");
	unlink(path);
	unlink(other);
}

int main(void)
{
	kinds();
	sizes();
	help_version();
	usage_errors();
	messages();
	shards();
	signals();
	rmdir(tap_tmpdir());
	return tap_done();
}
