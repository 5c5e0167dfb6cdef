/* mains.h - subcommand mains still in lib/model (moving to cmd/). */
#ifndef TFK_MAINS_H
#define TFK_MAINS_H
int tfk_lite_convert_main(int argc, char **argv);
int tfk_lite_bench_main(int argc, char **argv);
#endif
