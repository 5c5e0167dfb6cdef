"""write_events.py FILE TAG=V,V,... [TAG=...]: a TensorBoard event file
of TF1 scalars (Summary.Value.simple_value), TAG's k-th value at step k,
after the file_version event, for tfk-plot's tests.

The Event protos are encoded by hand from the field numbers of
tensorflow/core/util/event.proto and summary.proto (Event: wall_time 1
double, step 2 int64, file_version 3 string, summary 5; Summary: value
1; Value: tag 1, simple_value 2 float) and framed as TFRecords with
masked CRC-32C (RFC 3720's polynomial), so no TensorFlow is needed and
tfkit's own writer is not what is tested against."""
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def field(num, wire, payload):
    key = varint(num << 3 | wire)
    if wire == 2:
        return key + varint(len(payload)) + payload
    return key + payload


def record(data):
    n = struct.pack("<Q", len(data))
    return (n + struct.pack("<I", masked(n)) + data +
            struct.pack("<I", masked(data)))


def main():
    path = sys.argv[1]
    series = []
    for arg in sys.argv[2:]:
        tag, vals = arg.split("=", 1)
        series.append((tag, [float(v) for v in vals.split(",")]))
    with open(path, "wb") as f:
        f.write(record(field(1, 1, struct.pack("<d", 1.0)) +
                       field(3, 2, b"brain.Event:2")))
        steps = max(len(v) for _, v in series)
        for s in range(steps):
            for tag, vals in series:
                if s >= len(vals):
                    continue
                value = (field(1, 2, tag.encode()) +
                         field(2, 5, struct.pack("<f", vals[s])))
                ev = (field(1, 1, struct.pack("<d", 2.0 + s)) +
                      field(2, 0, varint(s)) +
                      field(5, 2, field(1, 2, value)))
                f.write(record(ev))


main()
