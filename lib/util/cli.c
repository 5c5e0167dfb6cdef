/*
 * cli.c - option parsing, help, shared main set-up (see cli.h).
 *
 * getopt_long was rejected: it cannot print live defaults or feed a man
 * page check from the same table, and its error messages do not follow
 * our wording. The parser is small because the rules are few.
 */
#include "util/cli.h"
#include "util/alloc.h"
#include "util/limit.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct tfk_cmd *cur_cmd;
static const struct tfk_opt *cur_opts;

const char *tfk_cli_name(void)
{
	return cur_cmd ? cur_cmd->name : "tfk";
}

/* Temporary files to remove when killed ------------------------------ */

struct temp_node {
	struct temp_node *next;
	volatile sig_atomic_t live;
	char path[];
};

static struct temp_node *volatile temps;
static pthread_mutex_t temps_lock = PTHREAD_MUTEX_INITIALIZER;

int tfk_cli_track_temp(const char *path)
{
	size_t n = strlen(path) + 1;
	struct temp_node *t = tfk_malloc(sizeof(*t) + n);

	if (!t)
		return TFK_ENOMEM;
	memcpy(t->path, path, n);
	t->live = 1;
	pthread_mutex_lock(&temps_lock);
	t->next = temps;
	temps = t;
	pthread_mutex_unlock(&temps_lock);
	return 0;
}

void tfk_cli_forget_temp(const char *path)
{
	struct temp_node **pp, *t;

	pthread_mutex_lock(&temps_lock);
	for (pp = (struct temp_node **)&temps; (t = *pp); pp = &t->next) {
		if (t->live && !strcmp(t->path, path)) {
			t->live = 0;
			*pp = t->next;
			break;
		}
	}
	pthread_mutex_unlock(&temps_lock);
	/* A signal handler may be walking the node right now: unlinked
	 * from the list it is safe to free only once no handler can run
	 * through it, and handlers never return, so freeing is safe. */
	if (t)
		tfk_free(t);
}

static void on_fatal_signal(int sig)
{
	struct temp_node *t;

	for (t = temps; t; t = t->next)
		if (t->live)
			unlink(t->path);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void setup_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;
	size_t i;

	signal(SIGPIPE, SIG_DFL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;

		/* Keep "ignored" when a shell started us in the background. */
		sigaction(sigs[i], NULL, &old);
		if (old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

/* Messages ------------------------------------------------------------ */

void tfk_cli_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", tfk_cli_name());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int tfk_cli_fail(const struct tfk_err *err)
{
	tfk_cli_warn("%s", err->msg[0] ? err->msg : tfk_err_name(err->code));
	return 1;
}

static void print_synopsis(FILE *f)
{
	fprintf(f, "usage: %s %s\n", tfk_cli_name(),
		cur_cmd && cur_cmd->usage ? cur_cmd->usage : "[options]");
}

void tfk_cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", tfk_cli_name());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	print_synopsis(stderr);
	fprintf(stderr, "Try '%s --help' for more information.\n",
		tfk_cli_name());
	exit(2);
}

/* Help ---------------------------------------------------------------- */

static void format_default(const struct tfk_opt *o, char *s, size_t n)
{
	s[0] = '\0';
	switch (o->type) {
	case TFK_OPT_T_LONG:
		snprintf(s, n, "%ld", *(long *)o->value);
		break;
	case TFK_OPT_T_DOUBLE:
		snprintf(s, n, "%g", *(double *)o->value);
		break;
	case TFK_OPT_T_STR:
		if (*(const char **)o->value)
			snprintf(s, n, "%s", *(const char **)o->value);
		break;
	case TFK_OPT_T_SIZE: {
		uint64_t v = *(uint64_t *)o->value;
		const char *u = "KMGT";
		int k = -1;

		while (v && v % 1024 == 0 && k < 3) {
			v /= 1024;
			k++;
		}
		if (k < 0)
			snprintf(s, n, "%" PRIu64, v);
		else
			snprintf(s, n, "%" PRIu64 "%c", v, u[k]);
		break;
	}
	default:
		break;
	}
}

static void print_help(void)
{
	const struct tfk_opt *o;
	char def[64], lhs[64];

	print_synopsis(stdout);
	if (cur_cmd->summary)
		printf("%s\n", cur_cmd->summary);
	printf("\nOptions:\n");
	for (o = cur_opts; o && o->type != TFK_OPT_T_END; o++) {
		int k = 0;

		if (o->short_name)
			k = snprintf(lhs, sizeof(lhs), "-%c, ", o->short_name);
		else
			k = snprintf(lhs, sizeof(lhs), "    ");
		snprintf(lhs + k, sizeof(lhs) - (size_t)k, "--%s%s%s",
			 o->long_name, o->argname ? " " : "",
			 o->argname ? o->argname : "");
		format_default(o, def, sizeof(def));
		printf("  %-28s %s", lhs, o->help);
		if (def[0])
			printf(" (default: %s)", def);
		printf("\n");
	}
	printf("  %-28s %s\n", "-h, --help", "show this help and exit");
	printf("  %-28s %s\n", "    --version", "show the version and exit");
	if (cur_cmd->example)
		printf("\nExample:\n  %s\n", cur_cmd->example);
	printf("\nSee %s(1).\n", tfk_cli_name());
}

/* Parsing ------------------------------------------------------------- */

static void set_value(const struct tfk_opt *o, const char *arg,
		      const char *spelled)
{
	char *end;

	switch (o->type) {
	case TFK_OPT_T_FLAG:
		*(int *)o->value = 1;
		return;
	case TFK_OPT_T_LONG: {
		long v;

		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end)
			break;
		*(long *)o->value = v;
		return;
	}
	case TFK_OPT_T_DOUBLE: {
		double v;

		errno = 0;
		v = strtod(arg, &end);
		if (errno || end == arg || *end)
			break;
		*(double *)o->value = v;
		return;
	}
	case TFK_OPT_T_STR:
		*(const char **)o->value = arg;
		return;
	case TFK_OPT_T_SIZE:
		if (tfk_size_parse(arg, (uint64_t *)o->value))
			break;
		return;
	case TFK_OPT_T_LIST: {
		struct tfk_strlist *l = o->value;
		const char **v = realloc(l->v, (l->n + 1) * sizeof(*v));

		if (!v)
			tfk_cli_usage_error("out of memory");
		v[l->n++] = arg;
		l->v = v;
		return;
	}
	case TFK_OPT_T_CALL:
		if (o->cb(arg, o->value))
			break;
		return;
	case TFK_OPT_T_END:
		break;
	}
	tfk_cli_usage_error("option '%s': invalid value '%s'", spelled, arg);
}

static const struct tfk_opt *find_long(const char *name, size_t n)
{
	const struct tfk_opt *o;

	for (o = cur_opts; o && o->type != TFK_OPT_T_END; o++)
		if (strlen(o->long_name) == n && !strncmp(o->long_name, name, n))
			return o;
	return NULL;
}

static const struct tfk_opt *find_short(int c)
{
	const struct tfk_opt *o;

	for (o = cur_opts; o && o->type != TFK_OPT_T_END; o++)
		if (o->short_name == c)
			return o;
	return NULL;
}

int tfk_cli_parse(int argc, char **argv, const struct tfk_cmd *cmd,
		  const struct tfk_opt *opts)
{
	int i, npos = 0, only_pos = 0;
	char **pos = argv;

	cur_cmd = cmd;
	cur_opts = opts;
	setup_signals();

	for (i = 1; i < argc; i++) {
		char *a = argv[i];

		if (only_pos || a[0] != '-' || a[1] == '\0') {
			pos[npos++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_pos = 1;
			continue;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t n = eq ? (size_t)(eq - name) : strlen(name);
			const struct tfk_opt *o = find_long(name, n);
			const char *arg = eq ? eq + 1 : NULL;

			if (!o && n == 4 && !strncmp(name, "help", 4)) {
				print_help();
				exit(0);
			}
			if (!o && n == 7 && !strncmp(name, "version", 7)) {
				printf("%s (tfkit) %s\n", cmd->name, TFK_VERSION);
				exit(0);
			}
			if (!o)
				tfk_cli_usage_error("unknown option '--%.*s'",
						    (int)n, name);
			if (!o->argname) {
				if (eq)
					tfk_cli_usage_error("option '--%s' takes no value",
							    o->long_name);
				set_value(o, NULL, a);
				continue;
			}
			if (!arg) {
				if (i + 1 >= argc)
					tfk_cli_usage_error("option '--%s' needs a value",
							    o->long_name);
				arg = argv[++i];
			}
			set_value(o, arg, a);
			continue;
		}
		for (a++; *a; a++) {
			const struct tfk_opt *o = find_short(*a);
			char spelled[3] = { '-', *a, 0 };

			if (!o && *a == 'h') {
				print_help();
				exit(0);
			}
			if (!o)
				tfk_cli_usage_error("unknown option '-%c'", *a);
			if (!o->argname) {
				set_value(o, NULL, spelled);
				continue;
			}
			if (a[1]) {
				set_value(o, a + 1, spelled);
			} else {
				if (i + 1 >= argc)
					tfk_cli_usage_error("option '-%c' needs a value",
							    *a);
				set_value(o, argv[++i], spelled);
			}
			break;
		}
	}
	pos[npos] = NULL;
	return npos;
}

/* A whole decimal number from the environment: 0, or -1 when empty,
 * malformed or out of range. */
static int env_long(const char *s, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return errno || end == s || *end ? -1 : 0;
}

int tfk_cli_shard(const char *arg, long *index, long *count)
{
	const char *env_i = NULL, *env_n = NULL;
	char *end;
	long i, n;

	if (!arg) {
		if (getenv("SLURM_ARRAY_TASK_ID") && getenv("SLURM_ARRAY_TASK_COUNT")) {
			env_i = getenv("SLURM_ARRAY_TASK_ID");
			env_n = getenv("SLURM_ARRAY_TASK_COUNT");
		} else if (getenv("OMPI_COMM_WORLD_RANK") &&
			   getenv("OMPI_COMM_WORLD_SIZE")) {
			env_i = getenv("OMPI_COMM_WORLD_RANK");
			env_n = getenv("OMPI_COMM_WORLD_SIZE");
		}
		*index = 0;
		*count = 1;
		if (!env_i)
			return 0;
		if (env_long(env_i, &i) || env_long(env_n, &n))
			return -1;
		/* Slurm array ids need not start at 0 (--array=1-8) nor
		 * be consecutive (--array=0-15:4 gives ids 0, 4, 8, 12
		 * and a count of 4): shard (ID - MIN) / STEP. */
		if (env_i == getenv("SLURM_ARRAY_TASK_ID")) {
			const char *e_min = getenv("SLURM_ARRAY_TASK_MIN");
			const char *e_step = getenv("SLURM_ARRAY_TASK_STEP");
			long lo = 0, step = 1;

			if ((e_min && env_long(e_min, &lo)) ||
			    (e_step && env_long(e_step, &step)) || step < 1 ||
			    lo < 0 || i < lo || (i - lo) % step)
				return -1;
			i = (i - lo) / step;
		}
	} else {
		errno = 0;
		i = strtol(arg, &end, 10);
		if (errno || end == arg || *end != '/')
			return -1;
		arg = end + 1;
		n = strtol(arg, &end, 10);
		if (errno || end == arg || *end)
			return -1;
	}
	if (n < 1 || i < 0 || i >= n)
		return -1;
	*index = i;
	*count = n;
	return 0;
}

/* Subcommands ------------------------------------------------------------ */

/* "show, run or bench" into buf. */
static const char *command_list(const struct tfk_subcmd *const *subs,
				char *buf,
				size_t cap)
{
	size_t k = 0;
	int i, n = 0;

	while (subs[n])
		n++;
	buf[0] = 0;
	for (i = 0; i < n && k < cap; i++)
		k += (size_t)snprintf(buf + k, cap - k, "%s%s",
				      i == 0 ? "" : i == n - 1 ? " or " : ", ",
				      subs[i]->name);
	return buf;
}

int tfk_cli_subcommands(int argc, char **argv, const struct tfk_cmd *top,
			const struct tfk_subcmd *const *subs)
{
	static const struct tfk_opt no_opts[] = { TFK_OPT_END };
	char *argv0[2] = { argv[0], NULL }, list[256];
	int i;

	/* registers the tool name for messages and sets up signals */
	tfk_cli_parse(1, argv0, top, no_opts);
	command_list(subs, list, sizeof(list));
	if (argc < 2)
		tfk_cli_usage_error("a command is needed: %s", list);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		printf("usage: %s %s\n%s\n\n", top->name, top->usage,
		       top->summary);
		printf("Commands:\n");
		for (i = 0; subs[i]; i++)
			printf("  %-5s %s\n", subs[i]->name, subs[i]->summary);
		printf("\nOptions:\n");
		printf("  %-28s %s\n", "-h, --help", "show this help and exit");
		printf("  %-28s %s\n", "    --version",
		       "show the version and exit");
		printf("\nRun '%s COMMAND --help' for a command's options.\n",
		       top->name);
		printf("\nExample:\n  %s\n", top->example);
		printf("\nSee %s(1).\n", top->name);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("%s (tfkit) %s\n", top->name, TFK_VERSION);
		return 0;
	}
	if (argv[1][0] == '-')	/* an option before the command */
		tfk_cli_parse(argc, argv, top, no_opts);
	for (i = 0; subs[i]; i++)
		if (!strcmp(argv[1], subs[i]->name))
			return subs[i]->main(argc - 1, argv + 1);
	tfk_cli_usage_error("unknown command '%s' (%s)", argv[1], list);
}
