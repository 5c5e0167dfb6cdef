#!/bin/sh
# tfk-inspect: the table and the schema document for TensorFlow-written
# fixtures and for records built by python3-protobuf (tests/py/
# tfexample.py), checked field by field by Python's json module;
# SequenceExamples; every way a run must fail.
. "$(dirname "$0")/lib.sh"

MNIST=$FIX/tfrecord/tfx_mnist/mnist.tfrecord
FOX=$FIX/tfrecord/rust_raw_record/expected.tfrecord
PTRAIN=$FIX/tfrecord/tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz
PEVAL=$FIX/tfrecord/tfx_penguin/Split-eval/data_tfrecord-00000-of-00001.gz
export MNIST FOX PTRAIN PEVAL

# Fixtures: facts from the fixture README and python3-protobuf -------------
testcmd "mnist: the table" 'tfk-inspect "$MNIST"' \
'1000 records in 1 file, 2 features
feature       kind   present      length  values       samples
image_class   int64  1000 (100%%)  1       0 .. 9       9, 3, 6
image_floats  float  1000 (100%%)  784     -0.5 .. 0.5  -0.5, -0.5, -0.5'
testcmd "penguin train then eval (gzip): one table over both" \
	'tfk-inspect "$PTRAIN" "$PEVAL" | sed -n "1,2p;/^species/p"' \
'334 records in 2 files, 5 features
feature            kind   present     length  values  samples
species            int64  334 (100%%)  1       0 .. 2  0, 0, 0'
testcmd "stdin without arguments" 'tfk-inspect <"$MNIST" | head -1' \
	'1000 records in 1 file, 2 features'
testcmd "gzip on stdin, as -" 'cat "$PTRAIN" | tfk-inspect - | head -1' \
	'234 records in 1 file, 5 features'
# the first ten labels are 9 3 6 1 8 2 2 3 5 7 (python3-protobuf)
testcmd "--records 10" 'tfk-inspect --records 10 "$MNIST" | sed -n "1p;3p"' \
'10 records in 1 file, 2 features
image_class   int64  10 (100%%)  1       1 .. 9       9, 3, 6'
testcmd "-n counts over all files: 300 = 234 + 66" \
	'tfk-inspect -n 300 "$PTRAIN" "$PEVAL" "$MNIST" | head -1' \
	'300 records in 2 files, 5 features'
testcmd "an empty file" ': >empty && tfk-inspect empty' \
	'0 records in 1 file, 0 features'

cat >"$T/check_mnist.py" <<'EOF'
import json, sys
d = json.load(sys.stdin)
assert d["format"] == "tfkit-schema" and d["version"] == 1, d
assert d["records"] == 1000
f = d["features"]
assert sorted(f) == ["image_class", "image_floats"], list(f)
c, x = f["image_class"], f["image_floats"]
assert c == {"kind": "int64", "count": 1000,
             "length": {"min": 1, "max": 1, "mean": 1.0},
             "range": {"min": 0, "max": 9}, "shape": [1],
             "samples": [9, 3, 6]}, c
assert x["kind"] == "float" and x["count"] == 1000 and x["shape"] == [784]
assert x["length"] == {"min": 784, "max": 784, "mean": 784.0}
assert x["range"] == {"min": -0.5, "max": 0.5} and "nonfinite" not in x
assert isinstance(x["length"]["mean"], float)
print("ok")
EOF
testcmd "mnist --json: the document, checked by Python's json" \
	'tfk-inspect --json "$MNIST" | "$PYTHON" check_mnist.py' 'ok'

# Records built by python3-protobuf ---------------------------------------
cat >"$T/mk.py" <<'EOF'
import os, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(range(40))   # 51 bytes
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(20)        # 36 bytes
recs = [
    tfe.make_example({"img": [JPEG], "label": [3], "txt": ["h\u00e9llo"],
                      "x": [0.5, float("nan")], "bin": [b"\x00\xff"],
                      "m": [1], "\u00e9t\u00e9": [1.5]}),
    tfe.make_example({"img": [PNG], "label": [-7], "txt": ["\u00e9" * 60],
                      "x": [float("inf")], "bin": [b"\x80"], "m": [2.5]}),
    tfe.make_example({"label": [2**63 - 1], "e": None, "x": [],
                      "txt": ["a", "bc"]}, kinds={"x": "float"}),
]
tfe.write_tfrecords(sys.argv[1], [r.SerializeToString() for r in recs])
EOF
"$PYTHON" "$T/mk.py" "$T/mix.tfrecord"

cat >"$T/check_mix.py" <<'EOF'
import json, sys
d = json.load(sys.stdin)
assert d["records"] == 3
f = d["features"]
assert sorted(f) == sorted(["img", "label", "txt", "x", "bin", "m",
                            "\u00e9t\u00e9", "e"]), list(f)
img, lab, txt, x = f["img"], f["label"], f["txt"], f["x"]
assert img["kind"] == "bytes" and img["count"] == 2
assert img["content"] == "binary", img          # jpeg and png disagree
assert img["samples"][0] == {"b64": "/9j/4AAQSkZJRgAAAQIDBAUGBwgJCgsMDQ4PEBES"}, img
assert img["size"] == {"min": 36, "max": 51, "mean": 43.5}, img
assert lab["range"] == {"min": -7, "max": 9223372036854775807}, lab
assert lab["samples"] == [3, -7, 9223372036854775807]
assert txt["content"] == "text" and txt["length"]["max"] == 2
# sizes 6, 120, 1, 2
assert txt["size"] == {"min": 1, "max": 120, "mean": 32.25}, txt
assert txt["samples"][0] == "h\u00e9llo" and txt["samples"][1] == "\u00e9" * 40
assert txt["samples"][2] == "a"
assert "shape" not in txt                       # lengths 1, 1, 2
assert x["kind"] == "float" and x["count"] == 3 and x["nonfinite"] == 2, x
assert x["length"] == {"min": 0, "max": 2, "mean": 1.0}, x
assert x["range"] == {"min": 0.5, "max": 0.5} and x["samples"] == [0.5, "Infinity"]
assert f["bin"]["content"] == "binary" and f["bin"]["samples"][1] == {"b64": "gA=="}
assert f["m"]["kind"] == "mixed", f["m"]
assert f["\u00e9t\u00e9"]["kind"] == "float" and f["\u00e9t\u00e9"]["count"] == 1
assert f["e"] == {"kind": "none", "count": 1,
                  "length": {"min": 0, "max": 0, "mean": 0.0}}, f["e"]
print("ok")
EOF
testcmd "crafted records: --json, value by value" \
	'tfk-inspect --json mix.tfrecord | "$PYTHON" check_mix.py' 'ok'
# (rows sorted: their order is the wire order of protobuf's map writer)
testcmd "crafted records: the table" \
	'tfk-inspect mix.tfrecord >tab && sed -n 1,2p tab && sed 1,2d tab | LC_ALL=C sort' \
'3 records in 1 file, 8 features
feature  kind   present     length     values                     bytes        content  samples
bin      bytes  2 (66.67%%)  1                                     1/1.5/2      binary   {"b64": "AP8="}, {"b64": "gA=="}
e        none   1 (33.33%%)  0
img      bytes  2 (66.67%%)  1                                     36/43.5/51   binary   {"b64": "/9j/4AAQSkZJRgAAAQIDBAUGBwgJCgsMDQ4PEBES"}, {"b64": "iVBORw0KGgoAAAANSUhEUgAAAAAAAAAAAAAAAAAA"}
label    int64  3 (100%%)    1          -7 .. 9223372036854775807                        3, -7, 9223372036854775807
m        mixed  2 (66.67%%)  1          1 .. 2.5                                         1, 2.5
txt      bytes  3 (100%%)    1/1.333/2                             1/32.25/120  text     "h\303\251llo", "\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251\303\251", "a"
x        float  3 (100%%)    0/1/2      0.5 .. 0.5, 2 nan/inf                            0.5, "Infinity"
\303\251t\303\251      float  1 (33.33%%)  1          1.5 .. 1.5                                       1.5'

# SequenceExamples ----------------------------------------------------------
cat >"$T/mkseq.py" <<'EOF'
import os, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
recs = []
for i, steps in enumerate([[[1, 2], [3]], [[4], [5], [6, 7, 8]]]):
    sx = tfe.SequenceExample()
    sx.context.feature["id"].bytes_list.value.append(b"seq%d" % i)
    fl = sx.feature_lists.feature_list["tok"]
    for s in steps:
        fl.feature.add().int64_list.value.extend(s)
    fl = sx.feature_lists.feature_list["w"]
    for s in steps:
        fl.feature.add().float_list.value.append(0.25 * len(s))
    recs.append(sx.SerializeToString())
tfe.write_tfrecords(sys.argv[1], recs)
EOF
"$PYTHON" "$T/mkseq.py" "$T/seq.tfrecord"
cat >"$T/check_seq.py" <<'EOF'
import json, sys
d = json.load(sys.stdin)
assert d["records"] == 2 and "features" not in d, d
assert d["context"]["id"]["samples"] == ["seq0", "seq1"], d["context"]
t = d["feature_lists"]["tok"]
assert t["kind"] == "int64" and t["count"] == 2, t
assert t["steps"] == {"min": 2, "max": 3, "mean": 2.5}, t
assert t["length"] == {"min": 1, "max": 3, "mean": 1.6}, t
# samples: the first value of the first steps
assert t["range"] == {"min": 1, "max": 8} and t["samples"] == [1, 3, 4], t
w = d["feature_lists"]["w"]
assert w["kind"] == "float" and w["shape"] == [1], w
assert w["range"] == {"min": 0.25, "max": 0.75}, w
print("ok")
EOF
testcmd "--sequence --json: context and feature lists" \
	'tfk-inspect --sequence --json seq.tfrecord | "$PYTHON" check_seq.py' 'ok'
testcmd "--sequence: the table" \
	'tfk-inspect --sequence seq.tfrecord >tab && sed -n 1,8p tab && sed 1,8d tab | LC_ALL=C sort' \
'2 records in 1 file, 1 context feature, 2 feature lists

context:
feature  kind   present   length  bytes  content  samples
id       bytes  2 (100%%)  1       4      text     "seq0", "seq1"

feature lists:
feature list  kind   present   steps    length/step  values        samples
tok           int64  2 (100%%)  2/2.5/3  1/1.6/3      1 .. 8        1, 3, 4
w             float  2 (100%%)  2/2.5/3  1            0.25 .. 0.75  0.5, 0.25, 0.25'
testerr "Example records read as SequenceExamples: located error" \
	'tfk-inspect --sequence "$FOX"' 1 \
	"expected.tfrecord: record 0 at byte 0: not a SequenceExample: byte 0:"

# Failures -----------------------------------------------------------------
testerr "missing file" 'tfk-inspect nope.tfrecord' 1 \
	'tfk-inspect: nope.tfrecord: cannot open: No such file or directory'
testerr "not Example records" 'tfk-inspect "$FOX"' 1 \
	"tfk-inspect: $FOX: record 0 at byte 0: not an Example: byte 0:"
"$PYTHON" -c '
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[100] ^= 1
open(sys.argv[2], "wb").write(b)
b[100] ^= 1
open(sys.argv[3], "wb").write(b[:5000])
' "$MNIST" "$T/crc.tfrecord" "$T/cut.tfrecord"
# TensorBoard event files: described (events, tags by kind), not refused
EVENTS=$FIX/events/tfx_estimator_chicago_taxi/eval_chicago-taxi-eval/events.out.tfevents.1646034751.jiyongjung.c.googlers.com
export EVENTS
testcmd "an event file: its events and tags by kind, and tfk-events for the values" \
	'tfk-inspect "$EVENTS" | sed "s|$EVENTS|E|"' \
	"E: TensorBoard event file (file_version \"brain.Event:2\"): 7 events, 11 tags (10 scalar, 1 tensor)\n  tags: accuracy accuracy_baseline auc auc_precision_recall average_loss label/mean loss precision prediction/mean recall ...\n  read them with: tfk-events --list E"
testerr "--json on an event file says what it is" 'tfk-inspect --json "$EVENTS"' 1 \
	"$EVENTS: a TensorBoard event file, not tf.Example records; tfk-events --list reads it"
testerr "... and so does an event file on stdin" 'tfk-inspect <"$EVENTS"' 1 \
	"tfk-inspect: -: a TensorBoard event file, not tf.Example records"
testerr "data crc mismatch: located" 'tfk-inspect crc.tfrecord' 1 \
	'tfk-inspect: crc.tfrecord: record 0 at byte 0: data crc mismatch'
testcmd "  and nothing on stdout" \
	'tfk-inspect crc.tfrecord 2>/dev/null; echo "rc=$?"' 'rc=1'
# record 0 of mnist.tfrecord is 3203 framed bytes
testerr "truncated file" 'tfk-inspect cut.tfrecord' 1 \
	'tfk-inspect: cut.tfrecord: record 1 at byte 3203: truncated'
testerr "a bad file after a good one" 'tfk-inspect "$MNIST" nope' 1 \
	'tfk-inspect: nope: cannot open'
testerr "negative --records: usage" 'tfk-inspect -n -1 "$MNIST"' 2 \
	'--records must be 0 (all) or more'
testerr "unknown option: usage" 'tfk-inspect --bogus "$MNIST"' 2 \
	"unknown option '--bogus'"
testcmd "--help names every option" \
	'tfk-inspect --help | grep -cE "^ +(-n, )?--(json|records|sequence) "' '3'

done_testing
