#!/usr/bin/env python3
"""Writes tests/data/onnx/integer/: two models of the pattern ONNX Runtime's
dynamic quantization writes, with the activation's scale and zero point fixed
(QuantizeLinear) where ORT computes them (DynamicQuantizeLinear):
QuantizeLinear -> ConvInteger / MatMulInteger -> Cast(FLOAT) -> Mul(scale),
with ONNX Runtime's outputs on seeded inputs.

    python3 -m venv /tmp/ortq && /tmp/ortq/bin/pip install onnxruntime onnx numpy
    /tmp/ortq/bin/python scripts/make_integer_ops_test_models.py tests/data/onnx/integer
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

out_dir = sys.argv[1] if len(sys.argv) > 1 else "tests/data/onnx/integer"
os.makedirs(out_dir, exist_ok=True)
rng = np.random.default_rng(20261129)


def save(name, nodes, inits, x_shape, y_shape, x):
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    path = os.path.join(out_dir, name + ".onnx")
    onnx.save(model, path)
    y = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.save(os.path.join(out_dir, name + "_x.npy"), x)
    np.save(os.path.join(out_dir, name + "_y.npy"), y)
    print(name, "y", y.shape, "max |y|", float(np.abs(y).max()))


# ConvInteger: uint8 data (zero point 120) and uint8 weights (zero point 131),
# padded, stride 2; the output scaled per channel.
x_scale, x_zp, w_zp = 0.05, 120, 131
w = rng.integers(100, 160, size=(4, 3, 3, 3)).astype(np.uint8)
scale = (x_scale * rng.uniform(0.01, 0.03, size=(1, 4, 1, 1))).astype(np.float32)
nodes = [
    helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"], name="quantize"),
    helper.make_node("ConvInteger", ["xq", "w", "x_zp", "w_zp"], ["acc"], name="conv", pads=[1, 1, 1, 1],
                     strides=[2, 2]),
    helper.make_node("Cast", ["acc"], ["accf"], name="cast", to=TensorProto.FLOAT),
    helper.make_node("Mul", ["accf", "scale"], ["y"], name="scale"),
]
inits = [numpy_helper.from_array(np.array(x_scale, np.float32), "x_scale"),
         numpy_helper.from_array(np.array(x_zp, np.uint8), "x_zp"), numpy_helper.from_array(w, "w"),
         numpy_helper.from_array(np.array(w_zp, np.uint8), "w_zp"), numpy_helper.from_array(scale, "scale")]
save("conv_integer", nodes, inits, [1, 3, 9, 9], [1, 4, 5, 5], rng.uniform(-5, 5, size=(1, 3, 9, 9)).astype(np.float32))

# MatMulInteger: uint8 data (zero point 128) of (2, 5, 16) by an int8 (16, 6)
# weight with a zero point per column.
a_scale, a_zp = 0.04, 128
b = rng.integers(-127, 128, size=(16, 6)).astype(np.int8)
b_zp = rng.integers(-5, 6, size=(6,)).astype(np.int8)
scale = (a_scale * rng.uniform(0.01, 0.03, size=(6,))).astype(np.float32)
nodes = [
    helper.make_node("QuantizeLinear", ["x", "a_scale", "a_zp"], ["xq"], name="quantize"),
    helper.make_node("MatMulInteger", ["xq", "b", "a_zp", "b_zp"], ["acc"], name="matmul"),
    helper.make_node("Cast", ["acc"], ["accf"], name="cast", to=TensorProto.FLOAT),
    helper.make_node("Mul", ["accf", "scale"], ["y"], name="scale"),
]
inits = [numpy_helper.from_array(np.array(a_scale, np.float32), "a_scale"),
         numpy_helper.from_array(np.array(a_zp, np.uint8), "a_zp"), numpy_helper.from_array(b, "b"),
         numpy_helper.from_array(b_zp, "b_zp"), numpy_helper.from_array(scale, "scale")]
save("matmul_integer", nodes, inits, [2, 5, 16], [2, 5, 6], rng.uniform(-5, 5, size=(2, 5, 16)).astype(np.float32))
