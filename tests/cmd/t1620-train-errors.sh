#!/bin/sh
# tfk-train's bad inputs: each a clear message naming the place, exit 1
# (2 for usage), and the checkpoints of finished epochs left intact.
. "$(dirname "$0")/lib.sh"

F=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $F/train-images-idx3-ubyte.gz \
	--labels $F/train-labels-idx1-ubyte.gz | tfk-cat --take 96 >"$T/tr.tfrecord"
cp "$(dirname "$0")/../../examples/mlp.spec.json" "$T/spec.json"
# record 5 with label 12 (a JSON round trip of the records)
tfk-cat --json "$T/tr.tfrecord" |
	awk 'NR == 6 { sub(/"label":\[[0-9]+\]/, "\"label\":[12]") } { print }' |
	tfk-json >"$T/badlabel.tfrecord"
: >"$T/empty.tfrecord"

# Records that do not fit ------------------------------------------------------
testerr "input shape differs from the records: record, feature, counts" \
	'tfk-train spec.json tr.tfrecord --out o --set "model.config.layers[0].config.batch_input_shape=[null,28,27]"' 1 \
	"tfk-train: tr.tfrecord: record 0: feature image: 784 values, input_1 needs 756 (28x27)"
testerr "a label outside the class range" \
	'tfk-train spec.json badlabel.tfrecord --out o' 1 \
	"tfk-train: badlabel.tfrecord: record 5: feature label: class 12 outside [0, 10)"
testerr "a label outside the class range in --val" \
	'tfk-train spec.json tr.tfrecord --val badlabel.tfrecord --out o' 1 \
	"tfk-train: badlabel.tfrecord: record 5: feature label: class 12 outside [0, 10)"
testerr "no training records" \
	'tfk-train spec.json empty.tfrecord --out o' 1 \
	"tfk-train: empty.tfrecord: no training records"
testerr "no training records on stdin" \
	'tfk-train spec.json --out o <empty.tfrecord' 1 \
	"tfk-train: <stdin>: no training records"
testerr "no validation records" \
	'tfk-train spec.json tr.tfrecord --val empty.tfrecord --out o' 1 \
	"tfk-train: empty.tfrecord: no validation records"
testerr "validation_split leaving nothing to train on" \
	'tfk-train spec.json tr.tfrecord --out o --set fit.validation_split=0.999' 1 \
	"tfk-train: 96 training records cannot be split by fit.validation_split 0.999"
testerr "a missing file" \
	'tfk-train spec.json nosuch.tfrecord --out o' 1 \
	"tfk-train: nosuch.tfrecord: "

# Non-finite loss ----------------------------------------------------------------
# Epoch 1 trains normally; from epoch 2 a learning rate of 1e30 makes the
# loss blow up.
NAN='fit.callbacks=[{"class_name":"LearningRateScheduler","config":{"boundaries":[1],"values":[0.001,1e30]}}]'
export NAN
testerr "non-finite loss: stops with the step number" \
	'tfk-train spec.json tr.tfrecord --out nan -j1 -q --set fit.epochs=3 --set "$NAN"' 1 \
	"): loss is "
testcmd "... at a step of epoch 2, naming --nan-policy; ckpt-1 kept and pointed at" \
	'tfk-train spec.json tr.tfrecord --out nan -j1 -q --set fit.epochs=3 --set "$NAN" 2>&1 |
	 sed -E "s/step [0-9]+ \(epoch 2, batch [0-9]\)/STEP/; s/loss is (nan|inf)/loss is X/"; ls nan | tr "\n" " "' \
	"tfk-train: STEP: loss is X; --nan-policy skip skips such steps\ncheckpoint ckpt-1.data-00000-of-00001 ckpt-1.index ckpt-1.json "
testcmd "--nan-policy skip: finishes, the skipped steps reported" \
	'tfk-train spec.json tr.tfrecord --out nan2 -j1 -q --set fit.epochs=2 --set "$NAN" --nan-policy skip; echo $?; ls nan2 | grep -c index' \
	"0\n2"
testerr "--nan-policy other: usage error" \
	'tfk-train spec.json tr.tfrecord --out o --nan-policy ignore' 2 \
	"--nan-policy: expected stop or skip, got 'ignore'"

# Output directory -------------------------------------------------------------
testerr "--out under a regular file" \
	'tfk-train spec.json tr.tfrecord --out empty.tfrecord/run' 1 \
	"tfk-train: empty.tfrecord/run: cannot create: Not a directory"
testerr "--out is a file" \
	'tfk-train spec.json tr.tfrecord --out empty.tfrecord' 1 \
	"tfk-train: empty.tfrecord: not a directory"
testerr "--out missing: usage error" \
	'tfk-train spec.json tr.tfrecord' 2 \
	"--out DIR is required"
testerr "no spec: usage error" \
	'tfk-train --out o' 2 \
	"no SPEC given"

# Spec and resume ----------------------------------------------------------------
testerr "a bad --set path" \
	'tfk-train spec.json tr.tfrecord --out o --set fit.epochs' 1 \
	"--set fit.epochs: expected PATH=VALUE"
testerr "a bad fit value" \
	'tfk-train spec.json tr.tfrecord --out o --set fit.epochs=0' 1 \
	"tfk-train: spec.json: fit.epochs: expected a positive integer"
testerr "--resume with a model that no longer matches the checkpoint" \
	'tfk-train spec.json tr.tfrecord --out rs -q --set fit.epochs=1 &&
	 tfk-train spec.json tr.tfrecord --out rs --resume --set fit.epochs=2 --set "model.config.layers[2].config.units=64"' 1 \
	"tfk-train: rs/ckpt-1.index: dense/kernel: float32 [784, 128] in the checkpoint, the model has float32 [784, 64]"
testerr "--resume with a different optimizer: its slots are missing" \
	'tfk-train spec.json tr.tfrecord --out rs --resume --set fit.epochs=2 --set compile.optimizer=rmsprop' 1 \
	"tfk-train: rs/ckpt-1.index: no tensor 'optimizer/dense/kernel/velocity'"
testerr "--resume with a corrupt state file" \
	'echo "{" >rs/ckpt-1.json; tfk-train spec.json tr.tfrecord --out rs --resume --set fit.epochs=2' 1 \
	"tfk-train: rs/ckpt-1.json: line 2: "
testerr "--resume with a pointer to nothing" \
	'echo "model_checkpoint_path: \"ckpt-9\"" >rs/checkpoint; tfk-train spec.json tr.tfrecord --out rs --resume --set fit.epochs=2' 1 \
	"tfk-train: rs/ckpt-9.json: No such file or directory"

done_testing
