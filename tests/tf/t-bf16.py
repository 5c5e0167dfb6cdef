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

t.tool("tfk-train", spec, "tr.tfrecord", "--out", "run", "-q", "-j", "1",
       "--set", "fit.epochs=1", "--set", "model.dtype_policy=mixed_bfloat16",
       "--save-keras", "m.keras")
ours = json.loads(t.tool("tfk-eval", "--json", "-q", "run", "te.tfrecord"))

with gzip.open(F + "/t10k-images-idx3-ubyte.gz") as f:
    x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)
with gzip.open(F + "/t10k-labels-idx1-ubyte.gz") as f:
    y = np.frombuffer(f.read(), np.uint8, offset=8)
x = x[:1000].astype(np.float32) * np.float32(0.00392156862745098)
y = y[:1000].astype(np.int64)

m32 = keras.models.load_model(t.path("m.keras"))
w = m32.get_weights()


def loss_of(policy):
    keras.mixed_precision.set_global_policy(policy)
    m = keras.Sequential([keras.Input((28, 28)), keras.layers.Flatten(),
                          keras.layers.Dense(128, activation="relu"),
                          keras.layers.Dense(10, activation="softmax")])
    m.set_weights(w)
    m.compile(loss="sparse_categorical_crossentropy")
    return float(m.evaluate(x, y, batch_size=32, verbose=0))


k16 = loss_of("mixed_bfloat16")
k32 = loss_of("float32")
t.diag("loss: ours (mixed_bfloat16) %.6f, Keras mixed_bfloat16 %.6f, "
       "Keras float32 %.6f" % (ours["loss"], k16, k32))
t.close(ours["loss"], k16, 1e-3, "our mixed_bfloat16 loss is Keras' "
        "mixed_bfloat16 loss within 1e-3 relative", rel=True)
t.ok(abs(ours["loss"] - k16) < abs(ours["loss"] - k32), "ours is nearer "
     "Keras' mixed_bfloat16 loss than Keras' float32 loss")
t.ok(abs(k16 - k32) > 0, "Keras' bf16 and float32 losses differ (the "
     "policy took effect there)")
t.done()
