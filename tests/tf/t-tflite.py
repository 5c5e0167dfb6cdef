"""t-tflite: TFLite, checked by TensorFlow 2.21's converter and LiteRT.

1. TF's converter (from_saved_model of a Keras 3 export, from_keras_model
   of a tf_keras model) turns three small Keras models (an MLP; a CNN of
   Conv2D + MaxPool + Dense; a DepthwiseConv2D + BatchNorm + ReLU6 +
   GlobalAveragePooling2D block) into float, dynamic range, full int8
   (representative dataset; float and int8 inputs/outputs) and float16
   .tflite files; `tfk-lite run` must give LiteRT's outputs: float
   within 1e-5, int8 bit-exact against LiteRT's reference kernels
   (OpResolverType.BUILTIN_REF, the arithmetic lib/kernels/int8 follows)
   and within one quantum of its default optimized kernels, whose ops
   that round differently are named in a diag (found by running both
   LiteRT resolvers with every tensor kept).
2. Our converter (`tfk-lite convert`, float and --quantize int8) on a
   SavedModel tfk-train exported: LiteRT loads and runs the file to the
   outputs `tfk-lite run` gives.
3. Feeding: int8, uint8 and int16 .npy arrays for an INT8 input are its
   quantized values (range checked); float16 arrays feed float32 inputs.
4. A TF1-era per-channel bias whose quantized_dimension is out of range
   (patched in with the flatbuffers package) loads with a warning naming
   the tensor and runs as the unpatched model does in LiteRT.
5. A UINT8 model with per-channel weights (which TFLite's uint8
   kernels refuse too; uint8 models are t-tflite-u8's) and a STRING
   input into a FULLY_CONNECTED are refused by run with a message
   saying so.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tftap import T  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
import tf_keras  # noqa: E402
from ai_edge_litert.interpreter import Interpreter, OpResolverType  # noqa

t = T()
rng = np.random.default_rng(7)
keras.utils.set_random_seed(7)
tf_keras.utils.set_random_seed(7)


def save(name, a):
    p = t.path(name + ".npy")
    np.save(p, a)
    return p


def litert(path, feeds, ref=False, keep=False, opt=False):
    """Run path's only signature in LiteRT: {key: array} of outputs
    (and the interpreter when keep, for its tensors). ref: the
    reference kernels; opt: the optimized builtin kernels without the
    XNNPACK delegate (whose ops cannot be told apart); else the
    default (AUTO: XNNPACK where it applies)."""
    kind = (OpResolverType.BUILTIN_REF if ref else
            OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES if opt else OpResolverType.AUTO)
    it = Interpreter(model_path=path, experimental_op_resolver_type=kind,
                     experimental_preserve_all_tensors=keep)
    sig = it.get_signature_list()
    key = list(sig)[0]
    run = it.get_signature_runner(key)
    out = run(**feeds)
    return (out, it) if keep else out


def ours(path, feeds, check=True):
    """tfk-lite run on {key: array}: (rc, {key: array}, stderr)."""
    d = t.path("out-" + os.path.basename(path))
    spec = ";".join("%s=%s" % (k, save("in-%s-%s" % (os.path.basename(path),
                                                      k), v))
                    for k, v in feeds.items())
    rc, _, err = t.run("tfk-lite", "run", path, "--inputs", spec,
                       "--outdir", d, check=check)
    got = {}
    if rc == 0:
        for f in os.listdir(d):
            got[f[:-4]] = np.load(os.path.join(d, f))
    return rc, got, err


def diff_ops(path, feeds):
    """The ops whose outputs differ between LiteRT's optimized and
    reference kernels, with the largest difference in quanta."""
    _, a = litert(path, feeds, keep=True, opt=True)
    _, b = litert(path, feeds, ref=True, keep=True)
    names = {}
    for op in a._get_ops_details():
        for o in op["outputs"]:
            names[o] = op["op_name"]
    worst = {}
    for td in a.get_tensor_details():
        i = td["index"]
        if i not in names or td["dtype"] not in (np.int8, np.uint8):
            continue
        try:
            x, y = a.get_tensor(i), b.get_tensor(i)
        except ValueError:
            continue
        d = int(np.abs(x.astype(np.int32) - y.astype(np.int32)).max())
        if d:
            worst[names[i]] = max(worst.get(names[i], 0), d)
    return worst


# --- 1. TF's converter on Keras models -----------------------------------
def mlp():
    return keras.Sequential([
        keras.Input((48,), name="x"),
        keras.layers.Dense(40, activation="relu"),
        keras.layers.Dense(10, activation="softmax")])


def cnn():
    return keras.Sequential([
        keras.Input((12, 12, 1), name="x"),
        keras.layers.Conv2D(8, 3, activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Flatten(),
        keras.layers.Dense(10)])


def dwblock():
    """tf_keras (Keras 2), converted by from_keras_model."""
    L = tf_keras.layers
    m = tf_keras.Sequential([
        L.InputLayer((8, 8, 3), name="x"),
        L.Conv2D(16, 1, use_bias=False),
        L.DepthwiseConv2D(3, padding="same", use_bias=False),
        L.BatchNormalization(),
        L.ReLU(6.0),
        L.GlobalAveragePooling2D(),
        L.Dense(6)])
    bn = m.layers[2]
    c = bn.moving_mean.shape[0]
    bn.set_weights([rng.uniform(0.5, 1.5, c), rng.uniform(-0.2, 0.2, c),
                    rng.uniform(-0.3, 0.3, c), rng.uniform(0.5, 2, c)])
    return m


shapes = {"mlp": (48,), "cnn": (12, 12, 1), "dw": (8, 8, 3)}


def data(name, n):
    return rng.uniform(-1, 1, (n,) + shapes[name]).astype(np.float32)


def converters(name):
    if name == "dw":
        m = dwblock()
        return lambda: tf.lite.TFLiteConverter.from_keras_model(m)
    m = mlp() if name == "mlp" else cnn()
    d = t.path("sm-" + name)
    m.export(d, verbose=False)
    return lambda: tf.lite.TFLiteConverter.from_saved_model(d)


def convert(name, mk, mode):
    c = mk()
    if mode != "float":
        c.optimizations = [tf.lite.Optimize.DEFAULT]
    if mode == "float16":
        c.target_spec.supported_types = [tf.float16]
    if mode.startswith("int8"):
        rep = data(name, 16)
        c.representative_dataset = lambda: ([r[None]] for r in rep)
        c.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    if mode == "int8io":
        c.inference_input_type = tf.int8
        c.inference_output_type = tf.int8
    p = t.path("%s-%s.tflite" % (name, mode))
    with open(p, "wb") as f:
        f.write(c.convert())
    return p


def quantize_input(path, x):
    it = Interpreter(model_path=path)
    d = it.get_input_details()[0]
    s, z = d["quantization"]
    return np.clip(np.round(x / s) + z, -128, 127).astype(np.int8)


keep = {}
for name in ("mlp", "cnn", "dw"):
    mk = converters(name)
    for mode in ("float", "dynamic", "int8", "int8io", "float16"):
        p = convert(name, mk, mode)
        keep[name, mode] = p
        x = data(name, 3)
        key = "x" if name != "dw" else Interpreter(model_path=p) \
            .get_signature_runner().get_input_details().popitem()[0]
        feeds = {key: quantize_input(p, x) if mode == "int8io" else x}
        want = litert(p, feeds, ref=mode.startswith("int8"))
        rc, got, err = ours(p, feeds, check=False)
        what = "%s %s (TF converter): tfk-lite run = LiteRT%s" % (
            name, mode, " reference kernels, bit-exact"
            if mode.startswith("int8") else "")
        if rc:
            t.diag(err)
            t.ok(False, what)
            continue
        if sorted(got) != sorted(want):
            t.diag("output keys %s, LiteRT's %s" % (sorted(got),
                                                    sorted(want)))
            t.ok(False, what)
            continue
        for k in want:
            if mode.startswith("int8"):
                t.ok(got[k].dtype == want[k].dtype,
                     "%s %s: output %s is %s as in LiteRT" % (
                         name, mode, k, want[k].dtype))
                if mode == "int8io":
                    t.close(got[k], want[k], 0, what)
                    opt = litert(p, feeds, opt=True)[k]
                    ops = diff_ops(p, feeds)
                    t.diag("LiteRT optimized vs reference kernels, "
                           "quanta per op: %s" % (ops or "none differ"))
                    t.close(got[k], opt, 1, "%s %s: tfk-lite run = LiteRT "
                            "optimized kernels within 1 quantum" %
                            (name, mode))
                else:
                    # float outputs: a dequantized int8 tensor
                    t.close(got[k], want[k], 1e-6, what)
            else:
                t.close(got[k], want[k], 1e-5, what)

# --- 2. our converter, run by LiteRT --------------------------------------
top = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
recs = t.path("r64.tfrecord")
p = __import__("subprocess").run(
    "%s/tfk-idx -q --images %s --labels %s | %s/tfk-cat --take 64 >%s" % (
        t.bin, "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz",
        "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz",
        t.bin, recs), shell=True)
t.ok(p.returncode == 0, "64 Fashion-MNIST records for tfk-train")
t.tool("tfk-train", os.path.join(top, "examples", "cnn.spec.json"), recs,
       "--out", "cnn", "--set", "fit.epochs=1", "-q", "-j1")
img = (rng.integers(0, 256, (4, 28, 28, 1)) / 255.).astype(np.float32)
for mode, extra in (("float", ()),
                    ("int8", ("--quantize", "int8", "--representative", recs,
                              "--calibration_records", "32"))):
    out = t.path("ours-%s.tflite" % mode)
    t.tool("tfk-lite", "convert", "--saved_model_dir", "cnn", "-o", out,
           *extra)
    it = Interpreter(model_path=out)
    sigs = it.get_signature_list()
    t.ok(len(sigs) == 1, "our %s convert: LiteRT loads it, one signature "
         "(%s)" % (mode, list(sigs)))
    inkey = sigs[list(sigs)[0]]["inputs"][0]
    x = img if len(it.get_input_details()[0]["shape"]) == 4 else img[..., 0]
    want = litert(out, {inkey: x}, ref=mode == "int8")
    _, got, _ = ours(out, {inkey: x})
    t.eq(sorted(got), sorted(want), "our %s convert: output keys as LiteRT "
         "reads them" % mode)
    for k in want:
        t.close(got[k], want[k], 1e-5 if mode == "float" else 1e-6,
                "our %s convert: LiteRT%s gives tfk-lite run's %s" % (
                    mode, " (reference kernels)" if mode == "int8" else "",
                    k))
    if mode == "int8":
        opt = litert(out, {inkey: x}, opt=True)
        ops = diff_ops(out, {inkey: x})
        t.diag("LiteRT optimized vs reference kernels, quanta per op: %s" %
               (ops or "none differ"))
        for k in want:
            q = float(Interpreter(model_path=out).get_output_details()[0]
                      ["quantization"][0] or 1)
            t.close(got[k], opt[k], q * 1.001, "our int8 convert: LiteRT "
                    "optimized kernels within 1 quantum (%g) of %s" % (q, k))

# --- 3. feeding integer and float16 arrays --------------------------------
p8 = keep["mlp", "int8io"]
x = data("mlp", 2)
q = quantize_input(p8, x)
want = litert(p8, {"x": q}, ref=True)
for dt in (np.int8, np.uint8, np.int16, np.int32, np.int64):
    v = q if dt != np.uint8 else np.abs(q)
    w = want if dt != np.uint8 else litert(p8, {"x": np.abs(q)}, ref=True)
    rc, got, err = ours(p8, {"x": v.astype(dt)}, check=False)
    if rc:
        t.diag(err)
    t.ok(rc == 0 and all(np.array_equal(got[k], w[k]) for k in w),
         "%s .npy for an INT8 input: quantized values, LiteRT's outputs" %
         np.dtype(dt).name)
bad = q.astype(np.int16)
bad[1, 5] = 300
rc, _, err = ours(p8, {"x": bad}, check=False)
t.ok(rc == 1 and "300" in err and "int8" in err,
     "int16 value 300 for an INT8 input is refused: %s" % err.strip())
pf = keep["mlp", "float"]
x16 = data("mlp", 2).astype(np.float16)
want = litert(pf, {"x": x16.astype(np.float32)})
rc, got, err = ours(pf, {"x": x16}, check=False)
if rc:
    t.diag(err)
t.ok(rc == 0, "float16 .npy feeds a float32 input")
for k in want:
    t.close(got.get(k, np.zeros(0)), want[k], 1e-5,
            "float16 .npy: LiteRT's outputs on the same values (%s)" % k)
pi = keep["mlp", "int8"]
want = litert(pi, {"x": x16.astype(np.float32)}, ref=True)
rc, got, err = ours(pi, {"x": x16}, check=False)
if rc:
    t.diag(err)
for k in want:
    t.close(got.get(k, np.zeros(0)), want[k], 1e-6,
            "float16 .npy into an int8 model with float input (%s)" % k)

# --- 4. a legacy out-of-range quantized_dimension -------------------------
# the flatbuffers package through TF's generated schema (object API)
from tensorflow.lite.python import schema_py_generated as fb  # noqa: E402
import flatbuffers  # noqa: E402


def edit(src, dst, fn):
    """Unpack src, let fn(model) change it, write it to dst."""
    m = fb.ModelT.InitFromObj(fb.Model.GetRootAsModel(
        bytearray(open(src, "rb").read()), 0))
    got = fn(m)
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    open(dst, "wb").write(b.Output())
    return got


def qdim3(m):
    """quantized_dimension 3 on each per-channel rank-1 tensor."""
    names = []
    for x in m.subgraphs[0].tensors:
        q = x.quantization
        if (x.shape is not None and len(x.shape) == 1 and q is not None and
                q.scale is not None and len(q.scale) > 1):
            q.quantizedDimension = 3
            names.append(x.name.decode())
    return names


pc = keep["dw", "int8io"]
kc = Interpreter(model_path=pc).get_signature_runner() \
    .get_input_details().popitem()[0]
legacy = t.path("legacy.tflite")
names = edit(pc, legacy, qdim3)
t.ok(len(names) >= 1, "patched quantized_dimension 3 into per-channel "
     "biases that store it: %s" % names)
try:
    Interpreter(model_path=legacy).allocate_tensors()
    refused = ""
except (RuntimeError, ValueError) as e:
    refused = str(e)
t.ok("quantized_dimension" in refused, "LiteRT itself refuses the patched "
     "file (%s), so it is compared with the unpatched one" % refused)
x = quantize_input(pc, data("dw", 2))
want = litert(pc, {kc: x}, ref=True)
rc, got, err = ours(legacy, {kc: x}, check=False)
t.ok(rc == 0 and names and all(n in err for n in names) and
     "quantized_dimension 3" in err,
     "legacy quantized_dimension loads, warning names the tensor: %s" %
     err.strip().replace("\n", " | "))
for k in want:
    t.close(got.get(k, np.zeros(0)), want[k], 0,
            "legacy model runs as LiteRT runs the unpatched one (%s)" % k)
rc, out, err = t.run("tfk-lite", "show", legacy, check=False)
t.ok(rc == 0 and names and names[0] in err and "warning" in err,
     "tfk-lite show loads it with the warning")


# --- 5. refused: per-channel UINT8, STRING tensors ----------------------
def retype(want_type, pick):
    def fn(m):
        for i, x in enumerate(m.subgraphs[0].tensors):
            if not pick(i, x):
                continue
            x.type = want_type
            if want_type == 3:
                # as TF1 wrote it: zero points and constants moved by 128
                x.quantization.zeroPoint = [z + 128 for z in
                                            x.quantization.zeroPoint]
                buf = m.buffers[x.buffer]
                if buf.data is not None and len(buf.data):
                    buf.data = (np.asarray(buf.data, np.uint8) ^ 0x80)
    return fn


u8 = t.path("uint8.tflite")
edit(pc, u8, retype(3, lambda i, x: x.type == 9))
rc, _, err = ours(u8, {kc: np.zeros((1, 8, 8, 3), np.uint8)},
                  check=False)
try:
    Interpreter(model_path=u8).allocate_tensors()
    refused = ""
except (RuntimeError, ValueError) as e:
    refused = str(e).strip().splitlines()[0]
t.ok(rc == 1 and "uint8 weights are quantized per tensor" in err and
     refused, "uint8 per-channel weights are refused by run (%s), as "
     "LiteRT refuses them (%s)" % (err.strip(), refused))
st = t.path("string.tflite")
inp = Interpreter(model_path=pf).get_input_details()[0]["index"]
edit(pf, st, retype(5, lambda i, x: i == inp))
rc, _, err = t.run("tfk-lite", "run", st, "--input_exprs", "x=[['a']]",
                   check=False)
t.ok(rc == 1 and "string" in err.lower() and "Traceback" not in err,
     "a STRING input fed to FULLY_CONNECTED is refused by run (string "
     "models are t-tflite-str's): %s" % err.strip())
t.done()
