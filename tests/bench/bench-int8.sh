#!/bin/sh
# bench-int8.sh - int8 inference against our own float path (issue 7:
# int8 CNN inference at >= 2x the images/s of the float path). The
# layer is the issue-5 CNN's second conv: 5x5, 32 -> 32 channels, SAME,
# stride 1, on [32, 24, 24, 32] batches. Ours: tfk_int8_conv2d
# (per-channel int8 weights packed once, fused RELU, requantization
# included); peer: tfk_cpu_conv2d on float32, the forward pass the float
# model runs. Both in the same process (tests/bench/int8.c), 2 threads,
# alternating quarters of each round; three rounds of ~3 s, best round
# of each side (the machine is shared). Prints one JSON line in
# images/s, with the instruction sets used.
#
# Environment: TFK_BENCH_BIN (C bench programs).
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${TFK_BENCH_BIN:=$root/build/bench}"

best_i=0
best_f=0
for r in 1 2 3; do
	set -- $("$TFK_BENCH_BIN/int8" -t 2 -s 3 32 24 24 32 5 5 32 SAME)
	best_i=$(awk -v a="$best_i" -v b="$1" 'BEGIN { print (b > a) ? b : a }')
	best_f=$(awk -v a="$best_f" -v b="$2" 'BEGIN { print (b > a) ? b : a }')
	isa=$3
	fisa=$4
done
awk -v o="$best_i" -v p="$best_f" -v i="$isa" -v f="$fisa" 'BEGIN {
	printf "{\"bench\":\"int8\",\"ours\":%.1f,\"peer\":%.1f,\"unit\":\"images/s\",\"ratio\":%.3f,\"target\":2.0,\"isa\":\"%s\",\"peer_isa\":\"%s\"}\n",
	       o, p, o / p, i, f
}'
