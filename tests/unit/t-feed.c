/*
 * t-feed.c - records to batch tensors: input/label mapping, defaults,
 * the row store, permuted batches, batched records, class weights,
 * streaming, and every refusal with its message.
 *
 * Oracles: the Fashion-MNIST IDX files themselves, read here with zlib
 * straight from /usr/share/datasets/fashion-mnist (not through our IDX
 * reader): records are made by tfk-idx (a 250-item slice, --shard 3/40
 * keeps items 3, 43, 83, ...) and every batch value must equal
 * float32(byte * (1/255)) of the item the permutation names, every
 * label the IDX label byte. Batched records come from tfk-batch and
 * must give the same rows as the plain ones. Small crafted records
 * (tfk-json lines) check dtypes, scales, dense labels and errors, with
 * values written in the test.
 */
#include "nn/feed.h"
#include "graph/graph.h"
#include "io/record.h"
#include "util/alloc.h"
#include "tap.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define FM "/usr/share/datasets/fashion-mnist/"
#define N_SLICE 250
#define SLICE_K 3
#define SLICE_N 40

static char bin[1024];

/* A model of one input and one output, as tfk_keras_build would give
 * (only the fields the feed reads). */
struct fake {
	struct tfk_model m;
	struct tfk_model_input in[2];
	struct tfk_model_output out[2];
};

static void fake_init(struct fake *f, int n_in, const char *const *names,
		      enum tfk_dtype dt, int rank, const int64_t *shape,
		      int out_rank, const int64_t *out_shape)
{
	struct tfk_err err;
	struct tfk_port p;
	int i;

	memset(f, 0, sizeof(*f));
	tfk_graph_new(&f->m.g, &err);
	f->m.n_inputs = n_in;
	f->m.inputs = f->in;
	for (i = 0; i < n_in; i++) {
		f->in[i].name = (char *)names[i];
		f->in[i].dtype = dt;
		f->in[i].rank = rank;
		memcpy(f->in[i].shape, shape, (size_t)rank * sizeof(int64_t));
		tfk_graph_placeholder(f->m.g, names[i], dt, rank, shape, &p,
				      &err);
	}
	tfk_graph_placeholder(f->m.g, "out", TFK_DT_FLOAT, out_rank, out_shape,
			      &p, &err);
	f->m.n_outputs = 1;
	f->m.outputs = f->out;
	f->out[0].name = "out";
	f->out[0].train = p;
	f->out[0].infer = p;
}

static void fake_release(struct fake *f)
{
	tfk_graph_free(f->m.g);
}

static struct tfk_spec *spec_of(const char *text)
{
	struct tfk_spec *s = NULL;
	struct tfk_err err;

	if (tfk_spec_parse(&s, "spec.json", text, strlen(text), &err))
		tap_diag("spec: %s", err.msg);
	return s;
}

#define MODEL "\"model\":{\"class_name\":\"Sequential\",\"config\":{}}"

static const int64_t IMG[3] = { -1, 28, 28 };
static const int64_t OUT10[2] = { -1, 10 };

static struct tfk_loss_spec sparse = { "sparse_categorical_crossentropy",
				       0, 0, 0 };
static struct tfk_loss_spec mse = { "mean_squared_error", 0, 0, 0 };

/* IDX oracle ----------------------------------------------------------- */

static uint8_t idx_img[N_SLICE][784], idx_lab[N_SLICE];

static int read_idx(void)
{
	gzFile gi = gzopen(FM "t10k-images-idx3-ubyte.gz", "rb");
	gzFile gl = gzopen(FM "t10k-labels-idx1-ubyte.gz", "rb");
	static uint8_t img[10000 * 784 + 16], lab[10000 + 8];
	int i, ok_ = gi && gl;

	if (ok_)
		ok_ = gzread(gi, img, sizeof(img)) == (int)sizeof(img) &&
		      gzread(gl, lab, sizeof(lab)) == (int)sizeof(lab);
	if (gi)
		gzclose(gi);
	if (gl)
		gzclose(gl);
	if (!ok_)
		return -1;
	for (i = 0; i < N_SLICE; i++) {
		int item = SLICE_K + i * SLICE_N;

		memcpy(idx_img[i], img + 16 + (size_t)item * 784, 784);
		idx_lab[i] = lab[8 + item];
	}
	return 0;
}

static int run(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		tap_diag("command failed (%d): %s", rc, cmd);
	return rc;
}

/* Write JSON lines through tfk-json into a record file; its path. */
static const char *records(const char *name, const char *lines)
{
	char cmd[4096], *txt = tap_tmp("in.jsonl");
	const char *out = tap_tmp(name);

	tap_write_file(txt, lines, strlen(lines));
	snprintf(cmd, sizeof(cmd), "%s/tfk-json %s > %s", bin, txt, out);
	run(cmd);
	return out;
}

/* Tests ---------------------------------------------------------------- */

static char slice_path[1200], slice_dir[1024], batched_path[1024];

static void fashion(void)
{
	struct tfk_err err;
	struct tfk_feed *f = NULL;
	struct tfk_feed_batch b;
	struct tfk_schema sch;
	struct fake fk;
	struct tfk_spec *s;
	struct tfk_feed_opts o = { &sparse, 0, NULL, 0, NULL, 1 };
	const char *const in_names[] = { "input_1" };
	uint32_t perm[N_SLICE];
	int i, j, bad, found;
	char cmd[4000];

	snprintf(slice_dir, sizeof(slice_dir), "%s", tap_tmp("fm"));
	snprintf(cmd, sizeof(cmd), "%s/tfk-idx -q --images "
		 FM "t10k-images-idx3-ubyte.gz --labels "
		 FM "t10k-labels-idx1-ubyte.gz --shard %d/%d -o %s", bin,
		 SLICE_K, SLICE_N, slice_dir);
	if (run(cmd) || read_idx()) {
		ok(0, "Fashion-MNIST slice");
		return;
	}
	snprintf(slice_path, sizeof(slice_path),
		 "%s-task%05d-00000-of-00001.tfrecord", slice_dir, SLICE_K);
	found = tfk_feed_find_schema(slice_path, &sch, &err);
	is_int(found, 1, "sidecar of a task shard found: %s",
	       found < 0 ? err.msg : "");
	if (found == 1) {
		ok(tfk_schema_find(&sch, "image") != NULL, "sidecar read");
	}

	/* no "inputs": input_1 is fed from the only non-label feature */
	fake_init(&fk, 1, in_names, TFK_DT_FLOAT, 3, IMG, 2, OUT10);
	s = spec_of("{" MODEL ",\"inputs\":{\"input_1\":{\"scale\":"
		    "0.00392156862745098}}}");
	o.schema = found == 1 ? &sch : NULL;
	is_int(tfk_feed_new(&f, s, &fk.m, &o, &err), 0, "feed: %s", err.msg);
	if (found == 1)
		tfk_schema_release(&sch);
	o.schema = NULL;	/* not needed after tfk_feed_new */
	if (!f)
		goto out;
	is_int(tfk_feed_add_file(f, slice_path, &err), 0, "add the slice: %s",
	       err.msg);
	is_int(tfk_feed_rows(f), N_SLICE, "250 rows");
	is_int(tfk_feed_bytes(f), N_SLICE * (784 + 8),
	       "rows kept as uint8 bytes and int64 labels");
	is_str(tfk_feed_input_feature(f, 0), "image", "default feature");
	is_str(tfk_feed_label_feature(f), "label", "default label");

	/* a permuted batch: reverse order, from row 10 */
	for (i = 0; i < N_SLICE; i++)
		perm[i] = (uint32_t)(N_SLICE - 1 - i);
	is_int(tfk_feed_batch(f, perm, 10, 32, &b, &err), 0, "batch: %s",
	       err.msg);
	is_int(b.n, 32, "32 rows");
	is_int(b.n_inputs, 1, "one input");
	is_int(b.inputs[0].dtype, TFK_DT_FLOAT, "float32 input");
	is_int(b.inputs[0].rank, 3, "rank 3");
	ok(b.inputs[0].shape[0] == 32 && b.inputs[0].shape[1] == 28 &&
	   b.inputs[0].shape[2] == 28, "shape [32, 28, 28]");
	is_int(b.label.dtype, TFK_DT_INT64, "int64 labels");
	ok(b.label.rank == 1 && b.label.shape[0] == 32, "labels [32]");
	is_int(b.has_weight, 0, "no class weights");
	bad = 0;
	for (i = 0; i < 32; i++) {
		int item = N_SLICE - 1 - (10 + i);
		const float *x = (const float *)b.inputs[0].data + i * 784;

		for (j = 0; j < 784; j++)
			if (x[j] != (float)(idx_img[item][j] *
					    0.00392156862745098))
				bad++;
		if (((const int64_t *)b.label.data)[i] != idx_lab[item])
			bad++;
	}
	is_int(bad, 0, "every value is its IDX byte / 255, every label its "
	       "IDX label");
	/* the last partial batch, without a permutation */
	is_int(tfk_feed_batch(f, NULL, 240, 10, &b, &err), 0, "tail batch");
	bad = 0;
	for (i = 0; i < 10; i++) {
		const float *x = (const float *)b.inputs[0].data + i * 784;

		for (j = 0; j < 784; j++)
			if (x[j] != (float)(idx_img[240 + i][j] / 255.0))
				bad++;
		if (((const int64_t *)b.label.data)[i] != idx_lab[240 + i])
			bad++;
	}
	is_int(bad, 0, "identity batch of the last 10 rows");
	is_int(b.inputs[0].shape[0], 10, "partial batch has 10 rows");
	is_int(tfk_feed_batch(f, NULL, 245, 10, &b, &err), TFK_EINVAL,
	       "batch past the end");
	is_str(err.msg, "batch of rows [245, 255): the feed holds 250 rows",
	       "range message");
	perm[0] = 9999;
	is_int(tfk_feed_batch(f, perm, 0, 1, &b, &err), TFK_EINVAL,
	       "permutation past the rows");

	/* batched records give the same rows */
	snprintf(batched_path, sizeof(batched_path), "%s",
		 tap_tmp("batched.tfrecord"));
	snprintf(cmd, sizeof(cmd), "%s/tfk-batch 32 %s > %s", bin, slice_path,
		 batched_path);
	if (run(cmd) == 0) {
		struct tfk_feed *f2 = NULL;
		struct tfk_feed_batch b2;

		if (tfk_feed_new(&f2, s, &fk.m, &o, &err)) {
			ok(0, "feed for batched records: %s", err.msg);
			goto out;
		}
		is_int(tfk_feed_add_file(f2, batched_path, &err), 0,
		       "add batched records: %s", err.msg);
		is_int(tfk_feed_rows(f2), N_SLICE, "8 batched records hold "
		       "250 rows");
		tfk_feed_batch(f, NULL, 0, N_SLICE, &b, &err);
		tfk_feed_batch(f2, NULL, 0, N_SLICE, &b2, &err);
		ok(tfk_tensor_equal(&b.inputs[0], &b2.inputs[0]) &&
		   tfk_tensor_equal(&b.label, &b2.label),
		   "batched and plain records give the same batch");
		/* streaming: take 32 rows at a time */
		tfk_feed_shift(f2, 32);
		is_int(tfk_feed_rows(f2), N_SLICE - 32, "shift drops rows");
		tfk_feed_batch(f2, NULL, 0, 1, &b2, &err);
		is_int(((const int64_t *)b2.label.data)[0], idx_lab[32],
		       "row 32 is now first");
		ok(((const float *)b2.inputs[0].data)[300] ==
		   (float)(idx_img[32][300] / 255.0), "with its image");
		tfk_feed_shift(f2, 1000);
		is_int(tfk_feed_rows(f2), 0, "shift past the end empties");
		tfk_feed_clear(f);
		is_int(tfk_feed_rows(f), 0, "clear");
		tfk_feed_free(f2);
	}
	tfk_feed_free(f);
	f = NULL;

	/* the same slice mapped explicitly, int32 labels, class weights */
	{
		float cw[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
		struct tfk_feed_opts o2 = { &sparse, 0, cw, 10, NULL, 1 };
		struct tfk_spec *s2 = spec_of(
			"{" MODEL ",\"inputs\":{\"input_1\":{\"feature\":"
			"\"image\",\"dtype\":\"uint8\",\"shape\":[784],"
			"\"scale\":2,\"offset\":-1}},\"labels\":{\"feature\":"
			"\"label\",\"dtype\":\"int32\"}}");

		is_int(tfk_feed_new(&f, s2, &fk.m, &o2, &err), 0,
		       "explicit mapping: %s", err.msg);
		tfk_feed_reserve(f, N_SLICE, &err);
		tfk_feed_add_file(f, slice_path, &err);
		is_int(tfk_feed_batch(f, NULL, 0, 64, &b, &err), 0, "batch");
		is_int(b.label.dtype, TFK_DT_INT32, "int32 labels");
		is_int(b.has_weight, 1, "weights");
		bad = 0;
		for (i = 0; i < 64; i++) {
			const float *x = (const float *)b.inputs[0].data +
					 i * 784;

			if (((const int32_t *)b.label.data)[i] != idx_lab[i])
				bad++;
			if (((const float *)b.weight.data)[i] !=
			    cw[idx_lab[i]])
				bad++;
			for (j = 0; j < 784; j++)
				if (x[j] != (float)(idx_img[i][j] * 2.0 - 1))
					bad++;
		}
		is_int(bad, 0, "scale 2 offset -1, int32 labels, weight = "
		       "class_weight[label]");
		ok(b.weight.rank == 1 && b.weight.shape[0] == 64 &&
		   b.weight.dtype == TFK_DT_FLOAT, "weights float32 [64]");
		tfk_feed_free(f);
		f = NULL;
		tfk_spec_free(s2);
	}
out:
	tfk_spec_free(s);
	fake_release(&fk);
}

/* The message of feeding one record file (or of tfk_feed_new). */
static const char *feed_err(const char *spec_text, const char *path,
			    const struct tfk_loss_spec *loss, int n_classes)
{
	static struct tfk_err err;
	const char *const in_names[] = { "input_1" };
	int64_t out[2] = { -1, n_classes };
	struct tfk_feed_opts o = { loss, 0, NULL, 0, NULL, 1 };
	struct tfk_feed *f = NULL;
	struct tfk_spec *s = spec_of(spec_text);
	const int64_t in4[2] = { -1, 4 };
	struct fake fk;
	int rc;

	fake_init(&fk, 1, in_names, TFK_DT_FLOAT, 2, in4, 2, out);
	rc = tfk_feed_new(&f, s, &fk.m, &o, &err);
	if (rc == 0 && path)
		rc = tfk_feed_add_file(f, path, &err);
	tfk_feed_free(f);
	tfk_spec_free(s);
	fake_release(&fk);
	return rc ? err.msg : "";
}

/* Records that the feed of spec {MODEL} refuses: want is the message,
 * %s standing for the file's path. */
struct refusal {
	const char *file, *lines;
	int n_classes;
	const char *want, *what;
};

static const struct refusal refusals[] = {
	{ "kinds2.tfrecord", "{\"x\":[1.0,2.0,3.0,4.0],\"label\":[0]}\n"
	  "{\"x\":[1,2,3,4],\"label\":[0]}\n", 3,
	  "%s: record 1: feature x: int64 values, expected float (dtype "
	  "float32)", "a later record of another kind" },
	{ "frac.tfrecord", "{\"x\":[1.0,2.0,3.0,4.0],\"label\":[2.5]}\n", 3,
	  "%s: record 0: feature label: 2.5 is not an integer class id "
	  "(sparse_categorical_crossentropy)",
	  "fractional label for a sparse loss" },
	{ "range.tfrecord", "{\"x\":[1.0,2.0,3.0,4.0],\"label\":[2.0]}\n"
	  "{\"x\":[1.0,2.0,3.0,4.0],\"label\":[12]}\n", 10,
	  "%s: record 1: feature label: class 12 outside [0, 10)",
	  "label outside the class range (float 2.0 was fine)" },
	{ "neg.tfrecord", "{\"x\":[1.0,2.0,3.0,4.0],\"label\":[-1]}\n", 10,
	  "%s: record 0: feature label: class -1 outside [0, 10)",
	  "negative label" },
	{ "two_labels.tfrecord",
	  "{\"x\":[1.0,2.0,3.0,4.0],\"label\":[1,2]}\n", 10,
	  "%s: record 0: feature label: 2 values, expected one class id",
	  "two labels for a sparse loss" },
	{ "strlabel.tfrecord",
	  "{\"x\":[1.0,2.0,3.0,4.0],\"label\":[\"cat\"]}\n", 10,
	  "%s: record 0: feature label: bytes values, expected int64 or float "
	  "labels", "string label" },
};

static void errors(void)
{
	const char *ok4 = records("ok4.tfrecord",
		"{\"x\":[1.0,2.0,3.0,4.0],\"label\":[1]}\n");
	const char *three = records("three.tfrecord",
		"{\"x\":[1.0,2.0,3.0,4.0],\"label\":[1]}\n"
		"{\"x\":[1.0,2.0,3.0],\"label\":[1]}\n");
	const char *path;
	char want[1024];
	int k;

	is_str(feed_err("{" MODEL "}", ok4, &sparse, 3), "",
	       "4 floats feed a [4] input");
	snprintf(want, sizeof(want), "%s: record 1: feature x: 3 values, "
		 "input_1 needs 4 (4)", three);
	is_str(feed_err("{" MODEL "}", three, &sparse, 3), want,
	       "count mismatch names file, record, feature, input");

	path = records("img780.tfrecord",
		"{\"image\":[{\"b64\":\"" /* 780 zero bytes = 1040 b64 */
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
		"AAAAAAAAAAAAAAAA\"}],\"label\":[3]}\n");
	{
		static struct tfk_err err;
		const char *const in_names[] = { "input_1" };
		struct tfk_feed_opts o = { &sparse, 0, NULL, 0, NULL, 1 };
		struct tfk_feed *f = NULL;
		struct tfk_spec *s = spec_of("{" MODEL "}");
		struct fake fk;

		fake_init(&fk, 1, in_names, TFK_DT_FLOAT, 3, IMG, 2, OUT10);
		tfk_feed_new(&f, s, &fk.m, &o, &err);
		is_int(tfk_feed_add_file(f, path, &err), TFK_EINVAL,
		       "780 bytes for a 28x28 input");
		snprintf(want, sizeof(want), "%s: record 0: feature image: "
			 "780 values, input_1 needs 784 (28x28)", path);
		is_str(err.msg, want, "the issue's shape mismatch message");
		is_int(tfk_feed_rows(f), 0, "nothing added");
		tfk_feed_free(f);
		tfk_spec_free(s);
		fake_release(&fk);
	}

	path = records("nolabel.tfrecord", "{\"x\":[1.0,2.0,3.0,4.0]}\n");
	snprintf(want, sizeof(want), "%s: record 0: no feature 'label' (the "
		 "label)", path);
	is_str(feed_err("{" MODEL ",\"inputs\":{\"input_1\":{\"feature\":"
			"\"x\"}}}", path, &sparse, 3), want, "missing label");
	is_str(feed_err("{" MODEL ",\"inputs\":{\"input_1\":{\"feature\":"
			"\"x\"}}}", path, NULL, 3), "",
	       "no labels needed without a loss");
	snprintf(want, sizeof(want), "%s: record 0: no feature 'y' (input_1)",
		 path);
	is_str(feed_err("{" MODEL ",\"inputs\":{\"input_1\":{\"feature\":"
			"\"y\"}}}", path, &sparse, 3), want,
	       "missing mapped feature");

	path = records("two.tfrecord",
		"{\"a\":[1.0,2.0,3.0,4.0],\"b\":[1.0,2.0,3.0,4.0],\"label\":[0]}\n");
	snprintf(want, sizeof(want), "%s: record 0: cannot tell which feature "
		 "feeds input_1 (features: a, b, label); map it in spec.json's "
		 "\"inputs\"", path);
	is_str(feed_err("{" MODEL "}", path, &sparse, 3), want,
	       "two candidate features");
	is_str(feed_err("{" MODEL ",\"inputs\":{\"input_1\":{\"feature\":"
			"\"b\"}}}", path, &sparse, 3), "", "mapped: fine");

	path = records("kind.tfrecord", "{\"x\":[1,2,3,4],\"label\":[0]}\n");
	snprintf(want, sizeof(want), "%s: record 0: feature x: int64 values, "
		 "expected bytes (dtype uint8)", path);
	is_str(feed_err("{" MODEL ",\"inputs\":{\"input_1\":{\"dtype\":"
			"\"uint8\"}}}", path, &sparse, 3), want,
	       "wrong kind for the dtype");
	is_str(feed_err("{" MODEL "}", path, &sparse, 3), "",
	       "int64 values feed a float input by default");

	for (k = 0; k < (int)(sizeof(refusals) / sizeof(refusals[0])); k++) {
		const struct refusal *r = &refusals[k];

		path = records(r->file, r->lines);
		snprintf(want, sizeof(want), r->want, path);
		is_str(feed_err("{" MODEL "}", path, &sparse, r->n_classes),
		       want, "%s", r->what);
	}

	/* corrupt bytes: the Example decoder's message, located */
	{
		static struct tfk_err err;
		const char *const in_names[] = { "input_1" };
		struct tfk_feed_opts o = { &sparse, 0, NULL, 0, NULL, 1 };
		struct tfk_feed *f = NULL;
		struct tfk_spec *s = spec_of("{" MODEL "}");
		const int64_t in4[2] = { -1, 4 };
		static const uint8_t junk[] = { 0x0a, 0x05, 0x0a, 0x09 };
		struct fake fk;

		fake_init(&fk, 1, in_names, TFK_DT_FLOAT, 2, in4, 2, OUT10);
		tfk_feed_new(&f, s, &fk.m, &o, &err);
		is_int(tfk_feed_add(f, junk, sizeof(junk), "j.tfrecord", 7,
				    &err), TFK_ECORRUPT, "corrupt Example");
		ok(!strncmp(err.msg, "j.tfrecord: record 7: byte ", 27),
		   "corrupt message located: %s", err.msg);
		is_int(tfk_feed_add_file(f, "/nonexistent.tfrecord", &err),
		       TFK_EIO, "missing file");
		tfk_feed_free(f);
		tfk_spec_free(s);
		fake_release(&fk);
	}

	/* spec errors, found by tfk_feed_new */
	is_str(feed_err("{" MODEL ",\"inputs\":{\"input_2\":{}}}", NULL,
			&sparse, 3),
	       "spec.json: inputs.input_2: the model has no input 'input_2' "
	       "(inputs: input_1)", "unknown input name");
	is_str(feed_err("{" MODEL ",\"inputs\":{\"input_1\":{\"feat\":1}}}",
			NULL, &sparse, 3),
	       "spec.json: inputs.input_1: unknown key 'feat'",
	       "unknown input key");
	is_str(feed_err("{" MODEL ",\"inputs\":{\"input_1\":{\"shape\":"
			"[2,3]}}}", NULL, &sparse, 3),
	       "spec.json: inputs.input_1.shape: [2, 3] has 6 elements, "
	       "input_1 needs 4 (4)", "shape count mismatch");
	is_str(feed_err("{" MODEL ",\"inputs\":{\"input_1\":{\"shape\":"
			"[-2]}}}", NULL, &sparse, 3),
	       "spec.json: inputs.input_1.shape[0]: expected a size >= 0",
	       "negative size");
	is_str(feed_err("{" MODEL ",\"inputs\":{\"input_1\":{\"dtype\":"
			"\"float16\"}}}", NULL, &sparse, 3),
	       "spec.json: inputs.input_1.dtype: expected uint8, int8, float32 "
	       "or int64", "bad dtype");
	is_str(feed_err("{" MODEL ",\"inputs\":{\"input_1\":3}}", NULL,
			&sparse, 3),
	       "spec.json: inputs.input_1: expected an object {\"feature\": "
	       "..., \"dtype\": ..., \"shape\": [...], \"scale\": ..., "
	       "\"offset\": ...}", "input not an object");
	is_str(feed_err("{" MODEL ",\"inputs\":{\"input_1\":{\"scale\":"
			"\"x\"}}}", NULL, &sparse, 3),
	       "spec.json: inputs.input_1.scale: expected a number", "scale not a number");
	is_str(feed_err("{" MODEL ",\"labels\":{\"dtype\":\"float32\"}}",
			NULL, &sparse, 3),
	       "spec.json: labels.dtype: expected int64 or int32 for "
	       "sparse_categorical_crossentropy", "float labels, sparse loss");
	is_str(feed_err("{" MODEL ",\"labels\":{\"dtype\":\"int64\"}}",
			NULL, &mse, 3),
	       "spec.json: labels.dtype: expected float32 for "
	       "mean_squared_error", "int labels, dense loss");
	is_str(feed_err("{" MODEL ",\"labels\":{\"name\":\"y\"}}", NULL,
			&sparse, 3),
	       "spec.json: labels: unknown key 'name'", "labels unknown key");
}

/* Dense labels, float/int64 inputs, one-hot class weights, int inputs. */
static void dense(void)
{
	struct tfk_err err;
	const char *const in_names[] = { "input_1" };
	const int64_t in3[2] = { -1, 3 }, out3[2] = { -1, 3 };
	float cw[3] = { 0.5f, 2, 4 };
	struct tfk_feed_opts o = { &mse, 0, cw, 3, NULL, 1 };
	struct tfk_feed *f = NULL;
	struct tfk_feed_batch b;
	struct tfk_spec *s;
	struct fake fk;
	const char *path = records("dense.tfrecord",
		"{\"v\":[1,-2,3],\"y\":[0.0,0.0,1.0]}\n"
		"{\"v\":[4,5,6],\"y\":[0.0,1.0,0.0]}\n");

	fake_init(&fk, 1, in_names, TFK_DT_FLOAT, 2, in3, 2, out3);
	s = spec_of("{" MODEL ",\"inputs\":{\"input_1\":{\"feature\":\"v\","
		    "\"scale\":0.5,\"offset\":1}},\"labels\":{\"feature\":"
		    "\"y\"}}");
	is_int(tfk_feed_new(&f, s, &fk.m, &o, &err), 0, "dense: %s", err.msg);
	is_int(tfk_feed_add_file(f, path, &err), 0, "add: %s", err.msg);
	is_int(tfk_feed_batch(f, NULL, 0, 2, &b, &err), 0, "batch");
	{
		const float want_x[6] = { 1.5f, 0, 2.5f, 3, 3.5f, 4 };
		const float want_y[6] = { 0, 0, 1, 0, 1, 0 };
		const float want_w[2] = { 4, 2 };

		is_mem(b.inputs[0].data, b.inputs[0].nbytes, want_x,
		       sizeof(want_x), "int64 values * 0.5 + 1");
		is_int(b.label.dtype, TFK_DT_FLOAT, "float labels");
		ok(b.label.rank == 2 && b.label.shape[1] == 3, "labels [2, 3]");
		is_mem(b.label.data, b.label.nbytes, want_y, sizeof(want_y),
		       "one-hot rows");
		is_mem(b.weight.data, b.weight.nbytes, want_w, sizeof(want_w),
		       "class of a one-hot row is its argmax");
	}
	tfk_feed_free(f);
	tfk_spec_free(s);
	fake_release(&fk);

	/* one-value dense labels: the class is the rounded value */
	{
		const int64_t out1[2] = { -1, 1 };
		const char *p1 = records("bin.tfrecord",
			"{\"v\":[1.0,2.0,3.0],\"label\":[1]}\n"
			"{\"v\":[1.0,2.0,3.0],\"label\":[0]}\n");
		struct tfk_loss_spec bce = { "binary_crossentropy", 0, 0, 0 };
		struct tfk_feed_opts o1 = { &bce, 0, cw, 2, NULL, 1 };
		const float want_y[2] = { 1, 0 }, want_w[2] = { 2, 0.5f };

		fake_init(&fk, 1, in_names, TFK_DT_FLOAT, 2, in3, 2, out1);
		s = spec_of("{" MODEL "}");
		f = NULL;
		tfk_feed_new(&f, s, &fk.m, &o1, &err);
		is_int(tfk_feed_add_file(f, p1, &err), 0, "binary labels: %s",
		       err.msg);
		tfk_feed_batch(f, NULL, 0, 2, &b, &err);
		is_mem(b.label.data, b.label.nbytes, want_y, sizeof(want_y),
		       "int64 labels as float32 [2, 1]");
		ok(b.label.rank == 2 && b.label.shape[1] == 1, "shape [2, 1]");
		is_mem(b.weight.data, b.weight.nbytes, want_w, sizeof(want_w),
		       "class of a one-value row is its value");
		is_mem(b.inputs[0].data, b.inputs[0].nbytes,
		       ((const float[]){ 1, 2, 3, 1, 2, 3 }), 24,
		       "float_list copied as is");
		tfk_feed_free(f);
		tfk_spec_free(s);
		fake_release(&fk);
	}

	/* a class without a weight */
	{
		const char *p2 = records("cw.tfrecord",
			"{\"v\":[1.0,2.0,3.0],\"label\":[2]}\n");
		struct tfk_feed_opts o2 = { &sparse, 0, cw, 2, NULL, 1 };
		char want[600];

		fake_init(&fk, 1, in_names, TFK_DT_FLOAT, 2, in3, 2, out3);
		s = spec_of("{" MODEL "}");
		f = NULL;
		tfk_feed_new(&f, s, &fk.m, &o2, &err);
		is_int(tfk_feed_add_file(f, p2, &err), TFK_EINVAL,
		       "class beyond class_weight");
		snprintf(want, sizeof(want), "%s: record 0: feature label: "
			 "class 2 has no weight in fit.class_weight (classes 0 "
			 "to 1)", p2);
		is_str(err.msg, want, "message");
		tfk_feed_free(f);
		tfk_spec_free(s);
		fake_release(&fk);
	}

	/* int32 input (token ids): values unscaled; raw float32 bytes */
	{
		const char *p3 = records("ids.tfrecord",
			"{\"ids\":[7,8,9],\"f\":[{\"b64\":\"AACAPwAAAEAAAEBA\"}],"
			"\"label\":[1]}\n");
		const char *const two[] = { "ids", "f" };
		struct tfk_feed_opts o3 = { &sparse, 0, NULL, 0, NULL, 1 };
		const int32_t want_ids[3] = { 7, 8, 9 };

		fake_init(&fk, 2, two, TFK_DT_INT32, 2, in3, 2, out3);
		fk.in[1].dtype = TFK_DT_FLOAT;
		s = spec_of("{" MODEL ",\"inputs\":{\"f\":{\"dtype\":"
			    "\"float32\",\"scale\":2}}}");
		f = NULL;
		is_int(tfk_feed_new(&f, s, &fk.m, &o3, &err), 0, "two inputs");
		is_int(tfk_feed_add_file(f, p3, &err), 0, "add: %s", err.msg);
		tfk_feed_batch(f, NULL, 0, 1, &b, &err);
		is_int(b.n_inputs, 2, "two input tensors");
		is_int(b.inputs[0].dtype, TFK_DT_INT32, "int32 ids");
		is_mem(b.inputs[0].data, b.inputs[0].nbytes, want_ids, 12,
		       "ids as they are");
		is_mem(b.inputs[1].data, b.inputs[1].nbytes,
		       ((const float[]){ 2, 4, 6 }), 12,
		       "raw little-endian float32 bytes, scaled");
		tfk_feed_free(f);
		tfk_spec_free(s);
		fake_release(&fk);
	}
}

/* uint8/int8 bytes through the three conversions (table, v * a + o,
 * v / k + o): each must give float32(v * scale + offset) in double. */
/* Two outputs: a label per output, each by its own loss (sparse "out"
 * [?, 3], dense "b" [?, 2]), features named as the outputs by default
 * or as "labels" maps them; shift keeps every label's rows. */
static void two_outputs(void)
{
	struct tfk_err err;
	const char *const in_names[] = { "input_1" };
	const int64_t in3[2] = { -1, 3 }, out3[2] = { -1, 3 },
		out2[2] = { -1, 2 };
	const struct tfk_loss_spec ls[2] = {
		{ "sparse_categorical_crossentropy", 0, 0, 0 },
		{ "mean_squared_error", 0, 0, 0 }
	};
	struct tfk_feed_opts o = { ls, 0, NULL, 0, NULL, 2 };
	struct tfk_feed *f = NULL;
	struct tfk_feed_batch b;
	struct tfk_spec *s;
	struct tfk_port p;
	struct fake fk;
	const char *path = records("two.tfrecord",
		"{\"v\":[1,2,3],\"out\":[2],\"b\":[0.5,-1.5],\"y\":[1]}\n"
		"{\"v\":[4,5,6],\"out\":[0],\"b\":[1,2],\"y\":[2]}\n"
		"{\"v\":[7,8,9],\"out\":[1],\"b\":[3.5,4.5],\"y\":[0]}\n");
	const int64_t want_a[2] = { 2, 0 };
	const float want_b[4] = { 0.5f, -1.5f, 1, 2 };
	const int32_t want_y[2] = { 0, 0 };

	fake_init(&fk, 1, in_names, TFK_DT_FLOAT, 2, in3, 2, out3);
	tfk_graph_placeholder(fk.m.g, "b", TFK_DT_FLOAT, 2, out2, &p, &err);
	fk.m.n_outputs = 2;
	fk.out[1].name = "b";
	fk.out[1].train = fk.out[1].infer = p;
	s = spec_of("{" MODEL ",\"inputs\":{\"input_1\":{\"feature\":"
		    "\"v\"}}}");
	is_int(tfk_feed_new(&f, s, &fk.m, &o, &err), 0, "two outputs: %s",
	       err.msg);
	is_int(tfk_feed_add_file(f, path, &err), 0, "add: %s", err.msg);
	is_int(tfk_feed_batch(f, NULL, 0, 2, &b, &err), 0, "batch");
	is_int(b.n_labels, 2, "two labels");
	ok(b.labels && b.labels[0].data == b.label.data, "label is labels[0]");
	if (b.n_labels == 2) {
		ok(b.labels[0].dtype == TFK_DT_INT64 && b.labels[0].rank == 1 &&
		   b.labels[0].shape[0] == 2, "out: int64 [2] class ids");
		is_mem(b.labels[0].data, b.labels[0].nbytes, want_a,
		       sizeof(want_a), "out's class ids from feature out");
		ok(b.labels[1].dtype == TFK_DT_FLOAT && b.labels[1].rank == 2 &&
		   b.labels[1].shape[1] == 2, "b: float32 [2, 2]");
		is_mem(b.labels[1].data, b.labels[1].nbytes, want_b,
		       sizeof(want_b), "b's rows from feature b (int64 "
		       "values as floats)");
	}
	tfk_feed_shift(f, 1);
	is_int(tfk_feed_batch(f, NULL, 1, 1, &b, &err), 0, "batch after shift");
	if (b.n_labels == 2)
		ok(((const int64_t *)b.labels[0].data)[0] == 1 &&
		   ((const float *)b.labels[1].data)[1] == 4.5f,
		   "shift moves every label's rows");
	tfk_feed_free(f);
	tfk_spec_free(s);

	s = spec_of("{" MODEL ",\"inputs\":{\"input_1\":{\"feature\":"
		    "\"v\"}},\"labels\":{\"out\":{\"feature\":\"y\","
		    "\"dtype\":\"int32\"}}}");
	f = NULL;
	is_int(tfk_feed_new(&f, s, &fk.m, &o, &err), 0, "labels.out: %s",
	       err.msg);
	is_int(tfk_feed_add_file(f, path, &err), 0, "add: %s", err.msg);
	is_str(tfk_feed_label_feature(f), "y", "output 0's feature");
	is_int(tfk_feed_batch(f, (const uint32_t[]){ 2, 2 }, 0, 2, &b, &err),
	       0, "permuted batch");
	if (b.n_labels == 2)
		is_mem(b.labels[0].data, b.labels[0].nbytes, want_y,
		       sizeof(want_y), "int32 ids of feature y, rows 2, 2");
	tfk_feed_free(f);
	tfk_spec_free(s);

	s = spec_of("{" MODEL ",\"labels\":{\"feature\":\"y\"}}");
	f = NULL;
	is_int(tfk_feed_new(&f, s, &fk.m, &o, &err), TFK_EINVAL,
	       "the one-output form refused");
	is_str(err.msg, "spec.json: labels.feature: the model has 2 outputs "
	       "(out, b): give one entry per output, {\"out\": {\"feature\":"
	       " ...}, ...}", "message");
	tfk_spec_free(s);
	o.n_loss = 1;
	s = spec_of("{" MODEL "}");
	is_int(tfk_feed_new(&f, s, &fk.m, &o, &err), TFK_EINVAL,
	       "one loss for two outputs refused");
	is_str(err.msg, "spec.json: labels: 1 losses for a model with 2 "
	       "outputs", "message");
	tfk_spec_free(s);
	fake_release(&fk);
}

static void byte_scales(void)
{
	static const double sc[][2] = { { 0.7, 0.123 }, { 1, 0 },
					{ 0.00392156862745098, 0 },
					{ 0.25, -3 }, { 1.0 / 3, 0.5 } };
	static const uint8_t v[4] = { 0, 1, 0x80, 0xff };
	const char *const in_names[] = { "input_1" };
	const int64_t in4[2] = { -1, 4 }, out3[2] = { -1, 3 };
	const char *path = records("bytes.tfrecord",
		"{\"x\":[{\"b64\":\"AAGA/w==\"}],\"label\":[0]}\n");
	struct tfk_feed_opts o = { &sparse, 0, NULL, 0, NULL, 1 };
	struct tfk_feed_batch b;
	struct tfk_err err;
	struct fake fk;
	int i, k, t;

	fake_init(&fk, 1, in_names, TFK_DT_FLOAT, 2, in4, 2, out3);
	for (t = 0; t < 2; t++) {
		for (i = 0; i < 5; i++) {
			struct tfk_feed *f = NULL;
			struct tfk_spec *s;
			char text[512];
			float want[4];

			snprintf(text, sizeof(text), "{" MODEL ",\"inputs\":{"
				 "\"input_1\":{\"dtype\":\"%s\",\"scale\":"
				 "%.17g,\"offset\":%.17g}}}",
				 t ? "int8" : "uint8", sc[i][0], sc[i][1]);
			s = spec_of(text);
			for (k = 0; k < 4; k++)
				want[k] = (float)((t ? (double)(int8_t)v[k] :
						   (double)v[k]) * sc[i][0] +
						  sc[i][1]);
			tfk_feed_new(&f, s, &fk.m, &o, &err);
			if (f && tfk_feed_add_file(f, path, &err) == 0 &&
			    tfk_feed_batch(f, NULL, 0, 1, &b, &err) == 0)
				is_mem(b.inputs[0].data, 16, want, 16,
				       "%s * %g + %g", t ? "int8" : "uint8",
				       sc[i][0], sc[i][1]);
			else
				ok(0, "byte scale %d: %s", i, err.msg);
			tfk_feed_free(f);
			tfk_spec_free(s);
		}
	}
	fake_release(&fk);
}

static void alloc_failures(void)
{
	const char *const in_names[] = { "input_1" };
	int k, bad = 0, done = 0;
	struct tfk_spec *s = spec_of("{" MODEL "}");
	struct fake fk;
	float cw[10] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };

	if (!slice_path[0]) {
		ok(0, "allocation failures need the slice");
		tfk_spec_free(s);
		return;
	}
	fake_init(&fk, 1, in_names, TFK_DT_FLOAT, 3, IMG, 2, OUT10);
	for (k = 0; k < 200 && !done; k++) {
		struct tfk_feed_opts o = { &sparse, 0, cw, 10, NULL, 1 };
		struct tfk_feed *f = NULL;
		struct tfk_feed_batch b;
		struct tfk_err err;
		int rc;

		tfk_alloc_fail_after(k);
		rc = tfk_feed_new(&f, s, &fk.m, &o, &err);
		if (rc == 0)
			rc = tfk_feed_add_file(f, batched_path, &err);
		if (rc == 0)
			rc = tfk_feed_batch(f, NULL, 0, 100, &b, &err);
		tfk_alloc_fail_after(-1);
		if (rc != 0 && rc != TFK_ENOMEM) {
			tap_diag("k %d: %s", k, err.msg);
			bad++;
		}
		done = rc == 0;
		tfk_feed_free(f);
	}
	is_int(bad, 0, "allocation failures give TFK_ENOMEM");
	ok(done, "and enough allocations succeed");
	fake_release(&fk);
	tfk_spec_free(s);
}

int main(void)
{
	const char *b = getenv("TFK_BIN");

	snprintf(bin, sizeof(bin), "%s", b && *b ? b : "bin");
	fashion();
	errors();
	dense();
	two_outputs();
	byte_scales();
	alloc_failures();
	return tap_done();
}
