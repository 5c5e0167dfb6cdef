/*
 * progress.c - terminal progress line (see progress.h).
 *
 * Carriage-return redraw of one line; no curses. The rate is the mean
 * since start, which is steadier than an instantaneous rate for ETA.
 */
#include "util/progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

double tfk_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int tfk_progress_wanted(int force, int quiet)
{
	if (quiet)
		return 0;
	return force || isatty(2);
}

void tfk_progress_init(struct tfk_progress *p, int on, const char *unit,
		       uint64_t total)
{
	p->on = on;
	p->unit = unit;
	p->total = total;
	p->done = 0;
	p->t0 = p->last = tfk_now();
}

static void draw(struct tfk_progress *p, double now)
{
	double dt = now - p->t0, rate = dt > 0 ? (double)p->done / dt : 0;

	if (p->total) {
		int w = 30, k = (int)((double)w * (double)p->done / (double)p->total);
		char bar[31];

		if (k > w)
			k = w;
		for (int i = 0; i < w; i++)
			bar[i] = i < k ? '=' : (i == k ? '>' : '.');
		bar[w] = '\0';
		fprintf(stderr, "\r%" PRIu64 "/%" PRIu64 " [%s] %.0f %s/s",
			p->done, p->total, bar, rate, p->unit);
		if (rate > 0 && p->done < p->total)
			fprintf(stderr, " ETA %.0fs",
				(double)(p->total - p->done) / rate);
		fprintf(stderr, "\033[K");
	} else {
		fprintf(stderr, "\r%" PRIu64 " %s  %.0f %s/s\033[K", p->done,
			p->unit, rate, p->unit);
	}
}

void tfk_progress_update(struct tfk_progress *p, uint64_t done)
{
	double now;

	p->done = done;
	if (!p->on)
		return;
	now = tfk_now();
	if (now - p->last < 0.1)
		return;
	p->last = now;
	draw(p, now);
}

void tfk_progress_release(struct tfk_progress *p)
{
	if (!p->on)
		return;
	draw(p, tfk_now());
	fputc('\n', stderr);
	p->on = 0;
}
