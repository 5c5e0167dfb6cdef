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
#   best_cpu N CMD [ARG...]  fewest CPU seconds (user + system) of N runs
#                    of CMD (the first also warms the page cache); CMD's
#                    stdout is discarded.
#   train_bench MODEL TARGET EXAMPLES PEER [ARG...]  issue 5's training
#                    benchmark, printed as its JSON line: tfk-train of
#                    examples/MODEL.spec.json on Fashion-MNIST for one
#                    epoch (ARGs added, e.g. fit.steps_per_epoch) against
#                    torch_train.py PEER, over EXAMPLES training examples
#                    (batch 32); bench-train-MODEL.sh says the rest. Needs
#                    $here, $root, $TFK_BIN and $PYTHON.
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

# CPU seconds of a command's children (POSIX `times` after it ran).
cpu_of() {
	sh -c '"$@" >/dev/null; times' sh "$@" | awk 'NR == 2 {
		split($1, u, "m"); split($2, s, "m")
		sub("s", "", u[2]); sub("s", "", s[2])
		print u[1] * 60 + u[2] + s[1] * 60 + s[2] }'
}

best_cpu() {
	_n=$1
	shift
	_best=
	_k=0
	while [ $_k -lt "$_n" ]; do
		_t=$(cpu_of "$@")
		_best=$(awk -v a="$_t" -v b="$_best" 'BEGIN { print (b == "" || a < b) ? a : b }')
		_k=$((_k + 1))
	done
	echo "$_best"
}

train_bench() {
	_model=$1
	_target=$2
	_n=$3
	_peer=$4
	shift 4
	_d=/usr/share/datasets/fashion-mnist
	unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT OMPI_COMM_WORLD_RANK \
		OMPI_COMM_WORLD_SIZE
	for _t in tfk-train tfk-eval tfk-idx; do
		[ -x "$TFK_BIN/$_t" ] || {
			echo "bench-train-$_model: $TFK_BIN/$_t not found" >&2
			exit 1
		}
	done
	T=$(mktemp -d /tmp/bench-train-$_model-XXXXXX)
	trap 'rm -rf "$T"' EXIT

	"$TFK_BIN/tfk-idx" -q --images $_d/train-images-idx3-ubyte.gz \
		--labels $_d/train-labels-idx1-ubyte.gz -o "$T/train"
	"$TFK_BIN/tfk-idx" -q --images $_d/t10k-images-idx3-ubyte.gz \
		--labels $_d/t10k-labels-idx1-ubyte.gz -o "$T/test"

	_ours=$("$PYTHON" "$here/torch_train.py" run "$TFK_BIN/tfk-train" \
		"$root/examples/$_model.spec.json" \
		--train "$T/train-00000-of-00001.tfrecord" \
		--out "$T/run" -q -j 2 --seed 1 --set fit.epochs=1 "$@")
	_ours1=$("$PYTHON" "$here/torch_train.py" run "$TFK_BIN/tfk-train" \
		"$root/examples/$_model.spec.json" \
		--train "$T/train-00000-of-00001.tfrecord" \
		--out "$T/one" -q -j 2 --seed 1 --set fit.epochs=1 \
		--set fit.steps_per_epoch=1)
	_eval=$("$TFK_BIN/tfk-eval" --json -q -j 2 "$T/run" \
		"$T/test-00000-of-00001.tfrecord")
	# shellcheck disable=SC2086 # PEER is torch_train.py's words
	_peer_json=$(OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE} \
		"$PYTHON" "$here/torch_train.py" $_peer --threads 2 --seed 1)

	"$PYTHON" - "$_ours" "$_eval" "$_peer_json" "$_ours1" "$_model" \
		"$_target" "$_n" <<'PY'
import json, sys
ours, ev, peer, one = (json.loads(a) for a in sys.argv[1:5])
model, target, n = sys.argv[5], float(sys.argv[6]), int(sys.argv[7])
o = (n - 32) / max(ours["seconds"] - one["seconds"], 1e-6)
p = peer["examples_per_s"]
print(json.dumps({"bench": "train-" + model, "ours": round(o, 1),
                  "peer": p, "unit": "examples/s", "ratio": round(o / p, 2),
                  "target": target, "rss_ours": ours["rss_kb"],
                  "rss_peer": peer["rss_kb"],
                  "accuracy": round(ev["accuracy"], 4),
                  "accuracy_peer": peer["accuracy"],
                  "ours_whole": round(n / ours["seconds"], 1)},
                 separators=(",", ":")))
PY
}
