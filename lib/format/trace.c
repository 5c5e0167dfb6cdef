/*
 * trace.c - Chrome trace-event JSON from the recorder (see trace.h).
 *
 * Written as text through a buffer flushed to the output every
 * megabyte, not built as a jansson tree: a profile holds hundreds of
 * thousands of events and a tree of them would cost ten times the
 * file's size. Viewers sort by ts, so threads are written one after
 * another.
 */
#include "format/trace.h"
#include "io/out.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/profile.h"

#include <string.h>
#include <unistd.h>

struct tfk_trace {
	struct tfk_out *out;
};

int tfk_trace_open(struct tfk_trace **trp, const char *path,
		   struct tfk_err *err)
{
	struct tfk_trace *tr = tfk_calloc(1, sizeof(*tr));
	int rc;

	*trp = NULL;
	if (!tr)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = tfk_out_open(&tr->out, path, TFK_COMP_NONE, err);
	if (rc) {
		tfk_free(tr);
		return tfk_err_prefix(err, "--trace");
	}
	*trp = tr;
	return 0;
}

void tfk_trace_discard(struct tfk_trace *tr)
{
	if (!tr)
		return;
	tfk_out_discard(tr->out);
	tfk_free(tr);
}

static void add_us(struct tfk_buf *b, uint64_t ns)
{
	tfk_buf_addf(b, "%llu.%03u", (unsigned long long)(ns / 1000),
		     (unsigned)(ns % 1000));
}

static void add_event(struct tfk_buf *b, const struct tfk_prof_thread *t,
		      const struct tfk_prof_event *e, long pid)
{
	const char *name = t->str + e->name, *colon = strrchr(name, ':');

	if (e->kind != TFK_PROF_SPAN) {
		tfk_buf_addf(b, ",\n{\"ph\":\"C\",\"name\":\"Memory\",\"pid\":"
			     "%ld,\"ts\":", pid);
		add_us(b, e->start);
		tfk_buf_addf(b, ",\"args\":{\"bytes_in_use\":%lld}}",
			     (long long)e->in_use);
		return;
	}
	tfk_buf_adds(b, ",\n{\"ph\":\"X\",\"name\":");
	if (e->typed && colon)
		tfk_buf_add_json_str(b, name, (size_t)(colon - name));
	else
		tfk_buf_add_json_str(b, name, strlen(name));
	tfk_buf_addf(b, ",\"cat\":\"%s\",\"pid\":%ld,\"tid\":%lld,\"ts\":",
		     e->typed ? "Op" : e->step >= 0 ? "Step" : "Pipeline", pid,
		     (long long)t->tid);
	add_us(b, e->start);
	tfk_buf_adds(b, ",\"dur\":");
	add_us(b, e->dur);
	if (e->typed && colon) {
		tfk_buf_adds(b, ",\"args\":{\"type\":");
		tfk_buf_add_json_str(b, colon + 1, strlen(colon + 1));
		tfk_buf_adds(b, "}");
	} else if (e->step >= 0) {
		tfk_buf_addf(b, ",\"args\":{\"step\":%lld}",
			     (long long)e->step);
	}
	tfk_buf_adds(b, "}");
}

static int flush_buf(struct tfk_trace *tr, struct tfk_buf *b,
		     struct tfk_err *err)
{
	int rc;

	if (b->oom)
		return tfk_errf(err, TFK_ENOMEM, "out of memory for the trace");
	rc = tfk_out_write(tr->out, b->data, b->len, err);
	tfk_buf_reset(b);
	return rc;
}

int tfk_trace_close(struct tfk_trace *tr, const char *process,
		    struct tfk_err *err)
{
	long pid = (long)getpid();
	struct tfk_buf b;
	int rc = 0;

	if (!tr)
		return 0;
	tfk_buf_init(&b);
	tfk_buf_addf(&b, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"
		     "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,"
		     "\"args\":{\"name\":", pid);
	tfk_buf_add_json_str(&b, process, strlen(process));
	tfk_buf_adds(&b, "}}");
	for (int i = 0; !rc && i < tfk_prof_n_threads(); i++) {
		const struct tfk_prof_thread *t = tfk_prof_thread(i);

		tfk_buf_addf(&b, ",\n{\"ph\":\"M\",\"name\":\"thread_name\","
			     "\"pid\":%ld,\"tid\":%lld,\"args\":{\"name\":",
			     pid, (long long)t->tid);
		tfk_buf_add_json_str(&b, t->name, strlen(t->name));
		tfk_buf_adds(&b, "}}");
		for (size_t j = 0; !rc && j < t->n_ev; j++) {
			add_event(&b, t, &t->ev[j], pid);
			if (b.len >= (1 << 20))
				rc = flush_buf(tr, &b, err);
		}
	}
	if (!rc) {
		tfk_buf_adds(&b, "\n]}\n");
		rc = flush_buf(tr, &b, err);
	}
	tfk_buf_release(&b);
	if (!rc) {
		rc = tfk_out_close(tr->out, err);
		tr->out = NULL;
	}
	tfk_trace_discard(tr);
	return rc;
}
