"""t-tflite-u8: uint8-quantized .tflite models, checked by LiteRT.

1. A TF1-era quantization-aware graph (FakeQuant ops) converted by TF
   2.21's TF1 compat converter with inference_type tf.uint8: CONV_2D
   (RELU6), DEPTHWISE_CONV_2D (RELU), AVERAGE_POOL_2D, MAX_POOL_2D,
   CONCATENATION, LOGISTIC, QUANTIZE (uint8 -> uint8), ADD, RESHAPE,
   FULLY_CONNECTED, SOFTMAX, with uint8 weights and zero points; every
   intermediate the graph names is an output too. `tfk-lite run` must
   give LiteRT's reference kernels' bytes (BUILTIN_REF) and its
   optimized kernels' within one quantum (ops that differ: a diag).
   The same graph with float inputs/outputs (QUANTIZE float -> uint8,
   DEQUANTIZE) gives LiteRT's floats. A second graph of two inputs:
   TANH, MUL, SUB, PAD, MEAN (over H and W with keep_dims: TFLite's own
   uint8 formula; over channels), RELU and a CONCATENATION of inputs
   whose scales differ from its output's (rescaled, as TFLite does for
   uint8).
2. A Keras int8 model converted with inference_input_type /
   inference_output_type tf.uint8: QUANTIZE uint8 -> int8 and back.
3. The TF-written fixture add_quantized.bin (uint8 ADD).
4. `tfk-lite show` prints the UINT8 tensors with their zero points;
   a value outside [0, 255] for a UINT8 input is refused.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tftap import T  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
from ai_edge_litert.interpreter import Interpreter, OpResolverType  # noqa

t = T()
rng = np.random.default_rng(11)
keras.utils.set_random_seed(11)
tf1 = tf.compat.v1


def save(name, a):
    p = t.path(name + ".npy")
    np.save(p, a)
    return p


def litert(path, feeds, kind):
    """{output key: array} of path's only signature in LiteRT, or, for
    a signature-less TF1 file, of its inputs and outputs by name."""
    it = Interpreter(model_path=path, experimental_op_resolver_type=kind)
    sig = it.get_signature_list()
    if sig:
        return it.get_signature_runner(list(sig)[0])(**feeds)
    it.allocate_tensors()
    for d in it.get_input_details():
        it.set_tensor(d["index"], feeds[d["name"]])
    it.invoke()
    return {d["name"]: it.get_tensor(d["index"])
            for d in it.get_output_details()}


def ours(path, feeds):
    d = t.path("out-" + os.path.basename(path))
    spec = ";".join("%s=%s" % (k, save("in-%s-%s" % (os.path.basename(path),
                                                      k), v))
                    for k, v in feeds.items())
    rc, out, err = t.run("tfk-lite", "run", path, "--inputs", spec,
                         "--outdir", d, check=False)
    got = {}
    if rc == 0:
        for f in os.listdir(d):
            got[f[:-4]] = np.load(os.path.join(d, f))
    return rc, got, err


def compare(path, feeds, what, floats=False):
    ref = litert(path, feeds, OpResolverType.BUILTIN_REF)
    opt = litert(path, feeds, OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    rc, got, err = ours(path, feeds)
    if rc:
        t.diag(err)
    # tfk-lite run names outputs by key; TF1 files key them by name,
    # which --outdir writes with '/' and ';' as '_'
    want = {k.replace("/", "_").replace(";", "_"): v for k, v in ref.items()}
    wopt = {k.replace("/", "_").replace(";", "_"): v for k, v in opt.items()}
    if not t.ok(rc == 0 and sorted(got) == sorted(want),
                "%s: tfk-lite run gives LiteRT's outputs %s" % (
                    what, sorted(want))):
        t.diag("ours: %s" % sorted(got))
        return
    for k in sorted(want):
        t.ok(got[k].dtype == want[k].dtype, "%s: %s is %s as in LiteRT" % (
            what, k, want[k].dtype))
        if floats:
            q = 1e-6
        else:
            q = 0
        t.close(got[k], want[k], q, "%s: %s = LiteRT reference kernels%s" %
                (what, k, "" if floats else ", bit-exact"))
        d = np.abs(wopt[k].astype(np.float64) - want[k].astype(np.float64))
        if d.max() > 0:
            t.diag("LiteRT optimized vs reference kernels differ on %s by "
                   "%g" % (k, d.max()))
        t.close(got[k], wopt[k], 1 if not floats else 0.02,
                "%s: %s = LiteRT optimized kernels within 1 quantum" %
                (what, k))


# --- 1. a TF1 quantization-aware graph, inference_type uint8 -------------
def fq(x, lo, hi, name=None):
    return tf1.quantization.fake_quant_with_min_max_args(x, lo, hi, name=name)


def weights(shape, s=0.5):
    return fq(tf1.constant(rng.uniform(-s, s, shape).astype(np.float32)),
              -s, s)


def bias(n):
    return tf1.constant(rng.uniform(-0.1, 0.1, n).astype(np.float32))


def tf1_model(path, float_io):
    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [2, 8, 8, 3], name="x")
        h = fq(x, -1.0, 1.0)
        a = fq(tf1.nn.relu6(tf1.nn.conv2d(h, weights((3, 3, 3, 4)),
                                          [1, 1, 1, 1], "SAME") + bias(4)),
               0.0, 6.0, name="conv")
        b = fq(tf1.nn.relu(tf1.nn.depthwise_conv2d(
            a, weights((3, 3, 4, 2)), [1, 2, 2, 1], "SAME") + bias(8)),
            0.0, 4.0, name="dw")
        p1 = fq(tf1.nn.avg_pool2d(b, 2, 2, "VALID"), 0.0, 4.0, name="avg")
        p2 = fq(tf1.nn.max_pool2d(b, 2, 2, "VALID"), 0.0, 4.0)
        c = fq(tf1.concat([p1, p2], axis=3), 0.0, 4.0)
        c2 = fq(c + fq(tf1.sigmoid(c), 0.0, 1.0), 0.0, 5.0, name="add")
        f = tf1.reshape(c2, [2, -1])
        z = fq(tf1.matmul(f, weights((64, 10))) + bias(10), -8.0, 8.0,
               name="logits")
        y = fq(tf1.nn.softmax(z), 0.0, 1.0, name="out")
        with tf1.Session(graph=g) as s:
            outs = [a, b, p1, c2, z, y]
            cv = tf1.lite.TFLiteConverter.from_session(s, [x], outs)
            cv.inference_type = tf.uint8
            cv.quantized_input_stats = {"x": (127.5, 127.5)}
            if float_io:
                cv.inference_input_type = tf.float32
                cv.inference_output_type = tf.float32
            open(path, "wb").write(cv.convert())


u8 = t.path("tf1-uint8.tflite")
tf1_model(u8, False)
it = Interpreter(model_path=u8)
ops = sorted({o["op_name"] for o in it._get_ops_details()})
types = {d["dtype"] for d in it.get_tensor_details()}
t.ok(np.uint8 in types and {"CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D",
                            "MAX_POOL_2D", "CONCATENATION", "LOGISTIC",
                            "ADD", "FULLY_CONNECTED", "SOFTMAX",
                            "QUANTIZE", "RESHAPE"} <= set(ops),
     "TF1 converter wrote a uint8 model of %s" % ", ".join(ops))
x = rng.integers(0, 256, (2, 8, 8, 3)).astype(np.uint8)
compare(u8, {"x": x}, "TF1 uint8")
x0 = np.full((2, 8, 8, 3), 128, np.uint8)
x0[1] = 255
compare(u8, {"x": x0}, "TF1 uint8, flat input")

rc, out, err = t.run("tfk-lite", "show", u8)
out = out.decode()
t.ok(rc == 0 and "UINT8 [2, 8, 8, 3] quant scale 0.00784313772 zero_point "
     "128" in out and "UINT8 [4, 3, 3, 3]" in out,
     "tfk-lite show prints the UINT8 tensors and zero points")

bad = x.astype(np.int16)
bad[0, 1, 2, 0] = 300
rc, _, err = ours(u8, {"x": bad})
t.ok(rc == 1 and "300" in err and "uint8" in err,
     "300 for a UINT8 input is refused: %s" % err.strip())

uf = t.path("tf1-uint8-float-io.tflite")
tf1_model(uf, True)
ops = sorted({o["op_name"] for o in Interpreter(model_path=uf)
              ._get_ops_details()})
t.ok("DEQUANTIZE" in ops and "QUANTIZE" in ops,
     "float inputs/outputs add QUANTIZE and DEQUANTIZE: %s" % ops)
xf = rng.uniform(-1, 1, (2, 8, 8, 3)).astype(np.float32)
compare(uf, {"x": xf}, "TF1 uint8, float I/O", floats=True)

g = tf.Graph()
with g.as_default():
    x = tf1.placeholder(tf.float32, [2, 6, 6, 3], name="x")
    y = tf1.placeholder(tf.float32, [2, 6, 6, 3], name="y")
    h, k = fq(x, -1.0, 1.0), fq(y, -2.0, 2.0)
    th = fq(tf1.tanh(h), -1.0, 1.0, name="tanh")
    mu = fq(th * k, -2.0, 2.0, name="mul")
    su = fq(mu - h, -3.0, 3.0, name="sub")
    pd = fq(tf1.pad(su, [[0, 0], [1, 1], [1, 1], [0, 0]]), -3.0, 3.0,
            name="pad")
    outs = [th, mu, su, pd,
            fq(tf1.reduce_mean(pd, [1, 2], keepdims=True), -1.0, 1.0,
               name="mean_hw"),
            fq(tf1.reduce_mean(su, [3]), -1.5, 1.5, name="mean_c"),
            fq(tf1.nn.relu(su), 0.0, 3.0, name="relu"),
            fq(tf1.concat([h, k], axis=3), -2.0, 2.0, name="cat")]
    with tf1.Session(graph=g) as s:
        cv = tf1.lite.TFLiteConverter.from_session(s, [x, y], outs)
        cv.inference_type = tf.uint8
        cv.quantized_input_stats = {"x": (127.5, 127.5), "y": (127.5, 63.75)}
        u8b = t.path("tf1-uint8-b.tflite")
        open(u8b, "wb").write(cv.convert())
ops = sorted({o["op_name"] for o in Interpreter(model_path=u8b)
              ._get_ops_details()})
t.ok({"TANH", "MUL", "SUB", "PAD", "MEAN", "RELU", "CONCATENATION"} <=
     set(ops), "TF1 converter wrote a second uint8 model of %s" %
     ", ".join(ops))
compare(u8b, {"x": rng.integers(0, 256, (2, 6, 6, 3)).astype(np.uint8),
              "y": rng.integers(0, 256, (2, 6, 6, 3)).astype(np.uint8)},
        "TF1 uint8, second graph")

# --- 2. an int8 model with uint8 inputs and outputs -----------------------
m = keras.Sequential([
    keras.Input((10, 10, 2), name="x"),
    keras.layers.Conv2D(6, 3, activation="relu"),
    keras.layers.AveragePooling2D(2),
    keras.layers.Conv2D(4, 1, activation="sigmoid")])
# no Dense: LiteRT 2.21's reference per-channel FULLY_CONNECTED rounds
# its requantization once where its optimized kernel (and ours) round
# twice, one quantum apart on a near tie (t-tflite names that op)
sm = t.path("sm-io")
m.export(sm, verbose=False)
cv = tf.lite.TFLiteConverter.from_saved_model(sm)
cv.optimizations = [tf.lite.Optimize.DEFAULT]
rep = rng.uniform(-1, 1, (16, 10, 10, 2)).astype(np.float32)
cv.representative_dataset = lambda: ([r[None]] for r in rep)
cv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
cv.inference_input_type = tf.uint8
cv.inference_output_type = tf.uint8
io = t.path("int8-uint8-io.tflite")
open(io, "wb").write(cv.convert())
it = Interpreter(model_path=io)
key = list(it.get_signature_runner().get_input_details())[0]
t.ok(it.get_input_details()[0]["dtype"] == np.uint8 and
     it.get_output_details()[0]["dtype"] == np.uint8,
     "the int8 model's input and output are UINT8")
compare(io, {key: rng.integers(0, 256, (3, 10, 10, 2)).astype(np.uint8)},
        "int8 model, uint8 I/O")

# --- 3. TF's own uint8 test model -----------------------------------------
aq = t.fixture("tflite/lite_testdata/add_quantized.bin")
xa = rng.integers(0, 86, (1, 8, 8, 3)).astype(np.uint8)
compare(aq, {"input": xa}, "add_quantized.bin")
t.done()
