/*
 * cli.h - the shared command-line layer of every tfk-* tool.
 *
 * One option table per command feeds the parser, --help (with live
 * defaults and an example) and, through --help, the man page check.
 * This module is the one part of libtfk that prints and exits: it is
 * called only from a tool's main, to handle -h/--help (stdout, exit 0),
 * --version (exit 0) and usage errors (synopsis on stderr, exit 2).
 *
 * tfk_cli_parse also does the set-up every tool shares: SIGPIPE restored
 * to its default so `tfk-cat big.tfrecord | head` ends quietly, and
 * SIGINT/SIGTERM handlers that remove registered temporary files before
 * dying (see tfk_cli_atexit_unlink) so no half file survives a kill.
 */
#ifndef TFK_CLI_H
#define TFK_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

enum tfk_opt_type {
	TFK_OPT_T_END,
	TFK_OPT_T_FLAG,		/* int, set to 1 */
	TFK_OPT_T_LONG,		/* long */
	TFK_OPT_T_DOUBLE,	/* double */
	TFK_OPT_T_STR,		/* const char * */
	TFK_OPT_T_SIZE,		/* uint64_t, accepts K/M/G/T suffixes (1024) */
	TFK_OPT_T_LIST,		/* struct tfk_strlist, repeatable */
	TFK_OPT_T_CALL		/* int cb(const char *arg, void *value) */
};

struct tfk_strlist {
	const char **v;
	size_t n;
};

struct tfk_opt {
	enum tfk_opt_type type;
	int short_name;		/* 0 when none */
	const char *long_name;
	void *value;
	const char *argname;	/* NULL for flags */
	const char *help;
	/* TFK_OPT_T_CALL: parse arg into value; return 0 or -1 (usage
	 * error, after printing nothing: the parser names the option). */
	int (*cb)(const char *arg, void *value);
};

#define TFK_OPT_FLAG(s, l, v, h) { TFK_OPT_T_FLAG, s, l, v, NULL, h, NULL }
#define TFK_OPT_LONG(s, l, v, a, h) { TFK_OPT_T_LONG, s, l, v, a, h, NULL }
#define TFK_OPT_DOUBLE(s, l, v, a, h) { TFK_OPT_T_DOUBLE, s, l, v, a, h, NULL }
#define TFK_OPT_STR(s, l, v, a, h) { TFK_OPT_T_STR, s, l, v, a, h, NULL }
#define TFK_OPT_SIZE(s, l, v, a, h) { TFK_OPT_T_SIZE, s, l, v, a, h, NULL }
#define TFK_OPT_LIST(s, l, v, a, h) { TFK_OPT_T_LIST, s, l, v, a, h, NULL }
#define TFK_OPT_CALL(s, l, v, a, h, cb) { TFK_OPT_T_CALL, s, l, v, a, h, cb }
#define TFK_OPT_END { TFK_OPT_T_END, 0, NULL, NULL, NULL, NULL, NULL }

struct tfk_cmd {
	const char *name;	/* "tfk-cat" */
	const char *usage;	/* "[options] [FILE...]" */
	const char *summary;	/* one line: what it does */
	const char *example;	/* shell line(s) shown under "Example:" */
};

/*
 * Parse argv against opts. Options may appear anywhere before "--";
 * "-" is a positional argument (stdin/stdout). Long options take
 * "--name=V" or "--name V"; short ones "-nV" or "-n V"; flags combine
 * ("-vq"). Handles -h/--help and --version itself (exit 0) and exits 2
 * with the synopsis on a usage error. Returns the number of positional
 * arguments, moved to argv[0..n). Records cmd for tfk_cli_* messages.
 */
int tfk_cli_parse(int argc, char **argv, const struct tfk_cmd *cmd,
		  const struct tfk_opt *opts);

/* Print "NAME: " + message to stderr, as every tool's diagnostics do. */
void tfk_cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print err's message (prefixed with the tool name) and return 1, the
 * exit code of a data or runtime error. */
int tfk_cli_fail(const struct tfk_err *err);
/* Usage error from a tool's own argument checks: message, synopsis,
 * exit 2. */
void tfk_cli_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/*
 * Parse "I/N" (0 <= I < N). When arg is NULL, take the defaults from the
 * environment: SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT, then
 * OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE, else 0/1.
 * Returns 0, or -1 for a malformed arg (caller makes it a usage error).
 */
int tfk_cli_shard(const char *arg, long *index, long *count);

/*
 * Register path as a temporary file to unlink if the process is killed
 * by SIGINT/SIGTERM/SIGHUP before tfk_cli_forget_temp(path). The string
 * is copied. Returns 0 or TFK_ENOMEM. Used by lib/io/afile.
 */
int tfk_cli_track_temp(const char *path);
void tfk_cli_forget_temp(const char *path);

/* A subcommand of a tool such as tfk-model (git's builtins). */
struct tfk_subcmd {
	const char *name;	/* "run" */
	const char *summary;	/* its line in the tool's --help */
	int (*main)(int argc, char **argv);	/* argv[0] is name */
};

/*
 * The main of a tool made of subcommands: argv[1] names one of
 * subs[] (ended by NULL), which runs on argv + 1. "-h"/"--help"
 * print top's usage, the commands and the top options; "--version" the
 * version; no command, an unknown one or an option before the command
 * is a usage error that names them ("a command is needed: show, run or
 * bench"). Returns the subcommand's exit status.
 */
int tfk_cli_subcommands(int argc, char **argv, const struct tfk_cmd *top,
			const struct tfk_subcmd *const *subs);

/* Tool name for messages ("tfk-cat"), "tfk" before tfk_cli_parse. */
const char *tfk_cli_name(void);

#endif
