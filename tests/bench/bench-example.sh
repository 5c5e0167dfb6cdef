#!/bin/sh
# bench-example.sh - tf.Example decoding: tfkit against python3-protobuf.
#
# Both sides parse the same 60,000 Fashion-MNIST-sized records (a 784-byte
# `image` bytes feature and an int64 `label`, written by bench-example)
# and read both values, as an input pipeline does; each reports its best
# run in records/s. The peer is python3-protobuf with its C++ backend
# (ParseFromString, then the two map lookups and values): the fastest
# way Python reads a tf.Example outside TensorFlow's own kernels.
# A second line, "example-decode-tf", has TensorFlow 2.21's own kernels
# on the same file (tests/bench/tf_peer.py decode): TFRecordDataset into
# an in-memory cache(), batches of 256 through tf.io.parse_example in a
# parallel map (threads = cores; ours is one thread), both values
# consumed, best of 3 passes; target 1. Without the TF tier's
# environment (scripts/tfenv --check) that line says the peer is missing.
#
# Environment: TFK_BENCH_BIN (bench programs, default build/bench),
# PYTHON (default /usr/bin/python3). Prints two JSON lines.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${TFK_BENCH_BIN:=$here/../../build/bench}"
: "${PYTHON:=/usr/bin/python3}"
. "$here/lib.sh"
tmp=$(mktemp -d /tmp/tfk-bench-example-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

ours=$("$TFK_BENCH_BIN/bench-example" "$tmp/fm.tfrecord" |
	sed -n 's/.*"records_per_s":\([0-9.]*\).*/\1/p')
peer=$("$PYTHON" - "$tmp/fm.tfrecord" "$here/../py" <<'PY'
import sys, time
sys.path.insert(0, sys.argv[2])
import tfexample as tfe
from google.protobuf.internal import api_implementation
if api_implementation.Type() != "cpp":
    sys.exit("bench-example: python3-protobuf is not using its C++ backend")
recs = list(tfe.read_tfrecords(sys.argv[1], verify=False))
ex = tfe.Example()
best = float("inf")
for run in range(3):
    t0 = time.perf_counter()
    for r in recs:
        ex.ParseFromString(r)
        f = ex.features.feature
        img = f["image"].bytes_list.value[0]
        label = f["label"].int64_list.value[0]
    best = min(best, time.perf_counter() - t0)
print("%.0f" % (len(recs) / best))
PY
)
[ -n "$ours" ] && [ -n "$peer" ] || { echo "bench-example: no result" >&2; exit 1; }
ratio=$(awk -v a="$ours" -v b="$peer" 'BEGIN { printf "%.1f", a / b }')
printf '{"bench":"example-decode","ours":%s,"peer":%s,"unit":"records/s","ratio":%s,"target":20}\n' \
	"$ours" "$peer" "$ratio"
if tf_env example-decode-tf; then
	if j=$(tf_peer example-decode-tf decode "$tmp/fm.tfrecord"); then
		"$PYTHON" -c 'import json, sys
o, tf = float(sys.argv[1]), json.loads(sys.argv[2])
p = tf["records_per_s"]
print(json.dumps({"bench": "example-decode-tf", "ours": o, "peer": p,
                  "unit": "records/s", "ratio": round(o / p, 2),
                  "target": 1.0, "records": tf["records"]},
                 separators=(",", ":")))' "$ours" "$j"
	else
		echo "$j"
	fi
fi
