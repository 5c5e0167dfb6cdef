#!/bin/sh
# tfk-map: Keras preprocessing layers checked against their documented
# formulas in numpy (Rescaling x*scale+offset, Normalization
# (x-mean)/sqrt(var), adapt = numpy mean/var), tf.image.resize via
# tests/py/images.py, numpy.rot90 / fliplr for the geometric layers,
# Pillow for DecodeImage; -j and seed reproducibility; located errors.
. "$(dirname "$0")/lib.sh"

cat >"$T/mk.py" <<'EOF'
import io, sys
import numpy as np
from PIL import Image
sys.path.insert(0, sys.argv[1] + "/py")
import tfexample as tfe
rng = np.random.default_rng(7)
recs, pngs = [], []
imgs = rng.integers(0, 256, size=(300, 8, 10, 3), dtype=np.uint8)
sq = rng.integers(0, 256, size=(300, 6, 6, 3), dtype=np.uint8)
xs = rng.normal(3.0, 2.0, size=(300, 4)).astype(np.float32)
for i in range(300):
    b = io.BytesIO()
    Image.fromarray(imgs[i]).save(b, format="PNG")
    recs.append(tfe.make_example({"image": [imgs[i].tobytes()],
        "sq": [sq[i].tobytes()], "x": [float(v) for v in xs[i]],
        "png": [b.getvalue()], "label": [i]}).SerializeToString())
tfe.write_tfrecords("in.rec", recs)
tfe.write_tfrecords("few.rec", recs[:20])
tfe.write_tfrecords("mixed.rec", recs[:20] + [tfe.make_example(
    {"image": [1.5], "label": [20]}).SerializeToString()])
np.save("imgs.npy", imgs); np.save("sq.npy", sq); np.save("xs.npy", xs)
EOF

cat >"$T/chk.py" <<'EOF'
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1] + "/py")
import tfexample as tfe
import images
what, path = sys.argv[2], sys.argv[3]
F = np.float32
out = [tfe.example_to_dict(tfe.Example.FromString(r))
       for r in tfe.read_tfrecords(path)]
imgs, sq, xs = np.load("imgs.npy"), np.load("sq.npy"), np.load("xs.npy")
def arr(d, k):
    kind, v = d[k]
    return np.array(v, F).reshape(d[k + "/shape"][1]) if k + "/shape" in d \
        else np.array(v, F)
n = len(out)
ok = n > 0
for i, d in enumerate(out):
    if d["label"][1] != [i]:
        ok = False
    if what == "rescale":
        want = imgs[i].astype(F) * np.array([0.5, 0.25, 2], F) + F(1)
        ok &= d["image/shape"][1] == [8, 10, 3]
        ok &= np.array_equal(arr(d, "image"), want)
        ok &= d["sq"][0] == "bytes" and d["x"][0] == "float"
    elif what == "norm":
        m, v = np.array([1, 2, 3, 4], F), np.array([4, 1, 0.25, 9], F)
        want = (xs[i] - m) / np.sqrt(v)
        ok &= np.allclose(arr(d, "x"), want, rtol=1e-6, atol=1e-6)
        ok &= "x/shape" not in d
    elif what == "resize":
        want = images.resize(imgs[i], 5, 7, "bilinear", False)
        ok &= d["small/shape"][1] == [5, 7, 3]
        ok &= np.allclose(arr(d, "small"), want, atol=1e-4)
        ok &= d["image"][0] == "bytes"
    elif what == "center":
        ok &= np.array_equal(arr(d, "image"), imgs[i][2:6, 2:8].astype(F))
    elif what == "rot90":
        ok &= np.allclose(arr(d, "sq"), np.rot90(sq[i], 1).astype(F),
                          atol=1e-2)
    elif what == "flip":
        a = arr(d, "image")
        same = np.array_equal(a, imgs[i].astype(F))
        flip = np.array_equal(a, imgs[i][:, ::-1].astype(F))
        ok &= same != flip
        globals().setdefault("flips", []).append(flip)
    elif what == "decode":
        ok &= np.array_equal(arr(d, "png"),
                             imgs[i].astype(F) * F(0.00392156862745098))
if what == "flip":
    ok &= 0 < sum(flips) < n
print("ok" if ok else "bad", n)
EOF

cat >"$T/adapt.py" <<'EOF'
import json, sys
import numpy as np
xs = np.load("xs.npy").astype(np.float64) * 2 + 1
spec = json.load(open(sys.argv[1]))
c = spec["features"]["x"][1]["config"]
ok = np.allclose(c["mean"], xs.mean(0), rtol=1e-6) and \
     np.allclose(c["variance"], xs.var(0), rtol=1e-5) and \
     spec["features"]["x"][0]["config"]["name"] == "rescaling"
print("ok" if ok else "bad %s %s %s %s" % (c["mean"], xs.mean(0),
      c["variance"], xs.var(0)))
EOF

(cd "$T" && "$PYTHON" mk.py "$TESTS") || echo "not ok - data"

L() { printf '{"class_name": "%s", "config": %s}' "$1" "$2"; }
spec() { printf '{"features": {%s}}\n' "$2" >"$T/$1"; }

spec rescale.json "\"image\": {\"shape\": [8, 10, 3], \"layers\": [$(L Rescaling \
'{"scale": [0.5, 0.25, 2], "offset": 1.0, "name": "rescaling", "trainable": true, "dtype": "float32"}')]}"
testcmd "Rescaling per channel: x*scale+offset, shape, pass-through" \
	'tfk-map rescale.json in.rec >o.rec && "$PYTHON" chk.py "$TESTS" rescale o.rec' "ok 300\n"

spec norm.json "\"x\": [$(L Normalization '{"axis": -1, "mean": [1, 2, 3, 4], "variance": [4, 1, 0.25, 9], "invert": false}')]"
testcmd "Normalization: (x-mean)/sqrt(var)" \
	'tfk-map norm.json in.rec | "$PYTHON" chk.py "$TESTS" norm /dev/stdin' "ok 300\n"

spec ad.json "\"x\": [$(L Rescaling '{"scale": 2, "offset": 1, "name": "rescaling"}'), $(L Normalization '{"axis": -1, "mean": null, "variance": null}')]"
testcmd "--adapt: mean/variance after Rescaling = numpy mean/var" \
	'tfk-map --adapt ad.json in.rec -o ad2.json && "$PYTHON" adapt.py ad2.json' "ok\n"
testcmd "--adapt reads stdin for one layer" \
	'tfk-map --adapt ad.json <in.rec >ad3.json && "$PYTHON" adapt.py ad3.json' "ok\n"
testcmd "adapted spec maps to mean 0, var 1" \
	'tfk-map ad2.json in.rec | tfk-cat --json | "$PYTHON" -c "
import sys, json, numpy as np
a = np.array([json.loads(l)[\"x\"] for l in sys.stdin])
print(bool(np.allclose(a.mean(0), 0, atol=1e-5) and np.allclose(a.var(0), 1, atol=1e-4)))"' "True\n"
testerr "unadapted Normalization is refused" 'tfk-map ad.json in.rec' 1 \
	"ad.json: features.x[1]: Normalization has no mean and variance"

spec resize.json "\"image\": {\"shape\": [8, 10, 3], \"output\": \"small\", \"layers\": [$(L Resizing '{"height": 5, "width": 7, "interpolation": "bilinear", "crop_to_aspect_ratio": false, "data_format": "channels_last"}')]}"
testcmd "Resizing bilinear vs tf.image.resize oracle, new output name" \
	'tfk-map resize.json in.rec | "$PYTHON" chk.py "$TESTS" resize /dev/stdin' "ok 300\n"

spec center.json "\"image\": {\"shape\": [8, 10, 3], \"layers\": [$(L CenterCrop '{"height": 4, "width": 6}')]}"
testcmd "CenterCrop: the central window" \
	'tfk-map center.json few.rec | "$PYTHON" chk.py "$TESTS" center /dev/stdin' "ok 20\n"

spec rot.json "\"sq\": {\"shape\": [6, 6, 3], \"layers\": [$(L RandomRotation '{"factor": [0.25, 0.25], "fill_mode": "reflect", "interpolation": "bilinear", "seed": null}')]}"
testcmd "RandomRotation factor 0.25..0.25 = numpy.rot90" \
	'tfk-map rot.json few.rec | "$PYTHON" chk.py "$TESTS" rot90 /dev/stdin' "ok 20\n"

spec flip.json "\"image\": {\"shape\": [8, 10, 3], \"layers\": [$(L RandomFlip '{"mode": "horizontal", "seed": 5}')]}"
testcmd "RandomFlip horizontal: each image unchanged or mirrored, both seen" \
	'tfk-map --seed 3 flip.json in.rec | "$PYTHON" chk.py "$TESTS" flip /dev/stdin' "ok 300\n"

spec png.json "\"png\": [$(L DecodeImage '{"channels": 3}'), $(L Rescaling '{"scale": 0.00392156862745098}')]"
testcmd "DecodeImage (PNG by Pillow) + Rescaling 1/255" \
	'tfk-map png.json few.rec | "$PYTHON" chk.py "$TESTS" decode /dev/stdin' "ok 20\n"

spec aug.json "\"image\": {\"shape\": [8, 10, 3], \"layers\": [$(L Rescaling '{"scale": 0.00392156862745098}'), $(L RandomFlip '{}'), $(L RandomRotation '{"factor": 0.2}'), $(L RandomZoom '{"height_factor": 0.2}'), $(L RandomTranslation '{"height_factor": 0.1, "width_factor": 0.1}'), $(L RandomContrast '{"factor": 0.3, "value_range": [0, 1]}'), $(L RandomCrop '{"height": 6, "width": 6}')]}"
check "-j 1 and -j 2 give the same bytes" sh -c \
	'tfk-map --seed 9 aug.json in.rec >j1 && tfk-map --seed 9 -j 2 aug.json in.rec >j2 && cmp j1 j2 && tfk-count j1 | { read n rest; [ "$n" = 300 ]; }'
check "same seed same bytes; another seed other bytes" sh -c \
	'tfk-map --seed 9 aug.json <in.rec | cmp - j1 && tfk-map --seed 8 aug.json in.rec | cmp -s - j1; [ $? = 1 ]'
# A Rescaling by one scale (and offset) right before a flip or transform
# is folded into that op; by one value per channel it is not, and has
# the same nodes, so the same random draws: the two must agree bit for
# bit, also where a constant fill (not rescaled) shows.
fold() {	# SCALE1 SCALE2 OFFSET2 SCALE3 -> layers
	echo "$(L Rescaling "{\"scale\": $1}"), $(L RandomFlip '{}'), \
$(L RandomRotation '{"factor": 0.2, "fill_mode": "constant", "fill_value": 0.5}'), \
$(L Rescaling "{\"scale\": $2, \"offset\": $3}"), $(L RandomZoom '{"height_factor": 0.3}'), \
$(L Rescaling "{\"scale\": $4}"), $(L RandomTranslation '{"height_factor": 0.2, "width_factor": 0.2, "fill_mode": "wrap"}')"
}
spec fold1.json "\"image\": {\"shape\": [8, 10, 3], \"layers\": [$(fold 0.00392156862745098 2 -1 -0.5)]}"
spec fold3.json "\"image\": {\"shape\": [8, 10, 3], \"layers\": [$(fold \
'[0.00392156862745098, 0.00392156862745098, 0.00392156862745098]' '[2, 2, 2]' '[-1, -1, -1]' '[-0.5, -0.5, -0.5]')]}"
check "a Rescaling folded into the next op = the Rescaling done apart" sh -c \
	'tfk-map --seed 3 fold1.json in.rec >f1 && tfk-map --seed 3 fold3.json in.rec | cmp - f1 && tfk-count f1 | { read n rest; [ "$n" = 300 ]; }'
testcmd "random layers keep the shape (RandomCrop to 6x6)" \
	'tfk-map --seed 9 aug.json few.rec | tfk-cat --json | head -1 | "$PYTHON" -c "
import sys, json; d = json.loads(sys.stdin.read()); print(d[\"image/shape\"], len(d[\"image\"]))"' "[6, 6, 3] 108\n"

# Categorical layers: the examples of the Keras docstrings -------------
printf '%s\n' '{"s": ["a", "c", "d"], "i": [12, 1138, 42], "f": [-1.5, 1.0, 3.4, 0.5], "c": [0, 1], "h": ["A"]}' \
	'{"s": ["d", "z", "b"], "i": [42, 1000, 36], "f": [0.0, 3.0, 1.3, 0.0], "c": [0, 0], "h": ["B"]}' \
	'{"s": ["a", "b", "c", "d", "z"], "i": [0], "f": [9.0], "c": [1, 2], "h": ["C"]}' \
	'{"s": ["a", "c", "d", "d"], "i": [36], "f": [-9.0], "c": [3, 1], "h": ["D"]}' \
	'{"s": ["d", "z", "b", "z"], "i": [1138], "f": [1.0], "c": [3, 2], "h": ["E"]}' >"$T/cat.jsonl"
(cd "$T" && tfk-json cat.jsonl -o cat.rec) || echo "not ok - categorical data"
one() {	# FEATURE LAYER -> spec file cat-FEATURE.json
	printf '{"features": {"%s": {"output": "o", "layers": [%s]}}}\n' "$1" "$2" >"$T/c.json"
}
show='tfk-map c.json cat.rec | tfk-cat --json | "$PYTHON" -c "
import sys, json
print(\" \".join(json.dumps(json.loads(l)[\"o\"]).replace(\" \", \"\") for l in sys.stdin))"'
one s "$(L StringLookup '{"vocabulary": ["a", "b", "c", "d"], "name": "string_lookup", "invert": false, "output_mode": "int", "sparse": false, "encoding": "utf-8"}')"
testcmd "StringLookup int (Keras docstring: [[1,3,4],[4,0,2]])" "$show" \
	"[1,3,4] [4,0,2] [1,2,3,4,0] [1,3,4,4] [4,0,2,0]\n"
one s "$(L StringLookup '{"vocabulary": ["a", "b", "c", "d"], "output_mode": "count"}')"
testcmd "StringLookup count (docstring: [0,1,0,1,2], [2,0,1,0,1])" \
	"tfk-map c.json cat.rec | tfk-cat --json | sed -n '4,5p' | $(echo "$show" | sed 's/.*| "\$PYTHON"/"$PYTHON"/')" \
	"[0.0,1.0,0.0,1.0,2.0] [2.0,0.0,1.0,0.0,1.0]\n"
one s "$(L StringLookup '{"vocabulary": ["a", "b", "c", "d"], "output_mode": "one_hot", "mask_token": null}')"
testcmd "StringLookup one_hot: rows of depth 5, o/shape [5, 5]" \
	'tfk-map c.json cat.rec | tfk-cat --json | sed -n 3p | "$PYTHON" -c "
import sys, json; d = json.loads(sys.stdin.read()); print(d[\"o/shape\"], [d[\"o\"][r * 5:r * 5 + 5].index(1.0) for r in range(5)])"' \
	"[5, 5] [1, 2, 3, 4, 0]\n"
one i "$(L IntegerLookup '{"vocabulary": [12, 36, 1138, 42], "vocabulary_dtype": "int64"}')"
testcmd "IntegerLookup int (docstring: [[1,3,4],[4,0,2]])" "$show" \
	"[1,3,4] [4,0,2] [0] [2] [3]\n"
one c "$(L CategoryEncoding '{"num_tokens": 4, "output_mode": "multi_hot"}')"
testcmd "CategoryEncoding multi_hot (docstring)" "$show" \
	"[1.0,1.0,0.0,0.0] [1.0,0.0,0.0,0.0] [0.0,1.0,1.0,0.0] [0.0,1.0,0.0,1.0] [0.0,0.0,1.0,1.0]\n"
one c "$(L CategoryEncoding '{"num_tokens": 4, "output_mode": "count"}')"
testcmd "CategoryEncoding count (docstring)" "$show" \
	"[1.0,1.0,0.0,0.0] [2.0,0.0,0.0,0.0] [0.0,1.0,1.0,0.0] [0.0,1.0,0.0,1.0] [0.0,0.0,1.0,1.0]\n"
one f "$(L Discretization '{"bin_boundaries": [0.0, 1.0, 2.0], "epsilon": 0.01, "output_mode": "int"}')"
testcmd "Discretization (docstring: [[0,2,3,1],[1,3,2,1]])" "$show" \
	"[0,2,3,1] [1,3,2,1] [3] [0] [2]\n"
one h "$(L Hashing '{"num_bins": 3}')"
testcmd "Hashing FarmHash (docstring: 1 0 1 1 2)" "$show" "[1] [0] [1] [1] [2]\n"
one h "$(L Hashing '{"num_bins": 3, "salt": 133}')"
testcmd "Hashing salted SipHash (docstring: 0 0 2 1 0)" "$show" "[0] [0] [2] [1] [0]\n"
one s "$(L StringLookup '{"vocabulary": ["a", "b"], "num_oov_indices": 0}')"
testerr "lookup of an unknown token without OOV names record and layer" \
	'tfk-map c.json cat.rec' 1 "cat.rec: record 0 at byte 0: node StringLookup"
one c "$(L CategoryEncoding '{"num_tokens": 2}')"
testerr "CategoryEncoding value out of range" 'tfk-map c.json cat.rec' 1 \
	"cat.rec: record 2 at byte "
one s "$(L Hashing '{"num_bins": 3}'), $(L IntegerLookup '{"vocabulary": [1, 2]}')"
check "Hashing then IntegerLookup chain" sh -c 'tfk-map c.json cat.rec | tfk-count | { read n r; [ "$n" = 5 ]; }'

# Lookup and Discretization adapt vs textprep.py / Keras' documented rules
cat >"$T/lk.py" <<'EOF2'
import json, random, subprocess, sys
sys.path.insert(0, sys.argv[1] + "/py")
import numpy as np
import tfexample as tfe
import textprep
what = sys.argv[2]
if what == "mk":
    rng = random.Random(11)
    words = ["w%d" % i for i in range(14)] + ["[UNK]", ""]
    recs, docs, ints, xs = [], [], [], []
    for i in range(200):
        # skewed counts, many ties: Keras' tie order matters
        s = [words[min(int(rng.expovariate(0.35)), 15)]
             for _ in range(rng.randint(1, 5))]
        n = [min(int(rng.expovariate(0.3)), 12) - 1 for _ in range(3)]
        x = [round(rng.gauss(0, 3), 3) for _ in range(3)]
        recs.append(tfe.make_example({"s": s, "i": n, "x": x},
            {"s": "bytes", "i": "int64", "x": "float"}).SerializeToString())
        docs.append([w.encode() for w in s])
        ints.append(n)
        xs.extend(x)
    tfe.write_tfrecords("lk.rec", recs)
    json.dump({"docs": [[w.hex() for w in d] for d in docs],
               "ints": ints}, open("lk.data", "w"))
    open("lk.x", "w").write("".join("%r\n" % v for v in
                                    np.float32(xs).tolist()))
    sys.exit(0)
data = json.load(open("lk.data"))
docs = [[bytes.fromhex(w) for w in d] for d in data["docs"]]
ints = data["ints"]
feat = lambda path, f: [tfe.example_to_dict(tfe.Example.FromString(r))[f][1]
                        for r in tfe.read_tfrecords(path)]
ok = True
if what == "str":        # StringLookup max_tokens 6, [UNK], no mask
    cfg = json.load(open("lk2.json"))["features"]["s"][0]["config"]
    order, _ = textprep.learn(docs, [b"[UNK]"], 6 - 1, "keras")
    want = ["[UNK]"] + [t.decode() for t in order]
    ok &= cfg["vocabulary"] == want
    idx = {t: i for i, t in enumerate(want)}
    for d, r in zip(docs, feat("lkout.rec", "s")):
        ok &= r == [idx.get(t.decode(), 0) for t in d]
    print("ok" if ok else "bad %s %s" % (cfg["vocabulary"], want))
elif what == "int":      # IntegerLookup mask 0, 2 OOV indices, oov -1
    cfg = json.load(open("lk2.json"))["features"]["i"][0]["config"]
    cnt = {}
    for d in ints:
        for v in d:
            cnt[v] = cnt.get(v, 0) + 1
    cnt.pop(0, None)
    cnt.pop(-1, None)
    learned = sorted(cnt, key=lambda t: (cnt[t], t), reverse=True)
    want = [0, -1, -1] + learned
    ok &= cfg["vocabulary"] == want
    idx = {t: 3 + i for i, t in enumerate(learned)}
    for d, r in zip(ints, feat("lkout.rec", "i")):
        ok &= r == [0 if v == 0 else idx.get(v, 1 + v % 2) for v in d]
    print("ok" if ok else "bad %s %s" % (cfg["vocabulary"], want))
elif what == "disc":     # Discretization num_bins 4, one record a batch
    cfg = json.load(open("lk2.json"))["features"]["x"][0]["config"]
    want = subprocess.run([sys.executable, sys.argv[1] + "/py/textprep.py",
        "discretize", "4", "0.01", "3", "lk.x"], capture_output=True,
        check=True).stdout.decode().split()
    got = ["%.9g" % np.float32(b) for b in cfg["bin_boundaries"]]
    ok &= got == want and len(want) == 3
    b = np.float32([float(w) for w in want])
    for x, r in zip(feat("lk.rec", "x"), feat("lkout.rec", "x")):
        ok &= r == np.digitize(np.float32(x), b, right=False).tolist()
    print("ok" if ok else "bad %s %s" % (got, want))
EOF2
(cd "$T" && "$PYTHON" lk.py "$TESTS" mk) || echo "not ok - lookup data"
spec lks.json "\"s\": [$(L StringLookup '{"max_tokens": 6, "num_oov_indices": 1, "mask_token": null, "oov_token": "[UNK]", "vocabulary": null, "idf_weights": null, "invert": false, "output_mode": "int", "sparse": false, "pad_to_max_tokens": false, "name": "string_lookup"}')]"
testcmd "StringLookup --adapt: vocabulary (max_tokens, [UNK] dropped) and ids = textprep.learn" \
	'tfk-map --adapt lks.json lk.rec -o lk2.json && tfk-map lk2.json lk.rec -o lkout.rec && "$PYTHON" lk.py "$TESTS" str' "ok\n"
spec lki.json "\"i\": [$(L IntegerLookup '{"max_tokens": null, "num_oov_indices": 2, "mask_token": 0, "oov_token": -1, "vocabulary": null, "output_mode": "int"}')]"
testcmd "IntegerLookup --adapt: mask 0, 2 OOV slots, count then value order" \
	'tfk-map --adapt lki.json lk.rec -o lk2.json && tfk-map lk2.json lk.rec -o lkout.rec && "$PYTHON" lk.py "$TESTS" int' "ok\n"
testerr "lookup without vocabulary asks for --adapt" 'tfk-map lki.json lk.rec' 1 \
	"lki.json: features.i[0]: IntegerLookup has no vocabulary: run tfk-map --adapt first"
spec lkd.json "\"x\": [$(L Discretization '{"bin_boundaries": null, "num_bins": 4, "epsilon": 0.01, "output_mode": "int", "sparse": false}')]"
testcmd "Discretization --adapt: boundaries = textprep.py (Keras' quantiles), buckets = np.digitize" \
	'tfk-map --adapt lkd.json lk.rec -o lk2.json && tfk-map lk2.json lk.rec -o lkout.rec && "$PYTHON" lk.py "$TESTS" disc' "ok\n"
testerr "Discretization without boundaries asks for --adapt" 'tfk-map lkd.json lk.rec' 1 \
	"lkd.json: features.x[0]: Discretization has no bin_boundaries: run tfk-map --adapt first"
spec lkn.json "\"x\": [$(L Discretization '{"bin_boundaries": null}')]"
testerr "Discretization adapt needs num_bins" 'tfk-map --adapt lkn.json lk.rec' 1 \
	"lkn.json: features.x[0].config.num_bins: expected an integer in 1..16777216 when bin_boundaries is null"
testerr "StringLookup adapt on int64 values names the record" 'sed s/\"s\"/\"i\"/ lks.json >lkb.json && tfk-map --adapt lkb.json lk.rec' 1 \
	"lk.rec: record 0 at byte 0: feature 'i': StringLookup takes bytes values"

# TextVectorization: adapt and apply vs tests/py/textprep.py --------------
cat >"$T/tv.py" <<'EOF2'
import json, sys
sys.path.insert(0, sys.argv[1] + "/py")
import textdocs
if sys.argv[2] == "mk":
    textdocs.make(index=True)
    sys.exit(0)
docs = textdocs.load()
mode, seqlen, spec = sys.argv[3], sys.argv[4], sys.argv[5]
want, vocab = textdocs.textvec(sys.argv[1], mode, "40", seqlen)
outs = [l.split()[1:] for l in want if l.startswith("out")]
cfg = json.load(open(spec))["features"]["t"]["layers"][0]["config"]
got_vocab = [v.encode() for v in cfg["vocabulary"]]
ok = got_vocab == vocab
rows = textdocs.rows()
for r, o in zip(rows, outs):
    ok &= [float(x) for x in r] == [float(x) for x in o]
print("ok" if ok and len(rows) == len(outs) == len(docs) else
      "bad %s %s %s %s" % (got_vocab[:8], vocab[:8], rows[:2], outs[:2]))
EOF2
(cd "$T" && "$PYTHON" "$TESTS/py/textprep.py" corpus 5 60 >docs.hex &&
 "$PYTHON" tv.py "$TESTS" mk) || echo "not ok - text data"
printf '{"features": {"t": {"output": "v", "layers": [%s]}}}\n' \
	"$(L TextVectorization '{"max_tokens": 40, "standardize": "lower_and_strip_punctuation", "split": "whitespace", "ngrams": 2, "output_mode": "int", "output_sequence_length": 12, "pad_to_max_tokens": false, "sparse": false, "ragged": false, "vocabulary": null, "idf_weights": null, "encoding": "utf-8", "vocabulary_size": null, "name": "text_vectorization"}')" >"$T/tv.json"
testcmd "TextVectorization int: adapted vocabulary and ids = textprep.py" \
	'tfk-map --adapt tv.json docs.rec -o tv2.json && tfk-map tv2.json docs.rec -o tvout.rec && "$PYTHON" tv.py "$TESTS" check int 12 tv2.json' "ok\n"
sed 's/"int"/"count"/; s/"output_sequence_length": 12/"output_sequence_length": null/' "$T/tv.json" >"$T/tvc.json"
testcmd "TextVectorization count: vocabulary and counts = textprep.py" \
	'tfk-map --adapt tvc.json docs.rec -o tvc2.json && tfk-map tvc2.json docs.rec -o tvout.rec && "$PYTHON" tv.py "$TESTS" check count -1 tvc2.json' "ok\n"
testerr "TextVectorization without vocabulary asks for --adapt" \
	'tfk-map tv.json docs.rec' 1 "tv.json: features.t.layers[0]: TextVectorization has no vocabulary: run tfk-map --adapt"
sed 's/"output_sequence_length": 12/"output_sequence_length": null/' "$T/tv.json" >"$T/tvr.json"
testerr "ragged int output is refused by key" 'tfk-map tvr.json docs.rec' 1 \
	"features.t.layers[0].config.output_sequence_length: null (ragged output) is not supported"

# Errors ----------------------------------------------------------------
spec e1.json "\"image\": [$(L Rescaling '{"scale": 1}'), $(L RandomRotaton '{}')]"
testerr "unknown layer class names the JSON path" 'tfk-map e1.json in.rec' 1 \
	"tfk-map: e1.json: features.image[1]: unknown layer class 'RandomRotaton'"
spec e2.json "\"text\": [$(L TextVectorization '{"split": "character"}')]"
testerr "TextVectorization split character refused by key" 'tfk-map e2.json in.rec' 1 \
	"e2.json: features.text[0].config.split: expected whitespace or null (character is not supported)"
spec e3.json "\"image\": [$(L RandomRotation '{"factor": "x"}')]"
testerr "wrong config value type" 'tfk-map e3.json in.rec' 1 \
	"e3.json: features.image[0].config.factor: expected a number or a list of 2 numbers"
spec e4.json "\"image\": [$(L Rescaling '{"scale": 1, "scael": 2}')]"
testerr "unknown config key" 'tfk-map e4.json in.rec' 1 \
	"e4.json: features.image[0].config.scael: unknown config key"
spec e5.json "\"nothere\": [$(L Rescaling '{"scale": 1}')]"
testerr "missing feature names record and feature" 'tfk-map e5.json in.rec' 1 \
	"in.rec: record 0 at byte 0: feature 'nothere': missing"
spec e6.json "\"image\": {\"shape\": [8, 10, 4], \"layers\": [$(L Rescaling '{"scale": 1}')]}"
testerr "byte count vs shape" 'tfk-map e6.json in.rec' 1 \
	"in.rec: record 0 at byte 0: feature 'image': 240 bytes, but shape [8, 10, 4] needs 320"
spec e7.json "\"label\": {\"shape\": [2, 2, 1], \"layers\": [$(L RandomFlip '{}')]}"
testerr "int64 values: count vs shape" 'tfk-map e7.json in.rec' 1 \
	"feature 'label': 1 values, but shape [2, 2, 1] needs 4"
testerr "a feature changing kind is an error naming the record" \
	'tfk-map rescale.json <mixed.rec' 1 \
	"<stdin>: record 20 at byte "
testerr "... and the feature and kinds" 'tfk-map rescale.json mixed.rec' 1 \
	"feature 'image': expected a bytes list, got float"
spec e8.json "\"x\": [$(L RandomFlip '{}')]"
testerr "image layer on a flat list" 'tfk-map e8.json in.rec' 1 \
	"e8.json: features.x[0]: expected an image [h, w, c]"
spec e9.json "\"image\": [$(L Rescaling '{"scale": 1}')]"
testerr "raw bytes without shape" 'tfk-map e9.json in.rec' 1 \
	"e9.json: features.image[0]: expected numbers, got bytes (strings): raw image bytes need a \"shape\""
printf '{"features": {"x": [}}' >"$T/bad.json"
testerr "bad JSON has line:column" 'tfk-map bad.json in.rec' 1 "bad.json:1:"
testerr "truncated upstream stream is an error" \
	'head -c 5000 in.rec | tfk-map norm.json >/dev/null' 1 "<stdin>"
testerr "DecodeImage of non-image bytes" \
	"$(printf 'tfk-map png.json few.rec >/dev/null; spec() { :; }; true') && printf '{\"features\": {\"sq\": [%s]}}' '$(L DecodeImage '{}')' >d.json && tfk-map d.json few.rec" 1 \
	"few.rec: record 0 at byte 0: feature 'sq': not an image"
testerr "missing SPEC is a usage error" 'tfk-map' 2 "missing SPEC.json"
testerr "-j 0 is a usage error" 'tfk-map -j 0 norm.json' 2 "--jobs"
spec crop.json "\"png\": [$(L DecodeImage '{"channels": 3}'), $(L Resizing '{"height": 4, "width": 4, "crop_to_aspect_ratio": true}')]"
testerr "crop_to_aspect_ratio needs a fixed image size" 'tfk-map crop.json in.rec' 1 \
	"features.png[1]: crop_to_aspect_ratio needs images of one fixed size"
check "-o on error leaves no file" sh -c '! tfk-map -o out.rec e5.json in.rec 2>/dev/null && [ ! -e out.rec ]'

done_testing
