#!/bin/sh
# tfk-index: DALI's tfrecord2idx text format, byte for byte against an
# independent Python indexer, atomic output, refusals.
. "$(dirname "$0")/lib.sh"

MNIST=$FIX/tfrecord/tfx_mnist/mnist.tfrecord
FOX=$FIX/tfrecord/rust_raw_record/expected.tfrecord
PTRAIN=$FIX/tfrecord/tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz
export MNIST FOX PTRAIN

# DALI's tools/tfrecord2idx loop, restated: read the 8-byte length, skip
# crc, payload and crc, write "start length\n" with length = f.tell() - start.
cat >"$T/idx.py" <<'EOF'
import struct, sys
with open(sys.argv[1], 'rb') as f, open(sys.argv[2], 'w') as idx:
    while True:
        current = f.tell()
        byte_len = f.read(8)
        if len(byte_len) == 0:
            break
        f.read(4)
        proto_len = struct.unpack('q', byte_len)[0]
        f.read(proto_len)
        f.read(4)
        idx.write(str(current) + ' ' + str(f.tell() - current) + '\n')
EOF
cp "$MNIST" "$T/m"; cp "$FOX" "$T/f"; cat "$FOX" "$MNIST" "$FOX" >"$T/mix"; : >"$T/e"

check "mnist: exit 0" tfk-index m
check "... identical to the Python tfrecord2idx" \
	sh -c '"$PYTHON" idx.py m m.ref && cmp m.idx m.ref'
testcmd "... 1000 lines, first and last" \
	'wc -l <m.idx; head -n 1 m.idx; tail -n 1 m.idx' '1000\n0 3203\n3199797 3203'
testcmd "fox: one line" 'tfk-index f && cat f.idx' '0 35'
check "several files at once, mixed record sizes" \
	sh -c 'tfk-index mix e && "$PYTHON" idx.py mix mix.ref && cmp mix.idx mix.ref'
testcmd "empty file: empty index" 'wc -c <e.idx' '0'
check "no temporary left behind" sh -c '! ls -a | grep -q tmp-'
check "rewriting replaces the old index" \
	sh -c 'echo junk >f.idx && tfk-index f && [ "$(cat f.idx)" = "0 35" ]'
testcmd "tfk-cat --records uses it" 'tfk-cat --records 1:2 mix | cmp - "$MNIST" 2>&1 | sed "s/,.*//"' \
	'cmp: EOF on - after byte 3203'
testcmd "a DALI-written index works the same (fresh: written after the data)" \
	'"$PYTHON" idx.py m m.idx && tfk-cat --records 999: m | tfk-count' '1 3203'

# Refusals --------------------------------------------------------------------
testerr "compressed input is refused" 'cp "$PTRAIN" p.gz && tfk-index p.gz' 1 \
	'tfk-index: p.gz: cannot index a gzip-compressed file (offsets would not be seekable); decompress it first'
check "... and no index written" sh -c '[ ! -e p.gz.idx ]'
testerr "zlib too" 'tfk-cat --compression zlib -o z m && tfk-index z' 1 \
	'tfk-index: z: cannot index a zlib-compressed file'
testerr "stdin is refused" 'tfk-index - <m' 1 'tfk-index: -: cannot index standard input'
testerr "no files: usage" 'tfk-index' 2 'tfk-index: no input files'
cp "$MNIST" "$T/bad"
printf '\377' | dd of="$T/bad" bs=1 seek=$((3203 * 3 + 50)) conv=notrunc 2>/dev/null
testerr "corrupt input: located error" 'tfk-index bad' 1 \
	'tfk-index: bad: record 3 at byte 9609: data crc mismatch'
check "... no index appears" sh -c '[ ! -e bad.idx ] && ! ls -a | grep -q tmp-'
testerr "truncated input" 'head -c 5000 m >t && tfk-index t' 1 \
	'tfk-index: t: record 1 at byte 3203: truncated'
testerr "missing file, the others still indexed" 'rm -f f.idx && tfk-index nope f' 1 \
	'tfk-index: nope: cannot open: No such file or directory'
check "... f.idx written" test -s f.idx
testerr "FILE.idx is a directory: refused before writing" 'cp f g && mkdir g.idx && tfk-index g' 1 \
	'tfk-index: g.idx: is a directory'
check "... no temporary left behind" sh -c '! ls -a | grep -q tmp-'

done_testing
