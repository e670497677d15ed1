#!/usr/bin/env python3
"""Records PyTorch's own ONNX exports and PyTorch's outputs on them, so tests
can check hybgen's ONNX import and generated code without PyTorch installed.

Models (tests/data/onnx/README.md lists the ops each file holds):

  lenet5                    LeNet-5 as the PyTorch tutorial writes it (view on
                            x.size(0)); opset 13, dynamic batch axis (recorded
                            with batch 2), weights embedded as raw_data
  transformer_encoder       nn.TransformerEncoderLayer(d_model 64, 4 heads, feed-
                            forward 256, GELU), sequence 8, batch 1; opset 17
                            (LayerNormalization), weights embedded
  transformer_encoder_op13  the same layer with ReLU, opset 13 (LayerNorm as
                            ReduceMean/Sub/Pow/Sqrt/Div), weights embedded
  resnet18                  torchvision ResNet-18, 1x3x64x64; opset 13, weights
                            as external data (NAME.onnx.data, not committed)
  mobilenet_v2              torchvision MobileNet v2, 1x3x64x64; opset 13,
                            weights as external data

Every parameter and buffer holds made-up numbers computed from its ONNX
initializer name and shape (PyTorch's state_dict name: the conv nets are
exported with training=PRESERVE in eval mode, which keeps BatchNormalization
nodes instead of folding them into the convolutions, so the file's
initializers are exactly the module's tensors):

  key  = fnv1a64(NAME) + SEED * G                           (mod 2^64)
  z_i  = splitmix64 output number i + 1 from state key:  mix(key + (i + 1) * G)
         with G = 0x9E3779B97F4A7C15 and mix(z) = z ^= z >> 30, z *= 0xBF58476D1CE4E5B9,
         z ^= z >> 27, z *= 0x94D049BB133111EB, z ^= z >> 31
  u_i  = (z_i >> 40) / 2^24                                 (24 bits, in [0, 1))
  w_i  = float32(lo + (hi - lo) * u_i), computed in float64, where [lo, hi) is
         [0.5, 1.5)            for NAME ending in running_var and for other rank-1
                               tensors not ending in bias/running_mean (norm scales)
         [-0.1, 0.1)           for NAME ending in bias or running_mean
         [-s, s), s = sqrt(3 / fan_in), fan_in = product of dims 1.. (weights)

SEED is 1. tests/onnx/onnx_models_test.cpp computes the same numbers to write
the external data files again (at the offset and length each initializer of
the .onnx names) before it imports the model.

Inputs are x[i] = ((i * 37) % 101) / 50 - 1 in float64, rounded to float32.

Writes into tests/data/onnx/ (or --out DIR):

  NAME.onnx              the exported model
  NAME.onnx.data         external weights (resnet18, mobilenet_v2; not committed)
  NAME-input.npy         the input (float32)
  NAME-output.npy        PyTorch's output on it (float32)

    # export (PyTorch: Debian's python3-torch python3-torchvision python3-onnx)
    /usr/bin/python3 scripts/onnx_models_reference.py [NAME ...] [--out DIR] [--size N]
    # check the recorded files with ONNX Runtime (writes the .onnx.data files again)
    /tmp/mx/bin/python scripts/onnx_models_reference.py --check [NAME ...] [--out DIR]

--size N exports the conv nets with an NxN input instead (e.g. 224 for timing;
use another --out). None of this is needed by hybgen or its tests.
"""
import argparse
import os
import sys

import numpy as np

SEED = 1
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "onnx")
EXTERNAL = ("resnet18", "mobilenet_v2")
MODELS = ("lenet5", "transformer_encoder", "transformer_encoder_op13") + EXTERNAL

M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def fnv1a64(name):
    h = 0xCBF29CE484222325
    for c in name.encode():
        h = ((h ^ c) * 0x100000001B3) & M64
    return h


def weight_range(name, shape):
    if name.endswith("running_var"):
        return 0.5, 1.5
    if name.endswith("bias") or name.endswith("running_mean"):
        return -0.1, 0.1
    if len(shape) <= 1:
        return 0.5, 1.5
    fan_in = int(np.prod(shape[1:]))
    s = np.sqrt(3.0 / max(fan_in, 1))
    return -s, s


def made_up(name, shape, seed=SEED):
    """The documented generator above, in numpy's wrapping uint64 arithmetic."""
    lo, hi = weight_range(name, shape)
    n = int(np.prod(shape)) if len(shape) else 1
    key = np.uint64((fnv1a64(name) + seed * GOLDEN) & M64)
    with np.errstate(over="ignore"):
        z = key + (np.arange(n, dtype=np.uint64) + np.uint64(1)) * np.uint64(GOLDEN)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(40)).astype(np.float64) / float(1 << 24)
    return (lo + (hi - lo) * u).astype(np.float32).reshape(shape)


def fixed_input(shape):
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((i * 37) % 101) / 50.0 - 1.0).astype(np.float32).reshape(shape)


# ---------------------------------------------------------------- the models (PyTorch)

def build(name, size):
    import torch
    from torch import nn

    class LeNet5(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = nn.functional.max_pool2d(torch.relu(self.conv1(x)), 2)
            x = nn.functional.avg_pool2d(torch.relu(self.conv2(x)), 2)
            x = x.view(x.size(0), -1)
            x = torch.relu(self.fc1(x))
            x = torch.relu(self.fc2(x))
            return self.fc3(x)

    if name == "lenet5":
        return LeNet5(), (2, 1, 28, 28), 13
    if name == "transformer_encoder":
        return nn.TransformerEncoderLayer(64, 4, dim_feedforward=256, activation="gelu"), (8, 1, 64), 17
    if name == "transformer_encoder_op13":
        return nn.TransformerEncoderLayer(64, 4, dim_feedforward=256, activation="relu"), (8, 1, 64), 13
    import torchvision

    if name == "resnet18":
        return torchvision.models.resnet18(), (1, 3, size, size), 13
    if name == "mobilenet_v2":
        return torchvision.models.mobilenet_v2(), (1, 3, size, size), 13
    raise ValueError(name)


def export(name, out, size):
    import onnx
    import torch

    model, shape, opset = build(name, size)
    model.eval()
    with torch.no_grad():
        for pname, t in model.state_dict().items():
            if t.is_floating_point():
                t.copy_(torch.from_numpy(made_up(pname, tuple(t.shape))))
    x = fixed_input(shape)
    with torch.no_grad():
        y = model(torch.from_numpy(x)).numpy()
    path = os.path.join(out, name + ".onnx")
    dynamic = {"input": {0: "batch"}, "output": {0: "batch"}} if name == "lenet5" else None
    # PRESERVE (the module is in eval mode) keeps BatchNormalization nodes: the
    # initializers stay the module's tensors, named as in its state_dict.
    torch.onnx.export(model, torch.from_numpy(x), path, opset_version=opset, input_names=["input"],
                      output_names=["output"], dynamic_axes=dynamic, do_constant_folding=True,
                      training=torch.onnx.TrainingMode.PRESERVE)
    m = onnx.load(path)
    if name in EXTERNAL:
        to_external(m, name, out, model.state_dict())
        onnx.save(m, path)
    np.save(os.path.join(out, name + "-input.npy"), x)
    np.save(os.path.join(out, name + "-output.npy"), y.astype(np.float32))
    ops = sorted({n.op_type for n in m.graph.node})
    print("%-26s opset %d input %-16s output %-10s |y|max %.4g, %d nodes: %s"
          % (name, opset, shape, y.shape, abs(y).max(), len(m.graph.node), " ".join(ops)))


def to_external(m, name, out, state):
    """Moves every initializer into NAME.onnx.data, one after another, checking it is the generator's."""
    from onnx import TensorProto, numpy_helper

    location = name + ".onnx.data"
    offset = 0
    with open(os.path.join(out, location), "wb") as f:
        for t in m.graph.initializer:
            if t.name not in state or t.data_type != TensorProto.FLOAT:
                sys.exit(f"{name}: initializer {t.name!r} is not a float parameter of the module: "
                         "the test could not make it again")
            want = made_up(t.name, tuple(t.dims))
            if not np.array_equal(numpy_helper.to_array(t), want):
                sys.exit(f"{name}: initializer {t.name!r} differs from the generator's numbers")
            data = want.astype("<f4").tobytes()
            f.write(data)
            t.ClearField("raw_data")
            t.ClearField("float_data")
            t.data_location = TensorProto.EXTERNAL
            del t.external_data[:]
            for k, v in (("location", location), ("offset", str(offset)), ("length", str(len(data)))):
                e = t.external_data.add()
                e.key, e.value = k, v
            offset += len(data)


# ---------------------------------------------------------------- the check (ONNX Runtime)

def write_external(m, out):
    """Writes the external data files of model m again from the generator."""
    files = {}
    for t in m.graph.initializer:
        info = {e.key: e.value for e in t.external_data}
        if "location" not in info:
            continue
        f = files.get(info["location"])
        if f is None:
            f = files[info["location"]] = open(os.path.join(out, info["location"]), "wb")
        f.seek(int(info["offset"]))
        data = made_up(t.name, tuple(t.dims)).astype("<f4").tobytes()
        assert len(data) == int(info["length"]), t.name
        f.write(data)
    for f in files.values():
        f.close()


def check(name, out):
    import onnx
    import onnxruntime as ort

    path = os.path.join(out, name + ".onnx")
    write_external(onnx.load(path, load_external_data=False), out)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    x = np.load(os.path.join(out, name + "-input.npy"))
    want = np.load(os.path.join(out, name + "-output.npy"))
    got = sess.run(None, {"input": x})[0]
    err = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-30))
    print("%-26s ONNX Runtime vs PyTorch: max error relative to |y|max %.2g %s"
          % (name, err, "ok" if err < 1e-5 else "DIFFERS"))
    return err < 1e-5


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="*", default=list(MODELS))
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--size", type=int, default=64, help="input height and width of the conv nets")
    ap.add_argument("--check", action="store_true", help="run the recorded files on ONNX Runtime")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    ok = True
    for name in args.models:
        if name not in MODELS:
            sys.exit(f"unknown model {name}; known: {' '.join(MODELS)}")
        if args.check:
            ok = check(name, args.out) and ok
        else:
            export(name, args.out, args.size)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
