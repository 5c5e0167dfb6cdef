#!/bin/sh
# tfk-serve: TensorFlow Serving's REST API (status, metadata, predict in
# row and columnar form, classify and regress, errors) over the TensorFlow-written fixtures,
# and the version policy (hot add, failed load, removal) by changing the
# base path while it runs. Expected values: the fixture README (y = 0.5 x
# + 2; y3 = 0.5 x2 + 3; TF Serving's own half_plus_two examples) and TF
# Serving's REST API page for the JSON forms.
#
# The server is started with --rest_api_port 0 --port 0 and the port it
# bound is read from its "REST API listening on port N" log line: no race
# for a free port.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"

SM=$FIX/savedmodel
B=$T/models
mkdir -p "$B"
ln -s "$SM/half_plus_two_cpu_tf1/00000123" "$B/00000123"
PID=
trap 'serve_stop "$T/serve.log"' EXIT

tfk-serve --model_name half --model_base_path "$B" --rest_api_port 0 --port 0 \
	--file_system_poll_wait_seconds 1 --max_body_bytes 4096 \
	--access_log "$T/access.log" 2>"$T/serve.log" &
PID=$!

serve_wait "$T/serve.log"

testcmd "status" "$Q GET /half" \
	'{"model_version_status":[{"version":"123","state":"AVAILABLE","status":{"error_code":"OK","error_message":""}}]} 200'
# the REST door listens on IPv6 and IPv4 (as the gRPC one): ::1 answers
# where the machine has an IPv6 loopback
if ip -6 addr show dev lo 2>/dev/null | grep -q '::1/128'; then
	testcmd "a predict over IPv6 loopback" \
		"curl -s -m 3 -g -d '{\"instances\":[1.0]}' -w ' %{http_code}' 'http://[::1]:$PORT/v1/models/half:predict'" \
		'{"predictions":[2.5]} 200'
else
	echo "# no IPv6 loopback here: the IPv6 predict is not checked"
fi
testcmd "status of version 123" "$Q GET /half/versions/123" \
	'{"model_version_status":[{"version":"123","state":"AVAILABLE","status":{"error_code":"OK","error_message":""}}]} 200'
testcmd "instances (TF Serving's example)" \
	"$Q POST /half:predict '{\"instances\": [1.0, 2.0, 5.0]}'" \
	'{"predictions":[2.5,3.0,4.5]} 200'
testcmd "instances (the fixture README)" \
	"$Q POST /half/versions/123:predict '{\"instances\":[2.0,3.0,4.0]}'" \
	'{"predictions":[3.0,3.5,4.0]} 200'
testcmd "instances of lists, integers for a float input" \
	"$Q POST /half:predict '{\"instances\":[[1],[2]]}'" \
	'{"predictions":[[2.5],[3.0]]} 200'
testcmd "inputs: columnar, an object" \
	"$Q POST /half:predict '{\"inputs\":{\"x\":[[1.0],[2.0]]}}'" \
	'{"outputs":[[2.5],[3.0]]} 200'
testcmd "inputs: columnar, a plain list" \
	"$Q POST /half:predict '{\"inputs\":[1.0,-2.0]}'" \
	'{"outputs":[2.5,1.0]} 200'
testcmd "inputs: a scalar gives a scalar" \
	"$Q POST /half:predict '{\"inputs\":4.0}'" '{"outputs":4.0} 200'
testcmd "signature_name" \
	"$Q POST /half:predict '{\"signature_name\":\"regress_x2_to_y3\",\"instances\":[[2.0]]}'" \
	'{"predictions":[[4.0]]} 200'
testcmd "NaN, Infinity and -Infinity in and out" \
	"$Q POST /half:predict '{\"instances\":[NaN,Infinity,-Infinity]}'" \
	'{"predictions":[NaN,Infinity,-Infinity]} 200'
testcmd "float32 results print shortest (0.1 -> 2.05)" \
	"$Q POST /half:predict '{\"instances\":[0.1, 1e-7]}'" \
	'{"predictions":[2.05,2.0]} 200'

# {"b64": ...}: a serialized tf.Example into classify_x_to_y
printf '{"x":[2.0]}\n' | tfk-json -o "$T/ex.tfrecord"
EX=$($PYTHON -c 'import base64,sys; d=open(sys.argv[1],"rb").read(); print(base64.b64encode(d[12:-4]).decode())' "$T/ex.tfrecord")
testcmd "{\"b64\": ...} for a DT_STRING input (tf.Example)" \
	"$Q POST /half:predict '{\"signature_name\":\"classify_x_to_y\",\"instances\":[{\"b64\":\"$EX\"}]}'" \
	'{"predictions":[[3.0]]} 200'

# :regress and :classify (TF Serving's Classify and Regress API): JSON
# examples become tf.Examples for the signature's string input
testcmd "regress: one float per example (y = 0.5 x + 2)" \
	"$Q POST /half:regress '{\"signature_name\":\"regress_x_to_y\",\"examples\":[{\"x\":2.0},{\"x\":3.0}]}'" \
	'{"result":[3.0,3.5]} 200'
testcmd "regress on a version, x as a list" \
	"$Q POST /half/versions/123:regress '{\"signature_name\":\"regress_x_to_y\",\"examples\":[{\"x\":[2.0]}]}'" \
	'{"result":[3.0]} 200'
testcmd "classify: scores only, labels are the class indexes" \
	"$Q POST /half:classify '{\"signature_name\":\"classify_x_to_y\",\"examples\":[{\"x\":2.0},{\"x\":4.0}]}'" \
	'{"result":[[["0",3.0]],[["0",4.0]]]} 200'
testcmd "context: merged into each example, the example's own winning" \
	"$Q POST /half:regress '{\"signature_name\":\"regress_x_to_y\",\"context\":{\"x\":6.0},\"examples\":[{\"x\":1.0},{\"other\":\"a\"}]}'" \
	'{"result":[2.5,5.0]} 200'
err "regress: missing examples: 400" 400 "missing 'examples' key" \
	POST /half:regress '{"signature_name":"regress_x_to_y"}'
err "regress: empty examples: 400" 400 "'examples' must be a non-empty list" \
	POST /half:regress '{"signature_name":"regress_x_to_y","examples":[]}'
err "classify: a feature of mixed kinds: 400" 400 \
	'examples[0].x[1]: expected float like examples[0].x[0], got string' \
	POST /half:classify '{"signature_name":"classify_x_to_y","examples":[{"x":[1.0,"a"]}]}'
err "regress: serving_default has no string input: 400" 400 \
	"signature serving_default: expected one string input (serialized tf.Examples), got input 'x' of float32" \
	POST /half:regress '{"examples":[{"x":1.0}]}'
err "regress: a float-input regress signature: 400" 400 \
	"signature regress_x2_to_y3: expected one string input" \
	POST /half:regress '{"signature_name":"regress_x2_to_y3","examples":[{"x2":1.0}]}'
err "classify on a regress signature: 400" 400 \
	"expected method_name tensorflow/serving/classify (or a predict signature), got tensorflow/serving/regress" \
	POST /half:classify '{"signature_name":"regress_x_to_y","examples":[{"x":1.0}]}'
err "regress: an int64 x where the model parses floats: 400" 400 \
	"feature 'x': expected float values, got int64" \
	POST /half:regress '{"signature_name":"regress_x_to_y","examples":[{"x":1}]}'
err "regress: an unknown signature: 400" 400 'could not find signature' \
	POST /half:regress '{"signature_name":"nope","examples":[{"x":1.0}]}'
err "regress on an unknown version: 404" 404 "Specific(half, 7)" \
	POST /half/versions/7:regress '{"examples":[{"x":1.0}]}'
err "an unknown method: 400" 400 "Malformed request: POST" \
	POST /half:explain '{"examples":[{"x":1.0}]}'

# metadata, field by field
$Q GET /half/metadata >"$T/meta.out"
cat >"$T/meta.py" <<'EOF'
import json, sys
text, code = open(sys.argv[1]).read().rsplit(" ", 1)
assert code == "200", code
m = json.loads(text)
assert m["model_spec"] == {"name": "half", "signature_name": "",
                           "version": "123"}, m["model_spec"]
sd = m["metadata"]["signature_def"]["signature_def"]
s = sd["serving_default"]
assert s["method_name"] == "tensorflow/serving/predict"
assert s["inputs"] == {"x": {"dtype": "DT_FLOAT", "tensor_shape": {
    "dim": [{"size": "-1", "name": ""}, {"size": "1", "name": ""}],
    "unknown_rank": False}, "name": "x:0"}}, s["inputs"]
assert s["outputs"]["y"]["name"] == "y:0"
assert sd["classify_x_to_y"]["inputs"]["inputs"]["dtype"] == "DT_STRING"
assert sd["classify_x_to_y"]["method_name"] == "tensorflow/serving/classify"
for k in ("regress_x_to_y", "regress_x2_to_y3", "regress_x_to_y2"):
    assert k in sd, k
EOF
check "metadata: model_spec, signature_def, dtypes, shapes, names" \
	$PYTHON "$T/meta.py" "$T/meta.out"

# errors
err "malformed JSON: 400 with the offset" 400 "JSON parse error at offset" \
	POST /half:predict '{"instances": [1.0,'
err "empty body" 400 "the document is empty" POST /half:predict ''
err "not an object" 400 "expected a JSON object" POST /half:predict '[1]'
err "neither instances nor inputs" 400 "missing 'inputs' or 'instances'" \
	POST /half:predict '{"x":[1.0]}'
err "both instances and inputs" 400 "only one of 'inputs' or 'instances'" \
	POST /half:predict '{"inputs":[1.0],"instances":[1.0]}'
err "empty instances" 400 "'instances' must be a non-empty list" \
	POST /half:predict '{"instances":[]}'
err "signature_name not a string" 400 "'signature_name' must be a string" \
	POST /half:predict '{"signature_name":1,"instances":[1.0]}'
err "unknown signature" 400 'could not find signature' \
	POST /half:predict '{"signature_name":"nope","instances":[1.0]}'
err "unknown input in a row object" 400 "'z' is not an input" \
	POST /half:predict '{"instances":[{"z":1.0}]}'
err "missing input in columnar object" 400 "inputs: missing input 'x'" \
	POST /half:predict '{"inputs":{"z":[1.0]}}'
err "a string for a float input" 400 'instances[1]: expected float32, got string' \
	POST /half:predict '{"instances":[1.0,"a"]}'
err "rows of different shapes" 400 'instances[1]: expected shape [1], got [2]' \
	POST /half:predict '{"instances":[[1.0],[1.0,2.0]]}'
err "ragged columnar list" 400 'expected 2 values at level 1, got 1' \
	POST /half:predict '{"inputs":[[1.0,2.0],[3.0]]}'
err "float32 integer beyond 2^24" 400 'without loss of precision' \
	POST /half:predict '{"instances":[16777217]}'
err "bad base64" 400 'invalid base64' \
	POST /half:predict '{"signature_name":"classify_x_to_y","instances":[{"b64":"@@"}]}'
testcmd "any shape is fed, as TF Serving's C++ Session feeds it" \
	"$Q POST /half:predict '{\"inputs\":{\"x\":[[1.0,2.0]]}}'" \
	'{"outputs":[[2.5,3.0]]} 200'
err "unknown model: 404" 404 "Servable not found for request: model 'other'" \
	GET /other
err "unknown version: 404" 404 "Could not find version 7 of model half" \
	GET /half/versions/7
err "predict on an unknown version: 404" 404 "Specific(half, 7)" \
	POST /half/versions/7:predict '{"instances":[1.0]}'
err "a label without a config: 400" 400 "Unrecognized servable version label: stable" GET /half/labels/stable
err "GET on :predict is malformed: 400" 400 "Malformed request: GET" \
	GET /half:predict
err "outside /v1/models: 404" 404 "no such resource" GET /../v2/x
BIG=$($PYTHON -c 'print("{\"instances\":[" + ",".join(["1.0"] * 2000) + "]}")')
err "a body over --max_body_bytes: 413" 413 "over the limit of 4096 bytes" \
	POST /half:predict "$BIG"

# versions while it runs
cp -r "$SM/half_plus_two_tf2_cpu/00000123" "$B/200"
status_has() { $Q GET /half | grep -qF "$1"; }
check "a new version is picked up" wait_for status_has \
	'{"version":"200","state":"AVAILABLE"'
testcmd "the status lists the new and the old version" "$Q GET /half" \
	'{"model_version_status":[{"version":"200","state":"AVAILABLE","status":{"error_code":"OK","error_message":""}},{"version":"123","state":"END","status":{"error_code":"OK","error_message":""}}]} 200'
testcmd "the TF2 version (function library) answers" \
	"$Q POST /half:predict '{\"instances\":[1.0,2.0,5.0]}'" \
	'{"predictions":[2.5,3.0,4.5]} 200'
err "the old version is gone: 404" 404 "Specific(half, 123)" \
	POST /half/versions/123:predict '{"instances":[1.0]}'
check "the log says the old version was unloaded" \
	grep -q "version 123 unloaded" "$T/serve.log"

mkdir "$B/300"
printf 'not a protobuf' >"$B/300/saved_model.pb"
check "a version that fails to load is reported (END, its error)" \
	wait_for status_has '{"version":"300","state":"END","status":{"error_code":"'
testcmd "... and the previous version keeps serving" \
	"$Q POST /half:predict '{\"instances\":[2.0]}'" \
	'{"predictions":[3.0]} 200'
rm -rf "$B/300"

mkdir "$B/400"
ln -s "$SM/matrix_half_plus_two/1/saved_model.pb" "$B/400/saved_model.pb"
check "matrix_half_plus_two as version 400" wait_for status_has \
	'{"version":"400","state":"AVAILABLE"'
testcmd "matrix_half_plus_two [1, 3, 3]" \
	"$Q POST /half:predict '{\"instances\":[[[1,2,3],[4,5,6],[7,8,9]]]}'" \
	'{"predictions":[[[2.5,3.0,3.5],[4.0,4.5,5.0],[5.5,6.0,6.5]]]} 200'

mkdir "$B/500"
ln -s "$FIX/tflite/serving_half_plus_two/model.tflite" "$B/500/model.tflite"
check "a .tflite version (DIR/500/model.tflite)" wait_for status_has \
	'{"version":"500","state":"AVAILABLE"'
testcmd ".tflite half_plus_two [[2.0]]" \
	"$Q POST /half:predict '{\"instances\":[[2.0]]}'" \
	'{"predictions":[[3.0]]} 200'
$Q GET /half/metadata >"$T/meta5.out"
testcmd ".tflite metadata: version and input" \
	"$PYTHON -c 'import json,sys; m=json.loads(open(sys.argv[1]).read().rsplit(\" \",1)[0]); s=m[\"metadata\"][\"signature_def\"][\"signature_def\"][\"serving_default\"]; print(m[\"model_spec\"][\"version\"], s[\"inputs\"][\"x\"][\"dtype\"])' $T/meta5.out" \
	'500 DT_FLOAT'

rm -rf "$B/500" "$B/400" "$B/200" "$B/00000123"
check "removing every version unloads the served one" wait_for \
	grep -q "version 500 unloaded" "$T/serve.log"
err "... and predict then finds nothing: 404" 404 "Latest(half)" \
	POST /half:predict '{"instances":[1.0]}'

check "the access log has one line per request" sh -c \
	"[ \$(grep -c ' POST /v1/models/half:predict 200 ' '$T/access.log') -ge 10 ]"
check "access log lines: time method path status bytes microseconds" \
	grep -qE '^[0-9-]+T[0-9:]+Z GET /v1/models/half 200 [0-9]+ [0-9]+$' \
	"$T/access.log"

kill -TERM "$PID"
wait "$PID"
rc=$?
PID=
check "SIGTERM: exit 0" test "$rc" -eq 0
check "SIGTERM: logs stopping and stopped" grep -q "stopped" "$T/serve.log"

testerr "--port 70000: usage error" \
	"tfk-serve --port 70000 --model_name a --model_base_path ." 2 \
	"--port: 70000 is not a port"
testerr "--model_config_file with --model_name: usage error" \
	"tfk-serve --model_config_file m.cfg --model_name a --model_base_path ." \
	2 "--model_config_file names the models: leave out --model_name"
testerr "--batching_parameters_file without --enable_batching" \
	"tfk-serve --batching_parameters_file b.config --model_name a --model_base_path ." \
	2 "--batching_parameters_file: give --enable_batching too"
testerr "--model_name is required" "tfk-serve --model_base_path ." 2 \
	"--model_name is required"
testerr "a missing base path: exit 1" \
	"tfk-serve --model_name a --model_base_path nowhere --rest_api_port 0 --port 0" \
	1 "nowhere: cannot open"

done_testing
