#!/bin/sh
# tfk-train on recurrent models: a text classifier Embedding -> LSTM ->
# Dense on tiny synthetic data (256 sequences of 8 tokens: class 0 drawn
# mostly from tokens 1..9, class 1 from 10..19, 30% noise tokens), where
# the loss must fall and the accuracy rise; the checkpoint holds the
# weights under Keras' names; tfk-eval and the exported SavedModel
# (run by tfk-model run) classify with it; LSTM with dropout, GRU (with
# go_backwards) and SimpleRNN train too; refusals name the JSON path. The numerics of the
# layers are checked against PyTorch in t-recurrent.
. "$(dirname "$0")/lib.sh"

$PYTHON -c '
import json, random
random.seed(5)
for n in range(256):
    y = n % 2
    t = [random.randint(10, 19) if y else random.randint(1, 9)
         for _ in range(8)]
    t = [random.randint(1, 19) if random.random() < 0.3 else v for v in t]
    print(json.dumps({"tokens": t, "label": [y]}))' >"$T/d.jsonl"
tfk-json "$T/d.jsonl" >"$T/tr.tfrecord"
cat >"$T/spec.json" <<'J'
{"model": {"class_name": "Sequential", "config": {"name": "text", "layers": [
  {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 8], "dtype": "int32", "name": "tokens"}},
  {"class_name": "Embedding", "config": {"name": "embedding", "input_dim": 20, "output_dim": 8, "input_length": 8}},
  {"class_name": "LSTM", "config": {"name": "lstm", "units": 8}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 2, "activation": "softmax"}}]}},
 "compile": {"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.01}}, "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
 "fit": {"epochs": 5, "batch_size": 32}}
J
# history: loss falls to a quarter, the last accuracy > 0.9
HIST='import json, sys
h = json.load(open(sys.argv[1]))["history"]
print(len(h["loss"]), h["loss"][-1] < h["loss"][0] / 4, h["accuracy"][-1] > 0.9)'
export HIST

testcmd "Embedding -> LSTM -> Dense: 5 epochs, the loss falls, accuracy > 0.9" \
	'tfk-train spec.json tr.tfrecord --out run -q --json >h.json && $PYTHON -c "$HIST" h.json' \
	"5 True True"
testcmd "the checkpoint holds the LSTM weights under Keras' names" \
	'$PYTHON $TESTS/py/bundle_check.py dump run/ckpt-5 | awk "NR > 2 && \$1 !~ /^6f7074/ { print \$1, \$3 }" |
	 while read k s; do printf "%s %s\n" "$($PYTHON -c "import sys; print(bytes.fromhex(sys.argv[1]).decode())" $k)" $s; done' \
	"dense/bias shape=2\ndense/kernel shape=8,2\nembedding/embeddings shape=20,8\nlstm/lstm_cell/bias shape=32\nlstm/lstm_cell/kernel shape=8,32\nlstm/lstm_cell/recurrent_kernel shape=8,32"
testcmd "tfk-eval of the trained model: accuracy > 0.9 on 256 examples" \
	'tfk-eval run tr.tfrecord --json | $PYTHON -c "
import json, sys; e = json.load(sys.stdin); print(e[\"accuracy\"] > 0.9, e[\"examples\"])"' \
	"True 256"
testcmd "the SavedModel runs: a class-0 and a class-1 sequence" \
	'tfk-model run --dir run --input_exprs "tokens=[[1,2,3,4,5,6,7,8],[11,12,13,14,15,16,17,18]]" --outdir o >/dev/null &&
	 $PYTHON -c "import numpy; print(numpy.load(\"o/dense.npy\").argmax(axis=1).tolist())"' \
	"[0, 1]"
testcmd "the SavedModel's graph is the unrolled cell in plain TF ops" \
	'tfk-model show --dir run --tag_set serve --list_ops | sed -n "s/.*the following ops: //p"' \
	"{'AddV2', 'AssignVariableOp', 'BiasAdd', 'Const', 'GatherV2', 'Identity', 'MatMul', 'MergeV2Checkpoints', 'Mul', 'NoOp', 'Pack', 'Placeholder', 'ReadVariableOp', 'Reshape', 'RestoreV2', 'SaveV2', 'ShardedFilename', 'Sigmoid', 'Softmax', 'SplitV', 'StringJoin', 'Tanh', 'Unpack', 'VarHandleOp'}"
testcmd "LSTM with dropout 0.3 trains; the exported graph has no random op" \
	'tfk-train spec.json tr.tfrecord --out drop -q --json --set "model.config.layers[2].config.dropout=0.3" >h.json &&
	 $PYTHON -c "$HIST" h.json && tfk-model show --dir drop --tag_set serve --list_ops | grep -o Random | wc -l' \
	"5 True True\n0"
testcmd "GRU with go_backwards trains" \
	'tfk-train spec.json tr.tfrecord --out gru -q --json --set "model.config.layers[2].class_name=GRU" \
		--set "model.config.layers[2].config.go_backwards=true" >h.json && $PYTHON -c "$HIST" h.json' \
	"5 True True"
testcmd "SimpleRNN with return_sequences and GlobalAveragePooling1D trains" \
	'$PYTHON -c "
import json; s = json.load(open(\"spec.json\")); ls = s[\"model\"][\"config\"][\"layers\"]
ls[2] = {\"class_name\": \"SimpleRNN\", \"config\": {\"name\": \"rnn\", \"units\": 8, \"return_sequences\": True}}
ls.insert(3, {\"class_name\": \"GlobalAveragePooling1D\", \"config\": {\"name\": \"pool\"}})
json.dump(s, open(\"rnn.json\", \"w\"))" && tfk-train rnn.json tr.tfrecord --out rnn -q --json >h.json && $PYTHON -c "$HIST" h.json' \
	"5 True True"

# Refusals ----------------------------------------------------------------------
testerr "an unknown number of timesteps" \
	'tfk-train spec.json tr.tfrecord --out e -q --set "model.config.layers[0].config.batch_input_shape=[null,null]"' 1 \
	"tfk-train: spec.json: model.config.layers[2]: LSTM needs a known number of timesteps and features, the input is [?, ?, 8] (give the InputLayer a fixed length)"
testerr "return_state" \
	'tfk-train spec.json tr.tfrecord --out e -q --set "model.config.layers[2].config.return_state=true"' 1 \
	"tfk-train: spec.json: model.config.layers[2].config.return_state: true is not supported (a layer here has one output)"
testerr "stateful" \
	'tfk-train spec.json tr.tfrecord --out e -q --set "model.config.layers[2].config.stateful=true"' 1 \
	"tfk-train: spec.json: model.config.layers[2].config.stateful: true is not supported"
testerr "recurrent_dropout" \
	'tfk-train spec.json tr.tfrecord --out e -q --set "model.config.layers[2].config.recurrent_dropout=0.25"' 1 \
	"tfk-train: spec.json: model.config.layers[2].config.recurrent_dropout: only 0 is supported (recurrent dropout is not implemented)"
testerr "masking stays refused" \
	'tfk-train spec.json tr.tfrecord --out e -q --set "model.config.layers[1].config.mask_zero=true"' 1 \
	"tfk-train: spec.json: model.config.layers[1].config.mask_zero: true is not supported"
check "no checkpoint directory is left by a refused spec" test ! -e e/checkpoint

done_testing
