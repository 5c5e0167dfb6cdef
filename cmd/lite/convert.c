/*
 * convert.c - `tfk-lite convert`: a SavedModel signature to a .tflite
 * file, as tf.lite.TFLiteConverter.from_saved_model, with --report and
 * --eval printing what the quantization cost. The converter is
 * lib/model/tflconvert.c (tfk_lite_convert; its top comment has the
 * lowering and the quantization schemes) and the report's numbers come
 * from lib/model/tflreport.c; this file checks the options, runs them
 * and prints.
 */
#include "sub.h"

#include "format/savedmodel.h"
#include "model/import.h"
#include "model/lite.h"
#include "util/buf.h"
#include "util/cli.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *sm_dir, *out_arg, *sig_key = "serving_default";
static const char *tag_set = "serve", *quant_arg, *rep_arg;
static const char *itype_arg = "float";
static long n_calib = 100;
static const char *eval_arg, *label_arg;
static int report_flag, json_flag, layerwise_flag;

static const struct tfk_opt convert_opts[] = {
	TFK_OPT_STR(0, "saved_model_dir", &sm_dir, "DIR",
		    "the SavedModel to convert"),
	TFK_OPT_STR('o', "output", &out_arg, "FILE", "the .tflite file to "
		    "write"),
	TFK_OPT_STR(0, "signature_def", &sig_key, "KEY", "the signature "
		    "to convert"),
	TFK_OPT_STR(0, "tag_set", &tag_set, "TAGS", "the MetaGraphDef's "
		    "tags, comma-separated"),
	TFK_OPT_STR(0, "quantize", &quant_arg, "MODE", "weight "
		    "quantization: float16, dynamic (int8 weights) or int8 "
		    "(full integer)"),
	TFK_OPT_STR(0, "representative", &rep_arg, "FILE", "int8: "
		    "TFRecord file of tf.Example records to calibrate on, "
		    "fed as the model's training spec says"),
	TFK_OPT_LONG(0, "calibration_records", &n_calib, "N", "int8: "
		     "calibrate on the first N records"),
	TFK_OPT_STR(0, "inference-type", &itype_arg, "TYPE", "int8: the "
		    "model's input/output type, float or int8"),
	TFK_OPT_FLAG(0, "report", &report_flag, "int8: print each "
		     "quantized tensor's error against the float model on "
		     "the representative records (TF's quantization "
		     "debugger statistics)"),
	TFK_OPT_FLAG(0, "layerwise", &layerwise_flag, "--report: compare "
		     "each op with its float op fed the dequantized inputs "
		     "(TF's default) instead of with the float model"),
	TFK_OPT_STR(0, "eval", &eval_arg, "FILE", "print the accuracy of "
		    "the float and the quantized model on these TFRecord "
		    "records, and both file sizes"),
	TFK_OPT_STR(0, "label", &label_arg, "FEATURE", "--eval: the int64 "
		    "feature holding the class (default label)"),
	TFK_OPT_FLAG(0, "json", &json_flag, "--report/--eval: print one "
		     "JSON object instead of text"),
	TFK_OPT_END
};

static const struct tfk_cmd convert_cmd = {
	"tfk-lite",
	"convert --saved_model_dir DIR -o FILE [--signature_def KEY] "
	"[--tag_set TAGS] [--quantize float16|dynamic|int8 "
	"[--representative FILE] [--inference-type float|int8] [--report "
	"[--layerwise]] "
	"[--eval FILE [--label FEATURE]] [--json]]",
	"convert a SavedModel signature to a TensorFlow Lite model, as "
	"tf.lite.TFLiteConverter",
	"tfk-lite convert --saved_model_dir model -o model.tflite",
};

static const char *dash(const char *s)
{
	return s && *s ? s : "-";
}

static json_t *jstr(const char *s)
{
	json_t *j = json_string(s ? s : "");

	return j ? j : json_string("?");
}

/* Print the report r of the conversion written to out_arg: one JSON
 * object, or text. */
static void print_report(const struct tfk_lite_report *r,
			 const struct tfk_tfl_records *eval)
{
	const struct tfk_tfl_qstat *st = r->st;
	const char *quant = quant_arg, *label = label_arg ? label_arg :
		"label";
	size_t fok = r->float_correct, qok = r->quant_correct;
	size_t float_size = r->float_bytes, qbytes = r->quant_bytes;
	int n_st = r->n_st, k;
	json_t *root = NULL;

	if (json_flag) {
		json_t *a = json_array(), *ev;

		root = json_object();
		json_object_set_new(root, "model", jstr(out_arg));
		json_object_set_new(root, "quantize", jstr(quant));
		if (report_flag) {
			json_object_set_new(root, "representative",
					    jstr(rep_arg));
			json_object_set_new(root, "records",
					    json_integer((json_int_t)r->rep_rows));
			json_object_set_new(root, "verify", jstr(layerwise_flag ?
					    "layer" : "whole_model"));
			for (k = 0; k < n_st; k++) {
				json_t *t = json_object();

				json_object_set_new(t, "op_name",
						    jstr(st[k].op));
				json_object_set_new(t, "tensor_idx",
						    json_integer(st[k].tensor));
				json_object_set_new(t, "num_elements",
					json_integer(st[k].num_elements));
				json_object_set_new(t, "stddev",
						    json_real(st[k].stddev));
				json_object_set_new(t, "mean_error",
						    json_real(st[k].mean_error));
				json_object_set_new(t, "max_abs_error",
					json_real(st[k].max_abs_error));
				json_object_set_new(t, "mean_squared_error",
					json_real(st[k].mean_squared_error));
				json_object_set_new(t, "scale",
						    json_real(st[k].scale));
				json_object_set_new(t, "zero_point",
					json_integer(st[k].zero_point));
				json_object_set_new(t, "rmse/scale", json_real(
					sqrt(st[k].mean_squared_error) /
					st[k].scale));
				json_object_set_new(t, "tensor_name",
						    jstr(st[k].name));
				json_array_append_new(a, t);
			}
			json_object_set_new(root, "layer_stats", a);
		} else {
			json_decref(a);
		}
		if (eval) {
			json_t *f = json_object(), *q = json_object();

			ev = json_object();
			json_object_set_new(ev, "file", jstr(eval_arg));
			json_object_set_new(ev, "label", jstr(label));
			json_object_set_new(ev, "records",
					    json_integer((json_int_t)eval->rows));
			json_object_set_new(f, "accuracy", json_real(
				(double)fok / (double)eval->rows));
			json_object_set_new(f, "correct",
					    json_integer((json_int_t)fok));
			json_object_set_new(f, "bytes",
					    json_integer((json_int_t)float_size));
			json_object_set_new(q, "accuracy", json_real(
				(double)qok / (double)eval->rows));
			json_object_set_new(q, "correct",
					    json_integer((json_int_t)qok));
			json_object_set_new(q, "bytes",
					    json_integer((json_int_t)qbytes));
			json_object_set_new(ev, "float", f);
			json_object_set_new(ev, "quantized", q);
			json_object_set_new(ev, "size_ratio", json_real(
				(double)qbytes / (double)float_size));
			json_object_set_new(root, "eval", ev);
		}
		json_dumpf(root, stdout, JSON_PRESERVE_ORDER |
			   JSON_REAL_PRECISION(17));
		putchar('\n');
		json_decref(root);
		return;
	}
	if (report_flag) {
		int worst = -1;

		printf("per-tensor error of %s (%s) against %s, %zu records "
		       "of %s (mean over records)\n", out_arg, quant,
		       layerwise_flag ? "each float op fed the dequantized "
		       "inputs" : "the float model", r->rep_rows, rep_arg);
		printf("%-6s %-16s %12s %12s %12s %12s %12s %12s %10s %10s "
		       "%s\n", "tensor", "op_name", "num_elements", "stddev",
		       "mean_error", "max_abs_error", "mean_squared_error",
		       "scale", "zero_point", "rmse/scale", "tensor_name");
		for (k = 0; k < n_st; k++) {
			double q = sqrt(st[k].mean_squared_error) /
				   st[k].scale;

			printf("%-6d %-16s %12" PRId64 " %12.6g %12.6g %12.6g "
			       "%12.6g %12.6g %10" PRId64 " %10.4f %s\n",
			       st[k].tensor, dash(st[k].op),
			       st[k].num_elements, st[k].stddev,
			       st[k].mean_error, st[k].max_abs_error,
			       st[k].mean_squared_error, st[k].scale,
			       st[k].zero_point, q, st[k].name);
			if (worst < 0 || q > sqrt(st[worst].mean_squared_error) /
			    st[worst].scale)
				worst = k;
		}
		if (worst >= 0)
			printf("summary: %d quantized tensors; largest "
			       "rmse/scale %.4f at tensor %d '%s'\n", n_st,
			       sqrt(st[worst].mean_squared_error) /
			       st[worst].scale, st[worst].tensor,
			       st[worst].name);
		else
			printf("summary: no quantized activation tensor has a "
			       "float twin\n");
	}
	if (eval) {
		printf("accuracy on %s (%zu records, label '%s'):\n", eval_arg,
		       eval->rows, label);
		printf("  float   %.4f (%zu/%zu)  %zu bytes\n",
		       (double)fok / (double)eval->rows, fok, eval->rows,
		       float_size);
		printf("  %-7s %.4f (%zu/%zu)  %zu bytes (%.3fx the float "
		       "size)\n", quant, (double)qok / (double)eval->rows,
		       qok, eval->rows, qbytes, (double)qbytes /
		       (double)float_size);
	}
}

static int lite_convert_main(int argc, char **argv)
{
	struct tfk_savedmodel *sm = NULL;
	struct tfk_import *imp = NULL;
	const struct tfk_signature *sig;
	struct tfk_err err;
	int k, rc = 1, quant = TFK_LITE_FLOAT;
	size_t size = 0, fsize = 0;
	struct tfk_lite_convert_opts q8;
	struct tfk_tfl_records ev;
	struct tfk_buf fbuf;

	if (tfk_cli_parse(argc, argv, &convert_cmd, convert_opts))
		tfk_cli_usage_error("convert takes no file arguments (use "
				    "--saved_model_dir and -o)");
	if (!sm_dir)
		tfk_cli_usage_error("convert needs --saved_model_dir");
	if (!out_arg)
		tfk_cli_usage_error("convert needs -o FILE");
	if (quant_arg) {
		if (!strcmp(quant_arg, "float16"))
			quant = TFK_LITE_FLOAT16;
		else if (!strcmp(quant_arg, "dynamic"))
			quant = TFK_LITE_DYNAMIC;
		else if (!strcmp(quant_arg, "int8"))
			quant = TFK_LITE_INT8;
		else
			tfk_cli_usage_error("--quantize: expected float16, "
					    "dynamic or int8, got '%s'",
					    quant_arg);
	}
	if (quant == TFK_LITE_INT8 && !rep_arg)
		tfk_cli_usage_error("--quantize int8 needs --representative "
				    "FILE");
	if (quant != TFK_LITE_INT8 && rep_arg)
		tfk_cli_usage_error("--representative is for --quantize int8");
	if (strcmp(itype_arg, "float") && strcmp(itype_arg, "int8"))
		tfk_cli_usage_error("--inference-type: expected float or int8, "
				    "got '%s'", itype_arg);
	if (n_calib < 1)
		tfk_cli_usage_error("--calibration_records: expected N >= 1");
	if (report_flag && quant != TFK_LITE_INT8)
		tfk_cli_usage_error("--report: per-tensor statistics need "
				    "--quantize int8 (dynamic and float16 keep "
				    "float activations; --eval compares "
				    "accuracy)");
	if (eval_arg && quant == TFK_LITE_FLOAT)
		tfk_cli_usage_error("--eval compares the float and the "
				    "quantized model: it needs --quantize");
	if (label_arg && !eval_arg)
		tfk_cli_usage_error("--label is for --eval");
	if (layerwise_flag && !report_flag)
		tfk_cli_usage_error("--layerwise is for --report");
	if ((report_flag || eval_arg) && !strcmp(out_arg, "-"))
		tfk_cli_usage_error("--report and --eval print to standard "
				    "output: write the model to a file, not "
				    "-o -");
	if (json_flag && !report_flag && !eval_arg)
		tfk_cli_usage_error("--json is for --report and --eval");
	memset(&q8, 0, sizeof(q8));
	q8.quant = quant;
	q8.sm_dir = sm_dir;
	q8.rep = rep_arg;
	q8.n_rep = n_calib;
	q8.io_int8 = !strcmp(itype_arg, "int8");
	memset(&ev, 0, sizeof(ev));
	tfk_buf_init(&fbuf);
	/* eval records first: a bad file leaves no output behind */
	if (eval_arg && tfk_tfl_records_read(&ev, sm_dir, eval_arg, 0,
					     label_arg ? label_arg : "label",
					     "--eval", &err))
		return tfk_cli_fail(&err);
	if (tfk_savedmodel_open(&sm, sm_dir, &err)) {
		tfk_tfl_records_release(&ev);
		return tfk_cli_fail(&err);
	}
	k = tfk_savedmodel_find_tags(sm, tag_set, &err);
	if (k < 0) {
		tfk_err_prefix(&err, "%s", sm_dir);
		goto fail;
	}
	sig = tfk_savedmodel_signature(&sm->meta_graphs[k], sig_key, &err);
	if (!sig) {
		tfk_err_prefix(&err, "%s", sm_dir);
		goto fail;
	}
	if (tfk_import_signature(&imp, &sm->meta_graphs[k], sig,
				 sm->variables_prefix, &err)) {
		tfk_err_prefix(&err, "%s: signature %s", sm_dir, sig->key);
		goto fail;
	}
	if (tfk_lite_convert(imp, &q8, out_arg, NULL, &size, &err)) {
		tfk_err_prefix(&err, "%s: signature %s", sm_dir, sig->key);
		goto fail;
	}
	if (report_flag || eval_arg) {
		/* the float model to compare with: converted again,
		 * unquantized, in memory (tflreport.c) */
		struct tfk_lite_report_opts ro;
		struct tfk_lite_report rr;

		memset(&ro, 0, sizeof(ro));
		ro.sm_dir = sm_dir;
		ro.out_path = out_arg;
		ro.report = report_flag;
		ro.layerwise = layerwise_flag;
		ro.rep = rep_arg;
		ro.n_rep = n_calib;
		ro.eval = eval_arg;
		q8.quant = TFK_LITE_FLOAT;
		if (tfk_lite_convert(imp, &q8, NULL, &fbuf, &fsize, &err)) {
			tfk_err_prefix(&err, "%s: signature %s", sm_dir,
				       sig->key);
			goto fail;
		}
		if (tfk_lite_report(&ro, fbuf.data, fbuf.len,
				    eval_arg ? &ev : NULL, &rr, &err))
			goto fail;
		print_report(&rr, eval_arg ? &ev : NULL);
		tfk_lite_report_release(&rr);
	}
	rc = 0;
	goto out;
fail:
	rc = tfk_cli_fail(&err);
out:
	tfk_buf_release(&fbuf);
	tfk_tfl_records_release(&ev);
	tfk_import_free(imp);
	tfk_savedmodel_close(sm);
	return rc;
}

const struct tfk_subcmd lite_convert_sub = {
	"convert", "convert a SavedModel signature to a .tflite "
	"model", lite_convert_main
};
