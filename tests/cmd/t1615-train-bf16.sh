#!/bin/sh
# tfk-train with Keras' mixed_bfloat16 dtype policy: Dense's MatMul and
# Conv2D (and their gradient ops) round their operands to bfloat16 and
# sum in float32 (kernels/cpu/bf16gemm.c, bf16conv.c; the kernels
# against their _ref are tests/unit/t-bf16gemm.c, t-bf16conv.c),
# float32 master weights and optimizer.
# Here: the policy from model.dtype_policy (--set) and from Keras 3's
# per-layer DTypePolicy object train the same bytes; one epoch on 2000
# Fashion-MNIST images reaches a loss within 2% of float32's (measured
# 0.2%) while the weights differ from float32's (float32 itself repeats
# bit for bit, so the difference is bf16's), the scalar fallback
# (TFK_BF16_SCALAR=1) gives the AVX512-BF16 kernel's bytes, the
# exported SavedModel stays float32 at its signatures, and unknown
# policy names are refused with exit 1 naming the place.
. "$(dirname "$0")/lib.sh"

F=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $F/train-images-idx3-ubyte.gz \
	--labels $F/train-labels-idx1-ubyte.gz | tfk-cat --take 2000 >"$T/tr.tfrecord"
SPEC=$(cd "$(dirname "$0")/../.." && pwd)/examples/mlp.spec.json
export SPEC
# data file of a run's checkpoint
D=ckpt-1.data-00000-of-00001

cat >"$T/k3.json" <<'J'
{"model": {"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28], "name": "input_1"}},
  {"class_name": "Flatten", "config": {"name": "flatten"}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 128, "activation": "relu",
   "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "mixed_bfloat16"}}}},
  {"class_name": "Dense", "config": {"name": "dense_1", "units": 10, "activation": "softmax",
   "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "mixed_bfloat16"}}}}]}},
 "inputs": {"input_1": {"feature": "image", "scale": 0.00392156862745098}},
 "compile": {"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.001}},
   "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
 "fit": {"epochs": 1, "batch_size": 32}}
J
sed 's/"mixed_bfloat16"/"mixed_float16"/' "$T/k3.json" >"$T/k3bad.json"

T1='-q --json -j 1 --set fit.epochs=1'
export T1
testcmd "float32 twice: the same checkpoint bytes" \
	'tfk-train "$SPEC" tr.tfrecord --out f1 $T1 >f1.json &&
	 tfk-train "$SPEC" tr.tfrecord --out f2 $T1 >f2.json && cmp f1/'$D' f2/'$D' && echo same' \
	"same"
testcmd "mixed_bfloat16 (model.dtype_policy): finite loss within 2% of float32's, accuracy > 0.6" \
	'tfk-train "$SPEC" tr.tfrecord --out b1 $T1 --set model.dtype_policy=mixed_bfloat16 >b1.json &&
	 $PYTHON -c "
import json, math
f = json.load(open(\"f1.json\"))[\"history\"]; b = json.load(open(\"b1.json\"))[\"history\"]
lf, lb = f[\"loss\"][0], b[\"loss\"][0]
print(math.isfinite(lb), abs(lb - lf) / lf < 0.02, b[\"accuracy\"][0] > 0.6)"' \
	"True True True"
testcmd "mixed_bfloat16: the weights differ from float32's" \
	'cmp -s f1/'$D' b1/'$D' || echo differ' \
	"differ"
testcmd "model.dtype_policy=float32 is the default: float32's bytes" \
	'tfk-train "$SPEC" tr.tfrecord --out f3 $T1 --set model.dtype_policy=float32 >/dev/null &&
	 cmp f1/'$D' f3/'$D' && echo same' \
	"same"
testcmd "Keras 3 per-layer DTypePolicy mixed_bfloat16: the same bytes as model.dtype_policy" \
	'tfk-train k3.json tr.tfrecord --out k3 $T1 >/dev/null && cmp b1/'$D' k3/'$D' && echo same' \
	"same"
testcmd "TFK_BF16_SCALAR=1 (the float fallback): the same bytes, and on 2 threads" \
	'TFK_BF16_SCALAR=1 tfk-train k3.json tr.tfrecord --out k3s $T1 >/dev/null &&
	 tfk-train k3.json tr.tfrecord --out k3j -q -j 2 >/dev/null &&
	 cmp k3/'$D' k3s/'$D' && cmp k3/'$D' k3j/'$D' && echo same' \
	"same"
testcmd "the exported SavedModel is float32 at serving_default" \
	'$PYTHON $TESTS/py/savedmodel_check.py check b1 | grep "^in serving_default\|^out serving_default"' \
	"in serving_default input_1 input_1:0 float [-1,28,28]\nout serving_default dense_1 Identity:0 float [-1,10]"

# Conv2D in bfloat16 (kernels/cpu/bf16conv.c; its kernels against the _ref:
# tests/unit/t-bf16conv.c): a small CNN with an odd channel count, SAME
# and VALID, a stride and the 1-channel input, trained on 256 images.
cat >"$T/cnn.json" <<'J'
{"model": {"class_name": "Sequential", "config": {"name": "c", "layers": [
  {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 28, 28, 1], "name": "input_1"}},
  {"class_name": "Conv2D", "config": {"name": "conv2d", "filters": 5, "kernel_size": [3, 3], "activation": "relu"}},
  {"class_name": "Conv2D", "config": {"name": "conv2d_1", "filters": 8, "kernel_size": [3, 3], "strides": [2, 2], "padding": "same", "activation": "relu"}},
  {"class_name": "MaxPooling2D", "config": {"name": "max_pooling2d", "pool_size": [2, 2]}},
  {"class_name": "Flatten", "config": {"name": "flatten"}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 10, "activation": "softmax"}}]}},
 "inputs": {"input_1": {"feature": "image", "scale": 0.00392156862745098}},
 "compile": {"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.001}},
   "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
 "fit": {"epochs": 1, "batch_size": 32}}
J
tfk-cat --take 256 "$T/tr.tfrecord" >"$T/tr256.tfrecord"
sed 's/"kernel_size": \[3, 3\], "activation": "relu"/&, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "mixed_bfloat16"}}/' \
	"$T/cnn.json" >"$T/cnn1.json"
TC='-q --json -j 1 --set fit.epochs=1'
BC='--set model.dtype_policy=mixed_bfloat16'
export TC BC
testcmd "CNN, mixed_bfloat16: finite loss within 2% of float32's, weights differ" \
	'tfk-train cnn.json tr256.tfrecord --out cf $TC >cf.json &&
	 tfk-train cnn.json tr256.tfrecord --out cb $TC $BC >cb.json &&
	 { cmp -s cf/'$D' cb/'$D' || echo differ; } && $PYTHON -c "
import json, math
f = json.load(open(\"cf.json\"))[\"history\"]; b = json.load(open(\"cb.json\"))[\"history\"]
lf, lb = f[\"loss\"][0], b[\"loss\"][0]
print(math.isfinite(lb), abs(lb - lf) / lf < 0.02)"' \
	"differ\nTrue True"
testcmd "CNN: mixed_bfloat16 on the first Conv2D layer alone changes the weights" \
	'grep -c mixed_bfloat16 cnn1.json && tfk-train cnn1.json tr256.tfrecord --out c1 $TC >/dev/null &&
	 { cmp -s cf/'$D' c1/'$D' || echo differ; }' \
	"1\ndiffer"
testcmd "CNN, mixed_bfloat16: TFK_BF16_SCALAR=1 and 2 threads give the same bytes" \
	'TFK_BF16_SCALAR=1 tfk-train cnn.json tr256.tfrecord --out cbs $TC $BC >/dev/null &&
	 tfk-train cnn.json tr256.tfrecord --out cbj -q -j 2 --set fit.epochs=1 $BC >/dev/null &&
	 cmp cb/'$D' cbs/'$D' && cmp cb/'$D' cbj/'$D' && echo same' \
	"same"
testcmd "CNN, mixed_bfloat16: the export passes the SavedModel oracle with 2 float32 Conv2D ops" \
	'$PYTHON $TESTS/py/savedmodel_check.py check cb >chk.txt &&
	 grep -c "^node .* Conv2D$" chk.txt && grep "^out serving_default" chk.txt' \
	"2\nout serving_default dense Identity:0 float [-1,10]"

# Errors ---------------------------------------------------------------------
testerr "model.dtype_policy: an unknown name" \
	'tfk-train "$SPEC" tr.tfrecord --out e1 -q --set model.dtype_policy=mixed_float16' 1 \
	"model.dtype_policy: unknown dtype policy 'mixed_float16' (expected float32 or mixed_bfloat16)"
testerr "model.dtype_policy: not a string" \
	'tfk-train "$SPEC" tr.tfrecord --out e2 -q --set model.dtype_policy=16' 1 \
	"model.dtype_policy: unknown dtype policy (expected float32 or mixed_bfloat16)"
testerr "a layer's DTypePolicy: an unknown mixed policy, with the layer's path" \
	'tfk-train k3bad.json tr.tfrecord --out e3 -q' 1 \
	"k3bad.json: model.config.layers[2].config.dtype: unknown dtype policy 'mixed_float16'"
done_testing
