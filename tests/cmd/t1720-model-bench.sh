#!/bin/sh
# tfk-model bench: load time and run latency of a signature in a loop.
# Timings cannot be compared with fixed values, so the cases check what
# must hold of them (positive, ordered min <= median <= p90 <= p99,
# load_ms the sum of its parts, throughput consistent with the batch),
# that --iterations / --batch / --warmup are what the report says, the
# JSON keys and their types (read by python's json), the inputs made
# for each kind of signature (random, --input_records, --input_exprs),
# and the refusals: bad directory or file, tag-set or signature that
# does not exist, string or unknown-rank inputs with nothing given.
. "$(dirname "$0")/lib.sh"

SM=$FIX/savedmodel
TF1=$SM/half_plus_two_cpu_tf1/00000123
TF2=$SM/half_plus_two_tf2_cpu/00000123
MAT=$SM/matrix_half_plus_two/1
RUST=$SM/rust_regression_tf1
export TF1 TF2 MAT RUST

# One JSON report on stdin -> "keys types" and the invariants.
cat >"$T/check.py" <<'PY'
import json, sys
d = json.load(sys.stdin)
print(" ".join("%s:%s" % (k, type(v).__name__) for k, v in d.items()))
t = ["min_us", "median_us", "p90_us", "p99_us"]
print(all(d[k] > 0 for k in t + ["load_ms", "parse_ms", "import_ms",
                                 "plan_ms", "mean_us", "examples_per_s"]),
      all(d[a] <= d[b] for a, b in zip(t, t[1:])),
      d["min_us"] <= d["mean_us"],
      abs(d["load_ms"] - d["parse_ms"] - d["import_ms"] - d["plan_ms"]) < 1e-3 * max(1, d["load_ms"]))
# examples/s <= batch / min latency (the wall time holds every run)
print(d["examples_per_s"] <= d["batch"] / (d["min_us"] * 1e-6) * 1.001,
      d["batch"], d["iterations"], d["warmup"], d["threads"],
      d["tag_set"], d["signature_def"])
PY
KEYS="dir:str tag_set:str signature_def:str batch:int threads:int warmup:int iterations:int load_ms:float parse_ms:float import_ms:float plan_ms:float min_us:float median_us:float p90_us:float p99_us:float mean_us:float examples_per_s:float"

# Fixtures ----------------------------------------------------------------
testcmd "tf1 half_plus_two --json: keys, types, invariants, -n honoured" \
	'tfk-model bench --dir "$TF1" --iterations 57 --warmup 3 --json | $PYTHON check.py' \
	"$KEYS\nTrue True True True\nTrue 1 57 3 1 serve serving_default"
testcmd "one line of JSON, dir as given" \
	'tfk-model bench --dir "$TF1" -n 5 --json >o.json && wc -l <o.json &&
	 $PYTHON -c "import json; print(json.load(open(\"o.json\"))[\"dir\"] == \"$TF1\")"' \
	"1\nTrue"
testcmd "tf1 --batch 4: x [-1, 1] fed as [4, 1]" \
	'tfk-model bench --dir "$TF1" --batch 4 -n 20 | sed -n "2p;4p"' \
	"input x: float32 [4, 1], random\nruns: 20 timed after 20 warm-up, 4 examples per run, 1 thread"
testcmd "tf1 --batch 4 --json: batch 4, invariants" \
	'tfk-model bench --dir "$TF1" -b 4 -n 30 -j 2 --json | $PYTHON check.py | tail -n 2' \
	"True True True True\nTrue 4 30 20 2 serve serving_default"
testcmd "tf2 function library: x [1] is kept (known first dim)" \
	'tfk-model bench --dir "$TF2" --batch 4 -n 10 | sed -n "1,2p"' \
	"model: $TF2 (tag-set serve, signature serving_default)\ninput x: float32 [1], random"
testcmd "text report: the six lines, in order" \
	'tfk-model bench --dir "$MAT" -n 10 | cut -d" " -f1' \
	"model:\ninput\nload:\nruns:\nlatency\nthroughput:"
testcmd "--seconds 0.2: at least one timed run" \
	'tfk-model bench --dir "$MAT" --seconds 0.2 --json | $PYTHON -c "
import json, sys; d = json.load(sys.stdin); print(d[\"iterations\"] >= 1)"' \
	"True"
testcmd "-n 1100000: past the 2^20 kept latencies, still every run counted" \
	'tfk-model bench --dir "$MAT" -n 1100000 --warmup 0 --json | $PYTHON check.py | tail -n 2' \
	"True True True True\nTrue 1 1100000 0 1 serve serving_default"
testcmd "--warmup 0 accepted" \
	'tfk-model bench --dir "$MAT" --warmup 0 -n 3 --json | $PYTHON check.py | tail -n 1' \
	"True 1 3 0 1 serve serving_default"

# Given inputs --------------------------------------------------------------
echo '{"x":[2.0]}
{"x":[3.0]}
{"x":[4.0]}' | tfk-json >"$T/ex.tfrecord"
testcmd "regress_x_to_y fed 3 tf.Examples by --input_records (batch 3)" \
	'tfk-model bench --dir "$TF1" --signature_def regress_x_to_y --input_records ex.tfrecord -n 10 | sed -n "2p;4p"' \
	"input inputs: string [3], given\nruns: 10 timed after 20 warm-up, 3 examples per run, 1 thread"
testcmd "tf2 classify_x_to_y with KEY=FILE" \
	'tfk-model bench --dir "$TF2" --signature_def classify_x_to_y --input_records "inputs=ex.tfrecord" -n 5 --json | $PYTHON check.py | tail -n 1' \
	"True 3 5 20 1 serve classify_x_to_y"
testcmd "--input_exprs: matrix x [2, 3, 3] from a literal (ints to float32)" \
	'tfk-model bench --dir "$MAT" --input_exprs "x=[[[1,2,3],[4,5,6],[7,8,9]],[[1,2,3],[4,5,6],[7,8,9]]]" -n 5 | sed -n 2p' \
	"input x: float32 [2, 3, 3], given"
testcmd "--input_exprs for unknown-rank inputs (rust_regression, two tags)" \
	'tfk-model bench --dir "$RUST" --tag_set train,serve --signature_def tensorflow/serving/regress --input_exprs "x=[1.0, 2.0];y=[0.0, 0.0]" -n 5 | sed -n "2,3p;5p"' \
	"input x: float32 [2], given\ninput y: float32 [2], given\nruns: 5 timed after 20 warm-up, 2 examples per run, 1 thread"

# A model trained by tfk-train ---------------------------------------------
F=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $F/train-images-idx3-ubyte.gz \
	--labels $F/train-labels-idx1-ubyte.gz | tfk-cat --take 32 >"$T/r.tfrecord"
SPEC=$(cd "$(dirname "$0")/../.." && pwd)/examples/mlp.spec.json
tfk-train "$SPEC" "$T/r.tfrecord" --out "$T/mlp" --set fit.epochs=1 -q -j1 >/dev/null
testcmd "tfk-train MLP: [1, 28, 28] random input, invariants" \
	'tfk-model bench --dir mlp -n 200 | sed -n 2p && tfk-model bench --dir mlp -n 200 --json | $PYTHON check.py | tail -n 2' \
	"input input_1: float32 [1, 28, 28], random\nTrue True True True\nTrue 1 200 20 1 serve serving_default"
testcmd "tfk-train MLP --batch 16: [16, 28, 28], throughput bound by batch" \
	'tfk-model bench --dir mlp -b 16 -n 50 --json | $PYTHON check.py | tail -n 2' \
	"True True True True\nTrue 16 50 20 1 serve serving_default"

# Errors ------------------------------------------------------------------
testerr "no such directory" \
	'tfk-model bench --dir nope' 1 "tfk-model: nope: no such directory"
mkdir "$T/garbage" && printf 'not a proto' >"$T/garbage/saved_model.pb"
testerr "garbage saved_model.pb" \
	'tfk-model bench --dir garbage' 1 "garbage/saved_model.pb"
testerr "unknown signature lists the signatures" \
	'tfk-model bench --dir "$MAT" --signature_def nope' 1 \
	'could not find signature "nope"; signatures are: serving_default'
testerr "unknown tag-set lists the tag-sets" \
	'tfk-model bench --dir "$MAT" --tag_set gpu' 1 "tag-sets are: 'serve'"
testerr "string input without --input_records: refused" \
	'tfk-model bench --dir "$TF1" --signature_def regress_x_to_y' 1 \
	"tfk-model: input 'inputs' is a string tensor (serialized tf.Examples?): random values cannot stand for it; give --input_records FILE"
testerr "unknown rank without --input_exprs: refused" \
	'tfk-model bench --dir "$RUST" --tag_set serve,train --signature_def tensorflow/serving/regress' 1 \
	"tfk-model: input 'x': unknown rank; give its value with --input_exprs"
testerr "--input_exprs with a wrong shape" \
	'tfk-model bench --dir "$MAT" --input_exprs "x=[[1.0, 2.0]]"' 1 \
	"input 'x': expected float32 [?, 3, 3], got shape [1, 2]"
testerr "--input_exprs with a key the signature lacks" \
	'tfk-model bench --dir "$MAT" --input_exprs "z=[1.0]"' 1 \
	'"z" is not an input of signature serving_default'
testerr "--input_exprs: strings for a float input are refused" \
	'tfk-model bench --dir "$MAT" --input_exprs "x=[[[\"a\"]]]"' 1 \
	"input 'x': expected float32, got string values"
testerr "--input_records: missing file" \
	'tfk-model bench --dir "$TF1" --signature_def regress_x_to_y --input_records none.tfrecord' 1 \
	"none.tfrecord"
testerr "--input_records FILE without key, no string input" \
	'tfk-model bench --dir "$MAT" --input_records ex.tfrecord' 1 \
	"--input_records: give KEY=FILE"
: >"$T/empty.tfrecord"
testerr "--input_records: empty file" \
	'tfk-model bench --dir "$TF1" --signature_def regress_x_to_y --input_records empty.tfrecord' 1 \
	"empty.tfrecord: no records"
testerr "missing variables bundle" \
	'mkdir novars && cp "$TF1/saved_model.pb" novars/ && tfk-model bench --dir novars' 1 \
	"novars/variables/variables.index: No such file or directory"
testerr "--iterations with --seconds: usage error" \
	'tfk-model bench --dir "$MAT" -n 5 -s 1' 2 "give --iterations or --seconds, not both"
testerr "--seconds 0: usage error" \
	'tfk-model bench --dir "$MAT" --seconds 0' 2 "seconds"
testerr "--batch 0: usage error" \
	'tfk-model bench --dir "$MAT" --batch 0' 2 "--batch: expected 1 to 1000000"
testerr "no --dir: usage error" \
	'tfk-model bench' 2 "bench needs --dir DIR"
testcmd "top-level --help lists bench" \
	'tfk-model --help | grep "^  bench"' \
	"  bench time loading a SavedModel and running a signature in a loop"

done_testing
