#!/bin/sh
# bench-model-run.sh - `tfk-model run` batch-1 latency of issue 5's MLP
# and CNN exported by tfk-train (issue 6: <= 0.5x PyTorch eager no_grad
# latency, i.e. ratio >= 2), and the CNN SavedModel's load time.
#
# ours: `tfk-model bench --json`: load DIR (saved_model.pb, variables,
#       import, plan, first run: "load_ms"), then the signature run in
#       an in-process loop on a random [1, 28, 28] (MLP) / [1, 28, 28, 1]
#       (CNN) input, each run timed; we take the median.
# peer: PyTorch 1.13 eager, torch.no_grad(), the same layers (Flatten,
#       Linear 784-128, ReLU, Linear 128-10, Softmax; Conv 5x5 valid,
#       ReLU, Conv 5x5 same, ReLU, MaxPool 2, Flatten, Linear, Softmax).
#       Tuned as its best users run it (lib.sh's torch_tuned:
#       OPENBLAS_NUM_THREADS=1, OMP_WAIT_POLICY=PASSIVE): each model is
#       timed with torch.set_num_threads(1) and (cores), the faster kept,
#       as a careful user would choose.
# TF:   tests/bench/tf_peer.py savedmodel: TensorFlow 2.21 loads the same
#       SavedModel (tf.saved_model.load) and calls its serving_default
#       signature on a [1, ...] input, each call timed (intra/inter-op
#       threads = cores, oneDNN on); issue 15's goal: our latency <=
#       0.05x TF's, i.e. ratio >= 20. Only with the TF tier's
#       environment (scripts/tfenv --check), else "peer_missing".
# Ours on one thread (-j 1), each call timed alone and the median taken
# on every side (a median shrugs off the other processes of a shared
# machine better than a mean), three alternating rounds, best of each
# side (TF: one round, its process start costs seconds); the CNN's load
# time is the best of those rounds and ten more one-run processes. The
# models are trained for one step only: weights do not change the time.
#
# Prints {"bench":"model-run","ours","peer" (MLP runs/s),"unit":"runs/s",
# "ratio","target":2.0,"us_ours","us_peer","cnn_us_ours","cnn_us_peer",
# "cnn_ratio","cnn_load_ms"} and {"bench":"model-run-tf", the same
# fields against TF,"target":20,"cnn_load_ms_peer"} (or its
# "peer_missing" line).
# Environment: TFK_BIN, PYTHON (TFK_BENCH_BIN is not used).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${TFK_BIN:=$root/bin}"
: "${PYTHON:=/usr/bin/python3}"
. "$root/tests/bench/lib.sh"
torch_tuned
F=/usr/share/datasets/fashion-mnist
T=$(mktemp -d /tmp/tfk-bench-XXXXXX)
trap 'rm -rf "$T"' EXIT

"$TFK_BIN/tfk-idx" -q --images $F/train-images-idx3-ubyte.gz \
	--labels $F/train-labels-idx1-ubyte.gz | "$TFK_BIN/tfk-cat" --take 32 >"$T/r.tfrecord"
for m in mlp cnn; do
	"$TFK_BIN/tfk-train" "$root/examples/$m.spec.json" "$T/r.tfrecord" \
		--out "$T/$m" --set fit.epochs=1 -q -j1 >/dev/null
done

torch_round() {	# -> median microseconds per call: MLP CNN
	"$PYTHON" - <<'PY'
import os, time, torch
import torch.nn as nn
mlp = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(),
                    nn.Linear(128, 10), nn.Softmax(-1))
cnn = nn.Sequential(nn.Conv2d(1, 32, 5), nn.ReLU(),
                    nn.Conv2d(32, 32, 5, padding=2), nn.ReLU(),
                    nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4608, 10),
                    nn.Softmax(-1))
out = []
for m, x in ((mlp, torch.ones(1, 28, 28)), (cnn, torch.ones(1, 1, 28, 28))):
    m.eval()
    best = None
    for threads in sorted({1, os.cpu_count()}):
        torch.set_num_threads(threads)
        with torch.no_grad():
            for _ in range(50):
                m(x)
            lat, t0 = [], time.perf_counter()
            while time.perf_counter() - t0 < 1.5:
                t = time.perf_counter_ns()
                m(x)
                lat.append(time.perf_counter_ns() - t)
        lat.sort()
        med = lat[len(lat) // 2] / 1e3
        best = med if best is None else min(best, med)
    out.append(best)
print("%.3f %.3f" % tuple(out))
PY
}

best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }

ours() {	# DIR -> "median_us load_ms"
	"$TFK_BIN/tfk-model" bench --dir "$1" --seconds 1.5 --warmup 100 \
		-j 1 --json | "$PYTHON" -c 'import json, sys
d = json.load(sys.stdin); print(d["median_us"], d["load_ms"])'
}

mo= mp= co= cp= load=
for r in 1 2 3; do
	set -- $(ours "$T/mlp")
	mo=$(best "$mo" "$1")
	set -- $(ours "$T/cnn")
	co=$(best "$co" "$1")
	load=$(best "$load" "$2")
	set -- $(torch_round)
	mp=$(best "$mp" "$1")
	cp=$(best "$cp" "$2")
done
# load time is one event per process: ten more cheap processes (one run
# each) give the best-of a noisy machine a fair chance
for r in 1 2 3 4 5 6 7 8 9 10; do
	set -- $("$TFK_BIN/tfk-model" bench --dir "$T/cnn" -n 1 --warmup 0 \
		-j 1 --json | "$PYTHON" -c 'import json, sys
print(json.load(sys.stdin)["load_ms"])')
	load=$(best "$load" "$1")
done
awk -v mo="$mo" -v mp="$mp" -v co="$co" -v cp="$cp" -v l="$load" 'BEGIN {
	printf "{\"bench\":\"model-run\",\"ours\":%.1f,\"peer\":%.1f,\"unit\":\"runs/s\",\"ratio\":%.3f,\"target\":2.0,\"us_ours\":%.2f,\"us_peer\":%.2f,\"cnn_us_ours\":%.1f,\"cnn_us_peer\":%.1f,\"cnn_ratio\":%.3f,\"cnn_load_ms\":%.2f}\n",
	       1e6 / mo, 1e6 / mp, mp / mo, mo, mp, co, cp, cp / co, l
}'
if tf_env model-run-tf; then
	if tm=$(tf_peer model-run-tf savedmodel "$T/mlp") &&
		tc=$(tf_peer model-run-tf savedmodel "$T/cnn"); then
		"$PYTHON" - "$mo" "$co" "$load" "$tm" "$tc" <<'PY'
import json, sys
mo, co, load = (float(a) for a in sys.argv[1:4])
tm, tc = (json.loads(a) for a in sys.argv[4:6])
mp, cp = tm["median_us"], tc["median_us"]
print(json.dumps({"bench": "model-run-tf", "ours": round(1e6 / mo, 1),
                  "peer": round(1e6 / mp, 1), "unit": "runs/s",
                  "ratio": round(mp / mo, 3), "target": 20,
                  "us_ours": mo, "us_peer": mp, "cnn_us_ours": co,
                  "cnn_us_peer": cp, "cnn_ratio": round(cp / co, 3),
                  "cnn_load_ms": load, "cnn_load_ms_peer": tc["load_ms"]},
                 separators=(",", ":")))
PY
	else
		echo "${tc:-$tm}"
	fi
fi
