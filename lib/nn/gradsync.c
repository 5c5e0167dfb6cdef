/*
 * gradsync.c - the fusion buffer, its buckets, and the sums in flight.
 *
 * When every rank is on one node (util/mpi.h tfk_mpi_shm_new), the
 * fusion buffer is this rank's part of a shared window and a bucket's
 * sum is made in place of a message: a barrier (every rank's copies
 * in), each rank adds up its slice of the bucket over all ranks' buffers
 * in rank order into the shared result, a barrier (the result whole).
 * The values are views of that result, so nothing is copied back; the
 * means, when the total weight was not known ahead, are made in the
 * same pass from the weights in every rank's header. The sum's order
 * is rank 0, 1, 2, ... for every element (MPI_Allreduce's own order for
 * two ranks, whose sum commutes). OpenMPI's shared-memory MPI_Allreduce
 * of the MLP's 407 KB copies each rank's bytes through its FIFOs and
 * back; this reads every rank's floats once and writes each sum once.
 */
#include "nn/gradsync.h"

#include "util/alloc.h"
#include "util/mpi.h"

#include <math.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdlib.h>
#include <string.h>

#define HDR 2			/* weight, non-finite loss count */

struct seg {
	int fetch;		/* the exec's fetch index; -1: the header */
	size_t off, len;	/* floats in buf */
	int b0, b1;		/* the buckets it touches */
};

struct tfk_gradsync {
	struct tfk_exec *x;
	int n;			/* tensors; segs has n + 1 (the header) */
	struct seg *segs;	/* in the order they become final */
	int *seg_of;		/* fetch index -> seg, -1: not ours */
	int n_fetch_max, loss_fetch;
	float *buf;
	size_t n_buf, bucket;	/* floats */
	int n_buckets;
	int *total, *left;	/* per bucket: segments touching it; pending */
	int started;		/* buckets summed, in order */
	struct tfk_tensor *views;	/* per tensor k (not the header) */
	float w;		/* this rank's weight */
	float mul;		/* the copy's factor: w, or w / sum_w */
	double sum_w;		/* the step's total weight if known, or 0 */
	int bad;
	/* node-shared sums: the window (NULL: MPI_Allreduce in buf), the
	 * rank, the ranks' buffers and the result the views show */
	struct tfk_mpi_shm *shm;
	int rank, n_ranks;
	float *out;
};

static int by_when(const void *a, const void *b, void *ctx)
{
	const struct tfk_exec *x = ctx;
	const struct seg *p = a, *q = b;
	int i = tfk_exec_fetch_when(x, p->fetch), j = tfk_exec_fetch_when(x, q->fetch);

	return i != j ? (i > j) - (i < j) : (p->fetch > q->fetch) -
		(p->fetch < q->fetch);
}

/* Sum every bucket whose segments are all in, in order (all ranks must
 * make the same sums in the same order). Blocking sums: OpenMPI's
 * MPI_Iallreduce (libnbc) moved 2-5x fewer bytes per second here than
 * its MPI_Allreduce, and tests/bench/bench-gradsync.c measures this. */
/*
 * The passes over the buffers, 4 floats at a time on x86-64's SSE2 (at
 * -O2 the compiler leaves these loops scalar): each lane rounds as the
 * scalar loop does, so the bits are the same.
 *   vec_op(out, x, y, n, k, op): out[i] = op 0: x[i] * k; 1: x[i] + y[i];
 *   2: (x[i] + y[i]) * k; 3: out[i] + x[i]; 4: out[i] * k.
 */
static void vec_op(float *restrict out, const float *restrict x,
		   const float *restrict y, size_t n, float k, int op)
{
	size_t i = 0;
#ifdef __SSE2__
	const __m128 vk = _mm_set1_ps(k);

	for (; i + 4 <= n; i += 4) {
		__m128 a = _mm_loadu_ps(op == 4 ? out + i : x + i), v;

		v = op == 0 || op == 4 ? _mm_mul_ps(a, vk) :
			op == 3 ? _mm_add_ps(_mm_loadu_ps(out + i), a) :
			_mm_add_ps(a, _mm_loadu_ps(y + i));
		if (op == 2)
			v = _mm_mul_ps(v, vk);
		_mm_storeu_ps(out + i, v);
	}
#endif
	for (; i < n; i++)
		out[i] = op == 0 ? x[i] * k : op == 1 ? x[i] + y[i] :
			op == 2 ? (x[i] + y[i]) * k : op == 3 ? out[i] + x[i] :
			out[i] * k;
}

/* The shared sum of floats [off, off + len) (see the top): this rank's
 * slice of them over every rank, in rank order, then the mean's factor
 * where tfk_gradsync_end would apply it (not to the header). */
static void shm_sum(struct tfk_gradsync *gs, size_t off, size_t len)
{
	size_t a = off + len * (size_t)gs->rank / (size_t)gs->n_ranks;
	size_t b = off + len * (size_t)(gs->rank + 1) / (size_t)gs->n_ranks;
	float scale = 1, hw = 0, hbad = 0;
	int q;

	tfk_mpi_shm_barrier(gs->shm);
	if (!gs->sum_w) {
		for (q = 0; q < gs->n_ranks; q++) {
			const float *h = tfk_mpi_shm_own(gs->shm, q);

			hw = q ? hw + h[0] : h[0];
			hbad = q ? hbad + h[1] : h[1];
		}
		if (!hbad && hw > 0)
			scale = (float)(1.0 / hw);
	}
	/* (rank 0 + rank 1 + ...) * scale, the header unscaled */
	for (size_t lo = a, hi; lo < b; lo = hi) {
		int scaled = lo >= HDR && scale != 1;
		const float *r0 = tfk_mpi_shm_own(gs->shm, 0) + lo;
		const float *r1 = tfk_mpi_shm_own(gs->shm, 1) + lo;

		hi = lo < HDR && b > HDR ? HDR : b;
		if (gs->n_ranks == 2) {
			vec_op(gs->out + lo, r0, r1, hi - lo, scale,
			       scaled ? 2 : 1);
			continue;
		}
		vec_op(gs->out + lo, r0, r1, hi - lo, 1, 1);
		for (q = 2; q < gs->n_ranks; q++)
			vec_op(gs->out + lo, tfk_mpi_shm_own(gs->shm, q) + lo,
			       NULL, hi - lo, 1, 3);
		if (scaled)
			vec_op(gs->out + lo, NULL, NULL, hi - lo, scale, 4);
	}
	tfk_mpi_shm_barrier(gs->shm);
}

static void advance(struct tfk_gradsync *gs)
{
	while (gs->started < gs->n_buckets && !gs->left[gs->started]) {
		int b = gs->started++;
		size_t off = (size_t)b * gs->bucket;
		size_t len = gs->n_buf - off < gs->bucket ? gs->n_buf - off :
			gs->bucket;

		if (gs->shm)
			shm_sum(gs, off, len);
		else
			tfk_mpi_sum_f32(gs->buf + off, len, NULL);
	}
}

static void seg_done(struct tfk_gradsync *gs, const struct seg *s)
{
	for (int b = s->b0; b <= s->b1; b++)
		gs->left[b]--;
	advance(gs);
}

/* dst = src * w (the two never overlap). */
static void scaled_copy(float *restrict dst, const float *restrict src,
			size_t n, float w)
{
	if (w == 1)
		memcpy(dst, src, n * sizeof(float));
	else
		vec_op(dst, src, NULL, n, w, 0);
}

static void on_fetch(void *ctx, int j, const struct tfk_tensor *v)
{
	struct tfk_gradsync *gs = ctx;
	const struct seg *s;

	if (j == gs->loss_fetch) {
		gs->bad = !isfinite(*(const float *)v->data);
		gs->buf[gs->segs[0].off] = gs->w;
		gs->buf[gs->segs[0].off + 1] = (float)gs->bad;
		seg_done(gs, &gs->segs[0]);
	}
	if (j < 0 || j >= gs->n_fetch_max || gs->seg_of[j] < 0)
		return;
	s = &gs->segs[gs->seg_of[j]];
	scaled_copy(gs->buf + s->off, v->data, s->len, gs->mul);
	seg_done(gs, s);
}

int tfk_gradsync_new(struct tfk_gradsync **gsp, struct tfk_exec *x, int n,
		     const int *fetch, const struct tfk_tensor *const *like,
		     int loss_fetch, size_t bucket_bytes, struct tfk_err *err)
{
	struct tfk_gradsync *gs;
	size_t off = 0;
	int i, maxf = loss_fetch, rc;

	*gsp = NULL;
	for (i = 0; i < n; i++)
		if (fetch[i] > maxf)
			maxf = fetch[i];
	gs = tfk_calloc(1, sizeof(*gs));
	if (!gs)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	gs->x = x;
	gs->n = n;
	gs->loss_fetch = loss_fetch;
	gs->n_fetch_max = maxf + 1;
	gs->segs = tfk_calloc((size_t)n + 1, sizeof(*gs->segs));
	gs->seg_of = tfk_calloc((size_t)gs->n_fetch_max, sizeof(int));
	gs->views = tfk_calloc((size_t)n + 1, sizeof(*gs->views));
	if (!gs->segs || !gs->seg_of || !gs->views)
		goto oom;
	gs->segs[0].fetch = loss_fetch;
	gs->segs[0].len = HDR;
	for (i = 0; i < n; i++) {
		gs->segs[i + 1].fetch = fetch[i];
		gs->segs[i + 1].len = (size_t)tfk_tensor_numel(like[i]);
	}
	/* the header with the loss, then the tensors as they come */
	qsort_r(gs->segs + 1, (size_t)n, sizeof(*gs->segs), by_when, x);
	for (i = 0; i < gs->n_fetch_max; i++)
		gs->seg_of[i] = -1;
	for (i = 0; i <= n; i++) {
		gs->segs[i].off = off;
		off += gs->segs[i].len;
		if (i)
			gs->seg_of[gs->segs[i].fetch] = i;
	}
	gs->n_buf = off;
	gs->bucket = (bucket_bytes ? bucket_bytes : TFK_GRADSYNC_BUCKET) /
		sizeof(float);
	if (!gs->bucket)
		gs->bucket = 1;
	gs->n_buckets = (int)((gs->n_buf + gs->bucket - 1) / gs->bucket);
	/* every rank makes its sync at the same point: collective */
	rc = tfk_mpi_shm_new(&gs->shm, gs->n_buf, err);
	if (rc) {
		tfk_gradsync_free(gs);
		return rc;
	}
	gs->rank = tfk_mpi_rank();
	gs->n_ranks = tfk_mpi_size();
	if (gs->shm) {
		gs->buf = tfk_mpi_shm_own(gs->shm, gs->rank);
		gs->out = tfk_mpi_shm_common(gs->shm);
	} else {
		gs->buf = gs->out = tfk_malloc(gs->n_buf * sizeof(float));
	}
	gs->total = tfk_calloc((size_t)gs->n_buckets, sizeof(int));
	gs->left = tfk_calloc((size_t)gs->n_buckets, sizeof(int));
	if (!gs->buf || !gs->total || !gs->left)
		goto oom;
	for (i = 0; i <= n; i++) {
		struct seg *s = &gs->segs[i];

		s->b0 = (int)(s->off / gs->bucket);
		s->b1 = s->len ? (int)((s->off + s->len - 1) / gs->bucket) :
			s->b0 - 1;
		for (int b = s->b0; b <= s->b1; b++)
			gs->total[b]++;
	}
	for (i = 0; i < n; i++) {
		const struct seg *s = &gs->segs[gs->seg_of[fetch[i]]];

		rc = tfk_tensor_init_view(&gs->views[i], TFK_DT_FLOAT,
					  like[i]->rank, like[i]->shape,
					  gs->out + s->off,
					  s->len * sizeof(float),
					  TFK_OWN_BORROWED, err);
		if (rc) {
			tfk_gradsync_free(gs);
			return rc;
		}
	}
	rc = tfk_exec_on_fetch(x, on_fetch, gs, err);
	if (rc) {
		tfk_gradsync_free(gs);
		return rc;
	}
	*gsp = gs;
	return 0;
oom:
	tfk_gradsync_free(gs);
	return tfk_errf(err, TFK_ENOMEM, "out of memory");
}

void tfk_gradsync_free(struct tfk_gradsync *gs)
{
	if (!gs)
		return;
	if (gs->x)
		tfk_exec_on_fetch(gs->x, NULL, NULL, NULL);
	tfk_free(gs->segs);
	tfk_free(gs->seg_of);
	tfk_free(gs->views);
	if (!gs->shm)
		tfk_free(gs->buf);
	tfk_free(gs->total);
	tfk_free(gs->left);
	tfk_free(gs);
}

void tfk_gradsync_begin(struct tfk_gradsync *gs, double w, double total)
{
	memcpy(gs->left, gs->total, (size_t)gs->n_buckets * sizeof(int));
	gs->started = 0;
	gs->w = (float)w;
	gs->sum_w = total > 0 ? total : 0;
	/* a known total: the means made as the values are copied in */
	gs->mul = gs->sum_w ? (float)(w / total) : (float)w;
	gs->bad = 0;
}

int tfk_gradsync_idle(struct tfk_gradsync *gs, double total,
		      struct tfk_err *err)
{
	(void)err;
	tfk_gradsync_begin(gs, 0, total);
	memset(gs->buf, 0, gs->n_buf * sizeof(float));
	memset(gs->left, 0, (size_t)gs->n_buckets * sizeof(int));
	advance(gs);
	return 0;
}

int tfk_gradsync_end(struct tfk_gradsync *gs, double *w, int *bad,
		     struct tfk_err *err)
{
	float scale;

	if (gs->started < gs->n_buckets)
		return tfk_errf(err, TFK_EINVAL, "gradient sync: %d of %d "
				"buckets never filled", gs->n_buckets -
				gs->started, gs->n_buckets);
	*w = gs->out[0];
	*bad = (int)gs->out[1];
	if (gs->sum_w && *w != (float)gs->sum_w)
		return tfk_errf(err, TFK_EINVAL, "gradient sync: the ranks' "
				"rows sum to %g, not the %g expected",
				(double)*w, gs->sum_w);
	/* shared sums: the means were made with them */
	if (*bad || !(*w > 0) || gs->sum_w || gs->shm)
		return 0;
	scale = (float)(1.0 / *w);
	for (size_t i = HDR; i < gs->n_buf; i++)
		gs->buf[i] *= scale;
	return 0;
}

const struct tfk_tensor *tfk_gradsync_value(const struct tfk_gradsync *gs,
					    int k)
{
	return &gs->views[k];
}

int tfk_gradsync_n_buckets(const struct tfk_gradsync *gs)
{
	return gs->n_buckets;
}

size_t tfk_gradsync_bytes(const struct tfk_gradsync *gs)
{
	return gs->n_buf * sizeof(float);
}
