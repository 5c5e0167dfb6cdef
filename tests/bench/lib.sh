# lib.sh - shared by the tests/bench/bench-*.sh scripts (sourced, POSIX sh).
#
#   best_of N CMD    shortest wall time of N runs of sh -c CMD, in seconds,
#                    after one warm-up run; CMD's stdout is discarded.
#   cnn_tflite N [ARGS]  in the current directory: r.tfrecord (the first N
#                    Fashion-MNIST training records), the CNN of
#                    examples/cnn.spec.json trained one epoch on them (cnn/),
#                    and cnn/ converted to f.tflite (float) and q.tflite
#                    (int8, calibrated on r.tfrecord; ARGS added). Needs
#                    $root and the tools on PATH.
# Uses hyperfine when installed (it discards output itself), else
# date +%s%N. Needs $PYTHON (hyperfine's JSON) and $TFK_BENCH_DIR.

cnn_tflite() {
	_n=$1
	shift
	_d=/usr/share/datasets/fashion-mnist
	tfk-idx -q --images $_d/train-images-idx3-ubyte.gz \
		--labels $_d/train-labels-idx1-ubyte.gz | tfk-cat --take "$_n" >r.tfrecord
	tfk-train "$root/examples/cnn.spec.json" r.tfrecord --out cnn \
		--set fit.epochs=1 -q >/dev/null 2>&1
	tfk-lite convert --saved_model_dir cnn -o f.tflite
	tfk-lite convert --saved_model_dir cnn -o q.tflite --quantize int8 \
		--representative r.tfrecord "$@"
}

best_of() {
	if command -v hyperfine >/dev/null 2>&1; then
		_j=${TFK_BENCH_DIR:-/tmp/tfk-bench}/hf-$$.json
		hyperfine --style none --warmup 1 --runs "$1" --export-json "$_j" \
			"$2" >/dev/null
		"$PYTHON" -c 'import json,sys; print(min(json.load(open(sys.argv[1]))["results"][0]["times"]))' "$_j"
		rm -f "$_j"
		return
	fi
	sh -c "$2" >/dev/null
	_best=
	_k=0
	while [ $_k -lt "$1" ]; do
		_t0=$(date +%s%N)
		sh -c "$2" >/dev/null
		_t1=$(date +%s%N)
		_t=$((_t1 - _t0))
		if [ -z "$_best" ] || [ $_t -lt "$_best" ]; then _best=$_t; fi
		_k=$((_k + 1))
	done
	echo "$_best" | awk '{ printf "%.6f\n", $1 / 1e9 }'
}
