/*
 * events-scan.c - a hand-written wire scanner for the events that hold
 * scalars (see events-impl.h for the shapes it takes).
 *
 * protobuf-c unpacks an Event into a tree of allocations (the Event,
 * its Summary, each Value with its tag copied, each TensorProto) and
 * frees them again: on a file of two million scalar events that was
 * most of the reader's time. This scanner walks the payload once,
 * allocates nothing and points into it. It answers only for what it
 * recognises completely and otherwise says so (0), and the reader then
 * runs protobuf-c on the same bytes: anything the scanner takes,
 * protobuf-c would take alike, which fuzz-events checks on every input
 * by reading it both ways.
 *
 * Byte layout read (protobuf wire format): a field is a key, (number
 * << 3 | wire type) as a varint, then a varint (type 0), 8 bytes
 * (type 1), a varint length and that many bytes (type 2), or 4 bytes
 * (type 5), integers little-endian.
 */
#include "format/events-impl.h"

#include <limits.h>
#include <string.h>

struct wire {
	const uint8_t *p, *end;
};

/* A varint as protobuf-c reads one: at most 10 bytes, low 64 bits. */
static int varint(struct wire *w, uint64_t *v)
{
	uint64_t x = 0;
	int i;

	for (i = 0; i < 10 && w->p + i < w->end; i++) {
		x |= (uint64_t)(w->p[i] & 0x7f) << (7 * i);
		if (!(w->p[i] & 0x80)) {
			if (i == 9 && w->p[i] > 1)
				return -1;	/* bits past 64: leave it */
			w->p += i + 1;
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* A length-delimited field's bytes (protobuf-c: a length of at most 5
 * bytes and INT_MAX). */
static int bytes(struct wire *w, struct wire *sub)
{
	uint64_t len = 0;
	int i;

	for (i = 0; i < 5 && w->p + i < w->end; i++) {
		len |= (uint64_t)(w->p[i] & 0x7f) << (7 * i);
		if (!(w->p[i] & 0x80))
			break;
	}
	if (i == 5 || w->p + i >= w->end || len > INT_MAX ||
	    len > (uint64_t)(w->end - w->p - i - 1))
		return -1;
	sub->p = w->p + i + 1;
	sub->end = sub->p + len;
	w->p = sub->end;
	return 0;
}

/* A one-byte key: *field and *type; -1 at a longer key or field 0. */
static int key(struct wire *w, int *field, int *type)
{
	uint8_t k = *w->p++;

	if (k & 0x80 || !(k >> 3))
		return -1;
	*field = k >> 3;
	*type = k & 7;
	return 0;
}

static int fixed64(struct wire *w, uint64_t *v)
{
	if (w->end - w->p < 8)
		return -1;
	memcpy(v, w->p, 8);	/* little-endian hosts (crc32c.c too) */
	w->p += 8;
	return 0;
}

static int fixed32(struct wire *w, uint32_t *v)
{
	if (w->end - w->p < 4)
		return -1;
	memcpy(v, w->p, 4);
	w->p += 4;
	return 0;
}

/* Mark field f (below 32) seen; -1 when it was seen before. */
static int once(uint32_t *seen, int f)
{
	if (*seen & 1u << f)
		return -1;
	*seen |= 1u << f;
	return 0;
}

/* SummaryMetadata: 1 when its plugin is "scalars", else -1. */
static int metadata(struct wire w)
{
	struct wire sub, pd;
	uint32_t seen = 0, seen_pd = 0;
	uint64_t u;
	int f, t, scalars = 0;

	while (w.p < w.end) {
		if (key(&w, &f, &t) || f > 4 || once(&seen, f))
			return -1;
		if (f == 4) {
			if (t != 0 || varint(&w, &u))
				return -1;
			continue;
		}
		if (t != 2 || bytes(&w, &sub))
			return -1;
		if (f != 1)
			continue;	/* display_name, summary_description */
		pd = sub;
		while (pd.p < pd.end) {
			if (key(&pd, &f, &t) || f > 2 || t != 2 ||
			    once(&seen_pd, f) || bytes(&pd, &sub))
				return -1;
			if (f == 1)
				scalars = sub.end - sub.p == 7 &&
					  !memcmp(sub.p, "scalars", 7);
		}
	}
	return scalars ? 1 : -1;
}

/* A float or double scalar TensorProto: its value, as tensor_scalar()
 * in events-read.c takes it. */
static int tensor(struct wire w, double *v, int *f32)
{
	struct wire sub, vals = { NULL, NULL }, content = { NULL, NULL };
	uint32_t seen = 0;
	uint64_t dtype = 0, u64 = 0;
	uint32_t u32 = 0;
	int f, t;

	while (w.p < w.end) {
		if (key(&w, &f, &t) || once(&seen, f))
			return -1;
		switch (f) {
		case 1:
			if (t != 0 || varint(&w, &dtype))
				return -1;
			break;
		case 2:		/* tensor_shape: only the empty (scalar) one */
			if (t != 2 || bytes(&w, &sub) || sub.p != sub.end)
				return -1;
			break;
		case 4:
			if (t != 2 || bytes(&w, &content))
				return -1;
			break;
		case 5:
		case 6:
			if (t != 2 || bytes(&w, &vals) || vals.p == vals.end ||
			    (vals.end - vals.p) % (f == 5 ? 4 : 8))
				return -1;
			break;
		default:
			return -1;
		}
	}
	dtype &= 0xffffffffu;	/* an enum: protobuf-c's int32 */
	if (dtype == 1 && !(seen & 1u << 6)) {	/* DT_FLOAT */
		float x;

		if (seen & 1u << 5)
			sub = vals;
		else if (content.end - content.p == 4)
			sub = content;
		else
			return -1;
		fixed32(&sub, &u32);
		memcpy(&x, &u32, 4);
		*v = x;
		*f32 = 1;
		return 0;
	}
	if (dtype == 2 && !(seen & 1u << 5)) {	/* DT_DOUBLE */
		if (seen & 1u << 6)
			sub = vals;
		else if (content.end - content.p == 8)
			sub = content;
		else
			return -1;
		fixed64(&sub, &u64);
		memcpy(v, &u64, 8);
		*f32 = 0;
		return 0;
	}
	return -1;
}

static int value(struct wire w, struct tfk_evs_value *v)
{
	struct wire sub, tens = { NULL, NULL };
	uint32_t seen = 0, u32;
	float x;
	int f, t;

	memset(v, 0, sizeof(*v));
	v->tag = (const uint8_t *)"";
	while (w.p < w.end) {
		if (key(&w, &f, &t) || once(&seen, f))
			return -1;
		switch (f) {
		case 1:
			if (t != 2 || bytes(&w, &sub))
				return -1;
			v->tag = sub.p;
			v->tag_len = (size_t)(sub.end - sub.p);
			break;
		case 2:
			if (t != 5 || fixed32(&w, &u32))
				return -1;
			memcpy(&x, &u32, 4);
			v->value = x;
			v->f32 = 1;
			break;
		case 8:
			if (t != 2 || bytes(&w, &tens))
				return -1;
			break;
		case 9:
			if (t != 2 || bytes(&w, &sub) || metadata(sub) < 0)
				return -1;
			v->scalars = 1;
			break;
		default:
			return -1;
		}
	}
	if (!(seen & 1u << 2) == !(seen & 1u << 8))
		return -1;	/* neither or both of the oneof */
	if (seen & 1u << 8) {
		v->tensor = 1;
		return tensor(tens, &v->value, &v->f32);
	}
	return 0;
}

static int summary(struct wire w, struct tfk_evs_event *e)
{
	struct wire sub;
	int f, t;

	while (w.p < w.end) {
		if (key(&w, &f, &t) || f != 1 || t != 2 || bytes(&w, &sub) ||
		    e->n_value == TFK_EVS_MAX_VALUES ||
		    value(sub, &e->value[e->n_value]))
			return -1;
		e->n_value++;
	}
	return 0;
}

/*
 * What tf.compat.v1.summary and tfk-train write for one scalar, in
 * this order and nothing else, read at once:
 *   09 wall_time(8) 10 step(varint) 2a L1 0a L2 0a T tag(T) 15 value(4)
 * with L2 = T + 7 and L1 = T + 9, one byte each. 1 when p is that.
 */
static int simple_event(const uint8_t *p, size_t n, struct tfk_evs_event *e)
{
	struct wire w = { p + 10, p + n };
	const uint8_t *q;
	uint64_t u;
	uint32_t u32;
	size_t tl;
	float x;

	if (n < 10 + 1 + 11 || p[0] != 0x09 || p[9] != 0x10 || varint(&w, &u))
		return 0;
	q = w.p;
	if (w.end - q < 11 || q[0] != 0x2a || q[2] != 0x0a || q[4] != 0x0a)
		return 0;
	tl = q[5];
	if (tl > 118 || q[3] != tl + 7 || q[1] != tl + 9 ||
	    (size_t)(w.end - q) != tl + 11 || q[6 + tl] != 0x15)
		return 0;
	e->step = (int64_t)u;
	memcpy(&u, p + 1, 8);
	memcpy(&e->wall_time, &u, 8);
	e->file_version = NULL;
	e->fv_len = 0;
	e->is_summary = 1;
	e->n_value = 1;
	memset(&e->value[0], 0, sizeof(e->value[0]));
	e->value[0].tag = q + 6;
	e->value[0].tag_len = tl;
	memcpy(&u32, q + 7 + tl, 4);
	memcpy(&x, &u32, 4);
	e->value[0].value = x;
	e->value[0].f32 = 1;
	return 1;
}

int tfk_evs_scan(const uint8_t *p, size_t n, struct tfk_evs_event *e)
{
	struct wire w = { p, p + n }, sub;
	uint32_t seen = 0;
	uint64_t u;
	int f, t;

	if (simple_event(p, n, e))
		return 1;
	e->wall_time = 0;
	e->step = 0;
	e->file_version = NULL;
	e->fv_len = 0;
	e->is_summary = 0;
	e->n_value = 0;
	while (w.p < w.end) {
		if (key(&w, &f, &t) || once(&seen, f))
			return 0;
		switch (f) {
		case 1:
			if (t != 1 || fixed64(&w, &u))
				return 0;
			memcpy(&e->wall_time, &u, 8);
			break;
		case 2:
			if (t != 0 || varint(&w, &u))
				return 0;
			e->step = (int64_t)u;
			break;
		case 3:
			if (t != 2 || e->is_summary || bytes(&w, &sub))
				return 0;
			e->file_version = sub.p;
			e->fv_len = (size_t)(sub.end - sub.p);
			break;
		case 5:
			if (t != 2 || e->file_version || bytes(&w, &sub) ||
			    summary(sub, e))
				return 0;
			e->is_summary = 1;
			break;
		default:
			return 0;
		}
	}
	return 1;
}
