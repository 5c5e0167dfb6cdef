/*
 * sub.h - tfk-model's subcommands other than show, one file each under
 * cmd/model/ and linked into tfk-model alone; cmd/model.c dispatches.
 * Each is a main: argv[0] is the subcommand's name; returns the exit
 * status.
 */
#ifndef TFK_CMD_MODEL_SUB_H
#define TFK_CMD_MODEL_SUB_H

int model_run_main(int argc, char **argv);	/* run.c */
int model_bench_main(int argc, char **argv);	/* bench.c */

#endif
