#!/bin/sh
# tfk-lite run: the TensorFlow-written float fixtures to the values their
# README states, small models of every supported op family built by
# python3-flatbuffers with outputs computed by numpy from TensorFlow's
# documented semantics (tests/py/tflite_fb.py ops), and every refusal:
# quantized models, custom ops, missing or unknown inputs, signatures.
. "$(dirname "$0")/lib.sh"

L=$FIX/tflite
HW=$L/hello_world
TD=$L/lite_testdata
FB="$PYTHON $TESTS/py/tflite_fb.py"
export L HW TD FB

# --- fixtures: README values ---------------------------------------------
testcmd "hello_world float: x = 0, 1, 3, 5 give the reference pass" '
	for x in 0 1 3 5; do
		mkdir o$x
		tfk-lite run "$HW/hello_world_float.tflite" --input_exprs "dense_input=[[$x.0]]" --outdir o$x >/dev/null || exit 1
	done
	$PYTHON -c "import numpy as np, math
ref = {0: 0.0264056, 1: 0.8630436, 3: 0.1276463, 5: -0.9565187}
for x in (0, 1, 3, 5):
    y = float(np.load(\"o%d/dense_2.npy\" % x)[0, 0])
    print(abs(y - ref[x]) < 1e-5 and abs(y - math.sin(x)) < 0.05)"' \
	"True\nTrue\nTrue\nTrue"
testcmd "hello_world float: printed as numpy prints" \
	'tfk-lite run "$HW/hello_world_float.tflite" --input_exprs "dense_input=[[1.0]]" | head -n 1' \
	"Result for output key dense_2:"
testcmd "add.bin: resized to [2], {1, 3} -> {3, 9}" \
	'tfk-lite run "$TD/add.bin" --input_exprs "a=[1.0, 3.0]"' \
	"Result for output key x:\n[3. 9.]"
testcmd "multi_add.bin: x = a + b + c, y = d + b + c" \
	'tfk-lite run "$TD/multi_add.bin" --input_exprs "a=[[[[0.1],[0.2]],[[0.3],[0.4]]]];b=[[[[0.001],[0.002]],[[0.003],[0.004]]]];c=[[[[0.0],[0.0]],[[0.0],[0.0]]]];d=[[[[0.01],[0.02]],[[0.03],[0.04]]]]" | tr -d " \n"' \
	"Resultforoutputkeyx:[[[[0.101][0.202]][[0.303][0.404]]]]Resultforoutputkeyy:[[[[0.011][0.022]][[0.033][0.044]]]]"
testcmd "multi_signatures.bin: add x + 2" \
	'tfk-lite run "$TD/multi_signatures.bin" --signature add --input_exprs "x=[2.0, 4.0]"' \
	"Result for output key output_0:\n[4. 6.]"
testcmd "multi_signatures.bin: sub x - 3" \
	'tfk-lite run "$TD/multi_signatures.bin" --signature sub --input_exprs "x=[2, 4, 6]"' \
	"Result for output key output_0:\n[-1.  1.  3.]"
testcmd "serving_half_plus_two: x = 2 -> 3 (no signature: tensor names)" \
	'tfk-lite run "$L/serving_half_plus_two/model.tflite" --input_exprs "x=[[2.0]]"' \
	"Result for output key y:\n[[3.]]"
$PYTHON -c "import numpy as np; np.save('$T/x.npy', np.array([[2.0], [4.0]], np.float32))"
testcmd "--inputs from .npy, a batch of 2" \
	'tfk-lite run "$L/serving_half_plus_two/model.tflite" --inputs x=x.npy' \
	"Result for output key y:\n[[3.]\n [4.]]"

# --- every op family against numpy ---------------------------------------
mkdir "$T/ops"
check "python3-flatbuffers writes the op models" $FB ops ops
testcmd "every op model agrees with numpy" '
	for n in conv conv_dilated depthwise pool fc_softmax shapes elementwise fp16; do
		mkdir -p out/$n
		tfk-lite run ops/$n.tflite --inputs x=ops/$n.in.npy --outdir out/$n >/dev/null || echo "$n: failed"
	done
	$PYTHON -c "
import numpy as np
for n in \"conv conv_dilated depthwise pool fc_softmax shapes elementwise fp16\".split():
    g, w = np.load(\"out/%s/y.npy\" % n), np.load(\"ops/%s.out.npy\" % n)
    print(n, g.shape == w.shape and np.allclose(g, w, rtol=1e-5, atol=1e-6))"' \
"conv True
conv_dilated True
depthwise True
pool True
fc_softmax True
shapes True
elementwise True
fp16 True"

# --- refusals --------------------------------------------------------------
# (int8 models run since lib/model/tflint8.c: the README's int8 inputs)
testcmd "int8 model: README inputs dequantize within 0.05 of sin(x)" '
	for q in -96 -63 -34 0; do
		mkdir q$q && tfk-lite run "$HW/hello_world_int8.tflite" --input_exprs "dense_input=[[$q]]" --outdir q$q >/dev/null || exit 1
	done
	$PYTHON -c "import numpy as np, math
for q, x in ((-96, 0.77), (-63, 1.57), (-34, 2.3), (0, 3.14)):
    y = np.load(\"q%d/dense_2.npy\" % q)
    print(y.dtype == np.int8 and abs(0.008290956728160381 * (int(y[0, 0]) - 5) - math.sin(x)) < 0.05)"' \
	"True\nTrue\nTrue\nTrue"
testcmd "add_quantized.bin (uint8): raw {1, 3} -> {3, 9}" \
	'tfk-lite run "$TD/add_quantized.bin" --input_exprs "input=[1, 3]"' \
	"Result for output key output:\n[3 9]"
testerr "uint8 input: a value outside [0, 255] is refused" \
	'tfk-lite run "$TD/add_quantized.bin" --input_exprs "input=[1, 256]"' 1 \
	"add_quantized.bin: input 'input': value 256 out of range for uint8"
mkdir "$T/u8"
check "python3-flatbuffers writes the refused uint8 models" $FB uint8 u8
testerr "uint8 per-channel weights refused, naming the operator and tensor" \
	'tfk-lite run u8/u8-per-channel.tflite --input_exprs "x=[[[[1],[2]],[[3],[4]]]]"' 1 \
	"tfk-lite: u8/u8-per-channel.tflite: operator 0 (CONV_2D): uint8 weights are quantized per tensor (per-channel weights are int8): w"
testerr "ADD of UINT8 and INT8 refused" \
	'tfk-lite run u8/u8-mixed.tflite --input_exprs "x=[[1, 2, 3, 4]]"' 1 \
	"tfk-lite: u8/u8-mixed.tflite: operator 0 (ADD): inputs must have the output's type INT8"
# c = [1, 2] at scale 0.25, zero point 128, into the output's 0.5, 128:
# round(v * 0.5 - 64) + 128 in float, -63.5 rounding away to -64
testcmd "uint8 CONCATENATION rescales an input of another scale (ConcatenationWithScaling)" \
	'tfk-lite run u8/u8-concat-scales.tflite --input_exprs "x=[[1, 2]]"' \
	"Result for output key y:\n[[ 1  2 64 65]]"
testerr "custom op named" \
	'tfk-lite run ops/custom.tflite --input_exprs "x=[1.0]"' 1 \
	"custom.tflite: subgraph 0: operator 0 (MyCustomOp): custom op 'MyCustomOp' is not supported by run"
testerr "several signatures need --signature" \
	'tfk-lite run "$TD/multi_signatures.bin" --input_exprs "x=[1.0]"' 2 \
	"has 2 signatures (add, sub): choose one with --signature"
testerr "unknown signature" \
	'tfk-lite run "$TD/multi_signatures.bin" --signature mul --input_exprs "x=[1.0]"' 1 \
	"no signature 'mul'"
testerr "unknown input key: a mismatch with the model, exit 1 (as tfk-model)" \
	'tfk-lite run "$TD/add.bin" --input_exprs "b=[1.0]"' 1 \
	"--input_exprs: no input 'b' (inputs: a)"
testerr "input not given: exit 1 (as tfk-model)" \
	'tfk-lite run "$TD/multi_add.bin" --input_exprs "a=[1.0]"' 1 \
	"input 'b' is not given (inputs: a, b, c, d)"
testerr "not KEY=VALUE" 'tfk-lite run "$TD/add.bin" --input_exprs "[1.0]"' 2 \
	"is not KEY=VALUE"
testerr "bad literal" 'tfk-lite run "$TD/add.bin" --input_exprs "a=[1.0,"' 1 \
	"--input_exprs: a"
testerr "string for a float input" \
	'tfk-lite run "$TD/add.bin" --input_exprs "a=[\"x\"]"' 1 \
	"input 'a': expected float32, got string values"
testerr "wrong rank for a fixed reshape" \
	'tfk-lite run ops/shapes.tflite --input_exprs "x=[1.0, 2.0]"' 1 \
	"cannot reshape"
testerr "conv over a 0-channel input refused (was a division by zero)" \
	'tfk-lite run ops/conv.tflite --input_exprs "x=[[[[]]]]"' 1 \
	"operator 0 (CONV_2D): node Conv2D: input 0: the input has 0 channels"
testerr "int8 conv with a negative dilation refused (fuzz-tflint8 read outside the input)" \
	'tfk-lite run "$TESTS/fuzz/seeds/fuzz-tflint8/conv-negative-dilation.tflite" --input_exprs "input_1=[[[[0]]]]"' 1 \
	"conv-negative-dilation.tflite: operator 1 (CONV_2D): strides (262146, 2) and dilations (-150994943, 0) must be >= 1"
testerr "int8 depthwise conv writing an earlier operator's smaller tensor, which the next operator reads (fuzz-tflint8 wrote past its buffer): refused, each tensor has one writer" \
	'tfk-lite run "$TESTS/fuzz/seeds/fuzz-tflint8/dwconv-writes-other-tensor.tflite" --input_exprs "input_1=$("$PYTHON" -c "print([[[[0.0]] * 28] * 28])")"' 1 \
	"dwconv-writes-other-tensor.tflite: operator 3 (DEPTHWISE_CONV_2D): writes tensor 0 'input_1:0', which is written by an earlier operator"
testerr "int8 RESHAPE of a float32 tensor into an int8 one refused (fuzz-tflint8 copied 4 bytes per int8 element)" \
	'tfk-lite run "$TESTS/fuzz/seeds/fuzz-tflint8/reshape-float-to-int8.tflite" --input_exprs "input_1=$("$PYTHON" -c "print([[[[0.0]] * 28] * 28])")"' 1 \
	"reshape-float-to-int8.tflite: operator 5 (RESHAPE): input and output types differ"
testerr "int8 operator reading a tensor a later operator writes refused (fuzz-tflint8: a second run gave other bytes)" \
	'tfk-lite run "$TESTS/fuzz/seeds/fuzz-tflint8/reads-before-write.tflite" --input_exprs "dense_input=[[1]]"' 1 \
	"reads-before-write.tflite: operator 0 (FULLY_CONNECTED): reads tensor 8 'sequential/dense_1/MatMul;sequential/dense_1/Relu;sequential/dense_1/BiasAdd' before an operator writes it"
testerr "int8 DEQUANTIZE into an INT8 tensor refused (fuzz-tflint8 wrote float32 values past its buffer)" \
	'tfk-lite run "$TESTS/fuzz/seeds/fuzz-tflint8/dequantize-into-int8.tflite" --input_exprs "input_1=$("$PYTHON" -c "print([[[[0.0]] * 28] * 28])")"' 1 \
	"dequantize-into-int8.tflite: operator 6 (DEQUANTIZE): output tensor 14 'd1/BiasAdd' is INT8, expected FLOAT32"
testerr "int8 CONCATENATION input with scales but no zero points compared as zero point 0 (fuzz-tflint8 read zero point 0 of an empty list)" \
	'tfk-lite run "$TESTS/fuzz/seeds/fuzz-tflint8/concat-no-zero-points.tflite" --input_exprs "input_1=$("$PYTHON" -c "print([[[[0.0]] * 28] * 28])")"' 1 \
	"concat-no-zero-points.tflite: operator 14 (CONCATENATION): inputs must share the output's quantization"
testerr "int8 conv dilated 117440513 rows runs the reference loops, not a 29 GB padded copy (fuzz-tflint8 ran out of memory), on to the next error" \
	'tfk-lite run "$TESTS/fuzz/seeds/fuzz-tflint8/conv-far-dilation.tflite" --input_exprs "input_1=$("$PYTHON" -c "print([[[[0.0]] * 28] * 28])")"' 1 \
	"conv-far-dilation.tflite: operator 10 (ADD): input shapes do not broadcast"
testerr "int8 FULLY_CONNECTED with absent (-1) weights refused (fuzz-tflint8 read the shape of tensor -1)" \
	'tfk-lite run "$TESTS/fuzz/seeds/fuzz-tflint8/fc-absent-weights.tflite" --input_exprs "dense_input=[[1]]"' 1 \
	"fc-absent-weights.tflite: operator 0 (FULLY_CONNECTED): input 1 is absent"
testcmd "int8 SOFTMAX into an output scale of 9.1e-13 saturates at 127: (127 + 128) * 9.09494702e-13 (fuzz-tflint8: a float-to-int conversion overflowed)" \
	'tfk-lite run "$TESTS/fuzz/seeds/fuzz-tflint8/softmax-tiny-scale.tflite" --input_exprs "input_1=$("$PYTHON" -c "print([[[[0.0]] * 28] * 28])")" --outdir sm >/dev/null && "$PYTHON" -c "import numpy; print(set(numpy.load(\"sm/head.npy\").ravel().tolist()) == {numpy.float32(255 * 9.09494702e-13).item()})"' \
	"True"
# --- hostile model files (the issue's crafted inputs) ---------------------
# Each must fail with exit 1, exactly one located message, in under a
# second and 100 MB (GNU time's maximum resident size; ASan's shadow
# pages are untouched and do not count).
mkdir "$T/hostile"
check "python3-flatbuffers writes the crafted models" $FB hostile hostile
check "the fuzz seeds are those models" sh -c '
	for n in input-on-constant batched-constant unsized-constant; do
		cmp "$TESTS/fuzz/seeds/fuzz-tflint8/$n.tflite" hostile/$n.tflite || exit 1
	done
	cmp "$TESTS/fuzz/seeds/fuzz-tflite/input-on-constant-float.tflite" hostile/input-on-constant-float.tflite'
$PYTHON -c "import numpy as np
np.save('$T/hostile/1m.npy', np.ones(1 << 20, np.float32))
np.save('$T/hostile/2x4.npy', np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.int32))
np.save('$T/hostile/1x64.npy', np.zeros((1, 64), np.int32))"
# hostile NAME COMMAND STDERR: exit 1 and stderr exactly STDERR, fast
hostile() {
	(cd "$T/hostile" && /usr/bin/time -f "%e %M" -o "$T/.time" sh -c "$2") \
		>"$T/.stdout" 2>"$T/.stderr"
	_rc=$?
	_err=$(cat "$T/.stderr")
	read -r _s _kb <"$T/.time"
	if [ $_rc -eq 1 ] && [ "$_err" = "$3" ] && [ ! -s "$T/.stdout" ] &&
		awk "BEGIN { exit !($_s < 1.0 && $_kb < 102400) }"; then
		_result pass "$1"
	else
		_result fail "$1"
		echo "#   command: $2"
		echo "#   exit: $_rc (want 1), $_s s, $_kb KB"
		echo "#   want stderr: $3"
		sed 's/^/#   stderr: /' "$T/.stderr"
	fi
}
hostile "int8: an input on a constant buffer, fed 1M floats, refused before any write (was SIGSEGV: the feed was copied over the model's heap)" \
	'tfk-lite run input-on-constant.tflite --inputs x=1m.npy' \
	"tfk-lite: input-on-constant.tflite: subgraph 0: input 0: tensor 0 'x' has constant data (buffer 1, 16 bytes): an input cannot be fed"
hostile "float: an input on a constant buffer refused the same way" \
	'tfk-lite run input-on-constant-float.tflite --inputs x=1m.npy' \
	"tfk-lite: input-on-constant-float.tflite: subgraph 0: input 0: tensor 0 'x' has constant data (buffer 1, 16 bytes): an input cannot be fed"
hostile "int8: a STRING constant of 4 bytes for 64 strings refused by the loader's string buffer check (was a read past its buffer as 64 int8 values)" \
	'tfk-lite run unsized-constant.tflite --inputs x=1x64.npy' \
	"tfk-lite: unsized-constant.tflite: subgraphs[0]: tensors[1]: buffer 1: string buffer: 0 strings, but the tensor has 64 elements"
# A constant keeps its file shape whatever its shape_signature says, as
# in TFLite, so this model is valid: [2, 4] + [1, 4] broadcasts (row 2
# was the 4 bytes after the constant's buffer; a [4000000, 4] feed was
# SIGSEGV). x, c and y share scale 0.5, zero point 0: y = x + c.
testcmd "int8: a constant with a -1 batch in its shape_signature keeps [1, 4] and broadcasts (row 2 was read past its buffer)" \
	'cd hostile && tfk-lite run batched-constant.tflite --inputs x=2x4.npy' \
	"Result for output key y:\n[[ 3  6  9 12]\n [ 7 10 13 16]]"

testerr "no inputs at all" 'tfk-lite run "$TD/add.bin"' 2 \
	"run needs --input_exprs or --inputs"
testerr "missing .npy" 'tfk-lite run "$TD/add.bin" --inputs a=nope.npy' 1 \
	"nope.npy"
testerr "corrupt model" 'head -c 300 "$TD/add.bin" >cut.bin; tfk-lite run cut.bin --input_exprs "a=[1.0]"' 1 \
	"tfk-lite: cut.bin: "
testerr "a subgraph with no operators whose output is an unsupported constant: refused, no crash (fuzz-tflite found it)" \
	'tfk-lite run "$TESTS/fuzz/seeds/fuzz-tflite/const-output-no-ops.bin" --input_exprs "x=[[1.0,2.0,3.0,4.0]]"' 1 \
	"subgraph 0: output: INT4 constant 'w16' is not supported"
testcmd "run --help lists its options" \
	'tfk-lite run --help | grep -o "^ *--[a-z_]*" | tr -d " " | sed "s/^/opt /"' \
	"opt --signature\nopt --input_exprs\nopt --inputs\nopt --outdir\nopt --profile\nopt --trace\nopt --version"

done_testing
