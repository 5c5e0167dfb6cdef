/*
 * sub.h - tfk-lite's subcommands other than show, one file each under
 * cmd/lite/ and linked into tfk-lite alone; cmd/lite.c dispatches.
 * Each is a main: argv[0] is the subcommand's name; returns the exit
 * status.
 */
#ifndef TFK_CMD_LITE_SUB_H
#define TFK_CMD_LITE_SUB_H

int lite_run_main(int argc, char **argv);	/* run.c */
int lite_convert_main(int argc, char **argv);	/* convert.c */
int lite_bench_main(int argc, char **argv);	/* bench.c */

#endif
