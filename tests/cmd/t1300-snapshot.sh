#!/bin/sh
# tfk-snapshot: run once and store, replay without running (a counter
# file proves it), recompute when an input changes (mtime, size, or
# content with --hash-inputs), failures and kills leave nothing that
# looks complete, concurrent runs produce one snapshot, --list/--gc,
# and the fingerprint recomputed by Python from the documented layout.
. "$(dirname "$0")/lib.sh"

MNIST=$FIX/tfrecord/tfx_mnist/mnist.tfrecord
export MNIST
cd "$T" || exit 1
cp "$MNIST" m
printf '{"x":[1]}\n{"x":[2]}\n{"x":[3]}\n' | tfk-json >a
# A run of COMMAND appends a line to ran: how we see whether it ran.
RUN='echo run >>ran; tfk-cat m'
export RUN
runs() { if [ -f "$T/ran" ]; then wc -l <"$T/ran" | tr -d ' '; else echo 0; fi; }
# --list without the fingerprint, the age as AGE, blanks squeezed.
cat >lst <<'EOF'
tfk-snapshot "$@" --list | sed 's/^[0-9a-f]\{64\} *//; s/ *[0-9]*[smhd]  / AGE /; s/  */ /g'
EOF
chmod +x lst

# Store and replay ------------------------------------------------------------
check "first run: the command's output, byte for byte" \
	sh -c 'tfk-snapshot c -- sh -c "$RUN" >o1 && cmp o1 m'
testcmd "... it ran once" "echo $(runs)" '1'
testcmd "... one complete snapshot; meta.json counts (Python's json)" \
	'"$PYTHON" -c "
import json, glob
m = json.load(open(glob.glob(\"c/*/meta.json\")[0]))
print(m[\"records\"], m[\"bytes\"], m[\"command\"][2], m[\"version\"] != \"\")
print([(i[\"path\"].split(\"/\")[-1], i[\"size\"]) for i in m[\"inputs\"]])"' \
	"1000 3203000 $RUN True\n[('m', 3203000)]"
check "... the data file is what was printed" sh -c 'cmp c/*/data.tfrecord m'
check "second run: same bytes" \
	sh -c 'tfk-snapshot -v c -- sh -c "$RUN" >o2 2>err && cmp o2 m'
testcmd "... replayed, not run" 'echo $(wc -l <ran); grep -c "replayed snapshot" err' '1\n1'
testcmd "... still one snapshot" 'tfk-snapshot c --list | wc -l' '1'

# Fingerprint changes ---------------------------------------------------------
check "input touched to a new mtime: runs again" \
	sh -c 'touch -d "2001-01-01" m && tfk-snapshot c -- sh -c "$RUN" | cmp - m'
testcmd "... ran" 'wc -l <ran' '2'
check "input grows: runs again, new content out" \
	sh -c 'cat a >>m && tfk-snapshot c -- sh -c "$RUN" >o3 && cat "$MNIST" a | cmp - o3'
testcmd "... ran; three complete snapshots" 'wc -l <ran; ls c/*/meta.json | wc -l' '3\n3'
testcmd "a different command line is a different snapshot" \
	'tfk-snapshot c -- sh -c "$RUN --take 1" | tfk-count' '1 3203'
testcmd "... ran" 'wc -l <ran' '4'

cp "$MNIST" m
check "--hash-inputs: first run stores" \
	sh -c 'tfk-snapshot --hash-inputs h -- sh -c "$RUN" | cmp - m'
check "... mtime-only change replays" \
	sh -c 'touch -d "2002-02-02" m && tfk-snapshot --hash-inputs h -- sh -c "$RUN" | cmp - m'
testcmd "... not run again" 'wc -l <ran' '5'
# Same size, other bytes (still valid records): record 1 copied over
# record 0.
check "... same-size content change recomputes" sh -c '
	"$PYTHON" -c "
import sys
d = open(\"m\", \"rb\").read()
open(\"m\", \"wb\").write(d[3203:6406] + d[3203:])" &&
	touch -d "2002-02-02" m &&
	tfk-snapshot --hash-inputs h -- sh -c "$RUN" | cmp - m'
testcmd "... ran; the new content's sha256 (sha256sum) is in one meta.json" \
	'wc -l <ran; sha256sum m | cut -c1-64 >sums; grep -l -F -f sums h/*/meta.json | wc -l' \
	'6\n1'

# The documented fingerprint, recomputed in Python --------------------------
cat >fp.py <<'EOF'
import hashlib, os, struct, sys
version, hashed, argv, inputs = sys.argv[1], sys.argv[2] == "1", sys.argv[3].split("\x01"), sys.argv[4:]
u64 = lambda v: struct.pack("<Q", v)
h = hashlib.sha256()
h.update(b"tfk-snapshot 1\n" + version.encode() + b"\n")
h.update(u64(len(argv)))
for a in argv:
    h.update(u64(len(a.encode())) + a.encode())
paths = sorted(set(os.path.realpath(p) for p in inputs))
h.update(u64(len(paths)))
for p in paths:
    st = os.stat(p)
    h.update(u64(len(p.encode())) + p.encode() + u64(st.st_size))
    if hashed:
        h.update(b"H" + hashlib.sha256(open(p, "rb").read()).digest())
    else:
        h.update(b"S" + u64(st.st_mtime_ns))
print(h.hexdigest())
EOF
V=$(tfk-snapshot --version | sed 's/.* //')
export V
testcmd "--fingerprint equals the documented SHA-256 (Python hashlib)" \
	'tfk-snapshot --fingerprint c -- tfk-cat --take=1 m a nope; "$PYTHON" fp.py "$V" 0 "$(printf "tfk-cat\001--take=1\001m\001a\001nope")" m a' \
	"$("$PYTHON" "$T/fp.py" "$V" 0 "$(printf 'tfk-cat\001--take=1\001m\001a\001nope')" "$T/m" "$T/a")\n$("$PYTHON" "$T/fp.py" "$V" 0 "$(printf 'tfk-cat\001--take=1\001m\001a\001nope')" "$T/m" "$T/a")"
testcmd "... with --hash-inputs, and --name=FILE values and sh -c words count" \
	'tfk-snapshot --hash-inputs --fingerprint c -- sh -c "tfk-cat m|tfk-map --spec=a >log"' \
	"$(cd "$T" && "$PYTHON" fp.py "$V" 1 "$(printf 'sh\001-c\001tfk-cat m|tfk-map --spec=a >log')" m a)"
check "... the file after > is an output, not an input" sh -c '
	f1=$(tfk-snapshot --fingerprint c -- sh -c "tfk-cat a >log") && : >log &&
	f2=$(tfk-snapshot --fingerprint c -- sh -c "tfk-cat a >log") && [ "$f1" = "$f2" ]'
check "... globs in a script are expanded" sh -c '
	mkdir -p gl && cp a gl/1 && f1=$(tfk-snapshot --fingerprint c -- sh -c "tfk-cat gl/*") &&
	touch -d 2003-03-03 gl/1 && f2=$(tfk-snapshot --fingerprint c -- sh -c "tfk-cat gl/*") &&
	[ "$f1" != "$f2" ]'
check "--input DIR: a change below it changes the fingerprint" sh -c '
	mkdir -p d/e && cp a d/e/f && f1=$(tfk-snapshot --input d --fingerprint c -- true) &&
	touch -d 2004-04-04 d/e/f && f2=$(tfk-snapshot --input d --fingerprint c -- true) &&
	f3=$(tfk-snapshot --fingerprint c -- true) && [ "$f1" != "$f2" ] && [ "$f2" != "$f3" ]'
testerr "--input that does not exist" 'tfk-snapshot --input nope c -- true' 1 \
	'tfk-snapshot: nope: No such file or directory'

# Failures leave nothing complete ---------------------------------------------
testerr "command fails: its exit status, nothing stored" \
	'tfk-snapshot f -- sh -c "tfk-cat a; exit 3" >o' 3 \
	'tfk-snapshot: sh: exit status 3; nothing stored'
testcmd "... its output still passed through; no snapshot" \
	'cmp o a && echo same; ls f | grep -v "\.lock$"; echo end' 'same\nend'
testerr "command not found: 127" 'tfk-snapshot f -- no-such-command-x' 127 \
	'tfk-snapshot: no-such-command-x: No such file or directory'
testerr "output ends inside a record: exit 1, not stored" \
	'tfk-snapshot f -- head -c 50 a' 1 \
	'tfk-snapshot: head output: record 1 at byte 30: stream ends inside the record (20 bytes of it); not stored'
testerr "output that is not TFRecords: not stored" \
	'tfk-snapshot f -- echo hello world, this is text' 1 \
	'tfk-snapshot: echo output: record 0 at byte 0: length crc mismatch; not stored'
cp a bad
printf 'Z' | dd of=bad bs=1 seek=20 conv=notrunc 2>/dev/null
testerr "a payload byte flipped: data crc mismatch, not stored" \
	'tfk-snapshot f -- cat bad' 1 \
	'tfk-snapshot: cat output: record 0 at byte 0: data crc mismatch; not stored'
testcmd "... none of these left a snapshot or a temporary" \
	'ls -A f | grep -v "\.lock$"; echo end' 'end'
testcmd "a command that prints nothing is a complete empty snapshot" \
	'tfk-snapshot f -- true | wc -c; ./lst f' '0\n0 0 AGE true'

# SIGTERM while COMMAND runs: we die of it, COMMAND gets it too.
(tfk-snapshot k -- sh -c 'echo run >>ran; tfk-cat a; while :; do sleep 0.1; done' \
	>k.out 2>k.err & echo $! >k.pid; wait $!; echo $? >k.rc) 2>/dev/null &
i=0
while [ "$(wc -c 2>/dev/null <k.out)" != 90 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM "$(cat k.pid)"
wait
testcmd "kill -TERM during a run: died of SIGTERM after passing the output on" \
	'cat k.rc; cmp k.out a && echo same' '143\nsame'
testcmd "... no complete snapshot, no temporary data file" \
	'ls k/*/meta.json 2>/dev/null | wc -l; ls -A k/* | grep tmp | wc -l' '0\n0'
testcmd "... listed as incomplete" './lst k' '0 0 AGE (incomplete)'
check "... the next run runs the command and stores" \
	sh -c 'n=$(wc -l <ran) && tfk-snapshot k -- sh -c "echo run >>ran; tfk-cat a" | cmp - a &&
	[ $(wc -l <ran) = $((n + 1)) ] && ls k/*/meta.json'

(tfk-snapshot k9 -- sh -c 'echo $$ >k9.cpid; tfk-cat a; exec sleep 30' \
	>k9.out 2>&1 & echo $! >k9.pid)
i=0
while [ "$(wc -c 2>/dev/null <k9.out)" != 90 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
kill -KILL "$(cat k9.pid)"
kill -KILL "$(cat k9.cpid)"
sleep 0.2
testcmd "kill -KILL: a temporary may be left, never a meta.json" \
	'ls k9/*/meta.json 2>/dev/null | wc -l; ls -A k9/*/ | grep -c "^\.data\.tfrecord\.tmp-"' '0\n1'
testcmd "... --gc removes the incomplete snapshot and its lock" \
	'tfk-snapshot -v k9 --gc 2>&1 | sed "s/[0-9a-f]\{64\}/FP/"; ls -A k9' \
	'tfk-snapshot: removed FP (incomplete)'

# Concurrency -----------------------------------------------------------------
# The command waits for $GO to exist: the test decides when it ends.
SLOW='echo run >>ran2; while [ ! -e "$GO" ]; do sleep 0.05; done; tfk-cat a'
GO=$T/go
export SLOW GO
wait_for() {	# wait up to 10 s for the shell condition $1
	i=0
	while ! sh -c "$1" >/dev/null 2>&1 && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
}
tfk-snapshot cc -- sh -c "$SLOW" >c1.out 2>c1.err &
p1=$!
wait_for 'ls -d cc/*/'		# p1 holds the lock and writes
tfk-snapshot -v cc -- sh -c "$SLOW" >c2.out 2>c2.err &
p2=$!
tfk-snapshot --no-wait cc -- sh -c "$SLOW" >c3.out 2>c3.err &
p3=$!
wait_for '[ "$(wc -l <ran2)" = 2 ]'	# p3's command started
testcmd "while a run writes: --list shows it being written, --gc leaves it" \
	'tfk-snapshot cc --gc; tfk-snapshot cc --list --json | "$PYTHON" -c "
import json, sys
for l in sys.stdin:
    d = json.loads(l); print(d[\"complete\"], d[\"locked\"], d[\"command\"])"' \
	'False True None'
touch go
wait $p1
r1=$?
wait $p2
r2=$?
wait $p3
r3=$?
testcmd "--no-wait ran the command itself, without the snapshot" \
	"echo $r3; cmp c3.out a && echo same" '0\nsame'
testcmd "two concurrent runs: both exit 0 with the same bytes" \
	"echo $r1 $r2; cmp c1.out a && cmp c2.out a && echo same" '0 0\nsame'
testcmd "... the command ran once for them (and once for --no-wait); the second replayed" \
	'wc -l <ran2; grep -c "replayed snapshot" c2.err' '2\n1'
testcmd "... one complete snapshot" \
	'tfk-snapshot cc --list --json | "$PYTHON" -c "
import json, sys
print([(d[\"complete\"], d[\"records\"]) for d in map(json.loads, sys.stdin)])"' \
	"[(True, 3)]"

# A reader that stops early: we end like any tool in a closed pipe.
testcmd "downstream closes: SIGPIPE, no snapshot" \
	'tfk-snapshot p -- sh -c "while cat m; do :; done" | head -c 100 | wc -c;
	 ls p/*/meta.json 2>/dev/null | wc -l' '100\n0'

# --list, --gc ----------------------------------------------------------------
for n in 1 2 3; do tfk-snapshot g -- tfk-cat --take $n m >/dev/null; done
testcmd "--list: newest first, sizes, records, commands" \
	'./lst g' \
	'9609 3 AGE tfk-cat --take 3 m\n6406 2 AGE tfk-cat --take 2 m\n3203 1 AGE tfk-cat --take 1 m'
testcmd "--list --json (Python's json)" \
	'tfk-snapshot g --list --json | "$PYTHON" -c "
import json, sys
for d in map(json.loads, sys.stdin):
    print(len(d[\"fingerprint\"]), d[\"complete\"], d[\"locked\"], d[\"records\"], d[\"age_seconds\"] < 60, d[\"command\"])"' \
	'64 True False 3 True tfk-cat --take 3 m\n64 True False 2 True tfk-cat --take 2 m\n64 True False 1 True tfk-cat --take 1 m'
check "--gc --max-age: a snapshot made 10 days ago goes" sh -c '
	f=$(tfk-snapshot --fingerprint g -- tfk-cat --take 2 m) &&
	"$PYTHON" -c "
import json, sys, time
p = sys.argv[1]; m = json.load(open(p)); m[\"created\"] = int(time.time()) - 10 * 86400
json.dump(m, open(p, \"w\"))" g/$f/meta.json &&
	tfk-snapshot g --gc --max-age 5 && [ ! -e g/$f ] && [ ! -e g/$f.lock ] &&
	[ $(tfk-snapshot g --list | wc -l) = 2 ]'
testcmd "--gc --keep 1: only the newest stays" \
	'tfk-snapshot g --gc --keep 1; ./lst g; ls g' \
	"9609 3 AGE tfk-cat --take 3 m\n$(cd "$T" && tfk-snapshot --fingerprint g -- tfk-cat --take 3 m | sed 's/.*/&\\n&.lock/')"
testcmd "... and it still replays" 'tfk-snapshot -v g -- tfk-cat --take 3 m 2>&1 >/dev/null | cut -c 1-31' \
	'tfk-snapshot: replayed snapshot'
testcmd "--list of a missing store: nothing" 'tfk-snapshot nowhere --list; echo $?' '0'
testerr "a corrupt snapshot (size differs from meta.json) is refused" \
	'for f in g/*/data.tfrecord; do echo x >>$f; done; tfk-snapshot g -- tfk-cat --take 3 m' 1 \
	'data.tfrecord: 9611 bytes, but meta.json says 9609; remove g/'

# Usage -----------------------------------------------------------------------
testerr "no DIR" 'tfk-snapshot' 2 'tfk-snapshot: missing DIR'
testerr "no COMMAND" 'tfk-snapshot c' 2 'tfk-snapshot: missing -- COMMAND [ARG...]'
testerr "--list takes no command" 'tfk-snapshot c --list -- true' 2 \
	'tfk-snapshot: --list takes no COMMAND'
testerr "--keep without --gc" 'tfk-snapshot c --keep 2 -- true' 2 \
	'tfk-snapshot: --keep and --max-age go with --gc'
testerr "--keep must be a count" 'tfk-snapshot c --gc --keep -1' 2 \
	"tfk-snapshot: --keep: expected a count, got '-1'"
testerr "options after -- belong to the command" 'tfk-snapshot c -- tfk-cat --bogus' 2 \
	"tfk-cat: unknown option '--bogus'"
testerr "a file where DIR should be" 'tfk-snapshot a -- true' 1 'tfk-snapshot: a: not a directory'

done_testing
