#!/bin/sh
# tfk-count: the record counts TensorFlow's fixtures are documented to
# hold, totals, JSON, the index short cut and when it must not be taken,
# and damaged input.
. "$(dirname "$0")/lib.sh"

MNIST=$FIX/tfrecord/tfx_mnist/mnist.tfrecord
FOX=$FIX/tfrecord/rust_raw_record/expected.tfrecord
PTRAIN=$FIX/tfrecord/tfx_penguin/Split-train/data_tfrecord-00000-of-00001.gz
PEVAL=$FIX/tfrecord/tfx_penguin/Split-eval/data_tfrecord-00000-of-00001.gz
export MNIST FOX PTRAIN PEVAL

# The oracle for BYTES: the uncompressed stream's size, by gzip.
testcmd "mnist: 1000 records, its size in bytes" 'tfk-count "$MNIST" | cut -d" " -f1,2' \
	"1000 $(wc -c <"$MNIST")"
testcmd "penguin train (GZIP): 234 records, gzip -dc bytes" \
	'tfk-count "$PTRAIN" | cut -d" " -f1,2' "234 $(gzip -dc "$PTRAIN" | wc -c)"
testcmd "penguin eval (GZIP): 100 records" 'tfk-count "$PEVAL" | cut -d" " -f1,2' \
	"100 $(gzip -dc "$PEVAL" | wc -c)"
testcmd "rust raw record: 1 record of 35 bytes" 'tfk-count "$FOX" | cut -d" " -f1,2' '1 35'
testcmd "several files: a line each and a total, like wc" \
	'cp "$MNIST" m && cp "$FOX" f && tfk-count m f' \
	'1000 3203000 m\n1 35 f\n1001 3203035 total'
testcmd "stdin: no name" 'tfk-count <"$MNIST"' '1000 3203000'
testcmd "a pipe" 'cat "$PTRAIN" | tfk-count' '234 35568'
testcmd "- is named" 'tfk-count - <f' '1 35 -'
testcmd "an empty file" ': >e && tfk-count e' '0 0 e'
testcmd "--json" 'tfk-count --json m "$PEVAL" | "$PYTHON" -c "
import json, sys
d = json.load(sys.stdin)
f = d[\"files\"]
print(f[0][\"file\"], f[0][\"records\"], f[0][\"bytes\"], f[0][\"compression\"], f[0][\"indexed\"])
print(f[1][\"records\"], f[1][\"bytes\"], f[1][\"compression\"])
print(d[\"records\"], d[\"bytes\"], d[\"corrupt_records\"])"' \
	'm 1000 3203000 none False\n100 15200 gzip\n1100 3218200 0'
testcmd "mnist framing checked by Python: 1000 records end at the file size" \
	'"$PYTHON" -c "
import struct, sys
d = open(sys.argv[1], \"rb\").read(); off = n = 0
while off < len(d):
    off += 16 + struct.unpack_from(\"<Q\", d, off)[0]; n += 1
print(n, off)" "$MNIST"' '1000 3203000'

# The index short cut ----------------------------------------------------------
# A hand-made index that claims 2 records ending at the file size: when
# the count says 2, it came from the index, not from the data.
printf '0 1601500\n1601500 1601500\n' >"$T/m.idx"
touch -d '2001-01-01' "$T/m"
testcmd "a fresh index is used without reading the data" 'tfk-count m' '2 3203000 m'
testcmd "--json says so" 'tfk-count --json m | grep -o "\"indexed\":true"' '"indexed":true'
testcmd "--no-index scans" 'tfk-count --no-index m' '1000 3203000 m'
testcmd "touch the data file: the index is stale and ignored" 'touch m && tfk-count m' \
	'1000 3203000 m'
testcmd "index newer again: used" 'touch m.idx && tfk-count m' '2 3203000 m'
testcmd "an index ending before the file size is ignored" \
	'printf "0 3203\n" >m.idx && tfk-count m' '1000 3203000 m'
testerr "a corrupt index: warned about, then a scan" \
	'printf "0 3203\nbanana\n" >m.idx && tfk-count m' 0 \
	'tfk-count: m.idx: line 2: expected a decimal number; counting without it'
testcmd "... and the count is right" 'tfk-count m 2>/dev/null' '1000 3203000 m'
testcmd "a real index from tfk-index gives the same count" \
	'rm m.idx && tfk-index m && tfk-count --json m | "$PYTHON" -c "
import json, sys; f = json.load(sys.stdin)[\"files\"][0]; print(f[\"records\"], f[\"bytes\"], f[\"indexed\"])"' \
	'1000 3203000 True'

# Damaged input ------------------------------------------------------------------
cp "$MNIST" "$T/bad"
printf '\377' | dd of="$T/bad" bs=1 seek=$((3203 * 7 + 40)) conv=notrunc 2>/dev/null
head -c 3000 "$PTRAIN" >"$T/cut.gz"
testerr "data crc: located error, exit 1" 'tfk-count bad' 1 \
	'tfk-count: bad: record 7 at byte 22421: data crc mismatch'
testerr "--skip-corrupt counts the good records" 'tfk-count --skip-corrupt bad >out' 0 \
	'tfk-count: bad: skipped 1 corrupt record (3203 bytes)'
testcmd "... 999 of them" 'cat out' '999 3199797 bad'
testerr "truncated pipe is an error" 'head -c 10000 "$MNIST" | tfk-count' 1 \
	'tfk-count: <stdin>: record 3 at byte 9609: truncated: 391 of 3203 bytes'
testerr "gzip cut short" 'tfk-count cut.gz' 1 \
	'tfk-count: cut.gz: gzip stream truncated at compressed byte 3000'
{ cat "$PTRAIN"; printf 'garbage\n'; } >"$T/tail.gz"
testerr "--skip-corrupt: junk after the gzip member ends the file with its error" \
	'tfk-count --skip-corrupt tail.gz >out' 0 \
	'tfk-count: tail.gz: invalid gzip data at compressed byte 4990: incorrect header check; rest of the file skipped'
testcmd "... no phantom record dropped" 'cat out' '234 35568 tail.gz'
testerr "missing file: the others are still counted, exit 1" \
	'tfk-count m nope f >out' 1 'tfk-count: nope: cannot open: No such file or directory'
testcmd "... lines for the good ones, their total" 'cat out' \
	'1000 3203000 m\n1 35 f\n1001 3203035 total'
testcmd "--json names the error" 'tfk-count --json nope 2>/dev/null | "$PYTHON" -c "
import json, sys; print(json.load(sys.stdin)[\"files\"][0][\"error\"])"' \
	'nope: cannot open: No such file or directory'
testerr "directory" 'tfk-count .' 1 'tfk-count: .: is a directory'
testerr "usage error" 'tfk-count --bogus' 2 "tfk-count: unknown option '--bogus'"

done_testing
