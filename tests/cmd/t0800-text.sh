#!/bin/sh
# t0800-text.sh - tfk-text: Keras' text_dataset_from_directory order,
# labels and split checked against an independent Python model of it
# (os.walk, sorted, numpy's RandomState shuffle); archives (tar, tgz,
# zip) giving the same bytes as the directory; -j; UTF-8 truncation and
# validation; --lines against TextLineDataset's documented rules; label
# maps; --shard; usage errors; no partial output on failure.
. "$(dirname "$0")/lib.sh"

# --- helpers (Python, no tfkit code) ------------------------------------
cat > "$T/dump.py" <<'EOF'
# dump.py FILE...: one line per record: label|filename|text (repr)
import os, sys
sys.path.insert(0, os.environ["TESTS"] + "/py")
import tfexample as tfe
for path in sys.argv[1:]:
    for rec in tfe.read_tfrecords(path):
        d = tfe.example_to_dict(tfe.Example.FromString(rec))
        label = d.get("label", ("none", []))[1]
        fn = d.get("filename", ("bytes", [b"-"]))[1][0].decode()
        text = d["text"][1][0]
        print("%s|%s|%r|%s" % (",".join(map(str, label)), fn, text,
                               ",".join(sorted(d))))
EOF
cat > "$T/keras.py" <<'EOF'
# keras.py ROOT SEED SHUFFLE SPLIT SUBSET [CLASS...]: the files Keras'
# index_directory + get_training_or_validation_split give, one
# "label|filename" per line (label "" for labels=None when CLASS is "-").
import os, sys
import numpy as np
root, seed, shuffle, split, subset = sys.argv[1:6]
classes = sys.argv[6:]
none = classes == ["-"]
if not classes:
    classes = sorted(d for d in os.listdir(root)
                     if os.path.isdir(os.path.join(root, d)) and not d.startswith("."))
def walk(top):
    out = []
    for r, _, files in sorted(os.walk(top), key=lambda x: x[0]):
        for f in sorted(files):
            if f.lower().endswith((".txt",)):
                out.append(os.path.relpath(os.path.join(r, f), root))
    return out
files, labels = [], []
if none:
    files = walk(root + "/")
    labels = [""] * len(files)
else:
    for i, c in enumerate(classes):
        fs = walk(os.path.join(root, c))
        files += fs
        labels += [str(i)] * len(fs)
if shuffle == "1":
    np.random.RandomState(int(seed)).shuffle(files)
    np.random.RandomState(int(seed)).shuffle(labels)
n_val = int(float(split) * len(files))
if subset == "training":
    files, labels = files[:len(files) - n_val], labels[:len(files) - n_val]
elif subset == "validation":
    files, labels = files[len(files) - n_val:], labels[len(files) - n_val:]
for l, f in zip(labels, files):
    print("%s|%s" % (l, f))
EOF
# lf FILE...: the label|filename part of dump.py's lines
mkdir -p "$T/bin"
printf '#!/bin/sh\n"$PYTHON" "$T/dump.py" "$@" | cut -d"|" -f1,2\n' > "$T/bin/lf"
chmod +x "$T/bin/lf"
PATH="$T/bin:$PATH"
export T

# --- a corpus ------------------------------------------------------------
$PYTHON - "$T" <<'EOF'
import os, random, sys
t = sys.argv[1]
rng = random.Random(5)
words = ["good", "bad", "film", "caf\u00e9", "\u00fcber", "\u6f22\u5b57",
         "\U0001f600", "plot", "a", "the"]
def put(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(text if isinstance(text, bytes) else text.encode())
n = 0
for c, k in (("pos", 23), ("neg", 19), ("unsup", 7)):
    for i in range(k):
        sub = rng.choice(["", "", "", "deep/", "deep er/", "a b/"])
        ext = rng.choice([".txt", ".txt", ".TXT"])
        put("%s/imdb/%s/%s%d_%d%s" % (t, c, sub, i, rng.randrange(10), ext),
            " ".join(rng.choice(words) for _ in range(rng.randrange(1, 30))))
        n += 1
put(t + "/imdb/pos/notes.md", "not text data")
put(t + "/imdb/README.txt", "top-level files are not in any class")
put(t + "/imdb/.git/x.txt", "hidden directories are not classes")
put(t + "/imdb/empty/.keep", "")
put(t + "/bad/c/ok.txt", "fine")
put(t + "/bad/c/latin1.txt", b"caf\xe9 au lait")
put(t + "/bad/c/z.txt", "also fine")
put(t + "/utf/c/x.txt", "a\u00e9\u20ac\U0001f600z")
EOF
cd "$T" || exit 1
mkdir -p out
printf 'pos\nneg\n' > classes.txt

# --- help and usage ------------------------------------------------------
testcmd "--help shows an example" 'tfk-text --help | grep -c "^  tfk-text aclImdb"' "1"
testerr "no directory" 'tfk-text' 2 "a DIR or ARCHIVE is required"
testerr "--subset needs --validation-split" 'tfk-text --subset training imdb' 2 \
	"--validation-split and --subset go together"
testerr "split out of range" 'tfk-text --validation-split 1.5 --subset training imdb' 2 \
	"between 0 and 1"
testerr "unknown subset" 'tfk-text --validation-split 0.2 --subset test imdb' 2 \
	"expected training, validation or both"
testerr "both needs -o" 'tfk-text --validation-split 0.2 --subset both imdb' 2 \
	"--subset both writes two outputs"
testerr "seed outside numpy's range" 'tfk-text --seed -1 imdb' 2 "--seed: expected 0 to 4294967295"
testerr "--lines takes no labels" 'tfk-text --lines --labels none x' 2 "--lines takes no label"
testerr "header skip needs --lines" 'tfk-text --skip-header-lines 1 imdb' 2 "needs --lines"
testerr "map and no labels" 'tfk-text --labels none --label-map m.csv imdb' 2 "--label-map gives labels"
testerr "stdin is no dataset" 'tfk-text -' 1 "<stdin>: a dataset is read twice"
testerr "a text file is no dataset: hint at --lines" 'tfk-text classes.txt' 1 "use --lines"
testerr "missing directory" 'tfk-text nope' 1 "tfk-text: nope: No such file or directory"
mkdir -p empty/c
testerr "no .txt files" 'tfk-text empty' 1 "empty: no .txt files found in class subdirectories"

# --- order, labels, split vs the Python model --------------------------
tfk-text -q imdb -o out/all 2>err
check "default run: exit 0, quiet" test ! -s err
$PYTHON keras.py imdb 0 1 0 all > want
lf out/all-00000-of-00001.tfrecord > got
check "seed 0: Keras' files, labels and order" cmp want got
testcmd "49 records (4 classes: empty counts, as in Keras)" 'wc -l < got | tr -d " "' "49"
tfk-text -q imdb --seed 1337 --validation-split 0.2 --subset training -o out/tr
tfk-text -q imdb --seed 1337 --validation-split 0.2 --subset validation -o out/va
$PYTHON keras.py imdb 1337 1 0.2 training > want
check "training subset as Keras" sh -c "lf out/tr-00000-of-00001.tfrecord > g; cmp want g"
$PYTHON keras.py imdb 1337 1 0.2 validation > want
check "validation subset as Keras" sh -c "lf out/va-00000-of-00001.tfrecord > g; cmp want g"
testcmd "validation: int(0.2 * 49) = 9 files" 'lf out/va-*.tfrecord | wc -l | tr -d " "' "9"
testcmd "training and validation disjoint and complete" \
	'(lf out/tr-*.tfrecord; lf out/va-*.tfrecord) | sort | uniq -d | wc -l | tr -d " "; (lf out/tr-*.tfrecord; lf out/va-*.tfrecord) | sort > u; lf out/all-*.tfrecord | sort | cmp - u && echo same' \
	"0\nsame"
tfk-text -q imdb --seed 1337 --validation-split 0.2 --subset both -o out/both
check "both: PREFIX-training is the training subset" cmp out/both-training-00000-of-00001.tfrecord out/tr-00000-of-00001.tfrecord
check "both: PREFIX-validation is the validation subset" cmp out/both-validation-00000-of-00001.tfrecord out/va-00000-of-00001.tfrecord
check "both: two schemas" test -s out/both-training.schema.json -a -s out/both-validation.schema.json
tfk-text -q imdb --seed 1337 --validation-split 0.2 --subset training -o out/tr2
check "same seed, same bytes" cmp out/tr-00000-of-00001.tfrecord out/tr2-00000-of-00001.tfrecord
tfk-text -q imdb --seed 7 --validation-split 0.2 --subset training -o out/tr3
check "another seed, another selection" sh -c '! cmp -s out/tr-00000-of-00001.tfrecord out/tr3-00000-of-00001.tfrecord'
tfk-text -q imdb --no-shuffle --validation-split 0.3 --subset validation -o out/ns
$PYTHON keras.py imdb 0 0 0.3 validation > want
check "--no-shuffle: sorted list, last files held out" sh -c "lf out/ns-*.tfrecord > g; cmp want g"
tfk-text -q imdb --labels classes.txt --seed 3 -o out/cl
$PYTHON keras.py imdb 3 1 0 all pos neg > want
check "--labels FILE: those classes in that order" sh -c "lf out/cl-*.tfrecord > g; cmp want g"
testcmd "schema: label names from the file" \
	"$PYTHON -c 'import json; s = json.load(open(\"out/cl.schema.json\")); f = s[\"features\"]; print(f[\"label\"][\"label_names\"], f[\"label\"][\"shape\"], f[\"text\"][\"encoding\"], f[\"filename\"][\"shape\"], s[\"records\"])'" \
	"['pos', 'neg'] [] utf-8 [] 42"
tfk-text -q imdb --class-names pos,neg --seed 3 -o out/cn
check "--class-names pos,neg = --labels FILE, byte for byte" cmp out/cn-00000-of-00001.tfrecord out/cl-00000-of-00001.tfrecord
testerr "--class-names: not a subdirectory" 'tfk-text -q imdb --class-names pos,nope' 1 "class 'nope' is not a subdirectory"
testerr "--class-names: listed twice" 'tfk-text -q imdb --class-names pos,pos' 1 "class 'pos' listed twice"
testerr "--class-names: an empty name" 'tfk-text -q imdb --class-names pos,,neg' 1 "--class-names: name 2 is empty"
testerr "--class-names and --labels FILE" 'tfk-text -q imdb --class-names pos --labels classes.txt' 2 "use one"
testerr "--class-names and --labels none" 'tfk-text -q imdb --class-names pos --labels none' 2 "--class-names needs labels"
tfk-text -q imdb --class-names neg,pos --label-mode binary --no-shuffle -o out/bin
tfk-text -q imdb --class-names neg,pos --label-mode categorical --no-shuffle -o out/cat
tfk-text -q imdb --class-names neg,pos --no-shuffle -o out/int
testcmd "--label-mode binary: float 0/1, categorical: float one-hot, from the int index" \
	"$PYTHON -c '
import os, sys
sys.path.insert(0, os.environ[\"TESTS\"] + \"/py\")
import tfexample as tfe
def labels(p):
    return [tfe.example_to_dict(tfe.Example.FromString(r))[\"label\"] for r in tfe.read_tfrecords(p)]
i, b, c = (labels(\"out/%s-00000-of-00001.tfrecord\" % n) for n in (\"int\", \"bin\", \"cat\"))
print(len(i), b[0][0], c[0][0], all(bb[1] == [float(ii[1][0])] for ii, bb in zip(i, b)),
      all(cc[1] == [float(k == ii[1][0]) for k in range(2)] for ii, cc in zip(i, c)), sorted(set(x[1][0] for x in i)))'" \
	"42 float float True True [0, 1]"
testcmd "  schema: float label of shape [1] and [2]" \
	"$PYTHON -c 'import json; f = [json.load(open(\"out/%s.schema.json\" % n))[\"features\"][\"label\"] for n in (\"bin\", \"cat\")]; print(f[0][\"shape\"], f[1][\"shape\"], f[1][\"label_names\"])'" \
	"[1] [2] ['neg', 'pos']"
testerr "binary needs two classes" 'tfk-text -q imdb --label-mode binary' 1 "--label-mode binary needs exactly 2 classes, not 4"
testerr "unknown label mode" 'tfk-text -q imdb --label-mode sparse' 2 "--label-mode: expected int, categorical or binary"
testerr "label mode needs inferred labels" 'tfk-text -q imdb --labels none --label-mode categorical' 2 "is for inferred labels"
mkdir -p ll/a ll/b && printf one > ll/a/1.txt && printf two > ll/a/2.txt && printf three > ll/b/3.txt
printf '0\n5\n\n0\n' > ll.txt
tfk-text -q ll --label-list ll.txt --no-shuffle -o out/ll
tfk-text -q ll --label-list ll.txt --no-shuffle --label-mode categorical -o out/llc
testcmd "--label-list: each file's value, sorted path order; classes 0 and 5" \
	"$PYTHON dump.py out/ll-00000-of-00001.tfrecord | cut -d'|' -f1,2 | tr '\n' ' '; $PYTHON -c 'import json; print(json.load(open(\"out/ll.schema.json\"))[\"features\"][\"label\"][\"label_names\"])'" \
	"0|a/1.txt 5|a/2.txt 0|b/3.txt ['0', '5']"
testcmd "  categorical: 5 is past the 2 classes, all zeros (tf.one_hot)" \
	"$PYTHON dump.py out/llc-00000-of-00001.tfrecord | cut -d'|' -f1 | tr '\n' ' '" \
	"1.0,0.0 0.0,0.0 1.0,0.0 "
printf '0\n1\n' > ll2.txt
testerr "--label-list: counts must agree" 'tfk-text -q ll --label-list ll2.txt' 1 "ll2.txt: 2 labels for 3 files"
printf '0\n-1\n2\n' > ll3.txt
testerr "--label-list: not a label" 'tfk-text -q ll --label-list ll3.txt' 1 "ll3.txt:2: expected a label from 0 to 2147483647"
testerr "--label-list and --labels" 'tfk-text -q ll --label-list ll.txt --labels none' 2 "--label-list gives every file's label"
testerr "a split that holds out no file" 'tfk-text -q imdb --validation-split 0.02 --subset validation -o out/z' 1 \
	"holds out int(0.98) = 0: no validation files"
tfk-text -q imdb --labels none --seed 3 -o out/none
$PYTHON keras.py imdb 3 1 0 all - > want
check "--labels none: every .txt file, no label" sh -c "lf out/none-*.tfrecord > g; cmp want g"
testcmd "--labels none: features text and filename" \
	"$PYTHON dump.py out/none-00000-of-00001.tfrecord | cut -d'|' -f4 | sort -u" "filename,text"
testcmd "records hold the file's bytes" \
	"$PYTHON -c '
import os, sys
sys.path.insert(0, os.environ[\"TESTS\"] + \"/py\")
import tfexample as tfe
bad = 0
for r in tfe.read_tfrecords(\"out/all-00000-of-00001.tfrecord\"):
    d = tfe.example_to_dict(tfe.Example.FromString(r))
    bad += open(\"imdb/\" + d[\"filename\"][1][0].decode(), \"rb\").read() != d[\"text\"][1][0]
print(bad)'" "0"

# --- archives and threads ------------------------------------------------
tar czf imdb.tgz imdb
tar cf imdb.tar imdb
zip -qr imdb.zip imdb
for a in imdb.tgz imdb.tar imdb.zip; do
	tfk-text -q $a --seed 1337 --validation-split 0.2 --subset training -o out/a
	check "$a: same bytes as the directory" cmp out/a-00000-of-00001.tfrecord out/tr-00000-of-00001.tfrecord
done
(cd imdb && tar czf ../flat.tgz pos neg unsup empty)
tfk-text -q flat.tgz --seed 1337 --validation-split 0.2 --subset training -j 2 -o out/f
check "archive without a top directory, -j 2: same bytes" cmp out/f-00000-of-00001.tfrecord out/tr-00000-of-00001.tfrecord
tfk-text -q imdb -j 2 -o out/j2
check "-j 2 gives the bytes of -j 1" cmp out/j2-00000-of-00001.tfrecord out/all-00000-of-00001.tfrecord
tfk-text -q imdb.tgz -j 3 -o out/j3
check "archive, -j 3: the bytes of the directory" cmp out/j3-00000-of-00001.tfrecord out/all-00000-of-00001.tfrecord
tfk-text imdb.zip -o out/sum 2>err
testcmd "summary line" 'grep -c "tfk-text: wrote 49 records (0 skipped), [0-9]* bytes, 1 shard to out/sum in" err' "1"
testcmd "found line" 'grep -c "found 49 files belonging to 4 classes" err' "1"
head -c 2000 imdb.tgz > cut.tgz
testerr "truncated archive" 'tfk-text cut.tgz -o out/cut' 1 "cut.tgz"
testcmd "  and no output" 'ls out | grep "^cut" | wc -l | tr -d " "' "0"

# --- sharding and compression ---------------------------------------------
tfk-text -q imdb --shard 0/2 -o out/s && tfk-text -q imdb --shard 1/2 -o out/s
testcmd "--shard: task prefixes" 'ls out | grep "^s-task" | sort | tr "\n" " "' \
	"s-task00000-00000-of-00001.tfrecord s-task00000.schema.json s-task00001-00000-of-00001.tfrecord s-task00001.schema.json "
testcmd "--shard 0/2 + 1/2: every file once" \
	'(lf out/s-task0000[01]-*.tfrecord) | sort > a; lf out/all-*.tfrecord | sort | cmp - a && lf out/s-task00000-*.tfrecord | wc -l | tr -d " "' "25"
SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 tfk-text -q imdb -o out/slurm
check "--shard from Slurm" cmp out/slurm-task00001-00000-of-00001.tfrecord out/s-task00001-00000-of-00001.tfrecord
tfk-text -q imdb --num-shards 3 --compression gzip -o out/gz
testcmd "3 gzip shards, all records" 'lf out/gz-0000*-of-00003.tfrecord.gz | sort > g; lf out/all-*.tfrecord | sort | cmp - g && echo ok' "ok"
tfk-text -q imdb > out/stdout.tfrecord
check "stdout: same bytes" cmp out/stdout.tfrecord out/all-00000-of-00001.tfrecord

# --- UTF-8: truncation and validation -------------------------------------
# "a" (1) "é" (2) "€" (3) "😀" (4) "z" (1): character starts at 0 1 3 6 10
for n in 1 2 3 4 5 6 7 9 10 11 12; do
	tfk-text -q utf --max-length $n > out/u$n.tfrecord
done
$PYTHON -c "
s = 'a\u00e9\u20ac\U0001f600z'.encode()
for n in (1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12):
    k = n
    while k < len(s) and (s[k] & 0xc0) == 0x80:
        k -= 1
    print(repr(s[:k]))" > want
(cd out && $PYTHON ../dump.py u1.tfrecord u2.tfrecord u3.tfrecord u4.tfrecord \
	u5.tfrecord u6.tfrecord u7.tfrecord u9.tfrecord u10.tfrecord \
	u11.tfrecord u12.tfrecord) | cut -d'|' -f3 > got
check "--max-length 1..12: cut only at character starts" cmp want got
testcmd "  e.g. 9 bytes keep 6" "sed -n 8p got" "b'a\\xc3\\xa9\\xe2\\x82\\xac'"
testerr "invalid UTF-8 names the file and byte" 'tfk-text bad -o out/bad' 1 \
	"tfk-text: bad/c/latin1.txt: byte 3: not utf-8 text"
testcmd "  and leaves no output" 'ls out | grep "^bad" | wc -l | tr -d " "' "0"
testerr "--skip: skipped and counted" 'tfk-text --skip --no-shuffle bad -o out/bad' 0 \
	"wrote 2 records (1 skipped)"
testcmd "  the other files written" "lf out/bad-00000-of-00001.tfrecord" "0|c/ok.txt\n0|c/z.txt"
testerr "  the file named" 'tfk-text --skip -q bad -o out/bad2; tfk-text --skip bad -o out/bad3' 0 \
	"bad/c/latin1.txt: byte 3: not utf-8 text: skipped"

# --- entries passed over while indexing -----------------------------------
mkdir -p links/c
printf ok > links/c/ok.txt
ln -s nowhere links/c/broken.txt
printf x > "links/c/$(printf 'bad\377')name.txt"
ln -s .. links/c/up
testerr "broken link, loop, non-UTF-8 name: warned, counted, run goes on" \
	'tfk-text --follow-links links -o out/links 2>links.err; rc=$?; cat links.err >&2; exit $rc' \
	0 "3 entries passed over while indexing"
testcmd "  each named" 'grep -c "links/c/broken.txt: broken symlink: skipped\|name is not utf-8: skipped\|links/c/up/c: symlink loop: skipped" links.err' "3"
testcmd "  the good file converted" "lf out/links-00000-of-00001.tfrecord" "0|c/ok.txt"

# --- label map ---------------------------------------------------------
printf 'filename,labels\r\npos/%s,good;film\n"neg/%s",bad\nnope.txt,x\n' \
	"$(cd imdb/pos && ls | grep -i 'txt$' | head -1)" \
	"$(cd imdb/neg && ls | grep -i 'txt$' | head -1)" > map.csv
tfk-text imdb --label-map map.csv --no-shuffle -o out/map 2>err
testcmd "label map: k-hot over sorted names" "$PYTHON dump.py out/map-*.tfrecord | cut -d'|' -f1" \
	"1,0,0,0\n0,1,1,0"
testcmd "  unmapped files counted" 'grep -c "49 files not in map.csv left out, 1 of its lines name no file found" err' "1"
testcmd "  schema: shape [4] and names" \
	"$PYTHON -c 'import json; f = json.load(open(\"out/map.schema.json\"))[\"features\"][\"label\"]; print(f[\"shape\"], f[\"label_names\"])'" \
	"[4] ['bad', 'film', 'good', 'x']"
printf 'a.txt,x,y\n' > badmap.csv
testerr "bad label map line" 'tfk-text imdb --label-map badmap.csv' 1 "badmap.csv:1: expected 2 fields"

# --- lines mode -----------------------------------------------------------
printf 'head\r\none\r\n\r\ntwo\rstill two\nthree' > crlf.txt
printf 'x\ny\n\r' > tail.txt
printf 'skip\nl1\nl2\n' | gzip > g.txt.gz
cat > lines.py <<'EOF'
# TextLineDataset's rules, from its documentation and TF's ReadLine:
# split on \n, drop one trailing \r, keep a last unterminated line if
# it is not empty (after dropping its \r).
import sys, gzip
skip = int(sys.argv[1])
for p in sys.argv[2:]:
    b = open(p, "rb").read()
    if b[:2] == b"\x1f\x8b":
        b = gzip.decompress(b)
    parts = b.split(b"\n")
    last = parts.pop()
    lines = [l[:-1] if l.endswith(b"\r") else l for l in parts]
    last = last[:-1] if last.endswith(b"\r") else last
    if last:
        lines.append(last)
    for l in lines[skip:]:
        print(repr(l))
EOF
tfk-text --lines --skip-header-lines 1 crlf.txt tail.txt g.txt.gz -o out/lines 2>err
$PYTHON lines.py 1 crlf.txt tail.txt g.txt.gz > want
$PYTHON dump.py out/lines-*.tfrecord | cut -d'|' -f3 > got
check "--lines: TextLineDataset's lines" cmp want got
testcmd "  the expected ones" "$PYTHON dump.py out/lines-*.tfrecord | cut -d'|' -f3 | tr '\n' ' '" \
	"b'one' b'' b'two\\\\rstill two' b'three' b'y' b'l1' b'l2' "
testcmd "  feature text only" "$PYTHON dump.py out/lines-*.tfrecord | cut -d'|' -f4 | sort -u" "text"
testcmd "  schema has text only" "$PYTHON -c 'import json; print(list(json.load(open(\"out/lines.schema.json\"))[\"features\"]))'" "['text']"
testcmd "--lines from stdin" "printf 'a\\nb\\n' | tfk-text -q --lines | $PYTHON dump.py /dev/stdin | cut -d'|' -f3" "b'a'\nb'b'"
printf 'ok\ncaf\351\nfine\n' > l1.txt
testerr "--lines: invalid UTF-8 names file and line" 'tfk-text --lines l1.txt -o out/l1' 1 \
	"l1.txt: line 2: byte 3: not utf-8 text"
testerr "--lines --skip" 'tfk-text --lines --skip l1.txt -o out/l1' 0 "wrote 2 records (1 skipped)"
testerr "--lines: missing file" 'tfk-text --lines nothere.txt' 1 "nothere.txt"
tfk-text -q --lines --shard 1/2 crlf.txt tail.txt g.txt.gz l1.txt --skip > out/sh.tfrecord
testcmd "--lines --shard 1/2: every other file" "$PYTHON dump.py out/sh.tfrecord | cut -d'|' -f3 | tr '\n' ' '" \
	"b'x' b'y' b'ok' b'fine' "
tfk-text -q --lines --max-length 2 utf/c/x.txt > out/lm.tfrecord
testcmd "--lines --max-length" "$PYTHON dump.py out/lm.tfrecord | cut -d'|' -f3" "b'a'"

done_testing
