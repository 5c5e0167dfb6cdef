#!/bin/sh
# tfk-train with Keras' image augmentation layers inside the model
# (tests/tf/t-augment.py checks their values against Keras): a model
# holding all seven trains, and each bad config is refused before any
# data is read, naming the JSON path, exit 1.
. "$(dirname "$0")/lib.sh"

F=/usr/share/datasets/fashion-mnist
tfk-idx -q --images $F/train-images-idx3-ubyte.gz \
	--labels $F/train-labels-idx1-ubyte.gz | tfk-cat --take 64 >"$T/tr.tfrecord"

# spec NAME LAYER...: a CNN on [28, 28, 1] with the layer objects after
# the input (each a "class_name" and its config, as JSON)
spec() {
	_name=$1
	shift
	_ls=""
	for _l in "$@"; do
		_ls="$_ls $_l,"
	done
	cat >"$T/$_name" <<J
{"model": {"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_shape": [null, 28, 28, 1], "name": "image", "optional": false}},
  $_ls
  {"class_name": "Conv2D", "config": {"name": "conv", "filters": 4, "kernel_size": [3, 3], "activation": "relu"}},
  {"class_name": "Flatten", "config": {"name": "flatten"}},
  {"class_name": "Dense", "config": {"name": "dense", "units": 10, "activation": "softmax"}}]}},
 "inputs": {"image": {"feature": "image", "scale": 0.00392156862745098}},
 "compile": {"optimizer": "adam", "loss": "sparse_categorical_crossentropy"},
 "fit": {"epochs": 1, "batch_size": 16}}
J
}
L() {	# L CLASS CONFIG-KEYS: with the keys Keras always writes
	_d='"seed": null, "data_format": "channels_last"'
	case $2 in *seed*|*data_format*) _d='"trainable": true' ;; esac
	printf '{"class_name": "%s", "config": {"name": "l%s", %s%s}}' \
		"$1" "$(printf %s "$1$2" | cksum | cut -d" " -f1)" "$_d" \
		"${2:+, $2}"
}

spec all.json "$(L RandomFlip '"mode": "horizontal"')" \
	"$(L RandomRotation '"factor": [-0.1, 0.1], "fill_mode": "constant", "fill_value": 0.5, "interpolation": "nearest"')" \
	"$(L RandomZoom '"height_factor": 0.1, "width_factor": [-0.2, 0.1]')" \
	"$(L RandomTranslation '"height_factor": 0.1, "width_factor": [-0.1, 0.2], "fill_mode": "wrap"')" \
	"$(L RandomContrast '"factor": [0, 0.2], "value_range": [0, 1]')" \
	"$(L RandomBrightness '"factor": [-0.1, 0.1], "value_range": [0, 1]')" \
	"$(L RandomCrop '"height": 24, "width": 24')"
testcmd "seven augmentation layers train; the export takes the model's [28, 28, 1] input" \
	'tfk-train all.json tr.tfrecord --out o -q -j1 >/dev/null &&
	 tfk-model show --dir o --tag_set serve --signature_def serving_default | grep -c "(-1, 28, 28, 1)"' "1"

bad() {	# bad NAME LAYER-CLASS CONFIG-KEYS MESSAGE
	spec bad.json "$(L "$2" "$3")"
	testerr "$1" 'tfk-train bad.json tr.tfrecord --out b' 1 "$4"
}
bad "RandomRotation factor above 1" RandomRotation '"factor": 1.5' \
	"tfk-train: bad.json: model.config.layers[1].config.factor: expected a number or a list of 2 numbers in [-1, 1]"
bad "RandomZoom height_factor -1 (Keras: (-1, 1])" RandomZoom '"height_factor": [-1, 0]' \
	"model.config.layers[1].config.height_factor: expected a number or a list of 2 numbers in (-1, 1]"
bad "RandomTranslation without width_factor" RandomTranslation '"height_factor": 0.1' \
	"model.config.layers[1].config.width_factor: expected a number or a list of 2 numbers in [-1, 1]"
bad "RandomContrast factor list above its bounds" RandomContrast '"factor": [1.5, 2]' \
	"model.config.layers[1].config.factor: expected a number or a list of 2 numbers in [0, 1]"
bad "RandomContrast negative factor" RandomContrast '"factor": -0.2' \
	"model.config.layers[1].config.factor: expected a number or a list of 2 numbers in [0, 1]"
bad "RandomBrightness value_range of one number" RandomBrightness '"factor": 0.1, "value_range": [0]' \
	"model.config.layers[1].config.value_range: expected a list of 2 numbers"
bad "RandomFlip unknown mode" RandomFlip '"mode": "diagonal"' \
	"model.config.layers[1].config.mode: expected horizontal, vertical or horizontal_and_vertical"
bad "RandomRotation unknown fill_mode" RandomRotation '"factor": 0.1, "fill_mode": "mirror"' \
	"model.config.layers[1].config.fill_mode: expected reflect, wrap, constant or nearest"
bad "RandomZoom unknown interpolation" RandomZoom '"height_factor": 0.1, "interpolation": "bicubic"' \
	"model.config.layers[1].config.interpolation: expected nearest or bilinear"
bad "RandomCrop height 0" RandomCrop '"height": 0, "width": 4' \
	"model.config.layers[1].config.height: expected an integer in 1..1048576"
bad "data_format channels_first" RandomFlip '"data_format": "channels_first"' \
	"config.data_format"
bad "an unknown config key" RandomFlip '"rate": 0.5' \
	"model.config.layers[1].config.rate: unknown config key"
bad "a string seed" RandomContrast '"factor": 0.1, "seed": "x"' \
	"model.config.layers[1].config.seed: expected an integer or null"
bad "a Keras augmentation layer tfkit lacks names the ones it has" RandomHue '"factor": 0.1' \
	"model.config.layers[1].class_name: unknown layer 'RandomHue' (the image augmentation layers here: RandomFlip, RandomRotation, RandomZoom, RandomTranslation, RandomContrast, RandomBrightness, RandomCrop)"
# Resizing and CenterCrop (tests/tf/kzoo.py checks them against Keras)
spec resize.json "$(L Resizing '"height": 20, "width": 24, "interpolation": "bilinear", "crop_to_aspect_ratio": true')" \
	"$(L CenterCrop '"height": 16, "width": 18')"
testcmd "Resizing (cropped to the aspect) then CenterCrop train; the export takes [28, 28, 1]; the dense kernel (and its 2 Adam slots) is [14 * 16 * 4, 10]" \
	'tfk-train resize.json tr.tfrecord --out rs -q -j1 >/dev/null &&
	 tfk-model show --dir rs --tag_set serve --signature_def serving_default | grep -c "(-1, 28, 28, 1)" &&
	 $PYTHON $TESTS/py/bundle_check.py dump rs/ckpt-1 | grep -c " shape=896,10 "' "1\n3"
bad "Resizing nearest is refused" Resizing '"height": 8, "width": 8, "interpolation": "nearest"' \
	"model.config.layers[1].config.interpolation: only \"bilinear\" is supported"
bad "Resizing pad_to_aspect_ratio is refused" Resizing '"height": 8, "width": 8, "pad_to_aspect_ratio": true' \
	"model.config.layers[1].config.pad_to_aspect_ratio: only false is supported"
bad "CenterCrop larger than its input" CenterCrop '"height": 30, "width": 8' \
	"model.config.layers[1]: CenterCrop to 30x8 of a 28x28 input: a target larger than the input is not supported"
spec rank.json "$(L RandomFlip)"
sed 's/\[null, 28, 28, 1\]/[null, 28, 28]/' "$T/rank.json" >"$T/rank3.json"
testerr "an input without channels is not a batch of images" \
	'tfk-train rank3.json tr.tfrecord --out b' 1 \
	"model.config.layers[1]: RandomFlip takes a batch of images [batch, height, width, channels] of numbers, got rank 3"
sed 's/"name": "image", "optional": false}},/&\
  {"class_name": "Dense", "config": {"name": "d0", "units": 1}},/' "$T/rank.json" >"$T/after.json"
testerr "after a layer with weights: refused by name (no gradient)" \
	'tfk-train after.json tr.tfrecord --out b' 1 \
	"tfk-train: after.json: model.config.layers[2]: RandomFlip after a layer with weights is not supported yet (its random transform has no gradient); put it before them, as Keras' examples do"
done_testing
