#!/bin/sh
# tfk-batch, tfk-unbatch: batch | unbatch is the identity, byte for byte,
# on every TensorFlow-written fixture and on generated ragged data; the
# batched layout (tfk-records(5), BATCHED RECORDS) checked by an
# independent python3-protobuf oracle that rebuilds each batch from the
# rows; padding; and every way rows or batched records can be wrong.
. "$(dirname "$0")/lib.sh"

MNIST=$FIX/tfrecord/tfx_mnist/mnist.tfrecord
PTRAIN=$FIX/tfrecord/tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz
PEVAL=$FIX/tfrecord/tfx_penguin/Split-eval/data_tfrecord-00000-of-00001.gz
RAW=$FIX/tfrecord/rust_raw_record/expected.tfrecord
export MNIST PTRAIN PEVAL RAW

# gen.py OUT SEED N: N random rows with one fixed feature set, in a
# random map order per row: fixed-length (id, emb), ragged (tok, w, txt;
# empty rows, negative ints, empty and binary strings), a Feature with
# no kind, an always-empty list. Serialized by python3-protobuf.
cat >"$T/gen.py" <<'EOF'
import os, random, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
out, seed, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
recs = []
for i in range(n):
    d = {
        "id": ([i], "int64"),
        "emb": ([rng.uniform(-1, 1) for _ in range(3)], "float"),
        "tok": ([rng.randint(-2**40, 2**40) for _ in range(rng.randint(0, 4))], "int64"),
        "w": ([rng.random() for _ in range(rng.randint(0, 3))], "float"),
        "txt": ([bytes(rng.randrange(256) for _ in range(rng.randint(0, 5)))
                 for _ in range(rng.randint(0, 3))], "bytes"),
        "nokind": (None, "none"),
        "empty": ([], "int64"),
    }
    names = list(d)
    if i % 3:
        rng.shuffle(names)
    ex = tfe.make_example({k: d[k][0] for k in names},
                          {k: d[k][1] for k in names})
    recs.append(ex.SerializeToString())
tfe.write_tfrecords(out, recs)
EOF

# oracle.py ROWS BATCHES N [--pad F=V]... [--pad-to L] [--ragged F]...
# [--drop-remainder]: rebuild, from the rows alone, every batched record
# the layout promises and compare with tfk-batch's (features, kinds,
# values and their order on the wire). Prints "ok" or the first
# difference. Feature order comes from its own wire walk, since protobuf
# maps do not keep it.
cat >"$T/oracle.py" <<'EOF'
import os, struct, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe

fields = tfe.wire_fields

def wire_names(rec):
    names = []
    for num, feats in fields(rec):
        if num == 1:
            for num2, entry in fields(feats):
                if num2 == 1:
                    key = [v for k, v in fields(entry) if k == 1]
                    names.append(bytes(key[-1]).decode() if key else "")
    return names

def canon(kind, vals):
    if kind == "float":
        return kind, [tfe.f32_bits(v) for v in vals]
    return kind, list(vals)

args = sys.argv[1:]
rows_path, batches_path, N = args[0], args[1], int(args[2])
pad, pad_to, ragged, drop = {}, 0, set(), False
k = 3
while k < len(args):
    if args[k] == "--pad":
        f, v = args[k + 1].split("=", 1); pad[f] = v; k += 2
    elif args[k] == "--pad-to":
        pad_to = int(args[k + 1]); k += 2
    elif args[k] == "--ragged":
        ragged.add(args[k + 1]); k += 2
    elif args[k] == "--drop-remainder":
        drop = True; k += 1
rows = list(tfe.read_tfrecords(rows_path))
got = list(tfe.read_tfrecords(batches_path))
groups = [rows[i:i + N] for i in range(0, len(rows), N)]
if drop and groups and len(groups[-1]) < N:
    groups.pop()
if len(groups) != len(got):
    sys.exit("want %d batches, got %d" % (len(groups), len(got)))
for b, (grp, rec) in enumerate(zip(groups, got)):
    exs = [tfe.Example.FromString(r) for r in grp]
    dicts = [tfe.example_to_dict(e) for e in exs]
    order0 = wire_names(grp[0])
    want, names = {"_batch": ("int64", [len(grp)])}, ["_batch"]
    for name in order0:
        kind = dicts[0][name][0]
        lens = [len(d[name][1]) for d in dicts]
        vals = []
        if name in pad and kind != "none":
            L = pad_to or max(lens)
            pv = {"int64": int, "float": float,
                  "bytes": lambda s: s.encode()}[kind](pad[name])
            for d in dicts:
                vals += d[name][1] + [pv] * (L - len(d[name][1]))
            want[name] = (kind, vals)
            want[name + "/row_lengths"] = ("int64", lens)
            names += [name, name + "/row_lengths"]
            continue
        for d in dicts:
            vals += d[name][1]
        want[name] = (kind, vals)
        names.append(name)
        if kind != "none" and (len(set(lens)) > 1 or name in ragged):
            want[name + "/row_lengths"] = ("int64", lens)
            names.append(name + "/row_lengths")
    orders = [[order0.index(n) for n in wire_names(r)] for r in grp]
    if any(o != list(range(len(order0))) for o in orders):
        want["_batch/order"] = ("int64", sum(orders, []))
        names.append("_batch/order")
    gd = tfe.example_to_dict(tfe.Example.FromString(rec))
    if wire_names(rec) != names:
        sys.exit("batch %d: features %s, want %s" % (b, wire_names(rec), names))
    for name in names:
        if canon(*gd[name]) != canon(*want[name]):
            sys.exit("batch %d: %s is %s, want %s" % (b, name, gd[name], want[name]))
print("ok")
EOF

# Round trips of TensorFlow's files ---------------------------------------
for f in MNIST PTRAIN PEVAL; do
	for n in 1 7 32 5000; do
		check "$f: tfk-batch $n | tfk-unbatch gives every record back byte for byte" \
			sh -c "tfk-cat \"\$$f\" >in.rec && tfk-batch $n in.rec | tfk-unbatch | cmp - in.rec"
	done
done
check "penguin: features in hash order per record, _batch/order keeps them (oracle)" \
	sh -c 'tfk-cat "$PEVAL" >pe.rec && tfk-batch 10 pe.rec >pe.b &&
	       test "$($PYTHON oracle.py pe.rec pe.b 10)" = ok'
check "mnist: 1000 records by 32 with --drop-remainder: 31 batches, 992 rows back" \
	sh -c 'test "$(tfk-batch --drop-remainder 32 "$MNIST" | tfk-count | cut -d" " -f1)" = 31 &&
	       test "$(tfk-batch --drop-remainder 32 "$MNIST" | tfk-unbatch | tfk-count | cut -d" " -f1)" = 992'
# the fixture's classes of records 992..999, read by python3-protobuf
last8=$("$PYTHON" -c 'import os, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
r = list(tfe.read_tfrecords(os.environ["MNIST"]))[992:]
print([tfe.Example.FromString(x).features.feature["image_class"].int64_list.value[0] for x in r])')
testcmd "mnist: 32 batches without it, the last of 8 rows ($last8)" \
	'tfk-batch 32 "$MNIST" | tfk-cat --skip 31 --json | $PYTHON -c "import json,sys; d=json.loads(sys.stdin.read()); print(d[\"_batch\"], len(d[\"image_floats\"]), d[\"image_class\"], sorted(d))"' \
	"[8] 6272 $last8 ['_batch', 'image_class', 'image_floats']\n"
check "mnist: batches span files as one stream (3 x 1000 records by 64)" \
	sh -c 'tfk-batch 64 "$MNIST" "$MNIST" "$MNIST" | tfk-unbatch >3.rec &&
	       cat "$MNIST" "$MNIST" "$MNIST" | cmp - 3.rec'
check "gzip input read as is; -o writes the file" \
	sh -c 'tfk-batch 16 -o b.rec "$PTRAIN" && tfk-unbatch -o u.rec b.rec &&
	       gzip -dc "$PTRAIN" | cmp - u.rec'
testerr "a raw (non-Example) record is refused with its place" \
	'tfk-batch 2 "$RAW"' 1 "expected.tfrecord: record 0 at byte 0: bad tf.Example: byte 0:"

# Generated ragged data against the oracle ----------------------------------
check "generated rows (ragged, bytes, no-kind, empty lists, shuffled maps)" \
	"$PYTHON" "$T/gen.py" "$T/g.rec" 7 103
for n in 1 2 5 103 200; do
	check "batch $n: layout as the oracle rebuilds it, unbatch byte for byte" \
		sh -c "tfk-batch $n g.rec >g$n.b && test \"\$(\$PYTHON oracle.py g.rec g$n.b $n)\" = ok &&
		       tfk-unbatch g$n.b | cmp - g.rec"
done
check "--ragged id --ragged emb: row_lengths even for equal rows; inverse holds" \
	sh -c 'tfk-batch 4 --ragged id --ragged emb g.rec >r.b &&
	       test "$($PYTHON oracle.py g.rec r.b 4 --ragged id --ragged emb)" = ok &&
	       tfk-unbatch r.b | cmp - g.rec'
check "--pad tok=-7 --pad w=0.5 --pad txt=PAD: padded to the longest row" \
	sh -c 'tfk-batch 6 --pad tok=-7 --pad w=0.5 --pad txt=PAD g.rec >p.b &&
	       test "$($PYTHON oracle.py g.rec p.b 6 --pad tok=-7 --pad w=0.5 --pad txt=PAD)" = ok &&
	       tfk-unbatch p.b | cmp - g.rec'
check "--pad-to 5 --pad tok=0 --pad txt= --drop-remainder" \
	sh -c 'tfk-batch 10 --pad-to 5 --pad tok=0 --pad txt= --drop-remainder g.rec >q.b &&
	       test "$($PYTHON oracle.py g.rec q.b 10 --pad-to 5 --pad tok=0 --pad txt= --drop-remainder)" = ok &&
	       test "$(tfk-unbatch q.b | tfk-count | cut -d" " -f1)" = 100'

# The documented example, exactly --------------------------------------------
printf '%s\n' '{"a":[1,2],"s":["x"],"f":[1.5]}' '{"a":[3],"s":["yy","z"],"f":[2.5]}' \
	>"$T/doc.jsonl"
testcmd "tfk-records(5) example: --pad s=PAD" \
	'tfk-json doc.jsonl | tfk-batch 2 --pad s=PAD | tfk-cat --json' \
	'{"_batch":[2],"a":[1,2,3],"a/row_lengths":[2,1],"s":["x","PAD","yy","z"],"s/row_lengths":[1,2],"f":[1.5,2.5]}\n'
testcmd "an Example with no features batches to _batch alone and comes back as 0a 00" \
	'printf "{}\n{}\n" | tfk-json | tfk-batch 5 | tfk-unbatch | tfk-cat --raw | od -An -tx1' \
	' 0a 00 0a 00\n'

# Rows that do not fit a batch -----------------------------------------------
printf '%s\n' '{"a":[1],"b":[2]}' '{"a":[3],"b":[4]}' '{"a":[5]}' >"$T/miss.jsonl"
printf '%s\n' '{"a":[1]}' '{"a":[3]}' '{"a":[5],"c":[1]}' >"$T/extra.jsonl"
printf '%s\n' '{"a":[1]}' '{"a":[2.5]}' >"$T/kind.jsonl"
printf '%s\n' '{"_batch":[1]}' >"$T/res1.jsonl"
printf '%s\n' '{"x/row_lengths":[1]}' >"$T/res2.jsonl"
printf '%s\n' '{"a":[1,2,3]}' >"$T/long.jsonl"
testerr "missing feature: record index and feature named, exit 1" \
	'tfk-json miss.jsonl >m.rec && tfk-batch 3 m.rec' 1 \
	'm.rec: record 2 at byte 84: feature "b": missing (the batch'"'"'s first record has it)'
testerr "extra feature" \
	'tfk-json extra.jsonl >e.rec && tfk-batch 3 e.rec' 1 \
	'e.rec: record 2 at byte 60: feature "c": not in the batch'"'"'s first record'
testerr "kind disagreement" \
	'tfk-json kind.jsonl >k.rec && tfk-batch 2 k.rec' 1 \
	'k.rec: record 1 at byte 30: feature "a": kind float, the batch'"'"'s first record has int64'
testerr "the reserved name _batch" \
	'tfk-json res1.jsonl | tfk-batch 2' 1 \
	'<stdin>: record 0 at byte 0: feature "_batch": reserved name'
testerr "a reserved NAME/row_lengths" \
	'tfk-json res2.jsonl | tfk-batch 2' 1 'feature "x/row_lengths": reserved name'
testerr "batching batches is refused (unbatch first)" \
	'tfk-batch 4 g.rec | tfk-batch 2' 1 'feature "_batch": reserved name'
testerr "a row longer than --pad-to" \
	'tfk-json long.jsonl | tfk-batch 2 --pad a=0 --pad-to 2' 1 \
	'record 0 at byte 0: feature "a": 3 values, more than the pad length 2'
testerr "a pad value that is not an int64" \
	'tfk-json long.jsonl | tfk-batch 2 --pad a=x1' 1 'feature "a": pad value "x1" is not an int64'
# mnist records are 3203 bytes framed: 100000 bytes end inside record 31
testerr "a truncated stream (upstream killed mid-record) is an error" \
	'head -c 100000 "$MNIST" | tfk-batch 8 >t.out' 1 \
	'<stdin>: record 31 at byte 99293: truncated'
check "  the full batches before it were written, the unfinished one not" \
	sh -c 'test "$(tfk-unbatch t.out | tfk-count)" = "24 76872"'
testerr "a corrupt record" \
	'tfk-cat "$MNIST" | $PYTHON -c "import sys; b=bytearray(sys.stdin.buffer.read()); b[5000]^=1; sys.stdout.buffer.write(b)" | tfk-batch 4' \
	1 'record 1 at byte 3203: data crc mismatch'
check "-o leaves no file after an error" \
	sh -c '! tfk-batch 3 -o nofile.rec m.rec 2>/dev/null && ! test -e nofile.rec &&
	       test -z "$(ls -A | grep nofile)"'

# Batched records that do not split ------------------------------------------
# Made by python3-protobuf, not by tfk-batch.
cat >"$T/bad.py" <<'EOF'
import os, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
cases = {
    "nobatch": {"a": [1]},
    "batchkind": {"_batch": [2.0], "a": [1.0]},
    "batch0": {"_batch": [0]},
    "batch2vals": {"_batch": [1, 1]},
    "split": {"_batch": [2], "x": [1, 2, 3]},
    "rlcount": {"_batch": [2], "x": [1, 2, 3], "x/row_lengths": [3]},
    "rlneg": {"_batch": [2], "x": [1, 2, 3], "x/row_lengths": [-1, 4]},
    "rlfit": {"_batch": [2], "x": [1, 2, 3], "x/row_lengths": [1, 1]},
    "orphan": {"_batch": [1], "y/row_lengths": [1]},
    "order": {"_batch": [2], "x": [1, 2], "y": [3, 4], "_batch/order": [0, 1, 1, 1]},
    "ordercount": {"_batch": [2], "x": [1, 2], "_batch/order": [0]},
    "good": {"_batch": [2], "x": [1, 2, 3, 0], "x/row_lengths": [2, 1],
             "y": [b"p", b"q"], "_batch/order": [1, 0, 0, 1]},
    "bigrow": {"_batch": [3], "x": [1, 2, 3, 4, 5, 6], "x/row_lengths": [1, 2, 3]},
}
for name, d in cases.items():
    tfe.write_tfrecords(name + ".rec", [tfe.make_example(d).SerializeToString()])
EOF
check "python3-protobuf makes hand-built batched records" sh -c "$PYTHON bad.py"
# which of x, y is data feature 0 is protobuf's map order: the rows
# must come back in opposite orders, with the values padding removed
testcmd "a hand-built batch: padded x, per-row order" \
	'tfk-unbatch good.rec | tfk-cat --json | $PYTHON -c "import json,sys
r = [json.loads(l) for l in sys.stdin]
print(list(r[0]) == list(r[1])[::-1], json.dumps(r, sort_keys=True))"' \
	'True [{"x": [1, 2], "y": ["p"]}, {"x": [3], "y": ["q"]}]\n'
testcmd "row lengths summing to the values: ragged even if they could pad" \
	'tfk-unbatch bigrow.rec | tfk-cat --json' \
	'{"x":[1]}\n{"x":[2,3]}\n{"x":[4,5,6]}\n'
testerr "not batched: no _batch" 'tfk-unbatch nobatch.rec' 1 \
	'nobatch.rec: record 0 at byte 0: not a batched record: no _batch feature'
testerr "_batch of the wrong kind" 'tfk-unbatch batchkind.rec' 1 \
	'not a batched record: _batch is float[1], not int64[1]'
testerr "_batch of 0 rows" 'tfk-unbatch batch0.rec' 1 'not a batched record: _batch is 0 rows'
testerr "_batch with two values" 'tfk-unbatch batch2vals.rec' 1 '_batch is int64[2], not int64[1]'
testerr "values that do not split" 'tfk-unbatch split.rec' 1 \
	'feature "x": 3 values do not split into 2 rows'
testerr "row lengths of the wrong count" 'tfk-unbatch rlcount.rec' 1 \
	'feature "x/row_lengths": int64[1], want int64[2] (one per row)'
testerr "a negative row length" 'tfk-unbatch rlneg.rec' 1 \
	'feature "x": row 0 has length -1 of 3 values'
testerr "row lengths that fit neither ragged nor padded" 'tfk-unbatch rlfit.rec' 1 \
	'feature "x": 3 values are neither the sum of the row lengths (2) nor 2 rows padded'
testerr "row lengths of no feature" 'tfk-unbatch orphan.rec' 1 \
	'feature "y/row_lengths": row lengths of no feature'
testerr "_batch/order that is not an order" 'tfk-unbatch order.rec' 1 \
	'feature "_batch/order": row 1 is not an order of 2 features'
testerr "_batch/order of the wrong count" 'tfk-unbatch ordercount.rec' 1 \
	'feature "_batch/order": int64[1], want int64[2] (rows times features)'
testerr "unbatch of a truncated stream" \
	'tfk-batch 100 "$MNIST" | head -c 200000 | tfk-unbatch >/dev/null' 1 'record 0 at byte 0:'
testerr "unbatch of a raw record" 'tfk-unbatch "$RAW"' 1 'record 0 at byte 0: byte 0:'

# Usage -----------------------------------------------------------------------
testerr "N missing" 'tfk-batch </dev/null' 2 'missing N'
testerr "N of 0" 'tfk-batch 0 </dev/null' 2 'N: want a record count from 1'
testerr "N not a number" 'tfk-batch 3x </dev/null' 2 'not "3x"'
testerr "--pad without =" 'tfk-batch 2 --pad a </dev/null' 2 '--pad a: want FEATURE=VALUE'
testerr "--pad of a reserved name" 'tfk-batch 2 --pad _batch=1 </dev/null' 2 'reserved name'
testerr "--pad and --ragged of one feature" 'tfk-batch 2 --pad a=1 --ragged a </dev/null' 2 'given twice'
testerr "--pad-to without --pad" 'tfk-batch 2 --pad-to 3 </dev/null' 2 '--pad-to needs --pad'
testcmd "empty input: no batches, exit 0" 'tfk-batch 4 </dev/null | wc -c' '0\n'
testcmd "unbatch of empty input: nothing, exit 0" 'tfk-unbatch </dev/null | wc -c' '0\n'

done_testing
