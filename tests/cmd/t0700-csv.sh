#!/bin/sh
# t0700-csv.sh - tfk-csv: every RFC 4180 rule after a round trip through
# python3-protobuf (tests/py/tfexample.py, which shares no code with
# tfkit), type inference and its errors, defaults and missing values,
# column selection and labels, gzip input, BOM, CRLF, bad rows with
# file:line:col, sharded output with its schema, -j and --shard.
. "$(dirname "$0")/lib.sh"

# The oracle. One line per record: features sorted by name, "NAME=KIND:
# V,V"; a float as the shortest decimal that reads back as the same
# float32 (printed as Python prints that decimal), bytes as JSON
# strings. Decodes each DIR/N.tfr into DIR/N.got.
cat >"$T/dec.py" <<'PY'
import glob, json, struct, sys
sys.path.insert(0, sys.argv[1])
import tfexample as tfe
def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]
def fmt(kind, v):
    if kind == 'float':
        if v != v or v in (float('inf'), float('-inf')):
            return repr(v)
        for p in range(1, 10):
            s = '%.*g' % (p, v)
            if f32(float(s)) == v:
                return repr(float(s))
    if kind == 'bytes':
        return json.dumps(v.decode('utf-8', 'backslashreplace'), ensure_ascii=False)
    return str(v)
for path in sorted(glob.glob(sys.argv[2] + '/*.tfr')):
    with open(path[:-4] + '.got', 'w') as out:
        try:
            for rec in tfe.read_tfrecords(path):
                d = tfe.example_to_dict(tfe.Example.FromString(rec))
                print(' '.join('%s=%s:%s' % (k, kind, ','.join(fmt(kind, v) for v in vals))
                               for k, (kind, vals) in sorted(d.items())), file=out)
        except Exception as e:
            print('DECODE ERROR: %r' % e, file=out)
PY
# float32 of a text as libc's strtof reads it (no tfkit code involved)
cat >"$T/strtof.py" <<'PY'
import ctypes
_f = ctypes.CDLL(None).strtof
_f.restype = ctypes.c_float
_f.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
def strtof(s):
    return _f(s.encode(), None)
PY

# rt NAME COMMAND WANT: COMMAND (run by sh in $T) writes records on
# stdout; after every case has run, one oracle run decodes them all
# (python start-up is the slow part) and rt_done reports, in order,
# whether each exited 0 and decoded to WANT (printf escapes).
mkdir "$T/rt"
_rt=0
rt() {
	_rt=$((_rt + 1))
	_k=$(printf '%03d' $_rt)
	printf '%s' "$1" >"$T/rt/$_k.name"
	printf '%s' "$2" >"$T/rt/$_k.cmd"
	printf "$3" >"$T/rt/$_k.want"
	(cd "$T" && sh -c "$2") >"$T/rt/$_k.tfr" 2>"$T/rt/$_k.err"
	echo $? >"$T/rt/$_k.rc"
}
rt_done() {
	$PYTHON "$T/dec.py" "$TESTS/py" "$T/rt"
	for _f in "$T"/rt/*.name; do
		_k=${_f%.name}
		if [ "$(cat "$_k.rc")" = 0 ] && cmp -s "$_k.want" "$_k.got"; then
			_result pass "$(cat "$_f")"
		else
			_result fail "$(cat "$_f")"
			echo "#   command: $(cat "$_k.cmd")"
			echo "#   exit: $(cat "$_k.rc")"
			sed 's/^/#   want: /' "$_k.want"
			sed 's/^/#   got:  /' "$_k.got"
			sed 's/^/#   stderr: /' "$_k.err"
		fi
	done
}

# --- RFC 4180 ----------------------------------------------------------------

printf 'a,b\r\n"x,y","say ""hi"""\r\n"multi\r\nline",\r\nplain,"tail"' >"$T/rfc.csv"
rt "quotes, commas, escaped quotes, CRLF inside quotes, no final line break" \
	'tfk-csv -q rfc.csv' \
	'a=bytes:"x,y" b=bytes:"say \\"hi\\""\na=bytes:"multi\\r\\nline" b=bytes:""\na=bytes:"plain" b=bytes:"tail"\n'
printf '\357\273\277id,name\n1,  spaced  \n\n2,ab"c\n' >"$T/bom.csv"
rt "BOM skipped, spaces kept, blank line skipped, stray quote is data" \
	'tfk-csv -q bom.csv' 'id=int64:1 name=bytes:"  spaced  "\nid=int64:2 name=bytes:"ab\\"c"\n'
printf 'a;b\n1;"2;3"\n' >"$T/semi.csv"
rt "--delimiter ;" 'tfk-csv -q -d ";" semi.csv' 'a=int64:1 b=bytes:"2;3"\n'
printf 'a\tb\n1\t2.5\n' >"$T/tab.tsv"
rt "--delimiter tab" 'tfk-csv -q --delimiter tab tab.tsv' 'a=int64:1 b=float:2.5\n'
printf 'a,b\n1,x\n2,y\n' | gzip -c >"$T/z.csv.gz"
rt "gzip input read transparently" 'tfk-csv -q z.csv.gz' 'a=int64:1 b=bytes:"x"\na=int64:2 b=bytes:"y"\n'
rt "gzip on stdin" 'tfk-csv -q <z.csv.gz' 'a=int64:1 b=bytes:"x"\na=int64:2 b=bytes:"y"\n'

# --- types ---------------------------------------------------------------------

printf 'i,f,e,s,big,m\n1,1,1e3,x,9223372036854775807,\n-2,0.1,-inf, 7,9223372036854775808,\n 3 ,2,nan,z,1,\n' >"$T/types.csv"
rt "inferred int64, float, bytes; int64 overflow is float; all-missing is bytes" \
	'tfk-csv -q types.csv' \
	'big=float:9.223372e+18 e=float:1000.0 f=float:1.0 i=int64:1 m=bytes:"" s=bytes:"x"\nbig=float:9.223372e+18 e=float:-inf f=float:0.1 i=int64:-2 m=bytes:"" s=bytes:" 7"\nbig=float:1.0 e=float:nan f=float:2.0 i=int64:3 m=bytes:"" s=bytes:"z"\n'
rt "--column-types forces" \
	'tfk-csv -q --column-types i=float,f=bytes --column-types big=bytes types.csv | tfk-cat --take 1' \
	'big=bytes:"9223372036854775807" e=float:1000.0 f=bytes:"1" i=float:1.0 m=bytes:"" s=bytes:"x"\n'

$PYTHON -c '
import random
r = random.Random(7)
print("x")
for i in range(3000):
    print(r.choice(["%.7g", "%.3f", "%.12e", "%.1f", "%.9g", "%.20g"]) % (r.uniform(-1, 1) * 10 ** r.randint(-40, 40)))
' >"$T/floats.csv"
check "3000 decimals: the float32 libc's strtof reads" sh -c '
	tfk-csv -q floats.csv >floats.tfr &&
	$PYTHON -c "
import struct, sys; sys.path.insert(0, \"$TESTS/py\"); sys.path.insert(0, \".\")
import tfexample as tfe
from strtof import strtof
bits = lambda x: struct.pack(\"<f\", x)
want = [strtof(l.strip()) for l in open(\"floats.csv\").readlines()[1:]]
got = [tfe.example_to_dict(tfe.Example.FromString(r))[\"x\"][1][0] for r in tfe.read_tfrecords(\"floats.tfr\")]
bad = [(w, g) for w, g in zip(want, got) if bits(w) != bits(g)]
assert len(got) == 3000 and not bad, bad[:5]
"'

{ echo 'n,s'; i=0; while [ $i -lt 30 ]; do echo "$i,a"; i=$((i + 1)); done; echo 'abc,b'; } >"$T/late.csv"
testerr "a value contradicting the inferred type: file:line:col and a hint" \
	'tfk-csv -q --infer-rows 10 -o late late.csv' 1 \
	"tfk-csv: late.csv:32:1: column 'n': 'abc' is not an int64 (type inferred from the first 10 rows of late.csv; use --two-pass or --column-types 'n=bytes', or --na-values for a missing-value marker)"
check "no output files after the error" sh -c '! ls late-* late.schema.json 2>/dev/null'
rt "--two-pass infers from every row" \
	'tfk-csv -q --infer-rows 10 --two-pass late.csv | tfk-cat --skip 29' \
	'n=bytes:"29" s=bytes:"a"\nn=bytes:"abc" s=bytes:"b"\n'
rt "--infer-rows covering the file" \
	'tfk-csv -q --infer-rows 100 late.csv | tfk-cat --skip 30' 'n=bytes:"abc" s=bytes:"b"\n'
testerr "--two-pass on stdin is a usage error" 'tfk-csv --two-pass <late.csv' 2 \
	"--two-pass reads its input twice"
testerr "forced type: no hint" 'tfk-csv -q --column-types s=int64 late.csv' 1 \
	"tfk-csv: late.csv:2:3: column 's': 'a' is not an int64"

# --- missing values, defaults, NA ----------------------------------------------

printf 'a,b,c\n1,,x\n,2.5,\nNA,?,NA\n' >"$T/miss.csv"
rt "missing: the type's zero (make_csv_dataset); NA is text by default" 'tfk-csv -q miss.csv' \
	'a=bytes:"1" b=bytes:"" c=bytes:"x"\na=bytes:"" b=bytes:"2.5" c=bytes:""\na=bytes:"NA" b=bytes:"?" c=bytes:"NA"\n'
rt "--na-values" 'tfk-csv -q --na-values NA,? miss.csv' \
	'a=int64:1 b=float:0.0 c=bytes:"x"\na=int64:0 b=float:2.5 c=bytes:""\na=int64:0 b=float:0.0 c=bytes:""\n'
rt "--defaults (the default's type takes part in inference)" \
	'tfk-csv -q --na-values NA,? --defaults a=-1.5,c=none --defaults b=7 miss.csv' \
	'a=float:1.0 b=float:7.0 c=bytes:"x"\na=float:-1.5 b=float:2.5 c=bytes:"none"\na=float:-1.5 b=float:7.0 c=bytes:"none"\n'
rt "--missing empty: empty value lists" \
	'tfk-csv -q --na-values NA,? --missing empty miss.csv' \
	'a=int64:1 b=float: c=bytes:"x"\na=int64: b=float:2.5 c=bytes:\na=int64: b=float: c=bytes:\n'
testerr "--missing error" 'tfk-csv -q --missing error miss.csv' 1 \
	"tfk-csv: miss.csv:2:3: column 'b': missing value and no default"
testerr "a default that is not of the forced type" \
	'tfk-csv -q --column-types a=int64 --defaults a=x miss.csv' 1 \
	"tfk-csv: miss.csv: column 'a': default 'x' is not an int64"

# --- columns, labels, headers ----------------------------------------------------

printf 'sepal,petal,species\n5.1,1.4,setosa\n6.2,4.5,versicolor\n' >"$T/iris.csv"
rt "--label renames to label" 'tfk-csv -q --label species iris.csv' \
	'label=bytes:"setosa" petal=float:1.4 sepal=float:5.1\nlabel=bytes:"versicolor" petal=float:4.5 sepal=float:6.2\n'
rt "--select-columns, --label-name (label kept)" \
	'tfk-csv -q --select-columns petal --label species --label-name y iris.csv' \
	'petal=float:1.4 y=bytes:"setosa"\npetal=float:4.5 y=bytes:"versicolor"\n'
rt "--column-names replaces the header" \
	'tfk-csv -q --column-names x,y,z iris.csv | tfk-cat --take 1' 'x=float:5.1 y=float:1.4 z=bytes:"setosa"\n'
rt "--no-header --column-names" \
	'tail -n 2 iris.csv | tfk-csv -q --no-header --column-names x,y,z | tfk-cat --take 1' \
	'x=float:5.1 y=float:1.4 z=bytes:"setosa"\n'
rt "--no-header alone: c0, c1, ..." \
	'tail -n 2 iris.csv | tfk-csv -q --no-header | tfk-cat --skip 1' \
	'c0=float:6.2 c1=float:4.5 c2=bytes:"versicolor"\n'
testerr "--column-names count must match the header" \
	'tfk-csv -q --column-names x,y iris.csv' 1 "iris.csv:1: the header has 3 columns, --column-names gives 2"
testerr "unknown --select-columns column: usage error listing the columns" \
	'tfk-csv --select-columns petals iris.csv' 2 \
	"tfk-csv: --select-columns: no column 'petals' in iris.csv (columns: sepal, petal, species)"
testerr "unknown --label column" 'tfk-csv --label kind iris.csv' 2 "--label: no column 'kind'"
testerr "label name clashing with a column" 'tfk-csv --label species --label-name petal iris.csv' 1 \
	"two features called 'petal' (columns 2 and 3)"
printf 'a,,b\n1,2,3\n' >"$T/noname.csv"
testerr "empty header name" 'tfk-csv noname.csv' 1 "tfk-csv: noname.csv: column 2 has an empty name"
rt "empty header name dropped by --select-columns" 'tfk-csv -q --select-columns a,b noname.csv' \
	'a=int64:1 b=int64:3\n'
: >"$T/empty.csv"
testerr "empty file: no header" 'tfk-csv empty.csv' 1 "tfk-csv: empty.csv: empty file: no header row"
printf 'a,b\n' >"$T/hdr.csv"
rt "header only: no records" 'tfk-csv -q hdr.csv' ''

# --- bad input -----------------------------------------------------------------------

printf 'a,b\n1,2\n3,"4\n5,6\n' >"$T/unterm.csv"
testerr "unterminated quote names where it starts" 'tfk-csv -o u unterm.csv' 1 \
	"tfk-csv: unterm.csv:3:3: unterminated quoted field"
check "no shards after a failed run" sh -c '! ls u-* u.schema.json 2>/dev/null'
printf 'a,b\n"1"x,2\n' >"$T/after.csv"
testerr "text after a closing quote" 'tfk-csv after.csv' 1 "tfk-csv: after.csv:2:4: text after closing quote"
printf 'a,b,c\n1,2,3\n4,5\n6,7,8,9\n10,x,12\n13,14,15\n' >"$T/bad.csv"
testerr "too few fields: where the row ends" 'tfk-csv bad.csv' 1 "tfk-csv: bad.csv:3:4: expected 3 fields, found 2"
testerr "--skip-bad-rows: the count in the summary" \
	'tfk-csv --column-types b=int64 --skip-bad-rows bad.csv >bad.tfr' 0 \
	"tfk-csv: 2 records, 3 bad rows skipped,"
check "--skip-bad-rows: each bad row named" sh -c '
	grep -qF "bad.csv:3:4: expected 3 fields, found 2 (row skipped)" .stderr &&
	grep -qF "bad.csv:4:7: expected 3 fields, found 4 (row skipped)" .stderr &&
	grep -qF "bad.csv:5:4: column '"'b'"': '"'x'"' is not an int64 (row skipped)" .stderr'
rt "--skip-bad-rows: the good rows" 'cat bad.tfr' \
	'a=int64:1 b=int64:2 c=int64:3\na=int64:13 b=int64:14 c=int64:15\n'
testerr "missing file" 'tfk-csv nonexistent.csv' 1 "tfk-csv: nonexistent.csv: cannot open"
testerr "bad --delimiter" 'tfk-csv -d ab iris.csv' 2 "--delimiter: expected one character"
testerr "quote as delimiter" "tfk-csv -d '\"' iris.csv" 2 "--delimiter: expected one character"
testerr "bad --missing" 'tfk-csv --missing zero iris.csv' 2 "--missing: expected fill, empty or error, not 'zero'"
testerr "bad --column-types" 'tfk-csv --column-types sepal=double iris.csv' 2 \
	"--column-types: type of 'sepal' must be int64, float or bytes, not 'double'"
testerr "bad --infer-rows" 'tfk-csv --infer-rows -1 iris.csv' 2 "--infer-rows: expected a count >= 0"

# --- several files ---------------------------------------------------------------------

printf 'a,b\n1,x\n' >"$T/p1.csv"
printf 'a,b\n2.5,y\n' >"$T/p2.csv"
printf 'a,c\n3,z\n' >"$T/p3.csv"
printf 'b,a\n4,w\n' >"$T/p4.csv"
rt "files in order" 'tfk-csv -q --column-types a=float p1.csv p2.csv' \
	'a=float:1.0 b=bytes:"x"\na=float:2.5 b=bytes:"y"\n'
testerr "a later file contradicting types from the first" 'tfk-csv -q p1.csv p2.csv' 1 \
	"tfk-csv: p2.csv:2:1: column 'a': '2.5' is not an int64 (type inferred from the first 1000 rows of p1.csv; use --two-pass or --column-types 'a=float')"
testerr "a later file with another header" 'tfk-csv -q p1.csv p3.csv' 1 \
	"tfk-csv: p3.csv:1: column 2 is 'c', in p1.csv it is 'b'"
testerr "a later file with columns in another order" 'tfk-csv -q p1.csv p4.csv' 1 \
	"tfk-csv: p4.csv:1: column 1 is 'b', in p1.csv it is 'a'"

# --- output: shards, schema, compression, summary -------------------------------------------

$PYTHON -c '
import random
r = random.Random(1)
print("id,x,name,label")
for i in range(5000):
    print("%d,%.4f,\"n%d, \"\"q\"\"\",%d" % (i, r.uniform(-5, 5), r.randint(0, 99), i % 3))
' >"$T/many.csv"
testerr "summary line; -o makes missing directories" 'tfk-csv -o many/s --num-shards 3 many.csv' 0 \
	"tfk-csv: 5000 records, 0 bad rows skipped, "
check "3 shards and a schema" test -f many/s-00000-of-00003.tfrecord -a \
	-f many/s-00001-of-00003.tfrecord -a -f many/s-00002-of-00003.tfrecord -a -f many/s.schema.json
testcmd "-q: nothing on stderr" 'tfk-csv -q -o many/q many.csv 2>&1' ''
rt "records round-robin over the shards" 'tfk-cat --take 2 many/s-00001-of-00003.tfrecord' \
	'id=int64:1 label=int64:1 name=bytes:"n15, \\"q\\"" x=float:-4.3689\nid=int64:4 label=int64:1 name=bytes:"n12, \\"q\\"" x=float:2.8872\n'
testcmd "schema sidecar: kinds, counts, shape [1], ranges" \
	"$PYTHON -c '
import csv, json, sys
sys.path.insert(0, \".\")
from strtof import strtof
s = json.load(open(\"many/s.schema.json\"))
xs = [strtof(r[\"x\"]) for r in csv.DictReader(open(\"many.csv\"))]
print(s[\"format\"], s[\"records\"], [strtof(repr(v)) for v in s[\"features\"][\"x\"][\"range\"].values()] == [min(xs), max(xs)])
for k, f in s[\"features\"].items():
    print(k, f[\"kind\"], f[\"count\"], f[\"shape\"], f.get(\"range\", {}).get(\"max\") if f[\"kind\"] == \"int64\" else \"-\", f.get(\"content\"), f.get(\"encoding\"), f[\"samples\"][0])
'" 'tfkit-schema 5000 True\nid int64 5000 [1] 4999 None None 0\nx float 5000 [1] - None None -3.6564\nname bytes 5000 [1] - text utf-8 n97, "q"\nlabel int64 5000 [1] 2 None None 0\n'
rt "--compression gzip" \
	'tfk-csv -q --compression gzip -o gz/g many.csv && ls gz >&2 && tfk-cat --skip 1 --take 1 gz/g-00000-of-00001.tfrecord.gz' \
	'id=int64:1 label=int64:1 name=bytes:"n15, \\"q\\"" x=float:-4.3689\n'

# --- parallel and sharded runs -----------------------------------------------------------------

$PYTHON -c '
import random
r = random.Random(2)
print("a,b,c,d")
for i in range(30000):
    print("%d,%.3f,w%d,\"%s\"" % (r.randint(-9, 9), r.random(), i, "x,\n" * (i % 3)))
' >"$T/big.csv"
(cd "$T" && tfk-csv -q -o j1/o big.csv)
check "-j 2: identical shards and schema" sh -c 'tfk-csv -q -j 2 -o j2/o big.csv &&
	cmp j1/o-00000-of-00001.tfrecord j2/o-00000-of-00001.tfrecord && cmp j1/o.schema.json j2/o.schema.json'
check "-j 4 --skip-bad-rows on stdout: identical bytes" sh -c '
	tfk-csv -q --skip-bad-rows -j 4 <big.csv >j4.tfr && cmp j1/o-00000-of-00001.tfrecord j4.tfr'
check "a pipe, a file and gzip give the same records" sh -c '
	cat big.csv | tfk-csv -q >pipe.tfr && gzip -c big.csv >big.csv.gz && tfk-csv -q big.csv.gz >gz.tfr &&
	cmp pipe.tfr j1/o-00000-of-00001.tfrecord && cmp gz.tfr pipe.tfr'
check "30000 records, values as python's csv module reads them" sh -c '
	$PYTHON -c "
import csv, sys; sys.path.insert(0, \"$TESTS/py\"); sys.path.insert(0, \".\")
import tfexample as tfe
from strtof import strtof
rows = list(csv.reader(open(\"big.csv\", newline=\"\")))[1:]
recs = [tfe.example_to_dict(tfe.Example.FromString(r)) for r in tfe.read_tfrecords(\"pipe.tfr\", verify=False)]
assert len(recs) == len(rows) == 30000
for row, d in zip(rows, recs):
    assert d[\"a\"] == (\"int64\", [int(row[0])]), (row, d)
    assert d[\"b\"] == (\"float\", [strtof(row[1])]), (row, d)
    assert d[\"c\"] == (\"bytes\", [row[2].encode()]) and d[\"d\"] == (\"bytes\", [row[3].encode()]), (row, d)
"'

printf 'k,v\n1,1.5\n' >"$T/s0.csv"
printf 'k,v\n2,2\n' >"$T/s1.csv"
printf 'k,v\n3,3\n' >"$T/s2.csv"
rt "--shard 1/2: every other file, task prefix, types from the first file" \
	'tfk-csv -q --shard 1/2 -o sh/x s0.csv s1.csv s2.csv && ls sh >&2 && cat sh/x-task00001-00000-of-00001.tfrecord' \
	'k=int64:2 v=float:2.0\n'
check "--shard 1/2: its own names" test -f sh/x-task00001.schema.json
rt "--shard 0/2 from Slurm" \
	'SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=2 tfk-csv -q -o sh/x s0.csv s1.csv s2.csv && cat sh/x-task00000-00000-of-00001.tfrecord' \
	'k=int64:1 v=float:1.5\nk=int64:3 v=float:3.0\n'

# --- help ---------------------------------------------------------------------------------------

testcmd "--help: summary, options and an example" \
	'tfk-csv --help | grep -c -e "^Convert CSV files" -e "--column-types" -e "--skip-bad-rows" -e "tfk-csv --label species -o"' '4\n'
testerr "unknown option" 'tfk-csv --bogus' 2 "unknown option '--bogus'"

rt_done
done_testing
