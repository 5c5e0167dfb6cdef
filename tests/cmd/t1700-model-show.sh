#!/bin/sh
# tfk-model show: saved_model_cli's text on every TensorFlow-written
# SavedModel fixture (expected strings from the fixture README, and the
# whole text from tests/py/savedmodel_show.py, which decodes the files
# with python3-protobuf from field numbers of its own and prints as
# saved_model_cli.py does), a synthetic model with the corners TF allows,
# --ops, --list_ops, --json, and every error.
. "$(dirname "$0")/lib.sh"

SM=$FIX/savedmodel
TF1=$SM/half_plus_two_cpu_tf1/00000123
TF2=$SM/half_plus_two_tf2_cpu/00000123
MAT=$SM/matrix_half_plus_two/1
RUST=$SM/rust_regression_tf1
ORACLE="$PYTHON $TESTS/py/savedmodel_show.py"
export TF1 TF2 MAT RUST ORACLE

# --- the fixture README's facts, literally ------------------------------
for d in TF1 TF2 MAT; do
	testcmd "$d: one tag-set, serve" "tfk-model show --dir \"\$$d\"" \
		"The given SavedModel contains the following tag-sets:\n'serve'"
done
testcmd "rust_regression: one MetaGraphDef tagged {train, serve}, sorted" \
	'tfk-model show --dir "$RUST"' \
	"The given SavedModel contains the following tag-sets:\n'serve, train'"
testcmd "tf1: signature keys" 'tfk-model show --dir "$TF1" --tag_set serve' \
'The given SavedModel MetaGraphDef contains SignatureDefs with the following keys:
SignatureDef key: "classify_x_to_y"
SignatureDef key: "regress_x2_to_y3"
SignatureDef key: "regress_x_to_y"
SignatureDef key: "regress_x_to_y2"
SignatureDef key: "serving_default"'
testcmd "tf1: serving_default x:0 float [-1,1] -> y:0, predict" \
	'tfk-model show --dir "$TF1" --tag_set serve --signature_def serving_default' \
"The given SavedModel SignatureDef contains the following input(s):
  inputs['x'] tensor_info:
      dtype: DT_FLOAT
      shape: (-1, 1)
      name: x:0
The given SavedModel SignatureDef contains the following output(s):
  outputs['y'] tensor_info:
      dtype: DT_FLOAT
      shape: (-1, 1)
      name: y:0
Method name is: tensorflow/serving/predict"
testcmd "tf1: classify takes a serialized tf.Example of unknown rank" \
	'tfk-model show --dir "$TF1" --tag_set serve --signature_def classify_x_to_y | sed -n 3,5p' \
	"      dtype: DT_STRING\n      shape: unknown_rank\n      name: tf_example:0"
testcmd "tf2: serving_default x serving_default_x:0 float [1]" \
	'tfk-model show --dir "$TF2" --tag_set serve --signature_def serving_default | sed -n 2,5p' \
	"  inputs['x'] tensor_info:\n      dtype: DT_FLOAT\n      shape: (1)\n      name: serving_default_x:0"
testcmd "matrix: x float [-1,3,3] -> y" \
	'tfk-model show --dir "$MAT" --tag_set serve --signature_def serving_default | grep -E "shape:|name: "' \
	"      shape: (-1, 3, 3)\n      name: x:0\n      shape: (-1, 3, 3)\n      name: y:0"
testcmd "rust: regress method, inputs x and y -> out y_hat:0" \
	'tfk-model show --dir "$RUST" --tag_set train,serve --signature_def tensorflow/serving/regress | grep -E "\[|name"' \
	"  inputs['x'] tensor_info:\n      name: x:0\n  inputs['y'] tensor_info:\n      name: y:0\n  outputs['out'] tensor_info:\n      name: y_hat:0\nMethod name is: tensorflow/serving/regress"
testcmd "tag-set order and spaces do not matter (saved_model_cli strips)" \
	'tfk-model show --dir "$RUST" --tag_set " serve , train," | tail -n 1' \
	'SignatureDef key: "tensorflow/serving/regress"'
testcmd "matrix --all, whole text" 'tfk-model show --dir "$MAT" --all' \
"
MetaGraphDef with tag-set: 'serve' contains the following SignatureDefs:

signature_def['serving_default']:
  The given SavedModel SignatureDef contains the following input(s):
    inputs['x'] tensor_info:
        dtype: DT_FLOAT
        shape: (-1, 3, 3)
        name: x:0
  The given SavedModel SignatureDef contains the following output(s):
    outputs['y'] tensor_info:
        dtype: DT_FLOAT
        shape: (-1, 3, 3)
        name: y:0
  Method name is: tensorflow/serving/predict
The MetaGraph with tag set ['serve'] contains the following ops: {'Add', 'Const', 'Mul', 'NoOp', 'Placeholder'}"
testcmd "rust --all keeps the file's tag order in its header" \
	'tfk-model show --dir "$RUST" --all | sed -n 2p' \
	"MetaGraphDef with tag-set: 'train, serve' contains the following SignatureDefs:"
testcmd "tf2 --list_ops: ops of the graph and of the functions it calls" \
	'tfk-model show --dir "$TF2" --tag_set serve --list_ops | head -n 1' \
	"The MetaGraph with tag set ['serve'] contains the following ops: {'AddV2', 'AssignVariableOp', 'Const', 'DisableCopyOnRead', 'Identity', 'MergeV2Checkpoints', 'Mul', 'NoOp', 'Pack', 'ParseExampleV2', 'Placeholder', 'PlaceholderWithDefault', 'ReadVariableOp', 'Reshape', 'RestoreV2', 'SaveV2', 'Select', 'ShardedFilename', 'StatefulPartitionedCall', 'StaticRegexFullMatch', 'StringJoin', 'VarHandleOp', 'VarIsInitializedOp'}"
testcmd "--list_ops without a tag-set: saved_model_cli's note, then the tag-sets" \
	'tfk-model show --dir "$MAT" --list_ops | sed "1s/^--/X/"' \
	"Xlist_ops must be paired with a tag-set or with --all.\nThe given SavedModel contains the following tag-sets:\n'serve'"

testcmd "tf2 --all: Concrete Functions from the object graph, sorted by name" \
	'tfk-model show --dir "$TF2" --all | sed -n "/^Concrete Functions:/,/^\$/p"' \
"Concrete Functions:
  Function Name: 'classify_x2y3'
    Option #1
      Callable with:
        Argument #1
          inputs: TensorSpec(shape=(1,), dtype=tf.float32, name='inputs')"
testcmd "tf2 --all: the six functions, not the variables, asset or signatures" \
	'tfk-model show --dir "$TF2" --all | grep "Function Name" | tr -d "\n"' \
	"  Function Name: 'classify_x2y3'  Function Name: 'classify_xy'  Function Name: 'predict'  Function Name: 'regress_x2y3'  Function Name: 'regress_xy'  Function Name: 'regress_xy2'"
testcmd "tf2 --all: a string input of unknown batch size" \
	'tfk-model show --dir "$TF2" --all | grep -A4 "Name: .regress_xy.\$" | tail -n 1' \
	"          inputs: TensorSpec(shape=(None,), dtype=tf.string, name='inputs')"
testcmd "tf1 --all: no object graph, no Concrete Functions section" \
	'tfk-model show --dir "$TF1" --all >a && { grep -c "Concrete Functions" a || :; }' "0"

# --- the whole text against the independent decoder ----------------------
# The same requests in the order savedmodel_show.py's "every" makes them.
every() {	# DIR TAGS
	echo "@@ tag-sets" && tfk-model show --dir "$1" &&
	echo "@@ keys $2" && tfk-model show --dir "$1" --tag_set "$2" &&
	echo "@@ list-ops $2" && tfk-model show --dir "$1" --tag_set "$2" --list_ops |
		head -n 1 &&
	echo "@@ all" && tfk-model show --dir "$1" --all &&
	for k in $(tfk-model show --dir "$1" --tag_set "$2" |
		   sed -n 's/^SignatureDef key: "\(.*\)"$/\1/p'); do
		echo "@@ signature $k" &&
		tfk-model show --dir "$1" --tag_set "$2" --signature_def "$k" || return 1
	done &&
	echo "@@ summary" && tfk-model show --dir "$1" --json | $PYTHON -c '
import json, sys
for m in json.load(sys.stdin)["meta_graphs"]:
    print(",".join(m["tags"]), m["nodes"], m["functions"],
          " ".join(sorted(m["signature_defs"])), " ".join(o["op"] for o in m["ops"]))'
}
for d in TF1 TF2 MAT RUST; do
	eval "dir=\$$d"
	tags=serve
	[ "$d" = RUST ] && tags=train,serve
	every "$dir" $tags >"$T/m" 2>&1
	$ORACLE "$dir" every $tags >"$T/o" 2>&1
	check "$d: tag-sets, keys, --list_ops, --all, every signature and the --json summary equal the oracle's" \
		cmp "$T/m" "$T/o"
	[ -s "$T/o" ] && grep -c "^@@ signature" "$T/o" >"$T/n"
	check "$d: ... over $(cat "$T/n") signatures" test "$(cat "$T/n")" -gt 0
done

# --- corners: a model made by python3-protobuf ---------------------------
$PYTHON "$TESTS/py/savedmodel_show.py" "$T/syn" synth
SYN=$T/syn
export SYN
check "synthetic: --all equals the oracle's" sh -c \
	'tfk-model show --dir "$SYN" --all >m && $ORACLE "$SYN" all >o && cmp m o'
$PYTHON "$TESTS/py/savedmodel_show.py" "$T/synf" synth-functions
SYNF=$T/synf
export SYNF
check "synthetic functions: --all equals the oracle's (every argument kind)" sh -c \
	'tfk-model show --dir "$SYNF" --all >m && $ORACLE "$SYNF" all >o && cmp m o'
testcmd "synthetic functions: a list closes with saved_model_cli's backspaces" \
	'tfk-model show --dir "$SYNF" --all | grep "Value: \[" | tail -c 6 | od -An -tx1' \
	" 2c 20 08 08 5d 0a"
testcmd "synthetic functions: keyword-only bare function; traces sorted; kwargs by name" \
	'tfk-model show --dir "$SYNF" --all | grep -E "Function Name|Option|Argument #|training|^          [xy]\$"' \
"  Function Name: 'bare'
    Option #1
        Argument #1
          x
        Argument #2
          y
  Function Name: 'empty'
  Function Name: 'f'
    Option #1
        Argument #1
        Argument #2
        Argument #3
        Argument #4
        Argument #5
        Argument #6
        Argument #7
        Argument #8
        Argument #9
        Argument #10
        Argument #11
        Named Argument #1
          training
    Option #2
        Argument #1"
testcmd "synthetic: tag-sets sorted as lists, a quote makes repr use \"" \
	'tfk-model show --dir "$SYN"' \
	"The given SavedModel contains the following tag-sets:\n\"it's\"\n'serve'\n'gpu, serve'"
testcmd "synthetic: absent shape prints (), scalar (), unknown rank, _REF dtype" \
	'tfk-model show --dir "$SYN" --tag_set gpu,serve --signature_def predict' \
"The given SavedModel SignatureDef contains the following input(s):
  inputs['C'] tensor_info:
      dtype: DT_STRING
      shape: unknown_rank
      name: c:0
  inputs['a'] tensor_info:
      dtype: DT_FLOAT_REF
      shape: ()
      name: a:0
  inputs['b'] tensor_info:
      dtype: DT_INT64
      shape: ()
      name: b:0
The given SavedModel SignatureDef contains the following output(s):
  outputs['z'] tensor_info:
      dtype: DT_HALF
      shape: (-1, 2, 3)
      name: mm:0
Method name is: tensorflow/serving/predict"
testcmd "synthetic: an empty signature" \
	'tfk-model show --dir "$SYN" --tag_set serve,gpu --signature_def empty' \
	"The given SavedModel SignatureDef contains the following input(s):\nThe given SavedModel SignatureDef contains the following output(s):\nMethod name is: "
testcmd "synthetic --ops: called and named functions followed, unreached one not; yes = run can execute it" \
	'tfk-model show --dir "$SYN" --tag_set serve,gpu --ops' \
"MatMul                   yes
PartitionedCall          yes
Placeholder              yes
Relu                     yes
Softmax                  yes
StatefulPartitionedCall  yes
Tanh                     yes
VariableV2               yes"
testcmd "matrix --ops: every op runnable (the only MetaGraphDef is implied)" \
	'tfk-model show --dir "$MAT" --ops' \
	"Add          yes\nConst        yes\nMul          yes\nNoOp         yes\nPlaceholder  yes"
testcmd "tf1 --ops: the saver ops are named as not runnable, ParseExample and variables are" \
	'tfk-model show --dir "$TF1" --ops | grep -E "^(ParseExample|RestoreV2|VariableV2|Mul) "' \
	"Mul                     yes\nParseExample            yes\nRestoreV2               no\nVariableV2              yes"
testcmd "tf2 --ops: calls and resource variables runnable, the saver not" \
	'tfk-model show --dir "$TF2" --ops | grep -E "^(StatefulPartitionedCall|ReadVariableOp|VarHandleOp|ParseExampleV2|SaveV2) "' \
	"ParseExampleV2           yes\nReadVariableOp           yes\nSaveV2                   no\nStatefulPartitionedCall  yes\nVarHandleOp              yes"

# --- JSON, read by Python --------------------------------------------------
testcmd "--json: tags, signatures with dtype/shape/name, ops, variables" \
	'tfk-model show --dir "$TF1" --json | "$PYTHON" -c "
import json, sys
d = json.load(sys.stdin)
m = d[\"meta_graphs\"][0]
s = m[\"signature_defs\"][\"serving_default\"]
print(d[\"saved_model_schema_version\"], d[\"variables\"], m[\"tags\"], len(m[\"signature_defs\"]))
print(s[\"method_name\"], s[\"inputs\"][\"x\"], s[\"outputs\"][\"y\"][\"name\"])
print(m[\"signature_defs\"][\"classify_x_to_y\"][\"inputs\"][\"inputs\"][\"shape\"])
print([o for o in m[\"ops\"] if o[\"op\"] in (\"Mul\", \"ParseExample\")])"' \
"1 True ['serve'] 5
tensorflow/serving/predict {'name': 'x:0', 'dtype': 'DT_FLOAT', 'shape': [-1, 1], 'has_shape': True} y:0
None
[{'op': 'Mul', 'runnable': True}, {'op': 'ParseExample', 'runnable': True}]"
testcmd "--json --signature_def: that signature alone; no variables/ for matrix" \
	'tfk-model show --dir "$MAT" --json --signature_def serving_default | "$PYTHON" -c "
import json, sys
d = json.load(sys.stdin)
print(d[\"variables\"], list(d[\"meta_graphs\"][0][\"signature_defs\"]))"' \
	"False ['serving_default']"

testcmd "--json: a tag that is not UTF-8 is kept, as U+FFFD" \
	'mkdir -p u && printf "\022\005\012\003\042\001\377" >u/saved_model.pb &&
	tfk-model show --dir u --json | "$PYTHON" -c "
import json, sys
print(ascii(json.load(sys.stdin)[\"meta_graphs\"][0][\"tags\"]))"' \
	"['\\\\ufffd']"

# --- errors -----------------------------------------------------------------
testerr "missing directory: exit 1, named" 'tfk-model show --dir nope' 1 \
	"tfk-model: nope: no such directory"
testerr "a directory without saved_model.pb" 'mkdir -p e && tfk-model show --dir e' 1 \
	"tfk-model: e: SavedModel file does not exist at: e/saved_model.pb"
testerr "a file, not a directory" ': >f && tfk-model show --dir f' 1 \
	"tfk-model: f: not a directory"
testerr "text format only: refused clearly" \
	'mkdir -p t && : >t/saved_model.pbtxt && tfk-model show --dir t' 1 \
	"t: saved_model.pbtxt (text format) is not supported"
testerr "empty saved_model.pb" 'mkdir -p z && : >z/saved_model.pb && tfk-model show --dir z' 1 \
	"z/saved_model.pb: empty file"
testerr "truncated saved_model.pb: the byte offset of the cut field" \
	'mkdir -p tr && head -c 1000 "$TF1/saved_model.pb" >tr/saved_model.pb && tfk-model show --dir tr' 1 \
	"tr/saved_model.pb: at byte 2: SavedModel.meta_graphs: length 12102 runs past the end (995 bytes left)"
testerr "truncated inside a MetaGraphDef: its field is named" \
	'mkdir -p tr2 && "$PYTHON" -c "
import sys
d = open(sys.argv[1], \"rb\").read()
assert d[:3] == b\"\\x08\\x01\\x12\" and d[3] & 0x80 and not d[4] & 0x80
n = (d[3] & 0x7f) | d[4] << 7
mg = d[5:5 + n][:n - 100]   # the MetaGraphDef cut, its length fixed up
m = len(mg)
sys.stdout.buffer.write(d[:3] + bytes([m & 0x7f | 0x80, m >> 7]) + mg)" "$MAT/saved_model.pb" >tr2/saved_model.pb && tfk-model show --dir tr2' 1 \
	"tr2/saved_model.pb: at byte 733: MetaGraphDef.signature_def: length 121 runs past the end (21 bytes left)"
testerr "garbage bytes" \
	'mkdir -p g && printf "\377\377\377\377garbage" >g/saved_model.pb && tfk-model show --dir g' 1 \
	"g/saved_model.pb: at byte 0: SavedModel: "
testerr "a known field with the wrong wire type" \
	'mkdir -p w && printf "\010\001\025abcd" >w/saved_model.pb && tfk-model show --dir w' 1 \
	"w/saved_model.pb: at byte 2: SavedModel.meta_graphs: wire type 5, expected 2"
testerr "deep inside: a NodeDef op written as a varint" \
	'mkdir -p w2 && printf "\022\011\022\007\012\005\012\001a\020\005" >w2/saved_model.pb && tfk-model show --dir w2' 1 \
	"w2/saved_model.pb: at byte 9: NodeDef.op: wire type 0, expected 2"
testerr "a broken packed run (TensorProto.float_val of 3 bytes)" \
	'"$PYTHON" -c "
import sys
def ld(f, b): return bytes([f << 3 | 2, len(b)]) + b
t = ld(5, b\"abc\")                        # TensorProto.float_val, packed
av = ld(8, t)                               # AttrValue.tensor
entry = ld(1, b\"value\") + ld(2, av)        # NodeDef.attr entry
node = ld(1, b\"c\") + ld(2, b\"Const\") + ld(5, entry)
sys.stdout.buffer.write(ld(2, ld(2, ld(1, node))))" >p.pb && mkdir -p pk && mv p.pb pk/saved_model.pb && tfk-model show --dir pk' 1 \
	"pk/saved_model.pb: at byte 29: TensorProto.float_val: bad packed values"
testerr "nesting deeper than 100 is refused, not recursed into" \
	'"$PYTHON" -c "
import sys
def ld(f, b):
    n, v = len(b), b\"\"
    while n >= 0x80: v += bytes([n & 0x7f | 0x80]); n >>= 7
    return bytes([f << 3 | 2]) + v + bytes([n]) + b
# AttrValue.list.func[0].attr[\"a\"] = AttrValue ... 200 levels deep
a = b\"\"
for i in range(200):
    a = ld(1, ld(9, ld(2, ld(1, b\"a\") + ld(2, a))))
node = ld(1, b\"n\") + ld(2, b\"X\") + ld(5, ld(1, b\"k\") + ld(2, a))
sys.stdout.buffer.write(ld(2, ld(2, ld(1, node))))" >d.pb && mkdir -p dp && mv d.pb dp/saved_model.pb && tfk-model show --dir dp' 1 \
	"nested more than 100 deep"
testerr "unknown tag-set: lists what exists" 'tfk-model show --dir "$RUST" --tag_set serve' 1 \
	"could not be found in the SavedModel; tag-sets are: 'train, serve'"
testerr "unknown signature: lists what exists" \
	'tfk-model show --dir "$MAT" --tag_set serve --signature_def nope' 1 \
	'could not find signature "nope"; signatures are: serving_default'
testerr "--ops with several MetaGraphDefs needs --tag_set" \
	'tfk-model show --dir "$SYN" --ops' 1 \
	"3 MetaGraphDefs: choose one with --tag_set: 'serve, gpu', 'it's', 'serve'"
testerr "--dir is required (usage, exit 2)" 'tfk-model show' 2 "show needs --dir DIR"
testerr "--signature_def without --tag_set (usage)" \
	'tfk-model show --dir "$MAT" --signature_def serving_default' 2 \
	"--signature_def needs --tag_set"
testerr "an empty --tag_set (usage)" 'tfk-model show --dir "$MAT" --tag_set " , "' 2 \
	"--tag_set must contain at least one non-empty item"
testerr "unknown command (usage)" 'tfk-model frobnicate' 2 "unknown command 'frobnicate'"
testerr "no command (usage)" 'tfk-model' 2 "a command is needed"
testerr "a stray argument (usage)" 'tfk-model show --dir "$MAT" extra' 2 \
	"unexpected argument 'extra'"
testcmd "--help lists the commands" 'tfk-model --help | sed -n "/^Commands:/,/^\$/p"' \
"Commands:
  show  tag-sets, signatures (inputs, outputs, method) and ops of a SavedModel
  run   run a signature on inputs given as literals, .npy files or tf.Examples
  bench time loading a SavedModel and running a signature in a loop"

done_testing
