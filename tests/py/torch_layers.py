#!/usr/bin/python3
"""torch_layers.py DIR... - PyTorch oracle for Keras layers and losses.

Each DIR holds meta.json written by tests/unit/t-layers.c or t-loss.c and
the raw little-endian arrays it names. This script recomputes the layer
(or loss) from Keras' definition in float64 with torch 1.13 (NHWC inputs
are permuted to torch's NCHW; TensorFlow's SAME padding, which may be
asymmetric, is padded explicitly) and writes, into the same DIR:

  layer: y_infer.bin, y_train.bin (inference and training branch),
         dx<k>.bin and dw<k>.bin: gradients of sum(y_train * r) with
         respect to input k and weight k (Keras weight order);
         upd<k>.bin for BatchNormalization's moving-statistic values
  loss:  loss.bin (scalar) and dx0.bin (d loss / d input)

All outputs float64. Keras' formulas are written out here from the
Keras sources (independent of the C code under test).
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)

EPS = 1e-7


def load(d, spec):
    dt = {"float32": np.float32, "int32": np.int32, "int64": np.int64}
    a = np.fromfile(os.path.join(d, spec["file"]), dtype=dt[spec["dtype"]])
    a = a.reshape(spec["shape"])
    if spec["dtype"] == "float32":
        return torch.tensor(a.astype(np.float64), requires_grad=True)
    return torch.tensor(a.astype(np.int64))


def save(d, name, t):
    t.detach().numpy().astype(np.float64).tofile(os.path.join(d, name))


def act(name, x, alpha=0.2):
    if name in (None, "linear"):
        return x
    f = {
        "relu": F.relu,
        "relu6": lambda v: torch.clamp(v, 0, 6),
        "sigmoid": torch.sigmoid,
        "tanh": torch.tanh,
        "softmax": lambda v: F.softmax(v, dim=-1),
        "elu": F.elu,
        "selu": F.selu,
        "softplus": F.softplus,
        "softsign": F.softsign,
        "swish": lambda v: v * torch.sigmoid(v),
        "silu": lambda v: v * torch.sigmoid(v),
        "gelu": lambda v: 0.5 * v * (1 + torch.erf(v / math.sqrt(2))),
        "exponential": torch.exp,
        "leaky_relu": lambda v: F.leaky_relu(v, alpha),
    }[name]
    return f(x)


def pair(v, n=2):
    return list(v) if isinstance(v, list) else [v] * n


def tf_same_pad(size, k, s, d=1):
    """TensorFlow's SAME: total padding, the extra pixel after."""
    out = -(-size // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
    return total // 2, total - total // 2


def pad_nchw(x, ks, st, dil, same, value=0.0):
    if not same:
        return x
    h, w = x.shape[2], x.shape[3]
    t, b = tf_same_pad(h, ks[0], st[0], dil[0])
    l, r = tf_same_pad(w, ks[1], st[1], dil[1])
    return F.pad(x, (l, r, t, b), value=value)


def conv2d(x, w, cfg, depthwise=False):
    ks = pair(cfg["kernel_size"])
    st = pair(cfg.get("strides", 1))
    dil = pair(cfg.get("dilation_rate", 1))
    xn = pad_nchw(x.permute(0, 3, 1, 2), ks, st, dil,
                  cfg.get("padding", "valid") == "same")
    if depthwise:
        cin, mult = w.shape[2], w.shape[3]
        wt = w.permute(2, 3, 0, 1).reshape(cin * mult, 1, ks[0], ks[1])
        y = F.conv2d(xn, wt, stride=st, dilation=dil, groups=cin)
    else:
        groups = cfg.get("groups", 1)
        y = F.conv2d(xn, w.permute(3, 2, 0, 1), stride=st, dilation=dil,
                     groups=groups)
    return y.permute(0, 2, 3, 1)


def layer(cls, cfg, xs, ws, train):
    """Keras' call() of cls on xs with weights ws; (y, extra outputs)."""
    x = xs[0]
    a = cfg.get("activation")
    if cls == "Dense":
        y = torch.matmul(x, ws[0])
        if cfg.get("use_bias", True):
            y = y + ws[1]
        return act(a, y), []
    if cls in ("Conv2D", "DepthwiseConv2D"):
        y = conv2d(x, ws[0], cfg, cls == "DepthwiseConv2D")
        if cfg.get("use_bias", True):
            y = y + ws[1]
        return act(a, y), []
    if cls == "Conv1D":
        k = pair(cfg["kernel_size"], 1)[0]
        s = pair(cfg.get("strides", 1), 1)[0]
        d = pair(cfg.get("dilation_rate", 1), 1)[0]
        xn = x.permute(0, 2, 1)
        pad = cfg.get("padding", "valid")
        if pad == "causal":
            xn = F.pad(xn, (d * (k - 1), 0))
        elif pad == "same":
            xn = F.pad(xn, tf_same_pad(xn.shape[2], k, s, d))
        y = F.conv1d(xn, ws[0].permute(2, 1, 0), stride=s, dilation=d)
        y = y.permute(0, 2, 1)
        if cfg.get("use_bias", True):
            y = y + ws[1]
        return act(a, y), []
    if cls in ("MaxPooling2D", "AveragePooling2D", "MaxPooling1D",
               "AveragePooling1D"):
        one = cls.endswith("1D")
        ps = pair(cfg.get("pool_size", 2), 1 if one else 2)
        st = cfg.get("strides") or ps
        st = pair(st, 1 if one else 2)
        if one:
            ps, st = ps + [1], st + [1]
            x = x.unsqueeze(2)
        xn = x.permute(0, 3, 1, 2)
        same = cfg.get("padding", "valid") == "same"
        if cls.startswith("Max"):
            xn = pad_nchw(xn, ps, st, [1, 1], same, -math.inf)
            y = F.max_pool2d(xn, ps, st)
        else:
            # TF averages over the window's valid pixels only
            ones = torch.ones_like(xn)
            s = F.avg_pool2d(pad_nchw(xn, ps, st, [1, 1], same), ps, st)
            n = F.avg_pool2d(pad_nchw(ones, ps, st, [1, 1], same), ps, st)
            y = s / n
        y = y.permute(0, 2, 3, 1)
        return (y.squeeze(2) if one else y), []
    if cls.startswith("Global"):
        axes = (1,) if cls.endswith("1D") else (1, 2)
        kd = cfg.get("keepdims", False)
        if "Average" in cls:
            return x.mean(dim=axes, keepdim=kd), []
        return torch.amax(x, dim=axes, keepdim=kd), []
    if cls == "BatchNormalization":
        eps = cfg.get("epsilon", 1e-3)
        c = x.shape[-1]
        g = ws[0] if cfg.get("scale", True) else torch.ones(c)
        b = ws[1] if cfg.get("center", True) else torch.zeros(c)
        k = int(cfg.get("scale", True)) + int(cfg.get("center", True))
        mm, mv = ws[k], ws[k + 1]
        dims = tuple(range(x.dim() - 1))
        if train:
            m = x.mean(dim=dims)
            v = ((x - m) ** 2).mean(dim=dims)
            n = x.numel() // c
            # FusedBatchNormV3 reports the Bessel-corrected variance
            return (x - m) / torch.sqrt(v + eps) * g + b, [m, v * n / (n - 1)]
        return (x - mm) / torch.sqrt(mv + eps) * g + b, []
    if cls == "LayerNormalization":
        eps = cfg.get("epsilon", 1e-3)
        m = x.mean(dim=-1, keepdim=True)
        v = ((x - m) ** 2).mean(dim=-1, keepdim=True)
        y = (x - m) / torch.sqrt(v + eps)
        i = 0
        if cfg.get("scale", True):
            y = y * ws[0]
            i = 1
        if cfg.get("center", True):
            y = y + ws[i]
        return y, []
    if cls == "Embedding":
        return F.embedding(x, ws[0]), []
    if cls == "Flatten":
        return x.reshape(x.shape[0], -1), []
    if cls == "Reshape":
        return x.reshape([x.shape[0]] + cfg["target_shape"]), []
    if cls == "Activation":
        return act(a, x), []
    if cls == "ReLU":
        mv = cfg.get("max_value")
        ns = cfg.get("negative_slope", 0) or 0
        if ns:
            return F.leaky_relu(x, ns), []
        return (torch.clamp(x, 0, mv) if mv else F.relu(x)), []
    if cls == "LeakyReLU":
        al = cfg.get("negative_slope", cfg.get("alpha", 0.3))
        return F.leaky_relu(x, al), []
    if cls == "Softmax":
        return F.softmax(x, dim=-1), []
    if cls == "ELU":
        return F.elu(x), []
    if cls == "ZeroPadding2D":
        p = cfg.get("padding", 1)
        if isinstance(p, int):
            t = b = l = r = p
        else:
            (t, b), (l, r) = [q if isinstance(q, list) else [q, q]
                              for q in p]
        return F.pad(x, (0, 0, l, r, t, b)), []
    if cls == "Rescaling":
        return x * cfg["scale"] + cfg.get("offset", 0.0), []
    if cls == "Add":
        return sum(xs), []
    if cls == "Subtract":
        return xs[0] - xs[1], []
    if cls == "Multiply":
        y = xs[0]
        for t in xs[1:]:
            y = y * t
        return y, []
    if cls == "Average":
        return sum(xs) / len(xs), []
    if cls == "Maximum":
        y = xs[0]
        for t in xs[1:]:
            y = torch.maximum(y, t)
        return y, []
    if cls == "Minimum":
        y = xs[0]
        for t in xs[1:]:
            y = torch.minimum(y, t)
        return y, []
    if cls == "Concatenate":
        return torch.cat(xs, dim=cfg.get("axis", -1)), []
    raise SystemExit("torch_layers.py: no oracle for " + cls)


def loss_of(spec, act_name, x, y, w):
    """Keras' loss (SUM_OVER_BATCH_SIZE) of outputs act(x)."""
    name = spec["name"]
    logits = spec.get("from_logits", False)
    ls = spec.get("label_smoothing", 0.0)
    p = act(act_name, x)
    if name == "mean_squared_error":
        per = ((p - y) ** 2).mean(dim=-1)
    elif name == "mean_absolute_error":
        per = (p - y).abs().mean(dim=-1)
    elif name == "huber":
        d = spec.get("delta", 1.0)
        e = (p - y).abs()
        per = torch.where(e <= d, 0.5 * e * e, d * e - 0.5 * d * d)
        per = per.mean(dim=-1)
    elif name == "binary_crossentropy":
        y = y * (1 - ls) + 0.5 * ls
        if logits or act_name == "sigmoid":
            z = x if logits else x
            per = F.binary_cross_entropy_with_logits(z, y, reduction="none")
        else:
            pc = torch.clamp(p, EPS, 1 - EPS)
            per = -(y * torch.log(pc + EPS) + (1 - y) * torch.log(1 - pc + EPS))
        per = per.mean(dim=-1)
    elif name == "categorical_crossentropy":
        k = x.shape[-1]
        y = y * (1 - ls) + ls / k
        if logits or act_name == "softmax":
            per = -(y * F.log_softmax(x, dim=-1)).sum(dim=-1)
        else:
            q = p / p.sum(dim=-1, keepdim=True)
            q = torch.clamp(q, EPS, 1 - EPS)
            per = -(y * torch.log(q)).sum(dim=-1)
    elif name == "sparse_categorical_crossentropy":
        lab = y.reshape(-1).long()
        if logits or act_name == "softmax":
            per = F.cross_entropy(x, lab, reduction="none")
        else:
            lp = torch.log(torch.clamp(p, EPS, 1 - EPS))
            per = F.cross_entropy(lp, lab, reduction="none")
    else:
        raise SystemExit("torch_layers.py: no oracle for loss " + name)
    while per.dim() > 1:
        per = per.mean(dim=-1)
    if w is not None:
        per = per * w
    return per.mean()


def run(d):
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    xs = [load(d, s) for s in meta["inputs"]]
    if meta["kind"] == "loss":
        y = load(d, meta["labels"])
        if y.dtype == torch.float64:
            y = y.detach()
        w = load(d, meta["weight"]).detach() if meta.get("weight") else None
        loss = loss_of(meta["loss"], meta.get("act"), xs[0], y, w)
        loss.backward()
        save(d, "loss.bin", loss.reshape(1))
        save(d, "dx0.bin", xs[0].grad)
        return
    ws = [load(d, s) for s in meta["weights"]]
    cls, cfg = meta["class"], meta["config"]
    yi, _ = layer(cls, cfg, xs, ws, False)
    yt, extra = layer(cls, cfg, xs, ws, True)
    save(d, "y_infer.bin", yi)
    save(d, "y_train.bin", yt)
    for k, e in enumerate(extra):
        save(d, "upd%d.bin" % k, e)
    r = torch.tensor(np.fromfile(os.path.join(d, "r.bin"), dtype=np.float32)
                     .astype(np.float64).reshape(yt.shape))
    (yt * r).sum().backward()
    for k, x in enumerate(xs):
        if x.grad is not None:
            save(d, "dx%d.bin" % k, x.grad)
    for k, w in enumerate(ws):
        g = w.grad if w.grad is not None else torch.zeros_like(w)
        save(d, "dw%d.bin" % k, g)


if __name__ == "__main__":
    for d in sys.argv[1:]:
        run(d)
