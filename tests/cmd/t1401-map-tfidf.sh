#!/bin/sh
# tfk-map output_mode "tf_idf" (StringLookup, IntegerLookup,
# TextVectorization): the Keras docstring examples with given
# idf_weights, and --adapt against numpy / tests/py/textprep.py written
# from Keras' documented rule idf = log(1 + num_documents / (1 +
# document_count)) per learned token (float64, cast to float32), the
# special slots in front getting their mean, output = count * idf; one
# record is one document. Then the config errors Keras raises.
. "$(dirname "$0")/lib.sh"

L() { printf '{"class_name": "%s", "config": %s}' "$1" "$2"; }
one() {	# FEATURE LAYER -> c.json (output feature "o")
	printf '{"features": {"%s": {"output": "o", "layers": [%s]}}}\n' "$1" "$2" >"$T/c.json"
}
show='tfk-map c.json d.rec | tfk-cat --json | "$PYTHON" -c "
import sys, json
print(\" \".join(json.dumps(json.loads(l)[\"o\"]).replace(\" \", \"\") for l in sys.stdin))"'

# The docstrings' data: [["a","c","d","d"],["d","z","b","z"]] and
# [[12,1138,42,42],[42,7,36,7]] (7 and z out of vocabulary)
printf '%s\n' '{"s": ["a", "c", "d", "d"], "i": [12, 1138, 42, 42]}' \
	'{"s": ["d", "z", "b", "z"], "i": [42, 7, 36, 7]}' >"$T/d.jsonl"
(cd "$T" && tfk-json d.jsonl -o d.rec) || echo "not ok - docstring data"

one s "$(L StringLookup '{"vocabulary": ["a", "b", "c", "d"], "idf_weights": [0.25, 0.75, 0.6, 0.4], "output_mode": "tf_idf"}')"
testcmd "StringLookup tf_idf (docstring: OOV weight = mean of the weights)" "$show" \
	"[0.0,0.25,0.0,0.6,0.8] [1.0,0.0,0.75,0.0,0.4]\n"
one s "$(L StringLookup '{"vocabulary": ["[UNK]", "a", "b", "c", "d"], "idf_weights": [0.9, 0.25, 0.75, 0.6, 0.4], "output_mode": "tf_idf"}')"
testcmd "StringLookup tf_idf, OOV weight given with [UNK] (docstring)" "$show" \
	"[0.0,0.25,0.0,0.6,0.8] [1.8,0.0,0.75,0.0,0.4]\n"
one i "$(L IntegerLookup '{"vocabulary": [12, 36, 1138, 42], "idf_weights": [0.25, 0.75, 0.6, 0.4], "output_mode": "tf_idf"}')"
testcmd "IntegerLookup tf_idf (docstring)" "$show" \
	"[0.0,0.25,0.0,0.6,0.8] [1.0,0.0,0.75,0.0,0.4]\n"
one i "$(L IntegerLookup '{"vocabulary": [-1, 12, 36, 1138, 42], "idf_weights": [0.9, 0.25, 0.75, 0.6, 0.4], "output_mode": "tf_idf"}')"
testcmd "IntegerLookup tf_idf, OOV weight given with -1 (docstring)" "$show" \
	"[0.0,0.25,0.0,0.6,0.8] [1.8,0.0,0.75,0.0,0.4]\n"
check "-j 2 gives the same bytes" sh -c 'tfk-map c.json d.rec >j1 && tfk-map -j 2 c.json d.rec | cmp - j1'
one i "$(L IntegerLookup '{"vocabulary": [-1, 12, 36, 1138, 42], "idf_weights": [0.9, 0.25, 0.75, 0.6, 0.4], "output_mode": "tf-idf"}')"
testcmd "Keras 2.5's spelling tf-idf (its IntegerLookup docstring)" "$show" \
	"[0.0,0.25,0.0,0.6,0.8] [1.8,0.0,0.75,0.0,0.4]\n"

# Adapt vs numpy -----------------------------------------------------------
cat >"$T/tf.py" <<'EOF'
import json, math, random, sys
sys.path.insert(0, sys.argv[1] + "/py")
import numpy as np
import tfexample as tfe
import textprep
what = sys.argv[2]
if what == "mk":
    rng = random.Random(23)
    words = ["w%d" % i for i in range(12)] + ["[UNK]"]
    recs, docs, ints = [], [], []
    for i in range(150):
        s = [words[min(int(rng.expovariate(0.3)), 12)]
             for _ in range(rng.randint(1, 6))]
        n = [min(int(rng.expovariate(0.3)), 9) - 1
             for _ in range(rng.randint(1, 4))]
        recs.append(tfe.make_example({"s": s, "i": n},
            {"s": "bytes", "i": "int64"}).SerializeToString())
        docs.append([w.encode() for w in s])
        ints.append(n)
    tfe.write_tfrecords("lk.rec", recs)
    json.dump({"docs": [[w.hex() for w in d] for d in docs],
               "ints": ints}, open("lk.data", "w"))
    sys.exit(0)
data = json.load(open("lk.data"))
docs = [[bytes.fromhex(w) for w in d] for d in data["docs"]]
ints = data["ints"]
N = len(docs)
rows = [tfe.example_to_dict(tfe.Example.FromString(r))["o"][1]
        for r in tfe.read_tfrecords("out.rec")]
if what == "str":        # max_tokens 8: [UNK] + 7 learned
    cfg = json.load(open("a2.json"))["features"]["s"]["layers"][0]["config"]
    learned, df = textprep.learn(docs, [b"[UNK]"], 8 - 1, "keras")
    vocab = [b"[UNK]"] + learned
    seqs = docs
else:                    # mask 0 (dropped outside int mode), oov -1
    cfg = json.load(open("a2.json"))["features"]["i"]["layers"][0]["config"]
    cnt, df = {}, {}
    for d in ints:
        for v in d:
            cnt[v] = cnt.get(v, 0) + 1
        for v in set(d):
            df[v] = df.get(v, 0) + 1
    cnt.pop(0, None)
    cnt.pop(-1, None)
    learned = sorted(cnt, key=lambda t: (cnt[t], t), reverse=True)
    vocab = [-1] + learned
    seqs = ints
w = np.array([math.log(1 + N / (1 + df[t])) for t in learned], np.float32)
idf = np.concatenate([[np.float32(np.mean(w.astype(np.float64)))], w])
got_vocab = [v.encode() for v in cfg["vocabulary"]] if what == "str" \
    else cfg["vocabulary"]
ok = got_vocab == vocab
ok &= np.array_equal(np.float32(cfg["idf_weights"]), idf.astype(np.float32))
index = {t: i for i, t in enumerate(vocab)}
for s, r in zip(seqs, rows):
    want = np.zeros(len(vocab), np.float32)
    for t in s:
        if what == "int" and t == 0:
            continue     # the mask counts nowhere
        want[index.get(t, 0)] += 1
    ok &= np.array_equal(np.float32(r), want * idf.astype(np.float32))
print("ok" if ok and len(rows) == N else "bad %s %s %s %s" % (
    got_vocab, vocab, cfg["idf_weights"], idf.tolist()))
EOF
(cd "$T" && "$PYTHON" tf.py "$TESTS" mk) || echo "not ok - adapt data"
printf '{"features": {"s": {"output": "o", "layers": [%s]}}}\n' \
	"$(L StringLookup '{"max_tokens": 8, "num_oov_indices": 1, "mask_token": null, "oov_token": "[UNK]", "vocabulary": null, "idf_weights": null, "invert": false, "output_mode": "tf_idf", "sparse": false, "pad_to_max_tokens": false, "name": "string_lookup"}')" >"$T/as.json"
testcmd "StringLookup --adapt tf_idf: vocabulary, idf_weights and rows = numpy" \
	'tfk-map --adapt as.json lk.rec -o a2.json && tfk-map a2.json lk.rec -o out.rec && "$PYTHON" tf.py "$TESTS" str' "ok\n"
printf '{"features": {"i": {"output": "o", "layers": [%s]}}}\n' \
	"$(L IntegerLookup '{"max_tokens": null, "num_oov_indices": 1, "mask_token": 0, "oov_token": -1, "vocabulary": null, "idf_weights": null, "output_mode": "tf_idf"}')" >"$T/ai.json"
testcmd "IntegerLookup --adapt tf_idf (mask 0 dropped): = numpy" \
	'tfk-map --adapt ai.json lk.rec -o a2.json && tfk-map a2.json lk.rec -o out.rec && "$PYTHON" tf.py "$TESTS" int' "ok\n"
check "adapted spec applies the same with -j 2" sh -c 'tfk-map -j 2 a2.json lk.rec | cmp - out.rec'

# TextVectorization tf_idf vs textprep.py -----------------------------------
cat >"$T/tv.py" <<'EOF'
import json, sys
sys.path.insert(0, sys.argv[1] + "/py")
import numpy as np
import textdocs
if sys.argv[2] == "mk":
    textdocs.make()
    sys.exit(0)
docs = textdocs.load()
want, vocab = textdocs.textvec(sys.argv[1], "tf_idf", "30", "-1")
idf = [np.float32(l.split()[1]) for l in want if l.startswith("idf")]
outs = [[np.float32(x) for x in l.split()[1:]] for l in want
        if l.startswith("out")]
cfg = json.load(open("tv2.json"))["features"]["t"]["layers"][0]["config"]
ok = [v.encode() for v in cfg["vocabulary"]] == vocab
ok &= [np.float32(x) for x in cfg["idf_weights"]] == idf
rows = textdocs.rows()
for r, o in zip(rows, outs):
    ok &= [np.float32(x) for x in r] == o
print("ok" if ok and len(rows) == len(outs) == len(docs) > 10 else
      "bad %s %s %s %s" % (cfg["vocabulary"][:6], vocab[:6],
                           cfg["idf_weights"][:4], idf[:4]))
EOF
(cd "$T" && "$PYTHON" "$TESTS/py/textprep.py" corpus 9 50 >docs.hex &&
 "$PYTHON" tv.py "$TESTS" mk) || echo "not ok - text data"
printf '{"features": {"t": {"output": "v", "layers": [%s]}}}\n' \
	"$(L TextVectorization '{"max_tokens": 30, "standardize": "lower_and_strip_punctuation", "split": "whitespace", "ngrams": 2, "output_mode": "tf_idf", "output_sequence_length": null, "pad_to_max_tokens": false, "sparse": false, "ragged": false, "vocabulary": null, "idf_weights": null, "encoding": "utf-8", "vocabulary_size": null, "name": "text_vectorization"}')" >"$T/tv.json"
testcmd "TextVectorization --adapt tf_idf: vocabulary, idf_weights, rows = textprep.py" \
	'tfk-map --adapt tv.json docs.rec -o tv2.json && tfk-map tv2.json docs.rec -o tvout.rec && "$PYTHON" tv.py "$TESTS" check' "ok\n"

# Errors, as Keras' constructor and set_vocabulary raise them ---------------
one s "$(L StringLookup '{"vocabulary": ["a", "b"], "output_mode": "tf_idf"}')"
testerr "tf_idf with a vocabulary needs idf_weights" 'tfk-map c.json d.rec' 1 \
	"c.json: features.s.layers[0].config.idf_weights: expected a list of numbers, one per vocabulary entry (tf_idf)"
one s "$(L StringLookup '{"vocabulary": ["a", "b"], "idf_weights": [1, 2, 3], "output_mode": "tf_idf"}')"
testerr "idf_weights of another length" 'tfk-map c.json d.rec' 1 \
	"c.json: features.s.layers[0].config.vocabulary: idf_weights: 3 weights for a vocabulary of 2"
one s "$(L StringLookup '{"vocabulary": ["a", "b"], "idf_weights": [1, 2], "output_mode": "count"}')"
testerr "idf_weights outside tf_idf" 'tfk-map c.json d.rec' 1 \
	"c.json: features.s.layers[0].config.idf_weights: only for output_mode tf_idf"
one s "$(L StringLookup '{"vocabulary": null, "idf_weights": [1, 2], "output_mode": "tf_idf"}')"
testerr "idf_weights without a vocabulary" 'tfk-map --adapt c.json d.rec' 1 \
	"c.json: features.s.layers[0].config.idf_weights: only with a vocabulary"
one s "$(L StringLookup '{"vocabulary": ["a", "b"], "idf_weights": [1, "x"], "output_mode": "tf_idf"}')"
testerr "idf_weights must be numbers" 'tfk-map c.json d.rec' 1 \
	"config.idf_weights: expected a number or a list of numbers"
one i "$(L CategoryEncoding '{"num_tokens": 4, "output_mode": "tf_idf"}')"
testerr "CategoryEncoding has no tf_idf (as Keras)" 'tfk-map c.json d.rec' 1 \
	"c.json: features.i.layers[0].config.output_mode: expected one_hot, multi_hot or count"
one s "$(L StringLookup '{"vocabulary": ["a"], "output_mode": "tfidf"}')"
testerr "unknown output_mode lists tf_idf" 'tfk-map c.json d.rec' 1 \
	"config.output_mode: expected int, one_hot, multi_hot, count or tf_idf"

done_testing
