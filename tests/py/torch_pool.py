#!/usr/bin/python3
"""torch_pool.py - PyTorch oracle for MaxPool/AvgPool and their gradients
(lib/kernels/cpu/pool.c). Nothing here uses tfkit code.

t-pool2d writes into DIR a file `manifest`, one case a line:

    NAME KIND N H W C KH KW SH SW PADDING      KIND max|avg, PADDING SAME|VALID

with NAME.x (the NHWC input) and NAME.g (the gradient of the NHWC
output), raw little-endian float32. This script computes, in float64,
NAME.y (output) and NAME.dx (input gradient, by autograd with NAME.g),
both NHWC float64, with TensorFlow's geometry built from torch ops:
SAME pads asymmetrically (pad_total = max((out - 1) * s + k - in, 0),
the smaller half first); max pads with -inf so padding never wins; avg
divides each window's sum by its count of in-bounds elements (a sum
pool of ones over the zero-padded input), as TF does.

Usage: torch_pool.py DIR
"""
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)


def geometry(size, k, s, padding):
    if padding == "VALID":
        return (size - k) // s + 1, 0, 0
    out = (size + s - 1) // s
    total = max((out - 1) * s + k - size, 0)
    return out, total // 2, total - total // 2


def run(d, name, kind, n, h, w, c, kh, kw, sh, sw, padding):
    x = np.fromfile(os.path.join(d, name + ".x"), "<f4").reshape(n, h, w, c)
    g = np.fromfile(os.path.join(d, name + ".g"), "<f4")
    oh, pt, pb = geometry(h, kh, sh, padding)
    ow, pl, pr = geometry(w, kw, sw, padding)
    g = g.reshape(n, oh, ow, c)
    xt = torch.tensor(x, dtype=torch.float64).permute(0, 3, 1, 2)
    xt.requires_grad_(True)
    if kind == "max":
        xp = F.pad(xt, (pl, pr, pt, pb), value=float("-inf"))
        y = F.max_pool2d(xp, (kh, kw), (sh, sw))
    else:
        xp = F.pad(xt, (pl, pr, pt, pb), value=0.0)
        ones = F.pad(torch.ones(1, 1, h, w, dtype=torch.float64),
                     (pl, pr, pt, pb), value=0.0)
        s = F.avg_pool2d(xp, (kh, kw), (sh, sw), divisor_override=1)
        cnt = F.avg_pool2d(ones, (kh, kw), (sh, sw), divisor_override=1)
        y = s / cnt
    gt = torch.tensor(g, dtype=torch.float64).permute(0, 3, 1, 2)
    y.backward(gt)
    y.detach().permute(0, 2, 3, 1).contiguous().numpy().astype("<f8") \
        .tofile(os.path.join(d, name + ".y"))
    xt.grad.permute(0, 2, 3, 1).contiguous().numpy().astype("<f8") \
        .tofile(os.path.join(d, name + ".dx"))


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "manifest")) as f:
        for line in f:
            p = line.split()
            if not p:
                continue
            run(d, p[0], p[1], *[int(v) for v in p[2:10]], p[10])


if __name__ == "__main__":
    main()
