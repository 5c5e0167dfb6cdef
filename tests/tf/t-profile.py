"""t-profile: tfk-train --profile read by TensorBoard's Profile plugin.

The plugin's own offline converter (xprof, xspace_to_tool_data) turns
the XSpace tfk-train writes for steps 2..4 of a small MLP into the
trace viewer, memory profile, overview page and framework op stats:
our op names ("train/dense/MatMul" of type MatMul) with positive
times, three steps on a CPU-only host, the memory profile's peak equal
to the bytes and op tfk-train printed, and at least the largest
tensor (the dense kernel's gradient, 784*128 floats). The file also
decodes with TensorFlow's own xplane_pb2, and the .profile-empty
marker is an event file TensorBoard's io_wrapper takes for a profile
run's. A run fed by a slow producer through a pipe is input-bound on
the overview page as tfk-train says. A Keras fit profiled by
tf.profiler (tf_keras, whose fit marks steps) shows the step-marker
convention we follow: an event "train" with the stats step_num and _r.
"""
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tftap import T  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.tsl.profiler.protobuf import xplane_pb2  # noqa: E402
from tensorboard.backend.event_processing import io_wrapper  # noqa: E402
from xprof.convert import raw_to_tool_data  # noqa: E402

t = T()
top = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
spec = os.path.join(top, "examples", "mlp.spec.json")
recs = t.path("r320.tfrecord")
p = subprocess.run(
    "%s/tfk-idx -q --images %s --labels %s | %s/tfk-cat --take 320 >%s" % (
        t.bin, "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz",
        "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz",
        t.bin, recs), shell=True)
t.ok(p.returncode == 0, "320 Fashion-MNIST records")


def tool_data(path, tool):
    # the converter caches results next to the file unless told not to
    d, _ = raw_to_tool_data.xspace_to_tool_data(
        [path], tool, {"use_saved_result": False})
    return d.decode() if isinstance(d, bytes) else d


logs = t.path("logs")
_, _, err = t.run("tfk-train", spec, recs, "--out", t.path("run"),
                  "--set", "fit.epochs=1", "--profile", logs,
                  "--profile-steps", "2:4")
pbs = glob.glob(os.path.join(logs, "plugins", "profile", "*", "*.xplane.pb"))
host = socket.gethostname()
t.ok(len(pbs) == 1 and os.path.basename(pbs[0]) == host + ".xplane.pb" and
     re.fullmatch(r"\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d",
                  os.path.basename(os.path.dirname(pbs[0]))),
     "one DIR/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.xplane.pb")
pb = pbs[0]
m = re.search(r"peak memory [\d.]+ KiB \((\d+) bytes\) in steps 2:4, "
              r"reached by (\S+)", err)
t.ok(m is not None, "tfk-train printed the peak memory and its op")
peak_bytes, peak_op = (int(m.group(1)), m.group(2)) if m else (0, "")

# TensorFlow's own proto decodes it ---------------------------------------
xs = xplane_pb2.XSpace()
xs.ParseFromString(open(pb, "rb").read())
planes = {pl.name: pl for pl in xs.planes}
hostp = planes.get("/host:CPU")
t.ok(hostp is not None and list(xs.hostnames) == [host],
     "TF's xplane_pb2: plane /host:CPU, hostnames [host]")
md = {k: v for k, v in hostp.event_metadata.items()}
sm = {k: v.name for k, v in hostp.stat_metadata.items()}
lines = {ln.name: ln for ln in hostp.lines}
main = lines.get("main")
steps_line = lines.get("Steps")
t.ok(main is not None and steps_line is not None and
     [md[e.metadata_id].name for e in steps_line.events] == ["2", "3", "4"],
     "a line per thread ('main') and a 'Steps' line with steps 2, 3, 4")
names = [md[e.metadata_id].name for e in main.events]
t.ok("train/dense/MatMul:MatMul" in names and
     md[[k for k in md if md[k].name == "train/dense/MatMul:MatMul"][0]]
     .display_name == "MatMul" and names.count("train") == 3 and
     names.count("IteratorGetNext:IteratorGetNext") == 3,
     "op events 'name:Type' (display name the type), 3 'train' steps, "
     "3 input waits")
mem = [e for e in main.events if md[e.metadata_id].name == "MemoryAllocation"]
want = {"bytes_allocated", "bytes_available", "peak_bytes_in_use",
        "requested_bytes", "allocation_bytes", "tf_op", "step_num",
        "region_type", "data_type", "shape"}
t.ok(mem and all(want <= {sm[s.metadata_id] for s in e.stats} for e in mem),
     "every MemoryAllocation carries the memory profile's stats")
n_free = names.count("MemoryDeallocation")
t.ok(n_free == len(mem), "as many deallocations as allocations (%d, %d)" %
     (len(mem), n_free))
steps_stats = [{sm[s.metadata_id]: s.int64_value for s in e.stats}
               for e in main.events if md[e.metadata_id].name == "train"]
t.ok(steps_stats == [{"step_num": 2, "_r": 1}, {"step_num": 3, "_r": 1},
                     {"step_num": 4, "_r": 1}],
     "step events carry step_num and _r 1: %s" % steps_stats)

# The Profile plugin's converters -------------------------------------------
work = t.path("conv")
shutil.copytree(os.path.dirname(pb), work)
cpb = os.path.join(work, os.path.basename(pb))

ops = json.loads(tool_data(cpb, "framework_op_stats"))
rows = {r["c"][3]["v"]: r["c"] for r in ops[0]["rows"]}
mm = rows.get("train/dense/MatMul")
t.ok(mm is not None and mm[1]["v"] == "Host" and mm[2]["v"] == "MatMul" and
     mm[5]["v"] > 0, "framework_op_stats: train/dense/MatMul, type MatMul, "
     "on Host, total time %s us" % (mm[5]["v"] if mm else None))
# each op event counts, and so does each memory event naming the op in
# tf_op (the converter's way, for TensorFlow's allocator events too)
t.ok(mm is not None and mm[4]["v"] >= 3, "occurrences >= the 3 steps (%s)"
     % (mm[4]["v"] if mm else None))
grad = rows.get("gradients/train/dense/MatMul_grad/MatMul_1")
t.ok(grad is not None and grad[5]["v"] > 0 and
     "IteratorGetNext" in rows, "the gradient's MatMul and the input wait "
     "are ops too")
# plausible: the op times sum to less than the 3 steps took
tot = sum(r[5]["v"] for k, r in rows.items() if k != "IDLE")
span = sum(e.duration_ps for e in main.events
           if md[e.metadata_id].name == "train") / 1e6
t.ok(0 < tot <= span * 1.01, "op time %.1f us within the steps' %.1f us" %
     (tot, span))

ov = json.loads(tool_data(cpb, "overview_page"))
step_tab = ov[1]
t.ok(step_tab["p"]["hardware_type"] == "CPU_ONLY" and
     float(step_tab["p"]["steptime_ms_average"]) > 0 and
     float(step_tab["p"]["host_compute_time_ms_avg"]) > 0,
     "overview_page: CPU_ONLY, step time %s ms, host compute %s ms" % (
         step_tab["p"]["steptime_ms_average"],
         step_tab["p"]["host_compute_time_ms_avg"]))
t.ok(len(step_tab["rows"]) >= 1, "overview_page: step rows (%d)" %
     len(step_tab["rows"]))

mp = json.loads(tool_data(cpb, "memory_profile"))
cpu = mp["memoryProfilePerAllocator"].get("cpu", {})
summ = cpu.get("profileSummary", {})
snap = (cpu.get("memoryProfileSnapshots") or [{}])[0]
t.ok(int(summ.get("peakBytesUsageLifetime", 0)) == peak_bytes and
     peak_bytes >= 784 * 128 * 4,
     "memory_profile: allocator cpu, peak %s bytes = tfk-train's %d, at "
     "least the dense kernel's gradient" % (
         summ.get("peakBytesUsageLifetime"), peak_bytes))
meta = snap.get("activityMetadata", {})
t.ok(meta.get("tfOpName") == peak_op and meta.get("dataType") == "float" and
     meta.get("tensorShape", "").startswith("["),
     "memory_profile: the peak's op %s, float, shape %s" % (
         meta.get("tfOpName"), meta.get("tensorShape")))

tv = json.loads(tool_data(cpb, "trace_viewer"))
longs = {e.get("args", {}).get("long_name") for e in tv["traceEvents"]}
t.ok("train/dense/MatMul:MatMul" in longs and
     {"main", "Steps"} <= {e["args"]["name"] for e in tv["traceEvents"]
                           if e.get("name") == "thread_name"},
     "trace_viewer: our op events on threads main and Steps")

# The empty-profile marker ---------------------------------------------------
marks = glob.glob(os.path.join(logs, "events.out.tfevents.*.profile-empty"))
ev = [tf.compat.v1.Event.FromString(r.numpy()) for r in
      tf.data.TFRecordDataset(marks)] if len(marks) == 1 else []
t.ok(len(ev) == 1 and ev[0].file_version == "brain.Event:2" and
     io_wrapper.IsTensorFlowEventsFile(marks[0]) and
     not io_wrapper.IsSummaryEventsFile(marks[0]),
     "one events.out.tfevents.*.<host>.profile-empty: file_version only, "
     "an event file TensorBoard does not read for summaries")

# Input-bound: a slow producer through a pipe -------------------------------
slow = os.path.join(top, "tests", "py", "slow_records.py")
logs2 = t.path("logs2")
p = subprocess.run(
    "%s %s %s 0.002 | %s/tfk-train %s --out %s --set fit.epochs=1 "
    "--set fit.steps_per_epoch=6 --profile %s --profile-steps 2:5" % (
        sys.executable, slow, recs, t.bin, spec, t.path("run2"), logs2),
    shell=True, stderr=subprocess.PIPE, cwd=t.tmp)
e2 = p.stderr.decode()
m = re.search(r"input-bound: (\d+)% of step time waiting for data", e2)
t.ok(p.returncode == 0 and m and int(m.group(1)) >= 50,
     "slow producer: tfk-train says input-bound (%s)" %
     (m.group(0) if m else e2.strip()[-200:]))
pb2 = glob.glob(os.path.join(logs2, "plugins", "profile", "*",
                             "*.xplane.pb"))
ov2 = json.loads(tool_data(pb2[0], "overview_page")) if pb2 else [{}, {}]
p2 = ov2[1].get("p", {})
ia = float(p2.get("infeed_time_ms_avg", 0))
sa = float(p2.get("steptime_ms_average", 0) or 1)
t.ok(ia / sa >= 0.5 and "input-bound" in p2.get("input_conclusion", ""),
     "overview_page agrees: input %.1f of %.1f ms per step; %s" % (
         ia, sa, p2.get("input_conclusion", "")[:60]))

# What TensorFlow writes for a Keras fit ------------------------------------
import tf_keras  # noqa: E402

x = np.random.RandomState(0).rand(64, 4).astype("float32")
km = tf_keras.Sequential([tf_keras.Input((4,)), tf_keras.layers.Dense(1)])
km.compile("sgd", "mse")
tfdir = t.path("tflogs")
tf.profiler.experimental.start(tfdir)
km.fit(x, x[:, :1], batch_size=16, epochs=1, verbose=0)
tf.profiler.experimental.stop()
tpb = glob.glob(os.path.join(tfdir, "plugins", "profile", "*",
                             "*.xplane.pb"))
txs = xplane_pb2.XSpace()
txs.ParseFromString(open(tpb[0], "rb").read())
th = [pl for pl in txs.planes if pl.name == "/host:CPU"][0]
tsm = {k: v.name for k, v in th.stat_metadata.items()}
tsteps = [{tsm[s.metadata_id] for s in e.stats} for ln in th.lines
          for e in ln.events if th.event_metadata[e.metadata_id].name ==
          "train"]
tops = [th.event_metadata[e.metadata_id] for ln in th.lines
        for e in ln.events
        if th.event_metadata[e.metadata_id].name.endswith(":MatMul") or
        th.event_metadata[e.metadata_id].name.endswith("FusedMatMul")]
t.ok(tsteps and all({"step_num", "_r"} <= s for s in tsteps) and tops and
     tops[0].display_name == tops[0].name.rsplit(":", 1)[1],
     "TF's own profile: steps 'train' with step_num and _r, ops "
     "'name:Type' with display name the type, as ours")
tov = json.loads(tool_data(tpb[0], "overview_page"))
t.ok(tov[1]["p"]["hardware_type"] == "CPU_ONLY" and
     set(tov[1]["p"]) == set(step_tab["p"]),
     "the converter fills the same overview fields for TF's and ours")
t.done()
