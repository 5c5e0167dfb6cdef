/*
 * smrun.c - placeholder for `tfk-model run` (tfk_model_run_main, see
 * savedmodel.h) until the SavedModel executor lands: it refuses with a
 * clear message and exit status 1, so tfk-model links and `show` works.
 * The engineer of `run` replaces this file.
 */
#include "model/savedmodel.h"

#include "util/cli.h"

int tfk_model_run_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	tfk_cli_warn("run: not available yet");
	return 1;
}
