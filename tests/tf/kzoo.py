"""kzoo: the Keras model zoo of the TensorFlow tier (tests/tf/t-keras.py).

Each entry builds one small model with the Keras API it is given (the
module `keras` for Keras 3 or `tf_keras` for Keras 2: the same layer
calls serve both), and draws tiny data for it. Input layers are named
after the Example features that feed them; the label feature is
"label" (class ids for a sparse loss, floats otherwise), or, for a
model with several outputs, the feature named as each output (the
default of tfk-spec(5)'s per-output "labels").

    for z in kzoo.ZOO:
        m = z.build(keras)            # uncompiled, weights from the seed
        x, y = z.data(rng, n)         # x: {input name: array}, y: array
                                      # (several outputs: {output: array})
        m.compile(loss=z.loss, loss_weights=z.loss_weights,
                  metrics=z.metrics)  # the last two may be None

Models the trainer cannot take are in LEFT with the reason, so the test
says what it does not cover (none at present). Preprocessing layers
inside a model (Rescaling, Normalization, Resizing, CenterCrop) have
entries of their own.
"""
import numpy as np


class Z:
    def __init__(self, name, build, data, loss, batch=4, loss_weights=None,
                 metrics=None):
        self.name = name
        self.build = build
        self.data = data
        self.loss = loss
        self.batch = batch
        self.loss_weights = loss_weights
        self.metrics = metrics


def _img(shape, classes):
    def data(rng, n):
        x = rng.random((n,) + shape, dtype=np.float32)
        return {"x": x}, rng.integers(0, classes, n).astype(np.int64)
    return data


def _seq(t, f, out):
    def data(rng, n):
        x = rng.normal(size=(n, t, f)).astype(np.float32)
        return {"x": x}, rng.normal(size=(n, out)).astype(np.float32)
    return data


def mlp(K):
    # examples/mlp.spec.json's model
    return K.Sequential([
        K.Input((28, 28), name="x"),
        K.layers.Flatten(),
        K.layers.Dense(128, activation="relu"),
        K.layers.Dense(10, activation="softmax")])


def cnn(K):
    # examples/cnn.spec.json's model (the book's CNN)
    return K.Sequential([
        K.Input((28, 28, 1), name="x"),
        K.layers.Conv2D(32, (5, 5), padding="valid", activation="relu"),
        K.layers.Conv2D(32, (5, 5), padding="same", activation="relu"),
        K.layers.MaxPooling2D((2, 2)),
        K.layers.Dropout(0.5),
        K.layers.Flatten(),
        K.layers.Dense(10, activation="softmax")])


def mobilenet(K):
    L = K.layers
    return K.Sequential([
        K.Input((8, 8, 3), name="x"),
        L.Conv2D(8, 3, strides=2, padding="same", use_bias=False),
        L.BatchNormalization(),
        L.ReLU(6.0),
        L.DepthwiseConv2D(3, padding="same", use_bias=False),
        L.BatchNormalization(),
        L.ReLU(6.0),
        L.Conv2D(16, 1, use_bias=False),
        L.BatchNormalization(),
        L.ReLU(6.0),
        L.GlobalAveragePooling2D(),
        L.Dense(3, activation="softmax")])


def residual(K):
    L = K.layers
    x = K.Input((6,), name="x")
    h = L.Dense(6, activation="relu")(x)
    h = L.Dense(6)(h)
    s = L.Add()([x, h])
    s = L.Activation("relu")(s)
    return K.Model(x, L.Dense(2)(s))


def emb_lstm(K):
    L = K.layers
    return K.Sequential([
        K.Input((5,), dtype="int32", name="x"),
        L.Embedding(20, 4),
        L.LSTM(3),
        L.Dense(2, activation="softmax")])


def _tokens(rng, n):
    # each batch of 4 rows holds every token once: Keras 3's Adam squares
    # the gradient of each occurrence of a token apart (IndexedSlices),
    # not their sum as tf_keras and dense Adam do, so repeated tokens in
    # a batch would measure that quirk, not the layers
    x = np.concatenate([rng.permutation(20).reshape(4, 5)
                        for _ in range((n + 3) // 4)])[:n].astype(np.int32)
    return {"x": x}, rng.integers(0, 2, n).astype(np.int64)


def gru(reset_after):
    def build(K):
        return K.Sequential([
            K.Input((5, 3), name="x"),
            K.layers.GRU(4, reset_after=reset_after),
            K.layers.Dense(1)])
    return build


def simple_rnn(K):
    return K.Sequential([
        K.Input((5, 3), name="x"),
        K.layers.SimpleRNN(4),
        K.layers.Dense(1)])


def conv1d(K):
    L = K.layers
    return K.Sequential([
        K.Input((10, 3), name="x"),
        L.Conv1D(4, 3, activation="relu"),
        L.GlobalMaxPooling1D(),
        L.Dense(2, activation="softmax")])


def ln_dropout(K):
    L = K.layers
    return K.Sequential([
        K.Input((6,), name="x"),
        L.Dense(8, activation="tanh"),
        L.LayerNormalization(),
        L.Dropout(0.3),
        L.Dense(1)])


def preproc(K):
    # preprocessing layers inside the model: Rescaling and a
    # Normalization given its mean and variance (not adapted)
    L = K.layers
    return K.Sequential([
        K.Input((6,), name="x"),
        L.Rescaling(0.5, offset=0.25),
        L.Normalization(mean=[0.1, -0.2, 0.3, 0.0, 0.5, -0.4],
                        variance=[1.0, 2.0, 0.5, 4.0, 0.25, 1.5]),
        L.Dense(8, activation="relu"),
        L.Dense(1)])


def preproc_image(K):
    # image preprocessing inside a CNN: Rescaling, Resizing (bilinear;
    # plain, then cropped to the target's aspect), CenterCrop ahead of
    # the convolution
    L = K.layers
    return K.Sequential([
        K.Input((10, 12, 3), name="x"),
        L.Rescaling(1.0 / 255),
        L.Resizing(9, 13),
        L.Resizing(8, 8, crop_to_aspect_ratio=True),
        L.CenterCrop(6, 5),
        L.Conv2D(4, (3, 3), activation="relu"),
        L.GlobalAveragePooling2D(),
        L.Dense(3, activation="softmax")])


def _pixels(rng, n):
    x = rng.integers(0, 256, (n, 10, 12, 3)).astype(np.float32)
    return {"x": x}, rng.integers(0, 3, n).astype(np.int64)


def _vec(rng, n):
    x = rng.normal(size=(n, 6)).astype(np.float32)
    return {"x": x}, rng.normal(size=(n, 1)).astype(np.float32)


def _vec2(rng, n):
    x = rng.normal(size=(n, 6)).astype(np.float32)
    return {"x": x}, rng.normal(size=(n, 2)).astype(np.float32)


def two_heads(K):
    # two inputs, two outputs: a classifier head (softmax, sparse
    # crossentropy) and a regression head (linear, mse) over a shared
    # trunk, weighted {"a": 1.0, "b": 0.2}
    L = K.layers
    xa = K.Input((6,), name="xa")
    xb = K.Input((4,), name="xb")
    h = L.Concatenate()([L.Dense(8, activation="relu")(xa),
                         L.Dense(4, activation="tanh")(xb)])
    a = L.Dense(3, activation="softmax", name="a")(h)
    b = L.Dense(2, name="b")(h)
    return K.Model([xa, xb], [a, b])


def _two(rng, n):
    x = {"xa": rng.normal(size=(n, 6)).astype(np.float32),
         "xb": rng.normal(size=(n, 4)).astype(np.float32)}
    return x, {"a": rng.integers(0, 3, n).astype(np.int64),
               "b": rng.normal(size=(n, 2)).astype(np.float32)}


SCCE = "sparse_categorical_crossentropy"
ZOO = [
    Z("mlp", mlp, _img((28, 28), 10), SCCE),
    Z("cnn", cnn, _img((28, 28, 1), 10), SCCE, batch=2),
    Z("mobilenet-block", mobilenet, _img((8, 8, 3), 3), SCCE),
    Z("residual-add", residual, _vec2, "mse"),
    Z("embedding-lstm", emb_lstm, _tokens, SCCE),
    Z("gru-reset-after", gru(True), _seq(5, 3, 1), "mse"),
    Z("gru-reset-before", gru(False), _seq(5, 3, 1), "mse"),
    Z("simple-rnn", simple_rnn, _seq(5, 3, 1), "mse"),
    Z("conv1d-gmp", conv1d, _img((10, 3), 2), SCCE),
    Z("layernorm-dropout", ln_dropout, _vec, "mse"),
    Z("preprocessing-inside", preproc, _vec, "mse"),
    Z("image-preprocessing-inside", preproc_image, _pixels, SCCE),
    Z("two-input-two-output", two_heads, _two, {"a": SCCE, "b": "mse"},
      loss_weights={"a": 1.0, "b": 0.2},
      metrics={"a": ["accuracy"], "b": ["mae"]}),
]

LEFT = []
