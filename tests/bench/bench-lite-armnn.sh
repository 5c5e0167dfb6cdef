#!/bin/sh
# bench-lite-armnn.sh - our TFLite interpreter against Arm NN's on the
# same .tflite files (issue 7: "report the ratio; Arm NN's reference
# backend is a floor, not a peer to admire").
#
# The model is the Fashion-MNIST CNN of examples/cnn.spec.json (as in
# bench-lite-convert.sh, trained on 512 records for one epoch: speed
# does not depend on the weights), converted by tfk-lite convert to a
# float file and a full-integer int8 file (float I/O). Both runtimes run
# each file at batch 1 (the file's shape, which Arm NN keeps),
# in-process, on the same inputs for every run, timing invocations only
# (load and first run excluded), one thread:
#   ours: `tfk-lite bench FILE --seconds 2` (inferences/s of the timed
#         loop: the graph executor for float, lib/model/tflint8.c for
#         int8; 20 warm-up runs);
#   peer: python3-pyarmnn, TfLite parser + CpuRef backend, the network
#         loaded once, EnqueueWorkload in a loop for ~2 s after 2
#         warm-up runs (Python's loop costs ~10 us a run, nothing beside
#         CpuRef's milliseconds).
# "ours"/"peer" are the int8 images/s (the deployment case), with
# "ours_float"/"peer_float"/"ratio_float" for the float file. Target 1:
# a floor, as the issue says.
#
# Environment: TFK_BIN (tools), PYTHON (Debian's, numpy and pyarmnn).
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${TFK_BIN:=$root/bin}"
: "${PYTHON:=/usr/bin/python3}"
PATH="$TFK_BIN:$PATH"
T=$(mktemp -d /tmp/tfk-bench-armnn-XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$root/tests/bench/lib.sh"
cd "$T"

cnn_tflite 512 --calibration_records 100

cat >armnn_bench.py <<'EOF'
import sys, time
import numpy as np
import pyarmnn as ann

parser = ann.ITfLiteParser()
net = parser.CreateNetworkFromBinaryFile(sys.argv[1])
iname = parser.GetSubgraphInputTensorNames(0)[0]
oname = parser.GetSubgraphOutputTensorNames(0)[0]
ii = parser.GetNetworkInputBindingInfo(0, iname)
oi = parser.GetNetworkOutputBindingInfo(0, oname)
rt = ann.IRuntime(ann.CreationOptions())
opt, _ = ann.Optimize(net, [ann.BackendId("CpuRef")], rt.GetDeviceSpec(),
                      ann.OptimizerOptions())
nid, _ = rt.LoadNetwork(opt)
shape = tuple(ii[1].GetShape()[i] for i in range(ii[1].GetNumDimensions()))
x = np.random.default_rng(0).random(shape, dtype=np.float32)
ins = ann.make_input_tensors([ii], [x])
outs = ann.make_output_tensors([oi])
for _ in range(2):
    rt.EnqueueWorkload(nid, ins, outs)
n, t0 = 0, time.perf_counter()
while n < 3 or time.perf_counter() - t0 < float(sys.argv[2]):
    rt.EnqueueWorkload(nid, ins, outs)
    n += 1
print(n * shape[0] / (time.perf_counter() - t0))
EOF

ours() {	# images/s of tfk-lite bench on FILE at batch 1
	tfk-lite bench "$1" --batch 1 --seconds 2 --json |
		"$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["examples_per_s"])'
}
of=$(ours f.tflite)
oq=$(ours q.tflite)
pf=$("$PYTHON" armnn_bench.py f.tflite 2 2>/dev/null)
pq=$("$PYTHON" armnn_bench.py q.tflite 2 2>/dev/null)
awk -v oq="$oq" -v pq="$pq" -v of="$of" -v pf="$pf" 'BEGIN {
	printf "{\"bench\":\"lite-armnn\",\"ours\":%.1f,\"peer\":%.1f,\"unit\":\"images/s\",\"ratio\":%.3f,\"target\":1.0,\"ours_float\":%.1f,\"peer_float\":%.1f,\"ratio_float\":%.3f}\n",
	       oq, pq, oq / pq, of, pf, of / pf
}'
