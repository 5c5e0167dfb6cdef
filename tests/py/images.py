#!/usr/bin/python3
"""images.py - test images and independent oracles for lib/prep/image.c
and lib/prep/resize.c.

  images.py gen DIR
      Write test images of every supported variant into DIR, with the
      pixels an independent decoder (Pillow, djpeg, or the numpy array the
      file was made from) says each should decode to, and DIR/manifest.txt:
        FILE CHANNELS DCT SCALE TOL H W C EXPECTED.raw
      CHANNELS/DCT/SCALE are the decode options (DCT: 1 islow, 2 ifast),
      TOL the largest allowed absolute difference of any byte.
  images.py resize CASES
      CASES lines: IN.raw DTYPE H W C OH OW METHOD ANTIALIAS OUT.raw
      (DTYPE u8 or f32). Writes OUT.raw as float32: tf.image.resize
      computed here with numpy from TensorFlow's formulas, written as
      whole-axis weight matrices (not as TF's loops).
  images.py seeds DIR
      A few tiny files of each format: the fuzzer's starting corpus
      (tests/fuzz/seeds/fuzz-image is made by this).
  images.py corpus DIR N
      N JPEGs (quality 90, 320x240 ... 1024x768) in class subdirectories,
      for the benchmark; kept if DIR already holds N.
  images.py pillow-bench DIR SIZE
      Decode + convert('RGB') + resize((SIZE, SIZE), BILINEAR) every file
      under DIR with Pillow in this one process; print images/s.

Only Debian's /usr/bin/python3 has PIL and numpy.
"""
import os
import struct
import subprocess
import sys
import time
import zlib

import numpy as np
from PIL import Image

F32 = np.float32


def synth(h, w, c, seed):
    """A deterministic image with gradients, edges and some noise."""
    rs = np.random.RandomState(seed)
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    planes = []
    for k in range(c):
        f = (np.sin(x / (3.0 + 2 * k) + k) * 60 + np.cos(y / (4.0 + k)) * 50
             + (x * 255.0 / max(w - 1, 1)) * 0.4 + 60)
        cy, cx, r = rs.randint(0, h), rs.randint(0, w), rs.randint(3, 12)
        f[(y - cy) ** 2 + (x - cx) ** 2 < r * r] = rs.randint(0, 256)
        f += rs.normal(0, 6, size=(h, w))
        planes.append(np.clip(f, 0, 255))
    return np.stack(planes, axis=-1).round().astype(np.uint8)


# PNG writer (own, so 16-bit, <8-bit, tRNS and Adam7 can be made) ---------

def png_chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data +
            struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))


def png_rows(a, depth):
    """Serialise rows of a (H, W, S) sample array, filter type 0."""
    h, w, s = a.shape
    out = b""
    for y in range(h):
        row = a[y].reshape(-1)
        if depth == 16:
            raw = row.astype(">u2").tobytes()
        elif depth == 8:
            raw = row.astype(np.uint8).tobytes()
        else:
            bits = "".join(format(int(v), "0%db" % depth) for v in row)
            bits += "0" * (-len(bits) % 8)
            raw = bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))
        out += b"\0" + raw
    return out


def png_write(path, a, color_type, depth, palette=None, trns=None,
              interlace=False):
    h, w = a.shape[:2]
    if a.ndim == 2:
        a = a[:, :, None]
    ihdr = struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0,
                       1 if interlace else 0)
    if interlace:
        data = b""
        for y0, x0, dy, dx in ((0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4),
                               (0, 2, 4, 4), (2, 0, 4, 2), (0, 1, 2, 2),
                               (1, 0, 2, 1)):
            sub = a[y0::dy, x0::dx]
            if sub.size:
                data += png_rows(sub, depth)
    else:
        data = png_rows(a, depth)
    body = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr)
    if palette is not None:
        body += png_chunk(b"PLTE", bytes(palette.astype(np.uint8).reshape(-1)))
    if trns is not None:
        body += png_chunk(b"tRNS", trns)
    body += png_chunk(b"IDAT", zlib.compress(data, 6))
    body += png_chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(body)


# BMP writer ---------------------------------------------------------------

def bmp_write(path, rows_bytes, w, h, bpp, top_down=False, palette=None,
              hsize=40, comp=0, masks=None):
    """rows_bytes: list of packed rows, top row first."""
    row_size = (bpp * w + 31) // 32 * 4
    rows = [r + b"\0" * (row_size - len(r)) for r in rows_bytes]
    if not top_down:
        rows = rows[::-1]
    pix = b"".join(rows)
    if hsize == 12:
        hdr = struct.pack("<IHHHH", 12, w, h, 1, bpp)
        pal = b"" if palette is None else b"".join(
            bytes((b, g, r)) for r, g, b in palette)
    else:
        hdr = struct.pack("<IiiHHIIiiII", hsize, w, -h if top_down else h, 1,
                          bpp, comp, len(pix), 2835, 2835,
                          0 if palette is None else len(palette), 0)
        if hsize > 40:
            m = list(masks or (0, 0, 0, 0)) + [0] * 4
            hdr += struct.pack("<IIII", *m[:4])
            hdr += b"\0" * (hsize - 56)
        pal = b"" if palette is None else b"".join(
            bytes((b, g, r, 0)) for r, g, b in palette)
        if hsize == 40 and masks is not None:
            pal = struct.pack("<III", *masks[:3]) + pal
    off = 14 + len(hdr) + len(pal)
    with open(path, "wb") as f:
        f.write(b"BM" + struct.pack("<IHHI", off + len(pix), 0, 0, off) +
                hdr + pal + pix)


# Conversions TF applies, written independently with numpy ----------------

def tf_gray(rgb):
    """tf.image.rgb_to_grayscale on uint8: float32 steps, truncating cast."""
    s = F32(1.0 / 255.0)
    r, g, b = (rgb[..., k].astype(F32) for k in range(3))
    v = r * s * F32(0.2989) + g * s * F32(0.5870) + b * s * F32(0.1140)
    return (v * F32(255.5)).astype(np.uint8)[..., None]


def libpng_gray(rgb):
    """png_set_rgb_to_gray(1, 0.299, 0.587): Q15 coefficients, truncated."""
    rc, gc = 29900 * 32768 // 100000, 58700 * 32768 // 100000
    bc = 32768 - rc - gc
    r, g, b = (rgb[..., k].astype(np.int64) for k in range(3))
    v = (rc * r + gc * g + bc * b) >> 15
    same = (r == g) & (g == b)
    return np.where(same, r, v).astype(np.uint8)[..., None]


def with_channels(rgb, c, gray=tf_gray, alpha=None):
    if c == 1:
        return gray(rgb)
    if c == 3:
        return rgb
    a = np.full(rgb.shape[:2] + (1,), 255, np.uint8) if alpha is None \
        else alpha[..., None]
    return np.concatenate([rgb, a], axis=-1)


def djpeg(path, args):
    """Decode with libjpeg-turbo's djpeg; returns an (H, W, C) array."""
    out = subprocess.run(["djpeg"] + args + ["-pnm", path],
                         check=True, capture_output=True).stdout
    magic, rest = out[:2], out[2:].split(maxsplit=3)
    w, h = int(rest[0]), int(rest[1])
    c = 3 if magic == b"P6" else 1
    return np.frombuffer(rest[3], np.uint8)[:h * w * c].reshape(h, w, c)


class Manifest:
    def __init__(self, d):
        self.d = d
        self.lines = []

    def add(self, name, channels, pixels, dct=1, scale=1, tol=0):
        pixels = np.ascontiguousarray(pixels, np.uint8)
        if pixels.ndim == 2:
            pixels = pixels[:, :, None]
        h, w, c = pixels.shape
        raw = "expect%03d.raw" % len(self.lines)
        with open(os.path.join(self.d, raw), "wb") as f:
            f.write(pixels.tobytes())
        self.lines.append("%s %d %d %d %d %d %d %d %s" % (
            name, channels, dct, scale, tol, h, w, c, raw))

    def write(self):
        with open(os.path.join(self.d, "manifest.txt"), "w") as f:
            f.write("\n".join(self.lines) + "\n")


def pil_rgb(path):
    return np.asarray(Image.open(path).convert("RGB"))


def gen(d):
    os.makedirs(d, exist_ok=True)
    m = Manifest(d)
    p = lambda n: os.path.join(d, n)
    H, W = 23, 37

    # PNG, written by Pillow, checked against Pillow's decode and TF's rules.
    rgb = synth(H, W, 3, 1)
    alpha = synth(H, W, 1, 2)[..., 0]
    Image.fromarray(rgb).save(p("rgb.png"))
    for c in (0, 3, 4):
        m.add("rgb.png", c, with_channels(pil_rgb(p("rgb.png")), 3 if c == 0 else c))
    m.add("rgb.png", 1, libpng_gray(rgb))
    m.add("rgb.png", 1, np.asarray(Image.open(p("rgb.png")).convert("L")),
          scale=1, dct=1, tol=2)
    rgba = np.concatenate([rgb, alpha[..., None]], axis=-1)
    Image.fromarray(rgba, "RGBA").save(p("rgba.png"))
    m.add("rgba.png", 0, np.asarray(Image.open(p("rgba.png"))))
    m.add("rgba.png", 3, rgb)
    m.add("rgba.png", 1, libpng_gray(rgb))
    gray = synth(H, W, 1, 3)[..., 0]
    Image.fromarray(gray, "L").save(p("gray.png"))
    m.add("gray.png", 0, np.asarray(Image.open(p("gray.png")))[..., None])
    m.add("gray.png", 3, np.repeat(gray[..., None], 3, -1))
    m.add("gray.png", 4, with_channels(np.repeat(gray[..., None], 3, -1), 4))
    la = np.stack([gray, alpha], -1)
    Image.fromarray(la, "LA").save(p("la.png"))
    m.add("la.png", 0, np.asarray(Image.open(p("la.png"))))
    m.add("la.png", 1, gray)
    m.add("la.png", 4, np.concatenate([np.repeat(gray[..., None], 3, -1),
                                        alpha[..., None]], -1))
    bw = (gray > 128)
    Image.fromarray(bw.astype(np.uint8) * 255, "L").convert("1").save(p("bw.png"))
    m.add("bw.png", 0, np.asarray(Image.open(p("bw.png")).convert("L")))
    m.add("bw.png", 4, with_channels(np.repeat(bw[..., None] * np.uint8(255), 3, -1), 4))
    pal_idx = (synth(H, W, 1, 4)[..., 0] // 16).astype(np.uint8)
    palette = synth(16, 1, 3, 5).reshape(16, 3)
    im = Image.fromarray(pal_idx, "P")
    im.putpalette(palette.reshape(-1).tolist())
    im.save(p("pal.png"))
    m.add("pal.png", 0, pil_rgb(p("pal.png")))
    m.add("pal.png", 4, with_channels(palette[pal_idx], 4))
    trns = bytes(range(0, 256, 17))[:10]      # entries 10..15 opaque
    im.save(p("paltrns.png"), transparency=trns)
    a = np.array(list(trns) + [255] * 6, np.uint8)[pal_idx]
    m.add("paltrns.png", 0, np.asarray(Image.open(p("paltrns.png")).convert("RGBA")))
    m.add("paltrns.png", 4, with_channels(palette[pal_idx], 4, alpha=a))
    m.add("paltrns.png", 3, palette[pal_idx])

    # PNG, written here: 16-bit, <8-bit, tRNS on gray/RGB, Adam7.
    g16 = (synth(H, W, 1, 6).astype(np.uint16) * 257 + 91)[..., 0]
    png_write(p("gray16.png"), g16, 0, 16)
    m.add("gray16.png", 0, (g16 >> 8).astype(np.uint8))
    m.add("gray16.png", 3, np.repeat((g16 >> 8).astype(np.uint8)[..., None], 3, -1))
    rgb16 = synth(H, W, 3, 7).astype(np.uint16) * 256 + 200
    png_write(p("rgb16.png"), rgb16, 2, 16)
    m.add("rgb16.png", 0, (rgb16 >> 8).astype(np.uint8))
    m.add("rgb16.png", 3, np.asarray(Image.open(p("rgb16.png")).convert("RGB")))
    rgba16 = np.concatenate([rgb16, g16[..., None]], -1)
    png_write(p("rgba16.png"), rgba16, 6, 16)
    m.add("rgba16.png", 0, (rgba16 >> 8).astype(np.uint8))
    g2 = (synth(H, W, 1, 8)[..., 0] // 64).astype(np.uint8)
    png_write(p("gray2.png"), g2, 0, 2)
    m.add("gray2.png", 0, g2 * 85)
    pal4 = (synth(H, W, 1, 9)[..., 0] // 16).astype(np.uint8)
    png_write(p("pal4trns.png"), pal4, 3, 4, palette=palette,
              trns=bytes([0, 100, 200]))
    a4 = np.array([0, 100, 200] + [255] * 13, np.uint8)[pal4]
    m.add("pal4trns.png", 0, with_channels(palette[pal4], 4, alpha=a4))
    m.add("pal4trns.png", 0, np.asarray(Image.open(p("pal4trns.png")).convert("RGBA")))
    tv = int(gray[5, 5])
    png_write(p("graytrns.png"), gray, 0, 8, trns=struct.pack(">H", tv))
    m.add("graytrns.png", 0, gray)
    m.add("graytrns.png", 4, with_channels(np.repeat(gray[..., None], 3, -1), 4,
                                           alpha=np.where(gray == tv, 0, 255).astype(np.uint8)))
    tc = rgb[3, 4]
    png_write(p("rgbtrns.png"), rgb, 2, 8, trns=struct.pack(">HHH", *map(int, tc)))
    m.add("rgbtrns.png", 4, with_channels(rgb, 4, alpha=np.where(
        (rgb == tc).all(-1), 0, 255).astype(np.uint8)))
    png_write(p("interlaced.png"), rgba, 6, 8, interlace=True)
    m.add("interlaced.png", 0, rgba)
    m.add("interlaced.png", 0, np.asarray(Image.open(p("interlaced.png"))))
    png_write(p("interlaced16.png"), rgb16, 2, 16, interlace=True)
    m.add("interlaced16.png", 3, (rgb16 >> 8).astype(np.uint8))

    # JPEG: Pillow decodes with ISLOW and fancy upsampling (exact), djpeg
    # gives IFAST (TF's default) and DCT-scaled results, Pillow's draft
    # mode gives libjpeg's own gray conversion (IFAST).
    JH, JW = 61, 83
    jrgb = synth(JH, JW, 3, 10)
    for name, kw in (("q444.jpg", dict(subsampling=0)),
                     ("q420.jpg", dict(subsampling=2)),
                     ("prog.jpg", dict(subsampling=2, progressive=True))):
        Image.fromarray(jrgb).save(p(name), quality=90, **kw)
        m.add(name, 3, pil_rgb(p(name)), dct=1)
        m.add(name, 0, djpeg(p(name), ["-dct", "fast"]), dct=2)
        m.add(name, 4, with_channels(djpeg(p(name), ["-dct", "fast"]), 4), dct=2)
        m.add(name, 1, djpeg(p(name), ["-dct", "fast", "-grayscale"]), dct=2)
        for s in (2, 4, 8):
            m.add(name, 3, djpeg(p(name), ["-dct", "fast", "-scale", "1/%d" % s]),
                  dct=2, scale=s)
    im = Image.open(p("q420.jpg"))
    im.draft("L", im.size)
    m.add("q420.jpg", 1, np.asarray(im), dct=1)      # draft keeps ISLOW
    im = Image.open(p("q444.jpg"))
    im.draft("RGB", (JW // 4, JH // 4))
    m.add("q444.jpg", 3, np.asarray(im), dct=2, scale=4)
    jgray = synth(JH, JW, 1, 11)[..., 0]
    Image.fromarray(jgray, "L").save(p("gray.jpg"), quality=90)
    g = np.asarray(Image.open(p("gray.jpg")))
    m.add("gray.jpg", 0, g, dct=1)
    m.add("gray.jpg", 3, np.repeat(g[..., None], 3, -1), dct=1)
    Image.fromarray(np.concatenate([jrgb, synth(JH, JW, 1, 12)], -1),
                    "CMYK").save(p("cmyk.jpg"), quality=90)
    cmyk = np.asarray(Image.open(p("cmyk.jpg"))).astype(np.int64)
    k = 255 - cmyk[..., 3:4]
    trgb = ((255 - cmyk[..., :3]) * k // 255).astype(np.uint8)
    m.add("cmyk.jpg", 0, trgb, dct=1)
    m.add("cmyk.jpg", 1, tf_gray(trgb), dct=1)
    m.add("cmyk.jpg", 4, with_channels(trgb, 4), dct=1)
    m.add("cmyk.jpg", 3, pil_rgb(p("cmyk.jpg")), dct=1, tol=3)
    with open(p("q444.jpg"), "rb") as f:
        whole = f.read()
    with open(p("noeoi.jpg"), "wb") as f:     # scans complete, EOI missing
        f.write(whole[:-2])
    m.add("noeoi.jpg", 3, pil_rgb(p("q444.jpg")), dct=1)
    photo(480, 640, 13).save(p("big.jpg"), quality=90)

    # BMP: Pillow writes 24-bit, 8-bit palette, gray and 1-bit files.
    Image.fromarray(rgb).save(p("rgb24.bmp"))
    m.add("rgb24.bmp", 0, pil_rgb(p("rgb24.bmp")))
    m.add("rgb24.bmp", 1, tf_gray(rgb))
    m.add("rgb24.bmp", 4, with_channels(rgb, 4))
    im = Image.fromarray(pal_idx, "P")
    im.putpalette(palette.reshape(-1).tolist())
    im.save(p("pal8.bmp"))
    m.add("pal8.bmp", 0, pil_rgb(p("pal8.bmp")))
    m.add("pal8.bmp", 1, tf_gray(palette[pal_idx]))
    Image.fromarray(gray, "L").save(p("gray8.bmp"))
    m.add("gray8.bmp", 0, np.asarray(Image.open(p("gray8.bmp"))))
    m.add("gray8.bmp", 3, np.repeat(gray[..., None], 3, -1))
    Image.fromarray(bw.astype(np.uint8) * 255, "L").convert("1").save(p("bw.bmp"))
    m.add("bw.bmp", 0, np.asarray(Image.open(p("bw.bmp")).convert("L")))
    # BMP written here: top-down, 32-bit (TF: byte 4 is alpha), bitfields,
    # 4-bit palette, the old core header.
    bgr = lambda a: [bytes(r[:, ::-1].reshape(-1)) for r in a]
    bmp_write(p("topdown.bmp"), bgr(rgb), W, H, 24, top_down=True)
    m.add("topdown.bmp", 0, rgb)
    bgra = [bytes(np.concatenate([r[:, ::-1], a[:, None]], -1).reshape(-1))
            for r, a in zip(rgb, alpha)]
    bmp_write(p("bgra32.bmp"), bgra, W, H, 32)
    m.add("bgra32.bmp", 0, rgba)
    m.add("bgra32.bmp", 3, rgb)
    bmp_write(p("v4.bmp"), bgra, W, H, 32, hsize=108, comp=3,
              masks=(0xff0000, 0xff00, 0xff, 0xff000000))
    m.add("v4.bmp", 0, rgba)
    bmp_write(p("bf32.bmp"), bgra, W, H, 32, comp=3,
              masks=(0xff0000, 0xff00, 0xff))
    m.add("bf32.bmp", 0, rgb)
    m.add("bf32.bmp", 4, with_channels(rgb, 4))
    packed4 = [bytes((int(r[i]) << 4) | (int(r[i + 1]) if i + 1 < W else 0)
                     for i in range(0, W, 2)) for r in pal4]
    bmp_write(p("pal4.bmp"), packed4, W, H, 4, palette=palette.tolist())
    m.add("pal4.bmp", 0, palette[pal4])
    m.add("pal4.bmp", 0, pil_rgb(p("pal4.bmp")))
    bmp_write(p("core.bmp"), bgr(rgb), W, H, 24, hsize=12)
    m.add("core.bmp", 0, rgb)
    m.add("core.bmp", 0, pil_rgb(p("core.bmp")))

    # GIF: Pillow writes interlaced by default; first frame of an
    # animation; a frame smaller than the logical screen (black around).
    im = Image.fromarray(pal_idx, "P")
    im.putpalette(palette.reshape(-1).tolist())
    im.save(p("pal.gif"))
    m.add("pal.gif", 0, pil_rgb(p("pal.gif")))
    m.add("pal.gif", 1, tf_gray(palette[pal_idx]))
    m.add("pal.gif", 4, with_channels(palette[pal_idx], 4))
    im.save(p("plain.gif"), interlace=False)
    m.add("plain.gif", 3, palette[pal_idx])
    im2 = Image.fromarray((15 - pal_idx).astype(np.uint8), "P")
    im2.putpalette(palette.reshape(-1).tolist())
    im.save(p("anim.gif"), save_all=True, append_images=[im2])
    m.add("anim.gif", 0, palette[pal_idx])
    with open(p("plain.gif"), "rb") as f:
        g = bytearray(f.read())
    g[6:10] = struct.pack("<HH", W + 5, H + 3)
    with open(p("canvas.gif"), "wb") as f:
        f.write(g)
    canvas = np.zeros((H + 3, W + 5, 3), np.uint8)
    canvas[:H, :W] = palette[pal_idx]
    m.add("canvas.gif", 0, canvas)
    at = bytes(g).index(b"\x2c\x00\x00\x00\x00", 13 + 48)  # descriptor
    g[at + 1:at + 5] = struct.pack("<HH", 3, 2)              # left, top
    with open(p("offset.gif"), "wb") as f:
        f.write(g)
    canvas = np.zeros((H + 3, W + 5, 3), np.uint8)
    canvas[2:2 + H, 3:3 + W] = palette[pal_idx]
    m.add("offset.gif", 0, canvas)
    # TF's own test vector (gif_io_test.cc TransparentIndexOutsideColorTable).
    tv = bytes([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 3, 0, 1, 0, 0xf0, 0, 0,
                0x80, 0, 0, 0xff, 0xff, 0xff, 0x21, 0xf9, 4, 1, 0, 0, 2, 0,
                0x2c, 0, 0, 0, 0, 3, 0, 1, 0, 0, 2, 2, 0x44, 0x54, 0, 0x3b])
    with open(p("tftrans.gif"), "wb") as f:
        f.write(tv)
    m.add("tftrans.gif", 0, np.array([[[0x80, 0, 0], [255, 255, 255],
                                       [0, 0, 0]]], np.uint8))
    m.write()


# Resize oracles ------------------------------------------------------------

def axis_bilinear(n_in, n_out):
    s = F32(n_in) / F32(n_out)
    v = (np.arange(n_out, dtype=F32) + F32(0.5)) * s - F32(0.5)
    f = np.floor(v)
    lo = np.maximum(f, 0).astype(int)
    hi = np.minimum(np.ceil(v), n_in - 1).astype(int)
    return lo, hi, (v - f).astype(F32)


def r_bilinear(img, oh, ow):
    ylo, yhi, yl = axis_bilinear(img.shape[0], oh)
    xlo, xhi, xl = axis_bilinear(img.shape[1], ow)
    xl = xl[None, :, None]
    top = img[ylo][:, xlo] + (img[ylo][:, xhi] - img[ylo][:, xlo]) * xl
    bot = img[yhi][:, xlo] + (img[yhi][:, xhi] - img[yhi][:, xlo]) * xl
    return top + (bot - top) * yl[:, None, None]


def r_nearest(img, oh, ow):
    def idx(n_in, n_out):
        s = F32(n_in) / F32(n_out)
        v = np.floor((np.arange(n_out, dtype=F32) + F32(0.5)) * s)
        return np.clip(v, 0, n_in - 1).astype(int)
    return img[idx(img.shape[0], oh)][:, idx(img.shape[1], ow)]


def keys_table():
    a = -0.5
    x = np.arange(1025) / 1024.0
    t0 = (((a + 2) * x - (a + 3)) * x * x + 1).astype(F32)
    x1 = x + 1
    t1 = (((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a).astype(F32)
    return t0, t1


def bicubic_matrix(n_in, n_out):
    """(n_out, n_in) weights of TF's half-pixel Keys cubic."""
    t0, t1 = keys_table()
    s = F32(n_in) / F32(n_out)
    m = np.zeros((n_out, n_in), F32)
    for o in range(n_out):
        f = (F32(o) + F32(0.5)) * s - F32(0.5)
        loc = int(np.floor(f))
        off = int(np.rint(F32(f - F32(loc)) * F32(1024)))
        w = [t1[off], t0[off], t0[1024 - off], t1[1024 - off]]
        taps = [(loc - 1 + k, w[k]) for k in range(4) if 0 <= loc - 1 + k < n_in]
        tot = sum(float(ww) for _, ww in taps)
        for i, ww in taps:
            m[o, i] += ww / tot
    return m


def area_matrix(n_in, n_out):
    """Exact overlap of [i, i+1) with each output footprint, normalised."""
    s = n_in / n_out
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        a, b = o * s, (o + 1) * s
        for i in range(int(np.floor(a)), int(np.ceil(b))):
            m[o, min(i, n_in - 1)] += min(b, i + 1) - max(a, i)
    return m / s


def kernel_matrix(n_in, n_out, cubic):
    """ScaleAndTranslate weights with an antialiasing kernel."""
    def tri(x):
        return np.maximum(0.0, 1.0 - np.abs(x))

    def keys(x):
        x = np.abs(x)
        return np.where(x >= 2, 0.0, np.where(
            x >= 1, ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0,
            ((1.5 * x - 2.5) * x) * x + 1.0))
    inv = n_in / n_out
    ks = max(inv, 1.0)
    radius = 2.0 if cubic else 1.0
    m = np.zeros((n_out, n_in))
    for o in range(n_out):
        c = (o + 0.5) * inv
        i = np.arange(max(0, int(np.ceil(c - radius * ks - 0.5))),
                      min(n_in - 1, int(np.floor(c + radius * ks - 0.5))) + 1)
        w = (keys if cubic else tri)((i + 0.5 - c) / ks)
        m[o, i] = w / w.sum()
    return m


def apply_matrices(img, my, mx):
    return np.einsum("oi,ijc,pj->opc", my, img.astype(np.float64), mx)


def resize(img, oh, ow, method, aa):
    img = img.astype(F32)
    if method == "bilinear" and not aa:
        return r_bilinear(img, oh, ow)
    if method == "nearest":
        return r_nearest(img, oh, ow)
    if method == "bicubic" and not aa:
        return apply_matrices(img, bicubic_matrix(img.shape[0], oh),
                              bicubic_matrix(img.shape[1], ow))
    if method == "area":
        return apply_matrices(img, area_matrix(img.shape[0], oh),
                              area_matrix(img.shape[1], ow))
    cubic = method == "bicubic"
    return apply_matrices(img, kernel_matrix(img.shape[0], oh, cubic),
                          kernel_matrix(img.shape[1], ow, cubic))


def resize_cases(path):
    for line in open(path):
        f = line.split()
        if not f:
            continue
        src, dt, h, w, c, oh, ow, method, aa, out = f
        h, w, c, oh, ow, aa = map(int, (h, w, c, oh, ow, aa))
        img = np.fromfile(src, np.uint8 if dt == "u8" else F32).reshape(h, w, c)
        resize(img, oh, ow, method, aa).astype(F32).tofile(out)


# Benchmark corpus ---------------------------------------------------------

_noise = np.random.RandomState(7).randint(-8, 9, (800, 1100, 3)).astype(np.int16)


def photo(h, w, seed):
    """Smooth photo-like content with sensor-like noise (a window of one
    shared noise field, so a corpus of large images is quick to make)."""
    rs = np.random.RandomState(seed)
    base = synth(h // 8, w // 8, 3, seed)
    img = Image.fromarray(base).resize((w, h), Image.BICUBIC)
    y, x = rs.randint(0, 800 - h + 1), rs.randint(0, 1100 - w + 1)
    arr = np.asarray(img).astype(np.int16) + _noise[y:y + h, x:x + w]
    return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))


def corpus(d, n):
    files = [os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs
             if f.endswith(".jpg")]
    if len(files) >= n:
        return
    sizes = [(320, 240), (480, 360), (640, 480), (800, 600), (1024, 768)]
    for i in range(n):
        w, h = sizes[i % len(sizes)]
        cls = os.path.join(d, "class%d" % (i % 4))
        os.makedirs(cls, exist_ok=True)
        photo(h, w, i).save(os.path.join(cls, "img%04d.jpg" % i), quality=90)


def pillow_bench(d, size):
    files = sorted(os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs)
    t0 = time.perf_counter()
    for f in files:
        with Image.open(f) as im:
            im.convert("RGB").resize((size, size), Image.BILINEAR)
    dt = time.perf_counter() - t0
    print("%.1f" % (len(files) / dt))


def seeds(d):
    os.makedirs(d, exist_ok=True)
    p = lambda n: os.path.join(d, n)
    rgb = synth(6, 8, 3, 1)
    idx = (synth(6, 8, 1, 2)[..., 0] // 64).astype(np.uint8)
    pal = synth(4, 1, 3, 3).reshape(4, 3)
    Image.fromarray(rgb).save(p("rgb.png"))
    png_write(p("pal-trns-adam7.png"), idx, 3, 2, palette=pal,
              trns=b"\0\x80", interlace=True)
    png_write(p("gray16.png"), idx.astype(np.uint16) * 20000, 0, 16)
    Image.fromarray(rgb).save(p("q420.jpg"), quality=50)
    Image.fromarray(rgb).save(p("prog.jpg"), quality=50, progressive=True)
    Image.fromarray(np.concatenate([rgb, rgb[..., :1]], -1), "CMYK").save(
        p("cmyk.jpg"), quality=50)
    im = Image.fromarray(idx, "P")
    im.putpalette(pal.reshape(-1).tolist())
    im.save(p("pal.gif"))
    im.save(p("pal8.bmp"))
    bmp_write(p("bgra32-topdown.bmp"), [bytes(r.reshape(-1)) + b"\xff" * 8
                                        for r in rgb], 8, 6, 32, top_down=True)


def main(argv):
    if len(argv) >= 3 and argv[1] == "gen":
        gen(argv[2])
    elif len(argv) >= 3 and argv[1] == "resize":
        resize_cases(argv[2])
    elif len(argv) >= 3 and argv[1] == "seeds":
        seeds(argv[2])
    elif len(argv) >= 4 and argv[1] == "corpus":
        corpus(argv[2], int(argv[3]))
    elif len(argv) >= 4 and argv[1] == "pillow-bench":
        pillow_bench(argv[2], int(argv[3]))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
