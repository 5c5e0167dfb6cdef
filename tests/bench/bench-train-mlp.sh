#!/bin/sh
# bench-train-mlp.sh - issue 5's MLP (Flatten, Dense 128 relu, Dense 10
# softmax) trained for one epoch on Fashion-MNIST's 60,000 images,
# batch 32, Adam 1e-3, inputs / 255, threads = cores.
#
# ours: tfk-train examples/mlp.spec.json --train RECORDS -j CORES --set
#       fit.epochs=1, timed as a whole process (reading the records and
#       building the model included), then tfk-eval on the 10,000 test
#       images for the accuracy.
#       "ours" is the rate of the training steps themselves: the same
#       run with fit.steps_per_epoch=1 is timed too, and its time (load,
#       plan, first step, checkpoint) taken off, as the peer's clock
#       leaves those out; "ours_whole" is the whole process's rate.
# peer: tests/bench/torch_train.py mlp --epochs 1: PyTorch 1.13 on the CPU as
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
#       first step, with XLA (jit_compile=True: 2.7x faster than Keras'
#       default here, 7843 against 2876 examples/s over 600 steps); only
#       when scripts/tfenv --check finds the TF tier's environment, else
#       its line says the peer is missing.
# All train from the same data in the same run, back to back.
#
# Prints four lines: {"bench":"train-mlp","ours","peer" (PyTorch),
# "unit":"examples/s","ratio","target":3.0,"rss_ours","rss_peer" (peak RSS
# in kB),"accuracy" (ours, test set),"accuracy_peer","ours_whole",
# "mflop_per_example","gflops","gflops_peer","peak_share","peak_share_peer"};
# {"bench":"train-mlp-peak","ours" (our GFLOP/s),"peer" (the nominal FP32
# peak),"unit":"GFLOP/s","ratio" (the share),"target":null (no goal),...} with the
# calibrated peak (tests/bench/peak.c) beside it; and
# {"bench":"train-mlp-keras",...,"target":2.0} against Keras (or its
# "peer_missing" line); and {"bench":"train-mlp-bf16","ours" (the same run
# with model.dtype_policy=mixed_bfloat16),"peer" (ours in float32),"ratio",
# "target":null,"accuracy","accuracy_fp32"}. FLOPs per example: tests/bench/peak.py.
# Fails clearly when tfk-train is missing. TFK_BENCH_STEPS=S: S steps
# each side, to check the script runs.
# Environment: TFK_BIN, TFK_BENCH_BIN (peak), PYTHON, TFK_BENCH_STEPS.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
: "${TFK_BIN:=$root/bin}"
: "${PYTHON:=/usr/bin/python3}"
. "$here/lib.sh"
keras_args=--jit-compile
train_bench mlp 3.0 2.0 60000 "mlp --epochs 1"
