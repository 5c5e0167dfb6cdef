#!/bin/sh
# tfk-lite convert --report / --eval: the quantization report.
#
# A small MLP (examples/mlp.spec.json) trained on 256 Fashion-MNIST
# records is converted to int8 with --report --eval. The oracle,
# tests/py/qreport_ref.py, reads the float and the int8 .tflite with
# python3-flatbuffers and runs both in numpy (int8: TFLite's integer
# arithmetic from int8_ref.py), on images read from the IDX files by
# numpy rather than through our records: every quantized tensor must be
# listed with TF's quantization-debugger metrics within float rounding,
# and the float and int8 accuracies must be the oracle's counts exactly.
# dynamic and float16 --eval likewise; then every refusal.
. "$(dirname "$0")/lib.sh"

D=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $D/train-images-idx3-ubyte.gz --labels $D/train-labels-idx1-ubyte.gz |
	tfk-cat --take 256 >"$T/train.tfrecord"
tfk-cat --take 100 "$T/train.tfrecord" >"$T/rep.tfrecord"
tfk-idx -q --images $D/t10k-images-idx3-ubyte.gz --labels $D/t10k-labels-idx1-ubyte.gz |
	tfk-cat --take 300 >"$T/eval.tfrecord"
(cd "$T" && tfk-train "$TESTS/../examples/mlp.spec.json" train.tfrecord --out mlp \
	--set fit.epochs=2 -q -j1) >/dev/null 2>&1
# the same images as numpy arrays, scaled as the spec says (1/255)
$PYTHON -c 'import gzip, numpy as np
d = "'$D'/"
def img(f, n):
    a = np.frombuffer(gzip.open(d + f).read()[16:], np.uint8).reshape(-1, 28, 28)[:n]
    return (a.astype(np.float64) * 0.00392156862745098).astype(np.float32)
np.save("'"$T"'/rep.npy", img("train-images-idx3-ubyte.gz", 100))
np.save("'"$T"'/eval.npy", img("t10k-images-idx3-ubyte.gz", 300))
np.save("'"$T"'/lab.npy", np.frombuffer(gzip.open(d + "t10k-labels-idx1-ubyte.gz").read()[8:], np.uint8)[:300].astype(np.int64))'

REF="$PYTHON $TESTS/py/qreport_ref.py"
export REF

check "float and int8 --report --eval --json convert" sh -c '
tfk-lite convert --saved_model_dir mlp -o f.tflite &&
tfk-lite convert --saved_model_dir mlp -o q.tflite --quantize int8 --representative rep.tfrecord --report --eval eval.tfrecord >report.txt &&
tfk-lite convert --saved_model_dir mlp -o qj.tflite --quantize int8 --representative rep.tfrecord --report --eval eval.tfrecord --json >report.json &&
cmp q.tflite qj.tflite &&
$REF f.tflite q.tflite rep.npy eval.npy lab.npy >ref.json'

# ours.json ref.json FLOAT QUANT: the report against the oracle
cat >"$T/cmp.py" <<'EOF'
import json, os, sys
ours, ref = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
fsize, qsize = os.path.getsize(sys.argv[3]), os.path.getsize(sys.argv[4])
bad = []
a, b = ours["layer_stats"], ref["layer_stats"]
if [(x["tensor_idx"], x["tensor_name"], x["op_name"]) for x in a] != \
        [(x["tensor_idx"], x["tensor_name"], x["op_name"]) for x in b]:
    bad.append("tensors %s != %s" % ([x["tensor_name"] for x in a], [x["tensor_name"] for x in b]))
for x, y in zip(a, b):
    for k in ("num_elements", "zero_point"):
        if x[k] != y[k]:
            bad.append("%s %s %r != %r" % (x["tensor_name"], k, x[k], y[k]))
    if abs(x["scale"] - y["scale"]) > 1e-7 * y["scale"]:
        bad.append("%s scale" % x["tensor_name"])
    for k in ("stddev", "mean_error", "max_abs_error"):
        if abs(x[k] - y[k]) > 1e-3 * abs(y[k]) + 1e-4 * y["scale"]:
            bad.append("%s %s %r != %r" % (x["tensor_name"], k, x[k], y[k]))
    k = "mean_squared_error"
    if abs(x[k] - y[k]) > 2e-3 * abs(y[k]) + 1e-4 * y["scale"] ** 2:
        bad.append("%s %s %r != %r" % (x["tensor_name"], k, x[k], y[k]))
    if abs(x["rmse/scale"] - x[k] ** 0.5 / x["scale"]) > 1e-6:
        bad.append("%s rmse/scale" % x["tensor_name"])
e = ours["eval"]
want = {"float": (ref["float_correct"], fsize), "quantized": (ref["quant_correct"], qsize)}
for m, (c, size) in want.items():
    if (e[m]["correct"], e[m]["bytes"]) != (c, size) or abs(e[m]["accuracy"] - c / e["records"]) > 1e-12:
        bad.append("%s: %r, oracle %d correct, %d bytes" % (m, e[m], c, size))
if e["records"] != 300 or abs(e["size_ratio"] - qsize / fsize) > 1e-9:
    bad.append("records/size_ratio %r" % e)
print("\n".join(bad) if bad else "ok %d tensors" % len(a))
EOF

testcmd "--json: every int8 activation tensor with TF's debugger metrics and the accuracies of the numpy oracle" \
	'$PYTHON cmp.py report.json ref.json f.tflite q.tflite' "ok 5 tensors"
testcmd "--json: the header keys" \
	'$PYTHON -c "import json; d = json.load(open(\"report.json\")); print(d[\"model\"], d[\"quantize\"], d[\"representative\"], d[\"records\"], d[\"verify\"], d[\"eval\"][\"file\"], d[\"eval\"][\"label\"]); print(list(d[\"layer_stats\"][0]))"' \
	"qj.tflite int8 rep.tfrecord 100 whole_model eval.tfrecord label\n['op_name', 'tensor_idx', 'num_elements', 'stddev', 'mean_error', 'max_abs_error', 'mean_squared_error', 'scale', 'zero_point', 'rmse/scale', 'tensor_name']"
# the text rows name the oracle's tensors, in order; the accuracy lines
# carry the oracle's counts and the files' sizes
$PYTHON -c 'import json, os
r = json.load(open("'"$T"'/ref.json"))
for x in r["layer_stats"]:
    print(x["tensor_idx"], x["op_name"], x["num_elements"], x["zero_point"], x["tensor_name"])
f, q = os.path.getsize("'"$T"'/f.tflite"), os.path.getsize("'"$T"'/q.tflite")
print("accuracy on eval.tfrecord (300 records, label '"'label'"'):")
print("  float   %.4f (%d/300)  %d bytes" % (r["float_correct"] / 300, r["float_correct"], f))
print("  int8    %.4f (%d/300)  %d bytes (%.3fx the float size)" % (r["quant_correct"] / 300, r["quant_correct"], q, q / f))' >"$T/want.txt"
testcmd "text: one row per quantized tensor (index, op, elements, zero point, name), then float vs int8 accuracy and size" \
	'sed -n "3,/^summary/p" report.txt | grep -v ^summary | awk "{ print \$1, \$2, \$3, \$9, \$NF }"; sed -n "/^accuracy/,\$p" report.txt' \
	"$(cat "$T/want.txt")"
testcmd "text: title, header and summary name the largest rmse/scale" '
	sed -n 1,2p report.txt | sed "s/  */ /g"
	$PYTHON -c "import json; r = json.load(open(\"report.json\"))[\"layer_stats\"]; w = max(r, key=lambda x: x[\"rmse/scale\"]); print(\"summary: %d quantized tensors; largest rmse/scale %.4f at tensor %d '"'"'%s'"'"'\" % (len(r), w[\"rmse/scale\"], w[\"tensor_idx\"], w[\"tensor_name\"]))" >want
	grep ^summary report.txt | cmp - want && echo same' \
	"per-tensor error of q.tflite (int8) against the float model, 100 records of rep.tfrecord (mean over records)\ntensor op_name num_elements stddev mean_error max_abs_error mean_squared_error scale zero_point rmse/scale tensor_name\nsame"
testcmd "--layerwise: each float op alone on the dequantized int8 inputs, as the oracle's (TF's NumericVerify)" '
	tfk-lite convert --saved_model_dir mlp -o ql.tflite --quantize int8 --representative rep.tfrecord --report --layerwise --eval eval.tfrecord --json >lw.json &&
	$REF --layerwise f.tflite ql.tflite rep.npy eval.npy lab.npy >lw-ref.json &&
	$PYTHON cmp.py lw.json lw-ref.json f.tflite ql.tflite &&
	$PYTHON -c "import json; d = json.load(open(\"lw.json\")); print(d[\"verify\"], [x[\"max_abs_error\"] for x in d[\"layer_stats\"] if x[\"op_name\"] == \"RESHAPE\"])"' \
	"ok 5 tensors\nlayer [0.0]"
testcmd "--layerwise text: the title says what was compared" \
	'tfk-lite convert --saved_model_dir mlp -o ql.tflite --quantize int8 --representative rep.tfrecord --report --layerwise | head -1' \
	"per-tensor error of ql.tflite (int8) against each float op fed the dequantized inputs, 100 records of rep.tfrecord (mean over records)"
testcmd "--calibration_records 40: the report runs on the same 40 records" \
	'tfk-lite convert --saved_model_dir mlp -o q40.tflite --quantize int8 --representative rep.tfrecord --calibration_records 40 --report | head -1' \
	"per-tensor error of q40.tflite (int8) against the float model, 40 records of rep.tfrecord (mean over records)"
testcmd "--inference-type int8: the int8 input is listed with no writing op" \
	'tfk-lite convert --saved_model_dir mlp -o qi.tflite --quantize int8 --representative rep.tfrecord --inference-type int8 --report | sed -n 3p | awk "{ print \$1, \$2, \$NF }"' \
	"0 - input_1:0"

for q in dynamic float16; do
	testcmd "$q --eval: float vs $q accuracy equal the oracle's, sizes of the files" "
tfk-lite convert --saved_model_dir mlp -o $q.tflite --quantize $q --eval eval.tfrecord --label label --json >$q.json &&
\$REF f.tflite $q.tflite rep.npy eval.npy lab.npy >$q-ref.json &&
\$PYTHON -c 'import json, os
o, r = json.load(open(\"$q.json\")), json.load(open(\"$q-ref.json\"))
e = o[\"eval\"]
print(\"layer_stats\" in o, r[\"layer_stats\"], e[\"float\"][\"correct\"] == r[\"float_correct\"], e[\"quantized\"][\"correct\"] == r[\"quant_correct\"],
      e[\"float\"][\"bytes\"] == os.path.getsize(\"f.tflite\"), e[\"quantized\"][\"bytes\"] == os.path.getsize(\"$q.tflite\"))'" \
		"False [] True True True True"
done

testcmd "--eval on batched records (tfk-batch): the same rows, the same counts" '
	tfk-batch 32 eval.tfrecord >eval-b.tfrecord &&
	tfk-lite convert --saved_model_dir mlp -o d1.tflite --quantize dynamic --eval eval-b.tfrecord --json >b.json &&
	$PYTHON -c "import json; a, b = json.load(open(\"b.json\"))[\"eval\"], json.load(open(\"dynamic.json\"))[\"eval\"]; print(a[\"records\"], a[\"float\"] == b[\"float\"], a[\"quantized\"] == b[\"quantized\"])"' \
	"300 True True"

# --- refusals --------------------------------------------------------------
tfk-json >"$T/nolab.tfrecord" <<'EOF'
{"image": ["AAAA"], "name": ["x"]}
EOF
head -c 3000 "$T/eval.tfrecord" >"$T/trunc.tfrecord"
testerr "--report without --representative (int8)" \
	'tfk-lite convert --saved_model_dir mlp -o x.tflite --quantize int8 --report' \
	2 "--quantize int8 needs --representative FILE"
testerr "--report with dynamic: no quantized activations" \
	'tfk-lite convert --saved_model_dir mlp -o x.tflite --quantize dynamic --report' \
	2 "--report: per-tensor statistics need --quantize int8"
testerr "--eval without --quantize" \
	'tfk-lite convert --saved_model_dir mlp -o x.tflite --eval eval.tfrecord' \
	2 "--eval compares the float and the quantized model: it needs --quantize"
testerr "--label without --eval" \
	'tfk-lite convert --saved_model_dir mlp -o x.tflite --quantize dynamic --label y' \
	2 "--label is for --eval"
testerr "--eval with -o -: the report has standard output" \
	'tfk-lite convert --saved_model_dir mlp -o - --quantize dynamic --eval eval.tfrecord' \
	2 "--report and --eval print to standard output: write the model to a file, not -o -"
testerr "--layerwise without --report" \
	'tfk-lite convert --saved_model_dir mlp -o x.tflite --quantize int8 --representative rep.tfrecord --layerwise' \
	2 "--layerwise is for --report"
testerr "--json alone" \
	'tfk-lite convert --saved_model_dir mlp -o x.tflite --quantize dynamic --json' \
	2 "--json is for --report and --eval"
testerr "--eval file missing: exit 1 naming it, no model written" \
	'tfk-lite convert --saved_model_dir mlp -o x.tflite --quantize dynamic --eval nosuch.tfrecord; rc=$?; test ! -e x.tflite && exit $rc' \
	1 "nosuch.tfrecord: cannot open"
testerr "--eval file truncated: the record and byte offset" \
	'tfk-lite convert --saved_model_dir mlp -o x.tflite --quantize int8 --representative rep.tfrecord --eval trunc.tfrecord; rc=$?; test ! -e x.tflite && exit $rc' \
	1 "trunc.tfrecord: record 3 at byte 2514: truncated"
testerr "--eval record without the label feature" \
	'tfk-lite convert --saved_model_dir mlp -o x.tflite --quantize dynamic --eval eval.tfrecord --label class' \
	1 "eval.tfrecord: record 0: no feature 'class' (the label)"
testerr "--label naming a bytes feature" \
	'tfk-lite convert --saved_model_dir mlp -o x.tflite --quantize dynamic --eval eval.tfrecord --label image' \
	1 "eval.tfrecord: record 0: feature image: bytes values, expected int64 class ids"
testerr "--eval record the model cannot be fed from (4 image bytes)" \
	'tfk-lite convert --saved_model_dir mlp -o x.tflite --quantize dynamic --eval nolab.tfrecord' \
	1 "nolab.tfrecord: record 0"
testerr "--report on a SavedModel without a training spec" \
	'tfk-lite convert --saved_model_dir "$FIX/savedmodel/half_plus_two_tf2_cpu/00000123" -o x.tflite --quantize float16 --eval eval.tfrecord' \
	1 "--eval needs the training spec tfk-train saves"

done_testing
