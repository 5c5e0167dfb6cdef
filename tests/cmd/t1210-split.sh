#!/bin/sh
# tfk-split: every record lands where an independent Python implementation
# of the documented draw / key hash puts it; ratios hold statistically;
# --key keeps each record's split when the data grows or is reordered;
# outputs are byte-identical records, all-or-nothing; usage errors.
. "$(dirname "$0")/lib.sh"

MNIST=$FIX/tfrecord/tfx_mnist/mnist.tfrecord
export MNIST

# 3000 records by python3-protobuf: id, name "doc<id % 1000>" (bytes;
# repeats), w = id / 8 (float).
cat >"$T/mk.py" <<'EOF'
import os, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
lo, hi = int(sys.argv[2]), int(sys.argv[3])
order = range(lo, hi) if len(sys.argv) < 5 else reversed(range(lo, hi))
tfe.write_tfrecords(sys.argv[1], [tfe.make_example(
    {"id": [i], "name": [b"doc%d" % (i % 1000)], "w": [i / 8.0]}).SerializeToString()
    for i in order])
EOF
"$PYTHON" "$T/mk.py" "$T/d.rec" 0 3000

# ids.py SRC FILE...: per FILE, one line with the ids of its records in
# order, checking that each record is byte for byte one of SRC's.
cat >"$T/ids.py" <<'EOF'
import os, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
src = set(tfe.read_tfrecords(sys.argv[1]))
for path in sys.argv[2:]:
    ids = []
    for rec in tfe.read_tfrecords(path):
        assert rec in src, "record changed"
        ids.append(tfe.Example.FromString(rec).features.feature["id"].int64_list.value[0])
    print(" ".join(map(str, ids)))
EOF
# "id split" lines of PREFIX-{train,val,test}.tfrecord, sorted by id,
# ids below LIMIT only.
cat >"$T/assign" <<'EOF'
for n in train val test; do "$PYTHON" ids.py "$2" "$1-$n.tfrecord" | tr " " "\n" |
	awk -v n=$n -v lim="${3:-999999}" '$1 != "" && $1 < lim { print $1, n }'; done | sort -n
EOF
chmod +x "$T/assign"

# Where Python puts each record: want.py SRC SEED RATIOS [KEY]
# -> one line of ids per split.
cat >"$T/want.py" <<'EOF'
import os, struct, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
M = (1 << 64) - 1
def mix(x):
    x = (x + 0x9e3779b97f4a7c15) & M
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & M
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & M
    return x ^ (x >> 31)
def fnv(h, data):
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & M
    return h
seed = int(sys.argv[2]) & M
ratios = [float(r) for r in sys.argv[3].split(",")]
key = sys.argv[4] if len(sys.argv) > 4 else None
cum, s = [], 0.0
for r in ratios:
    s += r
    cum.append(s)
out = [[] for _ in ratios]
for pos, rec in enumerate(tfe.read_tfrecords(sys.argv[1])):
    f = tfe.Example.FromString(rec).features.feature
    if key is None:
        u = (mix(seed ^ mix(pos ^ mix(0))) >> 11) * 2.0 ** -53
    else:
        kind, vals = tfe.feature_kind_values(f[key])
        h = fnv(0xcbf29ce484222325, struct.pack("<Q", seed))
        h = fnv(h, bytes([{"bytes": 1, "float": 2, "int64": 3}[kind]]))
        for v in vals:
            if kind == "int64":
                h = fnv(h, struct.pack("<q", v))
            elif kind == "float":
                h = fnv(h, struct.pack("<f", v))
            else:
                h = fnv(fnv(h, struct.pack("<Q", len(v))), v)
        u = (mix(h) >> 11) * 2.0 ** -53
    j = next((j for j in range(len(cum) - 1) if u < cum[j]), len(cum) - 1)
    out[j].append(f["id"].int64_list.value[0])
for ids in out:
    print(" ".join(map(str, ids)))
EOF

# got PREFIX NAME...: the ids of each split, one line each, as an md5
# (so that a failure stays readable).
cat >"$T/got" <<'EOF'
p=$1
shift
"$PYTHON" ids.py d.rec $(for n; do echo "$p-$n.tfrecord"; done) | md5sum
EOF
chmod +x "$T/got"
want() {
	"$PYTHON" "$T/want.py" "$@" | md5sum
}

testcmd "no --key: each record where the documented seeded draw puts it" \
	'tfk-split -q --ratios 0.8,0.1,0.1 --seed 1 -o a d.rec && ./got a train val test' \
	"$(want "$T/d.rec" 1 0.8,0.1,0.1)"
testcmd "--key id (int64): FNV-1a + splitmix64 as documented" \
	'tfk-split -q --ratios 0.7,0.3 --key id --seed 4 -o k d.rec && ./got k train test' \
	"$(want "$T/d.rec" 4 0.7,0.3 id)"
testcmd "--key name (bytes)" \
	'tfk-split -q --ratios 0.5,0.25,0.25 --key name -o n d.rec && ./got n train val test' \
	"$(want "$T/d.rec" 0 0.5,0.25,0.25 name)"
testcmd "--key w (float), negative seed, 4 ratios: split0..split3" \
	'tfk-split -q --ratios 0.25,0.25,0.25,0.25 --key w --seed -7 -o f d.rec &&
	 ./got f split0 split1 split2 split3' \
	"$(want "$T/d.rec" -7 0.25,0.25,0.25,0.25 w)"
check "records with equal keys share a split (name repeats every 1000 ids)" \
	"$PYTHON" -c '
import os, sys
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe
seen = {}
for j, n in enumerate(("train", "val", "test")):
    for r in tfe.read_tfrecords("n-%s.tfrecord" % n):
        k = tfe.Example.FromString(r).features.feature["name"].bytes_list.value[0]
        assert seen.setdefault(k, j) == j, k
assert len(seen) == 1000'

# Ratios hold: 3000 records 0.8/0.1/0.1 have sd 21.9 and 16.4; the
# counts must be within 4 sd, and sum to 3000.
check "ratios hold within 4 sd, every record exactly once" \
	sh -c 'tfk-split --ratios 0.8,0.1,0.1 --seed 2 -o r d.rec 2>err &&
	       set -- $(tfk-count r-train.tfrecord r-val.tfrecord r-test.tfrecord | cut -d" " -f1) &&
	       [ $1 -gt 2312 ] && [ $1 -lt 2488 ] && [ $2 -gt 234 ] && [ $2 -lt 366 ] &&
	       [ $3 -gt 234 ] && [ $3 -lt 366 ] && [ $4 -eq 3000 ] &&
	       [ "$(./assign r d.rec | cut -d" " -f1 | uniq | wc -l)" -eq 3000 ]'
check "the report on stderr: one line per split with its count" \
	sh -c 'n=$(tfk-count r-val.tfrecord | cut -d" " -f1) &&
	       grep -qx "tfk-split: val: $n records ($(echo "$n" | awk "{printf \"%.2f\", \$1 / 30}")%) -> r-val.tfrecord" err &&
	       [ $(wc -l <err) -eq 3 ]'
testcmd "-q silences it" 'tfk-split -q --ratios 0.5,0.5 -o q d.rec 2>&1' ''
check "same seed, same bytes; another seed, another split" \
	sh -c 'tfk-split -q --ratios 0.8,0.1,0.1 --seed 1 -o b d.rec &&
	       cmp a-train.tfrecord b-train.tfrecord && cmp a-test.tfrecord b-test.tfrecord &&
	       tfk-split -q --ratios 0.8,0.1,0.1 --seed 2 -o c d.rec &&
	       ! cmp -s a-test.tfrecord c-test.tfrecord'
check "over 20 seeds the 0.1 split holds 10% +- 0.5% (4 sd) of the records" \
	sh -c 'for s in $(seq 20 39); do tfk-split -q --ratios 0.9,0.1 --seed $s -o s d.rec &&
	       tfk-count s-test.tfrecord | cut -d" " -f1; done |
	       awk "{ t += \$1 } END { m = t / 20 / 3000; exit !(m > 0.095 && m < 0.105) }"'

# --key stability as the data grows -------------------------------------------
check "--key: ids 0..2999 keep their split when 3000..4999 are appended" \
	sh -c '"$PYTHON" mk.py more.rec 3000 5000 && cat d.rec more.rec >grown.rec &&
	       tfk-split -q --ratios 0.8,0.1,0.1 --key id -o g1 d.rec &&
	       tfk-split -q --ratios 0.8,0.1,0.1 --key id -o g2 grown.rec &&
	       ./assign g1 d.rec >one && ./assign g2 grown.rec 3000 >two && cmp one two &&
	       [ $(wc -l <one) -eq 3000 ]'
check "--key: the same split with the input reversed" \
	sh -c '"$PYTHON" mk.py rev.rec 0 3000 reversed &&
	       tfk-split -q --ratios 0.8,0.1,0.1 --key id -o g3 rev.rec &&
	       ./assign g3 rev.rec | cmp - one'
check "without --key, appending does not move the first records either" \
	sh -c 'tfk-split -q --ratios 0.8,0.1,0.1 --seed 1 -o p grown.rec &&
	       ./assign p grown.rec 3000 >x && ./assign a d.rec | cmp - x'

# Inputs, names, compression -----------------------------------------------------
check "stdin, several files in turn, --names" \
	sh -c 'tfk-cat d.rec | tfk-split -q --ratios 0.6,0.4 --names fit,hold -o m - more.rec &&
	       [ $(( $(tfk-count m-fit.tfrecord | cut -d" " -f1) + $(tfk-count m-hold.tfrecord | cut -d" " -f1) )) -eq 5000 ]'
check "--compression gzip writes PREFIX-NAME.tfrecord.gz" \
	sh -c 'tfk-split -q --ratios 0.8,0.1,0.1 --seed 1 --compression gzip -o z d.rec &&
	       gzip -dc z-val.tfrecord.gz | cmp - a-val.tfrecord'
testcmd "mnist fixture by --key image_class: whole classes per split, counts from the README" \
	'tfk-split -q --ratios 0.5,0.5 --key image_class -o mn "$MNIST" &&
	 for n in train test; do tfk-cat --json mn-$n.tfrecord | "$PYTHON" -c "
import json, sys, collections
c = collections.Counter(json.loads(l)[\"image_class\"][0] for l in sys.stdin)
[print(\"%d:%d\" % kv) for kv in sorted(c.items())]"; done | sort -n | paste -sd" " -' \
	'0:87 1:137 2:87 3:90 4:118 5:79 6:78 7:107 8:120 9:97'

# Errors: no output file survives ------------------------------------------------
testerr "ratios must sum to 1" 'tfk-split --ratios 0.8,0.1,0.2 -o e d.rec' 2 \
	'--ratios: they sum to 1.1000000000000001, not 1'
testerr "a ratio must be a number >= 0" 'tfk-split --ratios 1.1,-0.1 -o e d.rec' 2 \
	"--ratios: '-0.1' is not a fraction >= 0"
testerr "  (and a number)" 'tfk-split --ratios 0.5,half -o e d.rec' 2 \
	"--ratios: 'half' is not a fraction >= 0"
testerr "--ratios is required" 'tfk-split -o e d.rec' 2 '--ratios is required'
testerr "-o is required" 'tfk-split --ratios 1 d.rec' 2 '-o PREFIX is required'
testerr "--names must match the ratios" 'tfk-split --ratios 0.5,0.5 --names a -o e d.rec' 2 \
	'--names: 2 ratios need 2 names'
testerr "--names must differ" 'tfk-split --ratios 0.5,0.5 --names a,a -o e d.rec' 2 \
	"--names: 'a' given twice"
testerr "a missing key is an error at its record" \
	'tfk-split --ratios 0.5,0.5 --key nope -o e d.rec' 1 \
	'tfk-split: d.rec: record 0 at byte 0: key feature "nope" missing'
testerr "a truncated stream is an error" \
	'head -c 10000 d.rec | tfk-split --ratios 0.5,0.5 -o e' 1 '<stdin>: record'
check "  and no output file appears (nor a temporary)" \
	sh -c '[ -z "$(ls -A | grep "^e-\|^\.e-")" ]'

done_testing
