#!/usr/bin/python3
"""np_ref.py - numpy oracle for the CPU op tests (t-shapeops, t-reduce,
t-kernels). Nothing here uses tfkit code.

A test writes into DIR a file `manifest`, one case a line:

    NAME SHAPE[,SHAPE2] EXPR          SHAPE like 2x3x4 ("" for a scalar: -)

with NAME.x (and NAME.y when SHAPE2 is given) raw little-endian
float64 inputs. EXPR is a numpy expression over X (and Y), written by
the test from the op's TensorFlow meaning (tf.strided_slice is Python
slicing, tf.math.squared_difference is (X - Y)**2, ...). This script
writes NAME.want: the result converted to float64 (booleans 0/1,
indices as values), C order.

Usage: np_ref.py DIR
"""
import os
import sys

import numpy as np


def load(path, shape):
    dims = [] if shape == "-" else [int(v) for v in shape.split("x")]
    return np.fromfile(path, "<f8").reshape(dims)


def main():
    d = sys.argv[1]
    np.seterr(all="ignore")
    with open(os.path.join(d, "manifest")) as f:
        for line in f:
            name, shapes, expr = line.rstrip("\n").split(" ", 2)
            shapes = shapes.split(",")
            env = {"np": np,
                   "X": load(os.path.join(d, name + ".x"), shapes[0])}
            if len(shapes) > 1:
                env["Y"] = load(os.path.join(d, name + ".y"), shapes[1])
            want = np.ascontiguousarray(np.asarray(eval(expr, env)))
            want.astype("<f8").tofile(os.path.join(d, name + ".want"))


if __name__ == "__main__":
    main()
