#!/usr/bin/env python3
"""Writes tiny_mlp.json + tiny_mlp.safetensors (hybgen's model format) and
expected_output.h, computed here in plain Python, independently of hybgen.

    python3 make_tiny_mlp.py     # rewrites the three files beside this script
"""
import json
import math
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(2026)


def matrix(rows, cols, scale):
    return [[rng.uniform(-scale, scale) for _ in range(cols)] for _ in range(rows)]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


weights = {
    "fc1_weight": matrix(16, 8, 0.5),
    "fc1_bias": [rng.uniform(-0.1, 0.1) for _ in range(16)],
    "fc2_weight": matrix(3, 16, 0.5),
    "fc2_bias": [rng.uniform(-0.1, 0.1) for _ in range(3)],
}
weights = {k: ([[f32(v) for v in row] for row in w] if isinstance(w[0], list) else [f32(v) for v in w])
           for k, w in weights.items()}


def flat(w):
    return [v for row in w for v in row] if isinstance(w[0], list) else list(w)


def shape(w):
    return [len(w), len(w[0])] if isinstance(w[0], list) else [len(w)]


graph = {
    "format": "hybgen-graph",
    "format_version": 1,
    "name": "tiny_mlp",
    "inputs": [{"name": "data", "shape": [1, 8], "dtype": "float32"}],
    "outputs": ["prob"],
    "weights": [{"name": k, "shape": shape(weights[k]), "dtype": "float32"} for k in sorted(weights)],
    "nodes": [
        {"name": "fc1", "op": "FullyConnected", "inputs": ["data", "fc1_weight", "fc1_bias"],
         "outputs": ["fc1"], "attrs": {"num_hidden": 16}},
        {"name": "relu1", "op": "Activation", "inputs": ["fc1"], "outputs": ["relu1"],
         "attrs": {"act_type": "relu"}},
        {"name": "fc2", "op": "FullyConnected", "inputs": ["relu1", "fc2_weight", "fc2_bias"],
         "outputs": ["fc2"], "attrs": {"num_hidden": 3}},
        {"name": "prob", "op": "softmax", "inputs": ["fc2"], "outputs": ["prob"], "attrs": {"axis": -1}},
    ],
}
with open(os.path.join(HERE, "tiny_mlp.json"), "w") as f:
    json.dump(graph, f, indent=2)
    f.write("\n")

header, data = {}, b""
for k in sorted(weights):
    values = flat(weights[k])
    header[k] = {"dtype": "F32", "shape": shape(weights[k]), "data_offsets": [len(data), len(data) + 4 * len(values)]}
    data += struct.pack("<%df" % len(values), *values)
header_bytes = json.dumps(header, separators=(",", ":")).encode()
header_bytes += b" " * (-len(header_bytes) % 8)
with open(os.path.join(HERE, "tiny_mlp.safetensors"), "wb") as f:
    f.write(struct.pack("<Q", len(header_bytes)) + header_bytes + data)

x = [0.25 * i - 1.0 for i in range(8)]  # the input main.cpp uses
h = [max(0.0, sum(w * v for w, v in zip(row, x)) + b) for row, b in zip(weights["fc1_weight"], weights["fc1_bias"])]
z = [sum(w * v for w, v in zip(row, h)) + b for row, b in zip(weights["fc2_weight"], weights["fc2_bias"])]
m = max(z)
e = [math.exp(v - m) for v in z]
p = [v / sum(e) for v in e]
with open(os.path.join(HERE, "expected_output.h"), "w") as f:
    f.write("// Written by make_tiny_mlp.py: tiny_mlp's output for x[i] = 0.25 * i - 1, in double precision.\n")
    f.write("static const double kExpectedOutput[3] = {%s};\n" % ", ".join("%.12g" % v for v in p))
