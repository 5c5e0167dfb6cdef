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
    savedmodel_show.py DIR every TAGS   all of the above in one run, each
                                        after a line "@@ REQUEST ARGS"
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
    savedmodel_show.py DIR synth-functions
                                        write DIR/saved_model.pb: one meta
                                        graph whose object graph has
                                        functions with every kind of
                                        argument --all's Concrete
                                        Functions section prints
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
    # struct.proto: StructuredValue and what it holds
    m = fd.message_type.add(name="TensorSpecProto")
    _field(m, "name", 1, _F.TYPE_STRING)
    _field(m, "shape", 2, _F.TYPE_MESSAGE, type_name="TensorShapeProto")
    _field(m, "dtype", 3, _F.TYPE_INT32)
    m = fd.message_type.add(name="NoneValue")
    m = fd.message_type.add(name="ListValue")
    _field(m, "values", 1, _F.TYPE_MESSAGE, REP, "StructuredValue")
    m = fd.message_type.add(name="DictValue")
    _map(m, "fields", 1, "StructuredValue")
    m = fd.message_type.add(name="StructuredValue")
    m.oneof_decl.add(name="kind")
    for name, num, t, tn in (("none_value", 1, _F.TYPE_MESSAGE, "NoneValue"),
                             ("float64_value", 11, _F.TYPE_DOUBLE, None),
                             ("int64_value", 12, _F.TYPE_SINT64, None),
                             ("string_value", 13, _F.TYPE_STRING, None),
                             ("bool_value", 14, _F.TYPE_BOOL, None),
                             ("tensor_spec_value", 33, _F.TYPE_MESSAGE, "TensorSpecProto"),
                             ("list_value", 51, _F.TYPE_MESSAGE, "ListValue"),
                             ("tuple_value", 52, _F.TYPE_MESSAGE, "ListValue"),
                             ("dict_value", 53, _F.TYPE_MESSAGE, "DictValue")):
        _field(m, name, num, t, type_name=tn).oneof_index = 0
    # saved_object_graph.proto, trackable_object_graph.proto
    m = fd.message_type.add(name="ObjectReference")
    _field(m, "node_id", 1, _F.TYPE_INT32)
    _field(m, "local_name", 2, _F.TYPE_STRING)
    m = fd.message_type.add(name="SavedFunction")
    _field(m, "concrete_functions", 1, _F.TYPE_STRING, REP)
    m = fd.message_type.add(name="SavedBareConcreteFunction")
    _field(m, "concrete_function_name", 1, _F.TYPE_STRING)
    _field(m, "argument_keywords", 2, _F.TYPE_STRING, REP)
    m = fd.message_type.add(name="SavedObject")
    _field(m, "children", 1, _F.TYPE_MESSAGE, REP, "ObjectReference")
    m.oneof_decl.add(name="kind")
    _field(m, "function", 6, _F.TYPE_MESSAGE, type_name="SavedFunction").oneof_index = 0
    _field(m, "bare_concrete_function", 8, _F.TYPE_MESSAGE,
           type_name="SavedBareConcreteFunction").oneof_index = 0
    m = fd.message_type.add(name="SavedConcreteFunction")
    _field(m, "canonicalized_input_signature", 3, _F.TYPE_MESSAGE,
           type_name="StructuredValue")
    m = fd.message_type.add(name="SavedObjectGraph")
    _field(m, "nodes", 1, _F.TYPE_MESSAGE, REP, "SavedObject")
    _map(m, "concrete_functions", 2, "SavedConcreteFunction")
    m = fd.message_type.add(name="MetaGraphDef")
    _field(m, "meta_info_def", 1, _F.TYPE_MESSAGE, type_name="MetaInfoDef")
    _field(m, "graph_def", 2, _F.TYPE_MESSAGE, type_name="GraphDef")
    _map(m, "signature_def", 5, "SignatureDef")
    _field(m, "object_graph_def", 7, _F.TYPE_MESSAGE, type_name="SavedObjectGraph")
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


# TensorFlow's Python names of DataType numbers (tf.float32 ...).
PY_DTYPES = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16",
             6: "int8", 7: "string", 8: "complex64", 9: "int64", 10: "bool",
             14: "bfloat16", 17: "uint16", 18: "complex128", 19: "float16",
             20: "resource", 21: "variant", 22: "uint32", 23: "uint64"}


class TensorSpec:
    """Stands in for tf.TensorSpec: its repr() is TensorFlow's."""

    def __init__(self, p):
        self.name = p.name or None
        self.dtype = p.dtype
        if p.shape.unknown_rank:
            self.shape = "<unknown>"
        else:
            dims = [None if d.size < 0 else d.size for d in p.shape.dim]
            self.shape = "(%s,)" % dims[0] if len(dims) == 1 else \
                "(%s)" % ", ".join(str(d) for d in dims)

    def __repr__(self):
        return "TensorSpec(shape=%s, dtype=tf.%s, name=%r)" % (
            self.shape, PY_DTYPES[self.dtype], self.name)


def decode(v):
    # nested_structure_coder, for the kinds declared above
    k = v.WhichOneof("kind")
    if k in (None, "none_value"):
        return None
    if k == "tensor_spec_value":
        return TensorSpec(v.tensor_spec_value)
    if k == "list_value":
        return [decode(x) for x in v.list_value.values]
    if k == "tuple_value":
        return tuple(decode(x) for x in v.tuple_value.values)
    if k == "dict_value":
        # sorted: protobuf's map order is unspecified (tfk-model sorts)
        return {key: decode(x) for key, x in sorted(v.dict_value.fields.items())}
    return getattr(v, k)


def print_args(arguments, argument_type="Argument", indent=0):
    # saved_model_cli._print_args
    indent_str = "  " * indent

    def _maybe_add_quotes(value):
        is_quotes = "'" * isinstance(value, str)
        return is_quotes + str(value) + is_quotes

    def in_print(s, end="\n"):
        print(indent_str + s, end=end)

    for index, element in enumerate(arguments, 1):
        if indent == 4:
            in_print("%s #%d" % (argument_type, index))
        if isinstance(element, str):
            in_print("  %s" % element)
        elif isinstance(element, TensorSpec):
            print((indent + 1) * "  " + "%s: %s" % (element.name, repr(element)))
        elif isinstance(element, (list, tuple)):
            in_print("  DType: %s" % type(element).__name__)
            in_print("  Value: [", end="")
            for value in element:
                print("%s" % _maybe_add_quotes(value), end=", ")
            print("\b\b]")
        elif isinstance(element, dict):
            in_print("  DType: %s" % type(element).__name__)
            in_print("  Value: {", end="")
            for key, value in element.items():
                print("'%s': %s" % (str(key), _maybe_add_quotes(value)), end=", ")
            print("\b\b}")
        else:
            in_print("  DType: %s" % type(element).__name__)
            in_print("  Value: %s" % str(element))


def show_defined_functions(sm):
    # saved_model_cli._show_defined_functions, reading the object graph
    # where it loads the model with TensorFlow
    if not any(mg.HasField("object_graph_def") for mg in sm.meta_graphs):
        return
    print("\nConcrete Functions:", end="")
    if len(sm.meta_graphs) != 1 or not sm.meta_graphs[0].object_graph_def.nodes:
        print(" N/A (could not be listed due to unknown reasons)")
        return
    og = sm.meta_graphs[0].object_graph_def
    children = [(c.local_name, og.nodes[c.node_id]) for c in og.nodes[0].children
                if 0 <= c.node_id < len(og.nodes)]
    for name, child in sorted(children, key=lambda x: x[0]):
        kind = child.WhichOneof("kind")
        if kind == "function":
            names = sorted(child.function.concrete_functions)
            keywords = None
        elif kind == "bare_concrete_function":
            names = [child.bare_concrete_function.concrete_function_name]
            keywords = list(child.bare_concrete_function.argument_keywords)
        else:
            continue
        print("\n  Function Name: '%s'" % name)
        for index, fname in enumerate(names, 1):
            args, kwargs = None, None
            cf = og.concrete_functions.get(fname)
            sig = decode(cf.canonicalized_input_signature) if cf else None
            if sig:
                args, kwargs = sig
            elif keywords:
                args = keywords
            if args:
                print("    Option #%d" % index)
                print("      Callable with:")
                print_args(args, indent=4)
            if kwargs:
                print_args(kwargs, "Named Argument", indent=4)


def synth_functions(d):
    """One meta graph with an object graph whose root has functions of
    every shape _print_args handles."""
    sm = SavedModel()
    mg = sm.meta_graphs.add()
    mg.meta_info_def.tags.append("serve")
    og = mg.object_graph_def
    root = og.nodes.add()
    og.nodes.add()                                  # 1: not a function
    f = og.nodes.add()                              # 2: two traces
    f.function.concrete_functions.extend(["__inference_f_20", "__inference_f_10"])
    b = og.nodes.add()                              # 3: bare, keywords only
    b.bare_concrete_function.concrete_function_name = "__inference_bare_1"
    b.bare_concrete_function.argument_keywords.extend(["x", "y"])
    e = og.nodes.add()                              # 4: no arguments
    e.function.concrete_functions.append("__inference_e_1")
    for i, name in ((1, "a_variable"), (2, "f"), (3, "bare"), (4, "empty")):
        root.children.add(node_id=i, local_name=name)
    root.children.add(node_id=99, local_name="dangling")

    def spec(v, name, dims, dtype, unknown=False):
        t = v.tensor_spec_value
        t.name, t.dtype = name, dtype
        if unknown:
            t.shape.unknown_rank = True
        for x in dims:
            t.shape.dim.add(size=x)
        if not dims and not unknown:
            t.shape.SetInParent()

    sig = og.concrete_functions["__inference_f_10"].canonicalized_input_signature
    args, kw = sig.tuple_value.values.add(), sig.tuple_value.values.add()
    spec(args.tuple_value.values.add(), "img", [-1, 28, 28, 1], 1)
    spec(args.tuple_value.values.add(), "", [], 9)
    spec(args.tuple_value.values.add(), "any", [], 7, unknown=True)
    args.tuple_value.values.add().bool_value = True
    args.tuple_value.values.add().int64_value = -3
    args.tuple_value.values.add().float64_value = 1e-05
    args.tuple_value.values.add().float64_value = 2.5
    args.tuple_value.values.add().none_value.SetInParent()
    args.tuple_value.values.add().string_value = "mode"
    lst = args.tuple_value.values.add().list_value
    lst.values.add().string_value = "a"
    lst.values.add().int64_value = 2
    spec(lst.values.add(), "s", [3], 19)
    dct = args.tuple_value.values.add().dict_value
    dct.fields["k"].string_value = "v"
    dct.fields["n"].float64_value = 10000000000.0
    spec(kw.dict_value.fields["training"], "training", [], 10)
    sig = og.concrete_functions["__inference_f_20"].canonicalized_input_signature
    args, kw = sig.tuple_value.values.add(), sig.tuple_value.values.add()
    spec(args.tuple_value.values.add(), "x", [2], 2)
    kw.dict_value.SetInParent()
    sig = og.concrete_functions["__inference_e_1"].canonicalized_input_signature
    sig.tuple_value.values.add().tuple_value.SetInParent()
    sig.tuple_value.values.add().dict_value.SetInParent()
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "saved_model.pb"), "wb") as f:
        f.write(sm.SerializeToString())


def main():
    d, what = sys.argv[1], sys.argv[2]
    if what == "synth":
        return synth(d)
    if what == "synth-functions":
        return synth_functions(d)
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
        show_defined_functions(sm)
    elif what == "every":
        # all of the above for one tag-set, in one run (tests call this
        # once per model instead of once per request)
        tags = sys.argv[3]
        for req in (["tag-sets"], ["keys", tags], ["list-ops", tags], ["all"]):
            print("@@ " + " ".join(req))
            sys.stdout.flush()
            sys.argv[2:] = req
            main()
            sys.stdout.flush()
        mg = get_meta_graph_def(sm, tags)
        for k in sorted(mg.signature_def.keys()):
            print("@@ signature " + k)
            show_inputs_outputs(mg, k, 0)
        print("@@ summary")
        sys.argv[2:] = ["summary"]
        main()
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
