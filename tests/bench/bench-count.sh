#!/bin/sh
# bench-count: tfk-count FILE against cat FILE > /dev/null on a 1 GiB
# TFRecord file in the page cache. Both read every byte; tfk-count also
# frames and CRC-checks every record, so the ratio of throughputs says
# how close record verification comes to the memory copy. Target 0.8 (issue 17).
# A second line, "count-tf", has TensorFlow 2.21's count of the same
# file: tf.data.TFRecordDataset (8 MiB buffer; it checks both CRCs of
# every record too) counted in batches of 4096 by Dataset.reduce, best
# of 3 after a warm-up (tests/bench/tf_peer.py count), target 1; when
# the TF tier's environment is missing (scripts/tfenv --check) the line
# says so.
#
#   sh tests/bench/bench-count.sh          two JSON lines on stdout
#   sh tests/bench/bench-count.sh --data   make (or reuse) the file, print its path
#
# The file, /tmp/tfk-bench/records-1g.tfrecord, is made once and kept:
# 1024 copies of a 1 MiB block of ~1 KiB records (sizes 512..1535 bytes,
# random payloads) framed by $PYTHON with the crc32c module, so neither
# the data nor its CRCs come from tfkit. Times are the best of 5 runs
# (hyperfine when installed, else date +%s%N), after a warm-up read.
# Environment: TFK_BIN (tools), PYTHON, TFK_BENCH_DIR (/tmp/tfk-bench).
set -eu

: "${TFK_BIN:=$(cd "$(dirname "$0")/../.." && pwd)/bin}"
: "${PYTHON:=/usr/bin/python3}"
: "${TFK_BENCH_DIR:=/tmp/tfk-bench}"
data=$TFK_BENCH_DIR/records-1g.tfrecord

make_data() {
	[ -s "$data" ] && [ "$(wc -c <"$data")" -ge 1073741824 ] && return 0
	mkdir -p "$TFK_BENCH_DIR"
	"$PYTHON" - "$TFK_BENCH_DIR/block.tfrecord" <<'EOF'
import os, random, struct, sys
import crc32c

def masked(b):
    c = crc32c.crc32c(b)
    return (((c >> 15) | (c << 17)) + 0xa282ead8) & 0xffffffff

rnd = random.Random(1)
out = bytearray()
while len(out) < (1 << 20) - 1600:
    payload = rnd.randbytes(rnd.randrange(512, 1536))
    head = struct.pack('<Q', len(payload))
    out += head + struct.pack('<I', masked(head))
    out += payload + struct.pack('<I', masked(payload))
open(sys.argv[1], 'wb').write(out)
EOF
	i=0
	while [ $i -lt 1060 ]; do
		cat "$TFK_BENCH_DIR/block.tfrecord"
		i=$((i + 1))
	done >"$data.tmp"
	mv "$data.tmp" "$data"
	rm -f "$TFK_BENCH_DIR/block.tfrecord" "$data.idx"
}

. "$(dirname "$0")/lib.sh"

make_data
if [ "${1:-}" = --data ]; then
	echo "$data"
	exit 0
fi
rm -f "$data.idx"	# a fresh index would let tfk-count skip the reading
bytes=$(wc -c <"$data")
cat "$data" >/dev/null	# into the page cache
want=$("$TFK_BIN/tfk-count" "$data" | awk '{ print $1; exit }')
[ "$want" -gt 1000000 ] || { echo "tfk-count failed on $data" >&2; exit 1; }

ours=$(best_of 5 "$TFK_BIN/tfk-count $data > /dev/null")
peer=$(best_of 5 "cat $data > /dev/null")
awk -v b="$bytes" -v o="$ours" -v p="$peer" 'BEGIN {
	printf "{\"bench\":\"count\",\"ours\":%.1f,\"peer\":%.1f,\"unit\":\"MB/s\",\"ratio\":%.3f,\"target\":0.8}\n",
	       b / o / 1e6, b / p / 1e6, p / o
}'
if tf_env count-tf; then
	if j=$(tf_peer count-tf count "$data"); then
		"$PYTHON" -c 'import json, sys
b, o, tf = int(sys.argv[1]), float(sys.argv[2]), json.loads(sys.argv[3])
ours = b / o / 1e6
print(json.dumps({"bench": "count-tf", "ours": round(ours, 1),
                  "peer": tf["mb_per_s"], "unit": "MB/s",
                  "ratio": round(ours / tf["mb_per_s"], 3), "target": 1.0,
                  "records": tf["records"]}, separators=(",", ":")))' \
			"$bytes" "$ours" "$j"
	else
		echo "$j"
	fi
fi
