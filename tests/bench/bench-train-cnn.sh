#!/bin/sh
# bench-train-cnn.sh - issue 5's CNN (the TensorFlow 2.0 book's: Conv2D
# 32 5x5 valid relu, Conv2D 32 5x5 same relu, MaxPooling2D 2, Dropout
# 0.5, Flatten, Dense 10 softmax) trained for 300 steps of batch 32 on
# Fashion-MNIST, Adam 1e-3, inputs / 255, threads = cores (a full epoch would
# take a minute per side; the step rate is what is compared).
#
# ours: tfk-train examples/cnn.spec.json --train RECORDS -j CORES --set
#       fit.steps_per_epoch=300, timed as a whole process (reading all
#       60,000 records and building the model included), then tfk-eval
#       on the 10,000 test images for the accuracy.
#       "ours" is the rate of the training steps themselves: the same
#       run with fit.steps_per_epoch=1 is timed too, and its time (load,
#       plan, first step, checkpoint) taken off, as the peer's clock
#       leaves those out; "ours_whole" is the whole process's rate.
# peer: tests/bench/torch_train.py cnn --steps 300: PyTorch 1.13 on the CPU as
#       its best users run it (torch.set_num_threads = cores,
#       OPENBLAS_NUM_THREADS=1 so that OpenBLAS's threads do not fight
#       libgomp's, OMP_WAIT_POLICY=PASSIVE unless set: spinning OpenMP
#       threads are 30-60x slower on a busy machine), the same model,
#       initialization, optimizer and batch; only its training loop is
#       timed (not the import of torch or the reading of the data), so
#       the ratio is conservative.
# Keras: tests/bench/tf_peer.py train: Keras 3 fit of the same spec on
#       TensorFlow 2.21 (threads = cores, oneDNN on, the data in memory
#       in a prefetching tf.data pipeline), timed from the end of its
#       first step, without XLA (Keras' default on a CPU: with
#       jit_compile=True it is 8x slower here, 57 against 477 examples/s);
#       only when scripts/tfenv --check finds the TF tier's environment,
#       else its line says the peer is missing.
# All train from the same data in the same run, back to back.
#
# Prints four lines: {"bench":"train-cnn","ours","peer" (PyTorch),
# "unit":"examples/s","ratio","target":1.5,"rss_ours","rss_peer" (peak RSS
# in kB),"accuracy" (ours, test set),"accuracy_peer","ours_whole",
# "mflop_per_example","gflops","gflops_peer","peak_share","peak_share_peer"};
# {"bench":"train-cnn-peak","ours" (our GFLOP/s),"peer" (the nominal FP32
# peak),"unit":"GFLOP/s","ratio" (the share),"target":0.6,...} with the
# calibrated peak (tests/bench/peak.c) beside it; and
# {"bench":"train-cnn-keras",...,"target":1.5} against Keras (or its
# "peer_missing" line); and {"bench":"train-cnn-bf16","ours" (the same run
# with model.dtype_policy=mixed_bfloat16: Dense and both Conv2D layers in
# bfloat16 products),"peer" (ours in float32),"ratio",
# "target":1.8,"accuracy","accuracy_fp32"}. FLOPs per example: tests/bench/peak.py.
# Fails clearly when tfk-train is missing. TFK_BENCH_STEPS=S: S steps
# each side, to check the script runs.
# Environment: TFK_BIN, TFK_BENCH_BIN (peak), PYTHON, TFK_BENCH_STEPS.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${TFK_BIN:=$root/bin}"
: "${PYTHON:=/usr/bin/python3}"
. "$here/lib.sh"
train_bench cnn 1.5 1.5 9600 "cnn --steps 300" --set fit.steps_per_epoch=300
