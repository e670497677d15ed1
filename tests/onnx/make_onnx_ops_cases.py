#!/usr/bin/env python3
"""Writes tests/onnx/onnx_ops_cases.inc: small ONNX models of the converters in
gen/io/onnx/onnx_ops_*.cpp, built in C++ with OnnxBuilder, each with seeded inputs
and the outputs ONNX Runtime computes for them (ONNX semantics, not MXNet's).

Needs onnx and onnxruntime (not a dependency of the build or the tests):
    python3 tests/onnx/make_onnx_ops_cases.py > tests/onnx/onnx_ops_cases.inc
"""
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, TensorProto

RNG = np.random.default_rng(27)


def data(shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


# name, opset, runtime inputs {name: array}, initializers {name: array (float32 or int64)},
# nodes [(op, inputs, outputs, attrs)], outputs [names]
CASES = []


def case(name, opset, inputs, inits, nodes, outputs):
    CASES.append((name, opset, inputs, inits, nodes, outputs))


x = data((1, 2, 5, 6))
w = data((3, 2, 3, 3))
case("ConvAsymmetricPads", 13, {"x": x}, {"w": w},
     [("Conv", ["x", "w"], ["y"], {"pads": [0, 1, 1, 2], "strides": [2, 1]})], ["y"])
case("ConvSameUpperStride2", 13, {"x": x}, {"w": w, "b": data((3,))},
     [("Conv", ["x", "w", "b"], ["y"], {"auto_pad": "SAME_UPPER", "strides": [2, 2]})], ["y"])
case("ConvSameLowerStrided", 13, {"x": x}, {"w": w},
     [("Conv", ["x", "w"], ["y"], {"auto_pad": "SAME_LOWER", "strides": [1, 2]})], ["y"])
x1 = data((1, 3, 9))
case("Conv1dAsymmetric", 13, {"x": x1}, {"w": data((2, 3, 4))},
     [("Conv", ["x", "w"], ["y"], {"pads": [2, 1], "strides": [2]})], ["y"])
xp = data((1, 2, 5, 7))
case("MaxPoolCeilDropsWindowInPadding", 13, {"x": xp}, {},
     [("MaxPool", ["x"], ["y"], {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1})], ["y"])
case("AveragePoolCeilCountPad", 13, {"x": xp}, {},
     [("AveragePool", ["x"], ["y"], {"kernel_shape": [2, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": 1,
                                      "count_include_pad": 1})], ["y"])
case("AveragePoolAsymmetricCountPad", 13, {"x": xp}, {},
     [("AveragePool", ["x"], ["y"], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [0, 1, 2, 0],
                                      "count_include_pad": 1})], ["y"])
case("AveragePoolSameUpper", 13, {"x": xp}, {},
     [("AveragePool", ["x"], ["y"], {"kernel_shape": [3, 2], "strides": [2, 2], "auto_pad": "SAME_UPPER"})], ["y"])
case("MaxPoolSameLower", 13, {"x": xp}, {},
     [("MaxPool", ["x"], ["y"], {"kernel_shape": [3, 3], "strides": [1, 2], "auto_pad": "SAME_LOWER"})], ["y"])
xt = data((1, 4, 3, 4))
case("ConvTransposeAsymmetricPadsGroups", 13, {"x": xt}, {"w": data((4, 3, 3, 3)), "b": data((6,))},
     [("ConvTranspose", ["x", "w", "b"], ["y"], {"strides": [2, 2], "pads": [1, 0, 0, 2], "group": 2,
                                                  "output_padding": [1, 0]})], ["y"])
case("ConvTransposeOutputShape", 13, {"x": xt}, {"w": data((4, 2, 3, 3))},
     [("ConvTranspose", ["x", "w"], ["y"], {"strides": [2, 3], "output_shape": [6, 11]})], ["y"])
case("ConvTransposeSameUpper", 13, {"x": xt}, {"w": data((4, 2, 4, 3))},
     [("ConvTranspose", ["x", "w"], ["y"], {"strides": [2, 2], "auto_pad": "SAME_UPPER"})], ["y"])
xr = data((1, 2, 3, 5))
case("ResizeNearestTorch", 13, {"x": xr}, {"scales": np.array([1, 1, 2, 2], np.float32)},
     [("Resize", ["x", "", "scales"], ["y"], {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                                              "nearest_mode": "floor"})], ["y"])
case("ResizeLinearPytorchHalfPixelSizes", 13, {"x": xr}, {"sizes": np.array([1, 2, 7, 4], np.int64)},
     [("Resize", ["x", "", "", "sizes"], ["y"], {"mode": "linear",
                                                 "coordinate_transformation_mode": "pytorch_half_pixel"})], ["y"])
# align_corners with sizes: with scales that give no whole size, ONNX's reference
# and ONNX Runtime disagree, and hybgen refuses them.
case("ResizeLinearAlignCorners", 13, {"x": xr}, {"sizes": np.array([1, 2, 7, 7], np.int64)},
     [("Resize", ["x", "", "", "sizes"], ["y"], {"mode": "linear", "coordinate_transformation_mode": "align_corners"})],
     ["y"])
case("ResizeNearestHalfPixelDown", 13, {"x": data((1, 1, 6, 7))}, {"sizes": np.array([1, 1, 4, 3], np.int64)},
     [("Resize", ["x", "", "", "sizes"], ["y"], {"mode": "nearest", "nearest_mode": "round_prefer_ceil"})], ["y"])
case("UpsampleNearestOpset9", 9, {"x": xr}, {"scales": np.array([1, 1, 2, 3], np.float32)},
     [("Upsample", ["x", "scales"], ["y"], {"mode": "nearest"})], ["y"])
case("MatMulBroadcastBatch", 13, {"a": data((2, 1, 3, 4)), "b": data((3, 4, 5))}, {},
     [("MatMul", ["a", "b"], ["y"], {})], ["y"])
case("MatMulMatrixByStack", 13, {"a": data((3, 4)), "b": data((2, 4, 5))}, {},
     [("MatMul", ["a", "b"], ["y"], {})], ["y"])
case("MatMulVectorByStack", 13, {"a": data((4,)), "b": data((2, 4, 3))}, {},
     [("MatMul", ["a", "b"], ["y"], {})], ["y"])
case("MatMulStackByVector", 13, {"a": data((2, 3, 4)), "b": data((4,))}, {},
     [("MatMul", ["a", "b"], ["y"], {})], ["y"])
xg = data((3, 5, 2))
case("GatherNegativeIndices", 13, {"x": xg}, {"i": np.array([[4, -1], [0, 2]], np.int64)},
     [("Gather", ["x", "i"], ["y"], {"axis": 1})], ["y"])
case("GatherScalarIndex", 13, {"x": xg}, {"i": np.array(1, np.int64)},
     [("Gather", ["x", "i"], ["y"], {"axis": 0})], ["y"])
case("SliceNegativeStep", 13, {"x": xg},
     {"s": np.array([-1, 4], np.int64), "e": np.array([-100, 0], np.int64), "a": np.array([1, 0], np.int64),
      "t": np.array([-2, -1], np.int64)},
     [("Slice", ["x", "s", "e", "a", "t"], ["y"], {})], ["y"])
case("SliceOpset9Attributes", 9, {"x": xg}, {},
     [("Slice", ["x"], ["y"], {"starts": [1, -3], "ends": [1000, -1], "axes": [0, 1]})], ["y"])
case("SplitUnequal", 13, {"x": data((2, 7))}, {"s": np.array([2, 4, 1], np.int64)},
     [("Split", ["x", "s"], ["y0", "y1", "y2"], {"axis": 1})], ["y0", "y1", "y2"])
case("SplitEqualOpset11", 11, {"x": data((6, 2))}, {},
     [("Split", ["x"], ["y0", "y1", "y2"], {})], ["y0", "y1", "y2"])
case("PadReflect", 13, {"x": data((1, 2, 3, 4))}, {"p": np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64)},
     [("Pad", ["x", "p"], ["y"], {"mode": "reflect"})], ["y"])
case("PadConstantValue", 13, {"x": data((2, 3))},
     {"p": np.array([1, 0, 0, 2], np.int64), "v": np.array(1.5, np.float32)},
     [("Pad", ["x", "p", "v"], ["y"], {})], ["y"])
case("PadEdgeOpset9", 9, {"x": data((2, 3))}, {},
     [("Pad", ["x"], ["y"], {"mode": "edge", "pads": [2, 1, 0, 1]})], ["y"])
case("ExpandBidirectional", 13, {"x": data((3, 1))}, {"s": np.array([2, 1, 4], np.int64)},
     [("Expand", ["x", "s"], ["y"], {})], ["y"])
case("Tile", 13, {"x": data((2, 3))}, {"r": np.array([2, 3], np.int64)},
     [("Tile", ["x", "r"], ["y"], {})], ["y"])
case("DepthToSpaceCRD", 13, {"x": data((1, 8, 2, 3))}, {},
     [("DepthToSpace", ["x"], ["y"], {"blocksize": 2, "mode": "CRD"})], ["y"])
case("DepthToSpaceDCR", 13, {"x": data((1, 8, 2, 3))}, {},
     [("DepthToSpace", ["x"], ["y"], {"blocksize": 2})], ["y"])
case("SpaceToDepth", 13, {"x": data((1, 2, 4, 6))}, {},
     [("SpaceToDepth", ["x"], ["y"], {"blocksize": 2})], ["y"])
xd = data((2, 3, 4))
case("ReduceMeanAxesAttribute", 13, {"x": xd}, {},
     [("ReduceMean", ["x"], ["y"], {"axes": [1], "keepdims": 0})], ["y"])
case("ReduceSumAxesInput", 13, {"x": xd}, {"a": np.array([0, -1], np.int64)},
     [("ReduceSum", ["x", "a"], ["y"], {})], ["y"])
case("ReduceMaxAllKeepdims", 13, {"x": xd}, {}, [("ReduceMax", ["x"], ["y"], {})], ["y"])
case("ReduceL2", 13, {"x": xd}, {}, [("ReduceL2", ["x"], ["y"], {"axes": [2]})], ["y"])
case("ReduceProdOpset18", 18, {"x": xd}, {"a": np.array([1], np.int64)},
     [("ReduceProd", ["x", "a"], ["y"], {"keepdims": 0})], ["y"])
case("ArgMaxFeedsFloat", 13, {"x": xd}, {},
     [("ArgMax", ["x"], ["i"], {"axis": 1}), ("Cast", ["i"], ["y"], {"to": 1})], ["y"])
case("WhereOfGreater", 13, {"a": data((2, 3)), "b": data((3,))}, {},
     [("Greater", ["a", "b"], ["c"], {}), ("Where", ["c", "a", "b"], ["y"], {})], ["y"])
case("LogicAndNotEqual", 13, {"a": data((2, 3)), "b": data((2, 3))}, {},
     [("Less", ["a", "b"], ["l"], {}), ("GreaterOrEqual", ["a", "b"], ["g"], {}), ("Not", ["g"], ["n"], {}),
      ("And", ["l", "n"], ["o"], {}), ("Cast", ["o"], ["y"], {"to": 1})], ["y"])
case("CastFloat16", 13, {"x": data((2, 5), -100, 100)}, {},
     [("Cast", ["x"], ["h"], {"to": 10}), ("Cast", ["h"], ["y"], {"to": 1})], ["y"])
case("PowScalarAndTensor", 13, {"x": data((2, 3), 0.1, 2)}, {"e": np.array(3.0, np.float32),
                                                             "f": np.array([0.5, 2, -1], np.float32)},
     [("Pow", ["x", "e"], ["p"], {}), ("Pow", ["p", "f"], ["y"], {})], ["y"])
case("GeluByParts", 13, {"x": data((2, 4), -3, 3)},
     {"s": np.array(1.4142135, np.float32), "one": np.array(1.0, np.float32), "half": np.array(0.5, np.float32)},
     [("Div", ["x", "s"], ["d"], {}), ("Erf", ["d"], ["e"], {}), ("Add", ["e", "one"], ["a"], {}),
      ("Mul", ["x", "a"], ["m"], {}), ("Mul", ["m", "half"], ["y"], {})], ["y"])
case("HardSigmoidHardSwishMish", 18, {"x": data((2, 5), -4, 4)}, {},
     [("HardSigmoid", ["x"], ["a"], {"alpha": 0.3, "beta": 0.4}), ("HardSwish", ["a"], ["b"], {}),
      ("Mish", ["x"], ["m"], {}), ("Add", ["b", "m"], ["y"], {})], ["y"])
case("PReluPerChannel", 13, {"x": data((1, 3, 2, 2))}, {"s": data((3, 1, 1))},
     [("PRelu", ["x", "s"], ["y"], {})], ["y"])
case("MeanOfThree", 13, {"a": data((2, 3)), "b": data((3,)), "c": data((2, 1))}, {},
     [("Mean", ["a", "b", "c"], ["y"], {})], ["y"])
case("LayerNormalizationTrailingAxes", 17, {"x": data((2, 3, 4))}, {"g": data((3, 4)), "b": data((4,))},
     [("LayerNormalization", ["x", "g", "b"], ["y", "m", "r"], {"axis": -2, "epsilon": 1e-3})], ["y", "m", "r"])
case("InstanceNormalization", 13, {"x": data((2, 3, 4, 5))}, {"g": data((3,)), "b": data((3,))},
     [("InstanceNormalization", ["x", "g", "b"], ["y"], {"epsilon": 1e-4})], ["y"])
case("LRN", 13, {"x": data((1, 5, 2, 3))}, {},
     [("LRN", ["x"], ["y"], {"size": 3, "alpha": 0.01, "beta": 0.6, "bias": 1.5})], ["y"])

case("ReduceLogSumExpLargeValues", 13, {"x": data((2, 3, 4), -80, 80)}, {},
     [("ReduceLogSumExp", ["x"], ["y"], {"axes": [1]})], ["y"])
case("ReduceLogSum", 13, {"x": data((2, 3, 4), 0.1, 3)}, {},
     [("ReduceLogSum", ["x"], ["y"], {"axes": [0, 2], "keepdims": 0})], ["y"])

case("TriluLowerBatched", 14, {"x": data((2, 3, 4))}, {"k": np.array(1, np.int64)},
     [("Trilu", ["x", "k"], ["y"], {"upper": 0})], ["y"])
case("TriluUpper", 14, {"x": data((4, 3))}, {}, [("Trilu", ["x"], ["y"], {})], ["y"])
case("ShrinkCeluThresholdedRelu", 13, {"x": data((2, 6), -3, 3)}, {},
     [("Shrink", ["x"], ["a"], {"lambd": 0.7, "bias": 0.2}), ("Celu", ["x"], ["b"], {"alpha": 1.5}),
      ("ThresholdedRelu", ["x"], ["c"], {"alpha": 0.4}), ("Sum", ["a", "b", "c"], ["y"], {})], ["y"])

case("ResizeAxesOpset18", 18, {"x": data((1, 2, 3, 4))}, {"sizes": np.array([5, 7], np.int64)},
     [("Resize", ["x", "", "", "sizes"], ["y"], {"mode": "linear", "axes": [2, 3]})], ["y"])

case("HardmaxMiddleAxisWithTies", 13, {"x": np.round(data((2, 4, 3)) * 2) / 2}, {},
     [("Hardmax", ["x"], ["y"], {"axis": 1})], ["y"])
case("HardmaxOpset11Flattens", 11, {"x": data((2, 3, 4))}, {}, [("Hardmax", ["x"], ["y"], {"axis": 1})], ["y"])

case("MaxPoolDilatedCeil", 13, {"x": data((1, 2, 9, 10))}, {},
     [("MaxPool", ["x"], ["y"], {"kernel_shape": [3, 2], "strides": [2, 3], "dilations": [2, 3], "pads": [1, 0, 1, 1],
                                  "ceil_mode": 1})], ["y"])
case("MaxPool1dDilatedPadded", 13, {"x": data((1, 3, 11))}, {},
     [("MaxPool", ["x"], ["y"], {"kernel_shape": [3], "dilations": [2], "pads": [2, 1]})], ["y"])


def np_dtype(a):
    return TensorProto.INT64 if a.dtype == np.int64 else TensorProto.FLOAT


def cpp_float(v):
    s = "%.9g" % v
    if "." not in s and "e" not in s:
        s += ".0"
    return s + "f"


def cpp_floats(a):
    return "{" + ", ".join(cpp_float(v) for v in a.reshape(-1)) + "}"


def cpp_ints(a):
    return "{" + ", ".join(str(int(v)) for v in np.asarray(a).reshape(-1)) + "}"


def cpp_shape(s):
    return "{" + ", ".join(str(d) for d in s) + "}"


def attr_cpp(var, name, value):
    if isinstance(value, str):
        return 'OnnxBuilder::attr(%s, "%s", std::string("%s"));' % (var, name, value)
    if isinstance(value, float):
        return 'OnnxBuilder::attr(%s, "%s", %s);' % (var, name, cpp_float(value))
    if isinstance(value, int):
        return 'OnnxBuilder::attr(%s, "%s", int64_t{%d});' % (var, name, value)
    if all(isinstance(v, int) for v in value):
        return 'OnnxBuilder::attr(%s, "%s", std::vector<int64_t>%s);' % (var, name, cpp_ints(np.array(value)))
    return 'OnnxBuilder::attr(%s, "%s", std::vector<float>%s);' % (var, name, cpp_floats(np.array(value)))


def main():
    print("// Generated by tests/onnx/make_onnx_ops_cases.py with onnxruntime %s: do not edit." % ort.__version__)
    for name, opset, inputs, inits, nodes, outputs in CASES:
        graph_nodes = [helper.make_node(op, i, o, **attrs) for op, i, o, attrs in nodes]
        graph = helper.make_graph(
            graph_nodes, name,
            [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in inputs.items()],
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
            [helper.make_tensor(k, np_dtype(v), v.shape, v.reshape(-1).tolist()) for k, v in inits.items()])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        got = sess.run(None, inputs)
        print("TEST(OnnxOps, %s) {" % name)
        print("  OnnxBuilder b(%d);" % opset)
        for k, v in inputs.items():
            print('  b.input("%s", %s);' % (k, cpp_shape(v.shape)))
        for k, v in inits.items():
            if v.dtype == np.int64:
                print('  b.initializer_i64("%s", %s, %s);' % (k, cpp_shape(v.shape), cpp_ints(v)))
            else:
                print('  b.initializer("%s", %s, %s);' % (k, cpp_shape(v.shape), cpp_floats(v)))
        for n, (op, i, o, attrs) in enumerate(nodes):
            print('  auto& n%d = b.node("%s", {%s}, {%s});' % (n, op, ", ".join('"%s"' % s for s in i),
                                                            ", ".join('"%s"' % s for s in o)))
            for k, v in attrs.items():
                print("  " + attr_cpp("n%d" % n, k, v))
            print("  (void)n%d;" % n)
        for o in outputs:
            print('  b.output("%s");' % o)
        print("  expect_outputs(b, {")
        for k, v in inputs.items():
            print('      {"%s", Tensor::from_vector(%s, %s)},' % (k, cpp_shape(v.shape), cpp_floats(v)))
        print("  }, {")
        for g in got:
            print("      Expected{%s, %s}," % (cpp_shape(g.shape), cpp_floats(np.asarray(g, np.float32))))
        print("  });")
        print("}")
        print()


main()
