/*
 * fuzz-tabletext.c - the vocabulary-file reader of the SavedModel
 * importer (tfk_import_text_table: TF's TextFileLineIterator with
 * key_index -2, value_index -1) on arbitrary bytes, and the _TableFind
 * kernel over the table it makes.
 *
 * Seeds: tests/fuzz/seeds/fuzz-tabletext/. The first byte chooses the
 * key dtype (bit 0: int64, else string), vocab_size ((byte >> 1) % 8 - 1,
 * so -1 = all lines) and a huge offset (bit 4: near INT64_MAX, which must
 * wrap, not overflow); the rest is the file. A table that reads is
 * searched for its own keys: each must give its own value, or the run
 * must refuse a repeated key. Invariants: keys and values have one
 * length, every string key is non-empty and holds no '\n'.
 */
#include "graph/exec.h"
#include "graph/graph.h"
#include "model/import.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void find_all(const struct tfk_tensor *k, const struct tfk_tensor *v)
{
	struct tfk_graph *g = NULL;
	struct tfk_exec *x = NULL;
	struct tfk_err err;
	struct tfk_port p[2], o;
	struct tfk_tensor d;
	const struct tfk_tensor *y;
	const char *feed = "x", *fetch = "f";
	int64_t dv = -1, n = k->shape[0];
	struct tfk_attr a[2] = { TFK_A_TENSOR("keys", k),
				 TFK_A_TENSOR("values", v) };

	if (tfk_graph_new(&g, &err))
		return;
	tfk_tensor_init_view(&d, TFK_DT_INT64, 0, NULL, &dv, 8,
			     TFK_OWN_BORROWED, &err);
	if (!tfk_graph_placeholder(g, "x", k->dtype, 1, &n, &p[0], &err) &&
	    !tfk_graph_const(g, "d", &d, &p[1], &err) &&
	    !tfk_graph_add_node(g, "_TableFind", "f", p, 2, a, 2, &o, &err) &&
	    !tfk_exec_new(&x, g, &feed, 1, &fetch, 1, NULL, &err) &&
	    !tfk_exec_run(x, k, 0, &y, &err)) {
		for (int64_t i = 0; i < n; i++)
			if (((const int64_t *)y->data)[i] !=
			    ((const int64_t *)v->data)[i])
				abort();
	}
	tfk_exec_free(x);
	tfk_graph_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tfk_tensor k, v;
	struct tfk_err err;
	enum tfk_dtype kt;
	int64_t vs, off;

	if (size < 1 || size > 65536)
		return 0;
	kt = data[0] & 1 ? TFK_DT_INT64 : TFK_DT_STRING;
	vs = (int64_t)((data[0] >> 1) % 8) - 1;
	off = data[0] & 16 ? INT64_MAX - 2 : 1;
	if (tfk_import_text_table((const char *)data + 1, size - 1, "f.txt",
				  kt, vs, off, &k, &v, &err))
		return 0;
	if (k.rank != 1 || v.rank != 1 || k.shape[0] != v.shape[0] ||
	    (vs >= 0 && k.shape[0] != vs))
		abort();
	for (int64_t i = 0; kt == TFK_DT_STRING && i < k.shape[0]; i++) {
		struct tfk_str s = tfk_tensor_str(&k, i);

		if (!s.len || memchr(s.ptr, '\n', s.len))
			abort();
	}
	find_all(&k, &v);
	tfk_tensor_release(&k);
	tfk_tensor_release(&v);
	return 0;
}
