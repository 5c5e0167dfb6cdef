/*
 * smrun.c - `tfk-model run`: run one SignatureDef of a SavedModel on
 * inputs from the command line, as saved_model_cli run does.
 *
 * The model is loaded (format/savedmodel.h), the signature imported as a
 * pruned graph (model/import.h), the inputs turned into tensors, and
 * one executor run (graph/exec.h) gives the outputs, printed in key
 * order as "Result for output key K:" + numpy's str() of the array
 * (io/npy.h), and written as K.npy under --outdir.
 *
 * Inputs, with saved_model_cli's option names and syntax
 * ("key=value;key2=value2"):
 *   --inputs         key=FILE.npy, key=FILE.npz[NAME] (npz with one
 *                    array: the name may be left out)
 *   --input_exprs    key=LITERAL: saved_model_cli evals Python; here a
 *                    literal parser (numbers, strings, nested lists and
 *                    tuples, True/False) -- nothing is evaluated, so
 *                    np.ones(...) and the like are refused
 *   --input_examples key=[{"feature": [values], ...}, ...]: serialized
 *                    tf.Examples (float, int or bytes lists by the type
 *                    of each list's first value, as saved_model_cli)
 *   --input_records  key=FILE or FILE: every record of a TFRecord file
 *                    as a string vector (the serialized tf.Examples a
 *                    regress/classify signature takes); FILE alone when
 *                    the signature has one string input
 * Later options win for the same key (records > examples > exprs >
 * inputs), as in saved_model_cli.
 * Values are converted to the signature's dtype the way feeding numpy
 * arrays converts them (ints to floats, float64 to float32); a float to
 * an integer input, a string to a number and the like are refused.
 * Differences from saved_model_cli: --tag_set and --signature_def
 * default to "serve" and "serving_default"; a string output is written
 * as a fixed-width bytes array (|S) rather than a pickled object array.
 */
#include "format/savedmodel.h"

#include "example/example.h"
#include "graph/exec.h"
#include "io/in.h"
#include "io/npy.h"
#include "io/out.h"
#include "io/record.h"
#include "kernels/cpu.h"
#include "model/import.h"
#include "model/mains.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/cli.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *dir;
static const char *tag_set = "serve";
static const char *signature_def = "serving_default";
static const char *inputs_arg, *exprs_arg, *examples_arg, *records_arg;
static const char *outdir;
static int overwrite;
static long threads;

static const struct tfk_opt run_opts[] = {
	TFK_OPT_STR(0, "dir", &dir, "DIR", "the SavedModel directory"),
	TFK_OPT_STR(0, "tag_set", &tag_set, "TAGS", "the MetaGraphDef's "
		    "tags, comma-separated"),
	TFK_OPT_STR(0, "signature_def", &signature_def, "KEY",
		    "the signature to run"),
	TFK_OPT_STR(0, "inputs", &inputs_arg, "K=FILE", "inputs from .npy "
		    "files or FILE.npz[NAME] (';' between inputs)"),
	TFK_OPT_STR(0, "input_exprs", &exprs_arg, "K=LITERAL",
		    "inputs as Python literals, e.g. 'x=[[1.0],[2.0]]'"),
	TFK_OPT_STR(0, "input_examples", &examples_arg, "K=LIST",
		    "inputs as lists of tf.Example feature dicts, e.g. "
		    "'inputs=[{\"x\": [1.0]}]'"),
	TFK_OPT_STR(0, "input_records", &records_arg, "[K=]FILE",
		    "every record of a TFRecord file as a string vector"),
	TFK_OPT_STR(0, "outdir", &outdir, "DIR", "also write each output "
		    "as DIR/KEY.npy"),
	TFK_OPT_FLAG(0, "overwrite", &overwrite, "replace existing .npy "
		     "files in --outdir"),
	TFK_OPT_LONG('j', "threads", &threads, "N", "kernel threads "
		     "(0: all CPUs)"),
	TFK_OPT_END
};

static const struct tfk_cmd run_cmd = {
	"tfk-model",
	"run --dir DIR [--tag_set TAGS] [--signature_def KEY] "
	"[--inputs K=FILE] [--input_exprs K=LITERAL] "
	"[--input_examples K=[{...}]] [--input_records [K=]FILE] "
	"[--outdir DIR [--overwrite]]",
	"run a SavedModel signature on the given inputs, as saved_model_cli "
	"run",
	"tfk-model run --dir model --signature_def serving_default "
	"--input_exprs 'x=[[2.0]]'",
};

/* Given inputs: key -> tensor (heap). */
struct feed {
	char *key;
	struct tfk_tensor t;
	const char *from;	/* option name, for messages */
};

struct feeds {
	struct feed *v;
	int n, cap;
};

static void feeds_release(struct feeds *f)
{
	int i;

	for (i = 0; i < f->n; i++) {
		tfk_free(f->v[i].key);
		tfk_tensor_release(&f->v[i].t);
	}
	tfk_free(f->v);
	memset(f, 0, sizeof(*f));
}

/* Set key (consumes t). */
static int feeds_set(struct feeds *f, const char *key, size_t klen,
		     struct tfk_tensor *t, const char *from,
		     struct tfk_err *err)
{
	int i;

	for (i = 0; i < f->n; i++)
		if (strlen(f->v[i].key) == klen &&
		    !strncmp(f->v[i].key, key, klen)) {
			tfk_cli_warn("run: input key %s given by %s and %s; "
				     "the value from %s is used",
				     f->v[i].key, f->v[i].from, from, from);
			tfk_tensor_release(&f->v[i].t);
			f->v[i].t = *t;
			f->v[i].from = from;
			memset(t, 0, sizeof(*t));
			return 0;
		}
	if (f->n == f->cap) {
		int cap = f->cap ? f->cap * 2 : 4;
		struct feed *nv = tfk_realloc(f->v, cap * sizeof(*nv));

		if (!nv) {
			tfk_tensor_release(t);
			return tfk_errf(err, TFK_ENOMEM, "out of memory");
		}
		f->v = nv;
		f->cap = cap;
	}
	f->v[f->n].key = tfk_malloc(klen + 1);
	if (!f->v[f->n].key) {
		tfk_tensor_release(t);
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	}
	memcpy(f->v[f->n].key, key, klen);
	f->v[f->n].key[klen] = 0;
	f->v[f->n].t = *t;
	f->v[f->n].from = from;
	memset(t, 0, sizeof(*t));
	f->n++;
	return 0;
}

/* Split spec at ';' outside quotes and brackets into "key=value" items;
 * calls fn(key, klen, value, vlen). */
static int for_items(const char *spec, const char *opt,
		     int (*fn)(const char *k, size_t kl, const char *v,
			       size_t vl, void *ctx, struct tfk_err *err),
		     void *ctx, int key_optional, struct tfk_err *err)
{
	const char *p = spec;

	while (*p) {
		const char *q = p, *eq = NULL;
		int depth = 0, rc;
		char quote = 0;

		for (; *q; q++) {
			if (quote) {
				if (*q == '\\' && q[1])
					q++;
				else if (*q == quote)
					quote = 0;
				continue;
			}
			if (*q == '\'' || *q == '"')
				quote = *q;
			else if (*q == '[' || *q == '(' || *q == '{')
				depth++;
			else if (*q == ']' || *q == ')' || *q == '}')
				depth--;
			else if (*q == '=' && !eq && !depth)
				eq = q;
			else if (*q == ';' && !depth)
				break;
		}
		if (q > p) {
			if (!eq && !key_optional)
				return tfk_errf(err, TFK_EINVAL, "%s: '%.*s' is "
						"not KEY=VALUE", opt,
						(int)(q - p), p);
			if (eq)
				rc = fn(p, (size_t)(eq - p), eq + 1,
					(size_t)(q - eq - 1), ctx, err);
			else
				rc = fn(NULL, 0, p, (size_t)(q - p), ctx,
					err);
			if (rc)
				return rc;
		}
		p = *q ? q + 1 : q;
	}
	return 0;
}

static char *dupn(const char *s, size_t n)
{
	char *p = tfk_malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = 0;
	}
	return p;
}

static int item_input(const char *k, size_t kl, const char *v, size_t vl,
		      void *ctx, struct tfk_err *err)
{
	char *path = dupn(v, vl), *name = NULL, *br;
	struct tfk_tensor t;
	int rc;

	if (!path)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	br = strchr(path, '[');
	if (br && path[vl - 1] == ']') {
		path[vl - 1] = 0;
		*br = 0;
		name = br + 1;
	}
	rc = tfk_npy_read(path, name, &t, err);
	if (!rc)
		rc = feeds_set(ctx, k, kl, &t, "--inputs", err);
	tfk_free(path);
	return rc;
}

static int item_expr(const char *k, size_t kl, const char *v, size_t vl,
		     void *ctx, struct tfk_err *err)
{
	char *s = dupn(v, vl);
	struct tfk_lit lit;
	struct tfk_tensor t;
	int rc;

	if (!s)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = tfk_lit_parse(s, &lit, err);
	tfk_free(s);
	if (rc)
		return tfk_err_prefix(err, "--input_exprs: %.*s", (int)kl, k);
	rc = tfk_lit_to_tensor(&lit, &t, err);
	tfk_lit_release(&lit);
	if (rc)
		return tfk_err_prefix(err, "--input_exprs: %.*s", (int)kl, k);
	return feeds_set(ctx, k, kl, &t, "--input_exprs", err);
}

/* One dict {"name": [values]} -> a serialized Example in b. */
static int build_example(const struct tfk_lit *d,
			 struct tfk_example_builder *b, int idx,
			 struct tfk_err *err)
{
	int i, j;

	tfk_exb_reset(b);
	if (d->kind != TFK_LIT_DICT)
		return tfk_errf(err, TFK_EINVAL, "example %d is not a dict",
				idx);
	for (i = 0; i < d->n; i++) {
		const struct tfk_lit *l = &d->items[i];
		const char *name = d->keys[i];

		if (l->kind != TFK_LIT_LIST || l->n == 0)
			return tfk_errf(err, TFK_EINVAL, "example %d: feature "
					"'%s': value must be a non-empty list",
					idx, name);
		switch (l->items[0].kind) {
		case TFK_LIT_FLOAT: {
			float *v = tfk_calloc(l->n, sizeof(float));

			if (!v)
				return tfk_errf(err, TFK_ENOMEM,
						"out of memory");
			for (j = 0; j < l->n; j++) {
				if (l->items[j].kind != TFK_LIT_FLOAT &&
				    l->items[j].kind != TFK_LIT_INT) {
					tfk_free(v);
					goto mixed;
				}
				v[j] = l->items[j].kind == TFK_LIT_FLOAT ?
					(float)l->items[j].f :
					(float)l->items[j].i;
			}
			tfk_exb_add_floats(b, name, v, l->n);
			tfk_free(v);
			break;
		}
		case TFK_LIT_INT:
		case TFK_LIT_BOOL: {
			int64_t *v = tfk_calloc(l->n, sizeof(int64_t));

			if (!v)
				return tfk_errf(err, TFK_ENOMEM,
						"out of memory");
			for (j = 0; j < l->n; j++) {
				if (l->items[j].kind != TFK_LIT_INT &&
				    l->items[j].kind != TFK_LIT_BOOL) {
					tfk_free(v);
					goto mixed;
				}
				v[j] = l->items[j].i;
			}
			tfk_exb_add_int64s(b, name, v, l->n);
			tfk_free(v);
			break;
		}
		case TFK_LIT_STR: {
			const uint8_t **v = tfk_calloc(l->n, sizeof(*v));
			size_t *lens = tfk_calloc(l->n, sizeof(*lens));

			if (!v || !lens) {
				tfk_free(v);
				tfk_free(lens);
				return tfk_errf(err, TFK_ENOMEM,
						"out of memory");
			}
			for (j = 0; j < l->n; j++) {
				if (l->items[j].kind != TFK_LIT_STR) {
					tfk_free(v);
					tfk_free(lens);
					goto mixed;
				}
				v[j] = (const uint8_t *)l->items[j].s;
				lens[j] = l->items[j].len;
			}
			tfk_exb_add_bytes(b, name, v, lens, l->n);
			tfk_free(v);
			tfk_free(lens);
			break;
		}
		default:
			return tfk_errf(err, TFK_EINVAL, "example %d: feature "
					"'%s': values must be floats, ints or "
					"strings", idx, name);
		}
		continue;
mixed:
		return tfk_errf(err, TFK_EINVAL, "example %d: feature '%s': "
				"mixed value types", idx, name);
	}
	return 0;
}

static int item_example(const char *k, size_t kl, const char *v, size_t vl,
			void *ctx, struct tfk_err *err)
{
	char *s = dupn(v, vl);
	struct tfk_example_builder b;
	struct tfk_lit lit;
	struct tfk_tensor t;
	int64_t n;
	int rc, i;

	if (!s)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	rc = tfk_lit_parse(s, &lit, err);
	tfk_free(s);
	if (rc)
		return tfk_err_prefix(err, "--input_examples: %.*s", (int)kl,
				      k);
	if (lit.kind != TFK_LIT_LIST) {
		tfk_lit_release(&lit);
		return tfk_errf(err, TFK_EINVAL, "--input_examples: %.*s: "
				"must be a list of dicts", (int)kl, k);
	}
	n = lit.n;
	rc = tfk_tensor_init(&t, TFK_DT_STRING, 1, &n, err);
	tfk_exb_init(&b);
	for (i = 0; !rc && i < lit.n; i++) {
		const uint8_t *p;
		size_t len;

		rc = build_example(&lit.items[i], &b, i, err);
		if (!rc)
			rc = tfk_exb_finish(&b, &p, &len, err);
		if (!rc)
			rc = tfk_tensor_set_str(&t, i, p, len, err);
	}
	tfk_exb_release(&b);
	tfk_lit_release(&lit);
	if (rc) {
		tfk_tensor_release(&t);
		return tfk_err_prefix(err, "--input_examples: %.*s", (int)kl,
				      k);
	}
	return feeds_set(ctx, k, kl, &t, "--input_examples", err);
}

struct rec_ctx {
	struct feeds *f;
	const char *only_string_key;	/* for FILE without KEY */
};

static int item_records(const char *k, size_t kl, const char *v, size_t vl,
			void *ctx, struct tfk_err *err)
{
	struct rec_ctx *rc_ = ctx;
	char *path = dupn(v, vl);
	struct tfk_rec_reader *r = NULL;
	struct tfk_buf data;
	struct tfk_tensor t;
	struct tfk_rec rec;
	size_t *lens = NULL, nrec = 0, cap = 0, off = 0, i;
	int64_t n;
	int rc;

	if (!path)
		return tfk_errf(err, TFK_ENOMEM, "out of memory");
	if (!k) {
		if (!rc_->only_string_key) {
			tfk_free(path);
			return tfk_errf(err, TFK_EINVAL, "--input_records: "
					"%s: give KEY=FILE (the signature does "
					"not have exactly one string input)",
					v);
		}
		k = rc_->only_string_key;
		kl = strlen(k);
	}
	memset(&t, 0, sizeof(t));
	tfk_buf_init(&data);
	rc = tfk_rec_open(&r, path, TFK_COMP_AUTO, 0, err);
	while (!rc) {
		int got = tfk_rec_next(r, &rec, err);

		if (got < 0) {
			rc = got;
			break;
		}
		if (!got)
			break;
		if (nrec == cap) {
			size_t nc = cap ? cap * 2 : 64;
			size_t *nl = tfk_realloc(lens, nc * sizeof(*nl));

			if (!nl) {
				rc = tfk_errf(err, TFK_ENOMEM,
					      "out of memory");
				break;
			}
			lens = nl;
			cap = nc;
		}
		lens[nrec++] = rec.len;
		tfk_buf_add(&data, rec.data, rec.len);
	}
	tfk_rec_close(r);
	if (!rc && !tfk_buf_ok(&data))
		rc = tfk_errf(err, TFK_ENOMEM, "out of memory");
	n = (int64_t)nrec;
	if (!rc)
		rc = tfk_tensor_init(&t, TFK_DT_STRING, 1, &n, err);
	for (i = 0; !rc && i < nrec; i++) {
		rc = tfk_tensor_set_str(&t, (int64_t)i, data.data + off,
					lens[i], err);
		off += lens[i];
	}
	if (rc)
		tfk_err_prefix(err, "--input_records");
	tfk_buf_release(&data);
	tfk_free(lens);
	tfk_free(path);
	if (rc) {
		tfk_tensor_release(&t);
		return rc;
	}
	return feeds_set(rc_->f, k, kl, &t, "--input_records", err);
}

/* Dtype conversion ------------------------------------------------------- */

static int is_float(enum tfk_dtype t)
{
	return t == TFK_DT_FLOAT || t == TFK_DT_DOUBLE || t == TFK_DT_HALF;
}

static int is_int(enum tfk_dtype t)
{
	return t == TFK_DT_INT8 || t == TFK_DT_INT16 || t == TFK_DT_INT32 ||
		t == TFK_DT_INT64 || t == TFK_DT_UINT8;
}

static double get_d(const struct tfk_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case TFK_DT_FLOAT: return ((const float *)t->data)[i];
	case TFK_DT_DOUBLE: return ((const double *)t->data)[i];
	default: return 0;
	}
}

static int64_t get_i(const struct tfk_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case TFK_DT_INT8: return ((const int8_t *)t->data)[i];
	case TFK_DT_UINT8: return ((const uint8_t *)t->data)[i];
	case TFK_DT_INT16: return ((const int16_t *)t->data)[i];
	case TFK_DT_INT32: return ((const int32_t *)t->data)[i];
	case TFK_DT_INT64: return ((const int64_t *)t->data)[i];
	case TFK_DT_BOOL: return ((const uint8_t *)t->data)[i];
	default: return 0;
	}
}

/* Convert *t in place to dtype want (numeric only). */
static int convert(struct tfk_tensor *t, enum tfk_dtype want,
		   const char *key, struct tfk_err *err)
{
	struct tfk_tensor o;
	int64_t n, i;
	int rc;

	if (t->dtype == want)
		return 0;
	if (!((is_float(want) && (is_float(t->dtype) || is_int(t->dtype)) &&
	       t->dtype != TFK_DT_HALF && want != TFK_DT_HALF) ||
	      (is_int(want) && is_int(t->dtype))))
		return tfk_errf(err, TFK_EINVAL, "input '%s': expected %s, "
				"got %s values", key, tfk_dtype_name(want),
				tfk_dtype_name(t->dtype));
	rc = tfk_tensor_init(&o, want, t->rank, t->shape, err);
	if (rc)
		return rc;
	n = tfk_tensor_numel(t);
	for (i = 0; i < n; i++) {
		if (is_float(want)) {
			double v = is_float(t->dtype) ? get_d(t, i) :
				(double)get_i(t, i);

			if (want == TFK_DT_FLOAT)
				((float *)o.data)[i] = (float)v;
			else
				((double *)o.data)[i] = v;
		} else {
			int64_t v = get_i(t, i), lo, hi;

			switch (want) {
			case TFK_DT_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
			case TFK_DT_UINT8: lo = 0; hi = UINT8_MAX; break;
			case TFK_DT_INT16: lo = INT16_MIN; hi = INT16_MAX;
				break;
			case TFK_DT_INT32: lo = INT32_MIN; hi = INT32_MAX;
				break;
			default: lo = INT64_MIN; hi = INT64_MAX;
			}
			if (v < lo || v > hi) {
				tfk_tensor_release(&o);
				return tfk_errf(err, TFK_EINVAL, "input '%s': "
						"value %" PRId64 " out of "
						"range for %s", key, v,
						tfk_dtype_name(want));
			}
			switch (want) {
			case TFK_DT_INT8: ((int8_t *)o.data)[i] = (int8_t)v;
				break;
			case TFK_DT_UINT8: ((uint8_t *)o.data)[i] = (uint8_t)v;
				break;
			case TFK_DT_INT16: ((int16_t *)o.data)[i] = (int16_t)v;
				break;
			case TFK_DT_INT32: ((int32_t *)o.data)[i] = (int32_t)v;
				break;
			default: ((int64_t *)o.data)[i] = v;
			}
		}
	}
	tfk_tensor_release(t);
	*t = o;
	return 0;
}

/* Output ----------------------------------------------------------------- */

static int fail(struct tfk_err *err)
{
	return tfk_cli_fail(err);
}

int tfk_model_run_main(int argc, char **argv)
{
	struct tfk_savedmodel *sm = NULL;
	const struct tfk_meta_graph *mg;
	const struct tfk_signature *sig;
	struct tfk_import *imp = NULL;
	struct tfk_exec *x = NULL;
	struct tfk_feeds_buf { const char **names; struct tfk_tensor *vals; }
		fb = { NULL, NULL };
	const struct tfk_tensor **fetched = NULL;
	const char **fetch_names = NULL;
	struct feeds f = { NULL, 0, 0 };
	struct rec_ctx rcx;
	struct tfk_buf out;
	struct tfk_exec_opts eo = { NULL, 0, 1 };
	struct tfk_err err;
	int rc = 0, n, i, j, k, n_fed = 0;

	tfk_err_clear(&err);
	tfk_buf_init(&out);
	n = tfk_cli_parse(argc, argv, &run_cmd, run_opts);
	if (n > 0)
		tfk_cli_usage_error("unexpected argument '%s'", argv[0]);
	if (!dir)
		tfk_cli_usage_error("run needs --dir DIR");
	if (!inputs_arg && !exprs_arg && !examples_arg && !records_arg)
		tfk_cli_usage_error("at least one of --inputs, --input_exprs, "
				    "--input_examples or --input_records is "
				    "needed");
	if (overwrite && !outdir)
		tfk_cli_usage_error("--overwrite needs --outdir");
	if (threads < 0 || threads > 1024)
		tfk_cli_usage_error("--threads: expected 0 to 1024");
	if (!threads) {
		threads = sysconf(_SC_NPROCESSORS_ONLN);
		if (threads < 1)
			threads = 1;
	}
	/* OpenBLAS splits a product differently with more threads, and the
	 * sums round differently (seen: 2e-8 on the CNN's Dense); our own
	 * kernels give the same bits at any -j, so they alone thread */
	tfk_cpu_blas_threads(1);
	eo.threads = (int)threads;
	if (tfk_savedmodel_open(&sm, dir, &err))
		return fail(&err);
	k = tfk_savedmodel_find_tags(sm, tag_set, &err);
	if (k < 0) {
		tfk_err_prefix(&err, "%s", dir);
		rc = fail(&err);
		goto out;
	}
	mg = &sm->meta_graphs[k];
	sig = tfk_savedmodel_signature(mg, signature_def, &err);
	if (!sig) {
		tfk_err_prefix(&err, "%s: tag-set %s", dir, tag_set);
		rc = fail(&err);
		goto out;
	}
	rcx.f = &f;
	rcx.only_string_key = NULL;
	for (i = 0, j = 0; i < sig->n_inputs; i++)
		if (sig->inputs[i].dtype == TFK_DT_STRING) {
			rcx.only_string_key = sig->inputs[i].key;
			j++;
		}
	if (j != 1)
		rcx.only_string_key = NULL;
	if ((inputs_arg && for_items(inputs_arg, "--inputs", item_input, &f,
				     0, &err)) ||
	    (exprs_arg && for_items(exprs_arg, "--input_exprs", item_expr, &f,
				    0, &err)) ||
	    (examples_arg && for_items(examples_arg, "--input_examples",
				       item_example, &f, 0, &err)) ||
	    (records_arg && for_items(records_arg, "--input_records",
				      item_records, &rcx, 1, &err))) {
		rc = fail(&err);
		goto out;
	}
	/* every key must be a signature input */
	for (i = 0; i < f.n; i++) {
		for (j = 0; j < sig->n_inputs; j++)
			if (!strcmp(sig->inputs[j].key, f.v[i].key))
				break;
		if (j == sig->n_inputs) {
			struct tfk_buf l;

			tfk_buf_init(&l);
			for (j = 0; j < sig->n_inputs; j++)
				tfk_buf_addf(&l, "%s\"%s\"", j ? ", " : "",
					     sig->inputs[j].key);
			tfk_buf_addc(&l, 0);
			tfk_errf(&err, TFK_EINVAL, "\"%s\" is not a valid input "
				 "key of signature %s; valid keys: %s",
				 f.v[i].key, sig->key, l.data ?
				 (char *)l.data : "");
			tfk_buf_release(&l);
			rc = fail(&err);
			goto out;
		}
	}
	fb.names = tfk_calloc(f.n + 1, sizeof(*fb.names));
	if (!fb.names) {
		tfk_errf(&err, TFK_ENOMEM, "out of memory");
		rc = fail(&err);
		goto out;
	}
	for (i = 0; i < f.n; i++)
		fb.names[i] = f.v[i].key;
	rc = tfk_import_signature_fed(&imp, mg, sig, fb.names, f.n,
				      sm->variables_prefix, &err);
	tfk_free(fb.names);
	fb.names = NULL;
	if (rc) {
		tfk_err_prefix(&err, "%s: signature %s", dir, sig->key);
		rc = fail(&err);
		goto out;
	}
	fb.names = tfk_calloc(imp->n_feeds + 1, sizeof(*fb.names));
	fb.vals = tfk_calloc(imp->n_feeds + 1, sizeof(*fb.vals));
	fetch_names = tfk_calloc(imp->n_fetches + 1, sizeof(*fetch_names));
	fetched = tfk_calloc(imp->n_fetches + 1, sizeof(*fetched));
	if (!fb.names || !fb.vals || !fetch_names || !fetched) {
		tfk_errf(&err, TFK_ENOMEM, "out of memory");
		rc = fail(&err);
		goto out;
	}
	/* feeds in signature order, converted and shape-checked */
	for (j = 0; j < imp->n_feeds; j++) {
		const struct tfk_import_feed *fd = &imp->feeds[j];
		struct tfk_tensor *t = NULL;
		char a[128], b[128];
		int ok, d;

		for (i = 0; i < f.n; i++)
			if (!strcmp(f.v[i].key, fd->key))
				t = &f.v[i].t;
		if (!t || !fd->node)
			continue;
		if (fd->dtype == TFK_DT_STRING ? t->dtype != TFK_DT_STRING :
		    t->dtype == TFK_DT_STRING) {
			tfk_errf(&err, TFK_EINVAL, "input '%s': expected %s, "
				 "got %s values", fd->key,
				 tfk_dtype_name(fd->dtype),
				 tfk_dtype_name(t->dtype));
			rc = fail(&err);
			goto out;
		}
		if (fd->dtype == TFK_DT_BOOL ? t->dtype != TFK_DT_BOOL :
		    (t->dtype == TFK_DT_BOOL && fd->dtype != TFK_DT_BOOL)) {
			tfk_errf(&err, TFK_EINVAL, "input '%s': expected %s, "
				 "got %s values", fd->key,
				 tfk_dtype_name(fd->dtype),
				 tfk_dtype_name(t->dtype));
			rc = fail(&err);
			goto out;
		}
		if (fd->dtype != TFK_DT_STRING &&
		    convert(t, fd->dtype, fd->key, &err)) {
			rc = fail(&err);
			goto out;
		}
		ok = fd->rank < 0 || fd->rank == t->rank;
		for (d = 0; ok && fd->rank >= 0 && d < t->rank; d++)
			ok = fd->shape[d] < 0 || fd->shape[d] == t->shape[d];
		if (!ok) {
			tfk_errf(&err, TFK_EINVAL, "input '%s': expected %s "
				 "%s, got shape %s", fd->key,
				 tfk_dtype_name(fd->dtype),
				 tfk_shape_str(fd->rank, fd->shape, a,
					       sizeof(a)),
				 tfk_shape_str(t->rank, t->shape, b,
					       sizeof(b)));
			rc = fail(&err);
			goto out;
		}
		fb.names[n_fed] = fd->node;
		fb.vals[n_fed] = *t;
		n_fed++;
	}
	for (j = 0; j < imp->n_fetches; j++)
		fetch_names[j] = imp->fetches[j].key;
	if (tfk_exec_new(&x, imp->g, fb.names, n_fed, fetch_names,
			 imp->n_fetches, &eo, &err) ||
	    tfk_exec_run(x, fb.vals, 0, fetched, &err)) {
		tfk_err_prefix(&err, "%s: signature %s", dir, sig->key);
		rc = fail(&err);
		goto out;
	}
	if (outdir && tfk_mkdirs(outdir, &err)) {
		rc = fail(&err);
		goto out;
	}
	for (j = 0; j < imp->n_fetches; j++) {
		const char *key = imp->fetches[j].key;

		tfk_buf_reset(&out);
		if (tfk_npy_str(fetched[j], &out, &err)) {
			rc = fail(&err);
			goto out;
		}
		printf("Result for output key %s:\n%.*s\n", key,
		       (int)out.len, out.data ? (char *)out.data : "");
		if (outdir) {
			char *path = tfk_malloc(strlen(outdir) + strlen(key) +
						8);
			struct stat st;

			if (!path) {
				tfk_errf(&err, TFK_ENOMEM, "out of memory");
				rc = fail(&err);
				goto out;
			}
			sprintf(path, "%s/%s.npy", outdir, key);
			if (!overwrite && !stat(path, &st)) {
				tfk_errf(&err, TFK_EIO, "output file %s already "
					 "exists; add --overwrite to overwrite "
					 "the existing output files", path);
				tfk_free(path);
				rc = fail(&err);
				goto out;
			}
			if (tfk_npy_write(path, fetched[j], &err)) {
				tfk_free(path);
				rc = fail(&err);
				goto out;
			}
			printf("Output %s is saved to %s\n", key, path);
			tfk_free(path);
		}
	}
out:
	if (fflush(stdout) && !rc) {
		tfk_cli_warn("stdout: write error");
		rc = 1;
	}
	tfk_exec_free(x);
	tfk_import_free(imp);
	tfk_free(fb.names);
	tfk_free(fb.vals);
	tfk_free(fetch_names);
	tfk_free(fetched);
	feeds_release(&f);
	tfk_buf_release(&out);
	tfk_savedmodel_close(sm);
	return rc;
}
