#!/bin/sh
# Keras lookup layers inside a model, exported as TensorFlow exports a
# StaticHashTable over a vocabulary file, and run again from the
# SavedModel.
# Oracles: saved_model.pb decoded by tests/py/savedmodel_check.py
# (python3-protobuf, TensorFlow's field numbers and op registrations
# written there: HashTableV2, InitializeTableFromTextFileV2,
# LookupTableFindV2, AssetFileDef, CollectionDef); attrs read below by
# name; Keras' index layout for the expected offsets and defaults
# (index_lookup.py: OOV at 0 (1 after a mask), tokens after it); and a
# twin model without the lookup, trained with the same seed on ids that
# tfk-map's StringLookup (tested against Keras in t1400) gives: its
# predictions must equal the exported model's bit for bit.
. "$(dirname "$0")/lib.sh"

cat >"$T/d.jsonl" <<'J'
{"color":["red"],"size":[10],"label":[0]}
{"color":["green"],"size":[20],"label":[1]}
{"color":["blue"],"size":[30],"label":[0]}
{"color":["pink"],"size":[0],"label":[1]}
{"color":["red"],"size":[99],"label":[0]}
{"color":["green"],"size":[20],"label":[1]}
{"color":["[UNK]"],"size":[30],"label":[1]}
{"color":["blue"],"size":[10],"label":[0]}
J
tfk-json "$T/d.jsonl" -o "$T/d.tfrecord"

# model A: string input -> StringLookup -> Embedding -> Dense
tail3='{"class_name": "Embedding", "config": {"name": "emb", "input_dim": 5, "output_dim": 3}},
 {"class_name": "Flatten", "config": {"name": "flat"}},
 {"class_name": "Dense", "config": {"name": "out", "units": 2, "activation": "softmax"}}]}},
 "labels": {"feature": "label", "dtype": "int64"},
 "compile": {"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.05}},
  "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
 "fit": {"epochs": 1, "batch_size": 3}}'
SLOOK='{"class_name": "StringLookup", "config": {"name": "color_lookup",
  "vocabulary": ["red", "green", "blue"], "num_oov_indices": 1,
  "mask_token": null, "oov_token": "[UNK]", "output_mode": "int"}}'
cat >"$T/a.json" <<J
{"model": {"class_name": "Sequential", "config": {"name": "a", "layers": [
 {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 1], "dtype": "string", "name": "color"}},
 $SLOOK,
 $tail3
J
# model B: the same on ids (tfk-map's StringLookup of the same config)
cat >"$T/b.json" <<J
{"model": {"class_name": "Sequential", "config": {"name": "b", "layers": [
 {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 1], "dtype": "int64", "name": "color"}},
 $tail3
J
cat >"$T/ids.json" <<J
{"features": {"color": [$SLOOK]}}
J
# model I: int64 input -> IntegerLookup (mask 0, vocabulary file)
printf '30\n10\n20\n' >"$T/sizes.txt"
cat >"$T/i.json" <<J
{"model": {"class_name": "Sequential", "config": {"name": "i", "layers": [
 {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 1], "dtype": "int64", "name": "size"}},
 {"class_name": "IntegerLookup", "config": {"name": "size_lookup",
  "vocabulary": "sizes.txt", "num_oov_indices": 1, "mask_token": 0,
  "oov_token": -1, "output_mode": "int"}},
 $tail3
J

cat >"$T/iids.json" <<'J'
{"features": {"size": [{"class_name": "IntegerLookup", "config": {"vocabulary": [30, 10, 20], "mask_token": 0, "oov_token": -1}}]}}
J
sed 's/"color"/"size"/' "$T/b.json" >"$T/ib.json"
(cd "$T" && tfk-train -q -s 7 a.json d.tfrecord -o a &&
 tfk-map iids.json d.tfrecord -o iids.tfrecord &&
 tfk-train -q -s 3 ib.json iids.tfrecord -o ib &&
 tfk-map ids.json d.tfrecord -o ids.tfrecord &&
 tfk-train -q -s 7 b.json ids.tfrecord -o b &&
 tfk-train -q -s 3 i.json d.tfrecord -o i) 2>"$T/train.err" ||
	sed 's/^/# /' "$T/train.err"

testcmd "assets/: the learned tokens in index order, one per line" \
	"ls a/assets && cat a/assets/StringLookup_vocab.txt && cat i/assets/IntegerLookup_vocab.txt" \
	"StringLookup_vocab.txt\nred\ngreen\nblue\n30\n10\n20"
testcmd "saved_model.pb passes the strict TF op/attr/input-dtype check; assets and collections" \
	"$PYTHON $TESTS/py/savedmodel_check.py check a | grep -E '^(asset|collection|in serving_default|node StringLookup)'" \
	"in serving_default color color:0 string [-1,1]
asset StringLookup_vocab.txt StringLookup/vocabulary_path:0
collection saved_model_assets any_list StringLookup_vocab.txt=StringLookup/vocabulary_path:0
collection saved_model_main_op node_list NoOp
collection table_initializer node_list StringLookup/table_init
node StringLookup/hash_table HashTableV2
node StringLookup/vocabulary_path Const
node StringLookup/table_init InitializeTableFromTextFileV2
node StringLookup/default_value Const
node StringLookup LookupTableFindV2"

# the attrs, read by name from the decoded GraphDef
cat >"$T/attrs.py" <<'P'
import sys
sys.path.insert(0, sys.argv[1])
import savedmodel_check as sc
import numpy as np
sm = sc.SavedModel()
sm.ParseFromString(open(sys.argv[2] + "/saved_model.pb", "rb").read())
mg = sm.meta_graphs[0]
nodes = {n.name: n for n in mg.graph_def.node}
def show(n):
    a = n.attr
    vals = []
    for k in sorted(a):
        w = a[k].WhichOneof("value")
        v = getattr(a[k], w)
        if w == "tensor":
            v = (list(v.int64_val) or [s.decode() for s in v.string_val] or
                 np.frombuffer(v.tensor_content, "<i8").tolist())
        elif w == "s":
            v = v.decode()
        elif w == "list":
            v = list(v.i)
        vals.append("%s=%s" % (k, v))
    print(n.op, list(n.input), " ".join(vals))
for n in mg.graph_def.node:
    if n.name.startswith(tuple(sys.argv[3:]) or ("StringLookup",
                                                 "IntegerLookup")):
        show(n)
init = mg.signature_def["__saved_model_init_op"].outputs[
    "__saved_model_init_op"].name
print("init", init, list(nodes[init].input))
print("files", [(a.filename, a.tensor_info.name, a.tensor_info.dtype)
                for a in mg.asset_file_def])
P
testcmd "StringLookup: HashTableV2 string->int64, file init offset 1 (after the OOV slot), default 0 (OOV)" \
	"$PYTHON attrs.py $TESTS/py a" \
	"HashTableV2 [] container= key_dtype=7 shared_name=hash_table_StringLookup_vocab.txt_3_-2_-1 use_node_name_sharing=False value_dtype=9
Const [] dtype=7 value=['StringLookup_vocab.txt']
InitializeTableFromTextFileV2 ['StringLookup/hash_table', 'StringLookup/vocabulary_path'] delimiter=\t key_index=-2 offset=1 value_index=-1 vocab_size=3
Const [] dtype=9 value=[0]
LookupTableFindV2 ['StringLookup/hash_table', 'color_lookup/Reshape', 'StringLookup/default_value'] Tin=7 Tout=9
init NoOp ['^StringLookup/table_init']
files [('StringLookup_vocab.txt', 'StringLookup/vocabulary_path:0', 7)]"
testcmd "IntegerLookup with mask 0: offset 2, default 1, Equal + SelectV2 put the mask at 0" \
	"$PYTHON attrs.py $TESTS/py i | cut -c1-160" \
	"HashTableV2 [] container= key_dtype=9 shared_name=hash_table_IntegerLookup_vocab.txt_3_-2_-1 use_node_name_sharing=False value_dtype=9
Const [] dtype=7 value=['IntegerLookup_vocab.txt']
InitializeTableFromTextFileV2 ['IntegerLookup/hash_table', 'IntegerLookup/vocabulary_path'] delimiter=\t key_index=-2 offset=2 value_index=-1 vocab_size=3
Const [] dtype=9 value=[1]
LookupTableFindV2 ['IntegerLookup/hash_table', 'size_lookup/Reshape', 'IntegerLookup/default_value'] Tin=9 Tout=9
Const [] dtype=9 value=[0]
Equal ['size_lookup/Reshape', 'IntegerLookup/mask_token'] T=9 incompatible_shape_error=True
Const [] dtype=9 value=[0]
SelectV2 ['IntegerLookup/Equal', 'IntegerLookup/mask_value', 'IntegerLookup/LookupTableFindV2'] T=9
init NoOp ['^IntegerLookup/table_init']
files [('IntegerLookup_vocab.txt', 'IntegerLookup/vocabulary_path:0', 7)]"
testcmd "tfk-model show --ops: the table ops run" \
	"tfk-model show --dir a --ops | grep -E 'Table'" \
	"HashTableV2                    yes\nInitializeTableFromTextFileV2  yes\nLookupTableFindV2              yes"

# The exported model on raw strings = the twin on tfk-map's ids, bit
# for bit (same seed, same weights: the lookup is the only difference).
testcmd "twin models: the same weights (variables bit for bit)" \
	"cmp a/variables/variables.data-00000-of-00001 b/variables/variables.data-00000-of-00001 && echo same" \
	"same"
testcmd "tfk-predict on raw strings (SavedModel tables) = the twin on ids, bit for bit" \
	"tfk-predict --dir a --json d.tfrecord >pa.jsonl && tfk-predict --dir b --json ids.tfrecord >pb.jsonl && cmp pa.jsonl pb.jsonl && wc -l <pa.jsonl" \
	"8"
testcmd "tfk-eval of the in-memory model: the twin's loss and accuracy exactly" \
	"tfk-eval --json a d.tfrecord >ea.json && tfk-eval --json b ids.tfrecord >eb.json && cmp ea.json eb.json && echo same" \
	"same"
testcmd "tfk-predict's accuracy (numpy argmax) equals tfk-eval's" \
	"tfk-predict --dir a --keep label --csv d.tfrecord -o p.csv && $PYTHON -c \"
import csv, json, numpy as np
rows = list(csv.reader(open('p.csv')))
b = np.array(rows[1:], dtype=np.float64)
acc = np.float32((b[:, :2].argmax(1) == b[:, 2]).sum() / len(b))
print(rows[0], acc == np.float32(json.load(open('ea.json'))['accuracy']))\"" \
	"['out_0', 'out_1', 'label'] True"
testcmd "streaming from stdin (feed rows shifted, string bytes compacted): same weights as the twin streaming ids" \
	"cat d.tfrecord d.tfrecord d.tfrecord | tfk-train -q -s 7 a.json --set fit.steps_per_epoch=3 --set fit.epochs=2 -o as - &&
	 cat ids.tfrecord ids.tfrecord ids.tfrecord | tfk-train -q -s 7 b.json --set fit.steps_per_epoch=3 --set fit.epochs=2 -o bs - &&
	 cmp as/variables/variables.data-00000-of-00001 bs/variables/variables.data-00000-of-00001 && echo same" \
	"same"
testcmd "tfk-model run --input_exprs strings = tfk-predict rows (OOV, '[UNK]' and known tokens)" \
	"tfk-model run --dir a --input_exprs 'color=[[\"pink\"],[\"[UNK]\"],[\"blue\"]]' --outdir o >/dev/null && $PYTHON -c \"
import json, numpy as np
y = np.load('o/out.npy')
p = [json.loads(l)['out'] for l in open('pa.jsonl')]
print(y.dtype, y.shape, np.array_equal(y, np.float32([p[3], p[6], p[2]])))\"" \
	"float32 (3, 2) True"
testcmd "IntegerLookup (mask 0, file vocabulary): tfk-map's ids for sizes 10 20 30 0 99" \
	"tfk-map iids.json d.tfrecord | tfk-cat --json | $PYTHON -c \"
import sys, json
print([json.loads(l)['size'][0] for l in sys.stdin])\"" \
	"[3, 4, 2, 0, 1, 4, 2, 3]"
testcmd "IntegerLookup model: SavedModel (mask, OOV, known ids) = its twin on those ids, bit for bit" \
	"tfk-predict --dir i --json d.tfrecord >pi.jsonl && tfk-predict --dir ib --json iids.tfrecord >pib.jsonl && cmp pi.jsonl pib.jsonl && wc -l <pi.jsonl" \
	"8"

# Step 2 layers: Hashing, Discretization, the dense modes, CategoryEncoding.
# Each model A is trained on raw features; its twin on what tfk-map's
# layer of the same config gives (tested against Keras in t1400), with
# the same seed: the SavedModel's predictions must equal the twin's.
cat >"$T/d2.jsonl" <<'J'
{"color":["red"],"size":[10],"w":[-1.5],"pair":[0,3],"label":[0]}
{"color":["green"],"size":[20],"w":[15.0],"pair":[1,1],"label":[1]}
{"color":["blue"],"size":[30],"w":[20.5],"pair":[4,2],"label":[0]}
{"color":["pink"],"size":[0],"w":[25.0],"pair":[3,0],"label":[1]}
{"color":["red"],"size":[99],"w":[99.0],"pair":[2,2],"label":[0]}
{"color":["[UNK]"],"size":[7],"w":[0.0],"pair":[0,0],"label":[1]}
J
tfk-json "$T/d2.jsonl" -o "$T/d2.tfrecord"
emb='{"class_name": "Embedding", "config": {"name": "emb", "input_dim": 6, "output_dim": 3}},
 {"class_name": "Flatten", "config": {"name": "flat"}},'
dense='{"class_name": "Dense", "config": {"name": "out", "units": 2, "activation": "softmax"}}]}},
 "labels": {"feature": "label", "dtype": "int64"},
 "compile": {"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.05}},
  "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
 "fit": {"epochs": 1, "batch_size": 4}}'
# twin NAME FEATURE DTYPE DIM LAYER TWIN_DTYPE TWIN_DIM MIDDLE
twin() {
	cat >"$T/$1.json" <<J
{"model": {"class_name": "Sequential", "config": {"name": "m", "layers": [
 {"class_name": "InputLayer", "config": {"batch_input_shape": [null, $4], "dtype": "$3", "name": "$2"}},
 $5, $8 $dense
J
	cat >"$T/$1-t.json" <<J
{"model": {"class_name": "Sequential", "config": {"name": "m", "layers": [
 {"class_name": "InputLayer", "config": {"batch_input_shape": [null, $7], "dtype": "$6", "name": "$2"}},
 $8 $dense
J
	echo "{\"features\": {\"$2\": [$5]}}" >"$T/$1-map.json"
	(cd "$T" && tfk-train -q -s 5 $1.json d2.tfrecord -o $1 &&
	 tfk-map $1-map.json d2.tfrecord -o $1-ids.tfrecord &&
	 tfk-train -q -s 5 $1-t.json $1-ids.tfrecord -o $1-t &&
	 tfk-predict --dir $1 --json d2.tfrecord -o $1.jsonl &&
	 tfk-predict --dir $1-t --json $1-ids.tfrecord -o $1-t.jsonl) \
		2>"$T/$1.err" || sed 's/^/# /' "$T/$1.err"
}
twin hs color string 1 '{"class_name": "Hashing", "config": {"name": "hs", "num_bins": 4, "mask_value": "red"}}' int64 1 "$emb"
twin hi size int64 1 '{"class_name": "Hashing", "config": {"name": "hi", "num_bins": 6, "mask_value": 0, "salt": [7, 9]}}' int64 1 "$emb"
twin dz w float32 1 '{"class_name": "Discretization", "config": {"name": "dz", "bin_boundaries": [15.0, 25.0]}}' int64 1 "$emb"
twin oh color string 1 '{"class_name": "StringLookup", "config": {"name": "oh", "vocabulary": ["red", "green", "blue"], "output_mode": "one_hot"}}' float32 4 ""
twin ce pair int64 2 '{"class_name": "CategoryEncoding", "config": {"name": "ce", "num_tokens": 5, "output_mode": "count"}}' float32 5 ""
twin k3 color string 1 '{"class_name": "StringLookup", "config": {"name": "k3", "vocabulary": ["red", "green"], "num_oov_indices": 3, "mask_token": "[UNK]", "oov_token": "?"}}' int64 1 "$emb"
twin ik size int64 1 '{"class_name": "IntegerLookup", "config": {"name": "ik", "vocabulary": [10, 20], "num_oov_indices": 3, "mask_token": 0}}' int64 1 "$emb"
for m in hs hi dz oh ce k3 ik; do
	testcmd "$m: SavedModel predictions = the twin on tfk-map's output, bit for bit" \
		"cmp $m.jsonl $m-t.jsonl && wc -l <$m.jsonl" "6"
done
testcmd "Hashing: TF's hashing ops; mask by Equal/SelectV2, ints through AsString, salt as the strong key" \
	"for m in hs hi; do $PYTHON $TESTS/py/savedmodel_check.py check \$m | grep '^node Hashing' | tr '\n' ' '; echo; done" \
	"node Hashing/mask_value Const node Hashing/Equal Equal node Hashing/hash StringToHashBucketFast node Hashing/ones Const node Hashing/add AddV2 node Hashing/zeros Const node Hashing SelectV2 \nnode Hashing/mask_value Const node Hashing/Equal Equal node Hashing/AsString AsString node Hashing/hash StringToHashBucketStrong node Hashing/ones Const node Hashing/add AddV2 node Hashing/zeros Const node Hashing SelectV2 "
testcmd "Hashing attrs: num_buckets = num_bins - 1 with a mask, key = the salt" \
	"$PYTHON attrs.py $TESTS/py hi Hashing | grep -E '^(StringToHash|AsString|Const)'" \
	"Const [] dtype=9 value=[0]
AsString ['hi/Reshape'] T=9
StringToHashBucketStrong ['Hashing/AsString'] key=[7, 9] num_buckets=5
Const [] dtype=9 value=[1]
Const [] dtype=9 value=[0]"
testcmd "StringLookup with 3 OOV buckets and a mask: Keras' bucket and mask selects after the find" \
	"$PYTHON $TESTS/py/savedmodel_check.py check k3 | grep '^node StringLookup' | cut -d' ' -f2- | tr '\\n' ' '" \
	"StringLookup/hash_table HashTableV2 StringLookup/vocabulary_path Const StringLookup/table_init InitializeTableFromTextFileV2 StringLookup/default_value Const StringLookup/LookupTableFindV2 LookupTableFindV2 StringLookup/oov_bucket StringToHashBucketFast StringLookup/oov_start Const StringLookup/oov_index AddV2 StringLookup/is_oov Equal StringLookup/oov SelectV2 StringLookup/mask_token Const StringLookup/Equal Equal StringLookup/mask_value Const StringLookup SelectV2 "
testcmd "IntegerLookup with 3 OOV buckets: FloorMod(keys, 3) + oov_start" \
	"$PYTHON $TESTS/py/savedmodel_check.py check ik | grep -E '^node IntegerLookup/(num_oov|oov_bucket|oov_index)' | cut -d' ' -f3 | tr '\\n' ' '" \
	"Const FloorMod AddV2 "
testcmd "Discretization: Bucketize + Cast; one_hot and CategoryEncoding: DenseBincount" \
	"for m in dz oh ce; do $PYTHON $TESTS/py/savedmodel_check.py check \$m | grep -E '^node [^ ]+ (Bucketize|Cast|DenseBincount|LookupTableFindV2)$' | cut -d' ' -f3 | tr '\n' ' '; echo; done" \
	"Bucketize Cast \nLookupTableFindV2 DenseBincount \nDenseBincount "

# TextVectorization (lower_and_strip_punctuation, whitespace, int, L=4):
# StringLower, StaticRegexReplace, StringSplitV2 ... RaggedTensorToTensor
# in the SavedModel; the twin is trained on tfk-map's ids.
printf '%s\n' '{"text":["The cat sat."],"label":[0]}' \
	'{"text":["A DOG!  the dog, the cat sat"],"label":[1]}' \
	'{"text":[""],"label":[0]}' '{"text":["  cat\tdog\n"],"label":[1]}' |
	tfk-json -o "$T/t.tfrecord"
TV='{"class_name": "TextVectorization", "config": {"name": "tv", "vocabulary": ["the", "cat", "sat", "dog"], "output_sequence_length": 4}}'
cat >"$T/tv.json" <<J
{"model": {"class_name": "Sequential", "config": {"name": "m", "layers": [
 {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 1], "dtype": "string", "name": "text"}},
 $TV, $emb $dense
J
cat >"$T/tvt.json" <<J
{"model": {"class_name": "Sequential", "config": {"name": "m", "layers": [
 {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "int64", "name": "text"}},
 $emb $dense
J
echo "{\"features\": {\"text\": [$TV]}}" >"$T/tvmap.json"
(cd "$T" && tfk-train -q -s 5 tv.json t.tfrecord -o tv &&
 tfk-map tvmap.json t.tfrecord -o tvids.tfrecord &&
 tfk-train -q -s 5 tvt.json tvids.tfrecord -o tvt) 2>"$T/tv.err" ||
	sed 's/^/# /' "$T/tv.err"
testcmd "TextVectorization: tfk-map's ids (Keras-tested in t1400) for the four texts" \
	"tfk-cat --json tvids.tfrecord | tr -d '\n'" \
	'{"label":[0],"text":[2,3,4,0]}{"label":[1],"text":[1,5,2,5]}{"label":[0],"text":[0,0,0,0]}{"label":[1],"text":[3,5,0,0]}'
testcmd "TextVectorization: SavedModel predictions on raw text = the twin on ids, bit for bit" \
	"tfk-predict --dir tv --json t.tfrecord >tv.jsonl && tfk-predict --dir tvt --json tvids.tfrecord >tvt.jsonl && cmp tv.jsonl tvt.jsonl && wc -l <tv.jsonl" \
	"4"
testcmd "TextVectorization export: TF's string and ragged ops, strictly checked; vocabulary file" \
	"$PYTHON $TESTS/py/savedmodel_check.py check tv | grep -E '^node tv/(String|Static|TextVectorization( |/(StringSplitV2|value_rowids|nrows|LookupTableFindV2) ))' | cut -d' ' -f3 | tr '\n' ' ' && cat tv/assets/tv_TextVectorization_vocab.txt | tr '\n' ' '" \
	"StringLower StaticRegexReplace StringSplitV2 StridedSlice StridedSlice LookupTableFindV2 RaggedTensorToTensor the cat sat dog "
cat >"$T/tvattrs.py" <<'P'
import sys
sys.path.insert(0, sys.argv[1])
import savedmodel_check as sc
# keras/layers/preprocessing/text_vectorization.py
DEFAULT_STRIP_REGEX = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'
sm = sc.SavedModel()
sm.ParseFromString(open("tv/saved_model.pb", "rb").read())
nd = {n.name: n for n in sm.meta_graphs[0].graph_def.node}
r = nd["tv/StaticRegexReplace"].attr
print(r["pattern"].s.decode() == DEFAULT_STRIP_REGEX, repr(r["rewrite"].s),
      r["replace_global"].b, nd["tv/StaticRegexReplace"].input[0])
print(nd["tv/StringLower"].attr["encoding"].s == b"")
print(list(nd["tv/TextVectorization/sep"].attr["value"].tensor.string_val),
      nd["tv/TextVectorization/StringSplitV2"].attr["maxsplit"].i)
i = nd["tv/TextVectorization/table_init"].attr
print(i["key_index"].i, i["value_index"].i, i["vocab_size"].i, i["offset"].i)
import numpy as np
print(np.frombuffer(nd["tv/TextVectorization/shape"].attr["value"].tensor
                    .tensor_content, "<i8").tolist())
n = nd["tv/TextVectorization"]
print(n.op, list(n.input), [s.decode() for s in
                            n.attr["row_partition_types"].list.s])
P
testcmd "TextVectorization attrs: Keras' strip regex, whitespace split, offset 2 after '' and [UNK], [-1, 4] padding" \
	"$PYTHON tvattrs.py $TESTS/py" \
	"True b'' True tv/StringLower
True
[b''] -1
-2 -1 4 2
[-1, 4]
RaggedTensorToTensor ['tv/TextVectorization/shape', 'tv/TextVectorization/SelectV2', 'tv/TextVectorization/pad', 'tv/TextVectorization/nrows', 'tv/TextVectorization/value_rowids'] ['FIRST_DIM_SIZE', 'VALUE_ROWIDS']"
testcmd "tfk-model run on text: punctuation, case, OOV and padding" \
	"tfk-model run --dir tv --input_exprs 'text=[[\"THE cat!\"],[\"zebra the\"]]' --outdir o2 >/dev/null && tfk-model run --dir tvt --input_exprs 'text=[[2,3,0,0],[1,2,0,0]]' --outdir o3 >/dev/null && cmp o2/out.npy o3/out.npy && echo same" \
	"same"

# Errors --------------------------------------------------------------------
cp -r "$T/a" "$T/nofile"
rm "$T/nofile/assets/StringLookup_vocab.txt"
testerr "a missing asset file: exit 1 naming it" \
	"tfk-model run --dir nofile --input_exprs 'color=[[\"red\"]]'" \
	1 "nofile/assets/StringLookup_vocab.txt: No such file or directory"
cp -r "$T/a" "$T/short"
printf 'red\ngreen\n' >"$T/short/assets/StringLookup_vocab.txt"
testerr "an asset file shorter than vocab_size: exit 1" \
	"tfk-predict --dir short d.tfrecord" \
	1 "invalid vocab_size: expected 3 lines but got 2"
printf 'red\n\nblue\n' >"$T/short/assets/StringLookup_vocab.txt"
testerr "an empty line in the asset file (TF: invalid content): exit 1" \
	"tfk-model run --dir short --input_exprs 'color=[[\"red\"]]'" \
	1 "StringLookup_vocab.txt: line 2 is empty"
sed 's/"sizes.txt"/"nosuch.txt"/' "$T/i.json" >"$T/i2.json"
testerr "a vocabulary file that does not exist at build time names it" \
	"tfk-train -q i2.json d.tfrecord -o i2" \
	1 "layers[1].config.vocabulary: cannot read vocabulary file nosuch.txt"
sed 's/"output_mode": "int"/"output_mode": "tf_idf"/' "$T/a.json" >"$T/a2.json"
testerr "tf_idf inside a model is refused by name" \
	"tfk-train -q a2.json d.tfrecord -o a2" \
	1 "output_mode tf_idf of StringLookup inside a model is not supported yet"
sed 's/"output_mode": "int"/"output_mode": "multi_hot"/; s/"mask_token": null/"mask_token": ""/' "$T/a.json" >"$T/a5.json"
testerr "a lookup's mask token in a dense mode is refused" \
	"tfk-train -q a5.json d.tfrecord -o a5" \
	1 "config.mask_token: a mask token with a dense output_mode inside a model is not supported yet"
sed 's/"vocabulary": \["the", "cat", "sat", "dog"\], /&"ngrams": 2, /' "$T/tv.json" >"$T/tv2.json"
testerr "TextVectorization with ngrams inside a model: refused, naming the key" \
	"tfk-train -q tv2.json t.tfrecord -o tv2" \
	1 "layers[1].config.ngrams: not supported inside a model yet; apply the layer with tfk-map"
sed 's/"output_sequence_length": 4/"output_mode": "multi_hot"/' "$T/tv.json" >"$T/tv3.json"
testerr "TextVectorization in multi_hot inside a model: refused" \
	"tfk-train -q tv3.json t.tfrecord -o tv3" \
	1 "config.output_mode: only int inside a model yet"
sed 's/"output_sequence_length": 4/"split": null, "output_sequence_length": 4/' "$T/tv.json" >"$T/tv4.json"
testerr "TextVectorization without a whitespace split inside a model: refused" \
	"tfk-train -q tv4.json t.tfrecord -o tv4" \
	1 "config.split: only \"whitespace\" inside a model"
sed 's/"labels":/"inputs": {"color": {"dtype": "float32"}}, "labels":/' "$T/a.json" >"$T/a4.json"
testerr "a float feed for a string input is refused" \
	"tfk-train -q a4.json d.tfrecord -o a4" \
	1 "float32 values cannot feed the string input color"

done_testing
