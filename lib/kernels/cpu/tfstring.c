/*
 * tfstring.c - the TensorFlow string ops Keras' TextVectorization
 * standardizes with, as a SavedModel of ours holds them (and so as
 * tfk-model runs them again):
 *
 *   StringLower(input string) -> string, attr encoding: "" only (ASCII:
 *       only A-Z change, as TF with its default encoding; "utf-8" has no
 *       kernel here);
 *   StaticRegexReplace(input string) -> string: only Keras'
 *       DEFAULT_STRIP_REGEX '[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'
 *       with rewrite "" and replace_global true, i.e. the 32 ASCII
 *       punctuation bytes removed (prep/textvec.h says why that is the
 *       whole class, byte by byte). Any other pattern has no kernel
 *       here: there is no regex engine, and a wrong one would be worse
 *       than none. supports() says so; the importer names the op.
 *
 * The byte work is tfk_textvec_standardize, what tfk-map's
 * TextVectorization op does, so the export equals the model it came
 * from.
 */
#include "kernels/cpu.h"
#include "prep/textvec.h"
#include "graph/graph.h"
#include "graph/op.h"
#include "util/alloc.h"

#include <string.h>

static int s_attr_is(const struct tfk_node *n, const char *name,
		     const char *want)
{
	const struct tfk_attr_value *v = tfk_node_attr(n, name);
	size_t len = strlen(want);

	if (!v)
		return len == 0;
	return v->kind == TFK_ATTR_STRING && v->s.len == len &&
	       (!len || !memcmp(v->s.p, want, len));
}

static int lower_supports(const struct tfk_node *n)
{
	return s_attr_is(n, "encoding", "");
}

static int regex_supports(const struct tfk_node *n)
{
	return s_attr_is(n, "pattern", TFK_KERAS_STRIP_REGEX) &&
	       s_attr_is(n, "rewrite", "") &&
	       tfk_node_attr_b(n, "replace_global", 1);
}

static int k_standardize(struct tfk_kernel_ctx *kc)
{
	const struct tfk_tensor *x = kc->in[0];
	int std = !strcmp(kc->node->op->name, "StringLower") ?
		  TFK_STD_LOWER : TFK_STD_STRIP_PUNCTUATION;
	int64_t n = tfk_tensor_numel(x), i;
	char *buf = NULL;
	size_t cap = 0;
	int rc = 0;

	for (i = 0; i < n && !rc; i++) {
		struct tfk_str s = tfk_tensor_str(x, i);
		size_t m;

		if (s.len > cap) {
			char *q = tfk_realloc(buf, s.len);

			if (!q) {
				rc = tfk_errf(kc->err, TFK_ENOMEM,
					      "out of memory");
				break;
			}
			buf = q;
			cap = s.len;
		}
		m = s.len ? tfk_textvec_standardize(std, s.ptr, s.len, buf) : 0;
		rc = tfk_tensor_set_str(kc->out[0], i, buf, m, kc->err);
	}
	tfk_free(buf);
	return rc;
}

const struct tfk_op_def tfk_ops_tfstring[] = {
	{
		.name = "StringLower",
		.inputs = { { "input", TFK_DT_STRING } },
		.outputs = { { "output", TFK_DT_STRING } },
		.attrs = { { "encoding", TFK_ATTR_STRING, 1,
			     { .s = { "", 0 } } } },
	},
	{
		.name = "StaticRegexReplace",
		.inputs = { { "input", TFK_DT_STRING } },
		.outputs = { { "output", TFK_DT_STRING } },
		.attrs = {
			{ "pattern", TFK_ATTR_STRING, 0, { 0 } },
			{ "rewrite", TFK_ATTR_STRING, 0, { 0 } },
			{ "replace_global", TFK_ATTR_BOOL, 1, { .b = 1 } },
		},
	},
	{ .name = NULL }
};

const struct tfk_kernel tfk_kernels_cpu_tfstring[] = {
	{ "StringLower", "cpu", lower_supports, k_standardize, NULL },
	{ "StaticRegexReplace", "cpu", regex_supports, k_standardize, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
