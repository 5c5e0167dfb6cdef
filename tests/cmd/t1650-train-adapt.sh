#!/bin/sh
# tfk-train adapts a model's preprocessing layers (layer.adapt before
# fit): Normalization's statistics checked against numpy's mean and
# population variance of the records, --adapt-records bounding them, a
# StringLookup's vocabulary against collections.Counter in Keras' order
# (count high to low, ties by token high to low), records on stdin; and
# the refusals: a stream on stdin,
# a layer behind another layer, a missing feature, a bad option.
. "$(dirname "$0")/lib.sh"

cat >"$T/mk.py" <<'PY'
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1] + "/py")
import tfexample as tfe
rng = np.random.default_rng(3)
xs = rng.normal(2.0, 3.0, size=(40, 4)).astype(np.float32)
words = ["a", "b", "c", "d", "e"]
ss = [[words[int(k)] for k in rng.integers(0, 5, size=2)] for _ in range(40)]
img = rng.integers(0, 256, size=(40, 2, 2, 3), dtype=np.uint8)
iv = [10 if i % 10 < 4 else 20 if i % 10 < 7 else 30 if i % 10 < 9 else 40
      for i in range(40)]
recs = [tfe.make_example({"x": [float(v) for v in xs[i]],
                          "s": [w.encode() for w in ss[i]],
                          "img": [img[i].tobytes()], "i": [iv[i]],
                          "y": [float(i % 3)]}).SerializeToString()
        for i in range(40)]
np.save("img.npy", img)
tfe.write_tfrecords("d.tfrecord", recs)
np.save("xs.npy", xs)
json.dump(ss, open("ss.json", "w"))
def spec(layers, shape, dtype="float32", name=None):
    return {"model": {"class_name": "Sequential", "config": {"name": "m",
            "layers": [{"class_name": "InputLayer", "config": {
                "name": name or ("x" if dtype == "float32" else "s"),
                "batch_input_shape": [None] + shape, "dtype": dtype}}]
            + layers}},
            "labels": {"feature": "y", "dtype": "float32"},
            "compile": {"optimizer": {"class_name": "SGD", "config": {
                "learning_rate": 0.01}}, "loss": "mean_squared_error"},
            "fit": {"epochs": 1, "batch_size": 8}}
norm = {"class_name": "Normalization", "config": {"name": "nm",
        "axis": -1, "mean": None, "variance": None}}
dense = {"class_name": "Dense", "config": {"name": "out", "units": 1}}
look = {"class_name": "StringLookup", "config": {"name": "sl",
        "output_mode": "count", "vocabulary": None}}
json.dump(spec([norm, dense], [4]), open("norm.json", "w"))
nf = spec([norm, dense], [4])
nf["inputs"] = {"x": {"feature": "nosuch"}}
json.dump(nf, open("nofeat.json", "w"))
json.dump(spec([dense, dict(norm), dense], [4]), open("behind.json", "w"))
json.dump(spec([look, dense], [2], "string"), open("look.json", "w"))
im = spec([norm, {"class_name": "Flatten", "config": {"name": "f"}}, dense],
          [2, 2, 3], name="img")
im["inputs"] = {"img": {"feature": "img", "dtype": "uint8",
                        "scale": 1 / 255.0}}
json.dump(im, open("img.json", "w"))
il = {"class_name": "IntegerLookup", "config": {"name": "il",
      "output_mode": "multi_hot", "vocabulary": None}}
json.dump(spec([il, dense], [1], "int64", name="i"), open("ilook.json", "w"))
PY
cat >"$T/chk.py" <<'PY'
import collections, json, sys
import numpy as np
what, d = sys.argv[1], sys.argv[2]
layers = json.load(open(d + "/assets.extra/tfkit_spec.json"))["model"][
    "config"]["layers"]
cfg = {la["config"]["name"]: la["config"] for la in layers if
       "name" in la["config"]}
if what == "img":
    im = np.load("img.npy").astype(np.float64) * (1 / 255.0)
    im = im.astype(np.float32).astype(np.float64).reshape(-1, 3)
    ok = np.allclose(cfg["nm"]["mean"], im.mean(0), atol=1e-6) and \
        np.allclose(cfg["nm"]["variance"], im.var(0), atol=1e-6)
elif what == "ilook":
    ok = cfg["il"]["vocabulary"] == [-1, 10, 20, 30, 40]
elif what.startswith("norm"):
    xs = np.load("xs.npy").astype(np.float64)[:int(what[4:] or 40)]
    ok = np.allclose(cfg["nm"]["mean"], xs.mean(0), atol=1e-6) and \
        np.allclose(cfg["nm"]["variance"], xs.var(0), atol=1e-5)
else:
    c = collections.Counter(w for s in json.load(open("ss.json")) for w in s)
    want = ["[UNK]"] + sorted(c, key=lambda w: (-c[w], [-b for b in
                                                       w.encode()]))
    ok = cfg["sl"]["vocabulary"] == want
    if not ok:
        print(cfg["sl"]["vocabulary"], want)
sys.exit(0 if ok else 1)
PY
(cd "$T" && "$PYTHON" mk.py "$TESTS") ||
	{ echo "Bail out! mk.py failed"; exit 1; }

check "Normalization adapted from every record: numpy's mean and variance" \
	sh -c 'tfk-train -q norm.json d.tfrecord -o n1 && "$PYTHON" chk.py norm n1'
check "--adapt-records 10: the statistics of the first 10 records" \
	sh -c 'tfk-train -q --adapt-records 10 norm.json d.tfrecord -o n2 &&
	       "$PYTHON" chk.py norm10 n2'
check "StringLookup adapted: Keras' vocabulary order, in the export" \
	sh -c 'tfk-train -q look.json d.tfrecord -o l1 && "$PYTHON" chk.py look l1 &&
	       test -s l1/assets/*vocab.txt'
check "Normalization on uint8 image bytes: per channel, after the feed's scale" \
	sh -c 'tfk-train -q img.json d.tfrecord -o i1 && "$PYTHON" chk.py img i1'
check "IntegerLookup adapted: by count, the OOV token -1 first" \
	sh -c 'tfk-train -q ilook.json d.tfrecord -o il1 && "$PYTHON" chk.py ilook il1'
check "records on stdin: adapted from, then trained on, the same" \
	sh -c 'tfk-train -q norm.json -o s1 <d.tfrecord && "$PYTHON" chk.py norm s1 &&
	       tfk-train --json -q norm.json -o s2 <d.tfrecord >h2.json &&
	       tfk-train --json -q norm.json d.tfrecord -o s3 >h3.json &&
	       "$PYTHON" -c "import json,sys; a,b=(json.load(open(f))[\"history\"] for f in sys.argv[1:]); sys.exit(a!=b)" h2.json h3.json'
testerr "adapting from a stream on stdin is refused" \
	'tfk-train norm.json -o s4 --set fit.steps_per_epoch=2 <d.tfrecord' 1 \
	"tfk-train: norm.json: model.config.layers[1] (Normalization 'nm'): adapting reads the training records once per layer: give them as files, not a stream on stdin"
testerr "a layer behind another layer is refused by its path" \
	'tfk-train behind.json d.tfrecord -o b1' 1 \
	"tfk-train: behind.json: model.config.layers[2] (Normalization 'nm'): to be adapted by tfk-train, the layer must read a model input directly"
testerr "a missing feature names the record" \
	'tfk-train nofeat.json d.tfrecord -o m1' 1 \
	"tfk-train: adapting nofeat.json: model.config.layers[1] (Normalization 'nm'): d.tfrecord: record 0: no feature 'nosuch'"
testerr "--adapt-records -1 is a usage error" \
	'tfk-train --adapt-records -1 norm.json d.tfrecord -o u1' 2 \
	"--adapt-records"
done_testing
