#!/usr/bin/python3
"""qreport_ref.py - oracle for `tfk-lite convert --report --eval` (t1840).

usage: qreport_ref.py [--layerwise] FLOAT.tflite QUANT.tflite REP.npy EVAL.npy LABELS.npy

QUANT may also be a dynamic-range or float16 file (DEQUANTIZE of INT8 or
FLOAT16 constants): it then has no layer_stats, only quant_correct.

Reads both .tflite files with python3-flatbuffers (tflite_fb.py's slot
readers, schema.fbs slots written there) and runs them with numpy, no
tfkit code: the float file in float64, the int8 file with TFLite's
integer arithmetic from int8_ref.py (QuantizeMultiplier,
MultiplyByQuantizedMultiplier, the lookup-table softmax). Ops: RESHAPE,
FULLY_CONNECTED (fused NONE/RELU/RELU6), SOFTMAX, QUANTIZE, DEQUANTIZE,
enough for the MLP of examples/mlp.spec.json.

Prints, as one JSON object:
  layer_stats: for each INT8 activation tensor of QUANT with a FLOAT32
    activation tensor of the same name in FLOAT, TensorFlow's
    quantization-debugger metrics (debugger.py
    _DEFAULT_LAYER_DEBUG_METRICS: num_elements, np.std, np.average,
    max |d|, np.average(d**2) of d = dequantized - float) per REP row,
    averaged over rows (np.nanmean), with scale and zero_point; the
    float value is the float model's own, or with --layerwise the float
    op writing it run alone on the dequantized int8 values of its inputs
    (TF's default NumericVerify; model inputs keep the float value);
  float_correct, quant_correct: rows of EVAL whose argmax of the first
    output equals LABELS.
"""
import json
import os
import struct
import sys
import tempfile

import numpy as np
from flatbuffers import number_types as N
from flatbuffers.table import Table

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import int8_ref  # noqa: E402
from tflite_fb import (TYPES, scalar, subtable, vec,  # noqa: E402
                       vec_tables)

RESHAPE, FULLY_CONNECTED, SOFTMAX, QUANTIZE, DEQUANTIZE = 22, 9, 25, 114, 6
OP_NAMES = {RESHAPE: "RESHAPE", FULLY_CONNECTED: "FULLY_CONNECTED",
            SOFTMAX: "SOFTMAX", QUANTIZE: "QUANTIZE",
            DEQUANTIZE: "DEQUANTIZE"}


def load(path):
    buf = bytearray(open(path, "rb").read())
    root = Table(buf, struct.unpack_from("<I", buf, 0)[0])
    codes = [max(scalar(c, 0, N.Int8Flags), scalar(c, 3, N.Int32Flags))
             for c in vec_tables(root, 1)]
    buffers = []
    for b in vec_tables(root, 4):
        d = vec(b, 0, N.Uint8Flags, 1)
        buffers.append(bytes(d) if d else b"")
    s = vec_tables(root, 2)[0]
    tensors = []
    for x in vec_tables(s, 0):
        q = subtable(x, 4)
        o = x.Offset(4 + 2 * 3)
        t = {"name": x.String(x.Pos + o).decode() if o else "",
             "type": TYPES[scalar(x, 1, N.Int8Flags)],
             "shape": vec(x, 0, N.Int32Flags, 4) or [],
             "data": buffers[scalar(x, 2, N.Uint32Flags)]}
        if q is not None:
            t["scale"] = vec(q, 2, N.Float32Flags, 4) or []
            t["zp"] = vec(q, 3, N.Int64Flags, 8) or []
            t["axis"] = scalar(q, 6, N.Int32Flags)
        tensors.append(t)
    ops = []
    for o in vec_tables(s, 3):
        opt = subtable(o, 4)
        ops.append({"code": codes[scalar(o, 0, N.Uint32Flags)],
                    "inputs": vec(o, 1, N.Int32Flags, 4) or [],
                    "outputs": vec(o, 2, N.Int32Flags, 4) or [],
                    "opt": opt})
    return {"tensors": tensors, "ops": ops,
            "inputs": vec(s, 1, N.Int32Flags, 4),
            "outputs": vec(s, 2, N.Int32Flags, 4)}


def const(t):
    dt = {"FLOAT32": "<f4", "INT32": "<i4", "INT8": "<i1",
          "FLOAT16": "<f2"}[t["type"]]
    return np.frombuffer(t["data"], dtype=dt).reshape(t["shape"])


def dequantize_const(t):
    """A DEQUANTIZE of a constant: FLOAT16 widened, INT8 scaled per
    channel along quantized_dimension (dynamic-range weights)."""
    c = const(t)
    if t["type"] == "FLOAT16":
        return c.astype(np.float64)
    sc = np.array(t["scale"], dtype=np.float32).astype(np.float64)
    zp = np.array(t["zp"], dtype=np.int64)
    if len(sc) > 1:
        shape = [1] * c.ndim
        shape[t["axis"]] = len(sc)
        sc, zp = sc.reshape(shape), zp.reshape(shape)
    return sc * (c.astype(np.int64) - zp)


class Case:
    """The attribute reader int8_ref's op functions take."""

    def __init__(self, d):
        self.d = d

    def ints(self, k):
        return list(self.d[k])

    def i(self, k):
        return int(self.d[k])

    def f(self, k):
        return float(self.d[k])

    def floats(self, k):
        return [float(v) for v in self.d[k]]


def int8_softmax(x, t_in, t_out, beta, tmp):
    base = os.path.join(tmp, "sm")
    x.astype("<i1").tofile(base + ".x")
    c = Case({"dims": x.shape, "uint8": 0, "beta": beta,
              "in_scale": t_in["scale"][0], "out_scale": t_out["scale"][0],
              "out_zp": t_out["zp"][0]})
    return int8_ref.op_softmax(c, base).astype(np.int64)


def run(m, x, tmp):
    """Every tensor's value for input x (rows first): float64 for float
    tensors, int64 for int8 ones."""
    v = {m["inputs"][0]: x.astype(np.float64)}
    for op in m["ops"]:
        apply(m, op, v, tmp)
    return v


def apply(m, op, v, tmp):
    """Run one operator on the values in v, adding its output to v."""
    T = m["tensors"]
    ins, out = op["inputs"], op["outputs"][0]
    to = T[out]
    a = v[ins[0]] if ins[0] in v else None
    if op["code"] == DEQUANTIZE and a is None:
        v[out] = dequantize_const(T[ins[0]])
    elif op["code"] == RESHAPE:
        shape = [int(d) for d in const(T[ins[1]])]
        v[out] = a.reshape(shape)
    elif op["code"] == QUANTIZE:
        s, z = np.float32(to["scale"][0]), to["zp"][0]
        q = int8_ref.round_half_away(
            (a.astype(np.float32) / s).astype(np.float32)) + z
        v[out] = np.clip(q, -128, 127).astype(np.int64)
    elif op["code"] == DEQUANTIZE:
        ti = T[ins[0]]
        v[out] = (np.float32(ti["scale"][0]) *
                  (a - ti["zp"][0])).astype(np.float32)
    elif op["code"] == FULLY_CONNECTED:
        act = scalar(op["opt"], 0, N.Int8Flags) if op["opt"] else 0
        w = v[ins[1]] if ins[1] in v else \
            const(T[ins[1]]).astype(np.int64 if to["type"] == "INT8"
                                    else np.float64)
        a2 = a.reshape(-1, w.shape[1])
        if to["type"] == "INT8":
            ti, tw = T[ins[0]], T[ins[1]]
            mult, shift = int8_ref.conv_mults(
                ti["scale"][0], tw["scale"], to["scale"][0], w.shape[0])
            acc = (a2 - ti["zp"][0]) @ w.T
            if len(ins) > 2 and ins[2] >= 0:
                acc = acc + const(T[ins[2]]).astype(np.int64)
            lo, hi = int8_ref.act_range(act, to["scale"][0], to["zp"][0])
            v[out] = int8_ref.requant(acc, mult, shift, to["zp"][0],
                                      lo, hi).astype(np.int64)
        else:
            y = a2 @ w.T
            if len(ins) > 2 and ins[2] >= 0:
                y = y + (v[ins[2]] if ins[2] in v else const(T[ins[2]]))
            if act == 1:
                y = np.maximum(y, 0)
            elif act == 3:
                y = np.clip(y, 0, 6)
            v[out] = y
    elif op["code"] == SOFTMAX:
        beta = scalar(op["opt"], 0, N.Float32Flags, 1.0) \
            if op["opt"] else 1.0
        if to["type"] == "INT8":
            v[out] = int8_softmax(a, T[ins[0]], to, beta, tmp)
        else:
            e = np.exp(beta * (a - a.max(axis=1, keepdims=True)))
            v[out] = e / e.sum(axis=1, keepdims=True)
    else:
        sys.exit("qreport_ref.py: op %d not modelled" % op["code"])


def layer_ref(fm, f, qm, qv, tmp):
    """--layerwise: the float op writing tensor f run alone on the
    dequantized int8 values of its inputs (TF's NumericVerify), or None
    when no op writes f (a model input)."""
    ops = [o for o in fm["ops"] if f in o["outputs"]]
    if not ops:
        return None
    qidx = {t["name"]: i for i, t in enumerate(qm["tensors"])
            if t["type"] == "INT8" and is_act(t)}
    v = {}
    for t in ops[0]["inputs"]:
        if t < 0 or not is_act(fm["tensors"][t]):
            continue
        qt = qm["tensors"][qidx[fm["tensors"][t]["name"]]]
        v[t] = (np.float64(np.float32(qt["scale"][0])) *
                (qv[qidx[qt["name"]]] - qt["zp"][0]))
    apply(fm, ops[0], v, tmp)
    return v[f]


def is_act(t):
    return not t["data"]


def main():
    layerwise = sys.argv[1] == "--layerwise"
    if layerwise:
        del sys.argv[1]
    fpath, qpath, rep, ev, lab = sys.argv[1:6]
    fm, qm = load(fpath), load(qpath)
    rep, ev, lab = np.load(rep), np.load(ev), np.load(lab)
    out = {"layer_stats": []}
    with tempfile.TemporaryDirectory() as tmp:
        fv, qv = run(fm, rep, tmp), run(qm, rep, tmp)
        fnames = {t["name"]: i for i, t in enumerate(fm["tensors"])
                  if t["type"] == "FLOAT32" and is_act(t)}
        for i, t in enumerate(qm["tensors"]):
            if t["type"] != "INT8" or not is_act(t) or \
                    len(t.get("scale", [])) != 1 or t["name"] not in fnames:
                continue
            f = fv[fnames[t["name"]]]
            if layerwise:
                lr = layer_ref(fm, fnames[t["name"]], qm, qv, tmp)
                f = f if lr is None else lr
            f = f.reshape(len(rep), -1)
            q = (np.float64(np.float32(t["scale"][0])) *
                 (qv[i].reshape(len(rep), -1) - t["zp"][0]))
            d = q - f
            rows = [{"num_elements": r.size, "stddev": np.std(r),
                     "mean_error": np.average(r),
                     "max_abs_error": np.max(np.abs(r)),
                     "mean_squared_error": np.average(r ** 2)} for r in d]
            st = {k: float(np.nanmean([r[k] for r in rows]))
                  for k in rows[0]}
            writer = [o["code"] for o in qm["ops"] if i in o["outputs"]]
            st["num_elements"] = int(st["num_elements"])
            st.update({"tensor_idx": i, "tensor_name": t["name"],
                       "op_name": OP_NAMES[writer[0]] if writer else "",
                       "scale": float(np.float32(t["scale"][0])),
                       "zero_point": int(t["zp"][0])})
            out["layer_stats"].append(st)
        fo = run(fm, ev, tmp)[fm["outputs"][0]]
        qo = run(qm, ev, tmp)[qm["outputs"][0]]
    out["float_correct"] = int((fo.argmax(axis=1) == lab).sum())
    out["quant_correct"] = int((qo.argmax(axis=1) == lab).sum())
    print(json.dumps(out))


main()
