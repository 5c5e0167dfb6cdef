#!/usr/bin/python3
"""textprep.py - independent oracles for lib/data/{textvec,lookup,
discretize,fprint}.c: Keras' text and categorical preprocessing layers
written again from their documented formulas with Python's re, bytes,
collections.Counter and numpy, and the hashes from other libraries
(libfarmhash through ctypes, python3-siphashc).

Strings travel as hex, one per line, so any byte (newlines, NUL,
invalid UTF-8) survives.

  textprep.py corpus SEED N            N generated documents (hex lines)
  textprep.py textvec STD SPLIT NGRAMS MODE MAX SEQLEN PAD TIE ADAPT APPLY
      Adapt a TextVectorization on the ADAPT corpus, apply it to APPLY.
      STD: none|lower|strip_punctuation|lower_and_strip_punctuation;
      SPLIT: none|whitespace; NGRAMS: 0 (None) or N (widths 1..N);
      MODE: int|multi_hot|count|tf_idf; MAX: 0 = None; SEQLEN: -1 = None;
      PAD: 0|1 (pad_to_max_tokens); TIE: keras|first.
      Prints "vocab HEX" lines (get_vocabulary order), then for tf_idf
      "idf W" lines, then one "out ..." line per APPLY document.
  textprep.py tokens STD SPLIT NGRAMS FILE   "HEX HEX ..." per document
  textprep.py lookup KIND MODE NOOV MASK OOV INVERT FARMHASH VOCAB INPUT
      StringLookup (KIND str) or IntegerLookup (KIND int) with a set
      vocabulary (VOCAB: hex or decimal lines), one line per INPUT line
      (space-separated keys; with INVERT, indices). Outputs: indices,
      "drop" (the mask outside int mode), "error" (OOV without an OOV
      index); inverted string tokens as hex, "-" for the empty string.
      MASK/OOV: hex (str) or decimal (int), "-" for None.
  textprep.py hash NUM_BINS MASK SALT0 SALT1 FILE
      Keras Hashing bins of each hex line (MASK hex or "-"; SALT0 "-" =
      no salt): to_hash_bucket_fast = Fingerprint64 % bins (libfarmhash),
      to_hash_bucket_strong = SipHash-2-4 (siphashc) % bins.
  textprep.py fprint FILE          Fingerprint64 of each hex line
  textprep.py siphash K0 K1 FILE   SipHash-2-4 of each hex line
  textprep.py discretize NUM_BINS EPS BATCH FILE
      Keras Discretization.adapt over the float32 values of FILE (one a
      line) in batches of BATCH: prints the boundaries, %.9g.

Only Debian's /usr/bin/python3 has numpy; libfarmhash0 and
python3-siphashc come from scripts/packages.txt.
"""
import collections
import ctypes
import math
import random
import re
import struct
import sys

import numpy as np

# Keras' punctuation class, as written in text_vectorization.py.
PUNCT = re.compile(rb'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']')


def read_hex(path):
    """Hex lines -> bytes; an empty line is the empty string."""
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return [bytes.fromhex(l) for l in lines]


# ---------------------------------------------------------------- corpus

WORDS = [b"the", b"The", b"THE", b"cat", b"Cat!", b"sat", b"on", b"mat.",
         b"don't", b"e-mail", b"U.S.A.", b"caf\xc3\xa9", b"CAF\xc3\x89",
         b"\xc3\x89t\xc3\xa9", b"stra\xc3\x9fe", b"\xe4\xb8\xad\xe6\x96\x87",
         b"\xf0\x9f\x98\x80", b"\xc2\xbfqu\xc3\xa9?", b"a\xe2\x80\x94b",
         b"(x)", b"[y]", b"{z}", b"#tag", b"@user", b"50%", b"$5", b"a_b",
         b"x^2", b"`q`", b"|", b"~", b"...", b"!!!", b"\xff\xfe", b"\x80abc",
         b"Zebra", b"zebra", b"apple", b"b", b"a", b"ab", b"ba"]
SPACES = [b" ", b" ", b" ", b"  ", b"\t", b"\n", b"\r\n", b"\x0b", b"\x0c",
          b"\xc2\xa0", b"\xe3\x80\x80", b"\x1c"]


def corpus(seed, n):
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        r = rng.random()
        if r < 0.05:
            docs.append(b"")
        elif r < 0.08:
            docs.append(rng.choice([b"   ", b"!?.", b"\t\n", b"[UNK]"]))
        else:
            k = rng.randint(1, 12)
            parts = []
            for j in range(k):
                # Zipf-like: early words far more frequent, many ties.
                w = WORDS[min(int(rng.paretovariate(0.9)) - 1,
                              len(WORDS) - 1)] if rng.random() < 0.7 \
                    else rng.choice(WORDS)
                parts.append(w)
                parts.append(rng.choice(SPACES))
            docs.append((rng.choice([b"", b" ", b"\t"]) +
                         b"".join(parts)).rstrip(b"x"))
    for d in docs:
        print(d.hex())


# --------------------------------------------------------- text pipeline

def standardize(s, std):
    if std in ("lower", "lower_and_strip_punctuation"):
        s = s.lower()      # bytes.lower: ASCII only, as tf.strings.lower
    if std in ("strip_punctuation", "lower_and_strip_punctuation"):
        s = PUNCT.sub(b"", s)
    return s


def tokens(s, std, split, ngrams):
    s = standardize(s, std)
    if split == "none":
        return [s]
    words = s.split()      # bytes.split(): ASCII whitespace runs
    if not ngrams:
        return words
    out = []
    for w in range(1, ngrams + 1):
        for i in range(len(words) - w + 1):
            out.append(b" ".join(words[i:i + w]))
    return out


def learn(docs_tokens, specials, max_learned, tie):
    counts = collections.Counter()
    df = collections.Counter()
    for toks in docs_tokens:
        counts.update(toks)
        df.update(set(toks))
    for s in specials:
        counts.pop(s, None)
    if tie == "first":
        order = [t for t, _ in counts.most_common()]
    else:
        toks = np.array(list(counts.keys()) + [b""], dtype=object)[:-1]
        cnts = np.array([counts[t] for t in toks], dtype=np.int64)
        order = [toks[i] for i in np.lexsort((toks, cnts))[::-1]] \
            if len(toks) else []
    if max_learned is not None:
        order = order[:max_learned]
    return order, df


def textvec(argv):
    std, split, ngrams, mode, mx, seqlen, pad, tie, fa, fb = argv
    ngrams, mx, seqlen, pad = int(ngrams), int(mx), int(seqlen), int(pad)
    adapt = read_hex(fa)
    apply_ = read_hex(fb)
    start = 2 if mode == "int" else 1
    dt = [tokens(d, std, split, ngrams) for d in adapt]
    learned, df = learn(dt, [b"", b"[UNK]"], mx - start if mx else None, tie)
    vocab = ([b"", b"[UNK]"] if mode == "int" else [b"[UNK]"]) + learned
    for v in vocab:
        print("vocab", v.hex())
    depth = mx if pad and mode != "int" else len(vocab)
    idf = None
    if mode == "tf_idf":
        n = len(adapt)
        w = np.array([math.log(1 + n / (1 + df[t])) for t in learned],
                     dtype=np.float32)
        front = np.float32(np.mean(w.astype(np.float64)))
        idf = np.zeros(depth, dtype=np.float32)
        idf[0] = front
        idf[1:1 + len(w)] = w
        for x in idf:
            print("idf %.9g" % x)
    index = {t: i for i, t in enumerate(vocab)}
    for d in apply_:
        toks = tokens(d, std, split, ngrams)
        if mode == "int":
            ids = [0 if t == b"" else index.get(t, 1) for t in toks]
            if seqlen >= 0:
                ids = (ids + [0] * seqlen)[:seqlen]
            print("out", " ".join(map(str, ids)))
            continue
        row = np.zeros(depth, dtype=np.float32)
        for t in toks:
            if t == b"":
                continue
            i = index.get(t, 0)
            row[i] = 1 if mode == "multi_hot" else row[i] + 1
        if idf is not None:
            row = row * idf
        print("out", " ".join("%.9g" % x for x in row))


def tokens_cmd(argv):
    std, split, ngrams, path = argv
    for d in read_hex(path):
        print(" ".join(t.hex() for t in
                       tokens(d, std, split, int(ngrams))) or "-")


# ----------------------------------------------------------------- hashes

_farm = None


def fprint64(b):
    global _farm
    if _farm is None:
        lib = ctypes.CDLL("libfarmhash.so.0")
        # farmhash.h: namespace util { uint64_t Fingerprint64(const char*,
        # size_t); }
        _farm = lib._ZN4util13Fingerprint64EPKcm
        _farm.restype = ctypes.c_uint64
        _farm.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return _farm(b, len(b))


def siphash(k0, k1, b):
    import siphashc
    return siphashc.siphash(struct.pack("<QQ", k0, k1), b)


def hash_cmd(argv):
    bins, mask, s0, s1, path = argv
    bins = int(bins)
    mask = None if mask == "-" else bytes.fromhex(mask)
    for b in read_hex(path):
        nb, off = bins, 0
        if mask is not None and bins > 1:
            nb, off = bins - 1, 1
            if b == mask:
                print(0)
                continue
        h = fprint64(b) if s0 == "-" else siphash(int(s0), int(s1), b)
        print(h % nb + off)


# ----------------------------------------------------------------- lookup

def lookup_cmd(argv):
    kind, mode, noov, mask, oov, invert, farm, vpath, ipath = argv
    noov, invert, farm = int(noov), int(invert), int(farm)
    conv = (lambda s: bytes.fromhex(s)) if kind == "str" else int
    mask = None if mask == "-" else conv(mask)
    oov = None if oov == "-" else conv(oov)
    with open(vpath) as f:
        lines = f.read().split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    vocab = [conv(l) for l in lines]
    oov_start = 1 if mask is not None and mode == "int" else 0
    token_start = oov_start + noov
    special = [mask] * oov_start + [oov] * noov
    if vocab[:token_start] == special:
        vocab = vocab[token_start:]
    index = {t: token_start + i for i, t in enumerate(vocab)}
    size = token_start + len(vocab)
    with open(ipath) as f:
        for line in f:
            keys = [int(k) if invert else conv(k) for k in line.split()]
            out = []
            for k in keys:
                if invert:
                    i = k
                    if mask is not None and i == 0:
                        v = mask
                    elif i < token_start or i >= size:
                        v = oov
                    else:
                        v = vocab[i - token_start]
                    out.append((v.hex() or "-") if kind == "str" else str(v))
                    continue
                if mask is not None and k == mask:
                    out.append("0" if mode == "int" else "drop")
                elif k in index:
                    out.append(str(index[k]))
                elif noov == 0:
                    out.append("error")
                elif noov == 1:
                    out.append(str(oov_start))
                elif kind == "int" and not farm:
                    out.append(str(oov_start + k % noov))  # Python %: floor
                else:
                    b = k if kind == "str" else str(k).encode()
                    out.append(str(oov_start + fprint64(b) % noov))
            print(" ".join(out))


# ------------------------------------------------------------ discretize

def interp_summary(vals, wts, eps):
    """Re-sample a (values, weights) summary at cumulative-weight
    fractions eps, 2 eps, ... (Keras' compress step)."""
    if vals.size * eps < 1:
        return vals, wts
    pct = eps + np.arange(0.0, 1.0, eps)
    cw = np.cumsum(wts)                     # float32, as the layer's
    frac = cw / cw[-1]
    nv = np.interp(pct, frac, vals)
    ncw = np.interp(pct, frac, cw)
    nw = np.diff(np.concatenate(([0.0], ncw)))
    return nv.astype(np.float32), nw.astype(np.float32)


def discretize_cmd(argv):
    bins, eps, batch, path = int(argv[0]), float(argv[1]), int(argv[2]), \
        argv[3]
    with open(path) as f:
        data = np.array([float(l) for l in f if l.strip()], dtype=np.float32)
    vals = np.zeros(0, dtype=np.float32)
    wts = np.zeros(0, dtype=np.float32)
    for s in range(0, data.size, batch):
        b = np.sort(data[s:s + batch])
        inc = b.size / (1.0 / eps)
        step = max(inc, 1)
        kv = b[int(inc)::int(step)]
        kw = np.full(kv.size, step, dtype=np.float32)
        allv = np.concatenate((kv, vals))
        allw = np.concatenate((kw, wts))
        o = np.argsort(allv, kind="stable")
        vals, wts = interp_summary(allv[o], allw[o], eps)
    bv, _ = interp_summary(vals, wts, 1.0 / bins)
    for x in bv[:-1]:
        print("%.9g" % x)


def main():
    cmd, argv = sys.argv[1], sys.argv[2:]
    if cmd == "corpus":
        corpus(int(argv[0]), int(argv[1]))
    elif cmd == "textvec":
        textvec(argv)
    elif cmd == "tokens":
        tokens_cmd(argv)
    elif cmd == "hash":
        hash_cmd(argv)
    elif cmd == "lookup":
        lookup_cmd(argv)
    elif cmd == "fprint":
        for b in read_hex(argv[0]):
            print(fprint64(b))
    elif cmd == "siphash":
        for b in read_hex(argv[2]):
            print(siphash(int(argv[0]), int(argv[1]), b))
    elif cmd == "discretize":
        discretize_cmd(argv)
    else:
        sys.exit("textprep.py: unknown command " + cmd)


if __name__ == "__main__":
    main()
