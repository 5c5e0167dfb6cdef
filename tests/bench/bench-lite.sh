#!/bin/sh
# bench-lite.sh - our TFLite interpreter against LiteRT's, the runtime
# TFLite users deploy (issue 15: int8 throughput >= LiteRT's XNNPACK on
# this CPU).
#
# The model is the Fashion-MNIST CNN of examples/cnn.spec.json (trained
# on 512 records for one epoch: speed does not depend on the weights),
# converted by tfk-lite convert to a float file and a full-integer int8
# file (float I/O); both runtimes run the same two files, in-process, on
# one random input set once, timing invocations only (load and warm-up
# runs left out), at batch 1 and batch 32, with threads = cores:
#   ours: `tfk-lite bench FILE --batch B -j CORES --seconds 2` (the graph
#         executor for float, lib/model/tflint8.c for int8);
#   peer: ai_edge_litert's Interpreter (LiteRT 2.x, the TF tier's
#         environment) as a careful user runs it: num_threads = cores,
#         its default XNNPACK delegate (float and int8 kernels), input
#         resized to the batch, invoke() in a loop for ~2 s after 20
#         warm-up runs (tests/bench/tf_peer.py litert).
# Prints {"bench":"lite","ours","peer" (int8 images/s at batch 1),
# "unit":"images/s","ratio","target":1,"ours_b32","peer_b32","ratio_b32",
# "us_ours","us_peer" (median latency at batch 1)} and the same for the
# float file as "lite-float" (target 1). Without the TF tier's
# environment (scripts/tfenv --check) both lines say the peer is missing.
#
# Environment: TFK_BIN (tools), PYTHON (Debian's: JSON).
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${TFK_BIN:=$root/bin}"
: "${PYTHON:=/usr/bin/python3}"
PATH="$TFK_BIN:$PATH"
. "$root/tests/bench/lib.sh"
if ! tf_env lite; then
	tf_env lite-float || true
	exit 0
fi
T=$(mktemp -d /tmp/tfk-bench-lite-XXXXXX)
trap 'rm -rf "$T"' EXIT
cd "$T"
cores=$(nproc)

cnn_tflite 512 --calibration_records 100

ours() {	# FILE BATCH -> tfk-lite bench's JSON
	tfk-lite bench "$1" --batch "$2" -j "$cores" --seconds 2 --json
}

for f in q f; do
	name=lite p1="" p32=""
	[ $f = f ] && name=lite-float
	o1=$(ours $f.tflite 1)
	o32=$(ours $f.tflite 32)
	if p1=$(tf_peer $name litert $f.tflite --batch 1) &&
		p32=$(tf_peer $name litert $f.tflite --batch 32); then
		"$PYTHON" - "$name" "$o1" "$o32" "$p1" "$p32" <<'PY'
import json, sys
o1, o32, p1, p32 = (json.loads(a) for a in sys.argv[2:6])
o, p = o1["examples_per_s"], p1["examples_per_s"]
print(json.dumps({"bench": sys.argv[1], "ours": round(o, 1),
                  "peer": p, "unit": "images/s",
                  "ratio": round(o / p, 3), "target": 1.0,
                  "ours_b32": round(o32["examples_per_s"], 1),
                  "peer_b32": p32["examples_per_s"],
                  "ratio_b32": round(o32["examples_per_s"] /
                                     p32["examples_per_s"], 3),
                  "us_ours": round(o1["median_us"], 2),
                  "us_peer": p1["median_us"]}, separators=(",", ":")))
PY
	else
		echo "${p32:-$p1}"
	fi
done
