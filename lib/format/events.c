/*
 * events.c - TensorBoard event files, as tf.summary's EventsWriter.
 *
 * Each event is a tensorflow.Event packed by the protobuf-c code
 * generated from formats/event.proto, framed as a TFRecord
 * (tfk_rec_frame) and appended to an in-memory buffer; flush writes the
 * buffer to the file with write(2). The file is opened O_APPEND on a
 * plain descriptor rather than through tfk_out: tfk_out writes to a
 * temporary and renames at close, but an event log must be readable by a
 * running TensorBoard while training goes on, and what a killed run
 * wrote must stay.
 *
 * Names follow TensorFlow's EventsWriter: "events.out.tfevents." plus
 * the time in seconds (%010lld) and the host name. TF avoids collisions
 * between runs started in the same second by a pid suffix; here the
 * file is created O_EXCL and, when the name is taken, ".1", ".2", ...
 * is appended (TensorBoard only looks for "tfevents" in the name).
 *
 * Histograms reproduce tensorflow/core/lib/histogram/histogram.cc:
 * the default limits grow by 10% from 1e-12 to 1e20 on both sides of
 * 0 with ±DBL_MAX at the ends, a value v goes to the first bucket whose
 * limit is > v (upper_bound), and runs of empty buckets collapse into
 * their last limit when encoded. Non-finite values are refused as TF's
 * HistogramSummary op refuses them ("nan in summary histogram").
 *
 * hparams: one summary value tagged "_hparams_/session_start_info"
 * whose metadata names the plugin "hparams" and carries a serialized
 * HParamsPluginData (version 0) holding the values; its tensor is the
 * plugin's NULL_TENSOR (float32, shape [0]). group_name stays empty so
 * TensorBoard groups the session by its run, as its docs say.
 */
#include "format/events.h"
#include "io/out.h"

#include "formats/event.pb-c.h"
#include "formats/hparams_plugin_data.pb-c.h"
#include "io/record.h"
#include "util/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_VERSION "brain.Event:2"
#define WRITER_NAME "tfkit"

struct tfk_events {
	int fd;
	char *path;
	uint8_t *buf;		/* framed events not yet written */
	size_t n, cap;
	double *limits;		/* default histogram bucket limits */
	double *counts;		/* scratch, one per limit */
	double *enc_lim, *enc_cnt;	/* scratch for the encoded buckets */
	size_t n_limits;
};

/* mkdir -p; errors name the directory. */
static int make_dirs(const char *dir, struct tfk_err *err)
{
	if (!*dir)
		return tfk_errf(err, TFK_EINVAL, "empty event directory name");
	return tfk_mkdirs(dir, err);
}

static int buf_reserve(struct tfk_events *ev, size_t more,
		       struct tfk_err *err)
{
	size_t cap = ev->cap ? ev->cap : 4096;
	uint8_t *nb;

	if (ev->n + more <= ev->cap)
		return 0;
	while (cap < ev->n + more)
		cap *= 2;
	nb = tfk_realloc(ev->buf, cap);
	if (!nb)
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", ev->path);
	ev->buf = nb;
	ev->cap = cap;
	return 0;
}

/* Pack e, frame it and append it to the buffer. */
static int put_event(struct tfk_events *ev, const Tensorflow__Event *e,
		     struct tfk_err *err)
{
	size_t len = tensorflow__event__get_packed_size(e);
	uint8_t *p;
	int rc = buf_reserve(ev, len + TFK_REC_OVERHEAD, err);

	if (rc)
		return rc;
	p = ev->buf + ev->n;
	tensorflow__event__pack(e, p + TFK_REC_HEADER);
	tfk_rec_frame(p, p + TFK_REC_HEADER + len, p + TFK_REC_HEADER, len);
	ev->n += len + TFK_REC_OVERHEAD;
	return 0;
}

/* TF's default histogram limits (histogram.cc InitDefaultBucketsInner). */
static int init_limits(struct tfk_events *ev, struct tfk_err *err)
{
	size_t k = 0, n_pos = 0, i;
	double v;

	for (v = 1.0e-12; v < 1.0e20; v *= 1.1)
		n_pos++;
	ev->n_limits = 2 * (n_pos + 1) + 1;
	ev->limits = tfk_malloc(ev->n_limits * sizeof(double));
	ev->counts = tfk_malloc(ev->n_limits * sizeof(double));
	ev->enc_lim = tfk_malloc(ev->n_limits * sizeof(double));
	ev->enc_cnt = tfk_malloc(ev->n_limits * sizeof(double));
	if (!ev->limits || !ev->counts || !ev->enc_lim || !ev->enc_cnt)
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", ev->path);
	ev->limits[k++] = -DBL_MAX;
	/* the negative side is the positive one reversed, value for value */
	k += n_pos;
	for (v = 1.0e-12, i = 0; i < n_pos; i++, v *= 1.1)
		ev->limits[k - i - 1] = -v;
	ev->limits[k++] = 0.0;
	for (v = 1.0e-12, i = 0; i < n_pos; i++, v *= 1.1)
		ev->limits[k++] = v;
	ev->limits[k++] = DBL_MAX;
	return 0;
}

static void free_events(struct tfk_events *ev)
{
	tfk_free(ev->limits);
	tfk_free(ev->counts);
	tfk_free(ev->enc_lim);
	tfk_free(ev->enc_cnt);
	tfk_free(ev->buf);
	tfk_free(ev->path);
	tfk_free(ev);
}

int tfk_events_open(struct tfk_events **out, const char *dir,
		    double wall_time, struct tfk_err *err)
{
	Tensorflow__Event e = TENSORFLOW__EVENT__INIT;
	Tensorflow__SourceMetadata sm = TENSORFLOW__SOURCE_METADATA__INIT;
	struct tfk_events *ev;
	char host[256];
	size_t plen;
	int rc, k;

	*out = NULL;
	if ((rc = make_dirs(dir, err)))
		return rc;
	if (gethostname(host, sizeof(host)))
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = 0;
	ev = tfk_calloc(1, sizeof(*ev));
	plen = strlen(dir) + strlen(host) + 64;
	if (!ev || !(ev->path = tfk_malloc(plen))) {
		tfk_free(ev);
		return tfk_errf(err, TFK_ENOMEM, "%s: out of memory", dir);
	}
	ev->fd = -1;
	for (k = 0; ev->fd < 0; k++) {
		int n = snprintf(ev->path, plen, "%s/events.out.tfevents.%010lld"
				 ".%s", dir, (long long)wall_time, host);

		if (k)
			snprintf(ev->path + n, plen - n, ".%d", k);
		ev->fd = open(ev->path, O_WRONLY | O_CREAT | O_EXCL |
			      O_APPEND | O_CLOEXEC, 0666);
		if (ev->fd < 0 && (errno != EEXIST || k >= 1000)) {
			rc = tfk_errf(err, TFK_EIO, "%s: %s", ev->path,
				      strerror(errno));
			goto fail;
		}
	}
	if ((rc = init_limits(ev, err)))
		goto fail;
	e.wall_time = wall_time;
	e.what_case = TENSORFLOW__EVENT__WHAT_FILE_VERSION;
	e.file_version = (char *)FILE_VERSION;
	sm.writer = (char *)WRITER_NAME;
	e.source_metadata = &sm;
	if ((rc = put_event(ev, &e, err)) || (rc = tfk_events_flush(ev, err)))
		goto fail;
	*out = ev;
	return 0;
fail:
	if (ev->fd >= 0) {
		close(ev->fd);
		unlink(ev->path);
	}
	free_events(ev);
	return rc;
}

const char *tfk_events_path(const struct tfk_events *ev)
{
	return ev->path;
}

/* One summary event holding the single value v. */
static int put_value(struct tfk_events *ev, double wall_time, int64_t step,
		     Tensorflow__Summary__Value *v, struct tfk_err *err)
{
	Tensorflow__Event e = TENSORFLOW__EVENT__INIT;
	Tensorflow__Summary s = TENSORFLOW__SUMMARY__INIT;

	s.n_value = 1;
	s.value = &v;
	e.wall_time = wall_time;
	e.step = step;
	e.what_case = TENSORFLOW__EVENT__WHAT_SUMMARY;
	e.summary = &s;
	return put_event(ev, &e, err);
}

int tfk_events_scalar(struct tfk_events *ev, double wall_time, int64_t step,
		      const char *tag, double value, struct tfk_err *err)
{
	Tensorflow__Summary__Value v = TENSORFLOW__SUMMARY__VALUE__INIT;

	v.tag = (char *)tag;
	v.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_SIMPLE_VALUE;
	v.simple_value = (float)value;
	return put_value(ev, wall_time, step, &v, err);
}

int tfk_events_histogram(struct tfk_events *ev, double wall_time,
			 int64_t step, const char *tag, const float *x,
			 size_t n, struct tfk_err *err)
{
	Tensorflow__Summary__Value v = TENSORFLOW__SUMMARY__VALUE__INIT;
	Tensorflow__HistogramProto h = TENSORFLOW__HISTOGRAM_PROTO__INIT;
	double *lim = ev->limits, *cnt = ev->counts, *ol, *oc;
	size_t nl = ev->n_limits, i, k;
	double mn = DBL_MAX, mx = -DBL_MAX, sum = 0, sq = 0;

	memset(cnt, 0, nl * sizeof(double));
	for (i = 0; i < n; i++) {
		double d = x[i];
		size_t lo = 0, hi = nl;

		if (!isfinite(d))
			return tfk_errf(err, TFK_EINVAL, "%s: %s in summary "
					"histogram", tag, isnan(d) ? "nan" :
					"inf");
		/* upper_bound: the first limit > d */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (lim[mid] > d)
				hi = mid;
			else
				lo = mid + 1;
		}
		if (lo == nl)	/* d == DBL_MAX cannot happen for a float */
			lo = nl - 1;
		cnt[lo] += 1.0;
		if (mn > d)
			mn = d;
		if (mx < d)
			mx = d;
		sum += d;
		sq += d * d;
	}
	/* encode as Histogram::EncodeToProto(preserve_zero_buckets=false) */
	ol = ev->enc_lim;
	oc = ev->enc_cnt;
	for (i = 0, k = 0; i < nl;) {
		double end = lim[i], c = cnt[i];

		i++;
		if (c <= 0.0) {
			while (i < nl && cnt[i] <= 0.0) {
				end = lim[i];
				c = cnt[i];
				i++;
			}
		}
		ol[k] = end;
		oc[k++] = c;
	}
	h.min = mn;
	h.max = mx;
	h.num = (double)n;
	h.sum = sum;
	h.sum_squares = sq;
	h.n_bucket_limit = h.n_bucket = k;
	h.bucket_limit = ol;
	h.bucket = oc;
	v.tag = (char *)tag;
	v.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_HISTO;
	v.histo = &h;
	return put_value(ev, wall_time, step, &v, err);
}

int tfk_events_hparams(struct tfk_events *ev, double wall_time,
		       const struct tfk_hparam *hp, int n,
		       struct tfk_err *err)
{
	Tensorboard__Hparams__HParamsPluginData pd =
		TENSORBOARD__HPARAMS__HPARAMS_PLUGIN_DATA__INIT;
	Tensorboard__Hparams__SessionStartInfo si =
		TENSORBOARD__HPARAMS__SESSION_START_INFO__INIT;
	Tensorflow__Summary__Value v = TENSORFLOW__SUMMARY__VALUE__INIT;
	Tensorflow__SummaryMetadata md = TENSORFLOW__SUMMARY_METADATA__INIT;
	Tensorflow__SummaryMetadata__PluginData pl =
		TENSORFLOW__SUMMARY_METADATA__PLUGIN_DATA__INIT;
	Tensorflow__TensorProto t = TENSORFLOW__TENSOR_PROTO__INIT;
	Tensorflow__TensorShapeProto sh = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
	Tensorflow__TensorShapeProto__Dim d0 =
		TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT;
	Tensorflow__TensorShapeProto__Dim *dims[1] = { &d0 };
	Tensorboard__Hparams__SessionStartInfo__HparamsEntry *ents = NULL;
	Tensorboard__Hparams__SessionStartInfo__HparamsEntry **entp = NULL;
	Google__Protobuf__Value *vals = NULL;
	uint8_t *content = NULL;
	int i, rc;

	if (n < 0)
		return tfk_errf(err, TFK_EINVAL, "hparams: negative count");
	if (n > 0) {
		ents = tfk_calloc((size_t)n, sizeof(*ents));
		entp = tfk_calloc((size_t)n, sizeof(*entp));
		vals = tfk_calloc((size_t)n, sizeof(*vals));
		if (!ents || !entp || !vals) {
			rc = tfk_errf(err, TFK_ENOMEM, "%s: out of memory",
				      ev->path);
			goto out;
		}
	}
	for (i = 0; i < n; i++) {
		Tensorboard__Hparams__SessionStartInfo__HparamsEntry e0 =
			TENSORBOARD__HPARAMS__SESSION_START_INFO__HPARAMS_ENTRY__INIT;
		Google__Protobuf__Value v0 = GOOGLE__PROTOBUF__VALUE__INIT;

		if (!hp[i].name) {
			rc = tfk_errf(err, TFK_EINVAL, "hparams: entry %d has "
				      "no name", i);
			goto out;
		}
		vals[i] = v0;
		if (hp[i].str) {
			vals[i].kind_case =
				GOOGLE__PROTOBUF__VALUE__KIND_STRING_VALUE;
			vals[i].string_value = (char *)hp[i].str;
		} else {
			vals[i].kind_case =
				GOOGLE__PROTOBUF__VALUE__KIND_NUMBER_VALUE;
			vals[i].number_value = hp[i].num;
		}
		ents[i] = e0;
		ents[i].key = (char *)hp[i].name;
		ents[i].value = &vals[i];
		entp[i] = &ents[i];
	}
	si.n_hparams = (size_t)n;
	si.hparams = entp;
	si.start_time_secs = wall_time;
	pd.version = 0;
	pd.data_case = TENSORBOARD__HPARAMS__HPARAMS_PLUGIN_DATA__DATA_SESSION_START_INFO;
	pd.session_start_info = &si;
	content = tfk_malloc(
		tensorboard__hparams__hparams_plugin_data__get_packed_size(&pd)
		+ 1);
	if (!content) {
		rc = tfk_errf(err, TFK_ENOMEM, "%s: out of memory", ev->path);
		goto out;
	}
	pl.plugin_name = (char *)"hparams";
	pl.content.len = tensorboard__hparams__hparams_plugin_data__pack(&pd,
									 content);
	pl.content.data = content;
	md.plugin_data = &pl;
	/* the plugin's NULL_TENSOR: float32 of shape [0] */
	d0.size = 0;
	sh.n_dim = 1;
	sh.dim = dims;
	t.dtype = TENSORFLOW__DATA_TYPE__DT_FLOAT;
	t.tensor_shape = &sh;
	v.tag = (char *)"_hparams_/session_start_info";
	v.metadata = &md;
	v.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_TENSOR;
	v.tensor = &t;
	rc = put_value(ev, wall_time, 0, &v, err);
out:
	tfk_free(content);
	tfk_free(ents);
	tfk_free(entp);
	tfk_free(vals);
	return rc;
}

int tfk_events_flush(struct tfk_events *ev, struct tfk_err *err)
{
	size_t off = 0;

	while (off < ev->n) {
		ssize_t w = write(ev->fd, ev->buf + off, ev->n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = w < 0 ? errno : EIO;

			/* keep what was not written for a later retry */
			memmove(ev->buf, ev->buf + off, ev->n - off);
			ev->n -= off;
			return tfk_errf(err, TFK_EIO, "%s: %s", ev->path,
					strerror(e));
		}
		off += (size_t)w;
	}
	ev->n = 0;
	return 0;
}

int tfk_events_close(struct tfk_events *ev, struct tfk_err *err)
{
	int rc;

	if (!ev)
		return 0;
	rc = tfk_events_flush(ev, err);
	if (close(ev->fd) && !rc)
		rc = tfk_errf(err, TFK_EIO, "%s: %s", ev->path,
			      strerror(errno));
	free_events(ev);
	return rc;
}
