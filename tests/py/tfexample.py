#!/usr/bin/python3
"""tfexample.py - an independent oracle for tf.Example and TFRecord tests.

Nothing here uses tfkit code. The messages are built with python3-protobuf
(its C++ backend on Debian) from the field numbers of TensorFlow's
tensorflow/core/example/{example,feature}.proto, written out below, and
TFRecord framing is plain Python with its own CRC-32C (Castagnoli,
reflected polynomial 0x82F63B78; check value crc32c(b"123456789") =
0xE3069283 from RFC 3720 B.4).

Import it from a test (sys.path.insert(0, "$TESTS/py")):

    import tfexample as tfe
    ex = tfe.make_example({"label": [3], "x": [0.5], "img": [b"\\x00"]})
    tfe.write_tfrecords(path, [ex.SerializeToString()])
    for rec in tfe.read_tfrecords(path): tfe.Example.FromString(rec)
    tfe.example_to_dict(ex)  ->  {"label": ("int64", [3]), ...}

or run it (the C tests do, through $PYTHON):

    tfexample.py dump FILE          one canonical line per Example record
    tfexample.py dump-seq FILE      the same for SequenceExample records
    tfexample.py reserialize FILE   per record, the hex of protobuf's
                                    deterministic serialization of it
    tfexample.py cases DIR [N]      four Examples serialized by protobuf,
                                    then N random quirky-but-valid ones
                                    written by a raw wire writer:
                                    DIR/cases.tfrecord + DIR/cases.txt
                                    (protobuf's reading of each)
    tfexample.py mutants DIR [N]    the same records with random byte
                                    damage: DIR/mutants.{tfrecord,txt},
                                    "ERROR" where protobuf refuses one
    tfexample.py json-cases DIR [N] random Examples as tfkit JSON lines
                                    (DIR/json.jsonl) + their canonical
                                    lines (DIR/json.txt)
    tfexample.py seq-cases DIR [N]  one SequenceExample by protobuf and N
                                    random quirky ones: DIR/seq.tfrecord
                                    + DIR/seq.txt (canonical lines)
    tfexample.py check-json TFRECORD JSONL
                                    each JSON line must be tfkit's JSON
                                    form of the record (value types,
                                    float bits, strings vs b64); prints
                                    one "ok"/"bad ..." line per record,
                                    exits 1 on any mismatch
    tfexample.py check-json-seq TFRECORD JSONL
                                    the same for SequenceExamples

Canonical line: the features sorted by name bytes, separated by one
space, each "HEXNAME=KIND:V,V,..." with KIND none/bytes/float/int64,
bytes values in hex, floats as the 8 hex digits of their IEEE bits
("nan" for any NaN),
int64 in decimal. An Example with no features is an empty line. A
SequenceExample is "CTX | HEXNAME=[STEP;STEP] ..." where each STEP is
"KIND:V,V" as above.
"""

import base64
import gzip
import json
import math
import os
import random
import struct
import sys
import warnings
import zlib

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

# --- messages from field numbers ------------------------------------------

_F = descriptor_pb2.FieldDescriptorProto


def _field(msg, name, number, ftype, label=_F.LABEL_OPTIONAL, type_name=None,
           packed=None, oneof=None):
    f = msg.field.add()
    f.name = name
    f.number = number
    f.type = ftype
    f.label = label
    if type_name:
        f.type_name = type_name
    if packed is not None:
        f.options.packed = packed
    if oneof is not None:
        f.oneof_index = oneof
    return f


def _map(msg, name, number, value_type):
    entry = msg.nested_type.add()
    # protobuf requires the entry's name to be the field's in CamelCase
    entry.name = "".join(w[:1].upper() + w[1:] for w in name.split("_")) + "Entry"
    entry.options.map_entry = True
    _field(entry, "key", 1, _F.TYPE_STRING)
    _field(entry, "value", 2, _F.TYPE_MESSAGE, type_name=value_type)
    _field(msg, name, number, _F.TYPE_MESSAGE, _F.LABEL_REPEATED,
           ".%s.%s.%s" % (_PKG, msg.name, entry.name))


_PKG = "tensorflow"


def _build(packed):
    """The example.proto messages; packed=False gives a wire-compatible
    variant that writes repeated floats/int64s unpacked."""
    fd = descriptor_pb2.FileDescriptorProto()
    fd.name = "tfexample_%s.proto" % ("packed" if packed else "unpacked")
    fd.package = _PKG
    fd.syntax = "proto3"
    rep = _F.LABEL_REPEATED
    m = fd.message_type.add(name="BytesList")
    _field(m, "value", 1, _F.TYPE_BYTES, rep)
    m = fd.message_type.add(name="FloatList")
    _field(m, "value", 1, _F.TYPE_FLOAT, rep, packed=packed)
    m = fd.message_type.add(name="Int64List")
    _field(m, "value", 1, _F.TYPE_INT64, rep, packed=packed)
    m = fd.message_type.add(name="Feature")
    m.oneof_decl.add(name="kind")
    _field(m, "bytes_list", 1, _F.TYPE_MESSAGE, type_name=".%s.BytesList" % _PKG, oneof=0)
    _field(m, "float_list", 2, _F.TYPE_MESSAGE, type_name=".%s.FloatList" % _PKG, oneof=0)
    _field(m, "int64_list", 3, _F.TYPE_MESSAGE, type_name=".%s.Int64List" % _PKG, oneof=0)
    m = fd.message_type.add(name="Features")
    _map(m, "feature", 1, ".%s.Feature" % _PKG)
    m = fd.message_type.add(name="FeatureList")
    _field(m, "feature", 1, _F.TYPE_MESSAGE, rep, ".%s.Feature" % _PKG)
    m = fd.message_type.add(name="FeatureLists")
    _map(m, "feature_list", 1, ".%s.FeatureList" % _PKG)
    m = fd.message_type.add(name="Example")
    _field(m, "features", 1, _F.TYPE_MESSAGE, type_name=".%s.Features" % _PKG)
    m = fd.message_type.add(name="SequenceExample")
    _field(m, "context", 1, _F.TYPE_MESSAGE, type_name=".%s.Features" % _PKG)
    _field(m, "feature_lists", 2, _F.TYPE_MESSAGE, type_name=".%s.FeatureLists" % _PKG)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    factory = message_factory.MessageFactory(pool)
    out = {}
    for name in ("BytesList", "FloatList", "Int64List", "Feature", "Features",
                 "FeatureList", "FeatureLists", "Example", "SequenceExample"):
        desc = pool.FindMessageTypeByName("%s.%s" % (_PKG, name))
        if hasattr(message_factory, "GetMessageClass"):
            out[name] = message_factory.GetMessageClass(desc)
        else:
            out[name] = factory.GetPrototype(desc)
    return out


_P = _build(True)
BytesList = _P["BytesList"]
FloatList = _P["FloatList"]
Int64List = _P["Int64List"]
Feature = _P["Feature"]
Features = _P["Features"]
FeatureList = _P["FeatureList"]
FeatureLists = _P["FeatureLists"]
Example = _P["Example"]
SequenceExample = _P["SequenceExample"]
# Same messages, repeated scalars written unpacked (one tag per value).
Unpacked = _build(False)

# --- building and reading -------------------------------------------------


def f32(x):
    """x rounded to float32, as a Python float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def make_feature(values, kind=None, msgs=None):
    """A Feature from a list of values. kind: "bytes"/"float"/"int64"/
    "none", or None to infer (bytes/str -> bytes, any float -> float,
    ints -> int64). values None: a Feature with no kind."""
    msgs = msgs or _P
    f = msgs["Feature"]()
    if values is None or kind == "none":
        return f
    if kind is None:
        if any(isinstance(v, (bytes, str)) for v in values):
            kind = "bytes"
        elif any(isinstance(v, float) for v in values):
            kind = "float"
        elif values:
            kind = "int64"
        else:
            raise ValueError("empty list needs a kind")
    if kind == "bytes":
        f.bytes_list.value.extend(
            [v.encode() if isinstance(v, str) else bytes(v) for v in values])
        f.bytes_list.SetInParent()
    elif kind == "float":
        f.float_list.value.extend([float(v) for v in values])
        f.float_list.SetInParent()
    elif kind == "int64":
        f.int64_list.value.extend([int(v) for v in values])
        f.int64_list.SetInParent()
    else:
        raise ValueError("unknown kind %r" % kind)
    return f


def make_example(d, kinds=None, msgs=None):
    """An Example from {name: values} (see make_feature); kinds optional
    {name: kind}."""
    msgs = msgs or _P
    ex = msgs["Example"]()
    ex.features.SetInParent()
    for name, values in d.items():
        ex.features.feature[name].CopyFrom(
            make_feature(values, (kinds or {}).get(name), msgs))
    return ex


def feature_kind_values(f):
    which = f.WhichOneof("kind")
    if which is None:
        return "none", []
    kind = which.split("_")[0]
    return kind, list(getattr(f, which).value)


def example_to_dict(ex):
    """{name: (kind, [values])}; floats as Python floats (float32
    values), bytes as bytes."""
    return {k: feature_kind_values(v) for k, v in ex.features.feature.items()}


def _canon_feature(f):
    kind, vals = feature_kind_values(f)
    if kind == "bytes":
        s = ",".join(v.hex() for v in vals)
    elif kind == "float":
        # NaN as "nan": Python holds floats as doubles, and widening a
        # float32 quiets a signalling NaN, so its bits are not kept
        s = ",".join("nan" if math.isnan(v) else "%08x" % f32_bits(v)
                     for v in vals)
    else:
        s = ",".join(str(v) for v in vals)
    return kind + ":" + s


def _canon_map(m):
    items = sorted(m.items(), key=lambda kv: kv[0].encode())
    return " ".join(k.encode().hex() + "=" + _canon_feature(v)
                    for k, v in items)


def canonical(ex):
    return _canon_map(ex.features.feature)


def canonical_seq(sx):
    items = sorted(sx.feature_lists.feature_list.items(),
                   key=lambda kv: kv[0].encode())
    lists = " ".join(k.encode().hex() + "=[" +
                     ";".join(_canon_feature(f) for f in v.feature) + "]"
                     for k, v in items)
    return _canon_map(sx.context.feature) + " | " + lists


# --- TFRecord framing -----------------------------------------------------

def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_CRC = _crc_table()


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _CRC[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data):
    """One TFRecord: u64 length, masked crc of it, data, masked crc."""
    n = struct.pack("<Q", len(data))
    return (n + struct.pack("<I", masked_crc(n)) + data +
            struct.pack("<I", masked_crc(data)))


def write_tfrecords(path, records, compression=None):
    """Write records (bytes) framed; compression None/"GZIP"/"ZLIB"."""
    blob = b"".join(frame(r) for r in records)
    if compression == "GZIP":
        blob = gzip.compress(blob)
    elif compression == "ZLIB":
        blob = zlib.compress(blob)
    with open(path, "wb") as f:
        f.write(blob)


def read_tfrecords(path, verify=True):
    """Yield each record's payload; GZIP/ZLIB detected by magic. Raises
    ValueError on a bad crc or a truncated file."""
    with open(path, "rb") as f:
        blob = f.read()
    if blob[:2] == b"\x1f\x8b":
        blob = gzip.decompress(blob)
    elif blob[:1] == b"\x78" and len(blob) > 12 and \
            struct.unpack("<I", blob[8:12])[0] != masked_crc(blob[:8]):
        blob = zlib.decompress(blob)
    off = 0
    while off < len(blob):
        if len(blob) - off < 12:
            raise ValueError("truncated header at byte %d" % off)
        hdr = blob[off:off + 8]
        (n,) = struct.unpack("<Q", hdr)
        if verify and struct.unpack("<I", blob[off + 8:off + 12])[0] != masked_crc(hdr):
            raise ValueError("length crc mismatch at byte %d" % off)
        if len(blob) - off - 12 < n + 4:
            raise ValueError("truncated record at byte %d" % off)
        data = blob[off + 12:off + 12 + n]
        (c,) = struct.unpack("<I", blob[off + 12 + n:off + 16 + n])
        if verify and c != masked_crc(data):
            raise ValueError("data crc mismatch at byte %d" % off)
        yield data
        off += 16 + n


# --- a raw wire reader, for what protobuf's parser does not keep ----------
# (the order of map entries on the wire)

def read_varint(b, i):
    """The varint at b[i:]: (value, index after it)."""
    r = s = 0
    while True:
        c = b[i]; i += 1
        r |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return r, i


def wire_fields(b, ld_only=False):
    """(field number, value) of each field of the message b in wire order:
    bytes for length-delimited, fixed32 and fixed64 fields, an int for
    varints. ld_only: every field must be length-delimited (an
    AssertionError "unexpected wire type" otherwise)."""
    i = 0
    while i < len(b):
        t, i = read_varint(b, i)
        wt = t & 7
        assert not ld_only or wt == 2, "unexpected wire type"
        if wt == 2:
            n, i = read_varint(b, i)
            yield t >> 3, b[i:i + n]; i += n
        elif wt == 0:
            v, i = read_varint(b, i); yield t >> 3, v
        elif wt == 5:
            yield t >> 3, b[i:i + 4]; i += 4
        elif wt == 1:
            yield t >> 3, b[i:i + 8]; i += 8


# --- a raw wire writer, for encodings protobuf's writer never makes -------

def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def tag(num, wt):
    return varint(num << 3 | wt)


def ld(num, payload):
    """A length-delimited field."""
    return tag(num, 2) + varint(len(payload)) + payload


def unknown_field(rng, known):
    """A field with a number not in known, of wire type 0, 1, 2 or 5."""
    num = rng.choice([n for n in (4, 5, 7, 15, 16, 100, 2047, 536870911)
                      if n not in known])
    wt = rng.choice([0, 1, 2, 5])
    if wt == 0:
        return tag(num, 0) + varint(rng.choice([0, 1, 300, -1]))
    if wt == 1:
        return tag(num, 1) + bytes(rng.randrange(256) for _ in range(8))
    if wt == 5:
        return tag(num, 5) + bytes(rng.randrange(256) for _ in range(4))
    return ld(num, bytes(rng.randrange(256) for _ in range(rng.randrange(4))))


def _maybe_unknown(rng, known, p=0.15):
    return unknown_field(rng, known) if rng.random() < p else b""


def _split(rng, vals):
    """vals cut into 1..3 consecutive pieces (some may be empty)."""
    if not vals or rng.random() < 0.6:
        return [vals]
    cuts = sorted(rng.randrange(len(vals) + 1) for _ in range(rng.randrange(1, 3)))
    out, last = [], 0
    for c in cuts + [len(vals)]:
        out.append(vals[last:c])
        last = c
    return out


def raw_list(rng, kind, vals):
    """A BytesList/FloatList/Int64List body, packed or not, split, with
    unknown fields."""
    out = _maybe_unknown(rng, {1})
    if kind == "bytes":
        for v in vals:
            out += ld(1, v) + _maybe_unknown(rng, {1}, 0.05)
        return out
    for piece in _split(rng, vals):
        if rng.random() < 0.5:  # packed run
            if kind == "float":
                payload = b"".join(struct.pack("<f", v) for v in piece)
            else:
                payload = b"".join(varint(v) for v in piece)
            if piece or rng.random() < 0.3:
                out += ld(1, payload)
        else:
            for v in piece:
                if kind == "float":
                    out += tag(1, 5) + struct.pack("<f", v)
                else:
                    out += tag(1, 0) + varint(v)
        out += _maybe_unknown(rng, {1}, 0.1)
    return out


_KINDS = ("bytes", "float", "int64")


def random_values(rng, kind):
    n = rng.choice([0, 1, 1, 2, 3, 5])
    if kind == "bytes":
        return [bytes(rng.randrange(256) for _ in range(rng.randrange(6)))
                if rng.random() < 0.5 else
                rng.choice(["", "hi", "héllo", "a\"b\\c\n", "\u2603"]).encode()
                for _ in range(n)]
    if kind == "float":
        return [f32(rng.choice([0.0, -0.0, 1.0, -2.5, 0.1, 1e-45, 3.4e38,
                                float("inf"), float("-inf"),
                                rng.uniform(-1e6, 1e6),
                                rng.uniform(-1, 1)])) for _ in range(n)]
    return [rng.choice([0, 1, -1, 127, 128, 300, -300, 2**31, -2**63,
                        2**63 - 1, rng.randrange(-2**40, 2**40)])
            for _ in range(n)]


def raw_feature(rng, kind, vals):
    """A Feature body: sometimes a decoy of another kind first (oneof:
    the last member wins), the list sometimes split over two fields of
    the same kind (merged), unknown fields around."""
    out = _maybe_unknown(rng, {1, 2, 3})
    if kind == "none":
        return out
    if rng.random() < 0.15:
        other = rng.choice([k for k in _KINDS if k != kind])
        out += ld(_KINDS.index(other) + 1,
                  raw_list(rng, other, random_values(rng, other)))
    num = _KINDS.index(kind) + 1
    if len(vals) >= 2 and rng.random() < 0.2:
        cut = rng.randrange(1, len(vals))
        out += ld(num, raw_list(rng, kind, vals[:cut]))
        out += _maybe_unknown(rng, {1, 2, 3})
        out += ld(num, raw_list(rng, kind, vals[cut:]))
    else:
        out += ld(num, raw_list(rng, kind, vals))
    return out + _maybe_unknown(rng, {1, 2, 3})


_NAMES = ["label", "image", "x", "", "é", "a b", "feature_%d", "tokens",
          "\u2603snow", "x"]


def raw_entry(rng, name, kind, vals):
    """A map entry; sometimes key after value, value given twice
    (merged), key or value missing handled by callers."""
    key = ld(1, name.encode())
    body = raw_feature(rng, kind, vals)
    if kind != "none" and len(vals) >= 2 and rng.random() < 0.1:
        # value given twice: the two Features merge into one list
        cut = rng.randrange(1, len(vals))
        num = _KINDS.index(kind) + 1
        value = (ld(2, ld(num, raw_list(rng, kind, vals[:cut]))) +
                 ld(2, ld(num, raw_list(rng, kind, vals[cut:]))))
    else:
        value = ld(2, body)
    parts = [key, value]
    if rng.random() < 0.2:
        parts.reverse()
    r = rng.random()
    if r < 0.03:
        parts = [value]  # no key: the empty name
    elif r < 0.06:
        parts = [key]    # no value: a Feature with no kind
    return _maybe_unknown(rng, {1, 2}) + b"".join(parts) + \
        _maybe_unknown(rng, {1, 2})


def raw_example(rng):
    """A random Example in quirky wire form."""
    entries = []
    for i in range(rng.choice([0, 1, 2, 3, 4, 6, 20])):
        name = rng.choice(_NAMES)
        if "%d" in name:
            name = name % rng.randrange(30)
        kind = rng.choice(_KINDS + ("none",))
        vals = random_values(rng, kind) if kind != "none" else []
        entries.append(ld(1, raw_entry(rng, name, kind, vals)))
        if rng.random() < 0.1:  # the same key again: the last one wins
            kind = rng.choice(_KINDS)
            entries.append(ld(1, raw_entry(rng, name, kind,
                                           random_values(rng, kind))))
    # Features split over several fields merge into one map.
    groups, cur = [], b""
    for e in entries:
        cur += e + _maybe_unknown(rng, {1}, 0.05)
        if rng.random() < 0.15:
            groups.append(cur)
            cur = b""
    groups.append(cur)
    out = _maybe_unknown(rng, {1})
    for g in groups:
        if g or rng.random() < 0.9:
            out += ld(1, g) + _maybe_unknown(rng, {1}, 0.05)
    return out


def mutate(rng, data):
    """One random damage: a changed byte, a flipped bit, a cut, an
    inserted byte."""
    b = bytearray(data)
    r = rng.random()
    if not b:
        b.append(rng.randrange(256))
    elif r < 0.3:
        b[rng.randrange(len(b))] = rng.randrange(256)
    elif r < 0.6:
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif r < 0.8:
        del b[rng.randrange(len(b)):]
    else:
        b.insert(rng.randrange(len(b) + 1), rng.randrange(256))
    return bytes(b)


def parse_or_none(data, cls=None):
    """The parsed message, or None where protobuf refuses the bytes
    (including the partial parses it only warns about)."""
    msg = (cls or Example)()
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        try:
            msg.ParseFromString(data)
        except Exception:
            return None
    return None if warned else msg


# --- tfkit's JSON form ----------------------------------------------------

def _json_value(kind, v, rng=None):
    if kind == "bytes":
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return {"b64": base64.b64encode(v).decode()}
    return v


def example_to_json_obj(ex):
    """tfkit's JSON form as Python objects: name -> list (or None)."""
    out = {}
    for k, f in ex.features.feature.items():
        kind, vals = feature_kind_values(f)
        out[k] = None if kind == "none" else [_json_value(kind, v) for v in vals]
    return out


class _Num:
    """A JSON number token with its type: int, float or constant."""

    def __init__(self, typ, value):
        self.typ, self.value = typ, value


def _loads_typed(line):
    return json.loads(line,
                      parse_int=lambda s: _Num("int", int(s)),
                      parse_float=lambda s: _Num("float", float(s)),
                      parse_constant=lambda s: _Num("const", float(s)))


def _check_values(name, f, got):
    """'' when got (typed JSON) is tfkit's form of Feature f's values."""
    kind, vals = feature_kind_values(f)
    if kind == "none":
        return "" if got is None else "%s: want null" % name
    if not vals:
        # an empty list carries its kind: {"int64": []}
        return "" if got == {kind: []} else \
            "%s: want {\"%s\": []}" % (name, kind)
    if not isinstance(got, list) or len(got) != len(vals):
        return "%s: want a list of %d" % (name, len(vals))
    for i, (g, v) in enumerate(zip(got, vals)):
        where = "%s[%d]" % (name, i)
        if kind == "int64":
            if not isinstance(g, _Num) or g.typ != "int" or g.value != v:
                return "%s: want integer %d" % (where, v)
        elif kind == "float":
            if not isinstance(g, _Num) or g.typ == "int":
                return "%s: want a float token" % where
            if math.isnan(v):
                if not math.isnan(g.value):
                    return "%s: want NaN" % where
            elif f32_bits(g.value) != f32_bits(v):
                return "%s: %r does not read back as %r" % (where, g.value, v)
        else:
            try:
                text = v.decode("utf-8")
            except UnicodeDecodeError:
                text = None
            if text is not None:
                if g != text:
                    return "%s: want string %r" % (where, text)
            elif not (isinstance(g, dict) and list(g) == ["b64"] and
                      base64.b64decode(g["b64"], validate=True) == v):
                return "%s: want {\"b64\": ...} of %r" % (where, v)
    return ""


def _check_features(feats, obj):
    if not isinstance(obj, dict):
        return "not an object"
    if set(obj) != set(feats):
        return "names %s != %s" % (sorted(obj), sorted(feats))
    for name, f in feats.items():
        why = _check_values(name, f, obj[name])
        if why:
            return why
    return ""


def check_json_line(ex, line):
    """'' when line is tfkit's JSON form of Example ex, else what
    differs."""
    try:
        obj = _loads_typed(line)
    except ValueError as e:
        return "not JSON: %s" % e
    return _check_features(ex.features.feature, obj)


def check_json_seq(sx, line):
    """The same for a SequenceExample:
    {"context": {...}, "feature_lists": {name: [step, ...]}}."""
    try:
        obj = _loads_typed(line)
    except ValueError as e:
        return "not JSON: %s" % e
    if not isinstance(obj, dict) or set(obj) != {"context", "feature_lists"}:
        return "want keys context and feature_lists"
    why = _check_features(sx.context.feature, obj["context"])
    if why:
        return "context: " + why
    lists, got = sx.feature_lists.feature_list, obj["feature_lists"]
    if not isinstance(got, dict) or set(got) != set(lists):
        return "feature_lists: names differ"
    for name, fl in lists.items():
        steps = got[name]
        if not isinstance(steps, list) or len(steps) != len(fl.feature):
            return "%s: want %d steps" % (name, len(fl.feature))
        for i, f in enumerate(fl.feature):
            why = _check_values("%s[%d]" % (name, i), f, steps[i])
            if why:
                return why
    return ""


def raw_seq_example(rng):
    """A random SequenceExample in quirky wire form: context as in
    raw_example, feature lists with steps of one kind (sometimes none),
    lists given twice, values split, unknown fields."""
    ctx = raw_example(rng)  # an Example's field 1 is a Features: reuse
    out = b""
    if ctx or rng.random() < 0.5:
        out += ctx
    entries = b""
    for _ in range(rng.choice([0, 1, 2, 3, 5])):
        name = rng.choice(["tokens", "w", "", "\u00e9", "frames"])
        kind = rng.choice(_KINDS)
        steps = []
        for _ in range(rng.choice([0, 1, 2, 4])):
            k = "none" if rng.random() < 0.1 else kind
            vals = random_values(rng, k) if k != "none" else []
            steps.append(ld(1, raw_feature(rng, k, vals)) +
                         _maybe_unknown(rng, {1}, 0.05))
        if len(steps) >= 2 and rng.random() < 0.2:
            cut = rng.randrange(1, len(steps))
            value = ld(2, b"".join(steps[:cut])) + ld(2, b"".join(steps[cut:]))
        else:
            value = ld(2, b"".join(steps))
        parts = [ld(1, name.encode()), value]
        if rng.random() < 0.2:
            parts.reverse()
        entries += ld(1, _maybe_unknown(rng, {1, 2}) + b"".join(parts))
        entries += _maybe_unknown(rng, {1}, 0.05)
    if entries or rng.random() < 0.5:
        if rng.random() < 0.2:
            # feature_lists given twice: the maps merge (same keys:
            # the last wins)
            out += ld(2, entries) + _maybe_unknown(rng, {1, 2}) + ld(2, entries)
        else:
            out += ld(2, entries)
    return out + _maybe_unknown(rng, {1, 2})


def _json_dumps(obj):
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def random_json_case(rng):
    """(JSON line, Example) in tfkit's form, with the liberties a reader
    accepts: bare values, ints in float lists where a float is present,
    NaN/Infinity, b64 for any bytes."""
    ex = Example()
    ex.features.SetInParent()
    obj = {}
    for i in range(rng.randrange(0, 6)):
        name = rng.choice(["label", "x", "img", "text", "é", "w%d" % i])
        if name in obj:
            continue
        kind = rng.choice(_KINDS + ("none",))
        if kind == "none":
            ex.features.feature[name].CopyFrom(Feature())
            obj[name] = None
            continue
        vals = random_values(rng, kind)
        if not vals and rng.random() < 0.5:
            # an empty list says its kind
            ex.features.feature[name].CopyFrom(make_feature([], kind))
            obj[name] = {kind: []}
            continue
        if not vals:
            vals = random_values(rng, kind) or ([b"z"] if kind == "bytes" else
                                                [1.5] if kind == "float" else [7])
        if kind == "float":
            if not any(v != int(v) for v in vals if math.isfinite(v)) and \
                    all(math.isfinite(v) for v in vals):
                vals[0] = 0.5  # keep one non-integral float to fix the kind
        ex.features.feature[name].CopyFrom(make_feature(vals, kind))
        jv = []
        for v in vals:
            if kind == "bytes":
                jv.append({"b64": base64.b64encode(v).decode()}
                          if rng.random() < 0.3 else _json_value(kind, v))
            elif kind == "float" and math.isfinite(v) and v == int(v) and \
                    math.copysign(1, v) > 0 and abs(v) < 2**53 and \
                    rng.random() < 0.5:
                jv.append(int(v))  # an integral number in a float list
            else:
                jv.append(v)
        obj[name] = jv[0] if len(jv) == 1 and rng.random() < 0.3 else jv
    return _json_dumps(obj), ex


# --- command line ---------------------------------------------------------

def _main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    cmd = argv[1]
    if cmd in ("dump", "dump-seq"):
        cls, canon = (Example, canonical) if cmd == "dump" else \
            (SequenceExample, canonical_seq)
        for rec in read_tfrecords(argv[2]):
            msg = cls()
            msg.ParseFromString(rec)
            print(canon(msg))
        return 0
    if cmd == "reserialize":
        for rec in read_tfrecords(argv[2]):
            print(Example.FromString(rec).SerializeToString(
                deterministic=True).hex())
        return 0
    if cmd == "seq-cases":
        d = argv[2]
        n = int(argv[3]) if len(argv) > 3 else 300
        rng = random.Random(20240612)
        recs = [raw_seq_example(rng) for _ in range(n)]
        sx = SequenceExample()
        sx.feature_lists.feature_list["tokens"].feature.extend(
            [make_feature([1, 2]), make_feature([3])])
        sx.context.feature["id"].CopyFrom(make_feature(["a"]))
        recs.insert(0, sx.SerializeToString())
        lines = []
        for r in recs:
            msg = parse_or_none(r, SequenceExample)
            if msg is None:
                raise SystemExit("generator made an invalid SequenceExample")
            lines.append(canonical_seq(msg))
        write_tfrecords(os.path.join(d, "seq.tfrecord"), recs)
        with open(os.path.join(d, "seq.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        return 0
    if cmd in ("cases", "mutants", "json-cases"):
        d = argv[2]
        n = int(argv[3]) if len(argv) > 3 else 500
        rng = random.Random(20240611)
        if cmd == "json-cases":
            lines, canon = [], []
            for _ in range(n):
                line, ex = random_json_case(rng)
                lines.append(line)
                canon.append(canonical(ex))
            with open(os.path.join(d, "json.jsonl"), "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
            with open(os.path.join(d, "json.txt"), "w") as f:
                f.write("\n".join(canon) + "\n")
            return 0
        recs = [raw_example(rng) for _ in range(n)]
        if cmd == "cases":
            # and some written by protobuf itself: packed, unpacked, an
            # empty Feature, and two Examples concatenated (protobuf's
            # merge: Features twice, duplicate keys, the last one wins)
            a = make_example({"label": [3], "x": [0.5, -1.0], "img": [b"\xff\x00"],
                              "e": None})
            b = make_example({"x": [2.0], "ids": [1, -1, 2**40], "s": ["hi"]},
                             msgs=Unpacked)
            c = make_example({"label": [9], "x": [], "t": [b"", b"z"]},
                             kinds={"x": "float"})
            recs[:0] = [a.SerializeToString(), b.SerializeToString(),
                        a.SerializeToString() + b.SerializeToString() +
                        c.SerializeToString(),
                        Example().SerializeToString()]
        if cmd == "mutants":
            recs = [mutate(rng, r) for r in recs]
        lines = []
        # protobuf's C++ code logs refusals on stderr: keep it quiet
        sys.stderr.flush()
        saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        try:
            exs = [parse_or_none(r) for r in recs]
        finally:
            os.dup2(saved, 2)
            os.close(devnull)
            os.close(saved)
        for ex in exs:
            if ex is None and cmd == "cases":
                raise SystemExit("generator made an invalid Example")
            lines.append("ERROR" if ex is None else canonical(ex))
        write_tfrecords(os.path.join(d, cmd + ".tfrecord"), recs)
        with open(os.path.join(d, cmd + ".txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        return 0
    if cmd in ("check-json", "check-json-seq"):
        cls, check = (Example, check_json_line) if cmd == "check-json" \
            else (SequenceExample, check_json_seq)
        bad = 0
        with open(argv[3], encoding="utf-8", errors="surrogateescape") as f:
            jl = f.read().split("\n")
        for i, rec in enumerate(read_tfrecords(argv[2])):
            ex = cls.FromString(rec)
            why = check(ex, jl[i]) if i < len(jl) else "no line"
            print("ok" if not why else "bad %d: %s" % (i, why))
            bad += bool(why)
        return 1 if bad else 0
    sys.stderr.write("tfexample.py: unknown command %r\n" % cmd)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
