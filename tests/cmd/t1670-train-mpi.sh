#!/bin/sh
# tfk-train under mpirun (Debian's OpenMPI, loaded at run time), two
# ranks on this machine (--oversubscribe): MultiWorkerMirroredStrategy's
# semantics. 2 ranks with per-rank batch 20 track 1 rank with batch 40
# after 50 steps (weights within 1e-5; the sums differ only in float
# order: ~2e-7 measured), and report the same metrics (sums of counts);
# the same N and seed give bit-identical checkpoints, for any fusion
# bucket size; only rank 0 reports and writes; --resume continues with
# another N; a rank killed with SIGKILL ends the job within 30 s naming
# the rank, the last checkpoint intact, and --resume then ends with the
# weights of the uninterrupted run. The sums made in node-shared memory
# (all ranks on one node) give MPI_Allreduce's bits with two ranks and
# agree within 1e-5 with three. Bad set-ups are errors up front.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/mpi-lib.sh"
tfk-cat --take 2000 "$T/all.tfrecord" >"$T/tr.tfrecord"
tfk-cat --take 1000 "$T/tr.tfrecord" >"$T/a.tfrecord"
tfk-cat --skip 1000 "$T/tr.tfrecord" >"$T/b.tfrecord"
tfk-cat --skip 50000 "$T/all.tfrecord" >"$T/te.tfrecord"
SPEC=$(cd "$(dirname "$0")/../.." && pwd)/examples/mlp.spec.json
WDIFF="$PYTHON $T/wdiff.py $TESTS/py/bundle_check.py"
export MPI SPEC WDIFF
cat >"$T/wdiff.py" <<'P'
# wdiff.py BUNDLE_CHECK A B [--model]: the largest |a - b| over every
# variable and slot of checkpoints A and B (decoded by bundle_check.py);
# --model: the model's variables only, not the optimizer's slots.
import subprocess, sys
import numpy as np
def load(prefix):
    out = subprocess.run([sys.executable, sys.argv[1], "dump", prefix],
                         capture_output=True, text=True, check=True).stdout
    w = {}
    for line in out.splitlines()[2:]:
        t = line.split()
        k = bytes.fromhex(t[0]).decode()
        if "--model" not in sys.argv or not k.startswith("optimizer/"):
            w[k] = np.frombuffer(bytes.fromhex(t[-1]), np.float32)
    return w
a, b = load(sys.argv[2]), load(sys.argv[3])
assert sorted(a) == sorted(b), (sorted(a), sorted(b))
d = max(float(np.max(np.abs(a[k] - b[k]))) for k in a)
print(len(a), "close" if d < 1e-5 else "far: %g" % d)
P
cat >"$T/drop.json" <<'J'
{"model": {"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28], "name": "input_1"}},
  {"class_name": "Flatten", "config": {"name": "flatten"}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 32, "activation": "relu"}},
  {"class_name": "Dropout", "config": {"name": "dropout", "rate": 0.3}},
  {"class_name": "Dense", "config": {"name": "dense_1", "units": 10, "activation": "softmax"}}]}},
 "inputs": {"input_1": {"feature": "image", "scale": 0.00392156862745098}},
 "compile": {"optimizer": "adam", "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
 "fit": {"epochs": 2, "batch_size": 40}}
J
ONE="--set fit.batch_size=40 --set fit.shuffle=false --set fit.epochs=1 -j 1"
export ONE

testcmd "2 ranks x 20 against 1 rank x 40, 50 Adam steps: weights and slots within 1e-5, history within 1e-6, val accuracy equal" \
	'tfk-train "$SPEC" tr.tfrecord --val te.tfrecord --out one $ONE -q --json >h1.json &&
	 $MPI 2 tfk-train "$SPEC" tr.tfrecord --val te.tfrecord --out two $ONE -q --json >h2.json &&
	 $WDIFF one/ckpt-1 two/ckpt-1 && $PYTHON -c "
import json; a, b = json.load(open(\"h1.json\")), json.load(open(\"h2.json\"))
print(a[\"steps\"], b[\"steps\"], sorted(a[\"history\"]) == sorted(b[\"history\"]))
print(all(abs(a[\"history\"][k][0] - b[\"history\"][k][0]) < 1e-6 for k in a[\"history\"]))
print(a[\"history\"][\"val_accuracy\"] == b[\"history\"][\"val_accuracy\"])"' \
	"12 close\n50 50 True\nTrue\nTrue"
testcmd "only rank 0 reports and writes: one progress line per epoch, one JSON history" \
	'$MPI 2 tfk-train "$SPEC" tr.tfrecord --out quiet --set fit.epochs=2 --set fit.batch_size=40 -j 1 --json >h.json 2>log &&
	 grep -c "^Epoch [12]/2" log && wc -l <h.json && ls quiet | grep -c "^ckpt-.*index"' \
	"2\n1\n2"
testcmd "same N, seed and --threads 1, with Dropout and shuffling: bit-identical checkpoints; a 4 KiB fusion bucket gives the same bits" \
	'$MPI 2 tfk-train drop.json tr.tfrecord --out d1 -j 1 -q --seed 7 &&
	 $MPI 2 tfk-train drop.json tr.tfrecord --out d2 -j 1 -q --seed 7 &&
	 $MPI 2 tfk-train drop.json tr.tfrecord --out d3 -j 1 -q --seed 7 --fusion-threshold 4096 &&
	 cmp d1/ckpt-2.data-00000-of-00001 d2/ckpt-2.data-00000-of-00001 &&
	 cmp d1/ckpt-2.data-00000-of-00001 d3/ckpt-2.data-00000-of-00001 && echo same' \
	"same"
testcmd "node-shared sums (one node): the bits of MPI_Allreduce's with 2 ranks (TFK_MPI_SHM=0), with a 4 KiB bucket too; 3 ranks within 1e-5 of them" \
	'$MPI 2 -x TFK_MPI_SHM=0 tfk-train drop.json tr.tfrecord --out s0 -j 1 -q --seed 7 &&
	 $MPI 2 tfk-train drop.json tr.tfrecord --out s4k -j 1 -q --seed 7 --fusion-threshold 4096 &&
	 cmp s0/ckpt-2.data-00000-of-00001 d1/ckpt-2.data-00000-of-00001 &&
	 cmp s0/ckpt-2.data-00000-of-00001 s4k/ckpt-2.data-00000-of-00001 && echo same &&
	 $MPI 3 tfk-train "$SPEC" tr.tfrecord --out r3 --set fit.batch_size=30 --set fit.shuffle=false --set fit.epochs=1 -j 1 -q &&
	 $MPI 3 -x TFK_MPI_SHM=0 tfk-train "$SPEC" tr.tfrecord --out r3m --set fit.batch_size=30 --set fit.shuffle=false --set fit.epochs=1 -j 1 -q &&
	 $WDIFF r3/ckpt-1 r3m/ckpt-1' \
	"same\n12 close"
testcmd "--shard-files: a file per rank, the same steps as the records shard" \
	'$MPI 2 tfk-train "$SPEC" a.tfrecord b.tfrecord --shard-files --out files $ONE -q --json |
	 $PYTHON -c "import json, sys; print(json.load(sys.stdin)[\"steps\"])"' \
	"50"
testcmd "--resume with another N: 1 epoch on 2 ranks, then a second on 1 rank, tracks 2 epochs on 1 rank" \
	'tfk-train "$SPEC" tr.tfrecord --out u1 $ONE --set fit.epochs=2 -q &&
	 $MPI 2 tfk-train "$SPEC" tr.tfrecord --out u2 $ONE -q &&
	 tfk-train "$SPEC" tr.tfrecord --out u2 $ONE --set fit.epochs=2 --resume -q &&
	 $WDIFF u1/ckpt-2 u2/ckpt-2' \
	"12 close"
testcmd "outside mpirun, --shard 1/2 trains on every second record" \
	'tfk-train "$SPEC" tr.tfrecord --out half $ONE --shard 1/2 -q --json |
	 $PYTHON -c "import json, sys; print(json.load(sys.stdin)[\"steps\"])"' \
	"25"

# Callbacks: rank 0 decides --------------------------------------------------
CB='[{"class_name":"EarlyStopping","config":{"monitor":"loss","min_delta":10,"patience":1,"restore_best_weights":true}},{"class_name":"ReduceLROnPlateau","config":{"monitor":"loss","min_delta":10,"patience":0,"factor":0.5}}]'
export CB
testcmd "EarlyStopping (restore_best_weights) and ReduceLROnPlateau on 2 ranks: both stop after epoch 2, the rate halved after it (the history logs the epoch's rate, as Keras), epoch 1's weights restored" \
	'$MPI 2 tfk-train "$SPEC" tr.tfrecord --out cb --set fit.epochs=5 --set fit.batch_size=40 -j 1 -q --json \
		--set "fit.callbacks=$CB" >hcb.json &&
	 $PYTHON -c "
import json; h = json.load(open(\"hcb.json\")); s = json.load(open(\"cb/ckpt-2.json\"))
print(h[\"epoch\"], h[\"history\"][\"lr\"], s[\"learning_rate\"])" &&
	 $WDIFF cb/ckpt-1 cb/ckpt-2 --model' \
	"[0, 1] [0.0010000000474974513, 0.0010000000474974513] 0.0005000000237487257\n4 close"

# A rank killed mid-epoch ----------------------------------------------------
testcmd "SIGKILL of rank 1 mid-run: mpirun fails within 30 s naming rank 1; the last checkpoint is intact" \
	'$TESTS/cmd/kill-rank 1 k $MPI 2 tfk-train "$SPEC" all.tfrecord --out k --set fit.epochs=3 -j 1 -q --seed 3 && $PYTHON $TESTS/py/bundle_check.py dump "k/$(sed -n "s/^model_checkpoint_path: \"\(.*\)\"/\1/p" k/checkpoint)" >/dev/null && echo intact' \
	"rc nonzero: yes\nwithin 30 s: yes\nnames rank 1\nintact"
testcmd "--resume after the kill ends with the uninterrupted run's weights, bit for bit" \
	'$MPI 2 tfk-train "$SPEC" all.tfrecord --out k --set fit.epochs=3 -j 1 -q --seed 3 --resume &&
	 $MPI 2 tfk-train "$SPEC" all.tfrecord --out full --set fit.epochs=3 -j 1 -q --seed 3 &&
	 cmp k/ckpt-3.data-00000-of-00001 full/ckpt-3.data-00000-of-00001 && echo identical' \
	"identical"

# tfk-eval and tfk-predict -------------------------------------------------
tfk-cat --json --take 50 "$T/te.tfrecord" | $PYTHON -c "
import json, sys
for i, l in enumerate(sys.stdin):
    d = json.loads(l); d['note'] = ['line %d,\n\"quoted\"' % i]; print(json.dumps(d))" |
	tfk-json >"$T/note.tfrecord"
testcmd "tfk-eval on 3 ranks: the loss within 1e-6 and the same accuracy and count as on one (sums of counts)" \
	'tfk-eval one te.tfrecord --json >e1.json && $MPI 3 tfk-eval one te.tfrecord --json -b 7 >e3.json && $PYTHON -c "
import json; a, b = json.load(open(\"e1.json\")), json.load(open(\"e3.json\"))
print(abs(a[\"loss\"] - b[\"loss\"]) < 1e-6, a[\"accuracy\"] == b[\"accuracy\"], a[\"examples\"], b[\"examples\"])"' \
	"True True 10000 10000"
testcmd "tfk-predict --gather on 3 ranks writes the one-rank output byte for byte: records, JSON, CSV with quoted newlines" \
	'for f in "" --json --csv; do
		tfk-predict --dir one $f --keep label,note note.tfrecord -o p1$f &&
		$MPI 3 tfk-predict --dir one $f --keep label,note note.tfrecord --gather -o p3$f &&
		cmp p1$f p3$f && echo "same${f:- records}"; done' \
	"same records\nsame--json\nsame--csv"
testcmd "tfk-predict -o FILE on 2 ranks: shard FILE-RRRRR-of-00002 per rank, records 0, 2, ... and 1, 3, ..." \
	'$MPI 2 tfk-predict --dir one --csv --keep label note.tfrecord -o sh.csv &&
	 ls sh-* && tfk-predict --dir one --csv --keep label note.tfrecord | sed -n "1p;2p;4p" >even &&
	 head -3 sh-00000-of-00002.csv | cmp - even && wc -l <sh-00001-of-00002.csv' \
	"sh-00000-of-00002.csv\nsh-00001-of-00002.csv\n26"

# Errors ---------------------------------------------------------------------
testerr "a global batch that does not divide by the ranks" \
	'$MPI 2 tfk-train "$SPEC" tr.tfrecord --out e1 --set fit.batch_size=33 -q' 1 \
	"fit.batch_size 33 is the global batch, split across 2 ranks: it must divide by 2"
testerr "stdin under mpirun reaches rank 0 only" \
	'$MPI 2 tfk-train "$SPEC" --out e2 -q <tr.tfrecord' 1 \
	"stdin reaches rank 0 only: give the files"
testerr "more ranks than files with --shard-files" \
	'$MPI 2 tfk-train "$SPEC" tr.tfrecord --shard-files --out e3 -q' 1 \
	"rank 1 of 2: shard 1/2 of the training files is empty: fewer files than shards"
testerr "an MPI launch without OpenMPI's library" \
	'OMPI_COMM_WORLD_SIZE=2 TFK_MPI_LIB=/nonexistent/libmpi.so.40 tfk-train "$SPEC" tr.tfrecord --out e4 -q' 1 \
	"OMPI_COMM_WORLD_SIZE is set: an MPI launch: cannot load /nonexistent/libmpi.so.40"
testerr "tfk-predict under mpirun without -o or --gather" \
	'$MPI 2 tfk-predict --dir one note.tfrecord' 2 \
	"under mpirun: -o FILE (each rank writes its shard of it) or --gather"
testerr "--shard out of range" \
	'tfk-train "$SPEC" tr.tfrecord --out e5 --shard 2/2 -q' 2 \
	"--shard: expected I/N with 0 <= I < N"

done_testing
