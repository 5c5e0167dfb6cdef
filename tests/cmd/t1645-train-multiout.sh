#!/bin/sh
# tfk-train and tfk-eval on a Functional model with two inputs and two
# outputs (a softmax head "a" with sparse crossentropy, a linear head
# "b" with mse, loss_weights {"a": 1.0, "b": 0.2}): Keras 3's history
# keys ("loss", "a_loss", "b_loss", "a_accuracy", "b_mae" and their
# "val_" forms, as its fit() returns them), the logged total equal to
# the weighted sum of the logged parts, the list forms of loss,
# loss_weights and metrics equal to the dict forms, per-output labels
# with their errors (JSON path or record, exit 1), EarlyStopping on
# "val_b_loss", CSVLogger columns and TensorBoard tags by those keys,
# --resume, both outputs exported and predicted, and 2 ranks under
# mpirun tracking 1. The numbers against
# Keras itself are tests/tf/t-keras.py's (kzoo "two-input-two-output").
. "$(dirname "$0")/lib.sh"

cat >"$T/spec.json" <<'J'
{"model": {"class_name": "Functional", "config": {"name": "two", "layers": [
  {"class_name": "InputLayer", "name": "xa", "config": {"batch_input_shape": [null, 4], "name": "xa"}, "inbound_nodes": []},
  {"class_name": "InputLayer", "name": "xb", "config": {"batch_input_shape": [null, 3], "name": "xb"}, "inbound_nodes": []},
  {"class_name": "Dense", "name": "h", "config": {"name": "h", "units": 6, "activation": "relu"}, "inbound_nodes": [[["xa", 0, 0, {}]]]},
  {"class_name": "Concatenate", "name": "cat", "config": {"name": "cat"}, "inbound_nodes": [[["h", 0, 0, {}], ["xb", 0, 0, {}]]]},
  {"class_name": "Dense", "name": "a", "config": {"name": "a", "units": 3, "activation": "softmax"}, "inbound_nodes": [[["cat", 0, 0, {}]]]},
  {"class_name": "Dense", "name": "b", "config": {"name": "b", "units": 2}, "inbound_nodes": [[["cat", 0, 0, {}]]]}],
  "input_layers": [["xa", 0, 0], ["xb", 0, 0]], "output_layers": [["a", 0, 0], ["b", 0, 0]]}},
 "compile": {"optimizer": {"class_name": "SGD", "config": {"learning_rate": 0.1}},
   "loss": {"a": "sparse_categorical_crossentropy", "b": "mse"},
   "loss_weights": {"a": 1.0, "b": 0.2},
   "metrics": {"a": ["accuracy"], "b": ["mae"]}},
 "fit": {"epochs": 2, "batch_size": 16, "shuffle": false}}
J
# 64 records: xa [4], xb [3] in [-1, 1), a class id in {0, 1, 2}, b [2]
# (an LCG small enough for awk's doubles to be exact)
awk 'function r() { s = (s * 69069 + 1) % 4294967296; return s / 4294967296 }
BEGIN { s = 7; for (i = 0; i < 64; i++) {
	l = "{\"xa\":["; for (j = 0; j < 4; j++) l = l (j ? "," : "") sprintf("%.6f", 2 * r() - 1)
	l = l "],\"xb\":["; for (j = 0; j < 3; j++) l = l (j ? "," : "") sprintf("%.6f", 2 * r() - 1)
	l = l "],\"a\":[" int(3 * r()) "],\"b\":["
	for (j = 0; j < 2; j++) l = l (j ? "," : "") sprintf("%.6f", 2 * r() - 1)
	print l "]}" } }' >"$T/d.jsonl"
tfk-json "$T/d.jsonl" >"$T/tr.tfrecord"
tfk-cat --take 16 "$T/tr.tfrecord" >"$T/va.tfrecord"
# the same records with the labels under other names, and broken ones
sed 's/"a":/"ya":/; s/"b":/"yb":/' "$T/d.jsonl" | tfk-json >"$T/renamed.tfrecord"
awk 'NR == 4 { sub(/"b":\[[^]]*\]/, "\"b\":[0.5,0.5,0.5]") } { print }' \
	"$T/d.jsonl" | tfk-json >"$T/bad-b.tfrecord"
awk 'NR == 3 { sub(/"a":\[[0-9]\]/, "\"a\":[3]") } { print }' \
	"$T/d.jsonl" | tfk-json >"$T/bad-a.tfrecord"
cat >"$T/hist.py" <<'P'
# hist.py FILE: the history's keys in order, then whether loss = a_loss
# + 0.2 b_loss (and the val_ forms) within 1e-6 in every epoch
import json, sys
h = json.load(open(sys.argv[1]))["history"]
print(" ".join(h))
ok = all(abs(h[p + "loss"][e] - h[p + "a_loss"][e] - 0.2 * h[p + "b_loss"][e])
         < 1e-6 for p in ("", "val_") if p + "loss" in h
         for e in range(len(h["loss"])))
print("weighted sum" if ok else "NOT the weighted sum: %s" % h)
P
cat >"$T/same.py" <<'P'
# same.py A B: the two histories have the same keys and values
import json, sys
a, b = (json.load(open(f))["history"] for f in sys.argv[1:3])
print("same" if a == b else "differ:\n%s\n%s" % (a, b))
P
KEYS="loss a_loss b_loss a_accuracy b_mae val_loss val_a_loss val_b_loss val_a_accuracy val_b_mae"
TRAIN="tfk-train spec.json tr.tfrecord -q -j1 --json"
export TRAIN

# History --------------------------------------------------------------------
testcmd "history keys as Keras 3's fit; loss = a_loss + 0.2 b_loss (train and val)" \
	'$TRAIN --val va.tfrecord --out o >h.json && $PYTHON hist.py h.json' \
	"$KEYS\nweighted sum"
testcmd "loss_weights change the total, not the parts: b weight 0 makes loss = a_loss" \
	'$TRAIN --out w0 --set fit.epochs=1 --set "compile.loss_weights={\"a\":1.0,\"b\":0.0}" |
	 $PYTHON -c "import json,sys; h = json.load(sys.stdin)[\"history\"]; print(h[\"loss\"] == h[\"a_loss\"], h[\"b_loss\"][0] > 0)"' \
	"True True"
testcmd "no loss_weights: 1 each, loss = a_loss + b_loss" \
	'$TRAIN --out w1 --set fit.epochs=1 --set compile.loss_weights=null |
	 $PYTHON -c "import json,sys; h = json.load(sys.stdin)[\"history\"]; print(abs(h[\"loss\"][0] - h[\"a_loss\"][0] - h[\"b_loss\"][0]) < 1e-6)"' \
	"True"
testcmd "lists in output order give the dict forms' history" \
	'$TRAIN --val va.tfrecord --out l --set "compile.loss=[\"sparse_categorical_crossentropy\",\"mse\"]" \
	   --set "compile.loss_weights=[1.0,0.2]" --set "compile.metrics=[[\"accuracy\"],[\"mae\"]]" >hl.json &&
	 $PYTHON same.py h.json hl.json' \
	"same"
testcmd "a list of one metric per output is Keras 3's per-output form too" \
	'$TRAIN --val va.tfrecord --out l2 --set "compile.metrics=[\"accuracy\",\"mae\"]" >hl2.json &&
	 $PYTHON same.py h.json hl2.json' \
	"same"
testcmd "metrics for one output only: the other logs its loss alone" \
	'$TRAIN --out m1 --set fit.epochs=1 --set "compile.metrics={\"b\":[\"mae\",\"mse\"]}" >m1.json &&
	 $PYTHON hist.py m1.json' \
	"loss a_loss b_loss b_mae b_mse\nweighted sum"
testcmd "per-output labels from other features (int32 class ids): the same history" \
	'tfk-train spec.json renamed.tfrecord -q -j1 --json --out r2 --set "labels={\"a\":{\"feature\":\"ya\",\"dtype\":\"int32\"},\"b\":{\"feature\":\"yb\"}}" >hr2.json &&
	 tfk-train spec.json tr.tfrecord -q -j1 --json --out r3 >hr3.json && $PYTHON same.py hr2.json hr3.json' \
	"same"
testcmd "tfk-eval: Keras' evaluate(return_dict=True) keys, total = weighted parts" \
	'tfk-eval --json -q o va.tfrecord | $PYTHON -c "
import json,sys; e = json.load(sys.stdin); print(\" \".join(e))
print(abs(e[\"loss\"] - e[\"a_loss\"] - 0.2 * e[\"b_loss\"]) < 1e-6)"' \
	"loss a_loss b_loss a_accuracy b_mae examples\nTrue"
testcmd "tfk-eval of the trained model = the last epoch's validation" \
	'tfk-eval --json -q o va.tfrecord | $PYTHON -c "
import json,sys; e = json.load(sys.stdin); h = json.load(open(\"h.json\"))[\"history\"]
print(all(abs(e[k] - h[\"val_\" + k][-1]) < 1e-6 for k in (\"loss\", \"a_loss\", \"b_loss\", \"a_accuracy\", \"b_mae\")))"' \
	"True"

F=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $F/train-images-idx3-ubyte.gz \
	--labels $F/train-labels-idx1-ubyte.gz | tfk-cat --take 64 >"$T/fm.tfrecord"
MLP="tfk-train $(cd "$(dirname "$0")/../.." && pwd)/examples/mlp.spec.json fm.tfrecord -q -j1 --json --set fit.epochs=1"
export MLP
testcmd "one output: the per-output form of labels is the one-output form's" \
	'$MLP --out p1 --set "labels={\"dense_1\":{\"feature\":\"label\",\"dtype\":\"int32\"}}" >p1.json &&
	 $MLP --out p2 >p2.json && $PYTHON same.py p1.json p2.json' \
	"same"
testcmd "one output: loss and metrics keyed by its name, Keras 3's unprefixed keys; a loss weight 0.5 halves one batch's loss" \
	'$MLP --out p3 --set fit.batch_size=64 --set "compile.loss={\"dense_1\":\"sparse_categorical_crossentropy\"}" \
	   --set "compile.metrics={\"dense_1\":[\"accuracy\"]}" --set compile.loss_weights=0.5 >p3.json &&
	 $MLP --out p4 --set fit.batch_size=64 >p4.json && $PYTHON -c "
import json; a, b = (json.load(open(f))[\"history\"] for f in (\"p3.json\", \"p4.json\"))
print(list(a), a[\"loss\"][0] == b[\"loss\"][0] / 2, a[\"accuracy\"] == b[\"accuracy\"])"' \
	"['loss', 'accuracy'] True True"

# Callbacks, resume, export --------------------------------------------------------
testcmd "EarlyStopping on val_b_loss (min_delta 10): stops after epoch 2 of 10" \
	'$TRAIN --val va.tfrecord --out es --set fit.epochs=10 \
	   --set "fit.callbacks=[{\"class_name\":\"EarlyStopping\",\"config\":{\"monitor\":\"val_b_loss\",\"min_delta\":10}}]" |
	 $PYTHON -c "import json,sys; print(json.load(sys.stdin)[\"epoch\"])"' \
	"[0, 1]"
testcmd "EarlyStopping on val_a_accuracy, mode max, min_delta 2: stops after epoch 2" \
	'$TRAIN --val va.tfrecord --out es2 --set fit.epochs=10 \
	   --set "fit.callbacks=[{\"class_name\":\"EarlyStopping\",\"config\":{\"monitor\":\"val_a_accuracy\",\"mode\":\"max\",\"min_delta\":2}}]" |
	 $PYTHON -c "import json,sys; print(json.load(sys.stdin)[\"epoch\"])"' \
	"[0, 1]"
testcmd "CSVLogger: Keras' sorted columns" \
	'$TRAIN --val va.tfrecord --out csv --set "fit.callbacks=[{\"class_name\":\"CSVLogger\",\"config\":{\"filename\":\"log.csv\"}}]" >/dev/null &&
	 head -1 log.csv | tr -d "\r" && wc -l <log.csv | tr -d " "' \
	"epoch,a_accuracy,a_loss,b_loss,b_mae,loss,val_a_accuracy,val_a_loss,val_b_loss,val_b_mae,val_loss\n3"
testcmd "TensorBoard scalars: Keras' epoch_<key> tags in train/ and validation/" \
	'$TRAIN --val va.tfrecord --out tb --logdir tb >/dev/null &&
	 tfk-events tb | awk "NR > 1 && \$3 == 0 { printf \"%s/%s \", \$1, \$2 }"' \
	"train/epoch_loss train/epoch_a_loss train/epoch_b_loss train/epoch_a_accuracy train/epoch_b_mae validation/epoch_loss validation/epoch_a_loss validation/epoch_b_loss validation/epoch_a_accuracy validation/epoch_b_mae "
testcmd "epochs=1 then --resume epochs=2 equals one epochs=2 run, byte for byte" \
	'$TRAIN --out part --set fit.epochs=1 >/dev/null &&
	 $TRAIN --out part --resume >/dev/null && $TRAIN --out whole >/dev/null &&
	 cmp whole/ckpt-2.data-00000-of-00001 part/ckpt-2.data-00000-of-00001 && echo identical' \
	"identical"
testcmd "the SavedModel's serving signature: inputs xa, xb; outputs a, b" \
	'tfk-model show --dir o --tag_set serve --signature_def serving_default | grep -o "\(inputs\|outputs\)\[[^]]*\]" | tr "\n" " "' \
	"inputs['xa'] inputs['xb'] outputs['a'] outputs['b'] "
testcmd "tfk-predict writes both outputs" \
	'tfk-predict --dir o --json va.tfrecord | head -1 | $PYTHON -c "
import json,sys; p = json.load(sys.stdin); print(sorted(p), len(p[\"a\"]), len(p[\"b\"]), abs(sum(p[\"a\"]) - 1) < 1e-5)"' \
	"['a', 'b'] 3 2 True"

# Errors -----------------------------------------------------------------------------
testerr "labels in the one-output form" \
	'$TRAIN --out e --set "labels={\"feature\":\"a\"}"' 1 \
	'tfk-train: spec.json: labels.feature: the model has 2 outputs (a, b): give one entry per output, {"a": {"feature": ...}, ...}'
testerr "labels for an output the model lacks" \
	'$TRAIN --out e --set "labels={\"a\":{},\"c\":{\"feature\":\"b\"}}"' 1 \
	"tfk-train: spec.json: labels.c: the model has no output 'c' (outputs: a, b)"
testerr "a dense dtype for the sparse head" \
	'$TRAIN --out e --set "labels={\"a\":{\"dtype\":\"float32\"}}"' 1 \
	"tfk-train: spec.json: labels.a.dtype: expected int64 or int32 for sparse_categorical_crossentropy"
testerr "an unknown key in an output's labels" \
	'$TRAIN --out e --set "labels={\"b\":{\"feature\":\"b\",\"shape\":[2]}}"' 1 \
	"tfk-train: spec.json: labels.b: unknown key 'shape'"
testerr "a record without an output's label feature" \
	'$TRAIN --out e --set "labels={\"b\":{\"feature\":\"yb\"}}"' 1 \
	"tfk-train: tr.tfrecord: record 0: no feature 'yb' (the label of b)"
testerr "a record whose b label has 3 values" \
	'tfk-train spec.json bad-b.tfrecord -q --out e' 1 \
	"tfk-train: bad-b.tfrecord: record 3: feature b: 3 values, the output b needs 2"
testerr "a class id outside a's classes" \
	'tfk-train spec.json bad-a.tfrecord -q --out e' 1 \
	"tfk-train: bad-a.tfrecord: record 2: feature a: class 3 outside [0, 3)"
testerr "a loss dict without b" \
	'$TRAIN --out e --set "compile.loss={\"a\":\"sparse_categorical_crossentropy\"}"' 1 \
	"tfk-train: spec.json: compile.loss: expected keys a, b (the outputs), 'b' is missing"
testerr "a loss dict with an unknown output" \
	'$TRAIN --out e --set "compile.loss={\"a\":\"mse\",\"b\":\"mse\",\"c\":\"mse\"}"' 1 \
	"tfk-train: spec.json: compile.loss: expected keys a, b (the outputs), got 'c'"
testerr "a list of three losses" \
	'$TRAIN --out e --set "compile.loss=[\"mse\",\"mse\",\"mse\"]"' 1 \
	"tfk-train: spec.json: compile.loss: 3 losses, the model has 2 outputs"
testerr "an unknown loss for b" \
	'$TRAIN --out e --set "compile.loss={\"a\":\"sparse_categorical_crossentropy\",\"b\":\"msq\"}"' 1 \
	"tfk-train: spec.json: compile.loss.b: unknown loss 'msq'"
testerr "an output without a loss" \
	'$TRAIN --out e --set "compile.loss=[\"sparse_categorical_crossentropy\",null]"' 1 \
	"tfk-train: spec.json: compile.loss[1]: an output without a loss is not supported"
testerr "a loss weight that is not a number" \
	'$TRAIN --out e --set "compile.loss_weights={\"a\":1,\"b\":\"x\"}"' 1 \
	"tfk-train: spec.json: compile.loss_weights.b: expected a finite number"
testerr "one loss weight for two outputs" \
	'$TRAIN --out e --set compile.loss_weights=0.5' 1 \
	"tfk-train: spec.json: compile.loss_weights: expected a list of 2 numbers or an object keyed by output name"
testerr "a flat metrics list of another length (Keras 3 refuses it)" \
	'$TRAIN --out e --set "compile.metrics=[\"accuracy\"]"' 1 \
	"tfk-train: spec.json: compile.metrics: a list of 1, the model has 2 outputs (a, b): give one item per output (a metric, a list of them or null) or an object keyed by output name"
testerr "metrics for an output the model lacks" \
	'$TRAIN --out e --set "compile.metrics={\"c\":[\"mae\"]}"' 1 \
	"tfk-train: spec.json: compile.metrics.c: the model has no output 'c' (outputs: a, b)"
testerr "an unknown metric names its place" \
	'$TRAIN --out e --set "compile.metrics={\"a\":[\"accuracy\",\"acuracy\"]}"' 1 \
	"tfk-train: spec.json: compile.metrics.a[1]: "
testerr "class_weight with two outputs (Keras refuses it)" \
	'$TRAIN --out e --set "fit.class_weight={\"0\":1,\"1\":2,\"2\":1}"' 1 \
	"tfk-train: spec.json: fit.class_weight: only supported for models with a single output (as Keras)"
testerr "a monitor this run does not log names the keys it does" \
	'$TRAIN --val va.tfrecord --out e --set "fit.callbacks=[{\"class_name\":\"EarlyStopping\",\"config\":{\"monitor\":\"val_c_loss\"}}]"' 1 \
	"tfk-train: spec.json: fit.callbacks[0].config.monitor: 'val_c_loss' is not logged by this run (logs: loss, a_loss, b_loss, a_accuracy, b_mae, val_loss, val_a_loss, val_b_loss, val_a_accuracy, val_b_mae)"
testerr "tfk-eval: the same label errors" \
	'tfk-eval -q o bad-b.tfrecord' 1 \
	"tfk-eval: bad-b.tfrecord: record 3: feature b: 3 values, the output b needs 2"

# Data-parallel ------------------------------------------------------------------------
if command -v mpirun >/dev/null 2>&1; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	export LSAN_OPTIONS="suppressions=$TESTS/lsan-openmpi.supp:fast_unwind_on_malloc=0:print_suppressions=0"
	MPI="timeout 120 mpirun --oversubscribe --mca orte_tmpdir_base $T/ompi -np"
	export MPI
	testcmd "2 ranks x 8 against 1 rank x 16: the same keys, every value within 1e-6" \
		'$MPI 2 $TRAIN --val va.tfrecord --out two >h2.json && $PYTHON -c "
import json; a, b = json.load(open(\"h.json\"))[\"history\"], json.load(open(\"h2.json\"))[\"history\"]
print(list(a) == list(b), all(abs(x - y) < 1e-6 for k in a for x, y in zip(a[k], b[k])))"' \
		"True True"
else
	_result fail "2 ranks under mpirun: no mpirun (the MPI tests need Debian's openmpi-bin)"
fi

done_testing
