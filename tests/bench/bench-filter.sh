#!/bin/sh
# bench-filter: tfk-filter 'label >= 0 and len(image) == 1' over
# Fashion-MNIST records (every record kept, so it reads, verifies,
# decodes, evaluates and writes all of them) against cat FILE >
# /dev/null on the same file in the page cache. The ratio of throughputs
# says what decoding and evaluating costs over a plain copy. Target 0.5.
# "ours" is reported in records/s, the ratio from bytes/s.
#
# The file, $TFK_BENCH_DIR/fmnist-x4.tfrecord (~200 MB, 240000 records),
# is Fashion-MNIST's training set (Debian's dataset-fashion-mnist) through
# tfk-idx, four times over; made once and kept. Best of 5 runs.
# Environment: TFK_BIN (tools), TFK_BENCH_DIR (/tmp/tfk-bench), PYTHON.
set -eu

: "${TFK_BIN:=$(cd "$(dirname "$0")/../.." && pwd)/bin}"
: "${TFK_BENCH_DIR:=/tmp/tfk-bench}"
: "${PYTHON:=/usr/bin/python3}"
. "$(dirname "$0")/lib.sh"
fm=/usr/share/datasets/fashion-mnist
data=$TFK_BENCH_DIR/fmnist-x4.tfrecord

if [ ! -s "$data" ]; then
	mkdir -p "$TFK_BENCH_DIR"
	"$TFK_BIN/tfk-idx" --images "$fm/train-images-idx3-ubyte.gz" \
		--labels "$fm/train-labels-idx1-ubyte.gz" \
		>"$TFK_BENCH_DIR/fmnist-1.tfrecord" 2>/dev/null
	cat "$TFK_BENCH_DIR/fmnist-1.tfrecord" "$TFK_BENCH_DIR/fmnist-1.tfrecord" \
	    "$TFK_BENCH_DIR/fmnist-1.tfrecord" "$TFK_BENCH_DIR/fmnist-1.tfrecord" \
	    >"$data.tmp"
	mv "$data.tmp" "$data"
	rm -f "$TFK_BENCH_DIR/fmnist-1.tfrecord"
fi

bytes=$(wc -c <"$data")
recs=$("$TFK_BIN/tfk-filter" "label >= 0 and len(image) == 1" "$data" |
       "$TFK_BIN/tfk-count" | awk '{ print $1 }')
[ "$recs" -eq 240000 ] || { echo "tfk-filter kept $recs of 240000" >&2; exit 1; }
ours=$(best_of 5 "'$TFK_BIN/tfk-filter' 'label >= 0 and len(image) == 1' '$data' > /dev/null")
peer=$(best_of 5 "cat '$data' > /dev/null")
awk -v b="$bytes" -v n="$recs" -v o="$ours" -v p="$peer" 'BEGIN {
	printf "{\"bench\":\"filter\",\"ours\":%.0f,\"peer\":%.0f,\"unit\":\"records/s\",\"ratio\":%.3f,\"target\":0.5}\n",
	       n / o, n / p, p / o
}'
