/*
 * t-tflookup.c - the TF ops a Keras lookup/hashing/encoding layer is
 * exported as, and what the importer reads for them:
 *   tfk_import_text_table (model/import.h), TF's TextFileLineIterator
 *     rules with key_index -2 / value_index -1 (lines, '\r\n', vocab_size,
 *     offset, the empty-line and short-file errors);
 *   _TableFind (kernels/cpu/tflookup.c): found / default / repeated keys;
 *   StringToHashBucketFast and ...Strong (kernels/cpu/tfhash.c) against
 *     the examples of TensorFlow's own documentation
 *     (tf.strings.to_hash_bucket_fast(["Hello", "TensorFlow", "2.x"], 3)
 *     == [0, 2, 2]; tf.strings.to_hash_bucket_strong(["Hello", "TF"], 3,
 *     [1, 2]) == [2, 0]); AsString on ints;
 *   DenseBincount (kernels/cpu/bincount.c): tf.math.bincount semantics
 *     worked by hand (binary, counts, values >= size dropped, a negative
 *     value an error);
 *   StringLower (ASCII only, as TF's default encoding "") and
 *     StaticRegexReplace with Keras' DEFAULT_STRIP_REGEX (written here
 *     from keras' text_vectorization.py; another pattern has no kernel);
 *   _SplitLookupPad: tf.strings.split's whitespace runs, the lookup,
 *     truncation and padding, worked by hand; FloorMod against Python's
 *     % (the divisor's sign), as tf.math.floormod.
 */
#include "graph/exec.h"
#include "graph/graph.h"
#include "model/import.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

static struct tfk_err err;

static int run(struct tfk_graph *g, const char *feed,
	       const struct tfk_tensor *val, const char *fetch,
	       struct tfk_exec **x, const struct tfk_tensor **out)
{
	int rc = tfk_exec_new(x, g, &feed, 1, &fetch, 1, NULL, &err);

	if (!rc)
		rc = tfk_exec_run(*x, val, 0, out, &err);
	return rc;
}

static void strs(struct tfk_tensor *t, const char *const *s, int64_t n)
{
	tfk_tensor_init(t, TFK_DT_STRING, 1, &n, &err);
	for (int64_t i = 0; i < n; i++)
		tfk_tensor_set_str(t, i, s[i], strlen(s[i]), &err);
}

static void text_table(void)
{
	struct tfk_tensor k, v;
	const char *t = "red\r\ngreen\nblue";
	int rc;

	rc = tfk_import_text_table(t, strlen(t), "v.txt", TFK_DT_STRING, -1,
				   2, &k, &v, &err);
	is_int(rc, 0, "three lines, the last without newline");
	is_int(k.shape[0], 3, "3 keys");
	ok(tfk_tensor_str(&k, 0).len == 3 &&
	   !memcmp(tfk_tensor_str(&k, 0).ptr, "red", 3), "'\\r' dropped");
	ok(tfk_tensor_str(&k, 2).len == 4, "last line 'blue'");
	is_int(((int64_t *)v.data)[0], 2, "value = line 0 + offset 2");
	is_int(((int64_t *)v.data)[2], 4, "value = line 2 + offset 2");
	tfk_tensor_release(&k);
	tfk_tensor_release(&v);

	rc = tfk_import_text_table(t, strlen(t), "v.txt", TFK_DT_STRING, 2,
				   0, &k, &v, &err);
	is_int(rc == 0 ? k.shape[0] : -1, 2, "vocab_size 2 reads 2 lines");
	if (!rc) {
		tfk_tensor_release(&k);
		tfk_tensor_release(&v);
	}
	rc = tfk_import_text_table(t, strlen(t), "v.txt", TFK_DT_STRING, 4,
				   0, &k, &v, &err);
	is_int(rc, TFK_EINVAL, "vocab_size 4 of a 3-line file");
	is_str(err.msg, "v.txt: invalid vocab_size: expected 4 lines but "
	       "got 3", "its message");
	rc = tfk_import_text_table("a\n\nb\n", 5, "v.txt", TFK_DT_STRING, -1,
				   0, &k, &v, &err);
	is_int(rc, TFK_EINVAL, "an empty line");
	is_str(err.msg, "v.txt: line 2 is empty", "names the line");
	rc = tfk_import_text_table("30\n-10\n", 7, "i.txt", TFK_DT_INT64, -1,
				   1, &k, &v, &err);
	ok(rc == 0 && ((int64_t *)k.data)[1] == -10 &&
	   ((int64_t *)v.data)[1] == 2, "int64 keys");
	if (!rc) {
		tfk_tensor_release(&k);
		tfk_tensor_release(&v);
	}
	rc = tfk_import_text_table("30\n1x\n", 6, "i.txt", TFK_DT_INT64, -1,
				   0, &k, &v, &err);
	is_int(rc, TFK_EINVAL, "a non-integer line of an int64 table");
	is_str(err.msg, "i.txt: line 2: expected an integer", "its message");
	rc = tfk_import_text_table("", 0, "e.txt", TFK_DT_STRING, -1, 0, &k,
				   &v, &err);
	ok(rc == 0 && k.shape[0] == 0, "an empty file: an empty table");
	if (!rc) {
		tfk_tensor_release(&k);
		tfk_tensor_release(&v);
	}
}

/* _TableFind over keys kv with default -7 on input in. */
static int find(const char *const *keys, int nk, const char *const *in,
		int n, const struct tfk_tensor **out, struct tfk_exec **x,
		struct tfk_graph **gp)
{
	struct tfk_tensor k, v, d, xin;
	struct tfk_port p[2], o;
	int64_t nn = nk, dv = -7;
	int rc;

	tfk_graph_new(gp, &err);
	strs(&k, keys, nk);
	tfk_tensor_init(&v, TFK_DT_INT64, 1, &nn, &err);
	for (int i = 0; i < nk; i++)
		((int64_t *)v.data)[i] = 10 + i;
	tfk_tensor_init_view(&d, TFK_DT_INT64, 0, NULL, &dv, 8,
			     TFK_OWN_BORROWED, &err);
	tfk_graph_placeholder(*gp, "x", TFK_DT_STRING, 1, (int64_t[]){ -1 },
			      &p[0], &err);
	tfk_graph_const(*gp, "d", &d, &p[1], &err);
	{
		struct tfk_attr a[2] = { TFK_A_TENSOR("keys", &k),
					 TFK_A_TENSOR("values", &v) };

		rc = tfk_graph_add_node(*gp, "_TableFind", "f", p, 2, a, 2,
					&o, &err);
	}
	tfk_tensor_release(&k);
	tfk_tensor_release(&v);
	strs(&xin, in, n);
	if (!rc)
		rc = run(*gp, "x", &xin, "f", x, out);
	tfk_tensor_release(&xin);
	return rc;
}

static void table_find(void)
{
	static const char *const keys[] = { "red", "green", "" };
	static const char *const in[] = { "green", "pink", "", "red", "Red" };
	static const char *const dup[] = { "a", "b", "a" };
	const struct tfk_tensor *y;
	struct tfk_exec *x = NULL;
	struct tfk_graph *g;
	int rc = find(keys, 3, in, 5, &y, &x, &g);

	is_int(rc, 0, "_TableFind runs");
	if (!rc) {
		const int64_t *v = y->data;

		ok(v[0] == 11 && v[1] == -7 && v[2] == 12 && v[3] == 10 &&
		   v[4] == -7, "found, default, the empty key, case matters");
	}
	tfk_exec_free(x);
	tfk_graph_free(g);
	x = NULL;
	rc = find(dup, 3, in, 1, &y, &x, &g);
	is_int(rc, TFK_EINVAL, "a key twice in the table");
	ok(strstr(err.msg, "line 3 of its file) repeats an earlier key") !=
	   NULL, "names the line: %s", err.msg);
	tfk_exec_free(x);
	tfk_graph_free(g);
}

static void hash_buckets(void)
{
	static const char *const a[] = { "Hello", "TensorFlow", "2.x" };
	static const char *const b[] = { "Hello", "TF" };
	const struct tfk_tensor *y;
	struct tfk_exec *x = NULL;
	struct tfk_graph *g;
	struct tfk_tensor in;
	struct tfk_port p, o;
	int64_t key[2] = { 1, 2 };
	struct tfk_attr at[2] = { TFK_A_INT("num_buckets", 3) };
	int rc;

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_STRING, 1, (int64_t[]){ -1 }, &p,
			      &err);
	rc = tfk_graph_add_node(g, "StringToHashBucketFast", "h", &p, 1, at,
				1, &o, &err);
	strs(&in, a, 3);
	if (!rc)
		rc = run(g, "x", &in, "h", &x, &y);
	tfk_tensor_release(&in);
	ok(!rc && ((int64_t *)y->data)[0] == 0 &&
	   ((int64_t *)y->data)[1] == 2 && ((int64_t *)y->data)[2] == 2,
	   "to_hash_bucket_fast: TF's documented [0, 2, 2]");
	tfk_exec_free(x);
	tfk_graph_free(g);

	x = NULL;
	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_STRING, 1, (int64_t[]){ -1 }, &p,
			      &err);
	at[1].name = "key";
	at[1].v.kind = TFK_ATTR_LIST_INT;
	at[1].v.list.n = 2;
	at[1].v.list.i = key;
	rc = tfk_graph_add_node(g, "StringToHashBucketStrong", "h", &p, 1,
				at, 2, &o, &err);
	strs(&in, b, 2);
	if (!rc)
		rc = run(g, "x", &in, "h", &x, &y);
	tfk_tensor_release(&in);
	ok(!rc && ((int64_t *)y->data)[0] == 2 &&
	   ((int64_t *)y->data)[1] == 0,
	   "to_hash_bucket_strong key [1, 2]: TF's documented [2, 0]");
	tfk_exec_free(x);
	tfk_graph_free(g);
}

static void as_string(void)
{
	const struct tfk_tensor *y;
	struct tfk_exec *x = NULL;
	struct tfk_graph *g;
	struct tfk_tensor in;
	struct tfk_port p, o;
	int64_t n = 3, v[3] = { 42, -7, 0 };
	struct tfk_attr w = TFK_A_INT("width", 4);
	int rc;

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_INT64, 1, &n, &p, &err);
	rc = tfk_graph_add_node(g, "AsString", "s", &p, 1, NULL, 0, &o, &err);
	tfk_tensor_init_view(&in, TFK_DT_INT64, 1, &n, v, sizeof(v),
			     TFK_OWN_BORROWED, &err);
	if (!rc)
		rc = run(g, "x", &in, "s", &x, &y);
	ok(!rc && tfk_tensor_str(y, 0).len == 2 &&
	   !memcmp(tfk_tensor_str(y, 0).ptr, "42", 2) &&
	   tfk_tensor_str(y, 1).len == 2 &&
	   !memcmp(tfk_tensor_str(y, 1).ptr, "-7", 2) &&
	   tfk_tensor_str(y, 2).len == 1, "AsString: 42 -7 0");
	tfk_exec_free(x);
	x = NULL;
	rc = tfk_graph_add_node(g, "AsString", "s2", &p, 1, &w, 1, &o, &err);
	if (!rc)
		rc = run(g, "x", &in, "s2", &x, &y);
	is_int(rc, TFK_EINVAL, "AsString with a width: no kernel, refused");
	tfk_exec_free(x);
	tfk_graph_free(g);
}

/* DenseBincount of ids [2, 3] into size 4 (binary or counting). */
static void bincount(void)
{
	const struct tfk_tensor *y;
	struct tfk_exec *x = NULL;
	struct tfk_graph *g;
	struct tfk_tensor in, sz, wt;
	struct tfk_port p[3], o;
	int64_t sh[2] = { 2, 3 }, size = 4, zero = 0;
	int64_t ids[6] = { 1, 1, 3, 0, 9, 2 }, bad[6] = { 1, -1, 0, 0, 0, 0 };
	static const float want_c[8] = { 0, 2, 0, 1, 1, 0, 1, 0 };
	static const float want_b[8] = { 0, 1, 0, 1, 1, 0, 1, 0 };
	int rc;

	for (int bin = 0; bin < 2; bin++) {
		struct tfk_attr a[2] = { TFK_A_TYPE("T", TFK_DT_FLOAT),
					 TFK_A_BOOL("binary_output", bin) };

		tfk_graph_new(&g, &err);
		tfk_graph_placeholder(g, "x", TFK_DT_INT64, 2, sh, &p[0],
				      &err);
		tfk_tensor_init_view(&sz, TFK_DT_INT64, 0, NULL, &size, 8,
				     TFK_OWN_BORROWED, &err);
		tfk_tensor_init(&wt, TFK_DT_FLOAT, 1, &zero, &err);
		tfk_graph_const(g, "size", &sz, &p[1], &err);
		tfk_graph_const(g, "w", &wt, &p[2], &err);
		tfk_tensor_release(&wt);
		rc = tfk_graph_add_node(g, "DenseBincount", "b", p, 3, a, 2,
					&o, &err);
		is_int(rc, 0, "DenseBincount builds");
		is_int(tfk_graph_desc(g, o)->shape[1], 4, "output [2, 4]");
		tfk_tensor_init_view(&in, TFK_DT_INT64, 2, sh, ids,
				     sizeof(ids), TFK_OWN_BORROWED, &err);
		x = NULL;
		rc = run(g, "x", &in, "b", &x, &y);
		is_mem(rc ? NULL : y->data, rc ? 0 : y->nbytes,
		       bin ? want_b : want_c, sizeof(want_c),
		       bin ? "binary_output (multi_hot); 9 >= size dropped" :
		       "counts (count mode); 9 >= size dropped");
		if (bin) {
			tfk_tensor_init_view(&in, TFK_DT_INT64, 2, sh, bad,
					     sizeof(bad), TFK_OWN_BORROWED,
					     &err);
			rc = tfk_exec_run(x, &in, 0, &y, &err);
			is_int(rc, TFK_EINVAL, "a negative id is an error");
		}
		tfk_exec_free(x);
		tfk_graph_free(g);
	}
}

/* Run a one-op graph on strings in[0..n); *y borrowed until free. */
static int str_op(const char *op, const struct tfk_attr *a, int na,
		  const char *const *in, int64_t n, struct tfk_graph **g,
		  struct tfk_exec **x, const struct tfk_tensor **y)
{
	struct tfk_tensor t;
	struct tfk_port p, o;
	int rc;

	*x = NULL;
	tfk_graph_new(g, &err);
	tfk_graph_placeholder(*g, "x", TFK_DT_STRING, 1, &n, &p, &err);
	rc = tfk_graph_add_node(*g, op, "op", &p, 1, a, na, &o, &err);
	strs(&t, in, n);
	if (!rc)
		rc = run(*g, "x", &t, "op", x, y);
	tfk_tensor_release(&t);
	return rc;
}

static int str_is(const struct tfk_tensor *t, int64_t i, const char *s)
{
	struct tfk_str v = tfk_tensor_str(t, i);

	return v.len == strlen(s) && (!v.len || !memcmp(v.ptr, s, v.len));
}

static void string_ops(void)
{
	static const char *const in[] = { "The CAT, \xc3\x89t\xc3\xa9!",
					  "a-b_c.d (e) [f] {g} 'h' \\i/",
					  "" };
	/* keras/layers/preprocessing/text_vectorization.py */
	static const char keras_re[] =
		"[!\"#$%&()\\*\\+,-\\./:;<=>?@\\[\\\\\\]^_`{|}~\\']";
	struct tfk_attr re[3] = { TFK_A_STR("pattern", keras_re),
				  TFK_A_STR("rewrite", ""),
				  TFK_A_BOOL("replace_global", 1) };
	const struct tfk_tensor *y;
	struct tfk_exec *x;
	struct tfk_graph *g;
	int rc;

	rc = str_op("StringLower", NULL, 0, in, 3, &g, &x, &y);
	ok(!rc && str_is(y, 0, "the cat, \xc3\x89t\xc3\xa9!") &&
	   str_is(y, 2, ""), "StringLower: A-Z only, UTF-8 kept");
	tfk_exec_free(x);
	tfk_graph_free(g);
	rc = str_op("StaticRegexReplace", re, 3, in, 3, &g, &x, &y);
	ok(!rc && str_is(y, 0, "The CAT \xc3\x89t\xc3\xa9") &&
	   str_is(y, 1, "abcd e f g h i"),
	   "StaticRegexReplace with Keras' pattern: the 32 punctuation "
	   "bytes go");
	tfk_exec_free(x);
	tfk_graph_free(g);
	re[0] = TFK_A_STR("pattern", "[a-z]");
	rc = str_op("StaticRegexReplace", re, 3, in, 3, &g, &x, &y);
	is_int(rc, TFK_EINVAL, "another pattern: no kernel, refused");
	tfk_exec_free(x);
	tfk_graph_free(g);
}

static void split_pad(void)
{
	static const char *const keys[] = { "the", "cat", "sat" };
	static const char *const in[] = { "the cat sat", " \tcat\n\vzebra\f\r",
					  "", "sat sat sat sat the" };
	static const int64_t want[12] = { 2, 3, 4, 3, 1, 0, 0, 0, 0,
					  4, 4, 4 };
	struct tfk_tensor k, v, d, t;
	struct tfk_port p[2], o;
	const struct tfk_tensor *y;
	struct tfk_exec *x = NULL;
	struct tfk_graph *g;
	int64_t n = 3, four = 4, dv = 1;
	int rc;

	strs(&k, keys, 3);
	tfk_tensor_init(&v, TFK_DT_INT64, 1, &n, &err);
	for (int i = 0; i < 3; i++)
		((int64_t *)v.data)[i] = 2 + i;
	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_STRING, 1, &four, &p[0], &err);
	tfk_tensor_init_view(&d, TFK_DT_INT64, 0, NULL, &dv, 8,
			     TFK_OWN_BORROWED, &err);
	tfk_graph_const(g, "d", &d, &p[1], &err);
	{
		struct tfk_attr a[3] = { TFK_A_TENSOR("keys", &k),
					 TFK_A_TENSOR("values", &v),
					 TFK_A_INT("length", 3) };

		rc = tfk_graph_add_node(g, "_SplitLookupPad", "s", p, 2, a, 3,
					&o, &err);
	}
	tfk_tensor_release(&k);
	tfk_tensor_release(&v);
	is_int(rc, 0, "_SplitLookupPad builds");
	strs(&t, in, 4);
	if (!rc)
		rc = run(g, "x", &t, "s", &x, &y);
	tfk_tensor_release(&t);
	ok(!rc && y->rank == 2 && y->shape[0] == 4 && y->shape[1] == 3,
	   "[4, 3] out");
	is_mem(rc ? NULL : y->data, rc ? 0 : 12 * 8, want, sizeof(want),
	       "whitespace runs split, OOV 1, pad 0, truncated at 3");
	tfk_exec_free(x);
	tfk_graph_free(g);
}

/* FloorMod as Python's % (TF's floormod): the sign of the divisor. */
static void floormod(void)
{
	static const int64_t xv[6] = { 7, -7, 7, -7, 0, 30 };
	static const int64_t want[6] = { 1, 2, -2, -1, 0, 0 };
	int64_t n = 6, ys[6] = { 3, 3, -3, -3, 3, 5 }, zero = 0;
	struct tfk_tensor x, y, t;
	struct tfk_port p[2], o;
	const struct tfk_tensor *z;
	struct tfk_exec *ex = NULL;
	struct tfk_graph *g;
	int rc;

	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_INT64, 1, &n, &p[0], &err);
	tfk_tensor_init_view(&y, TFK_DT_INT64, 1, &n, ys, sizeof(ys),
			     TFK_OWN_BORROWED, &err);
	tfk_graph_const(g, "y", &y, &p[1], &err);
	rc = tfk_graph_add_node(g, "FloorMod", "m", p, 2, NULL, 0, &o, &err);
	tfk_tensor_init_view(&x, TFK_DT_INT64, 1, &n, (void *)xv,
			     sizeof(xv), TFK_OWN_BORROWED, &err);
	if (!rc)
		rc = run(g, "x", &x, "m", &ex, &z);
	is_mem(rc ? NULL : z->data, rc ? 0 : z->nbytes, want, sizeof(want),
	       "7%%3 -7%%3 7%%-3 -7%%-3 0%%3 30%%5 as Python's");
	tfk_exec_free(ex);
	tfk_graph_free(g);
	ex = NULL;
	tfk_graph_new(&g, &err);
	tfk_graph_placeholder(g, "x", TFK_DT_INT64, 1, &n, &p[0], &err);
	tfk_tensor_init_view(&t, TFK_DT_INT64, 0, NULL, &zero, 8,
			     TFK_OWN_BORROWED, &err);
	tfk_graph_const(g, "y", &t, &p[1], &err);
	rc = tfk_graph_add_node(g, "FloorMod", "m", p, 2, NULL, 0, &o, &err);
	if (!rc)
		rc = run(g, "x", &x, "m", &ex, &z);
	is_int(rc, TFK_EINVAL, "floormod by zero is an error");
	tfk_exec_free(ex);
	tfk_graph_free(g);
}

int main(void)
{
	text_table();
	table_find();
	hash_buckets();
	as_string();
	bincount();
	string_ops();
	split_pad();
	floormod();
	return tap_done();
}
