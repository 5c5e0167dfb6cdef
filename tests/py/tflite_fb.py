#!/usr/bin/python3
"""tflite_fb.py - an independent FlatBuffers oracle for the tfk-lite tests.

Reads and builds FlatBuffers with python3-flatbuffers (Google's own Python
runtime, not our C code), with the TFLite field slots written here from
tensorflow/compiler/mlir/lite/schema/schema.fbs (slot = position of the
field in its table's declaration).

  tflite_fb.py compare MODEL.tflite OURS.json
      walk MODEL with python3-flatbuffers and compare what it finds with
      `tfk-lite show --json MODEL` (OURS.json); prints "ok" or the
      differences (exit 1)
  tflite_fb.py build OUT
      write the test buffer of t-flatbuf.c, made by flatbuffers.Builder
  tflite_fb.py read FILE
      print the fields of the test buffer in FILE (made by our builder),
      one "name=value" per line
  tflite_fb.py ops DIR
      write small float models, one per op family (CONV_2D,
      DEPTHWISE_CONV_2D, pools, FULLY_CONNECTED, SOFTMAX, RESHAPE,
      CONCATENATION, MEAN, PAD, elementwise ops with broadcasting and
      fused activations, float16 weights through DEQUANTIZE, a custom
      op), built with flatbuffers.Builder, as DIR/NAME.tflite, with
      DIR/NAME.in.npy and the expected output DIR/NAME.out.npy computed
      by numpy from TensorFlow's documented semantics (SAME padding,
      OHWI filters, ...), never by tfkit
  tflite_fb.py hostile DIR
      write the crafted models of the "hostile model files" issue (see
      hostile() below) as DIR/NAME.tflite
  tflite_fb.py strings DIR
      write models with good and broken STRING buffers (see strings())
  tflite_fb.py uint8 DIR
      write small uint8 models (see uint8() below)
  tflite_fb.py check GOT.npy WANT.npy
      "ok" when the arrays have the same shape and agree within 1e-5
      (relative) + 1e-6 (absolute)
"""
import json
import struct
import sys

import flatbuffers
from flatbuffers import number_types as N
from flatbuffers.table import Table


def slot(k):
    return 4 + 2 * k


def scalar(t, k, flags, default=0):
    o = t.Offset(slot(k))
    return t.Get(flags, t.Pos + o) if o else default


def string(t, k):
    o = t.Offset(slot(k))
    return t.String(t.Pos + o).decode() if o else None


def subtable(t, k):
    o = t.Offset(slot(k))
    if not o:
        return None
    return Table(t.Bytes, t.Indirect(t.Pos + o))


def vec(t, k, flags, size):
    o = t.Offset(slot(k))
    if not o:
        return None
    start, n = t.Vector(o), t.VectorLen(o)
    return [t.Get(flags, start + size * i) for i in range(n)]


def vec_tables(t, k):
    o = t.Offset(slot(k))
    if not o:
        return []
    start, n = t.Vector(o), t.VectorLen(o)
    return [Table(t.Bytes, t.Indirect(start + 4 * i)) for i in range(n)]


def vec_strings(t, k):
    o = t.Offset(slot(k))
    if not o:
        return []
    start, n = t.Vector(o), t.VectorLen(o)
    return [t.String(start + 4 * i).decode() for i in range(n)]


TYPES = ["FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "STRING", "BOOL",
         "INT16", "COMPLEX64", "INT8", "FLOAT64", "COMPLEX128", "UINT64",
         "RESOURCE", "VARIANT", "UINT32", "UINT16", "INT4", "BFLOAT16"]


def walk(path):
    buf = bytearray(open(path, "rb").read())
    root = Table(buf, struct.unpack_from("<I", buf, 0)[0])
    m = {"version": scalar(root, 0, N.Uint32Flags)}
    desc = string(root, 3)
    m["description"] = desc
    codes = []
    for c in vec_tables(root, 1):
        dep = scalar(c, 0, N.Int8Flags)
        ext = scalar(c, 3, N.Int32Flags)
        codes.append({"builtin_code": max(dep, ext),
                      "deprecated_builtin_code": dep,
                      "version": scalar(c, 2, N.Int32Flags, 1)})
    m["operator_codes"] = codes
    buffers = []
    for b in vec_tables(root, 4):
        d = vec(b, 0, N.Uint8Flags, 1)
        buffers.append(bytes(d) if d else b"")
    subgraphs = []
    for s in vec_tables(root, 2):
        tensors = []
        for x in vec_tables(s, 0):
            q = subtable(x, 4)
            t = {"name": string(x, 3) or "",
                 "type": TYPES[scalar(x, 1, N.Int8Flags)],
                 "shape": vec(x, 0, N.Int32Flags, 4) or [],
                 "buffer": scalar(x, 2, N.Uint32Flags)}
            sig = vec(x, 7, N.Int32Flags, 4)
            if sig is not None:
                t["shape_signature"] = sig
            t["buffer_bytes"] = len(buffers[t["buffer"]]) if buffers else 0
            if q is not None:
                t["quantization"] = {
                    "scale": vec(q, 2, N.Float32Flags, 4) or [],
                    "zero_point": vec(q, 3, N.Int64Flags, 8) or [],
                    "quantized_dimension": scalar(q, 6, N.Int32Flags)}
                mn = vec(q, 0, N.Float32Flags, 4)
                if mn:
                    t["quantization"]["min"] = mn
                    t["quantization"]["max"] = vec(q, 1, N.Float32Flags, 4)
            tensors.append(t)
        ops = []
        for o in vec_tables(s, 3):
            idx = scalar(o, 0, N.Uint32Flags)
            ops.append({"opcode_index": idx,
                        "builtin_code": codes[idx]["builtin_code"],
                        "inputs": vec(o, 1, N.Int32Flags, 4) or [],
                        "outputs": vec(o, 2, N.Int32Flags, 4) or []})
        subgraphs.append({"name": string(s, 4) or "",
                          "inputs": vec(s, 1, N.Int32Flags, 4) or [],
                          "outputs": vec(s, 2, N.Int32Flags, 4) or [],
                          "tensors": tensors, "operators": ops})
    m["subgraphs"] = subgraphs
    sigs = []
    for g in vec_tables(root, 7):
        sigs.append({
            "signature_key": string(g, 2) or "",
            "subgraph_index": scalar(g, 4, N.Uint32Flags),
            "inputs": [{"name": string(x, 0) or "",
                        "tensor_index": scalar(x, 1, N.Uint32Flags)}
                       for x in vec_tables(g, 0)],
            "outputs": [{"name": string(x, 0) or "",
                         "tensor_index": scalar(x, 1, N.Uint32Flags)}
                        for x in vec_tables(g, 1)]})
    m["signature_defs"] = sigs
    meta = []
    rt = None
    for x in vec_tables(root, 6):
        name, b = string(x, 0) or "", scalar(x, 1, N.Uint32Flags)
        meta.append({"name": name, "buffer": b,
                     "bytes": len(buffers[b])})
        if name == "min_runtime_version":
            rt = buffers[b].split(b"\0")[0].decode()
    m["metadata"] = meta
    m["min_runtime_version"] = rt
    return m


def close(a, b):
    if isinstance(a, float) or isinstance(b, float):
        # ours prints floats with 9 significant digits: float32 exact
        return struct.pack("<f", a) == struct.pack("<f", b)
    return a == b


def diff(want, got, path, out):
    if isinstance(want, dict):
        if not isinstance(got, dict):
            out.append("%s: want object, got %r" % (path, got))
            return
        for k, v in want.items():
            if k not in got:
                out.append("%s.%s: missing" % (path, k))
            else:
                diff(v, got[k], "%s.%s" % (path, k), out)
    elif isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            out.append("%s: want %r, got %r" % (path, want, got))
            return
        for i, (w, g) in enumerate(zip(want, got)):
            diff(w, g, "%s[%d]" % (path, i), out)
    elif not close(want, got):
        out.append("%s: want %r, got %r" % (path, want, got))


def compare(model, ours):
    want = walk(model)
    got = json.load(open(ours))
    out = []
    diff(want, got, "", out)
    if out:
        print("\n".join(out[:20]))
        return 1
    print("ok")
    return 0


# The t-flatbuf test buffer, identifier "TFKT". Root table slots:
#  0 u8 200, 1 i32 -123456, 2 i64 -1234567890123, 3 f32 1.5,
#  4 string "hello", 5 [int] [1, -2, 3], 6 [long] [1 << 40, -5],
#  7 child table {0: u32 7, 1: string "child"},
#  8 [table] [{0: u32 1}, {0: u32 2}], 9 [string] ["a", "bc"],
#  10 absent, 11 [float] [0.25, -4.0], 12 u64 2**63 + 5, 13 i8 -7
def build(out):
    b = flatbuffers.Builder(0)
    s_hello = b.CreateString("hello")
    b.StartVector(4, 3, 4)
    for v in reversed([1, -2, 3]):
        b.PrependInt32(v)
    v_i32 = b.EndVector()
    b.StartVector(8, 2, 8)
    for v in reversed([1 << 40, -5]):
        b.PrependInt64(v)
    v_i64 = b.EndVector()
    s_child = b.CreateString("child")
    b.StartObject(2)
    b.PrependUint32Slot(0, 7, 0)
    b.PrependUOffsetTRelativeSlot(1, s_child, 0)
    child = b.EndObject()
    items = []
    for k in (1, 2):
        b.StartObject(1)
        b.PrependUint32Slot(0, k, 0)
        items.append(b.EndObject())
    b.StartVector(4, 2, 4)
    for it in reversed(items):
        b.PrependUOffsetTRelative(it)
    v_items = b.EndVector()
    strs = [b.CreateString(x) for x in ("a", "bc")]
    b.StartVector(4, 2, 4)
    for x in reversed(strs):
        b.PrependUOffsetTRelative(x)
    v_strs = b.EndVector()
    b.StartVector(4, 2, 4)
    for v in reversed([0.25, -4.0]):
        b.PrependFloat32(v)
    v_f32 = b.EndVector()
    b.StartObject(14)
    b.PrependUint8Slot(0, 200, 0)
    b.PrependInt32Slot(1, -123456, 0)
    b.PrependInt64Slot(2, -1234567890123, 0)
    b.PrependFloat32Slot(3, 1.5, 0)
    b.PrependUOffsetTRelativeSlot(4, s_hello, 0)
    b.PrependUOffsetTRelativeSlot(5, v_i32, 0)
    b.PrependUOffsetTRelativeSlot(6, v_i64, 0)
    b.PrependUOffsetTRelativeSlot(7, child, 0)
    b.PrependUOffsetTRelativeSlot(8, v_items, 0)
    b.PrependUOffsetTRelativeSlot(9, v_strs, 0)
    b.PrependUOffsetTRelativeSlot(11, v_f32, 0)
    b.PrependUint64Slot(12, 2**63 + 5, 0)
    b.PrependInt8Slot(13, -7, 0)
    root = b.EndObject()
    b.Finish(root, file_identifier=b"TFKT")
    open(out, "wb").write(b.Output())
    return 0


def read(path):
    buf = bytearray(open(path, "rb").read())
    assert bytes(buf[4:8]) == b"TFKT", buf[4:8]
    t = Table(buf, struct.unpack_from("<I", buf, 0)[0])
    c = subtable(t, 7)
    lines = [
        "u8=%d" % scalar(t, 0, N.Uint8Flags),
        "i32=%d" % scalar(t, 1, N.Int32Flags),
        "i64=%d" % scalar(t, 2, N.Int64Flags),
        "f32=%r" % scalar(t, 3, N.Float32Flags),
        "str=%s" % string(t, 4),
        "vi32=%r" % vec(t, 5, N.Int32Flags, 4),
        "vi64=%r" % vec(t, 6, N.Int64Flags, 8),
        "child=%d,%s" % (scalar(c, 0, N.Uint32Flags), string(c, 1)),
        "items=%r" % [scalar(x, 0, N.Uint32Flags) for x in vec_tables(t, 8)],
        "strs=%r" % vec_strings(t, 9),
        "absent=%r" % (t.Offset(slot(10)) == 0),
        "vf32=%r" % vec(t, 11, N.Float32Flags, 4),
        "u64=%d" % scalar(t, 12, N.Uint64Flags),
        "i8=%d" % scalar(t, 13, N.Int8Flags),
    ]
    print("\n".join(lines))
    return 0


# --- small models for `tfk-lite run` ------------------------------------
# schema.fbs numbers: TensorType FLOAT32 0, FLOAT16 1, INT32 2;
# BuiltinOperator ADD 0, AVERAGE_POOL_2D 1, CONCATENATION 2, CONV_2D 3,
# DEPTHWISE_CONV_2D 4, DEQUANTIZE 6, FULLY_CONNECTED 9, LOGISTIC 14,
# MAX_POOL_2D 17, MUL 18, RESHAPE 22, SOFTMAX 25, CUSTOM 32, PAD 34,
# MEAN 40, SUB 41, DIV 42; BuiltinOptions union types Conv2DOptions 1,
# DepthwiseConv2DOptions 2, Pool2DOptions 5, FullyConnectedOptions 8,
# SoftmaxOptions 9, ConcatenationOptions 10, AddOptions 11, MulOptions 21,
# ReducerOptions 27, SubOptions 28, DivOptions 29; Padding SAME 0,
# VALID 1; activation RELU 1, RELU_N1_TO_1 2, RELU6 3, TANH 4.

def ivec(b, vals):
    b.StartVector(4, len(vals), 4)
    for v in reversed(vals):
        b.PrependInt32(int(v))
    return b.EndVector()


def offvec(b, offs):
    b.StartVector(4, len(offs), 4)
    for o in reversed(offs):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def opts_table(b, fields):
    """fields: list of (slot, kind, value), kind 'b' byte, 'i' int32,
    'f' float32."""
    b.StartObject(max([f[0] for f in fields] + [0]) + 1)
    for slot_, kind, v in fields:
        if kind == "b":
            b.PrependInt8Slot(slot_, v, -99)
        elif kind == "i":
            b.PrependInt32Slot(slot_, v, -99)
        else:
            b.PrependFloat32Slot(slot_, v, -99.0)
    return b.EndObject()


def write_model(path, tensors, ops, inputs, outputs, codes):
    """tensors: (name, type, shape, bytes or None[, extra]), extra a dict
    with "sig" (shape_signature) and "quant" ((scales, zero points));
    ops: (code index, inputs, outputs, options type, option fields);
    codes: (builtin code, custom code or None)."""
    b = flatbuffers.Builder(0)
    bufs = []
    datas = [b""] + [t[3] for t in tensors if t[3] is not None]
    for d in datas:
        if d:
            b.StartVector(1, len(d), 16)
            for byte in reversed(d):
                b.PrependUint8(byte)
            v = b.EndVector()
        b.StartObject(1)
        if d:
            b.PrependUOffsetTRelativeSlot(0, v, 0)
        bufs.append(b.EndObject())
    tens = []
    k = 1
    for t in tensors:
        name, ttype, shape, data = t[:4]
        extra = t[4] if len(t) > 4 else {}
        nm = b.CreateString(name)
        sh = ivec(b, shape)
        sig = ivec(b, extra["sig"]) if "sig" in extra else None
        q = None
        if "quant" in extra:
            scales, zps = extra["quant"]
            b.StartVector(4, len(scales), 4)
            for v in reversed(scales):
                b.PrependFloat32(v)
            sv = b.EndVector()
            b.StartVector(8, len(zps), 8)
            for v in reversed(zps):
                b.PrependInt64(v)
            zv = b.EndVector()
            b.StartObject(7)
            b.PrependUOffsetTRelativeSlot(2, sv, 0)
            b.PrependUOffsetTRelativeSlot(3, zv, 0)
            q = b.EndObject()
        b.StartObject(8)
        b.PrependUOffsetTRelativeSlot(0, sh, 0)
        b.PrependInt8Slot(1, ttype, -1)
        if data is not None:
            b.PrependUint32Slot(2, k, 0)
            k += 1
        b.PrependUOffsetTRelativeSlot(3, nm, 0)
        if q is not None:
            b.PrependUOffsetTRelativeSlot(4, q, 0)
        if sig is not None:
            b.PrependUOffsetTRelativeSlot(7, sig, 0)
        tens.append(b.EndObject())
    opl = []
    for ci, ins, outs, otype, fields in ops:
        vi, vo = ivec(b, ins), ivec(b, outs)
        ot = opts_table(b, fields) if otype else None
        b.StartObject(5)
        b.PrependUint32Slot(0, ci, 99)
        b.PrependUOffsetTRelativeSlot(1, vi, 0)
        b.PrependUOffsetTRelativeSlot(2, vo, 0)
        if otype:
            b.PrependUint8Slot(3, otype, 0)
            b.PrependUOffsetTRelativeSlot(4, ot, 0)
        opl.append(b.EndObject())
    vt, vop = offvec(b, tens), offvec(b, opl)
    vin, vout = ivec(b, inputs), ivec(b, outputs)
    b.StartObject(5)
    b.PrependUOffsetTRelativeSlot(0, vt, 0)
    b.PrependUOffsetTRelativeSlot(1, vin, 0)
    b.PrependUOffsetTRelativeSlot(2, vout, 0)
    b.PrependUOffsetTRelativeSlot(3, vop, 0)
    sg = b.EndObject()
    cl = []
    for code, custom in codes:
        cs = b.CreateString(custom) if custom else None
        b.StartObject(4)
        b.PrependInt8Slot(0, min(code, 127), -1)
        if cs:
            b.PrependUOffsetTRelativeSlot(1, cs, 0)
        b.PrependInt32Slot(2, 1, 0)
        b.PrependInt32Slot(3, code, -1)
        cl.append(b.EndObject())
    vc, vs, vb = offvec(b, cl), offvec(b, [sg]), offvec(b, bufs)
    b.StartObject(8)
    b.PrependUint32Slot(0, 3, 0)
    b.PrependUOffsetTRelativeSlot(1, vc, 0)
    b.PrependUOffsetTRelativeSlot(2, vs, 0)
    b.PrependUOffsetTRelativeSlot(4, vb, 0)
    root = b.EndObject()
    b.Finish(root, file_identifier=b"TFL3")
    open(path, "wb").write(b.Output())


def same_pad(n, k, s, d=1):
    """TensorFlow's SAME padding: (out, pad_before)."""
    ke = (k - 1) * d + 1
    out = -(-n // s)
    tot = max((out - 1) * s + ke - n, 0)
    return out, tot // 2


def conv_ref(x, w_hwio, stride, pad, dil=(1, 1)):
    import numpy as np
    n, h, wd, c = x.shape
    kh, kw, _, o = w_hwio.shape
    if pad == "SAME":
        oh, ph = same_pad(h, kh, stride[0], dil[0])
        ow, pw = same_pad(wd, kw, stride[1], dil[1])
    else:
        oh = (h - (kh - 1) * dil[0] - 1) // stride[0] + 1
        ow = (wd - (kw - 1) * dil[1] - 1) // stride[1] + 1
        ph = pw = 0
    y = np.zeros((n, oh, ow, o), np.float64)
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for bb in range(kw):
                    ii = i * stride[0] + a * dil[0] - ph
                    jj = j * stride[1] + bb * dil[1] - pw
                    if 0 <= ii < h and 0 <= jj < wd:
                        y[:, i, j, :] += x[:, ii, jj, :].astype(
                            np.float64) @ w_hwio[a, bb].astype(np.float64)
    return y


def pool_ref(x, k, s, pad, kind):
    import numpy as np
    n, h, w, c = x.shape
    if pad == "SAME":
        oh, ph = same_pad(h, k[0], s[0])
        ow, pw = same_pad(w, k[1], s[1])
    else:
        oh, ow, ph, pw = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1, 0, 0
    y = np.zeros((n, oh, ow, c), np.float64)
    for i in range(oh):
        for j in range(ow):
            i0, j0 = i * s[0] - ph, j * s[1] - pw
            win = x[:, max(i0, 0):min(i0 + k[0], h),
                    max(j0, 0):min(j0 + k[1], w), :].astype(np.float64)
            y[:, i, j, :] = win.max(axis=(1, 2)) if kind == "max" \
                else win.mean(axis=(1, 2))
    return y


def ops(outdir):
    import numpy as np
    rng = np.random.default_rng(7)

    def f32(a):
        return np.asarray(a, np.float32)

    def save(name, x, y, tensors, oplist, codes, inputs=(0,), outputs=None):
        write_model("%s/%s.tflite" % (outdir, name), tensors, oplist,
                    list(inputs), outputs, codes)
        np.save("%s/%s.in.npy" % (outdir, name), f32(x))
        np.save("%s/%s.out.npy" % (outdir, name), f32(y))

    # CONV_2D: OHWI filter, stride h 2 / w 1, SAME, bias, RELU6
    x = f32(rng.uniform(-1, 1, (1, 5, 5, 2)))
    w = f32(rng.uniform(-1, 1, (3, 3, 3, 2)))          # O H W I
    bias = f32([0.5, -0.25, 2.0])
    y = conv_ref(x, w.transpose(1, 2, 3, 0), (2, 1), "SAME") + bias
    y = np.clip(y, 0, 6)
    save("conv", x, y, [("x", 0, [1, 5, 5, 2], None),
                        ("w", 0, [3, 3, 3, 2], w.tobytes()),
                        ("b", 0, [3], bias.tobytes()),
                        ("y", 0, list(y.shape), None)],
         [(0, [0, 1, 2], [3], 1, [(0, "b", 0), (1, "i", 1), (2, "i", 2),
                                  (3, "b", 3)])], [(3, None)], outputs=[3])
    # CONV_2D VALID with dilation 2, no bias (input -1)
    x = f32(rng.uniform(-1, 1, (2, 6, 6, 1)))
    w = f32(rng.uniform(-1, 1, (2, 2, 2, 1)))
    y = conv_ref(x, w.transpose(1, 2, 3, 0), (1, 1), "VALID", (2, 2))
    save("conv_dilated", x, y, [("x", 0, [2, 6, 6, 1], None),
                                ("w", 0, [2, 2, 2, 1], w.tobytes()),
                                ("y", 0, list(y.shape), None)],
         [(0, [0, 1, -1], [2], 1, [(0, "b", 1), (1, "i", 1), (2, "i", 1),
                                   (4, "i", 2), (5, "i", 2)])],
         [(3, None)], outputs=[2])
    # DEPTHWISE_CONV_2D: [1, H, W, I*M], M = 2, VALID, bias, RELU
    x = f32(rng.uniform(-1, 1, (1, 4, 4, 2)))
    w = f32(rng.uniform(-1, 1, (1, 3, 3, 4)))
    bias = f32([0.1, -0.2, 0.3, -0.4])
    y = np.zeros((1, 2, 2, 4))
    for c in range(2):
        for mm in range(2):
            y[..., c * 2 + mm] = conv_ref(
                x[..., c:c + 1], w[0, :, :, c * 2 + mm][:, :, None, None],
                (1, 1), "VALID")[..., 0]
    y = np.maximum(y + bias, 0)
    save("depthwise", x, y, [("x", 0, [1, 4, 4, 2], None),
                             ("w", 0, [1, 3, 3, 4], w.tobytes()),
                             ("b", 0, [4], bias.tobytes()),
                             ("y", 0, [1, 2, 2, 4], None)],
         [(0, [0, 1, 2], [3], 2, [(0, "b", 1), (1, "i", 1), (2, "i", 1),
                                  (3, "i", 2), (4, "b", 1)])],
         [(4, None)], outputs=[3])
    # MAX_POOL_2D 2x2/2 VALID then AVERAGE_POOL_2D 2x2/1 SAME
    x = f32(rng.uniform(-1, 1, (1, 4, 4, 2)))
    t1 = pool_ref(x, (2, 2), (2, 2), "VALID", "max")
    y = pool_ref(f32(t1), (2, 2), (1, 1), "SAME", "avg")
    save("pool", x, y, [("x", 0, [1, 4, 4, 2], None),
                        ("t", 0, [1, 2, 2, 2], None),
                        ("y", 0, [1, 2, 2, 2], None)],
         [(0, [0], [1], 5, [(0, "b", 1), (1, "i", 2), (2, "i", 2),
                            (3, "i", 2), (4, "i", 2)]),
          (1, [1], [2], 5, [(0, "b", 0), (1, "i", 1), (2, "i", 1),
                            (3, "i", 2), (4, "i", 2)])],
         [(17, None), (1, None)], outputs=[2])
    # FULLY_CONNECTED of a rank-3 input (flattened to [-1, 6]), TANH,
    # then SOFTMAX with beta 0.5
    x = f32(rng.uniform(-1, 1, (2, 3, 2)))
    w = f32(rng.uniform(-1, 1, (4, 6)))
    bias = f32([0.1, 0.2, 0.3, 0.4])
    h = np.tanh(x.reshape(-1, 6).astype(np.float64) @ w.T + bias)
    e = np.exp(0.5 * h - (0.5 * h).max(axis=1, keepdims=True))
    y = e / e.sum(axis=1, keepdims=True)
    save("fc_softmax", x, y, [("x", 0, [2, 3, 2], None),
                              ("w", 0, [4, 6], w.tobytes()),
                              ("b", 0, [4], bias.tobytes()),
                              ("h", 0, [2, 4], None),
                              ("y", 0, [2, 4], None)],
         [(0, [0, 1, 2], [3], 8, [(0, "b", 4)]),
          (1, [3], [4], 9, [(0, "f", 0.5)])],
         [(9, None), (25, None)], outputs=[4])
    # RESHAPE (shape tensor) -> CONCATENATION axis 0 with a constant ->
    # MEAN over axis 1 -> PAD [[1, 2]] -> LOGISTIC
    x = f32(rng.uniform(-1, 1, (1, 2, 3)))
    c = f32(rng.uniform(-1, 1, (2, 3)))
    m = np.concatenate([x.reshape(2, 3), c], 0).astype(np.float64).mean(1)
    y = 1 / (1 + np.exp(-np.pad(m, (1, 2))))
    save("shapes", x, y, [("x", 0, [1, 2, 3], None),
                          ("s", 2, [2], np.int32([2, 3]).tobytes()),
                          ("r", 0, [2, 3], None),
                          ("c", 0, [2, 3], c.tobytes()),
                          ("cat", 0, [4, 3], None),
                          ("axes", 2, [1], np.int32([1]).tobytes()),
                          ("mean", 0, [4], None),
                          ("pads", 2, [1, 2], np.int32([1, 2]).tobytes()),
                          ("p", 0, [7], None),
                          ("y", 0, [7], None)],
         [(0, [0, 1], [2], 0, []),
          (1, [2, 3], [4], 10, [(0, "i", 0)]),
          (2, [4, 5], [6], 27, [(0, "b", 0)]),
          (3, [6, 7], [8], 0, []),
          (4, [8], [9], 0, [])],
         [(22, None), (2, None), (40, None), (34, None), (14, None)],
         outputs=[9])
    # MUL by [3] (broadcast), SUB a scalar, DIV by [2, 1] with
    # RELU_N1_TO_1, ADD with RELU
    x = f32(rng.uniform(-2, 2, (2, 3)))
    m3 = f32([0.5, -1.5, 2.0])
    sc = f32(0.25)
    d21 = f32([[2.0], [-0.5]])
    y = np.clip((x * m3 - sc) / d21, -1, 1)
    y = np.maximum(y + y, 0)
    save("elementwise", x, y, [("x", 0, [2, 3], None),
                               ("m", 0, [3], m3.tobytes()),
                               ("t1", 0, [2, 3], None),
                               ("s", 0, [], sc.tobytes()),
                               ("t2", 0, [2, 3], None),
                               ("d", 0, [2, 1], d21.tobytes()),
                               ("t3", 0, [2, 3], None),
                               ("y", 0, [2, 3], None)],
         [(0, [0, 1], [2], 21, [(0, "b", 0)]),
          (1, [2, 3], [4], 28, [(0, "b", 0)]),
          (2, [4, 5], [6], 29, [(0, "b", 2)]),
          (3, [6, 6], [7], 11, [(0, "b", 1)])],
         [(18, None), (41, None), (42, None), (0, None)], outputs=[7])
    # float16 weights through DEQUANTIZE into FULLY_CONNECTED
    x = f32(rng.uniform(-1, 1, (3, 4)))
    w16 = rng.uniform(-1, 1, (2, 4)).astype(np.float16)
    y = x.astype(np.float64) @ w16.astype(np.float64).T
    save("fp16", x, y, [("x", 0, [3, 4], None),
                        ("w16", 1, [2, 4], w16.tobytes()),
                        ("w", 0, [2, 4], None),
                        ("y", 0, [3, 2], None)],
         [(0, [1], [2], 0, []), (1, [0, 2, -1], [3], 8, [(0, "b", 0)])],
         [(6, None), (9, None)], outputs=[3])
    # a custom op: refused by name
    x = f32([1.0])
    save("custom", x, x, [("x", 0, [1], None), ("y", 0, [1], None)],
         [(0, [0], [1], 0, [])], [(32, "MyCustomOp")], outputs=[1])
    return 0


def hostile(outdir):
    """The crafted models of the "hostile model files" issue, each as
    DIR/NAME.tflite (tests/fuzz/seeds/ keeps copies):
      input-on-constant: a FLOAT32 input [4] whose buffer holds 16 bytes,
          one QUANTIZE: the int8 interpreter fed the model's own bytes
          (1M floats from a .npy were written over its heap)
      batched-constant: an int8 ADD whose 4-byte constant operand [1, 4]
          has shape_signature [-1, 4]: the constant took the fed batch,
          and ADD read batch x 4 bytes of it
      input-on-constant-float: the same input before a float RELU (the
          graph path fed a placeholder and ignored the bytes)
      unsized-constant: an int8 ADD of x [1, 64] and a STRING constant
          [1, 64] of 4 bytes, which the loader cannot size: ADD read 64"""
    import numpy as np
    q = {"quant": ([0.5], [0])}
    write_model("%s/input-on-constant.tflite" % outdir,
                [("x", 0, [4], np.zeros(4, np.float32).tobytes()),
                 ("y", 9, [4], None, q)],
                [(0, [0], [1], 0, [])], [0], [1], [(114, None)])
    qs = {"quant": ([0.5], [0]), "sig": [-1, 4]}
    write_model("%s/batched-constant.tflite" % outdir,
                [("x", 9, [1, 4], None, qs),
                 ("c", 9, [1, 4], bytes([2, 4, 6, 8]), qs),
                 ("y", 9, [1, 4], None, qs)],
                [(0, [0, 1], [2], 0, [])], [0], [2], [(0, None)])
    write_model("%s/input-on-constant-float.tflite" % outdir,
                [("x", 0, [4], np.zeros(4, np.float32).tobytes()),
                 ("y", 0, [4], None)],
                [(0, [0], [1], 0, [])], [0], [1], [(19, None)])
    write_model("%s/unsized-constant.tflite" % outdir,
                [("x", 9, [1, 64], None, q),
                 ("c", 5, [1, 64], bytes(4), q),
                 ("y", 9, [1, 64], None, q)],
                [(0, [0, 1], [2], 0, [])], [0], [2], [(0, None)])
    return 0


def uint8(outdir):
    """uint8 models: two the int8 interpreter refuses, as TFLite's
    kernels do, and one it rescales:
      u8-per-channel: a uint8 CONV_2D whose weights have two scales
      u8-mixed: an ADD of a UINT8 and an INT8 tensor
      u8-concat-scales: a uint8 CONCATENATION of an input whose scale
          differs from the output's"""
    import numpy as np
    u = {"quant": ([0.5], [128])}
    write_model("%s/u8-per-channel.tflite" % outdir,
                [("x", 3, [1, 2, 2, 1], None, u),
                 ("w", 3, [2, 1, 1, 1], bytes([130, 126]),
                  {"quant": ([0.5, 0.25], [128, 128])}),
                 ("b", 2, [2], np.zeros(2, np.int32).tobytes(),
                  {"quant": ([0.25, 0.125], [0, 0])}),
                 ("y", 3, [1, 2, 2, 2], None, u)],
                [(0, [0, 1, 2], [3], 1, [])], [0], [3], [(3, None)])
    write_model("%s/u8-mixed.tflite" % outdir,
                [("x", 3, [1, 4], None, u),
                 ("c", 9, [1, 4], bytes([1, 2, 3, 4]), {"quant": ([0.5], [0])}),
                 ("y", 3, [1, 4], None, u)],
                [(0, [0, 1], [2], 0, [])], [0], [2], [(0, None)])
    write_model("%s/u8-concat-scales.tflite" % outdir,
                [("x", 3, [1, 2], None, u),
                 ("c", 3, [1, 2], bytes([1, 2]), {"quant": ([0.25], [128])}),
                 ("y", 3, [1, 4], None, u)],
                [(0, [0, 1], [2], 10, [(0, "i", 1)])], [0], [2], [(2, None)])
    return 0


def strings(outdir):
    """STRING constants (count, offsets, bytes; int32 little-endian)
    feeding a GATHER by an int32 input x: str-good holds ["ab", "",
    "xyz"]; each other file breaks one rule of the string buffer:
    str-backwards (offset 2 below offset 1), str-past-end (the last
    offset beyond the buffer), str-count (2 strings for a [3] tensor),
    str-header (a [3000] tensor whose 3000 offsets would need more
    than the buffer)."""
    import struct as st

    def sbuf(strs, count=None, offs=None):
        n = len(strs)
        head = 4 * (n + 2)
        o = [head]
        for x in strs:
            o.append(o[-1] + len(x))
        if offs:
            for k, v in offs.items():
                o[k] = v
        return (st.pack("<i", n if count is None else count) +
                st.pack("<%di" % (n + 1), *o) + b"".join(strs))
    good = [b"ab", b"", b"xyz"]
    for name, data in (("str-good", sbuf(good)),
                       ("str-backwards", sbuf(good, offs={2: 17})),
                       ("str-past-end", sbuf(good, offs={3: 99})),
                       ("str-count", sbuf(good[:2] + [b"xyz"], count=2)),
                       ("str-header", sbuf(good, count=3000))):
        write_model("%s/%s.tflite" % (outdir, name),
                    [("x", 2, [2], None),
                     ("table", 5, [3000 if name == "str-header" else 3],
                      data),
                     ("y", 5, [2], None)],
                    [(0, [1, 0], [2], 0, [])], [0], [2], [(36, None)])
    return 0


def check(got, want):
    import numpy as np
    g, w = np.load(got), np.load(want)
    if g.shape != w.shape:
        print("shape %r, want %r" % (g.shape, w.shape))
        return 1
    if not np.allclose(g, w, rtol=1e-5, atol=1e-6):
        print("max abs error %g" % np.abs(g - w).max())
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "compare" and len(sys.argv) == 4:
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    if cmd == "build" and len(sys.argv) == 3:
        sys.exit(build(sys.argv[2]))
    if cmd == "read" and len(sys.argv) == 3:
        sys.exit(read(sys.argv[2]))
    if cmd == "ops" and len(sys.argv) == 3:
        sys.exit(ops(sys.argv[2]))
    if cmd == "strings" and len(sys.argv) == 3:
        sys.exit(strings(sys.argv[2]))
    if cmd == "uint8" and len(sys.argv) == 3:
        sys.exit(uint8(sys.argv[2]))
    if cmd == "hostile" and len(sys.argv) == 3:
        sys.exit(hostile(sys.argv[2]))
    if cmd == "check" and len(sys.argv) == 4:
        sys.exit(check(sys.argv[2], sys.argv[3]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
