#!/bin/sh
# tfk-lite show: every TensorFlow-written .tflite fixture against an
# independent walk of the same file by python3-flatbuffers
# (tests/py/tflite_fb.py, field slots from schema.fbs written there), the
# fixture README's facts in the text output, and every refusal: broken
# fixtures, truncations, missing files, usage errors.
. "$(dirname "$0")/lib.sh"

L=$FIX/tflite
HW=$L/hello_world
TD=$L/lite_testdata
ORACLE="$PYTHON $TESTS/py/tflite_fb.py"
export L HW TD ORACLE

# --- --json against python3-flatbuffers, every loadable fixture ---------
for f in $HW/hello_world_float.tflite $HW/hello_world_int8.tflite \
	$TD/add.bin $TD/add_quantized.bin $TD/add_quantized_int8.bin \
	$TD/empty_model.bin $TD/multi_add.bin $TD/multi_signatures.bin \
	$L/serving_half_plus_two/model.tflite; do
	export f
	testcmd "$(basename "$f"): --json agrees with python3-flatbuffers" \
		'tfk-lite show --json "$f" >o.json && $ORACLE compare "$f" o.json' \
		"ok"
done

# --- the text, whole, for add.bin ----------------------------------------
testcmd "add.bin: whole text" 'tfk-lite show "$TD/add.bin" | sed 1d' \
"size: 544 bytes: buffers 0, metadata 0, structure 544
operator codes: 1, buffers: 1

subgraph 0 '': 3 tensors, 2 operators
  inputs: 1 'input'
  outputs: 2 'output'
  tensors:
    0 'add' FLOAT32 [1, 8, 8, 3]
    1 'input' FLOAT32 [1, 8, 8, 3]
    2 'output' FLOAT32 [1, 8, 8, 3]
  operators:
    0 ADD (0) v1 inputs [1, 1] outputs [0] fused_activation_function=NONE pot_scale_int16=true
    1 ADD (0) v1 inputs [0, 1] outputs [2] fused_activation_function=NONE pot_scale_int16=true

signatures:
  'serving_default': subgraph 0
    input 'a': tensor 1 'input'
    output 'x': tensor 2 'output'"
testcmd "add.bin: first line names the file and schema version" \
	'tfk-lite show "$TD/add.bin" | head -n 1 | sed "s|^$TD/||"' \
	"add.bin: TFLite schema version 3"

# --- README facts in the text -------------------------------------------
testcmd "hello_world float: 3x FULLY_CONNECTED (RELU, RELU, NONE)" \
	'tfk-lite show "$HW/hello_world_float.tflite" | grep -o "FULLY_CONNECTED (9) v1 .*fused_activation_function=[A-Z]*" | sed "s/.*=//"' \
	"RELU\nRELU\nNONE"
testcmd "hello_world float: input [1, 1], shape_signature [?, 1]" \
	'tfk-lite show "$HW/hello_world_float.tflite" | grep "^    0 '"'"'"' \
	"    0 'serving_default_dense_input:0' FLOAT32 [1, 1] signature [?, 1]"
testcmd "hello_world float: min_runtime_version, sizes" \
	'tfk-lite show "$HW/hello_world_float.tflite" | sed -n "2,4p"' \
	"description: MLIR Converted.\nmin_runtime_version: 1.5.0\nsize: 3164 bytes: buffers 1284, metadata 100, structure 1780"
testcmd "hello_world int8: input and output quantization" \
	'tfk-lite show "$HW/hello_world_int8.tflite" | grep -E "^    (0|9) '"'"'" | sed "s/.*quant //"' \
	"scale 0.0244801156 zero_point -128\nscale 0.00829095673 zero_point 5"
testcmd "hello_world int8: --json input scale and zero point" \
	'tfk-lite show --json "$HW/hello_world_int8.tflite" | $PYTHON -c "import json,sys; t=json.load(sys.stdin)[\"subgraphs\"][0][\"tensors\"][0][\"quantization\"]; print(t[\"scale\"][0] == 0.024480115622282028, t[\"zero_point\"])"' \
	"True [-128]"
testcmd "multi_signatures: signatures add and sub" \
	'tfk-lite show "$TD/multi_signatures.bin" | sed -n "/^signatures:/,/^\$/p"' \
"signatures:
  'add': subgraph 0
    input 'x': tensor 0 'add_x:0'
    output 'output_0': tensor 2 'StatefulPartitionedCall:0'
  'sub': subgraph 1
    input 'x': tensor 0 'sub_x:0'
    output 'output_0': tensor 2 'StatefulPartitionedCall_1:0'"
testcmd "serving_half_plus_two: MUL then ADD" \
	'tfk-lite show "$L/serving_half_plus_two/model.tflite" | grep -o "^    [01] [A-Z]* ([0-9]*)"' \
	"    0 MUL (18)\n    1 ADD (0)"
testcmd "json: operator codes of multi_signatures" \
	'tfk-lite show --json "$TD/multi_signatures.bin" | $PYTHON -c "import json,sys; print([c[\"name\"] for c in json.load(sys.stdin)[\"operator_codes\"]])"' \
	"['ADD', 'SUB']"

# --- names with control bytes, backslashes, invalid UTF-8 ----------------
$PYTHON -c "import sys; sys.path.insert(0, '$TESTS/py'); import tflite_fb as f
f.write_model('$T/odd.tflite', [(b'in\\nput\\\\\\xff', 0, [1], None), ('y', 0, [1], None)],
              [(0, [0], [1], 0, [])], [0], [1], [(19, None)])"
testcmd "text: control bytes and backslashes escaped" \
	'tfk-lite show odd.tflite | grep -a "^    0 '"'"'" | LC_ALL=C tr -d "\200-\377"' \
	"    0 'in\\\\x0aput\\\\\\\\' FLOAT32 [1]"
testcmd "json: invalid UTF-8 becomes ?, the key stays" \
	'tfk-lite show --json odd.tflite | $PYTHON -c "import json,sys; print(repr(json.load(sys.stdin)[\"subgraphs\"][0][\"tensors\"][0][\"name\"]))"' \
	"'in\\\\nput\\\\\\\\?'"

# --- refusals --------------------------------------------------------------
testerr "0_subgraphs.bin refused" 'tfk-lite show "$TD/0_subgraphs.bin"' 1 \
	"tfk-lite: $TD/0_subgraphs.bin: the model has no subgraphs"
testerr "test_model_broken.bin refused" \
	'tfk-lite show "$TD/test_model_broken.bin"' 1 \
	"test_model_broken.bin: file identifier is bytes 00 00 0e 00, expected 'TFL3'"
head -c 1000 "$HW/hello_world_float.tflite" >"$T/cut.tflite"
testerr "truncated model refused, located" 'tfk-lite show cut.tflite' 1 \
	"tfk-lite: cut.tflite: operator_codes: at byte 3132: vector length of 4 bytes runs past the end of the 1000-byte buffer"
head -c 7 "$HW/hello_world_float.tflite" >"$T/tiny.tflite"
testerr "7-byte file refused" 'tfk-lite show tiny.tflite' 1 \
	"tiny.tflite: buffer of 7 bytes is too small for a flatbuffer"
: >"$T/empty.tflite"
testerr "empty file refused" 'tfk-lite show empty.tflite' 1 \
	"empty.tflite: buffer of 0 bytes"
check "nothing on stdout for a corrupt model" \
	sh -c 'tfk-lite show --json cut.tflite >out.txt; [ $? -eq 1 ] && [ ! -s out.txt ]'
testcmd "truncations: none loads, each refusal names the file" '
	for f in "$HW"/*.tflite "$TD"/add.bin "$TD"/multi*.bin; do
		n=$(wc -c <"$f")
		for k in 64 $((n / 2)) $((n - 100)) $((n - 16)); do
			head -c $k "$f" >t.bin
			if tfk-lite show t.bin >/dev/null 2>err; then
				echo "loaded $f $k"
			fi
			grep -vc "^tfk-lite: t.bin: " err || :
		done
	done | sort -u' "0"
# STRING buffers (count, offsets, bytes) are untrusted: each rule
mkdir "$T/str"
check "python3-flatbuffers writes the STRING buffer models" \
	$PYTHON "$TESTS/py/tflite_fb.py" strings "$T/str"
testcmd "a STRING constant: shown, and run gathers from it" '
	tfk-lite show str/str-good.tflite | grep STRING
	tfk-lite run str/str-good.tflite --input_exprs "x=[2, 0]"' \
	"    1 'table' STRING [3] buffer 1 (25 bytes)\n    2 'y' STRING [2]\nResult for output key y:\n[b'xyz' b'ab']"
testerr "string buffer: an offset before the one before it" \
	'tfk-lite show str/str-backwards.tflite' 1 \
	"tfk-lite: str/str-backwards.tflite: subgraphs[0]: tensors[1]: buffer 1: string buffer: offset 2 (17) is before offset 1 (22)"
testerr "string buffer: the last offset past its end" \
	'tfk-lite run str/str-past-end.tflite --input_exprs "x=[0, 0]"' 1 \
	"tfk-lite: str/str-past-end.tflite: subgraphs[0]: tensors[1]: buffer 1: string buffer: offset 3 (99) is not the buffer's size 25"
testerr "string buffer: fewer strings than the tensor's elements" \
	'tfk-lite show str/str-count.tflite' 1 \
	"string buffer: 2 strings, but the tensor has 3 elements"
testerr "string buffer: offsets longer than the buffer" \
	'tfk-lite show str/str-header.tflite' 1 \
	"string buffer: 3001 offsets need 12008 bytes, the buffer holds 25"
testcmd "model from standard input (-)" \
	'tfk-lite show - <"$TD/add.bin" | head -n 1' \
	"<stdin>: TFLite schema version 3"
testerr "corrupt model on standard input" \
	'head -c 100 "$TD/add.bin" | tfk-lite show -' 1 "tfk-lite: <stdin>: "
testerr "a directory" 'tfk-lite show .' 1 "tfk-lite: .: Is a directory"
testerr "missing file" 'tfk-lite show nonexistent.tflite' 1 \
	"tfk-lite: nonexistent.tflite: No such file or directory"
testerr "no command: usage error" 'tfk-lite' 2 "a command is needed"
testerr "unknown command" 'tfk-lite frobnicate x' 2 "unknown command 'frobnicate'"
testerr "show without a model" 'tfk-lite show' 2 "show needs a MODEL.tflite"
testerr "show with two models" 'tfk-lite show a b' 2 "one model at a time"
testerr "unknown option" 'tfk-lite show --frob x' 2 "frob"
testcmd "--help lists the commands" 'tfk-lite --help | grep "^  show"' \
	"  show  subgraphs, tensors, operators, signatures, metadata and sizes of a model"
testcmd "show --help lists --json" 'tfk-lite show --help | grep -c "^ *--json"' "1"

done_testing
