#!/usr/bin/python3
"""torch_train.py - the PyTorch peer of the training benchmarks.

    torch_train.py mlp|cnn [--epochs E] [--steps S] [--batch 32]
                   [--threads CORES] [--seed 1] [--data DIR]
    torch_train.py run CMD...

The first form trains issue 5's MLP (Flatten, Dense 128 relu, Dense 10
softmax) or CNN (Conv2D 32 5x5 valid relu, Conv2D 32 5x5 same relu,
MaxPooling2D 2, Dropout 0.5, Flatten, Dense 10 softmax) on Fashion-MNIST
with PyTorch 1.13 on the CPU, as Keras would: glorot-uniform kernels and
zero biases (Keras' defaults), inputs / 255, Adam with Keras' defaults
(lr 1e-3, beta 0.9/0.999, epsilon 1e-7), sparse categorical crossentropy
on the softmax (PyTorch's CrossEntropyLoss on the logits, the same
function), batch 32, a new shuffle each epoch. The IDX files are read
directly (gzip + numpy); images stay uint8 and each batch is converted
to float32 when it is drawn, the cheapest way PyTorch can feed them.

Tuned as its best users run it: torch.set_num_threads(--threads, default
the online cores) and OPENBLAS_NUM_THREADS=1 unless set (Debian's torch
calls OpenBLAS, whose own thread pool then fights libgomp's: issue 17
measured 1291 against 749 CNN examples/s on 2 cores). Set before torch
is imported, as OpenBLAS reads it when it loads.

Timed: the training loop alone (not the import of torch, not reading
the data, not the test evaluation). It prints one JSON line:
  {"model", "examples", "seconds", "examples_per_s", "rss_kb",
   "accuracy" (on the 10,000 test images), "loss" (mean of the last
   epoch or run of steps)}.

The second form runs CMD (our tfk-train) and prints {"seconds",
"rss_kb"}: its wall time and its peak resident set, from
getrusage(RUSAGE_CHILDREN), measured the same way as the peer's.
"""
import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with gzip.open(path) as f:
        data = f.read()
    rank = data[3]
    dims = np.frombuffer(data, ">u4", count=rank, offset=4)
    return np.frombuffer(data, np.uint8, offset=4 + 4 * rank).reshape(dims)


def build(torch, kind):
    nn = torch.nn
    if kind == "mlp":
        model = nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(),
                              nn.Linear(128, 10))
    else:
        model = nn.Sequential(
            nn.Conv2d(1, 32, 5), nn.ReLU(),                 # valid
            nn.Conv2d(32, 32, 5, padding=2), nn.ReLU(),     # same
            nn.MaxPool2d(2), nn.Dropout(0.5), nn.Flatten(),
            nn.Linear(32 * 12 * 12, 10))
    for m in model.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d)):
            nn.init.xavier_uniform_(m.weight)   # = Keras glorot_uniform
            nn.init.zeros_(m.bias)
    return model


def train(args):
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    x = torch.from_numpy(read_idx(DATA + "/train-images-idx3-ubyte.gz")
                         .copy())
    y = torch.from_numpy(read_idx(DATA + "/train-labels-idx1-ubyte.gz")
                         .astype(np.int64))
    xt = torch.from_numpy(read_idx(DATA + "/t10k-images-idx3-ubyte.gz")
                          .copy())
    yt = torch.from_numpy(read_idx(DATA + "/t10k-labels-idx1-ubyte.gz")
                          .astype(np.int64))
    shape = (-1, 28, 28) if args.model == "mlp" else (-1, 1, 28, 28)
    model = build(torch, args.model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.999),
                           eps=1e-7)
    lossf = torch.nn.CrossEntropyLoss()
    n, bs = x.shape[0], args.batch
    steps = args.steps if args.steps else args.epochs * ((n + bs - 1) // bs)
    done = examples = 0
    losses = []
    model.train()
    t0 = time.perf_counter()
    while done < steps:
        perm = torch.randperm(n)
        losses = []
        for s in range(0, n, bs):
            idx = perm[s:s + bs]
            xb = x[idx].reshape(shape).float().div_(255.0)
            opt.zero_grad(set_to_none=True)
            loss = lossf(model(xb), y[idx])
            loss.backward()
            opt.step()
            losses.append(loss.item())
            examples += len(idx)
            done += 1
            if done == steps:
                break
    secs = time.perf_counter() - t0
    model.eval()
    right = 0
    with torch.no_grad():
        for s in range(0, xt.shape[0], 1000):
            xb = xt[s:s + 1000].reshape(shape).float().div_(255.0)
            right += (model(xb).argmax(1) == yt[s:s + 1000]).sum().item()
    print(json.dumps({
        "model": args.model, "examples": examples,
        "seconds": round(secs, 4),
        "examples_per_s": round(examples / secs, 1),
        "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "accuracy": round(right / xt.shape[0], 4),
        "loss": round(float(np.mean(losses)), 4)}, separators=(",", ":")))


def run(cmd):
    t0 = time.perf_counter()
    rc = subprocess.run(cmd).returncode
    secs = time.perf_counter() - t0
    if rc:
        sys.exit("torch_train.py run: %s exited with %d" % (cmd[0], rc))
    print(json.dumps({"seconds": round(secs, 4), "rss_kb": resource.getrusage(
        resource.RUSAGE_CHILDREN).ru_maxrss}, separators=(",", ":")))


def main():
    global DATA
    if len(sys.argv) > 2 and sys.argv[1] == "run":
        return run(sys.argv[2:])
    p = argparse.ArgumentParser()
    p.add_argument("model", choices=["mlp", "cnn"])
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--steps", type=int, default=0,
                   help="train this many batches instead of whole epochs")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--data", default=DATA)
    args = p.parse_args()
    DATA = args.data
    train(args)


if __name__ == "__main__":
    main()
