#!/usr/bin/python3
"""events_check.py - an independent oracle for TensorBoard event files.

Nothing here uses tfkit code. The messages (tensorflow.Event, Summary,
HistogramProto, SummaryMetadata, TensorProto, TensorShapeProto and the
hparams plugin's HParamsPluginData/SessionStartInfo with
google.protobuf.Value) are built with python3-protobuf from the field
numbers of TensorFlow's tensorflow/core/util/event.proto,
tensorflow/core/framework/{summary,tensor,tensor_shape}.proto and
TensorBoard's tensorboard/plugins/hparams/plugin_data.proto, written out
below. TFRecord framing and CRC-32C are checked by tfexample.py.

    events_check.py dump FILE [TAG=RAW.f32 ...]

prints one line per event:

    version <file_version> writer=<source_metadata.writer>
    scalar <step> <tag> <simple_value as %.9g>
    histo <step> <tag> num=<n> buckets=<k> ok|bad <why>
    hparams <step> <tag> plugin=<name> version=<v> group=<g>
            start=<start_time_secs %.3f> tensor=<dtype>/<shape> k=v,...
    other <step> <kind>

For a histogram whose tag is given as TAG=RAW.f32 (raw little-endian
float32 values), min, max, num, sum, sum_squares and the buckets are
recomputed with numpy from TensorFlow's histogram.cc algorithm (default
limits: 1e-12 growing by 10% up to 1e20 on both sides of 0, ±DBL_MAX at
the ends; value v counted in the first limit > v; runs of empty buckets
collapsed into their last limit) and compared.
"""

import os
import struct
import sys

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tfexample  # noqa: E402  (read_tfrecords with CRC checks)

_F = descriptor_pb2.FieldDescriptorProto
OPT, REP = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED


def _field(msg, name, number, ftype, label=OPT, type_name=None, oneof=None,
           packed=None):
    f = msg.field.add(name=name, number=number, type=ftype, label=label)
    if type_name:
        f.type_name = type_name
    if oneof is not None:
        f.oneof_index = oneof
    if packed is not None:
        f.options.packed = packed
    return f


def _build():
    pool = descriptor_pool.DescriptorPool()

    # google/protobuf/struct.proto (the subset SessionStartInfo uses)
    g = descriptor_pb2.FileDescriptorProto(name="oracle_struct.proto",
                                           package="oracle.pb",
                                           syntax="proto3")
    m = g.message_type.add(name="Value")
    m.oneof_decl.add(name="kind")
    _field(m, "null_value", 1, _F.TYPE_INT32, oneof=0)
    _field(m, "number_value", 2, _F.TYPE_DOUBLE, oneof=0)
    _field(m, "string_value", 3, _F.TYPE_STRING, oneof=0)
    _field(m, "bool_value", 4, _F.TYPE_BOOL, oneof=0)
    pool.Add(g)

    fd = descriptor_pb2.FileDescriptorProto(name="oracle_event.proto",
                                            package="oracle.tf",
                                            syntax="proto3",
                                            dependency=["oracle_struct.proto"])
    T = ".oracle.tf."
    m = fd.message_type.add(name="Dim")
    _field(m, "size", 1, _F.TYPE_INT64)
    _field(m, "name", 2, _F.TYPE_STRING)
    m = fd.message_type.add(name="TensorShapeProto")
    _field(m, "dim", 2, _F.TYPE_MESSAGE, REP, T + "Dim")
    _field(m, "unknown_rank", 3, _F.TYPE_BOOL)
    m = fd.message_type.add(name="TensorProto")
    _field(m, "dtype", 1, _F.TYPE_INT32)
    _field(m, "tensor_shape", 2, _F.TYPE_MESSAGE, type_name=T + "TensorShapeProto")
    _field(m, "tensor_content", 4, _F.TYPE_BYTES)
    _field(m, "float_val", 5, _F.TYPE_FLOAT, REP, packed=True)
    m = fd.message_type.add(name="HistogramProto")
    for i, n in enumerate(("min", "max", "num", "sum", "sum_squares")):
        _field(m, n, i + 1, _F.TYPE_DOUBLE)
    _field(m, "bucket_limit", 6, _F.TYPE_DOUBLE, REP, packed=True)
    _field(m, "bucket", 7, _F.TYPE_DOUBLE, REP, packed=True)
    m = fd.message_type.add(name="PluginData")
    _field(m, "plugin_name", 1, _F.TYPE_STRING)
    _field(m, "content", 2, _F.TYPE_BYTES)
    m = fd.message_type.add(name="SummaryMetadata")
    _field(m, "plugin_data", 1, _F.TYPE_MESSAGE, type_name=T + "PluginData")
    _field(m, "display_name", 2, _F.TYPE_STRING)
    _field(m, "summary_description", 3, _F.TYPE_STRING)
    _field(m, "data_class", 4, _F.TYPE_INT32)
    m = fd.message_type.add(name="Value")
    m.oneof_decl.add(name="value")
    _field(m, "node_name", 7, _F.TYPE_STRING)
    _field(m, "tag", 1, _F.TYPE_STRING)
    _field(m, "metadata", 9, _F.TYPE_MESSAGE, type_name=T + "SummaryMetadata")
    _field(m, "simple_value", 2, _F.TYPE_FLOAT, oneof=0)
    _field(m, "histo", 5, _F.TYPE_MESSAGE, type_name=T + "HistogramProto", oneof=0)
    _field(m, "tensor", 8, _F.TYPE_MESSAGE, type_name=T + "TensorProto", oneof=0)
    m = fd.message_type.add(name="Summary")
    _field(m, "value", 1, _F.TYPE_MESSAGE, REP, T + "Value")
    m = fd.message_type.add(name="SourceMetadata")
    _field(m, "writer", 1, _F.TYPE_STRING)
    m = fd.message_type.add(name="Event")
    m.oneof_decl.add(name="what")
    _field(m, "wall_time", 1, _F.TYPE_DOUBLE)
    _field(m, "step", 2, _F.TYPE_INT64)
    _field(m, "file_version", 3, _F.TYPE_STRING, oneof=0)
    _field(m, "graph_def", 4, _F.TYPE_BYTES, oneof=0)
    _field(m, "summary", 5, _F.TYPE_MESSAGE, type_name=T + "Summary", oneof=0)
    _field(m, "session_log", 7, _F.TYPE_BYTES, oneof=0)
    _field(m, "meta_graph_def", 9, _F.TYPE_BYTES, oneof=0)
    _field(m, "source_metadata", 10, _F.TYPE_MESSAGE, type_name=T + "SourceMetadata")
    # tensorboard/plugins/hparams/plugin_data.proto
    m = fd.message_type.add(name="SessionStartInfo")
    e = m.nested_type.add(name="HparamsEntry")
    e.options.map_entry = True
    _field(e, "key", 1, _F.TYPE_STRING)
    _field(e, "value", 2, _F.TYPE_MESSAGE, type_name=".oracle.pb.Value")
    _field(m, "hparams", 1, _F.TYPE_MESSAGE, REP, T + "SessionStartInfo.HparamsEntry")
    _field(m, "model_uri", 2, _F.TYPE_STRING)
    _field(m, "monitor_url", 3, _F.TYPE_STRING)
    _field(m, "group_name", 4, _F.TYPE_STRING)
    _field(m, "start_time_secs", 5, _F.TYPE_DOUBLE)
    m = fd.message_type.add(name="HParamsPluginData")
    m.oneof_decl.add(name="data")
    _field(m, "version", 1, _F.TYPE_INT32)
    _field(m, "session_start_info", 3, _F.TYPE_MESSAGE,
           type_name=T + "SessionStartInfo", oneof=0)
    pool.Add(fd)
    out = {}
    for name in ("Event", "HParamsPluginData"):
        desc = pool.FindMessageTypeByName("oracle.tf." + name)
        if hasattr(message_factory, "GetMessageClass"):
            out[name] = message_factory.GetMessageClass(desc)
        else:
            out[name] = message_factory.MessageFactory(pool).GetPrototype(desc)
    return out


_M = _build()
Event = _M["Event"]
HParamsPluginData = _M["HParamsPluginData"]

DBL_MAX = sys.float_info.max


def tf_limits():
    pos = []
    v = 1.0e-12
    while v < 1.0e20:
        pos.append(v)
        v *= 1.1
    return [-DBL_MAX] + [-x for x in reversed(pos)] + [0.0] + pos + [DBL_MAX]


def tf_histogram(x):
    """(min, max, num, sum, sum_squares, limits, counts) as histogram.cc."""
    lim = np.array(tf_limits())
    x = np.asarray(x, dtype=np.float64)
    idx = np.searchsorted(lim, x, side="right")   # upper_bound
    counts = np.bincount(idx, minlength=len(lim)).astype(np.float64)
    mn = float(x.min()) if len(x) else DBL_MAX
    mx = float(x.max()) if len(x) else -DBL_MAX
    s = 0.0
    sq = 0.0
    for v in x:                  # sequential double sums, as TF's Add()
        s += float(v)
        sq += float(v) * float(v)
    out_l, out_c = [], []
    i = 0
    n = len(lim)
    while i < n:
        end, c = lim[i], counts[i]
        i += 1
        if c <= 0.0:
            while i < n and counts[i] <= 0.0:
                end, c = lim[i], counts[i]
                i += 1
        out_l.append(float(end))
        out_c.append(float(c))
    return mn, mx, float(len(x)), s, sq, out_l, out_c


def check_histo(h, raw):
    mn, mx, num, s, sq, lim, cnt = tf_histogram(raw)
    why = []
    if h.min != mn or h.max != mx:
        why.append("min/max %r/%r want %r/%r" % (h.min, h.max, mn, mx))
    if h.num != num:
        why.append("num %r want %r" % (h.num, num))
    if abs(h.sum - s) > 1e-9 * max(1.0, abs(s)):
        why.append("sum %r want %r" % (h.sum, s))
    if abs(h.sum_squares - sq) > 1e-9 * max(1.0, abs(sq)):
        why.append("sum_squares %r want %r" % (h.sum_squares, sq))
    if list(h.bucket_limit) != lim:
        why.append("bucket_limit differ (%d vs %d)" % (len(h.bucket_limit),
                                                      len(lim)))
    if list(h.bucket) != cnt:
        why.append("bucket counts differ")
    return "ok" if not why else "bad " + "; ".join(why)


def dump(path, raws):
    for rec in tfexample.read_tfrecords(path):
        ev = Event.FromString(rec)
        kind = ev.WhichOneof("what")
        if kind == "file_version":
            print("version %s writer=%s" % (ev.file_version,
                                            ev.source_metadata.writer))
            continue
        if kind != "summary":
            print("other %d %s" % (ev.step, kind))
            continue
        for v in ev.summary.value:
            vk = v.WhichOneof("value")
            if vk == "simple_value":
                print("scalar %d %s %.9g" % (ev.step, v.tag, v.simple_value))
            elif vk == "histo":
                h = v.histo
                res = check_histo(h, raws[v.tag]) if v.tag in raws else "unchecked"
                print("histo %d %s num=%d buckets=%d %s" % (
                    ev.step, v.tag, h.num, len(h.bucket), res))
            elif v.metadata.plugin_data.plugin_name == "hparams":
                pd = HParamsPluginData.FromString(v.metadata.plugin_data.content)
                si = pd.session_start_info
                kv = []
                for k in sorted(si.hparams):
                    val = si.hparams[k]
                    w = val.WhichOneof("kind")
                    if w == "number_value":
                        kv.append("%s=%.9g" % (k, val.number_value))
                    elif w == "string_value":
                        kv.append("%s='%s'" % (k, val.string_value))
                    else:
                        kv.append("%s=<%s>" % (k, w))
                t = v.tensor
                shape = "x".join(str(d.size) for d in t.tensor_shape.dim)
                print("hparams %d %s plugin=%s version=%d data=%s group='%s' "
                      "start=%.3f tensor=%d/[%s]/%d %s" % (
                          ev.step, v.tag, v.metadata.plugin_data.plugin_name,
                          pd.version, pd.WhichOneof("data"), si.group_name,
                          si.start_time_secs, t.dtype, shape,
                          len(t.tensor_content) + len(t.float_val),
                          ",".join(kv)))
            else:
                print("other %d value:%s" % (ev.step, vk))


def main(argv):
    if len(argv) < 3 or argv[1] != "dump":
        sys.stderr.write("usage: events_check.py dump FILE [TAG=RAW.f32...]\n")
        return 2
    raws = {}
    for a in argv[3:]:
        tag, raw = a.split("=", 1)
        with open(raw, "rb") as f:
            data = f.read()
        raws[tag] = struct.unpack("<%df" % (len(data) // 4), data)
    dump(argv[2], raws)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
