"""t-tflite-str: STRING tensors in .tflite files, checked by LiteRT.

TF 2.21's converter turns a tf.function over strings into builtins:
RESHAPE of a string input, GATHER from it by an int32 input, GATHER from
a constant string table (a STRING buffer: count, offsets, bytes), and
the input itself as an output. `tfk-lite run` fed the strings as Python
literals and as a .npy of bytes must give LiteRT's outputs, printed as
numpy prints bytes and saved as .npy; `tfk-lite show` lists the STRING
tensors. A string buffer whose offsets run backwards or past its end
(patched in with the flatbuffers package) is refused by show and run
with a message naming the tensor and the offset.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tftap import T  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from ai_edge_litert.interpreter import Interpreter  # noqa: E402

t = T()
TABLE = [b"zero", b"", b"two \xc3\xa9", b"three"]


class M(tf.Module):
    @tf.function(input_signature=[
        tf.TensorSpec([None, 2], tf.string, name="s"),
        tf.TensorSpec([None], tf.int32, name="i")])
    def f(self, s, i):
        flat = tf.reshape(s, [-1])
        return {"flat": flat, "picked": tf.gather(flat, i),
                "word": tf.gather(tf.constant(TABLE), i), "same": s}


m = M()
path = t.path("strings.tflite")
cv = tf.lite.TFLiteConverter.from_concrete_functions(
    [m.f.get_concrete_function()], m)
open(path, "wb").write(cv.convert())
it = Interpreter(model_path=path)
ops = sorted({o["op_name"] for o in it._get_ops_details()})
t.ok(ops == ["GATHER", "RESHAPE"], "TF's converter wrote RESHAPE and GATHER "
     "over strings: %s" % ops)

s = np.array([[b"ab", b""], [b"xyz", b"q\xff"]], dtype=object)
i = np.array([3, 0, 2], np.int32)
want = it.get_signature_runner()(s=s, i=i)

rc, out, err = t.run("tfk-lite", "show", path)
out = out.decode()
t.ok("STRING [1, 2]" in out and "STRING [4] buffer" in out,
     "tfk-lite show lists the STRING input and the constant table")


def check(what, args):
    d = t.path("out-" + what.replace(" ", "-"))
    rc, out, err = t.run("tfk-lite", "run", path, *args, "--outdir", d,
                         check=False)
    if not t.ok(rc == 0, "%s: tfk-lite run runs the string model" % what):
        t.diag(err)
        return
    for k in sorted(want):
        got = np.load(os.path.join(d, k + ".npy"))
        w = np.asarray(want[k])
        t.eq((got.shape, [bytes(v) for v in got.ravel()]),
             (w.shape, [bytes(v) for v in w.ravel()]),
             "%s: output %s = LiteRT's" % (what, k))
    return out.decode()


out = check("literals", ["--input_exprs",
                         "s=[[b'ab', b''], [b'xyz', b'q\\xff']];i=[3, 0, 2]"])
t.ok(out is not None and "Result for output key word:\n[b'three' b'zero' "
     "b'two \\xc3\\xa9']" in out,
     "strings are printed as numpy prints bytes")
np.save(t.path("s.npy"), s.astype("S"))
np.save(t.path("i.npy"), i)
check("npy", ["--inputs", "s=%s;i=%s" % (t.path("s.npy"), t.path("i.npy"))])

# --- corrupt string buffers -----------------------------------------------
from tensorflow.lite.python import schema_py_generated as fb  # noqa: E402
import flatbuffers  # noqa: E402


def patch(dst, fn):
    mt = fb.ModelT.InitFromObj(fb.Model.GetRootAsModel(
        bytearray(open(path, "rb").read()), 0))
    for k, x in enumerate(mt.subgraphs[0].tensors):
        buf = mt.buffers[x.buffer]
        if x.type == 5 and buf.data is not None and len(buf.data):
            b = bytearray(np.asarray(buf.data, np.uint8).tobytes())
            fn(b)
            buf.data = np.frombuffer(bytes(b), np.uint8)
            name, idx = x.name.decode(), k
    bl = flatbuffers.Builder(1024)
    bl.Finish(mt.Pack(bl), file_identifier=b"TFL3")
    open(dst, "wb").write(bl.Output())
    return name, idx


def backwards(b):
    # offset 2 set below offset 1
    b[12:16] = (int.from_bytes(b[8:12], "little") - 1).to_bytes(4, "little")


def past_end(b):
    b[4 + 4 * 4:4 + 4 * 5] = (len(b) + 5).to_bytes(4, "little")


for what, fn, msg in (("an offset before the one before it", backwards,
                       "string buffer: offset 2 ("),
                      ("the last offset past the buffer", past_end,
                       "string buffer: offset 4 (")):
    bad = t.path("bad.tflite")
    name, idx = patch(bad, fn)
    rc1, _, e1 = t.run("tfk-lite", "show", bad, check=False)
    rc2, _, e2 = t.run("tfk-lite", "run", bad, "--input_exprs",
                       "s=[[b'a', b'b']];i=[0]", check=False)
    t.ok(rc1 == 1 and rc2 == 1 and msg in e1 and msg in e2 and
         "tensors[%d]" % idx in e1,
         "%s is refused by show and run: %s" % (what, e1.strip()))
t.done()
