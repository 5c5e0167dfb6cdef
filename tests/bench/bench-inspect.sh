#!/bin/sh
# bench-inspect.sh - tfk-inspect against the Python way of summarizing
# a TFRecord file of Examples: read the records, parse each with
# python3-protobuf (C++ implementation) and keep per feature the count,
# list lengths and value range (min/max over each list) - the core of
# what tfk-inspect reports, without its samples and content sniffing.
# Input: the TensorFlow-written MNIST fixture (1000 records of 784
# floats and a label) concatenated COPIES times. The peer's record
# framing is plain Python without CRC checks (so it does less than we
# do: we verify both CRCs of every record). Times are CPU seconds of the
# process, as in bench-csv. Prints one JSON line; target: ours >= 20x
# the peer's records/s.
#
# Environment: TFK_BIN (tools), PYTHON (Debian's python3), TFK_FIXTURES,
# COPIES (10).
set -e
root=$(cd "$(dirname "$0")/../.." && pwd)
: "${TFK_BIN:=$root/bin}"
: "${PYTHON:=/usr/bin/python3}"
: "${TFK_FIXTURES:=$root/../shared/fixtures}"
: "${COPIES:=10}"
T=$(mktemp -d /tmp/tfk-bench-inspect-XXXXXX)
trap 'rm -rf "$T"' EXIT

i=0
while [ $i -lt "$COPIES" ]; do
	cat "$TFK_FIXTURES/tfrecord/tfx_mnist/mnist.tfrecord"
	i=$((i + 1))
done >"$T/data.tfrecord"
n=$((COPIES * 1000))

cat >"$T/peer.py" <<'EOF'
import resource, struct, sys
sys.path.insert(0, sys.argv[2])
import tfexample as tfe
stats = {}
with open(sys.argv[1], "rb") as f:
    blob = f.read()
off = records = 0
while off < len(blob):
    (n,) = struct.unpack_from("<Q", blob, off)
    ex = tfe.Example.FromString(blob[off + 12:off + 12 + n])
    off += n + 16
    records += 1
    for name, feat in ex.features.feature.items():
        kind = feat.WhichOneof("kind")
        vals = getattr(feat, kind).value if kind else []
        s = stats.get(name)
        if s is None:
            s = stats[name] = [0, len(vals), len(vals), None, None]
        s[0] += 1
        s[1] = min(s[1], len(vals))
        s[2] = max(s[2], len(vals))
        if len(vals) and kind != "bytes_list":
            lo, hi = min(vals), max(vals)
            s[3] = lo if s[3] is None else min(s[3], lo)
            s[4] = hi if s[4] is None else max(s[4], hi)
sys.stderr.write("%d records %r\n" % (records, sorted(stats.items())))
ru = resource.getrusage(resource.RUSAGE_SELF)
print(ru.ru_utime + ru.ru_stime)
EOF

cpu_of() {
	sh -c '"$@" >/dev/null; times' sh "$@" | awk 'NR == 2 {
		split($1, u, "m"); split($2, s, "m")
		sub("s", "", u[2]); sub("s", "", s[2])
		print u[1] * 60 + u[2] + s[1] * 60 + s[2] }'
}

# Ours: 5 passes per measurement (one pass is near the 10 ms resolution
# of `times`), best of three.
cat >"$T/ours.sh" <<'EOF'
for i in 1 2 3 4 5; do "$1" "$2" || exit 1; done
EOF
best=
for i in 1 2 3; do
	t=$(cpu_of sh "$T/ours.sh" "$TFK_BIN/tfk-inspect" "$T/data.tfrecord")
	best=$(awk -v a="$t" -v b="$best" 'BEGIN { print (b == "" || a < b) ? a : b }')
done
peer=$("$PYTHON" "$T/peer.py" "$T/data.tfrecord" "$root/tests/py" 2>"$T/peer.txt")

# Same facts: record count and the label range.
head=$("$TFK_BIN/tfk-inspect" "$T/data.tfrecord" | head -1)
case $head in
"$n records in 1 file, 2 features") ;;
*) echo "bench-inspect: unexpected summary: $head" >&2 ;;
esac
grep -q "^$n records .*'image_class', \[$n, 1, 1, 0, 9\]" "$T/peer.txt" ||
	echo "bench-inspect: peer disagrees: $(cut -c1-200 "$T/peer.txt")" >&2

awk -v n="$n" -v ours="$best" -v peer="$peer" 'BEGIN {
	if (ours <= 0) ours = 0.001
	o = 5 * n / ours; p = n / peer
	printf "{\"bench\":\"inspect\",\"ours\":%.0f,\"peer\":%.0f,\"unit\":\"records/s\",\"ratio\":%.1f,\"target\":20}\n", o, p, o / p
}'
