"""t-bf16: tfk-train's mixed_bfloat16 against Keras' own.

The MLP example trained one epoch on 2000 Fashion-MNIST images under
--set model.dtype_policy=mixed_bfloat16 and written as a .keras file
(--save-keras); Keras 3 rebuilds the same model under its global
mixed_bfloat16 policy with those weights and evaluates the first 1000
test images. Ours (tfk-eval of the run, which keeps the policy) rounds
MatMul operands to bfloat16 and sums in float32, keeping activations in
float32; Keras also rounds every layer's output, bias add and softmax
input to bfloat16 (8 bits of mantissa: 2^-9 relative each), so the two
losses may differ by a few parts in ten thousand: the bound is 1e-3
relative (seen 6e-5). And ours must be nearer Keras' bf16 loss than
Keras' float32 loss on the same weights is (seen 4.5e-5 against
3.1e-4): the rounding is bf16's, not float32's.

The same for the book CNN (examples/cnn.spec.json: Conv2D 32 5x5
valid, Conv2D 32 5x5 same, MaxPooling2D, Dropout, Flatten, Dense),
whose Conv2D layers and their gradients run in bfloat16 products too
(kernels/cpu/bf16conv.c): one epoch on the same 2000 images, Keras 3
rebuilding it under each policy with our weights; the same 1e-3
relative bound and the same "nearer bf16 than float32" test, on all
10,000 test images: the CNN's bf16 and float32 losses differ less
(2e-5 relative), and on 1000 images the roundings only Keras makes
(every activation, bias add and softmax in bf16: noise that averages
out over images) hid the shift that both make by rounding the same
weights and inputs (which does not average out). Seen: ours 4e-6
(0.741573) from Keras' bf16 loss (0.741570), 1.4e-5 from its float32
loss (0.741583). The margin is thin (the shift depends on the
trained weights); the kernels' own bit-level oracle is
tests/unit/t-bf16conv.c.
"""
import gzip
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from tftap import T  # noqa: E402

t = T()
import keras  # noqa: E402

F = "/usr/share/datasets/fashion-mnist"
root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
spec = os.path.join(root, "examples", "mlp.spec.json")

tr = t.tool("tfk-idx", "-q", "--images", F + "/train-images-idx3-ubyte.gz",
            "--labels", F + "/train-labels-idx1-ubyte.gz")
open(t.path("all.tfrecord"), "wb").write(tr)
open(t.path("tr.tfrecord"), "wb").write(
    t.tool("tfk-cat", "--take", "2000", "all.tfrecord"))
te = t.tool("tfk-idx", "-q", "--images", F + "/t10k-images-idx3-ubyte.gz",
            "--labels", F + "/t10k-labels-idx1-ubyte.gz")
open(t.path("teall.tfrecord"), "wb").write(te)
open(t.path("te.tfrecord"), "wb").write(
    t.tool("tfk-cat", "--take", "1000", "teall.tfrecord"))


with gzip.open(F + "/t10k-images-idx3-ubyte.gz") as f:
    x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
with gzip.open(F + "/t10k-labels-idx1-ubyte.gz") as f:
    y = np.frombuffer(f.read(), np.uint8, offset=8)
x = x.astype(np.float32) * np.float32(0.00392156862745098)
y = y.astype(np.int64)


def mlp():
    return [keras.Input((28, 28)), keras.layers.Flatten(),
            keras.layers.Dense(128, activation="relu"),
            keras.layers.Dense(10, activation="softmax")]


def cnn():
    return [keras.Input((28, 28, 1)),
            keras.layers.Conv2D(32, 5, activation="relu"),
            keras.layers.Conv2D(32, 5, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(2), keras.layers.Dropout(0.5),
            keras.layers.Flatten(),
            keras.layers.Dense(10, activation="softmax")]


def case(name, spec, layers, te, xs, ys):
    t.tool("tfk-train", spec, "tr.tfrecord", "--out", name, "-q", "-j", "1",
           "--set", "fit.epochs=1", "--set",
           "model.dtype_policy=mixed_bfloat16", "--save-keras",
           name + ".keras")
    ours = json.loads(t.tool("tfk-eval", "--json", "-q", name,
                             te))["loss"]
    keras.mixed_precision.set_global_policy("float32")
    w = keras.models.load_model(t.path(name + ".keras")).get_weights()

    def loss_of(policy):
        keras.mixed_precision.set_global_policy(policy)
        m = keras.Sequential(layers())
        m.set_weights(w)
        m.compile(loss="sparse_categorical_crossentropy")
        return float(m.evaluate(xs, ys, batch_size=32, verbose=0))

    k16 = loss_of("mixed_bfloat16")
    k32 = loss_of("float32")
    keras.mixed_precision.set_global_policy("float32")
    t.diag("%s loss: ours (mixed_bfloat16) %.6f, Keras mixed_bfloat16 %.6f, "
           "Keras float32 %.6f" % (name, ours, k16, k32))
    t.close(ours, k16, 1e-3, "%s: our mixed_bfloat16 loss is Keras' "
            "mixed_bfloat16 loss within 1e-3 relative" % name, rel=True)
    t.ok(abs(ours - k16) < abs(ours - k32), "%s: ours is nearer Keras' "
         "mixed_bfloat16 loss than Keras' float32 loss" % name)
    t.ok(abs(k16 - k32) > 0, "%s: Keras' bf16 and float32 losses differ "
         "(the policy took effect there)" % name)


case("mlp", spec, mlp, "te.tfrecord", x[:1000], y[:1000])
case("cnn", os.path.join(root, "examples", "cnn.spec.json"), cnn,
     "teall.tfrecord", x[..., None], y)
t.done()
