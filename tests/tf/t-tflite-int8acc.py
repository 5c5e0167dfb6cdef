"""t-tflite-int8acc: our int8 Fashion-MNIST CNN against TF's converter's.

examples/cnn.spec.json is trained by tfk-train for one epoch on the
first 3000 Fashion-MNIST training images (Debian's dataset-fashion-mnist)
and exported as a SavedModel. Two full-int8 models (float input and
output) are made of that one SavedModel, calibrated on the same first
200 training images: ours (`tfk-lite convert --quantize int8
--representative`) and TF 2.21's (`tf.lite.TFLiteConverter.
from_saved_model` with a representative dataset of those images scaled
by 1/255, as the spec feeds them). LiteRT runs both, and TF's float
conversion, on the first N test images (500 here; 10000 with
TFK_TF_FULL=1, an opt-in run of a few minutes), and prints the three
accuracies.

Asserted: ours is no more than 1 point below TF's int8 model on 500
images. Why 1: each image is 0.2 points; two int8 models of one float
model differ only where a quantization step flips a near-tie argmax,
which both do about equally often (each within half a point of the float
model here), so a worse calibration or rounding shows as more than 5
images lost, while 1 point leaves room for a couple of flips either way.
Also asserted: `tfk-lite convert --eval` reports for our model the
accuracy LiteRT measures on it (within one image).
"""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tftap import T  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from ai_edge_litert.interpreter import Interpreter  # noqa: E402

t = T()
FM = "/usr/share/datasets/fashion-mnist"
N_TRAIN, N_CAL = 3000, 200
N_TEST = 10000 if os.environ.get("TFK_TF_FULL") == "1" else 500
top = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def idx(name, off):
    return np.frombuffer(gzip.open(os.path.join(FM, name)).read(), np.uint8,
                         offset=off)


test_x = idx("t10k-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28, 1)[:N_TEST]
test_y = idx("t10k-labels-idx1-ubyte.gz", 8)[:N_TEST]
cal_x = idx("train-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28, 1)[:N_CAL]


def sh(cmd):
    import subprocess
    p = subprocess.run(cmd, shell=True, cwd=t.tmp, stderr=subprocess.PIPE)
    if p.returncode:
        t.diag(p.stderr.decode())
    return p.returncode == 0


b = t.bin
t.ok(sh("%s/tfk-idx -q --images %s/train-images-idx3-ubyte.gz --labels "
        "%s/train-labels-idx1-ubyte.gz | %s/tfk-cat --take %d >train.tfrecord"
        % (b, FM, FM, b, N_TRAIN)) and
     sh("%s/tfk-idx -q --images %s/t10k-images-idx3-ubyte.gz --labels "
        "%s/t10k-labels-idx1-ubyte.gz | %s/tfk-cat --take %d >test.tfrecord"
        % (b, FM, FM, b, N_TEST)),
     "Fashion-MNIST records: %d training, %d test" % (N_TRAIN, N_TEST))
t.tool("tfk-train", os.path.join(top, "examples", "cnn.spec.json"),
       "train.tfrecord", "--out", "cnn", "--set", "fit.epochs=1", "-q",
       "-j1", "--seed", "1")
sm = t.path("cnn")

ours = t.path("ours-int8.tflite")
rep = json.loads(t.tool("tfk-lite", "convert", "--saved_model_dir", sm, "-o",
                        ours, "--quantize", "int8", "--representative",
                        "train.tfrecord", "--calibration_records", str(N_CAL),
                        "--eval", "test.tfrecord", "--json"))


def tf_convert(int8):
    c = tf.lite.TFLiteConverter.from_saved_model(
        sm, signature_keys=["serving_default"])
    if int8:
        c.optimizations = [tf.lite.Optimize.DEFAULT]
        c.representative_dataset = lambda: (
            [(r[None] / 255.).astype(np.float32)] for r in cal_x)
        c.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    p = t.path("tf-%s.tflite" % ("int8" if int8 else "float"))
    open(p, "wb").write(c.convert())
    return p


def predict(path):
    it = Interpreter(model_path=path)
    run = it.get_signature_runner()
    key = list(run.get_input_details())[0]
    x = (test_x / 255.).astype(np.float32)
    if len(run.get_input_details()[key]["shape"]) == 3:
        x = x[..., 0]
    out = run(**{key: x})
    return list(out.values())[0].argmax(-1)


pred = {"TF float": predict(tf_convert(False)),
        "TF int8": predict(tf_convert(True)),
        "ours int8": predict(ours)}
acc = {k: 100.0 * float((v == test_y).mean()) for k, v in pred.items()}
flips = int((pred["TF int8"] != pred["ours int8"]).sum())
t.diag("accuracy on %d Fashion-MNIST test images (LiteRT): TF float "
       "%.2f%%, TF int8 %.2f%%, ours int8 %.2f%%; the two int8 models "
       "disagree on %d images" % (N_TEST, acc["TF float"], acc["TF int8"],
                                  acc["ours int8"], flips))
t.ok(acc["TF float"] > 60, "the trained CNN is a classifier (TF float "
     "%.2f%%)" % acc["TF float"])
t.ok(acc["ours int8"] >= acc["TF int8"] - 1.0,
     "our int8 model is no more than 1 point below TF's int8 model "
     "(%.2f%% vs %.2f%%)" % (acc["ours int8"], acc["TF int8"]))
ev = rep["eval"]
qacc = 100.0 * ev["quantized"]["accuracy"]
t.diag("tfk-lite convert --eval: float %.2f%%, int8 %.2f%% (%d records)" % (
    100.0 * ev["float"]["accuracy"], qacc, ev["records"]))
t.ok(ev["records"] == N_TEST and
     abs(qacc - acc["ours int8"]) <= 100.0 / N_TEST + 1e-9,
     "tfk-lite convert --eval reports LiteRT's accuracy of our int8 "
     "model (%.2f%% vs %.2f%%)" % (qacc, acc["ours int8"]))
t.done()
