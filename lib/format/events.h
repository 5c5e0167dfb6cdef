/*
 * events.h - TensorBoard event files (what tf.summary writes).
 *
 * A file DIR/events.out.tfevents.<seconds>.<host> of TFRecord-framed
 * tensorflow.Event protos (formats/event.proto, summary.proto): first
 * {wall_time, file_version "brain.Event:2"}, then one event per summary
 * value with wall_time and step. Scalars are Summary.Value.simple_value
 * (TensorBoard's scalars dashboard reads it as tf.summary.scalar's
 * tensor form); histograms are HistogramProto with TensorFlow's default
 * bucket limits (±1e-12 · 1.1^k, as tf.compat.v1.summary.histogram);
 * hparams use the hparams plugin's session_start_info summary
 * (plugin_name "hparams", content a HParamsPluginData proto).
 *
 * The file is written through a buffered stream and flushed after
 * every event batch (tfk_events_flush), so TensorBoard sees progress
 * and a killed run loses at most the unflushed tail; event files are
 * logs, not outputs, so they are not written under a temporary name.
 */
#ifndef TFK_EVENTS_H
#define TFK_EVENTS_H

#include "util/err.h"

#include <stddef.h>
#include <stdint.h>

struct tfk_events;

/* Create dir (and parents) and the event file in it, named for
 * wall_time (seconds since the epoch) and this host; writes the
 * file_version event. 0, TFK_EIO ("DIR: ..."), TFK_ENOMEM. */
int tfk_events_open(struct tfk_events **ev, const char *dir,
		    double wall_time, struct tfk_err *err);
/* The file's path (borrowed). */
const char *tfk_events_path(const struct tfk_events *ev);

int tfk_events_scalar(struct tfk_events *ev, double wall_time, int64_t step,
		      const char *tag, double value, struct tfk_err *err);
int tfk_events_histogram(struct tfk_events *ev, double wall_time,
			 int64_t step, const char *tag, const float *x,
			 size_t n, struct tfk_err *err);

/* One hparam: name and either a number (str NULL) or a string. */
struct tfk_hparam {
	const char *name;
	const char *str;
	double num;
};
/* hparams plugin session start info for this run (group name = the
 * file's run), step 0. */
int tfk_events_hparams(struct tfk_events *ev, double wall_time,
		       const struct tfk_hparam *hp, int n,
		       struct tfk_err *err);

int tfk_events_flush(struct tfk_events *ev, struct tfk_err *err);
/* Flush and close; NULL is fine. 0 or TFK_EIO. */
int tfk_events_close(struct tfk_events *ev, struct tfk_err *err);

#endif
