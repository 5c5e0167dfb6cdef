#!/usr/bin/python3
"""torch_nn.py - PyTorch oracle for the NN ops of lib/kernels/cpu/{nn,gather}.c.

Nothing here uses tfkit code. t-nnops writes, into DIR, a file
`manifest` with one case per line:

    NAME OP SHAPE [key=value ...]        SHAPE like 4x37 (x's shape)

and the case's inputs as raw little-endian files NAME.in0, NAME.in1, ...
(float32, or int64 for labels and indices), plus NAME.g, the gradient
of output 0 (float32). This script computes in float64 with torch (CPU)
from those same values and writes NAME.t.K (float64) for each output K
the test compares: the op's outputs first, then the gradients (autograd
vector-Jacobian products with NAME.g) in the order listed per op below.

    relu6 elu selu leaky_relu softplus erf log_softmax
        in0 x                          -> y, dx
    xent         in0 logits [b,c], in1 labels [b,c] (f32), g [b]
                                       -> loss, backprop, dlogits, dlabels
    sparse_xent  in0 logits [b,c], in1 labels [b] (i64), g [b]
                                       -> loss, backprop, dlogits
    bn_train / bn_infer  in0 x NHWC, in1 scale, in2 offset, in3 mean,
                 in4 variance [c]; eps=E factor=F (exponential_avg_factor)
                 -> y, batch_mean, batch_variance, dx, dscale, doffset
                 (bn_train: batch_mean/variance are the running stats
                 after torch's update with momentum F, which uses the
                 unbiased variance; bn_infer: the inputs)
    embedding    in0 params [v,d], in1 indices (i64, shape ishape=AxB)
                 -> out, dparams

Usage: torch_nn.py DIR
"""
import sys

import numpy as np
import torch
import torch.nn.functional as F

torch.set_num_threads(1)


def load(path, dtype, shape):
    return torch.from_numpy(np.fromfile(path, dtype=dtype).astype(
        np.float64 if dtype == np.float32 else np.int64).reshape(shape))


def dims(s):
    return [int(v) for v in s.split("x")] if s else []


def save(base, k, t):
    t.detach().numpy().astype(np.float64).tofile("%s.t.%d" % (base, k))


def run(d, name, op, shape, kv):
    base = "%s/%s" % (d, name)
    f32 = np.float32
    if op in ("relu6", "elu", "selu", "leaky_relu", "softplus", "erf",
              "log_softmax"):
        x = load(base + ".in0", f32, shape).requires_grad_()
        fn = {
            "relu6": F.relu6,
            "elu": F.elu,
            "selu": F.selu,
            "leaky_relu": lambda t: F.leaky_relu(
                t, float(kv.get("alpha", "0.2"))),
            "softplus": F.softplus,
            "erf": torch.erf,
            "log_softmax": lambda t: F.log_softmax(t, dim=-1),
        }[op]
        y = fn(x)
        g = load(base + ".g", f32, shape)
        (dx,) = torch.autograd.grad(y, x, g)
        outs = [y, dx]
    elif op == "xent":
        b, c = shape
        x = load(base + ".in0", f32, shape).requires_grad_()
        lab = load(base + ".in1", f32, shape).requires_grad_()
        ls = F.log_softmax(x, dim=1)
        loss = -(lab * ls).sum(1)
        g = load(base + ".g", f32, [b])
        dx, dl = torch.autograd.grad(loss, (x, lab), g)
        outs = [loss, torch.softmax(x, 1) - lab, dx, dl]
    elif op == "sparse_xent":
        b, c = shape
        x = load(base + ".in0", f32, shape).requires_grad_()
        lab = load(base + ".in1", np.int64, [b])
        loss = F.cross_entropy(x, lab, reduction="none")
        g = load(base + ".g", f32, [b])
        (dx,) = torch.autograd.grad(loss, x, g)
        outs = [loss, torch.softmax(x, 1) - F.one_hot(lab, c), dx]
    elif op in ("bn_train", "bn_infer"):
        c = shape[-1]
        train = op == "bn_train"
        x = load(base + ".in0", f32, shape).requires_grad_()
        scale = load(base + ".in1", f32, [c]).requires_grad_()
        offset = load(base + ".in2", f32, [c]).requires_grad_()
        rm = load(base + ".in3", f32, [c])
        rv = load(base + ".in4", f32, [c])
        # NHWC -> NCHW for torch, and back
        perm = [0, len(shape) - 1] + list(range(1, len(shape) - 1))
        back = [0] + list(range(2, len(shape))) + [1]
        y = F.batch_norm(x.permute(perm), rm, rv, scale, offset,
                         training=train,
                         momentum=float(kv.get("factor", "1")),
                         eps=float(kv["eps"])).permute(back)
        g = load(base + ".g", f32, shape)
        dx, ds, do = torch.autograd.grad(y, (x, scale, offset), g)
        outs = [y, rm, rv, dx, ds, do]
    elif op == "embedding":
        ishape = dims(kv["ishape"])
        p = load(base + ".in0", f32, shape).requires_grad_()
        ix = load(base + ".in1", np.int64, ishape)
        out = F.embedding(ix, p)
        g = load(base + ".g", f32, ishape + [shape[1]])
        (dp,) = torch.autograd.grad(out, p, g)
        outs = [out, dp]
    else:
        raise SystemExit("torch_nn.py: unknown op %s" % op)
    for k, t in enumerate(outs):
        save(base, k, t)


def main():
    d = sys.argv[1]
    with open(d + "/manifest") as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            kv = dict(a.split("=", 1) for a in w[3:])
            run(d, w[0], w[1], dims(w[2]), kv)


if __name__ == "__main__":
    main()
