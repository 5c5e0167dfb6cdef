/*
 * tfk-plot: pictures of what tfkit wrote, as PNG (or text for a
 * terminal): training curves from TensorBoard logs (curves), a grid of
 * images from TFRecords (images), a confusion matrix from tfk-predict's
 * output (confusion), and a weight's histograms across epochs
 * (histogram). The pictures TensorBoard and the Keras tutorials'
 * matplotlib cells show, without either.
 *
 * Drawing is lib/util/raster (a small rasteriser with a built-in
 * bitmap font, PNG through libpng); the charts' layout is
 * cmd/plot/chart.c; each subcommand is a file of cmd/plot/ with its own
 * option table. Every output is written atomically (lib/io/out).
 */
#include "plot/sub.h"

static const struct tfk_cmd top_cmd = {
	"tfk-plot",
	"COMMAND [options]",
	"draw training curves, image grids, confusion matrices and "
	"histograms as PNG or text",
	"tfk-plot curves logs -o curves.png",
};

int main(int argc, char **argv)
{
	static const struct tfk_subcmd *const subs[] = {
		&plot_curves_sub, &plot_images_sub, &plot_confusion_sub,
		&plot_histogram_sub, NULL
	};

	return tfk_cli_subcommands(argc, argv, &top_cmd, subs);
}
