"""t-events: tfk-train's TensorBoard logs read by TensorBoard 2.21 itself.

tfk-train --logdir on a tiny MLP (64 Fashion-MNIST records, 3 epochs,
validation, --histograms, hparams from --set): TensorBoard's
EventAccumulator and the plugin event multiplexer's data provider must
read the scalars (tags, steps, values as tfk-train --json's history
says), the weight histograms (counts, and min/max of the last epoch's
those of the checkpoint tf.train reads) and the hparams session
(HParamsPluginData from tensorboard.plugins.hparams.plugin_data_pb2,
values as --set gave them). A TensorBoard callback with update_freq 2
adds batch scalars every 2 steps. tfk-events --json lists the same
scalars as EventAccumulator for those runs, the TF1 Estimator fixture
and a TF2 tf.summary file; its --images, --text, --histograms and
--hparams agree with EventAccumulator's tensors, TensorBoard's
compress_histogram and the hparams plugin's parser on files TF wrote
with tf.summary.image/text/histogram and hp.hparams; tfk-plot curves
draws TF-written runs where their values put them.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tftap import T  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorboard.backend.event_processing import event_accumulator  # noqa
from tensorboard.backend.event_processing import plugin_event_multiplexer  # noqa
from tensorboard.backend.event_processing import data_provider  # noqa
from tensorboard.plugins.hparams import plugin_data_pb2  # noqa: E402

t = T()
top = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
recs = t.path("r64.tfrecord")
p = subprocess.run(
    "%s/tfk-idx -q --images %s --labels %s | %s/tfk-cat --take 64 >%s" % (
        t.bin, "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz",
        "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz",
        t.bin, recs), shell=True)
t.ok(p.returncode == 0, "64 Fashion-MNIST records")
hp = {"fit.epochs": 3, "fit.batch_size": 16,
      "compile.optimizer.config.learning_rate": 0.005}
sets = []
for k, v in hp.items():
    sets += ["--set", "%s=%s" % (k, v)]
out = t.tool("tfk-train", os.path.join(top, "examples", "mlp.spec.json"),
             recs, "--val", recs, "--out", "m", "--logdir", "logs",
             "--histograms", "--json", "-q", "-j1", *sets)
hist = json.loads(out)
logs = t.path("logs")


def acc(d):
    a = event_accumulator.EventAccumulator(
        d, size_guidance={"scalars": 0, "histograms": 0, "tensors": 0})
    a.Reload()
    return a


# --- scalars --------------------------------------------------------------
for run, pre in (("train", ""), ("validation", "val_")):
    a = acc(os.path.join(logs, run))
    keys = sorted(k[len(pre):] for k in hist["history"]
                  if k.startswith(pre) and (pre or not k.startswith("val_")))
    t.eq(sorted(a.Tags()["scalars"]), ["epoch_" + k for k in keys],
         "%s: EventAccumulator's scalar tags are epoch_ + the history's "
         "keys" % run)
    for k in keys:
        ev = a.Scalars("epoch_" + k)
        t.eq([e.step for e in ev], hist["epoch"],
             "%s epoch_%s: steps are the epochs" % (run, k))
        t.close([e.value for e in ev], hist["history"][pre + k], 1e-6,
                "%s epoch_%s: values are tfk-train's %s%s" % (run, k, pre, k),
                rel=True)

# the data provider TensorBoard's dashboards read through
mux = plugin_event_multiplexer.EventMultiplexer()
mux.AddRunsFromDirectory(logs)
mux.Reload()
dp = data_provider.MultiplexerDataProvider(mux, logs)
ctx = None
try:
    from tensorboard import context as tbcontext
    ctx = tbcontext.RequestContext()
except ImportError:
    pass
got = dp.read_scalars(ctx, experiment_id="", plugin_name="scalars",
                      downsample=100)
t.eq(sorted(got), ["train", "validation"],
     "data provider: scalar runs train and validation")
vals = [p.value for p in got.get("train", {}).get("epoch_loss", [])]
t.close(vals, hist["history"]["loss"], 1e-6,
        "data provider: train epoch_loss = the history's loss", rel=True)

# --- histograms -----------------------------------------------------------
a = acc(os.path.join(logs, "train"))
ck = tf.train.load_checkpoint(t.path(hist["checkpoint"]))
names = list(ck.get_variable_to_shape_map())
for tag in ("dense/kernel_0", "dense/bias_0", "dense_1/kernel_0"):
    ok = tag in a.Tags()["histograms"]
    t.ok(ok, "histogram %s present" % tag)
    if not ok:
        continue
    h = a.Histograms(tag)
    t.eq([e.step for e in h], hist["epoch"], "histogram %s: one per epoch"
         % tag)
    last = h[-1].histogram_value
    var = tag[:-2]
    w = ck.get_tensor(var) if var in names else None
    t.ok(w is not None, "checkpoint variable %s for %s" % (var, tag))
    if w is None:
        continue
    t.eq(int(last.num), w.size, "histogram %s: num = the variable's size"
         % tag)
    t.eq(int(sum(last.bucket)), w.size, "histogram %s: bucket counts sum "
         "to num" % tag)
    t.close([last.min, last.max], [w.min(), w.max()], 0,
            "histogram %s: min and max of the checkpoint's values" % tag)
    # the sum in float64 either side; 1e-6 of sum |w| allows the order
    t.close(last.sum, w.astype(np.float64).sum(),
            1e-6 * np.abs(w).sum(), "histogram %s: sum of the "
            "checkpoint's values" % tag)
    t.ok(all(np.diff(list(last.bucket_limit)) > 0),
         "histogram %s: bucket limits increase" % tag)

# --- hparams --------------------------------------------------------------
content = mux.PluginRunToTagToContent("hparams")
t.ok(len(content) == 1, "hparams: one run carries the plugin's data (%s)"
     % sorted(content))
for run, tags in content.items():
    t.eq(sorted(tags), ["_hparams_/session_start_info"],
         "hparams run %r: the session_start_info tag" % run)
    for tag, raw in tags.items():
        d = plugin_data_pb2.HParamsPluginData.FromString(raw)
        t.eq(d.WhichOneof("data"), "session_start_info",
             "hparams: HParamsPluginData holds a session_start_info")
        got = {}
        for k, v in d.session_start_info.hparams.items():
            kind = v.WhichOneof("kind")
            got[k] = getattr(v, kind)
        t.eq(sorted(got), sorted(hp), "hparams: the --set keys")
        t.close([got.get(k, np.nan) for k in sorted(hp)],
                [hp[k] for k in sorted(hp)], 1e-12,
                "hparams: the --set values")

# --- batch scalars (TensorBoard callback, update_freq 2) -------------------
cbs = json.dumps([{"class_name": "TensorBoard",
                   "config": {"log_dir": "logs2", "update_freq": 2}}])
out = t.tool("tfk-train", os.path.join(top, "examples", "mlp.spec.json"),
             recs, "--out", "m2", "--json", "-q", "-j1", "--set",
             "fit.epochs=2", "--set", "fit.batch_size=16", "--set",
             "fit.callbacks=" + cbs)
h2 = json.loads(out)
a = acc(t.path("logs2/train"))
t.ok("batch_loss" in a.Tags()["scalars"], "update_freq 2: batch_loss "
     "scalars (%s)" % a.Tags()["scalars"])
steps = [e.step for e in a.Scalars("batch_loss")] \
    if "batch_loss" in a.Tags()["scalars"] else []
# Keras 3: the batch counter is 1-based and batch logs are running means,
# so an epoch's last batch_loss is its epoch_loss
t.eq(steps, list(range(2, h2["steps"] + 1, 2)), "update_freq 2: batch_loss "
     "at steps 2, 4, ... of the run's %d" % h2["steps"])
per = h2["steps"] // len(h2["epoch"])
last = {e.step: e.value for e in a.Scalars("batch_loss")} if steps else {}
t.close([last.get(per * (i + 1), np.nan) for i in range(len(h2["epoch"]))],
        h2["history"]["loss"], 1e-6, "update_freq 2: each epoch's last "
        "batch_loss (a running mean) is its loss", rel=True)
t.close([e.value for e in a.Scalars("epoch_loss")], h2["history"]["loss"],
        1e-6, "update_freq 2 run: epoch_loss = the history's loss", rel=True)
# --- tfk-events lists what EventAccumulator reads -------------------------
# For the files tfk-train wrote, the Estimator fixture (TF1 simple_value)
# and a tf.summary file written here (TF2 tensors of the "scalars"
# plugin): the same (tag, step, value) triples, the value bit for bit
# once tfk-events' %.9g is read back as a float32.
tf2 = t.path("tf2logs")
w = tf.summary.create_file_writer(tf2)
with w.as_default():
    for s in range(4):
        tf.summary.scalar("loss", 1.0 / (s + 3), step=s)
        tf.summary.scalar("lr", 0.1 * (s + 1), step=s)
        tf.summary.histogram("w", [0.5, 1.5, float(s)], step=s)
w.close()


def ea_scalars(d):
    a = acc(d)
    out = []
    for tag in a.Tags()["scalars"]:
        out += [(tag, e.step, float(np.float32(e.value)))
                for e in a.Scalars(tag)]
    # TF2 scalars reach EventAccumulator as tensors
    for tag in a.Tags()["tensors"]:
        for e in a.Tensors(tag):
            v = tf.make_ndarray(e.tensor_proto)
            if v.shape == () and v.dtype in (np.float32, np.float64):
                out.append((tag, e.step, float(np.float32(v))))
    return sorted(out)


def tfk_scalars(d, *opts):
    out = t.tool("tfk-events", "--json", *opts, d).decode()
    got = []
    for line in out.splitlines():
        j = json.loads(line)
        got.append((j["tag"], j["step"], float(np.float32(j["value"]))))
    return sorted(got)


est = t.fixture("events/tfx_estimator_chicago_taxi")
# EventAccumulator reads one directory's own files: the fixture's top
# directory is run "." to tfk-events
for name, d, opts in (
        ("tfk-train's train run", os.path.join(logs, "train"), ()),
        ("tfk-train's validation run", os.path.join(logs, "validation"), ()),
        ("the Estimator fixture's train run", est, ("--run", ".")),
        ("the Estimator fixture's eval run",
         os.path.join(est, "eval_chicago-taxi-eval"), ()),
        ("a TF2 tf.summary file", tf2, ())):
    ea = ea_scalars(d)
    t.ok(len(ea) > 0, "%s: EventAccumulator reads %d scalars"
         % (name, len(ea)))
    t.eq(tfk_scalars(d, *opts), ea,
         "%s: tfk-events lists the same scalars" % name)

# --- what TensorBoard's other dashboards read ----------------------------
# tf.summary.image/text/histogram and hp.hparams written by TF 2.21 in two
# runs; tfk-events --images/--text/--histograms/--hparams against
# EventAccumulator's tensors, TensorBoard's own compress_histogram (the
# distributions dashboard) and the hparams plugin's metadata parser.
from tensorboard.plugins.distribution import compressor  # noqa: E402
from tensorboard.plugins.hparams import api as hp_api  # noqa: E402
from tensorboard.plugins.hparams import metadata as hp_meta  # noqa: E402

more = t.path("tf2more")
rng = np.random.default_rng(1)
lrs = {"lr0.1": 0.1, "lr0.01": 0.01}
for run, lr in lrs.items():
    w = tf.summary.create_file_writer(os.path.join(more, run))
    with w.as_default():
        hp_api.hparams({"lr": lr, "opt": "adam", "bn": True}, trial_id=run)
        for s in range(3):
            tf.summary.scalar("loss", lr / (s + 1), step=s)
            tf.summary.histogram("w", rng.normal(size=200) * (s + 1),
                                 step=s)
            tf.summary.image("img", rng.integers(0, 255, (2, 5, 7, 3),
                                                 dtype=np.uint8),
                             step=s, max_outputs=2)
            tf.summary.text("note", "step %d of %s" % (s, run), step=s)
    w.close()


def tfk_json(*args):
    out = t.tool("tfk-events", "--json", *args).decode()
    return [json.loads(line) for line in out.splitlines()]


bps = compressor.NORMAL_HISTOGRAM_BPS
for run in sorted(lrs):
    d = os.path.join(more, run)
    a = acc(d)
    want = []
    for e in a.Tensors("img"):
        v = tf.make_ndarray(e.tensor_proto)
        want.append([e.step, len(v) - 2, int(v[0]), int(v[1]),
                     "png" if v[2][:4] == b"\x89PNG" else "?", len(v[2])])
    got = [[j["step"], j["images"], j["width"], j["height"], j["format"],
            j["bytes"]] for j in tfk_json("--images", d)]
    t.eq(got, want, "%s: --images: step, count, width, height, format and "
         "bytes as the images plugin's tensors hold them" % run)
    want = [[e.step, tf.make_ndarray(e.tensor_proto).item().decode()]
            for e in a.Tensors("note")]
    got = [[j["step"], j["text"]] for j in tfk_json("--text", d)]
    t.eq(got, want, "%s: --text: each step's string" % run)
    got = tfk_json("--histograms", d)
    hs = a.Tensors("w")
    t.eq([j["step"] for j in got], [e.step for e in hs],
         "%s: --histograms: one row per step" % run)
    for j, e in zip(got, hs):
        b = tf.make_ndarray(e.tensor_proto)
        c = compressor.compress_histogram(b, bps)
        t.close([j["min"], j["max"], j["count"]],
                [c[0][1], c[-1][1], b[:, 2].sum()], 1e-12,
                "%s step %d: min, max, count as compress_histogram" %
                (run, e.step), rel=True)
        t.close([j["p%g" % (bp / 100)] for bp in bps[1:-1]],
                [x[1] for x in c[1:-1]], 1e-9,
                "%s step %d: the 7 percentiles of TensorBoard's "
                "distributions dashboard" % (run, e.step), rel=True)

# TF1 HistogramProto: EventAccumulator's own CompressedHistograms
a = acc(est)
tag = "dnn/logits/activation"
ch = a.CompressedHistograms(tag)
got = tfk_json("--histograms", "--run", ".", "--tag", tag, est)
t.eq([j["step"] for j in got], [e.step for e in ch],
     "Estimator fixture %s: --histograms steps" % tag)
t.close([[j["min"]] + [j["p%g" % (bp / 100)] for bp in bps[1:-1]] +
         [j["max"]] for j in got],
        [[v[1] for v in e.compressed_histogram_values] for e in ch],
        1e-9, "Estimator fixture %s: min, percentiles, max as "
        "EventAccumulator.CompressedHistograms" % tag, rel=True)

# hparams: the table's rows against the plugin's parser and the runs'
# last scalars
got = {j["session"]: j for j in tfk_json("--hparams", more)}
t.eq(sorted(got), sorted(lrs), "--hparams: one session per run")
for run in sorted(lrs):
    a = acc(os.path.join(more, run))
    content = a.PluginTagToContent("hparams")
    si = hp_meta.parse_session_start_info_plugin_data(
        content["_hparams_/session_start_info"])
    want = {}
    for k, v in si.hparams.items():
        want[k] = getattr(v, v.WhichOneof("kind"))
    j = got.get(run, {})
    h = j.get("hparams", {})
    t.eq(sorted(h), sorted(want), "%s: --hparams names" % run)
    t.eq([h.get(k) if not isinstance(want[k], bool) else h.get(k) == "true"
          for k in sorted(want)], [want[k] for k in sorted(want)],
         "%s: --hparams values as parse_session_start_info_plugin_data "
         "reads them (bools as true/false)" % run)
    last = tf.make_ndarray(a.Tensors("loss")[-1].tensor_proto).item()
    t.close(j.get("metrics", {}).get("loss", np.nan), last, 1e-7,
            "%s: the loss metric is the run's last loss" % run, rel=True)

# tfk-plot on the TF-written runs: Pillow decodes it, both falling loss
# curves are highest at the left
from PIL import Image  # noqa: E402

png = t.path("loss.png")
t.run("tfk-plot", "curves", "--tag", "loss", more, "-o", png)
im = Image.open(png).convert("RGB")
t.eq(im.size, (640, 400), "tfk-plot curves: a 640x400 PNG")
px = im.load()
for col, run in ((0xff7043, "lr0.01"), (0x0077bb, "lr0.1")):
    rgb = (col >> 16, col >> 8 & 255, col & 255)
    pts = [(x, y) for y in range(330) for x in range(640) if px[x, y] == rgb]
    top = min(pts, key=lambda p: (p[1], p[0])) if pts else (0, 0)
    xs = [x for x, _ in pts] or [0]
    t.ok(pts and top[0] - min(xs) < 0.1 * (max(xs) - min(xs)),
         "tfk-plot curves: %s's falling loss is highest at the left" % run)

t.done()
