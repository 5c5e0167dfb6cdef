#!/bin/sh
# tfk-zip: merged records read back by python3-protobuf (every kind, bit
# for bit, feature order), the shortest input ends the output and -v says
# what was left over, name clashes and --prefix, TensorFlow's fixture,
# truncated and non-Example input, usage errors.
. "$(dirname "$0")/lib.sh"

MNIST=$FIX/tfrecord/tfx_mnist/mnist.tfrecord
export MNIST

# a.rec: 5 records {id, x (floats incl. NaN and -0.0), empty int64 list};
# b.rec: 3 records {label, img (bytes with NUL and 0xff), unset (no kind)};
# c.rec: 4 records {id} (clashes with a.rec).
cat >"$T/mk.py" <<'EOF'
import os, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
nan = float("nan")
tfe.write_tfrecords("a.rec", [tfe.make_example(
    {"id": [i], "x": [i + 0.5, nan, -0.0], "e": []}, {"e": "int64"}).SerializeToString()
    for i in range(5)])
tfe.write_tfrecords("b.rec", [tfe.make_example(
    {"label": [10 * i], "img": [b"\x00\xff%d" % i, b""], "unset": None}).SerializeToString()
    for i in range(3)])
tfe.write_tfrecords("c.rec", [tfe.make_example({"id": [100 + i]}).SerializeToString()
    for i in range(4)])
EOF
(cd "$T" && "$PYTHON" mk.py)

# Python's reading: one line per record, "name=kind:values" (floats as
# bits, bytes in hex), features in wire order: the map entries are walked
# here (python3-protobuf's map iteration order is not the wire order),
# each Feature parsed by protobuf. --sorted sorts them by name.
cat >"$T/show.py" <<'EOF'
import os, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
def fields(b):
    return tfe.wire_fields(b, ld_only=True)
args = [a for a in sys.argv[1:] if a != "--sorted"]
for rec in tfe.read_tfrecords(args[0] if args else "/dev/stdin"):
    tfe.Example.FromString(rec)     # protobuf accepts the whole record
    out = []
    for _, feats in fields(rec):
        for _, entry in fields(feats):
            e = dict(fields(entry))
            kind, vals = tfe.feature_kind_values(tfe.Feature.FromString(e.get(2, b"")))
            if kind == "float":
                vals = ["%08x" % tfe.f32_bits(v) for v in vals]
            elif kind == "bytes":
                vals = [v.hex() for v in vals]
            out.append("%s=%s:%s" % (e[1].decode(), kind, ",".join(str(v) for v in vals)))
    print(" ".join(sorted(out) if "--sorted" in sys.argv else out))
EOF

testcmd "record i holds a's and b's features, every value bit for bit" \
	'tfk-zip a.rec b.rec | "$PYTHON" show.py --sorted' \
	"e=int64: id=int64:0 img=bytes:00ff30, label=int64:0 unset=none: x=float:3f000000,7fc00000,80000000
e=int64: id=int64:1 img=bytes:00ff31, label=int64:10 unset=none: x=float:3fc00000,7fc00000,80000000
e=int64: id=int64:2 img=bytes:00ff32, label=int64:20 unset=none: x=float:40200000,7fc00000,80000000"
check "a's features first, in their wire order, then b's" \
	sh -c '"$PYTHON" show.py a.rec | head -3 >sa && "$PYTHON" show.py b.rec >sb &&
	       paste -d" " sa sb >want && tfk-zip a.rec b.rec | "$PYTHON" show.py | cmp - want &&
	       paste -d" " sb sa >want && tfk-zip b.rec a.rec | "$PYTHON" show.py | cmp - want'
testcmd "the shortest input ends the output (3 of 5)" 'tfk-zip a.rec b.rec | tfk-count | cut -d" " -f1' '3'
testerr "-v: records zipped, which input ended, what was left over" \
	'tfk-zip -v a.rec b.rec --prefix p,q >/dev/null 2>err; cat err >&2; [ $(wc -l <err) -eq 2 ]' 0 \
	'tfk-zip: zipped 3 records; b.rec ended first'
testerr "  (a.rec had 2 more)" 'cat err >&2' 0 'tfk-zip: a.rec: 2 records left over'
testerr "  three inputs: each leftover counted, the current record included" \
	'tfk-zip -v --prefix ,,c_ a.rec b.rec c.rec >/dev/null' 0 'c.rec: 1 record left over'
testerr "  inputs of equal length: nothing left over" \
	'tfk-zip -v --prefix a,b a.rec a.rec >/dev/null' 0 \
	'tfk-zip: zipped 5 records; no input has records left over'
testcmd "one input: the records, re-encoded but equal" \
	'tfk-zip a.rec | "$PYTHON" show.py | md5sum' "$(cd "$T" && "$PYTHON" show.py a.rec | md5sum)"

# Names ----------------------------------------------------------------------------
testerr "a name in two inputs is an error naming both files and the record" \
	'tfk-zip a.rec c.rec' 1 \
	'tfk-zip: c.rec: record 0 at byte 0: feature "id" is also in a.rec (rename with --prefix)'
testcmd "--prefix renames" \
	'tfk-zip --prefix a/,c/ a.rec c.rec | "$PYTHON" show.py --sorted | cut -d" " -f2,4' \
	'a/id=int64:0 c/id=int64:100\na/id=int64:1 c/id=int64:101\na/id=int64:2 c/id=int64:102\na/id=int64:3 c/id=int64:103'
testcmd "an empty prefix leaves names alone" \
	'tfk-zip --prefix ,c_ a.rec c.rec | "$PYTHON" show.py --sorted | head -1 | cut -d" " -f1,3' \
	'c_id=int64:100 id=int64:0'
testerr "clashes are checked after renaming" \
	'"$PYTHON" -c "
import os, sys
sys.path.insert(0, os.path.join(os.environ[\"TESTS\"], \"py\"))
import tfexample as tfe
tfe.write_tfrecords(\"d.rec\", [tfe.make_example({\"c_id\": [1]}).SerializeToString()])" &&
	 tfk-zip --prefix ,c_ d.rec c.rec' 1 'feature "c_id" is also in d.rec'
testerr "--prefix needs one prefix per input" 'tfk-zip --prefix a a.rec b.rec' 2 \
	'--prefix: 2 inputs need 2 prefixes'
testerr "  (not more)" 'tfk-zip --prefix a,b,c a.rec b.rec' 2 \
	'--prefix: 2 inputs need 2 prefixes'

# Streams ----------------------------------------------------------------------------
testcmd "stdin as one input" \
	'tfk-cat b.rec | tfk-zip a.rec - | "$PYTHON" show.py --sorted | tail -1 | cut -d" " -f2,4' \
	'id=int64:2 label=int64:20'
testcmd "a record next to the one after it (--skip 1 on a pipe)" \
	'tfk-cat --skip 1 a.rec | tfk-zip --prefix cur_,next_ a.rec - | "$PYTHON" show.py --sorted | cut -d" " -f2,5' \
	'cur_id=int64:0 next_id=int64:1\ncur_id=int64:1 next_id=int64:2\ncur_id=int64:2 next_id=int64:3\ncur_id=int64:3 next_id=int64:4'
testerr "- only once" 'tfk-zip - -' 2 "standard input ('-') given 2 times"
testerr "no input: usage" 'tfk-zip' 2 'no input files'
check "-o and --compression gzip" \
	sh -c 'tfk-zip -o ab.rec.gz --compression gzip a.rec b.rec && gzip -t ab.rec.gz &&
	       tfk-zip a.rec b.rec | cmp - ab.rec.gz 2>/dev/null ||
	       { gzip -dc ab.rec.gz >ab.raw && tfk-zip a.rec b.rec | cmp - ab.raw; }'
testcmd "mnist fixture zipped with itself: every feature twice, values equal" \
	'tfk-zip --prefix l_,r_ "$MNIST" "$MNIST" | "$PYTHON" -c "
import os, sys
sys.path.insert(0, os.path.join(os.environ[\"TESTS\"], \"py\"))
import tfexample as tfe
src = [tfe.Example.FromString(r) for r in tfe.read_tfrecords(os.environ[\"MNIST\"])]
n = 0
for rec, s in zip(tfe.read_tfrecords(\"/dev/stdin\"), src):
    f = tfe.Example.FromString(rec).features.feature
    for k, v in s.features.feature.items():
        assert f[\"l_\" + k] == v and f[\"r_\" + k] == v, k
    assert len(f) == 2 * len(s.features.feature)
    n += 1
print(n)"' '1000'

# Errors ----------------------------------------------------------------------------
testerr "a truncated input is an error, not the shortest input" \
	'head -c 100 a.rec | tfk-zip --prefix a,b a.rec - >/dev/null' 1 '<stdin>: record 1 at byte'
testerr "a record that is not a tf.Example" \
	'"$PYTHON" -c "
import os, sys
sys.path.insert(0, os.path.join(os.environ[\"TESTS\"], \"py\"))
import tfexample as tfe
tfe.write_tfrecords(\"junk.rec\", [b\"\\x0a\\x05\\x0a\"])" && tfk-zip a.rec junk.rec' 1 \
	'junk.rec: record 0 at byte 0: bad tf.Example: byte'
testerr "a missing file" 'tfk-zip a.rec nosuch.rec' 1 'nosuch.rec'
check "-o: no file after an error" \
	sh -c '! tfk-zip -o out.rec a.rec c.rec 2>/dev/null && [ -z "$(ls -A | grep out.rec)" ]'

done_testing
