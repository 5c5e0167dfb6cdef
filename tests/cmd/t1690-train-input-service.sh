#!/bin/sh
# tfk-train's input service under mpirun (--input-workers K: the last K
# ranks run the input pipeline, a shell command line of tfkit tools, and
# stream its records to the trainers), in both of tf.data service's
# processing modes. Each trainer logs (--input-log) the CRC-32C of every
# record it trained on, per epoch; tests/py/input_ids.py compares that
# multiset with the input files' records (computed by the crc32c
# package): distributed_epoch gives each record exactly once per epoch
# (2 trainers and 2 workers; 3 trainers and 1; a shuffling pipeline
# seeded by {seed}; splits that are files or record ranges),
# parallel_epochs K times. A worker killed mid-epoch
# ends the job within 30 s naming its rank, checkpoints intact; a
# failing pipeline is an error naming it and its split.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/mpi-lib.sh"
tfk-cat --take 500 "$T/all.tfrecord" >"$T/s0.tfrecord"
tfk-cat --skip 500 --take 700 "$T/all.tfrecord" >"$T/s1.tfrecord"
tfk-cat --skip 1200 --take 300 "$T/all.tfrecord" >"$T/s2.tfrecord"
tfk-cat --skip 1500 --take 800 "$T/all.tfrecord" >"$T/s3.tfrecord"
SPEC=$(cd "$(dirname "$0")/../.." && pwd)/examples/mlp.spec.json
IDS="$PYTHON $TESTS/py/input_ids.py"
S="s0.tfrecord s1.tfrecord s2.tfrecord s3.tfrecord"
RUN="tfk-train $SPEC $S --set fit.batch_size=60 -j 1 -q --json --input-log log"
export MPI IDS S RUN SPEC

testcmd "distributed_epoch, 2 trainers + 2 workers, a shuffling pipeline: every record once an epoch; 3 epochs, the loss falls" \
	'$MPI 4 $RUN --out d --set fit.epochs=3 --input-workers 2 \
		--input-pipeline "tfk-cat {} | tfk-shuffle --buffer 100 --seed {seed}" >h.json &&
	 $IDS log 3 1 $S && $PYTHON -c "
import json; h = json.load(open(\"h.json\"))[\"history\"][\"loss\"]; print(len(h), h[2] < h[0])"' \
	"0:same 1:same 2:same\n3 True"
testcmd "distributed_epoch, 3 trainers + 1 worker, the pipeline reading its split on stdin: every record once an epoch" \
	'rm -f log.*; $MPI 4 $RUN --out d3 --set fit.epochs=2 --input-workers 1 \
		--input-pipeline "tfk-shuffle --buffer 50 --seed {seed}" >/dev/null && $IDS log 2 1 $S' \
	"0:same 1:same"
testcmd "parallel_epochs, 1 trainer + 2 workers: every record twice an epoch" \
	'rm -f log.*; $MPI 3 $RUN --out p --set fit.epochs=2 --input-workers 2 --input-mode parallel_epochs >/dev/null &&
	 $IDS log 2 2 $S' \
	"0:same 1:same"

testcmd "record ranges (--input-split-records 90: 27 splits), 2 trainers + 2 workers, {} a range: every record once an epoch" \
	'rm -f log.*; $MPI 4 $RUN --out r --set fit.epochs=2 --input-workers 2 --input-split-records 90 \
		--input-pipeline "tfk-cat {} | tfk-shuffle --buffer 100 --seed {seed}" >/dev/null && $IDS log 2 1 $S' \
	"0:same 1:same"
testcmd "record ranges of 1000 (one a file, the tails short), the pipeline reading its range on stdin: every record once an epoch" \
	'rm -f log.*; $MPI 3 $RUN --out r2 --set fit.epochs=2 --input-workers 1 --input-split-records 1000 \
		--input-pipeline "tfk-shuffle --buffer 50 --seed {seed}" >/dev/null && $IDS log 2 1 $S' \
	"0:same 1:same"
tfk-cat --compression gzip "$T/s0.tfrecord" >"$T/z.tfrecord.gz"
testerr "record ranges of a compressed file: refused, naming it and the offset" \
	'$MPI 2 tfk-train "$SPEC" z.tfrecord.gz --input-workers 1 --input-split-records 10 --out e5 -q' 1 \
	"z.tfrecord.gz: offset 0: bad length CRC (record ranges need a plain TFRecord file)"
testerr "a failing pipeline over a range names the range" \
	'$MPI 2 tfk-train "$SPEC" s0.tfrecord --input-workers 1 --input-split-records 100 --out e6 -q --input-pipeline "tfk-cat {} && exit 3"' 1 \
	"(split s0.tfrecord bytes 0-"
testerr "--input-split-records without --input-workers" \
	'tfk-train "$SPEC" s0.tfrecord --input-split-records 10 --out e7 -q' 2 \
	"--input-mode, --input-log and --input-split-records need --input-workers"

testcmd "a worker killed mid-run: the job fails within 30 s naming its rank; the last checkpoint is intact" \
	'$TESTS/cmd/kill-rank 2 k $MPI 3 tfk-train "$SPEC" all.tfrecord --input-workers 1 --out k --set fit.epochs=3 -j 1 -q && $PYTHON $TESTS/py/bundle_check.py dump "k/$(sed -n "s/^model_checkpoint_path: \"\(.*\)\"/\1/p" k/checkpoint)" >/dev/null && echo intact' \
	"rc nonzero: yes\nwithin 30 s: yes\nnames rank 2\nintact"

testerr "a pipeline that fails: the error names it and its split" \
	'$MPI 2 tfk-train "$SPEC" s0.tfrecord --input-workers 1 --out e1 -q --input-pipeline "tfk-cat {} && exit 3"' 1 \
	"input worker (rank 1): input pipeline"
testerr "no rank left to train" \
	'$MPI 2 tfk-train "$SPEC" s0.tfrecord --input-workers 2 --out e2 -q' 2 \
	"--input-workers 2: the job has 2 ranks; at least one must train"
testerr "an unknown processing mode" \
	'$MPI 2 tfk-train "$SPEC" s0.tfrecord --input-workers 1 --input-mode sometimes --out e3 -q' 2 \
	"--input-mode: expected distributed_epoch or parallel_epochs, got 'sometimes'"
testerr "steps_per_epoch with the service: an epoch is a pass over the files" \
	'$MPI 2 tfk-train "$SPEC" s0.tfrecord --input-workers 1 --set fit.steps_per_epoch=5 --out e4 -q' 1 \
	"fit.steps_per_epoch: with --input-workers an epoch is a pass over the files"

done_testing
