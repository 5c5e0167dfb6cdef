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


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "compare" and len(sys.argv) == 4:
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    if cmd == "build" and len(sys.argv) == 3:
        sys.exit(build(sys.argv[2]))
    if cmd == "read" and len(sys.argv) == 3:
        sys.exit(read(sys.argv[2]))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
