#!/bin/sh
# bench-serve.sh - tfk-serve on loopback (issue 18), each line against a
# peer measured in the same run:
#
#   serve-rest      wrk (Debian's), 8 connections, 2 threads, 5 s (the
#                   best of 3 runs, each side: see wrkbest), POSTing
#                   a batch-1 :predict of the MLP (examples/mlp.spec.json,
#                   one Fashion-MNIST image as JSON). Peer: nginx
#                   (nginx-light, worker_processes = cores, access log off)
#                   answering `return 200` with a body of the same size:
#                   the HTTP ceiling of this machine. Goal >= 0.5.
#   serve-rest-tf   the same wrk run against a Python server doing the
#                   same predict with TensorFlow 2.21: tf.saved_model.load
#                   of the same SavedModel behind cheroot (the fastest
#                   threaded WSGI server in the TF tier's environment,
#                   8 threads, intra/inter-op threads = cores). Goal >= 10.
#                   Only with that environment (else "peer_missing").
#   serve-batching  the CNN at 64 connections: --enable_batching
#                   (max_batch_size 32, batch_timeout_micros 2000,
#                   num_batch_threads = cores) against the same server
#                   without batching. Goal >= 2.
#   serve-grpc      requests/s of tensorflow-serving-api's Predict stub
#                   against urllib POSTing the same predict, one Python
#                   client each, 2000 calls: reported, no goal.
#   serve-memory    RSS of the CNN served as three versions (policy all)
#                   against one version: goal <= 3x + 10 MB, given as
#                   "ours" = 3 x one + 10 MB, "peer" = three versions, so
#                   the ratio >= 1 meets it.
#   serve-reload    a 5 s wrk run while a version is added and another
#                   removed: failed (non-2xx or socket) responses, target
#                   0 ("ours" = requests answered, "peer" = requests sent,
#                   ratio 1.0 when none failed).
# Latencies: p50 and p99 in ms from wrk --latency. Environment: TFK_BIN,
# PYTHON.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${TFK_BIN:=$root/bin}"
: "${PYTHON:=/usr/bin/python3}"
. "$root/tests/bench/lib.sh"
F=/usr/share/datasets/fashion-mnist
T=$(mktemp -d /tmp/tfk-bench-XXXXXX)
PIDS=
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT
cores=$(nproc)

"$TFK_BIN/tfk-idx" -q --images $F/train-images-idx3-ubyte.gz \
	--labels $F/train-labels-idx1-ubyte.gz | "$TFK_BIN/tfk-cat" --take 32 \
	>"$T/r.tfrecord"
for m in mlp cnn; do
	"$TFK_BIN/tfk-train" "$root/examples/$m.spec.json" "$T/r.tfrecord" \
		--out "$T/$m" --set fit.epochs=1 -q -j1 >/dev/null
	mkdir -p "$T/base-$m"
	ln -s "$T/$m" "$T/base-$m/1"
done
# one image, as the float pixels serving_default takes, [1, 28, 28]
"$PYTHON" - "$T" <<'PY'
import json, sys, random
random.seed(1)
img = [[round(random.random(), 4) for _ in range(28)] for _ in range(28)]
open(sys.argv[1] + "/mlp.json", "w").write(json.dumps({"instances": [img]}))
open(sys.argv[1] + "/cnn.json", "w").write(json.dumps(
    {"instances": [[[[v] for v in row] for row in img]]}))
PY
for m in mlp cnn; do
	cat >"$T/$m.lua" <<EOF
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("$T/$m.json")
wrk.body = f:read("*a")
f:close()
EOF
done

# serve NAME BASE [ARGS...]: start tfk-serve, set PORT (REST), GPORT, SPID
serve() {
	_log=$T/$1.log
	shift
	_base=$1
	shift
	"$TFK_BIN/tfk-serve" --model_name m --model_base_path "$_base" \
		--rest_api_port 0 --port 0 "$@" 2>"$_log" &
	SPID=$!
	PIDS="$PIDS $SPID"
	_i=0
	while ! grep -q "REST API listening on port" "$_log"; do
		_i=$((_i + 1))
		[ $_i -lt 200 ] || { cat "$_log" >&2; exit 1; }
		sleep 0.1
	done
	PORT=$(sed -n 's/.*REST API listening on port \([0-9]*\).*/\1/p' "$_log")
	GPORT=$(sed -n 's/.*gRPC API listening on port \([0-9]*\).*/\1/p' "$_log")
}
stop() {
	kill "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
# wrkrun URL LUA CONNS SECONDS: "requests/s p50_ms p99_ms non2xx requests"
wrkrun() {
	wrk -t2 -c"$3" -d"$4"s --latency -s "$2" "$1" >"$T/wrk.out" 2>&1 || true
	awk '
	/Requests\/sec:/ { rps = $2 }
	/^ +50%/ { p50 = $2 } /^ +99%/ { p99 = $2 }
	/Non-2xx/ { bad += $NF }
	/Socket errors/ { gsub(",", ""); bad += $4 + $6 + $8 + $10 }
	/requests in/ { n = $1 }
	function ms(s) {
		if (s ~ /us$/) return s / 1000; if (s ~ /ms$/) return s + 0;
		if (s ~ /s$/) return s * 1000; return s
	}
	END { printf "%s %.3f %.3f %d %d\n", rps + 0, ms(p50), ms(p99), bad, n }
	' "$T/wrk.out"
}
# wrkbest URL LUA CONNS SECONDS: wrkrun's line of the fastest of three
# runs, the least disturbed on a shared machine; nginx, its peer, gets
# the same treatment. (When libmicrohttpd's pool threads raced to
# accept, a run's 8 connections could land 8 to 0 or 6 to 2 and the rate
# was bimodal; tfk-serve now accepts in one thread and spreads them.)
wrkbest() {
	_best=
	for _k in 1 2 3; do
		_line=$(wrkrun "$@")
		if [ -z "$_best" ] || awk -v a="${_line%% *}" -v b="${_best%% *}" \
			'BEGIN { exit !(a > b) }'; then
			_best=$_line
		fi
	done
	echo "$_best"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }

# serve-rest: tfk-serve against nginx ------------------------------------
serve rest "$T/base-mlp"
curl -s -d @"$T/mlp.json" "http://127.0.0.1:$PORT/v1/models/m:predict" \
	>"$T/answer.json"
curl -s -d @"$T/mlp.json" "http://127.0.0.1:$PORT/v1/models/m:predict" \
	>/dev/null
set -- $(wrkbest "http://127.0.0.1:$PORT/v1/models/m:predict" "$T/mlp.lua" 8 5)
ours=$1 o50=$2 o99=$3
stop "$SPID"
mkdir -p "$T/nginx"
nport=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
body=$(sed 's/\\/\\\\/g; s/"/\\"/g' "$T/answer.json")
cat >"$T/nginx/nginx.conf" <<EOF
worker_processes $cores;
daemon off;
pid $T/nginx/nginx.pid;
error_log $T/nginx/error.log;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $T/nginx/body;
	proxy_temp_path $T/nginx/proxy;
	fastcgi_temp_path $T/nginx/fastcgi;
	uwsgi_temp_path $T/nginx/uwsgi;
	scgi_temp_path $T/nginx/scgi;
	server {
		listen 127.0.0.1:$nport;
		location / {
			default_type application/json;
			return 200 "$body";
		}
	}
}
EOF
nginx -c "$T/nginx/nginx.conf" -p "$T/nginx" &
NPID=$!
PIDS="$PIDS $NPID"
_i=0
while ! curl -s -o /dev/null "http://127.0.0.1:$nport/"; do
	_i=$((_i + 1)); [ $_i -lt 100 ] || exit 1; sleep 0.1
done
set -- $(wrkbest "http://127.0.0.1:$nport/v1/models/m:predict" "$T/mlp.lua" 8 5)
peer=$1 p50=$2 p99=$3
stop "$NPID"
printf '{"bench":"serve-rest","ours":%s,"peer":%s,"unit":"requests/s","ratio":%s,"target":0.5,"p50_ms":%s,"p99_ms":%s,"peer_p50_ms":%s,"peer_p99_ms":%s}\n' \
	"$ours" "$peer" "$(ratio "$ours" "$peer")" "$o50" "$o99" "$p50" "$p99"

# serve-rest-tf: a Python TensorFlow server -------------------------------
if tf_env serve-rest-tf; then
	tport=$("$PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	"$TF_PY" - "$T/mlp" "$tport" "$cores" >"$T/tf.log" 2>&1 <<'PY' &
import json, os, sys
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np
import tensorflow as tf
from cheroot import wsgi
path, port, cores = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tf.config.threading.set_intra_op_parallelism_threads(cores)
tf.config.threading.set_inter_op_parallelism_threads(cores)
fn = tf.saved_model.load(path).signatures["serving_default"]
key = list(fn.structured_input_signature[1].keys())[0]

def app(env, start):
    n = int(env.get("CONTENT_LENGTH") or 0)
    req = json.loads(env["wsgi.input"].read(n))
    x = tf.constant(np.asarray(req["instances"], np.float32))
    out = fn(**{key: x})
    y = next(iter(out.values())).numpy().tolist()
    body = json.dumps({"predictions": y}).encode()
    start("200 OK", [("Content-Type", "application/json"),
                     ("Content-Length", str(len(body)))])
    return [body]

print("ready", flush=True)
wsgi.Server(("127.0.0.1", port), app, numthreads=8).safe_start()
PY
	TPID=$!
	PIDS="$PIDS $TPID"
	_i=0
	while ! curl -s -o /dev/null -d @"$T/mlp.json" "http://127.0.0.1:$tport/"; do
		_i=$((_i + 1))
		[ $_i -lt 600 ] || { cat "$T/tf.log" >&2; break; }
		sleep 0.1
	done
	set -- $(wrkbest "http://127.0.0.1:$tport/" "$T/mlp.lua" 8 5)
	peer=$1 p50=$2 p99=$3
	stop "$TPID"
	if [ "${peer%.*}" -gt 0 ] 2>/dev/null; then
		printf '{"bench":"serve-rest-tf","ours":%s,"peer":%s,"unit":"requests/s","ratio":%s,"target":10,"p50_ms":%s,"p99_ms":%s,"peer_p50_ms":%s,"peer_p99_ms":%s}\n' \
			"$ours" "$peer" "$(ratio "$ours" "$peer")" "$o50" "$o99" "$p50" "$p99"
	else
		printf '{"bench":"serve-rest-tf","error":"the TensorFlow server answered nothing"}\n'
	fi
fi

# serve-batching: the CNN at 64 connections, batching on and off ---------
printf 'max_batch_size { value: 32 }\nbatch_timeout_micros { value: 2000 }\nnum_batch_threads { value: %s }\n' \
	"$cores" >"$T/batch.config"
serve batch "$T/base-cnn" --enable_batching \
	--batching_parameters_file "$T/batch.config"
curl -s -o /dev/null -d @"$T/cnn.json" "http://127.0.0.1:$PORT/v1/models/m:predict"
set -- $(wrkrun "http://127.0.0.1:$PORT/v1/models/m:predict" "$T/cnn.lua" 64 5)
on=$1 b50=$2 b99=$3
stop "$SPID"
serve nobatch "$T/base-cnn" --rest_api_num_threads 64
curl -s -o /dev/null -d @"$T/cnn.json" "http://127.0.0.1:$PORT/v1/models/m:predict"
set -- $(wrkrun "http://127.0.0.1:$PORT/v1/models/m:predict" "$T/cnn.lua" 64 5)
off=$1 n50=$2 n99=$3
stop "$SPID"
printf '{"bench":"serve-batching","ours":%s,"peer":%s,"unit":"requests/s","ratio":%s,"target":2,"p50_ms":%s,"p99_ms":%s,"peer_p50_ms":%s,"peer_p99_ms":%s}\n' \
	"$on" "$off" "$(ratio "$on" "$off")" "$b50" "$b99" "$n50" "$n99"

# serve-grpc: the Python client over gRPC against REST -------------------
if tf_env serve-grpc; then
	serve grpc "$T/base-mlp"
	if out=$("$TF_PY" - "$GPORT" "$PORT" "$T/mlp.json" 2>/dev/null <<'PY'
import json, os, sys, time, urllib.request
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import grpc, numpy as np, tensorflow as tf
from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc
gport, rport, body = sys.argv[1], sys.argv[2], open(sys.argv[3], "rb").read()
x = np.asarray(json.loads(body)["instances"], np.float32)
stub = prediction_service_pb2_grpc.PredictionServiceStub(
    grpc.insecure_channel("127.0.0.1:" + gport))
meta = json.loads(urllib.request.urlopen(
    "http://127.0.0.1:%s/v1/models/m/metadata" % rport).read())
sd = meta["metadata"]["signature_def"]["signature_def"]["serving_default"]
rq = predict_pb2.PredictRequest()
rq.model_spec.name = "m"
rq.inputs[list(sd["inputs"])[0]].CopyFrom(tf.make_tensor_proto(x))
n = 2000
def rate(call):
    call()
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    return n / (time.perf_counter() - t0)
url = "http://127.0.0.1:%s/v1/models/m:predict" % rport
def rest():
    urllib.request.urlopen(urllib.request.Request(url, data=body)).read()
print("%.1f %.1f" % (rate(lambda: stub.Predict(rq, timeout=10)),
                     rate(rest)))
PY
	); then
		set -- $out
		printf '{"bench":"serve-grpc","ours":%s,"peer":%s,"unit":"requests/s","ratio":%s,"target":null}\n' \
			"$1" "$2" "$(ratio "$1" "$2")"
	else
		printf '{"bench":"serve-grpc","error":"the gRPC client failed"}\n'
	fi
	stop "$SPID"
fi

# serve-memory: three versions of the CNN against one ---------------------
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
serve mem1 "$T/base-cnn"
curl -s -o /dev/null -d @"$T/cnn.json" "http://127.0.0.1:$PORT/v1/models/m:predict"
one=$(rss "$SPID")
stop "$SPID"
mkdir -p "$T/base3"
for v in 1 2 3; do ln -s "$T/cnn" "$T/base3/$v"; done
printf 'model_config_list { config { name: "m" base_path: "%s" model_version_policy { all {} } } }\n' \
	"$T/base3" >"$T/three.config"
"$TFK_BIN/tfk-serve" --model_config_file "$T/three.config" --rest_api_port 0 \
	--port 0 2>"$T/mem3.log" &
SPID=$!
PIDS="$PIDS $SPID"
_i=0
while ! grep -q "REST API listening on port" "$T/mem3.log"; do
	_i=$((_i + 1)); [ $_i -lt 200 ] || exit 1; sleep 0.1
done
PORT=$(sed -n 's/.*REST API listening on port \([0-9]*\).*/\1/p' "$T/mem3.log")
for v in 1 2 3; do
	curl -s -o /dev/null -d @"$T/cnn.json" \
		"http://127.0.0.1:$PORT/v1/models/m/versions/$v:predict"
done
three=$(rss "$SPID")
stop "$SPID"
limit=$((3 * one + 10240))
printf '{"bench":"serve-memory","ours":%s,"peer":%s,"unit":"KiB (3 x one + 10 MB, three versions)","ratio":%s,"target":1,"one_version_kib":%s}\n' \
	"$limit" "$three" "$(ratio "$limit" "$three")" "$one"

# serve-reload: versions come and go under load ---------------------------
mkdir -p "$T/base-hot"
ln -s "$T/mlp" "$T/base-hot/1"
serve hot "$T/base-hot" --file_system_poll_wait_seconds 1
( sleep 1.5; ln -s "$T/mlp" "$T/base-hot/2"; sleep 2; rm "$T/base-hot/1" ) &
CPID=$!
set -- $(wrkrun "http://127.0.0.1:$PORT/v1/models/m:predict" "$T/mlp.lua" 8 5)
wait "$CPID"
stop "$SPID"
answered=$(($5 - $4))
printf '{"bench":"serve-reload","ours":%s,"peer":%s,"unit":"requests answered of sent","ratio":%s,"target":1,"failed":%s}\n' \
	"$answered" "$5" "$(ratio "$answered" "$5")" "$4"
