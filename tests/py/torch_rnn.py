#!/usr/bin/python3
"""torch_rnn.py DIR... - oracle for Keras LSTM, GRU and SimpleRNN.

Each DIR holds meta.json written by tests/unit/t-recurrent.c (class,
Keras config, the input x0 [batch, T, features] and the Keras weights
kernel, recurrent_kernel, bias as raw little-endian float32) and r.bin.
Writes into DIR, as float64: y_infer.bin, y_train.bin (the layer's
output in each branch; with dropout, the training branch's input is
multiplied by the mask ours drew, mask.bin [batch, 1, features]),
dx0.bin and dw<k>.bin: the gradients of sum(y_train * r) with respect
to the input and each weight.

Two independent references:
  - torch.nn.LSTM / GRU / RNN (float64, autograd) for the configurations
    torch has: default activations, GRU with reset_after=True (torch's
    GRU applies the reset gate after the recurrent matmul, as Keras'
    reset_after). Keras weights are converted: kernels transposed;
    LSTM gate order i, f, c, o is torch's i, f, g, o; Keras GRU z, r, h
    becomes torch's r, z, n; Keras' single LSTM/SimpleRNN bias goes to
    bias_ih (bias_hh = 0); GRU bias[0] -> bias_ih, bias[1] -> bias_hh.
    The module's parameter gradients are converted back the same way.
  - numpy, for everything else (GRU reset_after=False, other
    activations): the cell formulas written out from Keras' sources
    (recurrent_v2.py / recurrent.py, implementation 2) in float64, and
    the gradients by central finite differences of sum(y * r).
go_backwards feeds the time-reversed input; the output sequence stays
in the order walked (Keras does not reverse it back).
"""
import json
import os
import sys

import numpy as np
import torch

torch.set_default_dtype(torch.float64)


def load(d, spec):
    a = np.fromfile(os.path.join(d, spec["file"]), dtype=np.float32)
    return a.reshape(spec["shape"]).astype(np.float64)


def save(d, name, a):
    np.asarray(a, dtype=np.float64).tofile(os.path.join(d, name))


# numpy reference -------------------------------------------------------------

ACT = {
    "tanh": np.tanh,
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "relu": lambda v: np.maximum(v, 0),
    "linear": lambda v: v,
}


def np_forward(cls, cfg, x, ws):
    u = cfg["units"]
    g = ACT[cfg.get("activation", "tanh")]
    f = ACT[cfg.get("recurrent_activation", "sigmoid")]
    use_bias = cfg.get("use_bias", True)
    W, R = ws[0], ws[1]
    b = ws[2] if use_bias else None
    if cfg.get("go_backwards", False):
        x = x[:, ::-1, :]
    n, steps = x.shape[0], x.shape[1]
    h = np.zeros((n, u))
    c = np.zeros((n, u))
    outs = []
    for t in range(steps):
        xt = x[:, t, :]
        if cls == "LSTM":
            z = xt @ W + h @ R
            if use_bias:
                z = z + b
            i, fg, cc, o = (z[:, k * u:(k + 1) * u] for k in range(4))
            c = f(fg) * c + f(i) * g(cc)
            h = f(o) * g(c)
        elif cls == "GRU" and cfg.get("reset_after", True):
            mx = xt @ W
            mi = h @ R
            if use_bias:
                mx = mx + b[0]
                mi = mi + b[1]
            z = f(mx[:, :u] + mi[:, :u])
            r = f(mx[:, u:2 * u] + mi[:, u:2 * u])
            hh = g(mx[:, 2 * u:] + r * mi[:, 2 * u:])
            h = z * h + (1 - z) * hh
        elif cls == "GRU":
            mx = xt @ W
            if use_bias:
                mx = mx + b
            mi = h @ R[:, :2 * u]
            z = f(mx[:, :u] + mi[:, :u])
            r = f(mx[:, u:2 * u] + mi[:, u:2 * u])
            hh = g(mx[:, 2 * u:] + (r * h) @ R[:, 2 * u:])
            h = z * h + (1 - z) * hh
        else:
            z = xt @ W + h @ R
            if use_bias:
                z = z + b
            h = g(z)
        outs.append(h)
    if cfg.get("return_sequences", False):
        return np.stack(outs, axis=1)
    return h


def np_grads(cls, cfg, x, ws, r, mask):
    """Central differences of sum(y(x * mask) * r) in float64."""
    eps = 1e-6

    def loss(xx, ww):
        return float((np_forward(cls, cfg, xx * mask, ww) * r).sum())

    def grad_of(a, fn):
        gr = np.zeros_like(a)
        it = np.nditer(a, flags=["multi_index"])
        for _ in it:
            k = it.multi_index
            old = a[k]
            a[k] = old + eps
            lp = fn()
            a[k] = old - eps
            lm = fn()
            a[k] = old
            gr[k] = (lp - lm) / (2 * eps)
        return gr

    dx = grad_of(x, lambda: loss(x, ws))
    dws = [grad_of(w, lambda: loss(x, ws)) for w in ws]
    return dx, dws


# torch reference -------------------------------------------------------------

def torch_module(cls, cfg, feat):
    u = cfg["units"]
    bias = cfg.get("use_bias", True)
    if cls == "LSTM":
        return torch.nn.LSTM(feat, u, bias=bias, batch_first=True)
    if cls == "GRU":
        return torch.nn.GRU(feat, u, bias=bias, batch_first=True)
    return torch.nn.RNN(feat, u, bias=bias, batch_first=True,
                        nonlinearity=cfg.get("activation", "tanh"))


def gru_perm(m, u):
    """Keras z, r, h <-> torch r, z, n along the last axis (its own
    inverse)."""
    return np.concatenate([m[..., u:2 * u], m[..., :u], m[..., 2 * u:]],
                          axis=-1)


def torch_params(cls, cfg, ws):
    """Keras weights -> the module's parameters (numpy)."""
    u = cfg["units"]
    W, R = ws[0], ws[1]
    if cls == "GRU":
        W, R = gru_perm(W, u), gru_perm(R, u)
    p = {"weight_ih_l0": W.T, "weight_hh_l0": R.T}
    if cfg.get("use_bias", True):
        b = ws[2]
        if cls == "GRU":
            p["bias_ih_l0"] = gru_perm(b[0], u)
            p["bias_hh_l0"] = gru_perm(b[1], u)
        else:
            p["bias_ih_l0"] = b
            p["bias_hh_l0"] = np.zeros_like(b)
    return p


def keras_grads(cls, cfg, g):
    """The module's parameter gradients -> Keras weight order/layout."""
    u = cfg["units"]
    dW, dR = g["weight_ih_l0"].T, g["weight_hh_l0"].T
    if cls == "GRU":
        dW, dR = gru_perm(dW, u), gru_perm(dR, u)
    out = [dW, dR]
    if cfg.get("use_bias", True):
        if cls == "GRU":
            out.append(np.stack([gru_perm(g["bias_ih_l0"], u),
                                 gru_perm(g["bias_hh_l0"], u)]))
        else:
            out.append(g["bias_ih_l0"])
    return out


def torch_ok(cls, cfg):
    if cls == "GRU" and not cfg.get("reset_after", True):
        return False
    if cfg.get("recurrent_activation", "sigmoid") != "sigmoid":
        return False
    a = cfg.get("activation", "tanh")
    return a == "tanh" or (cls == "SimpleRNN" and a == "relu")


def run(d):
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    cls, cfg = meta["class"], meta["config"]
    x = load(d, meta["inputs"][0])
    ws = [load(d, s) for s in meta["weights"]]
    r = np.fromfile(os.path.join(d, "r.bin"), dtype=np.float32)
    # dropout: the training branch's input mask [batch, 1, features]
    mask = load(d, meta["mask"]) if meta.get("mask") else np.ones(1)
    if torch_ok(cls, cfg):
        mod = torch_module(cls, cfg, x.shape[2])
        with torch.no_grad():
            for k, v in torch_params(cls, cfg, ws).items():
                getattr(mod, k).copy_(torch.tensor(np.ascontiguousarray(v)))

        def fwd(xin):
            if cfg.get("go_backwards", False):
                xin = xin.flip(1)
            seq, _ = mod(xin)
            return seq if cfg.get("return_sequences", False) else \
                seq[:, -1, :]
        with torch.no_grad():
            yi = fwd(torch.tensor(x)).numpy()
        xt = torch.tensor(x, requires_grad=True)
        y = fwd(xt * torch.tensor(mask))
        rt = torch.tensor(r.astype(np.float64).reshape(y.shape))
        (y * rt).sum().backward()
        y, dx = y.detach().numpy(), xt.grad.numpy()
        dws = keras_grads(cls, cfg, {k: v.grad.numpy()
                                     for k, v in mod.named_parameters()})
        how = "torch.nn." + mod.__class__.__name__
    else:
        yi = np_forward(cls, cfg, x, ws)
        y = np_forward(cls, cfg, x * mask, ws)
        dx, dws = np_grads(cls, cfg, x, ws, r.astype(np.float64)
                           .reshape(y.shape), mask)
        how = "numpy"
    save(d, "y_infer.bin", yi)
    save(d, "y_train.bin", y)
    save(d, "dx0.bin", dx)
    for k, g in enumerate(dws):
        save(d, "dw%d.bin" % k, g)
    with open(os.path.join(d, "oracle.txt"), "w") as f:
        f.write(how)


if __name__ == "__main__":
    for d in sys.argv[1:]:
        run(d)
