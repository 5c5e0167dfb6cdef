#!/bin/sh
# tfk-serve --model_config_file: several models, TF Serving's version
# policies (latest N, all, specific) and version_labels, the /labels/L
# routes, SIGHUP reloads (a model added, one dropped, a policy changed),
# a bad reload that keeps the config served, and the located refusals of
# a bad file at start. Expected values: half_plus_two (y = 0.5 x + 2),
# half_plus_three from the TF2 fixture's second signature is not used:
# the versions are told apart by which fixture they hold (the .tflite
# version has input x of [1, 1]).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"

SM=$FIX/savedmodel
A=$T/a
Bm=$T/b
mkdir -p "$A" "$Bm"
ln -s "$SM/half_plus_two_cpu_tf1/00000123" "$A/1"
ln -s "$SM/half_plus_two_tf2_cpu/00000123" "$A/2"
mkdir "$A/3"
ln -s "$FIX/tflite/serving_half_plus_two/model.tflite" "$A/3/model.tflite"
ln -s "$SM/half_plus_two_cpu_tf1/00000123" "$Bm/7"
PID=
trap 'serve_stop "$T/serve.log"' EXIT

cat >"$T/m.config" <<EOF
# two models: a with versions 1 and 3 labelled, b latest
model_config_list {
  config {
    name: 'a'
    base_path: '$A'
    model_platform: 'tensorflow'
    model_version_policy { specific { versions: 1 versions: 3 } }
    version_labels { key: 'stable' value: 1 }
    version_labels { key: 'canary' value: 3 }
  }
  config { name: "b" base_path: "$Bm" }
}
EOF

printf 'prometheus_config {\n  enable: true\n  path: "/metrics"\n}\n' >"$T/mon.config"
tfk-serve --model_config_file "$T/m.config" --rest_api_port 0 --port 0 \
	--file_system_poll_wait_seconds 1 \
	--monitoring_config_file "$T/mon.config" 2>"$T/serve.log" &
PID=$!

serve_wait "$T/serve.log"
OK='"status":{"error_code":"OK","error_message":""}'

testcmd "specific {1, 3}: both served, 2 never loaded" "$Q GET /a" \
	"{\"model_version_status\":[{\"version\":\"3\",\"state\":\"AVAILABLE\",$OK},{\"version\":\"1\",\"state\":\"AVAILABLE\",$OK}]} 200"
testcmd "the second model, latest" "$Q GET /b" \
	"{\"model_version_status\":[{\"version\":\"7\",\"state\":\"AVAILABLE\",$OK}]} 200"
testcmd "no version: the highest served (3, the .tflite: [[x]])" \
	"$Q POST /a:predict '{\"instances\":[[2.0]]}'" \
	'{"predictions":[[3.0]]} 200'
testcmd "versions/1 (the TF1 SavedModel, x of [-1])" \
	"$Q POST /a/versions/1:predict '{\"instances\":[2.0, 4.0]}'" \
	'{"predictions":[3.0,4.0]} 200'
testcmd "labels/stable is version 1" \
	"$Q POST /a/labels/stable:predict '{\"instances\":[2.0]}'" \
	'{"predictions":[3.0]} 200'
$Q GET /a/labels/canary/metadata >"$T/meta.out"
testcmd "labels/canary/metadata is version 3's" \
	"sed -n 's/.*\"model_spec\":{\"name\":\"a\",\"signature_name\":\"\",\"version\":\"\\([0-9]*\\)\".*/\\1/p' $T/meta.out" \
	'3'
testcmd "labels/canary status" "$Q GET /a/labels/canary" \
	"{\"model_version_status\":[{\"version\":\"3\",\"state\":\"AVAILABLE\",$OK}]} 200"
err "an unknown label: 400" 400 \
	"Unrecognized servable version label: beta" GET /a/labels/beta
err "version 2 is not served: 404" 404 "Specific(a, 2)" \
	POST /a/versions/2:predict '{"instances":[1.0]}'
testcmd "b answers" "$Q POST /b:predict '{\"instances\":[0.0]}'" \
	'{"predictions":[2.0]} 200'
err "an unknown model: 404" 404 "Servable not found for request: model 'c'" \
	GET /c

# SIGHUP: a becomes latest 2 (versions 3 and 2; 1 unloaded, stable
# dropped), b is taken out, c is added
mkdir -p "$T/c"
ln -s "$SM/half_plus_two_cpu_tf1/00000123" "$T/c/5"
cat >"$T/m.config" <<EOF
model_config_list {
  config {
    name: 'a' base_path: '$A'
    model_version_policy { latest { num_versions: 2 } }
    version_labels { key: 'canary' value: 3 }
  }
  config { name: 'c' base_path: '$T/c' }
}
EOF
kill -HUP "$PID"
status_has() { $Q GET "$1" | grep -qF "$2"; }
check "SIGHUP: the new model c is served" wait_for status_has /c \
	'{"version":"5","state":"AVAILABLE"'
check "... and the log says the config was reloaded" \
	grep -q "m.config: config reloaded" "$T/serve.log"
testcmd "latest 2: 3 and 2 available, 1 ended" "$Q GET /a" \
	"{\"model_version_status\":[{\"version\":\"3\",\"state\":\"AVAILABLE\",$OK},{\"version\":\"2\",\"state\":\"AVAILABLE\",$OK},{\"version\":\"1\",\"state\":\"END\",$OK}]} 200"
testcmd "version 2 (the TF2 SavedModel) answers" \
	"$Q POST /a/versions/2:predict '{\"instances\":[1.0]}'" \
	'{"predictions":[2.5]} 200'
err "a dropped label: 400" 400 "Unrecognized servable version label: stable" \
	GET /a/labels/stable
err "the dropped model b: not served, 404" 404 "Latest(b)" \
	POST /b:predict '{"instances":[1.0]}'
testcmd "b's status: version 7 ended" "$Q GET /b" \
	"{\"model_version_status\":[{\"version\":\"7\",\"state\":\"END\",$OK}]} 200"
check "the log: b leaves serving, no longer configured" \
	grep -q "model b: version 7 leaves serving: the model is no longer configured" \
	"$T/serve.log"

# policy all; then a broken config: logged, the old one kept
printf 'model_config_list { config { name: "a" base_path: "%s" model_version_policy { all {} } } }\n' "$A" >"$T/m.config"
kill -HUP "$PID"
check "all: version 1 is back" wait_for status_has /a/versions/1 \
	'"state":"AVAILABLE"'
printf 'model_config_list { config { name: "a" base_pth: "x" } }\n' >"$T/m.config"
kill -HUP "$PID"
check "a broken config on SIGHUP is logged with its place" wait_for grep -q \
	"m.config:1:40: unknown field 'base_pth' in config" "$T/serve.log"
check "... saying the config served is kept" \
	grep -q "(the config served is kept)" "$T/serve.log"
testcmd "... and all three versions still answer" \
	"$Q POST /a/versions/1:predict '{\"instances\":[0.0]}' && echo && $Q POST /a/versions/2:predict '{\"instances\":[0.0]}' && echo && $Q POST /a/versions/3:predict '{\"instances\":[[0.0]]}'" \
	'{"predictions":[2.0]} 200\n{"predictions":[2.0]} 200\n{"predictions":[[2.0]]} 200'

# the metrics, read by Prometheus' own parser (python3-prometheus-client)
curl -s "http://127.0.0.1:$PORT/metrics" >"$T/metrics.txt"
cat >"$T/prom.py" <<'EOF'
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f for f in
        text_string_to_metric_families(open(sys.argv[1]).read())}
def val(fam, suffix, **labels):
    return sum(s.value for s in fams[fam].samples
               if s.name == fam + suffix and
               all(s.labels.get(k) == v for k, v in labels.items()))
rc = ":tensorflow:serving:request_count"
lat = ":tensorflow:serving:request_latency"
print(fams[rc].type, fams[lat].type)
# (the parser names a counter's samples NAME_total)
print(int(val(rc, "_total", model_name="a", status="OK")),
      int(val(rc, "_total", model_name="a", status="NOT_FOUND")),
      int(val(rc, "_total", model_name="b", status="OK")),
      int(val(rc, "_total", model_name="b", status="NOT_FOUND")))
# a histogram: 33 bounds and +Inf, cumulative, +Inf equal to _count
lab = {"model_name": "a", "API": "Predict", "entrypoint": "REST"}
b = [s for s in fams[lat].samples if s.name == lat + "_bucket" and
     all(s.labels[k] == v for k, v in lab.items())]
cum = [s.value for s in b]
print(len(b), b[0].labels["le"], b[1].labels["le"], b[-1].labels["le"],
      cum == sorted(cum), cum[-1] == val(lat, "_count", **lab))
print(int(val(":tensorflow:serving:runtime_latency", "_count",
              model_name="a", API="Predict", runtime="tfkit")))
EOF
testcmd "metrics: Prometheus reads them; request_count by model and status" \
	"$PYTHON $T/prom.py $T/metrics.txt" \
	'counter histogram\n7 1 1 1\n34 10 18 +Inf True True\n7'
testcmd "metrics: text/plain version 0.0.4" \
	"curl -s -o /dev/null -w '%{content_type}' http://127.0.0.1:$PORT/metrics" \
	'text/plain; version=0.0.4'

kill -TERM "$PID"
wait "$PID"
rc=$?
PID=
check "SIGTERM: exit 0" test "$rc" -eq 0

# refusals at start: exit 1 with the file and place
printf 'model_config_list {\n  config { name: "a" }\n}\n' >"$T/bad.config"
testerr "a config without base_path: exit 1, located" \
	"tfk-serve --model_config_file bad.config --rest_api_port 0 --port 0" 1 \
	"bad.config:2:3: config 'a': base_path is required"
testerr "a missing config file: exit 1" \
	"tfk-serve --model_config_file nowhere.config --rest_api_port 0 --port 0" 1 \
	"nowhere.config: cannot open: No such file or directory"
testerr "--model_config_file_poll_wait_seconds -1: usage error" \
	"tfk-serve --model_config_file m.config --model_config_file_poll_wait_seconds -1" \
	2 "must be 0 or more"

done_testing
