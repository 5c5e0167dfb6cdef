#!/usr/bin/python3
"""bundle_check.py - an independent oracle for TensorFlow tensor bundles.

Nothing here uses tfkit code. The index table is read and written by a
plain-Python LevelDB table codec (blocks of prefix-compressed entries with
restart points, a 5-byte trailer of compression type and masked CRC32C,
a 48-byte footer ending in magic 0xdb4775248b80fb57; a Snappy decoder and
a literal-only Snappy encoder are included), the index values are
python3-protobuf messages built below from the field numbers of
TensorFlow's tensor_bundle.proto, tensor_shape.proto, tensor_slice.proto
and versions.proto, and CRC-32C is computed bit by bit (reflected
polynomial 0x82F63B78; crc32c(b"123456789") = 0xE3069283, RFC 3720 B.4).

    bundle_check.py dump PREFIX
        check the whole table strictly (footer, every block CRC, restart
        arrays pointing at entries with no shared prefix, keys strictly
        increasing, index keys separating the blocks, an empty metaindex,
        the header first) and every tensor's data CRC, then print:
          header shards=N endian=E producer=P min_consumer=M bad=[...]
          blocks data=N
          KEYHEX dtype=D shape=A,B shard=S offset=O size=Z crc=ok VALUES
        VALUES is the hex of the tensor bytes, or for DT_STRING (7)
        "str:" + the hex of each element joined by ",". Exits 1 with a
        message on the first violation.
    bundle_check.py write PREFIX BLOCK_SIZE SNAPPY(0|1)
        write a bundle of a fixed set of tensors (all dtypes, strings,
        scalars, empty, 300 entries to span blocks) with the given data
        block size and compression; prints the same lines dump would.
"""

import struct
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

MAGIC = 0xdb4775248b80fb57

# --- CRC-32C ----------------------------------------------------------------

_T = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _T.append(_c)


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _T[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


def mask(c):
    return (((c >> 15) | (c << 17)) + 0xa282ead8) & 0xFFFFFFFF


# --- protobuf messages from field numbers -----------------------------------

_F = descriptor_pb2.FieldDescriptorProto


def _field(msg, name, number, ftype, label=_F.LABEL_OPTIONAL, type_name=None,
           oneof=None):
    f = msg.field.add()
    f.name = name
    f.number = number
    f.type = ftype
    f.label = label
    if type_name:
        f.type_name = type_name
    if oneof is not None:
        f.oneof_index = oneof


def _build():
    fd = descriptor_pb2.FileDescriptorProto()
    fd.name = "bundle_check.proto"
    fd.package = "tensorflow"
    fd.syntax = "proto3"
    rep = _F.LABEL_REPEATED
    m = fd.message_type.add(name="VersionDef")
    _field(m, "producer", 1, _F.TYPE_INT32)
    _field(m, "min_consumer", 2, _F.TYPE_INT32)
    _field(m, "bad_consumers", 3, _F.TYPE_INT32, rep)
    m = fd.message_type.add(name="TensorShapeProto")
    d = m.nested_type.add(name="Dim")
    _field(d, "size", 1, _F.TYPE_INT64)
    _field(d, "name", 2, _F.TYPE_STRING)
    _field(m, "dim", 2, _F.TYPE_MESSAGE, rep, ".tensorflow.TensorShapeProto.Dim")
    _field(m, "unknown_rank", 3, _F.TYPE_BOOL)
    m = fd.message_type.add(name="TensorSliceProto")
    e = m.nested_type.add(name="Extent")
    e.oneof_decl.add(name="has_length")
    _field(e, "start", 1, _F.TYPE_INT64)
    _field(e, "length", 2, _F.TYPE_INT64, oneof=0)
    _field(m, "extent", 1, _F.TYPE_MESSAGE, rep,
           ".tensorflow.TensorSliceProto.Extent")
    m = fd.message_type.add(name="BundleHeaderProto")
    en = m.enum_type.add(name="Endianness")
    en.value.add(name="LITTLE", number=0)
    en.value.add(name="BIG", number=1)
    _field(m, "num_shards", 1, _F.TYPE_INT32)
    _field(m, "endianness", 2, _F.TYPE_ENUM,
           type_name=".tensorflow.BundleHeaderProto.Endianness")
    _field(m, "version", 3, _F.TYPE_MESSAGE, type_name=".tensorflow.VersionDef")
    m = fd.message_type.add(name="BundleEntryProto")
    # dtype is the DataType enum; an int32 reads the same varint
    _field(m, "dtype", 1, _F.TYPE_INT32)
    _field(m, "shape", 2, _F.TYPE_MESSAGE, type_name=".tensorflow.TensorShapeProto")
    _field(m, "shard_id", 3, _F.TYPE_INT32)
    _field(m, "offset", 4, _F.TYPE_INT64)
    _field(m, "size", 5, _F.TYPE_INT64)
    _field(m, "crc32c", 6, _F.TYPE_FIXED32)
    _field(m, "slices", 7, _F.TYPE_MESSAGE, rep, ".tensorflow.TensorSliceProto")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    factory = message_factory.MessageFactory(pool)
    out = {}
    for name in ("BundleHeaderProto", "BundleEntryProto"):
        desc = pool.FindMessageTypeByName("tensorflow." + name)
        if hasattr(message_factory, "GetMessageClass"):
            out[name] = message_factory.GetMessageClass(desc)
        else:
            out[name] = factory.GetPrototype(desc)
    return out


_M = _build()
BundleHeaderProto = _M["BundleHeaderProto"]
BundleEntryProto = _M["BundleEntryProto"]

# --- varints, Snappy ---------------------------------------------------------


class Bad(Exception):
    pass


def get_varint(b, p, maxbytes=10):
    r = 0
    for i in range(maxbytes):
        if p >= len(b):
            raise Bad("varint cut off at %d" % p)
        c = b[p]
        p += 1
        r |= (c & 0x7F) << (7 * i)
        if not c & 0x80:
            return r, p
    raise Bad("varint too long at %d" % p)


def put_varint(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        if v:
            out.append(c | 0x80)
        else:
            out.append(c)
            return bytes(out)


def snappy_decode(b):
    n, p = get_varint(b, 0, 5)
    out = bytearray()
    while p < len(b):
        tag = b[p]
        p += 1
        t = tag & 3
        if t == 0:
            ln = tag >> 2
            if ln >= 60:
                k = ln - 59
                ln = int.from_bytes(b[p:p + k], "little")
                p += k
            ln += 1
            out += b[p:p + ln]
            p += ln
            continue
        if t == 1:
            ln = ((tag >> 2) & 7) + 4
            off = ((tag >> 5) << 8) | b[p]
            p += 1
        elif t == 2:
            ln = (tag >> 2) + 1
            off = int.from_bytes(b[p:p + 2], "little")
            p += 2
        else:
            ln = (tag >> 2) + 1
            off = int.from_bytes(b[p:p + 4], "little")
            p += 4
        if off == 0 or off > len(out):
            raise Bad("snappy: bad copy offset")
        for _ in range(ln):
            out.append(out[-off])
    if len(out) != n:
        raise Bad("snappy: %d bytes, header says %d" % (len(out), n))
    return bytes(out)


def snappy_encode_literal(b):
    """A valid Snappy stream of literals only (chunks of <= 60 bytes use the
    one-byte tag, longer ones a 2-byte length)."""
    out = bytearray(put_varint(len(b)))
    p = 0
    while p < len(b):
        chunk = b[p:p + 65536]
        n = len(chunk) - 1
        if n < 60:
            out.append(n << 2)
        else:
            out.append(61 << 2)
            out += struct.pack("<H", n)
        out += chunk
        p += len(chunk)
    return bytes(out)


# --- LevelDB table -----------------------------------------------------------


def read_block(f, off, size, what):
    if off + size + 5 > len(f):
        raise Bad("%s block at %d past end" % (what, off))
    data = f[off:off + size]
    typ = f[off + size]
    (stored,) = struct.unpack("<I", f[off + size + 1:off + size + 5])
    if mask(crc32c(f[off:off + size + 1])) != stored:
        raise Bad("%s block at %d: crc mismatch" % (what, off))
    if typ == 1:
        data = snappy_decode(data)
    elif typ != 0:
        raise Bad("%s block at %d: type %d" % (what, off, typ))
    return data


def block_entries(data, what):
    if len(data) < 4:
        raise Bad("%s: short block" % what)
    (nr,) = struct.unpack("<I", data[-4:])
    if nr < 1 or 4 + 4 * nr > len(data):
        raise Bad("%s: %d restarts" % (what, nr))
    rstart = len(data) - 4 - 4 * nr
    restarts = list(struct.unpack("<%dI" % nr, data[rstart:len(data) - 4]))
    out = []
    key = b""
    p = 0
    starts = {}
    while p < rstart:
        at = p
        shared, p = get_varint(data, p, 5)
        nons, p = get_varint(data, p, 5)
        vlen, p = get_varint(data, p, 5)
        if shared > len(key) or p + nons + vlen > rstart:
            raise Bad("%s: entry at %d overruns" % (what, at))
        key = key[:shared] + data[p:p + nons]
        p += nons
        out.append((key, data[p:p + vlen]))
        p += vlen
        starts[at] = shared
    for r in restarts:
        if r == 0 and not starts:
            continue
        if r not in starts or starts[r] != 0:
            raise Bad("%s: restart %d is not a full key" % (what, r))
    if restarts != sorted(restarts):
        raise Bad("%s: restarts out of order" % what)
    return out


def read_table(path):
    f = open(path, "rb").read()
    if len(f) < 48:
        raise Bad("short file")
    (magic,) = struct.unpack("<Q", f[-8:])
    if magic != MAGIC:
        raise Bad("bad magic")
    foot = f[-48:-8]
    mo, p = get_varint(foot, 0)
    ms, p = get_varint(foot, p)
    io, p = get_varint(foot, p)
    isz, p = get_varint(foot, p)
    if any(foot[p:]):
        raise Bad("footer padding not zero")
    meta = block_entries(read_block(f, mo, ms, "metaindex"), "metaindex")
    if meta:
        raise Bad("metaindex not empty")
    index = block_entries(read_block(f, io, isz, "index"), "index")
    entries = []
    prev_last = None
    for ikey, handle in index:
        off, p = get_varint(handle, 0)
        size, p = get_varint(handle, p)
        if p != len(handle):
            raise Bad("index handle has trailing bytes")
        ents = block_entries(read_block(f, off, size, "data"), "data")
        if not ents:
            raise Bad("empty data block")
        if not ents[-1][0] <= ikey:
            raise Bad("index key below the block's last key")
        if prev_last is not None and not prev_last < ents[0][0]:
            raise Bad("blocks overlap")
        prev_last = ikey
        entries.extend(ents)
    for a, b in zip(entries, entries[1:]):
        if not a[0] < b[0]:
            raise Bad("keys not strictly increasing")
    return entries, len(index)


def string_decode(raw, n):
    p = 0
    lens = []
    crc = 0
    for _ in range(n):
        ln, p = get_varint(raw, p)
        lens.append(ln)
        crc = crc32c(struct.pack("<I" if ln <= 0xFFFFFFFF else "<Q", ln), crc)
    (stored,) = struct.unpack("<I", raw[p:p + 4])
    if stored != mask(crc):
        raise Bad("string length crc mismatch")
    crc = crc32c(raw[p:p + 4], crc)
    p += 4
    out = []
    for ln in lens:
        out.append(raw[p:p + ln])
        crc = crc32c(raw[p:p + ln], crc)
        p += ln
    if p != len(raw):
        raise Bad("string bytes do not fill the entry")
    return out, crc


def dump(prefix):
    entries, nblocks = read_table(prefix + ".index")
    if not entries or entries[0][0] != b"":
        raise Bad("no header entry")
    h = BundleHeaderProto.FromString(entries[0][1])
    lines = ["header shards=%d endian=%d producer=%d min_consumer=%d bad=%s" % (
        h.num_shards, h.endianness, h.version.producer,
        h.version.min_consumer, list(h.version.bad_consumers))]
    lines.append("blocks data=%d" % nblocks)
    files = {}
    for key, val in entries[1:]:
        e = BundleEntryProto.FromString(val)
        if e.shard_id not in files:
            files[e.shard_id] = open("%s.data-%05d-of-%05d" % (
                prefix, e.shard_id, h.num_shards), "rb").read()
        data = files[e.shard_id]
        raw = data[e.offset:e.offset + e.size]
        if len(raw) != e.size:
            raise Bad("%s: data past end" % key)
        shape = [d.size for d in e.shape.dim]
        n = 1
        for d in shape:
            n *= d
        if e.dtype == 7:
            if e.size == 0 and n == 0:
                vals, crc = [], 0
            else:
                vals, crc = string_decode(raw, n)
            text = "str:" + ",".join(v.hex() for v in vals)
        else:
            crc = crc32c(raw)
            text = raw.hex()
        if mask(crc) != e.crc32c:
            raise Bad("%s: data crc mismatch" % key)
        lines.append("%s dtype=%d shape=%s shard=%d offset=%d size=%d crc=ok %s" % (
            key.hex(), e.dtype, ",".join(map(str, shape)), e.shard_id,
            e.offset, e.size, text))
    return lines


# --- writer ------------------------------------------------------------------


def sample_tensors():
    """(key, dtype, shape, bytes-or-list-of-bytes), in no particular order."""
    t = []
    t.append(("dense/kernel", 1, [2, 3], struct.pack("<6f", 0.5, -1.25, 3.0, 1e-3, -0.0, 7.5)))
    t.append(("dense/bias", 1, [3], struct.pack("<3f", 0.0, 0.25, -2.0)))
    t.append(("scalar_f64", 2, [], struct.pack("<d", 3.141592653589793)))
    t.append(("ints32", 3, [4], struct.pack("<4i", 1, -2, 2147483647, -2147483648)))
    t.append(("bytes_u8", 4, [2, 2], bytes([0, 1, 254, 255])))
    t.append(("i16", 5, [2], struct.pack("<2h", -300, 300)))
    t.append(("i8", 6, [3], struct.pack("<3b", -128, 0, 127)))
    t.append(("step", 9, [], struct.pack("<q", 123456789012)))
    t.append(("flags", 10, [3], bytes([1, 0, 1])))
    t.append(("half", 19, [2], struct.pack("<2e", 1.5, -2.0)))
    t.append(("empty", 1, [0, 4], b""))
    t.append(("vocab", 7, [3], [b"hello", b"", b"w\x00rld"]))
    t.append(("_CHECKPOINTABLE_OBJECT_GRAPH", 7, [], [b"\x0a\x05graph"]))
    t.append(("no_strings", 7, [0], []))
    for i in range(300):
        t.append(("layer_%03d/kernel" % i, 3, [1], struct.pack("<i", i * 7 - 1000)))
    return t


class BlockBuilder:
    def __init__(self, interval):
        self.interval = interval
        self.buf = bytearray()
        self.restarts = []
        self.counter = 0
        self.last = b""

    def add(self, key, val):
        shared = 0
        if not self.buf or self.counter >= self.interval:
            self.restarts.append(len(self.buf))
            self.counter = 0
        else:
            while shared < min(len(key), len(self.last)) and key[shared] == self.last[shared]:
                shared += 1
        self.buf += put_varint(shared) + put_varint(len(key) - shared) + put_varint(len(val))
        self.buf += key[shared:] + val
        self.last = key
        self.counter += 1

    def finish(self):
        r = self.restarts or [0]
        return bytes(self.buf) + struct.pack("<%dI" % len(r), *r) + struct.pack("<I", len(r))


def write(prefix, block_size, snappy):
    tensors = sorted(sample_tensors(), key=lambda x: x[0].encode())
    data = bytearray()
    items = []
    for key, dtype, shape, val in tensors[::-1]:  # data in another order
        e = BundleEntryProto()
        e.dtype = dtype
        for d in shape:
            e.shape.dim.add().size = d
        e.offset = len(data)
        if dtype == 7:
            if not val:
                raw, crc = b"", 0
            else:
                lens = b"".join(put_varint(len(s)) for s in val)
                crc = 0
                for s in val:
                    crc = crc32c(struct.pack("<I", len(s)), crc)
                lc = struct.pack("<I", mask(crc))
                crc = crc32c(lc, crc)
                for s in val:
                    crc = crc32c(s, crc)
                raw = lens + lc + b"".join(val)
        else:
            raw, crc = val, crc32c(val)
        e.size = len(raw)
        e.crc32c = mask(crc)
        data += raw
        items.append((key.encode(), e.SerializeToString()))
    items.sort()
    with open(prefix + ".data-00000-of-00001", "wb") as f:
        f.write(data)
    h = BundleHeaderProto()
    h.num_shards = 1
    h.version.producer = 1
    items.insert(0, (b"", h.SerializeToString()))

    out = bytearray()

    def put_block(raw):
        typ = 0
        if snappy:
            raw = snappy_encode_literal(raw)
            typ = 1
        off = len(out)
        out.extend(raw)
        out.append(typ)
        out.extend(struct.pack("<I", mask(crc32c(raw + bytes([typ])))))
        return put_varint(off) + put_varint(len(raw))

    index = BlockBuilder(1)
    blk = BlockBuilder(16)
    for i, (k, v) in enumerate(items):
        blk.add(k, v)
        if len(blk.buf) >= block_size or i == len(items) - 1:
            # the block's own last key as the index key: valid, unshortened
            index.add(k, put_block(blk.finish()))
            blk = BlockBuilder(16)
    mh = put_block(BlockBuilder(16).finish())
    ih = put_block(index.finish())
    foot = mh + ih
    out += foot + bytes(40 - len(foot)) + struct.pack("<Q", MAGIC)
    with open(prefix + ".index", "wb") as f:
        f.write(out)


def main(argv):
    try:
        if len(argv) == 3 and argv[1] == "dump":
            print("\n".join(dump(argv[2])))
            return 0
        if len(argv) == 5 and argv[1] == "write":
            write(argv[2], int(argv[3]), argv[4] == "1")
            print("\n".join(dump(argv[2])))
            return 0
    except (Bad, OSError, struct.error) as e:
        print("bundle_check: %s" % e, file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
