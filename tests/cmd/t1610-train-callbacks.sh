#!/bin/sh
# tfk-train's fit.callbacks as Keras runs them: EarlyStopping stopping
# (and restoring the best weights), ModelCheckpoint save_best_only and
# its filepath fields, CSVLogger's exact file (Python repr values equal
# to the history), ReduceLROnPlateau and LearningRateScheduler changing
# the rate (lr in the logs as Keras adds it), TensorBoard event files
# decoded by tests/py/events_check.py (python3-protobuf from TF's field
# numbers): epoch_ scalars equal to the history, batch_ scalars,
# histograms recomputed from the checkpoint's weights, hparams.
. "$(dirname "$0")/lib.sh"

F=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $F/train-images-idx3-ubyte.gz \
	--labels $F/train-labels-idx1-ubyte.gz | tfk-cat --take 256 >"$T/tr.tfrecord"
cp "$(dirname "$0")/../../examples/mlp.spec.json" "$T/spec.json"
SPEC=spec.json
BC="$PYTHON $TESTS/py/bundle_check.py"
EV="$PYTHON $TESTS/py/events_check.py"
export SPEC BC EV

# Variables only (no optimizer slots) of a checkpoint, as hex lines.
cat >"$T/weights.sh" <<'S'
$BC dump "$1" | awk 'NR > 2 && $1 !~ /^6f7074696d697a6572/ { print $1, $NF }'
S
# train OUT EPOCHS CALLBACKS-JSON [more options]
cat >"$T/cb.sh" <<'S'
out=$1 epochs=$2 cbs=$3
shift 3
tfk-train "$SPEC" tr.tfrecord --out "$out" -j1 --set fit.epochs=$epochs \
	--set "fit.callbacks=$cbs" --json "$@"
S
hist() {	# KEY: the history's list from h.json
	echo "$PYTHON -c \"import json; print(json.load(open('h.json'))['history']['$1'])\""
}

# EarlyStopping ----------------------------------------------------------------
# mode max on a falling loss: epoch 0 is the best, epoch 1 runs out of
# patience 0 (Keras never stops at epoch 0).
testcmd "EarlyStopping: stops after epoch 2 of 10, says so with verbose 1" \
	'sh cb.sh es 10 "[{\"class_name\":\"EarlyStopping\",\"config\":{\"monitor\":\"loss\",\"mode\":\"max\",\"verbose\":1}}]" 2>err >h.json &&
	 $PYTHON -c "import json; h = json.load(open(\"h.json\")); print(h[\"epoch\"], h[\"checkpoint\"])" && grep -v "^Epoch [12]/10" err' \
	"[0, 1] es/ckpt-2\nEpoch 2: early stopping"
testcmd "EarlyStopping patience 2: stops at epoch 3" \
	'sh cb.sh es2 10 "[{\"class_name\":\"EarlyStopping\",\"config\":{\"monitor\":\"loss\",\"mode\":\"max\",\"patience\":2}}]" -q |
	 $PYTHON -c "import json,sys; print(json.load(sys.stdin)[\"epoch\"])"' \
	"[0, 1, 2]"
testcmd "EarlyStopping min_delta 10 on a falling loss: stops at epoch 2" \
	'sh cb.sh es3 10 "[{\"class_name\":\"EarlyStopping\",\"config\":{\"monitor\":\"loss\",\"min_delta\":10}}]" -q |
	 $PYTHON -c "import json,sys; print(json.load(sys.stdin)[\"epoch\"])"' \
	"[0, 1]"
testcmd "EarlyStopping restore_best_weights: the last checkpoint has epoch 1's weights" \
	'sh cb.sh esr 10 "[{\"class_name\":\"EarlyStopping\",\"config\":{\"monitor\":\"loss\",\"mode\":\"max\",\"patience\":1,\"restore_best_weights\":true,\"verbose\":1}}]" 2>err >/dev/null &&
	 sh weights.sh esr/ckpt-1 >w1 && sh weights.sh esr/ckpt-2 >w2 && cmp w1 w2 && wc -l <w1 && grep Restoring err' \
	"4\nRestoring model weights from the end of the best epoch: 1."
testcmd "EarlyStopping monitor val_loss without validation data: refused up front" \
	'sh cb.sh esv 3 "[{\"class_name\":\"EarlyStopping\"}]" -q; echo $?; test -e esv/checkpoint || echo no checkpoint' \
	"1\nno checkpoint"
testerr "... with the message naming the JSON path and the keys logged" \
	'sh cb.sh esv 3 "[{\"class_name\":\"EarlyStopping\"}]" -q' 1 \
	"tfk-train: spec.json: fit.callbacks[0].config.monitor: 'val_loss' is not logged by this run (logs: loss, accuracy); validation needs --val or fit.validation_split"

# ModelCheckpoint --------------------------------------------------------------
testcmd "ModelCheckpoint save_best_only, mode max on a falling loss: only epoch 1 saved" \
	'sh cb.sh mc 3 "[{\"class_name\":\"ModelCheckpoint\",\"config\":{\"filepath\":\"best/w-{epoch:02d}-{loss:.2f}\",\"monitor\":\"loss\",\"mode\":\"max\",\"save_best_only\":true}}]" -q >h.json &&
	 ls best | sed "s/-[0-9]\.[0-9][0-9]\./-L./" | tr "\n" " "' \
	"w-01-L.data-00000-of-00001 w-01-L.index w-01-L.json "
testcmd "... the loss in the name is the history's, rounded as Python's {:.2f}" \
	'$PYTHON -c "import json; print(\"w-01-{:.2f}.index\".format(json.load(open(\"h.json\"))[\"history\"][\"loss\"][0]))" >want && ls best | grep index | cmp - want && echo same' \
	"same"
testcmd "ModelCheckpoint every epoch; tfk-eval reads the saved prefix" \
	'sh cb.sh mc2 2 "[{\"class_name\":\"ModelCheckpoint\",\"config\":{\"filepath\":\"all/e{epoch}\",\"verbose\":1}}]" 2>err >/dev/null &&
	 ls all | tr "\n" " " && grep saving err && tfk-eval all/e2 tr.tfrecord -q | sed -E "s/[0-9]\.[0-9]{4}/X/g"' \
	"e1.data-00000-of-00001 e1.index e1.json e2.data-00000-of-00001 e2.index e2.json Epoch 1: saving model to all/e1\nEpoch 2: saving model to all/e2\nloss: X - accuracy: X"
testerr "ModelCheckpoint to an .h5 file: refused" \
	'sh cb.sh mc3 2 "[{\"class_name\":\"ModelCheckpoint\",\"config\":{\"filepath\":\"w.h5\"}}]"' 1 \
	"tfk-train: spec.json: fit.callbacks[0].config.filepath: HDF5 and .keras files are not written"

# CSVLogger ------------------------------------------------------------------
testcmd "CSVLogger: Keras' header and rows (epoch from 0, keys sorted, \\\\r\\\\n)" \
	'sh cb.sh csv 2 "[{\"class_name\":\"CSVLogger\",\"config\":{\"filename\":\"log.csv\"}}]" -q >h.json &&
	 head -1 log.csv | tr "\\r" R && sed -n 2p log.csv | cut -d, -f1 && wc -l <log.csv' \
	"epoch,accuracy,lossR\n0\n3"
testcmd "... values print as Python's repr of the history's floats" \
	'$PYTHON -c "
import json; h = json.load(open(\"h.json\"))[\"history\"]
rows = open(\"log.csv\", newline=\"\").read().split(\"\\r\\n\")[1:-1]
want = [\"%d,%r,%r\" % (i, h[\"accuracy\"][i], h[\"loss\"][i]) for i in range(2)]
print(rows == want)"' \
	"True"
testcmd "CSVLogger append on a resumed run: one header, three rows" \
	'sh cb.sh csv 3 "[{\"class_name\":\"CSVLogger\",\"config\":{\"filename\":\"log.csv\"}}]" -q --resume >/dev/null &&
	 cut -d, -f1 log.csv | tr -d "\\r" | tr "\\n" " "' \
	"epoch 0 1 2 "
testcmd "CSVLogger separator ;" \
	'sh cb.sh csv2 1 "[{\"class_name\":\"CSVLogger\",\"config\":{\"filename\":\"l2.csv\",\"separator\":\";\"}}]" -q >/dev/null && head -1 l2.csv' \
	"epoch;accuracy;loss\r"

# Learning rate ------------------------------------------------------------------
# mode max on a falling loss: no improvement from epoch 1 on; patience 1
# halves the rate at the end of epochs 2 and 3 (lr logged before).
testcmd "ReduceLROnPlateau: lr in the history, halved after each flat epoch" \
	'sh cb.sh rl 3 "[{\"class_name\":\"ReduceLROnPlateau\",\"config\":{\"monitor\":\"loss\",\"mode\":\"max\",\"patience\":1,\"factor\":0.5,\"verbose\":1}}]" 2>err >h.json &&
	 '"$(hist lr)"' && grep Reduce err && $PYTHON -c "import json; print(json.load(open(\"rl/ckpt-3.json\"))[\"learning_rate\"])"' \
	"[0.0010000000474974513, 0.0010000000474974513, 0.0005000000237487257]\nEpoch 2: ReduceLROnPlateau reducing learning rate to 0.0005000000237487257.\nEpoch 3: ReduceLROnPlateau reducing learning rate to 0.0002500000118743628.\n0.0002500000118743628"
# Keras counts the cooldown down before it checks, so cooldown 2 (not 1)
# skips one epoch between reductions.
testcmd "ReduceLROnPlateau cooldown 2: one flat epoch skipped after a reduction" \
	'sh cb.sh rl2 4 "[{\"class_name\":\"ReduceLROnPlateau\",\"config\":{\"monitor\":\"loss\",\"mode\":\"max\",\"patience\":1,\"factor\":0.5,\"cooldown\":2}}]" -q >h.json && '"$(hist lr)" \
	"[0.0010000000474974513, 0.0010000000474974513, 0.0005000000237487257, 0.0005000000237487257]"
testcmd "LearningRateScheduler: rate 0 from epoch 2 on freezes the weights" \
	'sh cb.sh ls 3 "[{\"class_name\":\"LearningRateScheduler\",\"config\":{\"boundaries\":[1],\"values\":[0.01,0]}}]" -q >h.json &&
	 '"$(hist lr)"' && sh weights.sh ls/ckpt-1 >w1 && sh weights.sh ls/ckpt-3 >w3 && cmp w1 w3 && echo frozen' \
	"[0.009999999776482582, 0.0, 0.0]\nfrozen"
testerr "LearningRateScheduler: values must be one more than boundaries" \
	'sh cb.sh ls2 3 "[{\"class_name\":\"LearningRateScheduler\",\"config\":{\"boundaries\":[1,2],\"values\":[0.01,0]}}]"' 1 \
	"tfk-train: spec.json: fit.callbacks[0].config.values: expected one more value than boundaries"
testerr "ReduceLROnPlateau factor 1: refused as Keras does" \
	'sh cb.sh rl3 3 "[{\"class_name\":\"ReduceLROnPlateau\",\"config\":{\"factor\":1.0}}]"' 1 \
	"tfk-train: spec.json: fit.callbacks[0].config.factor: expected a number in [0, 1)"

# TensorBoard ----------------------------------------------------------------
testcmd "--logdir: train scalars epoch_loss/epoch_accuracy per epoch equal to the history" \
	'tfk-train "$SPEC" tr.tfrecord --val tr.tfrecord --out tb -j1 -q --json --set fit.epochs=2 --logdir logs --histograms >h.json &&
	 $EV dump logs/train/events.out.tfevents.* | grep -v histo | sort >got &&
	 $PYTHON -c "
import json; h = json.load(open(\"h.json\"))[\"history\"]
print(\"version brain.Event:2 writer=tfkit\")
for e in range(2):
    for k in (\"accuracy\", \"loss\"):
        print(\"scalar %d epoch_%s %.9g\" % (e, k, h[k][e]))" | sort | cmp - got && wc -l <got' \
	"5"
testcmd "validation events: epoch_loss/epoch_accuracy are the val_ values" \
	'$EV dump logs/validation/events.out.tfevents.* | grep scalar | sort >got &&
	 $PYTHON -c "
import json; h = json.load(open(\"h.json\"))[\"history\"]
for e in range(2):
    for k in (\"accuracy\", \"loss\"):
        print(\"scalar %d epoch_%s %.9g\" % (e, k, h[\"val_\" + k][e]))" | sort | cmp - got && echo same' \
	"same"
# The histogram of epoch 1 is of the weights ckpt-2 holds.
cat >"$T/raw.py" <<'S'
import sys; sys.path.insert(0, sys.argv[1]); import bundle_check as bc
e, _ = bc.read_table(sys.argv[2] + ".index")
data = open(sys.argv[2] + ".data-00000-of-00001", "rb").read()
for k, v in e[1:]:
    if k == sys.argv[3].encode():
        m = bc.BundleEntryProto.FromString(v)
        open(sys.argv[4], "wb").write(data[m.offset:m.offset + m.size])
S
testcmd "--histograms: every variable, buckets as TF's histogram.cc from the weights" \
	'$PYTHON raw.py "$TESTS/py" tb/ckpt-2 dense/kernel k.f32 && $PYTHON raw.py "$TESTS/py" tb/ckpt-2 dense_1/bias b.f32 &&
	 $EV dump logs/train/events.out.tfevents.* dense/kernel_0=k.f32 dense_1/bias_0=b.f32 | grep "^histo 1" | cut -d" " -f1-4,6 | sort' \
	"histo 1 dense/bias_0 num=128 unchecked\nhisto 1 dense/kernel_0 num=100352 ok\nhisto 1 dense_1/bias_0 num=10 ok\nhisto 1 dense_1/kernel_0 num=1280 unchecked"
testcmd "hparams of the --set values in the log dir itself" \
	'tfk-train "$SPEC" tr.tfrecord --out tb2 -q --logdir logs2 --set fit.epochs=1 --set fit.batch_size=64 &&
	 $EV dump logs2/events.out.tfevents.* | sed -E "s/start=[0-9.]+ //; s/group=.[^ ]* //"' \
	"version brain.Event:2 writer=tfkit\nhparams 0 _hparams_/session_start_info plugin=hparams version=0 data=session_start_info tensor=1/[0]/0 fit.batch_size=64,fit.epochs=1"
testcmd "TensorBoard update_freq 2: batch_loss every 2 steps" \
	'sh cb.sh tb3 1 "[{\"class_name\":\"TensorBoard\",\"config\":{\"log_dir\":\"logs3\",\"update_freq\":2}}]" -q >/dev/null &&
	 $EV dump logs3/train/events.out.tfevents.* | grep "batch_loss" | cut -d" " -f1-3 | tr "\n" " "' \
	"scalar 2 batch_loss scalar 4 batch_loss scalar 6 batch_loss scalar 8 batch_loss "

# Spec errors --------------------------------------------------------------------
testerr "unknown callback class" \
	'sh cb.sh x 1 "[{\"class_name\":\"BackupAndRestore\"}]"' 1 \
	"tfk-train: spec.json: fit.callbacks[0].class_name: unknown callback 'BackupAndRestore'"
testerr "unknown config key" \
	'sh cb.sh x 1 "[{\"class_name\":\"EarlyStopping\",\"config\":{\"patients\":3}}]"' 1 \
	"tfk-train: spec.json: fit.callbacks[0].config.patients: unknown key for EarlyStopping"
testerr "bad value" \
	'sh cb.sh x 1 "[{\"class_name\":\"EarlyStopping\",\"config\":{\"patience\":-1}}]"' 1 \
	"tfk-train: spec.json: fit.callbacks[0].config.patience: expected a non-negative integer"

done_testing
