#!/usr/bin/python3
"""torch_train_check.py - PyTorch replays tfk-train's steps from a checkpoint.

Nothing here uses tfkit code: checkpoints are read by bundle_check.py (a
plain-Python tensor bundle reader) and records by tfexample.py
(python3-protobuf). The model is rebuilt in PyTorch from the spec's
Sequential layers (InputLayer, Flatten, Dense with relu/softmax/linear),
gradients come from torch.autograd, and the optimizer updates are the
TF 2.11+ Keras formulas written out below (keras/optimizers/sgd.py,
adam.py), in float32:

  SGD:  m = momentum * m - lr * g;  w += m        (slot "m", momentum > 0)
        w -= lr * g                               (momentum 0)
  Adam: t = iterations + 1
        alpha = lr * sqrt(1 - b2^t) / (1 - b1^t)
        m += (g - m) * (1 - b1);  v += (g^2 - v) * (1 - b2)
        w -= alpha * m / (sqrt(v) + eps)          (slots "m", "v")

    torch_train_check.py RECORDS BEFORE AFTER [BEFORE AFTER ...]

Each BEFORE and AFTER are checkpoint prefixes of one run (AFTER = BEFORE's
epoch + 1, fit.shuffle false, no Dropout): the weights, slots and
iterations of BEFORE are loaded, the epoch's batches (records in file
order, fit.batch_size) are trained in PyTorch, and the result is
compared with AFTER. Prints

    steps N
    loss ours=X torch=Y rel=R
    var NAME maxrel=R          (per variable and slot: max |a-b| / max |b|)

and then "match" when every rel is < 2e-4, else "MISMATCH", for each
pair (one process: importing torch takes seconds).
"""

import json
import math
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bundle_check  # noqa: E402
import tfexample  # noqa: E402

TOL = 2e-4


def read_bundle(prefix):
    entries, _ = bundle_check.read_table(prefix + ".index")
    data = open(prefix + ".data-00000-of-00001", "rb").read()
    out = {}
    for key, val in entries[1:]:
        e = bundle_check.BundleEntryProto.FromString(val)
        assert e.dtype == 1, key
        shape = [d.size for d in e.shape.dim]
        raw = data[e.offset:e.offset + e.size]
        out[key.decode()] = np.frombuffer(raw, "<f4").reshape(shape).copy()
    return out


def layers(spec):
    """[(name, units, activation)] of the Dense layers."""
    out = []
    for l in spec["model"]["config"]["layers"]:
        c, cfg = l["class_name"], l["config"]
        if c == "Dense":
            out.append((cfg["name"], cfg["units"], cfg.get("activation", "linear")))
        elif c not in ("InputLayer", "Flatten"):
            raise SystemExit("unsupported layer " + c)
    return out


def optimizer(spec):
    o = spec["compile"]["optimizer"]
    if isinstance(o, str):
        return o.lower(), {}
    return o["class_name"].lower(), o.get("config", {})


def main(argv):
    rec_path = argv[1]
    for i in range(2, len(argv) - 1, 2):
        check(rec_path, argv[i], argv[i + 1])
    return 0


def check(rec_path, before, after):
    st0 = json.load(open(before + ".json"))
    st1 = json.load(open(after + ".json"))
    # the spec in the checkpoint has the --set values applied
    spec = st1["spec"]
    w0, w1 = read_bundle(before), read_bundle(after)
    dense = layers(spec)
    inp = spec.get("inputs", {})
    scale = 1.0
    for v in inp.values():
        scale = v.get("scale", 1.0)
    bs = spec["fit"].get("batch_size", 32)
    recs = list(tfexample.read_tfrecords(rec_path))
    xs, ys = [], []
    for r in recs:
        ex = tfexample.Example.FromString(r)
        f = ex.features.feature
        xs.append(np.frombuffer(f["image"].bytes_list.value[0], np.uint8))
        ys.append(f["label"].int64_list.value[0])
    X = (np.array(xs, np.float64) * scale).astype(np.float32)
    Y = np.array(ys, np.int64)

    params = {}
    for name, _, _ in dense:
        for p in ("kernel", "bias"):
            k = "%s/%s" % (name, p)
            params[k] = torch.tensor(w0[k], requires_grad=True)
    kind, cfg = optimizer(spec)
    lr = cfg.get("learning_rate", 0.01 if kind == "sgd" else 0.001)
    it = st0["iterations"]
    steps = st1["iterations"] - it
    print("steps", steps)
    slots = {k: torch.tensor(v) for k, v in w0.items() if k.startswith("optimizer/")}
    losses = []
    for s in range(steps):
        xb = torch.tensor(X[s * bs:(s + 1) * bs])
        yb = torch.tensor(Y[s * bs:(s + 1) * bs])
        h = xb.reshape(xb.shape[0], -1)
        for i, (name, _, act) in enumerate(dense):
            h = h @ params[name + "/kernel"] + params[name + "/bias"]
            if act == "relu":
                h = torch.relu(h)
            elif act == "softmax":
                assert i == len(dense) - 1
            elif act != "linear":
                raise SystemExit("unsupported activation " + act)
        # softmax + sparse crossentropy = cross_entropy on the logits
        loss = torch.nn.functional.cross_entropy(h, yb)
        losses.append((loss.item(), xb.shape[0]))
        for p in params.values():
            p.grad = None
        loss.backward()
        with torch.no_grad():
            t = it + s + 1
            for k, p in params.items():
                g = p.grad
                if kind == "sgd":
                    mom = cfg.get("momentum", 0.0)
                    if mom:
                        m = slots["optimizer/%s/m" % k]
                        m.copy_(mom * m - lr * g)
                        p.add_(m)
                    else:
                        p.sub_(lr * g)
                elif kind == "adam":
                    b1 = cfg.get("beta_1", 0.9)
                    b2 = cfg.get("beta_2", 0.999)
                    eps = cfg.get("epsilon", 1e-7)
                    alpha = lr * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
                    m = slots["optimizer/%s/m" % k]
                    v = slots["optimizer/%s/v" % k]
                    m.add_((g - m) * (1 - b1))
                    v.add_((g * g - v) * (1 - b2))
                    p.sub_((m * alpha) / (torch.sqrt(v) + eps))
                else:
                    raise SystemExit("unsupported optimizer " + kind)
    ours = st1["history"]["loss"][-1]
    theirs = sum(l * n for l, n in losses) / sum(n for _, n in losses)
    rel = abs(ours - theirs) / abs(theirs)
    print("loss ours=%.7g torch=%.7g rel=%.2g" % (ours, theirs, rel))
    worst = rel
    got = dict((k, v.detach().numpy()) for k, v in params.items())
    got.update((k, v.numpy()) for k, v in slots.items())
    for k in sorted(got):
        a, b = w1[k], got[k]
        r = float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))
        print("var %s maxrel=%.2g" % (k, r))
        worst = max(worst, r)
    print("match" if worst < TOL else "MISMATCH")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
