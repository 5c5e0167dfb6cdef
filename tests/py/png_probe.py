"""png_probe.py COMMAND PNG ARGS: what tfk-plot's tests check in a PNG,
with Pillow as the decoder (an independent one: tfk-plot encodes
through libpng).

  size PNG                 print "W H" (fails unless it decodes)
  top PNG RRGGBB [X0 X1]   where the colour's highest pixel is, across
                           the colour's own x extent (restricted to
                           columns X0..X1): "left", "middle" or "right"
  span PNG RRGGBB [X0 X1 Y1]  the colour's vertical extent in pixels
                           (above row Y1: leaving out a legend)
  count PNG RRGGBB         how many pixels have exactly that colour
  cells PNG                blocks of the grid: runs of 20+ columns (rows)
                           holding a non-white pixel: "COLS ROWS"
  diagonal PNG RRGGBB      the colour's connected regions: their number
                           and whether their centres run down the
                           diagonal ("N diagonal" or "N other")
"""
import sys

from PIL import Image


def load(path):
    im = Image.open(path)
    im.load()
    return im.convert("RGB")


def pixels_of(im, hexcol, x0=0, x1=None):
    want = tuple(int(hexcol[i:i + 2], 16) for i in (0, 2, 4))
    w, h = im.size
    x1 = w - 1 if x1 is None else min(x1, w - 1)
    px = im.load()
    return [(x, y) for y in range(h) for x in range(x0, x1 + 1)
            if px[x, y] == want]


def runs(line, minlen=20):
    n, k = 0, 0
    for v in line + [False]:
        if v:
            k += 1
        else:
            n += k >= minlen
            k = 0
    return n


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    im = load(path)
    args = sys.argv[3:]
    if cmd == "size":
        print(*im.size)
    elif cmd in ("top", "span"):
        xr = [int(a) for a in args[1:3]] or [0, None]
        pts = pixels_of(im, args[0], *xr)
        if len(args) > 3:
            pts = [(x, y) for x, y in pts if y < int(args[3])]
        if not pts:
            print("none")
            return
        if cmd == "span":
            print(max(y for _, y in pts) - min(y for _, y in pts))
            return
        lo, hi = min(x for x, _ in pts), max(x for x, _ in pts)
        ytop = min(y for _, y in pts)
        xt = min(x for x, y in pts if y == ytop)
        f = (xt - lo) / max(hi - lo, 1)
        print("left" if f < 0.1 else "right" if f > 0.9 else "middle")
    elif cmd == "count":
        print(len(pixels_of(im, args[0])))
    elif cmd == "cells":
        w, h = im.size
        px = im.load()
        white = (255, 255, 255)
        cols = runs([any(px[x, y] != white for y in range(h))
                     for x in range(w)])
        rows = runs([any(px[x, y] != white for x in range(w))
                     for y in range(h)])
        print(cols, rows)
    elif cmd == "diagonal":
        pts = set(pixels_of(im, args[0]))
        regions = []
        while pts:
            stack = [pts.pop()]
            reg = []
            while stack:
                x, y = stack.pop()
                reg.append((x, y))
                for n in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                    if n in pts:
                        pts.remove(n)
                        stack.append(n)
            if len(reg) >= 100:
                regions.append(reg)
        cen = sorted((sum(x for x, _ in r) / len(r),
                      sum(y for _, y in r) / len(r)) for r in regions)
        diag = all(b[0] > a[0] + 10 and b[1] > a[1] + 10
                   for a, b in zip(cen, cen[1:]))
        print(len(regions), "diagonal" if diag else "other")
    else:
        sys.exit("unknown command " + cmd)


main()
