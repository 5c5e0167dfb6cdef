#!/bin/sh
# tfk-model run: TensorFlow-written SavedModels run with our kernels.
# Expected values: the fixture README (half_plus_two y = 0.5 x + 2, y2 =
# 0.5 x + 3, y3 = 0.5 x2 + 3; rust_regression w = -0.8578622341156006,
# b = 0) and TensorFlow's saved_model_cli_test (regress_x_to_y on
# Examples {x: 8}, {x: 4} gives [[6.], [4.]]); the printed text is
# numpy's str() of the same values, computed by numpy here.
. "$(dirname "$0")/lib.sh"

SM=$FIX/savedmodel
TF1=$SM/half_plus_two_cpu_tf1/00000123
TF2=$SM/half_plus_two_tf2_cpu/00000123
MAT=$SM/matrix_half_plus_two/1
RUST=$SM/rust_regression_tf1

testcmd "tf1 serving_default x=[[2.0]]" \
	"tfk-model run --dir $TF1 --tag_set serve --signature_def serving_default --input_exprs 'x=[[2.0]]'" \
	'Result for output key y:\n[[3.]]\n'
testcmd "tf1 three rows" \
	"tfk-model run --dir $TF1 --input_exprs 'x=[[2.0],[3.0],[4.0]]'" \
	'Result for output key y:\n[[3. ]\n [3.5]\n [4. ]]\n'
testcmd "tf1 ints are converted to float32" \
	"tfk-model run --dir $TF1 --input_exprs 'x=[[2]]'" \
	'Result for output key y:\n[[3.]]\n'
testcmd "tf2 function library x=[2.0]" \
	"tfk-model run --dir $TF2 --tag_set serve --signature_def serving_default --input_exprs 'x=[2.0]'" \
	'Result for output key y:\n[3.]\n'
testcmd "tf1 regress_x2_to_y3" \
	"tfk-model run --dir $TF1 --signature_def regress_x2_to_y3 --input_exprs 'inputs=[[2.0]]'" \
	'Result for output key outputs:\n[[4.]]\n'
testcmd "tf2 regress_x2_to_y3" \
	"tfk-model run --dir $TF2 --signature_def regress_x2_to_y3 --input_exprs 'inputs=[2.0]'" \
	'Result for output key outputs:\n[4.]\n'
for d in TF1 TF2; do
	eval dir=\$$d
	testcmd "$d regress_x_to_y through ParseExample (saved_model_cli_test)" \
		"tfk-model run --dir $dir --signature_def regress_x_to_y --input_examples 'inputs=[{\"x\":[8.0],\"x2\":[5.0]}, {\"x\":[4.0],\"x2\":[3.0]}]'" \
		'Result for output key outputs:\n[[6.]\n [4.]]\n'
	testcmd "$d regress_x_to_y2" \
		"tfk-model run --dir $dir --signature_def regress_x_to_y2 --input_examples 'inputs=[{\"x\":[2.0]}]'" \
		'Result for output key outputs:\n[[4.]]\n'
	testcmd "$d classify_x_to_y" \
		"tfk-model run --dir $dir --signature_def classify_x_to_y --input_examples 'inputs=[{\"x\":[2.0]}]'" \
		'Result for output key scores:\n[[3.]]\n'
	testerr "$d required feature missing" \
		"tfk-model run --dir $dir --signature_def regress_x_to_y --input_examples 'inputs=[{\"x2\":[2.0]}]'" \
		1 "feature 'x' (float32) is required but could not be found"
	testerr "$d feature of the wrong kind" \
		"tfk-model run --dir $dir --signature_def regress_x_to_y --input_examples 'inputs=[{\"x\":[2]}]'" \
		1 "feature 'x': expected float values, got int64"
	testerr "$d feature with two values" \
		"tfk-model run --dir $dir --signature_def regress_x_to_y --input_examples 'inputs=[{\"x\":[2.0,1.5]}]'" \
		1 "feature 'x': expected 1 values, got 2"
done

# Records from a TFRecord file: the Examples themselves are the input.
printf '{"x":[2.5]}\n{"x":[-1.5]}\n' | tfk-json -o "$T/ex.tfrecord"
testcmd "--input_records FILE (the one string input)" \
	"tfk-model run --dir $TF2 --signature_def classify_x_to_y --input_records ex.tfrecord" \
	'Result for output key scores:\n[[3.25]\n [1.25]]\n'
testcmd "--input_records KEY=FILE" \
	"tfk-model run --dir $TF1 --signature_def regress_x_to_y --input_records inputs=ex.tfrecord" \
	'Result for output key outputs:\n[[3.25]\n [1.25]]\n'
head -c 20 "$T/ex.tfrecord" >"$T/short.tfrecord"
testerr "--input_records truncated file" \
	"tfk-model run --dir $TF1 --signature_def regress_x_to_y --input_records inputs=short.tfrecord" \
	1 "short.tfrecord: record 0 at byte 0: truncated"
printf 'garbage-garbage-garbage-garbage' >"$T/junk.tfrecord"
testerr "--input_records corrupt file" \
	"tfk-model run --dir $TF1 --signature_def regress_x_to_y --input_records inputs=junk.tfrecord" \
	1 "junk.tfrecord: record 0 at byte 0: length crc mismatch"

testcmd "matrix_half_plus_two (no variables, float_val constants)" \
	"tfk-model run --dir $MAT --input_exprs 'x=[[[1,2,3],[4,5,6],[7,8,9]]]'" \
	'Result for output key y:\n[[[2.5 3.  3.5]\n  [4.  4.5 5. ]\n  [5.5 6.  6.5]]]\n'
testcmd "rust_regression_tf1 {train, serve}: w x + b" \
	"tfk-model run --dir $RUST --tag_set serve,train --signature_def tensorflow/serving/regress --input_exprs 'x=[1.0,2.0]'" \
	'Result for output key out:\n[-0.85786223 -1.7157245 ]\n'
testerr "an input the outputs need but not given" \
	"tfk-model run --dir $RUST --tag_set serve,train --signature_def tensorflow/serving/regress --input_exprs 'y=[1.0]'" \
	1 "input 'x' is not given"

# --inputs: .npy and .npz written by numpy.
$PYTHON - "$T" <<'EOF'
import sys, numpy as np
d = sys.argv[1]
np.save(d + "/x.npy", np.array([[2.0], [3.0]]))          # float64
np.save(d + "/xi.npy", np.array([[1], [2]], dtype=np.int32))
np.savez(d + "/two.npz", a=np.array([[4.0]], dtype=np.float32),
         b=np.array([[6.0]], dtype=np.float32))
np.savez_compressed(d + "/one.npz", only=np.array([[8.0]]))
np.save(d + "/obj.npy", np.array([{"a": 1}], dtype=object))
EOF
testcmd "--inputs x=FILE.npy (float64 to float32)" \
	"tfk-model run --dir $TF1 --inputs x=x.npy" \
	'Result for output key y:\n[[3. ]\n [3.5]]\n'
testcmd "--inputs int32 .npy" \
	"tfk-model run --dir $TF1 --inputs x=xi.npy" \
	'Result for output key y:\n[[2.5]\n [3. ]]\n'
testcmd "--inputs x=FILE.npz[b]" \
	"tfk-model run --dir $TF1 --inputs 'x=two.npz[b]'" \
	'Result for output key y:\n[[5.]]\n'
testcmd "--inputs compressed npz with one array, no name" \
	"tfk-model run --dir $TF1 --inputs x=one.npz" \
	'Result for output key y:\n[[6.]]\n'
testerr "--inputs npz with two arrays and no name" \
	"tfk-model run --dir $TF1 --inputs x=two.npz" 1 "2 arrays (a, b): name one as FILE[NAME]"
testerr "--inputs npz without that array" \
	"tfk-model run --dir $TF1 --inputs 'x=two.npz[c]'" 1 "no array 'c' (arrays: a, b)"
testerr "--inputs object array (a pickle) is refused" \
	"tfk-model run --dir $TF1 --inputs x=obj.npy" 1 "object arrays are pickles"
testerr "--inputs missing file" \
	"tfk-model run --dir $TF1 --inputs x=nope.npy" 1 "nope.npy: No such file or directory"
testcmd "--input_exprs wins over --inputs for the same key" \
	"tfk-model run --dir $TF1 --inputs x=x.npy --input_exprs 'x=[[0.0]]' 2>/dev/null" \
	'Result for output key y:\n[[2.]]\n'

# --outdir: y.npy as numpy.save writes the result.
testcmd "--outdir writes KEY.npy" \
	"tfk-model run --dir $TF1 --input_exprs 'x=[[2.0],[3.0]]' --outdir out" \
	"Result for output key y:\n[[3. ]\n [3.5]]\nOutput y is saved to out/y.npy\n"
check "y.npy equals numpy.save of the values, byte for byte" $PYTHON -c '
import numpy as np, io
a = np.load("out/y.npy")
assert a.dtype == np.float32 and a.shape == (2, 1), (a.dtype, a.shape)
assert (a == np.array([[3.0], [3.5]], dtype=np.float32)).all()
b = io.BytesIO(); np.save(b, a)
assert b.getvalue() == open("out/y.npy", "rb").read()
'
testerr "--outdir refuses to overwrite" \
	"tfk-model run --dir $TF1 --input_exprs 'x=[[2.0]]' --outdir out" \
	1 "output file out/y.npy already exists; add --overwrite"
testcmd "--overwrite" \
	"tfk-model run --dir $TF1 --input_exprs 'x=[[5.0]]' --outdir out --overwrite >/dev/null && $PYTHON -c 'import numpy as np; print(np.load(\"out/y.npy\"))'" \
	'[[4.5]]\n'

# numpy's str() of float32 results over many magnitudes, by numpy itself.
check "printing matches numpy str() (wrapping, exponents, nan/inf, summary)" \
	$PYTHON - "$MAT" <<'EOF'
import sys, subprocess, numpy as np
rng = np.random.default_rng(7)
cases = [rng.standard_normal((2, 3, 3)), rng.standard_normal((1, 3, 3)) * 1e6,
         rng.standard_normal((4, 3, 3)) * 1e-6, np.round(rng.standard_normal((3, 3, 3)) * 100),
         rng.standard_normal((200, 3, 3)), [np.nan, np.inf, -np.inf, 1, 2, 3, 4, 5, 6],
         [1e10, 1, 2, 3, 4, 5, 6, 7, -8], [-4] * 9, rng.integers(-5, 5, (5, 3, 3)) / 4,
         [0.1, 0.2, 0.3, 1 / 3, 2 / 3, 1e-4, 5e-5, 123456, 1234567]]
for i, c in enumerate(cases):
    x = np.asarray(c, dtype=np.float32).reshape(-1, 3, 3)
    np.save("p.npy", x)
    want = "Result for output key y:\n%s\n" % ((x * np.float32(0.5) + np.float32(2)),)
    got = subprocess.run(["tfk-model", "run", "--dir", sys.argv[1], "--inputs", "x=p.npy"],
                         capture_output=True, text=True).stdout
    if got != want:
        sys.exit("case %d:\n%s\n---\n%s" % (i, want, got))
EOF

# A model tfk-train exported (VarHandleOp/ReadVariableOp, MatMul, BiasAdd,
# Relu, Softmax), against numpy computing the MLP from the bundle's
# weights as bundle_check.py (an independent reader) dumps them.
tfk-idx -q --images /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz \
	--labels /usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz |
	tfk-cat --take 64 >"$T/r64.tfrecord"
(cd "$T" && tfk-train "$TESTS/../examples/mlp.spec.json" r64.tfrecord --out mlp \
	--set fit.epochs=1 -q -j1 >/dev/null 2>&1)
$PYTHON -c 'import numpy as np; np.save("'"$T"'/img.npy", (np.arange(3 * 784).reshape(3, 28, 28) % 255 / 255.).astype(np.float32))'
check "exported MLP equals numpy on the bundle's weights (1e-6)" sh -c '
tfk-model run --dir mlp --inputs input_1=img.npy --outdir mo >/dev/null &&
$PYTHON "$TESTS/py/bundle_check.py" dump mlp/variables/variables >w.txt &&
$PYTHON - <<EOF
import numpy as np
w = {}
for line in open("w.txt"):
    f = line.split()
    if "dtype=1" not in f:
        continue
    shape = tuple(int(d) for d in f[2][6:].split(","))
    w[bytes.fromhex(f[0]).decode()] = np.frombuffer(bytes.fromhex(f[-1]), "<f4").reshape(shape)
x = np.load("img.npy").reshape(3, 784).astype(np.float64)
h = np.maximum(x @ w["dense/kernel"] + w["dense/bias"], 0)
z = h @ w["dense_1/kernel"] + w["dense_1/bias"]
p = np.exp(z - z.max(1, keepdims=True)); p /= p.sum(1, keepdims=True)
y = np.load("mo/dense_1.npy")
assert y.shape == (3, 10) and y.dtype == np.float32, (y.shape, y.dtype)
assert np.abs(y - p).max() < 1e-6, np.abs(y - p).max()
EOF'

# The exported CNN (Conv2D, MaxPool): the same bytes at any -j.
(cd "$T" && tfk-train "$TESTS/../examples/cnn.spec.json" r64.tfrecord --out cnn \
	--set fit.epochs=1 -q -j1 >/dev/null 2>&1)
$PYTHON -c 'import numpy as np; np.save("'"$T"'/img4.npy", (np.arange(8 * 784).reshape(8, 28, 28, 1) % 255 / 255.).astype(np.float32))'
check "CNN: -j 1 and -j 2 give the same bytes" sh -c '
tfk-model run -j 1 --dir cnn --inputs input_1=img4.npy --outdir c1 >/dev/null &&
tfk-model run -j 2 --dir cnn --inputs input_1=img4.npy --outdir c2 >/dev/null &&
cmp c1/dense.npy c2/dense.npy'

# Errors.
testerr "unknown input key lists the valid ones" \
	"tfk-model run --dir $TF1 --input_exprs 'z=[[1.0]]'" \
	1 '"z" is not a valid input key of signature serving_default; valid keys: "x"'
testerr "dtype mismatch" \
	"tfk-model run --dir $TF1 --input_exprs \"x=[['a']]\"" \
	1 "input 'x': expected float32, got string values"
testerr "float for an integer-free string input" \
	"tfk-model run --dir $TF1 --signature_def regress_x_to_y --input_exprs 'inputs=[1.0]'" \
	1 "input 'inputs': expected string, got float64 values"
testerr "shape mismatch" \
	"tfk-model run --dir $TF1 --input_exprs 'x=[1.0, 2.0]'" \
	1 "input 'x': expected float32 [?, 1], got shape [2]"
testerr "ragged literal" \
	"tfk-model run --dir $TF1 --input_exprs 'x=[[1.0],[2.0, 3.0]]'" \
	1 "ragged nested lists"
testerr "expressions are not evaluated" \
	"tfk-model run --dir $TF1 --input_exprs 'x=np.ones((1,1))'" \
	1 "names and calls are not literals"
testerr "unknown signature" \
	"tfk-model run --dir $TF1 --signature_def nope --input_exprs 'x=[[1.0]]'" \
	1 "nope"
testerr "unknown tag set" \
	"tfk-model run --dir $TF1 --tag_set gpu --input_exprs 'x=[[1.0]]'" \
	1 "could not be found in the SavedModel"
testerr "no inputs is a usage error" \
	"tfk-model run --dir $TF1" 2 "at least one of --inputs"
testerr "--input_examples must be a list" \
	"tfk-model run --dir $TF1 --signature_def regress_x_to_y --input_examples 'inputs={\"x\":[1.0]}'" \
	1 "must be a list of dicts"
mkdir -p "$T/novars"
cp "$TF1/saved_model.pb" "$T/novars/"
testerr "missing variables file" \
	"tfk-model run --dir novars --input_exprs 'x=[[1.0]]'" \
	1 "variables/variables.index"
mkdir -p "$T/badop"
# the same length keeps the protobuf valid: node Mul now names op "Mux"
$PYTHON -c '
import sys
b = open(sys.argv[1], "rb").read()
assert b.count(b"\x12\x03Mul") == 1
open(sys.argv[2], "wb").write(b.replace(b"\x12\x03Mul", b"\x12\x03Mux"))
' "$MAT/saved_model.pb" "$T/badop/saved_model.pb"
testerr "unsupported op is named" \
	"tfk-model run --dir badop --input_exprs 'x=[[[1,2,3],[4,5,6],[7,8,9]]]'" \
	1 "node Mul: op Mux is not supported"
done_testing
