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

/* Reading ------------------------------------------------------------
 *
 * A reader returns each Event of one file with its summary values
 * decoded. Scalars come from TF1's simple_value (float32) and from
 * TF2 tf.summary tensors: a float or double scalar TensorProto whose
 * metadata names the plugin "scalars" (TF2 writes the metadata on a
 * tag's first value only, so the reader remembers each tag's plugin,
 * as TensorBoard's EventAccumulator does). Histograms are TF1's
 * HistogramProto (histo) or TF2's "histograms" tensor, a [k, 3] float
 * or double tensor of (left edge, right edge, count) rows, given here
 * in HistogramProto's form (right edges, min = the first left edge,
 * max = the last right edge). Images are TF1's Summary.Image or TF2's
 * "images" tensor of strings (width, height, then the encoded images);
 * text is the "text" plugin's string tensor; hparams are the "hparams"
 * plugin's HParamsPluginData in the metadata content
 * (formats/hparams_plugin_data.proto). Other values are reported by
 * kind only.
 */

enum tfk_evk {
	TFK_EVK_OTHER,		/* audio, graphs, ... */
	TFK_EVK_SCALAR,
	TFK_EVK_HISTO,
	TFK_EVK_TENSOR,		/* a tensor of another plugin */
	TFK_EVK_IMAGE,
	TFK_EVK_TEXT,
	TFK_EVK_HPARAMS,
	TFK_EVK_N
};

/* "scalar", "histogram", "tensor", "image", "text", "hparams",
 * "other". */
const char *tfk_evk_name(int kind);

struct tfk_ev_histo {
	double min, max, num, sum, sum_squares;
	size_t n_bucket;
	const double *limit, *count;	/* n_bucket each */
};

/*
 * The value at fraction q (0..1) of a histogram's mass, interpolated
 * linearly inside the bucket it falls in, the left edge of the first
 * non-empty bucket taken as min and every edge clipped to [min, max]:
 * TensorBoard's compress_histogram (the distributions dashboard's
 * percentile bands). An empty histogram gives NaN.
 */
double tfk_ev_histo_quantile(const struct tfk_ev_histo *h, double q);

struct tfk_ev_image {
	int width, height;	/* as the summary states them */
	size_t n;		/* images in this value (TF2: a batch) */
	size_t nbytes;		/* of the first encoded image */
	const char *format;	/* png, jpeg, gif, bmp or unknown */
	const uint8_t *data;	/* the first encoded image (borrowed) */
};

/* The hparams plugin's data: a session's start (hparams, group), its
 * end (status), or an experiment (reported by kind only). */
enum tfk_evh {
	TFK_EVH_OTHER,
	TFK_EVH_START,
	TFK_EVH_END,
};

struct tfk_ev_hparams {
	int what;		/* TFK_EVH_* */
	size_t n;		/* START: hparams, sorted by name */
	const struct tfk_hparam *hp;	/* bools as str "true"/"false" */
	const char *group;	/* START: group_name ("" if none) */
	double start_time;	/* START: start_time_secs */
	int status;		/* END: 0 unknown, 1 success, 2 failure,
				   3 running (api.proto's Status) */
	double end_time;	/* END: end_time_secs */
};

struct tfk_ev_value {
	const char *tag;
	size_t tag_len;		/* strlen(tag) */
	int kind;		/* TFK_EVK_* */
	double value;		/* TFK_EVK_SCALAR */
	int f32;		/* 1: value came from a float32 */
	struct tfk_ev_histo histo;	/* TFK_EVK_HISTO */
	struct tfk_ev_image image;	/* TFK_EVK_IMAGE */
	const char *text;	/* TFK_EVK_TEXT: the first string */
	size_t text_len, n_text;	/* its length; strings in the value */
	struct tfk_ev_hparams hparams;	/* TFK_EVK_HPARAMS */
};

struct tfk_ev_event {
	double wall_time;
	int64_t step;
	const char *file_version;	/* NULL unless a file_version event */
	int is_summary;
	size_t n_value;
	const struct tfk_ev_value *value;
	uint64_t index, off;	/* the record's number and byte offset */
};

struct tfk_evr;

/* Open an event file. Errors as tfk_rec_open. */
int tfk_evr_open(struct tfk_evr **r, const char *path, struct tfk_err *err);
void tfk_evr_close(struct tfk_evr *r);

/*
 * The next event: 1 with *e filled (strings and arrays borrowed, valid
 * until the next call), 0 at the end, or a negative code with err
 * naming the file, record and byte: TFK_ECORRUPT (a crc mismatch, or
 * a payload that is not a tensorflow.Event: "wire error"), TFK_ETRUNC,
 * TFK_EIO, TFK_ENOMEM. After TFK_ECORRUPT the next call goes on with
 * the next readable record (past a bad header by a resync); after a
 * truncation it returns 0. A value whose plugin data cannot be decoded
 * (a histogram tensor of the wrong shape, an image tensor without its
 * sizes, hparams content that is not HParamsPluginData) is not an
 * error: it is reported as TFK_EVK_TENSOR, as a dashboard skips it.
 */
int tfk_evr_next(struct tfk_evr *r, struct tfk_ev_event *e,
		 struct tfk_err *err);

/*
 * on 1 (the default): events of the shapes TensorFlow writes for
 * scalars are read by a wire scanner, others by protobuf-c; on 0:
 * every event by protobuf-c. The events returned are the same either
 * way (fuzz-events compares them); the switch is for that comparison.
 */
void tfk_evr_set_scan(struct tfk_evr *r, int on);

/* Byte offset just past the last whole record read (or skipped). */
uint64_t tfk_evr_end(const struct tfk_evr *r);
/*
 * For a file that is still being written (tfk-events --follow): open
 * it again and go on from tfk_evr_end, so records appended since the
 * end (or since a truncated tail) are read. Plain files only. Errors
 * as tfk_rec_open and tfk_rec_seek; r is unchanged on failure.
 */
int tfk_evr_reopen(struct tfk_evr *r, struct tfk_err *err);

/* One event file found under a log directory. */
struct tfk_ev_file {
	char *run;	/* its directory relative to the logdir ("." itself) */
	char *path;
};

/*
 * Find the event files (names containing "tfevents") under logdir and
 * its subdirectories, sorted by run, then by name (the order
 * TensorBoard reads them: file names start with the time). *files is a
 * new array of *n entries; free it with tfk_ev_files_free. Errors:
 * TFK_EIO naming the directory, TFK_ENOMEM.
 */
int tfk_ev_files_find(const char *logdir, struct tfk_ev_file **files,
		      size_t *n, struct tfk_err *err);
void tfk_ev_files_free(struct tfk_ev_file *files, size_t n);

#endif
