#!/bin/sh
# tfk-plot: pictures checked by Pillow (tests/py/png_probe.py), not by
# our own decoder. Curves of event files written by an independent
# writer (tests/py/write_events.py): the PNG's size, each run's colour
# where the values put it (a falling loss highest at the left, a rising
# accuracy at the right), smoothing flattening a zigzag, runs of
# several logdirs overlaid, the text form; an image grid's cell count
# and class names from the tfk-idx sidecar; the confusion matrix of a
# perfect prediction dark on its diagonal, and of real tfk-predict output
# with the accuracy awk counts from its --csv; a histogram per step; atomic
# output and the errors.
. "$(dirname "$0")/lib.sh"

W="$PYTHON $TESTS/py/write_events.py"
P="$PYTHON $TESTS/py/png_probe.py"
export W P
cd "$T" || exit 1
mkdir -p logs/train logs/validation a/train b/train z
$W logs/train/events.out.tfevents.1.h epoch_loss=2,1.5,1,0.8,0.6,0.5 \
	epoch_accuracy=0.3,0.5,0.6,0.7,0.75,0.8
$W logs/validation/events.out.tfevents.1.h epoch_loss=1.8,1.4,1.1,0.9,0.8,0.75 \
	epoch_accuracy=0.35,0.5,0.55,0.6,0.62,0.63
$W a/train/events.out.tfevents.1.h epoch_loss=3,2,1
$W b/train/events.out.tfevents.1.h epoch_loss=1,2,3
$W z/events.out.tfevents.1.h loss=2,1,3,1,3,1,3,1,3,1,3,1,3
cd - >/dev/null || exit 1

# curves ----------------------------------------------------------------------
testcmd "curves: two tags, two 640x400 panels side by side" \
	'tfk-plot curves logs -o c.png && $P size c.png' "1280 400"
testcmd "falling loss (right panel): train and validation highest at the left" \
	'tfk-plot curves logs -o c.png && $P top c.png ff7043 640 1279 && $P top c.png 0077bb 640 1279' \
	"left\nleft"
testcmd "rising accuracy (left panel): train highest at the right" \
	'tfk-plot curves logs -o c.png && $P top c.png ff7043 0 639' "right"
testcmd "--tag and --size: one panel of the stated size" \
	'tfk-plot curves --tag epoch_loss --size 500x300 logs -o c.png && $P size c.png' "500 300"
testcmd "--smoothing 0.9 flattens a zigzag from 2 between 1 and 3 to 1.47..2.05" \
	'tfk-plot curves z -o raw.png && tfk-plot curves --smoothing 0.9 z -o smooth.png &&
	 r=$($P span raw.png ff7043 0 639 360) && s=$($P span smooth.png ff7043 0 639 360) &&
	 [ "$s" -gt 0 ] && [ "$s" -lt $((r * 2 / 5)) ] && echo flatter' "flatter"
testcmd "several logdirs overlaid: a/train falls, b/train rises, each its colour" \
	'tfk-plot curves a b -o ab.png && $P top ab.png ff7043 && $P top ab.png 0077bb' \
	"left\nright"
testcmd "--ascii: the title, the falling train curve topmost at the left, the legend" \
	'tfk-plot curves --ascii --tag epoch_loss logs >a.txt && head -1 a.txt &&
	 awk "index(\$0, \"|\") == 12 && index(substr(\$0, 13), \"*\") { print index(substr(\$0, 13), \"*\"); exit }" a.txt &&
	 grep -c "^ *[*+] \(train\|validation\)$" a.txt' \
	"epoch_loss\n1\n2"
testerr "--smoothing 1 is a usage error" 'tfk-plot curves --smoothing 1 logs' 2 "want 0 to below 1"
testerr "no scalars of the tag asked for" 'tfk-plot curves --tag nope logs -o x.png' 1 "no scalars of the tags"
testcmd "-o: a failed run leaves the old file as it was" \
	'echo old >x.png; tfk-plot curves --tag nope logs -o x.png 2>/dev/null; cat x.png' "old"
testerr "-o in a missing directory" 'tfk-plot curves logs -o no/such/c.png' 1 "no/such"
testerr "an unknown command" 'tfk-plot bars logs' 2 "curves"

# images ----------------------------------------------------------------------
F=/usr/share/datasets/fashion-mnist
export F
testcmd "images: 12 Fashion-MNIST images in a 4 x 3 grid; --cols 6: 6 x 2" \
	'tfk-idx -q --images $F/t10k-images-idx3-ubyte.gz --labels $F/t10k-labels-idx1-ubyte.gz --label-names "T-shirt/top,Trouser,Pullover,Dress,Coat,Sandal,Shirt,Sneaker,Bag,Ankle boot" -o fm &&
	 tfk-plot images -n 12 fm-00000-of-00001.tfrecord -o g.png && $P cells g.png &&
	 tfk-plot images -n 12 --cols 6 fm-00000-of-00001.tfrecord -o g.png && $P cells g.png' \
	"4 3\n6 2"
testcmd "... class names from the sidecar (the test set starts Ankle boot, Pullover)" \
	'tfk-plot images -n 2 --ascii fm-00000-of-00001.tfrecord | grep "^\["' \
	"[0] Ankle boot\n[1] Pullover"
testcmd "... each 28x28 image drawn at 3x: 4 cells of 100 x 110 pixels" \
	'tfk-plot images -n 4 fm-00000-of-00001.tfrecord -o g.png && $P size g.png' "200 220"
testerr "images: a feature that is not there" \
	'tfk-plot images --feature img fm-00000-of-00001.tfrecord -o g.png' 1 \
	'fm-00000-of-00001.tfrecord: record 0: no bytes feature "img"'

# confusion -------------------------------------------------------------------
testcmd "confusion: a perfect prediction is 4 dark cells down the diagonal" \
	'printf "label,pred\n0,0\n1,1\n2,2\n3,3\n1,1\n2,2\n" | tfk-csv -q >p.tfrecord &&
	 tfk-plot confusion p.tfrecord -o m.png && $P diagonal m.png 0d47a1' "4 diagonal"
testcmd "--ascii: counts, rows true, columns predicted; a 0.5 threshold on one float" \
	'printf "label,score\n0,0.2\n0,0.7\n1,0.9\n1,0.6\n1,0.1\n" | tfk-csv -q | tfk-plot confusion --ascii' \
	"true\\\\pred     0     1\n0         1     1\n1         1     2\n5 records, accuracy 0.6000"
cp "$(dirname "$0")/../../examples/mlp.spec.json" "$(dirname "$0")/../../examples/rescale.map.json" "$T/"
testcmd "tfk-predict's output: the argmax of its softmax, accuracy as awk counts it from --csv" \
	'tfk-cat --take 96 fm-00000-of-00001.tfrecord >r.tfrecord &&
	 tfk-train mlp.spec.json r.tfrecord --out m -q -j1 --set fit.epochs=2 >/dev/null &&
	 tfk-map rescale.map.json r.tfrecord | tfk-predict --dir m --keep label >pred.tfrecord &&
	 tfk-map rescale.map.json r.tfrecord | tfk-predict --dir m --keep label --csv |
	 awk -F, "NR > 1 { m = 1; for (i = 2; i <= 10; i++) if (\$i > \$m) m = i; n++; ok += (m - 1 == \$11) } END { printf \"%d records, accuracy %.4f\\n\", n, ok / n }" >want &&
	 tfk-plot confusion --ascii pred.tfrecord | tail -1 | cmp - want &&
	 tfk-plot confusion --ascii pred.tfrecord | awk "NR > 1 && NR < 12 { for (i = 2; i <= NF; i++) s += \$i } END { print s }"' \
	"96"
testerr "confusion without the label" \
	'printf "pred\n1\n" | tfk-csv -q | tfk-plot confusion --ascii' 1 'record 0: no label "label"'

# histogram -------------------------------------------------------------------
testcmd "histogram: the TF2 file's w, one line per step" \
	'tfk-plot histogram --ascii --bins 10 $TESTS/data/events/tf2 | cut -c1-12' \
	"w\n            \nstep 0      \nstep 1      \nstep 2      "
testcmd "... as PNG: one 640x400 panel, steps light to dark" \
	'tfk-plot histogram --tag w $TESTS/data/events/tf2 -o h.png && $P size h.png && $P count h.png bf360c | grep -qv "^0$" && echo dark' \
	"640 400\ndark"
testerr "histogram: no histograms of the tag" \
	'tfk-plot histogram --tag nope $TESTS/data/events/tf2 -o h.png' 1 "no histograms"

done_testing
