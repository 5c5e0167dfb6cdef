/*
 * t-profile.c - the trace recorder (util/profile.h) and its two
 * writers (format/xplane.h decoded back with protobuf-c, format/trace.h
 * parsed with jansson): nothing recorded when off or paused, names
 * copied, per-thread buffers from several threads at once, the event
 * cap, memory accounting (in use, peak, the op at the peak), and the
 * files' layout.
 */
#include "tap.h"

#include "format/trace.h"
#include "format/xplane.h"
#include "util/err.h"
#include "util/profile.h"

#include "formats/xplane.pb-c.h"

#include <dirent.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_THREADS 4
#define N_SPANS 1000

static void *record(void *arg)
{
	long id = (long)arg;
	char name[32];

	snprintf(name, sizeof(name), "worker%ld", id);
	tfk_prof_thread_name(name);
	for (int i = 0; i < N_SPANS; i++) {
		uint64_t t0 = tfk_prof_now();

		tfk_prof_mem(1, 100, "op", 1, "[25]");
		tfk_prof_span(name, "Work", t0, tfk_prof_now(), -1);
		tfk_prof_mem(0, 100, "op", 1, "[25]");
	}
	return NULL;
}

static const struct tfk_prof_thread *find_thread(const char *name)
{
	for (int i = 0; i < tfk_prof_n_threads(); i++)
		if (!strcmp(tfk_prof_thread(i)->name, name))
			return tfk_prof_thread(i);
	return NULL;
}

static void test_recorder(void)
{
	struct tfk_err err;
	pthread_t th[N_THREADS];
	const struct tfk_prof_thread *t;
	const char *op;
	char buf[32];
	int all = 1;

	tfk_err_clear(&err);
	tfk_prof_span("early", NULL, 0, 1, -1);
	is_int(tfk_prof_n_threads(), 0, "nothing recorded before start");
	is_int(tfk_prof_start(0, &err), 0, "start");
	tfk_prof_span("armed", NULL, 0, 1, -1);
	is_int(tfk_prof_n_threads(), 0, "armed, not recording: nothing");
	tfk_prof_record(1);
	tfk_prof_thread_name("main");
	strcpy(buf, "step");
	tfk_prof_span(buf, NULL, 5, 9, 3);
	strcpy(buf, "XXXX");
	tfk_prof_record(0);
	tfk_prof_span("paused", NULL, 0, 1, -1);
	t = find_thread("main");
	ok(t && t->n_ev == 1 && !strcmp(t->str + t->ev[0].name, "step") &&
	   t->ev[0].step == 3 && t->ev[0].start == 5 && t->ev[0].dur == 4 &&
	   !t->ev[0].typed, "one span, its name copied, step and times kept");

	tfk_prof_record(1);
	for (long i = 0; i < N_THREADS; i++)
		pthread_create(&th[i], NULL, record, (void *)i);
	for (int i = 0; i < N_THREADS; i++)
		pthread_join(th[i], NULL);
	tfk_prof_stop();
	is_int(tfk_prof_n_threads(), N_THREADS + 1, "a buffer per thread");
	for (long i = 0; i < N_THREADS; i++) {
		char name[32], want[40];

		snprintf(name, sizeof(name), "worker%ld", i);
		snprintf(want, sizeof(want), "%s:Work", name);
		t = find_thread(name);
		if (!t || t->n_ev != 3 * N_SPANS)
			all = 0;
		for (size_t j = 0; t && j < t->n_ev; j++)
			if ((t->ev[j].kind == TFK_PROF_SPAN &&
			     (strcmp(t->str + t->ev[j].name, want) ||
			      !t->ev[j].typed)) ||
			    (t->ev[j].kind == TFK_PROF_ALLOC &&
			     (strcmp(t->str + t->ev[j].op, "op") ||
			      strcmp(t->str + t->ev[j].shape, "[25]") ||
			      t->ev[j].bytes != 100)))
				all = 0;
	}
	ok(all, "each thread's events in its own buffer, whole");
	ok(tfk_prof_peak(&op) >= 100 && tfk_prof_peak(NULL) <= 100 * N_THREADS,
	   "peak between one tensor and one per thread (%lld)",
	   (long long)tfk_prof_peak(NULL));
	is_str(op, "op", "the op at the peak");
	is_int((long long)tfk_prof_dropped(), 0, "nothing dropped");
	tfk_prof_free();
	is_int(tfk_prof_n_threads(), 0, "freed");

	tfk_prof_start(10, &err);
	tfk_prof_record(1);
	for (int i = 0; i < 25; i++)
		tfk_prof_span("x", NULL, 0, 1, -1);
	tfk_prof_stop();
	ok(tfk_prof_n_threads() == 1 && tfk_prof_thread(0)->n_ev == 10,
	   "the cap keeps 10 events");
	is_int((long long)tfk_prof_dropped(), 15, "and counts 15 dropped");
	tfk_prof_free();
}

/* A small profile, written by both writers. */
static void record_sample(void)
{
	struct tfk_err err;
	uint64_t t0;

	tfk_prof_start(0, &err);
	tfk_prof_record(1);
	tfk_prof_thread_name("main");
	tfk_prof_set_step(1);
	t0 = tfk_prof_now();
	tfk_prof_span("IteratorGetNext", "IteratorGetNext", t0, t0 + 10, -1);
	tfk_prof_mem(1, 4096, "dense/MatMul", 1, "[32, 32]");
	tfk_prof_span("dense/MatMul", "MatMul", t0 + 10, t0 + 90, -1);
	tfk_prof_mem(0, 4096, "dense/MatMul", 1, "[32, 32]");
	tfk_prof_span("train", NULL, t0, t0 + 100, 1);
	tfk_prof_stop();
}

static const char *md_name(const Tensorflow__Profiler__XPlane *p, int64_t id)
{
	for (size_t i = 0; i < p->n_event_metadata; i++)
		if (p->event_metadata[i]->key == id)
			return p->event_metadata[i]->value->name;
	return NULL;
}

static const char *stat_name(const Tensorflow__Profiler__XPlane *p,
			     int64_t id)
{
	for (size_t i = 0; i < p->n_stat_metadata; i++)
		if (p->stat_metadata[i]->key == id)
			return p->stat_metadata[i]->value->name;
	return NULL;
}

static void test_xplane(void)
{
	struct tfk_xplane *xp;
	struct tfk_err err;
	Tensorflow__Profiler__XSpace *xs;
	const Tensorflow__Profiler__XPlane *h;
	char path[4200], dir[4200];
	uint8_t *bytes;
	size_t n;
	int found_mem = 0, marker = 0;
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s", tap_tmp("logs"));
	tfk_err_clear(&err);
	is_int(tfk_xplane_open(&xp, dir, &err), 0, "xplane open");
	snprintf(path, sizeof(path), "%s", tfk_xplane_path(xp));
	ok(strstr(path, "/plugins/profile/") &&
	   !strcmp(path + strlen(path) - 10, ".xplane.pb"),
	   "path DIR/plugins/profile/RUN/HOST.xplane.pb: %s", path);
	record_sample();
	is_int(tfk_xplane_close(xp, &err), 0, "xplane written %s", err.msg);
	bytes = tap_read_file(path, &n);
	xs = bytes ? tensorflow__profiler__xspace__unpack(NULL, n, bytes) :
		NULL;
	ok(xs && xs->n_planes == 2 && !strcmp(xs->planes[0]->name,
					      "/host:CPU") &&
	   !strcmp(xs->planes[1]->name, "Task Environment") &&
	   xs->n_hostnames == 1, "an XSpace: /host:CPU, Task Environment");
	if (!xs) {
		free(bytes);
		return;
	}
	h = xs->planes[0];
	ok(h->n_lines == 2 && !strcmp(h->lines[0]->name, "main") &&
	   !strcmp(h->lines[1]->name, "Steps") && h->lines[1]->n_events == 1 &&
	   !strcmp(md_name(h, h->lines[1]->events[0]->metadata_id), "1"),
	   "lines main and Steps (step 1)");
	/* sorted by start, the enclosing step first */
	ok(h->lines[0]->n_events == 5 &&
	   !strcmp(md_name(h, h->lines[0]->events[0]->metadata_id), "train") &&
	   !strcmp(md_name(h, h->lines[0]->events[1]->metadata_id),
		   "IteratorGetNext:IteratorGetNext") &&
	   h->lines[0]->events[0]->duration_ps == 100000 &&
	   h->lines[0]->events[2]->offset_ps -
	   h->lines[0]->events[0]->offset_ps >= 0,
	   "main's events by start, times in ps");
	for (size_t i = 0; i < h->lines[0]->n_events; i++) {
		const Tensorflow__Profiler__XEvent *e = h->lines[0]->events[i];

		if (strcmp(md_name(h, e->metadata_id), "MemoryAllocation"))
			continue;
		for (size_t k = 0; k < e->n_stats; k++) {
			const char *sn = stat_name(h, e->stats[k]->metadata_id);

			found_mem += !strcmp(sn, "requested_bytes") &&
				e->stats[k]->int64_value == 4096;
			found_mem += !strcmp(sn, "tf_op") &&
				!strcmp(e->stats[k]->str_value,
					"dense/MatMul");
			found_mem += !strcmp(sn, "step_num") &&
				e->stats[k]->int64_value == 1;
			found_mem += !strcmp(sn, "shape") &&
				!strcmp(e->stats[k]->str_value, "[32, 32]");
		}
	}
	is_int(found_mem, 4, "the allocation's bytes, op, step and shape");
	tensorflow__profiler__xspace__free_unpacked(xs, NULL);
	free(bytes);
	d = opendir(dir);
	while (d && (de = readdir(d)))
		marker += strstr(de->d_name, ".profile-empty") != NULL;
	if (d)
		closedir(d);
	is_int(marker, 1, "the .profile-empty marker");
	tfk_prof_free();

	/* an unwritable directory fails at open */
	snprintf(path, sizeof(path), "%s/afile", tap_tmpdir());
	tap_write_file(path, "x", 1);
	snprintf(dir, sizeof(dir), "%s/afile/logs", tap_tmpdir());
	ok(tfk_xplane_open(&xp, dir, &err) == TFK_EIO &&
	   strstr(err.msg, "--profile") && !xp,
	   "under a file: TFK_EIO at open (%s)", err.msg);
}

static void test_trace(void)
{
	struct tfk_trace *tr;
	struct tfk_err err;
	json_error_t je;
	json_t *j, *ev, *e;
	size_t i;
	int x = 0, c = 0, m = 0, op = 0;
	const char *path = tap_tmp("t.json");

	tfk_err_clear(&err);
	is_int(tfk_trace_open(&tr, path, &err), 0, "trace open");
	record_sample();
	is_int(tfk_trace_close(tr, "t-profile", &err), 0, "trace written");
	j = json_load_file(path, 0, &je);
	ev = json_object_get(j, "traceEvents");
	ok(json_is_array(ev), "JSON with traceEvents (%s)", je.text);
	json_array_foreach(ev, i, e) {
		const char *ph = json_string_value(json_object_get(e, "ph"));

		x += !strcmp(ph, "X");
		c += !strcmp(ph, "C");
		m += !strcmp(ph, "M");
		op += !strcmp(ph, "X") && !strcmp(json_string_value(
			json_object_get(e, "name")), "dense/MatMul") &&
			!strcmp(json_string_value(json_object_get(
			json_object_get(e, "args"), "type")), "MatMul") &&
			json_real_value(json_object_get(e, "dur")) == 0.08;
	}
	ok(x == 3 && c == 2 && m == 2 && op == 1,
	   "3 X, 2 C, 2 M events; the op split into name and type, dur in "
	   "us (%d %d %d %d)", x, c, m, op);
	json_decref(j);
	tfk_prof_free();
}

int main(void)
{
	test_recorder();
	test_xplane();
	test_trace();
	tap_rm_tmpdir();
	return tap_done();
}
