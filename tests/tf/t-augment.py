"""t-augment: Keras' image augmentation layers inside a model, judged by
Keras and TensorFlow (issue "Checked by TensorFlow itself", defects).

 - A Keras 3 model with RandomFlip, RandomRotation, RandomZoom,
   RandomTranslation, RandomContrast, RandomBrightness (and one with
   RandomCrop) goes to tfk-train as model.to_json() wrote it, trains
   (the loss falls), and its SavedModel, loaded by TensorFlow, serves
   what Keras' predict() gives with the same weights: the layers are the
   identity at inference, so also what the model without them gives.
   RandomCrop at inference is the centred crop-and-resize that Keras
   documents and tf_keras does (Keras 3.15 returns the image uncropped,
   which breaks the Dense after it): tf_keras is the oracle there.
 - Training mode: with SGD at learning rate 0 the first epoch's loss is
   the loss of the training-branch outputs at the exported weights.
   Where Keras is deterministic (a factor [a, a]) that loss equals the
   loss of Keras' model(x, training=True) with those weights; where it
   is random (flips, crop windows, contrast), every epoch's loss is one
   that Keras' transform can give, and more than one value occurs.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tftap import T  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
import tf_keras  # noqa: E402

t = T()
rng = np.random.default_rng(11)
L = keras.layers


def write_records(path, imgs, labels):
    with tf.io.TFRecordWriter(path) as w:
        for img, y in zip(imgs, labels):
            y = np.asarray(y)
            lab = (tf.train.Feature(int64_list=tf.train.Int64List(
                value=[int(y)])) if y.dtype.kind in "iu" else
                tf.train.Feature(float_list=tf.train.FloatList(
                    value=y.ravel().tolist())))
            w.write(tf.train.Example(features=tf.train.Features(feature={
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[img.tobytes()])),
                "y": lab})).SerializeToString())


def train(name, model, imgs, labels, compile_, fit, *extra):
    spec = {"model": json.loads(model.to_json()),
            "inputs": {"image": {"feature": "image", "scale": 1 / 255}},
            "labels": {"feature": "y"}, "compile": compile_, "fit": fit}
    sp = t.path(name + ".json")
    with open(sp, "w") as fo:
        json.dump(spec, fo)
    rec = t.path(name + ".tfrecord")
    write_records(rec, imgs, labels)
    d = t.path("run-" + name)
    hist = json.loads(t.tool("tfk-train", sp, rec, "--out", d, "-q", "-j1",
                             "--json", *extra))
    return d, hist["history"]["loss"]


def weights(d):
    r = tf.train.load_checkpoint(os.path.join(d, "variables", "variables"))
    return [r.get_tensor("dense/kernel"), r.get_tensor("dense/bias")]


def serve(d, x):
    f = tf.saved_model.load(d).signatures["serving_default"]
    return list(f(image=tf.constant(x)).values())[0].numpy()


def seq(shape, layers, units=3, act="softmax", lib=keras):
    return lib.Sequential([lib.Input(shape, name="image")] + layers +
                          [lib.layers.Flatten(),
                           lib.layers.Dense(units, activation=act,
                                            name="dense")])


ADAM = {"optimizer": "adam", "loss": "sparse_categorical_crossentropy"}
FIT = {"epochs": 4, "batch_size": 8}

# three classes of 8x8 images, told apart by brightness
n = 48
ys = np.arange(n) % 3
imgs = (rng.integers(0, 70, (n, 8, 8, 1)) + 90 * ys[:, None, None, None]
        ).astype(np.uint8)
xq = rng.integers(0, 256, (5, 8, 8, 1)).astype(np.float32) / 255

# 1. The layers train and are the identity in the export ---------------------

AUG = [L.RandomFlip("horizontal"), L.RandomRotation(0.1),
       L.RandomZoom(0.1, 0.2), L.RandomTranslation(0.1, 0.1),
       L.RandomContrast(0.2), L.RandomBrightness(0.1, value_range=(0, 1))]
m = seq((8, 8, 1), AUG)
d, loss = train("all", m, imgs, ys, ADAM, FIT)
t.ok(loss[-1] < loss[0], "six augmentation layers from Keras 3's to_json "
     "train unchanged: loss %.4f -> %.4f" % (loss[0], loss[-1]))
w = weights(d)
m.set_weights(w)
got = serve(d, xq)
t.close(got, m.predict(xq, verbose=0), 1e-5,
        "the SavedModel in TF serves Keras' predict() with the same weights")
plain = seq((8, 8, 1), [])
plain.set_weights(w)
t.close(got, plain.predict(xq, verbose=0), 1e-5,
        "... which is the model without the augmentation layers")

x86 = rng.integers(0, 256, (5, 8, 6, 1)).astype(np.float32) / 255
mc = seq((8, 6, 1), [L.RandomCrop(4, 4)])
imgs86 = imgs[:, :, 1:7]
d, loss = train("crop", mc, imgs86, ys, ADAM, FIT)
t.ok(loss[-1] < loss[0], "RandomCrop trains: loss %.4f -> %.4f" %
     (loss[0], loss[-1]))
tk = seq((8, 6, 1), [tf_keras.layers.RandomCrop(4, 4)], lib=tf_keras)
tk.set_weights(weights(d))
t.close(serve(d, x86), tk.predict(x86, verbose=0), 1e-5,
        "RandomCrop(4, 4) on 8x6 at inference: tf_keras' centred crop and "
        "resize")

# 2. Training mode, at learning rate 0 ---------------------------------------

SGD0 = {"optimizer": {"class_name": "SGD", "config": {"learning_rate": 0.0}},
        "loss": "mse"}
x4 = imgs[:4]
y4 = rng.normal(size=(4, 3)).astype(np.float32)


def keras_loss(model, x, y, training=True):
    out = model(x.astype(np.float32) / 255, training=training).numpy()
    return float(np.mean(np.mean((out - y) ** 2, axis=-1)))


DET = [
    ("RandomRotation factor [0.1, 0.1] (36 degrees, reflect, bilinear)",
     L.RandomRotation((0.1, 0.1))),
    ("RandomRotation factor [-0.25, -0.25], constant fill 0.3, nearest",
     L.RandomRotation((-0.25, -0.25), fill_mode="constant", fill_value=0.3,
                      interpolation="nearest")),
    ("RandomZoom [0.3, 0.3] x [-0.2, -0.2], constant",
     L.RandomZoom((0.3, 0.3), (-0.2, -0.2), fill_mode="constant")),
    ("RandomZoom [-0.25, -0.25], no width_factor, nearest fill",
     L.RandomZoom((-0.25, -0.25), fill_mode="nearest")),
    ("RandomTranslation [0.25, 0.25] x [-0.125, -0.125], wrap",
     L.RandomTranslation((0.25, 0.25), (-0.125, -0.125), fill_mode="wrap")),
    ("RandomBrightness [0.1, 0.1], value_range [0, 1]",
     L.RandomBrightness((0.1, 0.1), value_range=(0, 1))),
    ("RandomBrightness [-0.3, -0.3] on [0, 255] (clipped)",
     L.RandomBrightness((-0.3, -0.3))),
]
for i, (what, layer) in enumerate(DET):
    m = seq((8, 8, 1), [layer], act="linear")
    d, loss = train("det%d" % i, m, x4, y4, SGD0,
                    {"epochs": 1, "batch_size": 4, "shuffle": False})
    m.set_weights(weights(d))
    want = keras_loss(m, x4, y4)
    t.close(loss[0], want, 1e-5, "training mode, %s: Keras' loss %.6f "
            "(inference %.6f)" % (what, want, keras_loss(m, x4, y4, False)))

EPOCHS = 24
FIT1 = {"epochs": EPOCHS, "batch_size": 1}
x1, y1 = imgs[:1], y4[:1]


def one_of(loss, cands, what):
    cands = np.asarray(cands)
    near = [int(np.argmin(np.abs(cands - v))) for v in loss]
    fit = all(abs(cands[k] - v) <= 1e-5 * max(1, abs(v))
              for k, v in zip(near, loss))
    if not fit:
        t.diag("losses %s, candidates %s" % (loss, cands))
    return t.ok(fit and len(set(near)) > 1, "%s: each of %d epochs' losses "
                "is one Keras' transform gives; %d of them seen" %
                (what, EPOCHS, len(set(near))))


for mode, f in (("horizontal", lambda a: a[:, :, ::-1]),
                ("horizontal_and_vertical", lambda a: a[:, ::-1, ::-1])):
    m = seq((8, 8, 1), [L.RandomFlip(mode)], act="linear")
    d, loss = train("flip-" + mode, m, x1, y1, SGD0, FIT1)
    m.set_weights(weights(d))
    # Keras' own flip of the image, as its layer does it
    flipped = keras.layers.RandomFlip(mode)(
        x1.astype(np.float32), training=True).numpy()
    cands = [keras_loss(m, x1, y1, False),
             keras_loss(m, np.ascontiguousarray(f(x1)), y1, False)]
    t.ok(np.array_equal(flipped, x1) or np.array_equal(flipped, f(x1)),
         "Keras' RandomFlip(%s) is identity or %s" % (mode, "a mirror"))
    one_of(loss, cands, "RandomFlip(%s)" % mode)

m = seq((8, 8, 1), [L.RandomCrop(6, 6)], act="linear")
d, loss = train("rcrop", m, x1, y1, SGD0, FIT1)
m.set_weights(weights(d))
win = [seq((6, 6, 1), [], act="linear") for _ in range(1)][0]
win.set_weights(weights(d))
cands = [keras_loss(win, x1[:, i:i + 6, j:j + 6], y1, False)
         for i in range(3) for j in range(3)]
one_of(loss, cands, "RandomCrop(6, 6) on 8x8 (the 9 windows)")

m = seq((8, 8, 1), [L.RandomContrast(0.5)], act="linear")
d, loss = train("contrast", m, x1, y1, SGD0, FIT1)
m.set_weights(weights(d))
k, b = weights(d)
x = x1.astype(np.float32) / 255
mean = x.mean(axis=(1, 2), keepdims=True)
# Keras 3: factor 0.5 means [0, 0.5], a contrast factor in [1, 1.5)
# then clipped to value_range [0, 255]: the low end bites on [0, 1] data
lg = [float(np.mean((np.clip((x - mean) * f + mean, 0, 255).reshape(1, -1)
                     @ k + b - y1) ** 2)) for f in np.linspace(1, 1.5, 2001)]
lo, hi = min(lg), max(lg)
inside = all(lo - 1e-5 * abs(lo) <= v <= hi + 1e-5 * abs(hi) for v in loss)
if not inside:
    t.diag("losses %s outside [%g, %g]" % (loss, lo, hi))
t.ok(inside and len(set(np.round(loss, 6))) > 1,
     "RandomContrast(0.5): every epoch's loss within what factors [1, 1.5) "
     "give, and they vary")

t.done()
