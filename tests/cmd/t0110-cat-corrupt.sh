#!/bin/sh
# tfk-cat on damaged input: exact messages and exit codes, what reaches
# stdout before the error, nothing under -o's name, and --skip-corrupt.
. "$(dirname "$0")/lib.sh"

MNIST=$FIX/tfrecord/tfx_mnist/mnist.tfrecord
PTRAIN=$FIX/tfrecord/tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz
export MNIST PTRAIN

# flip FILE OFFSET: overwrite one byte with 0xff (mnist records are 3203
# bytes each: header at 3203*i, payload from +12, data crc at +3199).
flip() { printf '\377' | dd of="$T/$1" bs=1 seek="$2" conv=notrunc 2>/dev/null; }
cp "$MNIST" "$T/data2";  flip data2 $((3203 * 2 + 100))
cp "$MNIST" "$T/lcrc2";  flip lcrc2 $((3203 * 2 + 9))
cp "$MNIST" "$T/len2";   flip len2 $((3203 * 2 + 1))
cp "$MNIST" "$T/dcrc5";  flip dcrc5 $((3203 * 5 + 3199))
cp "$MNIST" "$T/two";    flip two 500; flip two $((3203 * 999 + 20))
head -c 5000 "$MNIST" >"$T/trunc"
head -c 10 "$MNIST" >"$T/short"
head -c 3000 "$PTRAIN" >"$T/cut.gz"
{ cat "$PTRAIN"; printf 'garbage\n'; } >"$T/tail.gz"
: >"$T/empty"
mkdir "$T/dir"
printf 'hello, this is not a TFRecord file\n' >"$T/text"
{ head -c 3203 "$MNIST"; printf 'JUNKJUNKJUNK!'; tail -c +3204 "$MNIST"; } >"$T/junk"
# A length of 2^50 with a correct length crc.
"$PYTHON" - "$T/huge" <<'EOF'
import struct, sys
def crc32c(b):
    c = 0xffffffff
    for x in b:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ 0x82f63b78 if c & 1 else c >> 1
    return c ^ 0xffffffff
n = struct.pack('<Q', 1 << 50)
c = crc32c(n)
m = (((c >> 15) | (c << 17)) + 0xa282ead8) & 0xffffffff
open(sys.argv[1], 'wb').write(n + struct.pack('<I', m) + b'x' * 100)
EOF
# without.py K: everything but record K of mnist, as Python slices it.
cat >"$T/without.py" <<'EOF'
import os, sys
d = open(os.environ['MNIST'], 'rb').read()
k = int(sys.argv[1])
sys.stdout.buffer.write(d[:k * 3203] + d[(k + 1) * 3203:])
EOF

# Errors: message, exit 1 ----------------------------------------------------
testerr "data crc" 'tfk-cat data2' 1 'tfk-cat: data2: record 2 at byte 6406: data crc mismatch'
testcmd "... the records before it were written" \
	'tfk-cat data2 2>/dev/null | tfk-count' '2 6406'
testerr "length crc" 'tfk-cat lcrc2' 1 'tfk-cat: lcrc2: record 2 at byte 6406: length crc mismatch'
testerr "flipped length byte" 'tfk-cat len2' 1 'tfk-cat: len2: record 2 at byte 6406: length crc mismatch'
testerr "flipped data crc byte" 'tfk-cat dcrc5' 1 'tfk-cat: dcrc5: record 5 at byte 16015: data crc mismatch'
testerr "truncated file" 'tfk-cat trunc' 1 \
	'tfk-cat: trunc: record 1 at byte 3203: truncated: length 3187 needs 3191 bytes with its crc but only 1785 are left'
testcmd "... record 0 was written" 'tfk-cat trunc 2>/dev/null | cmp - "$MNIST" 2>&1 | sed "s/,.*//"' \
	'cmp: EOF on - after byte 3203'
testerr "truncated header" 'tfk-cat short' 1 \
	'tfk-cat: short: record 0 at byte 0: truncated header (10 of 12 bytes)'
testerr "absurd length" 'tfk-cat huge' 1 \
	'tfk-cat: huge: record 0 at byte 0: truncated: length 1125899906842624 needs 1125899906842628 bytes with its crc but only 100 are left'
testerr "absurd length on a pipe: over the record budget" 'cat huge | tfk-cat' 1 \
	'tfk-cat: <stdin>: record 0 at byte 0: length 1125899906842624 is more than the limit of 268435456 bytes (TFK_MAX_RECORD_BYTES)'
testerr "... within a raised budget the pipe ends first" \
	'cat huge | TFK_MAX_RECORD_BYTES=2048T tfk-cat' 1 \
	'tfk-cat: <stdin>: record 0 at byte 0: truncated: 112 of 1125899906842640 bytes'
testerr "pipe cut short (upstream killed)" 'head -c 5000 "$MNIST" | tfk-cat >/dev/null' 1 \
	'tfk-cat: <stdin>: record 1 at byte 3203: truncated: 1797 of 3203 bytes'
testerr "gzip file cut short" 'tfk-cat cut.gz >/dev/null' 1 \
	'tfk-cat: cut.gz: gzip stream truncated at compressed byte 3000'
testcmd "... the records before the cut were written" \
	'tfk-cat cut.gz 2>/dev/null | tfk-count' '133 20216'
testerr "not a TFRecord file" 'tfk-cat text' 1 'tfk-cat: text: record 0 at byte 0: length crc mismatch'
testerr "directory" 'tfk-cat dir' 1 'tfk-cat: dir: is a directory'
testerr "missing file" 'tfk-cat nope' 1 'tfk-cat: nope: cannot open: No such file or directory'
testerr "missing file after a good one" 'tfk-cat "$MNIST" nope >/dev/null' 1 'tfk-cat: nope: cannot open'
testcmd "empty file: no records, exit 0" 'tfk-cat empty | wc -c' '0'
testerr "unwritable -o directory" 'tfk-cat -o nodir/x "$MNIST"' 1 'tfk-cat: nodir/x: cannot create'

# -o never shows a partial file ----------------------------------------------
testerr "-o with corrupt input fails" 'tfk-cat -o out "$MNIST" data2' 1 'record 2 at byte 6406'
check "... and nothing appears under the name, no temporary" \
	sh -c '[ ! -e out ] && ! ls -a | grep -q tmp-'
testerr "-o with a missing input" 'tfk-cat -o out2 "$MNIST" nope' 1 'nope: cannot open'
check "... nothing appears" sh -c '[ ! -e out2 ] && ! ls -a | grep -q tmp-'

# --skip-corrupt ----------------------------------------------------------------
testerr "skip a data crc mismatch: reported" 'tfk-cat --skip-corrupt data2 >s.out' 0 \
	'tfk-cat: data2: skipped 1 corrupt record (3203 bytes)'
check "... output is mnist without record 2" sh -c '"$PYTHON" without.py 2 | cmp - s.out'
testerr "skip a bad header (resync)" 'tfk-cat --skip-corrupt lcrc2 >s.out' 0 \
	'tfk-cat: lcrc2: skipped 1 corrupt record (3203 bytes)'
check "... output is mnist without record 2" sh -c '"$PYTHON" without.py 2 | cmp - s.out'
testerr "skip junk between records (resync)" 'tfk-cat --skip-corrupt junk >s.out' 0 \
	'tfk-cat: junk: skipped 1 corrupt record (13 bytes)'
check "... output is all of mnist" sh -c 'cmp s.out "$MNIST"'
testerr "skip two bad records" 'tfk-cat --skip-corrupt two >s.out' 0 \
	'tfk-cat: two: skipped 2 corrupt records (6406 bytes)'
testcmd "... 998 left" 'tfk-count s.out' '998 3196594 s.out'
testerr "skip a truncated tail" 'tfk-cat --skip-corrupt trunc >s.out' 0 \
	'tfk-cat: trunc: skipped 1 corrupt record (1797 bytes)'
testcmd "... record 0 kept" 'tfk-count s.out' '1 3203 s.out'
testerr "skip the rest of a cut gzip file" 'tfk-cat --skip-corrupt cut.gz "$MNIST" >s.out' 0 \
	'tfk-cat: cut.gz: gzip stream truncated at compressed byte 3000; rest of the file skipped'
testcmd "... and go on to the next file" 'tfk-count s.out' '1133 3223216 s.out'
testerr "junk after the last gzip member: the stream's error, not a phantom record" \
	'tfk-cat --skip-corrupt tail.gz >s.out' 0 \
	'tfk-cat: tail.gz: invalid gzip data at compressed byte 4990: incorrect header check; rest of the file skipped'
testcmd "... every record before the junk kept" 'tfk-count s.out' '234 35568 s.out'
testerr "skip with -o" 'tfk-cat --skip-corrupt -o fixed data2' 0 'skipped 1 corrupt record'
testcmd "... the file has the good records" 'tfk-count fixed' '999 3199797 fixed'
testerr "missing file is still an error with --skip-corrupt" \
	'tfk-cat --skip-corrupt nope' 1 'tfk-cat: nope: cannot open'
testcmd "--no-verify passes a bad data crc through, re-framed" \
	'tfk-cat --no-verify data2 | tfk-count' '1000 3203000'

done_testing
