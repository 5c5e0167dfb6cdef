"""t-serve: tfk-serve's model config file read as TF Serving reads it.

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

t.done()
