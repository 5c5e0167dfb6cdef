/*
 * events-impl.h - private to lib/format: the event reader's wire
 * scanner (events-scan.c), used by events-read.c.
 */
#ifndef TFK_EVENTS_IMPL_H
#define TFK_EVENTS_IMPL_H

#include <stddef.h>
#include <stdint.h>

/* Values of one event the scanner takes; an event with more goes to
 * protobuf-c. */
#define TFK_EVS_MAX_VALUES 64

/* One Summary.Value the scanner read: a scalar. */
struct tfk_evs_value {
	const uint8_t *tag;	/* into the payload, not '\0'-terminated */
	size_t tag_len;
	double value;
	int f32;		/* float32 (simple_value, DT_FLOAT) */
	int tensor;		/* a TF2 tensor, not simple_value */
	int scalars;		/* with metadata of the plugin "scalars" */
};

struct tfk_evs_event {
	double wall_time;
	int64_t step;
	const uint8_t *file_version;	/* NULL unless the event has one */
	size_t fv_len;
	int is_summary;
	size_t n_value;
	struct tfk_evs_value value[TFK_EVS_MAX_VALUES];
};

/*
 * Read the Event payload p[0..n) when it has one of the shapes below,
 * the ones TensorFlow writes for scalars, so that protobuf-c's decode
 * gives the same result. 1: *e filled (pointers into p); 0: anything
 * else (another field, a repeated or out of place one, a wire error, a
 * non-scalar value): decode it with protobuf-c, which also words the
 * error. Shapes taken, each field at most once, in any order:
 *
 *   Event    1 wall_time (fixed64), 2 step (varint), and at most one
 *            of 3 file_version (bytes) and 5 summary
 *   Summary  1 value, repeated (up to TFK_EVS_MAX_VALUES)
 *   Value    1 tag, 9 metadata, and one of 2 simple_value (fixed32) or
 *            8 tensor
 *   metadata 1 plugin_data {1 plugin_name "scalars", 2 content},
 *            2 display_name, 3 summary_description, 4 data_class
 *   tensor   1 dtype DT_FLOAT or DT_DOUBLE, 2 tensor_shape (empty), and
 *            one of 5 float_val / 6 double_val (packed, of the dtype)
 *            or 4 tensor_content (4 or 8 bytes, of the dtype)
 *
 * Varints are taken as protobuf-c reads them (at most 10 bytes, the low
 * 64 bits; field keys of one byte).
 */
int tfk_evs_scan(const uint8_t *p, size_t n, struct tfk_evs_event *e);

#endif
