#!/usr/bin/env python3
"""Records MXNet's own outputs for the Gluon model-zoo architectures, so tests
can compare hybgen's generated code with MXNet without MXNet installed.

For each model it builds the Gluon model (MXNet 1.9.1), fills every parameter
with the same made-up numbers `hybgen --random-weights SEED` produces (see
gen/io/mxnet/mxnet_symbol.cpp: value i of weight NAME is lo + (hi - lo) * u,
u = ((i * 2654435761 + fnv1a(NAME) + SEED * 40503) mod 2^32) / 2^32), runs it
on a fixed input (x[i] = ((i * 37) % 101) / 50 - 1), and writes into
tests/data/mxnet_zoo/:

  NAME-symbol.json   the graph as Gluon's export() writes it
  NAME-output.npy    MXNet's output on the fixed input

Weights are not stored: the test makes them again from the seed.

    python3 -m venv /tmp/mx && /tmp/mx/bin/pip install mxnet==1.9.1 "numpy<1.24"
    /tmp/mx/bin/python scripts/mxnet_zoo_reference.py
"""
import math
import os
import sys

import numpy as np
import mxnet as mx
from mxnet.gluon.model_zoo import vision

SEED = 1
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "mxnet_zoo")
MODELS = [  # (zoo name, file name, input shape)
    ("resnet18_v1", "resnet18_v1", (1, 3, 64, 64)),
    ("resnet18_v2", "resnet18_v2", (1, 3, 64, 64)),
    ("mobilenet1.0", "mobilenet_v1", (1, 3, 64, 64)),
    ("mobilenetv2_1.0", "mobilenet_v2", (1, 3, 64, 64)),
    ("squeezenet1.1", "squeezenet1_1", (1, 3, 224, 224)),
    ("densenet121", "densenet121", (1, 3, 224, 224)),
    ("inceptionv3", "inception_v3", (1, 3, 299, 299)),
    ("vgg11_bn", "vgg11_bn", (1, 3, 32, 32)),
]


def fnv1a(name):
    h = 2166136261
    for c in name.encode():
        h = ((h ^ c) * 16777619) & 0xFFFFFFFF
    return h


def weight_range(name, shape):
    if name.endswith("_var") or name.endswith("_gamma"):
        return 0.5, 1.5
    if name.endswith("_beta") or name.endswith("_mean") or name.endswith("_bias"):
        return -0.1, 0.1
    fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    scale = math.sqrt(3.0 / max(fan_in, 1))
    return -scale, scale


def made_up(name, shape):
    lo, hi = weight_range(name, shape)
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.uint64)
    offset = np.uint64((fnv1a(name) + SEED * 40503) & 0xFFFFFFFFFFFFFFFF)
    u = ((i * np.uint64(2654435761) + offset) & np.uint64(0xFFFFFFFF)).astype(np.float64) / 4294967296.0
    return (lo + (hi - lo) * u).astype(np.float32).reshape(shape)


def fixed_input(shape):
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((i * 37) % 101) / 50.0 - 1.0).astype(np.float32).reshape(shape)


def main():
    os.makedirs(OUT, exist_ok=True)
    only = set(sys.argv[1:])
    for zoo_name, file_name, shape in MODELS:
        if only and file_name not in only:
            continue
        net = vision.get_model(zoo_name, classes=10 if file_name == "vgg11_bn" else 1000)
        net.initialize()
        net.hybridize()
        x = mx.nd.array(fixed_input(shape))
        net(x)  # completes deferred shapes
        for p in net.collect_params().values():
            p.set_data(mx.nd.array(made_up(p.name, p.shape)))
        y = net(x).asnumpy()
        prefix = os.path.join(OUT, file_name)
        net.export(prefix)
        os.remove(prefix + "-0000.params")
        np.save(prefix + "-output.npy", y.astype(np.float32))
        print("%-16s input %-18s output %s, |y|max %.4g" % (file_name, shape, y.shape, abs(y).max()))


if __name__ == "__main__":
    main()
