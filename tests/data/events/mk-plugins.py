"""mk-plugins.py DIR SEED: the event file DIR/events.out.tfevents.0.plugins
and the fuzz seed SEED (tests/fuzz/seeds/fuzz-events/payload-plugins:
the same Event payloads, each after a 2-byte little-endian length, then
an odd byte), holding what TF2's plugins write, encoded by hand from the
field numbers of event.proto, summary.proto, tensor.proto and
TensorBoard's hparams plugin_data.proto / api.proto:
  step 1  "img"  images plugin: strings "7", "5" and two PNG signatures
  step 2  "img"  the same tag without metadata (TF2 writes it once)
  step 1  "note" text plugin: "hello"
  step 0  _hparams_/session_start_info: lr 0.1, opt "adam", bn true,
          group "g"; _hparams_/session_end_info: status 1 (success)
  step 3  "w"    histograms plugin: a float32 [2, 3] tensor_content,
          buckets (0, 1, 2) and (1, 2, 3)
Run with /usr/bin/python3 (no TensorFlow needed):
  python3 tests/data/events/mk-plugins.py tests/data/events/plugins \\
      tests/fuzz/seeds/fuzz-events/payload-plugins"""
import os
import struct
import sys


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def f(num, wire, p):
    k = varint(num << 3 | wire)
    return k + (varint(len(p)) + p if wire == 2 else p)


def meta(plugin, content=b""):
    pd = f(1, 2, plugin) + (f(2, 2, content) if content else b"")
    return f(9, 2, f(1, 2, pd))


def strtensor(vals, shape=None):
    t = f(1, 0, varint(7))      # DT_STRING
    if shape is not None:
        t += f(2, 2, b"".join(f(2, 2, f(1, 0, varint(d))) for d in shape))
    for v in vals:
        t += f(8, 2, v)
    return t


def event(step, value):
    return (f(1, 1, struct.pack("<d", 1.5)) + f(2, 0, varint(step)) +
            f(5, 2, f(1, 2, value)))


def hv(k, v):
    return f(1, 2, f(1, 2, k) + f(2, 2, v))


def crc32c(d):
    c = 0xFFFFFFFF
    for b in d:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF


def masked(d):
    c = crc32c(d)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


png = b"\x89PNG\r\n\x1a\n" + b"\0" * 8
ssi = (hv(b"lr", f(2, 1, struct.pack("<d", 0.1))) +
       hv(b"opt", f(3, 2, b"adam")) + hv(b"bn", f(4, 0, b"\x01")) +
       f(4, 2, b"g") + f(5, 1, struct.pack("<d", 3.0)))
hist = (f(1, 0, varint(1)) +  # DT_FLOAT
        f(2, 2, f(2, 2, f(1, 0, varint(2))) + f(2, 2, f(1, 0, varint(3)))) +
        f(4, 2, struct.pack("<6f", 0, 1, 2, 1, 2, 3)))
events = [
    event(1, f(1, 2, b"img") + meta(b"images") +
          f(8, 2, strtensor([b"7", b"5", png, png], [4]))),
    event(2, f(1, 2, b"img") + f(8, 2, strtensor([b"7", b"5", png], [3]))),
    event(1, f(1, 2, b"note") + meta(b"text") +
          f(8, 2, strtensor([b"hello"]))),
    event(0, f(1, 2, b"_hparams_/session_start_info") +
          meta(b"hparams", f(1, 0, b"\x00") + f(3, 2, ssi)) +
          f(8, 2, strtensor([b""]))),
    event(0, f(1, 2, b"_hparams_/session_end_info") +
          meta(b"hparams", f(4, 2, f(1, 0, b"\x01") +
                             f(2, 1, struct.pack("<d", 4.0)))) +
          f(8, 2, strtensor([b""]))),
    event(3, f(1, 2, b"w") + meta(b"histograms") + f(8, 2, hist)),
]
first = f(1, 1, struct.pack("<d", 1.0)) + f(3, 2, b"brain.Event:2")
with open(os.path.join(sys.argv[1], "events.out.tfevents.0.plugins"),
          "wb") as fh:
    for p in [first] + events:
        n = struct.pack("<Q", len(p))
        fh.write(n + struct.pack("<I", masked(n)) + p +
                 struct.pack("<I", masked(p)))
with open(sys.argv[2], "wb") as fh:
    for p in events:
        fh.write(struct.pack("<H", len(p)) + p)
    fh.write(b"\x01")
