/*
 * xplane.h - the recorder's profile as TensorBoard's Profile plugin
 * reads it.
 *
 * Layout under a log directory (as tf.profiler.experimental.stop and
 * the TensorBoard callback leave it):
 *   DIR/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.xplane.pb
 *   DIR/events.out.tfevents.<seconds>.<host>.profile-empty
 * The .pb is one tensorflow.profiler.XSpace (formats/xplane.proto):
 *   plane "/host:CPU":
 *     a line per recording thread (id: the thread id, name: its
 *     tfk_prof_thread_name) whose events are its spans, op events named
 *     "node:Op" (metadata display_name "Op", as TensorFlow's executor
 *     names them), a span with a step number carries the stats step_num
 *     and _r 1 (a root: the Profile plugin groups the events nested in
 *     it into that step, as Keras' "train" TraceMe), and its memory
 *     events "MemoryAllocation"/"MemoryDeallocation" with stats
 *     allocator_name "cpu", bytes_allocated (in use after it),
 *     bytes_available (physical memory not in use), peak_bytes_in_use,
 *     requested_bytes, allocation_bytes (64-byte rounded, as planned),
 *     tf_op, step_num, region_type "output", data_type (DataType
 *     number) and shape;
 *     a line "Steps" with an event per step span, named its number;
 *   plane "Task Environment": profile_start_time, profile_stop_time.
 * The empty-profile marker is an event file holding only the
 * file_version event; TensorBoard lists its directory as a run with a
 * profile. Every time is from the recorder (util/profile.h).
 */
#ifndef TFK_XPLANE_H
#define TFK_XPLANE_H

#include "util/err.h"

struct tfk_xplane;

/*
 * Create DIR/plugins/profile/<run>/ for a profile started now and open
 * the .xplane.pb under a temporary name (io/out.h), so that a directory
 * that cannot be written fails here, before the work. 0, TFK_EIO
 * ("DIR/plugins/profile/...: Permission denied"), TFK_ENOMEM.
 */
int tfk_xplane_open(struct tfk_xplane **xp, const char *dir,
		    struct tfk_err *err);
/* The final path of the .xplane.pb (borrowed). */
const char *tfk_xplane_path(const struct tfk_xplane *xp);
/*
 * Write the recorder's events (stop it first), rename the file into
 * place, write the marker when DIR has none, and free xp (also on
 * failure). 0, TFK_EIO, TFK_ENOMEM.
 */
int tfk_xplane_close(struct tfk_xplane *xp, struct tfk_err *err);
/* Abandon: remove the temporary, free. NULL is fine. */
void tfk_xplane_discard(struct tfk_xplane *xp);

#endif
