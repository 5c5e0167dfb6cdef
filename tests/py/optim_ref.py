#!/usr/bin/python3
"""optim_ref.py - independent oracles for tfkit's optimizers and schedules.

Nothing here uses tfkit code. Two references:

  numpy: the TF 2.11+ Keras optimizers (keras/optimizers/{sgd,adam,adamw,
    rmsprop,adagrad}.py and the base class' gradient clipping and weight
    decay) and schedules (keras/optimizers/schedules/
    learning_rate_schedule.py), re-implemented from their published
    formulas in float32 numpy, Keras' order of operations;
  torch: torch.optim (SGD with momentum/nesterov, Adam, AdamW, RMSprop,
    Adagrad) where its formulas coincide with Keras' (the tests then use
    epsilon 0, because torch adds epsilon outside the square root and
    Keras inside it for RMSprop/Adagrad, and Adam's differs by the
    bias-correction placement).

    optim_ref.py run MANIFEST DIR
        MANIFEST lines: "CASE id steps nvars numel... torch CONFIG_JSON"
        reads DIR/c<id>_v<i>.f32 (initial variables) and
        DIR/c<id>_g<s>_<i>.f32 (gradient of step s), writes
        DIR/c<id>_np<i>.f32 (numpy result), DIR/c<id>_np<i>_s<k>.f32
        (numpy slots, in Keras' slot order) and, when torch is 1,
        DIR/c<id>_th<i>.f32.
    optim_ref.py lr STEP,STEP,... SCHEDULE_JSON...
        prints per schedule one line: its learning rate at each step
        (%.9g, space-separated)
"""

import json
import math
import sys

import numpy as np

F = np.float32


# --- schedules ---------------------------------------------------------------

def schedule_fn(obj):
    """A function step -> learning rate (float64) for a Keras schedule
    object, or a constant."""
    if not isinstance(obj, dict):
        return lambda step: float(obj)
    cls, c = obj["class_name"], obj["config"]
    if cls == "ExponentialDecay":
        def f(step):
            p = step / float(c["decay_steps"])
            if c.get("staircase", False):
                p = math.floor(p)
            return c["initial_learning_rate"] * c["decay_rate"] ** p
        return f
    if cls == "PiecewiseConstantDecay":
        b = [int(x) for x in c["boundaries"]]   # cast to the step's int type
        v = c["values"]

        def f(step):
            if step <= b[0]:
                return v[0]
            if step > b[-1]:
                return v[-1]
            for lo, hi, val in zip(b[:-1], b[1:], v[1:-1]):
                if lo < step <= hi:
                    return val
            raise AssertionError
        return f
    if cls == "CosineDecay":
        init = c["initial_learning_rate"]
        ds = float(c["decay_steps"])
        alpha = c.get("alpha", 0.0)
        wt = c.get("warmup_target")
        ws = float(c.get("warmup_steps", 0))

        def decay(step, frm):
            cosine = 0.5 * (1.0 + math.cos(math.pi * step / ds))
            return frm * ((1 - alpha) * cosine + alpha)

        def f(step):
            if wt is None:
                return decay(min(step, ds), init)
            s = min(step, ds + ws)
            if s < ws:
                return (wt - init) * (s / ws) + init
            return decay(s - ws, wt)
        return f
    raise ValueError(cls)


# --- Keras optimizers in numpy -----------------------------------------------

DEFAULTS = {
    "SGD": {"learning_rate": 0.01, "momentum": 0.0, "nesterov": False},
    "Adam": {"learning_rate": 0.001, "beta_1": 0.9, "beta_2": 0.999,
             "epsilon": 1e-7, "amsgrad": False},
    "AdamW": {"learning_rate": 0.001, "weight_decay": 0.004, "beta_1": 0.9,
              "beta_2": 0.999, "epsilon": 1e-7, "amsgrad": False},
    "RMSprop": {"learning_rate": 0.001, "rho": 0.9, "momentum": 0.0,
                "epsilon": 1e-7, "centered": False},
    "Adagrad": {"learning_rate": 0.001, "initial_accumulator_value": 0.1,
                "epsilon": 1e-7},
}
NAMES = {k.lower(): k for k in DEFAULTS}


def resolve(obj):
    if isinstance(obj, str):
        return NAMES[obj.lower()], dict(DEFAULTS[NAMES[obj.lower()]])
    cls = NAMES[obj["class_name"].lower()]
    c = dict(DEFAULTS[cls])
    c.update(obj.get("config") or {})
    return cls, c


def clip(grads, c):
    cn, gcn, cv = c.get("clipnorm"), c.get("global_clipnorm"), c.get("clipvalue")
    if cn:
        out = []
        for g in grads:
            norm = F(math.sqrt(float(np.sum(g.astype(np.float64) ** 2))))
            out.append((g * F(cn)) / max(norm, F(cn)))
        return out
    if gcn:
        gn = F(math.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2))
                             for g in grads)))
        scale = F(gcn) * min(F(1.0) / gn, F(1.0) / F(gcn))
        return [g * scale for g in grads]
    if cv:
        return [np.minimum(np.maximum(g, F(-cv)), F(cv)) for g in grads]
    return grads


def keras_run(obj, ws, steps):
    """Apply len(steps) steps of the Keras optimizer obj to the float32
    arrays ws (in place); returns the slots per variable."""
    cls, c = resolve(obj)
    lr_at = schedule_fn(c["learning_rate"])
    wd = c.get("weight_decay")
    if cls == "SGD":
        names = ["m"] if c["momentum"] > 0 else []
    elif cls in ("Adam", "AdamW"):
        names = ["m", "v"] + (["vhat"] if c["amsgrad"] else [])
    elif cls == "RMSprop":
        names = (["velocity"] + (["momentum"] if c["momentum"] > 0 else [])
                 + (["average_gradient"] if c["centered"] else []))
    else:
        names = ["accumulator"]
    slots = [{n: np.zeros_like(w) for n in names} for w in ws]
    if cls == "Adagrad":
        for s in slots:
            s["accumulator"][:] = F(c["initial_accumulator_value"])
    for it, grads in enumerate(steps):
        lr = F(lr_at(it))
        grads = clip(grads, c)
        for w, g, s in zip(ws, grads, slots):
            if wd is not None:
                w -= w * F(wd) * lr
            if cls == "SGD":
                mom = F(c["momentum"])
                if "m" in s:
                    m = s["m"]
                    m[:] = -g * lr + m * mom
                    if c["nesterov"]:
                        w += -g * lr + m * mom
                    else:
                        w += m
                else:
                    w += -g * lr
            elif cls in ("Adam", "AdamW"):
                t = it + 1
                b1, b2 = c["beta_1"], c["beta_2"]
                alpha = F(float(lr) * math.sqrt(1 - b2 ** t) / (1 - b1 ** t))
                m, v = s["m"], s["v"]
                m += (g - m) * F(1 - b1)
                v += (g * g - v) * F(1 - b2)
                vv = v
                if c["amsgrad"]:
                    s["vhat"][:] = np.maximum(s["vhat"], v)
                    vv = s["vhat"]
                w -= (m * alpha) / (np.sqrt(vv) + F(c["epsilon"]))
            elif cls == "RMSprop":
                rho = F(c["rho"])
                vel = s["velocity"]
                vel[:] = rho * vel + F(1 - c["rho"]) * (g * g)
                if c["centered"]:
                    ag = s["average_gradient"]
                    ag[:] = rho * ag + F(1 - c["rho"]) * g
                    den = vel - ag * ag + F(c["epsilon"])
                else:
                    den = vel + F(c["epsilon"])
                inc = lr * g * (F(1) / np.sqrt(den))
                if c["momentum"] > 0:
                    mo = s["momentum"]
                    mo[:] = F(c["momentum"]) * mo + inc
                    w -= mo
                else:
                    w -= inc
            else:
                acc = s["accumulator"]
                acc += g * g
                w -= (lr * g) / np.sqrt(acc + F(c["epsilon"]))
    return [[s[n] for n in names] for s in slots]


# --- torch ------------------------------------------------------------------

def torch_run(obj, ws, steps):
    import torch
    torch.set_num_threads(1)
    cls, c = resolve(obj)
    lr = schedule_fn(c["learning_rate"])(0)
    ps = [torch.tensor(w.copy(), requires_grad=True) for w in ws]
    if cls == "SGD":
        opt = torch.optim.SGD(ps, lr=lr, momentum=c["momentum"],
                              nesterov=c["nesterov"])
    elif cls == "Adam":
        opt = torch.optim.Adam(ps, lr=lr, betas=(c["beta_1"], c["beta_2"]),
                               eps=c["epsilon"], amsgrad=c["amsgrad"])
    elif cls == "AdamW":
        opt = torch.optim.AdamW(ps, lr=lr, betas=(c["beta_1"], c["beta_2"]),
                                eps=c["epsilon"], amsgrad=c["amsgrad"],
                                weight_decay=c["weight_decay"])
    elif cls == "RMSprop":
        opt = torch.optim.RMSprop(ps, lr=lr, alpha=c["rho"], eps=c["epsilon"],
                                  momentum=c["momentum"],
                                  centered=c["centered"])
    else:
        opt = torch.optim.Adagrad(
            ps, lr=lr, eps=c["epsilon"],
            initial_accumulator_value=c["initial_accumulator_value"])
    for grads in steps:
        for p, g in zip(ps, grads):
            p.grad = torch.tensor(g.copy())
        opt.step()
    return [p.detach().numpy() for p in ps]


def run(manifest, d):
    for line in open(manifest):
        parts = line.split(" ", 1)
        if parts[0] != "CASE":
            continue
        f = parts[1].split(" ")
        cid, nsteps, nvars = f[0], int(f[1]), int(f[2])
        numel = [int(x) for x in f[3:3 + nvars]]
        use_torch = f[3 + nvars] == "1"
        cfg = json.loads(" ".join(f[4 + nvars:]))
        ws = [np.fromfile("%s/c%s_v%d.f32" % (d, cid, i), dtype=F)
              for i in range(nvars)]
        steps = [[np.fromfile("%s/c%s_g%d_%d.f32" % (d, cid, s, i), dtype=F)
                  for i in range(nvars)] for s in range(nsteps)]
        for w, n in zip(ws, numel):
            assert len(w) == n
        if use_torch:
            for i, w in enumerate(torch_run(cfg, ws, steps)):
                w.astype(F).tofile("%s/c%s_th%d.f32" % (d, cid, i))
        slots = keras_run(cfg, ws, steps)
        for i, w in enumerate(ws):
            w.tofile("%s/c%s_np%d.f32" % (d, cid, i))
            for k, s in enumerate(slots[i]):
                s.tofile("%s/c%s_np%d_s%d.f32" % (d, cid, i, k))


def main(argv):
    if len(argv) == 4 and argv[1] == "run":
        run(argv[2], argv[3])
        return 0
    if len(argv) >= 3 and argv[1] == "lr":
        steps = [int(x) for x in argv[2].split(",")]
        for js in argv[3:]:
            f = schedule_fn(json.loads(js))
            print(" ".join("%.9g" % f(s) for s in steps))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
