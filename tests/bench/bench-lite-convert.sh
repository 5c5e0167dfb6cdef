#!/bin/sh
# bench-lite-convert.sh - issue 7's int8 targets, measured in one run:
# the Fashion-MNIST CNN of examples/cnn.spec.json (trained briefly here),
# converted by tfk-lite convert to a float and a full-integer int8 file;
# `tfk-lite run` on the same 2000 test images with each (both one
# thread: the float path through the graph IR's kernels, the int8 one
# through lib/model/tflint8.c and lib/kernels/int8's fast FC/CONV_2D),
# best of 3 wall times, startup included. "ours" is int8 images/s,
# "peer" float images/s (target: >= 2x); "size_ratio" is the int8
# file's size over the float file's (target: <= 0.27); "acc_float" and
# "acc_int8" are both files' accuracy on those 2000 images.
#
# Environment: TFK_BIN (tools), PYTHON (Debian's, numpy).
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${TFK_BIN:=$root/bin}"
: "${PYTHON:=/usr/bin/python3}"
PATH="$TFK_BIN:$PATH"
D=/usr/share/datasets/fashion-mnist
T=$(mktemp -d /tmp/tfk-bench-lite-XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$root/tests/bench/lib.sh"
cd "$T"

cnn_tflite 2048
"$PYTHON" -c '
import gzip, numpy as np
d = "'$D'/"
img = np.frombuffer(gzip.open(d + "t10k-images-idx3-ubyte.gz").read()[16:], np.uint8).reshape(-1, 28, 28, 1)
lab = np.frombuffer(gzip.open(d + "t10k-labels-idx1-ubyte.gz").read()[8:], np.uint8)
np.save("x.npy", (img[:2000] / np.float32(255)).astype(np.float32)); np.save("l.npy", lab[:2000])'
mkdir of oq
best() {	# best of 3 wall seconds of: tfk-lite run MODEL --outdir DIR
	b=
	for i in 1 2 3; do
		s=$(date +%s.%N)
		tfk-lite run "$1" --inputs input_1=x.npy --outdir "$2" >/dev/null
		e=$(date +%s.%N)
		b=$(echo "$s $e $b" | awk '{ t = $2 - $1; if ($3 == "" || t < $3) t = t; else t = $3; print t }')
	done
	echo "$b"
}
tf=$(best f.tflite of)
tq=$(best q.tflite oq)
"$PYTHON" -c '
import os, numpy as np
l = np.load("l.npy")
af = (np.load("of/dense.npy").argmax(1) == l).mean()
aq = (np.load("oq/dense.npy").argmax(1) == l).mean()
ours, peer = 2000 / '$tq', 2000 / '$tf'
size = os.path.getsize("q.tflite") / os.path.getsize("f.tflite")
print("{\"bench\":\"lite-convert\",\"ours\":%.1f,\"peer\":%.1f,\"unit\":\"images/s\",\"ratio\":%.3f,\"target\":2,\"size_ratio\":%.3f,\"acc_float\":%.4f,\"acc_int8\":%.4f}"
      % (ours, peer, ours / peer, size, af, aq))'
