#!/usr/bin/python3
"""textdocs.py - the TextVectorization corpus steps that the tfk-map
shell tests (t1400-map.sh, t1401-map-tfidf.sh) share: keep the UTF-8
documents of docs.hex (JSON specs hold text, so an adapted vocabulary
can only come from UTF-8 documents) and write them as docs.rec; run
textprep.py's textvec oracle over docs.hex; read the "v" rows that
tfk-map wrote to tvout.rec.

Import it from a test (sys.path.insert(0, "$TESTS/py")); every path is
relative to the current folder, the test's scratch folder.
"""
import subprocess
import sys

import tfexample as tfe


def load():
    """The documents of docs.hex, as bytes."""
    return [bytes.fromhex(l) for l in open("docs.hex").read().split()]


def _utf8(d):
    try:
        d.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def make(index=False):
    """Rewrite docs.hex with its UTF-8 documents only and write them to
    docs.rec, one Example each: {"t": [doc]}, with index also
    {"k": [i]} (i the document's place)."""
    docs = [d for d in load() if _utf8(d)]
    open("docs.hex", "w").write("".join(d.hex() + "\n" for d in docs))
    tfe.write_tfrecords("docs.rec", [tfe.make_example(
        dict({"t": [d]}, **({"k": [i]} if index else {})))
        .SerializeToString() for i, d in enumerate(docs)])


def textvec(tests, mode, max_tokens, seqlen):
    """textprep.py textvec over docs.hex (adapt and apply), Keras' default
    standardize and split, ngrams 2, no padding, Keras' tie order: its
    output lines and the vocabulary they list (bytes)."""
    want = subprocess.run([sys.executable, tests + "/py/textprep.py",
        "textvec", "lower_and_strip_punctuation", "whitespace", "2", mode,
        max_tokens, seqlen, "0", "keras", "docs.hex", "docs.hex"],
        capture_output=True, check=True).stdout.decode().splitlines()
    vocab = [bytes.fromhex(l.split(" ", 1)[1]) if " " in l else b""
             for l in want if l.startswith("vocab")]
    return want, vocab


def rows(path="tvout.rec"):
    """The values of feature "v" of each record of path."""
    return [tfe.example_to_dict(tfe.Example.FromString(r))["v"][1]
            for r in tfe.read_tfrecords(path)]
