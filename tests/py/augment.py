#!/usr/bin/python3
"""augment.py - numpy/Pillow oracles for lib/prep/augment.c.

  augment.py transform CASES
      CASES lines: IN.raw DTYPE H W C OH OW INTERP FILL FILL_VALUE
      T0 .. T7 OUT.raw (DTYPE u8 or f32; INTERP nearest|bilinear; FILL
      reflect|wrap|constant|nearest). Writes OUT.raw (float32, OH x OW x
      C): TensorFlow's ImageProjectiveTransformV3 on the image cast to
      float32, computed here with whole-image numpy arrays from the
      formulas of tensorflow/core/kernels/image/image_ops.h (every
      coordinate step in float32 as the kernel does it, the int64
      truncations as numpy casts), not as the kernel's per-pixel loop.
  augment.py ops CASES
      CASES lines, each writing OUT.raw as float32:
        flip IN H W C MODE OUT            MODE 1 horizontal, 2 vertical, 3 both
        rescale IN H W C SCALE OFFSET OUT x * scale + offset in float32
        contrast IN H W C FACTOR LO HI OUT  Keras' RandomContrast formula
        centercrop IN H W C TH TW OUT     Keras' CenterCrop (crop, or
                                          smart_resize via images.py)
        rot90 IN H W C K OUT              numpy.rot90(img, K)
      IN is uint8.
  augment.py bench-data OUT N H W
      N synthetic photo-like uint8 images H x W x 3, concatenated.
  augment.py pillow-rotate IN N H W ANGLES REPEAT
      Rotate each image by its angle (degrees, one per line of ANGLES)
      with Pillow's Image.rotate(resample=BILINEAR), REPEAT passes; print
      the best pass's images/s. Only the rotate calls are timed.

Only Debian's /usr/bin/python3 has PIL and numpy.
"""
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import images  # noqa: E402  (tf.image.resize oracle, synthetic photos)

F32 = np.float32


def load(path, dt, h, w, c):
    return np.fromfile(path, np.uint8 if dt == "u8" else F32).reshape(h, w, c)


# ImageProjectiveTransformV3 ------------------------------------------------

def map_coord(v, n, mode):
    """MapCoordinate of image_ops.h over a float32 array v, axis length n.
    Returns float32; NaN marks points the kernel leaves undefined (our
    library documents those as fill)."""
    v = v.astype(F32)
    out = v.copy()
    bad = np.isnan(v)
    if mode in ("reflect", "wrap"):
        bad |= ((v < 0) | (v > n - 1)) & ~(np.abs(v) < F32(1e18))
    if mode == "constant":
        out[bad] = np.nan
        return out
    if mode == "reflect":
        lo = (v < 0) & ~bad
        hi = (v > n - 1) & ~bad
        if n <= 1:
            out[lo | hi] = 0
        else:
            sz2 = 2 * n
            a = v[lo]
            q = np.trunc(-a / F32(sz2)).astype(np.int64)
            a = (sz2 * q).astype(F32) + a          # kernel: if (c < sz2), always
            a = np.where(a < F32(-n), a + F32(sz2), -a - F32(1)).astype(F32)
            out[lo] = a
            b = v[hi]
            q = np.trunc(b / F32(sz2)).astype(np.int64)
            b = (b - (sz2 * q).astype(F32)).astype(F32)
            b = np.where(b >= F32(n), F32(sz2) - b - F32(1), b).astype(F32)
            out[hi] = b
    elif mode == "wrap":
        lo = (v < 0) & ~bad
        hi = (v > n - 1) & ~bad
        if n <= 1:
            out[lo | hi] = 0
        else:
            sz = n - 1
            a = v[lo]
            q = np.trunc(-a / F32(sz)).astype(np.int64) + 1
            out[lo] = a + (n * q).astype(F32)
            b = v[hi]
            q = np.trunc(b / F32(sz)).astype(np.int64)
            out[hi] = b - (n * q).astype(F32)
    out = np.minimum(np.maximum(out, F32(0)), F32(n - 1)).astype(F32)
    out[bad] = np.nan
    return out


def transform(img, oh, ow, t, interp, mode, fill):
    img = img.astype(F32)
    h, w, c = img.shape
    t = [F32(x) for x in t]
    fill = F32(fill)
    oy, ox = np.mgrid[0:oh, 0:ow]
    ox = ox.astype(F32)
    oy = oy.astype(F32)
    k = t[6] * ox + t[7] * oy + F32(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ix = (t[0] * ox + t[1] * oy + t[2]) / k
        iy = (t[3] * ox + t[4] * oy + t[5]) / k
    x = map_coord(ix, w, mode)
    y = map_coord(iy, h, mode)
    outside = (k == 0) | np.isnan(x) | np.isnan(y)
    with np.errstate(invalid="ignore"):
        outside |= (x < 0) | (x > F32(w - 1)) | (y < 0) | (y > F32(h - 1))
    x = np.where(outside, F32(0), x).astype(F32)
    y = np.where(outside, F32(0), y).astype(F32)
    padded = np.full((h + 2, w + 2, c), fill, F32)   # a ring of fill pixels
    padded[1:-1, 1:-1] = img

    def read(yi, xi):
        yi = np.clip(yi, -1, h)
        xi = np.clip(xi, -1, w)
        return padded[yi + 1, xi + 1]

    if interp == "nearest":
        # std::round: halves away from zero (x, y >= 0 here)
        def rnd(v):
            f = np.floor(v)
            return (f + (v - f >= F32(0.5))).astype(np.int64)
        out = read(rnd(y), rnd(x))
    else:
        yf = np.floor(y)
        xf = np.floor(x)
        yc = yf + F32(1)
        xc = xf + F32(1)
        y0, x0 = yf.astype(np.int64), xf.astype(np.int64)
        y1, x1 = y0 + 1, x0 + 1
        wx0 = (xc - x)[..., None]
        wx1 = (x - xf)[..., None]
        wy0 = (yc - y)[..., None]
        wy1 = (y - yf)[..., None]
        vf = wx0 * read(y0, x0) + wx1 * read(y0, x1)
        vc = wx0 * read(y1, x0) + wx1 * read(y1, x1)
        out = wy0 * vf + wy1 * vc
    out = out.astype(F32)
    out[outside] = fill
    return out


def transform_cases(path):
    for line in open(path):
        f = line.split()
        if not f:
            continue
        src, dt, h, w, c, oh, ow, interp, mode, fill = f[:10]
        t = [float(v) for v in f[10:18]]
        out = f[18]
        h, w, c, oh, ow = map(int, (h, w, c, oh, ow))
        img = load(src, dt, h, w, c)
        transform(img, oh, ow, t, interp, mode, float(fill)).tofile(out)


# Other layers ---------------------------------------------------------------

def keras_crop_box(h, w, th, tw):
    """smart_resize's window (keras/src/utils/image_utils.py)."""
    ch = int(float(w * th) / tw)
    ch = max(min(h, ch), 1)
    cw = int(float(h * tw) / th)
    cw = max(min(w, cw), 1)
    return int(float(h - ch) / 2), int(float(w - cw) / 2), ch, cw


def op_cases(path):
    for line in open(path):
        f = line.split()
        if not f:
            continue
        op, src, h, w, c = f[0], f[1], int(f[2]), int(f[3]), int(f[4])
        img = load(src, "u8", h, w, c)
        out = f[-1]
        if op == "flip":
            mode = int(f[5])
            r = img
            if mode & 1:
                r = r[:, ::-1]
            if mode & 2:
                r = r[::-1]
        elif op == "rescale":
            r = img.astype(F32) * F32(float(f[5])) + F32(float(f[6]))
        elif op == "contrast":
            x = img.astype(F32)
            factor, lo, hi = F32(float(f[5])), float(f[6]), float(f[7])
            mean = img.astype(np.float64).mean(axis=(0, 1)).astype(F32)
            r = np.clip((x - mean) * factor + mean, lo, hi)
        elif op == "centercrop":
            th, tw = int(f[5]), int(f[6])
            if h >= th and w >= tw:
                y, x = int((h - th) / 2), int((w - tw) / 2)
                r = img[y:y + th, x:x + tw]
            else:
                y, x, ch, cw = keras_crop_box(h, w, th, tw)
                r = images.r_bilinear(img[y:y + ch, x:x + cw].astype(F32),
                                      th, tw)
        elif op == "rot90":
            r = np.rot90(img, int(f[5]))
        else:
            raise SystemExit("augment.py: unknown op " + op)
        np.ascontiguousarray(r, dtype=F32).tofile(out)


# Benchmark -------------------------------------------------------------------

def bench_data(out, n, h, w):
    with open(out, "wb") as fo:
        for i in range(n):
            fo.write(np.asarray(images.photo(h, w, i), np.uint8).tobytes())


def pillow_rotate(src, n, h, w, angles, repeat):
    from PIL import Image
    raw = np.fromfile(src, np.uint8).reshape(n, h, w, 3)
    ims = [Image.fromarray(raw[i]) for i in range(n)]
    ang = [float(a) for a in open(angles).read().split()]
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        for i in range(n):
            ims[i].rotate(ang[i], resample=Image.BILINEAR)
        dt = time.perf_counter() - t0
        best = dt if best is None or dt < best else best
    print("%.1f" % (n / best))


def main(argv):
    if len(argv) >= 3 and argv[1] == "transform":
        transform_cases(argv[2])
    elif len(argv) >= 3 and argv[1] == "ops":
        op_cases(argv[2])
    elif len(argv) == 6 and argv[1] == "bench-data":
        bench_data(argv[2], int(argv[3]), int(argv[4]), int(argv[5]))
    elif len(argv) == 8 and argv[1] == "pillow-rotate":
        pillow_rotate(argv[2], int(argv[3]), int(argv[4]), int(argv[5]),
                      argv[6], int(argv[7]))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
