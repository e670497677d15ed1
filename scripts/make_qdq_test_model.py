#!/usr/bin/env python3
"""Writes tests/data/onnx/qdq/: a tiny float model (Conv+Relu, Conv, Gemm on a
1x3x8x8 input), quantized by ONNX Runtime's quantize_static (QDQ format,
int8 activations and weights, per-channel weights), with ORT's outputs.

    python3 -m venv /tmp/ortq && /tmp/ortq/bin/pip install onnxruntime onnx numpy
    /tmp/ortq/bin/python scripts/make_qdq_test_model.py tests/data/onnx/qdq
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

out_dir = sys.argv[1] if len(sys.argv) > 1 else "tests/data/onnx/qdq"
os.makedirs(out_dir, exist_ok=True)
rng = np.random.default_rng(20261128)


def init(name, *shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
    helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", strides=[2, 2]),
    helper.make_node("Flatten", ["c2"], ["f"], name="flatten", axis=1),
    helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], name="fc", transB=1),
]
inits = [init("w1", 4, 3, 3, 3), init("b1", 4, scale=0.1), init("w2", 6, 4, 3, 3), init("b2", 6, scale=0.1),
         init("w3", 5, 6 * 3 * 3, scale=0.2), init("b3", 5, scale=0.1)]
graph = helper.make_graph(nodes, "qdq_tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 7
float_path = os.path.join(out_dir, "tiny_float.onnx")
onnx.save(model, float_path)

calibration = [rng.standard_normal((1, 3, 8, 8)).astype(np.float32) for _ in range(16)]


class Reader(CalibrationDataReader):
    def __init__(self):
        self.it = iter(calibration)

    def get_next(self):
        x = next(self.it, None)
        return None if x is None else {"x": x}


q_path = os.path.join(out_dir, "tiny_qdq.onnx")
quantize_static(float_path, q_path, Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QInt8,
                weight_type=QuantType.QInt8, per_channel=True)
os.remove(float_path)
x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
sess = ort.InferenceSession(q_path, providers=["CPUExecutionProvider"])
y = sess.run(None, {"x": x})[0]
np.save(os.path.join(out_dir, "x.npy"), x)
np.save(os.path.join(out_dir, "y.npy"), y)
m = onnx.load(q_path)
print([n.op_type for n in m.graph.node])
print("y", y)

# QLinearConv (the QOperator form) with uint8 data and uint8 weights at zero
# point 128, which hybgen shifts to symmetric int8 at import; x quantized and
# y dequantized around it, so the model takes and gives float32.
w = rng.integers(0, 256, (4, 3, 3, 3)).astype(np.uint8)
b = rng.integers(-300, 300, (4,)).astype(np.int32)
qinits = [numpy_helper.from_array(np.array(0.02, np.float32), "xs"), numpy_helper.from_array(np.array(120, np.uint8), "xz"),
          numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.array(0.004, np.float32), "ws"),
          numpy_helper.from_array(np.array(128, np.uint8), "wz"), numpy_helper.from_array(np.array(0.05, np.float32), "ys"),
          numpy_helper.from_array(np.array(128, np.uint8), "yz"), numpy_helper.from_array(b, "b")]
qnodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="quant"),
          helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["yq"], name="qconv",
                           pads=[1, 1, 1, 1]),
          helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"], name="dequant")]
qgraph = helper.make_graph(qnodes, "qlinear_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], qinits)
qmodel = helper.make_model(qgraph, opset_imports=[helper.make_opsetid("", 13)])
qmodel.ir_version = 7
qpath = os.path.join(out_dir, "qlinear_conv.onnx")
onnx.save(qmodel, qpath)
yq = ort.InferenceSession(qpath, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
np.save(os.path.join(out_dir, "qlinear_conv_y.npy"), yq)

# MatMul + Add on a 3-D input (a transformer's projection), quantize_static
# QDQ again: the weight per output column, the added vector int8.
rng = np.random.default_rng(7)
mm_inits = [numpy_helper.from_array((rng.standard_normal((16, 8)) * 0.3).astype(np.float32), "w"),
            numpy_helper.from_array((rng.standard_normal((8,)) * 0.1).astype(np.float32), "bias")]
mm_nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
            helper.make_node("Add", ["m", "bias"], ["y"], name="add")]
mm_graph = helper.make_graph(mm_nodes, "matmul_add", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 16])],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 8])], mm_inits)
mm_model = helper.make_model(mm_graph, opset_imports=[helper.make_opsetid("", 13)])
mm_model.ir_version = 7
onnx.save(mm_model, float_path)
calibration = [rng.standard_normal((2, 4, 16)).astype(np.float32) for _ in range(8)]
mm_path = os.path.join(out_dir, "matmul_add_qdq.onnx")
quantize_static(float_path, mm_path, Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QInt8,
                weight_type=QuantType.QInt8, per_channel=True)
os.remove(float_path)
xm = rng.standard_normal((2, 4, 16)).astype(np.float32)
ym = ort.InferenceSession(mm_path, providers=["CPUExecutionProvider"]).run(None, {"x": xm})[0]
np.save(os.path.join(out_dir, "matmul_add_x.npy"), xm)
np.save(os.path.join(out_dir, "matmul_add_y.npy"), ym)
print("matmul_add y max", np.abs(ym).max())
