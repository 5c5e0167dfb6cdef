/*
 * fuzz-train.c - what tfk-train reads besides the spec and the records:
 * fit.callbacks configs (lib/nn/callback.h), a checkpoint's callback
 * state on --resume, and the DIR/checkpoint pointer file (ckpt.h).
 *
 * The input is split at the first NUL byte: before it, JSON for
 * tfk_callbacks_new (and, when accepted, the same bytes as a state for
 * tfk_callbacks_restore, plus a round trip of its own state); after
 * it, the bytes of a checkpoint pointer file for tfk_ckpt_latest.
 * Beyond "no crash, no leak": every refusal of a callback list names
 * its JSON path; an accepted list restores its own state; the pointer
 * reader only ever answers a path inside the directory or an absolute
 * one, NUL-terminated within the buffer.
 *
 * FUZZ-SEEDS: examples/*.spec.json
 */
#include "nn/callback.h"
#include "nn/ckpt.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void callbacks(const uint8_t *p, size_t n)
{
	json_t *j = json_loadb((const char *)p, n, JSON_DECODE_ANY, NULL);
	struct tfk_callbacks *c = NULL;
	struct tfk_err err;
	json_t *st;

	if (!j)
		return;
	if (tfk_callbacks_new(j, "spec.json: fit.callbacks", &c, &err)) {
		if (err.code != TFK_ENOMEM &&
		    !strstr(err.msg, "spec.json: fit.callbacks"))
			abort();
		json_decref(j);
		return;
	}
	tfk_callbacks_restore(c, j, &err);
	st = tfk_callbacks_state(c);
	if (st && tfk_callbacks_restore(c, st, &err))
		abort();
	json_decref(st);
	tfk_callbacks_free(c);
	json_decref(j);
}

static void pointer(const uint8_t *p, size_t n)
{
	static char dir[64];
	char path[96], buf[80];
	FILE *f;
	int rc;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz-train-%ld", (long)getpid());
		if (mkdir(dir, 0700) && errno != EEXIST)
			return;
	}
	snprintf(path, sizeof(path), "%s/checkpoint", dir);
	f = fopen(path, "wb");
	if (!f)
		return;
	fwrite(p, 1, n, f);
	fclose(f);
	memset(buf, 'x', sizeof(buf));
	rc = tfk_ckpt_latest(dir, buf, sizeof(buf), NULL);
	if (rc == 0 && (!memchr(buf, 0, sizeof(buf)) ||
			(buf[0] != '/' && strncmp(buf, dir, strlen(dir)))))
		abort();
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *p, size_t n)
{
	const uint8_t *z = memchr(p, 0, n);
	size_t k = z ? (size_t)(z - p) : n;

	callbacks(p, k);
	if (z)
		pointer(z + 1, n - k - 1);
	return 0;
}
