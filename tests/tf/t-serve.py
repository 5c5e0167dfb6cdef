"""t-serve: tfk-serve read and called as TF Serving is.

gRPC: TF Serving's own Python client (tensorflow-serving-api's
PredictionServiceStub and ModelServiceStub over grpcio) calls tfk-serve
serving the TensorFlow-written fixtures (the TF1 and TF2 half_plus_two
SavedModels as versions 1 and 2 of one model, the .tflite half_plus_two
as another): Predict outputs equal the SavedModel's own signature
called in TensorFlow (tf.saved_model.load) and the REST answer;
output_filter; Classify and Regress on tf.Examples (with a context) equal
the TF1 classify/regress signatures called on the same serialized
Examples, and so do MultiInference's tasks (TF Serving's refusals of
a bad task list); GetModelMetadata's SignatureDefMap equals the
signature_def of the saved_model.pb as TensorFlow's own protos read it;
GetModelStatus; and the errors: unknown model (NOT_FOUND), version,
label, signature, input, and a wrong dtype (INVALID_ARGUMENT). A
slowloris on the gRPC port delays no Predict; a connection beyond
--max_connections_per_ip gets UNAVAILABLE at once.

Config:
Each text below goes to TF Serving's own ModelServerConfig message
(tensorflow_serving.config.model_server_config_pb2, the protobuf
text_format parser TF Serving uses) and to `tfk-serve --check_config`:
a text TF Serving parses gives the same models, base paths, policies,
versions and labels in ours; a text TF Serving's parser refuses
(syntax, unknown fields, wrong types, bad UTF-8) is refused by ours
with exit 1 and a file:line:col message. Texts TF Serving's parser
takes but its server refuses (a config without a base path) are
refused by ours at once; they are listed apart.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tftap import T  # noqa: E402

from google.protobuf import text_format  # noqa: E402
from tensorflow_serving.config import model_server_config_pb2 as msc  # noqa

t = T()

GOOD = [
    # TF Serving's documentation
    """model_config_list {
      config {
        name: 'my_first_model'
        base_path: '/tmp/my_first_model/'
        model_platform: 'tensorflow'
      }
      config {
        name: 'my_second_model'
        base_path: '/tmp/my_second_model/'
        model_platform: 'tensorflow'
        model_version_policy { specific { versions: 42 versions: 43 } }
        version_labels { key: 'stable' value: 42 }
        version_labels { key: 'canary' value: 43 }
      }
    }""",
    # every other form of the syntax
    """# a comment
    model_config_list: {
      config: [{ name: "a\\x41\\101" base_path: "/m/" '\\'a';
                 model_version_policy < all {} > },
               { name: 'b', base_path: '/b',
                 model_version_policy { latest { num_versions: 0x3 } } }]
      config < name: "c" base_path: "/c" model_platform: "tflite"
        model_version_policy: { specific { versions: [7, 5] } }
        version_labels: { key: "x", value: 5 }; >
    }""",
    "model_config_list { config { name: 'u\u00e9\u4e2d' base_path: '/\u00e9' } }",
    "model_config_list { config { name: 'z' base_path: '/z' "
    "model_version_policy { latest {} } } }",
    "model_config_list { }",
]
BAD = [
    "model_config_list { config { name: 'a' base_pth: '/a' } }",
    "model_config_list { config { name: 'a' base_path: '/a' }",
    "model_config_list { config { name: 'a base_path: '/a' } }",
    "model_config_list { config { name 'a' base_path: '/a' } }",
    "model_config_list { config { name: 7 base_path: '/a' } }",
    "model_config_list { config { name: 'a' base_path: '/a' "
    "model_version_policy { latest { num_versions: -1 } } } }",
    "model_config_list { config { name: 'a' base_path: '/a' "
    "model_version_policy { latest { num_versions: 'x' } } } }",
    "model_config_list { config { name: 'a' base_path: '/a' "
    "model_version_policy { newest {} } } }",
    "model_config_list { config { name: '\\xff' base_path: '/a' } }",
    "model_config_list { config: [{name: 'a' base_path: '/a'} {}] }",
    "model_configs { }",
    "model_config_list { config { name: 'a' base_path: '/a' } } }",
]
# (An unknown escape such as \q is refused by ours and by the C++
# tokenizer TF Serving uses, but taken by Python's text_format: it is in
# tests/unit/t-modelconfig.c, not here.)
# TF Serving's parser takes these; its server refuses them, and so do we
SERVER_REFUSES = [
    "model_config_list { config { name: 'a' } }",
    "model_config_list { config { base_path: '/a' } }",
    "model_config_list { config { name: 'a' base_path: '/a' } "
    "config { name: 'a' base_path: '/b' } }",
]


def tf_view(cfg):
    """Our --check_config JSON form of TF Serving's parsed message."""
    models = []
    for c in cfg.model_config_list.config:
        kind = c.model_version_policy.WhichOneof("policy_choice")
        pol = c.model_version_policy
        n = pol.latest.num_versions if kind == "latest" else 0
        vers = []
        for v in (pol.specific.versions if kind == "specific" else []):
            if v not in vers:
                vers.append(v)
        models.append({
            "name": c.name, "base_path": c.base_path,
            "policy": kind or "latest", "num_versions": n or 1,
            "versions": vers, "labels": dict(c.version_labels)})
    return {"models": models}


def ours(text, name):
    path = t.path(name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    rc, out, err = t.run("tfk-serve", "--model_config_file", path,
                         "--check_config", check=False)
    return rc, out, err


for i, text in enumerate(GOOD):
    want = tf_view(text_format.Parse(text, msc.ModelServerConfig()))
    rc, out, err = ours(text, "good%d.config" % i)
    t.eq(rc, 0, "good %d: tfk-serve reads it (%s)" % (i, err.strip()))
    if rc == 0:
        got = json.loads(out)
        # a labels map compares as a dict: TF's map has no order
        t.eq(got, want, "good %d: the same models as TF Serving's parser"
             % i)

for i, text in enumerate(BAD):
    try:
        text_format.Parse(text, msc.ModelServerConfig())
        tf_refuses = False
    except text_format.ParseError:
        tf_refuses = True
    t.ok(tf_refuses, "bad %d: TF Serving's parser refuses it" % i)
    rc, out, err = ours(text, "bad%d.config" % i)
    t.ok(rc == 1 and err.startswith("tfk-serve: ") and
         ("bad%d.config:1:" % i) in err,
         "bad %d: ours refuses it, exit 1, with line:col (%s)"
         % (i, err.strip()))

for i, text in enumerate(SERVER_REFUSES):
    text_format.Parse(text, msc.ModelServerConfig())
    rc, out, err = ours(text, "server%d.config" % i)
    t.ok(rc == 1 and "server%d.config:1:" % i in err,
         "server-level %d: refused with its place (%s)" % (i, err.strip()))


# gRPC -----------------------------------------------------------------------
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402

import grpc  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from tensorflow.core.protobuf import saved_model_pb2  # noqa: E402
from tensorflow_serving.apis import (  # noqa: E402
    classification_pb2, get_model_metadata_pb2, get_model_status_pb2,
    model_service_pb2_grpc, predict_pb2, prediction_service_pb2_grpc,
    regression_pb2)

SM = t.fixture("savedmodel")
half = t.path("half")
os.makedirs(half)
os.symlink(os.path.join(SM, "half_plus_two_cpu_tf1", "00000123"),
           os.path.join(half, "1"))
os.symlink(os.path.join(SM, "half_plus_two_tf2_cpu", "00000123"),
           os.path.join(half, "2"))
lite = t.path("lite")
os.makedirs(os.path.join(lite, "1"))
os.symlink(t.fixture("tflite/serving_half_plus_two/model.tflite"),
           os.path.join(lite, "1", "model.tflite"))
with open(t.path("serve.config"), "w") as f:
    f.write("""model_config_list {
  config { name: "half" base_path: "%s"
    model_version_policy { all {} }
    version_labels { key: "tf1" value: 1 } }
  config { name: "lite" base_path: "%s" }
}""" % (half, lite))
log = open(t.path("serve.log"), "w+")
srv = subprocess.Popen([os.path.join(t.bin, "tfk-serve"),
                        "--model_config_file", t.path("serve.config"),
                        "--port", "0", "--rest_api_port", "0",
                        "--max_connections_per_ip", "4"],
                       stderr=log, cwd=t.tmp)


def port_of(what):
    for _ in range(200):
        log.seek(0)
        for line in log.read().splitlines():
            if line.startswith("tfk-serve: %s API listening on port " % what):
                return int(line.rsplit(" ", 1)[1])
        time.sleep(0.1)
    return None


try:
    gport, rport = port_of("gRPC"), port_of("REST")
    t.ok(gport and rport, "tfk-serve listens on gRPC and REST ports")
    ch = grpc.insecure_channel("127.0.0.1:%d" % gport)
    ps = prediction_service_pb2_grpc.PredictionServiceStub(ch)
    ms = model_service_pb2_grpc.ModelServiceStub(ch)

    def spec(msg, name, version=None, label=None, sig=None):
        msg.model_spec.name = name
        if version is not None:
            msg.model_spec.version.value = version
        if label is not None:
            msg.model_spec.version_label = label
        if sig is not None:
            msg.model_spec.signature_name = sig
        return msg

    x = np.array([1.0, 2.0, 5.0, -0.5], np.float32)
    tf1 = tf.saved_model.load(os.path.join(SM, "half_plus_two_cpu_tf1",
                                           "00000123"))
    tf2 = tf.saved_model.load(os.path.join(SM, "half_plus_two_tf2_cpu",
                                           "00000123"))
    for ver, model in ((1, tf1), (2, tf2)):
        want = model.signatures["serving_default"](
            x=tf.constant(x.reshape(-1, 1) if ver == 2 else x))
        want = {k: v.numpy() for k, v in want.items()}
        rq = spec(predict_pb2.PredictRequest(), "half", version=ver)
        rq.inputs["x"].CopyFrom(tf.make_tensor_proto(
            x.reshape(-1, 1) if ver == 2 else x))
        rs = ps.Predict(rq, timeout=20)
        got = {k: tf.make_ndarray(v) for k, v in rs.outputs.items()}
        t.eq(sorted(got), sorted(want),
             "Predict version %d: the signature's output keys" % ver)
        for k in want:
            t.close(got[k], want[k], 1e-6,
                    "Predict version %d: %s equals TensorFlow's" % (ver, k))
        t.eq((rs.model_spec.name, rs.model_spec.version.value,
              rs.model_spec.signature_name), ("half", ver, "serving_default"),
             "Predict version %d: model_spec of the answer" % ver)

    rq = spec(predict_pb2.PredictRequest(), "half", label="tf1")
    rq.inputs["x"].CopyFrom(tf.make_tensor_proto(x))
    rs = ps.Predict(rq, timeout=20)
    t.eq(rs.model_spec.version.value, 1, "version_label tf1 is version 1")
    body = json.dumps({"instances": x.tolist()}).encode()
    rest = json.loads(urllib.request.urlopen(urllib.request.Request(
        "http://127.0.0.1:%d/v1/models/half/versions/1:predict" % rport,
        data=body), timeout=20).read())
    t.close(tf.make_ndarray(rs.outputs["y"]), rest["predictions"], 0,
            "gRPC and REST give the same predictions")

    rq = spec(predict_pb2.PredictRequest(), "half", version=1,
              sig="regress_x2_to_y3")
    rq.inputs["inputs"].CopyFrom(tf.make_tensor_proto(x.reshape(-1, 1)))
    rq.output_filter.append("outputs")
    rs = ps.Predict(rq, timeout=20)
    t.close(tf.make_ndarray(rs.outputs["outputs"]),
            0.5 * x.reshape(-1, 1) + 3, 1e-6,
            "signature_name and output_filter: y3 = 0.5 x2 + 3")

    rq = spec(predict_pb2.PredictRequest(), "lite")
    rq.inputs["x"].CopyFrom(tf.make_tensor_proto(np.array([[2.0]],
                                                          np.float32)))
    rs = ps.Predict(rq, timeout=20)
    t.eq([tf.make_ndarray(v).tolist() for v in rs.outputs.values()],
         [[[3.0]]], "Predict on the .tflite model")

    # a slowloris on the gRPC port (from 127.0.0.2: connections that
    # trickle HTTP/2's preface; 4 held, 12 refused) delays no one else's
    # Predict
    slow = []
    for _ in range(16):
        so = socket.create_connection(("127.0.0.1", gport), timeout=5,
                                      source_address=("127.0.0.2", 0))
        so.sendall(b"PRI * HTTP")
        slow.append(so)
    t0 = time.time()
    # a connection of its own (grpc shares one among channels otherwise)
    own = [("grpc.use_local_subchannel_pool", 1)]
    ch2 = grpc.insecure_channel("127.0.0.1:%d" % gport, options=own)
    rq = spec(predict_pb2.PredictRequest(), "half", version=1)
    rq.inputs["x"].CopyFrom(tf.make_tensor_proto(x))
    rs = prediction_service_pb2_grpc.PredictionServiceStub(ch2).Predict(
        rq, timeout=10)
    t.ok(rs.outputs["y"].float_val or rs.outputs["y"].tensor_content,
         "Predict on a new channel beside 16 half-open connections "
         "(%.2f s)" % (time.time() - t0))
    ch2.close()
    for so in slow:
        so.close()

    # Classify and Regress: TF's own signatures on the same Examples
    def examples(msg, xs, context=None):
        if context is None:
            lst = msg.input.example_list
        else:
            lst = msg.input.example_list_with_context
            lst.context.features.feature["x"].float_list.value.append(
                context)
        for v in xs:
            e = lst.examples.add()
            if v is not None:
                e.features.feature["x"].float_list.value.append(v)
        return msg

    def serialized(xs, context=None):
        out = []
        for v in xs:
            e = tf.train.Example()
            e.features.feature["x"].float_list.value.append(
                v if v is not None else context)
            out.append(e.SerializeToString())
        return tf.constant(out)

    rr = examples(spec(regression_pb2.RegressionRequest(), "half", version=1,
                       sig="regress_x_to_y"), [2.0, 3.0, None], context=9.0)
    res = ps.Regress(rr, timeout=20)
    want = tf1.signatures["regress_x_to_y"](
        inputs=serialized([2.0, 3.0, None], 9.0))["outputs"].numpy()
    t.close([r.value for r in res.result.regressions],
            want.reshape(-1), 1e-6,
            "Regress with a context equals TF's regress_x_to_y")
    cr = examples(spec(classification_pb2.ClassificationRequest(), "half",
                       version=1, sig="classify_x_to_y"), [2.0, 4.0])
    res = ps.Classify(cr, timeout=20)
    want = tf1.signatures["classify_x_to_y"](
        inputs=serialized([2.0, 4.0]))["scores"].numpy()
    t.close([[c.score for c in k.classes]
             for k in res.result.classifications], want, 1e-6,
            "Classify scores equal TF's classify_x_to_y")
    t.eq([[c.label for c in k.classes] for k in res.result.classifications],
         [["0"], ["0"]], "Classify labels without a classes output: '0'")

    def code(call, msg, part):
        try:
            call(msg, timeout=20)
            return None, ""
        except grpc.RpcError as e:
            return e.code(), e.details() if part in e.details() else \
                "(%s)" % e.details()

    # MultiInference: a classify and a regress task on one Input (with a
    # context), each equal to TF's own signature on the same Examples
    from tensorflow_serving.apis import inference_pb2

    def multi(tasks, name="half", version=1):
        rq = inference_pb2.MultiInferenceRequest()
        for sig, method in tasks:
            task = rq.tasks.add()
            task.model_spec.name = name
            if version is not None:
                task.model_spec.version.value = version
            if sig is not None:
                task.model_spec.signature_name = sig
            task.method_name = "tensorflow/serving/" + method
        lst = rq.input.example_list_with_context
        lst.context.features.feature["x"].float_list.value.append(9.0)
        for v in (2.0, 4.0, None):
            e = lst.examples.add()
            if v is not None:
                e.features.feature["x"].float_list.value.append(v)
        return rq

    res = ps.MultiInference(multi([("classify_x_to_y", "classify"),
                                   ("regress_x_to_y", "regress")]),
                            timeout=20)
    inputs = serialized([2.0, 4.0, None], 9.0)
    t.eq([(r.model_spec.name, r.model_spec.version.value,
           r.model_spec.signature_name, r.WhichOneof("result"))
          for r in res.results],
         [("half", 1, "classify_x_to_y", "classification_result"),
          ("half", 1, "regress_x_to_y", "regression_result")],
         "MultiInference: a result per task, in order, with its model_spec")
    t.close([[c.score for c in k.classes] for k in
             res.results[0].classification_result.classifications],
            tf1.signatures["classify_x_to_y"](inputs=inputs)["scores"]
            .numpy(), 1e-6,
            "MultiInference classify equals TF's classify_x_to_y")
    t.close([r.value for r in
             res.results[1].regression_result.regressions],
            tf1.signatures["regress_x_to_y"](inputs=inputs)["outputs"]
            .numpy().reshape(-1), 1e-6,
            "MultiInference regress equals TF's regress_x_to_y")
    cr = spec(classification_pb2.ClassificationRequest(), "half", version=1,
              sig="classify_x_to_y")
    cr.input.CopyFrom(multi([]).input)
    t.eq(res.results[0].classification_result,
         ps.Classify(cr, timeout=20).result,
         "MultiInference classify: the same result as Classify")
    bad_multi = inference_pb2.MultiInferenceRequest()
    bad_multi.tasks.add().model_spec.name = "half"
    bad_multi.tasks[0].method_name = "tensorflow/serving/regress"
    bad_multi.tasks.add().model_spec.name = "lite"
    bad_multi.tasks[1].method_name = "tensorflow/serving/regress"
    for rq, want, what in (
            (inference_pb2.MultiInferenceRequest(),
             (grpc.StatusCode.INVALID_ARGUMENT,
              "Expected at least one task"), "no tasks"),
            (bad_multi,
             (grpc.StatusCode.INVALID_ARGUMENT,
              "All ModelSpecs in a MultiInferenceRequest must access the "
              "same model name."), "two models"),
            (multi([("regress_x_to_y", "regress"),
                    ("regress_x_to_y", "regress")]),
             (grpc.StatusCode.INVALID_ARGUMENT,
              "Duplicate evaluation of signature: regress_x_to_y"),
             "one signature twice"),
            (multi([("regress_x_to_y", "predict")]),
             (grpc.StatusCode.UNIMPLEMENTED,
              "Unsupported signature method_name: tensorflow/serving/"
              "predict"), "method_name predict"),
            (multi([("nope", "regress")]),
             (grpc.StatusCode.INVALID_ARGUMENT,
              "Requested signature not found in model graph: nope"),
             "an unknown signature"),
            (multi([("regress_x_to_y", "regress")], version=7),
             (grpc.StatusCode.NOT_FOUND,
              "Servable not found for request: Specific(half, 7)"),
             "an unknown version")):
        t.eq(code(ps.MultiInference, rq, want[1]), want,
             "MultiInference refuses %s as TF Serving does" % what)
    rq = multi([("regress_x_to_y", "classify")])
    t.eq(code(ps.MultiInference, rq, "classify")[0],
         grpc.StatusCode.INVALID_ARGUMENT,
         "MultiInference: a regress signature as a classify task")

    # metadata against the saved_model.pb as TF's protos read it
    mr = spec(get_model_metadata_pb2.GetModelMetadataRequest(), "half",
              version=1)
    mr.metadata_field.append("signature_def")
    md = ps.GetModelMetadata(mr, timeout=20)
    sdm = get_model_metadata_pb2.SignatureDefMap()
    t.ok(md.metadata["signature_def"].Unpack(sdm),
         "GetModelMetadata: a SignatureDefMap in an Any")
    smp = saved_model_pb2.SavedModel()
    with open(os.path.join(SM, "half_plus_two_cpu_tf1", "00000123",
                           "saved_model.pb"), "rb") as f:
        smp.ParseFromString(f.read())
    tfsig = smp.meta_graphs[0].signature_def

    def view(sd):
        return {k: (v.method_name,
                    {n: (i.name, i.dtype, [d.size for d in
                                           i.tensor_shape.dim],
                         i.tensor_shape.unknown_rank)
                     for n, i in v.inputs.items()},
                    {n: (i.name, i.dtype, [d.size for d in
                                           i.tensor_shape.dim],
                         i.tensor_shape.unknown_rank)
                     for n, i in v.outputs.items()})
                for k, v in sd.items()}
    t.eq(view(sdm.signature_def), view(tfsig),
         "GetModelMetadata: the saved_model.pb's signature_def")

    sr = spec(get_model_status_pb2.GetModelStatusRequest(), "half")
    st = ms.GetModelStatus(sr, timeout=20)
    t.eq([(v.version, v.state, v.status.error_code)
          for v in st.model_version_status],
         [(2, get_model_status_pb2.ModelVersionStatus.AVAILABLE, 0),
          (1, get_model_status_pb2.ModelVersionStatus.AVAILABLE, 0)],
         "GetModelStatus: both versions AVAILABLE, OK")

    bad = spec(predict_pb2.PredictRequest(), "nope")
    bad.inputs["x"].CopyFrom(tf.make_tensor_proto(x))
    t.eq(code(ps.Predict, bad, "Latest(nope)"),
         (grpc.StatusCode.NOT_FOUND,
          "Servable not found for request: Latest(nope)"),
         "an unknown model: NOT_FOUND")
    bad = spec(predict_pb2.PredictRequest(), "half", version=7)
    t.eq(code(ps.Predict, bad, "Specific")[0], grpc.StatusCode.NOT_FOUND,
         "an unknown version: NOT_FOUND")
    bad = spec(predict_pb2.PredictRequest(), "half", label="beta")
    t.eq(code(ps.Predict, bad, "label")[0],
         grpc.StatusCode.INVALID_ARGUMENT, "an unknown label")
    bad = spec(predict_pb2.PredictRequest(), "half", version=1)
    bad.inputs["x"].CopyFrom(tf.make_tensor_proto(x.astype(np.float64)))
    t.eq(code(ps.Predict, bad, "expects float32"),
         (grpc.StatusCode.INVALID_ARGUMENT,
          "input 'x': expects float32, got a TensorProto of float64"),
         "a float64 tensor for a float input: INVALID_ARGUMENT")
    bad = spec(predict_pb2.PredictRequest(), "half", version=1)
    t.eq(code(ps.Predict, bad, "missing")[0],
         grpc.StatusCode.INVALID_ARGUMENT, "a missing input")
    bad = spec(predict_pb2.PredictRequest(), "half", version=1, sig="nope")
    t.eq(code(ps.Predict, bad, "nope")[0],
         grpc.StatusCode.INVALID_ARGUMENT, "an unknown signature")
    rr = spec(regression_pb2.RegressionRequest(), "half", version=1,
              sig="regress_x_to_y")
    t.eq(code(ps.Regress, rr, "empty")[0], grpc.StatusCode.INVALID_ARGUMENT,
         "Regress without examples")
    # HandleReloadConfigRequest: half becomes specific {1} with a label,
    # lite is dropped; then a bad config changes nothing
    from tensorflow_serving.apis import model_management_pb2
    rc = model_management_pb2.ReloadConfigRequest()
    c = rc.config.model_config_list.config.add()
    c.name, c.base_path = "half", half
    c.model_version_policy.specific.versions.append(1)
    c.version_labels["stable"] = 1
    rs = ms.HandleReloadConfigRequest(rc, timeout=30)
    t.eq(rs.status.error_code, 0, "HandleReloadConfigRequest: OK")
    st = ms.GetModelStatus(spec(get_model_status_pb2.GetModelStatusRequest(),
                                "half"), timeout=20)
    t.eq([(v.version, v.state) for v in st.model_version_status],
         [(2, get_model_status_pb2.ModelVersionStatus.END),
          (1, get_model_status_pb2.ModelVersionStatus.AVAILABLE)],
         "after the reload: version 2 ended, 1 served")
    rq = spec(predict_pb2.PredictRequest(), "half", label="stable")
    rq.inputs["x"].CopyFrom(tf.make_tensor_proto(x))
    t.eq(ps.Predict(rq, timeout=20).model_spec.version.value, 1,
         "the reloaded label 'stable' is version 1")
    rq = spec(predict_pb2.PredictRequest(), "lite")
    t.eq(code(ps.Predict, rq, "Latest(lite)")[0], grpc.StatusCode.NOT_FOUND,
         "the dropped model answers NOT_FOUND")
    bad = model_management_pb2.ReloadConfigRequest()
    b = bad.config.model_config_list.config.add()
    b.name = "half"
    t.eq(code(ms.HandleReloadConfigRequest, bad, "base_path"),
         (grpc.StatusCode.INVALID_ARGUMENT,
          "config[0] 'half': base_path is required"),
         "a config without base_path: INVALID_ARGUMENT")
    rq = spec(predict_pb2.PredictRequest(), "half", label="stable")
    rq.inputs["x"].CopyFrom(tf.make_tensor_proto(x))
    t.eq(ps.Predict(rq, timeout=20).model_spec.version.value, 1,
         "... and the config served is kept")
    nope = ch.unary_unary("/tensorflow.serving.PredictionService/Nope",
                          request_serializer=lambda m: m,
                          response_deserializer=lambda b: b)
    t.eq(code(nope, b"", "Method not found"),
         (grpc.StatusCode.UNIMPLEMENTED,
          "Method not found: /tensorflow.serving.PredictionService/Nope "
          "(tfk-serve serves Predict, Classify, Regress, MultiInference, "
          "GetModelMetadata, GetModelStatus and HandleReloadConfigRequest)"),
         "a method it lacks: refused at once by name (UNIMPLEMENTED)")
    # --max_connections_per_ip 4: with ch and 3 more connections from
    # 127.0.0.1, TF Serving's client on a new channel gets UNAVAILABLE
    # at once, not a hang; once they leave, it is served again
    PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\4\0\0\0\0\0"
    held = [socket.create_connection(("127.0.0.1", gport), timeout=5)
            for _ in range(3)]
    for so in held:
        so.sendall(PREFACE)
    time.sleep(0.3)
    rq = spec(predict_pb2.PredictRequest(), "half", version=1)
    rq.inputs["x"].CopyFrom(tf.make_tensor_proto(x))
    t0 = time.time()
    ch3 = grpc.insecure_channel("127.0.0.1:%d" % gport, options=own)
    t.eq(code(prediction_service_pb2_grpc.PredictionServiceStub(ch3).Predict,
              rq, "")[0], grpc.StatusCode.UNAVAILABLE,
         "a fifth connection from one address: UNAVAILABLE")
    t.ok(time.time() - t0 < 5, "... within 5 s (%.2f s)" % (time.time() - t0))
    ch3.close()
    for so in held:
        so.close()
    time.sleep(1.5)
    ch3 = grpc.insecure_channel("127.0.0.1:%d" % gport, options=own)
    t.eq(prediction_service_pb2_grpc.PredictionServiceStub(ch3).Predict(
        rq, timeout=10).model_spec.version.value, 1,
         "once they leave, a new channel is served")
    ch3.close()
finally:
    srv.send_signal(signal.SIGTERM)
    try:
        rc = srv.wait(timeout=20)
    except subprocess.TimeoutExpired:
        srv.kill()
        rc = None
    t.eq(rc, 0, "SIGTERM: tfk-serve exits 0")

t.done()
