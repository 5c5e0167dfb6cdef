/*
 * inputsvc.c - the input service's workers, dispatcher and trainer end.
 */
#include "inputsvc.h"

#include "io/crc32c.h"
#include "io/record.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/mpi.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

enum { TAG_WANT = 11, TAG_REPLY, TAG_REQ, TAG_SPLIT, TAG_STOP };
enum { KIND_DATA = 1, KIND_END = 2 };

#define CHUNK_BYTES ((size_t)4 << 20)
/* the pipeline's tools are not ranks: no sharding from MPI's variables */
#define UNSET "unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMIX_RANK " \
	"PMI_RANK; "

static void put32(struct tfk_buf *b, uint32_t v)
{
	tfk_buf_add(b, &v, sizeof(v));
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2));

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Workers ------------------------------------------------------------------ */

struct worker {
	const struct svc_opts *o;
	int me, wid;
	int pass, pass_done, next;	/* next: parallel mode's split */
	FILE *pipe;
	struct tfk_rec_reader *rd;
	int split;			/* the split the pipe reads */
	char *cmd;
	const char *shown;		/* cmd as the user wrote it */
};

/* Splits ------------------------------------------------------------------- */

static int add_split(struct svc_split **v, int *n, int *cap, const char *file,
		     int64_t off, int64_t len, struct tfk_err *err)
{
	if (*n == *cap) {
		int nc = *cap ? *cap * 2 : 64;
		struct svc_split *g = tfk_realloc(*v, (size_t)nc * sizeof(*g));

		if (!g)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		*v = g;
		*cap = nc;
	}
	(*v)[(*n)++] = (struct svc_split){ file, off, len };
	return 0;
}

/* file's records in ranges of per, by their length fields alone. */
static int cut_file(const char *path, long per, struct svc_split **v,
		    int *n, int *cap, struct tfk_err *err)
{
	FILE *f = fopen(path, "rb");
	int64_t at = 0, start = 0;
	long in_split = 0;
	uint8_t h[12];
	int rc = 0;

	if (!f)
		return tfk_errf(err, TFK_EIO, "%s: %s", path, strerror(errno));
	for (;;) {
		size_t got = fread(h, 1, sizeof(h), f);
		uint64_t len;

		if (got == 0 && !ferror(f))
			break;
		memcpy(&len, h, 8);
		if (got < sizeof(h) ||
		    tfk_crc32c_mask(tfk_crc32c(h, 8)) != get32(h + 8)) {
			rc = tfk_errf(err, TFK_ECORRUPT, "%s: offset %" PRId64
				      ": %s (record ranges need a plain "
				      "TFRecord file)", path, at,
				      got < sizeof(h) ? "truncated record "
				      "header" : "bad length CRC");
			break;
		}
		if (len > (uint64_t)INT64_MAX / 2 ||
		    fseeko(f, (off_t)len + 4, SEEK_CUR)) {
			rc = tfk_errf(err, TFK_ECORRUPT, "%s: offset %" PRId64
				      ": bad record length", path, at);
			break;
		}
		at += 16 + (int64_t)len;
		if (++in_split == per) {
			if ((rc = add_split(v, n, cap, path, start, at - start,
					    err)))
				break;
			start = at;
			in_split = 0;
		}
	}
	if (!rc && ferror(f))
		rc = tfk_errf(err, TFK_EIO, "%s: %s", path, strerror(errno));
	fclose(f);
	if (!rc && in_split)
		rc = add_split(v, n, cap, path, start, at - start, err);
	return rc;
}

int svc_cut(const char *const *files, int n, long per,
	    struct svc_split **out, int *n_out, struct tfk_err *err)
{
	int i, cap = 0, rc = 0;

	*out = NULL;
	*n_out = 0;
	for (i = 0; i < n && !rc; i++)
		rc = per > 0 ? cut_file(files[i], per, out, n_out, &cap, err) :
			add_split(out, n_out, &cap, files[i], 0, -1, err);
	if (rc) {
		tfk_free(*out);
		*out = NULL;
		*n_out = 0;
	}
	return rc;
}

/*
 * The pipeline's command line for split s: "{}" the file, shell-quoted,
 * "{seed}" its seed; no "{}": the file on its standard input. A range
 * of a file comes on the standard input ("{}" then /dev/stdin), cut by
 * tail and head.
 */
static char *command(const struct worker *wk, int s)
{
	const struct svc_split *sp = &wk->o->splits[s];
	const char *t = wk->o->pipeline, *f = sp->file;
	uint64_t sd = mix(mix(wk->o->seed, (uint64_t)wk->pass),
			  wk->o->parallel ? (uint64_t)wk->wid : (uint64_t)s);
	int braces = !strstr(t, "{}") || sp->len >= 0;
	struct tfk_buf b, q;

	tfk_buf_init(&b);
	tfk_buf_init(&q);
	tfk_buf_adds(&b, UNSET);
	tfk_buf_addc(&q, '\'');
	for (; *f; f++)
		if (*f == '\'')
			tfk_buf_adds(&q, "'\\''");
		else
			tfk_buf_addc(&q, *f);
	tfk_buf_addc(&q, '\'');
	if (sp->len >= 0) {
		tfk_buf_addf(&b, "tail -c +%" PRId64 " ", sp->off + 1);
		tfk_buf_add(&b, q.data, q.len);
		tfk_buf_addf(&b, " | head -c %" PRId64 " | ", sp->len);
	}
	if (braces)
		tfk_buf_adds(&b, "{ ");
	while (*t) {
		if (!strncmp(t, "{}", 2)) {
			if (sp->len >= 0)
				tfk_buf_adds(&b, "/dev/stdin");
			else
				tfk_buf_add(&b, q.data, q.len);
			t += 2;
		} else if (!strncmp(t, "{seed}", 6)) {
			tfk_buf_addf(&b, "%" PRIu64, sd % 2147483647u);
			t += 6;
		} else {
			tfk_buf_addc(&b, *t++);
		}
	}
	if (braces)
		tfk_buf_adds(&b, "\n}");
	if (braces && sp->len < 0) {
		tfk_buf_adds(&b, " < ");
		tfk_buf_add(&b, q.data, q.len);
	}
	tfk_buf_addc(&b, '\0');
	tfk_buf_release(&q);
	if (!tfk_buf_ok(&b)) {
		tfk_buf_release(&b);
		return NULL;
	}
	return (char *)b.data;
}

/* A split for messages: "FILE" or "FILE bytes A-B". */
static const char *split_name(const struct svc_split *sp, char *buf,
			      size_t n)
{
	if (sp->len < 0)
		return sp->file;
	snprintf(buf, n, "%s bytes %" PRId64 "-%" PRId64, sp->file, sp->off,
		 sp->off + sp->len);
	return buf;
}

/* The next split of this pass, or -1. */
static int next_split(struct worker *wk, struct tfk_err *err)
{
	int32_t q = wk->pass, s;

	if (wk->o->parallel)
		return wk->next < wk->o->n_splits ? wk->next++ : -1;
	if (tfk_mpi_send(&q, sizeof(q), 0, TAG_REQ, err) ||
	    tfk_mpi_recv(&s, sizeof(s), 0, TAG_SPLIT, err))
		return -2;
	return s;
}

static int open_split(struct worker *wk, int s, struct tfk_err *err)
{
	char path[64];
	int rc;

	tfk_free(wk->cmd);
	wk->cmd = command(wk, s);
	if (!wk->cmd)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	wk->shown = wk->cmd + strlen(UNSET);
	fflush(NULL);
	wk->pipe = popen(wk->cmd, "r");
	if (!wk->pipe)
		return tfk_errf(err, TFK_EIO, "input pipeline '%s': %s",
				wk->shown, strerror(errno));
	snprintf(path, sizeof(path), "/dev/fd/%d", fileno(wk->pipe));
	rc = tfk_rec_open(&wk->rd, path, TFK_COMP_AUTO, 0, err);
	if (rc)
		tfk_err_prefix(err, "input pipeline '%s'", wk->shown);
	wk->split = s;
	return rc;
}

static int close_split(struct worker *wk, struct tfk_err *err)
{
	char name[512];
	int st;

	tfk_rec_close(wk->rd);
	wk->rd = NULL;
	st = pclose(wk->pipe);
	wk->pipe = NULL;
	if (st == 0)
		return 0;
	return tfk_errf(err, TFK_EIO, "input pipeline '%s' (split %s) %s %d",
			wk->shown, split_name(&wk->o->splits[wk->split], name,
					      sizeof(name)),
			WIFEXITED(st) ? "exited with status" :
			"was killed by signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

/* A chunk of this pass's records into b (after its header): up to max
 * records and CHUNK_BYTES; fewer (or none) when the pass's splits run
 * out. */
static int fill_chunk(struct worker *wk, struct tfk_buf *b, int max,
		      struct tfk_err *err)
{
	struct tfk_rec rec;
	int rc, s, n = 0;

	while (b->len < CHUNK_BYTES && n < max) {
		if (!wk->rd) {
			if (wk->pass_done)
				return 0;
			s = next_split(wk, err);
			if (s == -2)
				return TFK_EIO;
			if (s < 0) {
				wk->pass_done = 1;
				return 0;
			}
			if ((rc = open_split(wk, s, err)))
				return rc;
		}
		rc = tfk_rec_next(wk->rd, &rec, err);
		if (rc < 0) {
			tfk_err_prefix(err, "input pipeline '%s'", wk->shown);
			return rc;
		}
		if (rc == 0) {
			if ((rc = close_split(wk, err)))
				return rc;
			continue;
		}
		if (rec.len > UINT32_MAX - 16)
			return tfk_errf(err, TFK_EINVAL, "input pipeline '%s': "
					"a record of %zu bytes", wk->shown,
					rec.len);
		put32(b, (uint32_t)rec.len);
		tfk_buf_add(b, rec.data, rec.len);
		n++;
	}
	return tfk_buf_ok(b) ? 0 : tfk_errf(err, TFK_ENOMEM, "out of memory");
}

int svc_worker(const struct svc_opts *o, struct tfk_err *err)
{
	struct worker wk = { o, tfk_mpi_world_rank(), 0, 0, 0, 0, NULL,
			     NULL, -1, NULL, NULL };
	struct tfk_buf b;
	int rc = 0, ready = 0;	/* b holds the next reply */

	wk.wid = wk.me - o->trainers;
	tfk_buf_init(&b);
	while (!rc) {
		int src, tag;
		size_t n;
		int32_t msg[2] = { 0, 0 };

		tfk_mpi_peek(TFK_MPI_ANY, TFK_MPI_ANY, 1, &src, &tag, &n);
		if (n > sizeof(msg) || (tag != TAG_WANT && tag != TAG_STOP)) {
			rc = tfk_errf(err, TFK_EINVAL, "unexpected message %d "
				      "from rank %d", tag, src);
			break;
		}
		tfk_mpi_recv(msg, n, src, tag, err);
		if (tag == TAG_STOP)
			break;
		if (msg[0] > wk.pass) {		/* the trainers moved on */
			wk.pass = msg[0];
			wk.pass_done = 0;
			wk.next = 0;
			ready = 0;
		}
		/* the reply, then the next one made ahead while the
		 * trainers train (the one asking waits for this reply) */
		for (int k = 0; !rc && k < 2; k++) {
			if (!ready) {
				b.len = 0;
				put32(&b, KIND_DATA);
				put32(&b, (uint32_t)wk.pass);
				rc = fill_chunk(&wk, &b, msg[1] > 0 ?
						msg[1] : INT32_MAX, err);
				if (!rc && b.len == 8)	/* the pass is over */
					memcpy(b.data, &(uint32_t){ KIND_END },
					       4);
				ready = !rc;
			}
			if (!rc && !k) {
				rc = tfk_mpi_send(b.data, b.len, src,
						  TAG_REPLY, err);
				ready = 0;
			}
		}
	}
	if (wk.rd)
		tfk_rec_close(wk.rd);
	if (wk.pipe)
		pclose(wk.pipe);
	tfk_free(wk.cmd);
	tfk_buf_release(&b);
	if (rc)
		tfk_err_prefix(err, "input worker (rank %d)", wk.me);
	return rc;
}

/* Trainers ----------------------------------------------------------------- */

struct svc_in {
	const struct svc_opts *o;
	int32_t rows;		/* records asked for at a time */
	int k;			/* workers: world ranks trainers .. + k */
	int pass;
	unsigned char *ended;
	int last;		/* the worker asked last */
	uint8_t *chunk;		/* the chunk being read, cap bytes */
	size_t len, pos, cap;
	FILE *log;
	pthread_t disp;
	int dispatching;
};

/* The dispatcher (rank 0, its own thread): the splits of each pass, in
 * order, one per request, then -1; a request for pass -1 ends it. */
static void *dispatch(void *arg)
{
	struct svc_in *in = arg;
	int32_t cur = 0, next = 0;
	struct tfk_err e;

	for (;;) {
		int32_t q, s;
		int src, tag;
		size_t n;

		tfk_mpi_peek(TFK_MPI_ANY, TAG_REQ, 1, &src, &tag, &n);
		tfk_mpi_recv(&q, sizeof(q), src, TAG_REQ, &e);
		if (q < 0)
			break;
		if (q > cur) {
			cur = q;
			next = 0;
		}
		s = q < cur || next >= in->o->n_splits ? -1 : next++;
		tfk_mpi_send(&s, sizeof(s), src, TAG_SPLIT, &e);
	}
	return NULL;
}

int svc_in_new(struct svc_in **inp, const struct svc_opts *o,
	       struct tfk_err *err)
{
	struct svc_in *in = tfk_calloc(1, sizeof(*in));

	*inp = NULL;
	if (!in)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	in->o = o;
	in->rows = o->chunk_records > 0 ? o->chunk_records : INT32_MAX;
	in->k = tfk_mpi_world_size() - o->trainers;
	in->ended = tfk_calloc((size_t)in->k, 1);
	in->last = tfk_mpi_rank() % in->k - 1;	/* trainers start apart */
	if (!in->ended) {
		svc_in_end(in, NULL);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	if (o->log) {
		char path[4200];

		snprintf(path, sizeof(path), "%s.%d", o->log,
			 tfk_mpi_world_rank());
		in->log = fopen(path, "w");
		if (!in->log) {
			svc_in_end(in, NULL);
			return tfk_errf(err, TFK_EIO, "--input-log %s: %s",
					path, strerror(errno));
		}
	}
	if (!tfk_mpi_world_rank() && !o->parallel) {
		if (pthread_create(&in->disp, NULL, dispatch, in)) {
			svc_in_end(in, NULL);
			return tfk_errf(err, TFK_ENOMEM, "no thread for the "
					"dispatcher");
		}
		in->dispatching = 1;
	}
	*inp = in;
	return 0;
}

int svc_in_next(struct svc_in *in, const uint8_t **p, size_t *n,
		struct tfk_err *err)
{
	for (;;) {
		int src, tag, w, done = 1;
		size_t len;
		uint8_t *msg;

		if (in->pos + 4 <= in->len) {
			uint32_t k = get32(in->chunk + in->pos);

			if (k > in->len - in->pos - 4)
				return tfk_errf(err, TFK_ECORRUPT, "input "
						"service: a chunk cut short");
			*p = in->chunk + in->pos + 4;
			*n = k;
			in->pos += 4 + (size_t)k;
			if (in->log)
				fprintf(in->log, "%d\t%08" PRIx32 "\n",
					in->pass, tfk_crc32c(*p, k));
			return 1;
		}
		/* ask one worker, the next after the last asked that still
		 * has records, and wait for it: a worker only ever sends
		 * to a trainer that is receiving (no deadlock with the
		 * trainers' gradient sums) */
		for (int i = 1; i <= in->k; i++) {
			int32_t q[2] = { in->pass, in->rows };

			w = (in->last + i) % in->k;
			if (in->ended[w])
				continue;
			done = 0;
			if (tfk_mpi_send(q, sizeof(q), in->o->trainers + w,
					 TAG_WANT, err))
				return TFK_EIO;
			in->last = w;
			break;
		}
		if (done)
			return 0;
		tfk_mpi_peek(in->o->trainers + w, TAG_REPLY, 1, &src, &tag,
			     &len);
		if (w < 0 || w >= in->k || len < 8)
			return tfk_errf(err, TFK_EINVAL, "input service: a "
					"bad reply from rank %d", src);
		/* the last chunk is used up: its buffer takes this one */
		if (len > in->cap) {
			msg = tfk_realloc(in->chunk, len);
			if (!msg)
				return tfk_errf(err, TFK_ENOMEM,
						"out of memory");
			in->chunk = msg;
			in->cap = len;
		}
		msg = in->chunk;
		in->pos = in->len = 0;
		tfk_mpi_recv(msg, len, src, TAG_REPLY, err);
		if (get32(msg) == KIND_END || (int)get32(msg + 4) != in->pass) {
			in->ended[w] = get32(msg) == KIND_END;
			continue;
		}
		in->len = len;
		in->pos = 8;
	}
}

void svc_in_next_pass(struct svc_in *in)
{
	in->pass++;
	memset(in->ended, 0, (size_t)in->k);
	in->pos = in->len = 0;
}

int svc_in_end(struct svc_in *in, struct tfk_err *err)
{
	int rc = 0;

	if (!in)
		return 0;
	if (!tfk_mpi_world_rank() && err) {
		int32_t stop = -1;

		for (int w = 0; !rc && w < in->k; w++)
			rc = tfk_mpi_send(&stop, sizeof(stop),
					  in->o->trainers + w, TAG_STOP, err);
		if (in->dispatching) {
			tfk_mpi_send(&stop, sizeof(stop), 0, TAG_REQ, err);
			pthread_join(in->disp, NULL);
		}
	}
	if (in->log && fclose(in->log) && !rc && err)
		rc = tfk_errf(err, TFK_EIO, "--input-log: %s", strerror(errno));
	tfk_free(in->ended);
	tfk_free(in->chunk);
	tfk_free(in);
	return rc;
}
