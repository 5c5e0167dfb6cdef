/*
 * fuzz-events.c - the TensorBoard event reader (tfk_evr_*) on arbitrary
 * bytes.
 *
 * FUZZ-SEEDS: fixtures/events/tfx_estimator_chicago_taxi/eval_chicago-taxi-eval/* tests/data/events/tf2/*
 *
 * The input's last byte picks how the rest is read:
 *  even: as an event file, CRCs checked, going on after every error as
 *        tfk-events does (the seeds from the fixture and
 *        tests/fuzz/seeds/fuzz-events/raw-* are whole files);
 *  odd:  as Event payloads: cut into chunks (a 2-byte little-endian
 *        length, then up to that many bytes), each framed with
 *        tfk_rec_frame so the CRCs hold and every chunk reaches the
 *        protobuf decoder and the summary value decoding (seeds
 *        tests/fuzz/seeds/fuzz-events/payload-*). Each chunk must come
 *        back as exactly one event or one wire error, in order.
 * Every returned value is touched (tags, histogram buckets and
 * percentiles, image bytes, text, hparams names and strings) so ASan
 * sees a borrowed pointer that outlived its event, and the number of
 * calls is bounded by the input's size: a reader that stops making
 * progress is a bug. The file is a memfd (memfile.h).
 *
 * Both ways of decoding a payload are run on the same bytes, in step:
 * a reader with the wire scanner (events-scan.c, the default) and one
 * with protobuf-c alone (tfk_evr_set_scan 0). They must return the
 * same codes, messages and events, field by field (numbers bit for
 * bit); the seeds payload-scalars-* are the shapes the scanner takes
 * (TF1 simple_value, TF2 scalar tensors with and without metadata), for
 * the mutator to bend. Each scalar is also printed by tfk_fmt_g as
 * tfk-events prints it, %.9g or %.17g, and must match snprintf.
 */
#include "format/events.h"
#include "io/record.h"
#include "util/fmtg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEMFILE_NAME "fuzz-events"
#include "memfile.h"

static volatile double sink;

static void touch(const struct tfk_ev_event *e)
{
	size_t i, k;

	if (e->file_version)
		sink += (double)strlen(e->file_version);
	for (i = 0; i < e->n_value; i++) {
		const struct tfk_ev_value *v = &e->value[i];

		if (v->kind < 0 || v->kind >= TFK_EVK_N)
			abort();
		sink += (double)strlen(v->tag) + (double)strlen(
			tfk_evk_name(v->kind));
		if (v->kind == TFK_EVK_SCALAR)
			sink += v->value;
		if (v->kind == TFK_EVK_HISTO) {
			for (k = 0; k < v->histo.n_bucket; k++)
				sink += v->histo.limit[k] + v->histo.count[k];
			sink += tfk_ev_histo_quantile(&v->histo, 0.5);
		}
		if (v->kind == TFK_EVK_IMAGE) {
			sink += (double)strlen(v->image.format) +
				v->image.width + v->image.height +
				(double)v->image.n;
			for (k = 0; k < v->image.nbytes; k++)
				sink += v->image.data[k];
		}
		if (v->kind == TFK_EVK_TEXT)
			for (k = 0; k < v->text_len; k++)
				sink += (unsigned char)v->text[k];
		if (v->kind == TFK_EVK_HPARAMS) {
			sink += (double)strlen(v->hparams.group);
			for (k = 0; k < v->hparams.n; k++)
				sink += (double)strlen(v->hparams.hp[k].name) +
					(v->hparams.hp[k].str ?
					 (double)strlen(v->hparams.hp[k].str) :
					 v->hparams.hp[k].num);
		}
	}
}

static void same_num(double a, double b)
{
	if (memcmp(&a, &b, sizeof(a)))
		abort();
}

static void same_str(const char *a, const char *b)
{
	if (!a != !b || (a && strcmp(a, b)))
		abort();
}

/* What tfk-events prints for a scalar, against libc. */
static void check_fmt(double v, int f32)
{
	char want[TFK_FMT_MAX], got[TFK_FMT_MAX];
	size_t n = tfk_fmt_g(got, v, f32 ? 9 : 17);

	snprintf(want, sizeof(want), f32 ? "%.9g" : "%.17g", v);
	if (n != strlen(want) || strcmp(got, want))
		abort();
}

/* The scanner's event a against protobuf-c's b. */
static void same_event(const struct tfk_ev_event *a,
		       const struct tfk_ev_event *b)
{
	size_t i, k;

	same_num(a->wall_time, b->wall_time);
	check_fmt(a->wall_time, 0);
	if (a->step != b->step || a->is_summary != b->is_summary ||
	    a->n_value != b->n_value || a->index != b->index ||
	    a->off != b->off)
		abort();
	same_str(a->file_version, b->file_version);
	for (i = 0; i < a->n_value; i++) {
		const struct tfk_ev_value *x = &a->value[i], *y = &b->value[i];

		same_str(x->tag, y->tag);
		if (x->kind != y->kind)
			abort();
		switch (x->kind) {
		case TFK_EVK_SCALAR:
			same_num(x->value, y->value);
			if (x->f32 != y->f32)
				abort();
			check_fmt(x->value, x->f32);
			break;
		case TFK_EVK_HISTO:
			if (x->histo.n_bucket != y->histo.n_bucket)
				abort();
			same_num(x->histo.num, y->histo.num);
			for (k = 0; k < x->histo.n_bucket; k++) {
				same_num(x->histo.limit[k], y->histo.limit[k]);
				same_num(x->histo.count[k], y->histo.count[k]);
			}
			break;
		case TFK_EVK_IMAGE:
			if (x->image.n != y->image.n ||
			    x->image.nbytes != y->image.nbytes ||
			    x->image.width != y->image.width ||
			    x->image.height != y->image.height)
				abort();
			break;
		case TFK_EVK_TEXT:
			if (x->text_len != y->text_len ||
			    x->n_text != y->n_text ||
			    memcmp(x->text, y->text, x->text_len))
				abort();
			break;
		case TFK_EVK_HPARAMS:
			if (x->hparams.what != y->hparams.what ||
			    x->hparams.n != y->hparams.n)
				abort();
			break;
		}
	}
}

/*
 * Read the memfile to its end with the scanner and, in step, with
 * protobuf-c alone; returns events and errors seen.
 */
static void read_all(size_t bound, size_t *n_ev, size_t *n_err,
		     int *codes, size_t max_codes)
{
	struct tfk_evr *r, *pb;
	struct tfk_ev_event e, f;
	struct tfk_err err, err_pb;
	size_t calls = 0;
	int rc, rc_pb;

	*n_ev = *n_err = 0;
	if (tfk_evr_open(&r, mpath, &err))
		return;
	if (tfk_evr_open(&pb, mpath, &err_pb))
		abort();	/* the same file opened once already */
	tfk_evr_set_scan(pb, 0);
	while ((rc = tfk_evr_next(r, &e, &err)) != 0) {
		rc_pb = tfk_evr_next(pb, &f, &err_pb);
		if (rc != rc_pb)
			abort();	/* the two decodes disagree */
		if (++calls > bound)
			abort();	/* no progress */
		if (*n_ev + *n_err < max_codes)
			codes[*n_ev + *n_err] = rc;
		if (rc == 1) {
			same_event(&e, &f);
			touch(&e);
			(*n_ev)++;
			continue;
		}
		(*n_err)++;
		if (!err.msg[0])
			abort();	/* an error without a message */
		if (strcmp(err.msg, err_pb.msg))
			abort();
		if (rc != TFK_ECORRUPT)
			break;
	}
	if (!rc && tfk_evr_next(pb, &f, &err_pb) != 0)
		abort();	/* protobuf-c's reader had more */
	tfk_evr_close(r);
	tfk_evr_close(pb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n_ev, n_err, n, off, k, n_chunks = 0;
	static int codes[4096];
	uint8_t *buf;

	if (size < 1)
		return 0;
	n = size - 1;
	if (!(data[n] & 1)) {
		put_file(data, n);
		read_all(n + 2, &n_ev, &n_err, codes, 0);
		return 0;
	}
	/* frame the chunks: at most 16 bytes of framing per input byte */
	buf = malloc(n / 2 * 16 + n + 16);
	if (!buf)
		return 0;
	for (off = 0, k = 0; off + 2 <= n; n_chunks++) {
		size_t len = (size_t)data[off] | (size_t)data[off + 1] << 8;

		off += 2;
		if (len > n - off)
			len = n - off;
		memcpy(buf + k + TFK_REC_HEADER, data + off, len);
		tfk_rec_frame(buf + k, buf + k + TFK_REC_HEADER + len,
			      buf + k + TFK_REC_HEADER, len);
		k += len + TFK_REC_OVERHEAD;
		off += len;
	}
	put_file(buf, k);
	free(buf);
	read_all(n_chunks + 2, &n_ev, &n_err, codes,
		 sizeof(codes) / sizeof(codes[0]));
	/* every chunk is one event or one wire error; nothing else fails
	 * in a well-framed file (memory aside) */
	if (n_ev + n_err != n_chunks)
		abort();
	for (k = 0; k < n_chunks && k < sizeof(codes) / sizeof(codes[0]); k++)
		if (codes[k] != 1 && codes[k] != TFK_ECORRUPT &&
		    codes[k] != TFK_ENOMEM)
			abort();
	return 0;
}
