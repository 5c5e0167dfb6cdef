#!/bin/sh
# Profiles and traces: tfk-train --trace as Chrome trace-event JSON
# (metadata, complete and counter events; our op names and types; the
# steps of --profile-steps), the end-of-run step-time summary (a slow
# producer through a pipe is flagged input-bound, a normal run is not;
# the peak memory and its op), bad --profile-steps, an unwritable
# --profile or --trace failing before any training, and --trace on
# tfk-model run/bench, tfk-lite run/bench, tfk-eval, tfk-predict and tfk-map
# (threaded). TensorBoard's own reading of
# --profile is tests/tf/t-profile.py.
. "$(dirname "$0")/lib.sh"

F=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $F/t10k-images-idx3-ubyte.gz \
	--labels $F/t10k-labels-idx1-ubyte.gz | tfk-cat --take 320 >"$T/r.tfrecord"
SPEC=$(cd "$(dirname "$0")/../.." && pwd)/examples/mlp.spec.json
SLOW="$PYTHON $TESTS/py/slow_records.py"
export SPEC SLOW

cat >"$T/trace_check.py" <<'P'
import collections, json, sys
j = json.load(open(sys.argv[1]))
ev = j["traceEvents"]
kinds = sorted({e["ph"] for e in ev})
threads = [e["args"]["name"] for e in ev if e.get("name") == "thread_name"]
ops = collections.Counter((e["name"], e["args"]["type"]) for e in ev
                          if e["ph"] == "X" and e["cat"] == "Op")
steps = [e["args"]["step"] for e in ev if e["ph"] == "X" and e["cat"] == "Step"]
mem = [e["args"]["bytes_in_use"] for e in ev if e["ph"] == "C"]
ok = all(e["dur"] >= 0 and e["ts"] >= 0 for e in ev if e["ph"] == "X")
print(kinds, threads, j["displayTimeUnit"])
print(sorted(steps), ok, min(mem) >= 0 and max(mem) > 0)
for name in sys.argv[2:]:
    print(name, sorted(t for (n, t) in ops if n == name),
          sum(c for (n, t), c in ops.items() if n == name))
P

testcmd "--trace: M, X and C events, thread main, steps 2..4 of --profile-steps" \
	'tfk-train "$SPEC" r.tfrecord --out run -q --set fit.epochs=1 --trace t.json --profile-steps 2:4 &&
	 $PYTHON trace_check.py t.json train/dense/MatMul' \
	"['C', 'M', 'X'] ['main'] ms\n[2, 3, 4] True True\ntrain/dense/MatMul ['MatMul'] 3"
testcmd "--trace: the gradient ops and the input wait by TF's names" \
	'$PYTHON trace_check.py t.json gradients/train/dense/MatMul_grad/MatMul_1 IteratorGetNext | tail -n 2' \
	"gradients/train/dense/MatMul_grad/MatMul_1 ['MatMul'] 3\nIteratorGetNext ['IteratorGetNext'] 3"
testcmd "-q: no summary, no notes" \
	'tfk-train "$SPEC" r.tfrecord --out runq -q --set fit.epochs=1 --trace tq.json 2>&1 | wc -l' "0"

# The step-time summary ------------------------------------------------------
testcmd "normal run: where step time went, the peak memory, not input-bound" \
	'tfk-train "$SPEC" r.tfrecord --out run2 --set fit.epochs=1 --trace t2.json 2>err >/dev/null &&
	 grep -c "^tfk-train: step time: [0-9.]* ms/step over 10 steps: input [0-9.]*%, compute [0-9.]*%, other [0-9.]*%$" err;
	 grep -c "input-bound" err;
	 grep -o "peak memory [0-9.]* KiB ([0-9]* bytes) in steps 3:7, reached by gradients/train/dense/MatMul_grad/MatMul_1" err | sed "s/[0-9.]* KiB ([0-9]* bytes)/N/"' \
	"1\n0\npeak memory N in steps 3:7, reached by gradients/train/dense/MatMul_grad/MatMul_1"
testcmd "a slow producer through a pipe: input-bound, as the overview page says" \
	'$SLOW r.tfrecord 0.002 | tfk-train "$SPEC" --out run3 --set fit.epochs=1 --set fit.steps_per_epoch=5 --trace t3.json 2>err >/dev/null &&
	 sed -n "s/^tfk-train: input-bound: \([0-9]*\)% of step time waiting for data$/\1/p" err | awk "{ print (\$1 >= 50) }"' \
	"1"
testcmd "no --profile or --trace: no summary" \
	'tfk-train "$SPEC" r.tfrecord --out run4 --set fit.epochs=1 2>&1 >/dev/null | grep -c "step time" || :' "0"
testerr "a window past the run: a warning, the files still written" \
	'tfk-train "$SPEC" r.tfrecord --out run5 --set fit.epochs=1 --trace t5.json --profile-steps 50:60 && test -s t5.json' \
	0 "--profile-steps 50:60: the run had 10 steps; none profiled"

# Bad input ------------------------------------------------------------------
for bad in 5:2 0:3 3 a:b 2:x; do
	testerr "--profile-steps $bad: usage error" \
		"tfk-train \"\$SPEC\" r.tfrecord --out bad --trace x.json --profile-steps $bad" 2 "--profile-steps"
done
touch "$T/afile"
testerr "--profile under a file: fails before training, naming the path" \
	'tfk-train "$SPEC" r.tfrecord --out run6 --set fit.epochs=1 --profile afile/logs' \
	1 "--profile afile/logs: afile/logs: cannot create: Not a directory"
testcmd "... and nothing was trained or written" \
	'ls run6 2>/dev/null | wc -l; grep -c Epoch .stdout .stderr | tr "\n" " "' "0\n.stdout:0 .stderr:0 "
testerr "--trace into a missing directory: fails before training" \
	'tfk-train "$SPEC" r.tfrecord --out run7 --set fit.epochs=1 --trace nodir/t.json' \
	1 "--trace: nodir/t.json"
testcmd "... nothing trained, no half file" 'ls run7 nodir 2>/dev/null | wc -l' "0"

# The other tools ------------------------------------------------------------
$PYTHON -c "print('input_1=' + str([[[0.5] * 28] * 28]))" >"$T/x.expr"
testcmd "tfk-model bench --trace: 10 predict steps with the model's ops" \
	'tfk-model bench --dir run -n 30 --trace b.json >/dev/null 2>&1 &&
	 $PYTHON trace_check.py b.json dense/MatMul dense_1/Softmax | sed -n 2,4p' \
	"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10] True True\ndense/MatMul ['MatMul'] 10\ndense_1/Softmax ['Softmax'] 10"
testcmd "tfk-model run --trace: one step" \
	'tfk-model run --dir run --input_exprs "$(cat x.expr)" --trace r.json >/dev/null 2>&1 &&
	 $PYTHON trace_check.py r.json | sed -n 2p' "[1] True True"
testcmd "tfk-lite run --trace: the float graph's ops" \
	'tfk-lite run $FIX/tflite/hello_world/hello_world_float.tflite --input_exprs "dense_input=[[0.5]]" --trace l.json >/dev/null 2>&1 &&
	 $PYTHON trace_check.py l.json MatMul | sed -n 2,3p' "[1] True True\nMatMul ['MatMul'] 1"
testcmd "tfk-lite bench --trace: 10 predict steps of the float graph" \
	'tfk-lite bench $FIX/tflite/hello_world/hello_world_float.tflite -n 20 --trace lb.json >/dev/null 2>&1 &&
	 $PYTHON trace_check.py lb.json MatMul | sed -n 2,3p' \
	"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10] True True\nMatMul ['MatMul'] 10"
testcmd "tfk-eval --trace: a test step per batch, the inference ops" \
	'tfk-eval run r.tfrecord -q --trace e.json >/dev/null &&
	 $PYTHON trace_check.py e.json dense/MatMul loss/Mean | sed -n 2,4p' \
	"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10] True True\ndense/MatMul ['MatMul'] 10\nloss/Mean ['Mean'] 10"
testcmd "tfk-predict --trace: a predict step per batch of 64" \
	'tfk-predict --dir run --signature_def serving_raw -b 64 r.tfrecord -o p.tfrecord --trace p.json 2>/dev/null &&
	 $PYTHON trace_check.py p.json dense_1/Softmax IteratorGetNext | sed -n 2,4p' \
	"[1, 2, 3, 4, 5] True True\ndense_1/Softmax ['Softmax'] 5\nIteratorGetNext ['IteratorGetNext'] 5"
testcmd "tfk-map -j 2 --trace: a map step per record, read and write stages" \
	'tfk-map $TESTS/../examples/rescale.map.json r.tfrecord -o m.tfrecord -j 2 --trace m.json 2>/dev/null &&
	 $PYTHON -c "
import json, sys
ev = json.load(open(\"m.json\"))[\"traceEvents\"]
steps = sorted(e[\"args\"][\"step\"] for e in ev if e.get(\"cat\") == \"Step\")
print(steps == list(range(1, 321)), sum(e[\"name\"] == \"read\" for e in ev) >= 320,
      sum(e[\"name\"] == \"write\" for e in ev), sorted({e[\"args\"][\"type\"] for e in ev if e.get(\"cat\") == \"Op\"}))"' \
	"True True 320 ['AddV2', 'Cast', 'Mul']"
testerr "tfk-model bench --profile under a file: fails before loading" \
	'tfk-model bench --dir run -n 5 --profile afile/x' 1 "--profile afile/x"

done_testing
