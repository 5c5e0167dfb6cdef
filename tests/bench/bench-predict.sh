#!/bin/sh
# bench-predict.sh - tfk-predict throughput on the 10,000 Fashion-MNIST
# test images with the MLP of examples/mlp.spec.json (exported by
# tfk-train), records in, prediction records (+ the kept label) out.
#
# ours: tfk-predict --dir mlp --keep label -j1 (batches of 256), the
#       images already scaled to float features by tfk-map (not timed).
# peer: the same job in the Python stack without TensorFlow: TFRecord
#       framing in Python,
#       python3-protobuf Example parsing, numpy, PyTorch eager no_grad
#       (Flatten, Linear, ReLU, Linear, Softmax) in batches of 256, an
#       Example per record built by protobuf and framed into a file;
#       CRCs by python3-crc32c (hardware CRC-32C), checked and written.
# Ours on one thread (-j1); the peer as its best users run it:
# torch.set_num_threads = cores, OPENBLAS_NUM_THREADS=1 and
# OMP_WAIT_POLICY=PASSIVE (lib.sh's torch_tuned); best of 3 (ours) and 2
# (peer) after a warm-up run
# (the machine is shared). Whole processes are timed, since that is what
# a batch job pays; the peer's time after its imports (torch alone takes
# seconds to load) is reported too.
# Prints {"bench":"predict","ours","peer" (records/s),"unit":"records/s",
# "ratio","target":5.0,"records","peer_after_imports",
# "ratio_after_imports"}.
# Environment: TFK_BIN, PYTHON.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${TFK_BIN:=$root/bin}"
: "${PYTHON:=/usr/bin/python3}"
F=/usr/share/datasets/fashion-mnist
T=$(mktemp -d /tmp/tfk-bench-XXXXXX)
TFK_BENCH_DIR=$T
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/lib.sh"
torch_tuned

"$TFK_BIN/tfk-idx" -q --images $F/t10k-images-idx3-ubyte.gz \
	--labels $F/t10k-labels-idx1-ubyte.gz | "$TFK_BIN/tfk-cat" --take 5000 >"$T/te.tfrecord"
"$TFK_BIN/tfk-cat" --take 64 "$T/te.tfrecord" >"$T/r.tfrecord"
"$TFK_BIN/tfk-train" "$root/examples/mlp.spec.json" "$T/r.tfrecord" \
	--out "$T/mlp" --set fit.epochs=1 -q -j1 >/dev/null
cat >"$T/prep.json" <<'J'
{"features": {"image": {"shape": [28, 28, 1], "output": "input_1", "layers": [
  {"class_name": "Rescaling", "config": {"scale": 0.00392156862745098}}]}}}
J
"$TFK_BIN/tfk-map" "$T/prep.json" "$T/te.tfrecord" -o "$T/tef.tfrecord"
n=$("$TFK_BIN/tfk-count" "$T/tef.tfrecord" | awk '{ print $1 }')

cat >"$T/peer.py" <<'PY'
import os, struct, sys
sys.path.insert(0, sys.argv[1])
import time
import crc32c, numpy as np, torch, torch.nn as nn
import tfexample as tfe
t0 = time.perf_counter()
torch.set_num_threads(os.cpu_count())
def masked(c):
    return (((c >> 15) | (c << 17)) + 0xa282ead8) & 0xffffffff
def records(path):
    blob, off = open(path, "rb").read(), 0
    while off < len(blob):
        n, = struct.unpack_from("<Q", blob, off)
        assert struct.unpack_from("<I", blob, off + 8)[0] == masked(crc32c.crc32c(blob[off:off + 8]))
        d = blob[off + 12:off + 12 + n]
        assert struct.unpack_from("<I", blob, off + 12 + n)[0] == masked(crc32c.crc32c(d))
        yield d
        off += 16 + n
m = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(),
                  nn.Linear(128, 10), nn.Softmax(-1)).eval()
recs = [tfe.Example.FromString(r) for r in records(sys.argv[2])]
out = open(sys.argv[3], "wb")
with torch.no_grad():
    for s in range(0, len(recs), 256):
        b = recs[s:s + 256]
        x = np.array([e.features.feature["input_1"].float_list.value for e in b],
                     np.float32).reshape(-1, 28, 28)
        y = m(torch.from_numpy(x)).numpy()
        for e, row in zip(b, y):
            o = tfe.Example()
            f = o.features.feature
            f["dense_1"].float_list.value.extend(row.tolist())
            f["label"].int64_list.value.extend(e.features.feature["label"].int64_list.value)
            d = o.SerializeToString()
            h = struct.pack("<Q", len(d))
            out.write(h + struct.pack("<I", masked(crc32c.crc32c(h))) + d +
                      struct.pack("<I", masked(crc32c.crc32c(d))))
out.close()
t = time.perf_counter() - t0
with open(sys.argv[4], "a") as f:
    f.write("%.6f\n" % t)
PY
ours=$(best_of 3 "'$TFK_BIN/tfk-predict' --dir '$T/mlp' --keep label -j1 '$T/tef.tfrecord' -o '$T/o.tfrecord'")
peer=$(best_of 2 "'$PYTHON' '$T/peer.py' '$root/tests/py' '$T/tef.tfrecord' '$T/p.tfrecord' '$T/work.txt'")
work=$(sort -n "$T/work.txt" | head -1)
awk -v n="$n" -v o="$ours" -v p="$peer" -v w="$work" 'BEGIN {
	printf "{\"bench\":\"predict\",\"ours\":%.0f,\"peer\":%.0f,\"unit\":\"records/s\",\"ratio\":%.2f,\"target\":5.0,\"records\":%d,\"peer_after_imports\":%.0f,\"ratio_after_imports\":%.2f}\n",
	       n / o, n / p, p / o, n, n / w, w / o
}'
