#!/usr/bin/python3
"""torch_conv.py DIR... - PyTorch oracle for t-conv.

Each DIR holds meta.txt (one line: n h w c kh kw o sh sw dh dw pt pb pl
pr groups depthwise mult), x.f32 (NHWC input), f.f32 (TF filter:
[kh, kw, kc, o], or [kh, kw, c, mult] when depthwise) and dy.f32 (NHWC
out_backprop), raw little-endian float32. Writes y.f32 (the forward
output, NHWC), dx.f32 and df.f32 (gradients of sum(y * dy), in the
layouts of x and f), computed by torch.nn.functional.conv2d in float64
on the same values: TF's padding (asymmetric for SAME) is applied with
F.pad, NHWC/HWIO are permuted to torch's NCHW/OIHW and back.
"""
import sys

import numpy as np
import torch
import torch.nn.functional as F


def load(d, name, shape):
    return torch.from_numpy(
        np.fromfile(f"{d}/{name}", dtype="<f4").astype(np.float64)
        .reshape(shape))


def save(d, name, t):
    t.detach().numpy().astype("<f4").tofile(f"{d}/{name}")


def run(d):
    with open(f"{d}/meta.txt") as fh:
        (n, h, w, c, kh, kw, o, sh, sw, dh, dw, pt, pb, pl, pr, groups,
         depthwise, mult) = map(int, fh.read().split())
    x = load(d, "x.f32", (n, h, w, c)).permute(0, 3, 1, 2)
    if depthwise:
        f = load(d, "f.f32", (kh, kw, c, mult))
        wt = f.reshape(kh, kw, c * mult).permute(2, 0, 1).unsqueeze(1)
        groups = c
    else:
        f = load(d, "f.f32", (kh, kw, c // groups, o))
        wt = f.permute(3, 2, 0, 1)
    x = x.contiguous().requires_grad_(True)
    wt = wt.contiguous().requires_grad_(True)
    xp = F.pad(x, (pl, pr, pt, pb))
    y = F.conv2d(xp, wt, stride=(sh, sw), dilation=(dh, dw), groups=groups)
    oh, ow = y.shape[2], y.shape[3]
    dy = load(d, "dy.f32", (n, oh, ow, y.shape[1])).permute(0, 3, 1, 2)
    y.backward(dy)
    save(d, "y.f32", y.permute(0, 2, 3, 1).contiguous())
    save(d, "dx.f32", x.grad.permute(0, 2, 3, 1).contiguous())
    if depthwise:
        df = wt.grad.squeeze(1).permute(1, 2, 0).reshape(kh, kw, c, mult)
    else:
        df = wt.grad.permute(2, 3, 1, 0)
    save(d, "df.f32", df.contiguous())


def main():
    torch.set_num_threads(1)
    for d in sys.argv[1:]:
        run(d)


if __name__ == "__main__":
    main()
