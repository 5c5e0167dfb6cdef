#!/bin/sh
# bench-events.sh - the event-file reader (issue 16): every scalar of a
# 100 MB TensorBoard event file printed by `tfk-events --csv`, against
# TensorBoard 2.21's EventAccumulator loading the same file (Reload with
# size_guidance scalars 0, i.e. keep every value, then Scalars() of every
# tag: what TensorBoard does before it can show the file). Goal: >= 50x.
#
# The file: about two million TF1 simple_value events (wall_time, step,
# one Summary.Value) over 16 tags, after the file_version event, encoded
# here from event.proto's field numbers and framed as TFRecords with
# masked CRC-32C (python3-crc32c), so neither side's writer is measured.
# Ours is the best of three runs, the peer one run (it takes a minute).
# Only with the TF tier's environment (scripts/tfenv): else
# "peer_missing". Prints {"bench":"events","ours","peer" (MB/s),
# "unit":"MB/s","ratio","target":50,"events"}. Environment: TFK_BIN,
# PYTHON.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${TFK_BIN:=$root/bin}"
: "${PYTHON:=/usr/bin/python3}"
. "$root/tests/bench/lib.sh"
tf_env events || exit 0
T=$(mktemp -d /tmp/tfk-bench-XXXXXX)
trap 'rm -rf "$T"' EXIT
# best_of's hyperfine writes its JSON there (lib.sh's default,
# /tmp/tfk-bench, need not exist)
: "${TFK_BENCH_DIR:=$T}"
export TFK_BENCH_DIR

"$PYTHON" - "$T/events.out.tfevents.1.bench" >/dev/null <<'PY'
import struct, sys
import crc32c

def masked(b):
    c = crc32c.crc32c(b)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)

def record(payload):
    n = struct.pack("<Q", len(payload))
    return (n + struct.pack("<I", masked(n)) + payload +
            struct.pack("<I", masked(payload)))

out = bytearray()
out += record(b"\x09" + struct.pack("<d", 1.7e9) + b"\x1a\x0dbrain.Event:2")
tags = [("train/metric_%02d" % i).encode() for i in range(16)]
step, target = 0, 100 * 1000 * 1000
while len(out) < target:
    for k, tag in enumerate(tags):
        val = b"\x0a" + varint(len(tag)) + tag + b"\x15" + \
            struct.pack("<f", 1.0 / (1 + step + k))
        summ = b"\x0a" + varint(len(val)) + val
        ev = (b"\x09" + struct.pack("<d", 1.7e9 + step) + b"\x10" +
              varint(step) + b"\x2a" + varint(len(summ)) + summ)
        out += record(ev)
    step += 1
open(sys.argv[1], "wb").write(out)
print(step * len(tags))
PY
f=$T/events.out.tfevents.1.bench
mb=$(awk -v b="$(wc -c <"$f")" 'BEGIN { printf "%.3f", b / 1e6 }')
n=$("$TFK_BIN/tfk-events" --csv "$f" | wc -l)
ours_s=$(best_of 3 "'$TFK_BIN/tfk-events' --csv '$f'")
peer_s=$("$TF_PY" - "$f" 2>/dev/null <<'PY'
import os, sys, time
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
from tensorboard.backend.event_processing import event_accumulator
t0 = time.perf_counter()
ea = event_accumulator.EventAccumulator(
    sys.argv[1], size_guidance={event_accumulator.SCALARS: 0})
ea.Reload()
n = sum(len(ea.Scalars(t)) for t in ea.Tags()["scalars"])
print("%.3f" % (time.perf_counter() - t0))
sys.stderr.write("%d scalars\n" % n)
PY
)
awk -v mb="$mb" -v o="$ours_s" -v p="$peer_s" -v n="$n" 'BEGIN {
	printf "{\"bench\":\"events\",\"ours\":%.1f,\"peer\":%.1f,\"unit\":\"MB/s\",\"ratio\":%.2f,\"target\":50,\"events\":%d,\"ours_s\":%s,\"peer_s\":%s}\n",
		mb / o, mb / p, p / o, n - 1, o, p
}'
