/*
 * tfk-model: inspect (show) and run (run) a TensorFlow SavedModel, as
 * saved_model_cli does, without TensorFlow.
 *
 * `show` prints, byte for byte, the text of TensorFlow's
 * tensorflow/python/tools/saved_model_cli.py: the tag-sets; the
 * SignatureDef keys of a tag-set; a signature's inputs and outputs
 * (dtype, shape as a tuple, tensor name) and method name; and with
 * --all every signature of every MetaGraphDef, and for TF2 models the
 * "Concrete Functions" section. Differences, all where saved_model_cli's
 * output is not a function of the file:
 *  - the op sets that --all and --list_ops print are Python sets, whose
 *    order changes from run to run (string hashing is randomized); here
 *    they are sorted; so are dicts in function signatures (protobuf's
 *    map order is unspecified);
 *  - saved_model_cli makes the Concrete Functions section by loading
 *    the model with TensorFlow; here it is read from the SavedObjectGraph
 *    that loading rebuilds the functions from (their canonicalized input
 *    signatures), and values TensorFlow decodes into classes other than
 *    TensorSpec (TypeSpecs) are shown by class name only;
 *  - a dtype number the DataType enum lacks makes saved_model_cli fail
 *    with a KeyError; here the number is printed.
 * Additions: --json (the same facts as one JSON object) and --ops (each
 * op type the graph uses, and "yes"/"no": whether `run` can execute it
 * on the CPU, as the SavedModel importer answers).
 *
 * `run` (cmd/model/run.c) and `bench` (load time and run latency in a
 * loop, cmd/model/bench.c) are mains of their own over the model API
 * (model/servable.h); this file holds `show` and dispatches. The
 * subcommands have separate option tables, so each one's --help lists
 * its own options; the top-level --help lists the commands
 * (scripts/check-man reads them all).
 */
#include "model/import.h"
#include "format/savedmodel.h"
#include "model/sub.h"
#include "util/alloc.h"
#include "util/cli.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct tfk_cmd top_cmd = {
	"tfk-model",
	"COMMAND [options]",
	"inspect and run TensorFlow SavedModels, as saved_model_cli does",
	"tfk-model show --dir model --all",
};

/* show ----------------------------------------------------------------- */

static const char *dir;
static const char *tag_set;
static const char *signature_def;
static int all, json, ops, list_ops;

static const struct tfk_opt show_opts[] = {
	TFK_OPT_STR(0, "dir", &dir, "DIR", "the SavedModel directory "
		    "(holding saved_model.pb)"),
	TFK_OPT_FLAG(0, "all", &all, "every tag-set, signature and op"),
	TFK_OPT_STR(0, "tag_set", &tag_set, "TAGS", "the MetaGraphDef whose "
		    "tags are TAGS (comma-separated, e.g. serve or "
		    "train,serve)"),
	TFK_OPT_STR(0, "signature_def", &signature_def, "KEY",
		    "show this signature's inputs and outputs (needs "
		    "--tag_set)"),
	TFK_OPT_FLAG(0, "list_ops", &list_ops, "print the op set of "
		     "--tag_set's graph, as saved_model_cli --list_ops"),
	TFK_OPT_FLAG(0, "ops", &ops, "list the op types of the graph and its "
		     "functions, each with yes/no: runnable by tfkit on the "
		     "CPU"),
	TFK_OPT_FLAG(0, "json", &json, "print one JSON object instead of "
		     "text"),
	TFK_OPT_END
};

static const struct tfk_cmd show_cmd = {
	"tfk-model",
	"show --dir DIR [--all] [--tag_set TAGS [--signature_def KEY]] "
	"[--list_ops] [--ops] [--json]",
	"print the tag-sets, signatures and ops of a SavedModel, as "
	"saved_model_cli show",
	"tfk-model show --dir model --tag_set serve --signature_def "
	"serving_default",
};

/* Python's repr() of a str: quotes chosen as Python chooses them,
 * backslash escapes for the quote, backslash and control bytes; other
 * bytes (UTF-8 included) as they are. */
static void py_repr(FILE *f, const char *s)
{
	int q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
	const unsigned char *p;

	fputc(q, f);
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p == q || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\r')
			fputs("\\r", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc(q, f);
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Python's comparison of two lists of str. */
static int cmp_tag_lists(const struct tfk_meta_graph *a,
			 const struct tfk_meta_graph *b)
{
	int i, c;

	for (i = 0; i < a->n_tags && i < b->n_tags; i++)
		if ((c = strcmp(a->tags[i], b->tags[i])))
			return c;
	return (a->n_tags > b->n_tags) - (a->n_tags < b->n_tags);
}

static int cmp_mg_ptr(const void *a, const void *b)
{
	return cmp_tag_lists(*(const struct tfk_meta_graph *const *)a,
			     *(const struct tfk_meta_graph *const *)b);
}

/* The meta graphs sorted by their tag lists (Python's sorted() is
 * stable: equal lists keep file order, and qsort is not, so ties are
 * broken by address, which is file order). */
static int cmp_mg_stable(const void *a, const void *b)
{
	const struct tfk_meta_graph *x = *(const struct tfk_meta_graph *const *)a;
	const struct tfk_meta_graph *y = *(const struct tfk_meta_graph *const *)b;
	int c = cmp_mg_ptr(a, b);

	return c ? c : (x > y) - (x < y);
}

static const struct tfk_meta_graph **sorted_meta_graphs(
	const struct tfk_savedmodel *sm)
{
	const struct tfk_meta_graph **v;
	int i;

	v = tfk_calloc(sm->n_meta_graphs + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < sm->n_meta_graphs; i++)
		v[i] = &sm->meta_graphs[i];
	qsort(v, sm->n_meta_graphs, sizeof(*v), cmp_mg_stable);
	return v;
}

static int oom(void)
{
	tfk_cli_warn("out of memory");
	return 1;
}

static int show_tag_sets(const struct tfk_savedmodel *sm)
{
	const struct tfk_meta_graph **v = sorted_meta_graphs(sm);
	const char **tags;
	int i, j;

	if (!v)
		return oom();
	printf("The given SavedModel contains the following tag-sets:\n");
	for (i = 0; i < sm->n_meta_graphs; i++) {
		char *joined;
		size_t len = 1;

		tags = tfk_calloc(v[i]->n_tags + 1, sizeof(*tags));
		for (j = 0; j < v[i]->n_tags; j++)
			len += strlen(v[i]->tags[j]) + 2;
		joined = tfk_malloc(len);
		if (!tags || !joined) {
			tfk_free(tags);
			tfk_free(joined);
			tfk_free(v);
			return oom();
		}
		memcpy(tags, v[i]->tags, v[i]->n_tags * sizeof(*tags));
		qsort(tags, v[i]->n_tags, sizeof(*tags), cmp_cstr);
		joined[0] = '\0';
		for (j = 0; j < v[i]->n_tags; j++) {
			if (j)
				strcat(joined, ", ");
			strcat(joined, tags[j]);
		}
		py_repr(stdout, joined);
		putchar('\n');
		tfk_free(joined);
		tfk_free(tags);
	}
	tfk_free(v);
	return 0;
}

static const char *dtype_text(int t, char *buf, size_t n)
{
	const char *s = tfk_savedmodel_dtype_name(t);

	if (s)
		return s;
	snprintf(buf, n, "%d", t);
	return buf;
}

static void print_tensor_info(const struct tfk_tensor_info *ti, int indent)
{
	char buf[32];
	int i;

	printf("%*s    dtype: %s\n", 2 * indent, "",
	       dtype_text(ti->dtype, buf, sizeof(buf)));
	printf("%*s    shape: ", 2 * indent, "");
	if (ti->unknown_rank) {
		printf("unknown_rank\n");
	} else {
		putchar('(');
		for (i = 0; i < ti->rank; i++)
			printf("%s%lld", i ? ", " : "",
			       (long long)ti->dims[i]);
		printf(")\n");
	}
	printf("%*s    name: %s\n", 2 * indent, "", ti->name);
}

static void show_inputs_outputs(const struct tfk_signature *s, int indent)
{
	int i;

	printf("%*sThe given SavedModel SignatureDef contains the following "
	       "input(s):\n", 2 * indent, "");
	for (i = 0; i < s->n_inputs; i++) {
		printf("%*s  inputs['%s'] tensor_info:\n", 2 * indent, "",
		       s->inputs[i].key);
		print_tensor_info(&s->inputs[i], indent + 1);
	}
	printf("%*sThe given SavedModel SignatureDef contains the following "
	       "output(s):\n", 2 * indent, "");
	for (i = 0; i < s->n_outputs; i++) {
		printf("%*s  outputs['%s'] tensor_info:\n", 2 * indent, "",
		       s->outputs[i].key);
		print_tensor_info(&s->outputs[i], indent + 1);
	}
	printf("%*sMethod name is: %s\n", 2 * indent, "", s->method_name);
}

/* "The MetaGraph with tag set ['serve'] contains the following ops:
 * {'Add', 'Const'}" -- Python's print of a list and a set. */
static int show_op_set(const struct tfk_meta_graph *mg)
{
	struct tfk_err err;
	const char **names;
	int i, n = tfk_savedmodel_ops(mg, &names, &err);

	if (n < 0)
		return tfk_cli_fail(&err);
	printf("The MetaGraph with tag set [");
	for (i = 0; i < mg->n_tags; i++) {
		if (i)
			printf(", ");
		py_repr(stdout, mg->tags[i]);
	}
	printf("] contains the following ops: ");
	if (!n)
		printf("set()");
	else
		putchar('{');
	for (i = 0; i < n; i++) {
		if (i)
			printf(", ");
		py_repr(stdout, names[i]);
	}
	printf(n ? "}\n" : "\n");
	tfk_free(names);
	return 0;
}

/* Can tfkit run op `name` on the CPU inside a SavedModel: what the
 * importer (model/import.h) lowers itself (calls, variables,
 * ParseExample, pass-throughs) or finds in the registry with a cpu
 * kernel. */
static int op_runnable(const char *name)
{
	return tfk_import_op_supported(name);
}

static int show_ops_table(const struct tfk_meta_graph *mg)
{
	struct tfk_err err;
	const char **names;
	int i, w = 0, n = tfk_savedmodel_ops(mg, &names, &err);

	if (n < 0)
		return tfk_cli_fail(&err);
	for (i = 0; i < n; i++)
		if ((int)strlen(names[i]) > w)
			w = (int)strlen(names[i]);
	for (i = 0; i < n; i++)
		printf("%-*s  %s\n", w, names[i],
		       op_runnable(names[i]) ? "yes" : "no");
	tfk_free(names);
	return 0;
}

/* Concrete Functions ----------------------------------------------------
 *
 * saved_model_cli loads a TF2 model with TensorFlow and lists the root
 * object's children that are tf.functions or concrete functions, sorted
 * by name, each with the input signatures of its concrete functions
 * (sorted by function name). Those signatures are stored in the
 * SavedObjectGraph (SavedConcreteFunction.canonicalized_input_signature,
 * a StructuredValue (args tuple, kwargs dict)), so the section is made
 * from there, printing the Python values the way its _print_args does
 * (str(), repr() of TensorSpec, the "\b\b" that closes a list). The
 * values TensorFlow decodes into classes of its own beyond TensorSpec
 * (TypeSpecs, BoundedTensorSpecs) are named by class, their values not
 * shown. */

/* Python's TF dtype names: repr(tf.float32) is "tf.float32". */
static const char *py_dtype(int t)
{
	static const char *const names[] = {
		NULL, "float32", "float64", "int32", "uint8", "int16", "int8",
		"string", "complex64", "int64", "bool", "qint8", "quint8",
		"qint32", "bfloat16", "qint16", "quint16", "uint16",
		"complex128", "float16", "resource", "variant", "uint32",
		"uint64",
	};
	int n = (int)(sizeof(names) / sizeof(names[0]));

	if (t > 100 && t - 100 < n)
		t -= 100;
	return t > 0 && t < n ? names[t] : NULL;
}

static void put_dtype_repr(int t)
{
	const char *s = py_dtype(t);

	if (s)
		printf("tf.%s%s", s, t > 100 ? "_ref" : "");
	else
		printf("tf.dtypes.as_dtype(%d)", t);
}

/* str(TensorShape): "<unknown>", "(1,)", "(None, 3)", "()". */
static void put_shape(const Tensorflow__TensorShapeProto *s)
{
	size_t i;

	if (s && s->unknown_rank) {
		printf("<unknown>");
		return;
	}
	putchar('(');
	for (i = 0; s && i < s->n_dim; i++) {
		int64_t d = s->dim[i] ? s->dim[i]->size : 0;

		if (i)
			printf(", ");
		if (d < 0)
			printf("None");
		else
			printf("%lld", (long long)d);
	}
	printf(s && s->n_dim == 1 ? ",)" : ")");
}

static void put_tensor_spec(const Tensorflow__TensorSpecProto *t)
{
	printf("TensorSpec(shape=");
	put_shape(t->shape);
	printf(", dtype=");
	put_dtype_repr(t->dtype);
	printf(", name=");
	if (t->name[0])
		py_repr(stdout, t->name);
	else
		printf("None");
	putchar(')');
}

/* Python's repr(float) (str() is the same): the shortest digits that
 * read back, positional for exponents -4..15, else d.ddde+XX. */
static void put_float(double v)
{
	char b[64];
	int p, e;

	if (v != v) {
		printf("nan");
		return;
	}
	if (v == 1.0 / 0.0 || v == -1.0 / 0.0) {
		printf(v > 0 ? "inf" : "-inf");
		return;
	}
	for (p = 1; p < 17; p++) {
		snprintf(b, sizeof(b), "%.*e", p - 1, v);
		if (strtod(b, NULL) == v)
			break;
	}
	snprintf(b, sizeof(b), "%.*e", p - 1, v);
	e = atoi(strchr(b, 'e') + 1);
	if (e < -4 || e >= 16) {
		char *m = strchr(b, 'e');

		/* C writes e-05 and e+16 as Python does; keep the mantissa,
		 * without a "." when it has one digit. */
		*m = '\0';
		printf("%se%c%02d", b, e < 0 ? '-' : '+', e < 0 ? -e : e);
		return;
	}
	snprintf(b, sizeof(b), "%.*f", p - 1 - e > 0 ? p - 1 - e : 0, v);
	printf("%s%s", b, strchr(b, '.') ? "" : ".0");
}

static const char *sv_type_name(const Tensorflow__StructuredValue *v)
{
	switch (v->kind_case) {
	case TENSORFLOW__STRUCTURED_VALUE__KIND_NONE_VALUE: return "NoneType";
	case TENSORFLOW__STRUCTURED_VALUE__KIND_FLOAT64_VALUE: return "float";
	case TENSORFLOW__STRUCTURED_VALUE__KIND_INT64_VALUE: return "int";
	case TENSORFLOW__STRUCTURED_VALUE__KIND_STRING_VALUE: return "str";
	case TENSORFLOW__STRUCTURED_VALUE__KIND_BOOL_VALUE: return "bool";
	case TENSORFLOW__STRUCTURED_VALUE__KIND_TENSOR_SHAPE_VALUE:
		return "TensorShape";
	case TENSORFLOW__STRUCTURED_VALUE__KIND_TENSOR_DTYPE_VALUE:
		return "DType";
	case TENSORFLOW__STRUCTURED_VALUE__KIND_TENSOR_SPEC_VALUE:
		return "TensorSpec";
	case TENSORFLOW__STRUCTURED_VALUE__KIND_BOUNDED_TENSOR_SPEC_VALUE:
		return "BoundedTensorSpec";
	case TENSORFLOW__STRUCTURED_VALUE__KIND_TYPE_SPEC_VALUE:
		return v->type_spec_value &&
			v->type_spec_value->type_spec_class_name[0] ?
			v->type_spec_value->type_spec_class_name : "TypeSpec";
	case TENSORFLOW__STRUCTURED_VALUE__KIND_LIST_VALUE: return "list";
	case TENSORFLOW__STRUCTURED_VALUE__KIND_TUPLE_VALUE: return "tuple";
	case TENSORFLOW__STRUCTURED_VALUE__KIND_DICT_VALUE: return "dict";
	case TENSORFLOW__STRUCTURED_VALUE__KIND_NAMED_TUPLE_VALUE:
		return v->named_tuple_value ? v->named_tuple_value->name
					    : "tuple";
	default:
		return "NoneType";
	}
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp((*(Tensorflow__DictValue__FieldsEntry *const *)a)->key,
		      (*(Tensorflow__DictValue__FieldsEntry *const *)b)->key);
}

/* A dict's entries sorted by key (protobuf's map order is unspecified,
 * so Python's iteration order is too), or NULL when out of memory or
 * empty. Free with tfk_free. */
static Tensorflow__DictValue__FieldsEntry **sorted_fields(
	const Tensorflow__DictValue *d, size_t *n)
{
	Tensorflow__DictValue__FieldsEntry **v;

	*n = 0;
	if (!d || !d->n_fields)
		return NULL;
	v = tfk_calloc(d->n_fields, sizeof(*v));
	if (!v)
		return NULL;
	memcpy(v, d->fields, d->n_fields * sizeof(*v));
	qsort(v, d->n_fields, sizeof(*v), cmp_entry);
	*n = d->n_fields;
	return v;
}

/* str(value) of a decoded StructuredValue. */
static void put_str(const Tensorflow__StructuredValue *v, int depth);

/* The elements of a list, tuple or named tuple (NULL for others). */
static Tensorflow__StructuredValue **sv_items(
	const Tensorflow__StructuredValue *v, size_t *n)
{
	*n = 0;
	if (v->kind_case == TENSORFLOW__STRUCTURED_VALUE__KIND_LIST_VALUE &&
	    v->list_value) {
		*n = v->list_value->n_values;
		return v->list_value->values;
	}
	if (v->kind_case == TENSORFLOW__STRUCTURED_VALUE__KIND_TUPLE_VALUE &&
	    v->tuple_value) {
		*n = v->tuple_value->n_values;
		return v->tuple_value->values;
	}
	return NULL;
}

static void put_seq(const Tensorflow__StructuredValue *v, int depth)
{
	int list = v->kind_case == TENSORFLOW__STRUCTURED_VALUE__KIND_LIST_VALUE;
	size_t i, n;
	Tensorflow__StructuredValue **it = sv_items(v, &n);

	putchar(list ? '[' : '(');
	for (i = 0; i < n; i++) {
		if (i)
			printf(", ");
		if (it[i] && it[i]->kind_case ==
		    TENSORFLOW__STRUCTURED_VALUE__KIND_STRING_VALUE)
			py_repr(stdout, it[i]->string_value);
		else if (it[i])
			put_str(it[i], depth + 1);
	}
	printf(list ? "]" : n == 1 ? ",)" : ")");
}

static void put_str(const Tensorflow__StructuredValue *v, int depth)
{
	size_t i;

	if (depth > 50) {
		printf("...");
		return;
	}
	switch (v->kind_case) {
	case TENSORFLOW__STRUCTURED_VALUE__KIND_FLOAT64_VALUE:
		put_float(v->float64_value);
		break;
	case TENSORFLOW__STRUCTURED_VALUE__KIND_INT64_VALUE:
		printf("%lld", (long long)v->int64_value);
		break;
	case TENSORFLOW__STRUCTURED_VALUE__KIND_STRING_VALUE:
		printf("%s", v->string_value);
		break;
	case TENSORFLOW__STRUCTURED_VALUE__KIND_BOOL_VALUE:
		printf(v->bool_value ? "True" : "False");
		break;
	case TENSORFLOW__STRUCTURED_VALUE__KIND_TENSOR_SHAPE_VALUE:
		put_shape(v->tensor_shape_value);
		break;
	case TENSORFLOW__STRUCTURED_VALUE__KIND_TENSOR_DTYPE_VALUE:
		printf("<dtype: '%s'>", py_dtype(v->tensor_dtype_value) ?
		       py_dtype(v->tensor_dtype_value) : "?");
		break;
	case TENSORFLOW__STRUCTURED_VALUE__KIND_TENSOR_SPEC_VALUE:
		if (v->tensor_spec_value)
			put_tensor_spec(v->tensor_spec_value);
		break;
	case TENSORFLOW__STRUCTURED_VALUE__KIND_LIST_VALUE:
	case TENSORFLOW__STRUCTURED_VALUE__KIND_TUPLE_VALUE:
		put_seq(v, depth);
		break;
	case TENSORFLOW__STRUCTURED_VALUE__KIND_DICT_VALUE: {
		size_t nf;
		Tensorflow__DictValue__FieldsEntry **f =
			sorted_fields(v->dict_value, &nf);

		putchar('{');
		for (i = 0; i < nf; i++) {
			const Tensorflow__DictValue__FieldsEntry *e = f[i];

			if (i)
				printf(", ");
			py_repr(stdout, e->key);
			printf(": ");
			if (e->value && e->value->kind_case ==
			    TENSORFLOW__STRUCTURED_VALUE__KIND_STRING_VALUE)
				py_repr(stdout, e->value->string_value);
			else if (e->value)
				put_str(e->value, depth + 1);
		}
		putchar('}');
		tfk_free(f);
		break;
	}
	case TENSORFLOW__STRUCTURED_VALUE__KIND_NAMED_TUPLE_VALUE:
		printf("%s(", v->named_tuple_value->name);
		for (i = 0; i < v->named_tuple_value->n_values; i++) {
			const Tensorflow__PairValue *p =
				v->named_tuple_value->values[i];

			printf("%s%s=", i ? ", " : "", p->key);
			if (p->value && p->value->kind_case ==
			    TENSORFLOW__STRUCTURED_VALUE__KIND_STRING_VALUE)
				py_repr(stdout, p->value->string_value);
			else if (p->value)
				put_str(p->value, depth + 1);
		}
		putchar(')');
		break;
	case TENSORFLOW__STRUCTURED_VALUE__KIND_TYPE_SPEC_VALUE:
	case TENSORFLOW__STRUCTURED_VALUE__KIND_BOUNDED_TENSOR_SPEC_VALUE:
		printf("<%s>", sv_type_name(v));
		break;
	default:
		printf("None");
		break;
	}
}

/* _maybe_add_quotes: a str in single quotes (not repr), else str(). */
static void put_quoted(const Tensorflow__StructuredValue *v)
{
	if (v->kind_case == TENSORFLOW__STRUCTURED_VALUE__KIND_STRING_VALUE)
		printf("'%s'", v->string_value);
	else
		put_str(v, 0);
}

/* _print_args(arguments, argument_type, indent=4) over the elements of
 * a tuple (args) or the keys of a dict (kwargs). */
static void print_args(const Tensorflow__StructuredValue *args,
		       const char *type)
{
	const char *ind = "        ";	/* '  ' * 4 */
	size_t i, j, n;

	if (args->kind_case == TENSORFLOW__STRUCTURED_VALUE__KIND_DICT_VALUE) {
		Tensorflow__DictValue__FieldsEntry **f =
			sorted_fields(args->dict_value, &n);

		for (i = 0; i < n; i++) {
			printf("%s%s #%zu\n", ind, type, i + 1);
			printf("%s  %s\n", ind, f[i]->key);
		}
		tfk_free(f);
		return;
	}
	{
		Tensorflow__StructuredValue **it = sv_items(args, &n);

		for (i = 0; i < n; i++) {
			const Tensorflow__StructuredValue *e = it[i];
			Tensorflow__StructuredValue **sub;
			size_t m;

			printf("%s%s #%zu\n", ind, type, i + 1);
			if (!e)
				continue;
			sub = sv_items(e, &m);
			switch (e->kind_case) {
			case TENSORFLOW__STRUCTURED_VALUE__KIND_STRING_VALUE:
				printf("%s  %s\n", ind, e->string_value);
				break;
			case TENSORFLOW__STRUCTURED_VALUE__KIND_TENSOR_SPEC_VALUE:
				printf("%s  ", ind);
				if (e->tensor_spec_value->name[0])
					printf("%s", e->tensor_spec_value->name);
				else
					printf("None");
				printf(": ");
				put_tensor_spec(e->tensor_spec_value);
				putchar('\n');
				break;
			case TENSORFLOW__STRUCTURED_VALUE__KIND_LIST_VALUE:
			case TENSORFLOW__STRUCTURED_VALUE__KIND_TUPLE_VALUE:
				printf("%s  DType: %s\n", ind, sv_type_name(e));
				printf("%s  Value: [", ind);
				for (j = 0; j < m; j++) {
					if (sub[j])
						put_quoted(sub[j]);
					printf(", ");
				}
				printf("\b\b]\n");
				break;
			case TENSORFLOW__STRUCTURED_VALUE__KIND_DICT_VALUE: {
				Tensorflow__DictValue__FieldsEntry **f =
					sorted_fields(e->dict_value, &m);

				printf("%s  DType: dict\n", ind);
				printf("%s  Value: {", ind);
				for (j = 0; j < m; j++) {
					printf("'%s': ", f[j]->key);
					if (f[j]->value)
						put_quoted(f[j]->value);
					printf(", ");
				}
				printf("\b\b}\n");
				tfk_free(f);
				break;
			}
			default:
				printf("%s  DType: %s\n", ind, sv_type_name(e));
				printf("%s  Value: ", ind);
				put_str(e, 0);
				putchar('\n');
				break;
			}
		}
	}
}

static const Tensorflow__SavedConcreteFunction *find_concrete(
	const Tensorflow__SavedObjectGraph *og, const char *name)
{
	size_t i;

	for (i = 0; i < og->n_concrete_functions; i++)
		if (!strcmp(og->concrete_functions[i]->key, name))
			return og->concrete_functions[i]->value;
	return NULL;
}

/* One concrete function's "Option #k" block. */
static void print_option(const Tensorflow__SavedObjectGraph *og,
			 const char *name, size_t k,
			 const Tensorflow__SavedBareConcreteFunction *bare)
{
	const Tensorflow__SavedConcreteFunction *cf = find_concrete(og, name);
	const Tensorflow__StructuredValue *sig =
		cf ? cf->canonicalized_input_signature : NULL;
	const Tensorflow__StructuredValue *args = NULL, *kwargs = NULL;
	size_t n_args = 0, n_kw = 0, i;

	if (sig && sig->kind_case ==
	    TENSORFLOW__STRUCTURED_VALUE__KIND_TUPLE_VALUE &&
	    sig->tuple_value && sig->tuple_value->n_values == 2) {
		args = sig->tuple_value->values[0];
		kwargs = sig->tuple_value->values[1];
		if (args)
			sv_items(args, &n_args);
		if (kwargs && kwargs->kind_case ==
		    TENSORFLOW__STRUCTURED_VALUE__KIND_DICT_VALUE &&
		    kwargs->dict_value)
			n_kw = kwargs->dict_value->n_fields;
	}
	if (n_args) {
		printf("    Option #%zu\n      Callable with:\n", k);
		print_args(args, "Argument");
	} else if (!args && bare && bare->n_argument_keywords) {
		/* A pure ConcreteFunction: only its _arg_keywords. */
		printf("    Option #%zu\n      Callable with:\n", k);
		for (i = 0; i < bare->n_argument_keywords; i++)
			printf("        Argument #%zu\n          %s\n", i + 1,
			       bare->argument_keywords[i]);
	}
	if (n_kw)
		print_args(kwargs, "Named Argument");
}

typedef Tensorflow__TrackableObjectGraph__TrackableObject__ObjectReference
	ObjectRef;
#define KIND_FUNCTION TENSORFLOW__SAVED_OBJECT__KIND_FUNCTION
#define KIND_BARE_FUNCTION TENSORFLOW__SAVED_OBJECT__KIND_BARE_CONCRETE_FUNCTION

struct child_ref {
	const char *name;
	int node;
};

static int cmp_child(const void *a, const void *b)
{
	const struct child_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->node > y->node) - (x->node < y->node);
}

static int show_concrete_functions(const struct tfk_savedmodel *sm)
{
	const Tensorflow__SavedObjectGraph *og;
	const Tensorflow__SavedObject *root;
	struct child_ref *ch;
	size_t i, j, n = 0;
	int any = 0;

	for (i = 0; i < (size_t)sm->n_meta_graphs; i++)
		any |= sm->meta_graphs[i].object_graph != NULL;
	if (!any)
		return 0;
	printf("\nConcrete Functions:");
	og = sm->n_meta_graphs == 1 ? sm->meta_graphs[0].object_graph : NULL;
	/* TensorFlow's load() needs exactly one MetaGraphDef with an
	 * object graph whose root exists; otherwise saved_model_cli
	 * prints this. */
	if (!og || !og->n_nodes || !og->nodes[0]) {
		printf(" N/A (could not be listed due to unknown reasons)\n");
		return 0;
	}
	root = og->nodes[0];
	ch = tfk_calloc(root->n_children + 1, sizeof(*ch));
	if (!ch)
		return oom();
	for (i = 0; i < root->n_children; i++) {
		const ObjectRef *r = root->children[i];
		const Tensorflow__SavedObject *o;

		if (!r || r->node_id < 0 || (size_t)r->node_id >= og->n_nodes)
			continue;
		o = og->nodes[r->node_id];
		if (!o || (o->kind_case != KIND_FUNCTION &&
			   o->kind_case != KIND_BARE_FUNCTION))
			continue;
		ch[n].name = r->local_name;
		ch[n++].node = r->node_id;
	}
	qsort(ch, n, sizeof(*ch), cmp_child);
	for (i = 0; i < n; i++) {
		const Tensorflow__SavedObject *o = og->nodes[ch[i].node];

		printf("\n  Function Name: '%s'\n", ch[i].name);
		if (o->kind_case == KIND_FUNCTION) {
			const Tensorflow__SavedFunction *f = o->function;
			const char **names;

			names = tfk_calloc(f->n_concrete_functions + 1,
					   sizeof(*names));
			if (!names) {
				tfk_free(ch);
				return oom();
			}
			for (j = 0; j < f->n_concrete_functions; j++)
				names[j] = f->concrete_functions[j];
			qsort(names, f->n_concrete_functions, sizeof(*names),
			      cmp_cstr);
			for (j = 0; j < f->n_concrete_functions; j++)
				print_option(og, names[j], j + 1, NULL);
			tfk_free(names);
		} else {
			print_option(og, o->bare_concrete_function->
				     concrete_function_name, 1,
				     o->bare_concrete_function);
		}
	}
	tfk_free(ch);
	return 0;
}

static int show_all(const struct tfk_savedmodel *sm)
{
	const struct tfk_meta_graph **v = sorted_meta_graphs(sm);
	int i, j, rc = 0;

	if (!v)
		return oom();
	for (i = 0; i < sm->n_meta_graphs && !rc; i++) {
		const struct tfk_meta_graph *mg = v[i];

		printf("\nMetaGraphDef with tag-set: '");
		for (j = 0; j < mg->n_tags; j++)
			printf("%s%s", j ? ", " : "", mg->tags[j]);
		printf("' contains the following SignatureDefs:\n");
		for (j = 0; j < mg->n_signatures; j++) {
			printf("\nsignature_def['%s']:\n",
			       mg->signatures[j].key);
			show_inputs_outputs(&mg->signatures[j], 1);
		}
		rc = show_op_set(mg);
	}
	tfk_free(v);
	return rc ? rc : show_concrete_functions(sm);
}

/* JSON ------------------------------------------------------------------ */

/* s as JSON text must be UTF-8, which protobuf-c does not check of the
 * strings it reads: bytes that are not UTF-8 become U+FFFD, so a name
 * is never silently dropped (jansson refuses invalid UTF-8). Returns a
 * heap string (tfk_free) or NULL when out of memory. */
static char *utf8_clean(const char *s)
{
	size_t n = strlen(s), i = 0, k = 0;
	char *out = tfk_malloc(3 * n + 1);
	const unsigned char *p = (const unsigned char *)s;

	if (!out)
		return NULL;
	while (i < n) {
		unsigned c = p[i];
		size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 :
			     (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
		uint32_t cp = len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 7;
		size_t j;
		int good = len > 0 && i + len <= n;

		for (j = 1; good && j < len; j++) {
			good = (p[i + j] & 0xc0) == 0x80;
			cp = cp << 6 | (p[i + j] & 0x3f);
		}
		/* overlong forms, surrogates, past U+10FFFF */
		if (good && len > 1)
			good = !((len == 2 && cp < 0x80) ||
				 (len == 3 && cp < 0x800) ||
				 (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
				 (cp >= 0xd800 && cp <= 0xdfff));
		if (good) {
			memcpy(out + k, p + i, len);
			k += len;
			i += len;
		} else {
			memcpy(out + k, "\xef\xbf\xbd", 3);
			k += 3;
			i++;
		}
	}
	out[k] = '\0';
	return out;
}

static json_t *jstr(const char *s)
{
	char *c = utf8_clean(s);
	json_t *j = c ? json_string(c) : NULL;

	tfk_free(c);
	return j;
}

/* json_object_set_new with a key made valid UTF-8. */
static void jset(json_t *o, const char *key, json_t *v)
{
	char *c = utf8_clean(key);

	if (c)
		json_object_set_new(o, c, v);
	else
		json_decref(v);
	tfk_free(c);
}

static json_t *tinfo_json(const struct tfk_tensor_info *ti)
{
	const char *dn = tfk_savedmodel_dtype_name(ti->dtype);
	json_t *o = json_object(), *shape;
	int i;

	if (!o)
		return NULL;
	if (ti->unknown_rank) {
		shape = json_null();
	} else {
		shape = json_array();
		for (i = 0; shape && i < ti->rank; i++)
			json_array_append_new(shape,
					      json_integer(ti->dims[i]));
	}
	json_object_set_new(o, "name", jstr(ti->name));
	json_object_set_new(o, "dtype", dn ? json_string(dn)
					   : json_integer(ti->dtype));
	json_object_set_new(o, "shape", shape);
	json_object_set_new(o, "has_shape", json_boolean(ti->has_shape));
	if (ti->encoding != TFK_TINFO_NAME)
		json_object_set_new(o, "encoding", json_string(
			ti->encoding == TFK_TINFO_COO_SPARSE ? "coo_sparse" :
			ti->encoding == TFK_TINFO_COMPOSITE ?
			"composite_tensor" : "none"));
	return o;
}

static json_t *sig_json(const struct tfk_signature *s)
{
	json_t *o = json_object(), *in = json_object(), *out = json_object();
	int i;

	for (i = 0; i < s->n_inputs; i++)
		jset(in, s->inputs[i].key,
				    tinfo_json(&s->inputs[i]));
	for (i = 0; i < s->n_outputs; i++)
		jset(out, s->outputs[i].key,
				    tinfo_json(&s->outputs[i]));
	json_object_set_new(o, "method_name", jstr(s->method_name));
	json_object_set_new(o, "inputs", in);
	json_object_set_new(o, "outputs", out);
	return o;
}

static int mg_json(json_t *arr, const struct tfk_meta_graph *mg,
		   const struct tfk_signature *only)
{
	json_t *o = json_object(), *tags = json_array(), *sigs = json_object();
	json_t *opl = json_array();
	struct tfk_err err;
	const char **names;
	int i, n;

	for (i = 0; i < mg->n_tags; i++)
		json_array_append_new(tags, jstr(mg->tags[i]));
	for (i = 0; i < mg->n_signatures; i++)
		if (!only || only == &mg->signatures[i])
			jset(sigs, mg->signatures[i].key,
					    sig_json(&mg->signatures[i]));
	n = tfk_savedmodel_ops(mg, &names, &err);
	if (n < 0) {
		json_decref(o);
		json_decref(tags);
		json_decref(sigs);
		json_decref(opl);
		return tfk_cli_fail(&err);
	}
	for (i = 0; i < n; i++) {
		json_t *e = json_object();

		json_object_set_new(e, "op", jstr(names[i]));
		json_object_set_new(e, "runnable",
				    json_boolean(op_runnable(names[i])));
		json_array_append_new(opl, e);
	}
	tfk_free(names);
	json_object_set_new(o, "tags", tags);
	json_object_set_new(o, "tensorflow_version",
			    jstr(mg->tensorflow_version));
	json_object_set_new(o, "tf2_object_graph",
			    json_boolean(mg->object_graph != NULL));
	json_object_set_new(o, "tf1_saver",
			    json_boolean(mg->saver_def != NULL));
	json_object_set_new(o, "nodes",
			    json_integer((json_int_t)mg->graph_def->n_node));
	json_object_set_new(o, "functions", json_integer(
		mg->graph_def->library ?
		(json_int_t)mg->graph_def->library->n_function : 0));
	json_object_set_new(o, "signature_defs", sigs);
	json_object_set_new(o, "ops", opl);
	json_array_append_new(arr, o);
	return 0;
}

static int show_json(const struct tfk_savedmodel *sm,
		     const struct tfk_meta_graph *only_mg,
		     const struct tfk_signature *only_sig)
{
	json_t *o = json_object(), *arr = json_array();
	char *text;
	int i, rc = 0;

	json_object_set_new(o, "dir", jstr(sm->dir));
	json_object_set_new(o, "saved_model_schema_version",
			    json_integer(sm->schema_version));
	json_object_set_new(o, "variables", json_boolean(sm->has_variables));
	for (i = 0; i < sm->n_meta_graphs && !rc; i++)
		if (!only_mg || only_mg == &sm->meta_graphs[i])
			rc = mg_json(arr, &sm->meta_graphs[i], only_sig);
	json_object_set_new(o, "meta_graphs", arr);
	if (rc) {
		json_decref(o);
		return rc;
	}
	text = json_dumps(o, JSON_PRESERVE_ORDER | JSON_COMPACT |
			  JSON_ENSURE_ASCII);
	json_decref(o);
	if (!text)
		return oom();
	printf("%s\n", text);
	free(text);
	return 0;
}

/* Normalize --tag_set as saved_model_cli does: items stripped, empty
 * ones dropped, at least one left. Returns a heap copy "a,b". */
static char *clean_tag_set(const char *s)
{
	char *out = tfk_malloc(strlen(s) + 1), *w = out;
	const char *p = s;

	if (!out)
		return NULL;
	while (*p) {
		const char *e = strchr(p, ','), *a, *b;

		e = e ? e : p + strlen(p);
		for (a = p; a < e && (*a == ' ' || *a == '\t'); a++)
			;
		for (b = e; b > a && (b[-1] == ' ' || b[-1] == '\t'); b--)
			;
		if (b > a) {
			if (w > out)
				*w++ = ',';
			memcpy(w, a, (size_t)(b - a));
			w += b - a;
		}
		p = *e ? e + 1 : e;
	}
	*w = '\0';
	return out;
}

static int show_main(int argc, char **argv)
{
	struct tfk_savedmodel *sm;
	const struct tfk_meta_graph *mg = NULL;
	const struct tfk_signature *sig = NULL;
	struct tfk_err err;
	char *tags = NULL;
	int rc = 0, n;

	n = tfk_cli_parse(argc, argv, &show_cmd, show_opts);
	if (n > 0)
		tfk_cli_usage_error("unexpected argument '%s'", argv[0]);
	if (!dir)
		tfk_cli_usage_error("show needs --dir DIR");
	if (signature_def && !tag_set && !json)
		tfk_cli_usage_error("--signature_def needs --tag_set");
	if (tag_set) {
		tags = clean_tag_set(tag_set);
		if (!tags)
			return oom();
		if (!tags[0]) {
			tfk_free(tags);
			tfk_cli_usage_error("--tag_set must contain at least "
					    "one non-empty item");
		}
	}
	if (tfk_savedmodel_open(&sm, dir, &err)) {
		tfk_free(tags);
		return tfk_cli_fail(&err);
	}
	if (tags) {
		int k = tfk_savedmodel_find_tags(sm, tags, &err);

		if (k < 0) {
			tfk_err_prefix(&err, "%s", dir);
			rc = tfk_cli_fail(&err);
			goto out;
		}
		mg = &sm->meta_graphs[k];
	} else if ((ops || (json && signature_def)) &&
		   sm->n_meta_graphs == 1) {
		mg = &sm->meta_graphs[0];
	} else if (ops || (json && signature_def)) {
		int i, j;

		fprintf(stderr, "%s: %s: %d MetaGraphDefs: choose one with "
			"--tag_set:", tfk_cli_name(), dir, sm->n_meta_graphs);
		for (i = 0; i < sm->n_meta_graphs; i++) {
			fprintf(stderr, "%s '", i ? "," : "");
			for (j = 0; j < sm->meta_graphs[i].n_tags; j++)
				fprintf(stderr, "%s%s", j ? ", " : "",
					sm->meta_graphs[i].tags[j]);
			fputc('\'', stderr);
		}
		fputc('\n', stderr);
		rc = 1;
		goto out;
	}
	if (signature_def) {
		sig = tfk_savedmodel_signature(mg, signature_def, &err);
		if (!sig) {
			tfk_err_prefix(&err, "%s: tag-set %s", dir,
				       tags ? tags : "(the only one)");
			rc = tfk_cli_fail(&err);
			goto out;
		}
	}
	if (json) {
		rc = show_json(sm, mg, sig);
	} else if (ops) {
		rc = show_ops_table(mg);
	} else if (all) {
		rc = show_all(sm);
	} else if (!mg) {
		if (list_ops)
			printf("--list_ops must be paired with a tag-set or "
			       "with --all.\n");
		rc = show_tag_sets(sm);
	} else {
		if (list_ops)
			rc = show_op_set(mg);
		if (rc) {
			;
		} else if (sig) {
			show_inputs_outputs(sig, 0);
		} else {
			int i;

			printf("The given SavedModel MetaGraphDef contains "
			       "SignatureDefs with the following keys:\n");
			for (i = 0; i < mg->n_signatures; i++)
				printf("SignatureDef key: \"%s\"\n",
				       mg->signatures[i].key);
		}
	}
out:
	tfk_savedmodel_close(sm);
	tfk_free(tags);
	if (fflush(stdout) && !rc) {
		tfk_cli_warn("stdout: write error");
		rc = 1;
	}
	return rc;
}

static const struct tfk_subcmd show_sub = {
	"show", "tag-sets, signatures (inputs, outputs, method) and "
	"ops of a SavedModel", show_main
};

int main(int argc, char **argv)
{
	static const struct tfk_subcmd *const subs[] = {
		&show_sub, &model_run_sub, &model_bench_sub, NULL
	};

	return tfk_cli_subcommands(argc, argv, &top_cmd, subs);
}
