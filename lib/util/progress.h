/*
 * progress.h - a progress line on stderr for long runs.
 *
 * Shown only when enabled: tools pass tfk_progress_wanted(force, quiet),
 * which is true when stderr is a terminal (or --progress forces it) and
 * -q was not given. Redraws at most ten times a second, so calling
 * tfk_progress_update for every record costs one clock read.
 */
#ifndef TFK_PROGRESS_H
#define TFK_PROGRESS_H

#include <stdint.h>

struct tfk_progress {
	int on;
	const char *unit;	/* "records", "files" */
	uint64_t total;		/* 0 when unknown: no ETA, no bar */
	uint64_t done;
	double t0, last;
};

/* 1 if a progress line should be drawn. */
int tfk_progress_wanted(int force, int quiet);
void tfk_progress_init(struct tfk_progress *p, int on, const char *unit,
		       uint64_t total);
void tfk_progress_update(struct tfk_progress *p, uint64_t done);
/* Draw the final state and end the line. */
void tfk_progress_release(struct tfk_progress *p);
/* Monotonic seconds. */
double tfk_now(void);

#endif
