#!/bin/sh
# bench-train-cnn.sh - issue 5's CNN (the TensorFlow 2.0 book's: Conv2D
# 32 5x5 valid relu, Conv2D 32 5x5 same relu, MaxPooling2D 2, Dropout
# 0.5, Flatten, Dense 10 softmax) trained for 300 steps of batch 32 on
# Fashion-MNIST, Adam 1e-3, inputs / 255, 2 threads (a full epoch would
# take a minute per side; the step rate is what is compared).
#
# ours: tfk-train examples/cnn.spec.json --train RECORDS -j 2 --set
#       fit.steps_per_epoch=300, timed as a whole process (reading all
#       60,000 records and building the model included), then tfk-eval
#       on the 10,000 test images for the accuracy.
#       "ours" is the rate of the training steps themselves: the same
#       run with fit.steps_per_epoch=1 is timed too, and its time (load,
#       plan, first step, checkpoint) taken off, as the peer's clock
#       leaves those out; "ours_whole" is the whole process's rate.
# peer: tests/bench/torch_train.py cnn --steps 300: PyTorch 1.13 on the
#       CPU with 2 threads, the same model, initialization, optimizer and
#       batch;
#       only its training loop is timed (not the import of torch or the
#       reading of the data), so the ratio is conservative. It runs with
#       OMP_WAIT_POLICY=PASSIVE (unless set): on a shared machine whose
#       cores are busy, OpenMP's default spinning threads slow PyTorch
#       down 30-60x (measured: 156 against 9,800 examples/s for the MLP),
#       which would make the ratio meaningless; idle threads that sleep
#       cost it little on a quiet machine.
# Both train from the same data in the same run, back to back.
#
# Prints {"bench":"train-cnn","ours","peer","unit":"examples/s","ratio",
# "target":1.0,"rss_ours","rss_peer" (peak RSS in kB),"accuracy" (ours,
# test set),"accuracy_peer"}. Fails clearly when tfk-train is missing.
# Environment: TFK_BIN, PYTHON.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${TFK_BIN:=$root/bin}"
: "${PYTHON:=/usr/bin/python3}"
. "$here/lib.sh"
train_bench cnn 1.0 9600 "cnn --steps 300" --set fit.steps_per_epoch=300
