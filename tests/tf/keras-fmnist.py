"""keras-fmnist: one epoch of the examples' MLP and CNN on Fashion-MNIST,
tfk-train against Keras 3 fit() with the same settings (opt-in: minutes
of CPU, not part of make check).

    TFK_BIN=bin ~/.cache/tfkit/tfenv/bin/python tests/tf/keras-fmnist.py
    FMNIST_N=2000 ... (fewer training images, to check that it runs)

Both start from the same weights (Keras' initial ones, saved as .keras
and given to tfk-train --init-from) and train one epoch of Adam(1e-3),
batch 32, over the training images in the file's order (shuffle off in
both: each shuffles its own way by design, and one epoch's accuracy
moves by a point or more with the order alone), then are evaluated on
the 10,000 test images. The CNN's Dropout masks still differ. Prints one JSON object with both
test accuracies, their difference in points and the wall times (noisy
on a shared machine). Exit 1 when the accuracies differ by more than
0.5 points on the full data set.
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(__file__))
import kzoo  # noqa: E402
import keras  # noqa: E402

FM = "/usr/share/datasets/fashion-mnist"
BIN = os.environ.get("TFK_BIN", "bin")
N = int(os.environ.get("FMNIST_N", "60000"))


def idx(name):
    with gzip.open(os.path.join(FM, name)) as f:
        data = f.read()
    if name.find("images") >= 0:
        return np.frombuffer(data, np.uint8, offset=16).reshape(-1, 28, 28)
    return np.frombuffer(data, np.uint8, offset=8).astype(np.int64)


def tool(*args, out=None):
    return subprocess.run([os.path.join(BIN, args[0])] + list(args[1:]),
                          check=True, stdout=out or subprocess.PIPE).stdout


def main():
    tmp = tempfile.mkdtemp(prefix="tfk-fmnist-")
    xtr, ytr = idx("train-images-idx3-ubyte.gz")[:N], idx(
        "train-labels-idx1-ubyte.gz")[:N]
    xte, yte = idx("t10k-images-idx3-ubyte.gz"), idx(
        "t10k-labels-idx1-ubyte.gz")
    tr, te = os.path.join(tmp, "train.tfrecord"), os.path.join(
        tmp, "test.tfrecord")
    for path, img, lab, n in (
            (tr, "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
             N), (te, "t10k-images-idx3-ubyte.gz",
                  "t10k-labels-idx1-ubyte.gz", 10000)):
        recs = tool("tfk-idx", "-q", "--images", os.path.join(FM, img),
                    "--labels", os.path.join(FM, lab))
        with open(path, "wb") as f:
            f.write(subprocess.run([os.path.join(BIN, "tfk-cat"), "--take",
                                    str(n)], input=recs, check=True,
                                   stdout=subprocess.PIPE).stdout)
    res = {"train_images": N}
    worst = 0.0
    for name, build, shape in (("mlp", kzoo.mlp, (28, 28)),
                               ("cnn", kzoo.cnn, (28, 28, 1))):
        keras.backend.clear_session()
        keras.utils.set_random_seed(1)
        m = build(keras)
        m.compile(keras.optimizers.Adam(1e-3),
                  "sparse_categorical_crossentropy", metrics=["accuracy"])
        f = os.path.join(tmp, name + ".keras")
        m.save(f)
        spec = {"model": json.loads(m.to_json()),
                "inputs": {"x": {"feature": "image",
                                 "scale": 1 / 255.0}},
                "compile": {"optimizer": {"class_name": "Adam", "config": {
                    "learning_rate": 1e-3}},
                    "loss": "sparse_categorical_crossentropy",
                    "metrics": ["accuracy"]},
                "fit": {"epochs": 1, "batch_size": 32, "shuffle": False}}
        sp = os.path.join(tmp, name + ".json")
        with open(sp, "w") as fo:
            json.dump(spec, fo)
        t0 = time.time()
        tool("tfk-train", sp, "--init-from", f, "--out",
             os.path.join(tmp, name), "-q", tr)
        ours_s = time.time() - t0
        ours = json.loads(tool("tfk-eval", "--json", "-q",
                               os.path.join(tmp, name), te))["accuracy"]
        t0 = time.time()
        m.fit(xtr.reshape((-1,) + shape) / np.float32(255), ytr,
              batch_size=32, epochs=1, shuffle=False, verbose=0)
        keras_s = time.time() - t0
        k = m.evaluate(xte.reshape((-1,) + shape) / np.float32(255), yte,
                       verbose=0)[1]
        d = 100 * (ours - k)
        worst = max(worst, abs(d))
        res[name] = {"tfkit_accuracy": round(ours, 4),
                     "keras_accuracy": round(k, 4),
                     "difference_points": round(d, 2),
                     "tfkit_train_s": round(ours_s, 1),
                     "keras_fit_s": round(keras_s, 1)}
    print(json.dumps(res))
    return 1 if N == 60000 and worst > 0.5 else 0


if __name__ == "__main__":
    sys.exit(main())
