#!/bin/sh
# tfk-json: byte-exact round trips of TensorFlow-written files through
# tfk-cat --json, --schema for what JSON cannot say, output options, and
# every way a line can be wrong (located as FILE:LINE, no output file).
. "$(dirname "$0")/lib.sh"

MNIST=$FIX/tfrecord/tfx_mnist/mnist.tfrecord
PTRAIN=$FIX/tfrecord/tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz
PEVAL=$FIX/tfrecord/tfx_penguin/Split-eval/data_tfrecord-00000-of-00001.gz
export MNIST PTRAIN PEVAL

# Python's reading of records: one line per record, features sorted,
# "name=kind:values" (floats as their float32 bits, bytes in hex).
cat >"$T/show.py" <<'EOF'
import os, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
for rec in tfe.read_tfrecords(sys.argv[1] if len(sys.argv) > 1 else "/dev/stdin"):
    d = tfe.example_to_dict(tfe.Example.FromString(rec))
    out = []
    for k in sorted(d):
        kind, vals = d[k]
        if kind == "float":
            vals = ["%08x" % tfe.f32_bits(v) for v in vals]
        elif kind == "bytes":
            vals = [v.hex() for v in vals]
        out.append("%s=%s:%s" % (k, kind, ",".join(str(v) for v in vals)))
    print(" ".join(out))
EOF

# Round trips of TensorFlow's files ------------------------------------------
check "mnist: tfk-cat --json | tfk-json --schema gives the file back byte for byte" \
	sh -c 'tfk-inspect --json "$MNIST" >m.schema.json &&
	       tfk-cat --json "$MNIST" | tfk-json --schema m.schema.json | cmp - "$MNIST"'
check "  and without a schema too (no empty lists, floats keep their point)" \
	sh -c 'tfk-cat --json "$MNIST" | tfk-json | cmp - "$MNIST"'
check "penguin train (gzip): the uncompressed stream back byte for byte" \
	sh -c 'tfk-inspect --json "$PTRAIN" >p.schema.json &&
	       tfk-cat --json "$PTRAIN" | tfk-json --schema p.schema.json >p.out &&
	       gzip -dc "$PTRAIN" | cmp - p.out'
check "penguin eval, through -o and --compression gzip" \
	sh -c 'tfk-cat --json "$PEVAL" >pe.jsonl &&
	       tfk-json --schema p.schema.json --compression gzip -o pe.tfrecord.gz pe.jsonl &&
	       gzip -dc pe.tfrecord.gz >pe.raw && gzip -dc "$PEVAL" | cmp - pe.raw'
check "  --compression zlib" \
	sh -c 'tfk-json --compression zlib -o pe.zz pe.jsonl &&
	       "$PYTHON" -c "import sys, zlib; sys.stdout.buffer.write(zlib.decompress(open(\"pe.zz\", \"rb\").read()))" |
	       cmp - pe.raw'
check "gzip-compressed JSON lines in" \
	sh -c 'gzip -c pe.jsonl >pe.jsonl.gz && tfk-json pe.jsonl.gz | cmp - pe.raw'
check "several files in turn, - for stdin" \
	sh -c 'head -3 pe.jsonl >a.jsonl && tail -n +4 pe.jsonl |
	       tfk-json a.jsonl - | cmp - pe.raw'

# Values, as python3-protobuf reads them --------------------------------------
testcmd "bare values, integral floats next to floats, null, b64, blank lines" \
	'printf "%s\n" "{\"label\": 3, \"x\": [1, 2.5], \"s\": \"hi\", \"b\": {\"b64\": \"AP8=\"}, \"n\": null}" "" "   " "{\"label\": [-4]}" |
	 tfk-json | "$PYTHON" show.py' \
	'b=bytes:00ff label=int64:3 n=none: s=bytes:6869 x=float:3f800000,40200000\nlabel=int64:-4'
testcmd "a last line without a newline" \
	'printf "{\"a\": [1]}\n{\"a\": [2]}" | tfk-json | "$PYTHON" show.py' \
	'a=int64:1\na=int64:2'
testcmd "no input lines: no records" 'printf "\n\n" | tfk-json | wc -c' '0'
testcmd "{} is an Example with no features" \
	'echo "{}" | tfk-json | "$PYTHON" show.py' ''

# --schema: what JSON cannot say -----------------------------------------------
cat >"$T/s.json" <<'EOF'
{"format": "tfkit-schema", "version": 1,
 "features": {"f": {"kind": "float"}, "i": {"kind": "int64"},
              "b": {"kind": "bytes"}, "m": {"kind": "mixed"}}}
EOF
testerr "an empty list without a schema: located error" \
	'echo "{\"f\": []}" | tfk-json' 1 \
	'tfk-json: <stdin>:1: feature "f": empty list has no kind; write {"int64":[]}, {"float":[]} or {"bytes":[]}, or give --schema'
testcmd "typed empty lists need no schema" \
	'echo "{\"f\": {\"float\": []}, \"i\": {\"int64\":[]}, \"b\": {\"bytes\": []}, \"g\": {\"float\": [1]}}" | tfk-json | "$PYTHON" show.py' \
	'b=bytes: f=float: g=float:3f800000 i=int64:'
testcmd "tfk-cat --json writes an empty list with its kind" \
	'echo "{\"f\": [], \"i\": [], \"b\": [], \"n\": null}" | tfk-json --schema s.json | tfk-cat --json' \
	'{"f":{"float":[]},"i":{"int64":[]},"b":{"bytes":[]},"n":null}'
testcmd "  and tfk-cat --json | tfk-json round-trips it byte for byte" \
	'echo "{\"f\": [], \"i\": [], \"b\": [], \"x\": [1.5]}" | tfk-json --schema s.json >e.tfrecord && tfk-cat --json e.tfrecord | tfk-json | cmp - e.tfrecord && echo same' \
	'same'
testerr "a typed list whose values are another kind: error" \
	'echo "{\"i\": {\"int64\": [0.5]}}" | tfk-json' 1 \
	'tfk-json: <stdin>:1: feature "i": value 0 is not an integer, but the line says int64'
testerr "a typed list against the schema: error" \
	'echo "{\"f\": {\"int64\": []}}" | tfk-json --schema s.json' 1 \
	'tfk-json: <stdin>:1: feature "f": {"int64": [...]}, but the schema says float'
testcmd "  with --schema: empty lists of each kind" \
	'echo "{\"f\": [], \"i\": [], \"b\": []}" | tfk-json --schema s.json | "$PYTHON" show.py' \
	'b=bytes: f=float: i=int64:'
testcmd "integers in a float feature are floats" \
	'echo "{\"f\": [1, 2]}" | tfk-json --schema s.json | "$PYTHON" show.py' \
	'f=float:3f800000,40000000'
testerr "a string in a float feature: error" \
	'echo "{\"f\": [\"a\"]}" | tfk-json --schema s.json' 1 \
	'tfk-json: <stdin>:1: feature "f":'
testerr "a float in an int64 feature: error" \
	'echo "{\"i\": [1.5]}" | tfk-json --schema s.json' 1 \
	'tfk-json: <stdin>:1: feature "i":'
testcmd "names the schema does not know: kinds from the values" \
	'echo "{\"z\": [1.0], \"m\": [1]}" | tfk-json --schema s.json | "$PYTHON" show.py' \
	'm=int64:1 z=float:3f800000'
testerr "--schema: missing file" 'echo "{}" | tfk-json --schema nope.json' 1 \
	'tfk-json: nope.json: cannot open: No such file or directory'
testerr "--schema: an unknown key, by its JSON path" \
	'printf "%s" "{\"format\": \"tfkit-schema\", \"version\": 1, \"features\": {\"f\": {\"kind\": \"float\", \"knid\": 1}}}" >bad.json &&
	 echo "{}" | tfk-json --schema bad.json' 1 \
	'tfk-json: bad.json: features.f.knid: unknown key'
testerr "--schema: a SequenceExample schema is refused" \
	'printf "%s" "{\"format\": \"tfkit-schema\", \"version\": 1, \"context\": {}, \"feature_lists\": {}}" >seq.json &&
	 echo "{}" | tfk-json --schema seq.json' 1 \
	'tfk-json: seq.json: a SequenceExample schema'

# Bad lines ------------------------------------------------------------------
printf '%s\n' '{"a": [1]}' '' '{"a": [1,}' >"$T/syntax.jsonl"
testerr "a syntax error: FILE:LINE (blank lines counted), byte in the line" \
	'tfk-json syntax.jsonl >/dev/null' 1 'tfk-json: syntax.jsonl:3: byte '
testerr "not an object" 'echo "[1, 2]" | tfk-json' 1 'tfk-json: <stdin>:1: '
testerr "two objects on one line" 'echo "{\"a\": 1} {\"b\": 2}" | tfk-json' 1 \
	'tfk-json: <stdin>:1: '
testerr "a name given twice" 'echo "{\"a\": [1], \"a\": [2]}" | tfk-json' 1 \
	'tfk-json: <stdin>:1: feature "a":'
testerr "an int64 out of range" 'echo "{\"a\": [9223372036854775808]}" | tfk-json' 1 \
	'tfk-json: <stdin>:1: '
testerr "invalid base64" 'echo "{\"a\": [{\"b64\": \"A\"}]}" | tfk-json' 1 \
	'tfk-json: <stdin>:1: '
check "a bad line with -o: no output file, no temporary" \
	sh -c '! tfk-json -o out.tfrecord pe.jsonl syntax.jsonl 2>/dev/null &&
	       test ! -e out.tfrecord && ! ls -a | grep -q "tmp-"'
testerr "  the error names the second file" \
	'tfk-json -o out.tfrecord pe.jsonl syntax.jsonl' 1 'syntax.jsonl:3:'
testerr "missing input file" 'tfk-json nope.jsonl' 1 \
	'tfk-json: nope.jsonl: cannot open: No such file or directory'
testerr "-o into a missing directory" 'echo "{}" | tfk-json -o no/such/dir/x.tfrecord' 1 \
	'tfk-json: '
testerr "--compression bogus: usage" 'tfk-json --compression lz4 </dev/null' 2 \
	"--compression"
testcmd "--help names every option" \
	'tfk-json --help | grep -cE "^ +(-o, )?--(output|compression|schema) "' '3'

done_testing
