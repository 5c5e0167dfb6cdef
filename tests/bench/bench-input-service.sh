#!/bin/sh
# bench-input-service.sh - tfk-train's input service (issue 19): a map
# heavy enough to make one process input-bound, RandomRotation (0.1) +
# RandomZoom (0.1) on 180x180 Fashion-MNIST images (600, resized by
# tfk-map), and a model whose step costs about what the map does (Conv2D
# 32 3x3 stride 3, GlobalAveragePooling2D, Dense 10), one thread each.
#
# peer: the trainer alone, the two layers at the model's front (tfk-train
#       runs them in its training graph: map and step one after the other);
# ours: mpirun -np 2: the trainer (rank 0) without them, and one input
#       worker (rank 1) running 'tfk-cat {} | tfk-map aug.map.json'.
# Both train 3 epochs; examples/s over the whole process (start-up,
# first epoch's pipeline start and all). Target 1.6.
# Needs mpirun (scripts/packages.txt). TFK_BENCH_STEPS=S: one epoch of
# S batches' records (a check that it runs).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${TFK_BIN:=$root/bin}"
: "${PYTHON:=/usr/bin/python3}"
PATH=$TFK_BIN:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
d=$(mktemp -d /tmp/tfk-bench-svc-XXXXXX)
trap 'rm -rf "$d"' EXIT
n=600 epochs=3
if [ -n "${TFK_BENCH_STEPS:-}" ]; then n=$((TFK_BENCH_STEPS * 32)) epochs=1; fi
F=/usr/share/datasets/fashion-mnist
cat >"$d/big.map.json" <<'J'
{"features": {"image": {"shape": [28, 28, 1], "layers": [
  {"class_name": "Resizing", "config": {"height": 180, "width": 180}}]}}}
J
cat >"$d/aug.map.json" <<'J'
{"features": {"image": {"shape": [180, 180, 1], "layers": [
  {"class_name": "RandomRotation", "config": {"factor": 0.1, "seed": 1}},
  {"class_name": "RandomZoom", "config": {"height_factor": 0.1, "seed": 2}}]}}}
J
tfk-idx -q --images $F/train-images-idx3-ubyte.gz --labels $F/train-labels-idx1-ubyte.gz |
	tfk-cat --take $n | tfk-map "$d/big.map.json" >"$d/big.tfrecord"
"$PYTHON" - "$d" <<'P'
import json, sys
d = sys.argv[1]
aug = [{"class_name": "RandomRotation", "config": {"name": "rot", "factor": 0.1, "seed": 1}},
       {"class_name": "RandomZoom", "config": {"name": "zoom", "height_factor": 0.1, "seed": 2}}]
def spec(front):
    return {"model": {"class_name": "Sequential", "config": {"name": "m", "layers": [
        {"class_name": "InputLayer", "config": {"batch_input_shape": [None, 180, 180, 1], "name": "input_1"}}]
        + front + [
        {"class_name": "Conv2D", "config": {"name": "conv", "filters": 32, "kernel_size": [3, 3], "strides": [3, 3], "activation": "relu"}},
        {"class_name": "GlobalAveragePooling2D", "config": {"name": "gap"}},
        {"class_name": "Dense", "config": {"name": "dense", "units": 10, "activation": "softmax"}}]}},
        "inputs": {"input_1": {"feature": "image", "scale": 1 / 255}},
        "compile": {"optimizer": "adam", "loss": "sparse_categorical_crossentropy"},
        "fit": {"epochs": 1, "batch_size": 32}}
json.dump(spec(aug), open(d + "/alone.json", "w"))
json.dump(spec([]), open(d + "/plain.json", "w"))
P

ns() {	# ns CMD...: wall nanoseconds of one run
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $((t1 - t0))
}
peer=$(ns tfk-train "$d/alone.json" "$d/big.tfrecord" --out "$d/a" -j 1 -q \
	--set fit.epochs=$epochs)
ours=$(ns mpirun -np 2 tfk-train "$d/plain.json" "$d/big.tfrecord" --out "$d/b" \
	-j 1 -q --set fit.epochs=$epochs --input-workers 1 \
	--input-pipeline "tfk-cat {} | tfk-map $d/aug.map.json")
"$PYTHON" -c '
import json, sys
ex, o, p = int(sys.argv[1]), int(sys.argv[2]) / 1e9, int(sys.argv[3]) / 1e9
print(json.dumps({"bench": "input-service", "ours": round(ex / o, 1),
    "peer": round(ex / p, 1), "unit": "examples/s", "ratio": round(p / o, 3),
    "target": 1.6, "workers": 1, "image": "180x180",
    "map": "RandomRotation+RandomZoom"}))' $((n * epochs)) "$ours" "$peer"
