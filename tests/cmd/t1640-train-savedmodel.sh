#!/bin/sh
# tfk-train and the SavedModel it exports: the training state beside it
# (assets.extra/tfkit_train.*, decoded by the independent
# tests/py/bundle_check.py: python3-protobuf with TensorFlow's field
# numbers), the "serving_raw" signature taking inputs as the records
# hold them (the spec's scale/offset as ops, checked against TF's op
# defs by savedmodel_check.py; its outputs bit for bit serving_default's
# on numpy-scaled inputs, tfk-predict on raw records agreeing with
# tfk-eval), --resume from a copied SavedModel-only directory (bit for
# bit as an uninterrupted run at --threads 1), and fine-tuning with
# --init-from: the first step's loss equals what the exported model
# gives (tfk-eval, and numpy over tfk-model run), weights and Adam's
# state continue (two 1-epoch runs == one 2-epoch run), a different
# optimizer starts fresh with a note, and the errors (a variable
# missing, extra or of another shape, no variables/, a corrupt state).
. "$(dirname "$0")/lib.sh"

F=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $F/train-images-idx3-ubyte.gz \
	--labels $F/train-labels-idx1-ubyte.gz | tfk-cat --take 256 >"$T/tr.tfrecord"
BC="$PYTHON $TESTS/py/bundle_check.py"
export BC

cat >"$T/s.json" <<'J'
{"model": {"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28], "name": "input_1"}},
  {"class_name": "Flatten", "config": {"name": "flatten"}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 16, "activation": "relu"}},
  {"class_name": "Dense", "config": {"name": "dense_1", "units": 10, "activation": "softmax"}}]}},
 "inputs": {"input_1": {"feature": "image", "scale": 0.00392156862745098}},
 "compile": {"optimizer": "adam", "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
 "fit": {"epochs": 1, "batch_size": 32}}
J
# variants: another shape, one variable more, one less
$PYTHON - "$T" <<'P'
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/s.json"))
def save(name, f):
    t = json.loads(json.dumps(s)); f(t["model"]["config"]["layers"])
    json.dump(t, open("%s/%s" % (d, name), "w"))
save("wide.json", lambda l: l[2]["config"].update(units=32))
save("more.json", lambda l: l.insert(3, {"class_name": "Dense", "config": {"name": "dense_2", "units": 16}}))
save("less.json", lambda l: l.pop(2))
P
(cd "$T" && tfk-train s.json tr.tfrecord --out a -q -j1 &&
 tfk-train s.json tr.tfrecord --out full -q -j1 --set fit.epochs=2) >/dev/null 2>&1

# The export's training state --------------------------------------------------
testcmd "assets.extra holds the spec and the training state" \
	'ls a/assets.extra | tr "\n" " "' \
	"tfkit_spec.json tfkit_train.data-00000-of-00001 tfkit_train.index tfkit_train.json "
testcmd "tfkit_train bundle (bundle_check): weights and Adam's m, v slots with the variables' shapes" \
	'$BC dump a/assets.extra/tfkit_train | awk "NR > 2 { print \$1, \$2, \$3 }" | while read k d s; do
		printf "%s %s %s\n" "$($PYTHON -c "import sys; print(bytes.fromhex(sys.argv[1]).decode())" $k)" $d $s; done' \
	"dense/bias dtype=1 shape=16\ndense/kernel dtype=1 shape=784,16\ndense_1/bias dtype=1 shape=10\ndense_1/kernel dtype=1 shape=16,10\noptimizer/dense/bias/m dtype=1 shape=16\noptimizer/dense/bias/v dtype=1 shape=16\noptimizer/dense/kernel/m dtype=1 shape=784,16\noptimizer/dense/kernel/v dtype=1 shape=784,16\noptimizer/dense_1/bias/m dtype=1 shape=10\noptimizer/dense_1/bias/v dtype=1 shape=10\noptimizer/dense_1/kernel/m dtype=1 shape=16,10\noptimizer/dense_1/kernel/v dtype=1 shape=16,10"
testcmd "... its tensors are the last checkpoint's, its weights variables/'s; the slots are not zero" \
	'$BC dump a/assets.extra/tfkit_train | tail -n +3 | cut -d" " -f1,2,3,8 >st.txt &&
	 $BC dump a/ckpt-1 | tail -n +3 | cut -d" " -f1,2,3,8 >ck.txt &&
	 $BC dump a/variables/variables | tail -n +3 | cut -d" " -f1,2,3,8 >va.txt &&
	 cmp st.txt ck.txt && grep -F -f va.txt st.txt | wc -l &&
	 awk -v k=$($PYTHON -c "print(b\"optimizer/dense/kernel/v\".hex())") "\$1 == k && \$4 ~ /^0*\$/" st.txt | wc -l' \
	"4\n0"
testcmd "tfkit_train.json: epoch, steps, the optimizer as get_config(), the spec" \
	'$PYTHON -c "
import json; s = json.load(open(\"a/assets.extra/tfkit_train.json\"))
print(s[\"format\"], s[\"epoch\"], s[\"iterations\"], s[\"optimizer\"][\"class_name\"], s[\"optimizer\"][\"config\"][\"learning_rate\"], s[\"spec\"][\"fit\"][\"batch_size\"])"' \
	"tfk-train 1 1 8 Adam 0.001 32"

# serving_raw: the inputs as the records hold them ---------------------------------
testcmd "savedmodel_check: TF's op defs hold; serving_raw takes the uint8 image, same outputs" \
	'$PYTHON $TESTS/py/savedmodel_check.py check a >chk.txt && grep "^in \|^out serving" chk.txt' \
	"in serving_default input_1 input_1:0 float [-1,28,28]\nout serving_default dense_1 Identity:0 float [-1,10]\nin serving_raw image serving_raw_image:0 uint8 [-1,28,28]\nout serving_raw dense_1 Identity:0 float [-1,10]"
testcmd "... the scale as ops before the model: Cast, Mul, AddV2, Cast into a PlaceholderWithDefault" \
	'grep "^node serving_raw_image\|^node input_1 " chk.txt' \
	"node serving_raw_image Placeholder\nnode serving_raw_image/Cast Cast\nnode serving_raw_image/scale Const\nnode serving_raw_image/offset Const\nnode serving_raw_image/mul Mul\nnode serving_raw_image/add AddV2\nnode serving_raw_image/Cast_1 Cast\nnode input_1 PlaceholderWithDefault"
$PYTHON -c "
import sys, numpy as np; sys.path.insert(0, '$TESTS/py'); import tfexample as tfe
r = [tfe.example_to_dict(tfe.Example.FromString(b)) for b in tfe.read_tfrecords('$T/tr.tfrecord')]
x = np.stack([np.frombuffer(d['image'][1][0], np.uint8) for d in r]).reshape(-1, 28, 28)
np.save('$T/xu.npy', x)
np.save('$T/x.npy', (x.astype(np.float64) * 0.00392156862745098).astype(np.float32))
np.save('$T/y.npy', np.array([d['label'][1][0] for d in r]))"
testcmd "tfk-model run: serving_raw on the uint8 images == serving_default on numpy-scaled floats, bit for bit" \
	'tfk-model run --dir a --signature_def serving_raw --inputs image=xu.npy --outdir pr >/dev/null &&
	 tfk-model run --dir a --inputs input_1=x.npy --outdir pd >/dev/null && cmp pr/dense_1.npy pd/dense_1.npy && echo same' \
	"same"
testcmd "tfk-predict on the raw records through serving_raw: accuracy and loss (numpy) equal tfk-eval's" \
	'tfk-predict --dir a --signature_def serving_raw --keep label --csv tr.tfrecord -o p.csv &&
	 tfk-eval --json -j1 a tr.tfrecord >ev.json && $PYTHON -c "
import csv, json, numpy as np
rows = list(csv.reader(open(\"p.csv\"))); b = np.array(rows[1:], dtype=np.float64)
p, y = b[:, :10], b[:, 10].astype(int); e = json.load(open(\"ev.json\"))
loss = -np.log(p[np.arange(len(y)), y]).mean()
print(np.float32((p.argmax(1) == y).mean()) == np.float32(e[\"accuracy\"]), abs(loss - e[\"loss\"]) < 1e-6 * loss, len(y))"' \
	"True True 256"
# int64 values with scale and offset; float values untouched
$PYTHON -c '
import json, random
random.seed(7)
for n in range(64):
    v = [random.randint(-50, 50) for _ in range(4)]
    print(json.dumps({"v": v, "f": [x / 8 for x in v], "label": [int(sum(v) > 0)]}))' | tfk-json >"$T/iv.tfrecord"
for what in v f; do
cat >"$T/$what.json" <<J
{"model": {"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "input_1"}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 2, "activation": "softmax"}}]}},
 "inputs": {"input_1": {"feature": "$what"$([ $what = v ] && echo ', "scale": 0.1, "offset": -0.5')}},
 "compile": {"optimizer": "sgd", "loss": "sparse_categorical_crossentropy"},
 "fit": {"epochs": 1, "batch_size": 16}}
J
(cd "$T" && tfk-train $what.json iv.tfrecord --out iv-$what -q -j1) >/dev/null 2>&1
done
testcmd "int64 records, scale 0.1, offset -0.5: serving_raw takes int64, gives numpy's float32(v*0.1-0.5) run through serving_default" \
	'$PYTHON $TESTS/py/savedmodel_check.py check iv-v | grep "^in serving_raw" &&
	 $PYTHON -c "
import numpy as np; np.random.seed(1); v = np.random.randint(-50, 51, (9, 4)).astype(np.int64)
np.save(\"v.npy\", v); np.save(\"vf.npy\", (v.astype(np.float64) * 0.1 - 0.5).astype(np.float32))" &&
	 tfk-model run --dir iv-v --signature_def serving_raw --inputs v=v.npy --outdir vr >/dev/null &&
	 tfk-model run --dir iv-v --inputs input_1=vf.npy --outdir vd >/dev/null && cmp vr/dense.npy vd/dense.npy && echo same' \
	"in serving_raw v serving_raw_v:0 int64 [-1,4]\nsame"
testcmd "float records without scale: serving_raw feeds the model input itself, no ops added" \
	'$PYTHON $TESTS/py/savedmodel_check.py check iv-f >c.txt && grep "^in serving_raw" c.txt && grep "serving_raw_\|PlaceholderWithDefault" c.txt | wc -l' \
	"in serving_raw f input_1:0 float [-1,4]\n0"

# --resume from a copied SavedModel -----------------------------------------------
testcmd "--resume in a dir with only a copied SavedModel: bit for bit the uninterrupted 2-epoch run" \
	'mkdir c && cp -r a/saved_model.pb a/variables a/assets.extra c/ &&
	 tfk-train s.json tr.tfrecord --out c -j1 --resume --set fit.epochs=2 --json 2>err.txt >h.json &&
	 cmp c/ckpt-2.data-00000-of-00001 full/ckpt-2.data-00000-of-00001 &&
	 cmp c/variables/variables.data-00000-of-00001 full/variables/variables.data-00000-of-00001 &&
	 sed "s/ - [0-9].*//" err.txt && $PYTHON -c "
import json; h = json.load(open(\"h.json\")); s = json.load(open(\"full/ckpt-2.json\"))
print(h[\"epoch\"], h[\"steps\"], h[\"history\"] == s[\"history\"])"' \
	"Epoch 2/2\n[0, 1] 16 True"
testerr "--resume from a copied SavedModel whose state bundle is corrupt: exit 1 naming it" \
	'mkdir cc && cp -r a/saved_model.pb a/variables a/assets.extra cc/ &&
	 printf "\377" | dd of=cc/assets.extra/tfkit_train.index bs=1 seek=3 conv=notrunc 2>/dev/null &&
	 tfk-train s.json tr.tfrecord --out cc -j1 -q --resume --set fit.epochs=2' \
	1 "tfk-train: cc/assets.extra/tfkit_train.index: "

# Fine-tuning ---------------------------------------------------------------------
testcmd "--init-from: the first step's loss (one batch of 256) equals tfk-eval's of the export's state" \
	'tfk-train s.json tr.tfrecord --init-from a --out ft -q -j1 --json --set fit.batch_size=256 \
		--set fit.shuffle=false >h.json &&
	 tfk-eval --json -j1 -b 256 a/assets.extra/tfkit_train tr.tfrecord >e.json && $PYTHON -c "
import json; h = json.load(open(\"h.json\")); e = json.load(open(\"e.json\"))
print(h[\"history\"][\"loss\"][0] == e[\"loss\"], h[\"history\"][\"accuracy\"][0] == e[\"accuracy\"], h[\"steps\"])"' \
	"True True 9"
testcmd "... and numpy's crossentropy over tfk-model run of the SavedModel (within 1e-6)" \
	'$PYTHON -c "
import sys, numpy as np; sys.path.insert(0, \"$TESTS/py\"); import tfexample as tfe
r = [tfe.example_to_dict(tfe.Example.FromString(b)) for b in tfe.read_tfrecords(\"tr.tfrecord\")]
x = np.stack([np.frombuffer(d[\"image\"][1][0], np.uint8) for d in r]).reshape(-1, 28, 28)
np.save(\"x.npy\", (x.astype(np.float64) * 0.00392156862745098).astype(np.float32))
np.save(\"y.npy\", np.array([d[\"label\"][1][0] for d in r]))" &&
	 tfk-model run --dir a --inputs input_1=x.npy --outdir p >/dev/null && $PYTHON -c "
import json, numpy as np
p = np.load(\"p/dense_1.npy\").astype(np.float64); y = np.load(\"y.npy\")
loss = -np.log(p[np.arange(len(y)), y]).mean(); h = json.load(open(\"h.json\"))
print(abs(loss - h[\"history\"][\"loss\"][0]) < 1e-6 * loss, p.shape)"' \
	"True (256, 10)"
testcmd "weights and Adam's state continue: 1 epoch, then --init-from 1 more == 2 epochs (no shuffle), bit for bit" \
	'tfk-train s.json tr.tfrecord --out n1 -q -j1 --set fit.shuffle=false &&
	 tfk-train s.json tr.tfrecord --out n2 -q -j1 --set fit.shuffle=false --set fit.epochs=2 &&
	 tfk-train s.json tr.tfrecord --init-from n1 --out n3 -q -j1 --set fit.shuffle=false &&
	 cmp n3/variables/variables.data-00000-of-00001 n2/variables/variables.data-00000-of-00001 &&
	 $PYTHON -c "
import json; s = json.load(open(\"n3/ckpt-1.json\")); print(s[\"epoch\"], s[\"iterations\"], s[\"epochs\"])"' \
	"1 16 [0]"
testcmd "SPEC omitted: the SavedModel's tfkit_spec.json (--set still applies)" \
	'tfk-train --init-from a --out o1 -q -j1 tr.tfrecord --set fit.batch_size=64 --json >h.json &&
	 $PYTHON -c "
import json; h = json.load(open(\"h.json\")); s = json.load(open(\"o1/ckpt-1.json\"))
print(h[\"steps\"], s[\"spec\"][\"fit\"][\"batch_size\"], s[\"spec\"][\"model\"] == json.load(open(\"s.json\"))[\"model\"])"' \
	"12 64 True"
testcmd "SPEC omitted, records from stdin" \
	'tfk-train --init-from a --out o2 -q -j1 --json <tr.tfrecord | $PYTHON -c "
import json, sys; print(json.load(sys.stdin)[\"steps\"])"' \
	"16"
testcmd "another optimizer: a fresh one, with a note saying what differs" \
	'tfk-train s.json tr.tfrecord --init-from a --out o3 -j1 --set compile.optimizer=sgd 2>e.txt >/dev/null &&
	 head -n 1 e.txt &&
	 $PYTHON -c "import json; print(json.load(open(\"o3/ckpt-1.json\"))[\"iterations\"])"' \
	"tfk-train: a: optimizer state not used (saved Adam, now SGD); starting a fresh optimizer\n8"
testcmd "another learning rate: the note names the key" \
	"tfk-train s.json tr.tfrecord --init-from a --out o4 -j1 --set 'compile.optimizer={\"class_name\": \"Adam\", \"config\": {\"learning_rate\": 0.0001}}' 2>e.txt >/dev/null && head -n 1 e.txt" \
	"tfk-train: a: optimizer state not used (Adam learning_rate: saved 0.001, now 0.0001); starting a fresh optimizer"
testcmd "--reset-optimizer: a fresh Adam (step count from 0)" \
	'tfk-train s.json tr.tfrecord --init-from a --out o5 -q -j1 --reset-optimizer &&
	 $PYTHON -c "import json; print(json.load(open(\"o5/ckpt-1.json\"))[\"iterations\"])"' \
	"8"
testcmd "--resume with --init-from: --out's checkpoint wins" \
	'tfk-train s.json tr.tfrecord --init-from a --out o5 -j1 --resume --set fit.epochs=2 2>&1 | sed "s/ - [0-9].*//"' \
	"Epoch 2/2"

# Errors --------------------------------------------------------------------------
testerr "a variable of another shape: exit 1 naming it" \
	'tfk-train wide.json tr.tfrecord --init-from a --out x1 -q' \
	1 "tfk-train: --init-from: a/variables/variables.index: dense/kernel: float32 [784, 16] in the checkpoint, the model has float32 [784, 32]"
testerr "a variable the SavedModel lacks" \
	'tfk-train more.json tr.tfrecord --init-from a --out x2 -q' \
	1 "tfk-train: --init-from: a/variables/variables.index: the model's variable 'dense_2/kernel' is missing"
testerr "a variable the model lacks" \
	'tfk-train less.json tr.tfrecord --init-from a --out x3 -q' \
	1 "tfk-train: --init-from: a/variables/variables.index: variable 'dense/bias' is not in the model"
testerr "no variables/" \
	'mkdir nv && cp -r a/saved_model.pb a/assets.extra nv/ && tfk-train s.json tr.tfrecord --init-from nv --out x4 -q' \
	1 "tfk-train: nv: no variables/variables.index: not a SavedModel with weights"
testerr "a corrupt variables.data (CRC)" \
	'cp -r a cd && printf "\001" | dd of=cd/variables/variables.data-00000-of-00001 bs=1 seek=100 conv=notrunc 2>/dev/null &&
	 tfk-train s.json tr.tfrecord --init-from cd --out x5 -q' \
	1 "tfk-train: --init-from: cd/variables/variables"
testerr "a corrupt tfkit_train.json" \
	'cp -r a cj && printf "{\"epoch\": " >cj/assets.extra/tfkit_train.json &&
	 tfk-train s.json tr.tfrecord --init-from cj --out x6 -q' \
	1 "tfk-train: cj/assets.extra/tfkit_train.json: line "
testerr "no such directory" \
	'tfk-train s.json tr.tfrecord --init-from nosuch --out x7 -q' \
	1 "tfk-train: --init-from nosuch: No such file or directory"
testerr "SPEC omitted and the SavedModel has no tfkit_spec.json" \
	'mkdir ns && cp -r a/saved_model.pb a/variables ns/ && tfk-train --init-from ns --out x8 -q tr.tfrecord' \
	1 "tfk-train: ns/assets.extra/tfkit_spec.json: "
testerr "--reset-optimizer without --init-from: usage error" \
	'tfk-train s.json tr.tfrecord --out x9 --reset-optimizer' \
	2 "--reset-optimizer needs --init-from"

done_testing
