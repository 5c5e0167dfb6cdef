"""t-records.py: TensorFlow 2.21 as the judge of the records layer.

TensorFlow reads what tfkit writes (TFRecord framing plain, GZIP and
ZLIB; tf.Example values through tf.io.parse_single_example), tfkit reads
what TensorFlow writes (tfk-count, tfk-cat --json, --sequence), and the
pipeline tools give the elements tf.data gives on the same files, in the
same order: tfk-cat (interleave, shard, skip/take/repeat), tfk-batch
(batch, padded_batch), tfk-unbatch, tfk-filter, tfk-zip, tfk-shuffle.
Element identity is the record's bytes where a tool copies records, and
the values TensorFlow parses where it builds them. Floats are compared
by their 32-bit patterns (exact), so NaN, -0.0 and denormals count.
"""
import base64
import json
import os
import random
import re

from tftap import T

t = T()

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

COMP = {"none": "", "gzip": "GZIP", "zlib": "ZLIB"}
DT = {"float": tf.float32, "int64": tf.int64, "bytes": tf.string}


# --- helpers --------------------------------------------------------------

def f32(v):
    """The float32 bit pattern of v, as an int (exact comparison)."""
    return int(np.array([v], dtype=np.float32).view(np.uint32)[0])


def canon(kind, vals):
    """(kind, values) comparable with ==: floats as bit patterns."""
    if kind == "float":
        return (kind, [f32(v) for v in vals])
    if kind == "bytes":
        return (kind, [bytes(v) for v in vals])
    return (kind, [int(v) for v in vals])


def first_diff(got, want):
    """Where two lists first differ, for a failure's diagnostics."""
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return "element %d differs:\n  got:  %r\n  want: %r" % (i, g, w)
    return "lengths differ: got %d, want %d" % (len(got), len(want))


def same(got, want, what):
    """ok when the lists are equal; else the first differing element."""
    good = got == want
    if not good:
        t.diag(first_diff(list(got), list(want)))
    else:
        t.diag("%d elements equal" % len(want))
    return t.ok(good, what)


def tf_records(path, comp=""):
    return [r.numpy() for r in tf.data.TFRecordDataset(path,
                                                       compression_type=comp)]


def write_tf(path, payloads, comp=""):
    opts = tf.io.TFRecordOptions(compression_type=comp)
    with tf.io.TFRecordWriter(path, options=opts) as w:
        for p in payloads:
            w.write(p)


def tf_parse(rec, kinds):
    """TensorFlow's parse of one Example: name -> (kind, values)."""
    spec = {n: tf.io.VarLenFeature(DT[k]) for n, k in kinds.items()}
    got = tf.io.parse_single_example(rec, spec)
    return {n: canon(k, got[n].values.numpy().tolist())
            for n, k in kinds.items()}


def kinds_of(rec):
    """Feature kinds as TensorFlow's protobuf reads them."""
    ex = tf.train.Example.FromString(rec)
    out = {}
    for n, f in ex.features.feature.items():
        k = f.WhichOneof("kind")
        out[n] = {"float_list": "float", "int64_list": "int64",
                  "bytes_list": "bytes"}.get(k, "none")
    return out


def make_example(rec):
    """tf.train.Example from name -> (kind, values)."""
    ex = tf.train.Example()
    for n, (k, vals) in rec.items():
        f = ex.features.feature[n]
        if k == "float":
            f.float_list.SetInParent()
            f.float_list.value.extend(vals)
        elif k == "int64":
            f.int64_list.SetInParent()
            f.int64_list.value.extend(vals)
        else:
            f.bytes_list.SetInParent()
            f.bytes_list.value.extend(vals)
    return ex


def json_value(k, v):
    if k == "bytes":
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return {"b64": base64.b64encode(v).decode()}
    if k == "float":
        return float(np.float32(v))  # json writes NaN, Infinity as we do
    return int(v)


def json_line(rec):
    obj = {}
    for n, (k, vals) in rec.items():
        jv = [json_value(k, v) for v in vals]
        obj[n] = jv if vals else {k: []}
    return json.dumps(obj, separators=(",", ":"))


def from_json(obj, kinds):
    """name -> (kind, values) from one tfk-cat --json object."""
    out = {}
    for n, v in obj.items():
        k = kinds.get(n)
        if isinstance(v, dict) and len(v) == 1 and "b64" not in v:
            k2, vals = next(iter(v.items()))
            out[n] = canon(k2, vals)
            continue
        vals = v if isinstance(v, list) else [v]
        vals = [base64.b64decode(x["b64"]) if isinstance(x, dict)
                else x.encode() if isinstance(x, str) else x for x in vals]
        out[n] = canon(k, vals)
    return out


def varint(b, i):
    v = sh = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << sh
        sh += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(field number, bytes) of each length-delimited field, in order."""
    i, out = 0, []
    while i < len(b):
        tag, i = varint(b, i)
        assert tag & 7 == 2, "not a message field"
        n, i = varint(b, i)
        out.append((tag >> 3, b[i:i + n]))
        i += n
    return out


def wire_names(rec):
    """Feature names of a serialized Example in wire order (protobuf's
    Python maps iterate in their own order, not the wire's)."""
    names = []
    for num, feats in fields(rec):
        for num2, entry in fields(feats):
            for num3, v in fields(entry):
                if num3 == 1:
                    names.append(v.decode("utf-8", "replace"))
    return names


def want_values(rec):
    return {n: canon(k, v) for n, (k, v) in rec.items()}


# --- the corpus of Examples -----------------------------------------------

rng = random.Random(20261201)
SPECIAL = [
    {"f": ("float", [0.5, -1.25, 3.4028235e38, 1e-45, 0.1, -0.0,
                     float("nan"), float("inf"), float("-inf")]),
     "i": ("int64", [0, -1, 2**63 - 1, -2**63, 2**53 + 1, -300]),
     "b": ("bytes", [b"", b"hello", b"\xff\x00\xfe", "\u00e9\u2603".encode()]),
     "ef": ("float", []), "ei": ("int64", []), "eb": ("bytes", [])},
    {"f%03d" % j: ("int64", [j, -j]) for j in range(200)},
]


def random_record():
    rec = {}
    for j in range(rng.randrange(1, 7)):
        k = rng.choice(["float", "int64", "bytes"])
        n = rng.choice([0, 1, 1, 2, 5])
        if k == "float":
            vals = [float(np.float32(rng.uniform(-1e6, 1e6))) for _ in range(n)]
        elif k == "int64":
            vals = [rng.randrange(-2**63, 2**63) for _ in range(n)]
        else:
            vals = [bytes(rng.randrange(256) for _ in range(rng.randrange(6)))
                    for _ in range(n)]
        rec["x%d" % j] = (k, vals)
    return rec


CORPUS = SPECIAL + [random_record() for _ in range(40)]
KINDS = [{n: k for n, (k, _) in r.items()} for r in CORPUS]
WANT = [want_values(r) for r in CORPUS]
jsonl = t.path("corpus.jsonl")
with open(jsonl, "w") as fh:
    for r in CORPUS:
        fh.write(json_line(r) + "\n")

# --- TensorFlow reads ours ------------------------------------------------

for name, comp in COMP.items():
    out = t.path("ours-%s.tfrecord" % name)
    t.tool("tfk-json", "--compression", name, "-o", out, jsonl)
    recs = tf_records(out, comp)
    t.eq(len(recs), len(CORPUS), "TFRecordDataset(%r) reads all %d records "
         "tfk-json wrote" % (comp, len(CORPUS)))
    same([tf_parse(r, k) for r, k in zip(recs, KINDS)], WANT,
         "tf.io.parse_single_example of our %s Examples gives the values "
         "(floats by bits, int64 extremes, non-UTF-8 bytes, empty lists, "
         "200 features)" % name)
    same([kinds_of(r) for r in recs], KINDS,
         "  every feature has the kind it was written with (%s)" % name)

# batch parsing, the numbers themselves
recs = tf_records(t.path("ours-none.tfrecord"))
got = tf.io.parse_example(recs[:1], {"f": tf.io.VarLenFeature(tf.float32)})
t.close(got["f"].values.numpy()[:6], np.float32([0.5, -1.25, 3.4028235e38,
                                                 1e-45, 0.1, -0.0]), 0,
        "tf.io.parse_example: our finite floats exactly")

# --- we read TensorFlow's -------------------------------------------------

payloads = [make_example(r).SerializeToString() for r in CORPUS]
for name, comp in COMP.items():
    path = t.path("tf-%s.tfrecord" % name)
    write_tf(path, payloads, comp)
    out = t.tool("tfk-count", "--json", path)
    t.eq(json.loads(out)["records"], len(CORPUS),
         "tfk-count counts the %d records tf.io.TFRecordWriter wrote (%s)" %
         (len(CORPUS), name))
    lines = t.tool("tfk-cat", "--json", path).decode().splitlines()
    same([from_json(json.loads(l), k) for l, k in zip(lines, KINDS)], WANT,
         "tfk-cat --json gives the values TensorFlow put in (%s)" % name)
    framed = t.tool("tfk-cat", path)
    plain = t.path("tf-%s.copy" % name)
    open(plain, "wb").write(framed)
    same(tf_records(plain), payloads,
         "tfk-cat of TF's %s file: TensorFlow reads the same payloads" % name)

# tfk-inspect's schema of TF's file: kinds and counts as protobuf reads them
sch = json.loads(t.tool("tfk-inspect", "--json", t.path("tf-none.tfrecord")))
want = {}
for r in payloads:
    for n, k in kinds_of(r).items():
        w = want.setdefault(n, {"kind": k, "count": 0})
        w["count"] += 1
        if w["kind"] != k:
            w["kind"] = "mixed"
t.eq(sch["records"], len(payloads), "tfk-inspect --json: the record count")
same(sorted((n, f["kind"], f["count"]) for n, f in sch["features"].items()),
     sorted((n, w["kind"], w["count"]) for n, w in want.items()),
     "  each feature's kind and count, as TensorFlow's protobuf reads them")

# SequenceExamples written by TensorFlow
seqs = []
for j in range(12):
    s = tf.train.SequenceExample()
    s.context.feature["id"].int64_list.value.append(j - 5)
    s.context.feature["name"].bytes_list.value.append(b"\xfe%d" % j)
    tok = s.feature_lists.feature_list["tok"]
    emb = s.feature_lists.feature_list["emb"]
    for k in range(j % 4):
        tok.feature.add().int64_list.value.extend(range(k, k + j % 3))
        emb.feature.add().float_list.value.extend([0.25 * k, -1e-3 * j])
    if j % 4 == 0:
        s.feature_lists.feature_list["tok"].SetInParent()
    seqs.append(s.SerializeToString())
seqf = t.path("tf-seq.tfrecord")
write_tf(seqf, seqs)
lines = t.tool("tfk-cat", "--json", "--sequence", seqf).decode().splitlines()
ours, theirs = [], []
for rec, line in zip(tf_records(seqf), lines):
    ctx, fl = tf.io.parse_single_sequence_example(
        rec, context_features={"id": tf.io.VarLenFeature(tf.int64),
                               "name": tf.io.VarLenFeature(tf.string)},
        sequence_features={"tok": tf.io.RaggedFeature(tf.int64),
                           "emb": tf.io.RaggedFeature(tf.float32)})
    theirs.append({
        "id": canon("int64", ctx["id"].values.numpy().tolist()),
        "name": canon("bytes", ctx["name"].values.numpy().tolist()),
        "tok": [canon("int64", r) for r in fl["tok"].to_list()],
        "emb": [canon("float", r) for r in fl["emb"].to_list()]})
    obj = json.loads(line)
    c = from_json(obj["context"], {"id": "int64", "name": "bytes"})
    steps = obj["feature_lists"]
    c["tok"] = [from_json({"x": s}, {"x": "int64"})["x"]
                for s in steps.get("tok", [])]
    c["emb"] = [from_json({"x": s}, {"x": "float"})["x"]
                for s in steps.get("emb", [])]
    ours.append(c)
t.eq(len(lines), len(seqs), "tfk-cat --sequence --json: one line per "
     "SequenceExample TensorFlow wrote")
same(ours, theirs, "  context and feature lists as "
     "tf.io.parse_single_sequence_example gives them")

# --- defect: the JSON round trip of empty lists ---------------------------

path = t.path("tf-none.tfrecord")
rc, lines, err = t.run("tfk-cat", "--json", path)
rc2, back, err2 = t.run("tfk-json", "-o", t.path("rt.tfrecord"), stdin=lines,
                        check=False)
t.ok(rc2 == 0, "tfk-cat --json | tfk-json needs no schema for empty lists") \
    or t.diag(err2)
if rc2 == 0:
    rt = tf_records(t.path("rt.tfrecord"))
    same([kinds_of(r) for r in rt], KINDS,
         "  TensorFlow reads the round trip with every feature's kind")
    same([tf_parse(r, k) for r, k in zip(rt, KINDS)], WANT,
         "  and the same values")
    same(rt, payloads, "  and TensorFlow's own bytes, record for record")

# --- defect: messages for records that are not Examples -------------------

logdir = t.path("logs")
with tf.summary.create_file_writer(logdir).as_default():
    for step in range(3):
        tf.summary.scalar("loss", 1.0 / (step + 1), step=step)
ev = os.path.join(logdir, os.listdir(logdir)[0])
n_ev = len(tf_records(ev))
out = t.tool("tfk-count", "--json", ev)
t.eq(json.loads(out)["records"], n_ev, "tfk-count counts the %d records of a "
     "tf.summary event file" % n_ev)
rc, _, err = t.run("tfk-cat", "--json", ev, check=False)
t.ok(rc == 1 and "record 0 at byte 0" in err and "tensorflow.Event" in err
     and 'file_version "brain.Event:2"' in err and "--raw" in err,
     "tfk-cat --json on a tf.summary event file says it is a TensorBoard "
     "event file and points to --raw") or t.diag(err)
rc, _, err = t.run("tfk-cat", "--json", seqf, check=False)
t.ok(rc == 1 and "SequenceExample" in err and "--sequence" in err,
     "tfk-cat --json on TF's SequenceExamples points to --sequence") \
    or t.diag(err)

# a file cut in the middle of a record: TensorFlow and we name the same offset
full = open(path, "rb").read()
offs, off = [], 0
for p in payloads:
    offs.append(off)
    off += len(p) + 16
k = 3
cut = t.path("cut.tfrecord")
open(cut, "wb").write(full[:offs[k] + 12 + len(payloads[k]) // 2])
try:
    tf_records(cut)
    tf_msg = ""
except tf.errors.DataLossError as e:
    tf_msg = str(e)
m = re.search(r"truncated record at (\d+)", tf_msg)
t.ok(m and int(m.group(1)) == offs[k], "TensorFlow reports the cut file "
     "truncated at byte %d (record %d)" % (offs[k], k)) or t.diag(tf_msg[:300])
for tool in ("tfk-cat", "tfk-count", "tfk-inspect"):
    args = ["--json", cut] if tool == "tfk-cat" else [cut]
    rc, _, err = t.run(tool, *args, check=False)
    t.ok(rc == 1 and "%s: %s: record %d at byte %d: truncated" %
         (tool, cut, k, offs[k]) in err,
         "%s on the cut file: truncated, with the file and byte %d" %
         (tool, offs[k])) or t.diag(err)

# a GZIP file cut short: both refuse it, we with the word "truncated"
gz = open(t.path("tf-gzip.tfrecord"), "rb").read()
gcut = t.path("cut.tfrecord.gz")
open(gcut, "wb").write(gz[:len(gz) // 2])
try:
    tf_records(gcut, "GZIP")
    tf_msg = ""
except (tf.errors.DataLossError, tf.errors.OutOfRangeError) as e:
    tf_msg = str(e).splitlines()[0]
rc, _, err = t.run("tfk-count", gcut, check=False)
t.ok(tf_msg and rc == 1 and "%s: gzip stream truncated" % gcut in err,
     "a GZIP file cut in half: TensorFlow refuses it, tfk-count says "
     "truncated") or t.diag("tf: %s\nours: %s" % (tf_msg, err))

# --- the pipeline tools against tf.data -----------------------------------

SIZES = [7, 3, 10, 1, 6]
files = []
for fi, n in enumerate(SIZES):
    p = t.path("part-%d.tfrecord" % fi)
    recs = []
    for j in range(n):
        recs.append(make_example({
            "file": ("int64", [fi]), "i": ("int64", [j]),
            "x": ("float", [float(np.float32(rng.random()))]),
            "s": ("bytes", [rng.choice([b"apple", b"bean", b"\xffcorn"])]),
            "v": ("float", [float(k) for k in range(j % 4)])
        }).SerializeToString())
    write_tf(p, recs)
    files.append(p)


def cat(*args):
    out = t.path("cat.out")
    t.tool("tfk-cat", "-o", out, *args)
    return tf_records(out)


def ds_files():
    return tf.data.TFRecordDataset(files)


def ds_interleave(c, b):
    return tf.data.Dataset.from_tensor_slices(files).interleave(
        tf.data.TFRecordDataset, cycle_length=c, block_length=b)


def elems(ds):
    return [e.numpy() for e in ds]


for c, b in [(1, 1), (2, 1), (3, 2), (5, 3), (4, 1), (2, 10)]:
    same(cat("--interleave", c, "--block", b, *files),
         elems(ds_interleave(c, b)),
         "tfk-cat --interleave %d --block %d = Dataset.interleave("
         "cycle_length=%d, block_length=%d) over 5 files" % (c, b, c, b))
for i, n in [(0, 3), (2, 3), (1, 4)]:
    same(cat("--shard", "%d/%d" % (i, n), *files),
         elems(ds_files().shard(n, i)),
         "tfk-cat --shard %d/%d = Dataset.shard(%d, %d)" % (i, n, n, i))
same(cat("--interleave", 3, "--block", 2, "--shard", "1/2", *files),
     elems(ds_interleave(3, 2).shard(2, 1)),
     "tfk-cat --interleave 3 --block 2 --shard 1/2 = interleave then shard")
same(cat("--shard-files", "--shard", "1/2", "--interleave", 2, *files),
     elems(tf.data.Dataset.from_tensor_slices(files).shard(2, 1).interleave(
         tf.data.TFRecordDataset, cycle_length=2, block_length=1)),
     "tfk-cat --shard-files --shard 1/2 --interleave 2 = files.shard then "
     "interleave")
for sk, tk, rp in [(5, 8, 1), (0, -1, 3), (20, 100, 2), (3, 0, 2),
                   (26, -1, 1)]:
    same(cat("--skip", sk, "--take", tk, "--repeat", rp, *files),
         elems(ds_files().skip(sk).take(tk).repeat(rp)),
         "tfk-cat --skip %d --take %d --repeat %d = skip/take/repeat" %
         (sk, tk, rp))
same(cat("--interleave", 2, "--shard", "0/2", "--skip", 2, "--take", 5,
         "--repeat", 2, *files),
     elems(ds_interleave(2, 1).shard(2, 0).skip(2).take(5).repeat(2)),
     "tfk-cat --interleave 2 --shard 0/2 --skip 2 --take 5 --repeat 2 = "
     "the same chain in tf.data")

# one file of all 27 records for the record-building tools
allf = t.path("all.tfrecord")
open(allf, "wb").write(t.tool("tfk-cat", *files))
ROWS = tf_records(allf)
N_ROWS = len(ROWS)
FEATS = {"file": "int64", "i": "int64", "x": "float", "s": "bytes",
         "v": "float"}


def tf_rows(ds):
    """Parsed rows of a dataset of serialized Examples."""
    return [tf_parse(r.numpy(), FEATS) for r in ds]


def our_rows(batched):
    """Rows of our batched records, as TensorFlow parses them."""
    out = []
    for rec in batched:
        kinds = dict(FEATS, _batch="int64")
        kinds.update({n + "/row_lengths": "int64" for n in FEATS})
        got = tf_parse(rec, kinds)
        r = got["_batch"][1][0]
        rows = [{} for _ in range(r)]
        for n, k in FEATS.items():
            vals = got[n][1]
            lens = got[n + "/row_lengths"][1] or [len(vals) // r] * r
            at = 0
            for j, ln in enumerate(lens):
                rows[j][n] = (k, vals[at:at + ln])
                at += ln
        out.append(rows)
    return out


def batch(*args):
    out = t.path("batch.out")
    t.tool("tfk-batch", "-o", out, *args)
    return tf_records(out)


def parse_ragged(r):
    return tf.io.parse_single_example(r, {
        "file": tf.io.FixedLenFeature([], tf.int64),
        "i": tf.io.FixedLenFeature([], tf.int64),
        "x": tf.io.FixedLenFeature([], tf.float32),
        "s": tf.io.FixedLenFeature([], tf.string),
        "v": tf.io.RaggedFeature(tf.float32)})


def tf_batches(ds):
    """Rows of each batch of a batched tf.data dataset of dicts."""
    out = []
    for b in ds:
        r = int(b["i"].shape[0])
        rows = []
        for j in range(r):
            rows.append({
                "file": canon("int64", [b["file"][j].numpy()]),
                "i": canon("int64", [b["i"][j].numpy()]),
                "x": canon("float", [b["x"][j].numpy()]),
                "s": canon("bytes", [b["s"][j].numpy()]),
                "v": canon("float", b["v"][j].numpy().tolist())})
        out.append(rows)
    return out


parsed = tf.data.TFRecordDataset(allf).map(parse_ragged)
for n, drop in [(4, False), (4, True), (1, False), (27, False), (10, True),
                (30, False)]:
    args = ["--drop-remainder"] if drop else []
    same(our_rows(batch(*args, n, allf)),
         tf_batches(parsed.ragged_batch(n, drop_remainder=drop)),
         "tfk-batch %d%s = Dataset.ragged_batch(%d, drop_remainder=%s) "
         "(rows, ragged v by row_lengths)" % (n, " --drop-remainder" * drop,
                                              n, drop))

# Dataset.batch itself, on the fixed-length features: [R] columns
fixed = tf.data.TFRecordDataset(allf).map(
    lambda r: tf.io.parse_single_example(r, {
        "i": tf.io.FixedLenFeature([], tf.int64),
        "x": tf.io.FixedLenFeature([], tf.float32),
        "s": tf.io.FixedLenFeature([], tf.string)}))
for n, drop in [(4, False), (4, True)]:
    args = ["--drop-remainder"] if drop else []
    got = [tf_parse(r, {"i": "int64", "x": "float", "s": "bytes"})
           for r in batch(*args, n, allf)]
    want = [{"i": canon("int64", b["i"].numpy().tolist()),
             "x": canon("float", b["x"].numpy().tolist()),
             "s": canon("bytes", b["s"].numpy().tolist())}
            for b in fixed.batch(n, drop_remainder=drop)]
    same(got, want, "tfk-batch %d%s = Dataset.batch(%d, drop_remainder=%s) "
         "on the fixed-length features (one value a row, in row order)" %
         (n, " --drop-remainder" * drop, n, drop))

# padded_batch: the padded values themselves, [R, L], and the true lengths
vds = tf.data.TFRecordDataset(allf).map(
    lambda r: tf.sparse.to_dense(tf.io.parse_single_example(
        r, {"v": tf.io.VarLenFeature(tf.float32)})["v"]))
lens_tf = [len(x) for x in elems(vds)]
for n, drop, pad_to in [(4, False, 0), (5, True, 0), (4, False, 6)]:
    args = ["--pad", "v=-2.5"] + (["--drop-remainder"] if drop else [])
    if pad_to:
        args += ["--pad-to", pad_to]
    got = batch(*args, n, allf)
    want = elems(vds.padded_batch(n, padded_shapes=[pad_to or None],
                                  padding_values=-2.5, drop_remainder=drop))
    good = len(got) == len(want)
    maxerr, first = 0.0, None
    lens_ours = []
    for bi, (g, w) in enumerate(zip(got, want)):
        p = tf.io.parse_single_example(g, {
            "_batch": tf.io.VarLenFeature(tf.int64),
            "v": tf.io.VarLenFeature(tf.float32),
            "v/row_lengths": tf.io.VarLenFeature(tf.int64)})
        r = int(p["_batch"].values[0])
        vals = p["v"].values.numpy()
        lens_ours += p["v/row_lengths"].values.numpy().tolist()
        if r != w.shape[0] or vals.size != w.size:
            good = False
            first = first or "batch %d: %d values for %d rows, want shape " \
                "%s" % (bi, vals.size, r, w.shape)
            continue
        d = np.abs(vals.reshape(w.shape) - w)
        maxerr = max(maxerr, float(d.max()) if d.size else 0.0)
        if d.size and d.max() != 0 and first is None:
            first = "batch %d: got %s\nwant %s" % (
                bi, vals.reshape(w.shape).tolist(), w.tolist())
    good = good and maxerr == 0 and first is None
    t.diag("max absolute error %.3g" % maxerr)
    if first:
        t.diag(first)
    pad_s = " --pad-to %d" % pad_to if pad_to else ""
    t.ok(good, "tfk-batch %d --pad v=-2.5%s%s = padded_batch(%d, padded_shapes="
         "[%s], padding_values=-2.5, drop_remainder=%s)" % (
             n, pad_s, " --drop-remainder" * drop, n, pad_to or None, drop))
    want_lens = lens_tf[:len(want) * n] if drop else lens_tf
    same(lens_ours, want_lens, "  v/row_lengths are the true lengths")

# unbatch
ub = t.path("unbatch.out")
b4 = t.path("batch4.tfrecord")
t.tool("tfk-batch", "-o", b4, 4, allf)
t.tool("tfk-unbatch", "-o", ub, b4)


def row_of(d):
    return {n: canon(k, np.atleast_1d(d[n].numpy()).tolist())
            for n, k in FEATS.items()}


same([tf_parse(r, FEATS) for r in tf_records(ub)],
     [row_of(d) for d in parsed.ragged_batch(4).unbatch()],
     "tfk-batch 4 | tfk-unbatch = Dataset.ragged_batch(4).unbatch() "
     "(values)")
same(tf_records(ub), ROWS, "  and the records come back byte for byte")
pb = t.path("padded.tfrecord")
t.tool("tfk-batch", "--pad", "v=0", "-o", pb, 4, allf)
t.tool("tfk-unbatch", "-o", ub, pb)
same(tf_records(ub), ROWS, "tfk-unbatch of a --pad batch drops the padding "
     "(padded_batch.unbatch would keep it): the rows byte for byte")

# filter
raw = tf.data.TFRecordDataset(allf)
for expr, pred in [
        ("i % 3 == 0", lambda p: tf.equal(p["i"] % 3, 0)),
        ("x > 0.5 and file != 2",
         lambda p: tf.logical_and(p["x"] > 0.5, tf.not_equal(p["file"], 2))),
        ('s ~ "^b" or len(v) == 0',
         lambda p: tf.logical_or(tf.strings.regex_full_match(p["s"], "b.*"),
                                 tf.equal(tf.size(p["v"]), 0))),
        ("v[-1] >= 2.0", lambda p: tf.logical_and(
            tf.size(p["v"]) > 0,
            tf.reduce_any(tf.concat([p["v"][-1:] >= 2.0, [False]], 0))))]:
    out = t.path("filter.out")
    t.tool("tfk-filter", "-o", out, expr, allf)
    same(tf_records(out),
         elems(raw.filter(lambda r, pred=pred: pred(parse_ragged(r)))),
         "tfk-filter '%s' = Dataset.filter (the same records)" % expr)

# zip
za, zb = t.path("za.tfrecord"), t.path("zb.tfrecord")
write_tf(za, [make_example({"a": ("int64", [j]), "w": ("float", [j / 4])})
              .SerializeToString() for j in range(7)])
write_tf(zb, [make_example({"b": ("bytes", [b"\x80%d" % j] * (j % 3)),
                            "e": ("int64", [])}).SerializeToString()
              for j in range(5)])
out = t.path("zip.out")
t.tool("tfk-zip", "-o", out, za, zb)
ZK = {"a": "int64", "w": "float", "b": "bytes", "e": "int64"}
pa = tf.data.TFRecordDataset(za).map(lambda r: tf.io.parse_single_example(
    r, {"a": tf.io.VarLenFeature(tf.int64),
        "w": tf.io.VarLenFeature(tf.float32)}))
pbz = tf.data.TFRecordDataset(zb).map(lambda r: tf.io.parse_single_example(
    r, {"b": tf.io.VarLenFeature(tf.string),
        "e": tf.io.VarLenFeature(tf.int64)}))
want = [{n: canon(ZK[n], d[n].values.numpy().tolist())
         for d in pair for n in d}
        for pair in tf.data.Dataset.zip((pa, pbz))]
same([tf_parse(r, ZK) for r in tf_records(out)], want,
     "tfk-zip a b = Dataset.zip((a, b)) merged (5 of 7 and 5 records)")
same([wire_names(r) for r in tf_records(out)],
     [wire_names(x) + wire_names(y)
      for x, y in zip(tf_records(za), tf_records(zb))],
     "  the features of a, then those of b, each in its wire order")

# shuffle
for buf, seed in [(1, 3), (4, 7), (10, 1), (100, 2)]:
    out = t.path("shuf.out")
    t.tool("tfk-shuffle", "--buffer", buf, "--seed", seed, "-o", out, allf)
    got = tf_records(out)
    same(sorted(got), sorted(ROWS), "tfk-shuffle --buffer %d --seed %d: the "
         "same multiset as the input" % (buf, seed))
    pos = {r: i for i, r in enumerate(ROWS)}
    early = max(pos[r] - j for j, r in enumerate(got)) if got else 0
    tf_early = max(pos[r.numpy()] - j for j, r in enumerate(
        tf.data.TFRecordDataset(allf).shuffle(buf, seed=seed)))
    t.ok(early <= buf - 1, "  no record more than buffer-1 = %d places early "
         "(ours %d; Dataset.shuffle(%d) %d)" % (buf - 1, early, buf,
                                                tf_early))
    if buf == 1:
        same(got, ROWS, "  --buffer 1 keeps the order, as shuffle(1)")
out2 = t.path("shuf2.out")
t.tool("tfk-shuffle", "--buffer", 10, "--seed", 1, "-o", out2, allf)
t.tool("tfk-shuffle", "--buffer", 10, "--seed", 1, "-o", out, allf)
t.ok(open(out, "rb").read() == open(out2, "rb").read(),
     "tfk-shuffle: the same seed gives the same bytes")

t.done()
