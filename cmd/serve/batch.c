/*
 * batch.c - tfk-serve's request batching (--enable_batching), as TF
 * Serving's batching session: requests for the same version and
 * signature that arrive close together run as one batch.
 *
 * Each (version, signature) gets a batcher on its first request: a
 * queue and --batching_parameters_file's num_batch_threads threads, each
 * with its own runner. A request's inputs (rows along dimension 0) join
 * the queue, or, when max_enqueued_batches full batches already wait,
 * are refused at once (SV_EFULL: 503 / UNAVAILABLE, as TF Serving). A
 * batch thread takes the oldest request, waits until max_batch_size rows
 * are queued or batch_timeout_micros have passed since that request
 * came, takes requests in order while they fit (and while their inputs
 * agree in dtype and in every dimension but the first), pads the rows up
 * to the next of allowed_batch_sizes by repeating the last row, runs,
 * and hands each request its rows of every output whose first dimension
 * is the batch (any other output whole). A request of more rows than
 * max_batch_size is refused (INVALID_ARGUMENT), as TF Serving does
 * without large-batch splitting. Inputs of rank 0 cannot be batched and
 * run alone.
 */
#include "model/batchconfig.h"
#include "model/servable.h"
#include "serve.h"
#include "util/alloc.h"
#include "util/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct job {
	struct tfk_tensor *in;		/* the request's, borrowed */
	int n_in;
	int64_t rows;
	double arrived;
	struct sv_outputs *out;
	int rc, done;
	struct tfk_err *err;
	struct job *next;
	pthread_cond_t cv;		/* done: signalled to this job alone */
};

struct sv_batcher {
	struct sv_version *v;
	const struct tfk_sv_signature *sig;
	const struct tfk_batch_config *cfg;
	pthread_mutex_t lock;
	pthread_cond_t work;
	struct job *head, *tail;
	int64_t queued_rows;
	int stop;
	int n_threads;
	pthread_t *th;
};

void sv_outputs_release(struct sv_outputs *o)
{
	int i;

	for (i = 0; o->t && i < o->n; i++)
		tfk_tensor_release(&o->t[i]);
	tfk_free(o->t);
	o->t = NULL;
	o->n = 0;
}

/* dst rows [d, d + n) = src rows [s, s + n) (same dtype and row size). */
static int copy_rows(struct tfk_tensor *dst, int64_t d,
		     const struct tfk_tensor *src, int64_t s, int64_t n,
		     struct tfk_err *err)
{
	int64_t per = src->shape[0] ? tfk_tensor_numel(src) / src->shape[0] :
		0, i;

	if (src->dtype != TFK_DT_STRING) {
		size_t row = (size_t)per * tfk_dtype_size(src->dtype);

		memcpy((char *)dst->data + (size_t)d * row,
		       (const char *)src->data + (size_t)s * row,
		       (size_t)n * row);
		return 0;
	}
	for (i = 0; i < n * per; i++) {
		struct tfk_str x = tfk_tensor_str(src, s * per + i);

		if (tfk_tensor_set_str(dst, d * per + i, x.ptr, x.len, err))
			return err->code;
	}
	return 0;
}

/* Rows [s, s + n) of t (or all of t when its first dim is not rows). */
static int slice(struct tfk_tensor *o, const struct tfk_tensor *t,
		 int64_t rows, int64_t s, int64_t n, struct tfk_err *err)
{
	int64_t shape[TFK_MAX_RANK];

	if (t->rank < 1 || t->shape[0] != rows)
		return tfk_tensor_copy(o, t, err);
	memcpy(shape, t->shape, sizeof(shape[0]) * (size_t)t->rank);
	shape[0] = n;
	if (tfk_tensor_init(o, t->dtype, t->rank, shape, err))
		return err->code;
	return copy_rows(o, 0, t, s, n, err);
}

/* Do a's inputs stack with b's (dtype, rank, dims after the first)? */
static int same_kind(const struct job *a, const struct job *b)
{
	int i;

	for (i = 0; i < a->n_in; i++) {
		const struct tfk_tensor *x = &a->in[i], *y = &b->in[i];

		if (x->dtype != y->dtype || x->rank != y->rank ||
		    memcmp(x->shape + 1, y->shape + 1, sizeof(x->shape[0]) *
			   (size_t)(x->rank - 1)))
			return 0;
	}
	return 1;
}

static double now(void)
{
	return tfk_sv_now();
}

/* Run the jobs of list (rows in all) as one batch on runner r. */
static void run_batch(struct sv_batcher *b, struct tfk_runner *r,
		      struct job *list, int64_t rows)
{
	const struct tfk_batch_config *c = b->cfg;
	int n_in = list->n_in, n_out = tfk_runner_n_outputs(r), i, k;
	int64_t padded = rows, off, shape[TFK_MAX_RANK];
	struct tfk_tensor *in = tfk_calloc((size_t)n_in + 1, sizeof(*in));
	const struct tfk_tensor **out = tfk_calloc((size_t)n_out + 1,
						   sizeof(*out));
	struct tfk_err err;
	struct job *j, *next;
	int rc = 0;

	for (k = 0; k < c->n_allowed; k++)
		if (c->allowed[k] >= rows) {
			padded = c->allowed[k];
			break;
		}
	if (!in || !out) {
		rc = tfk_errf(&err, TFK_ENOMEM, "out of memory");
		goto done;
	}
	for (i = 0; i < n_in && !rc; i++) {
		const struct tfk_tensor *t0 = &list->in[i];

		memcpy(shape, t0->shape, sizeof(shape[0]) * (size_t)t0->rank);
		shape[0] = padded;
		if ((rc = tfk_tensor_init(&in[i], t0->dtype, t0->rank, shape,
					  &err)))
			break;
		for (off = 0, j = list; j && !rc; off += j->rows, j = j->next)
			rc = copy_rows(&in[i], off, &j->in[i], 0, j->rows,
				       &err);
		for (; off < padded && !rc; off++)	/* padding */
			rc = copy_rows(&in[i], off, &in[i], rows - 1, 1, &err);
	}
	if (!rc)
		rc = tfk_runner_run(r, in, out, &err);
	if (!rc)
		sv_metrics_batch(b->v->metrics, b->v->model, b->sig->key, rows,
				 padded);
	for (off = 0, j = list; j && !rc; off += j->rows, j = j->next) {
		j->out->t = tfk_calloc((size_t)n_out + 1, sizeof(*j->out->t));
		if (!j->out->t) {
			rc = tfk_errf(&err, TFK_ENOMEM, "out of memory");
			break;
		}
		j->out->n = n_out;
		for (k = 0; k < n_out && !rc; k++)
			rc = slice(&j->out->t[k], out[k], padded, off,
				   j->rows, &err);
	}
done:
	for (i = 0; in && i < n_in; i++)
		tfk_tensor_release(&in[i]);
	tfk_free(in);
	tfk_free(out);
	pthread_mutex_lock(&b->lock);
	for (j = list; j; j = next) {
		/* a job is its waiter's, gone once it sees done: read first */
		next = j->next;
		j->rc = rc;
		if (rc) {
			*j->err = err;
			sv_outputs_release(j->out);
		}
		j->done = 1;
		pthread_cond_signal(&j->cv);
	}
	pthread_mutex_unlock(&b->lock);
}

static void *batch_thread(void *arg)
{
	struct sv_batcher *b = arg;
	const struct tfk_batch_config *c = b->cfg;
	struct tfk_runner_opts ro = { 0 };
	struct tfk_runner *r = NULL;
	struct tfk_err err;

	ro.threads = 1;
	ro.any_shape = 1;
	if (tfk_runner_new(&r, b->v->s, b->sig, NULL, -1, &ro, &err)) {
		tfk_cli_warn("model %s: version %" PRId64 ": a batch thread "
			     "has no runner: %s", b->v->model, b->v->num,
			     err.msg);
		r = NULL;
	}
	pthread_mutex_lock(&b->lock);
	while (!b->stop) {
		struct job *list, *last, *j;
		int64_t rows;
		double deadline;

		if (!b->head) {
			pthread_cond_wait(&b->work, &b->lock);
			continue;
		}
		deadline = b->head->arrived + c->batch_timeout_micros / 1e6;
		while (!b->stop && b->head && b->queued_rows <
		       c->max_batch_size && now() < deadline) {
			struct timespec ts;
			double wake;

			clock_gettime(CLOCK_REALTIME, &ts);
			wake = (double)ts.tv_sec + ts.tv_nsec / 1e9 +
				(deadline - now());
			ts.tv_sec = (time_t)wake;
			ts.tv_nsec = (long)((wake - (double)ts.tv_sec) * 1e9);
			pthread_cond_timedwait(&b->work, &b->lock, &ts);
		}
		if (b->stop || !b->head)
			continue;
		/* take jobs in order while they fit and stack */
		list = last = b->head;
		rows = list->rows;
		while (last->next && rows + last->next->rows <=
		       c->max_batch_size && same_kind(list, last->next)) {
			last = last->next;
			rows += last->rows;
		}
		b->head = last->next;
		if (!b->head)
			b->tail = NULL;
		last->next = NULL;
		b->queued_rows -= rows;
		/* what is left is another batch thread's to start */
		if (b->head)
			pthread_cond_signal(&b->work);
		pthread_mutex_unlock(&b->lock);
		if (r) {
			run_batch(b, r, list, rows);
		} else {
			struct job *next;

			pthread_mutex_lock(&b->lock);
			for (j = list; j; j = next) {
				next = j->next;
				j->rc = tfk_errf(j->err, TFK_EINVAL, "%s",
						 err.msg);
				j->done = 1;
				pthread_cond_signal(&j->cv);
			}
			pthread_mutex_unlock(&b->lock);
		}
		pthread_mutex_lock(&b->lock);
	}
	pthread_mutex_unlock(&b->lock);
	tfk_runner_free(r);
	return NULL;
}

/* v's batcher for signature k, made (threads started) on first use. */
static struct sv_batcher *batcher(struct sv_version *v, int k)
{
	struct sv_batcher *b;
	int i;

	pthread_mutex_lock(&v->batch_lock);
	if ((b = v->batchers[k]) || !(b = tfk_calloc(1, sizeof(*b)))) {
		pthread_mutex_unlock(&v->batch_lock);
		return b;
	}
	b->v = v;
	b->sig = tfk_servable_signature(v->s, k);
	b->cfg = v->batching;
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->work, NULL);
	b->n_threads = (int)b->cfg->num_batch_threads;
	if (b->n_threads < 1)
		b->n_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (b->n_threads < 1)
		b->n_threads = 1;
	b->th = tfk_calloc((size_t)b->n_threads, sizeof(*b->th));
	for (i = 0; b->th && i < b->n_threads; i++)
		if (pthread_create(&b->th[i], NULL, batch_thread, b))
			break;
	if (!b->th || !i) {
		tfk_free(b->th);
		pthread_mutex_destroy(&b->lock);
		pthread_cond_destroy(&b->work);
		tfk_free(b);
		pthread_mutex_unlock(&v->batch_lock);
		return NULL;
	}
	b->n_threads = i;
	v->batchers[k] = b;
	pthread_mutex_unlock(&v->batch_lock);
	return b;
}

void sv_batchers_free(struct sv_version *v)
{
	int k, i;

	for (k = 0; v->batchers && k < v->n_sigs; k++) {
		struct sv_batcher *b = v->batchers[k];

		if (!b)
			continue;
		pthread_mutex_lock(&b->lock);
		b->stop = 1;
		pthread_cond_broadcast(&b->work);
		pthread_mutex_unlock(&b->lock);
		for (i = 0; i < b->n_threads; i++)
			pthread_join(b->th[i], NULL);
		tfk_free(b->th);
		pthread_mutex_destroy(&b->lock);
		pthread_cond_destroy(&b->work);
		tfk_free(b);
	}
	tfk_free(v->batchers);
	v->batchers = NULL;
}

int sv_run(struct sv_version *v, const struct tfk_sv_signature *sig,
	   struct tfk_runner *r, struct tfk_tensor *in,
	   const struct tfk_tensor **out, struct sv_outputs *own,
	   struct tfk_err *err)
{
	const struct tfk_batch_config *c = v->batching;
	struct sv_batcher *b;
	struct job j;
	int k, i, n_in = tfk_runner_n_inputs(r);

	own->t = NULL;
	own->n = 0;
	for (k = 0; k < v->n_sigs; k++)
		if (tfk_servable_signature(v->s, k) == sig)
			break;
	for (i = 0; i < n_in; i++)
		if (in[i].rank < 1 || in[i].shape[0] != in[0].shape[0])
			break;
	if (!c || !v->batchers || k == v->n_sigs || !n_in || i < n_in)
		return tfk_runner_run(r, in, out, err);
	if (in[0].shape[0] > c->max_batch_size)
		return tfk_errf(err, TFK_EINVAL, "Task size %" PRId64 " is "
				"larger than maximum batch size %" PRId64,
				in[0].shape[0], c->max_batch_size);
	if (!in[0].shape[0])
		return tfk_runner_run(r, in, out, err);
	if (!(b = batcher(v, k)))
		return tfk_errf(err, TFK_ENOMEM, "out of memory for a batch "
				"queue");
	memset(&j, 0, sizeof(j));
	j.in = in;
	j.n_in = n_in;
	j.rows = in[0].shape[0];
	j.arrived = now();
	j.out = own;
	j.err = err;
	pthread_cond_init(&j.cv, NULL);
	pthread_mutex_lock(&b->lock);
	if (b->queued_rows + j.rows > c->max_enqueued_batches *
	    c->max_batch_size) {
		pthread_mutex_unlock(&b->lock);
		pthread_cond_destroy(&j.cv);
		tfk_errf(err, SV_EFULL, "The batch scheduling queue to which "
			 "this task was submitted is full");
		return SV_EFULL;
	}
	if (b->tail)
		b->tail->next = &j;
	else
		b->head = &j;
	b->tail = &j;
	b->queued_rows += j.rows;
	/* a batch thread waits for a first job, or for a batch to fill
	 * before its timeout: only those two news wake it (one wake per
	 * request cost more than the batching saved) */
	if (b->head == &j || b->queued_rows >= c->max_batch_size)
		pthread_cond_signal(&b->work);
	while (!j.done)
		pthread_cond_wait(&j.cv, &b->lock);
	pthread_mutex_unlock(&b->lock);
	pthread_cond_destroy(&j.cv);
	if (j.rc)
		return j.rc;
	for (i = 0; i < own->n; i++)
		out[i] = &own->t[i];
	return 0;
}
