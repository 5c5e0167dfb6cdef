#!/bin/sh
# tfk-cat: byte-exact framing, compression, and the tf.data order of
# interleave -> shard -> skip -> take -> repeat on generated files.
. "$(dirname "$0")/lib.sh"

MNIST=$FIX/tfrecord/tfx_mnist/mnist.tfrecord
FOX=$FIX/tfrecord/rust_raw_record/expected.tfrecord
PTRAIN=$FIX/tfrecord/tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz
PEVAL=$FIX/tfrecord/tfx_penguin/Split-eval/data_tfrecord-00000-of-00001.gz
export MNIST FOX PTRAIN PEVAL

# An independent TFRecord writer (own CRC-32C), checked below against the
# bytes TensorFlow wrote for b'first', b'second' (fixture README).
cat >"$T/mkrec.py" <<'EOF'
import struct, sys
def crc32c(b):
    c = 0xffffffff
    for x in b:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ 0x82f63b78 if c & 1 else c >> 1
    return c ^ 0xffffffff
def mask(c):
    return (((c >> 15) | (c << 17)) + 0xa282ead8) & 0xffffffff
def frame(p):
    n = struct.pack('<Q', len(p))
    return (n + struct.pack('<I', mask(crc32c(n))) + p +
            struct.pack('<I', mask(crc32c(p))))
# mkrec.py OUT -- WORD...: one record per word, as given
# mkrec.py NAME:N...: file NAME with records "NAME0\n" .. "NAME<N-1>\n"
if sys.argv[2:3] == ['--']:
    files = {sys.argv[1]: [w.encode() for w in sys.argv[3:]]}
else:
    files = {}
    for a in sys.argv[1:]:
        name, n = a.split(':')
        files[name] = [('%s%d\n' % (name, i)).encode() for i in range(int(n))]
for out, recs in files.items():
    with open(out, 'wb') as f:
        for r in recs:
            f.write(frame(r))
EOF
(cd "$T" && "$PYTHON" mkrec.py a:5 b:2 c:3 n:10 && : >e)

testcmd "oracle writer frames first/second as TensorFlow did" \
	'"$PYTHON" mkrec.py fs -- first second && od -An -v -tx1 fs | tr -d " \n"' \
	'0500000000000000eab2043e666972737455ff23e50600000000000000''7369d5377365636f6e64d3e0d3ca'

# Byte-exact framing -------------------------------------------------------
check "rust_raw_record: output is the input, byte for byte" \
	sh -c 'tfk-cat "$FOX" | cmp - "$FOX"'
check "mnist + fox: output is the concatenation" \
	sh -c 'cat "$MNIST" "$FOX" >cat.ref && tfk-cat "$MNIST" "$FOX" | cmp - cat.ref'
check "stdin without arguments" sh -c 'tfk-cat <"$MNIST" | cmp - "$MNIST"'
check "stdin as -" sh -c 'cat "$FOX" | tfk-cat "$MNIST" - | cmp - cat.ref'
check "gzip input (penguin train) equals gzip -dc of it" \
	sh -c 'gzip -dc "$PTRAIN" >p.ref && tfk-cat "$PTRAIN" | cmp - p.ref'
check "gzip on stdin is detected too" \
	sh -c 'tfk-cat <"$PTRAIN" | cmp - p.ref'
testcmd "the fox payload with --raw" 'tfk-cat --raw "$FOX"' 'The Quick Brown Fox'
check "-o writes the file" sh -c 'tfk-cat -o out.tfrecord "$MNIST" && cmp out.tfrecord "$MNIST"'
check "--output= spelling" sh -c 'tfk-cat --output=o2 "$FOX" && cmp o2 "$FOX"'
check "-o leaves no temporary behind" sh -c '! ls -a | grep -q tmp-'

# Compressed output, read back by gzip and by Python's zlib ----------------
check "--compression gzip -o: gzip -dc gives the records" \
	sh -c 'tfk-cat --compression gzip -o m.gz "$MNIST" && gzip -t m.gz && gzip -dc m.gz | cmp - "$MNIST"'
check "--compression gzip to stdout" \
	sh -c 'tfk-cat --compression gzip "$PEVAL" "$FOX" | gzip -dc >pe.out && gzip -dc "$PEVAL" | cat - "$FOX" | cmp - pe.out'
check "--compression zlib: python zlib.decompress gives the records" \
	sh -c 'tfk-cat --compression ZLIB -o m.zz "$MNIST" && "$PYTHON" -c "import sys, zlib; sys.exit(zlib.decompress(open(\"m.zz\",\"rb\").read()) != open(sys.argv[1],\"rb\").read())" "$MNIST"'
check "gzip output read back by tfk-cat" sh -c 'tfk-cat m.gz | cmp - "$MNIST"'
check "zlib output read back by tfk-cat" sh -c 'tfk-cat m.zz | cmp - "$MNIST"'
check "--compression none is plain" sh -c 'tfk-cat --compression none "$FOX" | cmp - "$FOX"'

# Order of operations on generated files (a: a0..a4, b: b0 b1, c: c0..c2)
testcmd "concatenation order" 'tfk-cat --raw a b c | tr "\n" " "' \
	'a0 a1 a2 a3 a4 b0 b1 c0 c1 c2 '
testcmd "interleave 2: slot of an exhausted file refilled on its next turn" \
	'tfk-cat --raw --interleave 2 a b c | tr "\n" " "' \
	'a0 b0 a1 b1 a2 a3 c0 a4 c1 c2 '
testcmd "interleave 2 block 2" \
	'tfk-cat --raw --interleave 2 --block 2 a b c | tr "\n" " "' \
	'a0 a1 b0 b1 a2 a3 a4 c0 c1 c2 '
testcmd "interleave 3" \
	'tfk-cat --raw --interleave 3 a b c | tr "\n" " "' \
	'a0 b0 c0 a1 b1 c1 a2 c2 a3 a4 '
testcmd "interleave 2 with an empty file: it uses up its turn" \
	'tfk-cat --raw --interleave 2 a e b | tr "\n" " "' \
	'a0 a1 b0 a2 b1 a3 a4 '
testcmd "interleave wider than the file list" \
	'tfk-cat --raw --interleave 8 --block 3 b c | tr "\n" " "' \
	'b0 b1 c0 c1 c2 '
testcmd "block without interleave is plain concatenation" \
	'tfk-cat --raw --block 4 b c | tr "\n" " "' 'b0 b1 c0 c1 c2 '
testcmd "shard 1/3 of the interleaved stream" \
	'tfk-cat --raw --interleave 2 --shard 1/3 a b c | tr "\n" " "' \
	'b0 a2 a4 '
testcmd "shard 0/2, then skip 1, then take 3" \
	'tfk-cat --raw --interleave 2 --shard 0/2 --skip 1 --take 3 a b c | tr "\n" " "' \
	'a1 a2 c0 '
testcmd "... and the whole thing repeated twice" \
	'tfk-cat --raw --interleave 2 --shard 0/2 --skip 1 --take 3 --repeat 2 a b c | tr "\n" " "' \
	'a1 a2 c0 a1 a2 c0 '
testcmd "skip past the end: nothing" 'tfk-cat --raw --skip 99 a b | wc -c' '0'
testcmd "take 0: nothing" 'tfk-cat --take 0 a | wc -c' '0'
testcmd "take more than there is" 'tfk-cat --raw --take 99 b | tr "\n" " "' 'b0 b1 '
testcmd "repeat 3" 'tfk-cat --raw --repeat 3 b | tr "\n" " "' \
	'b0 b1 b0 b1 b0 b1 '
testcmd "repeat 0 is forever (cut by head)" \
	'tfk-cat --raw --repeat 0 b c | head -n 12 | tr "\n" " "' \
	'b0 b1 c0 c1 c2 b0 b1 c0 c1 c2 b0 b1 '
testcmd "repeat 0 of nothing ends" 'tfk-cat --repeat 0 e --skip 5 b | wc -c' '0'
testcmd "shard-files 1/2 keeps file 1" \
	'tfk-cat --raw --shard-files --shard 1/2 a b c | tr "\n" " "' 'b0 b1 '
testcmd "shard-files 0/2 keeps files 0 and 2, then interleave" \
	'tfk-cat --raw --shard-files --shard 0/2 --interleave 2 a b c | tr "\n" " "' \
	'a0 c0 a1 c1 a2 c2 a3 a4 '
testcmd "shard default from Slurm" \
	'SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 tfk-cat --raw a | tr "\n" " "' \
	'a1 a3 '
testcmd "shard default from MPI" \
	'OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=3 tfk-cat --raw a | tr "\n" " "' \
	'a0 a3 '
testcmd "explicit --shard wins over the environment" \
	'OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=3 tfk-cat --raw --shard 0/1 b | tr "\n" " "' \
	'b0 b1 '
testcmd "shard-files with N past INT_MAX keeps file k = I only" \
	'tfk-cat --raw --shard-files --shard 0/2147483648 a b c | tr "\n" " "' 'a0 a1 a2 a3 a4 '
testcmd "shard-files 0/(2^32+1) is not 0/1" \
	'tfk-cat --raw --shard-files --shard 0/4294967297 a b c | tr "\n" " "' 'a0 a1 a2 a3 a4 '
testcmd "shard-files 2/(2^31-1) keeps file 2" \
	'tfk-cat --raw --shard-files --shard 2/2147483647 a b c | tr "\n" " "' 'c0 c1 c2 '
testcmd "shard-files from Slurm" \
	'SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=3 tfk-cat --raw --shard-files a b c | tr "\n" " "' \
	'c0 c1 c2 '
testcmd "sharded mnist: the shards add up" \
	'for i in 0 1 2; do tfk-cat --shard $i/3 "$MNIST" | tfk-count; done' \
	'334 1069802\n333 1066599\n333 1066599'
check "sharded mnist: shard 1/3 is records 1, 4, 7, ... byte for byte" \
	sh -c 'tfk-cat --shard 1/3 "$MNIST" >s1 && "$PYTHON" -c "
import sys
d = open(sys.argv[1], \"rb\").read()
want = b\"\".join(d[i*3203:(i+1)*3203] for i in range(1, 1000, 3))
sys.exit(open(\"s1\", \"rb\").read() != want)" "$MNIST"'

# --records through the index ------------------------------------------------
tfk-index "$T/n" "$T/a" 2>/dev/null
testcmd "--records 2:5" 'tfk-cat --raw --records 2:5 n | tr "\n" " "' 'n2 n3 n4 '
testcmd "--records 7: to the end" 'tfk-cat --raw --records 7: n | tr "\n" " "' 'n7 n8 n9 '
testcmd "--records :2 from the start" 'tfk-cat --raw --records :2 n | tr "\n" " "' 'n0 n1 '
testcmd "--records 8:20 is clamped" 'tfk-cat --raw --records 8:20 n | tr "\n" " "' 'n8 n9 '
testcmd "--records past the end is empty" 'tfk-cat --records 20:30 n | wc -c' '0'
testcmd "--records B < A is empty" 'tfk-cat --records 5:2 n | wc -c' '0'
testcmd "--records per file, then interleave" \
	'tfk-cat --raw --records 1:3 --interleave 2 n a | tr "\n" " "' 'n1 a1 n2 a2 '
testerr "--records without an index" 'tfk-cat --records 1:2 b' 1 \
	'tfk-cat: b: --records needs a fresh index: b.idx: no index (run tfk-index)'
testerr "--records with a stale index (data touched)" \
	'cp n n2 && tfk-index n2 && touch -d "+1 minute" n2 && tfk-cat --records 1:2 n2' 1 \
	'tfk-cat: n2: --records needs a fresh index: n2.idx: stale: older than n2 (run tfk-index)'
testerr "--records with a corrupt index" \
	'cp n n3 && printf "0 15\n" >n3.idx && tfk-cat --records 1:2 n3' 1 \
	"tfk-cat: n3.idx: line 1: length 15 is shorter than a record's 16 bytes of framing"
testerr "--records on a gzip file" \
	'tfk-cat --records 1:2 "$PTRAIN"' 1 'idx: no index (run tfk-index)'
check "--records 500:510 of mnist is those bytes" \
	sh -c 'cp "$MNIST" m.tfrecord && tfk-index m.tfrecord && tfk-cat --records 500:510 m.tfrecord >r.out &&
	       tail -c +$((500 * 3203 + 1)) "$MNIST" | head -c 32030 | cmp - r.out'

# Pipes ---------------------------------------------------------------------
check "big | head -c 100 ends quietly with head's status" \
	sh -c 'tfk-cat --repeat 20 "$MNIST" 2>err | head -c 100 >h.out && [ $(wc -c <h.out) -eq 100 ] && [ ! -s err ]'
check "--no-verify re-frames: a flipped data crc comes out right" \
	sh -c 'cp "$FOX" fox && printf "\377" | dd of=fox bs=1 seek=31 conv=notrunc 2>/dev/null &&
	       ! tfk-cat fox >/dev/null 2>&1 && tfk-cat --no-verify fox | cmp - "$FOX"'

# Atomic -o under a kill ----------------------------------------------------
check "kill -TERM during --repeat 0 -o leaves no file and no temporary" \
	sh -c 'tfk-cat --repeat 0 --compression gzip -o forever.gz a & p=$!
	       i=0; while [ $i -lt 50 ] && ! ls -a | grep -q "forever.gz.tmp-"; do sleep 0.1; i=$((i + 1)); done
	       ls -a | grep -q "forever.gz.tmp-" || exit 1
	       kill -TERM $p; wait $p; [ $? -eq 143 ] && [ ! -e forever.gz ] && ! ls -a | grep -q tmp-'

# --json, checked by python3-protobuf through tests/py/tfexample.py ----------
TFE=$TESTS/py/tfexample.py
export TFE
testcmd "--json: penguin train record 0 has the values the fixture README lists" \
	'tfk-cat --json --take 1 "$PTRAIN" | "$PYTHON" -c "
import json, sys, numpy as np
d = json.loads(sys.stdin.readline())
want = {\"body_mass_g\": 0.2916666567325592, \"culmen_depth_mm\": 0.6666666865348816,
        \"culmen_length_mm\": 0.2545454502105713, \"flipper_length_mm\": 0.1525423675775528}
for k in sorted(want):
    print(k, len(d[k]), np.float32(d[k][0]) == np.float32(want[k]))
print(\"species\", d[\"species\"])"' \
	'body_mass_g 1 True\nculmen_depth_mm 1 True\nculmen_length_mm 1 True\nflipper_length_mm 1 True\nspecies [0]'
testcmd "--json: mnist label histogram 0..9" \
	'tfk-cat --json "$MNIST" | "$PYTHON" -c "
import collections, json, sys
c = collections.Counter(json.loads(l)[\"image_class\"][0] for l in sys.stdin)
print(*[c[i] for i in range(10)])"' '87 137 87 90 118 79 78 107 120 97'
check "--json: mnist records 900.. are protobuf's reading of them" \
	sh -c 'tfk-cat --skip 900 -o m100 "$MNIST" && tfk-cat --json --skip 900 "$MNIST" >m.jsonl &&
	       [ $(wc -l <m.jsonl) -eq 100 ] && "$PYTHON" "$TFE" check-json m100 m.jsonl >/dev/null'
check "--json: every penguin eval record (GZIP)" \
	sh -c 'tfk-cat --json "$PEVAL" >p.jsonl && "$PYTHON" "$TFE" check-json "$PEVAL" p.jsonl >/dev/null'
check "--json: quirky-but-valid Examples (unpacked, merged, odd names)" \
	sh -c '"$PYTHON" "$TFE" cases . 200 && tfk-cat --json cases.tfrecord >c.jsonl && "$PYTHON" "$TFE" check-json cases.tfrecord c.jsonl >/dev/null'
check "--json --sequence: SequenceExamples" \
	sh -c '"$PYTHON" "$TFE" seq-cases . 100 && tfk-cat --json --sequence seq.tfrecord >s.jsonl && "$PYTHON" "$TFE" check-json-seq seq.tfrecord s.jsonl >/dev/null'
testcmd "--json after shard/take: one line per record kept" \
	'tfk-cat --json --shard 1/4 --take 7 "$MNIST" | wc -l' '7'
check "--json --compression gzip: gzip -dc gives the lines" \
	sh -c 'tfk-cat --json --compression gzip "$PEVAL" | gzip -dc | cmp - p.jsonl'
testerr "--json on a payload that is not an Example: located error" \
	'tfk-cat --json "$MNIST" "$FOX" >/dev/null' 1 \
	"tfk-cat: $FOX: record 0 at byte 0: bad tf.Example: byte 0:"
testerr "  a line of text says so and points to --raw" \
	'tfk-cat --json "$FOX"' 1 \
	"(the payload is text, not a tf.Example); --raw writes the payloads as they are"
EVENTS=$FIX/events/tfx_estimator_chicago_taxi/events.out.tfevents.1646034739.jiyongjung.c.googlers.com
export EVENTS
testerr "--json on a TensorBoard event file says what it is" \
	'tfk-cat --json "$EVENTS"' 1 \
	"tfk-cat: $EVENTS: record 0 at byte 0: bad tf.Example: byte 0: a tensorflow.Event (TensorBoard event file, file_version \"brain.Event:2\"), not a tf.Example; tfk-events prints its values, --raw its payloads"
testerr "  and so on a later event" \
	'tfk-cat --json --skip 1 "$EVENTS"' 1 \
	"record 1 at byte 40: bad tf.Example: byte 0: a tensorflow.Event (TensorBoard event file), not a tf.Example"
# SequenceExample {feature_lists {t: [[1]]}}: an Example reader would skip
# the feature lists and print {}
(cd "$T" && "$PYTHON" mkrec.py seq -- "$(printf '\022\016\012\014\012\001t\022\007\012\005\032\003\012\001\001')")
testerr "--json on a SequenceExample points to --sequence" \
	'tfk-cat --json seq' 1 \
	"tfk-cat: seq: record 0 at byte 0: bad tf.Example: byte 0: a tf.SequenceExample (it has feature lists); give --sequence"
testcmd "  which reads it" 'tfk-cat --json --sequence seq' \
	'{"context":{},"feature_lists":{"t":[[1]]}}'
testerr "--json --skip-corrupt drops it" \
	'tfk-cat --json --skip-corrupt "$FOX" a' 0 \
	"tfk-cat: $FOX: skipped 1 corrupt record (35 bytes)"

# Usage ---------------------------------------------------------------------
testerr "--interleave 0" 'tfk-cat --interleave 0 a' 2 'tfk-cat: --interleave must be at least 1'
testerr "--block 0" 'tfk-cat --block 0 a' 2 'tfk-cat: --block must be at least 1'
testerr "--take -2" 'tfk-cat --take -2 a' 2 'tfk-cat: --take must be -1 (all) or more'
testerr "--skip -1" 'tfk-cat --skip -1 a' 2 'tfk-cat: --skip must not be negative'
testerr "--repeat -1" 'tfk-cat --repeat -1 a' 2 'tfk-cat: --repeat must not be negative'
testerr "--shard 2/2" 'tfk-cat --shard 2/2 a' 2 'tfk-cat: --shard: expected I/N with 0 <= I < N'
testerr "bad Slurm variables" 'SLURM_ARRAY_TASK_ID=x SLURM_ARRAY_TASK_COUNT=2 tfk-cat a' 2 \
	'tfk-cat: bad Slurm/MPI task variables for the default --shard'
testerr "--compression lz4" 'tfk-cat --compression lz4 a' 2 \
	"tfk-cat: --compression: expected none, gzip or zlib, not 'lz4'"
testerr "--records x" 'tfk-cat --records 3 n' 2 "tfk-cat: --records: expected A:B (either may be left out), not '3'"
testerr "--records -1:2" 'tfk-cat --records -1:2 n' 2 "not '-1:2'"
testerr "--repeat with stdin" 'tfk-cat --repeat 2 - <a' 2 'tfk-cat: --repeat cannot read standard input twice'
testerr "--records with stdin" 'tfk-cat --records 1:2 <a' 2 'tfk-cat: --records needs files with an index, not standard input'
testerr "--sequence without --json" 'tfk-cat --sequence a' 2 'tfk-cat: --sequence goes with --json'
testerr "--json with --raw" 'tfk-cat --json --raw a' 2 'tfk-cat: --json and --raw exclude each other'
testerr "unknown option" 'tfk-cat --frobnicate a' 2 "tfk-cat: unknown option '--frobnicate'"
testerr "appending to an input file is refused (it would never end)" \
	'cp a self && timeout 10 tfk-cat self >>self' 1 'tfk-cat: self: input file is output file'
testcmd "... and the file is unchanged" 'cmp self a && echo same' 'same'
testerr "... also when it is standard input" \
	'cp a self2 && timeout 10 tfk-cat <self2 >>self2' 1 'tfk-cat: <stdin>: input file is output file'
testcmd "a regular file as stdout still works" 'tfk-cat a b >ab && tfk-count ab' '7 133 ab'
testcmd "-o a fifo writes through it and leaves it a fifo" \
	'mkfifo ff && { cat ff >ff.got & tfk-cat --raw -o ff b; wait; } && cat ff.got | tr "\n" " " && test -p ff && echo fifo' \
	'b0 b1 fifo'
testerr "-o a directory fails before writing" 'mkdir -p od && tfk-cat -o od a' 1 \
	'tfk-cat: od: is a directory'
testcmd "--help goes to stdout, exit 0" 'tfk-cat --help | head -n 1' 'usage: tfk-cat [options] [FILE...]'

done_testing
