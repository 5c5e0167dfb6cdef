#!/bin/sh
# tfk-shuffle: output is a permutation of the input (framing and crcs
# checked by Python), reproducible per seed, tf.data's buffer bound on
# every position, --buffer all the same with and without spilling
# (several merge passes, stdin, --repeat re-keyed from runs), epochs that
# differ, compressed input and output, and every way the input or the
# options can be wrong. The statistics (uniformity, the exact
# distribution of the buffer) are in tests/unit/t-shuffle.c.
. "$(dirname "$0")/lib.sh"

MNIST=$FIX/tfrecord/tfx_mnist/mnist.tfrecord
PTRAIN=$FIX/tfrecord/tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz
export MNIST PTRAIN

# The oracle: TFRecord framing and CRC-32C (python3-crc32c) read here,
# Examples decoded by python3-protobuf (tests/py/tfexample.py).
cat >"$T/orc.py" <<'EOF'
import gzip, struct, sys
import crc32c
sys.path.insert(0, sys.argv[1])
import tfexample as tfe

def masked(b):
    c = crc32c.crc32c(b)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF

def records(path):
    blob = open(path, "rb").read()
    if blob[:2] == b"\x1f\x8b":
        blob = gzip.decompress(blob)
    off, out = 0, []
    while off < len(blob):
        (n,) = struct.unpack_from("<Q", blob, off)
        assert struct.unpack_from("<I", blob, off + 8)[0] == masked(blob[off:off + 8]), "length crc"
        data = blob[off + 12:off + 12 + n]
        assert len(data) == n, "truncated"
        assert struct.unpack_from("<I", blob, off + 12 + n)[0] == masked(data), "data crc"
        out.append(data)
        off += 16 + n
    return out

cmd, args = sys.argv[2], sys.argv[3:]
if cmd == "perm":       # IN OUT EPOCHS: OUT is EPOCHS permutations of IN
    src = records(args[0])
    got = records(args[1])
    k, n = int(args[2]), len(src)
    assert len(got) == k * n, (len(got), k * n)
    for e in range(k):
        assert sorted(got[e * n:(e + 1) * n]) == sorted(src), "epoch %d" % e
    orders = set(tuple(got[e * n:(e + 1) * n]) for e in range(k))
    print("perm", n, "x", k, "orders", len(orders),
          "moved", sum(a != b for a, b in zip(src, got[:n])) > n // 2)
elif cmd == "ids":      # FILE: feature i of each Example
    print(" ".join(str(tfe.Example.FromString(r).features.feature["i"].int64_list.value[0])
                   for r in records(args[0])))
elif cmd == "bound":    # FILE B: position j holds i <= j + B - 1
    ids = [tfe.Example.FromString(r).features.feature["i"].int64_list.value[0]
           for r in records(args[0])]
    b = int(args[1])
    print("bound", all(i <= j + b - 1 for j, i in enumerate(ids)),
          sorted(ids) == list(range(len(ids))))
EOF
ORC="$PYTHON $T/orc.py $TESTS/py"
export ORC

# 400 small Examples {i: [k], s: [k * "x" for a varying k]}: records of
# 20 to 80 bytes, so arenas compact and runs hold many records.
"$PYTHON" -c '
import sys
for i in range(400):
    print("{\"i\":[%d],\"s\":[\"%s\"]}" % (i, "x" * (i * 7 % 61)))' |
	tfk-json >"$T/small.tfrecord"

# Permutations --------------------------------------------------------------
testcmd "mnist, --buffer 100: the 1000 records, reordered" \
	'tfk-shuffle --buffer 100 --seed 1 "$MNIST" >o && $ORC perm "$MNIST" o 1' \
	'perm 1000 x 1 orders 1 moved True'
testcmd "mnist, --buffer all: the 1000 records, reordered" \
	'tfk-shuffle --buffer all --seed 1 "$MNIST" >a && $ORC perm "$MNIST" a 1' \
	'perm 1000 x 1 orders 1 moved True'
testcmd "same seed, same bytes (buffer)" \
	'tfk-shuffle -b 100 -s 1 "$MNIST" | cmp - o && echo same' 'same'
testcmd "same seed, same bytes (all)" \
	'tfk-shuffle -b all -s 1 "$MNIST" | cmp - a && echo same' 'same'
testcmd "another seed, other bytes" \
	'tfk-shuffle -b all -s 2 "$MNIST" | cmp -s - a || echo differ' 'differ'
testcmd "a 64-bit seed" \
	'tfk-shuffle -b 10 --seed 18446744073709551615 small.tfrecord | tfk-count' \
	'400 28651'
testcmd "--buffer 1: the input, byte for byte" \
	'tfk-shuffle --buffer 1 --seed 9 "$MNIST" | cmp - "$MNIST" && echo same' 'same'
testcmd "--buffer 10: position j holds a record among the first j+10" \
	'tfk-shuffle -b 10 -s 4 small.tfrecord >b10 && $ORC bound b10 10' \
	'bound True True'
testcmd "--buffer 10: and not all of them stay in place" \
	'$ORC ids b10 | tr " " "\n" | awk "\$1 != NR - 1" | wc -l | awk "{ print (\$1 > 300) }"' '1'
testcmd "--buffer 1000 > input: a full permutation from a buffer" \
	'tfk-shuffle -b 1000 small.tfrecord >b && $ORC bound b 1000' 'bound True True'

# --buffer all: spilling changes nothing --------------------------------------
testcmd "--memory 4K spills (-v says so)" \
	'tfk-shuffle -v -b all -s 3 --memory 4K --tmpdir . small.tfrecord 2>err >m4 &&
	 grep -o "400 records, 28651 bytes; memory limit 4096" err &&
	 grep -c "[1-9][0-9]* runs spilled" err' \
	'400 records, 28651 bytes; memory limit 4096\n1'
testcmd "... and its output is the in-memory output, byte for byte" \
	'tfk-shuffle -b all -s 3 small.tfrecord | cmp - m4 && echo same' 'same'
testcmd "... with several merge passes too (-v)" \
	'tfk-shuffle -v -b all -s 3 --memory 4K small.tfrecord 2>err | cmp - m4 &&
	 grep -c " [1-9][0-9]* merge passes" err' '1'
testcmd "--memory 64K: one merge, same bytes" \
	'tfk-shuffle -b all -s 3 --memory 64K small.tfrecord | cmp - m4 && echo same' 'same'
testcmd "from standard input, same bytes" \
	'tfk-shuffle -b all -s 3 --memory 4K <small.tfrecord | cmp - m4 && echo same' 'same'
testcmd "two files are one stream" \
	'tfk-cat --take 150 small.tfrecord >h && tfk-cat --skip 150 small.tfrecord >t &&
	 tfk-count h t | tail -1 &&
	 tfk-shuffle -b all -s 3 h t | cmp - m4 && echo same' '400 28651 total\nsame'
testcmd "nothing left in --tmpdir" 'ls -A | grep tfk-shuffle | wc -l' '0'

# --repeat ----------------------------------------------------------------------
testcmd "--buffer all --repeat 3: three permutations, three orders" \
	'tfk-shuffle -b all --repeat 3 "$MNIST" >r3 && $ORC perm "$MNIST" r3 3' \
	'perm 1000 x 3 orders 3 moved True'
testcmd "--repeat 3 from stdin, spilled: the same bytes" \
	'tfk-shuffle -b all --repeat 3 --memory 256K <"$MNIST" | cmp - r3 && echo same' 'same'
testcmd "the first epoch is the unrepeated order" \
	'tfk-shuffle -b all "$MNIST" | cmp - r3 2>&1 | grep -c EOF' '1'
testcmd "--buffer 50 --repeat 2: two permutations, two orders" \
	'tfk-shuffle -b 50 --repeat 2 "$MNIST" >r2 && $ORC perm "$MNIST" r2 2' \
	'perm 1000 x 2 orders 2 moved True'
testcmd "--repeat 0 goes on until the reader stops" \
	'tfk-shuffle -b 10 --repeat 0 small.tfrecord | tfk-cat --take 1000 | tfk-count | cut -d" " -f1' \
	'1000'
testcmd "--buffer all --repeat 0 too" \
	'tfk-shuffle -b all --repeat 0 small.tfrecord | tfk-cat --take 1000 | tfk-count | cut -d" " -f1' \
	'1000'
testcmd "--repeat 0 of an empty input ends" \
	': >e && tfk-shuffle -b 10 --repeat 0 e | wc -c && tfk-shuffle -b all --repeat 0 e | wc -c' \
	'0\n0'

# Compression and -o ----------------------------------------------------------
testcmd "GZIP input, GZIP output" \
	'tfk-shuffle -b all "$PTRAIN" --compression gzip -o p.gz && gzip -t p.gz && $ORC perm "$PTRAIN" p.gz 1' \
	'perm 234 x 1 orders 1 moved True'
testcmd "-o writes a file, same bytes as stdout" \
	'tfk-shuffle -b 7 -s 5 small.tfrecord -o f.tfrecord && tfk-shuffle -b 7 -s 5 small.tfrecord | cmp - f.tfrecord && echo same' \
	'same'
testcmd "-v: the buffer's peak on stderr" \
	'tfk-shuffle -v -b 10 small.tfrecord 2>&1 >/dev/null | grep -o "buffer of 10 records: peak 10 records"' \
	'buffer of 10 records: peak 10 records'

# Bad input ----------------------------------------------------------------------
(cd "$T" && "$PYTHON" -c '
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[5 * 3203 + 100] ^= 1
open("flip.tfrecord", "wb").write(d)' "$MNIST")
testerr "a flipped byte: located error (buffer)" \
	'tfk-shuffle -b 10 flip.tfrecord >/dev/null' 1 \
	'tfk-shuffle: flip.tfrecord: record 5 at byte 16015: data crc mismatch'
testerr "a flipped byte: located error (all)" \
	'tfk-shuffle -b all flip.tfrecord >/dev/null' 1 \
	'tfk-shuffle: flip.tfrecord: record 5 at byte 16015: data crc mismatch'
testerr "an upstream killed mid-record: truncated stream, exit 1" \
	'head -c 10000 "$MNIST" | tfk-shuffle -b 2 >/dev/null' 1 \
	'tfk-shuffle: <stdin>: record 3 at byte 9609: truncated: 391 of 3203 bytes'
testcmd "... the record drawn before the error stays on stdout" \
	'head -c 10000 "$MNIST" | tfk-shuffle -b 2 2>/dev/null | tfk-count' '1 3203'
testcmd "with --buffer all nothing is written" \
	'head -c 10000 "$MNIST" | tfk-shuffle -b all 2>/dev/null >out; echo $?; wc -c <out' \
	'1\n0'
testcmd "-o and a bad input: no file, no temporary" \
	'tfk-shuffle -b all flip.tfrecord -o bad.tfrecord 2>/dev/null; echo $?; ls -A | grep bad | wc -l' \
	'1\n0'
testerr "a missing file" 'tfk-shuffle -b 3 nope.tfrecord' 1 \
	'tfk-shuffle: nope.tfrecord:'
testerr "an unusable --tmpdir when spilling" \
	'tfk-shuffle -b all --memory 4K --tmpdir /nonexistent small.tfrecord >/dev/null' 1 \
	'tfk-shuffle: /nonexistent: cannot create a temporary file'
testcmd "killed while spilling: no -o file, no temporary, empty --tmpdir" '
	mkdir sp && mkfifo fifo
	{ cat small.tfrecord; sleep 2; } >fifo &
	tfk-shuffle -b all --memory 4K --tmpdir sp -o k.tfrecord <fifo & pid=$!
	sleep 1; kill -TERM $pid; wait $pid; echo $?; ls -A sp | wc -l; ls -A | grep k.tfrecord | wc -l' \
	'143\n0\n0'

# Bad options ----------------------------------------------------------------------
testerr "--buffer is required" 'tfk-shuffle small.tfrecord' 2 \
	'tfk-shuffle: --buffer is required: N records, or all'
testerr "--buffer 0" 'tfk-shuffle -b 0 small.tfrecord' 2 "option '-b': invalid value '0'"
testerr "--buffer -5" 'tfk-shuffle --buffer -5 small.tfrecord' 2 \
	"option '--buffer': invalid value '-5'"
testerr "--buffer lots" 'tfk-shuffle --buffer lots small.tfrecord' 2 \
	"option '--buffer': invalid value 'lots'"
testerr "--buffer 2^32" 'tfk-shuffle --buffer 4294967296 small.tfrecord' 2 \
	"option '--buffer': invalid value '4294967296'"
testerr "--seed -1" 'tfk-shuffle -b 3 --seed -1 small.tfrecord' 2 \
	"option '--seed': invalid value '-1'"
testerr "--seed 2^64" 'tfk-shuffle -b 3 --seed 18446744073709551616 small.tfrecord' 2 \
	"option '--seed': invalid value"
testerr "--repeat -1" 'tfk-shuffle -b 3 --repeat -1 small.tfrecord' 2 \
	'--repeat must not be negative'
testerr "--memory 1K" 'tfk-shuffle -b all --memory 1K small.tfrecord' 2 \
	'--memory must be at least 4K'
testerr "--compression lz4" 'tfk-shuffle -b 3 --compression lz4 small.tfrecord' 2 \
	"--compression: expected none, gzip or zlib, not 'lz4'"
testerr "--repeat with --buffer N cannot reread stdin" \
	'tfk-shuffle -b 3 --repeat 2 <small.tfrecord' 2 \
	'--repeat with --buffer N reads its input again'
testcmd "--help shows the live --memory default" \
	'tfk-shuffle --help | grep -c -- "--memory SIZE.*(default: [0-9]*[MG])"' '1'

done_testing
