"""input_ids.py PREFIX EPOCHS COPIES FILE...: does every epoch's multiset of
records in the trainers' --input-log files (PREFIX.RANK: "epoch<TAB>crc")
equal COPIES times the records of the TFRecord FILEs? The CRC-32C of each
record comes from the crc32c package, the framing from this script.
Prints "E:same" or "E:differ (got N, want M)" per epoch."""
import collections
import glob
import struct
import sys

import crc32c


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    i = 0
    while i < len(data):
        (n,) = struct.unpack_from("<Q", data, i)
        yield data[i + 12:i + 12 + n]
        i += 16 + n


def main():
    prefix, epochs, copies = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    want = collections.Counter()
    for path in sys.argv[4:]:
        for r in records(path):
            want["%08x" % crc32c.crc32c(r)] += copies
    got = collections.defaultdict(collections.Counter)
    for path in glob.glob(prefix + ".*"):
        with open(path) as f:
            for line in f:
                e, c = line.split()
                got[int(e)][c] += 1
    out = []
    for e in range(epochs):
        if got[e] == want:
            out.append("%d:same" % e)
        else:
            out.append("%d:differ (got %d, want %d)" % (
                e, sum(got[e].values()), sum(want.values())))
    print(" ".join(out))


main()
