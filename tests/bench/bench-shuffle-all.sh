#!/bin/sh
# bench-shuffle-all: `tfk-shuffle --buffer all --memory 256M` of the 1 GiB
# file of bench-count.sh (~1 KiB records, over 4x the memory limit, so it
# spills five sorted runs and merges them) against `cat FILE > /dev/null`
# on the same file in the page cache, as MB/s of input. The shuffle
# reads every byte, checks its CRCs, writes it to a run, reads it back
# and writes it out: the ratio says what an external shuffle costs over
# one bare read. Target 0.04. Also reported: the peak RSS of the shuffle
# (/usr/bin/time, Debian package `time`), which --memory must bound.
# Ours is the best of 3 runs, the peer the best of 5.
# Environment: TFK_BIN, PYTHON, TFK_BENCH_DIR (see bench-count.sh; the
# runs go there too, about 1.1 GB while the shuffle runs).
set -eu

: "${TFK_BIN:=$(cd "$(dirname "$0")/../.." && pwd)/bin}"
: "${PYTHON:=/usr/bin/python3}"
: "${TFK_BENCH_DIR:=/tmp/tfk-bench}"
export TFK_BIN PYTHON TFK_BENCH_DIR

data=$(sh "$(dirname "$0")/bench-count.sh" --data)
bytes=$(wc -c <"$data")
records=$("$TFK_BIN/tfk-count" "$data" | cut -d' ' -f1)
cat "$data" >/dev/null
[ -x /usr/bin/time ] || { echo "bench-shuffle-all: needs /usr/bin/time (apt install time)" >&2; exit 1; }

# A correct run first (and a warm-up): every record comes out.
got=$("$TFK_BIN/tfk-shuffle" --buffer all --memory 256M --tmpdir "$TFK_BENCH_DIR" "$data" |
	"$TFK_BIN/tfk-count" | cut -d' ' -f1,2)
[ "$got" = "$records $bytes" ] || {
	echo "tfk-shuffle | tfk-count: $got, the input has $records $bytes" >&2
	exit 1
}

best=
rss=0
k=0
while [ $k -lt 3 ]; do
	/usr/bin/time -f '%e %M' -o "$TFK_BENCH_DIR/shuffle-time.$$" \
		"$TFK_BIN/tfk-shuffle" --buffer all --memory 256M \
		--tmpdir "$TFK_BENCH_DIR" "$data" >/dev/null
	read -r t m <"$TFK_BENCH_DIR/shuffle-time.$$"
	if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then
		best=$t
	fi
	[ "$m" -gt "$rss" ] && rss=$m
	k=$((k + 1))
done
rm -f "$TFK_BENCH_DIR/shuffle-time.$$"

peer=
k=0
while [ $k -lt 5 ]; do
	t0=$(date +%s%N)
	cat "$data" >/dev/null
	t1=$(date +%s%N)
	t=$((t1 - t0))
	if [ -z "$peer" ] || [ $t -lt "$peer" ]; then peer=$t; fi
	k=$((k + 1))
done

awk -v b="$bytes" -v o="$best" -v p="$peer" -v r="$rss" -v n="$records" 'BEGIN {
	p /= 1e9
	printf "{\"bench\":\"shuffle-all\",\"ours\":%.1f,\"peer\":%.1f,\"unit\":\"MB/s\",\"ratio\":%.3f,\"target\":0.04,\"records_per_s\":%.0f,\"peak_rss_mb\":%.1f,\"memory_mb\":256,\"data_mb\":%.1f}\n",
	       b / o / 1e6, b / p / 1e6, p / o, n / o, r / 1024, b / 1e6
}'
