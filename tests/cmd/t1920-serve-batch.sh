#!/bin/sh
# tfk-serve --enable_batching: requests that arrive together run as one
# batch (padded to allowed_batch_sizes) and each gets its own rows back;
# a request over max_batch_size is refused (400, TF Serving's message);
# a full queue answers 503 at once; the batching parameters file's
# refusals are located. Expected values: half_plus_two (y = 0.5 x + 2).
# Which requests shared a batch is read from the metrics (the padded
# batch sizes): requests sent together fill a batch (which then runs at
# once), and a lone request waits for batch_timeout_micros (3 s).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"

SM=$FIX/savedmodel
B=$T/models
mkdir -p "$B"
ln -s "$SM/half_plus_two_cpu_tf1/00000123" "$B/1"
PID=
trap 'serve_stop "$T/serve.log"' EXIT
cat >"$T/batch.config" <<'EOF'
max_batch_size { value: 4 }
batch_timeout_micros { value: 3000000 }
max_enqueued_batches { value: 1 }
num_batch_threads { value: 1 }
allowed_batch_sizes: 2
allowed_batch_sizes: 4
EOF
printf 'prometheus_config { enable: true path: "/metrics" }\n' >"$T/mon.config"
tfk-serve --model_name half --model_base_path "$B" --rest_api_port 0 \
	--port 0 --rest_api_num_threads 8 --enable_batching \
	--batching_parameters_file "$T/batch.config" \
	--monitoring_config_file "$T/mon.config" 2>"$T/serve.log" &
PID=$!

serve_wait "$T/serve.log"
post() {	# BODY OUT: the answer and status into OUT
	curl -s -d "$1" -w ' %{http_code}' "$U/half:predict" >"$2"
}

# 2 + 1 + 1 rows at once fill max_batch_size: one batch, at once, no
# padding, whatever the machine's speed (the timeout only bounds it)
post '{"instances":[1.0,2.0]}' "$T/r1" &
p1=$!
post '{"instances":[3.0]}' "$T/r2" &
p2=$!
post '{"instances":[4.0]}' "$T/r3" &
p3=$!
wait $p1 $p2 $p3
testcmd "each request of a batch gets its own rows" \
	"cat $T/r1; echo; cat $T/r2; echo; cat $T/r3" \
	'{"predictions":[2.5,3.0]} 200\n{"predictions":[3.5]} 200\n{"predictions":[4.0]} 200'
bs=':tensorflow:serving:batching:processed_batch_size'
pad=':tensorflow:serving:batching:padding_size'
# $T/batches: the batch metrics (sum and count of sizes, padding sum)
cat >"$T/batches" <<EOF
curl -s "http://127.0.0.1:$PORT/metrics" |
	grep -E "^$bs(_count|_sum)\\{|^${pad}_sum\\{" | sed 's/{.*} / /'
EOF
testcmd "the three ran as one batch of 4 rows, no padding" "sh $T/batches" \
	"${bs}_sum 4\n${bs}_count 1\n${pad}_sum 0"

# a request larger than max_batch_size
post '{"instances":[1.0,2.0,3.0,4.0,5.0]}' "$T/r4"
testcmd "5 rows with max_batch_size 4: 400" \
	"sed 's/\"error\": *//' $T/r4" \
	'{"signature serving_default: Task size 5 is larger than maximum batch size 4"} 400'

# 3 rows wait for the timeout; 2 more would pass 1 batch of 4: refused
post '{"instances":[1.0,2.0,3.0]}' "$T/r5" &
p5=$!
sleep 0.5
post '{"instances":[1.0,2.0]}' "$T/r6"
testcmd "a full batch queue answers 503 at once" "cat $T/r6" \
	'{"error":"The batch scheduling queue to which this task was submitted is full"} 503'
wait $p5
testcmd "... and the waiting request, after the timeout, gets its rows" \
	"cat $T/r5" '{"predictions":[2.5,3.0,3.5]} 200'
testcmd "... from a batch padded to 4 (allowed_batch_sizes)" "sh $T/batches" \
	"${bs}_sum 8\n${bs}_count 2\n${pad}_sum 1"

kill -TERM "$PID"
wait "$PID"
rc=$?
PID=
check "SIGTERM: exit 0" test "$rc" -eq 0

printf 'max_batch_size { value: 4 }\nallowed_batch_sizes: 2\nallowed_batch_sizes: 8\n' >"$T/bad1.config"
testerr "the last allowed batch size must be max_batch_size" \
	"tfk-serve --model_name half --model_base_path $B --port 0 --rest_api_port 0 --enable_batching --batching_parameters_file bad1.config" \
	1 "bad1.config:3:1: the last of allowed_batch_sizes (8) must equal max_batch_size (4)"
printf 'max_batch_size: 4\n' >"$T/bad2.config"
testerr "a wrapped value written bare" \
	"tfk-serve --model_name half --model_base_path $B --port 0 --rest_api_port 0 --enable_batching --batching_parameters_file bad2.config" \
	1 "bad2.config:1:1: field 'max_batch_size': expected a message { ... }"
printf 'max_batch_size { value: 4 }\nfoo: 1\n' >"$T/bad3.config"
testerr "an unknown field" \
	"tfk-serve --model_name half --model_base_path $B --port 0 --rest_api_port 0 --enable_batching --batching_parameters_file bad3.config" \
	1 "bad3.config:2:1: unknown field 'foo' in BatchingParameters"

done_testing
