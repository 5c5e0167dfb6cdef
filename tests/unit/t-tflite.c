/*
 * t-tflite.c - .tflite loading: TensorFlow-written fixtures against the
 * facts their README states (and schema.fbs numbers written here), every
 * truncation of every fixture, the two broken fixtures, and models made
 * by our builder with one thing wrong each (indices out of range, bad
 * quantization, shapes, buffers too small), plus failed allocations.
 */
#include "graph/exec.h"
#include "graph/graph.h"
#include "model/lite.h"
#include "kernels/cpu.h"
#include "format/flatbuf.h"
#include "util/alloc.h"
#include "tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int load_fixture(struct tfk_tflite *m, const char *rel,
			struct tfk_err *err)
{
	return tfk_tflite_load_file(m, tap_fixture(rel), err);
}

static void hello_world(void)
{
	struct tfk_tflite m;
	struct tfk_err err;
	const struct tfk_tfl_subgraph *s;
	const struct tfk_tfl_tensor *in, *out;
	char rt[32];
	int rc, i;

	rc = load_fixture(&m, "tflite/hello_world/hello_world_float.tflite",
			  &err);
	is_int(rc, 0, "hello_world_float loads: %s", rc ? err.msg : "");
	if (rc)
		return;
	is_int(m.version, 3, "schema version 3");
	is_int(m.n_subgraphs, 1, "one subgraph");
	s = &m.subgraphs[0];
	is_int(s->n_ops, 3, "3 operators");
	for (i = 0; i < s->n_ops; i++)
		is_int(m.opcodes[s->ops[i].opcode_index].builtin_code, 9,
		       "op %d is FULLY_CONNECTED (9)", i);
	is_str(tfk_tfl_op_name(9), "FULLY_CONNECTED", "name of 9");
	is_int(s->n_inputs, 1, "one input");
	is_int(s->n_outputs, 1, "one output");
	in = &s->tensors[s->inputs[0]];
	out = &s->tensors[s->outputs[0]];
	ok(in->type == TFK_TFL_FLOAT32 && in->rank == 2 && in->shape[0] == 1 &&
	   in->shape[1] == 1, "input float32 [1, 1]");
	ok(in->has_shape_signature && in->shape_signature[0] == -1,
	   "input shape_signature [-1, 1]");
	ok(out->type == TFK_TFL_FLOAT32 && out->rank == 2, "output float32");
	{
		/* activations: RELU, RELU, NONE (README) */
		static const char *want[] = { "RELU", "RELU", "NONE" };

		for (i = 0; i < 3; i++) {
			const char *nm;
			char val[64];
			int kind;

			rc = tfk_tflite_option(&s->ops[i], 0, &nm, val,
					       sizeof(val), &kind, &err);
			ok(rc == 1 && !strcmp(nm, "fused_activation_function") &&
			   !strcmp(val, want[i]), "op %d activation %s", i,
			   want[i]);
		}
	}
	is_int(m.n_signatures, 1, "one signature");
	is_str(m.signatures[0].key, "serving_default", "signature key");
	is_int(m.signatures[0].inputs[0].tensor_index, s->inputs[0],
	       "signature input is the subgraph input");
	is_int(tfk_tflite_min_runtime(&m, rt, sizeof(rt)), 0,
	       "min_runtime_version present");
	is_str(rt, "1.5.0", "min_runtime_version");
	{
		struct tfk_tflite_sizes sz;
		int64_t w = 0;

		for (i = 0; i < s->n_tensors; i++)
			if (s->tensors[i].buffer)
				w += m.buffers[s->tensors[i].buffer].size;
		tfk_tflite_sizes(&m, &sz);
		is_int(sz.total, 3164, "total size");
		/* 16+16*16+16 weights, 16+16+1 biases, float32 */
		is_int(w, (16 + 256 + 16 + 16 + 16 + 1) * 4,
		       "weights and biases: 1284 bytes");
		is_int(sz.buffers, w, "buffers section = tensor data");
		is_int(sz.structure, 3164 - sz.buffers - sz.metadata,
		       "structure = the rest");
	}
	tfk_tflite_release(&m);

	rc = load_fixture(&m, "tflite/hello_world/hello_world_int8.tflite",
			  &err);
	is_int(rc, 0, "hello_world_int8 loads: %s", rc ? err.msg : "");
	if (rc)
		return;
	s = &m.subgraphs[0];
	in = &s->tensors[s->inputs[0]];
	out = &s->tensors[s->outputs[0]];
	ok(in->type == TFK_TFL_INT8 && in->quant.n_scale == 1 &&
	   in->quant.scale[0] == 0.024480115622282028f &&
	   in->quant.zero_point[0] == -128,
	   "int8 input: scale 0.024480115622282028, zero point -128");
	ok(out->type == TFK_TFL_INT8 && out->quant.n_scale == 1 &&
	   out->quant.scale[0] == 0.008290956728160381f &&
	   out->quant.zero_point[0] == 5,
	   "int8 output: scale 0.008290956728160381, zero point 5");
	tfk_tflite_release(&m);
}

static void lite_testdata(void)
{
	struct tfk_tflite m;
	struct tfk_err err;
	const struct tfk_tfl_subgraph *s;
	int rc;

	rc = load_fixture(&m, "tflite/lite_testdata/add.bin", &err);
	is_int(rc, 0, "add.bin loads");
	if (!rc) {
		s = &m.subgraphs[0];
		ok(s->n_inputs == 1 && s->inputs[0] == 1 &&
		   !strcmp(s->tensors[1].name, "input"),
		   "add.bin: input is tensor 1 'input'");
		ok(s->tensors[1].rank == 4 && s->tensors[1].shape[1] == 8 &&
		   s->tensors[1].shape[3] == 3, "add.bin: [1, 8, 8, 3]");
		ok(s->n_outputs == 1 && s->outputs[0] == 2,
		   "add.bin: output tensor 2");
		ok(s->n_ops == 2 && m.opcodes[0].builtin_code == TFK_TFL_ADD,
		   "add.bin: two ADDs");
		tfk_tflite_release(&m);
	}
	rc = load_fixture(&m, "tflite/lite_testdata/multi_add.bin", &err);
	is_int(rc, 0, "multi_add.bin loads");
	if (!rc) {
		s = &m.subgraphs[0];
		ok(s->n_inputs == 4 && s->n_outputs == 2 && s->n_ops == 3,
		   "multi_add.bin: 4 inputs a..d, 2 outputs, 3 ops");
		ok(!strcmp(s->tensors[s->inputs[0]].name, "a") &&
		   !strcmp(s->tensors[s->inputs[3]].name, "d") &&
		   !strcmp(s->tensors[s->outputs[0]].name, "x") &&
		   !strcmp(s->tensors[s->outputs[1]].name, "y"),
		   "multi_add.bin: names");
		tfk_tflite_release(&m);
	}
	rc = load_fixture(&m, "tflite/lite_testdata/multi_signatures.bin",
			  &err);
	is_int(rc, 0, "multi_signatures.bin loads");
	if (!rc) {
		ok(m.n_subgraphs == 2 && m.n_signatures == 2,
		   "2 subgraphs, 2 signatures");
		is_str(m.signatures[0].key, "add", "signature 0 'add'");
		is_str(m.signatures[1].key, "sub", "signature 1 'sub'");
		is_int(m.signatures[1].subgraph_index, 1, "'sub' subgraph 1");
		is_int(m.opcodes[m.subgraphs[1].ops[0].opcode_index]
		       .builtin_code, TFK_TFL_SUB, "'sub' runs SUB (41)");
		tfk_tflite_release(&m);
	}
	rc = load_fixture(&m, "tflite/lite_testdata/add_quantized.bin", &err);
	is_int(rc, 0, "add_quantized.bin loads");
	if (!rc) {
		const struct tfk_tfl_tensor *x =
			&m.subgraphs[0].tensors[m.subgraphs[0].inputs[0]];

		ok(x->type == TFK_TFL_UINT8 && fabsf(x->quant.scale[0] -
						     0.003922f) < 1e-7 &&
		   x->quant.zero_point[0] == 0, "uint8, scale 0.003922, zp 0");
		tfk_tflite_release(&m);
	}
	rc = load_fixture(&m, "tflite/lite_testdata/empty_model.bin", &err);
	ok(rc == 0 && m.n_subgraphs == 1 && m.subgraphs[0].n_ops == 0,
	   "empty_model.bin loads: one empty subgraph");
	tfk_tflite_release(&m);
	rc = load_fixture(&m, "tflite/serving_half_plus_two/model.tflite",
			  &err);
	is_int(rc, 0, "serving_half_plus_two loads");
	if (!rc) {
		s = &m.subgraphs[0];
		ok(m.opcodes[s->ops[0].opcode_index].builtin_code ==
		   TFK_TFL_MUL && m.opcodes[s->ops[1].opcode_index]
		   .builtin_code == TFK_TFL_ADD, "MUL then ADD");
		ok(!strcmp(s->tensors[s->inputs[0]].name, "x"), "input x");
		tfk_tflite_release(&m);
	}

	rc = load_fixture(&m, "tflite/lite_testdata/0_subgraphs.bin", &err);
	ok(rc == TFK_ECORRUPT && strstr(err.msg, "0_subgraphs.bin: the model "
					"has no subgraphs"),
	   "0_subgraphs.bin refused: %s", err.msg);
	rc = load_fixture(&m, "tflite/lite_testdata/test_model_broken.bin",
			  &err);
	ok(rc == TFK_ECORRUPT && strstr(err.msg, "test_model_broken.bin: "
					"file identifier"),
	   "test_model_broken.bin refused: %s", err.msg);
	rc = tfk_tflite_load_file(&m, "/nonexistent/x.tflite", &err);
	ok(rc == TFK_EIO && strstr(err.msg, "/nonexistent/x.tflite: No such"),
	   "missing file: %s", err.msg);
}

static const char *const all_fixtures[] = {
	"tflite/hello_world/hello_world_float.tflite",
	"tflite/hello_world/hello_world_int8.tflite",
	"tflite/lite_testdata/add.bin",
	"tflite/lite_testdata/add_quantized.bin",
	"tflite/lite_testdata/add_quantized_int8.bin",
	"tflite/lite_testdata/empty_model.bin",
	"tflite/lite_testdata/multi_add.bin",
	"tflite/lite_testdata/multi_signatures.bin",
	"tflite/serving_half_plus_two/model.tflite",
};

/* Every prefix of every fixture, from an exact-size copy (ASan sees any
 * over-read). FlatBuffers are written back to front, so the last bytes
 * are the first object's; only cuts of trailing alignment padding (all
 * zero, under 16 bytes) may load, and then must load the same model. */
static void truncations(void)
{
	size_t i;

	for (i = 0; i < sizeof(all_fixtures) / sizeof(*all_fixtures); i++) {
		struct tfk_tflite m, full;
		struct tfk_err err;
		size_t n, k, j;
		uint8_t *p = tap_read_file(tap_fixture(all_fixtures[i]), &n);
		int refused = 0, bad = 0, quiet = 0;

		if (!p || tfk_tflite_load(&full, p, n, &err)) {
			ok(0, "%s loads", all_fixtures[i]);
			free(p);
			continue;
		}
		for (k = 0; k < n; k++) {
			uint8_t *c = malloc(k ? k : 1);
			int pad = n - k < 16;
			int rc;

			memcpy(c, p, k);
			for (j = k; j < n; j++)
				pad &= p[j] == 0;
			rc = tfk_tflite_load(&m, c, k, &err);
			if (rc < 0) {
				refused++;
				if (!err.msg[0])
					quiet++;
			} else {
				if (!pad || m.n_subgraphs != full.n_subgraphs)
					bad++;
				tfk_tflite_release(&m);
			}
			free(c);
		}
		ok(!bad && !quiet && refused >= (int)n - 15,
		   "%s: %d of %zu truncations refused with a message, the "
		   "rest cut only padding", all_fixtures[i], refused, n);
		tfk_tflite_release(&full);
		free(p);
	}
}

/* A small model made by our builder, with knobs to break one thing:
 *   buffers: 0 empty, 1 c's 8 bytes, 2 "1.5.0" (16 bytes)
 *   opcodes: [ADD]
 *   tensors: 0 x FLOAT32 [1, 2] (signature [-1, 2]); 1 c FLOAT32 [2]
 *            buffer 1; 2 y INT8 [1, 2] scale [0.5] zero_point [-1]
 *   op: ADD [0, 1] -> [2], AddOptions RELU
 *   signature serving_default: x -> 0, y -> 2; metadata
 *   min_runtime_version -> buffer 2 */
struct knobs {
	uint32_t version;
	int no_subgraphs;
	uint32_t opcode_index;
	int32_t op_in1;
	int32_t sub_out;
	uint32_t c_buffer;
	uint32_t c_bytes;
	int c_rank;
	int32_t c_dim;
	int y_n_scale;
	float y_scale;
	int y_n_zp;
	int64_t y_zp;
	int32_t y_qdim;
	int sig_len;
	uint32_t sig_tensor;
	uint32_t sig_subgraph;
	uint32_t meta_buffer;
	int c_sparse;
	int c_type;
	int y_type;
	int builtin;	/* the operator's code (ADD, 0) */
};

static void defaults(struct knobs *k)
{
	memset(k, 0, sizeof(*k));
	k->version = 3;
	k->op_in1 = 1;
	k->sub_out = 2;
	k->c_buffer = 1;
	k->c_bytes = 8;
	k->c_rank = 1;
	k->c_dim = 2;
	k->y_n_scale = 1;
	k->y_scale = 0.5f;
	k->y_n_zp = 1;
	k->y_zp = -1;
	k->sig_len = 2;
	k->sig_tensor = 2;
	k->meta_buffer = 2;
	k->c_type = TFK_TFL_FLOAT32;
	k->y_type = TFK_TFL_INT8;
}

static uint32_t mk_tensor(struct tfk_fbb *b, const char *name, int type,
			  const int32_t *shape, int rank, const int32_t *sig,
			  uint32_t buffer, uint32_t quant, int sparse)
{
	uint32_t sp = 0;

	if (sparse) {
		tfk_fbb_start(b);
		sp = tfk_fbb_end(b);
	}
	uint32_t nm = tfk_fbb_string(b, name, strlen(name));
	uint32_t sh = tfk_fbb_vector(b, shape, (uint32_t)rank, 4);
	uint32_t sg = sig ? tfk_fbb_vector(b, sig, (uint32_t)rank, 4) : 0;

	tfk_fbb_start(b);
	tfk_fbb_add_ref(b, 0, sh);
	tfk_fbb_add_u8(b, 1, (uint8_t)type);
	tfk_fbb_add_u32(b, 2, buffer);
	tfk_fbb_add_ref(b, 3, nm);
	if (quant)
		tfk_fbb_add_ref(b, 4, quant);
	if (sp)
		tfk_fbb_add_ref(b, 6, sp);
	if (sg)
		tfk_fbb_add_ref(b, 7, sg);
	return tfk_fbb_end(b);
}

static uint32_t mk_tmap(struct tfk_fbb *b, const char *name, uint32_t idx)
{
	uint32_t nm = tfk_fbb_string(b, name, strlen(name));

	tfk_fbb_start(b);
	tfk_fbb_add_ref(b, 0, nm);
	tfk_fbb_add_u32(b, 1, idx);
	return tfk_fbb_end(b);
}

/* Build the model into a malloc'd copy *out of *n bytes. */
static int mk_model(const struct knobs *k, uint8_t **out, size_t *n)
{
	struct tfk_fbb b;
	struct tfk_err err;
	const uint8_t *p;
	uint32_t bufs[3], codes, tens[3], sg, ops, op, opts, q, sig, meta;
	uint32_t r, v;
	static const float cdata[4] = { 1, 2, 3, 4 };
	static const char rt[16] = "1.5.0";
	int32_t xs[2] = { 1, 2 }, xsig[2] = { -1, 2 }, cs[9], io[2];
	float scales[3] = { k->y_scale, k->y_scale, k->y_scale };
	int64_t zps[3] = { k->y_zp, k->y_zp, k->y_zp };
	int rc, i;

	tfk_fbb_init(&b);
	tfk_fbb_start(&b);
	bufs[0] = tfk_fbb_end(&b);
	v = tfk_fbb_vector(&b, cdata, k->c_bytes, 1);
	tfk_fbb_start(&b);
	tfk_fbb_add_ref(&b, 0, v);
	bufs[1] = tfk_fbb_end(&b);
	v = tfk_fbb_vector(&b, rt, 16, 1);
	tfk_fbb_start(&b);
	tfk_fbb_add_ref(&b, 0, v);
	bufs[2] = tfk_fbb_end(&b);
	tfk_fbb_start(&b);
	tfk_fbb_add_u8(&b, 0, (uint8_t)k->builtin);
	tfk_fbb_add_i32(&b, 2, 1);
	tfk_fbb_add_i32(&b, 3, k->builtin);
	codes = tfk_fbb_end(&b);

	for (i = 0; i < 9; i++)
		cs[i] = i ? 1 : k->c_dim;
	tens[0] = mk_tensor(&b, "x", TFK_TFL_FLOAT32, xs, 2, xsig, 0, 0, 0);
	tens[1] = mk_tensor(&b, "c", k->c_type, cs, k->c_rank, NULL,
			    k->c_buffer, 0, k->c_sparse);
	{
		uint32_t sc = tfk_fbb_vector(&b, scales,
					     (uint32_t)k->y_n_scale, 4);
		uint32_t zp = tfk_fbb_vector(&b, zps, (uint32_t)k->y_n_zp, 8);

		tfk_fbb_start(&b);
		tfk_fbb_add_ref(&b, 2, sc);
		tfk_fbb_add_ref(&b, 3, zp);
		tfk_fbb_add_i32(&b, 6, k->y_qdim);
		q = tfk_fbb_end(&b);
	}
	tens[2] = mk_tensor(&b, "y", k->y_type, xs, 2, NULL, 0, q, 0);
	tfk_fbb_start(&b);
	tfk_fbb_add_u8(&b, 0, TFK_TFL_ACT_RELU);
	opts = tfk_fbb_end(&b);
	io[0] = 0;
	io[1] = k->op_in1;
	v = tfk_fbb_vector(&b, io, 2, 4);
	r = tfk_fbb_vector(&b, (int32_t[]){ 2 }, 1, 4);
	tfk_fbb_start(&b);
	tfk_fbb_add_u32(&b, 0, k->opcode_index);
	tfk_fbb_add_ref(&b, 1, v);
	tfk_fbb_add_ref(&b, 2, r);
	tfk_fbb_add_u8(&b, 3, 11);	/* AddOptions */
	tfk_fbb_add_ref(&b, 4, opts);
	op = tfk_fbb_end(&b);
	ops = tfk_fbb_vector_refs(&b, &op, 1);
	{
		uint32_t tv = tfk_fbb_vector_refs(&b, tens, 3);
		uint32_t in = tfk_fbb_vector(&b, (int32_t[]){ 0 }, 1, 4);
		uint32_t ou = tfk_fbb_vector(&b, &k->sub_out, 1, 4);
		uint32_t nm = tfk_fbb_string(&b, "main", 4);

		tfk_fbb_start(&b);
		tfk_fbb_add_ref(&b, 0, tv);
		tfk_fbb_add_ref(&b, 1, in);
		tfk_fbb_add_ref(&b, 2, ou);
		tfk_fbb_add_ref(&b, 3, ops);
		tfk_fbb_add_ref(&b, 4, nm);
		sg = tfk_fbb_end(&b);
	}
	{
		uint32_t ti = mk_tmap(&b, "x", 0);
		uint32_t to = mk_tmap(&b, "y", k->sig_tensor);
		uint32_t vi = tfk_fbb_vector_refs(&b, &ti, 1);
		uint32_t vo = tfk_fbb_vector_refs(&b, &to, 1);
		uint32_t key = tfk_fbb_string(&b, "serving_default", 15);

		tfk_fbb_start(&b);
		tfk_fbb_add_ref(&b, 0, vi);
		tfk_fbb_add_ref(&b, 1, vo);
		tfk_fbb_add_ref(&b, 2, key);
		tfk_fbb_add_u32(&b, 4, k->sig_subgraph);
		sig = tfk_fbb_end(&b);
	}
	{
		uint32_t nm = tfk_fbb_string(&b, "min_runtime_version", 19);

		tfk_fbb_start(&b);
		tfk_fbb_add_ref(&b, 0, nm);
		tfk_fbb_add_u32(&b, 1, k->meta_buffer);
		meta = tfk_fbb_end(&b);
	}
	{
		uint32_t vc = tfk_fbb_vector_refs(&b, &codes, 1);
		uint32_t vs = tfk_fbb_vector_refs(&b, &sg,
						  k->no_subgraphs ? 0 : 1);
		uint32_t vb = tfk_fbb_vector_refs(&b, bufs, 3);
		uint32_t vm = tfk_fbb_vector_refs(&b, &meta, 1);
		uint32_t vg = tfk_fbb_vector_refs(&b, &sig, 1);
		uint32_t ds = tfk_fbb_string(&b, "test model", 10);

		tfk_fbb_start(&b);
		tfk_fbb_add_u32(&b, 0, k->version);
		tfk_fbb_add_ref(&b, 1, vc);
		tfk_fbb_add_ref(&b, 2, vs);
		tfk_fbb_add_ref(&b, 3, ds);
		tfk_fbb_add_ref(&b, 4, vb);
		tfk_fbb_add_ref(&b, 6, vm);
		tfk_fbb_add_ref(&b, 7, vg);
		r = tfk_fbb_end(&b);
	}
	rc = tfk_fbb_finish(&b, r, "TFL3", &p, n, &err);
	if (!rc) {
		*out = malloc(*n);
		memcpy(*out, p, *n);
	}
	tfk_fbb_release(&b);
	return rc;
}

static int try_model(const struct knobs *k, struct tfk_err *err)
{
	struct tfk_tflite m;
	uint8_t *p;
	size_t n;
	int rc;

	if (mk_model(k, &p, &n))
		return 99;
	rc = tfk_tflite_load(&m, p, n, err);
	if (!rc) {
		const char *nm;
		char val[64];
		int kind, i;

		/* decode every option field, as show does */
		for (i = 0; (rc = tfk_tflite_option(&m.subgraphs[0].ops[0], i,
						    &nm, val, sizeof(val),
						    &kind, err)) == 1; i++)
			;
		tfk_tflite_release(&m);
	}
	free(p);
	return rc;
}

#define BAD(field, value, want) do { \
	struct knobs k; \
	struct tfk_err e; \
	int r; \
	defaults(&k); \
	k.field = value; \
	r = try_model(&k, &e); \
	ok(r < 0 && strstr(e.msg, want), "%s = %s refused: %s", #field, \
	   #value, r < 0 ? e.msg : "(loaded)"); \
} while (0)

static void built_models(void)
{
	struct knobs k;
	struct tfk_tflite m;
	struct tfk_err err;
	uint8_t *p;
	size_t n;
	int rc;

	defaults(&k);
	ok(!mk_model(&k, &p, &n), "builder makes the test model");
	rc = tfk_tflite_load(&m, p, n, &err);
	is_int(rc, 0, "test model loads: %s", rc ? err.msg : "");
	if (!rc) {
		const struct tfk_tfl_subgraph *s = &m.subgraphs[0];
		char rt[16], val[32];
		const char *nm;
		int kind;

		is_str(m.description, "test model", "description");
		is_str(s->name, "main", "subgraph name");
		ok(s->n_tensors == 3 && s->n_ops == 1, "3 tensors, 1 op");
		ok(m.buffers[1].size == 8 && !memcmp(m.buffers[1].data,
		   (float[]){ 1, 2 }, 8), "c's buffer holds 1, 2");
		ok(s->tensors[2].quant.scale[0] == 0.5f &&
		   s->tensors[2].quant.zero_point[0] == -1, "y's quant");
		ok(tfk_tflite_option(&s->ops[0], 0, &nm, val, sizeof(val),
				     &kind, &err) == 1 &&
		   !strcmp(val, "RELU"), "ADD's activation RELU");
		ok(tfk_tflite_option(&s->ops[0], 1, &nm, val, sizeof(val),
				     &kind, &err) == 1 &&
		   !strcmp(nm, "pot_scale_int16") && !strcmp(val, "true"),
		   "absent pot_scale_int16 takes its default true");
		ok(!tfk_tflite_min_runtime(&m, rt, sizeof(rt)) &&
		   !strcmp(rt, "1.5.0"), "min_runtime_version");
		is_str(m.signatures[0].outputs[0].name, "y", "signature");
		tfk_tflite_release(&m);
	}
	free(p);

	BAD(version, 2, "schema version 2, expected 3");
	BAD(no_subgraphs, 1, "the model has no subgraphs");
	BAD(opcode_index, 1, "subgraphs[0]: operators[0]: opcode_index 1 is "
	    "outside the model's 1 operator codes");
	BAD(op_in1, 3, "operators[0]: inputs[1]: tensor 3 is outside");
	BAD(op_in1, -2, "inputs[1]: tensor -2 is outside");
	BAD(sub_out, 7, "subgraphs[0]: outputs[0]: tensor 7");
	BAD(c_buffer, 3, "tensors[1]: buffer 3 is outside the model's 3 "
	    "buffers");
	BAD(c_bytes, 4, "tensors[1]: buffer 1 holds 4 bytes, but FLOAT32 "
	    "[2] needs 8");
	BAD(c_rank, 9, "tensors[1]: shape: rank 9 is over the 8");
	BAD(c_dim, -3, "tensors[1]: shape: dimension 0 is -3");
	BAD(y_scale, 0.0f, "tensors[2]: quantization: scale[0] is 0, "
	    "expected a finite value > 0");
	BAD(y_scale, -0.5f, "scale[0] is -0.5");
	BAD(y_scale, (float)NAN, "scale[0] is nan");
	BAD(y_n_zp, 2, "quantization: 1 scales but 2 zero points");
	BAD(y_zp, 128, "zero_point[0] 128 is outside the range of INT8");
	BAD(y_n_scale, 3, "quantization: 3 scales but 1 zero points");
	BAD(sig_tensor, 3, "signature_defs[0]: outputs[0]: tensor_index 3 is "
	    "outside subgraph 0's 3 tensors");
	BAD(sig_subgraph, 1, "signature_defs[0]: subgraph_index 1 is "
	    "outside the model's 1 subgraphs");
	BAD(meta_buffer, 5, "metadata[0]: buffer 5 is outside");
	{
		struct knobs k2;

		/* per-channel: 3 scales and zero points along dim 1 of
		 * size 2 */
		defaults(&k2);
		k2.y_n_scale = 3;
		k2.y_n_zp = 3;
		k2.y_qdim = 1;
		rc = try_model(&k2, &err);
		ok(rc < 0 && strstr(err.msg, "3 scales for dimension 1 of size "
				    "2"), "per-channel count mismatch: %s",
		   err.msg);
		k2.y_qdim = 5;
		rc = try_model(&k2, &err);
		ok(rc < 0 && strstr(err.msg, "quantized_dimension 5 is outside"),
		   "quantized_dimension out of range: %s", err.msg);
	}
	{
		struct knobs k2;
		struct tfk_tflite m;
		uint8_t *p;
		size_t n;

		/* legacy: quantized_dimension 5 of a [1, 2] tensor with 2
		 * scales; dimension 1 alone has 2 entries, so it is meant */
		defaults(&k2);
		k2.y_n_scale = 2;
		k2.y_n_zp = 2;
		k2.y_qdim = 5;
		ok(!mk_model(&k2, &p, &n), "legacy model built");
		rc = tfk_tflite_load(&m, p, n, &err);
		ok(!rc && m.n_warnings == 1 &&
		   m.subgraphs[0].tensors[2].quant.quantized_dimension == 1,
		   "legacy quantized_dimension read as 1: %s",
		   rc ? err.msg : "loaded");
		if (!rc)
			is_str(m.warnings[0], "subgraphs[0]: tensors[2] 'y': "
			       "quantization: quantized_dimension 5 is outside "
			       "the tensor's rank 2; read as 1, the one "
			       "dimension with 2 entries, one per scale (a "
			       "legacy file)", "the warning names the tensor");
		tfk_tflite_release(&m);
		free(p);
	}
	{
		struct knobs k3;

		/* shape overflow: 8 dims of 2^31-1 elements */
		defaults(&k3);
		k3.c_rank = 8;
		k3.c_dim = 0x7fffffff;
		rc = try_model(&k3, &err);
		ok(rc < 0 && strstr(err.msg, "tensors[1]"),
		   "shape whose size overflows: %s", err.msg);
	}
}

static void alloc_failures(void)
{
	struct tfk_tflite m;
	struct tfk_err err;
	size_t n;
	uint8_t *p = tap_read_file(
		tap_fixture("tflite/hello_world/hello_world_int8.tflite"), &n);
	int k, rc = -1, nomem = 0;

	for (k = 0; k < 400 && rc; k++) {
		tfk_alloc_fail_after(k);
		rc = tfk_tflite_load(&m, p, n, &err);
		tfk_alloc_fail_after(-1);
		if (rc == TFK_ENOMEM)
			nomem++;
		if (!rc)
			tfk_tflite_release(&m);
	}
	ok(rc == 0 && nomem == k - 1, "failed allocations: ENOMEM %d times, "
	   "then the model loads", nomem);
	free(p);
}

/* The graph of hello_world_float runs x = 1 to the README's reference
 * value; every allocation of the build failing in turn gives ENOMEM
 * and leaks nothing (ASan run); refusals name what is refused. */
static void graphs(void)
{
	struct tfk_tflite m;
	struct tfk_graph *g;
	struct tfk_exec *x;
	struct tfk_err err;
	struct tfk_tensor in;
	const struct tfk_tensor *out;
	const char *feed = "t0", *fetch = "t9";
	int64_t shape[2] = { 1, 1 };
	int k, rc = -1, nomem = 0;

	if (load_fixture(&m, "tflite/hello_world/hello_world_float.tflite",
			 &err)) {
		ok(0, "hello_world_float loads");
		return;
	}
	for (k = 0; k < 400 && rc; k++) {
		tfk_alloc_fail_after(k);
		rc = tfk_tflite_graph(&m, 0, NULL, &g, &err);
		tfk_alloc_fail_after(-1);
		if (rc == TFK_ENOMEM)
			nomem++;
	}
	ok(rc == 0 && nomem == k - 1, "graph build: ENOMEM %d times, then "
	   "built", nomem);
	if (rc) {
		tfk_tflite_release(&m);
		return;
	}
	tfk_tensor_init(&in, TFK_DT_FLOAT, 2, shape, &err);
	((float *)in.data)[0] = 1.0f;
	rc = tfk_exec_new(&x, g, &feed, 1, &fetch, 1, NULL, &err);
	if (!rc)
		rc = tfk_exec_run(x, &in, 0, &out, &err);
	ok(rc == 0 && fabsf(((const float *)out->data)[0] - 0.8630436f) <
	   1e-5f, "x = 1 gives 0.8630436 (README reference pass)");
	tfk_exec_free(x);
	tfk_graph_free(g);
	tfk_tensor_release(&in);
	rc = tfk_tflite_graph(&m, 1, NULL, &g, &err);
	ok(rc == TFK_EINVAL && strstr(err.msg, "no subgraph 1"),
	   "subgraph out of range: %s", err.msg);
	tfk_tflite_release(&m);

	if (load_fixture(&m, "tflite/hello_world/hello_world_int8.tflite",
			 &err)) {
		ok(0, "hello_world_int8 loads");
		return;
	}
	rc = tfk_tflite_graph(&m, 0, NULL, &g, &err);
	ok(rc == TFK_EINVAL && g == NULL && strstr(err.msg, "is INT8: "
	   "quantized models are not supported by run yet"),
	   "int8 model refused: %s", err.msg);
	tfk_tflite_release(&m);
}

/* Constants whose buffers do not hold numel plain values (sparse,
 * INT4: the loader cannot size-check them) are refused by the graph
 * builder before any read (y made FLOAT32, so that the refusal comes
 * from c, operator 0's input 1; ASan checks that nothing is read). */
static void unsized_constants(void)
{
	struct knobs k;
	struct tfk_tflite m;
	struct tfk_graph *g;
	struct tfk_err err;
	uint8_t *p;
	size_t n;
	int rc;

	defaults(&k);
	k.y_type = TFK_TFL_FLOAT32;
	k.c_sparse = 1;
	k.c_bytes = 3;		/* not numel * 4: a sparse encoding */
	ok(!mk_model(&k, &p, &n), "model with a sparse constant");
	rc = tfk_tflite_load(&m, p, n, &err);
	is_int(rc, 0, "sparse constant: loads (its size is not checked)");
	if (!rc) {
		rc = tfk_tflite_graph(&m, 0, NULL, &g, &err);
		ok(rc == TFK_EINVAL && strstr(err.msg, "operator 0 (ADD): "
					      "sparse constant 'c' is not "
					      "supported"),
		   "sparse constant refused: %s", err.msg);
		tfk_tflite_release(&m);
	}
	free(p);
	defaults(&k);
	k.y_type = TFK_TFL_FLOAT32;
	k.c_type = TFK_TFL_INT4;
	k.c_bytes = 1;
	ok(!mk_model(&k, &p, &n), "model with an INT4 constant");
	rc = tfk_tflite_load(&m, p, n, &err);
	is_int(rc, 0, "INT4 constant: loads");
	if (!rc) {
		rc = tfk_tflite_graph(&m, 0, NULL, &g, &err);
		ok(rc == TFK_EINVAL && strstr(err.msg, "INT4 constant 'c' is "
					      "not supported"),
		   "INT4 constant refused: %s", err.msg);
		tfk_tflite_release(&m);
	}
	free(p);
}

/* tfk_tflite_int8_max_work on hello_world_int8's three FULLY_CONNECTED
 * layers, [b,1]x[16,1] -> [b,16] -> [b,16] -> [b,1]: each costs its
 * input's elements plus output elements times weights per output, so
 * for b = 3: 3 + 48*1, 48 + 48*16, 48 + 3*16 = 51, 816, 96 (963). */
static void int8_work_limit(void)
{
	static const int64_t shape[2] = { 3, 1 };
	struct tfk_tflite m;
	struct tfk_tfl_int8 *q;
	struct tfk_tensor feed, out;
	struct tfk_err err;
	int outi, rc;

	if (load_fixture(&m, "tflite/hello_world/hello_world_int8.tflite",
			 &err) ||
	    tfk_tflite_int8_new(&q, &m, 0, &err)) {
		ok(0, "hello_world_int8 prepares: %s", err.msg);
		return;
	}
	outi = m.subgraphs[0].outputs[0];
	if (tfk_tensor_init(&feed, TFK_DT_FLOAT, 2, shape, &err))
		abort();
	tfk_tflite_int8_max_work(q, 963);
	rc = tfk_tflite_int8_run(q, &feed, 1, &outi, &out, &err);
	is_int(rc, 0, "963 operations are enough: %s", rc ? err.msg : "");
	if (!rc) {
		is_int(out.shape[0], 3, "three rows out");
		tfk_tensor_release(&out);
	}
	tfk_tflite_int8_max_work(q, 962);
	rc = tfk_tflite_int8_run(q, &feed, 1, &outi, &out, &err);
	is_int(rc, TFK_EINVAL, "962 are not");
	is_str(err.msg, "operator 2 (FULLY_CONNECTED): the run would take "
	       "more than 962 operations (the limit)", "the last layer "
	       "is refused");
	tfk_tflite_int8_max_work(q, 866);
	rc = tfk_tflite_int8_run(q, &feed, 1, &outi, &out, &err);
	is_str(rc ? err.msg : "", "operator 1 (FULLY_CONNECTED): the run "
	       "would take more than 866 operations (the limit)",
	       "51 + 816 > 866: the second layer is refused");
	tfk_tflite_int8_max_work(q, 0);
	rc = tfk_tflite_int8_run(q, &feed, 0, NULL, NULL, &err);
	is_int(rc, 0, "0: no limit");
	tfk_tensor_release(&feed);
	tfk_tflite_int8_free(q);
	tfk_tflite_release(&m);
}

/* The int8 interpreter refuses a QUANTIZE or DEQUANTIZE output of
 * another type than they write (fuzz-tflint8: a DEQUANTIZE into an INT8
 * tensor wrote float32 values past its buffer). The test model's
 * operator reads FLOAT32 x and c and writes y. */
static void int8_types(void)
{
	static const struct {
		int builtin, y_type;
		const char *msg;
	} c[] = {
		{ 6, TFK_TFL_INT8, "operator 0 (DEQUANTIZE): output tensor 2 "
		  "'y' is INT8, expected FLOAT32" },
		{ 114, TFK_TFL_INT32, "operator 0 (QUANTIZE): output tensor 2 "
		  "'y' is INT32, expected INT8" },
	};
	struct knobs k;
	struct tfk_tflite m;
	struct tfk_tfl_int8 *q;
	struct tfk_tensor feed, out;
	struct tfk_err err;
	uint8_t *p;
	size_t n, i;
	int rc;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		defaults(&k);
		k.builtin = c[i].builtin;
		k.y_type = c[i].y_type;
		if (mk_model(&k, &p, &n) || tfk_tflite_load(&m, p, n, &err)) {
			ok(0, "model %zu loads: %s", i, err.msg);
			continue;
		}
		rc = tfk_tflite_int8_new(&q, &m, 0, &err);
		if (!rc) {
			if (tfk_tensor_init(&feed, TFK_DT_FLOAT, 2,
					    (int64_t[]){ 1, 2 }, &err))
				abort();
			rc = tfk_tflite_int8_run(q, &feed, 1,
						 &m.subgraphs[0].outputs[0],
						 &out, &err);
			tfk_tensor_release(&feed);
			tfk_tflite_int8_free(q);
		}
		is_str(rc ? err.msg : "(ran)", c[i].msg, "refused: %s",
		       c[i].msg);
		tfk_tflite_release(&m);
		free(p);
	}
}

/* tfk_tflite_graph_limited on hello_world_float, fed [1, 1]: its
 * first FULLY_CONNECTED ([1, 1] x [16, 1]) is the Const weights and
 * bias (16 and 16 elements), MatMul 1 + 16 * 1, BiasAdd 16 + 16 and
 * Relu 16 + 16: 113, so 112 refuses operator 0, 113 operator 1, and
 * no limit builds the graph. */
static void graph_work_limit(void)
{
	struct tfk_tdesc in = { TFK_DT_FLOAT, 2, { 1, 1 } };
	struct tfk_tflite m;
	struct tfk_graph *g;
	struct tfk_err err;
	int rc;

	if (load_fixture(&m, "tflite/hello_world/hello_world_float.tflite",
			 &err)) {
		ok(0, "hello_world_float loads: %s", err.msg);
		return;
	}
	rc = tfk_tflite_graph_limited(&m, 0, &in, 112, &g, &err);
	is_str(rc ? err.msg : "(built)", "subgraph 0: operator 0 "
	       "(FULLY_CONNECTED): the run would take more than 112 "
	       "operations (the limit)", "the first layer passes 112");
	rc = tfk_tflite_graph_limited(&m, 0, &in, 113, &g, &err);
	ok(rc != 0 && strstr(err.msg, "operator 1 (FULLY_CONNECTED)"),
	   "113 pays for the first layer only: %s", rc ? err.msg : "");
	rc = tfk_tflite_graph_limited(&m, 0, &in, 0, &g, &err);
	is_int(rc, 0, "0: no limit");
	tfk_graph_free(g);
	tfk_tflite_release(&m);
}

/* TFLite's hybrid FULLY_CONNECTED (tfk_cpu_hybrid_matmul_ref) against
 * values worked out by hand: the rows' int8 values, zero points and
 * int32 sums, then y = sum * (row scale * weight scale). */
static void hybrid_fc(void)
{
	/* symmetric: max|x| = 1, s = 1/127, q = round(127 x) away from
	 * zero: [127, -64 (-63.5), 32 (31.75), 0] */
	static const float x1[4] = { 1.0f, -0.5f, 0.25f, 0.0f };
	static const int8_t w[8] = { 1, 2, 3, 4, -1, 0, 1, 127 };
	static const float sc[2] = { 0.5f, 0.25f };
	/* asymmetric: range [min(0, -1), 2] = 3 over 255 levels, s = 3/255,
	 * zero point -128 + 1/s = -43; q of 0.5 = round(-43 + 42.5) = -1
	 * (half away from zero, not to even); row 2: [0, 3], zero point
	 * -128, q = [-128, -43, 42, 127] */
	static const float x2[8] = { -1.0f, 0.5f, 2.0f, 0.0f,
				     0.0f, 1.0f, 2.0f, 3.0f };
	static const int8_t w2[8] = { 0, 1, 0, 0, 1, 2, 3, 4 };
	static const float zero[4] = { 0 };
	int8_t q[4];
	float y[4], s;

	tfk_cpu_hybrid_matmul_ref(1, 2, 4, x1, w, sc, 2, 0, q, y);
	s = 1.0f / 127;
	/* 127 - 128 + 96 = 95; -127 + 32 = -95 */
	ok(y[0] == 95.0f * (s * 0.5f) && y[1] == -95.0f * (s * 0.25f),
	   "hybrid FC, symmetric, per channel: %.9g %.9g", y[0], y[1]);
	tfk_cpu_hybrid_matmul_ref(1, 2, 4, x1, w, sc, 1, 0, q, y);
	ok(y[0] == 95.0f * (s * 0.5f) && y[1] == -95.0f * (s * 0.5f),
	   "hybrid FC, one weight scale: %.9g %.9g", y[0], y[1]);
	tfk_cpu_hybrid_matmul_ref(2, 2, 4, x2, w2, sc, 2, 1, q, y);
	s = (float)(3.0 / 255.0);
	/* row 0, q = [-128, -1, 127, -43]: w0 . q = -1, minus zero point
	 * * sum w0: -1 + 43 = 42; w1 . q = -128 - 2 + 381 - 172 = 79,
	 * + 10 * 43 = 509 (real: 6 * 0.25 = 1.5) */
	ok(y[0] == 42.0f * (s * 0.5f) && y[1] == 509.0f * (s * 0.25f) &&
	   fabsf(y[1] - 1.5f) < 0.01f,
	   "hybrid FC, asymmetric, row 0: %.9g %.9g", y[0], y[1]);
	/* row 1: -43 - (-128) = 85; -128 - 86 + 126 + 508 + 1280 = 1700 */
	ok(y[2] == 85.0f * (s * 0.5f) && y[3] == 1700.0f * (s * 0.25f) &&
	   fabsf(y[3] - 5.0f) < 1e-5f,
	   "hybrid FC, asymmetric, row 1: %.9g %.9g (real 5)", y[2], y[3]);
	tfk_cpu_hybrid_matmul_ref(1, 2, 4, zero, w, sc, 2, 1, q, y);
	ok(y[0] == 0 && y[1] == 0, "hybrid FC: an all-zero row gives 0");
}

int main(void)
{
	hybrid_fc();
	hello_world();
	lite_testdata();
	truncations();
	built_models();
	alloc_failures();
	graphs();
	unsized_constants();
	int8_work_limit();
	int8_types();
	graph_work_limit();
	return tap_done();
}
