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
and a TF2 tf.summary file.
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

t.done()
