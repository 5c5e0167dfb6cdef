#!/bin/sh
# bench-pipe: `tfk-cat FILE | tfk-count` against `cat FILE | cat > /dev/null`
# on the 1 GiB file of bench-count.sh, in the page cache. The pipe is how
# every tfkit pipeline moves records; both sides here verify every CRC,
# so the ratio says what framing and checking twice cost over a bare
# pipe copy. Target 0.3. Best of 5 runs each (hyperfine when installed).
# Environment: TFK_BIN, PYTHON, TFK_BENCH_DIR (see bench-count.sh).
set -eu

: "${TFK_BIN:=$(cd "$(dirname "$0")/../.." && pwd)/bin}"
: "${PYTHON:=/usr/bin/python3}"
export TFK_BIN PYTHON

data=$(sh "$(dirname "$0")/bench-count.sh" --data)
bytes=$(wc -c <"$data")
cat "$data" >/dev/null

got=$("$TFK_BIN/tfk-cat" "$data" | "$TFK_BIN/tfk-count" | awk '{ print $2; exit }')
[ "$got" = "$bytes" ] || {
	echo "tfk-cat | tfk-count counted $got bytes, the file has $bytes" >&2
	exit 1
}

. "$(dirname "$0")/lib.sh"

ours=$(best_of 5 "$TFK_BIN/tfk-cat $data | $TFK_BIN/tfk-count > /dev/null")
peer=$(best_of 5 "cat $data | cat > /dev/null")
awk -v b="$bytes" -v o="$ours" -v p="$peer" 'BEGIN {
	printf "{\"bench\":\"pipe\",\"ours\":%.1f,\"peer\":%.1f,\"unit\":\"MB/s\",\"ratio\":%.3f,\"target\":0.3}\n",
	       b / o / 1e6, b / p / 1e6, p / o
}'
