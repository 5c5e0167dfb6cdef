#!/usr/bin/python3
"""peak.py - FLOPs per training example and the machine's FP32 peak.

    peak.py MODEL [PEAK_BIN]

prints one JSON line for bench-train-MODEL.sh (mlp or cnn):
  {"mflop_per_example", "peak_gflops_nominal", "peak_gflops_calibrated",
   "peak_gflops_calibrated_wall", "peak_basis"}
with PEAK_BIN the calibration program (tests/bench/peak.c; default
$TFK_BENCH_BIN/peak). Without it the calibrated figures are null.

FLOPs per example (forward + backward) are counted from the layer
shapes of examples/MODEL.spec.json, in multiply-adds (MACs) of the dense
and convolution layers, 2 FLOPs each; the elementwise work (bias, ReLU,
pooling, dropout, softmax, Adam) is under 1% and left out.
  A layer of M MACs forward costs M more for the gradient of its
  weights and M for the gradient of its input; the first layer's input
  gradient is never computed (the input is data), so it costs 2M.
  MLP: Dense 784->128: M = 784*128 = 100,352; Dense 128->10: 1,280.
       2 * (2 * 100,352 + 3 * 1,280) = 409,088 FLOP = 0.409 MFLOP.
  CNN: Conv2D 5x5 1->32 valid, 28x28 -> 24x24:
         M = 24*24*32 * 5*5*1 = 460,800;
       Conv2D 5x5 32->32 same, 24x24: M = 24*24*32 * 5*5*32 = 14,745,600;
       MaxPooling2D 2 -> 12x12x32, Flatten 4,608; Dense 4608->10:
         M = 46,080.
       2 * (2 * 460,800 + 3 * (14,745,600 + 46,080)) = 90,593,280 FLOP
       = 90.6 MFLOP (issue 17's "about 91.5" also counts the first
       layer's input gradient, 0.92 MFLOP that no framework computes).

The nominal peak is cores x FMA units x lanes x 2 x clock, from
/proc/cpuinfo: cores are its processors, lanes 16 with avx512f, 8 with
avx2 and fma, 4 with sse (and then no FMA: 1 FLOP per lane a cycle,
counted as half of 2), the clock its highest "cpu MHz" (the base clock
on most machines; turbo is above it). cpuinfo does not report FMA
units: 2 is taken (every x86 core with AVX2 since Haswell and Zen 2,
and Xeon Gold/Platinum with AVX-512, has two), TFK_BENCH_FMA_UNITS
overrides it. The calibrated peak is what peak.c's FMA loop reaches on
all cores: "gflops_cpu" (FLOPs over each thread's CPU time, robust on a
shared machine) as peak_gflops_calibrated, and over wall time as
peak_gflops_calibrated_wall.
"""
import json
import os
import subprocess
import sys

# (MACs forward, whether the layer's input gradient is computed)
LAYERS = {
    "mlp": [(784 * 128, False), (128 * 10, True)],
    "cnn": [(24 * 24 * 32 * 5 * 5 * 1, False),
            (24 * 24 * 32 * 5 * 5 * 32, True),
            (4608 * 10, True)],
}


def flops_per_example(model):
    return sum(2 * m * (3 if grad_in else 2) for m, grad_in in LAYERS[model])


def nominal_peak(cpuinfo="/proc/cpuinfo"):
    """(GFLOP/s, how it was counted)"""
    cores, mhz, flags = 0, 0.0, set()
    with open(cpuinfo) as f:
        for line in f:
            key, _, val = line.partition(":")
            key = key.strip()
            if key == "processor":
                cores += 1
            elif key == "cpu MHz":
                mhz = max(mhz, float(val))
            elif key == "flags" and not flags:
                flags = set(val.split())
    if "avx512f" in flags:
        lanes, fma = 16, 2
    elif "avx2" in flags and "fma" in flags:
        lanes, fma = 8, 2
    else:
        lanes, fma = 4, 1   # SSE: a mul and an add port, no fused op
    fma = int(os.environ.get("TFK_BENCH_FMA_UNITS", fma))
    gflops = cores * fma * lanes * 2 * mhz / 1e3
    basis = "%d cores x %d FMA units x %d lanes x 2 x %.2f GHz" % (
        cores, fma, lanes, mhz / 1e3)
    return gflops, basis


def calibrated_peak(peak_bin):
    """(GFLOP/s per CPU second, GFLOP/s per wall second) or (None, None)"""
    if not peak_bin or not os.access(peak_bin, os.X_OK):
        return None, None
    out = subprocess.run([peak_bin], capture_output=True, text=True,
                         check=True).stdout
    o = json.loads(out)
    return o["gflops_cpu"], o["gflops"]


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[1] not in LAYERS:
        sys.exit("usage: peak.py mlp|cnn [PEAK_BIN]")
    peak_bin = sys.argv[2] if len(sys.argv) == 3 else os.path.join(
        os.environ.get("TFK_BENCH_BIN", ""), "peak")
    nominal, basis = nominal_peak()
    cal, cal_wall = calibrated_peak(peak_bin)
    print(json.dumps({
        "mflop_per_example": round(flops_per_example(sys.argv[1]) / 1e6, 3),
        "peak_gflops_nominal": round(nominal, 1),
        "peak_gflops_calibrated": cal,
        "peak_gflops_calibrated_wall": cal_wall,
        "peak_basis": basis}, separators=(",", ":")))


if __name__ == "__main__":
    main()
