#!/bin/sh
# bench-pipeline: a training input pipeline on Fashion-MNIST records,
#   tfk-cat --repeat R F | tfk-shuffle --buffer 10000 --seed 1 | tfk-batch 32
# against the same bytes through three bare pipes,
#   cat F ... F | cat | cat
# (three processes each, on a shared 2-core machine). Copies through
# the pipes and record parsing should be the only cost of ours: the
# ratio of byte throughputs is the target (0.25, issue 4); records/s of
# the pipeline is reported too ("records_per_s").
#
# Until tfk-shuffle exists in TFK_BIN the middle stage is left out
# (tfk-cat | tfk-batch 32) and "pipeline" in the JSON says so.
#
# F is /tmp/tfk-bench/fashion-mnist-train.tfrecord (60,000 Examples
# {image: 784 bytes, label: int64}, 50 MB), made once by tfk-idx from
# /usr/share/datasets/fashion-mnist and kept; R = 6 passes (300 MB, 360k
# records) so a run lasts long enough to time. The batches are checked
# once: tfk-unbatch of them must count every record. Times are the best
# of 5 runs (hyperfine when installed, else date +%s%N).
# Environment: TFK_BIN, PYTHON, TFK_BENCH_DIR (/tmp/tfk-bench).
set -eu

: "${TFK_BIN:=$(cd "$(dirname "$0")/../.." && pwd)/bin}"
: "${PYTHON:=/usr/bin/python3}"
: "${TFK_BENCH_DIR:=/tmp/tfk-bench}"
unset SLURM_ARRAY_TASK_ID OMPI_COMM_WORLD_RANK
D=/usr/share/datasets/fashion-mnist
data=$TFK_BENCH_DIR/fashion-mnist-train.tfrecord
R=6

if [ ! -s "$data" ]; then
	mkdir -p "$TFK_BENCH_DIR"
	"$TFK_BIN/tfk-idx" --images "$D/train-images-idx3-ubyte.gz" \
		--labels "$D/train-labels-idx1-ubyte.gz" -q >"$data.tmp-$$"
	mv "$data.tmp-$$" "$data"
fi
bytes=$(($(wc -c <"$data") * R))
records=$((60000 * R))
files=
k=0
while [ $k -lt $R ]; do
	files="$files $data"
	k=$((k + 1))
done
cat "$data" >/dev/null

if [ -x "$TFK_BIN/tfk-shuffle" ]; then
	mid="| $TFK_BIN/tfk-shuffle --buffer 10000 --seed 1 "
	what="tfk-cat | tfk-shuffle --buffer 10000 | tfk-batch 32"
else
	mid=
	what="tfk-cat | tfk-batch 32 (no tfk-shuffle yet)"
fi
ours_cmd="$TFK_BIN/tfk-cat --repeat $R $data $mid| $TFK_BIN/tfk-batch 32"
peer_cmd="cat$files | cat | cat"

got=$(sh -c "$ours_cmd" | "$TFK_BIN/tfk-unbatch" | "$TFK_BIN/tfk-count" |
      awk '{ print $1; exit }')
[ "$got" = "$records" ] || {
	echo "the pipeline's batches hold $got records, want $records" >&2
	exit 1
}

. "$(dirname "$0")/lib.sh"

ours=$(best_of 5 "$ours_cmd")
peer=$(best_of 5 "$peer_cmd")
awk -v b="$bytes" -v n="$records" -v o="$ours" -v p="$peer" -v w="$what" 'BEGIN {
	printf "{\"bench\":\"pipeline\",\"ours\":%.1f,\"peer\":%.1f,\"unit\":\"MB/s\",\"ratio\":%.3f,\"target\":0.25,\"records_per_s\":%.0f,\"pipeline\":\"%s\"}\n",
	       b / o / 1e6, b / p / 1e6, p / o, n / o, w
}'
