#!/bin/sh
# Hostile model and data files (tests/py/hostile.py writes them): each
# fails cleanly, exit 1, with a message naming the file and the limit,
# in under a second of CPU (user + system: wall time on a shared
# machine is noise) and 100 MB (GNU time's %M), also under ASan/UBSan;
# the budgets move with their environment variables and options; an
# overwritten output keeps its mode.
. "$(dirname "$0")/lib.sh"

H="$PYTHON $TESTS/py/hostile.py"
$H fnidx "$T/fnidx"
$H fanout "$T/fanout" 20
$H bigconst "$T/bigconst"
$H bigfill "$T/bigfill"
$H npy-s0 "$T/s0.npy"
$H npy-u0 "$T/u0.npy"
# 4.4 MB of gzip: a header claiming 8 GiB, then 4300 MiB of zeros
$H gzrec "$T/big.gz" 4300
MNIST=$FIX/tfrecord/tfx_mnist/mnist.tfrecord
export MNIST

# bounded NAME COMMAND RC STDERR: testerr, plus under 1 CPU s, 100 MB.
bounded() {
	(cd "$T" && /usr/bin/time -f '%U %S %M' -o "$T/.time" sh -c "$2") \
		>"$T/.stdout" 2>"$T/.stderr"
	_rc=$?
	# (GNU time puts "Command exited with non-zero status N" first)
	read -r _u _sy _kb <<EOF
$(tail -n 1 "$T/.time")
EOF
	_s=$(awk -v u="$_u" -v s="$_sy" 'BEGIN { printf "%.2f", u + s }')
	if [ $_rc -eq "$3" ] && grep -qF -- "$4" "$T/.stderr" &&
	   awk -v s="$_s" -v kb="$_kb" 'BEGIN { exit !(s < 1 && kb < 100000) }'
	then
		_result pass "$1 ($_s CPU s, $_kb KB)"
	else
		_result fail "$1"
		echo "#   command: $2"
		echo "#   exit: $_rc (want $3); $_s CPU s, $_kb KB (want < 1 s, < 100000 KB)"
		echo "#   want stderr containing: $4"
		sed 's/^/#   stderr: /' "$T/.stderr"
	fi
}

# 3. an output index out of range inside a FunctionDef (was SIGSEGV)
bounded "negative index in a FunctionDef" \
	"tfk-model run --dir fnidx --input_exprs 'x=[1.0]'" 1 \
	"tfk-model: fnidx: signature serving_default: output 'y': function f: input 'm:z:-100000000': output index not in 0..1000000"

# 5. calls that fan out: 2^20 inlined copies (was 1.28 GB and growing)
bounded "function calls fanning out 2^20 times" \
	"tfk-model run --dir fanout --input_exprs 'x=[1.0]'" 1 \
	"inlined nodes (TFK_MAX_IMPORT_NODES; calls that fan out?)"
testerr "... the budget moves with TFK_MAX_IMPORT_NODES" \
	"TFK_MAX_IMPORT_NODES=1000 tfk-model run --dir fanout --input_exprs 'x=[1.0]'" 1 \
	"tfk-model: fanout: signature serving_default: output 'y': node call/c1/c1/c1/c1/c1/c1/c1/c1/c1/c1/c1/c1/c2/c2/c2/c2/c1: inlining function f17 would pass 1000 inlined nodes (TFK_MAX_IMPORT_NODES; calls that fan out?)"
$H fanout "$T/fanout6" 6
testcmd "... a fan-out within it runs: 2^6 x" \
	"tfk-model run --dir fanout6 --input_exprs 'x=[1.5]' | tail -n 1" \
	"[96.]"
testerr "... a malformed budget is an error, not the default" \
	"TFK_MAX_IMPORT_NODES=lots tfk-model run --dir fanout6 --input_exprs 'x=[1.5]'" 1 \
	"TFK_MAX_IMPORT_NODES: 'lots' is not a size"

# tensor bytes: a 250-byte Const claiming 4 TiB; 16 GiB from a Fill
bounded "a Const of 4 TiB" \
	"tfk-model run --dir bigconst --input_exprs 'x=[1.0]'" 1 \
	"tfk-model: bigconst: signature serving_default: output 'y': node c: attr value: tensor float32 [1048576, 1048576] is 4398046511104 bytes, more than the limit of 4294967296 (TFK_MAX_TENSOR_BYTES)"
bounded "an output of 16 GiB inferred at run time" \
	"tfk-model run --dir bigfill --input_exprs 'x=1.0'" 1 \
	"tfk-model: bigfill: signature serving_default: node y: output 0: tensor float32 [65536, 65536] is 17179869184 bytes, more than the limit of 4294967296 (TFK_MAX_TENSOR_BYTES)"
testerr "... TFK_MAX_TENSOR_BYTES lowers it" \
	"TFK_MAX_TENSOR_BYTES=1K tfk-model run --dir fnidx --input_exprs 'x=[$(seq -s, 300)]'" 1 \
	"tfk-model: --input_exprs: x: tensor int64 [300] is 2400 bytes, more than the limit of 1024 (TFK_MAX_TENSOR_BYTES)"

# 6. item size 0 in a .npy (was 1.05 GB before the dtype error)
bounded ".npy with descr |S0" \
	"tfk-model run --dir fnidx --inputs x=s0.npy" 1 \
	"tfk-model: s0.npy: descr '|S0': item size 0 not supported"
bounded ".npy with descr <U0" \
	"tfk-model run --dir fnidx --inputs x=u0.npy" 1 \
	"tfk-model: u0.npy: descr '<U0': item size 0 not supported"

# 4. a gzip record claiming 8 GiB (hung at 100% CPU past 4 GiB)
bounded "tfk-cat: gzip record of 8 GiB" "tfk-cat big.gz >/dev/null" 1 \
	"tfk-cat: big.gz: record 0 at byte 0: length 8589934592 is more than the limit of 268435456 bytes (TFK_MAX_RECORD_BYTES)"
bounded "tfk-count: gzip record of 8 GiB" "tfk-count big.gz" 1 \
	"tfk-count: big.gz: record 0 at byte 0: length 8589934592 is more than the limit of 268435456 bytes (TFK_MAX_RECORD_BYTES)"
bounded "tfk-cat --skip-corrupt: the rest of the file is skipped" \
	"tfk-cat --skip-corrupt big.gz \"\$MNIST\" | tfk-count" 0 \
	"tfk-cat: big.gz: record 0 at byte 0: length 8589934592 is more than the limit of 268435456 bytes (TFK_MAX_RECORD_BYTES); rest of the file skipped"
gzip -c <"$MNIST" >"$T/mnist.gz"
testerr "--max-record-bytes lowers the limit" \
	"tfk-cat --max-record-bytes 3K mnist.gz" 1 \
	"tfk-cat: mnist.gz: record 0 at byte 0: length 3187 is more than the limit of 3072 bytes (TFK_MAX_RECORD_BYTES)"
testerr "... and so does TFK_MAX_RECORD_BYTES" \
	"TFK_MAX_RECORD_BYTES=3000 tfk-count mnist.gz" 1 \
	"tfk-count: mnist.gz: record 0 at byte 0: length 3187 is more than the limit of 3000 bytes (TFK_MAX_RECORD_BYTES)"
testcmd "... records within it pass" \
	"TFK_MAX_RECORD_BYTES=3000 tfk-count --max-record-bytes 3187 mnist.gz | sed 's/ .*//'" \
	"1000"
testcmd "... --help prints the live default" \
	"TFK_MAX_RECORD_BYTES=1G tfk-count --help | grep -c 'max-record-bytes BYTES.*(default: 1G)'" \
	"1"
testerr "... a malformed TFK_MAX_RECORD_BYTES is an error" \
	"TFK_MAX_RECORD_BYTES=-1 tfk-cat mnist.gz" 1 \
	"tfk-cat: TFK_MAX_RECORD_BYTES: '-1' is not a size"
testerr "--max-record-bytes checks its value" \
	"tfk-cat --max-record-bytes 3Q mnist.gz" 2 \
	"option '--max-record-bytes': invalid value '3Q'"

# 7. an overwritten output keeps its mode
: >"$T/priv"
chmod 600 "$T/priv"
testcmd "tfk-cat -o over a 0600 file keeps 0600" \
	"umask 022 && tfk-cat -o priv \"\$MNIST\" && stat -c %a priv && tfk-count priv" \
	"600\n1000 3203000 priv"
testcmd "... a 0640 file keeps 0640" \
	"chmod 640 priv && tfk-cat -o priv \"\$MNIST\" && stat -c %a priv" "640"
testcmd "... a new file gets 0666 & ~umask" \
	"umask 027 && tfk-cat -o new \"\$MNIST\" && stat -c %a new" "640"
ln -s priv "$T/link"
testcmd "... through a symlink the file it names keeps its mode" \
	"chmod 600 priv && tfk-cat -o link \"\$MNIST\" && stat -c %a priv && test -L link && echo link" \
	"600\nlink"
done_testing
