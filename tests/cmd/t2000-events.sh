#!/bin/sh
# tfk-events: the scalars of a TF1 Estimator run (the fixture's values,
# printed to read back exactly), --list's runs/tags/kinds/counts, the
# filters, CSV and JSON lines, the event files tfk-train --logdir
# writes (epoch_loss equal to tfk-train's own --json history), --follow
# on a growing file, the plugins' summaries (--images, --text, --hparams,
# --histograms), and corrupt files: truncated, a flipped data crc, a
# flipped length crc and a payload that is no Event, each reported with
# file, record and byte while the readable records are still printed
# and the exit status is 1.
. "$(dirname "$0")/lib.sh"

D=$FIX/events/tfx_estimator_chicago_taxi
EVAL=$(ls "$D"/eval_chicago-taxi-eval/events.out.tfevents.*)
export D EVAL

# The fixture -----------------------------------------------------------------
testcmd "loss at step 1: the README's 0.4280262589454651 as float32 %.9g" \
	'tfk-events --tag loss --step 1:1 "$D"' \
	"run\ttag\tstep\twall_time\tvalue\n.\tloss\t1\t1646034742.7582574\t$(printf %.9g 0.4280262589454651)"
testcmd "eval accuracy and auc at steps 999 and 1000, CSV with a header" \
	'tfk-events --csv --tag accuracy --tag auc "$D"' \
	"run,tag,step,wall_time,value
eval_chicago-taxi-eval,accuracy,999,1646034751.2902503,0.77700001
eval_chicago-taxi-eval,auc,999,1646034751.2902503,0.913966
eval_chicago-taxi-eval,accuracy,1000,1646034756.0605905,0.777350008
eval_chicago-taxi-eval,auc,1000,1646034756.0605905,0.912848234"
testcmd "... the printed values read back as the README's doubles of the float32s" \
	'tfk-events --csv --tag accuracy --tag auc "$D" | tail -n +2 | cut -d, -f5 |
	 $PYTHON -c "import struct,sys; print(\" \".join(repr(struct.unpack(\"f\", struct.pack(\"f\", float(l)))[0]) for l in sys.stdin))"' \
	"0.7770000100135803 0.9139660000801086 0.7773500084877014 0.9128482341766357"
testcmd "JSON lines; --run picks the eval run; a FILE's run is its directory" \
	'tfk-events --json --run "eval*" --tag accuracy --step 1000: "$D" && cd "$D/eval_chicago-taxi-eval" && tfk-events --json --tag auc --step :999 events.out.tfevents.*' \
	'{"run":"eval_chicago-taxi-eval","tag":"accuracy","step":1000,"wall_time":1646034756.0605905,"value":0.777350008}
{"run":".","tag":"auc","step":999,"wall_time":1646034751.2902503,"value":0.913966}'
testcmd "--list: kinds and counts of the train run's tags (scalar, histogram)" \
	'tfk-events --list --run . "$D" | grep -E "	(loss|global_step/sec|dnn/logits/activation)	"' \
	".\tdnn/logits/activation\thistogram\t10\t1:901\n.\tloss\tscalar\t10\t1:901\n.\tglobal_step/sec\tscalar\t9\t101:901"
testcmd "--list: 16 + 11 tags in 2 runs, the eval run's checkpoint_path a tensor" \
	'tfk-events --list "$D" >l && tail -n +2 l | wc -l && cut -f1 l | tail -n +2 | sort -u | tr "\n" " " && grep checkpoint_path l' \
	"27\n. eval_chicago-taxi-eval eval_chicago-taxi-eval\tcheckpoint_path\ttensor\t2\t999:1000"
testcmd "all 10 loss steps of the train run in order" \
	'tfk-events --tag loss --run . "$D" | tail -n +2 | cut -f3 | tr "\n" " "' \
	"1 101 201 301 401 501 601 701 801 901 "

# TF2 tf.summary (tests/data/events/mk-tf2.py): scalars are float32
# tensors of the "scalars" plugin, the metadata on a tag's first value only
TF2=$TESTS/data/events/tf2
export TF2
testcmd "TF2: tensor scalars as float32 %.9g (1/3, 1/4, 1/5)" \
	'tfk-events --csv --tag loss "$TF2" | cut -d, -f1,2,3,5' \
	"run,tag,step,value\n.,loss,0,0.333333343\n.,loss,1,0.25\n.,loss,2,0.200000003"
testcmd "TF2 --list: the histograms and text plugins' tensors by kind" \
	'tfk-events --list "$TF2" | cut -f2-5' \
	"tag\tkind\tcount\tsteps\nloss\tscalar\t3\t0:2\nlr\tscalar\t3\t0:2\nw\thistogram\t3\t0:2\nnote\ttext\t3\t0:2"
testcmd "TF2 --text: each step's string" \
	'tfk-events --text --csv "$TF2"' \
	"run,tag,step,text\n.,note,0,hi\n.,note,1,hi\n.,note,2,hi"
# tf.summary.histogram([0.5, 1.5, 2], step=2): buckets from the tensor,
# TensorBoard's compress_histogram percentiles
testcmd "TF2 --histograms: count, min, max, the median of step 2" \
	'tfk-events --histograms --step 2: "$TF2" | cut -f3-6,11' \
	"step\tcount\tmin\tmax\tp50\n2\t3\t0.5\t2\t1.5249999999999999"
testcmd "--histograms of the Estimator's logits: 10 steps of 40 values" \
	'tfk-events --histograms --tag dnn/logits/activation "$D" | tail -n +2 | cut -f4 | sort -u' "40"
# The plugins' summaries (tests/data/events/mk-plugins.py): images, text,
# hparams start and end, a float32 histogram tensor
PL=$TESTS/data/events/plugins
export PL
testcmd "--images: a batch of 2 and then the same tag without metadata" \
	'tfk-events --images "$PL"' \
	"run\ttag\tstep\timages\twidth\theight\tformat\tbytes\n.\timg\t1\t2\t7\t5\tpng\t16\n.\timg\t2\t1\t7\t5\tpng\t16"
testcmd "--text --json" 'tfk-events --text --json "$PL"' \
	'{"run":".","tag":"note","step":1,"text":"hello"}'
testcmd "--hparams --json: hparams (a bool as true), group, the end's status" \
	'tfk-events --hparams --json "$PL"' \
	'{"session":".","group":"g","hparams":{"bn":"true","lr":0.10000000000000001,"opt":"adam"},"metrics":{},"status":"success"}'
testcmd "--histograms of a [2, 3] float tensor: count 5, mean of midpoints 1.1" \
	'tfk-events --histograms --csv "$PL" | cut -d, -f4-7' \
	"count,min,max,mean\n5,0,2,1.1000000000000001"
testerr "--list with --histograms" 'tfk-events --list --histograms "$D"' 2 "exclude each other"

testcmd "--list --csv: runs, tags, kinds, counts, first and last steps" \
	'tfk-events --list --csv --run "eval*" --tag "a*" "$D"' \
	"run,tag,kind,count,first_step,last_step\neval_chicago-taxi-eval,accuracy,scalar,2,999,1000\neval_chicago-taxi-eval,accuracy_baseline,scalar,2,999,1000\neval_chicago-taxi-eval,auc,scalar,2,999,1000\neval_chicago-taxi-eval,auc_precision_recall,scalar,2,999,1000\neval_chicago-taxi-eval,average_loss,scalar,2,999,1000"

# Usage ------------------------------------------------------------------------
testcmd "no argument: standard input, run ." \
	'tfk-events --csv --tag auc <"$EVAL" | tail -n 1' \
	".,auc,1000,1646034756.0605905,0.912848234"
testerr "--csv with --json" 'tfk-events --csv --json "$D"' 2 "exclude each other"
testerr "--step 5:2" 'tfk-events --step 5:2 "$D"' 2 "an empty range"
testerr "--step x" 'tfk-events --step x "$D"' 2 "--step"
testerr "a directory without event files" 'mkdir -p empty && tfk-events empty' 1 "tfk-events: empty: no event files"
testerr "a missing file" 'tfk-events nosuch.tfevents' 1 "nosuch.tfevents"

# tfk-train --logdir ---------------------------------------------------------------
F=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $F/train-images-idx3-ubyte.gz \
	--labels $F/train-labels-idx1-ubyte.gz | tfk-cat --take 128 >"$T/tr.tfrecord"
cp "$(dirname "$0")/../../examples/mlp.spec.json" "$T/spec.json"
testcmd "tfk-train --logdir: epoch_loss per epoch equal to its --json history" \
	'tfk-train spec.json tr.tfrecord --val tr.tfrecord --out m -j1 -q --json --set fit.epochs=2 --logdir logs >h.json &&
	 tfk-events --csv --tag epoch_loss --run train logs | tail -n +2 | cut -d, -f1,2,3,5 >got &&
	 $PYTHON -c "
import json; h = json.load(open(\"h.json\"))[\"history\"]
for e in range(2):
    print(\"train,epoch_loss,%d,%.9g\" % (e, h[\"loss\"][e]))" | cmp - got && wc -l <got' \
	"2"
testcmd "... validation's epoch_accuracy is the history's val_accuracy" \
	'tfk-events --json --tag epoch_accuracy --run validation logs >got &&
	 $PYTHON -c "
import json; h = json.load(open(\"h.json\"))[\"history\"][\"val_accuracy\"]
g = [json.loads(l) for l in open(\"got\")]
print([x[\"step\"] for x in g], all(abs(x[\"value\"] - v) <= 1e-7 * abs(v) for x, v in zip(g, h)), len(g) == len(h))"' \
	"[0, 1] True True"
testcmd "--hparams: the --set session, its hparams and last metrics, as CSV" \
	'tfk-events --hparams --csv logs >hp.csv && head -1 hp.csv && cut -d, -f1,2 hp.csv | tail -1 &&
	 $PYTHON -c "
import csv, json; h = json.load(open(\"h.json\"))[\"history\"]
r = list(csv.DictReader(open(\"hp.csv\")))[0]
print(abs(float(r[\"train/epoch_loss\"]) - h[\"loss\"][-1]) <= 1e-7 * h[\"loss\"][-1],
      abs(float(r[\"validation/epoch_accuracy\"]) - h[\"val_accuracy\"][-1]) <= 1e-7)"' \
	"session,fit.epochs,train/epoch_accuracy,train/epoch_loss,validation/epoch_accuracy,validation/epoch_loss,status\n.,2\nTrue True"
testcmd "... --list: runs train and validation, batch and epoch scalars" \
	'tfk-events --list logs | cut -f1-3 | grep epoch_ | sort' \
	"train\tepoch_accuracy\tscalar\ntrain\tepoch_loss\tscalar\nvalidation\tepoch_accuracy\tscalar\nvalidation\tepoch_loss\tscalar"

# --follow -----------------------------------------------------------------------
testcmd "--follow: records appended later (a record split across writes) are read, SIGTERM ends it with 0" \
	'head -c 1244787 "$EVAL" >grow.tfevents &&
	 { tfk-events --follow --tag auc grow.tfevents >f.out & pid=$!; } &&
	 sleep 1.5 && tail -c +1244788 "$EVAL" | head -c 300 >>grow.tfevents && sleep 1.5 &&
	 tail -c +1245088 "$EVAL" >>grow.tfevents && sleep 2 && kill -TERM $pid && wait $pid && cut -f3,5 f.out' \
	"step\tvalue\n999\t0.913966\n1000\t0.912848234"
testerr "--follow takes one file" 'tfk-events --follow "$D"' 2 "--follow reads one event file"

# Corrupt files -----------------------------------------------------------------
# Records of the eval file: 3 (byte 1244787, step 999), 5 (1245195, step
# 1000), 6 (1245420, the last, 184 bytes).
SZ=$(wc -c <"$EVAL")
head -c $((SZ - 10)) "$EVAL" >"$T/trunc.tfevents"
cp "$EVAL" "$T/flip.tfevents" && chmod u+w "$T/flip.tfevents"
printf '\125' | dd of="$T/flip.tfevents" bs=1 seek=1244837 conv=notrunc 2>/dev/null
cp "$EVAL" "$T/hdr.tfevents" && chmod u+w "$T/hdr.tfevents"
printf '\125' | dd of="$T/hdr.tfevents" bs=1 seek=1244789 conv=notrunc 2>/dev/null
printf 'hello world\n' | tfk-text -q --lines -o "$T/ex" 2>/dev/null
cat "$T"/ex*.tfrecord "$EVAL" >"$T/wire.tfevents"

testerr "truncated: file, record and byte on stderr, exit 1" \
	'tfk-events trunc.tfevents' 1 \
	"tfk-events: trunc.tfevents: record 6 at byte 1245420: truncated"
testcmd "... the records before it are still printed" \
	'tfk-events --tag accuracy trunc.tfevents 2>/dev/null; echo rc=$?' \
	"run\ttag\tstep\twall_time\tvalue\n.\taccuracy\t999\t1646034751.2902503\t0.77700001\n.\taccuracy\t1000\t1646034756.0605905\t0.777350008\nrc=1"
testerr "a flipped data byte: data crc mismatch of record 3" \
	'tfk-events flip.tfevents' 1 \
	"tfk-events: flip.tfevents: record 3 at byte 1244787: data crc mismatch"
testcmd "... step 999 is lost, step 1000 after it still printed" \
	'tfk-events --tag accuracy flip.tfevents 2>/dev/null; echo rc=$?' \
	"run\ttag\tstep\twall_time\tvalue\n.\taccuracy\t1000\t1646034756.0605905\t0.777350008\nrc=1"
testerr "a flipped length byte: length crc mismatch, then a resync" \
	'tfk-events flip.tfevents hdr.tfevents' 1 \
	"tfk-events: hdr.tfevents: record 3 at byte 1244787: length crc mismatch"
testcmd "... the records after the resync are printed" \
	'tfk-events --tag auc hdr.tfevents 2>/dev/null | cut -f3,5' \
	"step\tvalue\n1000\t0.912848234"
testerr "a record that is no Event: a wire error named with its record" \
	'tfk-events wire.tfevents' 1 \
	"tfk-events: wire.tfevents: record 0 at byte 0: not a tensorflow.Event"
testcmd "... the Events after it are printed" \
	'tfk-events --csv --tag auc wire.tfevents 2>/dev/null | cut -d, -f3,5' \
	"step,value\n999,0.913966\n1000,0.912848234"

done_testing
