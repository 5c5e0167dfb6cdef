#!/bin/sh
# tfk-predict: a SavedModel signature over a record stream.
# Oracles: the fixture README (TensorFlow-written half_plus_two models:
# y = 0.5 x + 2, y2 = 0.5 x + 3, y3 = 0.5 x2 + 3; rust_regression
# w = -0.8578622341156006, b = 0), records built and decoded by
# python3-protobuf (tests/py/tfexample.py, field numbers of its own),
# and for a model tfk-train leaves in --out: the argmax accuracy of the
# predictions, computed by Python from the kept labels, equals what
# tfk-eval reports for the same data.
. "$(dirname "$0")/lib.sh"

SM=$FIX/savedmodel
TF1=$SM/half_plus_two_cpu_tf1/00000123
TF2=$SM/half_plus_two_tf2_cpu/00000123
MAT=$SM/matrix_half_plus_two/1
RUST=$SM/rust_regression_tf1
export TF1 TF2 MAT RUST

# Records by protobuf: x float, label int64, name bytes.
$PYTHON - "$T" <<'P'
import sys; sys.path.insert(0, sys.argv[0] and __import__("os").environ["TESTS"] + "/py")
import tfexample as tfe
d = sys.argv[1]
rows = [{"x": [2.0], "x2": [1.0], "label": [1], "name": [b"a"]},
        {"x": [3.0], "x2": [5.0], "label": [0], "name": [b"b,c"]},
        {"x": [4.0], "x2": [-2.0], "label": [1], "name": [b'q"uote']}]
tfe.write_tfrecords(d + "/x.tfrecord", [tfe.make_example(r).SerializeToString() for r in rows])
tfe.write_tfrecords(d + "/xi.tfrecord", [tfe.make_example({"x": [2]}).SerializeToString()])
tfe.write_tfrecords(d + "/x2v.tfrecord", [tfe.make_example(r).SerializeToString()
    for r in ({"x": [1.0]}, {"x": [2.0, 3.0]})])
tfe.write_tfrecords(d + "/z.tfrecord", [tfe.make_example({"z": [1.0]}).SerializeToString()])
tfe.write_tfrecords(d + "/m.tfrecord", [tfe.make_example(r).SerializeToString()
    for r in ({"x": [float(i) for i in range(1, 10)]}, {"x": [float(i) for i in range(9, 0, -1)]})])
tfe.write_tfrecords(d + "/bin.tfrecord", [tfe.make_example({"x": [2.0], "raw": [b"\xff\xfe"]}).SerializeToString()])
tfe.write_tfrecords(d + "/junk.tfrecord", [b"\x0a\x05\x0a\x03abc"])
P
# decode our output records with protobuf: one line per record
DUMP="$PYTHON -c \"
import sys; sys.path.insert(0, '$TESTS/py'); import tfexample as tfe
for r in tfe.read_tfrecords(sys.argv[1]):
    d = tfe.example_to_dict(tfe.Example.FromString(r))
    print(' '.join('%s=%s:%s' % (k, d[k][0], d[k][1]) for k in sorted(d)))\""
export DUMP

# Fixtures ------------------------------------------------------------------
testcmd "TF1 serving_default: records out, decoded by protobuf (README: x=2 -> 3)" \
	"tfk-predict --dir $TF1 x.tfrecord -o p.tfrecord && $DUMP p.tfrecord" \
	"y=float:[3.0]\ny=float:[3.5]\ny=float:[4.0]"
testcmd "TF1 --tag_set serve --signature_def serving_default, --keep label,name" \
	"tfk-predict --dir $TF1 --tag_set serve --signature_def serving_default --keep label,name x.tfrecord | $DUMP /dev/stdin" \
	"label=int64:[1] name=bytes:[b'a'] y=float:[3.0]\nlabel=int64:[0] name=bytes:[b'b,c'] y=float:[3.5]\nlabel=int64:[1] name=bytes:[b'q\"uote'] y=float:[4.0]"
testcmd "TF2 function library (x float [1]: batches of one), --json, --keep twice" \
	"tfk-predict --dir $TF2 --json --keep label --keep name x.tfrecord" \
	'{"y":[3.0],"label":[1],"name":["a"]}\n{"y":[3.5],"label":[0],"name":["b,c"]}\n{"y":[4.0],"label":[1],"name":["q\\"uote"]}'
for d in TF1 TF2; do
	eval dir=\$$d
	testcmd "$d regress_x_to_y fed the serialized records (ParseExample), --csv" \
		"tfk-predict --dir $dir --signature_def regress_x_to_y --csv --keep label x.tfrecord" \
		"outputs,label\n3.0,1\n3.5,0\n4.0,1"
	testcmd "$d regress_x_to_y2 (y2 = 0.5 x + 3), batches of 2" \
		"tfk-predict --dir $dir --signature_def regress_x_to_y2 --batch 2 --json x.tfrecord" \
		'{"outputs":[4.0]}\n{"outputs":[4.5]}\n{"outputs":[5.0]}'
	testcmd "$d classify_x_to_y, batches of 1" \
		"tfk-predict --dir $dir --signature_def classify_x_to_y -b 1 --json x.tfrecord" \
		'{"scores":[3.0]}\n{"scores":[3.5]}\n{"scores":[4.0]}'
	testcmd "$d regress_x2_to_y3 with --map inputs=x2" \
		"tfk-predict --dir $dir --signature_def regress_x2_to_y3 --map inputs=x2 --csv x.tfrecord" \
		"outputs\n3.5\n5.5\n2.0"
done
testcmd "matrix_half_plus_two: 9 values reshaped to [3, 3], CSV columns y_0..y_8" \
	"tfk-predict --dir $MAT --csv m.tfrecord" \
	"y_0,y_1,y_2,y_3,y_4,y_5,y_6,y_7,y_8\n2.5,3.0,3.5,4.0,4.5,5.0,5.5,6.0,6.5\n6.5,6.0,5.5,5.0,4.5,4.0,3.5,3.0,2.5"
testcmd "rust_regression {train, serve}: w x + b, input y left unfed" \
	"tfk-predict --dir $RUST --tag_set serve,train --signature_def tensorflow/serving/regress --csv x.tfrecord" \
	"out\n-1.7157245\n-2.5735867\n-3.431449"
testcmd "stdin, '-' and two files in one stream, batches across files" \
	"cat x.tfrecord | tfk-predict --dir $TF1 -b 2 --json - x.tfrecord | tr -d '\n'" \
	'{"y":[3.0]}{"y":[3.5]}{"y":[4.0]}{"y":[3.0]}{"y":[3.5]}{"y":[4.0]}'
testcmd "--json is tfk-cat --json of the records output, which the oracle checks" \
	"tfk-predict --dir $TF1 --keep label,name x.tfrecord -o p2.tfrecord &&
	 tfk-predict --dir $TF1 --keep label,name --json x.tfrecord -o p2.jsonl &&
	 tfk-cat --json p2.tfrecord | cmp - p2.jsonl && $PYTHON $TESTS/py/tfexample.py check-json p2.tfrecord p2.jsonl | sort | uniq -c | tr -s ' '" \
	" 3 ok"
testcmd "no records: empty output, exit 0" \
	": | tfk-predict --dir $TF1 --csv | wc -c" \
	"0"

# A model trained by tfk-train --out (Fashion-MNIST slice) -------------------
F=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $F/train-images-idx3-ubyte.gz \
	--labels $F/train-labels-idx1-ubyte.gz | tfk-cat --take 512 >"$T/tr.tfrecord"
tfk-idx -q --images $F/t10k-images-idx3-ubyte.gz \
	--labels $F/t10k-labels-idx1-ubyte.gz | tfk-cat --take 300 >"$T/te.tfrecord"
cp "$(dirname "$0")/../../examples/mlp.spec.json" "$T/spec.json"
(cd "$T" && tfk-train spec.json tr.tfrecord --out run -q --set fit.epochs=2 &&
 tfk-eval --json run te.tfrecord >eval.json)
# the spec's input mapping (image bytes * 1/255) as a tfk-map step
cat >"$T/prep.json" <<'J'
{"features": {"image": {"shape": [28, 28, 1], "output": "input_1", "layers": [
  {"class_name": "Rescaling", "config": {"scale": 0.00392156862745098, "offset": 0.0}}]}}}
J
tfk-map "$T/prep.json" "$T/te.tfrecord" -o "$T/te-f.tfrecord"
testcmd "trained MLP: Python's argmax accuracy from --keep label equals tfk-eval's" \
	"tfk-predict --dir run --keep label --csv te-f.tfrecord -o p.csv && $PYTHON -c \"
import csv, json, numpy as np
rows = list(csv.reader(open('p.csv')))
head, body = rows[0], np.array(rows[1:], dtype=np.float64)
print(head == ['dense_1_%d' % i for i in range(10)] + ['label'], body.shape)
p, y = body[:, :10], body[:, 10].astype(int)
acc = np.float32((p.argmax(1) == y).sum() / len(y))
e = json.load(open('eval.json'))
print(abs(p.sum(1) - 1).max() < 1e-5, acc == np.float32(e['accuracy']), e['examples'])\"" \
	"True (300, 11)\nTrue True 300"
testcmd "the same predictions from records out, --batch 7 and -j 2 (float32 bits within 1e-6)" \
	"tfk-predict --dir run --keep label te-f.tfrecord -o a.tfrecord &&
	 tfk-predict --dir run --keep label -b 7 -j 2 te-f.tfrecord -o b.tfrecord &&
	 $PYTHON -c \"
import sys; sys.path.insert(0, '$TESTS/py'); import tfexample as tfe
def load(f):
    return [tfe.example_to_dict(tfe.Example.FromString(r)) for r in tfe.read_tfrecords(f)]
a, b = load('a.tfrecord'), load('b.tfrecord')
print(len(a), [r['label'] for r in a] == [r['label'] for r in b],
      max(abs(x - y) for r, s in zip(a, b) for x, y in zip(r['dense_1'][1], s['dense_1'][1])) < 1e-6)\"" \
	"300 True True"
testcmd "trained MLP on the raw records it was trained on: converted as training did, the predictions of tfk-map's float records (1e-6)" \
	"tfk-predict --dir run --csv te.tfrecord -o raw.csv && tfk-predict --dir run --csv te-f.tfrecord -o f.csv &&
	 $PYTHON -c \"
import numpy as np
a = np.loadtxt('raw.csv', delimiter=',', skiprows=1)
b = np.loadtxt('f.csv', delimiter=',', skiprows=1)
print(a.shape, abs(a - b).max() < 1e-6)\"" \
	"(300, 10) True"
tfk-cat --json "$T/te.tfrecord" | sed 's/"image"/"pix"/' | tfk-json >"$T/te-pix.tfrecord"
testerr "records without the feature training read: the training spec's mapping as a hint" \
	"tfk-predict --dir run te-pix.tfrecord" \
	1 "te-pix.tfrecord: record 0 at byte 0: no feature 'input_1' for input 'input_1' (float32 [?, 28, 28]), which signature serving_default needs; in training it was fed from feature 'image' (uint8, scale 0.00392156863): convert that feature first, e.g. with tfk-map, then --map input_1=NEW_FEATURE, or use --signature_def serving_raw, which takes the records as they are"
testerr "--map input_1=pix: bytes of a feature training did not read are not converted" \
	"tfk-predict --dir run --map input_1=pix te-pix.tfrecord" \
	1 "te-pix.tfrecord: record 0 at byte 0: feature 'pix': bytes values, input 'input_1' wants float32 [?, 28, 28] (float list); in training it was fed from feature 'image' (uint8, scale 0.00392156863)"

# Integer inputs: a small Embedding model, int32 and int64 tokens -----------
$PYTHON -c '
import json, random
random.seed(5)
for n in range(64):
    y = n % 2
    t = [random.randint(10, 19) if y else random.randint(1, 9) for _ in range(8)]
    print(json.dumps({"tokens": t, "label": [y]}))' | tfk-json >"$T/tok.tfrecord"
printf '{"tokens":[1,2,3,4,5,6,7,2147483648]}\n' | tfk-json >"$T/big.tfrecord"
cat >"$T/emb.json" <<'J'
{"model": {"class_name": "Sequential", "config": {"name": "text", "layers": [
  {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 8], "dtype": "int32", "name": "tokens"}},
  {"class_name": "Embedding", "config": {"name": "embedding", "input_dim": 20, "output_dim": 4, "input_length": 8}},
  {"class_name": "Flatten", "config": {"name": "flatten"}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 2, "activation": "softmax"}}]}},
 "compile": {"optimizer": "adam", "loss": "sparse_categorical_crossentropy"},
 "fit": {"epochs": 1, "batch_size": 32}}
J
(cd "$T" && tfk-train emb.json tok.tfrecord --out emb32 -q &&
 tfk-train emb.json tok.tfrecord --out emb64 -q --set 'model.config.layers[0].config.dtype=int64')
for m in emb32 emb64; do
	testcmd "$m: int64 tokens feed the input; CSV floats equal tfk-model run's, bit for bit" \
		"tfk-predict --dir $m --csv tok.tfrecord -b 5 | head -4 >p.csv &&
		 tfk-cat --take 3 --json tok.tfrecord | $PYTHON -c \"
import json, sys; print('tokens=%s' % [json.loads(l)['tokens'] for l in sys.stdin])\" >expr &&
		 tfk-model run --dir $m --input_exprs \"\$(cat expr)\" --outdir o$m >/dev/null && $PYTHON -c \"
import numpy as np
got = np.loadtxt('p.csv', delimiter=',', skiprows=1, dtype=np.float32)
want = np.load('o$m/dense.npy')
print(open('p.csv').readline().strip(), got.shape, (got == want).all())\"" \
		"dense_0,dense_1 (3, 2) True"
done
testerr "int32 input: an int64 value outside int32" \
	"tfk-predict --dir emb32 big.tfrecord" \
	1 "big.tfrecord: record 0 at byte 0: feature 'tokens': value 2147483648 is out of range for input 'tokens' (int32 [?, 8])"
testerr "int32 input: float values are not converted" \
	"tfk-predict --dir emb32 --map tokens=x x.tfrecord" \
	1 "x.tfrecord: record 0 at byte 0: feature 'x': float values, input 'tokens' wants int32 [?, 8] (int64 list)"

# uint8 and string inputs, int64/string outputs: a SavedModel built here ---
# by python3-protobuf (field numbers of TensorFlow's graph, meta_graph and
# saved_model protos written below): img uint8 [-1, 2, 2] -> Cast to float
# and int64; s string [-1] -> Identity. Signature "one" takes s alone.
cat >"$T/mk.py" <<'P'
import os, sys
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
F = descriptor_pb2.FieldDescriptorProto
REP = F.LABEL_REPEATED
fd = descriptor_pb2.FileDescriptorProto(name="sm.proto", package="t", syntax="proto3")
def msg(name, *fields):
    m = fd.message_type.add(name=name)
    for fname, num, typ, *rest in fields:
        f = m.field.add(name=fname, number=num, type=typ,
                        label=rest[1] if len(rest) > 1 else F.LABEL_OPTIONAL)
        if rest and rest[0]:
            f.type_name = ".t." + rest[0]
    return m
def mapf(m, name, num, vtype, vmsg=None):
    e = m.nested_type.add(name="".join(w.title() for w in name.split("_")) + "Entry")
    e.options.map_entry = True
    e.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    v = e.field.add(name="value", number=2, type=vtype, label=F.LABEL_OPTIONAL)
    if vmsg:
        v.type_name = ".t." + vmsg
    m.field.add(name=name, number=num, type=F.TYPE_MESSAGE, label=REP,
                type_name=".t.%s.%s" % (m.name, e.name))
# field numbers: tensorflow/core/framework/{tensor_shape,attr_value,node_def,graph}.proto,
# tensorflow/core/protobuf/{meta_graph,saved_model}.proto
msg("Dim", ("size", 1, F.TYPE_INT64))
msg("Shape", ("dim", 2, F.TYPE_MESSAGE, "Dim", REP), ("unknown_rank", 3, F.TYPE_BOOL))
msg("AttrValue", ("s", 2, F.TYPE_BYTES), ("i", 3, F.TYPE_INT64), ("b", 5, F.TYPE_BOOL),
    ("type", 6, F.TYPE_INT32), ("shape", 7, F.TYPE_MESSAGE, "Shape"))
m = msg("NodeDef", ("name", 1, F.TYPE_STRING), ("op", 2, F.TYPE_STRING),
        ("input", 3, F.TYPE_STRING, None, REP))
mapf(m, "attr", 5, F.TYPE_MESSAGE, "AttrValue")
msg("GraphDef", ("node", 1, F.TYPE_MESSAGE, "NodeDef", REP))
msg("TensorInfo", ("name", 1, F.TYPE_STRING), ("dtype", 2, F.TYPE_INT32),
    ("tensor_shape", 3, F.TYPE_MESSAGE, "Shape"))
m = msg("SignatureDef", ("method_name", 3, F.TYPE_STRING))
mapf(m, "inputs", 1, F.TYPE_MESSAGE, "TensorInfo")
mapf(m, "outputs", 2, F.TYPE_MESSAGE, "TensorInfo")
msg("MetaInfoDef", ("tags", 4, F.TYPE_STRING, None, REP))
m = msg("MetaGraphDef", ("meta_info_def", 1, F.TYPE_MESSAGE, "MetaInfoDef"),
        ("graph_def", 2, F.TYPE_MESSAGE, "GraphDef"))
mapf(m, "signature_def", 5, F.TYPE_MESSAGE, "SignatureDef")
msg("SavedModel", ("saved_model_schema_version", 1, F.TYPE_INT64),
    ("meta_graphs", 2, F.TYPE_MESSAGE, "MetaGraphDef", REP))
pool = descriptor_pool.DescriptorPool()
pool.Add(fd)
SavedModel = message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName("t.SavedModel"))

DT_FLOAT, DT_UINT8, DT_STRING, DT_INT64, DT_BOOL = 1, 4, 7, 9, 10
sm = SavedModel(saved_model_schema_version=1)
mg = sm.meta_graphs.add()
mg.meta_info_def.tags.append("serve")
g = mg.graph_def
def node(name, op, inputs=(), **attrs):
    n = g.node.add(name=name, op=op)
    n.input.extend(inputs)
    for k, v in attrs.items():
        a = n.attr[k]
        if k in ("dtype", "T", "SrcT", "DstT"):
            a.type = v
        elif k == "shape":
            for d in v:
                a.shape.dim.add(size=d)
        elif k == "Truncate":
            a.b = v
def ph(name, dt, dims):
    node(name, "Placeholder", dtype=dt, shape=dims)
ph("img", DT_UINT8, [-1, 2, 2])
ph("s", DT_STRING, [-1])
node("f", "Cast", ["img"], SrcT=DT_UINT8, DstT=DT_FLOAT)
node("i", "Cast", ["img"], SrcT=DT_UINT8, DstT=DT_INT64)
node("sid", "Identity", ["s"], T=DT_STRING)
sd = mg.signature_def["serving_default"]
sd.method_name = "tensorflow/serving/predict"
for key, name, dt, dims in (("img", "img:0", DT_UINT8, [-1, 2, 2]), ("s", "s:0", DT_STRING, [-1])):
    ti = sd.inputs[key]
    ti.name, ti.dtype = name, dt
    for d in dims:
        ti.tensor_shape.dim.add(size=d)
for key, name, dt in (("asfloat", "f:0", DT_FLOAT), ("asint", "i:0", DT_INT64), ("echo", "sid:0", DT_STRING)):
    ti = sd.outputs[key]
    ti.name, ti.dtype = name, dt
sd = mg.signature_def["one"]
sd.method_name = "tensorflow/serving/predict"
ti = sd.inputs["s"]
ti.name, ti.dtype = "s:0", DT_STRING
ti.tensor_shape.dim.add(size=-1)
ti = sd.outputs["echo"]
ti.name, ti.dtype = "sid:0", DT_STRING
os.makedirs(sys.argv[1], exist_ok=True)
open(os.path.join(sys.argv[1], "saved_model.pb"), "wb").write(sm.SerializeToString())
P
$PYTHON "$T/mk.py" "$T/hand"
printf '{"img":[{"b64":"AAH//w=="}],"s":["hi"]}\n{"img":[{"b64":"AQIDBA=="}],"s":["yo"]}\n' | tfk-json >"$T/hand.tfrecord"
testcmd "uint8 input from one bytes value (raw), string input from a bytes_list; float, int64, bytes outputs" \
	"tfk-predict --dir hand --json hand.tfrecord" \
	'{"asfloat":[0.0,1.0,255.0,255.0],"asint":[0,1,255,255],"echo":["hi"]}\n{"asfloat":[1.0,2.0,3.0,4.0],"asint":[1,2,3,4],"echo":["yo"]}'
testcmd "  as CSV" \
	"tfk-predict --dir hand --csv hand.tfrecord" \
	"asfloat_0,asfloat_1,asfloat_2,asfloat_3,asint_0,asint_1,asint_2,asint_3,echo\n0.0,1.0,255.0,255.0,0,1,255,255,hi\n1.0,2.0,3.0,4.0,1,2,3,4,yo"
testerr "uint8 input: 3 bytes for 4 elements" \
	"printf '{\"img\":[{\"b64\":\"AAH/\"}],\"s\":[\"hi\"]}' | tfk-json | tfk-predict --dir hand" \
	1 "<stdin>: record 0 at byte 0: feature 'img': 3 bytes, input 'img' wants uint8 [?, 2, 2] (one byte per element)"
testerr "uint8 input: two bytes values" \
	"printf '{\"img\":[\"ab\",\"cd\"],\"s\":[\"hi\"]}' | tfk-json | tfk-predict --dir hand" \
	1 "<stdin>: record 0 at byte 0: feature 'img': 2 bytes values, input 'img' (uint8 [?, 2, 2]) takes one (raw bytes)"
testerr "uint8 input: int64 values are not converted" \
	"printf '{\"img\":[1,2,3,4],\"s\":[\"hi\"]}' | tfk-json | tfk-predict --dir hand" \
	1 "<stdin>: record 0 at byte 0: feature 'img': int64 values, input 'img' wants uint8 [?, 2, 2] (bytes list)"
testcmd "one string input, records with a feature of its name: the feature feeds it" \
	"tfk-predict --dir hand --signature_def one --json hand.tfrecord" \
	'{"echo":["hi"]}\n{"echo":["yo"]}'
testcmd "one string input, no such feature: the serialized records feed it" \
	"tfk-predict --dir hand --signature_def one x.tfrecord -o e.tfrecord && $PYTHON -c \"
import sys; sys.path.insert(0, '$TESTS/py'); import tfexample as tfe
ins = list(tfe.read_tfrecords('x.tfrecord'))
outs = [tfe.Example.FromString(r).features.feature['echo'].bytes_list.value for r in tfe.read_tfrecords('e.tfrecord')]
print(len(outs), outs == [[r] for r in ins])\"" \
	"3 True"

# Errors --------------------------------------------------------------------
testcmd "int64 feature for a float input: cast, as TF Serving's JSON and training do" \
	"tfk-predict --dir $TF1 --csv xi.tfrecord" \
	"y\n3.0"
testerr "two values for [?, 1]" \
	"tfk-predict --dir $TF1 x2v.tfrecord" \
	1 "x2v.tfrecord: record 1 at byte 33: feature 'x': 2 values, input 'x' wants float32 [?, 1]"
testerr "9 values expected, 1 given" \
	"tfk-predict --dir $MAT x.tfrecord" \
	1 "x.tfrecord: record 0 at byte 0: feature 'x': 1 values, input 'x' wants float32 [?, 3, 3]"
testerr "no feature for the input" \
	"tfk-predict --dir $TF1 z.tfrecord" \
	1 "z.tfrecord: record 0 at byte 0: no feature 'x' for input 'x' (float32 [?, 1]), which signature serving_default needs"
testerr "a feature missing in a later record" \
	"cat x.tfrecord z.tfrecord | tfk-predict --dir $TF1" \
	1 "<stdin>: record 3 at byte $(wc -c <"$T/x.tfrecord"): no feature 'x' for input 'x' (float32 [?, 1])"
for d in TF1 TF2; do
	eval dir=\$$d
	testerr "$d ParseExample: a required feature missing, named with its record" \
		"cat x.tfrecord z.tfrecord | tfk-predict --dir $dir --signature_def regress_x_to_y -b 2" \
		1 "<stdin>: record 3 at byte $(wc -c <"$T/x.tfrecord"): signature regress_x_to_y: node "
	testerr "  and ParseExample's words" \
		"tfk-predict --dir $dir --signature_def regress_x_to_y z.tfrecord" \
		1 "serialized[0]: feature 'x' (float32) is required but could not be found"
done
testerr "a record that is not an Example" \
	"tfk-predict --dir $TF1 junk.tfrecord" \
	1 "junk.tfrecord: record 0 at byte 0: byte "
testerr "--keep of a missing feature, -o: no file left" \
	"tfk-predict --dir $TF1 --keep nope x.tfrecord -o gone.tfrecord; r=\$?; ls gone.tfrecord .gone* 2>/dev/null; exit \$r" \
	1 "x.tfrecord: record 0 at byte 0: no feature 'nope' to keep"
check "  (and nothing under the output's name)" test ! -e "$T/gone.tfrecord"
testerr "--csv and bytes that are not text" \
	"tfk-predict --dir $TF1 --csv --keep raw bin.tfrecord" \
	1 "bin.tfrecord: record 0 at byte 0: feature 'raw': bytes that are not UTF-8 text cannot go into CSV (use --json)"
testcmd "  --json carries them as b64" \
	"tfk-predict --dir $TF1 --json --keep raw bin.tfrecord" \
	'{"y":[3.0],"raw":[{"b64":"//4="}]}'
head -c 30 "$T/x.tfrecord" >"$T/short.tfrecord"
testerr "truncated record file, -o: no file" \
	"tfk-predict --dir $TF1 short.tfrecord -o s.tfrecord" \
	1 "short.tfrecord: record 0 at byte 0: truncated"
check "  (no s.tfrecord)" test ! -e "$T/s.tfrecord"
cp "$T/x.tfrecord" "$T/crc.tfrecord"
printf 'X' | dd of="$T/crc.tfrecord" bs=1 seek=20 conv=notrunc 2>/dev/null
testerr "data crc mismatch" \
	"tfk-predict --dir $TF1 crc.tfrecord" \
	1 "crc.tfrecord: record 0 at byte 0: data crc mismatch"
testerr "unknown signature: the ones that exist are listed" \
	"tfk-predict --dir $TF1 --signature_def nope x.tfrecord" \
	1 "could not find signature \"nope\"; signatures are: classify_x_to_y, regress_x2_to_y3, regress_x_to_y, regress_x_to_y2, serving_default"
testerr "unknown tag set" \
	"tfk-predict --dir $TF1 --tag_set train x.tfrecord" \
	1 "MetaGraphDef associated with tag-set train could not be found in the SavedModel; tag-sets are: 'serve'"
testerr "no SavedModel there" \
	"tfk-predict --dir nowhere x.tfrecord" \
	1 "nowhere"
mkdir "$T/bad" && printf 'garbage garbage' >"$T/bad/saved_model.pb"
testerr "garbage saved_model.pb" \
	"tfk-predict --dir bad x.tfrecord" \
	1 "bad/saved_model.pb"
testerr "--map to an input the signature lacks" \
	"tfk-predict --dir $TF1 --map q=x x.tfrecord" \
	1 "--map q=x: signature serving_default has no input 'q'; its inputs: x"
testerr "--keep of an output's name" \
	"tfk-predict --dir $TF1 --keep y x.tfrecord" \
	1 "--keep y: signature serving_default has an output of that name"
testerr "usage: no --dir" "tfk-predict x.tfrecord" 2 "--dir DIR is required"
testerr "usage: --json with --csv" "tfk-predict --dir $TF1 --json --csv x.tfrecord" 2 "--json and --csv exclude each other"
testerr "usage: --batch 0" "tfk-predict --dir $TF1 -b 0 x.tfrecord" 2 "--batch: expected 1 to"
testerr "usage: --map without =" "tfk-predict --dir $TF1 --map x x.tfrecord" 2 "--map x: expected INPUT=FEATURE"
testcmd "--help shows an example" "tfk-predict --help | grep -A1 '^Example:' | tail -1" \
	"  tfk-predict --dir model --keep label --csv test.tfrecord"

done_testing
