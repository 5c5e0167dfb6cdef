#!/bin/sh
# bench-json.sh - tfk-json against the Python way of turning JSON lines
# into TFRecord files: json.loads per line, a python3-protobuf (C++
# implementation) Example filled from the dict, SerializeToString, and
# TFRecord framing with crcmod's C CRC-32C. Input: 100,000 generated
# lines, each with an int64 id, 8 floats, a short text, a label and a
# base64 blob ({"b64": ...}, 12 bytes). Both write a file in the same
# scratch directory, in the same run; the outputs must be the same
# records (same count and payload bytes). Times are CPU seconds (user +
# system) of the converting process, as in bench-csv. Prints one JSON
# line; target: ours >= 20x the peer's lines/s.
#
# Environment: TFK_BIN (tools), PYTHON (Debian's python3), LINES (100000).
set -e
: "${TFK_BIN:=$(cd "$(dirname "$0")/../.." && pwd)/bin}"
: "${PYTHON:=/usr/bin/python3}"
: "${LINES:=100000}"
. "$(dirname "$0")/lib.sh"
T=$(mktemp -d /tmp/tfk-bench-json-XXXXXX)
trap 'rm -rf "$T"' EXIT

cat >"$T/gen.py" <<'EOF'
import base64, json, random, sys
import numpy as np
rnd = random.Random(20240612)
words = ["alpha", "beta", "gamma", "delta", "\u00e9t\u00e9", "snow \u2603"]
w = sys.stdout.write
for i in range(int(sys.argv[1])):
    # floats as their shortest float32 text, as tfk-cat --json writes them
    x = ",".join(str(np.float32(rnd.uniform(-10, 10))) for _ in range(8))
    text = json.dumps(rnd.choice(words) + " %d" % rnd.randrange(1000),
                      ensure_ascii=False)
    blob = base64.b64encode(bytes(rnd.randrange(256) for _ in range(12)))
    w('{"id":%d,"x":[%s],"text":%s,"label":%d,"blob":{"b64":"%s"}}\n' %
      (i, x, text, rnd.randrange(10), blob.decode()))
EOF

cat >"$T/peer.py" <<'EOF'
import base64, json, resource, struct, sys
import crcmod
sys.path.insert(0, sys.argv[3])
import tfexample as tfe
crc = crcmod.mkCrcFun(0x11EDC6F41, initCrc=0, xorOut=0xFFFFFFFF, rev=True)
def masked(c):
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF
Example = tfe.Example
with open(sys.argv[1], encoding="utf-8") as f, open(sys.argv[2], "wb") as out:
    for line in f:
        if not line.strip():
            continue
        ex = Example()
        fm = ex.features.feature
        for name, v in json.loads(line).items():
            if not isinstance(v, list):
                v = [v]
            if isinstance(v[0], dict):
                fm[name].bytes_list.value.extend(base64.b64decode(b["b64"]) for b in v)
            elif isinstance(v[0], str):
                fm[name].bytes_list.value.extend(s.encode() for s in v)
            elif any(isinstance(x, float) for x in v):
                fm[name].float_list.value.extend(v)
            else:
                fm[name].int64_list.value.extend(v)
        data = ex.SerializeToString()
        hdr = struct.pack("<Q", len(data))
        out.write(hdr + struct.pack("<I", masked(crc(hdr))) + data +
                  struct.pack("<I", masked(crc(data))))
ru = resource.getrusage(resource.RUSAGE_SELF)
print(ru.ru_utime + ru.ru_stime)
EOF

"$PYTHON" "$T/gen.py" "$LINES" >"$T/data.jsonl"

best=$(best_cpu 3 "$TFK_BIN/tfk-json" -o "$T/ours.tfrecord" "$T/data.jsonl")
tests=$(cd "$(dirname "$0")/.." && pwd)
peer=$("$PYTHON" "$T/peer.py" "$T/data.jsonl" "$T/peer.tfrecord" "$tests/py")

size_ours=$(wc -c <"$T/ours.tfrecord")
size_peer=$(wc -c <"$T/peer.tfrecord")
[ "$size_ours" -eq "$size_peer" ] ||
	echo "bench-json: outputs differ: $size_ours vs $size_peer bytes" >&2

awk -v n="$LINES" -v ours="$best" -v peer="$peer" 'BEGIN {
	if (ours <= 0) ours = 0.001
	o = n / ours; p = n / peer
	printf "{\"bench\":\"json\",\"ours\":%.0f,\"peer\":%.0f,\"unit\":\"lines/s\",\"ratio\":%.1f,\"target\":20}\n", o, p, o / p
}'
