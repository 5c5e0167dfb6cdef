/*
 * t-events.c - TensorBoard event files.
 *
 * Two independent oracles:
 *  - the real TF-written event files in $TFK_FIXTURES/events, decoded
 *    with OUR protobuf-c code generated from formats/event.proto and
 *    summary.proto: the counts and values the fixture README states
 *    (28 events of which 19 summaries, loss 0.4280262589454651 at step
 *    1, eval accuracy/auc at steps 999 and 1000) prove our field
 *    numbers are TensorFlow's;
 *  - our own files decoded by tests/py/events_check.py, python3-protobuf
 *    with message classes built from TF's field numbers (framing CRCs
 *    checked there too), which also recomputes every histogram (min,
 *    max, num, sum, sum_squares, bucket limits and counts) with numpy
 *    from TensorFlow's histogram.cc algorithm.
 * Plus error paths: non-finite histogram values, an unwritable
 * directory, name collisions in one second, failed allocations. The
 * reader (tfk_evr_*, tfk_ev_files_find) reads our files back.
 *
 * The reader's wire scanner is judged by protobuf-c: payloads at the
 * edges of what it takes (a oneof set twice, repeated fields, other
 * wire types, ten-byte varints, non-canonical keys and lengths, a
 * packed field of the wrong length, plugins other than "scalars") are
 * read with the scanner and without (tfk_evr_set_scan) and must give
 * the same codes and events; fuzz-events does the same on random bytes.
 */
#include "format/events.h"

#include "formats/event.pb-c.h"
#include "io/record.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "tap.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The one events.out.tfevents.* file directly in dir, into buf. */
static int find_events(const char *dir, char *buf, size_t n)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "events.out.tfevents.", 20)) {
			snprintf(buf, n, "%s/%s", dir, e->d_name);
			found++;
		}
	closedir(d);
	return found;
}

struct fix_counts {
	int total, version, graph, meta, session, summary, other;
	int histos, histos_ok;
	char first_version[64];
	int first_is_version;
};

/* Decode every event with our generated code; note values of tag at
 * steps s1 and s2. */
static void read_fixture(const char *path, struct fix_counts *c,
			 const char *tag, int64_t s1, float *v1, int64_t s2,
			 float *v2)
{
	struct tfk_rec_reader *r;
	struct tfk_rec rec;
	struct tfk_err err;
	size_t i, j;

	memset(c, 0, sizeof(*c));
	*v1 = *v2 = NAN;
	if (tfk_rec_open(&r, path, TFK_COMP_NONE, 0, &err)) {
		ok(0, "open %s: %s", path, err.msg);
		return;
	}
	while (tfk_rec_next(r, &rec, &err) == 1) {
		Tensorflow__Event *e = tensorflow__event__unpack(NULL, rec.len,
								 rec.data);

		if (!e) {
			c->other = -1000;
			break;
		}
		if (c->total == 0) {
			c->first_is_version = e->what_case ==
				TENSORFLOW__EVENT__WHAT_FILE_VERSION;
			if (c->first_is_version)
				snprintf(c->first_version,
					 sizeof(c->first_version), "%s",
					 e->file_version);
		}
		c->total++;
		switch (e->what_case) {
		case TENSORFLOW__EVENT__WHAT_FILE_VERSION:
			c->version++;
			break;
		case TENSORFLOW__EVENT__WHAT_GRAPH_DEF:
			c->graph++;
			break;
		case TENSORFLOW__EVENT__WHAT_META_GRAPH_DEF:
			c->meta++;
			break;
		case TENSORFLOW__EVENT__WHAT_SESSION_LOG:
			c->session++;
			break;
		case TENSORFLOW__EVENT__WHAT_SUMMARY:
			c->summary++;
			for (i = 0; i < e->summary->n_value; i++) {
				Tensorflow__Summary__Value *v =
					e->summary->value[i];

				if (v->value_case ==
				    TENSORFLOW__SUMMARY__VALUE__VALUE_SIMPLE_VALUE &&
				    !strcmp(v->tag, tag)) {
					if (e->step == s1)
						*v1 = v->simple_value;
					if (e->step == s2)
						*v2 = v->simple_value;
				}
				if (v->value_case ==
				    TENSORFLOW__SUMMARY__VALUE__VALUE_HISTO) {
					Tensorflow__HistogramProto *h =
						v->histo;
					double tot = 0;
					int sorted = 1;

					c->histos++;
					for (j = 0; j < h->n_bucket; j++)
						tot += h->bucket[j];
					for (j = 1; j < h->n_bucket_limit; j++)
						if (h->bucket_limit[j] <=
						    h->bucket_limit[j - 1])
							sorted = 0;
					if (h->n_bucket == h->n_bucket_limit &&
					    tot == h->num && sorted &&
					    h->min <= h->max)
						c->histos_ok++;
				}
			}
			break;
		default:
			c->other++;
		}
		tensorflow__event__free_unpacked(e, NULL);
	}
	tfk_rec_close(r);
}

static void tf_fixtures(void)
{
	char path[4096];
	struct fix_counts c;
	float a, b;

	ok(find_events(tap_fixture("events/tfx_estimator_chicago_taxi"), path,
		       sizeof(path)) == 1, "train fixture found");
	read_fixture(path, &c, "loss", 1, &a, 1000, &b);
	is_int(c.total, 28, "train fixture: 28 events (our Event decoder)");
	ok(c.first_is_version, "first event is the file version");
	is_str(c.first_version, "brain.Event:2", "file_version brain.Event:2");
	is_int(c.version, 1, "1 file_version event");
	is_int(c.graph, 2, "2 graph_def events (field 4)");
	is_int(c.meta, 2, "2 meta_graph_def events (field 9)");
	is_int(c.session, 4, "4 session_log events (field 7)");
	is_int(c.summary, 19, "19 summary events (field 5)");
	is_int(c.other, 0, "nothing else, nothing undecodable");
	ok(a == (float)0.4280262589454651,
	   "loss at step 1 = 0.4280262589454651 (simple_value, field 2): %.9g",
	   a);
	ok(c.histos > 0 && c.histos_ok == c.histos,
	   "%d histograms (field 5): sum(bucket) == num, limits increasing",
	   c.histos);

	ok(find_events(tap_fixture("events/tfx_estimator_chicago_taxi/"
				   "eval_chicago-taxi-eval"), path,
		       sizeof(path)) == 1, "eval fixture found");
	read_fixture(path, &c, "accuracy", 999, &a, 1000, &b);
	is_int(c.total, 7, "eval fixture: 7 events");
	ok(a == (float)0.7770000100135803 && b == (float)0.7773500084877014,
	   "accuracy 0.7770000100135803 at 999, 0.7773500084877014 at 1000");
	read_fixture(path, &c, "auc", 999, &a, 1000, &b);
	ok(a == (float)0.9139660000801086 && b == (float)0.9128482341766357,
	   "auc 0.9139660000801086 at 999, 0.9128482341766357 at 1000");
}

/* Deterministic floats spanning signs, zeros, tiny and big magnitudes. */
static void fill(float *x, int n, unsigned seed)
{
	int i;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		double u = ((seed >> 8) & 0xffff) / 65536.0 - 0.5;

		switch (i % 7) {
		case 0: x[i] = (float)u; break;
		case 1: x[i] = (float)(u * 1e-9); break;
		case 2: x[i] = 0.0f; break;
		case 3: x[i] = (float)(u * 1e6); break;
		case 4: x[i] = (float)(u * 3); break;
		case 5: x[i] = -1.0f; break;
		default: x[i] = (float)(u * 1e-13); break;	/* < 1e-12 */
		}
	}
}

static char *run_oracle(const char *file, const char *raw)
{
	char cmd[8192];
	const char *out = tap_tmp("events.txt");
	size_t n;

	snprintf(cmd, sizeof(cmd), "'%s' '%s' dump '%s' 'weights/w=%s' "
		 "'empty=%s' > '%s'", tap_python(),
		 tap_source("tests/py/events_check.py"), file, raw,
		 tap_tmp("empty.f32"), out);
	if (system(cmd))
		return NULL;
	return tap_read_file(out, &n);
}

static void our_file(void)
{
	struct tfk_events *ev;
	struct tfk_err err = { 0, "" };
	float x[1000];
	char *dir = tap_tmp("logs/run1/train"), *got;
	char want[2048], raw[4096];
	const struct tfk_hparam hp[] = {
		{ "optimizer", "adam", 0 },
		{ "learning_rate", NULL, 0.001 },
		{ "batch_size", NULL, 32 },
	};
	const double t0 = 1700000000.25;

	fill(x, 1000, 7);
	snprintf(raw, sizeof(raw), "%s", tap_tmp("w.f32"));
	tap_write_file(raw, x, sizeof(x));
	tap_write_file(tap_tmp("empty.f32"), "", 0);

	ok(!tfk_events_open(&ev, dir, t0, &err), "open in a new nested dir: "
	   "%s", err.msg);
	if (!ev)
		return;
	{
		char host[256], name[512];

		gethostname(host, sizeof(host));
		host[255] = 0;
		snprintf(name, sizeof(name), "%s/events.out.tfevents.1700000000"
			 ".%s", dir, host);
		is_str(tfk_events_path(ev), name, "named events.out.tfevents."
		       "<seconds>.<host>");
	}
	ok(!tfk_events_scalar(ev, t0 + 1, 1, "epoch_loss", 0.6931471805599453,
			      &err), "scalar");
	ok(!tfk_events_scalar(ev, t0 + 2, 2, "epoch_loss", 0.25, &err),
	   "scalar 2");
	ok(!tfk_events_scalar(ev, t0 + 2, 2, "epoch_accuracy", 0.875, &err),
	   "scalar 3");
	ok(!tfk_events_histogram(ev, t0 + 2, 2, "weights/w", x, 1000, &err),
	   "histogram of 1000 values: %s", err.msg);
	ok(!tfk_events_histogram(ev, t0 + 2, 2, "empty", x, 0, &err),
	   "histogram of nothing");
	ok(!tfk_events_hparams(ev, t0, hp, 3, &err), "hparams: %s", err.msg);
	ok(!tfk_events_flush(ev, &err), "flush");
	{
		float bad[3] = { 1, NAN, 2 };

		is_int(tfk_events_histogram(ev, t0, 3, "w", bad, 3, &err),
		       TFK_EINVAL, "a nan in a histogram is refused");
		is_str(err.msg, "w: nan in summary histogram", "message");
		bad[1] = -INFINITY;
		is_int(tfk_events_histogram(ev, t0, 3, "w", bad, 3, &err),
		       TFK_EINVAL, "and an inf");
	}
	{
		char *path = tfk_strdup(tfk_events_path(ev));

		ok(!tfk_events_close(ev, &err), "close");
		got = run_oracle(path, raw);
		ok(got != NULL, "python3-protobuf oracle ran");
		snprintf(want, sizeof(want),
			 "version brain.Event:2 writer=tfkit\n"
			 "scalar 1 epoch_loss 0.693147182\n"
			 "scalar 2 epoch_loss 0.25\n"
			 "scalar 2 epoch_accuracy 0.875\n"
			 "histo 2 weights/w num=1000 buckets=%s ok\n"
			 "histo 2 empty num=0 buckets=1 ok\n"
			 "hparams 0 _hparams_/session_start_info plugin=hparams "
			 "version=0 data=session_start_info group='' "
			 "start=1700000000.250 tensor=1/[0]/0 "
			 "batch_size=32,learning_rate=0.001,"
			 "optimizer='adam'\n", "*");
		/* the bucket count is whatever TF's algorithm gives: the
		 * oracle said "ok" after recomputing it; mask it here */
		if (got) {
			char *p = strstr(got, "num=1000 buckets=");

			if (p) {
				char *q = p + 17, *e = q;

				while (*e >= '0' && *e <= '9')
					e++;
				ok(e - q >= 2, "several buckets: %.*s",
				   (int)(e - q), q);
				memmove(q + 1, e, strlen(e) + 1);
				*q = '*';
			}
		}
		is_str(got, want, "decoded by python3-protobuf, histograms == "
		       "numpy recomputation of TF's histogram.cc");
		free(got);
		tfk_free(path);
	}
}

static void errors(void)
{
	struct tfk_events *a, *b, *c;
	struct tfk_err err = { 0, "" };
	char *dir = tap_tmp("same");
	char file[4096];

	ok(!tfk_events_open(&a, dir, 1234.5, &err), "open a");
	ok(!tfk_events_open(&b, dir, 1234.9, &err), "open b, same second");
	ok(a && b && strcmp(tfk_events_path(a), tfk_events_path(b)),
	   "distinct names");
	ok(b && strlen(tfk_events_path(b)) > 2 &&
	   !strcmp(tfk_events_path(b) + strlen(tfk_events_path(b)) - 2, ".1"),
	   "the second gets .1: %s", b ? tfk_events_path(b) : "");
	tfk_events_close(a, &err);
	tfk_events_close(b, &err);
	ok(!tfk_events_close(NULL, &err), "close NULL");

	snprintf(file, sizeof(file), "%s", tap_tmp("plainfile"));
	tap_write_file(file, "x", 1);
	is_int(tfk_events_open(&c, file, 1, &err), TFK_EIO,
	       "a regular file as the directory");
	ok(c == NULL && strstr(err.msg, "plainfile"), "names it: %s",
	   err.msg);
	{
		char sub[4200];

		snprintf(sub, sizeof(sub), "%s/under", file);
		is_int(tfk_events_open(&c, sub, 1, &err), TFK_EIO,
		       "a directory under a regular file");
	}
	is_int(tfk_events_open(&c, "", 1, &err), TFK_EINVAL, "empty name");

	/* every allocation failing in turn: ENOMEM, nothing leaked, no
	 * file left behind */
	{
		long k;
		int nomem = 0, done = 0;
		char *d2 = tap_tmp("alloc");

		for (k = 0; k < 20 && !done; k++) {
			float x[4] = { 1, 2, 3, 4 };
			const struct tfk_hparam hp[1] = { { "a", NULL, 1 } };
			int rc;

			tfk_alloc_fail_after(k);
			rc = tfk_events_open(&c, d2, 5, &err);
			if (!rc) {
				rc = tfk_events_histogram(c, 5, 1, "h", x, 4,
							  &err);
				if (!rc)
					rc = tfk_events_hparams(c, 5, hp, 1,
								&err);
				tfk_events_close(c, &err);
				if (!rc)
					done = 1;
			}
			if (rc == TFK_ENOMEM)
				nomem++;
			tfk_alloc_fail_after(-1);
		}
		ok(done && nomem > 3, "%d allocation failures each gave "
		   "ENOMEM, then success", nomem);
	}
}

/* The reader on our own files: runs found under a logdir, scalars
 * back as the float32 written, histograms whole, failed allocations. */
static void reader(void)
{
	struct tfk_events *ev;
	struct tfk_ev_file *f = NULL;
	struct tfk_evr *r;
	struct tfk_ev_event e;
	struct tfk_err err = { 0, "" };
	char *top = tap_tmp("rlogs"), dir[4096];
	float x[5] = { -2, 0, 0.5f, 1, 3 };
	size_t n = 0, i, k;
	int rc, n_ev = 0, n_sc = 0, histo_ok = 0;
	double sc[2] = { 0, 0 };

	snprintf(dir, sizeof(dir), "%s/validation", top);
	ok(!tfk_events_open(&ev, dir, 100, &err), "write validation");
	tfk_events_scalar(ev, 101, 0, "epoch_loss", 0.5, &err);
	tfk_events_close(ev, &err);
	snprintf(dir, sizeof(dir), "%s/train", top);
	ok(!tfk_events_open(&ev, dir, 100, &err), "write train");
	tfk_events_scalar(ev, 101, 0, "epoch_loss", 0.6931471805599453, &err);
	tfk_events_scalar(ev, 102, 1, "epoch_loss", 0.1, &err);
	tfk_events_histogram(ev, 102, 1, "w", x, 5, &err);
	ok(!tfk_events_close(ev, &err), "close train");

	ok(!tfk_ev_files_find(top, &f, &n, &err), "find: %s", err.msg);
	ok(n == 2 && !strcmp(f[0].run, "train") &&
	   !strcmp(f[1].run, "validation"), "runs train, validation (%zu)",
	   n);
	{
		struct tfk_ev_file *g;
		size_t m;

		is_int(tfk_ev_files_find(tap_tmp("nosuch"), &g, &m, &err),
		       TFK_EIO, "a missing logdir");
		ok(!g && !m && strstr(err.msg, "nosuch"), "names it: %s",
		   err.msg);
	}
	ok(!tfk_evr_open(&r, f[0].path, &err), "open %s", f[0].path);
	while ((rc = tfk_evr_next(r, &e, &err)) == 1) {
		if (n_ev++ == 0)
			ok(e.file_version &&
			   !strcmp(e.file_version, "brain.Event:2"),
			   "first event: the file version");
		for (i = 0; i < e.n_value; i++) {
			const struct tfk_ev_value *v = &e.value[i];
			double sum = 0;

			if (v->kind == TFK_EVK_SCALAR && n_sc < 2 && v->f32)
				sc[n_sc++] = v->value;
			if (v->kind != TFK_EVK_HISTO)
				continue;
			for (k = 0; k < v->histo.n_bucket; k++)
				sum += v->histo.count[k];
			histo_ok = e.step == 1 && v->histo.num == 5 &&
				sum == 5 && v->histo.min == -2 &&
				v->histo.max == 3 && !strcmp(v->tag, "w");
		}
	}
	is_int(rc, 0, "clean end");
	is_int(n_ev, 4, "4 events");
	ok(sc[0] == (float)0.6931471805599453 && sc[1] == (float)0.1,
	   "scalars are the float32s written");
	ok(histo_ok, "the histogram: num 5, counts sum to 5, min -2, max 3");
	tfk_evr_close(r);
	tfk_evr_close(NULL);

	{
		long j;
		int nomem = 0, done = 0;

		for (j = 0; j < 40 && !done; j++) {
			tfk_alloc_fail_after(j);
			rc = tfk_evr_open(&r, f[0].path, &err);
			if (!rc) {
				while ((rc = tfk_evr_next(r, &e, &err)) == 1)
					;
				tfk_evr_close(r);
			}
			tfk_alloc_fail_after(-1);
			if (rc == TFK_ENOMEM)
				nomem++;
			else if (!rc)
				done = 1;
		}
		ok(done && nomem > 2, "reader: %d allocation failures each "
		   "gave ENOMEM, then success", nomem);
	}
	tfk_ev_files_free(f, n);
}

/* Percentiles by hand, as TensorBoard's compress_histogram computes them:
 * the mass crosses q * total inside a bucket, interpolated from its
 * left edge (the previous limit, or min) to its limit clipped to max. */
static void quantiles(void)
{
	static const double lim[3] = { 0, 10, 20 }, cnt[3] = { 2, 6, 2 };
	static const double lim2[2] = { 1, 2 }, cnt2[2] = { 0, 4 };
	struct tfk_ev_histo h = { -4, 15, 10, 0, 0, 3, lim, cnt };
	struct tfk_ev_histo e = { 0, 0, 0, 0, 0, 0, NULL, NULL };
	struct tfk_ev_histo z = { 1.5, 2, 4, 0, 0, 2, lim2, cnt2 };

	ok(isnan(tfk_ev_histo_quantile(&e, 0.5)), "empty: NaN");
	ok(tfk_ev_histo_quantile(&h, 0) == -4, "q 0: min");
	ok(tfk_ev_histo_quantile(&h, 0.1) == -2, "q 0.1: half the first "
	   "bucket (-4 to 0): -2");
	ok(tfk_ev_histo_quantile(&h, 0.5) == 5, "q 0.5: 3 of 6 into 0..10");
	ok(tfk_ev_histo_quantile(&h, 0.9) == 12.5, "q 0.9: half of 10..15 "
	   "(the last limit clipped to max)");
	ok(tfk_ev_histo_quantile(&h, 1) == 15, "q 1: max");
	ok(tfk_ev_histo_quantile(&z, 0.5) == 1.75, "after an empty bucket "
	   "the left edge is min (1.5), not the empty bucket's limit");
}

/* Protobuf fields for the scanner's payloads. */
static void key(struct tfk_buf *b, int f, int t)
{
	tfk_buf_add_varint(b, (uint64_t)(f << 3 | t));
}

static void ld(struct tfk_buf *b, int f, const struct tfk_buf *sub)
{
	key(b, f, 2);
	tfk_buf_add_varint(b, sub->len);
	tfk_buf_add(b, sub->data, sub->len);
}

static void ld_str(struct tfk_buf *b, int f, const char *s, size_t n)
{
	key(b, f, 2);
	tfk_buf_add_varint(b, n);
	tfk_buf_add(b, s, n);
}

static void fix64(struct tfk_buf *b, int f, double v)
{
	key(b, f, 1);
	tfk_buf_add(b, &v, 8);
}

static void fix32(struct tfk_buf *b, int f, float v)
{
	key(b, f, 5);
	tfk_buf_add(b, &v, 4);
}

static void vint(struct tfk_buf *b, int f, uint64_t v)
{
	key(b, f, 0);
	tfk_buf_add_varint(b, v);
}

/* An Event {wall_time, step, summary {value {VALUE}}} with VALUE's
 * bytes given. */
static void event_of(struct tfk_buf *ev, double wall, int64_t step,
		     const struct tfk_buf *val)
{
	struct tfk_buf sum;

	tfk_buf_init(&sum);
	ld(&sum, 1, val);
	tfk_buf_reset(ev);
	fix64(ev, 1, wall);
	vint(ev, 2, (uint64_t)step);
	ld(ev, 5, &sum);
	tfk_buf_release(&sum);
}

/* A Value {tag, metadata {plugin_data {plugin_name}}, tensor {dtype,
 * shape {}, VALS}}: plugin NULL for none. */
static void tensor_value(struct tfk_buf *v, const char *tag,
			 const char *plugin, size_t plugin_len,
			 const struct tfk_buf *tensor)
{
	struct tfk_buf pd, md;

	tfk_buf_init(&pd);
	tfk_buf_init(&md);
	tfk_buf_reset(v);
	ld_str(v, 1, tag, strlen(tag));
	if (plugin) {
		ld_str(&pd, 1, plugin, plugin_len);
		ld(&md, 1, &pd);
		vint(&md, 4, 1);
		ld(v, 9, &md);
	}
	ld(v, 8, tensor);
	tfk_buf_release(&pd);
	tfk_buf_release(&md);
}

/* Every payload of the list through both decodes: the same results. */
static void scan_agrees(void)
{
	const char *path = tap_tmp("events.out.tfevents.scan");
	struct tfk_buf ev, v, t, x;
	struct tfk_rec_writer *w;
	struct tfk_evr *a, *b;
	struct tfk_ev_event ea, eb;
	struct tfk_err err, err_b;
	float two[2] = { 1, 2 };
	int n = 0, same = 1, rc, rb, i, n_ev = 0, n_err = 0;
	size_t k;

	tfk_buf_init(&ev);
	tfk_buf_init(&v);
	tfk_buf_init(&t);
	tfk_buf_init(&x);
	if (tfk_recw_open(&w, path, TFK_COMP_NONE, &err)) {
		ok(0, "scanner: %s", err.msg);
		return;
	}
#define PUT() (tfk_recw_write(w, ev.data, ev.len, &err), n++)
	/* the plain TF1 scalar, and a file_version event */
	tfk_buf_reset(&v);
	ld_str(&v, 1, "loss", 4);
	fix32(&v, 2, 0.25f);
	event_of(&ev, 1.7e9, 3, &v);
	PUT();
	tfk_buf_reset(&ev);
	fix64(&ev, 1, 1.7e9);
	ld_str(&ev, 3, "brain.Event:2", 13);
	PUT();
	/* file_version after a summary, and a summary after it: a oneof */
	event_of(&ev, 1.5, 4, &v);
	ld_str(&ev, 3, "late", 4);
	PUT();
	tfk_buf_reset(&x);
	ld_str(&x, 3, "early", 5);
	event_of(&ev, 1.5, 4, &v);
	tfk_buf_add(&x, ev.data, ev.len);
	tfk_buf_reset(&ev);
	tfk_buf_add(&ev, x.data, x.len);
	PUT();
	/* wall_time and step twice (the last counts), summary twice
	 * (merged) */
	event_of(&ev, 2.5, 5, &v);
	fix64(&ev, 1, 3.5);
	vint(&ev, 2, 6);
	PUT();
	event_of(&ev, 2.5, 5, &v);
	tfk_buf_reset(&x);
	ld(&x, 1, &v);
	ld(&ev, 5, &x);
	PUT();
	/* a negative step (ten bytes), an eleven-byte varint */
	event_of(&ev, 2.5, -7, &v);
	PUT();
	tfk_buf_reset(&ev);
	key(&ev, 2, 0);
	tfk_buf_add(&ev, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 10);
	PUT();
	tfk_buf_reset(&ev);
	key(&ev, 2, 0);
	tfk_buf_add(&ev, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
	PUT();
	/* other wire types: wall_time as a varint, simple_value as fixed64 */
	tfk_buf_reset(&ev);
	vint(&ev, 1, 5);
	PUT();
	tfk_buf_reset(&x);
	ld_str(&x, 1, "loss", 4);
	fix64(&x, 2, 0.5);
	event_of(&ev, 1, 1, &x);
	PUT();
	/* a tag twice, simple_value and a tensor together, a node_name */
	tfk_buf_reset(&x);
	ld_str(&x, 1, "a", 1);
	ld_str(&x, 1, "b", 1);
	fix32(&x, 2, 1.5f);
	event_of(&ev, 1, 1, &x);
	PUT();
	tfk_buf_reset(&t);
	vint(&t, 1, 1);
	ld_str(&t, 2, "", 0);
	ld_str(&t, 5, (const char *)two, 4);
	tfk_buf_reset(&x);
	ld_str(&x, 1, "both", 4);
	fix32(&x, 2, 1.5f);
	ld(&x, 8, &t);
	event_of(&ev, 1, 1, &x);
	PUT();
	tfk_buf_reset(&x);
	ld_str(&x, 1, "node", 4);
	ld_str(&x, 7, "n", 1);
	fix32(&x, 2, 1.5f);
	event_of(&ev, 1, 1, &x);
	PUT();
	/* a key written in two bytes, a length in five */
	tfk_buf_reset(&ev);
	tfk_buf_add(&ev, "\x89\x00", 2);
	tfk_buf_add(&ev, "\0\0\0\0\0\0\xf0\x3f", 8);
	PUT();
	tfk_buf_reset(&ev);
	tfk_buf_add(&ev, "\x1a\x82\x80\x80\x80\x00hi", 8);
	PUT();
	tfk_buf_reset(&ev);
	tfk_buf_add(&ev, "\x1a\x82\x80\x80\x80\x10hi", 8);
	PUT();
	/* cut short: a fixed64, a length */
	tfk_buf_reset(&ev);
	tfk_buf_add(&ev, "\x09\0\0\0", 4);
	PUT();
	tfk_buf_reset(&ev);
	tfk_buf_add(&ev, "\x2a\x05\x0a", 3);
	PUT();
	/* fields the scanner leaves alone: source_metadata, Summary 2,
	 * field 0, a group */
	event_of(&ev, 1, 1, &v);
	ld_str(&ev, 10, "\x0a\x01w", 3);
	PUT();
	tfk_buf_reset(&ev);
	tfk_buf_add(&ev, "\x2a\x02\x12\x00", 4);
	PUT();
	tfk_buf_reset(&ev);
	tfk_buf_add(&ev, "\x00\x00", 2);
	PUT();
	tfk_buf_reset(&ev);
	tfk_buf_add(&ev, "\x0b\x0c", 2);
	PUT();
	/* TF2 tensors: with "scalars", later without metadata, with
	 * content, double, an unknown plugin, "scalars" with a NUL after */
	tensor_value(&x, "epoch_loss", "scalars", 7, &t);
	event_of(&ev, 1, 1, &x);
	PUT();
	tensor_value(&x, "epoch_loss", NULL, 0, &t);
	event_of(&ev, 1, 2, &x);
	PUT();
	tensor_value(&x, "never", NULL, 0, &t);
	event_of(&ev, 1, 2, &x);
	PUT();
	tensor_value(&x, "other", "custom", 6, &t);
	event_of(&ev, 1, 2, &x);
	PUT();
	tensor_value(&x, "nul", "scalars\0x", 9, &t);
	event_of(&ev, 1, 2, &x);
	PUT();
	tensor_value(&x, "nul", NULL, 0, &t);
	event_of(&ev, 1, 3, &x);
	PUT();
	for (i = 0; i < 8; i++) {
		/* 0 float content, 1 double_val, 2 double content, 3 float
		 * unpacked, 4 packed length 6, 5 float with double_val, 6
		 * content of 3 bytes, 7 shape [2] */
		double d = 0.1;

		tfk_buf_reset(&t);
		vint(&t, 1, i == 1 || i == 2 ? 2 : 1);
		ld_str(&t, 2, "", 0);
		if (i == 0)
			ld_str(&t, 4, (const char *)two, 4);
		if (i == 1 || i == 5)
			ld_str(&t, 6, (const char *)&d, 8);
		if (i == 2)
			ld_str(&t, 4, (const char *)&d, 8);
		if (i == 3)
			fix32(&t, 5, 2.5f);
		if (i == 4)
			ld_str(&t, 5, (const char *)two, 6);
		if (i == 6)
			ld_str(&t, 4, (const char *)two, 3);
		if (i == 7) {
			tfk_buf_reset(&t);
			vint(&t, 1, 1);
			ld_str(&t, 2, "\x12\x02\x08\x02", 4);
			ld_str(&t, 5, (const char *)two, 8);
		}
		tensor_value(&x, "epoch_loss", "scalars", 7, &t);
		event_of(&ev, 1, 10 + i, &x);
		PUT();
	}
	/* a tag not UTF-8, a tag with a NUL, 65 values in one summary */
	tfk_buf_reset(&x);
	ld_str(&x, 1, "\xff\xfe", 2);
	fix32(&x, 2, 1);
	event_of(&ev, 1, 1, &x);
	PUT();
	tfk_buf_reset(&x);
	ld_str(&x, 1, "a\0b", 3);
	fix32(&x, 2, 1);
	event_of(&ev, 1, 1, &x);
	PUT();
	tfk_buf_reset(&x);
	for (i = 0; i < 65; i++)
		ld(&x, 1, &v);
	tfk_buf_reset(&ev);
	ld(&ev, 5, &x);
	PUT();
	/* nothing at all: every field its default */
	tfk_buf_reset(&ev);
	PUT();
#undef PUT
	if (tfk_recw_close(w, &err)) {
		ok(0, "scanner: %s", err.msg);
		return;
	}
	if (tfk_evr_open(&a, path, &err) || tfk_evr_open(&b, path, &err)) {
		ok(0, "scanner: %s", err.msg);
		return;
	}
	tfk_evr_set_scan(b, 0);
	for (i = 0; i < n + 1; i++) {
		rc = tfk_evr_next(a, &ea, &err);
		rb = tfk_evr_next(b, &eb, &err_b);
		if (rc != rb || (rc < 0 && strcmp(err.msg, err_b.msg))) {
			tap_diag("record %d: %d against protobuf-c's %d", i, rc,
				 rb);
			same = 0;
			continue;
		}
		if (rc < 0) {
			n_err++;
			continue;
		}
		if (rc == 0)
			break;
		n_ev++;
		if (memcmp(&ea.wall_time, &eb.wall_time, 8) ||
		    ea.step != eb.step || ea.is_summary != eb.is_summary ||
		    ea.n_value != eb.n_value ||
		    !ea.file_version != !eb.file_version ||
		    (ea.file_version && strcmp(ea.file_version,
					       eb.file_version))) {
			tap_diag("record %d: the events differ", i);
			same = 0;
			continue;
		}
		for (k = 0; k < ea.n_value; k++) {
			const struct tfk_ev_value *p = &ea.value[k];
			const struct tfk_ev_value *q = &eb.value[k];

			if (strcmp(p->tag, q->tag) || p->kind != q->kind ||
			    (p->kind == TFK_EVK_SCALAR &&
			     (memcmp(&p->value, &q->value, 8) ||
			      p->f32 != q->f32))) {
				tap_diag("record %d value %zu: %s %s %.9g "
					 "against %s %s %.9g", i, k, p->tag,
					 tfk_evk_name(p->kind), p->value,
					 q->tag, tfk_evk_name(q->kind),
					 q->value);
				same = 0;
			}
		}
	}
	ok(same, "the wire scanner agrees with protobuf-c on %d payloads "
	   "(%d events, %d wire errors)", n, n_ev, n_err);
	is_int(n_ev + n_err, n, "each payload one event or one error");
	tfk_evr_close(a);
	tfk_evr_close(b);
	tfk_buf_release(&ev);
	tfk_buf_release(&v);
	tfk_buf_release(&t);
	tfk_buf_release(&x);
}

int main(void)
{
	quantiles();
	tf_fixtures();
	our_file();
	errors();
	reader();
	scan_agrees();
	return tap_done();
}
