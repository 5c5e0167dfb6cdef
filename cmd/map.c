/*
 * tfk-map: apply Keras preprocessing layers to named features.
 *
 * The counterpart of dataset.map(preprocessing_model) where the model is
 * a stack of Keras preprocessing layers: the spec (lib/nn/preprocess.h,
 * tfk-map(1)) holds the layers' own get_config() JSON per feature, the
 * layers become ops of the graph IR, and each record runs that graph.
 *
 * Records stream through tfk_pool_stream (ordered) on -j threads, each
 * with its own executor, example decoder and image decoder: the thread
 * that claims a record reads it into the record's input buffer (reads
 * take turns, in order, and overlap the other threads' mapping), maps
 * it and frames its output record in the record's output buffer, so
 * the only serial steps are the read copy and the ordered write. A
 * record's random draws come from the executor's key for (seed, step =
 * the record's position in the whole input), so -j never changes the
 * output. The graph is built when the
 * first record arrives: the feature kinds decide the placeholder dtypes
 * (bytes -> uint8 image, float_list -> float32, int64_list -> int64).
 *
 * Output: every input feature passes through, except those named as an
 * output (or "OUT/shape"); each chain's result is written under its
 * output name - float32 as a float_list, uint8 as raw bytes, integers as
 * an int64_list - and, when its rank is 2 or more, its shape as the
 * int64_list "OUT/shape" (e.g. [180, 180, 3]), since a flat list loses
 * it.
 *
 * --adapt runs the layers before each Normalization without mean and
 * variance over the data and writes their per-channel mean and
 * (population) variance into the spec, as layer.adapt() does; likewise
 * vocabularies of TextVectorization, StringLookup and IntegerLookup
 * (token counts over the feature's values) and Discretization's
 * bin_boundaries (Keras' quantile summary, one record one batch).
 *
 * --profile/--trace (profile-opts.h) record the whole run: per record a
 * step "map" on the thread that maps it (numbered from 1 in input
 * order) holding the executor's op and memory events, and the pipeline
 * stages "read" (the record copied in) and "write" (the ordered write).
 */
#include "prep/image.h"
#include "example/example.h"
#include "graph/exec.h"
#include "graph/graph.h"
#include "io/out.h"
#include "io/record.h"
#include "nn/preprocess.h"
#include "util/alloc.h"
#include "util/cli.h"
#include "util/pool.h"

#include "profile-opts.h"

#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *out_path = "-", *comp_arg = "none";
static long seed, jobs = 1;
static int adapt, verbose;

static const struct tfk_opt opts[] = {
	TFK_OPT_STR('o', "output", &out_path, "FILE",
		    "write records (with --adapt: the spec) to FILE, "
		    "atomically (-: stdout)"),
	TFK_OPT_LONG('j', "jobs", &jobs, "N", "map on N threads"),
	TFK_OPT_LONG(0, "seed", &seed, "S", "seed of the random layers"),
	TFK_OPT_FLAG(0, "adapt", &adapt, "learn Normalization statistics, "
		     "vocabularies and bin boundaries from the data and "
		     "write the spec"),
	TFK_OPT_STR(0, "compression", &comp_arg, "TYPE",
		    "compress the output: none, gzip or zlib"),
	TFK_OPT_FLAG('v', "verbose", &verbose, "report counts on stderr"),
	PROFILE_OPTS,
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-map",
	"[options] SPEC.json [FILE...]",
	"apply Keras preprocessing layers to features of tf.Example records",
	"tfk-map --seed 1 -j 2 prep.json train.tfrecord | tfk-batch 32\n"
	"  tfk-map --adapt prep.json train.tfrecord -o prep-adapted.json",
};

/* One record: its bytes and where it came from. */
struct item {
	size_t len;
	const char *path;
	uint64_t index, byte;	/* record number in its file, offset */
};

struct worker {
	struct tfk_exec *x;
	struct tfk_example ex;
	struct tfk_img *img;	/* one per chain */
	float **fbuf;		/* per chain scratch */
	int64_t **ibuf;
	struct tfk_str **sbuf;
	size_t *fcap, *icap, *scap;
	struct tfk_tensor *feeds;
	const struct tfk_tensor **fetched;
	struct worker *next_free;
};

struct slot {
	struct item it;		/* filled by read_one */
	int rc;
	struct tfk_err err;
	uint8_t *framed;	/* the output record, framed, in outb[] */
	size_t len;
};

/* Input records and output builders, one each per item in flight:
 * tfk_pool_stream keeps at most `window` items between read and
 * deliver, so item i may use inring[i % window] and outb[i % window],
 * and the buffers are reused (and stay in cache) instead of a malloc
 * and free per record (large frees are munmaps, costly across
 * threads). Workers frame the output records in place in the builder's
 * room (TFRecord header and CRCs), so the ordered deliver step only
 * writes, and an output record is never copied before the write. */
struct ringbuf {
	uint8_t *p;
	size_t cap;
};
static struct ringbuf *inring;
static struct tfk_example_builder *outb;
_Static_assert(TFK_EXB_ROOM_BEFORE >= TFK_REC_HEADER &&
	       TFK_EXB_ROOM_AFTER >= TFK_REC_FOOTER, "frame in place");

/* The context of a mapping run: the input, deliver's error (err,
 * failed: it failed) and read_one's (rerr). */
struct stream {
	struct reader *rd;
	struct tfk_err *err;
	int failed;
	struct tfk_err rerr;
};
static size_t window;

static struct tfk_prep *prep;
static struct tfk_graph *graph;
static int n_chain;
static enum tfk_dtype *dtypes;
static struct worker *workers;
static struct worker *free_list;
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;

static struct tfk_rec_writer *w;
static uint64_t n_out;

static enum tfk_dtype kind_dtype(const struct tfk_prep_input *in, int kind)
{
	switch (kind) {
	case TFK_FEAT_BYTES:
		return in->decode || in->rank >= 0 ? TFK_DT_UINT8 :
			TFK_DT_STRING;
	case TFK_FEAT_FLOAT:
		return TFK_DT_FLOAT;
	case TFK_FEAT_INT64:
		return TFK_DT_INT64;
	}
	return TFK_DT_INVALID;
}

static int where(struct tfk_err *err, const struct item *it)
{
	return tfk_err_prefix(err, "%s: record %" PRIu64 " at byte %" PRIu64,
			      it->path, it->index, it->byte);
}

/* Make the feed tensor of chain i from feature f. */
static int make_feed(struct worker *wk, int i, const struct tfk_feat *f,
		     struct tfk_err *err)
{
	const struct tfk_prep_input *in = tfk_prep_input(prep, i);
	struct tfk_tensor *t = &wk->feeds[i];
	int64_t shape[TFK_MAX_RANK], numel = 1;
	int rank = in->rank, k, rc;
	enum tfk_dtype want = kind_dtype(in, f->kind);

	if (want != dtypes[i])
		return tfk_errf(err, TFK_EINVAL, "feature '%s': expected a %s "
				"list, got %s", in->feature,
				dtypes[i] == TFK_DT_UINT8 ||
				dtypes[i] == TFK_DT_STRING ? "bytes" :
				dtypes[i] == TFK_DT_FLOAT ? "float" : "int64",
				tfk_feat_kind_name(f->kind));
	for (k = 0; k < rank; k++) {
		shape[k] = in->shape[k];
		numel *= in->shape[k];
	}
	if (f->kind == TFK_FEAT_BYTES && dtypes[i] == TFK_DT_STRING) {
		const uint8_t *p;
		size_t len, it = 0, k = 0;
		struct tfk_str *v;

		if (wk->scap[i] < f->n + 1) {
			v = tfk_realloc(wk->sbuf[i], (f->n + 1) * sizeof(*v));
			if (!v)
				return tfk_errf(err, TFK_ENOMEM, "out of "
						"memory");
			wk->sbuf[i] = v;
			wk->scap[i] = f->n + 1;
		}
		v = wk->sbuf[i];
		while (k < f->n && tfk_feat_bytes_next(f, &it, &p, &len)) {
			v[k].ptr = (const char *)p;
			v[k++].len = len;
		}
		shape[0] = (int64_t)f->n;
		return tfk_tensor_init_view(t, TFK_DT_STRING, 1, shape, v,
					    f->n * sizeof(*v),
					    TFK_OWN_BORROWED, err);
	}
	if (f->kind == TFK_FEAT_BYTES) {
		const uint8_t *p;
		size_t len, it = 0;

		if (f->n != 1 || !tfk_feat_bytes_next(f, &it, &p, &len))
			return tfk_errf(err, TFK_EINVAL, "feature '%s': "
					"expected one bytes value, got %zu",
					in->feature, f->n);
		if (in->decode) {
			struct tfk_img_opts o = TFK_IMG_OPTS_DEFAULT;

			o.channels = in->channels;
			rc = tfk_img_decode(&wk->img[i], p, len, &o, err);
			if (rc)
				return tfk_err_prefix(err, "feature '%s'",
						      in->feature);
			shape[0] = wk->img[i].height;
			shape[1] = wk->img[i].width;
			shape[2] = wk->img[i].channels;
			return tfk_tensor_init_view(t, TFK_DT_UINT8, 3, shape,
				wk->img[i].data, (size_t)shape[0] * shape[1] *
				shape[2], TFK_OWN_BORROWED, err);
		}
		if ((int64_t)len != numel)
			return tfk_errf(err, TFK_EINVAL, "feature '%s': %zu "
					"bytes, but shape %s needs %" PRId64,
					in->feature, len,
					tfk_shape_str(rank, shape,
						      (char[128]){ 0 }, 128),
					numel);
		return tfk_tensor_init_view(t, TFK_DT_UINT8, rank, shape,
					    (void *)p, len, TFK_OWN_BORROWED,
					    err);
	}
	if (rank < 0) {
		rank = 1;
		shape[0] = (int64_t)f->n;
		numel = shape[0];
	} else if ((int64_t)f->n != numel) {
		return tfk_errf(err, TFK_EINVAL, "feature '%s': %zu values, "
				"but shape %s needs %" PRId64, in->feature,
				f->n, tfk_shape_str(rank, shape,
						    (char[128]){ 0 }, 128),
				numel);
	}
	if (f->kind == TFK_FEAT_FLOAT) {
		if (wk->fcap[i] < f->n + 1) {
			float *nb = tfk_realloc(wk->fbuf[i],
						(f->n + 1) * sizeof(float));
			if (!nb)
				return tfk_errf(err, TFK_ENOMEM, "out of "
						"memory");
			wk->fbuf[i] = nb;
			wk->fcap[i] = f->n + 1;
		}
		tfk_feat_floats(f, wk->fbuf[i], f->n);
		return tfk_tensor_init_view(t, TFK_DT_FLOAT, rank, shape,
					    wk->fbuf[i], f->n * sizeof(float),
					    TFK_OWN_BORROWED, err);
	}
	if (wk->icap[i] < f->n + 1) {
		int64_t *nb = tfk_realloc(wk->ibuf[i],
					  (f->n + 1) * sizeof(int64_t));
		if (!nb)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		wk->ibuf[i] = nb;
		wk->icap[i] = f->n + 1;
	}
	tfk_feat_int64s(f, wk->ibuf[i], f->n);
	return tfk_tensor_init_view(t, TFK_DT_INT64, rank, shape, wk->ibuf[i],
				    f->n * sizeof(int64_t), TFK_OWN_BORROWED,
				    err);
}

/* Is name (len bytes) an output or an output's "/shape"? */
static int replaced(const char *name, size_t len)
{
	int i;

	for (i = 0; i < n_chain; i++) {
		const char *o = tfk_prep_input(prep, i)->output;
		size_t n = strlen(o);

		if (len == n && !memcmp(name, o, n))
			return 1;
		if (len == n + 6 && !memcmp(name, o, n) &&
		    !memcmp(name + n, "/shape", 6))
			return 1;
	}
	return 0;
}

static int add_output(struct tfk_example_builder *b, const char *name,
		      const struct tfk_tensor *t, struct tfk_err *err)
{
	int64_t n = tfk_tensor_numel(t), k;
	char sname[512];

	switch (t->dtype) {
	case TFK_DT_FLOAT:
		tfk_exb_add_floats(b, name, t->data, (size_t)n);
		break;
	case TFK_DT_UINT8:
		tfk_exb_add_bytes1(b, name, t->data, (size_t)n);
		break;
	case TFK_DT_INT64:
		tfk_exb_add_int64s(b, name, t->data, (size_t)n);
		break;
	case TFK_DT_STRING: {
		const uint8_t **v = tfk_malloc((size_t)(n ? n : 1) *
					       sizeof(*v));
		size_t *l = tfk_malloc((size_t)(n ? n : 1) * sizeof(*l));

		if (!v || !l) {
			tfk_free(v);
			tfk_free(l);
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		}
		for (k = 0; k < n; k++) {
			v[k] = (const uint8_t *)tfk_tensor_str(t, k).ptr;
			l[k] = tfk_tensor_str(t, k).len;
		}
		tfk_exb_add_bytes(b, name, v, l, (size_t)n);
		tfk_free(v);
		tfk_free(l);
		break;
	}
	case TFK_DT_INT32: {
		int64_t *v = tfk_malloc((size_t)(n ? n : 1) * sizeof(*v));

		if (!v)
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		for (k = 0; k < n; k++)
			v[k] = ((const int32_t *)t->data)[k];
		tfk_exb_add_int64s(b, name, v, (size_t)n);
		tfk_free(v);
		break;
	}
	default:
		return tfk_errf(err, TFK_EINVAL, "feature '%s': cannot write "
				"a %s tensor", name, tfk_dtype_name(t->dtype));
	}
	if (t->rank >= 2) {
		snprintf(sname, sizeof(sname), "%s/shape", name);
		tfk_exb_add_int64s(b, sname, t->shape, (size_t)t->rank);
	}
	return 0;
}

static int map_one(struct worker *wk, const uint8_t *rec, uint64_t step,
		   struct slot *s, struct tfk_example_builder *b)
{
	const uint8_t *p;
	size_t k, len;
	int i, rc;

	rc = tfk_example_parse(&wk->ex, rec, s->it.len, &s->err);
	if (rc)
		return tfk_err_prefix(&s->err, "bad tf.Example");
	for (i = 0; i < n_chain; i++) {
		const struct tfk_prep_input *in = tfk_prep_input(prep, i);
		const struct tfk_feat *f = tfk_example_find(&wk->ex,
							     in->feature);

		if (!f)
			return tfk_errf(&s->err, TFK_EINVAL, "feature '%s': "
					"missing", in->feature);
		rc = make_feed(wk, i, f, &s->err);
		if (rc)
			return rc;
	}
	rc = tfk_exec_run(wk->x, wk->feeds, step, wk->fetched, &s->err);
	if (rc)
		return rc;
	tfk_exb_reset(b);
	for (k = 0; k < wk->ex.n_feat; k++) {
		const struct tfk_feat *f = &wk->ex.feat[k];

		if (!replaced(f->name, f->name_len))
			tfk_exb_add_feat(b, f);
	}
	for (i = 0; i < n_chain; i++) {
		rc = add_output(b, tfk_prep_input(prep, i)->output,
				wk->fetched[i], &s->err);
		if (rc)
			return rc;
	}
	rc = tfk_exb_finish(b, &p, &len, &s->err);
	if (rc)
		return rc;
	/* in the builder's room (TFK_EXB_ROOM_BEFORE/AFTER) */
	s->framed = (uint8_t *)p - TFK_REC_HEADER;
	tfk_rec_frame(s->framed, s->framed + TFK_REC_HEADER + len, p, len);
	s->len = len + TFK_REC_HEADER + TFK_REC_FOOTER;
	return 0;
}

static void work(void *ctx, size_t i, void *vslot)
{
	struct slot *s = vslot;
	struct worker *wk;
	uint64_t t0 = tfk_prof_now();

	if (tfk_prof_on()) {
		tfk_prof_thread_name("map");
		tfk_prof_set_step((int64_t)i + 1);
	}
	pthread_mutex_lock(&free_lock);
	wk = free_list;
	free_list = wk->next_free;
	pthread_mutex_unlock(&free_lock);
	s->rc = map_one(wk, inring[i % window].p, i, s, &outb[i % window]);
	tfk_prof_span("map", NULL, t0, tfk_prof_now(), (int64_t)i + 1);
	pthread_mutex_lock(&free_lock);
	wk->next_free = free_list;
	free_list = wk;
	pthread_mutex_unlock(&free_lock);
	(void)ctx;
}

static int deliver(void *ctx, size_t i, void *vslot)
{
	struct slot *s = vslot;
	struct stream *st = ctx;
	struct tfk_err *err = st->err;
	uint64_t t0 = tfk_prof_now();
	int rc = s->rc;

	(void)i;
	if (rc) {
		*err = s->err;
		where(err, &s->it);
		st->failed = 1;
	} else {
		rc = tfk_recw_write_framed(w, s->framed, s->len, err);
		st->failed = rc != 0;
		n_out++;
	}
	tfk_prof_span("write", NULL, t0, tfk_prof_now(), -1);
	return rc;
}

/* Build the graph from the first record's feature kinds (rec, from
 * first) and make the executors. adapt_chain >= 0: the adapt graph of
 * that layer instead. */
static int setup(const uint8_t *rec, const struct item *first,
		 int adapt_chain, int adapt_layer, struct tfk_err *err)
{
	struct tfk_example ex;
	const char **feeds, **fetches;
	int i, rc, n_feed;

	tfk_example_init(&ex);
	rc = tfk_example_parse(&ex, rec, first->len, err);
	if (rc) {
		tfk_example_release(&ex);
		tfk_err_prefix(err, "bad tf.Example");
		return where(err, first);
	}
	for (i = 0; i < n_chain; i++) {
		const struct tfk_prep_input *in = tfk_prep_input(prep, i);
		const struct tfk_feat *f = tfk_example_find(&ex, in->feature);

		if (adapt_chain >= 0 && i != adapt_chain)
			continue;
		if (!f) {
			tfk_example_release(&ex);
			tfk_errf(err, TFK_EINVAL, "feature '%s': missing",
				 in->feature);
			return where(err, first);
		}
		dtypes[i] = kind_dtype(in, f->kind);
		if (dtypes[i] == TFK_DT_INVALID) {
			tfk_example_release(&ex);
			tfk_errf(err, TFK_EINVAL, "feature '%s': has no "
				 "values (kind none)", in->feature);
			return where(err, first);
		}
	}
	tfk_example_release(&ex);
	rc = tfk_graph_new(&graph, err);
	if (rc)
		return rc;
	if (adapt_chain >= 0)
		rc = tfk_prep_build_adapt(prep, graph, adapt_chain,
					  adapt_layer, dtypes[adapt_chain],
					  err);
	else
		rc = tfk_prep_build(prep, graph, dtypes, err);
	if (rc)
		return rc;
	feeds = calloc((size_t)n_chain, sizeof(*feeds));
	fetches = calloc((size_t)n_chain, sizeof(*fetches));
	if (!feeds || !fetches) {
		free(feeds);
		free(fetches);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	n_feed = 0;
	for (i = 0; i < n_chain; i++) {
		if (adapt_chain >= 0 && i != adapt_chain)
			continue;
		feeds[n_feed] = tfk_prep_input(prep, i)->feed;
		fetches[n_feed++] = adapt_chain >= 0 ? "prep/adapt" :
			tfk_prep_input(prep, i)->fetch;
	}
	for (i = 0; i < jobs && !rc; i++) {
		struct tfk_exec_opts o = { NULL, (uint64_t)seed, 1 };

		rc = tfk_exec_new(&workers[i].x, graph, feeds, n_feed,
				  fetches, n_feed, &o, err);
		workers[i].next_free = free_list;
		free_list = &workers[i];
	}
	free(feeds);
	free(fetches);
	return rc;
}

static void teardown(void)
{
	int i;

	for (i = 0; i < jobs; i++) {
		tfk_exec_free(workers[i].x);
		workers[i].x = NULL;
	}
	free_list = NULL;
	tfk_graph_free(graph);
	graph = NULL;
}

static int workers_init(void)
{
	int i;

	window = 4 * (size_t)jobs;
	outb = calloc(window, sizeof(*outb));
	inring = calloc(window, sizeof(*inring));
	workers = calloc((size_t)jobs, sizeof(*workers));
	dtypes = calloc((size_t)n_chain, sizeof(*dtypes));
	if (!workers || !dtypes || !outb || !inring)
		return -1;
	for (i = 0; i < (int)window; i++)
		tfk_exb_init(&outb[i]);
	for (i = 0; i < jobs; i++) {
		struct worker *wk = &workers[i];
		int k;

		tfk_example_init(&wk->ex);
		wk->img = calloc((size_t)n_chain, sizeof(*wk->img));
		wk->fbuf = calloc((size_t)n_chain, sizeof(*wk->fbuf));
		wk->ibuf = calloc((size_t)n_chain, sizeof(*wk->ibuf));
		wk->fcap = calloc((size_t)n_chain, sizeof(*wk->fcap));
		wk->icap = calloc((size_t)n_chain, sizeof(*wk->icap));
		wk->sbuf = calloc((size_t)n_chain, sizeof(*wk->sbuf));
		wk->scap = calloc((size_t)n_chain, sizeof(*wk->scap));
		wk->feeds = calloc((size_t)n_chain, sizeof(*wk->feeds));
		wk->fetched = calloc((size_t)n_chain, sizeof(*wk->fetched));
		if (!wk->img || !wk->fbuf || !wk->ibuf || !wk->fcap ||
		    !wk->icap || !wk->feeds || !wk->fetched || !wk->sbuf ||
		    !wk->scap)
			return -1;
		for (k = 0; k < n_chain; k++)
			tfk_img_init(&wk->img[k]);
	}
	return 0;
}

static void workers_release(void)
{
	int i, k;

	for (i = 0; workers && i < jobs; i++) {
		struct worker *wk = &workers[i];

		tfk_exec_free(wk->x);
		tfk_example_release(&wk->ex);
		for (k = 0; k < n_chain; k++) {
			if (wk->img)
				tfk_img_release(&wk->img[k]);
			if (wk->fbuf)
				tfk_free(wk->fbuf[k]);
			if (wk->ibuf)
				tfk_free(wk->ibuf[k]);
			if (wk->sbuf)
				tfk_free(wk->sbuf[k]);
		}
		free(wk->img);
		free(wk->fbuf);
		free(wk->ibuf);
		free(wk->fcap);
		free(wk->icap);
		free(wk->sbuf);
		free(wk->scap);
		free(wk->feeds);
		free(wk->fetched);
	}
	for (i = 0; outb && i < (int)window; i++)
		tfk_exb_release(&outb[i]);
	for (i = 0; inring && i < (int)window; i++)
		free(inring[i].p);
	free(outb);
	free(inring);
	free(workers);
	free(dtypes);
}

/* Reading ------------------------------------------------------------------ */

struct reader {
	char **files;
	int n_files, fi;
	struct tfk_rec_reader *r;
	uint64_t next;		/* global index of the next record */
};

/* The next record of the input files into rec and it. Returns 1, 0 at
 * the end of the last file, or an error. */
static int reader_next(struct reader *rd, struct tfk_rec *rec,
		       struct item *it, struct tfk_err *err)
{
	int rc;

	for (;;) {
		if (!rd->r) {
			if (rd->fi >= rd->n_files)
				return 0;
			rc = tfk_rec_open(&rd->r, rd->files[rd->fi++],
					  TFK_COMP_AUTO, 0, err);
			if (rc)
				return rc;
		}
		rc = tfk_rec_next(rd->r, rec, err);
		if (rc < 0)
			return rc;
		if (rc > 0)
			break;
		tfk_rec_close(rd->r);
		rd->r = NULL;
	}
	it->len = rec->len;
	it->path = strcmp(rd->files[rd->fi - 1], "-") ?
		rd->files[rd->fi - 1] : "<stdin>";
	it->index = rec->index;
	it->byte = rec->off;
	rd->next++;
	return 1;
}

static void reader_close(struct reader *rd)
{
	tfk_rec_close(rd->r);
	rd->r = NULL;
}

/* tfk_pool_stream's read: record i into inring[i % window] and its
 * slot; the first one also builds the graph. */
static int read_one(void *ctx, size_t i, void *vslot)
{
	struct stream *st = ctx;
	struct slot *s = vslot;
	struct ringbuf *in = &inring[i % window];
	struct tfk_rec rec;
	uint64_t t0 = tfk_prof_now();
	int rc = reader_next(st->rd, &rec, &s->it, &st->rerr);

	if (rc > 0 && !graph && (rc = setup(rec.data, &s->it, -1, 0,
					    &st->rerr)) == 0)
		rc = 1;
	if (rc > 0 && in->cap < rec.len) {
		uint8_t *nb = realloc(in->p, rec.len);

		if (!nb)
			rc = tfk_errf(&st->rerr, TFK_ENOMEM, "out of memory");
		in->p = nb ? nb : in->p;
		in->cap = nb ? rec.len : in->cap;
	}
	if (rc > 0)
		memcpy(in->p, rec.data, rec.len);
	tfk_prof_span("read", NULL, t0, tfk_prof_now(), -1);
	return rc;
}

/*
 * Map the stream. A read error (a corrupt or cut record) is reported
 * after every record before it is written, whatever -j; -j 1 stays on
 * one thread.
 */
static int run_map(struct reader *rd, struct tfk_err *err)
{
	struct stream st = { rd, err, 0, { 0 } };
	int rc = tfk_pool_stream((int)jobs, window, sizeof(struct slot),
				 read_one, work, deliver, NULL, &st);

	if (rc && !st.failed) {
		if (rc == TFK_ENOMEM && !st.rerr.msg[0])
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		*err = st.rerr;
	}
	return rc;
}

/* For --adapt: run the layers before the one adapted on record rec
 * (the graph built on the first) into workers[0].fetched[0]; errors
 * name the record. */
static int adapt_layers(const struct tfk_rec *rec, const struct item *ri,
			uint64_t step, int chain, int layer,
			struct tfk_err *err)
{
	const struct tfk_prep_input *in = tfk_prep_input(prep, chain);
	struct worker *wk = &workers[0];
	const struct tfk_feat *f;
	int rc;

	if (!graph && (rc = setup(rec->data, ri, chain, layer, err)))
		return rc;
	rc = tfk_example_parse(&wk->ex, rec->data, rec->len, err);
	if (rc) {
		tfk_err_prefix(err, "bad tf.Example");
		return where(err, ri);
	}
	f = tfk_example_find(&wk->ex, in->feature);
	if (!f) {
		tfk_errf(err, TFK_EINVAL, "feature '%s': missing",
			 in->feature);
		return where(err, ri);
	}
	rc = make_feed(wk, chain, f, err);
	if (!rc)
		rc = tfk_exec_run(wk->x, &wk->feeds[chain], step, wk->fetched,
				  err);
	return rc ? where(err, ri) : 0;
}

/* Adapt: Welford over every element, per channel of the last axis. */
static int run_adapt(struct reader *rd, int chain, int layer,
		     struct tfk_err *err)
{
	double *mean = NULL, *m2 = NULL, *cnt = NULL;
	int nch = 0, rc = 0;
	struct tfk_rec rec;
	struct item ri = { 0 };
	long n;
	size_t i;

	while ((n = reader_next(rd, &rec, &ri, err)) > 0) {
		const struct tfk_tensor *t;
		const struct tfk_prep_input *in =
			tfk_prep_input(prep, chain);
		int64_t k, numel;
		int c;

		if ((rc = adapt_layers(&rec, &ri, rd->next - 1, chain, layer,
				       err)))
			goto out;
		t = workers[0].fetched[0];
		if (t->dtype != TFK_DT_FLOAT || t->rank < 1) {
			tfk_errf(err, TFK_EINVAL, "feature '%s': "
				 "Normalization needs float values "
				 "of rank >= 1", in->feature);
			rc = where(err, &ri);
			goto out;
		}
		c = tfk_prep_adapt_n(prep, chain, layer,
				     t->shape[t->rank - 1]);
		if (!mean) {
			nch = c;
			mean = calloc((size_t)c, sizeof(double));
			m2 = calloc((size_t)c, sizeof(double));
			cnt = calloc((size_t)c, sizeof(double));
			if (!mean || !m2 || !cnt) {
				rc = tfk_errf(err, TFK_ENOMEM, "out "
					      "of memory");
				goto out;
			}
		} else if (c != nch) {
			tfk_errf(err, TFK_EINVAL, "feature '%s': "
				 "last dimension %d, earlier records "
				 "had %d", in->feature, c, nch);
			rc = where(err, &ri);
			goto out;
		}
		numel = tfk_tensor_numel(t);
		for (k = 0; k < numel; k++) {
			double v = ((const float *)t->data)[k], d;
			int ch = (int)(k % nch);

			cnt[ch] += 1;
			d = v - mean[ch];
			mean[ch] += d / cnt[ch];
			m2[ch] += d * (v - mean[ch]);
		}
	}
	if (n < 0) {
		rc = (int)n;
		goto out;
	}
	if (!mean) {
		rc = tfk_errf(err, TFK_EINVAL, "no records to adapt from");
		goto out;
	}
	for (i = 0; i < (size_t)nch; i++)
		m2[i] = cnt[i] > 0 ? m2[i] / cnt[i] : 0;
	rc = tfk_prep_set_norm(prep, chain, layer, mean, m2, nch, err);
out:
	free(mean);
	free(m2);
	free(cnt);
	return rc;
}

/* TextVectorization adapt: every bytes value of the feature is a
 * document. */
static int run_text_adapt(struct reader *rd, int chain, int layer,
			  struct tfk_err *err)
{
	const struct tfk_prep_input *in = tfk_prep_input(prep, chain);
	struct tfk_prep_tadapt *t;
	struct tfk_example *ex = &workers[0].ex;
	struct tfk_rec rec;
	struct item ri = { 0 };
	long n;
	int rc;

	rc = tfk_prep_tadapt_new(prep, chain, layer, &t, err);
	if (rc)
		return rc;
	while ((n = reader_next(rd, &rec, &ri, err)) > 0) {
		const struct tfk_feat *f;
		const uint8_t *p;
		size_t len, it = 0;

		rc = tfk_example_parse(ex, rec.data, rec.len, err);
		if (rc) {
			tfk_err_prefix(err, "bad tf.Example");
			goto fail;
		}
		f = tfk_example_find(ex, in->feature);
		if (!f || f->kind != TFK_FEAT_BYTES) {
			rc = tfk_errf(err, TFK_EINVAL, "feature '%s': "
				      "%s", in->feature, f ?
				      "expected bytes (text)" :
				      "missing");
			goto fail;
		}
		while (tfk_feat_bytes_next(f, &it, &p, &len))
			if ((rc = tfk_prep_tadapt_add(t,
					(const char *)p, len, err)))
				goto fail;
	}
	rc = n < 0 ? (int)n : tfk_prep_tadapt_finish(t, err);
	tfk_prep_tadapt_free(t);
	return rc;
fail:
	where(err, &ri);
	tfk_prep_tadapt_free(t);
	return rc;
}

/* String/IntegerLookup adapt: every value of the feature is a token,
 * every record a document. */
static int run_lookup_adapt(struct reader *rd, int chain, int layer,
			    struct tfk_err *err)
{
	const struct tfk_prep_input *in = tfk_prep_input(prep, chain);
	struct tfk_prep_ladapt *t;
	struct tfk_example *ex = &workers[0].ex;
	int64_t *iv = NULL;
	size_t cap = 0;
	struct tfk_rec rec;
	struct item ri = { 0 };
	long n;
	int rc, ints;

	rc = tfk_prep_ladapt_new(prep, chain, layer, &t, err);
	if (rc)
		return rc;
	ints = tfk_prep_ladapt_is_int(t);
	while ((n = reader_next(rd, &rec, &ri, err)) > 0) {
		const struct tfk_feat *f;
		const uint8_t *p;
		size_t len, it = 0, k;

		rc = tfk_example_parse(ex, rec.data, rec.len, err);
		if (rc) {
			tfk_err_prefix(err, "bad tf.Example");
			goto fail;
		}
		f = tfk_example_find(ex, in->feature);
		if (!f || f->kind != (ints ? TFK_FEAT_INT64 :
				      TFK_FEAT_BYTES)) {
			rc = tfk_errf(err, TFK_EINVAL, "feature '%s': "
				      "%s", in->feature, !f ?
				      "missing" : ints ?
				      "IntegerLookup takes int64 "
				      "values" : "StringLookup takes "
				      "bytes values");
			goto fail;
		}
		if (ints) {
			if (f->n > cap) {
				int64_t *nv = realloc(iv, f->n *
						      sizeof(*iv));

				if (!nv) {
					rc = tfk_errf(err, TFK_ENOMEM,
						      "out of memory");
					goto fail;
				}
				iv = nv;
				cap = f->n;
			}
			tfk_feat_int64s(f, iv, cap);
			for (k = 0; k < f->n; k++)
				if ((rc = tfk_prep_ladapt_add_int(t,
						iv[k], err)))
					goto fail;
		} else {
			while (tfk_feat_bytes_next(f, &it, &p, &len))
				if ((rc = tfk_prep_ladapt_add(t, p,
						len, err)))
					goto fail;
		}
		tfk_prep_ladapt_end_doc(t);
	}
	rc = n < 0 ? (int)n : tfk_prep_ladapt_finish(t, err);
	free(iv);
	tfk_prep_ladapt_free(t);
	return rc;
fail:
	where(err, &ri);
	free(iv);
	tfk_prep_ladapt_free(t);
	return rc;
}

/* Discretization adapt: the layers before it run on each record, whose
 * values are one batch of Keras' update_state. */
static int run_disc_adapt(struct reader *rd, int chain, int layer,
			  struct tfk_err *err)
{
	const struct tfk_prep_input *in = tfk_prep_input(prep, chain);
	struct tfk_prep_dadapt *t;
	float *tmp = NULL;
	size_t cap = 0;
	struct tfk_rec rec;
	struct item ri = { 0 };
	long n;
	int rc;

	rc = tfk_prep_dadapt_new(prep, chain, layer, &t, err);
	if (rc)
		return rc;
	while ((n = reader_next(rd, &rec, &ri, err)) > 0) {
		const struct tfk_tensor *tt;
		const float *v;
		int64_t k, numel;

		if ((rc = adapt_layers(&rec, &ri, rd->next - 1, chain, layer,
				       err)))
			goto out;
		tt = workers[0].fetched[0];
		numel = tfk_tensor_numel(tt);
		if (tt->dtype == TFK_DT_FLOAT) {
			v = tt->data;
		} else if (tt->dtype == TFK_DT_INT64) {
			if ((size_t)numel > cap) {
				float *nt = realloc(tmp, (size_t)numel
						    * sizeof(float));

				if (!nt) {
					rc = tfk_errf(err, TFK_ENOMEM,
						      "out of memory");
					goto out;
				}
				tmp = nt;
				cap = (size_t)numel;
			}
			for (k = 0; k < numel; k++)
				tmp[k] = (float)((const int64_t *)
						 tt->data)[k];
			v = tmp;
		} else {
			rc = tfk_errf(err, TFK_EINVAL, "feature '%s': "
				      "Discretization takes numbers, "
				      "got %s", in->feature,
				      tfk_dtype_name(tt->dtype));
			goto fail;
		}
		rc = tfk_prep_dadapt_update(t, v, (size_t)numel, err);
		if (rc) {
			tfk_err_prefix(err, "feature '%s'",
				       in->feature);
			goto fail;
		}
	}
	rc = n < 0 ? (int)n : tfk_prep_dadapt_finish(t, err);
	goto out;
fail:
	where(err, &ri);
out:
	free(tmp);
	tfk_prep_dadapt_free(t);
	return rc;
}

static int write_spec(struct tfk_err *err)
{
	struct tfk_out *o;
	char *s = tfk_prep_dump(prep);
	int rc;

	if (!s)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = tfk_out_open(&o, out_path, TFK_COMP_NONE, err);
	if (!rc && !(rc = tfk_out_write(o, s, strlen(s), err)) &&
	    !(rc = tfk_out_write(o, "\n", 1, err)))
		rc = tfk_out_close(o, err);
	else if (o)
		tfk_out_discard(o);
	free(s);
	return rc;
}

int main(int argc, char **argv)
{
	static char *stdin_only[] = { "-" };
	struct reader rd = { 0 };
	struct tfk_err err;
	int comp, rc = 0, ch, ly, passes = 0, kind;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (argc < 1)
		tfk_cli_usage_error("missing SPEC.json");
	if (jobs < 1 || jobs > 256)
		tfk_cli_usage_error("--jobs: expected 1..256, got %ld", jobs);
	comp = tfk_comp_parse(comp_arg);
	if (comp < 0 || comp == TFK_COMP_AUTO)
		tfk_cli_usage_error("--compression: expected none, gzip or "
				    "zlib, got '%s'", comp_arg);
	if (prof_open(&err))
		return tfk_cli_fail(&err);
	tfk_prof_record(prof_wanted());
	if (tfk_prep_load(&prep, argv[0], &err)) {
		prof_abandon();
		return tfk_cli_fail(&err);
	}
	n_chain = tfk_prep_n_inputs(prep);
	rd.files = argc > 1 ? argv + 1 : stdin_only;
	rd.n_files = argc > 1 ? argc - 1 : 1;
	if (workers_init()) {
		tfk_prep_free(prep);
		prof_abandon();
		tfk_cli_warn("out of memory");
		return 1;
	}

	if (adapt) {
		while (!rc && (kind = tfk_prep_next_adapt(prep, &ch, &ly))) {
			if (passes++ && argc < 2) {
				rc = tfk_errf(&err, TFK_EINVAL, "--adapt reads "
					      "the input once per "
					      "layer to adapt: give files, "
					      "not stdin");
				break;
			}
			reader_close(&rd);
			rd.fi = 0;
			rd.next = 0;
			rc = kind == TFK_PREP_ADAPT_TEXT ?
				run_text_adapt(&rd, ch, ly, &err) :
			     kind == TFK_PREP_ADAPT_LOOKUP ?
				run_lookup_adapt(&rd, ch, ly, &err) :
			     kind == TFK_PREP_ADAPT_DISC ?
				run_disc_adapt(&rd, ch, ly, &err) :
				run_adapt(&rd, ch, ly, &err);
			teardown();
		}
		if (!rc)
			rc = write_spec(&err);
		goto done;
	}

	if (!strcmp(out_path, "-"))
		fcntl(1, F_SETPIPE_SZ, 1 << 20);
	rc = tfk_recw_open(&w, out_path, comp, &err);
	if (rc)
		goto done;
	rc = run_map(&rd, &err);
	if (!rc) {
		rc = tfk_recw_close(w, &err);
	} else if (strcmp(out_path, "-")) {
		tfk_recw_discard(w);
	} else {
		struct tfk_err ignored;

		tfk_recw_close(w, &ignored);
	}
	if (verbose && !rc)
		tfk_cli_warn("mapped %" PRIu64 " records on %ld threads",
			     n_out, jobs);
done:
	if (!rc)
		rc = prof_close(0, &err);
	else
		prof_abandon();
	reader_close(&rd);
	teardown();
	workers_release();
	tfk_prep_free(prep);
	return rc ? tfk_cli_fail(&err) : 0;
}
