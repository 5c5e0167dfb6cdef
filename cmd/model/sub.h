/*
 * sub.h - tfk-model's subcommands other than show, one file each under
 * cmd/model/ and linked into tfk-model alone; cmd/model.c dispatches.
 * Each file defines its table entry: name, --help line and main.
 */
#ifndef TFK_CMD_MODEL_SUB_H
#define TFK_CMD_MODEL_SUB_H

#include "util/cli.h"

extern const struct tfk_subcmd model_run_sub;	/* run.c */
extern const struct tfk_subcmd model_bench_sub;	/* bench.c */

#endif
