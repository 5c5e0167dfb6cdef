#!/usr/bin/python3
"""savedmodel_check.py - an independent oracle for SavedModels we write.

Nothing here uses tfkit code or tfkit's formats/*.proto. The messages are
python3-protobuf classes built below from the field numbers of
TensorFlow's saved_model.proto, meta_graph.proto, graph.proto,
node_def.proto, attr_value.proto, tensor.proto, tensor_shape.proto,
versions.proto and saver.proto, and OP_DEFS is TensorFlow's op
registrations (tensorflow/core/ops/*_ops.cc: REGISTER_OP ... .Input /
.Output / .Attr) for every op the writer may emit, written out by hand.

    savedmodel_check.py check DIR
        decode DIR/saved_model.pb and check it strictly:
          - schema version 1, one MetaGraphDef;
          - every node: op in OP_DEFS; every attr known to the op with
            the AttrValue kind of its declared type; every attr without
            a default present; data inputs then control inputs; the
            number of data inputs as the arg list gives it (number_attr,
            type_list_attr expanded); each input names an existing node
            and an existing output of it, whose dtype (from the
            producer's op def and attrs) is the one the consumer's arg
            wants; unique node names;
          - each signature's TensorInfos name existing tensors of their
            dtype; a Placeholder input's shape attr equals its TensorInfo
            shape;
          - the SaverDef's tensors/ops exist; following restore_op_name's
            control inputs reaches AssignVariableOp nodes whose value
            comes from RestoreV2:k (through Identity) and whose resource
            is a VarHandleOp: every VarHandleOp restored exactly once,
            with the RestoreV2 dtype equal to the variable's.
        Then print one line per fact:
          schema 1
          tags serve
          meta VERSION GIT producer=P min_consumer=M
          saver FILENAME SAVE RESTORE max_to_keep=K sharded=B version=V
          sig KEY METHOD
          in KEY KEY NAME DTYPE SHAPE        (sig key, tensor key, ...)
          out KEY KEY NAME DTYPE SHAPE
          var NAME DTYPE SHAPE key=KEY
          node NAME OP
        Exits 1 with a message on the first violation.

    savedmodel_check.py run DIR OUT [DIR OUT ...]
        PyTorch's reading of the exported graph: interpret the
        serving_default signature of DIR node by node with torch ops in
        float64, following TensorFlow's op semantics (NHWC, SAME/VALID
        padding as TF computes it, TF's attrs), variables read from
        DIR/variables/variables by bundle_check.py's independent reader.
        Inputs: batch 3 from numpy.random.RandomState(0), float inputs
        uniform in [-1, 1), int inputs in [0, 10), written as
        OUT/in_KEY.npy (KEY's '/' as '_'); outputs as OUT/out_KEY.npy
        (float64). Prints "KEY SHAPE" per output. Several DIR OUT pairs
        share one start of Python and torch (seconds on a busy machine).
"""

import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

_F = descriptor_pb2.FieldDescriptorProto
OPT, REP = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED


def _field(msg, name, number, ftype, label=OPT, type_name=None, oneof=None):
    f = msg.field.add()
    f.name = name
    f.number = number
    f.type = ftype
    f.label = label
    if type_name:
        f.type_name = ".tensorflow." + type_name
    if oneof is not None:
        f.oneof_index = oneof


def _map(msg, name, number, value_type):
    camel = "".join(w[:1].upper() + w[1:] for w in name.split("_"))
    entry = msg.nested_type.add(name=camel + "Entry")
    entry.options.map_entry = True
    _field(entry, "key", 1, _F.TYPE_STRING)
    _field(entry, "value", 2, _F.TYPE_MESSAGE,
           type_name=msg.name + "." + entry.name)
    entry.field[1].type_name = ".tensorflow." + value_type
    _field(msg, name, number, _F.TYPE_MESSAGE, REP,
           msg.name + "." + entry.name)


def _build():
    fd = descriptor_pb2.FileDescriptorProto()
    fd.name = "savedmodel_check.proto"
    fd.package = "tensorflow"
    fd.syntax = "proto3"
    T = _F
    m = fd.message_type.add(name="TensorShapeProto")
    d = m.nested_type.add(name="Dim")
    _field(d, "size", 1, T.TYPE_INT64)
    _field(d, "name", 2, T.TYPE_STRING)
    _field(m, "dim", 2, T.TYPE_MESSAGE, REP, "TensorShapeProto.Dim")
    _field(m, "unknown_rank", 3, T.TYPE_BOOL)
    m = fd.message_type.add(name="TensorProto")
    _field(m, "dtype", 1, T.TYPE_INT32)
    _field(m, "tensor_shape", 2, T.TYPE_MESSAGE, type_name="TensorShapeProto")
    _field(m, "version_number", 3, T.TYPE_INT32)
    _field(m, "tensor_content", 4, T.TYPE_BYTES)
    _field(m, "float_val", 5, T.TYPE_FLOAT, REP)
    _field(m, "double_val", 6, T.TYPE_DOUBLE, REP)
    _field(m, "int_val", 7, T.TYPE_INT32, REP)
    _field(m, "string_val", 8, T.TYPE_BYTES, REP)
    _field(m, "int64_val", 10, T.TYPE_INT64, REP)
    _field(m, "bool_val", 11, T.TYPE_BOOL, REP)
    _field(m, "half_val", 13, T.TYPE_INT32, REP)
    m = fd.message_type.add(name="AttrValue")
    m.oneof_decl.add(name="value")
    lv = m.nested_type.add(name="ListValue")
    _field(lv, "s", 2, T.TYPE_BYTES, REP)
    _field(lv, "i", 3, T.TYPE_INT64, REP)
    _field(lv, "f", 4, T.TYPE_FLOAT, REP)
    _field(lv, "b", 5, T.TYPE_BOOL, REP)
    _field(lv, "type", 6, T.TYPE_INT32, REP)
    _field(lv, "shape", 7, T.TYPE_MESSAGE, REP, "TensorShapeProto")
    _field(lv, "tensor", 8, T.TYPE_MESSAGE, REP, "TensorProto")
    _field(m, "s", 2, T.TYPE_BYTES, oneof=0)
    _field(m, "i", 3, T.TYPE_INT64, oneof=0)
    _field(m, "f", 4, T.TYPE_FLOAT, oneof=0)
    _field(m, "b", 5, T.TYPE_BOOL, oneof=0)
    _field(m, "type", 6, T.TYPE_INT32, oneof=0)
    _field(m, "shape", 7, T.TYPE_MESSAGE, type_name="TensorShapeProto",
           oneof=0)
    _field(m, "tensor", 8, T.TYPE_MESSAGE, type_name="TensorProto", oneof=0)
    _field(m, "list", 1, T.TYPE_MESSAGE, type_name="AttrValue.ListValue",
           oneof=0)
    _field(m, "placeholder", 9, T.TYPE_STRING, oneof=0)
    m = fd.message_type.add(name="NodeDef")
    _field(m, "name", 1, T.TYPE_STRING)
    _field(m, "op", 2, T.TYPE_STRING)
    _field(m, "input", 3, T.TYPE_STRING, REP)
    _field(m, "device", 4, T.TYPE_STRING)
    _map(m, "attr", 5, "AttrValue")
    m = fd.message_type.add(name="VersionDef")
    _field(m, "producer", 1, T.TYPE_INT32)
    _field(m, "min_consumer", 2, T.TYPE_INT32)
    _field(m, "bad_consumers", 3, T.TYPE_INT32, REP)
    m = fd.message_type.add(name="GraphDef")
    _field(m, "node", 1, T.TYPE_MESSAGE, REP, "NodeDef")
    _field(m, "versions", 4, T.TYPE_MESSAGE, type_name="VersionDef")
    m = fd.message_type.add(name="SaverDef")
    _field(m, "filename_tensor_name", 1, T.TYPE_STRING)
    _field(m, "save_tensor_name", 2, T.TYPE_STRING)
    _field(m, "restore_op_name", 3, T.TYPE_STRING)
    _field(m, "max_to_keep", 4, T.TYPE_INT32)
    _field(m, "sharded", 5, T.TYPE_BOOL)
    _field(m, "keep_checkpoint_every_n_hours", 6, T.TYPE_FLOAT)
    _field(m, "version", 7, T.TYPE_INT32)
    m = fd.message_type.add(name="TensorInfo")
    m.oneof_decl.add(name="encoding")
    _field(m, "name", 1, T.TYPE_STRING, oneof=0)
    _field(m, "dtype", 2, T.TYPE_INT32)
    _field(m, "tensor_shape", 3, T.TYPE_MESSAGE, type_name="TensorShapeProto")
    m = fd.message_type.add(name="SignatureDef")
    _map(m, "inputs", 1, "TensorInfo")
    _map(m, "outputs", 2, "TensorInfo")
    _field(m, "method_name", 3, T.TYPE_STRING)
    # google.protobuf.Any (any.proto), declared here under tensorflow:
    # only the wire format matters
    m = fd.message_type.add(name="Any")
    _field(m, "type_url", 1, T.TYPE_STRING)
    _field(m, "value", 2, T.TYPE_BYTES)
    m = fd.message_type.add(name="AssetFileDef")
    _field(m, "tensor_info", 1, T.TYPE_MESSAGE, type_name="TensorInfo")
    _field(m, "filename", 2, T.TYPE_STRING)
    m = fd.message_type.add(name="CollectionDef")
    m.oneof_decl.add(name="kind")
    nl = m.nested_type.add(name="NodeList")
    _field(nl, "value", 1, T.TYPE_STRING, REP)
    al = m.nested_type.add(name="AnyList")
    _field(al, "value", 1, T.TYPE_MESSAGE, REP, "Any")
    _field(m, "node_list", 1, T.TYPE_MESSAGE,
           type_name="CollectionDef.NodeList", oneof=0)
    _field(m, "any_list", 5, T.TYPE_MESSAGE,
           type_name="CollectionDef.AnyList", oneof=0)
    m = fd.message_type.add(name="MetaGraphDef")
    mi = m.nested_type.add(name="MetaInfoDef")
    _field(mi, "meta_graph_version", 1, T.TYPE_STRING)
    _field(mi, "tags", 4, T.TYPE_STRING, REP)
    _field(mi, "tensorflow_version", 5, T.TYPE_STRING)
    _field(mi, "tensorflow_git_version", 6, T.TYPE_STRING)
    _field(mi, "stripped_default_attrs", 7, T.TYPE_BOOL)
    _field(m, "meta_info_def", 1, T.TYPE_MESSAGE,
           type_name="MetaGraphDef.MetaInfoDef")
    _field(m, "graph_def", 2, T.TYPE_MESSAGE, type_name="GraphDef")
    _field(m, "saver_def", 3, T.TYPE_MESSAGE, type_name="SaverDef")
    _map(m, "collection_def", 4, "CollectionDef")
    _map(m, "signature_def", 5, "SignatureDef")
    _field(m, "asset_file_def", 6, T.TYPE_MESSAGE, REP, "AssetFileDef")
    m = fd.message_type.add(name="SavedModel")
    _field(m, "saved_model_schema_version", 1, T.TYPE_INT64)
    _field(m, "meta_graphs", 2, T.TYPE_MESSAGE, REP, "MetaGraphDef")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return _message_class(pool.FindMessageTypeByName("tensorflow.SavedModel"))


def _message_class(desc):
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(desc.file.pool).GetPrototype(desc)


SavedModel = _build()

# DataType numbers (types.proto).
DT = {"float": 1, "double": 2, "int32": 3, "uint8": 4, "int16": 5,
      "int8": 6, "string": 7, "int64": 9, "bool": 10, "half": 19,
      "resource": 20}
DT_NAME = {v: k for k, v in DT.items()}

# --- TensorFlow's op definitions ---------------------------------------------
# inputs/outputs: "name:TYPE" where TYPE is a fixed dtype ("string"), a
# type attr ("T"), "N*T" (number_attr N of type attr T), "N*string", or
# "[dtypes]" (type_list_attr). attrs: name -> (kind, has_default).


def _op(inputs, outputs, attrs):
    a = {}
    for spec in attrs.split():
        name, kind = spec.split(":")
        dflt = kind.endswith("=")
        a[name] = (kind.rstrip("="), dflt)
    return {"in": inputs.split(), "out": outputs.split(), "attrs": a}


_UNARY_X = "x:T", "y:T", "T:type"
_BIN = "x:T y:T", "z:T", "T:type"
_CMP = "x:T y:T", "z:bool", "T:type"
_ACT = "features:T", "activations:T", "T:type"
_RED = ("input:T reduction_indices:Tidx", "output:T",
        "keep_dims:bool= T:type Tidx:type=")
_RESIZE = "images:T size:int32"

OP_DEFS = {
    # array_ops.cc, state/resource_variable_ops.cc, io_ops.cc, ...
    "Placeholder": _op("", "output:dtype", "dtype:type shape:shape="),
    "PlaceholderWithDefault": _op("input:dtype", "output:dtype",
                                  "dtype:type shape:shape"),
    "Const": _op("", "output:dtype", "value:tensor dtype:type"),
    "Identity": _op("input:T", "output:T", "T:type"),
    "NoOp": _op("", "", ""),
    # lookup_ops.cc (static hash tables over a vocabulary file)
    "HashTableV2": _op("", "table_handle:resource",
                       "container:string= shared_name:string= "
                       "use_node_name_sharing:bool= key_dtype:type "
                       "value_dtype:type"),
    "InitializeTableFromTextFileV2": _op(
        "table_handle:resource filename:string", "",
        "key_index:int value_index:int vocab_size:int= "
        "delimiter:string= offset:int="),
    # math_ops.cc
    "DenseBincount": _op("input:Tidx size:Tidx weights:T", "output:T",
                         "Tidx:type T:type binary_output:bool="),
    "FloorMod": _op(*_BIN),
    # string_ops.cc
    "StringToHashBucketFast": _op("input:string", "output:int64",
                                  "num_buckets:int"),
    "StringToHashBucketStrong": _op("input:string", "output:int64",
                                    "num_buckets:int key:list(int)"),
    "StringLower": _op("input:string", "output:string", "encoding:string="),
    "StaticRegexReplace": _op("input:string", "output:string",
                              "pattern:string rewrite:string "
                              "replace_global:bool="),
    "StringSplitV2": _op("input:string sep:string",
                         "indices:int64 values:string shape:int64",
                         "maxsplit:int="),
    # ragged_conversion_ops.cc
    "RaggedTensorToTensor": _op(
        "shape:Tshape values:T default_value:T "
        "row_partition_tensors:num_row_partition_tensors*Tindex",
        "result:T", "T:type Tindex:type Tshape:type "
        "num_row_partition_tensors:int row_partition_types:list(string)"),
    "AsString": _op("input:T", "output:string",
                    "T:type precision:int= scientific:bool= shortest:bool= "
                    "width:int= fill:string="),
    "LookupTableFindV2": _op(
        "table_handle:resource keys:Tin default_value:Tout", "values:Tout",
        "Tin:type Tout:type"),
    "VarHandleOp": _op("", "resource:resource",
                       "container:string= shared_name:string= "
                       "debug_name:string= dtype:type shape:shape "
                       "allowed_devices:list(string)="),
    # TF1 reference variables and parsing, which the writer never emits:
    # here so that the checker can be run on TensorFlow's own TF1
    # SavedModels (the half_plus_two fixture) as a test of the checker.
    "VariableV2": _op("", "ref:dtype", "shape:shape dtype:type "
                      "container:string= shared_name:string="),
    "Assign": _op("ref:T value:T", "output_ref:T",
                  "T:type validate_shape:bool= use_locking:bool="),
    "ParseExample": _op("serialized:string names:string "
                        "sparse_keys:Nsparse*string "
                        "dense_keys:Ndense*string dense_defaults:[Tdense]",
                        "sparse_indices:Nsparse*int64 "
                        "sparse_values:[sparse_types] "
                        "sparse_shapes:Nsparse*int64 dense_values:[Tdense]",
                        "Nsparse:int Ndense:int sparse_types:list(type) "
                        "Tdense:list(type) dense_shapes:list(shape)"),
    "ReadVariableOp": _op("resource:resource", "value:dtype", "dtype:type"),
    "AssignVariableOp": _op("resource:resource value:dtype", "",
                            "dtype:type validate_shape:bool="),
    "SaveV2": _op("prefix:string tensor_names:string "
                  "shape_and_slices:string tensors:[dtypes]", "",
                  "dtypes:list(type)"),
    "RestoreV2": _op("prefix:string tensor_names:string "
                     "shape_and_slices:string", "tensors:[dtypes]",
                     "dtypes:list(type)"),
    "StringJoin": _op("inputs:N*string", "output:string",
                      "N:int separator:string="),
    "ShardedFilename": _op("basename:string shard:int32 num_shards:int32",
                           "filename:string", ""),
    "MergeV2Checkpoints": _op("checkpoint_prefixes:string "
                              "destination_prefix:string", "",
                              "delete_old_dirs:bool= "
                              "allow_missing_files:bool="),
    "Pack": _op("values:N*T", "output:T", "N:int T:type axis:int="),
    "Unpack": _op("value:T", "output:num*T", "num:int T:type axis:int="),
    "ConcatV2": _op("values:N*T axis:Tidx", "output:T",
                    "N:int T:type Tidx:type="),
    "SplitV": _op("value:T size_splits:Tlen split_dim:int32",
                  "output:num_split*T", "num_split:int T:type Tlen:type="),
    "Reshape": _op("tensor:T shape:Tshape", "output:T",
                   "T:type Tshape:type="),
    "Shape": _op("input:T", "output:out_type", "T:type out_type:type="),
    "Size": _op("input:T", "output:out_type", "T:type out_type:type="),
    "Rank": _op("input:T", "output:int32", "T:type"),
    "ExpandDims": _op("input:T dim:Tdim", "output:T", "T:type Tdim:type="),
    "Squeeze": _op("input:T", "output:T", "T:type squeeze_dims:list(int)="),
    "Transpose": _op("x:T perm:Tperm", "y:T", "T:type Tperm:type="),
    "Fill": _op("dims:index_type value:T", "output:T",
                "T:type index_type:type="),
    "BroadcastTo": _op("input:T shape:Tidx", "output:T", "T:type Tidx:type="),
    "Tile": _op("input:T multiples:Tmultiples", "output:T",
                "T:type Tmultiples:type="),
    "Pad": _op("input:T paddings:Tpaddings", "output:T",
               "T:type Tpaddings:type="),
    "PadV2": _op("input:T paddings:Tpaddings constant_values:T", "output:T",
                 "T:type Tpaddings:type="),
    "Slice": _op("input:T begin:Index size:Index", "output:T",
                 "T:type Index:type"),
    "StridedSlice": _op("input:T begin:Index end:Index strides:Index",
                        "output:T", "T:type Index:type begin_mask:int= "
                        "end_mask:int= ellipsis_mask:int= "
                        "new_axis_mask:int= shrink_axis_mask:int="),
    "GatherV2": _op("params:Tparams indices:Tindices axis:Taxis",
                    "output:Tparams", "batch_dims:int= Tparams:type "
                    "Tindices:type Taxis:type"),
    "ZerosLike": _op("x:T", "y:T", "T:type"),
    "StopGradient": _op("input:T", "output:T", "T:type"),
    "PreventGradient": _op("input:T", "output:T", "T:type message:string="),
    "Bucketize": _op("input:T", "output:int32",
                     "T:type boundaries:list(float)"),
    # math_ops.cc
    "Cast": _op("x:SrcT", "y:DstT", "SrcT:type DstT:type Truncate:bool="),
    "MatMul": _op("a:T b:T", "product:T", "transpose_a:bool= "
                  "transpose_b:bool= T:type grad_a:bool= grad_b:bool="),
    "AddV2": _op(*_BIN), "Add": _op(*_BIN), "Sub": _op(*_BIN),
    "Mul": _op(*_BIN), "RealDiv": _op(*_BIN), "Maximum": _op(*_BIN),
    "Minimum": _op(*_BIN), "Pow": _op(*_BIN),
    "SquaredDifference": _op(*_BIN),
    "Greater": _op(*_CMP), "GreaterEqual": _op(*_CMP), "Less": _op(*_CMP),
    "LessEqual": _op(*_CMP),
    "Equal": _op("x:T y:T", "z:bool",
                 "T:type incompatible_shape_error:bool="),
    "NotEqual": _op("x:T y:T", "z:bool",
                    "T:type incompatible_shape_error:bool="),
    "LogicalAnd": _op("x:bool y:bool", "z:bool", ""),
    "SelectV2": _op("condition:bool t:T e:T", "output:T", "T:type"),
    "Sigmoid": _op(*_UNARY_X), "Tanh": _op(*_UNARY_X),
    "Neg": _op(*_UNARY_X), "Abs": _op(*_UNARY_X), "Square": _op(*_UNARY_X),
    "Sqrt": _op(*_UNARY_X), "Rsqrt": _op(*_UNARY_X), "Exp": _op(*_UNARY_X),
    "Log": _op(*_UNARY_X), "Log1p": _op(*_UNARY_X), "Sign": _op(*_UNARY_X),
    "Floor": _op(*_UNARY_X), "Erf": _op(*_UNARY_X),
    "Sum": _op(*_RED), "Mean": _op(*_RED), "Max": _op(*_RED),
    "Min": _op(*_RED), "Prod": _op(*_RED),
    "ArgMax": _op("input:T dimension:Tidx", "output:output_type",
                  "T:type Tidx:type= output_type:type="),
    "ArgMin": _op("input:T dimension:Tidx", "output:output_type",
                  "T:type Tidx:type= output_type:type="),
    "UnsortedSegmentSum": _op("data:T segment_ids:Tindices "
                              "num_segments:Tnumsegments", "output:T",
                              "T:type Tindices:type Tnumsegments:type="),
    # nn_ops.cc
    "BiasAdd": _op("value:T bias:T", "output:T", "T:type data_format:string="),
    "Relu": _op(*_ACT), "Relu6": _op(*_ACT), "Elu": _op(*_ACT),
    "Selu": _op(*_ACT), "Softplus": _op(*_ACT),
    "LeakyRelu": _op("features:T", "activations:T", "alpha:float= T:type="),
    "Softmax": _op("logits:T", "softmax:T", "T:type"),
    "LogSoftmax": _op("logits:T", "logsoftmax:T", "T:type"),
    "Conv2D": _op("input:T filter:T", "output:T", "T:type "
                  "strides:list(int) use_cudnn_on_gpu:bool= padding:string "
                  "explicit_paddings:list(int)= data_format:string= "
                  "dilations:list(int)="),
    "DepthwiseConv2dNative": _op("input:T filter:T", "output:T", "T:type "
                                 "strides:list(int) padding:string "
                                 "explicit_paddings:list(int)= "
                                 "data_format:string= dilations:list(int)="),
    "MaxPool": _op("input:T", "output:T", "T:type= ksize:list(int) "
                   "strides:list(int) padding:string "
                   "explicit_paddings:list(int)= data_format:string="),
    "AvgPool": _op("value:T", "output:T", "ksize:list(int) "
                   "strides:list(int) padding:string data_format:string= "
                   "T:type"),
    "FusedBatchNormV3": _op("x:T scale:U offset:U mean:U variance:U",
                            "y:T batch_mean:U batch_variance:U "
                            "reserve_space_1:U reserve_space_2:U "
                            "reserve_space_3:U", "T:type U:type "
                            "epsilon:float= exponential_avg_factor:float= "
                            "data_format:string= is_training:bool="),
    # image_ops.cc
    "ResizeBilinear": _op(_RESIZE, "resized_images:float", "T:type "
                          "align_corners:bool= half_pixel_centers:bool="),
    "ResizeBicubic": _op(_RESIZE, "resized_images:float", "T:type "
                         "align_corners:bool= half_pixel_centers:bool="),
    "ResizeNearestNeighbor": _op(_RESIZE, "resized_images:T", "T:type "
                                 "align_corners:bool= "
                                 "half_pixel_centers:bool="),
    "ResizeArea": _op(_RESIZE, "resized_images:float",
                      "T:type align_corners:bool="),
}

# AttrValue oneof field for each attr kind.
KIND_FIELD = {"type": "type", "int": "i", "float": "f", "bool": "b",
              "string": "s", "shape": "shape", "tensor": "tensor"}
LIST_FIELD = {"list(int)": "i", "list(float)": "f", "list(type)": "type",
              "list(string)": "s", "list(shape)": "shape"}


class Bad(Exception):
    pass


def shape_str(s):
    if s is None:
        return "none"
    if s.unknown_rank:
        return "?"
    return "[" + ",".join(str(d.size) for d in s.dim) + "]"


def expand_args(args, attrs, where):
    """The dtype of each slot of an arg list, given the node's attrs."""
    out = []
    for spec in args:
        name, t = spec.split(":")
        if t.startswith("["):
            lst = attrs.get(t[1:-1])
            if lst is None:
                raise Bad("%s: arg %s needs attr %s" % (where, name, t))
            out += list(lst.list.type)
            continue
        n = 1
        if "*" in t:
            na, t = t.split("*")
            if na not in attrs:
                raise Bad("%s: arg %s needs attr %s" % (where, name, na))
            n = attrs[na].i
        if t in DT:
            dt = DT[t]
        else:
            a = attrs.get(t)
            if a is None:
                raise Bad("%s: arg %s: no type attr %s" % (where, name, t))
            dt = a.type
        out += [dt] * n
    return out


def check_node(nd):
    where = "node %s (%s)" % (nd.name, nd.op)
    od = OP_DEFS.get(nd.op)
    if od is None:
        raise Bad("%s: op not in TensorFlow's op table" % where)
    for k, v in nd.attr.items():
        if k.startswith("_"):
            continue
        if k not in od["attrs"]:
            raise Bad("%s: attr %s is not TensorFlow's" % (where, k))
        kind = od["attrs"][k][0]
        got = v.WhichOneof("value")
        if kind in KIND_FIELD:
            if got != KIND_FIELD[kind]:
                raise Bad("%s: attr %s: %s expected, AttrValue.%s set" %
                          (where, k, kind, got))
        else:
            if got != "list":
                raise Bad("%s: attr %s: %s expected, AttrValue.%s set" %
                          (where, k, kind, got))
            for f in ("s", "i", "f", "b", "type", "shape", "tensor"):
                if f != LIST_FIELD[kind] and len(getattr(v.list, f)):
                    raise Bad("%s: attr %s: %s holds list.%s" %
                              (where, k, kind, f))
        if kind == "type" and v.type not in DT_NAME:
            raise Bad("%s: attr %s: DataType %d" % (where, k, v.type))
    for k, (kind, dflt) in od["attrs"].items():
        if not dflt and k not in nd.attr:
            raise Bad("%s: required attr %s missing" % (where, k))
    data, ctrl = [], []
    for s in nd.input:
        if s.startswith("^"):
            ctrl.append(s[1:])
        elif ctrl:
            raise Bad("%s: data input %s after a control input" % (where, s))
        else:
            data.append(s)
    want_in = expand_args(od["in"], nd.attr, where)
    if len(data) != len(want_in):
        raise Bad("%s: %d data inputs, the op def gives %d" %
                  (where, len(data), len(want_in)))
    return data, ctrl, want_in, expand_args(od["out"], nd.attr, where)


def split_tensor(s):
    if ":" in s:
        n, k = s.rsplit(":", 1)
        return n, int(k)
    return s, 0


def check(d):
    path = d + "/saved_model.pb"
    with open(path, "rb") as f:
        raw = f.read()
    sm = SavedModel()
    sm.ParseFromString(raw)
    out = []
    if sm.saved_model_schema_version != 1:
        raise Bad("schema version %d" % sm.saved_model_schema_version)
    if len(sm.meta_graphs) != 1:
        raise Bad("%d meta graphs" % len(sm.meta_graphs))
    out.append("schema 1")
    mg = sm.meta_graphs[0]
    mi = mg.meta_info_def
    out.append("tags " + ",".join(mi.tags))
    gd = mg.graph_def
    out.append("meta %s %s producer=%d min_consumer=%d" %
               (mi.tensorflow_version, mi.tensorflow_git_version,
                gd.versions.producer, gd.versions.min_consumer))
    nodes, outs, info = {}, {}, {}
    for nd in gd.node:
        if nd.name in nodes:
            raise Bad("node name %s twice" % nd.name)
        nodes[nd.name] = nd
    for nd in gd.node:
        data, ctrl, want_in, out_types = check_node(nd)
        outs[nd.name] = out_types
        info[nd.name] = (data, ctrl, want_in)
    for nd in gd.node:
        data, ctrl, want_in = info[nd.name]
        for i, s in enumerate(data):
            src, k = split_tensor(s)
            if src not in nodes:
                raise Bad("node %s: input %s: no such node" % (nd.name, s))
            if k >= len(outs[src]):
                raise Bad("node %s: input %s: %s has %d outputs" %
                          (nd.name, s, src, len(outs[src])))
            if outs[src][k] != want_in[i]:
                raise Bad("node %s: input %d (%s): %s, the op wants %s" %
                          (nd.name, i, s, DT_NAME.get(outs[src][k]),
                           DT_NAME.get(want_in[i])))
        for c in ctrl:
            if c not in nodes:
                raise Bad("node %s: control input ^%s: no such node" %
                          (nd.name, c))

    def tensor(name, where):
        n, k = split_tensor(name)
        if n not in nodes or k >= len(outs[n]):
            raise Bad("%s: tensor %s not in the graph" % (where, name))
        return nodes[n], outs[n][k]

    sd = mg.saver_def
    restored = {}
    if mg.HasField("saver_def"):
        out.append("saver %s %s %s max_to_keep=%d sharded=%d version=%d" %
                   (sd.filename_tensor_name, sd.save_tensor_name,
                    sd.restore_op_name, sd.max_to_keep, sd.sharded,
                    sd.version))
        fn, fdt = tensor(sd.filename_tensor_name, "saver filename")
        if fdt != DT["string"] or fn.op not in ("Placeholder",
                                                "PlaceholderWithDefault"):
            raise Bad("saver filename: not a string Placeholder")
        tensor(sd.save_tensor_name, "saver save")
        if sd.restore_op_name not in nodes:
            raise Bad("saver restore op %s missing" % sd.restore_op_name)
        # Everything the restore op depends on.
        seen, todo = set(), [sd.restore_op_name]
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            todo += [split_tensor(s.lstrip("^"))[0] for s in nodes[n].input]
        for n in sorted(seen):
            a = nodes[n]
            if a.op not in ("AssignVariableOp", "Assign"):
                continue
            var = nodes[split_tensor(a.input[0])[0]]
            if var.op not in ("VarHandleOp", "VariableV2"):
                raise Bad("%s: assigns %s, not a VarHandleOp" % (n, var.name))
            src, k = split_tensor(a.input[1])
            while nodes[src].op == "Identity":
                src, k = split_tensor(nodes[src].input[0])
            r = nodes[src]
            if r.op != "RestoreV2":
                raise Bad("%s: value from %s, not RestoreV2" % (n, r.op))
            names = nodes[split_tensor(r.input[1])[0]].attr["value"].tensor
            key = names.string_val[k].decode()
            if r.attr["dtypes"].list.type[k] != var.attr["dtype"].type:
                raise Bad("%s: RestoreV2 dtype differs from %s" %
                          (n, var.name))
            if r.input[0] != sd.filename_tensor_name.split(":")[0]:
                raise Bad("%s: RestoreV2 does not read the filename" % n)
            if var.name in restored:
                raise Bad("variable %s restored twice" % var.name)
            restored[var.name] = key
        # (TF1 graphs may hold local VariableV2s that no saver touches,
        # such as the fixture's asset filename; resource variables are
        # what our writer emits and every one must be restored.)
        for nd in gd.node:
            if nd.op == "VarHandleOp" and nd.name not in restored:
                raise Bad("variable %s never restored" % nd.name)
    for nd in gd.node:
        if nd.op in ("VarHandleOp", "VariableV2"):
            out.append("var %s %s %s shared_name=%s key=%s" %
                       (nd.name, DT_NAME[nd.attr["dtype"].type],
                        shape_str(nd.attr["shape"].shape),
                        nd.attr["shared_name"].s.decode(),
                        restored.get(nd.name) if mg.HasField("saver_def")
                        else "-"))
    for key in sorted(mg.signature_def):
        sig = mg.signature_def[key]
        out.append("sig %s %s" % (key, sig.method_name or "-"))
        for what, m in (("in", sig.inputs), ("out", sig.outputs)):
            for k in sorted(m):
                ti = m[k]
                where = "signature %s %s %s" % (key, what, k)
                if ti.WhichOneof("encoding") != "name":
                    raise Bad("%s: not a dense tensor name" % where)
                if ti.dtype:
                    nd, dt = tensor(ti.name, where)
                    if dt != ti.dtype:
                        raise Bad("%s: dtype %d, the graph has %d" %
                                  (where, ti.dtype, dt))
                    if nd.op == "Placeholder" and shape_str(
                            nd.attr["shape"].shape) != shape_str(
                                ti.tensor_shape):
                        raise Bad("%s: shape differs from the Placeholder" %
                                  where)
                elif ti.name not in nodes:
                    raise Bad("%s: op %s not in the graph" % (where, ti.name))
                out.append("%s %s %s %s %s %s" %
                           (what, key, k, ti.name,
                            DT_NAME.get(ti.dtype, "invalid"),
                            shape_str(ti.tensor_shape
                                      if ti.HasField("tensor_shape")
                                      else None)))
    # assets (when there are any): each AssetFileDef names a scalar
    # string tensor of the graph; the collections as TF1's Builder
    # writes them
    for af in mg.asset_file_def:
        nd, dt = tensor(af.tensor_info.name, "asset " + af.filename)
        if dt != DT["string"] or "/" in af.filename or not af.filename:
            raise Bad("asset %s: tensor %s of %s" %
                      (af.filename, af.tensor_info.name, DT_NAME.get(dt)))
        out.append("asset %s %s" % (af.filename, af.tensor_info.name))
    for key in sorted(mg.collection_def):
        c = mg.collection_def[key]
        kind = c.WhichOneof("kind")
        if kind == "node_list":
            vals = list(c.node_list.value)
            for v in vals:
                if split_tensor(v)[0] not in nodes:
                    raise Bad("collection %s: no node %s" % (key, v))
        elif kind == "any_list":
            vals = []
            for a in c.any_list.value:
                if a.type_url != "type.googleapis.com/tensorflow.AssetFileDef":
                    raise Bad("collection %s: Any of %s" % (key, a.type_url))
                af = _message_class(mg.DESCRIPTOR.fields_by_name[
                    "asset_file_def"].message_type)()
                af.ParseFromString(a.value)
                vals.append("%s=%s" % (af.filename, af.tensor_info.name))
        else:
            raise Bad("collection %s: kind %s" % (key, kind))
        out.append("collection %s %s %s" % (key, kind, " ".join(vals)))
    for nd in gd.node:
        out.append("node %s %s" % (nd.name, nd.op))
    return out


# --- PyTorch interpretation of the graph --------------------------------------


def _const(tp):
    import numpy as np
    shape = [d.size for d in tp.tensor_shape.dim]
    npt = {1: np.float32, 2: np.float64, 3: np.int32, 9: np.int64,
           10: np.bool_, 4: np.uint8, 6: np.int8, 5: np.int16}[tp.dtype]
    n = int(np.prod(shape)) if shape else 1
    if tp.tensor_content:
        return np.frombuffer(tp.tensor_content, dtype=npt).reshape(shape)
    for f in ("float_val", "double_val", "int_val", "int64_val", "bool_val"):
        v = list(getattr(tp, f))
        if v:
            a = np.array(v, dtype=npt)
            return np.broadcast_to(a if a.size == n else a[-1:],
                                   [n]).reshape(shape).copy()
    return np.zeros(shape, dtype=npt)


def _same_pads(size, k, s, d):
    eff = (k - 1) * d + 1
    out = -(-size // s)
    total = max((out - 1) * s + eff - size, 0)
    return total // 2, total - total // 2


def _pads(x_hw, ksize, strides, dil, padding, explicit):
    """TF's (top, bottom, left, right) for an NHWC op."""
    if padding == "VALID":
        return 0, 0, 0, 0
    if padding == "EXPLICIT":
        return explicit[2], explicit[3], explicit[4], explicit[5]
    t, b = _same_pads(x_hw[0], ksize[0], strides[0], dil[0])
    l, r = _same_pads(x_hw[1], ksize[1], strides[1], dil[1])
    return t, b, l, r


def interpret(d, out_dir):
    import os
    import numpy as np
    import torch
    import torch.nn.functional as F
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bundle_check

    sm = SavedModel()
    with open(d + "/saved_model.pb", "rb") as f:
        sm.ParseFromString(f.read())
    mg = sm.meta_graphs[0]
    nodes = {n.name: n for n in mg.graph_def.node}
    weights = {}
    if os.path.exists(d + "/variables/variables.index"):
        for line in bundle_check.dump(d + "/variables/variables")[2:]:
            f_ = line.split()
            key = bytes.fromhex(f_[0]).decode()
            dt = int(f_[1].split("=")[1])
            shape = [int(x) for x in f_[2].split("=")[1].split(",") if x]
            npt = {1: np.float32, 3: np.int32, 9: np.int64}[dt]
            weights[key] = np.frombuffer(bytes.fromhex(f_[-1]),
                                         dtype=npt).reshape(shape)
    sig = mg.signature_def["serving_default"]
    rs = np.random.RandomState(0)
    feeds = {}
    for key in sorted(sig.inputs):
        ti = sig.inputs[key]
        shape = [3] + [dm.size for dm in ti.tensor_shape.dim[1:]]
        if ti.dtype == DT["float"]:
            a = rs.uniform(-1, 1, shape).astype(np.float32)
        else:
            a = rs.randint(0, 10, shape).astype(np.int32)
        np.save(os.path.join(out_dir, "in_%s.npy" % key.replace("/", "_")), a)
        feeds[split_tensor(ti.name)[0]] = torch.from_numpy(a.copy())
    memo = {}

    def val(s):
        n, k = split_tensor(s)
        if n not in memo:
            memo[n] = run(nodes[n])
        return memo[n][k]

    def f64(t):
        return t.double() if t.is_floating_point() else t

    def ints(t):
        return [int(v) for v in t.reshape(-1).tolist()]

    def run(nd):
        a = nd.attr
        op = nd.op
        ins = [val(s) for s in nd.input if not s.startswith("^")]
        if op == "Placeholder":
            return [f64(feeds[nd.name])]
        if op == "Const":
            return [f64(torch.from_numpy(_const(a["value"].tensor).copy()))]
        if op == "VarHandleOp":
            return [f64(torch.from_numpy(
                weights[a["shared_name"].s.decode()].copy()))]
        if op in ("ReadVariableOp", "Identity", "StopGradient"):
            return [ins[0]]
        x = ins[0] if ins else None
        if op == "MatMul":
            p, q = ins
            if a["transpose_a"].b:
                p = p.t()
            if a["transpose_b"].b:
                q = q.t()
            return [p @ q]
        if op == "BiasAdd":
            if a["data_format"].s not in (b"", b"NHWC"):
                raise Bad("BiasAdd %s" % a["data_format"].s)
            return [x + ins[1]]
        unary = {"Relu": torch.relu, "Sigmoid": torch.sigmoid,
                 "Tanh": torch.tanh, "Elu": F.elu, "Selu": torch.selu,
                 "Softplus": F.softplus, "Rsqrt": torch.rsqrt,
                 "Relu6": lambda t: torch.clamp(t, 0, 6),
                 "Softmax": lambda t: torch.softmax(t, -1),
                 "LogSoftmax": lambda t: torch.log_softmax(t, -1)}
        if op in unary:
            return [unary[op](x)]
        if op == "LeakyRelu":
            return [F.leaky_relu(x, a["alpha"].f)]
        binary = {"AddV2": torch.add, "Add": torch.add, "Sub": torch.sub,
                  "Mul": torch.mul, "RealDiv": torch.div,
                  "Maximum": torch.maximum, "Minimum": torch.minimum,
                  "SquaredDifference": lambda p, q: (p - q) ** 2}
        if op in binary:
            return [binary[op](ins[0], ins[1])]
        if op in ("Conv2D", "DepthwiseConv2dNative"):
            if a["data_format"].s not in (b"", b"NHWC"):
                raise Bad("%s %s" % (op, a["data_format"].s))
            w = ins[1]
            st = list(a["strides"].list.i)
            dl = list(a["dilations"].list.i) or [1, 1, 1, 1]
            kh, kw = w.shape[0], w.shape[1]
            t, b, l, r = _pads(x.shape[1:3], (kh, kw), st[1:3], dl[1:3],
                               a["padding"].s.decode(),
                               list(a["explicit_paddings"].list.i))
            xn = F.pad(x.permute(0, 3, 1, 2), (l, r, t, b))
            if op == "Conv2D":
                wt = w.permute(3, 2, 0, 1)      # HWIO -> OIHW
                groups = 1
            else:
                c, m = w.shape[2], w.shape[3]   # HWCM -> (C*M)1HW
                wt = w.permute(2, 3, 0, 1).reshape(c * m, 1, kh, kw)
                groups = c
            y = F.conv2d(xn, wt, stride=st[1:3], dilation=dl[1:3],
                         groups=groups)
            return [y.permute(0, 2, 3, 1)]
        if op in ("MaxPool", "AvgPool"):
            k = list(a["ksize"].list.i)
            st = list(a["strides"].list.i)
            t, b, l, r = _pads(x.shape[1:3], k[1:3], st[1:3], (1, 1),
                               a["padding"].s.decode(), [])
            xn = x.permute(0, 3, 1, 2)
            if op == "MaxPool":
                xn = F.pad(xn, (l, r, t, b), value=-float("inf"))
                y = F.max_pool2d(xn, k[1:3], st[1:3])
            else:
                ones = torch.ones_like(xn[:, :1])
                s_ = F.avg_pool2d(F.pad(xn, (l, r, t, b)), k[1:3], st[1:3],
                                  divisor_override=1)
                c_ = F.avg_pool2d(F.pad(ones, (l, r, t, b)), k[1:3], st[1:3],
                                  divisor_override=1)
                y = s_ / c_
            return [y.permute(0, 2, 3, 1)]
        if op == "Reshape":
            return [x.reshape(ints(ins[1]))]
        if op == "Pad":
            pp = ints(ins[1])
            flat = []
            for i in reversed(range(len(pp) // 2)):
                flat += [pp[2 * i], pp[2 * i + 1]]
            return [F.pad(x, flat)]
        if op in ("Mean", "Sum", "Max"):
            dims = [i % x.dim() for i in ints(ins[1])]
            kd = a["keep_dims"].b
            y = x
            for dm in sorted(dims, reverse=True):
                y = {"Mean": lambda t: t.mean(dm, keepdim=True),
                     "Sum": lambda t: t.sum(dm, keepdim=True),
                     "Max": lambda t: t.max(dm, keepdim=True)[0]}[op](y)
            if not kd:
                for dm in sorted(dims, reverse=True):
                    y = y.squeeze(dm)
            return [y]
        if op == "FusedBatchNormV3":
            if a["is_training"].b:
                raise Bad("FusedBatchNormV3 in training mode")
            sc, of, mu, var = ins[1:5]
            y = (x - mu) / torch.sqrt(var + a["epsilon"].f) * sc + of
            return [y, mu, var, mu, var, mu]
        if op == "ConcatV2":
            ax = ints(ins[-1])[0]
            return [torch.cat(ins[:-1], ax)]
        if op == "GatherV2":
            ax = ints(ins[2])[0]
            return [torch.index_select(x, ax, ins[1].reshape(-1).long())
                    .reshape(list(x.shape[:ax]) + list(ins[1].shape) +
                             list(x.shape[ax + 1:]))]
        if op == "ExpandDims":
            return [x.unsqueeze(ints(ins[1])[0])]
        if op == "Squeeze":
            y = x
            for dm in sorted((i % x.dim() for i in a["squeeze_dims"].list.i),
                             reverse=True):
                y = y.squeeze(dm)
            return [y]
        if op == "Cast":
            return [x.double() if a["DstT"].type in (1, 2) else x.long()]
        raise Bad("run: op %s not interpreted" % op)

    lines = []
    for key in sorted(sig.outputs):
        y = val(sig.outputs[key].name).double().numpy()
        np.save(os.path.join(out_dir, "out_%s.npy" % key.replace("/", "_")), y)
        lines.append("%s %s" % (key, list(y.shape)))
    return lines


def main(argv):
    if not ((len(argv) == 3 and argv[1] == "check") or
            (len(argv) >= 4 and len(argv) % 2 == 0 and argv[1] == "run")):
        sys.stderr.write("usage: savedmodel_check.py check DIR | "
                         "run DIR OUT [DIR OUT ...]\n")
        return 2
    try:
        if argv[1] == "check":
            lines = check(argv[2])
        else:
            lines = []
            for i in range(2, len(argv), 2):
                lines += interpret(argv[i], argv[i + 1])
    except Bad as e:
        sys.stderr.write("savedmodel_check: %s\n" % e)
        return 1
    sys.stdout.write("".join(line + "\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
