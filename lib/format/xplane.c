/*
 * xplane.c - write the recorder's events as an XSpace (see xplane.h).
 *
 * The XSpace is built as protobuf-c structs over arrays allocated once
 * per kind (events, stats, pointers), sized by a first pass over the
 * recorder, and packed in one go: a profile of a few steps is some
 * hundred thousand events, tens of megabytes at most. Strings are not
 * copied: the structs point into the recorder's buffers. Event names
 * are interned in a small open-addressing table, one metadata entry
 * per distinct name, as TensorFlow's XPlaneBuilder does.
 */
#include "format/xplane.h"
#include "io/out.h"
#include "io/record.h"
#include "util/alloc.h"
#include "util/profile.h"

#include "formats/event.pb-c.h"
#include "formats/xplane.pb-c.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef Tensorflow__Profiler__XSpace XSpace;
typedef Tensorflow__Profiler__XPlane XPlane;
typedef Tensorflow__Profiler__XLine XLine;
typedef Tensorflow__Profiler__XEvent XEvent;
typedef Tensorflow__Profiler__XStat XStat;
typedef Tensorflow__Profiler__XEventMetadata XEventMetadata;
typedef Tensorflow__Profiler__XStatMetadata XStatMetadata;
typedef Tensorflow__Profiler__XPlane__EventMetadataEntry EventEntry;
typedef Tensorflow__Profiler__XPlane__StatMetadataEntry StatEntry;

struct tfk_xplane {
	char *dir;
	char *path;
	char host[256];
	struct tfk_out *out;
};

/* Stat ids: the names the Profile plugin's converters look up. */
enum {
	S_STEP_NUM = 1, S_ROOT, S_ALLOCATOR, S_BYTES_ALLOCATED,
	S_BYTES_AVAILABLE, S_PEAK, S_REQUESTED, S_ALLOCATION, S_TF_OP,
	S_REGION, S_DATA_TYPE, S_SHAPE, S_START, S_STOP, N_STAT
};
static const char *const stat_names[N_STAT] = {
	NULL, "step_num", "_r", "allocator_name", "bytes_allocated",
	"bytes_available", "peak_bytes_in_use", "requested_bytes",
	"allocation_bytes", "tf_op", "region_type", "data_type", "shape",
	"profile_start_time", "profile_stop_time"
};
#define MEM_STATS 11		/* stats of a memory event */

void tfk_xplane_discard(struct tfk_xplane *xp)
{
	if (!xp)
		return;
	tfk_out_discard(xp->out);
	tfk_free(xp->dir);
	tfk_free(xp->path);
	tfk_free(xp);
}

int tfk_xplane_open(struct tfk_xplane **xpp, const char *dir,
		    struct tfk_err *err)
{
	struct tfk_xplane *xp;
	char run[32], *sub;
	time_t now = time(NULL);
	struct tm tm;
	size_t n;
	int rc;

	*xpp = NULL;
	xp = tfk_calloc(1, sizeof(*xp));
	if (!xp)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (gethostname(xp->host, sizeof(xp->host)) || !xp->host[0])
		snprintf(xp->host, sizeof(xp->host), "localhost");
	xp->host[sizeof(xp->host) - 1] = 0;
	localtime_r(&now, &tm);
	strftime(run, sizeof(run), "%Y_%m_%d_%H_%M_%S", &tm);
	n = strlen(dir) + strlen(xp->host) + 64;
	xp->dir = tfk_strdup(dir);
	sub = tfk_malloc(n);
	xp->path = tfk_malloc(n);
	if (!xp->dir || !sub || !xp->path) {
		tfk_free(sub);
		tfk_xplane_discard(xp);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	snprintf(sub, n, "%s/plugins/profile/%s", dir, run);
	snprintf(xp->path, n, "%s/%s.xplane.pb", sub, xp->host);
	rc = tfk_mkdirs(sub, err);
	tfk_free(sub);
	if (!rc)
		rc = tfk_out_open(&xp->out, xp->path, TFK_COMP_NONE, err);
	if (rc) {
		tfk_err_prefix(err, "--profile %s", dir);
		tfk_xplane_discard(xp);
		return rc;
	}
	*xpp = xp;
	return 0;
}

const char *tfk_xplane_path(const struct tfk_xplane *xp)
{
	return xp->path;
}

/* Interned event names ------------------------------------------------ */

struct names {
	const char **key;	/* slot -> name or NULL */
	int64_t *id;
	size_t cap, n;
	EventEntry *entries;	/* n of them, id = index + 1 */
	XEventMetadata *md;
	size_t cap_md;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a 64 */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* The id of name (typed: "node:Op", display name "Op"); 0 when out of
 * memory. nm->cap_md bounds the distinct names (the events counted). */
static int64_t intern(struct names *nm, const char *name, int typed)
{
	size_t i = hash_str(name) & (nm->cap - 1);
	XEventMetadata *m;

	while (nm->key[i]) {
		if (!strcmp(nm->key[i], name))
			return nm->id[i];
		i = (i + 1) & (nm->cap - 1);
	}
	if (nm->n >= nm->cap_md)
		return 0;
	m = &nm->md[nm->n];
	tensorflow__profiler__xevent_metadata__init(m);
	m->id = (int64_t)nm->n + 1;
	m->name = (char *)name;
	if (typed && strrchr(name, ':'))
		m->display_name = strrchr(name, ':') + 1;
	tensorflow__profiler__xplane__event_metadata_entry__init(
		&nm->entries[nm->n]);
	nm->entries[nm->n].key = m->id;
	nm->entries[nm->n].value = m;
	nm->key[i] = name;
	nm->id[i] = m->id;
	nm->n++;
	return m->id;
}

/* Building ------------------------------------------------------------- */

struct build {
	XEvent *ev;
	XEvent **evp;
	size_t n_ev;
	XStat *st;
	XStat **stp;
	size_t n_st;
	int64_t avail;		/* physical memory */
};

static XStat *stat_new(struct build *b, int id)
{
	XStat *s = &b->st[b->n_st];

	tensorflow__profiler__xstat__init(s);
	s->metadata_id = id;
	b->stp[b->n_st++] = s;
	return s;
}

static void stat_int(struct build *b, int id, int64_t v)
{
	XStat *s = stat_new(b, id);

	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	s->int64_value = v;
}

static void stat_str(struct build *b, int id, const char *v)
{
	XStat *s = stat_new(b, id);

	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
	s->str_value = (char *)v;
}

static XEvent *event_new(struct build *b, int64_t md, uint64_t start,
			 uint64_t dur)
{
	XEvent *e = &b->ev[b->n_ev];

	tensorflow__profiler__xevent__init(e);
	e->metadata_id = md;
	e->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
	e->offset_ps = (int64_t)start * 1000;
	e->duration_ps = (int64_t)dur * 1000;
	b->evp[b->n_ev++] = e;
	return e;
}

static void event_stats(struct build *b, XEvent *e, size_t first)
{
	e->n_stats = b->n_st - first;
	e->stats = e->n_stats ? &b->stp[first] : NULL;
}

static const struct tfk_prof_event *sort_base;

/* By start, the longer first (an enclosing span before its children). */
static int by_start(const void *pa, const void *pb)
{
	const struct tfk_prof_event *a = &sort_base[*(const uint32_t *)pa];
	const struct tfk_prof_event *b = &sort_base[*(const uint32_t *)pb];

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return (a->dur < b->dur) - (a->dur > b->dur);
}

/* The events of thread t onto line l. */
static int build_line(struct build *b, struct names *nm, XLine *l,
		      const struct tfk_prof_thread *t, int64_t ts_ns)
{
	uint32_t *order = tfk_malloc((t->n_ev ? t->n_ev : 1) *
				     sizeof(*order));
	size_t i, first = b->n_ev;

	if (!order)
		return -1;
	for (i = 0; i < t->n_ev; i++)
		order[i] = (uint32_t)i;
	sort_base = t->ev;
	qsort(order, t->n_ev, sizeof(*order), by_start);
	tensorflow__profiler__xline__init(l);
	l->id = t->tid;
	l->display_id = t->tid;
	l->name = l->display_name = (char *)t->name;
	l->timestamp_ns = ts_ns;
	for (i = 0; i < t->n_ev; i++) {
		const struct tfk_prof_event *pe = &t->ev[order[i]];
		int64_t md = intern(nm, t->str + pe->name, pe->typed);
		size_t s0 = b->n_st;
		XEvent *e;

		if (!md) {
			tfk_free(order);
			return -1;
		}
		e = event_new(b, md, pe->start, pe->dur);
		if (pe->kind == TFK_PROF_SPAN && pe->step >= 0) {
			stat_int(b, S_STEP_NUM, pe->step);
			stat_int(b, S_ROOT, 1);
		} else if (pe->kind != TFK_PROF_SPAN) {
			stat_str(b, S_ALLOCATOR, "cpu");
			stat_int(b, S_BYTES_ALLOCATED, pe->in_use);
			stat_int(b, S_BYTES_AVAILABLE, b->avail > pe->in_use ?
				 b->avail - pe->in_use : 0);
			stat_int(b, S_PEAK, pe->peak);
			stat_int(b, S_REQUESTED, pe->bytes);
			stat_int(b, S_ALLOCATION, (pe->bytes + 63) / 64 * 64);
			stat_str(b, S_TF_OP, t->str + pe->op);
			stat_int(b, S_STEP_NUM, pe->step);
			stat_str(b, S_REGION, "output");
			stat_int(b, S_DATA_TYPE, pe->dtype);
			stat_str(b, S_SHAPE, t->str + pe->shape);
		}
		event_stats(b, e, s0);
		if (pe->start + pe->dur > (uint64_t)l->duration_ps / 1000)
			l->duration_ps = (int64_t)(pe->start + pe->dur) * 1000;
	}
	l->n_events = b->n_ev - first;
	l->events = &b->evp[first];
	tfk_free(order);
	return 0;
}

/* The "Steps" line: an event per step span of every thread. */
static int build_steps(struct build *b, struct names *nm, XLine *l,
		       int64_t ts_ns, char *numbers, size_t cap)
{
	size_t first = b->n_ev, used = 0;

	tensorflow__profiler__xline__init(l);
	l->id = l->display_id = -1;
	l->name = l->display_name = "Steps";
	l->timestamp_ns = ts_ns;
	for (int ti = 0; ti < tfk_prof_n_threads(); ti++) {
		const struct tfk_prof_thread *t = tfk_prof_thread(ti);

		for (size_t i = 0; i < t->n_ev; i++) {
			const struct tfk_prof_event *pe = &t->ev[i];
			size_t s0 = b->n_st;
			int64_t md;
			XEvent *e;
			int w;

			if (pe->kind != TFK_PROF_SPAN || pe->step < 0)
				continue;
			w = snprintf(numbers + used, cap - used, "%lld",
				     (long long)pe->step);
			if (w < 0 || (size_t)w >= cap - used)
				return -1;
			md = intern(nm, numbers + used, 0);
			used += (size_t)w + 1;
			if (!md)
				return -1;
			e = event_new(b, md, pe->start, pe->dur);
			stat_int(b, S_STEP_NUM, pe->step);
			event_stats(b, e, s0);
		}
	}
	l->n_events = b->n_ev - first;
	l->events = &b->evp[first];
	return 0;
}

static int write_space(struct tfk_xplane *xp, struct tfk_err *err)
{
	XSpace space = TENSORFLOW__PROFILER__XSPACE__INIT;
	XPlane host = TENSORFLOW__PROFILER__XPLANE__INIT;
	XPlane task = TENSORFLOW__PROFILER__XPLANE__INIT;
	XPlane *planes[2] = { &host, &task };
	XStatMetadata smd[N_STAT];
	StatEntry se[N_STAT], *sep[N_STAT];
	XStat tstat[2], *tstatp[2];
	struct build b = { 0 };
	struct names nm = { 0 };
	int nt = tfk_prof_n_threads(), rc = 0;
	size_t n_ev = 0, n_st = 2, n_steps = 0, len;
	XLine *lines = NULL, **linep = NULL;
	EventEntry **ep = NULL;
	char *hosts[1] = { xp->host }, *numbers = NULL, warn[128];
	char *warnings[1] = { warn };
	uint8_t *bytes = NULL;
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	int64_t ts_ns = (int64_t)tfk_prof_wall_start();

	for (int i = 0; i < nt; i++) {
		const struct tfk_prof_thread *t = tfk_prof_thread(i);

		n_ev += t->n_ev;
		for (size_t j = 0; j < t->n_ev; j++) {
			if (t->ev[j].kind != TFK_PROF_SPAN)
				n_st += MEM_STATS;
			else if (t->ev[j].step >= 0) {
				n_steps++;
				n_st += 3;	/* 2 here, 1 on "Steps" */
			}
		}
	}
	b.avail = pages > 0 && psz > 0 ? (int64_t)pages * psz : 0;
	nm.cap_md = n_ev + n_steps + 1;
	for (nm.cap = 64; nm.cap < 2 * nm.cap_md; nm.cap *= 2)
		;
	nm.key = tfk_calloc(nm.cap, sizeof(*nm.key));
	nm.id = tfk_calloc(nm.cap, sizeof(*nm.id));
	nm.entries = tfk_calloc(nm.cap_md, sizeof(*nm.entries));
	nm.md = tfk_calloc(nm.cap_md, sizeof(*nm.md));
	b.ev = tfk_calloc(n_ev + n_steps + 1, sizeof(*b.ev));
	b.evp = tfk_calloc(n_ev + n_steps + 1, sizeof(*b.evp));
	b.st = tfk_calloc(n_st, sizeof(*b.st));
	b.stp = tfk_calloc(n_st, sizeof(*b.stp));
	lines = tfk_calloc((size_t)nt + 1, sizeof(*lines));
	linep = tfk_calloc((size_t)nt + 1, sizeof(*linep));
	numbers = tfk_malloc(24 * (n_steps + 1));
	if (!nm.key || !nm.id || !nm.entries || !nm.md || !b.ev || !b.evp ||
	    !b.st || !b.stp || !lines || !linep || !numbers)
		goto oom;
	for (int i = 0; i < nt; i++) {
		if (build_line(&b, &nm, &lines[i], tfk_prof_thread(i), ts_ns))
			goto oom;
		linep[i] = &lines[i];
	}
	if (build_steps(&b, &nm, &lines[nt], ts_ns, numbers,
			24 * (n_steps + 1)))
		goto oom;
	linep[nt] = &lines[nt];
	ep = tfk_calloc(nm.n ? nm.n : 1, sizeof(*ep));
	if (!ep)
		goto oom;
	for (size_t i = 0; i < nm.n; i++)
		ep[i] = &nm.entries[i];
	for (int i = 1; i < N_STAT; i++) {
		tensorflow__profiler__xstat_metadata__init(&smd[i]);
		smd[i].id = i;
		smd[i].name = (char *)stat_names[i];
		tensorflow__profiler__xplane__stat_metadata_entry__init(&se[i]);
		se[i].key = i;
		se[i].value = &smd[i];
		sep[i - 1] = &se[i];
	}
	host.id = 0;
	host.name = "/host:CPU";
	host.n_lines = (size_t)nt + (n_steps ? 1 : 0);
	host.lines = linep;
	host.n_event_metadata = nm.n;
	host.event_metadata = ep;
	host.n_stat_metadata = S_START - 1;
	host.stat_metadata = sep;
	for (int i = 0; i < 2; i++) {
		tensorflow__profiler__xstat__init(&tstat[i]);
		tstat[i].metadata_id = i + 1;
		tstat[i].value_case =
			TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE;
		tstat[i].uint64_value = i ? tfk_prof_wall_stop() :
			tfk_prof_wall_start();
		tstatp[i] = &tstat[i];
		smd[S_START + i].id = i + 1;
	}
	task.id = 1;
	task.name = "Task Environment";
	task.n_stat_metadata = 2;
	task.stat_metadata = &sep[S_START - 1];
	se[S_START].key = 1;
	se[S_STOP].key = 2;
	task.n_stats = 2;
	task.stats = tstatp;
	space.n_planes = 2;
	space.planes = planes;
	space.n_hostnames = 1;
	space.hostnames = hosts;
	if (tfk_prof_dropped()) {
		snprintf(warn, sizeof(warn), "%llu events not recorded (over "
			 "the recorder's limit)",
			 (unsigned long long)tfk_prof_dropped());
		space.n_warnings = 1;
		space.warnings = warnings;
	}
	len = tensorflow__profiler__xspace__get_packed_size(&space);
	bytes = tfk_malloc(len ? len : 1);
	if (!bytes)
		goto oom;
	tensorflow__profiler__xspace__pack(&space, bytes);
	rc = tfk_out_write(xp->out, bytes, len, err);
	goto done;
oom:
	rc = tfk_errf(err, TFK_ENOMEM, "%s: out of memory for the profile",
		      xp->path);
done:
	tfk_free(bytes);
	tfk_free(ep);
	tfk_free(numbers);
	tfk_free(linep);
	tfk_free(lines);
	tfk_free(b.stp);
	tfk_free(b.st);
	tfk_free(b.evp);
	tfk_free(b.ev);
	tfk_free(nm.md);
	tfk_free(nm.entries);
	tfk_free(nm.id);
	tfk_free(nm.key);
	return rc;
}

/* TensorFlow's marker: one event file per log directory, holding only
 * the file_version event, so TensorBoard shows the directory's run. */
static int write_marker(const char *dir, const char *host, struct tfk_err *err)
{
	Tensorflow__Event e = TENSORFLOW__EVENT__INIT;
	struct tfk_rec_writer *w;
	size_t n = strlen(dir) + strlen(host) + 64, len;
	uint64_t wall = tfk_prof_wall_start();
	struct dirent *de;
	uint8_t buf[64];
	char *path;
	DIR *d;
	int rc;

	d = opendir(dir);
	while (d && (de = readdir(d))) {
		size_t m = strlen(de->d_name);

		if (m > 14 && !strcmp(de->d_name + m - 14, ".profile-empty")) {
			closedir(d);
			return 0;
		}
	}
	if (d)
		closedir(d);
	path = tfk_malloc(n);
	if (!path)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	snprintf(path, n, "%s/events.out.tfevents.%010llu.%s.profile-empty",
		 dir, (unsigned long long)(wall / 1000000000u), host);
	e.wall_time = (double)wall * 1e-9;
	e.what_case = TENSORFLOW__EVENT__WHAT_FILE_VERSION;
	e.file_version = "brain.Event:2";
	len = tensorflow__event__pack(&e, buf);
	rc = tfk_recw_open(&w, path, TFK_COMP_NONE, err);
	if (!rc) {
		rc = tfk_recw_write(w, buf, len, err);
		if (rc)
			tfk_recw_discard(w);
		else
			rc = tfk_recw_close(w, err);
	}
	tfk_free(path);
	return rc;
}

int tfk_xplane_close(struct tfk_xplane *xp, struct tfk_err *err)
{
	int rc;

	if (!xp)
		return 0;
	rc = write_space(xp, err);
	if (rc) {
		tfk_xplane_discard(xp);
		return rc;
	}
	rc = tfk_out_close(xp->out, err);
	xp->out = NULL;
	if (!rc)
		rc = write_marker(xp->dir, xp->host, err);
	tfk_xplane_discard(xp);
	return rc;
}
