"""t-preprocess: Keras 3's preprocessing layers as the judge of tfk-map's
and tfk-train's (issue "Checked by TensorFlow itself", item 2).

For each layer tfk-map offers, Keras builds the layer from a config,
get_config() gives the JSON tfk-map is handed unchanged, and both run on
the same records: integers and lookups must be equal, floats within
1e-6. `tfk-map --adapt` must learn what
Keras' adapt learns on the same data: the vocabulary (order, OOV/mask
tokens, max_tokens, ties), idf weights, mean and variance, bin
boundaries.

Random layers: Keras' RNG cannot be matched (ours is Philox keyed by
--seed and the record), so only their deterministic parts are checked:
factor 0 / full-size crops give Keras' training-mode output (the
identity), and RandomFlip's output is either the image or Keras' flip of
it, both seen.

Then tfk-train: a model whose TextVectorization, StringLookup,
Normalization and Discretization have no vocabulary or statistics trains
without a vocabulary file (tfk-train adapts them from the training
records); the export loads in tf.saved_model.load, its vocabulary asset
and outputs are Keras' (the same model adapted by Keras, constant
weights, learning rate 0 so training keeps them).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tftap import T  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

t = T()
rng = np.random.default_rng(11)
N = 24
F = np.float32

WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", "far", "a", "b",
         "Cat", "DOG", "x-y", "é", "hello,", "world!"]


def text(i):
    k = int(rng.integers(0, 9))
    return " ".join(rng.choice(WORDS, size=k)) + ("  " if i % 3 else ".")


imgs = rng.integers(0, 256, size=(N, 8, 10, 3), dtype=np.uint8)
xs = rng.normal(3.0, 2.0, size=(N, 4)).astype(F)
strs = [[str(w) for w in rng.choice(WORDS[:10], size=3)] for _ in range(N)]
ints = rng.integers(0, 12, size=(N, 3)).astype(np.int64)
ids = rng.integers(0, 6, size=(N, 3)).astype(np.int64)
texts = [text(i) for i in range(N)]
vals = rng.normal(0, 3, size=(N, 5)).astype(F)


def feat_bytes(vs):
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=vs))


def feat_float(vs):
    return tf.train.Feature(float_list=tf.train.FloatList(value=vs))


def feat_int(vs):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=vs))


DATA = t.path("in.tfrecord")
with tf.io.TFRecordWriter(DATA) as w:
    for i in range(N):
        ex = tf.train.Example(features=tf.train.Features(feature={
            "img": feat_bytes([imgs[i].tobytes()]),
            "x": feat_float(xs[i].tolist()),
            "s": feat_bytes([v.encode() for v in strs[i]]),
            "i": feat_int(ints[i].tolist()),
            "id": feat_int(ids[i].tolist()),
            "txt": feat_bytes([texts[i].encode()]),
            "v": feat_float(vals[i].tolist()),
            "label": feat_int([i % 2]),
            "yf": feat_float([float(i % 3)]),
        }))
        w.write(ex.SerializeToString())


def layer_json(layer):
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def spec_for(feature, layers, shape=None):
    chain = {"layers": [layer_json(la) for la in layers], "output": "out"}
    if shape:
        chain["shape"] = shape
    return {"features": {feature: chain}}


def tfk_map(spec, *extra, check=True):
    p = t.path("spec-%d.json" % t.n)
    with open(p, "w") as f:
        json.dump(spec, f)
    out = t.path("out-%d.tfrecord" % t.n)
    rc, _, err = t.run("tfk-map", p, DATA, "-o", out, *extra, check=False)
    if rc:
        if check:
            t.diag("tfk-map: exit %d: %s" % (rc, err))
        return None
    res = []
    for r in tf.data.TFRecordDataset(out):
        ex = tf.train.Example.FromString(r.numpy())
        fe = ex.features.feature["out"]
        kind = fe.WhichOneof("kind")
        v = np.array(getattr(fe, kind).value)
        if "out/shape" in ex.features.feature:
            v = v.reshape(ex.features.feature["out/shape"].int64_list.value)
        res.append(v)
    return res


def tfk_adapt(spec):
    p = t.path("spec-%d.json" % t.n)
    with open(p, "w") as f:
        json.dump(spec, f)
    out = t.path("adapted-%d.json" % t.n)
    rc, _, err = t.run("tfk-map", "--adapt", p, DATA, "-o", out,
                       check=False)
    if rc:
        t.diag("tfk-map --adapt: exit %d: %s" % (rc, err))
        return None
    with open(out) as f:
        s = json.load(f)
    return list(s["features"].values())[0]["layers"][-1]["config"]


def same(got, want, what, tol=None):
    """got: list of per-record arrays; want: per-record arrays."""
    if got is None:
        return t.ok(False, what)
    want = [np.asarray(w) for w in want]
    if len(got) != len(want) or any(g.shape != w.shape
                                    for g, w in zip(got, want)):
        t.diag("shapes %s, want %s" % ([g.shape for g in got[:3]],
                                       [w.shape for w in want[:3]]))
        return t.ok(False, what)
    if tol is None:
        bad = [i for i, (g, w) in enumerate(zip(got, want))
               if not np.array_equal(g.astype(np.int64), w.astype(np.int64))]
        if bad:
            t.diag("record %d: got %s, want %s" % (bad[0], got[bad[0]],
                                                   want[bad[0]]))
        return t.ok(not bad, what)
    return t.close(np.stack(got), np.stack(want), tol, what)


def per_record(layer, inputs):
    return [np.asarray(layer(tf.constant(x))) for x in inputs]


# Image layers ---------------------------------------------------------------
imgf = imgs.astype(F)


def image_case(layer, what, tol=1e-6, training=False):
    got = tfk_map(spec_for("img", [layer], [8, 10, 3]))
    want = np.asarray(layer(imgf, training=training))
    same(got, list(want), what, tol)


image_case(keras.layers.Rescaling(scale=1 / 127.5, offset=-1),
           "Rescaling scale 1/127.5 offset -1")
image_case(keras.layers.Rescaling(scale=[0.5, 0.25, 2.0], offset=1.0),
           "Rescaling per-channel scale")
for interp, tol in (("bilinear", 1e-6), ("nearest", 0), ("bicubic", 1e-6),
                    ("area", 1e-6)):
    for crop in (False, True):
        for hw in ((5, 7), (12, 9)):
            la = keras.layers.Resizing(hw[0], hw[1], interpolation=interp,
                                       crop_to_aspect_ratio=crop)
            got = tfk_map(spec_for("img", [la], [8, 10, 3]))
            want = np.asarray(la(imgf))
            same(got, list(want), "Resizing %s %dx%d crop_to_aspect_ratio "
                 "%s" % (interp, hw[0], hw[1], crop), tol or None)
for interp in ("lanczos3", "lanczos5"):
    p = t.path("lanczos.json")
    with open(p, "w") as f:
        json.dump(spec_for("img", [keras.layers.Resizing(
            4, 4, interpolation=interp)], [8, 10, 3]), f)
    rc, _, err = t.run("tfk-map", p, DATA, "-o", t.path("l.rec"),
                       check=False)
    t.ok(rc == 1 and "config.interpolation: expected" in err and
         not os.path.exists(t.path("l.rec")),
         "Resizing %s: refused by its JSON path, exit 1" % interp)
image_case(keras.layers.CenterCrop(4, 6), "CenterCrop 4x6")
image_case(keras.layers.CenterCrop(10, 12), "CenterCrop larger than the "
           "image (Keras resizes)", 1e-6)
for la, what in (
        (keras.layers.RandomRotation(0.0), "RandomRotation factor 0"),
        (keras.layers.RandomZoom(0.0), "RandomZoom factor 0"),
        (keras.layers.RandomTranslation(0.0, 0.0),
         "RandomTranslation factor 0"),
        (keras.layers.RandomContrast(0.0), "RandomContrast factor 0"),
        (keras.layers.RandomCrop(8, 10), "RandomCrop of the full size")):
    image_case(la, what + ", training mode", 1e-6, training=True)
got = tfk_map(spec_for("img", [keras.layers.RandomFlip("horizontal")],
                       [8, 10, 3]), "--seed", "3")
flips = []
for i, g in enumerate(got or []):
    if np.array_equal(g, imgf[i]):
        flips.append(0)
    elif np.array_equal(g, imgf[i][:, ::-1]):
        flips.append(1)
t.ok(got and len(flips) == N and 0 < sum(flips) < N,
     "RandomFlip horizontal: each record the image or np.fliplr (%d of %d "
     "flipped)" % (sum(flips), N))

# Normalization --------------------------------------------------------------
la = keras.layers.Normalization(mean=[1, 2, 3, 4], variance=[4, 1, .25, 9])
same(tfk_map(spec_for("x", [la])), per_record(la, xs), "Normalization "
     "given mean and variance", 1e-6)
la = keras.layers.Normalization(mean=[1, 2, 3, 4], variance=[4, 1, .25, 9],
                                invert=True)
same(tfk_map(spec_for("x", [la])), per_record(la, xs), "Normalization "
     "invert", 1e-6)
la = keras.layers.Normalization(axis=-1)
cfg = tfk_adapt(spec_for("x", [la]))
la.adapt(xs)
if cfg:
    t.close(np.array(cfg["mean"]), np.asarray(la.mean).ravel(), 1e-6,
            "Normalization adapt: Keras' mean")
    t.close(np.array(cfg["variance"]), np.asarray(la.variance).ravel(),
            1e-6, "Normalization adapt: Keras' variance")
else:
    t.ok(False, "Normalization adapt")
la = keras.layers.Normalization(axis=None)
cfg = tfk_adapt(spec_for("x", [la]))
la.adapt(xs)
t.ok(cfg and np.allclose(cfg["mean"], np.asarray(la.mean).ravel(), atol=1e-6)
     and np.allclose(cfg["variance"], np.asarray(la.variance).ravel(),
                     atol=1e-6), "Normalization axis None adapt: one mean "
     "and variance, Keras'")
imgn = keras.layers.Normalization(axis=-1)
cfg = tfk_adapt({"features": {"img": {"shape": [8, 10, 3], "layers": [
    layer_json(keras.layers.Rescaling(1 / 255.)), layer_json(imgn)]}}})
imgn.adapt(keras.layers.Rescaling(1 / 255.)(imgf))
t.ok(cfg and np.allclose(cfg["mean"], np.asarray(imgn.mean).ravel(),
                         atol=1e-6) and
     np.allclose(cfg["variance"], np.asarray(imgn.variance).ravel(),
                 atol=1e-6), "Normalization after Rescaling on images: "
     "per-channel statistics, Keras'")

# Lookups --------------------------------------------------------------------
sv = ["the", "cat", "sat", "on", "mat"]
for kw in ({}, {"num_oov_indices": 2}, {"mask_token": "", "oov_token": "?"},
           {"output_mode": "multi_hot"}, {"output_mode": "count"},
           {"output_mode": "one_hot", "num_oov_indices": 1},
           {"output_mode": "tf_idf", "idf_weights": [.5, 1, 1.5, 2, 2.5]},
           {"output_mode": "count", "max_tokens": 9,
            "pad_to_max_tokens": True}):
    la = keras.layers.StringLookup(vocabulary=sv, **kw)
    inputs = [np.array(s) for s in strs]
    tol = 1e-6 if kw.get("output_mode") == "tf_idf" else None
    same(tfk_map(spec_for("s", [la])), per_record(la, inputs),
         "StringLookup %s" % (kw or "defaults"), tol)
iv = [3, 1, 4, 5, 9, 2]
for kw in ({}, {"num_oov_indices": 0, "vocabulary": [0, 1, 2, 3, 4, 5, 6, 7,
                                                     8, 9, 10, 11]},
           {"mask_token": 0, "vocabulary": [3, 1, 4]},
           {"output_mode": "multi_hot"}, {"output_mode": "count"},
           {"output_mode": "one_hot"},
           {"output_mode": "multi_hot", "max_tokens": 10,
            "pad_to_max_tokens": True}):
    args = dict(kw)
    args.setdefault("vocabulary", iv)
    la = keras.layers.IntegerLookup(**args)
    same(tfk_map(spec_for("i", [la])), per_record(la, ints),
         "IntegerLookup %s" % (kw or "defaults"))

# adapt: vocabulary order, ties, max_tokens, special tokens
corpus = np.array(strs)
for kw in ({}, {"max_tokens": 6}, {"mask_token": "", "num_oov_indices": 2},
           {"output_mode": "tf_idf"}):
    la = keras.layers.StringLookup(**kw)
    cfg = tfk_adapt(spec_for("s", [la]))
    la.adapt(corpus)
    good = cfg is not None and cfg["vocabulary"] == la.get_vocabulary()
    if cfg and not good:
        t.diag("got  %s\nwant %s" % (cfg["vocabulary"], la.get_vocabulary()))
    t.ok(good, "StringLookup adapt %s: Keras' get_vocabulary()" % kw)
    if kw.get("output_mode") == "tf_idf" and cfg:
        t.close(np.array(cfg["idf_weights"]),
                np.asarray(la.idf_weights_const), 1e-6,
                "StringLookup tf_idf adapt: Keras' idf weights")
for kw in ({}, {"max_tokens": 5}, {"mask_token": 0}):
    la = keras.layers.IntegerLookup(**kw)
    cfg = tfk_adapt(spec_for("i", [la]))
    la.adapt(ints)
    good = cfg is not None and cfg["vocabulary"] == \
        [int(v) for v in la.get_vocabulary()]
    if cfg and not good:
        t.diag("got  %s\nwant %s" % (cfg["vocabulary"], la.get_vocabulary()))
    t.ok(good, "IntegerLookup adapt %s: Keras' get_vocabulary()" % kw)

# Hashing, Discretization, CategoryEncoding ----------------------------------
for kw in ({"num_bins": 7}, {"num_bins": 1}, {"num_bins": 5, "salt": 133},
           {"num_bins": 9, "salt": [1, 2]}, {"num_bins": 4, "mask_value": "cat"},
           {"num_bins": 6, "output_mode": "multi_hot"},
           {"num_bins": 6, "output_mode": "count"},
           {"num_bins": 6, "output_mode": "one_hot"}):
    la = keras.layers.Hashing(**kw)
    same(tfk_map(spec_for("s", [la])), per_record(la, [np.array(s)
                                                      for s in strs]),
         "Hashing strings %s" % kw)
for kw in ({"num_bins": 7}, {"num_bins": 5, "salt": 42}):
    la = keras.layers.Hashing(**kw)
    same(tfk_map(spec_for("i", [la])), per_record(la, ints),
         "Hashing int64 %s" % kw)
bb = [-2.0, -0.5, 0.0, 1.0, 3.5]
for kw in ({}, {"output_mode": "one_hot"}, {"output_mode": "multi_hot"},
           {"output_mode": "count"}):
    la = keras.layers.Discretization(bin_boundaries=bb, **kw)
    same(tfk_map(spec_for("v", [la])), per_record(la, vals),
         "Discretization %s" % (kw or "int"))
for kw in ({"num_bins": 4}, {"num_bins": 7, "epsilon": 0.001}):
    la = keras.layers.Discretization(**kw)
    cfg = tfk_adapt(spec_for("v", [la]))
    la.adapt(tf.data.Dataset.from_tensor_slices(vals))
    want = [float(b) for b in la.bin_boundaries]
    good = cfg is not None and np.allclose(cfg["bin_boundaries"], want,
                                           atol=1e-6) and \
        len(cfg["bin_boundaries"]) == len(want)
    if cfg and not good:
        t.diag("got  %s\nwant %s" % (cfg["bin_boundaries"], want))
    t.ok(good, "Discretization adapt %s: Keras' boundaries" % kw)
for mode in ("one_hot", "multi_hot", "count"):
    la = keras.layers.CategoryEncoding(num_tokens=6, output_mode=mode)
    want = per_record(la, list(ids))
    same(tfk_map(spec_for("id", [la])), want, "CategoryEncoding %s" % mode)

# TextVectorization ----------------------------------------------------------
tv_cases = [
    dict(output_sequence_length=6),
    dict(standardize="lower", output_sequence_length=5),
    dict(standardize=None, output_sequence_length=7),
    dict(standardize="strip_punctuation", output_sequence_length=4),
    dict(split=None, output_sequence_length=1),
    dict(ngrams=2, output_sequence_length=8),
    dict(ngrams=(1, 3), output_mode="multi_hot"),
    dict(output_mode="count", max_tokens=8),
    dict(output_mode="tf_idf"),
    dict(output_mode="multi_hot", max_tokens=30, pad_to_max_tokens=True),
    dict(output_mode="tf_idf", max_tokens=40, pad_to_max_tokens=True),
]
corpus = np.array(texts)
for kw in tv_cases:
    la = keras.layers.TextVectorization(**kw)
    la.adapt(corpus)
    jl = layer_json(la)
    idf = None
    if kw.get("output_mode") == "tf_idf":
        # idf_weights_const is padded with zeros to max_tokens
        idf = np.asarray(la._lookup_layer.idf_weights_const)[
            :len(la.get_vocabulary())]
        jl["config"]["vocabulary"] = la.get_vocabulary()[1:]
        jl["config"]["idf_weights"] = [float(v) for v in idf[1:]]
    else:
        jl["config"]["vocabulary"] = la.get_vocabulary()
    want = [np.asarray(la(tf.constant([s])))[0].reshape(-1) for s in texts]
    got = tfk_map({"features": {"txt": {"layers": [jl], "output": "out"}}},
                  check=True)
    tol = 1e-6 if kw.get("output_mode") == "tf_idf" else None
    same(got, want, "TextVectorization %s" % kw, tol)
    # and --adapt learns the vocabulary (and idf) Keras learned
    fresh = layer_json(keras.layers.TextVectorization(**kw))
    cfg = tfk_adapt({"features": {"txt": {"layers": [fresh]}}})
    good = cfg is not None and cfg["vocabulary"] == la.get_vocabulary()
    if cfg and not good:
        t.diag("got  %s\nwant %s" % (cfg["vocabulary"], la.get_vocabulary()))
    t.ok(good, "TextVectorization adapt %s: Keras' vocabulary" % kw)
    if kw.get("output_mode") == "tf_idf" and cfg:
        t.close(np.array(cfg["idf_weights"]), idf, 1e-6, "TextVectorization tf_idf adapt: Keras' idf weights")

# tfk-train adapts the model's layers --------------------------------------
def train_model():
    it = keras.Input(shape=(1,), dtype="string", name="txt")
    is_ = keras.Input(shape=(3,), dtype="string", name="s")
    ix = keras.Input(shape=(4,), name="x")
    iv_ = keras.Input(shape=(5,), name="v")
    tv = keras.layers.TextVectorization(output_sequence_length=6,
                                        max_tokens=12, name="tv")
    sl = keras.layers.StringLookup(output_mode="count", name="sl")
    nm = keras.layers.Normalization(name="nm")
    ds = keras.layers.Discretization(num_bins=4, output_mode="count",
                                     name="ds")
    # Keras needs the vocabulary sizes to build the Dense: adapt first,
    # and the spec gets the configs without what adapt learned
    tv.adapt(np.array(texts))
    sl.adapt(np.array(strs))
    nm.adapt(xs)
    ds.adapt(tf.data.Dataset.from_tensor_slices(vals))
    e = keras.layers.Flatten()(keras.layers.Embedding(12, 2, name="emb")(
        tv(it)))
    h = keras.layers.Concatenate()([e, sl(is_), nm(ix), ds(iv_)])
    out = keras.layers.Dense(1, kernel_initializer="random_uniform",
                             name="out")(h)
    return keras.Model([it, is_, ix, iv_], out), (tv, sl, nm, ds)


model, (tv, sl, nm, ds) = train_model()
spec = {"model": json.loads(model.to_json()),
        "labels": {"feature": "yf", "dtype": "float32"},
        "compile": {"optimizer": {"class_name": "SGD",
                                  "config": {"learning_rate": 0.01}},
                    "loss": "mean_squared_error"},
        "fit": {"epochs": 1, "batch_size": 8, "shuffle": False}}
for la in spec["model"]["config"]["layers"]:
    # Keras 3.12's InputLayer "optional" (false) and Embedding/Dense
    # "quantization_config" (null): the zoo's keys (item 3), not ours
    if la["config"].get("optional") is False:
        del la["config"]["optional"]
    if "quantization_config" in la["config"] and \
            la["config"]["quantization_config"] is None:
        del la["config"]["quantization_config"]
    for k in ("vocabulary", "idf_weights", "mean", "variance",
              "bin_boundaries"):
        if k in la["config"]:
            la["config"][k] = None
sp = t.path("train.spec.json")
with open(sp, "w") as f:
    json.dump(spec, f)
run = t.path("run")
rc, _, err = t.run("tfk-train", sp, DATA, "-o", run, "-q", check=False)
t.ok(rc == 0, "tfk-train: a model with un-adapted TextVectorization, "
     "StringLookup, Normalization and Discretization trains with no "
     "vocabulary file")
if rc:
    t.diag(err)
else:
    with open(os.path.join(run, "assets.extra", "tfkit_spec.json")) as f:
        learned = {la["config"]["name"]: la["config"]
                   for la in json.load(f)["model"]["config"]["layers"]}
    t.eq(learned["tv"]["vocabulary"], tv.get_vocabulary(),
         "exported spec: TextVectorization vocabulary is Keras adapt's")
    t.eq(learned["sl"]["vocabulary"], sl.get_vocabulary(),
         "exported spec: StringLookup vocabulary is Keras adapt's")
    t.eq([learned["tv"]["vocabulary_size"], learned["sl"]["vocabulary_size"]],
         [tv.get_config()["vocabulary_size"],
          sl.get_config()["vocabulary_size"]],
         "exported spec: vocabulary_size is Keras get_config()'s")
    t.close(learned["nm"]["mean"], np.asarray(nm.mean).ravel(), 1e-6,
            "exported spec: Normalization mean is Keras adapt's")
    t.close(learned["nm"]["variance"], np.asarray(nm.variance).ravel(),
            1e-6, "exported spec: Normalization variance is Keras adapt's")
    t.close(learned["ds"]["bin_boundaries"],
            [float(b) for b in ds.bin_boundaries], 1e-6,
            "exported spec: Discretization boundaries are Keras adapt's")
    assets = os.path.join(run, "assets")
    vocab_files = {}
    for fn in sorted(os.listdir(assets)) if os.path.isdir(assets) else []:
        with open(os.path.join(assets, fn), encoding="utf-8") as f:
            vocab_files[fn] = f.read().split("\n")
    t.ok(any(v[:len(tv.get_vocabulary()) - 2] == tv.get_vocabulary()[2:]
             for v in vocab_files.values()) and
         any(v[:len(sl.get_vocabulary()) - 1] == sl.get_vocabulary()[1:]
             for v in vocab_files.values()),
         "SavedModel assets/: the learned vocabularies, Keras' order (%s)"
         % sorted(vocab_files))
    loaded = tf.saved_model.load(run)
    sig = loaded.signatures["serving_default"]
    ck = tf.train.load_checkpoint(os.path.join(run, "variables",
                                               "variables"))
    byname = {}
    for k in ck.get_variable_to_shape_map():
        for want_k in ("emb/embeddings", "out/kernel", "out/bias"):
            if want_k in k and "optimizer" not in k.lower():
                byname[want_k] = ck.get_tensor(k)
    t.diag("variables: %s" % sorted(ck.get_variable_to_shape_map()))
    model.get_layer("emb").set_weights([byname["emb/embeddings"]])
    model.get_layer("out").set_weights([byname["out/kernel"],
                                        byname["out/bias"]])
    feeds = {"txt": tf.constant([[s] for s in texts]),
             "s": tf.constant(strs), "x": tf.constant(xs),
             "v": tf.constant(vals)}
    got = list(sig(**feeds).values())[0].numpy()
    want = np.asarray(model([feeds["txt"], feeds["s"], feeds["x"],
                             feeds["v"]]))
    t.close(got, want, 1e-5, "tf.saved_model.load: the export's "
            "serving_default equals the Keras model adapted by Keras "
            "(its weights copied)")

t.done()
