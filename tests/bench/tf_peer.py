"""tf_peer.py - the TensorFlow 2.21 peers of the benchmarks.

Run with the TF tier's Python (scripts/tfenv --check prints its
folder); each form prints one JSON line on stdout:

    tf_peer.py train mlp|cnn --spec SPEC [--epochs E] [--steps S] [--seed 1]
                     [--jit-compile]
        Keras 3 `fit` of SPEC's model (examples/MODEL.spec.json's
        "model", built by Keras' from_config; its compile
        section: Adam 1e-3, sparse categorical crossentropy, accuracy)
        on Fashion-MNIST, batch 32, inputs / 255 computed once, the
        whole set in memory in a tf.data pipeline (from_tensor_slices,
        shuffle over all 60,000, batch, prefetch). Timed from the end
        of the first step (tracing and the first step left out, as
        bench-train-*.sh leave ours out) to the end of the last one:
        {"model", "examples", "seconds", "examples_per_s", "rss_kb",
         "accuracy" (the 10,000 test images), "loss"} as torch_train.py.
    tf_peer.py count FILE
        tf.data.TFRecordDataset(FILE, buffer_size 8 MiB) counted by
        Dataset.batch(4096).reduce (in TF's C++, each record's two CRCs
        checked),
        best of 3 after a warm-up: {"records", "seconds", "mb_per_s"}.
    tf_peer.py decode FILE
        FILE's Examples ("image" bytes, "label" int64) read once by
        TFRecordDataset into an in-memory cache(), then batches of 256
        parsed by tf.io.parse_example in a parallel map (AUTOTUNE),
        both values consumed by a reduce; best of 3 passes:
        {"records", "seconds", "records_per_s"}.
    tf_peer.py savedmodel DIR [--seconds 1.5]
        tf.saved_model.load(DIR), then its serving_default signature
        called on a [1, ...] random input in a loop, each call timed,
        after 50 warm-up calls: {"median_us", "p99_us", "load_ms"}.
    tf_peer.py litert FILE [--batch 1] [--seconds 2]
        the LiteRT interpreter (ai_edge_litert; its default XNNPACK
        delegate, num_threads = the threads), input set once, invoke()
        in a loop after 20 warm-up runs:
        {"examples_per_s", "median_us", "batch"}.
    tf_peer.py images DIR --image-size HxW
        keras.utils.image_dataset_from_directory(DIR, image_size,
        batch_size 32, bilinear, no shuffle) iterated to the end,
        prefetching; best of 2 runs:
        {"images", "cpu_seconds", "wall_seconds"} (CPU: user + system
        of this process, all its threads, during the iteration).

Every form but litert imports TensorFlow configured as a careful user
does: oneDNN on (TF_ENABLE_ONEDNN_OPTS=1, the default on x86 said
aloud), intra-op and inter-op thread pools = the threads (--threads,
default the online cores). Keras' jit_compile is its default ("auto":
no XLA on a CPU-only machine) unless --jit-compile: XLA makes the MLP
2.7x faster here and the CNN 8x slower, so bench-train-mlp.sh asks for
it and bench-train-cnn.sh does not.
"""
import argparse
import json
import os
import resource
import sys
import time

import numpy as np


def tensorflow(threads):
    os.environ["TF_ENABLE_ONEDNN_OPTS"] = "1"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    return tf


def emit(obj):
    print(json.dumps(obj, separators=(",", ":")))


def train(a):
    tf = tensorflow(a.threads)
    import keras
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from torch_train import read_idx

    spec = json.load(open(a.spec))
    keras.utils.set_random_seed(a.seed)
    # a Keras 2 config (no "module" keys): from_config reads it, as
    # Keras' H5 loader does; model_from_json wants Keras 3's form
    cls = keras.Sequential if spec["model"]["class_name"] == "Sequential" \
        else keras.Model
    model = cls.from_config(spec["model"]["config"])
    comp = spec["compile"]
    opt = keras.optimizers.get(comp["optimizer"])
    model.compile(optimizer=opt, loss=comp["loss"],
                  metrics=comp.get("metrics"),
                  jit_compile=True if a.jit_compile else "auto")
    shape = (-1,) + tuple(model.input_shape[1:])
    d = a.data + "/"
    x = (read_idx(d + "train-images-idx3-ubyte.gz").reshape(shape)
         / np.float32(255)).astype(np.float32)
    y = read_idx(d + "train-labels-idx1-ubyte.gz").astype(np.int64)
    xt = (read_idx(d + "t10k-images-idx3-ubyte.gz").reshape(shape)
          / np.float32(255)).astype(np.float32)
    yt = read_idx(d + "t10k-labels-idx1-ubyte.gz").astype(np.int64)
    bs = a.batch
    ds = (tf.data.Dataset.from_tensor_slices((x, y))
          .shuffle(len(x), seed=a.seed, reshuffle_each_iteration=True)
          .batch(bs))
    if a.steps:
        ds = ds.repeat()
    ds = ds.prefetch(tf.data.AUTOTUNE)

    class Clock(keras.callbacks.Callback):
        steps, first, last = 0, None, None

        def on_train_batch_end(self, batch, logs=None):
            Clock.steps += 1
            if Clock.first is None:
                Clock.first = time.perf_counter()

        def on_train_end(self, logs=None):
            Clock.last = time.perf_counter()

    hist = model.fit(ds, epochs=1 if a.steps else a.epochs,
                     steps_per_epoch=a.steps or None, verbose=0,
                     callbacks=[Clock()])
    secs = Clock.last - Clock.first
    examples = (Clock.steps - 1) * bs
    _, acc = model.evaluate(xt, yt, batch_size=1000, verbose=0)
    emit({"model": a.model, "examples": examples, "seconds": round(secs, 4),
          "examples_per_s": round(examples / secs, 1),
          "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
          "accuracy": round(float(acc), 4),
          "loss": round(float(hist.history["loss"][-1]), 4)})


def count(a):
    tf = tensorflow(a.threads)
    ds = tf.data.TFRecordDataset(a.file, buffer_size=8 << 20)
    # in batches of 4096: a reduce over single records costs a function
    # call each, 5-10x slower (measured); traced once
    count_all = tf.function(lambda: ds.batch(4096).reduce(
        np.int64(0), lambda c, b: c + tf.size(b, out_type=tf.int64)))

    def run():
        return int(count_all())

    n = run()
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        if run() != n:
            sys.exit("tf_peer.py count: the count changed")
        best = min(best, time.perf_counter() - t0)
    emit({"records": n, "seconds": round(best, 4),
          "mb_per_s": round(os.path.getsize(a.file) / best / 1e6, 1)})


def decode(a):
    tf = tensorflow(a.threads)
    spec = {"image": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64)}
    cached = tf.data.TFRecordDataset(a.file).cache()
    n = int(cached.reduce(np.int64(0), lambda c, _: c + 1))   # fills it
    ds = (cached.batch(256)
          .map(lambda s: tf.io.parse_example(s, spec),
               num_parallel_calls=tf.data.AUTOTUNE)
          .prefetch(tf.data.AUTOTUNE))

    def consume(c, d):
        return (c + tf.reduce_sum(d["label"]) +
                tf.reduce_sum(tf.cast(tf.strings.length(d["image"]),
                                      tf.int64)))

    run = tf.function(lambda: ds.reduce(np.int64(0), consume))
    want = int(run())
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        if int(run()) != want:
            sys.exit("tf_peer.py decode: the values changed")
        best = min(best, time.perf_counter() - t0)
    emit({"records": n, "seconds": round(best, 4),
          "records_per_s": round(n / best)})


def savedmodel(a):
    tf = tensorflow(a.threads)
    t0 = time.perf_counter()
    m = tf.saved_model.load(a.dir)
    f = m.signatures["serving_default"]
    (name, spec), = f.structured_input_signature[1].items()
    shape = [1 if d is None else d for d in spec.shape]
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    feed = {name: tf.constant(x.astype(spec.dtype.as_numpy_dtype))}
    f(**feed)
    load_ms = (time.perf_counter() - t0) * 1e3
    for _ in range(50):
        f(**feed)
    lat, t0 = [], time.perf_counter()
    while time.perf_counter() - t0 < a.seconds:
        t = time.perf_counter_ns()
        f(**feed)
        lat.append(time.perf_counter_ns() - t)
    lat.sort()
    emit({"median_us": round(lat[len(lat) // 2] / 1e3, 2),
          "p99_us": round(lat[len(lat) * 99 // 100] / 1e3, 2),
          "load_ms": round(load_ms, 1)})


def litert(a):
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=a.file, num_threads=a.threads)
    inp = it.get_input_details()[0]
    if a.batch != inp["shape"][0]:
        it.resize_tensor_input(inp["index"], [a.batch] + list(inp["shape"][1:]))
    it.allocate_tensors()
    inp = it.get_input_details()[0]
    x = np.random.default_rng(0).random(inp["shape"], dtype=np.float32)
    if inp["dtype"] != np.float32:
        info = np.iinfo(inp["dtype"])
        x = (x * (info.max - info.min) + info.min).astype(inp["dtype"])
    it.set_tensor(inp["index"], x)
    for _ in range(20):
        it.invoke()
    lat, t0 = [], time.perf_counter()
    while len(lat) < 3 or time.perf_counter() - t0 < a.seconds:
        t = time.perf_counter_ns()
        it.invoke()
        lat.append(time.perf_counter_ns() - t)
    secs = time.perf_counter() - t0
    lat.sort()
    emit({"examples_per_s": round(len(lat) * a.batch / secs, 1),
          "median_us": round(lat[len(lat) // 2] / 1e3, 2),
          "batch": a.batch})


def images(a):
    import contextlib
    tensorflow(a.threads)
    import keras
    h, w = (int(v) for v in a.image_size.split("x"))
    cpu_best = wall_best = float("inf")
    for _ in range(2):
        c0, t0 = os.times(), time.perf_counter()
        with contextlib.redirect_stdout(sys.stderr):    # "Found N files"
            ds = keras.utils.image_dataset_from_directory(
                a.dir, image_size=(h, w), batch_size=32, shuffle=False,
                interpolation="bilinear")
        n = 0
        for xb, _ in ds.prefetch(8):
            n += int(xb.shape[0])
        wall = time.perf_counter() - t0
        c1 = os.times()
        cpu = (c1.user - c0.user) + (c1.system - c0.system)
        cpu_best, wall_best = min(cpu, cpu_best), min(wall, wall_best)
    emit({"images": n, "cpu_seconds": round(cpu_best, 3),
          "wall_seconds": round(wall_best, 3)})


def main():
    p = argparse.ArgumentParser(prog="tf_peer.py")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    sub = p.add_subparsers(dest="form", required=True)
    s = sub.add_parser("train")
    s.add_argument("model", choices=["mlp", "cnn"])
    s.add_argument("--spec", required=True)
    s.add_argument("--epochs", type=int, default=1)
    s.add_argument("--steps", type=int, default=0)
    s.add_argument("--batch", type=int, default=32)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--jit-compile", action="store_true",
                   help="XLA (Keras' default on a CPU-only machine: off)")
    s.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    for form in ("count", "decode"):
        sub.add_parser(form).add_argument("file")
    s = sub.add_parser("savedmodel")
    s.add_argument("dir")
    s.add_argument("--seconds", type=float, default=1.5)
    s = sub.add_parser("litert")
    s.add_argument("file")
    s.add_argument("--batch", type=int, default=1)
    s.add_argument("--seconds", type=float, default=2)
    s = sub.add_parser("images")
    s.add_argument("dir")
    s.add_argument("--image-size", default="180x180")
    a = p.parse_args()
    {"train": train, "count": count, "decode": decode,
     "savedmodel": savedmodel, "litert": litert, "images": images}[a.form](a)


if __name__ == "__main__":
    main()
