#!/usr/bin/python3
"""shapeops_ref.py - numpy oracle for the data movement ops of
lib/kernels/cpu/shape.c (Transpose, ConcatV2, Pack, Tile, Pad, Slice,
StridedSlice, BroadcastTo, Fill). Nothing here uses tfkit code.

t-shapeops writes into DIR a file `manifest`, one case a line:

    NAME SHAPE EXPR                 SHAPE like 2x3x4

with NAME.x the input, raw little-endian float64 of SHAPE. EXPR is a
numpy expression over X (the input array) written by the test from the
op's TensorFlow meaning (tf.strided_slice is Python slicing). This
script writes NAME.want: the result as raw float64, C order.

Usage: shapeops_ref.py DIR
"""
import os
import sys

import numpy as np


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "manifest")) as f:
        for line in f:
            name, shape, expr = line.rstrip("\n").split(" ", 2)
            dims = [int(v) for v in shape.split("x")]
            X = np.fromfile(os.path.join(d, name + ".x"), "<f8").reshape(dims)
            want = np.ascontiguousarray(eval(expr, {"np": np, "X": X}))
            want.astype("<f8").tofile(os.path.join(d, name + ".want"))


if __name__ == "__main__":
    main()
