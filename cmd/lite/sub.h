/*
 * sub.h - tfk-lite's subcommands other than show, one file each under
 * cmd/lite/ and linked into tfk-lite alone; cmd/lite.c dispatches.
 * Each file defines its table entry: name, --help line and main.
 */
#ifndef TFK_CMD_LITE_SUB_H
#define TFK_CMD_LITE_SUB_H

#include "util/cli.h"

struct tfk_tflite;

extern const struct tfk_subcmd lite_run_sub;	/* run.c */
extern const struct tfk_subcmd lite_convert_sub;	/* convert.c */
extern const struct tfk_subcmd lite_bench_sub;	/* bench.c */

/* Print each of m's load warnings as "tfk-lite: PATH: warning: ..."
 * (lite.c; every subcommand that loads a model calls it). */
void lite_load_warnings(const char *path, const struct tfk_tflite *m);

#endif
