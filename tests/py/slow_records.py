"""slow_records: copy the TFRecords of FILE to stdout, sleeping SECONDS
before each record and flushing after it: a slow producer at the head
of a pipe (tfk-train's input-bound tests and the profile benchmark).

    python3 slow_records.py FILE SECONDS [REPEAT]
"""
import sys
import time


def main():
    path, delay = sys.argv[1], float(sys.argv[2])
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    data = open(path, "rb").read()
    out = sys.stdout.buffer
    for _ in range(repeat):
        off = 0
        while off < len(data):
            n = int.from_bytes(data[off:off + 8], "little")
            end = off + 12 + n + 4
            time.sleep(delay)
            try:
                out.write(data[off:end])
                out.flush()
            except BrokenPipeError:
                return
            off = end


main()
