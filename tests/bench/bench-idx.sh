#!/bin/sh
# bench-idx: Fashion-MNIST training set (60,000 images, gzipped IDX) to
# one TFRecord file of Examples {image: 784 raw bytes, label: int64}.
#
# ours: tfk-idx, wall time, best of 3.
# peer: the usual Python route in the same run, best of 2: gzip + numpy
#       to read the IDX files, python3-protobuf Example messages (built
#       from TensorFlow's field numbers by tests/py/tfexample.py),
#       TFRecord framing with python3-crc32c (hardware CRC-32C, as TF's
#       own writer uses), written to a file.
# The two outputs must be byte-identical, else the bench fails.
#
# Prints one JSON line; unit seconds, ratio = peer / ours (speed-up),
# target: ours under 0.5 s ("pass" says whether it was met).
set -eu

: "${TFK_BIN:=$(cd "$(dirname "$0")/../.." && pwd)/bin}"
: "${PYTHON:=/usr/bin/python3}"
TESTS=$(cd "$(dirname "$0")/.." && pwd)
D=/usr/share/datasets/fashion-mnist
IMG=$D/train-images-idx3-ubyte.gz
LAB=$D/train-labels-idx1-ubyte.gz
T=$(mktemp -d /tmp/bench-idx-XXXXXX)
trap 'rm -rf "$T"' EXIT
unset SLURM_ARRAY_TASK_ID OMPI_COMM_WORLD_RANK

now() { date +%s%N; }

best=
for i in 1 2 3; do
	t0=$(now)
	"$TFK_BIN/tfk-idx" --images "$IMG" --labels "$LAB" -q -o "$T/ours"
	t1=$(now)
	dt=$((t1 - t0))
	if [ -z "$best" ] || [ "$dt" -lt "$best" ]; then best=$dt; fi
done

cat >"$T/peer.py" <<'EOF'
import gzip, struct, sys, time
import numpy as np
import crc32c
sys.path.insert(0, sys.argv[1] + "/py")
import tfexample as tfe

def masked(data):
    c = crc32c.crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF

def convert(images, labels, out):
    with gzip.open(images) as f:
        data = f.read()
    n, rows, cols = struct.unpack(">III", data[4:16])
    imgs = np.frombuffer(data, np.uint8, offset=16).reshape(n, rows * cols)
    with gzip.open(labels) as f:
        labs = np.frombuffer(f.read(), np.uint8, offset=8)
    with open(out, "wb") as f:
        for i in range(n):
            ex = tfe.Example()
            feat = ex.features.feature
            feat["image"].bytes_list.value.append(imgs[i].tobytes())
            feat["label"].int64_list.value.append(int(labs[i]))
            rec = ex.SerializeToString(deterministic=True)
            hdr = struct.pack("<Q", len(rec))
            f.write(hdr + struct.pack("<I", masked(hdr)) + rec +
                    struct.pack("<I", masked(rec)))

best = None
for _ in range(2):
    t0 = time.perf_counter()
    convert(sys.argv[2], sys.argv[3], sys.argv[4])
    dt = time.perf_counter() - t0
    best = dt if best is None else min(best, dt)
print("%.4f" % best)
EOF
peer=$("$PYTHON" "$T/peer.py" "$TESTS" "$IMG" "$LAB" "$T/peer.tfrecord")

if ! cmp -s "$T/ours-00000-of-00001.tfrecord" "$T/peer.tfrecord"; then
	echo "bench-idx: tfk-idx and the Python peer wrote different bytes" >&2
	exit 1
fi

awk -v o="$best" -v p="$peer" 'BEGIN {
	o /= 1e9
	printf "{\"bench\":\"idx\",\"ours\":%.4f,\"peer\":%.4f,\"unit\":\"s\",\"ratio\":%.1f,\"target\":0.5,\"records\":60000,\"pass\":%s}\n",
	       o, p, p / o, o < 0.5 ? "true" : "false"
}'
