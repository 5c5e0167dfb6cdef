#!/usr/bin/python3
"""Run a .tflite model with Arm NN (python3-pyarmnn): the TfLite parser and
the CpuRef (reference) backend, an implementation independent of tfkit.

usage: armnn_run.py MODEL.tflite IN.npy OUT.npy

The model must have one input and one output. Arm NN runs the shapes the
file declares (batch 1 where the shape_signature says -1), so each row of
IN.npy is run on its own and the outputs are stacked into OUT.npy.
"""
import sys

import numpy as np
import pyarmnn as ann


def main():
    model, inp, out = sys.argv[1:4]
    parser = ann.ITfLiteParser()
    network = parser.CreateNetworkFromBinaryFile(model)
    in_names = parser.GetSubgraphInputTensorNames(0)
    out_names = parser.GetSubgraphOutputTensorNames(0)
    if len(in_names) != 1 or len(out_names) != 1:
        sys.exit("armnn_run.py: one input and one output only")
    in_info = parser.GetNetworkInputBindingInfo(0, in_names[0])
    out_info = parser.GetNetworkOutputBindingInfo(0, out_names[0])
    runtime = ann.IRuntime(ann.CreationOptions())
    opt, _ = ann.Optimize(network, [ann.BackendId("CpuRef")],
                          runtime.GetDeviceSpec(), ann.OptimizerOptions())
    net_id, _ = runtime.LoadNetwork(opt)
    x = np.load(inp)
    want = tuple(in_info[1].GetShape()[i]
                 for i in range(in_info[1].GetNumDimensions()))
    rows = []
    for r in range(x.shape[0]):
        xi = np.ascontiguousarray(x[r:r + 1].reshape(want))
        ins = ann.make_input_tensors([in_info], [xi])
        outs = ann.make_output_tensors([out_info])
        runtime.EnqueueWorkload(net_id, ins, outs)
        rows.append(ann.workload_tensors_to_ndarray(outs)[0].copy())
    np.save(out, np.concatenate(rows, axis=0))


main()
