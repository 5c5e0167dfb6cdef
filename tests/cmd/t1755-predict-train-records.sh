#!/bin/sh
# tfk-predict and tfk-eval take the records tfk-train took: tfk-images'
# uint8 pixels and tfk-csv's int64 column, fed to float inputs, are
# converted as training converts them (the spec's scale and offset,
# float32(v * scale + offset) in double). The oracle: the same model
# fed floats that Python converted (numpy, float64 then float32) under
# another feature name, which go in as they are; the predictions must
# be equal, bit for bit in the CSV text; and tfk-eval's accuracy on the
# raw records equals the predictions' argmax accuracy.
. "$(dirname "$0")/lib.sh"

# Images: two classes of 8x8 PNGs (python3-pil) ------------------------------
$PYTHON - "$T" <<'P'
import os, random, sys
from PIL import Image
d = sys.argv[1] + "/pics"
random.seed(3)
for c, base in (("dark", 40), ("light", 170)):
    os.makedirs("%s/%s" % (d, c))
    for i in range(12):
        im = Image.new("RGB", (8, 8))
        im.putdata([tuple(base + random.randint(0, 60) for _ in range(3))
                    for _ in range(64)])
        im.save("%s/%s/%d.png" % (d, c, i))
P
tfk-images -q --image-size 8x8 --seed 1 -o "$T/img" "$T/pics"
cat >"$T/img.json" <<'J'
{"model": {"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_shape": [null, 8, 8, 3], "name": "pixels"}},
  {"class_name": "Flatten", "config": {"name": "flatten"}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 2, "activation": "softmax"}}]}},
 "inputs": {"pixels": {"feature": "image", "scale": 0.00392156862745098}},
 "compile": {"optimizer": "adam", "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
 "fit": {"epochs": 3, "batch_size": 8}}
J
# convert FEATURE SCALE OFFSET IN OUT: the feature as float32(v * scale +
# offset) (float64 arithmetic, as training), written as feature "conv"
cat >"$T/conv.py" <<'P'
import sys
import numpy as np
sys.path.insert(0, sys.argv[6])
import tfexample as tfe
feat, scale, offset, src, dst = sys.argv[1:6]
out = []
for r in tfe.read_tfrecords(src):
    d = tfe.example_to_dict(tfe.Example.FromString(r))
    kind, vals = d[feat]
    v = (np.frombuffer(vals[0], np.uint8) if kind == "bytes"
         else np.array(vals, np.int64)).astype(np.float64)
    f = (v * float(scale) + float(offset)).astype(np.float32)
    out.append(tfe.make_example({"conv": [float(x) for x in f],
                                 "label": d["label"][1]}).SerializeToString())
tfe.write_tfrecords(dst, out)
P
(cd "$T" && tfk-train img.json img-00000-of-00001.tfrecord --out irun -q -j1 &&
 $PYTHON conv.py image 0.00392156862745098 0 img-00000-of-00001.tfrecord imgf.tfrecord "$TESTS/py")
testcmd "tfk-images' uint8 pixels feed the float input as in training: the predictions of Python's floats, bit for bit" \
	'tfk-predict --dir irun --csv img-00000-of-00001.tfrecord -o a.csv &&
	 tfk-predict --dir irun --map pixels=conv --csv imgf.tfrecord -o b.csv &&
	 cmp a.csv b.csv && sed -n "1p;\$=" a.csv' \
	"dense_0,dense_1\n25"
testcmd "... the same through serving_raw, which takes the bytes as they are" \
	'tfk-predict --dir irun --signature_def serving_raw --csv img-00000-of-00001.tfrecord | cmp - a.csv && echo same' \
	"same"
testcmd "tfk-eval on the same records: the accuracy of the predictions' argmax" \
	'tfk-eval --json irun img-00000-of-00001.tfrecord >e.json &&
	 tfk-predict --dir irun --keep label --csv img-00000-of-00001.tfrecord -o k.csv && $PYTHON -c "
import csv, json
import numpy as np
rows = np.array(list(csv.reader(open(\"k.csv\")))[1:], dtype=np.float64)
acc = np.float32((rows[:, :2].argmax(1) == rows[:, 2]).mean())
e = json.load(open(\"e.json\"))
print(e[\"examples\"], acc == np.float32(e[\"accuracy\"]))"' \
	"24 True"

# CSV: an int64 column fed to a float input, with scale and offset -----------
$PYTHON -c '
import random
random.seed(9)
print("age,label")
for i in range(40):
    a = random.randint(18, 90)
    print("%d,%d" % (a, int(a > 50)))' >"$T/people.csv"
tfk-csv -q --label label -o "$T/people" "$T/people.csv"
cat >"$T/csv.json" <<'J'
{"model": {"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_shape": [null, 1], "name": "age"}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 2, "activation": "softmax"}}]}},
 "inputs": {"age": {"feature": "age", "scale": 0.0123, "offset": -0.5}},
 "compile": {"optimizer": "adam", "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
 "fit": {"epochs": 2, "batch_size": 8}}
J
(cd "$T" && tfk-train csv.json people-00000-of-00001.tfrecord --out crun -q -j1 &&
 $PYTHON conv.py age 0.0123 -0.5 people-00000-of-00001.tfrecord peoplef.tfrecord "$TESTS/py")
testcmd "tfk-csv's int64 column feeds the float input as in training (scale 0.0123, offset -0.5): Python's floats' predictions" \
	'tfk-predict --dir crun --csv people-00000-of-00001.tfrecord -o a.csv &&
	 tfk-predict --dir crun --map age=conv --csv peoplef.tfrecord -o b.csv &&
	 cmp a.csv b.csv && sed -n "\$=" a.csv' \
	"41"
testcmd "... and tfk-eval takes them: the predictions' argmax accuracy" \
	'tfk-eval --json crun people-00000-of-00001.tfrecord >e.json &&
	 tfk-predict --dir crun --keep label --csv people-00000-of-00001.tfrecord -o k.csv && $PYTHON -c "
import csv, json
import numpy as np
rows = np.array(list(csv.reader(open(\"k.csv\")))[1:], dtype=np.float64)
acc = np.float32((rows[:, :2].argmax(1) == rows[:, 2]).mean())
e = json.load(open(\"e.json\"))
print(e[\"examples\"], acc == np.float32(e[\"accuracy\"]))"' \
	"40 True"
testerr "two bytes values where training read one of uint8 pixels" \
	'printf "{\"image\":[\"abc\",\"def\"]}\n" | tfk-json | tfk-predict --dir irun' 1 \
	"tfk-predict: <stdin>: record 0 at byte 0: feature 'image': 2 bytes values, input 'pixels' (float32 [?, 8, 8, 3]) takes one value of whole uint8 elements, as training read it"
done_testing
