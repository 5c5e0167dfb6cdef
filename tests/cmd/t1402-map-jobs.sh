#!/bin/sh
# tfk-map -j: records stream through the worker threads (whoever claims
# a record reads it, in turn), and workers frame the output records. The
# output must not depend on -j, and an input error must come after
# exactly the records before it, with the same message, as with -j 1.
. "$(dirname "$0")/lib.sh"

"$PYTHON" - "$T" <<'EOF' || echo "not ok - data"
import json, sys
with open(sys.argv[1] + "/in.jsonl", "w") as f:
    for i in range(700):
        f.write(json.dumps({"x": [i * 0.5, -i, 3.25], "k": [i]}) + "\n")
EOF
(cd "$T" && tfk-json in.jsonl -o in.rec) || echo "not ok - records"
printf '%s\n' '{"features": {"x": {"output": "y", "layers": [{"class_name": "Rescaling", "config": {"scale": 2.0, "offset": 1.0}}]}}}' >"$T/r.json"

testcmd "700 records: y = 2x + 1, in order, -j 1" \
	'tfk-map r.json in.rec | tfk-cat --json | "$PYTHON" -c "
import sys, json
rows = [json.loads(l) for l in sys.stdin]
ok = len(rows) == 700 and all(r[\"k\"] == [i] and r[\"y\"] == [2 * v + 1 for v in r[\"x\"]] for i, r in enumerate(rows))
print(\"ok\" if ok else \"bad\")"' "ok\n"
check "-j 2 and -j 3 give the bytes of -j 1" sh -c \
	'tfk-map r.json in.rec >j1 && tfk-map -j 2 r.json in.rec | cmp - j1 && tfk-map -j 3 r.json in.rec | cmp - j1'
check "-j 2 from a pipe of two copies = -j 1 over both files" sh -c \
	'cat in.rec in.rec | tfk-map -j 2 r.json >p2 && tfk-map r.json in.rec in.rec | cmp - p2'

# cut inside record 600: 600 records, then the error
size=$(wc -c <"$T/in.rec")
head -c $((size * 600 / 700 + 10)) "$T/in.rec" >"$T/cut.rec"
testerr "-j 1: truncated input names record 600" 'tfk-map r.json cut.rec >o1' 1 \
	"tfk-map: cut.rec: record 600 at byte"
testerr "-j 2: the same error" 'tfk-map -j 2 r.json cut.rec >o2' 1 \
	"tfk-map: cut.rec: record 600 at byte"
check "-j 2: the same 600 records before it" sh -c \
	'cmp o1 o2 && [ "$(tfk-count o2 | cut -d" " -f1)" = 600 ]'

done_testing
