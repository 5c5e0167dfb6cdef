#!/bin/sh
# tfk-eval: the loss and metrics tfk-train reported for its validation
# data come back from the training directory, from any checkpoint
# prefix and from stdin; a bare spec gives the untrained baseline
# (loss near ln 10); errors name their place.
. "$(dirname "$0")/lib.sh"

F=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $F/train-images-idx3-ubyte.gz \
	--labels $F/train-labels-idx1-ubyte.gz | tfk-cat --take 512 >"$T/tr.tfrecord"
tfk-idx -q --images $F/t10k-images-idx3-ubyte.gz \
	--labels $F/t10k-labels-idx1-ubyte.gz | tfk-cat --take 300 >"$T/te.tfrecord"
cp "$(dirname "$0")/../../examples/mlp.spec.json" "$T/spec.json"
(cd "$T" && tfk-train spec.json tr.tfrecord --val te.tfrecord --out run -q --json \
	--set fit.epochs=2 >h.json)
# the validation values of epoch E as tfk-eval --json prints them
want() {
	echo "$PYTHON -c \"import json; h = json.load(open('h.json'))['history']; print(json.dumps({'loss': h['val_loss'][$1], 'accuracy': h['val_accuracy'][$1], 'examples': 300}, separators=(',', ':')))\""
}

testcmd "DIR: the last epoch's val_loss and val_accuracy, exactly" \
	"tfk-eval --json run te.tfrecord >got && $(want 1) | cmp - got && echo same" \
	"same"
testcmd "DIR/ckpt-1: epoch 1's" \
	"tfk-eval --json run/ckpt-1 te.tfrecord >got && $(want 0) | cmp - got && echo same" \
	"same"
testcmd "records on stdin" \
	"tfk-eval --json run <te.tfrecord >got && $(want 1) | cmp - got && echo same" \
	"same"
testcmd "--batch-size does not change the result beyond rounding" \
	'tfk-eval --json run te.tfrecord -b 7 | $PYTHON -c "
import json,sys; g = json.load(sys.stdin); h = json.load(open(\"h.json\"))[\"history\"]
print(abs(g[\"loss\"] - h[\"val_loss\"][1]) < 1e-5, g[\"accuracy\"] == h[\"val_accuracy\"][1])"' \
	"True True"
testcmd "plain output: Keras' line" \
	'tfk-eval run te.tfrecord | sed -E "s/[0-9]\.[0-9]{4}/X/g"' \
	"loss: X - accuracy: X"
testcmd "a bare spec: the untrained model, loss near ln 10" \
	'tfk-eval --json spec.json te.tfrecord | $PYTHON -c "
import json,math,sys; g = json.load(sys.stdin); print(abs(g[\"loss\"] - math.log(10)) < 0.5, g[\"accuracy\"] < 0.4)"' \
	"True True"
testcmd "--seed changes the bare spec's weights" \
	'a=$(tfk-eval --json spec.json te.tfrecord); b=$(tfk-eval --json spec.json te.tfrecord --seed 3); test "$a" != "$b" && echo differ' \
	"differ"
testcmd "an export copied without its checkpoints: the same figures from assets.extra" \
	'mkdir -p sm && cp -r run/saved_model.pb run/variables run/assets.extra sm/ &&
	 test "$(tfk-eval --json sm te.tfrecord)" = "$(tfk-eval --json run te.tfrecord)" && echo same' \
	"same"

# Errors --------------------------------------------------------------------
testerr "a directory without a checkpoint" \
	'mkdir -p none; tfk-eval none te.tfrecord' 1 \
	"tfk-eval: none: no checkpoint"
testerr "no records" \
	': >e.tfrecord; tfk-eval run e.tfrecord' 1 \
	"tfk-eval: e.tfrecord: no records"
testerr "a label outside the class range" \
	'tfk-cat --json te.tfrecord | awk "NR == 3 { sub(/\"label\":\[[0-9]+\]/, \"\\\"label\\\":[10]\") } { print }" | tfk-json >bad.tfrecord;
	 tfk-eval run bad.tfrecord' 1 \
	"tfk-eval: bad.tfrecord: record 2: feature label: class 10 outside [0, 10)"
testerr "a checkpoint whose bundle is gone" \
	'cp -r run run2 && rm run2/ckpt-2.index && tfk-eval run2 te.tfrecord' 1 \
	"tfk-eval: run2/ckpt-2.index: "
testerr "a missing spec" \
	'tfk-eval nosuch.json te.tfrecord' 1 \
	"tfk-eval: nosuch.json: "
testerr "no arguments: usage error" \
	'tfk-eval' 2 \
	"no SPEC or DIR given"

done_testing
