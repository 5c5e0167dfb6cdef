#!/usr/bin/python3
"""int8_ref.py DIR - numpy oracle for t-int8: TFLite's integer kernels.

An independent model of TensorFlow Lite's int8 arithmetic, written from
the published algorithms (quantization_util.cc QuantizeMultiplier,
gemmlowp's SaturatingRoundingDoublingHighMul / RoundingDivideByPOT,
common.h MultiplyByQuantizedMultiplier, the kernels' Prepare functions
and reference_integer_ops loops, the lookup-table softmax of
optimized_ops), vectorized with numpy int64 so that no C code is
shared with the implementation under test.

DIR holds case files NAME.txt: one "key v1 v2 ..." line each (the op
is the "op" key), inputs as raw little-endian files NAME.x (int8 or
uint8 or float32), NAME.x2, NAME.w (int8), NAME.b (int32). Writes
NAME.out: the output bytes. Geometry (SAME/VALID padding, output sizes)
is computed here from the attrs, not taken from the test.
"""
import math
import os
import sys

import numpy as np

I32_MIN, I32_MAX = -2**31, 2**31 - 1


def round_half_away(v):
    """C round()/roundf() on a value given as float64 (exact for f32)."""
    v = np.asarray(v, dtype=np.float64)
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def quantize_multiplier(m):
    """QuantizeMultiplier: (q_fixed, shift) with m ~ q_fixed * 2^(shift-31)."""
    if m == 0:
        return 0, 0
    q, e = math.frexp(m)
    qf = q * 2.0**31
    qf = int(math.copysign(math.floor(abs(qf) + 0.5), qf))
    if abs(qf) == 2**31:
        qf //= 2
        e += 1
    if e < -31:
        return 0, 0
    return qf, e


def wrap32(x):
    x = np.asarray(x, dtype=np.int64)
    return ((x + 2**31) & 0xFFFFFFFF) - 2**31


def srdhm(a, b):
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    ab = a * b
    s = ab + np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    # C's integer division truncates toward zero
    r = np.where(s >= 0, s // 2**31, -((-s) // 2**31))
    return np.where((a == b) & (a == I32_MIN), I32_MAX, r)


def rdbpot(x, e):
    x = np.asarray(x, dtype=np.int64)
    e = np.asarray(e, dtype=np.int64)
    mask = np.left_shift(np.int64(1), e) - 1
    rem = x & mask
    thr = (mask >> 1) + (x < 0)
    return (x >> e) + (rem > thr)


def mbqm(x, m, shift):
    shift = np.asarray(shift, dtype=np.int64)
    ls = np.maximum(shift, 0)
    rs = np.maximum(-shift, 0)
    xs = wrap32(np.asarray(x, dtype=np.int64) << ls)
    return rdbpot(srdhm(xs, m), rs)


def f32(v):
    return np.float32(v)


def act_range(act, scale, zp, qmin=-128, qmax=127):
    def q(f):
        return zp + int(round_half_away(np.float64(f32(f) / f32(scale))))
    if act == 0:
        return qmin, qmax
    if act == 1:
        return max(qmin, q(0.0)), qmax
    if act == 3:
        return max(qmin, q(0.0)), min(qmax, q(6.0))
    if act == 2:
        return max(qmin, q(-1.0)), min(qmax, q(1.0))
    raise ValueError("activation %d" % act)


def conv_mults(in_scale, w_scales, out_scale, channels):
    ws = w_scales if len(w_scales) > 1 else w_scales * channels
    mm = [quantize_multiplier(float(f32(in_scale)) * float(f32(s)) /
                              float(f32(out_scale))) for s in ws]
    return (np.array([m for m, _ in mm], dtype=np.int64),
            np.array([s for _, s in mm], dtype=np.int64))


def requant(acc, mult, shift, out_zp, lo, hi):
    v = mbqm(wrap32(acc), mult, shift) + out_zp
    return np.clip(v, lo, hi)


def out_size(padding, size, k, s, d):
    ek = (k - 1) * d + 1
    if padding == "SAME":
        o = (size + s - 1) // s
    else:
        o = (size + s - ek) // s
    total = max((o - 1) * s + ek - size, 0)
    return o, total // 2


def load(path, dtype, shape):
    return np.fromfile(path, dtype=dtype).reshape(shape).astype(np.int64)


# ops -----------------------------------------------------------------


def op_fc(c, base):
    batch, n_in, n_out = c.ints("dims")
    x = load(base + ".x", "<i1", (batch, n_in))
    w = load(base + ".w", "<i1", (n_out, n_in))
    in_scale, in_zp = c.f("in_scale"), c.i("in_zp")
    w_zp = c.i("w_zp")
    out_scale, out_zp = c.f("out_scale"), c.i("out_zp")
    mult, shift = conv_mults(in_scale, c.floats("w_scales"), out_scale,
                             n_out)
    acc = (x - in_zp) @ (w - w_zp).T
    if c.i("bias"):
        acc = acc + load(base + ".b", "<i4", (n_out,))
    lo, hi = act_range(c.i("act"), out_scale, out_zp)
    return requant(acc, mult, shift, out_zp, lo, hi).astype("<i1")


def conv_common(c, base, depthwise):
    n, h, w, ch = c.ints("input")
    kh, kw, kc, o = c.ints("filter")  # depthwise: kc = mult
    sh, sw = c.ints("strides")
    dh, dw = c.ints("dilations")
    pad = c.s("padding")
    oh, pt = out_size(pad, h, kh, sh, dh)
    ow, pl = out_size(pad, w, kw, sw, dw)
    in_scale, in_zp = c.f("in_scale"), c.i("in_zp")
    out_scale, out_zp = c.f("out_scale"), c.i("out_zp")
    x = load(base + ".x", "<i1", (n, h, w, ch)) - in_zp
    # a padded tap is the real 0: zero after the offset
    big = np.zeros((n, h + (oh + kh) * sh * dh + 2 * pt,
                    w + (ow + kw) * sw * dw + 2 * pl, ch), dtype=np.int64)
    big[:, pt:pt + h, pl:pl + w, :] = x
    if depthwise:
        mult = kc
        o = ch * mult
        f = load(base + ".w", "<i1", (1, kh, kw, o))[0]
    else:
        f = load(base + ".w", "<i1", (o, kh, kw, kc))
    acc = np.zeros((n, oh, ow, o), dtype=np.int64)
    for ky in range(kh):
        for kx in range(kw):
            y0, x0 = ky * dh, kx * dw
            xs = big[:, y0:y0 + (oh - 1) * sh + 1:sh,
                     x0:x0 + (ow - 1) * sw + 1:sw, :]
            if depthwise:
                acc += xs[..., np.arange(o) // kc] * f[ky, kx, :]
            else:
                groups = ch // kc
                per = o // groups
                for g in range(groups):
                    acc[..., g * per:(g + 1) * per] += np.einsum(
                        "bhwc,oc->bhwo", xs[..., g * kc:(g + 1) * kc],
                        f[g * per:(g + 1) * per, ky, kx, :])
    if c.i("bias"):
        acc = acc + load(base + ".b", "<i4", (o,))
    mult, shift = conv_mults(in_scale, c.floats("w_scales"), out_scale, o)
    lo, hi = act_range(c.i("act"), out_scale, out_zp)
    return requant(acc, mult, shift, out_zp, lo, hi).astype("<i1")


def op_conv(c, base):
    return conv_common(c, base, False)


def op_dwconv(c, base):
    return conv_common(c, base, True)


def pool_common(c, base, avg):
    n, h, w, ch = c.ints("input")
    kh, kw = c.ints("ksize")
    sh, sw = c.ints("strides")
    oh, pt = out_size(c.s("padding"), h, kh, sh, 1)
    ow, pl = out_size(c.s("padding"), w, kw, sw, 1)
    x = load(base + ".x", "<i1", (n, h, w, ch))
    lo, hi = act_range(c.i("act"), c.f("scale"), c.i("zp"))
    out = np.zeros((n, oh, ow, ch), dtype=np.int64)
    for oy in range(oh):
        for ox in range(ow):
            ys = slice(max(oy * sh - pt, 0), min(oy * sh - pt + kh, h))
            xs = slice(max(ox * sw - pl, 0), min(ox * sw - pl + kw, w))
            win = x[:, ys, xs, :]
            if avg:
                cnt = win.shape[1] * win.shape[2]
                s = win.sum(axis=(1, 2))
                pos = (s + cnt // 2) // cnt
                neg = -((-(s - cnt // 2)) // cnt)
                out[:, oy, ox, :] = np.where(s > 0, pos, neg)
            else:
                out[:, oy, ox, :] = win.max(axis=(1, 2))
    return np.clip(out, lo, hi).astype("<i1")


def op_maxpool(c, base):
    return pool_common(c, base, False)


def op_avgpool(c, base):
    return pool_common(c, base, True)


def op_bin(c, base):
    s1, s2 = c.ints("shape1"), c.ints("shape2")
    u8 = c.i("uint8")
    dt = "<u1" if u8 else "<i1"
    x1 = load(base + ".x", dt, s1)
    x2 = load(base + ".x2", dt, s2)
    sc1, sc2, sco = c.f("scale1"), c.f("scale2"), c.f("out_scale")
    z1, z2, zo = c.i("zp1"), c.i("zp2"), c.i("out_zp")
    lo, hi = act_range(c.i("act"), sco, zo, *((0, 255) if u8 else
                                              (-128, 127)))
    kind = c.s("kind")
    v1, v2 = x1 - z1, x2 - z2
    if kind == "mul":
        m = float(f32(f32(sc1) * f32(sc2)) / f32(sco))
        qm, sh = quantize_multiplier(m)
        r = zo + mbqm(v1 * v2, qm, sh)
    else:
        twice = 2.0 * max(float(f32(sc1)), float(f32(sc2)))
        m1 = quantize_multiplier(float(f32(sc1)) / twice)
        m2 = quantize_multiplier(float(f32(sc2)) / twice)
        mo = quantize_multiplier(twice / (2.0**20 * float(f32(sco))))
        if kind == "sub":
            m2 = (-m2[0], m2[1])
        a1 = mbqm(v1 * 2**20, *m1)
        a2 = mbqm(v2 * 2**20, *m2)
        r = mbqm(a1 + a2, *mo) + zo
    return np.clip(r, lo, hi).astype(dt)


def exp_f32(v):
    # expf, correctly rounded (glibc's expf is, to within its 0.502 ulp)
    return f32(math.exp(float(v)))


def op_softmax(c, base):
    rows, depth = c.ints("dims")
    u8 = c.i("uint8")
    x = load(base + ".x", "<u1" if u8 else "<i1", (rows, depth))
    beta = f32(c.f("beta"))
    in_scale, out_scale = f32(c.f("in_scale")), f32(c.f("out_scale"))
    zp = c.i("out_zp")
    lo, hi = (0, 255) if u8 else (-128, 127)
    scale = f32(-in_scale * beta)
    table = np.zeros(256, dtype=np.float32)
    for v in range(256):
        table[255 - v] = exp_f32(f32(scale * f32(v)))
    out = np.zeros((rows, depth), dtype=np.int64)
    for i in range(rows):
        mx = int(x[i].max())
        vals = [table[255 - mx + int(v)] for v in x[i]]
        s = f32(0)
        for v in vals:
            s = f32(s + v)
        inv = f32(f32(1) / f32(s * out_scale))
        for j, v in enumerate(vals):
            p = f32(v * inv)
            if u8:
                q = int(math.floor(float(f32(p + f32(0.5))))) + zp
            else:
                q = int(round_half_away(float(p))) + zp
            out[i, j] = min(max(q, lo), hi)
    return out.astype("<u1" if u8 else "<i1")


def op_lut(c, base):
    """RELU/RELU_N1_TO_1/RELU6 (QuantizedReluX) and LOGISTIC/TANH
    (LUTPopulate) over all 256 input bytes."""
    kind = c.s("kind")
    in_s, in_z = f32(c.f("in_scale")), c.i("in_zp")
    out_s, out_z = f32(c.f("out_scale")), c.i("out_zp")
    x = np.fromfile(base + ".x", dtype="<i1").astype(np.int64)
    out = np.zeros(len(x), dtype=np.int64)
    if kind in ("relu", "relu1", "relu6"):
        m, sh = quantize_multiplier(float(in_s) / float(out_s))
        lo_f, hi_f = {"relu": (0.0, None), "relu1": (-1.0, 1.0),
                      "relu6": (0.0, 6.0)}[kind]
        lo = max(-128, out_z + int(round_half_away(
            float(f32(f32(lo_f) / out_s)))))
        hi = 127 if hi_f is None else min(127, out_z + int(
            round_half_away(float(f32(f32(hi_f) / out_s)))))
        return np.clip(out_z + mbqm(x - in_z, m, sh), lo, hi).astype("<i1")
    inv = f32(f32(1) / out_s)
    for i, v in enumerate(x):
        d = f32(in_s * f32(int(v) - in_z))
        if kind == "logistic":
            e = f32(math.exp(-float(d)))
            t = f32(f32(1) / f32(f32(1) + e))
        else:
            t = f32(math.tanh(float(d)))
        r = float(round_half_away(float(f32(t * inv)))) + out_z
        out[i] = min(max(int(r), -128), 127)
    return out.astype("<i1")


def op_quantize(c, base):
    (n,) = c.ints("dims")
    x = np.fromfile(base + ".x", dtype="<f4").reshape(n)
    scale, zp, u8 = f32(c.f("scale")), c.i("zp"), c.i("uint8")
    lo, hi = (0, 255) if u8 else (-128, 127)
    with np.errstate(invalid="ignore", over="ignore"):
        q = (x / scale).astype(np.float32)
    out = np.zeros(n, dtype=np.int64)
    for i, v in enumerate(q):
        if math.isnan(v):
            r = zp
        elif math.isinf(v):
            r = hi if v > 0 else lo
        else:
            r = int(round_half_away(float(v))) + zp
        out[i] = min(max(r, lo), hi)
    return out.astype("<u1" if u8 else "<i1")


def op_dequantize(c, base):
    shape = c.ints("shape")
    axis = c.i("axis")
    scales = [f32(s) for s in c.floats("scales")]
    zps = c.ints("zps")
    u8 = c.i("uint8")
    x = load(base + ".x", "<u1" if u8 else "<i1", shape)
    if len(scales) > 1:
        bshape = [1] * len(shape)
        bshape[axis] = len(scales)
        sc = np.array(scales, dtype=np.float64).reshape(bshape)
        z = np.array(zps, dtype=np.int64).reshape(bshape)
    else:
        sc, z = np.float64(scales[0]), zps[0]
    return (sc * (x - z)).astype("<f4")


def op_requantize(c, base):
    (n,) = c.ints("dims")
    iu8, ou8 = c.i("in_uint8"), c.i("out_uint8")
    x = load(base + ".x", "<u1" if iu8 else "<i1", (n,))
    m, sh = quantize_multiplier(float(f32(c.f("in_scale"))) /
                                float(f32(c.f("out_scale"))))
    lo, hi = (0, 255) if ou8 else (-128, 127)
    v = mbqm(x - c.i("in_zp"), m, sh) + c.i("out_zp")
    return np.clip(v, lo, hi).astype("<u1" if ou8 else "<i1")


def op_mbqm(c, base):
    """Scalar arithmetic vectors: x, multiplier, shift triples."""
    v = np.fromfile(base + ".x", dtype="<i4").astype(np.int64).reshape(-1, 3)
    return mbqm(v[:, 0], v[:, 1], v[:, 2]).astype("<i4")


def op_qmult(c, base):
    """QuantizeMultiplier of float64 values."""
    ms = np.fromfile(base + ".x", dtype="<f8")
    out = []
    for m in ms:
        out.extend(quantize_multiplier(float(m)))
    return np.array(out, dtype="<i4")


class Case:
    def __init__(self, path):
        self.kv = {}
        with open(path) as fh:
            for line in fh:
                parts = line.split()
                if parts:
                    self.kv[parts[0]] = parts[1:]

    def s(self, k):
        return self.kv[k][0]

    def i(self, k):
        return int(self.kv[k][0])

    def f(self, k):
        return float(self.kv[k][0])

    def ints(self, k):
        return [int(v) for v in self.kv[k]]

    def floats(self, k):
        return [float(v) for v in self.kv[k]]


OPS = {
    "fc": op_fc, "conv": op_conv, "dwconv": op_dwconv,
    "maxpool": op_maxpool, "avgpool": op_avgpool, "bin": op_bin,
    "softmax": op_softmax, "quantize": op_quantize,
    "dequantize": op_dequantize, "requantize": op_requantize,
    "mbqm": op_mbqm, "qmult": op_qmult, "lut": op_lut,
}


def main():
    d = sys.argv[1]
    for name in sorted(os.listdir(d)):
        if not name.endswith(".txt"):
            continue
        base = os.path.join(d, name[:-4])
        c = Case(base + ".txt")
        OPS[c.s("op")](c, base).tofile(base + ".out")


if __name__ == "__main__":
    main()
