#!/bin/sh
# bench-augment.sh - RandomRotation's per-image cost against Pillow's
# Image.rotate(angle, resample=BILINEAR), on the same 180x180x3 images and
# the same angles, in the same run (issue 4's target: >= 2x faster).
#
# 200 synthetic photo-like images (tests/py/augment.py bench-data) and
# angles drawn uniformly from [-36, 36] degrees (RandomRotation(0.1)),
# fixed seeds. Ours: tfk_aug_transform with Keras' rotation matrix,
# bilinear, fill reflect (Keras' default - more work at the borders than
# Pillow's black fill), float32 output as Keras returns
# (tests/bench/bench-augment.c). Peer: Pillow in one Python process, only
# the rotate calls timed. Both single-threaded, best of 5 passes. Prints
# one JSON line; "ours_u8" is our images/s with uint8 output, for the
# like-for-like comparison with Pillow.
#
# Environment: TFK_BENCH_BIN (C bench programs), PYTHON (Debian's).
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${TFK_BENCH_BIN:=$root/build/bench}"
: "${PYTHON:=/usr/bin/python3}"
N=200
S=180
T=$(mktemp -d /tmp/tfk-bench-augment-XXXXXX)
trap 'rm -rf "$T"' EXIT

"$PYTHON" "$root/tests/py/augment.py" bench-data "$T/img.raw" $N $S $S
"$PYTHON" -c '
import random, sys
r = random.Random(4)
print("\n".join("%.6f" % r.uniform(-36, 36) for _ in range(int(sys.argv[1]))))
' $N >"$T/angles.txt"

ours=$("$TFK_BENCH_BIN/bench-augment" "$T/img.raw" $N $S $S "$T/angles.txt")
ours_u8=$("$TFK_BENCH_BIN/bench-augment" --u8 "$T/img.raw" $N $S $S \
	"$T/angles.txt")
peer=$("$PYTHON" "$root/tests/py/augment.py" pillow-rotate "$T/img.raw" $N \
	$S $S "$T/angles.txt" 5)
awk -v o="$ours" -v u="$ours_u8" -v p="$peer" 'BEGIN {
	printf "{\"bench\":\"augment\",\"ours\":%.1f,\"peer\":%.1f,\"unit\":\"images/s\",\"ratio\":%.3f,\"target\":2,\"ours_u8\":%.1f}\n",
	       o, p, o / p, u
}'
