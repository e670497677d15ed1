#!/usr/bin/env python3
"""Records PyTorch's ONNX exports of the small models whose shape arithmetic
hybgen evaluates at import, and PyTorch's outputs on them, so that
tests/onnx/onnx_fold_exports_test.cpp can check them without PyTorch.

Models (each a few KB; weights from torch.manual_seed(0)):

  pad                  conv 3x3 (3 -> 4 channels), then F.pad(x, (0, 1, 0, 1)):
                       torch writes the pads as Shape -> Gather -> Mul -> Sub ->
                       ConstantOfShape -> Concat -> Reshape -> Slice (step -1) ->
                       Transpose -> Reshape -> Cast -> Pad (its own constant
                       folding keeps the chain from ConstantOfShape on)
  pad_unfolded         the same exported with do_constant_folding=False: the
                       whole chain
  interpolate_nearest  conv 1x1, then F.interpolate(x, scale_factor=2)
  interpolate_bilinear conv 1x1, then F.interpolate(x, scale_factor=2,
                       mode="bilinear", align_corners=False)
  view_linear          x.view(x.size(0), -1), then nn.Linear(48, 5)
  flatten_linear       torch.flatten(x, 1), then nn.Linear(48, 5)

each exported with the TorchScript exporter at opsets 11, 13 and 17 with a
dynamic batch axis (recorded at batch 2, so the shape arithmetic stays in the
file), and with torch.onnx.export(..., dynamo=True) where that works.

Inputs are x[i] = ((i * 37) % 101) / 50 - 1, shape (2, 3, 4, 4).

Writes into tests/data/onnx/fold/ (or --out DIR):

  NAME_opsetN.onnx / NAME_dynamo.onnx   the exported model
  NAME-input.npy                        the input (float32)
  NAME-output.npy                       PyTorch's output on it (float32)

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install torch --index-url https://download.pytorch.org/whl/cpu
    /tmp/venv/bin/pip install onnx onnxscript
    /tmp/venv/bin/python scripts/onnx_fold_exports.py [--out DIR]

None of this is needed by hybgen or its tests.
"""
import argparse
import inspect
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SHAPE = (2, 3, 4, 4)
OPSETS = (11, 13, 17)


class Pad(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return F.pad(self.conv(x), (0, 1, 0, 1))


class Interpolate(nn.Module):
    def __init__(self, mode):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)
        self.mode = mode

    def forward(self, x):
        y = self.conv(x)
        if self.mode == "nearest":
            return F.interpolate(y, scale_factor=2)
        return F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)


class ViewLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(48, 5)

    def forward(self, x):
        return self.fc(x.view(x.size(0), -1))


class FlattenLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(48, 5)

    def forward(self, x):
        return self.fc(torch.flatten(x, 1))


# (name, module, do_constant_folding): pad_unfolded is pad exported without
# PyTorch's own constant folding, which keeps the whole chain above in the
# file (with it, PyTorch folds the Shape -> Gather -> Mul -> Sub head itself).
def models():
    yield "pad", Pad, True
    yield "pad_unfolded", Pad, False
    yield "interpolate_nearest", lambda: Interpolate("nearest"), True
    yield "interpolate_bilinear", lambda: Interpolate("bilinear"), True
    yield "view_linear", ViewLinear, True
    yield "flatten_linear", FlattenLinear, True


def the_input():
    n = int(np.prod(SHAPE))
    i = np.arange(n, dtype=np.float64)
    return (((i * 37) % 101) / 50 - 1).astype(np.float32).reshape(SHAPE)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out", default=os.path.join(here, "..", "tests", "data", "onnx", "fold"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    x = the_input()
    for name, make, folding in models():
        torch.manual_seed(0)
        model = make().eval()
        with torch.no_grad():
            y = model(torch.from_numpy(x)).numpy()
        np.save(os.path.join(args.out, name + "-input.npy"), x)
        np.save(os.path.join(args.out, name + "-output.npy"), y.astype(np.float32))
        for opset in OPSETS:
            path = os.path.join(args.out, "%s_opset%d.onnx" % (name, opset))
            extra = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
            torch.onnx.export(model, (torch.from_numpy(x),), path, opset_version=opset, input_names=["x"],
                              output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                              do_constant_folding=folding, **extra)
            print("wrote", path)
        path = os.path.join(args.out, name + "_dynamo.onnx")
        try:
            batch = torch.export.Dim("batch", min=1, max=64)
            program = torch.onnx.export(model, (torch.from_numpy(x),), dynamo=True, input_names=["x"],
                                        output_names=["y"], dynamic_shapes=({0: batch},), external_data=False)
            program.save(path)
            print("wrote", path)
        except Exception as e:  # the dynamo exporter is optional
            print("dynamo export of %s failed: %s" % (name, str(e).splitlines()[0] if str(e) else e), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
