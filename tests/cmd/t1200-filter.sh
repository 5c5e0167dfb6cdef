#!/bin/sh
# tfk-filter: which records are kept, checked by python3-protobuf against
# the same predicate written in Python; random() against an independent
# Python implementation of the documented formula (and its statistics);
# TensorFlow's fixtures; parse errors with the caret line; run-time type
# errors, missing features, truncated and non-Example input.
. "$(dirname "$0")/lib.sh"

MNIST=$FIX/tfrecord/tfx_mnist/mnist.tfrecord
PTRAIN=$FIX/tfrecord/tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz
export MNIST PTRAIN

# 300 records written by python3-protobuf: id, label = id % 10,
# x = id / 4 (float), name "n<id>", tokens (id % 4 values), and "a/b"
# on even ids only.
cat >"$T/mk.py" <<'EOF'
import os, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
recs = []
for i in range(300):
    d = {"id": [i], "label": [i % 10], "x": [i / 4.0],
         "name": [b"n%d" % i], "tokens": [b"t%d" % k for k in range(i % 4)]}
    kinds = {"tokens": "bytes"}
    if i % 2 == 0:
        d["a/b"] = [i * 2]
    recs.append(tfe.make_example(d, kinds).SerializeToString())
tfe.write_tfrecords(sys.argv[1], recs)
EOF
"$PYTHON" "$T/mk.py" "$T/d.rec"

# ids of the records of a TFRecord stream (stdin), one line, and a check
# that each is byte for byte a record of the input file.
cat >"$T/ids.py" <<'EOF'
import os, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
src = set(tfe.read_tfrecords(sys.argv[1])) if len(sys.argv) > 1 else None
ids = []
for rec in tfe.read_tfrecords("/dev/stdin"):
    if src is not None and rec not in src:
        print("record changed"); sys.exit(1)
    ids.append(tfe.Example.FromString(rec).features.feature["id"].int64_list.value[0])
print(" ".join(map(str, ids)))
EOF
# The ids Python keeps: python.py 'PREDICATE over i' [seed]
cat >"$T/want.py" <<'EOF'
import sys
M = (1 << 64) - 1
def mix(x):
    x = (x + 0x9e3779b97f4a7c15) & M
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & M
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & M
    return x ^ (x >> 31)
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
n = int(sys.argv[3]) if len(sys.argv) > 3 else 300
def rnd(pos, k):
    return (mix(seed ^ mix(pos ^ mix(k))) >> 11) * 2.0 ** -53
pred = eval("lambda i: " + sys.argv[1])
print(" ".join(str(i) for i in range(n) if pred(i)))
EOF

same() {	# NAME EXPR PYTHON-PREDICATE [SEED]
	testcmd "$1" "tfk-filter --seed ${4:-0} '$2' d.rec | \"\$PYTHON\" ids.py d.rec" \
		"$("$PYTHON" "$T/want.py" "$3" "${4:-0}")"
}

same "int64 equality" 'label == 3' 'i % 10 == 3'
same "and, or, not, parentheses" 'not (label < 5 or label > 7) and id >= 100' \
	'5 <= i % 10 <= 7 and i >= 100'
same "float feature, arithmetic, mixed int/float" 'x * 4 - id == 0 and x > 70.1' \
	'i / 4.0 > 70.1'
same "floored % and true division" '(-id) % 7 == 3 and id / 2 < 50' \
	'(-i) % 7 == 3 and i / 2 < 50'
same "string equality" 'name == "n42" or name == "n7"' 'i in (7, 42)'
same "string order (bytes)" 'name < "n12"' '("n%d" % i) < "n12"'
same "regex, unanchored and anchored" 'name ~ "^n1[0-9]$" or name ~ "99"' \
	'(10 <= i <= 19) or "99" in str(i)'
same "startswith" 'startswith(name, "n29")' 'str(i).startswith("29")'
same "len() of a list, 0 for a missing feature" 'len(tokens) == 3 and len(nope) == 0' \
	'i % 4 == 3'
same "f[i], negative index, out of range is no value" \
	'tokens[-1] == "t2" or tokens[5] == "t5"' 'i % 4 == 3'
same "a list is not a scalar: == false, != true" \
	'tokens == "t0"' 'i % 4 == 1'
same "  (and != is not ==)" 'tokens != "t0" and id < 10' 'i % 4 != 1 and i < 10'
same "has() and feature(\"a/b\"), short-circuit" \
	'has(feature("a/b")) and feature("a/b") == id * 2 and id % 3 == 0' \
	'i % 6 == 0'
same "random() is the documented splitmix64 draw (seed 5)" \
	'random() < 0.3' 'rnd(i, 0) < 0.3' 5
same "two random() calls are the k = 0 and k = 1 draws" \
	'random() < 0.5 and random() >= 0.5' 'rnd(i, 0) < 0.5 and rnd(i, 1) >= 0.5' \
	9
testcmd "random(): the position counts across files (a.rec b.rec = d.rec)" \
	'tfk-cat --take 120 d.rec >a.rec && tfk-cat --skip 120 d.rec >b.rec &&
	 tfk-filter --seed 3 "random() < 0.5" d.rec >w.rec &&
	 tfk-filter --seed 3 "random() < 0.5" a.rec b.rec | cmp - w.rec && echo same' \
	'same'

# random() < 0.1 over 20000 records keeps Binomial(20000, 0.1): mean
# 2000, sd 42.4; within 4 sd, and the same count as Python's formula.
testcmd "random() < 0.1 keeps 10% (within 4 sd of 2000 of 20000)" \
	'"$PYTHON" -c "import sys; [print(\"{\\\"i\\\":%d}\" % i) for i in range(20000)]" |
	 tfk-json >big.rec && n=$(tfk-filter --seed 11 "random() < 0.1" big.rec | tfk-count | cut -d" " -f1) &&
	 w=$("$PYTHON" want.py "rnd(i, 0) < 0.1" 11 20000 | wc -w) &&
	 [ "$n" -eq "$w" ] && [ "$n" -gt 1830 ] && [ "$n" -lt 2170 ] && echo ok' 'ok'

testerr "-v reports kept and dropped" \
	'tfk-filter -v "label == 3" d.rec >/dev/null' 0 \
	'tfk-filter: kept 30 of 300 records, dropped 270'
check "kept records are byte for byte the input's" \
	sh -c 'tfk-filter "id % 7 == 1" d.rec | "$PYTHON" ids.py d.rec >/dev/null'
check "-o writes the file; --compression gzip" \
	sh -c 'tfk-filter -o out.rec.gz --compression gzip "label == 1" d.rec &&
	       gzip -t out.rec.gz && [ "$(tfk-count out.rec.gz | cut -d" " -f1)" = 30 ]'
testcmd "stdin and several files in turn" \
	'tfk-cat d.rec | tfk-filter "id < 3" - d.rec | "$PYTHON" ids.py' '0 1 2 0 1 2'

# TensorFlow's files -----------------------------------------------------------
testcmd "mnist fixture: class 3 has 90 records (README counts)" \
	'tfk-filter "image_class == 3" "$MNIST" | tfk-count | cut -d" " -f1' '90'
testcmd "mnist: 784 floats, image_floats[400] against python3-protobuf" \
	'tfk-filter "len(image_floats) == 784 and image_floats[400] > 0.2" "$MNIST" | tfk-count | cut -d" " -f1' \
	"$("$PYTHON" -c '
import os, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
print(sum(1 for r in tfe.read_tfrecords(os.environ["MNIST"])
          if tfe.Example.FromString(r).features.feature["image_floats"].float_list.value[400] > 0.2))')"
testcmd "penguin fixture (gzip): species 0 and a float bound" \
	'tfk-filter "species == 0 and body_mass_g < 0.3" "$PTRAIN" | tfk-count | cut -d" " -f1' \
	"$("$PYTHON" -c '
import os, sys, gzip
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
n = 0
for r in tfe.read_tfrecords(os.environ["PTRAIN"]):
    f = tfe.Example.FromString(r).features.feature
    n += f["species"].int64_list.value[0] == 0 and f["body_mass_g"].float_list.value[0] < 0.3
print(n)')"

# Errors -------------------------------------------------------------------------
testerr "parse error: exit 2, line:column" 'tfk-filter "(a > 1" d.rec' 2 \
	"tfk-filter: expression:1:7: expected ')'"
testcmd "  with the expression and a caret under the column" \
	'tfk-filter "(a > 1" d.rec 2>&1 | tail -2' '  (a > 1\n        ^'
testcmd "  on the right line of a multi-line expression" \
	'tfk-filter "id == 1 and
	  len(x) ==" d.rec 2>&1; echo "exit $?"' \
	"tfk-filter: expression:2:13: expected a value, got the end\n  \t  len(x) ==\n  \t           ^\nexit 2"
testerr "type error found while parsing" 'tfk-filter "id + \"x\" > 1" d.rec' 2 \
	'expression:1:6: expected a number'
testerr "unknown function" 'tfk-filter "lenn(x) > 1" d.rec' 2 \
	"expression:1:1: unknown function 'lenn'"
testerr "bad regex" 'tfk-filter "name ~ \"a[\"" d.rec' 2 'expression:1:8: bad regex'
testerr "no expression: usage" 'tfk-filter' 2 'missing EXPR'
testerr "run-time type error names the record and the feature" \
	'tfk-filter "name == 3" d.rec' 1 \
	'tfk-filter: d.rec: record 0 at byte 0: cannot compare feature "name" (bytes) with a number'
testerr "a missing feature is an error at its record" \
	'tfk-filter "feature(\"a/b\") > 0" d.rec' 1 \
	'd.rec: record 1 at byte 106: feature "a/b": not in the record (test it with has() first)'
check "records before a run-time error reach stdout; -o leaves no file" \
	sh -c '! tfk-filter "id < 2 or feature(\"a/b\") > 0" d.rec 2>/dev/null >part.rec &&
	       [ "$("$PYTHON" ids.py <part.rec)" = "0 1 2" ] &&
	       ! tfk-filter -o nofile.rec "feature(\"a/b\") > 0" d.rec 2>/dev/null &&
	       [ ! -e nofile.rec ] && [ -z "$(ls -A . | grep nofile)" ]'
testerr "a truncated stream (killed upstream) is an error, not an end" \
	'head -c 1000 d.rec | tfk-filter "id > 0" >/dev/null' 1 \
	'<stdin>: record 9 at byte 946: truncated: 54 of 96 bytes'
testerr "a record that is not a tf.Example" \
	'"$PYTHON" -c "
import os, sys
sys.path.insert(0, os.path.join(os.environ[\"TESTS\"], \"py\"))
import tfexample as tfe
tfe.write_tfrecords(\"junk.rec\", [b\"\\xff\\xff\"])" && tfk-filter "true" junk.rec' 1 \
	'junk.rec: record 0 at byte 0: bad tf.Example: byte 0'
testerr "--compression checked" 'tfk-filter --compression lz4 true d.rec' 2 \
	"--compression: expected none, gzip or zlib, got 'lz4'"

done_testing
