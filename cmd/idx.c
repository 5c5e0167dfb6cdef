/*
 * tfk-idx: convert IDX files (MNIST, Fashion-MNIST) to TFRecord shards
 * of tf.Example records {image: H*W*C raw uint8 bytes, label: int64},
 * with a PREFIX.schema.json sidecar (shape, dtype, label range, label
 * names) so later tools need no flags.
 *
 * TensorFlow's own route is tf.keras.datasets.fashion_mnist.load_data()
 * into numpy, then a Python loop of tf.train.Example(...).
 * SerializeToString() and a TFRecordWriter: a few seconds for 60,000
 * records. Here the file streams through the inflater in batches, the
 * Example for each item is encoded straight into a reused buffer, and
 * the shard writer frames it; nothing is parsed or allocated per record
 * except the schema statistics.
 *
 * Parallelism: -j N runs tfk_pool_run over batches of items. IDX is one
 * stream, so a worker takes its batch from the reader in batch order
 * (a turn-taking lock; batches are claimed in order, so the worker
 * before it always holds the reader or has released it) and copies it
 * out; encoding and the rest overlap with the next batch's inflating.
 * Output bytes never depend on -j: the pool delivers in order.
 *
 * --shard I/N keeps items I, I+N, I+2N, ... (one IDX pair is one input
 * "file", so the split is over items). There is no randomness: --seed
 * is accepted with every converter's options and changes nothing.
 */
#include "data/exout.h"
#include "data/idx.h"
#include "data/shardw.h"
#include "example/example.h"
#include "example/schema.h"
#include "util/alloc.h"
#include "util/cli.h"
#include "util/pool.h"
#include "util/progress.h"

#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *images_path, *labels_path, *label_names_arg;
static const char *image_key = "image", *label_key = "label";
static struct tfk_conv conv = TFK_CONV_DEFAULTS;

static const struct tfk_opt opts[] = {
	TFK_OPT_STR(0, "images", &images_path, "FILE",
		    "IDX images (N x rows x cols [x channels] ubyte), plain or gzip"),
	TFK_OPT_STR(0, "labels", &labels_path, "FILE",
		    "IDX labels (N ubyte); without it records hold only the image"),
	TFK_OPT_STR(0, "label-names", &label_names_arg, "LIST|@FILE",
		    "class names for labels 0, 1, ...: comma list, or one per line"),
	TFK_OPT_STR(0, "image-key", &image_key, "NAME", "feature name of the image"),
	TFK_OPT_STR(0, "label-key", &label_key, "NAME", "feature name of the label"),
	TFK_CONV_OPTS(conv),
	TFK_OPT_END
};

static const struct tfk_cmd cmd = {
	"tfk-idx",
	"--images FILE [--labels FILE] [options]",
	"convert IDX files (MNIST, Fashion-MNIST) to sharded TFRecord Examples",
	"tfk-idx --images train-images-idx3-ubyte.gz --labels "
	"train-labels-idx1-ubyte.gz -o data/train",
};

/* Label names ---------------------------------------------------------- */

static char **names;
static size_t n_names;

static void add_name(const char *s, size_t n)
{
	char **v;

	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (!n)
		tfk_cli_usage_error("--label-names: name %zu is empty", n_names);
	v = realloc(names, (n_names + 1) * sizeof(*v));
	if (!v || !(v[n_names] = strndup(s, n)))
		tfk_cli_usage_error("out of memory");
	names = v;
	n_names++;
}

/* "a,b,c" or "@FILE" with one name per line (for names with commas). */
static void parse_label_names(const char *arg)
{
	const char *p, *e;

	if (arg[0] == '@') {
		FILE *f = fopen(arg + 1, "r");
		char line[4096];

		if (!f)
			tfk_cli_usage_error("--label-names: cannot open '%s'", arg + 1);
		while (fgets(line, sizeof(line), f)) {
			size_t n = strlen(line);

			if (n == sizeof(line) - 1 && line[n - 1] != '\n')
				tfk_cli_usage_error("--label-names: %s: line %zu is too "
						    "long", arg + 1, n_names + 1);
			add_name(line, n);
		}
		fclose(f);
		if (!n_names)
			tfk_cli_usage_error("--label-names: %s holds no names", arg + 1);
		return;
	}
	for (p = arg;; p = e + 1) {
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		add_name(p, (size_t)(e - p));
		if (!*e)
			break;
	}
}

/* The conversion ---------------------------------------------------------- */

/* Per-batch buffers, recycled through a free list so that steady state
 * allocates nothing (fresh 1 MiB blocks would each be a new mmap). */
struct bufs {
	struct bufs *next;
	uint8_t *items;
	size_t items_cap;
	struct tfk_example_builder exb;
	struct tfk_buf out;		/* serialized Examples back to back */
	size_t *lens;
	size_t lens_cap;
};

struct slot {
	struct bufs *b;
	size_t n_ex;
	int rc;
	struct tfk_err err;
};

struct run {
	struct tfk_idx *images;
	const uint8_t *labels;		/* n_items, or NULL */
	uint64_t n_items, item_size;
	size_t batch;			/* items per batch */
	long shard_i, shard_n;
	/* the reader, taken in batch order */
	pthread_mutex_t mu;
	pthread_cond_t turn;
	size_t next_read;
	int read_failed;
	struct bufs *free_bufs;
	/* deliver side: calling thread only */
	struct tfk_exout out;
	struct tfk_progress prog;
	struct tfk_err err;
};

static struct bufs *get_bufs(struct run *r)
{
	struct bufs *b;

	pthread_mutex_lock(&r->mu);
	b = r->free_bufs;
	if (b)
		r->free_bufs = b->next;
	pthread_mutex_unlock(&r->mu);
	if (!b && (b = tfk_calloc(1, sizeof(*b))))
		tfk_exb_init(&b->exb), tfk_buf_init(&b->out);
	return b;
}

static void put_bufs(struct run *r, struct bufs *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&r->mu);
	b->next = r->free_bufs;
	r->free_bufs = b;
	pthread_mutex_unlock(&r->mu);
}

static void free_bufs(struct run *r)
{
	struct bufs *b;

	while ((b = r->free_bufs)) {
		r->free_bufs = b->next;
		tfk_exb_release(&b->exb);
		tfk_buf_release(&b->out);
		tfk_free(b->items);
		tfk_free(b->lens);
		tfk_free(b);
	}
}

/* Copy batch k's items out of the reader, waiting for our turn. */
static int read_batch(struct run *r, size_t k, struct slot *s, size_t n)
{
	size_t got = 0, nbytes = n * (size_t)r->item_size;
	int rc = 0;

	if (s->b->items_cap < nbytes) {
		uint8_t *p = tfk_realloc(s->b->items, nbytes);

		if (!p)
			return tfk_errf(&s->err, TFK_ENOMEM, "out of memory");
		s->b->items = p;
		s->b->items_cap = nbytes;
	}
	pthread_mutex_lock(&r->mu);
	while (r->next_read != k && !r->read_failed)
		pthread_cond_wait(&r->turn, &r->mu);
	if (r->read_failed) {
		/* An earlier batch failed and carries the message; deliver
		 * stops there before it reaches this one. */
		pthread_mutex_unlock(&r->mu);
		return TFK_EIO;
	}
	pthread_mutex_unlock(&r->mu);
	while (got < n) {
		const uint8_t *p;
		long m = tfk_idx_read(r->images, n - got, &p, &s->err);

		if (m <= 0) {
			rc = m < 0 ? (int)m : tfk_errf(&s->err, TFK_ETRUNC,
						      "%s: data ends early",
						      tfk_idx_path(r->images));
			break;
		}
		memcpy(s->b->items + got * r->item_size, p,
		       (size_t)m * r->item_size);
		got += (size_t)m;
	}
	/* After the last batch, the reader checks that nothing follows. */
	if (!rc && (uint64_t)(k + 1) * r->batch >= r->n_items) {
		const uint8_t *p;
		long m = tfk_idx_read(r->images, 1, &p, &s->err);

		if (m < 0)
			rc = (int)m;
	}
	pthread_mutex_lock(&r->mu);
	if (rc)
		r->read_failed = 1;
	r->next_read = k + 1;
	pthread_cond_broadcast(&r->turn);
	pthread_mutex_unlock(&r->mu);
	return rc;
}

static void work(void *ctx, size_t k, void *slotp)
{
	struct run *r = ctx;
	struct slot *s = slotp;
	uint64_t first = (uint64_t)k * r->batch, i;
	size_t n = (size_t)(r->n_items - first < r->batch ?
			    r->n_items - first : r->batch);
	struct bufs *b;

	s->b = b = get_bufs(r);
	if (!b) {
		s->rc = tfk_errf(&s->err, TFK_ENOMEM, "out of memory");
		return;
	}
	if ((s->rc = read_batch(r, k, s, n)))
		return;
	if (b->lens_cap < n) {
		size_t *v = tfk_realloc(b->lens, n * sizeof(*v));

		if (!v) {
			s->rc = tfk_errf(&s->err, TFK_ENOMEM, "out of memory");
			return;
		}
		b->lens = v;
		b->lens_cap = n;
	}
	tfk_buf_reset(&b->out);
	for (i = first; i < first + n; i++) {
		const uint8_t *ex;
		size_t len;

		if (i % (uint64_t)r->shard_n != (uint64_t)r->shard_i)
			continue;
		tfk_exb_reset(&b->exb);
		tfk_exb_add_bytes1(&b->exb, image_key,
				   b->items + (i - first) * r->item_size,
				   (size_t)r->item_size);
		if (r->labels) {
			int64_t v = r->labels[i];

			tfk_exb_add_int64s(&b->exb, label_key, &v, 1);
		}
		if ((s->rc = tfk_exb_finish(&b->exb, &ex, &len, &s->err)))
			return;
		tfk_buf_add(&b->out, ex, len);
		b->lens[s->n_ex++] = len;
	}
	if (!tfk_buf_ok(&b->out))
		s->rc = tfk_errf(&s->err, TFK_ENOMEM, "out of memory");
}

static int deliver(void *ctx, size_t k, void *slotp)
{
	struct run *r = ctx;
	struct slot *s = slotp;
	const uint8_t *p;
	size_t j;
	int rc = s->rc;

	if (rc) {
		r->err = s->err;
		put_bufs(r, s->b);
		return rc;
	}
	p = s->b->out.data;
	for (j = 0; j < s->n_ex && !rc; j++) {
		rc = tfk_exout_write(&r->out, p, s->b->lens[j], &r->err);
		p += s->b->lens[j];
	}
	put_bufs(r, s->b);
	tfk_progress_update(&r->prog, r->out.written);
	return rc;
}

/* Input checks -------------------------------------------------------- */

static int open_images(struct tfk_idx **x, struct tfk_err *err)
{
	const struct tfk_idx_header *h;
	int rc = tfk_idx_open(x, images_path, err);

	if (rc)
		return rc;
	h = tfk_idx_hdr(*x);
	if (h->type != TFK_IDX_U8)
		return tfk_errf(err, TFK_ECORRUPT, "%s: byte 2: type %s (0x%02x): "
				"images must be ubyte (0x08)", tfk_idx_path(*x),
				tfk_idx_type_name(h->type), h->type);
	if (h->rank != 3 && h->rank != 4)
		return tfk_errf(err, TFK_ECORRUPT, "%s: byte 3: rank %d: images "
				"have rank 3 (count, rows, columns) or 4 (count, "
				"rows, columns, channels)", tfk_idx_path(*x),
				h->rank);
	return 0;
}

/* Read every label (small: one byte per image) and check it against
 * the images and the label names before anything is written. */
static int load_labels(uint8_t **labels, const struct tfk_idx *images,
		       struct tfk_err *err)
{
	const struct tfk_idx_header *h, *ih = tfk_idx_hdr(images);
	struct tfk_idx *x;
	uint64_t got = 0, i;
	int rc = tfk_idx_open(&x, labels_path, err);

	*labels = NULL;
	if (rc)
		return rc;
	h = tfk_idx_hdr(x);
	if (h->type != TFK_IDX_U8) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: byte 2: type %s (0x%02x): "
			      "labels must be ubyte (0x08)", tfk_idx_path(x),
			      tfk_idx_type_name(h->type), h->type);
		goto out;
	}
	if (h->rank != 1) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: byte 3: rank %d: labels "
			      "have rank 1 (count)", tfk_idx_path(x), h->rank);
		goto out;
	}
	if (h->n_items != ih->n_items) {
		rc = tfk_errf(err, TFK_ECORRUPT, "%s: byte 4: %" PRIu64 " labels, "
			      "but %s holds %" PRIu64 " images", tfk_idx_path(x),
			      h->n_items, tfk_idx_path(images), ih->n_items);
		goto out;
	}
	*labels = tfk_malloc(h->n_items ? (size_t)h->n_items : 1);
	if (!*labels) {
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
		goto out;
	}
	for (;;) {
		const uint8_t *p;
		long m = tfk_idx_read(x, (size_t)(h->n_items - got), &p, err);

		if (m < 0) {
			rc = (int)m;
			goto out;
		}
		if (m == 0)
			break;
		memcpy(*labels + got, p, (size_t)m);
		got += (uint64_t)m;
	}
	for (i = 0; n_names && i < got; i++)
		if ((*labels)[i] >= n_names) {
			rc = tfk_errf(err, TFK_ECORRUPT, "%s: item %" PRIu64
				      " at byte %" PRIu64 ": label %d has no name "
				      "(--label-names gives %zu)", tfk_idx_path(x),
				      i, h->header_len + i, (*labels)[i], n_names);
			goto out;
		}
out:
	if (rc) {
		tfk_free(*labels);
		*labels = NULL;
	}
	tfk_idx_close(x);
	return rc;
}

/* What the schema cannot infer from the bytes: shape, dtype, names. */
static int describe(void *ctx, struct tfk_schema *s)
{
	const struct tfk_idx_header *h = ctx;
	struct tfk_schema_feat *f = tfk_schema_feature(s, image_key);
	int64_t shape[3];

	if (!f)
		return TFK_ENOMEM;
	shape[0] = h->dims[1];
	shape[1] = h->dims[2];
	shape[2] = h->rank == 4 ? h->dims[3] : 1;
	if (f->kind == TFK_FEAT_NONE)
		f->kind = TFK_FEAT_BYTES;
	tfk_schema_set_shape(f, 3, shape);
	snprintf(f->dtype, sizeof(f->dtype), "uint8");
	snprintf(f->encoding, sizeof(f->encoding), "raw");
	/* Pixels are binary even when they happen to be valid UTF-8. */
	snprintf(f->content, sizeof(f->content), "binary");
	if (!labels_path)
		return 0;
	f = tfk_schema_feature(s, label_key);
	if (!f)
		return TFK_ENOMEM;
	if (f->kind == TFK_FEAT_NONE)
		f->kind = TFK_FEAT_INT64;
	tfk_schema_set_shape(f, 0, shape);
	if (n_names && tfk_schema_set_labels(f, (const char *const *)names,
					     n_names))
		return TFK_ENOMEM;
	return 0;
}

int main(int argc, char **argv)
{
	struct tfk_shardw_opts so;
	struct run r;
	uint8_t *labels = NULL;
	double t0 = tfk_now();
	int rc;
	size_t i;

	argc = tfk_cli_parse(argc, argv, &cmd, opts);
	if (argc > 0)
		tfk_cli_usage_error("unexpected argument '%s': name the files with "
				    "--images and --labels", argv[0]);
	if (!images_path)
		tfk_cli_usage_error("--images FILE is required");
	if (labels_path && !strcmp(images_path, "-") && !strcmp(labels_path, "-"))
		tfk_cli_usage_error("--images and --labels cannot both read stdin");
	if (label_names_arg && !labels_path)
		tfk_cli_usage_error("--label-names needs --labels");
	if (!*image_key || !*label_key || !strcmp(image_key, label_key))
		tfk_cli_usage_error("--image-key and --label-key must be two "
				    "different non-empty names");
	memset(&r, 0, sizeof(r));
	tfk_conv_check(&conv, &so, &r.shard_i, &r.shard_n);
	if (label_names_arg)
		parse_label_names(label_names_arg);
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.turn, NULL);

	rc = open_images(&r.images, &r.err);
	if (!rc && labels_path)
		rc = load_labels(&labels, r.images, &r.err);
	if (!rc)
		rc = tfk_exout_open(&r.out, &so, "", NULL, &r.err);
	if (!rc) {
		const struct tfk_idx_header *h = tfk_idx_hdr(r.images);
		uint64_t mine = h->n_items / (uint64_t)r.shard_n +
			((uint64_t)r.shard_i < h->n_items % (uint64_t)r.shard_n);
		size_t n_batches;

		r.labels = labels;
		r.n_items = h->n_items;
		r.item_size = h->item_size;
		r.batch = (size_t)((512u << 10) / h->item_size);
		if (r.batch < 1)
			r.batch = 1;
		if (r.batch > 4096)
			r.batch = 4096;
		n_batches = (size_t)((r.n_items + r.batch - 1) / r.batch);
		tfk_progress_init(&r.prog, tfk_progress_wanted(conv.progress,
							       conv.quiet),
				  "records", mine);
		rc = tfk_pool_run(n_batches, (int)conv.jobs, 0,
				  sizeof(struct slot), work, deliver, NULL, &r);
		if (rc == TFK_ENOMEM && !r.err.msg[0])
			tfk_errf(&r.err, rc, "out of memory");
		if (!rc && n_batches == 0) {
			/* No items: still check that nothing follows the header. */
			const uint8_t *p;
			long m = tfk_idx_read(r.images, 1, &p, &r.err);

			rc = m < 0 ? (int)m : 0;
		}
		tfk_progress_release(&r.prog);
	}
	if (r.images)
		rc = tfk_exout_finish(&r.out, 1, rc, describe,
				      (void *)tfk_idx_hdr(r.images), &r.err);
	if (!rc && !conv.quiet) {
		char msg[TFK_ERR_MSG_MAX];

		tfk_exout_summary(&r.out, tfk_now() - t0, msg, sizeof(msg));
		tfk_cli_warn("%s", msg);
	}

	tfk_idx_close(r.images);
	tfk_free(labels);
	free_bufs(&r);
	tfk_exout_release(&r.out);
	for (i = 0; i < n_names; i++)
		free(names[i]);
	free(names);
	pthread_cond_destroy(&r.turn);
	pthread_mutex_destroy(&r.mu);
	return rc ? tfk_cli_fail(&r.err) : 0;
}
