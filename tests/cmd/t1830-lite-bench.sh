#!/bin/sh
# tfk-lite bench: load time and invocation latency of a .tflite model in
# a loop, float and int8. Timings cannot be compared with fixed values,
# so the cases check what must hold of them (positive, ordered min <=
# median <= p90 <= p99, min <= mean, load_ms the sum of its parts,
# examples/s = batch * inferences/s, throughput bound by the fastest
# run), that --iterations / --batch / --warmup / --signature are what
# the report says, the JSON keys and their types (read by python's
# json), the inputs made (shape with the batch, dtype, random or zeros)
# on TensorFlow-written fixtures and on models tfk-lite convert wrote,
# and the refusals with their exit statuses.
. "$(dirname "$0")/lib.sh"

HW=$FIX/tflite/hello_world
LT=$FIX/tflite/lite_testdata
export HW LT

# One JSON report on stdin -> "keys types", the invariants, the facts.
cat >"$T/check.py" <<'PY'
import json, sys
d = json.load(sys.stdin)
print(" ".join("%s:%s" % (k, type(v).__name__) for k, v in d.items()))
t = ["min_us", "median_us", "p90_us", "p99_us"]
print(all(d[k] > 0 for k in t + ["load_ms", "parse_ms", "plan_ms",
                                 "mean_us", "inferences_per_s",
                                 "examples_per_s"]),
      all(d[a] <= d[b] for a, b in zip(t, t[1:])),
      d["min_us"] <= d["mean_us"],
      abs(d["load_ms"] - d["parse_ms"] - d["plan_ms"]) < 1e-3 * max(1, d["load_ms"]),
      abs(d["examples_per_s"] - d["batch"] * d["inferences_per_s"]) <= 1e-4 * d["examples_per_s"],
      d["inferences_per_s"] <= 1 / (d["min_us"] * 1e-6) * 1.001)
print(d["kind"], d["signature"], d["batch"], d["iterations"], d["warmup"],
      d["threads"])
PY
KEYS="model:str signature:str kind:str batch:int threads:int warmup:int iterations:int load_ms:float parse_ms:float plan_ms:float min_us:float median_us:float p90_us:float p99_us:float mean_us:float inferences_per_s:float examples_per_s:float"
OK="True True True True True True"

# Fixtures ----------------------------------------------------------------
testcmd "hello_world float --json: keys, types, invariants, -n and --warmup honoured" \
	'tfk-lite bench "$HW/hello_world_float.tflite" --iterations 57 --warmup 3 --json | $PYTHON check.py' \
	"$KEYS\n$OK\nfloat serving_default 1 57 3 1"
testcmd "hello_world int8 --json: the int8 interpreter, batch 8" \
	'tfk-lite bench "$HW/hello_world_int8.tflite" -n 300 -b 8 --json | $PYTHON check.py | tail -n 2' \
	"$OK\nint8 serving_default 8 300 20 1"
testcmd "one line of JSON, model as given" \
	'tfk-lite bench "$HW/hello_world_float.tflite" -n 5 --json >o.json && wc -l <o.json &&
	 $PYTHON -c "import json; print(json.load(open(\"o.json\"))[\"model\"] == \"$HW/hello_world_float.tflite\")"' \
	"1\nTrue"
testcmd "hello_world int8: INT8 input [?, 1] fed as [4, 1]" \
	'tfk-lite bench "$HW/hello_world_int8.tflite" --batch 4 -n 20 | sed -n "1,2p;4p"' \
	"model: $HW/hello_world_int8.tflite (signature serving_default, subgraph 0, int8)
input dense_input: int8 [4, 1], random
runs: 20 timed after 20 warm-up, 4 examples per run, 1 thread"
testcmd "add.bin: no shape_signature, the batch replaces its shape's 1" \
	'tfk-lite bench "$LT/add.bin" -b 3 -n 10 | sed -n "2p;4p"' \
	"input a: float32 [3, 8, 8, 3], random\nruns: 10 timed after 20 warm-up, 3 examples per run, 1 thread"
testcmd "add_quantized.bin: a uint8 model, uint8 inputs" \
	'tfk-lite bench "$LT/add_quantized.bin" -n 3 | sed -n "2p"' \
	"input input: uint8 [1, 8, 8, 3], random"
testcmd "add_quantized_int8.bin: int8 kind, --zeros" \
	'tfk-lite bench "$LT/add_quantized_int8.bin" --zeros -n 10 | sed -n "1,2p"' \
	"model: $LT/add_quantized_int8.bin (signature serving_default, subgraph 0, int8)\ninput a: int8 [1, 8, 8, 3], zeros"
testcmd "multi_signatures --signature sub: its subgraph, batch 3, -j 2" \
	'tfk-lite bench "$LT/multi_signatures.bin" --signature sub -b 3 -j 2 -n 40 --json | $PYTHON check.py | tail -n 2 &&
	 tfk-lite bench "$LT/multi_signatures.bin" --signature sub -n 1 | sed -n "1,2p"' \
	"$OK\nfloat sub 3 40 20 2
model: $LT/multi_signatures.bin (signature sub, subgraph 1, float)
input x: float32 [1], random"
testcmd "text report: the six lines, in order" \
	'tfk-lite bench "$LT/add.bin" -n 10 | cut -d" " -f1' \
	"model:\ninput\nload:\nruns:\nlatency\nthroughput:"
testcmd "--seconds 0.2: at least one timed run" \
	'tfk-lite bench "$LT/add.bin" --seconds 0.2 --json | $PYTHON -c "
import json, sys; d = json.load(sys.stdin); print(d[\"iterations\"] >= 1)"' \
	"True"
testcmd "-n 1100000: past the 2^20 kept latencies, still every run counted" \
	'tfk-lite bench "$HW/hello_world_float.tflite" -n 1100000 --warmup 0 --json | $PYTHON check.py | tail -n 2' \
	"$OK\nfloat serving_default 1 1100000 0 1"
testcmd "serving_half_plus_two (TOCO era, no signature): subgraph 0" \
	'tfk-lite bench "$FIX/tflite/serving_half_plus_two/model.tflite" -n 5 | sed -n "1p" | sed "s|.*(|(|";
	 tfk-lite bench "$FIX/tflite/serving_half_plus_two/model.tflite" -n 5 --json | $PYTHON -c "
import json, sys; d = json.load(sys.stdin); print(d[\"signature\"], d[\"kind\"])"' \
	"(no signature, subgraph 0, float)\nNone float"

# Models tfk-lite convert wrote ------------------------------------------
F=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $F/train-images-idx3-ubyte.gz \
	--labels $F/train-labels-idx1-ubyte.gz | tfk-cat --take 32 >"$T/r.tfrecord"
(cd "$T" && tfk-train "$TESTS/../examples/cnn.spec.json" r.tfrecord --out cnn \
	--set fit.epochs=1 -q -j1 &&
	tfk-lite convert --saved_model_dir cnn -o cnn.tflite &&
	tfk-lite convert --saved_model_dir cnn -o cnn8.tflite --quantize int8 \
		--representative r.tfrecord --calibration_records 16) >/dev/null 2>&1
testcmd "converted CNN, float: [2, 28, 28, 1] random, invariants" \
	'tfk-lite bench cnn.tflite -b 2 -n 20 --warmup 2 | sed -n "1,2p" &&
	 tfk-lite bench cnn.tflite -b 2 -n 20 --warmup 2 --json | $PYTHON check.py | tail -n 2' \
	"model: cnn.tflite (signature serving_default, subgraph 0, float)
input input_1: float32 [2, 28, 28, 1], random
$OK
float serving_default 2 20 2 1"
testcmd "converted CNN, int8 (float I/O, QUANTIZE in each run): invariants" \
	'tfk-lite bench cnn8.tflite -b 2 -n 20 --warmup 2 --json | $PYTHON check.py | tail -n 2' \
	"$OK\nint8 serving_default 2 20 2 1"
testcmd "converted CNN, int8, -j 2: same counts" \
	'tfk-lite bench cnn8.tflite -b 4 -j 2 -n 10 --json | $PYTHON check.py | tail -n 1' \
	"int8 serving_default 4 10 20 2"

# Errors ------------------------------------------------------------------
testerr "missing file" \
	'tfk-lite bench nope.tflite' 1 "tfk-lite: nope.tflite: No such file or directory"
testerr "corrupt file (test_model_broken.bin): refused, nothing on stdout" \
	'tfk-lite bench "$LT/test_model_broken.bin" >out.txt; rc=$?; test ! -s out.txt && exit $rc' \
	1 "test_model_broken.bin"
testerr "truncated model refused" \
	'head -c 700 "$HW/hello_world_float.tflite" >cut.tflite && tfk-lite bench cut.tflite' \
	1 "tfk-lite: cut.tflite: "
testerr "unknown signature lists the signatures" \
	'tfk-lite bench "$LT/multi_signatures.bin" --signature nope' 1 \
	"no signature 'nope' (signatures: 'add', 'sub')"
testerr "several signatures and no --signature: usage error" \
	'tfk-lite bench "$LT/multi_signatures.bin"' 2 \
	"has 2 signatures ('add', 'sub'): choose one with --signature"
testerr "--batch 0: usage error" \
	'tfk-lite bench "$LT/add.bin" --batch 0' 2 "--batch: expected 1 to 1000000"
testerr "--batch -3: usage error" \
	'tfk-lite bench "$LT/add.bin" -b -3' 2 "--batch: expected 1 to 1000000"
testerr "--batch x: usage error" \
	'tfk-lite bench "$LT/add.bin" --batch x' 2 "batch"
testerr "--iterations with --seconds: usage error" \
	'tfk-lite bench "$LT/add.bin" -n 5 -s 1' 2 "give --iterations or --seconds, not both"
testerr "--seconds 0: usage error" \
	'tfk-lite bench "$LT/add.bin" --seconds 0' 2 "seconds"
testerr "--seed with --zeros: usage error" \
	'tfk-lite bench "$LT/add.bin" --zeros --seed 3' 2 "--seed is for random inputs"
testerr "no model: usage error" 'tfk-lite bench' 2 "bench needs a MODEL.tflite"
testerr "two models: usage error" \
	'tfk-lite bench "$LT/add.bin" "$LT/add.bin"' 2 "one model at a time"
testcmd "top-level --help lists bench" \
	'tfk-lite --help | grep "^  bench"' \
	"  bench time loading a .tflite model and running it in a loop"
testerr "an unknown command names bench among the commands" \
	'tfk-lite benc x' 2 "unknown command 'benc' (show, run, convert or bench)"

done_testing
