"""tftap: TAP output and tool running for the TensorFlow tier (tests/tf/).

Each tests/tf/t-*.py runs under the TensorFlow environment's python
(scripts/tfenv; `make check-tf` runs them with prove) and prints TAP:
`ok N - what` / `not ok N - what`, then `1..N`. The environment gives
TFK_BIN (the built tools) and TFK_FIXTURES (../shared/fixtures).

    from tftap import T
    t = T()
    out = t.tool("tfk-count", path)          # stdout; a failure is fatal
    t.ok(cond, "what")
    t.close(a, b, 1e-6, "what")               # numpy allclose, max error shown
    t.done()
"""
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")


class T:
    def __init__(self):
        self.n = 0
        self.failed = 0
        self.bin = os.environ.get("TFK_BIN") or os.path.abspath(
            os.path.join(os.path.dirname(__file__), "..", "..", "bin"))
        self.fixtures = os.environ.get("TFK_FIXTURES") or os.path.abspath(
            os.path.join(os.path.dirname(__file__), "..", "..", "..",
                         "shared", "fixtures"))
        self._tmp = tempfile.TemporaryDirectory(prefix="tfk-tf-")
        self.tmp = self._tmp.name

    def path(self, name):
        return os.path.join(self.tmp, name)

    def fixture(self, rel):
        return os.path.join(self.fixtures, rel)

    def run(self, tool, *args, stdin=None, check=True):
        """Run bin/TOOL with args; returns (rc, stdout bytes, stderr str)."""
        p = subprocess.run([os.path.join(self.bin, tool)] + [str(a) for a in args],
                           input=stdin, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, cwd=self.tmp)
        err = p.stderr.decode("utf-8", "replace")
        if check and p.returncode != 0:
            self.diag("%s %s: exit %d: %s" % (tool, " ".join(map(str, args)),
                                              p.returncode, err))
            self.ok(False, "%s ran" % tool)
            self.done()
        return p.returncode, p.stdout, err

    def tool(self, tool, *args, stdin=None):
        return self.run(tool, *args, stdin=stdin)[1]

    def diag(self, msg):
        for line in str(msg).splitlines() or [""]:
            print("# " + line)
        sys.stdout.flush()

    def ok(self, cond, what):
        self.n += 1
        if not cond:
            self.failed += 1
        print("%s %d - %s" % ("ok" if cond else "not ok", self.n, what))
        sys.stdout.flush()
        return bool(cond)

    def eq(self, got, want, what):
        good = got == want
        if not good:
            self.diag("got:  %r\nwant: %r" % (got, want))
        return self.ok(good, what)

    def close(self, got, want, tol, what, rel=False):
        import numpy as np
        g = np.asarray(got, dtype=np.float64)
        w = np.asarray(want, dtype=np.float64)
        if g.shape != w.shape:
            self.diag("shape %s, want %s" % (g.shape, w.shape))
            return self.ok(False, what)
        d = np.abs(g - w)
        if rel:
            d = d / np.maximum(np.abs(w), 1e-30)
        m = float(d.max()) if d.size else 0.0
        good = m <= tol
        if not good:
            self.diag("max %s error %.3g > %.3g" % ("relative" if rel else
                                                    "absolute", m, tol))
        else:
            self.diag("max %s error %.3g" % ("relative" if rel else
                                             "absolute", m))
        return self.ok(good, what)

    def done(self):
        print("1..%d" % self.n)
        sys.stdout.flush()
        self._tmp.cleanup()
        sys.exit(1 if self.failed or self.n == 0 else 0)
