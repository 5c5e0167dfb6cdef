/*
 * trace.h - the recorder's profile as Chrome trace-event JSON, which
 * Perfetto (ui.perfetto.dev) and chrome://tracing load.
 *
 * One JSON object {"displayTimeUnit": "ms", "traceEvents": [...]}:
 *   {"ph":"M","name":"process_name","pid":P,"args":{"name":TOOL}}
 *   {"ph":"M","name":"thread_name","pid":P,"tid":T,"args":{"name":N}}
 *     per recording thread;
 *   {"ph":"X","name":NODE,"cat":"Op","ts":µs,"dur":µs,"pid":P,"tid":T,
 *    "args":{"type":OP}} per op event ("node:Op" split at its last
 *     ':'); cat "Step" with args.step for a step span, cat "Pipeline"
 *     for other spans (input waits and pipeline stages);
 *   {"ph":"C","name":"Memory","ts":µs,"pid":P,
 *    "args":{"bytes_in_use":N}} after each memory event.
 * Times are microseconds (with ns decimals) from the recorder's start;
 * pid is the process id.
 */
#ifndef TFK_TRACE_H
#define TFK_TRACE_H

#include "util/err.h"

struct tfk_trace;

/* Open path under a temporary name (io/out.h) now, so that an
 * unwritable path fails before the work. 0, TFK_EIO, TFK_ENOMEM. */
int tfk_trace_open(struct tfk_trace **tr, const char *path,
		   struct tfk_err *err);
/* Write the recorder's events (stop it first) as process `process`,
 * rename into place and free tr (also on failure). 0, TFK_EIO,
 * TFK_ENOMEM. */
int tfk_trace_close(struct tfk_trace *tr, const char *process,
		    struct tfk_err *err);
/* Abandon: remove the temporary, free. NULL is fine. */
void tfk_trace_discard(struct tfk_trace *tr);

#endif
