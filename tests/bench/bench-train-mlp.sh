#!/bin/sh
# bench-train-mlp.sh - issue 5's MLP (Flatten, Dense 128 relu, Dense 10
# softmax) trained for one epoch on Fashion-MNIST's 60,000 images,
# batch 32, Adam 1e-3, inputs / 255, 2 threads.
#
# ours: tfk-train examples/mlp.spec.json --train RECORDS -j 2 --set
#       fit.epochs=1, timed as a whole process (reading the records and
#       building the model included), then tfk-eval on the 10,000 test
#       images for the accuracy.
#       "ours" is the rate of the training steps themselves: the same
#       run with fit.steps_per_epoch=1 is timed too, and its time (load,
#       plan, first step, checkpoint) taken off, as the peer's clock
#       leaves those out; "ours_whole" is the whole process's rate.
# peer: tests/bench/torch_train.py mlp: PyTorch 1.13 on the CPU with 2
#       threads, the same model, initialization, optimizer and batch;
#       only its training loop is timed (not the import of torch or the
#       reading of the data), so the ratio is conservative. It runs with
#       OMP_WAIT_POLICY=PASSIVE (unless set): on a shared machine whose
#       cores are busy, OpenMP's default spinning threads slow PyTorch
#       down 30-60x (measured: 156 against 9,800 examples/s for the MLP),
#       which would make the ratio meaningless; idle threads that sleep
#       cost it little on a quiet machine.
# Both train from the same data in the same run, back to back.
#
# Prints {"bench":"train-mlp","ours","peer","unit":"examples/s","ratio",
# "target":2.0,"rss_ours","rss_peer" (peak RSS in kB),"accuracy" (ours,
# test set),"accuracy_peer"}. Fails clearly when tfk-train is missing.
# Environment: TFK_BIN, PYTHON.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${TFK_BIN:=$root/bin}"
: "${PYTHON:=/usr/bin/python3}"
. "$here/lib.sh"
train_bench mlp 2.0 60000 "mlp --epochs 1"
