#!/usr/bin/python3
"""hostile.py - write the crafted inputs of the "hostile model files" cases.

Standard library only: the protobufs are encoded by hand from the field
numbers of TensorFlow's saved_model.proto, meta_graph.proto, graph.proto,
function.proto, node_def.proto, attr_value.proto, op_def.proto,
tensor.proto and tensor_shape.proto (see formats/), so nothing of tfkit
checks itself. Each SavedModel has one MetaGraphDef tagged "serve" and a
signature "serving_default" with input x (float32) and output y.

    hostile.py fnidx DIR          a FunctionDef whose AddV2 reads
                                  "m:z:0" and "m:z:-100000000"
    hostile.py fanout DIR DEPTH   f0 .. fDEPTH, each fi calling fi+1 twice:
                                  2^DEPTH inlined copies in ~3 KB
    hostile.py bigconst DIR       a Const float32 [2^20, 2^20] holding one
                                  splatted value (4 TiB claimed, 60 bytes)
    hostile.py bigfill DIR        Fill(dims=[65536, 65536], value=x):
                                  fine to import, 16 GiB at run time
    hostile.py npy-s0 FILE        128-byte .npy, descr '|S0', shape (2^26,)
    hostile.py npy-u0 FILE        the same with '<U0'
    hostile.py gzrec FILE MIB     gzip TFRecord stream whose one header
                                  claims an 8 GiB record, then MIB MiB of
                                  zeros (multi-member gzip: ~1 KiB each)
"""
import gzip
import struct
import sys

DT_FLOAT, DT_INT32 = 1, 3


def varint(n):
    out = b''
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7f
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def key(field, wire):
    return varint(field << 3 | wire)


def vi(field, n):
    return key(field, 0) + varint(n)


def ld(field, b):
    if isinstance(b, str):
        b = b.encode()
    return key(field, 2) + varint(len(b)) + b


def entry(field, k, v):
    """One map<string, message> entry."""
    return ld(field, ld(1, k) + ld(2, v))


def shape(dims):
    return b''.join(ld(2, vi(1, d)) for d in dims)


def a_type(t):
    return vi(6, t)


def a_shape(dims):
    return ld(7, shape(dims))


def a_func(name):
    return ld(10, ld(1, name))


def a_tensor(t):
    return ld(8, t)


def a_types(ts):
    return ld(1, ld(6, b''.join(varint(t) for t in ts)))


def node(name, op, inputs=(), attrs=()):
    b = ld(1, name) + ld(2, op)
    for i in inputs:
        b += ld(3, i)
    for k, v in attrs:
        b += entry(5, k, v)
    return b


def argdef(name, t):
    return ld(1, name) + vi(3, t)


def function(name, ins, outs, nodes, ret):
    sig = ld(1, name)
    for n in ins:
        sig += ld(2, argdef(n, DT_FLOAT))
    for n in outs:
        sig += ld(3, argdef(n, DT_FLOAT))
    b = ld(1, sig)
    for n in nodes:
        b += ld(3, n)
    for k, v in ret:
        b += ld(4, ld(1, k) + ld(2, v))
    return b


def call(name, fn, inputs):
    return node(name, 'PartitionedCall', inputs,
                [('f', a_func(fn)), ('Tin', a_types([DT_FLOAT])),
                 ('Tout', a_types([DT_FLOAT]))])


def saved_model(nodes, functions, out_tensor, x_shape=(1,)):
    gd = b''.join(ld(1, n) for n in nodes)
    if functions:
        gd += ld(2, b''.join(ld(1, f) for f in functions))
    info = lambda name, dims: (ld(1, name) + vi(2, DT_FLOAT) +
                               ld(3, shape(dims)))
    sig = (entry(1, 'x', info('x:0', x_shape)) +
           entry(2, 'y', info(out_tensor, [-1])) +
           ld(3, 'tensorflow/serving/predict'))
    mg = ld(1, ld(4, 'serve')) + ld(2, gd) + entry(5, 'serving_default', sig)
    return vi(1, 1) + ld(2, mg)


def placeholder(dims=(1,)):
    return node('x', 'Placeholder', [],
                [('dtype', a_type(DT_FLOAT)), ('shape', a_shape(dims))])


def fnidx():
    f = function('f', ['a'], ['z'], [
        node('m', 'Identity', ['a'], [('T', a_type(DT_FLOAT))]),
        node('add', 'AddV2', ['m:z:0', 'm:z:-100000000'],
             [('T', a_type(DT_FLOAT))]),
    ], [('z', 'add:z:0')])
    return saved_model([placeholder(), call('call', 'f', ['x'])], [f],
                       'call:0')


def fanout(depth):
    fs = []
    for i in range(depth):
        nxt = 'f%d' % (i + 1)
        fs.append(function('f%d' % i, ['a'], ['z'], [
            call('c1', nxt, ['a']), call('c2', nxt, ['a']),
            node('add', 'AddV2', ['c1:output:0', 'c2:output:0'],
                 [('T', a_type(DT_FLOAT))]),
        ], [('z', 'add:z:0')]))
    fs.append(function('f%d' % depth, ['a'], ['z'], [
        node('m', 'Identity', ['a'], [('T', a_type(DT_FLOAT))]),
    ], [('z', 'm:output:0')]))
    return saved_model([placeholder(), call('call', 'f0', ['x'])], fs,
                       'call:0')


def bigconst():
    t = vi(1, DT_FLOAT) + ld(2, shape([1 << 20, 1 << 20])) + \
        ld(5, struct.pack('<f', 1.0))
    c = node('c', 'Const', [], [('dtype', a_type(DT_FLOAT)),
                                ('value', a_tensor(t))])
    add = node('y', 'AddV2', ['x', 'c'], [('T', a_type(DT_FLOAT))])
    return saved_model([placeholder(), c, add], [], 'y:0')


def bigfill():
    dims = vi(1, DT_INT32) + ld(2, shape([2])) + \
        ld(7, varint(65536) + varint(65536))
    c = node('dims', 'Const', [], [('dtype', a_type(DT_INT32)),
                                   ('value', a_tensor(dims))])
    fill = node('y', 'Fill', ['dims', 'x'],
                [('T', a_type(DT_FLOAT)), ('index_type', a_type(DT_INT32))])
    return saved_model([placeholder(()), c, fill], [], 'y:0', x_shape=())


def npy(descr):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (
        descr, 1 << 26)
    h = h.ljust(128 - 10 - 1) + '\n'
    return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(h)) + h.encode()


def crc32c(b):
    c = 0xffffffff
    for x in b:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ 0x82f63b78 if c & 1 else c >> 1
    return c ^ 0xffffffff


def gzrec(mib):
    n = struct.pack('<Q', 8 << 30)
    c = crc32c(n)
    m = (((c >> 15) | (c << 17)) + 0xa282ead8) & 0xffffffff
    zeros = gzip.compress(bytes(1 << 20), 9, mtime=0)
    return gzip.compress(n + struct.pack('<I', m), 9, mtime=0) + zeros * mib


def write(path, b):
    with open(path, 'wb') as f:
        f.write(b)


def main(argv):
    import os
    what = argv[1] if len(argv) > 1 else ''
    if what in ('fnidx', 'fanout', 'bigconst', 'bigfill'):
        os.makedirs(argv[2], exist_ok=True)
        b = {'fnidx': fnidx, 'bigconst': bigconst, 'bigfill': bigfill,
             'fanout': lambda: fanout(int(argv[3]))}[what]()
        write(os.path.join(argv[2], 'saved_model.pb'), b)
    elif what in ('npy-s0', 'npy-u0'):
        write(argv[2], npy('|S0' if what == 'npy-s0' else '<U0'))
    elif what == 'gzrec':
        write(argv[2], gzrec(int(argv[3])))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
