#!/bin/sh
# tfk-idx: Fashion-MNIST (Debian's dataset-fashion-mnist) to TFRecord,
# checked record by record against the IDX files read independently in
# Python (gzip + struct) and the Examples decoded by python3-protobuf
# (tests/py/tfexample.py); shards, compression, -j, --shard, the schema
# sidecar, corrupt input, and no output left after an error or a kill.
. "$(dirname "$0")/lib.sh"

D=/usr/share/datasets/fashion-mnist
TRI=$D/train-images-idx3-ubyte.gz
TRL=$D/train-labels-idx1-ubyte.gz
TEI=$D/t10k-images-idx3-ubyte.gz
TEL=$D/t10k-labels-idx1-ubyte.gz
NAMES='T-shirt/top,Trouser,Pullover,Dress,Coat,Sandal,Shirt,Sneaker,Bag,Ankle boot'
export TRI TRL TEI TEL NAMES
# Run as a whole, not as one task of a Slurm/MPI array.
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE

# oracle.py IMAGES [LABELS] [STRIDE START] -- SHARD...: reads the IDX
# files with gzip + struct, the shards with tfexample.py (records in
# shard order, or round-robin when ROUNDROBIN is set), and prints
# "N records, bytes ok, keys ok, labels ok, pixels ok, crc ok" plus the
# label histogram, or what differs. "bytes ok": each record is exactly
# protobuf's deterministic serialization of the Example it decodes to.
cat >"$T/oracle.py" <<'EOF'
import os, struct, sys, zlib
sys.path.insert(0, os.path.join(os.environ["TESTS"], "py"))
import tfexample as tfe

args = sys.argv[1:]
cut = args.index("--")
head, shards = args[:cut], args[cut + 1:]
images = head[0]
labels = head[1] if len(head) > 1 and head[1] != "-" else None
stride, start = (int(head[2]), int(head[3])) if len(head) > 3 else (1, 0)

def idx(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = zlib.decompress(data, 31)
    zero, typ, rank = struct.unpack(">HBB", data[:4])
    assert zero == 0 and typ == 8, "not a ubyte IDX"
    dims = struct.unpack(">%dI" % rank, data[4:4 + 4 * rank])
    return dims, data[4 + 4 * rank:]

dims, pix = idx(images)
size = 1
for d in dims[1:]:
    size *= d
lab = idx(labels)[1] if labels else None
want = range(start, dims[0], stride)

per_shard = [list(tfe.read_tfrecords(s, verify=False)) for s in shards]
if os.environ.get("ROUNDROBIN"):
    recs = []
    for i in range(max(len(p) for p in per_shard)):
        recs += [p[i] for p in per_shard if i < len(p)]
else:
    recs = [r for p in per_shard for r in p]

# CRCs in pure Python are slow: check the first and last record of
# each shard against an independent CRC-32C.
crc_ok = True
for s in shards:
    blob = open(s, "rb").read()
    if blob[:2] == b"\x1f\x8b":
        blob = zlib.decompress(blob, 31)
    offs, off = [], 0
    while off < len(blob):
        n = struct.unpack("<Q", blob[off:off + 8])[0]
        offs.append((off, n))
        off += 16 + n
    for off, n in offs[:1] + offs[-1:]:
        if struct.unpack("<I", blob[off + 8:off + 12])[0] != tfe.masked_crc(blob[off:off + 8]) or \
           struct.unpack("<I", blob[off + 12 + n:off + 16 + n])[0] != tfe.masked_crc(blob[off + 12:off + 12 + n]):
            crc_ok = False

bad_lab = bad_pix = bad_keys = bad_bytes = 0
hist = [0] * 256
nkeys = 2 if lab else 1
Example = tfe.Example
for i, rec in zip(want, recs):
    ex = Example.FromString(rec)
    if ex.SerializeToString(deterministic=True) != rec:
        bad_bytes += 1
    f = ex.features.feature
    if len(f) != nkeys or "image" not in f or (lab and "label" not in f):
        bad_keys += 1
        continue
    img = f["image"]
    if img.WhichOneof("kind") != "bytes_list" or \
       img.bytes_list.value != [pix[i * size:(i + 1) * size]]:
        bad_pix += 1
    if lab:
        l = f["label"]
        if l.WhichOneof("kind") != "int64_list" or l.int64_list.value != [lab[i]]:
            bad_lab += 1
        else:
            hist[lab[i]] += 1
print("%d records of %d, bytes %s, keys %s, labels %s, pixels %s, crc %s" % (
    len(recs), len(want), "ok" if not bad_bytes else bad_bytes,
    "ok" if not bad_keys else bad_keys,
    "ok" if not bad_lab else bad_lab, "ok" if not bad_pix else bad_pix,
    "ok" if crc_ok else "bad"))
if lab:
    print(" ".join(str(h) for h in hist[:10]))
EOF
# Little scripts, since sh -c in testcmd cannot see shell functions.
printf '#!/bin/sh\nexec "$PYTHON" "%s/oracle.py" "$@"\n' "$T" >"$T/oracle"
chmod +x "$T/oracle"
cat >"$T/schema" <<'EOF'
#!/bin/sh
exec "$PYTHON" -c 'import json, sys; s = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"
EOF
chmod +x "$T/schema"

# --- Fashion-MNIST, whole ------------------------------------------------

testcmd "train: 60,000 records, one shard and a schema" \
	'tfk-idx --images "$TRI" --labels "$TRL" --label-names "$NAMES" -o train -q && ls' \
	'oracle\noracle.py\nschema\ntrain-00000-of-00001.tfrecord\ntrain.schema.json'
testcmd "train: every label and pixel as the IDX files say; 6,000 per class" \
	'./oracle "$TRI" "$TRL" -- train-00000-of-00001.tfrecord' \
	'60000 records of 60000, bytes ok, keys ok, labels ok, pixels ok, crc ok\n6000 6000 6000 6000 6000 6000 6000 6000 6000 6000'
testcmd "train: schema shape, dtype, encoding, range, label names" \
	'./schema train.schema.json "s[\"records\"], s[\"features\"][\"image\"][\"shape\"], s[\"features\"][\"image\"][\"dtype\"], s[\"features\"][\"image\"][\"encoding\"], s[\"features\"][\"image\"][\"size\"][\"max\"], s[\"features\"][\"label\"][\"kind\"], s[\"features\"][\"label\"][\"range\"], s[\"features\"][\"label\"][\"shape\"], s[\"features\"][\"label\"][\"label_names\"]"' \
	"(60000, [28, 28, 1], 'uint8', 'raw', 784, 'int64', {'min': 0, 'max': 9}, [], ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker', 'Bag', 'Ankle boot'])"
testcmd "train: tfk-count agrees (all crcs verified)" \
	'tfk-count train-00000-of-00001.tfrecord | awk "{print \$1, \$2}"' \
	'60000 50280000'

testcmd "t10k to stdout: 10,000 records, 1,000 per class" \
	'tfk-idx --images "$TEI" --labels "$TEL" -q >t10k.tfrecord && ./oracle "$TEI" "$TEL" -- t10k.tfrecord' \
	'10000 records of 10000, bytes ok, keys ok, labels ok, pixels ok, crc ok\n1000 1000 1000 1000 1000 1000 1000 1000 1000 1000'
testcmd "summary line on stderr" \
	'tfk-idx --images "$TEI" --labels "$TEL" -o s 2>&1 >/dev/null | sed "s/ in [0-9.]* s\$//"' \
	'tfk-idx: wrote 10000 records (0 skipped), 8380000 bytes, 1 shard to s'
testcmd "-q: nothing on stderr" \
	'tfk-idx --images "$TEI" --labels "$TEL" -q -o q 2>&1 >/dev/null | wc -c' '0'
testcmd "stdout: no schema sidecar" 'ls | grep schema.json | tr "\\n" " "' \
	'q.schema.json s.schema.json train.schema.json '

# --- shards, compression, -j -----------------------------------------------

testcmd "--num-shards 3: three shards of 3,334/3,333/3,333" \
	'tfk-idx --images "$TEI" --labels "$TEL" --num-shards 3 -q -o rr && ls rr-* && tfk-count rr-*-of-00003.tfrecord | awk "{print \$1}"' \
	'rr-00000-of-00003.tfrecord\nrr-00001-of-00003.tfrecord\nrr-00002-of-00003.tfrecord\n3334\n3333\n3333\n10000'
testcmd "--num-shards 3: record i in shard i % 3" \
	'ROUNDROBIN=1 ./oracle "$TEI" "$TEL" -- rr-00000-of-00003.tfrecord rr-00001-of-00003.tfrecord rr-00002-of-00003.tfrecord | head -1' \
	'10000 records of 10000, bytes ok, keys ok, labels ok, pixels ok, crc ok'
# 838 framed bytes a record: a 2 MiB shard closes after 2,503 records.
testcmd "--shard-size 2M: 4 shards of 2503, 2503, 2503, 2491" \
	'tfk-idx --images "$TEI" --labels "$TEL" --shard-size 2M -q -o sz && tfk-count sz-*-of-00004.tfrecord | awk "{print \$1}"' \
	'2503\n2503\n2503\n2491\n10000'
testcmd "--shard-size: records in order across shards" \
	'./oracle "$TEI" "$TEL" -- sz-00000-of-00004.tfrecord sz-00001-of-00004.tfrecord sz-00002-of-00004.tfrecord sz-00003-of-00004.tfrecord | head -1' \
	'10000 records of 10000, bytes ok, keys ok, labels ok, pixels ok, crc ok'
testcmd "rerun with another count replaces the stale set" \
	'tfk-idx --images "$TEI" --labels "$TEL" -q -o sz && ls sz*' \
	'sz-00000-of-00001.tfrecord\nsz.schema.json'
testcmd "--compression gzip: .tfrecord.gz, same records" \
	'tfk-idx --images "$TEI" --labels "$TEL" --compression gzip -q -o gz && ls gz-* && od -An -tx1 -N2 gz-00000-of-00001.tfrecord.gz && gzip -dc gz-00000-of-00001.tfrecord.gz | cmp - t10k.tfrecord && echo same' \
	'gz-00000-of-00001.tfrecord.gz\n 1f 8b\nsame'
testcmd "--compression zlib: .tfrecord.zlib, read back by tfk-count" \
	'tfk-idx --images "$TEI" --labels "$TEL" --compression zlib -q -o zl && ls zl-* && tfk-count zl-00000-of-00001.tfrecord.zlib | awk "{print \$1}"' \
	'zl-00000-of-00001.tfrecord.zlib\n10000'
testcmd "-j 2 and -j 3: byte-identical output" \
	'tfk-idx --images "$TRI" --labels "$TRL" --label-names "$NAMES" -j 2 -q -o j2 && tfk-idx --images "$TEI" --labels "$TEL" -j 3 --num-shards 2 -q -o j3 && tfk-idx --images "$TEI" --labels "$TEL" --num-shards 2 -q -o j1 && cmp j2-00000-of-00001.tfrecord train-00000-of-00001.tfrecord && cmp j3-00000-of-00002.tfrecord j1-00000-of-00002.tfrecord && cmp j3-00001-of-00002.tfrecord j1-00001-of-00002.tfrecord && cmp j2.schema.json train.schema.json && cmp j3.schema.json j1.schema.json && echo same' \
	'same'
testcmd "--shard 1/4: items 1, 5, 9, ... under PREFIX-task00001" \
	'tfk-idx --images "$TEI" --labels "$TEL" --shard 1/4 -q -o part && ls part* && ./oracle "$TEI" "$TEL" 4 1 -- part-task00001-00000-of-00001.tfrecord | head -1' \
	'part-task00001-00000-of-00001.tfrecord\npart-task00001.schema.json\n2500 records of 2500, bytes ok, keys ok, labels ok, pixels ok, crc ok'
testcmd "Slurm array task 3 of 1-4: --shard 2/4 by default" \
	'SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_COUNT=4 SLURM_ARRAY_TASK_MIN=1 tfk-idx --images "$TEI" --labels "$TEL" -q -o sl && ls sl* && ./oracle "$TEI" "$TEL" 4 2 -- sl-task00002-00000-of-00001.tfrecord | head -1' \
	'sl-task00002-00000-of-00001.tfrecord\nsl-task00002.schema.json\n2500 records of 2500, bytes ok, keys ok, labels ok, pixels ok, crc ok'
testcmd "--images alone: records hold only the image" \
	'tfk-idx --images "$TEI" -q >img.tfrecord && ./oracle "$TEI" - -- img.tfrecord' \
	'10000 records of 10000, bytes ok, keys ok, labels ok, pixels ok, crc ok'
printf 'T-shirt/top\nTrouser\nPullover\nDress\nCoat\nSandal\nShirt\nSneaker\nBag\nAnkle boot\n' >"$T/names.txt"
testcmd "--label-names @FILE, --image-key/--label-key" \
	'tfk-idx --images "$TEI" --labels "$TEL" --label-names @names.txt --image-key pixels --label-key class -q -o nf && ./schema nf.schema.json "list(s[\"features\"]), s[\"features\"][\"class\"][\"label_names\"][9], s[\"features\"][\"pixels\"][\"shape\"]"' \
	"(['pixels', 'class'], 'Ankle boot', [28, 28, 1])"

# Uncompressed input and a plain (non-gzip) IDX from stdin.
gzip -dc "$TEI" >"$T/t10k-images.idx"
gzip -dc "$TEL" >"$T/t10k-labels.idx"
testcmd "plain IDX files and images from stdin give the same bytes" \
	'tfk-idx --images - --labels t10k-labels.idx -q <t10k-images.idx | cmp - t10k.tfrecord && echo same' \
	'same'

# --- corrupt input: exit 1, file and place named, nothing written ----------

"$PYTHON" -c '
import sys
d = open(sys.argv[1], "rb").read()
open(sys.argv[2] + "/badmagic.idx", "wb").write(b"\x01" + d[1:])
open(sys.argv[2] + "/float.idx", "wb").write(d[:2] + b"\x0d" + d[3:8] + b"\0\0\0\x07" + d[12:])
open(sys.argv[2] + "/short.idx", "wb").write(d[:-100])
open(sys.argv[2] + "/long.idx", "wb").write(d + b"\0\0\0")
open(sys.argv[2] + "/rank2.idx", "wb").write(d[:3] + b"\x02" + d[4:8] + b"\0\0\x03\x10" + d[16:])
' "$T/t10k-images.idx" "$T"
gzip -c "$T/short.idx" >"$T/short.idx.gz"
head -c 2000000 "$TEI" >"$T/cut.idx.gz"
"$PYTHON" -c '
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[8 + 17] = 10
open(sys.argv[2], "wb").write(bytes(d))
' "$T/t10k-labels.idx" "$T/label10.idx"

testerr "bad magic" 'tfk-idx --images badmagic.idx -o bad' 1 \
	'tfk-idx: badmagic.idx: byte 0: bad magic 0x01000803: not an IDX file'
testerr "float images refused" 'tfk-idx --images float.idx -o bad' 1 \
	'tfk-idx: float.idx: byte 2: type float32 (0x0d): images must be ubyte (0x08)'
testerr "wrong rank: labels given as images" 'tfk-idx --images "$TEL" -o bad' 1 \
	'byte 3: rank 1: images have rank 3 (count, rows, columns) or 4'
testerr "wrong rank: images given as labels" 'tfk-idx --images "$TEI" --labels "$TEI" -o bad' 1 \
	't10k-images-idx3-ubyte.gz: byte 3: rank 3: labels have rank 1 (count)'
testerr "rank 2 images refused" 'tfk-idx --images rank2.idx -o bad' 1 \
	'rank2.idx: byte 3: rank 2: images have rank 3'
testerr "truncated plain file" 'tfk-idx --images short.idx -o bad' 1 \
	'tfk-idx: short.idx: item 9999 at byte 7839232: file ends inside the data: 10000 items of 784 bytes need 7840016 bytes, the file has 7839916'
testerr "padded plain file" 'tfk-idx --images long.idx -o bad' 1 \
	'tfk-idx: long.idx: byte 7840016: 3 unexpected bytes after the last of 10000 items'
testerr "truncated data inside gzip (found while writing)" 'tfk-idx --images short.idx.gz -o bad' 1 \
	'tfk-idx: short.idx.gz: item 9999 at byte 7839232: file ends inside the item (684 of 784 bytes)'
testerr "gzip stream cut short" 'tfk-idx --images cut.idx.gz -o bad' 1 \
	'tfk-idx: cut.idx.gz: gzip stream truncated at compressed byte'
testerr "count mismatch between images and labels" 'tfk-idx --images "$TRI" --labels "$TEL" -o bad' 1 \
	't10k-labels-idx1-ubyte.gz: byte 4: 10000 labels, but /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz holds 60000 images'
testerr "a label without a name" \
	'tfk-idx --images t10k-images.idx --labels label10.idx --label-names "$NAMES" -o bad' 1 \
	'tfk-idx: label10.idx: item 17 at byte 25: label 10 has no name (--label-names gives 10)'
testerr "missing file" 'tfk-idx --images nope.idx -o bad' 1 'nope.idx'
testcmd "errors left no output at all (no shard, schema or temporary)" \
	'ls -A | grep "^\.\?bad[-.]" | wc -l' '0'

# --- kill during the write: nothing left ---------------------------------------

mkdir "$T/kill"
mkfifo "$T/fifo"
# 3 MB of images through a FIFO that stays open: tfk-idx has written
# its first batches to a temporary and waits for more when it is killed.
testcmd "SIGTERM while writing leaves no file" '
	tfk-idx --images fifo -o kill/out -q &
	pid=$!
	exec 3>fifo
	head -c 3000000 t10k-images.idx >&3
	i=0
	while [ $i -lt 100 ] && [ -z "$(ls -A kill)" ]; do sleep 0.05; i=$((i + 1)); done
	ls -A kill | grep -c "^\.out-.*tmp"
	kill -TERM $pid; wait $pid; echo "exit $?"
	exec 3>&-
	ls -A kill | wc -l' \
	'1\nexit 143\n0'

# --- usage errors: exit 2 ----------------------------------------------------------

testerr "no --images" 'tfk-idx --labels "$TEL"' 2 '--images FILE is required'
testerr "positional argument" 'tfk-idx "$TEI"' 2 "unexpected argument"
testerr "--label-names without --labels" 'tfk-idx --images "$TEI" --label-names a,b' 2 \
	'--label-names needs --labels'
testerr "empty label name" 'tfk-idx --images "$TEI" --labels "$TEL" --label-names "a,,b"' 2 \
	'--label-names: name 1 is empty'
testerr "--num-shards on stdout" 'tfk-idx --images "$TEI" --num-shards 3' 2 \
	'--num-shards 3 needs -o PREFIX'
testerr "unknown compression" 'tfk-idx --images "$TEI" --compression bz2 -o x' 2 \
	'--compression: expected none, gzip or zlib'
testerr "both from stdin" 'tfk-idx --images - --labels -' 2 \
	'cannot both read stdin'
testerr "same key twice" 'tfk-idx --images "$TEI" --image-key a --label-key a' 2 \
	'must be two different non-empty names'
testcmd "--help shows the example" 'tfk-idx --help | grep -c "tfk-idx --images train-images"' '1'

done_testing
