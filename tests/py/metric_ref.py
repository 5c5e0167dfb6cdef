#!/usr/bin/python3
"""metric_ref.py - an independent numpy oracle for tfkit's Keras metrics.

Nothing here uses tfkit code. The formulas are Keras' (TF 2.11+
keras/metrics and keras/utils/metrics_utils.py) written from their
definitions, in float64 over all batches of a case:

  accuracy/acc        resolved from the shapes as compile_utils does
  *_accuracy          per-example matches (argmax, first index on ties;
                      binary: mean over the last axis of
                      y_true == (y_pred > threshold))
  mae / mse           mean over the last axis, then a weighted mean
  precision/recall    tp/fp/fn at the threshold after the top_k filter
                      (others -> -1e10) and the class_id slice
  AUC                 thresholds [-1e-7, 1/(T-1), ..., 1 + 1e-7] as
                      float32, y_pred > threshold compared directly (not
                      Keras' bucketing, which tfkit uses: an independent
                      path to the same counts), then the ROC/PR sums
                      (interpolation, minoring, majoring) and
                      interpolate_pr_auc

    metric_ref.py MANIFEST
        lines "CASE id CONFIG_JSON" and
        "BATCH id YT_FILE YT_DTYPE YT_SHAPE YP_FILE YP_SHAPE W_FILE|-"
        (shapes as comma lists, raw little-endian arrays); prints per
        case "id <result over all batches> <result of the first batch>"
"""

import json
import math
import sys

import numpy as np

NEG_INF = -1e10


def kind_of(cfg, yt, yp):
    if isinstance(cfg, str):
        s = cfg
        table = {"accuracy": "acc", "acc": "acc", "mae": "mae",
                 "mean_absolute_error": "mae", "mse": "mse",
                 "mean_squared_error": "mse",
                 "sparse_categorical_accuracy": "sparse",
                 "categorical_accuracy": "cat", "binary_accuracy": "bin",
                 "precision": "precision", "recall": "recall", "auc": "auc",
                 "AUC": "auc", "Precision": "precision", "Recall": "recall"}
        k, c = table[s], {}
    else:
        table = {"SparseCategoricalAccuracy": "sparse",
                 "CategoricalAccuracy": "cat", "BinaryAccuracy": "bin",
                 "Precision": "precision", "Recall": "recall", "AUC": "auc",
                 "MeanAbsoluteError": "mae", "MeanSquaredError": "mse"}
        k, c = table[cfg["class_name"]], cfg.get("config") or {}
    if k == "acc":
        # keras/engine/compile_utils.py MetricsContainer._get_metric_object
        is_binary = yp.shape[-1] == 1
        is_sparse = (yt.ndim < yp.ndim or
                     (yt.shape[-1] == 1 and yp.shape[-1] > 1))
        k = "bin" if is_binary else "sparse" if is_sparse else "cat"
    return k, c


class Ref:
    def __init__(self, cfg):
        self.cfg = cfg
        self.kind = None
        self.total = 0.0
        self.count = 0.0
        self.tp = self.fp = self.fn = 0.0
        self.auc = None

    def update(self, yt, yp, w):
        if self.kind is None:
            self.kind, self.c = kind_of(self.cfg, yt, yp)
        k, c = self.kind, self.c
        b = yp.shape[0]
        w = np.ones(b) if w is None else w.astype(np.float64)
        if k in ("sparse", "cat", "bin", "mae", "mse"):
            if k == "sparse":
                lab = yt.reshape(yp.shape[:-1]).astype(np.int64)
                v = (lab == np.argmax(yp, axis=-1)).astype(np.float64)
            elif k == "cat":
                v = (np.argmax(yt.reshape(yp.shape), axis=-1) ==
                     np.argmax(yp, axis=-1)).astype(np.float64)
            elif k == "bin":
                th = np.float32(c.get("threshold", 0.5))
                pb = (yp > th).astype(np.float32)
                v = np.mean(yt.reshape(yp.shape).astype(np.float32) == pb,
                            axis=-1)
            else:
                d = yp.astype(np.float64) - yt.reshape(yp.shape).astype(
                    np.float32).astype(np.float64)
                v = np.mean(np.abs(d) if k == "mae" else d * d, axis=-1)
            ww = np.broadcast_to(w.reshape((b,) + (1,) * (v.ndim - 1)),
                                 v.shape)
            self.total += float(np.sum(v * ww))
            self.count += float(np.sum(ww))
            return
        yt = yt.reshape(yp.shape).astype(np.float64)
        ww = np.broadcast_to(w.reshape((b,) + (1,) * (yp.ndim - 1)),
                             yp.shape)
        if k in ("precision", "recall"):
            top_k, cid = c.get("top_k"), c.get("class_id")
            th = c.get("thresholds")
            if isinstance(th, list):
                th = th[0]
            if th is None:
                th = 0.5 if top_k is None else NEG_INF
            p = yp.astype(np.float64).copy()
            if top_k is not None:
                rows = p.reshape(-1, p.shape[-1])
                out = np.full_like(rows, NEG_INF)
                for r in range(rows.shape[0]):
                    idx = np.argsort(-rows[r], kind="stable")[:top_k]
                    out[r, idx] = rows[r, idx]
                p = out.reshape(p.shape)
            if cid is not None:
                p, yt, ww = p[..., cid], yt[..., cid], ww[..., cid]
            pos = p > np.float32(th)
            lab = yt != 0
            self.tp += float(np.sum(ww * (lab & pos)))
            self.fp += float(np.sum(ww * (~lab & pos)))
            self.fn += float(np.sum(ww * (lab & ~pos)))
            return
        # AUC
        nt = c.get("num_thresholds", 200)
        thr = np.array([0.0 - 1e-7] + [(i + 1) * 1.0 / (nt - 1)
                                       for i in range(nt - 2)] +
                       [1.0 + 1e-7]).astype(np.float32)
        p = yp.astype(np.float32).reshape(-1)
        if c.get("from_logits", False):
            p = (1.0 / (1.0 + np.exp(-p.astype(np.float64)))).astype(
                np.float32)
        lab = yt.reshape(-1) != 0
        wv = ww.reshape(-1)
        pos = p[None, :] > thr[:, None]
        tp = np.sum(wv * (lab & pos), axis=1)
        fp = np.sum(wv * (~lab & pos), axis=1)
        fn = np.sum(wv * (lab & ~pos), axis=1)
        tn = np.sum(wv * (~lab & ~pos), axis=1)
        if self.auc is None:
            self.auc = [tp, fp, tn, fn]
        else:
            for a, x in zip(self.auc, (tp, fp, tn, fn)):
                a += x

    def result(self):
        k = self.kind
        dnn = lambda a, b: 0.0 if b == 0 else a / b  # noqa: E731
        if k in ("sparse", "cat", "bin", "mae", "mse"):
            return dnn(self.total, self.count)
        if k == "precision":
            return dnn(self.tp, self.tp + self.fp)
        if k == "recall":
            return dnn(self.tp, self.tp + self.fn)
        c = self.c
        tp, fp, tn, fn = self.auc
        curve = c.get("curve", "ROC").upper()
        summ = c.get("summation_method", "interpolation").lower()
        vdnn = np.vectorize(dnn)
        if curve == "PR" and summ == "interpolation":
            dtp = tp[:-1] - tp[1:]
            p = tp + fp
            dp = p[:-1] - p[1:]
            slope = vdnn(dtp, np.maximum(dp, 0))
            icpt = tp[1:] - slope * p[1:]
            ratio = np.where((p[:-1] > 0) & (p[1:] > 0),
                             vdnn(p[:-1], np.maximum(p[1:], 0)), 1.0)
            inc = vdnn(slope * (dtp + icpt * np.log(ratio)),
                       np.maximum(tp[1:] + fn[1:], 0))
            return float(np.sum(inc))
        recall = vdnn(tp, tp + fn)
        if curve == "ROC":
            x, y = vdnn(fp, fp + tn), recall
        else:
            x, y = recall, vdnn(tp, tp + fp)
        if summ == "interpolation":
            h = (y[:-1] + y[1:]) / 2.0
        elif summ == "minoring":
            h = np.minimum(y[:-1], y[1:])
        else:
            h = np.maximum(y[:-1], y[1:])
        return float(np.sum((x[:-1] - x[1:]) * h))


def load(path, dtype, shape):
    return np.fromfile(path, dtype=dtype).reshape(
        [int(s) for s in shape.split(",")])


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    cases, order, batches = {}, [], {}
    for line in open(argv[1]):
        f = line.rstrip("\n").split(" ", 2)
        if f[0] == "CASE":
            cases[f[1]] = json.loads(f[2])
            order.append(f[1])
            batches[f[1]] = []
        elif f[0] == "BATCH":
            g = line.split()
            yt = load(g[2], {"i64": np.int64, "i32": np.int32,
                             "f32": np.float32}[g[3]], g[4])
            yp = load(g[5], np.float32, g[6])
            w = None if g[7] == "-" else np.fromfile(g[7], dtype=np.float32)
            batches[g[1]].append((yt, yp, w))
    for cid in order:
        r = Ref(cases[cid])
        for yt, yp, w in batches[cid]:
            r.update(yt, yp, w)
        r1 = Ref(cases[cid])
        r1.update(*batches[cid][0])
        print("%s %.10g %.10g" % (cid, r.result(), r1.result()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
