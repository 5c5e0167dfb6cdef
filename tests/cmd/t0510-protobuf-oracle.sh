#!/bin/sh
# The independent oracle of issue 2: python3-protobuf (tests/py/
# tfexample.py, messages from TensorFlow's field numbers) against our
# Example encoder and decoder, through the tools.
#
#   JSON lines -> tfk-json -> records  decoded by python3-protobuf, value
#                                      by value (float bits, bytes hex)
#   records built by python3-protobuf  -> tfk-cat --json, each line
#                                      checked against protobuf's reading
#   and both ways round: protobuf records -> tfk-cat --json -> tfk-json
#   -> protobuf decodes the same values.
. "$(dirname "$0")/lib.sh"

TFE=$TESTS/py/tfexample.py
export TFE

# 1. tfk-json's records, decoded by protobuf --------------------------------
"$PYTHON" "$TFE" json-cases "$T" 400
check "400 random JSON lines -> tfk-json -> protobuf reads the same values" \
	sh -c 'tfk-json json.jsonl >json.tfrecord &&
	       "$PYTHON" "$TFE" dump json.tfrecord >json.got &&
	       cmp json.got json.txt'
check "  the same from gzip-compressed JSON lines" \
	sh -c 'gzip -c json.jsonl >json.jsonl.gz &&
	       tfk-json json.jsonl.gz | cmp - json.tfrecord'

# Hand-written lines with what JSON makes hard, each value checked.
cat >"$T/hard.jsonl" <<'EOF'
{"neg": [-1, -9223372036854775808, 9223372036854775807], "nul": ["a\u0000b", {"b64": "AP8A"}], "nan": [NaN, Infinity, -Infinity, -0.0, 1e-45, 3.4028234663852886e38]}
{"\u00e9t\u00e9 \u2603": "snow", "empty": null, "one": 7, "f": 2.5}

{"x": [1, 2.5], "s": ["", "\ud83d\ude00"]}
EOF
cat >"$T/hard.py" <<'EOF'
import math, os, struct, sys
sys.path.insert(0, os.path.dirname(os.environ["TFE"]))
import tfexample as tfe
recs = [tfe.Example.FromString(r) for r in tfe.read_tfrecords(sys.argv[1])]
assert len(recs) == 3, len(recs)
d = [tfe.example_to_dict(r) for r in recs]
assert d[0]["neg"] == ("int64", [-1, -2**63, 2**63 - 1]), d[0]["neg"]
assert d[0]["nul"] == ("bytes", [b"a\x00b", b"\x00\xff\x00"]), d[0]["nul"]
k, v = d[0]["nan"]
bits = [tfe.f32_bits(x) for x in v]
assert k == "float" and math.isnan(v[0]), v
assert bits[1:] == [0x7f800000, 0xff800000, 0x80000000, 0x00000001, 0x7f7fffff], [hex(b) for b in bits]
assert d[1]["\u00e9t\u00e9 \u2603"] == ("bytes", ["snow".encode()]), d[1]
assert d[1]["empty"] == ("none", []) and d[1]["one"] == ("int64", [7])
assert d[1]["f"] == ("float", [2.5])
assert d[2]["x"] == ("float", [1.0, 2.5]), d[2]
assert d[2]["s"] == ("bytes", [b"", "\U0001F600".encode()]), d[2]
print("ok")
EOF
testcmd "hard values: int64 extremes, NULs, b64, NaN/inf/-0/denormal, unicode names" \
	'tfk-json hard.jsonl >hard.tfrecord && "$PYTHON" hard.py hard.tfrecord' 'ok'

# 2. protobuf's records, read by tfk-cat --json ------------------------------
cat >"$T/mkpb.py" <<'EOF'
import os, sys
sys.path.insert(0, os.path.dirname(os.environ["TFE"]))
import tfexample as tfe
U = tfe.Unpacked
recs = [
    # packed (protobuf's default), as TensorFlow writes
    tfe.make_example({"label": [3], "x": [0.5, -1.0, 1e-45],
                      "img": [b"\xff\xd8\x00\x01"], "t": ["h\u00e9llo"]}),
    # unpacked: one tag per value
    tfe.make_example({"ids": [1, -1, -2**63, 2**63 - 1], "x": [2.0, -0.0]},
                     msgs=U),
    # an empty Feature, empty lists of each kind, bytes with NULs
    tfe.make_example({"e": None, "fl": [], "il": [], "bl": [],
                      "nul": [b"\x00", b"a\x00b", b""]},
                     kinds={"fl": "float", "il": "int64", "bl": "bytes"}),
    # NaN and infinities, unicode and empty names
    tfe.make_example({"nan": [float("nan"), float("inf"), -float("inf")],
                      "\u00e9t\u00e9": [1], "\u2603 snow": ["\u2603"],
                      "": [b"\x80\x81"]}),
    tfe.Example(),
]
tfe.write_tfrecords(sys.argv[1], [r.SerializeToString() for r in recs])
EOF
"$PYTHON" "$T/mkpb.py" "$T/pb.tfrecord"
testcmd "protobuf-built records -> tfk-cat --json: every line checked" \
	'tfk-cat --json pb.tfrecord >pb.jsonl && "$PYTHON" "$TFE" check-json pb.tfrecord pb.jsonl' \
	'ok\nok\nok\nok\nok'
"$PYTHON" "$TFE" cases "$T" 300
check "300 quirky-but-valid wire encodings -> tfk-cat --json: all match" \
	sh -c 'tfk-cat --json cases.tfrecord >cases.jsonl &&
	       "$PYTHON" "$TFE" check-json cases.tfrecord cases.jsonl >cases.out'

# 3. Both ways round ----------------------------------------------------------
check "protobuf -> tfk-cat --json -> tfk-json --schema -> protobuf: same values" \
	sh -c 'tfk-inspect --json pb.tfrecord >pb.schema.json &&
	       tfk-cat --json pb.tfrecord | tfk-json --schema pb.schema.json >pb2.tfrecord &&
	       "$PYTHON" "$TFE" dump pb.tfrecord >pb.want &&
	       "$PYTHON" "$TFE" dump pb2.tfrecord >pb.got && cmp pb.want pb.got'
cat >"$T/first.py" <<'EOF'
import os, sys
sys.path.insert(0, os.path.dirname(os.environ["TFE"]))
import tfexample as tfe
a, b = (next(iter(tfe.read_tfrecords(p))) for p in sys.argv[1:3])
print("same" if a == b else "%s\n%s" % (a.hex(), b.hex()))
EOF
testcmd "  and the packed record (protobuf's own bytes) comes back byte for byte" \
	'"$PYTHON" first.py pb.tfrecord pb2.tfrecord' 'same'

done_testing
