#!/usr/bin/python3
"""savedmodel_show.py - an independent oracle for `tfk-model show`.

Nothing here uses tfkit code or its formats/*.proto. The SavedModel
messages a `show` needs are declared below with python3-protobuf from the
field numbers of TensorFlow's saved_model.proto, meta_graph.proto,
graph.proto, node_def.proto, function.proto, op_def.proto,
attr_value.proto, tensor_shape.proto and types.proto (fields not listed
are kept as unknown fields by protobuf and ignored), and the text is made
the way tensorflow/python/tools/saved_model_cli.py makes it (same loops,
same format strings, Python's own repr()). The one change: op sets are
printed sorted, as tfk-model prints them, where saved_model_cli prints a
Python set in hash order.

    savedmodel_show.py DIR tag-sets
    savedmodel_show.py DIR keys TAGS
    savedmodel_show.py DIR signature TAGS KEY
    savedmodel_show.py DIR list-ops TAGS
    savedmodel_show.py DIR all
    savedmodel_show.py DIR summary      one line per meta graph: tags,
                                        node count, function count,
                                        signature keys (for --json checks)
    savedmodel_show.py DIR synth        write DIR/saved_model.pb: a model
                                        with the corners TensorFlow allows
                                        (two meta graphs, tag order, a
                                        quote in a tag, absent shape,
                                        unknown rank, scalar, a _REF dtype,
                                        an empty signature, functions
                                        reached by call and by name, one
                                        not reached)
"""

import os
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
_PKG = "tfkoracle"
REP = _F.LABEL_REPEATED

# types.proto: DataType numbers.
_DT = ["DT_INVALID", "DT_FLOAT", "DT_DOUBLE", "DT_INT32", "DT_UINT8",
       "DT_INT16", "DT_INT8", "DT_STRING", "DT_COMPLEX64", "DT_INT64",
       "DT_BOOL", "DT_QINT8", "DT_QUINT8", "DT_QINT32", "DT_BFLOAT16",
       "DT_QINT16", "DT_QUINT16", "DT_UINT16", "DT_COMPLEX128", "DT_HALF",
       "DT_RESOURCE", "DT_VARIANT", "DT_UINT32", "DT_UINT64"]
DTYPES = {i: n for i, n in enumerate(_DT)}
DTYPES.update({i + 100: n + "_REF" for i, n in enumerate(_DT) if i})


def _field(msg, name, number, ftype, label=_F.LABEL_OPTIONAL, type_name=None):
    f = msg.field.add()
    f.name = name
    f.number = number
    f.type = ftype
    f.label = label
    if type_name:
        f.type_name = ".%s.%s" % (_PKG, type_name)
    return f


def _map(msg, name, number, value_type, value_kind=_F.TYPE_MESSAGE):
    entry = msg.nested_type.add()
    entry.name = "".join(w[:1].upper() + w[1:] for w in name.split("_")) + "Entry"
    entry.options.map_entry = True
    _field(entry, "key", 1, _F.TYPE_STRING)
    if value_kind == _F.TYPE_MESSAGE:
        _field(entry, "value", 2, value_kind, type_name=value_type)
    else:
        _field(entry, "value", 2, value_kind)
    _field(msg, name, number, _F.TYPE_MESSAGE, REP, "%s.%s" % (msg.name, entry.name))


def _build():
    fd = descriptor_pb2.FileDescriptorProto()
    fd.name = "tfk_savedmodel_oracle.proto"
    fd.package = _PKG
    fd.syntax = "proto3"
    m = fd.message_type.add(name="Dim")                 # TensorShapeProto.Dim
    _field(m, "size", 1, _F.TYPE_INT64)
    m = fd.message_type.add(name="TensorShapeProto")
    _field(m, "dim", 2, _F.TYPE_MESSAGE, REP, "Dim")
    _field(m, "unknown_rank", 3, _F.TYPE_BOOL)
    m = fd.message_type.add(name="TensorInfo")
    _field(m, "name", 1, _F.TYPE_STRING)
    _field(m, "dtype", 2, _F.TYPE_INT32)                # enum DataType
    _field(m, "tensor_shape", 3, _F.TYPE_MESSAGE, type_name="TensorShapeProto")
    m = fd.message_type.add(name="SignatureDef")
    _map(m, "inputs", 1, "TensorInfo")
    _map(m, "outputs", 2, "TensorInfo")
    _field(m, "method_name", 3, _F.TYPE_STRING)
    m = fd.message_type.add(name="NameAttrList")
    _field(m, "name", 1, _F.TYPE_STRING)
    m = fd.message_type.add(name="AttrValue")
    _field(m, "func", 10, _F.TYPE_MESSAGE, type_name="NameAttrList")
    m = fd.message_type.add(name="NodeDef")
    _field(m, "name", 1, _F.TYPE_STRING)
    _field(m, "op", 2, _F.TYPE_STRING)
    _map(m, "attr", 5, "AttrValue")
    m = fd.message_type.add(name="OpDef")
    _field(m, "name", 1, _F.TYPE_STRING)
    m = fd.message_type.add(name="FunctionDef")
    _field(m, "signature", 1, _F.TYPE_MESSAGE, type_name="OpDef")
    _field(m, "node_def", 3, _F.TYPE_MESSAGE, REP, "NodeDef")
    m = fd.message_type.add(name="FunctionDefLibrary")
    _field(m, "function", 1, _F.TYPE_MESSAGE, REP, "FunctionDef")
    m = fd.message_type.add(name="GraphDef")
    _field(m, "node", 1, _F.TYPE_MESSAGE, REP, "NodeDef")
    _field(m, "library", 2, _F.TYPE_MESSAGE, type_name="FunctionDefLibrary")
    m = fd.message_type.add(name="MetaInfoDef")
    _field(m, "tags", 4, _F.TYPE_STRING, REP)
    _field(m, "tensorflow_version", 5, _F.TYPE_STRING)
    m = fd.message_type.add(name="MetaGraphDef")
    _field(m, "meta_info_def", 1, _F.TYPE_MESSAGE, type_name="MetaInfoDef")
    _field(m, "graph_def", 2, _F.TYPE_MESSAGE, type_name="GraphDef")
    _map(m, "signature_def", 5, "SignatureDef")
    m = fd.message_type.add(name="SavedModel")
    _field(m, "saved_model_schema_version", 1, _F.TYPE_INT64)
    _field(m, "meta_graphs", 2, _F.TYPE_MESSAGE, REP, "MetaGraphDef")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    desc = pool.FindMessageTypeByName(_PKG + ".SavedModel")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


SavedModel = _build()


def read(d):
    with open(os.path.join(d, "saved_model.pb"), "rb") as f:
        return SavedModel.FromString(f.read())


def get_meta_graph_def(sm, tag_set):
    want = set(t for t in tag_set.split(",") if t)
    for mg in sm.meta_graphs:
        if set(mg.meta_info_def.tags) == want:
            return mg
    raise SystemExit("no tag-set %s" % tag_set)


def ops_used(graph_def):
    # meta_graph.ops_used_by_graph_def
    name_to_function = {f.signature.name: f for f in graph_def.library.function}
    used = set()
    todo = []

    def mark(op):
        if op not in used and op in name_to_function:
            todo.append(name_to_function[op])
        used.add(op)

    def process(node):
        mark(node.op)
        if node.op in ("PartitionedCall", "StatefulPartitionedCall"):
            mark(node.attr["f"].func.name)

    for n in graph_def.node:
        process(n)
    while todo:
        for n in todo.pop().node_def:
            process(n)
    return [op for op in used if op not in name_to_function]


def print_tensor_info(ti, indent):
    s = "  " * indent
    print(s + "    dtype: " + DTYPES[ti.dtype])
    if ti.tensor_shape.unknown_rank:
        shape = "unknown_rank"
    else:
        shape = "(" + ", ".join(str(d.size) for d in ti.tensor_shape.dim) + ")"
    print(s + "    shape: " + shape)
    print(s + "    name: " + ti.name)


def show_inputs_outputs(mg, key, indent):
    s = "  " * indent
    sd = mg.signature_def[key]
    print(s + "The given SavedModel SignatureDef contains the following input(s):")
    for k, ti in sorted(sd.inputs.items()):
        print(s + "  inputs['%s'] tensor_info:" % k)
        print_tensor_info(ti, indent + 1)
    print(s + "The given SavedModel SignatureDef contains the following output(s):")
    for k, ti in sorted(sd.outputs.items()):
        print(s + "  outputs['%s'] tensor_info:" % k)
        print_tensor_info(ti, indent + 1)
    print(s + "Method name is: %s" % sd.method_name)


def show_ops(mg):
    ops = sorted(ops_used(mg.graph_def))
    body = "{" + ", ".join(repr(o) for o in ops) + "}" if ops else "set()"
    print("The MetaGraph with tag set %s contains the following ops:"
          % list(mg.meta_info_def.tags), body)


def synth(d):
    sm = SavedModel()
    sm.saved_model_schema_version = 1
    mg = sm.meta_graphs.add()
    mg.meta_info_def.tags.extend(["serve", "gpu"])
    g = mg.graph_def
    for name, op in (("a", "Placeholder"), ("w", "VariableV2"),
                     ("mm", "MatMul"), ("call", "PartitionedCall"),
                     ("byname", "fn_b")):
        n = g.node.add()
        n.name, n.op = name, op
    g.node[3].attr["f"].func.name = "fn_a"
    f = g.library.function.add()
    f.signature.name = "fn_a"
    f.node_def.add(name="r", op="Relu")
    f.node_def.add(name="c", op="StatefulPartitionedCall").attr["f"].func.name = "fn_c"
    f = g.library.function.add()
    f.signature.name = "fn_b"
    f.node_def.add(name="s", op="Softmax")
    f = g.library.function.add()
    f.signature.name = "fn_c"
    f.node_def.add(name="t", op="Tanh")
    f = g.library.function.add()
    f.signature.name = "fn_unused"
    f.node_def.add(name="k", op="Conv2D")
    sd = mg.signature_def["predict"]
    sd.method_name = "tensorflow/serving/predict"
    ti = sd.inputs["a"]
    ti.name, ti.dtype = "a:0", 101                  # DT_FLOAT_REF, no shape
    ti = sd.inputs["b"]
    ti.name, ti.dtype = "b:0", 9
    ti.tensor_shape.SetInParent()                   # a scalar: no dims
    ti = sd.inputs["C"]
    ti.name, ti.dtype = "c:0", 7
    ti.tensor_shape.unknown_rank = True
    ti = sd.outputs["z"]
    ti.name, ti.dtype = "mm:0", 19
    ti.tensor_shape.dim.add(size=-1)
    ti.tensor_shape.dim.add(size=2)
    ti.tensor_shape.dim.add(size=3)
    mg.signature_def["empty"].SetInParent()
    mg2 = sm.meta_graphs.add()
    mg2.meta_info_def.tags.append("it's")
    mg3 = sm.meta_graphs.add()
    mg3.meta_info_def.tags.extend(["serve"])
    mg3.signature_def["serving_default"].method_name = "m"
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "saved_model.pb"), "wb") as f:
        f.write(sm.SerializeToString())


def main():
    d, what = sys.argv[1], sys.argv[2]
    if what == "synth":
        return synth(d)
    sm = read(d)
    if what == "tag-sets":
        print("The given SavedModel contains the following tag-sets:")
        for ts in sorted(list(mg.meta_info_def.tags) for mg in sm.meta_graphs):
            print("%r" % ", ".join(sorted(ts)))
    elif what == "keys":
        mg = get_meta_graph_def(sm, sys.argv[3])
        print("The given SavedModel MetaGraphDef contains SignatureDefs with "
              "the following keys:")
        for k in sorted(mg.signature_def.keys()):
            print('SignatureDef key: "%s"' % k)
    elif what == "signature":
        show_inputs_outputs(get_meta_graph_def(sm, sys.argv[3]), sys.argv[4], 0)
    elif what == "list-ops":
        show_ops(get_meta_graph_def(sm, sys.argv[3]))
    elif what == "all":
        for mg in sorted(sm.meta_graphs, key=lambda m: list(m.meta_info_def.tags)):
            print("\nMetaGraphDef with tag-set: '%s' contains the following "
                  "SignatureDefs:" % ", ".join(mg.meta_info_def.tags))
            for k in sorted(mg.signature_def.keys()):
                print("\nsignature_def['" + k + "']:")
                show_inputs_outputs(mg, k, 1)
            show_ops(mg)
    elif what == "summary":
        for mg in sm.meta_graphs:
            print(",".join(mg.meta_info_def.tags), len(mg.graph_def.node),
                  len(mg.graph_def.library.function),
                  " ".join(sorted(mg.signature_def.keys())),
                  " ".join(sorted(ops_used(mg.graph_def))))
    else:
        raise SystemExit("unknown request " + what)


if __name__ == "__main__":
    main()
