#!/bin/sh
# tfk-serve against slow and greedy clients (tests/cmd/slow-client.py):
# a slowloris on either port holds no more than --max_connections_per_ip
# connections, each cut with a 408 (REST) or closed (gRPC, no HTTP/2
# preface) after --header_timeout_in_ms, while a well-behaved client is
# answered at once; a stalled body gets its 408 after
# --body_timeout_in_ms; beyond --max_connections a REST connection waits
# in the listen queue until one is cut, a gRPC one is closed at once;
# gRPC closes an idle connection (GOAWAY) after
# grpc.max_connection_idle_ms from --grpc_channel_arguments; the server
# stays up and stops cleanly. Clients on other loopback addresses
# (127.0.0.2, ...) play the attacker. Bounded: every wait is a few
# seconds.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"

B=$T/models
mkdir -p "$B"
ln -s "$FIX/savedmodel/half_plus_two_cpu_tf1/00000123" "$B/1"
PID=
trap 'serve_stop "$T/serve.log"' EXIT
SC="$PYTHON $TESTS/cmd/slow-client.py"

testerr "--max_connections 0 is refused" \
	"tfk-serve --model_name half --model_base_path $B --max_connections 0" \
	2 "--max_connections, --max_connections_per_ip, --header_timeout_in_ms and --body_timeout_in_ms must be 1 or more"
testerr "--grpc_channel_arguments needs KEY=VALUE" \
	"tfk-serve --model_name half --model_base_path $B --grpc_channel_arguments grpc.a=1,oops" \
	2 "--grpc_channel_arguments: 'oops' is not KEY=VALUE"

# one REST thread: libmicrohttpd shares --max_connections out among them
tfk-serve --model_name half --model_base_path "$B" --rest_api_port 0 \
	--port 0 --rest_api_num_threads 1 --max_connections 6 \
	--max_connections_per_ip 3 --header_timeout_in_ms 1500 \
	--body_timeout_in_ms 1500 \
	--grpc_channel_arguments grpc.max_connection_idle_ms=1500 \
	2>"$T/serve.log" &
PID=$!
serve_wait "$T/serve.log"
GPORT=$(sed -n 's/.*gRPC API listening on port \([0-9]*\).*/\1/p' \
	"$T/serve.log")

# REST ---------------------------------------------------------------------
$SC loris "$PORT" 10 >"$T/loris" 2>&1 &
LP=$!
sleep 0.5
start=$(date +%s)
testcmd "a predict beside a slowloris is answered" \
	"curl -s -m 3 -d '{\"instances\":[1.0]}' -w ' %{http_code}' $U/half:predict" \
	'{"predictions":[2.5]} 200'
check "... within 2 s" test $(($(date +%s) - start)) -le 2
wait $LP
testcmd "slowloris: 3 held (--max_connections_per_ip), 7 closed at once, the 3 cut with a 408 after --header_timeout_in_ms" \
	"cat $T/loris" \
	'closed at once: 7\nanswered: 3\nHTTP/1.1 408 Request Timeout\n{"error": "the request'"'"'s headers did not arrive within 1500 ms (--header_timeout_in_ms)"}\nafter 1 s, within 5 s: True'
testcmd "a stalled body gets a 408 after --body_timeout_in_ms" \
	"$SC body $PORT" \
	'HTTP/1.1 408 Request Timeout\n{"error": "the request'"'"'s body did not arrive within 1500 ms (--body_timeout_in_ms)"}\nafter 1 s, within 5 s: True'
testcmd "a connection beyond --max_connections waits until the idle ones are cut" \
	"$SC full $PORT 6" \
	"HTTP/1.1 200 OK\nanswered once the others are cut, after 1 s, within 5 s: True"
testcmd "then predictions again" "$Q POST /half:predict '{\"instances\":[2.0]}'" \
	'{"predictions":[3.0]} 200'

# gRPC ---------------------------------------------------------------------
testcmd "gRPC slowloris: the whole preface is answered, 3 held and cut after --header_timeout_in_ms, 7 closed at once" \
	"$SC h2loris $GPORT 10" \
	'whole preface answered SETTINGS within 2 s: True\nclosed at once: 7\nclosed after 1 s, within 5 s, unanswered: 3'
testcmd "gRPC: not HTTP/2, closed at once" "$SC h2garbage $GPORT" \
	"closed at once: True"
testcmd "gRPC: an idle connection gets GOAWAY and is closed (grpc.max_connection_idle_ms)" \
	"$SC h2idle $GPORT" "SETTINGS, then GOAWAY: True\nclosed within 5 s: True"
testcmd "gRPC: beyond --max_connections closed at once; served again once they leave" \
	"$SC h2full $GPORT 6" \
	"one more closed at once: True\nafter they leave, a new one is served within 3 s: True"

testcmd "the server is still up" "$Q GET /half" \
	'{"model_version_status":[{"version":"1","state":"AVAILABLE","status":{"error_code":"OK","error_message":""}}]} 200'
kill -TERM "$PID"
wait "$PID"
rc=$?
PID=
check "SIGTERM: exit 0" test "$rc" -eq 0
check "gRPC's refusals are logged as counts" grep -q \
	"gRPC: connections closed: .* over --max_connections 6 or --max_connections_per_ip 3" \
	"$T/serve.log"

# with batching, REST has a thread per connection: the same defence
tfk-serve --model_name half --model_base_path "$B" --rest_api_port 0 \
	--port 0 --enable_batching --max_connections_per_ip 3 \
	--header_timeout_in_ms 1500 2>"$T/serve2.log" &
PID=$!
serve_wait "$T/serve2.log"
$SC loris "$PORT" 5 >"$T/loris2" 2>&1 &
LP=$!
sleep 0.5
testcmd "thread per connection: a predict beside a slowloris" \
	"curl -s -m 3 -d '{\"instances\":[1.0]}' -w ' %{http_code}' $U/half:predict" \
	'{"predictions":[2.5]} 200'
wait $LP
testcmd "thread per connection: 3 held and cut with a 408, 2 closed at once" \
	"head -2 $T/loris2" 'closed at once: 2\nanswered: 3'
kill -TERM "$PID"
wait "$PID"
rc=$?
PID=
check "SIGTERM: exit 0" test "$rc" -eq 0

done_testing
