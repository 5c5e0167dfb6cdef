#!/bin/sh
# tfk-lite convert: SavedModels that tfk-train exported (an MLP, the CNN,
# and a Functional model using every op family convert lowers) become
# .tflite files that (1) our interpreter runs to the SavedModel's outputs
# (tfk-model run), and (2) Arm NN's TfLite parser with the CpuRef backend
# (python3-pyarmnn, tests/py/armnn_run.py: an independent runtime) runs
# to the same outputs. The file structure is read back by
# python3-flatbuffers' raw Table API with schema.fbs slots written here.
# --quantize float16/dynamic: sizes and accuracy; every refusal.
. "$(dirname "$0")/lib.sh"

ARM="$PYTHON $TESTS/py/armnn_run.py"
export ARM

tfk-idx -q --images /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz \
	--labels /usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz |
	tfk-cat --take 64 >"$T/r64.tfrecord"
cat >"$T/mix.spec.json" <<'SPEC'
{"model": {"class_name": "Functional", "config": {"name": "mix", "layers": [
 {"class_name": "InputLayer", "name": "input_1", "inbound_nodes": [], "config": {"batch_input_shape": [null, 28, 28, 1], "dtype": "float32", "name": "input_1"}},
 {"class_name": "ZeroPadding2D", "name": "pad", "inbound_nodes": [[["input_1", 0, 0, {}]]], "config": {"name": "pad", "padding": [[1, 1], [1, 1]]}},
 {"class_name": "Conv2D", "name": "c1", "inbound_nodes": [[["pad", 0, 0, {}]]], "config": {"name": "c1", "filters": 4, "kernel_size": [3, 3], "strides": [2, 2], "use_bias": false}},
 {"class_name": "BatchNormalization", "name": "bn", "inbound_nodes": [[["c1", 0, 0, {}]]], "config": {"name": "bn"}},
 {"class_name": "Activation", "name": "r1", "inbound_nodes": [[["bn", 0, 0, {}]]], "config": {"name": "r1", "activation": "relu"}},
 {"class_name": "DepthwiseConv2D", "name": "dw", "inbound_nodes": [[["r1", 0, 0, {}]]], "config": {"name": "dw", "kernel_size": [3, 3], "depth_multiplier": 2, "padding": "same", "activation": "relu6"}},
 {"class_name": "AveragePooling2D", "name": "ap", "inbound_nodes": [[["dw", 0, 0, {}]]], "config": {"name": "ap", "pool_size": [2, 2]}},
 {"class_name": "GlobalAveragePooling2D", "name": "gap", "inbound_nodes": [[["ap", 0, 0, {}]]], "config": {"name": "gap"}},
 {"class_name": "Flatten", "name": "fl", "inbound_nodes": [[["ap", 0, 0, {}]]], "config": {"name": "fl"}},
 {"class_name": "Dense", "name": "d1", "inbound_nodes": [[["fl", 0, 0, {}]]], "config": {"name": "d1", "units": 8, "activation": "sigmoid"}},
 {"class_name": "Dense", "name": "d2", "inbound_nodes": [[["gap", 0, 0, {}]]], "config": {"name": "d2", "units": 8, "activation": "tanh"}},
 {"class_name": "Add", "name": "add", "inbound_nodes": [[["d1", 0, 0, {}], ["d2", 0, 0, {}]]], "config": {"name": "add"}},
 {"class_name": "Multiply", "name": "mul", "inbound_nodes": [[["d1", 0, 0, {}], ["d2", 0, 0, {}]]], "config": {"name": "mul"}},
 {"class_name": "Subtract", "name": "sub", "inbound_nodes": [[["add", 0, 0, {}], ["mul", 0, 0, {}]]], "config": {"name": "sub"}},
 {"class_name": "Concatenate", "name": "cat", "inbound_nodes": [[["sub", 0, 0, {}], ["gap", 0, 0, {}]]], "config": {"name": "cat", "axis": -1}},
 {"class_name": "Dense", "name": "head", "inbound_nodes": [[["cat", 0, 0, {}]]], "config": {"name": "head", "units": 10, "activation": "softmax"}}
], "input_layers": [["input_1", 0, 0]], "output_layers": [["head", 0, 0]]}},
 "inputs": {"input_1": {"feature": "image", "dtype": "uint8", "scale": 0.00392156862745098}},
 "labels": {"feature": "label", "dtype": "int64"},
 "compile": {"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.01}}, "loss": "sparse_categorical_crossentropy"},
 "fit": {"epochs": 2, "batch_size": 16, "shuffle": false}}
SPEC
(cd "$T" &&
	tfk-train "$TESTS/../examples/mlp.spec.json" r64.tfrecord --out mlp --set fit.epochs=1 -q -j1 &&
	tfk-train "$TESTS/../examples/cnn.spec.json" r64.tfrecord --out cnn --set fit.epochs=1 -q -j1 &&
	tfk-train mix.spec.json r64.tfrecord --out mix -q -j1) >/dev/null 2>&1
$PYTHON -c 'import numpy as np
np.save("'"$T"'/img3.npy", (np.arange(3 * 784).reshape(3, 28, 28) % 255 / 255.).astype(np.float32))
np.save("'"$T"'/img4.npy", (np.arange(4 * 784).reshape(4, 28, 28, 1) % 253 / 253.).astype(np.float32))'

# close A.npy B.npy TOL: max |a - b| <= TOL * max(1, |b|) elementwise
cat >"$T/close.py" <<'EOF2'
import sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
tol = float(sys.argv[3])
assert a.shape == b.shape and a.dtype == b.dtype == np.float32, (a.shape, b.shape, a.dtype, b.dtype)
err = (np.abs(a - b) / np.maximum(1.0, np.abs(b))).max()
assert err <= tol, err
EOF2

# ckptfb.py, imported by the checks below: ckpt() is the float32 weights
# by name of bundle_check.py's dump in w.txt; model(PATH) the .tflite
# file as a buffer, its root Table and vec(TABLE, SLOT), the tables of a
# vector field (python3-flatbuffers' raw Table API)
cat >"$T/ckptfb.py" <<'EOF2'
import numpy as np
import flatbuffers
from flatbuffers import number_types as N
from flatbuffers.table import Table
def ckpt():
    w = {}
    for line in open("w.txt"):
        f = line.split()
        if "dtype=1" in f:
            shape = tuple(int(d) for d in f[2][6:].split(","))
            w[bytes.fromhex(f[0]).decode()] = np.frombuffer(bytes.fromhex(f[-1]), "<f4").reshape(shape)
    return w
def model(path):
    buf = bytearray(open(path, "rb").read())
    def vec(t, s):
        o = t.Offset(4 + 2 * s)
        return [Table(buf, t.Indirect(t.Vector(o) + 4 * i)) for i in range(t.VectorLen(o))] if o else []
    return buf, Table(buf, flatbuffers.encode.Get(N.UOffsetTFlags.packer_type, buf, 0)), vec
EOF2

# --- float: ours == SavedModel, Arm NN == ours ---------------------------
for m in mlp:mlp:img3:dense_1 cnn:cnn:img4:dense mix:mix:img4:head; do
	IFS=: read -r name dir img key <<EOF3
$m
EOF3
	check "$name: converts" tfk-lite convert --saved_model_dir $dir -o $name.tflite
	check "$name: tfk-lite run equals tfk-model run (1e-5)" sh -c "
mkdir -p $name-sm $name-tl &&
tfk-model run --dir $dir --inputs input_1=$img.npy --outdir $name-sm >/dev/null &&
tfk-lite run $name.tflite --inputs input_1=$img.npy --outdir $name-tl >/dev/null &&
$PYTHON close.py $name-tl/$key.npy $name-sm/$key.npy 1e-5"
	check "$name: Arm NN CpuRef equals tfk-lite run (1e-5)" sh -c "
$ARM $name.tflite $img.npy $name-arm.npy 2>/dev/null &&
$PYTHON close.py $name-arm.npy $name-tl/$key.npy 1e-5"
done

# --- structure, read by python3-flatbuffers with schema.fbs slots --------
cat >"$T/fbdump.py" <<'EOF2'
import sys
import flatbuffers
from flatbuffers import number_types as N
from flatbuffers.table import Table

buf = bytearray(open(sys.argv[1], "rb").read())
assert buf[4:8] == b"TFL3", buf[4:8]

def root():
    return Table(buf, flatbuffers.encode.Get(N.UOffsetTFlags.packer_type, buf, 0))

def off(t, slot):
    return t.Offset(4 + 2 * slot)

def scalar(t, slot, flags, default):
    o = off(t, slot)
    return t.Get(flags, t.Pos + o) if o else default

def vec(t, slot):
    o = off(t, slot)
    if not o:
        return []
    return [t.Vector(o) + 4 * i for i in range(t.VectorLen(o))]

def table(t, pos):
    return Table(buf, t.Indirect(pos))

def string(t, slot):
    o = off(t, slot)
    return t.String(o + t.Pos).decode() if o else None

m = root()
print("version", scalar(m, 0, N.Uint32Flags, 0))
for p in vec(m, 1):   # OperatorCode: deprecated_builtin_code, _, version, builtin_code
    c = table(m, p)
    print("opcode", scalar(c, 0, N.Int8Flags, 0), scalar(c, 3, N.Int32Flags, 0), scalar(c, 2, N.Int32Flags, 1))
sg = table(m, vec(m, 2)[0])
ops = [table(sg, p) for p in vec(sg, 3)]
codes = [table(m, p) for p in vec(m, 1)]
for o in ops:
    c = codes[scalar(o, 0, N.Uint32Flags, 0)]
    print("op", scalar(c, 3, N.Int32Flags, 0), "options", scalar(o, 3, N.Uint8Flags, 0))
bufs = [table(m, p) for p in vec(m, 4)]
print("buffer0", len(vec(bufs[0], 0)))
for p in vec(m, 6):
    md = table(m, p)
    b = bufs[scalar(md, 1, N.Uint32Flags, 0)]
    o = off(b, 0)
    data = bytes(buf[b.Vector(o):b.Vector(o) + b.VectorLen(o)])
    print("metadata", string(md, 0), data.rstrip(b"\0").decode())
for p in vec(m, 7):
    s = table(m, p)
    ins = [string(table(s, q), 0) for q in vec(s, 0)]
    outs = [string(table(s, q), 0) for q in vec(s, 1)]
    print("signature", string(s, 2), ins, outs)
tensors = [table(sg, p) for p in vec(sg, 0)]
i = scalar(sg, 1, N.Int32Flags, 0)
t = tensors[flatbuffers.encode.Get(N.Int32Flags.packer_type, buf, vec(sg, 1)[0])]
shape = [flatbuffers.encode.Get(N.Int32Flags.packer_type, buf, q) for q in vec(t, 0)]
sig = [flatbuffers.encode.Get(N.Int32Flags.packer_type, buf, q) for q in vec(t, 7)]
print("input", string(t, 3), shape, sig)
EOF2
testcmd "mix: version 3, opcodes (deprecated, builtin, version), operators, signature, metadata" \
	'$PYTHON fbdump.py mix.tflite' \
"version 3
opcode 34 34 1
opcode 3 3 1
opcode 4 4 1
opcode 1 1 1
opcode 22 22 1
opcode 9 9 1
opcode 14 14 1
opcode 40 40 1
opcode 0 0 1
opcode 18 18 1
opcode 41 41 1
opcode 2 2 1
opcode 25 25 1
op 34 options 22
op 3 options 1
op 4 options 2
op 1 options 5
op 22 options 17
op 9 options 8
op 14 options 0
op 40 options 27
op 9 options 8
op 0 options 11
op 18 options 21
op 41 options 28
op 2 options 10
op 9 options 8
op 25 options 9
buffer0 0
metadata min_runtime_version 1.14.0
signature serving_default ['input_1'] ['head']
input input_1:0 [1, 28, 28, 1] [-1, 28, 28, 1]"
# BatchNormalization folded into the conv, activations fused (show's text)
testcmd "mix: batch norm folded, relu/relu6/tanh fused, stride and depth multiplier kept" \
	'tfk-lite show mix.tflite | grep -E "^    [0-9]+ (CONV|DEPTHWISE|FULLY)" | sed "s/ inputs.*outputs \[[0-9]*\]//"' \
"    1 CONV_2D (3) v1 padding=VALID stride_w=2 stride_h=2 fused_activation_function=RELU dilation_w_factor=1 dilation_h_factor=1
    2 DEPTHWISE_CONV_2D (4) v1 padding=SAME stride_w=1 stride_h=1 depth_multiplier=2 fused_activation_function=RELU6 dilation_w_factor=1 dilation_h_factor=1
    5 FULLY_CONNECTED (9) v1 fused_activation_function=NONE weights_format=0 keep_num_dims=false asymmetric_quantize_inputs=false
    8 FULLY_CONNECTED (9) v1 fused_activation_function=TANH weights_format=0 keep_num_dims=false asymmetric_quantize_inputs=false
    13 FULLY_CONNECTED (9) v1 fused_activation_function=NONE weights_format=0 keep_num_dims=false asymmetric_quantize_inputs=false"
testcmd "cnn: FULLY_CONNECTED weights are the kernel transposed, conv filter OHWI" '
	$PYTHON "$TESTS/py/bundle_check.py" dump cnn/variables/variables >w.txt &&
	$PYTHON - <<EOF2
import numpy as np
from ckptfb import N, Table, ckpt, model
w = ckpt()
buf, m, vec = model("cnn.tflite")
bufs = vec(m, 4)
sg = vec(m, 2)[0]
got = {}
for t in vec(sg, 0):
    o = t.Offset(4 + 2 * 3)
    name = t.String(o + t.Pos).decode()
    o = t.Offset(4 + 2 * 2)
    b = bufs[t.Get(N.Uint32Flags, t.Pos + o)] if o else None
    if b is not None and b.Offset(4):
        d = b.Offset(4)
        got[name] = np.frombuffer(bytes(buf[b.Vector(d):b.Vector(d) + b.VectorLen(d)]), "<f4")
print(np.array_equal(got["dense/MatMul/weights"], w["dense/kernel"].T.ravel()),
      np.array_equal(got["conv2d/Conv2D/filter"], w["conv2d/kernel"].transpose(3, 0, 1, 2).ravel()),
      np.array_equal(got["dense/MatMul/bias"], w["dense/bias"]))
EOF2' "True True True"

# --- --quantize float16 / dynamic ----------------------------------------
# float16: weights FLOAT16 + DEQUANTIZE (v3) in front of their users, file
# about half; outputs within float16 rounding of the SavedModel's.
# dynamic: INT8 symmetric per-channel weights (scale max|w|/127 per output
# channel, zero point 0) + DEQUANTIZE (v2), file about a quarter.
for q in float16 dynamic; do
	check "cnn --quantize $q: converts and runs" sh -c "
tfk-lite convert --saved_model_dir cnn -o cnn-$q.tflite --quantize $q &&
mkdir -p cnn-$q && tfk-lite run cnn-$q.tflite --inputs input_1=img4.npy --outdir cnn-$q >/dev/null"
done
testcmd "float16 and dynamic: sizes, outputs near the float model's, same classes" '
	$PYTHON - <<EOF2
import os
import numpy as np
f = os.path.getsize("cnn.tflite")
h = os.path.getsize("cnn-float16.tflite") / f
d = os.path.getsize("cnn-dynamic.tflite") / f
print(0.49 < h < 0.52, 0.24 < d < 0.28)
ref = np.load("cnn-sm/dense.npy")
for q, tol in (("float16", 1e-3), ("dynamic", 2e-2)):
    y = np.load("cnn-%s/dense.npy" % q)
    print(q, np.abs(y - ref).max() < tol, (y.argmax(1) == ref.argmax(1)).all())
EOF2' "True True\nfloat16 True True\ndynamic True True"
testcmd "dynamic: int8 filter per output channel, symmetric, from the checkpoint" '
	$PYTHON "$TESTS/py/bundle_check.py" dump cnn/variables/variables >w.txt &&
	$PYTHON - <<EOF2
import numpy as np
from ckptfb import N, Table, ckpt, model
w = ckpt()
buf, m, vec = model("cnn-dynamic.tflite")
def raw(t, s, dt):
    o = t.Offset(4 + 2 * s)
    return np.frombuffer(bytes(buf[t.Vector(o):t.Vector(o) + t.VectorLen(o) * np.dtype(dt).itemsize]), dt)
bufs = vec(m, 4)
for t in vec(vec(m, 2)[0], 0):
    if t.String(t.Offset(10) + t.Pos).decode() != "conv2d_1/Conv2D/filter_int8":
        continue
    assert t.Get(N.Uint8Flags, t.Pos + t.Offset(6)) == 9  # INT8
    q = Table(buf, t.Indirect(t.Pos + t.Offset(12)))
    scale, zp = raw(q, 2, "<f4"), raw(q, 3, "<i8")
    axis = q.Get(N.Int32Flags, q.Pos + q.Offset(16)) if q.Offset(16) else 0
    data = raw(bufs[t.Get(N.Uint32Flags, t.Pos + t.Offset(8))], 0, "i1").reshape(32, 5, 5, 32)
    k = w["conv2d_1/kernel"].transpose(3, 0, 1, 2)
    want_s = (np.abs(k).reshape(32, -1).max(1) / 127).astype(np.float32)
    want_q = np.clip(np.round(k / want_s[:, None, None, None]), -127, 127)
    print(axis, len(scale), (zp == 0).all(), np.allclose(scale, want_s, rtol=1e-6),
          np.abs(data - want_q).max() <= 1)
EOF2' "0 32 True True True"
testcmd "float16: DEQUANTIZE v3 from FLOAT16, min_runtime_version 1.15.0" \
	'tfk-lite show cnn-float16.tflite | grep -E "DEQUANTIZE|conv2d/Conv2D/filter_fp16|min_runtime" | head -n 3 | sed "s/ inputs.*//; s/ buffer.*//"' \
"min_runtime_version: 1.15.0
    1 'conv2d/Conv2D/filter_fp16' FLOAT16 [32, 5, 5, 1]
    0 DEQUANTIZE (6) v3"

# --- --quantize int8: full integer --------------------------------------
# An MLP trained on 2048 records; calibrated on them; Arm NN runs the
# float and the int8 file on 300 test images: accuracy within 1 point.
tfk-idx -q --images /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz \
	--labels /usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz |
	tfk-cat --take 2048 >"$T/r2k.tfrecord"
(cd "$T" && tfk-train "$TESTS/../examples/mlp.spec.json" r2k.tfrecord --out mlp2 \
	--set fit.epochs=2 -q -j1) >/dev/null 2>&1
$PYTHON -c 'import gzip, numpy as np
d = "/usr/share/datasets/fashion-mnist/"
img = np.frombuffer(gzip.open(d + "t10k-images-idx3-ubyte.gz").read()[16:], np.uint8).reshape(-1, 28, 28)
lab = np.frombuffer(gzip.open(d + "t10k-labels-idx1-ubyte.gz").read()[8:], np.uint8)
np.save("'"$T"'/t300.npy", (img[:300] / np.float32(255)).astype(np.float32))
np.save("'"$T"'/l300.npy", lab[:300])'
check "mlp2: float and int8 (float I/O) convert" sh -c '
tfk-lite convert --saved_model_dir mlp2 -o mlp2.tflite &&
tfk-lite convert --saved_model_dir mlp2 -o mlp2-int8.tflite --quantize int8 --representative r2k.tfrecord'
testcmd "mlp2 int8: Arm NN accuracy on 300 test images within 1 point of float" '
	$ARM mlp2.tflite t300.npy af.npy 2>/dev/null && $ARM mlp2-int8.tflite t300.npy a8.npy 2>/dev/null &&
	$PYTHON -c "import numpy as np
l = np.load(\"l300.npy\")
f = (np.load(\"af.npy\").argmax(1) == l).mean()
q = (np.load(\"a8.npy\").argmax(1) == l).mean()
print(f > 0.6, abs(f - q) <= 0.01)"' "True True"
check "cnn int8 and int8 I/O convert" sh -c '
tfk-lite convert --saved_model_dir cnn -o cnn-int8.tflite --quantize int8 --representative r64.tfrecord --calibration_records 32 &&
tfk-lite convert --saved_model_dir cnn -o cnn-int8io.tflite --quantize int8 --representative r64.tfrecord --inference-type int8'
testcmd "cnn int8: QUANTIZE first, int8 versions, DEQUANTIZE last; size <= 0.27 of float" '
	tfk-lite show cnn-int8.tflite | grep -E "^    [0-9]+ [A-Z_0-9]+ \([0-9]+\) v[0-9]" | sed "s/ inputs.*//"
	$PYTHON -c "import os; print(os.path.getsize(\"cnn-int8.tflite\") / os.path.getsize(\"cnn.tflite\") <= 0.27)"' \
"    0 QUANTIZE (114) v1
    1 CONV_2D (3) v3
    2 CONV_2D (3) v3
    3 MAX_POOL_2D (17) v2
    4 RESHAPE (22) v1
    5 FULLY_CONNECTED (9) v4
    6 SOFTMAX (25) v2
    7 DEQUANTIZE (6) v2
True"
cat >"$T/q8check.py" <<'EOF2'
import sys
import numpy as np
import flatbuffers
from flatbuffers import number_types as N
from flatbuffers.table import Table
buf = bytearray(open(sys.argv[1], "rb").read())
m = Table(buf, flatbuffers.encode.Get(N.UOffsetTFlags.packer_type, buf, 0))
def vec(t, s):
    o = t.Offset(4 + 2 * s)
    return [Table(buf, t.Indirect(t.Vector(o) + 4 * i)) for i in range(t.VectorLen(o))] if o else []
def ints(t, s):
    o = t.Offset(4 + 2 * s)
    return [flatbuffers.encode.Get(N.Int32Flags.packer_type, buf, t.Vector(o) + 4 * i) for i in range(t.VectorLen(o))] if o else []
def raw(t, s, dt):
    o = t.Offset(4 + 2 * s)
    return np.frombuffer(bytes(buf[t.Vector(o):t.Vector(o) + t.VectorLen(o) * np.dtype(dt).itemsize]), dt)
sg = vec(m, 2)[0]
T = vec(sg, 0)
codes = [c.Get(N.Int32Flags, c.Pos + c.Offset(10)) for c in vec(m, 1)]
def q(i):
    t = T[i]
    qp = Table(buf, t.Indirect(t.Pos + t.Offset(12)))
    return raw(qp, 2, "<f4"), raw(qp, 3, "<i8")
def ty(i):
    return T[i].Get(N.Uint8Flags, T[i].Pos + T[i].Offset(6))
ok = True
for o in vec(sg, 3):
    code = codes[o.Get(N.Uint32Flags, o.Pos + o.Offset(4)) if o.Offset(4) else 0]
    i, out = ints(o, 1), ints(o, 2)
    if code in (3, 9):   # CONV_2D, FULLY_CONNECTED: int32 bias scale = in * w
        si, _ = q(i[0]); sw, _ = q(i[1]); sb, zb = q(i[2])
        ok &= ty(i[1]) == 9 and ty(i[2]) == 2 and (zb == 0).all()
        ok &= np.allclose(sb, si[0] * sw, rtol=1e-6)
        ok &= (len(sw) == 32) == (code == 3)   # per channel for conv only
    if code == 25:       # SOFTMAX: output 1/256, zero point -128
        s, z = q(out[0])
        ok &= s[0] == np.float32(1 / 256) and z[0] == -128
    if code in (17, 22): # MAX_POOL_2D, RESHAPE: output as input
        ok &= (q(out[0])[0] == q(i[0])[0]).all() and (q(out[0])[1] == q(i[0])[1]).all()
ins, outs = ints(sg, 1), ints(sg, 2)
print(ok, ty(ins[0]), ty(outs[0]))
EOF2
testcmd "cnn int8: bias scales in*w, per-channel conv, softmax 1/256 -128, pool/reshape keep scale; float ends" \
	'$PYTHON q8check.py cnn-int8.tflite' "True 0 0"
testcmd "--inference-type int8: INT8 input and output, no QUANTIZE/DEQUANTIZE" \
	'$PYTHON q8check.py cnn-int8io.tflite; tfk-lite show cnn-int8io.tflite | grep -c "QUANTIZE" || :' "True 9 9\n0"
testcmd "cnn int8: Arm NN on 4 images within 3/256 of the float file" '
	$PYTHON -c "import numpy as np; np.save(\"t4.npy\", np.load(\"t300.npy\")[:4, :, :, None])" &&
	$ARM cnn.tflite t4.npy cf.npy 2>/dev/null && $ARM cnn-int8.tflite t4.npy c8.npy 2>/dev/null &&
	$PYTHON -c "import numpy as np; print(np.abs(np.load(\"cf.npy\") - np.load(\"c8.npy\")).max() <= 3 / 256)"' "True"

# --- int8 files run by tfk-lite run (lib/model/tflint8.c) ------------------
testcmd "cnn int8: tfk-lite run within 1 quantum (1/256) of Arm NN" '
	mkdir -p r8 && tfk-lite run cnn-int8.tflite --inputs input_1=t4.npy --outdir r8 >/dev/null &&
	$PYTHON -c "import numpy as np; print(np.abs(np.load(\"r8/dense.npy\") - np.load(\"c8.npy\")).max() <= 1 / 256 + 1e-7)"' "True"
testcmd "mlp2 int8: tfk-lite run within 1 quantum of Arm NN on 300 images; accuracy within 1 point of our float run" '
	mkdir -p m8 mf && tfk-lite run mlp2-int8.tflite --inputs input_1=t300.npy --outdir m8 >/dev/null &&
	tfk-lite run mlp2.tflite --inputs input_1=t300.npy --outdir mf >/dev/null &&
	$PYTHON -c "import numpy as np
l = np.load(\"l300.npy\")
q, f = np.load(\"m8/dense_1.npy\"), np.load(\"mf/dense_1.npy\")
print(np.abs(q - np.load(\"a8.npy\")).max() <= 1 / 256 + 1e-7, abs((q.argmax(1) == l).mean() - (f.argmax(1) == l).mean()) <= 0.01)"' "True True"
testcmd "--inference-type int8: the int8 output is the float-I/O file's before its DEQUANTIZE" '
	mkdir -p i8 && tfk-lite run cnn-int8io.tflite --inputs input_1=t4.npy --outdir i8 >/dev/null &&
	$PYTHON -c "import numpy as np
q = np.load(\"i8/dense.npy\")
print(q.dtype, np.array_equal((q.astype(np.float32) + 128) / 256, np.load(\"r8/dense.npy\")))"' "int8 True"
# MEAN (GlobalAveragePooling2D) in int8: the mix model (MEAN, and a
# Dense tanh whose TANH int8 cannot fuse), and a conv + GAP model with
# keepdims either way whose output is the MEAN's (through a RESHAPE
# that keeps its scale): ours within one output quantum of Arm NN.
for kd in true false; do
	cat >"$T/gap-$kd.spec.json" <<SPEC
{"model": {"class_name": "Functional", "config": {"name": "gap", "layers": [
 {"class_name": "InputLayer", "name": "input_1", "inbound_nodes": [], "config": {"batch_input_shape": [null, 28, 28, 1], "dtype": "float32", "name": "input_1"}},
 {"class_name": "Conv2D", "name": "c1", "inbound_nodes": [[["input_1", 0, 0, {}]]], "config": {"name": "c1", "filters": 10, "kernel_size": [3, 3], "strides": [2, 2], "activation": "relu"}},
 {"class_name": "GlobalAveragePooling2D", "name": "gap", "inbound_nodes": [[["c1", 0, 0, {}]]], "config": {"name": "gap", "keepdims": $kd}},
 {"class_name": "Flatten", "name": "fl", "inbound_nodes": [[["gap", 0, 0, {}]]], "config": {"name": "fl"}}
], "input_layers": [["input_1", 0, 0]], "output_layers": [["fl", 0, 0]]}},
 "inputs": {"input_1": {"feature": "image", "dtype": "uint8", "scale": 0.00392156862745098}},
 "labels": {"feature": "label", "dtype": "int64"},
 "compile": {"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.01}}, "loss": "sparse_categorical_crossentropy"},
 "fit": {"epochs": 1, "batch_size": 16, "shuffle": false}}
SPEC
	(cd "$T" && tfk-train gap-$kd.spec.json r64.tfrecord --out gap-$kd -q -j1) >/dev/null 2>&1
done
# within1 MODEL OURS.npy ARM.npy: max |ours - arm| in quanta of the int8
# tensor the model's DEQUANTIZE reads, <= 1
cat >"$T/within1.py" <<'EOF2'
import json, subprocess, sys
import numpy as np
m = json.loads(subprocess.check_output(["tfk-lite", "show", "--json", sys.argv[1]]))
sg = m["subgraphs"][0]
deq = [o for o in sg["operators"] if o["op"] == "DEQUANTIZE"][-1]
s = sg["tensors"][deq["inputs"][0]]["quantization"]["scale"][0]
a, b = np.load(sys.argv[2]), np.load(sys.argv[3])
print(a.shape == b.shape and np.abs(a - b).max() <= s * 1.001)
EOF2
testcmd "mix int8 (MEAN; TANH not fused into FULLY_CONNECTED): MEAN and TANH ops, v2" \
	'tfk-lite convert --saved_model_dir mix -o mix8.tflite --quantize int8 --representative r64.tfrecord --calibration_records 16 &&
	tfk-lite show mix8.tflite | grep -E "^    [0-9]+ (MEAN|TANH|FULLY)" | sed "s/ inputs.*keep_dims=/ keep_dims=/; s/ inputs.*fused_activation_function=/ /; s/ inputs.*//; s/ weights_format.*//; s/^ *//"' \
	"6 FULLY_CONNECTED (9) v4 NONE\n8 MEAN (40) v2 keep_dims=false\n9 FULLY_CONNECTED (9) v4 NONE\n10 TANH (28) v2\n15 FULLY_CONNECTED (9) v4 NONE"
testcmd "mix int8: tfk-lite run within 1 quantum of Arm NN" '
	mkdir -p x8 && tfk-lite run mix8.tflite --inputs input_1=t4.npy --outdir x8 >/dev/null &&
	$ARM mix8.tflite t4.npy x8-arm.npy 2>/dev/null && $PYTHON within1.py mix8.tflite x8/head.npy x8-arm.npy' "True"
for kd in true false; do
	testcmd "GAP keepdims=$kd int8: MEAN keep_dims=$kd; run within 1 quantum of Arm NN on 300 images" "
	tfk-lite convert --saved_model_dir gap-$kd -o gap-$kd.tflite --quantize int8 --representative r64.tfrecord --calibration_records 32 &&
	tfk-lite show gap-$kd.tflite | grep -o 'MEAN (40) v2 .*' | sed 's/ inputs.*keep_dims=/ /' &&
	\$PYTHON -c 'import numpy as np; np.save(\"t300c.npy\", np.load(\"t300.npy\")[:, :, :, None])' &&
	mkdir -p g-$kd && tfk-lite run gap-$kd.tflite --inputs input_1=t300c.npy --outdir g-$kd >/dev/null &&
	\$ARM gap-$kd.tflite t300c.npy g-$kd-arm.npy 2>/dev/null && \$PYTHON within1.py gap-$kd.tflite g-$kd/fl.npy g-$kd-arm.npy" \
	"MEAN (40) v2 $kd\nTrue"
done

# --- refusals --------------------------------------------------------------
cat >"$T/leaky.spec.json" <<'SPEC'
{"model": {"class_name": "Sequential", "config": {"name": "lk", "layers": [
 {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28], "dtype": "float32", "name": "input_1"}},
 {"class_name": "Flatten", "config": {"name": "fl"}},
 {"class_name": "Dense", "config": {"name": "d", "units": 10}},
 {"class_name": "LeakyReLU", "config": {"name": "lr"}}]}},
 "inputs": {"input_1": {"feature": "image", "dtype": "uint8", "scale": 0.00392156862745098}},
 "labels": {"feature": "label", "dtype": "int64"},
 "compile": {"optimizer": "sgd", "loss": "sparse_categorical_crossentropy"},
 "fit": {"epochs": 1, "batch_size": 32}}
SPEC
(cd "$T" && tfk-train leaky.spec.json r64.tfrecord --out leaky -q -j1) >/dev/null 2>&1
testerr "an op convert does not lower is named, and no file is left" \
	'tfk-lite convert --saved_model_dir leaky -o lk.tflite; rc=$?; test ! -e lk.tflite && exit $rc' \
	1 "tfk-lite: leaky: signature serving_default: node lr/LeakyRelu: op LeakyRelu is not supported by convert"
testerr "missing SavedModel" 'tfk-lite convert --saved_model_dir nope -o x.tflite' 1 "nope"
testerr "unknown signature" 'tfk-lite convert --saved_model_dir mlp --signature_def zz -o x.tflite' \
	1 'could not find signature "zz"'
testerr "no --saved_model_dir" 'tfk-lite convert -o x.tflite' 2 "convert needs --saved_model_dir"
testerr "no -o" 'tfk-lite convert --saved_model_dir mlp' 2 "convert needs -o FILE"
testerr "unknown --quantize" 'tfk-lite convert --saved_model_dir mlp -o x.tflite --quantize int4' \
	2 "--quantize: expected float16, dynamic or int8, got 'int4'"
testerr "--quantize int8 needs --representative" \
	'tfk-lite convert --saved_model_dir mlp -o x.tflite --quantize int8' \
	2 "--quantize int8 needs --representative FILE"
testerr "--representative without int8" \
	'tfk-lite convert --saved_model_dir mlp -o x.tflite --representative r64.tfrecord' \
	2 "--representative is for --quantize int8"
testerr "unknown --inference-type" \
	'tfk-lite convert --saved_model_dir mlp -o x.tflite --quantize int8 --representative r64.tfrecord --inference-type uint8' \
	2 "--inference-type: expected float or int8, got 'uint8'"
testerr "int8 calibration needs the training spec (a TF-written SavedModel has none)" \
	'tfk-lite convert --saved_model_dir "$FIX/savedmodel/half_plus_two_tf2_cpu/00000123" -o x.tflite --quantize int8 --representative r64.tfrecord; rc=$?; test ! -e x.tflite && exit $rc' \
	1 "calibration needs the training spec tfk-train saves"

done_testing
