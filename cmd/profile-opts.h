/*
 * profile-opts.h - what every tool with --profile DIR and --trace FILE
 * shares: the two options, opening both outputs before the work (an
 * unwritable directory fails the run up front, not at its end), and
 * writing them after it. A header of statics, as bench-loop.h: each
 * tool is one binary that includes it once. The recorder is
 * util/profile.h, the files format/xplane.h and format/trace.h.
 *
 * A tool calls prof_open() after parsing its options, then
 * prof_step_begin/prof_step_end around each step it profiles (a batch,
 * a run; tfk-train: those of its --profile-steps window), and
 * prof_close() at the end, which prints where the files went unless
 * quiet. prof_abandon() (a failed run) removes the temporaries.
 * A step is a span named as Keras' TraceMe names them ("train",
 * "test", "predict") with its number: the Profile plugin's step.
 */
#ifndef TFK_CMD_PROFILE_OPTS_H
#define TFK_CMD_PROFILE_OPTS_H

#include "format/trace.h"
#include "format/xplane.h"
#include "util/cli.h"
#include "util/profile.h"

#include <stdio.h>

static const char *prof_dir, *trace_path;
static struct tfk_xplane *prof_xp;
static struct tfk_trace *prof_tr;

#define PROFILE_OPTS \
	TFK_OPT_STR(0, "profile", &prof_dir, "DIR", \
		    "write a TensorBoard profile under DIR/plugins/profile"), \
	TFK_OPT_STR(0, "trace", &trace_path, "FILE", \
		    "write a Chrome trace-event JSON (Perfetto)")

static int prof_wanted(void)
{
	return prof_dir || trace_path;
}

/* Open the outputs asked for and arm the recorder (not recording). */
static int prof_open(struct tfk_err *err)
{
	int rc = 0;

	if (!prof_wanted())
		return 0;
	if (prof_dir)
		rc = tfk_xplane_open(&prof_xp, prof_dir, err);
	if (!rc && trace_path)
		rc = tfk_trace_open(&prof_tr, trace_path, err);
	if (!rc)
		rc = tfk_prof_start(0, err);
	if (!rc)
		tfk_prof_thread_name("main");
	return rc;
}

/* Step `step` starts; recorded when `on`. Returns its start time. */
static inline uint64_t prof_step_begin(int64_t step, int on)
{
	tfk_prof_record(on);
	tfk_prof_set_step(step);
	return tfk_prof_now();
}

/* Step `step` (started at t0) ends: its span, and recording pauses. */
static inline void prof_step_end(const char *name, int64_t step, uint64_t t0)
{
	tfk_prof_span(name, NULL, t0, tfk_prof_now(), step);
	tfk_prof_record(0);
}

static void prof_abandon(void)
{
	tfk_prof_stop();
	tfk_xplane_discard(prof_xp);
	tfk_trace_discard(prof_tr);
	prof_xp = NULL;
	prof_tr = NULL;
	tfk_prof_free();
}

/* Stop recording, write the files, say where (unless quiet). */
static int prof_close(int quiet, struct tfk_err *err)
{
	char where[4200] = "";
	int rc = 0;

	if (!prof_wanted())
		return 0;
	tfk_prof_stop();
	if (prof_xp)
		snprintf(where, sizeof(where), "%s", tfk_xplane_path(prof_xp));
	rc = tfk_xplane_close(prof_xp, err);
	prof_xp = NULL;
	if (!rc && !quiet && where[0])
		fprintf(stderr, "%s: profile written to %s\n", tfk_cli_name(),
			where);
	if (!rc)
		rc = tfk_trace_close(prof_tr, tfk_cli_name(), err);
	else
		tfk_trace_discard(prof_tr);
	prof_tr = NULL;
	if (!rc && !quiet && trace_path)
		fprintf(stderr, "%s: trace written to %s\n", tfk_cli_name(),
			trace_path);
	if (!rc && tfk_prof_dropped() && !quiet)
		tfk_cli_warn("profile: %llu events over the recorder's limit "
			     "were not kept",
			     (unsigned long long)tfk_prof_dropped());
	tfk_prof_free();
	return rc;
}

#endif
