#!/bin/sh
# tfk-train end to end on a Fashion-MNIST slice (the first 2000 training
# and 500 test images via tfk-idx): accuracy beyond what a broken
# trainer reaches, the checkpoint layout (TF's checkpoint pointer, a
# tensor bundle decoded by the independent tests/py/bundle_check.py,
# the last five kept), PyTorch replaying an epoch from a checkpoint
# (tests/py/torch_train_check.py: SGD with momentum and Adam, Keras'
# update formulas; max relative error ~3e-7 on loss, weights and slots,
# bound 2e-4), --resume reaching bit-identical checkpoints at
# --threads 1 (with Dropout, so the step-keyed RNG is exercised),
# validation_split, class weights, streaming from stdin with
# steps_per_epoch, and the progress output.
. "$(dirname "$0")/lib.sh"

F=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $F/train-images-idx3-ubyte.gz \
	--labels $F/train-labels-idx1-ubyte.gz | tfk-cat --take 2000 >"$T/tr.tfrecord"
tfk-idx -q --images $F/t10k-images-idx3-ubyte.gz \
	--labels $F/t10k-labels-idx1-ubyte.gz | tfk-cat --take 500 >"$T/te.tfrecord"
tfk-cat --take 64 "$T/tr.tfrecord" >"$T/r64.tfrecord"
SPEC=$(cd "$(dirname "$0")/../.." && pwd)/examples/mlp.spec.json
BC="$PYTHON $TESTS/py/bundle_check.py"
export SPEC BC

# A small MLP with Dropout (the oracle and resume runs).
cat >"$T/drop.json" <<'J'
{"model": {"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28], "name": "input_1"}},
  {"class_name": "Flatten", "config": {"name": "flatten"}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 32, "activation": "relu"}},
  {"class_name": "Dropout", "config": {"name": "dropout", "rate": 0.3}},
  {"class_name": "Dense", "config": {"name": "dense_1", "units": 10, "activation": "softmax"}}]}},
 "inputs": {"input_1": {"feature": "image", "scale": 0.00392156862745098}},
 "compile": {"optimizer": "adam", "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
 "fit": {"epochs": 2, "batch_size": 32}}
J

# Learning ------------------------------------------------------------------
testcmd "MLP, 3 epochs on 2000 images: val accuracy > 0.70, history keys" \
	'tfk-train "$SPEC" tr.tfrecord --val te.tfrecord --out run --set fit.epochs=3 -q --json >h.json &&
	 $PYTHON -c "
import json; h = json.load(open(\"h.json\"))
print(h[\"epoch\"], sorted(h[\"history\"]), len(h[\"history\"][\"loss\"]), h[\"steps\"], h[\"checkpoint\"])
print(h[\"history\"][\"val_accuracy\"][-1] > 0.70, h[\"history\"][\"loss\"][2] < h[\"history\"][\"loss\"][0])"' \
	"[0, 1, 2] ['accuracy', 'loss', 'val_accuracy', 'val_loss'] 3 189 run/ckpt-3\nTrue True"
testcmd "the same run on 2 threads: same accuracy bound" \
	'tfk-train "$SPEC" tr.tfrecord --val te.tfrecord --out run2 --set fit.epochs=3 -q --json -j 2 >h2.json &&
	 $PYTHON -c "
import json; h = json.load(open(\"h2.json\")); print(h[\"history\"][\"val_accuracy\"][-1] > 0.70)"' \
	"True"

# Checkpoints ----------------------------------------------------------------
testcmd "checkpoint pointer in TF's CheckpointState text form" \
	'cat run/checkpoint' \
	'model_checkpoint_path: "ckpt-3"\nall_model_checkpoint_paths: "ckpt-1"\nall_model_checkpoint_paths: "ckpt-2"\nall_model_checkpoint_paths: "ckpt-3"'
testcmd "ckpt-3: weights by Keras name and Adam slots, decoded by bundle_check" \
	'$BC dump run/ckpt-3 | awk "NR > 2 { print \$1, \$2, \$3 }" | while read k d s; do
		printf "%s %s %s\n" "$($PYTHON -c "import sys; print(bytes.fromhex(sys.argv[1]).decode())" $k)" $d $s; done' \
	"dense/bias dtype=1 shape=128\ndense/kernel dtype=1 shape=784,128\ndense_1/bias dtype=1 shape=10\ndense_1/kernel dtype=1 shape=128,10\noptimizer/dense/bias/m dtype=1 shape=128\noptimizer/dense/bias/v dtype=1 shape=128\noptimizer/dense/kernel/m dtype=1 shape=784,128\noptimizer/dense/kernel/v dtype=1 shape=784,128\noptimizer/dense_1/bias/m dtype=1 shape=10\noptimizer/dense_1/bias/v dtype=1 shape=10\noptimizer/dense_1/kernel/m dtype=1 shape=128,10\noptimizer/dense_1/kernel/v dtype=1 shape=128,10"
testcmd "ckpt-3.json: epoch, iterations, seed, history, the spec with --set applied" \
	'$PYTHON -c "
import json; s = json.load(open(\"run/ckpt-3.json\")); h = json.load(open(\"h.json\"))
print(s[\"epoch\"], s[\"iterations\"], s[\"seed\"], s[\"learning_rate\"], s[\"epochs\"], s[\"spec\"][\"fit\"][\"epochs\"])
print(s[\"history\"] == h[\"history\"])"' \
	"3 189 0 None [0, 1, 2] 3\nTrue"
testcmd "7 epochs: the last five checkpoints are kept (and the SavedModel)" \
	'tfk-train "$SPEC" r64.tfrecord --out keep --set fit.epochs=7 -q && ls keep | tr "\n" " "' \
	"assets.extra checkpoint ckpt-3.data-00000-of-00001 ckpt-3.index ckpt-3.json ckpt-4.data-00000-of-00001 ckpt-4.index ckpt-4.json ckpt-5.data-00000-of-00001 ckpt-5.index ckpt-5.json ckpt-6.data-00000-of-00001 ckpt-6.index ckpt-6.json ckpt-7.data-00000-of-00001 ckpt-7.index ckpt-7.json saved_model.pb variables "
testcmd "the SavedModel in --out: TF's op defs hold (savedmodel_check.py), its variables are ckpt-7's weights, tfk-model run on it equals numpy on them" \
	'$PYTHON $TESTS/py/savedmodel_check.py check keep >/dev/null &&
	 $PYTHON -c "
import numpy as np; np.random.seed(3); np.save(\"x.npy\", np.random.rand(5, 28, 28).astype(np.float32))" &&
	 tfk-model run --dir keep --inputs input_1=x.npy --outdir pred >/dev/null &&
	 $BC dump keep/variables/variables >sm.txt && $BC dump keep/ckpt-7 >ck.txt && $PYTHON -c "
import numpy as np
def load(f):
    w = {}
    for line in open(f).read().splitlines()[2:]:
        t = line.split(); k = bytes.fromhex(t[0]).decode()
        w[k] = np.frombuffer(bytes.fromhex(t[-1]), np.float32).reshape([int(d) for d in t[2][6:].split(\",\")])
    return w
sm, ck = load(\"sm.txt\"), load(\"ck.txt\")
print(sorted(sm), all((sm[k] == ck[k]).all() for k in sm))
x = np.load(\"x.npy\").reshape(5, -1).astype(np.float64)
h = np.maximum(x @ sm[\"dense/kernel\"] + sm[\"dense/bias\"], 0)
z = h @ sm[\"dense_1/kernel\"] + sm[\"dense_1/bias\"]
p = np.exp(z - z.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
y = np.load(\"pred/dense_1.npy\"); print(y.dtype, y.shape, np.abs(y - p).max() < 1e-5)"' \
	"['dense/bias', 'dense/kernel', 'dense_1/bias', 'dense_1/kernel'] True\nfloat32 (5, 10) True"

# PyTorch oracle --------------------------------------------------------------
# Epoch 1 trains from the initial weights; epoch 2, resumed, is replayed
# by PyTorch from ckpt-1 (weights, slots, iterations) and compared with
# ckpt-2. The MLP without Dropout, records in file order.
cat >"$T/oracle.sh" <<'S'
train() {	# DIR OPTIMIZER
	d=$1
	set -- --set fit.batch_size=16 --set fit.shuffle=false \
		--set 'model.config.layers[2].config.units=32' --set "compile.optimizer=$2"
	rm -rf $d
	tfk-train "$SPEC" r64.tfrecord --out $d -j1 -q --set fit.epochs=1 "$@" &&
	tfk-train "$SPEC" r64.tfrecord --out $d -j1 -q --set fit.epochs=2 --resume "$@"
}
train sgd '{"class_name":"SGD","config":{"learning_rate":0.1,"momentum":0.9}}' &&
train adam '{"class_name":"Adam","config":{"learning_rate":0.01}}' &&
$PYTHON "$TESTS/py/torch_train_check.py" r64.tfrecord sgd/ckpt-1 sgd/ckpt-2 adam/ckpt-1 adam/ckpt-2 >orc.out &&
grep -c "^var " orc.out && grep -E "^(steps|match|MISMATCH)" orc.out
S
testcmd "PyTorch replays 4 SGD(momentum 0.9) and 4 Adam steps: loss, weights, slots match" \
	"sh oracle.sh" \
	"20\nsteps 4\nmatch\nsteps 4\nmatch"

# Resume --------------------------------------------------------------------
testcmd "epochs=1 then --resume epochs=2 equals one epochs=2 run, byte for byte (Dropout on)" \
	'tfk-train drop.json tr.tfrecord --out whole -j1 -q &&
	 tfk-train drop.json tr.tfrecord --out part -j1 -q --set fit.epochs=1 &&
	 tfk-train drop.json tr.tfrecord --out part -j1 -q --resume &&
	 cmp whole/ckpt-2.data-00000-of-00001 part/ckpt-2.data-00000-of-00001 &&
	 cmp whole/ckpt-2.index part/ckpt-2.index && echo identical' \
	"identical"
testcmd "a different seed gives different weights" \
	'tfk-train drop.json tr.tfrecord --out seed1 -j1 -q --seed 1 &&
	 cmp -s whole/ckpt-2.data-00000-of-00001 seed1/ckpt-2.data-00000-of-00001 || echo differ' \
	"differ"
testcmd "--resume of a finished run trains nothing more" \
	'tfk-train drop.json tr.tfrecord --out part -j1 --resume --json 2>err | tr -d "\n" | sed "s/\"history\".*\"steps\"/H,\"steps\"/"; echo; cat err' \
	'{"epoch":[0,1],H,"steps":126,"checkpoint":"part/ckpt-2"}\ntfk-train: part: already trained 2 of 2 epochs'
testcmd "--resume without a checkpoint starts at epoch 1" \
	'tfk-train "$SPEC" r64.tfrecord --out fresh --resume --set fit.epochs=1 2>&1 >/dev/null | head -1' \
	"tfk-train: fresh: no checkpoint to resume; starting at epoch 1"

# Data ----------------------------------------------------------------------
testcmd "validation_split 0.2: the last 400 records validate, 50 steps an epoch" \
	'tfk-train "$SPEC" tr.tfrecord --out vs --set fit.epochs=1 --set fit.validation_split=0.2 --json -q |
	 $PYTHON -c "import json,sys; h = json.load(sys.stdin); print(h[\"steps\"], sorted(h[\"history\"]))"' \
	"50 ['accuracy', 'loss', 'val_accuracy', 'val_loss']"
testcmd "class_weight 0 for every class: loss 0, weights never move" \
	'tfk-train "$SPEC" r64.tfrecord --out cw --set fit.epochs=2 \
		--set "fit.class_weight={\"0\":0,\"1\":0,\"2\":0,\"3\":0,\"4\":0,\"5\":0,\"6\":0,\"7\":0,\"8\":0,\"9\":0}" --json -q |
	 $PYTHON -c "import json,sys; print(json.load(sys.stdin)[\"history\"][\"loss\"])" &&
	 cmp cw/ckpt-1.data-00000-of-00001 cw/ckpt-2.data-00000-of-00001 && echo same' \
	"[0.0, 0.0]\nsame"
testcmd "stdin with steps_per_epoch streams: 10 steps an epoch" \
	'tfk-cat tr.tfrecord | tfk-train "$SPEC" --out st --set fit.epochs=3 --set fit.steps_per_epoch=10 --json -q |
	 $PYTHON -c "import json,sys; h = json.load(sys.stdin); print(h[\"epoch\"], h[\"steps\"])"' \
	"[0, 1, 2] 30"
testcmd "a stream that runs out ends training with a warning" \
	'tfk-train "$SPEC" --out st2 --set fit.epochs=3 --set fit.steps_per_epoch=3 --json <r64.tfrecord 2>err |
	 $PYTHON -c "import json,sys; h = json.load(sys.stdin); print(h[\"epoch\"], h[\"steps\"])"; grep -c "ran out" err' \
	"[0] 2\n1"
testcmd "no files and no steps_per_epoch: all of stdin in memory" \
	'tfk-train "$SPEC" --out st3 --set fit.epochs=1 --json -q <r64.tfrecord |
	 $PYTHON -c "import json,sys; h = json.load(sys.stdin); print(h[\"epoch\"], h[\"steps\"])"' \
	"[0] 2"

# Progress output -------------------------------------------------------------
testcmd "stderr not a terminal: one Keras line per epoch" \
	'tfk-train "$SPEC" r64.tfrecord --val r64.tfrecord --out p --set fit.epochs=2 2>&1 |
	 sed -E "s/ - [0-9]+m?s [0-9]+[mu]?s\/step//; s/[0-9]\.[0-9]{4}/X/g"' \
	"Epoch 1/2 - 2/2 - loss: X - accuracy: X - val_loss: X - val_accuracy: X\nEpoch 2/2 - 2/2 - loss: X - accuracy: X - val_loss: X - val_accuracy: X"
testcmd "--progress: Epoch header and a bar ending [=====...]" \
	'tfk-train "$SPEC" r64.tfrecord --out p2 --set fit.epochs=1 --progress 2>&1 | tr "\r" "\n" | grep -v "^$" |
	 sed -E "s/ - .*//" | grep -E "^(Epoch|2/2)"' \
	"Epoch 1/1\n2/2 [==============================]"
testcmd "-q: nothing on stderr" \
	'tfk-train "$SPEC" r64.tfrecord --out p3 --set fit.epochs=1 -q 2>&1 | wc -c' \
	"0"

done_testing
