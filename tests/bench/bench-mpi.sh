#!/bin/sh
# bench-mpi.sh - data-parallel tfk-train under mpirun (issue 19), on this
# machine's cores, with OpenMPI's shared-memory transport.
#
# train-mpi-mlp, train-mpi-cnn: examples/mlp.spec.json and cnn.spec.json
#       for one epoch over N Fashion-MNIST examples (60000 for the MLP,
#       6000 for the CNN), 2 ranks x 1 thread (per-rank batch 32, global
#       64: weak scaling, as Horovod reports it) against 1 rank x 1
#       thread (batch 32), each timed as a whole process (the best of 3)
#       with the time of the same command at fit.steps_per_epoch=1 taken
#       off (load, plan, checkpoint); examples/s ratio, target 1.8 (90%
#       efficiency).
# gradsync: the fused gradient sum alone (tests/bench/bench-gradsync.c:
#       8 tensors, 64 MiB in all, copied in from an executor's fetches,
#       summed in 64 MiB buckets, made means; the time it adds to the
#       executor's runs) against a bare MPI_Allreduce of the same bytes
#       (tests/bench/mpi/allreduce.c, built here with mpicc), both on 2
#       ranks; MB/s ratio, target 0.9. A second line at 4 MiB.
# Needs mpirun and mpicc (scripts/packages.txt), TFK_BIN, TFK_BENCH_BIN.
# TFK_BENCH_STEPS=S: S steps each side (a check that it runs).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${TFK_BIN:=$root/bin}"
: "${TFK_BENCH_BIN:=$root/build/bench}"
: "${PYTHON:=/usr/bin/python3}"
. "$here/lib.sh"
PATH=$TFK_BIN:$PATH
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi="mpirun --oversubscribe -np"
d=$(mktemp -d /tmp/tfk-bench-mpi-XXXXXX)
trap 'rm -rf "$d"' EXIT
F=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $F/train-images-idx3-ubyte.gz \
	--labels $F/train-labels-idx1-ubyte.gz >"$d/all.tfrecord"

secs() {	# secs CMD...: wall nanoseconds, the best of 3 runs
	best=
	for _ in 1 2 3; do
		t0=$(date +%s%N)
		"$@" >/dev/null
		t1=$(date +%s%N)
		[ -n "$best" ] && [ $((t1 - t0)) -ge "$best" ] || best=$((t1 - t0))
	done
	echo "$best"
}

# train NAME SPEC EXAMPLES: the two JSON lines' numbers
train() {
	name=$1 spec=$root/examples/$2 n=$3
	tfk-cat --take "$n" "$d/all.tfrecord" >"$d/$name.tfrecord"
	steps=
	[ -z "${TFK_BENCH_STEPS:-}" ] || steps="--set fit.steps_per_epoch=$TFK_BENCH_STEPS"
	set -- --set fit.epochs=1 -j 1 -q "$d/$name.tfrecord"
	rm -rf "$d/o"
	one=$(secs tfk-train "$spec" --out "$d/o1" --set fit.batch_size=32 $steps "$@")
	one0=$(secs tfk-train "$spec" --out "$d/o1b" --set fit.batch_size=32 --set fit.steps_per_epoch=1 "$@")
	two=$(secs $mpi 2 tfk-train "$spec" --out "$d/o2" --set fit.batch_size=64 $steps "$@")
	two0=$(secs $mpi 2 tfk-train "$spec" --out "$d/o2b" --set fit.batch_size=64 --set fit.steps_per_epoch=1 "$@")
	rm -rf "$d"/o1 "$d"/o1b "$d"/o2 "$d"/o2b
	ex1=$n ex2=$n
	if [ -n "$steps" ]; then ex1=$((TFK_BENCH_STEPS * 32)) ex2=$((TFK_BENCH_STEPS * 64)); fi
	"$PYTHON" -c '
import json, sys
name, one, one0, two, two0 = sys.argv[1], *(float(v) / 1e9 for v in sys.argv[2:6])
ex1, ex2 = map(float, sys.argv[6:])
ours = (ex2 - 64) / max(two - two0, 1e-9); peer = (ex1 - 32) / max(one - one0, 1e-9)
print(json.dumps({"bench": name, "ours": round(ours, 1), "peer": round(peer, 1),
    "unit": "examples/s", "ratio": round(ours / peer, 3), "target": 1.8,
    "ranks": 2, "threads_per_rank": 1, "batch_per_rank": 32,
    "whole_s_ours": round(two, 3), "whole_s_peer": round(one, 3)}))' \
		"$name" "$one" "$one0" "$two" "$two0" "$ex1" "$ex2"
}

train train-mpi-mlp mlp.spec.json 60000
train train-mpi-cnn cnn.spec.json 6000

mpicc -O2 -o "$d/allreduce" "$here/mpi/allreduce.c"
for mb in 64 4; do
	ours=$($mpi 2 "$TFK_BENCH_BIN/bench-gradsync" --mb $mb --iters 10)
	peer=$($mpi 2 "$d/allreduce" --mb $mb --iters 10)
	"$PYTHON" -c '
import json, sys
mb, o, p = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
print(json.dumps({"bench": "gradsync-%smb" % mb, "ours": o, "peer": p,
    "unit": "MB/s", "ratio": round(o / p, 3), "target": 0.9,
    "peer_name": "MPI_Allreduce", "ranks": 2}))' "$mb" "$ours" "$peer"
done
