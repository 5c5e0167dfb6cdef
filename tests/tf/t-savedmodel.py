"""t-savedmodel: TensorFlow 2.21 as the judge of SavedModels.

Both directions (issue "Checked by TensorFlow itself", item 5):
 - what tfk-train exports loads with tf.saved_model.load, and its
   serving_default and serving_raw signatures give our outputs (1e-6),
   as saved_model_cli run does;
 - `tfk-model show --all` prints saved_model_cli show --all's text, for
   our exports and for Keras's model.export of an MLP, a CNN and a
   two-input model, with only the differences cmd/model.c's top comment
   lists normalized (op sets sorted);
 - what Keras (model.export) and tf.saved_model.save (a tf.Module) write
   runs in tfk-model run and tfk-predict with TF's outputs (1e-5);
 - the defects the issue names: a TF1 regress signature whose TensorInfo
   says float while its placeholder takes serialized Examples; signatures
   that assign variables (TF2 assign_add, TF1 AssignAdd on VariableV2),
   whose state lives as long as the loaded model; a signature without
   inputs; the exit status for an input key the signature lacks.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tftap import T  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

t = T()
ENVBIN = os.path.dirname(sys.executable)
rng = np.random.default_rng(7)


def sm_cli(*args):
    p = subprocess.run([os.path.join(ENVBIN, "saved_model_cli")] +
                       [str(a) for a in args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, cwd=t.tmp)
    if p.returncode:
        t.diag("saved_model_cli %s: exit %d: %s" % (
            " ".join(map(str, args)), p.returncode,
            p.stderr.decode()[-2000:]))
    return p.returncode, p.stdout.decode()


def norm_show(text):
    """The one difference of --all's text cmd/model.c's top comment lists
    for these models: op sets are Python sets there, sorted here."""
    def sort_set(m):
        items = sorted(x.strip() for x in m.group(2).split(","))
        return m.group(1) + "{" + ", ".join(items) + "}"
    return re.sub(r"(contains the following ops: ){([^}]*)}", sort_set, text)


def show_same(d, what):
    rc, want = sm_cli("show", "--dir", d, "--all")
    got = t.tool("tfk-model", "show", "--dir", d, "--all").decode()
    good = rc == 0 and norm_show(got) == norm_show(want)
    if not good:
        import difflib
        t.diag("".join(list(difflib.unified_diff(
            norm_show(want).splitlines(True), norm_show(got).splitlines(True),
            "saved_model_cli", "tfk-model"))[:40]))
    return t.ok(good, "show --all: %s, tfk-model == saved_model_cli" % what)


def npy_inputs(arrs):
    """key=FILE.npy;... for tfk-model run / saved_model_cli run."""
    parts = []
    for k, v in arrs.items():
        p = t.path("in-%s-%d.npy" % (k, t.n))
        np.save(p, v)
        parts.append("%s=%s" % (k, p))
    return ";".join(parts)


def ours_run(d, sig, arrs, *extra):
    out = t.path("out-%d" % t.n)
    args = ["run", "--dir", d, "--signature_def", sig, "--outdir", out]
    if arrs:
        args += ["--inputs", npy_inputs(arrs)]
    t.tool("tfk-model", *(args + list(extra)))
    return {f[:-4]: np.load(os.path.join(out, f))
            for f in os.listdir(out)}


def tf_call(d, sig, arrs):
    m = tf.saved_model.load(d)
    f = m.signatures[sig]
    res = f(**{k: tf.constant(v) for k, v in arrs.items()})
    return {k: v.numpy() for k, v in res.items()}


def same_outputs(got, want, tol, what):
    if sorted(got) != sorted(want):
        t.diag("keys %s, want %s" % (sorted(got), sorted(want)))
        return t.ok(False, what)
    g = np.concatenate([np.ravel(got[k]).astype(np.float64)
                        for k in sorted(got)])
    w = np.concatenate([np.ravel(want[k]).astype(np.float64)
                        for k in sorted(want)])
    shapes = all(np.shape(got[k]) == np.shape(want[k]) for k in got)
    if not shapes:
        t.diag("shapes %s, want %s" % ({k: np.shape(v) for k, v in
                                        got.items()},
                                       {k: np.shape(v) for k, v in
                                        want.items()}))
        return t.ok(False, what)
    return t.close(g, w, tol, what)


def input_specs(d, sig="serving_default"):
    f = tf.saved_model.load(d).signatures[sig]
    return f.structured_input_signature[1]


def write_records(path, rows):
    with tf.io.TFRecordWriter(path) as w:
        for feats in rows:
            fe = {}
            for k, v in feats.items():
                v = np.asarray(v)
                if v.dtype.kind == "f":
                    fe[k] = tf.train.Feature(float_list=tf.train.FloatList(
                        value=v.ravel().tolist()))
                elif v.dtype.kind in "iu" and v.dtype != np.uint8:
                    fe[k] = tf.train.Feature(int64_list=tf.train.Int64List(
                        value=v.ravel().tolist()))
                else:
                    fe[k] = tf.train.Feature(bytes_list=tf.train.BytesList(
                        value=[v.tobytes()]))
            w.write(tf.train.Example(features=tf.train.Features(
                feature=fe)).SerializeToString())


def predict_csv(d, recs, *extra):
    out = t.tool("tfk-predict", "--dir", d, "--csv", *extra, recs).decode()
    lines = out.strip().split("\n")
    head = lines[0].split(",")
    vals = np.array([[float(x) for x in ln.split(",")] for ln in lines[1:]])
    return head, vals


# 1. What tfk-train exports, judged by TensorFlow ------------------------

FM = "/usr/share/datasets/fashion-mnist"
train = t.path("tr.tfrecord")
with open(train, "wb") as fo:
    idx = subprocess.run([os.path.join(t.bin, "tfk-idx"), "-q", "--images",
                          FM + "/train-images-idx3-ubyte.gz", "--labels",
                          FM + "/train-labels-idx1-ubyte.gz"],
                         stdout=subprocess.PIPE, check=True).stdout
    fo.write(subprocess.run([os.path.join(t.bin, "tfk-cat"), "--take",
                             "64"], input=idx, stdout=subprocess.PIPE,
                            check=True).stdout)

SPECS = {
    "mlp": """{"model": {"class_name": "Sequential", "config": {"name": "m",
 "layers": [
  {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28],
   "name": "input_1"}},
  {"class_name": "Flatten", "config": {"name": "flatten"}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 8,
   "activation": "relu"}},
  {"class_name": "Dense", "config": {"name": "dense_1", "units": 10,
   "activation": "softmax"}}]}},
 "inputs": {"input_1": {"feature": "image", "scale": 0.00392156862745098}},
 "compile": {"optimizer": "adam", "loss": "sparse_categorical_crossentropy"},
 "fit": {"epochs": 1, "batch_size": 32}}""",
    "cnn": """{"model": {"class_name": "Sequential", "config": {"name": "c",
 "layers": [
  {"class_name": "InputLayer", "config": {"batch_input_shape":
   [null, 28, 28, 1], "name": "input_1"}},
  {"class_name": "Conv2D", "config": {"name": "conv", "filters": 4,
   "kernel_size": [3, 3], "activation": "relu"}},
  {"class_name": "MaxPooling2D", "config": {"name": "pool",
   "pool_size": [2, 2]}},
  {"class_name": "Flatten", "config": {"name": "flatten"}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 10,
   "activation": "softmax"}}]}},
 "inputs": {"input_1": {"feature": "image", "scale": 0.00392156862745098}},
 "compile": {"optimizer": "sgd", "loss": "sparse_categorical_crossentropy"},
 "fit": {"epochs": 1, "batch_size": 32}}""",
}
x_u8 = rng.integers(0, 256, (3, 28, 28), dtype=np.uint8)
for name, spec in SPECS.items():
    sp = t.path(name + ".json")
    with open(sp, "w") as fo:
        fo.write(spec)
    d = t.path("ours-" + name)
    t.tool("tfk-train", sp, train, "--out", d, "-q", "-j1")
    x = x_u8.astype(np.float32) / 255.0
    xr = x_u8
    if name == "cnn":
        x = x[..., None]
        xr = x_u8[..., None]
    m = tf.saved_model.load(d)
    # a TF1-style export: TF's loader also lists the init op's
    # signature, as for what TF1's SavedModelBuilder writes
    t.eq(sorted(m.signatures.keys()), ["__saved_model_init_op",
                                       "serving_default", "serving_raw"],
         "tfk-train %s: tf.saved_model.load loads it; signatures "
         "serving_default, serving_raw (+ the init op's)" % name)
    want = tf_call(d, "serving_default", {"input_1": x})
    same_outputs(ours_run(d, "serving_default", {"input_1": x}), want, 1e-6,
                 "tfk-train %s: serving_default, tfk-model run == TF" % name)
    rawkey = list(input_specs(d, "serving_raw"))[0]
    want_raw = tf_call(d, "serving_raw", {rawkey: xr})
    same_outputs(ours_run(d, "serving_raw", {rawkey: xr}), want_raw, 1e-6,
                 "tfk-train %s: serving_raw on uint8, tfk-model run == TF"
                 % name)
    out = t.path("cli-" + name)
    rc, _ = sm_cli("run", "--dir", d, "--tag_set", "serve",
                   "--signature_def", "serving_default", "--inputs",
                   npy_inputs({"input_1": x}), "--outdir", out)
    cli = {f[:-4]: np.load(os.path.join(out, f)) for f in os.listdir(out)} \
        if rc == 0 else {}
    same_outputs(ours_run(d, "serving_default", {"input_1": x}), cli, 1e-6,
                 "tfk-train %s: tfk-model run == saved_model_cli run" % name)
    show_same(d, "tfk-train " + name)

# 2. What Keras exports, run by tfkit ------------------------------------

keras.utils.set_random_seed(3)


def keras_model(kind):
    if kind == "mlp":
        i = keras.Input((6,), name="x")
        h = keras.layers.Dense(5, activation="relu")(i)
        return keras.Model(i, keras.layers.Dense(3)(h)), {
            "x": rng.standard_normal((4, 6)).astype(np.float32)}
    if kind == "cnn":
        i = keras.Input((8, 8, 2), name="img")
        h = keras.layers.Conv2D(3, 3, activation="relu")(i)
        h = keras.layers.MaxPooling2D()(h)
        h = keras.layers.Flatten()(h)
        return keras.Model(i, keras.layers.Dense(4,
                           activation="softmax")(h)), {
            "img": rng.standard_normal((2, 8, 8, 2)).astype(np.float32)}
    a = keras.Input((3,), name="a")
    b = keras.Input((2,), name="b")
    h = keras.layers.Concatenate()([keras.layers.Dense(4)(a), b])
    return keras.Model([a, b], keras.layers.Dense(2)(h)), {
        "a": rng.standard_normal((5, 3)).astype(np.float32),
        "b": rng.standard_normal((5, 2)).astype(np.float32)}


for kind in ("mlp", "cnn", "two-input"):
    model, feed = keras_model(kind)
    d = t.path("keras-" + kind)
    model.export(d, verbose=False)
    show_same(d, "Keras %s export" % kind)
    keys = sorted(input_specs(d))
    feed = dict(zip(keys, [feed[k] for k in sorted(feed)])) \
        if keys != sorted(feed) else feed
    want = tf_call(d, "serving_default", feed)
    same_outputs(ours_run(d, "serving_default", feed), want, 1e-5,
                 "Keras %s export: tfk-model run == TF" % kind)
    recs = t.path("keras-%s.tfrecord" % kind)
    n = len(next(iter(feed.values())))
    write_records(recs, [{k: v[r] for k, v in feed.items()}
                         for r in range(n)])
    head, vals = predict_csv(d, recs)
    okey = sorted(want)[0]
    t.ok(len(want) == 1 and head[0].startswith(okey),
         "Keras %s export: tfk-predict's columns are %s's" % (kind, okey))
    t.close(vals, want[okey].reshape(n, -1), 1e-5,
            "Keras %s export: tfk-predict == TF" % kind)


class Affine(tf.Module):
    def __init__(self):
        self.w = tf.Variable(rng.standard_normal((3, 2)).astype(np.float32))
        self.b = tf.Variable(np.float32([0.5, -1.0]))

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def __call__(self, x):
        return {"y": tf.nn.tanh(tf.matmul(x, self.w) + self.b),
                "s": tf.reduce_sum(x, axis=1)}


d = t.path("module")
tf.saved_model.save(Affine(), d)
x = rng.standard_normal((4, 3)).astype(np.float32)
xkey = list(input_specs(d))[0]
want = tf_call(d, "serving_default", {xkey: x})
same_outputs(ours_run(d, "serving_default", {xkey: x}), want, 1e-5,
             "tf.Module saved by tf.saved_model.save: tfk-model run == TF")
show_same(d, "tf.Module save")

# 3. The defects -----------------------------------------------------------

def expect_fail(rc, err, want_rc, part, what):
    good = rc == want_rc and part in err
    if not good:
        t.diag("exit %d, stderr: %s" % (rc, err.strip()))
    return t.ok(good, what)


# (1) TF1 regress: the TensorInfo says float, the placeholder takes
# serialized Examples; TF1's Session feeds the placeholder
d = t.path("tf1-regress")
g = tf.Graph()
with g.as_default():
    ser = tf.compat.v1.placeholder(tf.string, [None], name="tf_example")
    fx = tf.io.parse_example(ser, {"x": tf.io.FixedLenFeature([1],
                                                              tf.float32)})
    y = tf.identity(fx["x"] * 2.0 + 1.0, name="y")
    ti = tf.compat.v1.saved_model.utils.build_tensor_info(ser)
    ti.dtype = tf.float32.as_datatype_enum
    sig = tf.compat.v1.saved_model.signature_def_utils.build_signature_def(
        {"inputs": ti},
        {"outputs": tf.compat.v1.saved_model.utils.build_tensor_info(y)},
        "tensorflow/serving/regress")
    with tf.compat.v1.Session(graph=g) as sess:
        b = tf.compat.v1.saved_model.Builder(d)
        b.add_meta_graph_and_variables(
            sess, ["serve"], signature_def_map={"regress": sig})
        b.save()
exs = [tf.train.Example(features=tf.train.Features(feature={
    "x": tf.train.Feature(float_list=tf.train.FloatList(value=[v]))}))
    .SerializeToString() for v in (0.5, -2.0, 3.25)]
with tf.compat.v1.Session(graph=tf.Graph()) as sess:
    tf.compat.v1.saved_model.loader.load(sess, ["serve"], d)
    want = sess.run("y:0", {"tf_example:0": exs})
recs = t.path("regress.tfrecord")
with tf.io.TFRecordWriter(recs) as w:
    for e in exs:
        w.write(e)
out = t.path("out-regress")
rc, _, err = t.run("tfk-model", "run", "--dir", d, "--signature_def",
                   "regress", "--input_records", "inputs=" + recs,
                   "--outdir", out, check=False)
got = np.load(os.path.join(out, "outputs.npy")) if rc == 0 else np.zeros(0)
if rc:
    t.diag(err)
t.close(got, want, 1e-6, "TF1 regress with a float TensorInfo over a string "
        "placeholder: tfk-model run feeds the Examples as TF1 does")

# (2) signatures that assign variables: TF2 assign_add, kept for the
# loaded model's life (tfk-predict runs one batch at a time on one
# servable)


class Counter(tf.Module):
    def __init__(self):
        self.v = tf.Variable(10.0)

    @tf.function(input_signature=[])
    def inc(self):
        self.v.assign_add(1.0)
        return {"count": self.v.read_value()}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def add(self, x):
        self.v.assign_add(tf.reduce_sum(x))
        return {"count": x * 0.0 + self.v}

    @tf.function(input_signature=[])
    def get(self):
        return {"count": tf.identity(self.v)}


d = t.path("counter")
c = Counter()
tf.saved_model.save(c, d, signatures={"inc": c.inc, "add": c.add,
                                      "get": c.get})
m = tf.saved_model.load(d)
want = m.signatures["inc"]()["count"].numpy()
rc, _, err = t.run("tfk-model", "run", "--dir", d, "--signature_def",
                   "inc", "--outdir", t.path("out-inc"), check=False)
got = np.load(t.path("out-inc/count.npy")) if rc == 0 else np.zeros(0)
if rc:
    t.diag(err)
t.close(got, want, 0, "TF2 counter (assign_add, no inputs): tfk-model run "
        "with no input options == TF's first call")
m = tf.saved_model.load(d)
xs = np.float32([1.0, 2.0, 0.5, 4.0])
want = np.float32([m.signatures["add"](x=tf.constant(xs[i:i + 1]))
                   ["count"].numpy()[0] for i in range(len(xs))])
recs = t.path("add.tfrecord")
write_records(recs, [{"x": xs[i:i + 1]} for i in range(len(xs))])
rc, out, err = t.run("tfk-predict", "--dir", d, "--signature_def", "add",
                     "--batch", "1", "--csv", recs, check=False)
got = np.float32([float(v) for v in out.decode().split()[1:]]) \
    if rc == 0 else np.zeros(0)
if rc:
    t.diag(err)
t.close(got, want, 0, "TF2 counter: tfk-predict --batch 1 keeps the state "
        "from batch to batch, as TF's calls on one loaded model")

# TF1: AssignAdd and Assign on a VariableV2 (DT_FLOAT_REF)
d = t.path("tf1-counter")
g = tf.Graph()
with g.as_default():
    v = tf.compat.v1.Variable(5.0, use_resource=False, name="v")
    by = tf.compat.v1.placeholder(tf.float32, [], name="by")
    inc = tf.compat.v1.assign_add(v, by, name="inc")
    to = tf.compat.v1.placeholder(tf.float32, [], name="to")
    put = tf.compat.v1.assign(v, to, name="put")
    bi = tf.compat.v1.saved_model.utils.build_tensor_info
    sdu = tf.compat.v1.saved_model.signature_def_utils
    sigs = {"inc": sdu.build_signature_def({"by": bi(by)},
                                           {"v": bi(inc)}, "p"),
            "put": sdu.build_signature_def({"to": bi(to)},
                                           {"v": bi(put)}, "p")}
    with tf.compat.v1.Session(graph=g) as sess:
        sess.run(tf.compat.v1.global_variables_initializer())
        b = tf.compat.v1.saved_model.Builder(d)
        b.add_meta_graph_and_variables(sess, ["serve"],
                                       signature_def_map=sigs)
        b.save()
with tf.compat.v1.Session(graph=tf.Graph()) as sess:
    tf.compat.v1.saved_model.loader.load(sess, ["serve"], d)
    want = [sess.run("inc:0", {"by:0": 2.5}),
            sess.run("put:0", {"to:0": -1.0})]
got = []
for sig, arg in (("inc", "by=2.5"), ("put", "to=-1.0")):
    rc, out, err = t.run("tfk-model", "run", "--dir", d, "--signature_def",
                         sig, "--input_exprs", arg, "--outdir",
                         t.path("out-" + sig), check=False)
    if rc:
        t.diag(err)
    got.append(np.load(t.path("out-%s/v.npy" % sig)) if rc == 0 else
               np.nan)
t.close(got, want, 0, "TF1 AssignAdd/Assign on a VariableV2: tfk-model run "
        "== TF1's Session")

# (3) a missing input is named by its signature key
d = t.path("keras-two-input")
rc, _, err = t.run("tfk-model", "run", "--dir", d, "--input_exprs",
                   "a=[[1.0,2.0,3.0]]", check=False)
expect_fail(rc, err, 1, "input 'b' is not given",
            "two inputs, one given: the missing one named by its key")

# (4) an input key the signature lacks: exit 1 in both tools
rc, _, err = t.run("tfk-model", "run", "--dir", t.path("keras-mlp"),
                   "--input_exprs", "z=[[1.0]]", check=False)
expect_fail(rc, err, 1, '"z" is not a valid input key',
            "tfk-model run, unknown input key: exit 1")

rc, _, err = t.run("tfk-lite", "run", t.fixture("tflite/lite_testdata/add.bin"),
                   "--input_exprs", "b=[1.0]", check=False) \
    if os.path.exists(t.fixture("tflite/lite_testdata/add.bin")) else (-1, b"", "no add.bin")
expect_fail(rc, err, 1, "no input 'b'",
            "tfk-lite run, unknown input key: exit 1, as tfk-model")

t.done()
